//! `tailrank demo`. TODO: implement.

use clap::Args;

#[derive(Args, Debug)]
pub struct DemoArgs {}

pub fn run(_args: DemoArgs) -> anyhow::Result<()> {
    anyhow::bail!("`tailrank demo` is not implemented yet")
}
