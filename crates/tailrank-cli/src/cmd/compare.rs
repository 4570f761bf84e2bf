//! `tailrank compare A B`: the predicted difference at N between two models' summaries over
//! the same queries and pool sample, with a paired interval and a verdict on whether the
//! margin exceeds the extrapolation error (`tailrank::predict::compare`).

use super::predict::EstimateArgs;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use tailrank::predict::compare::compare;
use tailrank::predict::{predict_with_plan, NextStepPlan};
use tailrank::report::compare::table;
use tailrank::report::headline::compare_headline;
use tailrank::report::html_pages::{compare_html, write_html};
use tailrank::report::prediction_json;

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
    let opts = a.est.options(a.pool_size, 0)?;
    let mut outputs = tailrank::atomic::Transaction::new(&[a.a.as_path(), a.b.as_path()]);
    let html_slot = a.html.as_deref().map(|p| outputs.add_file(p)).transpose()?;
    let sa = super::read_summary_for_metrics(&a.a)?;
    let sb = super::read_summary_for_metrics(&a.b)?;
    a.est.check_fit_top(&sa, &a.a)?;
    a.est.check_fit_top(&sb, &a.b)?;
    let c = compare(&sa, &sb, &opts)
        .with_context(|| format!("comparing {} with {}", a.a.display(), a.b.display()))?;
    if let Some(slot) = html_slot {
        // Each model's prediction as `predict` gives it with these options.
        let doc = |s, path: &std::path::Path| -> anyhow::Result<serde_json::Value> {
            let plan = NextStepPlan {
                target_width: None,
                summary_path: Some(path.display().to_string()),
            };
            Ok(prediction_json(&predict_with_plan(s, &opts, &plan)?))
        };
        let page = compare_html(
            &serde_json::to_value(&c)?,
            &doc(&sa, &a.a)?,
            &doc(&sb, &a.b)?,
        );
        outputs.write(slot, |path| write_html(&page, path))?;
        outputs.commit()?;
    }
    if a.details {
        return super::print_report(false, &c, table);
    }
    super::print_report(a.json, &c, compare_headline)
}
