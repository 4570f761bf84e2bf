//! The streaming scan (docs/method.md §5): one pass over pool descriptors producing a mergeable
//! [`Summary`](crate::summary::Summary): per query the positives' scores, exact core counts
//! `C_j`, and per sample subset (nested levels and drift shards) the pool size seen, counts
//! `K_{j,ℓ}` and the top-M pool scores.
//!
//! Data path (imports point down this list, never back up):
//!
//! * [`job`]: a scan from files to a summary folder, as `tailrank scan` runs it;
//! * [`request`]: a scan of one query set as a front end asks for it (query set, pool size N,
//!   results paired with query ids), resolved from its inputs;
//! * [`engine`]: the entry points ([`engine::scan`], [`engine::scan_sets`]) and the algorithm's
//!   description;
//! * [`resume`], [`chunks`]: chunked, resumable scans over one prepared scan, and their plan;
//! * [`pass`]: a pool pass of a prepared scan: sampling, stages, verification, assembly;
//! * [`prepared`]: the pool-independent part (queries of every set, positives, core pass);
//! * [`pool`]: the drivers that feed blocks of pool rows to the collectors (plain and screened);
//! * [`collect`]: the collectors (top-M reservoirs, count histograms, results) and the
//!   summary of a query;
//! * [`block`], [`rows`]: item codes, blocks, buffers, the block runner; row reading and checks;
//! * [`config`], [`kernel`], [`screen`], [`speculate`], [`topm`]: options, the score kernels,
//!   the integer screen, pilot floors and reservoirs.
//!
//! The product, [`Summary`](crate::summary::Summary), and its on-disk format live in
//! [`crate::summary`]: prediction, exact evaluation and simulation read it without the scan.

pub mod block;
pub mod chunks;
pub mod collect;
mod compact;
pub mod config;
pub mod engine;
pub mod job;
pub mod kernel;
pub mod pass;
mod pool;
pub mod prepared;
pub mod request;
pub mod resume;
pub mod rows;
pub mod screen;
pub mod speculate;
pub mod topm;
