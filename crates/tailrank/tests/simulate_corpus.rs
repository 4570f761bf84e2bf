//! The validation corpus (docs/reference/validation.md, "The validation corpus"): every family keeps the
//! simulator's guarantees (nested levels, disjoint shards, counts consistent with the top-M
//! lists, the realized truth reproducing the exact metric), hubs are shared across queries,
//! bursts are thinned copy by copy, the output does not depend on the thread count, the new
//! score laws match scipy, and the corpus list round-trips.

use tailrank_test_support::python as common;

use tailrank::hardness::{Branch, PositiveHardness, QueryHardness};
use tailrank::maps::{self, MapKind};
use tailrank::metric::ap_at_k_from_ranks;
use tailrank::simulate::corpus::{self, EntryKind, CORPUS};
use tailrank::simulate::{simulate_summary, Family, SimConfig, Simulation, Truth};

/// A scaled-down family: 60 queries, N = 2·10^7, M = 500.
fn small_cfg(name: &str, seed: u64) -> SimConfig {
    let mut cfg = SimConfig::preset(name, seed).unwrap().with_queries(60);
    cfg.pool_size = 20_000_000;
    cfg.top_m = 500;
    cfg.truth_pool_sizes = vec![2_000_000, 5_000_000, 10_000_000];
    cfg
}

fn small(name: &str, seed: u64) -> Simulation {
    simulate_summary(&small_cfg(name, seed)).unwrap()
}

#[test]
fn every_family_nested_disjoint_and_consistent() {
    for e in CORPUS {
        let sim = small(e.name, 11);
        let (s, t) = (&sim.summary, &sim.truth);
        let levels = s.level_indices();
        let shards = s.shard_indices();
        assert_eq!(
            shards.iter().map(|&i| s.subset_sizes[i]).sum::<u64>(),
            s.subset_sizes[0]
        );
        for (q, tq) in s.queries.iter().zip(&t.queries) {
            for (i, top) in q.top_scores.iter().enumerate() {
                let kept = s.subsets[i].kept(s.top_m) as u64;
                assert_eq!(top.len() as u64, s.subset_sizes[i].min(kept));
                assert!(
                    top.windows(2).all(|w| w[0] >= w[1]),
                    "{} top-M sorted",
                    e.name
                );
            }
            for (j, p) in q.positives.iter().enumerate() {
                for w in levels.windows(2) {
                    assert!(
                        p.pool_above[w[1]] <= p.pool_above[w[0]],
                        "{} nested",
                        e.name
                    );
                }
                let by_shards: u64 = shards.iter().map(|&i| p.pool_above[i]).sum();
                assert_eq!(by_shards, p.pool_above[0], "{} shards disjoint", e.name);
                assert!(
                    p.pool_ties.iter().all(|&x| x == 0),
                    "no ties with positives"
                );
                for (i, top) in q.top_scores.iter().enumerate() {
                    let above = top.iter().filter(|&&v| v > p.score).count() as u64;
                    if above < top.len() as u64 {
                        assert_eq!(p.pool_above[i], above, "{} {} subset {i}", e.name, p.id);
                    } else {
                        assert!(p.pool_above[i] >= above);
                    }
                }
                let tp = &tq.positives[j];
                assert!(tp.pool_above_n >= p.pool_above[0]);
                // Every discrete item above the positive counts in the full pool, and the
                // sampled ones at level 0.
                let disc_above = tq.discrete.iter().filter(|d| d.score > p.score);
                let (all, sampled) = disc_above.fold((0u64, 0u64), |(a, b), d| {
                    (a + 1, b + u64::from(d.hash.is_some()))
                });
                assert!(tp.pool_above_n >= all && p.pool_above[0] >= sampled);
                assert!(tp.x >= all as f64 / t.pool_size as f64 * (1.0 - 1e-12));
                if j > 0 {
                    assert!(tq.positives[j - 1].pool_above_n <= tp.pool_above_n);
                    assert!(tq.positives[j - 1].x <= tp.x);
                }
            }
        }
    }
}

#[test]
fn realized_hardness_reproduces_the_exact_metric() {
    for e in CORPUS {
        let sim = small(e.name, 5);
        let t = &sim.truth;
        let n = t.pool_size as f64;
        let (mut exact, mut via_map) = (0.0, 0.0);
        for q in &t.queries {
            let ranks: Vec<f64> = q
                .positives
                .iter()
                .enumerate()
                .map(|(j, p)| (j + 1) as f64 + p.core_above as f64 + p.pool_above_n as f64)
                .collect();
            let ap = ap_at_k_from_ranks(&ranks, q.positives.len(), t.k);
            assert!((ap - q.ap_at_k).abs() < 1e-12);
            exact += ap;
            let h = QueryHardness {
                query_id: q.id.clone(),
                sample_size: t.pool_size,
                tail: None,
                positives: q
                    .positives
                    .iter()
                    .map(|p| PositiveHardness {
                        id: p.id.clone(),
                        score: p.score,
                        core_above: p.core_above,
                        pool_above: p.pool_above_n,
                        x_hat: p.pool_above_n as f64 / n,
                        branch: Branch::Count,
                    })
                    .collect(),
            };
            via_map += maps::ap_at_k(&h, n, t.k, MapKind::ExpectedRank);
        }
        let nq = t.queries.len() as f64;
        assert!((exact / nq - t.map_at_k).abs() < 1e-12, "{}", e.name);
        assert!((via_map / nq - t.map_at_k).abs() < 1e-9, "{}", e.name);
        for w in t.curve.windows(2) {
            assert!(
                w[1].map_at_k <= w[0].map_at_k + 1e-12,
                "{} {:?}",
                e.name,
                t.curve
            );
        }
        for w in t.levels.windows(2) {
            assert!(w[0].map_at_k <= w[1].map_at_k + 1e-12);
        }
    }
}

/// Level ℓ holds relative hashes below 2^−ℓ; shard h of H holds [h/H, (h+1)/H).
fn subset_holds(sim: &Simulation, subset: usize, hash: f64) -> bool {
    let s = &sim.summary;
    let levels = s.level_indices();
    if let Some(l) = levels.iter().position(|&i| i == subset) {
        return hash < 0.5f64.powi(l as i32);
    }
    let shards = s.shard_indices();
    let h = shards.iter().position(|&i| i == subset).unwrap() as f64;
    let n = shards.len() as f64;
    h / n <= hash && hash < (h + 1.0) / n
}

#[test]
fn hubs_are_shared_across_queries() {
    let sim = small("hubs", 2);
    let t = &sim.truth;
    let mut hash_of: std::collections::HashMap<u32, Option<f64>> = Default::default();
    let mut shared = 0;
    let mut checked = 0;
    for (q, tq) in sim.summary.queries.iter().zip(&t.queries) {
        assert!(!tq.discrete.is_empty(), "every query has active hubs");
        for d in &tq.discrete {
            let hub = d.hub.expect("only hubs in this family");
            // One hash per hub, the same for every query.
            if let Some(prev) = hash_of.insert(hub, d.hash) {
                assert_eq!(prev, d.hash, "hub {hub} hashed twice");
                shared += 1;
            }
            // A sampled hub is in exactly the subsets holding its hash.
            if let Some(h) = d.hash {
                for (i, top) in q.top_scores.iter().enumerate() {
                    if subset_holds(&sim, i, h) && d.score > *top.last().unwrap() {
                        assert!(top.contains(&d.score), "hub {hub} missing from subset {i}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(shared > 100, "hubs shared across queries: {shared}");
    assert!(checked > 20, "{checked}");
    // Each hub is in the sample with probability f.
    let sampled = hash_of.values().filter(|h| h.is_some()).count() as f64;
    let share = sampled / hash_of.len() as f64;
    assert!((share - 0.05).abs() < 0.03, "{share} of {}", hash_of.len());
}

#[test]
fn bursts_are_thinned_copy_by_copy() {
    let sim = small("bursts", 3);
    let (mut copies, mut sampled, mut bursts, mut identical) = (0u64, 0u64, 0, 0);
    for (q, tq) in sim.summary.queries.iter().zip(&sim.truth.queries) {
        if tq.discrete.is_empty() {
            continue;
        }
        bursts += 1;
        assert!(tq.discrete.iter().all(|d| d.hub.is_none()));
        let b = tq.discrete.len() as u64;
        assert!((100..=800).contains(&b), "{b} copies");
        copies += b;
        let in_sample: Vec<&tailrank::simulate::DiscreteItem> =
            tq.discrete.iter().filter(|d| d.hash.is_some()).collect();
        sampled += in_sample.len() as u64;
        let first = tq.discrete[0].score;
        if tq.discrete.iter().all(|d| d.score == first) {
            identical += 1;
            // Bitwise-identical copies tie in the top-M list.
            if in_sample.len() >= 2 && first > *q.top_scores[0].last().unwrap() {
                let ties = q.top_scores[0].iter().filter(|&&v| v == first).count();
                assert!(ties >= in_sample.len(), "{ties} < {}", in_sample.len());
            }
        }
        // Per subset, the sampled copies above a positive are counted there.
        for p in &q.positives {
            for i in 0..sim.summary.subsets.len() {
                let n = in_sample
                    .iter()
                    .filter(|d| d.score > p.score && subset_holds(&sim, i, d.hash.unwrap()))
                    .count() as u64;
                assert!(p.pool_above[i] >= n);
            }
        }
    }
    assert!(
        bursts > 15 && identical > 3,
        "{bursts} bursts, {identical} identical"
    );
    // Binomial thinning: each copy is in the sample with probability f = 0.05.
    let share = sampled as f64 / copies as f64;
    let sd = (0.05 * 0.95 / copies as f64).sqrt();
    assert!(
        (share - 0.05).abs() < 5.0 * sd,
        "{share} over {copies} copies"
    );
}

#[test]
fn deterministic_whatever_the_thread_count() {
    for name in ["hubs", "heterogeneous", "beta-mixture"] {
        let cfg = small_cfg(name, 9);
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| simulate_summary(&cfg).unwrap())
        };
        let (a, b) = (run(1), run(3));
        assert_eq!(a.summary, b.summary, "{name}");
        assert_eq!(a.truth, b.truth, "{name}");
    }
}

#[test]
fn corpus_list_round_trip() {
    let held: Vec<&str> = CORPUS
        .iter()
        .filter(|e| e.held_out)
        .map(|e| e.name)
        .collect();
    assert_eq!(held, ["hubs", "spread-even", "spread-0.3"]);
    assert!(corpus::names().contains(&"ilias-like") && corpus::names().contains(&"mixture-tail"));
    for e in CORPUS {
        assert_eq!(corpus::entry(e.name).unwrap().name, e.name);
        let EntryKind::Summary(build) = e.kind;
        let cfg = build(4);
        assert_eq!(cfg, SimConfig::preset(e.name, 4).unwrap());
        let json = serde_json::to_string(&cfg).unwrap();
        let back: SimConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, cfg, "{}", e.name);
    }
    // A truth with discrete items and mixture laws survives truth.json.
    for name in ["heterogeneous", "hubs"] {
        let sim = small(name, 1);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("truth.json");
        sim.truth.write(&p).unwrap();
        assert_eq!(Truth::read(&p).unwrap(), sim.truth, "{name}");
    }
}

#[test]
fn new_laws_match_scipy() {
    let code = r#"
from scipy import stats
import numpy as np
for s in [-0.1, 0.2, 0.5, 0.6, 0.63, 0.645]:
    print("beta", s, repr(float(stats.beta.sf(s, 3.0, 9.0, loc=-0.15, scale=0.8))))
mu, sd, lo, hi = 0.12, 0.06, -0.48, 0.63
a, b = (lo - mu) / sd, (hi - mu) / sd
for s in [0.0, 0.2, 0.35, 0.45, 0.52]:
    print("tn", s, repr(float(stats.truncnorm.sf(s, a, b, loc=mu, scale=sd))))
"#;
    let beta = Family::Beta {
        lo: -0.15,
        width: 0.8,
        a: 3.0,
        b: 9.0,
    };
    let tn = Family::TruncNormal {
        mu: 0.12,
        sd: 0.06,
        lo: -0.48,
        hi: 0.63,
    };
    let out = common::run_python(code, &[]);
    let mut n = 0;
    for line in out.lines() {
        let v: Vec<&str> = line.split_whitespace().collect();
        let (s, want): (f64, f64) = (v[1].parse().unwrap(), v[2].parse().unwrap());
        let (fam, tol) = if v[0] == "beta" {
            (beta, 1e-9)
        } else {
            (tn, 1e-6)
        };
        let got = fam.sf(s);
        assert!(((got - want) / want).abs() < tol, "{line}: {got}");
        // The inverse lands on the same score.
        assert!(
            (fam.isf(want) - s).abs() < 1e-6,
            "{line}: isf {}",
            fam.isf(want)
        );
        n += 1;
    }
    assert_eq!(n, 11);
}

/// The spread pair: on average λ = 1 rare item per query in the full pool, every one above all
/// of its query's positives, held by every query's Poisson(1) (`spread-even`: a share
/// `1 − e^{−1}` = 0.632 of the queries holds at least one) or by 30% of the queries with
/// Poisson(1/0.3) each (`spread-0.3`: 0.3·(1 − e^{−10/3}) = 0.289). Bounds at 5 SEs.
#[test]
fn spread_pair_holds_one_rare_item_per_query_spread_as_named() {
    for (name, holding) in [
        ("spread-even", 1.0 - (-1.0f64).exp()),
        ("spread-0.3", 0.3 * (1.0 - (-10.0f64 / 3.0).exp())),
    ] {
        let sim = small(name, 3);
        let t = &sim.truth;
        let q = t.queries.len() as f64;
        let mut items = 0usize;
        let mut held = 0usize;
        for tq in &t.queries {
            let top = tq
                .positives
                .iter()
                .map(|p| p.score)
                .fold(f32::MIN, f32::max);
            assert!(
                tq.discrete.iter().all(|d| d.score > top),
                "{name}: above every positive"
            );
            items += tq.discrete.len();
            held += usize::from(!tq.discrete.is_empty());
        }
        let share = held as f64 / q;
        let se_share = (holding * (1.0 - holding) / q).sqrt();
        assert!(
            (share - holding).abs() < 5.0 * se_share,
            "{name}: share {share} vs {holding}"
        );
        // Var of a query's count: λ/π + λ²(1 − π)/π  (Poisson(λ/π) with probability π).
        let pi = if name == "spread-even" { 1.0 } else { 0.3 };
        let se_mean = ((1.0 / pi + (1.0 - pi) / pi) / q).sqrt();
        let mean = items as f64 / q;
        assert!(
            (mean - 1.0).abs() < 5.0 * se_mean,
            "{name}: {mean} rare items per query"
        );
    }
}
