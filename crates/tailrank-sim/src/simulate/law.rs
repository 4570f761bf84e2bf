//! Per-query pool score laws with a bounded upper tail, given by their survival function
//! `F̄(s) = P(score > s)` and its inverse (closed form, or a safeguarded root of the survival
//! function for Beta, [`crate::numerics::beta`]). The GPD formulas are [`crate::evt::Gpd`]'s.

use crate::evt::Gpd;
use crate::numerics::beta::{inc_beta, inc_beta_inv};
use crate::numerics::normal::{norm_ppf_chebyshev, norm_sf_chebyshev};
use serde::{Deserialize, Serialize};

/// One family of pool score distributions (all bounded above).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "kebab-case")]
pub enum Family {
    /// Exponential body below `u0`, exact GPD above it:
    /// `F̄(s) = min(1, p_u·exp((u0 − s)/σ_b))` for `s < u0`,
    /// `F̄(s) = p_u·(1 + ξ(s − u0)/σ)^(−1/ξ)` for `u0 ≤ s ≤ u0 − σ/ξ`, 0 beyond (ξ < 0).
    GpdTail {
        u0: f64,
        p_u: f64,
        sigma: f64,
        xi: f64,
        sigma_body: f64,
    },
    /// Reflected Beta(1, β) ("power-function" tail): `F̄(s) = ((e − s)/w)^β` on `[e − w, e]`.
    /// Above any threshold the excesses are exactly GPD with `ξ = −1/β`.
    PowerFunction {
        endpoint: f64,
        width: f64,
        beta: f64,
    },
    /// Kumaraswamy(a, b) on `[lo, lo + w]`: `F̄(s) = (1 − t^a)^b`, `t = (s − lo)/w`. Bell-shaped
    /// for `a > 1` (truncated-normal-like); only asymptotically GPD (`ξ → −1/b` at the endpoint),
    /// the local shape at a finite threshold is `ξ(t) = −1/b − (a − 1)(1 − t^a)/(a·b·t^a)`.
    Kumaraswamy { lo: f64, width: f64, a: f64, b: f64 },
    /// Beta(a, b) on `[lo, lo + w]`: `F̄(s) = I_d(b, a)`, `d = (lo + w − s)/w` (regularized
    /// incomplete beta). Near the endpoint `F̄ ≈ d^b/(b·B(a, b))·(1 − (a − 1)·b·d/(b + 1) + …)`:
    /// for `a ≠ 1` the excesses above a finite threshold are not GPD.
    Beta { lo: f64, width: f64, a: f64, b: f64 },
    /// Normal(μ, sd) truncated to `[lo, hi]`: `F̄(s) = (Q(z) − Q(z_hi))/(Q(z_lo) − Q(z_hi))`,
    /// `z = (s − μ)/sd`, `Q` the standard normal survival. With `z_hi` ≥ 8 the tail is Gaussian
    /// (Gumbel domain, local shape `ξ(z) ≈ −1/z²`) over every hardness the simulator uses.
    TruncNormal { mu: f64, sd: f64, lo: f64, hi: f64 },
}

impl Family {
    /// Upper endpoint of the support.
    pub fn endpoint(&self) -> f64 {
        match *self {
            Family::GpdTail { u0, sigma, xi, .. } => u0 + Gpd { sigma, xi }.endpoint(),
            Family::PowerFunction { endpoint, .. } => endpoint,
            Family::Kumaraswamy { lo, width, .. } | Family::Beta { lo, width, .. } => lo + width,
            Family::TruncNormal { hi, .. } => hi,
        }
    }

    /// Lower end of the support (where `F̄ = 1`).
    pub fn lower(&self) -> f64 {
        match *self {
            Family::GpdTail {
                u0,
                p_u,
                sigma_body,
                ..
            } => u0 + sigma_body * p_u.ln(),
            Family::PowerFunction {
                endpoint, width, ..
            } => endpoint - width,
            Family::Kumaraswamy { lo, .. }
            | Family::Beta { lo, .. }
            | Family::TruncNormal { lo, .. } => lo,
        }
    }

    /// Survival `F̄(s)`.
    pub fn sf(&self, s: f64) -> f64 {
        match *self {
            Family::GpdTail {
                u0,
                p_u,
                sigma,
                xi,
                sigma_body,
            } => {
                if s < u0 {
                    (p_u * ((u0 - s) / sigma_body).exp()).min(1.0)
                } else {
                    p_u * Gpd { sigma, xi }.survival(s - u0)
                }
            }
            Family::PowerFunction {
                endpoint,
                width,
                beta,
            } => {
                let d = (endpoint - s) / width;
                if d <= 0.0 {
                    0.0
                } else if d >= 1.0 {
                    1.0
                } else {
                    (beta * d.ln()).exp()
                }
            }
            Family::Kumaraswamy { lo, width, a, b } => {
                let t = (s - lo) / width;
                if t <= 0.0 {
                    1.0
                } else if t >= 1.0 {
                    0.0
                } else {
                    // 1 − t^a computed without cancellation near the endpoint.
                    let d = (lo + width - s) / width;
                    let one_minus = -(a * (-d).ln_1p()).exp_m1();
                    (b * one_minus.ln()).exp()
                }
            }
            Family::Beta { lo, width, a, b } => {
                let d = (lo + width - s) / width;
                inc_beta(d, b, a)
            }
            Family::TruncNormal { mu, sd, lo, hi } => {
                if s <= lo {
                    return 1.0;
                }
                if s >= hi {
                    return 0.0;
                }
                let q_hi = norm_sf_chebyshev((hi - mu) / sd);
                let total = norm_sf_chebyshev((lo - mu) / sd) - q_hi;
                ((norm_sf_chebyshev((s - mu) / sd) - q_hi) / total).clamp(0.0, 1.0)
            }
        }
    }

    /// Inverse survival: the score `s` with `F̄(s) = p`, for `p ∈ (0, 1]`.
    pub fn isf(&self, p: f64) -> f64 {
        let p = p.clamp(f64::MIN_POSITIVE, 1.0);
        match *self {
            Family::GpdTail {
                u0,
                p_u,
                sigma,
                xi,
                sigma_body,
            } => {
                if p > p_u {
                    u0 - sigma_body * (p / p_u).ln()
                } else {
                    // (1 + ξ y/σ) = (p/p_u)^(−ξ)
                    u0 + sigma / xi * ((-xi * (p / p_u).ln()).exp() - 1.0)
                }
            }
            Family::PowerFunction {
                endpoint,
                width,
                beta,
            } => endpoint - width * (p.ln() / beta).exp(),
            Family::Kumaraswamy { lo, width, a, b } => {
                // 1 − t^a = p^(1/b)  ⇒  t = (1 − p^(1/b))^(1/a)
                let q = (p.ln() / b).exp();
                let t = ((-q).ln_1p() / a).exp();
                lo + width * t
            }
            Family::Beta { lo, width, a, b } => lo + width - width * inc_beta_inv(p, b, a),
            Family::TruncNormal { mu, sd, lo, hi } => {
                let q_hi = norm_sf_chebyshev((hi - mu) / sd);
                let total = norm_sf_chebyshev((lo - mu) / sd) - q_hi;
                let z = -norm_ppf_chebyshev(q_hi + p * total);
                (mu + sd * z).clamp(lo, hi)
            }
        }
    }
}

/// A query's pool score law: a mixture of families with weights summing to 1.
/// `F̄(s) = Σ_c w_c·F̄_c(s)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreLaw {
    pub components: Vec<Component>,
}

/// One mixture component.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Component {
    pub weight: f64,
    #[serde(flatten)]
    pub family: Family,
}

impl ScoreLaw {
    /// A single-family law.
    pub fn single(family: Family) -> Self {
        ScoreLaw {
            components: vec![Component {
                weight: 1.0,
                family,
            }],
        }
    }

    /// Survival of the mixture.
    pub fn sf(&self, s: f64) -> f64 {
        self.components
            .iter()
            .map(|c| c.weight * c.family.sf(s))
            .sum()
    }

    /// Highest endpoint among the components (`F̄ = 0` above it).
    pub fn endpoint(&self) -> f64 {
        self.components
            .iter()
            .map(|c| c.family.endpoint())
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Inverse survival of the mixture: closed form for one component, bisection otherwise
    /// (the mixture survival is continuous and non-increasing).
    pub fn isf(&self, p: f64) -> f64 {
        if self.components.len() == 1 {
            return self.components[0].family.isf(p);
        }
        let mut lo = self
            .components
            .iter()
            .map(|c| c.family.lower())
            .fold(f64::INFINITY, f64::min);
        let mut hi = self.endpoint();
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if self.sf(mid) > p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn families() -> Vec<Family> {
        vec![
            Family::GpdTail {
                u0: 0.25,
                p_u: 0.01,
                sigma: 0.06,
                xi: -0.2,
                sigma_body: 0.05,
            },
            Family::PowerFunction {
                endpoint: 0.6,
                width: 0.7,
                beta: 6.0,
            },
            Family::Kumaraswamy {
                lo: -0.1,
                width: 0.75,
                a: 2.5,
                b: 8.0,
            },
            Family::Beta {
                lo: -0.15,
                width: 0.8,
                a: 3.0,
                b: 9.0,
            },
            Family::TruncNormal {
                mu: 0.12,
                sd: 0.06,
                lo: -0.4,
                hi: 0.12 + 8.5 * 0.06,
            },
        ]
    }

    #[test]
    fn isf_inverts_sf_over_many_decades() {
        for f in families() {
            for e in 0..=14 {
                for m in [1.0, 3.0] {
                    let p = m * 10f64.powi(-e);
                    if p > 1.0 {
                        continue;
                    }
                    let s = f.isf(p);
                    let back = f.sf(s);
                    assert!(
                        ((back - p) / p).abs() < 1e-6,
                        "{f:?} p={p} s={s} back={back}"
                    );
                    assert!(s <= f.endpoint());
                }
            }
            assert_eq!(f.sf(f.endpoint() + 1e-9), 0.0);
            assert_eq!(f.sf(f.lower() - 1e-9), 1.0);
        }
    }

    #[test]
    fn power_function_excesses_are_exact_gpd() {
        let (e, w, beta) = (0.6, 0.7, 5.0);
        let f = Family::PowerFunction {
            endpoint: e,
            width: w,
            beta,
        };
        let u = f.isf(1e-4);
        let (xi, sigma) = (-1.0 / beta, (e - u) / beta);
        for y in [0.0, 0.01, 0.05, 0.1] {
            let cond = f.sf(u + y) / f.sf(u);
            let gpd = (1.0 + xi * y / sigma).max(0.0).powf(-1.0 / xi);
            assert!((cond - gpd).abs() < 1e-9, "{cond} vs {gpd}");
        }
    }

    #[test]
    fn mixture_isf_by_bisection() {
        let fams = families();
        let law = ScoreLaw {
            components: vec![
                Component {
                    weight: 0.999,
                    family: fams[0],
                },
                Component {
                    weight: 0.001,
                    family: fams[1],
                },
            ],
        };
        for p in [0.5, 1e-3, 1e-6, 1e-9, 1e-12] {
            let s = law.isf(p);
            assert!(((law.sf(s) - p) / p).abs() < 1e-6, "p={p}");
        }
    }
}
