//! The sums behind the GPD profile likelihood (module docs of `evt`):
//!
//! - [`weighted_ln_one_minus`]: `Σ_i w_i ln(1 − t v_i)`;
//! - [`weighted_ln_one_minus_and_slope`]: the same sum and `Σ_i w_i v_i/(1 − t v_i)`;
//!
//! for `v_i ∈ [0, 1]` and `t ∈ [0, 1)`, so every argument `1 − t v_i` lies in `(0, 1]`.
//!
//! A fit evaluates them some seventy times over a query's ~200 excesses, and `predict` fits
//! every query once per level and once per sample-noise replicate, so these sums are where
//! `predict` spends its time. The logarithm is fdlibm's `e_log.c` algorithm (reduce to
//! `2^k·z` with `z ∈ [√2/2, √2)`, then `ln z = f − (f²/2 − s(f²/2 + R(s²)))` with `f = z − 1`,
//! `s = f/(2 + f)` and `R` a degree-7 polynomial in `s²`; error below one ulp), written without
//! branches or tables so that the loops vectorize. Each lane runs the same IEEE operations
//! whatever the instruction set (Rust never fuses a multiply and an add on its own), so the
//! AVX-512, AVX2 and portable paths give the same bits; the widest one the CPU has is taken at
//! run time (AVX-512 holds the eight partial sums in one register: `predict` on an ILIAS-sized
//! summary ran in 0.76 of the AVX2 path's time, docs/reference/performance.md). The sums are
//! kept in [`LANES`] partial sums added pairwise at the end.

/// Partial sums per loop step (two AVX2 registers of f64, one AVX-512 register).
const LANES: usize = 8;

// fdlibm's constants (shortest decimals of the same doubles).
const LG1: f64 = 0.6666666666666735;
const LG2: f64 = 0.3999999999940942;
const LG3: f64 = 0.2857142874366239;
const LG4: f64 = 0.22222198432149784;
const LG5: f64 = 0.1818357216161805;
const LG6: f64 = 0.15313837699209373;
const LG7: f64 = 0.14798198605116586;
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;

/// `ln x` for a positive, finite, normal `x` (anything else gives a meaningless number).
#[inline(always)]
fn ln_normal(x: f64) -> f64 {
    let ix = x.to_bits();
    // ix − bits(√2/2): its exponent field is k (two's complement, 12 bits) such that
    // x = 2^k · z with z ∈ [√2/2, √2).
    let tmp = ix.wrapping_sub(0x3fe6_a09e_667f_3bcd);
    let z = f64::from_bits(ix.wrapping_sub(tmp & (0xfff << 52)));
    // k + 2048 ∈ [0, 4096) by a logical shift (AVX2 has no 64-bit arithmetic shift), turned
    // into a float exactly through the 2^52 mantissa trick.
    let k_biased = tmp.wrapping_add(1 << 63) >> 52;
    let k = f64::from_bits(0x4330_0000_0000_0000 | k_biased) - (4_503_599_627_370_496.0 + 2048.0);
    let f = z - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let s2 = s * s;
    let s4 = s2 * s2;
    let r = s2 * (LG1 + s4 * (LG3 + s4 * (LG5 + s4 * LG7))) + s4 * (LG2 + s4 * (LG4 + s4 * LG6));
    k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f)
}

/// `ln(1 + u)` for `u ∈ (−1, 1]`, with the rounding of `1 + u` put back (`ln y − ((y − 1) −
/// u)/y`, `y = 1 + u` rounded), so that it keeps its relative precision for tiny `u`.
#[inline(always)]
fn ln_1p_small(u: f64) -> f64 {
    let y = 1.0 + u;
    ln_normal(y) - ((y - 1.0) - u) / y
}

/// `ln(1 − t v)` at precision `ln_1p` gives for small `t·v` (below 1e-3), plain `ln` above.
#[inline(always)]
fn ln_one_minus(t: f64, v: f64, small: bool) -> f64 {
    if small {
        ln_1p_small(-t * v)
    } else {
        ln_normal(1.0 - t * v)
    }
}

#[inline(always)]
fn pairwise(acc: [f64; LANES]) -> f64 {
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
}

#[inline(always)]
fn sum_portable(t: f64, v: &[f64], w: &[f64]) -> f64 {
    let small = t < 1e-3;
    let mut acc = [0.0f64; LANES];
    let (vc, wc) = (v.chunks_exact(LANES), w.chunks_exact(LANES));
    let (vr, wr) = (vc.remainder(), wc.remainder());
    for (vs, ws) in vc.zip(wc) {
        for l in 0..LANES {
            acc[l] += ws[l] * ln_one_minus(t, vs[l], small);
        }
    }
    for (l, (&vi, &wi)) in vr.iter().zip(wr).enumerate() {
        acc[l] += wi * ln_one_minus(t, vi, small);
    }
    pairwise(acc)
}

#[inline(always)]
fn sum_and_slope_portable(t: f64, v: &[f64], w: &[f64]) -> (f64, f64) {
    let mut acc = [0.0f64; LANES];
    let mut slope = [0.0f64; LANES];
    let (vc, wc) = (v.chunks_exact(LANES), w.chunks_exact(LANES));
    let (vr, wr) = (vc.remainder(), wc.remainder());
    for (vs, ws) in vc.zip(wc) {
        for l in 0..LANES {
            let z = 1.0 - t * vs[l];
            acc[l] += ws[l] * ln_normal(z);
            slope[l] += ws[l] * vs[l] / z;
        }
    }
    for (l, (&vi, &wi)) in vr.iter().zip(wr).enumerate() {
        let z = 1.0 - t * vi;
        acc[l] += wi * ln_normal(z);
        slope[l] += wi * vi / z;
    }
    (pairwise(acc), pairwise(slope))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_avx2(t: f64, v: &[f64], w: &[f64]) -> f64 {
    sum_portable(t, v, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_and_slope_avx2(t: f64, v: &[f64], w: &[f64]) -> (f64, f64) {
    sum_and_slope_portable(t, v, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sum_avx512(t: f64, v: &[f64], w: &[f64]) -> f64 {
    sum_portable(t, v, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sum_and_slope_avx512(t: f64, v: &[f64], w: &[f64]) -> (f64, f64) {
    sum_and_slope_portable(t, v, w)
}

/// AVX-512 F and what rustc's `avx512f` implies (AVX2, FMA, F16C), each detected: every
/// AVX-512 CPU has them, but the `unsafe` calls below rely on all of them.
#[inline]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c")
            && has_avx2()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[inline]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `Σ_i w_i ln(1 − t v_i)` for `v_i ∈ [0, 1]`, `t ∈ [0, 1)` (`v` and `w` of equal length).
pub(super) fn weighted_ln_one_minus(t: f64, v: &[f64], w: &[f64]) -> f64 {
    debug_assert_eq!(v.len(), w.len());
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: the CPU has AVX-512 F and what it implies (checked just above).
        return unsafe { sum_avx512(t, v, w) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { sum_avx2(t, v, w) };
    }
    sum_portable(t, v, w)
}

/// `(Σ_i w_i ln(1 − t v_i), Σ_i w_i v_i/(1 − t v_i))`, same domain as
/// [`weighted_ln_one_minus`]; the logarithm is the plain one at every `t`.
pub(super) fn weighted_ln_one_minus_and_slope(t: f64, v: &[f64], w: &[f64]) -> (f64, f64) {
    debug_assert_eq!(v.len(), w.len());
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: the CPU has AVX-512 F and what it implies (checked just above).
        return unsafe { sum_and_slope_avx512(t, v, w) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { sum_and_slope_avx2(t, v, w) };
    }
    sum_and_slope_portable(t, v, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    fn xorshift(state: &mut u64) -> f64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn ln_within_one_ulp_of_std_over_every_binade() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut worst = 0;
        for e in -1022..1023 {
            for _ in 0..200 {
                let x = (1.0 + xorshift(&mut s)) * 2f64.powi(e);
                worst = worst.max(ulps(ln_normal(x), x.ln()));
            }
        }
        for x in [
            1.0,
            2.0,
            0.5,
            std::f64::consts::SQRT_2,
            0.5f64.sqrt(),
            1e-300,
            f64::MAX,
        ] {
            assert!(ulps(ln_normal(x), x.ln()) <= 1, "ln({x})");
        }
        assert_eq!(ln_normal(1.0), 0.0);
        assert!(worst <= 1, "worst {worst} ulps");
    }

    #[test]
    fn ln_1p_keeps_relative_precision_for_tiny_arguments() {
        let mut s = 7u64;
        for _ in 0..100_000 {
            let u = -(xorshift(&mut s) * 1e-3) * 10f64.powi(-(xorshift(&mut s) * 12.0) as i32);
            let (a, b) = (ln_1p_small(u), u.ln_1p());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b.abs(),
                "u={u}: {a} vs {b}"
            );
        }
    }

    #[test]
    fn sums_match_the_plain_loop_and_every_path_agrees_bitwise() {
        let mut s = 11u64;
        for n in [0usize, 1, 7, 8, 9, 200, 203] {
            let v: Vec<f64> = (0..n).map(|_| xorshift(&mut s)).collect();
            let w: Vec<f64> = (0..n)
                .map(|_| 1.0 + (xorshift(&mut s) * 3.0).floor())
                .collect();
            for t in [0.0, 1e-9, 5e-4, 1e-3, 0.3, 0.999, 1.0 - 1e-12] {
                let plain: f64 = v
                    .iter()
                    .zip(&w)
                    .map(|(&vi, &wi)| wi * (-t * vi).ln_1p())
                    .sum();
                let slope: f64 = v
                    .iter()
                    .zip(&w)
                    .map(|(&vi, &wi)| wi * vi / (1.0 - t * vi))
                    .sum();
                let got = weighted_ln_one_minus(t, &v, &w);
                let tol = 1e-13 * (1.0 + plain.abs());
                assert!((got - plain).abs() <= tol, "n={n} t={t}: {got} vs {plain}");
                assert_eq!(got.to_bits(), sum_portable(t, &v, &w).to_bits());
                let (a, d) = weighted_ln_one_minus_and_slope(t, &v, &w);
                assert_eq!((a, d), sum_and_slope_portable(t, &v, &w));
                #[cfg(target_arch = "x86_64")]
                {
                    let portable = (sum_portable(t, &v, &w), sum_and_slope_portable(t, &v, &w));
                    let bits =
                        |(s, (a, d)): (f64, (f64, f64))| (s.to_bits(), a.to_bits(), d.to_bits());
                    if has_avx2() {
                        // SAFETY: the CPU has AVX2.
                        let avx2 = unsafe { (sum_avx2(t, &v, &w), sum_and_slope_avx2(t, &v, &w)) };
                        assert_eq!(bits(avx2), bits(portable), "AVX2 path, n={n} t={t}");
                    }
                    if has_avx512() {
                        // SAFETY: the CPU has AVX-512 F.
                        let avx512 =
                            unsafe { (sum_avx512(t, &v, &w), sum_and_slope_avx512(t, &v, &w)) };
                        assert_eq!(bits(avx512), bits(portable), "AVX-512 path, n={n} t={t}");
                    }
                }
                assert!((d - slope).abs() <= 1e-12 * (1.0 + slope.abs()));
                if t >= 1e-3 {
                    assert_eq!(a.to_bits(), got.to_bits());
                }
            }
        }
    }
}
