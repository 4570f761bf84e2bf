//! `tailrank eval` end to end: tables, JSON report, ILIAS layout with image and text sets
//! (compared with the official evaluator's logic in Python), missing and unknown queries, and
//! errors that name the file.

use tailrank_test_support::cli;
use tailrank_test_support::python as common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn tailrank(args: &[&str]) -> Output {
    cli::output(["eval"].iter().chain(args))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn p(x: &Path) -> &str {
    x.to_str().unwrap()
}

const RESULTS: &str = r#"{"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5, "f": 0.4},
  "empty": {"a": 0.1}, "stray": {"x": 1.0}}"#;

#[test]
fn table_and_json_on_the_official_vector() {
    let d = tempfile::tempdir().unwrap();
    let gt = d.path().join("gt.json");
    let r = d.path().join("r.json");
    fs::write(&gt, r#"{"q": ["a", "c", "f", "z"], "empty": ["zz"]}"#).unwrap();
    fs::write(&r, RESULTS).unwrap();

    let o = tailrank(&["--results", p(&r), "--gt", p(&gt)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // mean of 0.541667 and 0 = 27.08 %.
    assert!(out.contains("mAP@1000") && out.contains("27.08"), "{out}");
    assert!(stderr(&o).contains("warning") && stderr(&o).contains("stray"));

    let o = tailrank(&[
        "--results",
        p(&r),
        "--gt",
        p(&gt),
        "--k",
        "3",
        "--metric",
        "map,recall",
        "--metric",
        "hit1",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    // AP@3 = 0.555556 → 27.78; R@3 = (2/4 + 0)/2 = 25.00; hit@1 = 50.00.
    assert!(out.contains("mAP@3") && out.contains("27.78"), "{out}");
    assert!(
        out.contains("R@3")
            && out.contains("25.00")
            && out.contains("hit@1")
            && out.contains("50.00"),
        "{out}"
    );

    // The name@k vocabulary: each metric at its own cut-off, in the table and the JSON.
    let o = tailrank(&[
        "--results",
        p(&r),
        "--gt",
        p(&gt),
        "--metric",
        "map@3,recall@3,hit@1,map@2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let vals = &v["sets"][0]["values"];
    for (name, want) in [
        ("map@3", 0.2777777777777778),
        ("recall@3", 0.25),
        ("hit@1", 0.5),
        ("map@2", 0.25),
    ] {
        assert!(
            (vals[name].as_f64().unwrap() - want).abs() < 1e-12,
            "{name}: {vals}"
        );
    }
    assert!(
        (v["sets"][0]["queries"][0]["values"]["map@3"]
            .as_f64()
            .unwrap()
            - 0.5555555555555556)
            .abs()
            < 1e-12
    );
    let o = tailrank(&[
        "--results",
        p(&r),
        "--gt",
        p(&gt),
        "--metric",
        "map@3,map@2",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("mAP@3") && out.contains("27.78") && out.contains("mAP@2"),
        "{out}"
    );
    let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--metric", "mrr@10"]);
    assert!(
        !o.status.success() && stderr(&o).contains("unknown metric"),
        "{}",
        stderr(&o)
    );

    let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--k", "2", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["k"], 2);
    assert_eq!(v["unit"], "fraction");
    let set = &v["sets"][0];
    assert_eq!(set["name"], "queries");
    assert!((set["map_at_k"].as_f64().unwrap() - 0.25).abs() < 1e-12);
    assert_eq!(set["queries"][0]["query"], "q");
    assert!((set["queries"][0]["ap_at_k"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(set["queries"][0]["n_results"], 6);
    // The stray query, and "empty" listing 1 item of k = 2 without its positive.
    let warnings = v["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].as_str().unwrap().contains("fewer than k = 2"));
}

/// `--protocol`: revisited mAP per protocol from a results file and a revisited ground truth
/// (the formula is checked against revisitop in `tailrank/tests/protocols_reference.rs`).
#[test]
fn revisited_protocols_from_the_cli() {
    let d = tempfile::tempdir().unwrap();
    let gt = d.path().join("gnd.json");
    let r = d.path().join("r.json");
    // q: easy a, hard c, junk b. Ranking a b c d. Easy: a at 0 → 1. Medium (junk b removed):
    // a at 0, c at 1 → 1. Hard (junk b, a removed): c at 0 → 1.
    fs::write(
        &gt,
        r#"{"q": {"easy": ["a"], "hard": ["c"], "junk": ["b"]}}"#,
    )
    .unwrap();
    fs::write(&r, r#"{"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}}"#).unwrap();
    let o = tailrank(&[
        "--results",
        p(&r),
        "--gt",
        p(&gt),
        "--protocol",
        "easy,medium,hard",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("easy") && out.contains("hard") && out.contains("100.00"),
        "{out}"
    );
    // d ranked above c: Hard AP = (½·(1 + ½))... c at junk-free 1: p0 = 0/1, p1 = 1/2 → 0.25.
    fs::write(&r, r#"{"q": {"a": 0.9, "b": 0.8, "d": 0.75, "c": 0.7}}"#).unwrap();
    let o = tailrank(&[
        "--results",
        p(&r),
        "--gt",
        p(&gt),
        "--protocol",
        "hard",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        (v["protocols"][0]["map"].as_f64().unwrap() - 0.25).abs() < 1e-12,
        "{v}"
    );
    let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--protocol", "extreme"]);
    assert!(!o.status.success() && stderr(&o).contains("unknown protocol"));
}

#[test]
fn missing_query_is_an_error_or_an_explicit_zero() {
    let d = tempfile::tempdir().unwrap();
    let gt = d.path().join("gt.json");
    let r = d.path().join("r.json");
    fs::write(&gt, r#"{"q": ["a", "c", "f", "z"], "absent/q": ["zz"]}"#).unwrap();
    fs::write(&r, RESULTS).unwrap();
    let o = tailrank(&["--results", p(&r), "--gt", p(&gt)]);
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Mismatch.exit_code())
    );
    let e = stderr(&o);
    assert!(
        e.contains("absent/q") && e.contains("r.json") && e.contains("missing-as-zero policy"),
        "{e}"
    );

    let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--missing-as-zero"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("27.08") && out.contains("1 missing counted as 0"),
        "{out}"
    );
    let o = tailrank(&[
        "--results",
        p(&r),
        "--gt",
        p(&gt),
        "--missing-as-zero",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["sets"][0]["n_missing"], 1);
    assert_eq!(v["sets"][0]["queries"][1]["missing"], true);
}

#[test]
fn bad_inputs_give_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let gt = d.path().join("gt.json");
    let r = d.path().join("r.json");
    fs::write(&gt, r#"{"q": ["a"]}"#).unwrap();
    fs::write(&r, r#"{"q": {"a": 0.5, "b": NaN}}"#).unwrap();
    let o = tailrank(&["--results", p(&r), "--gt", p(&gt)]);
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Input.exit_code())
    );
    let e = stderr(&o);
    assert!(
        e.contains("r.json") && e.contains("\"b\"") && e.contains("NaN"),
        "{e}"
    );

    let o = tailrank(&["--results", p(&r)]);
    assert!(!o.status.success() && stderr(&o).contains("--gt"));
    let o = tailrank(&[]);
    assert!(!o.status.success() && stderr(&o).contains("--summary"));
    let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--metric", "ndcg"]);
    assert!(!o.status.success() && stderr(&o).contains("ndcg"));
    let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--k", "0"]);
    assert!(!o.status.success() && stderr(&o).contains("k must be"));
    let missing = d.path().join("missing_gt");
    let o = tailrank(&["--results", p(&r), "--gt", p(&missing)]);
    assert!(!o.status.success() && stderr(&o).contains("missing_gt"));
}

/// The official ILIAS evaluator's `_compute_AP` (stable argsort), per query set.
const OFFICIAL: &str = r#"
import json, sys
import numpy as np
from sklearn.metrics import average_precision_score
d, sims = sys.argv[1], json.load(open(sys.argv[2]))
def ids(name):
    return [l.split(",")[0].strip() for l in open(f"{d}/image_ids/{name}") if l.strip()]
gt = {}
for p in ids("positive_ids.txt"):
    gt.setdefault(p.split("/")[0], set()).add(p)
out = {}
for k, name, f in [(int(k), n, f) for k in sys.argv[3].split(",")
                   for n, f in [("image", "image_query_ids.txt"), ("text", "text_query_ids.txt")]]:
    aps = []
    for q in ids(f):
        g = gt[q.split("/")[0]]
        db = np.array(list(sims[q].keys()), dtype=object)
        s = np.array(list(sims[q].values()), dtype=np.float64)
        order = np.argsort(-s, kind="stable")
        y_true = np.isin(db[order][:k], list(g))
        if not y_true.any():
            aps.append(0.0); continue
        ap = average_precision_score(y_true, s[order][:k])
        aps.append(ap * y_true.sum() / min(k, len(g)))
    out.setdefault(str(k), {})[name] = float(np.mean(aps))
print(json.dumps(out))
"#;

#[test]
fn ilias_layout_matches_official_per_query_set() {
    let d = tempfile::tempdir().unwrap();
    let ids = d.path().join("image_ids");
    fs::create_dir_all(&ids).unwrap();
    let mut state = 12345u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let n_inst = 12;
    let mut pos_lines = String::new();
    let mut positives: Vec<Vec<String>> = Vec::new();
    for i in 0..n_inst {
        let n = 1 + next() % 6;
        let ps: Vec<String> = (0..n).map(|j| format!("inst{i}/pos{j}.jpg")).collect();
        for p in &ps {
            pos_lines.push_str(&format!(
                "{p},{:.3},{}\n",
                (next() % 1000) as f64 / 1000.0,
                next() % 60
            ));
        }
        positives.push(ps);
    }
    let img: Vec<String> = (0..20)
        .map(|q| format!("inst{}/query{q}.jpg", q % n_inst))
        .collect();
    let txt: Vec<String> = (0..n_inst).map(|i| format!("inst{i}/text")).collect();
    fs::write(ids.join("positive_ids.txt"), pos_lines).unwrap();
    fs::write(
        ids.join("image_query_ids.txt"),
        img.iter()
            .map(|q| format!("{q},0.1,5\n"))
            .collect::<String>(),
    )
    .unwrap();
    fs::write(
        ids.join("text_query_ids.txt"),
        txt.iter().map(|q| format!("{q}\n")).collect::<String>(),
    )
    .unwrap();
    // Results: every query scores all positives of all instances plus distractors, coarse
    // scores (ties), in random file order.
    let mut res = serde_json::Map::new();
    for q in img.iter().chain(&txt) {
        let mut m = serde_json::Map::new();
        for p in positives.iter().flatten() {
            m.insert(p.clone(), serde_json::json!((next() % 50) as f64 / 50.0));
        }
        for j in 0..40 {
            m.insert(
                format!("yfcc/{j}"),
                serde_json::json!((next() % 50) as f64 / 50.0),
            );
        }
        res.insert(q.clone(), serde_json::Value::Object(m));
    }
    let r = d.path().join("results.json");
    fs::write(&r, serde_json::to_string(&res).unwrap()).unwrap();

    let py = common::run_python(OFFICIAL, &[p(d.path()), p(&r), "5,1000"]);
    let official: serde_json::Value = serde_json::from_str(&py).unwrap();
    for k in [5usize, 1000] {
        let o = tailrank(&[
            "--results",
            p(&r),
            "--gt",
            p(d.path()),
            "--k",
            &k.to_string(),
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let want = &official[k.to_string()];
        let sets = v["sets"].as_array().unwrap();
        assert_eq!(sets.len(), 2);
        for s in sets {
            let name = s["name"].as_str().unwrap();
            let got = s["map_at_k"].as_f64().unwrap();
            let exp = want[name].as_f64().unwrap();
            assert!(
                (got - exp).abs() < 1e-9,
                "{name} mAP@{k}: {got} vs official {exp}"
            );
        }
        let o = tailrank(&[
            "--results",
            p(&r),
            "--gt",
            p(d.path()),
            "--k",
            &k.to_string(),
        ]);
        let out = stdout(&o);
        assert!(out.contains("image") && out.contains("text"), "{out}");
        assert!(
            out.contains(&format!("{:.2}", 100.0 * want["image"].as_f64().unwrap())),
            "{out}"
        );
    }

    // An image-only results file: the text set is skipped with a warning, unless asked for.
    let image_only: serde_json::Map<String, serde_json::Value> = res
        .iter()
        .filter(|(q, _)| img.contains(q))
        .map(|(q, v)| (q.clone(), v.clone()))
        .collect();
    let r2 = d.path().join("image_only.json");
    fs::write(&r2, serde_json::to_string(&image_only).unwrap()).unwrap();
    let image_only = |extra: &[&str]| {
        let gt = p(d.path());
        tailrank(&[&["--results", p(&r2), "--gt", gt][..], extra].concat())
    };
    let o = image_only(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("image") && !stdout(&o).contains("text"));
    assert!(
        stderr(&o).contains("\"text\" has results; set skipped"),
        "{}",
        stderr(&o)
    );
    let o = image_only(&["--set", "text"]);
    assert!(
        !o.status.success() && stderr(&o).contains("inst0/text"),
        "{}",
        stderr(&o)
    );
    let o = image_only(&["--set", "image", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["sets"].as_array().unwrap().len(), 1);
    // Chosen by name among several, the uncovered set is not skipped: its queries are missing.
    let o = image_only(&["--set", "image,text"]);
    assert!(
        !o.status.success() && stderr(&o).contains("inst0/text"),
        "{}",
        stderr(&o)
    );
    let o = image_only(&["--set", "image,text", "--missing-as-zero"]);
    assert!(
        o.status.success() && stdout(&o).contains("text"),
        "{}",
        stderr(&o)
    );
    let o = image_only(&["--set", "video"]);
    assert!(
        !o.status.success() && stderr(&o).contains("video"),
        "{}",
        stderr(&o)
    );
}

/// `--summary`: a whole-pool summary written to disk gives the same numbers as the full ranked
/// lists; a sampled summary is refused; `--gt` checks the summary's queries.
#[test]
fn summary_counts_match_results() {
    use tailrank::sample::HashRange;
    use tailrank::summary::{
        PositiveSummary, QuerySummary, Subset, SubsetKind, Summary, SUMMARY_FORMAT_VERSION,
    };
    let d = tempfile::tempdir().unwrap();
    let mut state = 99u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    // Distinct scores: a shuffled set of multiples of 1/4096 (no ties at all).
    let pool_n = 300usize;
    let mut gt = serde_json::Map::new();
    let mut res = serde_json::Map::new();
    let mut queries = Vec::new();
    for qi in 0..6 {
        let n_pos = 1 + (next() % 5) as usize;
        let n_core = (next() % 10) as usize;
        let mut vals: Vec<u32> = (0..4096).collect();
        for i in (1..vals.len()).rev() {
            vals.swap(i, next() as usize % (i + 1));
        }
        let sc = |v: u32| v as f32 / 4096.0;
        let pos: Vec<f32> = vals[..n_pos].iter().map(|&v| sc(v)).collect();
        let core: Vec<f32> = vals[n_pos..n_pos + n_core].iter().map(|&v| sc(v)).collect();
        let pool: Vec<f32> = vals[n_pos + n_core..n_pos + n_core + pool_n]
            .iter()
            .map(|&v| sc(v))
            .collect();
        let q = format!("q{qi}");
        let pids: Vec<String> = (0..n_pos).map(|j| format!("{q}/p{j}")).collect();
        gt.insert(q.clone(), serde_json::json!(pids));
        let mut m = serde_json::Map::new();
        for (i, s) in pool.iter().enumerate() {
            m.insert(format!("pool{i}"), serde_json::json!(*s as f64));
        }
        for (i, s) in core.iter().enumerate() {
            m.insert(format!("core{i}"), serde_json::json!(*s as f64));
        }
        let mut ps: Vec<PositiveSummary> = Vec::new();
        for (id, s) in pids.iter().zip(&pos) {
            m.insert(id.clone(), serde_json::json!(*s as f64));
            ps.push(PositiveSummary {
                core_ties: 0,
                pool_ties: Vec::new(),
                id: id.clone(),
                score: *s,
                core_above: core.iter().filter(|&&c| c > *s).count() as u64,
                pool_above: vec![pool.iter().filter(|&&c| c > *s).count() as u64],
            });
        }
        ps.sort_by(|a, b| b.score.total_cmp(&a.score));
        let mut top = pool.clone();
        top.sort_by(|a, b| b.total_cmp(a));
        res.insert(q.clone(), serde_json::Value::Object(m));
        queries.push(QuerySummary {
            id: q,
            positives: ps,
            top_scores: vec![top],
        });
    }
    let gt_path = d.path().join("gt.json");
    let r_path = d.path().join("r.json");
    fs::write(&gt_path, serde_json::to_string(&gt).unwrap()).unwrap();
    fs::write(&r_path, serde_json::to_string(&res).unwrap()).unwrap();
    let mut s = Summary {
        format_version: SUMMARY_FORMAT_VERSION,
        tool_version: tailrank::TOOL_VERSION.to_string(),
        model: "m".into(),
        query_set: "queries".into(),
        pool_size: Some(pool_n as u64),
        fraction: 1.0,
        seed: 7,
        top_m: 4000,
        core_size: 20,
        subsets: vec![Subset {
            kind: SubsetKind::Level,
            fraction: 1.0,
            range: HashRange::fraction(1.0).unwrap(),
            top_m: None,
        }],
        subset_sizes: vec![pool_n as u64],
        queries,
        inputs: vec![],
        pool_id_hashes: None,
        ties_known: true,
    };
    let s_path = d.path().join("summary");
    s.write(&s_path).unwrap();

    for k in ["1", "10", "1000"] {
        let a = tailrank(&[
            "--summary",
            p(&s_path),
            "--gt",
            p(&gt_path),
            "--k",
            k,
            "--json",
        ]);
        assert!(a.status.success(), "{}", stderr(&a));
        let b = tailrank(&[
            "--results",
            p(&r_path),
            "--gt",
            p(&gt_path),
            "--k",
            k,
            "--json",
        ]);
        assert!(b.status.success(), "{}", stderr(&b));
        let va: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
        let vb: serde_json::Value = serde_json::from_str(&stdout(&b)).unwrap();
        assert_eq!(va["source"], "summary");
        for f in [
            "map_at_k",
            "gldv2_map_at_100",
            "map_full",
            "recall_at_k",
            "hit_at_1",
        ] {
            let (x, y) = (
                va["sets"][0][f].as_f64().unwrap(),
                vb["sets"][0][f].as_f64().unwrap(),
            );
            assert!((x - y).abs() < 1e-12, "{f}@{k}: summary {x} vs results {y}");
        }
    }
    // Without --gt: every summary query.
    let a = tailrank(&["--summary", p(&s_path)]);
    assert!(
        a.status.success() && stdout(&a).contains("queries"),
        "{}",
        stderr(&a)
    );

    // A ground truth with a query the summary lacks.
    let mut gt2 = gt.clone();
    gt2.insert("q_extra".into(), serde_json::json!(["x"]));
    let gt2_path = d.path().join("gt2.json");
    fs::write(&gt2_path, serde_json::to_string(&gt2).unwrap()).unwrap();
    let a = tailrank(&["--summary", p(&s_path), "--gt", p(&gt2_path)]);
    assert!(
        !a.status.success() && stderr(&a).contains("q_extra"),
        "{}",
        stderr(&a)
    );
    let a = tailrank(&[
        "--summary",
        p(&s_path),
        "--gt",
        p(&gt2_path),
        "--missing-as-zero",
    ]);
    assert!(
        a.status.success() && stdout(&a).contains("1 missing"),
        "{}",
        stderr(&a)
    );

    // A sampled summary is refused.
    s.fraction = 0.5;
    s.pool_size = Some(2 * pool_n as u64);
    s.subsets[0].fraction = 0.5;
    s.subsets[0].range = HashRange::fraction(0.5).unwrap();
    let s2 = d.path().join("sampled");
    s.write(&s2).unwrap();
    let a = tailrank(&["--summary", p(&s2)]);
    assert!(
        !a.status.success() && stderr(&a).contains("predict"),
        "{}",
        stderr(&a)
    );
    // --results and --summary together.
    let a = tailrank(&["--summary", p(&s2), "--results", p(&r_path)]);
    assert!(!a.status.success());
}

/// Descriptors with continuous scores (no ties), an ILIAS-layout ground truth.
const SCAN_INPUTS: &str = r#"
import sys, os
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
D = 16
def unit(X):
    X = X.astype(np.float32)
    return X / np.linalg.norm(X, axis=1, keepdims=True)
def save(name, X, ids):
    np.save(os.path.join(d, name + ".npy"), unit(X))
    open(os.path.join(d, name + ".ids.txt"), "w").write("\n".join(ids) + "\n")
I = 8
base = rng.standard_normal((I, D))
# `core` is defined after the positives below and saved with them.
qids, Q, pids, P = [], [], [], []
for i in range(I):
    for a in range(2):
        qids.append(f"inst{i}/q{a}.jpg"); Q.append(base[i] + rng.standard_normal(D) * 0.6)
    for b in range(1 + i % 4):
        pids.append(f"inst{i}/p{b}.jpg"); P.append(base[i] + rng.standard_normal(D) * rng.uniform(0.3, 2.0))
save("queries", np.array(Q), qids)
core = np.vstack([np.array(P), rng.standard_normal((20, D))])
pool = rng.standard_normal((400, D))
if len(sys.argv) > 2 and sys.argv[2] == "dup":
    # Bitwise copies of every core item in the pool (twice each), shuffled among the others:
    # exact ties between a positive and non-relevant items (issue 44).
    pool = np.vstack([pool, core, core])[rng.permutation(400 + 2 * len(core))]
save("core", core, pids + [f"other/{j}" for j in range(20)])
save("pool", pool, [f"yfcc/{j}" for j in range(len(pool))])
gt = os.path.join(d, "gt"); os.makedirs(gt)
open(os.path.join(gt, "image_query_ids.txt"), "w").write("\n".join(qids) + "\n")
open(os.path.join(gt, "positive_ids.txt"), "w").write("\n".join(pids) + "\n")
"#;

/// End to end: `tailrank scan --results-out` then `tailrank eval` on the results and on the
/// summary's counts give the same metrics (the whole gallery fits in the top-k list).
#[test]
fn scan_then_eval_results_equal_counts() {
    scan_then_eval(&[], &[], "1000", &["1", "5", "1000"]);
}

/// Regression (issue 44): with bitwise copies of core items in the pool, the results JSON put
/// each positive before its tied copies while the summary counts non-relevant items first
/// (eval gave mAP@1 66.67 against 25.00). The results now order each tie block as the summary
/// counts it, also at the results' own cut (k = 10) and across chunks.
#[test]
fn scan_with_duplicated_core_items_results_equal_counts() {
    scan_then_eval(&["dup"], &[], "1000", &["1", "10", "1000"]);
    scan_then_eval(&["dup"], &[], "10", &["1", "10"]);
    scan_then_eval(&["dup"], &["--chunk-rows", "100"], "10", &["1", "10"]);
}

/// Scan the [`SCAN_INPUTS`] (`variant` passed to it) with `--results-out --k results_k`, then
/// check that `eval --results` equals `eval --summary` for every query at each cut-off `ks`.
fn scan_then_eval(variant: &[&str], extra: &[&str], results_k: &str, ks: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut args = vec![p(d)];
    args.extend_from_slice(variant);
    common::run_python(SCAN_INPUTS, &args);
    let s = d.join("summary");
    let r = d.join("results.json");
    let gt = d.join("gt");
    let o = Command::new(tailrank_test_support::cli::bin())
        .args(["scan", "--queries", p(&d.join("queries.npy")), "--core"])
        .args([
            p(&d.join("core.npy")),
            "--gt",
            p(&gt),
            "--pool",
            p(&d.join("pool.npy")),
        ])
        .args([
            "-o",
            p(&s),
            "--results-out",
            p(&r),
            "--k",
            results_k,
            "--top-m",
            "50",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "scan: {}", stderr(&o));
    let mut tied = 0;
    for &k in ks {
        let a = tailrank(&["--summary", p(&s), "--gt", p(&gt), "--k", k, "--json"]);
        let b = tailrank(&["--results", p(&r), "--gt", p(&gt), "--k", k, "--json"]);
        assert!(a.status.success(), "{}", stderr(&a));
        assert!(b.status.success(), "{}", stderr(&b));
        let va: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
        let vb: serde_json::Value = serde_json::from_str(&stdout(&b)).unwrap();
        tied += va["sets"][0]["tied_pairs"].as_u64().unwrap();
        // Both say when a tie block at the cut decides the value (the list sees the block
        // past k only when it was written beyond k).
        let warns = |v: &serde_json::Value| {
            v["warnings"].as_array().is_some_and(|w| {
                w.iter()
                    .any(|w| w.as_str().unwrap_or("").contains("tie block"))
            })
        };
        if k.parse::<usize>().unwrap() < results_k.parse::<usize>().unwrap() {
            assert_eq!(
                warns(&va),
                warns(&vb),
                "k {k}: {} / {}",
                va["warnings"],
                vb["warnings"]
            );
        }
        let (qa, qb) = (&va["sets"][0]["queries"], &vb["sets"][0]["queries"]);
        assert_eq!(qa.as_array().unwrap().len(), 16);
        for (x, y) in qa.as_array().unwrap().iter().zip(qb.as_array().unwrap()) {
            assert_eq!(x["query"], y["query"]);
            let mut fields = vec!["ap_at_k", "recall_at_k", "hit_at_1"];
            if results_k == "1000" {
                // Over the whole list: needs every item, not only the top results_k.
                fields.extend(["gldv2_ap_at_100", "ap_full"]);
            }
            for f in fields {
                let (u, v) = (x[f].as_f64().unwrap(), y[f].as_f64().unwrap());
                assert!(
                    (u - v).abs() < 1e-12,
                    "{} {f}@{k}: counts {u} vs list {v}",
                    x["query"]
                );
            }
        }
    }
    assert_eq!(tied > 0, !variant.is_empty(), "tie pairs: {tied}");
}

/// Issue 44: where AP@k depends on the order inside a tie block at the cut (the block holds
/// relevant and non-relevant items and goes on past rank k), `eval` warns, naming the query;
/// the file's order is used (stable sort).
#[test]
fn eval_warns_when_a_tie_block_at_the_cut_decides() {
    let d = tempfile::tempdir().unwrap();
    let gt = d.path().join("gt.json");
    let r = d.path().join("r.json");
    fs::write(&gt, r#"{"q": ["r"], "u": ["r"]}"#).unwrap();
    fs::write(
        &r,
        r#"{"q": {"n": 0.5, "r": 0.5, "x": 0.1}, "u": {"r": 0.9, "n": 0.5, "x": 0.5}}"#,
    )
    .unwrap();
    for (k, warned, map) in [
        ("1", true, "50.00"),
        ("2", false, "75.00"),
        ("3", false, "75.00"),
    ] {
        let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--k", k]);
        assert!(o.status.success(), "{}", stderr(&o));
        let (out, err) = (stdout(&o), stderr(&o));
        // Only "q" has a mixed block at the cut k = 1 ({n, r}); "u"'s tie block is all
        // non-relevant.
        assert_eq!(
            err.contains("tie block straddles the cut"),
            warned,
            "k = {k}: {err}"
        );
        if warned {
            assert!(err.contains("1 query") && err.contains("\"q\""), "{err}");
        }
        assert!(out.contains(map), "k = {k}: {out}");
    }
    // The cut-offs checked are those of the printed columns: a named metric's, not k's.
    for (metrics, warned) in [("map@1", true), ("map@2,recall@3", false), ("hit@1", true)] {
        let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--metric", metrics]);
        let err = stderr(&o);
        let at_1 = err.contains("straddles the cut at k = 1 ");
        assert!(o.status.success() && at_1 == warned, "{metrics}: {err}");
        assert!(!err.contains("k = 1000"), "{metrics}: {err}");
    }
    // Two metrics at one cut (hit@1, map@1): the query is named once, in one warning.
    let o = tailrank(&[
        "--results",
        p(&r),
        "--gt",
        p(&gt),
        "--metric",
        "hit@1,map@1",
    ]);
    let err = stderr(&o);
    assert_eq!(
        err.matches("straddles the cut at k = 1 ").count(),
        1,
        "{err}"
    );
    assert!(err.contains(r#"1 query (first: ["q"])"#), "{err}");
    // Each query is named at its own cut: q1's block straddles 3, q2's 1.
    let (gt2, r2) = (d.path().join("gt2.json"), d.path().join("r2.json"));
    fs::write(&gt2, r#"{"q1": ["d"], "q2": ["f"]}"#).unwrap();
    let lists = r#"{"q1": {"a": 0.9, "b": 0.8, "c": 0.5, "d": 0.5}, "q2": {"e": 0.9, "f": 0.9}}"#;
    fs::write(&r2, lists).unwrap();
    let o = tailrank(&[
        "--results",
        p(&r2),
        "--gt",
        p(&gt2),
        "--metric",
        "map@3,hit@1",
    ]);
    let err = stderr(&o);
    assert!(
        err.contains(r#"(first: ["q1"]) a tie block straddles the cut at k = 3"#),
        "{err}"
    );
    assert!(
        err.contains(r#"(first: ["q2"]) a tie block straddles the cut at k = 1"#),
        "{err}"
    );
    // The full AP counts a positive missing from any list: warned (whatever the list's
    // length), not at map@1's cut of 1.
    let gt3 = d.path().join("gt3.json");
    fs::write(&gt3, r#"{"q1": ["d", "zz"], "q2": ["f"]}"#).unwrap();
    for (metrics, warned) in [("ap,map@1", true), ("map@1", false)] {
        let o = tailrank(&["--results", p(&r2), "--gt", p(&gt3), "--metric", metrics]);
        let err = stderr(&o);
        assert_eq!(
            err.contains("with a positive not listed"),
            warned,
            "{metrics}: {err}"
        );
    }
    // A list of k = 1000 items cut by the search: the full AP is warned, mAP@1000 is not.
    let items: Vec<String> = std::iter::once("\"a\": 2.0".to_string())
        .chain((0..999).map(|i| format!("\"x{i}\": {}", 1.0 - i as f64 * 1e-4)))
        .collect();
    let long = d.path().join("long.json");
    fs::write(&long, format!("{{\"q1\": {{{}}}}}", items.join(", "))).unwrap();
    let gt_ab = d.path().join("gt_ab.json");
    fs::write(&gt_ab, r#"{"q1": ["a", "b"]}"#).unwrap();
    for (metric, warned) in [("ap", true), ("map@1000", false)] {
        let o = tailrank(&["--results", p(&long), "--gt", p(&gt_ab), "--metric", metric]);
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        assert_eq!(
            err.contains("with a positive not listed"),
            warned,
            "{metric}: {err}"
        );
    }
}

/// A list shorter than k that misses a positive (a search cut at 100 scored at k = 1000) is
/// scored as the official evaluator scores it, the positive not retrieved, with a warning naming
/// the query; a short list holding every positive, or one of k items or more, is not warned.
#[test]
fn eval_warns_when_a_short_list_misses_a_positive() {
    let d = tempfile::tempdir().unwrap();
    let gt = d.path().join("gt.json");
    let r = d.path().join("r.json");
    fs::write(&gt, r#"{"q1": ["a", "b"], "q2": ["c"]}"#).unwrap();
    fs::write(&r, r#"{"q1": {"a": 0.9, "x": 0.5}, "q2": {"c": 0.8}}"#).unwrap();
    for (k, warned) in [("1000", true), ("3", true), ("2", false), ("1", false)] {
        let o = tailrank(&["--results", p(&r), "--gt", p(&gt), "--k", k]);
        assert!(o.status.success(), "{}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.contains("fewer than k"), warned, "k = {k}: {err}");
        if warned {
            assert!(err.contains("1 query") && err.contains("\"q1\""), "{err}");
            assert!(!err.contains("\"q2\""), "{err}");
        }
        // q1: AP@k = 1/2 (b never retrieved; at k = 1, 1/min(2, 1) = 1), q2: 1.
        let expect = if k == "1" { "100.00" } else { "75.00" };
        assert!(stdout(&o).contains(expect), "k = {k}: {}", stdout(&o));
    }
}

/// A revisited ground truth that leaves nothing to score (no query with a positive under any
/// asked protocol) or mixes the two spellings of the easy list is refused; a metric named
/// twice (`map@1,map@1`, `hit@1,HIT@1`) is one column.
#[test]
fn revisited_truth_with_nothing_to_score_and_metrics_named_twice() {
    let d = tempfile::tempdir().unwrap();
    let (gt, r) = (d.path().join("gnd.json"), d.path().join("r.json"));
    fs::write(&r, r#"{"q": {"a": 0.9, "b": 0.8, "c": 0.7}}"#).unwrap();
    let run = |gnd: &str| {
        fs::write(&gt, gnd).unwrap();
        tailrank(&[
            "--results",
            p(&r),
            "--gt",
            p(&gt),
            "--protocol",
            "easy,hard",
        ])
    };
    let o = run(r#"{"q": {"easy": [], "hard": [], "junk": ["a"]}}"#);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stderr(&o).contains("nothing to score"), "{}", stderr(&o));
    let o = run(r#"{"q": {"easy": ["a"], "ok": ["b"], "hard": [], "junk": []}}"#);
    assert!(stderr(&o).contains("two spellings"), "{}", stderr(&o));
    // One protocol with a positive is enough.
    let o = run(r#"{"q": {"easy": ["a"], "hard": [], "junk": []}}"#);
    assert!(o.status.success(), "{}", stderr(&o));

    let g = d.path().join("g.json");
    fs::write(&g, r#"{"q": ["a", "c"]}"#).unwrap();
    for metrics in ["map@1,map@1", "hit@1,HIT@1"] {
        let o = tailrank(&["--results", p(&r), "--gt", p(&g), "--metric", metrics]);
        let header = stdout(&o).lines().next().unwrap_or_default().to_string();
        let first = metrics.split(',').next().unwrap().replace("map", "mAP");
        assert_eq!(header.matches(&first).count(), 1, "{metrics}: {header}");
    }
}
