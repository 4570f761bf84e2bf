//! Validation of the next step's width projection (docs/reference/validation.md, "The next step's
//! projection"): for each corpus family and seed, simulate the summary at 2f with one more
//! level and twice the drift shards, cut it to level 1 (the nested sample at f, with H shards
//! of f/H as a scan at f has), project the realized width at 2f from the prediction at f
//! (`predict::next_step::width_parts`) and compare with the width predicted from the whole 2f
//! summary. Beside it, the former projection `W_f²/W_{f/2}` (the ratio of the widths at f and
//! at the level-2 cut f/2). Prints one CSV row per run:
//! `family,held_out,seed,f,w_f,noise,trend,spread,projected_2f,measured_2f,rel_error,within_30,
//! ratio_projected_2f,ratio_rel_error,ratio_within_30,verdict_f,verdict_2f`, then the cuts'
//! width parts, errors against the truth (prediction − realized mAP@k at N) and verdicts
//! (`h` = f/2): `w_h,n_h,t_h,s_h,err_h,verdict_h,n_2f,t_2f,s_2f,err_f,err_2f`, and the level
//! trend's test at f, fired or not: `trend_projected_f,trend_se_f` (`Δ` and its SE), and where
//! the level-calibrated law lies at f and 2f: `cal_minus_est_f,cal_minus_est_2f` (`m_cal − m̂`,
//! NaN without the law) and `fit_choice_f` (whether a level-selected fit gave the estimate, the
//! case where the trend counts only on `m_cal`'s side), and the reach towards the rare items
//! above the top positive at f (NaN without it): `above_z_f,above_estimate_f,above_tail_f,
//! above_low_others_f` (`predict::reach::AboveReach`), and the reach up to the levels' highest
//! prediction at f with the projection that holds it instead of halving it:
//! `levels_extension_f,projected_held_2f` (`predict::realized::LevelsHigh`).
//!
//! Usage: `next_step_validation [FIRST_SEED..END_SEED [F [QUERIES [FAMILIES]]]]` (defaults
//! 0..3, 0.05, 300, every corpus family; FAMILIES comma-separated).
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
mod runs;
use tailrank::predict::next_step::{level_summary, width_parts};
use tailrank::predict::predict_without_next_step;

/// `m_cal − m̂` of prediction `p`, NaN without the level-calibrated law.
fn cal_minus_est(p: &tailrank::predict::Prediction) -> f64 {
    let cal = p.realized.and_then(|r| r.calibrated_estimate);
    cal.map_or(f64::NAN, |c| c - p.estimate)
}

fn main() {
    let (seeds, f, queries, families) = args::study();
    println!(
        "family,held_out,seed,f,w_f,noise,trend,spread,projected_2f,measured_2f,rel_error,\
         within_30,ratio_projected_2f,ratio_rel_error,ratio_within_30,verdict_f,verdict_2f,\
         w_h,n_h,t_h,s_h,err_h,verdict_h,n_2f,t_2f,s_2f,err_f,err_2f,\
         trend_projected_f,trend_se_f,cal_minus_est_f,cal_minus_est_2f,fit_choice_f,\
         above_z_f,above_estimate_f,above_tail_f,above_low_others_f,levels_extension_f,\
         projected_held_2f"
    );
    for run in runs::doubled_runs(&families, seeds, queries, f) {
        let (fam, held_out, seed, sim, opts) =
            (run.family, run.held_out, run.seed, run.sim, run.opts);
        let width = |level: usize| {
            let s = level_summary(&sim.summary, level).expect("level");
            let p = predict_without_next_step(&s, &opts).expect("predict");
            (p.realized.map_or(f64::NAN, |r| r.width()), p)
        };
        let (measured, p2) = width(0);
        let (w_f, p1) = width(1);
        let (w_half, ph) = width(2);
        let truth = sim.truth.map_at_k;
        let parts = |p: &tailrank::predict::Prediction| {
            width_parts(p).map_or([f64::NAN; 4], |w| [w.width, w.noise, w.trend, w.spread])
        };
        let (h, m) = (parts(&ph), parts(&p2));
        let w = width_parts(&p1).expect("a realized interval at f");
        let projected = w.projected(1);
        let held = tailrank::predict::next_step::WidthParts {
            levels_extension: 0.0,
            ..w
        }
        .projected(1);
        let above = w.above_reach;
        let ratio_projected = w_f * w_f / w_half;
        let rel = projected / measured - 1.0;
        let ratio_rel = ratio_projected / measured - 1.0;
        println!(
            "{fam},{held_out},{seed},{f},{w_f:.5},{:.5},{:.5},{:.5},{projected:.5},\
                 {measured:.5},{rel:+.3},{},{ratio_projected:.5},{ratio_rel:+.3},{},{},{},\
                 {:.5},{:.5},{:.5},{:.5},{:+.5},{},{:.5},{:.5},{:.5},{:+.5},{:+.5},{:+.5},{:.5},{:+.5},{:+.5},{},{:.4},{:.6},{:.6},{:.6},{:.5},{held:.5}",
            w.noise,
            w.trend,
            w.spread,
            rel.abs() <= 0.3,
            ratio_rel.abs() <= 0.3,
            p1.trust.verdict.as_str(),
            p2.trust.verdict.as_str(),
            h[0],
            h[1],
            h[2],
            h[3],
            ph.estimate - truth,
            ph.trust.verdict.as_str(),
            m[1],
            m[2],
            m[3],
            p1.estimate - truth,
            p2.estimate - truth,
            p1.trust.trend_projected,
            p1.trust.trend_std_error,
            cal_minus_est(&p1),
            cal_minus_est(&p2),
            p1.realized.is_some_and(|r| r.fit_choice_estimate.is_some()),
            above.map_or(f64::NAN, |a| a.z),
            above.map_or(f64::NAN, |a| a.estimate),
            above.map_or(f64::NAN, |a| a.tail),
            above.map_or(f64::NAN, |a| a.low_others),
            w.levels_extension,
        );
    }
}
