//! HDF5 descriptors as written by the ILIAS feature extractor (`features` N×D, `index` strings), read in pure Rust.
//! TODO(formats helper): implement.

use super::descriptors::{DescriptorSource, Dtype};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// An ILIAS HDF5 feature file.
pub struct Hdf5Descriptors {
    path: PathBuf,
}

impl Hdf5Descriptors {
    pub fn open(path: &Path) -> Result<Self> {
        Err(Error::file(path, "HDF5 reader not implemented yet"))
    }
}

impl DescriptorSource for Hdf5Descriptors {
    fn path(&self) -> &Path {
        &self.path
    }
    fn rows(&self) -> usize {
        0
    }
    fn dim(&self) -> usize {
        0
    }
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }
    fn ids(&self) -> &[String] {
        &[]
    }
    fn read_rows(&self, _start: usize, _out: &mut [f32]) -> Result<()> {
        Err(Error::file(&self.path, "HDF5 reader not implemented yet"))
    }
    fn digest(&self) -> String {
        String::new()
    }
}
