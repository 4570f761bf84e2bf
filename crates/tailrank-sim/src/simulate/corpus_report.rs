//! The corpus overview of a validation report (docs/reference/validation.md, "The validation corpus"):
//! one row per family and sample fraction with the mAP@k errors of every point method, the
//! hit@1 and Recall@k errors, the oracle map errors and the share of wrongly immune positives.
//! The held-out family ([`super::corpus`]) is reported in its own table. The exam rows
//! ([`exam`]) add, at the main fraction, the two second opinions, the two intervals and the
//! trust verdict, with their totals over the tuned families ([`ExamTotals`]).
//!
//! error = prediction − realized truth; `mean`, `mean |·|` and `max |·|` over the seeds.

use super::corpus;
use super::validation::{
    coverage_width, doubted, share_text, verdict_rates, Coverage, Run, ValidationReport, FLAG_MUST,
    FLAG_NOT,
};
use crate::predict::Verdict;
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
            "{} / {} / {}",
            signed_points(self.mean),
            points(self.mean_abs),
            points(self.max_abs)
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

/// One family's exam at the main fraction (the runs that carry intervals and a verdict).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExamRow {
    pub family: String,
    pub held_out: bool,
    pub runs: usize,
    pub evt: ErrorSummary,
    /// The second opinions: the evt fit that is not the estimate's (`Run::other_fit`) and the
    /// level-calibrated law (`predict::calibrated`); over the runs that have one.
    pub other_fit: ErrorSummary,
    pub level_calibrated: ErrorSummary,
    /// Coverage of the realized truth and mean width of the realized interval (these queries)
    /// and of the query-bootstrap percentile interval (other query sets).
    pub realized: Option<(Coverage, f64)>,
    pub query_bootstrap: Option<(Coverage, f64)>,
    /// Runs the verdict calls doubtful, of the runs with a verdict.
    pub doubtful: Coverage,
    /// Doubtful among runs with |evt error| > `FLAG_MUST`, and among runs under `FLAG_NOT`.
    pub hit: Coverage,
    pub false_alarm: Coverage,
}

/// The exam's totals over the tuned families: verdict hits and false alarms, realized interval
/// coverage (the sums of the rows' counts).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ExamTotals {
    /// Tuned families pooled.
    pub families: usize,
    pub hit: Coverage,
    pub false_alarm: Coverage,
    pub realized: Coverage,
}

/// Exam rows for every family of the report at its main fraction.
pub fn exam(report: &ValidationReport) -> Vec<ExamRow> {
    let f = report.options.fraction;
    report
        .options
        .presets
        .iter()
        .filter_map(|family| {
            let runs = report.runs_at(family, f);
            (!runs.is_empty()).then(|| exam_row(family, &runs))
        })
        .collect()
}

fn exam_row(family: &str, runs: &[&Run]) -> ExamRow {
    let opinion = |pick: fn(&Run) -> Option<f64>| {
        ErrorSummary::of(
            &runs
                .iter()
                .filter_map(|r| pick(r).map(|m| m - r.truth))
                .collect::<Vec<_>>(),
        )
    };
    let doubtful = runs
        .iter()
        .filter_map(|r| r.verdict)
        .fold((0, 0), |(d, n), v| {
            (d + usize::from(v == Verdict::Doubtful), n + 1)
        });
    let (hit, false_alarm) = verdict_rates(runs, doubted);
    ExamRow {
        family: family.to_string(),
        held_out: corpus::entry(family).is_ok_and(|e| e.held_out),
        runs: runs.len(),
        evt: ErrorSummary::of(&runs.iter().map(|r| r.evt - r.truth).collect::<Vec<_>>()),
        other_fit: opinion(|r| r.other_fit),
        level_calibrated: opinion(|r| r.level_calibrated.as_ref().map(|m| m.map_at_k)),
        realized: coverage_width(runs, |r| r.realized),
        query_bootstrap: coverage_width(runs, |r| r.percentile),
        doubtful,
        hit,
        false_alarm,
    }
}

/// Sums of the tuned families' rows (the held-out family is reported, never pooled).
pub fn exam_totals(rows: &[ExamRow]) -> ExamTotals {
    let add = |a: Coverage, b: Coverage| (a.0 + b.0, a.1 + b.1);
    rows.iter().filter(|r| !r.held_out).fold(
        ExamTotals {
            families: 0,
            hit: (0, 0),
            false_alarm: (0, 0),
            realized: (0, 0),
        },
        |t, r| ExamTotals {
            families: t.families + 1,
            hit: add(t.hit, r.hit),
            false_alarm: add(t.false_alarm, r.false_alarm),
            realized: add(t.realized, r.realized.map_or((0, 0), |c| c.0)),
        },
    )
}

/// A fraction in points (percent), two decimals: `12.34`.
pub fn points(v: f64) -> String {
    format!("{:.2}", 100.0 * v)
}

/// A fraction in points with its sign, two decimals: `+1.23`, `-0.40`.
pub fn signed_points(v: f64) -> String {
    format!("{:+.2}", 100.0 * v)
}

/// `1 point`, `0.5 points`: an error threshold (a fraction of mAP) in mAP points.
pub fn points_text(v: f64) -> String {
    let p = 100.0 * v;
    if (p - 1.0).abs() < 1e-9 {
        "1 point".into()
    } else {
        format!("{p} points")
    }
}

/// The totals as one sentence (the verdict's thresholds are `FLAG_MUST` and `FLAG_NOT`).
pub fn exam_totals_text(t: &ExamTotals) -> String {
    if t.families == 0 {
        return "no tuned family in this study: nothing to total".into();
    }
    format!(
        "tuned families: the verdict flags {} of the runs off by more than {} and {} of the \
         runs under {}; the realized interval covers {} of the runs that have one",
        share_text(t.hit),
        points_text(FLAG_MUST),
        share_text(t.false_alarm),
        points_text(FLAG_NOT),
        share_text(t.realized)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(family: &str, held_out: bool, hit: Coverage, fa: Coverage, cov: Coverage) -> ExamRow {
        let e = ErrorSummary::of(&[]);
        ExamRow {
            family: family.into(),
            held_out,
            runs: cov.1,
            evt: e,
            other_fit: e,
            level_calibrated: e,
            realized: Some((cov, 0.03)),
            query_bootstrap: None,
            doubtful: (hit.0 + fa.0, cov.1),
            hit,
            false_alarm: fa,
        }
    }

    #[test]
    fn exam_totals_pool_the_tuned_families_only() {
        let rows = [
            row("a", false, (9, 10), (0, 0), (10, 10)),
            row("b", false, (1, 2), (1, 4), (5, 6)),
            row("hubs", true, (10, 10), (0, 0), (0, 10)),
        ];
        let t = exam_totals(&rows);
        assert_eq!(t.hit, (10, 12));
        assert_eq!(t.false_alarm, (1, 4));
        assert_eq!(t.realized, (15, 16));
        let text = exam_totals_text(&t);
        assert!(text.contains("flags 10/12 (83%)"), "{text}");
        assert!(text.contains("and 1/4 (25%)"), "{text}");
        assert!(text.contains("covers 15/16 (94%)"), "{text}");
        assert_eq!(t.families, 2);
        let only_held_out = exam_totals_text(&exam_totals(&rows[2..]));
        assert!(
            only_held_out.starts_with("no tuned family"),
            "{only_held_out}"
        );
        let none = ExamTotals {
            families: 1,
            ..exam_totals(&rows[2..])
        };
        assert!(exam_totals_text(&none).contains("flags 0/0 of"));
        assert_eq!(points_text(0.01), "1 point");
        assert_eq!(points_text(0.005), "0.5 points");
    }
}
