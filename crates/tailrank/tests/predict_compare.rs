//! `predict::compare`: the paired difference of two models over the same queries and pool
//! sample, its interval and its verdict, on simulated ILIAS-like summaries with known truth.

use tailrank::predict::compare::compare;
use tailrank::predict::{predict, PredictOptions};
use tailrank::simulate::{simulate_summary, SimConfig};
use tailrank::summary::Summary;

fn simulated(queries: usize) -> Summary {
    let cfg = SimConfig::preset("ilias-like", 5)
        .unwrap()
        .with_queries(queries);
    simulate_summary(&cfg).unwrap().summary
}

/// Model B: the same queries and pool sample, with two more non-relevant core items above
/// every positive: a model that confuses instances more, and is worse on every query.
fn confused(a: &Summary) -> Summary {
    let mut b = a.clone();
    b.model = "confused".into();
    for q in &mut b.queries {
        for p in &mut q.positives {
            p.core_above += 2;
        }
    }
    b
}

#[test]
fn a_model_against_itself_is_not_separated() {
    let a = simulated(200);
    let opts = PredictOptions {
        bootstrap: 200,
        sample_noise: 0,
        ..PredictOptions::default()
    };
    let c = compare(&a, &a, &opts).unwrap();
    assert_eq!(c.difference, 0.0);
    assert!(c.level_differences.iter().all(|&(_, d)| d == 0.0));
    assert!(!c.separated, "{c:?}");
    assert!(c.reason.contains("contains 0"), "{}", c.reason);
    // The predicted mAP of each side is predict's own estimate.
    let p = predict(&a, &opts).unwrap();
    assert!((c.map_at_k_a - p.estimate).abs() < 1e-15);
}

#[test]
fn a_clearly_worse_model_is_separated_with_a_paired_interval() {
    let a = simulated(300);
    let b = confused(&a);
    let opts = PredictOptions {
        bootstrap: 300,
        sample_noise: 0,
        ..PredictOptions::default()
    };
    let c = compare(&a, &b, &opts).unwrap();
    assert!(c.difference > 0.01, "{c:?}");
    assert!(c.interval.lo > 0.0 && c.interval.lo <= c.difference && c.difference <= c.interval.hi);
    // Pairing removes the query difficulty both models share: the paired SE is well below the
    // SE of either model alone (0.0085 vs 0.0163 on this benchmark).
    let pa = predict(&a, &opts).unwrap();
    assert!(
        c.std_error < 0.7 * pa.std_error,
        "{} vs {}",
        c.std_error,
        pa.std_error
    );
    assert_eq!(c.level_differences.len(), a.level_indices().len());
    let e = c.extrapolation_error.unwrap();
    assert_eq!(c.separated, c.difference.abs() > e, "{c:?}");
}

/// Two scans that list the same queries in another order (their ground truths did) compare
/// as if listed alike: B is read in A's order. Other query ids are still refused.
#[test]
fn the_same_queries_in_another_order_compare_alike() {
    let a = simulated(60);
    let b = confused(&a);
    let mut reversed = b.clone();
    reversed.queries.reverse();
    let opts = PredictOptions {
        bootstrap: 50,
        sample_noise: 0,
        ..PredictOptions::default()
    };
    let want = compare(&a, &b, &opts).unwrap();
    let got = compare(&a, &reversed, &opts).unwrap();
    assert_eq!(got.difference, want.difference);
    assert_eq!(got.interval.lo, want.interval.lo);
    assert_eq!(got.map_at_k_b, want.map_at_k_b);
    let mut renamed = reversed;
    renamed.queries[0].id.push_str("-other");
    let e = compare(&a, &renamed, &opts).unwrap_err().to_string();
    let missing = &a.queries.last().unwrap().id;
    let want = format!("query {missing:?} of the first summary is not among the second's");
    assert!(e.contains(&want), "{e}");
}

#[test]
fn different_samples_or_queries_are_refused() {
    let a = simulated(50);
    let mut b = a.clone();
    b.subset_sizes[0] += 1;
    let e = compare(&a, &b, &PredictOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("pool samples differ in size"), "{e}");
    let mut c = a.clone();
    c.queries.pop();
    let e = compare(&a, &c, &PredictOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("50 queries vs 49"), "{e}");
    let mut d = a.clone();
    d.seed += 1;
    let e = compare(&a, &d, &PredictOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("pool samples differ"), "{e}");
    // Same sizes, other sampled items: the pool fingerprints differ (one id replaced); a
    // summary without a fingerprint cannot be checked and is compared.
    let (mut f1, mut f2) = (a.clone(), a.clone());
    let s0 = a.subset_sizes[0];
    f1.pool_id_hashes = Some((0..s0).map(|i| 2 * i).collect());
    f2.pool_id_hashes = Some((0..s0).map(|i| 2 * i + u64::from(i == 3)).collect());
    let e = compare(&f1, &f2, &PredictOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("hold different items (1 of the"), "{e}");
    assert!(compare(&f1, &f1.clone(), &PredictOptions::default()).is_ok());
    f2.pool_id_hashes = None;
    assert!(compare(&f1, &f2, &PredictOptions::default()).is_ok());
    // Other nesting levels (a summary grown by a factor that is not a power of 2): both
    // nestings named.
    let mut g = a.clone();
    let last = *g.level_indices().last().unwrap();
    g.subsets[last].fraction /= 2.0;
    let e = compare(&a, &g, &PredictOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("nested differently"), "{e}");
    assert!(e.contains(&a.nesting()) && e.contains(&g.nesting()), "{e}");
    // The same nesting with other kept lists (another --top-m): the message says so.
    let mut m = a.clone();
    m.top_m += 1;
    for i in m.shard_indices() {
        m.subsets[i].top_m = Some(m.subsets[i].top_m.unwrap_or(a.top_m) + 1);
    }
    assert_ne!(
        m.subsets, a.subsets,
        "the simulated summary has drift shards"
    );
    let e = compare(&a, &m, &PredictOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("kept top lists"), "{e}");
}

/// Two whole-pool scans at their own size: the exact metrics of the counts, as `eval --summary`
/// (evaluate-at-S) gives them, and no extrapolation error.
#[test]
fn whole_pool_scans_compare_their_exact_metrics() {
    let mut cfg = SimConfig::preset("ilias-like", 5)
        .unwrap()
        .with_queries(120)
        .with_pool_size(40_000);
    cfg.fraction = 1.0;
    let a = simulate_summary(&cfg).unwrap().summary;
    let b = confused(&a);
    let opts = PredictOptions {
        bootstrap: 100,
        sample_noise: 0,
        ..PredictOptions::default()
    };
    let c = compare(&a, &b, &opts).unwrap();
    let (pa, pb) = (predict(&a, &opts).unwrap(), predict(&b, &opts).unwrap());
    assert!(
        pa.is_exact_scan(),
        "the test summary must read as a whole-pool scan"
    );
    assert_eq!(c.map_at_k_a, pa.baselines.evaluate_at_s);
    assert_eq!(c.map_at_k_b, pb.baselines.evaluate_at_s);
    assert_eq!(c.hit_at_1_a, pa.baselines.evaluate_at_s_hit_at_1);
    assert_eq!(c.recall_at_k_b, pb.baselines.evaluate_at_s_recall_at_k);
    assert_ne!(
        c.map_at_k_a, pa.estimate,
        "the tail model's reading differs here"
    );
    assert_eq!(c.extrapolation_error, None);
    assert!(
        c.exact && c.separated && c.reason.contains("exact"),
        "{}",
        c.reason
    );
    // At a larger N the same summaries are a prediction.
    let larger = PredictOptions {
        pool_size: Some(4 * a.subset_sizes[0]),
        ..opts
    };
    assert!(!compare(&a, &b, &larger).unwrap().exact);
    // One query: no paired interval, and the reason says why.
    let one = simulated(1);
    let c = compare(&one, &confused(&one), &opts).unwrap();
    assert!(
        !c.separated && c.reason.starts_with("one query"),
        "{}",
        c.reason
    );
}
