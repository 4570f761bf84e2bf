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

/// What stands at a path that must hold a regular file, when it does not: `"a folder"`, or
/// `"not a regular file"` for a FIFO, socket or device (reading one blocks or fails). `None`
/// for a regular file (symbolic links followed).
pub fn not_a_regular_file(meta: &std::fs::Metadata) -> Option<&'static str> {
    if meta.is_file() {
        None
    } else if meta.is_dir() {
        Some("a folder")
    } else {
        Some("not a regular file")
    }
}

/// The bytes of input file `path` (`what` names the file's kind in the message): a folder in
/// its place is refused as bad input. A pipe is read to its end (`--results <(zcat r.gz)`).
pub fn read_input_file(path: &std::path::Path, what: &str) -> crate::Result<Vec<u8>> {
    use crate::error::IoContext;
    if path.is_dir() {
        return Err(crate::Error::input(
            path,
            format!("a folder: {what} is a file"),
        ));
    }
    std::fs::read(path).at(path)
}

#[cfg(test)]
mod tests {
    use super::not_a_regular_file;

    #[test]
    fn names_what_stands_where_a_file_should_be() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f.npy");
        std::fs::write(&file, b"x").unwrap();
        let meta = |p: &std::path::Path| std::fs::metadata(p).unwrap();
        assert_eq!(not_a_regular_file(&meta(&file)), None);
        assert_eq!(not_a_regular_file(&meta(d.path())), Some("a folder"));
        #[cfg(unix)]
        {
            let sock = d.path().join("s.npy");
            let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
            assert_eq!(not_a_regular_file(&meta(&sock)), Some("not a regular file"));
        }
    }
}
