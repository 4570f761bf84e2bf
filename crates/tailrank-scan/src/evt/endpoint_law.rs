//! The sampling law of a fitted GPD's endpoint, by parametric bootstrap (docs/method.md §9,
//! "endpoint test"): how much pool mass a positive past the fitted endpoint still has above it
//! when the tail *is* the fitted GPD and only the fit's own noise put the endpoint there.
//!
//! Scale out the fit: with threshold `u` and fitted endpoint `ê = u + (−σ̂/ξ̂)`, a score `s`
//! has the relative excess `z = (s − ê)/(ê − u)` (`z ≥ 0` past the endpoint). Take the fitted
//! law as the truth, in units where `u = 0` and its endpoint is 1: survival of the normalised
//! excess `w` is `(1 − w)^β`, `β = −1/ξ`. Replicate b draws `n` excesses from it
//! (`w = 1 − V^(1/β)`, V uniform), refits ([`fit_gpd_bounded`]) and keeps the refitted endpoint
//! `ê*_b` (+∞ when the refit is exponential). A positive is immune only under a fit with a
//! finite endpoint, so the law keeps the replicates with a finite `ê*_b` (the set `F`). The
//! analogue of the positive sits at `w_b = ê*_b·(1 + z)`, and the expected number of items above
//! it in a sample of the fit's size S (whose top `n` are the excesses) is
//!
//! ```text
//! λ_b = n · (1 − w_b)₊^β
//! ```
//!
//! A fresh sample of `e·S` items then holds `Poisson(λ_b·e)` items above it, so
//!
//! ```text
//! P(outranked | z, ξ, e) = 1 − mean_{b ∈ F} exp(−λ_b·e)        (0 when F is empty)
//! ```
//!
//! The pivot is exact for a positive at a fixed relative excess `z`; for a positive at a fixed
//! score, selected as immune because `ê` fell below it, it holds on average over positives
//! spread around the endpoint, not for each one. The table's own Monte Carlo error (200
//! replicates, shared by every query with the same `n`) is not part of any standard error.
//!
//! The law depends on `(n, ξ)` only (σ and u scale out), so one table per `n` serves every
//! query: ξ on the grid [`XI_GRID_STEP`]·{1, …, 20} with the sign flipped (−1.00 … −0.05; a fit's
//! ξ uses the nearest grid value), [`REPLICATES`] replicates each, drawn from a fixed seed so
//! that a prediction is reproducible. ξ̂ = 0 has no endpoint and no immune positive.

use super::fit_gpd_bounded;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Bootstrap replicates per grid value of ξ.
pub const REPLICATES: usize = 200;

/// Spacing of the ξ grid: −1.00, −0.95, …, −0.05.
pub const XI_GRID_STEP: f64 = 0.05;

const XI_GRID_LEN: usize = 20;

/// Seed of the replicates (a property of the law, not of the data).
const SEED: u64 = 0x5EED_E9D9;

/// The endpoint's bootstrap law for fits on `n` excesses.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointLaw {
    n: usize,
    /// `endpoints[g]`: the refitted endpoints `ê*_b` for ξ = `xi_of(g)`, endpoint-1 units.
    endpoints: Vec<Vec<f64>>,
}

fn xi_of(g: usize) -> f64 {
    -XI_GRID_STEP * (XI_GRID_LEN - g) as f64
}

impl EndpointLaw {
    /// The law for fits on `n ≥ 1` excesses ([`REPLICATES`] refits per grid value of ξ).
    pub fn new(n: usize) -> EndpointLaw {
        let n = n.max(1);
        let endpoints = (0..XI_GRID_LEN)
            .map(|g| {
                refitted_endpoints(n, xi_of(g), REPLICATES, SEED ^ ((n as u64) << 8) ^ g as u64)
            })
            .collect();
        EndpointLaw { n, endpoints }
    }

    /// The law for `n` excesses, built once per process and shared: it is a fixed function of
    /// `n`, so `validate` and repeated predictions do not redo its refits.
    pub fn shared(n: usize) -> Arc<EndpointLaw> {
        static LAWS: OnceLock<Mutex<HashMap<usize, Arc<EndpointLaw>>>> = OnceLock::new();
        let laws = LAWS.get_or_init(Default::default);
        let known = laws
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&n)
            .cloned();
        known.unwrap_or_else(|| {
            // Built outside the lock, so that laws for different n build in parallel.
            let law = Arc::new(EndpointLaw::new(n));
            let mut map = laws.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(n).or_insert(law).clone()
        })
    }

    /// Number of excesses the law is for.
    pub fn excesses(&self) -> usize {
        self.n
    }

    /// Index of the grid value of ξ nearest `xi` (clamped into [−1, −0.05]).
    fn grid(xi: f64) -> usize {
        let g = XI_GRID_LEN as f64 + xi / XI_GRID_STEP;
        (g.round().clamp(0.0, (XI_GRID_LEN - 1) as f64)) as usize
    }

    /// The rates `λ_b = n·(1 − ê*_b(1 + z))₊^β` of the replicates with a finite refitted
    /// endpoint, for a fit of shape `xi < 0` and a positive at relative excess `z` past its
    /// endpoint (module docs).
    pub fn rates(&self, xi: f64, z: f64) -> impl Iterator<Item = f64> + '_ {
        let g = Self::grid(xi);
        let beta = -1.0 / xi_of(g);
        let n = self.n as f64;
        self.endpoints[g]
            .iter()
            .filter(|e| e.is_finite())
            .map(move |&e| {
                let w = e * (1.0 + z.max(0.0));
                if w < 1.0 {
                    n * (1.0 - w).powf(beta)
                } else {
                    0.0
                }
            })
    }

    /// `P(outranked) = 1 − mean_{b ∈ F} exp(−λ_b·exposure)`: the chance that `exposure` times
    /// the fit's sample holds at least one item above a positive at relative excess `z` (0
    /// when no replicate has a finite endpoint).
    pub fn outranked_probability(&self, xi: f64, z: f64, exposure: f64) -> f64 {
        let (mut kept, mut none) = (0usize, 0.0);
        for l in self.rates(xi, z) {
            kept += 1;
            none += (-l * exposure).exp();
        }
        if kept == 0 {
            0.0
        } else {
            1.0 - none / kept as f64
        }
    }
}

/// The refitted endpoints of `replicates` samples of `n` excesses drawn from the GPD with
/// endpoint 1 and shape `xi < 0` (+∞ where the refit is exponential or fails).
pub fn refitted_endpoints(n: usize, xi: f64, replicates: usize, seed: u64) -> Vec<f64> {
    let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut y = vec![0.0; n];
    (0..replicates)
        .map(|_| {
            for v in y.iter_mut() {
                // V in (0, 1]: w = 1 − V^(−ξ) lies in [0, 1).
                let u: f64 = 1.0 - rng.random::<f64>();
                *v = 1.0 - u.powf(-xi);
            }
            fit_gpd_bounded(&y).map_or(f64::INFINITY, |f| f.gpd.endpoint())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_runs_from_minus_one_to_minus_a_twentieth() {
        assert!((xi_of(0) + 1.0).abs() < 1e-12);
        assert!((xi_of(XI_GRID_LEN - 1) + 0.05).abs() < 1e-12);
        assert_eq!(EndpointLaw::grid(-1.0), 0);
        assert_eq!(EndpointLaw::grid(-0.3), 14);
        assert_eq!(EndpointLaw::grid(-0.31), 14);
        assert_eq!(EndpointLaw::grid(-2.0), 0);
        assert_eq!(EndpointLaw::grid(-0.001), XI_GRID_LEN - 1);
    }

    /// At ξ = −1 the excesses are uniform on [0, 1]; when the refit takes the uniform edge,
    /// σ = max y and `ê*` is the maximum of n uniforms, Beta(n, 1), with median `0.5^(1/n)`
    /// and `P(ê* ≤ t) = t^n`. An interior fit (ξ* > −1) puts `ê*` above the maximum, so the
    /// law is Beta(n, 1) shifted up on the few replicates that take it.
    #[test]
    fn uniform_tail_gives_the_beta_law_of_the_maximum() {
        let n = 50;
        let mut e = refitted_endpoints(n, -1.0, 4000, 7);
        e.sort_by(|a, b| a.total_cmp(b));
        let median = e[2000];
        assert!(
            (median - 0.5f64.powf(1.0 / n as f64)).abs() < 0.003,
            "median {median}"
        );
        let above_one = e.iter().filter(|v| **v > 1.0).count();
        assert!(above_one < 400, "{above_one} interior fits of 4000");
        let below = e.iter().filter(|v| **v <= 0.95).count() as f64 / e.len() as f64;
        assert!((below - 0.95f64.powi(n as i32)).abs() < 0.02, "{below}");
    }

    #[test]
    fn rates_vanish_far_past_the_endpoint_and_probabilities_are_monotone() {
        let law = EndpointLaw::new(200);
        assert_eq!(law.excesses(), 200);
        let p: Vec<f64> = [0.0, 0.05, 0.2, 1.0, 5.0]
            .iter()
            .map(|&z| law.outranked_probability(-0.3, z, 19.0))
            .collect();
        assert!(p[0] > 0.0 && p[0] <= 1.0, "{p:?}");
        assert!(p.windows(2).all(|w| w[0] >= w[1]), "{p:?}");
        assert_eq!(p[4], 0.0);
        // More exposure, more risk.
        assert!(law.outranked_probability(-0.3, 0.05, 99.0) >= p[1]);
        assert_eq!(law.outranked_probability(-0.3, 0.05, 0.0), 0.0);
        // Reproducible, and the shared law is the same table.
        assert_eq!(EndpointLaw::new(200), law);
        assert_eq!(*EndpointLaw::shared(200), law);
    }
}
