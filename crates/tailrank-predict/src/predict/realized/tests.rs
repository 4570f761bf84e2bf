//! Tests of `predict::realized`.
use super::*;
use crate::predict::trust::Verdict;

fn opinions(other_map: f64, other_fit: Option<f64>) -> Opinions {
    Opinions {
        other_map,
        other_fit,
        other_fit_reach: None,
        calibrated: None,
        excess_mass: None,
        count: None,
        spacing_above: None,
        levels_high: None,
        unmoved: None,
    }
}

/// Without a level-selected fit (the count estimator), a trend that projects past the
/// metric's range is cut at [0, 1]; the span of the maps and the pool noise set the other
/// end. With one, the trend is not spanned: the readings and the pool noise set both ends.
#[test]
fn ends_stay_in_the_unit_interval() {
    let mut t = Trust::without_tests(Verdict::Doubtful, String::new());
    t.trend_projected = 0.4;
    t.trend_std_error = 0.01;
    assert!(t.trend_fired());
    // The interval of `estimate` spanning the other map's (and the other fit's) estimates.
    let spanning = |estimate, other_map, other_fit, shards: &[f64], t: &Trust| {
        let ops = opinions(other_map, other_fit);
        realized_interval(estimate, ops, f64::NAN, shards, None, t, 0.95).unwrap()
    };
    let r = spanning(0.8, 0.78, None, &[0.79, 0.81], &t);
    assert_eq!((r.interval.hi, r.trend_shift), (1.0, 0.4));
    let h = crate::numerics::norm_ppf(0.975) * r.pool_sd;
    assert!((r.interval.lo - (0.78 - h)).abs() < 1e-12);
    let r = spanning(0.8, 0.82, Some(0.78), &[0.79, 0.81], &t);
    assert_eq!(r.trend_shift, 0.0);
    assert!((r.interval.hi - (0.82 + h)).abs() < 1e-12);
    assert!((r.interval.lo - (0.78 - h)).abs() < 1e-12);
    t.trend_projected = -0.9;
    let r = spanning(0.3, 0.32, None, &[0.29, 0.31], &t);
    assert_eq!(r.interval.lo, 0.0);
    assert!((r.interval.hi - (0.32 + h)).abs() < 1e-12);
    assert_eq!(r.fit_choice_estimate, None);
}

/// With a level-selected fit the trend is spanned only when the level-calibrated law lies
/// on its side of the estimate.
#[test]
fn the_trend_counts_where_the_calibrated_law_agrees() {
    let mut t = Trust::without_tests(Verdict::Doubtful, String::new());
    t.trend_projected = -0.05;
    t.trend_std_error = 0.01;
    let with_cal = |cal| Opinions {
        calibrated: cal,
        ..opinions(0.40, Some(0.40))
    };
    let r = |cal| realized_interval(0.40, with_cal(cal), f64::NAN, &[0.4, 0.4], None, &t, 0.95);
    let agree = r(Some(0.38)).unwrap();
    assert_eq!(agree.trend_shift, -0.05);
    assert!((agree.interval.lo - 0.33).abs() < 1e-12, "{agree:?}");
    let disagree = r(Some(0.42)).unwrap();
    assert_eq!(disagree.trend_shift, 0.0);
    assert_eq!((disagree.interval.lo, disagree.interval.hi), (0.40, 0.42));
    assert_eq!(r(None).unwrap().trend_shift, 0.0);
}

/// The trend counts by its weights: `w(z)` from 0 at |z| = 2 to 1 at 4, `v` from 0 with
/// `m_cal` half a point on the other side of the estimate to 1 half a point on its side;
/// a trend within `TOLERANCE` does not count.
#[test]
fn the_trend_counts_by_its_weights() {
    use crate::predict::reach::{side_weight, z_weight};
    assert_eq!(
        (z_weight(2.0), z_weight(-3.0), z_weight(4.5)),
        (0.0, 0.5, 1.0)
    );
    assert_eq!(
        (side_weight(-0.005), side_weight(0.0), side_weight(0.01)),
        (0.0, 0.5, 1.0)
    );
    let mut t = Trust::without_tests(Verdict::Doubtful, String::new());
    t.trend_projected = -0.03;
    t.trend_std_error = 0.01;
    let ops = Opinions {
        calibrated: Some(0.3975),
        ..opinions(0.40, Some(0.40))
    };
    let r = realized_interval(0.40, ops, f64::NAN, &[0.4, 0.4], None, &t, 0.95).unwrap();
    // z = 3: w = 1/2; m_cal a quarter point below, on the trend's side: v = 3/4.
    assert!(
        (r.trend_shift - (-0.03 * 0.5 * 0.75)).abs() < 1e-15,
        "{r:?}"
    );
    assert!(
        (r.interval.lo - (0.3975 + r.trend_shift)).abs() < 1e-12,
        "{r:?}"
    );
    t.trend_projected = -0.004;
    t.trend_std_error = 0.0001;
    let r = realized_interval(0.40, ops, f64::NAN, &[0.4, 0.4], None, &t, 0.95).unwrap();
    assert_eq!(r.trend_shift, 0.0);
}

/// The reach towards the other fit stops at `r_fit` from the tail model's own value, on
/// either side, and is reported; without a reach the whole span is kept, and a reach past
/// `m_fit` keeps `m_fit`.
#[test]
fn the_reach_towards_the_other_fit_is_capped() {
    let t = Trust::without_tests(Verdict::Trusted, String::new());
    let with = |other_fit, reach| Opinions {
        other_fit_reach: reach,
        ..opinions(0.41, Some(other_fit))
    };
    let r = |ops| realized_interval(0.40, ops, f64::NAN, &[0.4, 0.4], None, &t, 0.95);
    let below = r(with(0.30, Some(0.02))).unwrap();
    assert!((below.interval.lo - 0.38).abs() < 1e-15, "{below:?}");
    assert_eq!(below.interval.hi, 0.41);
    assert_eq!(below.fit_choice_estimate, Some(0.30));
    assert_eq!(below.fit_choice_reach, Some(0.02));
    let above = r(with(0.50, Some(0.02))).unwrap();
    assert_eq!(above.interval.lo, 0.40);
    assert!((above.interval.hi - 0.42).abs() < 1e-15, "{above:?}");
    let uncapped = r(with(0.30, None)).unwrap();
    assert_eq!(
        (uncapped.interval.lo, uncapped.fit_choice_reach),
        (0.30, None)
    );
    let inside = r(with(0.39, Some(0.02))).unwrap();
    assert_eq!(inside.interval.lo, 0.39);
    // Around the tail model's own value when the estimate moved to the centre of the
    // excess: 0.45 − 0.02 lies above the estimate, which sets the lower end.
    let moved = Opinions {
        unmoved: Some(0.45),
        ..with(0.30, Some(0.02))
    };
    let m = r(moved).unwrap();
    assert_eq!((m.interval.lo, m.interval.hi), (0.40, 0.45));
}

/// `r_fit = (|e_ℓ| + z·se_ℓ)·ln(N/S_0)/ln(S_0/S_ℓ)`, None without a finite SE or with
/// `S_ℓ = S_0`.
#[test]
fn the_fit_reach_is_the_level_checks_projected_bound() {
    let check = InSample {
        level: 1,
        sample_size: 500,
        predicted: 0.3,
        error: -0.004,
        std_error: 0.001,
        projected_error: f64::NAN,
    };
    let z = 1.959_963_984_540_054;
    let want = (0.004 + z * 0.001) * (1e6f64 / 1e3).ln() / 2f64.ln();
    let got = fit_choice_reach(&check, 1e6, 1e3, 0.95).unwrap();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    let no_se = InSample {
        std_error: f64::NAN,
        ..check
    };
    assert_eq!(fit_choice_reach(&no_se, 1e6, 1e3, 0.95), None);
    let same = InSample {
        sample_size: 1000,
        ..check
    };
    assert_eq!(fit_choice_reach(&same, 1e6, 1e3, 0.95), None);
}

/// The level-calibrated law is spanned whatever the verdict.
#[test]
fn the_second_opinion_is_spanned() {
    let ops = Opinions {
        other_map: 0.41,
        other_fit: Some(0.42),
        other_fit_reach: None,
        calibrated: Some(0.50),
        excess_mass: None,
        count: None,
        spacing_above: None,
        levels_high: None,
        unmoved: None,
    };
    for verdict in [Verdict::Trusted, Verdict::Doubtful] {
        let t = Trust::without_tests(verdict, String::new());
        let r = realized_interval(0.40, ops, f64::NAN, &[0.40, 0.40], None, &t, 0.95).unwrap();
        assert_eq!((r.interval.lo, r.interval.hi), (0.40, 0.50));
        assert_eq!(r.calibrated_estimate, Some(0.50));
        let below = Opinions {
            calibrated: Some(0.30),
            ..ops
        };
        let r = realized_interval(0.40, below, f64::NAN, &[0.40, 0.40], None, &t, 0.95).unwrap();
        assert_eq!((r.interval.lo, r.interval.hi), (0.30, 0.42));
    }
}

/// The excess-mass reading is spanned whatever the verdict, when it exists.
#[test]
fn the_excess_mass_reading_is_spanned() {
    let ops = Opinions {
        other_map: 0.41,
        other_fit: Some(0.42),
        other_fit_reach: None,
        calibrated: Some(0.50),
        excess_mass: Some(0.33),
        count: None,
        spacing_above: None,
        levels_high: None,
        unmoved: None,
    };
    let trusted = Trust::without_tests(Verdict::Trusted, String::new());
    let r = realized_interval(0.40, ops, f64::NAN, &[0.40, 0.40], None, &trusted, 0.95).unwrap();
    assert_eq!((r.interval.lo, r.interval.hi), (0.33, 0.50));
    assert_eq!(r.excess_mass_estimate, Some(0.33));
    let none = Opinions {
        excess_mass: None,
        ..ops
    };
    let r = realized_interval(0.40, none, f64::NAN, &[0.40, 0.40], None, &trusted, 0.95).unwrap();
    assert_eq!((r.interval.lo, r.interval.hi), (0.40, 0.50));
    assert_eq!(r.excess_mass_estimate, None);
    // The reading of rare items above the top positive is spanned the same way, ...
    let above = Opinions {
        spacing_above: Some(0.30),
        ..none
    };
    // ... weighted by the top-spacing test's z: in full from z = 4, not at all up to 2;
    // the z is the clearer of the pooled one and that of the count above the top positive
    // (1 of 100 is the null's own count, z_a < 0; 10 of 10 stands out, z_a ≈ 7.9).
    for (z, (tested_above, exceeding_above), lo) in [
        (5.0, (100, 1), 0.30),
        (3.0, (100, 1), 0.35),
        (1.0, (100, 1), 0.40),
        (1.0, (10, 10), 0.30),
    ] {
        let mut t = trusted.clone();
        t.spacing = Some(crate::predict::spacing_test::SpacingTest {
            tested: 100,
            exceeding: 10,
            excess: 9.0,
            z,
            tested_above,
            exceeding_above,
        });
        let r = realized_interval(0.40, above, f64::NAN, &[0.40, 0.40], None, &t, 0.95).unwrap();
        assert!(
            (r.interval.lo - lo).abs() < 1e-12,
            "z {z}, {exceeding_above} of {tested_above} above: {:?}",
            r.interval
        );
        let a = r.spacing_above.unwrap();
        assert_eq!((a.estimate, a.low_others), (0.30, 0.40));
        assert!((a.extension(1.0) - (0.40 - lo)).abs() < 1e-12);
    }
}

/// The upper end stops at the evaluate-at-S value, the hard bound of the metric at N, and
/// records it; an end below the bound, or no bound, is left alone; an estimate above the
/// bound stays inside.
#[test]
fn the_upper_end_stops_at_the_sample_value() {
    let ops = Opinions {
        calibrated: Some(0.50),
        ..opinions(0.41, Some(0.42))
    };
    let t = Trust::without_tests(Verdict::Doubtful, String::new());
    let r = realized_interval(0.40, ops, 0.45, &[0.40, 0.40], None, &t, 0.95).unwrap();
    assert_eq!((r.interval.lo, r.interval.hi), (0.40, 0.45));
    assert_eq!(r.ceiling, Some(0.45));
    for ceiling in [0.60, f64::NAN] {
        let r = realized_interval(0.40, ops, ceiling, &[0.40, 0.40], None, &t, 0.95).unwrap();
        assert_eq!((r.interval.lo, r.interval.hi), (0.40, 0.50));
        assert_eq!(r.ceiling, None);
    }
    let r = realized_interval(0.40, ops, 0.38, &[0.40, 0.40], None, &t, 0.95).unwrap();
    assert_eq!(r.interval.hi, 0.40);
}

/// The count reading is spanned when it is given (the last doubling left the sample
/// unsettled), on either side, and reported; the ceiling still cuts it.
#[test]
fn an_unsettled_sample_spans_the_count_reading() {
    let t = Trust::without_tests(Verdict::Doubtful, String::new());
    let base = Opinions {
        calibrated: Some(0.45),
        ..opinions(0.41, Some(0.42))
    };
    let with = |count| Opinions { count, ..base };
    let r = realized_interval(0.40, with(Some(0.60)), 0.70, &[0.4, 0.4], None, &t, 0.95);
    let r = r.unwrap();
    assert_eq!((r.interval.lo, r.interval.hi), (0.40, 0.60));
    assert_eq!(r.count_estimate, Some(0.60));
    let r = realized_interval(0.40, with(Some(0.60)), 0.55, &[0.4, 0.4], None, &t, 0.95);
    assert_eq!(r.unwrap().interval.hi, 0.55);
    let r = realized_interval(0.40, with(Some(0.30)), 0.70, &[0.4, 0.4], None, &t, 0.95);
    assert_eq!(r.unwrap().interval.lo, 0.30);
    let r = realized_interval(0.40, with(None), 0.70, &[0.4, 0.4], None, &t, 0.95).unwrap();
    assert_eq!((r.interval.lo, r.interval.hi), (0.40, 0.45));
    assert_eq!(r.count_estimate, None);
}

/// The falling estimate: the levels' highest prediction (levels 1 to 4, not deeper) is
/// read only when the estimate is lowest on the whole sample (levels 0–2), and the upper end
/// reaches it plus the pool noise, under the evaluate-at-S ceiling.
#[test]
fn a_falling_estimate_reaches_up_to_the_levels_highest() {
    let level = |level, estimate| LevelPrediction {
        level,
        subset: level,
        fraction: 0.05 / f64::from(1 << level),
        sample_size: 1000 >> level,
        estimate,
        std_error: 0.01,
        evaluate_at_s: 0.9,
    };
    let levels = [0.40, 0.42, 0.41, 0.44, 0.47, 0.60];
    let levels: Vec<_> = (0..6).map(|l| level(l, levels[l])).collect();
    let mut t = Trust::without_tests(Verdict::Doubtful, String::new());
    assert_eq!(levels_high(&levels, &t), None);
    t.level_rises = Some([0.02, -0.001]);
    assert_eq!(levels_high(&levels, &t), None);
    t.level_rises = Some([0.02, 0.01]);
    assert_eq!(levels_high(&levels, &t), Some(0.47));
    let ops = |levels_high| Opinions {
        levels_high,
        ..opinions(0.40, None)
    };
    let r = |m, ceiling| {
        realized_interval(0.40, ops(m), ceiling, &[0.39, 0.41], None, &t, 0.95).unwrap()
    };
    let h = crate::numerics::norm_ppf(0.975) * r(None, f64::NAN).pool_sd;
    let up = r(Some(0.47), f64::NAN);
    assert!((up.interval.hi - (0.47 + h)).abs() < 1e-12, "{up:?}");
    assert!((up.interval.lo - (0.40 - h)).abs() < 1e-12);
    let e = up.levels_high.unwrap();
    assert_eq!(e.estimate, 0.47);
    assert!((e.extension - 0.07).abs() < 1e-12, "{e:?}");
    assert_eq!(r(Some(0.39), f64::NAN).levels_high.unwrap().extension, 0.0);
    assert_eq!(r(Some(0.47), 0.45).interval.hi, 0.45);
    // Below the other readings' end it changes nothing.
    assert_eq!(r(Some(0.39), f64::NAN).interval, r(None, f64::NAN).interval);
}
