//! Exact retrieval metrics (SPEC 3): ILIAS mAP@k from a ranked list (tie blocks), from
//! per-positive counts, and the variants (GLDv2 mAP@100, full AP, Recall@k, hit@1).
//!
//! The rank-based core, shared with the prediction maps: for a query with `n` positives whose
//! (possibly real-valued, e.g. expected) ranks in positive order are `r_1 ≤ r_2 ≤ … ≤ r_n`,
//!
//! ```text
//! AP@k = 1/min(k, n) · Σ_{j : r_j ≤ k} j / r_j
//! ```
//!
//! TODO(metric helper): ranked-list metrics with tie blocks, GLDv2, full AP, recall, hit@1.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn official_vector_from_ranks() {
        // gt = {a, c, f, z}; ranked a..f: positives a, c, f at ranks 1, 3, 6; z never retrieved.
        let r = [1.0, 3.0, 6.0];
        assert!((ap_at_k_from_ranks(&r, 4, 1000) - 0.541_666_7).abs() < 1e-6);
        assert!((ap_at_k_from_ranks(&r, 4, 3) - 0.555_555_6).abs() < 1e-6);
        assert!((ap_at_k_from_ranks(&r, 4, 2) - 0.5).abs() < 1e-12);
        assert_eq!(ap_at_k_from_ranks(&[], 4, 1000), 0.0);
    }
}
