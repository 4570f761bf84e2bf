//! Input and output formats: descriptors (`.npy`, ILIAS HDF5), id lists (text, `.gz`), ground
//! truth (ILIAS layout, JSON), and results files (ILIAS JSON). See `docs/formats.md`.

pub mod descriptors;
pub mod gt;
pub mod hdf5;
pub mod ids;
pub mod npy;
pub mod results;

pub use descriptors::{open_descriptors, DescriptorSource, InMemoryDescriptors};
pub use gt::{load_ground_truth, QuerySet};
