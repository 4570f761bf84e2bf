//! `tailrank curve`: predicted mAP@k against pool size N (log axis) as SVG or PNG, with the
//! query-bootstrap band, the count and curve-fit baselines and the evaluate-at-S points of the
//! nested levels.

use super::predict::ModelArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CurveArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Output image (`.svg` or `.png`).
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// Smallest pool size of the curve.
    #[arg(long, default_value_t = 1e3)]
    pub from: f64,
    /// Largest pool size of the curve.
    #[arg(long, default_value_t = 1e9)]
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
    tailrank::plot::PlotFormat::from_path(&a.out)?;
    let mut outputs = tailrank::atomic::Transaction::new(&a.model.input_paths());
    let slot = outputs.add_file(&a.out)?;
    let request = a.model.request(0, a.centre.enabled());
    let opts = a.model.est.options(&request)?;
    let c = a
        .model
        .load(&request)?
        .curve(&opts, a.from, a.to, a.per_decade)?;
    outputs.write(slot, |p| tailrank::plot::write_curve(&c, p))?;
    outputs.commit()?;
    if a.json {
        println!("{}", tailrank::formats::json::to_pretty_json(&c)?);
    } else {
        println!("wrote {} ({} points)", a.out.display(), c.points.len());
    }
    Ok(())
}
