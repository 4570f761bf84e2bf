//! Properties of the summary-level simulator that hold on every seed: determinism, nested and
//! monotone counts, counts consistent with the top-M lists, truth consistent with its counts
//! and monotone in N, and the expected-rank identity on realized fractions.

use tailrank::hardness::{Branch, PositiveHardness, QueryHardness};
use tailrank::maps::{self, MapKind};
use tailrank::metric::ap_at_k_from_ranks;
use tailrank::simulate::{simulate_summary, SimConfig, Simulation};
use tailrank::summary::SubsetKind;

fn small(preset: &str, seed: u64) -> Simulation {
    let mut cfg = SimConfig::preset(preset, seed).unwrap().with_queries(120);
    cfg.pool_size = 20_000_000;
    cfg.truth_pool_sizes = vec![2_000_000, 5_000_000, 10_000_000];
    simulate_summary(&cfg).unwrap()
}

#[test]
fn deterministic_in_the_seed() {
    let a = small("ilias-like", 7);
    let b = small("ilias-like", 7);
    assert_eq!(a.summary, b.summary);
    assert_eq!(a.truth, b.truth);
    let c = small("ilias-like", 8);
    assert_ne!(a.summary, c.summary);
}

#[test]
fn structure_counts_nested_and_monotone() {
    for (preset, seed) in [("ilias-like", 1), ("mixture-tail", 2)] {
        let sim = small(preset, seed);
        let s = &sim.summary;
        let levels = s.level_indices();
        let shards = s.shard_indices();
        assert_eq!(levels.len(), 5);
        assert_eq!(shards.len(), 4);
        assert_eq!(levels[0], 0);
        // Sizes: nested levels roughly halving, shards partition level 0.
        for w in levels.windows(2) {
            assert!(s.subset_sizes[w[1]] <= s.subset_sizes[w[0]]);
            let r = s.subset_sizes[w[1]] as f64 / s.subset_sizes[w[0]] as f64;
            assert!((r - 0.5).abs() < 0.01, "level ratio {r}");
            assert_eq!(s.subsets[w[1]].kind, SubsetKind::Level);
        }
        let shard_total: u64 = shards.iter().map(|&i| s.subset_sizes[i]).sum();
        assert_eq!(shard_total, s.subset_sizes[0]);
        // Hash ranges: levels nested, shards adjacent inside level 0.
        assert_eq!(s.subsets[shards[0]].range.lo, 0);
        assert_eq!(
            s.subsets[*shards.last().unwrap()].range.hi,
            s.subsets[0].range.hi
        );
        let n_s = s.subset_sizes[0] as f64 / s.pool_size.unwrap() as f64;
        assert!((n_s - 0.05).abs() < 0.001);

        let mut positives = 0;
        for (q, t) in s.queries.iter().zip(&sim.truth.queries) {
            assert_eq!(q.id, t.id);
            assert_eq!(q.top_scores.len(), s.subsets.len());
            for (i, top) in q.top_scores.iter().enumerate() {
                let kept = s.subsets[i].kept(s.top_m) as u64;
                assert_eq!(top.len() as u64, s.subset_sizes[i].min(kept));
                assert!(top.windows(2).all(|w| w[0] >= w[1]), "top-M sorted");
            }
            for (j, p) in q.positives.iter().enumerate() {
                positives += 1;
                // Nested levels and the shard partition.
                for w in levels.windows(2) {
                    assert!(p.pool_above[w[1]] <= p.pool_above[w[0]]);
                }
                let by_shards: u64 = shards.iter().map(|&i| p.pool_above[i]).sum();
                assert_eq!(by_shards, p.pool_above[0]);
                // Counts agree with the top-M list wherever the list resolves them.
                for (i, top) in q.top_scores.iter().enumerate() {
                    let above = top.iter().filter(|&&v| v > p.score).count() as u64;
                    if above < top.len() as u64 {
                        assert_eq!(p.pool_above[i], above, "{} subset {i}", p.id);
                    } else {
                        assert!(p.pool_above[i] >= above);
                    }
                }
                // Full pool: sample counts plus non-negative increments.
                let tp = &t.positives[j];
                assert_eq!(tp.id, p.id);
                assert!(tp.pool_above_n >= p.pool_above[0]);
                assert_eq!(tp.core_above, p.core_above);
                if j > 0 {
                    let prev = &q.positives[j - 1];
                    assert!(prev.score >= p.score, "positives sorted by score");
                    assert!(prev.core_above <= p.core_above);
                    for i in 0..s.subsets.len() {
                        assert!(prev.pool_above[i] <= p.pool_above[i], "monotone in j");
                    }
                    assert!(t.positives[j - 1].pool_above_n <= tp.pool_above_n);
                    assert!(t.positives[j - 1].x <= tp.x);
                }
            }
        }
        assert!(positives > 400);
    }
}

#[test]
fn truth_consistent_and_monotone_in_n() {
    let sim = small("ilias-like", 3);
    let (s, t) = (&sim.summary, &sim.truth);
    let k = t.k;
    let n = t.pool_size as f64;
    // The truth is the exact metric on its own counts, and the expected-rank map fed with the
    // realized fractions K^N/N reproduces it (docs/method.md §7 identity).
    let mut exact = 0.0;
    let mut via_map = 0.0;
    for q in &t.queries {
        let ranks: Vec<f64> = q
            .positives
            .iter()
            .enumerate()
            .map(|(j, p)| (j + 1) as f64 + p.core_above as f64 + p.pool_above_n as f64)
            .collect();
        let ap = ap_at_k_from_ranks(&ranks, q.positives.len(), k);
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
        via_map += maps::ap_at_k(&h, n, k, MapKind::ExpectedRank);
    }
    let nq = t.queries.len() as f64;
    assert!((exact / nq - t.map_at_k).abs() < 1e-12);
    assert!((via_map / nq - t.map_at_k).abs() < 1e-9);
    // Monotone in N: nested pools from S to N, then the nested sample levels below S.
    assert_eq!(t.curve.last().unwrap().pool_size, t.pool_size);
    for w in t.curve.windows(2) {
        assert!(w[0].pool_size < w[1].pool_size);
        assert!(w[1].map_at_k <= w[0].map_at_k + 1e-12, "{:?}", t.curve);
    }
    assert!(t.curve[0].map_at_k <= t.levels[0].map_at_k + 1e-12);
    for w in t.levels.windows(2) {
        assert!(w[0].sample_size >= w[1].sample_size);
        assert!(w[0].map_at_k <= w[1].map_at_k + 1e-12);
    }
    assert_eq!(t.levels[0].sample_size, s.subset_sizes[0]);
    // The realized truth is in the ILIAS-like range and below evaluate-at-S.
    assert!(t.map_at_k > 0.1 && t.map_at_k < 0.6, "{}", t.map_at_k);
    assert!(t.levels[0].map_at_k - t.map_at_k > 0.03);
}

#[test]
fn truth_json_round_trip_and_bad_file() {
    let sim = small("mixture-tail", 4);
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("truth.json");
    sim.truth.write(&p).unwrap();
    let back = tailrank::simulate::Truth::read(&p).unwrap();
    assert_eq!(back.map_at_k, sim.truth.map_at_k);
    assert_eq!(back.queries.len(), sim.truth.queries.len());
    assert_eq!(
        back.queries[0].law.components.len(),
        2,
        "two-component tail"
    );
    std::fs::write(&p, b"{\"not\": \"a truth\"}").unwrap();
    let e = tailrank::simulate::Truth::read(&p).unwrap_err().to_string();
    assert!(e.contains("truth.json"), "{e}");
}

#[test]
fn bad_configs_are_errors() {
    assert!(SimConfig::preset("nope", 0).is_err());
    let mut cfg = SimConfig::preset("ilias-like", 0).unwrap().with_queries(5);
    cfg.fraction = 0.0;
    assert!(simulate_summary(&cfg).is_err());
    cfg.fraction = 0.05;
    cfg.pool_size = 10;
    assert!(simulate_summary(&cfg).is_err());
}
