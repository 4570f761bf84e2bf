//! The realized-metric interval (`predict::realized`) and the trust verdict (`predict::trust`)
//! on simulated benchmarks (scaled down to a few hundred queries for speed): the interval holds
//! the estimate and both maps' values, is reproducible by seed, its pool noise shrinks as the
//! sample grows; the trend and in-sample statistics are the identities their docs state; the
//! verdict flags mixture-tail (a tail model missing mass), passes ilias-like, and refuses to
//! trust a tiny sample or to judge without a bootstrap. The level-selected fit is the argmin of
//! its stated statistic, reproduces `predict` run with its fit, feeds the fit-choice test and
//! the interval's span.

use tailrank::hardness::{Estimator, EvtOptions, QueryHardness};
use tailrank::predict::trust::{FIT_TOLERANCE, Z_CRIT};
use tailrank::predict::{baselines, predict, FitMode, PredictOptions, Prediction, Verdict};
use tailrank::simulate::{simulate_summary, SimConfig};

fn sim_predict(
    preset: &str,
    seed: u64,
    fraction: f64,
    queries: usize,
    opts: &PredictOptions,
) -> (Prediction, f64) {
    let mut cfg = SimConfig::preset(preset, seed)
        .unwrap()
        .with_queries(queries);
    cfg.fraction = fraction;
    let sim = simulate_summary(&cfg).unwrap();
    let p = predict(&sim.summary, opts).unwrap();
    (p, sim.truth.map_at_k)
}

/// The options' own fit (the paper's), whose statistics these tests recompute by hand; the
/// level-selected default is checked against it in
/// `level_selected_fit_is_the_argmin_and_reproduces_predict`.
fn opts() -> PredictOptions {
    PredictOptions {
        bootstrap: 200,
        sample_noise: 20,
        seed: 7,
        fit: FitMode::Fixed,
        ..PredictOptions::default()
    }
}

/// Mean over the queries of a per-query value.
fn mean_of(h: &[QueryHardness], f: &dyn Fn(&QueryHardness) -> f64) -> f64 {
    h.iter().map(f).sum::<f64>() / h.len() as f64
}

/// `Δ_trend` when the trend test fired and the level-calibrated law lies on its side of the
/// estimate, else 0: the realized interval's reach with a level-selected fit.
fn trend_on_cal_side(p: &tailrank::predict::Prediction) -> f64 {
    let cal = p.realized.as_ref().and_then(|r| r.calibrated_estimate);
    let d = p.trust.trend_shift();
    match cal {
        Some(c) if (c - p.estimate) * d > 0.0 => d,
        _ => 0.0,
    }
}

fn sd(v: &[f64]) -> f64 {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

#[test]
fn realized_interval_holds_the_estimate_and_is_reproducible() {
    let o = opts();
    let (p, _) = sim_predict("ilias-like", 3, 0.05, 300, &o);
    let r = p
        .realized
        .expect("shards and sample noise give a realized interval");
    assert!(r.interval.contains(p.estimate), "{r:?} vs {}", p.estimate);
    assert!(r.interval.contains(r.other_map_estimate), "{r:?}");
    assert!(r.width() > 0.0);
    // The pool sd is the larger of its two sources; the shard one is sd(m_h)/√H, recomputed
    // here from the shard predictions the drift check reports.
    let shards: Vec<f64> = p
        .drift
        .as_ref()
        .unwrap()
        .shards
        .iter()
        .map(|s| s.estimate)
        .collect();
    let want = sd(&shards) / (shards.len() as f64).sqrt();
    assert!((r.pool_sd_shards.unwrap() - want).abs() < 1e-12);
    assert_eq!(r.pool_sd_replicates, p.sample_noise_sd);
    assert_eq!(r.pool_sd, want.max(p.sample_noise_sd.unwrap()));
    // Half-width around the two maps' span: z·sd_pool plus the shift on its side.
    let z = 1.959_963_984_540_054;
    let fit = r
        .fit_choice_estimate
        .expect("evt on a summary has a level-selected fit");
    // The reach towards the other fit stops at the level-1 check's bound, projected to N:
    // (|e_1| + z·se_1)·ln(N/S_0)/ln(S_0/S_1).
    let u = p.trust.used().expect("level 1's in-sample check");
    let (n, s0, s1) = (
        p.pool_size as f64,
        p.sample_size as f64,
        u.sample_size as f64,
    );
    let reach = (u.error.abs() + z * u.std_error) * (n / s0).ln() / (s0 / s1).ln();
    assert!((r.fit_choice_reach.expect("a bootstrap SE") - reach).abs() < 1e-12);
    let tail = p.excess_centre.map_or(p.estimate, |c| c.unmoved_map_at_k);
    let fit = tail + (fit - tail).clamp(-reach, reach);
    let low = [r.excess_mass_estimate, r.calibrated_estimate]
        .into_iter()
        .flatten()
        .fold(p.estimate.min(r.other_map_estimate).min(fit), f64::min);
    let lo_want = (low - z * r.pool_sd - (-r.trend_shift).max(0.0)).max(0.0);
    // With a level-selected fit, the trend only on the level-calibrated law's side.
    assert_eq!(r.trend_shift, trend_on_cal_side(&p));
    assert!(
        (r.interval.lo - lo_want).abs() < 1e-9,
        "{} vs {lo_want}",
        r.interval.lo
    );
    let (p2, _) = sim_predict("ilias-like", 3, 0.05, 300, &o);
    assert_eq!(p2.realized, p.realized);
    assert_eq!(p2.trust, p.trust);
}

/// The sampled items are pool items, so the exact values at S bound mAP@k, Recall@k and hit@1
/// at N from above (the simulator's truth included), and the realized interval's upper end
/// never passes them: on the curve near the sample size its readings reach past it.
#[test]
fn the_sample_values_bound_the_metrics_at_n() {
    let o = PredictOptions {
        fit: FitMode::LevelSelected,
        ..opts()
    };
    let mut cfg = SimConfig::preset("mixture-tail", 1)
        .unwrap()
        .with_queries(300);
    cfg.fraction = 0.01;
    let sim = simulate_summary(&cfg).unwrap();
    let p = predict(&sim.summary, &o).unwrap();
    let truth = sim.truth.map_at_k;
    let r = p.realized.expect("a realized interval");
    let at_s = p.baselines.evaluate_at_s;
    assert!(truth <= at_s, "{truth} vs {at_s}");
    assert!(r.interval.hi <= at_s.max(p.estimate), "{r:?} vs {at_s}");
    if let Some(c) = r.ceiling {
        assert_eq!((c, r.interval.hi), (at_s, at_s.max(p.estimate)));
    }
    assert!(r.interval.contains(truth), "{r:?} vs {truth}");
    // Recall@k and hit@1 have the same ceiling: their exact values at S. hit@1 at S is the
    // share of queries whose top positive no sampled or core item reaches (ties count as
    // above), counted here from the summary.
    let b = &p.baselines;
    let open = sim
        .summary
        .queries
        .iter()
        .filter(|q| {
            q.positives
                .first()
                .is_some_and(|t| t.pool_at_or_above(0) == 0 && t.core_at_or_above() == 0)
        })
        .count();
    let want = open as f64 / sim.summary.queries.len() as f64;
    assert!((b.evaluate_at_s_hit_at_1 - want).abs() < 1e-12);
    let (truth_recall, truth_hit) = sim.truth.recall_and_hit();
    for (name, pred, truth, ceiling) in [
        (
            "Recall",
            p.recall_at_k,
            truth_recall,
            b.evaluate_at_s_recall_at_k,
        ),
        ("hit@1", p.hit_at_1, truth_hit, b.evaluate_at_s_hit_at_1),
    ] {
        assert!(
            pred <= ceiling && truth <= ceiling,
            "{name}: {pred} {truth} {ceiling}"
        );
    }
    // The curve's band stops there too from the sample size on, and not below it (a pool
    // smaller than the sample does not hold it).
    let (s_size, n) = (p.sample_size as f64, p.pool_size as f64);
    let cv = tailrank::predict::curve(&sim.summary, &o, s_size / 8.0, n, 4).unwrap();
    let mut capped = 0;
    for pt in &cv.points {
        let hi = pt.realized_hi.expect("shards give a band");
        if pt.pool_size >= s_size {
            assert!(hi <= at_s.max(pt.estimate), "{pt:?}");
            capped += usize::from(hi == at_s.max(pt.estimate));
        }
    }
    assert!(capped > 0, "no point of {:?} reaches the cap", cv.points);
    let (p, truth) = sim_predict("ilias-like", 3, 0.05, 300, &o);
    let r = p.realized.unwrap();
    assert!(truth <= p.baselines.evaluate_at_s);
    assert_eq!(r.ceiling, None, "{r:?}");
    assert!(r.interval.hi < p.baselines.evaluate_at_s);
}

/// The realized interval spans the level-calibrated law (the table's second opinion) whatever
/// the verdict.
#[test]
fn the_realized_interval_spans_the_second_opinion() {
    let o = opts();
    let mut verdicts = Vec::new();
    for (family, seed) in [("bursts", 0), ("ilias-like", 3)] {
        let (p, _) = sim_predict(family, seed, 0.05, 300, &o);
        let r = p.realized.expect("a realized interval");
        let cal = p
            .baselines
            .level_calibrated
            .expect("evt on a summary with levels has a calibrated law")
            .map_at_k;
        assert_eq!(r.calibrated_estimate, Some(cal), "{family}");
        assert!(r.interval.contains(cal), "{family}: {r:?} vs {cal}");
        verdicts.push(p.trust.verdict);
    }
    assert_eq!(
        verdicts[0],
        Verdict::Doubtful,
        "bursts is the too-hard family"
    );
    assert_eq!(
        verdicts[1],
        Verdict::Trusted,
        "ilias-like is the home family"
    );
}

/// The count reading is spanned exactly when the last doubling of the sample moved the
/// prediction by more than `Z_CRIT` query SEs (`docs/notes/2026-12-estimator-log.md`, "An unsettled sample spans
/// the count reading"); the interval then holds it up to the sample's ceiling. Both cases
/// occur among these runs (the held-out hubs family is unsettled at 5%).
#[test]
fn an_unsettled_sample_spans_the_count_reading() {
    let o = opts();
    let mut seen = [false; 2];
    for (family, seed) in [("hubs", 0), ("hubs", 1), ("ilias-like", 3)] {
        let (p, _) = sim_predict(family, seed, 0.05, 300, &o);
        let r = p.realized.expect("a realized interval");
        let budget = p.budget.as_ref().expect("a summary has levels");
        let last = budget.steps.iter().find(|s| s.to_level == 0).unwrap();
        let unsettled = last.abs_diff > Z_CRIT * last.std_error;
        assert_eq!(budget.unsettled(), unsettled);
        seen[unsettled as usize] = true;
        let count = p.baselines.count;
        if unsettled {
            assert_eq!(r.count_estimate, Some(count), "{family} {seed}");
            let capped = count.min(p.baselines.evaluate_at_s.max(p.estimate));
            assert!(r.interval.contains(capped), "{family} {seed}: {r:?}");
        } else {
            assert_eq!(r.count_estimate, None, "{family} {seed}");
        }
    }
    assert_eq!(seen, [true, true], "both outcomes among the runs");
}

#[test]
fn pool_noise_shrinks_as_the_sample_grows() {
    let o = opts();
    let (small, _) = sim_predict("ilias-like", 4, 0.005, 300, &o);
    let (large, _) = sim_predict("ilias-like", 4, 0.1, 300, &o);
    let (a, b) = (small.realized.unwrap(), large.realized.unwrap());
    eprintln!(
        "pool sd: f=0.5% {:?}, f=10% {:?}",
        a.pool_sd_replicates, b.pool_sd_replicates
    );
    assert!(
        b.pool_sd_replicates.unwrap() < a.pool_sd_replicates.unwrap(),
        "{a:?} vs {b:?}"
    );
}

#[test]
fn trust_statistics_are_the_stated_identities() {
    let o = opts();
    let (p, _) = sim_predict("mixture-tail", 2, 0.05, 300, &o);
    let t = &p.trust;
    // Mean of the per-query slopes = slope of the level means (least squares is linear).
    let x: Vec<f64> = p
        .levels
        .iter()
        .map(|l| (l.sample_size as f64).log2())
        .collect();
    let y: Vec<f64> = p.levels.iter().map(|l| l.estimate).collect();
    let (_, slope) = baselines::least_squares(&x, &y).unwrap();
    let steps = (p.pool_size as f64 / p.sample_size as f64).log2();
    assert!((t.trend_projected - slope * steps).abs() < 1e-12);
    // In-sample error = level ℓ's prediction of S_0 − the exact evaluate-at-S_0.
    let at_s0 = p.baselines.level_points[0].map_at_k;
    assert_eq!(t.in_sample.len(), p.levels.len() - 1);
    for c in &t.in_sample {
        assert!((c.error - (c.predicted - at_s0)).abs() < 1e-12);
        let ratio = (p.sample_size as f64 / c.sample_size as f64).ln();
        let proj = c.error * (p.pool_size as f64 / p.sample_size as f64).ln() / ratio;
        assert!((c.projected_error - proj).abs() < 1e-12);
        assert!(c.std_error > 0.0);
    }
    assert_eq!(t.used().unwrap().level, 1);
}

/// The falling-estimate test reads the levels' predictions at N: `r_ℓ = m_ℓ − m_0` for
/// levels 1 and 2, firing when both are ≥ 0 (docs/method.md §9). Kumaraswamy at 1% (300
/// queries): seed 0 has level 0 below levels 1 and 2, seed 1 above both.
#[test]
fn the_falling_estimate_test_reads_the_levels() {
    let o = PredictOptions {
        bootstrap: 200,
        ..PredictOptions::default()
    };
    for (seed, fires) in [(0, true), (1, false)] {
        let (p, _) = sim_predict("kumaraswamy", seed, 0.01, 300, &o);
        let t = &p.trust;
        let r = t.level_rises.expect("three levels or more");
        for (l, rise) in r.iter().enumerate() {
            let want = p.levels[l + 1].estimate - p.levels[0].estimate;
            assert!(
                (rise - want).abs() < 1e-12,
                "level {}: {rise} vs {want}",
                l + 1
            );
        }
        assert_eq!(t.falling_fired(), r[0] >= 0.0 && r[1] >= 0.0);
        assert_eq!(t.falling_fired(), fires, "seed {seed}: {r:?}");
        if fires {
            assert_eq!(t.verdict, Verdict::Doubtful);
            assert!(t.reason.contains("falling estimate"), "{}", t.reason);
        } else {
            assert!(!t.reason.contains("falling estimate"), "{}", t.reason);
        }
    }
}

#[test]
fn verdict_flags_mixture_tail_and_passes_ilias_like() {
    let o = opts();
    for seed in [1, 2] {
        let (p, truth) = sim_predict("mixture-tail", seed, 0.05, 400, &o);
        eprintln!(
            "mixture-tail seed {seed}: err {:+.4}, {:?}: {}",
            p.estimate - truth,
            p.trust.verdict,
            p.trust.reason
        );
        // The tail model fails by construction; by default the estimate moves to the centre
        // of the decayed excess, part of the way back, and the tail model's own is kept.
        let own = PredictOptions {
            excess_centre: false,
            ..o
        };
        let (t, _) = sim_predict("mixture-tail", seed, 0.05, 400, &own);
        assert_eq!(t.excess_centre, None, "no move without the option");
        assert!(
            t.estimate - truth > 0.02,
            "the case is a failure by construction"
        );
        let centre = p.excess_centre.expect("the endpoint test fires");
        assert_eq!(centre.unmoved_map_at_k, t.estimate);
        assert!((p.estimate - truth).abs() < t.estimate - truth);
        assert_eq!(p.trust.verdict, Verdict::Doubtful, "{}", p.trust.reason);
        // The levels see the tail model fail (the trend points down, to the truth); the
        // interval reaches by it only on the level-calibrated law's side, and covers the truth.
        assert!(p.trust.trend_fired() && p.trust.trend_projected < 0.0);
        let r = p.realized.unwrap();
        assert_eq!(r.trend_shift, trend_on_cal_side(&p));
        assert!(r.interval.contains(truth), "{r:?} vs {truth}");
        let (p, truth) = sim_predict("ilias-like", seed, 0.05, 400, &o);
        eprintln!(
            "ilias-like seed {seed}: err {:+.4}, {:?}: {}",
            p.estimate - truth,
            p.trust.verdict,
            p.trust.reason
        );
        // The level tests pass. (The verdict as a whole also counts the drift flag, whose
        // max |z| > 3 over 4 shards fires on ~1% of uniform samples: seed 1 reads 3.2 since
        // shards keep ⌈M/H⌉ scores, against 1 flag in 32 ilias-like, truncnormal, kumaraswamy
        // and ilias-continuous runs, docs/notes/2026-12-estimator-log.md.)
        assert!(
            !p.trust.trend_fired() && !p.trust.in_sample_fired(),
            "{}",
            p.trust.reason
        );
        if !p.drift.as_ref().is_some_and(|d| d.flagged) {
            assert_eq!(p.trust.verdict, Verdict::Trusted, "{}", p.trust.reason);
        }
        assert!(p.realized.unwrap().interval.contains(truth));
    }
}

#[test]
fn verdict_refuses_a_tiny_sample_and_needs_a_bootstrap() {
    let o = opts();
    // S ≈ 1,000 of N = 10^8: S·k/N = 0.01 < c_min.
    let (p, _) = sim_predict("ilias-like", 5, 1e-5, 100, &o);
    assert_eq!(p.trust.verdict, Verdict::Doubtful);
    assert!(
        p.trust.reason.contains("small sample"),
        "{}",
        p.trust.reason
    );
    let no_boot = PredictOptions {
        bootstrap: 0,
        sample_noise: 0,
        ..o
    };
    let (p, _) = sim_predict("ilias-like", 5, 0.05, 100, &no_boot);
    assert_eq!(p.trust.verdict, Verdict::Unchecked, "{}", p.trust.reason);
}

/// The estimate is not an interval: without replicates (`bootstrap: 0`) the endpoint test's
/// move uses the ideal bootstrap's SE, so the estimate is the one B replicates approximate.
#[test]
fn the_estimate_does_not_need_a_bootstrap() {
    let o = opts();
    let no_boot = PredictOptions {
        bootstrap: 0,
        sample_noise: 0,
        ..o
    };
    let (p, _) = sim_predict("mixture-tail", 1, 0.05, 400, &o);
    let (q, _) = sim_predict("mixture-tail", 1, 0.05, 400, &no_boot);
    let (cp, cq) = (
        p.excess_centre.unwrap(),
        q.excess_centre.expect("the move without B"),
    );
    // The endpoint test's SE is the ideal bootstrap's, so the move and its gate, and with
    // them the estimate, are the same bit for bit with or without replicates.
    assert_eq!(cp, cq);
    assert_eq!(p.estimate, q.estimate);
    assert_eq!((p.hit_at_1, p.recall_at_k), (q.hit_at_1, q.recall_at_k));
    assert_eq!(q.trust.verdict, Verdict::Unchecked, "{}", q.trust.reason);
    let (ep, eq) = (p.trust.endpoint.unwrap(), q.trust.endpoint.unwrap());
    assert_eq!((ep.std_error, ep.z), (eq.std_error, eq.z));
    assert!(
        eq.std_error.is_finite() && eq.std_error > 0.0,
        "{}",
        eq.std_error
    );
}

/// The top-spacing test reads the spread pair's thin rare mass (about one item per query at
/// N, so one sampled item in a few queries), which the endpoint test misses, and stays quiet
/// on ilias-like; its z is the stated binomial one.
#[test]
fn top_spacing_flags_thin_rare_mass_and_passes_ilias_like() {
    use tailrank::predict::spacing_test::ALPHA;
    let o = opts();
    let (p, truth) = sim_predict("spread-even", 1, 0.05, 400, &o);
    let t = p.trust.spacing.expect("a summary gives the test");
    let expected = ALPHA * t.tested as f64;
    assert_eq!(t.excess, t.exceeding as f64 - expected);
    let z = t.excess / (ALPHA * (1.0 - ALPHA) * t.tested as f64).sqrt();
    assert!((t.z - z).abs() < 1e-12);
    assert!(t.tested > 350, "{t:?}");
    assert!(t.z > Z_CRIT && p.trust.spacing_fired(), "{t:?}");
    assert_eq!(p.trust.verdict, Verdict::Doubtful);
    assert!(p.trust.reason.contains("top spacing"), "{}", p.trust.reason);
    assert!(
        p.estimate - truth > 0.02,
        "the estimate misses the rare mass"
    );
    let (q, _) = sim_predict("ilias-like", 1, 0.05, 400, &o);
    let u = q.trust.spacing.unwrap();
    assert!(u.z.abs() < Z_CRIT && !q.trust.spacing_fired(), "{u:?}");
}

#[test]
fn level_selected_fit_is_the_argmin_and_reproduces_predict() {
    let o = opts();
    let (p, truth) = sim_predict("beta-mixture", 1, 0.05, 300, &o);
    let f = p
        .baselines
        .level_selected
        .as_ref()
        .expect("evt on a summary with levels");
    let c = *f.chosen();
    assert!(f.candidates.len() >= 12);
    for other in &f.candidates {
        assert!(c.in_sample_error.abs() <= other.in_sample_error.abs());
    }
    // `predict` with the chosen fit as its own: the estimate is m_fit, and its in-sample
    // check from level 1 is e_1(c*), through the trust module's own code path.
    let chosen = PredictOptions {
        estimator: Estimator::Evt(EvtOptions {
            top_m: c.fit_top,
            quantile: c.quantile,
            ..EvtOptions::DEFAULT
        }),
        ..o
    };
    let (q, _) = sim_predict("beta-mixture", 1, 0.05, 300, &chosen);
    assert!((q.estimate - f.map_at_k).abs() < 1e-12);
    assert!((q.recall_at_k - f.recall_at_k).abs() < 1e-12);
    // The fit's own hit@1 is the count law's; `predict` reports it calibrated on the levels
    // and keeps the count law's value beside it.
    let cal = q.hit_calibration.expect("levels calibrate hit@1");
    assert!((cal.uncalibrated_hit_at_1 - f.hit_at_1).abs() < 1e-12);
    let u = q.trust.used().unwrap();
    assert!((u.error - c.in_sample_error).abs() < 1e-12);
    assert!((u.std_error - f.in_sample_std_error).abs() < 1e-12);
    // δ_fit, the fit-choice test and the interval's span.
    let d = p.trust.fit_choice_shift.unwrap();
    assert_eq!(d, f.map_at_k - p.estimate);
    assert_eq!(p.trust.fit_choice_fired(), d.abs() > FIT_TOLERANCE);
    if p.trust.fit_choice_fired() {
        assert_eq!(p.trust.verdict, Verdict::Doubtful);
        assert!(p.trust.reason.contains("fit choice"), "{}", p.trust.reason);
    }
    assert!(p.realized.unwrap().interval.contains(f.map_at_k));
    // beta-mixture is a family the paper's fit misses by construction (−5 points at 5%,
    // docs/reference/validation.md); the levels pick a fit that is closer.
    eprintln!(
        "beta-mixture: evt {:+.4}, level-selected {:+.4} (top {}, q {})",
        p.estimate - truth,
        f.map_at_k - truth,
        c.fit_top,
        c.quantile
    );
    assert!((f.map_at_k - truth).abs() < (p.estimate - truth).abs());
    // `--fit level-selected`: the chosen fit is the estimate, the options' fit the other
    // opinion, so δ_fit changes sign and the interval's span is the same pair.
    let selected = PredictOptions {
        fit: FitMode::LevelSelected,
        ..o
    };
    let (ps, _) = sim_predict("beta-mixture", 1, 0.05, 300, &selected);
    assert_eq!(ps.estimate, q.estimate);
    assert_eq!(ps.options.estimator, chosen.estimator);
    assert_eq!(ps.options.fit, FitMode::LevelSelected);
    assert_eq!(ps.trust.fit_choice_shift, Some(p.estimate - ps.estimate));
    assert_eq!(ps.baselines.level_selected, p.baselines.level_selected);
    assert_eq!(
        ps.realized.unwrap().fit_choice_estimate,
        Some(p.estimate),
        "the other opinion is the options' fit"
    );
    // The default is the level-selected fit.
    assert_eq!(PredictOptions::default().fit, FitMode::LevelSelected);
    // The count estimator has no fit to choose: it runs as it is, and the report says fixed.
    let count = PredictOptions {
        estimator: Estimator::Count,
        ..selected
    };
    let (pc, _) = sim_predict("beta-mixture", 1, 0.05, 300, &count);
    assert!(pc.baselines.level_selected.is_none());
    assert!(pc.trust.fit_choice_shift.is_none());
    assert_eq!(pc.options.fit, FitMode::Fixed);
    let (pf, _) = sim_predict(
        "beta-mixture",
        1,
        0.05,
        300,
        &PredictOptions {
            fit: FitMode::Fixed,
            ..count
        },
    );
    assert_eq!(pc.estimate, pf.estimate);
    // A hardness file carries the fit its prediction chose: read back under either mode, it
    // gives that prediction's estimate.
    let mut cfg = SimConfig::preset("beta-mixture", 1)
        .unwrap()
        .with_queries(300);
    cfg.fraction = 0.05;
    let sim = simulate_summary(&cfg).unwrap();
    let meta = tailrank::predict::hardness_meta(&sim.summary, &ps);
    let h = &ps.hardness;
    for fit in FitMode::ALL {
        let from_file =
            tailrank::predict::predict_from_hardness(&meta, h, &PredictOptions { fit, ..selected })
                .unwrap();
        assert_eq!(from_file.estimate, ps.estimate, "{fit:?}");
    }
    // A comparison gives each model the fit `predict` gives it: a model against itself is 0,
    // and its level-0 value is the selected estimate's tail-model value.
    let c = tailrank::predict::compare::compare(&sim.summary, &sim.summary, &selected).unwrap();
    assert_eq!(c.difference, 0.0);
    assert!((c.map_at_k_a - f.map_at_k).abs() < 1e-12);
}

/// The endpoint test counts what its docs say, recomputed here from each level's own hardness
/// and the endpoint law: immune positives of levels 1–3, how many of them level 0 outranks,
/// and the law's expected number; it fires on mixture-tail (a rare component past the main
/// endpoint) and not on ilias-like. The excess rate solves its stated equation, and the
/// realized interval spans the reading it gives (the binomial map of the hardness with every
/// level-0 immune positive at that rate), which is harder than the estimate. When the excess
/// is real (`z > Z_CRIT`, `w = 1 − 1/z²`), the estimate, Recall@k and hit@1 are
/// the centre of the shrunk excess (halfway between the count law at rate 0 and at the
/// survivor-decayed rate of `P + w·(O − P)`, which is the constant rate `r_w` when the decay
/// is 0 and below it otherwise), and the interval still spans the tail model's own.
#[test]
fn endpoint_test_counts_the_stated_events() {
    use tailrank::evt::endpoint_law::EndpointLaw;
    use tailrank::hardness::Branch;
    use tailrank::predict::hardness_for;
    let o = PredictOptions {
        excess_centre: true,
        ..opts()
    };
    let mut laws = std::collections::HashMap::new();
    for (preset, fires) in [("mixture-tail", true), ("ilias-like", false)] {
        let mut cfg = SimConfig::preset(preset, 1).unwrap().with_queries(300);
        cfg.fraction = 0.05;
        let s = simulate_summary(&cfg).unwrap().summary;
        let p = predict(&s, &o).unwrap();
        let e = p
            .trust
            .endpoint
            .as_ref()
            .expect("five levels give the test");
        assert_eq!(e.levels, vec![1, 2, 3]);
        let subsets = s.level_indices();
        let h0 = hardness_for(&s, 0, &o).unwrap();
        let n = p.pool_size as f64;
        let map_er = |q: &QueryHardness| {
            tailrank::maps::ap_at_k(q, n, o.k, tailrank::maps::MapKind::ExpectedRank)
        };
        let map_bin = |q: &QueryHardness| {
            tailrank::maps::ap_at_k(q, n, o.k, tailrank::maps::MapKind::Binomial)
        };
        let (mut immune, mut observed, mut predicted) = (0, 0, 0.0);
        let mut law_cases = Vec::new();
        let mut per_level = Vec::new();
        // d_q = O_q − P_q, summed over the levels.
        let mut diff = vec![0.0; h0.len()];
        for &sub in &subsets[1..=3] {
            let before = (immune, observed, predicted, law_cases.len());
            let hl = hardness_for(&s, sub, &o).unwrap();
            let exposure =
                (s.subset_sizes[0] - s.subset_sizes[sub]) as f64 / s.subset_sizes[sub] as f64;
            for ((q0, ql), d) in h0.iter().zip(&hl).zip(&mut diff) {
                for (p0, pl) in q0.positives.iter().zip(&ql.positives) {
                    if pl.branch != Branch::Immune {
                        continue;
                    }
                    let t = ql.tail.unwrap();
                    let end = t.u - t.fit.gpd.sigma / t.fit.gpd.xi;
                    let z = (f64::from(pl.score) - end) / (end - t.u);
                    immune += 1;
                    let outranked = usize::from(p0.pool_above > pl.pool_above);
                    observed += outranked;
                    let law = laws.entry(t.n_u).or_insert_with(|| EndpointLaw::new(t.n_u));
                    let pi = law.outranked_probability(t.fit.gpd.xi, z, exposure);
                    predicted += pi;
                    *d += outranked as f64 - pi;
                    law_cases.push((pi, (s.subset_sizes[0] - s.subset_sizes[sub]) as f64));
                }
            }
            per_level.push((
                immune - before.0,
                observed - before.1,
                predicted - before.2,
                law_cases[before.3..].to_vec(),
            ));
        }
        eprintln!("{preset}: {e:?}");
        assert_eq!((e.immune, e.observed), (immune, observed));
        // Per level: the same counts, and r_ℓ solves its own level's equation.
        assert_eq!(e.per_level.len(), 3);
        for (l, (want, (n, o, pr, cases))) in e.per_level.iter().zip(&per_level).enumerate() {
            assert_eq!((want.level, want.immune, want.observed), (l + 1, *n, *o));
            assert!((want.predicted - pr).abs() < 1e-9 * pr.max(1.0));
            let at = |r: f64| -> f64 {
                cases
                    .iter()
                    .map(|&(pi, u)| 1.0 - (1.0 - pi) * (-u * r).exp())
                    .sum()
            };
            if (*o as f64) > at(0.0) {
                assert!((at(want.excess_rate) - *o as f64).abs() < 1e-6, "{want:?}");
            } else {
                assert_eq!(want.excess_rate, 0.0);
            }
        }
        assert!((e.predicted - predicted).abs() < 1e-9 * predicted.max(1.0));
        // SE: the ideal paired bootstrap's, √Σ(d_q − D)²/Q.
        let q = diff.len() as f64;
        let dm = diff.iter().sum::<f64>() / q;
        let se = diff.iter().map(|d| (d - dm) * (d - dm)).sum::<f64>().sqrt() / q;
        assert!(
            (e.std_error - se).abs() < 1e-12 * se && se > 0.0,
            "{} vs {se}",
            e.std_error
        );
        assert!((e.z - dm / se).abs() < 1e-9 * e.z.abs().max(1.0), "{e:?}");
        assert_eq!(e.exceeds(tailrank::predict::trust::Z_CRIT), fires, "{e:?}");
        assert_eq!(p.trust.endpoint_fired(), fires);
        if fires {
            assert_eq!(p.trust.verdict, Verdict::Doubtful);
            assert!(p.trust.reason.contains("endpoint:"), "{}", p.trust.reason);
        }
        // The excess rate: Σ_i [1 − (1 − p_i)·e^{−u_i·r}] = O when O > P, else 0.
        let r = e.excess_rate;
        let realized = p.realized.expect("a realized interval");
        // The estimate before its move towards the rare items above the top positive (a
        // separate part, `spacing_test::SpacingCentre`).
        let centred = p.estimate - p.spacing_centre.map_or(0.0, |c| c.shift);
        if observed as f64 > predicted {
            let at_r: f64 = law_cases
                .iter()
                .map(|&(pi, u)| 1.0 - (1.0 - pi) * (-u * r).exp())
                .sum();
            assert!(
                r > 0.0 && (at_r - observed as f64).abs() < 1e-6,
                "{r} {at_r}"
            );
            let with_rate = |rate: f64| {
                let mut h = h0.clone();
                for q in &mut h {
                    for pos in q.positives.iter_mut() {
                        if pos.branch == Branch::Immune {
                            pos.x_hat = rate * (n - q.sample_size as f64) / n;
                        }
                    }
                }
                h
            };
            let h = with_rate(r);
            let want = mean_of(&h, &map_bin);
            let got = realized.excess_mass_estimate.expect("a positive rate");
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
            assert!(got < centred, "{got} vs {centred}");
            assert!(realized.interval.contains(got), "{realized:?}");
            // The centre of the shrunk excess: w = 1 − 1/z² past z > Z_CRIT, else 0; r_w accounts for
            // P + w·(O − P), and every per-query value moves halfway from the count law at
            // rate 0 to the count law at rate r_w (`endpoint_test::centre_of_excess`).
            let w = if e.z > tailrank::predict::trust::Z_CRIT {
                1.0 - 1.0 / (e.z * e.z)
            } else {
                0.0
            };
            assert!((e.shrink_weight - w).abs() < 1e-12, "{e:?}");
            if fires {
                assert!(w > 1.0 - 1.0 / 9.0, "a fired test keeps most of its excess");
            }
            if w > 0.0 {
                let target = predicted + w * (observed as f64 - predicted);
                let rw = e.shrunk_rate;
                let at_rw: f64 = law_cases
                    .iter()
                    .map(|&(pi, u)| 1.0 - (1.0 - pi) * (-u * rw).exp())
                    .sum();
                assert!(rw > 0.0 && rw <= r && (at_rw - target).abs() < 1e-6);
                let rg = e.decayed_rate;
                assert!(rg > 0.0 && rg <= rw * (1.0 + 1e-9), "{rg} vs {rw}");
                if e.hazard_decay == 0.0 {
                    assert!((rg - rw).abs() < 1e-9 * rw, "{rg} vs {rw}");
                }
                let hw = with_rate(rg);
                let c = p.excess_centre.expect("a positive weight");
                assert_eq!((c.excess_rate, c.weight), (rg, w));
                assert_eq!(c.hazard_decay, e.hazard_decay);
                assert!((c.unmoved_map_at_k - mean_of(&h0, &map_er)).abs() < 1e-12);
                let at_zero = mean_of(&h0, &map_bin);
                let moved = c.unmoved_map_at_k + 0.5 * (mean_of(&hw, &map_bin) - at_zero);
                assert!((centred - moved).abs() < 1e-12, "{centred} vs {moved}");
                assert!((c.shift - (moved - c.unmoved_map_at_k)).abs() < 1e-12);
                let recall = |q: &QueryHardness| tailrank::maps::recall_at_k(q, n, o.k);
                // hit@1 under the scales calibrated on the levels, moved the same way.
                let scales = p.hit_scales;
                let hit = |q: &QueryHardness| {
                    tailrank::predict::hit_calibration::hit_at_1(q, n, scales.as_ref())
                };
                let half =
                    |f: &dyn Fn(&QueryHardness) -> f64| 0.5 * (mean_of(&h0, f) + mean_of(&hw, f));
                assert!((p.recall_at_k - half(&recall)).abs() < 1e-12);
                assert!((p.hit_at_1 - half(&hit)).abs() < 1e-12);
                assert!(realized.interval.contains(c.unmoved_map_at_k));
            }
        } else {
            assert_eq!((r, e.shrink_weight, e.shrunk_rate), (0.0, 0.0, 0.0));
            assert_eq!(realized.excess_mass_estimate, None);
        }
        if e.shrink_weight == 0.0 {
            assert_eq!(p.excess_centre, None);
            assert!((p.estimate - mean_of(&h0, &map_er)).abs() < 1e-12);
        }
        // Without the option the test runs and reports, and the estimate stays the tail
        // model's.
        let d = predict(
            &s,
            &PredictOptions {
                excess_centre: false,
                ..opts()
            },
        )
        .unwrap();
        assert_eq!(d.trust.endpoint.as_ref(), Some(e));
        assert_eq!(d.excess_centre, None);
        assert!((d.estimate - mean_of(&h0, &map_er)).abs() < 1e-12);
        if fires {
            assert!(r > 0.0);
        }
    }
}

/// The endpoint test needs the levels the verdict's paired tests need (`trust::MIN_LEVELS`):
/// with two levels it is not run, so nothing moves the estimate that the report says never
/// ran (before this rule, level 1 alone moved this estimate by −2.4 points); with three it is
/// reported.
#[test]
fn the_endpoint_move_needs_the_verdicts_levels() {
    let run = |levels: usize| {
        // At the ILIAS size (1,232 queries) level 1 alone shows this seed's excess.
        let mut cfg = SimConfig::preset("mixture-tail", 1).unwrap();
        cfg.fraction = 0.05;
        cfg.levels = levels;
        let sim = simulate_summary(&cfg).unwrap();
        predict(&sim.summary, &opts()).unwrap()
    };
    let two = run(2);
    assert!(two.trust.endpoint.is_none());
    assert!(two.excess_centre.is_none());
    assert_eq!(
        two.trust.verdict,
        Verdict::Unchecked,
        "{}",
        two.trust.reason
    );
    let three = run(3);
    assert!(three.trust.endpoint.is_some(), "{}", three.trust.reason);
}

/// One query has no measured noise (its SE is 0, its z infinite): its excess moves nothing
/// (with the limit w = 1 this summary's estimate moved by −30 points).
#[test]
fn one_query_moves_nothing() {
    let (p, _) = sim_predict("hubs", 25, 0.05, 1, &PredictOptions::default());
    assert!(p.excess_centre.is_none(), "{:?}", p.excess_centre);
}
