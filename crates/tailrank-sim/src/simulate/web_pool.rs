//! A web pool ([`super::web_geometry`]) as a descriptor source that is generated, never
//! stored ([`GeneratedPool`]), and the two scans of a web family run over it with the
//! library's scan engine: the exact whole-pool pass for the truth ([`truth_scan`], chunk by
//! chunk, memory flat in N) and the sample scan ([`sample_scan`], one pass; the engine reads
//! only the sampled rows, so only those are generated).

use super::vectors::pool_id;
use super::web_geometry::WebLayout;
use crate::error::{Error, Result};
use crate::formats::descriptors::{DescriptorSource, Dtype, InMemoryDescriptors, SourceInfo};
use crate::formats::gt::QuerySet;
use crate::formats::row_ids::RowIds;
use crate::scan::engine::{with_threads, Progress, ScanConfig};
use crate::scan::prepared::{PreparedScan, QuerySetInput};
use crate::summary::Summary;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Rows `start .. end` of a web pool, generated on every read (row `r` has id
/// [`pool_id`]`(r)`). Its digest is xxh3 of the layout's configuration (JSON) and the row
/// range. Reads add the CPU time they take to [`GeneratedPool::generation_nanos`].
pub struct GeneratedPool<'a> {
    layout: &'a WebLayout,
    start: u64,
    /// The label, the layout's dim, f32, and the generated ids of rows `start .. end`.
    info: SourceInfo,
    digest: String,
    nanos: AtomicU64,
}

impl<'a> GeneratedPool<'a> {
    /// Rows `start .. end` (`end ≤` the pool size) of `layout`.
    pub fn new(layout: &'a WebLayout, start: u64, end: u64) -> Result<Self> {
        let n = layout.config.pool_size;
        if start > end || end > n {
            return Err(Error::option(format!(
                "generated pool rows {start}..{end} outside the pool's {n} rows"
            )));
        }
        let cfg = serde_json::to_string(&layout.config)
            .map_err(|e| Error::internal(format!("cannot serialise the web config: {e}")))?;
        let label = PathBuf::from(format!(
            "generated:web-pool(seed {}, N {n}, rows {start}..{end})",
            layout.config.seed
        ));
        let digest = format!(
            "xxh3:{:016x}",
            xxhash_rust::xxh3::xxh3_64(format!("web pool\n{cfg}\nrows {start}..{end}").as_bytes())
        );
        let ids = RowIds::generated(label.clone(), start, (end - start) as usize, pool_id);
        Ok(GeneratedPool {
            layout,
            start,
            info: SourceInfo {
                path: label,
                dim: layout.config.dim,
                dtype: Dtype::F32,
                ids,
            },
            digest,
            nanos: AtomicU64::new(0),
        })
    }

    /// CPU nanoseconds spent generating rows so far (summed over threads).
    pub fn generation_nanos(&self) -> u64 {
        self.nanos.load(Ordering::Relaxed)
    }
}

impl DescriptorSource for GeneratedPool<'_> {
    fn info(&self) -> &SourceInfo {
        &self.info
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()> {
        let d = self.dim();
        let n = out.len() / d;
        if !out.len().is_multiple_of(d) || start + n > self.rows() {
            return Err(Error::internal_at(
                self.path(),
                format!(
                    "rows {start}..{} out of range ({} rows)",
                    start + n,
                    self.rows()
                ),
            ));
        }
        let t = thread_cpu_nanos();
        self.layout.fill_rows(self.start + start as u64, out);
        self.nanos
            .fetch_add(thread_cpu_nanos().saturating_sub(t), Ordering::Relaxed);
        Ok(())
    }
    fn digest(&self) -> String {
        self.digest.clone()
    }
}

/// CPU time of the calling thread in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`; 0 where there is
/// none, so generation times read 0 there).
fn thread_cpu_nanos() -> u64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the call only writes into it.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        }
    }
    0
}

/// CPU time of the whole process in seconds, user + system (`getrusage`; 0 where there is
/// none).
fn process_cpu_secs() -> f64 {
    #[cfg(unix)]
    {
        // SAFETY: `ru` is a valid, writable rusage; the call only writes into it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0 {
            let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
            return t(ru.ru_utime) + t(ru.ru_stime);
        }
    }
    0.0
}

/// The queries, the core and the query set of a web layout, in memory.
pub struct WebInputs {
    pub query_set: QuerySet,
    pub queries: InMemoryDescriptors,
    pub core: InMemoryDescriptors,
}

impl WebInputs {
    pub fn new(layout: &WebLayout) -> Result<Self> {
        let d = layout.config.dim;
        let positives = layout
            .query_ids
            .iter()
            .map(|q| layout.gt[q].clone())
            .collect();
        Ok(WebInputs {
            query_set: QuerySet::new("web-gt", "web", layout.query_ids.clone(), positives)?,
            queries: InMemoryDescriptors::new(
                "web-queries",
                layout.query_ids.clone(),
                d,
                layout.queries.clone(),
            )?,
            core: InMemoryDescriptors::new(
                "web-core",
                layout.core_ids.clone(),
                d,
                layout.core.clone(),
            )?,
        })
    }
}

/// A scan of a generated pool: the summary, the CPU time spent generating rows (summed over
/// threads) and the wall time of the scan.
pub struct GeneratedScan {
    pub summary: Summary,
    pub generation_secs: f64,
    pub wall_secs: f64,
    /// CPU time of the process during the scan (all threads, generation included).
    pub cpu_secs: f64,
}

/// Scan the pool of `layout` with `cfg` over consecutive chunks of `chunk_rows` rows (one
/// prepared scan, one pool pass per chunk), the chunk summaries merged ([`Summary::merge`]:
/// equal to one pass). With `fingerprint = false` the chunks' pool fingerprints are dropped
/// (8 bytes per sampled row otherwise). N is recorded as the pool size; `progress` is told of
/// the pool rows as the chunks are scanned.
pub fn scan_generated(
    layout: &WebLayout,
    inputs: &WebInputs,
    cfg: &ScanConfig,
    chunk_rows: u64,
    fingerprint: bool,
    progress: &dyn Progress,
) -> Result<GeneratedScan> {
    let (t, cpu) = (std::time::Instant::now(), process_cpu_secs());
    let n = layout.config.pool_size;
    let mut cfg = cfg.clone();
    cfg.pool_size = Some(n);
    let sets = [QuerySetInput {
        set: &inputs.query_set,
        queries: &inputs.queries,
    }];
    let (summary, nanos) = with_threads(cfg.threads, || {
        let prepared = PreparedScan::new(&sets, &inputs.core, &cfg)?;
        let mut merged: Option<Summary> = None;
        let mut nanos = 0u64;
        let mut a = 0u64;
        while a < n {
            let b = (a + chunk_rows.max(1)).min(n);
            let chunk = GeneratedPool::new(layout, a, b)?;
            let mut out = prepared.scan_pool(&[&chunk], progress)?;
            nanos += chunk.generation_nanos();
            let mut s = out.sets.pop().expect("one query set").summary;
            if !fingerprint {
                s.pool_id_hashes = None;
            }
            merged = Some(match merged {
                None => s,
                Some(m) => Summary::merge_with_warnings(&[m, s])?.0,
            });
            a = b;
        }
        Ok((merged.expect("N ≥ 1"), nanos))
    })?;
    let mut summary = summary;
    summary.record_ground_truth("web-gt".into(), &inputs.query_set);
    Ok(GeneratedScan {
        summary,
        generation_secs: nanos as f64 * 1e-9,
        wall_secs: t.elapsed().as_secs_f64(),
        cpu_secs: process_cpu_secs() - cpu,
    })
}

/// Rows per chunk of the truth pass (memory: about 30 bytes per row of a chunk).
pub const TRUTH_CHUNK_ROWS: u64 = 1 << 24;

/// The exact whole-pool pass for the truth: f = 1, one level, no drift shards, M = 1 (the
/// truth needs the counts `K_N` and ties only), chunks of [`TRUTH_CHUNK_ROWS`], no fingerprint.
///
/// `top_m` > 1 keeps that many top scores per query (a kept truth summary; the counts are the
/// same).
pub fn truth_scan(
    layout: &WebLayout,
    inputs: &WebInputs,
    threads: Option<usize>,
    top_m: usize,
    progress: &dyn Progress,
) -> Result<GeneratedScan> {
    let mut cfg = ScanConfig::new(1.0, 0);
    cfg.min_fraction = 1.0;
    cfg.drift_shards = 0;
    cfg.top_m = top_m.max(1);
    cfg.threads = threads;
    cfg.normalize = true;
    cfg.model = "simulated".into();
    scan_generated(layout, inputs, &cfg, TRUTH_CHUNK_ROWS, false, progress)
}

/// The sample scan at `fraction` with hash seed `seed`: the scan's defaults (as
/// `tailrank scan --fraction`), the pool in one pass.
pub fn sample_scan(
    layout: &WebLayout,
    inputs: &WebInputs,
    fraction: f64,
    seed: u64,
    threads: Option<usize>,
    progress: &dyn Progress,
) -> Result<GeneratedScan> {
    let mut cfg = ScanConfig::new(fraction, seed);
    cfg.threads = threads;
    cfg.normalize = true;
    cfg.model = "simulated".into();
    scan_generated(
        layout,
        inputs,
        &cfg,
        layout.config.pool_size,
        true,
        progress,
    )
}
