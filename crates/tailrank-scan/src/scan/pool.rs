//! The drivers of a pool pass: blocks of sampled pool rows scored against all queries and fed
//! to the per-query collectors ([`QueryCollector`]: top-M reservoirs, count histograms,
//! results), either plain (every score from the kernel) or screened (the integer screen bounds
//! every score, and only the pairs whose bound passes the cut get their exact score); steps
//! 2–4 of the algorithm in [`engine`](super::engine). [`pass`](super::pass) decides which
//! blocks go in which stage, from which floors.
//!
//! Per block and query, scores are visited in runs of one item code `(deepest level L,
//! shard)`. A run's candidates are the scores above the code's cut `min(lowest positive,
//! thresholds of levels 0..=L and of the shard, results threshold)`: they are compacted
//! branch-free ([`compact_above`](super::compact::compact_above)) and then appended to each reservoir of the code's subsets
//! with [`TopM::push_batch`](super::topm::TopM::push_batch). A score at or above the lowest positive is binary-searched among
//! the sorted positive scores (`m = #{j : s_j ≥ s}`, `hist[L][m] += 1`, `hist[shard][m] += 1`);
//! when it equals a positive's score (`s_{m-1} == s`) it is also a tie of that positive's block:
//! `ties[L][m] += 1`, `ties[shard][m] += 1`. The cut's positive part is the largest f32 below
//! the lowest positive, so a score equal to it is a candidate (`> cut`), screened or not.
//!
//! A pass may start from *floors* (one per query and subset): values at or below a floor are
//! rejected by that subset's reservoir. Floors are how the speculative pilot of
//! [`speculate`](super::speculate) speeds up the top-M warm-up; the caller verifies them.

use super::block::{check_cancelled, run_blocks, Block, Buffers, Codes, Progress, SampledSource};
use super::collect::{QueryCollector, QueryPositives};
use super::compact::{compact_above, CHUNK};
use super::kernel::ScoreKernel;
use super::rows::{check_rows, gather};
use super::screen::{Screen, ScreenScratch};
use super::topm::SharedThresholds;
use crate::error::Result;
use crate::formats::descriptors::DescriptorSource;

/// A screened block where more than one pair in this many needed its f32 score pauses the
/// screen: an exact score costs about ten times what the screen saves on a pair
/// (`docs/reference/performance.md`), so past ~6% the all-f32 block is cheaper.
const MAX_RESCORED_SHARE: usize = 16;
/// How many queries ahead the screened path prefetches reservoir tails: a screened query's
/// few candidates take less time than one fetch (1M × 768, Q = 1000, paired: 1 ahead 0.94×
/// of none, 2 ahead 0.97× of 1, 4 ahead 1.03× of 2).
const SCREENED_PREFETCH_AHEAD: usize = 2;
/// Blocks scored in f32 before the screen is tried again.
const PAUSE_BLOCKS: usize = 8;

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
        states: &mut [QueryCollector],
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

/// What every pool pass of one scan shares.
pub struct PoolPlan<'a> {
    pub pool: &'a [&'a dyn DescriptorSource],
    pub sampled: &'a [SampledSource],
    pub blocks: &'a [Block],
    pub d: usize,
    pub nlev: usize,
    pub nshard: usize,
    /// Scores kept per query in each subset's reservoir ([`Subset::kept`]), clamped to S_0.
    pub top_m: Vec<usize>,
    pub results_k: Option<usize>,
    pub normalize: bool,
}

/// The states one worker of a pass ends with: one per query of the pass, and the number of
/// rows it renormalised.
pub struct WorkerStates {
    pub states: Vec<QueryCollector>,
    pub renormalized: u64,
    /// Pairs bounded by the screen, and pairs of those whose exact score was computed.
    pub screened: (u64, u64),
}

impl PoolPlan<'_> {
    fn nsub(&self) -> usize {
        self.nlev + self.nshard
    }

    /// A fresh state for one query.
    pub fn query_state(&self, p: &QueryPositives) -> QueryCollector {
        QueryCollector::new(
            p.lowest,
            p.scores.len(),
            (self.nlev, self.nshard),
            &self.top_m,
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
        let codes = Codes {
            levels: self.nlev,
            shards: self.nshard,
        };
        let pass = Pass {
            plan: self,
            kernel,
            screen: screen.filter(|_| floors.is_some()),
            positives,
            shared,
            decode: (0..codes.count() as u32).map(|c| codes.unpack(c)).collect(),
        };
        if let Some(sc) = pass.screen {
            assert_eq!(
                sc.queries(),
                positives.len(),
                "screen and kernel have other queries"
            );
        }
        let resume = std::sync::Mutex::new(resume);
        let init = || {
            let earlier = resume.lock().unwrap_or_else(|p| p.into_inner()).pop();
            pass.worker(earlier, floors)
        };
        let states = run_blocks(which.len(), init, |st, wi| {
            let block = self.blocks[which[wi]];
            if let Some(pr) = progress {
                check_cancelled(pr)?;
            }
            pass.block(st, block)?;
            if let Some(pr) = progress {
                pr.rows_done(block.covered);
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
    pub fn merge(&self, p: &QueryPositives, parts: Vec<QueryCollector>) -> QueryCollector {
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

/// One worker's state in a [`PoolPlan::run`]: its buffers, the block's code order, the
/// candidate buffers (`block rows + CHUNK`), one collector per query, the rows it
/// renormalised, and the screen's state.
struct PassWorker {
    buf: Buffers,
    by_code: CodeOrder,
    cand: Vec<f32>,
    cand_slot: Vec<u32>,
    q: Vec<QueryCollector>,
    off: u64,
    screened: Screened,
}

/// What every block of one [`PoolPlan::run`] shares: the plan, the kernel and screen (the
/// screen only in a pass with floors), the positives and shared thresholds of its queries.
struct Pass<'p, 'a> {
    plan: &'p PoolPlan<'a>,
    kernel: &'p ScoreKernel,
    screen: Option<&'p Screen>,
    positives: &'p [&'p QueryPositives],
    shared: &'p SharedThresholds,
    /// Item code → (deepest level, shard).
    decode: Vec<(usize, usize)>,
}

impl Pass<'_, '_> {
    /// A worker's state: continued from `earlier` (its collectors, renormalised rows and
    /// screen counts) or fresh, with each reservoir `i` of query `q` raised to
    /// `floors[q · subsets + i]` when there are floors.
    fn worker(&self, earlier: Option<WorkerStates>, floors: Option<&[f32]>) -> PassWorker {
        let plan = self.plan;
        let (nlev, nshard, nsub) = (plan.nlev, plan.nshard, plan.nsub());
        let bs = self.kernel.block_rows();
        let (mut q, (off, screened)) = match earlier {
            Some(w) => (w.states, (w.renormalized, w.screened)),
            None => (
                self.positives.iter().map(|p| plan.query_state(p)).collect(),
                (0, (0, 0)),
            ),
        };
        if let Some(f) = floors {
            for (qi, (st, p)) in q.iter_mut().zip(self.positives).enumerate() {
                for (t, &fl) in st.tops.iter_mut().zip(&f[qi * nsub..(qi + 1) * nsub]) {
                    t.raise_threshold(fl);
                }
                st.refresh(p.lowest, nlev, nshard);
            }
        }
        let mut buf = Buffers::new(self.kernel, plan.d);
        if let Some(sc) = self.screen {
            // The screen's panels of 6 queries may pad further than the kernel's.
            buf.scores.resize(buf.scores.len().max(sc.out_len()), 0.0);
        }
        PassWorker {
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
    }

    /// Read, check and score the sampled rows of `block` and feed them to the worker's
    /// collectors: screened when the pass has a screen and the worker does not pause it,
    /// else with every score from the kernel. Either path gives the same state.
    fn block(&self, st: &mut PassWorker, block: Block) -> Result<()> {
        let plan = self.plan;
        let Block {
            source: si,
            start: a,
            end: e,
            ..
        } = block;
        let (src, s) = (plan.pool[si], &plan.sampled[si]);
        let rows = &s.rows[a..e];
        let codes = &s.codes[a..e];
        let (n, d) = (rows.len(), plan.d);
        gather(src, rows, d, &mut st.buf.block)?;
        st.off += check_rows(&mut st.buf.block[..n * d], d, plan.normalize, src, |i| {
            rows[i] as usize
        })?;
        // Score the rows grouped by code, so that each run of scores is pre-filtered
        // against its own cut (a nearly empty deep level then only slows its own items).
        st.by_code.build(codes, self.kernel.block_rows());
        if let Some(screen) = self.screen.filter(|_| st.screened.wants_block()) {
            self.screened_block(screen, st, s.key_offset, rows);
        } else {
            self.plain_block(st, s.key_offset, rows);
        }
        Ok(())
    }

    /// The screened path of [`block`](Self::block) (rows in `st.buf.block`, grouped by
    /// `st.by_code`): bound every score with `screen`, compute the exact scores of the pairs
    /// whose bound passes the cut, and absorb those above the cut as it stands, per query
    /// and code run. Pool row `i` of the block has key `key_offset + rows[i]`.
    fn screened_block(&self, screen: &Screen, st: &mut PassWorker, key_offset: u64, rows: &[u32]) {
        let (nlev, nshard, nsub) = (self.plan.nlev, self.plan.nshard, self.plan.nsub());
        let (bs, shared, decode) = (self.kernel.block_rows(), self.shared, &self.decode);
        let key = |i: usize| key_offset + rows[i] as u64;
        let PassWorker {
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
        screened.collect(
            &buf.scores,
            bs,
            by_code,
            states,
            self.positives,
            shared,
            self.plan,
        );
        self.kernel
            .exact(&buf.block, &screened.pairs, &mut screened.exact)
            .expect("the screen runs with the Avx2Fma kernel only");
        let nseg = by_code.segments.len();
        for (q, p) in self.positives.iter().enumerate() {
            // Fetch the reservoir tails of a query ahead while this one is processed.
            if let Some(ahead) = states.get(q + SCREENED_PREFETCH_AHEAD) {
                ahead.prefetch_tails();
            }
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
    }

    /// The plain path of [`block`](Self::block) (the `rows.len()` rows in `st.buf.block`,
    /// grouped by `st.by_code`): score every row in code order and absorb, per query and
    /// code run, the scores above the run's cut, compacted branch-free. Pool row `i` of the
    /// block has key `key_offset + rows[i]`.
    fn plain_block(&self, st: &mut PassWorker, key_offset: u64, rows: &[u32]) {
        let (nlev, nshard, nsub) = (self.plan.nlev, self.plan.nshard, self.plan.nsub());
        let (bs, shared, decode) = (self.kernel.block_rows(), self.shared, &self.decode);
        let n = rows.len();
        let key = |i: usize| key_offset + rows[i] as u64;
        let order = &st.by_code.order;
        st.buf.score_in_order(self.kernel, order);
        for (q, p) in self.positives.iter().enumerate() {
            let row = &st.buf.scores[q * bs..q * bs + n];
            // Fetch the next query's reservoir tails while this one is processed.
            if let Some(next) = st.q.get(q + 1) {
                next.prefetch_tails();
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
}

/// Pairs bounded by the screen and pairs re-scored, over all workers.
pub fn screen_counts(workers: &[WorkerStates]) -> (u64, u64) {
    workers
        .iter()
        .fold((0, 0), |(a, b), w| (a + w.screened.0, b + w.screened.1))
}

/// Regroup per-worker states by query: `out[q]` holds query `q`'s state of every worker.
pub fn by_query(workers: Vec<WorkerStates>, nq: usize) -> (Vec<Vec<QueryCollector>>, u64) {
    let mut out: Vec<Vec<QueryCollector>> = (0..nq).map(|_| Vec::new()).collect();
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
