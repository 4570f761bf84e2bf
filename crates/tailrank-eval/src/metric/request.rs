//! What `tailrank eval` is asked for, checked and run once: a results file against a ground
//! truth, the counts of a whole-pool scan summary, or the revisited protocols
//! (`docs/reference/metrics.md`).

use super::report::{evaluate_results_for, evaluate_summary_with, select_sets, set_for_summary};
use super::{EvalOptions, EvalReport, MetricName, MissingPolicy};
use crate::error::{Error, Result};
use crate::formats::gt::{ground_truth_notes, load_ground_truth};
use crate::formats::results::read_results;
use crate::formats::QuerySet;
use crate::protocols::{evaluate_revisited, read_revisited_gt, Protocol, RevisitedReport};
use crate::summary::Summary;
use std::path::{Path, PathBuf};

/// The inputs and options of an evaluation as a front end receives them.
#[derive(Debug, Clone)]
pub struct EvalRequest {
    pub results: Option<PathBuf>,
    pub gt: Option<PathBuf>,
    pub summary: Option<PathBuf>,
    /// Cut k (None: [`DEFAULT_K`]).
    pub k: Option<usize>,
    pub metrics: Vec<MetricName>,
    /// Query sets to evaluate (empty: every set that has results).
    pub sets: Vec<String>,
    pub missing: MissingPolicy,
    /// Revisited protocols (non-empty: the revisited evaluation).
    pub protocols: Vec<Protocol>,
}

/// The report of an [`EvalRequest`].
#[derive(Debug, Clone)]
pub enum EvalOutcome {
    Sets(EvalReport),
    Revisited(RevisitedReport),
}

/// The default cut k of mAP@k (also that of a prediction, `PredictOptions::DEFAULT.k`).
pub const DEFAULT_K: usize = 1000;

impl EvalRequest {
    /// Evaluate, passing each warning (a skipped header line of the ground truth, a summary
    /// reader's note, the report's own) to `warn` as it arises.
    pub fn evaluate(&self, mut warn: impl FnMut(String)) -> Result<EvalOutcome> {
        if !self.protocols.is_empty() {
            if self.k.is_some() || !self.metrics.is_empty() || !self.sets.is_empty() {
                return Err(Error::option(
                    "--k, --metric and --set do not apply to --protocol: the revisited \
                     protocols give mAP over the whole ranking, one row per protocol",
                ));
            }
            let (Some(r), Some(gt)) = (&self.results, &self.gt) else {
                return Err(Error::option(
                    "--protocol needs --results R.json and --gt (a revisited ground truth JSON)",
                ));
            };
            let results = read_results(r)?;
            let gt = read_revisited_gt(gt)?;
            let report = evaluate_revisited(&results, &gt, &self.protocols, self.missing)?;
            report.warnings.iter().cloned().for_each(warn);
            return Ok(EvalOutcome::Revisited(report));
        }
        let report = self.evaluate_sets(&mut warn)?;
        report.warnings.iter().cloned().for_each(warn);
        Ok(EvalOutcome::Sets(report))
    }

    fn evaluate_sets(&self, warn: &mut impl FnMut(String)) -> Result<EvalReport> {
        let k = self.k.unwrap_or(DEFAULT_K);
        let opts = EvalOptions {
            k,
            missing: self.missing,
            metrics: self.metrics.clone(),
            chosen_sets: !self.sets.is_empty(),
        };
        if k == 0 {
            return Err(Error::option("--k: k must be at least 1"));
        }
        match (&self.results, &self.summary) {
            (Some(r), None) => {
                let Some(gt) = &self.gt else {
                    return Err(Error::option("--results needs --gt (the ground truth)"));
                };
                let sets = select_sets(load_gt(gt, warn)?, &self.sets)
                    .map_err(|e| Error::new(e.kind(), format!("{}: {e}", gt.display())))?;
                let results = read_results(r)?;
                evaluate_results_for(&sets, &results, &opts)
            }
            (None, Some(s)) => {
                let (summary, warnings) = Summary::read_with_warnings(s)?;
                warnings.into_iter().for_each(&mut *warn);
                if !self.sets.is_empty() && !self.sets.contains(&summary.query_set) {
                    return Err(Error::mismatch_at(
                        s,
                        format!(
                            "the summary is for query set {:?}, not for --set {}",
                            summary.query_set,
                            self.sets.join(",")
                        ),
                    ));
                }
                let sets = match &self.gt {
                    Some(gt) => select_sets(load_gt(gt, warn)?, &self.sets)?,
                    None => Vec::new(),
                };
                let set = set_for_summary(&sets, &summary, s)?;
                evaluate_summary_with(&summary, set, &opts).map_err(|e| {
                    Error::new(e.kind(), format!("evaluating summary {}: {e}", s.display()))
                })
            }
            (None, None) => Err(Error::option(
                "give --results R.json --gt GT, or --summary S",
            )),
            (Some(_), Some(_)) => Err(Error::option("--results and --summary exclude each other")),
        }
    }
}

/// The query sets of ground truth `gt`, passing each header line skipped to `warn`.
fn load_gt(gt: &Path, warn: &mut impl FnMut(String)) -> Result<Vec<QuerySet>> {
    let sets = load_ground_truth(gt)?;
    ground_truth_notes(gt)?.into_iter().for_each(warn);
    Ok(sets)
}
