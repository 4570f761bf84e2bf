//! `tailrank compare A B`: the predicted difference at N between two models' summaries over
//! the same queries and pool sample, with a paired interval and a verdict on whether the
//! margin exceeds the extrapolation error (`tailrank::predict::compare`).

use super::predict::EstimateArgs;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use tailrank::predict::compare::compare;
use tailrank::report::compare::table;
use tailrank::report::headline::compare_headline;
use tailrank::report::html_pages::{compare_page, write_html};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Summary of model A.
    pub a: PathBuf,
    /// Summary of model B (same queries, same pool sample).
    pub b: PathBuf,
    /// Pool size N to compare at (default: the N recorded in the summaries).
    #[arg(long)]
    pub pool_size: Option<u64>,
    #[command(flatten)]
    pub est: EstimateArgs,
    /// Print the comparison as JSON (fractions) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print the full table (with the margin from each level) instead of the headline.
    #[arg(long, conflicts_with = "json")]
    pub details: bool,
    /// Also write the comparison as one self-contained HTML page here: the difference with
    /// its paired interval and verdict, and each model's prediction page.
    #[arg(long)]
    pub html: Option<PathBuf>,
}

pub fn run(a: CompareArgs) -> anyhow::Result<()> {
    let centre = tailrank::predict::PredictOptions::DEFAULT.excess_centre;
    let request = a.est.request(a.pool_size, 0, centre);
    let opts = a.est.options(&request)?;
    let mut outputs = tailrank::atomic::Transaction::new(&[a.a.as_path(), a.b.as_path()]);
    let html_slot = a.html.as_deref().map(|p| outputs.add_file(p)).transpose()?;
    let sa = super::read_summary_for_metrics(&a.a)?;
    let sb = super::read_summary_for_metrics(&a.b)?;
    request.check_fit_top(&sa, Some(&a.a))?;
    request.check_fit_top(&sb, Some(&a.b))?;
    let c = compare(&sa, &sb, &opts)
        .with_context(|| format!("comparing {} with {}", a.a.display(), a.b.display()))?;
    if let Some(slot) = html_slot {
        let page = compare_page(&c, (&sa, &a.a), (&sb, &a.b), &opts)?;
        outputs.write(slot, |path| write_html(&page, path))?;
        outputs.commit()?;
    }
    if a.details {
        return super::print_report(false, &c, table);
    }
    super::print_report(a.json, &c, compare_headline)
}
