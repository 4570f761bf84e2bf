//! Small statistics toolbox for the bootstrap: normal CDF and quantile, numpy-style linear
//! quantiles, percentile and BCa intervals, a Poisson(1) sampler and a seeded RNG per stream.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

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
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for m in 1..500 {
        let a = m as f64 / 2.0;
        d = x + a * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = x + a / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() * FRAC_1_SQRT_PI / f
}

/// Standard normal CDF `Φ(x) = erfc(−x/√2)/2`.
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Standard normal quantile `Φ⁻¹(p)`: Acklam's rational approximation refined by two Halley
/// steps on `Φ(x) − p`. `±∞` at 0 and 1, NaN outside [0, 1].
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
    let p_low = 0.02425;
    let mut x = if p < p_low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - p_low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    for _ in 0..2 {
        let e = norm_cdf(x) - p;
        let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
        x -= u / (1.0 + x * u / 2.0);
    }
    x
}

/// Quantile of already sorted (ascending) values with numpy's default linear interpolation:
/// position `h = (n − 1)·q`, value `v[⌊h⌋] + (h − ⌊h⌋)(v[⌊h⌋+1] − v[⌊h⌋])`. NaN when empty.
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() || q.is_nan() {
        return f64::NAN;
    }
    let q = q.clamp(0.0, 1.0);
    let h = (v.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
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

/// A deterministic RNG for stream `(seed, stream, index)`: the three are mixed with SplitMix64
/// so that replicates can be drawn in parallel, in any order, with the same result.
pub fn rng_for(seed: u64, stream: u64, index: u64) -> Xoshiro256PlusPlus {
    let mut z = seed;
    for v in [stream, index] {
        z = splitmix(z ^ splitmix(v.wrapping_add(0x9E37_79B9_7F4A_7C15)));
    }
    Xoshiro256PlusPlus::seed_from_u64(z)
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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

/// `x / se`, the z-score of a statistic `x` with standard error `se`: 0 when both are 0, +∞
/// when only `se` is 0 (or NaN: a statistic without an SE is never "within noise").
pub fn z_score(x: f64, se: f64) -> f64 {
    if se > 0.0 {
        x / se
    } else if x.abs() < 1e-15 {
        0.0
    } else {
        f64::INFINITY
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
    }

    #[test]
    fn poisson1_moments() {
        let mut rng = rng_for(1, 2, 3);
        let n = 200_000;
        let v: Vec<f64> = (0..n).map(|_| poisson1(&mut rng) as f64).collect();
        let m = v.iter().sum::<f64>() / n as f64;
        let sd = std_dev(&v);
        assert!((m - 1.0).abs() < 0.01, "{m}");
        assert!((sd - 1.0).abs() < 0.01, "{sd}");
    }

    #[test]
    fn linear_quantile() {
        let v = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(quantile_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_sorted(&v, 1.0), 8.0);
        assert!((quantile_sorted(&v, 0.5) - 3.0).abs() < 1e-15);
    }
}
