use super::{MR, NR};
use std::arch::x86_64::*;

/// Covers the absolute error of a chain of at most [`MAX_DIM`](super::MAX_DIM) operations
/// on subnormal values (each at most 2⁻¹⁴⁹).
pub(super) const UNDERFLOW_SLACK: f32 = 1.0 / (1u128 << 100) as f32;

/// [`quantise`](super::quantise) in AVX2: 8 lanes for the maximum and the sums, values
/// rounded to nearest (ties to even, the default rounding mode) by `cvtps2dq`.
///
/// # Safety
/// AVX2 + FMA; `out.len() ≥ v.len()`.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn quantise(v: &[f32], out: &mut [i16]) -> (f32, f32, f32, f32) {
    let n = v.len();
    assert!(out.len() >= n);
    let n8 = n - n % 8;
    let mut tail = [0f32; 8];
    tail[..n - n8].copy_from_slice(&v[n8..]);
    let chunk = |k: usize| {
        if k < n8 {
            _mm256_loadu_ps(v.as_ptr().add(k))
        } else {
            _mm256_loadu_ps(tail.as_ptr())
        }
    };
    let abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    let (mut mx, mut sq) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let mut k = 0;
    while k < n {
        let x = chunk(k);
        mx = _mm256_max_ps(mx, _mm256_and_ps(x, abs_mask));
        sq = _mm256_fmadd_ps(x, x, sq);
        k += 8;
    }
    let (mx, sq) = (lanes(mx), lanes(sq));
    let maxabs = mx.iter().fold(0f32, |a, &b| a.max(b));
    if maxabs < super::TINY {
        return super::quantise_tiny(v, out);
    }
    let margin = 1.0 + (n as f32 + 8.0) * f32::EPSILON / 2.0;
    let norm = sq.iter().sum::<f32>().sqrt() * margin;
    let step = (maxabs / super::MAX_STEP).max(norm / super::NORM_STEPS);
    let inv = _mm256_set1_ps(1.0 / step);
    let stepv = _mm256_set1_ps(step);
    let (lo, hi) = (
        _mm256_set1_ps(-super::MAX_STEP),
        _mm256_set1_ps(super::MAX_STEP),
    );
    let (mut err, mut hat) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let mut packed = [0i16; 8];
    let mut k = 0;
    while k < n {
        let x = chunk(k);
        let y = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(x, inv), lo), hi);
        let qi = _mm256_cvtps_epi32(y);
        let h = _mm256_mul_ps(_mm256_cvtepi32_ps(qi), stepv);
        let e = _mm256_sub_ps(x, h);
        err = _mm256_fmadd_ps(e, e, err);
        hat = _mm256_fmadd_ps(h, h, hat);
        let q16 = _mm256_permute4x64_epi64::<0b1000>(_mm256_packs_epi32(qi, qi));
        _mm_storeu_si128(packed.as_mut_ptr().cast(), _mm256_castsi256_si128(q16));
        let m = (n - k).min(8);
        out[k..k + m].copy_from_slice(&packed[..m]);
        k += 8;
    }
    out[n..].fill(0);
    let lost = n as f32 * f32::MIN_POSITIVE;
    let hat = (lanes(hat).iter().sum::<f32>() + lost).sqrt() * margin;
    let err = (lanes(err).iter().sum::<f32>() + lost).sqrt() * margin + hat * f32::EPSILON;
    (step, norm, err, hat)
}

#[inline(always)]
unsafe fn lanes(v: __m256) -> [f32; 8] {
    let mut a = [0f32; 8];
    _mm256_storeu_ps(a.as_mut_ptr(), v);
    a
}

/// Bound coefficients of the `MR` rows of a panel.
pub(super) struct RowCoefs {
    pub step: *const f32,
    pub norm: *const f32,
    pub err: *const f32,
    pub hat: *const f32,
}

/// Bound coefficients of one query, margins applied.
#[derive(Default, Clone, Copy)]
pub(super) struct QueryCoef {
    pub step: f32,
    pub norm_margin: f32,
    pub err_margin: f32,
    pub norm_rounding: f32,
}

/// One `MR × NR` tile of upper bounds: the i32 products `Σ_k a[k][i] · b[k][j]` over `kp`
/// depth pairs (`a`: `[kp][MR][2]` i16, `b`: `[kp][NR][2]` i16), then
/// `c[j · ldc + i] = acc · δ_j δ_i + ‖q_j‖‖e_i‖(1+m) + ‖e_j‖‖h_i‖(1+m) + ρ‖q_j‖‖x_i‖`.
///
/// # Safety
/// AVX2; `a` 32-byte aligned with `kp · 2 · MR` values, `b` with `kp · 2 · NR`, the row
/// coefficients valid for `MR` values, `c` for `NR` rows of stride `ldc`.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn tile(
    kp: usize,
    mut a: *const i16,
    mut b: *const i16,
    row: &RowCoefs,
    query: *const QueryCoef,
    c: *mut f32,
    ldc: usize,
) {
    let mut acc = [[_mm256_setzero_si256(); 2]; NR];
    for _ in 0..kp {
        let a0 = _mm256_load_si256(a.cast());
        let a1 = _mm256_load_si256(a.add(16).cast());
        for (j, r) in acc.iter_mut().enumerate() {
            let x = _mm256_set1_epi32(b.add(2 * j).cast::<i32>().read_unaligned());
            r[0] = _mm256_add_epi32(r[0], _mm256_madd_epi16(a0, x));
            r[1] = _mm256_add_epi32(r[1], _mm256_madd_epi16(a1, x));
        }
        a = a.add(2 * MR);
        b = b.add(2 * NR);
    }
    // Absolute slack for products that underflow to subnormals in the f32 chain.
    let slack = _mm256_set1_ps(UNDERFLOW_SLACK);
    for h in 0..2 {
        let step = _mm256_loadu_ps(row.step.add(8 * h));
        let norm = _mm256_loadu_ps(row.norm.add(8 * h));
        let err = _mm256_loadu_ps(row.err.add(8 * h));
        let hat = _mm256_loadu_ps(row.hat.add(8 * h));
        for (j, r) in acc.iter().enumerate() {
            let q = &*query.add(j);
            let scale = _mm256_mul_ps(step, _mm256_set1_ps(q.step));
            let mut bound = _mm256_fmadd_ps(norm, _mm256_set1_ps(q.norm_rounding), slack);
            bound = _mm256_fmadd_ps(err, _mm256_set1_ps(q.norm_margin), bound);
            bound = _mm256_fmadd_ps(hat, _mm256_set1_ps(q.err_margin), bound);
            let upper = _mm256_fmadd_ps(_mm256_cvtepi32_ps(r[h]), scale, bound);
            _mm256_storeu_ps(c.add(j * ldc + 8 * h), upper);
        }
    }
}
