//! Vector-level simulator: a clustered synthetic retrieval benchmark written as real files, so
//! that scan → predict can be checked end to end against the exact scan of the whole pool.
//!
//! Geometry (all vectors L2-normalised, dimension `dim`, noise `g ~ N(0, I/dim)` so `|g| ≈ 1`):
//!
//! - instance `i` has a centre `c_i` (uniform on the sphere);
//! - its positives are `norm(c_i + ρ·g)` with `ρ` log-uniform on `positive_spread` (small ρ:
//!   near-duplicates, immune; large ρ: hard positives), its queries `norm(c_i + query_spread·g)`;
//! - pool items belong to `clusters` background clusters, `norm(b_k + pool_spread·g)`; a share
//!   `near_share` of the clusters are centred near an instance (`b_k = norm(c_i + near_spread·g)`),
//!   which gives each query a heavier upper tail of distractor scores.
//!
//! Files (in `DIR`): `queries.npy`, `core.npy`, `pool.npy` (C-order `rows × dim`, f16 by default)
//! each with a sibling id file `<stem>.ids.txt` (one id per line), and `gt.json`
//! (`{query_id: [positive ids]}`). Pool ids are `pool/000000000`, …; the core is every positive
//! of every instance. Generation is chunked and parallel, deterministic in the seed.

use crate::atomic;
use crate::error::{Error, IoContext, Result};
use crate::formats::descriptors::Dtype;
use crate::formats::npy::npy_header_bytes;
use half::f16;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Poisson, StandardNormal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Parameters of the vector-level benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorConfig {
    pub seed: u64,
    pub dim: usize,
    pub instances: usize,
    /// Each instance has `1 + Poisson(mean_positives − 1)` positives.
    pub mean_positives: f64,
    /// Extra queries (second query of a random instance), beyond one per instance.
    pub extra_queries: usize,
    /// Number of pool (distractor) rows.
    pub pool_size: u64,
    pub clusters: usize,
    pub near_share: f64,
    pub positive_spread: [f64; 2],
    pub query_spread: f64,
    pub pool_spread: f64,
    pub near_spread: f64,
    pub dtype: Dtype,
}

impl Default for VectorConfig {
    fn default() -> Self {
        VectorConfig {
            seed: 0,
            dim: 32,
            instances: 40,
            mean_positives: 4.0,
            extra_queries: 10,
            pool_size: 50_000,
            clusters: 200,
            near_share: 0.3,
            positive_spread: [0.3, 1.6],
            query_spread: 0.5,
            pool_spread: 0.9,
            near_spread: 0.9,
            dtype: Dtype::F16,
        }
    }
}

/// What [`write_vectors`] produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorBenchmark {
    pub config: VectorConfig,
    pub queries: usize,
    pub core: usize,
    pub pool: u64,
    /// Relative paths (inside the output folder) of the files.
    pub files: Vec<String>,
}

fn rng(seed: u64, tag: u64, index: u64) -> Xoshiro256PlusPlus {
    super::rng_for(seed, 100 + tag, index)
}

fn gauss_vec<R: Rng + ?Sized>(rng: &mut R, dim: usize, scale: f64) -> Vec<f64> {
    let s = scale / (dim as f64).sqrt();
    (0..dim)
        .map(|_| {
            let g: f64 = StandardNormal.sample(rng);
            g * s
        })
        .collect()
}

fn normalize(v: &mut [f64]) {
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

fn around<R: Rng + ?Sized>(rng: &mut R, centre: &[f64], spread: f64) -> Vec<f64> {
    let g = gauss_vec(rng, centre.len(), spread);
    let mut v: Vec<f64> = centre.iter().zip(g).map(|(c, e)| c + e).collect();
    normalize(&mut v);
    v
}

fn unit<R: Rng + ?Sized>(rng: &mut R, dim: usize) -> Vec<f64> {
    let mut v = gauss_vec(rng, dim, 1.0);
    normalize(&mut v);
    v
}

impl VectorConfig {
    fn check(&self) -> Result<()> {
        if self.dim == 0 || self.instances == 0 || self.pool_size == 0 || self.clusters == 0 {
            return Err(Error::invalid(
                "vector simulation needs dim, instances, pool size and clusters ≥ 1",
            ));
        }
        if self.mean_positives.is_nan() || self.mean_positives < 1.0 {
            return Err(Error::invalid("mean positives must be at least 1"));
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
const FILES: [&str; 8] = [
    "queries.npy",
    "queries.ids.txt",
    "core.npy",
    "core.ids.txt",
    "gt.json",
    "pool.npy",
    "pool.ids.txt",
    "benchmark.json",
];

/// Generate the benchmark into `dir` (created if missing). The files are written to staging
/// paths and replaced together ([`atomic::Transaction`]): a kill never leaves the queries of
/// one run next to the pool of another.
pub fn write_vectors(cfg: &VectorConfig, dir: &Path) -> Result<VectorBenchmark> {
    cfg.check()?;
    std::fs::create_dir_all(dir).at(dir)?;
    let mut tx = atomic::Transaction::new(&[]);
    let slots: Vec<usize> = FILES
        .iter()
        .map(|f| tx.add_file(&dir.join(f)))
        .collect::<Result<_>>()?;
    let slot = |name: &str| slots[FILES.iter().position(|f| *f == name).expect("known file")];
    let d = cfg.dim;
    let mut g = rng(cfg.seed, 0, 0);
    let centres: Vec<Vec<f64>> = (0..cfg.instances).map(|_| unit(&mut g, d)).collect();
    let extra = Poisson::new(cfg.mean_positives - 1.0 + 1e-12).expect("valid mean");
    let (mut core_ids, mut core_vecs) = (Vec::new(), Vec::new());
    let mut inst_pos: Vec<Vec<String>> = Vec::new();
    let [lo, hi] = cfg.positive_spread;
    for (i, c) in centres.iter().enumerate() {
        let n = 1 + extra.sample(&mut g) as usize;
        let mut ids = Vec::new();
        for j in 0..n {
            let rho = (lo.ln() + (hi.ln() - lo.ln()) * g.random::<f64>()).exp();
            core_vecs.push(around(&mut g, c, rho));
            let id = format!("inst{i:04}/pos{j:02}");
            core_ids.push(id.clone());
            ids.push(id);
        }
        inst_pos.push(ids);
    }
    let mut per_inst = vec![1usize; cfg.instances];
    for _ in 0..cfg.extra_queries {
        per_inst[g.random_range(0..cfg.instances)] += 1;
    }
    let (mut q_ids, mut q_vecs) = (Vec::new(), Vec::new());
    let mut gt: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, &nq) in per_inst.iter().enumerate() {
        for r in 0..nq {
            let id = format!("inst{i:04}/query{r}");
            q_vecs.push(around(&mut g, &centres[i], cfg.query_spread));
            gt.insert(id.clone(), inst_pos[i].clone());
            q_ids.push(id);
        }
    }
    let cluster_centres: Vec<Vec<f64>> = (0..cfg.clusters)
        .map(|_| {
            if g.random::<f64>() < cfg.near_share {
                let i = g.random_range(0..cfg.instances);
                around(&mut g, &centres[i], cfg.near_spread)
            } else {
                unit(&mut g, d)
            }
        })
        .collect();

    tx.write(slot("queries.npy"), |p| {
        write_matrix(p, &q_vecs, d, cfg.dtype)
    })?;
    tx.write(slot("queries.ids.txt"), |p| {
        write_id_file(p, q_ids.iter().cloned())
    })?;
    tx.write(slot("core.npy"), |p| {
        write_matrix(p, &core_vecs, d, cfg.dtype)
    })?;
    tx.write(slot("core.ids.txt"), |p| {
        write_id_file(p, core_ids.iter().cloned())
    })?;
    let gt_path = dir.join("gt.json");
    let gt_bytes = serde_json::to_vec_pretty(&gt)
        .map_err(|e| Error::file(&gt_path, format!("cannot serialise ground truth: {e}")))?;
    tx.write(slot("gt.json"), |p| atomic::write_bytes(p, &gt_bytes))?;

    // Pool: chunks generated in parallel (one generator per chunk), streamed to disk.
    let pool_path = dir.join("pool.npy");
    const CHUNK: u64 = 1 << 15;
    let n_chunks = cfg.pool_size.div_ceil(CHUNK);
    let header = npy_header_bytes(cfg.pool_size as usize, d, cfg.dtype);
    tx.write(slot("pool.npy"), |staged| {
        atomic::write_file(staged, |w| {
            w.write_all(&header).at(&pool_path)?;
            let batch = 16u64;
            let mut c0 = 0u64;
            while c0 < n_chunks {
                let c1 = (c0 + batch).min(n_chunks);
                let bufs: Vec<Vec<u8>> = (c0..c1)
                    .into_par_iter()
                    .map(|c| {
                        let mut r = rng(cfg.seed, 1, c);
                        let rows = (cfg.pool_size - c * CHUNK).min(CHUNK);
                        let mut out = Vec::with_capacity(rows as usize * d * 4);
                        for _ in 0..rows {
                            let k = r.random_range(0..cfg.clusters);
                            let v = around(&mut r, &cluster_centres[k], cfg.pool_spread);
                            for x in v {
                                match cfg.dtype {
                                    Dtype::F16 => out
                                        .extend_from_slice(&f16::from_f32(x as f32).to_le_bytes()),
                                    Dtype::F32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
                                }
                            }
                        }
                        out
                    })
                    .collect();
                for b in bufs {
                    w.write_all(&b).at(&pool_path)?;
                }
                c0 = c1;
            }
            Ok(())
        })
    })?;
    tx.write(slot("pool.ids.txt"), |p| {
        write_id_file(p, (0..cfg.pool_size).map(pool_id))
    })?;
    let bench = VectorBenchmark {
        config: cfg.clone(),
        queries: q_ids.len(),
        core: core_ids.len(),
        pool: cfg.pool_size,
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
        .map_err(|e| Error::file(&meta, format!("cannot serialise: {e}")))?;
    tx.write(slot("benchmark.json"), |p| atomic::write_bytes(p, &bytes))?;
    tx.commit()?;
    Ok(bench)
}
