//! `tailrank compare A B`: the predicted difference at N between two models' summaries over
//! the same queries and pool sample, with a paired interval and a verdict on whether the
//! margin exceeds the extrapolation error (`tailrank::predict::compare`).

use super::predict::EstimateArgs;
use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::predict::CompareJob;
use tailrank::jobs::View;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Summary of model A.
    pub a: PathBuf,
    /// Summary of model B (same queries, same pool sample).
    pub b: PathBuf,
    /// Pool size N to compare at (default: the N recorded in the summaries).
    #[arg(long)]
    pub pool_size: Option<u64>,
    #[command(flatten)]
    pub est: EstimateArgs,
    /// Print the comparison as JSON (fractions) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print the full table (with the margin from each level) instead of the headline.
    #[arg(long, conflicts_with = "json")]
    pub details: bool,
    /// Also write the comparison as one self-contained HTML page here: the difference with
    /// its paired interval and verdict, and each model's prediction page.
    #[arg(long)]
    pub html: Option<PathBuf>,
}

pub fn run(a: CompareArgs) -> anyhow::Result<()> {
    let centre = tailrank::predict::PredictOptions::DEFAULT.excess_centre;
    let job = CompareJob {
        flags: a.est.flags(a.pool_size, 0, centre),
        a: &a.a,
        b: &a.b,
        html: a.html.as_deref(),
        view: View::of(a.json, a.details),
    };
    Ok(job.run(&mut super::Terminal)?)
}
