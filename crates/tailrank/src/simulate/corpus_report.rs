//! The corpus overview of a validation report (docs/validation.md, "The validation corpus"):
//! one row per family and sample fraction with the mAP@k errors of every point method, the
//! hit@1 and Recall@k errors, the oracle map errors and the share of wrongly immune positives.
//! The held-out family ([`super::corpus`]) is reported in its own table.
//!
//! error = prediction − realized truth; `mean`, `mean |·|` and `max |·|` over the seeds.

use super::corpus;
use super::validation::{Run, ValidationReport};
use serde::{Deserialize, Serialize};

/// Mean, mean absolute and max absolute value of a list of errors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    pub mean: f64,
    pub mean_abs: f64,
    pub max_abs: f64,
}

impl ErrorSummary {
    /// Summary of `errs` (NaN everywhere when empty).
    pub fn of(errs: &[f64]) -> ErrorSummary {
        let n = errs.len() as f64;
        if errs.is_empty() {
            return ErrorSummary {
                mean: f64::NAN,
                mean_abs: f64::NAN,
                max_abs: f64::NAN,
            };
        }
        ErrorSummary {
            mean: errs.iter().sum::<f64>() / n,
            mean_abs: errs.iter().map(|e| e.abs()).sum::<f64>() / n,
            max_abs: errs.iter().fold(0.0f64, |m, e| m.max(e.abs())),
        }
    }

    /// `mean / mean|·| / max|·|` in points (percent), two decimals.
    pub fn points(&self) -> String {
        format!(
            "{:+.2} / {:.2} / {:.2}",
            100.0 * self.mean,
            100.0 * self.mean_abs,
            100.0 * self.max_abs
        )
    }
}

/// One family at one fraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverviewRow {
    pub family: String,
    pub held_out: bool,
    pub fraction: f64,
    pub runs: usize,
    /// Mean realized mAP@k at N.
    pub truth: f64,
    pub evt: ErrorSummary,
    pub evt_binomial: ErrorSummary,
    pub count: ErrorSummary,
    pub evaluate_at_s: ErrorSummary,
    pub hit_at_1: ErrorSummary,
    pub recall_at_k: ErrorSummary,
    /// Mean error of the expected-rank and binomial maps fed the true hardness.
    pub oracle_expected_rank: f64,
    pub oracle_binomial: f64,
    /// Positives called immune that the full pool outranks, out of those called immune.
    pub immune_outranked: f64,
}

fn row(family: &str, fraction: f64, runs: &[&Run]) -> OverviewRow {
    let errs =
        |f: &dyn Fn(&Run) -> f64| ErrorSummary::of(&runs.iter().map(|r| f(r)).collect::<Vec<_>>());
    let mean = |f: &dyn Fn(&Run) -> Option<f64>| {
        let v: Vec<f64> = runs.iter().filter_map(|r| f(r)).collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let (imm, out) = runs
        .iter()
        .filter_map(|r| r.decomposition.as_ref())
        .fold((0usize, 0usize), |(a, b), d| {
            (a + d.immune, b + d.immune_outranked)
        });
    OverviewRow {
        family: family.to_string(),
        held_out: corpus::entry(family).is_ok_and(|e| e.held_out),
        fraction,
        runs: runs.len(),
        truth: mean(&|r| Some(r.truth)),
        evt: errs(&|r| r.evt - r.truth),
        evt_binomial: errs(&|r| r.evt_binomial - r.truth),
        count: errs(&|r| r.count - r.truth),
        evaluate_at_s: errs(&|r| r.evaluate_at_s - r.truth),
        hit_at_1: errs(&|r| r.hit_at_1 - r.truth_hit_at_1),
        recall_at_k: errs(&|r| r.recall_at_k - r.truth_recall_at_k),
        oracle_expected_rank: mean(&|r| r.decomposition.as_ref().map(|d| d.oracle_expected_rank)),
        oracle_binomial: mean(&|r| r.decomposition.as_ref().map(|d| d.oracle_binomial)),
        immune_outranked: out as f64 / imm.max(1) as f64,
    }
}

/// Rows for every family of the report and every fraction it ran (largest fraction first).
pub fn overview(report: &ValidationReport) -> Vec<OverviewRow> {
    let o = &report.options;
    let mut fractions = o.fractions.clone();
    fractions.push(o.fraction);
    fractions.sort_by(|a, b| b.total_cmp(a));
    fractions.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * a.abs().max(b.abs()));
    let mut rows = Vec::new();
    for family in &o.presets {
        for &f in &fractions {
            let runs = report.runs_at(family, f);
            if !runs.is_empty() {
                rows.push(row(family, f, &runs));
            }
        }
    }
    rows
}
