//! Descriptor sources given from Python: files by path, or numpy arrays borrowed in place
//! ([`ArraySource`]), with their ids.

use crate::error::{err, input_err, option_err, unsupported_err};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;
use tailrank::formats::descriptors::{DescriptorSource, Dtype, SourceInfo};
use tailrank::formats::ids::find_duplicate;
use tailrank::formats::npy::convert_le;
use tailrank::formats::open_descriptors;
use tailrank::formats::RowIds;
/// A descriptor source given from Python: `{"path": str, "ids": str | None}` (a `.npy` or
/// HDF5 file) or `{"label": str, "ids": bytes | [str], "array": ndarray}` (in memory).
///
/// In-memory arrays are borrowed, not copied: `array` must expose a C-contiguous 2-D
/// little-endian float32 or float16 `__array_interface__` (the Python layer converts anything
/// else with `np.ascontiguousarray`). The source keeps a reference to the array, so its memory
/// stays allocated for the whole call; the array must not be written to during the scan (the GIL
/// is released meanwhile). `ids` is either the ids joined by `"\n"` and UTF-8 encoded (one
/// buffer: the fast path) or a list of strings.
pub fn source(d: &Bound<'_, PyDict>) -> PyResult<Box<dyn DescriptorSource>> {
    if let Some(path) = d.get_item("path")? {
        let path: PathBuf = path.extract()?;
        let ids: Option<PathBuf> = match d.get_item("ids")? {
            Some(x) if !x.is_none() => Some(x.extract()?),
            _ => None,
        };
        return open_descriptors(&path, ids.as_deref()).map_err(err);
    }
    let label: String = d
        .get_item("label")?
        .map(|x| x.extract())
        .transpose()?
        .unwrap_or_else(|| "<array>".into());
    let array = d
        .get_item("array")?
        .ok_or_else(|| option_err(format!("{label}: no array given")))?;
    let ids = d
        .get_item("ids")?
        .ok_or_else(|| option_err(format!("{label}: no ids given")))?;
    Ok(Box::new(ArraySource::new(label, &array, &ids)?))
}

/// Read-only memory owned by a Python object that the holder keeps alive.
struct Borrowed {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the memory is only read, and its owner (a numpy array referenced by the same
// `ArraySource`) outlives every access; concurrent reads of plain memory are sound. Writes by
// other Python threads during a scan are excluded by the documented contract of `tailrank.scan`.
unsafe impl Send for Borrowed {}
unsafe impl Sync for Borrowed {}

impl Borrowed {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` points to `len` readable bytes (the array's data buffer, checked to
        // cover rows × dim elements) for as long as `self` (and the array reference next to it)
        // lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// In-memory descriptors borrowed from a numpy array (no copy): rows are converted to f32 by
/// `read_rows` as the scan asks for them, exactly as `.npy` file rows are.
///
/// The digest is `InMemoryDescriptors::digest`'s value — xxh3 streaming over `id + "\n"` for
/// every id, then every value's little-endian f32 bytes (float16 values widened to f32) — but
/// computed over large blocks (streaming xxh3 does not depend on how the input is cut).
struct ArraySource {
    /// The label, the array's width and element type, and the ids given (kept as strings:
    /// they come from Python memory anyway) with their keys.
    info: SourceInfo,
    data: Borrowed,
    /// Keeps `data` alive; released (with the GIL held) when the source is dropped.
    _owner: Py<PyAny>,
    digest: String,
}

/// A numpy array's checked `__array_interface__`: element type, shape and data, which covers
/// `rows · dim` elements.
struct ArrayView {
    dtype: Dtype,
    rows: usize,
    dim: usize,
    data: Borrowed,
}

/// The ids as given from Python, before they are split and checked.
enum GivenIds<'a> {
    /// One UTF-8 buffer of the ids joined by `"\n"` (the fast path).
    Joined(&'a str),
    /// A list of strings.
    Listed(Vec<String>),
}

impl ArraySource {
    fn new(label: String, array: &Bound<'_, PyAny>, ids: &Bound<'_, PyAny>) -> PyResult<Self> {
        let ArrayView {
            dtype,
            rows,
            dim,
            data,
        } = array_view(&label, array)?;
        let given = given_ids(&label, ids)?;
        let joined = matches!(given, GivenIds::Joined(_));
        let label = PathBuf::from(label);
        // Splitting the ids and the duplicate check run beside the digest, without the GIL.
        let (ids, digest, duplicate) = array
            .py()
            .allow_threads(|| ids_and_digest(given, rows, dtype, &data));
        if ids.len() != rows {
            let how = if joined {
                " (joined by newlines: does an id contain one?)"
            } else {
                ""
            };
            return Err(input_err(format!(
                "{}: {} ids for {rows} rows{how}",
                label.display(),
                ids.len()
            )));
        }
        if let Some((a, b)) = duplicate {
            return Err(err(tailrank::Error::input(
                &label,
                format!("duplicate id {:?} on rows {a} and {b} (0-based)", ids[b]),
            )));
        }
        let digest = format!("xxh3:{digest:016x}");
        let ids = RowIds::from_strings(label.clone(), ids);
        Ok(ArraySource {
            info: SourceInfo {
                path: label,
                dim,
                dtype,
                ids,
            },
            data,
            _owner: array.clone().unbind(),
            digest,
        })
    }
}

/// The interface of `array`, checked (errors name `label`): a real numpy.ndarray, typestr
/// `<f4` or `<f2`, 2-D with `dim > 0`, C-contiguous, no offset, a non-null data address
/// unless empty, and `rows · dim · element size` bytes addressable without overflow.
fn array_view(label: &str, array: &Bound<'_, PyAny>) -> PyResult<ArrayView> {
    // The address below is read as memory: only a real numpy array vouches for it (any
    // object can carry an `__array_interface__` dict with a made-up address, a subclass of
    // ndarray too: its interface is read through ndarray's own descriptor).
    let ndarray = array.py().import("numpy")?.getattr("ndarray")?;
    if !array.is_instance(&ndarray)? {
        return Err(input_err(format!(
            "{label}: descriptors must be a numpy.ndarray, got {}",
            array.get_type().name()?
        )));
    }
    let own_interface = ndarray.getattr("__array_interface__")?;
    let iface = own_interface.call_method1("__get__", (array,)).map_err(|_| {
        input_err(format!(
            "{label}: descriptors must be a numpy array (no __array_interface__)"
        ))
    })?;
    let iface = iface.downcast::<PyDict>()?;
    let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        iface
            .get_item(key)?
            .ok_or_else(|| input_err(format!("{label}: __array_interface__ has no {key:?}")))
    };
    let typestr: String = get("typestr")?.extract()?;
    let dtype = match typestr.as_str() {
        "<f4" => Dtype::F32,
        "<f2" => Dtype::F16,
        other => {
            return Err(unsupported_err(format!(
                "{label}: descriptors must be little-endian float32 or float16, got \
                 typestr {other:?}"
            )))
        }
    };
    let shape: Vec<usize> = get("shape")?.extract()?;
    let &[rows, dim] = shape.as_slice() else {
        return Err(input_err(format!(
            "{label}: descriptors must be a 2-D array (rows x dim), got shape {shape:?}"
        )));
    };
    if !get("strides")?.is_none() {
        return Err(unsupported_err(format!(
            "{label}: descriptors must be a C-contiguous array"
        )));
    }
    if iface
        .get_item("offset")?
        .is_some_and(|o| o.extract::<usize>().ok() != Some(0))
    {
        return Err(unsupported_err(format!(
            "{label}: array interfaces with an offset are not supported"
        )));
    }
    let (addr, _readonly): (usize, bool) = get("data")?.extract().map_err(|_| {
        input_err(format!(
            "{label}: __array_interface__ data is not an (address, read-only) pair"
        ))
    })?;
    if dim == 0 {
        return Err(input_err(format!(
            "{label}: descriptors of dimension 0 ({rows} rows)"
        )));
    }
    let esize = match dtype {
        Dtype::F32 => 4,
        Dtype::F16 => 2,
    };
    let len = rows
        .checked_mul(dim)
        .and_then(|n| n.checked_mul(esize))
        .ok_or_else(|| input_err(format!("{label}: {rows} x {dim} array is too large")))?;
    if len > 0 && addr == 0 {
        return Err(input_err(format!("{label}: array data pointer is null")));
    }
    Ok(ArrayView {
        dtype,
        rows,
        dim,
        data: Borrowed {
            ptr: addr as *const u8,
            len,
        },
    })
}

/// `ids` as given: a bytes object (valid UTF-8) is [`GivenIds::Joined`], anything else must
/// extract as a sequence of strings (errors name `label`).
fn given_ids<'a>(label: &str, ids: &'a Bound<'_, PyAny>) -> PyResult<GivenIds<'a>> {
    match ids.downcast::<PyBytes>() {
        Ok(b) => Ok(GivenIds::Joined(
            std::str::from_utf8(b.as_bytes())
                .map_err(|e| input_err(format!("{label}: ids are not valid UTF-8: {e}")))?,
        )),
        Err(_) => Ok(GivenIds::Listed(ids.extract().map_err(|e| {
            input_err(format!("{label}: ids must be a sequence of strings ({e})"))
        })?)),
    }
}

/// The ids split out of `given` (a joined buffer is empty for no rows, else split at every
/// `"\n"`), the xxh3 digest of every `id + "\n"` then of the values ([`hash_values`] of
/// `data`), and the first duplicate id's rows ([`first_duplicate`]). With a joined buffer
/// the split and duplicate check run beside the digest.
fn ids_and_digest(
    given: GivenIds<'_>,
    rows: usize,
    dtype: Dtype,
    data: &Borrowed,
) -> (Vec<String>, u64, Option<(usize, usize)>) {
    match given {
        GivenIds::Joined(text) => {
            let empty = rows == 0 && text.is_empty();
            let ((ids, duplicate), digest) = rayon::join(
                || {
                    let ids: Vec<String> = if empty {
                        Vec::new()
                    } else {
                        text.split('\n').map(str::to_owned).collect()
                    };
                    let duplicate = first_duplicate(&ids);
                    (ids, duplicate)
                },
                || {
                    // The id part of the digest is the buffer plus a final "\n".
                    let mut h = xxhash_rust::xxh3::Xxh3::new();
                    if !empty {
                        h.update(text.as_bytes());
                        h.update(b"\n");
                    }
                    hash_values(&mut h, dtype, data.bytes());
                    h.digest()
                },
            );
            (ids, digest, duplicate)
        }
        GivenIds::Listed(ids) => {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            for id in &ids {
                h.update(id.as_bytes());
                h.update(b"\n");
            }
            hash_values(&mut h, dtype, data.bytes());
            let duplicate = first_duplicate(&ids);
            (ids, h.digest(), duplicate)
        }
    }
}

/// Feed the values' little-endian f32 bytes to `h` (f16 widened to f32 in blocks), as
/// `InMemoryDescriptors::digest` does value by value.
fn hash_values(h: &mut xxhash_rust::xxh3::Xxh3, dtype: Dtype, bytes: &[u8]) {
    match dtype {
        // Little-endian f32 bytes are hashed as they are.
        Dtype::F32 => h.update(bytes),
        Dtype::F16 => {
            let mut wide = vec![0f32; 1 << 14];
            let mut buf = Vec::with_capacity(4 << 14);
            for chunk in bytes.chunks(2 << 14) {
                let out = &mut wide[..chunk.len() / 2];
                convert_le(Dtype::F16, chunk, out);
                buf.clear();
                for v in out.iter() {
                    buf.extend_from_slice(&v.to_le_bytes());
                }
                h.update(&buf);
            }
        }
    }
}

/// `find_duplicate`, with a cheap first pass: sort the 64-bit id hashes alone (8 bytes per id,
/// in parallel); only when two hashes are equal (a repeated id, or a hash collision, which
/// `find_duplicate` tells apart) is the exact search run for the positions.
fn first_duplicate(ids: &[String]) -> Option<(usize, usize)> {
    use rayon::prelude::*;
    let mut hashes: Vec<u64> = ids
        .par_iter()
        .map(|id| xxhash_rust::xxh3::xxh3_64(id.as_bytes()))
        .collect();
    hashes.par_sort_unstable();
    if hashes.windows(2).all(|w| w[0] != w[1]) {
        return None;
    }
    find_duplicate(ids)
}

impl DescriptorSource for ArraySource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> tailrank::Result<()> {
        let (dim, dtype) = (self.dim(), self.dtype());
        let esize = match dtype {
            Dtype::F32 => 4,
            Dtype::F16 => 2,
        };
        let bytes = self.data.bytes();
        let begin = start.saturating_mul(dim).saturating_mul(esize);
        let end = begin.saturating_add(out.len().saturating_mul(esize));
        if end > bytes.len() || !out.len().is_multiple_of(dim) {
            return Err(tailrank::Error::internal_at(
                self.path(),
                format!("rows {start}.. out of range ({} rows)", self.rows()),
            ));
        }
        convert_le(dtype, &bytes[begin..end], out);
        Ok(())
    }
    fn digest(&self) -> String {
        self.digest.clone()
    }
}
