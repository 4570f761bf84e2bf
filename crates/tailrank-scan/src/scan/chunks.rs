//! The plan of a resumable scan ([`resume`](super::resume)): the chunks the pool is cut
//! into, the identity of the scan (what must not change before a resume), full-content row
//! digests, the plan file `plan.json` of the partial folder, and the merge of the chunks'
//! top-k result lists ([`merge_results`]).

use super::prepared::QuerySetInput;
use crate::atomic;
use crate::error::{Error, IoContext, Result};
use crate::formats::descriptors::{DescriptorSource, RowRange};
use crate::formats::gt::QuerySet;
use crate::scan::config::ScanConfig;
use crate::summary::{query_set_digest, InputRecord, Summary, POOL_ROLE};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Format name of `plan.json`.
pub const PARTIAL_FORMAT: &str = "tailrank-scan-partial";
/// Version of the partial-folder layout (2: chunks made of parts of several files; 3: chunk
/// summaries of format version 3, whose drift shards keep ⌈M/H⌉ scores, so a version-2
/// partial folder cannot be resumed into them).
pub const PARTIAL_VERSION: u32 = 3;
/// Default chunk size in pool rows (about 12 GB of f16 descriptors at D = 768).
pub const DEFAULT_CHUNK_ROWS: usize = 8_000_000;
/// Name of the plan file inside the partial folder.
pub const PLAN: &str = "plan.json";

/// One chunk of the plan: consecutive row ranges of one or more pool files, scanned together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub name: String,
    pub parts: Vec<ChunkPart>,
}

impl Chunk {
    /// Pool rows of the chunk.
    pub fn rows(&self) -> usize {
        self.parts.iter().map(|p| p.end - p.start).sum()
    }
}

/// Rows `start..end` of pool file `pool_index`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkPart {
    pub pool_index: usize,
    pub start: usize,
    pub end: usize,
    /// Digest of the [`RowRange`] view (covers the file's digest and the range).
    pub digest: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Plan {
    pub format: String,
    pub format_version: u32,
    pub tool_version: String,
    /// Everything the chunks depend on, compared field by field on resume.
    pub identity: serde_json::Map<String, serde_json::Value>,
    pub chunks: Vec<Chunk>,
}

/// Full-content digest of rows `start..end` of `src`: the rows are cut into blocks of 4,096
/// (from `start`); block `b` hashes to `h_b` = xxh3-64 over, for each of its rows, the id and
/// `\n`, then the row's values as little-endian f32 (as the scan reads them); the digest is
/// xxh3-64 over `h_0, h_1, …` (8 little-endian bytes each). Blocks are hashed in parallel.
/// Reads every byte of the range (cost: `docs/reference/errors.md`, resumable scans).
pub fn rows_digest(src: &dyn DescriptorSource, start: usize, end: usize) -> Result<String> {
    use rayon::prelude::*;
    const BLOCK: usize = 4096;
    let d = src.dim();
    let nblocks = end.saturating_sub(start).div_ceil(BLOCK);
    // The ids are streamed once, in order, into one hash state per block (ids are held as
    // keys, `RowIds`); the values are then added to each state in parallel.
    let mut states = vec![xxhash_rust::xxh3::Xxh3::new(); nblocks];
    src.ids().slice(start, end.max(start)).for_each(|i, id| {
        let h = &mut states[i / BLOCK];
        h.update(id.as_bytes());
        h.update(b"\n");
        Ok(())
    })?;
    let hashes: Vec<u64> = states
        .into_par_iter()
        .enumerate()
        .map_init(
            || {
                (
                    vec![0f32; BLOCK * d],
                    Vec::<u8>::with_capacity(BLOCK * d * 4),
                )
            },
            |(buf, bytes), (b, mut h)| {
                let a = start + b * BLOCK;
                let n = (end - a).min(BLOCK);
                let rows = &mut buf[..n * d];
                src.read_rows(a, rows)?;
                #[cfg(target_endian = "little")]
                {
                    let _ = &bytes;
                    // SAFETY: any f32 is 4 plain bytes; u8 has no alignment requirement. On a
                    // little-endian host these are the f32s' little-endian bytes.
                    let raw = unsafe {
                        std::slice::from_raw_parts(rows.as_ptr() as *const u8, rows.len() * 4)
                    };
                    h.update(raw);
                }
                #[cfg(not(target_endian = "little"))]
                {
                    bytes.clear();
                    bytes.extend(rows.iter().flat_map(|v| v.to_le_bytes()));
                    h.update(bytes);
                }
                Ok(h.digest())
            },
        )
        .collect::<Result<_>>()?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for x in hashes {
        h.update(&x.to_le_bytes());
    }
    Ok(format!("xxh3:{:016x}", h.digest()))
}

/// [`rows_digest`] of every part of `chunk`.
pub(super) fn chunk_rows_digests(
    pool: &[&dyn DescriptorSource],
    chunk: &Chunk,
) -> Result<Vec<String>> {
    chunk
        .parts
        .iter()
        .map(|p| rows_digest(pool[p.pool_index], p.start, p.end))
        .collect()
}

pub(super) fn xxh3_string(bytes: &[u8]) -> String {
    format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// The identity of a scan: what must not change between an interrupted run and its resume.
/// One query set is recorded as single values (as older versions did); several as lists.
#[allow(clippy::too_many_arguments)]
pub(super) fn identity(
    sets: &[QuerySetInput],
    core: &dyn DescriptorSource,
    pool: &[&dyn DescriptorSource],
    cfg: &ScanConfig,
    chunk_rows: usize,
    pool_digests: &[String],
    queries_rows: &[String],
    core_rows: &str,
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::json;
    let mut m = serde_json::Map::new();
    let mut put = |k: &str, v: serde_json::Value| {
        m.insert(k.to_string(), v);
    };
    let per_set = |f: &dyn Fn(usize) -> serde_json::Value| -> serde_json::Value {
        if sets.len() == 1 {
            f(0)
        } else {
            serde_json::Value::Array((0..sets.len()).map(f).collect())
        }
    };
    put("model", json!(cfg.model));
    put("query_set", per_set(&|i| json!(sets[i].set.name)));
    put(
        "ground_truth",
        per_set(&|i| json!(query_set_digest(sets[i].set))),
    );
    put(
        "queries",
        per_set(&|i| json!({"digest": sets[i].queries.digest(), "rows": sets[i].queries.rows()})),
    );
    put(
        "core",
        json!({"digest": core.digest(), "rows": core.rows()}),
    );
    // The file digests above read only the ends of a file: every chunk reused depends on every
    // query and core row, so these are digested in full.
    put("queries_rows", per_set(&|i| json!(queries_rows[i])));
    put("core_rows", json!(core_rows));
    put(
        "pool",
        json!(pool
            .iter()
            .zip(pool_digests)
            .map(|(p, d)| json!({"digest": d, "rows": p.rows()}))
            .collect::<Vec<_>>()),
    );
    put("fraction", json!(cfg.fraction));
    if let Some(after) = cfg.after {
        put("after", json!(after));
    }
    put("seed", json!(cfg.seed));
    put("min_fraction", json!(cfg.min_fraction));
    put("drift_shards", json!(cfg.drift_shards));
    put("top_m", json!(cfg.top_m));
    put("normalize", json!(cfg.normalize));
    put("results_k", json!(cfg.results_k));
    put("chunk_rows", json!(chunk_rows));
    m
}

/// The chunks of the pool: the files in order, cut into consecutive chunks of `chunk_rows`
/// rows (the last one shorter). Small files share a chunk (one part each), large files are
/// split across chunks; an empty file is an empty part of the current chunk. Scanning many
/// small files as one chunk pays the core pass and the top-M warm-up once, not per file.
pub fn plan_chunks(
    pool: &[&dyn DescriptorSource],
    pool_digests: &[String],
    chunk_rows: usize,
) -> Result<Vec<Chunk>> {
    if chunk_rows == 0 {
        return Err(Error::option("chunk size (rows) must be at least 1"));
    }
    let mut out: Vec<Chunk> = Vec::new();
    let mut parts: Vec<ChunkPart> = Vec::new();
    let mut filled = 0usize;
    let close = |parts: &mut Vec<ChunkPart>, out: &mut Vec<Chunk>| {
        out.push(Chunk {
            name: format!("chunk-{:06}", out.len()),
            parts: std::mem::take(parts),
        });
    };
    for (i, (src, d)) in pool.iter().zip(pool_digests).enumerate() {
        let rows = src.rows();
        let mut a = 0usize;
        loop {
            let b = rows.min(a.saturating_add(chunk_rows - filled));
            let view = RowRange::new(*src, d, a, b)?;
            parts.push(ChunkPart {
                pool_index: i,
                start: a,
                end: b,
                digest: view.digest(),
            });
            filled += b - a;
            if filled == chunk_rows {
                close(&mut parts, &mut out);
                filled = 0;
            }
            a = b;
            if a >= rows {
                break;
            }
        }
    }
    if !parts.is_empty() {
        close(&mut parts, &mut out);
    }
    Ok(out)
}

/// Identity keys recorded only when their option is given (a plan without them is one of a
/// run without the option, as every earlier version wrote it).
const OPTIONAL_KEYS: [&str; 1] = ["after"];

/// Compare the stored identity with the current one; the first difference is an error.
pub(super) fn check_identity(
    dir: &Path,
    stored: &serde_json::Map<String, serde_json::Value>,
    now: &serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    for (k, v) in now {
        let old = stored.get(k).unwrap_or(&serde_json::Value::Null);
        if old != v {
            return Err(Error::mismatch_at(
                dir.join(PLAN),
                format!(
                    "cannot resume: the partial scan was made with a different {k} \
                     (partial: {old}, now: {v}); rerun with the original inputs and options, or \
                     delete {} to start over",
                    dir.display()
                ),
            ));
        }
    }
    // An option recorded only when given (`after`), given then and not now.
    if let Some(k) = stored
        .keys()
        .find(|k| OPTIONAL_KEYS.contains(&k.as_str()) && !now.contains_key(*k))
    {
        return Err(Error::mismatch_at(
            dir.join(PLAN),
            format!(
                "cannot resume: the partial scan was made with a different {k} (partial: {}, \
                 now: none); rerun with the original inputs and options, or delete {} to start \
                 over",
                stored[k],
                dir.display()
            ),
        ));
    }
    if let Some(k) = stored.keys().find(|k| !now.contains_key(*k)) {
        return Err(Error::unsupported(
            dir.join(PLAN),
            format!(
                "cannot resume: the partial scan records an option {k:?} this tailrank does not \
                 know; delete {} to start over",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Read the plan of an existing partial folder (None when it has none yet: the run was killed
/// before writing it).
pub(super) fn read_plan(dir: &Path) -> Result<Option<Plan>> {
    let p = dir.join(PLAN);
    if !p.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&p).at(&p)?;
    let malformed = |e: serde_json::Error| {
        Error::input(
            &p,
            format!(
                "malformed plan of a partial scan: {e}; delete {} to start over",
                dir.display()
            ),
        )
    };
    // Check the format and version first, so that an older layout gets the version message.
    let head: serde_json::Value = serde_json::from_str(&text).map_err(malformed)?;
    let (format, version) = (
        head.get("format").and_then(|v| v.as_str()).unwrap_or(""),
        head.get("format_version").and_then(|v| v.as_u64()),
    );
    if format != PARTIAL_FORMAT || version != Some(PARTIAL_VERSION as u64) {
        return Err(Error::unsupported(
            &p,
            format!(
                "not a {PARTIAL_FORMAT} version {PARTIAL_VERSION} plan (format {format:?}, \
                 version {}); delete {} to start over",
                version.map_or("?".to_string(), |v| v.to_string()),
                dir.display()
            ),
        ));
    }
    // The fields just checked are the plan's own `format` and `format_version`.
    let plan: Plan = serde_json::from_value(head).map_err(malformed)?;
    Ok(Some(plan))
}

/// Top-k results per query: `(query id, [(db id, score)])`, in query-set order.
pub type ResultLists = Vec<(String, Vec<(String, f32)>)>;

/// Merge per-chunk top-k result lists into the single-pass lists: the global top-k in the
/// order (score descending, non-relevant core rows, then pool rows in input order, then the
/// query's positives) is contained in
/// the union of the chunks' top-k lists, so merging them in that order and keeping `k` gives
/// exactly the lists of one pass (`scan::resume`).
pub(super) fn merge_results(
    set: &QuerySet,
    core: &dyn DescriptorSource,
    parts: &[ResultLists],
    k: usize,
) -> Result<Vec<Vec<(String, f32)>>> {
    let core_ids = core.ids().to_vec()?;
    let core_row: HashMap<&str, usize> = core_ids
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let mut out = Vec::with_capacity(set.query_ids.len());
    for (qi, q) in set.query_ids.iter().enumerate() {
        let positives: HashSet<&str> = set.positives[qi].iter().map(String::as_str).collect();
        // (score, class 0 = non-relevant core / 1 = pool / 2 = positive, order key 1, order
        // key 2, id): within equal scores non-relevant items first, as the scan orders them
        // (`collect::core_result_key`).
        let mut cand: Vec<(f32, u8, usize, usize, &str)> = Vec::new();
        let mut seen_core: HashSet<&str> = HashSet::new();
        for (ci, part) in parts.iter().enumerate() {
            let (pq, items) = part.get(qi).ok_or_else(|| {
                Error::internal(format!("chunk results lack query {q:?} (internal error)"))
            })?;
            if pq != q {
                return Err(Error::internal(format!(
                    "chunk results list query {pq:?} where {q:?} was expected (internal error)"
                )));
            }
            for (pos, (id, s)) in items.iter().enumerate() {
                match core_row.get(id.as_str()) {
                    Some(&r) => {
                        if seen_core.insert(id.as_str()) {
                            let class = if positives.contains(id.as_str()) {
                                2
                            } else {
                                0
                            };
                            cand.push((*s, class, r, 0, id.as_str()));
                        }
                    }
                    None => cand.push((*s, 1, ci, pos, id.as_str())),
                }
            }
        }
        cand.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        cand.truncate(k);
        out.push(cand.into_iter().map(|c| (c.4.to_string(), c.0)).collect());
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ChunkRecord {
    chunk: Chunk,
    /// [`rows_digest`] of each part's rows, taken before the chunk was scanned; a resume
    /// recomputes them and reuses the chunk only when they are unchanged (the parts' file
    /// digests read only the ends of each file). Absent in records of older versions: such a
    /// chunk is scanned again.
    #[serde(default)]
    rows_xxh3: Option<Vec<String>>,
    /// xxh3 of `results.json` (when results were requested).
    results_xxh3: Option<String>,
    /// xxh3 of `results-I.json` of query sets `I = 1, 2, …` (scans of several sets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    more_results_xxh3: Vec<String>,
    /// Rows renormalised by the chunk's scan (queries, core and the chunk's pool rows).
    renormalized_rows: u64,
}

/// A finished chunk read back from the partial folder, checked against its plan entry.
pub(super) fn load_chunk(
    dir: &Path,
    chunk: &Chunk,
    pool: &[&dyn DescriptorSource],
    nsets: usize,
    want_results: bool,
) -> Result<ChunkOutput> {
    let cdir = dir.join(&chunk.name);
    let rpath = cdir.join("chunk.json");
    let text = std::fs::read_to_string(&rpath).at(&rpath)?;
    let rec: ChunkRecord = serde_json::from_str(&text)
        .map_err(|e| Error::input(&rpath, format!("malformed chunk record: {e}")))?;
    if rec.chunk != *chunk {
        return Err(Error::input(
            &rpath,
            "the chunk record does not match the plan (different range or digest)",
        ));
    }
    match &rec.rows_xxh3 {
        None => {
            return Err(Error::unsupported(
                &rpath,
                "no digest of the chunk's rows (written by an older tailrank)",
            ))
        }
        Some(old) => {
            let now = chunk_rows_digests(pool, chunk)?;
            if let Some(i) = (0..now.len()).find(|&i| old.get(i) != Some(&now[i])) {
                let p = &chunk.parts[i];
                return Err(Error::mismatch_at(
                    pool[p.pool_index].path(),
                    format!(
                        "rows {}..{} changed since the interrupted run scanned them \
                         (rows digest {} then, {} now)",
                        p.start,
                        p.end,
                        old.get(i).map_or("none", |s| s.as_str()),
                        now[i]
                    ),
                ));
            }
        }
    }
    let mut summaries = Vec::with_capacity(nsets);
    let mut results = Vec::with_capacity(nsets);
    for i in 0..nsets {
        let sdir = cdir.join(summary_dir(i));
        let summary = Summary::read(&sdir)?;
        if summary.pool_id_hashes.is_none() {
            return Err(Error::unsupported(
                &sdir,
                "the chunk summary records no pool fingerprint (older format)",
            ));
        }
        let pool: Vec<&InputRecord> = summary
            .inputs
            .iter()
            .filter(|r| r.role == POOL_ROLE)
            .collect();
        let same_rows = pool.len() == chunk.parts.len()
            && pool
                .iter()
                .zip(&chunk.parts)
                .all(|(r, part)| r.digest == part.digest);
        if !same_rows {
            return Err(Error::input(
                &sdir,
                "the chunk summary was not made from this chunk's rows (pool digest differs)",
            ));
        }
        summaries.push(summary);
        if want_results {
            let path = cdir.join(results_file(i));
            let bytes = std::fs::read(&path).at(&path)?;
            let want = if i == 0 {
                rec.results_xxh3.as_deref()
            } else {
                rec.more_results_xxh3.get(i - 1).map(String::as_str)
            };
            if want != Some(xxh3_string(&bytes).as_str()) {
                return Err(Error::input(
                    &path,
                    "checksum mismatch with chunk.json (corrupted)",
                ));
            }
            let r = crate::formats::results::parse_results(&path, &bytes)?;
            results.push(Some(
                r.queries
                    .into_iter()
                    .map(|q| {
                        let items = q.items.into_iter().map(|(id, s)| (id, s as f32)).collect();
                        (q.query, items)
                    })
                    .collect(),
            ));
        } else {
            results.push(None);
        }
    }
    Ok(ChunkOutput {
        summaries,
        results,
        renormalized_rows: rec.renormalized_rows,
        rescanned_queries: 0,
        speculative_floors: 0,
        screened: (0, 0),
    })
}

/// The summary folder of query set `i` inside a chunk folder: `summary`, then `summary-1`, ….
fn summary_dir(i: usize) -> String {
    if i == 0 {
        "summary".into()
    } else {
        format!("summary-{i}")
    }
}

/// The results file of query set `i` inside a chunk folder: `results.json`, then
/// `results-1.json`, ….
fn results_file(i: usize) -> String {
    if i == 0 {
        "results.json".into()
    } else {
        format!("results-{i}.json")
    }
}

/// A chunk's contribution to the scan.
pub(super) struct ChunkOutput {
    /// One per query set.
    pub(super) summaries: Vec<Summary>,
    pub(super) results: Vec<Option<ResultLists>>,
    pub(super) renormalized_rows: u64,
    /// Queries rescanned after a failed speculative floor, and floors set (0 for a chunk
    /// read back).
    pub(super) rescanned_queries: u64,
    pub(super) speculative_floors: u64,
    /// Pairs screened and re-scored (0 for a chunk read back).
    pub(super) screened: (u64, u64),
}

/// Write a finished chunk atomically into the partial folder, as a scratch output
/// ([`atomic::Transaction::scratch`]): the scan holds the folder's lock and clears its
/// leftovers, and a resume verifies every byte of a chunk (checksums, rows digests) and scans
/// a damaged one again, so the chunk is not fsynced.
pub(super) fn store_chunk(
    dir: &Path,
    chunk: &Chunk,
    rows_xxh3: Vec<String>,
    out: &ChunkOutput,
) -> Result<()> {
    atomic::write_dir_scratch(&dir.join(&chunk.name), |tmp| {
        let mut sums = Vec::new();
        for (i, (summary, results)) in out.summaries.iter().zip(&out.results).enumerate() {
            summary.write(&tmp.join(summary_dir(i)))?;
            if let Some(r) = results {
                let path = tmp.join(results_file(i));
                crate::formats::results::write_results(&path, r)?;
                sums.push(xxh3_string(&std::fs::read(&path).at(&path)?));
            }
        }
        let mut sums = sums.into_iter();
        let results_xxh3 = sums.next();
        let more_results_xxh3 = sums.collect();
        let rec = ChunkRecord {
            chunk: chunk.clone(),
            rows_xxh3: Some(rows_xxh3),
            results_xxh3,
            more_results_xxh3,
            renormalized_rows: out.renormalized_rows,
        };
        let text = serde_json::to_string_pretty(&rec)
            .map_err(|e| Error::internal(format!("cannot serialise chunk record: {e}")))?;
        atomic::write_bytes(&tmp.join("chunk.json"), text.as_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        v.as_object().unwrap().clone()
    }

    /// An increment's partial (`after` recorded) resumed without `--after` is a changed option
    /// (mismatch), not an option this tailrank does not know (unsupported).
    #[test]
    fn an_option_given_then_and_not_now_is_a_change() {
        let d = Path::new("p");
        let now = map(serde_json::json!({"seed": 0}));
        let e = check_identity(d, &map(serde_json::json!({"seed": 0, "after": 0.25})), &now)
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Mismatch, "{e}");
        assert!(
            e.to_string()
                .contains("different after (partial: 0.25, now: none)"),
            "{e}"
        );
        let e =
            check_identity(d, &map(serde_json::json!({"seed": 0, "zzz": 1})), &now).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unsupported, "{e}");
        assert!(check_identity(d, &now, &now).is_ok());
    }
}
