//! The realized width at the level cuts of each run simulated at 2f (issue #45,
//! docs/notes/2026-12-07-projection-blend.md): levels 0–4 are the nested samples at 2f, f,
//! f/2, f/4 and f/8. Prints one CSV row per run, `family,held_out,seed,f,w0,w1,w2,w3,w4,proj,
//! err1`: the widths (NaN where a cut has no realized interval), the next step's projection
//! at 2f from the prediction at f (`WidthParts::projected(1)`) and that prediction's error
//! against the truth. `research/explore/projection_blend.py` scores projection rules on it.
//!
//! Usage: `projection_levels [FIRST_SEED..END_SEED [F [QUERIES [FAMILIES]]]]` (as
//! `next_step_validation`).
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
mod runs;
use tailrank::predict::next_step::{level_summary, width_parts};
use tailrank::predict::predict_without_next_step;

fn main() {
    let (seeds, f, queries, families) = args::study();
    println!("family,held_out,seed,f,w0,w1,w2,w3,w4,proj,err1");
    for run in runs::doubled_runs(&families, seeds, queries, f) {
        let mut w = Vec::new();
        let mut proj = f64::NAN;
        let mut err1 = f64::NAN;
        for level in 0..5 {
            let v = level_summary(&run.sim.summary, level)
                .and_then(|s| predict_without_next_step(&s, &run.opts).ok())
                .map(|p| {
                    if level == 1 {
                        proj = width_parts(&p).map_or(f64::NAN, |x| x.projected(1));
                        err1 = p.estimate - run.sim.truth.map_at_k;
                    }
                    p.realized.map_or(f64::NAN, |r| r.width())
                })
                .unwrap_or(f64::NAN);
            w.push(v);
        }
        println!(
            "{},{},{},{},{:.5},{:.5},{:.5},{:.5},{:.5},{:.5},{:+.5}",
            run.family, run.held_out, run.seed, f, w[0], w[1], w[2], w[3], w[4], proj, err1
        );
    }
}
