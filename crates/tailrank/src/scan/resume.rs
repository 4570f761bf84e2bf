//! Resumable scans: the pool is scanned chunk by chunk (the pool files, in order, cut into
//! consecutive chunks of `chunk_rows` rows: small files share a chunk, large files are split
//! across chunks, so that every chunk but the last has exactly `chunk_rows` rows), each chunk's
//! summary written atomically into a partial folder `OUT.partial/` next to the output. At the
//! end the chunk summaries are merged ([`Summary::merge`]) into the summary of the whole pool,
//! which the caller writes to `OUT` before removing the partial folder
//! ([`remove_partial`]).
//!
//! A scan killed at any point (SIGKILL, power loss) leaves only complete chunk folders (each
//! is written into a temporary sibling and renamed) plus, possibly, temporary entries that a
//! resumed run deletes. While it runs, [`scan_resumable`] holds the lock `OUT.partial.lock`
//! (`crate::atomic::Lock`): a second scan into the same folder is refused with the pid of the
//! first, so "left by an interrupted run" is only said of a folder no live process writes. [`scan_resumable`] with `resume = true` checks that the partial folder
//! was made from the same inputs and options (digests of queries, core, ground truth and every
//! pool file, full-content [`rows_digest`]s of the queries and core; f, seed, levels, drift
//! shards, M, model, query set, normalisation, results k and the chunk size), reuses every
//! finished chunk (after verifying its checksums, its range digest and the [`rows_digest`] of
//! its rows recorded before it was scanned: a file digest reads only the ends of the file, so
//! rows rewritten in the middle would otherwise be reused stale), scans the others, and returns
//! a summary IDENTICAL to an uninterrupted scan: counts
//! and subset sizes are sums, top-M lists are value multisets, the positives' scores come from
//! the same kernel whatever the chunk, so `merge(scan(chunk₁), …, scan(chunkₙ)) = scan(pool)`.
//! The merged summary records one `pool` input per pool file (its path, whole-file digest and
//! rows), exactly as a single-pass scan does.
//!
//! Layout of `OUT.partial/`:
//!
//! * `plan.json`: format `tailrank-scan-partial`, version 2, the identity of the scan (inputs
//!   and options, see above) and the list of chunks (`name`, and `parts`: `pool_index`,
//!   `start`, `end`, `digest` of the [`RowRange`] view, one part per file the chunk touches);
//! * `chunk-NNNNNN/` for every finished chunk: `summary/` (a summary folder, format of
//!   `docs/summary-format.md`), `chunk.json` (the chunk's plan entry, the [`rows_digest`] of
//!   each part and the xxh3 of `results.json`) and, when top-k results are requested, `results.json` (ILIAS results JSON
//!   of core ∪ chunk).
//!
//! Results (top-k over core ∪ pool): the global top-k in the order (score descending, core rows
//! first, then pool rows in input order) is contained in the union of the chunks' top-k lists
//! (an item of the global top-k has no more items above it within its own chunk), so merging
//! the lists in that order and keeping k gives exactly the single-pass lists.

use crate::atomic;
use crate::error::{Error, IoContext, Result};
use crate::formats::descriptors::{DescriptorSource, RowRange};
use crate::scan::engine::{scan, NoProgress, Progress, ScanConfig, ScanInputs, ScanOutput};
use crate::scan::summary::{query_set_digest, InputRecord, Summary, POOL_ROLE};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Top-k results per query: `(query id, [(db id, score)])`, in query-set order.
pub type ResultLists = Vec<(String, Vec<(String, f32)>)>;

/// Format name of `plan.json`.
pub const PARTIAL_FORMAT: &str = "tailrank-scan-partial";
/// Version of the partial-folder layout (2: chunks made of parts of several files).
pub const PARTIAL_VERSION: u32 = 2;
/// Default chunk size in pool rows (about 12 GB of f16 descriptors at D = 768).
pub const DEFAULT_CHUNK_ROWS: usize = 8_000_000;
/// Name of the plan file inside the partial folder.
pub const PLAN: &str = "plan.json";

/// The partial folder of output `out`: `OUT.partial` (a sibling of `OUT`).
pub fn partial_dir_for(out: &Path) -> PathBuf {
    let mut name = out
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "summary".into());
    name.push(".partial");
    out.with_file_name(name)
}

/// Options of a resumable scan.
#[derive(Debug, Clone)]
pub struct ResumeOptions {
    /// The partial folder (usually [`partial_dir_for`] of the output).
    pub partial_dir: PathBuf,
    /// Pool rows per chunk (files with more rows are cut into row ranges).
    pub chunk_rows: usize,
    /// Continue an existing partial folder; without it an existing folder is an error.
    pub resume: bool,
}

/// What [`scan_resumable`] did besides producing the output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumeReport {
    /// Chunks reused from the partial folder.
    pub reused: usize,
    /// Chunks scanned by this run.
    pub scanned: usize,
    /// Entries of the partial folder that were deleted: leftovers of interrupted writes, and
    /// chunks that could not be reused (each with the reason).
    pub discarded: Vec<String>,
}

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
struct Plan {
    format: String,
    format_version: u32,
    tool_version: String,
    /// Everything the chunks depend on, compared field by field on resume.
    identity: serde_json::Map<String, serde_json::Value>,
    chunks: Vec<Chunk>,
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
    /// Rows renormalised by the chunk's scan (queries, core and the chunk's pool rows).
    renormalized_rows: u64,
}

/// Full-content digest of rows `start..end` of `src`: the rows are cut into blocks of 4,096
/// (from `start`); block `b` hashes to `h_b` = xxh3-64 over, for each of its rows, the id and
/// `\n`, then the row's values as little-endian f32 (as the scan reads them); the digest is
/// xxh3-64 over `h_0, h_1, …` (8 little-endian bytes each). Blocks are hashed in parallel.
/// Reads every byte of the range (cost: `docs/errors.md`, resumable scans).
pub fn rows_digest(src: &dyn DescriptorSource, start: usize, end: usize) -> Result<String> {
    use rayon::prelude::*;
    const BLOCK: usize = 4096;
    let d = src.dim();
    let nblocks = end.saturating_sub(start).div_ceil(BLOCK);
    let hashes: Vec<u64> = (0..nblocks)
        .into_par_iter()
        .map_init(
            || {
                (
                    vec![0f32; BLOCK * d],
                    Vec::<u8>::with_capacity(BLOCK * d * 4),
                )
            },
            |(buf, bytes), b| {
                let a = start + b * BLOCK;
                let n = (end - a).min(BLOCK);
                let rows = &mut buf[..n * d];
                src.read_rows(a, rows)?;
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                for id in &src.ids()[a..a + n] {
                    h.update(id.as_bytes());
                    h.update(b"\n");
                }
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
fn chunk_rows_digests(pool: &[&dyn DescriptorSource], chunk: &Chunk) -> Result<Vec<String>> {
    chunk
        .parts
        .iter()
        .map(|p| rows_digest(pool[p.pool_index], p.start, p.end))
        .collect()
}

fn xxh3_string(bytes: &[u8]) -> String {
    format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// The identity of a scan: what must not change between an interrupted run and its resume.
fn identity(
    inputs: &ScanInputs,
    cfg: &ScanConfig,
    chunk_rows: usize,
    pool_digests: &[String],
    content: [&str; 2],
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::json;
    let mut m = serde_json::Map::new();
    let mut put = |k: &str, v: serde_json::Value| {
        m.insert(k.to_string(), v);
    };
    put("model", json!(cfg.model));
    put("query_set", json!(inputs.query_set.name));
    put("ground_truth", json!(query_set_digest(inputs.query_set)));
    put(
        "queries",
        json!({"digest": inputs.queries.digest(), "rows": inputs.queries.rows()}),
    );
    put(
        "core",
        json!({"digest": inputs.core.digest(), "rows": inputs.core.rows()}),
    );
    // The file digests above read only the ends of a file: every chunk reused depends on every
    // query and core row, so these two are digested in full.
    put("queries_rows", json!(content[0]));
    put("core_rows", json!(content[1]));
    put(
        "pool",
        json!(inputs
            .pool
            .iter()
            .zip(pool_digests)
            .map(|(p, d)| json!({"digest": d, "rows": p.rows()}))
            .collect::<Vec<_>>()),
    );
    put("fraction", json!(cfg.fraction));
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
        return Err(Error::invalid("chunk size (rows) must be at least 1"));
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

/// Rewrite the row number of an engine error about a chunk (`"row N (id …)"`, relative to the
/// view) into the row of the file (`N + start`). Errors of the inner source already use file
/// rows and do not start with `row `.
fn absolute_row(e: Error, src: &dyn DescriptorSource, start: usize) -> Error {
    match e {
        Error::File { path, msg } if start > 0 && path == src.path() => {
            let rest = msg.strip_prefix("row ");
            let parsed = rest.and_then(|r| {
                let digits: String = r.chars().take_while(|c| c.is_ascii_digit()).collect();
                let n: usize = digits.parse().ok()?;
                Some((n, r[digits.len()..].to_string()))
            });
            match parsed {
                Some((n, tail)) => Error::File {
                    path,
                    msg: format!("row {}{tail}", n + start),
                },
                None => Error::File { path, msg },
            }
        }
        other => other,
    }
}

/// Remove the partial folder (after the merged summary has been written).
pub fn remove_partial(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).at(dir)?;
    }
    Ok(())
}

/// Compare the stored identity with the current one; the first difference is an error.
fn check_identity(
    dir: &Path,
    stored: &serde_json::Map<String, serde_json::Value>,
    now: &serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    for (k, v) in now {
        let old = stored.get(k).unwrap_or(&serde_json::Value::Null);
        if old != v {
            return Err(Error::file(
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
    if let Some(k) = stored.keys().find(|k| !now.contains_key(*k)) {
        return Err(Error::file(
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
fn read_plan(dir: &Path) -> Result<Option<Plan>> {
    let p = dir.join(PLAN);
    if !p.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&p).at(&p)?;
    let malformed = |e: serde_json::Error| {
        Error::file(
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
        return Err(Error::file(
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

/// A finished chunk read back from the partial folder, checked against its plan entry.
fn load_chunk(
    dir: &Path,
    chunk: &Chunk,
    pool: &[&dyn DescriptorSource],
    want_results: bool,
) -> Result<ChunkOutput> {
    let cdir = dir.join(&chunk.name);
    let rpath = cdir.join("chunk.json");
    let text = std::fs::read_to_string(&rpath).at(&rpath)?;
    let rec: ChunkRecord = serde_json::from_str(&text)
        .map_err(|e| Error::file(&rpath, format!("malformed chunk record: {e}")))?;
    if rec.chunk != *chunk {
        return Err(Error::file(
            &rpath,
            "the chunk record does not match the plan (different range or digest)",
        ));
    }
    match &rec.rows_xxh3 {
        None => {
            return Err(Error::file(
                &rpath,
                "no digest of the chunk's rows (written by an older tailrank)",
            ))
        }
        Some(old) => {
            let now = chunk_rows_digests(pool, chunk)?;
            if let Some(i) = (0..now.len()).find(|&i| old.get(i) != Some(&now[i])) {
                let p = &chunk.parts[i];
                return Err(Error::file(
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
    let summary = Summary::read(&cdir.join("summary"))?;
    if summary.pool_id_hashes.is_none() {
        return Err(Error::file(
            cdir.join("summary"),
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
        return Err(Error::file(
            cdir.join("summary"),
            "the chunk summary was not made from this chunk's rows (pool digest differs)",
        ));
    }
    let results = if want_results {
        let path = cdir.join("results.json");
        let bytes = std::fs::read(&path).at(&path)?;
        if rec.results_xxh3.as_deref() != Some(xxh3_string(&bytes).as_str()) {
            return Err(Error::file(
                &path,
                "checksum mismatch with chunk.json (corrupted)",
            ));
        }
        let r = crate::formats::results::parse_results(&path, &bytes)?;
        Some(
            r.queries
                .into_iter()
                .map(|q| {
                    let items = q.items.into_iter().map(|(id, s)| (id, s as f32)).collect();
                    (q.query, items)
                })
                .collect(),
        )
    } else {
        None
    };
    Ok(ChunkOutput {
        summary,
        results,
        renormalized_rows: rec.renormalized_rows,
        rescanned_queries: 0,
        speculative_floors: 0,
        screened: (0, 0),
    })
}

/// A chunk's contribution to the scan.
struct ChunkOutput {
    summary: Summary,
    results: Option<ResultLists>,
    renormalized_rows: u64,
    /// Queries rescanned after a failed speculative floor, and floors set (0 for a chunk
    /// read back).
    rescanned_queries: u64,
    speculative_floors: u64,
    /// Pairs screened and re-scored (0 for a chunk read back).
    screened: (u64, u64),
}

/// Write a finished chunk atomically into the partial folder.
fn store_chunk(dir: &Path, chunk: &Chunk, rows_xxh3: Vec<String>, out: &ChunkOutput) -> Result<()> {
    atomic::write_dir(&dir.join(&chunk.name), |tmp| {
        out.summary.write(&tmp.join("summary"))?;
        let results_xxh3 = match &out.results {
            Some(r) => {
                let path = tmp.join("results.json");
                crate::formats::results::write_results(&path, r)?;
                Some(xxh3_string(&std::fs::read(&path).at(&path)?))
            }
            None => None,
        };
        let rec = ChunkRecord {
            chunk: chunk.clone(),
            rows_xxh3: Some(rows_xxh3),
            results_xxh3,
            renormalized_rows: out.renormalized_rows,
        };
        let text = serde_json::to_string_pretty(&rec)
            .map_err(|e| Error::invalid(format!("cannot serialise chunk record: {e}")))?;
        atomic::write_bytes(&tmp.join("chunk.json"), text.as_bytes())
    })
}

/// Merge per-chunk top-k result lists into the single-pass lists (see the module docs).
fn merge_results(
    query_ids: &[String],
    core: &dyn DescriptorSource,
    parts: &[ResultLists],
    k: usize,
) -> Result<Vec<Vec<(String, f32)>>> {
    let core_row: HashMap<&str, usize> = core
        .ids()
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let mut out = Vec::with_capacity(query_ids.len());
    for (qi, q) in query_ids.iter().enumerate() {
        // (score, class 0 = core / 1 = pool, order key 1, order key 2, id)
        let mut cand: Vec<(f32, u8, usize, usize, &str)> = Vec::new();
        let mut seen_core: HashSet<&str> = HashSet::new();
        for (ci, part) in parts.iter().enumerate() {
            let (pq, items) = part.get(qi).ok_or_else(|| {
                Error::invalid(format!("chunk results lack query {q:?} (internal error)"))
            })?;
            if pq != q {
                return Err(Error::invalid(format!(
                    "chunk results list query {pq:?} where {q:?} was expected (internal error)"
                )));
            }
            for (pos, (id, s)) in items.iter().enumerate() {
                match core_row.get(id.as_str()) {
                    Some(&r) => {
                        if seen_core.insert(id.as_str()) {
                            cand.push((*s, 0, r, 0, id.as_str()));
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

/// Scan the pool chunk by chunk with a partial folder (see the module docs). Returns the
/// merged output (identical to [`scan`] over the whole pool) and what was reused. The partial
/// folder is left in place: remove it with [`remove_partial`] once the output is written.
pub fn scan_resumable(
    inputs: &ScanInputs,
    cfg: &ScanConfig,
    opts: &ResumeOptions,
    progress: &dyn Progress,
) -> Result<(ScanOutput, ResumeReport)> {
    let dir = &opts.partial_dir;
    crate::scan::engine::check_top_m(cfg.top_m)?;
    let pool_digests: Vec<String> = inputs.pool.iter().map(|p| p.digest()).collect();
    let chunks = plan_chunks(&inputs.pool, &pool_digests, opts.chunk_rows)?;
    // Pool shards must be disjoint as a whole, not only within each chunk.
    crate::scan::engine::check_pool_disjoint(&inputs.pool)?;
    let content = [
        rows_digest(inputs.queries, 0, inputs.queries.rows())?,
        rows_digest(inputs.core, 0, inputs.core.rows())?,
    ];
    let ident = identity(
        inputs,
        cfg,
        opts.chunk_rows,
        &pool_digests,
        [&content[0], &content[1]],
    );
    let mut report = ResumeReport::default();

    // Held until the chunks are merged: a second scan into the same partial folder is refused
    // (naming this process) instead of being told the folder was left by an interrupted run.
    let _lock = atomic::Lock::acquire(dir)?;
    if dir.exists() && !opts.resume {
        return Err(Error::file(
            dir,
            "a partial scan is in the way (left by an interrupted run): pass --resume to \
             continue it, or delete this folder to start over",
        ));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(Error::file(
            dir,
            "exists but is not a folder (expected the partial folder of a scan)",
        ));
    }
    let plan = Plan {
        format: PARTIAL_FORMAT.into(),
        format_version: PARTIAL_VERSION,
        tool_version: crate::TOOL_VERSION.into(),
        identity: ident,
        chunks: chunks.clone(),
    };
    let existing = if dir.exists() { read_plan(dir)? } else { None };
    match &existing {
        Some(old) => {
            check_identity(dir, &old.identity, &plan.identity)?;
            if old.chunks != plan.chunks {
                return Err(Error::file(
                    dir.join(PLAN),
                    format!(
                        "cannot resume: the chunks of the partial scan differ from this run's; \
                         delete {} to start over",
                        dir.display()
                    ),
                ));
            }
        }
        None => {
            std::fs::create_dir_all(dir).at(dir)?;
            let text = serde_json::to_string_pretty(&plan)
                .map_err(|e| Error::invalid(format!("cannot serialise plan: {e}")))?;
            atomic::write_bytes(&dir.join(PLAN), text.as_bytes())?;
        }
    }
    // Leftovers: temporary entries of interrupted writes, and anything not in the plan.
    let names: HashSet<&str> = chunks.iter().map(|c| c.name.as_str()).collect();
    let mut entries: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .at(dir)?
        .map(|e| {
            e.map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .at(dir)
        })
        .collect::<Result<_>>()?;
    entries.sort();
    for (name, path) in entries {
        if name == PLAN || names.contains(name.as_str()) {
            continue;
        }
        if path.is_dir() {
            std::fs::remove_dir_all(&path).at(&path)?;
        } else {
            std::fs::remove_file(&path).at(&path)?;
        }
        report
            .discarded
            .push(format!("{name} (leftover of an interrupted write)"));
    }

    let result = scan_chunks(
        inputs,
        cfg,
        dir,
        &chunks,
        &pool_digests,
        progress,
        &mut report,
    );
    if result.is_err() && !has_chunks(dir) {
        // Nothing worth keeping (e.g. bad input found in the first chunk): leave no folder that
        // would make the next run ask for --resume.
        let _ = remove_partial(dir);
    }
    result.map(|out| (out, report))
}

/// Whether the partial folder holds at least one finished chunk.
fn has_chunks(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok()).any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("chunk-") && !n.contains(".tmp") && !n.ends_with(atomic::LOCK_SUFFIX)
        })
    })
}

/// The chunk loop of [`scan_resumable`] (plan written, leftovers removed).
fn scan_chunks(
    inputs: &ScanInputs,
    cfg: &ScanConfig,
    dir: &Path,
    chunks: &[Chunk],
    pool_digests: &[String],
    progress: &dyn Progress,
    report: &mut ResumeReport,
) -> Result<ScanOutput> {
    let want_results = cfg.results_k.is_some();
    let mut chunk_cfg = cfg.clone();
    chunk_cfg.pool_size = None;
    let scan_chunk = |chunk: &Chunk, progress: &dyn Progress| -> Result<ChunkOutput> {
        let views: Vec<RowRange> = chunk
            .parts
            .iter()
            .map(|p| {
                RowRange::new(
                    inputs.pool[p.pool_index],
                    &pool_digests[p.pool_index],
                    p.start,
                    p.end,
                )
            })
            .collect::<Result<_>>()?;
        let chunk_inputs = ScanInputs {
            query_set: inputs.query_set,
            queries: inputs.queries,
            core: inputs.core,
            pool: views.iter().map(|v| v as &dyn DescriptorSource).collect(),
        };
        let out = scan(&chunk_inputs, &chunk_cfg, progress).map_err(|e| {
            // A chunk holds at most one range per file: the error's file names the part.
            chunk.parts.iter().fold(e, |e, p| {
                absolute_row(e, inputs.pool[p.pool_index], p.start)
            })
        })?;
        let results = out.results.map(|lists| {
            inputs
                .query_set
                .query_ids
                .iter()
                .cloned()
                .zip(lists)
                .collect::<Vec<_>>()
        });
        Ok(ChunkOutput {
            summary: out.summary,
            results,
            renormalized_rows: out.renormalized_rows,
            rescanned_queries: out.rescanned_queries,
            speculative_floors: out.speculative_floors,
            screened: (out.screened_pairs, out.rescored_pairs),
        })
    };
    let mut acc: Option<Summary> = None;
    let mut all_results: Vec<ResultLists> = Vec::new();
    let mut chunk_renormalized = Vec::with_capacity(chunks.len());
    let (mut rescanned, mut floors, mut screened) = (0u64, 0u64, (0u64, 0u64));
    for chunk in chunks {
        let cdir = dir.join(&chunk.name);
        let mut loaded = None;
        if cdir.exists() {
            match load_chunk(dir, chunk, &inputs.pool, want_results) {
                Ok(x) => loaded = Some(x),
                Err(e) => {
                    std::fs::remove_dir_all(&cdir).at(&cdir)?;
                    report
                        .discarded
                        .push(format!("{} (unusable, scanned again: {e})", chunk.name));
                }
            }
        }
        let part = match loaded {
            Some(x) => {
                report.reused += 1;
                progress.rows_done(chunk.rows() as u64);
                x
            }
            None => {
                // Digested before the scan: rows rewritten while it runs make the next resume
                // scan the chunk again rather than trust it.
                let digests = chunk_rows_digests(&inputs.pool, chunk)?;
                let out = scan_chunk(chunk, progress)?;
                store_chunk(dir, chunk, digests, &out)?;
                report.scanned += 1;
                out
            }
        };
        chunk_renormalized.push(part.renormalized_rows);
        rescanned += part.rescanned_queries;
        floors += part.speculative_floors;
        screened.0 += part.screened.0;
        screened.1 += part.screened.1;
        if let Some(r) = part.results {
            all_results.push(r);
        }
        acc = Some(match acc {
            None => part.summary,
            Some(a) => Summary::merge(&[a, part.summary]).map_err(|e| {
                Error::file(
                    dir.join(&chunk.name),
                    format!("cannot merge this chunk: {e}"),
                )
            })?,
        });
    }
    // Each chunk's count includes the query and core rows: count those once.
    let renormalized = if cfg.normalize && chunks.len() > 1 {
        let empty = Chunk {
            name: String::new(),
            parts: vec![ChunkPart {
                pool_index: 0,
                start: 0,
                end: 0,
                digest: String::new(),
            }],
        };
        let base = scan_chunk(&empty, &NoProgress)?.renormalized_rows;
        base + chunk_renormalized.iter().map(|c| c - base).sum::<u64>()
    } else {
        chunk_renormalized.iter().sum()
    };
    let mut summary = acc.ok_or_else(|| Error::invalid("no pool input to scan"))?;
    // One pool record per file, as a single-pass scan records them.
    summary.inputs.retain(|r| r.role != POOL_ROLE);
    for (src, d) in inputs.pool.iter().zip(pool_digests) {
        summary.inputs.push(InputRecord {
            role: POOL_ROLE.into(),
            path: src.path().display().to_string(),
            digest: d.clone(),
            rows: src.rows() as u64,
        });
    }
    summary.pool_size = cfg.pool_size;
    summary.tool_version = crate::TOOL_VERSION.to_string();
    summary.validate()?;
    let results = match cfg.results_k {
        Some(k) => Some(merge_results(
            &inputs.query_set.query_ids,
            inputs.core,
            &all_results,
            k,
        )?),
        None => None,
    };
    Ok(ScanOutput {
        summary,
        results,
        renormalized_rows: renormalized,
        rescanned_queries: rescanned,
        speculative_floors: floors,
        screened_pairs: screened.0,
        rescored_pairs: screened.1,
    })
}
