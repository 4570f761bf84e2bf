//! `tailrank curve`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct CurveArgs {}

pub fn run(_args: CurveArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank curve` is not implemented yet")
}
