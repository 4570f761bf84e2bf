//! The scan summary (SPEC 5): everything prediction and exact evaluation need from a pass over
//! the descriptors, small enough to keep (ILIAS: ~100 MB), and mergeable across disjoint shards.
//!
//! On disk it is a folder readable with numpy alone (see `docs/formats.md`):
//! `manifest.json` plus `.npy` arrays. TODO(scan helper): `write`, `read`, `merge`.

use crate::error::{Error, Result};
use crate::sample::HashRange;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Version of the on-disk summary format; readers refuse newer versions.
pub const SUMMARY_FORMAT_VERSION: u32 = 1;

/// What a subset of the scanned pool is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubsetKind {
    /// Nesting level ℓ: the hash sample at fraction `f / 2^ℓ` (level 0 is the whole sample).
    Level,
    /// A disjoint hash shard of the level-0 sample, for the drift check.
    Shard,
}

/// A subset of the pool defined by a hash range (SPEC 4): pool item `id` belongs to it iff
/// `range.contains(xxh3_64_with_seed(id, seed))`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subset {
    pub kind: SubsetKind,
    /// Nominal fraction of the full pool this subset samples (levels: `f/2^ℓ`; shards: `f/H`).
    pub fraction: f64,
    pub range: HashRange,
}

/// One positive of one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositiveSummary {
    pub id: String,
    /// Score `s_j` (inner product, f32 accumulation).
    pub score: f32,
    /// `C_j`: non-relevant core items scoring strictly above `s_j` (exact).
    pub core_above: u64,
    /// `K_{j,ℓ}` for each subset ℓ (same order as [`Summary::subsets`]): pool items of the
    /// subset scoring strictly above `s_j`. Bitwise-equal scores do not outrank.
    pub pool_above: Vec<u64>,
}

/// One query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuerySummary {
    pub id: String,
    /// Positives sorted by score, descending (ties: by id, for determinism).
    pub positives: Vec<PositiveSummary>,
    /// For each subset: the top-M pool scores of that subset, descending (fewer than M when the
    /// subset holds fewer items).
    pub top_scores: Vec<Vec<f32>>,
}

/// A record of one scanned pool input (for integrity checks and overlap detection on merge).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRecord {
    /// Role of the input: `queries`, `core`, `pool`, `ground_truth`.
    pub role: String,
    pub path: String,
    pub digest: String,
    pub rows: u64,
}

/// The scan summary of one query set.
///
/// Invariants: `subsets.len() == subset_sizes.len()`; every `pool_above` and `top_scores` has
/// `subsets.len()` entries; `subsets[0]` is the level-0 sample (fraction `fraction`); levels come
/// first, in decreasing fraction, then shards; counts are monotone: `K_{j,ℓ}` non-decreasing in
/// `j` (positives sorted descending) and level counts nested (`K_{j,ℓ+1} ≤ K_{j,ℓ}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub format_version: u32,
    pub tool_version: String,
    /// Model name given by the user.
    pub model: String,
    /// Query set name (`image`, `text`, `queries`, ...).
    pub query_set: String,
    /// Size N of the full distractor pool (None when unknown: exact metrics still work).
    pub pool_size: Option<u64>,
    /// Level-0 sampling fraction f (1 in exact mode).
    pub fraction: f64,
    pub seed: u64,
    /// M, the number of top pool scores kept per query and subset.
    pub top_m: usize,
    /// Number of non-relevant-or-relevant core items scanned (the whole core).
    pub core_size: u64,
    pub subsets: Vec<Subset>,
    /// S_ℓ: number of pool items seen in each subset.
    pub subset_sizes: Vec<u64>,
    pub queries: Vec<QuerySummary>,
    /// Inputs that went into this summary (queries, core, gt, pool shards).
    pub inputs: Vec<InputRecord>,
}

impl Summary {
    /// Indices of the nesting levels in `subsets` (level 0 first).
    pub fn level_indices(&self) -> Vec<usize> {
        (0..self.subsets.len())
            .filter(|&i| self.subsets[i].kind == SubsetKind::Level)
            .collect()
    }

    /// Indices of the drift shards in `subsets`.
    pub fn shard_indices(&self) -> Vec<usize> {
        (0..self.subsets.len())
            .filter(|&i| self.subsets[i].kind == SubsetKind::Shard)
            .collect()
    }

    /// Whether this summary covers the whole pool (exact mode: f = 1 and, when N is known,
    /// S_0 = N).
    pub fn is_exact(&self) -> bool {
        self.fraction >= 1.0 && self.pool_size.is_none_or(|n| n == self.subset_sizes[0])
    }

    /// Write the summary folder atomically.
    pub fn write(&self, dir: &Path) -> Result<()> {
        Err(Error::file(dir, "summary writer not implemented yet"))
    }

    /// Read a summary folder, refusing unknown or newer format versions and corrupted arrays.
    pub fn read(dir: &Path) -> Result<Summary> {
        Err(Error::file(dir, "summary reader not implemented yet"))
    }

    /// Merge summaries of disjoint pool shards of the same queries, core, model, seed and
    /// subsets: counts and sizes add, top-M lists merge. Refuses overlapping inputs.
    pub fn merge(parts: &[Summary]) -> Result<Summary> {
        let _ = parts;
        Err(Error::invalid("summary merge not implemented yet"))
    }
}
