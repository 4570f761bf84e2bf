//! Helpers shared by the integration tests of `tailrank` and `tailrank-cli` (a dev-dependency
//! of both, never published): the Python interpreter of the independent references
//! ([`python`]), running the `tailrank` binary ([`cli`]), synthetic summaries for the
//! prediction tests ([`predict_support`]), a brute-force summary reference
//! ([`summary_util`]) and their generator ([`rng`]).

pub mod cli;
pub mod predict_support;
pub mod python;
pub mod rng;
pub mod summary_util;
