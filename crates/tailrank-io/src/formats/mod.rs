//! Input and output formats: descriptors (`.npy`, ILIAS HDF5), id lists (text, `.gz`), ground
//! truth (ILIAS layout, JSON), results files (ILIAS JSON) and the hardness artifact (CSV). See
//! `docs/reference/formats.md`. [`json`] is the order-preserving JSON reader behind [`gt`] and
//! [`results`]. The hardness CSV (`formats::hardness_csv`, `docs/reference/hardness.md`) is read and
//! written next to the hardness types, one crate up (tailrank-scan).

pub mod csv;
pub mod descriptors;
pub mod gt;
pub mod hdf5;
pub mod ids;
pub mod json;
pub mod npy;
pub mod open;
pub mod results;
pub mod row_ids;

pub use descriptors::{blocks, read_all, DescriptorSource, Dtype, InMemoryDescriptors, SourceInfo};
pub use gt::{load_ground_truth, QuerySet};
pub use hdf5::Hdf5Descriptors;
pub use ids::{check_unique, read_ids, write_ids};
pub use npy::{write_npy, NpyDescriptors};
pub use open::open_descriptors;
pub use row_ids::RowIds;
