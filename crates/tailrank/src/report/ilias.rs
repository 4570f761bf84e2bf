//! The ILIAS report of `tailrank ilias`: mAP@k per task in percent, the breakdowns, and in
//! prediction mode each set's prediction table.

use super::{pct, prediction_table, thousands};
use crate::ilias::{GroupResult, IliasReport, IliasSetReport};
use crate::table::{Column, Table};
use std::fmt::Write;

fn k_label(k: usize) -> String {
    if k >= 1000 && k.is_multiple_of(1000) {
        format!("{}k", k / 1000)
    } else {
        k.to_string()
    }
}

/// The human report: mAP@k per task in percent (two decimals), then the breakdowns; in
/// prediction mode each set's prediction table (interval, baselines, diagnostics) too.
pub fn table(r: &IliasReport) -> String {
    let kl = k_label(r.k);
    let mut t = header(r, &kl);
    set_rows(&mut t, r, &kl);
    if let Some(c) = &r.combined {
        // The task name is one character wider than the column: the count keeps its place.
        let _ = writeln!(t, "{:<7}{:>8} {:>12}", c.task, c.n_queries, pct(c.map_at_k));
    }
    for s in &r.sets {
        match s.tied_pairs {
            Some(0) => {}
            Some(n) => {
                let _ = writeln!(
                    t,
                    "{}: {} tied positive/non-relevant pair{} (equal scores: official tie blocks, \
                     positives at the block's end)",
                    s.task,
                    thousands(n),
                    if n == 1 { "" } else { "s" }
                );
            }
            None => {
                let _ = writeln!(t, "{}: ties unknown (summary without tie counts)", s.task);
            }
        }
    }
    for s in &r.sets {
        if let Some(p) = &s.prediction {
            let _ = writeln!(t, "\n{} prediction:", s.task);
            t.push_str(&prediction_table(p));
        }
        breakdown(&mut t, s, &kl);
    }
    t
}

/// The warnings (e.g. a missing taxonomy: no category rows below) and the title line.
fn header(r: &IliasReport, kl: &str) -> String {
    let mut t = String::new();
    // Warnings first (e.g. a missing taxonomy: no category rows below).
    for w in &r.warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    let _ = writeln!(
        t,
        "ILIAS, model {:?}: {} mAP@{kl}, N = {} distractors{}{}",
        r.model,
        r.mode,
        thousands(r.pool_size),
        match &r.selected_ids {
            Some(f) => format!(" selected by {f}"),
            None => String::new(),
        },
        if r.mode == "exact" {
            " (all scanned)".to_string()
        } else {
            format!(
                " predicted from S = {} sampled (f = {}, seed {})",
                thousands(r.sample_size),
                super::fraction(r.fraction),
                r.seed
            )
        }
    );
    t
}

/// The column heads and one row per query set (with the prediction's columns when predicted).
fn set_rows(t: &mut String, r: &IliasReport, kl: &str) {
    let predicted = r.sets.iter().any(|s| s.prediction.is_some());
    let mut columns = vec![
        Column::left("task").width(6),
        Column::right("queries").width(8),
        Column::right(format!("mAP@{kl} (%)")).width(12),
    ];
    if predicted {
        columns.extend([
            Column::left("interval (other query sets)")
                .width(26)
                .after("  "),
            Column::left("interval (these queries)").width(26),
            Column::right("count").width(9),
            Column::right("at-S").width(9),
            Column::left("verdict").width(0).after("  "),
        ]);
    }
    let rows = r.sets.iter().map(|s| {
        let mut row = vec![s.task.clone(), s.n_queries.to_string(), pct(s.map_at_k)];
        // A set without a prediction fills the first three columns only.
        if let Some(p) = &s.prediction {
            let conf = super::confidence_label(p.options.confidence);
            let (iv, what) = match &p.total {
                Some(i) => (i, "total"),
                None => (&p.percentile, "pct"),
            };
            let realized = match &p.realized {
                Some(r) => format!("{conf} [{}, {}]", pct(r.interval.lo), pct(r.interval.hi)),
                None => "n/a".into(),
            };
            row.extend([
                format!("{conf} {what} [{}, {}]", pct(iv.lo), pct(iv.hi)),
                realized,
                pct(p.baselines.count),
                pct(p.baselines.evaluate_at_s),
                p.trust.verdict.as_str().to_string(),
            ]);
        }
        row
    });
    t.push_str(&Table::new(columns).with_rows(rows).text("", " "));
}

/// The breakdown of query set `s` by scale, clutter and (sub)category, if it has one.
fn breakdown(t: &mut String, s: &IliasSetReport, kl: &str) {
    let groups: Vec<&GroupResult> = s
        .scale
        .iter()
        .chain(&s.clutter)
        .chain(&s.categories)
        .chain(&s.subcategories)
        .collect();
    if groups.is_empty() {
        return;
    }
    let pred = s.prediction.is_some();
    let _ = writeln!(t, "\n{} breakdown, mAP@{kl} (%):", s.task);
    let mut columns = vec![
        Column::left("kind").width(12),
        Column::left("group").width(40),
        Column::right("n").width(5),
    ];
    let values: &[&str] = if pred {
        &["estimate", "count", "at-S"]
    } else {
        &["mAP"]
    };
    columns.extend(values.iter().map(|v| Column::right(*v).width(9)));
    let rows = groups.into_iter().map(|g| {
        let mut row = vec![
            g.kind.clone(),
            g.group.clone(),
            g.n.to_string(),
            pct(g.map_at_k),
        ];
        if pred {
            row.extend([
                pct(g.count_map_at_k.unwrap_or(f64::NAN)),
                pct(g.evaluate_at_s_map_at_k.unwrap_or(f64::NAN)),
            ]);
        }
        row
    });
    t.push_str(&Table::new(columns).with_rows(rows).text("  ", " "));
}
