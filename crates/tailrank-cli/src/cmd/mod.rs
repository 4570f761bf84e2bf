//! One file per subcommand.

pub mod compare;
pub mod curve;
pub mod demo;
pub mod eval;
pub mod ilias;
pub mod merge;
pub mod predict;
pub mod sample;
pub mod scan;
pub mod simulate;
pub mod validate;
