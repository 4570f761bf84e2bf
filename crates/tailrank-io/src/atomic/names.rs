//! Names of the entries kept next to an output `NAME` (its staging folder, its lock, a scan's
//! partial folder): `NAME + suffix` while that fits in a file name, else a short hashed name.
//!
//! Rule: with `B` the bytes of `NAME`, the entry is `B ‖ suffix` when `|B| + |suffix| ≤
//! NAME_MAX` (255 bytes), else `.tailrank-H ‖ suffix` with `H` the 16 lower-case hex digits of
//! `xxh3_64(B)` (seed 0). The name is a function of `NAME` alone, so every process finds the
//! same lock and staging folder; two names sharing a hashed entry would need an xxh3 collision.

use crate::error::{Error, Result};
use crate::outputs::InputPath;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Longest file name (bytes) of the file systems tailrank writes to (Linux `NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// Prefix of a hashed entry name.
pub const HASHED_PREFIX: &str = ".tailrank-";

#[cfg(unix)]
fn bytes(name: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    std::borrow::Cow::Borrowed(name.as_bytes())
}

#[cfg(not(unix))]
fn bytes(name: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    match name.to_string_lossy() {
        std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(s.as_bytes()),
        std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.into_bytes()),
    }
}

/// The entry `suffix` of output name `name` (see the module docs).
pub fn entry_name(name: &OsStr, suffix: &str) -> OsString {
    let b = bytes(name);
    if b.len() + suffix.len() <= NAME_MAX {
        let mut s = name.to_os_string();
        s.push(suffix);
        return s;
    }
    let h = xxhash_rust::xxh3::xxh3_64(&b);
    OsString::from(format!("{HASHED_PREFIX}{h:016x}{suffix}"))
}

/// [`entry_name`] of `path`'s file name, next to `path`.
pub fn entry_path(path: &Path, suffix: &str) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::output(path, "not a file path"))?;
    Ok(path.with_file_name(entry_name(name, suffix)))
}

/// `NAME + suffix` next to `path`: a companion whose name users rely on (a sample's
/// `NAME.manifest.json`); refused with a clear message when it would not fit in a file name.
pub fn sibling(path: &Path, suffix: &str) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::output(path, "not a file path"))?;
    let len = bytes(name).len() + suffix.len();
    if len > NAME_MAX {
        return Err(Error::output(
            path,
            format!(
                "its companion file NAME{suffix} would have a {len}-byte name, longer than a \
                 file name may be ({NAME_MAX} bytes): choose an output name of at most {} bytes",
                NAME_MAX - suffix.len()
            ),
        ));
    }
    let mut s = name.to_os_string();
    s.push(suffix);
    Ok(path.with_file_name(s))
}

/// Refuse output `target` (resolved `abs`) when an input of the command is its lock file
/// `NAME.lock` or lies in its staging folder `NAME.tmp`: the writer truncates the one and
/// sweeps the other before it reads its inputs.
pub(super) fn check_inputs_clear_of_side_entries(
    target: &Path,
    abs: &Path,
    inputs: &[InputPath],
) -> Result<()> {
    let (lock, staging) = (super::lock_path(abs)?, super::staging_dir(abs)?);
    for i in inputs {
        let (what, entry) = if i.resolved() == lock {
            ("lock file", &lock)
        } else if i.resolved().starts_with(&staging) {
            ("staging folder", &staging)
        } else {
            continue;
        };
        return Err(Error::output(
            target,
            format!(
                "the input {} is this output's {what} {} (tailrank writes and deletes it while \
                 it writes the output): rename the input or choose another output path",
                i.path.display(),
                entry.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_keep_their_suffix_long_ones_are_hashed() {
        assert_eq!(entry_name(OsStr::new("out.txt"), ".tmp"), "out.txt.tmp");
        let fits = "a".repeat(NAME_MAX - 4);
        assert_eq!(
            entry_name(OsStr::new(&fits), ".tmp"),
            OsString::from(format!("{fits}.tmp"))
        );
        let long = "a".repeat(NAME_MAX);
        let e = entry_name(OsStr::new(&long), ".lock");
        let h = xxhash_rust::xxh3::xxh3_64(long.as_bytes());
        assert_eq!(e, OsString::from(format!(".tailrank-{h:016x}.lock")));
        let other = format!("{}b", "a".repeat(NAME_MAX - 1));
        assert_ne!(entry_name(OsStr::new(&other), ".lock"), e);
        let err = sibling(Path::new(&long), ".manifest.json").unwrap_err();
        assert!(err.to_string().contains("at most 241 bytes"), "{err}");
    }
}
