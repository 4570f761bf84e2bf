//! The prediction report (`tailrank predict`): the human table and the JSON schema
//! ([`PredictionJson`]).

use super::{pct, pct_opt, share, thousands, to_json_value};
use crate::hardness::Estimator;
use crate::maps::MapKind;
use crate::predict::calibrated::CalibratedMetrics;
use crate::predict::{Interval, LevelPoint, Prediction, TailReport, Verdict};
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::fmt::Write;

fn interval(i: &Interval) -> String {
    format!("[{}, {}]", pct(i.lo), pct(i.hi))
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

/// The full machine-readable report of a prediction: [`PredictionJson`] as a JSON value
/// (keys sorted, negative zeros as `0.0`: [`to_json_value`]).
pub fn prediction_json(p: &Prediction) -> Value {
    to_json_value(&PredictionJson::of(p))
}

/// Serialize a prediction as its report ([`prediction_json`]), for report types that hold a
/// [`Prediction`] (`#[serde(serialize_with = ...)]`).
pub fn serialize_prediction<S: Serializer>(
    p: &Option<Prediction>,
    s: S,
) -> Result<S::Ok, S::Error> {
    p.as_ref().map(prediction_json).serialize(s)
}

/// `[lo, hi]` of an interval.
fn pair(i: &Interval) -> [f64; 2] {
    [i.lo, i.hi]
}

/// What each interval of the report covers (a fixed text, printed with every report).
#[derive(Serialize)]
struct IntervalMeanings {
    percentile_interval: &'static str,
    bca_interval: &'static str,
    realized_interval: &'static str,
}

const INTERVAL_MEANINGS: IntervalMeanings = IntervalMeanings {
    percentile_interval: "over other query sets (query bootstrap)",
    bca_interval: "over other query sets (query bootstrap, BCa)",
    realized_interval:
        "realized metric of these queries at N (pool-sample noise and tail-model error)",
};

/// The JSON schema of a prediction report (`tailrank predict --json`, the `prediction` of
/// each set of `tailrank ilias --json`, `tailrank.predict` in Python). Field names carry the
/// unit: `map_at_k*` are fractions of mAP@k; intervals are `[lo, hi]`.
#[derive(Serialize)]
pub struct PredictionJson<'a> {
    tool_version: &'static str,
    model: &'a str,
    query_set: &'a str,
    pool_size: u64,
    sample_size: u64,
    k: usize,
    n_queries: usize,
    n_positives: usize,
    options: OptionsJson<'a>,
    map_at_k: f64,
    map_at_k_std_error: f64,
    map_at_k_percentile_interval: [f64; 2],
    map_at_k_bca_interval: [f64; 2],
    map_at_k_sample_noise_sd: Option<f64>,
    map_at_k_crossed_interval: Option<[f64; 2]>,
    map_at_k_total_interval: Option<[f64; 2]>,
    map_at_k_interval_meanings: IntervalMeanings,
    realized: Option<RealizedJson>,
    trust: TrustJson<'a>,
    recall_at_k: f64,
    hit_at_1: f64,
    baselines: BaselinesJson<'a>,
    levels: Vec<LevelJson>,
    budget: Option<BudgetJson>,
    drift: Option<DriftJson>,
    tail_report: &'a TailReport,
    warnings: &'a [String],
    queries: Vec<QueryJson<'a>>,
}

/// The prediction options as reported: the estimator by name and with its options.
#[derive(Serialize)]
struct OptionsJson<'a> {
    estimator: &'static str,
    estimator_options: &'a Estimator,
    map: &'a MapKind,
    bootstrap: usize,
    sample_noise: usize,
    confidence: f64,
    seed: u64,
}

#[derive(Serialize)]
struct RealizedJson {
    map_at_k_realized_interval: [f64; 2],
    width: f64,
    pool_sd: f64,
    pool_sd_shards: Option<f64>,
    pool_sd_replicates: Option<f64>,
    other_map_map_at_k: f64,
    trend_shift: f64,
}

#[derive(Serialize)]
struct TrustJson<'a> {
    verdict: Verdict,
    reason: &'a str,
    trend_per_doubling: f64,
    trend_projected: f64,
    trend_std_error: f64,
    trend_fired: bool,
    in_sample_fired: bool,
    in_sample_used_level: Option<usize>,
    in_sample: Vec<InSampleJson>,
}

#[derive(Serialize)]
struct InSampleJson {
    level: usize,
    sample_size: u64,
    predicted_map_at_k: f64,
    error: f64,
    std_error: f64,
    projected_error: f64,
}

#[derive(Serialize)]
struct BaselinesJson<'a> {
    evaluate_at_s_map_at_k: f64,
    count_map_at_k: f64,
    power_law_map_at_k: Option<f64>,
    log_linear_map_at_k: Option<f64>,
    level_calibrated: Option<CalibratedMetrics>,
    level_points: &'a [LevelPoint],
}

#[derive(Serialize)]
struct LevelJson {
    level: usize,
    subset: usize,
    fraction: f64,
    sample_size: u64,
    map_at_k: f64,
    map_at_k_std_error: f64,
    evaluate_at_s_map_at_k: f64,
}

#[derive(Serialize)]
struct BudgetJson {
    sufficient: bool,
    first_sufficient_level: Option<usize>,
    first_sufficient_size: Option<u64>,
    steps: Vec<BudgetStepJson>,
}

#[derive(Serialize)]
struct BudgetStepJson {
    from_level: usize,
    to_level: usize,
    abs_diff_map_at_k: f64,
    map_at_k_std_error: f64,
    agrees: bool,
}

#[derive(Serialize)]
struct DriftJson {
    flagged: bool,
    /// The flagging rule, as text.
    rule: &'static str,
    max_abs_z: f64,
    chi2: f64,
    dof: usize,
    shards: Vec<ShardJson>,
}

#[derive(Serialize)]
struct ShardJson {
    subset: usize,
    sample_size: u64,
    map_at_k: f64,
    diff_map_at_k: f64,
    diff_std_error: f64,
    z: f64,
}

#[derive(Serialize)]
struct QueryJson<'a> {
    query_id: &'a str,
    n_positives: usize,
    ap_at_k: f64,
    recall_at_k: f64,
    hit_at_1: f64,
    ap_at_k_count: f64,
    ap_at_k_at_sample: f64,
    n_count: usize,
    n_tail: usize,
    n_immune: usize,
    tail: Option<TailJson>,
}

/// A query's fitted tail: threshold `u`, exceedances `n_u`, GPD scale `sigma` and shape `xi`.
#[derive(Serialize)]
struct TailJson {
    u: f64,
    n_u: usize,
    sigma: f64,
    xi: f64,
    log_likelihood: f64,
}

impl<'a> PredictionJson<'a> {
    /// The report of `p`.
    pub fn of(p: &'a Prediction) -> Self {
        let b = &p.baselines;
        let t = &p.trust;
        PredictionJson {
            tool_version: crate::TOOL_VERSION,
            model: &p.model,
            query_set: &p.query_set,
            pool_size: p.pool_size,
            sample_size: p.sample_size,
            k: p.k,
            n_queries: p.n_queries,
            n_positives: p.n_positives,
            options: OptionsJson {
                estimator: p.options.estimator_name(),
                estimator_options: &p.options.estimator,
                map: &p.options.map,
                bootstrap: p.options.bootstrap,
                sample_noise: p.options.sample_noise,
                confidence: p.options.confidence,
                seed: p.options.seed,
            },
            map_at_k: p.estimate,
            map_at_k_std_error: p.std_error,
            map_at_k_percentile_interval: pair(&p.percentile),
            map_at_k_bca_interval: pair(&p.bca),
            map_at_k_sample_noise_sd: p.sample_noise_sd,
            map_at_k_crossed_interval: p.crossed.as_ref().map(pair),
            map_at_k_total_interval: p.total.as_ref().map(pair),
            map_at_k_interval_meanings: INTERVAL_MEANINGS,
            realized: p.realized.as_ref().map(|r| RealizedJson {
                map_at_k_realized_interval: pair(&r.interval),
                width: r.width(),
                pool_sd: r.pool_sd,
                pool_sd_shards: r.pool_sd_shards,
                pool_sd_replicates: r.pool_sd_replicates,
                other_map_map_at_k: r.other_map_estimate,
                trend_shift: r.trend_shift,
            }),
            trust: TrustJson {
                verdict: t.verdict,
                reason: &t.reason,
                trend_per_doubling: t.trend_per_doubling,
                trend_projected: t.trend_projected,
                trend_std_error: t.trend_std_error,
                trend_fired: t.trend_fired(),
                in_sample_fired: t.in_sample_fired(),
                in_sample_used_level: t.used().map(|u| u.level),
                in_sample: t
                    .in_sample
                    .iter()
                    .map(|c| InSampleJson {
                        level: c.level,
                        sample_size: c.sample_size,
                        predicted_map_at_k: c.predicted,
                        error: c.error,
                        std_error: c.std_error,
                        projected_error: c.projected_error,
                    })
                    .collect(),
            },
            recall_at_k: p.recall_at_k,
            hit_at_1: p.hit_at_1,
            baselines: BaselinesJson {
                evaluate_at_s_map_at_k: b.evaluate_at_s,
                count_map_at_k: b.count,
                power_law_map_at_k: b.power_law,
                log_linear_map_at_k: b.log_linear,
                level_calibrated: b.level_calibrated,
                level_points: &b.level_points,
            },
            levels: p
                .levels
                .iter()
                .map(|l| LevelJson {
                    level: l.level,
                    subset: l.subset,
                    fraction: l.fraction,
                    sample_size: l.sample_size,
                    map_at_k: l.estimate,
                    map_at_k_std_error: l.std_error,
                    evaluate_at_s_map_at_k: l.evaluate_at_s,
                })
                .collect(),
            budget: p.budget.as_ref().map(|bu| BudgetJson {
                sufficient: bu.sufficient,
                first_sufficient_level: bu.first_sufficient_level,
                first_sufficient_size: bu.first_sufficient_size,
                steps: bu
                    .steps
                    .iter()
                    .map(|s| BudgetStepJson {
                        from_level: s.from_level,
                        to_level: s.to_level,
                        abs_diff_map_at_k: s.abs_diff,
                        map_at_k_std_error: s.std_error,
                        agrees: s.agrees,
                    })
                    .collect(),
            }),
            drift: p.drift.as_ref().map(|d| DriftJson {
                flagged: d.flagged,
                rule: "max |z| > 3",
                max_abs_z: d.max_abs_z,
                chi2: d.chi2,
                dof: d.dof,
                shards: d
                    .shards
                    .iter()
                    .map(|s| ShardJson {
                        subset: s.subset,
                        sample_size: s.sample_size,
                        map_at_k: s.estimate,
                        diff_map_at_k: s.diff,
                        diff_std_error: s.diff_std_error,
                        z: s.z,
                    })
                    .collect(),
            }),
            tail_report: &p.tail,
            warnings: &p.warnings,
            queries: p
                .queries
                .iter()
                .map(|q| QueryJson {
                    query_id: &q.query_id,
                    n_positives: q.n_positives,
                    ap_at_k: q.ap_at_k,
                    recall_at_k: q.recall_at_k,
                    hit_at_1: q.hit_at_1,
                    ap_at_k_count: q.ap_at_k_count,
                    ap_at_k_at_sample: q.ap_at_k_at_sample,
                    n_count: q.n_count,
                    n_tail: q.n_tail,
                    n_immune: q.n_immune,
                    tail: q.tail.map(|t| TailJson {
                        u: t.u,
                        n_u: t.n_u,
                        sigma: t.fit.gpd.sigma,
                        xi: t.fit.gpd.xi,
                        log_likelihood: t.fit.log_likelihood,
                    }),
                })
                .collect(),
        }
    }
}
