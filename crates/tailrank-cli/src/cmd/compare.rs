//! `tailrank compare A B`: the predicted difference at N between two models' summaries over
//! the same queries and pool sample, with a paired interval and a verdict on whether the
//! margin exceeds the extrapolation error (`tailrank::predict::compare`).

use super::predict::EstimateArgs;
use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::predict::CompareJob;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Summary of model A.
    pub a: PathBuf,
    /// Summary of model B (same queries, same pool sample).
    pub b: PathBuf,
    #[command(flatten)]
    pub est: EstimateArgs,
    /// The comparison's table, JSON (fractions) or HTML page (the difference with its paired
    /// interval and verdict, and each model's prediction page).
    #[command(flatten)]
    pub view: super::ViewArgs,
}

pub fn run(a: CompareArgs) -> anyhow::Result<()> {
    let centre = tailrank::predict::PredictOptions::DEFAULT.excess_centre;
    let job = CompareJob {
        flags: a.est.flags(0, centre),
        a: &a.a,
        b: &a.b,
        html: a.view.html.as_deref(),
        view: a.view.view(),
    };
    Ok(job.run(&mut super::Terminal)?)
}
