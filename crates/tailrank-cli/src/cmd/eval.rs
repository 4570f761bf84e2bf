//! `tailrank eval`: exact metrics of a results JSON against a ground truth (or from the counts of
//! a whole-pool scan summary). Prints mAP in percent per query set (ILIAS style); `--json` prints
//! the full per-query report (fractions in [0, 1]). See `docs/reference/metrics.md`.

use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::eval::EvalJob;
use tailrank::metric::{EvalRequest, MetricName, MissingPolicy};
use tailrank::protocols::Protocol;

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
    let request = EvalRequest {
        results: args.results,
        gt: args.gt,
        summary: args.summary,
        k: args.k,
        metrics: args.metrics,
        sets: args.sets,
        missing: MissingPolicy::zero_if(args.missing_as_zero),
        protocols: args.protocols,
    };
    let job = EvalJob {
        request,
        json: args.json,
    };
    Ok(job.run(&mut super::Terminal)?)
}
