//! Criterion benchmark of the GPD fit, the inner loop of `predict` (docs/reference/performance.md,
//! "predict on an ILIAS-sized summary"): one query's fit on 200 and on 800 excesses, the
//! paper's fit and the level-selected one at quantile 0.8 of the top 4000.
//!
//! `cargo bench --bench fit`. The whole process, the user's view, is timed by
//! `scripts/bench_predict_pair.py`; this isolates the fit that dominates it.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use tailrank::evt::{fit_gpd_bounded, Gpd};

/// `n` excesses from a GPD with ξ = −0.25, σ = 0.02: inverse survival of a xorshift stream.
fn excesses(n: usize) -> Vec<f64> {
    let gpd = Gpd {
        sigma: 0.02,
        xi: -0.25,
    };
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut y: Vec<f64> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            gpd.quantile((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect();
    y.sort_by(|a, b| b.total_cmp(a));
    y
}

fn bench_fit(c: &mut Criterion) {
    let mut g = c.benchmark_group("fit_gpd_bounded");
    for n in [200usize, 800] {
        let y = excesses(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("{n} excesses"), |b| {
            b.iter(|| fit_gpd_bounded(black_box(&y)))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    // No plots: criterion's plotters backend needs system fonts a fresh machine may lack.
    config = Criterion::default().without_plots();
    targets = bench_fit
}
criterion_main!(benches);
