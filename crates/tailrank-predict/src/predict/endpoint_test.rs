//! The endpoint test of the trust verdict (docs/method.md §9): do the nested levels find more
//! pool mass past the fitted endpoints than the fits' own sampling noise explains?
//!
//! At level ℓ (sample `S_ℓ`, fit of `n_u` excesses, shape `ξ̂ < 0`), a positive past the fitted
//! endpoint is called immune. Level 0 holds `S_0 − S_ℓ` items that level ℓ has not seen, so
//! whether one of them outranks the positive (`K_0 > K_ℓ`) is known. If the tail is the fitted
//! GPD, the chance of that is the endpoint law's ([`crate::evt::endpoint_law`]) at the
//! positive's relative excess `z` past the endpoint and exposure `e_ℓ = (S_0 − S_ℓ)/S_ℓ`:
//!
//! ```text
//! O_q = Σ_{ℓ ∈ LEVELS} Σ_{j immune at ℓ} 1[K_{0,j} > K_{ℓ,j}]
//! P_q = Σ_{ℓ ∈ LEVELS} Σ_{j immune at ℓ} P(outranked | z_{ℓ,j}, ξ̂_{ℓ,q}, e_ℓ)
//! D   = mean_q (O_q − P_q),   z = D / SE(D)   (SE: the ideal paired query bootstrap's,
//!                                              √Σ(d_q − D)²/Q, with d_q = O_q − P_q)
//! ```
//!
//! The test fires when `O > P` and `z > Z_CRIT` (the verdict's, `predict::trust`): mass the model cannot have (a rare component
//! above the main tail, items shared by many queries) outranks positives it calls immune. The
//! expected count is scale-free under the model (the law depends on `n_u` and `ξ` only), so
//! unlike the level trend it needs no extrapolation in the sample size.
//!
//! **Excess rate.** When `O > P`, the one rate `r` per unsampled pool item that, added to the
//! law for every checked immune positive, accounts for the excess:
//!
//! ```text
//! Σ_i [1 − (1 − p_i)·e^{−(S_0 − S_ℓ(i))·r}] = O        (r = 0 when O ≤ P)
//! ```
//!
//! [`with_excess_rate`] gives it to every level-0 immune positive: the *excess-mass reading*
//! of the sample, which the realized interval spans (`predict::realized`). For a fixed mean
//! rate, an even spread is the hardest reading (each positive's expected AP@k term is convex
//! and decreasing in its rate), and the level-0 immune positives sit farther past their
//! endpoints than the levels' ones, so the reading errs hard: it is an interval end, not an
//! estimate (`docs/notes/2026-12-estimator-log.md`, "The excess-mass reading").
//!
//! **Centre of the excess.** Full concentration (rate 0 for the immune positives, the tail
//! model's own reading) is the other end, and how the pooled rate spreads over the queries is
//! not identified (`docs/reference/predict.md`, "What no estimator can know"). Under
//! `PredictOptions::excess_centre` (the default) the estimate is moved to the midpoint of the
//! two ends ([`centre_of_excess`]), which halves the worst case over that range, at the
//! *shrunk* excess: the empirical-Bayes mean of `D` under a normal prior
//! centred at 0 whose variance is estimated by moments, `D·w` with
//!
//! ```text
//! w = 1 − 1/z²  if z > Z_CRIT,  else 0        (0 when O ≤ P or without a finite SE)
//! ```
//!
//! that is, only once the endpoint test fires (`z > Z_CRIT`, the verdict's level), and `r_w`
//! the rate that accounts for `P + w·(O − P)`. An excess the test does not call real leaves
//! the estimate where the tail model puts it; a clear one moves it almost fully. The rate of
//! the move is not `r_w` itself but `r_γ`, the rate the same shrunk count leaves the level-0
//! immune positives once the hazard is allowed to fall with the exposure
//! ([`survivor_decay`]): `r_γ = r_w` for an even spread (`γ̂ = 0`), far
//! smaller for an excess concentrated on few positives (bursts, hubs, real vector geometry),
//! where the move at `r_w` cost up to 14 points.
//!
//! **Per level.** The counts are also kept per level ℓ, with `r_ℓ`, the rate that accounts
//! for `O_ℓ` from level ℓ's cases alone. An even spread of the excess gives one rate at every
//! level; a concentrated one gives `r_1 < r_3`, since the susceptible positives are more often
//! already outranked within the larger level-1 sample, and fewer of them remain immune there
//! (survivor depletion). A diagnostic; the decay fit reads the same signal from the cases
//! themselves ([`survivor_decay`]).
//!
//! *Levels 1–3.* Deeper levels fit the tail 16 times or more deeper in the body than level 0
//! (the same reason the in-sample check uses level 1); `docs/notes/2026-12-estimator-log.md`, "The endpoint test",
//! gives the per-level counts that were measured before this choice.

use super::bootstrap::QueryBootstrap;
use super::stats::{z_score, Z_CRIT};
use super::survivor_decay::{self, excess_rate, DecayCase};
use crate::evt::endpoint_law::EndpointLaw;
use crate::hardness::{Branch, QueryHardness};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The nesting levels whose immune positives the test checks.
pub const LEVELS: std::ops::RangeInclusive<usize> = 1..=3;

/// The endpoint test's values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointTest {
    /// The levels checked (those of [`LEVELS`] the summary has).
    pub levels: Vec<usize>,
    /// Positives called immune at those levels, summed over the levels.
    pub immune: usize,
    /// `O = Σ_q O_q`: how many of them level 0 outranks.
    pub observed: usize,
    /// `P = Σ_q P_q`: how many the endpoint law expects.
    pub predicted: f64,
    /// The ideal paired query bootstrap's SE of `D = mean_q (O_q − P_q)`
    /// (`QueryBootstrap::ideal_std_error`, whatever the replicate count).
    pub std_error: f64,
    /// `D / SE(D)`.
    pub z: f64,
    /// `r`: the excess rate per unsampled pool item (module docs); 0 when `O ≤ P`.
    #[serde(default)]
    pub excess_rate: f64,
    /// `w = 1 − 1/z²` past the gate `z > Z_CRIT`, else 0: the share of the excess `O − P` the
    /// centre is built on.
    #[serde(default)]
    pub shrink_weight: f64,
    /// `r_w`: the rate that accounts for `P + w·(O − P)` (0 when `w = 0`).
    #[serde(default)]
    pub shrunk_rate: f64,
    /// The same counts per level of `levels`, each with the excess rate of its cases alone
    /// (module docs, "Per level").
    #[serde(default)]
    pub per_level: Vec<LevelExcess>,
    /// `γ̂`: the decay of the excess hazard with the exposure, `h(t) ∝ t^{−γ}`
    /// ([`survivor_decay`]); 0 when `O ≤ P`.
    #[serde(default)]
    pub hazard_decay: f64,
    /// `r_γ`: the rate per unsampled item that gives each level-0 immune positive the
    /// cumulative hazard of the decaying fit over the unsampled pool, for the shrunk count
    /// `P + w·(O − P)` ([`survivor_decay::decayed_rate`]; 0 when `w = 0`). The rate of the
    /// centre of the excess.
    #[serde(default)]
    pub decayed_rate: f64,
}

/// The endpoint test's counts on the immune positives of one level, and `r_ℓ`, the excess rate
/// that accounts for that level's `O_ℓ` alone (0 when `O_ℓ ≤ P_ℓ`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LevelExcess {
    pub level: usize,
    pub immune: usize,
    pub observed: usize,
    pub predicted: f64,
    pub excess_rate: f64,
}

impl EndpointTest {
    /// Whether the observed count exceeds the expected one beyond `z_crit` paired SEs:
    /// `O > P` and `z > z_crit` (the verdict uses its `Z_CRIT`); never without a finite SE
    /// (no query).
    pub fn exceeds(&self, z_crit: f64) -> bool {
        self.std_error.is_finite() && self.observed as f64 > self.predicted && self.z > z_crit
    }

    /// `O / P` (+∞ when nothing was expected and something was observed).
    pub fn ratio(&self) -> f64 {
        self.observed as f64 / self.predicted.max(f64::MIN_POSITIVE)
    }
}

/// The hardness of one nesting level, as the test reads it.
#[derive(Debug, Clone, Copy)]
pub struct LevelHardness<'a> {
    /// ℓ (0 = the sample itself).
    pub level: usize,
    pub sample_size: u64,
    pub hardness: &'a [QueryHardness],
}

/// One immune positive of one level: its query, `n_u`, `ξ̂`, relative excess `z`, exposure and
/// whether level 0 outranks it.
struct Case {
    query: usize,
    n_u: usize,
    xi: f64,
    z: f64,
    exposure: f64,
    /// `S_0 − S_ℓ`: the level-0 items level ℓ has not seen.
    unseen: f64,
    outranked: bool,
    level: usize,
}

/// The endpoint test from the level-0 hardness `h0` (sample `s0`) and the deeper levels'
/// hardness; None when no level of [`LEVELS`] holds an immune positive (nothing to test, as
/// with the count estimator).
pub fn endpoint_test(
    h0: &[QueryHardness],
    s0: u64,
    pool_size: f64,
    levels: &[LevelHardness<'_>],
) -> Option<EndpointTest> {
    let s0 = s0 as f64;
    let used: Vec<&LevelHardness<'_>> = levels
        .iter()
        .filter(|l| LEVELS.contains(&l.level) && l.hardness.len() == h0.len())
        .collect();
    if used.is_empty() {
        return None;
    }
    let mut cases = Vec::new();
    for l in &used {
        let exposure = (s0 - l.sample_size as f64).max(0.0) / l.sample_size.max(1) as f64;
        for (qi, (q0, ql)) in h0.iter().zip(l.hardness).enumerate() {
            let Some(tail) = ql.tail.filter(|t| t.fit.gpd.xi < 0.0) else {
                continue;
            };
            let reach = tail.fit.gpd.endpoint();
            for (p0, pl) in q0.positives.iter().zip(&ql.positives) {
                if pl.branch != Branch::Immune {
                    continue;
                }
                cases.push(Case {
                    query: qi,
                    n_u: tail.n_u,
                    xi: tail.fit.gpd.xi,
                    z: (f64::from(pl.score) - tail.u) / reach - 1.0,
                    exposure,
                    unseen: (s0 - l.sample_size as f64).max(0.0),
                    outranked: p0.pool_above > pl.pool_above,
                    level: l.level,
                });
            }
        }
    }
    if cases.is_empty() {
        return None;
    }
    let mut sizes: Vec<usize> = cases.iter().map(|c| c.n_u).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let laws: BTreeMap<usize, Arc<EndpointLaw>> = sizes
        .par_iter()
        .map(|&n| (n, EndpointLaw::shared(n)))
        .collect();
    let mut diff = vec![0.0; h0.len()];
    let (mut observed, mut predicted) = (0usize, 0.0);
    let mut law = Vec::with_capacity(cases.len());
    let mut by_level: BTreeMap<usize, LevelExcess> = BTreeMap::new();
    for c in &cases {
        let p = laws[&c.n_u].outranked_probability(c.xi, c.z, c.exposure);
        let o = usize::from(c.outranked);
        observed += o;
        predicted += p;
        diff[c.query] += o as f64 - p;
        law.push((p, c.unseen));
        let e = by_level.entry(c.level).or_insert(LevelExcess {
            level: c.level,
            immune: 0,
            observed: 0,
            predicted: 0.0,
            excess_rate: 0.0,
        });
        e.immune += 1;
        e.observed += o;
        e.predicted += p;
    }
    let per_level = by_level
        .into_values()
        .map(|e| {
            let own: Vec<(f64, f64)> = (law.iter().zip(&cases))
                .filter(|(_, c)| c.level == e.level)
                .map(|(x, _)| *x)
                .collect();
            LevelExcess {
                excess_rate: excess_rate(&own, e.observed as f64),
                ..e
            }
        })
        .collect();
    let d = diff.iter().sum::<f64>() / diff.len().max(1) as f64;
    // The ideal bootstrap's SE (the limit of the paired query bootstrap), so that the move
    // (an estimate) and its gate depend neither on the replicate count nor on the draws.
    let std_error = QueryBootstrap::ideal_std_error(&diff);
    let z = z_score(d, std_error);
    let w = shrink_weight(z, std_error);
    let decay_cases: Vec<DecayCase> = (law.iter().zip(&cases))
        .map(|(&(p, unseen), c)| DecayCase {
            p,
            seen: (s0 - unseen) / s0,
            outranked: c.outranked,
        })
        .collect();
    let hazard_decay = if observed as f64 > predicted {
        survivor_decay::fit_decay(&decay_cases)
    } else {
        0.0
    };
    let shrunk_count = predicted + w * (observed as f64 - predicted);
    Some(EndpointTest {
        levels: used.iter().map(|l| l.level).collect(),
        immune: cases.len(),
        observed,
        predicted,
        std_error,
        z,
        excess_rate: excess_rate(&law, observed as f64),
        shrink_weight: w,
        shrunk_rate: if w > 0.0 {
            excess_rate(&law, shrunk_count)
        } else {
            0.0
        },
        per_level,
        hazard_decay,
        decayed_rate: if w > 0.0 {
            survivor_decay::decayed_rate(&decay_cases, shrunk_count, hazard_decay, s0, pool_size)
        } else {
            0.0
        },
    })
}

/// `w = 1 − 1/z²` for `z = D/SE > Z_CRIT` with a finite SE, else 0 (module docs): the
/// factor of the empirical-Bayes mean `D·w` of the excess under a prior `N(0, τ²)` with
/// `τ² = max(0, D² − SE²)`, once the endpoint test fires. Without a measured noise (`SE = 0`,
/// `z = +∞`: one query, whose noise is unknown, not absent) the excess moves nothing.
pub fn shrink_weight(z: f64, std_error: f64) -> f64 {
    if std_error.is_finite() && z.is_finite() && z > Z_CRIT {
        1.0 - 1.0 / (z * z)
    } else {
        0.0
    }
}

/// The level-0 hardness with every immune positive given the excess rate: `x̂ = r·(N − S)/N`,
/// so that the binomial map's `Bin(N, x̂)` has the mean `(N − S)·r` of the unsampled items
/// above it (module docs). Other positives are unchanged.
pub fn with_excess_rate(h0: &[QueryHardness], rate: f64, n_pool: f64) -> Vec<QueryHardness> {
    let mut h = h0.to_vec();
    for q in &mut h {
        let x = rate * (1.0 - q.sample_size as f64 / n_pool).max(0.0);
        for p in q
            .positives
            .iter_mut()
            .filter(|p| p.branch == Branch::Immune)
        {
            p.x_hat = x;
        }
    }
    h
}

/// The estimate moved to the centre of the endpoint test's shrunk excess (docs/method.md
/// §9), when `w > 0`: what the move was built on and the tail model's own estimate beside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ExcessCentre {
    /// `r_γ`, the decayed rate of the shrunk excess per unsampled pool item the move is built
    /// on ([`EndpointTest::decayed_rate`]).
    pub excess_rate: f64,
    /// `w`, the share of the excess `O − P` behind `r_γ`.
    #[serde(default)]
    pub weight: f64,
    /// `γ̂`, the survivor decay behind `r_γ` (0 from a hardness file written before the
    /// decay was recorded).
    #[serde(default)]
    pub hazard_decay: f64,
    /// The tail model's own mAP@k (the paper's estimator under the default options).
    pub unmoved_map_at_k: f64,
    /// The move of mAP@k: `mean_q ½(a_q(r_γ) − a_q(0))`, `r_γ` the decayed rate.
    pub shift: f64,
}

/// How far a move goes from the tail model's reading towards the rate's: the midpoint, which
/// halves the worst case over the range between them (docs/method.md §9).
pub const HALF_WAY: f64 = 0.5;

/// The centre of the excess, per query: `v_q + ½·(at_rate_q − at_zero_q)`, the value `v`
/// moved halfway from the count-law reading with every level-0 immune positive at rate 0
/// (`at_zero`) to the one with all of them at the excess rate (`at_rate`, the even spread).
///
/// Given the pooled rate, the truth lies between full concentration (the immune positives'
/// rate 0, evt's reading) and the even spread (the hardest reading, by convexity of each
/// positive's expected AP@k term); the sample does not say where (`docs/reference/predict.md`, "What
/// no estimator can know"), and the midpoint halves the worst case over that range.
pub fn centre_of_excess(v: &[f64], at_zero: &[f64], at_rate: &[f64]) -> Vec<f64> {
    v.iter()
        .zip(at_zero)
        .zip(at_rate)
        .map(|((v, z), r)| v + HALF_WAY * (r - z))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No excess, or one the endpoint test does not call real (`z ≤ Z_CRIT`), gives no
    /// weight; past the gate the empirical-Bayes factor, almost all for a clear one.
    #[test]
    fn shrink_weight_follows_the_signal_to_noise() {
        assert_eq!(shrink_weight(-2.0, 1.0), 0.0);
        assert_eq!(shrink_weight(f64::NAN, f64::NAN), 0.0);
        assert_eq!(shrink_weight(0.8, 1.0), 0.0);
        assert_eq!(shrink_weight(2.0, 1.0), 0.0);
        assert_eq!(shrink_weight(Z_CRIT, 1.0), 0.0);
        assert!((shrink_weight(4.0, 1.0) - 15.0 / 16.0).abs() < 1e-15);
        assert!(shrink_weight(10.0, 1.0) > 0.98);
        assert_eq!(shrink_weight(10.0, f64::INFINITY), 0.0);
        assert_eq!(shrink_weight(f64::INFINITY, 0.0), 0.0);
    }

    /// Each value moves by half the step from the rate-0 reading to the rate-r one.
    #[test]
    fn the_centre_is_halfway() {
        let moved = centre_of_excess(&[0.5, 0.9], &[0.6, 0.9], &[0.2, 0.7]);
        for (got, want) in moved.into_iter().zip([0.3, 0.8]) {
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
    }

    /// The rate solves its equation; no excess gives 0; a count no rate can reach gives the
    /// largest rate tried.
    #[test]
    fn excess_rate_solves_its_equation() {
        let law = [(0.1, 1e6), (0.0, 5e5), (0.3, 1e6), (0.05, 2e6)];
        let expected = |r: f64| {
            law.iter()
                .map(|&(p, u): &(f64, f64)| 1.0 - (1.0 - p) * (-u * r).exp())
                .sum::<f64>()
        };
        assert_eq!(excess_rate(&law, 0.2), 0.0);
        assert_eq!(excess_rate(&law, expected(0.0)), 0.0);
        for observed in [1.0, 2.0, 3.5] {
            let r = excess_rate(&law, observed);
            assert!(r > 0.0);
            assert!((expected(r) - observed).abs() < 1e-9, "{observed}: {r}");
        }
        assert!(excess_rate(&law, 3.0) > excess_rate(&law, 2.0));
        assert_eq!(excess_rate(&[(0.1, 0.0)], 1.0), 1.0);
    }
}
