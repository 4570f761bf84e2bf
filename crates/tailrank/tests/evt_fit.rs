//! GPD fit (evt.rs) against scipy: `genpareto.fit(y, floc=0)` and an independent bounded
//! maximum-likelihood reference (Nelder–Mead over a reparametrisation that keeps ξ ∈ (−1, 0)
//! and the support around the data), on seeded samples.

use tailrank_test_support::python as common;

use proptest::prelude::*;
use serde_json::Value;
use tailrank::evt::{fit_gpd_bounded, Gpd};

const REFERENCE: &str = include_str!("data/gpd_fit_reference.py");

struct Case {
    name: String,
    y: Vec<f64>,
    scipy: [f64; 3],
    bounded: [f64; 3],
}

fn cases() -> Vec<Case> {
    // (name, true ξ, n, seed, decimals to round to (0 = none)); scale 0.02 like cosine excesses.
    let spec = r#"[["xi-0.05-n200",-0.05,200,1,0],["xi-0.05-n2000",-0.05,2000,2,0],
        ["xi-0.3-n200",-0.3,200,3,0],["xi-0.3-n2000",-0.3,2000,4,0],
        ["xi-0.6-n200",-0.6,200,5,0],["xi-0.6-n2000",-0.6,2000,6,0],
        ["xi-1.5",-1.5,500,7,0],["exponential",0.0,2000,8,0],["xi+0.3",0.3,500,9,0],
        ["ties",-0.3,300,10,3],["uniform",-1.0,500,11,0]]"#;
    let out = common::run_python(REFERENCE, &[spec]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let arr3 = |x: &Value| -> [f64; 3] {
        let a = x.as_array().unwrap();
        [
            a[0].as_f64().unwrap(),
            a[1].as_f64().unwrap(),
            a[2].as_f64().unwrap(),
        ]
    };
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_string(),
            y: c["y"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect(),
            scipy: arr3(&c["scipy"]),
            bounded: arr3(&c["bounded"]),
        })
        .collect()
}

#[test]
fn fits_match_scipy_and_bounded_reference() {
    for c in cases() {
        let f = fit_gpd_bounded(&c.y).unwrap_or_else(|| panic!("{}: no fit", c.name));
        let (xi, sigma) = (f.gpd.xi, f.gpd.sigma);
        let ymax = c.y.iter().copied().fold(0.0, f64::max);
        assert!((-1.0..=0.0).contains(&xi), "{}: xi {xi}", c.name);
        assert!(
            f.gpd.endpoint() >= ymax,
            "{}: support must hold the data",
            c.name
        );
        assert!(f.log_likelihood.is_finite());
        assert_eq!(f.n, c.y.len());
        // Our log-likelihood formula agrees with scipy's logpdf (also for ξ > 0). Not for
        // ξ < −1, where the density blows up at the endpoint and both evaluations are
        // ill-conditioned at the largest y.
        let [cs, ss, lls] = c.scipy;
        let ours_at_scipy = Gpd { sigma: ss, xi: cs }.log_likelihood(&c.y);
        if lls.is_finite() && cs >= -1.0 {
            assert!(
                (ours_at_scipy - lls).abs() <= 1e-9 * lls.abs().max(1.0),
                "{}: loglik {ours_at_scipy} vs scipy {lls}",
                c.name
            );
        }
        assert!(
            (f.gpd.log_likelihood(&c.y) - f.log_likelihood).abs() <= 1e-9 * lls.abs(),
            "{}: reported log-likelihood",
            c.name
        );
        // Never worse than the bounded reference optimiser.
        let [xb, sb, llb] = c.bounded;
        assert!(
            f.log_likelihood >= llb - 1e-6,
            "{}: ll {} < bounded reference {llb}",
            c.name,
            f.log_likelihood
        );
        if xb > -0.99 && xb < -0.01 {
            assert!((xi - xb).abs() < 2e-3, "{}: xi {xi} vs {xb}", c.name);
            assert!(
                (sigma / sb - 1.0).abs() < 2e-3,
                "{}: sigma {sigma} vs {sb}",
                c.name
            );
        }
        // When scipy's unconstrained fit is admissible, we match it (or beat it).
        if (-1.0..=0.0).contains(&cs) {
            assert!(
                f.log_likelihood >= lls - 1e-6,
                "{}: ll {} < scipy {lls}",
                c.name,
                f.log_likelihood
            );
            assert!((xi - cs).abs() < 0.01, "{}: xi {xi} vs scipy {cs}", c.name);
            assert!(
                (sigma / ss - 1.0).abs() < 0.01,
                "{}: sigma {sigma} vs {ss}",
                c.name
            );
        }
        match c.name.as_str() {
            // Data from ξ < −1: the constrained optimum is the uniform edge.
            "xi-1.5" => assert_eq!(
                f.gpd,
                Gpd {
                    sigma: ymax,
                    xi: -1.0
                }
            ),
            // Heavy-tailed data (unconstrained ξ > 0): the exponential edge wins exactly.
            "xi+0.3" => {
                let mean = c.y.iter().sum::<f64>() / c.y.len() as f64;
                assert_eq!(
                    f.gpd,
                    Gpd {
                        sigma: mean,
                        xi: 0.0
                    }
                );
            }
            "exponential" => assert!(xi > -0.1, "xi {xi}"),
            "uniform" => assert!(xi < -0.9, "xi {xi}"),
            _ => {}
        }
    }
}

#[test]
fn survival_matches_scipy() {
    let code = r#"
import sys
from scipy import stats
for c, s, y in [(-0.3, 0.02, 0.01), (-0.3, 0.02, 0.06), (-0.3, 0.02, 0.07), (0.0, 0.02, 0.1),
                (-1.0, 0.05, 0.04), (-1e-9, 0.02, 0.03), (-0.05, 0.01, 1e-6), (0.2, 0.01, 0.5)]:
    print(c, s, y, repr(float(stats.genpareto.sf(y, c, 0, s))),
          repr(float(stats.genpareto.logpdf(y, c, 0, s))))
"#;
    let out = common::run_python(code, &[]);
    for line in out.lines() {
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect();
        let g = Gpd {
            sigma: v[1],
            xi: v[0],
        };
        let sf = g.survival(v[2]);
        assert!(
            (sf - v[3]).abs() <= 1e-12 + 1e-9 * v[3],
            "{line}: survival {sf}"
        );
        let lp = g.log_density(v[2]);
        if v[4].is_finite() {
            assert!(
                (lp - v[4]).abs() <= 1e-9 * v[4].abs().max(1.0),
                "{line}: logpdf {lp}"
            );
        } else {
            assert_eq!(lp, f64::NEG_INFINITY, "{line}");
        }
    }
}

#[test]
fn degenerate_and_small_inputs() {
    assert!(fit_gpd_bounded(&[]).is_none());
    assert!(fit_gpd_bounded(&[0.0; 5]).is_none());
    // All equal: the uniform edge (density 1/c on [0, c]) beats every other fit.
    let f = fit_gpd_bounded(&[0.01; 12]).unwrap();
    assert_eq!(
        f.gpd,
        Gpd {
            sigma: 0.01,
            xi: -1.0
        }
    );
    assert!((f.log_likelihood - 12.0 * -(0.01f64.ln())).abs() < 1e-9);
    // Fewer than 10 excesses are still fitted (the caller decides whether to use the fit).
    for y in [
        vec![0.02],
        vec![0.01, 0.03],
        vec![0.001, 0.004, 0.002, 0.02, 0.005],
    ] {
        let f = fit_gpd_bounded(&y).unwrap();
        assert!(f.log_likelihood.is_finite());
        assert!(f.gpd.endpoint() >= 0.02 - 1e-18);
        assert!((-1.0..=0.0).contains(&f.gpd.xi));
    }
    // Zeros among positive values are fine (density at 0 is 1/σ).
    let f = fit_gpd_bounded(&[0.0, 0.0, 0.01, 0.02, 0.005]).unwrap();
    assert!(f.log_likelihood.is_finite());
}

/// Best log-likelihood over a dense (ξ, σ) grid with σ ≥ −ξ·max y: the fit must not lose to it.
fn grid_best(y: &[f64]) -> f64 {
    let ymax = y.iter().copied().fold(0.0, f64::max);
    let mut best = f64::NEG_INFINITY;
    for i in 0..=60 {
        let xi = -(i as f64) / 60.0;
        let lo = (-xi * ymax).max(ymax * 1e-3);
        for k in 0..=80 {
            let sigma = lo * (1.0 + 20.0 * (k as f64 / 80.0).powi(2));
            best = best.max(Gpd { sigma, xi }.log_likelihood(y));
        }
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
    #[test]
    fn fit_is_valid_and_beats_grid(
        raw in prop::collection::vec(0.0f64..1.0, 1..300),
        shape in -1.5f64..0.5,
        scale in 1e-4f64..1.0,
    ) {
        // Transform uniforms into GPD-like samples of varying shape (inverse CDF).
        let y: Vec<f64> = raw
            .iter()
            .map(|&p| {
                if shape.abs() < 1e-9 {
                    -scale * (1.0 - p).ln()
                } else {
                    scale * ((1.0 - p).powf(-shape) - 1.0) / shape
                }
            })
            .map(|v: f64| v.max(0.0))
            .collect();
        prop_assume!(y.iter().any(|&v| v > 0.0) && y.iter().all(|v| v.is_finite()));
        let f = fit_gpd_bounded(&y).unwrap();
        let ymax = y.iter().copied().fold(0.0, f64::max);
        prop_assert!(f.log_likelihood.is_finite());
        prop_assert!(!f.gpd.sigma.is_nan() && !f.gpd.xi.is_nan());
        prop_assert!((-1.0..=0.0).contains(&f.gpd.xi));
        prop_assert!(f.gpd.endpoint() >= ymax);
        let g = grid_best(&y);
        prop_assert!(f.log_likelihood >= g - 1e-6 * g.abs().max(1.0),
            "fit {} < grid {}", f.log_likelihood, g);
    }
}
