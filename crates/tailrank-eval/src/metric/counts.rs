//! The counts path (docs/method.md §3, §6): a query's metrics from per-positive counts of
//! non-relevant items scoring above and equal to each positive, as a scan summary holds them.

use super::rank_from_counts;
use crate::error::{Error, Result};
use crate::hardness::QueryHardness;
use crate::summary::Summary;

/// One positive for the counts path: score, `C_j`, `K_j` and the ties `T_j = T^C_j + T^K_j`
/// (non-relevant core and pool items scoring exactly `s_j`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositiveCounts {
    pub score: f32,
    pub core_above: u64,
    pub pool_above: u64,
    pub ties: u64,
}

/// The counts of the sample gallery a hardness came from, for the counts path
/// (`pool_above` = K_j + T^K_j and `core_above` = C_j + T^C_j: items at or above `s_j`, so
/// the ties are already in and `ties` is 0).
pub trait SampleCounts {
    fn sample_counts(&self) -> Vec<PositiveCounts>;
}

impl SampleCounts for QueryHardness {
    fn sample_counts(&self) -> Vec<PositiveCounts> {
        self.positives
            .iter()
            .map(|p| PositiveCounts {
                score: p.score,
                core_above: p.core_above,
                pool_above: p.pool_above,
                ties: 0,
            })
            .collect()
    }
}

/// Whether the official AP@k of a query depends on the order inside a tie block, from counts:
/// positives `a..=b` (1-based) share a score with `E` tied non-relevant items, so their block
/// runs from rank `a + C + K` to `b + C + K + E`; when `E > 0` and the block holds the cut
/// (`a + C + K ≤ k < b + C + K + E`), which of its items fall within the first k is decided by
/// the order alone (`docs/reference/metrics.md`, "Ties"; the counts give the lowest value, non-relevant
/// first).
pub fn mixed_block_at_cut_counts(pos: &[PositiveCounts], k: usize) -> bool {
    let mut a = 0;
    while a < pos.len() {
        let mut b = a;
        while b + 1 < pos.len() && pos[b + 1].score.to_bits() == pos[a].score.to_bits() {
            b += 1;
        }
        let p = &pos[a];
        let above = p.core_above + p.pool_above;
        let (start, end) = (a as u64 + 1 + above, b as u64 + 1 + above + p.ties);
        if p.ties > 0 && start <= k as u64 && (k as u64) < end {
            return true;
        }
        a = b + 1;
    }
    false
}

/// `r_j = j + C_j + K_j + T_j`, 1-based `j`, in positive order.
pub fn ranks(pos: &[PositiveCounts]) -> Vec<f64> {
    pos.iter()
        .enumerate()
        .map(|(i, p)| rank_from_counts(i + 1, p.core_above + p.ties, p.pool_above as f64))
        .collect()
}

/// ILIAS AP@k from counts with positive tie blocks (see [`super::evaluate_counts`]).
pub(super) fn ap_from_counts_blocks(pos: &[PositiveCounts], ranks: &[f64], k: usize) -> f64 {
    let n = pos.len();
    if k == 0 || n == 0 {
        return 0.0;
    }
    let kf = k as f64;
    let mut sum = 0.0;
    let mut j = 0;
    while j < n {
        let mut e = j;
        while e + 1 < n && pos[e + 1].score == pos[j].score {
            e += 1;
        }
        // Block j..=e (0-based), ranks contiguous under the counts' tie rule.
        let in_cut = (j..=e).filter(|&i| ranks[i] <= kf).count();
        if in_cut > 0 {
            let end_rank = ranks[e];
            let prec = if end_rank <= kf {
                (e + 1) as f64 / end_rank
            } else {
                // Straddling block: precision at rank k = positives ranked ≤ k, over k.
                (j + in_cut) as f64 / kf
            };
            sum += in_cut as f64 * prec;
        }
        j = e + 1;
    }
    sum / k.min(n) as f64
}

/// The per-positive counts of query `qi` of a summary, at subset `subset` (0: the level-0
/// sample; in exact mode the whole pool), in the summary's positive order (score descending).
/// With a sample level this gives the "evaluate-at-S" gallery (core plus the S_ℓ sampled items)
/// through [`evaluate_counts`]. Errors on a missing count, a non-finite score or unsorted
/// positives.
pub fn positive_counts(s: &Summary, qi: usize, subset: usize) -> Result<Vec<PositiveCounts>> {
    let Some(q) = s.queries.get(qi) else {
        return Err(Error::option(format!(
            "summary has {} queries, no query index {qi}",
            s.queries.len()
        )));
    };
    let mut out = Vec::with_capacity(q.positives.len());
    for (j, p) in q.positives.iter().enumerate() {
        let Some(&k0) = p.pool_above.get(subset) else {
            return Err(Error::input_msg(format!(
                "summary query {:?}: positive {:?} has no pool count for subset {subset}",
                q.id, p.id
            )));
        };
        if !p.score.is_finite() {
            return Err(Error::input_msg(format!(
                "summary query {:?}: positive {:?} has a non-finite score",
                q.id, p.id
            )));
        }
        if j > 0 && p.score > q.positives[j - 1].score {
            return Err(Error::input_msg(format!(
                "summary query {:?}: positives are not sorted by score, descending (at {:?})",
                q.id, p.id
            )));
        }
        out.push(PositiveCounts {
            score: p.score,
            core_above: p.core_above,
            pool_above: k0,
            ties: p.core_ties + p.pool_tie(subset),
        });
    }
    if out.is_empty() {
        return Err(Error::input_msg(format!(
            "summary query {:?} has no positives",
            q.id
        )));
    }
    Ok(out)
}
