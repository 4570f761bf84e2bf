//! The prediction table (`tailrank predict`); its JSON is `predict::json`.

use super::{pct, pct_opt, share, thousands};
use crate::predict::{Interval, Prediction, Verdict};
use std::fmt::Write;

fn interval(i: &Interval) -> String {
    format!("[{}, {}]", pct(i.lo), pct(i.hi))
}

/// One human-readable table: the estimate with its intervals, the baselines, the budget and
/// drift verdicts and the tail report. Metric values in percent with two decimals.
pub fn prediction_table(p: &Prediction) -> String {
    let mut t = String::new();
    head_rows(&mut t, p);
    uncertainty_rows(&mut t, p);
    baseline_rows(&mut t, p);
    level_rows(&mut t, p);
    trust_rows(&mut t, p);
    tail_rows(&mut t, p);
    for warning in &p.warnings {
        let _ = writeln!(t, "WARNING: {warning}");
    }
    t
}

/// Width of the row labels.
const W: usize = 34;

/// The model and inputs, the verdict, the estimate with its intervals and the move to the centre of the excess.
fn head_rows(t: &mut String, p: &Prediction) {
    let w = W;
    let k = p.k;
    let conf = super::confidence_label(p.options.confidence);
    let _ = writeln!(
        t,
        "model {:?}, query set {:?}: {} queries, {} positives",
        p.model,
        p.query_set,
        thousands(p.n_queries as u64),
        thousands(p.n_positives as u64)
    );
    let _ = writeln!(
        t,
        "predicting N = {} pool items from S = {} sampled ({:.3}%), estimator {}, map {}{}",
        thousands(p.pool_size),
        thousands(p.sample_size),
        100.0 * p.sample_size as f64 / p.pool_size.max(1) as f64,
        p.options.estimator_name(),
        match p.options.map {
            crate::maps::MapKind::ExpectedRank => "expected-rank",
            crate::maps::MapKind::Binomial => "binomial",
        },
        match (p.options.fit, p.options.estimator) {
            (crate::predict::FitMode::LevelSelected, crate::hardness::Estimator::Evt(o)) =>
                format!(
                    ", fit level-selected (tail on the top {}, quantile {})",
                    o.top_m, o.quantile
                ),
            _ => String::new(),
        }
    );
    let _ = writeln!(
        t,
        "{:<w$} {}: {}",
        "verdict",
        p.trust.verdict.as_str().to_uppercase(),
        p.trust.reason
    );
    let _ = writeln!(t, "{:<w$} {:>9}  uncertainty", "", "value (%)");
    let _ = writeln!(
        t,
        "{:<w$} {:>9}  {conf} BCa {}, percentile {}, SE {}",
        format!("predicted mAP@{k}"),
        pct(p.estimate),
        interval(&p.bca),
        interval(&p.percentile),
        pct(p.std_error)
    );
    let _ = writeln!(
        t,
        "{:<w$} {:>9}  (BCa, percentile: over other query sets)",
        "", ""
    );
    if let Some(c) = &p.excess_centre {
        let _ = writeln!(
            t,
            "{:<w$} {:>9}  the tail model alone; moved {:+.2} points to the centre of the \
             endpoint test's excess ({:.0}% of it after shrinkage, survivor decay {:.2}: \
             {:.3} items per immune positive at N, spread unknown)",
            "  tail model (evt) at N",
            pct(c.unmoved_map_at_k),
            100.0 * c.shift,
            100.0 * c.weight,
            c.hazard_decay,
            c.excess_rate * (p.pool_size - p.sample_size) as f64
        );
    }
    if let Some(c) = &p.spacing_centre {
        // The tail model's value is on the line above when the excess moved it first.
        let (unmoved, lead) = match p.excess_centre {
            Some(_) => (String::new(), ""),
            None => (pct(c.unmoved_map_at_k), "the tail model alone; "),
        };
        let _ = writeln!(
            t,
            "{:<w$} {:>9}  {lead}moved {:+.2} points towards the rare items above the top \
             positive that the top-spacing test reads ({:.0}% of the half way: {:.3} items per \
             query at N, spread unknown)",
            "  tail model (evt) at N",
            unmoved,
            100.0 * c.shift,
            100.0 * c.weight,
            c.rate_above * (p.pool_size - p.sample_size) as f64
        );
    }
}

/// The realized-metric interval, the pool-sample noise and, when doubtful, the second opinion.
fn uncertainty_rows(t: &mut String, p: &Prediction) {
    let w = W;
    let conf = super::confidence_label(p.options.confidence);
    match &p.realized {
        Some(r) => {
            let _ = writeln!(
                t,
                "{:<w$} {:>9}  {conf} {} width {}: realized metric of these queries (pool \
                 sd {}, other map {}{}{}{}{}{}, trend shift {:+.2}{})",
                "  these queries at N",
                "",
                interval(&r.interval),
                pct(r.width()),
                pct(r.pool_sd),
                pct(r.other_map_estimate),
                match r.calibrated_estimate {
                    Some(c) => format!(", second opinion {}", pct(c)),
                    None => String::new(),
                },
                match r.excess_mass_estimate {
                    Some(m) => format!(", excess-mass reading {}", pct(m)),
                    None => String::new(),
                },
                match r.count_estimate {
                    Some(m) => format!(", count reading {} (sample unsettled)", pct(m)),
                    None => String::new(),
                },
                match r.spacing_above {
                    Some(a) => format!(
                        ", rare items above the top positives {} (weight {:.2})",
                        pct(a.estimate),
                        a.weight()
                    ),
                    None => String::new(),
                },
                match r.levels_high {
                    Some(l) => format!(", falling estimate: levels' highest {}", pct(l.estimate)),
                    None => String::new(),
                },
                100.0 * r.trend_shift,
                match r.ceiling {
                    Some(c) => format!(
                        "; capped at evaluate-at-S {}, which bounds the metric at N",
                        pct(c)
                    ),
                    None => String::new(),
                }
            );
        }
        None => {
            let _ = writeln!(
                t,
                "{:<w$} {:>9}  realized-metric interval n/a (needs shards or sample noise)",
                "  these queries at N", ""
            );
        }
    }
    match (p.sample_noise_sd, p.total) {
        (Some(sd), Some(total)) => {
            let _ = writeln!(
                t,
                "{:<w$} {:>9}  sample-noise sd {}, total {conf} {}",
                "  + pool-sample noise",
                "",
                pct(sd),
                interval(&total)
            );
        }
        _ => {
            let _ = writeln!(
                t,
                "{:<w$} {:>9}  sample noise n/a",
                "  + pool-sample noise", ""
            );
        }
    }
    if let (Verdict::Doubtful, Some(c)) = (p.trust.verdict, &p.baselines.level_calibrated) {
        let _ = writeln!(
            t,
            "{:<w$} {:>9}  level-calibrated law (experimental: the levels' reading with no \
             tail model, which the realized interval spans; docs/reference/predict.md)",
            "second opinion",
            pct(c.map_at_k)
        );
    }
}

/// Recall@k, hit@1 and the baselines beside the estimate.
fn baseline_rows(t: &mut String, p: &Prediction) {
    let w = W;
    let k = p.k;
    let b = &p.baselines;
    let _ = writeln!(
        t,
        "{:<w$} {:>9}  at most {} (its exact value at S: the pool holds the sample; no \
         interval, docs/reference/predict.md)",
        format!("predicted Recall@{k}"),
        pct(p.recall_at_k),
        pct(b.evaluate_at_s_recall_at_k)
    );
    let _ = writeln!(
        t,
        "{:<w$} {:>9}  at most {} (the share of queries whose top positive no sampled or core item \
         outranks)",
        "predicted hit@1",
        pct(p.hit_at_1),
        pct(b.evaluate_at_s_hit_at_1)
    );
    let _ = writeln!(t, "baselines");
    let _ = writeln!(
        t,
        "{:<w$} {:>9}  (at S, not N)",
        format!("  evaluate-at-S (S = {})", thousands(p.sample_size)),
        pct(b.evaluate_at_s)
    );
    let _ = writeln!(t, "{:<w$} {:>9}", "  count (K/S) at N", pct(b.count));
    let _ = writeln!(
        t,
        "{:<w$} {:>9}",
        "  power-law fit at N",
        pct_opt(b.power_law)
    );
    let _ = writeln!(
        t,
        "{:<w$} {:>9}",
        "  log-linear fit at N",
        pct_opt(b.log_linear)
    );
    if let Some(c) = &b.level_calibrated {
        let _ = writeln!(
            t,
            "{:<w$} {:>9}  (experimental; Recall@{k} {}, hit@1 {})",
            "  level-calibrated law at N",
            pct(c.map_at_k),
            pct(c.recall_at_k),
            pct(c.hit_at_1)
        );
    }
    if let Some(f) = &b.level_selected {
        let c = f.chosen();
        let _ = writeln!(
            t,
            "{:<w$} {:>9}  (tail on the top {}, quantile {}; level 1 predicts S_0 off by {:+.2} \
             points; Recall@{k} {}, hit@1 {})",
            "  level-selected fit at N",
            pct(f.map_at_k),
            c.fit_top,
            c.quantile,
            100.0 * c.in_sample_error,
            pct(f.recall_at_k),
            pct(f.hit_at_1)
        );
    }
    if let (crate::predict::FitMode::LevelSelected, Some(v)) =
        (p.options.fit, p.other_fit_estimate())
    {
        let _ = writeln!(
            t,
            "{:<w$} {:>9}  (the options' tail fit, the paper's by default: the estimate under \
             --fit fixed)",
            "  options' fit at N",
            pct(v)
        );
    }
}

/// The prediction from each nested level, the budget and the drift verdicts.
fn level_rows(t: &mut String, p: &Prediction) {
    let w = W;
    if !p.levels.is_empty() {
        let _ = writeln!(t, "levels (prediction at N from each nested sample)");
        for l in &p.levels {
            let _ = writeln!(
                t,
                "{:<w$} {:>9}  SE {}, evaluate-at-S {}",
                format!("  level {} (S = {})", l.level, thousands(l.sample_size)),
                pct(l.estimate),
                pct(l.std_error),
                pct(l.evaluate_at_s)
            );
        }
    }
    let verdict = match &p.budget {
        None => "n/a (needs at least 2 nested levels and the query bootstrap)".to_string(),
        Some(bu) => match (bu.first_sufficient_level, bu.first_sufficient_size) {
            (Some(l), Some(s)) => format!(
                "sufficient: stable within the query SE from level {l} (S = {}) on",
                thousands(s)
            ),
            _ => {
                let last = &bu.steps[0];
                format!(
                    "NOT sufficient: level 1 -> 0 moved the prediction by {} > SE {} (points)",
                    pct(last.abs_diff),
                    pct(last.std_error)
                )
            }
        },
    };
    let _ = writeln!(t, "{:<w$} {verdict}", "budget");
    let drift = match &p.drift {
        None => "n/a (fewer than 2 drift shards, or 1 query)".to_string(),
        Some(d) => format!(
            "{} over {} shards: max |z| = {:.2}, chi2 = {:.2} on {} dof{}",
            if d.flagged { "FLAGGED" } else { "ok" },
            d.shards.len(),
            d.max_abs_z,
            d.chi2,
            d.dof,
            if d.flagged {
                " (shards disagree beyond their noise: the sample may not be uniform)"
            } else {
                ""
            }
        ),
    };
    let _ = writeln!(t, "{:<w$} {drift}", "drift");
}

/// The checks of the verdict: the level trend, the in-sample predictions, the endpoint and
/// top-spacing tests.
fn trust_rows(t: &mut String, p: &Prediction) {
    let w = W;
    let tr = &p.trust;
    if tr.trend_projected.is_finite() && tr.trend_per_doubling.is_finite() {
        let _ = writeln!(
            t,
            "{:<w$} {:+.2} points per doubling of the sample, {:+.2} to N (paired SE {})",
            "level trend",
            100.0 * tr.trend_per_doubling,
            100.0 * tr.trend_projected,
            pct(tr.trend_std_error)
        );
    }
    for c in &tr.in_sample {
        let _ = writeln!(
            t,
            "{:<w$} predicts S_0 as {}, off by {:+.2} (paired SE {}), projected {:+.2} at N{}",
            format!("  in-sample from level {}", c.level),
            pct(c.predicted),
            100.0 * c.error,
            pct(c.std_error),
            100.0 * c.projected_error,
            if tr.used() == Some(c) { " (used)" } else { "" }
        );
    }
    if let Some(r) = tr.level_rises {
        let _ = writeln!(
            t,
            "{:<w$} levels 1 and 2 read {:+.2} and {:+.2} points against level 0 at N{}",
            "falling estimate",
            100.0 * r[0],
            100.0 * r[1],
            if tr.falling_fired() {
                ": the estimate is lower on the whole sample than on its half and its quarter"
            } else {
                ""
            }
        );
    }
    if let Some(e) = &tr.endpoint {
        let _ = writeln!(
            t,
            "{:<w$} {} of {} positives immune at levels {} outranked at level 0, {:.1} \
             expected from the fits' endpoint noise (paired z = {}){}",
            "endpoint test",
            e.observed,
            e.immune,
            crate::predict::trust::level_list(&e.levels),
            e.predicted,
            if e.z.is_finite() {
                format!("{:.1}", e.z)
            } else {
                "n/a".into()
            },
            if tr.endpoint_fired() {
                ": mass past the fitted endpoints"
            } else {
                ""
            }
        );
    }
    if let Some(sp) = &tr.spacing {
        let _ = writeln!(
            t,
            "{:<w$} {} of {} queries with an item far above the rest of their top 50, {:.1} \
             expected from a GPD tail (z = {:.1}){}",
            "top spacing",
            sp.exceeding,
            sp.tested,
            sp.exceeding as f64 - sp.excess,
            sp.z,
            if tr.spacing_fired() {
                ": rare mass above the fitted tails"
            } else {
                ""
            }
        );
    }
}

/// The tail report: positives by count, by tail and immune; the shape quartiles.
fn tail_rows(t: &mut String, p: &Prediction) {
    let w = W;
    let tr = &p.tail;
    let _ = writeln!(
        t,
        "{:<w$} positives by count {}, by tail {}, immune {}",
        "tail report",
        share(tr.by_count, tr.positives),
        share(tr.by_tail, tr.positives),
        share(tr.immune, tr.positives)
    );
    match tr.xi_quartiles {
        Some(qs) => {
            let _ = writeln!(
                t,
                "{:<w$} xi quartiles {:.3} / {:.3} / {:.3} over {} fitted queries",
                "", qs[0], qs[1], qs[2], tr.queries_with_tail
            );
        }
        None => {
            let _ = writeln!(t, "{:<w$} no tail fitted", "");
        }
    }
}
