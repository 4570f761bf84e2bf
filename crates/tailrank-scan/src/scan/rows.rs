//! Reading rows into block buffers and checking them (docs/method.md §2, the norm check):
//! every query, core and pool row must be finite with `|‖x‖₂ − 1| ≤` [`NORM_TOLERANCE`] (on
//! the f32 values after conversion from f16); with `normalize` every row is L2-normalised and
//! the rows that were outside the tolerance are counted. A zero row, or one whose squares
//! underflow f32, is an error either way.

use crate::error::{Error, Result};
use crate::formats::descriptors::DescriptorSource;

/// Rows of a descriptor must satisfy `|‖x‖₂ − 1| ≤ NORM_TOLERANCE` (f32 values).
pub const NORM_TOLERANCE: f32 = 1e-3;

/// Check (or, with `normalize`, fix) `n` rows of `buf`. Returns the number of rows whose norm
/// was outside the tolerance. `row_of(i)` gives the source row of buffer row `i` for messages.
pub fn check_rows(
    buf: &mut [f32],
    d: usize,
    normalize: bool,
    src: &dyn DescriptorSource,
    row_of: impl Fn(usize) -> usize,
) -> Result<u64> {
    let mut off = 0u64;
    for (i, x) in buf.chunks_exact_mut(d).enumerate() {
        let mut acc = [0f32; 8];
        let mut it = x.chunks_exact(8);
        for c in &mut it {
            for l in 0..8 {
                acc[l] += c[l] * c[l];
            }
        }
        let mut sq: f32 = it.remainder().iter().map(|v| v * v).sum();
        sq += acc.iter().sum::<f32>();
        let norm = sq.sqrt();
        let bad = |msg: String| {
            let row = row_of(i);
            let id = src.ids().name(row).unwrap_or_else(|_| "?".into());
            Error::input(src.path(), format!("row {row} (id {id:?}): {msg}"))
        };
        if !norm.is_finite() {
            if let Some(c) = x.iter().position(|v| !v.is_finite()) {
                return Err(bad(format!("non-finite value {} in column {c}", x[c])));
            }
            // Finite values whose squares overflow f32: the norm in f64, by which a row is
            // normalised as asked.
            let norm = x.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>().sqrt();
            if !normalize {
                return Err(bad(format!(
                    "L2 norm {norm:e} is not 1; descriptors must be L2-normalised (or normalise \
                     them: `--normalize`, Python `normalize=True`)"
                )));
            }
            off += 1;
            x.iter_mut()
                .for_each(|v| *v = (f64::from(*v) / norm) as f32);
            continue;
        }
        if sq < f32::MIN_POSITIVE {
            // Σx² is 0 or subnormal: either every value is 0, or the values are so small that
            // their squares underflow f32 and the norm is lost (a row of 1e-30 is not a zero
            // vector; normalising it from a subnormal Σx² would give a wrong direction).
            let largest = x
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
                .map(|(c, v)| (c, *v));
            return Err(match largest {
                None | Some((_, 0.0)) => bad("zero vector (cannot be L2-normalised)".into()),
                Some((c, v)) => bad(format!(
                    "values too small for an f32 norm (not all 0: the largest is {v:e}, \
                     column {c}, but the sum of squares {sq:e} underflows f32); the row cannot \
                     be L2-normalised accurately: rescale it"
                )),
            });
        }
        let outside = (norm - 1.0).abs() > NORM_TOLERANCE;
        if outside {
            if !normalize {
                return Err(bad(format!(
                    "L2 norm {norm} is not 1 (tolerance {NORM_TOLERANCE}); descriptors must be \
                     L2-normalised (or normalise them: `--normalize`, Python `normalize=True`)"
                )));
            }
            off += 1;
        }
        if normalize {
            let inv = 1.0 / norm;
            x.iter_mut().for_each(|v| *v *= inv);
        }
    }
    Ok(off)
}

/// Read rows `rows` (sorted, ascending) of `src` into the first `rows.len()` rows of `block`,
/// one `read_rows` call per run of consecutive rows; zero the rest.
pub fn gather(src: &dyn DescriptorSource, rows: &[u32], d: usize, block: &mut [f32]) -> Result<()> {
    let mut i = 0;
    while i < rows.len() {
        let mut j = i + 1;
        while j < rows.len() && rows[j] == rows[j - 1] + 1 {
            j += 1;
        }
        src.read_rows(rows[i] as usize, &mut block[i * d..j * d])?;
        i = j;
    }
    block[rows.len() * d..].fill(0.0);
    Ok(())
}
