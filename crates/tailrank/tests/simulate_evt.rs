//! The headline property on simulated ILIAS-like data (SPEC 10): from a 5% sample the
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
        let (r, truth) = run_one("ilias-like", seed, 0.05, &opts, 0).unwrap();
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
