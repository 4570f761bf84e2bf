//! Prediction of the full-pool metric from a sample summary (docs/method.md §7–9): the estimate, the
//! baselines beside it, query bootstrap and sample-noise intervals, the sufficient-budget and
//! drift diagnostics, and the tail report.
//!
//! Pipeline for a summary `s` with level-0 sample size `S = s.subset_sizes[0]` and target pool
//! size `N` (`--pool-size`, else `s.pool_size`; `N ≥ S` required):
//!
//! 1. hardness `x̂_{q,j}` from subset 0 with the chosen estimator (`hardness::estimate_summary`);
//! 2. per-query `AP@k(q; N)` through the map (`maps::ap_at_k`), `mAP@k = mean_q AP@k(q; N)`;
//!    likewise Recall@k and hit@1;
//! 3. baselines ([`baselines`]), query bootstrap and sample noise ([`bootstrap`]), budget, drift
//!    and tail report ([`diagnostics`]), put together by `assemble` (`predict/assemble.rs`) in
//!    stages: baselines, levels and verdict, estimate, intervals.
//!
//! Every metric value is a fraction in [0, 1].

mod assemble;
pub mod baselines;
pub mod bootstrap;
pub mod calibrated;
pub mod compare;
pub mod curve;
pub mod diagnostics;
pub mod endpoint_test;
pub mod fit_choice;
pub mod hit_calibration;
pub mod input;
pub mod json;
pub mod next_step;
pub mod query_hardness;
pub mod reach;
pub mod realized;
pub mod sample_size;
pub mod spacing_test;
pub mod stats;
pub mod survivor_decay;
pub mod trust;

use assemble::{assemble, Carried, SummaryParts};
pub use baselines::{Baselines, LevelPoint};
pub use curve::{curve, curve_from_hardness, Curve, CurvePoint};
pub use diagnostics::{Budget, Drift, LevelPrediction, ShardPrediction, TailReport};
pub use fit_choice::{FitChoice, FitMode};
pub use input::{read_summary_for_metrics, PredictInput, PredictRequest};
pub use next_step::{NextStep, NextStepPlan};
pub use query_hardness::{
    count_hardness, estimate_query_for_metric, hardness_for, hardness_for_metric, per_query_ap,
};
pub use realized::RealizedInterval;
pub use sample_size::{check_sample_size, sample_needed, sample_size_warnings, sample_warnings};
pub use stats::Interval;
pub use trust::{Check, Trust, Verdict};

use crate::error::{Error, Result};
use crate::hardness::{self, Estimator, EvtOptions, HardnessMeta, QueryHardness, QueryTail};
use crate::maps::MapKind;
use crate::summary::{Summary, SUMMARY_FORMAT_VERSION};
use serde::{Deserialize, Serialize};

/// Options of [`predict`] and [`predict_from_hardness`] (defaults: [`PredictOptions::DEFAULT`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PredictOptions {
    /// Target pool size N; overrides the summary's (or hardness file's) N.
    pub pool_size: Option<u64>,
    /// Cut-off k of mAP@k.
    pub k: usize,
    /// Hardness estimator.
    pub estimator: Estimator,
    /// Hardness-to-metric map.
    pub map: MapKind,
    /// Which evt fit gives the estimate: the level-selected one (the default), or the options'
    /// own (`docs/notes/2026-12-estimator-log.md`, "The level-selected fit"). Files from before this field read
    /// as the options' own, which is what they ran.
    #[serde(default)]
    pub fit: FitMode,
    /// Query-bootstrap replicates B (0 disables the intervals, which are then NaN).
    pub bootstrap: usize,
    /// Sample-noise replicates (0 = off). Needs a summary (top-M scores).
    pub sample_noise: usize,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Seed of every random draw (bootstrap indices, Poisson weights).
    pub seed: u64,
    /// Move the estimate (mAP@k, Recall@k, hit@1) to the centre of the endpoint test's shrunk
    /// excess at its survivor-decayed rate (docs/method.md §9). On by default: a diffuse
    /// excess (a rare component above the main tail) moves it, a concentrated one (bursts,
    /// hubs, real vector geometry) decays and barely does (`docs/notes/2026-12-estimator-log.md`, "Survivor
    /// decay"). Also moves mAP@k to the centre of the rare items above the top positive that
    /// the top-spacing test reads (`spacing_test::SpacingCentre`, from z = 3). Off, the
    /// estimate is the tail model's own (the paper's).
    #[serde(default)]
    pub excess_centre: bool,
}

impl PredictOptions {
    /// The defaults, stated once (the CLI and Python signatures read them from here): N from
    /// the input, k = 1000, the tail-aware estimator with [`EvtOptions::DEFAULT`] as the other
    /// opinion and the level-selected fit as the estimate's ([`FitMode::LevelSelected`]), the
    /// expected-rank map (the paper's), B = 1000 query-bootstrap replicates, 50 sample-noise
    /// replicates (2.5–4.1 s on ILIAS-sized summaries, `docs/reference/performance.md`),
    /// confidence 0.95, seed 0, the estimate moved to the centre of the decayed excess.
    pub const DEFAULT: PredictOptions = PredictOptions {
        pool_size: None,
        k: crate::metric::DEFAULT_K,
        estimator: Estimator::Evt(EvtOptions::DEFAULT),
        map: MapKind::ExpectedRank,
        fit: FitMode::LevelSelected,
        bootstrap: 1000,
        sample_noise: 50,
        confidence: 0.95,
        seed: 0,
        excess_centre: true,
    };

    /// [`PredictOptions::DEFAULT`] with the estimator named `estimator` (`Estimator::NAMES`,
    /// with `evt` for the tail-aware one) and the map named `map` (`MapKind::NAMES`): how the
    /// front ends turn their names into options.
    pub fn named(estimator: &str, evt: EvtOptions, map: &str) -> Result<PredictOptions> {
        Ok(PredictOptions {
            estimator: Estimator::named(estimator, evt)?,
            map: map.parse()?,
            ..PredictOptions::DEFAULT
        })
    }
}

impl Default for PredictOptions {
    fn default() -> Self {
        PredictOptions::DEFAULT
    }
}

/// Fewest replicates that give an interval, for the query bootstrap (B) and the sample noise
/// (R); 0 turns either off. The ends of a percentile interval at confidence c are the
/// (1 ± c)/2 quantiles of the replicates, interpolated between order statistics: with B = 1
/// both ends are the one replicate, with B = 2 the interval lies between two resamples and
/// excludes the estimate about half the time, and below 20 the ends sit among the one or two
/// most extreme replicates, so the interval can exclude the estimate by construction rather
/// than by chance. From B = 20 on, a replicate distribution centred on the estimate puts it
/// outside the interval with probability below (B + 1)/2^B per side (2·10⁻⁵ at B = 20).
pub const MIN_REPLICATES: usize = 20;

/// Most replicates of either kind a prediction draws. The Monte Carlo error of an interval's
/// end falls as 1/√B, so past 10⁶ it is far below any reading of the report, while the
/// replicates' memory (tens of bytes each) and time grow without bound.
pub const MAX_REPLICATES: usize = 1_000_000;

/// For a summary scanned at f = 1: whether it holds the whole pool of `n` items (`S_0 ≥ n`,
/// its metrics exact) or only part of it (one shard of an exact scan); None below f = 1.
pub fn exact_scan(s: &Summary, n: u64) -> Option<bool> {
    let s0 = s.subset_sizes.first().copied().unwrap_or(0);
    (s.fraction >= 1.0).then_some(s0 >= n)
}

/// Warnings about what summary `s` is, for a prediction at pool size `n` with estimator
/// `est`: a summary scanned at f = 1 is no hash sample (with `S_0 < n` it is a part of the
/// pool, such as one shard of an exact scan; with `S_0 = n` its metrics are known exactly),
/// and evt fits no tail when the summary keeps fewer than 2 top scores per list.
pub fn summary_warnings(s: &Summary, n: u64, est: &Estimator) -> Vec<String> {
    let mut out = Vec::new();
    let s0 = s.subset_sizes.first().copied().unwrap_or(0);
    if exact_scan(s, n) == Some(false) {
        out.push(format!(
            "the summary was scanned at f = 1 but holds S = {s0} of N = {n} pool items: it is a \
             part of the pool (one shard of an exact scan?), not a hash sample, so nothing says \
             it is a uniform one; merge the shards (`tailrank merge`) for the exact metrics, or \
             scan with a sampling fraction below 1 (`--fraction`, Python `fraction=`) for a prediction"
        ));
    } else if exact_scan(s, n) == Some(true) {
        out.push(format!(
            "the summary is an exact scan (f = 1, S = N = {n}): its metrics are known exactly \
             (`tailrank eval --summary`); this prediction is the model's reading of them"
        ));
    }
    if matches!(est, Estimator::Evt(_)) && s.top_m < 2 {
        out.push(format!(
            "the summary keeps only the top M = {} pool score(s) per query and subset, and the \
             tail fit needs at least 2: no tail is fitted, so the evt estimate is the count \
             baseline; scan again with a larger top M (`--top-m`, Python `top_m=`)",
            s.top_m
        ));
    }
    out
}

/// Refuse an estimator M above the M stored in summary `s`, read from `dir` (the tail would be
/// fitted on fewer scores than asked for, silently): used where M was chosen explicitly.
pub fn check_top_m(s: &Summary, dir: &std::path::Path, top_m: usize) -> Result<()> {
    s.check_fit_top(Some(top_m), true, Some(dir))
}

impl PredictOptions {
    /// Check the options: k ≥ 1, confidence in (0, 1), evt quantile in (0, 1) and M ≥ 2, and
    /// replicate counts (bootstrap, sample noise) 0 or in [[`MIN_REPLICATES`], [`MAX_REPLICATES`]].
    pub fn check(&self) -> Result<()> {
        if self.k == 0 {
            return Err(Error::option("k must be at least 1"));
        }
        for (what, flag, n) in [
            (
                "query-bootstrap replicates B",
                "`--bootstrap`, Python `bootstrap=`",
                self.bootstrap,
            ),
            (
                "sample-noise replicates",
                "`--sample-noise`, Python `sample_noise=`",
                self.sample_noise,
            ),
        ] {
            if n > 0 && n < MIN_REPLICATES {
                return Err(Error::option(format!(
                    "{what} = {n} are too few for an interval ({flag}): give 0 (no interval) \
                     or at least {MIN_REPLICATES} (with fewer, the interval's ends are the most \
                     extreme replicates and it can exclude the estimate)"
                )));
            }
            if n > MAX_REPLICATES {
                return Err(Error::option(format!(
                    "{what} = {n} are more than the {MAX_REPLICATES} a prediction draws at \
                     most ({flag}; past that the interval's ends no longer move, while the \
                     memory and the time keep growing)"
                )));
            }
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::option(format!(
                "confidence must be in (0, 1), got {}",
                self.confidence
            )));
        }
        if let Some(why) = match self.estimator {
            Estimator::Evt(e) => e.range_error(),
            Estimator::Count => None,
        } {
            return Err(Error::option(why));
        }
        Ok(())
    }

    /// Short name of the estimator (`evt` or `count`).
    pub fn estimator_name(&self) -> &'static str {
        self.estimator.name()
    }
}

/// Per-query values at N (level 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryPrediction {
    pub query_id: String,
    pub n_positives: usize,
    /// Predicted AP@k at N.
    pub ap_at_k: f64,
    pub recall_at_k: f64,
    pub hit_at_1: f64,
    /// Count-hardness AP@k at N (baseline).
    pub ap_at_k_count: f64,
    /// Exact AP@k on the sample gallery (baseline evaluate-at-S).
    pub ap_at_k_at_sample: f64,
    /// The query's fitted tail (u, σ, ξ, n_u), when the estimator fitted one.
    pub tail: Option<QueryTail>,
    /// Positives resolved by count, by tail and as immune.
    pub n_count: usize,
    pub n_tail: usize,
    pub n_immune: usize,
}

/// The prediction of mAP@k at pool size N, with everything reported beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub model: String,
    pub query_set: String,
    /// N, the pool size predicted for.
    pub pool_size: u64,
    /// S, the level-0 sample size.
    pub sample_size: u64,
    pub k: usize,
    pub n_queries: usize,
    pub n_positives: usize,
    /// Predicted mAP@k at N (fraction).
    pub estimate: f64,
    /// Query-bootstrap standard error (sd of the B replicate means).
    pub std_error: f64,
    /// Query-bootstrap percentile interval.
    pub percentile: Interval,
    /// Query-bootstrap BCa interval (jackknife acceleration).
    pub bca: Interval,
    /// Extra spread from the pool sample (sd of the sample-noise replicates without query
    /// resampling); None when off or unavailable (hardness input).
    pub sample_noise_sd: Option<f64>,
    /// Percentile interval of the crossed (Poisson pool weights × query resampling) replicates.
    pub crossed: Option<Interval>,
    /// Total interval: the percentile interval widened in quadrature by `z·sample_noise_sd`
    /// on each side: `est ∓ √((est − end)² + (z·sd)²)`.
    pub total: Option<Interval>,
    /// Interval for the realized metric of these queries at N (pool-sample noise and
    /// tail-model error only, no query sampling: [`realized`]); None without shards and
    /// sample noise (e.g. from a hardness file).
    pub realized: Option<RealizedInterval>,
    /// The estimate's move to the centre of the endpoint test's excess, when the test fired
    /// (docs/method.md §9); the estimate, Recall@k, hit@1 and the per-query values are then
    /// the moved ones, and the tail model's own mAP@k is here.
    pub excess_centre: Option<endpoint_test::ExcessCentre>,
    /// The move of mAP@k to the centre of the rare items above the top positive, when the
    /// top-spacing test made one (docs/method.md §9; under `PredictOptions::excess_centre`).
    #[serde(default)]
    pub spacing_centre: Option<spacing_test::SpacingCentre>,
    pub baselines: Baselines,
    /// Mean predicted Recall@k at N.
    pub recall_at_k: f64,
    /// Mean predicted hit@1 at N (calibrated on the levels when `hit_scales` is given,
    /// docs/method.md §7).
    pub hit_at_1: f64,
    /// hit@1's calibration on the nested levels: the scales and the level cases behind them
    /// (None without levels, e.g. from a hardness file).
    #[serde(default)]
    pub hit_calibration: Option<hit_calibration::HitCalibration>,
    /// The hit@1 scales applied: the calibration's, or those a hardness file carries (None:
    /// the count law's own hit@1).
    #[serde(default)]
    pub hit_scales: Option<hardness::HitScales>,
    /// Prediction at each nesting level (level 0 first); empty from a hardness file.
    pub levels: Vec<LevelPrediction>,
    /// Sufficient-budget verdict; None with fewer than 2 levels.
    pub budget: Option<Budget>,
    /// Drift check over the hash shards; None without shards.
    pub drift: Option<Drift>,
    pub tail: TailReport,
    /// Trust verdict ([`trust`]): paired level tests and input checks.
    pub trust: Trust,
    /// What to do next: grow the sample, and to which fraction ([`next_step`]).
    #[serde(default)]
    pub next_step: NextStep,
    /// Warnings about the input that the numbers above do not show (the sample-size rule of
    /// [`check_sample_size`]); printed with the table and in the JSON report.
    #[serde(default)]
    pub warnings: Vec<String>,
    pub queries: Vec<QueryPrediction>,
    pub options: PredictOptions,
    /// Level-0 hardness the estimate came from (for `--hardness-out`).
    #[serde(skip)]
    pub hardness: Vec<QueryHardness>,
}

impl Prediction {
    /// Whether the prediction came from a scan of the whole pool ([`exact_scan`] of its
    /// summary: f = 1 and `S ≥ N`), whose metrics are known exactly (evaluate-at-S).
    pub fn is_exact_scan(&self) -> bool {
        self.sample_size >= self.pool_size && self.levels.first().is_some_and(|l| l.fraction >= 1.0)
    }

    /// mAP@k at N of the tail model the estimate rests on, before any move to the centre of
    /// the excess or of the rare items above the top positive.
    pub fn model_estimate(&self) -> f64 {
        match (self.excess_centre, self.spacing_centre) {
            (Some(c), _) => c.unmoved_map_at_k,
            (None, Some(c)) => c.unmoved_map_at_k,
            (None, None) => self.estimate,
        }
    }

    /// The estimate's two moves as a hardness file and a curve carry them: the centre of the
    /// excess with its rate's reference N (this prediction's pool size) and the centre of the
    /// rare items above the top positive.
    pub fn carried_moves(&self) -> (Option<hardness::ExcessMove>, Option<hardness::SpacingMove>) {
        let excess = self.excess_centre.map(|c| hardness::ExcessMove {
            rate: c.excess_rate,
            weight: c.weight,
            decay: c.hazard_decay,
            pool_size: Some(self.pool_size),
        });
        (excess, self.spacing_centre.map(|c| c.carried()))
    }

    /// mAP@k at N of the evt fit that is not the estimate's (the options' own under the
    /// level-selected fit, the level-selected one under the options' fit): `m + δ_fit`.
    pub fn other_fit_estimate(&self) -> Option<f64> {
        self.trust
            .fit_choice_shift
            .map(|d| self.model_estimate() + d)
    }
}

/// Check a summary before predicting from it: a format version this tool reads (1 to
/// [`SUMMARY_FORMAT_VERSION`]: older folders read as the current version, with the limits
/// of `docs/reference/summary-format.md`), at least one subset whose first is a level, at least one
/// query, every query with ≥ 1 positive, arrays consistent.
pub fn check_summary(s: &Summary) -> Result<()> {
    if !(1..=SUMMARY_FORMAT_VERSION).contains(&s.format_version) {
        return Err(Error::unsupported_msg(format!(
            "summary format version {} is not one this tailrank reads (versions 1 to {})",
            s.format_version, SUMMARY_FORMAT_VERSION
        )));
    }
    if s.subsets.is_empty() || s.subsets.len() != s.subset_sizes.len() {
        return Err(Error::input_msg(format!(
            "summary has {} subsets but {} subset sizes",
            s.subsets.len(),
            s.subset_sizes.len()
        )));
    }
    if s.level_indices().first() != Some(&0) {
        return Err(Error::input_msg(
            "summary's first subset is not the level-0 sample",
        ));
    }
    if let Some(why) = increment_refusal(s) {
        return Err(Error::mismatch(why));
    }
    if s.queries.is_empty() {
        return Err(Error::input_msg("summary holds no query"));
    }
    for q in &s.queries {
        if q.positives.is_empty() {
            return Err(Error::input_msg(format!(
                "query {:?} has no positives: AP is undefined for it",
                q.id
            )));
        }
        if q.top_scores.len() != s.subsets.len() {
            return Err(Error::input_msg(format!(
                "query {:?}: {} top-score lists for {} subsets",
                q.id,
                q.top_scores.len(),
                s.subsets.len()
            )));
        }
        for p in &q.positives {
            if p.pool_above.len() != s.subsets.len() {
                return Err(Error::input_msg(format!(
                    "query {:?}, positive {:?}: {} counts for {} subsets",
                    q.id,
                    p.id,
                    p.pool_above.len(),
                    s.subsets.len()
                )));
            }
        }
    }
    Ok(())
}

fn check_hardness(qs: &[QueryHardness]) -> Result<()> {
    if qs.is_empty() {
        return Err(Error::input_msg("no query to predict from"));
    }
    for q in qs {
        if q.positives.is_empty() {
            return Err(Error::input_msg(format!(
                "query {:?} has no positives: AP is undefined for it",
                q.query_id
            )));
        }
    }
    Ok(())
}

/// The target pool size: `opts.pool_size`, else `fallback`; error when missing or `N < S`.
pub fn target_pool_size(
    opts: &PredictOptions,
    fallback: Option<u64>,
    sample_size: u64,
) -> Result<u64> {
    let n = opts.pool_size.or(fallback).ok_or_else(|| {
        Error::option("the pool size N is unknown: the input does not record it and none was given")
    })?;
    if n < sample_size {
        let from = if opts.pool_size.is_some() {
            "given"
        } else {
            "recorded in the input"
        };
        return Err(Error::mismatch(format!(
            "pool size N = {n} ({from}) is smaller than the sample size S = {sample_size}"
        )));
    }
    Ok(n)
}

pub(crate) use crate::numerics::mean;

/// Predict mAP@k at N from a scan summary (level 0 = `subsets[0]`), with baselines,
/// intervals, budget, drift, the tail report and the next step (no target width).
pub fn predict(s: &Summary, opts: &PredictOptions) -> Result<Prediction> {
    predict_with_plan(s, opts, &NextStepPlan::default())
}

/// [`predict`] with the next step asked for by `plan` (a target width, the summary's folder).
pub fn predict_with_plan(
    s: &Summary,
    opts: &PredictOptions,
    plan: &NextStepPlan,
) -> Result<Prediction> {
    let mut p = predict_without_next_step(s, opts)?;
    p.next_step = next_step::next_step(s, &p, plan);
    Ok(p)
}

/// [`predict`] without the next step.
pub fn predict_without_next_step(s: &Summary, opts: &PredictOptions) -> Result<Prediction> {
    opts.check()?;
    check_summary(s)?;
    let sample = s.subset_sizes[0];
    check_sample_size(sample)?;
    let n = target_pool_size(opts, s.pool_size, sample)?;
    // One query bootstrap for the fit choice's SE and every interval (same seed, same draws).
    let boot = bootstrap::QueryBootstrap::new(s.queries.len(), opts.bootstrap, opts.seed);
    let fit = resolve_fit(s, opts, &boot, n as f64)?;
    let h0 = fit.hardness;
    check_hardness(&h0)?;
    let parts = SummaryParts {
        summary: s,
        choice: fit.choice,
        other_fit: fit.other_estimate,
    };
    let mut p = assemble(
        &s.model,
        &s.query_set,
        n,
        sample,
        h0,
        (Some(parts), boot),
        &fit.opts,
        Carried::default(),
    )?;
    // Asked for the level-selected fit, evt resolved none: the summary has too few levels.
    let fell_back = opts.fit == FitMode::LevelSelected
        && matches!(opts.estimator, Estimator::Evt(_))
        && p.baselines.level_selected.is_none();
    p.warnings.extend(one_query_warning(s.queries.len(), opts));
    if fell_back {
        p.warnings.push(format!(
            "the level-selected fit needs at least {} nesting levels and the summary has {}: \
             the options' own fit gives the estimate (scan with a smallest level fraction below \
             the sampling fraction for more levels: `--min-fraction`, Python `min_fraction=`)",
            fit_choice::SELECTION_LEVEL + 1,
            s.level_indices().len()
        ));
    }
    Ok(p)
}

/// The warning of a prediction over fewer than two queries with a bootstrap asked for: the
/// query bootstrap has nothing to resample (`QueryBootstrap::new` draws none).
fn one_query_warning(queries: usize, opts: &PredictOptions) -> Option<String> {
    (queries < 2 && opts.bootstrap > 0).then(|| {
        format!(
            "{queries} query: the query bootstrap has nothing to resample, so there is no \
             interval over query sets, no drift test and no standard error for the verdict's \
             tests"
        )
    })
}

/// [`fit_choice::resolve`] with the exact metric of the sample gallery its selection predicts.
fn resolve_fit(
    s: &Summary,
    opts: &PredictOptions,
    boot: &bootstrap::QueryBootstrap,
    n_pool: f64,
) -> Result<fit_choice::ResolvedFit> {
    let target = fit_choice::selection_subsets(s).map_or(0, |(_, t)| t);
    let exact = baselines::per_query_at_subset(s, target, opts.k);
    fit_choice::resolve(s, opts, &exact, boot, n_pool)
}

/// The fit [`predict`] uses on summary `s`, resolved without its bootstrap: the options with
/// the estimate's fit (their `fit` set to [`FitMode::Fixed`], so that a prediction with them
/// does not choose again) and its level-0 hardness. What a curve or a comparison runs with, so
/// that they give `predict`'s estimate.
pub fn resolved_fit(
    s: &Summary,
    opts: &PredictOptions,
) -> Result<(PredictOptions, Vec<QueryHardness>)> {
    if opts.fit == FitMode::Fixed {
        return Ok((*opts, hardness_for(s, 0, opts)?));
    }
    let boot = bootstrap::QueryBootstrap::new(s.queries.len(), 0, opts.seed);
    // N sizes only the other fit's estimate, which is dropped here: any N the input allows
    // (a curve also runs past N < S), not `target_pool_size`'s checked one.
    let n = opts.pool_size.or(s.pool_size).unwrap_or(s.subset_sizes[0]) as f64;
    let fit = resolve_fit(s, opts, &boot, n)?;
    let resolved = PredictOptions {
        fit: FitMode::Fixed,
        ..fit.opts
    };
    Ok((resolved, fit.hardness))
}

/// Predict from a released hardness artifact: same estimate, intervals and tail report;
/// baselines that need the nested levels (curve fits), the budget, drift and sample-noise
/// checks are not available (None).
pub fn predict_from_hardness(
    meta: &HardnessMeta,
    qs: &[QueryHardness],
    opts: &PredictOptions,
) -> Result<Prediction> {
    let opts = &for_hardness_file(meta, opts);
    opts.check()?;
    check_hardness(qs)?;
    check_sample_size(meta.sample_size)?;
    let n = target_pool_size(opts, meta.pool_size, meta.sample_size)?;
    let boot = bootstrap::QueryBootstrap::new(qs.len(), opts.bootstrap, opts.seed);
    let mut p = assemble(
        &meta.model,
        &meta.query_set,
        n,
        meta.sample_size,
        qs.to_vec(),
        (None, boot),
        opts,
        Carried {
            excess_move: meta.excess_move,
            spacing_move: meta.spacing_move,
            hit_scales: meta.hit_scales,
        },
    )?;
    p.warnings.extend(one_query_warning(qs.len(), opts));
    p.next_step.message =
        "No projection: a hardness file has no nested levels to measure how the width scales \
         with the sample."
            .to_string();
    Ok(p)
}

/// What a hardness file of `p.hardness` records: the summary's metadata, the estimator the
/// estimate used (under `FitMode::LevelSelected`, the chosen fit) and the move to the centre
/// of the excess, so that [`predict_from_hardness`] on the file gives `p`'s estimate.
pub fn hardness_meta(s: &Summary, p: &Prediction) -> HardnessMeta {
    let mut meta = HardnessMeta::from_summary(s, 0, &p.options.estimator);
    (meta.excess_move, meta.spacing_move) = p.carried_moves();
    meta.hit_scales = p.hit_scales;
    meta
}

/// The options a hardness file allows: its own estimator and fit (the hardness is already
/// estimated, with the fit the summary's prediction chose; `opts.estimator` and `opts.fit`
/// only apply to summaries) and no sample noise (that needs the top-M scores a hardness file
/// does not hold).
pub fn for_hardness_file(meta: &HardnessMeta, opts: &PredictOptions) -> PredictOptions {
    let mut o = *opts;
    if let Some(e) = Estimator::parse_label(&meta.estimator) {
        o.estimator = e;
    }
    o.fit = FitMode::Fixed;
    o.sample_noise = 0;
    o
}

/// Why a summary that is an increment (`scan --after`, a part of the hash range) cannot be
/// predicted from; None for a sample from hash 0.
pub fn increment_refusal(s: &Summary) -> Option<String> {
    s.increment_range().map(|r| {
        format!(
            "summary of query set {:?} is an increment (hash range [{}, {}) of the sample at \
             fraction {}, scanned with --after): grow its base with it first (tailrank grow \
             BASE PART -o OUT) and predict from the grown summary",
            s.query_set, r.lo, r.hi, s.fraction
        )
    })
}
