//! One file per subcommand, each translating its flags into a job of the library
//! (`tailrank::jobs`), and what they share: the flags of the move to the centre and of the
//! fit, the terminal the jobs print to, and the progress bar.

pub mod compare;
pub mod curve;
pub mod demo;
pub mod eval;
pub mod grow;
pub mod ilias;
pub mod merge;
pub mod predict;
mod progress;
pub mod sample;
pub mod scan;
pub mod simulate;
pub mod validate;

use tailrank::jobs::View;
use tailrank::scan::engine::Progress;

/// Whether the estimate moves to the centre of the endpoint test's excess and to the centre
/// of the rare items above the top positive (docs/method.md §9): the library's default
/// (`PredictOptions::DEFAULT.excess_centre`) unless a flag says.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct CentreArgs {
    /// Keep the tail model's own estimate (the paper's): no move to the centre of the
    /// endpoint test's survivor-decayed excess nor of the rare items above the top positive
    /// that the top-spacing test reads (docs/method.md §9).
    #[arg(long)]
    pub no_excess_centre: bool,
    /// Move the estimate to the centres of the decayed excess and of the rare items above
    /// (the default; kept for scripts that name it).
    #[arg(long, conflicts_with = "no_excess_centre")]
    pub excess_centre: bool,
}

impl CentreArgs {
    /// The flag given, if any (the two exclude each other).
    pub fn given(&self) -> Option<bool> {
        (self.excess_centre || self.no_excess_centre).then_some(self.excess_centre)
    }

    /// The flag given, else the library's default.
    pub fn enabled(&self) -> bool {
        self.given()
            .unwrap_or(tailrank::predict::PredictOptions::DEFAULT.excess_centre)
    }
}

/// Which evt fit gives the estimate (`PredictOptions::fit`; docs/notes/2026-12-estimator-log.md, "The
/// level-selected fit").
#[derive(clap::Args, Debug, Clone)]
pub struct FitArgs {
    /// Which evt fit gives the estimate: the one whose nested levels best predict the known
    /// sample (level-selected, the default; from a summary with at least two nesting levels) or the
    /// options' own (fixed: --fit-top and --quantile, the paper's by default). The other one
    /// is reported beside it and feeds the verdict's fit-choice test.
    #[arg(
        long,
        default_value = tailrank::predict::PredictOptions::DEFAULT.fit.as_str(),
        value_parser = tailrank::predict::FitMode::NAMES
    )]
    pub fit: String,
}

/// How a report is printed (the headline, the full table or JSON: [`View`]) and whether it is
/// also written as an HTML page; shared by `predict`, `compare` and `ilias`.
#[derive(clap::Args, Debug, Clone)]
pub struct ViewArgs {
    /// Print the full JSON report instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print the full report instead of the headline (for a prediction: every table, with its
    /// levels and checks).
    #[arg(long, conflicts_with = "json")]
    pub details: bool,
    /// Also write the report as one self-contained HTML page here (each prediction's page:
    /// curve, levels, checks, per-query histogram, next step).
    #[arg(long)]
    pub html: Option<std::path::PathBuf>,
}

impl ViewArgs {
    pub fn view(&self) -> View {
        View::of(self.json, self.details)
    }
}

/// The terminal the jobs print to: the report on stdout, warnings, notes and progress on stderr.
pub struct Terminal;

impl tailrank::jobs::Console for Terminal {
    fn out(&mut self, text: &str) {
        tailrank::jobs::write_std(std::io::stdout(), "standard output", text);
    }

    fn err(&mut self, line: &str) {
        tailrank::jobs::write_std(std::io::stderr(), "standard error", &format!("{line}\n"));
    }

    fn progress(&self, task: &str, total: Option<u64>) -> Box<dyn Progress> {
        Box::new(progress::Bar::new(task, total))
    }
}

/// A clap value parser for the library's named values (`FromStr` with the library's error,
/// whose text clap prints).
pub fn parse_value<T: std::str::FromStr<Err = tailrank::Error>>(s: &str) -> Result<T, String> {
    s.parse().map_err(|e: tailrank::Error| e.to_string())
}
