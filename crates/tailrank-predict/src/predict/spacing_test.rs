//! The top-spacing test of the trust verdict (docs/method.md §9): do the level-0 top lists
//! hold sampled items far above the rest of their tails, more often than a GPD tail puts
//! them there?
//!
//! Per query, with `n` = [`SPACING_N`], ξ̂_q fitted to its `n` largest sample scores over the
//! threshold `x_{n+1}`, and the top spacing
//!
//! ```text
//! R_q = (x₁ − x₂) / (x₂ − x_n)        x₁ ≥ x₂ ≥ … ≥ x_n, the n largest sample scores
//! ```
//!
//! Under a GPD tail the law of `R` depends on (ξ, n) only (no scale, no threshold, no
//! endpoint); its upper α-quantile `r_α(ξ, n)` is computed by a seeded Monte Carlo of `n` GPD
//! draws ([`spacing_quantile`], ξ rounded to a 0.05 grid). A sampled item far above the rest of
//! the tail (a rare component, a copy from a burst of near duplicates) makes `R_q > r_α`.
//! Pooled over the `Q_t` queries with a fit, `D` of them exceed and the null expects `α·Q_t`:
//!
//! ```text
//! E = D − α·Q_t,   z = E / √(α(1−α)·Q_t)
//! ```
//!
//! The verdict doubts when `z > Z_CRIT` (`predict::trust`). The test needs no nested level
//! and no bootstrap, and it sees rare mass spread thinly over many queries, which leaves each
//! query one sampled item at most and so escapes the endpoint test's per-positive count. It
//! is a diagnostic only: the excess does not say whether the rare mass is spread over the
//! queries or held by a few, and the move it implies under an even spread cost bursts and
//! heterogeneous 2–4 points (`docs/notes/2026-12-05-level0-excess-signal.md`).

use crate::evt::Gpd;
use crate::numerics::rng::{rng_for, StreamSeeding};
use crate::summary::Summary;
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// α: the per-query level of the test.
pub const ALPHA: f64 = 0.01;
/// `n`: the exceedances each query's test reads (the paper's fit: top 1000 at its 95%
/// quantile), whatever fit the estimate chose.
pub const SPACING_N: usize = 50;
/// Monte Carlo draws behind each quantile `r_α(ξ, n)`.
const DRAWS: usize = 20_000;
/// The ξ grid: `[−0.8, 0.8]` in steps of 0.05 (a fitted ξ̂ is clamped to it and rounded).
const XI_STEP: f64 = 0.05;
const XI_MAX: f64 = 0.8;

/// The pooled top-spacing test of one prediction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpacingTest {
    /// `Q_t`: queries whose level-0 top list holds `n + 1` scores and gives a fit of ξ.
    pub tested: usize,
    /// `D`: how many of them have `R_q > r_α(ξ̂_q, n)`.
    pub exceeding: usize,
    /// `E = D − α·Q_t`.
    pub excess: f64,
    /// `E / √(α(1−α)·Q_t)` (0 when nothing is tested).
    pub z: f64,
}

impl SpacingTest {
    /// Whether the verdict's test fires: `z > z_crit`.
    pub fn exceeds(&self, z_crit: f64) -> bool {
        self.z > z_crit
    }
}

/// `R = (x₁ − x₂)/(x₂ − x_n)` of the `n` largest of `top` (descending); None when fewer than 3
/// scores or `x₂ = x_n`.
pub fn top_spacing(top: &[f32], n: usize) -> Option<f64> {
    let n = n.min(top.len());
    if n < 3 {
        return None;
    }
    let (x1, x2, xn) = (f64::from(top[0]), f64::from(top[1]), f64::from(top[n - 1]));
    (x2 > xn).then(|| (x1 - x2) / (x2 - xn))
}

/// ξ's index on the grid: `round(clamp(ξ)/XI_STEP)`.
fn xi_index(xi: f64) -> i32 {
    (xi.clamp(-XI_MAX, XI_MAX) / XI_STEP).round() as i32
}

/// `r_α(ξ, n)`: the upper-α quantile of `R` over [`DRAWS`] samples of `n` unit GPD draws at
/// the grid point `xi_index · XI_STEP` (seeded by the grid point and `n`: the same value on
/// every call and machine).
pub fn spacing_quantile(xi_index: i32, n: usize) -> f64 {
    let gpd = Gpd {
        sigma: 1.0,
        xi: f64::from(xi_index) * XI_STEP,
    };
    let mut rng = rng_for(StreamSeeding::Nested, 0x5ace, xi_index as u64, n as u64);
    let mut r: Vec<f64> = (0..DRAWS)
        .map(|_| {
            // Uniform order statistics: the largest, the second largest and the smallest.
            let (mut a, mut b, mut lo) = (f64::MIN, f64::MIN, f64::MAX);
            for _ in 0..n {
                let u: f64 = rng.random();
                if u > a {
                    b = a;
                    a = u;
                } else if u > b {
                    b = u;
                }
                lo = lo.min(u);
            }
            let (x1, x2, xn) = (gpd.quantile(a), gpd.quantile(b), gpd.quantile(lo));
            (x1 - x2) / (x2 - xn)
        })
        .collect();
    r.sort_by(f64::total_cmp);
    r[((1.0 - ALPHA) * DRAWS as f64) as usize]
}

/// ξ̂ of a query's level-0 tail: the GPD fitted to `x₁ … x_n` over the threshold `x_{n+1}`,
/// the maximum included. (Fitted without it, ξ̂ is biased low and a GPD's own maxima exceed
/// `r_α` about ten times too often: `docs/notes/2026-12-05-level0-excess-signal.md`.)
fn tail_xi(top: &[f32]) -> Option<f64> {
    let u = f64::from(*top.get(SPACING_N)?);
    let y: Vec<f64> = top[..SPACING_N].iter().map(|&x| f64::from(x) - u).collect();
    crate::evt::fit_gpd_bounded(&y).map(|f| f.gpd.xi)
}

/// The pooled test over the level-0 top lists of summary `s` (module docs).
pub fn spacing_test(s: &Summary) -> SpacingTest {
    let per_query: Vec<(i32, f64)> = s
        .queries
        .par_iter()
        .filter_map(|q| {
            let top = q.top_scores.first()?;
            let xi = tail_xi(top)?;
            Some((xi_index(xi), top_spacing(top, SPACING_N)?))
        })
        .collect();
    let mut grid: Vec<i32> = per_query.iter().map(|&(i, _)| i).collect();
    grid.sort_unstable();
    grid.dedup();
    let quantiles: BTreeMap<i32, f64> = grid
        .par_iter()
        .map(|&i| (i, spacing_quantile(i, SPACING_N)))
        .collect();
    let tested = per_query.len();
    let exceeding = per_query.iter().filter(|(i, r)| *r > quantiles[i]).count();
    let t = tested as f64;
    let excess = exceeding as f64 - ALPHA * t;
    let se = (ALPHA * (1.0 - ALPHA) * t).sqrt();
    SpacingTest {
        tested,
        exceeding,
        excess,
        z: if se > 0.0 { excess / se } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_is_scale_and_shift_free() {
        let top = [0.9f32, 0.8, 0.75, 0.7];
        let r = top_spacing(&top, 4).unwrap();
        assert!((r - 0.1 / 0.1).abs() < 1e-5);
        let moved: Vec<f32> = top.iter().map(|x| 2.0 * x + 1.0).collect();
        assert!((top_spacing(&moved, 4).unwrap() - r).abs() < 1e-5);
        assert_eq!(top_spacing(&top[..2], 2), None);
        assert_eq!(top_spacing(&[0.5, 0.5, 0.5], 3), None);
    }

    /// At ξ = 0 the spacings of exponential order statistics are independent (Rényi): for
    /// n = 3, `R = E₁/(E₂/2)` with E₁, E₂ iid Exp(1), so `P(R > r) = 1/(1 + r/2)` and
    /// `r_α = 2(1/α − 1)` = 198 at α = 0.01.
    #[test]
    fn quantile_at_xi_zero_matches_renyi() {
        let r = spacing_quantile(0, 3);
        assert!((r - 198.0).abs() / 198.0 < 0.15, "{r}");
        assert_eq!(r, spacing_quantile(0, 3), "seeded");
    }

    /// For ξ < 0 the GPD is bounded and its top spacing shrinks: `r_α` falls with ξ.
    #[test]
    fn quantile_falls_with_a_bounded_tail() {
        let (neg, zero, pos) = (
            spacing_quantile(-8, 50),
            spacing_quantile(0, 50),
            spacing_quantile(8, 50),
        );
        assert!(neg < zero && zero < pos, "{neg} {zero} {pos}");
    }
}
