//! Blocked GEMM scan fused with per-query top-M and per-positive counts (docs/method.md §5).
//!
//! One pass over the pool computes, for every query `q` of one or more [`QuerySet`]s:
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
//! 0. Preparation ([`PreparedScan`], once per scan, reused by every chunk of a resumable scan):
//!    the queries of every query set are read into one matrix (several sets share one pass),
//!    the positives are scored and the core pass counts `C_j` and the core ties.
//! 1. Every pool id is hashed once (`sample::id_hash`); rows outside the level-0 range
//!    `[0, t(f))` are skipped entirely (never read, never multiplied); a scan of an increment
//!    (`after`, level 0 = `[t(after), t(f))`, [`increment_subsets`](super::config::increment_subsets))
//!    refuses them instead, naming the first. Each sampled row gets its
//!    deepest level `L` (it belongs to levels `0..=L`) and its shard.
//! 2. Sampled rows are gathered into blocks of `block_rows` rows ([`BLOCK_ROWS`] by default) (f16 converted to f32 by the
//!    source into a reused buffer), checked (finite, unit norm) and scored against all queries
//!    by the [`ScoreKernel`], grouped by item code (deepest level, shard) on the way.
//! 3. Per run of scores of one code and query (`scan::pool`, into the collectors of
//!    `scan::collect`): the scores above the
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
use crate::scan::prepared::PreparedScan;
pub use crate::scan::prepared::QuerySetInput;
use crate::summary::Summary;

pub use crate::scan::block::{NoProgress, Progress};
pub use crate::scan::config::{
    check_top_m, subsets, ScanConfig, BLOCK_ROWS, DEFAULT_DRIFT_SHARDS, DEFAULT_LEVELS,
    DEFAULT_TOP_M, MAX_LEVELS, MAX_SHARDS, MAX_TOP_M,
};
pub use crate::scan::pass::{check_pool_disjoint, PoolScan, Results, SetOutput};
pub use crate::scan::rows::NORM_TOLERANCE;

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

impl ScanInputs<'_> {
    /// The one query set of these inputs, as [`scan_sets`] takes it.
    pub(crate) fn query_set_input(&self) -> QuerySetInput<'_> {
        QuerySetInput {
            set: self.query_set,
            queries: self.queries,
        }
    }
}

impl ScanOutput {
    /// The output of a pass over one query set: its summary and results, with the pass's
    /// counters.
    pub(crate) fn of_one_set(mut pass: PoolScan) -> ScanOutput {
        let one = pass.sets.pop().expect("a pass over one query set");
        ScanOutput {
            summary: one.summary,
            results: one.results,
            renormalized_rows: pass.renormalized_rows,
            rescanned_queries: pass.rescanned_queries,
            speculative_floors: pass.speculative_floors,
            screened_pairs: pass.screened_pairs,
            rescored_pairs: pass.rescored_pairs,
        }
    }

    /// What a front end reports after the scan, one line each, when it happened: the queries
    /// scanned a second time after their pilot blocks (the output is exact either way) and
    /// the rows normalised under `ScanConfig::normalize`.
    pub fn notes(&self) -> Vec<String> {
        let (rescanned_queries, renormalized_rows) =
            (self.rescanned_queries, self.renormalized_rows);
        let mut notes = Vec::new();
        if rescanned_queries > 0 {
            notes.push(format!(
                "note: the pilot blocks were not representative for {rescanned_queries} \
                 query(ies); they were scanned a second time (the output is exact either way; a \
                 pool stored in score-correlated order causes this, and a scan without \
                 speculation avoids the extra pass)"
            ));
        }
        if renormalized_rows > 0 {
            notes.push(format!(
                "warning: {renormalized_rows} row(s) (queries, core and pool) were not unit-norm \
                 and were L2-normalised, as asked"
            ));
        }
        notes
    }
}

/// Run `f` on a local rayon pool of `threads` threads (checked first: `check_threads`), or on
/// the current pool when `None`.
pub fn with_threads<T>(threads: Option<usize>, f: impl FnOnce() -> Result<T> + Send) -> Result<T>
where
    T: Send,
{
    // Refused before any thread starts (100,000 threads would be started, then refused).
    crate::scan::config::check_threads(threads)?;
    match threads {
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| {
                    Error::new(
                        crate::ErrorKind::Io,
                        format!("cannot start {n} threads: {e}"),
                    )
                })?;
            pool.install(f)
        }
        None => f(),
    }
}

/// Scan: see the module documentation. One query set; [`scan_sets`] scans several in one
/// pass.
pub fn scan(inputs: &ScanInputs, cfg: &ScanConfig, progress: &dyn Progress) -> Result<ScanOutput> {
    let out = scan_sets(
        &[inputs.query_set_input()],
        inputs.core,
        &inputs.pool,
        cfg,
        progress,
    )?;
    Ok(ScanOutput::of_one_set(out))
}

/// Scan several query sets in one pass over `pool` (one kernel over all their queries; the
/// pool is read once): one [`SetOutput`] per set, in order. The counters of the output cover
/// the whole scan; `renormalized_rows` includes the query and core rows.
pub fn scan_sets(
    sets: &[QuerySetInput],
    core: &dyn DescriptorSource,
    pool: &[&dyn DescriptorSource],
    cfg: &ScanConfig,
    progress: &dyn Progress,
) -> Result<PoolScan> {
    with_threads(cfg.threads, || {
        // Dimensions first, before any work (the core's and the queries' are checked by the
        // preparation).
        if let Some(first) = sets.first() {
            for src in [core].into_iter().chain(pool.iter().copied()) {
                crate::scan::prepared::check_dim(src, first.queries.dim(), first.queries)?;
            }
        }
        let prepared = PreparedScan::new(sets, core, cfg)?;
        let mut out = prepared.scan_pool(pool, progress)?;
        out.renormalized_rows += prepared.renormalized_rows();
        Ok(out)
    })
}
