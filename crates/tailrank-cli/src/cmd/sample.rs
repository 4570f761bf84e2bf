//! `tailrank sample`: hash-sample pool ids (docs/method.md §4) and write the sample with a
//! manifest; the rule, the output and the manifest's fields are `tailrank::sample::write_sample`'s.

use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::scan::SampleJob;

#[derive(Args, Debug)]
pub struct SampleArgs {
    /// Pool id list (text, one id per line; `.gz` accepted).
    #[arg(long)]
    pub ids: PathBuf,
    /// Sampling fraction f in (0, 1].
    #[arg(allow_negative_numbers = true, long)]
    pub fraction: f64,
    /// List only the increment over the sample at this fraction: the ids with
    /// t(AFTER) <= hash < t(f) (to embed and `scan --after` for `tailrank grow`).
    #[arg(allow_negative_numbers = true, long)]
    pub after: Option<f64>,
    /// Hash seed.
    #[arg(long, default_value_t = tailrank::sample::DEFAULT_SEED)]
    pub seed: u64,
    /// Output id list (the manifest goes to `<OUT>.manifest.json`).
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
}

pub fn run(a: SampleArgs) -> anyhow::Result<()> {
    let job = SampleJob {
        ids: &a.ids,
        fraction: a.fraction,
        after: a.after,
        seed: a.seed,
        out: &a.out,
    };
    Ok(job.run(&mut super::Terminal)?)
}
