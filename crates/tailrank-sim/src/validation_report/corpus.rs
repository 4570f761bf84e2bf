//! The corpus-wide tables of `tailrank validate` (re-exported by
//! [`validation_report`](super)): the overview of every family, as text and as markdown, and
//! the exam at the main fraction.

use crate::predict::FitMode;
use crate::simulate::corpus_report::{
    exam, exam_totals, exam_totals_text, overview, points, points_text, signed_points,
    ErrorSummary, OverviewRow,
};
use crate::simulate::validation::{Coverage, ValidationReport, FLAG_MUST, FLAG_NOT};
use crate::table::{Column, Table};
use std::fmt::Write as _;

/// The overview as markdown: mAP@k errors, then hit@1 / Recall@k / oracles, for the tuned
/// families and then for the held-out one.
pub fn corpus_markdown(report: &ValidationReport) -> String {
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
        let errors = Table::new(vec![
            Column::left("family"),
            Column::right("f"),
            Column::right("seeds"),
            Column::right(format!("true mAP@{k}")),
            Column::left("evt"),
            Column::left("evt-binomial"),
            Column::left("count"),
            Column::left("evaluate-at-S"),
        ]);
        let rows = part.iter().map(|r| {
            vec![
                r.family.clone(),
                r.fraction.to_string(),
                r.runs.to_string(),
                points(r.truth),
                r.evt.points(),
                r.evt_binomial.points(),
                r.count.points(),
                r.evaluate_at_s.points(),
            ]
        });
        m.push_str(&errors.with_rows(rows).markdown());
        let others = Table::new(vec![
            Column::left("family"),
            Column::right("f"),
            Column::left("hit@1"),
            Column::left(format!("Recall@{k}")),
            Column::right("oracle ER"),
            Column::right("oracle Bin"),
            Column::right("immune outranked"),
        ]);
        let rows = part.iter().map(|r| {
            vec![
                r.family.clone(),
                r.fraction.to_string(),
                r.hit_at_1.points(),
                r.recall_at_k.points(),
                signed_points(r.oracle_expected_rank),
                signed_points(r.oracle_binomial),
                format!("{:.1}%", 100.0 * r.immune_outranked),
            ]
        });
        let _ = writeln!(m, "\n{}", others.with_rows(rows).markdown());
    }
    m
}

/// The exam at the main fraction as markdown: per family the estimate and its two second
/// opinions (mean error and mean |error|), the two intervals' coverage and mean width, the
/// verdict's doubtful count, hit rate and false alarms; then the tuned families' totals.
pub fn exam_markdown(report: &ValidationReport) -> String {
    let rows = exam(report);
    let mut m = String::new();
    if rows.is_empty() {
        return m;
    }
    let _ = writeln!(m, "## The exam at f = {}\n", report.options.fraction);
    let _ = writeln!(
        m,
        "Mean error (mean |error|) in mAP points; each interval's coverage of the realized truth \
         and mean width in points (over the runs that have one); the runs the verdict calls \
         doubtful, its hit rate (doubtful among runs off by more than {}) and false alarms \
         (doubtful among runs off by less than {}).\n",
        points_text(FLAG_MUST),
        points_text(FLAG_NOT)
    );
    let other_fit = match report.options.fit {
        FitMode::LevelSelected => "the paper's",
        FitMode::Fixed => "level-selected",
    };
    let table = Table::new(vec![
        Column::left("family"),
        Column::right(format!("evt ({})", report.options.fit.as_str())),
        Column::right(format!("other fit ({other_fit})")),
        Column::right("level-calibrated"),
        Column::left("realized interval"),
        Column::left("query-bootstrap interval"),
        Column::right("doubtful"),
        Column::right("hit"),
        Column::right("false alarm"),
    ]);
    let err = |e: &ErrorSummary| {
        if e.mean.is_finite() {
            format!("{:+.2} ({:.2})", 100.0 * e.mean, 100.0 * e.mean_abs)
        } else {
            "n/a".into()
        }
    };
    let interval = |c: Option<(Coverage, f64)>| {
        c.map_or("n/a".into(), |((i, n), w)| {
            format!("{i}/{n}, {:.2}", 100.0 * w)
        })
    };
    let count = |c: Coverage| {
        if c.1 == 0 {
            "–".to_string()
        } else {
            format!("{}/{}", c.0, c.1)
        }
    };
    let cells = rows.iter().map(|r| {
        vec![
            format!(
                "{}{}",
                r.family,
                if r.held_out { " (held out)" } else { "" }
            ),
            err(&r.evt),
            err(&r.other_fit),
            err(&r.level_calibrated),
            interval(r.realized),
            interval(r.query_bootstrap),
            count(r.doubtful),
            count(r.hit),
            count(r.false_alarm),
        ]
    });
    m.push_str(&table.with_rows(cells).markdown());
    let _ = writeln!(m, "\n{}.", exam_totals_text(&exam_totals(&rows)));
    m
}

/// The overview as a plain-text table (mean error / mean |error| in points).
pub fn corpus_table(report: &ValidationReport) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "corpus overview (mean err / mean |err|, mAP points; * = held out):"
    );
    let mut columns = vec![
        Column::left("family").width(21),
        Column::right("f").width(6),
        Column::right("truth").width(7),
    ];
    columns.extend(
        [
            "evt",
            "evt-binomial",
            "count",
            "eval-at-S",
            "hit@1",
            "Recall@k",
        ]
        .map(|m| Column::right(m).width(13)),
    );
    let cell = |e: &ErrorSummary| format!("{}/{:.2}", signed_points(e.mean), 100.0 * e.mean_abs);
    let rows = overview(report).into_iter().map(|r| {
        vec![
            if r.held_out {
                format!("{}*", r.family)
            } else {
                r.family.clone()
            },
            r.fraction.to_string(),
            points(r.truth),
            cell(&r.evt),
            cell(&r.evt_binomial),
            cell(&r.count),
            cell(&r.evaluate_at_s),
            cell(&r.hit_at_1),
            cell(&r.recall_at_k),
        ]
    });
    t.push_str(&Table::new(columns).with_rows(rows).text("  ", " "));
    t
}
