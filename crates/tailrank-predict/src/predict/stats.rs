//! Small statistics toolbox for the bootstrap: percentile and BCa intervals, a Poisson(1)
//! sampler and z-scores (the special functions, quantiles and RNG streams are
//! [`crate::numerics`]).

use crate::numerics::{norm_cdf, norm_ppf, quantile_sorted};
use rand::RngExt;

/// A two-sided interval `[lo, hi]` on the fraction scale.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// The interval with both ends NaN (no bootstrap was run).
    pub fn undefined() -> Self {
        Interval {
            lo: f64::NAN,
            hi: f64::NAN,
        }
    }

    /// Whether `x` lies in `[lo, hi]`.
    pub fn contains(&self, x: f64) -> bool {
        x >= self.lo && x <= self.hi
    }
}

/// Sample standard deviation (divisor n − 1); NaN for fewer than 2 values.
pub fn std_dev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return f64::NAN;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// Percentile interval: the `(1−c)/2` and `(1+c)/2` linear quantiles of the replicates.
pub fn percentile_interval(replicates: &[f64], confidence: f64) -> Interval {
    let mut v = replicates.to_vec();
    v.sort_by(f64::total_cmp);
    let a = (1.0 - confidence) / 2.0;
    Interval {
        lo: quantile_sorted(&v, a),
        hi: quantile_sorted(&v, 1.0 - a),
    }
}

/// BCa interval (Efron 1987), the same formula as `scipy.stats.bootstrap(method="BCa")`:
///
/// - bias correction `z₀ = Φ⁻¹(#{θ*_b < θ̂} / B)`,
/// - acceleration from the jackknife values `θ_(i)`, `θ̄ = mean θ_(i)`:
///   `a = Σ(θ̄ − θ_(i))³ / (6 (Σ(θ̄ − θ_(i))²)^{3/2})`,
/// - ends at the replicate quantiles `α' = Φ(z₀ + (z₀ + z_α)/(1 − a(z₀ + z_α)))` for
///   `α = (1−c)/2, (1+c)/2`.
///
/// Falls back to the percentile interval when `z₀` is infinite (all replicates on one side of
/// θ̂, e.g. a degenerate statistic).
pub fn bca_interval(
    theta_hat: f64,
    replicates: &[f64],
    jackknife: &[f64],
    confidence: f64,
) -> Interval {
    let b = replicates.len();
    if b == 0 {
        return Interval::undefined();
    }
    let below = replicates.iter().filter(|&&t| t < theta_hat).count();
    let z0 = norm_ppf(below as f64 / b as f64);
    if !z0.is_finite() {
        return percentile_interval(replicates, confidence);
    }
    let n = jackknife.len() as f64;
    let a = if jackknife.len() < 2 {
        0.0
    } else {
        let mean = jackknife.iter().sum::<f64>() / n;
        let num: f64 = jackknife.iter().map(|t| (mean - t).powi(3)).sum();
        let den = 6.0
            * jackknife
                .iter()
                .map(|t| (mean - t).powi(2))
                .sum::<f64>()
                .powf(1.5);
        if den > 0.0 {
            num / den
        } else {
            0.0
        }
    };
    let mut v = replicates.to_vec();
    v.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence) / 2.0;
    let end = |q: f64| {
        let zq = norm_ppf(q);
        let num = z0 + zq;
        let adj = norm_cdf(z0 + num / (1.0 - a * num));
        quantile_sorted(&v, adj)
    };
    Interval {
        lo: end(alpha),
        hi: end(1.0 - alpha),
    }
}

/// Cumulative Poisson(1) probabilities `P(W ≤ w)`, `w = 0..=19`.
fn poisson1_cdf() -> &'static [f64; 20] {
    static CDF: std::sync::OnceLock<[f64; 20]> = std::sync::OnceLock::new();
    CDF.get_or_init(|| {
        let mut c = [0.0; 20];
        let mut p = (-1.0f64).exp();
        let mut acc = 0.0;
        for (w, slot) in c.iter_mut().enumerate() {
            if w > 0 {
                p /= w as f64;
            }
            acc += p;
            *slot = acc;
        }
        c
    })
}

/// One Poisson(1) draw by inversion of the CDF (the tail beyond 19 has mass < 1e-17).
#[inline]
pub fn poisson1<R: rand::Rng + ?Sized>(rng: &mut R) -> u32 {
    let u: f64 = rng.random();
    let cdf = poisson1_cdf();
    cdf.iter().position(|&c| u < c).unwrap_or(19) as u32
}

/// One Poisson(λ) draw (0 when λ ≤ 0).
pub fn poisson<R: rand::Rng + ?Sized>(rng: &mut R, lambda: f64) -> u64 {
    if lambda <= 0.0 || lambda.is_nan() {
        return 0;
    }
    if lambda == 1.0 {
        return poisson1(rng) as u64;
    }
    use rand_distr::Distribution;
    match rand_distr::Poisson::new(lambda) {
        Ok(d) => d.sample(rng) as u64,
        Err(_) => lambda.round() as u64,
    }
}

/// A paired statistic farther than this many standard errors from 0 is real, not noise: the
/// level of every check of the verdict (`predict::trust`) and the gate of the excess-centre
/// move (`predict::endpoint_test`).
pub const Z_CRIT: f64 = 3.0;

/// `x / se`, the z-score of a statistic `x` with standard error `se`: 0 when both are 0, ±∞
/// (the sign of `x`; +∞ for a NaN `x`) when only `se` is 0 or NaN: a statistic without an SE
/// is never "within noise".
pub fn z_score(x: f64, se: f64) -> f64 {
    if se > 0.0 {
        x / se
    } else if x.abs() < 1e-15 {
        0.0
    } else if x < 0.0 {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a standard error a nonzero statistic is infinitely far from 0, on its own side.
    #[test]
    fn z_without_noise_keeps_the_sign() {
        assert_eq!(z_score(0.3, 0.1), 0.3 / 0.1);
        assert_eq!(z_score(0.0, 0.0), 0.0);
        assert_eq!(z_score(0.2, 0.0), f64::INFINITY);
        assert_eq!(z_score(-0.2, 0.0), f64::NEG_INFINITY);
        assert_eq!(z_score(-0.2, f64::NAN), f64::NEG_INFINITY);
    }

    #[test]
    fn poisson1_moments() {
        let mut rng = crate::numerics::rng_for(crate::numerics::StreamSeeding::Chained, 1, 2, 3);
        let n = 200_000;
        let v: Vec<f64> = (0..n).map(|_| poisson1(&mut rng) as f64).collect();
        let m = v.iter().sum::<f64>() / n as f64;
        let sd = std_dev(&v);
        assert!((m - 1.0).abs() < 0.01, "{m}");
        assert!((sd - 1.0).abs() < 0.01, "{sd}");
    }
}
