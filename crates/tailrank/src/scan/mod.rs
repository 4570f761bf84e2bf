//! The streaming scan (docs/method.md §5): one pass over pool descriptors producing a mergeable
//! [`Summary`]: per query the positives' scores, exact core counts `C_j`, and per sample subset
//! (nested levels and drift shards) the pool size seen, counts `K_{j,ℓ}` and the top-M pool
//! scores.

pub mod engine;
pub mod kernel;
mod pool;
pub mod resume;
pub mod screen;
pub mod speculate;
pub mod summary;
pub mod topm;

pub use summary::{PositiveSummary, QuerySummary, Subset, SubsetKind, Summary};
