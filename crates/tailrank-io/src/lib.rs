//! tailrank-io: the foundation and the formats every other tailrank crate stands on (lowest
//! crate of the workspace; `docs/architecture.md`). Foundation: the one error type
//! ([`error`]), the numerics ([`numerics`]) and the one table model of the reports
//! ([`table`]). Formats and I/O: descriptors, ids, ground truth and results files
//! ([`formats`]), the hash sample ([`sample`]), selected-row files ([`selected`]) and atomic,
//! locked outputs ([`atomic`], [`outputs`]).

pub mod atomic;
pub mod error;
pub mod formats;
pub mod numerics;
pub mod outputs;
pub mod sample;
pub mod selected;
pub mod table;

pub use error::{Error, ErrorKind, Result};

/// Version of this library, recorded in every file it writes (every crate of the workspace
/// shares this version).
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
