//! Generalised Pareto fits for the upper tail of a query's pool scores (docs/method.md §6).
//!
//! Convention (scipy.stats.genpareto with `c = ξ`, `loc = 0`, `scale = σ`): survival
//! `P(Y > y) = (1 + ξ y/σ)^(-1/ξ)` (`exp(-y/σ)` at ξ = 0), density
//! `f(y) = (1/σ)(1 + ξ y/σ)^(-1/ξ - 1)`, support `0 ≤ y ≤ -σ/ξ` for ξ < 0 (`y ≥ 0` otherwise).
//!
//! [`fit_gpd_bounded`] is the maximum-likelihood fit with ξ constrained to `[-1, 0]` (cosine
//! scores are bounded, so the tail is bounded; below -1 the likelihood is unbounded). It compares
//! three candidates and keeps the best log-likelihood:
//!
//! - exponential: ξ = 0, σ = mean(y);
//! - uniform: ξ = -1, σ = max(y) (the best fit on the ξ = -1 edge);
//! - interior: the maximiser of the profile likelihood over `τ = ξ/σ < 0`. For fixed τ the
//!   likelihood is maximised in ξ by `ξ̂(τ) = (1/n) Σ ln(1 + τ y_i)` (Grimshaw 1993), giving
//!   `σ̂ = ξ̂/τ` and the profile `ℓ*(τ) = -n ln σ̂ - n ξ̂ - n`. The search runs over
//!   `τ ∈ (τ₋₁, 0)` where `ξ̂(τ₋₁) = -1` (ξ̂ decreases monotonically in |τ|; τ₋₁ by safeguarded
//!   Newton), with a coarse grid followed by Brent refinement of the best bracket. For every τ in that range
//!   `1 + τ y_i > 0`, so the support contains the data.
//!
//! When the profile maximiser would leave `[-1, 0]` the constrained optimum lies on an edge, and
//! the edge candidates cover it: on ξ = -1 the likelihood `-n ln σ` (σ ≥ max y) is maximised by
//! σ = max y, and the ξ → 0 limit is the exponential fit (an interior maximiser with
//! ξ > −1e-9 is taken as that edge, so data that would prefer ξ > 0 get exactly ξ = 0). The result is never NaN and its
//! support always contains every `y`. Any `n ≥ 1` is fitted (the caller decides how many
//! excesses are enough: see `hardness::MIN_TAIL_EXCESSES`); all-equal `y = c > 0` gives the
//! uniform fit ξ = -1, σ = c.
// `!(x > 0.0)` is meant: it is also true for NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod endpoint_law;
mod log_sums;

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

/// |ξ| below this is treated as the exponential limit ξ = 0 in the formulas.
const XI_ZERO: f64 = 1e-12;

/// An interior profile maximiser with ξ above `-XI_EDGE` is the exponential edge ξ = 0: its
/// likelihood differs from the exponential fit's only by rounding.
const XI_EDGE: f64 = 1e-9;

impl Gpd {
    /// `P(Y > y) = (1 + ξ y/σ)^(-1/ξ)` (`exp(-y/σ)` at ξ = 0); 1 for `y ≤ 0`, 0 at and beyond
    /// the endpoint `-σ/ξ` when ξ < 0. NaN `y` gives NaN.
    pub fn survival(&self, y: f64) -> f64 {
        if y.is_nan() {
            return f64::NAN;
        }
        if y <= 0.0 {
            return 1.0;
        }
        if self.xi.abs() < XI_ZERO {
            return (-y / self.sigma).exp();
        }
        let z = self.xi * y / self.sigma;
        if z <= -1.0 {
            return 0.0;
        }
        // (1 + z)^(-1/ξ) computed as exp(-ln1p(z)/ξ) for accuracy when z is small.
        (-z.ln_1p() / self.xi).exp().clamp(0.0, 1.0)
    }

    /// The quantile at lower-tail probability `p ∈ [0, 1)`: `σ((1 − p)^(−ξ) − 1)/ξ`
    /// (`−σ ln(1 − p)` at ξ = 0), the inverse of [`Gpd::survival`] at `1 − p` (scipy's
    /// `genpareto.ppf(p, c=ξ, scale=σ)`).
    pub fn quantile(&self, p: f64) -> f64 {
        if self.xi.abs() < XI_ZERO {
            -(1.0 - p).ln() * self.sigma
        } else {
            ((1.0 - p).powf(-self.xi) - 1.0) / self.xi * self.sigma
        }
    }

    /// Upper end of the support: `-σ/ξ` for ξ < 0, `+∞` for ξ ≥ 0.
    pub fn endpoint(&self) -> f64 {
        if self.xi < 0.0 && self.xi.abs() >= XI_ZERO {
            -self.sigma / self.xi
        } else {
            f64::INFINITY
        }
    }

    /// Log-density `ln f(y) = -ln σ - (1/ξ + 1) ln(1 + ξ y/σ)` (`-ln σ - y/σ` at ξ = 0);
    /// `-∞` outside the support (y < 0, beyond the endpoint, or σ ≤ 0). At ξ = -1 the density is
    /// `1/σ` on the closed interval `[0, σ]`.
    pub fn log_density(&self, y: f64) -> f64 {
        if !(self.sigma > 0.0) || !(y >= 0.0) || !self.sigma.is_finite() {
            return f64::NEG_INFINITY;
        }
        let ln_sigma = self.sigma.ln();
        if self.xi.abs() < XI_ZERO {
            return -ln_sigma - y / self.sigma;
        }
        let z = self.xi * y / self.sigma;
        if z < -1.0 {
            return f64::NEG_INFINITY;
        }
        let power = -(1.0 / self.xi + 1.0); // exponent of (1 + z)
        if power == 0.0 {
            return -ln_sigma;
        }
        if z == -1.0 {
            // (1 + z) = 0: density 0 for ξ > -1, unbounded for ξ < -1.
            return if power > 0.0 {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
        }
        -ln_sigma + power * z.ln_1p()
    }

    /// `Σ_i ln f(y_i)`; `-∞` if any `y_i` lies outside the support (or σ ≤ 0); 0 for empty `y`.
    pub fn log_likelihood(&self, y: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in y {
            let l = self.log_density(v);
            if l == f64::NEG_INFINITY || l.is_nan() {
                return f64::NEG_INFINITY;
            }
            s += l;
        }
        s
    }
}

/// Maximum-likelihood GPD fit of non-negative excesses `y` with ξ constrained to [-1, 0]
/// (module docs: exponential, uniform and interior profile candidates, best log-likelihood
/// kept). `None` when `y` is empty, when every `y` is 0, or when some `y` is negative or not
/// finite (not excesses). The returned support contains every `y` and nothing is NaN.
pub fn fit_gpd_bounded(y: &[f64]) -> Option<GpdFit> {
    if y.is_empty() || y.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return None;
    }
    let n = y.len();
    let nf = n as f64;
    let ymax = y.iter().copied().fold(0.0f64, f64::max);
    if ymax <= 0.0 {
        return None;
    }
    let mean = y.iter().sum::<f64>() / nf;
    let sc = Scaled::new(y, ymax);

    // Each candidate's log-likelihood in closed form (each equals `Gpd::log_likelihood`):
    // exponential `−n(ln σ + 1)` at σ = mean; uniform `−n ln σ` at σ = ymax (every y inside
    // the support); interior `−n ln σ − (1/ξ + 1) Σ ln(1 + ξ y_i/σ)`, the sum taken as
    // `Σ ln(1 − t v_i)` with `t = −ξ ymax/σ ≤ 1` over the scaled excesses.
    let exponential = GpdFit {
        gpd: Gpd {
            sigma: mean,
            xi: 0.0,
        },
        log_likelihood: -nf * (mean.ln() + 1.0),
        n,
    };
    let uniform = GpdFit {
        gpd: Gpd {
            sigma: ymax,
            xi: -1.0,
        },
        log_likelihood: -nf * ymax.ln(),
        n,
    };
    let interior = interior_profile_max(&sc, ymax).map(|gpd| {
        let t = -gpd.xi * ymax / gpd.sigma;
        let log_likelihood = if t < 1.0 {
            -nf * gpd.sigma.ln() - (1.0 / gpd.xi + 1.0) * sc.sum_ln_one_minus(t)
        } else {
            gpd.log_likelihood(y)
        };
        GpdFit {
            gpd,
            log_likelihood,
            n,
        }
    });
    // The best finite candidate; on equal likelihood the earlier one. A NaN could only come
    // from overflow of the mean (impossible for finite y of sane size); the uniform fit, whose
    // support holds the data by construction, is kept then.
    let mut best: Option<GpdFit> = None;
    for c in [Some(exponential), Some(uniform), interior]
        .into_iter()
        .flatten()
    {
        let ok = c.log_likelihood.is_finite() && c.gpd.sigma.is_finite() && c.gpd.sigma > 0.0;
        if ok && best.is_none_or(|b| c.log_likelihood > b.log_likelihood) {
            best = Some(c);
        }
    }
    Some(best.unwrap_or(uniform))
}

/// The excesses scaled by `1/ymax` (so in [0, 1]), with ties merged into weights: the
/// profile sums run over distinct values only.
struct Scaled {
    v: Vec<f64>,
    w: Vec<f64>,
    n: f64,
}

impl Scaled {
    fn new(y: &[f64], ymax: f64) -> Scaled {
        let mut s: Vec<f64> = y.iter().map(|&v| v / ymax).collect();
        // Excesses usually arrive in descending order (from descending top scores): reversing
        // them is the sort then.
        if s.windows(2).all(|w| w[0] >= w[1]) {
            s.reverse();
        } else {
            s.sort_by(f64::total_cmp);
        }
        let (mut v, mut w) = (Vec::with_capacity(s.len()), Vec::with_capacity(s.len()));
        for x in s {
            if v.last() == Some(&x) {
                *w.last_mut().expect("non-empty") += 1.0;
            } else {
                v.push(x);
                w.push(1.0);
            }
        }
        Scaled {
            v,
            w,
            n: y.len() as f64,
        }
    }

    /// `ξ̂(t) = (1/n) Σ ln(1 − t·v_i)` for `t = −τ·ymax ∈ [0, 1)`. For `t ≥ 1e-3` the plain
    /// `ln(1 − t v)` is used (absolute error ~1e-16 per term, negligible against the sum);
    /// below, `ln(1 + u)` with the rounding of `1 + u` put back keeps full relative precision,
    /// where ξ̂ ≈ 0 (both in [`log_sums`]).
    fn xi_hat(&self, t: f64) -> f64 {
        self.sum_ln_one_minus(t) / self.n
    }

    /// `Σ ln(1 − t·v_i)` over every excess (ties counted by their weight), `t ∈ [0, 1)`.
    fn sum_ln_one_minus(&self, t: f64) -> f64 {
        log_sums::weighted_ln_one_minus(t, &self.v, &self.w)
    }

    /// `ξ̂(t)` and its derivative `−(1/n) Σ v_i/(1 − t v_i)`.
    fn xi_hat_d(&self, t: f64) -> (f64, f64) {
        let (s, d) = log_sums::weighted_ln_one_minus_and_slope(t, &self.v, &self.w);
        (s / self.n, -d / self.n)
    }

    /// Profile log-likelihood per observation at `t ∈ (0, 1)`: `−ln σ̂ − ξ̂ − 1` with
    /// `σ̂ = ξ̂/τ` in units of ymax (`σ̂/ymax = −ξ̂/t`); the constant `−ln ymax` is left out.
    /// `−∞` where undefined.
    fn profile(&self, t: f64) -> f64 {
        if !(t > 0.0 && t < 1.0) {
            return f64::NEG_INFINITY;
        }
        let xi = self.xi_hat(t);
        let sigma = -xi / t;
        if !(sigma > 0.0) || !sigma.is_finite() || !xi.is_finite() {
            return f64::NEG_INFINITY;
        }
        -sigma.ln() - xi - 1.0
    }
}

/// Interior maximiser of the profile likelihood with ξ̂ ∈ [-1, 0), or None when the range is
/// degenerate.
fn interior_profile_max(sc: &Scaled, ymax: f64) -> Option<Gpd> {
    // t_max: ξ̂(t_max) = -1 (or t just below 1 when ξ̂ stays above -1 up to there, which happens
    // when only few points sit near ymax). ξ̂ is decreasing and concave in t, → -∞ as t → 1:
    // Newton's method on ξ̂ + 1, safeguarded by bisection of the bracket [lo, hi].
    let t_hi_limit = 1.0 - 1e-12;
    let t_max = if sc.xi_hat(t_hi_limit) >= -1.0 {
        t_hi_limit
    } else {
        let (mut lo, mut hi) = (0.0f64, t_hi_limit);
        let mut t = 0.5;
        for _ in 0..200 {
            let (f, d) = sc.xi_hat_d(t);
            let f = f + 1.0;
            if f >= 0.0 {
                lo = t;
            } else {
                hi = t;
            }
            if hi - lo <= 1e-10 * hi || f == 0.0 {
                break;
            }
            let newton = t - f / d;
            t = if newton > lo && newton < hi && newton.is_finite() {
                newton
            } else {
                0.5 * (lo + hi)
            };
        }
        lo
    };
    if !(t_max > 0.0) {
        return None;
    }
    // Coarse grid: geometric towards 0 (ξ close to 0), linear across the range, and points
    // near t_max (ξ near -1), where the profile can peak sharply.
    let mut grid: Vec<f64> = Vec::with_capacity(40);
    for i in 0..6 {
        grid.push(t_max * 10f64.powf(-7.0 + i as f64));
    }
    for i in 2..=16 {
        grid.push(t_max * i as f64 / 16.0);
    }
    // Half-decades towards t_max: the profile can peak sharply just below it when the largest
    // excesses are spaced apart (a proptest case peaked at 1 − t/t_max ≈ 4e-3 between grid
    // points 1e-2 and 1e-4 and was missed).
    for k in 2..=12 {
        grid.push(t_max * (1.0 - 10f64.powf(-(k as f64) / 2.0)));
    }
    grid.sort_by(f64::total_cmp);
    grid.dedup();
    let vals: Vec<f64> = grid.iter().map(|&t| sc.profile(t)).collect();
    let (ib, _) = vals
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .max_by(|a, b| a.1.total_cmp(b.1))?;
    let lo = if ib == 0 { 0.0 } else { grid[ib - 1] };
    let hi = if ib + 1 == grid.len() {
        t_max
    } else {
        grid[ib + 1]
    };
    let t = brent_max(|t| sc.profile(t), lo, hi, grid[ib], vals[ib]);
    let xi = sc.xi_hat(t).max(-1.0);
    // A maximiser at ξ ≈ 0 is the exponential edge (whose candidate is exact there).
    if !(xi < -XI_EDGE) {
        return None;
    }
    let sigma = -xi / t * ymax;
    // Guard against rounding: the support must contain ymax (σ ≥ -ξ·ymax).
    let sigma = sigma.max(-xi * ymax);
    Some(Gpd { sigma, xi })
}

/// Brent's method (golden section with parabolic steps) for the maximum of `f` on `[a, b]`,
/// started at `x0` (with value `f0`) inside the bracket; relative tolerance 1e-9 in x.
/// Returns the best point evaluated.
fn brent_max(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64, x0: f64, f0: f64) -> f64 {
    const GOLD: f64 = 0.381_966_011_250_105_1;
    const TOL: f64 = 1e-9;
    // Minimise g = -f; non-finite values count as +∞.
    let g = |x: f64| {
        let v = -f(x);
        if v.is_nan() {
            f64::INFINITY
        } else {
            v
        }
    };
    let (mut x, mut w, mut v) = (x0, x0, x0);
    let (mut fx, mut fw, mut fv) = (-f0, -f0, -f0);
    let (mut d, mut e) = (0.0f64, 0.0f64);
    for _ in 0..100 {
        let m = 0.5 * (a + b);
        let tol1 = TOL * x.abs() + 1e-300;
        let tol2 = 2.0 * tol1;
        if (x - m).abs() <= tol2 - 0.5 * (b - a) {
            break;
        }
        let mut golden = true;
        if e.abs() > tol1 {
            let r = (x - w) * (fx - fv);
            let mut q = (x - v) * (fx - fw);
            let mut p = (x - v) * q - (x - w) * r;
            q = 2.0 * (q - r);
            if q > 0.0 {
                p = -p;
            } else {
                q = -q;
            }
            let e_old = e;
            if p.is_finite()
                && q.is_finite()
                && p.abs() < (0.5 * q * e_old).abs()
                && p > q * (a - x)
                && p < q * (b - x)
            {
                e = d;
                d = p / q;
                let u = x + d;
                if u - a < tol2 || b - u < tol2 {
                    d = tol1.copysign(m - x);
                }
                golden = false;
            }
        }
        if golden {
            e = if x >= m { a - x } else { b - x };
            d = GOLD * e;
        }
        let u = if d.abs() >= tol1 {
            x + d
        } else {
            x + tol1.copysign(d)
        };
        let fu = g(u);
        if fu <= fx {
            if u >= x {
                a = x;
            } else {
                b = x;
            }
            v = w;
            fv = fw;
            w = x;
            fw = fx;
            x = u;
            fx = fu;
        } else {
            if u < x {
                a = u;
            } else {
                b = u;
            }
            if fu <= fw || w == x {
                v = w;
                fv = fw;
                w = u;
                fw = fu;
            } else if fu <= fv || v == x || v == w {
                v = u;
                fv = fu;
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `survival(quantile(p)) = 1 − p` on both sides of ξ = 0 and at ξ = 0.
    #[test]
    fn quantile_inverts_survival() {
        for xi in [-0.6, -0.2, 0.0, 0.3] {
            let g = Gpd { sigma: 0.7, xi };
            for p in [0.0, 1e-9, 0.1, 0.5, 0.99] {
                let y = g.quantile(p);
                assert!(
                    (g.survival(y) - (1.0 - p)).abs() < 1e-12,
                    "xi {xi} p {p}: {y}"
                );
            }
        }
    }

    #[test]
    fn survival_and_density_at_edges() {
        let g = Gpd {
            sigma: 2.0,
            xi: -0.5,
        };
        assert_eq!(g.endpoint(), 4.0);
        assert_eq!(g.survival(4.0), 0.0);
        assert_eq!(g.survival(5.0), 0.0);
        assert_eq!(g.survival(0.0), 1.0);
        assert!((g.survival(2.0) - 0.25).abs() < 1e-15);
        assert_eq!(g.log_likelihood(&[1.0, 4.5]), f64::NEG_INFINITY);
        let u = Gpd {
            sigma: 3.0,
            xi: -1.0,
        };
        assert!((u.log_likelihood(&[0.0, 3.0]) + 2.0 * 3f64.ln()).abs() < 1e-15);
        let e = Gpd {
            sigma: 1.0,
            xi: 0.0,
        };
        assert_eq!(e.endpoint(), f64::INFINITY);
        assert!((e.survival(1.0) - (-1f64).exp()).abs() < 1e-15);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(fit_gpd_bounded(&[]).is_none());
        assert!(fit_gpd_bounded(&[0.0, 0.0]).is_none());
        assert!(fit_gpd_bounded(&[1.0, -0.1]).is_none());
        assert!(fit_gpd_bounded(&[1.0, f64::NAN]).is_none());
        let f = fit_gpd_bounded(&[0.3; 7]).unwrap();
        assert_eq!(
            f.gpd,
            Gpd {
                sigma: 0.3,
                xi: -1.0
            }
        );
        let f = fit_gpd_bounded(&[0.5]).unwrap();
        assert!(f.log_likelihood.is_finite() && f.gpd.endpoint() >= 0.5);
    }
}
