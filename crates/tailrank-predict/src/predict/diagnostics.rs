//! Diagnostics (docs/method.md §9): sufficient budget over the nested levels, drift over the hash shards,
//! and the tail report.
//!
//! **Sufficient budget.** The prediction at N is recomputed from each nesting level ℓ (hardness
//! from subset ℓ with its own `S_ℓ`), each with its query-bootstrap standard error `SE_ℓ` (same
//! resampled query indices as level 0). Step ℓ+1 → ℓ *agrees* when
//! `|m_{ℓ+1} − m_ℓ| ≤ SE_ℓ` (the SE of the larger sample). The budget is sufficient when the
//! last step (level 1 → level 0) agrees; `first_sufficient_level` is the smallest sample (the
//! highest level c) such that every step from c down to 0 agrees: from `S_c` on, doubling the
//! sample no longer moved the prediction by more than its query noise.
//!
//! **Drift.** The prediction is recomputed from each of the H disjoint hash shards of the
//! sample (equal sizes `≈ S/H`). With `d_{h,q} = AP_{h,q} − mean_h' AP_{h',q}` and
//! `d_h = mean_q d_{h,q}` (shard h's deviation from the shard mean), its standard error
//! `SE(d_h)` comes from the query bootstrap of `d_{h,·}` (paired: the query noise common to all
//! shards cancels, what is left is the per-query sample noise). `z_h = d_h / SE(d_h)`,
//! `χ² = Σ_h z_h²` (≈ χ²_{H−1} under a uniform sample). Drift is flagged when
//! `max_h |z_h| > Z_CRIT` (3).
//!
//! **Tail report.** Share of positives resolved by count, by tail and as immune, and the
//! quartiles (numpy linear) of the fitted ξ over queries with a tail; per-query u, σ, ξ, n_u are
//! in `Prediction::queries`.

use super::bootstrap::QueryBootstrap;
use super::stats;
use super::trust::LevelAps;
use super::{baselines, hardness_for_metric, mean, per_query_ap, PredictOptions};
use crate::error::Result;
use crate::hardness::{Branch, QueryHardness};
use crate::summary::Summary;
use serde::{Deserialize, Serialize};

/// The prediction at N from one nesting level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LevelPrediction {
    /// Level number ℓ (0 = the whole sample).
    pub level: usize,
    /// Index in `Summary::subsets`.
    pub subset: usize,
    pub fraction: f64,
    pub sample_size: u64,
    /// Predicted mAP@k at N from this level.
    pub estimate: f64,
    /// Its query-bootstrap standard error.
    pub std_error: f64,
    /// Exact mAP@k on this level's sample gallery.
    pub evaluate_at_s: f64,
}

/// One doubling step of the budget check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BudgetStep {
    /// The smaller sample's level (ℓ + 1).
    pub from_level: usize,
    /// The larger sample's level (ℓ).
    pub to_level: usize,
    /// `|m_{ℓ+1} − m_ℓ|`.
    pub abs_diff: f64,
    /// `SE_ℓ`.
    pub std_error: f64,
    pub agrees: bool,
}

/// Sufficient-budget verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub steps: Vec<BudgetStep>,
    pub sufficient: bool,
    /// The highest level c (smallest sample) from which all steps down to level 0 agree.
    pub first_sufficient_level: Option<usize>,
    /// `S_c`.
    pub first_sufficient_size: Option<u64>,
}

/// The prediction from one drift shard.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShardPrediction {
    /// Index in `Summary::subsets`.
    pub subset: usize,
    pub sample_size: u64,
    pub estimate: f64,
    /// `d_h`: deviation from the mean of the shard predictions.
    pub diff: f64,
    /// `SE(d_h)` (paired query bootstrap).
    pub diff_std_error: f64,
    pub z: f64,
}

/// Drift verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    pub shards: Vec<ShardPrediction>,
    pub chi2: f64,
    pub dof: usize,
    pub max_abs_z: f64,
    /// `max |z_h| > 3`.
    pub flagged: bool,
}

/// Tail report of the level-0 hardness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailReport {
    pub positives: usize,
    pub by_count: usize,
    pub by_tail: usize,
    pub immune: usize,
    /// Queries with a fitted tail.
    pub queries_with_tail: usize,
    /// Quartiles (25, 50, 75 %) of ξ over queries with a tail.
    pub xi_quartiles: Option<[f64; 3]>,
    pub xi_min: Option<f64>,
    pub xi_max: Option<f64>,
}

/// The prediction at N from every nesting level (level 0 reuses `ap0`).
pub fn level_predictions(
    s: &Summary,
    ap0: &[f64],
    boot: &QueryBootstrap,
    n_pool: f64,
    opts: &PredictOptions,
) -> Result<Vec<LevelPrediction>> {
    let aps = super::trust::level_aps(s, ap0, n_pool, opts)?;
    Ok(level_predictions_from(s, &aps, boot, opts.k))
}

/// [`level_predictions`] from per-level AP vectors already computed.
pub fn level_predictions_from(
    s: &Summary,
    aps: &[LevelAps],
    boot: &QueryBootstrap,
    k: usize,
) -> Vec<LevelPrediction> {
    aps.iter()
        .map(|l| LevelPrediction {
            level: l.level,
            subset: l.subset,
            fraction: s.subsets[l.subset].fraction,
            sample_size: l.sample_size,
            estimate: mean(&l.at_n),
            std_error: boot.std_error(&l.at_n),
            evaluate_at_s: baselines::evaluate_at_subset(s, l.subset, k),
        })
        .collect()
}

/// Sufficient-budget verdict from the level predictions (None with fewer than 2 levels, or
/// without query-bootstrap standard errors, i.e. `bootstrap < 2`).
pub fn budget(levels: &[LevelPrediction]) -> Option<Budget> {
    if levels.len() < 2 || levels.iter().any(|l| !l.std_error.is_finite()) {
        return None;
    }
    let steps: Vec<BudgetStep> = (0..levels.len() - 1)
        .map(|l| {
            let d = (levels[l + 1].estimate - levels[l].estimate).abs();
            let se = levels[l].std_error;
            BudgetStep {
                from_level: levels[l + 1].level,
                to_level: levels[l].level,
                abs_diff: d,
                std_error: se,
                agrees: d <= se,
            }
        })
        .collect();
    let c = steps.iter().take_while(|s| s.agrees).count();
    Some(Budget {
        sufficient: c >= 1,
        first_sufficient_level: (c >= 1).then(|| levels[c].level),
        first_sufficient_size: (c >= 1).then(|| levels[c].sample_size),
        steps,
    })
}

impl Budget {
    /// Whether the last doubling (level 1 → 0) moved the prediction by more than
    /// `trust::Z_CRIT` of its query SEs: a move no query noise explains, so no tail fit has
    /// settled at this sample size (`predict::realized` then spans the count reading).
    pub fn unsettled(&self) -> bool {
        self.steps
            .iter()
            .find(|s| s.to_level == 0)
            .is_some_and(|s| s.abs_diff > super::trust::Z_CRIT * s.std_error)
    }
}

/// Drift check over the summary's shards (None with fewer than 2 shards, or fewer than 2
/// queries: one query's shard differences have no spread to measure them against).
pub fn drift(
    s: &Summary,
    boot: &QueryBootstrap,
    n_pool: f64,
    opts: &PredictOptions,
) -> Result<Option<Drift>> {
    let shards = s.shard_indices();
    if shards.len() < 2 || s.queries.len() < 2 {
        return Ok(None);
    }
    let mut aps = Vec::with_capacity(shards.len());
    for &h in &shards {
        aps.push(per_query_ap(
            &hardness_for_metric(s, h, opts)?,
            n_pool,
            opts.k,
            opts.map,
        ));
    }
    let q = s.queries.len();
    let hn = shards.len() as f64;
    let avg: Vec<f64> = (0..q)
        .map(|i| aps.iter().map(|a| a[i]).sum::<f64>() / hn)
        .collect();
    let mut out = Vec::with_capacity(shards.len());
    for (a, &h) in aps.iter().zip(&shards) {
        let d: Vec<f64> = a.iter().zip(&avg).map(|(x, m)| x - m).collect();
        let diff = mean(&d);
        let se = if boot.replicates >= 2 {
            boot.std_error(&d)
        } else {
            stats::std_dev(&d) / (q as f64).sqrt()
        };
        let z = if se > 0.0 {
            diff / se
        } else if diff.abs() < 1e-15 {
            0.0
        } else {
            f64::INFINITY
        };
        out.push(ShardPrediction {
            subset: h,
            sample_size: s.subset_sizes[h],
            estimate: mean(a),
            diff,
            diff_std_error: se,
            z,
        });
    }
    let chi2 = out.iter().map(|p| p.z * p.z).sum();
    let max_abs_z = out.iter().map(|p| p.z.abs()).fold(0.0, f64::max);
    Ok(Some(Drift {
        dof: out.len() - 1,
        chi2,
        max_abs_z,
        flagged: max_abs_z > stats::Z_CRIT,
        shards: out,
    }))
}

/// Tail report of a hardness vector.
pub fn tail_report(qs: &[QueryHardness]) -> TailReport {
    let mut r = TailReport {
        positives: 0,
        by_count: 0,
        by_tail: 0,
        immune: 0,
        queries_with_tail: 0,
        xi_quartiles: None,
        xi_min: None,
        xi_max: None,
    };
    let mut xi = Vec::new();
    for q in qs {
        for p in &q.positives {
            r.positives += 1;
            match p.branch {
                Branch::Count => r.by_count += 1,
                Branch::Tail => r.by_tail += 1,
                Branch::Immune => r.immune += 1,
            }
        }
        if let Some(t) = &q.tail {
            xi.push(t.fit.gpd.xi);
        }
    }
    r.queries_with_tail = xi.len();
    if !xi.is_empty() {
        xi.sort_by(f64::total_cmp);
        r.xi_quartiles = Some([
            crate::numerics::quantile_sorted(&xi, 0.25),
            crate::numerics::quantile_sorted(&xi, 0.5),
            crate::numerics::quantile_sorted(&xi, 0.75),
        ]);
        r.xi_min = xi.first().copied();
        r.xi_max = xi.last().copied();
    }
    r
}
