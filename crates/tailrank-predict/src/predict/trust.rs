//! Trust verdict (docs/method.md §9, `docs/reference/predict.md`, "Trust verdict"): paired tests across
//! the nested levels that catch a tail model missing mass, without looking at any truth.
//!
//! Every nesting level ℓ (hash range `[0, t(f/2^ℓ))`, `S_ℓ ≈ S_0/2^ℓ`) gives, per query q,
//!
//! - `A_{ℓ,q}(N)`: the predicted AP@k at N from level ℓ's hardness alone;
//! - `A_{ℓ,q}(S_0)`: the expected AP@k for pool size `S_0` from level ℓ's hardness alone, through
//!   the binomial map whatever the options' map: the check tests the hardness, and the binomial
//!   expectation of the realized AP is unbiased when the hardness is right, where the
//!   expected-rank map has a Jensen gap of its own (large at `S_0`, where many positives have
//!   expected counts near 1).
//!
//! The level-0 sample gallery is known exactly: `E_q` = its exact AP@k (evaluate-at-S_0). Two
//! statistics follow, each a mean over queries of a per-query difference, so that the query
//! difficulty common to both terms cancels; their standard errors come from the query
//! bootstrap of the *differences* (same resampled indices as the estimate's interval):
//!
//! - **trend**: the per-query least-squares slope `b_q` of `A_{ℓ,q}(N)` on `log2 S_ℓ` (per
//!   doubling of the sample); its mean `b̄` projected over the remaining doublings gives
//!   `Δ_trend = b̄ · log2(N/S_0)`, the move the prediction would still make if the trend went on.
//!   A tail model that misses mass predicts lower and lower hardness as the sample shrinks, so
//!   its level predictions drift monotonically.
//! - **in-sample check**: `e_ℓ = mean_q (A_{ℓ,q}(S_0) − E_q)`, the error of predicting the
//!   known pool `S_0` from `S_ℓ`, an extrapolation by `S_0/S_ℓ = 2^ℓ`, projected to N linearly
//!   in log size: `ê_N = e_ℓ · ln(N/S_0)/ln(S_0/S_ℓ)`. Every level is reported; the verdict uses
//!   `ℓ* = 1`, the step with the most items. *Choice:* deeper levels, whose ratio is closer to
//!   `N/S_0`, were tried first; on the well-specified simulator their in-sample error is the
//!   estimator's small-sample bias (−1.3 points from `S_0/16` at f = 5%, z ≈ −4, where the
//!   error at N was −0.3), so they raised false alarms; level 1 separates the cases
//!   (`docs/reference/validation.md`).
//!
//! - **fit choice**: `δ_fit = m_other − m`, the other evt fit's estimate at N minus the
//!   estimate: the level-selected fit (`predict::fit_choice`: the fit choice whose level-1
//!   hardness predicts the known `S_0` best) when the estimate uses the options' fit, and the
//!   options' fit when it uses the level-selected one. Both fits pass for the sample; when they part by more than
//!   [`FIT_TOLERANCE`] at N, the sample does not pin the tail down for this extrapolation.
//!
//! - **endpoint** ([`super::endpoint_test`]): the positives that levels 1–3 call immune and
//!   level 0 outranks, `O`, against the number `P` the fitted endpoints' own sampling law
//!   expects; paired z of the per-query differences.
//!
//! - **falling estimate**: `r_ℓ = m_ℓ − m_0` for ℓ = 1, 2, with `m_ℓ = mean_q A_{ℓ,q}(N)`:
//!   whether level 0's prediction at N is the lowest of the three (the whole sample reads
//!   harder than its half and its quarter; it need not have fallen at each doubling). It says "not settled", not which way: the error of
//!   the runs it fires on has either sign. *Choice:* no significance threshold. It was chosen
//!   for the web families at N = 10^8, where at 5% the estimate was 1.1–4.2 points low and
//!   trusted in 5 of 18 runs (seeds 0–5) with the trend test silent (z −0.2 to −1.3), and level
//!   0 was the lowest of the three in all 5; the runs it turns doubtful elsewhere are mostly
//!   runs off by more than a point (`docs/notes/2026-12-06-level-readings.md`).
//!
//! - **top spacing** ([`super::spacing_test`]): the queries whose level-0 top spacing
//!   `(x₁ − x₂)/(x₂ − x₅₀)` exceeds its GPD null quantile, `D`, against the `α·Q_t` the null
//!   expects; binomial z. It reads rare mass too thin for any one query to show twice.
//!
//! **Verdict.** `doubtful` when either level statistic is both practically large and
//! statistically real: `|Δ_trend| > TOLERANCE` with `|Δ_trend|/SE > Z_CRIT`, or `|ê_N| >
//! TOLERANCE` with `|e_ℓ*|/SE(e_ℓ*) > Z_CRIT`; or when `|δ_fit| > FIT_TOLERANCE`; or when
//! the estimate is lower on the whole sample than on its half and its quarter (`r_1 ≥ 0` and
//! `r_2 ≥ 0`); or when
//! the endpoint test finds `O > P` with `z > Z_CRIT`, or the top-spacing test's `z > Z_CRIT`; also `doubtful` for a degenerate input
//! (the sample-size warnings
//! of `predict::sample_warnings`, drift flagged). `unchecked` when the tests cannot run (fewer
//! than [`MIN_LEVELS`] levels, or no query bootstrap); `trusted` otherwise. The reason string
//! names the statistic that decided.

use super::bootstrap::QueryBootstrap;
use super::endpoint_test::EndpointTest;
use super::spacing_test::{SpacingTest, ALPHA as ALPHA_SPACING};
use super::stats;
use super::{baselines, hardness_for_metric, mean, per_query_ap, PredictOptions};
use crate::error::Result;
use crate::hardness::QueryHardness;
use crate::maps::MapKind;
use crate::summary::Summary;
use serde::{Deserialize, Serialize};

/// A projected error (fraction of mAP) above this is practically relevant: half a mAP point.
pub const TOLERANCE: f64 = 0.005;

/// Two fit choices that both pass for the sample but part by more than this at N (one mAP
/// point) make the prediction doubtful. *Choice:* twice [`TOLERANCE`], because `m_fit` carries
/// the noise of its own selection (a grid of 12 fits ranked by one noisy statistic); at
/// `TOLERANCE` the test flagged 2 of the 2 runs of the 5% corpus whose error was under half a
/// point (`docs/notes/2026-12-estimator-log.md`, "The level-selected fit").
pub const FIT_TOLERANCE: f64 = 0.01;

pub use super::stats::Z_CRIT;

/// Fewest nesting levels for the trend and in-sample tests (a slope over two points has no
/// check of its own).
pub const MIN_LEVELS: usize = 3;

/// Per-query AP vectors of one nesting level.
#[derive(Debug, Clone)]
pub struct LevelAps {
    pub level: usize,
    /// Index in `Summary::subsets`.
    pub subset: usize,
    pub sample_size: u64,
    /// `A_{ℓ,q}(N)`.
    pub at_n: Vec<f64>,
    /// `A_{ℓ,q}(S_0)`.
    pub at_s0: Vec<f64>,
    /// The hardness behind `at_n` (empty at level 0, whose hardness the caller has).
    pub hardness: Vec<QueryHardness>,
}

/// Per-query predictions at N and at `S_0` from every nesting level (level 0 reuses `ap0`, its
/// per-query AP at N; its `at_s0` is left empty: level 0 predicting itself checks nothing).
pub fn level_aps(
    s: &Summary,
    ap0: &[f64],
    n_pool: f64,
    opts: &PredictOptions,
) -> Result<Vec<LevelAps>> {
    let s0 = s.subset_sizes[0] as f64;
    let mut out = Vec::new();
    for (level, subset) in s.level_indices().into_iter().enumerate() {
        let (at_n, at_s0, hardness) = if subset == 0 {
            (ap0.to_vec(), Vec::new(), Vec::new())
        } else {
            let h = hardness_for_metric(s, subset, opts)?;
            (
                per_query_ap(&h, n_pool, opts.k, opts.map),
                per_query_ap(&h, s0, opts.k, MapKind::Binomial),
                h,
            )
        };
        out.push(LevelAps {
            level,
            subset,
            sample_size: s.subset_sizes[subset],
            at_n,
            at_s0,
            hardness,
        });
    }
    Ok(out)
}

/// The levels `aps` as the endpoint test and the hit@1 calibration read them.
pub fn level_hardness(aps: &[LevelAps]) -> Vec<super::endpoint_test::LevelHardness<'_>> {
    aps.iter()
        .map(|a| super::endpoint_test::LevelHardness {
            level: a.level,
            sample_size: a.sample_size,
            hardness: &a.hardness,
        })
        .collect()
}

/// The trust verdict's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The paired tests found no sign of a tail model missing mass.
    Trusted,
    /// A test fired, or the input is degenerate: read the reason.
    Doubtful,
    /// The tests could not run (hardness file, fewer than [`MIN_LEVELS`] levels, no bootstrap).
    Unchecked,
}

impl Verdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Trusted => "trusted",
            Verdict::Doubtful => "doubtful",
            Verdict::Unchecked => "unchecked",
        }
    }

    /// The verdict when its tests ran, None for `unchecked`: a verdict that neither trusts
    /// nor doubts, which the validation counts as neither a miss nor a false alarm.
    pub fn checked(self) -> Option<Verdict> {
        (self != Verdict::Unchecked).then_some(self)
    }
}

/// The in-sample check of one level ℓ ≥ 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InSample {
    pub level: usize,
    pub sample_size: u64,
    /// `mean_q A_{ℓ,q}(S_0)`: level ℓ's prediction of the known pool `S_0`.
    pub predicted: f64,
    /// `e_ℓ` = predicted − evaluate-at-S_0.
    pub error: f64,
    /// Paired query-bootstrap SE of `e_ℓ` (NaN without a bootstrap).
    pub std_error: f64,
    /// `ê_N = e_ℓ · ln(N/S_0)/ln(S_0/S_ℓ)`.
    pub projected_error: f64,
}

/// Trust verdict of a prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trust {
    pub verdict: Verdict,
    /// Why (one sentence naming the statistic that decided).
    pub reason: String,
    /// `b̄`: mean per-query slope of the prediction at N per doubling of the sample.
    pub trend_per_doubling: f64,
    /// `Δ_trend = b̄ · log2(N/S_0)`.
    pub trend_projected: f64,
    /// Paired query-bootstrap SE of `Δ_trend`.
    pub trend_std_error: f64,
    /// The in-sample check of every level ℓ ≥ 1.
    pub in_sample: Vec<InSample>,
    /// Index into `in_sample` of the level `ℓ*` the verdict uses (level 1).
    pub in_sample_used: Option<usize>,
    /// `δ_fit = m_other − m`: the other evt fit's estimate at N minus the estimate (None
    /// without a level-selected fit).
    #[serde(default)]
    pub fit_choice_shift: Option<f64>,
    /// The endpoint test ([`super::endpoint_test`]); None when levels 1–3 are missing or hold
    /// no immune positive (the count estimator), with fewer than [`MIN_LEVELS`] levels, and
    /// from a hardness file.
    #[serde(default)]
    pub endpoint: Option<EndpointTest>,
    /// The top-spacing test ([`super::spacing_test`]); None from a hardness file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spacing: Option<SpacingTest>,
    /// `[r_1, r_2]`, `r_ℓ = m_ℓ − m_0`: the mean predictions at N of levels 1 and 2 minus
    /// level 0's (the falling-estimate test); None with fewer than [`MIN_LEVELS`] levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level_rises: Option<[f64; 2]>,
}

/// The verdict's tests, by name, in the order the reason names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// [`Trust::in_sample_fired`].
    InSample,
    /// [`Trust::trend_fired`].
    Trend,
    /// [`Trust::fit_choice_fired`].
    FitChoice,
    /// The falling estimate, [`Trust::falling_fired`].
    Falling,
    /// [`Trust::endpoint_fired`].
    Endpoint,
    /// The top spacing, [`Trust::spacing_fired`].
    Spacing,
}

impl Check {
    /// Every test, in the reason's order.
    pub const ALL: [Check; 6] = [
        Check::InSample,
        Check::Trend,
        Check::FitChoice,
        Check::Falling,
        Check::Endpoint,
        Check::Spacing,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            Check::InSample => "in-sample check",
            Check::Trend => "trend",
            Check::FitChoice => "fit choice",
            Check::Falling => "falling estimate",
            Check::Endpoint => "endpoint",
            Check::Spacing => "top spacing",
        }
    }
}

/// The verdict's tests computed outside the level vectors: the fit-choice shift `δ_fit`, the
/// endpoint test and the top-spacing test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OtherTests {
    pub fit_choice_shift: Option<f64>,
    pub endpoint: Option<EndpointTest>,
    pub spacing: Option<SpacingTest>,
}

impl Trust {
    /// The in-sample check the verdict uses (level ℓ*).
    pub fn used(&self) -> Option<&InSample> {
        self.in_sample_used.map(|i| &self.in_sample[i])
    }

    /// Whether the trend test fired: `|Δ_trend| > TOLERANCE` and `|Δ_trend|/SE > Z_CRIT`.
    pub fn trend_fired(&self) -> bool {
        self.trend_projected.abs() > TOLERANCE
            && stats::z_score(self.trend_projected, self.trend_std_error).abs() > Z_CRIT
    }

    /// Whether the in-sample check fired: `|ê_N| > TOLERANCE` and `|e_ℓ*|/SE > Z_CRIT`.
    pub fn in_sample_fired(&self) -> bool {
        self.used().is_some_and(|u| {
            u.projected_error.abs() > TOLERANCE
                && stats::z_score(u.error, u.std_error).abs() > Z_CRIT
        })
    }

    /// Whether the fit-choice test fired: `|δ_fit| > FIT_TOLERANCE`.
    pub fn fit_choice_fired(&self) -> bool {
        self.fit_choice_shift
            .is_some_and(|d| d.abs() > FIT_TOLERANCE)
    }

    /// Whether the endpoint test fired: `O > P` and `z > Z_CRIT` ([`EndpointTest::exceeds`]).
    pub fn endpoint_fired(&self) -> bool {
        self.endpoint.as_ref().is_some_and(|e| e.exceeds(Z_CRIT))
    }

    /// Whether the falling-estimate test fired: `r_1 ≥ 0` and `r_2 ≥ 0`, level 0's prediction
    /// at N the lowest of levels 0–2.
    pub fn falling_fired(&self) -> bool {
        self.level_rises.is_some_and(|r| r[0] >= 0.0 && r[1] >= 0.0)
    }

    /// Whether the top-spacing test fired: `z > Z_CRIT` ([`SpacingTest::exceeds`]).
    pub fn spacing_fired(&self) -> bool {
        self.spacing.as_ref().is_some_and(|t| t.exceeds(Z_CRIT))
    }

    /// Whether test `c` fired (its `*_fired` method).
    pub fn fired(&self, c: Check) -> bool {
        match c {
            Check::InSample => self.in_sample_fired(),
            Check::Trend => self.trend_fired(),
            Check::FitChoice => self.fit_choice_fired(),
            Check::Falling => self.falling_fired(),
            Check::Endpoint => self.endpoint_fired(),
            Check::Spacing => self.spacing_fired(),
        }
    }

    /// Whether the paired tests ran: at least [`MIN_LEVELS`] levels (the level rises are
    /// recorded) and a query bootstrap (the trend's SE is a number). When they did not, the
    /// verdict is `unchecked`, or `doubtful` from an input problem alone.
    pub fn tests_ran(&self) -> bool {
        self.level_rises.is_some() && !self.trend_std_error.is_nan()
    }

    /// The tests that fired, in [`Check::ALL`]'s order.
    pub fn fired_checks(&self) -> Vec<Check> {
        Check::ALL.into_iter().filter(|&c| self.fired(c)).collect()
    }

    /// `Δ_trend` when the trend test fired, else 0.
    pub fn trend_shift(&self) -> f64 {
        if self.trend_fired() {
            self.trend_projected
        } else {
            0.0
        }
    }

    /// The move of the truth relative to the estimate that the fired tests point to: the
    /// largest in magnitude of `Δ_trend` (trend fired) and `−ê_N` (in-sample check fired;
    /// an over-prediction in-sample puts the truth below the estimate); 0 when none fired.
    pub fn shift(&self) -> f64 {
        let mut best = self.trend_shift();
        if let Some(u) = self.used().filter(|_| self.in_sample_fired()) {
            if u.projected_error.abs() > best.abs() {
                best = -u.projected_error;
            }
        }
        best
    }

    /// A verdict with no statistics (the tests could not run, or were not needed).
    pub fn without_tests(verdict: Verdict, reason: String) -> Trust {
        Trust {
            verdict,
            reason,
            trend_per_doubling: f64::NAN,
            trend_projected: f64::NAN,
            trend_std_error: f64::NAN,
            in_sample: Vec::new(),
            in_sample_used: None,
            fit_choice_shift: None,
            endpoint: None,
            spacing: None,
            level_rises: None,
        }
    }
}

/// The trust statistics and verdict from the level vectors (level 0 first), the query
/// bootstrap, the target N, the other tests (the level-selected fit's `δ_fit`, the endpoint
/// test) and the input problems already known (sample-size warnings, drift).
pub fn trust(
    s: &Summary,
    levels: &[LevelAps],
    boot: &QueryBootstrap,
    n_pool: f64,
    k: usize,
    others: OtherTests,
    problems: &[String],
) -> Trust {
    let OtherTests {
        fit_choice_shift,
        endpoint,
        spacing,
    } = others;
    if levels.len() < MIN_LEVELS {
        let mut t = Trust::without_tests(
            Verdict::Unchecked,
            format!(
                "{} nesting level(s): the paired tests need at least {MIN_LEVELS}",
                levels.len()
            ),
        );
        t.spacing = spacing;
        return with_problems(t, problems);
    }
    let s0 = levels[0].sample_size as f64;
    let steps = (n_pool / s0).log2().max(0.0);
    let (trend_projected, trend_std_error) = trend(levels, boot, steps);
    let in_sample = in_sample_checks(s, levels, boot, n_pool, k);
    // ℓ* = 1: the shallowest step, with the most items (see the module docs).
    let in_sample_used = (!in_sample.is_empty()).then_some(0);
    let mut out = Trust {
        verdict: Verdict::Trusted,
        reason: String::new(),
        trend_per_doubling: if steps > 0.0 {
            trend_projected / steps
        } else {
            f64::NAN
        },
        trend_projected,
        trend_std_error,
        in_sample,
        in_sample_used,
        fit_choice_shift,
        endpoint,
        spacing,
        level_rises: Some(level_rises(levels)),
    };
    if !has_bootstrap(boot) {
        out.verdict = Verdict::Unchecked;
        out.reason = "no query bootstrap: the paired tests need its standard errors".into();
        return with_problems(out, problems);
    }
    let fired = fired_tests(&out, levels[0].sample_size);
    if fired.is_empty() {
        out.reason = passed_reason(&out);
    } else {
        out.verdict = Verdict::Doubtful;
        out.reason = fired.join("; ");
    }
    with_problems(out, problems)
}

/// The paired tests need a query bootstrap of at least 2 replicates for their standard errors.
fn has_bootstrap(boot: &QueryBootstrap) -> bool {
    boot.replicates >= 2
}

/// Paired query-bootstrap SE of the mean of the per-query differences `d` (NaN without a
/// bootstrap).
fn paired_std_error(boot: &QueryBootstrap, d: &[f64]) -> f64 {
    if has_bootstrap(boot) {
        boot.std_error(d)
    } else {
        f64::NAN
    }
}

/// `(Δ_trend, SE)`: per query, the least-squares slope `b_q` of `A_{ℓ,q}(N)` on
/// `t_ℓ = log2 S_ℓ` times the `steps = log2(N/S_0)` doublings left to N (0 when every level
/// has one size), averaged over queries, with its paired SE.
fn trend(levels: &[LevelAps], boot: &QueryBootstrap, steps: f64) -> (f64, f64) {
    let q = levels[0].at_n.len();
    // Per-query slope on t_ℓ = log2 S_ℓ.
    let t: Vec<f64> = levels
        .iter()
        .map(|l| (l.sample_size.max(1) as f64).log2())
        .collect();
    let tm = mean(&t);
    let sxx: f64 = t.iter().map(|v| (v - tm) * (v - tm)).sum();
    let proj: Vec<f64> = (0..q)
        .map(|i| {
            let ym = levels.iter().map(|l| l.at_n[i]).sum::<f64>() / levels.len() as f64;
            let sxy: f64 = levels
                .iter()
                .zip(&t)
                .map(|(l, tv)| (tv - tm) * (l.at_n[i] - ym))
                .sum();
            if sxx > 0.0 {
                sxy / sxx * steps
            } else {
                0.0
            }
        })
        .collect();
    (mean(&proj), paired_std_error(boot, &proj))
}

/// `[m_1 − m_0, m_2 − m_0]`, `m_ℓ = mean_q A_{ℓ,q}(N)` (at least three levels).
fn level_rises(levels: &[LevelAps]) -> [f64; 2] {
    let m0 = mean(&levels[0].at_n);
    [mean(&levels[1].at_n) - m0, mean(&levels[2].at_n) - m0]
}

/// The in-sample check of every level ℓ ≥ 1: `e_ℓ = mean_q (A_{ℓ,q}(S_0) − E_q)` against the
/// exact AP@k `E_q` of the level-0 gallery, projected to N as
/// `ê_N = e_ℓ · ln(N/S_0)/ln(S_0/S_ℓ)` (NaN when `S_ℓ = S_0`).
fn in_sample_checks(
    s: &Summary,
    levels: &[LevelAps],
    boot: &QueryBootstrap,
    n_pool: f64,
    k: usize,
) -> Vec<InSample> {
    let s0 = levels[0].sample_size as f64;
    let exact0 = baselines::per_query_at_subset(s, levels[0].subset, k);
    let ln_n = (n_pool / s0).ln();
    levels[1..]
        .iter()
        .map(|l| {
            let d: Vec<f64> = l.at_s0.iter().zip(&exact0).map(|(a, e)| a - e).collect();
            let error = mean(&d);
            let ratio = (s0 / l.sample_size.max(1) as f64).ln();
            InSample {
                level: l.level,
                sample_size: l.sample_size,
                predicted: mean(&l.at_s0),
                error,
                std_error: paired_std_error(boot, &d),
                projected_error: if ratio > 0.0 {
                    error * ln_n / ratio
                } else {
                    f64::NAN
                },
            }
        })
        .collect()
}

/// One sentence per test that fired on `t` ([`Trust::in_sample_fired`],
/// [`Trust::trend_fired`], [`Trust::fit_choice_fired`], [`Trust::falling_fired`],
/// [`Trust::endpoint_fired`], [`Trust::spacing_fired`], in that order); `s0` is the level-0
/// sample size `S_0`.
fn fired_tests(t: &Trust, s0: u64) -> Vec<String> {
    let mut fired = Vec::new();
    if let Some(u) = t.used().filter(|_| t.in_sample_fired()) {
        let z = stats::z_score(u.error, u.std_error);
        fired.push(format!(
            "in-sample check: level {} (S = {}) predicts the known S_0 = {} off by {:+.2} \
                 points (z = {:.1}), projected {:+.2} points at N",
            u.level,
            u.sample_size,
            s0,
            100.0 * u.error,
            z,
            100.0 * u.projected_error
        ));
    }
    if t.trend_fired() {
        fired.push(format!(
            "trend: the prediction moves {:+.2} points per doubling of the sample (paired z = \
             {:.1}), {:+.2} points more by N if it goes on",
            100.0 * t.trend_per_doubling,
            stats::z_score(t.trend_projected, t.trend_std_error),
            100.0 * t.trend_projected
        ));
    }
    if let Some(d) = t.fit_choice_shift.filter(|_| t.fit_choice_fired()) {
        fired.push(format!(
            "fit choice: the fixed and the level-selected tail fits part at N (the other one \
             {:+.2} points against this estimate); the sample does not pin the tail down",
            100.0 * d
        ));
    }
    if let Some(r) = t.level_rises.filter(|_| t.falling_fired()) {
        fired.push(format!(
            "falling estimate: the prediction at N is lower on the whole sample than on its \
             half and its quarter (levels 1 and 2 read {:+.2} and {:+.2} points above level \
             0); the tail fit has not settled on the sample's top",
            100.0 * r[0],
            100.0 * r[1]
        ));
    }
    if let Some(e) = t.endpoint.as_ref().filter(|_| t.endpoint_fired()) {
        fired.push(format!(
            "endpoint: level 0 outranks {} of the {} positives that levels {} call immune, \
             where the fits' own endpoint noise explains {:.1} (z = {:.1}); there is pool mass \
             past the fitted endpoints that the tail model does not have",
            e.observed,
            e.immune,
            level_list(&e.levels),
            e.predicted,
            e.z
        ));
    }
    if let Some(sp) = t.spacing.as_ref().filter(|_| t.spacing_fired()) {
        fired.push(format!(
            "top spacing: {} of {} queries hold a sampled item far above the rest of their \
             tail, where a GPD tail puts {:.1} (z = {:.1}); there is rare pool mass above the \
             fitted tails",
            sp.exceeding,
            sp.tested,
            ALPHA_SPACING * sp.tested as f64,
            sp.z
        ));
    }
    fired
}

/// The reason of a verdict on which no test fired: every statistic that ran, with its z.
fn passed_reason(t: &Trust) -> String {
    let u = t.used();
    format!(
        "level predictions flat within their paired noise (trend {:+.2} points to N, z = \
         {:.1}){}{}{}{}{}",
        100.0 * t.trend_projected,
        stats::z_score(t.trend_projected, t.trend_std_error),
        t.level_rises.map_or(String::new(), |r| format!(
            "; levels 1 and 2 read {:+.2} and {:+.2} points against level 0",
            100.0 * r[0],
            100.0 * r[1]
        )),
        u.map_or(String::new(), |u| format!(
            "; in-sample check from level {} off by {:+.2} points (z = {:.1})",
            u.level,
            100.0 * u.error,
            stats::z_score(u.error, u.std_error)
        )),
        t.fit_choice_shift.map_or(String::new(), |d| format!(
            "; the other tail fit within {:+.2} points",
            100.0 * d
        )),
        t.endpoint.as_ref().map_or(String::new(), |e| format!(
            "; {} of {} immune positives of levels {} outranked at level 0, {:.1} expected",
            e.observed,
            e.immune,
            level_list(&e.levels),
            e.predicted
        )),
        t.spacing.as_ref().map_or(String::new(), |sp| format!(
            "; a far top item in {} of {} queries, {:.1} expected (z = {:.1})",
            sp.exceeding,
            sp.tested,
            sp.exceeding as f64 - sp.excess,
            sp.z
        ))
    )
}

/// `1–3`, `1–2` or `1`.
#[doc(hidden)]
pub fn level_list(levels: &[usize]) -> String {
    match (levels.first(), levels.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}–{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    }
}

/// Input problems make a verdict doubtful whatever the tests said; they come first in the
/// reason.
pub(crate) fn with_problems(mut t: Trust, problems: &[String]) -> Trust {
    if !problems.is_empty() {
        t.verdict = Verdict::Doubtful;
        let mut r = problems.join("; ");
        if !t.reason.is_empty() {
            r.push_str("; ");
            r.push_str(&t.reason);
        }
        t.reason = r;
    }
    t
}
