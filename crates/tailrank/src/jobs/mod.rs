//! The subcommands of a front end as jobs: each job holds what its command is asked for (the
//! library's request types, with the defaults of the options not given resolved here, once)
//! and runs it from its input files to its output files and the text it prints. A front end
//! (the CLI) only translates its flags into a job and hands it a [`Console`]; every rule,
//! check, default, output claim and choice of report is the job's.
//!
//! A job claims its output paths before it reads or computes anything
//! ([`crate::atomic::Transaction`]: an output over an input, or one that cannot be written,
//! fails before the work), writes them together once the work is done, and prints what
//! the command prints, in the same order, through the [`Console`] as it goes (a header before
//! a long run, warnings as they come, the report last).
//!
//! * `eval` in [`eval`];
//! * `predict`, `compare` and `curve` in [`predict`];
//! * `sample`, `scan`, `merge` and `grow` in [`scan`];
//! * `demo`, `simulate` and `validate` in `simulate` (feature `simulate`);
//! * `ilias` in [`ilias`].

pub mod eval;
pub mod ilias;
pub mod predict;
pub mod scan;
#[cfg(feature = "simulate")]
pub mod simulate;

use crate::error::{Error, Result};
use crate::scan::engine::{NoProgress, Progress};
use std::path::Path;

/// Where a job's text goes as the job makes it: the report on standard output, warnings and
/// notes on standard error (a terminal front end prints each as it comes).
pub trait Console {
    /// Text of the report, printed as given (it ends with its own newline).
    fn out(&mut self, text: &str);
    /// One line of standard error (without its newline).
    fn err(&mut self, line: &str);
    /// A warning: the line `tailrank: warning: {warning}`.
    fn warn(&mut self, warning: &str) {
        self.err(&format!("tailrank: warning: {warning}"));
    }
    /// A progress indicator of the long step `task` over `total` rows (None: a count without
    /// a known end), fed as rows are done and cleared when dropped; by default nothing shows.
    fn progress(&self, task: &str, total: Option<u64>) -> Box<dyn Progress> {
        let _ = (task, total);
        Box::new(NoProgress)
    }
}

/// The first refusal of a standard stream by [`write_std`], with the stream's name.
static STREAM_FAILURE: std::sync::Mutex<Option<(&str, Error)>> = std::sync::Mutex::new(None);

/// Write a job's text to a standard stream (`name`: "standard output" or "standard error") and
/// flush it. Where the OS refuses it (a full disk), the first refusal is kept, as an `io` error
/// naming the stream, for [`take_stream_failure`], and later writes to that stream are skipped:
/// the job runs on, its outputs committed or rolled back as usual, and the front end then ends
/// with that error (a panic, or an exit in the middle of the job, would leave its staging
/// behind).
pub fn write_std(mut stream: impl std::io::Write, name: &'static str, text: &str) {
    let mut failure = STREAM_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if failure.as_ref().is_some_and(|(failed, _)| *failed == name) {
        return;
    }
    let written = (stream.write_all(text.as_bytes())).and_then(|()| stream.flush());
    if let (Err(e), None) = (written, failure.as_ref()) {
        *failure = Some((name, Error::io(name, e)));
    }
}

/// The first refusal of a standard stream by [`write_std`], if any (taken: once).
pub fn take_stream_failure() -> Option<Error> {
    let mut failure = STREAM_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    failure.take().map(|(_, e)| e)
}

/// The `tailrank CMD: wrote PATH` line on standard error of each file `paths` a job wrote
/// beside its report (standard output keeps the report alone, JSON included).
fn note_written(console: &mut dyn Console, cmd: &str, paths: &[Option<&Path>]) {
    for p in paths.iter().flatten() {
        console.err(&format!("tailrank {cmd}: wrote {}", p.display()));
    }
}

/// Which form of a report is printed: the short headline (the default), the full table
/// (`--details`) or every number as JSON (`--json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Headline,
    Details,
    Json,
}

impl View {
    /// `--json` over `--details` over the headline (a front end refuses the two together).
    pub fn of(json: bool, details: bool) -> View {
        match (json, details) {
            (true, _) => View::Json,
            (false, true) => View::Details,
            (false, false) => View::Headline,
        }
    }
}

/// `report` as tailrank prints a report's JSON ([`crate::formats::json::to_pretty_json`]),
/// with its final newline.
pub fn json_text<T: serde::Serialize + ?Sized>(report: &T) -> Result<String> {
    Ok(crate::formats::json::to_pretty_json(report)? + "\n")
}

/// `value` as serde_json's pretty JSON (the layout of the files and reports that predate
/// [`json_text`]: a prediction's `--json`, the runs of a validation).
fn serde_pretty<T: serde::Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value)
        .map_err(|e| Error::internal(format!("cannot serialise a report as JSON: {e}")))
}
