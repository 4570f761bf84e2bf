//! Hardness-to-metric maps (maps.rs): the realized-fraction identity against an explicit ranked
//! list, the binomial map against scipy.stats.binom, monotonicity, bounds, and the grid.

use tailrank_test_support::python as common;

use proptest::prelude::*;
use tailrank::hardness::{Branch, PositiveHardness, QueryHardness};
use tailrank::maps::{
    ap_at_k, binomial_cdf, hit_at_1, log_grid, mean_ap_at_k, recall_at_k, MapKind,
};

/// Hardness from a law, not from a sample (S = 0): the count law is `Binomial(N, x̂)`.
fn query(core: &[u64], x: &[f64]) -> QueryHardness {
    QueryHardness {
        query_id: "q".into(),
        sample_size: 0,
        tail: None,
        positives: core
            .iter()
            .zip(x)
            .enumerate()
            .map(|(i, (&c, &x))| PositiveHardness {
                id: format!("p{i}"),
                score: 1.0 - i as f32 * 1e-3,
                core_above: c,
                pool_above: 0,
                x_hat: x,
                branch: Branch::Tail,
            })
            .collect(),
    }
}

/// AP@k, Recall@k and hit@1 from an explicit ranked list (no ties): positive j sits at rank
/// `j + C_j + K_j`; precision at each relevant rank ≤ k, divided by min(k, n).
fn explicit_metrics(core: &[u64], pool: &[u64], k: usize) -> (f64, f64, f64) {
    let n = core.len();
    let mut relevant = vec![false; k + 1];
    let mut found = 0;
    for j in 0..n {
        let r = (j as u64 + 1 + core[j] + pool[j]) as usize;
        if r <= k {
            relevant[r] = true;
            found += 1;
        }
    }
    let (mut hits, mut sum) = (0usize, 0.0);
    for (i, &rel) in relevant.iter().enumerate().skip(1) {
        if rel {
            hits += 1;
            sum += hits as f64 / i as f64;
        }
    }
    let hit1 = if relevant.get(1) == Some(&true) {
        1.0
    } else {
        0.0
    };
    (sum / k.min(n) as f64, found as f64 / n as f64, hit1)
}

/// Non-decreasing sequences: positives sorted by score have non-decreasing C_j and K_j.
fn monotone(v: Vec<u64>) -> Vec<u64> {
    let mut acc = 0;
    v.iter()
        .map(|d| {
            acc += d;
            acc
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]
    /// Fed with realized fractions x = K/N, the expected-rank map is the exact metric.
    #[test]
    fn realized_fractions_reproduce_exact_metric(
        dc in prop::collection::vec(prop_oneof![Just(0u64), 0u64..5, 0u64..200], 1..25),
        dk in prop::collection::vec(prop_oneof![Just(0u64), 0u64..10, 0u64..500], 25),
        extra in prop_oneof![0u64..10, 0u64..1_000_000_000, Just(9_999_999_937u64)],
        k in prop_oneof![1usize..5, 1usize..2000],
    ) {
        let core = monotone(dc);
        let pool = monotone(dk[..core.len()].to_vec());
        let n_pool = (*pool.last().unwrap() + extra).max(1);
        let x: Vec<f64> = pool.iter().map(|&kk| kk as f64 / n_pool as f64).collect();
        let mut q = query(&core, &x);
        let (ap, rec, hit) = explicit_metrics(&core, &pool, k);
        let nf = n_pool as f64;
        prop_assert!((ap_at_k(&q, nf, k, MapKind::ExpectedRank) - ap).abs() < 1e-12);
        // A whole-pool scan (S = N, K_S = K): the count law is the point mass at K, so
        // Recall@k and hit@1 are the exact ones too.
        q.sample_size = n_pool;
        for (p, &kk) in q.positives.iter_mut().zip(&pool) {
            p.pool_above = kk;
        }
        prop_assert_eq!(recall_at_k(&q, nf, k), rec);
        prop_assert_eq!(hit_at_1(&q, nf), hit);
    }

    /// Metrics lie in [0, 1] and never increase with N or with any x̂_j.
    #[test]
    fn bounded_and_monotone(
        dc in prop::collection::vec(prop_oneof![Just(0u64), 0u64..3, 0u64..50], 1..12),
        lx in prop::collection::vec(-16.0f64..-1.0, 12),
        zero in prop::collection::vec(prop::bool::weighted(0.2), 12),
        ln1 in 2.0f64..10.0,
        dln in 0.0f64..2.0,
        bump in 0usize..12,
        factor in 1.0f64..100.0,
        k in prop_oneof![1usize..4, 1usize..1200],
    ) {
        let core = monotone(dc);
        let n = core.len();
        let x: Vec<f64> = (0..n).map(|i| if zero[i] { 0.0 } else { 10f64.powf(lx[i]) }).collect();
        let q = query(&core, &x);
        let mut x2 = x.clone();
        let b = bump % n;
        x2[b] = (x2[b].max(1e-17) * factor).min(1.0);
        let q2 = query(&core, &x2);
        let (n1, n2) = (10f64.powf(ln1), 10f64.powf(ln1 + dln));
        for map in [MapKind::ExpectedRank, MapKind::Binomial] {
            let a1 = ap_at_k(&q, n1, k, map);
            let a2 = ap_at_k(&q, n2, k, map);
            let a3 = ap_at_k(&q2, n1, k, map);
            prop_assert!((0.0..=1.0).contains(&a1), "{:?} {}", map, a1);
            prop_assert!(a2 <= a1 + 1e-12, "{:?}: N {} → {}: {} → {}", map, n1, n2, a1, a2);
            prop_assert!(a3 <= a1 + 1e-12, "{:?}: x̂ up: {} → {}", map, a1, a3);
            let r1 = recall_at_k(&q, n1, k);
            let r2 = recall_at_k(&q, n2, k);
            prop_assert!((0.0..=1.0).contains(&r1) && r2 <= r1 + 1e-12);
            let h1 = hit_at_1(&q, n1);
            let h2 = hit_at_1(&q, n2);
            prop_assert!((0.0..=1.0).contains(&h1) && h2 <= h1 + 1e-12);
        }
    }
}

#[test]
fn binomial_map_matches_scipy() {
    // One query with positives spanning the regimes: x̂ = 0, N x̂ ≪ 1, ≈ 1, ≈ k, ≫ k.
    let core = [0u64, 0, 2, 5, 5, 9, 40];
    let x = [0.0, 1e-15, 1.3e-10, 4e-9, 7e-8, 2e-6, 1e-9];
    let n_pool = 1e10;
    let q = query(&core, &x);
    let code = r#"
import sys, numpy as np
from scipy import stats
N = float(sys.argv[1])
core = [int(v) for v in sys.argv[3].split(',')]
x = [float(v) for v in sys.argv[4].split(',')]
for k in [int(v) for v in sys.argv[2].split(',')]:
    n = len(x); ap = 0.0; rec = 0.0
    for j0, (c, p) in enumerate(zip(core, x)):
        j = j0 + 1; m = k - j - c
        if m < 0: continue
        i = np.arange(m + 1)
        pmf = stats.binom.pmf(i, N, p)
        ap += j * float(np.sum(pmf / (j + c + i)))
        rec += float(stats.binom.cdf(m, N, p))
    hit = float(stats.binom.pmf(0, N, x[0])) if core[0] == 0 else 0.0
    print(repr(ap / min(k, n)), repr(rec / n), repr(hit))
"#;
    let join = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:e}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let cj = core
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let ks = [1usize, 3, 10, 100, 1000];
    let karg = ks
        .iter()
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let out = common::run_python(code, &[&n_pool.to_string(), &karg, &cj, &join(&x)]);
    for (&k, line) in ks.iter().zip(out.lines()) {
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect();
        let ap = ap_at_k(&q, n_pool, k, MapKind::Binomial);
        let rec = recall_at_k(&q, n_pool, k);
        let hit = hit_at_1(&q, n_pool);
        assert!(
            (ap - v[0]).abs() < 1e-10,
            "k = {k}: AP {ap} vs scipy {}",
            v[0]
        );
        assert!(
            (rec - v[1]).abs() < 1e-10,
            "k = {k}: recall {rec} vs scipy {}",
            v[1]
        );
        assert!((hit - v[2]).abs() < 1e-12, "hit {hit} vs scipy {}", v[2]);
    }
    // hit@1 ≈ exp(−N x̂_1) when C_1 = 0.
    let q1 = query(&[0], &[3e-10]);
    assert!((hit_at_1(&q1, 1e10) - (-3.0f64).exp()).abs() < 1e-9);
    assert_eq!(hit_at_1(&query(&[1], &[0.0]), 1e10), 0.0);
    assert_eq!(binomial_cdf(1e10, 0.0, 0), 1.0);
    assert_eq!(binomial_cdf(20.0, 1.0, 19), 0.0);
    assert_eq!(binomial_cdf(20.0, 1.0, 20), 1.0);
}

#[test]
fn binomial_map_matches_monte_carlo() {
    // Small N, so direct simulation of K_j ~ Binomial(N, x̂_j) is cheap; splitmix64 draws.
    let core = [0u64, 1, 1, 3];
    let x = [0.002, 0.01, 0.03, 0.05];
    let (n_pool, k) = (200u64, 12usize);
    let q = query(&core, &x);
    let mut state = 0x1234_5678u64;
    let mut uniform = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let reps = 40_000;
    let mut sum = 0.0;
    for _ in 0..reps {
        let mut s = 0.0;
        for (j, (&c, &p)) in core.iter().zip(&x).enumerate() {
            let kk = (0..n_pool).filter(|_| uniform() < p).count() as u64;
            let r = j as u64 + 1 + c + kk;
            if r <= k as u64 {
                s += (j + 1) as f64 / r as f64;
            }
        }
        sum += s / k.min(core.len()) as f64;
    }
    let mc = sum / reps as f64;
    let exact = ap_at_k(&q, n_pool as f64, k, MapKind::Binomial);
    // Standard error of the Monte Carlo mean is below 0.002 here.
    assert!(
        (mc - exact).abs() < 0.006,
        "MC {mc} vs binomial map {exact}"
    );
}

#[test]
fn tiny_expected_counts_make_the_maps_agree() {
    let core = [0u64, 1, 1, 4, 30];
    let x = [1e-15, 3e-14, 1e-13, 5e-13, 2e-12];
    let q = query(&core, &x);
    for k in [1usize, 5, 100] {
        let e = ap_at_k(&q, 1e6, k, MapKind::ExpectedRank);
        let b = ap_at_k(&q, 1e6, k, MapKind::Binomial);
        assert!((e - b).abs() < 1e-6, "k = {k}: {e} vs {b}");
    }
    // x̂ = 0: the deterministic term j/(j + C_j) whenever j + C_j ≤ k, at any N.
    let q0 = query(&[0, 2], &[0.0, 0.0]);
    let want = (1.0 + 2.0 / 4.0) / 2.0;
    for map in [MapKind::ExpectedRank, MapKind::Binomial] {
        assert!((ap_at_k(&q0, 1e10, 10, map) - want).abs() < 1e-15);
        assert!((ap_at_k(&q0, f64::INFINITY, 10, map) - want).abs() < 1e-15);
        assert_eq!(ap_at_k(&q0, 1e10, 3, map), 0.5);
    }
    assert_eq!(hit_at_1(&q0, 1e10), 1.0);
}

#[test]
fn mean_and_edge_cases() {
    let a = query(&[0], &[0.0]);
    let b = query(&[0, 0], &[1e-3, 2e-3]);
    let empty = query(&[], &[]);
    for map in [MapKind::ExpectedRank, MapKind::Binomial] {
        let m = mean_ap_at_k(&[a.clone(), b.clone(), empty.clone()], 1e4, 100, map);
        let want = (ap_at_k(&a, 1e4, 100, map) + ap_at_k(&b, 1e4, 100, map)) / 3.0;
        assert!((m - want).abs() < 1e-15);
        assert_eq!(ap_at_k(&empty, 1e4, 100, map), 0.0);
        assert_eq!(ap_at_k(&a, 1e4, 0, map), 0.0);
        // N·x̂ = 10 and 20: the expected-rank ranks are 11 and 22.
        assert!(mean_ap_at_k(&[], 1e4, 100, map).is_nan());
    }
    assert_eq!(recall_at_k(&empty, 1e4, 10), 0.0);
    assert_eq!(hit_at_1(&empty, 1e4), 0.0);
    let want = (1.0 / 11.0 + 2.0 / 22.0) / 2.0;
    assert!((ap_at_k(&b, 1e4, 100, MapKind::ExpectedRank) - want).abs() < 1e-15);
    assert_eq!(
        ap_at_k(&b, 1e4, 21, MapKind::ExpectedRank),
        1.0 / 11.0 / 2.0
    );
    assert_eq!(
        MapKind::parse(MapKind::Binomial.as_str()),
        Some(MapKind::Binomial)
    );
}

#[test]
fn log_grid_spans_the_decades() {
    let g = log_grid(1e3, 1e9, 4);
    assert_eq!(g.len(), 25);
    assert_eq!(g[0], 1e3);
    assert_eq!(g[24], 1e9);
    assert_eq!(g[4], 1e4);
    for w in g.windows(2) {
        assert!((w[1] / w[0] - 10f64.powf(0.25)).abs() < 1e-12);
    }
    let g = log_grid(1e3, 5e3, 2);
    assert_eq!(g.len(), 3);
    assert_eq!(g[2], 5e3);
    assert_eq!(log_grid(7.0, 7.0, 3), vec![7.0]);
    assert!(log_grid(0.0, 10.0, 3).is_empty());
    assert!(log_grid(10.0, 1.0, 3).is_empty());
    assert!(log_grid(1.0, 10.0, 0).is_empty());
}

/// The count law given a sample (maps::CountLaw): `K_N = K_S + Binomial(N − S, x̂)` for
/// N ≥ S, `Binomial(K_S, N/S)` for a nested sub-sample N < S; Recall@k and hit@1 are its
/// probabilities, checked against scipy.stats.binom, whatever the map.
#[test]
fn recall_and_hit_follow_the_count_law_given_the_sample() {
    let core = [0u64, 0, 1, 4];
    let x = [2e-9, 5e-8, 3e-7, 1e-6];
    let pool = [0u64, 2, 9, 40];
    let s = 5_000_000u64;
    let mut q = query(&core, &x);
    q.sample_size = s;
    for (p, &kk) in q.positives.iter_mut().zip(&pool) {
        p.pool_above = kk;
    }
    let code = r#"
import sys
from scipy import stats
S = int(sys.argv[1]); core = [int(v) for v in sys.argv[3].split(',')]
x = [float(v) for v in sys.argv[4].split(',')]; K = [int(v) for v in sys.argv[5].split(',')]
for N in [int(v) for v in sys.argv[2].split(',')]:
    for k in (1, 10, 100):
        rec = 0.0
        for j0, (c, p, kk) in enumerate(zip(core, x, K)):
            m = k - (j0 + 1) - c
            if m < 0: continue
            if N >= S: rec += float(stats.binom.cdf(m - kk, N - S, p)) if m >= kk else 0.0
            else: rec += float(stats.binom.cdf(m, kk, N / S))
        if N >= S: hit = float(stats.binom.pmf(0, N - S, x[0])) if core[0] == 0 and K[0] == 0 else 0.0
        else: hit = float(stats.binom.pmf(0, K[0], N / S)) if core[0] == 0 else 0.0
        print(repr(rec / len(x)), repr(hit))
"#;
    let list = |v: &[String]| v.join(",");
    let ns = [1_000_000u64, s, 20_000_000, 100_000_000];
    let out = common::run_python(
        code,
        &[
            &s.to_string(),
            &list(&ns.map(|n| n.to_string())),
            &list(&core.map(|c| c.to_string())),
            &list(&x.map(|v| format!("{v:e}"))),
            &list(&pool.map(|c| c.to_string())),
        ],
    );
    let mut lines = out.lines();
    for &n in &ns {
        for k in [1usize, 10, 100] {
            let v: Vec<f64> = lines
                .next()
                .expect("a line per (N, k)")
                .split_whitespace()
                .map(|t| t.parse().unwrap())
                .collect();
            let (rec, hit) = (recall_at_k(&q, n as f64, k), hit_at_1(&q, n as f64));
            assert!(
                (rec - v[0]).abs() < 1e-10,
                "N {n} k {k}: recall {rec} vs {}",
                v[0]
            );
            assert!((hit - v[1]).abs() < 1e-12, "N {n}: hit {hit} vs {}", v[1]);
        }
    }
    // At N = S the law is the point mass at K_S: the realized metrics of the sample.
    assert_eq!(hit_at_1(&q, s as f64), 1.0);
    // Ranks j + C_j + K_S: 1, 4, 13, 48.
    assert_eq!(recall_at_k(&q, s as f64, 10), 2.0 / 4.0);
    // A positive the sample already outranks is never a hit, however small its x̂.
    let mut q2 = q.clone();
    q2.positives[0].pool_above = 1;
    assert_eq!(hit_at_1(&q2, 1e8), 0.0);
    // Any tiny non-zero x̂ no longer means a miss: hit@1 ≈ exp(−(N − S)·x̂_1).
    let h = hit_at_1(&q, 1e8);
    assert!(
        (h - (-(1e8 - s as f64) * 2e-9f64).exp()).abs() < 1e-9,
        "{h}"
    );
}
