//! The evaluation reports of `tailrank eval`: one row per query set (the chosen metrics), and
//! one row per revisited protocol.

use crate::metric::{EvalReport, MetricName};
use crate::protocols::RevisitedReport;
use crate::table::{Column, Table};

impl EvalReport {
    /// Human table: one row per query set, the chosen metrics (default `map@k`) in percent with
    /// 2 decimals. A metric the report does not hold prints as `-`.
    pub fn table(&self, metrics: &[MetricName]) -> String {
        let default = [MetricName::map(self.k)];
        let metrics: Vec<MetricName> = if metrics.is_empty() {
            default.to_vec()
        } else {
            MetricName::distinct_at(metrics, self.k)
        };
        let mut columns = vec![
            Column::left("query set").fit(),
            Column::right("queries").width(7),
        ];
        columns.extend(metrics.iter().map(|m| {
            let t = m.title();
            let w = t.len().max(7);
            Column::right(t).width(w)
        }));
        let rows = self.sets.iter().map(|s| {
            let mut row = vec![s.name.clone(), s.n_queries.to_string()];
            row.extend(metrics.iter().map(|m| {
                s.value(*m, self.k)
                    .map_or("-".to_string(), |v| format!("{:.2}", 100.0 * v))
            }));
            row
        });
        let mut lines = Table::new(columns).with_rows(rows).text_lines("", "  ");
        // After the header, one line per set: a set with missing queries says so after its row.
        for (line, s) in lines[1..].iter_mut().zip(&self.sets) {
            if s.n_missing > 0 {
                line.push_str(&format!("  ({} missing counted as 0)", s.n_missing));
            }
        }
        let mut out: String = lines.into_iter().map(|l| l + "\n").collect();
        out.push_str("(percent)\n");
        for s in &self.sets {
            match s.tied_pairs {
                Some(0) => {}
                Some(t) => out.push_str(&format!(
                    "{}: {t} tied positive/non-relevant pair{} (equal scores: official tie \
                     blocks, positives at the block's end)\n",
                    s.name,
                    if t == 1 { "" } else { "s" }
                )),
                None => out.push_str(&format!(
                    "{}: ties unknown (summary without tie counts)\n",
                    s.name
                )),
            }
        }
        out
    }
}

impl RevisitedReport {
    /// Human table: one row per protocol, mAP in percent with 2 decimals.
    pub fn table(&self) -> String {
        let columns = vec![
            Column::left("protocol").width(9),
            Column::right("queries").width(7),
            Column::right("mAP").width(7),
        ];
        let rows = self.protocols.iter().map(|p| {
            let map = if p.map.is_nan() {
                "-".to_string()
            } else {
                format!("{:.2}", 100.0 * p.map)
            };
            vec![
                p.protocol.as_str().to_string(),
                p.n_queries.to_string(),
                map,
            ]
        });
        let mut lines = Table::new(columns).with_rows(rows).text_lines("", "  ");
        // After the header, one line per protocol: queries without results are counted after it.
        for (line, p) in lines[1..].iter_mut().zip(&self.protocols) {
            let missing = p.queries.iter().filter(|q| q.missing).count();
            if missing > 0 {
                line.push_str(&format!("  ({missing} without results, ranked empty)"));
            }
        }
        let mut out: String = lines.into_iter().map(|l| l + "\n").collect();
        out.push_str("(percent; revisited AP, junk removed)\n");
        out
    }
}
