//! The on-disk summary folder (format `tailrank-summary`, version [`SUMMARY_FORMAT_VERSION`]):
//! `manifest.json` plus six `.npy` arrays (npy format 1.0, little-endian, C order). Readable and
//! writable with numpy alone; the layout is documented in `docs/reference/summary-format.md`.
//!
//! With Q queries, P positives in total, L subsets and M = `top_m`:
//!
//! | file                  | dtype | shape     | content                                         |
//! |-----------------------|-------|-----------|-------------------------------------------------|
//! | `query_offsets.npy`   | `<u8` | (Q+1,)    | query q owns positive rows `off[q]..off[q+1]`   |
//! | `pos_scores.npy`      | `<f4` | (P,)      | `s_j`, descending within a query                |
//! | `pos_core_above.npy`  | `<u8` | (P,)      | `C_j`                                           |
//! | `pos_pool_above.npy`  | `<u8` | (P, L)    | `K_{j,ℓ}`                                       |
//! | `top_scores.npy`      | `<f4` | (T,)      | top lists, descending, end to end (q, ℓ order)  |
//! | `top_len.npy`         | `<u4` | (Q, L)    | length of each top list; `T = Σ top_len`        |
//! | `pos_core_ties.npy`   | `<u8` | (P,)      | `T^C_j`: non-relevant core items with score `== s_j` |
//! | `pos_pool_ties.npy`   | `<u8` | (P, L)    | `T^K_{j,ℓ}`: pool items of ℓ with score `== s_j` |
//!
//! The two tie arrays are new in version 2 and written only when the ties were counted
//! ([`Summary::ties_known`]); a folder without them (version 1, or a merge of version-1
//! parts) reads with `ties_known = false` and zero tie counts.
//!
//! | `pool_id_hashes.npy`  | `<u8` | (S_0,)    | sorted xxh3-64 of the scanned pool ids (v2)     |
//!
//! Versions 1 and 2 stored `top_scores.npy` as `(Q, L, W)`, rows padded with `-inf` to
//! `W = min(M, max_ℓ S_ℓ)` (`W = M` in the oldest files); the reader accepts both layouts,
//! and cuts their drift shards' lists (M scores) to the ⌈M/H⌉ of version 3.
//!
//! The manifest's `arrays` object maps each file name to `{dtype, shape, xxh3}` where `xxh3` is
//! `xxh3:` followed by the 16-hex-digit xxh3-64 (seed 0) of the whole file. Since version 2,
//! `manifest.xxh3` holds the same checksum of `manifest.json` itself (one line), so that the
//! whole folder is covered; duplicate keys anywhere in the manifest are an error.

use super::arrays::{
    checksum_string, read_array, read_raw, write_array, write_array_runs, ArrayRecord, Elem,
    Manifests, Run,
};
use super::{
    shard_top_m, InputRecord, PositiveSummary, QuerySummary, Subset, SubsetKind, Summary,
    SUMMARY_FORMAT_VERSION,
};
use crate::error::{Error, IoContext, Result};
use crate::sample::HashRange;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub use crate::outputs::{
    SUMMARY_FORMAT_NAME as FORMAT_NAME, SUMMARY_MANIFEST as MANIFEST,
    SUMMARY_MANIFEST_CHECKSUM as MANIFEST_CHECKSUM,
};

const QUERY_OFFSETS: &str = "query_offsets.npy";
const POS_SCORES: &str = "pos_scores.npy";
const POS_CORE_ABOVE: &str = "pos_core_above.npy";
const POS_POOL_ABOVE: &str = "pos_pool_above.npy";
const TOP_SCORES: &str = "top_scores.npy";
const TOP_LEN: &str = "top_len.npy";
/// The pool fingerprint ([`Summary::pool_id_hashes`]), written when known (version 2).
pub const POOL_ID_HASHES: &str = "pool_id_hashes.npy";
const POS_CORE_TIES: &str = "pos_core_ties.npy";
const POS_POOL_TIES: &str = "pos_pool_ties.npy";

/// A subset as `manifest.json` holds it: [`Subset`] with `top_m` written only where the subset
/// has its own (version 3).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ManifestSubset {
    kind: SubsetKind,
    fraction: f64,
    range: HashRange,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    top_m: Option<usize>,
}

impl From<&Subset> for ManifestSubset {
    fn from(s: &Subset) -> Self {
        ManifestSubset {
            kind: s.kind,
            fraction: s.fraction,
            range: s.range,
            top_m: s.top_m,
        }
    }
}

impl From<ManifestSubset> for Subset {
    fn from(s: ManifestSubset) -> Self {
        Subset {
            kind: s.kind,
            fraction: s.fraction,
            range: s.range,
            top_m: s.top_m,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    format_version: u32,
    tool_version: String,
    model: String,
    query_set: String,
    pool_size: Option<u64>,
    fraction: f64,
    seed: u64,
    top_m: usize,
    core_size: u64,
    subsets: Vec<ManifestSubset>,
    subset_sizes: Vec<u64>,
    num_queries: usize,
    num_positives: usize,
    inputs: Vec<InputRecord>,
    query_ids: Vec<String>,
    /// Flat, aligned with the `pos_*` arrays (query q: rows `off[q]..off[q+1]`).
    positive_ids: Vec<String>,
    arrays: BTreeMap<String, ArrayRecord>,
}

/// Width W of a version-2 `top_scores.npy` for M = `m`: `min(M, max_ℓ S_ℓ)` (a list never
/// holds more than its subset's items).
fn top_width(m: u64, subset_sizes: &[u64]) -> u64 {
    m.min(subset_sizes.iter().copied().max().unwrap_or(0))
}

/// Where the rows of `top_scores.npy` lie: end to end (version 3, shape `(Σ top_len,)`), or
/// padded to a width W (versions 1 and 2, shape `(Q, L, W)`).
enum TopRows {
    /// First value of row `q · L + ℓ` (the sum of the lengths before it), and the total.
    Ragged {
        starts: Vec<usize>,
        total: u64,
    },
    Padded {
        width: usize,
    },
}

impl TopRows {
    fn of(man: &Manifest, version: u64, m: u64, top_len: &[u32], mpath: &Path) -> Result<Self> {
        if version >= 3 {
            let mut total = 0u64;
            let starts = top_len
                .iter()
                .map(|&n| {
                    let s = total;
                    total += n as u64;
                    usize::try_from(s)
                })
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| Error::input(mpath, "top lists do not fit in memory"))?;
            return Ok(TopRows::Ragged { starts, total });
        }
        // M in files written before the padding was capped at the largest subset,
        // `min(M, max S_ℓ)` since.
        let w = match man.arrays.get(TOP_SCORES).map(|r| r.shape.as_slice()) {
            Some([_, _, w]) if *w == m => m,
            _ => top_width(m, &man.subset_sizes),
        };
        let width = usize::try_from(w)
            .map_err(|_| Error::input(mpath, format!("top-M width {w} does not fit in memory")))?;
        Ok(TopRows::Padded { width })
    }

    /// The shape `top_scores.npy` must have (`q`, `l`: queries and subsets).
    fn shape(&self, q: u64, l: u64) -> Vec<u64> {
        match self {
            TopRows::Ragged { total, .. } => vec![*total],
            TopRows::Padded { width } => vec![q, l, *width as u64],
        }
    }
}

/// Fill the (temporary) folder `dir` with the manifest and arrays of `s`.
pub(super) fn write_folder(s: &Summary, dir: &Path) -> Result<()> {
    let q = s.queries.len() as u64;
    let l = s.subsets.len();
    let positives = || s.queries.iter().flat_map(|q| q.positives.iter());
    let p = positives().count() as u64;

    let mut arrays = BTreeMap::new();
    let offsets = std::iter::once(0u64).chain(s.queries.iter().scan(0u64, |acc, q| {
        *acc += q.positives.len() as u64;
        Some(*acc)
    }));
    let records = [
        write_array(dir, QUERY_OFFSETS, &[q + 1], offsets)?,
        write_array(dir, POS_SCORES, &[p], positives().map(|x| x.score))?,
        write_array(dir, POS_CORE_ABOVE, &[p], positives().map(|x| x.core_above))?,
        write_array(
            dir,
            POS_POOL_ABOVE,
            &[p, l as u64],
            positives().flat_map(|x| x.pool_above.iter().copied()),
        )?,
        // Version 3: the lists end to end, no padding (`top_len` gives their lengths).
        write_array_runs(
            dir,
            TOP_SCORES,
            &[s.queries
                .iter()
                .flat_map(|q| &q.top_scores)
                .map(|t| t.len() as u64)
                .sum()],
            s.queries
                .iter()
                .flat_map(|q| q.top_scores.iter().map(|t| Run::Slice(&t[..]))),
        )?,
        write_array(
            dir,
            TOP_LEN,
            &[q, l as u64],
            s.queries
                .iter()
                .flat_map(|q| q.top_scores.iter().map(|t| t.len() as u32)),
        )?,
    ];
    arrays.extend(records);
    if let Some(h) = &s.pool_id_hashes {
        let (name, rec) = write_array(dir, POOL_ID_HASHES, &[h.len() as u64], h.iter().copied())?;
        arrays.insert(name, rec);
    }
    if s.ties_known {
        arrays.insert(
            POS_CORE_TIES.to_string(),
            write_array(dir, POS_CORE_TIES, &[p], positives().map(|x| x.core_ties))?.1,
        );
        arrays.insert(
            POS_POOL_TIES.to_string(),
            write_array(
                dir,
                POS_POOL_TIES,
                &[p, l as u64],
                positives().flat_map(|x| (0..l).map(|i| x.pool_tie(i))),
            )?
            .1,
        );
    }

    let manifest = Manifest {
        format: FORMAT_NAME.to_string(),
        format_version: SUMMARY_FORMAT_VERSION,
        tool_version: s.tool_version.clone(),
        model: s.model.clone(),
        query_set: s.query_set.clone(),
        pool_size: s.pool_size,
        fraction: s.fraction,
        seed: s.seed,
        top_m: s.top_m,
        core_size: s.core_size,
        subsets: s.subsets.iter().map(ManifestSubset::from).collect(),
        subset_sizes: s.subset_sizes.clone(),
        num_queries: s.queries.len(),
        num_positives: p as usize,
        inputs: s.inputs.clone(),
        query_ids: s.queries.iter().map(|q| q.id.clone()).collect(),
        positive_ids: positives().map(|x| x.id.clone()).collect(),
        arrays,
    };
    let path = dir.join(MANIFEST);
    let mut text = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| Error::internal_at(&path, format!("cannot serialise manifest: {e}")))?;
    text.push(b'\n');
    crate::atomic::write_bytes(&path, &text)?;
    let sum = format!("{}\n", checksum_string(xxhash_rust::xxh3::xxh3_64(&text)));
    crate::atomic::write_bytes(&dir.join(MANIFEST_CHECKSUM), sum.as_bytes())
}

/// A JSON value that refuses duplicate object keys (serde_json keeps the last one silently).
/// Deserialising into it only validates; the error names the repeated key.
struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = NoDuplicateKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_str<E>(self, _: &str) -> std::result::Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
                Ok(NoDuplicateKeys)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                while a.next_element::<NoDuplicateKeys>()?.is_some() {}
                Ok(NoDuplicateKeys)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut keys = std::collections::HashSet::new();
                while let Some(k) = a.next_key::<String>()? {
                    if !keys.insert(k.clone()) {
                        return Err(serde::de::Error::custom(format!("duplicate key {k:?}")));
                    }
                    a.next_value::<NoDuplicateKeys>()?;
                }
                Ok(NoDuplicateKeys)
            }
        }
        d.deserialize_any(V)
    }
}

/// Check that the JSON text has no duplicate object key (at any depth).
pub(crate) fn check_no_duplicate_keys(text: &str) -> std::result::Result<(), String> {
    serde_json::from_str::<NoDuplicateKeys>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Read and check the manifest of summary folder `dir`: its format, version, checksum (from
/// version 2) and subsets. Returns it with its version and the warnings of an older version.
fn read_manifest(dir: &Path) -> Result<(Manifest, u64, Vec<String>)> {
    if !dir.is_dir() {
        return Err(Error::at(
            match dir.exists() {
                true => crate::ErrorKind::Input,
                false => crate::ErrorKind::Io,
            },
            dir,
            if dir.exists() {
                "not a summary folder (expected a directory with manifest.json and .npy arrays)"
            } else {
                "summary folder does not exist"
            },
        ));
    }
    let mpath = dir.join(MANIFEST);
    if !mpath.is_file() {
        return Err(Error::input(
            &mpath,
            "missing: not a tailrank summary folder (no manifest.json)",
        ));
    }
    let bytes = std::fs::read(&mpath).at(&mpath)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::input(&mpath, "malformed JSON: not valid UTF-8"))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::input(&mpath, format!("malformed JSON: {e}")))?;
    check_no_duplicate_keys(&text).map_err(|e| {
        Error::input(
            &mpath,
            format!("malformed manifest: {e} (a key may appear once; was the file edited?)"),
        )
    })?;
    match value.get("format").and_then(|v| v.as_str()) {
        Some(FORMAT_NAME) => {}
        Some(other) => {
            return Err(Error::unsupported(
                &mpath,
                format!("unknown format {other:?}, expected {FORMAT_NAME:?}"),
            ))
        }
        None => {
            return Err(Error::input(
                &mpath,
                format!("no \"format\" field: not a {FORMAT_NAME} manifest"),
            ))
        }
    }
    let version = value
        .get("format_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| Error::input(&mpath, "missing or malformed \"format_version\""))?;
    if version > SUMMARY_FORMAT_VERSION as u64 {
        return Err(Error::unsupported(
            &mpath,
            format!(
                "format_version {version} is newer than this tailrank ({}) reads \
                 (version {SUMMARY_FORMAT_VERSION}); upgrade tailrank",
                crate::TOOL_VERSION
            ),
        ));
    }
    if version == 0 {
        return Err(Error::input(
            &mpath,
            "format_version 0 is not a valid version",
        ));
    }
    let mut warnings = Vec::new();
    let cpath = dir.join(MANIFEST_CHECKSUM);
    if version >= 2 {
        if !cpath.is_file() {
            return Err(Error::input(
                &cpath,
                format!(
                    "missing: a format_version {version} summary keeps the checksum of \
                     manifest.json here"
                ),
            ));
        }
        let recorded = std::fs::read_to_string(&cpath).at(&cpath)?;
        let actual = checksum_string(xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
        if recorded.trim_end() != actual {
            return Err(Error::input(
                &mpath,
                format!(
                    "checksum mismatch: the file does not hash to the checksum recorded in \
                     {MANIFEST_CHECKSUM} (manifest.json was edited or corrupted)"
                ),
            ));
        }
    } else {
        warnings.push(format!(
            "{}: summary format_version {version} (an earlier release): manifest.json is not \
             checksummed (an edit would go unnoticed) and no pool fingerprint is recorded \
             (merge then detects overlapping parts by file digest only); it reads and predicts \
             as it is",
            dir.display()
        ));
    }
    let man: Manifest = serde_json::from_value(value)
        .map_err(|e| Error::input(&mpath, format!("malformed manifest: {e}")))?;
    check_subsets(&man, version, &mpath)?;
    Ok((man, version, warnings))
}

/// Read and check a summary folder.
pub(super) fn read_folder(dir: &Path) -> Result<(Summary, Vec<String>)> {
    let (man, version, warnings) = read_manifest(dir)?;
    let mpath = dir.join(MANIFEST);

    let q = man.query_ids.len();
    let p = man.positive_ids.len();
    let l = man.subsets.len();
    let m = man.top_m;
    if man.num_queries != q || man.num_positives != p {
        return Err(Error::input(
            &mpath,
            format!(
                "num_queries = {}, num_positives = {} but {q} query ids and {p} positive ids",
                man.num_queries, man.num_positives
            ),
        ));
    }
    if man.subset_sizes.len() != l {
        return Err(Error::input(
            &mpath,
            format!("{l} subsets but {} subset sizes", man.subset_sizes.len()),
        ));
    }
    let (q64, p64, l64, m64) = (q as u64, p as u64, l as u64, m as u64);
    let arrays = Manifests {
        path: &mpath,
        arrays: &man.arrays,
    };

    let offsets: Vec<u64> = read_array(dir, &arrays, QUERY_OFFSETS, &[q64 + 1])?;
    let scores: Vec<f32> = read_array(dir, &arrays, POS_SCORES, &[p64])?;
    let core: Vec<u64> = read_array(dir, &arrays, POS_CORE_ABOVE, &[p64])?;
    let pool: Vec<u64> = read_array(dir, &arrays, POS_POOL_ABOVE, &[p64, l64])?;
    let top_len: Vec<u32> = read_array(dir, &arrays, TOP_LEN, &[q64, l64])?;
    let top_rows = TopRows::of(&man, version, m64, &top_len, &mpath)?;
    // The largest array (ILIAS: ~180 MB): decoded row by row from the file's bytes.
    let (top, top_start) = read_raw::<f32>(dir, &arrays, TOP_SCORES, &top_rows.shape(q64, l64))?;
    let top = &top[top_start..];
    let pool_id_hashes: Option<Vec<u64>> = match man.arrays.contains_key(POOL_ID_HASHES) {
        true => Some(read_array(
            dir,
            &arrays,
            POOL_ID_HASHES,
            &[man.subset_sizes.first().copied().unwrap_or(0)],
        )?),
        false => None,
    };
    // Tie counts (version ≥ 2): both arrays or neither.
    let ties_known = match (
        man.arrays.contains_key(POS_CORE_TIES),
        man.arrays.contains_key(POS_POOL_TIES),
    ) {
        (true, true) => true,
        (false, false) => false,
        (c, _) => {
            return Err(Error::input(
                &mpath,
                format!(
                    "the manifest lists {} but not {} (the tie arrays come together)",
                    if c { POS_CORE_TIES } else { POS_POOL_TIES },
                    if c { POS_POOL_TIES } else { POS_CORE_TIES }
                ),
            ))
        }
    };
    let (core_ties, pool_ties): (Vec<u64>, Vec<u64>) = if ties_known {
        (
            read_array(dir, &arrays, POS_CORE_TIES, &[p64])?,
            read_array(dir, &arrays, POS_POOL_TIES, &[p64, l64])?,
        )
    } else {
        (vec![0; p], vec![0; p * l])
    };

    let opath = dir.join(QUERY_OFFSETS);
    if offsets[0] != 0 || offsets[q] != p64 || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(Error::input(
            &opath,
            format!("offsets must rise from 0 to the number of positives ({p})"),
        ));
    }
    let mut queries = Vec::with_capacity(q);
    for (qi, id) in man.query_ids.iter().enumerate() {
        let (a, b) = (offsets[qi] as usize, offsets[qi + 1] as usize);
        let positives = (a..b)
            .map(|r| PositiveSummary {
                id: man.positive_ids[r].clone(),
                score: scores[r],
                core_above: core[r],
                pool_above: pool[r * l..(r + 1) * l].to_vec(),
                core_ties: core_ties[r],
                pool_ties: pool_ties[r * l..(r + 1) * l].to_vec(),
            })
            .collect();
        let mut top_scores = Vec::with_capacity(l);
        for li in 0..l {
            let len = top_len[qi * l + li] as usize;
            let row = match &top_rows {
                TopRows::Ragged { starts, .. } => starts[qi * l + li],
                TopRows::Padded { width } => {
                    if len > *width {
                        return Err(Error::input(
                            dir.join(TOP_LEN),
                            format!(
                                "query {id:?}, subset {li}: length {len} exceeds the {width} \
                                 scores stored per row (M = {m})"
                            ),
                        ));
                    }
                    (qi * l + li) * width
                }
            } * 4;
            top_scores.push(
                top[row..row + len * 4]
                    .chunks_exact(4)
                    .map(f32::get)
                    .collect(),
            );
        }
        queries.push(QuerySummary {
            id: id.clone(),
            positives,
            top_scores,
        });
    }
    let mut s = Summary {
        format_version: version as u32,
        tool_version: man.tool_version,
        model: man.model,
        query_set: man.query_set,
        pool_size: man.pool_size,
        fraction: man.fraction,
        seed: man.seed,
        top_m: m,
        core_size: man.core_size,
        subsets: man.subsets.into_iter().map(Subset::from).collect(),
        subset_sizes: man.subset_sizes,
        queries,
        inputs: man.inputs,
        pool_id_hashes,
        ties_known,
    };
    if version < 3 {
        shards_as_version_3(&mut s);
    }
    s.check()
        .map_err(|msg| Error::input(dir, format!("inconsistent summary: {msg}")))?;
    Ok((s, warnings))
}

/// The manifest's subsets against their hash ranges (docs/method.md §5): each `fraction` is
/// the share of the hashes its range holds ([`Subset::fraction_matches_range`]), level 0's
/// is the summary's `fraction`, levels are `[0, t(f_ℓ))` and shards lie inside level 0; in an
/// increment (`scan --after`) level 0 is `[t(after), t(f))` and the levels start there too; a
/// subset's own `top_m` only from version 3 on. The error names the manifest, the subset
/// and both values.
fn check_subsets(man: &Manifest, version: u64, mpath: &Path) -> Result<()> {
    let name = |i: usize, s: &ManifestSubset| match s.kind {
        SubsetKind::Level => format!("subset {i} (a level)"),
        SubsetKind::Shard => format!("subset {i} (a drift shard)"),
    };
    let level0 = man.subsets.first().map(|s| s.range);
    for (i, sub) in man.subsets.iter().enumerate() {
        if sub.top_m.is_some() && version < 3 {
            return Err(Error::input(
                mpath,
                format!(
                    "subset {i} has its own top_m, which format_version {version} does not \
                     have (new in version 3)"
                ),
            ));
        }
        let HashRange { lo, hi } = sub.range;
        let as_subset = Subset::from(sub.clone());
        if !as_subset.fraction_matches_range() {
            return Err(Error::input(
                mpath,
                format!(
                    "{}: fraction {} disagrees with its hash range [{lo}, {hi}), which holds \
                     a fraction {} of the hashes (was the manifest edited?)",
                    name(i, sub),
                    sub.fraction,
                    as_subset.range_fraction()
                ),
            ));
        }
        let misplaced = match (sub.kind, level0) {
            (SubsetKind::Level, Some(r)) => lo != r.lo,
            (SubsetKind::Level, None) => lo != 0,
            (SubsetKind::Shard, Some(r)) => lo < r.lo || hi > r.hi,
            (SubsetKind::Shard, None) => false,
        };
        if misplaced {
            return Err(Error::input(
                mpath,
                format!(
                    "{}: hash range [{lo}, {hi}) is not where a {} lies (levels start where \
                     level 0 does, at hash 0 or, in an increment, at t(after); drift shards lie \
                     inside level 0)",
                    name(i, sub),
                    if sub.kind == SubsetKind::Level {
                        "level"
                    } else {
                        "drift shard"
                    }
                ),
            ));
        }
    }
    if let Some(first) = man.subsets.first() {
        // An increment (`scan --after`) has level 0 `[t(after), t(f))`: its end is the sample's.
        let increment_ends_at_f = first.range.lo > 0
            && HashRange::fraction(man.fraction).is_ok_and(|r| r.hi == first.range.hi);
        if first.kind == SubsetKind::Level
            && first.fraction.to_bits() != man.fraction.to_bits()
            && !increment_ends_at_f
        {
            return Err(Error::input(
                mpath,
                format!(
                    "{}: fraction {} is not the summary's fraction {} (level 0 is the whole \
                     sample, or an increment that ends where the sample does)",
                    name(0, first),
                    first.fraction,
                    man.fraction
                ),
            ));
        }
    }
    Ok(())
}

/// Read a version-1 or -2 summary as version 3: those kept M scores on every subset, version
/// 3 keeps [`shard_top_m`] = ⌈M/H⌉ on a drift shard (H shards; its top list then reaches
/// level 0's pool quantile, docs/method.md §5). The lists are descending, so each shard's
/// first ⌈M/H⌉ scores are what a version-3 scan keeps; nothing else changes.
fn shards_as_version_3(s: &mut Summary) {
    let shards = s.shard_indices();
    let kept = shard_top_m(s.top_m, shards.len());
    for &i in &shards {
        s.subsets[i].top_m = Some(kept);
        for q in &mut s.queries {
            q.top_scores[i].truncate(kept);
        }
    }
}
