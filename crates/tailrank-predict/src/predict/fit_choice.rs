//! Level-selected tail fit (docs/method.md §8, "The level-selected fit"): among a grid of evt
//! fit choices, the one whose level-1 hardness predicts the known level-0 sample best, and its
//! prediction at N. It never sees a truth; the nested levels are its held-out data.
//!
//! For a candidate `c = (m, q)` (fit the tail on the top `m` scores of a subset, threshold at
//! their `q` quantile; the options' `c_min`), with `A^c_{1,i}(S_0)` the expected AP@k of query
//! i at pool size `S_0` from level 1's hardness under `c` (binomial map, as in the trust
//! verdict's in-sample check) and `E_i` the exact AP@k of the level-0 sample gallery:
//!
//! ```text
//! e_1(c) = mean_i (A^c_{1,i}(S_0) − E_i)        c* = argmin_c |e_1(c)|  (first in grid order on ties)
//! ```
//!
//! The candidates are [`FIT_TOPS`] × [`QUANTILES`] with `m` capped at the summary's M (the
//! duplicates this makes are dropped), plus the options' own fit when it is not in the grid.
//! The prediction at N is `c*`'s level-0 hardness through the options' map; Recall@k and hit@1
//! come from the same hardness (binomial law of the pool count).
//!
//! *Why level 1.* It is the held-out step with the most items (`S_0/2` against `S_0`). The
//! deeper levels see a tail `S_0/S_ℓ` times shallower and carry the fit's small-sample bias,
//! which the selection would then fit (`docs/notes/2026-12-estimator-log.md`, "The level-selected fit", measures
//! levels 1–4; "The level-selected fit as the default" measures selecting on the step from
//! level 2 to level 1). The selection consumes the level-1 check: `predict::trust` compares
//! the two fits' predictions instead (its fit-choice test).
//!
//! *Why it is the default* (`PredictOptions::DEFAULT.fit`): on the validation corpus at the
//! ILIAS size its worst tuned family is 3.3 points off at 5% and 3.9 at 1%, against 7.4 and
//! 13.7 for the paper's fit, and on real vector geometry at 5% within 3.2 points where the
//! paper's fit misses by up to 17 (`docs/notes/2026-12-estimator-log.md`, "The level-selected fit as the
//! default").

use super::bootstrap::QueryBootstrap;
use super::{hardness_for, hardness_for_metric, mean, per_query_ap, PredictOptions};
use crate::error::{Error, Result};
use crate::hardness::{Estimator, EvtOptions, QueryHardness};
use crate::maps::{self, MapKind};
use crate::summary::Summary;
use serde::{Deserialize, Serialize};

/// Which evt fit gives the estimate (the CLI's `--fit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitMode {
    /// The options' fit (`EvtOptions`, the paper's by default); the level-selected fit is the
    /// other opinion. `Default` is this mode because options and run files written before
    /// the field ran it; the default of a prediction is `PredictOptions::DEFAULT.fit`.
    #[default]
    Fixed,
    /// The level-selected fit (`PredictOptions::DEFAULT`'s); the options' fit is the other
    /// opinion. Falls back to the options' fit where there is no choice to make (the count
    /// estimator, too few nesting levels, a hardness file).
    LevelSelected,
}

impl FitMode {
    /// Every mode.
    pub const ALL: [FitMode; 2] = [FitMode::Fixed, FitMode::LevelSelected];

    /// The names, in the order of [`FitMode::ALL`].
    pub const NAMES: [&'static str; 2] = [FitMode::ALL[0].as_str(), FitMode::ALL[1].as_str()];

    pub const fn as_str(&self) -> &'static str {
        match self {
            FitMode::Fixed => "fixed",
            FitMode::LevelSelected => "level-selected",
        }
    }
}

impl std::str::FromStr for FitMode {
    type Err = Error;

    /// `fixed` or `level-selected`; an error lists the names.
    fn from_str(s: &str) -> Result<FitMode> {
        FitMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s.trim())
            .ok_or_else(|| {
                Error::option(format!(
                    "unknown fit {s:?} (known: {})",
                    FitMode::NAMES.join(", ")
                ))
            })
    }
}

/// The options a prediction runs with once its fit is chosen, the level-selected fit, and the
/// other opinion's estimate at N.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedFit {
    /// The options with the estimate's fit: the options themselves under [`FitMode::Fixed`],
    /// the chosen candidate's `EvtOptions` under [`FitMode::LevelSelected`].
    pub opts: PredictOptions,
    /// The level-selected fit (None for the count estimator or a single level).
    pub choice: Option<FitChoice>,
    /// mAP@k at N of the fit that is not the estimate's: `m_fit` under `Fixed`, the options'
    /// fit under `LevelSelected`.
    pub other_estimate: Option<f64>,
    /// The level-0 hardness of the estimate's fit (`hardness_for(s, 0, &opts)`).
    pub hardness: Vec<QueryHardness>,
}

/// Resolve the fit of a prediction from summary `s` for pool size `n_pool` (module docs), with
/// `exact_target` the exact per-query AP@k of the sample gallery the selection predicts
/// (subset `selection_subsets(s).1`) and `boot` the prediction's query bootstrap.
pub fn resolve(
    s: &Summary,
    opts: &PredictOptions,
    exact_target: &[f64],
    boot: &QueryBootstrap,
    n_pool: f64,
) -> Result<ResolvedFit> {
    let chosen = choose_fit(s, opts, exact_target, boot, n_pool)?;
    let Some((c, chosen_h0)) = chosen else {
        // No choice to make (the count estimator, or too few levels): the options' own fit,
        // which the report then names.
        return Ok(ResolvedFit {
            opts: PredictOptions {
                fit: FitMode::Fixed,
                ..*opts
            },
            choice: None,
            other_estimate: None,
            hardness: hardness_for(s, 0, opts)?,
        });
    };
    let Estimator::Evt(own) = opts.estimator else {
        unreachable!("choose_fit gives a choice only for evt")
    };
    let chosen = *c.chosen();
    // The options' own level-0 hardness: the chosen candidate's when c* is the options' fit
    // (the grid holds it, with its M capped at the summary's), so it is fitted once.
    let own_is_chosen = chosen.fit_top == own.top_m.min(s.top_m) && chosen.quantile == own.quantile;
    let own_h0 = if own_is_chosen {
        None
    } else {
        Some(hardness_for(s, 0, opts)?)
    };
    match opts.fit {
        FitMode::Fixed => Ok(ResolvedFit {
            opts: *opts,
            other_estimate: Some(c.map_at_k),
            choice: Some(c),
            hardness: own_h0.unwrap_or(chosen_h0),
        }),
        FitMode::LevelSelected => {
            let run = PredictOptions {
                estimator: Estimator::Evt(EvtOptions {
                    top_m: chosen.fit_top,
                    quantile: chosen.quantile,
                    ..own
                }),
                ..*opts
            };
            let own_h0 = own_h0.as_ref().unwrap_or(&chosen_h0);
            Ok(ResolvedFit {
                opts: run,
                other_estimate: Some(mean(&per_query_ap(own_h0, n_pool, opts.k, opts.map))),
                choice: Some(c),
                hardness: chosen_h0,
            })
        }
    }
}

/// The nesting level whose hardness predicts the exact sample gallery of the level above it
/// (level `SELECTION_LEVEL − 1`, at its pool size) for the selection. *Choice:* 1 (module
/// docs); 2 was measured as the alternative that leaves the level-1 check to the verdict, and
/// lost accuracy (mean |error| over the tuned families 1.36 against 1.13 points at 5%).
pub const SELECTION_LEVEL: usize = 1;

/// The summary subsets of the selection's step, `(from, target)`: levels `SELECTION_LEVEL`
/// and `SELECTION_LEVEL − 1`. None when the summary has too few nesting levels.
pub fn selection_subsets(s: &Summary) -> Option<(usize, usize)> {
    let levels = s.level_indices();
    Some((*levels.get(SELECTION_LEVEL)?, levels[SELECTION_LEVEL - 1]))
}

/// Numbers of top scores the candidates fit the tail on (capped at the summary's M).
pub const FIT_TOPS: [usize; 3] = [1000, 2000, 4000];

/// Threshold quantiles of the candidates: 20%, 10%, 5% and 2% of the fitted scores exceed it.
pub const QUANTILES: [f64; 4] = [0.8, 0.9, 0.95, 0.98];

/// One fit choice and its level-1 in-sample error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FitCandidate {
    /// Top scores fitted (`EvtOptions::top_m`).
    pub fit_top: usize,
    /// Threshold quantile (`EvtOptions::quantile`).
    pub quantile: f64,
    /// `e_1(c)`: level 1's prediction of the known `S_0` minus its exact metric.
    pub in_sample_error: f64,
}

/// The level-selected fit and its prediction at N.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitChoice {
    /// Every candidate, in grid order.
    pub candidates: Vec<FitCandidate>,
    /// Index of `c*` in `candidates`.
    pub chosen: usize,
    /// Paired query-bootstrap SE of `e_1(c*)` (NaN without a bootstrap).
    pub in_sample_std_error: f64,
    /// mAP@k, Recall@k and hit@1 at N from `c*`'s level-0 hardness.
    pub map_at_k: f64,
    pub recall_at_k: f64,
    pub hit_at_1: f64,
}

impl FitChoice {
    /// The chosen candidate `c*`.
    pub fn chosen(&self) -> &FitCandidate {
        &self.candidates[self.chosen]
    }
}

/// The candidate grid for a summary keeping `m_kept` scores per list and the options' fit.
pub fn candidates(m_kept: usize, own: &EvtOptions) -> Vec<EvtOptions> {
    let mut out: Vec<EvtOptions> = Vec::new();
    let mut push = |o: EvtOptions| {
        if !out
            .iter()
            .any(|c| c.top_m == o.top_m && c.quantile == o.quantile)
        {
            out.push(o);
        }
    };
    for &m in &FIT_TOPS {
        for &quantile in &QUANTILES {
            push(EvtOptions {
                top_m: m.min(m_kept),
                quantile,
                c_min: own.c_min,
            });
        }
    }
    push(EvtOptions {
        top_m: own.top_m.min(m_kept),
        ..*own
    });
    out
}

/// The level-selected fit of summary `s` for pool size `n_pool`, with `exact_target` the exact
/// per-query AP@k of the sample gallery the selection predicts (subset
/// `selection_subsets(s).1`), with the chosen fit's level-0 hardness. None for the count
/// estimator, or with fewer than `SELECTION_LEVEL + 1` nesting levels.
pub fn choose_fit(
    s: &Summary,
    opts: &PredictOptions,
    exact_target: &[f64],
    boot: &QueryBootstrap,
    n_pool: f64,
) -> Result<Option<(FitChoice, Vec<QueryHardness>)>> {
    let Estimator::Evt(own) = opts.estimator else {
        return Ok(None);
    };
    let Some((from, target)) = selection_subsets(s) else {
        return Ok(None);
    };
    let sub0 = s.level_indices()[0];
    let s_target = s.subset_sizes[target] as f64;
    let k = opts.k;
    let with = |o: EvtOptions| PredictOptions {
        estimator: Estimator::Evt(o),
        ..*opts
    };
    let grid = candidates(s.top_m, &own);
    let mut diffs = Vec::with_capacity(grid.len());
    let mut candidates = Vec::with_capacity(grid.len());
    for o in &grid {
        let h = hardness_for_metric(s, from, &with(*o))?;
        let d: Vec<f64> = per_query_ap(&h, s_target, k, MapKind::Binomial)
            .iter()
            .zip(exact_target)
            .map(|(a, e)| a - e)
            .collect();
        candidates.push(FitCandidate {
            fit_top: o.top_m,
            quantile: o.quantile,
            in_sample_error: mean(&d),
        });
        diffs.push(d);
    }
    let chosen = (0..candidates.len())
        .min_by(|&a, &b| {
            let (ea, eb) = (
                candidates[a].in_sample_error.abs(),
                candidates[b].in_sample_error.abs(),
            );
            ea.total_cmp(&eb).then(a.cmp(&b))
        })
        .expect("the grid is never empty");
    let h0 = hardness_for(s, sub0, &with(grid[chosen]))?;
    let per_query = |f: &dyn Fn(&QueryHardness) -> f64| mean(&h0.iter().map(f).collect::<Vec<_>>());
    let choice = FitChoice {
        in_sample_std_error: if boot.replicates >= 2 {
            boot.std_error(&diffs[chosen])
        } else {
            f64::NAN
        },
        chosen,
        map_at_k: mean(&per_query_ap(&h0, n_pool, k, opts.map)),
        recall_at_k: per_query(&|q| maps::recall_at_k(q, n_pool, k)),
        hit_at_1: per_query(&|q| maps::hit_at_1(q, n_pool)),
        candidates,
    };
    Ok(Some((choice, h0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_is_capped_at_the_kept_m_without_duplicates() {
        let g = candidates(1500, &EvtOptions::DEFAULT);
        // 1000 and 1500 (2000 and 4000 capped to 1500) × 4 quantiles.
        assert_eq!(g.len(), 8);
        assert!(g.iter().all(|o| o.top_m <= 1500));
        let own = EvtOptions {
            top_m: 3000,
            quantile: 0.93,
            c_min: 7,
        };
        let g = candidates(4000, &own);
        assert_eq!(g.len(), 13);
        assert_eq!(g.last(), Some(&own));
        assert!(g.iter().all(|o| o.c_min == 7));
    }
}
