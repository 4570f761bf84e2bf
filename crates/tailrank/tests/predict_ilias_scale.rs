//! ILIAS-sized prediction (1,232 queries, ~6k positives, M = 4000, 5 levels, 4 shards,
//! B = 1000): checks the result is complete and prints the wall time (no timed assertion).
//! Ignored by default (the summary alone takes a few seconds to draw); run with
//! `cargo test --release --workspace --test predict_ilias_scale -- --ignored --nocapture`.

mod predict_support;

use std::time::Instant;
use tailrank::predict::{predict, PredictOptions};

#[test]
#[ignore]
fn ilias_sized_prediction() {
    let t = Instant::now();
    let s = predict_support::ilias_like(1232, 5_000_000, 4000, 5, 4, 1);
    let npos: usize = s.queries.iter().map(|q| q.positives.len()).sum();
    eprintln!("summary drawn: {} positives, {:.2?}", npos, t.elapsed());
    for noise in [0, 200] {
        let opts = PredictOptions {
            sample_noise: noise,
            ..PredictOptions::default()
        };
        let t = Instant::now();
        let p = predict(&s, &opts).unwrap();
        eprintln!(
            "predict B=1000 sample_noise={noise}: {:.2?}  estimate {:.4} [{:.4}, {:.4}] count {:.4} at-S {:.4} noise sd {:?}",
            t.elapsed(),
            p.estimate,
            p.bca.lo,
            p.bca.hi,
            p.baselines.count,
            p.baselines.evaluate_at_s,
            p.sample_noise_sd
        );
        assert_eq!(p.levels.len(), 5);
        assert!(p.budget.is_some() && p.drift.is_some());
    }
}
