//! Special functions behind the corpus score laws ([`super::law`]): `ln Γ`, the regularized
//! incomplete beta function `I_x(a, b)` and its inverse near `x = 0`, and the inverse of the
//! standard normal survival function. Accuracy: relative `~1e-12` for `I_x` (continued
//! fraction), `~1e-7` for the normal survival (the copula's `erfc`, [`super::hardness_law`]);
//! the simulator only needs each survival function monotone and its inverse consistent with
//! it, since the truth `x` is always re-evaluated at the drawn (f32) score.

use super::hardness_law::norm_cdf;

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, 9 terms; relative error below 1e-13).
pub fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// `ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b)`.
pub fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// Continued fraction of `I_x(a, b)` (modified Lentz), valid for `x < (a + 1)/(a + b + 2)`.
fn beta_cf(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..400 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Regularized incomplete beta `I_x(a, b) = B(x; a, b)/B(a, b)`, the CDF of Beta(a, b) at `x`
/// (0 for `x ≤ 0`, 1 for `x ≥ 1`). Small values keep their relative accuracy.
pub fn inc_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = a * x.ln() + b * (-x).ln_1p() - ln_beta(a, b);
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_cf(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_cf(1.0 - x, b, a) / b
    }
}

/// The `d ∈ [0, 1]` with `I_d(a, b) = p`: safeguarded Newton on `ln I` as a function of
/// `u = ln d` (nearly linear there, `ln I_d ≈ a·u − ln(a·B(a, b))` for small `d`), started from
/// that leading term, falling back to bisection inside the bracket.
pub fn inc_beta_inv(p: f64, a: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let lb = ln_beta(a, b);
    let lp = p.ln();
    let (mut lo, mut hi) = (-745.0f64, 0.0f64);
    let mut u = ((lp + a.ln() + lb) / a).clamp(-700.0, -1e-12);
    for _ in 0..100 {
        let d = u.exp();
        let i = inc_beta(d, a, b);
        if i > p {
            hi = u;
        } else {
            lo = u;
        }
        // d ln I / du = d·density/I, density = d^(a−1)(1−d)^(b−1)/B(a, b).
        let ln_slope = a * u + (b - 1.0) * (-d).ln_1p() - lb - i.ln();
        let mut next = u - (i.ln() - lp) / ln_slope.exp();
        if !(next > lo && next < hi && next.is_finite()) {
            next = 0.5 * (lo + hi);
        }
        if (next - u).abs() <= 1e-13 || hi - lo <= 1e-13 {
            return next.exp();
        }
        u = next;
    }
    u.exp()
}

/// Standard normal survival `Q(z) = P(Z > z)`.
pub fn norm_sf(z: f64) -> f64 {
    norm_cdf(-z)
}

/// Inverse of the standard normal CDF at `q ∈ (0, 1)` (Acklam's rational approximation, then
/// one Halley step against [`norm_cdf`] so that the two are consistent).
pub fn norm_ppf(q: f64) -> f64 {
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
    let q = q.clamp(1e-300, 1.0 - 1e-16);
    let tail = |r: f64| {
        (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0)
    };
    let x = if q < 0.024_25 {
        tail((-2.0 * q.ln()).sqrt())
    } else if q > 1.0 - 0.024_25 {
        -tail((-2.0 * (-q).ln_1p()).sqrt())
    } else {
        let r0 = q - 0.5;
        let r = r0 * r0;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * r0
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // Halley refinement: e = Φ(x) − q, u = e·√(2π)·exp(x²/2).
    let e = norm_cdf(x) - q;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (0.5 * x * x).exp();
    let refined = x - u / (1.0 + 0.5 * x * u);
    if refined.is_finite() {
        refined
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_and_beta_identities() {
        // Γ(n) = (n − 1)!, Γ(1/2) = √π.
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
        // I_x(1, b) = 1 − (1 − x)^b and I_x(a, 1) = x^a in closed form.
        for x in [1e-12f64, 1e-6, 0.01, 0.3, 0.7, 0.99] {
            let want = -(3.5 * (-x).ln_1p()).exp_m1();
            assert!(((inc_beta(x, 1.0, 3.5) - want) / want).abs() < 1e-10, "{x}");
            let want = x.powf(2.5);
            assert!(((inc_beta(x, 2.5, 1.0) - want) / want).abs() < 1e-10, "{x}");
        }
        // Symmetry I_x(a, b) = 1 − I_{1−x}(b, a).
        let (a, b) = (2.3, 7.1);
        for x in [0.05, 0.2, 0.5, 0.8] {
            assert!((inc_beta(x, a, b) + inc_beta(1.0 - x, b, a) - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn inverses_invert() {
        for &(a, b) in &[(8.0, 2.0), (3.0, 5.0), (12.0, 1.5)] {
            for e in 1..=14 {
                let p = 10f64.powi(-e);
                let d = inc_beta_inv(p, a, b);
                assert!(((inc_beta(d, a, b) - p) / p).abs() < 1e-9, "{a} {b} {p}");
            }
        }
        for q in [1e-14, 1e-8, 1e-3, 0.3, 0.5, 0.9] {
            let z = norm_ppf(q);
            assert!(((norm_cdf(z) - q) / q).abs() < 1e-6, "{q}");
        }
    }
}
