//! `tailrank merge A B ... -o OUT`: merge scan summaries of disjoint pool shards (exact: counts
//! and subset sizes add, top-M lists merge; see `docs/reference/summary-format.md`).

use clap::Args;
use std::path::PathBuf;
use tailrank::report::written::merge_written;
use tailrank::summary::Summary;

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
    let inputs: Vec<&std::path::Path> = args.inputs.iter().map(|p| p.as_path()).collect();
    let mut outputs = tailrank::atomic::Transaction::new(&inputs);
    let slot = outputs.add_dir(&args.output)?;
    let merged = Summary::merge_folders(&args.inputs, |w| super::warn_all([w]))?;
    outputs.write(slot, |p| merged.write(p))?;
    outputs.commit()?;
    let line = merge_written(args.inputs.len(), &args.output, &merged);
    eprintln!("tailrank merge: {line}");
    Ok(())
}
