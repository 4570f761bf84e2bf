//! Generalised Pareto fits for the upper tail of a query's pool scores (SPEC 6).
//!
//! Convention (scipy.stats.genpareto with `c = ξ`, `loc = 0`, `scale = σ`): survival
//! `P(Y > y) = (1 + ξ y/σ)^(-1/ξ)` (`exp(-y/σ)` at ξ = 0), support `0 ≤ y ≤ -σ/ξ` for ξ < 0.
//! TODO(evt helper): bounded maximum-likelihood fit with ξ ∈ [-1, 0].

/// A fitted GPD (scipy convention, loc = 0).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gpd {
    pub sigma: f64,
    pub xi: f64,
}

/// Result of [`fit_gpd_bounded`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpdFit {
    pub gpd: Gpd,
    /// Log-likelihood of the excesses under the fit.
    pub log_likelihood: f64,
    /// Number of excesses fitted.
    pub n: usize,
}

/// Maximum-likelihood GPD fit of non-negative excesses `y` with ξ constrained to [-1, 0].
/// TODO(evt helper): implement (compare ξ = 0, ξ = -1 and the interior profile maximiser).
pub fn fit_gpd_bounded(y: &[f64]) -> Option<GpdFit> {
    let _ = y;
    None
}
