//! The standard normal distribution and `erfc`, in two precisions named for their method:
//!
//! - [`erfc`], [`norm_cdf`], [`norm_ppf`]: double precision (series and continued fraction;
//!   two Halley steps), for the bootstrap intervals and the prediction;
//! - [`erfc_chebyshev`], [`norm_cdf_chebyshev`], [`norm_sf_chebyshev`],
//!   [`norm_ppf_chebyshev`]: the Chebyshev-fitted `erfc` (relative error < 1.2e-7) and the
//!   quantile consistent with it, for the simulator. Every simulated benchmark's hardness and
//!   truncated-normal scores are drawn through this approximation, so the simulated summaries
//!   and truths (and the tables of `docs/reference/validation.md`) are pinned to it bit for bit.
//!
//! Both quantiles start from Acklam's rational approximation (`acklam`).

use super::lentz_step;
use std::f64::consts::{PI, SQRT_2};

const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;

/// Complementary error function, double precision.
///
/// `|x| < 2`: `erf(x) = 2/√π · e^{−x²} · Σ_n 2^n x^{2n+1} / (1·3·…·(2n+1))` (all terms positive,
/// no cancellation), `erfc = 1 − erf`. `x ≥ 2`: the continued fraction
/// `erfc(x) = e^{−x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))` (modified Lentz).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < -2.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        let x2 = x * x;
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs().max(1e-300) {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
            if n > 200.0 {
                break;
            }
        }
        let erf = 2.0 * FRAC_1_SQRT_PI * (-x2).exp() * sum;
        return 1.0 - erf;
    }
    if x > 27.0 {
        return 0.0;
    }
    // Modified Lentz for the continued fraction K(a_m / x) with a_m = m/2.
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for m in 1..500 {
        let delta = lentz_step(x, m as f64 / 2.0, &mut c, &mut d);
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() * FRAC_1_SQRT_PI / f
}

/// Standard normal CDF `Φ(x) = erfc(−x/√2)/2`, double precision.
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / SQRT_2)
}

/// Standard normal quantile `Φ⁻¹(p)`: `acklam` refined by two Halley steps on
/// `Φ(x) − p` ([`norm_cdf`]). `±∞` at 0 and 1, NaN outside [0, 1].
pub fn norm_ppf(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) || p.is_nan() {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let mut x = acklam(p, || (1.0 - p).ln());
    for _ in 0..2 {
        x = halley_step(x, norm_cdf(x) - p);
    }
    x
}

/// `erfc` fitted by a Chebyshev-like polynomial in `t = 1/(1 + |x|/2)` (Numerical Recipes'
/// `erfcc`): `erfc(|x|) = t·exp(−x² − 1.26551223 + t·(1.00002368 + …))`, relative error
/// < 1.2e-7 everywhere; `erfc(−x) = 2 − erfc(x)`. The simulator's variant (module docs).
pub fn erfc_chebyshev(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// `Φ(x) = erfc(−x/√2)/2` through [`erfc_chebyshev`] (relative error < 1.2e-7, ample for a
/// copula): the simulator's variant (module docs).
pub fn norm_cdf_chebyshev(x: f64) -> f64 {
    0.5 * erfc_chebyshev(-x / SQRT_2)
}

/// Standard normal survival `Q(z) = P(Z > z) = Φ(−z)` through [`norm_cdf_chebyshev`].
pub fn norm_sf_chebyshev(z: f64) -> f64 {
    norm_cdf_chebyshev(-z)
}

/// The inverse of [`norm_cdf_chebyshev`] at `q ∈ (0, 1)`: `acklam` at `q` clamped to
/// `[1e-300, 1 − 1e-16]`, then one Halley step against [`norm_cdf_chebyshev`] so that the two
/// are consistent (the step is dropped when it is not finite).
pub fn norm_ppf_chebyshev(q: f64) -> f64 {
    let q = q.clamp(1e-300, 1.0 - 1e-16);
    let x = acklam(q, || (-q).ln_1p());
    let refined = halley_step(x, norm_cdf_chebyshev(x) - q);
    if refined.is_finite() {
        refined
    } else {
        x
    }
}

/// One Halley step on `Φ(x) − p` from `x`, given the residual `e = Φ(x) − p`:
/// `u = e·√(2π)·exp(x²/2)`, `x − u/(1 + x·u/2)`.
fn halley_step(x: f64, e: f64) -> f64 {
    let u = e * (2.0 * PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// Acklam's rational approximation of `Φ⁻¹(p)` for `p ∈ (0, 1)` (relative error < 1.15e-9):
/// one rational function of `p − 1/2` in the centre, one of `√(−2 ln p)` in the tails
/// (`p < 0.02425`, and mirrored, `√(−2 ln(1 − p))` with `ln(1 − p)` from `ln_1mp`, above
/// `1 − 0.02425`).
fn acklam(p: f64, ln_1mp: impl FnOnce() -> f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const P_LOW: f64 = 0.024_25;
    let tail = |r: f64| {
        (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0)
    };
    if p < P_LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - P_LOW {
        -tail((-2.0 * ln_1mp()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_identities() {
        assert!((norm_cdf(0.0) - 0.5).abs() < 1e-16);
        for &p in &[1e-10, 0.001, 0.025, 0.3, 0.5, 0.8, 0.975, 0.999_999] {
            let x = norm_ppf(p);
            assert!((norm_cdf(x) - p).abs() < 1e-14 * p.max(1e-3), "p={p}");
        }
        assert!((norm_ppf(0.975) - 1.959_963_984_540_054).abs() < 1e-12);
        assert_eq!(norm_ppf(0.0), f64::NEG_INFINITY);
        assert_eq!(norm_ppf(1.0), f64::INFINITY);
        assert!(norm_ppf(1.5).is_nan());
    }

    #[test]
    fn chebyshev_variant_is_close_and_self_consistent() {
        assert!((norm_cdf_chebyshev(0.0) - 0.5).abs() < 1e-7);
        assert!((norm_cdf_chebyshev(1.959_963_985) - 0.975).abs() < 1e-7);
        assert!((norm_cdf_chebyshev(-3.0) - 0.001_349_898).abs() < 1e-8);
        for q in [1e-14, 1e-8, 1e-3, 0.3, 0.5, 0.9] {
            let z = norm_ppf_chebyshev(q);
            assert!(((norm_cdf_chebyshev(z) - q) / q).abs() < 1e-6, "{q}");
            assert_eq!(norm_sf_chebyshev(-z), norm_cdf_chebyshev(z));
        }
    }
}
