//! `tailrank merge A B ... -o OUT`: merge scan summaries of disjoint pool shards (exact: counts
//! and subset sizes add, top-M lists merge; see `docs/reference/summary-format.md`).

use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::scan::MergeJob;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Summary folders of disjoint pool shards (same queries, core, model, f, seed, M).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Output summary folder (replaced atomically if it exists).
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn run(args: MergeArgs) -> anyhow::Result<()> {
    let job = MergeJob {
        inputs: &args.inputs,
        output: &args.output,
    };
    Ok(job.run(&mut super::Terminal)?)
}
