//! HDF5 descriptors as written by the ILIAS feature extractor with h5py, read in pure Rust (no
//! system libhdf5) through the `hdf5-reader` crate.
//!
//! Layout: dataset `features`, rank 2 (`N × D`), IEEE float16 or float32 (either byte order),
//! contiguous or chunked, optionally with the deflate (gzip) or shuffle filters; dataset `index`,
//! rank 1 (`N`), variable-length strings (UTF-8 or ASCII) or fixed-length byte strings (NUL/space
//! padding stripped) holding the row ids. Both datasets live in the root group.
//!
//! Reading: [`Hdf5Descriptors::read_rows`] asks for the hyperslab `rows start..start+n × all
//! columns`; only the chunks intersecting it are read and decompressed, and recently decoded chunks
//! stay in an LRU cache ([`CHUNK_CACHE_BYTES`]), so block reads that do not line up with chunk
//! boundaries do not decompress a chunk twice. Ids are read once at open (the `index` dataset is
//! small next to `features`).
//!
//! Checks at open: the file is not shorter than the end-of-file address its superblock records
//! (truncated copy), the datasets exist with the right rank and a supported type, ids are as many
//! as rows and unique. A chunk that cannot be read or inflated later gives an error naming the
//! file and the rows.

use super::descriptors::{DescriptorSource, Dtype, SourceInfo};
use super::npy::check_range;
use super::row_ids::RowIds;
use crate::error::{Error, IoContext, Result};
use half::f16;
use half::slice::HalfFloatSliceExt;
use hdf5_reader::{
    ByteOrder, Dataset, Datatype, H5Type, Hdf5File, OpenOptions, SliceInfo, SliceInfoElem,
};
use std::path::Path;

/// Largest descriptor dimension accepted (corrupt metadata guard).
pub const MAX_DIM: usize = 1 << 20;
/// Largest number of rows accepted in one file (corrupt metadata guard; split bigger pools).
pub const MAX_ROWS: u64 = 1 << 36;

/// Bytes of decoded chunks kept in the LRU cache of an open file.
pub const CHUNK_CACHE_BYTES: usize = 128 << 20;

/// One IEEE binary16 element, as stored (so that `hdf5-reader` copies the bytes and `half`
/// converts whole slices).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(transparent)]
struct F16(f16);

fn native(bo: ByteOrder) -> bool {
    (bo == ByteOrder::LittleEndian) == cfg!(target_endian = "little")
}

impl H5Type for F16 {
    fn hdf5_type() -> Datatype {
        Datatype::FloatingPoint {
            size: 2,
            byte_order: if cfg!(target_endian = "little") {
                ByteOrder::LittleEndian
            } else {
                ByteOrder::BigEndian
            },
        }
    }

    fn from_bytes(bytes: &[u8], dtype: &Datatype) -> hdf5_reader::error::Result<Self> {
        match dtype {
            Datatype::FloatingPoint {
                size: 2,
                byte_order,
            } if bytes.len() >= 2 => {
                let b = [bytes[0], bytes[1]];
                Ok(F16(if *byte_order == ByteOrder::BigEndian {
                    f16::from_be_bytes(b)
                } else {
                    f16::from_le_bytes(b)
                }))
            }
            other => Err(hdf5_reader::error::Error::TypeMismatch {
                expected: "float16".into(),
                actual: format!("{other:?}"),
            }),
        }
    }

    fn element_size(_dtype: &Datatype) -> usize {
        2
    }

    fn decode_vec(
        raw: &[u8],
        dtype: &Datatype,
        count: usize,
    ) -> Option<hdf5_reader::error::Result<Vec<Self>>> {
        match dtype {
            Datatype::FloatingPoint {
                size: 2,
                byte_order,
            } if raw.len() >= count * 2 => {
                let swap = !native(*byte_order);
                Some(Ok(raw[..count * 2]
                    .chunks_exact(2)
                    .map(|c| {
                        let v = u16::from_ne_bytes([c[0], c[1]]);
                        F16(f16::from_bits(if swap { v.swap_bytes() } else { v }))
                    })
                    .collect()))
            }
            _ => None,
        }
    }

    fn native_copy_compatible(dtype: &Datatype) -> bool {
        matches!(dtype, Datatype::FloatingPoint { size: 2, byte_order } if native(*byte_order))
    }
}

/// An ILIAS HDF5 feature file.
pub struct Hdf5Descriptors {
    /// The file, the width and element type of `features`, and the ids (one per row).
    info: SourceInfo,
    /// Keeps the file context alive alongside the dataset handle.
    _file: Hdf5File,
    features: Dataset,
    chunk_rows: Option<usize>,
    digest: String,
}

impl std::fmt::Debug for Hdf5Descriptors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hdf5Descriptors")
            .field("path", &self.info.path)
            .field("rows", &self.rows())
            .field("dim", &self.info.dim)
            .field("dtype", &self.info.dtype)
            .field("chunk_rows", &self.chunk_rows)
            .finish()
    }
}

fn h5err(path: &Path, what: &str, e: hdf5_reader::error::Error) -> Error {
    Error::input(
        path,
        format!("{what}: {e} (not a valid HDF5 file, or truncated/corrupt)"),
    )
}

fn float_dtype(path: &Path, t: &Datatype) -> Result<Dtype> {
    match t {
        Datatype::FloatingPoint { size: 2, .. } => Ok(Dtype::F16),
        Datatype::FloatingPoint { size: 4, .. } => Ok(Dtype::F32),
        other => Err(Error::unsupported(
            path,
            format!(
                "dataset 'features' has unsupported type {}; expected float16 or float32",
                describe(other)
            ),
        )),
    }
}

/// Check that a 2- or 4-byte float is IEEE binary16/binary32 (and not, e.g., bfloat16 stored as a
/// custom 2-byte float): the datatype message's bit fields must be sign bit 15/31, exponent at bit
/// 10/23 of 5/8 bits, mantissa at 0 of 10/23 bits, exponent bias 15/127.
fn check_ieee_layout(path: &Path, ds: &Dataset, dtype: Dtype) -> Result<()> {
    let raw = ds
        .raw_datatype()
        .map_err(|e| h5err(path, "cannot read the datatype of 'features'", e))?;
    // Message: class+version (1), class bit fields (3), size (4), then for floats: bit offset
    // (2), precision (2), exponent location (1), exponent size (1), mantissa location (1),
    // mantissa size (1), exponent bias (4).
    if raw.len() < 20 || raw[0] & 0x0f != 1 {
        return Ok(()); // not a plain float message (already classified by the reader)
    }
    let sign_loc = raw[2];
    let offset = u16::from_le_bytes([raw[8], raw[9]]);
    let precision = u16::from_le_bytes([raw[10], raw[11]]);
    let fields = (raw[12], raw[13], raw[14], raw[15]);
    let bias = u32::from_le_bytes([raw[16], raw[17], raw[18], raw[19]]);
    let want = match dtype {
        Dtype::F16 => (15, 16, (10, 5, 0, 10), 15),
        Dtype::F32 => (31, 32, (23, 8, 0, 23), 127),
    };
    if (sign_loc, offset, precision, fields, bias) != (want.0, 0, want.1, want.2, want.3) {
        return Err(Error::unsupported(
            path,
            format!(
                "dataset 'features' is a {}-bit float that is not IEEE {:?} (sign bit {sign_loc}, \
                 exponent {} bits at {}, mantissa {} bits at {}, bias {bias}); convert it to \
                 float16 or float32",
                precision, dtype, fields.1, fields.0, fields.3, fields.2
            ),
        ));
    }
    Ok(())
}

fn describe(t: &Datatype) -> String {
    match t {
        Datatype::FloatingPoint { size, .. } => format!("float{}", *size as u32 * 8),
        Datatype::FixedPoint { size, signed, .. } => {
            format!("{}int{}", if *signed { "" } else { "u" }, *size as u32 * 8)
        }
        Datatype::String { .. } => "string".into(),
        Datatype::Compound { .. } => "compound".into(),
        Datatype::VarLen { .. } => "variable-length".into(),
        other => format!("{other:?}"),
    }
}

impl Hdf5Descriptors {
    /// Open an ILIAS feature file (see the module doc for the layout and the checks).
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with_ids(path, None)
    }

    /// Open a feature file, taking the row ids from the text id file `ids` instead of the
    /// `index` dataset when given (the dataset may then be absent; it is not read).
    pub fn open_with_ids(path: &Path, ids: Option<&Path>) -> Result<Self> {
        guarded(path, "cannot open", || Self::open_inner(path, ids))
    }

    fn open_inner(path: &Path, ids: Option<&Path>) -> Result<Self> {
        let len = std::fs::metadata(path).at(path)?.len();
        if len == 0 {
            return Err(Error::input(path, "empty file (0 bytes), not an HDF5 file"));
        }
        let opts = OpenOptions::default()
            .with_chunk_cache_bytes(CHUNK_CACHE_BYTES)
            .with_chunk_cache_slots(4099);
        let file =
            Hdf5File::open_with_options(path, opts).map_err(|e| h5err(path, "cannot open", e))?;
        let sb = file.superblock();
        let eof = sb.base_address.saturating_add(sb.eof_address);
        if eof > len {
            return Err(Error::input(
                path,
                format!(
                    "truncated file: the HDF5 superblock says it ends at byte {eof} but it has \
                     only {len} bytes"
                ),
            ));
        }
        let names = root_names(&file);
        let features = file.dataset("features").map_err(|e| {
            Error::input(
                path,
                format!("no dataset 'features' ({e}); root group holds: {names}"),
            )
        })?;
        let shape = features.shape().to_vec();
        if shape.len() != 2 {
            return Err(Error::input(
                path,
                format!(
                    "dataset 'features' has rank {} (shape {shape:?}); expected N × D",
                    shape.len()
                ),
            ));
        }
        let (rows, dim) = (shape[0] as usize, shape[1] as usize);
        if dim == 0 {
            return Err(Error::input(path, "dataset 'features' has dimension 0"));
        }
        // Corrupt metadata can claim absurd shapes; refuse them before anything is allocated
        // (found by fuzzing: a mutated shape made the digest allocate 17 TB).
        if dim > MAX_DIM
            || (rows as u64) > MAX_ROWS
            || (rows as u64).checked_mul(dim as u64).is_none()
        {
            return Err(Error::input(
                path,
                format!(
                    "dataset 'features' has an implausible shape {shape:?} (at most {MAX_ROWS} \
                     rows and {MAX_DIM} columns): corrupt file?"
                ),
            ));
        }
        let dtype = float_dtype(path, features.dtype())?;
        check_ieee_layout(path, &features, dtype)?;
        let chunk_rows = features.chunks().map(|c| c[0] as usize);

        let ids = match ids {
            Some(ids_path) => {
                let ids = RowIds::read_text(ids_path, None)?;
                if ids.len() != rows {
                    return Err(Error::input(
                        ids_path,
                        format!(
                            "{} ids but dataset 'features' of {} has {rows} rows",
                            ids.len(),
                            path.display()
                        ),
                    ));
                }
                if let Some((a, b, id)) = ids.find_duplicate()? {
                    return Err(Error::input(
                        ids_path,
                        format!("duplicate id {id:?} on lines {} and {}", a + 1, b + 1),
                    ));
                }
                ids
            }
            None => {
                let ids = read_index_dataset(path, &file, &names)?;
                if ids.len() != rows {
                    return Err(Error::input(
                        path,
                        format!(
                            "dataset 'index' has {} ids but 'features' has {rows} rows",
                            ids.len()
                        ),
                    ));
                }
                if let Some((a, b)) = super::ids::find_duplicate(&ids) {
                    return Err(Error::input(
                        path,
                        format!(
                            "dataset 'index': duplicate id {:?} on rows {a} and {b} (0-based)",
                            ids[b]
                        ),
                    ));
                }
                RowIds::from_whole_file(path, &ids, read_index_file)
            }
        };

        let mut d = Hdf5Descriptors {
            info: SourceInfo {
                path: path.to_path_buf(),
                dim,
                dtype,
                ids,
            },
            _file: file,
            features,
            chunk_rows,
            digest: String::new(),
        };
        d.digest = d.compute_digest(len)?;
        Ok(d)
    }

    /// Rows per chunk of `features` (`None` when stored contiguously).
    pub fn chunk_rows(&self) -> Option<usize> {
        self.chunk_rows
    }

    /// Decoded-chunk cache counters `(hits, misses)` of `features` (diagnostics and tests: a
    /// block read that touches k uncached chunks adds k misses).
    pub fn chunk_cache_counts(&self) -> (u64, u64) {
        let s = self.features.chunk_cache_stats();
        (s.hits, s.misses)
    }

    /// Content digest: `xxh3:` + hex of xxh3-64 over the shape, dtype, file length, every id
    /// (each followed by `\n`), and the stored values of the first and last row blocks covering
    /// up to 1 MiB each. Reads at most two chunks' worth of rows.
    fn compute_digest(&self, file_len: u64) -> Result<String> {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(b"hdf5-features\n");
        h.update(&(self.rows() as u64).to_le_bytes());
        h.update(&(self.info.dim as u64).to_le_bytes());
        h.update(format!("{:?}", self.info.dtype).as_bytes());
        h.update(&file_len.to_le_bytes());
        self.info.ids.feed_digest(&mut h)?;
        let row_bytes = self.info.dim * 4;
        let n = ((1usize << 20) / row_bytes).max(1).min(self.rows());
        let mut buf = vec![0.0f32; n * self.info.dim];
        if n > 0 {
            self.read_rows(0, &mut buf)?;
            buf.iter().for_each(|v| h.update(&v.to_le_bytes()));
            self.read_rows(self.rows() - n, &mut buf)?;
            buf.iter().for_each(|v| h.update(&v.to_le_bytes()));
        }
        Ok(format!("xxh3:{:016x}", h.digest()))
    }
}

/// Run `f`, turning a panic inside the HDF5 parser (malformed metadata it did not anticipate) into
/// an error naming the file, so that bad input never aborts a scan.
fn guarded<T>(path: &Path, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(Error::input(
                path,
                format!(
                    "{what}: the HDF5 reader failed on malformed data ({msg}); the file is corrupt"
                ),
            ))
        }
    }
}

fn root_names(file: &Hdf5File) -> String {
    match file.root_group().and_then(|g| g.datasets()) {
        Ok(ds) if !ds.is_empty() => ds
            .iter()
            .map(|d| d.name().trim_start_matches('/').to_string())
            .collect::<Vec<_>>()
            .join(", "),
        _ => "no datasets".into(),
    }
}

/// The ids of the `index` dataset of `path`, read again (the strings are not kept in memory,
/// [`RowIds`]).
pub(crate) fn read_index_file(path: &Path) -> Result<Vec<String>> {
    guarded(path, "cannot read dataset 'index'", || {
        let file = Hdf5File::open(path).map_err(|e| h5err(path, "cannot open", e))?;
        read_index_dataset(path, &file, &root_names(&file))
    })
}

fn read_index_dataset(path: &Path, file: &Hdf5File, names: &str) -> Result<Vec<String>> {
    let index = file.dataset("index").map_err(|e| {
        Error::input(
            path,
            format!("no dataset 'index' with the row ids ({e}); root group holds: {names}"),
        )
    })?;
    if index.ndim() == 1 && index.shape()[0] > MAX_ROWS {
        return Err(Error::input(
            path,
            format!(
                "dataset 'index' has an implausible length {} (at most {MAX_ROWS}): corrupt file?",
                index.shape()[0]
            ),
        ));
    }
    if index.ndim() != 1 {
        return Err(Error::input(
            path,
            format!(
                "dataset 'index' has rank {} (shape {:?}); expected a 1-D list of ids",
                index.ndim(),
                index.shape()
            ),
        ));
    }
    read_index(path, &index)
}

/// Read the `index` dataset: variable-length strings, or fixed-length byte strings. Ids must be
/// valid UTF-8 and non-empty.
fn read_index(path: &Path, index: &Dataset) -> Result<Vec<String>> {
    let strings = match index.dtype() {
        Datatype::String { .. } | Datatype::VarLen { .. } => {
            index.read_strings().map_err(|e| match e.to_string() {
                // The file is sound; one of its ids is not text (the reader names no row).
                m if m.to_ascii_lowercase().contains("utf-8") => Error::input(
                    path,
                    "dataset 'index' holds an id that is not valid UTF-8: ids are read as \
                     UTF-8 text (write them as UTF-8 or ASCII strings)",
                ),
                _ => h5err(path, "cannot read dataset 'index'", e),
            })?
        }
        other => {
            return Err(Error::input(
                path,
                format!(
                "dataset 'index' has type {}; expected strings (variable-length or fixed-length)",
                describe(other)
            ),
            ))
        }
    };
    let mut ids = Vec::with_capacity(strings.len());
    for (i, s) in strings.into_iter().enumerate() {
        // Fixed-length strings may keep NUL or space padding depending on the writer.
        let t = s.trim_end_matches(['\0', ' ']);
        if t.is_empty() {
            return Err(Error::input(
                path,
                format!("dataset 'index': id of row {i} is empty"),
            ));
        }
        ids.push(if t.len() == s.len() { s } else { t.to_string() });
    }
    Ok(ids)
}

impl DescriptorSource for Hdf5Descriptors {
    fn info(&self) -> &SourceInfo {
        &self.info
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()> {
        let dim = self.info.dim;
        let n = self.info.rows_in(out.len())?;
        check_range(&self.info.path, start, n, self.rows())?;
        if n == 0 {
            return Ok(());
        }
        let sel = SliceInfo {
            selections: vec![
                SliceInfoElem::Slice {
                    start: start as u64,
                    end: (start + n) as u64,
                    step: 1,
                },
                SliceInfoElem::Slice {
                    start: 0,
                    end: dim as u64,
                    step: 1,
                },
            ],
        };
        let fail = |e: hdf5_reader::error::Error| {
            Error::input(
                &self.info.path,
                format!(
                    "cannot read rows {start}..{} of dataset 'features': {e} (truncated or corrupt file?)",
                    start + n
                ),
            )
        };
        let bad_len = |got: usize| {
            Error::input(
                &self.info.path,
                format!(
                    "rows {start}..{}: got {got} values instead of {}",
                    start + n,
                    out.len()
                ),
            )
        };
        match self.info.dtype {
            Dtype::F32 => {
                let a = guarded(&self.info.path, "cannot read rows", || {
                    self.features.read_slice::<f32>(&sel).map_err(fail)
                })?;
                match a.as_slice() {
                    Some(s) if s.len() == out.len() => out.copy_from_slice(s),
                    Some(s) => return Err(bad_len(s.len())),
                    None => {
                        if a.len() != out.len() {
                            return Err(bad_len(a.len()));
                        }
                        out.iter_mut().zip(a.iter()).for_each(|(o, v)| *o = *v);
                    }
                }
            }
            Dtype::F16 => {
                let a = guarded(&self.info.path, "cannot read rows", || {
                    self.features.read_slice::<F16>(&sel).map_err(fail)
                })?;
                if a.len() != out.len() {
                    return Err(bad_len(a.len()));
                }
                match a.as_slice() {
                    Some(s) => {
                        // SAFETY: F16 is repr(transparent) over f16 (2 bytes, any bit pattern).
                        let halves: &[f16] = unsafe {
                            std::slice::from_raw_parts(s.as_ptr() as *const f16, s.len())
                        };
                        halves.convert_to_f32_slice(out);
                    }
                    None => out
                        .iter_mut()
                        .zip(a.iter())
                        .for_each(|(o, v)| *o = v.0.to_f32()),
                }
            }
        }
        Ok(())
    }
    fn digest(&self) -> String {
        self.digest.clone()
    }
}
