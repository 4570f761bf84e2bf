//! The corpus overview of a validation report (docs/validation.md, "The validation corpus"):
//! one row per family and sample fraction with the mAP@k errors of every point method, the
//! hit@1 and Recall@k errors, the oracle map errors and the share of wrongly immune positives.
//! The held-out family ([`super::corpus`]) is reported in its own table.
//!
//! error = prediction − realized truth; `mean`, `mean |·|` and `max |·|` over the seeds.

use super::corpus;
use super::validation::{Run, ValidationReport};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

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
    fn points(&self) -> String {
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

/// The overview as markdown: mAP@k errors, then hit@1 / Recall@k / oracles, for the tuned
/// families and then for the held-out one.
pub fn markdown(report: &ValidationReport) -> String {
    let rows = overview(report);
    let mut m = String::new();
    let k = report.runs.first().map_or(0, |r| r.k);
    let _ = writeln!(m, "## Corpus overview\n");
    let _ = writeln!(
        m,
        "Errors in mAP points (percent), as mean / mean |err| / max |err| over seeds. \
         `oracle ER` and `oracle Bin`: the expected-rank and binomial maps fed the true \
         hardness. `immune outranked`: positives called immune that the full pool outranks.\n"
    );
    for (title, held) in [("Tuned families", false), ("Held-out family", true)] {
        let part: Vec<&OverviewRow> = rows.iter().filter(|r| r.held_out == held).collect();
        if part.is_empty() {
            continue;
        }
        let _ = writeln!(m, "### {title}\n");
        let _ = writeln!(
            m,
            "| family | f | seeds | true mAP@{k} | evt | evt-binomial | count | evaluate-at-S |"
        );
        let _ = writeln!(m, "|---|---:|---:|---:|---|---|---|---|");
        for r in &part {
            let _ = writeln!(
                m,
                "| {} | {} | {} | {:.2} | {} | {} | {} | {} |",
                r.family,
                r.fraction,
                r.runs,
                100.0 * r.truth,
                r.evt.points(),
                r.evt_binomial.points(),
                r.count.points(),
                r.evaluate_at_s.points()
            );
        }
        let _ = writeln!(
            m,
            "\n| family | f | hit@1 | Recall@{k} | oracle ER | oracle Bin | immune outranked |"
        );
        let _ = writeln!(m, "|---|---:|---|---|---:|---:|---:|");
        for r in &part {
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} | {:+.2} | {:+.2} | {:.1}% |",
                r.family,
                r.fraction,
                r.hit_at_1.points(),
                r.recall_at_k.points(),
                100.0 * r.oracle_expected_rank,
                100.0 * r.oracle_binomial,
                100.0 * r.immune_outranked
            );
        }
        let _ = writeln!(m);
    }
    m
}

/// The overview as a plain-text table (mean error / mean |error| in points).
pub fn table(report: &ValidationReport) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "corpus overview (mean err / mean |err|, mAP points; * = held out):"
    );
    let _ = writeln!(
        t,
        "  {:<21} {:>6} {:>7} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13}",
        "family", "f", "truth", "evt", "evt-binomial", "count", "eval-at-S", "hit@1", "Recall@k"
    );
    let cell = |e: &ErrorSummary| format!("{:+.2}/{:.2}", 100.0 * e.mean, 100.0 * e.mean_abs);
    for r in overview(report) {
        let name = if r.held_out {
            format!("{}*", r.family)
        } else {
            r.family.clone()
        };
        let _ = writeln!(
            t,
            "  {:<21} {:>6} {:>7.2} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13}",
            name,
            r.fraction,
            100.0 * r.truth,
            cell(&r.evt),
            cell(&r.evt_binomial),
            cell(&r.count),
            cell(&r.evaluate_at_s),
            cell(&r.hit_at_1),
            cell(&r.recall_at_k)
        );
    }
    t
}
