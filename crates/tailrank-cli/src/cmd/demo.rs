//! `tailrank demo`: simulate an ILIAS-like benchmark (known truth), predict mAP@1k at N = 10^8
//! from its 5% sample, and compare the prediction and the baselines with the truth.

use clap::Args;
use std::path::PathBuf;
use tailrank::report::{demo, headline};
use tailrank::simulate::files::run_demo;
use tailrank::simulate::{SimConfig, SimulationFiles};

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Seed of the simulation and of the bootstrap.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Folder for the simulated summary, the truth and the prediction.
    #[arg(long, short, default_value = "tailrank-demo")]
    pub out: PathBuf,
    /// Query-bootstrap replicates.
    #[arg(long, default_value_t = 1000)]
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
}

pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    let mut cfg = SimConfig::preset("ilias-like", a.seed)?;
    if let Some(q) = a.queries {
        cfg = cfg.with_queries(q);
    }
    cfg.check()?;
    print!("{}", demo::demo_header(&cfg));
    let (sim, p) = run_demo(&cfg, &a.out, a.bootstrap, a.sample_noise)?;
    let files = SimulationFiles::in_dir(&a.out);
    if a.details {
        print!("{}", demo::demo_table(&sim.truth, &p, &files));
    } else {
        print!("{}", headline::demo_headline(&sim.truth, &p, &files));
    }
    Ok(())
}
