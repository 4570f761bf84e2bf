//! Readings of hit@1 per query on simulated benchmarks (docs/notes/2026-12-05-hit-at-1-readings.md):
//! for each corpus family, seed and sample fraction, simulate the benchmark, predict it as
//! `tailrank validate` does and print one CSV row per query with the top positive's facts, the
//! truth (used only for scoring) and several readings of `P(K_N = 0)`:
//!
//! - `base`: the count law at the fit's `x̂` (`maps::hit_at_1`), `count_law`: the same with
//!   the prediction's move to the centre of the excess, `moved`: the prediction's own value
//!   (calibrated on the levels, `predict::hit_calibration`, and moved);
//! - `pivot`: the endpoint law's pivot (`evt::endpoint_law`) for every top positive of a fit
//!   with `ξ̂ < 0`, at its relative excess `z = (s − u)/(ê − u) − 1`, negative in the tail:
//!   `mean_{b ∈ F} exp(−λ_b·e)`, `λ_b = n_u·(1 − ê*_b·(1 + z))₊^β`, `e = (N − S)/S`; for an
//!   immune top positive it is `1 − P(outranked | z, ξ̂, e)` of the endpoint test;
//! - `boot`: the mean of `exp(−(N − S)·x̂*)` over [`BOOT`] parametric-bootstrap refits of the
//!   query's tail (`n_u` excesses drawn from the fitted GPD, `u` kept), `x̂* = 0` past the
//!   refit's endpoint;
//! - the same three readings at nested levels 1 and 2 of the chosen fit, for the step to level
//!   0 (`e = S_0/S_ℓ − 1`), with the known outcome `K_0 = K_ℓ` there.
//!
//! Usage: `hit_at_1_readings FIRST_SEED..END_SEED F [FAMILIES [QUERIES]]` (FAMILIES
//! comma-separated, default every corpus family; QUERIES default: the family's own size).
#[path = "support/args.rs"]
mod args;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tailrank::evt::endpoint_law::refitted_endpoints;
use tailrank::evt::{fit_gpd_bounded, Gpd};
use tailrank::hardness::{estimate_summary, Branch, Estimator, EvtOptions, QueryHardness};
use tailrank::maps;
use tailrank::numerics::{rng_for, StreamSeeding};
use tailrank::predict::{predict_without_next_step, PredictOptions};
use tailrank::simulate::corpus::{self, summary_config};
use tailrank::simulate::simulate_summary;

/// Parametric-bootstrap refits per query.
const BOOT: usize = 200;
/// The endpoint law's replicates, grid and seed (`evt::endpoint_law`), so that the pivot for
/// an immune positive is the endpoint test's law.
const REPLICATES: usize = 200;
const XI_GRID_STEP: f64 = 0.05;
const XI_GRID_LEN: usize = 20;
const SEED: u64 = 0x5EED_E9D9;

fn xi_of(g: usize) -> f64 {
    -XI_GRID_STEP * (XI_GRID_LEN - g) as f64
}

fn grid(xi: f64) -> usize {
    let g = XI_GRID_LEN as f64 + xi / XI_GRID_STEP;
    g.round().clamp(0.0, (XI_GRID_LEN - 1) as f64) as usize
}

/// Per grid value of ξ, the refitted endpoints of the replicates.
type Table = Arc<Vec<Vec<f64>>>;

/// The refitted endpoints for fits on `n` excesses, per grid value of ξ (shared per `n`).
fn table(n: usize) -> Table {
    static T: OnceLock<Mutex<HashMap<usize, Table>>> = OnceLock::new();
    let t = T.get_or_init(Default::default);
    if let Some(v) = t.lock().unwrap().get(&n) {
        return v.clone();
    }
    let v: Table = Arc::new(
        (0..XI_GRID_LEN)
            .into_par_iter()
            .map(|g| {
                refitted_endpoints(n, xi_of(g), REPLICATES, SEED ^ ((n as u64) << 8) ^ g as u64)
            })
            .collect(),
    );
    t.lock().unwrap().entry(n).or_insert(v).clone()
}

/// The rate scales of the `pivot_c*` columns: the pivot with every `λ_b` times `c`.
const SCALES: [f64; 7] = [1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625];

/// The pivot reading `mean_{b ∈ F} exp(−c·λ_b·e)` (module docs) for each rate scale `c` of
/// `scales`; NaN without a finite endpoint.
fn pivot_scaled(n: usize, xi: f64, z: f64, e: f64, scales: &[f64]) -> Vec<f64> {
    if xi.is_nan() || xi >= 0.0 {
        return vec![f64::NAN; scales.len()];
    }
    let t = table(n);
    let g = grid(xi);
    let beta = -1.0 / xi_of(g);
    let mut kept = 0usize;
    let mut sum = vec![0.0; scales.len()];
    for &eb in t[g].iter().filter(|e| e.is_finite()) {
        let w = eb * (1.0 + z);
        let lambda = if w < 1.0 {
            n as f64 * (1.0 - w).powf(beta)
        } else {
            0.0
        };
        kept += 1;
        for (acc, c) in sum.iter_mut().zip(scales) {
            *acc += (-c * lambda * e).exp();
        }
    }
    sum.iter()
        .map(|v| if kept == 0 { f64::NAN } else { v / kept as f64 })
        .collect()
}

/// The three readings (base, pivot, boot) of a top positive with no sample or core item above
/// it, from a fit on a sample of `s` items, for `fresh` unseen items.
fn readings(q: &QueryHardness, fresh: f64, seed: u64, qi: u64) -> ([f64; 3], Vec<f64>) {
    let p = &q.positives[0];
    if p.core_above > 0 || p.pool_above > 0 {
        return ([0.0; 3], vec![0.0; SCALES.len()]);
    }
    let base = (-fresh * p.x_hat).exp();
    let Some(tail) = q.tail.filter(|_| p.branch != Branch::Count) else {
        return ([base; 3], vec![base; SCALES.len()]);
    };
    let s = q.sample_size as f64;
    let gpd = tail.fit.gpd;
    let y = f64::from(p.score) - tail.u;
    let scaled = if gpd.xi < 0.0 {
        pivot_scaled(
            tail.n_u,
            gpd.xi,
            y / gpd.endpoint() - 1.0,
            fresh / s,
            &SCALES,
        )
    } else {
        vec![base; SCALES.len()]
    };
    let piv = scaled[0];
    let mut rng = rng_for(StreamSeeding::Chained, seed, 0x41, qi);
    let mut ys = vec![0.0; tail.n_u];
    let mut acc = 0.0;
    let mut kept = 0usize;
    for _ in 0..BOOT {
        for v in ys.iter_mut() {
            let u: f64 = rand::RngExt::random(&mut rng);
            *v = gpd.quantile(u);
        }
        let Some(f) = fit_gpd_bounded(&ys) else {
            continue;
        };
        let g = Gpd {
            sigma: f.gpd.sigma,
            xi: f.gpd.xi,
        };
        let x = tail.n_u as f64 / s * g.survival(y);
        acc += (-fresh * x).exp();
        kept += 1;
    }
    ([base, piv, acc / kept.max(1) as f64], scaled)
}

fn branch(q: &QueryHardness) -> &'static str {
    q.positives.first().map_or("none", |p| p.branch.as_str())
}

fn main() {
    let seeds = args::seeds(1, "0..1");
    let f: f64 = args::arg(2).map_or(0.05, |s| s.parse().expect("F"));
    let families = args::families(3);
    let queries: Option<usize> = args::arg(4).map(|s| s.parse().expect("QUERIES"));
    let cols = |sfx: &str| {
        SCALES
            .iter()
            .enumerate()
            .map(|(i, _)| format!(",pivot_c{i}{sfx}"))
            .collect::<String>()
    };
    print!("family,held_out,seed,f,query,N,S,truth_hit,x_true,k_n,core,k_s,branch,score,u,n_u,sigma,xi,x_hat,moved,count_law,base,pivot,boot{}", cols(""));
    for l in 1..=3 {
        print!(
            ",k_{l},branch_{l},x_hat_{l},base_{l},pivot_{l},boot_{l}{}",
            cols(&format!("_{l}"))
        );
    }
    println!(",level_calibrated_hit,fit_top,quantile");
    for fam in &families {
        let held_out = corpus::entry(fam).expect("family").held_out;
        for seed in seeds.clone() {
            let mut cfg = summary_config(fam, seed).expect("family");
            cfg.fraction = f;
            if let Some(q) = queries {
                cfg = cfg.with_queries(q);
            }
            let sim = simulate_summary(&cfg).expect("simulate");
            let defaults = PredictOptions::default();
            let opts = PredictOptions {
                k: cfg.k,
                bootstrap: 1000,
                sample_noise: 0,
                seed,
                ..defaults
            };
            let s = &sim.summary;
            let p = predict_without_next_step(s, &opts).expect("predict");
            let t = &sim.truth;
            let nf = t.pool_size as f64;
            let s0 = p.sample_size as f64;
            let chosen = p
                .baselines
                .level_selected
                .as_ref()
                .map(|c| *c.chosen())
                .expect("a level-selected fit");
            let evt = Estimator::Evt(EvtOptions {
                top_m: chosen.fit_top,
                quantile: chosen.quantile,
                c_min: EvtOptions::DEFAULT.c_min,
            });
            let levels = s.level_indices();
            let lh: Vec<Vec<QueryHardness>> = levels[1..4]
                .iter()
                .map(|&l| estimate_summary(s, l, &evt).expect("level hardness"))
                .collect();
            let h0 = &p.hardness;
            // The count law's hit@1 at the far end of the move, when the estimate moved.
            let far = p
                .excess_centre
                .map(|c| tailrank::predict::endpoint_test::with_excess_rate(h0, c.excess_rate, nf));
            let truth_by_id: HashMap<&str, usize> = t
                .queries
                .iter()
                .enumerate()
                .map(|(i, q)| (q.id.as_str(), i))
                .collect();
            let rows: Vec<String> = (0..h0.len())
                .into_par_iter()
                .map(|i| {
                    let q = &h0[i];
                    let tq = &t.queries[truth_by_id[q.query_id.as_str()]];
                    let p1 = &q.positives[0];
                    let tp = tq
                        .positives
                        .iter()
                        .find(|x| x.id == p1.id)
                        .expect("the top positive in the truth");
                    let truth_hit = u8::from(tp.core_above == 0 && tp.pool_above_n == 0);
                    let (r0, c0) = readings(q, nf - s0, seed, i as u64);
                    let check = maps::hit_at_1(q, nf);
                    assert!(
                        (check - r0[0]).abs() < 1e-3 || p1.pool_above > 0,
                        "{check} {}",
                        r0[0]
                    );
                    let (u, n_u, sg, xi) = q.tail.map_or((f64::NAN, 0, f64::NAN, f64::NAN), |t| {
                        (t.u, t.n_u, t.fit.gpd.sigma, t.fit.gpd.xi)
                    });
                    let mut row = format!(
                        "{fam},{held_out},{seed},{f},{},{},{},{truth_hit},{:e},{},{},{},{},{},{u},{n_u},{sg},{xi},{:e},{:.6},{:.6},{:.6},{:.6},{:.6}",
                        q.query_id,
                        t.pool_size,
                        p.sample_size,
                        tp.x,
                        tp.pool_above_n,
                        p1.core_above,
                        p1.pool_above,
                        branch(q),
                        p1.score,
                        p1.x_hat,
                        p.queries[i].hit_at_1,
                        far.as_ref().map_or(r0[0], |h| {
                            r0[0] + 0.5 * (maps::hit_at_1(&h[i], nf) - r0[0])
                        }),
                        r0[0],
                        r0[1],
                        r0[2]
                    );
                    for v in &c0 {
                        row += &format!(",{v:.6}");
                    }
                    for (li, hl) in lh.iter().enumerate() {
                        let ql = &hl[i];
                        let sl = ql.sample_size as f64;
                        let pl = &ql.positives[0];
                        let (r, cl) =
                            readings(ql, s0 - sl, seed ^ 0x9E37, (i + (li + 1) * 1_000_000) as u64);
                        row += &format!(
                            ",{},{},{:e},{:.6},{:.6},{:.6}",
                            pl.pool_above,
                            branch(ql),
                            pl.x_hat,
                            r[0],
                            r[1],
                            r[2]
                        );
                        for v in &cl {
                            row += &format!(",{v:.6}");
                        }
                    }
                    row += &format!(
                        ",{},{},{}",
                        p.baselines.level_calibrated.map_or(f64::NAN, |c| c.hit_at_1),
                        chosen.fit_top,
                        chosen.quantile
                    );
                    row
                })
                .collect();
            for r in rows {
                println!("{r}");
            }
            eprintln!("{fam} seed {seed} f {f}: done");
        }
    }
}
