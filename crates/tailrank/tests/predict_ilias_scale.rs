//! ILIAS-sized prediction (1,232 queries, ~6k positives, M = 4000, 5 levels, 4 shards,
//! B = 1000): checks the result is complete and prints the wall time (no timed assertion).
//! Ignored by default (the summary alone takes a few seconds to draw); run with
//! `cargo test --release --workspace --test predict_ilias_scale -- --ignored --nocapture`.

use tailrank_test_support::predict_support;

use std::time::Instant;
use tailrank::predict::{predict, PredictOptions};

/// CPU seconds (user + system) used by this process so far (Linux `/proc/self/stat`; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

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
        let c = cpu_seconds();
        let p = predict(&s, &opts).unwrap();
        let cpu = cpu_seconds() - c;
        eprintln!(
            "predict B=1000 sample_noise={noise}: {:.2?} wall, {cpu:.2} s CPU  estimate {:.4} [{:.4}, {:.4}] count {:.4} at-S {:.4} noise sd {:?}",
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
