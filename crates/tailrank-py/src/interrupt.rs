//! Ctrl-C during a scan. The scan runs on a helper thread with the GIL released while the
//! calling thread runs Python's signal handlers every [`POLL`]; when one raises (Ctrl-C's
//! `KeyboardInterrupt`), the scan's [`Progress`] reports it cancelled, the scan stops at its
//! next block, and the handler's exception is raised in place of the scan's result.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use tailrank::scan::engine::Progress;

/// How often the calling thread runs Python's signal handlers while the work runs.
const POLL: Duration = Duration::from_millis(50);

/// A [`Progress`] that reports no progress and is cancelled once a signal handler raised.
#[derive(Debug, Default)]
pub struct Cancel(AtomicBool);

impl Progress for Cancel {
    fn rows_done(&self, _rows: u64) {}

    fn cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// `work` run with the GIL released and cancelled by a signal (module docs); a panic of
/// `work` is resumed on the calling thread (PyO3 turns it into `PanicException`).
pub fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&Cancel) -> T + Send,
) -> PyResult<T> {
    let cancel = Cancel::default();
    let (outcome, raised) = py.allow_threads(|| {
        std::thread::scope(|s| {
            let (done, finished) = mpsc::channel::<()>();
            let cancel = &cancel;
            let worker = s.spawn(move || {
                let out = work(cancel);
                let _ = done.send(());
                out
            });
            let mut raised = None;
            // `Disconnected`: the worker panicked before it could say it finished.
            while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(POLL) {
                if raised.is_none() {
                    if let Err(e) = Python::with_gil(|py| py.check_signals()) {
                        cancel.0.store(true, Ordering::Relaxed);
                        raised = Some(e);
                    }
                }
            }
            (worker.join(), raised)
        })
    });
    if let Some(e) = raised {
        return Err(e);
    }
    outcome.map_err(|panic| std::panic::resume_unwind(panic))
}
