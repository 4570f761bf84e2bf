//! Vector-level simulator: a synthetic retrieval benchmark written as real files, so that
//! scan → predict can be checked end to end against the exact scan of the whole pool.
//!
//! The geometry (where queries, positives and pool rows lie) is one of
//! [`Geometry`](super::vector_geometry::Geometry): clustered, anisotropic with near-duplicate
//! bursts, or a CLIP-like narrow cone with Zipf topics and hubs (see
//! [`super::vector_geometry`]). Instance `i` has positives at distance ρ log-uniform on
//! `positive_spread` from its centre (small ρ: near-duplicates, immune; large ρ: hard
//! positives), its queries at distance `query_spread`.
//!
//! Files (in `DIR`): `queries.npy`, `core.npy`, `pool.npy` (C-order `rows × dim`, f16 by default)
//! each with a sibling id file `<stem>.ids.txt` (one id per line), and `gt.json`
//! (`{query_id: [positive ids]}`). Pool ids are `pool/000000000`, …; the core is every positive
//! of every instance. The pool is generated and written in batches (memory flat in N), in
//! parallel, and its bytes depend only on the configuration: not on the batch size nor on the
//! thread count.

pub use super::vector_geometry::VectorConfig;
use super::vector_geometry::{rng, Geometry, Layout, GEN_BLOCK};
use crate::atomic;
use crate::error::{Error, IoContext, Result};
use crate::formats::descriptors::Dtype;
use crate::formats::npy::npy_header_bytes;
use crate::scan::engine::{NoProgress, Progress};
use half::f16;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What [`write_vectors`] produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorBenchmark {
    pub config: VectorConfig,
    pub queries: usize,
    pub core: usize,
    pub pool: u64,
    /// Pool rows that are burst or hub copies.
    #[serde(default)]
    pub special_rows: u64,
    /// Relative paths (inside the output folder) of the files.
    pub files: Vec<String>,
}

impl VectorConfig {
    /// Bytes the benchmark takes while it is written, `(memory, disk)`: in memory the queries,
    /// the core and the cluster centres as f64 rows, a batch of pool rows as f64 rows and their
    /// output bytes, each row with 24 bytes of `Vec` and everything counted twice; on disk every
    /// row in its dtype and about 16 bytes per pool id.
    fn footprint(&self) -> (f64, f64) {
        let d = self.dim as f64;
        let fixed_rows = self.instances as f64 * (1.0 + 2.0 * self.mean_positives)
            + self.extra_queries as f64
            + self.clusters as f64;
        let batch = WRITE_BATCH_ROWS as f64;
        let memory = 2.0 * (d * (8.0 * fixed_rows + 12.0 * batch) + 24.0 * (fixed_rows + batch));
        let bytes = match self.dtype {
            Dtype::F16 => 2.0,
            Dtype::F32 => 4.0,
        };
        let pool = self.pool_size as f64;
        (memory, (pool + fixed_rows) * d * bytes + 16.0 * pool)
    }

    fn check(&self) -> Result<()> {
        if self.dim == 0 || self.instances == 0 || self.pool_size == 0 || self.clusters == 0 {
            return Err(Error::option(
                "vector simulation needs dim, instances, pool size and clusters ≥ 1",
            ));
        }
        if self.pool_size > u32::MAX as u64 {
            return Err(Error::option(format!(
                "--pool-size {}: one pool file of more than 2^32 − 1 rows cannot be scanned \
                 (a scan takes larger pools as shards); give at most 4294967295",
                self.pool_size
            )));
        }
        let (memory, _) = self.footprint();
        if let Some(have) = super::config::available_memory() {
            if memory > have as f64 {
                let gb = memory / 1e9;
                let gb = if gb < 1e4 {
                    format!("{gb:.1}")
                } else {
                    format!("{gb:.1e}")
                };
                return Err(Error::option(format!(
                    "a vector benchmark of {} instances, {} extra queries and dimension {} \
                     needs about {gb} GB of memory, more than is available: give a smaller \
                     --dim (or fewer --instances, --extra-queries)",
                    self.instances, self.extra_queries, self.dim,
                )));
            }
        }
        if self.mean_positives.is_nan() || self.mean_positives < 1.0 {
            return Err(Error::option("mean positives must be at least 1"));
        }
        let ok = |x: f64| x.is_finite() && x > 0.0;
        let [lo, hi] = self.positive_spread;
        if !(ok(lo) && ok(hi) && lo <= hi) {
            return Err(Error::option("positive spread must be 0 < lo ≤ hi"));
        }
        if ![self.query_spread, self.pool_spread, self.near_spread]
            .iter()
            .all(|&x| x.is_finite() && x >= 0.0)
        {
            return Err(Error::option("spreads must be finite and ≥ 0"));
        }
        match &self.geometry {
            Geometry::Clustered => {}
            Geometry::Burst {
                decay,
                burst_share,
                burst_size: [a, b],
                burst_offset: [c, d],
                copy_noise,
            } => {
                if !(decay.is_finite()
                    && (0.0..=1.0).contains(burst_share)
                    && a <= b
                    && ok(*c)
                    && c <= d
                    && d.is_finite()
                    && copy_noise.is_finite()
                    && *copy_noise >= 0.0)
                {
                    return Err(Error::option(
                        "burst geometry: needs a finite decay, share in [0, 1], size lo ≤ hi, \
                         0 < offset lo ≤ hi, copy noise ≥ 0",
                    ));
                }
            }
            Geometry::Cone {
                amp,
                topics,
                instance_spread,
                hub_spread,
                copy_noise,
                ..
            } => {
                if *topics == 0
                    || ![*amp, *instance_spread, *hub_spread, *copy_noise]
                        .iter()
                        .all(|&x| x.is_finite() && x >= 0.0)
                {
                    return Err(Error::option(
                        "cone geometry: needs ≥ 1 topic and finite, non-negative spreads",
                    ));
                }
            }
        }
        Ok(())
    }
}

fn write_matrix(path: &Path, rows: &[Vec<f64>], dim: usize, dtype: Dtype) -> Result<()> {
    let data: Vec<f32> = rows
        .iter()
        .flat_map(|r| r.iter().map(|&x| x as f32))
        .collect();
    crate::formats::npy::write_npy(path, rows.len(), dim, &data, dtype)
}

fn write_id_file(path: &Path, ids: impl Iterator<Item = String>) -> Result<()> {
    atomic::write_file(path, |w| {
        for id in ids {
            w.write_all(id.as_bytes()).at(path)?;
            w.write_all(b"\n").at(path)?;
        }
        Ok(())
    })
}

/// Id of pool row `i`.
pub fn pool_id(i: u64) -> String {
    format!("pool/{i:09}")
}

/// Files of a vector benchmark, in the order they are renamed into place (`benchmark.json`
/// last).
pub const FILES: [&str; 8] = [
    "queries.npy",
    "queries.ids.txt",
    "core.npy",
    "core.ids.txt",
    "gt.json",
    "pool.npy",
    "pool.ids.txt",
    "benchmark.json",
];

/// Pool rows generated and written per batch by [`write_vectors`] (memory ∝ batch × dim).
pub const WRITE_BATCH_ROWS: u64 = 16 * GEN_BLOCK;

/// Generate the benchmark into `dir` (created if missing). The files are written to staging
/// paths and replaced together ([`atomic::Transaction`]): a kill never leaves the queries of
/// one run next to the pool of another.
pub fn write_vectors(cfg: &VectorConfig, dir: &Path) -> Result<VectorBenchmark> {
    write_vectors_batched(cfg, dir, WRITE_BATCH_ROWS, &NoProgress)
}

/// Refuse to replace a file of [`FILES`] in an existing `dir` that `simulate --vectors` did not
/// write: one is there and `dir` holds no `benchmark.json` of a simulated benchmark, a JSON
/// object with the `config`, `pool` and `files` keys every version of [`VectorBenchmark`] has
/// written (a user's own descriptors or ground truth). A folder it wrote before, by this
/// version or another, is rewritten.
fn check_replaceable(dir: &Path) -> Result<()> {
    let Some(existing) = FILES.iter().map(|f| dir.join(f)).find(|p| p.exists()) else {
        return Ok(());
    };
    // A commit of this folder cut short (its staging `NAME.tmp`) is finished by the rerun.
    let staging = FILES
        .iter()
        .any(|f| atomic::staging_dir(&dir.join(f)).is_ok_and(|p| p.exists()));
    let ours = std::fs::read(dir.join("benchmark.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_some_and(|v| {
            ["config", "pool", "files"]
                .iter()
                .all(|k| v.get(k).is_some())
        });
    if ours || staging {
        return Ok(());
    }
    Err(Error::output(
        &existing,
        "exists, and its folder holds no benchmark.json of a simulated benchmark, so tailrank \
         did not write it; refusing to replace it: choose another output folder (or move the \
         file away)",
    ))
}

/// Refuse a benchmark larger than the free space of the file system `dir` is (or will be) on,
/// before anything is written; no check where the free space is unknown.
fn check_disk(cfg: &VectorConfig, dir: &Path) -> Result<()> {
    let (_, need) = cfg.footprint();
    match free_disk_bytes(dir) {
        Some(free) if need > free as f64 => Err(Error::output(
            dir,
            format!(
                "the benchmark needs about {:.1} GB on disk ({} pool rows of dimension {}), more \
                 than the {:.1} GB free there: give a smaller --pool-size or --dim",
                need / 1e9,
                cfg.pool_size,
                cfg.dim,
                free as f64 / 1e9
            ),
        )),
        _ => Ok(()),
    }
}

/// Bytes available to this user on the file system of `dir` (its nearest existing ancestor).
#[cfg(unix)]
fn free_disk_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let mut p = std::path::absolute(dir).ok()?;
    while !p.exists() {
        p = p.parent()?.to_path_buf();
    }
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a NUL-terminated path and `st` a plain struct statvfs fills.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0)
        .then(|| (st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(not(unix))]
fn free_disk_bytes(_: &Path) -> Option<u64> {
    None
}

/// Append the little-endian bytes of `v` in `dtype`.
fn push_row(out: &mut Vec<u8>, v: &[f64], dtype: Dtype) {
    for &x in v {
        match dtype {
            Dtype::F16 => out.extend_from_slice(&f16::from_f32(x as f32).to_le_bytes()),
            Dtype::F32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
        }
    }
}

/// [`write_vectors`] with `batch_rows` pool rows per batch (rounded up to whole generation
/// blocks), `progress` told of the pool rows as each batch is written. The bytes written do
/// not depend on `batch_rows`.
pub fn write_vectors_batched(
    cfg: &VectorConfig,
    dir: &Path,
    batch_rows: u64,
    progress: &dyn Progress,
) -> Result<VectorBenchmark> {
    cfg.check()?;
    let layout = Layout::new(cfg)?;
    crate::outputs::refuse_in_summary(dir)?;
    check_replaceable(dir)?;
    check_disk(cfg, dir)?;
    crate::outputs::create_output_folder(dir)?;
    let mut tx = atomic::Transaction::new(&[]);
    let slots: Vec<usize> = FILES
        .iter()
        .map(|f| tx.add_file(&dir.join(f)))
        .collect::<Result<_>>()?;
    let slot = |name: &str| slots[FILES.iter().position(|f| *f == name).expect("known file")];
    let d = cfg.dim;
    for (name, rows, ids) in [
        ("queries", &layout.queries, &layout.query_ids),
        ("core", &layout.core, &layout.core_ids),
    ] {
        tx.write(slot(&format!("{name}.npy")), |p| {
            write_matrix(p, rows, d, cfg.dtype)
        })?;
        tx.write(slot(&format!("{name}.ids.txt")), |p| {
            write_id_file(p, ids.iter().cloned())
        })?;
    }
    let gt_path = dir.join("gt.json");
    let gt_bytes = serde_json::to_vec_pretty(&layout.gt)
        .map_err(|e| Error::internal_at(&gt_path, format!("cannot serialise ground truth: {e}")))?;
    tx.write(slot("gt.json"), |p| atomic::write_bytes(p, &gt_bytes))?;

    // Pool: generation blocks drawn in parallel (one generator per block), written in order,
    // a batch of blocks at a time.
    let pool_path = dir.join("pool.npy");
    let n_blocks = cfg.pool_size.div_ceil(GEN_BLOCK);
    let per_batch = batch_rows.div_ceil(GEN_BLOCK).max(1);
    let header = npy_header_bytes(cfg.pool_size as usize, d, cfg.dtype);
    tx.write(slot("pool.npy"), |staged| {
        atomic::write_file(staged, |w| {
            w.write_all(&header).at(&pool_path)?;
            let mut b0 = 0u64;
            while b0 < n_blocks {
                let b1 = (b0 + per_batch).min(n_blocks);
                let bufs: Vec<Vec<u8>> = (b0..b1)
                    .into_par_iter()
                    .map(|b| {
                        let mut r = rng(cfg.seed, 1, b);
                        let start = b * GEN_BLOCK;
                        let end = (start + GEN_BLOCK).min(cfg.pool_size);
                        let mut out = Vec::with_capacity((end - start) as usize * d * 4);
                        for row in start..end {
                            push_row(&mut out, &layout.pool_row(cfg.seed, row, &mut r), cfg.dtype);
                        }
                        out
                    })
                    .collect();
                for b in bufs {
                    w.write_all(&b).at(&pool_path)?;
                }
                progress.rows_done(((b1 * GEN_BLOCK).min(cfg.pool_size)) - b0 * GEN_BLOCK);
                b0 = b1;
            }
            Ok(())
        })
    })?;
    tx.write(slot("pool.ids.txt"), |p| {
        write_id_file(p, (0..cfg.pool_size).map(pool_id))
    })?;
    let bench = VectorBenchmark {
        config: cfg.clone(),
        queries: layout.query_ids.len(),
        core: layout.core_ids.len(),
        pool: cfg.pool_size,
        special_rows: layout.special.len() as u64,
        files: [
            "queries.npy",
            "queries.ids.txt",
            "core.npy",
            "core.ids.txt",
            "pool.npy",
            "pool.ids.txt",
            "gt.json",
            "benchmark.json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    };
    let meta = dir.join("benchmark.json");
    let bytes = serde_json::to_vec_pretty(&bench)
        .map_err(|e| Error::internal_at(&meta, format!("cannot serialise: {e}")))?;
    tx.write(slot("benchmark.json"), |p| atomic::write_bytes(p, &bytes))?;
    tx.commit()?;
    Ok(bench)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn small(geometry: &str, seed: u64) -> VectorConfig {
        let mut c = VectorConfig::for_geometry(geometry).unwrap();
        c.seed = seed;
        c.dim = 16;
        c.instances = 12;
        c.pool_size = 3 * GEN_BLOCK + 123;
        c.clusters = 20;
        if let Geometry::Burst { burst_size, .. } = &mut c.geometry {
            *burst_size = [10, 30];
        }
        c
    }

    fn files(dir: &Path) -> Vec<Vec<u8>> {
        FILES
            .iter()
            .filter(|f| **f != "benchmark.json")
            .map(|f| std::fs::read(dir.join(f)).unwrap())
            .collect()
    }

    /// A folder holding a user's own `pool.npy` (no `benchmark.json`) is refused before
    /// anything is written; a folder `write_vectors` wrote is rewritten.
    #[test]
    fn a_users_files_are_not_replaced() {
        let d = tempfile::tempdir().unwrap();
        let mine = d.path().join("pool.npy");
        std::fs::write(&mine, b"my descriptors").unwrap();
        let e = write_vectors(&small("clustered", 1), d.path()).unwrap_err();
        assert!(e.to_string().contains("no benchmark.json"), "{e}");
        assert_eq!(std::fs::read(&mine).unwrap(), b"my descriptors");
        assert!(!d.path().join("gt.json").exists());
        std::fs::remove_file(&mine).unwrap();
        write_vectors(&small("clustered", 1), d.path()).unwrap();
        write_vectors(&small("clustered", 2), d.path()).unwrap();
        // A folder another version wrote (its benchmark.json has fields this one lacks or
        // reads otherwise) is still ours; JSON of another shape is not.
        let meta = d.path().join("benchmark.json");
        std::fs::write(
            &meta,
            br#"{"config": {"from": "another version"}, "pool": 7, "files": []}"#,
        )
        .unwrap();
        write_vectors(&small("clustered", 3), d.path()).unwrap();
        std::fs::write(&meta, br#"{"queries": 3}"#).unwrap();
        let e = write_vectors(&small("clustered", 4), d.path()).unwrap_err();
        assert!(e.to_string().contains("no benchmark.json"), "{e}");
    }

    /// A [`Progress`] that adds up the rows it is told of.
    #[derive(Default)]
    struct RowCount(AtomicU64);

    impl Progress for RowCount {
        fn rows_done(&self, rows: u64) {
            self.0.fetch_add(rows, Ordering::Relaxed);
        }
    }

    /// Same seed → same bytes, whatever the thread count and the batch size (chunk boundaries);
    /// another seed → another pool.
    #[test]
    fn bytes_depend_on_the_seed_only() {
        for g in ["clustered", "burst", "cone"] {
            let c = small(g, 7);
            let run = |threads: usize, batch: u64| {
                let d = tempfile::tempdir().unwrap();
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| write_vectors_batched(&c, d.path(), batch, &NoProgress).unwrap());
                files(d.path())
            };
            let a = run(1, 1);
            assert_eq!(a, run(3, 2 * GEN_BLOCK), "{g}");
            // The progress reports add up to the pool's rows.
            let rows = RowCount::default();
            let d = tempfile::tempdir().unwrap();
            write_vectors_batched(&c, d.path(), 2 * GEN_BLOCK, &rows).unwrap();
            assert_eq!(rows.0.load(Ordering::Relaxed), c.pool_size, "{g}");
            assert_eq!(a, run(2, 1 << 40), "{g}");
            let d = tempfile::tempdir().unwrap();
            write_vectors(&small(g, 8), d.path()).unwrap();
            assert_ne!(a[5], files(d.path())[5], "{g}: pool of another seed");
        }
    }

    #[test]
    fn bad_configs_are_errors() {
        let d = tempfile::tempdir().unwrap();
        let mut c = small("cone", 0);
        c.positive_spread = [1.0, 0.5];
        assert!(write_vectors(&c, d.path()).is_err());
        let mut c = small("cone", 0);
        c.pool_size = 0;
        assert!(write_vectors(&c, d.path()).is_err());
    }
}
