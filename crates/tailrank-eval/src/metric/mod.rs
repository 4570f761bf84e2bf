//! Exact retrieval metrics (docs/method.md §3): ILIAS mAP@k from a ranked list (tie blocks), from
//! per-positive counts, and the variants (GLDv2 mAP@100, full AP, Recall@k, hit@1).
//!
//! The rank-based core, shared with the prediction maps: for a query with `n` positives whose
//! (possibly real-valued, e.g. expected) ranks in positive order are `r_1 ≤ r_2 ≤ … ≤ r_n`,
//!
//! ```text
//! AP@k = 1/min(k, n) · Σ_{j : r_j ≤ k} j / r_j
//! ```
//!
//! **Ranked lists (ILIAS semantics).** A query's results are sorted by score, descending, with a
//! *stable* sort: equal scores keep the order of the results file. The list is cut after its
//! first `k` items. In the cut list, items of equal score form a block, and every relevant item
//! of a block gets the precision at the end of the block:
//!
//! ```text
//! AP@k = 1/min(k, n) · Σ_{blocks B ⊆ top-k} hits(B) · H(end B) / end(B)
//! ```
//!
//! with `H(i)` the relevant items among the first `i`. This is what the official evaluator gets
//! from `sklearn.metrics.average_precision_score(y_true[:k], y_score[:k]) · hits / min(k, n)`.
//! **Tie block straddling the cut**: the block is cut too (its items in file order up to rank
//! `k` are kept; the relevant ones among them get the precision at rank `k`). The official code
//! truncates after `np.argsort(-scores)`, so it does the same whenever numpy keeps tied scores in
//! input order (it does for a stable sort); its default quicksort may permute ties, which makes
//! the official number itself ill-defined for such a block — ours is the deterministic version.
//!
//! **From counts** (`docs/reference/metrics.md`): positives sorted by score,
//!
//! ```text
//! r_j = j + C_j + K_j + T_j
//! ```
//!
//! with `C_j`, `K_j` the non-relevant core and pool items scoring strictly above `s_j` and
//! `T_j = T^C_j + T^K_j` those scoring exactly `s_j` (f32 `==`). This is the rank of positive j
//! in the ranked list whose tie blocks hold their non-relevant items first and their positives
//! last; positives of equal score form a block, and [`ap_at_k_ties`]'s rule applies: a block
//! inside the cut gives each of its positives the precision at its end, `e / r_e` (the block's
//! last position, whatever the order inside it, as sklearn's one threshold per distinct score
//! does); a block straddling the cut keeps the positives ranked ≤ k under that order, each
//! with the precision at rank k. So the counts give the ranked-list value exactly for every
//! block that ends within k, and for a straddling block the value of the order "non-relevant
//! first" (the lowest the official code can give; its `np.argsort` default order decides it
//! there, see `docs/reference/metrics.md`). Summaries without tie counts (`T_j = 0`, format version 1)
//! resolve ties in the positive's favour.

mod counts;
mod list_checks;
pub mod names;
mod ranking;
mod report;
pub mod request;

pub use counts::{positive_counts, ranks, PositiveCounts, SampleCounts};
pub use names::{MetricKind, MetricName};
pub use ranking::QueryRanking;
pub use report::{
    evaluate_counts, evaluate_counts_with, evaluate_query, evaluate_results, evaluate_results_for,
    evaluate_summary, evaluate_summary_for_set, evaluate_summary_with, select_sets,
    set_for_summary, EvalOptions, EvalReport, MissingPolicy, QueryReport, SetReport,
};
pub use request::{EvalOutcome, EvalRequest, DEFAULT_K};

use std::collections::HashSet;

/// AP@k from the ranks of a query's positives, in positive order (`ranks[j-1]` is the rank of
/// the j-th best positive, `ranks[j-1] ≥ j`). `n_pos` is the number of positives of the query
/// (positives beyond `ranks.len()` are treated as never retrieved).
///
/// `AP@k = 1/min(k, n_pos) · Σ_{j ≤ ranks.len(), r_j ≤ k} j / r_j`; 0 when `k == 0` or
/// `n_pos == 0`.
pub fn ap_at_k_from_ranks(ranks: &[f64], n_pos: usize, k: usize) -> f64 {
    if k == 0 || n_pos == 0 {
        return 0.0;
    }
    let kf = k as f64;
    let sum: f64 = ranks
        .iter()
        .enumerate()
        .filter(|(_, &r)| r <= kf)
        .map(|(i, &r)| (i + 1) as f64 / r)
        .sum();
    sum / k.min(n_pos) as f64
}

/// Rank of the j-th positive (1-based `j`) from counts: `r_j = j + C_j + K_j` where `C_j`
/// (`core_above`) and `K_j` (`pool_above`) count non-relevant core and pool items scoring
/// strictly above it.
#[inline]
pub fn rank_from_counts(j: usize, core_above: u64, pool_above: f64) -> f64 {
    j as f64 + core_above as f64 + pool_above
}

// ---------------------------------------------------------------------------------------------
// Ranked lists
// ---------------------------------------------------------------------------------------------

/// Order of `scores` by score descending, ties in input order (stable). Scores must not be NaN.
pub fn rank_order(scores: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    // Plain float comparison (−0.0 == 0.0, as in numpy); `sort_by` is stable.
    idx.sort_by(|&a, &b| {
        scores[b]
            .partial_cmp(&scores[a])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    idx
}

/// ILIAS AP@k of a ranked list: `scores` sorted descending (ties in the order to use at the
/// cut), `relevant[i]` whether item `i` is relevant, `n_pos` the number of positives of the
/// query. Cut after `k` items; each relevant item gets the precision at the end of its tie block
/// within the cut list; divisor `min(k, n_pos)`. `k = usize::MAX` gives the full AP (divisor
/// `n_pos`). 0 when `k == 0`, `n_pos == 0` or no hit.
pub fn ap_at_k_ties(scores: &[f64], relevant: &[bool], n_pos: usize, k: usize) -> f64 {
    assert_eq!(
        scores.len(),
        relevant.len(),
        "scores and relevance differ in length"
    );
    if k == 0 || n_pos == 0 {
        return 0.0;
    }
    let m = k.min(scores.len());
    let mut hits = 0usize;
    let mut block_hits = 0usize;
    let mut sum = 0.0;
    for i in 0..m {
        if relevant[i] {
            hits += 1;
            block_hits += 1;
        }
        let block_ends = i + 1 == m || scores[i + 1] != scores[i];
        if block_ends {
            if block_hits > 0 {
                sum += block_hits as f64 * hits as f64 / (i + 1) as f64;
            }
            block_hits = 0;
        }
    }
    sum / k.min(n_pos) as f64
}

/// GLDv2 official AP@k (the Kaggle metric, `k = 100`) of a ranked list of predicted ids: no tie
/// grouping; a relevant id at rank `i` earns `hits/i` the first time it appears; a repeated id
/// uses its rank but earns nothing. Divisor `min(n_pos, k)`.
pub fn gldv2_ap_at_k(
    ranked_ids: &[&str],
    positives: &HashSet<&str>,
    n_pos: usize,
    k: usize,
) -> f64 {
    if k == 0 || n_pos == 0 {
        return 0.0;
    }
    let mut seen: HashSet<&str> = HashSet::new();
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (i, id) in ranked_ids.iter().take(k).enumerate() {
        if seen.insert(id) && positives.contains(id) {
            hits += 1;
            sum += hits as f64 / (i + 1) as f64;
        }
    }
    sum / n_pos.min(k) as f64
}

/// Recall@k of a ranked list: relevant items among the first `k`, over `n_pos`.
pub fn recall_at_k(relevant: &[bool], n_pos: usize, k: usize) -> f64 {
    if n_pos == 0 {
        return 0.0;
    }
    relevant.iter().take(k).filter(|&&r| r).count() as f64 / n_pos as f64
}

/// hit@1 of a ranked list: 1 when the first item is relevant (ties at the top: file order).
pub fn hit_at_1(relevant: &[bool]) -> f64 {
    if relevant.first().copied().unwrap_or(false) {
        1.0
    } else {
        0.0
    }
}

/// Pairs (relevant, non-relevant) of equal score in a list sorted by score (f64 `==`):
/// `Σ_blocks hits(B) · (|B| − hits(B))`.
pub fn tied_pairs(sorted_scores: &[f64], relevant: &[bool]) -> u64 {
    let mut total = 0u64;
    let mut a = 0;
    while a < sorted_scores.len() {
        let mut b = a + 1;
        while b < sorted_scores.len() && sorted_scores[b] == sorted_scores[a] {
            b += 1;
        }
        let hits = relevant[a..b].iter().filter(|&&r| r).count() as u64;
        total += hits * ((b - a) as u64 - hits);
        a = b;
    }
    total
}

/// Whether the official AP@k of a ranked list depends on the order inside a tie block: the
/// block of equal scores that holds rank `k` (1-based) goes on past rank `k` and holds both
/// relevant and non-relevant items, so which of them fall within the first `k` is decided by
/// the order of the list alone (`docs/reference/metrics.md`, "Ties").
pub fn mixed_block_at_cut(sorted_scores: &[f64], relevant: &[bool], k: usize) -> bool {
    if k == 0 || k >= sorted_scores.len() || sorted_scores[k - 1] != sorted_scores[k] {
        return false;
    }
    let s = sorted_scores[k - 1];
    let a = sorted_scores[..k].partition_point(|&x| x != s);
    let b = k + sorted_scores[k..].partition_point(|&x| x == s);
    let hits = relevant[a..b].iter().filter(|&&r| r).count();
    hits > 0 && hits < b - a
}

#[cfg(test)]
mod tests;
