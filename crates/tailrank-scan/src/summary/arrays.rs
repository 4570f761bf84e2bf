//! The `.npy` arrays of a summary folder (npy format 1.0, little-endian, C order): writing
//! them with their checksum, dtype and shape record for the manifest ([`ArrayRecord`]), and
//! reading them back checked against that record (layout: [`super::format`]).

use crate::error::{Error, IoContext, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use tailrank_io::formats::not_a_regular_file;
use xxhash_rust::xxh3::Xxh3;

/// Checksum, dtype and shape of one array file, as recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct ArrayRecord {
    pub dtype: String,
    pub shape: Vec<u64>,
    pub xxh3: String,
}

/// The array records of a manifest and the manifest's path (named in errors).
pub(super) struct Manifests<'a> {
    pub path: &'a Path,
    pub arrays: &'a BTreeMap<String, ArrayRecord>,
}

/// An element type storable in the summary's `.npy` files.
pub(super) trait Elem: Copy {
    const DESCR: &'static str;
    const SIZE: usize;
    /// Its little-endian bytes into `out` (`SIZE` of them).
    fn put_le(self, out: &mut [u8]);
    fn get(bytes: &[u8]) -> Self;

    /// Append the little-endian bytes of `vs` to `out`.
    fn put_all(vs: &[Self], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + vs.len() * Self::SIZE, 0);
        for (b, &v) in out[start..].chunks_exact_mut(Self::SIZE).zip(vs) {
            v.put_le(b);
        }
    }
}

/// `Elem` for primitive `$t` with numpy dtype `$descr`: its `to_le_bytes` / `from_le_bytes`.
macro_rules! elem {
    ($($t:ty => $descr:literal),*) => {$(
        impl Elem for $t {
            const DESCR: &'static str = $descr;
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn get(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("SIZE bytes"))
            }
        }
    )*};
}

elem!(u64 => "<u8", u32 => "<u4", f32 => "<f4");

/// The xxh3 checksum string of a byte stream, as stored in the manifest.
pub(super) fn checksum_string(h: u64) -> String {
    format!("xxh3:{h:016x}")
}

/// The npy 1.0 header for a C-order little-endian array (padded to a multiple of 64 bytes).
fn npy_header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let shape_str = match shape {
        [n] => format!("{n},"),
        _ => shape
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    let mut dict =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({shape_str}), }}");
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Write `values` (exactly `∏ shape` of them) as `dir/name` and return its manifest record.
pub(super) fn write_array<T: Elem>(
    dir: &Path,
    name: &str,
    shape: &[u64],
    values: impl Iterator<Item = T>,
) -> Result<(String, ArrayRecord)> {
    write_array_runs(dir, name, shape, values.map(Run::One))
}

/// A piece of an array's values in order: one value or a slice.
pub(super) enum Run<'a, T> {
    One(T),
    Slice(&'a [T]),
}

/// [`write_array`] with the values given as [`Run`]s (long slices are converted in one loop
/// rather than value by value: `top_scores` is most of a summary's bytes).
pub(super) fn write_array_runs<'a, T: Elem + 'a>(
    dir: &Path,
    name: &str,
    shape: &[u64],
    runs: impl Iterator<Item = Run<'a, T>>,
) -> Result<(String, ArrayRecord)> {
    const FLUSH: usize = 1 << 16;
    let path = dir.join(name);
    let expected: u64 = shape.iter().product();
    let mut hasher = Xxh3::new();
    crate::atomic::write_file(&path, |w| {
        let mut buf = npy_header(T::DESCR, shape);
        let mut count = 0u64;
        let mut flush = |buf: &mut Vec<u8>, at_least: usize| -> Result<()> {
            if buf.len() >= at_least {
                hasher.update(buf);
                w.write_all(buf).at(&path)?;
                buf.clear();
            }
            Ok(())
        };
        for run in runs {
            match run {
                Run::One(v) => {
                    T::put_all(&[v], &mut buf);
                    count += 1;
                }
                Run::Slice(vs) => {
                    for piece in vs.chunks(FLUSH / T::SIZE) {
                        T::put_all(piece, &mut buf);
                        count += piece.len() as u64;
                        flush(&mut buf, FLUSH)?;
                    }
                }
            }
            flush(&mut buf, FLUSH)?;
        }
        flush(&mut buf, 0)?;
        if count != expected {
            return Err(Error::internal(format!(
                "{}: internal error: {count} values for shape {shape:?}",
                path.display()
            )));
        }
        Ok(())
    })?;
    Ok((
        name.to_string(),
        ArrayRecord {
            dtype: T::DESCR.to_string(),
            shape: shape.to_vec(),
            xxh3: checksum_string(hasher.digest()),
        },
    ))
}

/// Parsed npy header: dtype descriptor, Fortran flag, shape, and where the data starts.
struct NpyHeader {
    descr: String,
    fortran: bool,
    shape: Vec<u64>,
    data_start: usize,
}

fn parse_npy_header(path: &Path, bytes: &[u8]) -> Result<NpyHeader> {
    let bad = |msg: &str| Error::input(path, format!("not a valid .npy file: {msg}"));
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("missing the \\x93NUMPY magic"));
    }
    let (len, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize,
            12,
        ),
        v => return Err(bad(&format!("unsupported npy version {v}"))),
    };
    let end = start
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("header longer than the file"))?;
    let text = std::str::from_utf8(&bytes[start..end])
        .map_err(|_| bad("header is not text"))?
        .replace('"', "'");
    let after = |key: &str| -> Result<&str> {
        let i = text
            .find(&format!("'{key}'"))
            .ok_or_else(|| bad(&format!("header has no '{key}'")))?;
        let rest = &text[i + key.len() + 2..];
        let colon = rest
            .find(':')
            .ok_or_else(|| bad(&format!("malformed '{key}'")))?;
        Ok(rest[colon + 1..].trim_start())
    };
    let d = after("descr")?;
    let descr = d
        .strip_prefix('\'')
        .and_then(|r| r.split('\'').next())
        .ok_or_else(|| bad("malformed 'descr'"))?
        .to_string();
    let fortran = after("fortran_order")?.starts_with("True");
    let sh = after("shape")?;
    let inner = sh
        .strip_prefix('(')
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| bad("malformed 'shape'"))?;
    let shape = inner
        .split(',')
        .map(|x| x.trim().trim_end_matches('L'))
        .filter(|x| !x.is_empty())
        .map(|x| x.parse::<u64>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| bad(&format!("malformed shape ({inner})")))?;
    Ok(NpyHeader {
        descr,
        fortran,
        shape,
        data_start: end,
    })
}

/// Read `dir/name` and decode it (see [`read_raw`]).
pub(super) fn read_array<T: Elem>(
    dir: &Path,
    manifest: &Manifests,
    name: &str,
    shape: &[u64],
) -> Result<Vec<T>> {
    let (bytes, start) = read_raw::<T>(dir, manifest, name, shape)?;
    Ok(bytes[start..].chunks_exact(T::SIZE).map(T::get).collect())
}

/// Read `dir/name`, verify its checksum against the manifest and its dtype and shape against
/// `shape`; returns the file's bytes and the offset of the data.
pub(super) fn read_raw<T: Elem>(
    dir: &Path,
    manifest: &Manifests,
    name: &str,
    shape: &[u64],
) -> Result<(Vec<u8>, usize)> {
    let mpath = manifest.path;
    let path = dir.join(name);
    let rec = manifest.arrays.get(name).ok_or_else(|| {
        Error::input(
            mpath,
            format!("the manifest has no record for array {name}"),
        )
    })?;
    match std::fs::metadata(&path) {
        Ok(m) => {
            if let Some(what) = not_a_regular_file(&m) {
                return Err(Error::input(
                    &path,
                    format!("{what}, where manifest.json lists an array file"),
                ));
            }
        }
        Err(_) => {
            return Err(Error::input(
                &path,
                "array file missing from the summary folder (listed in manifest.json)",
            ))
        }
    }
    let bytes = std::fs::read(&path).at(&path)?;
    let actual = checksum_string(xxhash_rust::xxh3::xxh3_64(&bytes));
    if actual != rec.xxh3 {
        return Err(Error::input(
            &path,
            format!(
                "checksum mismatch: manifest.json records {}, the file hashes to {actual} \
                 (the array is corrupted or was modified)",
                rec.xxh3
            ),
        ));
    }
    let h = parse_npy_header(&path, &bytes)?;
    if h.descr != T::DESCR {
        return Err(Error::input(
            &path,
            format!("dtype {:?}, expected {:?}", h.descr, T::DESCR),
        ));
    }
    if h.fortran {
        return Err(Error::input(
            &path,
            "Fortran-ordered array; expected C order",
        ));
    }
    if h.shape != shape || rec.shape != shape {
        return Err(Error::input(
            &path,
            format!(
                "shape {:?} (manifest: {:?}) inconsistent with the expected {shape:?} \
                 (from the manifest's query, positive, subset counts and M)",
                h.shape, rec.shape
            ),
        ));
    }
    let n: u64 = shape.iter().product();
    let data = &bytes[h.data_start..];
    if data.len() as u64 != n * T::SIZE as u64 {
        return Err(Error::input(
            &path,
            format!(
                "{} data bytes, expected {} for shape {shape:?} ({})",
                data.len(),
                n * T::SIZE as u64,
                if (data.len() as u64) < n * T::SIZE as u64 {
                    "truncated"
                } else {
                    "trailing bytes"
                }
            ),
        ));
    }
    Ok((bytes, h.data_start))
}
