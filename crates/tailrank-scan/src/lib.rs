//! tailrank-scan: the exact streaming scan and what it writes (`docs/architecture.md`). The
//! scan ([`scan`]) streams the pool against the queries and keeps per-positive counts and the
//! top-M scores; the summary ([`summary`]) is the format it writes, merges and grows; the
//! hardness ([`hardness`], with its GPD tail fits in [`evt`] and its CSV in
//! [`formats::hardness_csv`]) is each positive's pool fraction above it, read from a summary.
//!
//! The modules of tailrank-io are re-exported at the root, so paths such as `crate::error`
//! and `crate::formats::open_descriptors` read the same in every crate.

pub mod evt;
pub mod hardness;
pub mod scan;
pub mod summary;

pub use tailrank_io::{atomic, error, numerics, outputs, sample, selected, table};
pub use tailrank_io::{Error, ErrorKind, Result, TOOL_VERSION};

/// The formats of tailrank-io and the hardness CSV.
pub mod formats {
    pub use tailrank_io::formats::*;
    pub mod hardness_csv;
}
