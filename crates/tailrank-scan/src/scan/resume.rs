//! Resumable scans: the pool is scanned chunk by chunk (the pool files, in order, cut into
//! consecutive chunks of `chunk_rows` rows: small files share a chunk, large files are split
//! across chunks, so that every chunk but the last has exactly `chunk_rows` rows), each chunk's
//! summary written atomically into a partial folder `OUT.partial/` next to the output. At the
//! end the chunk summaries are merged ([`Summary::merge`]) into the summary of the whole pool,
//! which the caller writes to `OUT` before removing the partial folder
//! ([`remove_partial`]).
//!
//! A scan killed at any point (SIGKILL, power loss) leaves only complete chunk folders (each
//! is written into a temporary sibling and renamed) plus, possibly, temporary entries that a
//! resumed run deletes. While it runs, [`scan_resumable`] holds the lock `OUT.partial.lock`
//! (`crate::atomic::Lock`): a second scan into the same folder is refused with the pid of the
//! first, so "left by an interrupted run" is only said of a folder no live process writes. [`scan_resumable`] with `resume = true` checks that the partial folder
//! was made from the same inputs and options (digests of queries, core, ground truth and every
//! pool file, full-content [`rows_digest`]s of the queries and core; f, seed, levels, drift
//! shards, M, model, query set, normalisation, results k and the chunk size), reuses every
//! finished chunk (after verifying its checksums, its range digest and the [`rows_digest`] of
//! its rows recorded before it was scanned: a file digest reads only the ends of the file, so
//! rows rewritten in the middle would otherwise be reused stale), scans the others, and returns
//! a summary IDENTICAL to an uninterrupted scan: counts
//! and subset sizes are sums, top-M lists are value multisets, the positives' scores come from
//! the same kernel whatever the chunk, so `merge(scan(chunk₁), …, scan(chunkₙ)) = scan(pool)`.
//! The queries, the positives' scores and the core pass do not depend on the pool: they are
//! prepared once ([`PreparedScan`], when the first chunk needs scanning) and every chunk is a
//! pool pass of it ([`PreparedScan::scan_pool`]); a chunk's summary carries the core counts.
//! The merged summary records one `pool` input per pool file (its path, whole-file digest and
//! rows), exactly as a single-pass scan does.
//!
//! Layout of `OUT.partial/`:
//!
//! * `plan.json`: format `tailrank-scan-partial`, version 2, the identity of the scan (inputs
//!   and options, see above) and the list of chunks (`name`, and `parts`: `pool_index`,
//!   `start`, `end`, `digest` of the [`RowRange`] view, one part per file the chunk touches);
//! * `chunk-NNNNNN/` for every finished chunk: `summary/` (a summary folder, format of
//!   `docs/reference/summary-format.md`), `chunk.json` (the chunk's plan entry, the [`rows_digest`] of
//!   each part and the xxh3 of `results.json`) and, when top-k results are requested, `results.json` (ILIAS results JSON
//!   of core ∪ chunk).
//!
//! Results (top-k over core ∪ pool): the global top-k in the order (score descending, core rows
//! first, then pool rows in input order) is contained in the union of the chunks' top-k lists
//! (an item of the global top-k has no more items above it within its own chunk), so merging
//! the lists in that order and keeping k gives exactly the single-pass lists.

use crate::atomic;
use crate::error::{Error, IoContext, Result};
use crate::formats::descriptors::{DescriptorSource, RowRange};
use crate::scan::chunks::{
    check_identity, chunk_rows_digests, identity, load_chunk, merge_results, read_plan,
    store_chunk, ChunkOutput, Plan,
};
pub use crate::scan::chunks::{
    plan_chunks, rows_digest, Chunk, ChunkPart, ResultLists, DEFAULT_CHUNK_ROWS, PARTIAL_FORMAT,
    PARTIAL_VERSION, PLAN,
};
use crate::scan::engine::{
    with_threads, PoolScan, Progress, ScanConfig, ScanInputs, ScanOutput, SetOutput,
};
use crate::scan::prepared::{PreparedScan, QuerySetInput};
use crate::summary::{InputRecord, Summary, POOL_ROLE};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The partial folder of output `out`: `OUT.partial` (a sibling of `OUT`).
/// (`.tailrank-H.partial` when `OUT.partial` would not fit in a file name,
/// [`atomic::names`]).
pub fn partial_dir_for(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "summary".into());
    out.with_file_name(atomic::names::entry_name(&name, ".partial"))
}

/// Options of a resumable scan.
#[derive(Debug, Clone)]
pub struct ResumeOptions {
    /// The partial folder (usually [`partial_dir_for`] of the output).
    pub partial_dir: PathBuf,
    /// Pool rows per chunk (files with more rows are cut into row ranges).
    pub chunk_rows: usize,
    /// Continue an existing partial folder; without it an existing folder is an error.
    pub resume: bool,
    /// Save the last chunk in the partial folder too. A caller that writes the output as soon
    /// as the scan returns and then removes the folder (`ScanFiles::run`, `tailrank ilias`)
    /// sets it to `false`: the last chunk's summary (the whole summary when the pool is one
    /// chunk) is then written once, as the output, instead of twice, and its rows are not
    /// digested. A kill between the last chunk and the output then loses that one chunk, as
    /// a kill during any chunk does.
    pub store_last_chunk: bool,
}

/// The fewest pool rows a chunk holds (a smaller `chunk_rows` is raised to it): each chunk is
/// a pool pass and a folder of files written, digested and merged on its own, about 2–3 ms on
/// ext4, so chunks of a few rows only slow a scan (3,000 one-row chunks took 6–19 s on an idle
/// 2-core machine) and resume no better.
pub const MIN_CHUNK_ROWS: usize = 32;

impl ResumeOptions {
    /// The rows per chunk the scan uses: `chunk_rows` raised to [`MIN_CHUNK_ROWS`] (0 stays 0,
    /// which the chunk plan refuses).
    pub fn effective_chunk_rows(&self) -> usize {
        if self.chunk_rows == 0 {
            0
        } else {
            self.chunk_rows.max(MIN_CHUNK_ROWS)
        }
    }
}

/// What [`scan_resumable`] did besides producing the output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumeReport {
    /// Chunks reused from the partial folder.
    pub reused: usize,
    /// Chunks scanned by this run.
    pub scanned: usize,
    /// Entries of the partial folder that were deleted: leftovers of interrupted writes, and
    /// chunks that could not be reused (each with the reason).
    pub discarded: Vec<String>,
    /// The `chunk_rows` asked for, when it was raised to [`MIN_CHUNK_ROWS`].
    pub chunk_rows_raised_from: Option<usize>,
}

/// Rewrite the row number of an engine error about a chunk (`"row N (id …)"`, relative to the
/// view) into the row of the file (`N + start`). Errors of the inner source already use file
/// rows and do not start with `row `.
fn absolute_row(e: Error, src: &dyn DescriptorSource, start: usize) -> Error {
    match e {
        Error::File { kind, path, msg } if start > 0 && path == src.path() => {
            let rest = msg.strip_prefix("row ");
            let parsed = rest.and_then(|r| {
                let digits: String = r.chars().take_while(|c| c.is_ascii_digit()).collect();
                let n: usize = digits.parse().ok()?;
                Some((n, r[digits.len()..].to_string()))
            });
            match parsed {
                Some((n, tail)) => Error::File {
                    kind,
                    path,
                    msg: format!("row {}{tail}", n + start),
                },
                None => Error::File { kind, path, msg },
            }
        }
        other => other,
    }
}

/// Remove the partial folder (after the merged summary has been written).
pub fn remove_partial(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).at(dir)?;
    }
    Ok(())
}

/// What a caller does when the output of a scan could not be written (`e`): the partial
/// folder is removed if it holds no finished chunk, so that a plain rerun is not refused for a
/// folder with nothing to reuse (a one-chunk scan whose chunk went only to the output,
/// [`ResumeOptions::store_last_chunk`]); one with chunks stays for a resume. Returns `e`.
pub fn output_failed(dir: &Path, e: Error) -> Error {
    if !has_chunks(dir) {
        // Best effort: the error that matters is the output's.
        let _ = remove_partial(dir);
    }
    e
}

/// Scan the pool chunk by chunk with a partial folder (see the module docs). Returns the
/// merged output (identical to [`scan`] over the whole pool) and what was reused. The partial
/// folder is left in place: remove it with [`remove_partial`] once the output is written.
pub fn scan_resumable(
    inputs: &ScanInputs,
    cfg: &ScanConfig,
    opts: &ResumeOptions,
    progress: &dyn Progress,
) -> Result<(ScanOutput, ResumeReport)> {
    let (out, report) = scan_sets_resumable(
        &[inputs.query_set_input()],
        inputs.core,
        &inputs.pool,
        cfg,
        opts,
        progress,
    )?;
    Ok((ScanOutput::of_one_set(out), report))
}

/// [`scan_resumable`] for several query sets scanned in one pass (as
/// [`scan_sets`](crate::scan::engine::scan_sets)): a chunk folder holds one summary (and
/// results file) per set, `summary/`, `summary-1/`, … The output's `renormalized_rows`
/// includes the query and core rows.
pub fn scan_sets_resumable(
    sets: &[QuerySetInput],
    core: &dyn DescriptorSource,
    pool: &[&dyn DescriptorSource],
    cfg: &ScanConfig,
    opts: &ResumeOptions,
    progress: &dyn Progress,
) -> Result<(PoolScan, ResumeReport)> {
    let dir = &opts.partial_dir;
    crate::scan::engine::check_top_m(cfg.top_m)?;
    crate::scan::config::check_threads(cfg.threads)?;
    if sets.is_empty() {
        return Err(Error::option("no query set to scan"));
    }
    let pool_digests: Vec<String> = pool.iter().map(|p| p.digest()).collect();
    let chunk_rows = opts.effective_chunk_rows();
    let chunks = plan_chunks(pool, &pool_digests, chunk_rows)?;
    // Pool shards must be disjoint as a whole, not only within each chunk.
    crate::scan::engine::check_pool_disjoint(pool)?;
    let queries_rows: Vec<String> = sets
        .iter()
        .map(|s| rows_digest(s.queries, 0, s.queries.rows()))
        .collect::<Result<_>>()?;
    let core_rows = rows_digest(core, 0, core.rows())?;
    let ident = identity(
        sets,
        core,
        pool,
        cfg,
        chunk_rows,
        &pool_digests,
        &queries_rows,
        &core_rows,
    );
    let mut report = ResumeReport {
        chunk_rows_raised_from: (chunk_rows != opts.chunk_rows).then_some(opts.chunk_rows),
        ..ResumeReport::default()
    };

    // Held until the chunks are merged: a second scan into the same partial folder is refused
    // (naming this process) instead of being told the folder was left by an interrupted run.
    let _lock = atomic::Lock::acquire(dir)?;
    if !opts.resume && holds_nothing_to_resume(dir) {
        // Killed before its first chunk was saved: nothing is lost by starting over, and a
        // plain rerun should not have to ask for --resume.
        remove_partial(dir)?;
    }
    if dir.is_dir() && !dir.join(PLAN).exists() && !holds_only_partial_names(dir) {
        // Not a partial folder tailrank left (no plan, foreign entries): a resume would
        // delete what it holds.
        return Err(Error::output(
            dir,
            format!(
                "exists and holds no {PLAN} but other entries: not the partial folder of an \
                 interrupted scan, which tailrank would keep there; refusing to delete its \
                 contents: move it away or choose another output"
            ),
        ));
    }
    if dir.exists() && !opts.resume {
        return Err(Error::output(
            dir,
            "a partial scan is in the way (left by an interrupted run): rerun with `--resume` \
             to continue it, or delete this folder to start over",
        ));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(Error::output(
            dir,
            "exists but is not a folder (expected the partial folder of a scan)",
        ));
    }
    let plan = Plan {
        format: PARTIAL_FORMAT.into(),
        format_version: PARTIAL_VERSION,
        tool_version: crate::TOOL_VERSION.into(),
        identity: ident,
        chunks: chunks.clone(),
    };
    let existing = if dir.exists() { read_plan(dir)? } else { None };
    match &existing {
        Some(old) => {
            check_identity(dir, &old.identity, &plan.identity)?;
            if old.chunks != plan.chunks {
                return Err(Error::mismatch_at(
                    dir.join(PLAN),
                    format!(
                        "cannot resume: the chunks of the partial scan differ from this run's; \
                         delete {} to start over",
                        dir.display()
                    ),
                ));
            }
        }
        None => {
            std::fs::create_dir_all(dir).at(dir)?;
            let text = serde_json::to_string_pretty(&plan)
                .map_err(|e| Error::internal(format!("cannot serialise plan: {e}")))?;
            atomic::write_bytes(&dir.join(PLAN), text.as_bytes())?;
        }
    }
    // Leftovers: temporary entries of interrupted writes, and anything not in the plan.
    let names: HashSet<&str> = chunks.iter().map(|c| c.name.as_str()).collect();
    let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .at(dir)?
        .map(|e| {
            e.map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .at(dir)
        })
        .collect::<Result<_>>()?;
    entries.sort();
    for (name, path) in entries {
        if name == PLAN || names.contains(name.as_str()) {
            continue;
        }
        if path.is_dir() {
            std::fs::remove_dir_all(&path).at(&path)?;
        } else {
            std::fs::remove_file(&path).at(&path)?;
        }
        report
            .discarded
            .push(format!("{name} (leftover of an interrupted write)"));
    }

    let result = with_threads(cfg.threads, || {
        scan_chunks(
            (sets, core, pool),
            cfg,
            (dir, opts.store_last_chunk),
            &chunks,
            &pool_digests,
            progress,
            &mut report,
        )
    });
    if result.is_err() && !has_chunks(dir) {
        // Nothing worth keeping (e.g. bad input found in the first chunk): leave no folder that
        // would make the next run ask for --resume.
        let _ = remove_partial(dir);
    }
    result.map(|out| (out, report))
}

/// Whether `dir` is a partial folder left without a finished chunk: a folder holding only
/// the plan, temporary entries of interrupted writes and unfinished chunks (never anything
/// else, so that a folder a user made is not deleted).
fn holds_nothing_to_resume(dir: &Path) -> bool {
    dir.is_dir() && !has_chunks(dir) && holds_only_partial_names(dir)
}

/// Whether every entry of `dir` has a name a scan puts in its partial folder (the plan, the
/// chunks, their staging folders and locks).
fn holds_only_partial_names(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok()).all(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n == PLAN
                || n.starts_with("chunk-")
                || (n.starts_with(PLAN) && (n.contains(".tmp") || n.ends_with(atomic::LOCK_SUFFIX)))
        })
    })
}

/// Test hook: with `TAILRANK_FAILPOINT=chunk:N` in the environment, the process aborts (as if
/// killed) right after chunk `N` (from 0) is stored in the partial folder. Used by the tests
/// that need a partial folder as a killed scan leaves it.
fn abort_after_stored_chunk(index: usize) {
    if atomic::test_hook_point("chunk") == Some(index) {
        std::process::abort();
    }
}

/// Whether the partial folder holds at least one finished chunk.
fn has_chunks(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok()).any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("chunk-") && !n.contains(".tmp") && !n.ends_with(atomic::LOCK_SUFFIX)
        })
    })
}

/// Chunk summaries merged in batches: [`Summary::merge`] of the running total and up to
/// [`MergeBatch::MAX_PARTS`] pending summaries (or [`MergeBatch::MAX_BYTES`] of top lists and
/// fingerprints), so that n small chunks cost O(n · n / MAX_PARTS) rather than O(n²) while
/// large chunk summaries are still merged one by one. The merge is n-ary, so the result is the
/// same as merging the chunks two by two.
#[derive(Default)]
struct MergeBatch {
    total: Option<Summary>,
    pending: Vec<Summary>,
    pending_bytes: usize,
}

impl MergeBatch {
    const MAX_PARTS: usize = 64;
    const MAX_BYTES: usize = 64 << 20;

    /// Bytes of the arrays a merge copies: top lists (f32) and pool fingerprints (u64).
    fn bytes(s: &Summary) -> usize {
        let tops: usize = s
            .queries
            .iter()
            .flat_map(|q| &q.top_scores)
            .map(|t| t.len())
            .sum();
        tops * 4 + s.pool_id_hashes.as_ref().map_or(0, |h| h.len() * 8)
    }

    fn push(&mut self, s: Summary) -> Result<()> {
        self.pending_bytes += Self::bytes(&s);
        self.pending.push(s);
        if self.pending.len() >= Self::MAX_PARTS || self.pending_bytes >= Self::MAX_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let mut parts: Vec<Summary> = self.total.take().into_iter().collect();
        parts.append(&mut self.pending);
        self.pending_bytes = 0;
        self.total = match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Summary::merge(&parts)?),
        };
        Ok(())
    }

    fn finish(mut self) -> Result<Option<Summary>> {
        self.flush()?;
        Ok(self.total)
    }
}

/// Scan one chunk of the pool (`pool[p.pool_index]` rows `p.start..p.end` of each part) with
/// the prepared queries and core; errors name the row of the file.
fn scan_chunk(
    prepared: &PreparedScan,
    (sets, pool, pool_digests): (&[QuerySetInput], &[&dyn DescriptorSource], &[String]),
    chunk: &Chunk,
    progress: &dyn Progress,
) -> Result<ChunkOutput> {
    let views: Vec<RowRange> = chunk
        .parts
        .iter()
        .map(|p| {
            RowRange::new(
                pool[p.pool_index],
                &pool_digests[p.pool_index],
                p.start,
                p.end,
            )
        })
        .collect::<Result<_>>()?;
    let views: Vec<&dyn DescriptorSource> =
        views.iter().map(|v| v as &dyn DescriptorSource).collect();
    let out = prepared.scan_pool(&views, progress).map_err(|e| {
        // A chunk holds at most one range per file: the error's file names the part.
        chunk
            .parts
            .iter()
            .fold(e, |e, p| absolute_row(e, pool[p.pool_index], p.start))
    })?;
    let (mut summaries, mut results) = (Vec::new(), Vec::new());
    for (one, s) in out.sets.into_iter().zip(sets) {
        summaries.push(one.summary);
        results.push(
            one.results
                .map(|lists| s.set.query_ids.iter().cloned().zip(lists).collect()),
        );
    }
    Ok(ChunkOutput {
        summaries,
        results,
        // Recorded as a whole scan of the chunk counts them: query, core and chunk rows.
        renormalized_rows: prepared.renormalized_rows() + out.renormalized_rows,
        rescanned_queries: out.rescanned_queries,
        speculative_floors: out.speculative_floors,
        screened: (out.screened_pairs, out.rescored_pairs),
    })
}

/// The chunk loop of [`scan_sets_resumable`] (plan written, leftovers removed).
fn scan_chunks(
    (sets, core, pool): (
        &[QuerySetInput],
        &dyn DescriptorSource,
        &[&dyn DescriptorSource],
    ),
    cfg: &ScanConfig,
    (dir, store_last_chunk): (&Path, bool),
    chunks: &[Chunk],
    pool_digests: &[String],
    progress: &dyn Progress,
    report: &mut ResumeReport,
) -> Result<PoolScan> {
    let want_results = cfg.results_k.is_some();
    let mut chunk_cfg = cfg.clone();
    chunk_cfg.pool_size = None;
    // The queries, positives and core pass are the same for every chunk: prepared once, when
    // the first chunk needs scanning (not at all when every chunk is reused).
    let prepared: std::cell::OnceCell<PreparedScan> = std::cell::OnceCell::new();
    let prepare = || -> Result<&PreparedScan> {
        if let Some(p) = prepared.get() {
            return Ok(p);
        }
        let p = PreparedScan::new(sets, core, &chunk_cfg)?;
        Ok(prepared.get_or_init(|| p))
    };
    let mut acc: Vec<MergeBatch> = (0..sets.len()).map(|_| MergeBatch::default()).collect();
    let mut all_results: Vec<Vec<ResultLists>> = vec![Vec::new(); sets.len()];
    let mut chunk_renormalized = Vec::with_capacity(chunks.len());
    let (mut rescanned, mut floors, mut screened) = (0u64, 0u64, (0u64, 0u64));
    for (ci, chunk) in chunks.iter().enumerate() {
        let store = store_last_chunk || ci + 1 < chunks.len();
        let cdir = dir.join(&chunk.name);
        let mut loaded = None;
        if cdir.exists() {
            match load_chunk(dir, chunk, pool, sets.len(), want_results) {
                Ok(x) => loaded = Some(x),
                Err(e) => {
                    std::fs::remove_dir_all(&cdir).at(&cdir)?;
                    report
                        .discarded
                        .push(format!("{} (unusable, scanned again: {e})", chunk.name));
                }
            }
        }
        let part = match loaded {
            Some(x) => {
                report.reused += 1;
                progress.rows_done(chunk.rows() as u64);
                x
            }
            None => {
                // Digested before the scan: rows rewritten while it runs make the next resume
                // scan the chunk again rather than trust it.
                let digests = store.then(|| chunk_rows_digests(pool, chunk)).transpose()?;
                let out = scan_chunk(prepare()?, (sets, pool, pool_digests), chunk, progress)?;
                if let Some(digests) = digests {
                    store_chunk(dir, chunk, digests, &out)?;
                    abort_after_stored_chunk(ci);
                }
                report.scanned += 1;
                out
            }
        };
        chunk_renormalized.push(part.renormalized_rows);
        rescanned += part.rescanned_queries;
        floors += part.speculative_floors;
        screened.0 += part.screened.0;
        screened.1 += part.screened.1;
        for (i, (summary, results)) in part.summaries.into_iter().zip(part.results).enumerate() {
            if let Some(r) = results {
                all_results[i].push(r);
            }
            acc[i].push(summary).map_err(|e| {
                Error::at(
                    e.kind(),
                    dir.join(&chunk.name),
                    format!("cannot merge: {e}"),
                )
            })?;
        }
    }
    // Each chunk's count includes the query and core rows: count those once.
    let renormalized = if cfg.normalize && chunks.len() > 1 {
        let base = prepare()?.renormalized_rows();
        base + chunk_renormalized.iter().map(|c| c - base).sum::<u64>()
    } else {
        chunk_renormalized.iter().sum()
    };
    let mut out_sets = Vec::with_capacity(sets.len());
    for ((batch, parts), s) in acc.into_iter().zip(&all_results).zip(sets) {
        let mut summary = batch
            .finish()
            .map_err(|e| Error::at(e.kind(), dir, format!("cannot merge the chunks: {e}")))?
            .ok_or_else(|| Error::option("no pool input to scan"))?;
        // One pool record per file, as a single-pass scan records them.
        summary.inputs.retain(|r| r.role != POOL_ROLE);
        for (src, d) in pool.iter().zip(pool_digests) {
            summary.inputs.push(InputRecord {
                role: POOL_ROLE.into(),
                path: src.path().display().to_string(),
                digest: d.clone(),
                rows: src.rows() as u64,
            });
        }
        summary.pool_size = cfg.pool_size;
        summary.tool_version = crate::TOOL_VERSION.to_string();
        summary.validate()?;
        let results = match cfg.results_k {
            Some(k) => Some(merge_results(s.set, core, parts, k)?),
            None => None,
        };
        out_sets.push(SetOutput { summary, results });
    }
    Ok(PoolScan {
        sets: out_sets,
        renormalized_rows: renormalized,
        rescanned_queries: rescanned,
        speculative_floors: floors,
        screened_pairs: screened.0,
        rescored_pairs: screened.1,
    })
}
