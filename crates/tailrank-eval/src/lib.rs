//! tailrank-eval: exact retrieval metrics (`docs/architecture.md`). [`metric`] computes ILIAS
//! mAP@k and its variants from a ranked list or from a summary's per-positive counts;
//! [`protocols`] holds other benchmarks' average precision (revisited Oxford/Paris, INSTRE);
//! `tables` renders both reports as text (`EvalReport::table`, `RevisitedReport::table`).
//!
//! The modules of the crates below are re-exported at the root, so paths such as
//! `crate::summary::Summary` read the same in every crate.

pub mod metric;
pub mod protocols;
mod tables;

pub use tailrank_io::{atomic, error, numerics, outputs, sample, selected, table};
pub use tailrank_io::{Error, ErrorKind, Result, TOOL_VERSION};
pub use tailrank_scan::{evt, formats, hardness, scan, summary};
