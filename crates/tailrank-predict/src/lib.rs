//! tailrank-predict: the full-pool mAP@k predicted from a hash sample (`docs/method.md`,
//! `docs/architecture.md`). [`maps`] turns per-positive hardness into expected ranks and
//! AP@k (the expected-rank and binomial maps); [`predict`] assembles the
//! prediction: estimate, bootstrap intervals, endpoint test, verdict, baselines, levels,
//! diagnostics, comparison of two models and the next step.
//!
//! The modules of the crates below are re-exported at the root, so paths such as
//! `crate::hardness::QueryHardness` read the same in every crate.

pub mod maps;
pub mod predict;

pub use tailrank_eval::{metric, protocols};
pub use tailrank_io::{atomic, error, numerics, outputs, sample, selected, table};
pub use tailrank_io::{Error, ErrorKind, Result, TOOL_VERSION};
pub use tailrank_scan::{evt, formats, hardness, scan, summary};
