//! The validation study (docs/method.md §10): simulate benchmarks with known truth, predict from the
//! sample, and measure the error of the tail-aware estimate and of every baseline.
//!
//! For each preset and seed the benchmark is simulated at the main fraction (every interval
//! and the verdict, for their coverage and rates) and at each fraction of the convergence
//! sweep (the estimates `predict` gives, without sample noise, intervals or verdict). A given seed fixes the queries, positives, hardness and score laws; the sample and
//! the realized full pool are drawn anew for every fraction, so each run has its own truth.
//!
//! error = prediction − realized truth (mAP@k at N, fractions); coverage = share of seeds whose
//! truth lies inside the interval.

use super::decompose::{decompose, Decomposition};
use super::{simulate_summary, SimConfig, Truth};
use crate::error::{Error, Result};
use crate::maps::MapKind;
use crate::predict::calibrated::CalibratedMetrics;
use crate::predict::endpoint_test::{EndpointTest, ExcessCentre};
use crate::predict::realized::RealizedInterval;
use crate::predict::spacing_test::SpacingCentre;
use crate::predict::{
    per_query_ap, predict_without_next_step, FitChoice, FitMode, Interval, LevelPrediction,
    PredictOptions, Trust, Verdict,
};
use serde::{Deserialize, Serialize};

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationOptions {
    pub presets: Vec<String>,
    /// Seeds `first_seed .. first_seed + seeds`.
    pub seeds: usize,
    pub first_seed: u64,
    /// Main sample fraction (coverage and the headline errors).
    pub fraction: f64,
    /// Convergence sweep.
    pub fractions: Vec<f64>,
    /// Override of the presets' pool size N.
    pub pool_size: Option<u64>,
    /// Scale the presets down to this many queries.
    pub queries: Option<usize>,
    /// Query-bootstrap replicates (at every fraction: the weight of the centre of the excess
    /// needs them; the intervals are kept at the main fraction).
    pub bootstrap: usize,
    pub confidence: f64,
    /// Which evt fit gives the estimate (the `evt` column).
    #[serde(default)]
    pub fit: FitMode,
    /// `PredictOptions::excess_centre` of every prediction.
    #[serde(default)]
    pub excess_centre: bool,
}

impl Default for ValidationOptions {
    /// The whole corpus ([`super::corpus::CORPUS`]), 3 seeds, at 5% (with the bootstrap) and 1%.
    fn default() -> Self {
        ValidationOptions {
            presets: super::corpus::names()
                .into_iter()
                .map(String::from)
                .collect(),
            seeds: 3,
            first_seed: 0,
            fraction: 0.05,
            fractions: vec![0.01],
            pool_size: None,
            queries: None,
            fit: PredictOptions::DEFAULT.fit,
            excess_centre: PredictOptions::DEFAULT.excess_centre,
            bootstrap: PredictOptions::DEFAULT.bootstrap,
            confidence: PredictOptions::DEFAULT.confidence,
        }
    }
}

/// One simulated benchmark and its predictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub preset: String,
    pub seed: u64,
    pub fraction: f64,
    pub pool_size: u64,
    pub sample_size: u64,
    pub k: usize,
    /// Realized mAP@k at N.
    pub truth: f64,
    /// Expected-rank map with the true hardness.
    pub oracle: f64,
    /// Tail-aware estimate, expected-rank map (the default).
    pub evt: f64,
    /// Tail-aware hardness through the binomial map.
    pub evt_binomial: f64,
    pub count: f64,
    pub evaluate_at_s: f64,
    pub power_law: Option<f64>,
    pub log_linear: Option<f64>,
    /// The level-calibrated count law (`predict::calibrated`, experimental): mAP@k, Recall@k
    /// and hit@1.
    #[serde(default)]
    pub level_calibrated: Option<CalibratedMetrics>,
    /// The level-selected evt fit (`predict::fit_choice`): mAP@k, Recall@k and hit@1.
    #[serde(default)]
    pub level_selected: Option<CalibratedMetrics>,
    /// mAP@k at N of the evt fit that is not the estimate's: the paper's (the options') under
    /// the level-selected default, the level-selected one under `--fit fixed`
    /// (`Prediction::other_fit_estimate`).
    #[serde(default)]
    pub other_fit: Option<f64>,
    /// Realized Recall@k and hit@1 at N, and their predictions from the tail-aware hardness
    /// (under the count law, `maps::CountLaw`).
    pub truth_recall_at_k: f64,
    pub truth_hit_at_1: f64,
    pub recall_at_k: f64,
    pub hit_at_1: f64,
    /// Where the evt error comes from ([`super::decompose`]).
    pub decomposition: Option<Decomposition>,
    /// Query-bootstrap intervals of `evt` (main fraction only).
    pub percentile: Option<Interval>,
    pub bca: Option<Interval>,
    pub std_error: Option<f64>,
    /// Realized-metric interval of `evt` (`predict::realized`; main fraction only).
    #[serde(default)]
    pub realized: Option<Interval>,
    /// The same interval with every opinion it spans and its pool noise, so that another
    /// reading can be scored on the run file without re-running the study.
    #[serde(default)]
    pub realized_parts: Option<RealizedInterval>,
    /// The estimate's move to the centre of the endpoint test's shrunk excess, when its weight
    /// is positive (every fraction); `evt`, `recall_at_k` and `hit_at_1` are then the moved values.
    #[serde(default)]
    pub excess_centre: Option<ExcessCentre>,
    /// The estimate's move to the centre of the rare items above the top positive, when it
    /// made one (every fraction); `evt` is then the moved value.
    #[serde(default)]
    pub spacing_centre: Option<SpacingCentre>,
    /// Trust verdict of the prediction (`predict::trust`; main fraction only), and which of
    /// its tests fired.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    #[serde(default)]
    pub trend_fired: Option<bool>,
    #[serde(default)]
    pub in_sample_fired: Option<bool>,
    #[serde(default)]
    pub fit_choice_fired: Option<bool>,
    /// The endpoint test's values (observed, expected, z) when it ran.
    #[serde(default)]
    pub endpoint: Option<EndpointTest>,
    #[serde(default)]
    pub endpoint_fired: Option<bool>,
    /// Every statistic of the verdict (main fraction only), so that another verdict rule can
    /// be scored on the run file without re-running the study.
    #[serde(default)]
    pub trust: Option<Trust>,
    /// The level-selected fit in full: every candidate's level-1 check `e_1`, the choice, and
    /// the paired SE of its `e_1` (main fraction only).
    #[serde(default)]
    pub level_selected_fit: Option<FitChoice>,
    /// The prediction at N from each nesting level (main fraction only), so that a check on
    /// the levels can be scored on the run file without re-running the study.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<LevelPrediction>,
}

/// Error statistics of one method over seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorStats {
    pub method: String,
    pub runs: usize,
    pub mean_error: f64,
    pub mean_abs_error: f64,
    pub max_abs_error: f64,
}

/// Everything the study produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    pub options: ValidationOptions,
    pub runs: Vec<Run>,
}

/// Names of the compared methods, in table order.
pub const METHODS: &[&str] = &[
    "evt",
    "other-fit",
    "evt-binomial",
    "count",
    "evaluate-at-S",
    "power-law",
    "log-linear",
    "level-calibrated",
    "level-selected",
    "oracle",
];

impl Run {
    /// The value of `method` (see [`METHODS`]).
    pub fn value(&self, method: &str) -> Option<f64> {
        match method {
            "evt" => Some(self.evt),
            "evt-binomial" => Some(self.evt_binomial),
            "count" => Some(self.count),
            "evaluate-at-S" => Some(self.evaluate_at_s),
            "power-law" => self.power_law,
            "log-linear" => self.log_linear,
            "level-calibrated" => self.level_calibrated.map(|c| c.map_at_k),
            "level-selected" => self.level_selected.map(|c| c.map_at_k),
            "other-fit" => self.other_fit,
            "oracle" => Some(self.oracle),
            _ => None,
        }
    }
}

/// Simulate one benchmark and predict it as `tailrank predict` does. `main`: the main
/// fraction, with the sample-noise bootstrap and every interval and verdict kept; otherwise a
/// sweep fraction: the same estimate, Recall@k and hit@1 (the centre of the excess included,
/// which needs the query bootstrap for its weight) without sample noise, intervals or verdict.
pub fn run_one(
    preset: &str,
    seed: u64,
    fraction: f64,
    opts: &ValidationOptions,
    main: bool,
) -> Result<(Run, Truth)> {
    let mut cfg = SimConfig::preset(preset, seed)?;
    cfg.fraction = fraction;
    if let Some(n) = opts.pool_size {
        cfg.pool_size = n;
        cfg.truth_pool_sizes.retain(|&m| m < n);
    }
    if let Some(q) = opts.queries {
        cfg = cfg.with_queries(q);
    }
    let sim = simulate_summary(&cfg)?;
    let defaults = PredictOptions::default();
    let popts = PredictOptions {
        k: cfg.k,
        bootstrap: opts.bootstrap,
        sample_noise: if main { defaults.sample_noise } else { 0 },
        confidence: opts.confidence,
        seed,
        fit: opts.fit,
        excess_centre: opts.excess_centre,
        ..defaults
    };
    let t = sim.truth;
    let s = &sim.summary;
    let nf = t.pool_size as f64;
    let k = cfg.k;
    let mut run = Run {
        preset: preset.to_string(),
        seed,
        fraction,
        pool_size: t.pool_size,
        sample_size: t.sample_size,
        k: t.k,
        truth: t.map_at_k,
        oracle: t.oracle_map_at_k,
        evt: f64::NAN,
        evt_binomial: f64::NAN,
        count: f64::NAN,
        evaluate_at_s: f64::NAN,
        power_law: None,
        log_linear: None,
        level_calibrated: None,
        level_selected: None,
        other_fit: None,
        truth_recall_at_k: f64::NAN,
        truth_hit_at_1: f64::NAN,
        recall_at_k: f64::NAN,
        hit_at_1: f64::NAN,
        decomposition: None,
        percentile: None,
        bca: None,
        std_error: None,
        realized: None,
        realized_parts: None,
        excess_centre: None,
        spacing_centre: None,
        verdict: None,
        trend_fired: None,
        in_sample_fired: None,
        fit_choice_fired: None,
        endpoint: None,
        endpoint_fired: None,
        trust: None,
        level_selected_fit: None,
        levels: Vec::new(),
    };
    // The next step is not scored: skip its extra prediction on level 1.
    let p = predict_without_next_step(s, &popts)?;
    run.evt = p.estimate;
    run.count = p.baselines.count;
    run.evaluate_at_s = p.baselines.evaluate_at_s;
    run.power_law = p.baselines.power_law;
    run.log_linear = p.baselines.log_linear;
    run.level_calibrated = p.baselines.level_calibrated;
    run.level_selected = p.baselines.level_selected.as_ref().map(metrics_of);
    run.other_fit = p.other_fit_estimate();
    run.excess_centre = p.excess_centre;
    run.spacing_centre = p.spacing_centre;
    if main {
        run.percentile = Some(p.percentile);
        run.bca = Some(p.bca);
        run.std_error = Some(p.std_error);
        run.realized = p.realized.map(|r| r.interval);
        run.realized_parts = p.realized;
        run.verdict = Some(p.trust.verdict);
        run.trend_fired = Some(p.trust.trend_fired());
        run.in_sample_fired = Some(p.trust.in_sample_fired());
        run.fit_choice_fired = Some(p.trust.fit_choice_fired());
        run.endpoint_fired = Some(p.trust.endpoint_fired());
        run.endpoint = p.trust.endpoint.clone();
        run.trust = Some(p.trust);
        run.level_selected_fit = p.baselines.level_selected;
        run.levels = p.levels;
    }
    let hardness = p.hardness;
    run.evt_binomial = mean(&per_query_ap(&hardness, nf, k, MapKind::Binomial));
    (run.truth_recall_at_k, run.truth_hit_at_1) = t.recall_and_hit();
    // The prediction's own values (moved to the centre of the excess when it moved; hit@1
    // calibrated on the levels).
    (run.recall_at_k, run.hit_at_1) = (p.recall_at_k, p.hit_at_1);
    let mut d = decompose(&hardness, &t)?;
    d.part_centre = run.excess_centre.map_or(0.0, |c| c.shift);
    d.part_spacing = run.spacing_centre.map_or(0.0, |c| c.shift);
    run.decomposition = Some(d);
    Ok((run, t))
}

/// mAP@k, Recall@k and hit@1 of a level-selected fit.
fn metrics_of(f: &FitChoice) -> CalibratedMetrics {
    CalibratedMetrics {
        map_at_k: f.map_at_k,
        recall_at_k: f.recall_at_k,
        hit_at_1: f.hit_at_1,
    }
}

pub(crate) use crate::numerics::mean;

/// The seeds `first ..= first + count − 1` of a study (`first_flag` and `count_flag` name them
/// in errors): at least one, and none past 2^64 − 1 (a wrapped range would restart at 0).
pub fn seed_range(
    first: u64,
    count: u64,
    first_flag: &str,
    count_flag: &str,
) -> Result<std::ops::RangeInclusive<u64>> {
    if count == 0 {
        return Err(Error::option(format!("{count_flag} must be at least 1")));
    }
    match first.checked_add(count - 1) {
        Some(last) => Ok(first..=last),
        None => Err(Error::option(format!(
            "{first_flag} {first} with {count_flag} {count} runs past the largest seed, 2^64 − 1"
        ))),
    }
}

/// Refuse an entry given twice in `items` (a family name or a sample fraction; `flag` names the
/// list in the error): its runs would be counted twice, as if they were other seeds.
pub fn check_distinct<T: PartialEq + std::fmt::Debug>(items: &[T], flag: &str) -> Result<()> {
    for (i, x) in items.iter().enumerate() {
        if items[..i].contains(x) {
            return Err(Error::option(format!("{flag} names {x:?} twice")));
        }
    }
    Ok(())
}

/// Run the study; `progress` is called after each run.
pub fn run_validation(
    opts: &ValidationOptions,
    mut progress: impl FnMut(&Run),
) -> Result<ValidationReport> {
    if opts.presets.is_empty() || opts.seeds == 0 {
        return Err(Error::option(
            "validation needs at least one preset and one seed",
        ));
    }
    seed_range(
        opts.first_seed,
        opts.seeds as u64,
        "--first-seed",
        "--seeds",
    )?;
    check_distinct(&opts.presets, "--presets")?;
    check_distinct(&opts.fractions, "--fractions")?;
    crate::sample::check_fraction(opts.fraction)?;
    for &f in &opts.fractions {
        crate::sample::check_fraction(f)?;
    }
    let mut runs = Vec::new();
    for preset in &opts.presets {
        SimConfig::preset(preset, 0)?;
        for s in 0..opts.seeds as u64 {
            let seed = opts.first_seed + s;
            let (r, _) = run_one(preset, seed, opts.fraction, opts, true)?;
            progress(&r);
            runs.push(r);
            for &f in &opts.fractions {
                if (f - opts.fraction).abs() < 1e-15 {
                    continue;
                }
                let (r, _) = run_one(preset, seed, f, opts, false)?;
                progress(&r);
                runs.push(r);
            }
        }
    }
    Ok(ValidationReport {
        options: opts.clone(),
        runs,
    })
}

pub(crate) fn stats_of(method: &str, runs: &[&Run]) -> Option<ErrorStats> {
    let errs: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.value(method).map(|v| v - r.truth))
        .collect();
    if errs.is_empty() {
        return None;
    }
    Some(ErrorStats {
        method: method.to_string(),
        runs: errs.len(),
        mean_error: mean(&errs),
        mean_abs_error: mean(&errs.iter().map(|e| e.abs()).collect::<Vec<_>>()),
        max_abs_error: errs.iter().fold(0.0f64, |m, e| m.max(e.abs())),
    })
}

/// `(inside, total)`: runs whose truth lies in the interval, out of the runs that have one.
pub type Coverage = (usize, usize);

/// `inside/total (percent)`, or `0/0` with no percent when there is no run to count.
pub fn share_text((inside, total): Coverage) -> String {
    if total == 0 {
        format!("{inside}/{total}")
    } else {
        format!(
            "{inside}/{total} ({:.0}%)",
            100.0 * inside as f64 / total as f64
        )
    }
}

/// Coverage of the interval chosen by `pick` (None if no run has one).
fn coverage(runs: &[&Run], pick: &impl Fn(&Run) -> Option<Interval>) -> Option<Coverage> {
    let with: Vec<(Interval, f64)> = runs
        .iter()
        .filter_map(|r| pick(r).map(|i| (i, r.truth)))
        .filter(|(i, _)| i.lo.is_finite() && i.hi.is_finite())
        .collect();
    if with.is_empty() {
        return None;
    }
    let inside = with
        .iter()
        .filter(|(i, t)| i.lo <= *t && *t <= i.hi)
        .count();
    Some((inside, with.len()))
}

fn same_fraction(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

impl ValidationReport {
    /// Runs of `preset` at `fraction`.
    pub fn runs_at(&self, preset: &str, fraction: f64) -> Vec<&Run> {
        self.runs
            .iter()
            .filter(|r| r.preset == preset && same_fraction(r.fraction, fraction))
            .collect()
    }

    /// Error statistics of every method for `preset` at the main fraction.
    pub fn headline(&self, preset: &str) -> Vec<ErrorStats> {
        let runs = self.runs_at(preset, self.options.fraction);
        METHODS.iter().filter_map(|m| stats_of(m, &runs)).collect()
    }

    /// `(inside, total)` coverage of the evt percentile and BCa intervals at the main fraction.
    pub fn coverage(&self, preset: &str) -> (Option<Coverage>, Option<Coverage>) {
        let runs = self.runs_at(preset, self.options.fraction);
        (
            coverage(&runs, &|r: &Run| r.percentile),
            coverage(&runs, &|r: &Run| r.bca),
        )
    }

    /// The sample fractions of the report, sorted, without repeats.
    pub fn fractions(&self) -> Vec<f64> {
        let mut f: Vec<f64> = self.options.fractions.clone();
        f.push(self.options.fraction);
        f.sort_by(|a, b| a.total_cmp(b));
        f.dedup_by(|a, b| same_fraction(*a, *b));
        f
    }
}

/// |error| above which a run must be flagged, and below which it should not be (fractions).
pub const FLAG_MUST: f64 = 0.01;
pub const FLAG_NOT: f64 = 0.005;

/// Coverage and mean width of an interval over `runs` (None when no run has one).
pub fn coverage_width(
    runs: &[&Run],
    pick: impl Fn(&Run) -> Option<Interval>,
) -> Option<(Coverage, f64)> {
    let c = coverage(runs, &pick)?;
    let w: Vec<f64> = runs
        .iter()
        .filter_map(|r| pick(r))
        .filter(|i| i.lo.is_finite() && i.hi.is_finite())
        .map(|i| i.hi - i.lo)
        .collect();
    Some((c, mean(&w)))
}

/// Whether the verdict of `r` doubts; None without a verdict or with `unchecked` (its tests
/// did not run: it neither trusts nor doubts).
pub fn doubted(r: &Run) -> Option<bool> {
    r.verdict
        .and_then(Verdict::checked)
        .map(|v| v == Verdict::Doubtful)
}

/// The verdict's `(hit, false alarm)` counts over `runs` with a verdict: `(flagged, total)`
/// among runs with `|evt − truth| > FLAG_MUST`, and among runs with `|evt − truth| < FLAG_NOT`;
/// `flag` says whether a run counts as flagged.
pub fn verdict_rates(runs: &[&Run], flag: impl Fn(&Run) -> Option<bool>) -> (Coverage, Coverage) {
    let (mut hit, mut fa) = ((0, 0), (0, 0));
    for r in runs {
        let Some(f) = flag(r) else { continue };
        let e = (r.evt - r.truth).abs();
        if e > FLAG_MUST {
            hit.1 += 1;
            hit.0 += f as usize;
        } else if e < FLAG_NOT {
            fa.1 += 1;
            fa.0 += f as usize;
        }
    }
    (hit, fa)
}
