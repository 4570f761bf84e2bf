//! `tailrank`: a thin command-line layer over the `tailrank` library. Each subcommand lives in
//! `cmd/<name>.rs`, parses its arguments and calls the library; no logic lives here.

use clap::{Parser, Subcommand};

mod cmd;

#[derive(Parser)]
#[command(
    name = "tailrank",
    version,
    about = "Exact and predicted mAP@k for image retrieval against web-scale distractor pools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate an ILIAS-like benchmark, predict mAP@1k at N = 10^8 from a 5% sample, compare with the truth.
    Demo(cmd::demo::DemoArgs),
    /// Exact metrics from a results JSON (or a whole-pool scan summary).
    Eval(cmd::eval::EvalArgs),
    /// Scan descriptors: scores, per-query top-M and per-positive counts, into a summary.
    Scan(cmd::scan::ScanArgs),
    /// Merge summaries of disjoint pool shards.
    Merge(cmd::merge::MergeArgs),
    /// Grow a sample summary by the scan of its increment (`scan --after`) into the larger sample's.
    Grow(cmd::grow::GrowArgs),
    /// Hash-sample pool ids (docs/method.md §4) and write the sample with a manifest.
    Sample(cmd::sample::SampleArgs),
    /// Predict the full-pool metric from a sample summary or a hardness file.
    Predict(cmd::predict::PredictArgs),
    /// Predicted difference at N between two models over the same queries and pool sample.
    Compare(cmd::compare::CompareArgs),
    /// Plot predicted mAP@k against pool size.
    Curve(cmd::curve::CurveArgs),
    /// Simulate a benchmark with known truth (summary-level or descriptor files).
    Simulate(cmd::simulate::SimulateArgs),
    /// Validation study on simulated data: errors of the estimate and the baselines.
    Validate(cmd::validate::ValidateArgs),
    /// ILIAS end to end from its own files: id checks, scan, mAP@k (i2i, t2i) with breakdowns.
    Ilias(cmd::ilias::IliasArgs),
}

fn main() {
    restore_sigpipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => cmd::demo::run(a),
        Command::Eval(a) => cmd::eval::run(a),
        Command::Scan(a) => cmd::scan::run(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Grow(a) => cmd::grow::run(a),
        Command::Sample(a) => cmd::sample::run(a),
        Command::Predict(a) => cmd::predict::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Curve(a) => cmd::curve::run(a),
        Command::Simulate(a) => cmd::simulate::run(a),
        Command::Validate(a) => cmd::validate::run(a),
        Command::Ilias(a) => cmd::ilias::run(a),
    };
    result.unwrap_or_else(|e| fail(e));
    if let Some(e) = tailrank::jobs::take_stream_failure() {
        fail(e.into())
    }
}

/// End the process on an error: its line on standard error, if that stream still takes it,
/// and the exit code of its kind (docs/reference/errors.md).
fn fail(e: anyhow::Error) -> ! {
    let line = tailrank::error::error_line(e.chain());
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("tailrank: error: {line}\n").as_bytes(),
    );
    std::process::exit(tailrank::error::kind_of_chain(e.chain()).exit_code())
}

/// Let a closed output pipe end the process quietly, as for any Unix filter
/// (`tailrank predict --json | head`): Rust ignores SIGPIPE, so without this every `println!`
/// after the reader has gone would panic with "failed printing to stdout".
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any thread exists; it only restores the
    // default disposition of one signal.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
