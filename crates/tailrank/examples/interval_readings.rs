//! The realized interval's readings at three nested cuts of one sample, for scoring other
//! interval and verdict rules offline (docs/notes/2026-12-06-level-readings.md): each
//! corpus family and seed is simulated at 2f as `next_step_validation` does, and the
//! prediction at the cuts 2f, f and f/2 (`level_summary` 0, 1, 2) is written as one JSON
//! line per run:
//!
//! `{"family", "held_out", "seed", "f", "truth", "cuts": [{"fraction", "sample_size",
//! "pool_size", "estimate", "evaluate_at_s", "realized", "trust", "levels",
//! "excess_centre"}, …]}`, cuts in the order 2f, f, f/2; `realized` is the
//! `RealizedInterval` with every opinion it spans, `trust` every statistic of the verdict,
//! `levels` the prediction at N from each nesting level. A run whose cut has no prediction
//! (too few levels) writes `null` for it.
//!
//! Usage: `interval_readings [FIRST_SEED..END_SEED [F [QUERIES [FAMILIES]]]]` (defaults 0..3,
//! 0.05, 300, every corpus family; FAMILIES comma-separated).
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
mod runs;
use serde_json::{json, Value};
use tailrank::predict::next_step::level_summary;
use tailrank::predict::predict_without_next_step;

fn main() {
    let (seeds, f, queries, families) = args::study();
    for run in runs::doubled_runs(&families, seeds, queries, f) {
        let cut = |level: usize| -> Value {
            let Some(s) = level_summary(&run.sim.summary, level) else {
                return Value::Null;
            };
            let p = predict_without_next_step(&s, &run.opts).expect("predict");
            json!({
                "fraction": s.fraction,
                "sample_size": p.sample_size,
                "pool_size": p.pool_size,
                "estimate": p.estimate,
                "evaluate_at_s": p.baselines.evaluate_at_s,
                "realized": p.realized,
                "trust": p.trust,
                "levels": p.levels,
                "excess_centre": p.excess_centre,
            })
        };
        let line = json!({
            "family": run.family,
            "held_out": run.held_out,
            "seed": run.seed,
            "f": f,
            "truth": run.sim.truth.map_at_k,
            "cuts": [cut(0), cut(1), cut(2)],
        });
        println!("{line}");
    }
}
