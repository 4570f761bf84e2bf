//! Collectors of the scan: what the drivers ([`pool`](super::pool)) feed scores into, and how
//! their contents become a query's summary.
//!
//! * [`QueryPositives`]: per query, the positives sorted by score (the reference the counts
//!   are taken against).
//! * [`QueryCollector`]: per query and worker, the top-M reservoirs of every subset, the count
//!   and tie histograms by item code, and the results reservoir. Collectors over disjoint
//!   blocks merge exactly (counts are sums, top-M lists value multisets).
//! * [`CoreCounts`]: per query, the core pass's histograms `C_j` and ties `T^C_j`, and the core
//!   rows of the results.
//!
//! Counts from histograms (docs/method.md §5): `m = #{j : s_j ≥ s}` per candidate `s`; `K_j =
//! Σ_{m < j} hist[m]` (1-based `j`); levels are summed from the deepest (an item of deepest
//! level `L` is in levels `0..=L`).

use super::block::Codes;
use super::topm::{SharedThresholds, TopKeyed, TopM};
use crate::summary::{PositiveSummary, QuerySummary};

/// Per query: positives sorted by score descending (ties by id).
pub struct QueryPositives {
    pub ids: Vec<String>,
    pub scores: Vec<f32>,
    /// Core rows of the positives, sorted ascending (relevance test in the core pass).
    pub rows_sorted: Vec<usize>,
    pub lowest: f32,
}

/// Buffer capacity of a results reservoir of size `k`.
pub fn results_cap(k: usize) -> usize {
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

/// The collector of one query in one worker (faiss's result handler, ripgrep's sink): the
/// top-M reservoir of every subset, the count and tie histograms, and the results reservoir.
/// Drivers feed it candidates ([`absorb`](Self::absorb)); collectors of disjoint blocks
/// [`merge`](Self::merge); [`finish`](Self::finish) turns the merged one into the query's
/// summary.
pub struct QueryCollector {
    pub tops: Vec<TopM>,
    /// `(levels + shards) × (n + 1)` histogram of `m = #{j : s_j ≥ s}`: rows `0..levels` by
    /// deepest level, then one row per shard.
    pub hist: Vec<u64>,
    /// Same layout as `hist`: `ties[row · (n + 1) + m]` counts the items whose score equals
    /// `s_{m-1}`, the lowest score of the positive block ending at `m - 1` (0-based).
    pub ties: Vec<u64>,
    pub res: Option<TopKeyed>,
    /// Cut per item code `L · max(shards, 1) + shard`; scores at or below it change nothing.
    pub table: Vec<f32>,
}

impl QueryCollector {
    pub fn new(
        lowest: f32,
        npos: usize,
        (nlev, nshard): (usize, usize),
        top_m: &[usize],
        results_k: Option<usize>,
    ) -> Self {
        let nsub = nlev + nshard;
        debug_assert_eq!(top_m.len(), nsub);
        let mut st = QueryCollector {
            tops: top_m.iter().map(|&m| TopM::new(m, 2 * m)).collect(),
            hist: vec![0; nsub * (npos + 1)],
            ties: vec![0; nsub * (npos + 1)],
            res: results_k.map(|k| TopKeyed::new(k, results_cap(k))),
            table: vec![
                f32::NEG_INFINITY;
                Codes {
                    levels: nlev,
                    shards: nshard
                }
                .count()
            ],
        };
        st.refresh(lowest, nlev, nshard);
        st
    }

    /// Take the candidates `cand` (scores above the cut of item code `(deepest, shard)`) into
    /// the reservoirs of the code's subsets, the count histograms and the results reservoir
    /// (`key(i)`: results key of candidate `i`). Returns whether a threshold may have risen.
    pub fn absorb(
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

    /// Hint the CPU to fetch the line each reservoir writes next ([`TopM::prefetch`]).
    pub fn prefetch_tails(&self) {
        for t in &self.tops {
            t.prefetch();
        }
    }

    /// Raise the thresholds to those other workers reached (slots `slot..slot + subsets` of
    /// `shared`): they bound the merged top-M from below.
    pub fn take_shared(
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
    pub fn publish(&self, shared: &SharedThresholds, slot: usize) {
        for (i, t) in self.tops.iter().enumerate() {
            shared.publish(slot + i, t.threshold());
        }
    }

    /// Recompute the cut table after a threshold rose: an item of code `(L, shard)` matters
    /// iff its score is above `min(next_down(lowest positive), thr(level 0..=L), thr(shard),
    /// results)`: a score equal to the lowest positive is a tie to count, so it must pass.
    pub fn refresh(&mut self, lowest: f32, nlev: usize, nshard: usize) {
        let mut base = lowest.next_down_f32();
        if let Some(r) = &self.res {
            // Results accept scores equal to their threshold (ties broken by key).
            base = base.min(r.threshold().next_down_f32());
        }
        let codes = Codes {
            levels: nlev,
            shards: nshard,
        };
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
                self.table[codes.pack(l, sh) as usize] = c;
            }
        }
    }
}

/// Flag of a results key that marks a positive of the query (a core row).
pub const RELEVANT_KEY: u64 = 1 << 63;

/// Results key of core row `row`: the row, with [`RELEVANT_KEY`] set when it is a positive of
/// the query. Keys order equal scores, so a tie block of the results lists holds its
/// non-relevant items (core, then pool rows) before its positives, and a block straddling the
/// cut keeps non-relevant items first: the order the summary counts ranks in
/// (`docs/reference/metrics.md`, "From counts"). Pool keys are below 2⁶³.
pub fn core_result_key(row: usize, relevant: bool) -> u64 {
    row as u64 | if relevant { RELEVANT_KEY } else { 0 }
}

/// The core pass's collectors: per query, `hist[m]` (non-relevant core items with
/// `m = #{j : s_j ≥ s}`), `ties[m]` (those equal to `s_{m-1}`) and the results reservoir fed
/// with core rows (keys `0..core rows`).
pub struct CoreCounts {
    pub hist: Vec<Vec<u64>>,
    pub ties: Vec<Vec<u64>>,
    pub results: Vec<Option<TopKeyed>>,
}

impl CoreCounts {
    /// Empty collectors for `positives`.
    pub fn new(positives: &[QueryPositives], results_k: Option<usize>) -> Self {
        CoreCounts {
            hist: positives
                .iter()
                .map(|p| vec![0; p.scores.len() + 1])
                .collect(),
            ties: positives
                .iter()
                .map(|p| vec![0; p.scores.len() + 1])
                .collect(),
            results: positives
                .iter()
                .map(|_| results_k.map(|k| TopKeyed::new(k, results_cap(k))))
                .collect(),
        }
    }

    /// Take the scores `row` of core rows `start..` for query `q`.
    #[inline]
    pub fn add(&mut self, q: usize, p: &QueryPositives, start: usize, row: &[f32]) {
        let hist = &mut self.hist[q];
        let ties = &mut self.ties[q];
        for (i, &s) in row.iter().enumerate() {
            if s >= p.lowest && p.rows_sorted.binary_search(&(start + i)).is_err() {
                let m = p.scores.partition_point(|&x| x >= s);
                hist[m] += 1;
                if m > 0 && p.scores[m - 1] == s {
                    ties[m] += 1;
                }
            }
        }
        if let Some(r) = &mut self.results[q] {
            for (i, &s) in row.iter().enumerate() {
                let relevant = p.rows_sorted.binary_search(&(start + i)).is_ok();
                r.push(s, core_result_key(start + i, relevant));
            }
        }
    }

    /// Add the collectors of other core blocks.
    pub fn merge(&mut self, o: &CoreCounts) {
        for q in 0..self.hist.len() {
            for (a, b) in self.hist[q].iter_mut().zip(&o.hist[q]) {
                *a += b;
            }
            for (a, b) in self.ties[q].iter_mut().zip(&o.ties[q]) {
                *a += b;
            }
            if let (Some(r), Some(x)) = (&mut self.results[q], &o.results[q]) {
                r.merge(x);
            }
        }
    }
}
/// Counts and top-M lists of one query from its merged state: `K_{j,ℓ} = Σ_{m < j} Σ_{L ≥ ℓ}
/// hist[L][m]` for levels, `Σ_{m < j} hist[shard][m]` for shards, `C_j = Σ_{m < j} core[m]`
/// (1-based `j`); ties `T_j = ties[e + 1]` with `e` the last (0-based) positive of `j`'s block
/// of equal scores, summed over the deepest levels like the counts. `core` = (`hist`, `ties`).
pub fn query_summary(
    id: &str,
    p: &QueryPositives,
    acc: QueryCollector,
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
