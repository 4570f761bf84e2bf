//! Unit tests of the vector-level geometries (`super`).

use super::*;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn small(geometry: &str) -> VectorConfig {
    let mut c = VectorConfig::for_geometry(geometry).unwrap();
    c.dim = 64;
    c.instances = 40;
    c.pool_size = 8192;
    c.clusters = 50;
    if let Geometry::Burst { burst_size, .. } = &mut c.geometry {
        *burst_size = [30, 60];
    }
    c
}

fn rows(l: &Layout, c: &VectorConfig) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    for b in 0..c.pool_size.div_ceil(GEN_BLOCK) {
        let mut r = rng(c.seed, 1, b);
        for row in b * GEN_BLOCK..((b + 1) * GEN_BLOCK).min(c.pool_size) {
            out.push(l.pool_row(c.seed, row, &mut r));
        }
    }
    out
}

/// Bursts: 30–60 copies per burst, all within cosine 0.99 of each other, each burst tied to
/// an instance; the background's energy sits in the first few dimensions (the spectrum).
#[test]
fn burst_copies_are_present_and_near_identical() {
    let c = small("burst");
    let l = Layout::new(&c).unwrap();
    assert!(!l.points.is_empty());
    let pool = rows(&l, &c);
    for (p, inst) in l.point_instance.iter().enumerate() {
        assert!(inst.is_some());
        let copies: Vec<&Vec<f64>> = l
            .special
            .iter()
            .filter(|(_, &q)| q as usize == p)
            .map(|(&r, _)| &pool[r as usize])
            .collect();
        assert!((30..=60).contains(&copies.len()), "{}", copies.len());
        for a in &copies {
            assert!(dot(a, copies[0]) > 0.99);
        }
    }
    // The spectrum dominates: the first 4 of 64 dimensions carry most background energy.
    let bg: Vec<&Vec<f64>> = (0..c.pool_size)
        .filter(|r| !l.special.contains_key(r))
        .map(|r| &pool[r as usize])
        .collect();
    let top: f64 = bg
        .iter()
        .map(|v| v[..4].iter().map(|x| x * x).sum::<f64>())
        .sum();
    let all: f64 = bg.iter().map(|v| dot(v, v)).sum();
    assert!(top / all > 0.5, "top-4 energy share {}", top / all);
}

/// Cone: pool cosines sit in a narrow, high band (isotropic rows would be ≈ 0 ± 1/√D);
/// a hub copy ranks in the pool's top 5% for most queries (a background row does so for
/// 5% of them; queries of the largest Zipf topics have many same-topic rows above it).
#[test]
fn cone_is_narrow_and_hubs_score_high_for_many_queries() {
    let c = small("cone");
    let l = Layout::new(&c).unwrap();
    let pool = rows(&l, &c);
    let mut cos: Vec<f64> = Vec::new();
    for i in (0..pool.len()).step_by(41) {
        for j in (i + 1..pool.len()).step_by(97) {
            cos.push(dot(&pool[i], &pool[j]));
        }
    }
    cos.sort_by(f64::total_cmp);
    let q = |p: f64| cos[((cos.len() - 1) as f64 * p) as usize];
    assert!(cos[0] > 0.3, "min cosine {}", cos[0]);
    assert!(q(0.95) - q(0.05) < 0.3, "band {} … {}", q(0.05), q(0.95));
    let hub_rows: Vec<u64> = l.special.keys().copied().collect();
    assert_eq!(hub_rows.len(), 20 * 5);
    let mut high = 0;
    for qv in &l.queries {
        let mut s: Vec<f64> = pool.iter().map(|v| dot(v, qv)).collect();
        let best_hub = hub_rows
            .iter()
            .map(|&r| s[r as usize])
            .fold(f64::MIN, f64::max);
        s.sort_by(|a, b| b.total_cmp(a));
        if best_hub >= s[pool.len() / 20] {
            high += 1;
        }
    }
    assert!(
        high * 2 > l.queries.len(),
        "hubs in the top 5% for {high} of {} queries",
        l.queries.len()
    );
}

#[test]
fn unknown_geometry_and_overfull_pool_are_errors() {
    assert!(Geometry::by_name("sphere").is_err());
    let mut c = small("burst");
    c.pool_size = 100;
    assert!(Layout::new(&c).is_err());
}
