//! Screening pass of the scan: an integer product that bounds every score from above, so that
//! the exact f32 score is computed only for the (query, row) pairs that can matter.
//!
//! ## The bound
//!
//! Every vector `v` (query or row) is quantised to 16-bit integers with its own step:
//! `v = δ·v̂ + e`, `v̂ₖ = round(vₖ/δ)`, `δ = max(max|vₖ| / 32767, ‖v‖ / 40000)` (1 for the zero
//! vector). The integer product `q̂·x̂` is exact in i32: `|Σ q̂ₖx̂ₖ| ≤ ‖q̂‖‖x̂‖ ≤ (40000 + ½√D)² <
//! 2³¹` for `D ≤` [`MAX_DIM`], partial sums included. With `ŝ = δ_q δ_x (q̂·x̂)`,
//!
//! ```text
//! q·x − ŝ = q·e_x + e_q·(δ_x x̂)   ⇒   |q·x − ŝ| ≤ ‖q‖‖e_x‖ + ‖e_q‖‖δ_x x̂‖      (Cauchy–Schwarz)
//! ```
//!
//! and the kernel's f32 score (eight sequential chains of `D/8` fused multiply-adds and three
//! additions) differs from `q·x` by at most `γ_{D/8+3} Σ|qₖxₖ| ≤ γ_D ‖q‖‖x‖` (`γ_n ≈ n·2⁻²⁴`).
//! The screen writes
//!
//! ```text
//! upper = ŝ + (1 + 2⁻⁸)(‖q‖‖e_x‖ + ‖e_q‖‖δ_x x̂‖) + 1.01 (D + 64) 2⁻²⁴ ‖q‖‖x‖ + 2⁻¹⁰⁰
//! ```
//!
//! evaluated in f32; the margins cover the rounding of the norms, of `ŝ` and of the sum (2⁻¹⁰⁰:
//! products in the subnormal range), so `upper ≥` the score
//! [`ScoreKernel`](super::kernel::ScoreKernel) computes, for every pair. With 768-d unit
//! vectors the band `upper − score` is about 5·10⁻⁴ (0.01 standard deviations of a random
//! score).
//!
//! The pairs whose bound passes their cut get their exact score from
//! [`ScoreKernel::exact`](super::kernel::ScoreKernel::exact), bitwise the kernel's.
//!
//! The integer product runs `vpmaddwd` (16 multiply-adds per instruction, with the i32 adds
//! beside it) in a register-tiled microkernel of 16 rows × 6 queries over packed panels (the
//! rows quantised and packed per block, the queries once per scan): 1.3–1.6× the f32
//! kernel's rate on Zen 3 (`docs/reference/performance.md`). Where the CPU has AVX-512 F, BW and VNNI,
//! the same panels go through `vpdpwssd` (32 multiply-adds and their sums per instruction; one
//! 16-row panel against 12 queries, [`avx512::tile`]). Where it also has AMX-INT8 and the OS
//! lends the tile state, four i8 tile products give the i16 ones (16 rows × 16 queries per
//! tile, `amx`). The i32 sums are exact in every case, so the bounds are bitwise the same
//! ([`ScreenIsa`]; `TAILRANK_SCREEN` caps it for benchmarks). AVX2 at least; [`Screen::new`]
//! returns `None` elsewhere, and the scan then scores every pair in f32.

use super::kernel::ROW_ALIGN;

/// Rows per panel of the integer microkernel.
const MR: usize = ROW_ALIGN;
/// Queries per panel of the integer microkernel.
const NR: usize = 6;

/// Largest dimension the screen accepts (the i32 bound above and one depth chunk in L2).
pub const MAX_DIM: usize = 2048;
/// `‖v̂‖` target of the quantisation step (see the module documentation).
const NORM_STEPS: f32 = 40000.0;
/// Bytes of packed queries per group of [`Screen::upper_bounds`]: they stay in L2 while the
/// row panels pass.
const QUERY_GROUP_BYTES: usize = 384 * 1024;
/// Relative margin of the quantisation terms of the bound.
const MARGIN: f32 = 1.0 + 1.0 / 256.0;
/// Adding and subtracting it rounds an f32 of magnitude below 2²² to an integer.
const ROUND_SHIFT: f32 = 12_582_912.0;
/// Largest magnitude of a quantised value.
const MAX_STEP: f32 = 32767.0;

/// Quantisation of one vector: its values are written to `out` (`out.len() ≥ v.len()`, the rest
/// zeroed); returns `(δ, ‖v‖, ‖e‖, ‖δ v̂‖)`. The norms are f32 sums of squares in 8 lanes,
/// rounded up by `1 + (D + 8)·2⁻²⁴` (their relative rounding error is below `γ_D`); `‖e‖` also
/// gains `2⁻²³ ‖δ v̂‖` for the rounding of `eₖ = vₖ − δ v̂ₖ`.
fn quantise(v: &[f32], out: &mut [i16]) -> (f32, f32, f32, f32) {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the CPU supports AVX2 + FMA.
        return unsafe { avx2::quantise(v, out) };
    }
    quantise_scalar(v, out)
}

/// [`quantise`] without SIMD intrinsics (the same values; sums in another order).
fn quantise_scalar(v: &[f32], out: &mut [i16]) -> (f32, f32, f32, f32) {
    let n = v.len();
    if v.iter().all(|x| x.abs() < TINY) {
        return quantise_tiny(v, out);
    }
    let (mut maxabs, mut sq) = ([0f32; 8], [0f32; 8]);
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        for l in 0..8 {
            maxabs[l] = maxabs[l].max(c[l].abs());
            sq[l] += c[l] * c[l];
        }
    }
    for (l, &x) in chunks.remainder().iter().enumerate() {
        maxabs[l] = maxabs[l].max(x.abs());
        sq[l] += x * x;
    }
    let maxabs = maxabs.iter().fold(0f32, |a, &b| a.max(b));
    let margin = 1.0 + (n as f32 + 8.0) * f32::EPSILON / 2.0;
    let norm = sq.iter().sum::<f32>().sqrt() * margin;
    let step = (maxabs / MAX_STEP).max(norm / NORM_STEPS);
    if step == 0.0 || !step.is_finite() {
        out.fill(0);
        return (1.0, 0.0, 0.0, 0.0);
    }
    let inv = 1.0 / step;
    let (mut err, mut hat) = ([0f32; 8], [0f32; 8]);
    let mut quant = |x: f32, o: &mut i16, l: usize| {
        // Round to nearest (ties to even) by the 1.5·2²³ shift: exact for |x·inv| ≤ 2²².
        let q = ((x * inv + ROUND_SHIFT) - ROUND_SHIFT).clamp(-MAX_STEP, MAX_STEP);
        *o = q as i16;
        let h = step * q;
        let e = x - h;
        err[l] += e * e;
        hat[l] += h * h;
    };
    let split = n - n % 8;
    for (c, o) in v[..split].chunks_exact(8).zip(out.chunks_exact_mut(8)) {
        for l in 0..8 {
            quant(c[l], &mut o[l], l);
        }
    }
    for (l, (&x, o)) in v[split..].iter().zip(&mut out[split..n]).enumerate() {
        quant(x, o, l);
    }
    out[n..].fill(0);
    // Squares below the smallest normal f32 may have been lost: at most n · 2⁻¹²⁶ in all.
    let lost = n as f32 * f32::MIN_POSITIVE;
    let hat = (hat.iter().sum::<f32>() + lost).sqrt() * margin;
    let err = (err.iter().sum::<f32>() + lost).sqrt() * margin + hat * f32::EPSILON;
    (step, norm, err, hat)
}

/// Values below this magnitude everywhere: [`quantise_tiny`] (f64 sums, no underflow).
const TINY: f32 = 1.0 / (1u64 << 30) as f32;

/// [`quantise`] for a vector of tiny values, its sums in f64.
fn quantise_tiny(v: &[f32], out: &mut [i16]) -> (f32, f32, f32, f32) {
    let (mut maxabs, mut sq) = (0f32, 0f64);
    for &x in v {
        maxabs = maxabs.max(x.abs());
        sq += f64::from(x) * f64::from(x);
    }
    let norm = sq.sqrt() as f32;
    let step = (maxabs / MAX_STEP).max(norm / NORM_STEPS);
    if step == 0.0 {
        out.fill(0);
        return (1.0, 0.0, 0.0, 0.0);
    }
    let (mut err, mut hat) = (0f64, 0f64);
    for (o, &x) in out.iter_mut().zip(v) {
        let q = (f64::from(x) / f64::from(step))
            .round()
            .clamp(-32767.0, 32767.0);
        *o = q as i16;
        let h = f64::from(step) * q;
        err += (f64::from(x) - h).powi(2);
        hat += h * h;
    }
    out[v.len()..].fill(0);
    let up = |s: f64| (s.sqrt() * (1.0 + 1e-6)) as f32;
    (step, up(sq), up(err), up(hat))
}

/// Quantise the rows `order[s]` of `block` (`D = d` values each) one at a time into `row`,
/// their bound coefficients into slot `s` of `coefs`, and hand each to `put(s, row)`.
fn quantise_rows(
    block: &[f32],
    d: usize,
    order: &[u32],
    row: &mut [i16],
    coefs: &mut Coefs,
    mut put: impl FnMut(usize, &[i16]),
) {
    for (s, &r) in order.iter().enumerate() {
        let r = r as usize;
        coefs.set(s, quantise(&block[r * d..(r + 1) * d], row));
        put(s, row);
    }
}

/// Per-vector coefficients of the bound, in the order of the packed vectors.
#[derive(Default, Clone)]
struct Coefs {
    step: Vec<f32>,
    norm: Vec<f32>,
    err: Vec<f32>,
    hat: Vec<f32>,
}

impl Coefs {
    fn resize(&mut self, n: usize) {
        for v in [&mut self.step, &mut self.norm, &mut self.err, &mut self.hat] {
            v.clear();
            v.resize(n, 0.0);
        }
    }

    fn set(&mut self, i: usize, (step, norm, err, hat): (f32, f32, f32, f32)) {
        self.step[i] = step;
        self.norm[i] = norm;
        self.err[i] = err;
        self.hat[i] = hat;
    }
}

/// Per-worker scratch space of [`Screen::upper_bounds`].
#[derive(Default)]
pub struct ScreenScratch {
    packed: Vec<I16Line>,
    row: Vec<i16>,
    rows: Coefs,
    #[cfg(target_arch = "x86_64")]
    amx_rows: amx::Split,
}

/// Instruction set of the screen's integer product, narrowest first. All give the same i32
/// products and so bitwise the same bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ScreenIsa {
    /// `vpmaddwd` on AVX2: tiles of 16 rows × 6 queries.
    Avx2,
    /// `vpdpwssd` on AVX-512 F, BW and VNNI: one 16-row panel against 12 queries.
    Avx512Vnni,
    /// `tdpb*` on AMX-INT8, the i16 products from four i8 tile products: 16 rows × 16
    /// queries (`amx`).
    AmxInt8,
}

impl ScreenIsa {
    /// The widest this CPU runs (for AMX: and the OS lends its tile state), or `None`
    /// without AVX2 + FMA.
    pub fn detect() -> Option<ScreenIsa> {
        Self::detect_up_to(ScreenIsa::AmxInt8)
    }

    /// The widest up to `max` (AMX's tile state is asked for only when `max` allows AMX).
    pub fn detect_up_to(max: ScreenIsa) -> Option<ScreenIsa> {
        if !avx2_fma() {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        if max >= ScreenIsa::AmxInt8 && amx::available() {
            return Some(ScreenIsa::AmxInt8);
        }
        Some(if max >= ScreenIsa::Avx512Vnni && avx512_vnni() {
            ScreenIsa::Avx512Vnni
        } else {
            ScreenIsa::Avx2
        })
    }

    /// The name `TAILRANK_SCREEN` takes for it: `avx2`, `avx512` or `amx`.
    pub fn name(self) -> &'static str {
        match self {
            ScreenIsa::Avx2 => "avx2",
            ScreenIsa::Avx512Vnni => "avx512",
            ScreenIsa::AmxInt8 => "amx",
        }
    }

    /// The instruction set of a [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<ScreenIsa> {
        [ScreenIsa::Avx2, ScreenIsa::Avx512Vnni, ScreenIsa::AmxInt8]
            .into_iter()
            .find(|i| i.name() == name)
    }
}

/// 32 i16 on a 64-byte boundary (aligned vector loads of the packed panels).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct I16Line([i16; 32]);

fn i16_lines(len: usize) -> Vec<I16Line> {
    vec![I16Line([0; 32]); len.div_ceil(32)]
}

fn as_i16(v: &[I16Line]) -> &[i16] {
    // SAFETY: `I16Line` is `repr(C)` over `[i16; 32]` with no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<i16>(), v.len() * 32) }
}

fn as_i16_mut(v: &mut [I16Line]) -> &mut [i16] {
    // SAFETY: as in `as_i16`; `&mut` makes the borrow unique.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<i16>(), v.len() * 32) }
}

/// The screen of one scan: the queries quantised and packed once.
pub struct Screen {
    nq: usize,
    d: usize,
    /// `d` rounded up to even (depth pairs of `vpmaddwd`).
    dp: usize,
    p: usize,
    /// `[panel][k pair][NR][2]` i16, `nq` padded to a multiple of `NR` with zero queries.
    queries: Vec<I16Line>,
    /// Bound coefficients per query (margins applied), `nq` padded like `queries`.
    query_coefs: Vec<avx2::QueryCoef>,
    /// The widest instruction set this CPU runs.
    best: ScreenIsa,
    /// The one in use (at most `best`); the bounds are bitwise the same whichever it is.
    isa: ScreenIsa,
    /// The queries in the AMX tile layout, when `best` is AMX.
    #[cfg(target_arch = "x86_64")]
    amx: Option<amx::Queries>,
}

impl Screen {
    /// A screen for `nq` queries (`nq × d` row-major) and blocks of `p` rows (a multiple of
    /// [`MR`], as the packed f32 kernel uses), or `None` when this CPU lacks AVX2 + FMA or
    /// `d` is 0 or above [`MAX_DIM`].
    pub fn new(queries: &[f32], nq: usize, d: usize, p: usize) -> Option<Screen> {
        Self::with_isa(queries, nq, d, p, ScreenIsa::AmxInt8)
    }

    /// [`new`](Self::new) with the integer product on the widest instruction set up to `max`
    /// (`ScanConfig::screen_isa`): nothing wider is prepared or asked of the OS.
    pub fn with_isa(
        queries: &[f32],
        nq: usize,
        d: usize,
        p: usize,
        max: ScreenIsa,
    ) -> Option<Screen> {
        assert_eq!(queries.len(), nq * d, "query matrix is not nq × d");
        let best = ScreenIsa::detect_up_to(max)?;
        if d == 0 || d > MAX_DIM || !p.is_multiple_of(MR) {
            return None;
        }
        let dp = d.next_multiple_of(2);
        let nq_pad = nq.next_multiple_of(NR);
        let mut packed = i16_lines(nq_pad * dp);
        let mut coefs = Coefs::default();
        coefs.resize(nq_pad);
        let mut row = vec![0i16; dp];
        #[cfg(target_arch = "x86_64")]
        let mut amx = (best == ScreenIsa::AmxInt8).then(|| amx::Queries::zeroed(nq_pad, d));
        {
            let dst = as_i16_mut(&mut packed);
            for q in 0..nq {
                coefs.set(q, quantise(&queries[q * d..(q + 1) * d], &mut row));
                #[cfg(target_arch = "x86_64")]
                if let Some(a) = &mut amx {
                    a.put(q, &row[..d]);
                }
                let (panel, j) = (q / NR, q % NR);
                let base = panel * NR * dp;
                for kp in 0..dp / 2 {
                    dst[base + (kp * NR + j) * 2] = row[2 * kp];
                    dst[base + (kp * NR + j) * 2 + 1] = row[2 * kp + 1];
                }
            }
        }
        Some(Screen {
            nq,
            d,
            dp,
            p,
            queries: packed,
            query_coefs: (0..nq_pad)
                .map(|q| avx2::QueryCoef {
                    step: coefs.step[q],
                    norm_margin: coefs.norm[q] * MARGIN,
                    err_margin: coefs.err[q] * MARGIN,
                    norm_rounding: coefs.norm[q] * (1.01 * (d as f32 + 64.0) * f32::EPSILON / 2.0),
                })
                .collect(),
            best,
            isa: best,
            #[cfg(target_arch = "x86_64")]
            amx,
        })
    }

    /// Run the integer product on the widest instruction set up to `max` that this CPU runs
    /// (tests, benchmarks, `TAILRANK_SCREEN`): every one gives the same bounds bitwise.
    pub fn limit_isa(&mut self, max: ScreenIsa) {
        self.isa = self.best.min(max);
    }

    /// The instruction set of the integer product.
    pub fn isa(&self) -> ScreenIsa {
        self.isa
    }

    /// Queries of the screen.
    pub fn queries(&self) -> usize {
        self.nq
    }

    /// Length of the bound buffer of [`upper_bounds`](Self::upper_bounds): `nq` padded to a
    /// multiple of 6, times `p`.
    pub fn out_len(&self) -> usize {
        self.nq.next_multiple_of(NR) * self.p
    }

    /// `out[q · p + s] ≥` the kernel's score of query `q` and block row `order[s]` (`block`:
    /// `p × D` row-major, `order` a permutation of `0..p`, `out` at least
    /// [`out_len`](Self::out_len) long).
    pub fn upper_bounds(
        &self,
        block: &[f32],
        order: &[u32],
        scratch: &mut ScreenScratch,
        out: &mut [f32],
    ) {
        let (p, d, dp) = (self.p, self.d, self.dp);
        let nq_pad = self.nq.next_multiple_of(NR);
        assert!(block.len() == p * d, "block is not p × d");
        assert!(
            order.len() == p,
            "row order is not a permutation of the block"
        );
        assert!(out.len() >= nq_pad * p, "bound buffer is too short");
        scratch.row.resize(dp, 0);
        scratch.rows.resize(p);
        #[cfg(target_arch = "x86_64")]
        if let (ScreenIsa::AmxInt8, Some(queries)) = (self.isa, &self.amx) {
            let d64 = amx::padded_depth(d);
            let amx_rows = &mut scratch.amx_rows;
            amx_rows.reset(p, d64, d);
            quantise_rows(
                block,
                d,
                order,
                &mut scratch.row,
                &mut scratch.rows,
                |s, v| {
                    // SAFETY: `amx` is built only where `amx::available()`, which checks AVX-512
                    // F, BW and VL.
                    unsafe { amx_rows.put_b(s, d64, &v[..d]) }
                },
            );
            let rows = &scratch.rows;
            let group = (QUERY_GROUP_BYTES / (2 * amx::TILE * d64)).max(1);
            // SAFETY: `amx` is built only where `amx::available()`; `amx_rows` holds the `p`
            // rows (a multiple of 16, checked by `new`), the coefficients `p` and `nq_pad`
            // values, `out` `nq_pad · p` (asserted above).
            unsafe {
                amx::bounds(
                    queries,
                    &scratch.amx_rows,
                    p,
                    |r0| avx2::RowCoefs {
                        step: rows.step.as_ptr().add(r0),
                        norm: rows.norm.as_ptr().add(r0),
                        err: rows.err.as_ptr().add(r0),
                        hat: rows.hat.as_ptr().add(r0),
                    },
                    &self.query_coefs,
                    nq_pad,
                    group,
                    out,
                    p,
                );
            }
            return;
        }
        if scratch.packed.len() * 32 < p * dp {
            scratch.packed = i16_lines(p * dp);
        }
        let packed = as_i16_mut(&mut scratch.packed);
        quantise_rows(
            block,
            d,
            order,
            &mut scratch.row,
            &mut scratch.rows,
            |s, v| {
                let (panel, i) = (s / MR, s % MR);
                let base = panel * MR * dp;
                let dst = &mut packed[base..base + MR * dp];
                for (kp, pair) in v.chunks_exact(2).enumerate() {
                    dst[(kp * MR + i) * 2..(kp * MR + i) * 2 + 2].copy_from_slice(pair);
                }
            },
        );
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `new` returned a screen only after checking AVX2 + FMA, and `isa` is at
        // most the widest the CPU runs; lengths checked above.
        unsafe {
            if self.isa >= ScreenIsa::Avx512Vnni {
                self.avx512_bounds(as_i16(&scratch.packed), &scratch.rows, out)
            } else {
                self.avx2_bounds(as_i16(&scratch.packed), &scratch.rows, out)
            }
        }
    }

    /// The loop nest over the packed operands: query group (it stays in L2) → row panel →
    /// `step` query panels at a time (fewer at a group's end). `tile(a, b, row, query, c, n)`
    /// bounds row panel `a` against the `n` query panels from `b`.
    ///
    /// # Safety
    /// `packed` holds `p · dp` values, `out` `nq_pad · p`; `tile` is safe to call on them.
    #[cfg(target_arch = "x86_64")]
    unsafe fn for_each_tile(
        &self,
        packed: &[i16],
        rows: &Coefs,
        out: &mut [f32],
        step: usize,
        mut tile: impl FnMut(
            *const i16,
            *const i16,
            &avx2::RowCoefs,
            *const avx2::QueryCoef,
            *mut f32,
            usize,
        ),
    ) {
        let (p, dp) = (self.p, self.dp);
        let qpanels = self.nq.div_ceil(NR);
        let group = (QUERY_GROUP_BYTES / (NR * dp * 2)).clamp(1, qpanels);
        let mut g0 = 0;
        while g0 < qpanels {
            let g1 = (g0 + group).min(qpanels);
            for rp in 0..p / MR {
                let r0 = rp * MR;
                let row = avx2::RowCoefs {
                    step: rows.step.as_ptr().add(r0),
                    norm: rows.norm.as_ptr().add(r0),
                    err: rows.err.as_ptr().add(r0),
                    hat: rows.hat.as_ptr().add(r0),
                };
                let mut qp = g0;
                while qp < g1 {
                    let n = step.min(g1 - qp);
                    tile(
                        packed.as_ptr().add(r0 * dp),
                        self.queries.as_ptr().cast::<i16>().add(qp * NR * dp),
                        &row,
                        self.query_coefs.as_ptr().add(qp * NR),
                        out.as_mut_ptr().add(qp * NR * p + r0),
                        n,
                    );
                    qp += n;
                }
            }
            g0 = g1;
        }
    }

    /// [`for_each_tile`](Self::for_each_tile) with the AVX2 tile (one query panel a time).
    ///
    /// # Safety
    /// AVX2 + FMA; as `for_each_tile`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn avx2_bounds(&self, packed: &[i16], rows: &Coefs, out: &mut [f32]) {
        let (kp, ldc) = (self.dp / 2, self.p);
        self.for_each_tile(packed, rows, out, 1, |a, b, row, query, c, _| {
            // SAFETY: AVX2 + FMA (the caller's contract); the operands come from the loop nest.
            unsafe { avx2::tile(kp, a, b, row, query, c, ldc) }
        })
    }

    /// [`for_each_tile`](Self::for_each_tile) with the AVX-512 VNNI tile: one row panel (it
    /// stays in L1) against two query panels.
    ///
    /// # Safety
    /// AVX-512 F, BW and VNNI; as `for_each_tile`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn avx512_bounds(&self, packed: &[i16], rows: &Coefs, out: &mut [f32]) {
        let (kp, ldc, stride) = (self.dp / 2, self.p, NR * self.dp);
        self.for_each_tile(packed, rows, out, 2, |a, b, row, query, c, n| {
            // SAFETY: AVX-512 VNNI (the caller's contract); the operands come from the loop nest.
            unsafe {
                if n == 2 {
                    avx512::tile::<2>(kp, a, b, stride, row, query, c, ldc)
                } else {
                    avx512::tile::<1>(kp, a, b, stride, row, query, c, ldc)
                }
            }
        })
    }
}

/// Whether this CPU runs the AVX-512 VNNI integer product (`vpdpwssd`).
fn avx512_vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx2_fma()
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(target_arch = "x86_64")]
mod amx;

#[cfg(test)]
mod tests;
