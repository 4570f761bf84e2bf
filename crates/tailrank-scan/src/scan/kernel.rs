//! The scoring kernel of the scan: `S = Q · Bᵀ` for the fixed query matrix `Q` (`nq × D`) and a
//! block `B` of `p` descriptor rows (`p × D`), f32 accumulation, `S` row-major (`q · p + r`).
//!
//! ## Invariant: a score depends only on its two vectors
//!
//! `S[q][r]` is a pure function of query `q`'s values and row `r`'s values: it does not depend on
//! the row's position in the block, on the other rows, nor on zero padding. The scan relies on it
//! so that an exact duplicate of a positive in the pool scores bitwise equal to the positive and
//! does not outrank it (docs/method.md §2), and so that [`ScoreKernel::exact`] can
//! recompute single scores bitwise (the integer [`screen`](super::screen) needs it).
//!
//! ## Backends
//!
//! * **`Avx2Fma`** (x86-64 with AVX2 and FMA, chosen at run time). Each score is the *dot
//!   chain*: eight lanes `aₗ ← fma(x[k], q[k], aₗ)` over `k ≡ ℓ (mod 8)` in increasing `k`
//!   (from `+0`; the last 8 values of a row whose `D` is not a multiple of 8 are read with a
//!   masked load, zeros beyond `D`), then `((a₀+a₄) + (a₂+a₆)) + ((a₁+a₅) + (a₃+a₇))`. The
//!   queries are copied once per scan with rows padded to a multiple of 8 values; the block
//!   is read in place (row-major, any row order through a slot → row map, no packing). A
//!   register-tiled microkernel computes [`TILE_ROWS`] × [`TILE_QUERIES`] scores with 12 ymm
//!   accumulators over a group of queries that stays in L2 while the rows of a tile sit in L1.
//!   [`ScoreKernel::exact`] computes single scores with the same chain, four pairs at a time.
//! * **`Gemm`** (everywhere else, or when `ScanConfig::backend` asks for it): one call of the `gemm` crate
//!   of the fixed shape `nq × p × D`; `gemm` picks its blocking from the shape alone, so a score
//!   does not depend on its row's position either. No single-score path and no screen.
//!
//! Within one scan every score (positives, core, pool) goes through the same kernel object.

/// Rows per microkernel tile.
pub const TILE_ROWS: usize = 3;
/// Queries per microkernel tile.
pub const TILE_QUERIES: usize = 4;
/// Block rows on `Avx2Fma` are a multiple of this (the row panels of the integer screen).
pub const ROW_ALIGN: usize = 16;
/// Pairs computed together by [`ScoreKernel::exact`].
const PAIR_LANES: usize = 4;
/// Bytes of padded queries per group: they stay in L2 while the row tiles pass.
const QUERY_GROUP_BYTES: usize = 192 * 1024;

/// Which implementation computes the scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Hand-written AVX2 + FMA microkernel reading the block in place (x86-64 only).
    Avx2Fma,
    /// The `gemm` crate, one call per block.
    Gemm,
}

impl Backend {
    /// The fastest backend this CPU supports.
    pub fn detect() -> Backend {
        if avx2_fma_available() {
            Backend::Avx2Fma
        } else {
            Backend::Gemm
        }
    }
}

fn avx2_fma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// 16 floats on a 64-byte boundary: the unit of [`AlignedBuf`] (the padded query copy), so
/// that every aligned ymm load stays within one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; 16]);

/// A zeroed, 64-byte aligned f32 buffer of at least `len` values.
#[derive(Clone, Default)]
pub struct AlignedBuf(Vec<Line>);

impl AlignedBuf {
    fn zeroed(len: usize) -> Self {
        AlignedBuf(vec![Line([0.0; 16]); len.div_ceil(16)])
    }

    fn as_slice(&self) -> &[f32] {
        // SAFETY: `Line` is `repr(C)` over `[f32; 16]` with no padding (64 bytes), so the lines
        // are a contiguous array of `16 · len` f32.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<f32>(), self.0.len() * 16) }
    }

    fn as_mut_slice(&mut self) -> &mut [f32] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow unique.
        unsafe {
            std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<f32>(), self.0.len() * 16)
        }
    }
}

/// Per-worker scratch space of [`ScoreKernel::scores`]: the offset of each slot's row in the
/// block (`Avx2Fma`), or the reordered block (`Gemm`).
#[derive(Default)]
pub struct Scratch {
    row_offsets: Vec<usize>,
    reordered: Vec<f32>,
}

/// The scoring kernel of one scan (see the module documentation).
pub struct ScoreKernel {
    backend: Backend,
    nq: usize,
    d: usize,
    /// `d` rounded up to a multiple of 8 (`Avx2Fma` query stride).
    dpad: usize,
    p: usize,
    /// `Avx2Fma`: queries `out_rows() × dpad` row-major, zero padded. `Gemm`: queries
    /// transposed, `D × nq` row-major.
    queries: AlignedBuf,
}

impl ScoreKernel {
    /// A kernel for `nq` queries (`queries`: `nq × d` row-major) and blocks of `p` rows on the
    /// given backend. With `Avx2Fma`, `p` is rounded up to a multiple of [`ROW_ALIGN`].
    pub fn new(queries: &[f32], nq: usize, d: usize, p: usize, backend: Backend) -> Self {
        assert_eq!(queries.len(), nq * d, "query matrix is not nq × d");
        let backend = if backend == Backend::Avx2Fma && !avx2_fma_available() {
            Backend::Gemm
        } else {
            backend
        };
        let p = match backend {
            Backend::Avx2Fma => p.max(1).next_multiple_of(ROW_ALIGN),
            Backend::Gemm => p.max(1),
        };
        let dpad = d.next_multiple_of(8);
        let mut k = ScoreKernel {
            backend,
            nq,
            d,
            dpad,
            p,
            queries: AlignedBuf::default(),
        };
        match backend {
            Backend::Avx2Fma => {
                k.queries = AlignedBuf::zeroed(k.out_rows() * dpad);
                let dst = k.queries.as_mut_slice();
                for q in 0..nq {
                    dst[q * dpad..q * dpad + d].copy_from_slice(&queries[q * d..(q + 1) * d]);
                }
            }
            Backend::Gemm => {
                k.queries = AlignedBuf::zeroed(nq * d);
                let dst = k.queries.as_mut_slice();
                for q in 0..nq {
                    for kk in 0..d {
                        dst[kk * nq + q] = queries[q * d + kk];
                    }
                }
            }
        }
        k
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Rows per block (`p`): the stride of the score matrix.
    pub fn block_rows(&self) -> usize {
        self.p
    }

    /// Rows of the score matrix: `nq`, padded to a multiple of [`TILE_QUERIES`] on `Avx2Fma`
    /// (the padding rows hold scores of zero queries and are to be ignored).
    pub fn out_rows(&self) -> usize {
        match self.backend {
            Backend::Avx2Fma => self.nq.next_multiple_of(TILE_QUERIES),
            Backend::Gemm => self.nq,
        }
    }

    /// Length of the score buffer `out` of [`scores`](Self::scores): `out_rows() · p`.
    pub fn out_len(&self) -> usize {
        self.out_rows() * self.p
    }

    /// Exact single scores, bitwise those of [`scores`](Self::scores):
    /// `out[i] = ⟨query qᵢ, block row rᵢ⟩` for `pairs[i] = (qᵢ, rᵢ)` (`block` `p × D`
    /// row-major). `None` on the `Gemm` backend, whose order of summation is not known.
    pub fn exact(&self, block: &[f32], pairs: &[(u32, u32)], out: &mut [f32]) -> Option<()> {
        if self.backend != Backend::Avx2Fma {
            return None;
        }
        let d = self.d;
        assert_eq!(out.len(), pairs.len(), "one output per pair");
        assert!(
            pairs
                .iter()
                .all(|&(q, r)| (q as usize) < self.nq && (r as usize + 1) * d <= block.len()),
            "pair outside the queries or the block"
        );
        #[cfg(target_arch = "x86_64")]
        {
            let qs = self.queries.as_slice().as_ptr();
            for (ch, o) in pairs.chunks(PAIR_LANES).zip(out.chunks_mut(PAIR_LANES)) {
                // Unused lanes repeat the first pair.
                let at = |i: usize| ch[i.min(ch.len() - 1)];
                // SAFETY: AVX2 + FMA (backend); pairs were checked to lie in the queries and
                // the block; queries rows hold `dpad` values.
                let s = unsafe {
                    let q: [*const f32; PAIR_LANES] =
                        std::array::from_fn(|i| qs.add(at(i).0 as usize * self.dpad));
                    let r: [*const f32; PAIR_LANES] =
                        std::array::from_fn(|i| block.as_ptr().add(at(i).1 as usize * d));
                    avx2::pairs(d, q, r)
                };
                o.copy_from_slice(&s[..ch.len()]);
            }
        }
        Some(())
    }

    /// `out[q · p + r] = ⟨query q, block row r⟩` for `block` = `p × D` row-major (rows past the
    /// real ones are zero-filled by the caller) and `out.len() == out_len()`.
    pub fn scores(&self, block: &[f32], scratch: &mut Scratch, out: &mut [f32]) {
        self.scores_in_order(block, None, scratch, out)
    }

    /// Like [`scores`](Self::scores) with the block's rows taken in the order `order`
    /// (a permutation of `0..p`): `out[q · p + s] = ⟨query q, block row order[s]⟩`. The
    /// reordering is a slot → row map read by the microkernel, so it is free on `Avx2Fma`.
    pub fn scores_in_order(
        &self,
        block: &[f32],
        order: Option<&[u32]>,
        scratch: &mut Scratch,
        out: &mut [f32],
    ) {
        let (p, d) = (self.p, self.d);
        assert!(block.len() == p * d, "block is not p × d");
        assert!(
            out.len() == self.out_len(),
            "score buffer has the wrong length"
        );
        if let Some(o) = order {
            assert!(o.len() == p, "row order is not a permutation of the block");
        }
        if d == 0 {
            out.fill(0.0);
            return;
        }
        let row_at = |s: usize| order.map_or(s, |o| o[s] as usize);
        match self.backend {
            Backend::Avx2Fma => {
                #[cfg(target_arch = "x86_64")]
                {
                    let offsets = &mut scratch.row_offsets;
                    offsets.clear();
                    offsets.extend((0..p).map(|s| row_at(s) * d));
                    assert!(offsets.iter().all(|&o| o + d <= block.len()));
                    // SAFETY: `new` chose `Avx2Fma` only after checking the CPU features; every
                    // offset addresses `d` floats of `block`; `out` holds `out_rows · p`.
                    unsafe { self.avx2_scores(block, offsets, out) }
                }
                #[cfg(not(target_arch = "x86_64"))]
                unreachable!("Avx2Fma is only selected on x86-64")
            }
            Backend::Gemm => match order {
                None => self.gemm_scores(block, out),
                Some(_) => {
                    let mut re = std::mem::take(&mut scratch.reordered);
                    re.resize(p * d, 0.0);
                    for (s, dst) in re.chunks_exact_mut(d).enumerate() {
                        let r = row_at(s);
                        dst.copy_from_slice(&block[r * d..(r + 1) * d]);
                    }
                    self.gemm_scores(&re, out);
                    scratch.reordered = re;
                }
            },
        }
    }

    /// Loop nest: query group → row tile → query tile.
    ///
    /// # Safety
    /// AVX2 + FMA; `block[offsets[s]..]` holds the `d` values of slot `s`; `out` holds `out_rows · p`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2_scores(&self, block: &[f32], offsets: &[usize], out: &mut [f32]) {
        let (p, d, dpad) = (self.p, self.d, self.dpad);
        let nq_pad = self.out_rows();
        debug_assert!(offsets.len() == p && out.len() >= nq_pad * p);
        let row = |s: usize| block.as_ptr().add(offsets[s.min(p - 1)]);
        let qs = self.queries.as_slice().as_ptr();
        let group = (QUERY_GROUP_BYTES / (4 * dpad) / TILE_QUERIES * TILE_QUERIES)
            .clamp(TILE_QUERIES, nq_pad);
        let out = out.as_mut_ptr();
        let mut g0 = 0;
        while g0 < nq_pad {
            let g1 = (g0 + group).min(nq_pad);
            let mut s = 0;
            while s < p {
                let r = [row(s), row(s + 1), row(s + 2)];
                let mut q = g0;
                while q < g1 {
                    let c = out.add(q * p + s);
                    let qp = qs.add(q * dpad);
                    match p - s {
                        1 => avx2::tile::<1>(d, dpad, r, qp, c, p),
                        2 => avx2::tile::<2>(d, dpad, r, qp, c, p),
                        _ => avx2::tile::<3>(d, dpad, r, qp, c, p),
                    }
                    q += TILE_QUERIES;
                }
                s += TILE_ROWS;
            }
            g0 = g1;
        }
    }

    fn gemm_scores(&self, block: &[f32], out: &mut [f32]) {
        let (m, n, k) = (self.nq, self.p, self.d);
        // SAFETY: `queries` holds the k×m row-major (= m×k column-major) transposed queries,
        // `block` the n×k row-major (= k×n column-major) rows, `out` the m×n row-major result;
        // lengths were checked by the caller and `out` aliases neither input.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                out.as_mut_ptr(),
                1,
                n as isize,
                false,
                self.queries.as_slice().as_ptr(),
                m as isize,
                1,
                block.as_ptr(),
                k as isize,
                1,
                0.0f32,
                1.0f32,
                false,
                false,
                false,
                gemm::Parallelism::None,
            )
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{PAIR_LANES, TILE_QUERIES, TILE_ROWS};
    use std::arch::x86_64::*;

    /// Mask of the valid lanes of the last 8 values of a row of `d` values.
    #[inline(always)]
    unsafe fn tail_mask(d: usize) -> __m256i {
        let n = (d % 8) as i32;
        _mm256_cmpgt_epi32(
            _mm256_set1_epi32(n),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        )
    }

    /// Values `k … k+7` of a row of `d` values: a plain load, or a masked one for the last
    /// values of a row whose `d` is not a multiple of 8 (zeros beyond `d`).
    #[inline(always)]
    unsafe fn row8(r: *const f32, k: usize, d: usize, mask: __m256i) -> __m256 {
        if k + 8 <= d {
            _mm256_loadu_ps(r.add(k))
        } else {
            _mm256_maskload_ps(r.add(k), mask)
        }
    }

    /// The fixed reduction of the dot chain: `((a₀+a₄) + (a₂+a₆)) + ((a₁+a₅) + (a₃+a₇))`.
    #[inline(always)]
    unsafe fn reduce(a: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps::<1>(a));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
    }

    /// One tile: `c[j · ldc + i] = ⟨rows[i], q_j⟩` for `i < R`, `j < TILE_QUERIES`, query `j`
    /// at `q + j · dpad` (zero padded to `dpad`), each score the dot chain.
    ///
    /// # Safety
    /// AVX2 + FMA; `rows[i]` address `d` floats, `q` `TILE_QUERIES · dpad`, `c` `TILE_QUERIES`
    /// rows of stride `ldc` and `R` columns.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::needless_range_loop)] // plain indices keep the 12 accumulators in registers
    pub(super) unsafe fn tile<const R: usize>(
        d: usize,
        dpad: usize,
        rows: [*const f32; TILE_ROWS],
        q: *const f32,
        c: *mut f32,
        ldc: usize,
    ) {
        let mask = tail_mask(d);
        let mut acc = [[_mm256_setzero_ps(); TILE_QUERIES]; R];
        let mut k = 0;
        while k < d {
            let x: [__m256; R] = std::array::from_fn(|i| row8(rows[i], k, d, mask));
            for j in 0..TILE_QUERIES {
                let qv = _mm256_load_ps(q.add(j * dpad + k));
                for i in 0..R {
                    acc[i][j] = _mm256_fmadd_ps(x[i], qv, acc[i][j]);
                }
            }
            k += 8;
        }
        for (i, row) in acc.iter().enumerate() {
            for (j, a) in row.iter().enumerate() {
                *c.add(j * ldc + i) = reduce(*a);
            }
        }
    }

    /// [`PAIR_LANES`] single scores `⟨r[i], q[i]⟩` (queries zero padded to a multiple of 8),
    /// each the dot chain of [`tile`]; the chains run interleaved, hiding each other's latency.
    ///
    /// # Safety
    /// AVX2 + FMA; `r[i]` address `d` floats, `q[i]` `d` rounded up to 8.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn pairs(
        d: usize,
        q: [*const f32; PAIR_LANES],
        r: [*const f32; PAIR_LANES],
    ) -> [f32; PAIR_LANES] {
        let mask = tail_mask(d);
        let mut acc = [_mm256_setzero_ps(); PAIR_LANES];
        let mut k = 0;
        while k < d {
            for i in 0..PAIR_LANES {
                let x = row8(r[i], k, d, mask);
                acc[i] = _mm256_fmadd_ps(x, _mm256_loadu_ps(q[i].add(k)), acc[i]);
            }
            k += 8;
        }
        acc.map(|a| reduce(a))
    }
}

/// Deterministic pseudo-random values in [-1, 1) (tests of the kernel and the screen).
#[cfg(test)]
pub(crate) fn test_values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) use super::test_values as values;

    fn check_against_f64(backend: Backend, nq: usize, d: usize, p: usize, n: usize) {
        let q = values(nq * d, 1 + nq as u64);
        let k = ScoreKernel::new(&q, nq, d, p, backend);
        let p = k.block_rows();
        let mut block = values(p * d, 7 + d as u64);
        block[n * d..].fill(0.0);
        let mut out = vec![f32::NAN; k.out_len()];
        k.scores(&block, &mut Scratch::default(), &mut out);
        for qi in 0..nq {
            for r in 0..p {
                let exact: f64 = (0..d)
                    .map(|kk| q[qi * d + kk] as f64 * block[r * d + kk] as f64)
                    .sum();
                let got = out[qi * p + r] as f64;
                let tol = 1e-5 * d as f64;
                assert!(
                    (got - exact).abs() <= tol,
                    "{backend:?} nq={nq} d={d} p={p}: score[{qi}][{r}] = {got}, f64 {exact}"
                );
            }
        }
    }

    #[test]
    fn scores_match_f64_reference_on_awkward_shapes() {
        for backend in [Backend::Avx2Fma, Backend::Gemm] {
            for &(nq, d, p, n) in &[
                (1, 1, 1, 1),
                (5, 3, 16, 7),
                (7, 33, 40, 40),
                (13, 768, 32, 20),
                (6, 1000, 16, 16),
                (125, 64, 48, 33),
            ] {
                check_against_f64(backend, nq, d, p, n);
            }
        }
    }

    #[test]
    fn score_does_not_depend_on_row_position_or_neighbours() {
        for backend in [Backend::Avx2Fma, Backend::Gemm] {
            for &d in &[17usize, 768, 1537] {
                let nq = 9;
                let q = values(nq * d, 3);
                let k = ScoreKernel::new(&q, nq, d, 64, backend);
                let p = k.block_rows();
                let row = values(d, 11);
                let mut scratch = Scratch::default();
                let mut reference: Option<Vec<f32>> = None;
                for pos in [0, 5, 15, 16, p - 1] {
                    let mut block = values(p * d, pos as u64 + 100);
                    block[pos * d..(pos + 1) * d].copy_from_slice(&row);
                    let mut out = vec![0f32; k.out_len()];
                    k.scores(&block, &mut scratch, &mut out);
                    let col: Vec<f32> = (0..nq).map(|qi| out[qi * p + pos]).collect();
                    match &reference {
                        None => reference = Some(col),
                        Some(r) => assert!(
                            r.iter().zip(&col).all(|(a, b)| a.to_bits() == b.to_bits()),
                            "{backend:?} d={d}: row at position {pos} scored differently"
                        ),
                    }
                }
            }
        }
    }

    #[test]
    fn reordered_rows_give_the_same_scores_in_the_new_order() {
        for backend in [Backend::Avx2Fma, Backend::Gemm] {
            let (nq, d) = (11, 70);
            let q = values(nq * d, 5);
            let k = ScoreKernel::new(&q, nq, d, 32, backend);
            let p = k.block_rows();
            let block = values(p * d, 9);
            let order: Vec<u32> = (0..p as u32).rev().collect();
            let mut scratch = Scratch::default();
            let (mut plain, mut reordered) = (vec![0f32; k.out_len()], vec![0f32; k.out_len()]);
            k.scores(&block, &mut scratch, &mut plain);
            k.scores_in_order(&block, Some(&order), &mut scratch, &mut reordered);
            for qi in 0..nq {
                for (s, &r) in order.iter().enumerate() {
                    assert_eq!(
                        reordered[qi * p + s].to_bits(),
                        plain[qi * p + r as usize].to_bits(),
                        "{backend:?}: query {qi}, slot {s}"
                    );
                }
            }
        }
    }

    #[test]
    fn exact_scores_are_bitwise_the_block_scores() {
        for &d in &[1usize, 7, 8, 17, 768, 1537] {
            let (nq, p) = (9, 48);
            let q = values(nq * d, 3 + d as u64);
            let block = values(p * d, 4 + d as u64);
            let k = ScoreKernel::new(&q, nq, d, p, Backend::Avx2Fma);
            if k.backend() != Backend::Avx2Fma {
                assert!(k.exact(&block, &[(0, 0)], &mut [0.0]).is_none());
                return;
            }
            let mut scores = vec![0f32; k.out_len()];
            k.scores(&block, &mut Scratch::default(), &mut scores);
            // All queries in one call, runs of 1 … nq pairs of one query, rows repeated.
            let pairs: Vec<(u32, u32)> = (0..nq as u32)
                .flat_map(|qi| (0..=qi).map(move |i| (qi, (qi * 5 + i * 7) % p as u32)))
                .collect();
            let mut out = vec![0f32; pairs.len()];
            k.exact(&block, &pairs, &mut out).unwrap();
            for (&(qi, r), &s) in pairs.iter().zip(&out) {
                let want = scores[qi as usize * p + r as usize];
                assert_eq!(s.to_bits(), want.to_bits(), "d={d} query {qi} row {r}");
            }
        }
    }

    #[test]
    fn block_rows_are_rounded_up_on_the_avx2_kernel() {
        let k = ScoreKernel::new(&[0.0; 4], 1, 4, 100, Backend::Avx2Fma);
        if k.backend() == Backend::Avx2Fma {
            assert_eq!(k.block_rows(), 112);
            assert_eq!(k.out_rows(), TILE_QUERIES);
        } else {
            assert_eq!(k.block_rows(), 100);
        }
    }
}
