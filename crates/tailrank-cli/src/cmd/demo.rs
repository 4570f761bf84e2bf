//! `tailrank demo`: simulate an ILIAS-like benchmark (known truth), predict mAP@1k at N = 10^8
//! from its 5% sample, and compare the prediction and the baselines with the truth.

use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::simulate::DemoJob;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Seed of the simulation and of the bootstrap.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Folder for the simulated summary, the truth and the prediction.
    #[arg(long, short, default_value = "tailrank-demo")]
    pub out: PathBuf,
    /// Query-bootstrap replicates.
    #[arg(long, default_value_t = tailrank::predict::PredictOptions::DEFAULT.bootstrap)]
    pub bootstrap: usize,
    /// Sample-noise replicates (Poisson reweighting of the sample, tails refitted).
    #[arg(long, default_value_t = 20)]
    pub sample_noise: usize,
    /// Scale the benchmark down to this many queries (default: the full 1,232).
    #[arg(long)]
    pub queries: Option<usize>,
    /// Print the full table (every baseline, the diagnostics) instead of the headline.
    #[arg(long)]
    pub details: bool,
    /// Also write the report as one self-contained HTML page here (the prediction's page and
    /// the known truth); not inside the output folder.
    #[arg(long)]
    pub html: Option<PathBuf>,
}

pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    let job = DemoJob {
        seed: a.seed,
        out: &a.out,
        bootstrap: a.bootstrap,
        sample_noise: a.sample_noise,
        queries: a.queries,
        details: a.details,
        html: a.html.as_deref(),
    };
    Ok(job.run(&mut super::Terminal)?)
}
