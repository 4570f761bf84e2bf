use super::avx2::{QueryCoef, RowCoefs};
use super::{MR, NR};
use std::arch::x86_64::*;

/// [`super::avx2::tile`] for `Q` adjacent query panels (`Q · NR` queries: panel `k` at
/// `b + k · panel_stride`, its coefficients at `query + k · NR`) with `vpdpwssd`: per depth
/// pair one 512-bit load holds the two values of the panel's `MR` rows, and one
/// instruction adds `MR` products of pairs into the i32 accumulators of a query. The i32
/// sums are exact (module documentation), so they equal the AVX2 sums, and the bound is the
/// same lane-wise f32 arithmetic: the output is bitwise the AVX2 tile's.
///
/// # Safety
/// AVX-512 F, BW, VNNI and FMA; `a` 64-byte aligned with `kp · 2 · MR` values, `Q` query
/// panels of `kp · 2 · NR` values, the rest as [`super::avx2::tile`] (`c` for `Q · NR`
/// rows of stride `ldc` and `MR` columns).
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile<const Q: usize>(
    kp: usize,
    mut a: *const i16,
    b: *const i16,
    panel_stride: usize,
    row: &RowCoefs,
    query: *const QueryCoef,
    c: *mut f32,
    ldc: usize,
) {
    const {
        assert!(
            MR == 16,
            "one 512-bit register holds the 16 rows of a panel"
        )
    };
    let mut acc = [[_mm512_setzero_si512(); NR]; Q];
    let mut b: [*const i16; Q] = std::array::from_fn(|k| b.add(k * panel_stride));
    for _ in 0..kp {
        let x = _mm512_load_si512(a.cast());
        for (acc, b) in acc.iter_mut().zip(&b) {
            for (j, r) in acc.iter_mut().enumerate() {
                let y = _mm512_set1_epi32(b.add(2 * j).cast::<i32>().read_unaligned());
                *r = _mm512_dpwssd_epi32(*r, x, y);
            }
        }
        a = a.add(2 * MR);
        for b in b.iter_mut() {
            *b = b.add(2 * NR);
        }
    }
    let slack = _mm512_set1_ps(super::avx2::UNDERFLOW_SLACK);
    let step = _mm512_loadu_ps(row.step);
    let norm = _mm512_loadu_ps(row.norm);
    let err = _mm512_loadu_ps(row.err);
    let hat = _mm512_loadu_ps(row.hat);
    for (j, r) in acc.iter().flatten().enumerate() {
        let upper = upper_row(*r, step, norm, err, hat, &*query.add(j), slack);
        _mm512_storeu_ps(c.add(j * ldc), upper);
    }
}

/// The bounds of one query against 16 rows from their exact i32 products `acc` (the
/// formula of [`super::avx2::tile`], lane-wise in the same order, so bitwise its values).
#[inline]
#[target_feature(enable = "avx512f,fma")]
pub(super) unsafe fn upper_row(
    acc: __m512i,
    step: __m512,
    norm: __m512,
    err: __m512,
    hat: __m512,
    q: &QueryCoef,
    slack: __m512,
) -> __m512 {
    let scale = _mm512_mul_ps(step, _mm512_set1_ps(q.step));
    let mut bound = _mm512_fmadd_ps(norm, _mm512_set1_ps(q.norm_rounding), slack);
    bound = _mm512_fmadd_ps(err, _mm512_set1_ps(q.norm_margin), bound);
    bound = _mm512_fmadd_ps(hat, _mm512_set1_ps(q.err_margin), bound);
    _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), scale, bound)
}
