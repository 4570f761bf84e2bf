//! hit@1 calibrated on the nested levels (docs/method.md §7, "hit@1 calibrated on the
//! levels"; `docs/notes/2026-12-05-hit-at-1-readings.md`).
//!
//! A query hits at N when its top positive has no core item above it (`C_1 = 0`) and no pool
//! item either (`K_N = 0`). Under the count law that is `(1 − x̂)^(N−S)` in the tail branch
//! and 1 for an immune positive, and both readings are off in opposite directions: the fitted
//! GPD, extrapolated past the sample's top, puts far too much mass just above a tail positive,
//! and a positive past the fitted endpoint is outranked when the endpoint fell short. Each
//! branch gets one scale, learned where the answer is known: at nesting level ℓ ∈ [`LEVELS`]
//! (sample `S_ℓ`, the estimate's own fit) the level-0 items outside level ℓ are an unseen
//! sample of `S_0 − S_ℓ` items, so whether a top positive with `C_1 = 0` and `K_ℓ = 0` still
//! has `K_0 = 0` is known.
//!
//! - **Tail** (top positive in the tail branch at level ℓ): the fitted rate scaled by `c_t`,
//!   `P(hit) = (1 − c_t·x̂_ℓ)^(S_0−S_ℓ)`; `c_t` solves `Σ_i P_i(c_t) = H_t`, the number of those
//!   positives level 0 does not outrank (searched on [[`TAIL_SCALE_MIN`], [`TAIL_SCALE_MAX`]]).
//! - **Immune** (past the endpoint of a fit with `ξ̂ < 0`): the endpoint law of the endpoint
//!   test (`evt::endpoint_law`) with its rates scaled by `c_i`,
//!   `P(hit) = mean_{b ∈ F} exp(−c_i·λ_b·e_ℓ)`, `e_ℓ = (S_0 − S_ℓ)/S_ℓ`; `c_i ∈ [0, 1]` solves
//!   `Σ_i P_i(c_i) = H_i`. `c_i = 1` is the law itself: more outranked immune positives than
//!   the fit's own noise explains are the endpoint test's excess, which the move to the centre
//!   of the excess handles (`endpoint_test`), so the scale does not go past it.
//!
//! Both equations are monotone in the scale (more rate, fewer hits) and solved by bisection on
//! `ln c` ([`BISECTIONS`] steps). A branch without a case at the levels keeps the model's own
//! reading (`c_t = 1`, `c_i = 0`). At N the level-0 top positive gets
//!
//! ```text
//! tail:    P(K_N = 0) = (1 − c_t·x̂)^(N−S)                       (K_S = 0; else 0)
//! immune:  P(K_N = 0) = (1 − x̂)^(N−S) · mean_{b ∈ F} exp(−c_i·λ_b·(N − S)/S)
//! count:   P(K_N = 0) as the count law gives it
//! ```
//!
//! (the immune positive's own `x̂` is 0, or the excess rate of the move's far end, whose items
//! are independent of the fit's noise). Only hit@1 reads the scales: the mAP@k, Recall@k,
//! intervals and verdict do not change.
//!
//! *Why one scale per branch.* The predicted hit barely depends on where the positive sits
//! relative to the fitted endpoint, while the realized one does not depend on it at all
//! (the fitted endpoint misses the true one by several times the positive's gap), so the
//! readings differ from the truth mostly in level; one scale per branch fixes the level of
//! each without a model of the depth. The scale falls with the extrapolation ratio (levels
//! step 2–8×, N is 20–100× past the sample), so at 1% the tail branch stays too hard;
//! the note records the decay model that tried to carry the trend and over-corrected.

use super::endpoint_test::LevelHardness;
use crate::evt::endpoint_law::EndpointLaw;
use crate::hardness::{Branch, HitScales, PositiveHardness, QueryHardness, QueryTail};
use crate::maps::CountLaw;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The nesting levels whose top positives calibrate the scales: the endpoint test's.
pub const LEVELS: std::ops::RangeInclusive<usize> = super::endpoint_test::LEVELS;

/// Search range of the tail scale `c_t`.
pub const TAIL_SCALE_MIN: f64 = 1e-6;
pub const TAIL_SCALE_MAX: f64 = 1e3;

/// Smallest immune scale searched; below it `c_i` is 0 (the model's own reading, hit = 1).
pub const IMMUNE_SCALE_MIN: f64 = 1e-6;

/// Bisection steps on `ln c` (the bracket of the tail scale shrinks to a ratio of
/// `e^{ln(1e9)/2^44} ≈ 1 + 1.2e-12`, far below any effect on hit@1).
pub const BISECTIONS: usize = 44;

/// The scales and the level cases they came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HitCalibration {
    pub scales: HitScales,
    /// Tail-branch top positives checked at the levels, and how many level 0 left unbeaten.
    pub tail_cases: usize,
    pub tail_hits: usize,
    /// Immune top positives checked at the levels (fits with `ξ̂ < 0`), and their hits.
    pub immune_cases: usize,
    pub immune_hits: usize,
    /// The mean hit@1 at N of the count law alone (scales 1 and 0), before any move to the
    /// centre of the excess: what the estimate reported before the calibration.
    pub uncalibrated_hit_at_1: f64,
}

/// One level case: a top positive with `C_1 = 0` and `K_ℓ = 0` at level ℓ.
enum Case {
    /// Tail branch: the fitted rate `x̂_ℓ` over `trials = S_0 − S_ℓ` unseen items.
    Tail { x_hat: f64, trials: f64, hit: bool },
    /// Immune: the endpoint law's inputs and the exposure `e_ℓ`.
    Immune {
        n_u: usize,
        xi: f64,
        z: f64,
        exposure: f64,
        hit: bool,
    },
}

/// The relative excess `z = (s − u)/(−σ/ξ) − 1` of a positive past the endpoint of `tail`
/// (`evt::endpoint_law`), None unless the fit has `ξ < 0`.
fn relative_excess(p: &PositiveHardness, tail: &QueryTail) -> Option<(f64, f64)> {
    let gpd = tail.fit.gpd;
    (gpd.xi < 0.0).then(|| {
        let z = (f64::from(p.score) - tail.u) / gpd.endpoint() - 1.0;
        (gpd.xi, z)
    })
}

/// `P(K = 0)` for `trials` unseen items each above the positive with probability
/// `rate` (clamped to [0, 1]).
fn none_above(rate: f64, trials: f64) -> f64 {
    CountLaw {
        known: 0,
        trials,
        rate: rate.clamp(0.0, 1.0),
    }
    .cdf(0)
}

/// The endpoint laws for every distinct `n_u` of the immune cases (shared per process), built
/// in parallel; when there is one, also those of the level-0 immune top positives `h0` will
/// read at N (a fit with a stray `n_u`, from ties at the threshold, would otherwise build its
/// table alone later).
fn laws(cases: &[Case], h0: &[QueryHardness]) -> BTreeMap<usize, Arc<EndpointLaw>> {
    let mut sizes: Vec<usize> = cases
        .iter()
        .filter_map(|c| match c {
            Case::Immune { n_u, .. } => Some(*n_u),
            Case::Tail { .. } => None,
        })
        .collect();
    if !sizes.is_empty() {
        sizes.extend(h0.iter().filter_map(|q| {
            let p = q.positives.first()?;
            let t = q.tail.as_ref()?;
            (p.branch == Branch::Immune && t.fit.gpd.xi < 0.0).then_some(t.n_u)
        }));
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .par_iter()
        .map(|&n| (n, EndpointLaw::shared(n)))
        .collect()
}

/// The top-positive cases of `levels` ([`LEVELS`] only) against the level-0 hardness `h0`
/// from a sample of `s0` items.
fn cases(h0: &[QueryHardness], s0: u64, levels: &[LevelHardness<'_>]) -> Vec<Case> {
    let s0 = s0 as f64;
    let mut out = Vec::new();
    for l in levels
        .iter()
        .filter(|l| LEVELS.contains(&l.level) && l.hardness.len() == h0.len())
    {
        let sl = l.sample_size as f64;
        let trials = (s0 - sl).max(0.0);
        if sl <= 0.0 || trials <= 0.0 {
            continue;
        }
        for (q0, ql) in h0.iter().zip(l.hardness) {
            let (Some(p0), Some(pl)) = (q0.positives.first(), ql.positives.first()) else {
                continue;
            };
            if pl.core_above > 0 || pl.pool_above > 0 {
                continue;
            }
            let hit = p0.pool_above == 0;
            match pl.branch {
                Branch::Tail => out.push(Case::Tail {
                    x_hat: pl.x_hat,
                    trials,
                    hit,
                }),
                Branch::Immune => {
                    if let Some((tail, (xi, z))) = ql
                        .tail
                        .and_then(|t| relative_excess(pl, &t).map(|r| (t, r)))
                    {
                        out.push(Case::Immune {
                            n_u: tail.n_u,
                            xi,
                            z,
                            exposure: trials / sl,
                            hit,
                        });
                    }
                }
                Branch::Count => {}
            }
        }
    }
    out
}

/// The scale `c` in `[lo, hi]` with `expected(c) = observed`, `expected` non-increasing in
/// `c`: bisection on `ln c`; `lo` when even `lo` expects fewer, `hi` when even `hi` expects
/// more.
fn solve_scale(expected: impl Fn(f64) -> f64, observed: f64, lo: f64, hi: f64) -> f64 {
    if expected(lo) <= observed {
        return lo;
    }
    if expected(hi) >= observed {
        return hi;
    }
    let (mut a, mut b) = (lo.ln(), hi.ln());
    for _ in 0..BISECTIONS {
        let m = 0.5 * (a + b);
        if expected(m.exp()) > observed {
            a = m;
        } else {
            b = m;
        }
    }
    (0.5 * (a + b)).exp()
}

/// The scales from the levels' top positives (module docs); None when no level of [`LEVELS`]
/// gives a case (a hardness file, a summary with one level, the count estimator).
pub fn calibrate(
    h0: &[QueryHardness],
    s0: u64,
    n_pool: f64,
    levels: &[LevelHardness<'_>],
) -> Option<HitCalibration> {
    let cases = cases(h0, s0, levels);
    if cases.is_empty() {
        return None;
    }
    let laws = laws(&cases, h0);
    let (mut tail, mut tail_hits, mut immune, mut immune_hits) = (Vec::new(), 0, Vec::new(), 0);
    for c in &cases {
        match c {
            Case::Tail { x_hat, trials, hit } => {
                tail.push((*x_hat, *trials));
                tail_hits += usize::from(*hit);
            }
            Case::Immune {
                n_u,
                xi,
                z,
                exposure,
                hit,
            } => {
                // The rates once, the replicates whose analogue is past the endpoint (rate 0)
                // only counted: the bisection then exponentiates the others alone.
                let (mut kept, mut rates) = (0usize, Vec::new());
                for l in laws[n_u].rates(*xi, *z) {
                    kept += 1;
                    if l > 0.0 {
                        rates.push(l * exposure);
                    }
                }
                immune.push((kept, rates));
                immune_hits += usize::from(*hit);
            }
        }
    }
    let tail_scale = if tail.is_empty() {
        1.0
    } else {
        solve_scale(
            |c| tail.par_iter().map(|&(x, m)| none_above(c * x, m)).sum(),
            tail_hits as f64,
            TAIL_SCALE_MIN,
            TAIL_SCALE_MAX,
        )
    };
    // `1 − P(outranked)` of the endpoint law at exposure `c·e_ℓ`: the mean over the finite
    // replicates, 1 without one (`EndpointLaw::outranked_probability`).
    let immune_expected = |c: f64| -> f64 {
        immune
            .par_iter()
            .map(|(kept, r)| {
                if *kept == 0 {
                    1.0
                } else {
                    let beaten: f64 = r.iter().map(|l| 1.0 - (-c * l).exp()).sum();
                    1.0 - beaten / *kept as f64
                }
            })
            .sum()
    };
    let immune_scale = if immune.is_empty() {
        0.0
    } else {
        let c = solve_scale(immune_expected, immune_hits as f64, IMMUNE_SCALE_MIN, 1.0);
        if c <= IMMUNE_SCALE_MIN {
            0.0
        } else {
            c
        }
    };
    let uncalibrated_hit_at_1 = h0
        .par_iter()
        .map(|q| crate::maps::hit_at_1(q, n_pool))
        .sum::<f64>()
        / h0.len().max(1) as f64;
    Some(HitCalibration {
        scales: HitScales {
            tail: tail_scale,
            immune: immune_scale,
        },
        tail_cases: tail.len(),
        tail_hits,
        immune_cases: immune.len(),
        immune_hits,
        uncalibrated_hit_at_1,
    })
}

/// hit@1 of one query at pool size `n_pool` under the calibrated readings (module docs); with
/// `scales` None, or `N < S`, the count law's [`crate::maps::hit_at_1`].
pub fn hit_at_1(q: &QueryHardness, n_pool: f64, scales: Option<&HitScales>) -> f64 {
    let plain = crate::maps::hit_at_1(q, n_pool);
    let (Some(sc), Some(p)) = (scales, q.positives.first()) else {
        return plain;
    };
    let law = CountLaw::new(p, q.sample_size, n_pool);
    let s = q.sample_size as f64;
    if p.core_above > 0 || n_pool.round() < s || law.known > 0 {
        return plain;
    }
    match p.branch {
        Branch::Tail => none_above(sc.tail * law.rate, law.trials),
        Branch::Immune => {
            let fit_noise = match q
                .tail
                .as_ref()
                .and_then(|t| relative_excess(p, t).map(|r| (t, r)))
            {
                Some((t, (xi, z))) if sc.immune > 0.0 && s > 0.0 => {
                    1.0 - EndpointLaw::shared(t.n_u).outranked_probability(
                        xi,
                        z,
                        sc.immune * law.trials / s,
                    )
                }
                _ => 1.0,
            };
            plain * fit_noise
        }
        Branch::Count => plain,
    }
}
