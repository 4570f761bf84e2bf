//! The headline property on simulated ILIAS-like data (docs/method.md §10): from a 5% sample the
//! tail-aware estimate lands close to the realized mAP@1k at N = 10^8, far closer than the count
//! baseline, which over-predicts, as does evaluate-at-S (by more). Scaled down to 400 queries
//! for speed; the thresholds hold with a wide margin on every seed tried.

use tailrank::simulate::validation::{run_one, ValidationOptions};

#[test]
fn evt_beats_the_baselines_on_ilias_like() {
    let opts = ValidationOptions {
        queries: Some(400),
        ..ValidationOptions::default()
    };
    for seed in [21, 22] {
        let (r, truth) = run_one("ilias-like", seed, 0.05, &opts, false).unwrap();
        assert_eq!(truth.pool_size, 100_000_000);
        let evt = r.evt - r.truth;
        let count = r.count - r.truth;
        let at_s = r.evaluate_at_s - r.truth;
        eprintln!(
            "seed {seed}: truth {:.4} evt {evt:+.4} count {count:+.4} at-S {at_s:+.4}",
            r.truth
        );
        assert!(count > 0.02, "count baseline over-predicts: {count}");
        assert!(
            at_s > count,
            "evaluate-at-S over-predicts more: {at_s} vs {count}"
        );
        assert!(evt.abs() < 0.02, "evt error {evt}");
        assert!(evt.abs() < 0.4 * count, "evt {evt} vs count {count}");
        // The binomial map with the same hardness also lands near the truth.
        assert!((r.evt_binomial - r.truth).abs() < 0.025);
    }
}

/// The error decomposition is exact and its oracles say what they mean: the parts sum to the
/// evt error, the expected-rank map fed the realized fractions K_N/N is the truth itself, the
/// binomial map fed the true x is close to it (unbiased over draws of the pool), and the
/// count law's Recall@k and hit@1 land near the realized ones (Bernoulli noise of 400 queries).
#[test]
fn error_decomposition_and_count_law_on_ilias_like() {
    let opts = ValidationOptions {
        queries: Some(400),
        ..ValidationOptions::default()
    };
    let (r, _) = run_one("ilias-like", 23, 0.05, &opts, false).unwrap();
    let d = r.decomposition.as_ref().unwrap();
    let sum =
        d.part_map + d.part_count + d.part_tail + d.part_immune + d.part_centre + d.part_spacing;
    assert!((sum - d.total()).abs() < 1e-15);
    assert!(
        (sum - (r.evt - r.truth)).abs() < 1e-12,
        "{sum} vs {}",
        r.evt - r.truth
    );
    assert!(d.realized_expected_rank.abs() < 1e-12, "{d:?}");
    assert!(d.oracle_binomial.abs() < 0.015, "{d:?}");
    assert!(d.immune_outranked <= d.immune);
    let cells: usize = d.calibration.iter().map(|c| c.positives).sum();
    assert!(cells > 1000, "{cells} positives in the calibration table");
    // The count branch of deep positives is calibrated: the median log ratio near 0.
    let deep = d
        .calibration
        .iter()
        .find(|c| c.band == 4 && c.branch == tailrank::hardness::Branch::Count)
        .unwrap();
    assert!(deep.median.abs() < 0.1, "{deep:?}");
    assert!((r.hit_at_1 - r.truth_hit_at_1).abs() < 0.08, "{r:?}");
    assert!((r.recall_at_k - r.truth_recall_at_k).abs() < 0.03, "{r:?}");
}
