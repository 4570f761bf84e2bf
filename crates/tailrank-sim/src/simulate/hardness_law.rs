//! The law of per-positive hardness `x` in the simulator: a Gaussian copula (instance, query and
//! positive effects) over a marginal law of `z = log10 x` with three blocks: near-immune
//! positives (`z` uniform on `immune_log10`), a truncated power-law body `p(x) ∝ x^(−α)` (density
//! of `z` ∝ `10^((1−α) z)` on `log10_range`) and hopeless positives (`z` uniform on
//! `hopeless_log10`, out-ranked by many distractors at any gallery size of interest).

use crate::numerics::normal::norm_cdf_chebyshev;
use serde::{Deserialize, Serialize};

/// Marginal law of `log10 x` and its dependence structure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HardnessLaw {
    /// Share of positives that are near-immune: `log10 x` uniform on `immune_log10`.
    pub immune_share: f64,
    pub immune_log10: [f64; 2],
    /// Share of hopeless positives: `log10 x` uniform on `hopeless_log10`.
    pub hopeless_share: f64,
    pub hopeless_log10: [f64; 2],
    /// Power-law exponent α of the density of `x` over `log10_range` (the rest of the mass).
    pub alpha: f64,
    pub log10_range: [f64; 2],
    /// Share of the latent variance common to all queries of an instance (per positive).
    pub instance_corr: f64,
    /// Share of the latent variance common to all positives of a query (query difficulty).
    pub query_corr: f64,
}

impl HardnessLaw {
    /// The presets' law (`ilias-like`, `mixture-tail`): 23% of the positives near-immune
    /// (`log10 x` in [−14, −10]), 48.5% hopeless ([−3, −0.5]), the rest a power-law body with
    /// α = 1.2 on [−8.3, −3], so that the band [−10, −8.3] is empty; instance and query shares
    /// of the latent variance 0.45 and 0.25.
    pub const PRESET: HardnessLaw = HardnessLaw {
        immune_share: 0.23,
        immune_log10: [-14.0, -10.0],
        hopeless_share: 0.485,
        hopeless_log10: [-3.0, -0.5],
        alpha: 1.2,
        log10_range: [-8.3, -3.0],
        instance_corr: 0.45,
        query_corr: 0.25,
    };

    /// Quantile of `z = log10 x` at `u ∈ (0, 1)`.
    pub fn log10_quantile(&self, u: f64) -> f64 {
        let u = u.clamp(1e-15, 1.0 - 1e-15);
        let pi = self.immune_share.clamp(0.0, 1.0);
        let ph = self.hopeless_share.clamp(0.0, 1.0 - pi);
        if u < pi {
            let [a, b] = self.immune_log10;
            return a + (u / pi) * (b - a);
        }
        if u > 1.0 - ph {
            let [a, b] = self.hopeless_log10;
            return a + ((u - (1.0 - ph)) / ph) * (b - a);
        }
        let body = 1.0 - pi - ph;
        let v = if body > 0.0 { (u - pi) / body } else { 0.5 };
        let [lo, hi] = self.log10_range;
        // density of z ∝ exp(c z), c = (1 − α) ln 10; CDF inverted in closed form.
        let c = (1.0 - self.alpha) * std::f64::consts::LN_10;
        if c.abs() < 1e-12 {
            lo + v * (hi - lo)
        } else {
            let (ea, eb) = ((c * lo).exp(), (c * hi).exp());
            (ea + v * (eb - ea)).ln() / c
        }
    }

    /// `x` from the latent standard normals of the instance positive, the query and the pair.
    pub fn hardness(&self, g_instance: f64, g_query: f64, g_pair: f64) -> f64 {
        let (a, b) = (self.instance_corr, self.query_corr);
        let c = (1.0 - a - b).max(0.0);
        let g = a.sqrt() * g_instance + b.sqrt() * g_query + c.sqrt() * g_pair;
        10f64.powf(self.log10_quantile(norm_cdf_chebyshev(g)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_is_monotone_and_in_range() {
        let law = HardnessLaw {
            immune_share: 0.2,
            immune_log10: [-14.0, -11.0],
            hopeless_share: 0.0,
            hopeless_log10: [-3.0, -1.0],
            alpha: 1.2,
            log10_range: [-11.0, -1.0],
            instance_corr: 0.5,
            query_corr: 0.2,
        };
        let mut prev = f64::NEG_INFINITY;
        for i in 1..1000 {
            let z = law.log10_quantile(i as f64 / 1000.0);
            assert!(z >= prev && (-14.0..=-1.0).contains(&z));
            prev = z;
        }
        // CDF of the power-law part at its midpoint, from the closed form.
        let c = -0.2 * std::f64::consts::LN_10;
        let cdf_mid = ((c * -6.0).exp() - (c * -11.0).exp()) / ((-c).exp() - (c * -11.0).exp());
        let z = law.log10_quantile(0.2 + 0.8 * cdf_mid);
        assert!((z + 6.0).abs() < 1e-9, "{z}");
    }
}
