//! The pool pass of the scan: blocks of sampled pool rows scored against all queries, fused
//! with the per-query top-M reservoirs, the per-positive count histograms and the results
//! reservoir (steps 2–4 of the algorithm in [`engine`](super::engine)).
//!
//! Per block and query, scores are visited in runs of one item code `(deepest level L,
//! shard)`. A run's candidates are the scores above the code's cut `min(lowest positive,
//! thresholds of levels 0..=L and of the shard, results threshold)`: they are compacted
//! branch-free ([`compact_above`]) and then appended to each reservoir of the code's subsets
//! with [`TopM::push_batch`]. A score above the lowest positive is binary-searched among the
//! sorted positive scores (`m = #{j : s_j ≥ s}`, `hist[L][m] += 1`, `hist[shard][m] += 1`).
//!
//! A pass may start from *floors* (one per query and subset): values at or below a floor are
//! rejected by that subset's reservoir. Floors are how the speculative pilot of
//! [`speculate`](super::speculate) speeds up the top-M warm-up; the caller verifies them.

use super::engine::{check_rows, run_blocks, Buffers, Progress, QueryPositives};
use super::kernel::ScoreKernel;
use super::topm::{SharedThresholds, TopKeyed, TopM};
use crate::error::Result;
use crate::formats::descriptors::DescriptorSource;

/// Scores per pre-filter chunk.
const CHUNK: usize = 16;

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
fn compact_above<const SLOTS: bool>(
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

/// Slots of a block grouped by item code: `order` (block rows, ascending code, then row;
/// padded with the zero rows `n..p`) and `segments` `(code, first slot, end slot)`.
#[derive(Default)]
struct CodeOrder {
    order: Vec<u32>,
    segments: Vec<(usize, usize, usize)>,
}

impl CodeOrder {
    fn build(&mut self, codes: &[u32], p: usize) {
        let n = codes.len();
        self.order.clear();
        self.order.extend(0..n as u32);
        self.order.sort_by_key(|&i| codes[i as usize]);
        self.segments.clear();
        let mut a = 0;
        while a < n {
            let c = codes[self.order[a] as usize];
            let mut b = a + 1;
            while b < n && codes[self.order[b] as usize] == c {
                b += 1;
            }
            self.segments.push((c as usize, a, b));
            a = b;
        }
        self.order.extend(n as u32..p as u32);
    }
}

/// Read rows `rows` (sorted, ascending) of `src` into the first `rows.len()` rows of `block`,
/// one `read_rows` call per run of consecutive rows; zero the rest.
fn gather(src: &dyn DescriptorSource, rows: &[u32], d: usize, block: &mut [f32]) -> Result<()> {
    let mut i = 0;
    while i < rows.len() {
        let mut j = i + 1;
        while j < rows.len() && rows[j] == rows[j - 1] + 1 {
            j += 1;
        }
        src.read_rows(rows[i] as usize, &mut block[i * d..j * d])?;
        i = j;
    }
    block[rows.len() * d..].fill(0.0);
    Ok(())
}

/// A sampled pool source: its sampled rows (ascending) and their codes.
pub(super) struct SampledSource {
    pub(super) rows: Vec<u32>,
    pub(super) codes: Vec<u32>,
    /// Key of row 0 in the results ordering (core rows first, then sources in order).
    pub(super) key_offset: u64,
}

/// Per-worker state of the pool pass, per query.
pub(super) struct PoolQueryState {
    pub(super) tops: Vec<TopM>,
    /// `(levels + shards) × (n + 1)` histogram of `m = #{j : s_j ≥ s}`: rows `0..levels` by
    /// deepest level, then one row per shard.
    pub(super) hist: Vec<u64>,
    pub(super) res: Option<TopKeyed>,
    /// Cut per item code `L · max(shards, 1) + shard`; scores at or below it change nothing.
    table: Vec<f32>,
}

impl PoolQueryState {
    fn new(
        lowest: f32,
        npos: usize,
        (nlev, nshard): (usize, usize),
        top_m: usize,
        results_k: Option<usize>,
    ) -> Self {
        let nsub = nlev + nshard;
        let mut st = PoolQueryState {
            tops: (0..nsub).map(|_| TopM::new(top_m, 2 * top_m)).collect(),
            hist: vec![0; nsub * (npos + 1)],
            res: results_k.map(|k| TopKeyed::new(k, results_cap(k))),
            table: vec![f32::NEG_INFINITY; nlev * nshard.max(1)],
        };
        st.refresh(lowest, nlev, nshard);
        st
    }

    /// Recompute the cut table after a threshold rose: an item of code `(L, shard)` matters
    /// iff its score is above `min(lowest positive, thr(level 0..=L), thr(shard), results)`.
    fn refresh(&mut self, lowest: f32, nlev: usize, nshard: usize) {
        let mut base = lowest;
        if let Some(r) = &self.res {
            // Results accept scores equal to their threshold (ties broken by key).
            base = base.min(r.threshold().next_down_f32());
        }
        let ns = nshard.max(1);
        let mut level_min = base;
        for l in 0..nlev {
            level_min = level_min.min(self.tops[l].threshold());
            for sh in 0..ns {
                let c = if nshard > 0 {
                    level_min.min(self.tops[nlev + sh].threshold())
                } else {
                    level_min
                };
                self.table[l * ns + sh] = c;
            }
        }
    }
}

/// Buffer capacity of a results reservoir of size `k`.
pub(super) fn results_cap(k: usize) -> usize {
    (2 * k).max(64)
}

trait NextDown {
    fn next_down_f32(self) -> f32;
}

impl NextDown for f32 {
    /// The largest f32 below `self` (for finite `self`; infinities unchanged).
    fn next_down_f32(self) -> f32 {
        if !self.is_finite() {
            return self;
        }
        if self == 0.0 {
            return -f32::from_bits(1);
        }
        let b = self.to_bits();
        f32::from_bits(if self > 0.0 { b - 1 } else { b + 1 })
    }
}

/// A block of sampled rows: (pool source, first sampled index, end, source rows it covers for
/// progress).
pub(super) type Block = (usize, usize, usize, u64);

/// What every pool pass of one scan shares.
pub(super) struct PoolPlan<'a> {
    pub pool: &'a [&'a dyn DescriptorSource],
    pub sampled: &'a [SampledSource],
    pub blocks: &'a [Block],
    pub d: usize,
    pub nlev: usize,
    pub nshard: usize,
    pub top_m: usize,
    pub results_k: Option<usize>,
    pub normalize: bool,
}

/// The states one worker of a pass ends with: one per query of the pass, and the number of
/// rows it renormalised.
pub(super) struct WorkerStates {
    pub states: Vec<PoolQueryState>,
    pub renormalized: u64,
}

impl PoolPlan<'_> {
    fn nsub(&self) -> usize {
        self.nlev + self.nshard
    }

    /// A fresh state for one query.
    pub fn query_state(&self, p: &QueryPositives) -> PoolQueryState {
        PoolQueryState::new(
            p.lowest,
            p.scores.len(),
            (self.nlev, self.nshard),
            self.top_m,
            self.results_k,
        )
    }

    /// Run the blocks `which` (indices into `blocks`) for the queries of `kernel`, whose
    /// positives are `positives` (same order). Workers continue from the states of `resume`
    /// (an earlier pass over other blocks, same queries) while there are any, else start
    /// fresh; every state of `resume` is in the output. With `floors`, reservoir `i` of query
    /// `q` has its threshold raised to `floors[q · subsets + i]`. `shared` holds one slot per
    /// query and subset.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        kernel: &ScoreKernel,
        positives: &[&QueryPositives],
        which: &[usize],
        resume: Vec<WorkerStates>,
        floors: Option<&[f32]>,
        shared: &SharedThresholds,
        progress: Option<&dyn Progress>,
    ) -> Result<Vec<WorkerStates>> {
        let (d, nlev, nshard, nsub) = (self.d, self.nlev, self.nshard, self.nsub());
        let bs = kernel.block_rows();
        let ns = nshard.max(1);
        // Item code → (deepest level, shard).
        let decode: Vec<(usize, usize)> = (0..nlev * ns).map(|c| (c / ns, c % ns)).collect();
        struct PoolState {
            buf: Buffers,
            by_code: CodeOrder,
            cand: Vec<f32>,
            cand_slot: Vec<u32>,
            q: Vec<PoolQueryState>,
            off: u64,
        }
        let resume = std::sync::Mutex::new(resume);
        let init = || {
            let earlier = resume.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let (mut q, off) = match earlier {
                Some(w) => (w.states, w.renormalized),
                None => (positives.iter().map(|p| self.query_state(p)).collect(), 0),
            };
            if let Some(f) = floors {
                for (qi, (st, p)) in q.iter_mut().zip(positives).enumerate() {
                    for (t, &fl) in st.tops.iter_mut().zip(&f[qi * nsub..(qi + 1) * nsub]) {
                        t.raise_threshold(fl);
                    }
                    st.refresh(p.lowest, nlev, nshard);
                }
            }
            PoolState {
                buf: Buffers::new(kernel, d),
                by_code: CodeOrder::default(),
                cand: vec![0.0; bs + CHUNK],
                cand_slot: vec![0; bs + CHUNK],
                q,
                off,
            }
        };
        let states = run_blocks(which.len(), init, |st, wi| {
            let (si, a, e, covered) = self.blocks[which[wi]];
            let (src, s) = (self.pool[si], &self.sampled[si]);
            let key_offset = s.key_offset;
            let rows = &s.rows[a..e];
            let codes = &s.codes[a..e];
            let n = rows.len();
            gather(src, rows, d, &mut st.buf.block)?;
            st.off += check_rows(&mut st.buf.block[..n * d], d, self.normalize, src, |i| {
                rows[i] as usize
            })?;
            // Score the rows grouped by code, so that each run of scores is pre-filtered
            // against its own cut (a nearly empty deep level then only slows its own items).
            st.by_code.build(codes, bs);
            st.buf.score_in_order(kernel, &st.by_code.order);
            let order = &st.by_code.order;
            for (q, p) in positives.iter().enumerate() {
                let row = &st.buf.scores[q * bs..q * bs + n];
                // Fetch the next query's reservoir tails while this one is processed.
                if let Some(next) = st.q.get(q + 1) {
                    for t in &next.tops {
                        t.prefetch();
                    }
                }
                let qst = &mut st.q[q];
                let npos1 = p.scores.len() + 1;
                // Thresholds other workers reached bound the merged top-M from below.
                let slot = q * nsub;
                let mut raised = false;
                for (i, t) in qst.tops.iter_mut().enumerate() {
                    let g = shared.get(slot + i);
                    if g > t.threshold() {
                        t.raise_threshold(g);
                        raised = true;
                    }
                }
                if raised {
                    qst.refresh(p.lowest, nlev, nshard);
                }
                for &(cidx, sa, sb) in &st.by_code.segments {
                    let (deepest, shard) = decode[cidx];
                    // Candidates of this run: scores above its cut, compacted branch-free.
                    let (run, cut) = (&row[sa..sb], qst.table[cidx]);
                    let n = if qst.res.is_some() {
                        compact_above::<true>(run, cut, &mut st.cand, &mut st.cand_slot)
                    } else {
                        compact_above::<false>(run, cut, &mut st.cand, &mut st.cand_slot)
                    };
                    if n == 0 {
                        continue;
                    }
                    let (cand, slots) = (&st.cand[..n], &st.cand_slot[..n]);
                    let mut dirty = false;
                    for t in &mut qst.tops[..=deepest] {
                        dirty |= t.push_batch(cand);
                    }
                    if nshard > 0 {
                        dirty |= qst.tops[nlev + shard].push_batch(cand);
                    }
                    for &s in cand {
                        if s > p.lowest {
                            let m = p.scores.partition_point(|&x| x >= s);
                            qst.hist[deepest * npos1 + m] += 1;
                            if nshard > 0 {
                                qst.hist[(nlev + shard) * npos1 + m] += 1;
                            }
                        }
                    }
                    if let Some(r) = &mut qst.res {
                        for (&s, &slot) in cand.iter().zip(slots) {
                            let i = order[sa + slot as usize] as usize;
                            dirty |= r.push(s, key_offset + rows[i] as u64);
                        }
                    }
                    if dirty {
                        qst.refresh(p.lowest, nlev, nshard);
                        for (i, t) in qst.tops.iter().enumerate() {
                            shared.publish(slot + i, t.threshold());
                        }
                    }
                }
            }
            if let Some(pr) = progress {
                pr.rows_done(covered);
            }
            Ok(())
        })?;
        let mut out: Vec<WorkerStates> = states
            .into_iter()
            .map(|st| WorkerStates {
                states: st.q,
                renormalized: st.off,
            })
            .collect();
        out.extend(resume.into_inner().unwrap_or_else(|p| p.into_inner()));
        Ok(out)
    }

    /// Merge the states of one query from several workers (and passes over disjoint blocks).
    pub fn merge(&self, p: &QueryPositives, parts: Vec<PoolQueryState>) -> PoolQueryState {
        let mut acc = self.query_state(p);
        for o in parts {
            for (t, ot) in acc.tops.iter_mut().zip(&o.tops) {
                t.merge(ot);
            }
            for (a, b) in acc.hist.iter_mut().zip(&o.hist) {
                *a += b;
            }
            if let (Some(r), Some(or)) = (&mut acc.res, &o.res) {
                r.merge(or);
            }
        }
        acc
    }
}

/// Regroup per-worker states by query: `out[q]` holds query `q`'s state of every worker.
pub(super) fn by_query(workers: Vec<WorkerStates>, nq: usize) -> (Vec<Vec<PoolQueryState>>, u64) {
    let mut out: Vec<Vec<PoolQueryState>> = (0..nq).map(|_| Vec::new()).collect();
    let mut renormalized = 0;
    for w in workers {
        renormalized += w.renormalized;
        assert_eq!(w.states.len(), nq, "one state per query");
        for (q, st) in w.states.into_iter().enumerate() {
            out[q].push(st);
        }
    }
    (out, renormalized)
}
