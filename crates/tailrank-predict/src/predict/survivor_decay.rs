//! Survivor decay of the endpoint test's excess (docs/method.md §9): how fast the excess
//! hazard of the immune positives falls as the sample grows, and the rate it leaves the
//! level-0 immune positives over the unsampled pool.
//!
//! A positive that level ℓ calls immune has survived `S_ℓ` sampled items (none outranks it).
//! When the excess rates differ between positives, the survivors of a larger sample are
//! depleted of the susceptible ones, and the population hazard falls with the exposure `t`
//! (items checked). The model, with `t` in units of `S_0` and `τ_ℓ = S_ℓ/S_0`:
//!
//! ```text
//! h(t) = a·t^{−γ},   W(x, y; γ) = ∫_x^y t^{−γ} dt
//! P(level 0 outranks an immune positive of level ℓ) = 1 − (1 − p)·e^{−a·W(τ_ℓ, 1; γ)}
//! ```
//!
//! with `p` the endpoint law's probability. `γ = 0` is the even spread (one rate for every
//! positive, the excess-mass reading); `γ = 1` the large-exposure limit of a gamma-distributed
//! rate; `γ > 1` a concentrated excess (a few positives with high rates, the rest none, as with
//! near-duplicate bursts and hubs), which leaves the survivors of the whole sample almost
//! nothing. `γ̂` is the maximum-likelihood value over `[0, MAX_DECAY]` (grid of `DECAY_STEP`,
//! `a` profiled out) from the levels' cases, each a Bernoulli outcome. The level-0 immune
//! positives, survivors of `S_0`, then carry the cumulative hazard `a·W(1, N/S_0; γ̂)` over
//! the `N − S_0` unsampled items: the rate [`decayed_rate`] per item. At `γ = 0` it is the
//! constant rate that accounts for the same count ([`excess_rate`]); for `γ > 0`
//! it is smaller, since a falling hazard is lower past `S_0` than over the windows it was
//! fitted on.
//!
//! Three levels in windows `(S_0/8, S_0]`, `(S_0/4, S_0]`, `(S_0/2, S_0]` identify `γ` only
//! roughly, and the extrapolation to `N` is 20 to 100 times longer than the windows:
//! `docs/notes/2026-12-estimator-log.md`, "Survivor decay", gives what was measured.

use crate::numerics::hazard::window;

/// The largest decay the fit considers: at `γ = 4` the level-0 survivors keep a hazard
/// below 1/8 of level 1's over the unsampled pool.
pub const MAX_DECAY: f64 = 4.0;

/// The grid step of `γ`.
pub const DECAY_STEP: f64 = 0.05;

/// One immune positive of one level, as the fit reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecayCase {
    /// The endpoint law's probability that level 0 outranks it (the fitted tail alone).
    pub p: f64,
    /// `τ = S_ℓ/S_0`, the share of level 0's sample its level has seen.
    pub seen: f64,
    /// Whether level 0 outranks it (`K_0 > K_ℓ`).
    pub outranked: bool,
}

/// `γ̂`: the maximum-likelihood decay (module docs); 0 when no case is outranked or the
/// likelihood is flat in `γ` (ties go to the smaller `γ`).
pub fn fit_decay(cases: &[DecayCase]) -> f64 {
    let outranked: Vec<&DecayCase> = cases.iter().filter(|c| c.outranked).collect();
    if outranked.is_empty() {
        return 0.0;
    }
    // The survivors enter only through `Σ u`, so one entry per distinct `τ` (one per level).
    let mut survived: Vec<(f64, f64)> = Vec::new();
    for c in cases.iter().filter(|c| !c.outranked) {
        match survived.iter_mut().find(|(seen, _)| *seen == c.seen) {
            Some(e) => e.1 += 1.0,
            None => survived.push((c.seen, 1.0)),
        }
    }
    let steps = (MAX_DECAY / DECAY_STEP).round() as usize;
    let mut best = (f64::NEG_INFINITY, 0.0);
    for i in 0..=steps {
        let gamma = i as f64 * DECAY_STEP;
        let ll = profile_log_likelihood(&survived, &outranked, gamma);
        if ll > best.0 + 1e-12 {
            best = (ll, gamma);
        }
    }
    best.1
}

/// `max_a ℓ(a, γ)` up to a constant of `γ` and `a`: the outranked cases contribute
/// `ln(1 − (1 − p)e^{−a·u})`, the others `−a·u` (their `ln(1 − p)` is dropped), with
/// `u = W(τ, 1; γ)`; `survived` holds `(τ, count)` of the others. The score in `a` is
/// decreasing, so `â` is found by bisection on its sign (log scale, `a ∈ [1e−9, 1e4]`).
fn profile_log_likelihood(survived: &[(f64, f64)], outranked: &[&DecayCase], gamma: f64) -> f64 {
    let exposure: f64 = survived
        .iter()
        .map(|&(seen, n)| n * window(seen, 1.0, gamma))
        .sum();
    let hit: Vec<(f64, f64)> = outranked
        .iter()
        .map(|c| ((1.0 - c.p).max(0.0), window(c.seen, 1.0, gamma)))
        .collect();
    let ll = |a: f64| -> f64 {
        hit.iter()
            .map(|&(q, u)| (1.0 - q * (-a * u).exp()).max(1e-300).ln())
            .sum::<f64>()
            - a * exposure
    };
    let score = |a: f64| -> f64 {
        hit.iter()
            .map(|&(q, u)| {
                let stay = q * (-a * u).exp();
                u * stay / (1.0 - stay).max(1e-300)
            })
            .sum::<f64>()
            - exposure
    };
    let (mut lo, mut hi) = (1e-9f64, 1e4f64);
    if score(lo) <= 0.0 {
        return ll(0.0);
    }
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if score(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    ll(lo)
}

/// The `r ≥ 0` with `Σ_i [1 − (1 − p_i)·e^{−u_i·r}] = observed` over `(p_i, u_i)`: the
/// constant rate (`γ = 0`) per unit of exposure `u` that accounts for a count, by bisection
/// on the increasing left side; 0 when the law alone reaches `observed`. Cases with `u_i = 0`
/// cannot be reached by any rate; when the others cannot make up the count, the largest rate
/// tried is returned (every reachable case certain).
pub fn excess_rate(law: &[(f64, f64)], observed: f64) -> f64 {
    let expected = |r: f64| {
        law.iter()
            .map(|&(p, u)| 1.0 - (1.0 - p) * (-u * r).exp())
            .sum::<f64>()
    };
    if expected(0.0) >= observed {
        return 0.0;
    }
    let mut hi = law
        .iter()
        .map(|&(_, u)| u)
        .fold(0.0, f64::max)
        .recip()
        .min(1.0);
    while expected(hi) < observed && hi < 1.0 {
        hi = (hi * 4.0).min(1.0);
    }
    let mut lo = 0.0;
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if expected(mid) < observed {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The rate per unsampled item that gives each level-0 immune positive the decayed
/// cumulative hazard: `a·W(1, N/S_0; γ)/(N − S_0)`, with `a` the hazard scale at which the
/// cases' expected outranked count `Σ [1 − (1 − p)e^{−a·W(τ, 1; γ)}]` is `target`
/// (0 when the law alone reaches it).
pub fn decayed_rate(cases: &[DecayCase], target: f64, gamma: f64, s0: f64, n: f64) -> f64 {
    let law: Vec<(f64, f64)> = cases
        .iter()
        .map(|c| (c.p, window(c.seen, 1.0, gamma)))
        .collect();
    let a = excess_rate(&law, target);
    if a == 0.0 || n <= s0 {
        return 0.0;
    }
    a * window(1.0, n / s0, gamma) / (n - s0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::hazard::rate_between;
    use crate::numerics::rng::splitmix64;

    /// A splitmix64 stream of uniforms in [0, 1).
    fn uniforms(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed;
        move || {
            let z = splitmix64(s);
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            (z >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The cases of levels 1–3 (`τ = 1/2, 1/4, 1/8`) for positives whose excess rates (in
    /// items per `S_0`) come from `rate`: each positive is checked at a level only when it
    /// survived that level's sample, and is outranked when one of level 0's further items
    /// reaches it (the law's own `p` is 0).
    fn cases(n: usize, mut rate: impl FnMut(&mut dyn FnMut() -> f64) -> f64) -> Vec<DecayCase> {
        let mut u = uniforms(7);
        let mut out = Vec::new();
        for _ in 0..n {
            let lambda = rate(&mut u);
            for seen in [0.5, 0.25, 0.125] {
                if u() < (-lambda * seen).exp() {
                    out.push(DecayCase {
                        p: 0.0,
                        seen,
                        outranked: u() < 1.0 - (-lambda * (1.0 - seen)).exp(),
                    });
                }
            }
        }
        out
    }

    /// One rate for every positive gives a decay near 0, and the decayed rate is then the
    /// constant one; a concentrated excess (5% of the positives with a high rate, the rest
    /// none) gives a steep decay and leaves the level-0 survivors almost nothing.
    #[test]
    fn the_decay_tells_an_even_excess_from_a_concentrated_one() {
        let even = cases(100_000, |_| 0.02);
        let g_even = fit_decay(&even);
        assert!(g_even <= 0.3, "even spread: γ̂ = {g_even}");
        let observed = even.iter().filter(|c| c.outranked).count() as f64;
        let flat = decayed_rate(&even, observed, 0.0, 1.0, 20.0);
        let constant = excess_rate(
            &even.iter().map(|c| (c.p, 1.0 - c.seen)).collect::<Vec<_>>(),
            observed,
        );
        assert!(
            (flat - constant).abs() < 1e-9 * constant,
            "{flat} vs {constant}"
        );
        assert!((constant - 0.02).abs() < 0.004, "{constant}");

        let concentrated = cases(100_000, |u| if u() < 0.05 { 3.0 } else { 0.0 });
        let g = fit_decay(&concentrated);
        assert!(g >= 1.0, "concentrated: γ̂ = {g}");
        let observed = concentrated.iter().filter(|c| c.outranked).count() as f64;
        let decayed = decayed_rate(&concentrated, observed, g, 1.0, 20.0);
        let constant = decayed_rate(&concentrated, observed, 0.0, 1.0, 20.0);
        assert!(decayed < 0.2 * constant, "{decayed} vs {constant}");
    }

    /// Carrying a rate to another pool size and back gives it again; at `γ = 0` the rate is
    /// the same at every N; with a decay, a larger pool gets a smaller rate per item; and the
    /// carried rate is what the fit gives at that N directly.
    #[test]
    fn rates_carry_between_pool_sizes() {
        let (s0, r) = (5e6, 2e-8);
        assert!((rate_between(r, 1e8, 2e9, s0, 0.0) - r).abs() < 1e-12 * r);
        let there = rate_between(r, 1e8, 5e8, s0, 1.5);
        assert!(there < r);
        assert!((rate_between(there, 5e8, 1e8, s0, 1.5) - r).abs() < 1e-12 * r);
        assert_eq!(rate_between(r, 1e8, s0, s0, 1.5), 0.0);
        let cs = cases(5_000, |u| 0.1 * u());
        let observed = cs.iter().filter(|c| c.outranked).count() as f64;
        let at = |n: f64| decayed_rate(&cs, observed, 1.5, 1.0, n);
        let carried = rate_between(at(20.0), 20.0, 100.0, 1.0, 1.5);
        assert!((carried - at(100.0)).abs() < 1e-9 * at(100.0));
    }

    /// A falling hazard leaves less past `S_0` than the constant rate that explains the same
    /// count, at every `γ`; no excess gives no rate.
    #[test]
    fn decay_never_raises_the_rate() {
        let cs = cases(5_000, |u| 0.1 * u());
        let observed = cs.iter().filter(|c| c.outranked).count() as f64;
        let mut last = f64::INFINITY;
        for g in [0.0, 0.5, 1.0, 1.5, 2.5, 4.0] {
            let r = decayed_rate(&cs, observed, g, 1.0, 100.0);
            assert!(r > 0.0 && r <= last, "γ = {g}: {r} after {last}");
            last = r;
        }
        assert_eq!(decayed_rate(&cs, 0.0, 1.0, 1.0, 100.0), 0.0);
        assert_eq!(fit_decay(&[]), 0.0);
    }
}
