//! Summaries written by earlier releases still predict (docs/reference/summary-format.md, "Older
//! versions"). `tests/fixtures/summary-v1` and `summary-v2` were written by the `tailrank scan`
//! of the commits that wrote format versions 1 and 2 (`tests/fixtures/README.md` gives the
//! commands), from the inputs [`write_inputs`] generates. The tests scan the same inputs with
//! this tailrank (format version 3) and check that the old folders read as the same summary
//! (version 1: without its tie counts) and predict the same numbers.

use tailrank_test_support::cli;
use tailrank_test_support::summary_util;

use std::path::{Path, PathBuf};
use summary_util::Rng;
use tailrank::formats::descriptors::Dtype;
use tailrank::formats::npy::write_npy;
use tailrank::predict::{predict, PredictOptions};
use tailrank::summary::Summary;

/// The `scan` options both old folders were written with (and the v3 reference is).
const SCAN_ARGS: [&str; 12] = [
    "--fraction",
    "0.5",
    "--seed",
    "3",
    "--top-m",
    "150",
    "--pool-size",
    "40000",
    "--model",
    "old-release",
    "--threads",
    "1",
];

const D: usize = 16;

/// Uniform in [-1, 1).
fn unit(rng: &mut Rng) -> f32 {
    ((rng.next_u64() >> 40) as f32 / (1u64 << 23) as f32) - 1.0
}

/// A unit vector, `noise` away from `centre` (random when `centre` is None).
fn vector(rng: &mut Rng, centre: Option<&[f32]>, noise: f32) -> Vec<f32> {
    let mut v: Vec<f32> = (0..D)
        .map(|i| centre.map_or(0.0, |c| c[i]) + noise * unit(rng))
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn write_ids(path: &Path, ids: impl Iterator<Item = String>) {
    let text: String = ids.map(|i| i + "\n").collect();
    std::fs::write(path, text).unwrap();
}

/// The fixtures' inputs, deterministic: 24 queries with 1–3 positives each among 80 core
/// rows, and 12,000 pool rows, a fifth of them near a query and 1% exact copies of a
/// positive (ties, which version 1 does not count). Files: `queries.npy`, `core.npy`,
/// `pool.npy` (f32) with sibling `.ids.txt`, and `gt.json`.
fn write_inputs(dir: &Path) {
    let mut rng = Rng(44);
    let nq = 24;
    let queries: Vec<Vec<f32>> = (0..nq).map(|_| vector(&mut rng, None, 1.0)).collect();
    let mut core: Vec<Vec<f32>> = Vec::new();
    let mut gt = serde_json::Map::new();
    for (q, qv) in queries.iter().enumerate() {
        let n = 1 + (rng.next_u64() % 3) as usize;
        let ids: Vec<String> = (0..n).map(|j| format!("c{}", core.len() + j)).collect();
        (0..n).for_each(|_| core.push(vector(&mut rng, Some(qv), 0.7)));
        gt.insert(format!("q{q}"), ids.into());
    }
    let npos = core.len();
    while core.len() < 80 {
        core.push(vector(&mut rng, None, 1.0));
    }
    let pool: Vec<Vec<f32>> = (0..12_000)
        .map(|_| match rng.next_u64() % 100 {
            0 => core[(rng.next_u64() % npos as u64) as usize].clone(),
            1..=20 => {
                let q = (rng.next_u64() % nq as u64) as usize;
                vector(&mut rng, Some(&queries[q]), 1.1)
            }
            _ => vector(&mut rng, None, 1.0),
        })
        .collect();
    for (name, rows, prefix) in [
        ("queries", &queries, "q"),
        ("core", &core, "c"),
        ("pool", &pool, "p"),
    ] {
        let flat: Vec<f32> = rows.concat();
        write_npy(
            &dir.join(format!("{name}.npy")),
            rows.len(),
            D,
            &flat,
            Dtype::F32,
        )
        .unwrap();
        write_ids(
            &dir.join(format!("{name}.ids.txt")),
            (0..rows.len()).map(|i| format!("{prefix}{i}")),
        );
    }
    std::fs::write(
        dir.join("gt.json"),
        serde_json::to_string(&serde_json::Value::Object(gt)).unwrap(),
    )
    .unwrap();
}

fn tailrank(args: &[&str]) -> (bool, String) {
    let (ok, _, stderr) = cli::tailrank(args);
    (ok, stderr)
}

/// `tailrank scan` of the inputs in `dir` into `out`, with [`SCAN_ARGS`].
fn scan(dir: &Path, out: &Path) {
    let p = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let mut args = vec!["scan".to_string()];
    for (flag, file) in [
        ("--queries", "queries.npy"),
        ("--core", "core.npy"),
        ("--gt", "gt.json"),
        ("--pool", "pool.npy"),
    ] {
        args.extend([flag.to_string(), p(file)]);
    }
    args.extend(SCAN_ARGS.iter().map(|s| s.to_string()));
    args.extend(["-o".to_string(), out.to_str().unwrap().to_string()]);
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let (ok, err) = tailrank(&args);
    assert!(ok, "scan failed: {err}");
}

fn fixture(version: u32) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/summary-v{version}"))
}

/// The v3 reference: a scan of the fixtures' inputs with this tailrank.
fn reference() -> (tempfile::TempDir, Summary) {
    let d = tempfile::tempdir().unwrap();
    write_inputs(d.path());
    let out = d.path().join("v3");
    scan(d.path(), &out);
    let s = Summary::read(&out).unwrap();
    assert_eq!(s.format_version, 3);
    (d, s)
}

/// `s` without its tie counts, as a version-1 scan records it.
fn without_ties(s: &Summary) -> Summary {
    let mut s = s.clone();
    s.ties_known = false;
    for p in s.queries.iter_mut().flat_map(|q| q.positives.iter_mut()) {
        p.core_ties = 0;
        p.pool_ties.iter_mut().for_each(|t| *t = 0);
    }
    s
}

/// (role, content digest) of the descriptor inputs: the old folders were scanned from the
/// files [`write_inputs`] writes today.
fn descriptor_digests(s: &Summary) -> Vec<(String, String)> {
    s.inputs
        .iter()
        .filter(|r| ["queries", "core", "pool"].contains(&r.role.as_str()))
        .map(|r| (r.role.clone(), r.digest.clone()))
        .collect()
}

/// The fields a rescan must reproduce (not the version, the tool version or the input paths).
fn content(s: &Summary) -> String {
    serde_json::to_string(&(
        (&s.model, &s.query_set, s.pool_size, s.fraction, s.seed),
        (s.top_m, s.core_size, &s.subsets, &s.subset_sizes),
        (&s.queries, s.ties_known),
    ))
    .unwrap()
}

fn prediction_json(s: &Summary) -> serde_json::Value {
    let opts = PredictOptions {
        bootstrap: 200,
        sample_noise: 20,
        ..PredictOptions::DEFAULT
    };
    serde_json::to_value(predict(s, &opts).expect("predicts")).unwrap()
}

#[test]
fn old_summaries_read_as_the_rescan_and_predict_the_same_numbers() {
    let (_d, v3) = reference();
    assert!(v3.ties_known);
    let tied: u64 = (0..v3.subsets.len()).map(|l| v3.tied_pairs(l)).sum();
    assert!(tied > 0, "the inputs hold exact copies of positives");

    // On disk, version 2 padded every list to M = 150, the shards' included (they kept M).
    let man: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(2).join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        man["arrays"]["top_scores.npy"]["shape"],
        serde_json::json!([24, 9, 150])
    );
    assert_eq!(v3.subsets[8].top_m, Some(38), "⌈150/4⌉");
    let (v2, warnings) = Summary::read_with_warnings(&fixture(2)).unwrap();
    assert_eq!(v2.format_version, 2);
    assert!(warnings.is_empty(), "{warnings:?}");
    // The drift shards of version 2 kept M scores; read, they keep ⌈M/H⌉ as version 3 does.
    assert_eq!(descriptor_digests(&v2), descriptor_digests(&v3));
    assert_eq!(descriptor_digests(&v3).len(), 3);
    assert!(
        content(&v2) == content(&v3),
        "version 2 reads as its rescan"
    );
    assert_eq!(v2.pool_id_hashes, v3.pool_id_hashes);
    assert_eq!(prediction_json(&v2), prediction_json(&v3));

    let (v1, warnings) = Summary::read_with_warnings(&fixture(1)).unwrap();
    assert_eq!(v1.format_version, 1);
    assert!(!v1.ties_known && v1.pool_id_hashes.is_none());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(descriptor_digests(&v1), descriptor_digests(&v3));
    assert!(
        content(&v1) == content(&without_ties(&v3)),
        "version 1 reads as its rescan without the tie counts"
    );
    assert_eq!(
        prediction_json(&v1),
        prediction_json(&without_ties(&v3)),
        "version 1 predicts as version 3 with its ties unknown"
    );
}

#[test]
fn every_prediction_command_takes_old_summaries() {
    let d = tempfile::tempdir().unwrap();
    for v in [1, 2] {
        let dir = fixture(v);
        let sd = dir.to_str().unwrap();
        let svg = d.path().join(format!("curve{v}.svg"));
        for args in [
            vec!["predict", "--summary", sd, "--bootstrap", "0"],
            vec!["compare", sd, sd, "--bootstrap", "0"],
            vec!["curve", "--summary", sd, "-o", svg.to_str().unwrap()],
        ] {
            let (ok, err) = tailrank(&args);
            assert!(ok, "version {v}: {args:?} failed: {err}");
            assert!(!err.contains("not supported"), "{err}");
            // The limits are stated, not a demand to rewrite the folder first.
            if v == 1 {
                assert!(err.contains("format version 1") && err.contains("ties unknown"));
            } else {
                assert!(!err.contains("warning"), "{err}");
            }
        }
    }
}

/// Writes the fixtures' inputs into `$TAILRANK_FIXTURE_INPUTS` (see tests/fixtures/README.md).
#[test]
#[ignore]
fn write_fixture_inputs() {
    let dir = PathBuf::from(std::env::var_os("TAILRANK_FIXTURE_INPUTS").expect("a folder"));
    std::fs::create_dir_all(&dir).unwrap();
    write_inputs(&dir);
}
