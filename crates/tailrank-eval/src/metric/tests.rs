//! Unit tests of the ranked-list and counts rules.
use super::*;

#[test]
fn official_vector_from_ranks() {
    // gt = {a, c, f, z}; ranked a..f: positives a, c, f at ranks 1, 3, 6; z never retrieved.
    let r = [1.0, 3.0, 6.0];
    assert!((ap_at_k_from_ranks(&r, 4, 1000) - 0.541_666_7).abs() < 1e-6);
    assert!((ap_at_k_from_ranks(&r, 4, 3) - 0.555_555_6).abs() < 1e-6);
    assert!((ap_at_k_from_ranks(&r, 4, 2) - 0.5).abs() < 1e-12);
    assert_eq!(ap_at_k_from_ranks(&[], 4, 1000), 0.0);
}

#[test]
fn official_vector_from_list() {
    let items: Vec<(String, f64)> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .zip([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
        .map(|(i, s)| (i.to_string(), s))
        .collect();
    let gt: Vec<String> = ["a", "c", "f", "z"].iter().map(|s| s.to_string()).collect();
    let ap = |k| evaluate_query("q", &items, &gt, k, &[]).ap_at_k;
    assert!((ap(1000) - 0.541_666_7).abs() < 1e-6);
    assert!((ap(3) - 0.555_555_6).abs() < 1e-6);
    assert!((ap(2) - 0.5).abs() < 1e-12);
    let none: Vec<String> = vec!["y".into(), "z".into()];
    assert_eq!(evaluate_query("q", &items, &none, 1000, &[]).ap_at_k, 0.0);
}

#[test]
fn tie_block_gets_end_precision() {
    // Scores: r(1.0) n(0.5) r(0.5) n(0.1): block {n, r} ends at 3 with 2 hits.
    let s = [1.0, 0.5, 0.5, 0.1];
    let rel = [true, false, true, false];
    let ap = ap_at_k_ties(&s, &rel, 2, 1000);
    assert!((ap - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
    // Same with the tied items swapped: identical (tie grouping).
    let rel2 = [true, true, false, false];
    assert!((ap_at_k_ties(&s, &rel2, 2, 1000) - ap).abs() < 1e-15);
    // Cut at 2 straddles the block: rel2 keeps the relevant one, precision at rank 2.
    assert!((ap_at_k_ties(&s, &rel2, 2, 2) - (1.0 + 1.0) / 2.0).abs() < 1e-15);
    assert!((ap_at_k_ties(&s, &rel, 2, 2) - 0.5).abs() < 1e-15);
}

#[test]
fn gldv2_duplicates_use_a_rank() {
    let pos: HashSet<&str> = ["a", "b"].into_iter().collect();
    let ap = gldv2_ap_at_k(&["a", "a", "b"], &pos, 2, 100);
    assert!((ap - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
}

/// Expand per-positive counts into the ranked list they describe, tie blocks holding their
/// non-relevant items first: (score, relevant) in rank order. Positive block `b..=e` at
/// score `s` gets `T_e` non-relevant items of score `s` just before it; strictly-above
/// items get a score between blocks.
fn expand(pos: &[PositiveCounts]) -> (Vec<f64>, Vec<bool>) {
    let (mut sc, mut rel) = (Vec::new(), Vec::new());
    let mut placed_above = 0u64;
    let mut j = 0;
    while j < pos.len() {
        let mut e = j;
        while e + 1 < pos.len() && pos[e + 1].score == pos[j].score {
            e += 1;
        }
        let s = pos[j].score as f64;
        let above = pos[j].core_above + pos[j].pool_above;
        for _ in placed_above..above {
            sc.push(s + 0.5e-3);
            rel.push(false);
        }
        placed_above = above + pos[e].ties;
        for _ in 0..pos[e].ties {
            sc.push(s);
            rel.push(false);
        }
        for _ in j..=e {
            sc.push(s);
            rel.push(true);
        }
        j = e + 1;
    }
    (sc, rel)
}

#[test]
fn counts_with_ties_equal_the_ranked_list_rule() {
    // Random queries with positive blocks, non-relevant ties and strictly-above items;
    // every k from 1 to past the list: the counts path equals `ap_at_k_ties` on the list
    // whose tie blocks put the positives last, and Recall@k / hit@1 agree.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    let mut straddles = 0;
    for _ in 0..300 {
        let n = 1 + next(6) as usize;
        let mut pos = Vec::new();
        let mut above = 0u64;
        let mut score = 1.0f32;
        let mut j = 0;
        while j < n {
            let size = (1 + next(3) as usize).min(n - j);
            above += next(4);
            let ties = next(4);
            score -= 0.01;
            for _ in 0..size {
                pos.push(PositiveCounts {
                    score,
                    core_above: above / 2,
                    pool_above: above - above / 2,
                    ties,
                });
            }
            // Ties of this block are strictly above the next block's positives.
            above += ties;
            j += size;
        }
        let (sc, rel) = expand(&pos);
        for k in 1..=sc.len() + 2 {
            let r = evaluate_counts("q", &pos, k);
            let want = ap_at_k_ties(&sc, &rel, n, k);
            assert!((r.ap_at_k - want).abs() < 1e-12, "k {k}: {pos:?}");
            assert!((r.recall_at_k - recall_at_k(&rel, n, k)).abs() < 1e-12);
            assert_eq!(r.hit_at_1, hit_at_1(&rel));
            // Every metric of the vocabulary agrees between the two rankings.
            let ids: Vec<String> = (0..sc.len()).map(|i| format!("i{i}")).collect();
            let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            let posset: HashSet<&str> = (0..sc.len())
                .filter(|&i| rel[i])
                .map(|i| id_refs[i])
                .collect();
            let list = QueryRanking::List {
                scores: &sc,
                relevant: &rel,
                ids: &id_refs,
                positives: &posset,
            };
            let rk = ranks(&pos);
            let counts = QueryRanking::Counts {
                positives: &pos,
                ranks: &rk,
            };
            for name in ["map", "recall", "hit", "ap"] {
                let m = name.parse::<MetricName>().unwrap().at(k);
                let (a, b) = (list.value(m), counts.value(m));
                assert!((a - b).abs() < 1e-12, "{m} at k {k}: list {a} counts {b}");
            }
            // The counts see an order-dependent block at the cut exactly when the list does.
            assert_eq!(
                counts::mixed_block_at_cut_counts(&pos, k),
                mixed_block_at_cut(&sc, &rel, k),
                "k {k}: {pos:?}"
            );
            let cut_block = k < sc.len() && sc[k] == sc[k - 1];
            straddles += usize::from(cut_block && rel[..k].iter().any(|&x| !x));
        }
        let full = evaluate_counts("q", &pos, 1);
        assert_eq!(full.tied_pairs, Some(tied_pairs(&sc, &rel)));
        let r = evaluate_counts("q", &pos, usize::MAX);
        assert!((r.ap_full - ap_at_k_ties(&sc, &rel, n, usize::MAX)).abs() < 1e-12);
    }
    assert!(
        straddles > 50,
        "the cases must cut tie blocks ({straddles})"
    );
}

#[test]
fn tie_block_positive_and_nonrelevant_gets_block_end() {
    // The case: one positive tied with 2 non-relevant items at the top: the block
    // ends at rank 3, AP = 1/3 (not 1, which "strictly above" counts alone would give).
    let p = PositiveCounts {
        score: 0.5,
        core_above: 0,
        pool_above: 0,
        ties: 2,
    };
    let r = evaluate_counts("q", &[p], 1000);
    assert!((r.ap_at_k - 1.0 / 3.0).abs() < 1e-15);
    assert_eq!(r.hit_at_1, 0.0);
    assert_eq!(r.tied_pairs, Some(2));
    // Cut at 2 inside the block: non-relevant first, the positive is cut off.
    assert_eq!(evaluate_counts("q", &[p], 2).ap_at_k, 0.0);
}

#[test]
fn counts_tie_block_of_positives() {
    // Two tied positives with one non-relevant above: ranks 2, 3, block end 3: 2·(2/3)/2.
    let p = PositiveCounts {
        score: 0.5,
        core_above: 1,
        pool_above: 0,
        ties: 0,
    };
    let r = evaluate_counts("q", &[p, p], 1000);
    assert!((r.ap_at_k - 2.0 / 3.0).abs() < 1e-15);
    // Cut at 2: only the first is in; precision at rank 2 = 1/2; divisor 2.
    let r = evaluate_counts("q", &[p, p], 2);
    assert!((r.ap_at_k - 0.25).abs() < 1e-15);
}

#[test]
fn requested_metrics_land_in_values_and_set_means() {
    let items: Vec<(String, f64)> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .zip([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
        .map(|(i, s)| (i.to_string(), s))
        .collect();
    let gt: Vec<String> = ["b", "c", "f", "z"].iter().map(|s| s.to_string()).collect();
    let metrics: Vec<MetricName> = ["map@3", "recall@2", "hit@1", "hit@2", "ap"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let r = evaluate_query("q", &items, &gt, 1000, &metrics);
    // b at 2, c at 3, f at 6 of 4 positives.
    let want = [
        ("map@3", (1.0 / 2.0 + 2.0 / 3.0) / 3.0),
        ("recall@2", 0.25),
        ("hit@1", 0.0),
        ("hit@2", 1.0),
        ("ap", (1.0 / 2.0 + 2.0 / 3.0 + 3.0 / 6.0) / 4.0),
    ];
    for (name, v) in want {
        assert!(
            (r.values[name] - v).abs() < 1e-15,
            "{name}: {}",
            r.values[name]
        );
    }
    assert!((r.ap_full - r.values["ap"]).abs() < 1e-15);
}
