//! A uniform view of descriptor files: `rows × dim` matrices with one string id per row, read in
//! blocks converted to f32. The scan engine only sees [`DescriptorSource`]; the readers (`npy`,
//! `hdf5`) implement it and [`open_descriptors`](super::open_descriptors) picks one by extension. Ids are held as
//! 8-byte keys ([`RowIds`]), the strings read again only when needed.

use super::row_ids::RowIds;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Element type of stored descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Dtype {
    F16,
    F32,
}

/// What a descriptor source is before any of its rows is read: where the rows come from,
/// their width and stored element type, and their ids, one per row (so the source has
/// `ids.len()` rows). Every [`DescriptorSource`] holds one and answers its accessors from it.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// A file path, or a label for in-memory or generated data.
    pub path: PathBuf,
    pub dim: usize,
    pub dtype: Dtype,
    /// Row ids as 8-byte keys with a way to read the strings back ([`RowIds`]).
    pub ids: RowIds,
}

impl SourceInfo {
    /// The rows a buffer of `values` f32 holds (`values / dim`); an error naming the source
    /// when that is not a whole number.
    pub fn rows_in(&self, values: usize) -> Result<usize> {
        let dim = self.dim;
        if !values.is_multiple_of(dim) {
            return Err(Error::option(format!(
                "{}: output buffer of {values} values is not a whole number of rows of dimension \
                 {dim}",
                self.path.display(),
            )));
        }
        Ok(values / dim)
    }

    /// The same path, width and element type over other rows `ids` (a view of some rows).
    pub fn with_ids(&self, ids: RowIds) -> SourceInfo {
        SourceInfo {
            path: self.path.clone(),
            dim: self.dim,
            dtype: self.dtype,
            ids,
        }
    }
}

/// A readable matrix of descriptors with row ids.
///
/// Invariants: `ids().len() == rows()`, ids are unique, `dim() > 0`.
pub trait DescriptorSource: Send + Sync {
    /// Path, width, element type and row ids ([`SourceInfo`]).
    fn info(&self) -> &SourceInfo;
    /// Where the descriptors come from (a file path, or a label for in-memory data).
    fn path(&self) -> &Path {
        &self.info().path
    }
    /// One row per id.
    fn rows(&self) -> usize {
        self.info().ids.len()
    }
    fn dim(&self) -> usize {
        self.info().dim
    }
    fn dtype(&self) -> Dtype {
        self.info().dtype
    }
    /// Row ids, one per row, as 8-byte keys with a way to read the strings back
    /// ([`RowIds`]).
    fn ids(&self) -> &RowIds {
        &self.info().ids
    }
    /// Convert rows `start .. start + out.len() / dim` to f32 into `out` (row-major).
    /// Errors name the file and the row when the data cannot be read (e.g. truncated file).
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()>;
    /// A digest identifying the content (xxh3 of header + ids + a data fingerprint), recorded in
    /// summaries so that mismatched inputs are detected.
    fn digest(&self) -> String;
}

/// Rows per block used by [`read_all`] and suggested for streaming reads (a multiple of common
/// HDF5 chunk heights).
pub const DEFAULT_BLOCK_ROWS: usize = 4096;

/// Read every row of `src` into one row-major `rows × dim` f32 vector, block by block.
pub fn read_all(src: &dyn DescriptorSource) -> Result<Vec<f32>> {
    let (rows, dim) = (src.rows(), src.dim());
    let total = rows.checked_mul(dim).ok_or_else(|| {
        Error::input(
            src.path(),
            format!("{rows} rows × {dim} does not fit in memory"),
        )
    })?;
    let mut out = vec![0.0f32; total];
    for (start, n) in blocks(rows, DEFAULT_BLOCK_ROWS) {
        src.read_rows(start, &mut out[start * dim..(start + n) * dim])?;
    }
    Ok(out)
}

/// Split `0..rows` into consecutive `(start, n)` blocks of at most `block_rows` rows
/// (`block_rows = 0` is treated as 1).
pub fn blocks(rows: usize, block_rows: usize) -> impl Iterator<Item = (usize, usize)> {
    let b = block_rows.max(1);
    (0..rows.div_ceil(b)).map(move |i| (i * b, b.min(rows - i * b)))
}

/// Descriptors held in memory as f32 (tests, simulators, the Python binding).
///
/// `ids` is read-only after [`InMemoryDescriptors::new`]: the source answers
/// [`DescriptorSource::ids`] from keys computed there, so changing an id means building a new
/// value.
#[derive(Debug, Clone)]
pub struct InMemoryDescriptors {
    pub ids: Vec<String>,
    /// Row-major `ids.len() × dim`.
    pub data: Vec<f32>,
    /// The label, `dim`, f32 and `ids` as keys.
    info: SourceInfo,
}

impl InMemoryDescriptors {
    pub fn new(
        label: impl Into<PathBuf>,
        ids: Vec<String>,
        dim: usize,
        data: Vec<f32>,
    ) -> Result<Self> {
        let label = label.into();
        if dim == 0 || data.len() != ids.len() * dim {
            return Err(Error::input(
                &label,
                format!(
                    "{} values do not form {} rows of dimension {dim}",
                    data.len(),
                    ids.len()
                ),
            ));
        }
        if let Some((a, b)) = super::ids::find_duplicate(&ids) {
            return Err(Error::input(
                &label,
                format!("duplicate id {:?} on rows {a} and {b} (0-based)", ids[b]),
            ));
        }
        let row_ids = RowIds::from_strings(label.clone(), ids.clone());
        Ok(InMemoryDescriptors {
            ids,
            data,
            info: SourceInfo {
                path: label,
                dim,
                dtype: Dtype::F32,
                ids: row_ids,
            },
        })
    }

    /// Load every row of `src` into memory (ids, dimension and values as f32; the label is the
    /// source's path).
    pub fn from_source(src: &dyn DescriptorSource) -> Result<Self> {
        let data = read_all(src)?;
        Self::new(src.path(), src.ids().to_vec()?, src.dim(), data)
    }
}

impl DescriptorSource for InMemoryDescriptors {
    fn info(&self) -> &SourceInfo {
        &self.info
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()> {
        let dim = self.dim();
        let begin = start * dim;
        let end = begin + out.len();
        if end > self.data.len() || !out.len().is_multiple_of(dim) {
            return Err(Error::internal_at(
                self.path(),
                format!("rows {start}.. out of range ({} rows)", self.rows()),
            ));
        }
        out.copy_from_slice(&self.data[begin..end]);
        Ok(())
    }
    fn digest(&self) -> String {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for id in &self.ids {
            h.update(id.as_bytes());
            h.update(b"\n");
        }
        for v in &self.data {
            h.update(&v.to_le_bytes());
        }
        format!("xxh3:{:016x}", h.digest())
    }
}

/// A view of rows `start .. end` of another source (used by resumable scans to cut a large
/// pool file into chunks). Row `i` of the view is row `start + i` of `inner`; `path()` is the
/// inner file's path. Its digest covers the inner digest and the range,
/// `xxh3("<inner digest>\nrows <start>..<end>")`, so that two different ranges of one file never
/// share a digest (the overlap check of `Summary::merge` relies on digests), while the same range
/// of the same file always gets the same one.
pub struct RowRange<'a> {
    inner: &'a dyn DescriptorSource,
    start: usize,
    end: usize,
    /// The inner source's, over rows `start .. end`.
    info: SourceInfo,
    digest: String,
}

impl<'a> RowRange<'a> {
    /// View rows `start .. end` of `inner` (`start ≤ end ≤ inner.rows()`).
    /// `inner_digest` is `inner.digest()` (passed in so that it is computed once per file).
    pub fn new(
        inner: &'a dyn DescriptorSource,
        inner_digest: &str,
        start: usize,
        end: usize,
    ) -> Result<Self> {
        if start > end || end > inner.rows() {
            return Err(Error::internal_at(
                inner.path(),
                format!(
                    "row range {start}..{end} is outside the file's {} rows",
                    inner.rows()
                ),
            ));
        }
        let digest = format!(
            "xxh3:{:016x}",
            xxhash_rust::xxh3::xxh3_64(format!("{inner_digest}\nrows {start}..{end}").as_bytes())
        );
        Ok(RowRange {
            inner,
            start,
            end,
            info: inner.info().with_ids(inner.ids().slice(start, end)),
            digest,
        })
    }

    /// First row of the view in the inner source.
    pub fn start(&self) -> usize {
        self.start
    }

    /// End (exclusive) of the view in the inner source.
    pub fn end(&self) -> usize {
        self.end
    }
}

impl DescriptorSource for RowRange<'_> {
    fn info(&self) -> &SourceInfo {
        &self.info
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()> {
        let n = out.len() / self.dim().max(1);
        if start + n > self.rows() {
            return Err(Error::internal_at(
                self.path(),
                format!(
                    "rows {}..{} requested beyond the end of the row range {}..{}",
                    self.start + start,
                    self.start + start + n,
                    self.start,
                    self.end
                ),
            ));
        }
        self.inner.read_rows(self.start + start, out)
    }
    fn digest(&self) -> String {
        self.digest.clone()
    }
}
