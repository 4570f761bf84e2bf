//! One-line accounts of what a command wrote (`tailrank scan`, `merge`, `grow` on stderr,
//! `sample` on stdout), printed after the outputs are in place.

use crate::sample::SampleManifest;
use crate::scan::job::ScanFilesOutcome;
use crate::summary::{Summary, POOL_ROLE};
use std::path::Path;

/// `tailrank scan`: `pool_files` pool files scanned into the summary folder `output`: its
/// query set, queries, pool rows, `S_0` and f, subsets, and the time taken.
pub fn scan_written(out: &ScanFilesOutcome, pool_files: usize, output: &Path, secs: f64) -> String {
    let s = &out.summary;
    format!(
        "{pool_files} pool shard(s) -> {}: query set {:?}, {} queries, {} pool rows, S_0 = {} \
         (f = {}), {} subsets, {secs:.1} s",
        output.display(),
        s.query_set,
        s.queries.len(),
        out.pool_rows,
        s.subset_sizes[0],
        super::fraction(s.fraction),
        s.subsets.len(),
    )
}

/// `tailrank merge`: `parts` summaries merged into `output`: queries, pool inputs, `S_0` and N
/// when known.
pub fn merge_written(parts: usize, output: &Path, merged: &Summary) -> String {
    format!(
        "{parts} summaries -> {}: {} queries, {} pool inputs, S_0 = {}{}",
        output.display(),
        merged.queries.len(),
        merged.inputs.iter().filter(|r| r.role == POOL_ROLE).count(),
        merged.subset_sizes[0],
        merged
            .pool_size
            .map(|n| format!(", N = {n}"))
            .unwrap_or_default()
    )
}

/// `tailrank grow`: the grown summary written to `output`: its fraction, pool items, level
/// fractions and drift shards.
pub fn grow_written(output: &Path, grown: &Summary) -> String {
    format!(
        "wrote {} (fraction {}: {} pool items; {})",
        output.display(),
        grown.fraction,
        grown.subset_sizes[0],
        grown.nesting()
    )
}

/// `tailrank sample`: the ids kept of those read, the fraction (or the increment's range of
/// fractions) and the seed, and the id list written to `out`.
pub fn sample_written(m: &SampleManifest, out: &Path) -> String {
    let range = match m.after {
        Some(after) => format!("fraction {after:?} to {:?}", m.fraction),
        None => format!("fraction {:?}", m.fraction),
    };
    format!(
        "sampled {} of {} ids ({range}, seed {}) -> {}",
        m.ids_kept,
        m.ids_read,
        m.seed,
        out.display()
    )
}
