//! Distributional checks of the simulator's building blocks against scipy: exact order
//! statistics (Rényi), the score families, and the joint Binomial counts.

use tailrank_test_support::python as common;

use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;
use tailrank::simulate::{joint_counts, smallest_uniforms, Family};

fn floats(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:e}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn order_statistics_match_their_beta_laws() {
    // The i-th smallest of n uniforms is Beta(i, n − i + 1); the i-th largest score of n items
    // is F̄⁻¹ of it. KS tests against scipy for i = 1, 2 and 50 with n = 5·10^6.
    let n = 5_000_000u64;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let reps = 3000;
    let (mut p1, mut p2, mut p50) = (vec![], vec![], vec![]);
    for _ in 0..reps {
        let v = smallest_uniforms(&mut rng, n, 50);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        p1.push(v[0]);
        p2.push(v[1]);
        p50.push(v[49]);
    }
    let code = r#"
import sys
from scipy import stats
n = int(sys.argv[1])
for i, arg in zip((1, 2, 50), sys.argv[2:]):
    x = [float(t) for t in arg.split(',')]
    print(stats.kstest(x, stats.beta(i, n - i + 1).cdf).pvalue)
"#;
    let out = common::run_python(
        code,
        &[&n.to_string(), &floats(&p1), &floats(&p2), &floats(&p50)],
    );
    for line in out.lines() {
        let p: f64 = line.trim().parse().unwrap();
        assert!(p > 1e-3, "KS p-value {p}");
    }
    // A wrong law is rejected by the same test (the test has power).
    let shifted: Vec<f64> = p1.iter().map(|x| x * 1.3).collect();
    let out = common::run_python(
        code,
        &[
            &n.to_string(),
            &floats(&shifted),
            &floats(&p2),
            &floats(&p50),
        ],
    );
    let p: f64 = out.lines().next().unwrap().trim().parse().unwrap();
    assert!(p < 1e-6, "shifted law not rejected: {p}");
}

#[test]
fn families_match_scipy() {
    let gpd = Family::GpdTail {
        u0: 0.25,
        p_u: 0.01,
        sigma: 0.06,
        xi: -0.2,
        sigma_body: 0.05,
    };
    let pf = Family::PowerFunction {
        endpoint: 0.6,
        width: 0.7,
        beta: 6.0,
    };
    let ss: Vec<f64> = (0..40).map(|i| 0.26 + 0.0085 * i as f64).collect();
    let code = r#"
import sys
from scipy import stats
s = [float(t) for t in sys.argv[1].split(',')]
for v in s:
    g = 0.01 * stats.genpareto.sf(v - 0.25, c=-0.2, scale=0.06)
    # score = e - w*B with B ~ Beta(beta, 1): P(score > s) = P(B < (e - s)/w)
    p = stats.beta.cdf((0.6 - v) / 0.7, 6.0, 1.0)
    print(g, p)
"#;
    let out = common::run_python(code, &[&floats(&ss)]);
    for (s, line) in ss.iter().zip(out.lines()) {
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect();
        let (g, p) = (gpd.sf(*s), pf.sf(*s));
        assert!(
            (g - v[0]).abs() <= 1e-12 + 1e-9 * v[0],
            "gpd at {s}: {g} vs {}",
            v[0]
        );
        assert!(
            (p - v[1]).abs() <= 1e-12 + 1e-9 * v[1],
            "power at {s}: {p} vs {}",
            v[1]
        );
    }
}

#[test]
fn joint_counts_are_binomial_and_monotone() {
    // n items with exceedance U(p0, 1): the count below x is Binomial(n, (x − p0)/(1 − p0)).
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let (n, p0) = (1_000_000u64, 2e-6);
    let xs = [1e-5, 3e-5, 3e-5, 1e-4, 0.3];
    let reps = 4000;
    let mut sums = vec![0f64; xs.len()];
    let mut sq = vec![0f64; xs.len()];
    let mut last: Vec<Vec<u64>> = Vec::new();
    for _ in 0..reps {
        let c = joint_counts(&mut rng, n, p0, &xs);
        assert!(c.windows(2).all(|w| w[0] <= w[1]), "monotone {c:?}");
        assert_eq!(c[1], c[2], "equal thresholds, equal counts");
        for (i, v) in c.iter().enumerate() {
            sums[i] += *v as f64;
            sq[i] += (*v as f64).powi(2);
        }
        last.push(c);
    }
    for (i, x) in xs.iter().enumerate() {
        let q = (x - p0) / (1.0 - p0);
        let (m, var) = (n as f64 * q, n as f64 * q * (1.0 - q));
        let mean = sums[i] / reps as f64;
        let v = sq[i] / reps as f64 - mean * mean;
        assert!(
            (mean - m).abs() < 5.0 * (var / reps as f64).sqrt(),
            "mean {mean} vs {m}"
        );
        assert!((v / var - 1.0).abs() < 0.15, "var {v} vs {var}");
    }
    // The last threshold's counts against scipy's binomial via a chi-square-free check: the
    // empirical CDF at the median matches binom.cdf within 4 standard errors.
    let q = (xs[3] - p0) / (1.0 - p0);
    let med = (n as f64 * q).round() as u64;
    let frac = last.iter().filter(|c| c[3] <= med).count() as f64 / reps as f64;
    let out = common::run_python(
        "import sys\nfrom scipy import stats\nprint(stats.binom.cdf(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])))",
        &[&med.to_string(), &n.to_string(), &format!("{q:e}")],
    );
    let cdf: f64 = out.trim().parse().unwrap();
    assert!(
        (frac - cdf).abs() < 4.0 * (cdf * (1.0 - cdf) / reps as f64).sqrt(),
        "{frac} vs {cdf}"
    );
}
