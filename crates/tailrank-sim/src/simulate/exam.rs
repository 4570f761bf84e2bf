//! The exam tables of docs/reference/validation.md ("The exam"): for each sample fraction one table, the
//! tuning families and the held-out ones side by side, each family's runs scored on what issue
//! #43 targets, with a pooled row per side.
//!
//! Per run: `e = m̂ − T` (mAP@k, points), the hit@1 and Recall@k errors, whether the realized
//! interval holds `T` and its width, and the verdict. Per family (and pooled over every run of
//! a side): mean |e|, mean e, hit@1 mean |error|, Recall@k max |error|, realized coverage
//! `covered/with an interval` and mean width, **misses** `trusted/(runs with |e| > FLAG_MUST)`
//! and **false alarms** `doubtful/(runs with |e| < FLAG_NOT)`, over the runs with a verdict
//! that is not `unchecked`. Below each table, the verdict's
//! tests judged one by one ([`super::exam_checks`]).
//!
//! The records come from the summary-level corpus ([`Run`], held out per
//! [`super::corpus::CorpusEntry::held_out`]) and from the vector-level runs ([`VectorRun`],
//! all held out: issue #43 keeps the vector families out of every tuning decision).

use super::corpus;
use super::exam_checks::{check_lines, checks_markdown, count_text, CheckLine, CheckedRun};
use super::validation::{run_validation, Coverage, Run, ValidationOptions, FLAG_MUST, FLAG_NOT};
use super::vector_validation::VectorRun;
use crate::error::{Error, Result};
use crate::predict::{Check, Interval, Trust, Verdict};
use crate::table::{Column, Table};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

pub use super::vector_validation::EXAM_FRACTIONS;

/// The corpus runs of the exam: the study of `opts` once per fraction of `fractions`, each
/// as the main fraction (no sweep), so that every run carries its interval and verdict.
pub fn run_exam(
    opts: &ValidationOptions,
    fractions: &[f64],
    mut progress: impl FnMut(&Run),
) -> Result<Vec<Run>> {
    if fractions.is_empty() {
        return Err(Error::option("the exam needs at least one fraction"));
    }
    super::validation::check_distinct(fractions, "--fractions")?;
    let mut runs = Vec::new();
    for &f in fractions {
        let o = ValidationOptions {
            fraction: f,
            fractions: Vec::new(),
            ..opts.clone()
        };
        runs.extend(run_validation(&o, &mut progress)?.runs);
    }
    Ok(runs)
}

/// The whole exam: the vector-level run files read first (a bad file fails before the study
/// runs), the corpus at every fraction of `fractions` (default [`EXAM_FRACTIONS`]), and the
/// tables of the corpus runs with the vector runs at those fractions as held-out rows:
/// `(markdown tables, corpus runs)`.
pub fn exam(
    opts: &ValidationOptions,
    fractions: Option<&[f64]>,
    vector_runs: &[impl AsRef<Path>],
    progress: impl FnMut(&Run),
) -> Result<(String, Vec<Run>)> {
    let fractions = fractions.unwrap_or(&EXAM_FRACTIONS);
    let mut vector: Vec<VectorRun> = Vec::new();
    for path in vector_runs.iter().map(AsRef::as_ref) {
        let file = read_vector_runs(path)?;
        if !file
            .iter()
            .any(|v| fractions.iter().any(|&f| same_fraction(f, v.fraction)))
        {
            return Err(Error::input(
                path,
                format!("holds no run at a fraction of the exam ({fractions:?})"),
            ));
        }
        if let Some(v) = file.iter().find(|v| vector.iter().any(|w| same_run(w, v))) {
            return Err(Error::input(
                path,
                format!(
                    "repeats the run of {} seed {} at f = {} given before: each run counts once",
                    v.family, v.seed, v.fraction
                ),
            ));
        }
        vector.extend(file);
    }
    let runs = run_exam(opts, fractions, progress)?;
    let mut records: Vec<ExamRecord> = runs.iter().map(ExamRecord::of_run).collect();
    records.extend(
        vector
            .iter()
            .filter(|v| fractions.iter().any(|&f| same_fraction(f, v.fraction)))
            .map(ExamRecord::of_vector_run),
    );
    Ok((exam_markdown(&exam_tables(&records)), runs))
}

/// The vector-level runs of a `tailrank simulate --vectors --validate --json` file: at least
/// one, each of a vector-level family, at a sample fraction in (0, 1], none repeated.
pub fn read_vector_runs(path: &Path) -> Result<Vec<VectorRun>> {
    let what = "a vector-run file (the --json of `tailrank simulate --vectors --validate`)";
    let bytes = crate::formats::read_input_file(path, what)?;
    let runs: Vec<VectorRun> = serde_json::from_slice(&bytes)
        .map_err(|e| Error::input(path, format!("not {what}: {e}")))?;
    if runs.is_empty() {
        return Err(Error::input(
            path,
            format!("holds no run: it is not {what}"),
        ));
    }
    let known = |name: &str| super::web_validation::vector_family_names().any(|n| n == name);
    for (i, v) in runs.iter().enumerate() {
        let bad = if !known(&v.family) {
            Some(format!(
                "family {:?} is not a vector-level family",
                v.family
            ))
        } else if crate::sample::check_fraction(v.fraction).is_err() {
            Some(format!("fraction {} is not in (0, 1]", v.fraction))
        } else if runs[..i].iter().any(|w| same_run(w, v)) {
            Some("repeats an earlier run (same family, seed, fraction, N, D and queries)".into())
        } else {
            None
        };
        if let Some(bad) = bad {
            return Err(Error::input(path, format!("run {i}: {bad}")));
        }
    }
    Ok(runs)
}

/// Whether two vector runs are one run given twice: same family, seed, fraction, pool size,
/// dimension and query count.
fn same_run(a: &VectorRun, b: &VectorRun) -> bool {
    (&a.family, a.seed, a.pool_size, a.dim, a.queries)
        == (&b.family, b.seed, b.pool_size, b.dim, b.queries)
        && same_fraction(a.fraction, b.fraction)
}

/// One run as the exam scores it (errors as fractions, not points).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExamRecord {
    pub family: String,
    pub held_out: bool,
    pub fraction: f64,
    pub truth: f64,
    pub map_error: f64,
    pub hit_error: f64,
    pub recall_error: f64,
    pub realized: Option<Interval>,
    pub verdict: Option<Verdict>,
    /// The verdict's tests that fired; None when they did not run or are not recorded.
    #[serde(default)]
    pub checks: Option<Vec<Check>>,
}

/// The tests of a run's verdict that fired, when they ran ([`Trust::tests_ran`]).
fn fired_checks(trust: Option<&Trust>) -> Option<Vec<Check>> {
    trust.filter(|t| t.tests_ran()).map(Trust::fired_checks)
}

impl ExamRecord {
    /// A summary-level corpus run (held out as its corpus entry says).
    pub fn of_run(r: &Run) -> ExamRecord {
        ExamRecord {
            family: r.preset.clone(),
            held_out: corpus::entry(&r.preset).is_ok_and(|e| e.held_out),
            fraction: r.fraction,
            truth: r.truth,
            map_error: r.evt - r.truth,
            hit_error: r.hit_at_1 - r.truth_hit_at_1,
            recall_error: r.recall_at_k - r.truth_recall_at_k,
            realized: r.realized,
            verdict: r.verdict,
            checks: fired_checks(r.trust.as_ref()),
        }
    }

    /// A vector-level run (always held out).
    pub fn of_vector_run(r: &VectorRun) -> ExamRecord {
        ExamRecord {
            family: r.family.clone(),
            held_out: true,
            fraction: r.fraction,
            truth: r.truth.map_at_k,
            map_error: r.evt_error.map_at_k,
            hit_error: r.evt_error.hit_at_1,
            recall_error: r.evt_error.recall_at_k,
            realized: r.realized,
            verdict: r.verdict,
            checks: fired_checks(r.trust.as_ref()),
        }
    }
}

/// One family's (or one side's pooled) exam line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExamLine {
    /// The family, or `tuning (pooled)` / `held out (pooled)`.
    pub name: String,
    pub held_out: bool,
    pub runs: usize,
    pub map_mean_abs: f64,
    pub map_mean: f64,
    pub hit_mean_abs: f64,
    pub recall_max_abs: f64,
    /// Realized interval: `(covered, with one)` and mean width (NaN without one).
    pub covered: Coverage,
    pub width: f64,
    /// Trusted among runs off by more than `FLAG_MUST`; doubtful among runs under `FLAG_NOT`
    /// (runs whose verdict is `unchecked` left out).
    pub misses: Coverage,
    pub false_alarms: Coverage,
}

/// The exam at one fraction: the family lines of each side, then the pooled line of each side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExamTable {
    pub fraction: f64,
    pub tuning: Vec<ExamLine>,
    pub held_out: Vec<ExamLine>,
    pub tuning_pooled: Option<ExamLine>,
    pub held_out_pooled: Option<ExamLine>,
    /// The verdict's tests, one line each ([`super::exam_checks`]).
    #[serde(default)]
    pub checks: Vec<CheckLine>,
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        s / n as f64
    }
}

/// The line of `records` (all of one family, or all of one side).
pub fn exam_line(name: &str, held_out: bool, records: &[&ExamRecord]) -> ExamLine {
    let with: Vec<(Interval, f64)> = records
        .iter()
        .filter_map(|r| r.realized.map(|i| (i, r.truth)))
        .filter(|(i, _)| i.lo.is_finite() && i.hi.is_finite())
        .collect();
    let covered = (
        with.iter()
            .filter(|(i, t)| i.lo <= *t && *t <= i.hi)
            .count(),
        with.len(),
    );
    let (mut misses, mut false_alarms) = ((0, 0), (0, 0));
    for r in records {
        let Some(v) = r.verdict.and_then(Verdict::checked) else {
            continue;
        };
        let e = r.map_error.abs();
        if e > FLAG_MUST {
            misses.1 += 1;
            misses.0 += usize::from(v == Verdict::Trusted);
        } else if e < FLAG_NOT {
            false_alarms.1 += 1;
            false_alarms.0 += usize::from(v == Verdict::Doubtful);
        }
    }
    ExamLine {
        name: name.to_string(),
        held_out,
        runs: records.len(),
        map_mean_abs: mean(records.iter().map(|r| r.map_error.abs())),
        map_mean: mean(records.iter().map(|r| r.map_error)),
        hit_mean_abs: mean(records.iter().map(|r| r.hit_error.abs())),
        recall_max_abs: records
            .iter()
            .fold(0.0f64, |m, r| m.max(r.recall_error.abs())),
        covered,
        width: mean(with.iter().map(|(i, _)| i.hi - i.lo)),
        misses,
        false_alarms,
    }
}

fn same_fraction(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// One table per fraction of `records` (largest first); families in their first appearance
/// order; pooled lines over every run of a side.
pub fn exam_tables(records: &[ExamRecord]) -> Vec<ExamTable> {
    let mut fractions: Vec<f64> = records.iter().map(|r| r.fraction).collect();
    fractions.sort_by(|a, b| b.total_cmp(a));
    fractions.dedup_by(|a, b| same_fraction(*a, *b));
    fractions
        .into_iter()
        .map(|f| {
            let at: Vec<&ExamRecord> = records
                .iter()
                .filter(|r| same_fraction(r.fraction, f))
                .collect();
            let side = |held: bool| -> (Vec<ExamLine>, Option<ExamLine>) {
                let part: Vec<&ExamRecord> =
                    at.iter().copied().filter(|r| r.held_out == held).collect();
                let mut names: Vec<&str> = Vec::new();
                for r in &part {
                    if !names.contains(&r.family.as_str()) {
                        names.push(&r.family);
                    }
                }
                let lines = names
                    .iter()
                    .map(|n| {
                        let of: Vec<&ExamRecord> =
                            part.iter().copied().filter(|r| r.family == *n).collect();
                        exam_line(n, held, &of)
                    })
                    .collect();
                let label = if held {
                    "held out (pooled)"
                } else {
                    "tuning (pooled)"
                };
                let pooled = (!part.is_empty()).then(|| exam_line(label, held, &part));
                (lines, pooled)
            };
            let (tuning, tuning_pooled) = side(false);
            let (held_out, held_out_pooled) = side(true);
            ExamTable {
                fraction: f,
                tuning,
                held_out,
                tuning_pooled,
                held_out_pooled,
                checks: check_lines(&checked(&at)),
            }
        })
        .collect()
}

/// The records whose verdict's tests ran and are recorded, as the tests' table reads them.
fn checked<'a>(records: &[&'a ExamRecord]) -> Vec<CheckedRun<'a>> {
    records
        .iter()
        .filter_map(|r| {
            let verdict = r.verdict.and_then(Verdict::checked)?;
            Some(CheckedRun {
                held_out: r.held_out,
                map_error: r.map_error,
                verdict,
                fired: r.checks.as_deref()?,
            })
        })
        .collect()
}

/// The tables as markdown (points of mAP@k): per fraction the tuning block, its pooled line,
/// the held-out block and its pooled line, one table.
pub fn exam_markdown(tables: &[ExamTable]) -> String {
    let mut m = String::new();
    let pt = |v: f64| {
        if v.is_finite() {
            format!("{:.2}", 100.0 * v)
        } else {
            "n/a".into()
        }
    };
    let signed = |v: f64| {
        if v.is_finite() {
            format!("{:+.2}", 100.0 * v)
        } else {
            "n/a".into()
        }
    };
    for t in tables {
        let _ = writeln!(m, "At f = {}:\n", t.fraction);
        let mut columns = vec![Column::left("side"), Column::left("family")];
        columns.extend(
            [
                "runs",
                "mAP mean |err|",
                "mAP mean err",
                "hit@1 mean |err|",
                "Recall@k max |err|",
                "realized covers",
                "realized width",
                "misses",
                "false alarms",
            ]
            .map(Column::right),
        );
        let mut table = Table::new(columns);
        let blocks = [
            ("tuning", &t.tuning, &t.tuning_pooled),
            ("held out", &t.held_out, &t.held_out_pooled),
        ];
        for (side, lines, pooled) in blocks {
            for l in lines.iter().chain(pooled.iter()) {
                let name = if l.name.ends_with("(pooled)") {
                    format!("**{}**", l.name)
                } else {
                    l.name.clone()
                };
                table.push(vec![
                    side.to_string(),
                    name,
                    l.runs.to_string(),
                    pt(l.map_mean_abs),
                    signed(l.map_mean),
                    pt(l.hit_mean_abs),
                    pt(l.recall_max_abs),
                    count_text(l.covered),
                    pt(l.width),
                    count_text(l.misses),
                    count_text(l.false_alarms),
                ]);
            }
        }
        let _ = writeln!(m, "{}", table.markdown());
        let checks = checks_markdown(&t.checks);
        if !checks.is_empty() {
            let _ = writeln!(
                m,
                "The verdict's tests at f = {} (runs off by more than {} point / under {}):\n\n{checks}",
                t.fraction,
                100.0 * FLAG_MUST,
                100.0 * FLAG_NOT
            );
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(family: &str, held: bool, f: f64, e: f64, iv: (f64, f64), v: Verdict) -> ExamRecord {
        ExamRecord {
            family: family.into(),
            held_out: held,
            fraction: f,
            truth: 0.40,
            map_error: e,
            hit_error: -2.0 * e,
            recall_error: e / 10.0,
            realized: Some(Interval { lo: iv.0, hi: iv.1 }),
            verdict: Some(v),
            checks: None,
        }
    }

    /// A verdict whose paired tests did not run (an input problem made it `doubtful`) has no
    /// tests to count; one whose tests ran lists those that fired, and its table leaves out
    /// the runs without tests.
    #[test]
    fn only_runs_whose_tests_ran_enter_the_tests_table() {
        let mut no_tests = Trust::without_tests(Verdict::Doubtful, "drift".into());
        assert_eq!(fired_checks(Some(&no_tests)), None);
        assert_eq!(fired_checks(None), None);
        no_tests.trend_projected = 0.03;
        no_tests.trend_std_error = 0.005;
        no_tests.level_rises = Some([0.01, 0.02]);
        assert!(no_tests.tests_ran());
        assert_eq!(
            fired_checks(Some(&no_tests)),
            Some(vec![Check::Trend, Check::Falling])
        );
        let mut far = rec("a", false, 0.05, 0.02, (0.3, 0.5), Verdict::Doubtful);
        far.checks = Some(vec![Check::Trend]);
        let untested = rec("a", false, 0.05, 0.03, (0.3, 0.5), Verdict::Doubtful);
        let mut unchecked = far.clone();
        unchecked.verdict = Some(Verdict::Unchecked);
        let t = &exam_tables(&[far, untested, unchecked])[0];
        let trend = t.checks.iter().find(|l| l.check == Some(Check::Trend));
        assert_eq!(trend.unwrap().tuning.on_far, (1, 1));
        // The exam's own misses leave out the unchecked run too: it neither trusts nor doubts.
        assert_eq!(t.tuning_pooled.as_ref().unwrap().misses, (0, 2));
    }

    #[test]
    fn lines_count_coverage_misses_and_false_alarms_by_hand() {
        use Verdict::{Doubtful as D, Trusted as T};
        let recs = vec![
            // a, 5%: errors +2 (trusted: a miss), −0.2 (doubtful: a false alarm), +0.7 (neither).
            rec("a", false, 0.05, 0.02, (0.38, 0.44), T), // covers 0.40, width 6
            rec("a", false, 0.05, -0.002, (0.41, 0.45), D), // misses, width 4
            rec("a", false, 0.05, 0.007, (0.39, 0.41), T), // covers, width 2
            // b, 5%: −1.5 doubtful (caught), +0.1 trusted (right).
            rec("b", false, 0.05, -0.015, (0.30, 0.50), D),
            rec("b", false, 0.05, 0.001, (0.40, 0.42), T),
            // h (held out), 5% and 1%.
            rec("h", true, 0.05, -0.03, (0.42, 0.43), T),
            rec("h", true, 0.01, 0.004, (0.35, 0.45), D),
        ];
        let tables = exam_tables(&recs);
        assert_eq!(tables.len(), 2);
        let t5 = &tables[0];
        assert_eq!(t5.fraction, 0.05);
        let a = &t5.tuning[0];
        assert_eq!((a.name.as_str(), a.runs), ("a", 3));
        assert!((a.map_mean_abs - (0.02 + 0.002 + 0.007) / 3.0).abs() < 1e-12);
        assert!((a.map_mean - (0.02 - 0.002 + 0.007) / 3.0).abs() < 1e-12);
        assert!((a.hit_mean_abs - 2.0 * (0.02 + 0.002 + 0.007) / 3.0).abs() < 1e-12);
        assert!((a.recall_max_abs - 0.002).abs() < 1e-12);
        assert_eq!(a.covered, (2, 3));
        assert!((a.width - 0.04).abs() < 1e-12);
        assert_eq!(a.misses, (1, 1));
        assert_eq!(a.false_alarms, (1, 1));
        let b = &t5.tuning[1];
        assert_eq!(
            (b.covered, b.misses, b.false_alarms),
            ((2, 2), (0, 1), (0, 1))
        );
        let pooled = t5.tuning_pooled.as_ref().unwrap();
        assert_eq!(pooled.runs, 5);
        assert_eq!(pooled.covered, (4, 5));
        assert_eq!(pooled.misses, (1, 2));
        assert_eq!(pooled.false_alarms, (1, 2));
        assert!((pooled.width - (0.06 + 0.04 + 0.02 + 0.20 + 0.02) / 5.0).abs() < 1e-12);
        let h = t5.held_out_pooled.as_ref().unwrap();
        assert_eq!(
            (h.runs, h.covered, h.misses, h.false_alarms),
            (1, (0, 1), (1, 1), (0, 0))
        );
        let t1 = &tables[1];
        assert!(t1.tuning.is_empty() && t1.tuning_pooled.is_none());
        assert_eq!(t1.held_out[0].false_alarms, (1, 1));
        let md = exam_markdown(&tables);
        assert!(
            md.contains("| tuning | a | 3 | 0.97 | +0.83 | 1.93 | 0.20 | 2/3 | 4.00 | 1/1 | 1/1 |"),
            "{md}"
        );
        assert!(
            md.contains("| held out | **held out (pooled)** | 1 | 3.00 | -3.00 |"),
            "{md}"
        );
        assert!(md.contains("At f = 0.01:"), "{md}");
    }
}
