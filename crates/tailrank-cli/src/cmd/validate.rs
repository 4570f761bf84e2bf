//! `tailrank validate`: the validation study on simulated benchmarks with known truth — errors
//! of the tail-aware estimate and of every baseline, interval coverage over seeds, convergence
//! over sample fractions; a table on stdout and a markdown report. By default it runs the whole
//! validation corpus (`--list` prints it) at 5% and 1%; `--exam` prints instead the exam
//! tables (one per fraction, tuning and held-out families side by side).

use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::simulate::ValidateJob;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Number of seeds per family (default: the library's, 3).
    #[arg(long)]
    pub seeds: Option<usize>,
    /// First seed.
    #[arg(long, default_value_t = 0)]
    pub first_seed: u64,
    /// Comma-separated corpus families (default: the whole corpus).
    #[arg(long, alias = "families", value_delimiter = ',')]
    pub presets: Option<Vec<String>>,
    /// Print the corpus (name, held out, description) and exit.
    #[arg(long)]
    pub list: bool,
    /// Main sample fraction: headline errors and interval coverage (default: 0.05).
    #[arg(allow_negative_numbers = true, long)]
    pub fraction: Option<f64>,
    /// Comma-separated further sample fractions, point estimates only (default: 0.01).
    #[arg(allow_hyphen_values = true, long, value_delimiter = ',')]
    pub fractions: Option<Vec<f64>>,
    /// Override the presets' pool size N.
    #[arg(long)]
    pub pool_size: Option<u64>,
    /// Scale the presets down to this many queries.
    #[arg(long)]
    pub queries: Option<usize>,
    /// Query-bootstrap replicates at every fraction (default: the library's).
    #[arg(long)]
    pub bootstrap: Option<usize>,
    #[command(flatten)]
    pub fit: super::FitArgs,
    #[command(flatten)]
    pub centre: super::CentreArgs,
    /// Markdown report (written atomically).
    #[arg(
        short,
        long,
        alias = "markdown",
        default_value = "validation-report.md"
    )]
    pub out: PathBuf,
    /// Also write every run as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Do not print a line per run.
    #[arg(long, short)]
    pub quiet: bool,
    /// The exam (docs/reference/validation.md, "The exam"): every fraction of --fractions (default
    /// 0.05,0.01) as a main fraction, one table per fraction with the tuning and held-out
    /// families side by side, printed and written to --out.
    #[arg(long, conflicts_with = "fraction")]
    pub exam: bool,
    /// With --exam: vector-level run files (`tailrank simulate --vectors --validate --json`),
    /// comma-separated, added as held-out rows.
    #[arg(long, value_delimiter = ',', requires = "exam")]
    pub vector_runs: Vec<PathBuf>,
}

pub fn run(a: ValidateArgs) -> anyhow::Result<()> {
    let command: Vec<String> = std::env::args().collect();
    let job = ValidateJob {
        list: a.list,
        presets: a.presets.as_deref(),
        seeds: a.seeds,
        first_seed: a.first_seed,
        fraction: a.fraction,
        fractions: a.fractions.as_deref(),
        pool_size: a.pool_size,
        queries: a.queries,
        bootstrap: a.bootstrap,
        fit: a.fit.fit.parse()?,
        excess_centre: a.centre.enabled(),
        out: &a.out,
        json: a.json.as_deref(),
        quiet: a.quiet,
        exam: a.exam,
        vector_runs: &a.vector_runs,
        command: command.join(" "),
    };
    Ok(job.run(&mut super::Terminal)?)
}
