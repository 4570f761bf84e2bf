//! Id lists: UTF-8 text, one id per line; a name ending in `.gz` is gzip-compressed (ILIAS ships
//! `distractor_ids.txt.gz`).
//!
//! Reading rules: a line ends at `\n`; a trailing `\r` is removed (CRLF files); blank lines at the
//! end of the file are ignored; an empty line anywhere else is an error naming its line number
//! (1-based), because it would silently shift every following id against the descriptor rows.
//! Ids are otherwise taken verbatim (no trimming of spaces), as they are hashed byte for byte
//! (SPEC 4). Writing emits `id\n` per id, gzip-compressed when the name ends in `.gz`.

use crate::atomic;
use crate::error::{Error, IoContext, Result};
use std::collections::HashMap;
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

/// Read an id list (see the module doc for the rules). Errors name the file and the line.
pub fn read_ids(path: &Path) -> Result<Vec<String>> {
    let reader = open_text(path)?;
    parse_ids(path, reader)
}

/// Parse an id list from any reader; `path` is used in error messages only.
pub fn parse_ids(path: &Path, mut reader: impl BufRead) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    let mut buf = Vec::with_capacity(128);
    // Line number of the first blank line of the current run of blank lines, if any.
    let mut pending_blank: Option<usize> = None;
    let mut line_no = 0usize;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::file(path, format!("cannot read line {}: {e}", line_no + 1)))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if buf.is_empty() {
            pending_blank.get_or_insert(line_no);
            continue;
        }
        if let Some(blank) = pending_blank {
            return Err(Error::file(
                path,
                format!(
                    "line {blank} is empty but ids follow it (line {line_no}); an empty line \
                     would shift every following id"
                ),
            ));
        }
        let id = std::str::from_utf8(&buf)
            .map_err(|_| Error::file(path, format!("line {line_no} is not valid UTF-8")))?;
        ids.push(id.to_owned());
    }
    Ok(ids)
}

/// Check that `ids` (read from `path`) are unique; a duplicate is reported with the id and both
/// (1-based) positions, which are line numbers for an id file.
pub fn check_unique(path: &Path, ids: &[String]) -> Result<()> {
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        if let Some(first) = seen.insert(id.as_str(), i) {
            return Err(Error::file(
                path,
                format!("duplicate id {id:?} on lines {} and {}", first + 1, i + 1),
            ));
        }
    }
    Ok(())
}

/// Write `ids`, one per line, atomically (gzip when the name ends in `.gz`). Ids must be
/// non-empty and free of line breaks, otherwise the file could not be read back identically.
pub fn write_ids(path: &Path, ids: &[String]) -> Result<()> {
    for (i, id) in ids.iter().enumerate() {
        if id.is_empty() || id.contains(['\n', '\r']) {
            return Err(Error::file(
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
mod tests {
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
    fn blank_line_in_the_middle_is_an_error() {
        let e = parse("a\n\n\nb\n").unwrap_err().to_string();
        assert!(e.contains("ids.txt") && e.contains("line 2"), "{e}");
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
