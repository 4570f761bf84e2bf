//! Discrete pool items beside a query's continuous score law (docs/reference/validation.md, "The
//! validation corpus"): **near-duplicate bursts** (B copies of one image at one score, or
//! jittered around it) and **hubs** (pool items that score high for many queries, shared
//! across queries).
//!
//! Every discrete item is one pool item with its own hash. Given the hash cells of the sample
//! (sizes `n_c`), the items of a group sit in a uniformly random subset of the pool, so their
//! numbers per cell are a multivariate hypergeometric draw (each item takes a uniformly random
//! free slot in turn); inside its cell an item's relative hash is
//! uniform on the cell. The full pool holds every item; the nested truth pools between S and
//! N hold the unsampled ones whose position (uniform on `[S, N)`) lies below their size.
//!
//! - Hubs are placed **once** for all queries (one hash per hub): a hub in the sample is in it
//!   for every query, at every level and shard that holds its cell.
//! - For a query `q`, hub `h` is *active* with probability `reach_h` (log-uniform per hub); an
//!   active hub scores `F̄_q⁻¹(p)`, `log10 p` uniform on `depth_log10`; an inactive hub is an
//!   ordinary item of the query's law. So the continuous part of cell `c` holds
//!   `n_c − (active hubs in c) − (burst copies in c)` i.i.d. items.
//! - A burst (probability `share` per query) has `B` copies (uniform on `copies`) at
//!   `s_b = F̄_q⁻¹(p)`, all bitwise identical (probability `identical_share`) or `s_b + sd·Z`;
//!   its copies are placed like hubs, among the pool items that are not hubs.
//! - A rare component (probability `share` per query) gives the query `Poisson(rate/share)`
//!   items in the full pool, each above every one of its positives (`s_max + δ`, δ uniform on
//!   `above`), placed like burst copies: `rate` items per query on average however they
//!   spread. With `share = 1` and `share < 1` at one `rate` it is the pair of pools of the
//!   spread bound (docs/reference/predict.md, "What no estimator can know").
//! - No discrete item is bitwise equal to a positive's score (it is moved one f32 step down),
//!   so the positives have no pool ties; copies of a burst do tie with each other.
//!
//! The true hardness of positive `j` is then `x_j = ((N − A)·F̄(s_j) + #{discrete > s_j})/N`
//! (`A` the query's active discrete items).

use super::families::{log_uniform, uniform};
use super::law::ScoreLaw;
use crate::numerics::{rng_for, StreamSeeding};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Poisson, StandardNormal};
use serde::{Deserialize, Serialize};

/// Near-duplicate bursts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BurstModel {
    /// Share of queries with a burst.
    pub share: f64,
    /// Number of copies B in the full pool (uniform integer on `[lo, hi]`).
    pub copies: [u64; 2],
    /// `log10 F̄(s_b)`: how deep in the query's law the burst sits.
    pub depth_log10: [f64; 2],
    /// Share of bursts whose copies are bitwise identical.
    pub identical_share: f64,
    /// Standard deviation of the score jitter of the other bursts.
    pub jitter: f64,
}

/// Hubs shared across queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubModel {
    /// Number of hubs H in the pool.
    pub count: usize,
    /// Per hub, the probability of being active for a query (log-uniform on the range).
    pub reach: [f64; 2],
    /// `log10 F̄_q(s)` of an active hub's score for query q.
    pub depth_log10: [f64; 2],
}

/// Rare items above every positive of a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RareModel {
    /// π: share of queries that hold rare items.
    pub share: f64,
    /// λ: rare items per query in the full pool, on average over all queries.
    pub rate: f64,
    /// δ of a rare item's score `s_max + δ` over the query's top positive, uniform on `[lo, hi]`.
    pub above: [f64; 2],
}

/// One discrete item of a query, as the truth records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscreteItem {
    pub score: f32,
    /// Relative hash inside the level-0 sample, in `[0, 1)` (level ℓ holds `< 2^−ℓ`, shard h of
    /// H holds `[h/H, (h+1)/H)`); `None` when the item is not in the sample.
    pub hash: Option<f64>,
    /// The hub's index, `None` for a burst copy.
    pub hub: Option<u32>,
}

/// Where every hub sits (shared by all queries).
#[derive(Debug, Clone, Default)]
pub struct HubPlacement {
    pub reach: Vec<f64>,
    /// `(cell, relative hash)` of a sampled hub.
    pub sampled: Vec<Option<(usize, f64)>>,
    /// Position in `[S, N)` of an unsampled hub (the nested truth pools).
    pub position: Vec<u64>,
}

/// A query's discrete item during simulation.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub score: f32,
    pub cell: Option<usize>,
    pub hash: Option<f64>,
    pub position: u64,
    pub hub: Option<u32>,
}

/// Multivariate hypergeometric split of `k` marked items among the cells (`sizes`) of a
/// population of `total`, the rest outside every cell: item by item, each takes a uniformly
/// random free slot of the population (cell `c` with probability `free_c / free_total`).
fn split<R: Rng + ?Sized>(rng: &mut R, total: u64, k: u64, sizes: &[u64]) -> Vec<u64> {
    let mut free: Vec<u64> = sizes.to_vec();
    let mut free_total = total;
    let mut out = vec![0u64; sizes.len()];
    for _ in 0..k.min(total) {
        let mut r = rng.random_range(0..free_total);
        for (c, f) in free.iter_mut().enumerate() {
            if r < *f {
                *f -= 1;
                out[c] += 1;
                break;
            }
            r -= *f;
        }
        free_total -= 1;
    }
    out
}

/// Place `per_cell[c]` items in each cell and the rest outside the sample: `(cell, hash)` or a
/// position in `[s_total, pool)`, in item order.
fn place<R: Rng + ?Sized>(
    rng: &mut R,
    items: usize,
    per_cell: &[u64],
    bounds: &[f64],
    s_total: u64,
    pool: u64,
) -> Vec<(Option<(usize, f64)>, u64)> {
    let mut out = Vec::with_capacity(items);
    for (c, &n) in per_cell.iter().enumerate() {
        for _ in 0..n {
            let h = uniform(rng, [bounds[c], bounds[c + 1]]).min(bounds[c + 1] - 1e-15);
            out.push((Some((c, h)), 0));
        }
    }
    while out.len() < items {
        let span = pool.saturating_sub(s_total).max(1);
        out.push((None, s_total + rng.random_range(0..span)));
    }
    out
}

impl HubPlacement {
    /// Place the hubs of `model` (seeded by `seed` alone, so every query sees the same hubs).
    pub fn new(
        model: Option<&HubModel>,
        seed: u64,
        cell_sizes: &[u64],
        bounds: &[f64],
        s_total: u64,
        pool: u64,
    ) -> HubPlacement {
        let Some(m) = model else {
            return HubPlacement::default();
        };
        let mut rng = rng_for(StreamSeeding::Nested, seed, 3, 0);
        let h = (m.count as u64).min(pool) as usize;
        let reach: Vec<f64> = (0..h).map(|_| log_uniform(&mut rng, m.reach)).collect();
        let per_cell = split(&mut rng, pool, h as u64, cell_sizes);
        let mut placed = place(&mut rng, h, &per_cell, bounds, s_total, pool);
        // Which hub gets which slot: a uniform permutation.
        for i in (1..placed.len()).rev() {
            let j = rng.random_range(0..=i);
            placed.swap(i, j);
        }
        HubPlacement {
            reach,
            sampled: placed.iter().map(|p| p.0).collect(),
            position: placed.iter().map(|p| p.1).collect(),
        }
    }

    /// Hubs per cell (all hubs, active or not).
    pub fn per_cell(&self, cells: usize) -> Vec<u64> {
        let mut v = vec![0u64; cells];
        for (c, _) in self.sampled.iter().flatten() {
            v[*c] += 1;
        }
        v
    }
}

/// Everything a query needs to draw its discrete items.
pub struct DiscreteContext<'a> {
    pub bursts: Option<&'a BurstModel>,
    pub hubs: Option<&'a HubModel>,
    pub rare: Option<&'a RareModel>,
    pub placement: &'a HubPlacement,
    pub cell_sizes: &'a [u64],
    pub bounds: &'a [f64],
    pub s_total: u64,
    pub pool: u64,
}

/// The discrete items of query `qi` (its own generator, so the continuous draws of a query
/// without them are those of the presets), highest score first. `positive_scores` are moved
/// away from: an item equal to one is put one f32 step below.
pub fn draw_query_items(
    ctx: &DiscreteContext,
    seed: u64,
    qi: usize,
    law: &ScoreLaw,
    positive_scores: &[f32],
) -> Vec<Placed> {
    let mut rng: Xoshiro256PlusPlus = rng_for(StreamSeeding::Nested, seed, 4, qi as u64);
    let mut items = Vec::new();
    if let Some(h) = ctx.hubs {
        for (i, &reach) in ctx.placement.reach.iter().enumerate() {
            if rng.random::<f64>() >= reach {
                continue;
            }
            let p = 10f64.powf(uniform(&mut rng, h.depth_log10));
            let (cell, hash) = match ctx.placement.sampled[i] {
                Some((c, r)) => (Some(c), Some(r)),
                None => (None, None),
            };
            items.push(Placed {
                score: law.isf(p) as f32,
                cell,
                hash,
                position: ctx.placement.position[i],
                hub: Some(i as u32),
            });
        }
    }
    if let Some(b) = ctx.bursts {
        if rng.random::<f64>() < b.share {
            let copies = rng.random_range(b.copies[0]..=b.copies[1].max(b.copies[0]));
            let s_b = law.isf(10f64.powf(uniform(&mut rng, b.depth_log10)));
            let identical = rng.random::<f64>() < b.identical_share;
            for (slot, pos) in place_among_non_hubs(ctx, &mut rng, copies) {
                let s = if identical {
                    s_b
                } else {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    s_b + b.jitter * z
                };
                items.push(Placed::non_hub(s, slot, pos));
            }
        }
    }
    if let Some(r) = ctx.rare {
        if rng.random::<f64>() < r.share {
            let mean = r.rate / r.share;
            let count = Poisson::new(mean).map_or(0, |d| d.sample(&mut rng) as u64);
            let top = positive_scores
                .iter()
                .fold(f32::NEG_INFINITY, |a, &s| a.max(s)) as f64;
            for (slot, pos) in place_among_non_hubs(ctx, &mut rng, count) {
                let s = (top + uniform(&mut rng, r.above)).min(1.0);
                items.push(Placed::non_hub(s, slot, pos));
            }
        }
    }
    for it in &mut items {
        while positive_scores.contains(&it.score) {
            it.score = next_down(it.score);
        }
    }
    items.sort_by(|a, b| b.score.total_cmp(&a.score));
    items
}

/// `count` items placed among the pool items that are not hubs (`(cell, hash)` or a position
/// in `[S, N)`, as [`place`]): a multivariate hypergeometric split over the cells, then a
/// uniform hash inside each.
fn place_among_non_hubs<R: Rng + ?Sized>(
    ctx: &DiscreteContext,
    rng: &mut R,
    count: u64,
) -> Vec<(Option<(usize, f64)>, u64)> {
    let hubs_per_cell = ctx.placement.per_cell(ctx.cell_sizes.len());
    let free: Vec<u64> = ctx
        .cell_sizes
        .iter()
        .zip(&hubs_per_cell)
        .map(|(n, h)| n - h)
        .collect();
    let total = ctx.pool - ctx.placement.reach.len() as u64;
    let count = count.min(total);
    let per_cell = split(rng, total, count, &free);
    place(
        rng,
        count as usize,
        &per_cell,
        ctx.bounds,
        ctx.s_total,
        ctx.pool,
    )
}

/// The largest f32 below `v` (finite `v`).
fn next_down(v: f32) -> f32 {
    if v == 0.0 {
        -f32::from_bits(1)
    } else if v > 0.0 {
        f32::from_bits(v.to_bits() - 1)
    } else {
        f32::from_bits(v.to_bits() + 1)
    }
}

impl Placed {
    /// A burst copy or rare item at score `s`, placed by [`place_among_non_hubs`].
    fn non_hub(s: f64, slot: Option<(usize, f64)>, position: u64) -> Placed {
        Placed {
            score: s as f32,
            cell: slot.map(|x| x.0),
            hash: slot.map(|x| x.1),
            position,
            hub: None,
        }
    }

    /// As the truth records it.
    pub fn record(&self) -> DiscreteItem {
        DiscreteItem {
            score: self.score,
            hash: self.hash,
            hub: self.hub,
        }
    }
}
