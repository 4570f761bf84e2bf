//! Id lists: UTF-8 text, one id per line; a name ending in `.gz` is gzip-compressed (ILIAS ships
//! `distractor_ids.txt.gz`).
//!
//! Reading rules: a line ends at `\n`; a trailing `\r` is removed (CRLF files); any other `\r`
//! (a bare carriage return inside an id) is an error naming the file and the line, since the
//! official Python readers (text mode, `str.splitlines`) end a line there; blank lines at the
//! end of the file are ignored; an empty line anywhere else is an error naming its line number
//! (1-based), because it would silently shift every following id against the descriptor rows.
//! Ids are otherwise taken verbatim (no trimming of spaces), as they are hashed byte for byte
//! (docs/method.md §4). A file that starts with a UTF-8 byte order mark (`EF BB BF`) is refused, naming it:
//! the official tools (Python's `open`/`gzip.open` in text mode, `xxhash` for the sample) read
//! the mark as part of the first id, so stripping it would make tailrank disagree with them,
//! and keeping it would silently corrupt that id. Writing emits `id\n` per id,
//! gzip-compressed when the name ends in `.gz`.

use crate::atomic;
use crate::error::{Error, IoContext, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

/// Whether `path` names a gzip file (extension `.gz`, case-insensitive).
pub fn is_gz(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Open `path` for reading, transparently decompressing `.gz` (multi-member gzip accepted).
pub fn open_text(path: &Path) -> Result<Box<dyn BufRead>> {
    let file = File::open(path).at(path)?;
    if is_gz(path) {
        let dec = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, file));
        Ok(Box::new(BufReader::with_capacity(1 << 16, dec)))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
    }
}

/// The UTF-8 byte order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Refuse an id list whose first line (`first`, as read) starts with a byte order mark.
pub fn check_no_bom(path: &Path, first: &[u8]) -> Result<()> {
    if first.starts_with(BOM) {
        return Err(Error::input(
            path,
            "line 1 starts with a UTF-8 byte order mark (bytes EF BB BF, U+FEFF): id lists must \
             be plain UTF-8 without it (the official tools would read it as part of the first \
             id); remove it, e.g. with `sed -i '1s/^\\xEF\\xBB\\xBF//' FILE`",
        ));
    }
    Ok(())
}

/// Read an id list (see the module doc for the rules). Errors name the file and the line.
pub fn read_ids(path: &Path) -> Result<Vec<String>> {
    crate::atomic::check_settled(path)?;
    let reader = open_text(path)?;
    parse_ids(path, reader)
}

/// Parse an id list from any reader; `path` is used in error messages only.
pub fn parse_ids(path: &Path, reader: impl BufRead) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    for_each_line(path, reader, |_, id| {
        ids.push(id.to_owned());
        Ok(true)
    })?;
    Ok(ids)
}

/// The longest line of an id list or id CSV, line break included (an id is a file name):
/// a file with no line break in its first MiB is no such list (`/dev/zero`, a binary file).
pub const MAX_LINE_BYTES: u64 = 1 << 20;

/// The lines of a text file from `reader`: `f(line, bytes)` for each line (1-based), its
/// line ending (`\n`, `\r\n`) removed, after checking that the first has no byte order mark;
/// reading stops early when `f` returns `false`. Memory is one line; `path` names the file in
/// errors. The same line rule serves the id lists and the ILIAS id CSVs (`formats::gt`).
pub(crate) fn for_each_text_line(
    path: &Path,
    mut reader: impl BufRead,
    mut f: impl FnMut(usize, &[u8]) -> Result<bool>,
) -> Result<()> {
    let mut buf = Vec::with_capacity(128);
    let mut line_no = 0usize;
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::input(path, format!("cannot read line {}: {e}", line_no + 1)))?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        if n as u64 > MAX_LINE_BYTES {
            return Err(Error::input(
                path,
                format!(
                    "line {line_no} runs past {MAX_LINE_BYTES} bytes without a line break: not \
                     a text list of ids (one per line)"
                ),
            ));
        }
        if line_no == 1 {
            check_no_bom(path, &buf)?;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if !f(line_no, &buf)? {
            return Ok(());
        }
    }
}

/// A line's bytes (line ending removed) as text: UTF-8 without a carriage return, the error
/// naming the file and the line. Every line that holds ids passes here, whatever is then kept
/// of it, so a file is accepted or refused as a whole (not by which ids a sample keeps).
pub(crate) fn utf8_id<'a>(path: &Path, line: usize, bytes: &'a [u8]) -> Result<&'a str> {
    if let Some(at) = bytes.iter().position(|&b| b == b'\r') {
        return Err(Error::input(
            path,
            format!(
                "line {line}: carriage return (CR, \\r) at byte {} inside the line: an id may not \
                 hold a line break (only a CR directly before the \\n of a CRLF ending is \
                 removed; Python's text-mode readers would split the line there)",
                at + 1
            ),
        ));
    }
    std::str::from_utf8(bytes)
        .map_err(|_| Error::input(path, format!("line {line} is not valid UTF-8")))
}

/// Stream an id list from any reader under the rules of the module doc, calling `f(i, id)` for
/// the `i`-th id (0-based, equal to its line number minus one since no blank line may precede
/// an id); reading stops early when `f` returns `false`. Nothing is kept: memory is one line.
/// `path` is used in error messages only.
pub fn for_each_line(
    path: &Path,
    reader: impl BufRead,
    mut f: impl FnMut(usize, &str) -> Result<bool>,
) -> Result<()> {
    // Line number of the first blank line of the current run of blank lines, if any.
    let mut pending_blank: Option<usize> = None;
    for_each_text_line(path, reader, |line_no, bytes| {
        if bytes.is_empty() {
            pending_blank.get_or_insert(line_no);
            return Ok(true);
        }
        if let Some(blank) = pending_blank {
            return Err(Error::input(
                path,
                format!(
                    "line {blank} is empty but ids follow it (line {line_no}); an empty line \
                     would shift every following id"
                ),
            ));
        }
        f(line_no - 1, utf8_id(path, line_no, bytes)?)
    })
}

/// Stream an id list read as a set (a selection, the ILIAS distractor list), where a line's
/// position means nothing: `f(line, id)` (1-based line) for each non-blank line, blank lines
/// skipped (unlike [`for_each_line`], whose ids are row-aligned). `.gz` is accepted.
pub fn for_each_listed_id(path: &Path, mut f: impl FnMut(usize, &str) -> Result<()>) -> Result<()> {
    for_each_text_line(path, open_text(path)?, |line, mut bytes| {
        // Every trailing carriage return goes, as a set's reader always did (`id\r\r`).
        while let [rest @ .., b'\r'] = bytes {
            bytes = rest;
        }
        if !bytes.is_empty() {
            f(line, utf8_id(path, line, bytes)?)?;
        }
        Ok(true)
    })
}

/// Check that `ids` (read from `path`) are unique; a duplicate is reported with the id and both
/// (1-based) line numbers.
pub fn check_unique(path: &Path, ids: &[String]) -> Result<()> {
    check_unique_at(path, ids, "lines", 1)
}

/// Like [`check_unique`], naming positions as `unit` counted from `base` (e.g. `"rows"`, 0 for a
/// dataset, `"lines"`, 1 for a text file).
pub fn check_unique_at(path: &Path, ids: &[String], unit: &str, base: usize) -> Result<()> {
    match find_duplicate(ids) {
        Some((a, b)) => Err(Error::input(
            path,
            format!(
                "duplicate id {:?} on {unit} {} and {}",
                ids[b],
                a + base,
                b + base
            ),
        )),
        None => Ok(()),
    }
}

/// The 0-based positions `(first, second)` of the first repeated id, if any: `second` is the
/// smallest position whose id occurred before, `first` the earliest occurrence of that id.
///
/// The one-list case of [`find_duplicate_across`] (same machinery, 8 bytes per id).
pub fn find_duplicate(ids: &[String]) -> Option<(usize, usize)> {
    find_duplicate_across(&[ids]).map(|((_, a), (_, b))| (a, b))
}

/// Distinct repeated hash values examined per batch ([`repeated_keys`]) by
/// [`find_duplicate_across`] and `row_ids::find_duplicate_rows`.
pub(crate) const DUP_BATCH: usize = 1 << 16;

/// The next batch of repeated values of the ascending `sorted`: from index `*from` on, up to
/// [`DUP_BATCH`] distinct values that occur at least twice, ascending; `*from` moves past the
/// last value looked at (past every copy of a value taken), so that the next call continues.
pub(crate) fn repeated_keys(sorted: &[u64], from: &mut usize) -> Vec<u64> {
    let mut cand = Vec::new();
    while *from + 1 < sorted.len() && cand.len() < DUP_BATCH {
        let h = sorted[*from];
        if h == sorted[*from + 1] {
            cand.push(h);
            while *from < sorted.len() && sorted[*from] == h {
                *from += 1;
            }
        } else {
            *from += 1;
        }
    }
    cand
}

/// xxh3-64 (seed 0) of an id: the 8-byte key under which pool ids are compared (duplicate
/// checks) and recorded (`pool_id_hashes.npy` of a summary, `docs/reference/summary-format.md`).
/// Equal to `id_hash(id, 0)`.
pub fn id_key(id: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(id.as_bytes())
}

/// `xxh3_64_with_seed(utf8(id), seed)`: the sample hash of docs/method.md §4 (the membership
/// rule is [`crate::sample`]'s).
#[inline]
pub fn id_hash(id: &str, seed: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(id.as_bytes(), seed)
}

/// A repeated id among several id lists (e.g. the pool shards of one scan), as
/// `((list a, position a), (list b, position b))` with `lists[a][pa] == lists[b][pb]` and
/// `(a, pa)` before `(b, pb)` in the concatenation of the lists.
///
/// Memory: 8 bytes per id. The [`id_key`] hashes of all ids are sorted (in parallel); only ids
/// whose hash occurs twice or more are looked at again, and their strings compared, so a hash
/// collision of two different ids is never reported. The repeated hash values are examined in
/// batches of 65,536 (in increasing hash order); when all of them fit in the first batch (any
/// real-world case but a file given twice) the result is the first repeat in concatenation
/// order: the smallest second position whose id occurred before, with the earliest occurrence
/// of that id.
pub fn find_duplicate_across(lists: &[&[String]]) -> Option<((usize, usize), (usize, usize))> {
    use rayon::prelude::*;
    let total: usize = lists.iter().map(|l| l.len()).sum();
    let mut hashes: Vec<u64> = Vec::with_capacity(total);
    for l in lists {
        hashes.par_extend(l.par_iter().map(|id| id_key(id)));
    }
    hashes.par_sort_unstable();
    let mut from = 0usize; // index into `hashes` where the next batch starts looking
    loop {
        let cand = repeated_keys(&hashes, &mut from);
        if cand.is_empty() {
            return None;
        }
        // Every occurrence of a candidate hash, in concatenation order.
        let mut occ: Vec<(usize, usize)> = Vec::new();
        for (li, l) in lists.iter().enumerate() {
            let hits: Vec<usize> = l
                .par_iter()
                .enumerate()
                .filter(|(_, id)| cand.binary_search(&id_key(id)).is_ok())
                .map(|(i, _)| i)
                .collect();
            occ.extend(hits.into_iter().map(|i| (li, i)));
        }
        let mut seen: std::collections::HashMap<u64, Vec<(usize, usize)>> =
            std::collections::HashMap::with_capacity(cand.len());
        for (li, i) in occ {
            let id = &lists[li][i];
            let earlier = seen.entry(id_key(id)).or_default();
            if let Some(&first) = earlier.iter().find(|&&(lj, j)| lists[lj][j] == *id) {
                return Some((first, (li, i)));
            }
            earlier.push((li, i));
        }
    }
}

/// Write `ids`, one per line, atomically (gzip when the name ends in `.gz`). Ids must be
/// non-empty and free of line breaks, otherwise the file could not be read back identically.
pub fn write_ids(path: &Path, ids: &[String]) -> Result<()> {
    for (i, id) in ids.iter().enumerate() {
        if id.is_empty() || id.contains(['\n', '\r']) {
            return Err(Error::output(
                path,
                format!(
                    "id number {} ({id:?}) is empty or contains a line break; cannot write it",
                    i + 1
                ),
            ));
        }
    }
    atomic::write_file(path, |w| {
        if is_gz(path) {
            let mut enc = flate2::write::GzEncoder::new(w, flate2::Compression::new(6));
            write_lines(path, &mut enc, ids)?;
            enc.finish().at(path)?;
        } else {
            write_lines(path, w, ids)?;
        }
        Ok(())
    })
}

fn write_lines(path: &Path, w: &mut dyn Write, ids: &[String]) -> Result<()> {
    for id in ids {
        w.write_all(id.as_bytes()).at(path)?;
        w.write_all(b"\n").at(path)?;
    }
    Ok(())
}

/// Read a whole (possibly gzip) file into memory.
pub fn read_all_bytes(path: &Path) -> Result<Vec<u8>> {
    let mut r = open_text(path)?;
    let mut v = Vec::new();
    r.read_to_end(&mut v).at(path)?;
    Ok(v)
}

#[cfg(test)]
pub(crate) mod tests {
    /// `n` ids `id<r>` with `r` uniform on `0..spread` (an LCG from `state`): repeats are
    /// likely, for the duplicate searches.
    pub(crate) fn random_ids(state: &mut u64, n: usize, spread: u64) -> Vec<String> {
        (0..n)
            .map(|_| {
                *state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                format!("id{}", (*state >> 33) % spread)
            })
            .collect()
    }

    use super::*;

    fn parse(s: &str) -> Result<Vec<String>> {
        parse_ids(Path::new("ids.txt"), s.as_bytes())
    }

    #[test]
    fn crlf_and_trailing_blank_lines() {
        assert_eq!(parse("a\r\nb c\r\n\r\n\n").unwrap(), vec!["a", "b c"]);
        assert_eq!(parse("a\nb").unwrap(), vec!["a", "b"]);
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn byte_order_mark_is_refused_and_named() {
        // Regression: the mark silently became part of the first id.
        for text in ["\u{feff}p0\np1\n", "\u{feff}\n", "\u{feff}"] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.starts_with("ids.txt: line 1") && e.contains("byte order mark"),
                "{e}"
            );
        }
        // A mark elsewhere is an ordinary character of an id (as the official tools read it).
        assert_eq!(parse("p0\n\u{feff}p1\n").unwrap()[1], "\u{feff}p1");
        // Through a gzip file too.
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.txt.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        enc.write_all("\u{feff}a\nb\n".as_bytes()).unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let e = read_ids(&p).unwrap_err().to_string();
        assert!(
            e.contains("x.txt.gz: line 1") && e.contains("byte order mark"),
            "{e}"
        );
    }

    #[test]
    fn a_listed_set_skips_blank_lines_and_every_trailing_return() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("set.txt");
        std::fs::write(&p, "a\r\r\n\r\n\n\r\r\nb\nc").unwrap();
        let mut got = Vec::new();
        super::for_each_listed_id(&p, |line, id| {
            got.push((line, id.to_string()));
            Ok(())
        })
        .unwrap();
        let want = [(1, "a"), (5, "b"), (6, "c")].map(|(l, s)| (l, s.to_string()));
        assert_eq!(got, want);
    }

    #[test]
    fn a_carriage_return_inside_a_line_is_refused_naming_the_line() {
        // Regression: `a\rb` was kept as one id (Python's readers split it in two), and only
        // refused when a sample happened to keep it, naming the output.
        for (text, line) in [
            ("a\rb\n", 1),
            ("x\na\rb", 2),
            ("x\ny\r\r\n", 2),
            ("\rx\n", 1),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("ids.txt: line {line}: carriage return")),
                "{text:?}: {e}"
            );
        }
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("set.txt");
        std::fs::write(&p, "a\nb\rc\n").unwrap();
        let e = super::for_each_listed_id(&p, |_, _| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("set.txt: line 2: carriage return"), "{e}");
    }

    #[test]
    fn blank_line_in_the_middle_is_an_error() {
        let e = parse("a\n\n\nb\n").unwrap_err().to_string();
        assert!(e.contains("ids.txt") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn find_duplicate_matches_a_hash_map_scan() {
        // Reference: the first position whose id was seen before, and that id's first position.
        fn naive(ids: &[String]) -> Option<(usize, usize)> {
            let mut seen = std::collections::HashMap::new();
            for (i, id) in ids.iter().enumerate() {
                if let Some(&f) = seen.get(id.as_str()) {
                    return Some((f, i));
                }
                seen.insert(id.as_str(), i);
            }
            None
        }
        let mut x: u64 = 12345;
        for trial in 0..200 {
            let n = 1 + trial * 7;
            let ids = random_ids(&mut x, n, 4 * n as u64 + 1);
            assert_eq!(find_duplicate(&ids), naive(&ids), "trial {trial}");
        }
        let uniq: Vec<String> = (0..1000).map(|i| format!("u{i}")).collect();
        assert_eq!(find_duplicate(&uniq), None);
        assert_eq!(find_duplicate(&[]), None);
    }

    #[test]
    fn find_duplicate_across_lists() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (a, b, c) = (v(&["a", "b"]), v(&["c", "d", "e"]), v(&["f", "d"]));
        assert_eq!(find_duplicate_across(&[&a, &b]), None);
        assert_eq!(find_duplicate_across(&[&a, &b, &c]), Some(((1, 1), (2, 1))));
        // The same list twice: the first id of the second copy.
        assert_eq!(find_duplicate_across(&[&b, &b]), Some(((0, 0), (1, 0))));
        assert_eq!(find_duplicate_across(&[]), None);
        // More repeated hashes than one batch: still found.
        let big: Vec<String> = (0..3 * DUP_BATCH).map(|i| format!("x{i}")).collect();
        let (first, second) = find_duplicate_across(&[&big, &big]).unwrap();
        assert_eq!((first.0, second.0, first.1), (0, 1, second.1));
    }

    #[test]
    fn duplicates_name_id_and_lines() {
        let ids: Vec<String> = ["x", "y", "z", "y"].iter().map(|s| s.to_string()).collect();
        let e = check_unique(Path::new("f.txt"), &ids)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"y\"") && e.contains("lines 2 and 4"), "{e}");
    }
}
