//! `tailrank demo`: simulate an ILIAS-like benchmark (known truth), predict mAP@1k at N = 10^8
//! from its 5% sample, and compare the prediction and the baselines with the truth.

use clap::Args;
use std::path::PathBuf;
use tailrank::outputs::refuse_inside;
use tailrank::report::html_pages::{demo_html, write_html};
use tailrank::report::{demo, headline, prediction_json};
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
    /// Also write the report as one self-contained HTML page here (the prediction's page and
    /// the known truth); not inside the output folder.
    #[arg(long)]
    pub html: Option<PathBuf>,
}

pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    let mut cfg = SimConfig::preset("ilias-like", a.seed)?;
    if let Some(q) = a.queries {
        cfg = cfg.with_queries(q);
    }
    cfg.check()?;
    // The page never inside the demo's own folder, which the demo replaces.
    let mut outputs = tailrank::atomic::Transaction::new(&[]);
    if let Some(h) = a.html.as_deref() {
        refuse_inside(h, &a.out, "demo")?;
    }
    let html_slot = a.html.as_deref().map(|p| outputs.add_file(p)).transpose()?;
    print!("{}", demo::demo_header(&cfg));
    let (sim, p) = run_demo(&cfg, &a.out, a.bootstrap, a.sample_noise)?;
    let files = SimulationFiles::in_dir(&a.out);
    if let Some(slot) = html_slot {
        let page = demo_html(&prediction_json(&p), &serde_json::to_value(&sim.truth)?);
        outputs.write(slot, |path| write_html(&page, path))?;
        outputs.commit()?;
    }
    if a.details {
        print!("{}", demo::demo_table(&sim.truth, &p, &files));
    } else {
        print!("{}", headline::demo_headline(&sim.truth, &p, &files));
    }
    Ok(())
}
