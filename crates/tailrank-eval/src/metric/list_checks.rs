//! The checks behind `eval`'s warnings on a results list: a list too short for a printed
//! column, and a tie block that straddles a printed cut (docs/reference/metrics.md).

use super::names::MetricName;
use super::rank_order;
use std::collections::HashSet;

/// True when the list holds fewer than `k` items and misses a positive: that positive counts
/// as not retrieved, as in the official evaluator, which a list cut short by the search (top-100
/// scored at k = 1000) turns into a lower AP@k than the model's.
pub(super) fn short_list_misses_positive(
    items: &[(String, f64)],
    positives: &[String],
    k: usize,
) -> bool {
    if items.len() >= k {
        return false;
    }
    let listed: HashSet<&str> = items.iter().map(|(id, _)| id.as_str()).collect();
    positives.iter().any(|p| !listed.contains(p.as_str()))
}

/// The cut-offs of the columns a report prints: `k`'s (the default columns) when no metric is
/// named, else the named metrics' (the full AP has none).
pub(super) fn printed_cuts(k: usize, metrics: &[MetricName]) -> Vec<usize> {
    match metrics.is_empty() {
        true => vec![k],
        // Each cut once (hit@1 and map@1 share one), in the order of the metrics.
        false => (metrics.iter().map(|m| m.cut()))
            .filter(|&c| c != usize::MAX)
            .fold(Vec::new(), |mut cuts, c| {
                if !cuts.contains(&c) {
                    cuts.push(c);
                }
                cuts
            }),
    }
}

/// The queries of `flagged` (cut, query) grouped by cut, in the order of `cuts`; cuts without
/// a query left out.
pub(super) fn by_cut<'a>(
    cuts: &[usize],
    flagged: &[(usize, &'a str)],
) -> Vec<(usize, Vec<&'a str>)> {
    (cuts.iter())
        .map(|&c| {
            (
                c,
                (flagged.iter())
                    .filter(|(fc, _)| *fc == c)
                    .map(|(_, q)| *q)
                    .collect(),
            )
        })
        .filter(|(_, qs): &(usize, Vec<&str>)| !qs.is_empty())
        .collect()
}

/// Whether the metrics at cut `k` of a results list depend on the order inside its tie block
/// at the cut ([`crate::metric::mixed_block_at_cut`]).
pub(super) fn order_decides_at_cut(
    items: &[(String, f64)],
    positives: &[String],
    k: usize,
) -> bool {
    if items.len() <= k {
        return false;
    }
    let pos: HashSet<&str> = positives.iter().map(String::as_str).collect();
    let (sorted, _, relevant) = ranked(items, &pos);
    crate::metric::mixed_block_at_cut(&sorted, &relevant, k)
}

/// A results list in rank order ([`rank_order`](super::rank_order)): its scores, ids and relevance to `pos`.
pub(super) fn ranked<'a>(
    items: &'a [(String, f64)],
    pos: &HashSet<&str>,
) -> (Vec<f64>, Vec<&'a str>, Vec<bool>) {
    let scores: Vec<f64> = items.iter().map(|(_, s)| *s).collect();
    let order = rank_order(&scores);
    let sorted: Vec<f64> = order.iter().map(|&i| scores[i]).collect();
    let ids: Vec<&str> = order.iter().map(|&i| items[i].0.as_str()).collect();
    let relevant: Vec<bool> = ids.iter().map(|id| pos.contains(id)).collect();
    (sorted, ids, relevant)
}
