//! hit@1 calibrated on the nested levels (`predict::hit_calibration`, docs/method.md §7): the
//! scales solve their level equations as scipy's `brentq` does on the same cases, the reading
//! at N is the stated formula, and on a simulated benchmark the calibrated hit@1 is right by
//! its parts where the count law's own reading was right only by cancellation.

use tailrank_test_support::python as common;

use tailrank::evt::endpoint_law::EndpointLaw;
use tailrank::evt::{Gpd, GpdFit};
use tailrank::formats::hardness_csv::{read_hardness_csv, write_hardness_csv};
use tailrank::hardness::{Branch, HitScales, PositiveHardness, QueryHardness, QueryTail};
use tailrank::maps;
use tailrank::predict::endpoint_test::LevelHardness;
use tailrank::predict::hit_calibration::{self, calibrate};
use tailrank::predict::{hardness_meta, predict, predict_from_hardness, PredictOptions};
use tailrank::simulate::{simulate_summary, SimConfig};

const S0: u64 = 1_000_000;
const N: f64 = 1e8;

fn tail(xi: f64, n_u: usize) -> QueryTail {
    QueryTail {
        u: 0.5,
        n_u,
        fit: GpdFit {
            gpd: Gpd {
                sigma: 0.1 * -xi,
                xi,
            },
            log_likelihood: 0.0,
            n: n_u,
        },
    }
}

/// A query whose only positive has the given facts (score `0.5 + 0.1·(1 + z)` sits at relative
/// excess `z` of [`tail`]'s endpoint, `u + 0.1`).
fn query(
    sample: u64,
    tail: Option<QueryTail>,
    branch: Branch,
    x_hat: f64,
    pool_above: u64,
    z: f64,
) -> QueryHardness {
    QueryHardness {
        query_id: "q".into(),
        sample_size: sample,
        tail,
        positives: vec![PositiveHardness {
            id: "p".into(),
            score: (0.5 + 0.1 * (1.0 + z)) as f32,
            core_above: 0,
            pool_above,
            x_hat,
            branch,
        }],
    }
}

/// The root of `f` on `[lo, hi]` by scipy's `brentq` in `ln c`, for the cases `args` (JSON,
/// `d` in `f`).
fn brentq(f: &str, lo: f64, hi: f64, args: &str) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cases.json");
    std::fs::write(&path, args).unwrap();
    let code = format!(
        "import json, sys, math\nimport numpy as np\nfrom scipy.optimize import brentq\n\
         d = json.load(open(sys.argv[1]))\n{f}\n\
         print(repr(math.exp(brentq(lambda t: f(math.exp(t)), math.log({lo}), math.log({hi}), \
         xtol=1e-14, rtol=1e-13))))"
    );
    common::run_python(&code, &[path.to_str().unwrap()])
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn the_tail_scale_solves_its_level_equation_as_scipy_does() {
    let sl = S0 / 2;
    // 400 top positives in the tail branch at level 1, with fitted rates over five decades;
    // level 0 outranks a twentieth of them, fewer than the rates say.
    let (mut h0, mut hl, mut cases) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..400 {
        let x = 10f64.powf(-9.0 + 5.0 * i as f64 / 399.0);
        let k0 = u64::from(i % 20 == 3);
        hl.push(query(sl, Some(tail(-0.3, 50)), Branch::Tail, x, 0, -0.5));
        h0.push(query(
            S0,
            Some(tail(-0.3, 50)),
            Branch::Tail,
            x / 2.0,
            k0,
            -0.4,
        ));
        cases.push((x, k0 == 0));
    }
    // A level-ℓ positive already outranked, and one with a core item above it, are not cases;
    // nor is a level outside 1..=3.
    let mut beaten = query(sl, Some(tail(-0.3, 50)), Branch::Tail, 1e-6, 1, -0.5);
    hl.push(beaten.clone());
    h0.push(query(S0, Some(tail(-0.3, 50)), Branch::Tail, 1e-6, 2, -0.4));
    beaten.positives[0].pool_above = 0;
    beaten.positives[0].core_above = 1;
    hl.push(beaten);
    h0.push(query(S0, Some(tail(-0.3, 50)), Branch::Tail, 1e-6, 0, -0.4));
    let mut deep = hl.clone();
    for q in &mut deep {
        q.positives[0].x_hat = 1e-3;
    }
    let levels = [
        LevelHardness {
            level: 1,
            sample_size: sl,
            hardness: &hl,
        },
        LevelHardness {
            level: 4,
            sample_size: S0 / 16,
            hardness: &deep,
        },
    ];
    let c = calibrate(&h0, S0, N, &levels).expect("tail cases");
    assert_eq!((c.tail_cases, c.tail_hits), (400, 380));
    assert_eq!(
        (c.immune_cases, c.immune_hits, c.scales.immune),
        (0, 0, 0.0)
    );
    let args = serde_json::to_string(&serde_json::json!({
        "x": cases.iter().map(|c| c.0).collect::<Vec<_>>(),
        "m": (S0 - sl) as f64,
        "hits": 380,
    }))
    .unwrap();
    let want = brentq(
        "x = np.array(d['x'])\ndef f(c): return float(np.sum((1 - c * x) ** d['m'])) - d['hits']",
        1e-6,
        1.0,
        &args,
    );
    let got = c.scales.tail;
    assert!(
        got < 1.0 && (got - want).abs() < 1e-7 * want,
        "{got} vs {want}"
    );
    // At N the tail branch reads (1 − c·x̂)^(N − S): hit@1 is higher than the count law's.
    let q = &h0[100];
    let x = q.positives[0].x_hat;
    let at_n = hit_calibration::hit_at_1(q, N, Some(&c.scales));
    let formula = ((N - S0 as f64) * (-got * x).ln_1p()).exp();
    assert!(
        (at_n - formula).abs() < 1e-12 * formula,
        "{at_n} vs {formula}"
    );
    assert!(at_n > maps::hit_at_1(q, N));
    // The uncalibrated mean is the count law's.
    let plain: f64 = h0.iter().map(|q| maps::hit_at_1(q, N)).sum::<f64>() / h0.len() as f64;
    assert!((c.uncalibrated_hit_at_1 - plain).abs() < 1e-12);
}

#[test]
fn the_immune_scale_solves_its_level_equation_on_the_endpoint_law() {
    let sl = S0 / 4;
    let n_u = 40;
    let law = EndpointLaw::shared(n_u);
    let xi = -0.3;
    let e = (S0 - sl) as f64 / sl as f64;
    // Immune top positives at level 2 spread past the endpoint; `outranked` of them are beaten
    // by level 0.
    let build = |outranked: usize| {
        let (mut h0, mut hl, mut rates) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..300 {
            let z = 0.002 + 0.3 * i as f64 / 299.0;
            let k0 = u64::from(i < outranked);
            let q = query(sl, Some(tail(xi, n_u)), Branch::Immune, 0.0, 0, z);
            // The relative excess the f32 score gives, as the calibration reads it.
            let z = (f64::from(q.positives[0].score) - 0.5) / 0.1 - 1.0;
            rates.push(law.rates(xi, z).collect::<Vec<f64>>());
            hl.push(q);
            h0.push(query(S0, Some(tail(xi, n_u)), Branch::Immune, 0.0, k0, z));
        }
        (h0, hl, rates)
    };
    let expected_at_law: f64 = {
        let (h0, _, _) = build(0);
        h0.iter()
            .map(|q| {
                let z = (f64::from(q.positives[0].score) - 0.5) / 0.1 - 1.0;
                law.outranked_probability(xi, z, e)
            })
            .sum()
    };
    assert!(expected_at_law > 3.0, "{expected_at_law}");
    // Fewer outranked than the law expects: a scale in (0, 1), as scipy finds it.
    let few = (expected_at_law / 3.0).round() as usize;
    let (h0, hl, rates) = build(few);
    let levels = [LevelHardness {
        level: 2,
        sample_size: sl,
        hardness: &hl,
    }];
    let c = calibrate(&h0, S0, N, &levels).expect("immune cases");
    assert_eq!((c.immune_cases, c.immune_hits), (300, 300 - few));
    assert_eq!((c.tail_cases, c.scales.tail), (0, 1.0));
    let args = serde_json::to_string(&serde_json::json!({
        "rates": rates, "e": e, "hits": 300 - few,
    }))
    .unwrap();
    let want = brentq(
        "R = [np.array(r) for r in d['rates']]\n\
         def f(c): return sum(float(np.mean(np.exp(-c * r * d['e']))) if len(r) else 1.0 for r in R) - d['hits']",
        1e-6,
        1.0,
        &args,
    );
    let got = c.scales.immune;
    assert!(
        got > 0.0 && got < 1.0 && (got - want).abs() < 1e-9 * want,
        "{got} vs {want}"
    );
    // At N an immune top positive keeps the law's chance at the scaled rate, times its own
    // count law (here x̂ = 0, so 1).
    let q = &h0[150];
    let z = (f64::from(q.positives[0].score) - 0.5) / 0.1 - 1.0;
    let at_n = hit_calibration::hit_at_1(q, N, Some(&c.scales));
    let want_n = 1.0 - law.outranked_probability(xi, z, got * (N - S0 as f64) / S0 as f64);
    assert!(
        (at_n - want_n).abs() < 1e-12 && at_n < 1.0,
        "{at_n} vs {want_n}"
    );
    // With an excess rate on the positive (the move's far end) the two chances multiply.
    let mut moved = q.clone();
    moved.positives[0].x_hat = 1e-9;
    let both = hit_calibration::hit_at_1(&moved, N, Some(&c.scales));
    let product = at_n * ((N - S0 as f64) * (-1e-9f64).ln_1p()).exp();
    assert!(
        (both - product).abs() < 1e-12 * product,
        "{both} vs {product}"
    );

    // More outranked than the law expects: the scale stops at the law itself (the excess is
    // the endpoint test's); none outranked: the model's own reading (scale 0, hit 1).
    let many = (2.0 * expected_at_law).round() as usize;
    let (h0, hl, _) = build(many);
    let levels = [LevelHardness {
        level: 2,
        sample_size: sl,
        hardness: &hl,
    }];
    assert_eq!(calibrate(&h0, S0, N, &levels).unwrap().scales.immune, 1.0);
    let (h0, hl, _) = build(0);
    let levels = [LevelHardness {
        level: 2,
        sample_size: sl,
        hardness: &hl,
    }];
    let c0 = calibrate(&h0, S0, N, &levels).unwrap();
    assert_eq!(c0.scales.immune, 0.0);
    assert_eq!(hit_calibration::hit_at_1(&h0[0], N, Some(&c0.scales)), 1.0);
}

#[test]
fn the_calibrated_reading_keeps_the_count_law_where_it_is_certain() {
    let sc = HitScales {
        tail: 0.1,
        immune: 0.5,
    };
    let t = Some(tail(-0.3, 40));
    // Outranked in the sample, or by a core item: 0 whatever the scales.
    let beaten = query(S0, t, Branch::Tail, 1e-8, 2, -0.5);
    assert_eq!(hit_calibration::hit_at_1(&beaten, N, Some(&sc)), 0.0);
    let mut core = query(S0, t, Branch::Immune, 0.0, 0, 0.1);
    core.positives[0].core_above = 1;
    assert_eq!(hit_calibration::hit_at_1(&core, N, Some(&sc)), 0.0);
    // The count branch, a pool smaller than the sample, or no scales: the count law.
    let count = query(S0, t, Branch::Count, 3e-7, 0, -0.9);
    let small = query(S0, t, Branch::Tail, 3e-7, 0, -0.5);
    for (q, n, s) in [
        (&count, N, Some(&sc)),
        (&small, 5e5, Some(&sc)),
        (&small, N, None),
    ] {
        assert_eq!(hit_calibration::hit_at_1(q, n, s), maps::hit_at_1(q, n));
    }
    // An immune positive of a fit without an endpoint cannot happen; one of a query without a
    // tail keeps the count law (1).
    let lone = query(S0, None, Branch::Immune, 0.0, 0, 0.1);
    assert_eq!(hit_calibration::hit_at_1(&lone, N, Some(&sc)), 1.0);
}

/// beta-mixture at 5%, the ILIAS size: the count law's hit@1 is several points low, the
/// residual of a too-easy immune part and a far too hard tail part; calibrated on the levels,
/// each part is within two points and so is the total. The scales touch hit@1 only: the same
/// hardness with and without them gives the same mAP@k and Recall@k, and a hardness file
/// carries them.
#[test]
fn on_a_simulated_benchmark_hit_at_1_is_right_by_its_parts() {
    let mut cfg = SimConfig::preset("beta-mixture", 1).unwrap();
    cfg.fraction = 0.05;
    let sim = simulate_summary(&cfg).unwrap();
    let opts = PredictOptions {
        bootstrap: 200,
        sample_noise: 0,
        seed: 1,
        ..PredictOptions::default()
    };
    let p = predict(&sim.summary, &opts).unwrap();
    assert!(p.excess_centre.is_none(), "no move on this run");
    let cal = p.hit_calibration.expect("levels calibrate hit@1");
    assert_eq!(p.hit_scales, Some(cal.scales));
    assert!(cal.scales.tail < 0.3 && cal.scales.immune < 0.3, "{cal:?}");
    let n = p.pool_size as f64;
    // Truth per query: the top positive has no core or pool item above it at N.
    let truth: Vec<f64> = p
        .hardness
        .iter()
        .map(|q| {
            let tq = sim
                .truth
                .queries
                .iter()
                .find(|t| t.id == q.query_id)
                .unwrap();
            let tp = tq
                .positives
                .iter()
                .find(|t| t.id == q.positives[0].id)
                .unwrap();
            f64::from(u8::from(tp.core_above == 0 && tp.pool_above_n == 0))
        })
        .collect();
    let nq = truth.len() as f64;
    assert!((truth.iter().sum::<f64>() / nq - sim.truth.recall_and_hit().1).abs() < 1e-12);
    let part = |branch: Branch, f: &dyn Fn(&QueryHardness) -> f64| -> f64 {
        100.0
            * p.hardness
                .iter()
                .zip(&truth)
                .filter(|(q, _)| q.positives[0].branch == branch)
                .map(|(q, t)| f(q) - t)
                .sum::<f64>()
            / nq
    };
    let calibrated = |q: &QueryHardness| hit_calibration::hit_at_1(q, n, p.hit_scales.as_ref());
    let plain = |q: &QueryHardness| maps::hit_at_1(q, n);
    let (imm0, tail0) = (part(Branch::Immune, &plain), part(Branch::Tail, &plain));
    let (imm1, tail1) = (
        part(Branch::Immune, &calibrated),
        part(Branch::Tail, &calibrated),
    );
    eprintln!("immune {imm0:+.2} -> {imm1:+.2}, tail {tail0:+.2} -> {tail1:+.2}");
    assert!(imm0 > 3.0 && tail0 < -8.0, "the count law's parts");
    assert!(
        imm1.abs() < 2.0 && tail1.abs() < 2.0,
        "the calibrated parts"
    );
    let err0 = 100.0 * (cal.uncalibrated_hit_at_1 - truth.iter().sum::<f64>() / nq);
    let err1 = 100.0 * (p.hit_at_1 - truth.iter().sum::<f64>() / nq);
    assert!(err0 < -3.0 && err1.abs() < 2.5, "{err0} -> {err1}");
    let mean_cal = p.hardness.iter().map(calibrated).sum::<f64>() / nq;
    assert!((p.hit_at_1 - mean_cal).abs() < 1e-12);

    // The file carries the scales: the same hit@1 from it, the count law's without them, and
    // the same mAP@k and Recall@k either way.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.csv");
    write_hardness_csv(&path, &hardness_meta(&sim.summary, &p), &p.hardness).unwrap();
    let (meta, qs) = read_hardness_csv(&path).unwrap();
    assert_eq!(meta.hit_scales, p.hit_scales);
    let f = predict_from_hardness(&meta, &qs, &opts).unwrap();
    let mut bare = meta.clone();
    bare.hit_scales = None;
    let g = predict_from_hardness(&bare, &qs, &opts).unwrap();
    assert!((f.hit_at_1 - p.hit_at_1).abs() < 1e-12);
    assert!((g.hit_at_1 - cal.uncalibrated_hit_at_1).abs() < 1e-12);
    assert_eq!(f.estimate.to_bits(), g.estimate.to_bits());
    assert_eq!(f.recall_at_k.to_bits(), g.recall_at_k.to_bits());
    assert!((f.estimate - p.estimate).abs() < 1e-12);
}
