//! Measurement routes for the bias of the tail and immune branches (issue #43, item 3;
//! `docs/notes/2026-12-05-estimator-routes-2.md`). Off unless the environment variable
//! [`ENV_ROUTES`] names them, so that the default outputs are unchanged.
//!
//! - `xi=eb`: empirical-Bayes shrinkage of each query's ξ̂ towards the median ξ̂ `m` of the
//!   subset's fitted queries: `ξ' = ξ̂ + w (m − ξ̂)`, `w = v/(v + τ²)`, `v = (1 + m)²/n_u` (the
//!   asymptotic variance of the GPD's ML ξ̂), `τ² = max(0, var(ξ̂) − mean v)` (the between-query
//!   variance left after the noise); σ then refitted by maximum likelihood with ξ' fixed.
//! - `immune=topK`: an immune positive (no sampled item above it, past the fitted endpoint)
//!   gets the exponential extrapolation of the sample's top K order statistics
//!   `t_(1) ≥ … ≥ t_(K)`: `x̂ = (K/S)·exp(−(s − t_(K))/β)`, `β = mean_{i<K}(t_(i) − t_(K))`.
//! - `immune=rw`: the fitted endpoint `e = −σ/ξ` raised to the Robson–Whitlock endpoint of the
//!   excesses `e_RW = 2y_(1) − y_(2)` where it is lower (the ML endpoint of a bounded tail sits
//!   below the true one by about the top spacing); an immune positive gets the tail with ξ̂
//!   and `σ' = −ξ̂·e_RW`: `x̂ = (n_u/S)·(1 + ξ̂(s − u)/σ')^(−1/ξ̂)`, 0 past `e_RW`.
//! - `map=binomial`: the validation runs map through the binomial map (read by the simulator).

use crate::evt::{Gpd, GpdFit};
use crate::hardness::{Branch, EvtOptions, QueryHardness, QueryTail};
use crate::summary::Summary;
use std::sync::OnceLock;

/// The environment variable naming the routes, comma-separated (`xi=eb,immune=top10,map=binomial`).
pub const ENV_ROUTES: &str = "TAILRANK_ROUTES";

/// Which routes are on.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Routes {
    pub xi_eb: bool,
    pub immune_top: Option<usize>,
    pub immune_rw: bool,
    pub immune_se: bool,
    pub map_binomial: bool,
}

impl Routes {
    /// The routes named by [`ENV_ROUTES`] (read once); none when unset. Panics on a name it
    /// does not know (a measurement switch: a typo must not run the default silently).
    pub fn from_env() -> Routes {
        static R: OnceLock<Routes> = OnceLock::new();
        *R.get_or_init(|| {
            let mut r = Routes::default();
            let Ok(v) = std::env::var(ENV_ROUTES) else {
                return r;
            };
            for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                match part {
                    "xi=eb" => r.xi_eb = true,
                    "map=binomial" => r.map_binomial = true,
                    "immune=rw" => r.immune_rw = true,
                    "immune=se" => r.immune_se = true,
                    p if p.starts_with("immune=top") => {
                        let k: usize = p["immune=top".len()..]
                            .parse()
                            .unwrap_or_else(|_| panic!("{ENV_ROUTES}: bad {p:?}"));
                        assert!(k >= 2, "{ENV_ROUTES}: immune=topK needs K >= 2");
                        r.immune_top = Some(k);
                    }
                    p => panic!("{ENV_ROUTES}: unknown route {p:?}"),
                }
            }
            r
        })
    }

    /// The map the validation runs use: binomial under `map=binomial`, else the default's.
    pub fn map(&self) -> crate::maps::MapKind {
        if self.map_binomial {
            crate::maps::MapKind::Binomial
        } else {
            super::PredictOptions::DEFAULT.map
        }
    }

    fn changes_hardness(&self) -> bool {
        self.xi_eb || self.immune_top.is_some() || self.immune_rw || self.immune_se
    }
}

/// σ of the GPD by maximum likelihood with ξ fixed in [−1, 0] (golden section on ln σ over
/// `σ > −ξ·max y`; ξ = 0: the mean; ξ = −1: max y). `None` when `y` is empty or all zero.
pub fn fit_gpd_fixed_xi(y: &[f64], xi: f64) -> Option<GpdFit> {
    let n = y.len();
    let ymax = y.iter().copied().fold(0.0f64, f64::max);
    if n == 0 || ymax <= 0.0 {
        return None;
    }
    let mean = y.iter().sum::<f64>() / n as f64;
    let sigma = if xi > -1e-9 {
        mean
    } else if xi <= -1.0 + 1e-9 {
        ymax
    } else {
        let ll = |ls: f64| {
            Gpd {
                sigma: ls.exp(),
                xi,
            }
            .log_likelihood(y)
        };
        let mut lo = (-xi * ymax).ln() + 1e-12;
        let mut hi = (ymax.max(mean) * 1e3).ln();
        let g = 0.5 * (5f64.sqrt() - 1.0);
        let (mut a, mut b) = (hi - g * (hi - lo), lo + g * (hi - lo));
        let (mut fa, mut fb) = (ll(a), ll(b));
        for _ in 0..120 {
            if fa < fb {
                lo = a;
                a = b;
                fa = fb;
                b = lo + g * (hi - lo);
                fb = ll(b);
            } else {
                hi = b;
                b = a;
                fb = fa;
                a = hi - g * (hi - lo);
                fa = ll(a);
            }
        }
        (0.5 * (lo + hi)).exp().max(-xi * ymax)
    };
    let gpd = Gpd { sigma, xi };
    Some(GpdFit {
        gpd,
        log_likelihood: gpd.log_likelihood(y),
        n,
    })
}

/// The excesses over `u` of the first `top_m` of `top_scores` (descending).
fn excesses(top_scores: &[f32], top_m: usize, u: f64) -> Vec<f64> {
    let mut t: Vec<f64> = top_scores.iter().map(|&s| s as f64).collect();
    t.sort_by(|a, b| b.total_cmp(a));
    t.truncate(top_m);
    t.into_iter()
        .take_while(|&s| s > u)
        .map(|s| s - u)
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Apply the hardness routes of [`Routes::from_env`] to `qs`, the hardness of subset `subset` of
/// `s` from the estimator options `o` (`qs[i]` is query i of `s`). No-op when none is on.
pub fn apply(s: &Summary, subset: usize, o: &EvtOptions, qs: &mut [QueryHardness]) {
    let r = Routes::from_env();
    if !r.changes_hardness() {
        return;
    }
    if r.xi_eb {
        shrink_xi(s, subset, o, qs);
    }
    if let Some(k) = r.immune_top {
        immune_top(s, subset, k, qs);
    }
    if r.immune_rw {
        immune_rw(s, subset, o, qs);
    }
    if r.immune_se {
        immune_se(s, subset, o, qs);
    }
}

/// `immune=se`: an immune positive gets the tail refitted (σ by ML) with ξ one standard error
/// higher, `ξ_up = min(0, ξ̂ + (1 + ξ̂)/√n_u)`: the endpoint moved by the fit's own uncertainty.
fn immune_se(s: &Summary, subset: usize, o: &EvtOptions, qs: &mut [QueryHardness]) {
    for (q, qs_) in qs.iter_mut().zip(&s.queries) {
        let Some(t) = q.tail else { continue };
        if !q.positives.iter().any(|p| p.branch == Branch::Immune) {
            continue;
        }
        let xi = t.fit.gpd.xi;
        let xi_up = (xi + (1.0 + xi) / (t.n_u as f64).sqrt()).min(0.0);
        let y = excesses(&qs_.top_scores[subset], o.top_m, t.u);
        let Some(fit) = fit_gpd_fixed_xi(&y, xi_up) else {
            continue;
        };
        let up = QueryTail { fit, ..t };
        for p in q
            .positives
            .iter_mut()
            .filter(|p| p.branch == Branch::Immune)
        {
            p.x_hat = up.x_hat(p.score as f64, q.sample_size).0;
        }
    }
}

fn immune_rw(s: &Summary, subset: usize, o: &EvtOptions, qs: &mut [QueryHardness]) {
    for (q, qs_) in qs.iter_mut().zip(&s.queries) {
        let Some(t) = q.tail else { continue };
        if !q.positives.iter().any(|p| p.branch == Branch::Immune) {
            continue;
        }
        let y = excesses(&qs_.top_scores[subset], o.top_m, t.u);
        if y.len() < 2 || t.fit.gpd.xi >= 0.0 {
            continue;
        }
        let e_rw = 2.0 * y[0] - y[1];
        if e_rw <= t.fit.gpd.endpoint() {
            continue;
        }
        let gpd = Gpd {
            sigma: -t.fit.gpd.xi * e_rw,
            xi: t.fit.gpd.xi,
        };
        let rate = t.n_u as f64 / q.sample_size.max(1) as f64;
        for p in q
            .positives
            .iter_mut()
            .filter(|p| p.branch == Branch::Immune)
        {
            p.x_hat = (rate * gpd.survival(p.score as f64 - t.u)).min(1.0);
        }
    }
}

fn shrink_xi(s: &Summary, subset: usize, o: &EvtOptions, qs: &mut [QueryHardness]) {
    let fitted: Vec<(f64, usize)> = qs
        .iter()
        .filter_map(|q| q.tail.map(|t| (t.fit.gpd.xi, t.n_u)))
        .collect();
    if fitted.len() < 3 {
        return;
    }
    let m = median(&mut fitted.iter().map(|f| f.0).collect::<Vec<_>>());
    let nq = fitted.len() as f64;
    let mean_xi = fitted.iter().map(|f| f.0).sum::<f64>() / nq;
    let var_xi = fitted.iter().map(|f| (f.0 - mean_xi).powi(2)).sum::<f64>() / (nq - 1.0);
    let v = |n_u: usize| (1.0 + m).powi(2) / n_u as f64;
    let mean_v = fitted.iter().map(|f| v(f.1)).sum::<f64>() / nq;
    let tau2 = (var_xi - mean_v).max(0.0);
    for (q, qs_) in qs.iter_mut().zip(&s.queries) {
        let Some(t) = q.tail else { continue };
        let w = v(t.n_u) / (v(t.n_u) + tau2);
        let xi = t.fit.gpd.xi + w * (m - t.fit.gpd.xi);
        let y = excesses(&qs_.top_scores[subset], o.top_m, t.u);
        let Some(fit) = fit_gpd_fixed_xi(&y, xi) else {
            continue;
        };
        let tail = QueryTail { fit, ..t };
        let size = q.sample_size;
        for p in q.positives.iter_mut().filter(|p| p.branch != Branch::Count) {
            let (x, b) = tail.x_hat(p.score as f64, size);
            p.x_hat = x;
            p.branch = b;
        }
        q.tail = Some(tail);
    }
}

fn immune_top(s: &Summary, subset: usize, k: usize, qs: &mut [QueryHardness]) {
    for (q, qs_) in qs.iter_mut().zip(&s.queries) {
        if !q.positives.iter().any(|p| p.branch == Branch::Immune) || q.sample_size == 0 {
            continue;
        }
        let mut t: Vec<f64> = qs_.top_scores[subset].iter().map(|&v| v as f64).collect();
        t.sort_by(|a, b| b.total_cmp(a));
        if t.len() < k {
            continue;
        }
        let tk = t[k - 1];
        let beta = t[..k - 1].iter().map(|v| v - tk).sum::<f64>() / (k - 1) as f64;
        if beta <= 0.0 {
            continue;
        }
        let base = k as f64 / q.sample_size as f64;
        for p in q
            .positives
            .iter_mut()
            .filter(|p| p.branch == Branch::Immune)
        {
            p.x_hat = (base * (-(p.score as f64 - tk) / beta).exp()).min(1.0);
        }
    }
}
