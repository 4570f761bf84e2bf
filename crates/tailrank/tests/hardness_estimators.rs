//! Hardness estimators (hardness.rs) against numpy/scipy: the threshold u (numpy.quantile),
//! the excess count n_u, the tail formula (scipy.stats.genpareto.sf), the branches, and the
//! checks of `estimate_summary`.

use tailrank_test_support::python as common;

use tailrank::hardness::{
    estimate_query, estimate_summary, fit_query_tail, quantile_linear, Branch, Estimator,
    EvtOptions, HardnessMeta, MIN_TAIL_EXCESSES,
};
use tailrank::sample::HashRange;
use tailrank::summary::{PositiveSummary, QuerySummary, Subset, SubsetKind, Summary};

/// splitmix64: a seeded, dependency-free generator for test data.
struct Rng(u64);
impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn join(v: &[f32]) -> String {
    v.iter()
        .map(|x| format!("{x:?}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn quantile_matches_numpy() {
    let mut rng = Rng(7);
    let mut arrays: Vec<Vec<f32>> = vec![vec![0.5], vec![0.2, 0.9], vec![0.3, 0.3, 0.3, 0.1]];
    for n in [3usize, 10, 97, 4000] {
        arrays.push((0..n).map(|_| rng.uniform() as f32).collect());
    }
    // Ties: values on a coarse grid.
    arrays.push(
        (0..500)
            .map(|_| (rng.uniform() * 20.0).floor() as f32 / 20.0)
            .collect(),
    );
    let qs = [0.0, 0.05, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0];
    let code = r#"
import sys, numpy as np
qs = [float(x) for x in sys.argv[1].split(',')]
for a in sys.argv[2:]:
    v = np.array([float(x) for x in a.split(',')], dtype=np.float32).astype(np.float64)
    print(' '.join(repr(float(np.quantile(v, q))) for q in qs))
"#;
    let qarg = qs
        .iter()
        .map(|q| q.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let args: Vec<String> = std::iter::once(qarg)
        .chain(arrays.iter().map(|a| join(a)))
        .collect();
    let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let out = common::run_python(code, &argv);
    for (a, line) in arrays.iter().zip(out.lines()) {
        for (q, want) in qs.iter().zip(line.split_whitespace()) {
            let want: f64 = want.parse().unwrap();
            let got = quantile_linear(a, *q);
            assert_eq!(got, want, "n = {}, q = {q}", a.len());
        }
    }
    assert!(quantile_linear(&[], 0.5).is_nan());
    // Order does not matter.
    let mut rev = arrays[5].clone();
    rev.reverse();
    assert_eq!(
        quantile_linear(&rev, 0.95),
        quantile_linear(&arrays[5], 0.95)
    );
}

/// Descending top scores of a bounded tail: 0.4 + GPD(ξ = −0.3, σ = 0.03) order statistics.
fn top_scores(rng: &mut Rng, m: usize) -> Vec<f32> {
    let (xi, sigma) = (-0.3f64, 0.03f64);
    let mut v: Vec<f32> = (0..m)
        .map(|_| {
            let p = rng.uniform();
            (0.4 + sigma * ((1.0 - p).powf(-xi) - 1.0) / xi) as f32
        })
        .collect();
    v.sort_by(|a, b| b.total_cmp(a));
    v
}

fn positive(id: &str, score: f32, core: u64, counts: Vec<u64>) -> PositiveSummary {
    PositiveSummary {
        core_ties: 0,
        pool_ties: Vec::new(),
        id: id.to_string(),
        score,
        core_above: core,
        pool_above: counts,
    }
}

#[test]
fn evt_branches_match_numpy_and_scipy() {
    let mut rng = Rng(42);
    let s_size: u64 = 1_000_000;
    let t = top_scores(&mut rng, 4000);
    let opts = EvtOptions::default();
    let tail = fit_query_tail(&t, s_size, &opts).unwrap();
    // Positives: deep in the pool (count), just above the top score (tail), beyond the
    // endpoint (immune), and one with K = c_min exactly (count).
    let endpoint = tail.score_endpoint();
    assert!(
        endpoint.is_finite(),
        "a ξ < 0 tail is expected for this data"
    );
    let p_tail = (t[0] as f64 + 0.25 * (endpoint - t[0] as f64)) as f32;
    let q = QuerySummary {
        id: "q1".into(),
        positives: vec![
            positive("immune", (endpoint + 0.01) as f32, 0, vec![0]),
            positive("tail", p_tail, 1, vec![0]),
            positive("tail3", t[3], 1, vec![3]),
            positive("edge", t[5], 2, vec![5]),
            positive("deep", t[3000], 4, vec![3000]),
        ],
        top_scores: vec![t.clone()],
    };
    let h = estimate_query(&q, 0, s_size, &Estimator::Evt(opts));
    let branches: Vec<Branch> = h.positives.iter().map(|p| p.branch).collect();
    assert_eq!(
        branches,
        [
            Branch::Immune,
            Branch::Tail,
            Branch::Tail,
            Branch::Count,
            Branch::Count
        ]
    );
    assert_eq!(h.tail, Some(tail));
    assert_eq!(h.positives[0].x_hat, 0.0);
    assert_eq!(h.positives[3].x_hat, 5.0 / s_size as f64);
    assert_eq!(h.positives[4].x_hat, 3000.0 / s_size as f64);
    assert_eq!(h.positives[4].core_above, 4);

    // Independent reference: u and n_u with numpy, the tail formula with scipy's survival at
    // our fitted (σ, ξ), and scipy's own fit's likelihood on the same excesses.
    let code = r#"
import sys, numpy as np
from scipy import stats
t = np.array([float(x) for x in sys.argv[1].split(',')], dtype=np.float32).astype(np.float64)
S, sigma, xi = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
u = np.quantile(t, 0.95)
y = t[t > u] - u
print(repr(float(u)), len(y))
for s in sys.argv[5].split(','):
    s = float(np.float32(float(s)))
    print(repr(float(len(y) / S * stats.genpareto.sf(s - u, xi, 0, sigma))))
c, _, sc = stats.genpareto.fit(y, floc=0)
print(repr(float(c)), repr(float(stats.genpareto.logpdf(y, c, 0, sc).sum())))
"#;
    let scores = join(&[q.positives[1].score, q.positives[2].score]);
    let out = common::run_python(
        code,
        &[
            &join(&t),
            &s_size.to_string(),
            &tail.fit.gpd.sigma.to_string(),
            &tail.fit.gpd.xi.to_string(),
            &scores,
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    let mut first = lines[0].split_whitespace();
    let u: f64 = first.next().unwrap().parse().unwrap();
    let n_u: usize = first.next().unwrap().parse().unwrap();
    assert_eq!(tail.u, u);
    assert_eq!(tail.n_u, n_u);
    assert_eq!(tail.fit.n, n_u);
    assert_eq!(n_u, 200, "5% of 4000 distinct scores");
    for (i, line) in lines[1..3].iter().enumerate() {
        let want: f64 = line.parse().unwrap();
        let got = h.positives[i + 1].x_hat;
        assert!(
            (got - want).abs() <= 1e-12 * want,
            "positive {}: {got} vs {want}",
            i + 1
        );
        assert!(got > 0.0 && got < 5.0 / s_size as f64);
    }
    let mut last = lines[3].split_whitespace();
    let c: f64 = last.next().unwrap().parse().unwrap();
    let ll: f64 = last.next().unwrap().parse().unwrap();
    if (-1.0..=0.0).contains(&c) {
        assert!(tail.fit.log_likelihood >= ll - 1e-6);
    }

    // The count estimator ignores the tail.
    let hc = estimate_query(&q, 0, s_size, &Estimator::Count);
    assert!(hc.tail.is_none());
    for (p, ps) in hc.positives.iter().zip(&q.positives) {
        assert_eq!(p.branch, Branch::Count);
        assert_eq!(p.x_hat, ps.pool_above[0] as f64 / s_size as f64);
    }
}

#[test]
fn small_samples_and_options() {
    let mut rng = Rng(3);
    // S < M: the tail uses every sampled score; 120 scores give 6 excesses < 10 → no tail.
    let t = top_scores(&mut rng, 120);
    assert!(fit_query_tail(&t, 120, &EvtOptions::default()).is_none());
    let t = top_scores(&mut rng, 400);
    let tail = fit_query_tail(&t, 400, &EvtOptions::default()).unwrap();
    assert_eq!(tail.n_u, 20);
    assert!(tail.n_u >= MIN_TAIL_EXCESSES);
    // top_m smaller than the list: only the first top_m scores count.
    let opts = EvtOptions {
        top_m: 200,
        ..EvtOptions::default()
    };
    let a = fit_query_tail(&t, 400, &opts).unwrap();
    let b = fit_query_tail(&t[..200], 400, &EvtOptions::default()).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.n_u, 10);
    // Unsorted input is sorted first.
    let mut shuffled = t.clone();
    shuffled.swap(0, 399);
    shuffled.swap(5, 100);
    assert_eq!(
        fit_query_tail(&shuffled, 400, &EvtOptions::default()),
        Some(tail)
    );
    // Ties at u: no excesses.
    assert!(fit_query_tail(&[0.5; 100], 1000, &EvtOptions::default()).is_none());
    assert!(fit_query_tail(&t, 0, &EvtOptions::default()).is_none());
    assert!(fit_query_tail(&[], 10, &EvtOptions::default()).is_none());

    // Without a tail the count is used, even for K < c_min.
    let q = QuerySummary {
        id: "q".into(),
        positives: vec![
            positive("p", 0.9, 0, vec![0]),
            positive("r", 0.5, 0, vec![2]),
        ],
        top_scores: vec![vec![0.6, 0.55, 0.5, 0.4]],
    };
    let h = estimate_query(&q, 0, 4, &Estimator::default());
    assert!(h.tail.is_none());
    assert_eq!(h.positives[1].x_hat, 0.5);
    assert!(h.positives.iter().all(|p| p.branch == Branch::Count));

    // c_min above n_u: a positive below u with K < c_min falls back to the count.
    let opts = EvtOptions {
        c_min: 1000,
        ..EvtOptions::default()
    };
    let t = top_scores(&mut rng, 4000);
    let q = QuerySummary {
        id: "q".into(),
        positives: vec![positive("low", t[2000], 0, vec![2000])],
        top_scores: vec![t.clone()],
    };
    let h = estimate_query(&q, 0, 10_000, &Estimator::Evt(opts));
    assert!(h.tail.is_some());
    assert_eq!(h.positives[0].branch, Branch::Count);
    assert_eq!(h.positives[0].x_hat, 0.2);
}

fn summary(queries: Vec<QuerySummary>) -> Summary {
    Summary {
        format_version: 1,
        tool_version: "test".into(),
        model: "m".into(),
        query_set: "image".into(),
        pool_size: Some(100_000_000),
        fraction: 0.05,
        seed: 1,
        top_m: 4000,
        core_size: 10,
        subsets: vec![
            Subset {
                kind: SubsetKind::Level,
                fraction: 0.05,
                range: HashRange::fraction(0.05).unwrap(),
                top_m: None,
            },
            Subset {
                kind: SubsetKind::Level,
                fraction: 0.025,
                range: HashRange::fraction(0.025).unwrap(),
                top_m: None,
            },
        ],
        subset_sizes: vec![5_000_000, 2_500_000],
        queries,
        inputs: vec![],
        pool_id_hashes: None,
        ties_known: true,
    }
}

#[test]
fn summary_uses_the_requested_subset_and_checks_shapes() {
    let mut rng = Rng(11);
    let t0 = top_scores(&mut rng, 4000);
    let t1: Vec<f32> = t0.iter().step_by(2).copied().collect();
    let q = QuerySummary {
        id: "q".into(),
        positives: vec![
            positive("a", t0[1], 0, vec![1, 0]),
            positive("b", t0[50], 3, vec![50, 25]),
        ],
        top_scores: vec![t0.clone(), t1.clone()],
    };
    let s = summary(vec![
        q.clone(),
        QuerySummary {
            id: "q2".into(),
            ..q.clone()
        },
    ]);
    let est = Estimator::default();
    let h = estimate_summary(&s, 1, &est).unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(h[1].query_id, "q2");
    assert_eq!(h[0], estimate_query(&q, 1, 2_500_000, &est));
    assert_eq!(h[0].sample_size, 2_500_000);
    assert_eq!(h[0].positives[1].x_hat, 25.0 / 2.5e6);
    assert_eq!(
        h[0].tail,
        fit_query_tail(&t1, 2_500_000, &EvtOptions::default())
    );
    let meta = HardnessMeta::from_summary(&s, 1, &est);
    assert_eq!(meta.sample_size, 2_500_000);
    assert_eq!(meta.fraction, 0.025);
    assert_eq!(meta.estimator, "evt(top_m=4000,quantile=0.95,c_min=5)");
    assert_eq!(Estimator::parse_label(&meta.estimator), Some(est));
    assert_eq!(Estimator::parse_label("count"), Some(Estimator::Count));
    assert_eq!(
        Estimator::parse_label("evt(c_min=3)"),
        Some(Estimator::Evt(EvtOptions {
            c_min: 3,
            ..EvtOptions::default()
        }))
    );
    assert_eq!(Estimator::parse_label("evt(x=3)"), None);
    // Out of range: no tail on fewer than 2 scores, the threshold strictly inside (0, 1).
    for bad in [
        "evt(top_m=1)",
        "evt(quantile=1)",
        "evt(quantile=0)",
        "evt(quantile=NaN)",
    ] {
        assert_eq!(Estimator::parse_label(bad), None, "{bad}");
    }

    // Errors, never panics.
    let e = estimate_summary(&s, 2, &est).unwrap_err().to_string();
    assert!(e.contains("subset 2"), "{e}");
    let mut bad = s.clone();
    bad.queries[1].top_scores.pop();
    let e = estimate_summary(&bad, 0, &est).unwrap_err().to_string();
    assert!(e.contains("q2"), "{e}");
    let mut bad = s.clone();
    bad.queries[0].positives[0].pool_above = vec![1];
    let e = estimate_summary(&bad, 0, &est).unwrap_err().to_string();
    assert!(e.contains("positive a"), "{e}");
    let mut bad = s.clone();
    bad.queries[0].positives[1].pool_above[1] = 3_000_000;
    let e = estimate_summary(&bad, 1, &est).unwrap_err().to_string();
    assert!(e.contains("exceeds"), "{e}");
}

/// Accuracy against known truth: pool scores follow a GPD law (ξ = −0.1, σ = 0.05, so the tail
/// above any threshold is again GPD with the same ξ); the top-M of a sample of S = 10^6 are
/// drawn exactly as order statistics (exponential spacings). Positives sit at true hardness
/// 3e-5 (resolved by counting), 1e-6 (one over S: K is mostly 0–2) and 1e-7 (invisible to
/// counting). u sits at survival ≈ 2e-4, so the tail extrapolates 2–3.3 decades: the estimate
/// must be unbiased in log scale, with the spread a 200-excess fit allows.
#[test]
fn evt_recovers_hardness_below_one_over_s() {
    let (xi, sigma) = (-0.1f64, 0.05f64);
    let isf = |p: f64| sigma * (p.powf(-xi) - 1.0) / xi; // score with P(score > s) = p
    let s_size: u64 = 1_000_000;
    let m = 4000;
    let mut rng = Rng(2024);
    let targets = [3e-5, 1e-6, 1e-7];
    let mut log_err: Vec<Vec<f64>> = vec![Vec::new(); targets.len()];
    let mut xis = Vec::new();
    let mut count_zero = 0;
    for qi in 0..80 {
        // Survival probabilities of the top-M sample items: p_(i) = Γ_i / S (Γ_i partial sums
        // of standard exponentials; the Γ_{S+1}/S normalisation has relative spread 1e-3).
        let mut g = 0.0;
        let p: Vec<f64> = (0..m)
            .map(|_| {
                g += -(1.0 - rng.uniform()).ln();
                g / s_size as f64
            })
            .collect();
        let top: Vec<f32> = p.iter().map(|&pi| isf(pi) as f32).collect();
        let positives = targets
            .iter()
            .enumerate()
            .map(|(j, &x)| {
                let s = isf(x) as f32;
                let k = top.iter().filter(|&&t| t > s).count() as u64;
                positive(&format!("p{j}"), s, 0, vec![k])
            })
            .collect();
        let q = QuerySummary {
            id: format!("q{qi}"),
            positives,
            top_scores: vec![top],
        };
        let h = estimate_query(&q, 0, s_size, &Estimator::default());
        let tail = h.tail.unwrap();
        xis.push(tail.fit.gpd.xi);
        assert_eq!(
            h.positives[0].branch,
            Branch::Count,
            "K = {}",
            h.positives[0].pool_above
        );
        let hc = estimate_query(&q, 0, s_size, &Estimator::Count);
        count_zero += usize::from(hc.positives[2].x_hat == 0.0);
        for (j, &x) in targets.iter().enumerate() {
            // Immune (x̂ = 0) counts as −7 decades.
            log_err[j].push((h.positives[j].x_hat.max(x * 1e-7) / x).log10());
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let signed: Vec<f64> = log_err.iter().map(|v| median(v)).collect();
    let abs: Vec<f64> = log_err
        .iter()
        .map(|v| median(&v.iter().map(|e| e.abs()).collect::<Vec<_>>()))
        .collect();
    let xi_med = median(&xis);
    assert!(
        count_zero > 60,
        "count sees nothing at 1e-7: {count_zero}/80"
    );
    // The fitted shape is centred on the truth up to the ML bias at n_u = 200 (≈ −0.016 with
    // scipy's fit on the same law) and the noise of a median of 80 fits (sd ≈ 0.007).
    assert!((xi_med - xi).abs() < 0.04, "median ξ {xi_med}");
    assert!(abs[0] < 0.1, "count at 3e-5: {abs:?}");
    // Extrapolating 2.3 and 3.3 decades beyond u: median errors a fraction of a decade, where
    // counting gives 0 (x̂ = 0, an infinite error in log scale) for most queries.
    assert!(
        signed[1].abs() < 0.2 && abs[1] < 0.35,
        "1e-6: {signed:?} {abs:?}"
    );
    assert!(
        signed[2].abs() < 0.5 && abs[2] < 0.8,
        "1e-7: {signed:?} {abs:?}"
    );
}
