//! The prepared scan: everything that does not depend on the pool, computed once and reused
//! by every pool pass (a whole pool, or each chunk of a resumable scan).
//!
//! [`PreparedScan::new`] reads the queries of one or more query sets (each from its own
//! descriptor file, all of one dimension; the sets are scanned together, one kernel over all
//! their queries, so the pool is read once for all of them), scores every query's positives,
//! and runs the core pass: `C_j` and the core ties `T^C_j` per positive, and the core rows of
//! the results (docs/method.md §5). The pool passes are
//! [`PreparedScan::scan_pool`](super::pass).

use super::block::{run_blocks, Buffers, Codes, Sampler};
use super::collect::{CoreCounts, QueryPositives};
use super::config::{check_top_m, scan_subsets, ScanConfig};
use super::kernel::{Backend, ScoreKernel};
use super::rows::check_rows;
use super::screen::{Screen, ScreenIsa};
use crate::error::{Error, Result};
use crate::formats::descriptors::DescriptorSource;
use crate::formats::gt::QuerySet;
use crate::summary::Subset;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// One query set to scan and the descriptors holding (at least) its queries.
#[derive(Clone, Copy)]
pub struct QuerySetInput<'a> {
    pub set: &'a QuerySet,
    pub queries: &'a dyn DescriptorSource,
}

/// The pool-independent part of a scan (see the module documentation).
pub struct PreparedScan<'a> {
    pub(super) cfg: ScanConfig,
    pub(super) sets: Vec<QuerySetInput<'a>>,
    /// Queries of set `i`: `ranges[i]` in the prepared order (sets in order, then queries).
    pub(super) ranges: Vec<Range<usize>>,
    pub(super) core: &'a dyn DescriptorSource,
    /// Core row of every core id (pool rows must not repeat one).
    pub(super) core_rows: HashMap<String, usize>,
    /// The ids of the scanned queries (pool rows must not repeat one either).
    pub(super) query_ids: HashSet<String>,
    pub(super) subsets: Vec<Subset>,
    pub(super) codes: Codes,
    pub(super) sampler: Sampler,
    pub(super) d: usize,
    /// The queries, `nq × D` row-major (checked, normalised with `normalize`).
    pub(super) qmat: Vec<f32>,
    pub(super) kernel: ScoreKernel,
    pub(super) screen: Option<Screen>,
    pub(super) positives: Vec<QueryPositives>,
    pub(super) core_counts: CoreCounts,
    /// Query and core rows renormalised (0 without `normalize`).
    pub(super) renormalized: u64,
}

impl<'a> PreparedScan<'a> {
    /// Check the options and the query sets, read the queries, score the positives and run
    /// the core pass (on the current rayon pool).
    pub fn new(
        sets: &[QuerySetInput<'a>],
        core: &'a dyn DescriptorSource,
        cfg: &ScanConfig,
    ) -> Result<Self> {
        let first = sets
            .first()
            .ok_or_else(|| Error::option("no query set to scan"))?;
        let d = first.queries.dim();
        check_top_m(cfg.top_m)?;
        crate::scan::config::check_threads(cfg.threads)?;
        let subs = scan_subsets(cfg)?;
        for s in sets {
            let qs = s.set;
            if qs.query_ids.len() != qs.positives.len() {
                return Err(Error::option(format!(
                    "query set {:?}: {} query ids but {} positive lists",
                    qs.name,
                    qs.query_ids.len(),
                    qs.positives.len()
                )));
            }
        }
        for src in sets.iter().map(|s| s.queries).chain([core]) {
            check_dim(src, d, first.queries)?;
        }
        let mut renormalized = 0u64;

        // ---- Queries of every set, in order.
        let nq: usize = sets.iter().map(|s| s.set.query_ids.len()).sum();
        let mut qmat = vec![0f32; nq * d];
        let mut ranges = Vec::with_capacity(sets.len());
        let mut at = 0usize;
        for s in sets {
            let (qs, queries) = (s.set, s.queries);
            let qrow = row_of_id(queries)?;
            let mut missing = Vec::new();
            let mut qrows = Vec::with_capacity(qs.query_ids.len());
            for id in &qs.query_ids {
                match qrow.get(id.as_str()) {
                    Some(&r) => qrows.push(r),
                    None => missing.push(id.as_str()),
                }
            }
            if !missing.is_empty() {
                return Err(Error::mismatch_at(
                    queries.path(),
                    format!(
                        "{} query id(s) of set {:?} not found, e.g. {:?}",
                        missing.len(),
                        qs.name,
                        &missing[..missing.len().min(5)]
                    ),
                ));
            }
            let mine = &mut qmat[at * d..(at + qrows.len()) * d];
            for (i, &r) in qrows.iter().enumerate() {
                queries.read_rows(r, &mut mine[i * d..(i + 1) * d])?;
            }
            renormalized += check_rows(mine, d, cfg.normalize, queries, |i| qrows[i])?;
            ranges.push(at..at + qrows.len());
            at += qrows.len();
        }
        let kernel = ScoreKernel::new(&qmat, nq, d, cfg.rows_per_block(), cfg.kernel_backend());
        // The screen bounds scores only in stages with floors, which speculation makes.
        let screen = if cfg.screen && cfg.speculate && kernel.backend() == Backend::Avx2Fma {
            let widest = cfg.screen_isa.unwrap_or(ScreenIsa::AmxInt8);
            Screen::with_isa(&qmat, nq, d, kernel.block_rows(), widest)
        } else {
            None
        };

        let core_rows = row_of_id(core)?;
        let positives = score_positives(sets, core, &core_rows, &kernel, cfg.normalize)?;
        let (core_counts, off) = core_pass(core, &kernel, &positives, cfg)?;
        renormalized += off;
        Ok(PreparedScan {
            cfg: cfg.clone(),
            sets: sets.to_vec(),
            ranges,
            core,
            core_rows,
            query_ids: sets
                .iter()
                .flat_map(|s| s.set.query_ids.iter().cloned())
                .collect(),
            codes: Codes::of(&subs),
            sampler: Sampler::new(&subs),
            subsets: subs,
            d,
            qmat,
            kernel,
            screen,
            positives,
            core_counts,
            renormalized,
        })
    }

    /// The options the scan was prepared with.
    pub fn config(&self) -> &ScanConfig {
        &self.cfg
    }

    /// Query and core rows renormalised by the preparation (0 without `normalize`).
    pub fn renormalized_rows(&self) -> u64 {
        self.renormalized
    }

    /// Check that `src` has the scan's dimension (named against the first queries file).
    pub fn check_dim(&self, src: &dyn DescriptorSource) -> Result<()> {
        check_dim(src, self.d, self.sets[0].queries)
    }
}

/// `src` must have dimension `d`, that of `queries`.
pub(super) fn check_dim(
    src: &dyn DescriptorSource,
    d: usize,
    queries: &dyn DescriptorSource,
) -> Result<()> {
    if src.dim() != d {
        return Err(Error::mismatch(format!(
            "dimension mismatch: {} has dimension {} but {} has dimension {d}",
            src.path().display(),
            src.dim(),
            queries.path().display()
        )));
    }
    Ok(())
}

/// Every query's positives (core rows) scored with `kernel`, sorted by score descending (ties
/// by id). The positive rows are checked (and, with `normalize`, normalised) here and again in
/// the core pass, which is where they are counted.
/// The row of each id of `src` (the last row, were an id repeated).
fn row_of_id(src: &dyn DescriptorSource) -> Result<HashMap<String, usize>> {
    Ok(src
        .ids()
        .to_vec()?
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s, i))
        .collect())
}

fn score_positives(
    sets: &[QuerySetInput],
    core: &dyn DescriptorSource,
    core_rows: &HashMap<String, usize>,
    kernel: &ScoreKernel,
    normalize: bool,
) -> Result<Vec<QueryPositives>> {
    let (d, bs) = (core.dim(), kernel.block_rows());
    let mut pos_rows: Vec<Vec<usize>> = Vec::new();
    let mut pos_ids: Vec<&[String]> = Vec::new();
    for s in sets {
        let qs = s.set;
        for (qi, plist) in qs.positives.iter().enumerate() {
            if plist.is_empty() {
                return Err(Error::input_msg(format!(
                    "query {:?} of set {:?} has no positive",
                    qs.query_ids[qi], qs.name
                )));
            }
            let mut rows = Vec::with_capacity(plist.len());
            for p in plist {
                match core_rows.get(p.as_str()) {
                    Some(&r) => rows.push(r),
                    None => {
                        return Err(Error::mismatch_at(
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
            pos_ids.push(plist);
        }
    }
    let nq = pos_rows.len();
    let mut uniq: Vec<usize> = pos_rows.iter().flatten().copied().collect();
    uniq.sort_unstable();
    uniq.dedup();
    let col_of: HashMap<usize, usize> = uniq.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    // pos_scores[q][col] for the unique positive rows, block by block.
    let mut pos_scores = vec![0f32; nq * uniq.len()];
    let mut buf = Buffers::new(kernel, d);
    for (bi, chunk) in uniq.chunks(bs).enumerate() {
        for (i, &r) in chunk.iter().enumerate() {
            core.read_rows(r, &mut buf.block[i * d..(i + 1) * d])?;
        }
        buf.block[chunk.len() * d..].fill(0.0);
        // Counted in the core pass, which checks every core row.
        check_rows(&mut buf.block[..chunk.len() * d], d, normalize, core, |i| {
            chunk[i]
        })?;
        buf.score(kernel);
        for q in 0..nq {
            for i in 0..chunk.len() {
                pos_scores[q * uniq.len() + bi * bs + i] = buf.scores[q * bs + i];
            }
        }
    }
    Ok((0..nq)
        .map(|q| {
            let mut v: Vec<(f32, &str, usize)> = pos_rows[q]
                .iter()
                .zip(pos_ids[q])
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
        .collect())
}

/// The core pass: every core row scored against every query, into [`CoreCounts`]. Returns the
/// counts and the number of core rows renormalised.
fn core_pass(
    core: &dyn DescriptorSource,
    kernel: &ScoreKernel,
    positives: &[QueryPositives],
    cfg: &ScanConfig,
) -> Result<(CoreCounts, u64)> {
    let (d, bs, ncore) = (core.dim(), kernel.block_rows(), core.rows());
    struct CoreState {
        buf: Buffers,
        counts: CoreCounts,
        off: u64,
    }
    let states = run_blocks(
        ncore.div_ceil(bs),
        || CoreState {
            buf: Buffers::new(kernel, d),
            counts: CoreCounts::new(positives, cfg.results_k),
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
            st.buf.score(kernel);
            for (q, p) in positives.iter().enumerate() {
                st.counts
                    .add(q, p, start, &st.buf.scores[q * bs..q * bs + n]);
            }
            Ok(())
        },
    )?;
    let mut counts = CoreCounts::new(positives, cfg.results_k);
    let mut off = 0;
    for st in &states {
        off += st.off;
        counts.merge(&st.counts);
    }
    Ok((counts, off))
}
