//! `tailrank eval`: exact metrics of a results JSON against a ground truth (or from the counts of
//! a whole-pool scan summary). Prints mAP in percent per query set (ILIAS style); `--json` prints
//! the full per-query report (fractions in [0, 1]). See `docs/metrics.md`.

use anyhow::{bail, Context};
use clap::Args;
use std::path::PathBuf;
use tailrank::formats::gt::load_ground_truth;
use tailrank::formats::results::read_results;
use tailrank::metric::{
    evaluate_results, evaluate_summary_for_set, EvalReport, Metric, MissingPolicy,
};

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Results to evaluate: ILIAS JSON {query_id: {db_id: score}}.
    #[arg(long, value_name = "R.json", conflicts_with = "summary")]
    pub results: Option<PathBuf>,
    /// Ground truth: a folder in ILIAS layout (image_query_ids.txt, text_query_ids.txt,
    /// positive_ids.txt, here or in image_ids/) or a JSON {query_id: [positive ids]}.
    #[arg(long, value_name = "GT")]
    pub gt: Option<PathBuf>,
    /// Cut k of mAP@k and Recall@k.
    #[arg(long, default_value_t = 1000)]
    pub k: usize,
    /// Metrics of the table: map, gldv2-map100, ap, recall, hit1 (repeat or comma-separate).
    #[arg(long = "metric", value_delimiter = ',', value_parser = parse_metric, default_value = "map")]
    pub metrics: Vec<Metric>,
    /// Evaluate only these query sets of the ground truth (`image`, `text`, `queries`; repeat or
    /// comma-separate). Default: every set that has results (a set with none is skipped with a
    /// warning).
    #[arg(long = "set", value_delimiter = ',', value_name = "NAME")]
    pub sets: Vec<String>,
    /// Count a query of the ground truth that has no results as 0 (reported as missing) instead
    /// of refusing.
    #[arg(long)]
    pub missing_as_zero: bool,
    /// Print the full machine-readable report (per query, fractions in [0, 1]) as JSON.
    #[arg(long)]
    pub json: bool,
    /// Evaluate from the per-positive counts of a whole-pool scan summary instead of a results
    /// file (`--gt` then optional: checks the summary's queries and positives against it).
    #[arg(long, value_name = "S")]
    pub summary: Option<PathBuf>,
}

fn parse_metric(s: &str) -> Result<Metric, String> {
    Metric::parse(s).map_err(|e| e.to_string())
}

pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    let missing = if args.missing_as_zero {
        MissingPolicy::Zero
    } else {
        MissingPolicy::Error
    };
    let report = build_report(&args, missing)?;
    for w in &report.warnings {
        eprintln!("tailrank: warning: {w}");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.table(&args.metrics));
    }
    Ok(())
}

fn build_report(args: &EvalArgs, missing: MissingPolicy) -> anyhow::Result<EvalReport> {
    if args.k == 0 {
        bail!("--k: k must be at least 1");
    }
    match (&args.results, &args.summary) {
        (Some(r), None) => {
            let Some(gt) = &args.gt else {
                bail!("--results needs --gt (the ground truth)");
            };
            let sets = select_sets(load_ground_truth(gt)?, &args.sets)?;
            let results = read_results(r)?;
            Ok(evaluate_results(&sets, &results, args.k, missing)?)
        }
        (None, Some(s)) => {
            let summary = super::read_summary(s)?;
            let sets = match &args.gt {
                Some(gt) => select_sets(load_ground_truth(gt)?, &args.sets)?,
                None => Vec::new(),
            };
            let set = if sets.is_empty() {
                None
            } else if sets.len() == 1 {
                Some(&sets[0])
            } else if let Some(set) = sets.iter().find(|q| q.name == summary.query_set) {
                Some(set)
            } else {
                let names: Vec<&str> = sets.iter().map(|q| q.name.as_str()).collect();
                bail!(
                    "summary {} is for query set {:?}, which the ground truth lacks (it has {:?})",
                    s.display(),
                    summary.query_set,
                    names
                );
            };
            evaluate_summary_for_set(&summary, set, args.k, missing)
                .with_context(|| format!("evaluating summary {}", s.display()))
        }
        (None, None) => bail!("give --results R.json --gt GT, or --summary S"),
        (Some(_), Some(_)) => bail!("--results and --summary exclude each other"),
    }
}

/// Keep the sets named in `names` (all when empty); an unknown name is an error.
fn select_sets(
    sets: Vec<tailrank::formats::gt::QuerySet>,
    names: &[String],
) -> anyhow::Result<Vec<tailrank::formats::gt::QuerySet>> {
    if names.is_empty() {
        return Ok(sets);
    }
    let have: Vec<String> = sets.iter().map(|s| s.name.clone()).collect();
    for n in names {
        if !have.contains(n) {
            bail!("--set {n:?}: the ground truth has no such query set (it has {have:?})");
        }
    }
    Ok(sets
        .into_iter()
        .filter(|s| names.contains(&s.name))
        .collect())
}
