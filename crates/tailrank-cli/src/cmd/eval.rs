//! `tailrank eval`: exact metrics of a results JSON against a ground truth (or from the counts of
//! a whole-pool scan summary). Prints mAP in percent per query set (ILIAS style); `--json` prints
//! the full per-query report (fractions in [0, 1]). See `docs/reference/metrics.md`.

use anyhow::{bail, Context};
use clap::Args;
use std::path::PathBuf;
use tailrank::formats::gt::load_ground_truth;
use tailrank::formats::results::read_results;
use tailrank::metric::{
    evaluate_results_for, evaluate_summary_with, select_sets, set_for_summary, EvalOptions,
    EvalReport, MetricName, MissingPolicy,
};
use tailrank::protocols::{evaluate_revisited, read_revisited_gt, Protocol};

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Results to evaluate: ILIAS JSON {query_id: {db_id: score}}.
    #[arg(long, value_name = "R.json", conflicts_with = "summary")]
    pub results: Option<PathBuf>,
    /// Ground truth: a folder in ILIAS layout (image_query_ids.txt, text_query_ids.txt,
    /// positive_ids.txt, here or in image_ids/) or a JSON {query_id: [positive ids]}.
    #[arg(long, value_name = "GT")]
    pub gt: Option<PathBuf>,
    /// Cut k of mAP@k and Recall@k (default: the library's, 1000; not with --protocol, whose
    /// revisited mAP ranks everything).
    #[arg(long)]
    pub k: Option<usize>,
    /// Metrics of the table, `name@k` (map@100, recall@1000, hit@1, ap, gldv2-map@100; a name
    /// without @k uses --k; default map). Repeat or comma-separate; the JSON holds them under
    /// `values`.
    #[arg(long = "metric", value_delimiter = ',', value_parser = super::parse_value::<MetricName>)]
    pub metrics: Vec<MetricName>,
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
    /// Revisited Oxford/Paris protocols (easy, medium, hard; `plain` for INSTRE): `--gt` is a
    /// revisited ground truth JSON {query: {easy, hard, junk}} and the table gives revisited
    /// mAP (junk removed) per protocol. Repeat or comma-separate.
    #[arg(long = "protocol", value_delimiter = ',', value_parser = super::parse_value::<Protocol>, requires = "results")]
    pub protocols: Vec<Protocol>,
}

pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    let missing = MissingPolicy::zero_if(args.missing_as_zero);
    if !args.protocols.is_empty() {
        if args.k.is_some() || !args.metrics.is_empty() || !args.sets.is_empty() {
            bail!(
                "--k, --metric and --set do not apply to --protocol: the revisited protocols \
                 give mAP over the whole ranking, one row per protocol"
            );
        }
        return run_revisited(&args, missing);
    }
    let opts = EvalOptions {
        k: k_of(&args),
        missing,
        metrics: args.metrics.clone(),
    };
    let report = build_report(&args, &opts)?;
    super::warn_all(&report.warnings);
    super::print_report(args.json, &report, |r| r.table(&args.metrics))
}

/// `--protocol`: revisited mAP of `--results` against a revisited `--gt`.
fn run_revisited(args: &EvalArgs, missing: MissingPolicy) -> anyhow::Result<()> {
    let (Some(r), Some(gt)) = (&args.results, &args.gt) else {
        bail!("--protocol needs --results R.json and --gt (a revisited ground truth JSON)");
    };
    let report = evaluate_revisited(
        &read_results(r)?,
        &read_revisited_gt(gt)?,
        &args.protocols,
        missing,
    )?;
    super::warn_all(&report.warnings);
    super::print_report(args.json, &report, |r| r.table())
}

/// `--k`, or the library's default cut-off.
fn k_of(args: &EvalArgs) -> usize {
    args.k
        .unwrap_or(tailrank::predict::PredictOptions::DEFAULT.k)
}

/// The query sets of ground truth `gt`, warning about each header line skipped.
fn load_gt(gt: &std::path::Path) -> anyhow::Result<Vec<tailrank::formats::QuerySet>> {
    let sets = load_ground_truth(gt)?;
    super::warn_all(tailrank::formats::gt::ground_truth_notes(gt)?);
    Ok(sets)
}

fn build_report(args: &EvalArgs, opts: &EvalOptions) -> anyhow::Result<EvalReport> {
    if k_of(args) == 0 {
        bail!("--k: k must be at least 1");
    }
    match (&args.results, &args.summary) {
        (Some(r), None) => {
            let Some(gt) = &args.gt else {
                bail!("--results needs --gt (the ground truth)");
            };
            let sets = select_sets(load_gt(gt)?, &args.sets)?;
            let results = read_results(r)?;
            Ok(evaluate_results_for(&sets, &results, opts)?)
        }
        (None, Some(s)) => {
            let summary = super::read_summary(s)?;
            if !args.sets.is_empty() && !args.sets.contains(&summary.query_set) {
                return Err(tailrank::Error::mismatch_at(
                    s,
                    format!(
                        "the summary is for query set {:?}, not for --set {}",
                        summary.query_set,
                        args.sets.join(",")
                    ),
                )
                .into());
            }
            let sets = match &args.gt {
                Some(gt) => select_sets(load_gt(gt)?, &args.sets)?,
                None => Vec::new(),
            };
            let set = set_for_summary(&sets, &summary, s)?;
            evaluate_summary_with(&summary, set, opts)
                .with_context(|| format!("evaluating summary {}", s.display()))
        }
        (None, None) => bail!("give --results R.json --gt GT, or --summary S"),
        (Some(_), Some(_)) => bail!("--results and --summary exclude each other"),
    }
}
