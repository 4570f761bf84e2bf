//! `tailrank sample`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct SampleArgs {}

pub fn run(_args: SampleArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank sample` is not implemented yet")
}
