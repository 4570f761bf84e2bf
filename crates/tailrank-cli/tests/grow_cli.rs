//! Growing a sample by its increment, end to end: `tailrank sample --after` lists the same ids
//! as Python's xxhash; `scan --after` of the increment's rows plus `tailrank grow` equals a
//! direct scan of the larger sample (every array file bitwise, the manifest equal but for the
//! input records), on npy and HDF5 pools, with ties (pool copies of positives, and repeated
//! pool vectors) and drift shards, by a factor of 2 and of 4, twice in a row, and from an
//! increment scanned in two pieces and merged. By other factors (0.04 → 0.08 → 0.2 → 0.4,
//! 0.25 → 0.4): the subsets a direct scan also has are bitwise its, and every subset holds
//! what an exact scan of the rows in its hash range gives. Refusals: rows outside the
//! increment, an increment with other drift shards, a summary that is not an increment,
//! predicting from a part.

use tailrank_test_support::cli;
use tailrank_test_support::python as common;

use serde_json::Value;
use std::path::Path;
use std::process::Output;
use tailrank::summary::Summary;

/// Queries, core, JSON ground truth, and a pool of 3000 f32 rows (`pool.npy`, `pool.h5`) whose
/// ids fall in hash ranges at seed 3; `<name>.npy`/`.h5` hold the rows of each range of
/// `RANGES`, and `<name>.py.txt` its ids as Python's xxhash selects them.
const GENERATE: &str = r#"
import sys, os, json
import numpy as np, xxhash, h5py

d = sys.argv[1]
rng = np.random.default_rng(7)
D, SEED = 24, 3

def unit(n):
    x = rng.standard_normal((n, D)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)

qids = [f"q{i}" for i in range(10)]
Q = unit(10)
pos_ids, P, gt = [], [], {}
for i, q in enumerate(qids):
    ids = [f"pos/{i}_{b}" for b in range(3)]
    gt[q] = ids
    for b in range(3):
        v = Q[i] + rng.standard_normal(D).astype(np.float32) * (0.4 + 0.3 * b)
        P.append(v / np.linalg.norm(v))
        pos_ids.append(ids[b])
P = np.array(P, dtype=np.float32)
core_ids = pos_ids + [f"core/{j}" for j in range(20)]
C = np.vstack([P, unit(20)])
pool = unit(3000)
# Ties: copies of positives (a pool row scoring exactly s_j) and repeated pool rows.
for j in range(0, 3000, 25):
    pool[j] = P[(j // 25) % len(P)]
for j in range(1, 3000, 40):
    pool[j] = pool[(j + 7) % 3000]
pool_ids = [f"img/{j:06d}" for j in range(3000)]

def save_npy(name, X, ids):
    np.save(os.path.join(d, name + ".npy"), X)
    open(os.path.join(d, name + ".ids.txt"), "w").write("".join(i + "\n" for i in ids))

def save_h5(name, X, ids):
    with h5py.File(os.path.join(d, name + ".h5"), "w") as f:
        f.create_dataset("features", data=X)
        f.create_dataset("index", data=[i.encode() for i in ids], dtype=h5py.string_dtype("ascii"))

save_npy("queries", Q, qids)
save_npy("core", C, core_ids)
json.dump(gt, open(os.path.join(d, "gt.json"), "w"))
save_npy("pool", pool, pool_ids)
save_h5("pool", pool, pool_ids)

h = np.array([xxhash.xxh3_64_intdigest(i.encode(), seed=SEED) for i in pool_ids], dtype=np.uint64)
def t(f):
    return int(f * 2.0**64)
RANGES = {"s10": (0, .1), "s20": (0, .2), "s25": (0, .25), "i10_20": (.1, .2),
          "i20_40": (.2, .4), "i10_40": (.1, .4), "i25_40": (.25, .4),
          "s04": (0, .04), "i04_08": (.04, .08), "i08_20": (.08, .2), "i10_30": (.1, .3),
          "i25_30": (.25, .3)}
for name, (a, b) in RANGES.items():
    keep = np.nonzero((h >= np.uint64(t(a))) & (h < np.uint64(t(b))))[0]
    ids = [pool_ids[j] for j in keep]
    save_npy(name, pool[keep], ids)
    save_h5(name, pool[keep], ids)
    open(os.path.join(d, name + ".py.txt"), "w").write("".join(i + "\n" for i in ids))
    half = len(keep) // 2
    save_npy(name + "_a", pool[keep[:half]], ids[:half])
    save_npy(name + "_b", pool[keep[half:]], ids[half:])
"#;

/// The rows of `pool.npy` whose id hashes (Python's xxhash, seed 3) fall in `[lo, hi)` into
/// `<name>.npy` and `<name>.ids.txt`.
const SLICE: &str = r#"
import sys, os
import numpy as np, xxhash
d, lo, hi, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
pool = np.load(os.path.join(d, "pool.npy"))
ids = open(os.path.join(d, "pool.ids.txt")).read().split()
keep = [j for j, i in enumerate(ids) if lo <= xxhash.xxh3_64_intdigest(i.encode(), seed=3) < hi]
np.save(os.path.join(d, name + ".npy"), pool[keep])
open(os.path.join(d, name + ".ids.txt"), "w").write("".join(ids[j] + "\n" for j in keep))
"#;

fn tailrank(dir: &Path, args: &[&str]) -> Output {
    cli::output_in(dir, args)
}

fn ok(o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "tailrank failed: {err}");
}

/// The command refused summaries that do not fit together (a mismatch), naming `needles`.
fn fails(o: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Mismatch.exit_code()),
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "error {err:?} should mention {n:?}");
    }
}

/// `scan` of `pool` (`.npy` or `.h5`) at `fraction` (and `after`) into `out`, with M = 30 and
/// `shards` drift shards: the lists are truncated and the shards keep ⌈M/H⌉.
fn scan(d: &Path, pool: &[&str], fraction: &str, after: Option<&str>, shards: &str, out: &str) {
    scan_with(d, pool, fraction, after, shards, out, &[]);
}

/// [`scan`] with `extra` arguments (`--pool-size N`).
fn scan_with(
    d: &Path,
    pool: &[&str],
    fraction: &str,
    after: Option<&str>,
    shards: &str,
    out: &str,
    extra: &[&str],
) {
    let mut args = vec![
        "scan",
        "--queries",
        "queries.npy",
        "--core",
        "core.npy",
        "--gt",
        "gt.json",
        "--seed",
        "3",
        "--top-m",
        "30",
        "--drift-shards",
        shards,
        "--model",
        "toy",
        "--fraction",
        fraction,
        "-o",
        out,
        "--pool",
    ];
    args.extend_from_slice(pool);
    if let Some(a) = after {
        args.extend_from_slice(&["--after", a]);
    }
    args.extend_from_slice(extra);
    ok(&tailrank(d, &args));
}

/// Every subset of summary folder `got` holds what an exact scan (f = 1) of the pool rows
/// hashing into its range gives at level 0 (Python selects the rows): the same S, per-positive
/// counts and ties, and the same top list cut to the subset's M.
fn assert_subsets_are_direct(d: &Path, got: &str) {
    let g = Summary::read(&d.join(got)).unwrap();
    for (i, sub) in g.subsets.iter().enumerate() {
        let (lo, end) = sub.range.bounds();
        let name = format!("{got}_ref{i}");
        common::run_python(
            SLICE,
            &[
                d.to_str().unwrap(),
                &lo.to_string(),
                &end.to_string(),
                &name,
            ],
        );
        let npy = format!("{name}.npy");
        scan(d, &[&npy], "1", None, "0", &name);
        let w = Summary::read(&d.join(&name)).unwrap();
        let what = format!("{got} subset {i} ({:?} [{lo}, {end}))", sub.kind);
        assert_eq!(g.subset_sizes[i], w.subset_sizes[0], "{what}: size");
        assert!(w.subset_sizes[0] > 0, "{what}: empty");
        for (qg, qw) in g.queries.iter().zip(&w.queries) {
            let m = sub.kept(g.top_m).min(qw.top_scores[0].len());
            assert_eq!(qg.top_scores[i], qw.top_scores[0][..m], "{what}: {}", qg.id);
            for (pg, pw) in qg.positives.iter().zip(&qw.positives) {
                assert_eq!(pg.pool_above[i], pw.pool_above[0], "{what}: {}", pg.id);
                assert_eq!(pg.pool_ties[i], pw.pool_ties[0], "{what}: {}", pg.id);
            }
        }
    }
}

/// The fractions of the levels of summary folder `dir`.
fn level_fractions(d: &Path, dir: &str) -> Vec<f64> {
    let s = Summary::read(&d.join(dir)).unwrap();
    s.level_indices()
        .iter()
        .map(|&i| s.subsets[i].fraction)
        .collect()
}

/// Every array file of the two folders bitwise equal, and the manifests equal but for
/// `inputs`.
fn assert_same_summary(d: &Path, got: &str, want: &str) {
    let manifest = |dir: &str| -> Value {
        let text = std::fs::read_to_string(d.join(dir).join("manifest.json")).unwrap();
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v.as_object_mut().unwrap().remove("inputs");
        v
    };
    let (mg, mw) = (manifest(got), manifest(want));
    assert_eq!(mg, mw, "manifests of {got} and {want}");
    let arrays = mw["arrays"].as_object().unwrap();
    assert!(arrays.contains_key("pos_pool_ties.npy") && arrays.contains_key("pool_id_hashes.npy"));
    for name in arrays.keys() {
        let a = std::fs::read(d.join(got).join(name)).unwrap();
        let b = std::fs::read(d.join(want).join(name)).unwrap();
        assert!(a == b, "{got}/{name} differs from {want}/{name}");
    }
}

#[test]
fn grown_summaries_equal_direct_scans() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    common::run_python(GENERATE, &[d.to_str().unwrap()]);

    // `sample --after` lists exactly Python's increment, in file order.
    for (name, f, after) in [("i20_40", "0.4", "0.2"), ("i10_40", "0.4", "0.1")] {
        let out = format!("{name}.tr.txt");
        ok(&tailrank(
            d,
            &[
                "sample",
                "--ids",
                "pool.ids.txt",
                "--fraction",
                f,
                "--after",
                after,
                "--seed",
                "3",
                "-o",
                &out,
            ],
        ));
        let got = std::fs::read_to_string(d.join(&out)).unwrap();
        let want = std::fs::read_to_string(d.join(format!("{name}.py.txt"))).unwrap();
        assert!(
            got.lines().count() > 500,
            "{name}: {} ids",
            got.lines().count()
        );
        assert_eq!(got, want, "{name}");
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(d.join(format!("{out}.manifest.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(m["after"].as_f64(), Some(after.parse().unwrap()));
    }

    for ext in ["npy", "h5"] {
        let p = |name: &str| format!("{name}.{ext}");
        // Direct scans of the whole pool at 0.2 and 0.4 (rows outside the sample skipped).
        scan(d, &[&p("pool")], "0.4", None, "4", "direct40");
        scan(d, &[&p("pool")], "0.2", None, "4", "direct20");
        let direct = Summary::read(&d.join("direct40")).unwrap();
        let ties: u64 = direct.tied_pairs(0);
        assert!(ties > 0, "the pool has ties with positives");
        assert!(direct.subset_sizes[0] > 1000 && direct.queries[0].top_scores[0].len() == 30);

        // 0.2 → 0.4: the base and its increment.
        scan(d, &[&p("s20")], "0.2", None, "4", "base20");
        scan(d, &[&p("i20_40")], "0.4", Some("0.2"), "4", "part20_40");
        ok(&tailrank(
            d,
            &["grow", "base20", "part20_40", "-o", "grown40"],
        ));
        assert_same_summary(d, "grown40", "direct40");
        // The base alone equals the direct scan at 0.2 (the same sample from the whole pool).
        assert_same_summary(d, "base20", "direct20");

        // 0.1 → 0.4 (a factor of 4), and 0.1 → 0.2 → 0.4 (two doublings).
        scan(d, &[&p("s10")], "0.1", None, "4", "base10");
        scan(d, &[&p("i10_40")], "0.4", Some("0.1"), "4", "part10_40");
        ok(&tailrank(
            d,
            &["grow", "base10", "part10_40", "-o", "grown40x4"],
        ));
        assert_same_summary(d, "grown40x4", "direct40");
        scan(d, &[&p("i10_20")], "0.2", Some("0.1"), "4", "part10_20");
        ok(&tailrank(
            d,
            &["grow", "base10", "part10_20", "-o", "grown20"],
        ));
        assert_same_summary(d, "grown20", "direct20");
        ok(&tailrank(
            d,
            &["grow", "grown20", "part20_40", "-o", "grown40x2x2"],
        ));
        assert_same_summary(d, "grown40x2x2", "direct40");

        // 0.1 → 0.3 (a factor of 3): the shard cut 0.075 = 0.3·3/4 is the base's 0.1·3/4 up
        // to rounding and takes the base's value; every subset holds what a direct scan of
        // its hash range gives.
        scan(d, &[&p("i10_30")], "0.3", Some("0.1"), "4", "part10_30");
        ok(&tailrank(d, &["grow", "base10", "part10_30", "-o", "g30"]));
        assert_eq!(level_fractions(d, "g30")[0], 0.3);
        if ext == "npy" {
            assert_subsets_are_direct(d, "g30");
        }

        // 0.04 → 0.08 → 0.2 → 0.4 (1% → 2% → 5% → 10%, scaled): the doubling equals the direct
        // scan; the factor 2.5 keeps the levels f/2^ℓ at or above the base's 0.08 and moves the
        // lower ones onto the base's (0.05 → 0.04, …), and the shard cut 0.05 onto a base cut.
        scan(d, &["pool.npy"], "0.08", None, "4", "direct08");
        scan(d, &[&p("s04")], "0.04", None, "4", "base04");
        scan(d, &[&p("i04_08")], "0.08", Some("0.04"), "4", "part04_08");
        scan(d, &[&p("i08_20")], "0.2", Some("0.08"), "4", "part08_20");
        ok(&tailrank(d, &["grow", "base04", "part04_08", "-o", "g08"]));
        assert_same_summary(d, "g08", "direct08");
        ok(&tailrank(d, &["grow", "g08", "part08_20", "-o", "g20"]));
        ok(&tailrank(d, &["grow", "g20", "part20_40", "-o", "g40"]));
        assert_eq!(level_fractions(d, "g20"), [0.2, 0.1, 0.04, 0.02, 0.01]);
        assert_eq!(level_fractions(d, "g40"), [0.4, 0.2, 0.1, 0.04, 0.02]);
        // The grown 0.4 has the direct scan's levels 0.4, 0.2, 0.1 and its shards, bitwise.
        let (g40, direct) = (
            Summary::read(&d.join("g40")).unwrap(),
            Summary::read(&d.join("direct40")).unwrap(),
        );
        for (i, j) in [(0, 0), (1, 1), (2, 2), (5, 5), (6, 6), (7, 7), (8, 8)] {
            assert_eq!(g40.subsets[i], direct.subsets[j], "g40 subset {i}");
            assert_eq!(g40.subset_sizes[i], direct.subset_sizes[j]);
            for (qg, qw) in g40.queries.iter().zip(&direct.queries) {
                assert_eq!(qg.top_scores[i], qw.top_scores[j], "g40 subset {i}");
            }
        }
        assert_eq!(g40.pool_id_hashes, direct.pool_id_hashes);
        if ext == "npy" {
            assert_subsets_are_direct(d, "g20");
            assert_subsets_are_direct(d, "g40");
        }
        // Predict reads the moved levels like any others.
        ok(&tailrank(
            d,
            &[
                "predict",
                "--summary",
                "g40",
                "--pool-size",
                "3000",
                "--bootstrap",
                "20",
                "--sample-noise",
                "0",
            ],
        ));
    }

    // Three drift shards (an odd H) and an increment scanned in two pieces, merged.
    scan(d, &["pool.npy"], "0.4", None, "3", "direct40h3");
    scan(d, &["s20.npy"], "0.2", None, "3", "base20h3");
    scan(d, &["i20_40_a.npy"], "0.4", Some("0.2"), "3", "part_a");
    scan(d, &["i20_40_b.npy"], "0.4", Some("0.2"), "3", "part_b");
    ok(&tailrank(
        d,
        &["merge", "part_a", "part_b", "-o", "part_ab"],
    ));
    ok(&tailrank(
        d,
        &["grow", "base20h3", "part_ab", "-o", "grown40h3"],
    ));
    assert_same_summary(d, "grown40h3", "direct40h3");
    let grown = Summary::read(&d.join("grown40h3")).unwrap();
    let roles: Vec<&str> = grown.inputs.iter().map(|r| r.role.as_str()).collect();
    assert_eq!(
        roles,
        ["queries", "core", "ground_truth", "pool", "pool", "pool"]
    );

    // A base scanned over the whole pool file with its N (its input record holds all 3000
    // rows) grows by an increment scanned with the same N: the records overlap in rows, and
    // grow must not add them up against N.
    let n = ["--pool-size", "3000"];
    scan_with(d, &["pool.npy"], "0.2", None, "4", "base20n", &n);
    scan_with(
        d,
        &["i20_40.npy"],
        "0.4",
        Some("0.2"),
        "4",
        "part20_40n",
        &n,
    );
    scan_with(d, &["pool.npy"], "0.4", None, "4", "direct40n", &n);
    ok(&tailrank(
        d,
        &["grow", "base20n", "part20_40n", "-o", "grown40n"],
    ));
    assert_same_summary(d, "grown40n", "direct40n");

    // Refusals, each with exit code 2 and nothing written.
    // A row of the base's sample given to the increment's scan: the first one is named.
    let first_base_id = std::fs::read_to_string(d.join("s20.ids.txt")).unwrap();
    let first_base_id = first_base_id.lines().next().unwrap().to_string();
    let o = tailrank(
        d,
        &[
            "scan",
            "--queries",
            "queries.npy",
            "--core",
            "core.npy",
            "--gt",
            "gt.json",
            "--seed",
            "3",
            "--fraction",
            "0.4",
            "--after",
            "0.2",
            "--pool",
            "i20_40.npy",
            "s20.npy",
            "-o",
            "bad",
        ],
    );
    fails(
        &o,
        &[
            "s20.npy",
            "row 0",
            &first_base_id,
            "outside the sample increment",
        ],
    );
    assert!(!d.join("bad").exists());
    // 0.25 → 0.4 grows (levels 0.4 then the base's 0.25, 0.125, …); an increment scanned
    // with other drift shards has no piece for the grown shard cut 0.3.
    scan(d, &["s25.npy"], "0.25", None, "4", "base25");
    scan(d, &["i25_40.npy"], "0.4", Some("0.25"), "4", "part25_40");
    scan(d, &["i25_40.npy"], "0.4", Some("0.25"), "3", "part25_40h3");
    ok(&tailrank(
        d,
        &["grow", "base25", "part25_40", "-o", "g25_40"],
    ));
    assert_eq!(
        level_fractions(d, "g25_40"),
        [0.4, 0.25, 0.125, 0.0625, 0.03125]
    );
    assert_subsets_are_direct(d, "g25_40");
    // 0.25 → 0.3: the direct shard cut 0.225 is nearest the base's end 0.25, where the base's
    // shards stop and the increment's start (it was kept at 0.225, which no base subset ends at:
    // refused).
    scan(d, &["i25_30.npy"], "0.3", Some("0.25"), "4", "part25_30");
    ok(&tailrank(
        d,
        &["grow", "base25", "part25_30", "-o", "g25_30"],
    ));
    assert_subsets_are_direct(d, "g25_30");
    fails(
        &tailrank(d, &["grow", "base25", "part25_40h3", "-o", "bad"]),
        &["cannot grow", "drift shard", "--drift-shards"],
    );
    // To f = 1 the drift shards cannot match (the whole pool's cuts lie one hash below the
    // base's): the error says so, not "scan with the base's options" (it was).
    let (d_s, lo, hi) = (
        d.to_str().unwrap(),
        (1u64 << 62).to_string(),
        "18446744073709551616",
    );
    common::run_python(SLICE, &[d_s, &lo, hi, "i25_100"]);
    scan(d, &["i25_100.npy"], "1", Some("0.25"), "4", "part25_100");
    fails(
        &tailrank(d, &["grow", "base25", "part25_100", "-o", "bad"]),
        &[
            "cannot grow",
            "growing to f = 1 with drift shards",
            "--drift-shards 0",
        ],
    );
    // The two given the other way round are named as such.
    fails(
        &tailrank(d, &["grow", "part25_40", "base25", "-o", "bad"]),
        &["the wrong order", "tailrank grow BASE PART"],
    );
    // An increment that keeps another M is named as such (not as a missing union of subsets).
    let mut args = vec![
        "scan",
        "--queries",
        "queries.npy",
        "--core",
        "core.npy",
        "--gt",
    ];
    args.extend([
        "gt.json",
        "--seed",
        "3",
        "--top-m",
        "20",
        "--drift-shards",
        "4",
    ]);
    args.extend(["--model", "toy", "--fraction", "0.4", "--after", "0.25"]);
    args.extend(["-o", "part25_40m20", "--pool", "i25_40.npy"]);
    ok(&tailrank(d, &args));
    fails(
        &tailrank(d, &["grow", "base25", "part25_40m20", "-o", "bad"]),
        &["cannot grow", "M = 30", "increment M = 20", "--top-m"],
    );
    // The increment must start where the base ends, and must be an increment.
    fails(
        &tailrank(d, &["grow", "base10", "part20_40", "-o", "bad"]),
        &["--after 0.1"],
    );
    fails(
        &tailrank(d, &["grow", "base20", "base10", "-o", "bad"]),
        &["not an increment"],
    );
    fails(
        &tailrank(d, &["grow", "part20_40", "part20_40", "-o", "bad"]),
        &["itself an increment"],
    );
    // An increment is grown onto its base, never merged with it.
    fails(
        &tailrank(d, &["merge", "base20", "part20_40", "-o", "bad"]),
        &["part 2 is a sample increment", "tailrank grow"],
    );
    // Increments of other ranges are named by their --after.
    fails(
        &tailrank(d, &["merge", "part20_40", "part25_40", "-o", "bad"]),
        &[
            "increment above fraction 0.2",
            "above 0.25",
            "other --after",
        ],
    );
    // A base scanned over half the pool rows and an increment over all of them are no samples
    // of one pool (a direct scan would hold twice the base's items): refused, not grown into
    // wrong metrics.
    scan(d, &["s20_a.npy"], "0.2", None, "4", "base20half");
    fails(
        &tailrank(d, &["grow", "base20half", "part20_40", "-o", "bad"]),
        &["cannot grow", "sds", "same pool rows"],
    );
    assert!(!d.join("bad").exists());
    fails(
        &tailrank(
            d,
            &["predict", "--summary", "part20_40", "--pool-size", "3000"],
        ),
        &["is an increment", "tailrank grow"],
    );
}
