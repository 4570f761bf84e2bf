//! Exploration of the reading of rare items above the top positive as a move of the estimate
//! (docs/notes/2026-12-06-spacing-centre.md): for each corpus family and seed, the prediction
//! at f (level 1 of the run simulated at 2f, the runs of `next_step_validation`), one CSV row:
//! `family,held_out,seed,f,truth,estimate,verdict,z,tested,exceeding,tested_above,
//! exceeding_above,m_tail,m_above,lo,hi` (NaN where the realized interval holds no reach).
//!
//! Usage: `above_reading FIRST_SEED..END_SEED F [QUERIES [FAMILIES]]`.
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
mod runs;
use tailrank::predict::next_step::level_summary;
use tailrank::predict::predict_without_next_step;

fn main() {
    let (seeds, f, queries, families) = args::study();
    println!(
        "family,held_out,seed,f,truth,estimate,verdict,z,tested,exceeding,tested_above,\
         exceeding_above,m_tail,m_above,lo,hi"
    );
    for run in runs::doubled_runs(&families, seeds, queries, f) {
        let s = level_summary(&run.sim.summary, 1).expect("level");
        let p = predict_without_next_step(&s, &run.opts).expect("predict");
        let sp = p.trust.spacing;
        let reach = p.realized.and_then(|r| r.spacing_above);
        let (lo, hi) = p
            .realized
            .map_or((f64::NAN, f64::NAN), |r| (r.interval.lo, r.interval.hi));
        println!(
            "{},{},{},{f},{:.6},{:.6},{},{:.4},{},{},{},{},{:.6},{:.6},{lo:.6},{hi:.6}",
            run.family,
            run.held_out,
            run.seed,
            run.sim.truth.map_at_k,
            p.estimate,
            p.trust.verdict.as_str(),
            sp.map_or(f64::NAN, |t| t.z),
            sp.map_or(0, |t| t.tested),
            sp.map_or(0, |t| t.exceeding),
            sp.map_or(0, |t| t.tested_above),
            sp.map_or(0, |t| t.exceeding_above),
            reach.map_or(f64::NAN, |a| a.tail),
            reach.map_or(f64::NAN, |a| a.estimate),
        );
    }
}
