//! Per-positive hardness estimators (SPEC 6): `x_{q,j}` = fraction of the pool scoring strictly
//! above positive j of query q; over a uniform pool of size N, `K_j ~ Binomial(N, x_j)`.
//!
//! - `count`: `x̂ = K_j / S`.
//! - `evt` (default): `x̂ = K_j / S` when `K_j ≥ c_min`, else the GPD tail
//!   `x̂ = (n_u/S)·(1 + ξ(s−u)/σ)^(−1/ξ)`, 0 beyond the endpoint `u − σ/ξ` (immune).
//!
//! TODO(evt helper): implement `estimate_query` / `estimate_summary`, the hardness CSV artifact.

use crate::evt::GpdFit;
use serde::{Deserialize, Serialize};

/// Which hardness estimator.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    Count,
    Evt(EvtOptions),
}

/// Options of the tail-aware estimator.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EvtOptions {
    /// M: number of top sample scores the tail is fitted on (default 4000).
    pub top_m: usize,
    /// Threshold quantile of the top-M scores (default 0.95, numpy linear interpolation).
    pub quantile: f64,
    /// Counts at or above `c_min` are trusted as they are (default 5).
    pub c_min: u64,
}

impl Default for EvtOptions {
    fn default() -> Self {
        EvtOptions {
            top_m: 4000,
            quantile: 0.95,
            c_min: 5,
        }
    }
}

/// How a positive's hardness was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Branch {
    Count,
    Tail,
    Immune,
}

/// Fitted tail of one query: threshold u and GPD above it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QueryTail {
    pub u: f64,
    pub n_u: usize,
    pub fit: GpdFit,
}

/// Hardness of one positive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositiveHardness {
    pub id: String,
    pub score: f32,
    /// C_j, exact.
    pub core_above: u64,
    /// K_j in the sample the estimate came from.
    pub pool_above: u64,
    /// x̂_j.
    pub x_hat: f64,
    pub branch: Branch,
}

/// Hardness of one query's positives (sorted by score, descending).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryHardness {
    pub query_id: String,
    /// S, the sample size the estimate used.
    pub sample_size: u64,
    pub tail: Option<QueryTail>,
    pub positives: Vec<PositiveHardness>,
}
