//! From hardness to a metric at any pool size N (SPEC 7).
//!
//! - expected-rank: `r_j(N) = j + C_j + N·x̂_j`, `AP@k = 1/min(k,n) Σ_j 1[r_j ≤ k]·j/r_j`;
//!   fed with realized fractions `K/N` it reproduces the exact metric.
//! - binomial: `E[j/(j + C_j + K)]·1[rank ≤ k]` under `K ~ Binomial(N, x̂_j)`, in log space.
//!
//! TODO(evt helper): implement.

use serde::{Deserialize, Serialize};

/// Which hardness-to-metric map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MapKind {
    ExpectedRank,
    Binomial,
}
