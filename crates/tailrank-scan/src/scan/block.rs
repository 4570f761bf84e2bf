//! Block plumbing of the scan: item codes, the sampled rows of each pool source, the blocks
//! they are cut into, the per-worker block buffers, the parallel block runner and progress.
//!
//! An *item code* names the subsets a sampled pool row belongs to: its deepest nested level
//! `L` (it belongs to levels `0..=L`) and its drift shard `h`, packed as
//! `code = L · max(shards, 1) + h` ([`Codes::pack`], [`Codes::unpack`]: the only two places
//! that know the layout).

use super::kernel::{ScoreKernel, Scratch};
use crate::error::{Error, Result};
use crate::sample::HashRange;
use crate::summary::{Subset, SubsetKind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Progress callback, called from worker threads with the number of pool rows (sampled or
/// skipped) just finished. The calls add up to the total number of pool rows.
pub trait Progress: Sync {
    fn rows_done(&self, rows: u64);

    /// Whether the caller asks the scan to stop (Python's Ctrl-C). A scan checks it before
    /// each block and each pool source and then returns [`cancelled`], having written nothing.
    fn cancelled(&self) -> bool {
        false
    }
}

/// A [`Progress`] for a second pass over rows already counted: it reports no rows and asks
/// to stop when the wrapped one does.
pub struct CancelOnly<'a>(pub &'a dyn Progress);

impl Progress for CancelOnly<'_> {
    fn rows_done(&self, _rows: u64) {}

    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
}

/// The error of a scan whose [`Progress`] asked it to stop.
pub fn cancelled() -> Error {
    Error::new(crate::ErrorKind::Io, "interrupted: the scan was cancelled")
}

/// `Err(`[`cancelled`]`)` when `progress` asks the scan to stop.
pub fn check_cancelled(progress: &dyn Progress) -> Result<()> {
    if progress.cancelled() {
        Err(cancelled())
    } else {
        Ok(())
    }
}

/// A [`Progress`] that ignores progress.
pub struct NoProgress;

impl Progress for NoProgress {
    fn rows_done(&self, _rows: u64) {}
}

impl<P: Progress + ?Sized> Progress for Box<P> {
    fn rows_done(&self, rows: u64) {
        (**self).rows_done(rows);
    }

    fn cancelled(&self) -> bool {
        (**self).cancelled()
    }
}

/// The item-code layout of a scan: `levels` nested levels and `shards` drift shards (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codes {
    pub levels: usize,
    pub shards: usize,
}

impl Codes {
    /// The layout of `subs` (levels first, then shards, as [`subsets`](super::engine::subsets)
    /// makes them).
    pub fn of(subs: &[Subset]) -> Self {
        let levels = subs.iter().filter(|s| s.kind == SubsetKind::Level).count();
        Codes {
            levels,
            shards: subs.len() - levels,
        }
    }

    /// Subsets: levels, then shards.
    pub fn subsets(&self) -> usize {
        self.levels + self.shards
    }

    /// Number of distinct codes: `levels · max(shards, 1)`.
    pub fn count(&self) -> usize {
        self.levels * self.shards.max(1)
    }

    /// `L · max(shards, 1) + shard`.
    #[inline]
    pub fn pack(&self, deepest: usize, shard: usize) -> u32 {
        (deepest * self.shards.max(1) + shard) as u32
    }

    /// `(deepest level L, shard)` of a code (shard 0 without shards).
    #[inline]
    pub fn unpack(&self, code: u32) -> (usize, usize) {
        let ns = self.shards.max(1);
        (code as usize / ns, code as usize % ns)
    }

    /// Items per subset of the given codes: an item counts in levels `0..=L` and in its shard.
    pub fn subset_counts<'a>(&self, codes: impl Iterator<Item = &'a u32>) -> Vec<u64> {
        let mut out = vec![0u64; self.subsets()];
        for &c in codes {
            let (deepest, shard) = self.unpack(c);
            for size in &mut out[..=deepest] {
                *size += 1;
            }
            if self.shards > 0 {
                out[self.levels + shard] += 1;
            }
        }
        out
    }
}

/// Hash-range bookkeeping of the subsets: the item code of a hash.
pub struct Sampler {
    codes: Codes,
    levels: Vec<HashRange>,
    shards: Vec<HashRange>,
}

impl Sampler {
    pub fn new(subs: &[Subset]) -> Self {
        let pick = |k| {
            subs.iter()
                .filter(|s| s.kind == k)
                .map(|s| s.range)
                .collect()
        };
        Sampler {
            codes: Codes::of(subs),
            levels: pick(SubsetKind::Level),
            shards: pick(SubsetKind::Shard),
        }
    }

    /// `None` when the hash is outside level 0, else the code of the deepest level containing
    /// the hash and of its shard.
    #[inline]
    pub fn code(&self, h: u64) -> Option<u32> {
        if !self.levels[0].contains(h) {
            return None;
        }
        let deepest = self.levels.iter().take_while(|r| r.contains(h)).count() - 1;
        let shard = if self.shards.is_empty() {
            0
        } else {
            (self.shards.partition_point(|r| r.hi <= h)).min(self.shards.len() - 1)
        };
        Some(self.codes.pack(deepest, shard))
    }
}

/// A sampled pool source: its sampled rows (ascending) and their item codes.
pub struct SampledSource {
    pub rows: Vec<u32>,
    pub codes: Vec<u32>,
    /// Key of row 0 in the results ordering (core rows first, then sources in order).
    pub key_offset: u64,
}

/// A block of sampled rows: `sampled[source].rows[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Index of the pool source.
    pub source: usize,
    /// First and end index into the source's sampled rows.
    pub start: usize,
    pub end: usize,
    /// Source rows (sampled or skipped) the block accounts for in progress reports: the
    /// blocks of a source add up to its rows.
    pub covered: u64,
}

/// Cut the sampled rows of every source into blocks of at most `rows` sampled rows; a source
/// with `source_rows[i]` rows and no sampled row gets no block.
pub fn cut_blocks(sampled: &[SampledSource], source_rows: &[usize], rows: usize) -> Vec<Block> {
    let mut blocks = Vec::new();
    for (si, s) in sampled.iter().enumerate() {
        let n = s.rows.len();
        let mut covered_to = 0u64;
        let mut a = 0;
        while a < n {
            let b = (a + rows).min(n);
            let end_row = if b == n {
                source_rows[si] as u64
            } else {
                s.rows[b - 1] as u64 + 1
            };
            blocks.push(Block {
                source: si,
                start: a,
                end: b,
                covered: end_row - covered_to,
            });
            covered_to = end_row;
            a = b;
        }
    }
    blocks
}

/// Block buffers of one worker: the gathered rows (`p × D`), the scratch of the kernel and the
/// scores (`out_rows × p`, or longer when the screen's bounds share the buffer).
pub struct Buffers {
    pub block: Vec<f32>,
    scratch: Scratch,
    pub scores: Vec<f32>,
}

impl Buffers {
    pub fn new(k: &ScoreKernel, d: usize) -> Self {
        Buffers {
            block: vec![0.0; k.block_rows() * d],
            scratch: Scratch::default(),
            scores: vec![0.0; k.out_len()],
        }
    }

    /// Score the current block with `k`.
    pub fn score(&mut self, k: &ScoreKernel) {
        let n = k.out_len();
        k.scores(&self.block, &mut self.scratch, &mut self.scores[..n]);
    }

    /// Score the current block with `k`, score column `s` holding block row `order[s]`.
    pub fn score_in_order(&mut self, k: &ScoreKernel, order: &[u32]) {
        let n = k.out_len();
        k.scores_in_order(
            &self.block,
            Some(order),
            &mut self.scratch,
            &mut self.scores[..n],
        );
    }
}

/// Run `nblocks` work items on the threads of the current rayon pool, each worker with its own
/// state from `init`. On errors, the error of the lowest-numbered failing block is returned
/// (deterministic: blocks are claimed in order and claimed blocks always finish).
pub fn run_blocks<S: Send>(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_count_nested_levels() {
        for (levels, shards) in [(5, 4), (1, 0), (3, 1), (32, 256)] {
            let c = Codes { levels, shards };
            for l in 0..levels {
                for h in 0..shards.max(1) {
                    assert_eq!(c.unpack(c.pack(l, h)), (l, h));
                    assert!((c.pack(l, h) as usize) < c.count());
                }
            }
        }
        let c = Codes {
            levels: 3,
            shards: 2,
        };
        let codes = [c.pack(0, 1), c.pack(2, 0), c.pack(1, 1)];
        // Level 0: all three; level 1: two; level 2: one; shard 0: one; shard 1: two.
        assert_eq!(c.subset_counts(codes.iter()), vec![3, 2, 1, 1, 2]);
    }

    #[test]
    fn blocks_cover_every_source_row_once() {
        let sampled = vec![
            SampledSource {
                rows: vec![1, 2, 5, 9],
                codes: vec![0; 4],
                key_offset: 0,
            },
            SampledSource {
                rows: vec![],
                codes: vec![],
                key_offset: 10,
            },
        ];
        let blocks = cut_blocks(&sampled, &[12, 7], 3);
        assert_eq!(
            blocks,
            vec![
                Block {
                    source: 0,
                    start: 0,
                    end: 3,
                    covered: 6
                },
                Block {
                    source: 0,
                    start: 3,
                    end: 4,
                    covered: 6
                }
            ]
        );
    }
}
