//! The progress indicator of long steps (scans, writing a simulated pool): on stderr when it is a terminal, nothing otherwise;
//! cleared when dropped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use tailrank::scan::engine::Progress;

pub struct Bar(Option<ProgressBar>);

/// The bar over a known number of rows, and the spinner of a count without a known end.
const BAR: &str =
    "{prefix} {bar:40.cyan/blue} {percent:>3}% {human_pos}/{human_len} rows {per_sec:0} ETA {eta}";
const SPINNER: &str = "{prefix} {spinner} {human_pos} rows {per_sec:0}";

impl Bar {
    /// A bar over `total` rows (`Some`: percent, rate and ETA), or a spinner (`None`: rows done
    /// and the rate), labelled `task`.
    pub fn new(task: &str, total: Option<u64>) -> Bar {
        if !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let pb = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        let template = if total.is_some() { BAR } else { SPINNER };
        pb.set_style(ProgressStyle::with_template(template).expect("valid template"));
        pb.set_prefix(task.to_string());
        Bar(Some(pb))
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(pb) = &self.0 {
            pb.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn rows_done(&self, rows: u64) {
        if let Some(pb) = &self.0 {
            pb.inc(rows);
        }
    }
}
