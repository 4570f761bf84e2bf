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
//! does not move the estimate: the excess does not say whether the rare mass is spread over
//! the queries or held by a few, and the move it implies under an even spread cost bursts and
//! heterogeneous 2–4 points (`docs/notes/2026-12-05-level0-excess-signal.md`).
//!
//! **Above the top positive.** The exceeding queries whose top item `x₁` also outranks their
//! top positive, `D_a` of `Q_a`, read a rate of rare items that sit above whole queries
//! ([`SpacingTest::rate_above`]); the realized interval reaches towards the metric at that
//! rate, weighted by [`SpacingTest::reach_z`] (`predict::realized`, docs/method.md §9).
//!
//! **The centre of the rare items above.** Where the count `D_a` behind that rate is clearly
//! more than the null puts there (its exact binomial tail as a z, [`SpacingTest::z_above`],
//! past [`Z_MOVE_NONE`]), the estimate moves `½·w_move(z_a)` of the way to that reading
//! ([`SpacingCentre`]): the rate says how many rare items there are, not how they are spread
//! over the queries, and the truth lies between the tail model's value (all of them on a few
//! queries) and the reading (spread evenly, the hardest case); the midpoint halves the worst
//! case over that range, as the centre of the endpoint test's excess does.

use crate::evt::Gpd;
use crate::hardness::{QueryHardness, SpacingMove};
use crate::maps::MapKind;
use crate::numerics::rng::{rng_for, StreamSeeding};
use crate::summary::Summary;
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// α: the per-query level of the test.
pub const ALPHA: f64 = 0.01;
/// `P`: the share of the rare items above a query's top positive that make its test exceed.
/// *Choice:* one half, the power measured for the spread pair's items at 5%
/// (`docs/notes/2026-12-05-spacing-reading.md`).
pub const POWER_ABOVE: f64 = 0.5;
/// `n`: the exceedances each query's test reads (as many as a fit to the top 1000 at its 95%
/// quantile has), whatever fit the estimate chose.
pub const SPACING_N: usize = 50;
/// The z of the count above the top positive from which its reading moves the estimate
/// (`w_move(z_a)` > 0): the endpoint test's gate for its own move.
pub const Z_MOVE_NONE: f64 = super::stats::Z_CRIT;
/// The z from which the estimate moves the whole half way (`w_move(z)` = 1).
pub const Z_MOVE_FULL: f64 = 5.0;
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
    /// `Q_a`: the tested queries whose top sampled item `x₁` outranks their top positive.
    #[serde(default)]
    pub tested_above: usize,
    /// `D_a`: how many of those exceed.
    #[serde(default)]
    pub exceeding_above: usize,
}

impl SpacingTest {
    /// Whether the verdict's test fires: `z > z_crit`.
    pub fn exceeds(&self, z_crit: f64) -> bool {
        self.z > z_crit
    }

    /// `z_a = Φ⁻¹(1 − p)`, `p = P(Bin(Q_a, α) ≥ D_a) = I_α(D_a, Q_a − D_a + 1)`: the exact
    /// upper tail of the count above the top positive under the null, as a z (0 when
    /// `D_a = 0`; `p` floored at 1e-15, z ≈ 7.9). The pooled z's normal approximation does
    /// not hold for the few queries (often 1 to 5) that count there: one exceeding query
    /// among ten gives a z of 2.9 where the exact tail, p = 0.096, gives 1.3.
    pub fn z_above(&self) -> f64 {
        let (d, q) = (self.exceeding_above as f64, self.tested_above as f64);
        if self.exceeding_above == 0 {
            return 0.0;
        }
        let p = crate::numerics::beta::inc_beta(ALPHA, d, q - d + 1.0).max(1e-15);
        -crate::numerics::norm_ppf(p)
    }

    /// `z_reach = max(z, z_a)`: the z that weights the realized interval's reach towards the
    /// reading of rare items above the top positive (`predict::reach::AboveReach`). The
    /// reading's rate is `D_a`'s, so its own exact z counts; the pooled z, which also counts
    /// the queries whose exceeding item sits below their top positive, keeps the reach it
    /// gave before (`docs/notes/2026-12-06-reach-z.md`).
    pub fn reach_z(&self) -> f64 {
        self.z.max(self.z_above())
    }

    /// `r_a = max(0, D_a − α·Q_a)/(P·Q_t·S)`: the rate, per unsampled pool item and query, of
    /// rare items above the top positive that the exceeding queries read (`sample` = S), over
    /// the test's power `P` = [`POWER_ABOVE`]. The null count `α·Q_a` is approximate: a large
    /// spacing makes a high `x₁` more likely. 0 when nothing is tested.
    pub fn rate_above(&self, sample: f64) -> f64 {
        let excess = (self.exceeding_above as f64 - ALPHA * self.tested_above as f64).max(0.0);
        let denominator = POWER_ABOVE * self.tested as f64 * sample;
        if denominator > 0.0 {
            excess / denominator
        } else {
            0.0
        }
    }
}

/// The estimate moved to the centre of the rare items above the top positive (module docs),
/// when `w_move(z) > 0`: what the move was built on and the tail model's own estimate beside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpacingCentre {
    /// `r_a`, the rate of rare items above the top positive per unsampled pool item
    /// ([`SpacingTest::rate_above`]).
    pub rate_above: f64,
    /// `z_a`, the above count's own z ([`SpacingTest::z_above`]); None from a hardness
    /// file, which carries the weight only.
    pub z_above: Option<f64>,
    /// `w_move(z_a)`.
    pub weight: f64,
    /// The tail model's own mAP@k (before this move and the centre of the excess).
    pub unmoved_map_at_k: f64,
    /// The move of mAP@k: `mean_q ½·w_move·(a_q(r_a) − a_q(0))`.
    pub shift: f64,
}

impl SpacingCentre {
    /// What a hardness file carries of it.
    pub fn carried(&self) -> SpacingMove {
        SpacingMove {
            rate: self.rate_above,
            weight: self.weight,
        }
    }
}

/// `w_move(z) = clamp((z − Z_MOVE_NONE)/(Z_MOVE_FULL − Z_MOVE_NONE), 0, 1)`.
pub fn move_weight(z: f64) -> f64 {
    ((z - Z_MOVE_NONE) / (Z_MOVE_FULL - Z_MOVE_NONE)).clamp(0.0, 1.0)
}

/// The move the test makes: `r_a` and `w_move(z_a)` when both are positive (`sample` = S).
pub fn spacing_move(sp: &SpacingTest, sample: f64) -> Option<SpacingMove> {
    let (rate, weight) = (sp.rate_above(sample), move_weight(sp.z_above()));
    (rate > 0.0 && weight > 0.0).then_some(SpacingMove { rate, weight })
}

/// `d_q = a_q(r_a) − a_q(0)`: per query, the binomial map's AP@k at N of `h0` with the rate
/// `r_a` added to every positive ([`with_rate_above`]) less that of `h0` (`at_zero`).
pub fn rate_above_effect(
    h0: &[QueryHardness],
    rate: f64,
    n_pool: f64,
    k: usize,
    at_zero: &[f64],
) -> Vec<f64> {
    let moved = with_rate_above(h0, rate, n_pool);
    let at_rate = super::per_query_ap(&moved, n_pool, k, MapKind::Binomial);
    at_rate.iter().zip(at_zero).map(|(a, z)| a - z).collect()
}

/// The centre of the rare items above, per query: `v_q + ½·w·d_q` (`effect` = `d_q` of
/// [`rate_above_effect`]).
pub fn centre_of_spacing(v: &[f64], effect: &[f64], weight: f64) -> Vec<f64> {
    v.iter()
        .zip(effect)
        .map(|(v, d)| v + super::endpoint_test::HALF_WAY * weight * d)
        .collect()
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
/// `r_α` about ten times too often: `docs/notes/2026-12-05-level0-excess-signal.md`.) None
/// with fewer than `n + 1` scores or without a fit.
pub fn tail_xi(top: &[f32]) -> Option<f64> {
    let u = f64::from(*top.get(SPACING_N)?);
    let y: Vec<f64> = top[..SPACING_N].iter().map(|&x| f64::from(x) - u).collect();
    crate::evt::fit_gpd_bounded(&y).map(|f| f.gpd.xi)
}

/// The pooled test over the level-0 top lists of summary `s` (module docs).
pub fn spacing_test(s: &Summary) -> SpacingTest {
    // Per tested query: ξ's grid index, R_q, and whether x₁ outranks the top positive.
    let per_query: Vec<(i32, f64, bool)> = s
        .queries
        .par_iter()
        .filter_map(|q| {
            let top = q.top_scores.first()?;
            let xi = tail_xi(top)?;
            let above = q.positives.first().is_some_and(|p| top[0] > p.score);
            Some((xi_index(xi), top_spacing(top, SPACING_N)?, above))
        })
        .collect();
    let mut grid: Vec<i32> = per_query.iter().map(|&(i, _, _)| i).collect();
    grid.sort_unstable();
    grid.dedup();
    let quantiles: BTreeMap<i32, f64> = grid
        .par_iter()
        .map(|&i| (i, spacing_quantile(i, SPACING_N)))
        .collect();
    let exceeds = |&(i, r, _): &(i32, f64, bool)| r > quantiles[&i];
    let tested = per_query.len();
    let exceeding = per_query.iter().filter(|q| exceeds(q)).count();
    let t = tested as f64;
    let excess = exceeding as f64 - ALPHA * t;
    let se = (ALPHA * (1.0 - ALPHA) * t).sqrt();
    SpacingTest {
        tested,
        exceeding,
        excess,
        z: if se > 0.0 { excess / se } else { 0.0 },
        tested_above: per_query.iter().filter(|q| q.2).count(),
        exceeding_above: per_query.iter().filter(|q| q.2 && exceeds(q)).count(),
    }
}

/// The level-0 hardness with the rate `r_a` of rare items above the top positive added to
/// every positive: `x̂ + r_a·(N − S)/N`, so that the binomial map's `Bin(N, x̂)` gains the mean
/// `(N − S)·r_a` of unsampled rare items above it ([`SpacingTest::rate_above`]).
pub fn with_rate_above(h0: &[QueryHardness], rate: f64, n_pool: f64) -> Vec<QueryHardness> {
    let mut h = h0.to_vec();
    for q in &mut h {
        let x = rate * (1.0 - q.sample_size as f64 / n_pool).max(0.0);
        for p in &mut q.positives {
            p.x_hat += x;
        }
    }
    h
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

    /// `r_a = max(0, D_a − α·Q_a)/(P·Q_t·S)`: by hand, and 0 below the null count or with
    /// nothing tested.
    #[test]
    fn rate_above_counts_the_excess_over_the_null_and_the_power() {
        let sp = |tested, tested_above, exceeding_above| SpacingTest {
            tested,
            exceeding: exceeding_above,
            excess: 0.0,
            z: 0.0,
            tested_above,
            exceeding_above,
        };
        let r = sp(1000, 200, 12).rate_above(1e6);
        assert!(
            (r - (12.0 - 2.0) / (POWER_ABOVE * 1000.0 * 1e6)).abs() < 1e-20,
            "{r}"
        );
        assert_eq!(sp(1000, 200, 1).rate_above(1e6), 0.0);
        assert_eq!(sp(0, 0, 0).rate_above(1e6), 0.0);
    }

    /// Every positive gains `r·(N − S)/N`; a query whose sample is the pool gains nothing.
    #[test]
    fn the_rate_above_reaches_every_positive() {
        use crate::hardness::{Branch, PositiveHardness};
        let positive = |x_hat, branch| PositiveHardness {
            id: String::new(),
            score: 0.5,
            core_above: 0,
            pool_above: 0,
            x_hat,
            branch,
        };
        let query = |sample_size| QueryHardness {
            query_id: String::new(),
            sample_size,
            tail: None,
            positives: vec![positive(1e-6, Branch::Tail), positive(0.0, Branch::Immune)],
        };
        let h = with_rate_above(&[query(250), query(1000)], 1e-3, 1000.0);
        let x: Vec<f64> = h[0].positives.iter().map(|p| p.x_hat).collect();
        assert!((x[0] - (1e-6 + 0.75e-3)).abs() < 1e-15 && (x[1] - 0.75e-3).abs() < 1e-15);
        assert!(h[1].positives.iter().all(|p| p.x_hat <= 1e-6));
    }

    /// `w_move` is 0 up to z = 3, ½ at 4 and 1 from 5; the centre moves `½·w·d_q`.
    #[test]
    fn the_move_weight_and_the_centre() {
        let w: Vec<f64> = [-6.0, 3.0, 4.0, 5.0, 9.0].map(move_weight).to_vec();
        assert_eq!(w, [0.0, 0.0, 0.5, 1.0, 1.0]);
        let c = centre_of_spacing(&[0.5, 0.3], &[-0.2, 0.0], 0.5);
        assert!((c[0] - 0.45).abs() < 1e-15 && c[1] == 0.3, "{c:?}");
    }

    /// `z_a` against scipy: `norm.isf(binom.sf(D_a − 1, Q_a, 0.01))`; the move follows it,
    /// not the pooled z.
    #[test]
    fn the_above_count_is_tested_exactly() {
        let sp = |z, tested_above, exceeding_above| SpacingTest {
            tested: 1000,
            exceeding: 30,
            excess: 20.0,
            z,
            tested_above,
            exceeding_above,
        };
        for (q, d, want) in [
            (10, 1, 1.3069318733044222),
            (100, 3, 1.4093002514755026),
            (100, 5, 2.7033402736902863),
            (40, 4, 3.2006430497377454),
            (100, 12, 6.120843574700819),
        ] {
            let z = sp(6.0, q, d).z_above();
            assert!((z - want).abs() < 1e-6, "{q} {d}: {z} vs {want}");
        }
        assert_eq!(sp(6.0, 100, 0).z_above(), 0.0);
        assert_eq!(
            spacing_move(&sp(6.0, 10, 1), 1e6),
            None,
            "one query among ten"
        );
        assert_eq!(spacing_move(&sp(9.0, 100, 0), 1e6), None, "no count above");
        let m = spacing_move(&sp(2.0, 100, 12), 1e6).unwrap();
        assert_eq!((m.rate, m.weight), (sp(2.0, 100, 12).rate_above(1e6), 1.0));
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
