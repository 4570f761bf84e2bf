//! The level-calibrated count law (docs/method.md §8, docs/notes/2026-12-estimator-log.md "Level-calibrated count
//! law"): an experimental second opinion beside evt that predicts the *law* of each positive's
//! unsampled count `D = K_N − K_S`, learned on the nested levels of the summary and never on
//! a truth.
//!
//! **Bins.** A positive with sample count `K < c_min` and an evt fit from a sample of `S`
//! items falls in the *deep* bin when it is immune or its expected sample count
//! `d = x̂·S` is below [`DEPTH_EDGES`]`[0]`, else in tail bin `b = #{edges ≤ d}`. Positives
//! with `K ≥ c_min` (or without a tail) are not binned.
//!
//! **Calibration.** For every nested level ℓ ≥ 1 (sample `S_ℓ`, fit and bins from level ℓ
//! alone) the items of level 0 outside level ℓ are an independent hash sample of
//! `S_0 − S_ℓ` items, so `Y = K_0 − K_ℓ ~ Poisson(λ·e)` with `e = S_0/S_ℓ − 1` in the deep
//! bin (`λ = S_ℓ·x`) and `e = (S_0/S_ℓ − 1)·d` in a tail bin (`λ = x/x̂`, the ratio of the
//! true to the fitted hardness). Per bin, the law `G_b` of `λ` is the nonparametric maximum
//! likelihood estimate over the pairs of all levels: weights on [`grid`] maximising
//! `Π_i Σ_g w_g Poisson(Y_i; λ_g e_i)`, by [`EM_STEPS`] EM steps from uniform weights.
//!
//! **Prediction at N.** A binned level-0 positive gets `D ~ Σ_g w_g Poisson(λ_g·r·s)`, with
//! `r = (N − S_0)/S_0` and `s = 1` (deep) or `s = d_0`; the others keep evt's count law
//! `D ~ Poisson(x̂·(N − S_0))`. With `r_j = j + C_j + K_{S,j} + D_j`:
//! `AP@k = 1/min(k, n)·Σ_j E[1{r_j ≤ k}·j/r_j]`, Recall@k = `mean_j P(r_j ≤ k)` and
//! hit@1 = `P(r_1 = 1)`.
//!
//! The assumption is that the law of `λ` in a bin is the same at every level (self-similar
//! misfit); docs/notes/2026-12-estimator-log.md records where that fails (a trend over levels in the deep bin).

use super::{hardness_for_metric, PredictOptions};
use crate::error::Result;
use crate::hardness::{Branch, Estimator, EvtOptions, PositiveHardness, QueryHardness};
use crate::summary::Summary;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Edges of the tail bins on the expected sample count `d = x̂·S`.
pub const DEPTH_EDGES: [f64; 5] = [1e-3, 1e-2, 0.05, 0.2, 1.0];
/// EM steps of the per-bin NPMLE.
pub const EM_STEPS: usize = 300;
/// Number of bins: the deep bin and one per depth edge.
const BINS: usize = DEPTH_EDGES.len() + 1;
/// Grid weights below this are dropped from the predictive mixture.
const MIN_WEIGHT: f64 = 1e-10;

/// The support of every law: 0 and 120 log-spaced points on [1e-4, 1e3].
pub fn grid() -> Vec<f64> {
    let n = 120;
    std::iter::once(0.0)
        .chain((0..n).map(|i| 10f64.powf(-4.0 + 7.0 * i as f64 / (n - 1) as f64)))
        .collect()
}

/// The level-calibrated predictions at N (fractions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CalibratedMetrics {
    pub map_at_k: f64,
    pub recall_at_k: f64,
    pub hit_at_1: f64,
}

/// Per bin, the NPMLE weights on [`grid`] (None: no calibration pair fell in the bin) and
/// the number of pairs it used.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelCalibration {
    pub laws: Vec<Option<Vec<f64>>>,
    pub pairs: Vec<usize>,
}

/// The bin of a positive whose evt hardness came from a sample of `sample_size`, and the
/// exposure factor of its law (1 in the deep bin, `d = x̂·S` in a tail bin); None when it is
/// not binned (module docs).
fn bin_of(p: &PositiveHardness, sample_size: u64, c_min: u64) -> Option<(usize, f64)> {
    if p.pool_above >= c_min {
        return None;
    }
    match p.branch {
        Branch::Immune => Some((0, 1.0)),
        Branch::Tail => {
            let d = p.x_hat * sample_size as f64;
            let b = DEPTH_EDGES.iter().filter(|&&e| e <= d).count();
            Some((b, if b == 0 { 1.0 } else { d }))
        }
        Branch::Count => None,
    }
}

/// `ln m!` for m = 0..=max.
fn ln_factorials(max: u64) -> Vec<f64> {
    let mut t = Vec::with_capacity(max as usize + 1);
    let mut acc = 0.0;
    t.push(0.0);
    for m in 1..=max {
        acc += (m as f64).ln();
        t.push(acc);
    }
    t
}

/// NPMLE of a mixing law on `grid` from pairs `(y, e)` with `y ~ Poisson(λ·e)`: EM from
/// uniform weights, [`EM_STEPS`] steps. Equal pairs are merged into one row with its
/// multiplicity (the deep bin has a few distinct exposures only), which leaves the
/// estimate unchanged.
pub fn npmle(pairs: &[(u64, f64)], grid: &[f64]) -> Vec<f64> {
    let g = grid.len();
    let mut rows: Vec<(u64, f64, f64)> = Vec::new();
    let mut sorted = pairs.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    for (y, e) in sorted {
        match rows.last_mut() {
            Some(r) if r.0 == y && r.1.to_bits() == e.to_bits() => r.2 += 1.0,
            _ => rows.push((y, e, 1.0)),
        }
    }
    let lf = ln_factorials(rows.iter().map(|r| r.0).max().unwrap_or(0));
    let lik: Vec<f64> = rows
        .iter()
        .flat_map(|&(y, e, _)| {
            let lf = lf[y as usize];
            grid.iter().map(move |&t| {
                let mu = t * e;
                if mu <= 0.0 {
                    if y == 0 {
                        1.0
                    } else {
                        0.0
                    }
                } else {
                    (y as f64 * mu.ln() - mu - lf).exp()
                }
            })
        })
        .collect();
    let mut w = vec![1.0 / g as f64; g];
    let n = pairs.len().max(1) as f64;
    for _ in 0..EM_STEPS {
        let mut next = vec![0.0; g];
        for (row, r) in lik.chunks_exact(g).zip(&rows) {
            let m: f64 = row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + 1e-300;
            let c = r.2 / m;
            for ((nx, a), b) in next.iter_mut().zip(row).zip(&w) {
                *nx += c * a * b;
            }
        }
        for (wi, nx) in w.iter_mut().zip(next) {
            *wi = nx / n;
        }
    }
    w
}

/// evt hardness of subset `sub`: taken from `fitted` (pairs of subset index and hardness the
/// caller already has, with the options `evt`) when there, else estimated. A query whose
/// positives all have `K ≥ c_min` is not fitted (none of them is binned, and the count branch
/// does not need the tail).
fn evt_hardness<'a>(
    s: &Summary,
    sub: usize,
    evt: &EvtOptions,
    fitted: &[(usize, &'a [QueryHardness])],
) -> Result<std::borrow::Cow<'a, [QueryHardness]>> {
    if let Some((_, h)) = fitted.iter().find(|(i, _)| *i == sub) {
        return Ok(std::borrow::Cow::Borrowed(h));
    }
    let opts = PredictOptions {
        estimator: Estimator::Evt(*evt),
        ..PredictOptions::DEFAULT
    };
    Ok(std::borrow::Cow::Owned(hardness_for_metric(s, sub, &opts)?))
}

/// Calibrate the bins on the nested levels of `s` (module docs), given `h0`, the evt hardness
/// of level 0, and `fitted`, the evt hardness of deeper levels the caller already has (see
/// [`predict_calibrated`]); None when the summary has fewer than two levels.
pub fn calibrate(
    s: &Summary,
    evt: &EvtOptions,
    h0: &[QueryHardness],
    fitted: &[(usize, &[QueryHardness])],
) -> Result<Option<LevelCalibration>> {
    let levels = s.level_indices();
    if levels.len() < 2 {
        return Ok(None);
    }
    let s0 = s.subset_sizes[levels[0]] as f64;
    let mut pairs: Vec<Vec<(u64, f64)>> = vec![Vec::new(); BINS];
    for &sub in &levels[1..] {
        let sl = s.subset_sizes[sub];
        if sl == 0 {
            continue;
        }
        let e = s0 / sl as f64 - 1.0;
        let hl = evt_hardness(s, sub, evt, fitted)?;
        for (ql, q0) in hl.iter().zip(h0) {
            for (pl, p0) in ql.positives.iter().zip(&q0.positives) {
                if let Some((b, scale)) = bin_of(pl, sl, evt.c_min) {
                    pairs[b].push((p0.pool_above.saturating_sub(pl.pool_above), e * scale));
                }
            }
        }
    }
    let grid = grid();
    let laws = pairs
        .par_iter()
        .map(|p| (!p.is_empty()).then(|| npmle(p, &grid)))
        .collect();
    Ok(Some(LevelCalibration {
        laws,
        pairs: pairs.iter().map(Vec::len).collect(),
    }))
}

/// `Σ_{m=0}^{m_max} Poisson(m; μ)·f(m)`, in log space, skipped (0) when the Chernoff bound
/// `P(X ≤ m_max) ≤ exp(−μ + m_max + m_max·ln(μ/m_max))` is below e^-40.
pub fn poisson_weighted_sum(mu: f64, m_max: u64, f: impl Fn(u64) -> f64) -> f64 {
    if mu.is_nan() || mu <= 0.0 {
        return f(0);
    }
    let mf = m_max as f64;
    if mu > mf && m_max > 0 && -mu + mf + mf * (mu / mf).ln() < -40.0 {
        return 0.0;
    }
    let lmu = mu.ln();
    let mut lp = -mu;
    let mut s = 0.0;
    for m in 0..=m_max {
        if m > 0 {
            lp += lmu - (m as f64).ln();
        }
        let p = lp.exp();
        s += p * f(m);
        if m as f64 > mu && p < 1e-18 {
            break;
        }
    }
    s
}

/// The level-calibrated mAP@k, Recall@k and hit@1 at pool size `n_pool` (module docs); None
/// when the summary has fewer than two levels or `n_pool` is not above `S_0`. `fitted`: the
/// evt hardness (options `evt`) of the subsets the caller already has, as `(subset index,
/// hardness)`; the levels missing there are estimated here.
pub fn predict_calibrated(
    s: &Summary,
    evt: &EvtOptions,
    fitted: &[(usize, &[QueryHardness])],
    n_pool: f64,
    k: usize,
) -> Result<Option<CalibratedMetrics>> {
    let Some(&sub0) = s.level_indices().first() else {
        return Ok(None);
    };
    let s0 = s.subset_sizes[sub0];
    if s0 == 0 || n_pool.is_nan() || n_pool <= s0 as f64 || k == 0 {
        return Ok(None);
    }
    let h0 = evt_hardness(s, sub0, evt, fitted)?;
    let Some(cal) = calibrate(s, evt, &h0, fitted)? else {
        return Ok(None);
    };
    let unseen = n_pool - s0 as f64;
    let r = unseen / s0 as f64;
    let grid = grid();
    let per_query: Vec<(f64, f64, f64)> = h0
        .par_iter()
        .map(|q| {
            let n = q.positives.len();
            if n == 0 {
                return (0.0, 0.0, 0.0);
            }
            let (mut ap, mut recall, mut hit) = (0.0, 0.0, 0.0);
            for (i, p) in q.positives.iter().enumerate() {
                let j = (i + 1) as u64;
                let base = j + p.core_above + p.pool_above;
                let law: Vec<(f64, f64)> = match bin_of(p, s0, evt.c_min)
                    .and_then(|(b, scale)| cal.laws[b].as_ref().map(|w| (w, scale)))
                {
                    Some((w, scale)) => grid
                        .iter()
                        .zip(w)
                        .filter(|(_, &wi)| wi > MIN_WEIGHT)
                        .map(|(&t, &wi)| (t * r * scale, wi))
                        .collect(),
                    None => vec![(p.x_hat.clamp(0.0, 1.0) * unseen, 1.0)],
                };
                let total: f64 = law.iter().map(|a| a.1).sum();
                if base > k as u64 || total <= 0.0 {
                    continue;
                }
                let room = k as u64 - base;
                for &(mu, w) in &law {
                    let w = w / total;
                    ap += w * poisson_weighted_sum(mu, room, |m| j as f64 / (base + m) as f64);
                    recall += w * poisson_weighted_sum(mu, room, |_| 1.0);
                    if base == 1 {
                        hit += w * (-mu).exp();
                    }
                }
            }
            (
                (ap / k.min(n) as f64).min(1.0),
                (recall / n as f64).min(1.0),
                hit.min(1.0),
            )
        })
        .collect();
    let nq = per_query.len().max(1) as f64;
    let sum = |f: fn(&(f64, f64, f64)) -> f64| per_query.iter().map(f).sum::<f64>() / nq;
    Ok(Some(CalibratedMetrics {
        map_at_k: sum(|t| t.0),
        recall_at_k: sum(|t| t.1),
        hit_at_1: sum(|t| t.2),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npmle_recovers_a_two_point_law() {
        // 70% at λ = 0, 30% at λ = 2, exposure 3: the weight above λ = 0.5 is ~0.3 and the
        // fitted mean ~0.6.
        let mut rng = crate::numerics::rng_for(crate::numerics::StreamSeeding::Chained, 7, 0, 0);
        let pairs: Vec<(u64, f64)> = (0..3000)
            .map(|i| {
                let y = if i % 10 < 3 {
                    crate::predict::stats::poisson(&mut rng, 6.0)
                } else {
                    0
                };
                (y, 3.0)
            })
            .collect();
        let g = grid();
        let w = npmle(&pairs, &g);
        let high: f64 = g
            .iter()
            .zip(&w)
            .filter(|(t, _)| **t > 0.5)
            .map(|x| x.1)
            .sum();
        let mean: f64 = g.iter().zip(&w).map(|(t, w)| t * w).sum();
        assert!((high - 0.3).abs() < 0.03, "{high}");
        assert!((mean - 0.6).abs() < 0.05, "{mean}");
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn poisson_sum_matches_the_pmf() {
        for &mu in &[0.0, 1e-6, 0.3, 4.0, 60.0, 900.0] {
            let direct: f64 = (0..=50u64)
                .map(|m| {
                    let lf: f64 = (1..=m).map(|i| (i as f64).ln()).sum();
                    let p = if mu == 0.0 {
                        (m == 0) as u64 as f64
                    } else {
                        (m as f64 * f64::ln(mu) - mu - lf).exp()
                    };
                    p / (1 + m) as f64
                })
                .sum();
            let s = poisson_weighted_sum(mu, 50, |m| 1.0 / (1 + m) as f64);
            assert!((s - direct).abs() < 1e-12, "mu {mu}: {s} vs {direct}");
        }
        // Far past the mean the bound skips the sum.
        assert_eq!(poisson_weighted_sum(5e6, 1000, |_| 1.0), 0.0);
    }

    #[test]
    fn bins_follow_the_depth_edges() {
        let p = |x_hat: f64, branch: Branch, k: u64| PositiveHardness {
            id: "p".into(),
            score: 0.5,
            core_above: 0,
            pool_above: k,
            x_hat,
            branch,
        };
        let s = 1_000_000;
        assert_eq!(bin_of(&p(0.0, Branch::Immune, 0), s, 5), Some((0, 1.0)));
        assert_eq!(bin_of(&p(1e-10, Branch::Tail, 0), s, 5), Some((0, 1.0)));
        let (b, d) = bin_of(&p(3e-8, Branch::Tail, 0), s, 5).unwrap();
        assert_eq!(b, 2);
        assert!((d - 0.03).abs() < 1e-12);
        assert_eq!(bin_of(&p(2e-6, Branch::Tail, 1), s, 5).unwrap().0, 5);
        assert_eq!(bin_of(&p(1e-5, Branch::Tail, 5), s, 5), None);
        assert_eq!(bin_of(&p(1e-5, Branch::Count, 2), s, 5), None);
    }
}
