//! A brute-force reference for summary tests: random scores for queries, core and pool items
//! with string ids, and a direct (quadratic, obviously correct) construction of the [`Summary`]
//! of any part of the pool. Scores are multiples of 1/256 so that ties are frequent.

use tailrank::sample::{id_hash, HashRange};
use tailrank::summary::Summary;
use tailrank::summary::{InputRecord, PositiveSummary, QuerySummary, Subset, SubsetKind};

pub use crate::rng::Rng;

/// Scores of every query against every gallery item.
pub struct World {
    pub query_ids: Vec<String>,
    /// Per query: (positive id, score).
    pub positives: Vec<Vec<(String, f32)>>,
    /// Per query: scores of the non-relevant core items.
    pub core_nonrel: Vec<Vec<f32>>,
    pub core_size: u64,
    pub pool_ids: Vec<String>,
    /// `pool_scores[q][i]`: score of pool item i for query q.
    pub pool_scores: Vec<Vec<f32>>,
}

impl World {
    pub fn random(seed: u64, queries: usize, core: usize, pool: usize) -> World {
        let mut rng = Rng(seed);
        let core_ids: Vec<String> = (0..core).map(|i| format!("core/{i:05}")).collect();
        let mut positives = Vec::new();
        let mut core_nonrel = Vec::new();
        for _ in 0..queries {
            let n = 1 + rng.below(4) as usize;
            let mut chosen: Vec<usize> = Vec::new();
            while chosen.len() < n {
                let c = rng.below(core as u64) as usize;
                if !chosen.contains(&c) {
                    chosen.push(c);
                }
            }
            let scores: Vec<f32> = (0..core).map(|_| rng.score()).collect();
            let mut pos: Vec<(String, f32)> = chosen
                .iter()
                .map(|&c| (core_ids[c].clone(), scores[c]))
                .collect();
            pos.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            positives.push(pos);
            core_nonrel.push(
                (0..core)
                    .filter(|c| !chosen.contains(c))
                    .map(|c| scores[c])
                    .collect(),
            );
        }
        let pool_ids: Vec<String> = (0..pool).map(|i| format!("yfcc/{i:07}")).collect();
        let pool_scores = (0..queries)
            .map(|_| (0..pool).map(|_| rng.score()).collect())
            .collect();
        World {
            query_ids: (0..queries).map(|i| format!("q{i:03}")).collect(),
            positives,
            core_nonrel,
            core_size: core as u64,
            pool_ids,
            pool_scores,
        }
    }
}

/// Levels f, f/2, … ≥ `min_fraction`, then `shards` disjoint slices of level 0.
pub fn subsets(fraction: f64, min_fraction: f64, shards: u64) -> Vec<Subset> {
    let mut out = Vec::new();
    let mut f = fraction;
    while f >= min_fraction {
        out.push(Subset {
            kind: SubsetKind::Level,
            fraction: f,
            range: HashRange::fraction(f).unwrap(),
            top_m: None,
        });
        f /= 2.0;
    }
    let r0 = HashRange::fraction(fraction).unwrap();
    for r in r0.split(shards) {
        out.push(Subset {
            kind: SubsetKind::Shard,
            fraction: fraction / shards as f64,
            range: r,
            top_m: None,
        });
    }
    out
}

pub struct Settings {
    pub fraction: f64,
    pub min_fraction: f64,
    pub shards: u64,
    pub seed: u64,
    pub top_m: usize,
    pub pool_size: Option<u64>,
}

/// The summary of the pool shards `shards` (each: a label and indices into `world.pool_ids`),
/// recorded as one pool input per shard, built by brute force over their union.
pub fn build(world: &World, shards: &[(&str, Vec<usize>)], st: &Settings) -> Summary {
    let items: Vec<usize> = shards.iter().flat_map(|s| s.1.iter().copied()).collect();
    let items = &items[..];
    let mut subsets = subsets(st.fraction, st.min_fraction, st.shards);
    // Drift shards keep the top ⌈M/H⌉ scores (docs/method.md §5), levels the top M.
    for s in subsets.iter_mut().filter(|s| s.kind == SubsetKind::Shard) {
        s.top_m = Some(st.top_m.div_ceil(st.shards as usize));
    }
    let member: Vec<Vec<bool>> = items
        .iter()
        .map(|&i| {
            let h = id_hash(&world.pool_ids[i], st.seed);
            subsets.iter().map(|s| s.range.contains(h)).collect()
        })
        .collect();
    // The pool fingerprint: sorted id keys of the level-0 members.
    let mut fingerprint: Vec<u64> = items
        .iter()
        .zip(&member)
        .filter(|(_, m)| m[0])
        .map(|(&i, _)| tailrank::formats::ids::id_key(&world.pool_ids[i]))
        .collect();
    fingerprint.sort_unstable();
    let subset_sizes = (0..subsets.len())
        .map(|l| member.iter().filter(|m| m[l]).count() as u64)
        .collect();
    let queries = (0..world.query_ids.len())
        .map(|q| {
            let positives = world.positives[q]
                .iter()
                .map(|(id, s)| PositiveSummary {
                    core_ties: world.core_nonrel[q].iter().filter(|&&c| c == *s).count() as u64,
                    pool_ties: (0..subsets.len())
                        .map(|l| {
                            items
                                .iter()
                                .zip(&member)
                                .filter(|(&i, m)| m[l] && world.pool_scores[q][i] == *s)
                                .count() as u64
                        })
                        .collect(),
                    id: id.clone(),
                    score: *s,
                    core_above: world.core_nonrel[q].iter().filter(|&&c| c > *s).count() as u64,
                    pool_above: (0..subsets.len())
                        .map(|l| {
                            items
                                .iter()
                                .zip(&member)
                                .filter(|(&i, m)| m[l] && world.pool_scores[q][i] > *s)
                                .count() as u64
                        })
                        .collect(),
                })
                .collect();
            let top_scores = (0..subsets.len())
                .map(|l| {
                    let mut t: Vec<f32> = items
                        .iter()
                        .zip(&member)
                        .filter(|(_, m)| m[l])
                        .map(|(&i, _)| world.pool_scores[q][i])
                        .collect();
                    t.sort_by(|a, b| b.total_cmp(a));
                    t.truncate(subsets[l].top_m.unwrap_or(st.top_m));
                    t
                })
                .collect();
            QuerySummary {
                id: world.query_ids[q].clone(),
                positives,
                top_scores,
            }
        })
        .collect();
    let mut inputs = vec![
        InputRecord {
            role: "queries".into(),
            path: "queries.npy".into(),
            digest: "xxh3:00000000000000aa".into(),
            rows: world.query_ids.len() as u64,
        },
        InputRecord {
            role: "core".into(),
            path: "core.npy".into(),
            digest: "xxh3:00000000000000bb".into(),
            rows: world.core_size,
        },
    ];
    for (label, shard) in shards {
        inputs.push(InputRecord {
            role: "pool".into(),
            path: label.to_string(),
            digest: format!("xxh3:{:016x}", id_hash(label, 0)),
            rows: shard.len() as u64,
        });
    }
    Summary {
        format_version: tailrank::summary::SUMMARY_FORMAT_VERSION,
        tool_version: tailrank::TOOL_VERSION.to_string(),
        model: "test-model".into(),
        query_set: "queries".into(),
        pool_size: st.pool_size,
        fraction: st.fraction,
        seed: st.seed,
        top_m: st.top_m,
        core_size: world.core_size,
        subsets,
        subset_sizes,
        queries,
        inputs,
        pool_id_hashes: Some(fingerprint),
        ties_known: true,
    }
}
