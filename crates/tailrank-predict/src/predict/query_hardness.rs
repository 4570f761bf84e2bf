//! The hardness a prediction maps, per query: of a subset with the options' estimator (the
//! tail fitted, or skipped when only the metric is needed), the count baseline's `x̂ = K_j/S`,
//! and the per-query AP@k at N through a map.

use super::PredictOptions;
use crate::error::{Error, Result};
use crate::hardness::{self, Estimator, QueryHardness};
use crate::maps::{self, MapKind};
use crate::summary::Summary;
use rayon::prelude::*;

/// Hardness of level-0 (or any) subset with the options' estimator.
pub fn hardness_for(
    s: &Summary,
    subset: usize,
    opts: &PredictOptions,
) -> Result<Vec<QueryHardness>> {
    hardness::estimate_summary(s, subset, &opts.estimator)
}

/// Hardness of one query for the metric only: identical x̂ to `hardness::estimate_query`, but
/// when every positive has `K_j ≥ c_min` (all take the count branch whatever the tail) the
/// tail is not fitted (`tail` is then None). Used where only the metric matters (levels > 0,
/// shards, sample-noise replicates): a GPD fit is the expensive step.
pub fn estimate_query_for_metric(
    q: &crate::summary::QuerySummary,
    subset: usize,
    sample_size: u64,
    est: &Estimator,
) -> QueryHardness {
    if let Estimator::Evt(o) = est {
        if q.positives
            .iter()
            .all(|p| p.pool_at_or_above(subset) >= o.c_min)
        {
            return hardness::estimate_query(q, subset, sample_size, &Estimator::Count);
        }
    }
    hardness::estimate_query(q, subset, sample_size, est)
}

/// [`estimate_query_for_metric`] for every query of subset `subset` (checked like
/// `hardness::estimate_summary`).
pub fn hardness_for_metric(
    s: &Summary,
    subset: usize,
    opts: &PredictOptions,
) -> Result<Vec<QueryHardness>> {
    if subset >= s.subsets.len() || subset >= s.subset_sizes.len() {
        return Err(Error::option(format!(
            "summary has {} subsets, subset {subset} requested",
            s.subsets.len()
        )));
    }
    let size = s.subset_sizes[subset];
    for q in &s.queries {
        for p in &q.positives {
            if p.pool_above.get(subset).is_none_or(|&k| k > size) {
                return Err(Error::input_msg(format!(
                    "query {}, positive {}: count missing or above the subset size {size}",
                    q.id, p.id
                )));
            }
        }
    }
    Ok(s.queries
        .par_iter()
        .map(|q| estimate_query_for_metric(q, subset, size, &opts.estimator))
        .collect())
}

/// Count hardness `x̂ = K_j / S` from any hardness (uses the recorded `pool_above` and
/// `sample_size`); branches become `Count`, tails are dropped.
pub fn count_hardness(qs: &[QueryHardness]) -> Vec<QueryHardness> {
    qs.iter()
        .map(|q| QueryHardness {
            query_id: q.query_id.clone(),
            sample_size: q.sample_size,
            tail: None,
            positives: q
                .positives
                .iter()
                .map(|p| hardness::PositiveHardness {
                    x_hat: if q.sample_size > 0 {
                        p.pool_above as f64 / q.sample_size as f64
                    } else {
                        0.0
                    },
                    branch: hardness::Branch::Count,
                    ..p.clone()
                })
                .collect(),
        })
        .collect()
}

/// Per-query AP@k at N through the map.
pub fn per_query_ap(qs: &[QueryHardness], n_pool: f64, k: usize, map: MapKind) -> Vec<f64> {
    qs.par_iter()
        .map(|q| maps::ap_at_k(q, n_pool, k, map))
        .collect()
}
