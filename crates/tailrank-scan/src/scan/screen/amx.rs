//! The screen's integer product on AMX-INT8 (Intel's tile unit), bitwise the AVX2 one.
//!
//! ## Exact i16 products from i8 tiles
//!
//! Every quantised value `v ∈ [−32767, 32767]` splits as `v = 256·h + l` with `h = v >> 8`
//! (arithmetic shift, `h ∈ [−128, 127]`, signed byte) and `l = v & 255` (`l ∈ [0, 255]`,
//! unsigned byte). For a query `q` and a row `x`,
//!
//! ```text
//! q̂·x̂ = 2¹⁶ Σ q_h x_h + 2⁸ (Σ q_h x_l + Σ q_l x_h) + Σ q_l x_l
//! ```
//!
//! Each sum runs in one i32 tile with the sign pair it needs (`tdpbssd`, `tdpbsud`,
//! `tdpbusd`, `tdpbuud`) and is exact: for `D ≤` [`MAX_DIM`](super::MAX_DIM) the largest,
//! the middle sum, is at most `2 · 2048 · 128 · 255 < 2³¹`. The combination is done in wrapping i32 arithmetic: the true
//! `q̂·x̂` lies in i32 (the screen's module documentation), so the sum modulo 2³² *is* it, the
//! same i32 the AVX2 and AVX-512 tiles compute. The bound is then the same lane-wise f32
//! arithmetic ([`super::avx512::upper_row`]), so the output is bitwise theirs.
//!
//! ## Layout and loop
//!
//! A tiles are 16 queries × 64 depth bytes (queries row-major, `d64` = `D` rounded up to 64,
//! zero padded); B tiles are 16 depth quads × 16 rows × 4 bytes (the rows of a 16-row panel
//! interleaved by quads, as `tdpb*` reads them). Per 64-deep step: four tile loads (query
//! high and low, row high and low) and four `tdpb*` into three accumulators (`hh`, `mid`,
//! `ll`): seven of the eight tiles. A row panel (`2 · 16 · d64` bytes, in L1 up to D = 1024)
//! is reused while the query panels of a group, which stay in L2, pass.
//!
//! Linux lends the tile state to a process only on request (`arch_prctl(ARCH_REQ_XCOMP_PERM,
//! XFEATURE_XTILEDATA)`); [`available`] makes it once and says whether it was granted.

use std::arch::asm;
use std::arch::x86_64::*;
use std::sync::OnceLock;

use super::avx2::{QueryCoef, RowCoefs};
use super::avx512::upper_row;

/// Rows (pool rows or queries) per tile, and i32 columns of an accumulator.
pub(super) const TILE: usize = 16;
/// Depth bytes per tile row.
const DEPTH: usize = 64;

/// Whether this CPU has AMX-TILE and AMX-INT8, the OS grants the tile state, and the AVX-512
/// bound arithmetic ([`super::avx512_vnni`]) is there.
pub(super) fn available() -> bool {
    static GRANTED: OnceLock<bool> = OnceLock::new();
    *GRANTED.get_or_init(|| {
        super::avx512_vnni()
            && is_x86_feature_detected!("avx512vl")
            && cpu_has_amx_int8()
            && request_tile_state()
    })
}

fn cpu_has_amx_int8() -> bool {
    // CPUID leaf 7, sub-leaf 0: EDX bit 24 is AMX-TILE, bit 25 AMX-INT8.
    #[allow(unused_unsafe)]
    // SAFETY: CPUID leaf 7 exists on every x86-64 CPU with AVX-512 (checked first).
    let r = unsafe { __cpuid_count(7, 0) };
    r.edx & (1 << 24) != 0 && r.edx & (1 << 25) != 0
}

#[cfg(target_os = "linux")]
fn request_tile_state() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a plain system call with integer arguments.
    unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        ) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn request_tile_state() -> bool {
    false
}

/// `d` rounded up to whole 64-deep tile steps.
pub(super) fn padded_depth(d: usize) -> usize {
    d.max(1).next_multiple_of(DEPTH)
}

/// 64 bytes on a 64-byte boundary.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Line([u8; 64]);

fn bytes_mut(v: &mut [Line]) -> &mut [u8] {
    // SAFETY: `Line` is `repr(C)` over `[u8; 64]` with no padding; `&mut` keeps it unique.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), v.len() * 64) }
}

/// High and low bytes of quantised vectors in one of the two tile layouts.
#[derive(Default)]
pub(super) struct Split {
    hi: Vec<Line>,
    lo: Vec<Line>,
    /// `(vectors, d64, d)` of the last [`reset`](Self::reset).
    shape: (usize, usize, usize),
}

impl Split {
    /// Room for `vectors` vectors (a multiple of [`TILE`]) of `d` values in depth `d64`. The
    /// bytes are zeroed when the shape changes; otherwise they keep the last vectors' values,
    /// so that the depth padding (`d..d64`), which `put_*` never write for `d` values, stays
    /// zero.
    pub(super) fn reset(&mut self, vectors: usize, d64: usize, d: usize) {
        if self.shape == (vectors, d64, d) {
            return;
        }
        self.shape = (vectors, d64, d);
        let len = (vectors * d64).div_ceil(64);
        for v in [&mut self.hi, &mut self.lo] {
            v.clear();
            v.resize(len, Line([0; 64]));
        }
    }

    /// Store vector `i` (`v.len() ≤ d64`) for A tiles: vector-major, `d64` bytes each.
    pub(super) fn put_a(&mut self, i: usize, d64: usize, v: &[i16]) {
        let (hi, lo) = (bytes_mut(&mut self.hi), bytes_mut(&mut self.lo));
        for (k, &x) in v.iter().enumerate() {
            hi[i * d64 + k] = (x >> 8) as u8;
            lo[i * d64 + k] = x as u8;
        }
    }

    /// Store vector `i` for B tiles: per 16-vector panel `[d64 / 4][16][4]`.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and VL (true where [`available`]).
    pub(super) unsafe fn put_b(&mut self, i: usize, d64: usize, v: &[i16]) {
        assert!(v.len() <= d64 && (i / TILE + 1) * TILE * d64 <= self.hi.len() * 64);
        let (hi, lo) = (bytes_mut(&mut self.hi), bytes_mut(&mut self.lo));
        let base = (i / TILE) * TILE * d64 + (i % TILE) * 4;
        let wide = v.len() - v.len() % 32;
        // SAFETY: AVX-512 F, BW and VL (the caller's contract); the stores stay inside the
        // panel (asserted above).
        unsafe {
            put_b_avx512(
                hi.as_mut_ptr().add(base),
                lo.as_mut_ptr().add(base),
                &v[..wide],
            )
        };
        for (k4, quad) in v[wide..].chunks(4).enumerate() {
            let k4 = k4 + wide / 4;
            let at = base + k4 * 4 * TILE;
            for (b, &x) in quad.iter().enumerate() {
                hi[at + b] = (x >> 8) as u8;
                lo[at + b] = x as u8;
            }
        }
    }

    fn hi(&self, byte: usize) -> *const u8 {
        self.hi.as_ptr().cast::<u8>().wrapping_add(byte)
    }

    fn lo(&self, byte: usize) -> *const u8 {
        self.lo.as_ptr().cast::<u8>().wrapping_add(byte)
    }
}

/// The queries of a screen in the A layout, padded with zero queries to a multiple of [`TILE`].
pub(super) struct Queries {
    split: Split,
    d64: usize,
    panels: usize,
}

impl Queries {
    /// Room for `nq` queries of `d` values, all zero (padded to a multiple of [`TILE`]).
    pub(super) fn zeroed(nq: usize, d: usize) -> Self {
        let d64 = padded_depth(d);
        let panels = nq.div_ceil(TILE);
        let mut split = Split::default();
        split.reset(panels * TILE, d64, d);
        Queries { split, d64, panels }
    }

    /// Store query `q`'s quantised values (`v.len() ≤ d`).
    pub(super) fn put(&mut self, q: usize, v: &[i16]) {
        self.split.put_a(q, self.d64, v);
    }
}

/// [`Split::put_b`] for 32 values at a time: their high and low bytes (`vpsraw`,
/// `vpmovwb`) scattered as 8 quads to `hi`/`lo` + `k4 · 64`.
///
/// # Safety
/// AVX-512 F and BW; `v.len()` a multiple of 32; `hi` and `lo` valid for `v.len() · 16`
/// bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn put_b_avx512(hi: *mut u8, lo: *mut u8, v: &[i16]) {
    let index = _mm256_setr_epi32(0, 64, 128, 192, 256, 320, 384, 448);
    for (c, chunk) in v.chunks_exact(32).enumerate() {
        let x = _mm512_loadu_si512(chunk.as_ptr().cast());
        let h = _mm512_cvtepi16_epi8(_mm512_srai_epi16::<8>(x));
        let l = _mm512_cvtepi16_epi8(x);
        let at = c * 8 * 4 * TILE;
        _mm256_i32scatter_epi32::<1>(hi.add(at).cast(), index, h);
        _mm256_i32scatter_epi32::<1>(lo.add(at).cast(), index, l);
    }
}

/// Tile configuration: palette 1, tiles 0–6 of 16 rows × 64 bytes.
#[repr(C, align(64))]
struct Config([u8; 64]);

impl Config {
    fn new() -> Self {
        let mut c = [0u8; 64];
        c[0] = 1;
        for t in 0..7 {
            c[16 + 2 * t] = DEPTH as u8;
            c[48 + t] = TILE as u8;
        }
        Config(c)
    }
}

/// Upper bounds of every (query, row) pair of a block: `out[q · ldc + s]` for the `rows`
/// (B layout, `p` of them) against the first `nq_out` queries (`nq_out ≤ 16 · panels`,
/// `query` holding their coefficients), `row` giving the rows' coefficients; query panels
/// are taken `group` at a time.
///
/// # Safety
/// [`available`] returned `true`; `rows` holds `p` (a multiple of 16) vectors of the queries'
/// depth; the row coefficients are valid for `p` values, `query` for `nq_out`, `out` for
/// `nq_out` rows of stride `ldc ≥ p`.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
pub(super) unsafe fn bounds(
    queries: &Queries,
    rows: &Split,
    p: usize,
    row: impl Fn(usize) -> RowCoefs,
    query: &[QueryCoef],
    nq_out: usize,
    group: usize,
    out: &mut [f32],
    ldc: usize,
) {
    assert!(nq_out <= queries.panels * TILE && query.len() >= nq_out);
    assert!(nq_out == 0 || (ldc >= p && out.len() >= (nq_out - 1) * ldc + p));
    let slack = _mm512_set1_ps(super::avx2::UNDERFLOW_SLACK);
    let qpanels = nq_out.div_ceil(TILE);
    for_each_tile(queries, rows, p, qpanels, group, |qp, rp, acc| {
        let rc = row(rp * TILE);
        let (step, norm, err, hat) = (
            _mm512_loadu_ps(rc.step),
            _mm512_loadu_ps(rc.norm),
            _mm512_loadu_ps(rc.err),
            _mm512_loadu_ps(rc.hat),
        );
        let q0 = qp * TILE;
        for j in 0..TILE.min(nq_out - q0) {
            let upper = upper_row(acc.sums(j), step, norm, err, hat, &query[q0 + j], slack);
            _mm512_storeu_ps(out.as_mut_ptr().add((q0 + j) * ldc + rp * TILE), upper);
        }
    });
}

/// The loop nest of the tile products: query groups of `group` panels (they stay in L2) →
/// row panel → query panel of the group; `tile(qp, rp, acc)` gets the products of query
/// panel `qp` and row panel `rp`. Loads the tile configuration and releases the tiles.
///
/// # Safety
/// [`available`] returned `true`; `rows` holds `p` (a multiple of 16) vectors of the queries'
/// depth; `qpanels ≤` the queries' panels.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
unsafe fn for_each_tile(
    queries: &Queries,
    rows: &Split,
    p: usize,
    qpanels: usize,
    group: usize,
    mut tile: impl FnMut(usize, usize, &Accumulators),
) {
    let d64 = queries.d64;
    assert!(qpanels <= queries.panels);
    assert!(p.is_multiple_of(TILE) && rows.hi.len() * 64 >= p * d64 && rows.shape.1 == d64);
    let config = Config::new();
    asm!("ldtilecfg [{}]", in(reg) config.0.as_ptr(), options(nostack, readonly));
    let mut acc = Accumulators([[0; TILE * TILE]; 3]);
    let mut g0 = 0;
    while g0 < qpanels {
        let g1 = (g0 + group.max(1)).min(qpanels);
        for rp in 0..p / TILE {
            let xb = rp * TILE * d64;
            for qp in g0..g1 {
                let qa = qp * TILE * d64;
                products(
                    d64 / DEPTH,
                    [queries.split.hi(qa), queries.split.lo(qa)],
                    d64,
                    [rows.hi(xb), rows.lo(xb)],
                    &mut acc,
                );
                tile(qp, rp, &acc);
            }
        }
        g0 = g1;
    }
    asm!("tilerelease", options(nostack, nomem));
}

/// The three i32 accumulators `hh`, `mid`, `ll` of one 16 × 16 tile, row-major.
#[repr(C, align(64))]
struct Accumulators([[i32; TILE * TILE]; 3]);

impl Accumulators {
    /// The exact products `q̂_j · x̂_n` of query row `j` (16 lanes `n`): `2¹⁶ hh + 2⁸ mid + ll`
    /// in wrapping i32 (module documentation).
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn sums(&self, j: usize) -> __m512i {
        let hh = _mm512_loadu_si512(self.0[0][j * TILE..].as_ptr().cast());
        let mid = _mm512_loadu_si512(self.0[1][j * TILE..].as_ptr().cast());
        let ll = _mm512_loadu_si512(self.0[2][j * TILE..].as_ptr().cast());
        let high = _mm512_add_epi32(_mm512_slli_epi32::<16>(hh), _mm512_slli_epi32::<8>(mid));
        _mm512_add_epi32(high, ll)
    }
}

/// The exact i32 products of every query against every row (`nq_pad · p`, query-major), for
/// tests against an i64 reference.
///
/// # Safety
/// As [`bounds`].
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni,fma")]
pub(super) unsafe fn exact_products(queries: &Queries, rows: &Split, p: usize) -> Vec<i32> {
    let nq = queries.panels * TILE;
    let mut out = vec![0i32; nq * p];
    for_each_tile(
        queries,
        rows,
        p,
        queries.panels,
        queries.panels,
        |qp, rp, acc| {
            for j in 0..TILE {
                let at = out.as_mut_ptr().add((qp * TILE + j) * p + rp * TILE);
                _mm512_storeu_si512(at.cast(), acc.sums(j));
            }
        },
    );
    out
}

/// `acc ← (Σ q_h x_h, Σ q_h x_l + Σ q_l x_h, Σ q_l x_l)` over `steps` depth steps of 64:
/// `a` the query panel's high and low bytes (row stride `a_stride`), `b` the row panel's.
///
/// # Safety
/// The tile configuration of [`bounds`] is loaded; the panels hold `steps` steps.
#[inline(always)]
unsafe fn products(
    steps: usize,
    a: [*const u8; 2],
    a_stride: usize,
    b: [*const u8; 2],
    acc: &mut Accumulators,
) {
    asm!(
        "tilezero tmm0",
        "tilezero tmm1",
        "tilezero tmm2",
        options(nostack, nomem)
    );
    let b_stride = 4 * TILE;
    for s in 0..steps {
        asm!(
            "tileloadd tmm3, [{ah} + {as_}*1]",
            "tileloadd tmm4, [{al} + {as_}*1]",
            "tileloadd tmm5, [{bh} + {bs}*1]",
            "tileloadd tmm6, [{bl} + {bs}*1]",
            "tdpbssd tmm0, tmm3, tmm5",
            "tdpbsud tmm1, tmm3, tmm6",
            "tdpbusd tmm1, tmm4, tmm5",
            "tdpbuud tmm2, tmm4, tmm6",
            ah = in(reg) a[0].add(s * DEPTH),
            al = in(reg) a[1].add(s * DEPTH),
            as_ = in(reg) a_stride,
            bh = in(reg) b[0].add(s * TILE * DEPTH),
            bl = in(reg) b[1].add(s * TILE * DEPTH),
            bs = in(reg) b_stride,
            options(nostack, readonly)
        );
    }
    let c = acc.0.as_mut_ptr().cast::<i32>();
    let stride = TILE * 4;
    asm!(
        "tilestored [{c0} + {s}*1], tmm0",
        "tilestored [{c1} + {s}*1], tmm1",
        "tilestored [{c2} + {s}*1], tmm2",
        c0 = in(reg) c,
        c1 = in(reg) c.add(TILE * TILE),
        c2 = in(reg) c.add(2 * TILE * TILE),
        s = in(reg) stride,
        options(nostack)
    );
}
