//! The scoring kernel of the scan: `S = Q · Bᵀ` for the fixed query matrix `Q` (`nq × D`) and a
//! block `B` of `p` descriptor rows (`p × D`), f32 accumulation, `S` row-major (`q · p + r`).
//!
//! ## Invariant: a score depends only on its two vectors
//!
//! `S[q][r]` is a pure function of query `q`'s values and row `r`'s values: it does not depend on
//! the row's position in the block, on the other rows, nor on zero padding. The scan relies on it
//! so that an exact duplicate of a positive in the pool scores bitwise equal to the positive and
//! does not outrank it (SPEC: ties do not outrank).
//!
//! ## Backends
//!
//! * **`Avx2Fma`** (x86-64 with AVX2 and FMA, chosen at run time). The queries are packed once
//!   per scan into panels of [`NR`] queries, the block is packed per call into panels of [`MR`]
//!   rows, and a register-tiled microkernel computes `MR × NR` scores with 12 ymm accumulators
//!   (one FMA per lane and depth step). Each score is the chain
//!   `acc ← fma(b[k], q[k], acc)` for `k = 0, 1, …, D−1` in order, in one lane: that gives the
//!   invariant above. The depth is cut into chunks of at most [`KC_MAX`] (the accumulators go
//!   through memory between chunks, which does not change the chain), queries into groups of
//!   [`QUERY_PANELS_PER_GROUP`] panels that stay in L2 while a row panel sits in L1.
//!   Packing the queries once is what a general-purpose GEMM cannot do, and it is where the
//!   speed over a BLAS call per block comes from (`docs/performance.md`).
//! * **`Gemm`** (everywhere else, or with `TAILRANK_KERNEL=gemm`): one call of the `gemm` crate
//!   of the fixed shape `nq × p × D`; `gemm` picks its blocking from the shape alone, so a score
//!   does not depend on its row's position either.
//!
//! Within one scan every score (positives, core, pool) goes through the same kernel object.

/// Rows of the block per microkernel tile (two ymm registers of 8 lanes).
pub const MR: usize = 16;
/// Queries per microkernel tile (broadcast values).
pub const NR: usize = 6;
/// Largest depth chunk. 768 keeps a 16-row panel (48 KiB) streaming from L2 and a 6-query
/// panel (18 KiB) in L1; measured on Zen 3 (`docs/performance.md`).
pub const KC_MAX: usize = 768;
/// Query panels per group (120 queries): a group's packed queries stay in L2 across row panels.
pub const QUERY_PANELS_PER_GROUP: usize = 20;

/// Which implementation computes the scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Hand-written AVX2 + FMA microkernel over packed panels (x86-64 only).
    Avx2Fma,
    /// The `gemm` crate, one call per block.
    Gemm,
}

impl Backend {
    /// The fastest backend this CPU supports, unless `TAILRANK_KERNEL=gemm` asks for the
    /// portable one.
    pub fn detect() -> Backend {
        if std::env::var("TAILRANK_KERNEL").is_ok_and(|v| v.eq_ignore_ascii_case("gemm")) {
            return Backend::Gemm;
        }
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

/// 16 floats on a 64-byte boundary: the unit of the packed buffers, so that every ymm load of
/// a panel is aligned and never straddles a cache line.
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

/// Per-worker scratch space of [`ScoreKernel::scores`] (the packed or reordered block).
#[derive(Default)]
pub struct Scratch {
    packed: AlignedBuf,
    reordered: Vec<f32>,
}

/// The scoring kernel of one scan (see the module documentation).
pub struct ScoreKernel {
    backend: Backend,
    nq: usize,
    d: usize,
    p: usize,
    /// Depth chunks `(k0, kc)`, covering `0..d` in order.
    chunks: Vec<(usize, usize)>,
    /// `Avx2Fma`: queries packed per chunk as `[panel][k][NR]` (`nq` padded to a multiple of
    /// `NR` with zero queries). `Gemm`: queries transposed, `D × nq` row-major.
    queries: AlignedBuf,
}

impl ScoreKernel {
    /// A kernel for `nq` queries (`queries`: `nq × d` row-major) and blocks of `p` rows on the
    /// given backend. With `Avx2Fma`, `p` is rounded up to a multiple of [`MR`].
    pub fn new(queries: &[f32], nq: usize, d: usize, p: usize, backend: Backend) -> Self {
        assert_eq!(queries.len(), nq * d, "query matrix is not nq × d");
        let backend = if backend == Backend::Avx2Fma && !avx2_fma_available() {
            Backend::Gemm
        } else {
            backend
        };
        let p = match backend {
            Backend::Avx2Fma => p.max(1).next_multiple_of(MR),
            Backend::Gemm => p.max(1),
        };
        let nchunks = d.div_ceil(KC_MAX).max(1);
        let kc = d.div_ceil(nchunks).max(1);
        let chunks: Vec<(usize, usize)> =
            (0..d).step_by(kc).map(|k0| (k0, kc.min(d - k0))).collect();
        let mut k = ScoreKernel {
            backend,
            nq,
            d,
            p,
            chunks,
            queries: AlignedBuf::default(),
        };
        match backend {
            Backend::Avx2Fma => {
                let nq_pad = k.out_rows();
                k.queries = AlignedBuf::zeroed(nq_pad * d);
                let dst = k.queries.as_mut_slice();
                for &(k0, kc) in &k.chunks {
                    let base = nq_pad * k0;
                    for q in 0..nq {
                        let (panel, j) = (q / NR, q % NR);
                        let at = base + panel * NR * kc + j;
                        for kk in 0..kc {
                            dst[at + kk * NR] = queries[q * d + k0 + kk];
                        }
                    }
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

    /// Rows of the score matrix: `nq`, padded to a multiple of [`NR`] on `Avx2Fma` (the padding
    /// rows hold scores of zero queries and are to be ignored).
    pub fn out_rows(&self) -> usize {
        match self.backend {
            Backend::Avx2Fma => self.nq.next_multiple_of(NR),
            Backend::Gemm => self.nq,
        }
    }

    /// Length of the score buffer `out` of [`scores`](Self::scores): `out_rows() · p`.
    pub fn out_len(&self) -> usize {
        self.out_rows() * self.p
    }

    /// `out[q · p + r] = ⟨query q, block row r⟩` for `block` = `p × D` row-major (rows past the
    /// real ones are zero-filled by the caller) and `out.len() == out_len()`.
    pub fn scores(&self, block: &[f32], scratch: &mut Scratch, out: &mut [f32]) {
        self.scores_in_order(block, None, scratch, out)
    }

    /// Like [`scores`](Self::scores) with the block's rows taken in the order `order`
    /// (a permutation of `0..p`): `out[q · p + s] = ⟨query q, block row order[s]⟩`. The
    /// reordering rides on the packing copy, so it is free on `Avx2Fma`.
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
                    if scratch.packed.0.len() * 16 < p * d {
                        scratch.packed = AlignedBuf::zeroed(p * d);
                    }
                    self.pack_block(block, row_at, scratch.packed.as_mut_slice());
                    // SAFETY: `new` chose `Avx2Fma` only after checking the CPU features.
                    unsafe { self.avx2_scores(scratch.packed.as_slice(), out) }
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

    /// Pack `block` (`p × D` row-major), slot `s` taking block row `row_at(s)`, per chunk as
    /// `[row panel][k][MR]`.
    fn pack_block(&self, block: &[f32], row_at: impl Fn(usize) -> usize, packed: &mut [f32]) {
        let (p, d) = (self.p, self.d);
        for &(k0, kc) in &self.chunks {
            let base = p * k0;
            for panel in 0..p / MR {
                let dst = &mut packed[base + panel * MR * kc..base + (panel + 1) * MR * kc];
                for i in 0..MR {
                    let r = row_at(panel * MR + i);
                    let row = &block[r * d + k0..r * d + k0 + kc];
                    for (kk, &v) in row.iter().enumerate() {
                        dst[kk * MR + i] = v;
                    }
                }
            }
        }
    }

    /// Loop nest over packed operands: chunk → query group → row panel → query panel.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2_scores(&self, packed: &[f32], out: &mut [f32]) {
        let p = self.p;
        let qpanels = self.out_rows() / NR;
        let nq_pad = self.out_rows();
        debug_assert!(packed.len() >= p * self.d && out.len() >= nq_pad * p);
        for (ci, &(k0, kc)) in self.chunks.iter().enumerate() {
            let a_base = packed.as_ptr().add(p * k0);
            let b_base = self.queries.as_slice().as_ptr().add(nq_pad * k0);
            let mut g0 = 0;
            while g0 < qpanels {
                let g1 = (g0 + QUERY_PANELS_PER_GROUP).min(qpanels);
                for rp in 0..p / MR {
                    let a = a_base.add(rp * MR * kc);
                    for qp in g0..g1 {
                        let b = b_base.add(qp * NR * kc);
                        let c = out.as_mut_ptr().add(qp * NR * p + rp * MR);
                        avx2::tile(kc, a, b, c, p, ci > 0);
                    }
                }
                g0 = g1;
            }
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
    use super::{MR, NR};
    use std::arch::x86_64::*;

    /// One `MR × NR` tile: `c[j · ldc + i] (+)= Σ_k a[k · MR + i] · b[k · NR + j]`, the sum
    /// accumulated in order of `k` with one FMA per step (continuing from `c` when
    /// `accumulate`).
    ///
    /// # Safety
    /// AVX2 + FMA; `a` holds `kc · MR` floats (32-byte aligned rows of 16), `b` holds
    /// `kc · NR` floats, `c` is valid for `NR` rows of stride `ldc` and `MR` columns.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn tile(
        kc: usize,
        mut a: *const f32,
        mut b: *const f32,
        c: *mut f32,
        ldc: usize,
        accumulate: bool,
    ) {
        let mut acc = [[_mm256_setzero_ps(); 2]; NR];
        if accumulate {
            for (j, row) in acc.iter_mut().enumerate() {
                row[0] = _mm256_loadu_ps(c.add(j * ldc));
                row[1] = _mm256_loadu_ps(c.add(j * ldc + 8));
            }
        }
        for _ in 0..kc {
            let a0 = _mm256_load_ps(a);
            let a1 = _mm256_load_ps(a.add(8));
            for (j, row) in acc.iter_mut().enumerate() {
                let x = _mm256_broadcast_ss(&*b.add(j));
                row[0] = _mm256_fmadd_ps(a0, x, row[0]);
                row[1] = _mm256_fmadd_ps(a1, x, row[1]);
            }
            a = a.add(MR);
            b = b.add(NR);
        }
        for (j, row) in acc.iter().enumerate() {
            _mm256_storeu_ps(c.add(j * ldc), row[0]);
            _mm256_storeu_ps(c.add(j * ldc + 8), row[1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random values in [-1, 1).
    fn values(n: usize, seed: u64) -> Vec<f32> {
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
    fn block_rows_are_rounded_up_for_the_packed_kernel() {
        let k = ScoreKernel::new(&[0.0; 4], 1, 4, 100, Backend::Avx2Fma);
        if k.backend() == Backend::Avx2Fma {
            assert_eq!(k.block_rows(), 112);
            assert_eq!(k.out_rows(), NR);
        } else {
            assert_eq!(k.block_rows(), 100);
        }
    }
}
