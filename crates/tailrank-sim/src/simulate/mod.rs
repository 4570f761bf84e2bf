//! Simulators with known truth (docs/method.md §10).
//!
//! **Summary level** ([`simulate_summary`]): per query a pool score law with a bounded upper tail
//! ([`law`]), positives whose hardness `x` spans many decades ([`hardness_law`]), and then,
//! without ever drawing the `S` sample scores:
//!
//! - the sample is cut into hash *cells* (the elementary intervals between the level boundaries
//!   `f/2^ℓ` and the drift-shard boundaries `h·f/H`); cell sizes are a multinomial split of
//!   `S ~ Binomial(N, f)`, shared by all queries, and every level and shard is a union of cells,
//!   so levels are nested and shards disjoint by construction;
//! - within a cell (and mixture component) the exceedance probabilities `p = F̄(score)` of its
//!   `n` items are i.i.d. uniform; their order statistics are drawn lazily, largest score first,
//!   by Rényi's representation `p_(i) = 1 − exp(−Σ_{k≤i} E_k/(n − k + 1))`, `E_k ~ Exp(1)`, which
//!   is the exact law of the i-th smallest of `n` uniforms; the top-M of a subset merges its
//!   cells' streams, drawing only as far as needed;
//! - `K_{j,ℓ}` counts the drawn items of the subset scoring strictly above `s_j` (f32 scores, as a
//!   scan would) plus, per stream, the not-yet-drawn items above it, which are i.i.d. uniform on
//!   `(p_last, 1)`: conditional binomials taken over the positives in score order, so counts are
//!   jointly monotone in `j` and nested across levels;
//! - `C_j ~` the same construction over the `|core| − n_q` non-relevant core items with
//!   hardness `min(1, γ·x_j)` (core items are γ times as likely as pool items to outrank);
//! - the full pool's realized counts are `K_j^N = K_{j,0} + D_j`, `D_j` the count of the `N − S`
//!   non-sampled items above `s_j`, drawn sequentially over the positives:
//!   `D_j = D_{j−1} + Binomial(N − S − D_{j−1}, (x_j − x_{j−1})/(1 − x_{j−1}))`, and likewise
//!   for a nested sequence of larger pools (the truth curve).
//!
//! The truth is the realized exact mAP@k at `N`, `1/n Σ_{r_j ≤ k} j/r_j` with
//! `r_j = j + C_j + K_j^N` ([`crate::metric::ap_at_k_from_ranks`]), and at every nested level.
//!
//! The benchmark is defined by a [`SimConfig`] ([`config`]; the named families in [`corpus`]),
//! its known truth is a [`Truth`] ([`truth`]), and [`files`] writes both to a folder.
//!
//! **Vector level** ([`vectors`]): a clustered synthetic benchmark written as descriptor files.

pub mod config;
pub mod corpus;
pub mod corpus_report;
pub mod decompose;
pub mod discrete;
pub mod draws;
pub mod exam;
pub mod exam_checks;
pub mod families;
pub mod files;
pub mod hardness_law;
pub mod law;
pub mod order_stream;
pub mod request;
pub mod truth;
pub mod validation;
pub mod vector_geometry;
pub mod vector_validation;
pub mod vectors;
pub mod web_geometry;
pub mod web_pool;
pub mod web_validation;

use crate::error::Result;
use crate::metric::ap_at_k_from_ranks;
use crate::numerics::{rng_for, StreamSeeding};
use crate::sample::HashRange;
use crate::scan::config::shard_top_m;
use crate::summary::{
    PositiveSummary, QuerySummary, Subset, SubsetKind, Summary, SUMMARY_FORMAT_VERSION,
};
pub use config::SimConfig;
pub use discrete::{BurstModel, DiscreteItem, HubModel, RareModel};
use draws::binomial;
pub use draws::{joint_counts, renyi_step, smallest_uniforms};
use families::draw_law;
pub use families::{TailModel, WeightedModel};
pub use files::{simulate_to_dir, SimulationFiles};
pub use hardness_law::HardnessLaw;
pub use law::{Component, Family, ScoreLaw};
use order_stream::OrderStream;
use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;
use rand_distr::{Distribution, Poisson, StandardNormal};
use rayon::prelude::*;
pub use truth::{CurvePoint, LevelTruth, PositiveTruth, QueryTruth, Simulation, Truth};

/// The hash cells of the sample and the subsets built from them.
struct Layout {
    /// Cell boundaries on the relative hash axis `[0, 1)` of the level-0 sample.
    bounds: Vec<f64>,
    /// Cell sizes (sum = S).
    cell_sizes: Vec<u64>,
    /// Per subset: range of cell indices `[a, b)`.
    subset_cells: Vec<(usize, usize)>,
    subsets: Vec<Subset>,
    subset_sizes: Vec<u64>,
}

impl Layout {
    fn new(cfg: &SimConfig, rng: &mut Xoshiro256PlusPlus) -> Result<(Layout, u64)> {
        let f = cfg.fraction;
        let s_total = binomial(rng, cfg.pool_size, f).max(1);
        // Boundaries on the relative hash axis [0, 1) of the level-0 sample.
        let mut bounds: Vec<f64> = vec![0.0, 1.0];
        for l in 1..cfg.levels {
            bounds.push(0.5f64.powi(l as i32));
        }
        for h in 1..cfg.shards {
            bounds.push(h as f64 / cfg.shards as f64);
        }
        bounds.sort_by(|a, b| a.total_cmp(b));
        bounds.dedup_by(|a, b| (*a - *b).abs() < 1e-12);
        let ncell = bounds.len() - 1;
        // Multinomial split of S over the cells by sequential binomials.
        let mut cell_sizes = Vec::with_capacity(ncell);
        let (mut left, mut mass_left) = (s_total, 1.0f64);
        for c in 0..ncell {
            let w = bounds[c + 1] - bounds[c];
            let n = if c + 1 == ncell {
                left
            } else {
                binomial(rng, left, (w / mass_left).min(1.0))
            };
            cell_sizes.push(n);
            left -= n;
            mass_left -= w;
        }
        let find = |x: f64| {
            bounds
                .iter()
                .position(|b| (b - x).abs() < 1e-12)
                .expect("boundary present")
        };
        let full = HashRange::fraction(f)?;
        let mut subset_cells = Vec::new();
        let mut subsets = Vec::new();
        for l in 0..cfg.levels {
            let rel = 0.5f64.powi(l as i32);
            subset_cells.push((0, find(rel)));
            subsets.push(Subset {
                kind: SubsetKind::Level,
                fraction: f * rel,
                range: HashRange::fraction(f * rel)?,
                top_m: None,
            });
        }
        if cfg.shards > 0 {
            for (h, range) in full.split(cfg.shards as u64).into_iter().enumerate() {
                let a = find(h as f64 / cfg.shards as f64);
                let b = find((h + 1) as f64 / cfg.shards as f64);
                subset_cells.push((a, b));
                subsets.push(Subset {
                    kind: SubsetKind::Shard,
                    fraction: f / cfg.shards as f64,
                    range,
                    top_m: Some(shard_top_m(cfg.top_m, cfg.shards)),
                });
            }
        }
        let subset_sizes = subset_cells
            .iter()
            .map(|&(a, b)| cell_sizes[a..b].iter().sum())
            .collect();
        Ok((
            Layout {
                bounds,
                cell_sizes,
                subset_cells,
                subsets,
                subset_sizes,
            },
            s_total,
        ))
    }
}

/// Per-query plan fixed by the global structure.
struct QueryPlan {
    id: String,
    instance: usize,
    /// Positive ids and their instance-level latent normals.
    positives: Vec<(String, f64)>,
    core_nonrel: u64,
}

/// Global structure: instances, their positives, the queries.
fn plan_queries(cfg: &SimConfig) -> (Vec<QueryPlan>, u64) {
    let mut rng = rng_for(StreamSeeding::Nested, cfg.seed, 1, 0);
    let extra = Poisson::new(cfg.mean_positives - 1.0 + 1e-12).expect("valid mean");
    let mut inst_pos: Vec<Vec<(String, f64)>> = Vec::with_capacity(cfg.instances);
    for i in 0..cfg.instances {
        let n = 1 + extra.sample(&mut rng) as usize;
        inst_pos.push(
            (0..n)
                .map(|j| {
                    let g: f64 = StandardNormal.sample(&mut rng);
                    (format!("inst{i:04}/pos{j:02}"), g)
                })
                .collect(),
        );
    }
    let core_size: u64 = inst_pos.iter().map(|p| p.len() as u64).sum();
    // Query counts per instance: one each, then the rest to distinct random instances.
    let mut per_inst = vec![1usize; cfg.instances];
    let mut order: Vec<usize> = (0..cfg.instances).collect();
    let mut left = cfg.queries.saturating_sub(cfg.instances);
    while left > 0 {
        for i in (1..order.len()).rev() {
            let j = rng.random_range(0..=i);
            order.swap(i, j);
        }
        for &i in order.iter().take(left) {
            per_inst[i] += 1;
        }
        left = left.saturating_sub(order.len());
    }
    let mut plans = Vec::with_capacity(cfg.queries);
    'outer: for (i, &nq) in per_inst.iter().enumerate() {
        for r in 0..nq {
            if plans.len() == cfg.queries {
                break 'outer;
            }
            plans.push(QueryPlan {
                id: format!("inst{i:04}/query{r}"),
                instance: i,
                positives: inst_pos[i].clone(),
                core_nonrel: core_size - inst_pos[i].len() as u64,
            });
        }
    }
    (plans, core_size)
}

/// One simulated query: summary, truth, realized AP@k at each truth pool size.
type QueryResult = (QuerySummary, QueryTruth, Vec<f64>);

/// Simulate one query: its summary and its truth.
/// A positive of a simulated query: its id, its f32 score and its true hardness x.
struct Pos {
    id: String,
    s: f32,
    x: f64,
}

/// The streams of a query, one per (cell, component) in that order: the cell's continuous
/// items (`cell_sizes` less its discrete items) split over the law's components by a
/// multinomial (sequential binomials).
fn cell_streams(
    rng: &mut Xoshiro256PlusPlus,
    law: &ScoreLaw,
    cell_sizes: &[u64],
    items_per_cell: &[u64],
) -> Vec<OrderStream> {
    let ncomp = law.components.len();
    let mut streams: Vec<OrderStream> = Vec::new();
    for (&n_cell, &n_items) in cell_sizes.iter().zip(items_per_cell) {
        let (mut left, mut wleft) = (n_cell - n_items, 1.0f64);
        for (c, comp) in law.components.iter().enumerate() {
            let n = if c + 1 == ncomp {
                left
            } else {
                binomial(rng, left, (comp.weight / wleft).min(1.0))
            };
            left -= n;
            wleft -= comp.weight;
            streams.push(OrderStream::new(n, c));
        }
    }
    streams
}

/// The `kept` largest scores of streams `ids` (one subset's), merged largest first; each
/// stream draws its items lazily, only as far as the merge reaches.
fn merge_streams(
    rng: &mut Xoshiro256PlusPlus,
    law: &ScoreLaw,
    streams: &mut [OrderStream],
    ids: &[usize],
    kept: usize,
) -> Vec<f32> {
    let mut cursor = vec![0usize; ids.len()];
    // Cached head score of each stream (None once exhausted).
    let mut heads: Vec<Option<f32>> = ids
        .iter()
        .map(|&si| streams[si].score(0, rng, law))
        .collect();
    let mut top = Vec::with_capacity(kept);
    while top.len() < kept {
        let mut best: Option<(usize, f32)> = None;
        for (k, h) in heads.iter().enumerate() {
            if let Some(v) = *h {
                if best.is_none_or(|(_, bv)| v > bv) {
                    best = Some((k, v));
                }
            }
        }
        let Some((k, v)) = best else { break };
        top.push(v);
        cursor[k] += 1;
        let si = ids[k];
        heads[k] = streams[si].score(cursor[k], rng, law);
    }
    top
}

/// The summary rows of the positives: core counts and, per subset (its cells `subset_cells`),
/// the counts of its streams and of its discrete items above each positive.
fn positive_summaries(
    pos: &[Pos],
    core_above: &[u64],
    subset_cells: &[(usize, usize)],
    ncomp: usize,
    stream_counts: &[Vec<u64>],
    items: &[discrete::Placed],
) -> Vec<PositiveSummary> {
    pos.iter()
        .enumerate()
        .map(|(j, p)| PositiveSummary {
            core_ties: 0,
            pool_ties: Vec::new(),
            id: p.id.clone(),
            score: p.s,
            core_above: core_above[j],
            pool_above: subset_cells
                .iter()
                .map(|&(a, b)| {
                    let cont: u64 = (a * ncomp..b * ncomp).map(|si| stream_counts[si][j]).sum();
                    let disc = items
                        .iter()
                        .filter(|it| it.score > p.s && it.cell.is_some_and(|c| a <= c && c < b))
                        .count() as u64;
                    cont + disc
                })
                .collect(),
        })
        .collect()
}

/// Per stream, the items above each positive: its drawn items (f32 comparison, strict) plus
/// the not-yet-drawn ones, drawn jointly over the positives.
fn counts_above(
    rng: &mut Xoshiro256PlusPlus,
    law: &ScoreLaw,
    streams: &[OrderStream],
    pos: &[Pos],
) -> Vec<Vec<u64>> {
    let mut stream_counts: Vec<Vec<u64>> = Vec::with_capacity(streams.len());
    for st in streams {
        let rest = st.undrawn();
        let xc: Vec<f64> = pos
            .iter()
            .map(|p| law.components[st.component()].family.sf(p.s as f64))
            .collect();
        let undrawn = joint_counts(rng, rest, st.last_p(), &xc);
        stream_counts.push(
            pos.iter()
                .zip(undrawn)
                .map(|(p, u)| st.drawn_scores().partition_point(|&v| v > p.s) as u64 + u)
                .collect(),
        );
    }
    stream_counts
}

fn simulate_query(
    cfg: &SimConfig,
    layout: &Layout,
    s_total: u64,
    truth_sizes: &[u64],
    plan: &QueryPlan,
    qi: usize,
    disc: &discrete::DiscreteContext,
) -> QueryResult {
    let mut rng = rng_for(StreamSeeding::Nested, cfg.seed, 2, qi as u64);
    let law = draw_law(&mut rng, &cfg.tails);
    let ncomp = law.components.len();

    // Positives: hardness from the copula, score by inversion, true x at the f32 score.
    let g_query: f64 = StandardNormal.sample(&mut rng);
    let mut pos: Vec<Pos> = plan
        .positives
        .iter()
        .map(|(id, g_inst)| {
            let g_pair: f64 = StandardNormal.sample(&mut rng);
            let target = cfg.hardness.hardness(*g_inst, g_query, g_pair);
            let s = law.isf(target) as f32;
            Pos {
                id: id.clone(),
                s,
                x: law.sf(s as f64),
            }
        })
        .collect();
    pos.sort_by(|a, b| b.s.total_cmp(&a.s).then_with(|| a.id.cmp(&b.id)));
    // `xs`: the continuous law's exceedance at each positive. With discrete items (hubs,
    // bursts) the true hardness adds them: x = ((N − A)·F̄(s) + #{items > s})/N.
    let xs: Vec<f64> = pos.iter().map(|p| p.x).collect();
    let scores: Vec<f32> = pos.iter().map(|p| p.s).collect();
    let items = discrete::draw_query_items(disc, cfg.seed, qi, &law, &scores);
    if !items.is_empty() {
        let (n_f, a) = (cfg.pool_size as f64, items.len() as f64);
        for p in &mut pos {
            let above = items.iter().filter(|it| it.score > p.s).count() as f64;
            p.x = ((n_f - a) * p.x + above) / n_f;
        }
    }
    let mut items_per_cell = vec![0u64; layout.cell_sizes.len()];
    for c in items.iter().filter_map(|it| it.cell) {
        items_per_cell[c] += 1;
    }

    // Core non-relevant items above each positive.
    let core_x: Vec<f64> = pos
        .iter()
        .map(|p| (p.x * cfg.core_hardness).min(1.0))
        .collect();
    let core_above = joint_counts(&mut rng, plan.core_nonrel, 0.0, &core_x);

    // Streams: one per (cell, component); component sizes a multinomial split of the cell.
    let mut streams = cell_streams(&mut rng, &law, &layout.cell_sizes, &items_per_cell);

    // Top-M of every subset: merge its streams, drawing lazily.
    let mut top_scores = Vec::with_capacity(layout.subsets.len());
    for (&(a, b), subset) in layout.subset_cells.iter().zip(&layout.subsets) {
        let kept = subset.kept(cfg.top_m);
        let ids: Vec<usize> = (a * ncomp..b * ncomp).collect();
        let mut top = merge_streams(&mut rng, &law, &mut streams, &ids, kept);
        if items
            .iter()
            .any(|it| it.cell.is_some_and(|c| a <= c && c < b))
        {
            // Merge in the subset's discrete items (both lists descending).
            top.extend(
                items
                    .iter()
                    .filter(|it| it.cell.is_some_and(|c| a <= c && c < b))
                    .map(|it| it.score),
            );
            top.sort_by(|x, y| y.total_cmp(x));
            top.truncate(kept);
        }
        top_scores.push(top);
    }

    // Per stream counts above each positive: drawn items (f32 comparison, strict) plus the
    // not-yet-drawn ones, jointly over the positives.
    let stream_counts = counts_above(&mut rng, &law, &streams, &pos);
    let positives = positive_summaries(
        &pos,
        &core_above,
        &layout.subset_cells,
        ncomp,
        &stream_counts,
        &items,
    );

    // Truth: nested pools S < N_1 < … < N, each adding i.i.d. items from the law.
    let n_pos = pos.len();
    let mut k_n: Vec<u64> = positives.iter().map(|p| p.pool_above[0]).collect();
    let mut prev_size = s_total;
    let mut curve_ap = Vec::with_capacity(truth_sizes.len());
    for &size in truth_sizes {
        let add = size.saturating_sub(prev_size);
        // Unsampled discrete items join at their position; the rest of `add` is continuous.
        let joining: Vec<f32> = items
            .iter()
            .filter(|it| it.cell.is_none() && it.position >= prev_size && it.position < size)
            .map(|it| it.score)
            .collect();
        let inc = joint_counts(&mut rng, add.saturating_sub(joining.len() as u64), 0.0, &xs);
        for ((k, d), p) in k_n.iter_mut().zip(inc).zip(&pos) {
            *k += d + joining.iter().filter(|&&v| v > p.s).count() as u64;
        }
        prev_size = prev_size.max(size);
        let ranks: Vec<f64> = (0..n_pos)
            .map(|j| (j + 1) as f64 + core_above[j] as f64 + k_n[j] as f64)
            .collect();
        curve_ap.push(ap_at_k_from_ranks(&ranks, n_pos, cfg.k));
    }
    let ap_n = *curve_ap.last().expect("N is in the truth sizes");
    let summary = QuerySummary {
        id: plan.id.clone(),
        positives,
        top_scores,
    };
    let truth = QueryTruth {
        id: plan.id.clone(),
        instance: format!("inst{:04}", plan.instance),
        ap_at_k: ap_n,
        law,
        positives: pos
            .iter()
            .enumerate()
            .map(|(j, p)| PositiveTruth {
                id: p.id.clone(),
                score: p.s,
                x: p.x,
                core_above: core_above[j],
                pool_above_n: k_n[j],
            })
            .collect(),
        discrete: items.iter().map(|it| it.record()).collect(),
    };
    (summary, truth, curve_ap)
}

/// Simulate a benchmark at the summary level: the [`Summary`] a scan of the hash sample would
/// produce (readable by `predict` unchanged) and its [`Truth`]. Deterministic in `cfg`.
pub fn simulate_summary(cfg: &SimConfig) -> Result<Simulation> {
    cfg.check()?;
    let mut grng = rng_for(StreamSeeding::Nested, cfg.seed, 0, 0);
    let (layout, s_total) = Layout::new(cfg, &mut grng)?;
    let (plans, core_size) = plan_queries(cfg);
    let placement = discrete::HubPlacement::new(
        cfg.hubs.as_ref(),
        cfg.seed,
        &layout.cell_sizes,
        &layout.bounds,
        s_total,
        cfg.pool_size,
    );
    let disc = discrete::DiscreteContext {
        bursts: cfg.bursts.as_ref(),
        hubs: cfg.hubs.as_ref(),
        rare: cfg.rare.as_ref(),
        placement: &placement,
        cell_sizes: &layout.cell_sizes,
        bounds: &layout.bounds,
        s_total,
        pool: cfg.pool_size,
    };
    let mut truth_sizes: Vec<u64> = cfg
        .truth_pool_sizes
        .iter()
        .copied()
        .filter(|&n| n > s_total && n < cfg.pool_size)
        .collect();
    truth_sizes.push(cfg.pool_size.max(s_total));
    truth_sizes.sort_unstable();
    truth_sizes.dedup();

    let results: Vec<QueryResult> = plans
        .par_iter()
        .enumerate()
        .map(|(qi, plan)| simulate_query(cfg, &layout, s_total, &truth_sizes, plan, qi, &disc))
        .collect();

    let nq = results.len() as f64;
    let mean = |f: &dyn Fn(&QueryResult) -> f64| results.iter().map(f).sum::<f64>() / nq;
    let curve: Vec<CurvePoint> = truth_sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| CurvePoint {
            pool_size: n,
            map_at_k: mean(&|r| r.2[i]),
        })
        .collect();
    let levels: Vec<LevelTruth> = layout
        .subsets
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == SubsetKind::Level)
        .map(|(l, s)| LevelTruth {
            fraction: s.fraction,
            sample_size: layout.subset_sizes[l],
            map_at_k: mean(&|r| {
                let ps = &r.0.positives;
                let ranks: Vec<f64> = ps
                    .iter()
                    .enumerate()
                    .map(|(j, p)| (j + 1) as f64 + p.core_above as f64 + p.pool_above[l] as f64)
                    .collect();
                ap_at_k_from_ranks(&ranks, ps.len(), cfg.k)
            }),
        })
        .collect();
    let n_f = cfg.pool_size as f64;
    let oracle = mean(&|r| {
        let ps = &r.1.positives;
        let ranks: Vec<f64> = ps
            .iter()
            .enumerate()
            .map(|(j, p)| (j + 1) as f64 + p.core_above as f64 + n_f * p.x)
            .collect();
        ap_at_k_from_ranks(&ranks, ps.len(), cfg.k)
    });
    let map_n = curve.last().expect("N present").map_at_k;
    let (queries, truths): (Vec<QuerySummary>, Vec<QueryTruth>) =
        results.into_iter().map(|(q, t, _)| (q, t)).unzip();
    let summary = Summary {
        format_version: SUMMARY_FORMAT_VERSION,
        tool_version: crate::TOOL_VERSION.to_string(),
        model: format!("simulated:{}:seed{}", cfg.preset, cfg.seed),
        query_set: "image".to_string(),
        pool_size: Some(cfg.pool_size),
        fraction: cfg.fraction,
        seed: cfg.seed,
        top_m: cfg.top_m,
        core_size,
        subsets: layout.subsets,
        subset_sizes: layout.subset_sizes,
        queries,
        inputs: Vec::new(),
        pool_id_hashes: None,
        ties_known: true,
    };
    let truth = Truth {
        config: cfg.clone(),
        tool_version: crate::TOOL_VERSION.to_string(),
        pool_size: cfg.pool_size,
        sample_size: s_total,
        k: cfg.k,
        map_at_k: map_n,
        oracle_map_at_k: oracle,
        levels,
        curve,
        queries: truths,
    };
    Ok(Simulation { summary, truth })
}
