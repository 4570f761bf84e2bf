//! A distractor subset given by a list of ids (`tailrank ilias --selected-ids FILE`), as the
//! official ILIAS `search.py --selected` (mini-ILIAS) defines it, and the view of a descriptor
//! shard restricted to the selected rows ([`SubsetSource`]). See `docs/reference/ilias.md`.
//!
//! ## Rule
//!
//! The file holds one entry per line (`.gz` accepted, blank lines skipped, no byte order mark).
//! A distractor id `d` is selected when an entry equals `d`, or equals `d.split('/')[1]`, its
//! second `/` component: the official rule (`parts[1] in selected`), under which the mini-ILIAS
//! file lists the YFCC keys without the shard name. The positives are never filtered.
//!
//! Every entry must select at least one listed distractor ("unknown" otherwise), no entry may
//! appear twice ("duplicate"), and the file may not be empty: errors name the file and line.
//!
//! Memory: the entries' bytes plus 24 bytes per entry (hash, offset, length, line), sorted by
//! their 64-bit xxh3 hash; a lookup compares the strings of equal hashes, so matching is exact.

use crate::error::{Error, Result};
use crate::formats::descriptors::{DescriptorSource, SourceInfo};
use crate::formats::ids::id_key;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy)]
struct Entry {
    hash: u64,
    start: u64,
    len: u32,
    line: u32,
}

/// The entries of a `--selected-ids` file (see the module doc).
#[derive(Debug, Clone)]
pub struct SelectedIds {
    pub path: PathBuf,
    arena: String,
    /// Sorted by `(hash, line)`.
    entries: Vec<Entry>,
    /// One bit per entry (in `entries` order): matched a distractor.
    matched: Vec<u64>,
}

impl SelectedIds {
    /// Read and check the file: not empty, no entry twice.
    pub fn read(path: &Path) -> Result<SelectedIds> {
        let mut arena = String::new();
        let mut entries = Vec::new();
        crate::formats::ids::for_each_listed_id(path, |line, id| {
            entries.push(Entry {
                hash: id_key(id),
                start: arena.len() as u64,
                len: u32::try_from(id.len())
                    .map_err(|_| Error::input(path, format!("line {line}: id too long")))?,
                line: line as u32,
            });
            arena.push_str(id);
            Ok(())
        })?;
        if entries.is_empty() {
            return Err(Error::input(
                path,
                "no ids: the distractor selection is empty (one id per line expected)",
            ));
        }
        entries.sort_unstable_by_key(|e| (e.hash, e.line));
        let s = SelectedIds {
            path: path.to_path_buf(),
            matched: vec![0; entries.len().div_ceil(64)],
            arena,
            entries,
        };
        // Equal strings have equal hashes: compare within each run of equal hashes.
        let mut i = 0;
        while i < s.entries.len() {
            let mut j = i + 1;
            while j < s.entries.len() && s.entries[j].hash == s.entries[i].hash {
                j += 1;
            }
            for a in i..j {
                for b in a + 1..j {
                    if s.text(a) == s.text(b) {
                        return Err(Error::input(
                            path,
                            format!(
                                "line {}: id {:?} is listed twice (first on line {})",
                                s.entries[b].line,
                                s.text(b),
                                s.entries[a].line
                            ),
                        ));
                    }
                }
            }
            i = j;
        }
        Ok(s)
    }

    fn text(&self, i: usize) -> &str {
        let e = &self.entries[i];
        &self.arena[e.start as usize..e.start as usize + e.len as usize]
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no entry (never true after [`SelectedIds::read`]).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn find(&self, s: &str) -> Option<usize> {
        let h = id_key(s);
        let from = self.entries.partition_point(|e| e.hash < h);
        (from..self.entries.len())
            .take_while(|&i| self.entries[i].hash == h)
            .find(|&i| self.text(i) == s)
    }

    /// Whether distractor id `id` is selected (the id itself or its second `/` component is
    /// an entry); marks the matching entries as used.
    pub fn matches(&mut self, id: &str) -> bool {
        let mut hit = false;
        let second = id.split('/').nth(1);
        for s in std::iter::once(id).chain(second) {
            if let Some(i) = self.find(s) {
                self.matched[i / 64] |= 1u64 << (i % 64);
                hit = true;
            }
        }
        hit
    }

    /// Every entry must have matched a distractor of `list`: else an "unknown" error naming
    /// the file and the first such line.
    pub fn check_all_matched(&self, list: &Path) -> Result<()> {
        let unmatched: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.matched[i / 64] & (1u64 << (i % 64)) == 0)
            .collect();
        let Some(&first) = unmatched.iter().min_by_key(|&&i| self.entries[i].line) else {
            return Ok(());
        };
        Err(Error::mismatch_at(
            &self.path,
            format!(
                "line {}: unknown id {:?}: no distractor of {} is this id or has it as its \
                 second '/' component ({} unknown entr{} in all)",
                self.entries[first].line,
                self.text(first),
                list.display(),
                unmatched.len(),
                if unmatched.len() == 1 { "y" } else { "ies" }
            ),
        ))
    }
}

/// Rows further apart than this are read separately by [`SubsetSource::read_rows`]; closer
/// ones in one read of the span between them.
const GAP_ROWS: usize = 64;

/// A descriptor source restricted to some of its rows (the selected distractors of a shard):
/// row `i` of the view is row `rows[i]` of `inner`. Errors name the inner file.
pub struct SubsetSource<'a> {
    inner: &'a dyn DescriptorSource,
    rows: Vec<usize>,
    /// The inner source's, over `rows`.
    info: SourceInfo,
    digest: String,
}

impl<'a> SubsetSource<'a> {
    /// The view of `inner` on `rows` (ascending, in range).
    pub fn new(inner: &'a dyn DescriptorSource, rows: Vec<usize>) -> Result<Self> {
        if rows.windows(2).any(|w| w[0] >= w[1]) || rows.last().is_some_and(|&r| r >= inner.rows())
        {
            return Err(Error::internal_at(
                inner.path(),
                "internal: subset rows not ascending or out of range",
            ));
        }
        let ids = inner.ids().select(&rows);
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for r in &rows {
            h.update(&(*r as u64).to_le_bytes());
        }
        let digest = format!("{}+rows:{:016x}", inner.digest(), h.digest());
        Ok(SubsetSource {
            inner,
            rows,
            info: inner.info().with_ids(ids),
            digest,
        })
    }
}

impl DescriptorSource for SubsetSource<'_> {
    fn info(&self) -> &SourceInfo {
        &self.info
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()> {
        let d = self.dim();
        let n = out.len() / d;
        let want = &self.rows[start..start + n];
        let mut tmp: Vec<f32> = Vec::new();
        let mut i = 0;
        while i < n {
            // A run of wanted rows whose gaps are at most GAP_ROWS: one read of its span.
            let mut j = i + 1;
            while j < n && want[j] - want[j - 1] <= GAP_ROWS {
                j += 1;
            }
            let (lo, hi) = (want[i], want[j - 1] + 1);
            tmp.resize((hi - lo) * d, 0.0);
            self.inner.read_rows(lo, &mut tmp)?;
            for (k, &r) in want[i..j].iter().enumerate() {
                let src = &tmp[(r - lo) * d..(r - lo + 1) * d];
                out[(i + k) * d..(i + k + 1) * d].copy_from_slice(src);
            }
            i = j;
        }
        Ok(())
    }
    fn digest(&self) -> String {
        self.digest.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::descriptors::InMemoryDescriptors;

    #[test]
    fn subset_rows_equal_the_inner_rows_across_gaps() {
        let (n, d) = (1000, 3);
        let ids: Vec<String> = (0..n).map(|i| format!("s/{i}")).collect();
        let data: Vec<f32> = (0..n * d).map(|x| x as f32).collect();
        let inner = InMemoryDescriptors::new("mem", ids, d, data.clone()).unwrap();
        // Gaps below and above GAP_ROWS: one span read, and separate reads.
        let rows = vec![0, 1, 5, 200, 201, 900, 999];
        let v = SubsetSource::new(&inner, rows.clone()).unwrap();
        assert_eq!(v.rows(), rows.len());
        assert_eq!(v.ids().name(3).unwrap(), "s/200");
        for (start, len) in [(0, 7), (2, 3), (6, 1)] {
            let mut out = vec![0f32; len * d];
            v.read_rows(start, &mut out).unwrap();
            let want: Vec<f32> = rows[start..start + len]
                .iter()
                .flat_map(|&r| data[r * d..(r + 1) * d].to_vec())
                .collect();
            assert_eq!(out, want);
        }
        assert!(SubsetSource::new(&inner, vec![3, 2]).is_err());
        assert!(SubsetSource::new(&inner, vec![1000]).is_err());
    }

    #[test]
    fn entries_match_full_ids_or_the_second_component() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sel.txt");
        std::fs::write(&p, "k1\nshard_b/k2\n\nk9\n").unwrap();
        let mut s = SelectedIds::read(&p).unwrap();
        assert_eq!(s.len(), 3);
        assert!(s.matches("shard_a/k1")); // second component
        assert!(s.matches("shard_b/k2")); // full id
        assert!(!s.matches("shard_c/k2")); // neither
        assert!(!s.matches("k1/shard_a")); // first component only
        let e = s
            .check_all_matched(Path::new("list"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 4") && e.contains("\"k9\""), "{e}");
        assert!(s.matches("x/k9/y"));
        s.check_all_matched(Path::new("list")).unwrap();
        std::fs::write(&p, "a\nb\na\n").unwrap();
        let e = SelectedIds::read(&p).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("first on line 1"), "{e}");
    }
}
