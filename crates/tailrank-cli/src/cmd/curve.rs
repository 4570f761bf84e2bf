//! `tailrank curve`: predicted mAP@k against pool size N (log axis) as SVG or PNG, with the
//! query-bootstrap band, the count and curve-fit baselines and the evaluate-at-S points of the
//! nested levels.

use super::predict::ModelArgs;
use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::predict::CurveJob;

#[derive(Args, Debug)]
pub struct CurveArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Output image (`.svg` or `.png`).
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// Smallest pool size of the curve.
    #[arg(allow_negative_numbers = true, long, default_value_t = 1e3)]
    pub from: f64,
    /// Largest pool size of the curve.
    #[arg(allow_negative_numbers = true, long, default_value_t = 1e9)]
    pub to: f64,
    /// Grid points per decade of N.
    #[arg(long, default_value_t = 8)]
    pub per_decade: usize,
    /// Whether the curve carries `predict`'s move to the centre of the excess at every N.
    #[command(flatten)]
    pub centre: super::CentreArgs,
    /// Also print the curve as JSON (fractions).
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: CurveArgs) -> anyhow::Result<()> {
    let job = CurveJob {
        flags: a.model.est.flags(0, a.centre.enabled()),
        input: a.model.input(),
        out: &a.out,
        from: a.from,
        to: a.to,
        per_decade: a.per_decade,
        json: a.json,
    };
    Ok(job.run(&mut super::Terminal)?)
}
