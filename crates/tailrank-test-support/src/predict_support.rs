//! Synthetic summaries for the prediction tests: explicit per-query pool scores of a sample of
//! S items with a bounded upper tail (survival `(1 − x)^4`, a GPD tail with ξ = −1/4), positives
//! whose hardness spans several decades, core non-relevant items, nested levels and drift
//! shards defined by a uniform tag per sampled item (as a hash would).

use tailrank::sample::HashRange;
use tailrank::summary::{
    PositiveSummary, QuerySummary, Subset, SubsetKind, Summary, SUMMARY_FORMAT_VERSION,
};

pub use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct SynthOpts {
    pub queries: usize,
    pub sample: usize,
    pub top_m: usize,
    pub levels: usize,
    pub shards: usize,
    pub fraction: f64,
    pub pool_size: Option<u64>,
    pub seed: u64,
    /// Make the pool items of this shard harder (their scores are pushed up): drift.
    pub drift_shard: Option<usize>,
    /// Draw the whole pool of `pool_size` items (the sample is the items whose tag is below
    /// `fraction`; `sample` is then ignored) and record the full-pool counts as truth.
    pub full_pool: bool,
}

impl Default for SynthOpts {
    fn default() -> Self {
        SynthOpts {
            queries: 40,
            sample: 20_000,
            top_m: 400,
            levels: 3,
            shards: 4,
            fraction: 0.05,
            pool_size: Some(400_000),
            seed: 1,
            drift_shard: None,
            full_pool: false,
        }
    }
}

pub struct Synth {
    pub summary: Summary,
    /// Level-0 sample scores per query (item order).
    pub sample_scores: Vec<Vec<f32>>,
    /// Per sampled item: uniform tag deciding its levels and shard.
    pub tags: Vec<f64>,
    /// Per query: scores of the non-relevant core items.
    pub core_nonrel: Vec<Vec<f32>>,
    /// Per query: positive scores (descending).
    pub pos_scores: Vec<Vec<f32>>,
    /// With `full_pool`: per query and positive, the number of pool items scoring above it.
    pub full_counts: Vec<Vec<u64>>,
}

fn in_subset(kind: SubsetKind, index: usize, shards: usize, tag: f64) -> bool {
    match kind {
        SubsetKind::Level => tag < 0.5f64.powi(index as i32),
        SubsetKind::Shard => {
            let h = (tag * shards as f64).floor() as usize;
            h == index
        }
    }
}

/// The sampled items' tags: in full-pool mode, every pool item has a tag in [0, 1); it is
/// sampled iff tag < fraction, and the sampled items' tags are rescaled to [0, 1) for their
/// levels and shards. Returns the pool tags and sampled pool items (both empty unless
/// `full_pool`) and the sampled items' tags (`sample` uniform draws otherwise).
fn draw_tags(o: &SynthOpts, rng: &mut Rng) -> (Vec<f64>, Vec<usize>, Vec<f64>) {
    let pool_tags: Vec<f64> = if o.full_pool {
        (0..o.pool_size.unwrap()).map(|_| rng.unif()).collect()
    } else {
        Vec::new()
    };
    let sampled: Vec<usize> = (0..pool_tags.len())
        .filter(|&i| pool_tags[i] < o.fraction)
        .collect();
    let tags: Vec<f64> = if o.full_pool {
        sampled.iter().map(|&i| pool_tags[i] / o.fraction).collect()
    } else {
        (0..o.sample).map(|_| rng.unif()).collect()
    };
    (pool_tags, sampled, tags)
}

/// The subsets of the summary (`levels` nested levels at fraction `f/2^l`, then `shards`
/// shards of the level-0 range) and their `(kind, index)` for [`in_subset`], in order.
fn synth_subsets(o: &SynthOpts) -> (Vec<Subset>, Vec<(SubsetKind, usize)>) {
    let mut subsets = Vec::new();
    let mut spec = Vec::new();
    for l in 0..o.levels {
        let f = o.fraction / 2f64.powi(l as i32);
        subsets.push(Subset {
            kind: SubsetKind::Level,
            fraction: f,
            range: HashRange::fraction(f).unwrap(),
            top_m: None,
        });
        spec.push((SubsetKind::Level, l));
    }
    let ranges = HashRange::fraction(o.fraction)
        .unwrap()
        .split(o.shards as u64);
    for (h, r) in ranges.into_iter().enumerate().take(o.shards) {
        subsets.push(Subset {
            kind: SubsetKind::Shard,
            fraction: o.fraction / o.shards as f64,
            range: r,
            top_m: None,
        });
        spec.push((SubsetKind::Shard, h));
    }
    (subsets, spec)
}

/// One synthetic query and what [`Synth`] records of it.
struct SynthQuery {
    summary: QuerySummary,
    /// Level-0 sample scores (item order).
    scores: Vec<f32>,
    core: Vec<f32>,
    /// Positive scores, descending.
    pos: Vec<f32>,
    /// With `full_pool`: per positive, the number of pool items scoring above it.
    full_counts: Vec<u64>,
}

/// Query `qi`: scores `μ + w·x` with `x` of survival `(1 − x)^4` (`(1 − x)^6.25` in the
/// drift shard), 20 core non-relevant items, 1–6 positives of hardness log-uniform over
/// 6.5 decades; its counts and top-M per subset of `spec` over the sampled `tags`.
fn synth_query(
    o: &SynthOpts,
    qi: usize,
    rng: &mut Rng,
    spec: &[(SubsetKind, usize)],
    (pool_tags, sampled, tags): (&[f64], &[usize], &[f64]),
) -> SynthQuery {
    let mu = 0.1 + 0.2 * rng.unif();
    let w = 0.4 + 0.3 * rng.unif();
    let score = |x: f64| (mu + w * x) as f32;
    let full: Vec<f32> = if o.full_pool {
        pool_tags
            .iter()
            .map(|_| score(1.0 - rng.unif().powf(0.25)))
            .collect()
    } else {
        Vec::new()
    };
    let scores: Vec<f32> = if o.full_pool {
        sampled.iter().map(|&i| full[i]).collect()
    } else {
        tags.iter()
            .map(|&t| {
                let u = rng.unif();
                let mut x = 1.0 - u.powf(0.25);
                if let Some(h) = o.drift_shard {
                    if in_subset(SubsetKind::Shard, h, o.shards, t) {
                        x = 1.0 - u.powf(0.16);
                    }
                }
                score(x)
            })
            .collect()
    };
    let core: Vec<f32> = (0..20)
        .map(|_| score(1.0 - rng.unif().powf(0.25)))
        .collect();
    let n_pos = 1 + rng.below(6) as usize;
    let mut pos: Vec<f32> = (0..n_pos)
        .map(|_| {
            let hard = 10f64.powf(-6.5 * rng.unif());
            score(1.0 - hard.powf(0.25))
        })
        .collect();
    pos.sort_by(|a, b| b.total_cmp(a));
    let full_counts = pos
        .iter()
        .map(|&s| full.iter().filter(|&&v| v > s).count() as u64)
        .collect::<Vec<u64>>();
    let positives = pos
        .iter()
        .enumerate()
        .map(|(j, &s)| PositiveSummary {
            core_ties: 0,
            pool_ties: Vec::new(),
            id: format!("q{qi:03}/pos{j}"),
            score: s,
            core_above: core.iter().filter(|&&c| c > s).count() as u64,
            pool_above: spec
                .iter()
                .map(|&(k, i)| {
                    scores
                        .iter()
                        .zip(tags)
                        .filter(|(&v, &t)| v > s && in_subset(k, i, o.shards, t))
                        .count() as u64
                })
                .collect(),
        })
        .collect();
    let top_scores = spec
        .iter()
        .map(|&(k, i)| {
            let mut v: Vec<f32> = scores
                .iter()
                .zip(tags)
                .filter(|(_, &t)| in_subset(k, i, o.shards, t))
                .map(|(&v, _)| v)
                .collect();
            v.sort_by(|a, b| b.total_cmp(a));
            v.truncate(o.top_m);
            v
        })
        .collect();
    SynthQuery {
        summary: QuerySummary {
            id: format!("q{qi:03}"),
            positives,
            top_scores,
        },
        scores,
        core,
        pos,
        full_counts,
    }
}

/// A summary whose levels find a real excess past the fitted endpoints (the endpoint test
/// fires, so the estimate moves to the centre of the excess), concentrated on few positives
/// (`γ̂ > 0`): the simulator's hubs family, seed 1, 300 queries, 5%. The summaries of
/// [`synth`] hold no real excess (their endpoint `z` is noise) and do not move.
pub fn summary_with_a_move() -> Summary {
    let mut cfg = tailrank::simulate::SimConfig::preset("hubs", 1)
        .expect("a corpus family")
        .with_queries(300);
    cfg.fraction = 0.05;
    tailrank::simulate::simulate_summary(&cfg)
        .expect("the simulator")
        .summary
}

/// Draw a synthetic summary.
pub fn synth(o: &SynthOpts) -> Synth {
    let mut rng = Rng(o.seed);
    let (pool_tags, sampled, tags) = draw_tags(o, &mut rng);
    let (subsets, spec) = synth_subsets(o);
    let sizes: Vec<u64> = spec
        .iter()
        .map(|&(k, i)| {
            tags.iter()
                .filter(|&&t| in_subset(k, i, o.shards, t))
                .count() as u64
        })
        .collect();
    let mut queries = Vec::new();
    let mut sample_scores = Vec::new();
    let mut core_nonrel = Vec::new();
    let mut pos_scores = Vec::new();
    let mut full_counts = Vec::new();
    for qi in 0..o.queries {
        let q = synth_query(o, qi, &mut rng, &spec, (&pool_tags, &sampled, &tags));
        full_counts.push(q.full_counts);
        queries.push(q.summary);
        sample_scores.push(q.scores);
        core_nonrel.push(q.core);
        pos_scores.push(q.pos);
    }
    let summary = Summary {
        format_version: SUMMARY_FORMAT_VERSION,
        tool_version: tailrank::TOOL_VERSION.to_string(),
        model: "synthetic".into(),
        query_set: "image".into(),
        pool_size: o.pool_size,
        fraction: o.fraction,
        seed: 0,
        top_m: o.top_m,
        core_size: 20 + 6,
        subsets,
        subset_sizes: sizes,
        queries,
        inputs: Vec::new(),
        pool_id_hashes: None,
        ties_known: true,
    };
    Synth {
        summary,
        sample_scores,
        tags,
        core_nonrel,
        pos_scores,
        full_counts,
    }
}

/// An ILIAS-sized summary drawn from order statistics (no explicit sample): `queries`
/// queries with 1–9 positives, level-0 sample `sample`, top-M lists for `levels` nested levels
/// and `shards` shards. Counts beyond the drawn order statistics are expectations (rounded).
pub fn ilias_like(
    queries: usize,
    sample: u64,
    top_m: usize,
    levels: usize,
    shards: usize,
    seed: u64,
) -> Summary {
    let mut rng = Rng(seed);
    let depth = top_m * (1usize << (levels - 1)).max(shards);
    let fraction = 0.05;
    let mut subsets = Vec::new();
    let mut spec = Vec::new();
    for l in 0..levels {
        let f = fraction / 2f64.powi(l as i32);
        subsets.push(Subset {
            kind: SubsetKind::Level,
            fraction: f,
            range: HashRange::fraction(f).unwrap(),
            top_m: None,
        });
        spec.push((SubsetKind::Level, l, 0.5f64.powi(l as i32)));
    }
    for (h, r) in HashRange::fraction(fraction)
        .unwrap()
        .split(shards as u64)
        .into_iter()
        .enumerate()
    {
        subsets.push(Subset {
            kind: SubsetKind::Shard,
            fraction: fraction / shards as f64,
            range: r,
            top_m: None,
        });
        spec.push((SubsetKind::Shard, h, 1.0 / shards as f64));
    }
    let sizes: Vec<u64> = spec
        .iter()
        .map(|s| (sample as f64 * s.2).round() as u64)
        .collect();
    let mut qs = Vec::new();
    for qi in 0..queries {
        let mu = 0.1 + 0.2 * rng.unif();
        let w = 0.4 + 0.3 * rng.unif();
        // Order statistics of the survival: p_(i) = (E_1 + ... + E_i)/S.
        let mut acc = 0.0;
        let mut items: Vec<(f32, f64, f64)> = Vec::with_capacity(depth);
        for _ in 0..depth {
            acc += -rng.unif().ln();
            let p = acc / sample as f64;
            items.push((
                (mu + w * (1.0 - p.min(1.0).powf(0.25))) as f32,
                rng.unif(),
                p,
            ));
        }
        let n_pos = 1 + rng.below(9) as usize;
        let mut hard: Vec<f64> = (0..n_pos).map(|_| 10f64.powf(-7.0 * rng.unif())).collect();
        hard.sort_by(f64::total_cmp);
        let p_last = items.last().unwrap().2;
        // Per subset: its items' scores, descending (the order statistics are drawn so).
        let lists: Vec<Vec<f32>> = spec
            .iter()
            .map(|&(k, i, share)| {
                items
                    .iter()
                    .filter(|it| match k {
                        SubsetKind::Level => it.1 < share,
                        SubsetKind::Shard => (it.1 * shards as f64).floor() as usize == i,
                    })
                    .map(|it| it.0)
                    .collect()
            })
            .collect();
        let positives = hard
            .iter()
            .enumerate()
            .map(|(j, &x)| {
                let s = (mu + w * (1.0 - x.powf(0.25))) as f32;
                PositiveSummary {
                    core_ties: 0,
                    pool_ties: Vec::new(),
                    id: format!("q{qi:04}/p{j}"),
                    score: s,
                    core_above: 0,
                    pool_above: spec
                        .iter()
                        .enumerate()
                        .map(|(si, &(_, _, share))| {
                            if x < p_last {
                                lists[si].partition_point(|&v| v > s) as u64
                            } else {
                                ((x * sample as f64 * share).round() as u64).min(sizes[si])
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        let top_scores = lists
            .into_iter()
            .map(|mut l| {
                l.truncate(top_m);
                l
            })
            .collect();
        qs.push(QuerySummary {
            id: format!("q{qi:04}"),
            positives,
            top_scores,
        });
    }
    Summary {
        format_version: SUMMARY_FORMAT_VERSION,
        tool_version: tailrank::TOOL_VERSION.to_string(),
        model: "ilias-like".into(),
        query_set: "image".into(),
        pool_size: Some(100_000_000),
        fraction,
        seed: 0,
        top_m,
        core_size: 5000,
        subsets,
        subset_sizes: sizes,
        queries: qs,
        inputs: Vec::new(),
        pool_id_hashes: None,
        ties_known: true,
    }
}
