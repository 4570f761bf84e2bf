//! Tests of the next step: the width's parts, the projection and the messages.

use super::*;
use crate::predict::reach::z_weight;
use crate::predict::PredictOptions;
use tailrank_sim::simulate::{simulate_summary, SimConfig};

fn parts(width: f64, noise: f64, trend: f64, l: f64) -> WidthParts {
    WidthParts {
        width,
        noise,
        trend,
        spread: width - noise - trend,
        doublings_to_pool: l,
        trend_reach: None,
        above_reach: None,
        levels_extension: 0.0,
    }
}

/// The reach up to the levels' highest prediction halves with each doubling: 2 points of
/// a 6-point spread leave 1 point after one doubling and 1.5 after two.
#[test]
fn the_levels_reach_halves_per_doubling() {
    let w = WidthParts {
        levels_extension: 0.02,
        ..parts(0.10, 0.04, 0.0, 4.0)
    };
    for (j, left) in [(0, 0.02), (1, 0.01), (2, 0.005)] {
        let want = 0.04 + left + 0.04 / 2f64.sqrt().powi(j as i32);
        assert!(
            (w.projected(j) - want).abs() < 1e-12,
            "{j}: {}",
            w.projected(j)
        );
    }
}

/// The reach towards the rare items above the top positive grows with the z a doubling
/// brings: at z = 2.5 (w = 0.25) a reading 4 points below the other readings lowers the
/// end by 1 point now and by 4·w(2.5·√2) = 2.07 points after one doubling.
#[test]
fn the_reach_above_the_top_positive_follows_its_weight() {
    let a = AboveReach {
        estimate: 0.36,
        tail: 0.40,
        z: 2.5,
        low_others: 0.40,
    };
    let mut w = parts(0.05, 0.02, 0.0, 4.0);
    w.above_reach = Some(a);
    assert!((a.extension(1.0) - 0.01).abs() < 1e-12);
    let e1 = 0.04 * z_weight(2.5 * 2f64.sqrt());
    let want = 0.03 - 0.01 + e1 + 0.02 / 2f64.sqrt();
    assert!(
        (w.projected(1) - want).abs() < 1e-12,
        "{} {want}",
        w.projected(1)
    );
    assert!((w.projected(0) - 0.05).abs() < 1e-12);
}

/// The weighted trend's part grows with the paired z a doubling brings (`z·√2`) and
/// shrinks with the doublings left: `t_j = |Δ|·w(z·2^(j/2))·v`.
#[test]
fn the_trend_part_follows_its_weight() {
    // z = 2.5: w = 0.25 now, w(2.5·√2) = 0.5178 after one doubling, 1 after three.
    let reach = TrendReach {
        delta: -0.04,
        z: 2.5,
        side: 0.5,
    };
    let w = WidthParts {
        trend_reach: Some(reach),
        ..parts(0.10, 0.06, 0.005, 4.0)
    };
    let by_hand = |j: i32| {
        let weight = ((2.5 * 2f64.sqrt().powi(j) - 2.0) / 2.0).clamp(0.0, 1.0);
        0.035 + 0.06 / 2f64.sqrt().powi(j) + 0.04 * weight * 0.5 * f64::from(4 - j) / 4.0
    };
    for j in 0..4 {
        assert!(
            (w.projected(j as u32) - by_hand(j)).abs() < 1e-15,
            "j = {j}"
        );
    }
    assert!((reach.weighted(1.0) - (-0.04 * 0.25 * 0.5)).abs() < 1e-15);
}

#[test]
fn doublings_reach_the_target_by_the_projection() {
    let w = parts(0.10, 0.06, 0.02, 4.0);
    // Independent: W(j) = 0.02 + 0.06/√2^j + 0.02·(4 − j)/4.
    let by_hand = |j: i32| 0.02 + 0.06 / 2f64.sqrt().powi(j) + 0.02 * f64::from(4 - j) / 4.0;
    for j in 0..4 {
        assert!((w.projected(j as u32) - by_hand(j)).abs() < 1e-15);
    }
    // Past N the trend is spent: W(6) = s + n/8.
    assert!((w.projected(6) - (0.02 + 0.06 / 8.0)).abs() < 1e-15);
    let t = 0.06;
    let j = doublings_to(0.01, &w, Some(t), 1);
    assert!(w.projected(j) <= t && w.projected(j - 1) > t, "{j}");
    // No target: one doubling. Capped at the whole pool: 0.25 → 0.5 → 1.
    assert_eq!(doublings_to(0.01, &w, None, 1), 1);
    assert_eq!(doublings_to(0.25, &w, Some(1e-9), 1), 2);
    assert!(!w.spread_dominates() && parts(0.1, 0.02, 0.03, 4.0).spread_dominates());
}

#[test]
fn commands_grow_one_doubling_at_a_time() {
    let cfg = SimConfig::preset("ilias-like", 1).unwrap().with_queries(4);
    let s = simulate_summary(&cfg).unwrap().summary;
    let c = grow_commands(&s, 100_000_000, 0.05, 0.2, "my/summary");
    assert_eq!(c.len(), 6);
    assert!(c[0].starts_with("tailrank sample --ids POOL_IDS --fraction 0.1 --after 0.05"));
    assert!(c[1].contains("--fraction 0.1 --after 0.05 --seed 1 --pool-size 100000000"));
    assert_eq!(c[2], "tailrank grow my/summary part_0.1 -o summary_0.1");
    assert!(c[3].contains("--fraction 0.2 --after 0.1"));
    assert_eq!(c[5], "tailrank grow summary_0.1 part_0.2 -o summary_0.2");
    // A prediction at another N: the part is scanned at the N the base records, so that
    // grow accepts it.
    let recorded = s.pool_size.unwrap();
    let c = grow_commands(&s, 7 * recorded, 0.05, 0.1, "my/summary");
    assert!(
        c[1].contains(&format!("--pool-size {recorded} ")),
        "{}",
        c[1]
    );
    // A base scanned with another M: the increment's scan keeps it (grow refuses another);
    // a folder name a shell would split is quoted.
    let mut m = s.clone();
    m.top_m = 200;
    let c = grow_commands(&m, 100_000_000, 0.05, 0.1, "my runs/it's");
    assert!(
        c[1].contains("--seed 1 --top-m 200 --pool-size"),
        "{}",
        c[1]
    );
    assert_eq!(
        c[2],
        r"tailrank grow 'my runs/it'\''s' part_0.1 -o summary_0.1"
    );
}

#[test]
fn level_summary_is_the_nested_sample() {
    let cfg = SimConfig::preset("ilias-like", 2).unwrap().with_queries(8);
    let s = simulate_summary(&cfg).unwrap().summary;
    let levels = s.level_indices();
    let half = level_summary(&s, 1).unwrap();
    assert_eq!(half.level_indices().len(), levels.len() - 1);
    assert_eq!(half.fraction, s.subsets[levels[1]].fraction);
    assert_eq!(half.subset_sizes[0], s.subset_sizes[levels[1]]);
    // Shards of f/4 = (f/2)/2: the first two lie inside level 1's hash range.
    assert_eq!(half.shard_indices().len(), 2);
    for (q, hq) in s.queries.iter().zip(&half.queries) {
        assert_eq!(hq.top_scores[0], q.top_scores[levels[1]]);
        for (p, hp) in q.positives.iter().zip(&hq.positives) {
            assert_eq!(hp.pool_above[0], p.pool_above[levels[1]]);
            assert_eq!(hp.pool_above.len(), half.subsets.len());
        }
    }
    assert!(level_summary(&s, levels.len()).is_none());
}

#[test]
fn next_step_fields_agree() {
    let cfg = SimConfig::preset("mixture-tail", 0)
        .unwrap()
        .with_queries(120);
    let s = simulate_summary(&cfg).unwrap().summary;
    let opts = PredictOptions {
        bootstrap: 100,
        sample_noise: 0,
        ..PredictOptions::default()
    };
    let p = super::super::predict_without_next_step(&s, &opts).unwrap();
    let plan = NextStepPlan {
        target_width: Some(1e-4),
        summary_path: None,
    };
    let n = next_step(&s, &p, &plan);
    let w = width_parts(&p).unwrap();
    assert!((w.spread + w.noise + w.trend - w.width).abs() < 1e-12);
    match n.action {
        Action::Grow => {
            let f = n.fraction.unwrap();
            let (mut a, mut j) = (s.fraction, 0);
            while a < f {
                a = (2.0 * a).min(1.0);
                j += 1;
            }
            assert!(f <= 1.0 && n.commands.len() == 3 * j, "{n:?}");
            assert!(n.commands[2].starts_with("tailrank grow SUMMARY "));
        }
        Action::BudgetCannotHelp => assert!(w.lasting_spread() >= 1e-4, "{w:?}"),
        Action::None => panic!("a target of 0.01 points is not met: {n:?}"),
    }
}

/// A 40-query ilias-like summary at 5% and its prediction with the default options.
fn small_prediction() -> (Summary, Prediction) {
    let cfg = SimConfig::preset("ilias-like", 0).unwrap().with_queries(40);
    let s = simulate_summary(&cfg).unwrap().summary;
    let p = super::super::predict_without_next_step(&s, &PredictOptions::default()).unwrap();
    (s, p)
}

/// The trend's remaining move is a line in log2(N/S) without bound; the message keeps it
/// within the metric's range around the estimate.
#[test]
fn the_trend_clause_stays_within_the_metric() {
    let (s, mut p) = small_prediction();
    p.trust.verdict = super::super::Verdict::Trusted;
    (p.trust.trend_projected, p.trust.trend_std_error) = (-0.9, 0.01);
    p.trust.trend_per_doubling = -5.0;
    assert!(p.trust.trend_fired());
    let n = next_step(&s, &p, &NextStepPlan::default());
    let by = format!("move it by {} points", points(-p.estimate));
    assert!(n.message.contains(&by), "{} (expected {by})", n.message);
}

/// The parts add up to the width: the tutorial's 1% sample, a falling trend of 73.5 points
/// clamped at 0 below and the levels' reach of 27 points above, leaves the trend's part
/// all but the noise of the width and no spread, so the reach counts for nothing and the
/// message names none.
#[test]
fn the_parts_add_up_to_the_width() {
    let (s, mut p) = small_prediction();
    p.trust.verdict = super::super::Verdict::Doubtful;
    let r = p.realized.as_mut().unwrap();
    r.interval = super::super::stats::Interval { lo: 0.0, hi: 0.85 };
    r.pool_sd = 0.037;
    r.trend_shift = -0.735;
    r.levels_high = Some(super::super::realized::LevelsHigh {
        estimate: 0.8,
        extension: 0.27,
    });
    let w = width_parts(&p).unwrap();
    assert!(w.spread < 0.01, "{w:?}");
    assert_eq!(w.levels_extension, w.spread);
    assert!(w.noise + w.trend + w.spread <= w.width + 1e-12);
    let n = next_step(&s, &p, &NextStepPlan::default());
    assert!(!n.message.contains("levels' highest"), "{}", n.message);
}

/// A target that only the whole pool meets: the step says so, with no projected width
/// of a sample (the metric is exact at f = 1) and the commands up to f = 1.
#[test]
fn a_target_met_only_by_the_whole_pool_says_so() {
    let (s, mut p) = small_prediction();
    // All of a 30-point width is pool noise: W(j) = 0.3·2^(−j/2) stays above 0.01
    // until 2^(j/2) ≥ 30 (j ≥ 10), past f·2^j = 1 at j = 5.
    let r = p.realized.as_mut().unwrap();
    r.interval = super::super::stats::Interval { lo: 0.2, hi: 0.5 };
    r.pool_sd = 1.0;
    r.trend_shift = 0.0;
    let w = width_parts(&p).unwrap();
    assert_eq!((w.noise, w.trend, w.spread), (w.width, 0.0, 0.0));
    let plan = NextStepPlan {
        target_width: Some(0.01),
        summary_path: None,
    };
    let n = next_step(&s, &p, &plan);
    assert_eq!(n.action, Action::Grow);
    assert_eq!((n.fraction, n.projected_width), (Some(1.0), Some(0.0)));
    assert!(
        n.message
            .starts_with("Scan the whole pool to reach the target width of 1.00 points")
            && n.message.contains("at f = 1 the metric is exact"),
        "{}",
        n.message
    );
    assert!(!n.message.contains("level trend"), "{}", n.message);
    assert_eq!(n.commands.len(), 3 * 5);
    assert!(n.commands[14].ends_with("-o summary_1"), "{:?}", n.commands);
}

/// A summary scanned at f = 1 needs no more sample: the whole pool says its metric is
/// exact, a part of it (one shard) says to merge the others.
#[test]
fn an_exact_scan_needs_no_growing() {
    let (mut s, mut p) = small_prediction();
    s.fraction = 1.0;
    p.trust.verdict = super::super::Verdict::Doubtful;
    p.pool_size = s.subset_sizes[0];
    let n = next_step(&s, &p, &NextStepPlan::default());
    assert_eq!((n.action, n.projected_width), (Action::None, Some(0.0)));
    assert!(
        n.message.contains("`tailrank eval --summary`"),
        "{}",
        n.message
    );
    assert!(n.commands.is_empty());
    p.pool_size = 2 * s.subset_sizes[0];
    let n = next_step(&s, &p, &NextStepPlan::default());
    assert_eq!((n.action, n.projected_width), (Action::None, None));
    assert!(
        n.message.starts_with("Merge the other shards"),
        "{}",
        n.message
    );
}

/// A sample below the sample-size rule's need is grown to the first doubling that holds it,
/// whatever the verdict and the width; when even the whole pool it was drawn from holds
/// fewer items, more sample cannot help.
#[test]
fn a_small_sample_grows_to_what_the_rule_needs() {
    let (s, mut p) = small_prediction();
    p.trust.verdict = super::super::Verdict::Doubtful;
    let s0 = s.subset_sizes[0];
    // k·S/N = c_min/3 at N = 3·k·S/c_min, with S_0/f (the pool drawn from) kept ≥ the need.
    let c_min = super::super::sample_size::c_min_of(&p.options.estimator);
    let k = p.options.k as u64;
    p.pool_size = 3 * k * s0 / c_min;
    let need = super::super::sample_needed(s0, p.pool_size, p.options.k, &p.options.estimator)
        .expect("below the rule");
    let n = next_step(&s, &p, &NextStepPlan::default());
    assert!(
        (s0 as f64) / s.fraction >= need as f64,
        "the preset's sample is too small here"
    );
    assert_eq!(n.action, Action::Grow, "{n:?}");
    let to = n.fraction.unwrap();
    assert!(
        s0 as f64 * to / s.fraction >= need as f64 && to < 1.0,
        "{n:?}"
    );
    assert!(s0 as f64 * to / 2.0 / s.fraction < need as f64, "{n:?}");
    assert!(n.message.contains("small-sample warning"), "{}", n.message);
    assert!(!n.commands.is_empty());
    // A pool far larger than the one the sample was drawn from: no doubling helps.
    p.pool_size = 1000 * k * s0;
    let n = next_step(&s, &p, &NextStepPlan::default());
    assert_eq!(n.action, Action::BudgetCannotHelp, "{n:?}");
    assert!(n.message.contains("drawn from holds only"), "{}", n.message);
    assert!(n.commands.is_empty());
    // k below c_min at the sampled pool's own N: no sample short of the whole pool meets the
    // rule (c_min·N/k > N), so the step is the whole pool, never "predict at that pool size".
    p.pool_size = s.pool_size.unwrap();
    p.options.k = (c_min - 1) as usize;
    let n = next_step(&s, &p, &NextStepPlan::default());
    assert_eq!((n.action, n.fraction), (Action::Grow, Some(1.0)), "{n:?}");
    assert!(
        n.message.starts_with("Scan the whole pool"),
        "{}",
        n.message
    );
}

/// With the tests not run (no bootstrap) the step never says that the verdict does not doubt.
#[test]
fn an_unchecked_verdict_is_not_called_trusting() {
    let (s, mut p) = small_prediction();
    p.trust.verdict = super::super::Verdict::Unchecked;
    let n = next_step(&s, &p, &NextStepPlan::default());
    assert_eq!(n.action, Action::None, "{n:?}");
    assert!(n.message.contains("tests did not run"), "{}", n.message);
    assert!(!n.message.contains("does not doubt"), "{}", n.message);
}
