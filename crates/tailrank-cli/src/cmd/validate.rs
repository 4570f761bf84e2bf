//! `tailrank validate`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct ValidateArgs {}

pub fn run(_args: ValidateArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank validate` is not implemented yet")
}
