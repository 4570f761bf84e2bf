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

pub mod atomic;
pub mod error;
pub mod evt;
pub mod formats;
pub mod hardness;
pub mod ilias;
pub mod maps;
pub mod metric;
pub mod numerics;
pub mod outputs;
pub mod plot;
pub mod predict;
pub mod protocols;
pub mod report;
pub mod sample;
pub mod scan;
pub mod selected;
pub mod simulate;
pub mod summary;

pub use error::{Error, ErrorKind, Result};

/// Version of this library, recorded in every file it writes.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
