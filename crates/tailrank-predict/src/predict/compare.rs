//! Two models compared at N from summaries over the same queries and the same pool sample
//! (`docs/reference/predict.md`, "Comparing two models").
//!
//! With `AP_{a,q}(N)` and `AP_{b,q}(N)` the per-query predictions of models A and B at N
//! (the options' estimator and map, each model with the fit `predict` gives it: under the
//! level-selected fit its own levels choose; hardness from nesting level ℓ of each summary):
//!
//! - the predicted difference `Δ = mean_q d_q`, `d_q = AP_{a,q} − AP_{b,q}` (level 0);
//! - a **paired** query-bootstrap interval of Δ: the same resampled queries for both models,
//!   so the query difficulty both share cancels (the pool sample is shared too, so its
//!   noise largely cancels as well);
//! - the **extrapolation error** of Δ, `e = max_{ℓ ≥ 1} |Δ_ℓ − Δ_0|`, where `Δ_ℓ` is the
//!   difference predicted from nesting level ℓ alone (S_ℓ = S/2^ℓ, a larger step to N). It
//!   measures how much the predicted margin moves with the depth of the extrapolation; the
//!   paper restricts model comparisons to margins larger than that;
//! - the verdict: **separated** when the paired interval excludes 0 and `|Δ| > e`; otherwise
//!   not separated, with the reason.
//!
//! A scan of the whole pool (f = 1) compared at its own size (N = S) is not a prediction: every
//! per-query value is the exact one of its counts (`baselines::reports_at_sample`), there is no
//! extrapolation error, and the verdict rests on the paired interval alone.
//!
//! Otherwise the per-query values are the tail model's own: `predict`'s move to the centre of the
//! endpoint test's excess (`predict::endpoint_test::centre_of_excess`) is not applied here.
//! hit@1 is calibrated on each model's levels as `predict` does (`predict::hit_calibration`).

use super::baselines::reports_at_sample;
use super::bootstrap::QueryBootstrap;
use super::diagnostics::level_predictions_from;
use super::hit_calibration;
use super::stats::Interval;
use super::trust::{level_aps, level_hardness, LevelAps};
use super::PredictOptions;
use super::{check_sample_size, check_summary, mean, per_query_ap, target_pool_size};
use crate::error::{Error, Result};
use crate::hardness::QueryHardness;
use crate::maps;
use crate::metric::QueryReport;
use crate::summary::Summary;
use serde::{Deserialize, Serialize};

/// The comparison of two models at N.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub model_a: String,
    pub model_b: String,
    pub query_set: String,
    pub pool_size: u64,
    pub sample_size: u64,
    pub k: usize,
    pub n_queries: usize,
    /// A whole-pool scan compared at its own size (f = 1, N = S): every value is the exact one
    /// of the counts, nothing is extrapolated (module docs).
    #[serde(default)]
    pub exact: bool,
    /// Predicted mAP@k at N of each model (level 0; exact for a whole-pool scan at N = S).
    pub map_at_k_a: f64,
    pub map_at_k_b: f64,
    /// Predicted mean Recall@k and hit@1 at N of each model (level 0, the tail model's own;
    /// hit@1 calibrated on the model's levels, as `predict` reports it before any move).
    #[serde(default)]
    pub recall_at_k_a: f64,
    #[serde(default)]
    pub recall_at_k_b: f64,
    #[serde(default)]
    pub hit_at_1_a: f64,
    #[serde(default)]
    pub hit_at_1_b: f64,
    /// Δ = A − B.
    pub difference: f64,
    /// Paired query-bootstrap standard error and percentile interval of Δ (NaN without a
    /// bootstrap).
    pub std_error: f64,
    pub interval: Interval,
    /// `(S_ℓ, Δ_ℓ)` for every nesting level, level 0 first.
    pub level_differences: Vec<(u64, f64)>,
    /// `max_{ℓ ≥ 1} |Δ_ℓ − Δ_0|` (None with a single level).
    pub extrapolation_error: Option<f64>,
    pub separated: bool,
    pub reason: String,
}

/// The mean of `metric` over the queries' hardness `h`.
fn mean_of(h: &[QueryHardness], metric: impl Fn(&QueryHardness) -> f64) -> f64 {
    h.iter().map(metric).sum::<f64>() / h.len() as f64
}

/// Mean hit@1 at N of the level-0 hardness `h` (sample `s0`), calibrated on the levels `aps`
/// (`hit_calibration`), as `predict` gives it before any move to the centre of the excess.
fn calibrated_hit(h: &[QueryHardness], s0: u64, nf: f64, aps: &[LevelAps]) -> f64 {
    let levels = level_hardness(aps);
    let scales = hit_calibration::calibrate(h, s0, nf, &levels).map(|c| c.scales);
    mean_of(h, |q| hit_calibration::hit_at_1(q, nf, scales.as_ref()))
}

/// `b` with its queries in the order of `a`'s, when both hold the same query ids in another
/// order (two scans whose ground truths list the queries differently); None otherwise.
fn in_query_order_of(b: &Summary, a: &Summary) -> Option<Summary> {
    let same_order = a
        .queries
        .iter()
        .map(|q| &q.id)
        .eq(b.queries.iter().map(|q| &q.id));
    if same_order || a.queries.len() != b.queries.len() {
        return None;
    }
    let at: std::collections::HashMap<&str, usize> = b
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| (q.id.as_str(), i))
        .collect();
    let order: Vec<usize> = a
        .queries
        .iter()
        .map(|q| at.get(q.id.as_str()).copied())
        .collect::<Option<_>>()?;
    let mut out = b.clone();
    out.queries = order.iter().map(|&i| b.queries[i].clone()).collect();
    Some(out)
}

/// Check that `a` and `b` were scanned over the same queries, positives and pool sample, and
/// record the same pool size unless `pool_size` gives the one to compare at.
fn check_pair(a: &Summary, b: &Summary, pool_size: Option<u64>) -> Result<()> {
    let bad = |what: String| Err(Error::mismatch(format!("cannot compare: {what}")));
    if a.query_set != b.query_set {
        return bad(format!(
            "query sets differ ({:?} vs {:?})",
            a.query_set, b.query_set
        ));
    }
    if a.queries.len() != b.queries.len() {
        return bad(format!(
            "{} queries vs {}",
            a.queries.len(),
            b.queries.len()
        ));
    }
    let ids_b: std::collections::HashSet<&str> = b.queries.iter().map(|q| q.id.as_str()).collect();
    if let Some(q) = a.queries.iter().find(|q| !ids_b.contains(q.id.as_str())) {
        return bad(format!(
            "query {:?} of the first summary is not among the second's queries",
            q.id
        ));
    }
    for (qa, qb) in a.queries.iter().zip(&b.queries) {
        if qa.id != qb.id {
            return bad(format!(
                "query {:?} vs {:?} at the same position",
                qa.id, qb.id
            ));
        }
        let mut pa: Vec<&str> = qa.positives.iter().map(|p| p.id.as_str()).collect();
        let mut pb: Vec<&str> = qb.positives.iter().map(|p| p.id.as_str()).collect();
        pa.sort_unstable();
        pb.sort_unstable();
        if pa != pb {
            return bad(format!("query {:?} has different positives", qa.id));
        }
    }
    if a.seed != b.seed || a.fraction != b.fraction {
        return bad(format!(
            "the pool samples differ (fraction {} seed {} vs fraction {} seed {})",
            a.fraction, a.seed, b.fraction, b.seed
        ));
    }
    if a.subsets != b.subsets {
        let (na, nb) = (a.nesting(), b.nesting());
        return bad(if na != nb {
            format!(
                "the pool samples are nested differently ({na} vs {nb}; a summary grown by a \
                 factor other than 2, 4, 8, … keeps its base's deeper levels): scan or grow \
                 both the same way"
            )
        } else {
            format!(
                "the summaries' subsets differ in their hash ranges or kept top lists (M = {} \
                 vs {}): scan both with the same options",
                a.top_m, b.top_m
            )
        });
    }
    if a.subset_sizes != b.subset_sizes {
        return bad(format!(
            "the pool samples differ in size (S = {:?} vs {:?}): the same sampled items must \
             be scanned for both models",
            a.subset_sizes, b.subset_sizes
        ));
    }
    // Same sizes, other items: the pool fingerprints (sorted id hashes) tell, when both have one.
    if let (Some(ha), Some(hb)) = (&a.pool_id_hashes, &b.pool_id_hashes) {
        if ha != hb {
            let only_a = ha.iter().filter(|h| hb.binary_search(h).is_err()).count();
            return bad(format!(
                "the pool samples hold different items ({only_a} of the {} sampled ids of the \
                 first are not in the second, by the summaries' pool fingerprints): the same \
                 sampled items must be scanned for both models",
                ha.len()
            ));
        }
    }
    if a.pool_size != b.pool_size && pool_size.is_none() {
        let n = |s: &Summary| {
            s.pool_size
                .map_or("none recorded".into(), |n| format!("N = {n}"))
        };
        return bad(format!(
            "the pool sizes differ ({} vs {}): give the pool size to compare at (`--pool-size`, \
             Python `pool_size=`)",
            n(a),
            n(b)
        ));
    }
    Ok(())
}

/// Compare model A (`a`) with model B (`b`) at N (module docs). `opts.sample_noise` is not
/// used.
pub fn compare(a: &Summary, b: &Summary, opts: &PredictOptions) -> Result<Comparison> {
    opts.check()?;
    check_summary(a)?;
    check_summary(b)?;
    let b_in_a_order = in_query_order_of(b, a);
    let b = b_in_a_order.as_ref().unwrap_or(b);
    check_pair(a, b, opts.pool_size)?;
    let sample = a.subset_sizes[0];
    check_sample_size(sample)?;
    // Each model with the fit `predict` would give it (its own levels choose).
    let ((opts_a, h_a), (opts_b, h_b)) =
        (super::resolved_fit(a, opts)?, super::resolved_fit(b, opts)?);
    let n = target_pool_size(opts, a.pool_size, sample)?;
    let nf = n as f64;
    // A scan of the whole pool compared at its own size: every count is known, so each
    // metric is the exact one of its counts (no tail model, nothing to extrapolate).
    let exact = a.fraction >= 1.0 && n <= sample;
    // Per model: the per-query AP@k at N and, exact, the mean Recall@k and hit@1 of the counts.
    let per_query = |h: &[QueryHardness]| -> (Vec<f64>, Option<(f64, f64)>) {
        if !exact {
            return (per_query_ap(h, nf, opts.k, opts.map), None);
        }
        let r = reports_at_sample(h, opts.k);
        let of = |m: fn(&QueryReport) -> f64| r.iter().map(m).sum::<f64>() / r.len() as f64;
        let ap = r.iter().map(|q| q.ap_at_k).collect();
        (ap, Some((of(|q| q.recall_at_k), of(|q| q.hit_at_1))))
    };
    let ((ap_a, exact_a), (ap_b, exact_b)) = (per_query(&h_a), per_query(&h_b));
    let d: Vec<f64> = ap_a.iter().zip(&ap_b).map(|(x, y)| x - y).collect();
    let difference = mean(&d);
    let boot = QueryBootstrap::new(d.len(), opts.bootstrap, opts.seed);
    let (std_error, interval) = if opts.bootstrap >= 2 {
        let st = boot.summarize(&d, difference, opts.confidence);
        (st.std_error, st.percentile)
    } else {
        (f64::NAN, Interval::undefined())
    };
    let (aps_a, aps_b) = (
        level_aps(a, &ap_a, nf, &opts_a)?,
        level_aps(b, &ap_b, nf, &opts_b)?,
    );
    let la = level_predictions_from(a, &aps_a, &boot, opts.k);
    let lb = level_predictions_from(b, &aps_b, &boot, opts.k);
    let level_differences: Vec<(u64, f64)> = la
        .iter()
        .zip(&lb)
        .map(|(x, y)| (x.sample_size, x.estimate - y.estimate))
        .collect();
    let extrapolation_error = (level_differences.iter().skip(1))
        .map(|&(_, dl)| (dl - difference).abs())
        .reduce(f64::max)
        .filter(|_| !exact);
    let excludes_zero = interval.lo.is_finite() && (interval.lo > 0.0 || interval.hi < 0.0);
    let pct = |v: f64| format!("{:.2}", 100.0 * v);
    let (separated, reason) = match (excludes_zero, extrapolation_error) {
        _ if d.len() < 2 => (
            false,
            "one query: no paired interval (resampling one query gives it back every time)"
                .to_string(),
        ),
        (false, _) if !interval.lo.is_finite() => (
            false,
            "no paired interval (bootstrap off): the margin cannot be judged".to_string(),
        ),
        (excludes, _) if exact => (
            excludes,
            format!(
                "the whole pool is scanned (f = 1, S = N): the difference is exact for these \
                 queries, and its paired interval [{}, {}] over other query sets {} 0",
                pct(interval.lo),
                pct(interval.hi),
                if excludes { "excludes" } else { "contains" }
            ),
        ),
        (false, _) => (
            false,
            format!(
                "the paired interval [{}, {}] contains 0: the queries do not separate the models",
                pct(interval.lo),
                pct(interval.hi)
            ),
        ),
        (true, None) => (
            false,
            "a single nesting level: the extrapolation error of the margin is unknown".to_string(),
        ),
        (true, Some(e)) if difference.abs() <= e => (
            false,
            format!(
                "the margin {} is within the extrapolation error {} (the margin moves that \
                 much between nested samples)",
                pct(difference.abs()),
                pct(e)
            ),
        ),
        (true, Some(e)) => (
            true,
            format!(
                "the paired interval excludes 0 and the margin {} exceeds the extrapolation \
                 error {}",
                pct(difference.abs()),
                pct(e)
            ),
        ),
    };
    // Recall@k and hit@1 at N: exact from the counts, or the tail model's (hit@1 calibrated).
    let side = |h: &[QueryHardness], aps: &[LevelAps]| {
        let recall = mean_of(h, |q| maps::recall_at_k(q, nf, opts.k));
        (recall, calibrated_hit(h, sample, nf, aps))
    };
    let (recall_at_k_a, hit_at_1_a) = exact_a.unwrap_or_else(|| side(&h_a, &aps_a));
    let (recall_at_k_b, hit_at_1_b) = exact_b.unwrap_or_else(|| side(&h_b, &aps_b));
    Ok(Comparison {
        model_a: a.model.clone(),
        model_b: b.model.clone(),
        query_set: a.query_set.clone(),
        pool_size: n,
        sample_size: sample,
        k: opts.k,
        n_queries: d.len(),
        exact,
        map_at_k_a: mean(&ap_a),
        map_at_k_b: mean(&ap_b),
        recall_at_k_a,
        recall_at_k_b,
        hit_at_1_a,
        hit_at_1_b,
        difference,
        std_error,
        interval,
        level_differences,
        extrapolation_error,
        separated,
        reason,
    })
}
