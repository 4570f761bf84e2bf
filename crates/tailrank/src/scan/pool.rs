//! The pool pass of the scan: blocks of sampled pool rows scored against all queries, fused
//! with the per-query top-M reservoirs, the per-positive count histograms and the results
//! reservoir (steps 2–4 of the algorithm in [`engine`](super::engine)).
//!
//! Per block and query, scores are visited in runs of one item code `(deepest level L,
//! shard)`. A run's candidates are the scores above the code's cut `min(lowest positive,
//! thresholds of levels 0..=L and of the shard, results threshold)`: they are compacted
//! branch-free ([`compact_above`]) and then appended to each reservoir of the code's subsets
//! with [`TopM::push_batch`]. A score at or above the lowest positive is binary-searched among
//! the sorted positive scores (`m = #{j : s_j ≥ s}`, `hist[L][m] += 1`, `hist[shard][m] += 1`);
//! when it equals a positive's score (`s_{m-1} == s`) it is also a tie of that positive's block:
//! `ties[L][m] += 1`, `ties[shard][m] += 1`. The cut's positive part is the largest f32 below
//! the lowest positive, so a score equal to it is a candidate (`> cut`), screened or not.
//!
//! A pass may start from *floors* (one per query and subset): values at or below a floor are
//! rejected by that subset's reservoir. Floors are how the speculative pilot of
//! [`speculate`](super::speculate) speeds up the top-M warm-up; the caller verifies them.

use super::engine::{check_rows, run_blocks, Buffers, Progress, QueryPositives};
use super::kernel::ScoreKernel;
use super::screen::{Screen, ScreenScratch};
use super::topm::{SharedThresholds, TopKeyed, TopM};
use crate::error::Result;
use crate::formats::descriptors::DescriptorSource;

/// A screened block where more than one pair in this many needed its f32 score pauses the
/// screen: an exact score costs about ten times what the screen saves on a pair
/// (`docs/performance.md`), so past ~6% the all-f32 block is cheaper.
const MAX_RESCORED_SHARE: usize = 16;
/// Blocks scored in f32 before the screen is tried again.
const PAUSE_BLOCKS: usize = 8;

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
    /// Same layout as `hist`: `ties[row · (n + 1) + m]` counts the items whose score equals
    /// `s_{m-1}`, the lowest score of the positive block ending at `m - 1` (0-based).
    pub(super) ties: Vec<u64>,
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
            ties: vec![0; nsub * (npos + 1)],
            res: results_k.map(|k| TopKeyed::new(k, results_cap(k))),
            table: vec![f32::NEG_INFINITY; nlev * nshard.max(1)],
        };
        st.refresh(lowest, nlev, nshard);
        st
    }

    /// Take the candidates `cand` (scores above the cut of item code `(deepest, shard)`) into
    /// the reservoirs of the code's subsets, the count histograms and the results reservoir
    /// (`key(i)`: results key of candidate `i`). Returns whether a threshold may have risen.
    fn absorb(
        &mut self,
        p: &QueryPositives,
        (deepest, shard): (usize, usize),
        (nlev, nshard): (usize, usize),
        cand: &[f32],
        key: impl Fn(usize) -> u64,
    ) -> bool {
        let npos1 = p.scores.len() + 1;
        let mut dirty = false;
        for t in &mut self.tops[..=deepest] {
            dirty |= t.push_batch(cand);
        }
        if nshard > 0 {
            dirty |= self.tops[nlev + shard].push_batch(cand);
        }
        for &s in cand {
            if s >= p.lowest {
                let m = p.scores.partition_point(|&x| x >= s);
                self.hist[deepest * npos1 + m] += 1;
                if nshard > 0 {
                    self.hist[(nlev + shard) * npos1 + m] += 1;
                }
                // A tie iff the positive block ending at m − 1 has score s.
                if m > 0 && p.scores[m - 1] == s {
                    self.ties[deepest * npos1 + m] += 1;
                    if nshard > 0 {
                        self.ties[(nlev + shard) * npos1 + m] += 1;
                    }
                }
            }
        }
        if let Some(r) = &mut self.res {
            for (i, &s) in cand.iter().enumerate() {
                dirty |= r.push(s, key(i));
            }
        }
        dirty
    }

    /// Raise the thresholds to those other workers reached (slots `slot..slot + subsets` of
    /// `shared`): they bound the merged top-M from below.
    fn take_shared(
        &mut self,
        shared: &SharedThresholds,
        slot: usize,
        lowest: f32,
        (nlev, nshard): (usize, usize),
    ) {
        let mut raised = false;
        for (i, t) in self.tops.iter_mut().enumerate() {
            let g = shared.get(slot + i);
            if g > t.threshold() {
                t.raise_threshold(g);
                raised = true;
            }
        }
        if raised {
            self.refresh(lowest, nlev, nshard);
        }
    }

    /// Publish this worker's thresholds to slots `slot..slot + subsets` of `shared`.
    fn publish(&self, shared: &SharedThresholds, slot: usize) {
        for (i, t) in self.tops.iter().enumerate() {
            shared.publish(slot + i, t.threshold());
        }
    }

    /// Recompute the cut table after a threshold rose: an item of code `(L, shard)` matters
    /// iff its score is above `min(next_down(lowest positive), thr(level 0..=L), thr(shard),
    /// results)`: a score equal to the lowest positive is a tie to count, so it must pass.
    fn refresh(&mut self, lowest: f32, nlev: usize, nshard: usize) {
        let mut base = lowest.next_down_f32();
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

/// Per-worker state of a screened block: the pairs whose upper bound passed their cut,
/// grouped by query and then by code segment, and their exact scores.
#[derive(Default)]
struct Screened {
    scratch: ScreenScratch,
    /// `(query, block row)` of each pair, for [`Screen::exact`].
    pairs: Vec<(u32, u32)>,
    exact: Vec<f32>,
    /// End of each (query, segment) run in `pairs`, at `query · segments + segment`.
    ends: Vec<usize>,
    bound: Vec<f32>,
    slot: Vec<u32>,
    /// Pairs bounded and pairs re-scored so far.
    counts: (u64, u64),
    /// Blocks to score in f32 before trying the screen again.
    pause: usize,
}

impl Screened {
    /// Whether to screen the next block: not for [`PAUSE_BLOCKS`] blocks after a block where
    /// more than one pair in [`MAX_RESCORED_SHARE`] needed its f32 score (a small pool, or
    /// deep levels still filling up), where the exact scores would cost more than the screen
    /// saves. Either path gives the same state.
    fn wants_block(&mut self) -> bool {
        if self.pause > 0 {
            self.pause -= 1;
            false
        } else {
            true
        }
    }

    /// Pairs of (query `q`, segment `si`): `pairs[a..b]`.
    fn range(&self, q: usize, si: usize, nseg: usize) -> (usize, usize) {
        let i = q * nseg + si;
        (if i == 0 { 0 } else { self.ends[i - 1] }, self.ends[i])
    }

    /// Collect the pairs of every query whose bound in `bounds` (`q · p + slot`) is above
    /// the query's cut for the slot's code (after taking the shared thresholds).
    #[allow(clippy::too_many_arguments)]
    fn collect(
        &mut self,
        bounds: &[f32],
        p: usize,
        by_code: &CodeOrder,
        states: &mut [PoolQueryState],
        positives: &[&QueryPositives],
        shared: &SharedThresholds,
        plan: &PoolPlan,
    ) {
        let (nlev, nshard, nsub) = (plan.nlev, plan.nshard, plan.nsub());
        self.pairs.clear();
        self.ends.clear();
        self.bound.resize(p + CHUNK, 0.0);
        self.slot.resize(p + CHUNK, 0);
        for (q, (qst, pos)) in states.iter_mut().zip(positives).enumerate() {
            qst.take_shared(shared, q * nsub, pos.lowest, (nlev, nshard));
            let row = &bounds[q * p..(q + 1) * p];
            for &(cidx, sa, sb) in &by_code.segments {
                let n = compact_above::<true>(
                    &row[sa..sb],
                    qst.table[cidx],
                    &mut self.bound,
                    &mut self.slot,
                );
                self.pairs.extend(
                    self.slot[..n]
                        .iter()
                        .map(|&s| (q as u32, by_code.order[sa + s as usize])),
                );
                self.ends.push(self.pairs.len());
            }
        }
        self.exact.resize(self.pairs.len(), 0.0);
        let bounded = states.len() * by_code.segments.last().map_or(0, |s| s.2);
        self.counts.0 += bounded as u64;
        self.counts.1 += self.pairs.len() as u64;
        if self.pairs.len() * MAX_RESCORED_SHARE > bounded {
            self.pause = PAUSE_BLOCKS;
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
    /// Pairs bounded by the screen, and pairs of those whose exact score was computed.
    pub screened: (u64, u64),
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
    /// query and subset. With `screen` (its queries those of `kernel`), a pass with floors
    /// bounds the scores with the screen and computes exact scores only for the pairs whose
    /// bound passes the cut ([`screen`](super::screen)); the states it ends with are the same.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        kernel: &ScoreKernel,
        screen: Option<&Screen>,
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
            screened: Screened,
        }
        let screen = screen.filter(|_| floors.is_some());
        if let Some(sc) = screen {
            assert_eq!(
                sc.queries(),
                positives.len(),
                "screen and kernel have other queries"
            );
        }
        let resume = std::sync::Mutex::new(resume);
        let init = || {
            let earlier = resume.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let (mut q, (off, screened)) = match earlier {
                Some(w) => (w.states, (w.renormalized, w.screened)),
                None => (
                    positives.iter().map(|p| self.query_state(p)).collect(),
                    (0, (0, 0)),
                ),
            };
            if let Some(f) = floors {
                for (qi, (st, p)) in q.iter_mut().zip(positives).enumerate() {
                    for (t, &fl) in st.tops.iter_mut().zip(&f[qi * nsub..(qi + 1) * nsub]) {
                        t.raise_threshold(fl);
                    }
                    st.refresh(p.lowest, nlev, nshard);
                }
            }
            let mut buf = Buffers::new(kernel, d);
            if let Some(sc) = screen {
                // The screen's panels of 6 queries may pad further than the kernel's.
                buf.scores.resize(buf.scores.len().max(sc.out_len()), 0.0);
            }
            PoolState {
                buf,
                by_code: CodeOrder::default(),
                cand: vec![0.0; bs + CHUNK],
                cand_slot: vec![0; bs + CHUNK],
                q,
                off,
                screened: Screened {
                    counts: screened,
                    ..Screened::default()
                },
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
            let order = &st.by_code.order;
            let key = |i: usize| key_offset + rows[i] as u64;
            if let Some(screen) = screen.filter(|_| st.screened.wants_block()) {
                let PoolState {
                    buf,
                    by_code,
                    cand,
                    cand_slot,
                    q: states,
                    screened,
                    ..
                } = st;
                screen.upper_bounds(
                    &buf.block,
                    &by_code.order,
                    &mut screened.scratch,
                    &mut buf.scores,
                );
                screened.collect(&buf.scores, bs, by_code, states, positives, shared, self);
                kernel
                    .exact(&buf.block, &screened.pairs, &mut screened.exact)
                    .expect("the screen runs with the Avx2Fma kernel only");
                let nseg = by_code.segments.len();
                for (q, p) in positives.iter().enumerate() {
                    let qst = &mut states[q];
                    for (si, &(cidx, ..)) in by_code.segments.iter().enumerate() {
                        let (a, b) = screened.range(q, si, nseg);
                        // Exact scores above the cut as it stands now.
                        let cut = qst.table[cidx];
                        let mut n = 0;
                        for i in a..b {
                            cand[n] = screened.exact[i];
                            cand_slot[n] = screened.pairs[i].1;
                            n += usize::from(screened.exact[i] > cut);
                        }
                        if n == 0 {
                            continue;
                        }
                        let rows_of = &cand_slot[..n];
                        if qst.absorb(p, decode[cidx], (nlev, nshard), &cand[..n], |i| {
                            key(rows_of[i] as usize)
                        }) {
                            qst.refresh(p.lowest, nlev, nshard);
                            qst.publish(shared, q * nsub);
                        }
                    }
                }
            } else {
                st.buf.score_in_order(kernel, order);
                for (q, p) in positives.iter().enumerate() {
                    let row = &st.buf.scores[q * bs..q * bs + n];
                    // Fetch the next query's reservoir tails while this one is processed.
                    if let Some(next) = st.q.get(q + 1) {
                        for t in &next.tops {
                            t.prefetch();
                        }
                    }
                    let qst = &mut st.q[q];
                    qst.take_shared(shared, q * nsub, p.lowest, (nlev, nshard));
                    for &(cidx, sa, sb) in &st.by_code.segments {
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
                        let slots = &st.cand_slot[..n];
                        if qst.absorb(p, decode[cidx], (nlev, nshard), &st.cand[..n], |i| {
                            key(order[sa + slots[i] as usize] as usize)
                        }) {
                            qst.refresh(p.lowest, nlev, nshard);
                            qst.publish(shared, q * nsub);
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
                screened: st.screened.counts,
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
            for (a, b) in acc.ties.iter_mut().zip(&o.ties) {
                *a += b;
            }
            if let (Some(r), Some(or)) = (&mut acc.res, &o.res) {
                r.merge(or);
            }
        }
        acc
    }
}

/// Pairs bounded by the screen and pairs re-scored, over all workers.
pub(super) fn screen_counts(workers: &[WorkerStates]) -> (u64, u64) {
    workers
        .iter()
        .fold((0, 0), |(a, b), w| (a + w.screened.0, b + w.screened.1))
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
