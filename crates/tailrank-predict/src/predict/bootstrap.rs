//! Uncertainty (docs/method.md §9).
//!
//! **Query bootstrap.** B replicates; replicate b draws Q query indices uniformly with
//! replacement (RNG stream `(seed, 0, b)`), its statistic is the mean of the per-query values
//! over those indices. Because the per-query AP vector is computed once, a replicate costs Q
//! additions. Reported: the standard error (sd of the replicate means, divisor B − 1), the
//! percentile interval and the BCa interval with jackknife acceleration (leave-one-query-out
//! means `θ_(i) = (Q·θ̂ − AP_i)/(Q − 1)`), see [`stats::bca_interval`].
//!
//! **Sample noise.** A summary keeps only the top-M pool scores and the counts `K_j` of the
//! sample, so the Poisson(1) reweighting of the sampled pool items is approximated per
//! replicate r (RNG stream `(seed, 1, r)`) as follows:
//!
//! - `S* ~ Poisson(S)` (the total weight of S items with Poisson(1) weights);
//! - per query, the first `m = min(L, ⌈2(1 − q)L⌉ + 64)` top scores (L = list length, q the
//!   tail quantile) each get a Poisson(1) weight `w_i` and are repeated `w_i` times; the rest of
//!   the list, whose items only matter through their number (they lie below the threshold u),
//!   is kept unweighted but cut or padded to `Poisson(L − m)` items. The reweighted list is cut
//!   back to M when the original held exactly M scores;
//! - counts stay consistent with the weights: `K_j* = Σ_{i < K_j} w_i` when `K_j ≤ m` (the
//!   items above `s_j` are exactly the first `K_j` of the list), else
//!   `K_j* = Σ_{i<m} w_i + Σ_{j' ≤ j} Poisson(ΔK_{j'})` with independent Poisson increments over
//!   the part of each count beyond m, so `K_j*` stays non-decreasing in j;
//! - the tail is refitted and the hardness recomputed (`hardness::estimate_query`) and mapped
//!   to N.
//!
//! Crossed with query resampling (the query bootstrap's indices of replicate r), this gives the
//! `crossed` interval; the sd of the replicate means over all queries is the extra spread
//! `sample_noise_sd` that widens the `total` interval. Replicates are of the reported
//! estimate: when it is moved to the centre of the excess (`endpoint_test`), each query's
//! fixed move `δ_q` is added to its replicate AP, `AP*_q + δ_q`, so the crossed interval is
//! centred where the estimate is.

use super::stats::{self, Interval};
use super::PredictOptions;
use crate::hardness::Estimator;
use crate::maps;
use crate::summary::{PositiveSummary, QuerySummary, Summary};
use rand::RngExt;
use rayon::prelude::*;

/// Resampled query indices of B replicates (row-major, B × Q).
#[derive(Debug, Clone)]
pub struct QueryBootstrap {
    pub n_queries: usize,
    pub replicates: usize,
    idx: Vec<u32>,
}

/// What the query bootstrap says about one per-query vector.
#[derive(Debug, Clone, Copy)]
pub struct QuerySummaryStats {
    pub std_error: f64,
    pub percentile: Interval,
    pub bca: Interval,
}

impl QueryBootstrap {
    /// Draw `b` replicates of `q` indices with stream 0 of `seed`: the query bootstrap of the
    /// intervals over query sets. None when `q < 2`: each replicate of one query is that query,
    /// a zero-width interval and infinite z-scores that say nothing about other query sets.
    pub fn new(q: usize, b: usize, seed: u64) -> Self {
        Self::with_stream(q, if q < 2 { 0 } else { b }, seed, 0)
    }

    /// Draw `b` replicates of `q` indices with RNG stream `stream`.
    pub fn with_stream(q: usize, b: usize, seed: u64, stream: u64) -> Self {
        let mut idx = vec![0u32; q * b];
        if q > 0 {
            idx.par_chunks_mut(q).enumerate().for_each(|(r, row)| {
                let mut rng = crate::numerics::rng_for(
                    crate::numerics::StreamSeeding::Chained,
                    seed,
                    stream,
                    r as u64,
                );
                for v in row.iter_mut() {
                    *v = rng.random_range(0..q as u32);
                }
            });
        }
        QueryBootstrap {
            n_queries: q,
            replicates: b,
            idx,
        }
    }

    /// Indices of replicate `r`.
    pub fn indices(&self, r: usize) -> &[u32] {
        &self.idx[r * self.n_queries..(r + 1) * self.n_queries]
    }

    /// Replicate means of `values` (one per query).
    pub fn means(&self, values: &[f64]) -> Vec<f64> {
        assert_eq!(values.len(), self.n_queries);
        (0..self.replicates)
            .into_par_iter()
            .map(|r| {
                let ix = self.indices(r);
                ix.iter().map(|&i| values[i as usize]).sum::<f64>() / ix.len() as f64
            })
            .collect()
    }

    /// Standard error of the mean of `values` (sd of the replicate means); NaN when B < 2.
    pub fn std_error(&self, values: &[f64]) -> f64 {
        stats::std_dev(&self.means(values))
    }

    /// The standard error of the mean of `values` that B replicates estimate, without them:
    /// the ideal bootstrap's (B → ∞) `√(Σ (v_i − v̄)²) / Q`. NaN when `values` is empty.
    pub fn ideal_std_error(values: &[f64]) -> f64 {
        if values.is_empty() {
            return f64::NAN;
        }
        let q = values.len() as f64;
        let m = values.iter().sum::<f64>() / q;
        values.iter().map(|v| (v - m) * (v - m)).sum::<f64>().sqrt() / q
    }

    /// Standard error, percentile and BCa intervals of the mean of `values` (`estimate` is
    /// their mean).
    pub fn summarize(&self, values: &[f64], estimate: f64, confidence: f64) -> QuerySummaryStats {
        if self.replicates == 0 || values.is_empty() {
            return QuerySummaryStats {
                std_error: f64::NAN,
                percentile: Interval::undefined(),
                bca: Interval::undefined(),
            };
        }
        let reps = self.means(values);
        let q = values.len() as f64;
        let total: f64 = values.iter().sum();
        let jack: Vec<f64> = if values.len() > 1 {
            values.iter().map(|v| (total - v) / (q - 1.0)).collect()
        } else {
            Vec::new()
        };
        QuerySummaryStats {
            std_error: stats::std_dev(&reps),
            percentile: stats::percentile_interval(&reps, confidence),
            bca: stats::bca_interval(estimate, &reps, &jack, confidence),
        }
    }
}

/// Result of the sample-noise bootstrap.
#[derive(Debug, Clone)]
pub struct NoiseResult {
    /// sd of the replicate means over all queries (pool-sample noise only).
    pub sd: f64,
    /// Percentile interval of the crossed replicates (pool weights × query resampling).
    pub crossed: Interval,
    /// Replicate means over all queries.
    pub replicates: Vec<f64>,
}

/// Reweight one query's level-0 sample (see the module docs). Returns the perturbed query
/// (one subset) and `S*` is drawn by the caller.
pub fn perturb_query<R: rand::Rng + ?Sized>(
    q: &QuerySummary,
    full_list: bool,
    tail_quantile: f64,
    rng: &mut R,
) -> QuerySummary {
    perturb_query_lazy(q, full_list, tail_quantile, None, rng)
}

/// [`perturb_query`], except that with `skip_list_from = Some(c_min)` the reweighted list is
/// left empty when every reweighted count is `≥ c_min` (no positive will use the tail then).
/// The random draws are the same either way.
pub fn perturb_query_lazy<R: rand::Rng + ?Sized>(
    q: &QuerySummary,
    full_list: bool,
    tail_quantile: f64,
    skip_list_from: Option<u64>,
    rng: &mut R,
) -> QuerySummary {
    let top = &q.top_scores[0];
    let len = top.len();
    let m = len.min(((2.0 * (1.0 - tail_quantile) * len as f64).ceil() as usize) + 64);
    let weights: Vec<u32> = (0..m).map(|_| stats::poisson1(rng)).collect();
    let mut prefix = Vec::with_capacity(m + 1);
    prefix.push(0u64);
    for &w in &weights {
        prefix.push(prefix.last().unwrap() + w as u64);
    }
    let w_top = prefix[m];
    let rest = stats::poisson(rng, (len - m) as f64) as usize;
    let mut last_k = m as u64;
    let mut extra = 0u64;
    let positives: Vec<PositiveSummary> = q
        .positives
        .iter()
        .map(|p| {
            // Ties count as above: the tied items follow the strictly-above ones in `top`.
            let k = p.pool_at_or_above(0);
            let k_star = if k <= m as u64 {
                prefix[k as usize]
            } else {
                if k > last_k {
                    extra += stats::poisson(rng, (k - last_k) as f64);
                    last_k = k;
                }
                w_top + extra
            };
            PositiveSummary {
                id: p.id.clone(),
                score: p.score,
                core_above: p.core_at_or_above(),
                pool_above: vec![k_star],
                core_ties: 0,
                pool_ties: vec![0],
            }
        })
        .collect();
    let skip = skip_list_from.is_some_and(|c| positives.iter().all(|p| p.pool_above[0] >= c));
    let mut list: Vec<f32> = Vec::new();
    if !skip {
        list.reserve(len + len / 8 + 16);
        for (&t, &w) in top[..m].iter().zip(&weights) {
            list.extend(std::iter::repeat_n(t, w as usize));
        }
        if len > m {
            let keep = rest.min(len - m);
            list.extend_from_slice(&top[m..m + keep]);
            let pad = *top.last().unwrap();
            list.extend(std::iter::repeat_n(pad, rest - keep));
        }
        if full_list && list.len() > len {
            list.truncate(len);
        }
    }
    QuerySummary {
        id: q.id.clone(),
        positives,
        top_scores: vec![list],
    }
}

/// Sample-noise bootstrap of the level-0 prediction at N (see the module docs); `offset[q]`
/// is query q's fixed move `δ_q` (empty: no move).
pub fn sample_noise(
    s: &Summary,
    boot: &QueryBootstrap,
    n_pool: f64,
    opts: &PredictOptions,
    offset: &[f64],
) -> NoiseResult {
    let reps = opts.sample_noise;
    let q = s.queries.len();
    let sample = s.subset_sizes[0];
    let (quantile, c_min) = match opts.estimator {
        Estimator::Evt(e) => (e.quantile, e.c_min),
        // c_min = 0: every positive takes its count, the quantile is never used.
        Estimator::Count => (crate::hardness::EvtOptions::DEFAULT.quantile, 0),
    };
    let cross = if boot.replicates >= reps {
        None
    } else {
        Some(QueryBootstrap::with_stream(q, reps, opts.seed, 2))
    };
    let cross_boot = cross.as_ref().unwrap_or(boot);
    let results: Vec<(f64, f64)> = (0..reps)
        .into_par_iter()
        .map(|r| {
            let mut rng = crate::numerics::rng_for(
                crate::numerics::StreamSeeding::Chained,
                opts.seed,
                1,
                r as u64,
            );
            let s_star = stats::poisson(&mut rng, sample as f64).max(1);
            let ap: Vec<f64> = s
                .queries
                .iter()
                .enumerate()
                .map(|(i, qs)| {
                    let full = qs.top_scores[0].len() >= s.top_m;
                    let pq = perturb_query_lazy(qs, full, quantile, Some(c_min), &mut rng);
                    let h = super::estimate_query_for_metric(&pq, 0, s_star, &opts.estimator);
                    maps::ap_at_k(&h, n_pool, opts.k, opts.map) + offset.get(i).unwrap_or(&0.0)
                })
                .collect();
            let all = super::mean(&ap);
            let ix = cross_boot.indices(r);
            let crossed = ix.iter().map(|&i| ap[i as usize]).sum::<f64>() / ix.len() as f64;
            (all, crossed)
        })
        .collect();
    let noise: Vec<f64> = results.iter().map(|r| r.0).collect();
    let crossed: Vec<f64> = results.iter().map(|r| r.1).collect();
    NoiseResult {
        sd: stats::std_dev(&noise),
        crossed: stats::percentile_interval(&crossed, opts.confidence),
        replicates: noise,
    }
}
