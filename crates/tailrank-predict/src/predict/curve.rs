//! Metric-vs-N curves (docs/method.md §7): the predicted mAP@k over a log grid of pool sizes with its
//! query-bootstrap percentile band (the same resampled query indices at every N), the count
//! baseline through the same map, the curve-fit baselines, and the evaluate-at-S points of the
//! nested levels, and the realized-metric band of these queries (`predict::realized`): at
//! each N, `[min(m_ER, m_Bin) − z·sd_shards, max(m_ER, m_Bin) + z·sd_shards]` with
//! `sd_shards = sd_h(m_h(N))/√H` over the drift shards (the trend shift of a prediction is
//! not applied along the curve; None without shards), its upper end capped at
//! `max(m̂(N), m_S)` for N ≥ S, where the evaluate-at-S value `m_S` bounds the metric of a pool
//! that holds the sample (`predict::realized`). Under `PredictOptions::excess_centre`
//! (the default) every N above the sample carries `predict`'s move to the centre of the
//! endpoint test's decayed excess, its rate carried to that N by the survivor decay
//! (`hardness::ExcessMove::rate_at`), and then `predict`'s move to the centre of the rare
//! items above the top positive at the same rate per unsampled item
//! (`predict::spacing_test`), so the curve at the pool's N is `predict`'s estimate.

use super::baselines::{self, LevelPoint};
use super::bootstrap::QueryBootstrap;
use super::stats;
use super::{check_summary, count_hardness, mean, per_query_ap, spacing_test, PredictOptions};
use crate::error::{Error, Result};
use crate::hardness::{Estimator, ExcessMove, HardnessMeta, QueryHardness, SpacingMove};
use crate::maps;
use crate::summary::Summary;
use serde::{Deserialize, Serialize};

/// One pool size of a curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub pool_size: f64,
    pub estimate: f64,
    /// Query-bootstrap percentile band (NaN with `bootstrap = 0`).
    pub lo: f64,
    pub hi: f64,
    pub count: f64,
    pub power_law: Option<f64>,
    pub log_linear: Option<f64>,
    /// Realized-metric band of these queries (see the module docs); None without shards.
    #[serde(default)]
    pub realized_lo: Option<f64>,
    #[serde(default)]
    pub realized_hi: Option<f64>,
}

/// A predicted metric-vs-N curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    pub model: String,
    pub query_set: String,
    pub k: usize,
    pub sample_size: u64,
    /// The pool's N when known (marked on the plot).
    pub pool_size: Option<u64>,
    pub confidence: f64,
    pub points: Vec<CurvePoint>,
    /// Evaluate-at-S_ℓ at the nested levels (empty from a hardness file).
    pub level_points: Vec<LevelPoint>,
    /// The move to the centre of the excess along the curve (None: the tail model's own).
    #[serde(default)]
    pub excess_centre: Option<ExcessMove>,
    /// The move to the centre of the rare items above the top positive along the curve.
    #[serde(default)]
    pub spacing_centre: Option<SpacingMove>,
}

/// The most points a curve may have (each is a prediction over every query): a larger grid
/// is refused before it is allocated.
pub const MAX_POINTS: usize = 10_000;

fn grid(lo: f64, hi: f64, per_decade: usize) -> Result<Vec<f64>> {
    let points = (hi / lo).log10() * per_decade as f64 + 1.0;
    if lo > 0.0 && hi >= lo && hi.is_finite() && points > MAX_POINTS as f64 {
        return Err(Error::option(format!(
            "the curve would have {points:.0} points ({per_decade} per decade from {lo} to \
             {hi}); at most {MAX_POINTS}: give fewer points per decade"
        )));
    }
    let g = maps::log_grid(lo, hi, per_decade);
    if g.is_empty() {
        return Err(Error::option(format!(
            "bad curve range: need 0 < from <= to and points per decade >= 1 (from {lo}, to {hi}, {per_decade} per decade)"
        )));
    }
    Ok(g)
}

#[allow(clippy::too_many_arguments)]
fn build(
    model: &str,
    query_set: &str,
    h0: &[QueryHardness],
    sample_size: u64,
    pool_size: Option<u64>,
    level_points: Vec<LevelPoint>,
    shards: &[Vec<QueryHardness>],
    opts: &PredictOptions,
    g: &[f64],
    (centre, spacing): (Option<ExcessMove>, Option<SpacingMove>),
) -> Curve {
    let z = crate::numerics::norm_ppf(0.5 + opts.confidence / 2.0);
    let other = match opts.map {
        maps::MapKind::ExpectedRank => maps::MapKind::Binomial,
        maps::MapKind::Binomial => maps::MapKind::ExpectedRank,
    };
    let boot = QueryBootstrap::new(h0.len(), opts.bootstrap, opts.seed);
    let counts = count_hardness(h0);
    let a = (1.0 - opts.confidence) / 2.0;
    let at_sample = mean(&baselines::per_query_at_sample(h0, opts.k));
    let points = g
        .iter()
        .map(|&n| {
            let mut ap = per_query_ap(h0, n, opts.k, opts.map);
            let rate = centre.map_or(0.0, |m| m.rate_at(n, sample_size as f64));
            let at_zero = if rate > 0.0 || spacing.is_some() {
                per_query_ap(h0, n, opts.k, maps::MapKind::Binomial)
            } else {
                Vec::new()
            };
            if rate > 0.0 {
                let moved = super::endpoint_test::with_excess_rate(h0, rate, n);
                let at_rate = per_query_ap(&moved, n, opts.k, maps::MapKind::Binomial);
                ap = super::endpoint_test::centre_of_excess(&ap, &at_zero, &at_rate);
            }
            if let Some(m) = spacing {
                let d = spacing_test::rate_above_effect(h0, m.rate, n, opts.k, &at_zero);
                ap = spacing_test::centre_of_spacing(&ap, &d, m.weight);
            }
            let (lo, hi) = if boot.replicates > 0 {
                let mut reps = boot.means(&ap);
                reps.sort_by(f64::total_cmp);
                (
                    crate::numerics::quantile_sorted(&reps, a),
                    crate::numerics::quantile_sorted(&reps, 1.0 - a),
                )
            } else {
                (f64::NAN, f64::NAN)
            };
            let estimate = mean(&ap);
            let (realized_lo, realized_hi) = if shards.len() >= 2 {
                let m: Vec<f64> = shards
                    .iter()
                    .map(|h| mean(&per_query_ap(h, n, opts.k, opts.map)))
                    .collect();
                let h = z * stats::std_dev(&m) / (m.len() as f64).sqrt();
                let o = mean(&per_query_ap(h0, n, opts.k, other));
                let mut hi = estimate.max(o) + h;
                if n >= sample_size as f64 {
                    hi = hi.min(at_sample.max(estimate));
                }
                (Some(estimate.min(o) - h), Some(hi))
            } else {
                (None, None)
            };
            CurvePoint {
                pool_size: n,
                estimate,
                realized_lo,
                realized_hi,
                lo,
                hi,
                count: mean(&per_query_ap(&counts, n, opts.k, opts.map)),
                power_law: baselines::power_law(&level_points, n),
                log_linear: baselines::log_linear(&level_points, n),
            }
        })
        .collect();
    Curve {
        model: model.to_string(),
        query_set: query_set.to_string(),
        k: opts.k,
        sample_size,
        pool_size,
        confidence: opts.confidence,
        points,
        level_points,
        excess_centre: centre,
        spacing_centre: spacing,
    }
}

/// The predicted curve from a summary over `log_grid(lo, hi, per_decade)`.
pub fn curve(
    s: &Summary,
    opts: &PredictOptions,
    lo: f64,
    hi: f64,
    per_decade: usize,
) -> Result<Curve> {
    opts.check()?;
    check_summary(s)?;
    super::check_sample_size(s.subset_sizes[0])?;
    if matches!(opts.estimator, Estimator::Evt(_)) && s.top_m < 2 {
        // `predict` falls back to the count baseline with a warning; a curve has no place for it.
        return Err(Error::unsupported_msg(format!(
            "the summary keeps only the top M = {} pool score(s) per query and subset, and the \
             tail fit of a curve needs at least 2: scan again with a larger top M (`--top-m`), \
             or use `--estimator count`",
            s.top_m
        )));
    }
    // The fit `predict` would use, resolved once (the move's prediction below reuses it).
    let (opts, h0) = super::resolved_fit(s, opts)?;
    let opts = &opts;
    let g = grid(lo, hi, per_decade)?;
    if opts.pool_size.or(s.pool_size).is_some() {
        super::target_pool_size(opts, s.pool_size, s.subset_sizes[0])?;
    }
    let pts = baselines::level_points(s, opts.k);
    let shards = s
        .shard_indices()
        .into_iter()
        .map(|i| super::hardness_for_metric(s, i, opts))
        .collect::<Result<Vec<_>>>()?;
    // The move needs the endpoint test of a prediction; its decayed hazard does not depend on
    // N, so any N above the sample serves as the reference.
    let moves = if opts.excess_centre {
        let s0 = s.subset_sizes[0];
        let n = opts.pool_size.or(s.pool_size).unwrap_or(0).max(2 * s0);
        let p = super::predict(
            s,
            &PredictOptions {
                pool_size: Some(n),
                sample_noise: 0,
                ..*opts
            },
        )?;
        p.carried_moves()
    } else {
        (None, None)
    };
    Ok(build(
        &s.model,
        &s.query_set,
        &h0,
        s.subset_sizes[0],
        opts.pool_size.or(s.pool_size),
        pts,
        &shards,
        opts,
        &g,
        moves,
    ))
}

/// The predicted curve from a hardness artifact (no level points, no curve fits).
pub fn curve_from_hardness(
    meta: &HardnessMeta,
    qs: &[QueryHardness],
    opts: &PredictOptions,
    lo: f64,
    hi: f64,
    per_decade: usize,
) -> Result<Curve> {
    if qs.is_empty() || qs.iter().any(|q| q.positives.is_empty()) {
        return Err(Error::input_msg(
            "hardness holds no query, or a query without positives",
        ));
    }
    let opts = &super::for_hardness_file(meta, opts);
    opts.check()?;
    super::check_sample_size(meta.sample_size)?;
    if opts.pool_size.or(meta.pool_size).is_some() {
        super::target_pool_size(opts, meta.pool_size, meta.sample_size)?;
    }
    let g = grid(lo, hi, per_decade)?;
    Ok(build(
        &meta.model,
        &meta.query_set,
        qs,
        meta.sample_size,
        opts.pool_size.or(meta.pool_size),
        Vec::new(),
        &[],
        opts,
        &g,
        (
            meta.excess_move.filter(|_| opts.excess_centre),
            meta.spacing_move.filter(|_| opts.excess_centre),
        ),
    ))
}
