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

use super::descriptors::{DescriptorSource, Dtype};
use super::row_ids::RowIds;
use crate::atomic;
use crate::error::{echo, Error, IoContext, Result};
use half::f16;
use half::slice::HalfFloatSliceExt;
use memmap2::Mmap;
use std::fs::File;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// What an `.npy` header says about the array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// Format version (major, minor).
    pub version: (u8, u8),
    pub dtype: Dtype,
    pub rows: usize,
    pub dim: usize,
    /// Byte offset of the first data byte (= total header size, magic included).
    pub data_offset: usize,
}

impl NpyHeader {
    /// Bytes per element.
    pub fn itemsize(&self) -> usize {
        dtype_size(self.dtype)
    }
    /// Expected number of data bytes: `rows · dim · itemsize`.
    pub fn data_len(&self) -> Option<usize> {
        self.rows
            .checked_mul(self.dim)
            .and_then(|n| n.checked_mul(self.itemsize()))
    }
}

/// Bytes per element of `dtype`.
pub fn dtype_size(dtype: Dtype) -> usize {
    match dtype {
        Dtype::F16 => 2,
        Dtype::F32 => 4,
    }
}

/// Parse an `.npy` header from the start of a file (`bytes` must hold the whole header).
/// `path` is used in error messages.
pub fn parse_header(path: &Path, bytes: &[u8]) -> Result<NpyHeader> {
    if bytes.is_empty() {
        return Err(Error::file(path, "empty file (0 bytes), not an .npy array"));
    }
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(Error::file(
            path,
            "not an .npy file (missing the \\x93NUMPY magic)",
        ));
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (hlen, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(Error::file(path, "truncated .npy header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        _ => {
            return Err(Error::file(
                path,
                format!(
                    "unsupported .npy format version {major}.{minor} (expected 1.x, 2.x or 3.x)"
                ),
            ))
        }
    };
    let end = start + hlen;
    if bytes.len() < end {
        return Err(Error::file(
            path,
            format!(
                "truncated .npy header: it declares {hlen} bytes but the file has only {}",
                bytes.len().saturating_sub(start)
            ),
        ));
    }
    let text = std::str::from_utf8(&bytes[start..end])
        .map_err(|_| Error::file(path, ".npy header is not valid text"))?;
    let dict = parse_dict(text).map_err(|m| {
        Error::file(
            path,
            format!("cannot parse .npy header {}: {m}", echo(text.trim())),
        )
    })?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (k, v) in dict {
        match (k.as_str(), v) {
            ("descr", Value::Str(s)) => descr = Some(s),
            ("descr", other) => {
                let kind = match &other {
                    Value::Other(t) if t.starts_with('[') => "a structured dtype",
                    _ => "not a dtype string",
                };
                return Err(Error::file(
                    path,
                    format!(
                        "unsupported dtype {} ({kind}): only plain '<f2' (little-endian \
                         float16) and '<f4' (little-endian float32) arrays are accepted",
                        echo(&other.text())
                    ),
                ));
            }
            ("fortran_order", Value::Bool(b)) => fortran = Some(b),
            ("shape", Value::Tuple(t)) => shape = Some(t),
            _ => {}
        }
    }
    let descr = descr.ok_or_else(|| Error::file(path, ".npy header has no 'descr'"))?;
    let fortran = fortran.ok_or_else(|| Error::file(path, ".npy header has no 'fortran_order'"))?;
    let shape = shape.ok_or_else(|| Error::file(path, ".npy header has no 'shape'"))?;
    let dtype = match descr.as_str() {
        "<f2" => Dtype::F16,
        "<f4" => Dtype::F32,
        other => {
            return Err(Error::file(
                path,
                format!(
                    "unsupported dtype {}: only '<f2' (little-endian float16) and '<f4' \
                     (little-endian float32) are accepted",
                    echo_quoted(other)
                ),
            ))
        }
    };
    if fortran {
        return Err(Error::file(
            path,
            "array is stored in Fortran (column-major) order; save it in C order \
             (np.ascontiguousarray) so that rows are contiguous",
        ));
    }
    if shape.len() != 2 {
        return Err(Error::file(
            path,
            format!(
                "array has {} dimensions (shape {}); descriptors must be a 2-D rows × dim matrix",
                shape.len(),
                shape_text(&shape)
            ),
        ));
    }
    if shape[1] == 0 {
        return Err(Error::file(path, "descriptor dimension is 0"));
    }
    let h = NpyHeader {
        version: (major, minor),
        dtype,
        rows: shape[0],
        dim: shape[1],
        data_offset: end,
    };
    if h.data_len().is_none() {
        return Err(Error::file(
            path,
            format!("shape {} overflows", shape_text(&shape)),
        ));
    }
    Ok(h)
}

/// A dtype string as `'<f8'` (Python's quotes), capped like [`echo`].
fn echo_quoted(s: &str) -> String {
    if s.chars().count() <= crate::error::ECHO_CHARS && !s.contains(['\'', '\\']) {
        format!("'{s}'")
    } else {
        echo(s)
    }
}

/// A shape as `[200, 4, 2]`, capped like [`echo`] (a corrupt header may list 40,000 dims).
fn shape_text(shape: &[usize]) -> String {
    let t = format!("{shape:?}");
    if t.chars().count() <= crate::error::ECHO_CHARS {
        t
    } else {
        let cut = t
            .char_indices()
            .nth(crate::error::ECHO_CHARS)
            .map_or(t.len(), |c| c.0);
        format!("{}…({} dimensions)", &t[..cut], shape.len())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Str(String),
    Bool(bool),
    Int(usize),
    Tuple(Vec<usize>),
    Other(String),
}

impl Value {
    /// The value as it reads in the header (Python literal syntax).
    fn text(&self) -> String {
        match self {
            Value::Str(s) => format!("'{s}'"),
            Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Tuple(t) => format!(
                "({})",
                t.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Other(t) => t.clone(),
        }
    }
}

/// Parse the Python dict literal of an `.npy` header: string keys; values are strings, booleans,
/// integers or tuples of integers (anything else is kept as raw text, e.g. a structured dtype).
fn parse_dict(text: &str) -> std::result::Result<Vec<(String, Value)>, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    p.expect(b'{')?;
    let mut out = Vec::new();
    loop {
        p.ws();
        if p.peek() == Some(b'}') {
            break;
        }
        let key = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        let val = p.value()?;
        out.push((key, val));
        p.ws();
        match p.peek() {
            Some(b',') => p.i += 1,
            Some(b'}') => {}
            _ => return Err(format!("expected ',' or '}}' at byte {}", p.i)),
        }
    }
    Ok(out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }
    fn expect(&mut self, c: u8) -> std::result::Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", c as char, self.i))
        }
    }
    fn string(&mut self) -> std::result::Result<String, String> {
        let q = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(format!("expected a quoted string at byte {}", self.i)),
        };
        self.i += 1;
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == q {
                let s = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.i += 1;
                return Ok(s);
            }
            self.i += 1;
        }
        Err("unterminated string".into())
    }
    fn int(&mut self) -> std::result::Result<usize, String> {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        let v = digits
            .parse::<usize>()
            .map_err(|_| format!("expected a non-negative integer at byte {start}"))?;
        if matches!(self.peek(), Some(b'L' | b'l')) {
            self.i += 1; // Python 2 long suffix
        }
        Ok(v)
    }
    fn value(&mut self) -> std::result::Result<Value, String> {
        match self.peek() {
            Some(b'\'' | b'"') => Ok(Value::Str(self.string()?)),
            Some(b'0'..=b'9') => Ok(Value::Int(self.int()?)),
            Some(b'(') => {
                self.i += 1;
                let mut t = Vec::new();
                loop {
                    self.ws();
                    if self.peek() == Some(b')') {
                        self.i += 1;
                        return Ok(Value::Tuple(t));
                    }
                    t.push(self.int()?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b')') => {}
                        _ => return Err(format!("bad tuple at byte {}", self.i)),
                    }
                }
            }
            _ => {
                if self.s[self.i..].starts_with(b"True") {
                    self.i += 4;
                    return Ok(Value::Bool(true));
                }
                if self.s[self.i..].starts_with(b"False") {
                    self.i += 5;
                    return Ok(Value::Bool(false));
                }
                // Raw value (e.g. a list describing a structured dtype): balanced brackets.
                let start = self.i;
                let mut depth = 0i32;
                while let Some(c) = self.peek() {
                    match c {
                        b'[' | b'(' | b'{' => depth += 1,
                        b']' | b')' | b'}' if depth > 0 => depth -= 1,
                        b',' | b'}' if depth == 0 => break,
                        _ => {}
                    }
                    self.i += 1;
                }
                Ok(Value::Other(
                    String::from_utf8_lossy(&self.s[start..self.i])
                        .trim()
                        .to_string(),
                ))
            }
        }
    }
}

/// Sibling id files tried, in order, for `path` = `dir/stem.npy`.
pub fn sibling_id_candidates(path: &Path) -> Vec<PathBuf> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    [".ids.txt", "_ids.txt", ".ids.txt.gz", "_ids.txt.gz"]
        .iter()
        .map(|suffix| path.with_file_name(format!("{stem}{suffix}")))
        .collect()
}

/// A memory-mapped `.npy` matrix with row ids.
pub struct NpyDescriptors {
    path: PathBuf,
    ids_path: PathBuf,
    header: NpyHeader,
    /// The open file behind `map`: its length is checked before every read, so that a file
    /// truncated by another process during a scan gives an error instead of a fault.
    file: File,
    /// File length at open (header + data).
    len: u64,
    map: Mmap,
    ids: RowIds,
    digest: String,
}

impl std::fmt::Debug for NpyDescriptors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpyDescriptors")
            .field("path", &self.path)
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
                    Error::file(
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
            return Err(Error::file(path, "empty file (0 bytes), not an .npy array"));
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
            return Err(Error::file(
                path,
                format!(
                    "truncated file: the header says {} rows × {} of {:?} ({want} data bytes) but \
                     only {have} data bytes are present (rows {full_rows}.. missing)",
                    header.rows, header.dim, header.dtype
                ),
            ));
        }
        if have > want {
            return Err(Error::file(
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
            return Err(Error::file(
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
            return Err(Error::file(
                &ids_path,
                format!("duplicate id {id:?} on lines {} and {}", a + 1, b + 1),
            ));
        }
        hash_ends(&mut h, &map[header.data_offset..]);
        let digest = format!("xxh3:{:016x}", h.digest());
        Ok(NpyDescriptors {
            path: path.to_path_buf(),
            ids_path,
            header,
            file,
            len: len as u64,
            map,
            ids,
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
        check_range(&self.path, start, n, self.header.rows)?;
        let now = self.file.metadata().at(&self.path)?.len();
        if now < self.len {
            return Err(Error::file(
                &self.path,
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
        return Err(Error::file(
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
            #[cfg(target_endian = "little")]
            {
                // SAFETY: every bit pattern is a valid f32; alignment is handled by align_to.
                let (pre, mid, post) = unsafe { bytes.align_to::<f32>() };
                if pre.is_empty() && post.is_empty() {
                    out.copy_from_slice(mid);
                    return;
                }
            }
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        Dtype::F16 => {
            debug_assert_eq!(bytes.len(), out.len() * 2);
            #[cfg(target_endian = "little")]
            {
                // SAFETY: every bit pattern is a valid f16; alignment is handled by align_to.
                let (pre, mid, post) = unsafe { bytes.align_to::<f16>() };
                if pre.is_empty() && post.is_empty() {
                    mid.convert_to_f32_slice(out);
                    return;
                }
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

impl DescriptorSource for NpyDescriptors {
    fn path(&self) -> &Path {
        &self.path
    }
    fn rows(&self) -> usize {
        self.header.rows
    }
    fn dim(&self) -> usize {
        self.header.dim
    }
    fn dtype(&self) -> Dtype {
        self.header.dtype
    }
    fn ids(&self) -> &RowIds {
        &self.ids
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()> {
        let dim = self.header.dim;
        if out.len() % dim != 0 {
            return Err(Error::invalid(format!(
                "{}: output buffer of {} values is not a whole number of rows of dimension {dim}",
                self.path.display(),
                out.len()
            )));
        }
        let n = out.len() / dim;
        let bytes = self.raw_rows(start, n)?;
        convert_le(self.header.dtype, bytes, out);
        Ok(())
    }
    fn digest(&self) -> String {
        self.digest.clone()
    }
}

/// Build an `.npy` v1.0 header (or v2.0 when the dict does not fit in 65535 bytes) for a C-order
/// `rows × dim` array, padded so that the data starts at a multiple of 64 bytes, as numpy does.
pub fn npy_header_bytes(rows: usize, dim: usize, dtype: Dtype) -> Vec<u8> {
    let descr = match dtype {
        Dtype::F16 => "<f2",
        Dtype::F32 => "<f4",
    };
    let dict =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({rows}, {dim}), }}");
    let v1 = dict.len() + 1 + 10 <= u16::MAX as usize;
    let prefix = if v1 { 10 } else { 12 };
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - prefix;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    if v1 {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Write a C-order `rows × dim` matrix (`data` row-major, f32) as `.npy` with element type
/// `dtype` (f16 values are rounded to nearest-even by `half`), atomically via
/// [`crate::atomic::write_file`]. numpy reads the result with `np.load`.
pub fn write_npy(path: &Path, rows: usize, dim: usize, data: &[f32], dtype: Dtype) -> Result<()> {
    if rows.checked_mul(dim) != Some(data.len()) {
        return Err(Error::file(
            path,
            format!("cannot write {} values as {rows} rows × {dim}", data.len()),
        ));
    }
    if dim == 0 {
        return Err(Error::file(path, "cannot write descriptors of dimension 0"));
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
mod tests {
    use super::*;

    #[test]
    fn header_roundtrip() {
        for dtype in [Dtype::F16, Dtype::F32] {
            let b = npy_header_bytes(12345, 768, dtype);
            assert_eq!(b.len() % 64, 0);
            let h = parse_header(Path::new("x.npy"), &b).unwrap();
            assert_eq!(
                (h.rows, h.dim, h.dtype, h.data_offset),
                (12345, 768, dtype, b.len())
            );
        }
    }

    #[test]
    fn dict_variants() {
        let d =
            parse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L), }  ").unwrap();
        assert_eq!(d[2].1, Value::Tuple(vec![3, 4]));
        let d = parse_dict("{\"shape\": (7,), \"descr\": [('a', '<f4')]}").unwrap();
        assert_eq!(d[0].1, Value::Tuple(vec![7]));
        assert!(matches!(d[1].1, Value::Other(_)));
    }

    /// A v1/v2 `.npy` header with the dict `dict` (no data).
    fn header_with(dict: &str) -> Vec<u8> {
        let mut b = b"\x93NUMPY\x02\x00".to_vec();
        b.extend_from_slice(&(dict.len() as u32 + 1).to_le_bytes());
        b.extend_from_slice(dict.as_bytes());
        b.push(b'\n');
        b
    }

    #[test]
    fn structured_dtype_is_named_as_text() {
        // Regression: the message printed the parser's debug form `Other("[('a', '<f4')…")`.
        let b = header_with(
            "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (3,), }",
        );
        let e = parse_header(Path::new("s.npy"), &b)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "s.npy: unsupported dtype \"[('a', '<f4'), ('b', '<f4')]\" (a structured \
             dtype): only plain '<f2' (little-endian float16) and '<f4' (little-endian float32) \
             arrays are accepted"
        );
        assert!(!e.contains("Other"), "{e}");
        let b = header_with("{'descr': 7, 'fortran_order': False, 'shape': (3, 2), }");
        let e = parse_header(Path::new("s.npy"), &b)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dtype \"7\" (not a dtype string)"), "{e}");
    }

    #[test]
    fn long_headers_are_not_echoed_whole() {
        // Regression: a 120 KB malformed header came back whole in the error line.
        let deep = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': {}",
            "[".repeat(120_000)
        );
        let e = parse_header(Path::new("d.npy"), &header_with(&deep))
            .unwrap_err()
            .to_string();
        assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..300]);
        assert!(e.contains(&format!("…({} bytes)", deep.len())), "{e}");
        // A structured dtype nested 100,000 levels deep: parsed without recursion, echo capped.
        let nested = format!(
            "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (2, 2), }}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let e = parse_header(Path::new("d.npy"), &header_with(&nested))
            .unwrap_err()
            .to_string();
        assert!(e.len() < 400 && e.contains("…(200005 bytes)"), "{e}");
        // 40,000 dimensions.
        let dims = vec!["1"; 40_000].join(", ");
        let many = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({dims}), }}");
        let e = parse_header(Path::new("d.npy"), &header_with(&many))
            .unwrap_err()
            .to_string();
        assert!(e.len() < 400 && e.contains("…(40000 dimensions)"), "{e}");
    }
}
