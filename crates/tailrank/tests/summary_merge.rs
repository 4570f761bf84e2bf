//! `Summary::merge`: merging the summaries of disjoint shards equals the brute-force summary of
//! their union (counts add, top-M lists merge), and every incompatibility is refused.

mod summary_util;

use summary_util::{build, Rng, Settings, World};
use tailrank::scan::Summary;

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
    check(&|s| s.subsets[1].range.hi -= 1, "subsets");
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
    check(&|s| s.inputs[1].digest = "xxh3:1234".into(), "inputs");
    check(&|s| s.pool_size = Some(2_000_000), "pool sizes N");
    // An inconsistent part is named.
    let mut c = b.clone();
    c.subset_sizes.pop();
    assert!(err(&[a.clone(), c]).contains("part 2 is inconsistent"));
}
