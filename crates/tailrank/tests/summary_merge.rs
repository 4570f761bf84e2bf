//! `Summary::merge`: merging the summaries of disjoint shards equals the brute-force summary of
//! their union (counts add, top-M lists merge), and every incompatibility is refused.

use tailrank_test_support::summary_util;

use summary_util::{build, Rng, Settings, World};
use tailrank::summary::Summary;

/// Split the pool into `k` random disjoint shards.
fn shards(w: &World, k: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = Rng(seed);
    let mut out = vec![Vec::new(); k];
    for i in 0..w.pool_ids.len() {
        out[rng.below(k as u64) as usize].push(i);
    }
    out
}

fn sampled_settings() -> Settings {
    Settings {
        fraction: 0.4,
        min_fraction: 0.05,
        shards: 4,
        seed: 99,
        top_m: 40,
        pool_size: Some(1_000_000),
    }
}

const LABELS: [&str; 3] = ["shard-a.npy", "shard-b.npy", "shard-c.npy"];

#[test]
fn merged_shards_equal_the_whole_sampled() {
    let w = World::random(5, 10, 25, 3000);
    let st = sampled_settings();
    let parts = shards(&w, 3, 1);
    let named: Vec<(&str, Vec<usize>)> = LABELS.iter().copied().zip(parts.clone()).collect();
    let whole = build(&w, &named, &st);
    let each: Vec<Summary> = named
        .iter()
        .map(|p| build(&w, std::slice::from_ref(p), &st))
        .collect();
    let merged = Summary::merge(&each).unwrap();
    assert_eq!(merged, whole);
    // The top lists were truncated by the merge (M smaller than the shards).
    assert!(whole.queries[0].top_scores[0].len() == st.top_m);
    // Associative, and order-free up to the order of the pool inputs.
    let ab = Summary::merge(&each[..2]).unwrap();
    assert_eq!(Summary::merge(&[ab, each[2].clone()]).unwrap(), whole);
    let mut rev = Summary::merge(&[each[2].clone(), each[1].clone(), each[0].clone()]).unwrap();
    rev.inputs
        .sort_by(|a, b| a.role.cmp(&b.role).then(a.path.cmp(&b.path)));
    let mut sorted_whole = whole.clone();
    sorted_whole
        .inputs
        .sort_by(|a, b| a.role.cmp(&b.role).then(a.path.cmp(&b.path)));
    assert_eq!(rev, sorted_whole);
    // A single part merges to itself.
    assert_eq!(Summary::merge(&each[..1]).unwrap(), each[0]);
}

#[test]
fn merged_exact_shards_equal_the_whole_and_add_pool_sizes() {
    let w = World::random(6, 7, 15, 1200);
    let parts = shards(&w, 2, 2);
    let exact = |n: Option<u64>| Settings {
        fraction: 1.0,
        min_fraction: 0.25,
        shards: 2,
        seed: 0,
        top_m: 100,
        pool_size: n,
    };
    // What `tailrank scan` records by default with f = 1: N = the rows of the shard scanned.
    let each: Vec<Summary> = LABELS
        .iter()
        .zip(&parts)
        .map(|(l, p)| build(&w, &[(l, p.clone())], &exact(Some(p.len() as u64))))
        .collect();
    let named: Vec<(&str, Vec<usize>)> = LABELS.iter().copied().zip(parts.clone()).collect();
    let whole = build(&w, &named, &exact(Some(1200)));
    let merged = Summary::merge(&each).unwrap();
    assert_eq!(merged, whole);
    assert!(merged.is_exact());
    // N unknown everywhere stays unknown.
    let each: Vec<Summary> = LABELS
        .iter()
        .zip(&parts)
        .map(|(l, p)| build(&w, &[(l, p.clone())], &exact(None)))
        .collect();
    assert_eq!(Summary::merge(&each).unwrap().pool_size, None);
    // N of the whole pool given to every shard is kept.
    let each: Vec<Summary> = LABELS
        .iter()
        .zip(&parts)
        .map(|(l, p)| build(&w, &[(l, p.clone())], &exact(Some(1200))))
        .collect();
    assert_eq!(Summary::merge(&each).unwrap(), whole);
}

#[test]
fn merge_round_trips_through_files() {
    let d = tempfile::tempdir().unwrap();
    let w = World::random(8, 6, 20, 1500);
    let st = sampled_settings();
    let named: Vec<(&str, Vec<usize>)> = LABELS.iter().copied().zip(shards(&w, 3, 3)).collect();
    let whole = build(&w, &named, &st);
    let read: Vec<Summary> = named
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = d.path().join(format!("part{i}"));
            build(&w, std::slice::from_ref(p), &st)
                .write(&path)
                .unwrap();
            Summary::read(&path).unwrap()
        })
        .collect();
    let out = d.path().join("merged");
    Summary::merge(&read).unwrap().write(&out).unwrap();
    assert_eq!(Summary::read(&out).unwrap(), whole);
}

fn err(parts: &[Summary]) -> String {
    Summary::merge(parts)
        .expect_err("merge must refuse")
        .to_string()
}

#[test]
fn merge_refuses_incompatible_parts() {
    let w = World::random(9, 5, 20, 800);
    let st = sampled_settings();
    let p = shards(&w, 2, 4);
    let a = build(&w, &[("a.npy", p[0].clone())], &st);
    let b = build(&w, &[("b.npy", p[1].clone())], &st);

    assert!(err(&[]).contains("no summaries"));
    let e = err(&[a.clone(), b.clone(), a.clone()]);
    assert!(
        e.contains("overlapping shards") && e.contains("a.npy"),
        "{e}"
    );

    let check = |f: &dyn Fn(&mut Summary), needle: &str| {
        let mut c = b.clone();
        f(&mut c);
        let e = err(&[a.clone(), c]);
        assert!(
            e.contains(needle) && e.contains("part 2"),
            "{e:?} should mention {needle:?}"
        );
    };
    check(&|s| s.model = "other".into(), "model");
    check(&|s| s.query_set = "text".into(), "query set");
    check(&|s| s.seed += 1, "seed");
    check(&|s| s.fraction = 0.2, "fraction");
    check(&|s| s.top_m = 39, "M");
    check(&|s| s.core_size += 1, "core size");
    check(&|s| s.subsets[1].range.hi -= 1, "subset 1 is Level");
    check(&|s| s.queries[2].id = "zz".into(), "query ids");
    check(&|s| s.queries.truncate(4), "number of queries");
    check(
        &|s| {
            s.queries[1].positives[0].score =
                f32::from_bits(s.queries[1].positives[0].score.to_bits() + 1)
        },
        "score of positive",
    );
    check(&|s| s.queries[1].positives[0].core_above += 1, "C_j");
    check(
        &|s| s.queries[3].positives[0].id = "core/x".into(),
        "positives of query",
    );
    check(
        &|s| s.inputs[1].digest = "xxh3:1234".into(),
        "was scanned from another",
    );
    check(&|s| s.pool_size = Some(2_000_000), "pool sizes N");
    // An inconsistent part is named.
    let mut c = b.clone();
    c.subset_sizes.pop();
    assert!(err(&[a.clone(), c]).contains("part 2 is inconsistent"));
}

#[test]
fn merge_refuses_overlapping_pools_by_content() {
    // Issue #17: pool identity is by ids, not by file digest.
    let w = World::random(21, 5, 20, 900);
    let st = sampled_settings();
    let p = shards(&w, 2, 8);
    let a = build(&w, &[("a.npy", p[0].clone())], &st);
    let b = build(&w, &[("b.npy", p[1].clone())], &st);
    // The same rows re-encoded under another name (f16 instead of f32: another digest).
    let a16 = build(&w, &[("a.f16.npy", p[0].clone())], &st);
    assert_ne!(a.inputs[2].digest, a16.inputs[2].digest);
    let e = err(&[a.clone(), b.clone(), a16.clone()]);
    assert!(
        e.contains("overlapping pools")
            && e.contains("part 1 (a.npy)")
            && e.contains("part 3 (a.f16.npy)"),
        "{e}"
    );
    // A shard that shares only some rows with another.
    let mut mixed = p[1].clone();
    mixed.extend(p[0].iter().copied().take(40));
    let m = build(&w, &[("mixed.npy", mixed)], &st);
    let e = err(&[a.clone(), m]);
    assert!(
        e.contains("overlapping pools") && e.contains("part 2 (mixed.npy)"),
        "{e}"
    );
    // Disjoint parts still merge, with the union of the fingerprints.
    let (ab, warnings) = Summary::merge_with_warnings(&[a.clone(), b.clone()]).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let whole = build(&w, &[("a.npy", p[0].clone()), ("b.npy", p[1].clone())], &st);
    assert_eq!(ab.pool_id_hashes, whole.pool_id_hashes);
    assert_eq!(ab, whole);
}

#[test]
fn merge_without_fingerprints_warns() {
    let w = World::random(22, 5, 20, 600);
    let st = sampled_settings();
    let p = shards(&w, 2, 9);
    let a = build(&w, &[("a.npy", p[0].clone())], &st);
    let mut b = build(&w, &[("b.npy", p[1].clone())], &st);
    b.pool_id_hashes = None; // a format-1 part
    let (m, warnings) = Summary::merge_with_warnings(&[a, b]).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("part(s) 2") && warnings[0].contains("overlapping"),
        "{warnings:?}"
    );
    assert_eq!(m.pool_id_hashes, None);
}

#[test]
fn fingerprint_must_match_s0() {
    let w = World::random(23, 4, 20, 500);
    let st = sampled_settings();
    let mut a = build(&w, &[("a.npy", (0..500).collect())], &st);
    a.pool_id_hashes.as_mut().unwrap().pop();
    assert!(a
        .validate()
        .unwrap_err()
        .to_string()
        .contains("pool id hashes"));
    let mut a = build(&w, &[("a.npy", (0..500).collect())], &st);
    a.pool_id_hashes.as_mut().unwrap().reverse();
    assert!(a.validate().unwrap_err().to_string().contains("sorted"));
}

mod overlap_props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// Parts drawn with possible repeats (the same shard twice, shared rows): the merge
        /// succeeds iff no scanned (level-0) item is in two parts, and then equals the
        /// summary of the union.
        #[test]
        fn merge_ok_iff_level0_disjoint(
            seed in 0u64..1000,
            picks in prop::collection::vec(prop::collection::vec(0usize..300, 0..40), 1..4),
            exact in any::<bool>(),
        ) {
            let w = World::random(seed, 3, 10, 300);
            let st = if exact {
                Settings { fraction: 1.0, min_fraction: 0.25, shards: 2, seed, top_m: 20, pool_size: None }
            } else {
                Settings { fraction: 0.5, min_fraction: 0.1, shards: 2, seed, top_m: 20, pool_size: Some(10_000) }
            };
            let labels: Vec<String> = (0..picks.len()).map(|i| format!("part{i}.npy")).collect();
            let parts: Vec<Vec<usize>> = picks
                .iter()
                .map(|p| {
                    let mut v = p.clone();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect();
            let sums: Vec<Summary> = labels
                .iter()
                .zip(&parts)
                .map(|(l, p)| build(&w, &[(l.as_str(), p.clone())], &st))
                .collect();
            let in_level0 = |i: usize| {
                st.fraction >= 1.0
                    || tailrank::sample::HashRange::fraction(st.fraction)
                        .unwrap()
                        .contains(tailrank::sample::id_hash(&w.pool_ids[i], st.seed))
            };
            let mut seen = std::collections::HashSet::new();
            let overlap = parts
                .iter()
                .flatten()
                .filter(|&&i| in_level0(i))
                .any(|&i| !seen.insert(i));
            match Summary::merge(&sums) {
                Ok(m) => {
                    prop_assert!(!overlap);
                    let named: Vec<(&str, Vec<usize>)> =
                        labels.iter().map(|s| s.as_str()).zip(parts.clone()).collect();
                    let mut whole = build(&w, &named, &st);
                    if exact && sums.len() > 1 {
                        // Exact shards make up the pool (N = Σ S_0), as merge documents.
                        whole.pool_size = None;
                    }
                    let mut m = m;
                    if exact && sums.len() > 1 {
                        m.pool_size = None;
                    }
                    prop_assert_eq!(m, whole);
                }
                Err(e) => {
                    let e = e.to_string();
                    prop_assert!(overlap, "{}", e);
                    prop_assert!(e.contains("overlapping"), "{}", e);
                }
            }
        }
    }
}

#[test]
fn levels_must_nest_and_top_scores_be_finite() {
    let w = World::random(24, 4, 20, 500);
    let st = sampled_settings();
    let whole = build(&w, &[("a.npy", (0..500).collect())], &st);
    let levels = whole.level_indices();
    assert!(levels.len() >= 2);
    let mut a = whole.clone();
    a.subset_sizes[levels[1]] = a.subset_sizes[levels[0]] + 1;
    let e = a.validate().unwrap_err().to_string();
    assert!(e.contains("levels not nested"), "{e}");
    let mut a = whole.clone();
    let q = a
        .queries
        .iter()
        .position(|q| !q.top_scores[0].is_empty())
        .unwrap();
    a.queries[q].top_scores[0][0] = f32::INFINITY;
    let e = a.validate().unwrap_err().to_string();
    assert!(e.contains("+inf is not finite"), "{e}");
    whole.validate().unwrap();
}
