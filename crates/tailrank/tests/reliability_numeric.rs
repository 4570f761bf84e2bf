//! Numerical guards (property tests): the metric maps stay in [0, 1] and are monotone —
//! non-increasing in the pool size N and in every positive's hardness x̂ — for both maps; the
//! exact AP from ranks and from tie-grouped lists stays in [0, 1]; the bounded GPD fit never
//! returns NaN, keeps ξ in [−1, 0] and σ > 0, and its support contains every excess.

use proptest::prelude::*;
use tailrank::evt::fit_gpd_bounded;
use tailrank::hardness::{Branch, PositiveHardness, QueryHardness};
use tailrank::maps::{ap_at_k, hit_at_1, mean_ap_at_k, recall_at_k, MapKind};
use tailrank::metric::{ap_at_k_from_ranks, ap_at_k_ties};

const MAPS: [MapKind; 2] = [MapKind::ExpectedRank, MapKind::Binomial];
/// Slack for rounding in the binomial sums.
const EPS: f64 = 1e-12;

/// A query whose positives have hardness `xs` (sorted ascending: the best positive is the
/// easiest) and core counts `cs` (made non-decreasing).
fn query(xs: &[f64], cs: &[u64]) -> QueryHardness {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    let mut c = 0;
    QueryHardness {
        query_id: "q".into(),
        sample_size: 1000,
        tail: None,
        positives: xs
            .iter()
            .zip(cs.iter().chain(std::iter::repeat(&0)))
            .enumerate()
            .map(|(j, (&x, &cj))| {
                c = c.max(cj);
                PositiveHardness {
                    id: format!("p{j}"),
                    score: 1.0 - j as f32 / 100.0,
                    core_above: c,
                    pool_above: 0,
                    x_hat: x,
                    branch: Branch::Tail,
                }
            })
            .collect(),
    }
}

/// Hardness values spanning many decades, with exact zeros (immune positives) and ones.
fn hardness() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (-12.0f64..0.0).prop_map(|e| 10f64.powf(e)),
        1 => Just(0.0),
        1 => Just(1.0),
        1 => 0.0f64..1.0,
    ]
}

fn pool_size() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (0.0f64..10.0).prop_map(|e| 10f64.powf(e).round()),
        1 => (0u64..50u64).prop_map(|n| n as f64),
    ]
}

proptest! {
    #[test]
    fn maps_bounded_and_monotone_in_n(
        xs in prop::collection::vec(hardness(), 1..12),
        cs in prop::collection::vec(0u64..5, 0..12),
        n1 in pool_size(),
        n2 in pool_size(),
        k in prop_oneof![1usize..20, Just(100usize), Just(1000usize)],
    ) {
        let q = query(&xs, &cs);
        let (lo, hi) = if n1 <= n2 { (n1, n2) } else { (n2, n1) };
        for map in MAPS {
            let (a, b) = (ap_at_k(&q, lo, k, map), ap_at_k(&q, hi, k, map));
            prop_assert!((0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b), "{map:?}: {a} {b}");
            prop_assert!(b <= a + EPS, "{map:?}: AP rose with N: {a} at {lo}, {b} at {hi}");
            let (ra, rb) = (recall_at_k(&q, lo, k), recall_at_k(&q, hi, k));
            prop_assert!((0.0..=1.0 + EPS).contains(&ra) && rb <= ra + EPS, "{map:?}: {ra} {rb}");
            let (ha, hb) = (hit_at_1(&q, lo), hit_at_1(&q, hi));
            prop_assert!((0.0..=1.0).contains(&ha) && hb <= ha + EPS, "{map:?}: {ha} {hb}");
            let m = mean_ap_at_k(std::slice::from_ref(&q), hi, k, map);
            prop_assert!(!m.is_nan() && (0.0..=1.0).contains(&m));
        }
    }

    #[test]
    fn maps_monotone_in_hardness(
        xs in prop::collection::vec(hardness(), 1..10),
        which in any::<prop::sample::Index>(),
        factor in 1.0f64..1e6,
        n in pool_size(),
        k in prop_oneof![1usize..20, Just(1000usize)],
    ) {
        let q = query(&xs, &[]);
        let mut harder = q.clone();
        let j = which.index(harder.positives.len());
        let x = harder.positives[j].x_hat;
        harder.positives[j].x_hat = if x == 0.0 { 1e-9 } else { (x * factor).min(1.0) };
        // Keep x̂ non-decreasing along the positives (the better positive is not harder).
        for i in j + 1..harder.positives.len() {
            let prev = harder.positives[i - 1].x_hat;
            if harder.positives[i].x_hat < prev {
                harder.positives[i].x_hat = prev;
            }
        }
        for map in MAPS {
            let (a, b) = (ap_at_k(&q, n, k, map), ap_at_k(&harder, n, k, map));
            prop_assert!(b <= a + EPS, "{map:?}: a harder positive raised AP: {a} -> {b}");
            prop_assert!((0.0..=1.0).contains(&b));
        }
    }

    #[test]
    fn exact_ap_in_unit_interval(
        gaps in prop::collection::vec(0u64..50, 0..30),
        extra in 0usize..5,
        k in 0usize..200,
    ) {
        // Valid ranks: strictly increasing with r_j ≥ j.
        let mut r = 0.0;
        let ranks: Vec<f64> = gaps.iter().map(|&g| { r += 1.0 + g as f64; r }).collect();
        let ap = ap_at_k_from_ranks(&ranks, ranks.len() + extra, k);
        prop_assert!((0.0..=1.0 + EPS).contains(&ap), "{ap}");
        if extra == 0 && k >= ranks.len() && gaps.iter().all(|&g| g == 0) && !ranks.is_empty() {
            prop_assert!((ap - 1.0).abs() < EPS);
        }
    }

    #[test]
    fn tie_grouped_ap_in_unit_interval(
        items in prop::collection::vec((0u8..8, any::<bool>()), 0..60),
        extra in 0usize..4,
        k in 0usize..80,
    ) {
        let scores: Vec<f64> = items.iter().map(|&(s, _)| s as f64 / 8.0).collect();
        let rel: Vec<bool> = items.iter().map(|&(_, r)| r).collect();
        let n_pos = rel.iter().filter(|&&r| r).count() + extra;
        let ap = ap_at_k_ties(&scores, &rel, n_pos, k);
        prop_assert!(!ap.is_nan() && (0.0..=1.0 + EPS).contains(&ap), "{ap}");
    }

    #[test]
    fn gpd_fit_never_nan_and_support_covers_data(
        y in prop::collection::vec(
            prop_oneof![
                4 => 0.0f64..1.0,
                1 => (-300.0f64..300.0).prop_map(|e| 10f64.powf(e)),
                1 => Just(0.0),
                1 => Just(1e-300),
            ],
            1..60,
        ),
        scale in prop_oneof![Just(1.0), Just(1e-7), Just(1e7)],
        dup in 0usize..3,
    ) {
        let mut y: Vec<f64> = y.iter().map(|v| v * scale).filter(|v| v.is_finite()).collect();
        for _ in 0..dup {
            if let Some(&v) = y.first() { y.push(v); }
        }
        prop_assume!(!y.is_empty());
        match fit_gpd_bounded(&y) {
            None => prop_assert!(y.iter().all(|&v| v == 0.0), "no fit for {y:?}"),
            Some(f) => {
                let g = f.gpd;
                prop_assert!(g.sigma.is_finite() && g.sigma > 0.0, "sigma {}", g.sigma);
                prop_assert!((-1.0..=0.0).contains(&g.xi), "xi {}", g.xi);
                prop_assert!(!f.log_likelihood.is_nan(), "NaN log-likelihood");
                prop_assert!(f.log_likelihood > f64::NEG_INFINITY, "data outside the support");
                let ymax = y.iter().copied().fold(0.0, f64::max);
                prop_assert!(g.endpoint() >= ymax, "endpoint {} < max {ymax}", g.endpoint());
                prop_assert_eq!(f.n, y.len());
            }
        }
    }
}

#[test]
fn gpd_fit_refuses_non_excesses() {
    assert!(fit_gpd_bounded(&[]).is_none());
    assert!(fit_gpd_bounded(&[0.1, f64::NAN]).is_none());
    assert!(fit_gpd_bounded(&[0.1, -0.2]).is_none());
    assert!(fit_gpd_bounded(&[0.1, f64::INFINITY]).is_none());
}
