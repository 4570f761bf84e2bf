//! Output paths a command may write: never one of its inputs, never a file or folder that
//! tailrank did not write. Used by every output through [`crate::atomic::Transaction`].
//!
//! Rules, for an output `O` of a command with inputs `I₁ … Iₙ` (files or folders):
//!
//! * `O` must not be an input: same canonical path (symlinks resolved) or, where the platform
//!   has them, the same device and inode (hard links);
//! * `O` must not be an existing path inside an input folder (e.g. the `manifest.json` of an
//!   input summary), nor any path inside an input summary folder, and an existing folder `O`
//!   must not hold an input (replacing it would delete the input);
//! * outputs of the commands that write no summary (`simulate`, `validate`) must not be, or lie
//!   inside, a scan summary folder ([`refuse_in_summary`]);
//! * two outputs of one command must differ;
//! * a file output must not be an existing folder; a folder output must not be an existing
//!   file, and an existing folder is replaced only if tailrank wrote it ([`folder_owner`]): a
//!   summary folder (`manifest.json` of format `tailrank-summary`) holding nothing but its
//!   manifest, `manifest.xxh3` and the arrays the manifest lists, a chunk of a partial scan
//!   (`chunk.json`), or an empty folder;
//! * what the path names ([`classify_output`]): a block device, a socket or a symbolic link
//!   that leads nowhere is refused; a character device or FIFO is a stream (see
//!   [`crate::atomic`]).

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Format name stored in a summary's `manifest.json`; readers refuse anything else. The summary
/// folder's names are stated here, below `summary` (which re-exports them as
/// `summary::{FORMAT_NAME, MANIFEST, MANIFEST_CHECKSUM}`), because the output rule recognises
/// the summary folders it may replace.
pub const SUMMARY_FORMAT_NAME: &str = "tailrank-summary";
/// Name of the manifest file inside a summary folder.
pub const SUMMARY_MANIFEST: &str = "manifest.json";
/// Checksum of a summary's `manifest.json` (version 2): `xxh3:` + 16 hex digits of its bytes,
/// and `\n`.
pub const SUMMARY_MANIFEST_CHECKSUM: &str = "manifest.xxh3";

/// An input of a command, resolved when the command starts.
#[derive(Debug, Clone)]
pub struct InputPath {
    /// As given.
    pub path: PathBuf,
    canon: PathBuf,
    id: Option<(u64, u64)>,
    dir: bool,
}

impl InputPath {
    /// The input's resolved path (symbolic links followed).
    pub fn resolved(&self) -> &Path {
        &self.canon
    }
}

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_m: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Resolve the inputs of a command (paths that do not exist are skipped: reading them fails
/// with its own message).
pub fn resolve_inputs(paths: &[&Path]) -> Vec<InputPath> {
    paths
        .iter()
        .filter_map(|p| {
            let canon = std::fs::canonicalize(p).ok()?;
            let m = std::fs::metadata(&canon).ok()?;
            Some(InputPath {
                path: p.to_path_buf(),
                canon,
                id: file_id(&m),
                dir: m.is_dir(),
            })
        })
        .collect()
}

/// Refuse output `path` when it lies inside `folder` (resolved, or else as absolute paths),
/// the output folder that `command` (named in the message) replaces.
pub fn refuse_inside(path: &Path, folder: &Path, command: &str) -> Result<()> {
    let inside = resolve_output(path).starts_with(resolve_output(folder))
        || matches!(
            (std::path::absolute(path), std::path::absolute(folder)),
            (Ok(x), Ok(y)) if x.starts_with(&y)
        );
    if inside {
        return Err(Error::output(
            path,
            format!(
                "inside the {command}'s output folder {}, which the {command} replaces: \
                 choose a path outside it",
                folder.display()
            ),
        ));
    }
    Ok(())
}

/// Refuse output `path` when it is, or lies inside, a scan summary folder (a `manifest.json`
/// of format `tailrank-summary`): a summary folder holds only its own files, and anything else
/// written there would block the next scan or simulation that replaces it. For the commands
/// whose outputs are never summaries (`simulate`, `validate`).
pub fn refuse_in_summary(path: &Path) -> Result<()> {
    let abs = resolve_output(path);
    match abs.ancestors().find(|dir| summary_files(dir).is_some()) {
        Some(dir) if dir == abs => Err(Error::output(
            path,
            "is a scan summary folder; this command writes no summary: choose another path",
        )),
        Some(dir) => Err(Error::output(
            path,
            format!(
                "lies inside the scan summary folder {}; a summary folder holds only its own \
                 files: choose a path outside it",
                dir.display()
            ),
        )),
        None => Ok(()),
    }
}

/// The absolute, symlink-free path `p` names (its parent resolved when `p` does not exist).
pub fn resolve_output(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    match (abs.parent(), abs.file_name()) {
        (Some(parent), Some(name)) => match std::fs::canonicalize(parent) {
            Ok(c) => c.join(name),
            Err(_) => abs,
        },
        _ => abs,
    }
}

/// A descriptor file and the id files read with it by default (`<stem>.ids.txt`,
/// `<stem>_ids.txt`, or `.gz`, when they exist): the inputs a descriptor argument stands for.
pub fn descriptor_inputs(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    if let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) {
        for suffix in [".ids.txt", "_ids.txt", ".ids.txt.gz", "_ids.txt.gz"] {
            let p = path.with_file_name(format!("{stem}{suffix}"));
            if p.exists() {
                out.push(p);
            }
        }
    }
    out
}

/// Whether the existing folder `dir` was written by tailrank (see the module docs).
pub fn tailrank_folder(dir: &Path) -> bool {
    matches!(folder_owner(dir), FolderOwner::Tailrank)
}

/// Who wrote an existing folder that an output would replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderOwner {
    /// A summary folder holding only the files of its manifest, a chunk of a partial scan, or
    /// an empty folder.
    Tailrank,
    /// A summary folder that also holds this entry, which tailrank did not write (e.g. a plot
    /// or notes put there by a user).
    SummaryWithForeign(std::ffi::OsString),
    /// Anything else.
    Foreign,
}

/// [`FolderOwner`] of the existing folder `dir`. The files of a summary are `manifest.json`,
/// `manifest.xxh3` and the arrays its manifest lists.
pub fn folder_owner(dir: &Path) -> FolderOwner {
    if dir.join("chunk.json").is_file() {
        return FolderOwner::Tailrank;
    }
    if !dir.join(SUMMARY_MANIFEST).exists() {
        let empty = std::fs::read_dir(dir).is_ok_and(|mut rd| rd.next().is_none());
        return if empty {
            FolderOwner::Tailrank
        } else {
            FolderOwner::Foreign
        };
    }
    let Some(known) = summary_files(dir) else {
        return FolderOwner::Foreign;
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return FolderOwner::Foreign;
    };
    let mut foreign: Vec<std::ffi::OsString> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| !n.to_str().is_some_and(&known))
        .collect();
    foreign.sort();
    match foreign.into_iter().next() {
        Some(n) => FolderOwner::SummaryWithForeign(n),
        None => FolderOwner::Tailrank,
    }
}

/// The files of the summary in folder `dir` (see [`folder_owner`]) as a test of a file name;
/// None when `dir` holds no readable manifest of a summary.
fn summary_files(dir: &Path) -> Option<impl Fn(&str) -> bool> {
    let text = std::fs::read_to_string(dir.join(SUMMARY_MANIFEST)).ok()?;
    let v = serde_json::from_str::<serde_json::Value>(&text).ok()?;
    if v.get("format").and_then(|f| f.as_str()) != Some(SUMMARY_FORMAT_NAME) {
        return None;
    }
    let arrays = v.get("arrays").and_then(|a| a.as_object()).cloned();
    Some(move |n: &str| {
        n == SUMMARY_MANIFEST
            || n == SUMMARY_MANIFEST_CHECKSUM
            || arrays.as_ref().is_some_and(|a| a.contains_key(n))
    })
}

/// What an output path names before anything is written there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputKind {
    /// Nothing, a regular file or a folder (after following symbolic links): written
    /// atomically, staged next to the path the links lead to.
    Atomic,
    /// A character device or a FIFO (e.g. `/dev/null`, `/dev/stdout`, a pipe, or a symbolic
    /// link to one): never replaced; written in place when it is a command's only output.
    Stream(&'static str),
}

/// Whether output `target` is an [`OutputKind::Stream`] (`/dev/stdout`, a pipe): written in
/// place, never replaced together with other outputs.
pub fn is_stream(target: &Path) -> bool {
    matches!(classify_output(target), Ok(OutputKind::Stream(_)))
}

/// Classify output `target` ([`OutputKind`]); refuses what tailrank never writes: a block
/// device, a socket, a symbolic link that leads nowhere (dangling or a loop).
pub fn classify_output(target: &Path) -> Result<OutputKind> {
    if std::fs::symlink_metadata(target).is_err() {
        return Ok(OutputKind::Atomic);
    }
    let m = match std::fs::metadata(target) {
        Ok(m) => m,
        Err(e) => {
            let to = std::fs::read_link(target)
                .map(|l| l.display().to_string())
                .unwrap_or_else(|_| "?".into());
            return Err(Error::output(
                target,
                format!(
                    "is a symbolic link to {to}, which {}; refusing to write through it: give \
                     the path of a regular file or remove the link",
                    if e.kind() == std::io::ErrorKind::NotFound {
                        "does not exist".to_string()
                    } else {
                        format!("cannot be followed ({e})")
                    }
                ),
            ));
        }
    };
    let ft = m.file_type();
    if ft.is_file() || ft.is_dir() {
        return Ok(OutputKind::Atomic);
    }
    let what = special_kind(&ft);
    match what {
        "character device" | "FIFO" => Ok(OutputKind::Stream(what)),
        _ => Err(Error::output(
            target,
            format!(
                "is a {what}, not a regular file; refusing to write it: give the path of a \
                 regular file"
            ),
        )),
    }
}

#[cfg(unix)]
fn special_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_char_device() {
        "character device"
    } else if ft.is_fifo() {
        "FIFO"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_ft: &std::fs::FileType) -> &'static str {
    "special file"
}

/// Create output folder `dir` (and its parents) unless it exists as a folder; a file of that
/// name is refused, never replaced.
pub fn create_output_folder(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::output(
            dir,
            "exists and is not a folder; refusing to replace it: give a folder for the output",
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

/// The output path itself: a file output whose path ends with `/` (a folder's) is refused, as
/// is one whose parent folder does not exist (tailrank creates no parent folders for an
/// output).
pub fn check_output_path(target: &Path, dir: bool) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    if !dir && target.as_os_str().as_bytes().ends_with(b"/") {
        return Err(Error::output(
            target,
            "ends with '/', the path of a folder, but this output is a file: give a file name",
        ));
    }
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => return Ok(()),
    };
    if !parent.exists() {
        return Err(Error::output(
            target,
            format!(
                "its folder {} does not exist: create it first, or choose another output path",
                parent.display()
            ),
        ));
    }
    Ok(())
}

/// Check output `target` (a folder when `dir`) against the command's `inputs` and its other
/// outputs (`others`, resolved); returns the resolved path (see the module docs).
pub fn check_output(
    target: &Path,
    dir: bool,
    inputs: &[InputPath],
    others: &[PathBuf],
) -> Result<PathBuf> {
    classify_output(target)?;
    check_output_path(target, dir)?;
    let abs = resolve_output(target);
    let meta = std::fs::metadata(target).ok();
    for i in inputs {
        let same = abs == i.canon
            || matches!((&meta, i.id), (Some(m), Some(id)) if file_id(m) == Some(id));
        if same {
            return Err(Error::output(
                target,
                format!(
                    "is an input of this command ({}); refusing to overwrite it: choose \
                     another output path",
                    i.path.display()
                ),
            ));
        }
        if meta.as_ref().is_some_and(|m| m.is_dir()) && i.canon.starts_with(&abs) {
            return Err(Error::output(
                target,
                format!(
                    "holds the input {}; replacing it would delete that input: choose another \
                     output path",
                    i.path.display()
                ),
            ));
        }
        // Inside an input summary folder even a new path is refused: the folder would hold
        // files its manifest does not list, which later makes it a folder tailrank did not
        // write (a rerun of the scan that wrote it refuses to replace it).
        if i.dir && abs != i.canon && abs.starts_with(&i.canon) && summary_files(&i.canon).is_some()
        {
            return Err(Error::output(
                target,
                format!(
                    "lies inside the input summary {}; a summary folder holds only its own \
                     files: choose an output path outside it",
                    i.path.display()
                ),
            ));
        }
        if i.dir && meta.is_some() && abs.starts_with(&i.canon) {
            return Err(Error::output(
                target,
                format!(
                    "is part of the input folder {}; refusing to overwrite it: choose another \
                     output path",
                    i.path.display()
                ),
            ));
        }
    }
    // A file output: the path as given (a link named like a summary file) and the file it
    // leads to.
    let literal = std::path::absolute(target).unwrap_or_else(|_| target.to_path_buf());
    let paths = if literal == abs {
        vec![&abs]
    } else {
        vec![&literal, &abs]
    };
    let summary = paths.into_iter().filter(|_| !dir).find_map(|p| {
        let (folder, name) = (p.parent()?, p.file_name()?.to_str()?);
        summary_files(folder)
            .filter(|known| known(name))
            .map(|_| folder.to_path_buf())
    });
    if let Some(summary) = summary {
        return Err(Error::output(
            target,
            format!(
                "is a file of the summary in {}; refusing to overwrite it (the summary would \
                 be lost): choose another output path",
                summary.display()
            ),
        ));
    }
    if others.contains(&abs) {
        return Err(Error::output(
            target,
            "is given twice as an output of this command",
        ));
    }
    if let Some(m) = &meta {
        if dir && !m.is_dir() {
            return Err(Error::output(
                target,
                "exists and is not a folder; refusing to replace it with a folder: choose \
                 another output path or delete it",
            ));
        }
        if dir {
            match folder_owner(target) {
                FolderOwner::Tailrank => {}
                FolderOwner::Foreign => {
                    return Err(Error::output(
                        target,
                        "exists and is not a folder tailrank wrote (no manifest.json of a \
                         tailrank-summary); refusing to replace it: choose another output \
                         path or delete it",
                    ))
                }
                FolderOwner::SummaryWithForeign(name) => {
                    return Err(Error::output(
                        target,
                        format!(
                            "is a summary folder that also holds {}, which tailrank did not \
                             write as part of the summary; replacing the folder would delete \
                             it: move it out of the folder (or delete it) and run again, or \
                             choose another output path",
                            name.to_string_lossy()
                        ),
                    ))
                }
            }
        }
        if !dir && m.is_dir() {
            return Err(Error::output(
                target,
                "is a folder; refusing to replace it with a file: choose another output path",
            ));
        }
    }
    Ok(abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_links_and_folders_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let gt = d.path().join("gt.json");
        std::fs::write(&gt, b"{}").unwrap();
        let summary = d.path().join("s");
        std::fs::create_dir(&summary).unwrap();
        std::fs::write(
            summary.join("manifest.json"),
            br#"{"format": "tailrank-summary"}"#,
        )
        .unwrap();
        let inputs = resolve_inputs(&[&gt, &summary]);
        let err = |p: &Path, dir: bool| check_output(p, dir, &inputs, &[]).unwrap_err().to_string();
        assert!(err(&gt, false).contains("is an input"));
        assert!(err(&d.path().join("./s/../gt.json"), false).contains("is an input"));
        #[cfg(unix)]
        {
            let sym = d.path().join("sym.json");
            std::os::unix::fs::symlink(&gt, &sym).unwrap();
            assert!(err(&sym, false).contains("is an input"));
            let hard = d.path().join("hard.json");
            std::fs::hard_link(&gt, &hard).unwrap();
            assert!(err(&hard, false).contains("is an input"));
        }
        assert!(err(&summary.join("manifest.json"), false).contains("inside the input summary"));
        // Inside an input summary even a new path is refused; inside another input folder only
        // an existing one.
        assert!(err(&summary.join("report.html"), false).contains("inside the input summary"));
        let plain = d.path().join("gt_folder");
        std::fs::create_dir(&plain).unwrap();
        std::fs::write(plain.join("ids.txt"), b"a\n").unwrap();
        let with_plain = resolve_inputs(&[&plain]);
        let e = check_output(&plain.join("ids.txt"), false, &with_plain, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("part of the input folder"), "{e}");
        check_output(&plain.join("new.txt"), false, &with_plain, &[]).unwrap();
        assert!(err(&summary, true).contains("is an input"));
        assert!(err(d.path(), true).contains("holds the input"));
        // A summary folder holding a file tailrank did not write is not replaced.
        std::fs::write(summary.join("notes.txt"), b"mine").unwrap();
        let e = check_output(&summary, true, &[], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("also holds notes.txt"), "{e}");
        assert_eq!(
            folder_owner(&summary),
            FolderOwner::SummaryWithForeign("notes.txt".into())
        );
        std::fs::remove_file(summary.join("notes.txt")).unwrap();
        assert_eq!(folder_owner(&summary), FolderOwner::Tailrank);
        // A file of a summary that is not an input is not overwritten either; a new file next
        // to it is written.
        let e = check_output(&summary.join("manifest.json"), false, &[], &[]).unwrap_err();
        assert!(e.to_string().contains("is a file of the summary"), "{e}");
        check_output(&summary.join("curve.svg"), false, &[], &[]).unwrap();
        #[cfg(unix)]
        {
            // A summary whose manifest is a link into a cache folder (data versioning).
            let (linked, cache) = (d.path().join("linked"), d.path().join("cache"));
            std::fs::create_dir(&linked).unwrap();
            std::fs::create_dir(&cache).unwrap();
            std::fs::copy(summary.join("manifest.json"), cache.join("m")).unwrap();
            std::os::unix::fs::symlink(cache.join("m"), linked.join("manifest.json")).unwrap();
            let e = check_output(&linked.join("manifest.json"), false, &[], &[]).unwrap_err();
            assert!(e.to_string().contains("is a file of the summary"), "{e}");
        }
        // New paths, and new files next to the inputs, are fine.
        check_output(&d.path().join("new.json"), false, &inputs, &[]).unwrap();
        check_output(&d.path().join("out"), true, &inputs, &[]).unwrap();
        let o = resolve_output(&d.path().join("new.json"));
        let e = check_output(&d.path().join("new.json"), false, &inputs, &[o]).unwrap_err();
        assert!(e.to_string().contains("twice"));
    }
}
