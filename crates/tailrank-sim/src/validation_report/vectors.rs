//! The markdown tables of `tailrank simulate --vectors --validate` (re-exported by
//! [`validation_report`](super)): the vector-level runs and their error decompositions.

use crate::simulate::vector_validation::{Metrics, VectorRun};
use std::fmt::Write as _;

/// One metric of a [`Metrics`].
type Pick = fn(&Metrics) -> f64;

/// Markdown table of the runs: truth and predictions in percent (mAP@k, Recall@k, hit@1).
pub fn vector_table(runs: &[VectorRun]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| family | seed | D | Q | N | f | metric | truth | evt | level-selected | other fit | count | eval-at-S | oracle ER | oracle Bin | immune outranked | realized interval | verdict |"
    );
    let _ = writeln!(
        s,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
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
                    r.other_fit
                        .map_or("n/a".into(), |m| format!("{:.2}", 100.0 * m)),
                    format!("{:.2}", 100.0 * r.oracle_expected_rank),
                    format!("{:.2}", 100.0 * r.oracle_binomial),
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
            let selected = r
                .level_selected
                .map_or("n/a".into(), |m| format!("{:.2}", 100.0 * get(&m)));
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} | {:.2} | {:.2} | {} | {} | {} | {} | {} |",
                r.family,
                r.seed,
                r.dim,
                r.queries,
                r.pool_size,
                r.fraction,
                name,
                100.0 * get(&r.truth),
                100.0 * get(&r.evt),
                selected,
                other,
                100.0 * get(&r.count),
                100.0 * get(&r.evaluate_at_s),
                oer,
                obin,
                imm,
                realized,
                verdict
            );
        }
    }
    s
}

/// Markdown table of the vector runs' error decompositions (points of mAP@k): per run the
/// parts `map + count + tail + immune + centre = evt − truth` against the realized `K_N/N`, and
/// the positives called immune that the whole pool outranks.
pub fn vector_decomposition_table(runs: &[VectorRun]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| family | seed | f | map | count | tail | immune | centre | total | evt − truth | immune outranked |"
    );
    let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for r in runs {
        let Some(d) = &r.decomposition else { continue };
        let p = |v: f64| format!("{:+.2}", 100.0 * v);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}/{} |",
            r.family,
            r.seed,
            r.fraction,
            p(d.part_map),
            p(d.part_count),
            p(d.part_tail),
            p(d.part_immune),
            p(d.part_centre),
            p(d.total()),
            p(r.evt_error.map_at_k),
            d.immune_outranked,
            d.immune
        );
    }
    s
}
