//! One query's ranking, as every metric of the vocabulary reads it: a ranked list (results
//! file) or the per-positive ranks of the counts path. [`QueryRanking::value`] is the only
//! place that maps a [`MetricName`] to its formula (docs/method.md §3).

use super::counts::{ap_from_counts_blocks, PositiveCounts};
use super::names::{MetricKind, MetricName};
use super::{ap_at_k_from_ranks, ap_at_k_ties, gldv2_ap_at_k, recall_at_k};
use std::collections::HashSet;

/// What the metrics of one query are computed from.
pub enum QueryRanking<'a> {
    /// A ranked list: `scores` descending (ties in the order used at a cut), `relevant[i]`
    /// whether item `i` is a positive, `ids` the items, `positives` the query's positives.
    List {
        scores: &'a [f64],
        relevant: &'a [bool],
        ids: &'a [&'a str],
        positives: &'a HashSet<&'a str>,
    },
    /// The counts path: positives by score descending with their counts, and their ranks
    /// `r_j = j + C_j + K_j + T_j` (non-decreasing in `j`).
    Counts {
        positives: &'a [PositiveCounts],
        ranks: &'a [f64],
    },
}

impl QueryRanking<'_> {
    /// `n_q`, the query's number of positives.
    pub fn n_positives(&self) -> usize {
        match self {
            QueryRanking::List { positives, .. } => positives.len(),
            QueryRanking::Counts { positives, .. } => positives.len(),
        }
    }

    /// The value of metric `m` (a fraction). A name without `k` is read with no cut-off.
    pub fn value(&self, m: MetricName) -> f64 {
        let n = self.n_positives();
        let k = m.cut();
        match *self {
            QueryRanking::List {
                scores,
                relevant,
                ids,
                positives,
            } => match m.kind {
                MetricKind::Map | MetricKind::Ap => ap_at_k_ties(scores, relevant, n, k),
                MetricKind::Recall => recall_at_k(relevant, n, k),
                MetricKind::Hit => indicator(relevant.iter().take(k).any(|&r| r)),
                MetricKind::Gldv2Map => gldv2_ap_at_k(ids, positives, n, k),
            },
            QueryRanking::Counts { positives, ranks } => {
                let within = |r: f64| k == usize::MAX || r <= k as f64;
                match m.kind {
                    MetricKind::Map | MetricKind::Ap => ap_from_counts_blocks(positives, ranks, k),
                    MetricKind::Recall if n == 0 => 0.0,
                    MetricKind::Recall => {
                        ranks.iter().filter(|&&r| within(r)).count() as f64 / n as f64
                    }
                    MetricKind::Hit => indicator(ranks.iter().any(|&r| within(r))),
                    MetricKind::Gldv2Map => ap_at_k_from_ranks(ranks, n, k),
                }
            }
        }
    }
}

fn indicator(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}
