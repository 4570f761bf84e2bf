//! Id checks of the ILIAS feature files against their id lists: exact lists (queries,
//! positives, [`check_ids_exact`]) and the distractor list held as sorted 64-bit keys
//! ([`DistractorList`], 8 bytes per id), with the hash sample and `--selected-ids`.

use crate::error::{Error, Result};
use crate::formats::descriptors::DescriptorSource;
use crate::formats::ids::for_each_listed_id;
use crate::selected::SelectedIds;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Check the ids of a feature file against the id list it must match exactly: a duplicate row,
/// an id not in the list (unknown) and a listed id without a row (missing) are errors naming
/// the feature file, the row or id, and the list.
pub fn check_ids_exact(
    file: &Path,
    ids: &[String],
    list: &Path,
    expected: &[String],
) -> Result<()> {
    crate::formats::ids::check_unique_at(file, ids, "rows", 0)?;
    let want: HashSet<&str> = expected.iter().map(String::as_str).collect();
    for (row, id) in ids.iter().enumerate() {
        if !want.contains(id.as_str()) {
            return Err(Error::mismatch_at(
                file,
                format!("row {row}: unknown id {id:?}: not in {}", list.display()),
            ));
        }
    }
    let have: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let missing: Vec<&String> = expected
        .iter()
        .filter(|e| !have.contains(e.as_str()))
        .collect();
    if let Some(first) = missing.first() {
        return Err(Error::mismatch_at(
            file,
            format!(
                "{} id(s) of {} have no row here (missing), e.g. {first:?}",
                missing.len(),
                list.display()
            ),
        ));
    }
    Ok(())
}

fn key64(id: &str) -> u64 {
    crate::formats::ids::id_key(id)
}

/// The distractor id list, held as sorted 64-bit xxh3 keys ([`crate::formats::ids::id_key`]:
/// 8 bytes per id, 0.8 GB for the 100M of ILIAS, instead of the strings), with the number of
/// ids in the hash sample and, with `--selected-ids`, the selected subset as a bit per id.
///
/// Invariant: the keys are distinct. Two equal keys are checked exactly (the list is streamed
/// again and the strings compared): the same id twice is a "duplicate" error naming both
/// lines, two different ids with one hash a "hash collision" error naming both.
#[derive(Debug, Clone)]
pub struct DistractorList {
    pub path: PathBuf,
    keys: Vec<u64>,
    /// N: the number of distractor ids, or of the selected ones with [`DistractorList::select`].
    pub len: u64,
    /// Ids in the list file (N without a selection).
    pub total: u64,
    /// `(fraction, seed)` of the sample the features must cover; None: all of them.
    pub sample: Option<(f64, u64)>,
    /// Ids of the list (of the selection) in the sample (N when `sample` is None).
    pub required: u64,
    /// The `--selected-ids` file and a bit per key index (in key order); None: every id.
    selection: Option<(PathBuf, Vec<u64>)>,
}

fn bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] & (1u64 << (i % 64)) != 0
}

impl DistractorList {
    /// Read the list, counting the ids in the hash sample `(f, seed)` (all when None). A
    /// duplicate id is an error naming both lines, and so is a hash collision.
    pub fn read(path: &Path, sample: Option<(f64, u64)>) -> Result<Self> {
        let t = match sample {
            Some((f, _)) => Some(crate::sample::threshold(f)?),
            None => None,
        };
        let mut keys = Vec::new();
        let mut required = 0u64;
        for_each_listed_id(path, |_, id| {
            keys.push(key64(id));
            if in_sample(id, t, sample) {
                required += 1;
            }
            Ok(())
        })?;
        if keys.is_empty() {
            return Err(Error::input(path, "the distractor id list is empty"));
        }
        rayon::slice::ParallelSliceMut::par_sort_unstable(&mut keys[..]);
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            let dup = w[0];
            let mut lines: Vec<(usize, String)> = Vec::new();
            for_each_listed_id(path, |line, id| {
                if key64(id) == dup && lines.len() < 2 {
                    lines.push((line, id.to_string()));
                }
                Ok(())
            })?;
            let (l1, a) = lines.first().cloned().unwrap_or((0, String::new()));
            let (l2, b) = lines.get(1).cloned().unwrap_or((0, String::new()));
            return Err(Error::input(
                path,
                if a == b {
                    format!("duplicate distractor id {a:?} on lines {l1} and {l2}")
                } else {
                    format!(
                        "hash collision: the different ids {a:?} (line {l1}) and {b:?} (line \
                         {l2}) have the same 64-bit xxh3 hash {dup:016x}, under which tailrank \
                         holds distractor ids; it cannot tell them apart (please report it)"
                    )
                },
            ));
        }
        Ok(DistractorList {
            path: path.to_path_buf(),
            len: keys.len() as u64,
            total: keys.len() as u64,
            keys,
            sample,
            required,
            selection: None,
        })
    }

    /// Restrict N to the distractors of `sel` (`--selected-ids`, [`SelectedIds::matches`]):
    /// streams the list once; every line of the selection must match a listed distractor
    /// (else "unknown", naming the selection file and the line).
    pub fn select(&mut self, sel: &mut SelectedIds) -> Result<()> {
        let t = match self.sample {
            Some((f, _)) => Some(crate::sample::threshold(f)?),
            None => None,
        };
        let mut bits = vec![0u64; self.keys.len().div_ceil(64)];
        let (mut n, mut required) = (0u64, 0u64);
        let keys = &self.keys;
        let sample = self.sample;
        for_each_listed_id(&self.path, |_, id| {
            if sel.matches(id) {
                let i = keys.binary_search(&key64(id)).unwrap_or(0);
                bits[i / 64] |= 1u64 << (i % 64);
                n += 1;
                if in_sample(id, t, sample) {
                    required += 1;
                }
            }
            Ok(())
        })?;
        sel.check_all_matched(&self.path)?;
        self.len = n;
        self.required = required;
        self.selection = Some((sel.path.clone(), bits));
        Ok(())
    }

    /// The listed id whose key is `key` (streams the list; for error messages).
    fn listed_id(&self, key: u64) -> Result<Option<String>> {
        let mut found = None;
        for_each_listed_id(&self.path, |_, id| {
            if found.is_none() && key64(id) == key {
                found = Some(id.to_string());
            }
            Ok(())
        })?;
        Ok(found)
    }

    /// Check the ids of the distractor feature shards: every id must be in the list (else
    /// "unknown", naming the shard and row), no id may appear twice across the shards
    /// ("duplicate", naming the shard and row), and every listed id of the sample (all of
    /// them in exact mode; of the selection with [`DistractorList::select`]) must have a row
    /// somewhere ("missing", naming the list and an id). Returns, with a selection, the rows
    /// of each shard that hold selected ids (ascending), None without one.
    ///
    /// Ids are matched by their 64-bit key; a repeated key is checked against the list's
    /// string, so a shard id colliding with a listed id that is also present is reported as a
    /// hash collision. (A colliding id whose listed twin is absent would pass for it: at most
    /// `unknown ids · N / 2⁶⁴`, about 5·10⁻¹² per unknown id at N = 10⁸.)
    pub fn check_features(
        &self,
        shards: &[&dyn DescriptorSource],
    ) -> Result<Option<Vec<Vec<usize>>>> {
        let t = match self.sample {
            Some((f, _)) => Some(crate::sample::threshold(f)?),
            None => None,
        };
        let mut seen = vec![0u64; self.keys.len().div_ceil(64)];
        let mut found_required = 0u64;
        let mut rows_of: Vec<Vec<usize>> = Vec::new();
        for src in shards {
            let mut rows = Vec::new();
            src.ids().for_each(|row, id| {
                let Ok(i) = self.keys.binary_search(&key64(id)) else {
                    return Err(Error::mismatch_at(
                        src.path(),
                        format!(
                            "row {row}: unknown distractor id {id:?}: not in {}",
                            self.path.display()
                        ),
                    ));
                };
                if bit(&seen, i) {
                    let listed = self.listed_id(self.keys[i])?;
                    if listed.as_deref().is_some_and(|l| l != id) {
                        return Err(Error::input(
                            src.path(),
                            format!(
                                "row {row}: hash collision: id {id:?} has the same 64-bit xxh3 \
                                 hash as the listed id {:?} of {} (one of them is unknown, or \
                                 tailrank cannot tell them apart: please report it)",
                                listed.unwrap_or_default(),
                                self.path.display()
                            ),
                        ));
                    }
                    return Err(Error::input(
                        src.path(),
                        format!("row {row}: duplicate distractor id {id:?} (already in this or an earlier shard)"),
                    ));
                }
                seen[i / 64] |= 1u64 << (i % 64);
                let selected = self.selection.as_ref().is_none_or(|(_, b)| bit(b, i));
                if selected {
                    rows.push(row);
                    if in_sample(id, t, self.sample) {
                        found_required += 1;
                    }
                }
            Ok(())
            })?;
            rows_of.push(rows);
        }
        if found_required < self.required {
            let mut first = None;
            for_each_listed_id(&self.path, |_, id| {
                if first.is_none() && in_sample(id, t, self.sample) {
                    let i = self.keys.binary_search(&key64(id)).unwrap_or(0);
                    let selected = self.selection.as_ref().is_none_or(|(_, b)| bit(b, i));
                    if selected && !bit(&seen, i) {
                        first = Some(id.to_string());
                    }
                }
                Ok(())
            })?;
            let mut what = match self.sample {
                Some((f, s)) => format!("of the hash sample (f = {f}, seed {s})"),
                None => "(exact mode needs every distractor)".to_string(),
            };
            if let Some((p, _)) = &self.selection {
                what = format!("{what} selected by {}", p.display());
            }
            return Err(Error::mismatch_at(
                &self.path,
                format!(
                    "{} listed distractor id(s) {what} have no row in the features_distractors_* shards (missing), e.g. {:?}",
                    self.required - found_required,
                    first.unwrap_or_default()
                ),
            ));
        }
        Ok(self.selection.is_some().then_some(rows_of))
    }
}

/// The sample rule of docs/method.md §4 ([`crate::sample::HashRange`]) at threshold `t`.
fn in_sample(id: &str, t: Option<u64>, sample: Option<(f64, u64)>) -> bool {
    match (t, sample) {
        (Some(hi), Some((_, seed))) => {
            crate::sample::HashRange { lo: 0, hi }.contains(crate::sample::id_hash(id, seed))
        }
        _ => true,
    }
}
