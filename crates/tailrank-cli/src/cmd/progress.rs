//! The progress indicator of the scans: on stderr when it is a terminal, nothing otherwise;
//! cleared when dropped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use tailrank::scan::engine::Progress;

pub struct Bar(Option<ProgressBar>);

impl Bar {
    /// A bar over `total` rows (`Some`: percent, rate and ETA), or a spinner (`None`: rows done
    /// and the rate), drawn with the indicatif `template`.
    pub fn new(total: Option<u64>, template: &str) -> Bar {
        if !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let pb = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        pb.set_style(ProgressStyle::with_template(template).expect("valid template"));
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
