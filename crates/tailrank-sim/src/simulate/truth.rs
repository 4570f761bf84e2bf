//! The known truth of a simulated benchmark (`truth.json`): realized metrics at N, on the
//! nested sample levels and along the pool-size curve, per query and positive.

use super::config::SimConfig;
use super::discrete::DiscreteItem;
use super::law::ScoreLaw;
use crate::error::{Error, Result};
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Realized metric on a nested sample level (the evaluate-at-S_ℓ truth).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelTruth {
    pub fraction: f64,
    pub sample_size: u64,
    pub map_at_k: f64,
}

/// Realized metric on a pool of `pool_size` items (nested pools).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub pool_size: u64,
    pub map_at_k: f64,
}

/// Truth about one positive of one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositiveTruth {
    pub id: String,
    pub score: f32,
    /// True hardness `x = F̄(s)`, the fraction of the pool law scoring strictly above `s`.
    pub x: f64,
    pub core_above: u64,
    /// `K_j^N`, realized count in the full pool.
    pub pool_above_n: u64,
}

/// Truth about one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryTruth {
    pub id: String,
    pub instance: String,
    /// Realized AP@k at N.
    pub ap_at_k: f64,
    pub law: ScoreLaw,
    pub positives: Vec<PositiveTruth>,
    /// Hubs active for this query and burst copies ([`discrete`]), highest score first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discrete: Vec<DiscreteItem>,
}

/// The known truth of a simulated benchmark (written as `truth.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    pub config: SimConfig,
    pub tool_version: String,
    pub pool_size: u64,
    pub sample_size: u64,
    pub k: usize,
    /// Realized exact mAP@k of the full pool of size N (the target of prediction).
    pub map_at_k: f64,
    /// The expected-rank map fed with the true hardness, `r_j = j + C_j + N·x_j`: what a perfect
    /// hardness estimator would predict (its gap to `map_at_k` is the map's own error).
    pub oracle_map_at_k: f64,
    /// Realized mAP@k on each nested sample level (core + S_ℓ items): evaluate-at-S_ℓ.
    pub levels: Vec<LevelTruth>,
    /// Realized mAP@k on nested pools from S to N (last point is N).
    pub curve: Vec<CurvePoint>,
    pub queries: Vec<QueryTruth>,
}

impl Truth {
    /// Write as pretty JSON, atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::internal_at(path, format!("cannot serialise truth: {e}")))?;
        crate::atomic::write_bytes(path, &bytes)
    }

    /// Realized Recall@k and hit@1 of the full pool (means over queries), from the realized
    /// ranks `r_j = j + C_j + K_j^N`: Recall@k = `mean_q #{j: r_j ≤ k}/n_q`, hit@1 =
    /// `mean_q 1[r_1 = 1]`. Queries without positives count 0.
    pub fn recall_and_hit(&self) -> (f64, f64) {
        let nq = self.queries.len().max(1) as f64;
        let (mut rec, mut hit) = (0.0, 0.0);
        for q in &self.queries {
            let n = q.positives.len();
            if n == 0 {
                continue;
            }
            let rank =
                |j: usize| (j + 1) as u64 + q.positives[j].core_above + q.positives[j].pool_above_n;
            rec += (0..n).filter(|&j| rank(j) <= self.k as u64).count() as f64 / n as f64;
            hit += if rank(0) == 1 { 1.0 } else { 0.0 };
        }
        (rec / nq, hit / nq)
    }

    /// Read a `truth.json`.
    pub fn read(path: &Path) -> Result<Truth> {
        let bytes = crate::formats::read_input_file(path, "a simulation truth file")?;
        serde_json::from_slice(&bytes)
            .map_err(|e| Error::input(path, format!("not a simulation truth file: {e}")))
    }
}

/// A simulated benchmark: the summary a scan of the sample would have produced, and the truth.
#[derive(Debug, Clone)]
pub struct Simulation {
    pub summary: Summary,
    pub truth: Truth,
}
