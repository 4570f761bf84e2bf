//! Web-pool geometries for vector-level families at N = 10⁸ (docs/reference/validation.md, "Web
//! families at 10⁸"): the pool is never stored; row `r` is drawn from its own generator
//! `(seed, 201, r)` ([`WebLayout::fill_rows`]), so its bits do not depend on batching, on the
//! thread count or on which other rows are drawn.
//!
//! Vectors live in a *semantic space* `w` and are embedded as `v = norm(w)` on the sphere, or
//! `v = norm(μ + amp·(w − (w·μ)μ))` in a CLIP-like cone (`cone_amp > 0`). Noise is
//! `s ⊙ g`, `g ~ N(0, I/dim)`, with the power-law spectrum `s_d ∝ (d+1)^(−decay)` normalised
//! to `Σ s_d² = dim` (`decay = 0`: isotropic), on every draw (centres, instances, positives,
//! queries, pool rows).
//!
//! - **Clusters**: `clusters` centres `t_k = norm(s ⊙ g)` (cone: orthogonal to μ) with Zipf
//!   weights `∝ (k+1)^(−zipf)`; cluster `k` has its own spread `σ_k`, log-uniform on
//!   `cluster_spread`. A background row picks `k` by weight and is `embed(t_k + σ_k·s⊙g)`.
//! - **Instances** pick a cluster by the same weights: centre `c_i = norm(t_k +
//!   instance_spread·s⊙g)`; positives `embed(c_i + ρ·s⊙g)`, ρ log-uniform on
//!   `positive_spread`; queries `embed(c_i + query_spread·s⊙g)`.
//! - **Bursts** (a share `burst_share` of the instances): one point `p = embed(c_i + ρ·s⊙g)`,
//!   ρ log-uniform on `burst_offset`, copied `n` times as `norm(p + copy_noise·g)`, `n`
//!   log-uniform on `burst_size` (rounded).
//! - **Hubs**: `hubs` points `embed(hub_spread·s⊙g)` (near the cone's axis, close to every
//!   query), each copied `n` times, `n` log-uniform on `hub_copies`.
//!
//! Copies sit at seeded distinct rows. When all copies together would exceed a quarter of the
//! pool (small test pools), every copy count is scaled by the same factor to fit.

use crate::error::{Error, Result};
use crate::numerics::{rng_for, StreamSeeding};
use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// Generator tag of pool row `r` (`rng_for(StreamSeeding::Nested, seed, ROW_TAG, r)`).
const ROW_TAG: u64 = 201;
/// Generator tag of the layout (everything but the background rows).
const LAYOUT_TAG: u64 = 200;

/// Parameters of a web-pool geometry (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebConfig {
    pub seed: u64,
    pub dim: usize,
    pub pool_size: u64,
    pub instances: usize,
    /// Extra queries (a second query of a random instance), beyond one per instance.
    pub extra_queries: usize,
    /// Each instance has `1 + Poisson(mean_positives − 1)` positives.
    pub mean_positives: f64,
    pub positive_spread: [f64; 2],
    pub query_spread: f64,
    pub instance_spread: f64,
    /// 0: sphere; > 0: CLIP-like cone of this amplitude.
    pub cone_amp: f64,
    /// Spectrum decay (0: isotropic).
    pub decay: f64,
    pub clusters: usize,
    /// Zipf exponent of the cluster weights.
    pub zipf: f64,
    pub cluster_spread: [f64; 2],
    pub burst_share: f64,
    pub burst_size: [f64; 2],
    pub burst_offset: [f64; 2],
    pub hubs: usize,
    pub hub_copies: [f64; 2],
    pub hub_spread: f64,
    pub copy_noise: f64,
}

impl WebConfig {
    /// Check the parameters (an error names the first one that is wrong).
    pub fn check(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::option(format!("web geometry: {what}")));
        if self.dim == 0 || self.instances == 0 || self.pool_size == 0 || self.clusters == 0 {
            return bad("needs dim, instances, pool size and clusters ≥ 1");
        }
        if self.pool_size > u32::MAX as u64 {
            return bad(
                "pool size above 4,294,967,295 rows (2^32 − 1: one pool source of the scan)",
            );
        }
        if !(self.mean_positives >= 1.0 && self.mean_positives.is_finite()) {
            return bad("mean positives must be at least 1");
        }
        let range_ok =
            |[lo, hi]: [f64; 2]| lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi;
        let ranges = [
            ("positive spread", self.positive_spread),
            ("cluster spread", self.cluster_spread),
            ("burst size", self.burst_size),
            ("burst offset", self.burst_offset),
            ("hub copies", self.hub_copies),
        ];
        if let Some((name, _)) = ranges.iter().find(|(_, r)| !range_ok(*r)) {
            return bad(&format!("{name} must be a range 0 < lo ≤ hi"));
        }
        let scalars = [
            self.query_spread,
            self.instance_spread,
            self.cone_amp,
            self.decay,
            self.zipf,
            self.hub_spread,
            self.copy_noise,
        ];
        if !scalars.iter().all(|x| x.is_finite() && *x >= 0.0) {
            return bad("spreads, amplitude, decay and Zipf exponent must be finite and ≥ 0");
        }
        if !(0.0..=1.0).contains(&self.burst_share) {
            return bad("burst share must be in [0, 1]");
        }
        Ok(())
    }
}

/// Walker's alias table: draws `k` with probability `w_k / Σw` from two uniforms.
struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    fn new(w: &[f64]) -> Alias {
        let n = w.len();
        let total: f64 = w.iter().sum();
        let mut p: Vec<f64> = w.iter().map(|x| x * n as f64 / total).collect();
        let mut alias = vec![0u32; n];
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| p[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s] = l as u32;
            p[l] -= 1.0 - p[s];
            if p[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        for i in large.into_iter().chain(small) {
            p[i] = 1.0;
        }
        Alias { prob: p, alias }
    }

    fn sample(&self, g: &mut Xoshiro256PlusPlus) -> usize {
        let k = g.random_range(0..self.prob.len());
        if g.random::<f64>() < self.prob[k] {
            k
        } else {
            self.alias[k] as usize
        }
    }
}

fn log_uniform(g: &mut Xoshiro256PlusPlus, [lo, hi]: [f64; 2]) -> f64 {
    (lo.ln() + (hi.ln() - lo.ln()) * g.random::<f64>()).exp()
}

fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        let inv = 1.0 / n;
        v.iter_mut().for_each(|x| *x *= inv);
    }
}

/// The layout of a web pool: queries, positives, ground truth, and the rule for every pool row.
pub struct WebLayout {
    pub config: WebConfig,
    pub query_ids: Vec<String>,
    /// Row-major `queries × dim`, unit rows.
    pub queries: Vec<f32>,
    pub core_ids: Vec<String>,
    /// Row-major `core × dim`, unit rows.
    pub core: Vec<f32>,
    pub gt: BTreeMap<String, Vec<String>>,
    /// Cone axis μ (None on the sphere).
    mu: Option<Vec<f32>>,
    /// Spectrum `s` (all 1 when isotropic), pre-divided by `√dim`.
    noise_scale: Vec<f32>,
    /// Cluster centres `t_k`, row-major.
    centres: Vec<f32>,
    spreads: Vec<f32>,
    weights: Alias,
    /// Copy rows, sorted by row: (row, point).
    pub special: Vec<(u64, u32)>,
    /// Copy points (unit) and, for bursts, their instance.
    points: Vec<Vec<f32>>,
    pub point_instance: Vec<Option<usize>>,
}

impl WebLayout {
    /// Build the layout of `cfg` (checked here).
    pub fn new(cfg: &WebConfig) -> Result<WebLayout> {
        cfg.check()?;
        let d = cfg.dim;
        let mut g = rng_for(StreamSeeding::Nested, cfg.seed, LAYOUT_TAG, 0);
        let raw: Vec<f64> = (0..d).map(|k| ((k + 1) as f64).powf(-cfg.decay)).collect();
        let rms = (raw.iter().map(|x| x * x).sum::<f64>() / d as f64).sqrt();
        let noise_scale: Vec<f32> = raw
            .iter()
            .map(|x| (x / rms / (d as f64).sqrt()) as f32)
            .collect();
        let mu = (cfg.cone_amp > 0.0).then(|| {
            let mut m: Vec<f32> = (0..d).map(|_| gauss(&mut g)).collect();
            normalize(&mut m);
            m
        });
        let mut layout = WebLayout {
            config: cfg.clone(),
            query_ids: Vec::new(),
            queries: Vec::new(),
            core_ids: Vec::new(),
            core: Vec::new(),
            gt: BTreeMap::new(),
            mu,
            noise_scale,
            centres: Vec::with_capacity(cfg.clusters * d),
            spreads: Vec::with_capacity(cfg.clusters),
            weights: Alias::new(
                &(0..cfg.clusters)
                    .map(|k| ((k + 1) as f64).powf(-cfg.zipf))
                    .collect::<Vec<_>>(),
            ),
            special: Vec::new(),
            points: Vec::new(),
            point_instance: Vec::new(),
        };
        let zero = vec![0f32; d];
        for _ in 0..cfg.clusters {
            let mut t = layout.noisy(&mut g, &zero, 1.0);
            layout.orth(&mut t);
            normalize(&mut t);
            layout.centres.extend_from_slice(&t);
            layout
                .spreads
                .push(log_uniform(&mut g, cfg.cluster_spread) as f32);
        }
        layout.instances(&mut g)?;
        layout.copies(&mut g);
        Ok(layout)
    }

    /// `x + spread·s⊙g`.
    fn noisy(&self, g: &mut Xoshiro256PlusPlus, x: &[f32], spread: f32) -> Vec<f32> {
        x.iter()
            .zip(&self.noise_scale)
            .map(|(&c, &s)| c + spread * s * gauss(g))
            .collect()
    }

    /// Remove the component along μ (cone only).
    fn orth(&self, w: &mut [f32]) {
        if let Some(mu) = &self.mu {
            let p: f32 = mu.iter().zip(w.iter()).map(|(a, b)| a * b).sum();
            w.iter_mut().zip(mu).for_each(|(x, m)| *x -= p * m);
        }
    }

    /// `embed(w)` in place (module docs).
    fn embed(&self, w: &mut [f32]) {
        if let Some(mu) = &self.mu {
            self.orth(w);
            let amp = self.config.cone_amp as f32;
            w.iter_mut().zip(mu).for_each(|(x, m)| *x = m + amp * *x);
        }
        normalize(w);
    }

    fn centre(&self, k: usize) -> &[f32] {
        let d = self.config.dim;
        &self.centres[k * d..(k + 1) * d]
    }

    /// Instances: centres, positives (the core), queries and the ground truth.
    fn instances(&mut self, g: &mut Xoshiro256PlusPlus) -> Result<()> {
        let cfg = self.config.clone();
        let extra = rand_distr::Poisson::new(cfg.mean_positives - 1.0 + 1e-12)
            .map_err(|e| Error::option(format!("mean positives: {e}")))?;
        let mut centres = Vec::with_capacity(cfg.instances);
        let mut positives: Vec<Vec<String>> = Vec::new();
        for i in 0..cfg.instances {
            let k = self.weights.sample(g);
            let mut c = self.noisy(g, self.centre(k), cfg.instance_spread as f32);
            normalize(&mut c);
            let n = 1 + extra.sample(g) as usize;
            let mut ids = Vec::with_capacity(n);
            for j in 0..n {
                let rho = log_uniform(g, cfg.positive_spread) as f32;
                let mut p = self.noisy(g, &c, rho);
                self.embed(&mut p);
                self.core.extend_from_slice(&p);
                let id = format!("inst{i:04}/pos{j:02}");
                self.core_ids.push(id.clone());
                ids.push(id);
            }
            positives.push(ids);
            centres.push(c);
        }
        let mut per_instance = vec![1usize; cfg.instances];
        for _ in 0..cfg.extra_queries {
            per_instance[g.random_range(0..cfg.instances)] += 1;
        }
        for (i, &nq) in per_instance.iter().enumerate() {
            for r in 0..nq {
                let id = format!("inst{i:04}/query{r}");
                let mut q = self.noisy(g, &centres[i], cfg.query_spread as f32);
                self.embed(&mut q);
                self.queries.extend_from_slice(&q);
                self.gt.insert(id.clone(), positives[i].clone());
                self.query_ids.push(id);
            }
        }
        self.burst_points(g, &centres);
        Ok(())
    }

    fn burst_points(&mut self, g: &mut Xoshiro256PlusPlus, centres: &[Vec<f32>]) {
        for (i, c) in centres.iter().enumerate() {
            if g.random::<f64>() < self.config.burst_share {
                let rho = log_uniform(g, self.config.burst_offset) as f32;
                let mut p = self.noisy(g, c, rho);
                self.embed(&mut p);
                self.points.push(p);
                self.point_instance.push(Some(i));
            }
        }
        let zero = vec![0f32; self.config.dim];
        for _ in 0..self.config.hubs {
            let mut p = self.noisy(g, &zero, self.config.hub_spread as f32);
            self.embed(&mut p);
            self.points.push(p);
            self.point_instance.push(None);
        }
    }

    /// Copy counts of the points, scaled to fit in a quarter of the pool, placed at seeded
    /// distinct rows.
    fn copies(&mut self, g: &mut Xoshiro256PlusPlus) {
        let cfg = &self.config;
        let wanted: Vec<f64> = self
            .point_instance
            .iter()
            .map(|inst| {
                let range = if inst.is_some() {
                    cfg.burst_size
                } else {
                    cfg.hub_copies
                };
                log_uniform(g, range).round().max(1.0)
            })
            .collect();
        let total: f64 = wanted.iter().sum();
        let room = (cfg.pool_size / 4) as f64;
        let scale = if total > room { room / total } else { 1.0 };
        let mut taken = HashSet::new();
        for (p, w) in wanted.iter().enumerate() {
            let n = (w * scale).floor().max(1.0) as u64;
            let mut placed = 0;
            while placed < n && (taken.len() as u64) < cfg.pool_size / 2 {
                let r = g.random_range(0..cfg.pool_size);
                if taken.insert(r) {
                    self.special.push((r, p as u32));
                    placed += 1;
                }
            }
        }
        self.special.sort_unstable();
    }

    /// Draw pool rows `start .. start + out.len() / dim` into `out` (unit rows, row-major).
    pub fn fill_rows(&self, start: u64, out: &mut [f32]) {
        let d = self.config.dim;
        let mut next = self.special.partition_point(|&(r, _)| r < start);
        for (i, row) in out.chunks_exact_mut(d).enumerate() {
            let r = start + i as u64;
            let mut g = rng_for(StreamSeeding::Nested, self.config.seed, ROW_TAG, r);
            match self.special.get(next) {
                Some(&(sr, p)) if sr == r => {
                    next += 1;
                    let noise = self.config.copy_noise as f32 / (d as f32).sqrt();
                    for (x, &c) in row.iter_mut().zip(&self.points[p as usize]) {
                        *x = c + noise * gauss(&mut g);
                    }
                    normalize(row);
                }
                _ => {
                    let k = self.weights.sample(&mut g);
                    let (t, s) = (self.centre(k), self.spreads[k]);
                    for ((x, &c), &sc) in row.iter_mut().zip(t).zip(&self.noise_scale) {
                        *x = c + s * sc * gauss(&mut g);
                    }
                    self.embed(row);
                }
            }
        }
    }

    /// Pool rows that are burst or hub copies.
    pub fn copy_rows(&self) -> u64 {
        self.special.len() as u64
    }
}

#[inline]
fn gauss(g: &mut Xoshiro256PlusPlus) -> f32 {
    let x: f64 = StandardNormal.sample(g);
    x as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The web families' shared configuration (its spreads and Zipf exponent), small, with
    /// bursts, hubs and a decaying spectrum, on a cone or the sphere.
    fn small(cone: bool) -> WebConfig {
        WebConfig {
            dim: 32,
            pool_size: 40_000,
            instances: 20,
            extra_queries: 3,
            mean_positives: 3.0,
            cone_amp: if cone { 0.6 } else { 0.0 },
            decay: 0.5,
            clusters: 300,
            burst_share: 0.5,
            burst_size: [1.0, 2000.0],
            burst_offset: [0.3, 1.0],
            hubs: 5,
            hub_copies: [1.0, 100.0],
            copy_noise: 0.03,
            ..crate::simulate::web_validation::base(5)
        }
    }

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// Rows are unit vectors and the same whatever range they are drawn in.
    #[test]
    fn rows_are_unit_and_independent_of_the_range() {
        for cone in [false, true] {
            let l = WebLayout::new(&small(cone)).unwrap();
            let d = l.config.dim;
            let mut all = vec![0f32; 1000 * d];
            l.fill_rows(0, &mut all);
            for row in all.chunks_exact(d) {
                assert!((dot(row, row) - 1.0).abs() < 1e-5);
            }
            let mut part = vec![0f32; 7 * d];
            l.fill_rows(311, &mut part);
            assert_eq!(part, all[311 * d..318 * d]);
        }
    }

    /// Copies of one point are near-identical; burst sizes span 1 to hundreds; Zipf weights
    /// make cluster 0 the most drawn by far.
    #[test]
    fn copies_and_zipf_clusters() {
        let l = WebLayout::new(&small(false)).unwrap();
        let d = l.config.dim;
        let mut per_point: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for &(r, p) in &l.special {
            per_point.entry(p).or_default().push(r);
        }
        let sizes: Vec<usize> = per_point.values().map(|v| v.len()).collect();
        assert!(
            sizes.iter().any(|&n| n <= 10) && sizes.iter().any(|&n| n >= 100),
            "{sizes:?}"
        );
        assert!(l.copy_rows() <= l.config.pool_size / 4 + l.points.len() as u64);
        for rows in per_point.values() {
            let mut a = vec![0f32; d];
            let mut b = vec![0f32; d];
            l.fill_rows(rows[0], &mut a);
            l.fill_rows(*rows.last().unwrap(), &mut b);
            assert!(dot(&a, &b) > 0.99);
        }
        let mut counts = vec![0usize; l.config.clusters];
        let mut g = rng_for(StreamSeeding::Nested, 1, 2, 3);
        for _ in 0..100_000 {
            counts[l.weights.sample(&mut g)] += 1;
        }
        // Zipf(1) over 300 clusters: P(0) = 1/H_300 ≈ 0.159, P(9) ≈ 0.0159.
        assert!(
            (counts[0] as f64 / 1e5 - 0.159).abs() < 0.01,
            "{}",
            counts[0]
        );
        assert!(
            (counts[9] as f64 / 1e5 - 0.0159).abs() < 0.003,
            "{}",
            counts[9]
        );
    }

    #[test]
    fn bad_configs_are_errors() {
        let mut c = small(false);
        c.burst_size = [10.0, 1.0];
        assert!(WebLayout::new(&c).is_err());
        let mut c = small(true);
        c.pool_size = 0;
        assert!(WebLayout::new(&c).is_err());
    }
}
