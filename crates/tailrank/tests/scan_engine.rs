//! Scan engine vs a numpy brute-force reference (`scan_reference.py`): positive scores, C_j,
//! K_{j,ℓ}, S_ℓ, top-M lists, exact mAP@1k and the top-k results, in exact mode and with hash
//! sampling, f32 and f16; plus determinism (threads, pool split) and input errors.

use tailrank_test_support::python as common;

use serde_json::Value;
use std::path::Path;
use tailrank::formats::descriptors::{DescriptorSource, InMemoryDescriptors};
use tailrank::formats::gt::QuerySet;
use tailrank::metric::{ap_at_k_from_ranks, rank_from_counts};
use tailrank::scan::engine::{scan, subsets, NoProgress, Progress, ScanConfig, ScanInputs};
use tailrank::scan::kernel::Backend;
use tailrank::summary::SubsetKind;

const REFERENCE: &str = include_str!("scan_reference.py");

struct Data {
    queries: InMemoryDescriptors,
    core: InMemoryDescriptors,
    pool: InMemoryDescriptors,
    qs: QuerySet,
    reference: Value,
}

fn load(dir: &Path, name: &str, f16: bool) -> InMemoryDescriptors {
    let bytes = std::fs::read(dir.join(format!("{name}.f32"))).unwrap();
    let mut data: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    if f16 {
        // Quantise through `half` (as an f16 file would be read); the reference already
        // rounded through numpy's float16, so this must be the identity.
        let q: Vec<f32> = data
            .iter()
            .map(|&v| half::f16::from_f32(v).to_f32())
            .collect();
        assert_eq!(q, data, "numpy and half round to f16 alike");
        data = q;
    }
    let ids: Vec<String> = std::fs::read_to_string(dir.join(format!("{name}.ids")))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let dim = data.len() / ids.len();
    InMemoryDescriptors::new(name, ids, dim, data).unwrap()
}

/// Generate data and the reference: (seed, nq, core extras, pool rows, dim, mode, f, hash seed,
/// levels, shards, M, results k).
#[allow(clippy::too_many_arguments)]
fn make(
    dir: &Path,
    seed: u64,
    nq: usize,
    ncore_extra: usize,
    npool: usize,
    d: usize,
    mode: &str,
    f: f64,
    hseed: u64,
    nlev: usize,
    nshard: usize,
    m: usize,
    k: usize,
) -> Data {
    let args: Vec<String> = vec![
        dir.display().to_string(),
        seed.to_string(),
        nq.to_string(),
        ncore_extra.to_string(),
        npool.to_string(),
        d.to_string(),
        mode.into(),
        format!("{f:?}"),
        hseed.to_string(),
        nlev.to_string(),
        nshard.to_string(),
        m.to_string(),
        k.to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(common::run_python(REFERENCE, &args).trim(), "ok");
    let f16 = mode == "f16";
    let gt: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("gt.json")).unwrap()).unwrap();
    let qs = QuerySet {
        name: "queries".into(),
        query_ids: gt.keys().cloned().collect(),
        positives: gt
            .values()
            .map(|v| {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect()
            })
            .collect(),
    };
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reference.json")).unwrap())
            .unwrap();
    Data {
        queries: load(dir, "queries", f16),
        core: load(dir, "core", f16),
        pool: load(dir, "pool", f16),
        qs,
        reference,
    }
}

fn config(f: f64, hseed: u64, nlev: usize, nshard: usize, m: usize, k: usize) -> ScanConfig {
    let mut c = ScanConfig::new(f, hseed);
    c.min_fraction = f / (1u64 << (nlev - 1)) as f64;
    c.drift_shards = nshard;
    c.top_m = m;
    c.results_k = Some(k);
    c.model = "test-model".into();
    c
}

fn run(
    data: &Data,
    cfg: &ScanConfig,
    pool: Vec<&dyn DescriptorSource>,
) -> tailrank::scan::engine::ScanOutput {
    let inputs = ScanInputs {
        query_set: &data.qs,
        queries: &data.queries,
        core: &data.core,
        pool,
    };
    scan(&inputs, cfg, &NoProgress).unwrap()
}

fn f32s(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Compare a scan against the reference. `exact`: bitwise scores and counts; else scores
/// within 1e-5 and counts within the reference's [lo, hi] bounds.
fn check(data: &Data, out: &tailrank::scan::engine::ScanOutput, exact: bool) {
    let r = &data.reference;
    let s = &out.summary;
    assert_eq!(s.subset_sizes, u64s(&r["S"]), "S_ℓ");
    assert_eq!(s.queries.len(), data.qs.query_ids.len());
    let close = |a: &[f32], b: &[f32], what: &str| {
        assert_eq!(a.len(), b.len(), "{what}: length");
        for (x, y) in a.iter().zip(b) {
            if exact {
                assert_eq!(x.to_bits(), y.to_bits(), "{what}: {x} vs {y}");
            } else {
                assert!((x - y).abs() <= 1e-5, "{what}: {x} vs {y}");
            }
        }
    };
    let mut ap_sum = 0.0;
    let mut n_pool_above = 0u64;
    for (qsum, rq) in s.queries.iter().zip(r["queries"].as_array().unwrap()) {
        assert_eq!(qsum.id, rq["id"].as_str().unwrap());
        let ids: Vec<&str> = qsum.positives.iter().map(|p| p.id.as_str()).collect();
        let rids: Vec<&str> = rq["pos_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(ids, rids, "positive order of {}", qsum.id);
        let scores: Vec<f32> = qsum.positives.iter().map(|p| p.score).collect();
        close(&scores, &f32s(&rq["pos_scores"]), "positive scores");
        let c: Vec<u64> = qsum.positives.iter().map(|p| p.core_above).collect();
        assert_eq!(c, u64s(&rq["C"]), "C_j of {}", qsum.id);
        for (l, (lo, hi)) in rq["K_lo"]
            .as_array()
            .unwrap()
            .iter()
            .zip(rq["K_hi"].as_array().unwrap())
            .enumerate()
        {
            let (lo, hi) = (u64s(lo), u64s(hi));
            for (j, p) in qsum.positives.iter().enumerate() {
                let k = p.pool_above[l];
                assert!(
                    lo[j] <= k && k <= hi[j],
                    "K of {} positive {j} subset {l}: {k} not in [{}, {}]",
                    qsum.id,
                    lo[j],
                    hi[j]
                );
                n_pool_above += k;
            }
        }
        for (l, top) in rq["top"].as_array().unwrap().iter().enumerate() {
            close(&qsum.top_scores[l], &f32s(top), "top-M");
        }
        let ranks: Vec<f64> = qsum
            .positives
            .iter()
            .enumerate()
            .map(|(j, p)| rank_from_counts(j + 1, p.core_above, p.pool_above[0] as f64))
            .collect();
        ap_sum += ap_at_k_from_ranks(&ranks, qsum.positives.len(), 1000);
    }
    assert!(n_pool_above > 0, "data must make some positives hard");
    let map = ap_sum / s.queries.len() as f64;
    let rmap = r["map1k"].as_f64().unwrap();
    let tol = if exact { 1e-12 } else { 1e-3 };
    assert!((map - rmap).abs() <= tol, "mAP@1k {map} vs {rmap}");
    if exact {
        let res = out.results.as_ref().expect("results requested");
        for (rq, got) in r["queries"].as_array().unwrap().iter().zip(res) {
            let ids: Vec<&str> = got.iter().map(|x| x.0.as_str()).collect();
            let rids: Vec<&str> = rq["res_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
                .collect();
            assert_eq!(ids, rids, "results ids");
            let sc: Vec<f32> = got.iter().map(|x| x.1).collect();
            close(&sc, &f32s(&rq["res_scores"]), "results scores");
        }
    }
}

#[test]
fn exact_mode_f32_matches_numpy() {
    let dir = tempfile::tempdir().unwrap();
    let data = make(
        dir.path(),
        1,
        24,
        300,
        9000,
        48,
        "grid",
        1.0,
        5,
        3,
        2,
        60,
        25,
    );
    let mut cfg = config(1.0, 5, 3, 2, 60, 25);
    cfg.threads = Some(2);
    let out = run(&data, &cfg, vec![&data.pool]);
    assert_eq!(out.renormalized_rows, 0);
    let s = &out.summary;
    assert_eq!(s.subsets.len(), 5);
    assert_eq!(
        s.subset_sizes[0],
        data.pool.ids.len() as u64,
        "f = 1 keeps all"
    );
    assert_eq!(s.core_size, data.core.ids.len() as u64);
    assert_eq!(
        (s.model.as_str(), s.top_m, s.fraction),
        ("test-model", 60, 1.0)
    );
    assert!(s.is_exact());
    check(&data, &out, true);
}

#[test]
fn hash_sampled_f32_matches_numpy_over_sampled_ids() {
    let dir = tempfile::tempdir().unwrap();
    let data = make(
        dir.path(),
        2,
        30,
        200,
        12000,
        40,
        "grid",
        0.3,
        11,
        4,
        3,
        40,
        30,
    );
    let cfg = config(0.3, 11, 4, 3, 40, 30);
    let out = run(&data, &cfg, vec![&data.pool]);
    let s = &out.summary;
    assert_eq!(s.level_indices(), vec![0, 1, 2, 3]);
    assert_eq!(s.shard_indices(), vec![4, 5, 6]);
    let shard_total: u64 = s.shard_indices().iter().map(|&i| s.subset_sizes[i]).sum();
    assert_eq!(shard_total, s.subset_sizes[0], "shards partition level 0");
    check(&data, &out, true);
}

#[test]
fn f16_sampled_matches_numpy() {
    let dir = tempfile::tempdir().unwrap();
    let data = make(
        dir.path(),
        3,
        20,
        150,
        8000,
        64,
        "f16",
        0.5,
        3,
        3,
        2,
        500,
        10,
    );
    let cfg = config(0.5, 3, 3, 2, 500, 10);
    let out = run(&data, &cfg, vec![&data.pool]);
    check(&data, &out, false);
}

/// Same rows in a different layout: a pool split into two sources.
fn split(pool: &InMemoryDescriptors, at: usize) -> (InMemoryDescriptors, InMemoryDescriptors) {
    let d = pool.dim();
    let a = InMemoryDescriptors::new(
        "pool-a",
        pool.ids[..at].to_vec(),
        d,
        pool.data[..at * d].to_vec(),
    )
    .unwrap();
    let b = InMemoryDescriptors::new(
        "pool-b",
        pool.ids[at..].to_vec(),
        d,
        pool.data[at * d..].to_vec(),
    )
    .unwrap();
    (a, b)
}

#[test]
fn deterministic_across_threads_and_pool_splits() {
    let dir = tempfile::tempdir().unwrap();
    let data = make(
        dir.path(),
        4,
        16,
        100,
        10000,
        32,
        "f16",
        0.6,
        9,
        3,
        4,
        30,
        20,
    );
    let mut cfg = config(0.6, 9, 3, 4, 30, 20);
    cfg.threads = Some(1);
    let one = run(&data, &cfg, vec![&data.pool]);
    cfg.threads = Some(2);
    let two = run(&data, &cfg, vec![&data.pool]);
    assert_eq!(one.summary, two.summary);
    assert_eq!(one.results, two.results);
    let (a, b) = split(&data.pool, 3777);
    let parts = run(&data, &cfg, vec![&a, &b]);
    assert_eq!(parts.summary.queries, one.summary.queries);
    assert_eq!(parts.summary.subset_sizes, one.summary.subset_sizes);
    assert_eq!(parts.results, one.results);
    assert_eq!(
        parts.summary.inputs.len(),
        4,
        "queries, core, two pool records"
    );

    // Scanning each source alone gives summaries whose counts and sizes add up and whose
    // top-M lists merge to the whole (what `Summary::merge` relies on).
    let sa = run(&data, &cfg, vec![&a]).summary;
    let sb = run(&data, &cfg, vec![&b]).summary;
    for i in 0..sa.subsets.len() {
        assert_eq!(
            sa.subset_sizes[i] + sb.subset_sizes[i],
            one.summary.subset_sizes[i]
        );
    }
    for ((qa, qb), qw) in sa.queries.iter().zip(&sb.queries).zip(&one.summary.queries) {
        for ((pa, pb), pw) in qa.positives.iter().zip(&qb.positives).zip(&qw.positives) {
            assert_eq!((pa.score, pa.core_above), (pw.score, pw.core_above));
            let sum: Vec<u64> = pa
                .pool_above
                .iter()
                .zip(&pb.pool_above)
                .map(|(x, y)| x + y)
                .collect();
            assert_eq!(sum, pw.pool_above);
        }
        for l in 0..qa.top_scores.len() {
            let mut all = [qa.top_scores[l].clone(), qb.top_scores[l].clone()].concat();
            all.sort_by(|x, y| y.total_cmp(x));
            all.truncate(one.summary.subsets[l].kept(cfg.top_m));
            assert_eq!(all, qw.top_scores[l]);
        }
    }
}

#[test]
fn progress_adds_up_to_pool_rows() {
    use std::sync::atomic::{AtomicU64, Ordering};
    struct Count(AtomicU64);
    impl Progress for Count {
        fn rows_done(&self, rows: u64) {
            self.0.fetch_add(rows, Ordering::Relaxed);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let data = make(dir.path(), 5, 6, 20, 3000, 16, "grid", 0.2, 1, 2, 0, 10, 5);
    let cfg = config(0.2, 1, 2, 0, 10, 5);
    let (a, b) = split(&data.pool, 1000);
    let empty = InMemoryDescriptors::new("empty", vec![], 16, vec![]).unwrap();
    let count = Count(AtomicU64::new(0));
    let inputs = ScanInputs {
        query_set: &data.qs,
        queries: &data.queries,
        core: &data.core,
        pool: vec![&a, &empty, &b],
    };
    let out = scan(&inputs, &cfg, &count).unwrap();
    assert_eq!(count.0.load(Ordering::Relaxed), data.pool.ids.len() as u64);
    assert!(out.summary.shard_indices().is_empty());
    check(&data, &out, true);
}

/// A progress that asks to stop ends the scan before its first block, with the error that
/// names the cancellation (Python's Ctrl-C).
#[test]
fn a_cancelled_progress_stops_the_scan() {
    use std::sync::atomic::{AtomicU64, Ordering};
    struct Stop(AtomicU64);
    impl Progress for Stop {
        fn rows_done(&self, rows: u64) {
            self.0.fetch_add(rows, Ordering::Relaxed);
        }
        fn cancelled(&self) -> bool {
            true
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let data = make(dir.path(), 5, 6, 20, 3000, 16, "grid", 0.2, 1, 2, 0, 10, 5);
    let stop = Stop(AtomicU64::new(0));
    let inputs = ScanInputs {
        query_set: &data.qs,
        queries: &data.queries,
        core: &data.core,
        pool: vec![&data.pool],
    };
    let e = scan(&inputs, &config(0.2, 1, 2, 0, 10, 5), &stop).unwrap_err();
    assert!(e.to_string().contains("the scan was cancelled"), "{e}");
    assert_eq!(stop.0.load(Ordering::Relaxed), 0);
}

#[test]
fn subsets_levels_and_shards() {
    let s = subsets(0.05, 0.05 / 16.0, 4, 4001).unwrap();
    assert_eq!(s.len(), 9);
    for (l, sub) in s[..5].iter().enumerate() {
        assert_eq!(sub.kind, SubsetKind::Level);
        assert_eq!(sub.kept(4001), 4001, "levels keep M");
        assert_eq!(sub.fraction, 0.05 / (1 << l) as f64);
        assert_eq!(sub.range.lo, 0);
        assert_eq!(
            sub.range.hi,
            (0.05 / (1 << l) as f64 * 2f64.powi(64)) as u64
        );
    }
    assert_eq!(s[5].range.lo, 0);
    assert_eq!(s[8].range.hi, s[0].range.hi);
    for w in s[5..].windows(2) {
        assert_eq!(w[0].range.hi, w[1].range.lo);
    }
    // Shards keep ⌈M/H⌉: 4001 / 4 rounds up to 1001.
    assert!(s[5..].iter().all(|sub| sub.top_m == Some(1001)));
    assert_eq!(subsets(1.0, 1.0, 0, 10).unwrap().len(), 1);
    assert!(subsets(0.1, 0.2, 0, 10).is_err());
    assert!(subsets(0.0, 0.0, 0, 10).is_err());
    assert!(subsets(0.1, 0.0, 0, 10).is_err());
}

// ---- M above the pool: clamped, never allocated or padded out.

#[test]
fn top_m_above_the_pool_is_clamped_and_absurd_m_refused() {
    // Regression: M = 2^31 reserved 2M values per reservoir up front (an abort) and padded
    // top_scores.npy to Q × L × M floats. About 600 pool rows, 2 drift shards.
    let (_dir, data) = small();
    let rows = data.pool.rows();
    // M = 2 · rows: the shards' ⌈M/2⌉ = rows keep every row too.
    let mut cfg = config(1.0, 0, 1, 2, 2 * rows, 5);
    let base = run(&data, &cfg, vec![&data.pool]);
    cfg.top_m = 1 << 31;
    let big = run(&data, &cfg, vec![&data.pool]);
    assert_eq!(
        big.summary.top_m,
        1 << 31,
        "the summary records the M asked for"
    );
    assert_eq!(big.summary.subset_sizes, base.summary.subset_sizes);
    for (a, b) in base.summary.queries.iter().zip(&big.summary.queries) {
        assert_eq!(a.positives, b.positives);
        assert_eq!(a.top_scores.len(), b.top_scores.len());
        for (ta, tb) in a.top_scores.iter().zip(&b.top_scores) {
            let bits = |t: &[f32]| t.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(ta), bits(tb));
        }
        assert_eq!(a.top_scores[0].len(), rows, "every pool row kept");
    }
    assert_eq!(base.results, big.results);
    // On disk: the kept scores end to end, nothing padded out, and read back unchanged.
    let out = tempfile::tempdir().unwrap();
    for (name, s) in [("base", &base.summary), ("big", &big.summary)] {
        s.write(&out.path().join(name)).unwrap();
        let back = tailrank::summary::Summary::read(&out.path().join(name)).unwrap();
        assert_eq!(&back, s);
    }
    let size = |n: &str| {
        std::fs::metadata(out.path().join(n).join("top_scores.npy"))
            .unwrap()
            .len()
    };
    let kept: u64 = (base.summary.queries.iter())
        .flat_map(|q| &q.top_scores)
        .map(|t| t.len() as u64)
        .sum();
    assert_eq!(size("big"), size("base"));
    assert!(
        4 * kept < size("big") && size("big") <= 128 + 4 * kept,
        "{} bytes for {kept} scores",
        size("big")
    );
    // Beyond what a summary can store: refused before anything is allocated.
    cfg.top_m = tailrank::scan::engine::MAX_TOP_M + 1;
    let inputs = ScanInputs {
        query_set: &data.qs,
        queries: &data.queries,
        core: &data.core,
        pool: vec![&data.pool],
    };
    let e = scan(&inputs, &cfg, &NoProgress).unwrap_err().to_string();
    assert!(e.contains("top-M = 4294967296 is beyond"), "{e}");
}

// ---- Input errors: each names the file and the problem.

fn small() -> (tempfile::TempDir, Data) {
    let dir = tempfile::tempdir().unwrap();
    let data = make(dir.path(), 6, 4, 10, 600, 16, "grid", 1.0, 0, 1, 0, 5, 5);
    (dir, data)
}

fn err(
    data: &Data,
    queries: &dyn DescriptorSource,
    core: &dyn DescriptorSource,
    pool: &dyn DescriptorSource,
    normalize: bool,
) -> String {
    let inputs = ScanInputs {
        query_set: &data.qs,
        queries,
        core,
        pool: vec![pool],
    };
    let mut cfg = ScanConfig::new(1.0, 0);
    cfg.normalize = normalize;
    scan(&inputs, &cfg, &NoProgress).unwrap_err().to_string()
}

#[test]
fn errors_name_file_and_problem() {
    let (_dir, data) = small();
    let d = data.pool.dim();

    let mut qs = data.qs.clone();
    qs.query_ids[1] = "q/missing".into();
    let inputs = ScanInputs {
        query_set: &qs,
        queries: &data.queries,
        core: &data.core,
        pool: vec![&data.pool],
    };
    let e = scan(&inputs, &ScanConfig::default(), &NoProgress)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("queries:") && e.contains("q/missing"), "{e}");

    let mut qs = data.qs.clone();
    qs.positives[0].push("nowhere/pos".into());
    let inputs = ScanInputs {
        query_set: &qs,
        queries: &data.queries,
        core: &data.core,
        pool: vec![&data.pool],
    };
    let e = scan(&inputs, &ScanConfig::default(), &NoProgress)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("core:") && e.contains("nowhere/pos"), "{e}");

    // Pool id colliding with a core id.
    let mut ids = data.pool.ids.clone();
    ids[7] = data.core.ids[3].clone();
    let pool = InMemoryDescriptors::new(data.pool.path(), ids, d, data.pool.data.clone()).unwrap();
    let e = err(&data, &data.queries, &data.core, &pool, false);
    assert!(
        e.starts_with("pool:") && e.contains("row 7") && e.contains(&data.core.ids[3]),
        "{e}"
    );

    // Dimension mismatch names both files.
    let narrow = InMemoryDescriptors::new(
        "narrow",
        data.pool.ids[..2].to_vec(),
        d / 2,
        data.pool.data[..d].to_vec(),
    )
    .unwrap();
    let e = err(&data, &data.queries, &data.core, &narrow, false);
    assert!(
        e.contains("narrow") && e.contains("queries") && e.contains("dimension"),
        "{e}"
    );

    // NaN, zero, not unit norm.
    let mut pool = data.pool.clone();
    pool.data[11 * d + 3] = f32::NAN;
    let e = err(&data, &data.queries, &data.core, &pool, true);
    assert!(
        e.starts_with("pool:") && e.contains("row 11") && e.contains("non-finite"),
        "{e}"
    );
    let mut pool = data.pool.clone();
    pool.data[12 * d..13 * d].fill(0.0);
    let e = err(&data, &data.queries, &data.core, &pool, true);
    assert!(e.contains("row 12") && e.contains("zero vector"), "{e}");
    // Tiny but non-zero values (squares underflow f32): not called a zero vector, with or
    // without normalisation (regression: "zero vector" for a row of 1e-30).
    for (scale, normalize) in [(1e-30f32, true), (1e-30, false), (1e-21, true)] {
        let mut pool = data.pool.clone();
        let row = &mut pool.data[12 * d..13 * d];
        row.iter_mut().for_each(|v| *v *= scale);
        row[1] = 3.0 * scale;
        let e = err(&data, &data.queries, &data.core, &pool, normalize);
        assert!(
            e.contains("row 12")
                && !e.contains("zero vector")
                && e.contains("too small for an f32 norm")
                && e.contains("column 1"),
            "{scale} {normalize}: {e}"
        );
    }
    let mut pool = data.pool.clone();
    pool.data[13 * d..14 * d]
        .iter_mut()
        .for_each(|v| *v *= 1.01);
    let e = err(&data, &data.queries, &data.core, &pool, false);
    assert!(e.contains("row 13") && e.contains("norm"), "{e}");
    let mut core = data.core.clone();
    core.data[2 * d..3 * d].iter_mut().for_each(|v| *v *= 0.5);
    let e = err(&data, &data.queries, &core, &data.pool, false);
    assert!(e.starts_with("core:") && e.contains("row 2"), "{e}");
    let mut queries = data.queries.clone();
    queries.data[..d].iter_mut().for_each(|v| *v *= 2.0);
    let e = err(&data, &queries, &data.core, &data.pool, false);
    assert!(e.starts_with("queries:") && e.contains("row 0"), "{e}");
}

#[test]
fn normalize_fixes_and_counts_off_rows() {
    let (_dir, data) = small();
    let d = data.pool.dim();
    let base = {
        let inputs = ScanInputs {
            query_set: &data.qs,
            queries: &data.queries,
            core: &data.core,
            pool: vec![&data.pool],
        };
        let mut cfg = ScanConfig::new(1.0, 0);
        cfg.normalize = true;
        scan(&inputs, &cfg, &NoProgress).unwrap()
    };
    assert_eq!(base.renormalized_rows, 0);
    // Scale rows by powers of two: normalising restores them bitwise.
    let mut pool = data.pool.clone();
    for r in [3, 50, 400] {
        pool.data[r * d..(r + 1) * d]
            .iter_mut()
            .for_each(|v| *v *= 4.0);
    }
    let mut queries = data.queries.clone();
    queries.data[d..2 * d].iter_mut().for_each(|v| *v *= 0.5);
    let inputs = ScanInputs {
        query_set: &data.qs,
        queries: &queries,
        core: &data.core,
        pool: vec![&pool],
    };
    let mut cfg = ScanConfig::new(1.0, 0);
    cfg.normalize = true;
    let out = scan(&inputs, &cfg, &NoProgress).unwrap();
    assert_eq!(out.renormalized_rows, 4);
    assert_eq!(out.summary.queries, base.summary.queries);
    // A row whose squares overflow f32 (×2^70) is normalised from its f64 norm, not refused
    // (it was "norm overflows f32"); without --normalize its norm is named.
    let mut pool = data.pool.clone();
    let huge = 2f32.powi(70);
    pool.data[5 * d..6 * d].iter_mut().for_each(|v| *v *= huge);
    let inputs = ScanInputs {
        query_set: &data.qs,
        queries: &data.queries,
        core: &data.core,
        pool: vec![&pool],
    };
    let out = scan(&inputs, &cfg, &NoProgress).unwrap();
    assert_eq!(out.renormalized_rows, 1);
    assert_eq!(out.summary.subset_sizes, base.summary.subset_sizes);
    let e = err(&data, &data.queries, &data.core, &pool, false);
    assert!(e.contains("row 5") && e.contains("L2 norm 1.18"), "{e}");
}

#[test]
fn speculative_floors_match_numpy_and_the_plain_scan() {
    // 70k rows (137 blocks: pilots of one block in 64 and one in 16, then the rest), M = 2000:
    // the first pilot already expects 31 of each level's top M and 15.6 of each shard's top
    // ⌈M/2⌉ = 1000 (both ≥ MIN_EXPECTED = 15), so every reservoir
    // starts the later stages from a floor; the floors hold on a random pool.
    let dir = tempfile::tempdir().unwrap();
    let data = make(
        dir.path(),
        6,
        12,
        100,
        70_000,
        24,
        "grid",
        1.0,
        2,
        2,
        2,
        2000,
        20,
    );
    let mut cfg = config(1.0, 2, 2, 2, 2000, 20);
    cfg.threads = Some(2);
    let fast = run(&data, &cfg, vec![&data.pool]);
    assert_eq!(
        fast.speculative_floors,
        12 * 4,
        "a floor per query and subset"
    );
    assert_eq!(fast.rescanned_queries, 0);
    check(&data, &fast, true);
    if screen_available() {
        // On this small pool more than 1 pair in 16 needs its f32 score, so the screen
        // pauses for some blocks: both paths run within the floored stages.
        assert!(
            fast.screened_pairs > 0 && fast.screened_pairs < 12 * 70_000 / 2,
            "some blocks screened, others scored in f32: {}",
            fast.screened_pairs
        );
        // Nearly every screened block here is over that share (26% of its pairs rescored
        // since shards keep ⌈M/H⌉, whose higher cuts pause the screen less often).
        assert!(
            fast.rescored_pairs < fast.screened_pairs / 2,
            "{} of {} screened pairs rescored",
            fast.rescored_pairs,
            fast.screened_pairs
        );
    }
    // Without the screen (every pair in f32) and without speculation: bitwise the same.
    cfg.screen = false;
    let unscreened = run(&data, &cfg, vec![&data.pool]);
    assert_eq!(
        (unscreened.screened_pairs, unscreened.rescored_pairs),
        (0, 0)
    );
    assert_eq!(fast.summary, unscreened.summary);
    assert_eq!(fast.results, unscreened.results);
    cfg.speculate = false;
    let plain = run(&data, &cfg, vec![&data.pool]);
    assert_eq!(plain.speculative_floors, 0);
    assert_eq!(fast.summary, plain.summary);
    assert_eq!(fast.results, plain.results);
}

/// Whether this machine runs the integer screen (it needs the AVX2 + FMA kernel).
fn screen_available() -> bool {
    Backend::detect() == Backend::Avx2Fma
}

#[test]
fn screen_keeps_ties_and_duplicates_exact() {
    // Pool rows in every stage that tie a positive bitwise (copies), copy a query (score 1),
    // or sit a hair away from a positive: the screened scan must count and rank them exactly
    // as the f32 scan does (a copy of a positive ties it and does not outrank it).
    let (d, nq, npool) = (32, 4, 40_000);
    let queries: Vec<Vec<f32>> = (0..nq).map(|q| unit(2000 + q as u64, d)).collect();
    let qdesc = mem("queries", "q", &queries);
    // Positives: the query mixed with noise (scores around 0.7, above most of the pool).
    let positive = |q: usize, j: usize| -> Vec<f32> {
        let noise = unit(3000 + (q * 10 + j) as u64, d);
        let mut v: Vec<f32> = queries[q]
            .iter()
            .zip(&noise)
            .map(|(a, b)| a + 0.9 * b)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    };
    let core_rows: Vec<Vec<f32>> = (0..nq)
        .flat_map(|q| (0..3).map(move |j| (q, j)))
        .map(|(q, j)| positive(q, j))
        .chain((0..40).map(|i| unit(6000 + i, d)))
        .collect();
    let core = mem("core", "c", &core_rows);
    let pool_rows: Vec<Vec<f32>> = (0..npool)
        .map(|r| match r % 997 {
            0 => core_rows[(r / 997) % (3 * nq)].clone(),
            1 => queries[(r / 997) % nq].clone(),
            2 => {
                let mut v = core_rows[(r / 997) % (3 * nq)].clone();
                v[r % d] = f32::from_bits(v[r % d].to_bits() + 1);
                v
            }
            _ => unit(20_000_000 + r as u64, d),
        })
        .collect();
    let pool = mem("pool", "p", &pool_rows);
    let qs = QuerySet {
        name: "ties".into(),
        query_ids: (0..nq).map(|q| format!("q{q}")).collect(),
        positives: (0..nq)
            .map(|q| (0..3).map(|j| format!("c{}", q * 3 + j)).collect())
            .collect(),
    };
    let inputs = ScanInputs {
        query_set: &qs,
        queries: &qdesc,
        core: &core,
        pool: vec![&pool],
    };
    let mut cfg = config(1.0, 3, 2, 2, 500, 50);
    cfg.threads = Some(2);
    let screened = scan(&inputs, &cfg, &NoProgress).unwrap();
    if screen_available() {
        assert!(screened.rescored_pairs > 0);
    }
    cfg.screen = false;
    let f32_scan = scan(&inputs, &cfg, &NoProgress).unwrap();
    assert_eq!(screened.summary, f32_scan.summary);
    assert_eq!(screened.results, f32_scan.results);
}

#[test]
fn tie_counts_match_brute_force_from_all_scores() {
    // Pool copies of positives (ties), copies of other queries' positives in the core (core
    // ties) and a positive copied over another positive of the same query (a positive block):
    // every positive's C_j, T^C_j, K_{j,ℓ} and T^K_{j,ℓ} must equal the counts over the scan's
    // own f32 scores of every item (results list of length core + pool), at every level and
    // shard, screened or not.
    let (d, nq, npool) = (24, 3, 6_000);
    let queries: Vec<Vec<f32>> = (0..nq).map(|q| unit(4000 + q as u64, d)).collect();
    let qdesc = mem("queries", "q", &queries);
    let positive = |q: usize, j: usize| -> Vec<f32> {
        let noise = unit(5000 + (q * 10 + j) as u64, d);
        let mut v: Vec<f32> = queries[q]
            .iter()
            .zip(&noise)
            .map(|(a, b)| a + 1.2 * b)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    };
    let mut core_rows: Vec<Vec<f32>> = (0..nq)
        .flat_map(|q| (0..4).map(move |j| (q, j)))
        .map(|(q, j)| positive(q, j))
        .chain((0..30).map(|i| unit(7000 + i, d)))
        .collect();
    core_rows[1] = core_rows[0].clone(); // positive block of query 0
    core_rows[4] = core_rows[2].clone(); // query 1's positive = query 0's: core ties
    core_rows[12] = core_rows[9].clone(); // a non-relevant core copy of query 2's positive
    let core = mem("core", "c", &core_rows);
    let pool_rows: Vec<Vec<f32>> = (0..npool)
        .map(|r| match r % 101 {
            0..=2 => core_rows[(r / 101 + r % 101) % 12].clone(),
            _ => unit(30_000_000 + r as u64, d),
        })
        .collect();
    let pool = mem("pool", "p", &pool_rows);
    let qs = QuerySet {
        name: "ties".into(),
        query_ids: (0..nq).map(|q| format!("q{q}")).collect(),
        positives: (0..nq)
            .map(|q| (0..4).map(|j| format!("c{}", q * 4 + j)).collect())
            .collect(),
    };
    let inputs = ScanInputs {
        query_set: &qs,
        queries: &qdesc,
        core: &core,
        pool: vec![&pool],
    };
    let everything = core_rows.len() + npool;
    let mut cfg = config(1.0, 5, 3, 2, 200, everything);
    cfg.threads = Some(2);
    let out = scan(&inputs, &cfg, &NoProgress).unwrap();
    let s = &out.summary;
    assert!(s.ties_known);
    let all = out.results.as_ref().unwrap();
    let mut tied = 0u64;
    for (qi, q) in s.queries.iter().enumerate() {
        let scores: std::collections::HashMap<&str, f32> =
            all[qi].iter().map(|(id, x)| (id.as_str(), *x)).collect();
        assert_eq!(scores.len(), everything);
        let own: std::collections::HashSet<&str> =
            qs.positives[qi].iter().map(String::as_str).collect();
        for p in &q.positives {
            assert_eq!(p.score, scores[p.id.as_str()]);
            let core_nonrel = core
                .ids()
                .to_vec()
                .unwrap()
                .into_iter()
                .filter(|id| !own.contains(id.as_str()))
                .map(|id| scores[id.as_str()]);
            let (mut above, mut ties) = (0u64, 0u64);
            for x in core_nonrel {
                above += u64::from(x > p.score);
                ties += u64::from(x == p.score);
            }
            assert_eq!(
                (p.core_above, p.core_ties),
                (above, ties),
                "{} {}",
                q.id,
                p.id
            );
            for (l, sub) in s.subsets.iter().enumerate() {
                let (mut above, mut ties) = (0u64, 0u64);
                for id in pool.ids().to_vec().unwrap() {
                    if sub.range.contains(tailrank::sample::id_hash(&id, s.seed)) {
                        let x = scores[id.as_str()];
                        above += u64::from(x > p.score);
                        ties += u64::from(x == p.score);
                    }
                }
                assert_eq!(p.pool_above[l], above, "{} {} subset {l}", q.id, p.id);
                assert_eq!(p.pool_ties[l], ties, "{} {} subset {l}", q.id, p.id);
            }
            tied += p.core_ties + p.pool_ties[0];
        }
    }
    assert!(tied > 0, "the data must hold ties");
    assert_eq!(s.tied_pairs(0), tied);
    // A positive block (query 0's two equal positives) shares its tie counts.
    let q0 = &s.queries[0].positives;
    let block: Vec<_> = q0.iter().filter(|p| p.score == q0[0].score).collect();
    assert!(q0.iter().filter(|p| p.id == "c0" || p.id == "c1").count() == 2);
    assert!(block.windows(2).all(|w| w[0].pool_ties == w[1].pool_ties));
    // The screened pass (a smaller M, floors from the pilots) ends with the same counts.
    let mut cfg = config(1.0, 5, 3, 2, 50, 10);
    cfg.threads = Some(2);
    let screened = scan(&inputs, &cfg, &NoProgress).unwrap();
    cfg.screen = false;
    cfg.speculate = false;
    let plain = scan(&inputs, &cfg, &NoProgress).unwrap();
    assert_eq!(screened.summary, plain.summary);
    for (a, b) in screened.summary.queries.iter().zip(&s.queries) {
        for (pa, pb) in a.positives.iter().zip(&b.positives) {
            assert_eq!(
                (pa.core_above, pa.core_ties, &pa.pool_above, &pa.pool_ties),
                (pb.core_above, pb.core_ties, &pb.pool_above, &pb.pool_ties)
            );
        }
    }
}

/// In-memory descriptors named `name`, row `i` with id `{prefix}{i}`.
fn mem(name: &str, prefix: &str, rows: &[Vec<f32>]) -> InMemoryDescriptors {
    let d = rows[0].len();
    let ids = (0..rows.len()).map(|i| format!("{prefix}{i}")).collect();
    InMemoryDescriptors::new(name, ids, d, rows.concat()).unwrap()
}

/// Unit vector from a seed (xorshift values in [-1, 1)).
fn unit(seed: u64, d: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..d)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

#[test]
fn unrepresentative_pilot_is_caught_and_rescanned() {
    // The pilot's blocks (8, 24, 40, … of 512 rows) hold near-duplicates of the queries, the
    // rest is random: the pilot's floors are far too high, the check fails, and every query is
    // scanned again. The result must equal the plain scan.
    let (d, nq, npool, block) = (8, 4, 40_000, 512);
    let queries: Vec<Vec<f32>> = (0..nq).map(|q| unit(1000 + q as u64, d)).collect();
    let qdesc = mem("queries", "q", &queries);
    let near = |q: usize, seed: u64| -> Vec<f32> {
        let noise = unit(seed, d);
        let mut v: Vec<f32> = queries[q]
            .iter()
            .zip(&noise)
            .map(|(a, b)| a + 0.1 * b)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    };
    let core_rows: Vec<Vec<f32>> = (0..nq)
        .map(|q| near(q, 77 + q as u64))
        .chain((0..50).map(|i| unit(5000 + i, d)))
        .collect();
    let core = mem("core", "c", &core_rows);
    let pool_rows: Vec<Vec<f32>> = (0..npool)
        .map(|r| {
            if (r / block) % 16 == 8 {
                near(r % nq, 90_000 + r as u64)
            } else {
                unit(10_000_000 + r as u64, d)
            }
        })
        .collect();
    let pool = mem("pool", "p", &pool_rows);
    let qs = QuerySet {
        name: "adversarial".into(),
        query_ids: (0..nq).map(|q| format!("q{q}")).collect(),
        positives: (0..nq).map(|q| vec![format!("c{q}")]).collect(),
    };
    let inputs = ScanInputs {
        query_set: &qs,
        queries: &qdesc,
        core: &core,
        pool: vec![&pool],
    };
    let mut cfg = config(1.0, 3, 2, 2, 2000, 50);
    cfg.threads = Some(2);
    let fast = scan(&inputs, &cfg, &NoProgress).unwrap();
    assert!(fast.speculative_floors > 0);
    assert_eq!(
        fast.rescanned_queries, nq as u64,
        "every query's floors fail"
    );
    cfg.speculate = false;
    let plain = scan(&inputs, &cfg, &NoProgress).unwrap();
    assert_eq!(fast.summary, plain.summary);
    assert_eq!(fast.results, plain.results);
}
