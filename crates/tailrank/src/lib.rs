//! tailrank: exact and predicted mAP@k for image retrieval against web-scale distractor pools.
//!
//! Data flow (see `docs/architecture.md`):
//!
//! ```text
//! descriptors (.npy / HDF5) ──► formats ──► scan ──► Summary ──► hardness (count | evt)
//!                                   │                    │              │
//! ground truth, results JSON ──► metric (exact)          └──► predict ◄─┘ (maps, baselines,
//!                                                                        bootstrap, diagnostics)
//! simulate ──► Summary + truth ──► predict ──► report (table, JSON, CSV, plots)
//! ```
//!
//! Definitions follow `docs/method.md` (numbered sections, cited as `docs/method.md §n`); every module documents the formula it implements.

pub mod ilias;
pub mod jobs;
pub mod plot;
pub mod report;

pub use tailrank_eval::{metric, protocols};
pub use tailrank_io::{atomic, error, numerics, outputs, sample, selected, table};
pub use tailrank_io::{Error, ErrorKind, Result, TOOL_VERSION};
pub use tailrank_predict::{maps, predict};
pub use tailrank_scan::{evt, formats, hardness, scan, summary};
#[cfg(feature = "simulate")]
pub use tailrank_sim::simulate;
