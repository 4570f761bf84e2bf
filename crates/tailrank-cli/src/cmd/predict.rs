//! `tailrank predict`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct PredictArgs {}

pub fn run(_args: PredictArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank predict` is not implemented yet")
}
