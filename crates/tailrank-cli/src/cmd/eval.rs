//! `tailrank eval`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct EvalArgs {}

pub fn run(_args: EvalArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank eval` is not implemented yet")
}
