//! The scan summary (docs/method.md §5): everything prediction and exact evaluation need from a pass over
//! the descriptors, small enough to keep (ILIAS: ~100 MB), and mergeable across disjoint shards.
//!
//! On disk it is a folder readable with numpy alone (see `docs/reference/summary-format.md`):
//! `manifest.json` plus `.npy` arrays, written atomically and checked on reading (format name,
//! version, xxh3 checksums, shapes). [`Summary::merge`] adds summaries of disjoint pool shards.

use crate::error::{Error, Result};
use crate::sample::HashRange;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the on-disk summary format; readers refuse newer versions.
///
/// Version 2 added `manifest.xxh3` (checksum of `manifest.json`), `pool_id_hashes.npy` (the
/// pool fingerprint, [`Summary::pool_id_hashes`]) and the per-positive tie counts
/// (`pos_core_ties.npy`, `pos_pool_ties.npy`). Version-1 folders still read, with a warning
/// ([`Summary::read_with_warnings`]), no fingerprint and [`Summary::ties_known`] false.
/// Version 3 lets a drift shard keep fewer top scores than M ([`Subset::top_m`]); a reader of
/// version 2 would merge such lists to M and so get them wrong, hence the new version.
/// Folders of versions 1 and 2 read as version 3 (each shard's first [`shard_top_m`] scores)
/// and predict; [`Summary::format_version`] keeps the version read.
pub const SUMMARY_FORMAT_VERSION: u32 = 3;

/// The top scores a drift shard keeps per query: `⌈M/H⌉` (docs/method.md §5). A shard
/// holds S/H of the S sampled items, so its top ⌈M/H⌉ reaches the pool quantile M/S that
/// level 0's top M reaches: a shard's tail fit is level 0's fit on 1/H of the sample, which
/// is what the random-groups pool noise `sd_h(m_h)/√H` assumes (docs/reference/predict.md).
pub fn shard_top_m(top_m: usize, shards: usize) -> usize {
    top_m.div_ceil(shards.max(1))
}

/// What a subset of the scanned pool is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubsetKind {
    /// Nesting level ℓ: the hash sample at fraction `f / 2^ℓ` (level 0 is the whole sample).
    Level,
    /// A disjoint hash shard of the level-0 sample, for the drift check.
    Shard,
}

/// A subset of the pool defined by a hash range (docs/method.md §4): pool item `id` belongs to it iff
/// `range.contains(xxh3_64_with_seed(id, seed))`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subset {
    pub kind: SubsetKind,
    /// Nominal fraction of the full pool this subset samples (levels: `f/2^ℓ`; shards: `f/H`).
    pub fraction: f64,
    pub range: HashRange,
    /// The number of top scores its lists keep per query when that is not the summary's
    /// `top_m` (format version 3: a drift shard keeps ⌈M/H⌉,
    /// [`shard_top_m`]); `None` keeps M. Read it through
    /// [`Subset::kept`]. (Always serialised, for formats that are not self-describing;
    /// the manifest leaves it out where it is `None`.)
    #[serde(default)]
    pub top_m: Option<usize>,
}

impl Subset {
    /// The M of this subset's top lists: its own `top_m`, else the summary's `top_m`.
    pub fn kept(&self, top_m: usize) -> usize {
        self.top_m.unwrap_or(top_m)
    }

    /// The share of the 2^64 hashes its range holds, `(hi − lo) / 2^64` (`hi = 2^64 − 1` is
    /// inclusive, so `[0, 2^64 − 1]` holds 1): the fraction of the pool the subset samples
    /// (docs/method.md §4).
    pub fn range_fraction(&self) -> f64 {
        let HashRange { lo, hi } = self.range;
        let width = (hi as u128 + u128::from(hi == u64::MAX)).saturating_sub(lo as u128);
        width as f64 / 18_446_744_073_709_551_616.0
    }

    /// Whether `fraction` is the share of the hashes its range holds, up to the rounding of a
    /// threshold `t(f) = ⌊f·2^64⌋` and of a split into shards (a few units of 2^-64) and of
    /// f64 (relative 10^-12): an edited `fraction` or `range` disagrees.
    pub fn fraction_matches_range(&self) -> bool {
        let (f, g) = (self.fraction, self.range_fraction());
        (f - g).abs() <= 1e-12 * f.abs().max(g) + 16.0 / 18_446_744_073_709_551_616.0
    }
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
    /// `T^C_j`: non-relevant core items whose score equals `s_j` (f32 `==`). 0 when the
    /// summary's ties are unknown ([`Summary::ties_known`] false).
    pub core_ties: u64,
    /// `T^K_{j,ℓ}` for each subset ℓ: pool items of the subset whose score equals `s_j`
    /// (f32 `==`); same length as `pool_above`, or empty for all zeros (summaries built in
    /// memory without ties; read through [`PositiveSummary::pool_tie`]).
    pub pool_ties: Vec<u64>,
}

impl PositiveSummary {
    /// `K_{j,ℓ} + T^K_{j,ℓ}`: pool items of subset ℓ scoring at or above `s_j` (ties count as
    /// above, the official placement of positives at the end of their tie block). Used as the
    /// count of the prediction's hardness (`docs/reference/hardness.md`).
    pub fn pool_at_or_above(&self, subset: usize) -> u64 {
        self.pool_above[subset] + self.pool_tie(subset)
    }

    /// `T^K_{j,ℓ}` (0 when `pool_ties` is empty).
    pub fn pool_tie(&self, subset: usize) -> u64 {
        self.pool_ties.get(subset).copied().unwrap_or(0)
    }

    /// `C_j + T^C_j`: non-relevant core items scoring at or above `s_j`.
    pub fn core_at_or_above(&self) -> u64 {
        self.core_above + self.core_ties
    }
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
    /// Pool fingerprint: the `xxh3_64` (seed 0, [`crate::formats::ids::id_key`]) of the id of
    /// every scanned (level-0) pool row, sorted ascending; `S_0` values. [`Summary::merge`]
    /// refuses parts whose lists share a value (overlapping pools, whatever the files' digests)
    /// and unions them. `None` when unknown (format-1 folders, simulated summaries): merge
    /// then warns that overlap cannot be checked.
    #[serde(default)]
    pub pool_id_hashes: Option<Vec<u64>>,
    /// Whether `core_ties` / `pool_ties` were counted (format version ≥ 2 with the tie
    /// arrays). A version-1 summary has no tie counts: the tie arrays are zeros and exact
    /// metrics resolve positive/non-relevant ties in the positive's favour
    /// ([`Summary::ties_unknown_warning`]).
    #[serde(default)]
    pub ties_known: bool,
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

    /// Its nesting in words: `levels f_0, f_1, …; H drift shards`.
    pub fn nesting(&self) -> String {
        let levels: Vec<String> = self
            .level_indices()
            .iter()
            .map(|&i| self.subsets[i].fraction.to_string())
            .collect();
        format!(
            "levels {}; {} drift shards",
            levels.join(", "),
            self.shard_indices().len()
        )
    }

    /// The warning the commands print for a summary without tie counts (`None` when the
    /// ties are known).
    pub fn ties_unknown_warning(&self) -> Option<String> {
        (!self.ties_known).then(|| {
            let origin = match self.format_version {
                1 => "format version 1, written before tie counts".to_string(),
                v => format!(
                    "format version {v} without tie arrays: merged from version-1 parts or \
                     written by another tool"
                ),
            };
            format!(
                "summary of query set {:?} ({origin}) has no tie counts: ties unknown; a \
                 non-relevant item scoring exactly a positive's score is treated as ranked \
                 below it (the official evaluator ranks it above), in exact metrics and in the \
                 prediction's counts; only a rescan with this tailrank counts the ties",
                self.query_set
            )
        })
    }

    /// Number of (positive, non-relevant item) pairs with bitwise-equal scores, core and pool
    /// (subset `subset`), over all queries: `Σ_j T^C_j + T^K_{j,subset}` (0 when unknown).
    pub fn tied_pairs(&self, subset: usize) -> u64 {
        self.queries
            .iter()
            .flat_map(|q| &q.positives)
            .map(|p| p.core_ties + p.pool_tie(subset))
            .sum()
    }

    /// Refuse an evt tail fit on more top scores than this summary keeps (`fit_top > M`: the
    /// fit would use fewer than asked for, silently). Only a `fit_top` given explicitly is
    /// checked (the default is used up to M), and only for the evt estimator (`evt`). `dir`,
    /// the summary's folder, is named in the error when known.
    pub fn check_fit_top(
        &self,
        fit_top: Option<usize>,
        evt: bool,
        dir: Option<&Path>,
    ) -> Result<()> {
        match fit_top {
            Some(m) if evt && m > self.top_m => {
                let msg = format!(
                    "fit-top = {m} top scores asked for the tail fit, but the summary stores only \
                     the top M = {} pool scores per query and subset; use at most {} (or scan \
                     again with a larger M)",
                    self.top_m, self.top_m
                );
                Err(match dir {
                    Some(dir) => Error::mismatch_at(dir, msg),
                    None => Error::mismatch(msg),
                })
            }
            _ => Ok(()),
        }
    }

    /// Whether this summary covers the whole pool (exact mode: f = 1, not an increment and,
    /// when N is known, S_0 = N).
    pub fn is_exact(&self) -> bool {
        crate::sample::is_exact_fraction(self.fraction)
            && self.increment_range().is_none()
            && self.pool_size.is_none_or(|n| n == self.subset_sizes[0])
    }

    /// Check the structural invariants (shapes, sorted positives and top lists, finite scores,
    /// counts within the subset sizes, monotone counts). Returns a message naming the first
    /// violation; [`Summary::write`], [`Summary::read`] and [`Summary::merge`] call it.
    pub fn validate(&self) -> Result<()> {
        self.check().map_err(Error::input_msg)
    }

    fn check(&self) -> std::result::Result<(), String> {
        self.check_subsets()?;
        let levels = self.level_indices();
        let mut seen = std::collections::HashSet::with_capacity(self.queries.len());
        for q in &self.queries {
            if !seen.insert(q.id.as_str()) {
                return Err(format!("query id {:?} appears twice", q.id));
            }
            self.check_query(q, &levels)?;
        }
        Ok(())
    }

    /// [`Summary::check`] of the subsets, their sizes, M, N and the pool fingerprint.
    fn check_subsets(&self) -> std::result::Result<(), String> {
        let l = self.subsets.len();
        if l == 0 {
            return Err("summary has no subsets (subset 0 must be the level-0 sample)".into());
        }
        if self.subset_sizes.len() != l {
            return Err(format!(
                "{} subsets but {} subset sizes",
                l,
                self.subset_sizes.len()
            ));
        }
        if self.subsets[0].kind != SubsetKind::Level {
            return Err("subset 0 must be the level-0 sample (kind `level`)".into());
        }
        if crate::sample::check_fraction(self.fraction).is_err() {
            return Err(format!("fraction {} is not in (0, 1]", self.fraction));
        }
        if self.top_m == 0 {
            return Err("top_m (M) must be at least 1".into());
        }
        for (i, sub) in self.subsets.iter().enumerate() {
            let Some(m) = sub.top_m else { continue };
            if sub.kind != SubsetKind::Shard {
                return Err(format!(
                    "subset {i} is a level with its own top_m {m}: levels keep M = {}",
                    self.top_m
                ));
            }
            if m == 0 || m > self.top_m {
                return Err(format!(
                    "subset {i} keeps top_m {m}, outside 1..=M = {}",
                    self.top_m
                ));
            }
        }
        if let Some(n) = self.pool_size {
            if n < self.subset_sizes[0] {
                return Err(format!(
                    "pool size N = {n} is smaller than the {} pool items seen (S_0)",
                    self.subset_sizes[0]
                ));
            }
        }
        if let Some(h) = &self.pool_id_hashes {
            if h.len() as u64 != self.subset_sizes[0] {
                return Err(format!(
                    "{} pool id hashes for S_0 = {} scanned pool items",
                    h.len(),
                    self.subset_sizes[0]
                ));
            }
            if let Some(i) = h.windows(2).position(|w| w[0] > w[1]) {
                return Err(format!(
                    "pool id hashes not sorted ascending (entry {} > entry {})",
                    i,
                    i + 1
                ));
            }
        }
        let levels = self.level_indices();
        for w in levels.windows(2) {
            if self.subset_sizes[w[1]] > self.subset_sizes[w[0]] {
                return Err(format!(
                    "levels not nested: subset {} holds {} pool items, more than the {} of the \
                     level before it (subset {})",
                    w[1], self.subset_sizes[w[1]], self.subset_sizes[w[0]], w[0]
                ));
            }
        }
        if let Some(i) = (0..l).find(|&i| self.subset_sizes[i] > self.subset_sizes[0]) {
            return Err(format!(
                "subset {i} holds {} pool items, more than the level-0 sample's S_0 = {}",
                self.subset_sizes[i], self.subset_sizes[0]
            ));
        }
        Ok(())
    }

    /// [`Summary::check`] of query `q` (`levels`: [`Summary::level_indices`]).
    fn check_query(&self, q: &QuerySummary, levels: &[usize]) -> std::result::Result<(), String> {
        let l = self.subsets.len();
        if q.positives.is_empty() {
            return Err(format!("query {:?} has no positives", q.id));
        }
        if q.top_scores.len() != l {
            return Err(format!(
                "query {:?}: {} top-M lists for {} subsets",
                q.id,
                q.top_scores.len(),
                l
            ));
        }
        for (i, t) in q.top_scores.iter().enumerate() {
            let kept = self.subsets[i].kept(self.top_m);
            if t.len() as u64 > (kept as u64).min(self.subset_sizes[i]) {
                return Err(format!(
                    "query {:?}, subset {i}: {} top scores, more than min(M = {kept}, S = {})",
                    q.id,
                    t.len(),
                    self.subset_sizes[i]
                ));
            }
            // One pass: `a >= b` is false when either is NaN.
            if !(t.windows(2).all(|w| w[0] >= w[1]) && t.first().is_none_or(|x| !x.is_nan())) {
                return Err(format!(
                    "query {:?}, subset {i}: top scores not in descending order (or NaN)",
                    q.id
                ));
            }
            if t.first() == Some(&f32::INFINITY) {
                return Err(format!(
                    "query {:?}, subset {i}: top score +inf is not finite",
                    q.id
                ));
            }
        }
        let mut pos_ids = std::collections::HashSet::with_capacity(q.positives.len());
        let mut prev: Option<&PositiveSummary> = None;
        for p in &q.positives {
            if !pos_ids.insert(p.id.as_str()) {
                return Err(format!(
                    "query {:?}: positive {:?} appears twice",
                    q.id, p.id
                ));
            }
            self.check_positive(q, p, prev, levels)?;
            prev = Some(p);
        }
        Ok(())
    }

    /// [`Summary::check`] of positive `p` of query `q`, after the better positive `prev`.
    fn check_positive(
        &self,
        q: &QuerySummary,
        p: &PositiveSummary,
        prev: Option<&PositiveSummary>,
        levels: &[usize],
    ) -> std::result::Result<(), String> {
        let l = self.subsets.len();
        if !p.score.is_finite() {
            return Err(format!(
                "query {:?}, positive {:?}: score {} is not finite",
                q.id, p.id, p.score
            ));
        }
        if p.pool_above.len() != l {
            return Err(format!(
                "query {:?}, positive {:?}: {} pool counts for {} subsets",
                q.id,
                p.id,
                p.pool_above.len(),
                l
            ));
        }
        if self.core_size > 0 && p.core_above > self.core_size {
            return Err(format!(
                "query {:?}, positive {:?}: C_j = {} but the core holds {} items",
                q.id, p.id, p.core_above, self.core_size
            ));
        }
        if !p.pool_ties.is_empty() && p.pool_ties.len() != l {
            return Err(format!(
                "query {:?}, positive {:?}: {} pool tie counts for {} subsets",
                q.id,
                p.id,
                p.pool_ties.len(),
                l
            ));
        }
        if self.core_size > 0 && p.core_above + p.core_ties > self.core_size {
            return Err(format!(
                "query {:?}, positive {:?}: C_j + ties = {} but the core holds {} items",
                q.id,
                p.id,
                p.core_above + p.core_ties,
                self.core_size
            ));
        }
        if !self.ties_known && (p.core_ties > 0 || p.pool_ties.iter().any(|&t| t > 0)) {
            return Err(format!(
                "query {:?}, positive {:?}: tie counts present but ties marked unknown",
                q.id, p.id
            ));
        }
        for (i, (&k, &s)) in p.pool_above.iter().zip(&self.subset_sizes).enumerate() {
            let t = p.pool_tie(i);
            if k > s {
                return Err(format!(
                    "query {:?}, positive {:?}: K = {k} in subset {i} exceeds its size S = {s}",
                    q.id, p.id
                ));
            }
            if k.saturating_add(t) > s {
                return Err(format!(
                    "query {:?}, positive {:?}: K + ties = {} in subset {i} exceeds its size S = {s}",
                    q.id, p.id, k.saturating_add(t)
                ));
            }
        }
        for w in levels.windows(2) {
            if p.pool_tie(w[1]) > p.pool_tie(w[0]) {
                return Err(format!(
                    "query {:?}, positive {:?}: level tie counts not nested (subset {} > subset {})",
                    q.id, p.id, w[1], w[0]
                ));
            }
            if p.pool_above[w[1]] > p.pool_above[w[0]] {
                return Err(format!(
                    "query {:?}, positive {:?}: level counts not nested (K = {} at subset {} > K = {} at subset {})",
                    q.id, p.id, p.pool_above[w[1]], w[1], p.pool_above[w[0]], w[0]
                ));
            }
        }
        if let Some(pr) = prev {
            if p.score > pr.score {
                return Err(format!(
                    "query {:?}: positives not sorted by descending score ({:?} after {:?})",
                    q.id, p.id, pr.id
                ));
            }
            if p.pool_above.iter().zip(&pr.pool_above).any(|(a, b)| a < b) {
                return Err(format!(
                    "query {:?}: pool counts of positive {:?} smaller than those of the better positive {:?}",
                    q.id, p.id, pr.id
                ));
            }
        }
        Ok(())
    }

    /// Write the summary folder atomically (see `docs/reference/summary-format.md`): `manifest.json` and
    /// the arrays `query_offsets.npy` (u64, Q+1), `pos_scores.npy` (f32, P),
    /// `pos_core_above.npy` (u64, P), `pos_pool_above.npy` (u64, P×L), `top_scores.npy`
    /// (f32, Q×L×M, padded with -inf) and `top_len.npy` (u32, Q×L). The manifest records an
    /// xxh3 checksum of every array file. An existing folder at `dir` is replaced only once the
    /// new one is complete.
    pub fn write(&self, dir: &Path) -> Result<()> {
        self.check().map_err(|m| {
            Error::output(dir, format!("refusing to write an invalid summary: {m}"))
        })?;
        crate::atomic::write_dir(dir, |tmp| format::write_folder(self, tmp))
    }

    /// Read a summary folder, refusing an unknown format name, a newer format version, missing
    /// files, checksum mismatches (an edited `manifest.json`, corrupted arrays), duplicate keys
    /// in the manifest and inconsistent shapes, each with a message naming the offending path.
    /// Warnings (a format-1 folder, whose manifest has no checksum) are dropped: use
    /// [`Summary::read_with_warnings`] to show them.
    pub fn read(dir: &Path) -> Result<Summary> {
        Self::read_with_warnings(dir).map(|(s, _)| s)
    }

    /// [`Summary::read`], also returning warnings, each naming the folder: a format-1 folder
    /// (its `manifest.json` is not checksummed, and it records no pool fingerprint).
    pub fn read_with_warnings(dir: &Path) -> Result<(Summary, Vec<String>)> {
        crate::atomic::check_settled(dir)?;
        format::read_folder(dir)
    }

    /// Merge summaries of disjoint pool shards of the same queries, core, model, seed and
    /// subsets: counts and sizes add, top-M lists merge. Refuses overlapping inputs.
    ///
    /// The parts must agree on format version, model, query set, query ids, positives (ids,
    /// scores bitwise, `C_j`), core size, f, seed, subsets and M, and on their non-pool inputs
    /// (queries, core, ground truth: same digests). Pool inputs must be disjoint: the same pool
    /// digest in two parts, or (when every part has [`Summary::pool_id_hashes`]) one id hash in
    /// two parts, is an "overlapping shards" error; the merged fingerprint is the sorted union
    /// (one k-way merge of the sorted lists). Result: `S_ℓ = Σ S_ℓ`,
    /// `K_{j,ℓ} = Σ K_{j,ℓ}`, top-M lists = the M largest of the union (descending), inputs =
    /// the first part's non-pool inputs followed by every part's pool inputs in order.
    ///
    /// Pool size N: when every part is an exact scan of its own shard (f = 1 and N unknown or
    /// equal to its S_0) the shards make up the pool and N = Σ S_0 (None if no part knew N);
    /// otherwise the known N of the parts must agree and the merged N is that value, which must
    /// be at least the merged S_0.
    pub fn merge(parts: &[Summary]) -> Result<Summary> {
        merge::merge(parts).map(|(s, _)| s)
    }

    /// [`Summary::merge`], also returning warnings: parts without a pool fingerprint
    /// ([`Summary::pool_id_hashes`], format-1 summaries), whose overlap could only be checked by
    /// file digest (the merged summary has no fingerprint then).
    pub fn merge_with_warnings(parts: &[Summary]) -> Result<(Summary, Vec<String>)> {
        merge::merge(parts)
    }

    /// Read the summary folders `dirs` and merge them ([`Summary::merge_with_warnings`]), as
    /// `tailrank merge` does: each warning (of a folder's reading, then of the merge) is handed
    /// to `warn` as it arises; an error says which folder it was reading, or lists the parts it
    /// was merging (`part i = DIR`).
    pub fn merge_folders(dirs: &[PathBuf], mut warn: impl FnMut(String)) -> Result<Summary> {
        let mut parts = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let (s, warnings) = Summary::read_with_warnings(dir).map_err(|e| {
                Error::new(e.kind(), format!("reading summary {}: {e}", dir.display()))
            })?;
            warnings.into_iter().for_each(&mut warn);
            parts.push(s);
        }
        let (merged, warnings) = Summary::merge_with_warnings(&parts).map_err(|e| {
            let names: Vec<String> = dirs
                .iter()
                .enumerate()
                .map(|(i, p)| format!("part {} = {}", i + 1, p.display()))
                .collect();
            Error::new(e.kind(), format!("merging {}: {e}", names.join(", ")))
        })?;
        warnings.into_iter().for_each(warn);
        Ok(merged)
    }
}

/// Role of the ground-truth input record.
pub const GROUND_TRUTH_ROLE: &str = "ground_truth";

/// The input record of the ground truth `qs` read from `path` (rows = queries), digested with
/// [`query_set_digest`].
pub fn ground_truth_record(path: String, qs: &crate::formats::gt::QuerySet) -> InputRecord {
    InputRecord {
        role: GROUND_TRUTH_ROLE.into(),
        path,
        digest: query_set_digest(qs),
        rows: qs.query_ids.len() as u64,
    }
}

impl Summary {
    /// Record the ground truth of a scan among the inputs: after the other non-pool inputs,
    /// before the pool shards (the order [`Summary::merge`] produces).
    pub fn record_ground_truth(&mut self, path: String, qs: &crate::formats::gt::QuerySet) {
        let at = self
            .inputs
            .iter()
            .position(|r| r.role == POOL_ROLE)
            .unwrap_or(self.inputs.len());
        self.inputs.insert(at, ground_truth_record(path, qs));
    }
}

/// Digest of a query set's content (name, query ids and their positives, in order),
/// independent of the file it came from: recorded as the `ground_truth` input of a summary so
/// that [`Summary::merge`] refuses parts scanned against different ground truths.
pub fn query_set_digest(qs: &crate::formats::gt::QuerySet) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(qs.name.as_bytes());
    for (q, pos) in qs.query_ids.iter().zip(&qs.positives) {
        h.update(b"\nQ");
        h.update(q.as_bytes());
        for p in pos {
            h.update(b"\tP");
            h.update(p.as_bytes());
        }
    }
    format!("xxh3:{:016x}", h.digest())
}

mod arrays;
mod format;
mod grow;
mod merge;

pub use format::{FORMAT_NAME, MANIFEST, MANIFEST_CHECKSUM};
pub use merge::POOL_ROLE;
