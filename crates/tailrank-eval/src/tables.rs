//! The evaluation reports of `tailrank eval`: one row per query set (the chosen metrics), and
//! one row per revisited protocol.

use crate::metric::{EvalReport, MetricName};
use crate::protocols::RevisitedReport;

impl EvalReport {
    /// Human table: one row per query set, the chosen metrics (default `map@k`) in percent with
    /// 2 decimals. A metric the report does not hold prints as `-`.
    pub fn table(&self, metrics: &[MetricName]) -> String {
        let default = [MetricName::map(self.k)];
        let metrics: Vec<MetricName> = if metrics.is_empty() {
            default.to_vec()
        } else {
            metrics.iter().map(|m| m.at(self.k)).collect()
        };
        let name_w = self
            .sets
            .iter()
            .map(|s| s.name.len())
            .max()
            .unwrap_or(0)
            .max("query set".len());
        let titles: Vec<String> = metrics.iter().map(|m| m.title()).collect();
        let mut out = format!("{:<name_w$}  {:>7}", "query set", "queries");
        for t in &titles {
            out.push_str(&format!("  {:>w$}", t, w = t.len().max(7)));
        }
        out.push('\n');
        for s in &self.sets {
            out.push_str(&format!("{:<name_w$}  {:>7}", s.name, s.n_queries));
            for (m, t) in metrics.iter().zip(&titles) {
                let v = s
                    .value(*m, self.k)
                    .map_or("-".to_string(), |v| format!("{:.2}", 100.0 * v));
                out.push_str(&format!("  {:>w$}", v, w = t.len().max(7)));
            }
            if s.n_missing > 0 {
                out.push_str(&format!("  ({} missing counted as 0)", s.n_missing));
            }
            out.push('\n');
        }
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
        let mut out = format!("{:<9}  {:>7}  {:>7}\n", "protocol", "queries", "mAP");
        for p in &self.protocols {
            let map = if p.map.is_nan() {
                "-".to_string()
            } else {
                format!("{:.2}", 100.0 * p.map)
            };
            let missing = p.queries.iter().filter(|q| q.missing).count();
            out.push_str(&format!(
                "{:<9}  {:>7}  {:>7}",
                p.protocol.as_str(),
                p.n_queries,
                map
            ));
            if missing > 0 {
                out.push_str(&format!("  ({missing} without results, ranked empty)"));
            }
            out.push('\n');
        }
        out.push_str("(percent; revisited AP, junk removed)\n");
        out
    }
}
