//! `.npy` descriptors: 2-D, C order, f16 or f32, memory-mapped (zero copy), with an id file.
//! TODO(formats helper): implement.

use super::descriptors::{DescriptorSource, Dtype};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// A memory-mapped `.npy` matrix with row ids.
pub struct NpyDescriptors {
    path: PathBuf,
}

impl NpyDescriptors {
    pub fn open(path: &Path, _ids: Option<&Path>) -> Result<Self> {
        Err(Error::file(path, "npy reader not implemented yet"))
    }
}

impl DescriptorSource for NpyDescriptors {
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
        Err(Error::file(&self.path, "npy reader not implemented yet"))
    }
    fn digest(&self) -> String {
        String::new()
    }
}
