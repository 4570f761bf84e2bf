//! Atomic outputs: everything tailrank writes goes to a staging area first and is renamed into
//! place only once complete, so a crash or a full disk never leaves a half-written file that
//! looks finished, and outputs that belong together (a summary and its results JSON, a sample
//! and its manifest) are replaced together.
//!
//! Names next to an output `NAME` (file or folder):
//!
//! * `NAME.lock`: an advisory lock (`flock(2)`, non-blocking) held by the process
//!   writing `NAME` for the whole run, holding its pid; a second process is refused with
//!   "another tailrank process (pid N) is writing …". Removed when the writer ends; one left by
//!   a killed process is not locked and is simply reused.
//! * `NAME.tmp/`: the staging folder. The new content is written to `NAME.tmp/NAME` (so that its
//!   extension, which selects `.gz`, `.svg`/`.png`, is the final one); a folder being replaced
//!   is moved to `NAME.tmp/.old` during the commit; `NAME.tmp/.pending.json` is the commit
//!   journal. A staging folder without a journal is a leftover of a dead run, deleted by the
//!   next writer once it holds the lock.
//!
//! Commit of a [`Transaction`] (several outputs): once every new content is complete, the
//! journal (the list of outputs) is written into each staging folder, then for each output in
//! the order added: a folder being replaced is moved to `.old`, the new content is renamed to
//! `NAME`; then the `.old` folders and the staging folders go. Every step is idempotent, so a
//! commit cut anywhere is completed ("rolled forward") by the next writer of any of its outputs,
//! and until then readers ([`check_settled`]) refuse the outputs instead of pairing a new file
//! with an old one. A commit of one file (or of one new folder) is a single `rename` and
//! writes no journal.

use crate::error::{Error, IoContext, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Suffix of the lock file of an output.
pub const LOCK_SUFFIX: &str = ".lock";
/// Suffix of the staging folder of an output.
pub const STAGING_SUFFIX: &str = ".tmp";
/// Name of the replaced folder inside the staging folder during a commit.
const OLD: &str = ".old";
/// Name of the commit journal inside the staging folder.
pub const JOURNAL: &str = ".pending.json";
const JOURNAL_FORMAT: &str = "tailrank-commit";

/// `NAME + suffix` next to `path`.
pub fn sibling(path: &Path, suffix: &str) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a file path", path.display())))?;
    let mut s = name.to_os_string();
    s.push(suffix);
    Ok(path.with_file_name(s))
}

/// The staging folder of an output: `NAME.tmp`.
pub fn staging_dir(target: &Path) -> Result<PathBuf> {
    sibling(target, STAGING_SUFFIX)
}

/// Where the new content of `target` is written before the commit: `NAME.tmp/NAME`.
fn staged(target: &Path) -> Result<PathBuf> {
    let name = target
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a file path", target.display())))?;
    Ok(staging_dir(target)?.join(name))
}

fn exists(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok()
}

fn remove_any(p: &Path) -> Result<()> {
    match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(p).at(p),
        Ok(_) => fs::remove_file(p).at(p),
        Err(_) => Ok(()),
    }
}

/// Whether `path` still names the open file `file` (same device and inode).
#[cfg(unix)]
fn names_file(path: &Path, file: &fs::File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn names_file(path: &Path, _file: &fs::File) -> bool {
    path.exists()
}

/// Outcome of a non-blocking `flock`.
enum Flock {
    Taken,
    Busy,
    /// The file system has no advisory locks.
    Unsupported,
}

/// Non-blocking `flock(2)` (exclusive or shared) on `f`; the lock goes with the file.
#[cfg(unix)]
fn try_flock(f: &fs::File, exclusive: bool) -> std::io::Result<Flock> {
    use std::os::fd::AsRawFd;
    let op = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    } | libc::LOCK_NB;
    // SAFETY: `flock` on a descriptor that `f` owns and keeps open for the call.
    if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
        return Ok(Flock::Taken);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) => Ok(Flock::Busy),
        Some(libc::EOPNOTSUPP) | Some(libc::ENOLCK) | Some(libc::ENOSYS) => Ok(Flock::Unsupported),
        _ => Err(e),
    }
}

#[cfg(not(unix))]
fn try_flock(_f: &fs::File, _exclusive: bool) -> std::io::Result<Flock> {
    Ok(Flock::Unsupported)
}

/// An exclusive advisory lock on an output (`NAME.lock`, see the module docs). Dropping it
/// removes the lock file and releases the lock.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    /// The output guarded, resolved ([`crate::outputs::resolve_output`]).
    target: PathBuf,
    file: Option<fs::File>,
}

impl Lock {
    /// Take the lock of output `target`, or fail at once naming the process that holds it.
    pub fn acquire(target: &Path) -> Result<Lock> {
        let lp = sibling(target, LOCK_SUFFIX)?;
        // The previous holder removes the file before unlocking: retry when the file we locked
        // is no longer the one at `lp`.
        for _ in 0..64 {
            let file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lp)
                .at(target)?;
            match try_flock(&file, true).at(&lp)? {
                Flock::Taken => {}
                Flock::Busy => return Err(busy(target, &lp, "writing")),
                Flock::Unsupported => {
                    // A file system without advisory locks: proceed unguarded.
                    return Ok(Lock {
                        path: lp,
                        target: crate::outputs::resolve_output(target),
                        file: Some(file),
                    });
                }
            }
            if !names_file(&lp, &file) {
                continue;
            }
            file.set_len(0).at(&lp)?;
            (&file)
                .write_all(format!("{}\n", std::process::id()).as_bytes())
                .at(&lp)?;
            return Ok(Lock {
                path: lp,
                target: crate::outputs::resolve_output(target),
                file: Some(file),
            });
        }
        Err(Error::file(
            &lp,
            "cannot take this lock: the file keeps being replaced",
        ))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
        drop(self.file.take());
    }
}

/// The pid recorded in a lock file, if readable.
fn lock_pid(lp: &Path) -> Option<u32> {
    fs::read_to_string(lp).ok()?.trim().parse().ok()
}

fn busy(target: &Path, lp: &Path, doing: &str) -> Error {
    let who = match lock_pid(lp) {
        Some(p) => format!("another tailrank process (pid {p})"),
        None => "another tailrank process".to_string(),
    };
    Error::file(
        target,
        format!(
            "{who} is {doing} it (it holds {}); wait for it to finish",
            lp.display()
        ),
    )
}

/// Whether a live process holds the lock of `target` (checked without keeping the lock).
fn held_by_other(target: &Path) -> bool {
    let Ok(lp) = sibling(target, LOCK_SUFFIX) else {
        return false;
    };
    let Ok(f) = fs::File::open(&lp) else {
        return false;
    };
    matches!(try_flock(&f, false), Ok(Flock::Busy))
}

/// One output of a commit journal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Step {
    /// Absolute path of the output.
    target: PathBuf,
    /// Whether the output is a folder (an existing one is moved to `.old` first).
    dir: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    format: String,
    pid: u32,
    steps: Vec<Step>,
}

impl Step {
    fn new_content(&self) -> Result<PathBuf> {
        staged(&self.target)
    }
    fn old(&self) -> Result<PathBuf> {
        Ok(staging_dir(&self.target)?.join(OLD))
    }
    /// Whether this output still has commit work to do.
    fn unfinished(&self) -> bool {
        self.new_content().is_ok_and(|p| exists(&p)) || self.old().is_ok_and(|p| exists(&p))
    }
}

fn read_journal(p: &Path) -> Result<Journal> {
    let text = fs::read_to_string(p).at(p)?;
    let j: Journal = serde_json::from_str(&text)
        .map_err(|e| Error::file(p, format!("malformed commit journal: {e}")))?;
    if j.format != JOURNAL_FORMAT {
        return Err(Error::file(p, "not a tailrank commit journal"));
    }
    Ok(j)
}

/// Test hook: with `TAILRANK_FAILPOINT=commit:N` in the environment, the process aborts (as if
/// killed) at the N-th point of a journaled commit (0 = journals written, nothing renamed; then
/// after each rename and removal). Used by the tests that kill a commit at every step.
/// `None` disables the hook (recoveries).
fn failpoint(counter: &mut Option<usize>) {
    let Some(n) = counter else {
        return;
    };
    if test_hook_point("commit") == Some(*n) {
        std::process::abort();
    }
    *n += 1;
}

/// The `N` of `TAILRANK_FAILPOINT=kind:N` in the environment, when it names `kind` (the test
/// hooks that abort a process where a kill would: `commit` here, `chunk` in the scan).
pub(crate) fn test_hook_point(kind: &str) -> Option<usize> {
    let v = std::env::var("TAILRANK_FAILPOINT").ok()?;
    v.strip_prefix(kind)?.strip_prefix(':')?.parse().ok()
}

/// Perform (or complete) the renames of a journal; idempotent (see the module docs).
fn roll_forward(steps: &[Step], fp: &mut Option<usize>) -> Result<()> {
    for s in steps {
        let new = s.new_content()?;
        if !exists(&new) {
            continue;
        }
        if s.dir && exists(&s.target) {
            let old = s.old()?;
            remove_any(&old)?;
            fs::rename(&s.target, &old).at(&s.target)?;
            failpoint(fp);
        }
        fs::rename(&new, &s.target).at(&s.target)?;
        failpoint(fp);
    }
    for s in steps {
        let old = s.old()?;
        if exists(&old) {
            remove_any(&old)?;
            failpoint(fp);
        }
    }
    for s in steps {
        remove_any(&staging_dir(&s.target)?)?;
    }
    sync_parents(steps.iter().map(|s| s.target.as_path()));
    Ok(())
}

/// Best effort: make the renames durable.
fn sync_parents<'a>(paths: impl Iterator<Item = &'a Path>) {
    #[cfg(unix)]
    for p in paths {
        if let Some(parent) = p.parent() {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            if let Ok(d) = fs::File::open(parent) {
                let _ = d.sync_all();
            }
        }
    }
    #[cfg(not(unix))]
    let _ = paths.count();
}

/// Readers' check: refuse `path` while a commit that replaces it together with other outputs
/// is unfinished (a live writer, or an interrupted one that nobody completed yet), so that a
/// new output is never read next to an old companion.
pub fn check_settled(path: &Path) -> Result<()> {
    let Ok(staging) = staging_dir(path) else {
        return Ok(());
    };
    let jp = staging.join(JOURNAL);
    if !jp.is_file() {
        return Ok(());
    }
    let j = read_journal(&jp)?;
    if !j.steps.iter().any(Step::unfinished) {
        return Ok(());
    }
    let names: Vec<String> = j
        .steps
        .iter()
        .map(|s| s.target.display().to_string())
        .collect();
    if held_by_other(path) {
        return Err(busy(path, &sibling(path, LOCK_SUFFIX)?, "replacing"));
    }
    Err(Error::file(
        path,
        format!(
            "an interrupted tailrank run left it half-replaced (outputs replaced together: {}; \
             journal {}); run the command that writes it again (for a scan, resume it): it \
             completes the replacement first",
            names.join(", "),
            jp.display()
        ),
    ))
}

/// Complete an interrupted commit that involves `target`, if any (the caller holds the lock of
/// `target`, among `locks`; the locks of the other outputs of the journal are taken here and
/// added to `locks`). Returns whether there was one.
fn recover(target: &Path, locks: &mut Vec<Lock>) -> Result<bool> {
    let jp = staging_dir(target)?.join(JOURNAL);
    if !jp.is_file() {
        return Ok(false);
    }
    let j = read_journal(&jp)?;
    for s in &j.steps {
        let t = crate::outputs::resolve_output(&s.target);
        if !locks.iter().any(|l| l.target == t) {
            locks.push(Lock::acquire(&s.target)?);
        }
    }
    roll_forward(&j.steps, &mut None)?;
    Ok(true)
}

/// Remove what a dead run left next to `target`: its staging folder (no journal: checked by
/// the caller) and `NAME.tmp-PID` temporaries of older tailrank versions whose process is gone.
fn clean_stale(target: &Path) -> Result<()> {
    remove_any(&staging_dir(target)?)?;
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return Ok(());
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let prefix = format!("{}.tmp-", name.to_string_lossy());
    let Ok(rd) = fs::read_dir(parent) else {
        return Ok(());
    };
    for e in rd.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = n.strip_prefix(&prefix) else {
            continue;
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let proc_dir = Path::new("/proc");
        if proc_dir.is_dir() && !proc_dir.join(pid).exists() {
            remove_any(&e.path())?;
        }
    }
    Ok(())
}

/// One output of a [`Transaction`].
#[derive(Debug)]
struct Output {
    target: PathBuf,
    abs: PathBuf,
    dir: bool,
}

/// A set of outputs written together: each is locked when added, written to its staging path
/// ([`Transaction::path`]) and all are renamed into place by [`Transaction::commit`] (see the
/// module docs). Outputs are checked against the command's inputs and each other when added
/// (`crate::outputs`). Dropped without a commit, the staged content is deleted and the old
/// outputs stay as they were.
#[derive(Debug, Default)]
pub struct Transaction {
    inputs: Vec<crate::outputs::InputPath>,
    outputs: Vec<Output>,
    locks: Vec<Lock>,
    journaled: bool,
    committed: bool,
}

impl Transaction {
    /// A transaction for a command that reads `inputs` (files or folders; outputs that are, hold
    /// or lie inside one of them are refused).
    pub fn new(inputs: &[&Path]) -> Self {
        let mut t = Transaction::default();
        t.inputs = crate::outputs::resolve_inputs(inputs);
        t
    }

    /// The renames of the commit, one per output in the order they were added.
    fn steps(&self) -> Vec<Step> {
        self.outputs
            .iter()
            .map(|o| Step {
                target: o.abs.clone(),
                dir: o.dir,
            })
            .collect()
    }

    /// Add an output file; returns its index.
    pub fn add_file(&mut self, target: &Path) -> Result<usize> {
        self.add(target, false)
    }

    /// Add an output folder (an existing one must be a folder tailrank wrote, see
    /// [`crate::outputs::check_output`]); returns its index.
    pub fn add_dir(&mut self, target: &Path) -> Result<usize> {
        self.add(target, true)
    }

    fn add(&mut self, target: &Path, dir: bool) -> Result<usize> {
        let others: Vec<PathBuf> = self.outputs.iter().map(|o| o.abs.clone()).collect();
        let abs = crate::outputs::check_output(target, dir, &self.inputs, &others)?;
        // Taken already when an earlier output's interrupted commit involved this one.
        if !self.locks.iter().any(|l| l.target == abs) {
            self.locks.push(Lock::acquire(target)?);
        }
        recover(&abs, &mut self.locks)?;
        // The recovery may have replaced `target`: check it again.
        crate::outputs::check_output(target, dir, &self.inputs, &others)?;
        clean_stale(target)?;
        let staging = staging_dir(target)?;
        fs::create_dir(&staging).at(target)?;
        self.outputs.push(Output {
            target: target.to_path_buf(),
            abs,
            dir,
        });
        Ok(self.outputs.len() - 1)
    }

    /// The path output `i` is written to before the commit (`NAME.tmp/NAME`; a folder output
    /// must be created there by the caller, see [`Transaction::write`]).
    pub fn path(&self, i: usize) -> Result<PathBuf> {
        staged(&self.outputs[i].target)
    }

    /// Fill output `i` by calling `fill` with its staging path; errors that name the staging
    /// path are reported under the output's own path.
    pub fn write<F>(&self, i: usize, fill: F) -> Result<()>
    where
        F: FnOnce(&Path) -> Result<()>,
    {
        let tmp = self.path(i)?;
        let target = &self.outputs[i].target;
        fill(&tmp).map_err(|e| rename_in_error(e, &tmp, target))
    }

    /// Rename every output into place (see the module docs). Every output must have been
    /// written.
    pub fn commit(mut self) -> Result<()> {
        for o in &self.outputs {
            let p = staged(&o.target)?;
            let ok = fs::metadata(&p).is_ok_and(|m| m.is_dir() == o.dir);
            if !ok {
                return Err(Error::file(
                    &o.target,
                    "internal error: output not written before the commit",
                ));
            }
        }
        let steps = self.steps();
        let single = steps.len() == 1 && !(steps[0].dir && exists(&steps[0].target));
        let mut fp = Some(0usize);
        if single {
            let new = staged(&self.outputs[0].target)?;
            fs::rename(&new, &self.outputs[0].target).at(&self.outputs[0].target)?;
            remove_any(&staging_dir(&self.outputs[0].target)?)?;
            sync_parents(std::iter::once(self.outputs[0].target.as_path()));
        } else {
            let j = Journal {
                format: JOURNAL_FORMAT.into(),
                pid: std::process::id(),
                steps: steps.clone(),
            };
            let text = serde_json::to_string_pretty(&j)
                .map_err(|e| Error::invalid(format!("cannot serialise a journal: {e}")))?;
            self.journaled = true;
            for s in &steps {
                let jp = staging_dir(&s.target)?.join(JOURNAL);
                let tmp = staging_dir(&s.target)?.join(".pending.json.part");
                let mut f = fs::File::create(&tmp).at(&tmp)?;
                f.write_all(text.as_bytes()).at(&tmp)?;
                f.sync_all().at(&tmp)?;
                fs::rename(&tmp, &jp).at(&jp)?;
            }
            failpoint(&mut fp);
            roll_forward(&steps, &mut fp)?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        // A commit cut by an error keeps its journal and staged content for the roll-forward.
        if !self.committed && !self.journaled {
            for o in &self.outputs {
                if let Ok(s) = staging_dir(&o.target) {
                    let _ = remove_any(&s);
                }
            }
        }
    }
}

/// Report an error about the staging path `tmp` (or a path inside it) under `target`.
fn rename_in_error(e: Error, tmp: &Path, target: &Path) -> Error {
    let fix = |p: PathBuf| -> PathBuf {
        match p.strip_prefix(tmp) {
            Ok(rest) if rest.as_os_str().is_empty() => target.to_path_buf(),
            Ok(rest) => target.join(rest),
            Err(_) => {
                let (ps, ts) = (p.display().to_string(), tmp.display().to_string());
                match ps.strip_prefix(&ts) {
                    Some(rest) => PathBuf::from(format!("{}{rest}", target.display())),
                    None => p,
                }
            }
        }
    };
    match e {
        Error::Io { path, source } => Error::Io {
            path: fix(path),
            source,
        },
        Error::File { path, msg } => Error::File {
            path: fix(path),
            msg,
        },
        other => other,
    }
}

/// Write a file atomically: `fill` writes into a buffered temp file (`NAME.tmp/NAME`), which is
/// flushed, synced and renamed over `path`. On error the temp file is removed and `path` is
/// left as it was. An existing folder at `path` is refused.
pub fn write_file<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> Result<()>,
{
    let mut tx = Transaction::default();
    let i = tx.add_file(path)?;
    let tmp = tx.path(i)?;
    let file = fs::File::create(&tmp).at(path)?;
    let mut w = BufWriter::new(file);
    fill(&mut w).map_err(|e| rename_in_error(e, &tmp, path))?;
    let file = w
        .into_inner()
        .map_err(|e| Error::io(path, e.into_error()))?;
    file.sync_all().at(path)?;
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
    let mut tx = Transaction::default();
    let i = tx.add_dir(dir)?;
    tx.write(i, |tmp| {
        fs::create_dir(tmp).at(tmp)?;
        fill(tmp)
    })?;
    tx.commit()
}

#[cfg(test)]
mod tests;
