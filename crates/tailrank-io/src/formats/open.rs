//! Opening a descriptor file by its extension: the one place that knows every reader, so that
//! the readers ([`super::npy`], [`super::hdf5`]) and the trait they implement
//! ([`super::descriptors`]) never import each other.

use super::descriptors::DescriptorSource;
use super::hdf5::Hdf5Descriptors;
use super::npy::NpyDescriptors;
use crate::error::{Error, Result};
use std::path::Path;

/// Open a descriptor file by extension: `.npy` (with ids from `ids`, or from a sibling file
/// `<stem>.ids.txt` / `<stem>_ids.txt` (or `.gz`) when `ids` is `None`) or `.h5`/`.hdf5` (ILIAS
/// extractor layout: datasets `features` and `index`; an explicit `ids` file replaces `index`).
pub fn open_descriptors(path: &Path, ids: Option<&Path>) -> Result<Box<dyn DescriptorSource>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if matches!(ext.as_str(), "npy" | "h5" | "hdf5") {
        match std::fs::metadata(path) {
            Err(_) => return Err(Error::missing(path, "descriptor file does not exist")),
            // A folder fails to map ("No such device"), a FIFO would block the reader.
            Ok(m) => {
                if let Some(what) = super::not_a_regular_file(&m) {
                    return Err(Error::input(
                        path,
                        format!("{what}: a descriptor file must be a regular file"),
                    ));
                }
            }
        }
    }
    // Half of an interrupted commit (`simulate --vectors` replaces its files together).
    crate::atomic::check_settled(path)?;
    match ext.as_str() {
        "npy" => Ok(Box::new(NpyDescriptors::open(path, ids)?)),
        "h5" | "hdf5" => Ok(Box::new(Hdf5Descriptors::open_with_ids(path, ids)?)),
        _ => Err(Error::unsupported(
            path,
            "unknown descriptor format: expected .npy (with an id file) or .h5/.hdf5",
        )),
    }
}
