//! The one-output writers of [`crate::atomic`]: a file or a folder written through a
//! [`Transaction`] of one output.

use super::{rename_in_error, Transaction};
use crate::error::{Error, IoContext, Result};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Write a file atomically: `fill` writes into a buffered temp file (`NAME.tmp/NAME`), which is
/// flushed, synced and renamed over `path`. On error the temp file is removed and `path` is
/// left as it was. An existing folder at `path` is refused; a character device or FIFO is
/// written in place (see the module docs).
pub fn write_file<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> Result<()>,
{
    let mut tx = Transaction::default();
    let i = tx.add_file(path)?;
    let tmp = tx.path(i)?;
    let file = if tx.is_stream(i) {
        fs::OpenOptions::new().write(true).open(&tmp)
    } else {
        fs::File::create(&tmp)
    }
    .at(path)?;
    let mut w = BufWriter::new(file);
    fill(&mut w).map_err(|e| rename_in_error(e, &tmp, path))?;
    let file = w
        .into_inner()
        .map_err(|e| Error::io(path, e.into_error()))?;
    drop(file);
    tx.commit()
}

/// Write `bytes` to `path` atomically.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file(path, |w| w.write_all(bytes).at(path))
}

/// Create a directory atomically: `fill` populates a temp directory (`NAME.tmp/NAME`), which
/// then replaces `dir`. An existing `dir` must be a folder tailrank wrote
/// ([`crate::outputs::check_output`]); it is removed only after the new one is in place.
pub fn write_dir<F>(dir: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&Path) -> Result<()>,
{
    write_dir_in(Transaction::default(), dir, fill)
}

/// [`write_dir`] of a scratch output ([`Transaction::scratch`]).
pub fn write_dir_scratch<F>(dir: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&Path) -> Result<()>,
{
    write_dir_in(Transaction::default().scratch(), dir, fill)
}

fn write_dir_in<F>(mut tx: Transaction, dir: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&Path) -> Result<()>,
{
    let i = tx.add_dir(dir)?;
    tx.write(i, |tmp| {
        fs::create_dir(tmp).at(tmp)?;
        fill(tmp)
    })?;
    tx.commit()
}
