//! Blocked GEMM scan fused with per-query top-M and per-positive counts (docs/method.md §5).
//!
//! One pass over the pool computes, for every query `q` of a [`QuerySet`]:
//!
//! * the positives' scores `s_{q,j}` (inner products, f32 accumulation), sorted descending
//!   (ties by id);
//! * `C_j` = #{non-relevant core items `c` : `⟨q, c⟩ > s_j`} (exact, the whole core) and the
//!   core ties `T^C_j` = #{non-relevant core items `c` : `⟨q, c⟩ == s_j`};
//! * for every subset `ℓ` of the sample (nested levels, then drift shards, see [`subsets`]):
//!   `S_ℓ` = #{pool items in ℓ}, `K_{j,ℓ}` = #{pool items `p` in ℓ : `⟨q, p⟩ > s_j`}, the pool
//!   ties `T^K_{j,ℓ}` = #{pool items `p` in ℓ : `⟨q, p⟩ == s_j`} and the top-M pool scores of ℓ.
//!
//! Bitwise-equal scores do not outrank (strict `>`); they are counted apart as ties, which the
//! metrics resolve as the official evaluator does (`metric`: the tie block's end). Every score, of a positive, a core item or
//! a pool item, comes from the same [`ScoreKernel`], whose scores depend only on the two
//! vectors (not on a row's position in its block), so an exact duplicate of a positive in the
//! pool scores bitwise equal to it and does not outrank it.
//!
//! ## Algorithm
//!
//! 1. Every pool id is hashed once (`sample::id_hash`); rows outside the level-0 range
//!    `[0, t(f))` are skipped entirely (never read, never multiplied). Each sampled row gets its
//!    deepest level `L` (it belongs to levels `0..=L`) and its shard.
//! 2. Sampled rows are gathered into blocks of `BLOCK_ROWS` rows (f16 converted to f32 by the
//!    source into a reused buffer), checked (finite, unit norm) and scored against all queries
//!    by the [`ScoreKernel`], grouped by item code (deepest level, shard) on the way.
//! 3. Per run of scores of one code and query (`scan::pool`): the scores above the
//!    code's cut `min(lowest positive score, thresholds of levels 0..=L and of the shard,
//!    results threshold)` are compacted branch-free; most scores are discarded there with one
//!    compare each. A candidate above the lowest positive is binary-searched among the sorted
//!    positive scores: `m = #{j : s_j ≥ s}` and `hist[L][m] += 1`, `hist[shard][m] += 1`. At the
//!    end `K_{j,ℓ} = Σ_{m < j} Σ_{L ≥ ℓ} hist[L][m]` (prefix sum over `m`, suffix sum over
//!    levels), and likewise per shard. Top-M: [`TopM`] reservoirs with a rising threshold, fed
//!    in batches, shared between workers through [`SharedThresholds`] (a lower bound of the
//!    merged M-th value).
//! 4. Speculation ([`speculate`](super::speculate), unless `speculate` is off): the blocks go
//!    in stages (one in 64, one in 16, the rest); after each stage every (query, subset) gets a
//!    floor from the reservoirs so far, and the next stage starts from it. The floors are
//!    verified on the merged reservoirs; queries with a floor that did not hold are scanned
//!    again without floors, so the output is the same. The stages with floors go through the
//!    integer [`screen`](super::screen) unless `screen` is off: each score is first bounded
//!    from above, and its f32 value is computed only where the bound passes the cut, so the
//!    candidates are the same as those of an all-f32 pass.
//! 5. Blocks are processed in parallel (rayon, one state per worker, merged at the end). Counts
//!    are sums and top-M lists are value multisets, so the result does not depend on the number
//!    of threads nor on how the pool is split into sources.
//!
//! Memory: `O(Q · (2M · subsets + Σ n_q · subsets))` per worker plus block buffers
//! (`BLOCK_ROWS · (D + Q)` floats per worker: rows, scores or bounds; `BLOCK_ROWS · D` 16-bit
//! values: the rows quantised for the screen) plus 8 bytes per
//! sampled row of the largest pool source (row index and level/shard code), plus 8 bytes per
//! sampled row of the whole pool (the fingerprint `Summary::pool_id_hashes`) and, while the
//! shards are checked for repeated ids ([`check_pool_disjoint`]), 8 bytes per pool id.
//!
//! ## Input checks
//!
//! Query, core and pool rows must be finite with `|‖x‖₂ − 1| ≤ NORM_TOLERANCE` (1e-3, on the
//! f32 values after conversion from f16: f16 rounding moves a norm by ~1e-4). With
//! `normalize`, every row is L2-normalised and the rows that were outside the tolerance are
//! counted (`ScanOutput::renormalized_rows`); rows with a non-finite value or a zero norm are
//! errors in both cases.

use crate::error::{Error, Result};
use crate::formats::descriptors::DescriptorSource;
use crate::formats::gt::QuerySet;
use crate::formats::ids::{find_duplicate_across, id_key};
use crate::sample::{check_fraction, id_hash, HashRange};
use crate::scan::kernel::{Backend, ScoreKernel, Scratch};
use crate::scan::pool::{self, results_cap, Block, PoolPlan, PoolQueryState, SampledSource};
use crate::scan::screen::Screen;
use crate::scan::speculate;
use crate::scan::summary::{
    InputRecord, PositiveSummary, QuerySummary, Subset, SubsetKind, Summary, SUMMARY_FORMAT_VERSION,
};
use crate::scan::topm::{SharedThresholds, TopKeyed, TopM};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Rows of a descriptor must satisfy `|‖x‖₂ − 1| ≤ NORM_TOLERANCE` (f32 values).
pub const NORM_TOLERANCE: f32 = 1e-3;
/// Default M (top pool scores kept per query and subset).
pub const DEFAULT_TOP_M: usize = 4000;
/// Largest M accepted: a list's length is stored as a 32-bit integer (`top_len.npy`). Any M
/// up to it costs only what is stored: a list never holds more than its subset's items, so
/// the reservoirs are sized by `min(M, S_0)` and the summary pads to `min(M, max_ℓ S_ℓ)`.
pub const MAX_TOP_M: usize = u32::MAX as usize;

/// Check M (`1 ≤ M ≤` [`MAX_TOP_M`]) before anything is allocated for it.
pub fn check_top_m(m: usize) -> Result<()> {
    if m == 0 {
        return Err(Error::invalid("top-M must be at least 1"));
    }
    if m > MAX_TOP_M {
        return Err(Error::invalid(format!(
            "top-M = {m} is beyond the largest M a summary can store ({MAX_TOP_M}: list \
             lengths are 32-bit); an M above the number of pool rows keeps every row anyway, so \
             give at most the pool size"
        )));
    }
    Ok(())
}
/// Default number of drift shards.
pub const DEFAULT_DRIFT_SHARDS: usize = 4;
/// Default number of nested levels (`min_fraction = f / 2^(levels-1)`).
pub const DEFAULT_LEVELS: usize = 5;
/// At most this many nested levels.
pub const MAX_LEVELS: usize = 32;
/// At most this many drift shards.
pub const MAX_SHARDS: usize = 256;
/// Pool rows per GEMM block (the `n` of every `Q × n × D` product). Tuned on Zen 3 (AVX2/FMA),
/// see `docs/performance.md`.
pub const BLOCK_ROWS: usize = 512;
/// Rows per block: [`BLOCK_ROWS`], or `TAILRANK_BLOCK_ROWS` from the environment (tuning).
fn block_rows() -> usize {
    std::env::var("TAILRANK_BLOCK_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v: &usize| v > 0)
        .unwrap_or(BLOCK_ROWS)
}

/// Options of a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanConfig {
    /// Level-0 sampling fraction f in (0, 1]; 1 is exact mode.
    pub fraction: f64,
    /// Hash seed of the sample (docs/method.md §4).
    pub seed: u64,
    /// Nested levels are `f, f/2, f/4, …` while `≥ min_fraction` (level 0 always).
    pub min_fraction: f64,
    /// Number of disjoint drift shards of the level-0 sample (0: none). Kept in exact mode too.
    pub drift_shards: usize,
    /// M, top pool scores kept per query and subset.
    pub top_m: usize,
    /// When set, also return the top-k `(id, score)` over core ∪ scanned pool per query.
    pub results_k: Option<usize>,
    /// Worker threads (None: the current rayon pool).
    pub threads: Option<usize>,
    /// L2-normalise rows instead of refusing rows that are not unit-norm.
    pub normalize: bool,
    /// Model name recorded in the summary.
    pub model: String,
    /// Size N of the full pool, recorded in the summary.
    pub pool_size: Option<u64>,
    /// Scan the pool in stages (pilots of one block in 64 and one in 16, then the rest), each
    /// starting its top-M reservoirs from floors estimated on the stages before
    /// ([`speculate`](super::speculate)); the floors are verified, so the result is the same
    /// either way (only the time differs).
    pub speculate: bool,
    /// In the stages that start from floors, bound every score with the integer screen and
    /// compute the f32 score only where the bound passes the cut
    /// ([`screen`](super::screen)); the result is bitwise the same either way. Ignored
    /// where the screen is unavailable (no AVX2 + FMA, the `gemm` kernel, `D > 2048`).
    pub screen: bool,
}

impl ScanConfig {
    /// Defaults for a sample at `fraction`: 5 levels (`min_fraction = f/16`), 4 drift shards,
    /// M = 4000, no results, all threads, no normalisation.
    pub fn new(fraction: f64, seed: u64) -> Self {
        ScanConfig {
            fraction,
            seed,
            min_fraction: fraction / (1u64 << (DEFAULT_LEVELS - 1)) as f64,
            drift_shards: DEFAULT_DRIFT_SHARDS,
            top_m: DEFAULT_TOP_M,
            results_k: None,
            threads: None,
            normalize: false,
            model: String::new(),
            pool_size: None,
            speculate: true,
            screen: true,
        }
    }
}

impl Default for ScanConfig {
    /// Exact mode (f = 1), seed 0.
    fn default() -> Self {
        ScanConfig::new(1.0, 0)
    }
}

/// What to scan.
pub struct ScanInputs<'a> {
    pub query_set: &'a QuerySet,
    /// Descriptors holding (at least) every query of the set.
    pub queries: &'a dyn DescriptorSource,
    /// The core: every positive of every query; the other rows are non-relevant core items.
    pub core: &'a dyn DescriptorSource,
    /// Pool sources (shards of the distractor pool, disjoint from the core).
    pub pool: Vec<&'a dyn DescriptorSource>,
}

/// Result of [`scan`].
#[derive(Debug, Clone)]
pub struct ScanOutput {
    pub summary: Summary,
    /// Top-`results_k` (db id, score) over core ∪ scanned pool, per query (query-set order),
    /// best first; equal scores in input order (core rows, then pool sources in order).
    pub results: Option<Vec<Vec<(String, f32)>>>,
    /// Rows (queries, core and pool) whose norm was outside the tolerance and were
    /// renormalised (always 0 without `normalize`).
    pub renormalized_rows: u64,
    /// Queries scanned a second time because a speculative floor was not verified
    /// ([`speculate`](super::speculate)); 0 when the pilot was representative.
    pub rescanned_queries: u64,
    /// (query, subset) reservoirs that started from a pilot floor.
    pub speculative_floors: u64,
    /// (query, pool row) pairs bounded by the integer screen ([`screen`](super::screen)),
    /// and those of them whose bound passed the cut, so that their f32 score was computed.
    pub screened_pairs: u64,
    pub rescored_pairs: u64,
}

/// Progress callback, called from worker threads with the number of pool rows (sampled or
/// skipped) just finished. The calls add up to the total number of pool rows.
pub trait Progress: Sync {
    fn rows_done(&self, rows: u64);
}

/// A [`Progress`] that ignores progress.
pub struct NoProgress;

impl Progress for NoProgress {
    fn rows_done(&self, _rows: u64) {}
}

/// The subsets of a scan: nesting levels `ℓ = 0, 1, …` with fraction `f/2^ℓ ≥ min_fraction`
/// (hash ranges `[0, t(f/2^ℓ))`, level 0 always present, at most [`MAX_LEVELS`]), then
/// `drift_shards` disjoint, adjacent, equal hash slices of `[0, t(f))` (fraction `f/H`).
/// Shards are kept in exact mode (f = 1) too: there they split the whole pool, which makes
/// drift checks of the exact scan possible.
pub fn subsets(fraction: f64, min_fraction: f64, drift_shards: usize) -> Result<Vec<Subset>> {
    let f = check_fraction(fraction)?;
    if !(min_fraction.is_finite() && min_fraction > 0.0 && min_fraction <= f) {
        return Err(Error::invalid(format!(
            "minimum level fraction must be in (0, f = {f}], got {min_fraction}"
        )));
    }
    let mut out = Vec::new();
    let mut level_f = f;
    // Relative slack so that f/16 with min_fraction = f/16 is kept despite rounding.
    while level_f >= min_fraction * (1.0 - 1e-12) {
        if out.len() == MAX_LEVELS {
            return Err(Error::invalid(format!(
                "more than {MAX_LEVELS} nested levels between f = {f} and {min_fraction}"
            )));
        }
        out.push(Subset {
            kind: SubsetKind::Level,
            fraction: level_f,
            range: HashRange::fraction(level_f)?,
        });
        level_f /= 2.0;
    }
    if drift_shards > 0 {
        if drift_shards > MAX_SHARDS {
            return Err(Error::invalid(format!(
                "at most {MAX_SHARDS} drift shards, got {drift_shards}"
            )));
        }
        let whole = HashRange::fraction(f)?;
        for range in whole.split(drift_shards as u64) {
            out.push(Subset {
                kind: SubsetKind::Shard,
                fraction: f / drift_shards as f64,
                range,
            });
        }
    }
    Ok(out)
}

/// Hash-range bookkeeping of the subsets: which level and shard a hash falls in.
struct Sampler {
    levels: Vec<HashRange>,
    shards: Vec<HashRange>,
}

impl Sampler {
    fn new(subs: &[Subset]) -> Self {
        let pick = |k| {
            subs.iter()
                .filter(|s| s.kind == k)
                .map(|s| s.range)
                .collect()
        };
        Sampler {
            levels: pick(SubsetKind::Level),
            shards: pick(SubsetKind::Shard),
        }
    }

    /// `None` when the hash is outside level 0, else the code `L · max(shards, 1) + shard` of
    /// the deepest level `L` containing the hash and its shard.
    #[inline]
    fn code(&self, h: u64) -> Option<u32> {
        if !self.levels[0].contains(h) {
            return None;
        }
        let deepest = self.levels.iter().take_while(|r| r.contains(h)).count() as u32 - 1;
        let shard = if self.shards.is_empty() {
            0
        } else {
            (self.shards.partition_point(|r| r.hi <= h)).min(self.shards.len() - 1) as u32
        };
        Some(deepest * self.shards.len().max(1) as u32 + shard)
    }
}

/// Per query: positives sorted by score descending (ties by id).
pub(super) struct QueryPositives {
    ids: Vec<String>,
    pub(super) scores: Vec<f32>,
    /// Core rows of the positives, sorted ascending (relevance test in the core pass).
    rows_sorted: Vec<usize>,
    pub(super) lowest: f32,
}

/// Check (or, with `normalize`, fix) `n` rows of `buf`. Returns the number of rows whose norm
/// was outside the tolerance. `row_of(i)` gives the source row of buffer row `i` for messages.
pub(super) fn check_rows(
    buf: &mut [f32],
    d: usize,
    normalize: bool,
    src: &dyn DescriptorSource,
    row_of: impl Fn(usize) -> usize,
) -> Result<u64> {
    let mut off = 0u64;
    for (i, x) in buf.chunks_exact_mut(d).enumerate() {
        let mut acc = [0f32; 8];
        let mut it = x.chunks_exact(8);
        for c in &mut it {
            for l in 0..8 {
                acc[l] += c[l] * c[l];
            }
        }
        let mut sq: f32 = it.remainder().iter().map(|v| v * v).sum();
        sq += acc.iter().sum::<f32>();
        let norm = sq.sqrt();
        let bad = |msg: String| {
            let row = row_of(i);
            let id = src.ids().get(row).map(String::as_str).unwrap_or("?");
            Error::file(src.path(), format!("row {row} (id {id:?}): {msg}"))
        };
        if !norm.is_finite() {
            return Err(match x.iter().position(|v| !v.is_finite()) {
                Some(c) => bad(format!("non-finite value {} in column {c}", x[c])),
                None => bad("norm overflows f32".into()),
            });
        }
        if sq < f32::MIN_POSITIVE {
            // Σx² is 0 or subnormal: either every value is 0, or the values are so small that
            // their squares underflow f32 and the norm is lost (a row of 1e-30 is not a zero
            // vector; normalising it from a subnormal Σx² would give a wrong direction).
            let largest = x
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
                .map(|(c, v)| (c, *v));
            return Err(match largest {
                None | Some((_, 0.0)) => bad("zero vector (cannot be L2-normalised)".into()),
                Some((c, v)) => bad(format!(
                    "values too small for an f32 norm (not all 0: the largest is {v:e}, \
                     column {c}, but the sum of squares {sq:e} underflows f32); the row cannot \
                     be L2-normalised accurately: rescale it"
                )),
            });
        }
        let outside = (norm - 1.0).abs() > NORM_TOLERANCE;
        if outside {
            if !normalize {
                return Err(bad(format!(
                    "L2 norm {norm} is not 1 (tolerance {NORM_TOLERANCE}); descriptors must be \
                     L2-normalised (or use the normalize option)"
                )));
            }
            off += 1;
        }
        if normalize {
            let inv = 1.0 / norm;
            x.iter_mut().for_each(|v| *v *= inv);
        }
    }
    Ok(off)
}

/// Block buffers of one worker: the gathered rows (`p × D`), the scratch of the kernel and the
/// scores (`out_rows × p`, or longer when the screen's bounds share the buffer).
pub(super) struct Buffers {
    pub(super) block: Vec<f32>,
    scratch: Scratch,
    pub(super) scores: Vec<f32>,
}

impl Buffers {
    pub(super) fn new(k: &ScoreKernel, d: usize) -> Self {
        Buffers {
            block: vec![0.0; k.block_rows() * d],
            scratch: Scratch::default(),
            scores: vec![0.0; k.out_len()],
        }
    }

    /// Score the current block with `k`.
    fn score(&mut self, k: &ScoreKernel) {
        let n = k.out_len();
        k.scores(&self.block, &mut self.scratch, &mut self.scores[..n]);
    }

    /// Score the current block with `k`, score column `s` holding block row `order[s]`.
    pub(super) fn score_in_order(&mut self, k: &ScoreKernel, order: &[u32]) {
        let n = k.out_len();
        k.scores_in_order(
            &self.block,
            Some(order),
            &mut self.scratch,
            &mut self.scores[..n],
        );
    }
}

/// Run `nblocks` work items on `workers` threads of the current rayon pool, each worker with
/// its own state from `init`. On errors, the error of the lowest-numbered failing block is
/// returned (deterministic: blocks are claimed in order and claimed blocks always finish).
pub(super) fn run_blocks<S: Send>(
    nblocks: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) -> Result<()> + Sync,
) -> Result<Vec<S>> {
    let workers = rayon::current_num_threads().max(1).min(nblocks.max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let first_err: Mutex<Option<(usize, Error)>> = Mutex::new(None);
    let states: Mutex<Vec<(usize, S)>> = Mutex::new(Vec::new());
    rayon::scope(|sc| {
        for w in 0..workers {
            let (next, stop, first_err, states, init, work) =
                (&next, &stop, &first_err, &states, &init, &work);
            sc.spawn(move |_| {
                let mut st = init();
                while !stop.load(Ordering::Relaxed) {
                    let b = next.fetch_add(1, Ordering::Relaxed);
                    if b >= nblocks {
                        break;
                    }
                    if let Err(e) = work(&mut st, b) {
                        stop.store(true, Ordering::Relaxed);
                        let mut g = first_err.lock().unwrap_or_else(|p| p.into_inner());
                        if g.as_ref().is_none_or(|(i, _)| b < *i) {
                            *g = Some((b, e));
                        }
                    }
                }
                states
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((w, st));
            });
        }
    });
    if let Some((_, e)) = first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut states = states.into_inner().unwrap_or_else(|p| p.into_inner());
    states.sort_by_key(|(w, _)| *w);
    Ok(states.into_iter().map(|(_, s)| s).collect())
}

/// Scan: see the module documentation.
pub fn scan(inputs: &ScanInputs, cfg: &ScanConfig, progress: &dyn Progress) -> Result<ScanOutput> {
    match cfg.threads {
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| Error::invalid(format!("cannot start {n} threads: {e}")))?;
            pool.install(|| scan_in_pool(inputs, cfg, progress))
        }
        None => scan_in_pool(inputs, cfg, progress),
    }
}

/// Refuse pool shards that share an id (docs/method.md §5: the pool is a set; a repeated id would be
/// counted twice in `S_ℓ` and `K_{j,ℓ}`), naming the id and both files and rows. The same file
/// given twice is reported as such. Memory: 8 bytes per pool id
/// ([`find_duplicate_across`]).
pub fn check_pool_disjoint(pool: &[&dyn DescriptorSource]) -> Result<()> {
    let lists: Vec<&[String]> = pool.iter().map(|s| s.ids()).collect();
    let Some(((a, ra), (b, rb))) = find_duplicate_across(&lists) else {
        return Ok(());
    };
    let (pa, pb) = (pool[a].path(), pool[b].path());
    let id = &lists[b][rb];
    let same_file = a != b
        && (pa == pb
            || matches!((std::fs::canonicalize(pa), std::fs::canonicalize(pb)),
                        (Ok(x), Ok(y)) if x == y));
    Err(if same_file && ra == rb {
        Error::file(
            pb,
            format!(
                "given twice as a pool file (pool inputs {} and {}): its rows would be counted \
                 twice; give each pool file once",
                a + 1,
                b + 1
            ),
        )
    } else if a == b {
        Error::file(
            pb,
            format!("duplicate pool id {id:?} on rows {ra} and {rb} (0-based)"),
        )
    } else {
        Error::file(
            pb,
            format!(
                "row {rb} has id {id:?}, which is also row {ra} of pool file {}: pool shards \
                 must be disjoint (each pool id once)",
                pa.display()
            ),
        )
    })
}

/// Items per subset of the given item codes (`L · max(shards, 1) + shard`): an item counts in
/// levels `0..=L` and in its shard.
fn subset_counts<'a>(codes: impl Iterator<Item = &'a u32>, nlev: usize, nsub: usize) -> Vec<u64> {
    let ns = (nsub - nlev).max(1);
    let mut out = vec![0u64; nsub];
    for &c in codes {
        let (deepest, shard) = (c as usize / ns, c as usize % ns);
        for size in &mut out[..=deepest] {
            *size += 1;
        }
        if nsub > nlev {
            out[nlev + shard] += 1;
        }
    }
    out
}

fn scan_in_pool(
    inputs: &ScanInputs,
    cfg: &ScanConfig,
    progress: &dyn Progress,
) -> Result<ScanOutput> {
    let qs = inputs.query_set;
    let (queries, core) = (inputs.queries, inputs.core);
    let d = queries.dim();
    let subs = subsets(cfg.fraction, cfg.min_fraction, cfg.drift_shards)?;
    let nlev = subs.iter().filter(|s| s.kind == SubsetKind::Level).count();
    let nsub = subs.len();
    let sampler = Sampler::new(&subs);
    check_top_m(cfg.top_m)?;
    if qs.query_ids.len() != qs.positives.len() {
        return Err(Error::invalid(format!(
            "query set {:?}: {} query ids but {} positive lists",
            qs.name,
            qs.query_ids.len(),
            qs.positives.len()
        )));
    }
    for src in std::iter::once(core).chain(inputs.pool.iter().copied()) {
        if src.dim() != d {
            return Err(Error::invalid(format!(
                "dimension mismatch: {} has dimension {} but {} has dimension {d}",
                src.path().display(),
                src.dim(),
                queries.path().display()
            )));
        }
    }
    let mut renormalized = 0u64;

    // ---- Queries.
    let nq = qs.query_ids.len();
    let qrow: HashMap<&str, usize> = queries
        .ids()
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let mut missing = Vec::new();
    let mut qrows = Vec::with_capacity(nq);
    for id in &qs.query_ids {
        match qrow.get(id.as_str()) {
            Some(&r) => qrows.push(r),
            None => missing.push(id.as_str()),
        }
    }
    if !missing.is_empty() {
        return Err(Error::file(
            queries.path(),
            format!(
                "{} query id(s) of set {:?} not found, e.g. {:?}",
                missing.len(),
                qs.name,
                &missing[..missing.len().min(5)]
            ),
        ));
    }
    let mut qmat = vec![0f32; nq * d];
    for (i, &r) in qrows.iter().enumerate() {
        queries.read_rows(r, &mut qmat[i * d..(i + 1) * d])?;
    }
    renormalized += check_rows(&mut qmat, d, cfg.normalize, queries, |i| qrows[i])?;
    let kernel = ScoreKernel::new(&qmat, nq, d, block_rows(), Backend::detect());
    let bs = kernel.block_rows();
    let screen = if cfg.screen && cfg.speculate && kernel.backend() == Backend::Avx2Fma {
        Screen::new(&qmat, nq, d, bs)
    } else {
        None
    };

    // ---- Positives (gathered core rows, scored with the same kernel).
    let crow: HashMap<&str, usize> = core
        .ids()
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let mut pos_rows: Vec<Vec<usize>> = Vec::with_capacity(nq);
    for (qi, plist) in qs.positives.iter().enumerate() {
        if plist.is_empty() {
            return Err(Error::invalid(format!(
                "query {:?} of set {:?} has no positive",
                qs.query_ids[qi], qs.name
            )));
        }
        let mut rows = Vec::with_capacity(plist.len());
        for p in plist {
            match crow.get(p.as_str()) {
                Some(&r) => rows.push(r),
                None => {
                    return Err(Error::file(
                        core.path(),
                        format!(
                            "positive id {p:?} of query {:?} is not in the core file",
                            qs.query_ids[qi]
                        ),
                    ))
                }
            }
        }
        pos_rows.push(rows);
    }
    let mut uniq: Vec<usize> = pos_rows.iter().flatten().copied().collect();
    uniq.sort_unstable();
    uniq.dedup();
    let col_of: HashMap<usize, usize> = uniq.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    // pos_score[q][col] for the unique positive rows, block by block.
    let mut pos_scores = vec![0f32; nq * uniq.len()];
    {
        let mut buf = Buffers::new(&kernel, d);
        let mut off = 0u64;
        for (bi, chunk) in uniq.chunks(bs).enumerate() {
            for (i, &r) in chunk.iter().enumerate() {
                core.read_rows(r, &mut buf.block[i * d..(i + 1) * d])?;
            }
            buf.block[chunk.len() * d..].fill(0.0);
            off += check_rows(
                &mut buf.block[..chunk.len() * d],
                d,
                cfg.normalize,
                core,
                |i| chunk[i],
            )?;
            buf.score(&kernel);
            for q in 0..nq {
                for i in 0..chunk.len() {
                    pos_scores[q * uniq.len() + bi * bs + i] = buf.scores[q * bs + i];
                }
            }
        }
        // Positive rows are core rows: counted once, in the core pass below.
        let _ = off;
    }
    let positives: Vec<QueryPositives> = (0..nq)
        .map(|q| {
            let mut v: Vec<(f32, &str, usize)> = pos_rows[q]
                .iter()
                .zip(&qs.positives[q])
                .map(|(&r, id)| (pos_scores[q * uniq.len() + col_of[&r]], id.as_str(), r))
                .collect();
            v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            let mut rows_sorted: Vec<usize> = v.iter().map(|x| x.2).collect();
            rows_sorted.sort_unstable();
            QueryPositives {
                ids: v.iter().map(|x| x.1.to_string()).collect(),
                scores: v.iter().map(|x| x.0).collect(),
                rows_sorted,
                lowest: v.last().map(|x| x.0).expect("≥ 1 positive"),
            }
        })
        .collect();
    drop(pos_scores);

    // ---- Core pass: C_j and core results.
    let ncore = core.rows();
    let results_k = cfg.results_k;
    struct CoreState {
        buf: Buffers,
        hist: Vec<Vec<u64>>,
        ties: Vec<Vec<u64>>,
        res: Vec<Option<TopKeyed>>,
        off: u64,
    }
    let core_blocks = ncore.div_ceil(bs);
    let core_states = run_blocks(
        core_blocks,
        || CoreState {
            buf: Buffers::new(&kernel, d),
            hist: positives
                .iter()
                .map(|p| vec![0; p.scores.len() + 1])
                .collect(),
            ties: positives
                .iter()
                .map(|p| vec![0; p.scores.len() + 1])
                .collect(),
            res: (0..nq)
                .map(|_| results_k.map(|k| TopKeyed::new(k, results_cap(k))))
                .collect(),
            off: 0,
        },
        |st, b| {
            let start = b * bs;
            let n = bs.min(ncore - start);
            core.read_rows(start, &mut st.buf.block[..n * d])?;
            st.buf.block[n * d..].fill(0.0);
            st.off += check_rows(&mut st.buf.block[..n * d], d, cfg.normalize, core, |i| {
                start + i
            })?;
            st.buf.score(&kernel);
            for (q, p) in positives.iter().enumerate() {
                let row = &st.buf.scores[q * bs..q * bs + n];
                let hist = &mut st.hist[q];
                let ties = &mut st.ties[q];
                for (i, &s) in row.iter().enumerate() {
                    if s >= p.lowest && p.rows_sorted.binary_search(&(start + i)).is_err() {
                        let m = p.scores.partition_point(|&x| x >= s);
                        hist[m] += 1;
                        if m > 0 && p.scores[m - 1] == s {
                            ties[m] += 1;
                        }
                    }
                }
                if let Some(r) = &mut st.res[q] {
                    for (i, &s) in row.iter().enumerate() {
                        r.push(s, (start + i) as u64);
                    }
                }
            }
            Ok(())
        },
    )?;
    let mut core_hist: Vec<Vec<u64>> = positives
        .iter()
        .map(|p| vec![0; p.scores.len() + 1])
        .collect();
    let mut core_ties = core_hist.clone();
    let mut results: Vec<Option<TopKeyed>> = (0..nq)
        .map(|_| results_k.map(|k| TopKeyed::new(k, results_cap(k))))
        .collect();
    for st in &core_states {
        renormalized += st.off;
        for q in 0..nq {
            for (a, b) in core_hist[q].iter_mut().zip(&st.hist[q]) {
                *a += b;
            }
            for (a, b) in core_ties[q].iter_mut().zip(&st.ties[q]) {
                *a += b;
            }
            if let (Some(r), Some(o)) = (&mut results[q], &st.res[q]) {
                r.merge(o);
            }
        }
    }
    drop(core_states);

    // ---- Pool: no id twice among the shards (nor a file given twice).
    check_pool_disjoint(&inputs.pool)?;
    // ---- Pool: hash every id once, keep the sampled rows.
    let core_hashes: HashSet<u64> = core.ids().iter().map(|s| id_hash(s, cfg.seed)).collect();
    let mut sampled: Vec<SampledSource> = Vec::with_capacity(inputs.pool.len());
    // id_key of every sampled (level-0) row: the summary's pool fingerprint, sorted below.
    let mut pool_keys: Vec<u64> = Vec::new();
    let mut key_offset = ncore as u64;
    for src in &inputs.pool {
        let rows = src.rows();
        if rows > u32::MAX as usize {
            return Err(Error::file(
                src.path(),
                format!("{rows} rows: split pool files above 2^32 rows into shards"),
            ));
        }
        use rayon::prelude::*;
        let parts: Vec<(Vec<u32>, Vec<u32>, Vec<u64>)> = src
            .ids()
            .par_chunks(1 << 16)
            .enumerate()
            .map(|(ci, ids)| {
                let base = ci << 16;
                let (mut r, mut c, mut k) = (Vec::new(), Vec::new(), Vec::new());
                for (i, id) in ids.iter().enumerate() {
                    let h = id_hash(id, cfg.seed);
                    if core_hashes.contains(&h) && crow.contains_key(id.as_str()) {
                        return Err(Error::file(
                            src.path(),
                            format!(
                                "row {} (id {id:?}) is also in the core file {}: pool and core \
                                 must be disjoint",
                                base + i,
                                core.path().display()
                            ),
                        ));
                    }
                    if let Some(code) = sampler.code(h) {
                        r.push((base + i) as u32);
                        c.push(code);
                        k.push(id_key(id));
                    }
                }
                Ok((r, c, k))
            })
            .collect::<Result<_>>()?;
        let mut s = SampledSource {
            rows: Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum()),
            codes: Vec::new(),
            key_offset,
        };
        s.codes.reserve(s.rows.capacity());
        for (r, c, k) in parts {
            s.rows.extend(r);
            s.codes.extend(c);
            pool_keys.extend(k);
        }
        if s.rows.is_empty() {
            progress.rows_done(rows as u64);
        }
        key_offset += rows as u64;
        sampled.push(s);
    }
    rayon::slice::ParallelSliceMut::par_sort_unstable(&mut pool_keys[..]);
    // S_ℓ: levels nest (deepest level ≥ ℓ), shards partition.
    let subset_sizes = subset_counts(sampled.iter().flat_map(|s| &s.codes), nlev, nsub);
    // Blocks: (source, first sampled index, end, source rows covered for progress).
    let mut blocks: Vec<Block> = Vec::new();
    for (si, s) in sampled.iter().enumerate() {
        let n = s.rows.len();
        let mut covered_to = 0u64;
        let mut a = 0;
        while a < n {
            let b = (a + bs).min(n);
            let end_row = if b == n {
                inputs.pool[si].rows() as u64
            } else {
                s.rows[b - 1] as u64 + 1
            };
            blocks.push((si, a, b, end_row - covered_to));
            covered_to = end_row;
            a = b;
        }
    }

    // ---- Pool pass in stages: pilots spread over the pool, then the rest, each stage
    // starting from floors estimated on every block scanned before it.
    let nshard = nsub - nlev;
    // Reservoirs hold at most the sampled rows: M above S_0 is clamped (same lists, memory
    // bounded by what can be stored); the summary records the M asked for.
    let top_m = cfg.top_m.min(
        usize::try_from(subset_sizes[0])
            .unwrap_or(usize::MAX)
            .max(1),
    );
    let plan = PoolPlan {
        pool: &inputs.pool,
        sampled: &sampled,
        blocks: &blocks,
        d,
        nlev,
        nshard,
        top_m,
        results_k,
        normalize: cfg.normalize,
    };
    let all_positives: Vec<&QueryPositives> = positives.iter().collect();
    let shared_thr = SharedThresholds::new(nq * nsub);
    let stages = if cfg.speculate {
        speculate::stages(blocks.len())
    } else {
        vec![(0..blocks.len()).collect()]
    };
    use rayon::prelude::*;
    // Highest floor applied per (query, subset): what the verification must check.
    let mut floors: Option<Vec<f32>> = None;
    let mut seen = vec![0u64; nsub];
    let mut workers = Vec::new();
    for (k, stage) in stages.iter().enumerate() {
        workers = plan.run(
            &kernel,
            screen.as_ref(),
            &all_positives,
            stage,
            workers,
            floors.as_deref(),
            &shared_thr,
            Some(progress),
        )?;
        if k + 1 == stages.len() {
            break;
        }
        let stage_sizes = subset_counts(
            stage.iter().flat_map(|&b| {
                let (si, a, e, _) = blocks[b];
                &sampled[si].codes[a..e]
            }),
            nlev,
            nsub,
        );
        seen.iter_mut().zip(stage_sizes).for_each(|(s, n)| *s += n);
        let fresh: Vec<f32> = (0..nq)
            .into_par_iter()
            .map_init(Vec::new, |scratch, q| {
                (0..nsub)
                    .map(|i| {
                        let parts: Vec<&TopM> =
                            workers.iter().map(|w| &w.states[q].tops[i]).collect();
                        speculate::floor(&parts, seen[i], subset_sizes[i], top_m, scratch)
                    })
                    .collect::<Vec<f32>>()
            })
            .flatten()
            .collect();
        floors = Some(match floors {
            None => fresh,
            Some(old) => old.iter().zip(&fresh).map(|(a, b)| a.max(*b)).collect(),
        });
    }
    drop(shared_thr);
    let (screened_pairs, rescored_pairs) = pool::screen_counts(&workers);
    let (parts, off) = pool::by_query(workers, nq);
    renormalized += off;
    let mut merged: Vec<PoolQueryState> = parts
        .into_par_iter()
        .zip(&positives)
        .map(|(parts, p)| plan.merge(p, parts))
        .collect();

    // ---- Verify the floors; rescan the queries with a floor that did not hold.
    let mut rescan: Vec<usize> = Vec::new();
    if let Some(f) = &floors {
        rescan = (0..nq)
            .filter(|&q| {
                merged[q]
                    .tops
                    .iter()
                    .enumerate()
                    .any(|(i, t)| !speculate::verified(t, f[q * nsub + i], top_m))
            })
            .collect();
    }
    if !rescan.is_empty() {
        let mut sub_q = vec![0f32; rescan.len() * d];
        for (i, &q) in rescan.iter().enumerate() {
            sub_q[i * d..(i + 1) * d].copy_from_slice(&qmat[q * d..(q + 1) * d]);
        }
        let sub_kernel = ScoreKernel::new(&sub_q, rescan.len(), d, bs, kernel.backend());
        let sub_pos: Vec<&QueryPositives> = rescan.iter().map(|&q| &positives[q]).collect();
        let all: Vec<usize> = (0..blocks.len()).collect();
        let fresh = SharedThresholds::new(rescan.len() * nsub);
        let again = plan.run(
            &sub_kernel,
            None,
            &sub_pos,
            &all,
            Vec::new(),
            None,
            &fresh,
            None,
        )?;
        // Rows were checked (and counted) by the first pass already.
        let (parts, _) = pool::by_query(again, rescan.len());
        for ((&q, parts), p) in rescan.iter().zip(parts).zip(&sub_pos) {
            merged[q] = plan.merge(p, parts);
        }
    }
    drop(qmat);

    // ---- Assemble the summary (in parallel over queries).
    type Finished = (QuerySummary, Option<Vec<(f32, u64)>>);
    let finished: Vec<Finished> = merged
        .into_par_iter()
        .zip(results)
        .enumerate()
        .map(|(q, (mut acc, mut res))| {
            let p = &positives[q];
            if let (Some(r), Some(pr)) = (&mut res, &acc.res) {
                r.merge(pr);
            }
            acc.res = None;
            let core = (&core_hist[q][..], &core_ties[q][..]);
            let summary = query_summary(&qs.query_ids[q], p, acc, core, nlev, nshard);
            (summary, res.map(TopKeyed::into_sorted))
        })
        .collect();
    let mut out_queries = Vec::with_capacity(nq);
    let mut res_lists = Vec::with_capacity(nq);
    for (s, r) in finished {
        out_queries.push(s);
        res_lists.push(r);
    }
    let results = results_k.map(|_| {
        res_lists
            .into_iter()
            .map(|r| {
                r.expect("results reservoir")
                    .into_iter()
                    .map(|(s, key)| (key_to_id(key, core, &inputs.pool, &sampled), s))
                    .collect()
            })
            .collect()
    });

    let mut records = vec![
        InputRecord {
            role: "queries".into(),
            path: queries.path().display().to_string(),
            digest: queries.digest(),
            rows: queries.rows() as u64,
        },
        InputRecord {
            role: "core".into(),
            path: core.path().display().to_string(),
            digest: core.digest(),
            rows: ncore as u64,
        },
    ];
    for src in &inputs.pool {
        records.push(InputRecord {
            role: "pool".into(),
            path: src.path().display().to_string(),
            digest: src.digest(),
            rows: src.rows() as u64,
        });
    }

    Ok(ScanOutput {
        summary: Summary {
            format_version: SUMMARY_FORMAT_VERSION,
            tool_version: crate::TOOL_VERSION.to_string(),
            model: cfg.model.clone(),
            query_set: qs.name.clone(),
            pool_size: cfg.pool_size,
            fraction: cfg.fraction,
            seed: cfg.seed,
            top_m: cfg.top_m,
            core_size: ncore as u64,
            subsets: subs,
            subset_sizes,
            queries: out_queries,
            inputs: records,
            pool_id_hashes: Some(pool_keys),
            ties_known: true,
        },
        results,
        renormalized_rows: renormalized,
        screened_pairs,
        rescored_pairs,
        rescanned_queries: rescan.len() as u64,
        speculative_floors: floors.as_ref().map_or(0, |f| {
            f.iter().filter(|&&x| x > f32::NEG_INFINITY).count() as u64
        }),
    })
}

/// Map a results key back to its id: keys `0..core.rows()` are core rows, then each pool
/// source's rows from its `key_offset`.
fn key_to_id(
    key: u64,
    core: &dyn DescriptorSource,
    pool: &[&dyn DescriptorSource],
    sampled: &[SampledSource],
) -> String {
    if key < core.rows() as u64 {
        return core.ids()[key as usize].clone();
    }
    let si = sampled.partition_point(|s| s.key_offset <= key) - 1;
    pool[si].ids()[(key - sampled[si].key_offset) as usize].clone()
}

/// Counts and top-M lists of one query from its merged state: `K_{j,ℓ} = Σ_{m < j} Σ_{L ≥ ℓ}
/// hist[L][m]` for levels, `Σ_{m < j} hist[shard][m]` for shards, `C_j = Σ_{m < j} core[m]`
/// (1-based `j`); ties `T_j = ties[e + 1]` with `e` the last (0-based) positive of `j`'s block
/// of equal scores, summed over the deepest levels like the counts. `core` = (`hist`, `ties`).
fn query_summary(
    id: &str,
    p: &QueryPositives,
    acc: PoolQueryState,
    (core_hist, core_ties): (&[u64], &[u64]),
    nlev: usize,
    nshard: usize,
) -> QuerySummary {
    let n = p.scores.len();
    let npos1 = n + 1;
    // Level rows: suffix sum over the deepest level, so that row ℓ counts the items of level ℓ.
    let per_level = |h: &[u64]| -> Vec<Vec<u64>> {
        let mut out: Vec<Vec<u64>> = vec![Vec::new(); nlev];
        let mut running = vec![0u64; npos1];
        for l in (0..nlev).rev() {
            for (r, x) in running.iter_mut().zip(&h[l * npos1..(l + 1) * npos1]) {
                *r += x;
            }
            out[l] = running.clone();
        }
        for sh in 0..nshard {
            out.push(h[(nlev + sh) * npos1..(nlev + sh + 1) * npos1].to_vec());
        }
        out
    };
    let per_subset = per_level(&acc.hist);
    let ties_sub = per_level(&acc.ties);
    // Block end (0-based, inclusive) of every positive.
    let mut block_end = vec![0usize; n];
    for j in (0..n).rev() {
        block_end[j] = if j + 1 < n && p.scores[j + 1] == p.scores[j] {
            block_end[j + 1]
        } else {
            j
        };
    }
    // Prefix sums: K_j = Σ_{m < j} hist[m] (1-based j).
    let prefix = |h: &[u64]| -> Vec<u64> {
        h[..n]
            .iter()
            .scan(0u64, |c, &x| {
                *c += x;
                Some(*c)
            })
            .collect()
    };
    let k_sub: Vec<Vec<u64>> = per_subset.iter().map(|h| prefix(h)).collect();
    let c_core = prefix(core_hist);
    QuerySummary {
        id: id.to_string(),
        positives: (0..n)
            .map(|j| PositiveSummary {
                id: p.ids[j].clone(),
                score: p.scores[j],
                core_above: c_core[j],
                pool_above: k_sub.iter().map(|k| k[j]).collect(),
                core_ties: core_ties[block_end[j] + 1],
                pool_ties: ties_sub.iter().map(|t| t[block_end[j] + 1]).collect(),
            })
            .collect(),
        top_scores: acc.tops.into_iter().map(TopM::into_sorted).collect(),
    }
}
