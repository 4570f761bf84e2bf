//! A pool pass of a [`PreparedScan`]: sample the pool, cut it into blocks, drive the blocks
//! through the collectors in stages (speculation), verify the floors, rescan where one did not
//! hold, and assemble one summary per query set (steps 1 and 3–5 of the algorithm in
//! [`engine`](super::engine)).

use super::block::{check_cancelled, cut_blocks, Block, CancelOnly, Progress, SampledSource};
use super::collect::{query_summary, QueryCollector, QueryPositives, RELEVANT_KEY};
use super::kernel::ScoreKernel;
use super::pool::{self, PoolPlan, WorkerStates};
use super::prepared::PreparedScan;
use super::speculate;
use super::topm::{SharedThresholds, TopKeyed, TopM};
use crate::error::{Error, Result};
use crate::formats::descriptors::DescriptorSource;
use crate::formats::ids::id_key;
use crate::formats::row_ids::{find_duplicate_rows, RowIds};
use crate::summary::{InputRecord, QuerySummary, Summary, POOL_ROLE, SUMMARY_FORMAT_VERSION};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Top-k `(db id, score)` lists, one per query of a set (query-set order), best first.
pub type Results = Vec<Vec<(String, f32)>>;

/// What one query set gets from a pool pass.
#[derive(Debug, Clone)]
pub struct SetOutput {
    pub summary: Summary,
    /// With `results_k`: top-k over core ∪ scanned pool per query; equal scores in input
    /// order (core rows, then pool sources in order).
    pub results: Option<Results>,
}

/// The output of [`PreparedScan::scan_pool`].
#[derive(Debug, Clone)]
pub struct PoolScan {
    /// One per query set, in the order the scan was prepared with.
    pub sets: Vec<SetOutput>,
    /// Pool rows renormalised by this pass (the query and core rows are counted by the
    /// preparation, [`PreparedScan::renormalized_rows`]).
    pub renormalized_rows: u64,
    /// Queries scanned a second time because a speculative floor was not verified.
    pub rescanned_queries: u64,
    /// (query, subset) reservoirs that started from a pilot floor.
    pub speculative_floors: u64,
    /// (query, pool row) pairs bounded by the integer screen, and those re-scored in f32.
    pub screened_pairs: u64,
    pub rescored_pairs: u64,
}

/// Refuse pool shards that share an id (docs/method.md §2: the pool is N distinct items; a repeated id
/// would be counted twice in `S_ℓ` and `K_{j,ℓ}`), naming the id and both files and rows. The
/// same file given twice is reported as such, two different ids with one 64-bit key as a hash
/// collision. Memory: 8 bytes per pool id ([`find_duplicate_rows`]).
pub fn check_pool_disjoint(pool: &[&dyn DescriptorSource]) -> Result<()> {
    let lists: Vec<&RowIds> = pool.iter().map(|s| s.ids()).collect();
    let Some(((a, ra), (b, rb), id)) = find_duplicate_rows(&lists)? else {
        return Ok(());
    };
    let (pa, pb) = (pool[a].path(), pool[b].path());
    let same_file = a != b
        && (pa == pb
            || matches!((std::fs::canonicalize(pa), std::fs::canonicalize(pb)),
                        (Ok(x), Ok(y)) if x == y));
    Err(if same_file && ra == rb {
        Error::mismatch_at(
            pb,
            format!(
                "given twice as a pool file (pool inputs {} and {}): its rows would be counted \
                 twice; give each pool file once",
                a + 1,
                b + 1
            ),
        )
    } else if a == b {
        Error::input(
            pb,
            format!("duplicate pool id {id:?} on rows {ra} and {rb} (0-based)"),
        )
    } else {
        Error::mismatch_at(
            pb,
            format!(
                "row {rb} has id {id:?}, which is also row {ra} of pool file {}: pool shards \
                 must be disjoint (each pool id once)",
                pa.display()
            ),
        )
    })
}

/// A query's summary and, with results, its top-k over core ∪ scanned pool as sorted
/// `(score, key)` pairs.
type Finished = (QuerySummary, Option<Vec<(f32, u64)>>);

impl PreparedScan<'_> {
    /// Scan `pool` (shards of the distractor pool, disjoint from the core and from each
    /// other) for every query of every set, on the current rayon pool.
    pub fn scan_pool(
        &self,
        pool: &[&dyn DescriptorSource],
        progress: &dyn Progress,
    ) -> Result<PoolScan> {
        for src in pool {
            self.check_dim(*src)?;
        }
        check_pool_disjoint(pool)?;
        let (sampled, pool_keys) = self.sample(pool, progress)?;
        let codes = self.codes;
        // S_ℓ: levels nest (deepest level ≥ ℓ), shards partition.
        let subset_sizes = codes.subset_counts(sampled.iter().flat_map(|s| &s.codes));
        let source_rows: Vec<usize> = pool.iter().map(|s| s.rows()).collect();
        let blocks = cut_blocks(&sampled, &source_rows, self.kernel.block_rows());
        let plan = PoolPlan {
            pool,
            sampled: &sampled,
            blocks: &blocks,
            d: self.d,
            nlev: codes.levels,
            nshard: codes.shards,
            top_m: self.kept_top_m(subset_sizes[0]),
            results_k: self.cfg.results_k,
            normalize: self.cfg.normalize,
        };
        let (workers, floors) = self.run_stages(&plan, &subset_sizes, progress)?;
        let (screened_pairs, rescored_pairs) = pool::screen_counts(&workers);
        let (parts, renormalized) = pool::by_query(workers, self.positives.len());
        let mut merged: Vec<QueryCollector> = parts
            .into_par_iter()
            .zip(&self.positives)
            .map(|(parts, p)| plan.merge(p, parts))
            .collect();
        let rescanned = match &floors {
            Some(f) => self.verify_or_rescan(&plan, f, &mut merged, progress)?,
            None => 0,
        };
        let finished = self.finish_queries(merged, &plan);
        let sets = self.set_outputs(finished, &plan, pool_keys, &subset_sizes)?;
        Ok(PoolScan {
            sets,
            renormalized_rows: renormalized,
            rescanned_queries: rescanned as u64,
            speculative_floors: floors.as_ref().map_or(0, |f| {
                f.iter().filter(|&&x| x > f32::NEG_INFINITY).count() as u64
            }),
            screened_pairs,
            rescored_pairs,
        })
    }

    /// Scores kept per query in each subset's reservoir: [`Subset::kept`](crate::summary::Subset::kept) of the M asked for,
    /// clamped to `s0` (at least 1). Reservoirs hold at most the sampled rows: M above S_0 is
    /// clamped (same lists, memory bounded by what can be stored); the summary records the M
    /// asked for.
    fn kept_top_m(&self, s0: u64) -> Vec<usize> {
        let most = usize::try_from(s0).unwrap_or(usize::MAX).max(1);
        self.subsets
            .iter()
            .map(|s| s.kept(self.cfg.top_m).min(most))
            .collect()
    }

    /// Drive every block of `plan` through the collectors of all queries in stages: pilots
    /// spread over the pool, then the rest ([`speculate::stages`]; one stage without
    /// speculation), each stage starting from floors estimated on every block scanned before
    /// it. Returns the workers' states and the highest floor applied per (query `q`, subset
    /// `i`) at `q · subsets + i`, what the verification must check (`None`: one stage, no
    /// floors).
    fn run_stages(
        &self,
        plan: &PoolPlan,
        subset_sizes: &[u64],
        progress: &dyn Progress,
    ) -> Result<(Vec<WorkerStates>, Option<Vec<f32>>)> {
        let (codes, blocks) = (self.codes, plan.blocks);
        let (nq, nsub) = (self.positives.len(), codes.subsets());
        let all_positives: Vec<&QueryPositives> = self.positives.iter().collect();
        let shared_thr = SharedThresholds::new(nq * nsub);
        let stages = if self.cfg.speculate {
            speculate::stages(blocks.len())
        } else {
            vec![(0..blocks.len()).collect()]
        };
        let mut floors: Option<Vec<f32>> = None;
        let mut seen = vec![0u64; nsub];
        let mut workers = Vec::new();
        for (k, stage) in stages.iter().enumerate() {
            workers = plan.run(
                &self.kernel,
                self.screen.as_ref(),
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
            let stage_sizes = codes.subset_counts(stage.iter().flat_map(|&b| {
                let Block {
                    source, start, end, ..
                } = blocks[b];
                &plan.sampled[source].codes[start..end]
            }));
            seen.iter_mut().zip(stage_sizes).for_each(|(s, n)| *s += n);
            let fresh = stage_floors(&workers, nq, &seen, subset_sizes, &plan.top_m);
            floors = Some(match floors {
                None => fresh,
                Some(old) => old.iter().zip(&fresh).map(|(a, b)| a.max(*b)).collect(),
            });
        }
        Ok((workers, floors))
    }

    /// Verify the floors: a query passes when each merged reservoir `i` of `merged[q]` proves
    /// its highest floor `floors[q · subsets + i]` harmless ([`speculate::verified`]). Each
    /// query that fails is scanned again over all blocks, from scratch (no floors, no screen),
    /// and its state in `merged` replaced (stopped when `progress` asks, its rows not counted
    /// again). Returns the number of queries scanned again.
    fn verify_or_rescan(
        &self,
        plan: &PoolPlan,
        floors: &[f32],
        merged: &mut [QueryCollector],
        progress: &dyn Progress,
    ) -> Result<usize> {
        let (d, nsub) = (self.d, self.codes.subsets());
        let rescan: Vec<usize> = (0..self.positives.len())
            .filter(|&q| {
                merged[q]
                    .tops
                    .iter()
                    .enumerate()
                    .any(|(i, t)| !speculate::verified(t, floors[q * nsub + i], plan.top_m[i]))
            })
            .collect();
        if rescan.is_empty() {
            return Ok(0);
        }
        let mut sub_q = vec![0f32; rescan.len() * d];
        for (i, &q) in rescan.iter().enumerate() {
            sub_q[i * d..(i + 1) * d].copy_from_slice(&self.qmat[q * d..(q + 1) * d]);
        }
        let bs = self.kernel.block_rows();
        let sub_kernel = ScoreKernel::new(&sub_q, rescan.len(), d, bs, self.kernel.backend());
        let sub_pos: Vec<&QueryPositives> = rescan.iter().map(|&q| &self.positives[q]).collect();
        let all: Vec<usize> = (0..plan.blocks.len()).collect();
        let fresh = SharedThresholds::new(rescan.len() * nsub);
        let again = plan.run(
            &sub_kernel,
            None,
            &sub_pos,
            &all,
            Vec::new(),
            None,
            &fresh,
            Some(&CancelOnly(progress)),
        )?;
        // Rows were checked (and counted) by the first pass already.
        let (parts, _) = pool::by_query(again, rescan.len());
        for ((&q, parts), p) in rescan.iter().zip(parts).zip(&sub_pos) {
            merged[q] = plan.merge(p, parts);
        }
        Ok(rescan.len())
    }

    /// Each query's summary (its pool counts in `merged` beside the core's) and, with
    /// results, its top-k reservoir of the core merged with the pool's, sorted; query order,
    /// computed in parallel over queries.
    fn finish_queries(&self, merged: Vec<QueryCollector>, plan: &PoolPlan) -> Vec<Finished> {
        let (core, nlev, nshard) = (&self.core_counts, plan.nlev, plan.nshard);
        let query_ids: Vec<&String> = self.sets.iter().flat_map(|s| &s.set.query_ids).collect();
        merged
            .into_par_iter()
            .enumerate()
            .map(|(q, mut acc)| {
                let p = &self.positives[q];
                let mut res: Option<TopKeyed> = core.results[q].clone();
                if let (Some(r), Some(pr)) = (&mut res, &acc.res) {
                    r.merge(pr);
                }
                acc.res = None;
                let counts = (&core.hist[q][..], &core.ties[q][..]);
                let summary = query_summary(query_ids[q], p, acc, counts, nlev, nshard);
                (summary, res.map(TopKeyed::into_sorted))
            })
            .collect()
    }

    /// One [`SetOutput`] per query set, in order: the set's queries of `finished` (query
    /// order, sets consecutive) in a summary that records the inputs and options, and with
    /// results the top-k lists with their keys named by id. `pool_keys` (the pool
    /// fingerprint) goes to every set's summary.
    fn set_outputs(
        &self,
        finished: Vec<Finished>,
        plan: &PoolPlan,
        pool_keys: Vec<u64>,
        subset_sizes: &[u64],
    ) -> Result<Vec<SetOutput>> {
        let pool = plan.pool;
        let pool_records: Vec<InputRecord> = pool
            .iter()
            .map(|src| input_record(POOL_ROLE, *src))
            .collect();
        let core_record = input_record("core", self.core);
        // Result keys back to ids: one read of each id file for all sets.
        let names = match self.cfg.results_k {
            Some(_) => keys_to_ids(
                finished
                    .iter()
                    .filter_map(|(_, r)| r.as_ref())
                    .flat_map(|r| r.iter().map(|&(_, key)| key)),
                self.core,
                pool,
                plan.sampled,
            )?,
            None => HashMap::new(),
        };
        let mut finished = finished.into_iter();
        let mut pool_keys = Some(pool_keys);
        let mut sets = Vec::with_capacity(self.sets.len());
        for (si, (input, range)) in self.sets.iter().zip(&self.ranges).enumerate() {
            let mut queries = Vec::with_capacity(range.len());
            let mut res_lists = Vec::with_capacity(range.len());
            for (s, r) in finished.by_ref().take(range.len()) {
                queries.push(s);
                res_lists.push(r);
            }
            let results = self.cfg.results_k.map(|_| {
                res_lists
                    .into_iter()
                    .map(|r| {
                        r.expect("results reservoir")
                            .into_iter()
                            .map(|(s, key)| (names[&key].clone(), s))
                            .collect()
                    })
                    .collect()
            });
            let mut inputs = vec![input_record("queries", input.queries), core_record.clone()];
            inputs.extend(pool_records.iter().cloned());
            // The fingerprint is moved into the last set's summary, cloned into the others.
            let hashes = if si + 1 == self.sets.len() {
                pool_keys.take()
            } else {
                pool_keys.clone()
            };
            sets.push(SetOutput {
                summary: Summary {
                    format_version: SUMMARY_FORMAT_VERSION,
                    tool_version: crate::TOOL_VERSION.to_string(),
                    model: self.cfg.model.clone(),
                    query_set: input.set.name.clone(),
                    pool_size: self.cfg.pool_size,
                    fraction: self.cfg.fraction,
                    seed: self.cfg.seed,
                    top_m: self.cfg.top_m,
                    core_size: self.core.rows() as u64,
                    subsets: self.subsets.clone(),
                    subset_sizes: subset_sizes.to_vec(),
                    queries,
                    inputs,
                    pool_id_hashes: hashes,
                    ties_known: true,
                },
                results,
            });
        }
        Ok(sets)
    }

    /// Hash every pool id once and keep the sampled rows with their item codes; returns them
    /// and the sorted `id_key`s of the sampled rows (the summary's pool fingerprint). A pool
    /// id that is also a core id or a query id is an error (a query in the pool finds itself
    /// at score 1, above its positives). Works on the 8-byte keys ([`RowIds`]): the sample hash
    /// is the key at seed 0 (otherwise the ids are streamed once more), and only pool rows whose
    /// key is a core or query key have their id read back and compared.
    fn sample(
        &self,
        pool: &[&dyn DescriptorSource],
        progress: &dyn Progress,
    ) -> Result<(Vec<SampledSource>, Vec<u64>)> {
        let seed = self.cfg.seed;
        let mut core_keys: HashSet<u64> = self.core.ids().keys().iter().copied().collect();
        core_keys.extend(self.query_ids.iter().map(|q| id_key(q)));
        let mut sampled: Vec<SampledSource> = Vec::with_capacity(pool.len());
        let mut pool_keys: Vec<u64> = Vec::new();
        let mut key_offset = self.core.rows() as u64;
        for src in pool {
            check_cancelled(progress)?;
            let rows = src.rows();
            if rows > u32::MAX as usize {
                return Err(Error::unsupported(
                    src.path(),
                    format!("{rows} rows: split pool files above 2^32 rows into shards"),
                ));
            }
            let ids = src.ids();
            let hashes = ids.hashes(seed)?;
            let refuse_outside = self.cfg.after.is_some();
            let first_outside = AtomicUsize::new(usize::MAX);
            type Part = (Vec<u32>, Vec<u32>, Vec<u64>, Vec<usize>);
            let parts: Vec<Part> = ids
                .keys()
                .par_chunks(1 << 16)
                .zip(hashes.par_chunks(1 << 16))
                .enumerate()
                .map(|(ci, (keys, hs))| {
                    let base = ci << 16;
                    let (mut r, mut c, mut k, mut shared) =
                        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                    for (i, (&key, &h)) in keys.iter().zip(hs).enumerate() {
                        if core_keys.contains(&key) {
                            shared.push(base + i);
                        }
                        if let Some(code) = self.sampler.code(h) {
                            r.push((base + i) as u32);
                            c.push(code);
                            k.push(key);
                        } else if refuse_outside {
                            first_outside.fetch_min(base + i, Ordering::Relaxed);
                        }
                    }
                    (r, c, k, shared)
                })
                .collect();
            drop(hashes);
            let outside = first_outside.into_inner();
            if outside != usize::MAX {
                return Err(self.outside_increment(*src, outside));
            }
            let shared: Vec<usize> = parts.iter().flat_map(|p| p.3.iter().copied()).collect();
            if !shared.is_empty() {
                for (row, id) in shared.iter().zip(ids.names(&shared)?) {
                    if self.core_rows.contains_key(id.as_str()) {
                        return Err(Error::mismatch_at(
                            src.path(),
                            format!(
                                "row {row} (id {id:?}) is also in the core file {}: pool and \
                                 core must be disjoint",
                                self.core.path().display()
                            ),
                        ));
                    }
                    if self.query_ids.contains(id.as_str()) {
                        return Err(Error::mismatch_at(
                            src.path(),
                            format!(
                                "row {row} (id {id:?}) is the id of a query: a query in the \
                                 pool finds itself above its positives; remove the pool rows \
                                 whose ids are query ids (a query file belongs only in \
                                 --queries)"
                            ),
                        ));
                    }
                }
            }
            let mut s = SampledSource {
                rows: Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum()),
                codes: Vec::new(),
                key_offset,
            };
            s.codes.reserve(s.rows.capacity());
            for (r, c, k, _) in parts {
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
        pool_keys.par_sort_unstable();
        Ok((sampled, pool_keys))
    }
}

impl PreparedScan<'_> {
    /// The error for pool row `row` of `src`, whose id hashes outside the increment that a
    /// scan with `after` covers (`[t(after), t(f))`, [`crate::sample::HashRange::increment`]).
    fn outside_increment(&self, src: &dyn DescriptorSource, row: usize) -> Error {
        let id = match src.ids().names(&[row]) {
            Ok(names) => format!("{:?}", names.into_iter().next().unwrap_or_default()),
            Err(e) => format!("(unreadable: {e})"),
        };
        Error::mismatch_at(
            src.path(),
            format!(
                "row {row} (id {id}) is outside the sample increment [t({}), t({})) that \
                 --after scans: give only the pool rows of the increment (tailrank sample \
                 --fraction {} --after {} lists their ids)",
                self.cfg.after.unwrap_or_default(),
                self.cfg.fraction,
                self.cfg.fraction,
                self.cfg.after.unwrap_or_default()
            ),
        )
    }
}

/// Map results keys back to their ids: keys `0..core.rows()` are core rows (with
/// [`RELEVANT_KEY`] set for a positive, `collect::core_result_key`), then each pool
/// source's rows from its `key_offset`. The ids of each source are read back in one pass
/// ([`RowIds::names`]).
fn keys_to_ids(
    keys: impl Iterator<Item = u64>,
    core: &dyn DescriptorSource,
    pool: &[&dyn DescriptorSource],
    sampled: &[SampledSource],
) -> Result<HashMap<u64, String>> {
    let mut all: Vec<u64> = keys.collect();
    all.sort_unstable();
    all.dedup();
    // Rows wanted from the core (index 0) and from each pool source (index 1 + source).
    let mut wanted: Vec<Vec<usize>> = vec![Vec::new(); pool.len() + 1];
    // Core keys flagged relevant ([`core_result_key`]), named after the core rows are read.
    let mut relevant_keys = Vec::new();
    for &key in &all {
        if key & RELEVANT_KEY != 0 {
            relevant_keys.push(key);
            wanted[0].push((key & !RELEVANT_KEY) as usize);
        } else if key < core.rows() as u64 {
            wanted[0].push(key as usize);
        } else {
            let si = sampled.partition_point(|s| s.key_offset <= key) - 1;
            wanted[si + 1].push((key - sampled[si].key_offset) as usize);
        }
    }
    // A core row may be wanted both flagged (one query's positive) and not (another's).
    wanted[0].sort_unstable();
    wanted[0].dedup();
    let mut out = HashMap::with_capacity(all.len());
    for (i, rows) in wanted.iter().enumerate() {
        if rows.is_empty() {
            continue;
        }
        let (src, offset) = match i {
            0 => (core, 0),
            _ => (pool[i - 1], sampled[i - 1].key_offset),
        };
        for (&r, id) in rows.iter().zip(src.ids().names(rows)?) {
            out.insert(offset + r as u64, id);
        }
    }
    for key in relevant_keys {
        let id = out[&(key & !RELEVANT_KEY)].clone();
        out.insert(key, id);
    }
    Ok(out)
}

/// The floors after a stage, at `q · subsets + i` for the `nq` queries: [`speculate::floor`]
/// of query `q`'s reservoirs of subset `i` over all `workers`, of which the stages so far saw
/// `seen[i]` items out of `subset_sizes[i]`, for a top `top_m[i]`.
fn stage_floors(
    workers: &[WorkerStates],
    nq: usize,
    seen: &[u64],
    subset_sizes: &[u64],
    top_m: &[usize],
) -> Vec<f32> {
    (0..nq)
        .into_par_iter()
        .map_init(Vec::new, |scratch, q| {
            (0..seen.len())
                .map(|i| {
                    let parts: Vec<&TopM> = workers.iter().map(|w| &w.states[q].tops[i]).collect();
                    speculate::floor(&parts, seen[i], subset_sizes[i], top_m[i], scratch)
                })
                .collect::<Vec<f32>>()
        })
        .flatten()
        .collect()
}

/// The summary's record of input `src` in role `role`: its path, digest and rows.
fn input_record(role: &str, src: &dyn DescriptorSource) -> InputRecord {
    InputRecord {
        role: role.into(),
        path: src.path().display().to_string(),
        digest: src.digest(),
        rows: src.rows() as u64,
    }
}
