//! `tailrank merge A B ... -o OUT`: merge scan summaries of disjoint pool shards (exact: counts
//! and subset sizes add, top-M lists merge; see `docs/summary-format.md`).

use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use tailrank::summary::Summary;
use tailrank::summary::POOL_ROLE;

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
    let parts = args
        .inputs
        .iter()
        .map(|p| super::read_summary(p).with_context(|| format!("reading summary {}", p.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (merged, warnings) = Summary::merge_with_warnings(&parts).with_context(|| {
        let names: Vec<String> = args
            .inputs
            .iter()
            .enumerate()
            .map(|(i, p)| format!("part {} = {}", i + 1, p.display()))
            .collect();
        format!("merging {}", names.join(", "))
    })?;
    super::warn_all(warnings);
    if let Some(w) = merged.ties_unknown_warning() {
        eprintln!("tailrank merge: warning: {w}");
    }
    outputs.write(slot, |p| merged.write(p))?;
    outputs.commit()?;
    eprintln!(
        "tailrank merge: {} summaries -> {}: {} queries, {} pool inputs, S_0 = {}{}",
        parts.len(),
        args.output.display(),
        merged.queries.len(),
        merged.inputs.iter().filter(|r| r.role == POOL_ROLE).count(),
        merged.subset_sizes[0],
        merged
            .pool_size
            .map(|n| format!(", N = {n}"))
            .unwrap_or_default()
    );
    Ok(())
}
