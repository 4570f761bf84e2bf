//! The geometries of the vector-level simulator ([`super::vectors`]): where the instance centres,
//! the queries, the positives and the pool rows lie. All vectors are L2-normalised; noise is
//! `g ~ N(0, I/dim)` (so `|g| ≈ 1`).
//!
//! - [`Geometry::Clustered`]: instance centres uniform on the sphere; pool rows
//!   `norm(b_k + pool_spread·g)` around `clusters` background centres, a share `near_share` of
//!   them near an instance (`b_k = norm(c_i + near_spread·g)`).
//! - [`Geometry::Burst`]: the clustered layout with anisotropic pool noise — per-dimension scale
//!   `s_d ∝ (d+1)^(−decay)`, normalised to `Σ s_d² = dim`, so a few directions dominate — and
//!   background centres drawn from that spectrum; plus, for a share `burst_share` of the
//!   instances, a *burst*: `size ~ U{burst_size}` near-copies `norm(p + copy_noise·g)` of one
//!   point `p = norm(c_i + ρ·g)`, ρ log-uniform on `burst_offset`, placed at seeded pool rows.
//!   A query of such an instance has its top pool scores from one image's copies.
//! - [`Geometry::Cone`] (CLIP-like): every vector is `norm(μ + amp·w)` for one mean direction μ
//!   and a semantic part `w` orthogonal to μ in expectation; `topics` topic directions `t_k`
//!   drawn with Zipf weights `∝ 1/(k+1)`; an instance of topic k has `w_i = t_k +
//!   instance_spread·g`, its positives and queries `w_i + ρ·g`; a pool row of topic k has
//!   `w = t_k + pool_spread·g`. Unrelated vectors have cosine ≈ `1/(1 + 2·amp²)`, so all cosines
//!   sit in a narrow, high band. `hubs` hub points `w = hub_spread·g` (near the cone's centre,
//!   scoring high for every query) are written `hub_copies` times each (`copy_noise` apart).
//!
//! Pool row `r` is either *special* (a burst copy or a hub copy: drawn from its own generator
//! `(seed, 3, r)`) or background (drawn from the generator of its generation block,
//! [`GEN_BLOCK`] rows). Neither depends on how the rows are batched or on the thread count.

use crate::error::{Error, Result};
use crate::formats::descriptors::Dtype;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt};
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Pool rows per generator: background rows `[b·GEN_BLOCK, (b+1)·GEN_BLOCK)` come from the
/// generator `(seed, 1, b)`. Part of the output's definition (changing it changes the bytes).
pub const GEN_BLOCK: u64 = 4096;

/// Which geometry, with its own parameters (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Geometry {
    #[default]
    Clustered,
    Burst {
        /// Spectrum decay of the pool noise (`s_d ∝ (d+1)^(−decay)`).
        decay: f64,
        /// Share of instances with a burst.
        burst_share: f64,
        /// Copies per burst, uniform on `[lo, hi]`.
        burst_size: [usize; 2],
        /// Distance ρ of the burst point from the instance centre, log-uniform on `[lo, hi]`.
        burst_offset: [f64; 2],
        /// Noise of a copy around its burst point.
        copy_noise: f64,
    },
    Cone {
        /// Weight of the semantic part against the mean direction.
        amp: f64,
        topics: usize,
        instance_spread: f64,
        hubs: usize,
        hub_copies: usize,
        hub_spread: f64,
        copy_noise: f64,
    },
}

/// Geometry names accepted by [`Geometry::by_name`].
pub const GEOMETRIES: &[&str] = &["clustered", "burst", "cone"];

impl Geometry {
    /// The geometry `name` (one of [`GEOMETRIES`]) with its default parameters.
    pub fn by_name(name: &str) -> Result<Geometry> {
        Ok(match name {
            "clustered" => Geometry::Clustered,
            "burst" => Geometry::Burst {
                decay: 1.0,
                burst_share: 0.3,
                burst_size: [100, 400],
                burst_offset: [0.4, 1.2],
                copy_noise: 0.03,
            },
            "cone" => Geometry::Cone {
                amp: 0.6,
                topics: 100,
                instance_spread: 0.6,
                hubs: 20,
                hub_copies: 5,
                hub_spread: 0.2,
                copy_noise: 0.03,
            },
            _ => {
                return Err(Error::option(format!(
                    "unknown geometry {name:?} (known: {})",
                    GEOMETRIES.join(", ")
                )))
            }
        })
    }

    /// The geometry's name.
    pub fn name(&self) -> &'static str {
        match self {
            Geometry::Clustered => "clustered",
            Geometry::Burst { .. } => "burst",
            Geometry::Cone { .. } => "cone",
        }
    }

    /// Default descriptor dimension of the geometry (stated once here).
    pub fn default_dim(&self) -> usize {
        match self {
            Geometry::Clustered => 32,
            Geometry::Burst { .. } => 128,
            Geometry::Cone { .. } => 256,
        }
    }
}

pub(crate) fn rng(seed: u64, tag: u64, index: u64) -> Xoshiro256PlusPlus {
    crate::numerics::rng_for(
        crate::numerics::StreamSeeding::Nested,
        seed,
        100 + tag,
        index,
    )
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

pub(crate) fn normalize(v: &mut [f64]) {
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// `norm(centre + spread·g)`, with `g` scaled per dimension by `scales` when given.
fn around<R: Rng + ?Sized>(
    rng: &mut R,
    centre: &[f64],
    spread: f64,
    scales: Option<&[f64]>,
) -> Vec<f64> {
    let mut g = gauss_vec(rng, centre.len(), spread);
    if let Some(s) = scales {
        g.iter_mut().zip(s).for_each(|(x, s)| *x *= s);
    }
    let mut v: Vec<f64> = centre.iter().zip(g).map(|(c, e)| c + e).collect();
    normalize(&mut v);
    v
}

fn unit<R: Rng + ?Sized>(rng: &mut R, dim: usize) -> Vec<f64> {
    let mut v = gauss_vec(rng, dim, 1.0);
    normalize(&mut v);
    v
}

fn log_uniform<R: Rng + ?Sized>(rng: &mut R, [lo, hi]: [f64; 2]) -> f64 {
    (lo.ln() + (hi.ln() - lo.ln()) * rng.random::<f64>()).exp()
}

/// `μ + amp·w`, normalised (cone geometry).
fn on_cone(mu: &[f64], amp: f64, w: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = mu.iter().zip(w).map(|(m, x)| m + amp * x).collect();
    normalize(&mut v);
    v
}

/// How background pool rows are drawn.
enum Background {
    Clusters {
        centres: Vec<Vec<f64>>,
        spread: f64,
        scales: Option<Vec<f64>>,
    },
    Cone {
        mu: Vec<f64>,
        amp: f64,
        topics: Vec<Vec<f64>>,
        /// Cumulative Zipf weights of the topics (last = 1).
        cdf: Vec<f64>,
        spread: f64,
    },
}

/// Everything but the pool rows, and the rule that draws them.
pub(crate) struct Layout {
    pub query_ids: Vec<String>,
    pub queries: Vec<Vec<f64>>,
    pub core_ids: Vec<String>,
    pub core: Vec<Vec<f64>>,
    pub gt: BTreeMap<String, Vec<String>>,
    background: Background,
    /// Special pool rows: row → index into `points` (its copy is `norm(point + noise·g)`).
    pub special: BTreeMap<u64, u32>,
    pub points: Vec<(Vec<f64>, f64)>,
    /// Instance of each point (bursts) or None (hubs).
    #[cfg_attr(not(test), allow(dead_code))]
    pub point_instance: Vec<Option<usize>>,
}

fn zipf_cdf(n: usize) -> Vec<f64> {
    let w: Vec<f64> = (0..n).map(|k| 1.0 / (k + 1) as f64).collect();
    let total: f64 = w.iter().sum();
    let mut acc = 0.0;
    w.iter()
        .map(|x| {
            acc += x / total;
            acc
        })
        .collect()
}

fn pick(cdf: &[f64], u: f64) -> usize {
    cdf.partition_point(|&c| c < u).min(cdf.len() - 1)
}

/// Semantic part orthogonal to μ (the component along μ removed).
fn orth(mu: &[f64], mut w: Vec<f64>) -> Vec<f64> {
    let d: f64 = mu.iter().zip(&w).map(|(a, b)| a * b).sum();
    w.iter_mut().zip(mu).for_each(|(x, m)| *x -= d * m);
    w
}

/// The cone geometry's frame (module docs): mean direction μ, weight `amp` of the semantic
/// part, the topic directions `t_k` (orthogonal to μ), their cumulative Zipf weights and the
/// spread of an instance around its topic.
#[derive(Clone)]
struct ConeFrame {
    mu: Vec<f64>,
    amp: f64,
    topics: Vec<Vec<f64>>,
    cdf: Vec<f64>,
    instance_spread: f64,
}

impl ConeFrame {
    /// The frame of a cone `geometry`, drawn from `g` (μ, then the topics); `None` (no draw)
    /// for the other geometries.
    fn draw(geometry: &Geometry, g: &mut Xoshiro256PlusPlus, d: usize) -> Option<ConeFrame> {
        match geometry {
            Geometry::Cone {
                amp,
                topics,
                instance_spread,
                ..
            } => {
                let mu = unit(g, d);
                let t: Vec<Vec<f64>> = (0..*topics).map(|_| orth(&mu, unit(g, d))).collect();
                Some(ConeFrame {
                    mu,
                    amp: *amp,
                    topics: t,
                    cdf: zipf_cdf(*topics),
                    instance_spread: *instance_spread,
                })
            }
            _ => None,
        }
    }
}

/// The instance centres `c_i` (unit vectors on the sphere) or, with a cone frame, the
/// semantic parts `w_i = orth(t_k + instance_spread·g)` of topics `k` drawn by Zipf weight.
struct Instances {
    d: usize,
    centres: Vec<Vec<f64>>,
    cone: Option<ConeFrame>,
}

/// Ids and their vectors, in the same order.
type Labelled = (Vec<String>, Vec<Vec<f64>>);

/// The special points of the pool (bursts or hubs, module docs): each point with its copy
/// noise, its instance (bursts) or `None` (hubs), and its number of copies.
struct SpecialPoints {
    points: Vec<(Vec<f64>, f64)>,
    point_instance: Vec<Option<usize>>,
    copies: Vec<usize>,
}

impl Instances {
    /// `n` centres of dimension `d` drawn from `g`, in instance order.
    fn draw(n: usize, cone: Option<ConeFrame>, g: &mut Xoshiro256PlusPlus, d: usize) -> Self {
        let centres: Vec<Vec<f64>> = (0..n)
            .map(|_| match &cone {
                Some(c) => {
                    let k = pick(&c.cdf, g.random::<f64>());
                    let e = gauss_vec(g, d, c.instance_spread);
                    orth(
                        &c.mu,
                        c.topics[k].iter().zip(e).map(|(a, b)| a + b).collect(),
                    )
                }
                None => unit(g, d),
            })
            .collect();
        Instances { d, centres, cone }
    }

    /// A vector at distance `spread` from instance `i`: `norm(c_i + spread·g)`, or on the
    /// cone `norm(μ + amp·(w_i + spread·g))`.
    fn near(&self, g: &mut Xoshiro256PlusPlus, i: usize, spread: f64) -> Vec<f64> {
        match &self.cone {
            Some(c) => {
                let e = gauss_vec(g, self.d, spread);
                let w: Vec<f64> = self.centres[i].iter().zip(e).map(|(a, b)| a + b).collect();
                on_cone(&c.mu, c.amp, &w)
            }
            None => around(g, &self.centres[i], spread, None),
        }
    }

    /// The core: instance `i` has `1 + Poisson(mean_positives − 1)` positives
    /// `inst{i:04}/pos{j:02}`, each at a distance log-uniform on `positive_spread`. Returns
    /// the core ids and vectors (instance order) and each instance's positive ids.
    fn positives(
        &self,
        cfg: &VectorConfig,
        g: &mut Xoshiro256PlusPlus,
    ) -> Result<(Labelled, Vec<Vec<String>>)> {
        let extra = rand_distr::Poisson::new(cfg.mean_positives - 1.0 + 1e-12)
            .map_err(|e| Error::option(format!("mean positives: {e}")))?;
        let (mut core_ids, mut core) = (Vec::new(), Vec::new());
        let mut inst_pos: Vec<Vec<String>> = Vec::new();
        for i in 0..cfg.instances {
            let n = 1 + extra.sample(g) as usize;
            let mut ids = Vec::new();
            for j in 0..n {
                let rho = log_uniform(g, cfg.positive_spread);
                core.push(self.near(g, i, rho));
                let id = format!("inst{i:04}/pos{j:02}");
                core_ids.push(id.clone());
                ids.push(id);
            }
            inst_pos.push(ids);
        }
        Ok(((core_ids, core), inst_pos))
    }

    /// The queries: one per instance plus `extra_queries` on instances drawn uniformly,
    /// `inst{i:04}/query{r}` at distance `query_spread` (instance order), and the ground
    /// truth mapping each to its instance's positives `inst_pos[i]`.
    fn queries(
        &self,
        cfg: &VectorConfig,
        inst_pos: &[Vec<String>],
        g: &mut Xoshiro256PlusPlus,
    ) -> (Labelled, BTreeMap<String, Vec<String>>) {
        let mut per_inst = vec![1usize; cfg.instances];
        for _ in 0..cfg.extra_queries {
            per_inst[g.random_range(0..cfg.instances)] += 1;
        }
        let (mut query_ids, mut queries) = (Vec::new(), Vec::new());
        let mut gt = BTreeMap::new();
        for (i, &nq) in per_inst.iter().enumerate() {
            for r in 0..nq {
                let id = format!("inst{i:04}/query{r}");
                queries.push(self.near(g, i, cfg.query_spread));
                gt.insert(id.clone(), inst_pos[i].clone());
                query_ids.push(id);
            }
        }
        ((query_ids, queries), gt)
    }

    /// How background rows are drawn: around the cone's topics, or around `clusters`
    /// centres, a share `near_share` of them near an instance and (burst) the others drawn
    /// from the spectrum `s_d ∝ (d+1)^(−decay)` (normalised to `Σ s_d² = dim`) that also
    /// scales the pool noise.
    fn background(&self, cfg: &VectorConfig, g: &mut Xoshiro256PlusPlus) -> Background {
        let d = self.d;
        let scales = match &cfg.geometry {
            Geometry::Burst { decay, .. } => {
                let raw: Vec<f64> = (0..d).map(|k| ((k + 1) as f64).powf(-decay)).collect();
                let norm = (raw.iter().map(|x| x * x).sum::<f64>() / d as f64).sqrt();
                Some(raw.iter().map(|x| x / norm).collect::<Vec<f64>>())
            }
            _ => None,
        };
        match self.cone.clone() {
            Some(c) => Background::Cone {
                mu: c.mu,
                amp: c.amp,
                topics: c.topics,
                cdf: c.cdf,
                spread: cfg.pool_spread,
            },
            None => {
                let centres = (0..cfg.clusters)
                    .map(|_| {
                        if g.random::<f64>() < cfg.near_share {
                            let i = g.random_range(0..cfg.instances);
                            around(g, &self.centres[i], cfg.near_spread, None)
                        } else if let Some(s) = &scales {
                            // Background centres follow the spectrum too.
                            around(g, &vec![0.0; d], 1.0, Some(s))
                        } else {
                            unit(g, d)
                        }
                    })
                    .collect();
                Background::Clusters {
                    centres,
                    spread: cfg.pool_spread,
                    scales,
                }
            }
        }
    }

    /// The special points: none (clustered); for each instance with probability
    /// `burst_share`, a burst point at a distance log-uniform on `burst_offset` with
    /// `U{burst_size}` copies (burst); `hubs` hub points `on_cone(orth(hub_spread·g))` with
    /// `hub_copies` copies each (cone, whose `background` holds μ).
    fn special_points(
        &self,
        cfg: &VectorConfig,
        background: &Background,
        g: &mut Xoshiro256PlusPlus,
    ) -> SpecialPoints {
        let mut points: Vec<(Vec<f64>, f64)> = Vec::new();
        let mut point_instance = Vec::new();
        let mut copies: Vec<usize> = Vec::new();
        match &cfg.geometry {
            Geometry::Clustered => {}
            Geometry::Burst {
                burst_share,
                burst_size: [lo, hi],
                burst_offset,
                copy_noise,
                ..
            } => {
                for i in 0..cfg.instances {
                    if g.random::<f64>() < *burst_share {
                        let rho = log_uniform(g, *burst_offset);
                        points.push((self.near(g, i, rho), *copy_noise));
                        point_instance.push(Some(i));
                        copies.push(g.random_range(*lo..=*hi));
                    }
                }
            }
            Geometry::Cone {
                amp,
                hubs,
                hub_copies,
                hub_spread,
                copy_noise,
                ..
            } => {
                let Background::Cone { mu, .. } = background else {
                    unreachable!("cone geometry has a cone background")
                };
                for _ in 0..*hubs {
                    let w = orth(mu, gauss_vec(g, self.d, *hub_spread));
                    points.push((on_cone(mu, *amp, &w), *copy_noise));
                    point_instance.push(None);
                    copies.push(*hub_copies);
                }
            }
        }
        SpecialPoints {
            points,
            point_instance,
            copies,
        }
    }
}

/// Pool row → special point: `copies[p]` distinct rows of `0..pool_size` for each point `p`
/// in turn, drawn uniformly from `g` (a row already taken is drawn again). An error when the
/// copies exceed half the pool.
fn place_copies(
    copies: &[usize],
    pool_size: u64,
    g: &mut Xoshiro256PlusPlus,
) -> Result<BTreeMap<u64, u32>> {
    let total: u64 = copies.iter().map(|&c| c as u64).sum();
    if total > pool_size / 2 {
        return Err(Error::option(format!(
            "{total} burst or hub copies do not fit in a pool of {pool_size} rows (at most half)"
        )));
    }
    let mut special = BTreeMap::new();
    for (p, &c) in copies.iter().enumerate() {
        let mut placed = 0;
        while placed < c {
            let r = g.random_range(0..pool_size);
            if let std::collections::btree_map::Entry::Vacant(e) = special.entry(r) {
                e.insert(p as u32);
                placed += 1;
            }
        }
    }
    Ok(special)
}

impl Layout {
    /// Build the layout of `cfg` (checked by the caller). Every draw comes from one
    /// generator `(seed, 0, 0)`, in this order: the cone frame, the instance centres, the
    /// core, the queries, the background centres, the special points, their rows.
    pub fn new(cfg: &VectorConfig) -> Result<Layout> {
        let d = cfg.dim;
        let mut g = rng(cfg.seed, 0, 0);
        let cone = ConeFrame::draw(&cfg.geometry, &mut g, d);
        let instances = Instances::draw(cfg.instances, cone, &mut g, d);
        let ((core_ids, core), inst_pos) = instances.positives(cfg, &mut g)?;
        let ((query_ids, queries), gt) = instances.queries(cfg, &inst_pos, &mut g);
        let background = instances.background(cfg, &mut g);
        // Special rows: burst copies or hub copies.
        let specials = instances.special_points(cfg, &background, &mut g);
        let special = place_copies(&specials.copies, cfg.pool_size, &mut g)?;
        Ok(Layout {
            query_ids,
            queries,
            core_ids,
            core,
            gt,
            background,
            special,
            points: specials.points,
            point_instance: specials.point_instance,
        })
    }

    /// Pool row `r`; `block` is the generator of its generation block (module docs), used only
    /// for background rows.
    pub fn pool_row(&self, seed: u64, r: u64, block: &mut Xoshiro256PlusPlus) -> Vec<f64> {
        if let Some(&p) = self.special.get(&r) {
            let (point, noise) = &self.points[p as usize];
            return around(&mut rng(seed, 3, r), point, *noise, None);
        }
        match &self.background {
            Background::Clusters {
                centres,
                spread,
                scales,
            } => {
                let k = block.random_range(0..centres.len());
                around(block, &centres[k], *spread, scales.as_deref())
            }
            Background::Cone {
                mu,
                amp,
                topics,
                cdf,
                spread,
            } => {
                let k = pick(cdf, block.random::<f64>());
                let e = gauss_vec(block, mu.len(), *spread);
                let w: Vec<f64> = topics[k].iter().zip(e).map(|(a, b)| a + b).collect();
                on_cone(mu, *amp, &orth(mu, w))
            }
        }
    }
}

/// Parameters of the vector-level benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorConfig {
    pub seed: u64,
    #[serde(default)]
    pub geometry: Geometry,
    pub dim: usize,
    pub instances: usize,
    /// Each instance has `1 + Poisson(mean_positives − 1)` positives.
    pub mean_positives: f64,
    /// Extra queries (second query of a random instance), beyond one per instance.
    pub extra_queries: usize,
    /// Number of pool (distractor) rows.
    pub pool_size: u64,
    /// Background clusters (clustered and burst geometries).
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
            geometry: Geometry::Clustered,
            dim: Geometry::Clustered.default_dim(),
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

impl VectorConfig {
    /// The defaults with geometry `name` (its default parameters and dimension; the cone's
    /// spreads are in units of its semantic part).
    pub fn for_geometry(name: &str) -> Result<VectorConfig> {
        let geometry = Geometry::by_name(name)?;
        let mut c = VectorConfig {
            dim: geometry.default_dim(),
            geometry,
            ..VectorConfig::default()
        };
        if name == "cone" {
            c.positive_spread = [0.2, 1.2];
            c.query_spread = 0.4;
            c.pool_spread = 1.0;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests;
