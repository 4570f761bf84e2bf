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

/// The bytes of input file `path` (`what` names the file's kind in the message): a folder or
/// a device in its place is refused as bad input (a device such as `/dev/zero` never ends). A
/// pipe is read to its end (`--results <(zcat r.gz)`).
pub fn read_input_file(path: &std::path::Path, what: &str) -> crate::Result<Vec<u8>> {
    use crate::error::IoContext;
    let meta = std::fs::metadata(path).at(path)?;
    if meta.is_dir() {
        return Err(crate::Error::input(
            path,
            format!("a folder: {what} is a file"),
        ));
    }
    if is_device(&meta) {
        return Err(crate::Error::input(
            path,
            format!("a device, not a file: {what} is a file (or a pipe)"),
        ));
    }
    std::fs::read(path).at(path)
}

/// [`read_input_file`] as text: bytes that are not UTF-8 are an I/O error of `path` (as
/// `std::fs::read_to_string` gives it).
pub fn read_input_text(path: &std::path::Path, what: &str) -> crate::Result<String> {
    use crate::error::IoContext;
    let invalid = |_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8");
    String::from_utf8(read_input_file(path, what)?)
        .map_err(invalid)
        .at(path)
}

/// Whether `meta` is a character or block device or a socket: what no input file is.
#[cfg(unix)]
fn is_device(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    t.is_char_device() || t.is_block_device() || t.is_socket()
}

#[cfg(not(unix))]
fn is_device(_meta: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::{not_a_regular_file, read_input_file};

    /// A device never ends (`/dev/zero`): refused at once, where reading it filled the memory.
    #[cfg(unix)]
    #[test]
    fn a_device_is_no_input_file() {
        let dev = std::path::Path::new("/dev/zero");
        let e = read_input_file(dev, "a results JSON")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/dev/zero: a device, not a file"), "{e}");
        let e = crate::formats::gt::load_ground_truth(dev)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a device, not a file: a JSON ground truth"),
            "{e}"
        );
    }

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
