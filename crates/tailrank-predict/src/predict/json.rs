//! The JSON schema of a prediction report ([`PredictionJson`]): what `tailrank predict --json`
//! prints, the `prediction` of each set of `tailrank ilias --json`, `prediction.json` of the
//! demo and `tailrank.predict` in Python. Fractions in [0, 1] with the unit in the field name;
//! NaN becomes `null`, a negative zero `0.0`, and keys are sorted
//! (`formats::json::to_json_value`).

use super::calibrated::CalibratedMetrics;
use super::endpoint_test::{EndpointTest, ExcessCentre};
use super::hit_calibration::HitCalibration;
use super::spacing_test::{SpacingCentre, SpacingTest};
use super::{
    Baselines, Budget, Drift, FitChoice, Interval, LevelPoint, LevelPrediction, PredictOptions,
    Prediction, QueryPrediction, RealizedInterval, TailReport, Trust, Verdict,
};
use crate::formats::json::to_json_value;
use crate::hardness::{Estimator, HitScales};
use crate::maps::MapKind;
use serde::{Serialize, Serializer};
use serde_json::Value;

/// The full machine-readable report of a prediction: [`PredictionJson`] as a JSON value
/// (keys sorted, negative zeros as `0.0`: [`to_json_value`]).
pub fn prediction_json(p: &Prediction) -> Value {
    to_json_value(&PredictionJson::of(p))
}

/// Serialize a prediction as its report ([`prediction_json`]), for report types that hold a
/// [`Prediction`] (`#[serde(serialize_with = "crate::predict::json::serialize_prediction")]`).
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
    /// A scan of the whole pool at its own size (`Prediction::is_exact_scan`): the exact
    /// metrics are the `baselines.evaluate_at_s_*`.
    exact_scan: bool,
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
    /// The move to the centre of the endpoint test's shrunk excess (`excess_rate`: `r_w`,
    /// `weight`: `w`, `unmoved_map_at_k`: the tail model's own estimate, `shift`); null when
    /// the estimate is the tail model's own (`w = 0`).
    excess_centre: Option<&'a ExcessCentre>,
    /// The move of mAP@k to the centre of the rare items above the top positive
    /// (`rate_above`: `r_a`, `weight`: `w_move(z)`, `unmoved_map_at_k`: the tail model's own
    /// estimate, `shift`); null when the top-spacing test made none.
    spacing_centre: Option<&'a SpacingCentre>,
    trust: TrustJson<'a>,
    recall_at_k: f64,
    hit_at_1: f64,
    /// hit@1's calibration on the nested levels (`scales`: `tail`, `immune`; the level cases
    /// `tail_cases`, `tail_hits`, `immune_cases`, `immune_hits`; `uncalibrated_hit_at_1`);
    /// null without levels.
    hit_calibration: Option<&'a HitCalibration>,
    /// The hit@1 scales applied (the calibration's, or a hardness file's); null: the count
    /// law's own hit@1.
    hit_scales: Option<&'a HitScales>,
    baselines: BaselinesJson<'a>,
    levels: Vec<LevelJson>,
    budget: Option<BudgetJson>,
    drift: Option<DriftJson>,
    tail_report: &'a TailReport,
    warnings: &'a [String],
    queries: Vec<QueryJson<'a>>,
    /// What to do next (`action`, `message`, `fraction`, `projected_width`, `commands`).
    next_step: &'a super::NextStep,
}

/// The prediction options as reported: the estimator by name and with its options.
#[derive(Serialize)]
struct OptionsJson<'a> {
    estimator: &'static str,
    estimator_options: &'a Estimator,
    map: &'a MapKind,
    fit: &'static str,
    excess_centre: bool,
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
    fit_choice_map_at_k: Option<f64>,
    /// `r_fit`, the cap on the reach towards the other fit (null: not capped).
    fit_choice_reach: Option<f64>,
    level_calibrated_map_at_k: Option<f64>,
    excess_mass_map_at_k: Option<f64>,
    /// The count reading, spanned when the last doubling left the sample unsettled.
    count_map_at_k: Option<f64>,
    /// The reading of rare items above the top positive, in full, and the weight `w(z)` of
    /// the reach towards it (spanned: the tail model's value moved by that share of it).
    spacing_above_map_at_k: Option<f64>,
    spacing_above_weight: Option<f64>,
    /// The levels' highest prediction at N, spanned when the estimate is lowest at level 0 (of
    /// levels 0–2).
    levels_high_map_at_k: Option<f64>,
    trend_shift: f64,
    /// The evaluate-at-S value when it capped the upper end (an upper bound of the metric at N).
    capped_at_evaluate_at_s: Option<f64>,
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
    fit_choice_shift: Option<f64>,
    fit_choice_fired: bool,
    level_rises: Option<[f64; 2]>,
    falling_fired: bool,
    endpoint: Option<&'a EndpointTest>,
    endpoint_fired: bool,
    spacing: Option<&'a SpacingTest>,
    spacing_fired: bool,
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
    evaluate_at_s_recall_at_k: f64,
    evaluate_at_s_hit_at_1: f64,
    count_map_at_k: f64,
    power_law_map_at_k: Option<f64>,
    log_linear_map_at_k: Option<f64>,
    level_calibrated: Option<CalibratedMetrics>,
    level_selected: Option<&'a FitChoice>,
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
    rule: String,
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
        PredictionJson {
            tool_version: crate::TOOL_VERSION,
            model: &p.model,
            query_set: &p.query_set,
            pool_size: p.pool_size,
            sample_size: p.sample_size,
            exact_scan: p.is_exact_scan(),
            k: p.k,
            n_queries: p.n_queries,
            n_positives: p.n_positives,
            options: OptionsJson::of(&p.options),
            map_at_k: p.estimate,
            map_at_k_std_error: p.std_error,
            map_at_k_percentile_interval: pair(&p.percentile),
            map_at_k_bca_interval: pair(&p.bca),
            map_at_k_sample_noise_sd: p.sample_noise_sd,
            map_at_k_crossed_interval: p.crossed.as_ref().map(pair),
            map_at_k_total_interval: p.total.as_ref().map(pair),
            map_at_k_interval_meanings: INTERVAL_MEANINGS,
            excess_centre: p.excess_centre.as_ref(),
            spacing_centre: p.spacing_centre.as_ref(),
            next_step: &p.next_step,
            realized: p.realized.as_ref().map(RealizedJson::of),
            trust: TrustJson::of(&p.trust),
            recall_at_k: p.recall_at_k,
            hit_at_1: p.hit_at_1,
            hit_calibration: p.hit_calibration.as_ref(),
            hit_scales: p.hit_scales.as_ref(),
            baselines: BaselinesJson::of(&p.baselines),
            levels: p.levels.iter().map(LevelJson::of).collect(),
            budget: p.budget.as_ref().map(BudgetJson::of),
            drift: p.drift.as_ref().map(DriftJson::of),
            tail_report: &p.tail,
            warnings: &p.warnings,
            queries: p.queries.iter().map(QueryJson::of).collect(),
        }
    }
}

impl<'a> OptionsJson<'a> {
    fn of(o: &'a PredictOptions) -> Self {
        OptionsJson {
            estimator: o.estimator_name(),
            estimator_options: &o.estimator,
            map: &o.map,
            fit: o.fit.as_str(),
            excess_centre: o.excess_centre,
            bootstrap: o.bootstrap,
            sample_noise: o.sample_noise,
            confidence: o.confidence,
            seed: o.seed,
        }
    }
}

impl RealizedJson {
    fn of(r: &RealizedInterval) -> Self {
        RealizedJson {
            map_at_k_realized_interval: pair(&r.interval),
            width: r.width(),
            pool_sd: r.pool_sd,
            pool_sd_shards: r.pool_sd_shards,
            pool_sd_replicates: r.pool_sd_replicates,
            other_map_map_at_k: r.other_map_estimate,
            fit_choice_map_at_k: r.fit_choice_estimate,
            fit_choice_reach: r.fit_choice_reach,
            level_calibrated_map_at_k: r.calibrated_estimate,
            excess_mass_map_at_k: r.excess_mass_estimate,
            count_map_at_k: r.count_estimate,
            spacing_above_map_at_k: r.spacing_above.map(|a| a.estimate),
            spacing_above_weight: r.spacing_above.map(|a| a.weight()),
            levels_high_map_at_k: r.levels_high.map(|l| l.estimate),
            trend_shift: r.trend_shift,
            capped_at_evaluate_at_s: r.ceiling,
        }
    }
}

impl<'a> TrustJson<'a> {
    /// The verdict with its statistics and which tests fired.
    fn of(t: &'a Trust) -> Self {
        TrustJson {
            verdict: t.verdict,
            reason: &t.reason,
            trend_per_doubling: t.trend_per_doubling,
            trend_projected: t.trend_projected,
            trend_std_error: t.trend_std_error,
            trend_fired: t.trend_fired(),
            in_sample_fired: t.in_sample_fired(),
            in_sample_used_level: t.used().map(|u| u.level),
            fit_choice_shift: t.fit_choice_shift,
            fit_choice_fired: t.fit_choice_fired(),
            level_rises: t.level_rises,
            falling_fired: t.falling_fired(),
            endpoint: t.endpoint.as_ref(),
            endpoint_fired: t.endpoint_fired(),
            spacing: t.spacing.as_ref(),
            spacing_fired: t.spacing_fired(),
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
        }
    }
}

impl<'a> BaselinesJson<'a> {
    fn of(b: &'a Baselines) -> Self {
        BaselinesJson {
            evaluate_at_s_map_at_k: b.evaluate_at_s,
            evaluate_at_s_recall_at_k: b.evaluate_at_s_recall_at_k,
            evaluate_at_s_hit_at_1: b.evaluate_at_s_hit_at_1,
            count_map_at_k: b.count,
            power_law_map_at_k: b.power_law,
            log_linear_map_at_k: b.log_linear,
            level_calibrated: b.level_calibrated,
            level_selected: b.level_selected.as_ref(),
            level_points: &b.level_points,
        }
    }
}

impl LevelJson {
    fn of(l: &LevelPrediction) -> Self {
        LevelJson {
            level: l.level,
            subset: l.subset,
            fraction: l.fraction,
            sample_size: l.sample_size,
            map_at_k: l.estimate,
            map_at_k_std_error: l.std_error,
            evaluate_at_s_map_at_k: l.evaluate_at_s,
        }
    }
}

impl BudgetJson {
    fn of(bu: &Budget) -> Self {
        BudgetJson {
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
        }
    }
}

impl DriftJson {
    fn of(d: &Drift) -> Self {
        DriftJson {
            flagged: d.flagged,
            rule: format!("max |z| > {}", super::stats::Z_CRIT),
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
        }
    }
}

impl<'a> QueryJson<'a> {
    fn of(q: &'a QueryPrediction) -> Self {
        QueryJson {
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
        }
    }
}
