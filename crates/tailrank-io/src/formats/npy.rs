//! `.npy` descriptors: a 2-D, C-order, little-endian `<f2` (f16) or `<f4` (f32) matrix,
//! memory-mapped (zero copy; the OS pages it in as the scan advances), with one id per row taken
//! from a text id file.
//!
//! File layout (NumPy format v1.0/2.0/3.0): magic `\x93NUMPY`, major and minor version bytes, the
//! header length (u16 LE for v1, u32 LE for v2/v3), an ASCII (v3: UTF-8) Python dict literal
//! `{'descr': '<f2', 'fortran_order': False, 'shape': (N, D), }` padded with spaces and a final
//! `\n`, then exactly `N · D · itemsize` bytes of row-major data. Anything else (other dtypes,
//! Fortran order, rank ≠ 2, data shorter or longer than the header says) is rejected with an error
//! naming the file.
//!
//! Ids: the file given explicitly, else the first existing sibling among `<stem>.ids.txt`,
//! `<stem>_ids.txt` (and the same names with `.gz`). The ids must be unique and as many as rows.

mod header;

use super::descriptors::{DescriptorSource, Dtype, SourceInfo};
use super::row_ids::RowIds;
use crate::atomic;
use crate::error::{Error, IoContext, Result};
use half::f16;
use half::slice::HalfFloatSliceExt;
pub use header::{dtype_size, npy_header_bytes, parse_header, NpyHeader};
use memmap2::Mmap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Sibling id files tried, in order, for `path` = `dir/stem.npy` (the stem's bytes kept as
/// they are, UTF-8 or not).
pub fn sibling_id_candidates(path: &Path) -> Vec<PathBuf> {
    let stem = path.file_stem().unwrap_or_default();
    [".ids.txt", "_ids.txt", ".ids.txt.gz", "_ids.txt.gz"]
        .iter()
        .map(|suffix| {
            let mut name = stem.to_os_string();
            name.push(suffix);
            path.with_file_name(name)
        })
        .collect()
}

/// A memory-mapped `.npy` matrix with row ids.
pub struct NpyDescriptors {
    /// The file, the header's dim and dtype, and the ids.
    info: SourceInfo,
    ids_path: PathBuf,
    header: NpyHeader,
    /// The open file behind `map`: its length is checked before every read, so that a file
    /// truncated by another process during a scan gives an error instead of a fault.
    file: File,
    /// File length at open (header + data).
    len: u64,
    map: Mmap,
    digest: String,
}

impl std::fmt::Debug for NpyDescriptors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpyDescriptors")
            .field("path", &self.info.path)
            .field("ids_path", &self.ids_path)
            .field("header", &self.header)
            .finish()
    }
}

impl NpyDescriptors {
    /// Open `path` with ids from `ids`, or from a sibling id file (see the module doc).
    pub fn open(path: &Path, ids: Option<&Path>) -> Result<Self> {
        let ids_path = match ids {
            Some(p) => p.to_path_buf(),
            None => sibling_id_candidates(path)
                .into_iter()
                .find(|p| p.is_file())
                .ok_or_else(|| {
                    let names: Vec<String> = sibling_id_candidates(path)
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect();
                    Error::input(
                        path,
                        format!(
                            "no id file given and none found next to it (tried {})",
                            names.join(", ")
                        ),
                    )
                })?,
        };
        let read = |h: &mut xxhash_rust::xxh3::Xxh3| RowIds::read_text(&ids_path, Some(h));
        Self::open_parts(path, ids_path.clone(), read)
    }

    /// Open `path` with ids already in memory (`ids_path` is used in error messages).
    pub fn open_with_ids(path: &Path, ids_path: PathBuf, ids: Vec<String>) -> Result<Self> {
        let label = ids_path.clone();
        Self::open_parts(path, ids_path, move |h| {
            let ids = RowIds::from_strings(label, ids);
            ids.feed_digest(h)?;
            Ok(ids)
        })
    }

    /// Map and check `path`, then get the ids from `read_ids`, which also feeds them into the
    /// content digest (see [`npy_digest_start`]) after the header: the id file is read once,
    /// streaming, and kept as 8-byte keys.
    fn open_parts(
        path: &Path,
        ids_path: PathBuf,
        read_ids: impl FnOnce(&mut xxhash_rust::xxh3::Xxh3) -> Result<RowIds>,
    ) -> Result<Self> {
        let file = File::open(path).at(path)?;
        let len = file.metadata().at(path)?.len() as usize;
        if len == 0 {
            return Err(Error::input(
                path,
                "empty file (0 bytes), not an .npy array",
            ));
        }
        // SAFETY: the map is read-only; tailrank never writes input files. Another process
        // truncating the file while it is mapped could make an access fault: `raw_rows` checks
        // the file's length before each read, which leaves only a race of microseconds.
        let map = unsafe { Mmap::map(&file) }.at(path)?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        let header = parse_header(path, &map)?;
        let want = header.data_len().expect("checked in parse_header");
        let have = len - header.data_offset.min(len);
        if have < want {
            let full_rows = have / (header.dim * header.itemsize());
            return Err(Error::input(
                path,
                format!(
                    "truncated file: the header says {} rows × {} of {:?} ({want} data bytes) but \
                     only {have} data bytes are present (rows {full_rows}.. missing)",
                    header.rows, header.dim, header.dtype
                ),
            ));
        }
        if have > want {
            return Err(Error::input(
                path,
                format!(
                    "file is {} bytes longer than its header says ({} rows × {}); corrupt or not \
                     written by numpy",
                    have - want,
                    header.rows,
                    header.dim
                ),
            ));
        }
        let mut h = npy_digest_start(&map, &header);
        let ids = read_ids(&mut h)?;
        if ids.len() != header.rows {
            return Err(Error::input(
                &ids_path,
                format!(
                    "{} ids but {} has {} rows",
                    ids.len(),
                    path.display(),
                    header.rows
                ),
            ));
        }
        if let Some((a, b, id)) = ids.find_duplicate()? {
            return Err(Error::input(
                &ids_path,
                format!("duplicate id {id:?} on lines {} and {}", a + 1, b + 1),
            ));
        }
        hash_ends(&mut h, &map[header.data_offset..]);
        let digest = format!("xxh3:{:016x}", h.digest());
        Ok(NpyDescriptors {
            info: SourceInfo {
                path: path.to_path_buf(),
                dim: header.dim,
                dtype: header.dtype,
                ids,
            },
            ids_path,
            header,
            file,
            len: len as u64,
            map,
            digest,
        })
    }

    /// The parsed header.
    pub fn header(&self) -> &NpyHeader {
        &self.header
    }

    /// The id file the ids were read from.
    pub fn ids_path(&self) -> &Path {
        &self.ids_path
    }

    /// The raw little-endian data bytes of rows `start .. start + n`. Fails, naming the file
    /// and the rows, when the file has become shorter since it was opened.
    pub fn raw_rows(&self, start: usize, n: usize) -> Result<&[u8]> {
        check_range(&self.info.path, start, n, self.header.rows)?;
        let now = self.file.metadata().at(&self.info.path)?.len();
        if now < self.len {
            return Err(Error::input(
                &self.info.path,
                format!(
                    "the file was truncated while it was being read: it is now {now} bytes, \
                     {} when opened (reading rows {start}..{})",
                    self.len,
                    start + n
                ),
            ));
        }
        let row_bytes = self.header.dim * self.header.itemsize();
        let b = self.header.data_offset + start * row_bytes;
        Ok(&self.map[b..b + n * row_bytes])
    }
}

pub(crate) fn check_range(path: &Path, start: usize, n: usize, rows: usize) -> Result<()> {
    if start.checked_add(n).is_none_or(|end| end > rows) {
        return Err(Error::internal_at(
            path,
            format!(
                "rows {start}..{} requested but the file has {rows} rows",
                start.saturating_add(n)
            ),
        ));
    }
    Ok(())
}

/// Content digest: `xxh3:` + hex of xxh3-64 over the header bytes, the file length, every id
/// (each followed by `\n`), and the first and last MiB of the data section. Cheap (≤ 2 MiB of
/// data read) but it changes when the shape, dtype, ids, or the data at either end change.
///
/// Computed in three steps at open: [`npy_digest_start`] (header and length), the ids as they
/// are read (streaming), then [`hash_ends`] over the data section.
fn npy_digest_start(map: &[u8], header: &NpyHeader) -> xxhash_rust::xxh3::Xxh3 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&map[..header.data_offset]);
    h.update(&(map.len() as u64).to_le_bytes());
    h
}

/// Feed the first and last MiB of `data` into a digest (all of it when shorter than 2 MiB).
pub(crate) fn hash_ends(h: &mut xxhash_rust::xxh3::Xxh3, data: &[u8]) {
    const MIB: usize = 1 << 20;
    if data.len() <= 2 * MIB {
        h.update(data);
    } else {
        h.update(&data[..MIB]);
        h.update(&data[data.len() - MIB..]);
    }
}

/// Convert little-endian stored elements to f32: `out.len()` elements from `bytes`
/// (`bytes.len() == out.len() · itemsize`). f16 goes through `half`'s slice conversion (F16C
/// where the CPU has it); conversion is exact (every f16 is an f32).
pub fn convert_le(dtype: Dtype, bytes: &[u8], out: &mut [f32]) {
    match dtype {
        Dtype::F32 => {
            debug_assert_eq!(bytes.len(), out.len() * 4);
            if let Some(stored) = in_place::<f32>(bytes) {
                out.copy_from_slice(stored);
                return;
            }
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        Dtype::F16 => {
            debug_assert_eq!(bytes.len(), out.len() * 2);
            if let Some(stored) = in_place::<f16>(bytes) {
                stored.convert_to_f32_slice(out);
                return;
            }
            // Unaligned (or big-endian host): decode through an aligned scratch buffer.
            let mut tmp = [f16::ZERO; 1024];
            for (oc, bc) in out.chunks_mut(1024).zip(bytes.chunks(2048)) {
                let t = &mut tmp[..oc.len()];
                for (x, c) in t.iter_mut().zip(bc.chunks_exact(2)) {
                    *x = f16::from_le_bytes([c[0], c[1]]);
                }
                t.convert_to_f32_slice(oc);
            }
        }
    }
}

/// The stored element types: every bit pattern is a value.
trait AnyBitPattern: Copy {}
impl AnyBitPattern for f32 {}
impl AnyBitPattern for f16 {}

/// Little-endian `T`s read in place: `bytes` as a slice of `T`, when the host is little-endian
/// and `bytes` is aligned for `T` and a whole number of them; None otherwise (decode instead).
fn in_place<T: AnyBitPattern>(bytes: &[u8]) -> Option<&[T]> {
    if cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: every bit pattern is a valid `T` (`AnyBitPattern`); alignment is handled by
    // align_to, and only a slice with nothing before or after it is returned.
    let (pre, mid, post) = unsafe { bytes.align_to::<T>() };
    (pre.is_empty() && post.is_empty()).then_some(mid)
}

impl DescriptorSource for NpyDescriptors {
    fn info(&self) -> &SourceInfo {
        &self.info
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()> {
        let n = self.info.rows_in(out.len())?;
        let bytes = self.raw_rows(start, n)?;
        convert_le(self.header.dtype, bytes, out);
        Ok(())
    }
    fn digest(&self) -> String {
        self.digest.clone()
    }
}

/// Write a C-order `rows × dim` matrix (`data` row-major, f32) as `.npy` with element type
/// `dtype` (f16 values are rounded to nearest-even by `half`), atomically via
/// [`crate::atomic::write_file`]. numpy reads the result with `np.load`.
pub fn write_npy(path: &Path, rows: usize, dim: usize, data: &[f32], dtype: Dtype) -> Result<()> {
    if rows.checked_mul(dim) != Some(data.len()) {
        return Err(Error::output(
            path,
            format!("cannot write {} values as {rows} rows × {dim}", data.len()),
        ));
    }
    if dim == 0 {
        return Err(Error::output(
            path,
            "cannot write descriptors of dimension 0",
        ));
    }
    let header = npy_header_bytes(rows, dim, dtype);
    atomic::write_file(path, |w| {
        w.write_all(&header).at(path)?;
        const CHUNK: usize = 1 << 16;
        match dtype {
            Dtype::F32 => {
                let mut buf = Vec::with_capacity(CHUNK * 4);
                for c in data.chunks(CHUNK) {
                    buf.clear();
                    for v in c {
                        buf.extend_from_slice(&v.to_le_bytes());
                    }
                    w.write_all(&buf).at(path)?;
                }
            }
            Dtype::F16 => {
                let mut half_buf = vec![f16::ZERO; CHUNK];
                let mut buf = Vec::with_capacity(CHUNK * 2);
                for c in data.chunks(CHUNK) {
                    let hb = &mut half_buf[..c.len()];
                    hb.convert_from_f32_slice(c);
                    buf.clear();
                    for v in hb.iter() {
                        buf.extend_from_slice(&v.to_le_bytes());
                    }
                    w.write_all(&buf).at(path)?;
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests;
