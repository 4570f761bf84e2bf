//! `tailrank scan`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct ScanArgs {}

pub fn run(_args: ScanArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank scan` is not implemented yet")
}
