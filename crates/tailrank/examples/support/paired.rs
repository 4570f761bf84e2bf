//! The ground truth of the synthetic scan benchmarks (`scan_bench synth`, `benches/scan.rs`):
//! two core rows per query, made close to it, are its positives.

use tailrank::formats::gt::QuerySet;

/// Query set `name` of `query_ids`, query `q`'s positives the core rows `2q` and `2q + 1`.
pub fn paired_query_set(name: &str, query_ids: &[String], core_ids: &[String]) -> QuerySet {
    QuerySet {
        name: name.into(),
        query_ids: query_ids.to_vec(),
        positives: (0..query_ids.len())
            .map(|q| vec![core_ids[2 * q].clone(), core_ids[2 * q + 1].clone()])
            .collect(),
    }
}
