//! Atomic outputs: everything tailrank writes goes to a staging area first and is renamed into
//! place only once complete, so a crash or a full disk never leaves a half-written file that
//! looks finished, and outputs that belong together (a summary and its results JSON, a sample
//! and its manifest) are replaced together.
//!
//! Outputs are written where their path leads: a symbolic link to a regular file or a folder
//! is written through (its target is replaced, the link stays), everything below uses the
//! resolved path. A character device or a FIFO (`/dev/null`, `/dev/stdout`, a pipe) is never
//! replaced: it is written in place, as a stream, when it is the only output of its
//! [`Transaction`], and refused when it would be paired with another output (a stream cannot
//! be replaced together with its companion); block devices, sockets and links that lead
//! nowhere are refused ([`crate::outputs::classify_output`]).
//!
//! Names next to an output `NAME` (file or folder); each is `NAME` plus a suffix when that
//! fits in a file name, else a short hashed name ([`names`]):
//!
//! * `NAME.lock`: an advisory lock (`flock(2)`, non-blocking) held by the process
//!   writing `NAME` for the whole run, holding its pid; a second process is refused with
//!   "another tailrank process (pid N) is writing …". Removed when the writer ends; one left by
//!   a killed process is not locked and is simply reused. Anything else at that name (a link,
//!   a folder, a file holding more than a pid) is refused, never truncated.
//! * `NAME.tmp/`: the staging folder. The new content is written to `NAME.tmp/NAME` (so that its
//!   extension, which selects `.gz`, `.svg`/`.png`, is the final one); a folder being replaced
//!   is moved to `NAME.tmp/.old` during the commit; `NAME.tmp/.pending.json` is the commit
//!   journal. A staging folder without a journal is a leftover of a dead run, deleted by the
//!   next writer once it holds the lock, provided it holds nothing but those names; anything
//!   else at `NAME.tmp` (a user's file or folder) is refused, never deleted.
//!
//! Commit of a [`Transaction`] (several outputs): once every new content is complete, the
//! journal (the list of outputs) is written into each staging folder, then for each output in
//! the order added: a folder being replaced is moved to `.old`, the new content is renamed to
//! `NAME`; then the `.old` folders and the staging folders go. Every step is idempotent, so a
//! commit cut anywhere is completed ("rolled forward") by the next writer of any of its outputs,
//! and until then readers ([`check_settled`]) refuse the outputs instead of pairing a new file
//! with an old one. A commit of one file (or of one new folder) is a single `rename` and
//! writes no journal. A commit whose journals cannot all be written is undone (journals and
//! staged content removed), so that a journal only exists where the roll-forward is complete.
//!
//! Content inside a staging folder belongs to the commit of that folder: a write there (a
//! summary's arrays inside its staged folder) is a plain write, with no lock or staging of its
//! own. Durability: before the renames, every file and folder of the staged content is
//! fsynced, and after them the parent folders. A [`Transaction::scratch`] (the chunk folders
//! of a resumable scan) skips the fsyncs, its own lock and the sweep for old-style temporaries:
//! its outputs lie in a folder that the caller holds locked and clears of leftovers, and their
//! reader verifies every byte and rebuilds what a crash lost.

use crate::error::{Error, IoContext, Result};
use crate::outputs::{classify_output, resolve_output, OutputKind};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod lock;
pub mod names;
mod settle;
mod write;
pub use lock::Lock;
pub use names::{entry_path, sibling, NAME_MAX};
pub use settle::check_settled;
pub use write::{write_bytes, write_dir, write_dir_scratch, write_file};

/// Suffix of the lock file of an output.
pub const LOCK_SUFFIX: &str = ".lock";
/// Suffix of the staging folder of an output.
pub const STAGING_SUFFIX: &str = ".tmp";
/// Name of the replaced folder inside the staging folder during a commit.
const OLD: &str = ".old";
/// Name of the commit journal inside the staging folder.
pub const JOURNAL: &str = ".pending.json";
/// The journal while it is written, renamed to [`JOURNAL`] once complete.
const JOURNAL_PART: &str = ".pending.json.part";
const JOURNAL_FORMAT: &str = "tailrank-commit";

/// The staging folder of the output at resolved path `target`: `NAME.tmp` ([`names`]).
pub fn staging_dir(target: &Path) -> Result<PathBuf> {
    entry_path(target, STAGING_SUFFIX)
}

/// The lock file of the output at resolved path `target`: `NAME.lock` ([`names`]).
fn lock_path(target: &Path) -> Result<PathBuf> {
    entry_path(target, LOCK_SUFFIX)
}

/// Staging folders of this process's uncommitted transactions: paths inside them are content
/// being staged (see the module docs).
static STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn staging_registry() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    STAGING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `p` lies inside the staging folder of an uncommitted transaction of this process.
fn inside_staging(p: &Path) -> bool {
    staging_registry()
        .iter()
        .any(|s| p != s.as_path() && p.starts_with(s))
}

fn unregister_staging(s: &Path) {
    staging_registry().retain(|x| x != s);
}

/// Where the new content of `target` is written before the commit: `NAME.tmp/NAME`.
fn staged(target: &Path) -> Result<PathBuf> {
    let name = target
        .file_name()
        .ok_or_else(|| Error::output(target, "not a file path"))?;
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

impl Journal {
    /// The outputs it replaces, for messages: their paths joined by ", ".
    fn targets(&self) -> String {
        let names: Vec<String> = self
            .steps
            .iter()
            .map(|s| s.target.display().to_string())
            .collect();
        names.join(", ")
    }
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

/// The journal in `staging`, the staging folder of one of its outputs, checked to be that
/// folder's own: one of its steps is the output staged there. Otherwise the folder was moved
/// or copied while the commit was unfinished (the journal names the outputs at their old
/// paths), and neither a reader nor a writer may act on it (a writer would finish the commit
/// at the old paths): refused.
fn read_own_journal(staging: &Path) -> Result<Journal> {
    let jp = staging.join(JOURNAL);
    let j = read_journal(&jp)?;
    let own = |s: &Step| staging_dir(&s.target).is_ok_and(|d| d == staging);
    if j.steps.iter().any(own) {
        return Ok(j);
    }
    Err(Error::input(
        &jp,
        format!(
            "the journal of an unfinished commit of outputs at other paths ({}): the folder was \
             moved or copied while a tailrank run was replacing them; move it back and rerun \
             the command that writes them, or remove the `.tmp` folders beside its outputs \
             and rerun that command here (it writes them all anew)",
            j.targets()
        ),
    ))
}

fn read_journal(p: &Path) -> Result<Journal> {
    let text = fs::read_to_string(p).at(p)?;
    let j: Journal = serde_json::from_str(&text)
        .map_err(|e| Error::input(p, format!("malformed commit journal: {e}")))?;
    if j.format != JOURNAL_FORMAT {
        return Err(Error::input(p, "not a tailrank commit journal"));
    }
    Ok(j)
}

/// Test hook: with `TAILRANK_FAILPOINT=commit:N` in the environment, the process aborts (as if
/// killed) at the N-th point of a journaled commit (0 = journals written, nothing renamed; then
/// after each rename and removal, and once the commit is complete). Used by the tests that kill a commit at every step.
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
#[doc(hidden)]
pub fn test_hook_point(kind: &str) -> Option<usize> {
    let v = std::env::var("TAILRANK_FAILPOINT").ok()?;
    v.strip_prefix(kind)?.strip_prefix(':')?.parse().ok()
}

/// Perform (or complete) the renames of a journal; idempotent (see the module docs).
fn roll_forward(steps: &[Step], fp: &mut Option<usize>, sync: bool) -> Result<()> {
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
        // Only a staging folder of this commit (it holds the journal): another output of the
        // journal may already have a fresh staging folder of a new transaction.
        let staging = staging_dir(&s.target)?;
        if staging.join(JOURNAL).exists() {
            remove_any(&staging)?;
        }
    }
    // The commit is complete: a kill here falls between it and whatever the process does next.
    failpoint(fp);
    if sync {
        sync_parents(steps.iter().map(|s| s.target.as_path()));
    }
    Ok(())
}

/// fsync every file and folder of `p` (folders after their content); best effort, like
/// [`sync_parents`]: a file system without fsync still gets its renames.
fn sync_tree(p: &Path) {
    let Ok(m) = fs::symlink_metadata(p) else {
        return;
    };
    if m.is_dir() {
        if let Ok(rd) = fs::read_dir(p) {
            for e in rd.flatten() {
                sync_tree(&e.path());
            }
        }
    } else if !m.is_file() {
        return;
    }
    if let Ok(f) = fs::File::open(p) {
        let _ = f.sync_all();
    }
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

/// Complete an interrupted commit that involves `target`, if any (the caller holds the lock of
/// `target`, among `locks`; the locks of the other outputs of the journal are taken here and
/// added to `locks`). Returns whether there was one.
fn recover(target: &Path, locks: &mut Vec<Lock>) -> Result<bool> {
    let staging = staging_dir(target)?;
    if !staging.join(JOURNAL).is_file() {
        return Ok(false);
    }
    let j = read_own_journal(&staging)?;
    for s in &j.steps {
        let t = resolve_output(&s.target);
        if !locks.iter().any(|l| l.target == t) {
            locks.push(Lock::acquire_resolved(&s.target, t)?);
        }
    }
    roll_forward(&j.steps, &mut None, true)?;
    Ok(true)
}

/// Remove the staging folder `NAME.tmp` of output `abs` (resolved path of `target`) that a dead
/// run left: a folder holding nothing but the names tailrank stages there (`NAME`, `.old`,
/// [`JOURNAL`], and the journal cut while written, `JOURNAL_PART`). Anything else at that path (a file, a link, a folder with other entries: a
/// user's own `NAME.tmp`, possibly an input of this very command) is refused, not deleted.
fn clear_leftover_staging(target: &Path, abs: &Path) -> Result<()> {
    let staging = staging_dir(abs)?;
    let Ok(m) = fs::symlink_metadata(&staging) else {
        return Ok(());
    };
    let name = abs.file_name().unwrap_or_default();
    let ours = m.is_dir()
        && fs::read_dir(&staging).at(&staging)?.all(|e| {
            e.is_ok_and(|e| {
                let n = e.file_name();
                n == name || n == OLD || n == JOURNAL || n == JOURNAL_PART
            })
        });
    if !ours {
        return Err(Error::output(
            &staging,
            format!(
                "exists and is not a staging folder tailrank left (tailrank stages the new {} \
                 there before renaming it into place); refusing to delete it: move it away or \
                 choose another output",
                target.display()
            ),
        ));
    }
    remove_any(&staging)
}

/// Remove the `NAME.tmp-PID` temporaries that older tailrank versions left next to `target`
/// when their process is gone.
fn clean_old_temporaries(target: &Path) -> Result<()> {
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
        let n = e.file_name();
        let Some(pid) = n.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
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

/// How an output of a [`Transaction`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Staged in `NAME.tmp/NAME`, renamed into place by the commit.
    Staged,
    /// A character device or FIFO, written in place (see the module docs).
    Stream,
    /// Inside the staging folder of another transaction: written in place, committed with it.
    Nested,
}

/// One output of a [`Transaction`].
#[derive(Debug)]
struct Output {
    /// As given (for messages; a stream or nested output is written here).
    target: PathBuf,
    /// Resolved ([`resolve_output`]): where a staged output is staged and renamed.
    abs: PathBuf,
    dir: bool,
    mode: Mode,
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
    scratch: bool,
}

impl Transaction {
    /// A transaction for a command that reads `inputs` (files or folders; outputs that are, hold
    /// or lie inside one of them are refused).
    pub fn new(inputs: &[&Path]) -> Self {
        let mut t = Transaction::default();
        t.inputs = crate::outputs::resolve_inputs(inputs);
        t
    }

    /// This transaction for scratch outputs (see the module docs): in a folder the caller holds
    /// locked and clears of leftovers, read by a reader that checks every byte and rebuilds
    /// what a crash lost. No fsync, no lock of its own, no sweep for old-style temporaries.
    pub fn scratch(mut self) -> Self {
        self.scratch = true;
        self
    }

    /// The renames of the commit, one per staged output in the order they were added.
    fn steps(&self) -> Vec<Step> {
        self.outputs
            .iter()
            .filter(|o| o.mode == Mode::Staged)
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

    fn push(&mut self, target: &Path, abs: PathBuf, dir: bool, mode: Mode) -> usize {
        self.outputs.push(Output {
            target: target.to_path_buf(),
            abs,
            dir,
            mode,
        });
        self.outputs.len() - 1
    }

    fn add(&mut self, target: &Path, dir: bool) -> Result<usize> {
        if inside_staging(target) {
            return Ok(self.push(target, target.to_path_buf(), dir, Mode::Nested));
        }
        let kind = classify_output(target)?;
        let others: Vec<PathBuf> = self.outputs.iter().map(|o| o.abs.clone()).collect();
        let abs = crate::outputs::check_output(target, dir, &self.inputs, &others)?;
        if let Some(s) = self.outputs.iter().find(|o| o.mode == Mode::Stream) {
            return Err(paired_stream(&s.target, target));
        }
        if !self.outputs.is_empty() {
            let first = (&self.outputs[0].target, &self.outputs[0].abs);
            for (given, resolved) in [first, (&target.to_path_buf(), &abs)] {
                if resolved.to_str().is_none() {
                    return Err(Error::output(
                        given,
                        "is not valid UTF-8; outputs written together are listed in a commit \
                         journal (JSON), which needs UTF-8 paths: choose a UTF-8 path",
                    ));
                }
            }
        }
        if let OutputKind::Stream(_) = kind {
            if let Some(o) = self.outputs.first() {
                return Err(paired_stream(target, &o.target));
            }
            return Ok(self.push(target, abs, dir, Mode::Stream));
        }
        names::check_inputs_clear_of_side_entries(target, &abs, &self.inputs)?;
        // Taken already when an earlier output's interrupted commit involved this one.
        if !self.scratch && !self.locks.iter().any(|l| l.target == abs) {
            self.locks
                .push(Lock::acquire_resolved(target, abs.clone())?);
        }
        if recover(&abs, &mut self.locks)? {
            // The recovery may have replaced `target`: check it again.
            crate::outputs::check_output(target, dir, &self.inputs, &others)?;
        }
        clear_leftover_staging(target, &abs)?;
        if !self.scratch {
            clean_old_temporaries(&abs)?;
        }
        let staging = staging_dir(&abs)?;
        fs::create_dir(&staging).at(target)?;
        staging_registry().push(staging);
        Ok(self.push(target, abs, dir, Mode::Staged))
    }

    /// The path output `i` is written to before the commit (`NAME.tmp/NAME`, or the output
    /// itself when it is a stream or lies in another staging folder; a folder output must be
    /// created there by the caller, see [`Transaction::write`]).
    pub fn path(&self, i: usize) -> Result<PathBuf> {
        let o = &self.outputs[i];
        match o.mode {
            Mode::Staged => staged(&o.abs),
            Mode::Stream | Mode::Nested => Ok(o.target.clone()),
        }
    }

    /// Whether output `i` is a character device or FIFO written in place.
    fn is_stream(&self, i: usize) -> bool {
        self.outputs[i].mode == Mode::Stream
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

    /// Write the commit journal into the staging folder of every step; on failure the journals
    /// already written are removed (the commit has not started) when possible.
    fn write_journals(&mut self, steps: &[Step]) -> Result<()> {
        let j = Journal {
            format: JOURNAL_FORMAT.into(),
            pid: std::process::id(),
            steps: steps.to_vec(),
        };
        let text = serde_json::to_string_pretty(&j)
            .map_err(|e| Error::internal(format!("cannot serialise a journal: {e}")))?;
        let mut written = Vec::new();
        for s in steps {
            let staging = staging_dir(&s.target)?;
            let (jp, tmp) = (staging.join(JOURNAL), staging.join(JOURNAL_PART));
            let r = (|| -> Result<()> {
                let mut f = fs::File::create(&tmp).at(&tmp)?;
                f.write_all(text.as_bytes()).at(&tmp)?;
                if !self.scratch {
                    f.sync_all().at(&tmp)?;
                }
                fs::rename(&tmp, &jp).at(&jp)
            })();
            if let Err(e) = r {
                let undone = written.iter().all(|p: &PathBuf| fs::remove_file(p).is_ok());
                // Journals that could not be removed keep the staged content for a roll-forward.
                self.journaled = !undone;
                return Err(e);
            }
            written.push(jp);
            self.journaled = true;
        }
        Ok(())
    }

    /// Rename every output into place (see the module docs). Every output must have been
    /// written.
    pub fn commit(mut self) -> Result<()> {
        for o in self.outputs.iter().filter(|o| o.mode == Mode::Staged) {
            let p = staged(&o.abs)?;
            let ok = fs::metadata(&p).is_ok_and(|m| m.is_dir() == o.dir);
            if !ok {
                return Err(Error::internal_at(
                    &o.target,
                    "internal error: output not written before the commit",
                ));
            }
            if !self.scratch {
                sync_tree(&p);
            }
        }
        let steps = self.steps();
        let single = steps.len() == 1 && !(steps[0].dir && exists(&steps[0].target));
        let mut fp = Some(0usize);
        if steps.is_empty() {
            // Streams and nested outputs are written in place.
        } else if single {
            let o = &steps[0].target;
            let target = &self
                .outputs
                .iter()
                .find(|x| x.abs == *o)
                .expect("staged")
                .target;
            fs::rename(staged(o)?, o).at(target)?;
            remove_any(&staging_dir(o)?)?;
            if !self.scratch {
                sync_parents(std::iter::once(o.as_path()));
            }
        } else {
            self.write_journals(&steps)?;
            failpoint(&mut fp);
            roll_forward(&steps, &mut fp, !self.scratch)?;
        }
        self.committed = true;
        self.release_staging();
        Ok(())
    }

    fn release_staging(&self) {
        for o in self.outputs.iter().filter(|o| o.mode == Mode::Staged) {
            if let Ok(s) = staging_dir(&o.abs) {
                unregister_staging(&s);
            }
        }
    }
}

/// The refusal of a character device or FIFO `stream` written together with `other`.
fn paired_stream(stream: &Path, other: &Path) -> Error {
    let what = match classify_output(stream) {
        Ok(OutputKind::Stream(w)) => w,
        _ => "special file",
    };
    Error::output(
        stream,
        format!(
            "is a {what}, not a regular file; this command writes it together with {}, and \
             outputs written together must be regular files (replaced together, atomically): \
             give the path of a regular file",
            other.display()
        ),
    )
}

impl Drop for Transaction {
    fn drop(&mut self) {
        // A commit cut by an error keeps its journal and staged content for the roll-forward.
        if !self.committed && !self.journaled {
            for o in self.outputs.iter().filter(|o| o.mode == Mode::Staged) {
                if let Ok(s) = staging_dir(&o.abs) {
                    let _ = remove_any(&s);
                }
            }
        }
        self.release_staging();
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
        Error::File { kind, path, msg } => Error::File {
            kind,
            path: fix(path),
            msg,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests;
