//! Human tables (mAP in percent, two decimals) and machine-readable JSON reports (fractions in
//! [0, 1], unit in the field name: `map_at_k`, `recall_at_k`, `hit_at_1`, `*_std_error`, ...;
//! NaN, e.g. intervals with `bootstrap = 0`, becomes `null`).

use crate::predict::{Interval, Prediction, Verdict};
use serde_json::{json, Value};
use std::fmt::Write;

/// A fraction as percent with two decimals (`n/a` for NaN).
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.2}", 100.0 * x)
    } else {
        "n/a".to_string()
    }
}

fn pct_opt(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), pct)
}

fn interval(i: &Interval) -> String {
    format!("[{}, {}]", pct(i.lo), pct(i.hi))
}

/// An integer with thousands separators.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn share(a: usize, total: usize) -> String {
    if total == 0 {
        "n/a".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / total as f64)
    }
}

/// One human-readable table: the estimate with its intervals, the baselines, the budget and
/// drift verdicts and the tail report. Metric values in percent with two decimals.
pub fn prediction_table(p: &Prediction) -> String {
    let conf = format!("{:.0}%", 100.0 * p.options.confidence);
    let k = p.k;
    let mut t = String::new();
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
        "predicting N = {} pool items from S = {} sampled ({:.3}%), estimator {}, map {}",
        thousands(p.pool_size),
        thousands(p.sample_size),
        100.0 * p.sample_size as f64 / p.pool_size.max(1) as f64,
        p.options.estimator_name(),
        match p.options.map {
            crate::maps::MapKind::ExpectedRank => "expected-rank",
            crate::maps::MapKind::Binomial => "binomial",
        }
    );
    let w = 34;
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
    match &p.realized {
        Some(r) => {
            let _ = writeln!(
                t,
                "{:<w$} {:>9}  {conf} {} width {}: realized metric of these queries (pool \
                 sd {}, other map {}, trend shift {:+.2})",
                "  these queries at N",
                "",
                interval(&r.interval),
                pct(r.width()),
                pct(r.pool_sd),
                pct(r.other_map_estimate),
                100.0 * r.trend_shift
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
            "{:<w$} {:>9}  level-calibrated law (experimental; on the doubtful runs of the \
             validation corpus it is the closer one, docs/validation.md)",
            "second opinion",
            pct(c.map_at_k)
        );
    }
    let _ = writeln!(
        t,
        "{:<w$} {:>9}",
        format!("predicted Recall@{k}"),
        pct(p.recall_at_k)
    );
    let _ = writeln!(t, "{:<w$} {:>9}", "predicted hit@1", pct(p.hit_at_1));
    let b = &p.baselines;
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
        None => "n/a (no drift shards)".to_string(),
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
    let tr = &p.trust;
    if tr.trend_projected.is_finite() {
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
    for warning in &p.warnings {
        let _ = writeln!(t, "WARNING: {warning}");
    }
    t
}

fn iv(i: &Interval) -> Value {
    json!([i.lo, i.hi])
}

/// The full machine-readable report (fractions in [0, 1]; a negative zero prints as `0.0`,
/// see [`positive_zeros`]).
pub fn prediction_json(p: &Prediction) -> Value {
    let mut v = prediction_value(p);
    positive_zeros(&mut v);
    v
}

/// Replace every `-0.0` in a JSON tree by `0.0`. A metric such as an AP of 0 can come out of
/// the arithmetic as −0.0 (e.g. a zero times a negative weight); JSON readers keep the sign, and
/// a report that prints `-0.0` for "no positive retrieved" reads like an error.
pub fn positive_zeros(v: &mut Value) {
    match v {
        Value::Number(n)
            if n.as_f64() == Some(0.0) && n.as_f64().is_some_and(f64::is_sign_negative) =>
        {
            *v = json!(0.0);
        }
        Value::Array(a) => a.iter_mut().for_each(positive_zeros),
        Value::Object(o) => o.values_mut().for_each(positive_zeros),
        _ => {}
    }
}

fn prediction_value(p: &Prediction) -> Value {
    let b = &p.baselines;
    let queries: Vec<Value> = p
        .queries
        .iter()
        .map(|q| {
            json!({
                "query_id": q.query_id,
                "n_positives": q.n_positives,
                "ap_at_k": q.ap_at_k,
                "recall_at_k": q.recall_at_k,
                "hit_at_1": q.hit_at_1,
                "ap_at_k_count": q.ap_at_k_count,
                "ap_at_k_at_sample": q.ap_at_k_at_sample,
                "n_count": q.n_count,
                "n_tail": q.n_tail,
                "n_immune": q.n_immune,
                "tail": q.tail.map(|t| json!({
                    "u": t.u, "n_u": t.n_u, "sigma": t.fit.gpd.sigma, "xi": t.fit.gpd.xi,
                    "log_likelihood": t.fit.log_likelihood,
                })),
            })
        })
        .collect();
    json!({
        "tool_version": crate::TOOL_VERSION,
        "model": p.model,
        "query_set": p.query_set,
        "pool_size": p.pool_size,
        "sample_size": p.sample_size,
        "k": p.k,
        "n_queries": p.n_queries,
        "n_positives": p.n_positives,
        "options": {
            "estimator": p.options.estimator_name(),
            "estimator_options": p.options.estimator,
            "map": p.options.map,
            "bootstrap": p.options.bootstrap,
            "sample_noise": p.options.sample_noise,
            "confidence": p.options.confidence,
            "seed": p.options.seed,
        },
        "map_at_k": p.estimate,
        "map_at_k_std_error": p.std_error,
        "map_at_k_percentile_interval": iv(&p.percentile),
        "map_at_k_bca_interval": iv(&p.bca),
        "map_at_k_sample_noise_sd": p.sample_noise_sd,
        "map_at_k_crossed_interval": p.crossed.as_ref().map(iv),
        "map_at_k_total_interval": p.total.as_ref().map(iv),
        "map_at_k_interval_meanings": {
            "percentile_interval": "over other query sets (query bootstrap)",
            "bca_interval": "over other query sets (query bootstrap, BCa)",
            "realized_interval": "realized metric of these queries at N (pool-sample noise and tail-model error)",
        },
        "realized": p.realized.as_ref().map(|r| json!({
            "map_at_k_realized_interval": iv(&r.interval),
            "width": r.width(),
            "pool_sd": r.pool_sd,
            "pool_sd_shards": r.pool_sd_shards,
            "pool_sd_replicates": r.pool_sd_replicates,
            "other_map_map_at_k": r.other_map_estimate,
            "trend_shift": r.trend_shift,
        })),
        "trust": {
            "verdict": p.trust.verdict,
            "reason": p.trust.reason,
            "trend_per_doubling": p.trust.trend_per_doubling,
            "trend_projected": p.trust.trend_projected,
            "trend_std_error": p.trust.trend_std_error,
            "trend_fired": p.trust.trend_fired(),
            "in_sample_fired": p.trust.in_sample_fired(),
            "in_sample_used_level": p.trust.used().map(|u| u.level),
            "in_sample": p.trust.in_sample.iter().map(|c| json!({
                "level": c.level, "sample_size": c.sample_size,
                "predicted_map_at_k": c.predicted, "error": c.error,
                "std_error": c.std_error, "projected_error": c.projected_error,
            })).collect::<Vec<_>>(),
        },
        "recall_at_k": p.recall_at_k,
        "hit_at_1": p.hit_at_1,
        "baselines": {
            "evaluate_at_s_map_at_k": b.evaluate_at_s,
            "count_map_at_k": b.count,
            "power_law_map_at_k": b.power_law,
            "log_linear_map_at_k": b.log_linear,
            "level_calibrated": b.level_calibrated.map(|c| json!({
                "map_at_k": c.map_at_k, "recall_at_k": c.recall_at_k, "hit_at_1": c.hit_at_1,
            })),
            "level_points": b.level_points.iter().map(|l| json!({
                "subset": l.subset, "sample_size": l.sample_size, "map_at_k": l.map_at_k,
            })).collect::<Vec<_>>(),
        },
        "levels": p.levels.iter().map(|l| json!({
            "level": l.level, "subset": l.subset, "fraction": l.fraction,
            "sample_size": l.sample_size, "map_at_k": l.estimate,
            "map_at_k_std_error": l.std_error, "evaluate_at_s_map_at_k": l.evaluate_at_s,
        })).collect::<Vec<_>>(),
        "budget": p.budget.as_ref().map(|bu| json!({
            "sufficient": bu.sufficient,
            "first_sufficient_level": bu.first_sufficient_level,
            "first_sufficient_size": bu.first_sufficient_size,
            "steps": bu.steps.iter().map(|s| json!({
                "from_level": s.from_level, "to_level": s.to_level,
                "abs_diff_map_at_k": s.abs_diff, "map_at_k_std_error": s.std_error,
                "agrees": s.agrees,
            })).collect::<Vec<_>>(),
        })),
        "drift": p.drift.as_ref().map(|d| json!({
            "flagged": d.flagged, "rule": "max |z| > 3", "max_abs_z": d.max_abs_z,
            "chi2": d.chi2, "dof": d.dof,
            "shards": d.shards.iter().map(|s| json!({
                "subset": s.subset, "sample_size": s.sample_size, "map_at_k": s.estimate,
                "diff_map_at_k": s.diff, "diff_std_error": s.diff_std_error, "z": s.z,
            })).collect::<Vec<_>>(),
        })),
        "tail_report": {
            "positives": p.tail.positives,
            "by_count": p.tail.by_count,
            "by_tail": p.tail.by_tail,
            "immune": p.tail.immune,
            "queries_with_tail": p.tail.queries_with_tail,
            "xi_quartiles": p.tail.xi_quartiles,
            "xi_min": p.tail.xi_min,
            "xi_max": p.tail.xi_max,
        },
        "warnings": p.warnings,
        "queries": queries,
    })
}

#[cfg(test)]
mod zero_tests {
    use super::*;

    #[test]
    fn negative_zeros_print_as_zero() {
        let mut v = json!({"a": -0.0, "b": [1.0, -0.0, {"c": -0.0}], "d": -1.5, "e": 0});
        positive_zeros(&mut v);
        let text = serde_json::to_string(&v).unwrap();
        assert!(!text.contains("-0.0"), "{text}");
        assert_eq!(v["d"], json!(-1.5));
        assert_eq!(v["e"], json!(0));
        assert_eq!(v["b"][2]["c"].as_f64(), Some(0.0));
    }
}
