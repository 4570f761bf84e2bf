//! Which reading sets each end of the realized interval at f and at 2f (issue #45,
//! docs/notes/2026-12-07-projection-blend.md): the runs of `next_step_validation`, and for the
//! predictions at f (the level-1 cut) and at 2f the reading at the lowest and the highest of
//! the interval's readings (`predict::realized`: the estimate, the other map, the fit choice's
//! reach, the level-calibrated law, the excess mass, the count reading, the model's own value,
//! the reach towards the rare items above the top positive; `levels` where the falling
//! estimate's reach raised the upper end), with the readings' spread `max − min` in points.
//! Prints `family,held_out,seed,f,lo_f,hi_f,spread_f,lo_2f,hi_2f,spread_2f,w_f,w_2f,
//! projected_2f`.
//!
//! Usage: `projection_ends [FIRST_SEED..END_SEED [F [QUERIES [FAMILIES]]]]` (as
//! `next_step_validation`).
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
mod runs;
use tailrank::predict::next_step::{level_summary, width_parts};
use tailrank::predict::realized::fit_spanned;
use tailrank::predict::{predict_without_next_step, Prediction};

/// The readings that set the lower and the upper end, and the readings' spread in points.
fn ends(p: &Prediction) -> (&'static str, &'static str, f64) {
    let Some(r) = p.realized.as_ref() else {
        return ("none", "none", f64::NAN);
    };
    let tail = p.model_estimate();
    let fit = r
        .fit_choice_estimate
        .map(|f| fit_spanned(tail, f, r.fit_choice_reach));
    let mut readings: Vec<(&'static str, f64)> = vec![
        ("estimate", p.estimate),
        ("other_map", r.other_map_estimate),
        ("model", tail),
    ];
    for (name, v) in [
        ("fit", fit),
        ("calibrated", r.calibrated_estimate),
        ("excess", r.excess_mass_estimate),
        ("count", r.count_estimate),
        ("above", r.spacing_above.map(|a| a.spanned(1.0))),
    ] {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            readings.push((name, v));
        }
    }
    let lo = readings
        .iter()
        .fold(readings[0], |a, b| if b.1 < a.1 { *b } else { a });
    let hi = readings
        .iter()
        .fold(readings[0], |a, b| if b.1 > a.1 { *b } else { a });
    let hi_name = match r.levels_high {
        Some(l) if l.extension > 0.0 => "levels",
        _ => hi.0,
    };
    (lo.0, hi_name, 100.0 * (hi.1 - lo.1))
}

fn main() {
    let (seeds, f, queries, families) = args::study();
    println!(
        "family,held_out,seed,f,lo_f,hi_f,spread_f,lo_2f,hi_2f,spread_2f,w_f,w_2f,projected_2f"
    );
    for run in runs::doubled_runs(&families, seeds, queries, f) {
        let predict = |level: usize| {
            let s = level_summary(&run.sim.summary, level).expect("level");
            predict_without_next_step(&s, &run.opts).expect("predict")
        };
        let (p2, p1) = (predict(0), predict(1));
        let ((l1, h1, s1), (l2, h2, s2)) = (ends(&p1), ends(&p2));
        let width = |p: &Prediction| p.realized.map_or(f64::NAN, |r| r.width());
        let projected = width_parts(&p1).map_or(f64::NAN, |w| w.projected(1));
        println!(
            "{},{},{},{f},{l1},{h1},{s1:.3},{l2},{h2},{s2:.3},{:.5},{:.5},{projected:.5}",
            run.family,
            run.held_out,
            run.seed,
            width(&p1),
            width(&p2)
        );
    }
}
