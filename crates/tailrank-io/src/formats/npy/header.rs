//! The `.npy` header: parsing it (versions 1.0 to 3.0, the Python dict literal read by a small
//! parser that accepts what numpy writes and names anything else) and building the v1.0/v2.0
//! header that [`super::write_npy`] writes (layout: [`super`]).

use super::super::descriptors::Dtype;
use crate::error::{echo, Error, Result};
use std::path::Path;

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
        return Err(Error::input(
            path,
            "empty file (0 bytes), not an .npy array",
        ));
    }
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(Error::input(
            path,
            "not an .npy file (missing the \\x93NUMPY magic)",
        ));
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (hlen, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(Error::input(path, "truncated .npy header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        _ => {
            return Err(Error::unsupported(
                path,
                format!(
                    "unsupported .npy format version {major}.{minor} (expected 1.x, 2.x or 3.x)"
                ),
            ))
        }
    };
    let end = start + hlen;
    if bytes.len() < end {
        return Err(Error::input(
            path,
            format!(
                "truncated .npy header: it declares {hlen} bytes but the file has only {}",
                bytes.len().saturating_sub(start)
            ),
        ));
    }
    let text = std::str::from_utf8(&bytes[start..end])
        .map_err(|_| Error::input(path, ".npy header is not valid text"))?;
    let dict = parse_dict(text).map_err(|m| {
        Error::input(
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
                return Err(Error::unsupported(
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
    let descr = descr.ok_or_else(|| Error::input(path, ".npy header has no 'descr'"))?;
    let fortran =
        fortran.ok_or_else(|| Error::input(path, ".npy header has no 'fortran_order'"))?;
    let shape = shape.ok_or_else(|| Error::input(path, ".npy header has no 'shape'"))?;
    let dtype = match descr.as_str() {
        "<f2" => Dtype::F16,
        "<f4" => Dtype::F32,
        other => {
            return Err(Error::unsupported(
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
        return Err(Error::unsupported(
            path,
            "array is stored in Fortran (column-major) order; save it in C order \
             (np.ascontiguousarray) so that rows are contiguous",
        ));
    }
    if shape.len() != 2 {
        return Err(Error::input(
            path,
            format!(
                "array has {} dimensions (shape {}); descriptors must be a 2-D rows × dim matrix",
                shape.len(),
                shape_text(&shape)
            ),
        ));
    }
    if shape[1] == 0 {
        return Err(Error::input(path, "descriptor dimension is 0"));
    }
    let h = NpyHeader {
        version: (major, minor),
        dtype,
        rows: shape[0],
        dim: shape[1],
        data_offset: end,
    };
    if h.data_len().is_none() {
        return Err(Error::input(
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
pub(super) enum Value {
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
pub(super) fn parse_dict(text: &str) -> std::result::Result<Vec<(String, Value)>, String> {
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
