//! "From counts" (docs/method.md §3) equals "from the sorted list": an in-memory whole-pool `Summary` built
//! from random galleries gives exactly the metrics of the full ranked list, when no non-relevant
//! item ties with a positive (positives may tie among themselves: both paths use tie blocks).

use proptest::prelude::*;
use tailrank::formats::gt::QuerySet;
use tailrank::formats::results::{QueryResults, Results};
use tailrank::metric::{
    evaluate_counts, evaluate_results, evaluate_summary, evaluate_summary_for_set, positive_counts,
    MissingPolicy,
};
use tailrank::sample::HashRange;
use tailrank::summary::{
    PositiveSummary, QuerySummary, Subset, SubsetKind, Summary, SUMMARY_FORMAT_VERSION,
};

/// One random query: positive scores, core non-relevant scores, pool scores.
#[derive(Debug, Clone)]
struct Gallery {
    pos: Vec<f32>,
    core: Vec<f32>,
    pool: Vec<f32>,
}

/// Distinct integer levels shuffled, split into positives / core / pool; some positives copy
/// the previous positive's score (ties among positives only).
fn gallery() -> impl Strategy<Value = Gallery> {
    (1usize..12, 0usize..25, 0usize..250)
        .prop_flat_map(|(np, nc, nk)| {
            let total = np + nc + nk;
            (
                Just((np, nc)),
                Just((0..total).collect::<Vec<usize>>()).prop_shuffle(),
                proptest::collection::vec(any::<bool>(), np),
            )
        })
        .prop_map(|((np, nc), perm, tie)| {
            let total = perm.len() as f32;
            let s: Vec<f32> = perm.iter().map(|&v| v as f32 / total).collect();
            let mut pos = s[..np].to_vec();
            for j in 1..np {
                if tie[j] {
                    pos[j] = pos[j - 1];
                }
            }
            Gallery {
                pos,
                core: s[np..np + nc].to_vec(),
                pool: s[np + nc..].to_vec(),
            }
        })
}

fn summary_of(galleries: &[Gallery], exact: bool) -> Summary {
    let pool_n = galleries.first().map_or(0, |g| g.pool.len()) as u64;
    let queries = galleries
        .iter()
        .enumerate()
        .map(|(qi, g)| {
            let mut ps: Vec<(String, f32)> = g
                .pos
                .iter()
                .enumerate()
                .map(|(j, &s)| (format!("q{qi}/p{j}"), s))
                .collect();
            ps.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            QuerySummary {
                id: format!("q{qi}"),
                positives: ps
                    .into_iter()
                    .map(|(id, s)| PositiveSummary {
                        core_ties: 0,
                        pool_ties: Vec::new(),
                        id,
                        score: s,
                        core_above: g.core.iter().filter(|&&c| c > s).count() as u64,
                        pool_above: vec![g.pool.iter().filter(|&&c| c > s).count() as u64],
                    })
                    .collect(),
                top_scores: vec![vec![]],
            }
        })
        .collect();
    Summary {
        format_version: SUMMARY_FORMAT_VERSION,
        tool_version: tailrank::TOOL_VERSION.to_string(),
        model: "test".into(),
        query_set: "queries".into(),
        pool_size: Some(if exact { pool_n } else { pool_n * 20 }),
        fraction: if exact { 1.0 } else { 0.05 },
        seed: 0,
        top_m: 4000,
        core_size: 0,
        subsets: vec![Subset {
            kind: SubsetKind::Level,
            fraction: if exact { 1.0 } else { 0.05 },
            range: HashRange::fraction(if exact { 1.0 } else { 0.05 }).unwrap(),
            top_m: None,
        }],
        subset_sizes: vec![pool_n],
        queries,
        inputs: vec![],
        pool_id_hashes: None,
        ties_known: true,
    }
}

fn results_of(galleries: &[Gallery]) -> (QuerySet, Results) {
    let mut qids = Vec::new();
    let mut pos = Vec::new();
    let mut qr = Vec::new();
    for (qi, g) in galleries.iter().enumerate() {
        let q = format!("q{qi}");
        let mut items: Vec<(String, f64)> = Vec::new();
        // Pool first, then core, then positives: file order must not matter without ties
        // between positives and non-relevant items.
        for (i, &s) in g.pool.iter().enumerate() {
            items.push((format!("pool{i}"), s as f64));
        }
        for (i, &s) in g.core.iter().enumerate() {
            items.push((format!("core{i}"), s as f64));
        }
        let p: Vec<String> = (0..g.pos.len()).map(|j| format!("q{qi}/p{j}")).collect();
        for (id, &s) in p.iter().zip(&g.pos) {
            items.push((id.clone(), s as f64));
        }
        qids.push(q.clone());
        pos.push(p);
        qr.push(QueryResults { query: q, items });
    }
    (
        QuerySet::new("gt", "queries", qids, pos).unwrap(),
        Results::new("r.json", qr).unwrap(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn counts_equal_sorted_list(
        gs in proptest::collection::vec(gallery(), 1..6),
        k in prop::sample::select(vec![1usize, 2, 3, 5, 10, 30, 100, 1000]),
    ) {
        // Every query of a summary shares the pool size: trim pools to the shortest.
        let n = gs.iter().map(|g| g.pool.len()).min().unwrap();
        let gs: Vec<Gallery> = gs.into_iter().map(|mut g| { g.pool.truncate(n); g }).collect();
        let s = summary_of(&gs, true);
        let from_counts = evaluate_summary(&s, k).unwrap();
        let (set, res) = results_of(&gs);
        let from_list = evaluate_results(std::slice::from_ref(&set), &res, k, MissingPolicy::Error).unwrap();
        let (a, b) = (&from_counts.sets[0], &from_list.sets[0]);
        prop_assert_eq!(a.queries.len(), b.queries.len());
        for (qa, qb) in a.queries.iter().zip(&b.queries) {
            prop_assert_eq!(&qa.query, &qb.query);
            prop_assert!((qa.ap_at_k - qb.ap_at_k).abs() < 1e-12, "AP@{}: {} vs {}", k, qa.ap_at_k, qb.ap_at_k);
            prop_assert!((qa.ap_full - qb.ap_full).abs() < 1e-12);
            prop_assert!((qa.gldv2_ap_at_100 - qb.gldv2_ap_at_100).abs() < 1e-12,
                "gldv2 {} vs {}", qa.gldv2_ap_at_100, qb.gldv2_ap_at_100);
            prop_assert!((qa.recall_at_k - qb.recall_at_k).abs() < 1e-12);
            prop_assert_eq!(qa.hit_at_1, qb.hit_at_1);
        }
        prop_assert!((a.map_at_k - b.map_at_k).abs() < 1e-12);
        // Checked against the ground truth: same numbers.
        let checked = evaluate_summary_for_set(&s, Some(&set), k, MissingPolicy::Error).unwrap();
        prop_assert_eq!(&checked.sets[0].queries, &a.queries);
    }
}

fn fixed() -> Vec<Gallery> {
    vec![
        Gallery {
            pos: vec![0.9, 0.5, 0.1],
            core: vec![0.6],
            pool: vec![0.95, 0.3, 0.2],
        },
        Gallery {
            pos: vec![0.4],
            core: vec![],
            pool: vec![0.1, 0.2, 0.3],
        },
    ]
}

#[test]
fn summary_must_be_exact() {
    let s = summary_of(&fixed(), false);
    let e = evaluate_summary(&s, 1000).unwrap_err().to_string();
    assert!(e.contains("sample") && e.contains("predict"), "{e}");
}

#[test]
fn summary_vs_ground_truth_checks() {
    let s = summary_of(&fixed(), true);
    // Known values: q0 ranks 2, 4, 7 (n = 3): (1/2 + 2/4 + 3/7)/3; q1 rank 1.
    let r = evaluate_summary(&s, 1000).unwrap();
    let q = &r.sets[0].queries;
    assert!((q[0].ap_at_k - (0.5 + 0.5 + 3.0 / 7.0) / 3.0).abs() < 1e-15);
    assert_eq!(q[1].ap_at_k, 1.0);
    assert_eq!(r.source, "summary");

    let gt_missing = QuerySet::new(
        "gt",
        "queries",
        vec!["q0".into(), "q1".into(), "q9".into()],
        vec![
            vec!["q0/p0".into(), "q0/p1".into(), "q0/p2".into()],
            vec!["q1/p0".into()],
            vec!["x".into()],
        ],
    )
    .unwrap();
    let e = evaluate_summary_for_set(&s, Some(&gt_missing), 1000, MissingPolicy::Error)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"q9\"") && e.contains("not in the summary"),
        "{e}"
    );
    let z = evaluate_summary_for_set(&s, Some(&gt_missing), 1000, MissingPolicy::Zero).unwrap();
    assert_eq!(z.sets[0].n_missing, 1);
    assert!(z.sets[0].queries[2].missing);
    assert!((z.sets[0].map_at_k - (q[0].ap_at_k + 1.0) / 3.0).abs() < 1e-15);

    let gt_wrong = QuerySet::new(
        "gt",
        "queries",
        vec!["q0".into()],
        vec![vec!["q0/p0".into(), "q0/p1".into()]],
    )
    .unwrap();
    let e = evaluate_summary_for_set(&s, Some(&gt_wrong), 1000, MissingPolicy::Error)
        .unwrap_err()
        .to_string();
    assert!(e.contains("differ"), "{e}");
    let ok = evaluate_summary_for_set(&s, Some(&gt_wrong), 1000, MissingPolicy::Zero);
    assert!(ok.is_err(), "a positives mismatch is never silently zeroed");

    // Counts of one query at a subset; evaluate_counts on them gives the same AP.
    let c = positive_counts(&s, 0, 0).unwrap();
    assert_eq!(
        c.iter().map(|p| p.pool_above).collect::<Vec<_>>(),
        [1, 1, 3]
    );
    assert_eq!(evaluate_counts("q0", &c, 1000).ap_at_k, q[0].ap_at_k);
    assert!(positive_counts(&s, 0, 1).is_err() && positive_counts(&s, 9, 0).is_err());

    let mut unsorted = summary_of(&fixed(), true);
    unsorted.queries[0].positives.swap(0, 2);
    let e = evaluate_summary(&unsorted, 10).unwrap_err().to_string();
    assert!(e.contains("not sorted"), "{e}");
}
