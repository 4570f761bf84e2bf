//! Uncertainty and diagnostics: percentile/BCa intervals against scipy (same replicates, and
//! scipy.stats.bootstrap's own resampling), normal functions against scipy.special, the
//! sample-noise reweighting's consistency, the budget and drift verdicts.

use tailrank_test_support::predict_support;
use tailrank_test_support::python as common;

use predict_support::{synth, Rng, SynthOpts};
use tailrank::numerics::{norm_cdf, norm_ppf, rng_for, StreamSeeding};
use tailrank::predict::bootstrap::{perturb_query, sample_noise, QueryBootstrap};
use tailrank::predict::diagnostics::{budget, LevelPrediction};
use tailrank::predict::stats;
use tailrank::predict::{predict, PredictOptions};

/// Skewed per-query values in [0, 1] like APs (many near 0 and 1).
fn ap_like(n: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng(seed);
    (0..n)
        .map(|_| {
            let u = r.unif();
            if u < 0.2 {
                0.0
            } else if u > 0.9 {
                1.0
            } else {
                r.unif().powi(2)
            }
        })
        .collect()
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

#[test]
fn normal_cdf_and_quantile_match_scipy() {
    let xs = [-8.0, -5.5, -3.0, -1.96, -0.5, 0.0, 0.3, 1.0, 2.5, 4.0, 7.0];
    let ps = [
        1e-12,
        1e-6,
        0.001,
        0.025,
        0.2,
        0.5,
        0.77,
        0.975,
        0.999,
        1.0 - 1e-9,
    ];
    let code = "import json,sys\nfrom scipy.special import ndtr, ndtri\nx=json.loads(sys.argv[1]);p=json.loads(sys.argv[2])\nprint(json.dumps([[float(ndtr(v)) for v in x],[float(ndtri(v)) for v in p]]))";
    let r: Vec<Vec<f64>> =
        serde_json::from_str(&common::run_python(code, &[&json(&xs), &json(&ps)])).unwrap();
    for (x, want) in xs.iter().zip(&r[0]) {
        let got = norm_cdf(*x);
        assert!(
            (got - want).abs() <= 1e-13 * want.max(1e-300) + 1e-300,
            "Φ({x}) = {got} vs {want}"
        );
    }
    for (p, want) in ps.iter().zip(&r[1]) {
        let got = norm_ppf(*p);
        assert!(
            (got - want).abs() < 1e-9 * want.abs().max(1.0),
            "Φ⁻¹({p}) = {got} vs {want}"
        );
    }
}

#[test]
fn intervals_match_the_scipy_formulas_on_the_same_replicates() {
    let v = ap_like(150, 7);
    let est = v.iter().sum::<f64>() / v.len() as f64;
    let boot = QueryBootstrap::new(v.len(), 2000, 42);
    let reps = boot.means(&v);
    let s = boot.summarize(&v, est, 0.9);
    let code = r#"
import json, sys
import numpy as np
from scipy.special import ndtr, ndtri
v = np.array(json.loads(sys.argv[1])); reps = np.array(json.loads(sys.argv[2])); est = v.mean()
alpha = 0.05
pct = np.percentile(reps, [100 * alpha, 100 * (1 - alpha)])
z0 = ndtri((reps < est).mean())
n = len(v); jack = (v.sum() - v) / (n - 1); jm = jack.mean()
a = ((jm - jack) ** 3).sum() / (6 * ((jm - jack) ** 2).sum() ** 1.5)
ends = []
for al in [alpha, 1 - alpha]:
    za = ndtri(al)
    ends.append(np.percentile(reps, 100 * ndtr(z0 + (z0 + za) / (1 - a * (z0 + za)))))
print(json.dumps([float(x) for x in [*pct, *ends, reps.std(ddof=1)]]))
"#;
    let r: Vec<f64> =
        serde_json::from_str(&common::run_python(code, &[&json(&v), &json(&reps)])).unwrap();
    let got = [
        s.percentile.lo,
        s.percentile.hi,
        s.bca.lo,
        s.bca.hi,
        s.std_error,
    ];
    for (g, w) in got.iter().zip(&r) {
        assert!((g - w).abs() < 1e-12, "{got:?} vs {r:?}");
    }
}

#[test]
fn intervals_agree_with_scipy_stats_bootstrap() {
    let v = ap_like(120, 11);
    let est = v.iter().sum::<f64>() / v.len() as f64;
    let b = 20_000;
    let s = QueryBootstrap::new(v.len(), b, 3).summarize(&v, est, 0.95);
    let code = r#"
import json, sys
import numpy as np
from scipy.stats import bootstrap
v = np.array(json.loads(sys.argv[1]))
out = []
for m in ["percentile", "BCa"]:
    r = bootstrap((v,), np.mean, n_resamples=20000, method=m, confidence_level=0.95, random_state=np.random.default_rng(5))
    out += [float(r.confidence_interval.low), float(r.confidence_interval.high)]
out.append(float(r.standard_error))
print(json.dumps(out))
"#;
    let r: Vec<f64> = serde_json::from_str(&common::run_python(code, &[&json(&v)])).unwrap();
    let se = r[4];
    // Theory: the bootstrap SE of a mean is the population sd over √Q.
    let sd_pop = (v.iter().map(|x| (x - est).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
    assert!((s.std_error / (sd_pop / (v.len() as f64).sqrt()) - 1.0).abs() < 0.03);
    assert!((s.std_error - se).abs() < 0.03 * se);
    let got = [s.percentile.lo, s.percentile.hi, s.bca.lo, s.bca.hi];
    for (g, w) in got.iter().zip(&r[..4]) {
        assert!(
            (g - w).abs() < 0.08 * se,
            "{got:?} vs scipy {r:?} (se {se})"
        );
    }
    assert!(s.bca.lo < est && est < s.bca.hi);
}

#[test]
fn query_bootstrap_is_seeded() {
    let v = ap_like(60, 1);
    let a = QueryBootstrap::new(60, 100, 9).means(&v);
    let b = QueryBootstrap::new(60, 100, 9).means(&v);
    let c = QueryBootstrap::new(60, 100, 10).means(&v);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn reweighted_counts_agree_with_the_reweighted_list() {
    // K_j* must equal the number of reweighted top scores strictly above s_j whenever all the
    // items above s_j are in the weighted part of the list, and never decrease in j.
    let sy = synth(&SynthOpts {
        queries: 30,
        sample: 8000,
        top_m: 2000,
        ..SynthOpts::default()
    });
    let mut checked = 0;
    for (i, q) in sy.summary.queries.iter().enumerate() {
        let mut rng = rng_for(StreamSeeding::Chained, 5, 1, i as u64);
        let full = q.top_scores[0].len() >= sy.summary.top_m;
        let pq = perturb_query(q, full, 0.95, &mut rng);
        let m = 2000usize.min(((2.0 * 0.05 * 2000f64).ceil() as usize) + 64);
        let list = &pq.top_scores[0];
        assert!(list.windows(2).all(|w| w[0] >= w[1]), "descending");
        let mut prev = 0;
        for (p, orig) in pq.positives.iter().zip(&q.positives) {
            let k = p.pool_above[0];
            assert!(k >= prev);
            prev = k;
            if (orig.pool_above[0] as usize) <= m {
                let above = list.iter().filter(|&&t| t > p.score).count() as u64;
                assert_eq!(k, above, "query {i}");
                checked += 1;
            }
        }
    }
    assert!(checked > 20);
    // Poisson(1) weights: the reweighted head has about the same length on average.
    let mut tot = 0i64;
    let mut n = 0i64;
    for (i, q) in sy.summary.queries.iter().enumerate() {
        let mut rng = rng_for(StreamSeeding::Chained, 6, 1, i as u64);
        let pq = perturb_query(q, false, 0.95, &mut rng);
        tot += pq.top_scores[0].len() as i64 - q.top_scores[0].len() as i64;
        n += q.top_scores[0].len() as i64;
    }
    assert!(
        (tot as f64).abs() < 4.0 * (n as f64).sqrt(),
        "{tot} over {n}"
    );
}

#[test]
fn sample_noise_widens_the_interval_and_is_seeded() {
    let sy = synth(&SynthOpts::default());
    let opts = PredictOptions {
        bootstrap: 400,
        sample_noise: 60,
        seed: 3,
        ..PredictOptions::default()
    };
    let a = predict(&sy.summary, &opts).unwrap();
    let b = predict(&sy.summary, &opts).unwrap();
    assert_eq!(a.sample_noise_sd, b.sample_noise_sd);
    assert_eq!(a.crossed, b.crossed);
    let sd = a.sample_noise_sd.unwrap();
    assert!(sd > 0.0 && sd < 0.1, "{sd}");
    let total = a.total.unwrap();
    assert!(total.lo <= a.percentile.lo && total.hi >= a.percentile.hi);
    let crossed = a.crossed.unwrap();
    assert!(
        crossed.lo < a.estimate && a.estimate < crossed.hi,
        "{crossed:?} {}",
        a.estimate
    );
}

/// The replicates are of the reported estimate: a fixed per-query move `δ_q` (the centre of
/// the excess) is added to each replicate's AP, so a constant move shifts every replicate
/// mean and both ends of the crossed interval by exactly that constant, and leaves the sd.
#[test]
fn sample_noise_replicates_carry_the_fixed_move() {
    let sy = synth(&SynthOpts::default());
    let opts = PredictOptions {
        bootstrap: 50,
        sample_noise: 30,
        seed: 4,
        ..PredictOptions::default()
    };
    let q = sy.summary.queries.len();
    let boot = QueryBootstrap::new(q, opts.bootstrap, opts.seed);
    let n = sy.summary.pool_size.expect("a pool size") as f64;
    let plain = sample_noise(&sy.summary, &boot, n, &opts, &[]);
    let zero = sample_noise(&sy.summary, &boot, n, &opts, &vec![0.0; q]);
    assert_eq!(plain.replicates, zero.replicates);
    let moved = sample_noise(&sy.summary, &boot, n, &opts, &vec![-0.03; q]);
    for (a, b) in plain.replicates.iter().zip(&moved.replicates) {
        assert!((b - a + 0.03).abs() < 1e-12, "{a} {b}");
    }
    assert!((moved.crossed.lo - plain.crossed.lo + 0.03).abs() < 1e-12);
    assert!((moved.crossed.hi - plain.crossed.hi + 0.03).abs() < 1e-12);
    assert!((moved.sd - plain.sd).abs() < 1e-12);
}

#[test]
fn budget_verdict_rules() {
    let lv = |level: usize, est: f64, se: f64| LevelPrediction {
        level,
        subset: level,
        fraction: 0.05 / (1 << level) as f64,
        sample_size: 1000 >> level,
        estimate: est,
        std_error: se,
        evaluate_at_s: 0.5,
    };
    // Levels 0..3; steps 1→0 and 2→1 agree, 3→2 does not: sufficient from level 2.
    let b = budget(&[
        lv(0, 0.30, 0.01),
        lv(1, 0.305, 0.01),
        lv(2, 0.31, 0.012),
        lv(3, 0.40, 0.02),
    ])
    .unwrap();
    assert!(b.sufficient);
    assert_eq!(b.first_sufficient_level, Some(2));
    assert_eq!(b.first_sufficient_size, Some(250));
    // The last doubling still moves the prediction: not sufficient.
    let b = budget(&[lv(0, 0.30, 0.01), lv(1, 0.33, 0.01), lv(2, 0.331, 0.01)]).unwrap();
    assert!(!b.sufficient && b.first_sufficient_level.is_none());
    assert!(budget(&[lv(0, 0.3, 0.01)]).is_none());
    assert!(budget(&[lv(0, 0.3, f64::NAN), lv(1, 0.3, f64::NAN)]).is_none());
}

#[test]
fn drift_is_flagged_only_for_a_non_uniform_sample() {
    let base = SynthOpts {
        queries: 60,
        sample: 12_000,
        levels: 1,
        shards: 4,
        ..SynthOpts::default()
    };
    let opts = PredictOptions {
        bootstrap: 400,
        sample_noise: 0,
        ..PredictOptions::default()
    };
    let ok = predict(&synth(&base).summary, &opts).unwrap();
    let d = ok.drift.unwrap();
    assert_eq!(d.shards.len(), 4);
    assert_eq!(d.dof, 3);
    assert!(!d.flagged, "{d:?}");
    assert!(d.shards.iter().map(|s| s.diff).sum::<f64>().abs() < 1e-12);
    let bad = predict(
        &synth(&SynthOpts {
            drift_shard: Some(2),
            ..base
        })
        .summary,
        &opts,
    )
    .unwrap();
    let d = bad.drift.unwrap();
    assert!(d.flagged, "{d:?}");
    let worst = d
        .shards
        .iter()
        .max_by(|a, b| a.z.abs().total_cmp(&b.z.abs()))
        .unwrap();
    assert_eq!(worst.subset, 1 + 2, "the drifting shard is the outlier");
    // Levels only: no shards, no drift check.
    assert!(ok.budget.is_none());
    let _ = stats::std_dev(&[1.0, 2.0]);
}

/// The ideal bootstrap's SE of a mean, `√Σ(v − v̄)²/Q` (numpy's `std(ddof=0)/√Q`), is what
/// the replicates' SE estimates: 4,000 replicates land within 5% of it.
#[test]
fn ideal_std_error_is_what_the_replicates_estimate() {
    let v = ap_like(150, 11);
    let ideal = QueryBootstrap::ideal_std_error(&v);
    let q = v.len() as f64;
    let m = v.iter().sum::<f64>() / q;
    let by_hand = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / q).sqrt() / q.sqrt();
    assert!(
        (ideal - by_hand).abs() <= 1e-15 * by_hand,
        "{ideal} {by_hand}"
    );
    let replicated = QueryBootstrap::new(v.len(), 4000, 5).std_error(&v);
    assert!(
        (replicated / ideal - 1.0).abs() < 0.05,
        "replicates {replicated}, ideal {ideal}"
    );
    assert!(QueryBootstrap::ideal_std_error(&[]).is_nan());
    assert_eq!(QueryBootstrap::ideal_std_error(&[0.3]), 0.0);
}
