//! `tailrank simulate`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct SimulateArgs {}

pub fn run(_args: SimulateArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank simulate` is not implemented yet")
}
