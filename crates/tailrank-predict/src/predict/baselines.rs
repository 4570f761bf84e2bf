//! Baselines reported beside every prediction (docs/method.md §8).
//!
//! - **evaluate-at-S**: the exact AP@k on the sample gallery (core + the S sampled items), from
//!   counts with the official tie rule (`metric::evaluate_counts`): positive j of q sits at rank
//!   `r_j = j + C_j + K_{j,0} + T_j` (ties `T_j` = non-relevant items scoring exactly `s_j`, the
//!   positive last in its tie block), positives of equal score form a block with the precision
//!   at its end, `AP@k = 1/min(k,n)·Σ_blocks`. The per-level points use the level's counts
//!   and ties.
//! - **count**: count hardness `x̂ = K_j/S` through the same map at N (in `predict`).
//! - **power-law**: the evaluate-at-S_ℓ values `m_ℓ` at the nested levels, least-squares fit of
//!   `ln m = a − b ln S` over the levels with `m_ℓ > 0`, extrapolated to `exp(a − b ln N)`.
//! - **log-linear**: least squares `m = a − b ln S`, extrapolated to `a − b ln N`.
//! - **level-calibrated**: the count law of `predict::calibrated` (experimental).
//! - **level-selected fit**: the evt fit choice that predicts the known level-0 sample best
//!   from level 1 (`predict::fit_choice`).
//!
//! Both fits need at least two levels of distinct sizes (None otherwise); extrapolated values
//! are clamped to [0, 1].

use crate::hardness::QueryHardness;
use crate::metric::SampleCounts;
use crate::metric::{evaluate_counts, positive_counts, QueryReport};
use crate::summary::Summary;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Baseline values at N (fractions), beside the estimate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baselines {
    /// Exact mAP@k on the level-0 sample gallery (at S, not N).
    pub evaluate_at_s: f64,
    /// Exact Recall@k on the level-0 sample gallery. Like mAP@k, an upper bound of the value at
    /// N: the sample is part of the pool, so no positive ranks higher at N than at S.
    #[serde(default = "not_recorded")]
    pub evaluate_at_s_recall_at_k: f64,
    /// Exact hit@1 on the level-0 sample gallery: the share of queries whose top positive no
    /// sampled or core item outranks, an upper bound of hit@1 at N.
    #[serde(default = "not_recorded")]
    pub evaluate_at_s_hit_at_1: f64,
    /// Count hardness mapped to N.
    pub count: f64,
    /// Power-law fit over the levels, extrapolated to N.
    pub power_law: Option<f64>,
    /// Log-linear fit over the levels, extrapolated to N.
    pub log_linear: Option<f64>,
    /// The evaluate-at-S_ℓ points the fits used (empty from a hardness file).
    pub level_points: Vec<LevelPoint>,
    /// The level-calibrated count law at N (`predict::calibrated`, experimental; None from a
    /// hardness file or a summary with one level).
    #[serde(default)]
    pub level_calibrated: Option<super::calibrated::CalibratedMetrics>,
    /// The level-selected evt fit at N (`predict::fit_choice`; None for the count estimator,
    /// from a hardness file or a summary with one level).
    #[serde(default)]
    pub level_selected: Option<super::fit_choice::FitChoice>,
}

/// Exact mAP@k on the sample gallery of one nesting level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LevelPoint {
    /// Index in `Summary::subsets`.
    pub subset: usize,
    pub sample_size: u64,
    pub map_at_k: f64,
}

/// Exact AP@k of each query on its sample gallery from the counts stored in the hardness
/// (`pool_above` = K_j + T^K_j and `core_above` = C_j + T^C_j: items at or above `s_j` in the
/// sample the hardness came from), with positive tie blocks (`metric::evaluate_counts`).
pub fn per_query_at_sample(qs: &[QueryHardness], k: usize) -> Vec<f64> {
    reports_at_sample(qs, k).iter().map(|r| r.ap_at_k).collect()
}

/// Every exact metric of each query on its sample gallery (the reports behind
/// [`per_query_at_sample`]): AP@k, Recall@k and hit@1 from one pass over the counts.
pub fn reports_at_sample(qs: &[QueryHardness], k: usize) -> Vec<QueryReport> {
    qs.par_iter()
        .map(|q| evaluate_counts(&q.query_id, &q.sample_counts(), k))
        .collect()
}

/// What a file written before a field existed reads as: NaN, not a made-up number.
fn not_recorded() -> f64 {
    f64::NAN
}

/// Exact mAP@k on subset `subset`'s sample gallery (counts and ties of that subset,
/// `metric::evaluate_counts`).
///
/// Panics if `subset` is out of range or the summary breaks its invariants (callers pass
/// validated summaries: `Summary::read`, the scan and `predict` check them).
pub fn evaluate_at_subset(s: &Summary, subset: usize, k: usize) -> f64 {
    super::mean(&per_query_at_subset(s, subset, k))
}

/// Per-query exact AP@k on subset `subset`'s sample gallery (the terms of
/// [`evaluate_at_subset`]; same panics).
pub fn per_query_at_subset(s: &Summary, subset: usize, k: usize) -> Vec<f64> {
    (0..s.queries.len())
        .into_par_iter()
        .map(|qi| {
            positive_counts(s, qi, subset)
                .map(|pos| evaluate_counts(&s.queries[qi].id, &pos, k).ap_at_k)
                .expect("a validated summary has usable counts")
        })
        .collect()
}

/// Evaluate-at-S_ℓ for every nesting level (level 0 first).
pub fn level_points(s: &Summary, k: usize) -> Vec<LevelPoint> {
    s.level_indices()
        .into_iter()
        .map(|i| LevelPoint {
            subset: i,
            sample_size: s.subset_sizes[i],
            map_at_k: evaluate_at_subset(s, i, k),
        })
        .collect()
}

/// Ordinary least squares `y = α + β x`; None with fewer than two distinct x.
pub fn least_squares(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let n = x.len();
    if n < 2 || y.len() != n {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    if sxx <= 0.0 || !sxx.is_finite() {
        return None;
    }
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let beta = sxy / sxx;
    Some((my - beta * mx, beta))
}

/// Power-law baseline: fit `ln m = a − b ln S` on the points with `m > 0`, value at N.
pub fn power_law(points: &[LevelPoint], n_pool: f64) -> Option<f64> {
    let pts: Vec<_> = points
        .iter()
        .filter(|p| p.map_at_k > 0.0 && p.sample_size > 0)
        .collect();
    let x: Vec<f64> = pts.iter().map(|p| (p.sample_size as f64).ln()).collect();
    let y: Vec<f64> = pts.iter().map(|p| p.map_at_k.ln()).collect();
    let (a, b) = least_squares(&x, &y)?;
    Some((a + b * n_pool.ln()).exp().clamp(0.0, 1.0))
}

/// Log-linear baseline: fit `m = a − b ln S`, value at N.
pub fn log_linear(points: &[LevelPoint], n_pool: f64) -> Option<f64> {
    let pts: Vec<_> = points.iter().filter(|p| p.sample_size > 0).collect();
    let x: Vec<f64> = pts.iter().map(|p| (p.sample_size as f64).ln()).collect();
    let y: Vec<f64> = pts.iter().map(|p| p.map_at_k).collect();
    let (a, b) = least_squares(&x, &y)?;
    Some((a + b * n_pool.ln()).clamp(0.0, 1.0))
}
