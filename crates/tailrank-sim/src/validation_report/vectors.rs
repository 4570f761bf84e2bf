//! The markdown tables of `tailrank simulate --vectors --validate` (re-exported by
//! [`validation_report`](super)): the vector-level runs and their error decompositions.

use crate::simulate::corpus_report::{points, signed_points};
use crate::simulate::vector_validation::{Metrics, VectorRun};
use crate::table::{Column, Table};

/// One metric of a [`Metrics`].
type Pick = fn(&Metrics) -> f64;

/// Markdown table of the runs: truth and predictions in percent (mAP@k, Recall@k, hit@1).
pub fn vector_table(runs: &[VectorRun]) -> String {
    let mut t = Table::new(
        [
            "family",
            "seed",
            "D",
            "Q",
            "N",
            "f",
            "metric",
            "truth",
            "evt",
            "level-selected",
            "other fit",
            "count",
            "eval-at-S",
            "oracle ER",
            "oracle Bin",
            "immune outranked",
            "realized interval",
            "verdict",
        ]
        .map(Column::left)
        .to_vec(),
    );
    for r in runs {
        let rows: [(&str, Pick); 3] = [
            ("mAP@k", |m| m.map_at_k),
            ("R@k", |m| m.recall_at_k),
            ("hit@1", |m| m.hit_at_1),
        ];
        for (i, (name, get)) in rows.iter().enumerate() {
            let (other, oer, obin, imm, realized, verdict) = if i == 0 {
                (
                    r.other_fit.map_or("n/a".into(), points),
                    points(r.oracle_expected_rank),
                    points(r.oracle_binomial),
                    format!("{}/{}", r.immune_outranked, r.immune),
                    r.realized.map_or("n/a".into(), |iv| {
                        format!(
                            "[{:.2}, {:.2}] {}",
                            100.0 * iv.lo,
                            100.0 * iv.hi,
                            if iv.contains(r.truth.map_at_k) {
                                "covers"
                            } else {
                                "misses"
                            }
                        )
                    }),
                    r.verdict.map_or("n/a", |v| v.as_str()).to_string(),
                )
            } else {
                Default::default()
            };
            let selected = r.level_selected.map_or("n/a".into(), |m| points(get(&m)));
            t.push(vec![
                r.family.clone(),
                r.seed.to_string(),
                r.dim.to_string(),
                r.queries.to_string(),
                r.pool_size.to_string(),
                r.fraction.to_string(),
                name.to_string(),
                points(get(&r.truth)),
                points(get(&r.evt)),
                selected,
                other,
                points(get(&r.count)),
                points(get(&r.evaluate_at_s)),
                oer,
                obin,
                imm,
                realized,
                verdict,
            ]);
        }
    }
    t.markdown()
}

/// Markdown table of the vector runs' error decompositions (points of mAP@k): per run the
/// parts `map + count + tail + immune + centre = evt − truth` against the realized `K_N/N`, and
/// the positives called immune that the whole pool outranks.
pub fn vector_decomposition_table(runs: &[VectorRun]) -> String {
    let mut columns = ["family", "seed", "f"].map(Column::left).to_vec();
    columns.extend(
        [
            "map",
            "count",
            "tail",
            "immune",
            "centre",
            "spacing",
            "total",
            "evt − truth",
        ]
        .map(Column::right),
    );
    columns.push(Column::left("immune outranked"));
    let rows = runs.iter().filter_map(|r| {
        let d = r.decomposition.as_ref()?;
        Some(vec![
            r.family.clone(),
            r.seed.to_string(),
            r.fraction.to_string(),
            signed_points(d.part_map),
            signed_points(d.part_count),
            signed_points(d.part_tail),
            signed_points(d.part_immune),
            signed_points(d.part_centre),
            signed_points(d.part_spacing),
            signed_points(d.total()),
            signed_points(r.evt_error.map_at_k),
            format!("{}/{}", d.immune_outranked, d.immune),
        ])
    });
    Table::new(columns).with_rows(rows).markdown()
}
