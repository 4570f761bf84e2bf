//! The exam's table of the verdict's tests (docs/reference/validation.md, "The exam"): each
//! test judged as a diagnostic, by its hit and false-alarm rates.
//!
//! Over the runs of one side at one fraction whose tests ran (`Trust::tests_ran`), with
//! `e = m̂ − T` the run's mAP@k error:
//!
//! - **far runs** `|e| > FLAG_MUST`: the test's hits `#{fired}/#{far}`;
//! - **close runs** `|e| < FLAG_NOT`: its false alarms `#{fired}/#{close}`, and of those the
//!   runs where it was the only test that fired (without it they would be trusted, unless
//!   the input itself was flagged).
//!
//! The last line is the verdict itself (any test, or a flagged input) over the same runs: when
//! every run's tests ran, as in the exam, its far-run share is `1 − misses` and its close-run
//! share the exam's false alarms.

use super::validation::{Coverage, FLAG_MUST, FLAG_NOT};
use crate::predict::{Check, Verdict};
use crate::table::{Column, Table};
use serde::{Deserialize, Serialize};

/// What the table reads of one run whose verdict ran.
#[derive(Debug, Clone, Copy)]
pub struct CheckedRun<'a> {
    pub held_out: bool,
    /// `e = m̂ − T` of mAP@k (a fraction).
    pub map_error: f64,
    pub verdict: Verdict,
    /// The tests that fired.
    pub fired: &'a [Check],
}

/// One test's counts on one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckCounts {
    /// `(fired, far runs)`.
    pub on_far: Coverage,
    /// `(fired, close runs)`.
    pub on_close: Coverage,
    /// Close runs where it was the only test that fired.
    pub alone_on_close: usize,
}

/// One line of the table: a test (None: the verdict) on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckLine {
    pub check: Option<Check>,
    pub tuning: CheckCounts,
    pub held_out: CheckCounts,
}

/// The counts of `check` (None: the verdict) over `runs` (one side, one fraction).
fn counts(check: Option<Check>, runs: &[&CheckedRun]) -> CheckCounts {
    let mut c = CheckCounts::default();
    for r in runs {
        let hit = match check {
            Some(k) => r.fired.contains(&k),
            None => r.verdict == Verdict::Doubtful,
        };
        let e = r.map_error.abs();
        if e > FLAG_MUST {
            c.on_far.1 += 1;
            c.on_far.0 += usize::from(hit);
        } else if e < FLAG_NOT {
            c.on_close.1 += 1;
            c.on_close.0 += usize::from(hit);
            c.alone_on_close += usize::from(hit && check.is_some() && r.fired.len() == 1);
        }
    }
    c
}

/// The lines of the table for the runs of one fraction: one per test of [`Check::ALL`],
/// then the verdict's.
pub fn check_lines(runs: &[CheckedRun]) -> Vec<CheckLine> {
    let side =
        |held: bool| -> Vec<&CheckedRun> { runs.iter().filter(|r| r.held_out == held).collect() };
    let (tuning, held_out) = (side(false), side(true));
    Check::ALL
        .into_iter()
        .map(Some)
        .chain([None])
        .map(|check| CheckLine {
            check,
            tuning: counts(check, &tuning),
            held_out: counts(check, &held_out),
        })
        .collect()
}

/// `a/b`, or `–` when `b = 0` (the exam's counts).
pub(super) fn count_text((a, b): Coverage) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{a}/{b}")
    }
}

/// The table as markdown (empty when no run carries its tests).
pub fn checks_markdown(lines: &[CheckLine]) -> String {
    let ran = |c: &CheckCounts| c.on_far.1 + c.on_close.1 > 0;
    if !lines.iter().any(|l| ran(&l.tuning) || ran(&l.held_out)) {
        return String::new();
    }
    let mut columns = vec![Column::left("test")];
    let (far, close) = (100.0 * FLAG_MUST, 100.0 * FLAG_NOT);
    for side in ["tuning", "held out"] {
        columns.extend(
            [
                format!("{side}: fires, off > {far}"),
                format!("{side}: fires, off < {close}"),
                format!("{side}: alone, off < {close}"),
            ]
            .map(Column::right),
        );
    }
    let mut table = Table::new(columns);
    for l in lines {
        let mut row = vec![l
            .check
            .map_or("**the verdict**", |c| c.as_str())
            .to_string()];
        for c in [&l.tuning, &l.held_out] {
            let alone = if l.check.is_none() || c.on_close.1 == 0 {
                "–".to_string()
            } else {
                c.alone_on_close.to_string()
            };
            row.extend([count_text(c.on_far), count_text(c.on_close), alone]);
        }
        table.push(row);
    }
    table.markdown()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(held_out: bool, map_error: f64, fired: &[Check], verdict: Verdict) -> CheckedRun<'_> {
        CheckedRun {
            held_out,
            map_error,
            verdict,
            fired,
        }
    }

    #[test]
    fn hits_false_alarms_and_sole_firings_by_hand() {
        use Check::{FitChoice as F, Trend as T};
        use Verdict::{Doubtful as D, Trusted as Tr};
        let recs = [
            rec(false, 0.02, &[T, F], D),   // far, both fire
            rec(false, -0.015, &[], Tr),    // far, a miss
            rec(false, 0.001, &[F], D),     // close, fit choice alone
            rec(false, -0.004, &[T, F], D), // close, both
            rec(false, 0.002, &[], Tr),     // close, trusted
            rec(false, 0.007, &[T], D),     // neither far nor close
            rec(true, 0.03, &[T], D),       // held out, far
        ];
        let lines = check_lines(&recs);
        assert_eq!(lines.len(), Check::ALL.len() + 1);
        let of = |c: Option<Check>| lines.iter().find(|l| l.check == c).unwrap();
        let trend = of(Some(T));
        assert_eq!(trend.tuning.on_far, (1, 2));
        assert_eq!(trend.tuning.on_close, (1, 3));
        assert_eq!(trend.tuning.alone_on_close, 0);
        assert_eq!(trend.held_out.on_far, (1, 1));
        let fit = of(Some(F));
        assert_eq!(
            (fit.tuning.on_close, fit.tuning.alone_on_close),
            ((2, 3), 1)
        );
        let verdict = of(None);
        assert_eq!(verdict.tuning.on_far, (1, 2), "one far run trusted: a miss");
        assert_eq!(verdict.tuning.on_close, (2, 3));
        assert_eq!(of(Some(Check::Endpoint)).tuning.on_close, (0, 3));
        let md = checks_markdown(&lines);
        assert!(
            md.contains("| fit choice | 1/2 | 2/3 | 1 | 0/1 | – | – |"),
            "{md}"
        );
        assert!(
            md.contains("| **the verdict** | 1/2 | 2/3 | – | 1/1 | – | – |"),
            "{md}"
        );
        assert_eq!(checks_markdown(&check_lines(&[])), "");
    }
}
