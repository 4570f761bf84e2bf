//! `tailrank grow BASE PART -o OUT`: grow the summary of a hash sample by the summary of its
//! increment (`scan --fraction f --after f_b`) into the summary of the sample at f, equal to a
//! direct scan at f (`tailrank::summary::Summary::grow`, docs/reference/summary-format.md).

use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::scan::GrowJob;

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
    let job = GrowJob {
        base: &args.base,
        part: &args.part,
        output: &args.output,
    };
    Ok(job.run(&mut super::Terminal)?)
}
