//! Criterion benchmark of the scan engine on synthetic unit vectors held in memory.
//!
//! `cargo bench --bench scan` (criterion; small sizes so that it runs in about a minute on two
//! cores). Throughput is reported in pool rows per second; the effective GEMM rate is
//! `2 · Q · rows · D` FLOP per second. The head-to-head with faiss and numpy at ILIAS-like sizes is
//! `scripts/bench_vs_faiss.sh` (see `docs/reference/performance.md`).

#[path = "../examples/support/paired.rs"]
mod paired;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use tailrank::formats::descriptors::InMemoryDescriptors;
use tailrank::scan::engine::{scan, NoProgress, ScanConfig, ScanInputs};

/// `rows × dim` pseudo-random unit vectors (xorshift, seeded), ids `prefix{i}`.
fn unit_rows(prefix: &str, rows: usize, dim: usize, seed: u64) -> InMemoryDescriptors {
    let mut s = seed | 1;
    let mut data = Vec::with_capacity(rows * dim);
    for _ in 0..rows {
        let row: Vec<f32> = (0..dim)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect();
        let n = row.iter().map(|v| v * v).sum::<f32>().sqrt();
        data.extend(row.iter().map(|v| v / n));
    }
    let ids = (0..rows).map(|i| format!("{prefix}{i:08}")).collect();
    InMemoryDescriptors::new(prefix, ids, dim, data).unwrap()
}

fn bench_scan(c: &mut Criterion) {
    let (nq, d, n) = (200, 768, 20_000);
    let queries = unit_rows("q/", nq, d, 1);
    // Positives: two core rows per query, made close to the query.
    let mut core = unit_rows("core/", 2 * nq, d, 2);
    for q in 0..nq {
        for j in 0..2 {
            let r = 2 * q + j;
            let row: Vec<f32> = (0..d)
                .map(|k| 2.0 * queries.data[q * d + k] + core.data[r * d + k])
                .collect();
            let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
            for (x, v) in core.data[r * d..(r + 1) * d].iter_mut().zip(&row) {
                *x = v / norm;
            }
        }
    }
    let qs = paired::paired_query_set("bench", &queries.ids, &core.ids);
    let pool = unit_rows("pool/", n, d, 3);
    let inputs = ScanInputs {
        query_set: &qs,
        queries: &queries,
        core: &core,
        pool: vec![&pool],
    };

    let mut g = c.benchmark_group("scan");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    for (name, f, m, levels) in [
        ("exact_m100_1level", 1.0, 100, 1),
        ("exact_m1000_5levels_4shards", 1.0, 1000, 5),
        ("sample0.25_m1000_5levels_4shards", 0.25, 1000, 5),
    ] {
        let mut cfg = ScanConfig::new(f, 7);
        cfg.top_m = m;
        cfg.min_fraction = f / (1u64 << (levels - 1)) as f64;
        cfg.drift_shards = if levels == 1 { 0 } else { 4 };
        g.bench_function(name, |b| {
            b.iter(|| black_box(scan(&inputs, &cfg, &NoProgress).unwrap()))
        });
    }
    g.finish();
}

// No plots: criterion's plotters backend needs system fonts, which a fresh machine may lack
// (it panicked with `FontUnavailable` after the first benchmark here).
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = bench_scan
}
criterion_main!(benches);
