//! `tailrank scan` end to end: numpy writes f16 descriptor files (entries k/64 with Σk² = 4096,
//! so every vector is exactly unit-norm and every inner product is exact in f32 whatever the
//! summation order) and an ILIAS-layout ground truth; the binary's summary must equal a numpy
//! brute force (S_ℓ, C_j, K_{j,ℓ}, top-M, exact mAP@1k from the ranked list, results top-k), in
//! exact mode and with hash sampling (Python's xxhash). Scanning the two shards separately and
//! running `tailrank merge` equals one scan of both. Bad inputs fail with exit code 2, a message
//! naming the problem, and no output.

use tailrank_test_support::cli;
use tailrank_test_support::python as common;

use serde_json::Value;
use std::path::Path;
use std::process::Output;
use tailrank::metric::{ap_at_k_from_ranks, rank_from_counts};
use tailrank::summary::Summary;

const GENERATE: &str = r#"
import sys, json, os
import numpy as np, xxhash

d = sys.argv[1]
rng = np.random.default_rng(1234)
D = 32

def unit_vectors(n):
    """n vectors with entries k/64 and sum k^2 = 4096 exactly: unit norm, exact f16, exact dots."""
    out = []
    while len(out) < n:
        k = np.rint(rng.standard_normal((20000, D - 1)) * 64 / np.sqrt(D)).astype(np.int64)
        r = 4096 - (k * k).sum(1)
        ok = r >= 0
        s = np.zeros_like(r)
        s[ok] = np.rint(np.sqrt(r[ok]))
        ok &= s * s == r
        for row, last in zip(k[ok], s[ok]):
            v = np.append(row, last * (1 if rng.random() < .5 else -1))
            rng.shuffle(v)
            out.append(v)
            if len(out) == n:
                break
    return np.array(out, dtype=np.float64) / 64.0

def perturb(v, flips):
    w = v.copy()
    idx = rng.choice(D, size=flips, replace=False)
    w[idx] = -w[idx]
    return w

def save(name, X, ids, ids_name=None):
    np.save(os.path.join(d, name), X.astype(np.float16))
    with open(os.path.join(d, ids_name or name[:-4] + ".ids.txt"), "w") as f:
        f.write("\n".join(ids) + "\n")

I = 6
base = unit_vectors(I)
qids, Q, pos_ids, P, text_ids = [], [], [], [], []
for i in range(I):
    for a in range(2):
        qids.append(f"inst{i}/q{a}.jpg"); Q.append(perturb(base[i], 1 + a))
    text_ids.append(f"inst{i}/text0")
    for b in range(3):
        pos_ids.append(f"inst{i}/p{b}.jpg"); P.append(perturb(base[i], int(rng.integers(1, 10))))
others = unit_vectors(30)
core_ids = pos_ids + [f"other/c{j:02d}.jpg" for j in range(30)]
C = np.vstack([np.array(P), others])
pool = unit_vectors(3000)
pool_ids = [f"yfcc/{j:06d}" for j in range(3000)]
save("queries.npy", np.array(Q), qids)
save("core.npy", C, core_ids, "core_ids.txt")
save("pool_a.npy", pool[:1500], pool_ids[:1500], "a_ids.txt")
save("pool_b.npy", pool[1500:], pool_ids[1500:])
# A copy of shard a with one row of norm 2 (exact in f16).
bad = pool[:1500].copy(); bad[5] *= 2
save("bad.npy", bad, pool_ids[:1500])
gt = os.path.join(d, "gt"); os.makedirs(gt, exist_ok=True)
open(os.path.join(gt, "image_query_ids.txt"), "w").write("\n".join(qids) + "\n")
open(os.path.join(gt, "text_query_ids.txt"), "w").write("\n".join(text_ids) + "\n")
open(os.path.join(gt, "positive_ids.txt"), "w").write("\n".join(pos_ids) + "\n")

Qm = np.array(Q).astype(np.float16).astype(np.float64)
Cm = C.astype(np.float16).astype(np.float64)
Pm = pool.astype(np.float16).astype(np.float64)
core_s = (Qm @ Cm.T).astype(np.float32)   # exact: entries k/64, dots multiples of 2^-12
pool_s = (Qm @ Pm.T).astype(np.float32)

def t(f):
    return min(int(f * 2.0**64), 2**64 - 1)

def subsets(f, fmin, shards):
    out, g = [], f
    while g >= fmin * (1 - 1e-12):
        out.append((0, t(g))); g /= 2
    lo, hi = 0, t(f)
    w = hi - lo
    out += [(lo + w * i // shards, lo + w * (i + 1) // shards) for i in range(shards)]
    return out

def reference(f, fmin, shards, seed, M, k_results):
    subs = subsets(f, fmin, shards)
    h = np.array([xxhash.xxh3_64_intdigest(x.encode(), seed=seed) for x in pool_ids], dtype=np.uint64)
    member = [((h >= lo) & ((h < hi) | (hi == 2**64 - 1))) for lo, hi in subs]
    out = {"sizes": [int(m.sum()) for m in member], "queries": []}
    for qi, q in enumerate(qids):
        inst = q.split("/")[0]
        pidx = [j for j, c in enumerate(core_ids) if c.split("/")[0] == inst]
        nonrel = np.array([j not in pidx for j in range(len(core_ids))])
        ps = sorted([(-float(core_s[qi, j]), core_ids[j]) for j in pidx])
        entry = {"id": q, "pos": [], "top": []}
        for negs, pid in ps:
            s = np.float32(-negs)
            entry["pos"].append({
                "id": pid, "score": float(s),
                "C": int((core_s[qi][nonrel] > s).sum()),
                "K": [int((pool_s[qi][m] > s).sum()) for m in member],
            })
        nlev = len(subs) - shards
        for i, m in enumerate(member):
            # Levels keep the top M, drift shards the top ceil(M / H).
            kept = M if i < nlev else -(-M // shards)
            entry["top"].append([float(x) for x in np.sort(pool_s[qi][m])[::-1][:kept]])
        if f == 1.0:
            # Ranked list over core + pool; positives before equal scores (they are not outranked).
            allsc = np.concatenate([core_s[qi], pool_s[qi]])
            rel = np.concatenate([~nonrel, np.zeros(len(pool_ids), bool)])
            order = np.lexsort((~rel, -allsc.astype(np.float64)))
            hits = rel[order][:1000]
            ranks = np.nonzero(hits)[0] + 1
            entry["ap1k"] = float(np.sum(np.arange(1, len(ranks) + 1) / ranks) / min(1000, len(pidx)))
            entry["topk"] = sorted([float(x) for x in allsc], reverse=True)[:k_results]
            entry["scores"] = dict(zip(core_ids + pool_ids, [float(x) for x in allsc]))
        out["queries"].append(entry)
    return out

print(json.dumps({"exact": reference(1.0, 0.25, 2, 0, 50, 100),
                  "sampled": reference(0.5, 0.125, 2, 7, 50, 0)}))
"#;

/// The inputs written by GENERATE, common to every scan.
const INPUTS: [&str; 7] = [
    "scan",
    "--queries",
    "queries.npy",
    "--core",
    "core.npy",
    "--gt",
    "gt",
];

fn tailrank(dir: &Path, args: &[&str]) -> Output {
    cli::output_in(dir, args)
}

fn ok(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "tailrank failed: {err}");
    err
}

/// The command failed with an error of `kind` (its exit code) whose line holds `needles`.
fn fails(o: &Output, kind: tailrank::ErrorKind, needles: &[&str]) {
    assert_eq!(
        o.status.code(),
        Some(kind.exit_code()),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    for n in needles {
        assert!(err.contains(n), "error {err:?} should mention {n:?}");
    }
}

fn f32_list(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// Compare a summary with the numpy reference of one mode.
fn check(s: &Summary, r: &Value) {
    assert_eq!(
        s.subset_sizes,
        serde_json::from_value::<Vec<u64>>(r["sizes"].clone()).unwrap()
    );
    let rq = r["queries"].as_array().unwrap();
    assert_eq!(s.queries.len(), rq.len());
    for (q, rq) in s.queries.iter().zip(rq) {
        assert_eq!(q.id, rq["id"].as_str().unwrap());
        let rp = rq["pos"].as_array().unwrap();
        assert_eq!(q.positives.len(), rp.len());
        for (p, rp) in q.positives.iter().zip(rp) {
            assert_eq!(p.id, rp["id"].as_str().unwrap(), "query {}", q.id);
            assert_eq!(p.score, rp["score"].as_f64().unwrap() as f32);
            assert_eq!(p.core_above, rp["C"].as_u64().unwrap(), "C_j of {}", p.id);
            assert_eq!(
                p.pool_above,
                serde_json::from_value::<Vec<u64>>(rp["K"].clone()).unwrap(),
                "K of {} for {}",
                p.id,
                q.id
            );
        }
        for (l, t) in q.top_scores.iter().enumerate() {
            assert_eq!(
                t,
                &f32_list(&rq["top"][l]),
                "top-M of {} in subset {l}",
                q.id
            );
        }
    }
}

#[test]
fn scan_matches_numpy_and_merge_of_shards_equals_one_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let reference: Value =
        serde_json::from_str(&common::run_python(GENERATE, &[d.to_str().unwrap()])).unwrap();
    let base = [
        "--query-set",
        "image",
        "--top-m",
        "50",
        "--drift-shards",
        "2",
        "--model",
        "toy",
    ];
    let run = |extra: &[&str]| tailrank(d, &[&INPUTS[..], &base[..], extra].concat());

    // Exact mode, both shards (ids: an explicit file for a, the sibling file for b).
    ok(&run(&[
        "--pool",
        "pool_a.npy",
        "pool_b.npy",
        "--pool-ids",
        "a_ids.txt",
        "pool_b.ids.txt",
        "--min-fraction",
        "0.25",
        "--results-out",
        "results.json",
        "--k",
        "100",
        "-o",
        "whole",
    ]));
    let whole = Summary::read(&d.join("whole")).unwrap();
    let ex = &reference["exact"];
    check(&whole, ex);
    assert_eq!(whole.pool_size, Some(3000));
    assert_eq!(whole.model, "toy");
    assert_eq!(whole.query_set, "image");
    assert!(whole.is_exact());
    let roles: Vec<&str> = whole.inputs.iter().map(|r| r.role.as_str()).collect();
    assert_eq!(roles, ["queries", "core", "ground_truth", "pool", "pool"]);

    // Exact mAP@1k from the counts equals numpy's ranked-list AP.
    let mut map = 0.0;
    let mut map_ref = 0.0;
    for (q, rq) in whole.queries.iter().zip(ex["queries"].as_array().unwrap()) {
        let ranks: Vec<f64> = q
            .positives
            .iter()
            .enumerate()
            .map(|(j, p)| rank_from_counts(j + 1, p.core_above, p.pool_above[0] as f64))
            .collect();
        let ap = ap_at_k_from_ranks(&ranks, q.positives.len(), 1000);
        let ap_ref = rq["ap1k"].as_f64().unwrap();
        assert!(
            (ap - ap_ref).abs() < 1e-12,
            "AP@1k of {}: {ap} vs {ap_ref}",
            q.id
        );
        map += ap;
        map_ref += ap_ref;
    }
    assert!(
        map > 0.0 && map < whole.queries.len() as f64,
        "non-trivial mAP {map}"
    );
    assert!((map - map_ref).abs() < 1e-9);

    // Results JSON: top-100 over core ∪ pool.
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("results.json")).unwrap()).unwrap();
    for rq in ex["queries"].as_array().unwrap() {
        let got = results[rq["id"].as_str().unwrap()].as_object().unwrap();
        let mut scores: Vec<f32> = got.values().map(|x| x.as_f64().unwrap() as f32).collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        assert_eq!(scores, f32_list(&rq["topk"]));
        for (id, s) in got {
            assert_eq!(
                s.as_f64().unwrap() as f32,
                rq["scores"][id].as_f64().unwrap() as f32
            );
        }
    }

    // Shards scanned separately, then merged by the binary: the same summary.
    ok(&run(&[
        "--pool",
        "pool_a.npy",
        "--pool-ids",
        "a_ids.txt",
        "--min-fraction",
        "0.25",
        "-o",
        "A",
    ]));
    ok(&run(&[
        "--pool",
        "pool_b.npy",
        "--min-fraction",
        "0.25",
        "-o",
        "B",
    ]));
    ok(&tailrank(d, &["merge", "A", "B", "-o", "AB"]));
    assert_eq!(Summary::read(&d.join("AB")).unwrap(), whole);

    // Hash-sampled: f = 0.5, levels 0.5, 0.25, 0.125, two drift shards, seed 7.
    ok(&run(&[
        "--pool",
        "pool_a.npy",
        "pool_b.npy",
        "--pool-ids",
        "a_ids.txt",
        "pool_b.ids.txt",
        "--fraction",
        "0.5",
        "--min-fraction",
        "0.125",
        "--seed",
        "7",
        "--pool-size",
        "100000",
        "-o",
        "sampled",
    ]));
    let sampled = Summary::read(&d.join("sampled")).unwrap();
    check(&sampled, &reference["sampled"]);
    assert_eq!(sampled.pool_size, Some(100_000));
    assert_eq!(sampled.subsets.len(), 5);

    // A sample that none of the rows falls in: written, with a warning that names it.
    let err = ok(&run(&[
        "--pool",
        "pool_a.npy",
        "--pool-ids",
        "a_ids.txt",
        "--fraction",
        "0.000001",
        "--seed",
        "7",
        "--pool-size",
        "100000",
        "-o",
        "empty",
    ]));
    assert_eq!(Summary::read(&d.join("empty")).unwrap().subset_sizes[0], 0);
    assert!(
        err.contains("warning: none of the")
            && err.contains("fraction 0.000001 (seed 7)")
            && err.contains("too few rows for this fraction"),
        "{err}"
    );
    let err = ok(&run(&[
        "--pool",
        "pool_a.npy",
        "--pool-ids",
        "a_ids.txt",
        "-o",
        "whole_a",
    ]));
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn scan_refuses_bad_inputs_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    common::run_python(GENERATE, &[d.to_str().unwrap()]);
    let base = ["--top-m", "20"];
    let run = |extra: &[&str]| tailrank(d, &[&INPUTS[..], &base[..], extra].concat());
    let set = ["--query-set", "image"];

    // Several query sets and none chosen.
    fails(
        &run(&["--pool", "pool_b.npy", "-o", "out"]),
        tailrank::ErrorKind::Option,
        &[
            "several query sets",
            "image",
            "text",
            "name the one to scan",
        ],
    );
    fails(
        &run(&["--query-set", "video", "--pool", "pool_b.npy", "-o", "out"]),
        tailrank::ErrorKind::Mismatch,
        &["no query set \"video\"", "image, text"],
    );
    // N smaller than the pool.
    fails(
        &run(&[
            &set[..],
            &["--pool", "pool_b.npy", "--pool-size", "10", "-o", "out"],
        ]
        .concat()),
        tailrank::ErrorKind::Mismatch,
        &["pool size N = 10", "smaller"],
    );
    // --pool-ids not one per shard.
    fails(
        &run(&[
            &set[..],
            &[
                "--pool",
                "pool_a.npy",
                "pool_b.npy",
                "--pool-ids",
                "a_ids.txt",
                "-o",
                "out",
            ],
        ]
        .concat()),
        tailrank::ErrorKind::Option,
        &["--pool-ids"],
    );
    // A truncated shard.
    let bytes = std::fs::read(d.join("pool_b.npy")).unwrap();
    std::fs::write(d.join("trunc.npy"), &bytes[..bytes.len() - 100]).unwrap();
    std::fs::copy(d.join("pool_b.ids.txt"), d.join("trunc.ids.txt")).unwrap();
    fails(
        &run(&[
            &set[..],
            &["--pool", "pool_b.npy", "trunc.npy", "-o", "out"],
        ]
        .concat()),
        tailrank::ErrorKind::Input,
        &["trunc.npy"],
    );
    // A row that is not unit-norm: refused, or renormalised with a warning giving the count.
    fails(
        &run(&[&set[..], &["--pool", "bad.npy", "-o", "out"]].concat()),
        tailrank::ErrorKind::Input,
        &["bad.npy", "5"],
    );
    assert!(!d.join("out").exists(), "nothing written on errors");
    let err = ok(&run(&[
        &set[..],
        &["--pool", "bad.npy", "--normalize", "-o", "out"],
    ]
    .concat()));
    assert!(err.contains("warning: 1 row(s)"), "{err}");
    assert!(Summary::read(&d.join("out")).is_ok());
}

/// A query id that is also a core id is scanned, with a warning naming it (the pool refuses
/// one): the core row counts against its query like any database item.
#[test]
fn a_query_id_in_the_core_is_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    common::run_python(GENERATE, &[d.to_str().unwrap()]);
    let ids = std::fs::read_to_string(d.join("core_ids.txt")).unwrap();
    assert!(ids.contains("other/c00.jpg\n") && !ids.contains("inst0/q0.jpg"));
    std::fs::write(
        d.join("core_q_ids.txt"),
        ids.replace("other/c00.jpg\n", "inst0/q0.jpg\n"),
    )
    .unwrap();
    let scan = |core_ids: &str, out: &str| {
        let rest = ["--query-set", "image", "--core-ids", core_ids];
        let rest = [&rest[..], &["--pool", "pool_b.npy", "-o", out]].concat();
        ok(&tailrank(d, &[&INPUTS[..], &rest[..]].concat()))
    };
    let err = scan("core_q_ids.txt", "with_query");
    assert!(
        err.contains("warning: 1 query of set \"image\" is also in the core file")
            && err.contains("inst0/q0.jpg"),
        "{err}"
    );
    let err = scan("core_ids.txt", "plain");
    assert!(!err.contains("also in the core"), "{err}");
}
