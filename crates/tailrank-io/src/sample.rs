//! Hash sampling of the distractor pool (docs/method.md §4).
//!
//! An item with id `id` is in the sample at fraction `f` iff
//! `xxh3_64_with_seed(utf8(id), seed) < t(f)` with `t(f) = ⌊f · 2^64⌋` computed in f64
//! (`t(1) = u64::MAX`, everything kept). Membership is deterministic, independent of order and
//! sharding, and nested: `f' < f ⇒ sample(f') ⊆ sample(f)`. Python draws the same set with
//! `xxhash.xxh3_64_intdigest(id.encode(), seed=seed) < int(f * 2**64)`.

use crate::error::{Error, Result};
/// The 64-bit hash `xxh3_64_with_seed(utf8(id), seed)` that decides membership of `id`; it
/// lives with the id formats (it is also the key of an id at seed 0).
pub use crate::formats::ids::id_hash;

/// The hash seed when none is given (`tailrank sample --seed`, `scan --seed`, Python `seed=`):
/// a sample and the scan of it must be drawn with the same one.
pub const DEFAULT_SEED: u64 = 0;

/// Check that `f` is a usable sampling fraction: finite and in (0, 1].
pub fn check_fraction(f: f64) -> Result<f64> {
    if f.is_finite() && f > 0.0 && f <= 1.0 {
        Ok(f)
    } else {
        // Far from 1, Debug's exponent form (1e300) instead of Display's 301 digits.
        let shown = match f == 0.0 || (1e-6..1e6).contains(&f.abs()) {
            true => f.to_string(),
            false => format!("{f:?}"),
        };
        Err(Error::option(format!(
            "sampling fraction must be in (0, 1], got {shown}"
        )))
    }
}

/// Whether a scan at sampling fraction `f` is exact: `f ≥ 1`, the whole pool scanned (the one
/// statement of "exact mode").
pub fn is_exact_fraction(f: f64) -> bool {
    f >= 1.0
}

/// Threshold `t(f) = ⌊f · 2^64⌋` (f64 arithmetic, truncated), saturating to `u64::MAX` at
/// `f = 1`. An id is sampled iff its hash is `< t(f)`, except at `f = 1` where all are kept.
pub fn threshold(f: f64) -> Result<u64> {
    let f = check_fraction(f)?;
    // `as` saturates: f = 1 gives 2^64 → u64::MAX.
    Ok((f * 18_446_744_073_709_551_616.0) as u64)
}

/// A hash interval `[lo, hi)`; `hi = u64::MAX` is treated as inclusive so that `f = 1` keeps
/// every id. Sampling levels are `[0, t(f_ℓ))`; drift shards are disjoint slices of the sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HashRange {
    pub lo: u64,
    pub hi: u64,
}

impl HashRange {
    /// The sample at fraction `f`.
    pub fn fraction(f: f64) -> Result<Self> {
        Ok(HashRange {
            lo: 0,
            hi: threshold(f)?,
        })
    }

    /// The sample increment from fraction `after` to `fraction`: `[t(after), t(fraction))`,
    /// the ids that the sample at `fraction` adds to the one at `after` (the nesting makes it
    /// the difference of the two samples). Refuses `after ≥ fraction`.
    pub fn increment(after: f64, fraction: f64) -> Result<Self> {
        let lo = threshold(after).map_err(|_| {
            Error::option(format!(
                "--after (Python `after=`) must be a sampling fraction in (0, 1), got {after:?}"
            ))
        })?;
        let hi = threshold(fraction)?;
        if lo == 0 {
            return Err(Error::option(format!(
                "--after (Python `after=`) {after:?} is below 2^-64: the sample at it holds no hash (t = 0), so the \
                 increment would be the whole sample at {fraction}; give the fraction of the \
                 sample that the increment grows"
            )));
        }
        if after >= fraction || lo >= hi {
            return Err(Error::option(format!(
                "--after (Python `after=`) {after} must be below the sampling fraction {fraction}: the increment \
                 holds the ids with t({after}) <= hash < t({fraction})"
            )));
        }
        Ok(HashRange { lo, hi })
    }

    /// The sample at `fraction`, or its increment over `after` ([`HashRange::increment`]).
    pub fn sample(fraction: f64, after: Option<f64>) -> Result<Self> {
        match after {
            Some(a) => Self::increment(a, fraction),
            None => Self::fraction(fraction),
        }
    }

    /// Whether hash `h` falls in the range.
    #[inline]
    pub fn contains(&self, h: u64) -> bool {
        h >= self.lo && (h < self.hi || self.hi == u64::MAX)
    }

    /// The bounds as half-open `[lo, end)` over u128 (`hi = u64::MAX` is inclusive: `end = 2^64`).
    pub fn bounds(&self) -> (u128, u128) {
        let end = if self.hi == u64::MAX {
            1u128 << 64
        } else {
            self.hi as u128
        };
        (self.lo as u128, end)
    }

    /// The hashes in both ranges, `None` when there are none.
    pub fn intersect(&self, other: &HashRange) -> Option<HashRange> {
        let ((a, b), (c, d)) = (self.bounds(), other.bounds());
        let (lo, end) = (a.max(c), b.min(d));
        (lo < end).then(|| HashRange {
            lo: lo as u64,
            hi: end.min(u64::MAX as u128) as u64,
        })
    }

    /// The width as a fraction of the hash space: `(end − lo) / 2^64`.
    pub fn width_fraction(&self) -> f64 {
        let (lo, end) = self.bounds();
        (end - lo) as f64 / 18_446_744_073_709_551_616.0
    }

    /// Split into `parts` disjoint, adjacent ranges covering this one.
    pub fn split(&self, parts: u64) -> Vec<HashRange> {
        let width = (self.hi - self.lo) as u128;
        (0..parts)
            .map(|i| HashRange {
                lo: self.lo + (width * i as u128 / parts as u128) as u64,
                hi: self.lo + (width * (i + 1) as u128 / parts as u128) as u64,
            })
            .collect()
    }
}

/// Whether `id` is in the sample at fraction `f` with `seed`.
pub fn in_sample(id: &str, f: f64, seed: u64) -> Result<bool> {
    Ok(HashRange::fraction(f)?.contains(id_hash(id, seed)))
}

/// The ids of the id list `path` (`docs/reference/formats.md`) in `range` at `seed`, in file order, and
/// the number of ids read. The list is streamed twice (8 bytes per id are kept for the
/// duplicate check, [`crate::formats::RowIds`], then only the sampled ids); a repeated id is
/// an error naming it and both lines.
pub fn sample_id_list(
    path: &std::path::Path,
    range: HashRange,
    seed: u64,
) -> Result<(usize, Vec<String>)> {
    let ids = crate::formats::RowIds::read_text(path, None)?;
    if ids.is_empty() {
        return Err(Error::input(
            path,
            "no ids: the pool id list is empty (one id per line expected)",
        ));
    }
    if let Some((a, b, id)) = ids.find_duplicate()? {
        return Err(Error::input(
            path,
            format!("duplicate id {id:?} on lines {} and {}", a + 1, b + 1),
        ));
    }
    let mut kept = Vec::new();
    ids.for_each(|_, id| {
        if range.contains(id_hash(id, seed)) {
            kept.push(id.to_owned());
        }
        Ok(())
    })?;
    Ok((ids.len(), kept))
}

/// The manifest written next to a sample id list `out` by `tailrank sample`:
/// `<OUT>.manifest.json`.
pub fn manifest_path(out: &std::path::Path) -> Result<std::path::PathBuf> {
    crate::atomic::sibling(out, ".manifest.json")
}

/// Whether the file `p` is a sample manifest ([`SampleManifest`] as [`write_sample`] writes
/// it: a small JSON object with `digest_algorithm`).
fn is_sample_manifest(p: &std::path::Path) -> bool {
    let small = std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= 1 << 16);
    small
        && std::fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v.get("digest_algorithm").is_some())
}

/// Refuse the outputs of a sample that would break another sample's pair: an id list `out`
/// over the manifest of a sample `X` (`out` = `X.manifest.json`, `X` a file), and a manifest
/// `manifest` over an existing file that is no sample manifest (the id list of a sample written
/// under that name).
fn refuse_breaking_a_sample(out: &std::path::Path, manifest: &std::path::Path) -> Result<()> {
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name
        .strip_suffix(".manifest.json")
        .filter(|s| !s.is_empty());
    let sample = stem.map(|s| out.with_file_name(s));
    if let Some(sample) = sample.filter(|x| x.is_file() && is_sample_manifest(out)) {
        return Err(Error::output(
            out,
            format!(
                "is the manifest of the sample {}; writing an id list here would leave that \
                 sample without its manifest: choose another output path",
                sample.display()
            ),
        ));
    }
    if manifest.exists() && !is_sample_manifest(manifest) {
        return Err(Error::output(
            manifest,
            format!(
                "exists and is not a sample manifest; the manifest of {} would replace it: \
                 choose another output path",
                out.display()
            ),
        ));
    }
    Ok(())
}

/// Digest of a sample recorded in its manifest: xxh3_64 (seed 0) over `id + "\n"` for each
/// id, as 16 hex digits (the uncompressed content of the id list).
pub fn sample_digest(ids: &[String]) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for id in ids {
        h.update(id.as_bytes());
        h.update(b"\n");
    }
    format!("{:016x}", h.digest())
}

/// The manifest of a sample id list (`<OUT>.manifest.json`, written by [`write_sample`]): `N`
/// (ids read), `fraction`, `after` (increments only), `seed`, `S` (ids kept) and `digest` = `xxh3_64` (seed 0) of the
/// concatenated `id + "\n"` lines of the sample, as 16 hex digits (the uncompressed content of
/// the id list).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SampleManifest {
    /// N: ids read.
    #[serde(rename = "N")]
    pub ids_read: usize,
    pub fraction: f64,
    /// The lower fraction of an increment (`sample --after`): the ids kept are those with
    /// `t(after) ≤ hash < t(fraction)`. Absent for a whole sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<f64>,
    pub seed: u64,
    /// S: ids kept.
    #[serde(rename = "S")]
    pub ids_kept: usize,
    /// [`sample_digest`] of the kept ids.
    pub digest: String,
    pub digest_algorithm: &'static str,
    /// The id list sampled, as given.
    pub source: String,
    pub tool_version: &'static str,
}

/// Hash-sample the id list `ids` at `fraction` and `seed` ([`sample_id_list`]: an id is kept
/// iff `xxh3_64_with_seed(utf8(id), seed) < t(f)`, and also `≥ t(after)` when `after` is
/// given: the increment [`HashRange::increment`]) into the id list `out` (input order, one id
/// per line, gzip when it ends in `.gz`) and its manifest
/// ([`manifest_path`]): the two are replaced together, the ids first, never over `ids`
/// (`crate::atomic`).
pub fn write_sample(
    ids: &std::path::Path,
    fraction: f64,
    after: Option<f64>,
    seed: u64,
    out: &std::path::Path,
) -> Result<SampleManifest> {
    let range = HashRange::sample(fraction, after)?;
    let manifest_path = manifest_path(out)?;
    refuse_breaking_a_sample(out, &manifest_path)?;
    let mut outputs = crate::atomic::Transaction::new(&[ids]);
    let ids_slot = outputs.add_file(out)?;
    let manifest_slot = outputs.add_file(&manifest_path)?;
    let (n, kept) = sample_id_list(ids, range, seed)?;
    outputs.write(ids_slot, |p| crate::formats::ids::write_ids(p, &kept))?;
    let manifest = SampleManifest {
        ids_read: n,
        fraction,
        after,
        seed,
        ids_kept: kept.len(),
        digest: sample_digest(&kept),
        digest_algorithm: "xxh3_64 (seed 0) of the sampled ids, each followed by \\n",
        source: ids.display().to_string(),
        tool_version: crate::TOOL_VERSION,
    };
    let text = serde_json::to_value(&manifest)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .map_err(|e| Error::internal(format!("cannot serialise the manifest: {e}")))?
        + "\n";
    outputs.write(manifest_slot, |p| {
        crate::atomic::write_bytes(p, text.as_bytes())
    })?;
    outputs.commit()?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_reference_values() {
        // Values from docs/method.md §4 (Python's xxhash.xxh3_64_intdigest).
        assert_eq!(id_hash("12345", 42), 7110486700300227737);
        assert_eq!(id_hash("yfcc000/000000001", 7), 2222919332169938572);
    }

    #[test]
    fn thresholds() {
        assert_eq!(threshold(1.0).unwrap(), u64::MAX);
        assert_eq!(threshold(0.5).unwrap(), 1u64 << 63);
        assert!(threshold(0.0).is_err());
        assert!(threshold(1.5).is_err());
        assert!(threshold(f64::NAN).is_err());
    }

    #[test]
    fn nested_and_close_to_fraction() {
        let ids: Vec<String> = (0..200_000).map(|i| format!("img/{i:08}")).collect();
        let a: Vec<bool> = ids.iter().map(|i| in_sample(i, 0.05, 3).unwrap()).collect();
        let b: Vec<bool> = ids
            .iter()
            .map(|i| in_sample(i, 0.025, 3).unwrap())
            .collect();
        assert!(a.iter().zip(&b).all(|(x, y)| *x || !*y), "nested");
        let n = a.iter().filter(|x| **x).count() as f64;
        assert!((n / 200_000.0 - 0.05).abs() < 0.003, "fraction {n}");
    }

    #[test]
    fn an_after_below_the_first_hash_step_is_refused_not_dropped() {
        // t(1e-300) = 0: the "increment" would be the whole sample at 0.2.
        let e = HashRange::increment(1e-300, 0.2).unwrap_err().to_string();
        assert!(e.contains("below 2^-64"), "{e}");
        assert!(HashRange::increment(1e-18, 0.2).is_ok());
        let e = check_fraction(1e300).unwrap_err().to_string();
        assert!(e.ends_with("got 1e300"), "{e}");
    }

    #[test]
    fn increments_are_the_difference_of_nested_samples() {
        let inc = HashRange::increment(0.05, 0.1).unwrap();
        assert_eq!(
            (inc.lo, inc.hi),
            (threshold(0.05).unwrap(), threshold(0.1).unwrap())
        );
        for i in 0..20_000 {
            let id = format!("img/{i:08}");
            let h = id_hash(&id, 9);
            let (small, large) = (
                in_sample(&id, 0.05, 9).unwrap(),
                in_sample(&id, 0.1, 9).unwrap(),
            );
            assert_eq!(inc.contains(h), large && !small, "{id}");
        }
        // Up to f = 1 the top hash is kept; after >= fraction is refused.
        assert!(HashRange::increment(0.5, 1.0).unwrap().contains(u64::MAX));
        assert!(HashRange::increment(0.1, 0.1).is_err());
        assert!(HashRange::increment(0.2, 0.1).is_err());
        // Intersections, with the inclusive top end.
        let whole = HashRange::fraction(1.0).unwrap();
        assert_eq!(whole.intersect(&inc), Some(inc));
        let top = HashRange::increment(0.5, 1.0).unwrap();
        assert_eq!(top.intersect(&whole), Some(top));
        assert_eq!(top.intersect(&inc), None);
        assert_eq!(
            inc.width_fraction(),
            (inc.hi - inc.lo) as f64 / 2f64.powi(64)
        );
    }

    #[test]
    fn split_is_a_partition() {
        let r = HashRange::fraction(0.3).unwrap();
        let parts = r.split(4);
        assert_eq!(parts[0].lo, r.lo);
        assert_eq!(parts[3].hi, r.hi);
        for w in parts.windows(2) {
            assert_eq!(w[0].hi, w[1].lo);
        }
    }
}
