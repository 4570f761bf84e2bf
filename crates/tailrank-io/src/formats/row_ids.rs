//! Row ids of a descriptor file, held as 8-byte hashes (`docs/reference/formats.md`, "Ids in memory").
//!
//! One `String` per row costs about 50 bytes, 5 GB for a pool of 10⁸ rows, yet the scan only
//! needs per row the sample hash `xxh3_64(id, seed)` (docs/method.md §4) and a key to compare
//! ids (duplicates, pool/core disjointness, the summary's `pool_id_hashes.npy`). [`RowIds`]
//! keeps the key `id_key(id) = xxh3_64(id)` (seed 0) of every row, 8 bytes per row, and where
//! the strings come from (an id text file, the HDF5 `index` dataset, or memory); the few
//! strings needed later (top-k result lists, error messages) are read again, streaming.
//!
//! Invariants: `keys().len() == len()`; the sample hash at seed 0 is the key
//! (`xxh3_64_with_seed(b, 0) == xxh3_64(b)`), so a seed-0 scan never reads the ids again; every
//! string read again is checked against its key, so an id file changed since it was opened is
//! an error naming it, never a silent mismatch. Keys are compared, never trusted alone: two
//! different ids with one key are reported as a hash collision ([`find_duplicate_rows`]).

use super::ids::{for_each_line, id_hash, id_key, open_text, repeated_keys};
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Reads every id of a file, in row order.
pub(crate) type ReadWhole = fn(&Path) -> Result<Vec<String>>;

/// Where the id strings of the rows can be read (again).
#[derive(Debug)]
enum Names {
    /// Kept in memory (in-memory sources, small inputs).
    Memory(Vec<String>),
    /// An id text file (`docs/reference/formats.md`), id `i` on line `i + 1`.
    Text(PathBuf),
    /// A file whose ids are read whole by `read` (the `index` dataset of an HDF5 feature file:
    /// the reader lives with the format, so this module needs no HDF5 code).
    WholeFile { path: PathBuf, read: ReadWhole },
    /// Row `i` is row `rows[i]` of `inner` (`rows` ascending).
    Rows { inner: Arc<Names>, rows: Vec<usize> },
    /// Generated: row `i` has id `name(first + i)` (a simulated pool that is never stored).
    Generated { name: fn(u64) -> String, first: u64 },
}

impl Names {
    /// Call `f(row, id)` for the rows `start .. end`, in order.
    fn for_each(
        &self,
        start: usize,
        end: usize,
        f: &mut dyn FnMut(usize, &str) -> Result<()>,
    ) -> Result<()> {
        match self {
            Names::Memory(v) => {
                for (i, id) in v[start..end].iter().enumerate() {
                    f(start + i, id)?;
                }
                Ok(())
            }
            Names::Text(path) => {
                crate::atomic::check_settled(path)?;
                for_each_line(path, open_text(path)?, |i, id| {
                    if (start..end).contains(&i) {
                        f(i, id)?;
                    }
                    Ok(i + 1 < end)
                })
            }
            Names::WholeFile { path, read } => {
                let v = read(path)?;
                if v.len() < end {
                    return Err(changed(path));
                }
                for (i, id) in v[start..end].iter().enumerate() {
                    f(start + i, id)?;
                }
                Ok(())
            }
            Names::Rows { inner, rows } => {
                let names = inner.fetch(&rows[start..end])?;
                for (i, id) in names.iter().enumerate() {
                    f(start + i, id)?;
                }
                Ok(())
            }
            Names::Generated { name, first } => {
                for i in start..end {
                    f(i, &name(first + i as u64))?;
                }
                Ok(())
            }
        }
    }

    /// The ids of `rows` (ascending, distinct), in that order.
    fn fetch(&self, rows: &[usize]) -> Result<Vec<String>> {
        let (Some(&lo), Some(&hi)) = (rows.first(), rows.last()) else {
            return Ok(Vec::new());
        };
        if let Names::Generated { name, first } = self {
            return Ok(rows.iter().map(|&r| name(first + r as u64)).collect());
        }
        let mut out = Vec::with_capacity(rows.len());
        let mut next = 0usize;
        self.for_each(lo, hi + 1, &mut |row, id| {
            if next < rows.len() && rows[next] == row {
                out.push(id.to_owned());
                next += 1;
            }
            Ok(())
        })?;
        Ok(out)
    }

    fn path(&self) -> Option<&Path> {
        match self {
            Names::Memory(_) | Names::Generated { .. } => None,
            Names::Text(p) | Names::WholeFile { path: p, .. } => Some(p),
            Names::Rows { inner, .. } => inner.path(),
        }
    }
}

fn changed(path: &Path) -> Error {
    Error::input(
        path,
        "the ids read again differ from those read when the file was opened: the file changed \
         while in use",
    )
}

/// The ids of a source's rows as 8-byte keys, with where to read the strings (module doc).
#[derive(Debug, Clone)]
pub struct RowIds {
    label: PathBuf,
    keys: Arc<Vec<u64>>,
    names: Arc<Names>,
    /// This view is rows `start .. end` of `keys` / `names`.
    start: usize,
    end: usize,
}

impl RowIds {
    /// Ids held in memory; `label` names them in errors.
    pub fn from_strings(label: impl Into<PathBuf>, ids: Vec<String>) -> RowIds {
        let keys: Vec<u64> = ids.par_iter().map(|id| id_key(id)).collect();
        Self::whole(label.into(), keys, Names::Memory(ids))
    }

    /// Read an id text file streaming (`docs/reference/formats.md` rules, [`for_each_line`]), keeping one
    /// key per id; each id followed by `\n` is also fed into `digest` when given.
    pub fn read_text(
        path: &Path,
        mut digest: Option<&mut xxhash_rust::xxh3::Xxh3>,
    ) -> Result<Self> {
        crate::atomic::check_settled(path)?;
        let mut keys = Vec::new();
        for_each_line(path, open_text(path)?, |_, id| {
            keys.push(id_key(id));
            if let Some(h) = digest.as_deref_mut() {
                h.update(id.as_bytes());
                h.update(b"\n");
            }
            Ok(true)
        })?;
        keys.shrink_to_fit();
        Ok(Self::whole(
            path.to_path_buf(),
            keys,
            Names::Text(path.to_path_buf()),
        ))
    }

    /// The ids of file `path`, given as read (`ids`); only their keys are kept, the strings are
    /// read from the file again by `read` when needed (the HDF5 `index` dataset).
    pub(crate) fn from_whole_file(path: &Path, ids: &[String], read: ReadWhole) -> RowIds {
        let keys: Vec<u64> = ids.par_iter().map(|id| id_key(id)).collect();
        let names = Names::WholeFile {
            path: path.to_path_buf(),
            read,
        };
        Self::whole(path.to_path_buf(), keys, names)
    }

    /// The ids `name(first) … name(first + rows − 1)` of a generated source (a simulated pool
    /// never stored): keys computed in parallel, strings generated again when needed.
    pub fn generated(
        label: impl Into<PathBuf>,
        first: u64,
        rows: usize,
        name: fn(u64) -> String,
    ) -> RowIds {
        let keys: Vec<u64> = (0..rows)
            .into_par_iter()
            .map(|i| id_key(&name(first + i as u64)))
            .collect();
        Self::whole(label.into(), keys, Names::Generated { name, first })
    }

    fn whole(label: PathBuf, keys: Vec<u64>, names: Names) -> RowIds {
        let end = keys.len();
        RowIds {
            label,
            keys: Arc::new(keys),
            names: Arc::new(names),
            start: 0,
            end,
        }
    }

    /// The file (or label) the ids come from, for error messages.
    pub fn path(&self) -> &Path {
        &self.label
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `id_key(id)` (xxh3-64, seed 0) of each row.
    pub fn keys(&self) -> &[u64] {
        &self.keys[self.start..self.end]
    }

    /// The sample hash `xxh3_64(id, seed)` of each row (docs/method.md §4): the keys themselves
    /// at seed 0, otherwise computed from the ids read again (8 bytes per row).
    pub fn hashes(&self, seed: u64) -> Result<Cow<'_, [u64]>> {
        if seed == 0 {
            return Ok(Cow::Borrowed(self.keys()));
        }
        if let Names::Generated { name, first } = &*self.names {
            let (name, first) = (*name, *first);
            return Ok(Cow::Owned(
                (self.start..self.end)
                    .into_par_iter()
                    .map(|i| id_hash(&name(first + i as u64), seed))
                    .collect(),
            ));
        }
        let mut out = Vec::with_capacity(self.len());
        self.for_each(|_, id| {
            out.push(id_hash(id, seed));
            Ok(())
        })?;
        Ok(Cow::Owned(out))
    }

    /// Call `f(row, id)` for every row, in order, streaming (each id is checked against its
    /// key).
    pub fn for_each(&self, mut f: impl FnMut(usize, &str) -> Result<()>) -> Result<()> {
        let (keys, start, label) = (&self.keys, self.start, self.names.path());
        let label = label.unwrap_or(&self.label);
        let mut seen = 0usize;
        self.names.for_each(self.start, self.end, &mut |row, id| {
            if keys[row] != id_key(id) {
                return Err(changed(label));
            }
            seen += 1;
            f(row - start, id)
        })?;
        if seen != self.len() {
            return Err(changed(label));
        }
        Ok(())
    }

    /// Every id as a string (small inputs only: queries, core, tests).
    pub fn to_vec(&self) -> Result<Vec<String>> {
        let mut out = Vec::with_capacity(self.len());
        self.for_each(|_, id| {
            out.push(id.to_owned());
            Ok(())
        })?;
        Ok(out)
    }

    /// The ids of `rows` (any order, repeats allowed), in that order; one streaming pass.
    pub fn names(&self, rows: &[usize]) -> Result<Vec<String>> {
        if let Some(&r) = rows.iter().find(|&&r| r >= self.len()) {
            return Err(Error::internal_at(
                &self.label,
                format!("row {r} asked for but there are {} ids", self.len()),
            ));
        }
        let mut uniq: Vec<usize> = rows.iter().map(|&r| r + self.start).collect();
        uniq.sort_unstable();
        uniq.dedup();
        let got = self.names.fetch(&uniq)?;
        let label = self.names.path().unwrap_or(&self.label);
        if got.len() != uniq.len() {
            return Err(changed(label));
        }
        for (r, id) in uniq.iter().zip(&got) {
            if self.keys[*r] != id_key(id) {
                return Err(changed(label));
            }
        }
        Ok(rows
            .iter()
            .map(|&r| got[uniq.binary_search(&(r + self.start)).unwrap_or(0)].clone())
            .collect())
    }

    /// The id of `row`.
    pub fn name(&self, row: usize) -> Result<String> {
        Ok(self.names(&[row])?.remove(0))
    }

    /// Rows `start .. end` of these ids (shares the keys).
    pub fn slice(&self, start: usize, end: usize) -> RowIds {
        assert!(
            start <= end && end <= self.len(),
            "RowIds::slice out of range"
        );
        RowIds {
            start: self.start + start,
            end: self.start + end,
            ..self.clone()
        }
    }

    /// The ids of `rows` (ascending, in range): row `i` of the result is row `rows[i]` here.
    pub fn select(&self, rows: &[usize]) -> RowIds {
        let keys = rows.iter().map(|&r| self.keys[self.start + r]).collect();
        let names = Names::Rows {
            inner: self.names.clone(),
            rows: rows.iter().map(|&r| self.start + r).collect(),
        };
        Self::whole(self.label.clone(), keys, names)
    }

    /// Feed every id followed by `\n` into `h` (the id part of content digests).
    pub fn feed_digest(&self, h: &mut xxhash_rust::xxh3::Xxh3) -> Result<()> {
        self.for_each(|_, id| {
            h.update(id.as_bytes());
            h.update(b"\n");
            Ok(())
        })
    }

    /// The first repeated id, as `(first row, second row, id)` (0-based; see
    /// [`find_duplicate_rows`]); a hash collision is an error naming the file.
    pub fn find_duplicate(&self) -> Result<Option<(usize, usize, String)>> {
        Ok(find_duplicate_rows(&[self])?.map(|((_, a), (_, b), id)| (a, b, id)))
    }
}

/// A repeated id: `((list a, row a), (list b, row b), id)` ([`find_duplicate_rows`]).
pub type Repeat = ((usize, usize), (usize, usize), String);

/// A repeated id among several id lists (e.g. the pool shards of one scan), as
/// `((list a, row a), (list b, row b), id)` with `(a, ra)` before `(b, rb)` in the
/// concatenation of the lists.
///
/// Memory: 8 bytes per id (the keys, sorted in parallel). Only rows whose key occurs twice or
/// more are looked at again: their ids are read back (one streaming pass per list) and
/// compared. The smallest 65,536 repeated keys are examined; when every repeated key is among
/// them (any real-world case but a file given twice) the result is the first repeat in
/// concatenation order: the smallest second position whose id occurred before, with the
/// earliest occurrence of that id. Two different ids with one key and no true repeat among the
/// examined keys is an error: "hash collision", naming the file, both rows and both ids.
pub fn find_duplicate_rows(lists: &[&RowIds]) -> Result<Option<Repeat>> {
    let total: usize = lists.iter().map(|l| l.len()).sum();
    let mut hashes: Vec<u64> = Vec::with_capacity(total);
    for l in lists {
        hashes.extend_from_slice(l.keys());
    }
    hashes.par_sort_unstable();
    let cand = repeated_keys(&hashes, &mut 0);
    drop(hashes);
    if cand.is_empty() {
        return Ok(None);
    }
    // Every occurrence of a candidate key, in concatenation order, with its id.
    let mut occ: Vec<(usize, usize, String)> = Vec::new();
    for (li, l) in lists.iter().enumerate() {
        let rows: Vec<usize> = l
            .keys()
            .par_iter()
            .enumerate()
            .filter(|(_, k)| cand.binary_search(k).is_ok())
            .map(|(r, _)| r)
            .collect();
        let names = l.names(&rows)?;
        occ.extend(rows.into_iter().zip(names).map(|(r, id)| (li, r, id)));
    }
    let mut seen: std::collections::HashMap<u64, Vec<usize>> = Default::default();
    let mut collision: Option<(usize, usize)> = None;
    for (n, (li, r, id)) in occ.iter().enumerate() {
        let earlier = seen.entry(id_key(id)).or_default();
        if let Some(&f) = earlier.iter().find(|&&j| occ[j].2 == *id) {
            let (fl, fr, _) = occ[f];
            return Ok(Some(((fl, fr), (*li, *r), id.clone())));
        }
        if let Some(&f) = earlier.first() {
            collision.get_or_insert((f, n));
        }
        earlier.push(n);
    }
    let (a, b) = collision.expect("a repeated key is a repeat or a collision");
    let ((la, ra, ida), (lb, rb, idb)) = (&occ[a], &occ[b]);
    let other = if la == lb {
        String::new()
    } else {
        format!(" of {}", lists[*la].path().display())
    };
    Err(Error::input(
        lists[*lb].path(),
        format!(
            "hash collision (duplicate-or-collision check): row {rb} (id {idb:?}) and row \
             {ra}{other} (id {ida:?}) are different ids with the same 64-bit xxh3 key \
             {:016x}; tailrank keeps ids as these keys and cannot tell them apart: please \
             report it",
            id_key(idb)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(ids: &[&str]) -> RowIds {
        RowIds::from_strings("m", ids.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn seed_zero_hash_is_the_key() {
        for id in ["", "a", "pool/000123", "é"] {
            assert_eq!(id_hash(id, 0), id_key(id));
        }
        let ids = mem(&["a", "b"]);
        assert!(matches!(ids.hashes(0).unwrap(), Cow::Borrowed(_)));
        assert_eq!(
            ids.hashes(7).unwrap().to_vec(),
            vec![id_hash("a", 7), id_hash("b", 7)]
        );
    }

    #[test]
    fn text_file_streams_and_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.ids.txt");
        std::fs::write(&p, "a\r\nb\nc\n\n").unwrap();
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let ids = RowIds::read_text(&p, Some(&mut h)).unwrap();
        assert_eq!(ids.len(), 3);
        assert_eq!(h.digest(), xxhash_rust::xxh3::xxh3_64(b"a\nb\nc\n"));
        assert_eq!(ids.to_vec().unwrap(), vec!["a", "b", "c"]);
        assert_eq!(ids.names(&[2, 0, 2]).unwrap(), vec!["c", "a", "c"]);
        let s = ids.slice(1, 3);
        assert_eq!(s.to_vec().unwrap(), vec!["b", "c"]);
        assert_eq!(s.name(1).unwrap(), "c");
        let sel = s.select(&[1]);
        assert_eq!(sel.to_vec().unwrap(), vec!["c"]);
        assert_eq!(sel.keys(), &[id_key("c")]);
        // Changed under our feet: an error naming the file.
        std::fs::write(&p, "a\nB\nc\n").unwrap();
        let e = ids.name(1).unwrap_err().to_string();
        assert!(e.contains("x.ids.txt") && e.contains("changed"), "{e}");
    }

    #[test]
    fn duplicates_across_lists() {
        let (a, b, c) = (mem(&["a", "b"]), mem(&["c", "d", "e"]), mem(&["f", "d"]));
        assert_eq!(find_duplicate_rows(&[&a, &b]).unwrap(), None);
        assert_eq!(
            find_duplicate_rows(&[&a, &b, &c]).unwrap(),
            Some(((1, 1), (2, 1), "d".to_string()))
        );
        assert_eq!(
            mem(&["x", "y", "z", "y"]).find_duplicate().unwrap(),
            Some((1, 3, "y".to_string()))
        );
        assert_eq!(find_duplicate_rows(&[]).unwrap(), None);
    }

    #[test]
    fn find_duplicate_matches_the_string_search() {
        let mut x: u64 = 99;
        for trial in 0..100 {
            let n = 1 + trial * 5;
            let ids = super::super::ids::tests::random_ids(&mut x, n, 3 * n as u64 + 1);
            let want = super::super::ids::find_duplicate(&ids).map(|(a, b)| (a, b, ids[b].clone()));
            let got = RowIds::from_strings("t", ids).find_duplicate().unwrap();
            assert_eq!(got, want, "trial {trial}");
        }
    }
}
