//! The web families generated on the fly (docs/reference/validation.md, "Web families at 10⁸") at a
//! small N: rows independent of batching and threads, the streaming truth pass against a
//! brute force over the same rows, the sample scan against a scan of the sampled rows written
//! to a file, and one end-to-end run.

use tailrank::formats::descriptors::{DescriptorSource, Dtype};
use tailrank::formats::ids::write_ids;
use tailrank::formats::npy::write_npy;
use tailrank::formats::open_descriptors;
use tailrank::sample::in_sample;
use tailrank::scan::engine::{scan, NoProgress, Progress, ScanConfig, ScanInputs};
use tailrank::simulate::exam::{exam, read_vector_runs};
use tailrank::simulate::validation::ValidationOptions;
use tailrank::simulate::vector_validation::{VectorRun, VectorRunOptions};
use tailrank::simulate::vectors::pool_id;
use tailrank::simulate::web_geometry::WebLayout;
use tailrank::simulate::web_pool::{
    sample_scan, scan_generated, truth_scan, GeneratedPool, WebInputs,
};
use tailrank::simulate::web_validation::{family_config, run_families, web_family, WEB_FAMILIES};

/// The progress of a pass over a generated pool, shown nowhere.
fn no_progress(_task: &str, _rows: u64) -> Box<dyn Progress> {
    Box::new(NoProgress)
}

const N: u64 = 200_000;

fn layout(name: &str) -> WebLayout {
    layout_seed(name, 3)
}

fn layout_seed(name: &str, seed: u64) -> WebLayout {
    let opts = VectorRunOptions {
        pool_size: Some(N),
        ..VectorRunOptions::default()
    };
    let cfg = family_config(web_family(name).unwrap(), seed, &opts);
    WebLayout::new(&cfg).unwrap()
}

/// xxh3 of the f32 bytes of rows read from `src` in batches of `batch` rows on `threads`
/// threads (batches hashed in order).
fn rows_hash(src: &GeneratedPool, batch: usize, threads: usize) -> u64 {
    use rayon::prelude::*;
    let d = src.dim();
    let starts: Vec<usize> = (0..src.rows()).step_by(batch).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let parts: Vec<Vec<u8>> = pool.install(|| {
        starts
            .par_iter()
            .map(|&a| {
                let n = batch.min(src.rows() - a);
                let mut buf = vec![0f32; n * d];
                src.read_rows(a, &mut buf).unwrap();
                buf.iter().flat_map(|v| v.to_le_bytes()).collect()
            })
            .collect()
    });
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    parts.iter().for_each(|p| h.update(p));
    h.digest()
}

/// (a) Row r's bits do not depend on the batch size, on the thread count, nor on the range
/// of the source it is read through.
#[test]
fn rows_do_not_depend_on_batches_threads_or_chunks() {
    for f in WEB_FAMILIES {
        let l = layout(f.name);
        let whole = GeneratedPool::new(&l, 0, N).unwrap();
        let a = rows_hash(&whole, N as usize, 1);
        assert_eq!(a, rows_hash(&whole, 777, 3), "{}", f.name);
        assert_eq!(a, rows_hash(&whole, 4096, 2), "{}", f.name);
        let d = l.config.dim;
        let tail = GeneratedPool::new(&l, 123_456, N).unwrap();
        let mut x = vec![0f32; 5 * d];
        let mut y = vec![0f32; 5 * d];
        whole.read_rows(150_000, &mut x).unwrap();
        tail.read_rows(150_000 - 123_456, &mut y).unwrap();
        assert_eq!(x, y, "{}", f.name);
        assert_eq!(tail.ids().name(0).unwrap(), pool_id(123_456));
        assert!(GeneratedPool::new(&l, 0, N + 1).is_err());
        assert!(whole.read_rows(N as usize - 1, &mut x).is_err());
    }
}

/// (b) The truth pass (f = 1, chunked) counts, for every positive, the pool rows scoring
/// above it: checked against a plain f64 loop over the same generated rows (a row within
/// 1e-6 of the positive's score may fall either way: f32 against f64 rounding), and the same
/// counts whatever the chunk size and thread count.
#[test]
fn truth_counts_equal_a_brute_force_over_the_same_rows() {
    for f in WEB_FAMILIES {
        let l = layout(f.name);
        let inputs = WebInputs::new(&l).unwrap();
        let truth = truth_scan(&l, &inputs, Some(2), 1, &NoProgress)
            .unwrap()
            .summary;
        let d = l.config.dim;
        let mut rows = vec![0f32; N as usize * d];
        l.fill_rows(0, &mut rows);
        let (mut exact, mut total) = (0, 0);
        for q in truth.queries.iter().step_by(5) {
            let qi = l.query_ids.iter().position(|x| *x == q.id).unwrap();
            let qv = &l.queries[qi * d..(qi + 1) * d];
            let scores: Vec<f64> = rows
                .chunks_exact(d)
                .map(|r| r.iter().zip(qv).map(|(a, b)| *a as f64 * *b as f64).sum())
                .collect();
            for p in &q.positives {
                let s = p.score as f64;
                let above = scores.iter().filter(|&&x| x > s + 1e-6).count() as u64;
                let near = scores.iter().filter(|&&x| (x - s).abs() <= 1e-6).count() as u64;
                let k = p.pool_above[0] + p.pool_ties.first().copied().unwrap_or(0);
                assert!(
                    above <= p.pool_above[0] && k <= above + near,
                    "{}: {} {}: scan {} (+{} ties), brute force {above} (+{near} within 1e-6)",
                    f.name,
                    q.id,
                    p.id,
                    p.pool_above[0],
                    k - p.pool_above[0]
                );
                exact += usize::from(near == 0);
                total += 1;
            }
        }
        assert!(
            exact * 10 >= total * 9,
            "{}: {exact} of {total} exact",
            f.name
        );
        // Chunks of 30,001 rows and one thread: the same counts.
        let mut cfg = ScanConfig::new(1.0, 0);
        (cfg.min_fraction, cfg.drift_shards, cfg.top_m) = (1.0, 0, 1);
        (cfg.normalize, cfg.model, cfg.threads) = (true, "simulated".into(), Some(1));
        let small = scan_generated(&l, &inputs, &cfg, 30_001, false, &NoProgress).unwrap();
        assert_eq!(small.summary.queries, truth.queries, "{}", f.name);
        assert_eq!(small.summary.subset_sizes, vec![N]);
    }
}

/// (c) The sample scan of the generated pool equals the scan of the sampled rows written to
/// an .npy file with their ids: same counts, top scores, subset sizes and fingerprint.
#[test]
fn sample_summary_equals_a_scan_of_the_sampled_rows_in_a_file() {
    let (f, seed) = (0.05, 3);
    for fam in WEB_FAMILIES {
        let l = layout(fam.name);
        let inputs = WebInputs::new(&l).unwrap();
        let streamed = sample_scan(&l, &inputs, f, seed, None, &NoProgress)
            .unwrap()
            .summary;
        let d = l.config.dim;
        let kept: Vec<u64> = (0..N)
            .filter(|&r| in_sample(&pool_id(r), f, seed).unwrap())
            .collect();
        let mut data = vec![0f32; kept.len() * d];
        for (i, &r) in kept.iter().enumerate() {
            l.fill_rows(r, &mut data[i * d..(i + 1) * d]);
        }
        let dir = tempfile::tempdir().unwrap();
        let npy = dir.path().join("sampled.npy");
        write_npy(&npy, kept.len(), d, &data, Dtype::F32).unwrap();
        let ids: Vec<String> = kept.iter().map(|&r| pool_id(r)).collect();
        write_ids(&dir.path().join("sampled.ids.txt"), &ids).unwrap();
        let pool = open_descriptors(&npy, None).unwrap();
        let mut cfg = ScanConfig::new(f, seed);
        (cfg.normalize, cfg.model, cfg.pool_size) = (true, "simulated".into(), Some(N));
        let inp = ScanInputs {
            query_set: &inputs.query_set,
            queries: &inputs.queries,
            core: &inputs.core,
            pool: vec![pool.as_ref()],
        };
        let file = scan(&inp, &cfg, &NoProgress).unwrap().summary;
        assert_eq!(streamed.queries, file.queries, "{}", fam.name);
        assert_eq!(streamed.subset_sizes, file.subset_sizes);
        assert_eq!(streamed.pool_id_hashes, file.pool_id_hashes);
        assert_eq!(streamed.subset_sizes[0], kept.len() as u64);
        assert_eq!(streamed.pool_size, Some(N));
    }
}

/// One end-to-end run through the front door: finite records, the truth identity of the
/// expected-rank map, the timings recorded; an unknown family lists the web families.
#[test]
fn end_to_end_run_at_small_n() {
    let opts = VectorRunOptions {
        fractions: vec![0.05],
        pool_size: Some(N),
        ..VectorRunOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let names = vec!["web-burst-1e8".to_string()];
    let runs = run_families(&names, 0..=0, &opts, dir.path(), |_, _, _| {}, &no_progress).unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert!(r.is_finite(), "{r:?}");
    assert_eq!((r.queries, r.pool_size, r.dim), (250, N, 64));
    assert!((r.oracle_expected_rank - r.truth.map_at_k).abs() < 1e-9);
    assert!(r.truth.map_at_k > 0.05 && r.truth.map_at_k < 0.95);
    let t = r.stream.unwrap();
    assert!(t.truth_wall > 0.0 && t.truth_generation > 0.0 && t.sample_wall > 0.0);
    // The decomposition against x = K_N/N: its parts add up to the estimate's error, and the
    // map part is the realized identity; its immune count is the run's.
    let d = r.decomposition.as_ref().unwrap();
    assert!((d.total() - r.evt_error.map_at_k).abs() < 1e-9, "{d:?}");
    assert!(d.part_map.abs() < 1e-9, "{d:?}");
    assert_eq!(
        (d.immune, d.immune_outranked),
        (r.immune, r.immune_outranked)
    );
    vector_run_files_are_checked(dir.path(), r);
    let e = run_families(
        &["nope".into()],
        0..=0,
        &opts,
        dir.path(),
        |_, _, _| {},
        &no_progress,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("web-hubs-1e8") && e.contains("vectors-cone"),
        "{e}"
    );
}

/// `keep_summaries` writes the whole-pool truth summary (with its top scores) and each
/// fraction's sample summary into the work folder: the sample summary is the one the run
/// predicted from (a prediction from it gives the run's estimate), and the kept truth summary
/// has the counts of the plain truth pass. Without the option nothing is written there.
#[test]
fn kept_summaries_reproduce_the_run() {
    use tailrank::predict::{predict_without_next_step, PredictOptions};
    use tailrank::simulate::vector_validation::VERDICT_BOOTSTRAP;
    use tailrank::summary::Summary;
    let mut opts = VectorRunOptions {
        fractions: vec![0.05],
        pool_size: Some(N),
        ..VectorRunOptions::default()
    };
    let names = vec!["web-clustered-1e8".to_string()];
    let plain = tempfile::tempdir().unwrap();
    let runs = run_families(
        &names,
        0..=0,
        &opts,
        plain.path(),
        |_, _, _| {},
        &no_progress,
    )
    .unwrap();
    assert_eq!(std::fs::read_dir(plain.path()).unwrap().count(), 0);
    opts.keep_summaries = true;
    let dir = tempfile::tempdir().unwrap();
    let kept = run_families(&names, 0..=0, &opts, dir.path(), |_, _, _| {}, &no_progress).unwrap();
    assert_eq!(kept[0].evt, runs[0].evt);
    // (NaN cells: compare as JSON)
    let json = |r: &tailrank::simulate::vector_validation::VectorRun| {
        serde_json::to_string(&r.decomposition).unwrap()
    };
    assert_eq!(json(&kept[0]), json(&runs[0]));
    let run_dir = dir.path().join("web-clustered-1e8-s0");
    let sample = Summary::read(&run_dir.join("f0.05")).unwrap();
    let popts = PredictOptions {
        k: opts.k,
        bootstrap: VERDICT_BOOTSTRAP,
        sample_noise: 0,
        ..PredictOptions::default()
    };
    let p = predict_without_next_step(&sample, &popts).unwrap();
    assert_eq!(p.estimate, runs[0].evt.map_at_k);
    let full = Summary::read(&run_dir.join("full")).unwrap();
    let l = layout_seed("web-clustered-1e8", 0);
    let inputs = WebInputs::new(&l).unwrap();
    let plain_truth = truth_scan(&l, &inputs, Some(2), 1, &NoProgress)
        .unwrap()
        .summary;
    assert_eq!(full.subset_sizes, plain_truth.subset_sizes);
    for (a, b) in full.queries.iter().zip(&plain_truth.queries) {
        assert_eq!(a.positives, b.positives);
    }
    assert!(full.top_m >= 1000);
}

/// The exam's `--vector-runs` files (`exam::read_vector_runs`, `exam::exam`): a run counts
/// once, comes from a vector-level family, and shares a fraction with the exam; each refusal
/// names the file before the corpus runs.
fn vector_run_files_are_checked(dir: &std::path::Path, run: &VectorRun) {
    let write = |name: &str, runs: serde_json::Value| {
        let p = dir.join(name);
        std::fs::write(&p, runs.to_string()).unwrap();
        p
    };
    let one = serde_json::to_value(run).unwrap();
    let ok = write("ok.json", serde_json::json!([one]));
    assert_eq!(read_vector_runs(&ok).unwrap().len(), 1);
    let mut corpus = one.clone();
    corpus["family"] = "ilias-like".into();
    let refused = [
        (
            "twice.json",
            serde_json::json!([one, one]),
            "repeats an earlier run",
        ),
        (
            "corpus.json",
            serde_json::json!([corpus]),
            "not a vector-level family",
        ),
        ("empty.json", serde_json::json!([]), "holds no run"),
    ];
    for (name, runs, says) in refused {
        let p = write(name, runs);
        let e = read_vector_runs(&p).unwrap_err().to_string();
        assert!(e.contains(name) && e.contains(says), "{e}");
    }
    let exam_of = |files: &[&std::path::Path], fractions: &[f64]| {
        exam(
            &ValidationOptions::default(),
            Some(fractions),
            files,
            |_| {},
        )
        .unwrap_err()
        .to_string()
    };
    let copy = write("copy.json", serde_json::json!([one]));
    let e = exam_of(&[&ok, &copy], &[run.fraction]);
    assert!(
        e.contains("copy.json") && e.contains("repeats the run"),
        "{e}"
    );
    let e = exam_of(&[&ok], &[run.fraction / 2.0]);
    assert!(
        e.contains("ok.json") && e.contains("holds no run at a fraction"),
        "{e}"
    );
    let e = exam_of(&[&ok], &[0.05, 0.05]);
    assert!(e.contains("--fractions names 0.05 twice"), "{e}");
}
