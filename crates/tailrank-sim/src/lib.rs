//! tailrank-sim: the simulator and the validation behind `tailrank demo`, `simulate` and
//! `validate` (`docs/architecture.md`, `docs/reference/validation.md`). [`simulate`] draws synthetic
//! pools whose full-pool truth is known (score laws, vector corpora, web-scale families);
//! [`validation_report`] renders and writes the validation tables that compare predictions
//! with that truth. Research code: the Python wheel leaves it out (the facade's `simulate`
//! feature).
//!
//! The modules of the crates below are re-exported at the root, so paths such as
//! `crate::predict::Prediction` read the same in every crate.

pub mod simulate;
pub mod validation_report;

pub use tailrank_eval::{metric, protocols};
pub use tailrank_io::{atomic, error, numerics, outputs, sample, selected, table};
pub use tailrank_io::{Error, ErrorKind, Result, TOOL_VERSION};
pub use tailrank_predict::{maps, predict};
pub use tailrank_scan::{evt, formats, hardness, scan, summary};
