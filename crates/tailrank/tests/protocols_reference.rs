//! Other benchmarks' AP against their public reference logic, replicated in Python:
//! revisited Oxford/Paris `compute_ap` / `compute_map` (junk removal, Easy/Medium/Hard, queries
//! without positives left out), INSTRE (the same AP without junk), and the GLDv2 Kaggle
//! mAP@100 (`MeanAveragePrecision`: divisor min(#relevant, 100), repeated predictions use a
//! rank but earn nothing).

use tailrank_test_support::python as common;

use serde_json::Value;
use std::collections::HashSet;
use tailrank::formats::results::read_results;
use tailrank::metric::gldv2_ap_at_k;
use tailrank::metric::MissingPolicy;
use tailrank::protocols::{
    ap_from_counts, ap_ranked, counts_from_scores, evaluate_revisited, map_ranked,
    read_revisited_gt, Protocol, RevisitedGt,
};

const REVISITOP: &str = r#"
import json
import numpy as np

rng = np.random.default_rng(77)
n_db, n_q = 300, 10

def compute_ap(ranks, nres):
    # revisitop: trapezoidal AP over the junk-free positions of the positives.
    ap = 0.0
    step = 1.0 / nres
    for j, rank in enumerate(ranks):
        p0 = 1.0 if rank == 0 else float(j) / rank
        p1 = float(j + 1) / (rank + 1)
        ap += (p0 + p1) * step / 2.0
    return ap

def compute_map(ranks, gnd):
    # ranks: n_db x n_q database indices sorted per query; gnd: [{ok, junk}].
    m, nempty, aps = 0.0, 0, []
    for i in range(ranks.shape[1]):
        qgnd = np.array(gnd[i]["ok"])
        if qgnd.shape[0] == 0:
            aps.append(float("nan")); nempty += 1; continue
        qgndj = np.array(gnd[i]["junk"]) if len(gnd[i]["junk"]) else np.empty(0)
        pos = np.arange(ranks.shape[0])[np.isin(ranks[:, i], qgnd)]
        junk = np.arange(ranks.shape[0])[np.isin(ranks[:, i], qgndj)]
        k, ij = 0, 0
        if len(junk):
            ip = 0
            while ip < len(pos):
                while ij < len(junk) and pos[ip] > junk[ij]:
                    k += 1; ij += 1
                pos[ip] = pos[ip] - k
                ip += 1
        ap = compute_ap(pos, len(qgnd))
        aps.append(ap); m += ap
    return m / (ranks.shape[1] - nempty), aps

sim = rng.standard_normal((n_db, n_q)).astype(np.float32)
gt = []
for q in range(n_q):
    perm = rng.permutation(n_db)
    ne, nh, nj = rng.integers(1, 12), (0 if q == 3 else rng.integers(1, 12)), rng.integers(0, 15)
    if q == 5:
        ne = 0
    e, h, j = perm[:ne], perm[ne:ne + nh], perm[ne + nh:ne + nh + nj]
    # positives score higher on average
    sim[e, q] += 1.5; sim[h, q] += 0.8; sim[j, q] += 1.0
    gt.append({"easy": e.tolist(), "hard": h.tolist(), "junk": j.tolist()})
ranks = np.argsort(-sim, axis=0)
out = {"sim": sim.T.tolist(), "ranks": ranks.T.tolist(), "gt": [
    {k: [f"db{x}" for x in v] for k, v in g.items()} for g in gt]}
for name in ["easy", "medium", "hard"]:
    gnd = []
    for g in gt:
        if name == "easy":
            gnd.append({"ok": g["easy"], "junk": g["junk"] + g["hard"]})
        elif name == "medium":
            gnd.append({"ok": g["easy"] + g["hard"], "junk": g["junk"]})
        else:
            gnd.append({"ok": g["hard"], "junk": g["junk"] + g["easy"]})
    m, aps = compute_map(ranks, gnd)
    out[name] = {"map": m, "aps": [None if a != a else a for a in aps]}
# INSTRE: positives only, no junk.
gnd = [{"ok": g["easy"] + g["hard"], "junk": []} for g in gt]
m, aps = compute_map(ranks, gnd)
out["plain_nojunk"] = {"map": m, "aps": [None if a != a else a for a in aps]}
print(json.dumps(out))
"#;

#[test]
fn revisited_protocols_match_revisitop() {
    let r: Value = serde_json::from_str(&common::run_python(REVISITOP, &[])).unwrap();
    let sims: Vec<Vec<f32>> = serde_json::from_value(r["sim"].clone()).unwrap();
    let ranks: Vec<Vec<usize>> = serde_json::from_value(r["ranks"].clone()).unwrap();
    let gts: Vec<RevisitedGt> = serde_json::from_value(r["gt"].clone()).unwrap();
    let names: Vec<String> = (0..sims[0].len()).map(|i| format!("db{i}")).collect();
    // The JSON ground truth reader gives the same lists (queries sorted by id).
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("gnd.json");
    let obj: serde_json::Map<String, Value> = gts
        .iter()
        .enumerate()
        .map(|(i, g)| (format!("q{i:02}"), serde_json::to_value(g).unwrap()))
        .collect();
    std::fs::write(&path, serde_json::to_vec(&obj).unwrap()).unwrap();
    let read = read_revisited_gt(&path).unwrap();
    assert_eq!(read.len(), gts.len());
    for (i, (q, g)) in read.iter().enumerate() {
        assert_eq!(q, &format!("q{i:02}"));
        assert_eq!(g, &gts[i]);
    }
    std::fs::write(&path, br#"{"q": {"easy": ["a"], "junk": ["a"]}}"#).unwrap();
    let e = read_revisited_gt(&path).unwrap_err().to_string();
    assert!(e.contains("gnd.json") && e.contains("twice"), "{e}");
    let ranked: Vec<Vec<&str>> = ranks
        .iter()
        .map(|rk| rk.iter().map(|&i| names[i].as_str()).collect())
        .collect();
    let no_junk: Vec<RevisitedGt> = gts
        .iter()
        .map(|g| RevisitedGt {
            junk: vec![],
            ..g.clone()
        })
        .collect();
    for (key, protocol, gts) in [
        ("easy", Protocol::Easy, &gts),
        ("medium", Protocol::Medium, &gts),
        ("hard", Protocol::Hard, &gts),
        ("plain_nojunk", Protocol::Plain, &no_junk),
    ] {
        let want = &r[key];
        let (m, used) = map_ranked(&ranked, gts, protocol);
        let want_aps = want["aps"].as_array().unwrap();
        assert_eq!(
            used,
            want_aps.iter().filter(|a| !a.is_null()).count(),
            "{key}"
        );
        assert!(
            (m - want["map"].as_f64().unwrap()).abs() < 1e-12,
            "{key}: {m} vs {}",
            want["map"]
        );
        for (q, w) in want_aps.iter().enumerate() {
            let ap = ap_ranked(&ranked[q], &gts[q], protocol);
            // From counts: scores of the positives and of the items neither positive nor junk.
            let (pos, junk) = gts[q].split(protocol);
            let (mut ps, mut os) = (Vec::new(), Vec::new());
            for (i, n) in names.iter().enumerate() {
                if pos.contains(n.as_str()) {
                    ps.push(sims[q][i]);
                } else if !junk.contains(n.as_str()) {
                    os.push(sims[q][i]);
                }
            }
            let from_counts = ap_from_counts(&counts_from_scores(&ps, &os));
            match w.as_f64() {
                None => assert!(ap.is_nan() && from_counts.is_nan(), "{key} q{q}"),
                Some(w) => {
                    assert!((ap - w).abs() < 1e-12, "{key} q{q}: {ap} vs {w}");
                    assert!((from_counts - w).abs() < 1e-12, "{key} q{q} counts");
                }
            }
        }
    }
}

/// `evaluate_revisited` on a results JSON (what `tailrank eval --protocol` runs) gives
/// revisitop's mAP per protocol; a ground-truth query without results is an error naming it,
/// or an empty ranking when missing queries are allowed.
#[test]
fn evaluate_revisited_on_a_results_file_matches_revisitop() {
    let r: Value = serde_json::from_str(&common::run_python(REVISITOP, &[])).unwrap();
    let sims: Vec<Vec<f32>> = serde_json::from_value(r["sim"].clone()).unwrap();
    let gts: Vec<RevisitedGt> = serde_json::from_value(r["gt"].clone()).unwrap();
    let d = tempfile::tempdir().unwrap();
    let gt_path = d.path().join("gnd.json");
    let obj: serde_json::Map<String, Value> = gts
        .iter()
        .enumerate()
        .map(|(i, g)| (format!("q{i:02}"), serde_json::to_value(g).unwrap()))
        .collect();
    std::fs::write(&gt_path, serde_json::to_vec(&obj).unwrap()).unwrap();
    let results: serde_json::Map<String, Value> = sims
        .iter()
        .enumerate()
        .map(|(q, row)| {
            let items: serde_json::Map<String, Value> = row
                .iter()
                .enumerate()
                .map(|(i, &s)| (format!("db{i}"), Value::from(s as f64)))
                .collect();
            (format!("q{q:02}"), Value::Object(items))
        })
        .collect();
    let res_path = d.path().join("results.json");
    std::fs::write(&res_path, serde_json::to_vec(&results).unwrap()).unwrap();
    let res = read_results(&res_path).unwrap();
    let gt = read_revisited_gt(&gt_path).unwrap();
    let protocols = [Protocol::Easy, Protocol::Medium, Protocol::Hard];
    let rep = evaluate_revisited(&res, &gt, &protocols, MissingPolicy::Error).unwrap();
    for (p, key) in rep.protocols.iter().zip(["easy", "medium", "hard"]) {
        let want = r[key]["map"].as_f64().unwrap();
        assert!((p.map - want).abs() < 1e-12, "{key}: {} vs {want}", p.map);
        let want_aps = r[key]["aps"].as_array().unwrap();
        assert_eq!(
            p.n_queries,
            want_aps.iter().filter(|a| !a.is_null()).count()
        );
    }
    assert!(rep.table().contains("medium"));
    // One query without results.
    let mut fewer = results.clone();
    fewer.remove("q04");
    std::fs::write(&res_path, serde_json::to_vec(&fewer).unwrap()).unwrap();
    let res = read_results(&res_path).unwrap();
    let e = evaluate_revisited(&res, &gt, &protocols, MissingPolicy::Error)
        .unwrap_err()
        .to_string();
    assert!(e.contains("results.json") && e.contains("q04"), "{e}");
    let z = evaluate_revisited(&res, &gt, &protocols, MissingPolicy::Zero).unwrap();
    let q4 = &z.protocols[1].queries[4];
    assert!(q4.missing && q4.ap == Some(0.0), "{q4:?}");
    assert!("MEDIUM".parse::<Protocol>().unwrap() == Protocol::Medium);
    assert!("x"
        .parse::<Protocol>()
        .unwrap_err()
        .to_string()
        .contains("easy"));
}

const GLDV2: &str = r#"
import json
import numpy as np

rng = np.random.default_rng(5)

def mean_average_precision(predictions, solution, max_predictions=100):
    # The Kaggle / GLDv2 retrieval metric.
    total = 0.0
    for key, prediction in predictions.items():
        relevant = solution[key]
        expected = min(len(relevant), max_predictions)
        correct, ap, seen = 0, 0.0, set()
        for i in range(min(len(prediction), max_predictions)):
            if prediction[i] not in seen:
                if prediction[i] in relevant:
                    correct += 1
                    ap += correct / (i + 1)
                seen.add(prediction[i])
        total += ap / expected
    return total / len(solution)

preds, sol, per = {}, {}, {}
for q in range(25):
    n_rel = int(rng.integers(1, 130))
    rel = [f"i{x}" for x in rng.choice(400, n_rel, replace=False)]
    # ranked predictions with repeats, longer than 100 for some queries
    lst = [f"i{x}" for x in rng.integers(0, 400, int(rng.integers(5, 160)))]
    preds[f"q{q}"], sol[f"q{q}"] = lst, rel
    per[f"q{q}"] = mean_average_precision({f"q{q}": lst}, {f"q{q}": rel})
print(json.dumps({"preds": preds, "sol": sol, "per": per,
                  "map": mean_average_precision(preds, sol)}))
"#;

#[test]
fn gldv2_map_at_100_matches_the_kaggle_metric() {
    let r: Value = serde_json::from_str(&common::run_python(GLDV2, &[])).unwrap();
    let mut total = 0.0;
    let per = r["per"].as_object().unwrap();
    for (q, want) in per {
        let preds: Vec<String> = serde_json::from_value(r["preds"][q].clone()).unwrap();
        let sol: Vec<String> = serde_json::from_value(r["sol"][q].clone()).unwrap();
        let ranked: Vec<&str> = preds.iter().map(String::as_str).collect();
        let pos: HashSet<&str> = sol.iter().map(String::as_str).collect();
        let ap = gldv2_ap_at_k(&ranked, &pos, sol.len(), 100);
        assert!((ap - want.as_f64().unwrap()).abs() < 1e-12, "{q}");
        total += ap;
    }
    let m = total / per.len() as f64;
    assert!((m - r["map"].as_f64().unwrap()).abs() < 1e-12);
}

/// The revisited ground truth is read key by key: what a JSON map would hide (a query or a list
/// given twice, the last one winning) is refused with the line, as in the plain ground truth;
/// a byte order mark is skipped and the queries come sorted by id.
#[test]
fn revisited_gt_refuses_what_a_map_would_hide() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("gnd.json");
    let read = |text: &[u8]| {
        std::fs::write(&path, text).unwrap();
        read_revisited_gt(&path)
    };
    for (text, says) in [
        (
            &br#"{"q1": {"easy": ["a"]}, "q1": {"easy": ["d"]}}"#[..],
            "duplicate query id \"q1\"",
        ),
        (
            br#"{"q1": {"easy": ["a"], "easy": ["d"]}}"#,
            "list \"easy\" given twice",
        ),
        (
            br#"{"q1": {"ok": ["a"], "easy": ["d"]}}"#,
            "two spellings of one list",
        ),
        (br#"{"q1": {"easy": [""]}}"#, "an empty id in \"easy\""),
        (br#"{"": {"easy": ["a"]}}"#, "an empty query id"),
        (br#"{}"#, "holds no query"),
        (br#"{"q1": {"easy": ["a"]}} x"#, "line 1"),
    ] {
        let e = read(text).unwrap_err().to_string();
        assert!(e.contains("gnd.json") && e.contains(says), "{e}");
    }
    let gt = read(b"\xef\xbb\xbf{\"q2\": {\"hard\": [\"b\"]}, \"q1\": {\"ok\": [\"a\"]}}").unwrap();
    let ids: Vec<&str> = gt.iter().map(|(q, _)| q.as_str()).collect();
    assert_eq!(ids, ["q1", "q2"]);
    assert_eq!(
        (gt[0].1.easy.clone(), gt[1].1.hard.clone()),
        (vec!["a".to_string()], vec!["b".to_string()])
    );
}

/// A protocol asked for twice (`--protocol easy,easy`) is one row.
#[test]
fn a_protocol_named_twice_is_one_row() {
    let d = tempfile::tempdir().unwrap();
    let (gt, res) = (d.path().join("gnd.json"), d.path().join("r.json"));
    std::fs::write(&gt, br#"{"q1": {"easy": ["a"], "hard": ["b"]}}"#).unwrap();
    std::fs::write(&res, br#"{"q1": {"a": 0.9, "b": 0.5, "x": 0.7}}"#).unwrap();
    let (gt, res) = (
        read_revisited_gt(&gt).unwrap(),
        tailrank::formats::results::read_results(&res).unwrap(),
    );
    let protocols = [Protocol::Easy, Protocol::Hard, Protocol::Easy];
    let r = evaluate_revisited(
        &res,
        &gt,
        &protocols,
        tailrank::metric::MissingPolicy::Error,
    )
    .unwrap();
    let names: Vec<Protocol> = r.protocols.iter().map(|p| p.protocol).collect();
    assert_eq!(names, [Protocol::Easy, Protocol::Hard]);
}
