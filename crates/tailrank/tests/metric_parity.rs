//! Parity of the ranked-list metrics with independent references: the official ILIAS evaluator's
//! computation (sklearn `average_precision_score` on the list cut at k, scaled by
//! hits / min(k, n_q)) replicated in Python, the official GLDv2 Kaggle metric, sklearn's full AP
//! and Recall@k, on randomized results WITH TIES, for k in {1, 3, 100, 1000}.

use tailrank_test_support::python as common;

use tailrank::formats::gt::load_ground_truth;
use tailrank::formats::results::{read_results, write_results};
use tailrank::metric::{evaluate_results, MissingPolicy};

/// splitmix64: a tiny seeded generator for test data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The official ILIAS `_compute_AP` logic (evaluation/src/dataset.py), with a *stable* argsort
/// (the tie rule tailrank documents), plus the GLDv2 Kaggle metric, sklearn full AP and recall.
const REFERENCE: &str = r#"
import json, sys
import numpy as np
from sklearn.metrics import average_precision_score

gt = json.load(open(sys.argv[1]))
sims = json.load(open(sys.argv[2]))
ks = [int(x) for x in sys.argv[3].split(",")]

def ilias_ap(ids, scores, positives, k):
    order = np.argsort(-scores, kind="stable")
    top_ids = ids[order][:k]
    y_true = np.isin(top_ids, list(positives))
    y_score = scores[order][:k]
    if not y_true.any():
        return 0.0
    ap = average_precision_score(y_true, y_score)
    return float(ap * y_true.sum() / min(k, len(positives)))

def gldv2_ap(prediction, positives, max_predictions=100):
    ap, num_correct, seen = 0.0, 0, set()
    for i in range(min(len(prediction), max_predictions)):
        if prediction[i] not in seen:
            if prediction[i] in positives:
                num_correct += 1
                ap += num_correct / (i + 1)
            seen.add(prediction[i])
    return ap / min(len(positives), max_predictions)

out = {}
for q, pos in gt.items():
    ids = np.array(list(sims[q].keys()), dtype=object)
    scores = np.array(list(sims[q].values()), dtype=np.float64)
    pos = set(pos)
    order = np.argsort(-scores, kind="stable")
    ranked = [ids[i] for i in order]
    rel = np.array([r in pos for r in ranked], dtype=bool)
    full = 0.0
    if rel.any():
        full = float(average_precision_score(rel, scores[order]) * rel.sum() / len(pos))
    out[q] = {
        "ap": {str(k): ilias_ap(ids, scores, pos, k) for k in ks},
        "recall": {str(k): float(rel[:k].sum() / len(pos)) for k in ks},
        "gldv2": gldv2_ap(ranked, pos),
        "full": full,
        "hit1": float(rel[0]) if len(rel) else 0.0,
    }
print(json.dumps(out))
"#;

#[test]
fn ilias_gldv2_full_recall_match_python_references_with_ties() {
    let d = tempfile::tempdir().unwrap();
    let gt_path = d.path().join("gt.json");
    let res_path = d.path().join("results.json");
    let mut rng = Rng(20_240_611);

    let n_queries = 80;
    let mut gt = serde_json::Map::new();
    let mut results: Vec<(String, Vec<(String, f32)>)> = Vec::new();
    for qi in 0..n_queries {
        let q = format!("inst{:02}/q{qi}", qi % 17);
        let n_pos = 1 + rng.below(25) as usize;
        let pos: Vec<String> = (0..n_pos).map(|j| format!("inst{qi}/p{j}")).collect();
        // List lengths around the cuts, including empty lists.
        let len = [0usize, 1, 2, 4, 60, 150, 1200][rng.below(7) as usize];
        // Few distinct score levels: many ties (dyadic values, exact in f32 and f64); some
        // queries have very coarse scores (huge tie blocks straddling every cut).
        let levels = [2u64, 8, 64, 4096][rng.below(4) as usize];
        let mut items = Vec::with_capacity(len);
        let mut used_pos = std::collections::HashSet::new();
        for i in 0..len {
            let s = rng.below(levels) as f32 / levels as f32 - 0.25;
            let id = if rng.below(4) == 0 {
                let j = rng.below(n_pos as u64) as usize;
                if used_pos.insert(j) {
                    pos[j].clone()
                } else {
                    format!("d{qi}_{i}")
                }
            } else {
                format!("d{qi}_{i}")
            };
            items.push((id, s));
        }
        gt.insert(q.clone(), serde_json::json!(pos));
        results.push((q, items));
    }
    std::fs::write(&gt_path, serde_json::to_string(&gt).unwrap()).unwrap();
    write_results(&res_path, &results).unwrap();

    let ks = [1usize, 3, 100, 1000];
    let py = common::run_python(
        REFERENCE,
        &[
            gt_path.to_str().unwrap(),
            res_path.to_str().unwrap(),
            "1,3,100,1000",
        ],
    );
    let reference: serde_json::Value = serde_json::from_str(&py).unwrap();

    let sets = load_ground_truth(&gt_path).unwrap();
    let res = read_results(&res_path).unwrap();
    let mut compared = 0;
    for &k in &ks {
        let report = evaluate_results(&sets, &res, k, MissingPolicy::Error).unwrap();
        let set = &report.sets[0];
        assert_eq!(set.n_queries, n_queries);
        let mut mean_ref = 0.0;
        for qr in &set.queries {
            let r = &reference[&qr.query];
            let ap = r["ap"][k.to_string()].as_f64().unwrap();
            mean_ref += ap;
            assert!(
                (qr.ap_at_k - ap).abs() < 1e-9,
                "AP@{k} of {}: tailrank {} vs official {}",
                qr.query,
                qr.ap_at_k,
                ap
            );
            let rec = r["recall"][k.to_string()].as_f64().unwrap();
            assert!(
                (qr.recall_at_k - rec).abs() < 1e-12,
                "R@{k} of {}",
                qr.query
            );
            assert!((qr.gldv2_ap_at_100 - r["gldv2"].as_f64().unwrap()).abs() < 1e-12);
            assert!((qr.ap_full - r["full"].as_f64().unwrap()).abs() < 1e-9);
            assert_eq!(qr.hit_at_1, r["hit1"].as_f64().unwrap());
            compared += 1;
        }
        mean_ref /= n_queries as f64;
        assert!((set.map_at_k - mean_ref).abs() < 1e-6, "mAP@{k}");
    }
    assert_eq!(compared, ks.len() * n_queries);
}

#[test]
fn official_test_vectors_through_files() {
    let d = tempfile::tempdir().unwrap();
    let gt_path = d.path().join("gt.json");
    let res_path = d.path().join("r.json");
    std::fs::write(&gt_path, r#"{"q": ["a", "c", "f", "z"], "none": ["y"]}"#).unwrap();
    std::fs::write(
        &res_path,
        r#"{"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5, "f": 0.4},
            "none": {"a": 0.9, "b": 0.8}}"#,
    )
    .unwrap();
    let sets = load_ground_truth(&gt_path).unwrap();
    let res = read_results(&res_path).unwrap();
    for (k, want) in [(1000, 0.541_666_7), (3, 0.555_555_6), (2, 0.5)] {
        let r = evaluate_results(&sets, &res, k, MissingPolicy::Error).unwrap();
        let q = &r.sets[0].queries;
        assert!(
            (q[0].ap_at_k - want).abs() < 1e-6,
            "AP@{k} = {}",
            q[0].ap_at_k
        );
        assert_eq!(q[1].ap_at_k, 0.0);
    }
}
