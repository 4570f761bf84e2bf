//! Atomic outputs: everything tailrank writes goes to a temporary sibling first and is renamed
//! into place only once complete, so a crash or a full disk never leaves a half-written file that
//! looks finished.

use crate::error::{Error, IoContext, Result};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

fn temp_sibling(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a file path", path.display())))?;
    let mut tmp = name.to_os_string();
    tmp.push(format!(".tmp-{}", std::process::id()));
    Ok(path.with_file_name(tmp))
}

/// Write a file atomically: `fill` writes into a buffered temp file next to `path`, which is
/// flushed, synced and renamed over `path`. On error the temp file is removed and `path` is
/// left as it was.
pub fn write_file<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> Result<()>,
{
    let tmp = temp_sibling(path)?;
    let result = (|| {
        let file = fs::File::create(&tmp).at(&tmp)?;
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        let file = w
            .into_inner()
            .map_err(|e| Error::io(&tmp, e.into_error()))?;
        file.sync_all().at(&tmp)?;
        fs::rename(&tmp, path).at(path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Write `bytes` to `path` atomically.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file(path, |w| w.write_all(bytes).at(path))
}

/// Create a directory atomically: `fill` populates a temp directory next to `dir`, which then
/// replaces `dir` (an existing `dir` is removed only after the new one is complete).
pub fn write_dir<F>(dir: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&Path) -> Result<()>,
{
    let tmp = temp_sibling(dir)?;
    if tmp.exists() {
        fs::remove_dir_all(&tmp).at(&tmp)?;
    }
    fs::create_dir_all(&tmp).at(&tmp)?;
    let result = fill(&tmp).and_then(|()| {
        if dir.exists() {
            let old = temp_sibling(&dir.with_extension("old"))?;
            fs::rename(dir, &old).at(dir)?;
            fs::rename(&tmp, dir).at(dir)?;
            fs::remove_dir_all(&old).at(&old)
        } else {
            fs::rename(&tmp, dir).at(dir)
        }
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_target_untouched() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.txt");
        write_bytes(&p, b"first").unwrap();
        let r = write_file(&p, |w| {
            w.write_all(b"partial").unwrap();
            Err(Error::invalid("boom"))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"first");
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            1,
            "temp file cleaned up"
        );
    }

    #[test]
    fn dir_replaced_only_when_complete() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("summary");
        write_dir(&p, |t| write_bytes(&t.join("a"), b"1")).unwrap();
        assert!(write_dir(&p, |_| Err(Error::invalid("boom"))).is_err());
        assert_eq!(fs::read(p.join("a")).unwrap(), b"1");
        write_dir(&p, |t| write_bytes(&t.join("b"), b"2")).unwrap();
        assert!(!p.join("a").exists() && p.join("b").exists());
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
