//! `tailrank merge`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct MergeArgs {}

pub fn run(_args: MergeArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank merge` is not implemented yet")
}
