//! The advisory lock of an output (`NAME.lock`, see [`crate::atomic`]).

use super::lock_path;
use crate::error::{Error, IoContext, Result};
use crate::outputs::resolve_output;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// Refuse a `NAME.lock` that tailrank did not leave: anything but a regular file holding
/// nothing or a pid (a link, a folder, a user's file, possibly an input of this very command),
/// which taking the lock would truncate.
fn refuse_foreign_lock(target: &Path, lp: &Path) -> Result<()> {
    let Ok(m) = fs::symlink_metadata(lp) else {
        return Ok(());
    };
    let pid_only = m.is_file()
        && m.len() <= 32
        && fs::read(lp).is_ok_and(|b| {
            let t = String::from_utf8_lossy(&b);
            t.trim().bytes().all(|c| c.is_ascii_digit())
        });
    if pid_only {
        return Ok(());
    }
    Err(Error::output(
        lp,
        format!(
            "exists and is not a lock tailrank left (tailrank locks the output {} there, in a \
             file holding its pid); refusing to overwrite it: move it away or choose another \
             output",
            target.display()
        ),
    ))
}

/// An exclusive advisory lock on an output (`NAME.lock`, see the module docs). Dropping it
/// removes the lock file and releases the lock.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    /// The output guarded, resolved ([`crate::outputs::resolve_output`]).
    pub(super) target: PathBuf,
    file: Option<fs::File>,
}

impl Lock {
    /// Take the lock of output `target`, or fail at once naming the process that holds it.
    pub fn acquire(target: &Path) -> Result<Lock> {
        Self::acquire_resolved(target, resolve_output(target))
    }

    /// [`Lock::acquire`] with the resolved path of `target` ([`resolve_output`]).
    pub(super) fn acquire_resolved(target: &Path, resolved: PathBuf) -> Result<Lock> {
        let lp = lock_path(&resolved)?;
        refuse_foreign_lock(target, &lp)?;
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
                        target: resolved,
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
                target: resolved,
                file: Some(file),
            });
        }
        Err(Error::output(
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

pub(super) fn busy(target: &Path, lp: &Path, doing: &str) -> Error {
    let who = match lock_pid(lp) {
        Some(p) => format!("another tailrank process (pid {p})"),
        None => "another tailrank process".to_string(),
    };
    Error::output(
        target,
        format!(
            "{who} is {doing} it (it holds {}); wait for it to finish",
            lp.display()
        ),
    )
}

/// Whether a live process holds the lock of the output at resolved path `target` (checked
/// without keeping the lock).
pub(super) fn held_by_other(target: &Path) -> bool {
    let Ok(lp) = lock_path(target) else {
        return false;
    };
    let Ok(f) = fs::File::open(&lp) else {
        return false;
    };
    matches!(try_flock(&f, false), Ok(Flock::Busy))
}
