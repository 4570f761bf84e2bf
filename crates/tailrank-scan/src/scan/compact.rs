//! Candidate compaction of the pool pass: the scores of a run above the run's cut, moved to
//! the front of a buffer in order, with their positions when the results list needs them.
//! Portable (a vector compare per chunk of [`CHUNK`], then a branch-free scatter), or, where
//! the CPU has AVX-512 F, one compare and one `vcompressps` per chunk: the same output.

/// Scores per pre-filter chunk; a caller's output buffers hold `run.len() + CHUNK` values so
/// that a chunk is stored whole.
pub(super) const CHUNK: usize = 16;

/// Bit `i` set iff `scores[i] > cut`, for at most [`CHUNK`] scores (branch-free, vectorisable).
#[inline]
fn above_mask(scores: &[f32], cut: f32) -> u32 {
    debug_assert!(scores.len() <= CHUNK);
    if let Ok(c) = <&[f32; CHUNK]>::try_from(scores) {
        let mut m = 0u32;
        for (i, &s) in c.iter().enumerate() {
            m |= u32::from(s > cut) << i;
        }
        m
    } else {
        scores
            .iter()
            .enumerate()
            .fold(0, |m, (i, &s)| m | u32::from(s > cut) << i)
    }
}

/// Write the scores of `run` above `cut` to the front of `out` (and, with `SLOTS`, their
/// positions in `run` to `slot`: only the results list needs them), in order; returns how many.
/// Chunks of [`CHUNK`] scores with none above the cut are skipped after one vector compare;
/// the others are compacted without branches.
#[inline]
pub(super) fn compact_above<const SLOTS: bool>(
    run: &[f32],
    cut: f32,
    out: &mut [f32],
    slot: &mut [u32],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if out.len() >= run.len() + CHUNK
        && (!SLOTS || slot.len() >= run.len() + CHUNK)
        && avx512::available()
    {
        // SAFETY: AVX-512 F checked; the buffers hold a whole chunk past `run.len()`.
        return unsafe { avx512::compact_above::<SLOTS>(run, cut, out, slot) };
    }
    compact_portable::<SLOTS>(run, cut, out, slot)
}

/// [`compact_above`] without intrinsics.
fn compact_portable<const SLOTS: bool>(
    run: &[f32],
    cut: f32,
    out: &mut [f32],
    slot: &mut [u32],
) -> usize {
    assert!(out.len() >= run.len() && (!SLOTS || slot.len() >= run.len()));
    let mut n = 0;
    for (ci, chunk) in run.chunks(CHUNK).enumerate() {
        let mask = above_mask(chunk, cut);
        if mask == 0 {
            continue;
        }
        let base = (ci * CHUNK) as u32;
        for (o, &s) in chunk.iter().enumerate() {
            // n ≤ ci·CHUNK + o < run.len(): in bounds.
            out[n] = s;
            if SLOTS {
                slot[n] = base + o as u32;
            }
            n += ((mask >> o) & 1) as usize;
        }
    }
    n
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::CHUNK;
    use std::arch::x86_64::*;

    pub(super) fn available() -> bool {
        is_x86_feature_detected!("avx512f")
    }

    /// [`super::compact_above`] with one compare and one compress per chunk of 16: the kept
    /// scores (and positions) are compressed into a register and stored whole at the output's
    /// front, the part past the kept ones being overwritten by the next chunk.
    ///
    /// # Safety
    /// AVX-512 F; `out` (and `slot` with `SLOTS`) hold at least `run.len() + CHUNK` values.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn compact_above<const SLOTS: bool>(
        run: &[f32],
        cut: f32,
        out: &mut [f32],
        slot: &mut [u32],
    ) -> usize {
        const { assert!(CHUNK == 16, "one 512-bit register per chunk") };
        debug_assert!(out.len() >= run.len() + CHUNK);
        let cutv = _mm512_set1_ps(cut);
        let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let mut n = 0usize;
        let mut k = 0usize;
        while k < run.len() {
            let valid: __mmask16 = if run.len() - k >= CHUNK {
                0xffff
            } else {
                (1u16 << (run.len() - k)) - 1
            };
            let v = _mm512_maskz_loadu_ps(valid, run.as_ptr().add(k));
            // Ordered compare: a NaN score is never above the cut, as in the portable path.
            let m = _mm512_mask_cmp_ps_mask::<_CMP_GT_OQ>(valid, v, cutv);
            if m != 0 {
                _mm512_storeu_ps(out.as_mut_ptr().add(n), _mm512_maskz_compress_ps(m, v));
                if SLOTS {
                    let at = _mm512_add_epi32(lanes, _mm512_set1_epi32(k as i32));
                    let kept = _mm512_maskz_compress_epi32(m, at);
                    _mm512_storeu_si512(slot.as_mut_ptr().add(n).cast(), kept);
                }
                n += m.count_ones() as usize;
            }
            k += CHUNK;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_paths_keep_the_same_scores_and_slots() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in [0usize, 1, 15, 16, 17, 40, 333] {
            let run: Vec<f32> = (0..len)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if i % 37 == 5 {
                        f32::NAN
                    } else {
                        (x >> 40) as f32 / (1u64 << 24) as f32
                    }
                })
                .collect();
            for cut in [-1.0f32, 0.5, 0.97, 2.0] {
                let (mut a, mut sa) = (vec![0f32; len + CHUNK], vec![0u32; len + CHUNK]);
                let (mut b, mut sb) = (vec![0f32; len + CHUNK], vec![0u32; len + CHUNK]);
                let na = compact_above::<true>(&run, cut, &mut a, &mut sa);
                let nb = compact_portable::<true>(&run, cut, &mut b, &mut sb);
                let want: Vec<u32> = (0..len as u32).filter(|&i| run[i as usize] > cut).collect();
                assert_eq!(
                    (na, &sa[..na]),
                    (want.len(), &want[..]),
                    "len {len} cut {cut}"
                );
                assert_eq!(
                    (nb, &sb[..nb]),
                    (want.len(), &want[..]),
                    "len {len} cut {cut}"
                );
                assert!(a[..na]
                    .iter()
                    .zip(&b[..nb])
                    .all(|(x, y)| x.to_bits() == y.to_bits()));
                assert_eq!(
                    compact_above::<false>(&run, cut, &mut a, &mut []),
                    want.len()
                );
            }
        }
    }
}
