//! `tailrank grow BASE PART -o OUT`: grow the summary of a hash sample by the summary of its
//! increment (`scan --fraction f --after f_b`) into the summary of the sample at f, equal to a
//! direct scan at f (`tailrank::summary::Summary::grow`, docs/reference/summary-format.md).

use clap::Args;
use std::path::PathBuf;
use tailrank::report::written::grow_written;
use tailrank::summary::Summary;

#[derive(Args, Debug)]
pub struct GrowArgs {
    /// Summary of the sample at fraction f_b (a scan with --fraction f_b).
    pub base: PathBuf,
    /// Summary of the increment (a scan with --fraction f --after f_b).
    pub part: PathBuf,
    /// Output summary folder: the sample at f (replaced atomically if it exists).
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn run(args: GrowArgs) -> anyhow::Result<()> {
    let mut outputs = tailrank::atomic::Transaction::new(&[&args.base, &args.part]);
    let slot = outputs.add_dir(&args.output)?;
    let grown = Summary::grow_folders(&args.base, &args.part, |w| super::warn_all([w]))?;
    if let Some(w) = grown.ties_unknown_warning() {
        eprintln!("tailrank grow: warning: {w}");
    }
    outputs.write(slot, |p| grown.write(p))?;
    outputs.commit()?;
    eprintln!("tailrank grow: {}", grow_written(&args.output, &grown));
    Ok(())
}
