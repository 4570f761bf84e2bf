//! Readers' side of a commit ([`check_settled`]): an output whose commit journal still has
//! work to do is refused, after a short wait when a live writer is finishing it.

use super::lock::{busy, held_by_other};
use super::{lock_path, read_own_journal, staging_dir, Step, JOURNAL};
use crate::error::{Error, Result};
use crate::outputs::resolve_output;
use std::path::Path;

/// Readers' check: refuse `path` while a commit that replaces it together with other outputs
/// is unfinished (an interrupted one that nobody completed yet, or a live writer's that does
/// not finish within [`SETTLE_WAIT`]), so that a new output is never read next to an old
/// companion.
pub fn check_settled(path: &Path) -> Result<()> {
    settled_within(path, SETTLE_WAIT)
}

/// How long a reader waits for a live writer's commit (a few renames) to finish before it
/// gives up with "another tailrank process … is replacing it".
const SETTLE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// [`check_settled`], waiting up to `wait` while a live process holds the commit.
pub(super) fn settled_within(path: &Path, wait: std::time::Duration) -> Result<()> {
    let resolved = resolve_output(path);
    let Ok(staging) = staging_dir(&resolved) else {
        return Ok(());
    };
    let jp = staging.join(JOURNAL);
    let start = std::time::Instant::now();
    let j = loop {
        // The journal can vanish between the check and the read: the commit finished.
        let j = match jp.is_file() {
            true => match read_own_journal(&staging) {
                Ok(j) => j,
                Err(_) if !jp.exists() => return Ok(()),
                Err(e) => return Err(e),
            },
            false => return Ok(()),
        };
        if !j.steps.iter().any(Step::unfinished) {
            return Ok(());
        }
        if !held_by_other(&resolved) {
            // The writer may have finished and let go between the read and the lock check.
            match jp.is_file().then(|| read_own_journal(&staging)) {
                Some(Ok(again)) if again.steps.iter().any(Step::unfinished) => break again,
                Some(Err(e)) if jp.exists() => return Err(e),
                _ => return Ok(()),
            }
        }
        if start.elapsed() >= wait {
            return Err(busy(path, &lock_path(&resolved)?, "replacing"));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    Err(Error::input(
        path,
        format!(
            "an interrupted tailrank run left it half-replaced (outputs replaced together: {}; \
             journal {}); run the command that writes it again (for a scan, resume it): it \
             completes the replacement first",
            j.targets(),
            jp.display()
        ),
    ))
}
