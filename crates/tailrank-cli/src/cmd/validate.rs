//! `tailrank validate`: the validation study on simulated benchmarks with known truth — errors
//! of the tail-aware estimate and of every baseline, interval coverage over seeds, convergence
//! over sample fractions; a table on stdout and a markdown report. By default it runs the whole
//! validation corpus (`--list` prints it) at 5% and 1%.

use clap::Args;
use std::path::PathBuf;
use tailrank::simulate::corpus::CORPUS;
use tailrank::simulate::validation::{run_validation, ValidationOptions};

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
    #[arg(long)]
    pub fraction: Option<f64>,
    /// Comma-separated further sample fractions, point estimates only (default: 0.01).
    #[arg(long, value_delimiter = ',')]
    pub fractions: Option<Vec<f64>>,
    /// Override the presets' pool size N.
    #[arg(long)]
    pub pool_size: Option<u64>,
    /// Scale the presets down to this many queries.
    #[arg(long)]
    pub queries: Option<usize>,
    /// Query-bootstrap replicates at the main fraction (default: the library's).
    #[arg(long)]
    pub bootstrap: Option<usize>,
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
}

pub fn run(a: ValidateArgs) -> anyhow::Result<()> {
    if a.list {
        for e in CORPUS {
            let held = if e.held_out { " (held out)" } else { "" };
            println!("{}{held}: {}", e.name, e.description);
        }
        return Ok(());
    }
    // The report and the runs JSON are replaced together (the JSON first).
    let mut outputs = tailrank::atomic::Transaction::new(&[]);
    let json_slot = match &a.json {
        Some(j) => Some(outputs.add_file(j)?),
        None => None,
    };
    let report_slot = outputs.add_file(&a.out)?;
    let d = ValidationOptions::default();
    let opts = ValidationOptions {
        presets: a.presets.clone().unwrap_or(d.presets),
        seeds: a.seeds.unwrap_or(d.seeds),
        first_seed: a.first_seed,
        fraction: a.fraction.unwrap_or(d.fraction),
        fractions: a.fractions.clone().unwrap_or(d.fractions),
        pool_size: a.pool_size,
        queries: a.queries,
        bootstrap: a.bootstrap.unwrap_or(d.bootstrap),
        ..d
    };
    let quiet = a.quiet;
    let report = run_validation(&opts, |r| {
        if !quiet {
            eprintln!(
                "{} seed {} f={}: truth {:.2}%  evt {:+.2}  count {:+.2}  evaluate-at-S {:+.2}  \
                 hit@1 {:+.2}  recall {:+.2}{}",
                r.preset,
                r.seed,
                r.fraction,
                100.0 * r.truth,
                100.0 * (r.evt - r.truth),
                100.0 * (r.count - r.truth),
                100.0 * (r.evaluate_at_s - r.truth),
                100.0 * (r.hit_at_1 - r.truth_hit_at_1),
                100.0 * (r.recall_at_k - r.truth_recall_at_k),
                match (r.realized, r.verdict) {
                    (Some(i), Some(v)) => format!(
                        "  realized [{:+.2}, {:+.2}]  {}",
                        100.0 * (i.lo - r.truth),
                        100.0 * (i.hi - r.truth),
                        v.as_str()
                    ),
                    _ => String::new(),
                }
            );
        }
    })?;
    print!("{}", report.table());
    let command: Vec<String> = std::env::args().collect();
    let md = report.markdown(&command.join(" "));
    if let Some(slot) = json_slot {
        let bytes = serde_json::to_vec_pretty(&report)?;
        outputs.write(slot, |p| tailrank::atomic::write_bytes(p, &bytes))?;
    }
    outputs.write(report_slot, |p| {
        tailrank::atomic::write_bytes(p, md.as_bytes())
    })?;
    outputs.commit()?;
    println!("report: {}", a.out.display());
    if let Some(j) = &a.json {
        println!("runs:   {}", j.display());
    }
    Ok(())
}
