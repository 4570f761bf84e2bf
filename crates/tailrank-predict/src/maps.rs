//! From hardness to a metric at any pool size N (docs/method.md §7).
//!
//! For query q with positives sorted by score (j = 1..n, `n = q.positives.len()`), `C_j` the
//! core items above positive j and `x̂_j` its hardness:
//!
//! - **expected-rank** (the paper's map): `r_j(N) = j + C_j + N·x̂_j`,
//!   `AP@k = 1/min(k,n) · Σ_j 1[r_j ≤ k] · j/r_j` ([`crate::metric::ap_at_k_from_ranks`]).
//!   Fed with realized fractions `x̂_j = K_j/N` it reproduces the exact metric; to make that
//!   identity survive floating point, `N·x̂_j` within a relative 1e-9 of an integer is
//!   rounded to it.
//! - **binomial**: the exact expectation under `K_j ~ Binomial(N, x̂_j)` of each positive's
//!   precision term, `AP@k = 1/min(k,n) · Σ_j j · Σ_{i=0}^{k−j−C_j} Bin(i; N, x̂_j)/(j+C_j+i)`.
//!   The probabilities come from the recurrence
//!   `ln P(0) = N·ln(1−x)`, `ln P(i+1) = ln P(i) + ln(N−i) − ln(i+1) + ln x − ln(1−x)`, in log
//!   space (stable for N up to 1e10 and x down to 1e-300), stopping once past the mean when
//!   the remaining mass cannot change the sum, and skipped when the Chernoff bound
//!   `P(K ≤ k) ≤ exp(−N·D(k/N ‖ x))` is below e^-40 (the term is then < 5e-18). N is rounded to the nearest integer here (the
//!   Binomial needs an integer number of draws). `x̂ = 0` gives the deterministic `j/(j+C_j)`
//!   if `j + C_j ≤ k`.
//!
//! **Recall@k and hit@1 do not depend on the map.** They are probabilities of events on the
//! pool count, taken under the count law of [`CountLaw`] whatever map the mAP uses:
//! Recall@k = `mean_j P(K_N,j ≤ k − j − C_j)`, hit@1 = `1[C_1 = 0]·P(K_N,1 = 0)`. The
//! expected-rank plug-in `1[j + C_j + N·x̂_j ≤ k]` would turn any tiny `x̂_1 > 0` into a miss
//! (hit@1 = 0 for every query with a non-immune top positive), which is what the mean over the
//! law avoids (`docs/method.md`, the count law).
//!
//! Conventions: `x̂` outside [0, 1] is clamped into it (NaN stays NaN and makes the value NaN);
//! N ≤ 0 or NaN counts as 0 and N = +∞ sends every positive with `x̂ > 0` out of the top k.
//! A query without positives has AP = recall = hit = 0; `k = 0` gives 0.

use crate::hardness::{PositiveHardness, QueryHardness};
use crate::metric::{ap_at_k_from_ranks, rank_from_counts};
use serde::{Deserialize, Serialize};

/// Which hardness-to-metric map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MapKind {
    ExpectedRank,
    Binomial,
}

impl std::str::FromStr for MapKind {
    type Err = crate::error::Error;

    /// `expected-rank` or `binomial`; an error lists the names.
    fn from_str(s: &str) -> crate::error::Result<MapKind> {
        MapKind::parse(s.trim()).ok_or_else(|| {
            crate::error::Error::option(format!(
                "unknown map {s:?} (known: {})",
                MapKind::NAMES.join(", ")
            ))
        })
    }
}

impl MapKind {
    /// The map names, the default first.
    pub const NAMES: [&'static str; 2] = ["expected-rank", "binomial"];

    /// The default map's name.
    pub const DEFAULT_NAME: &'static str = MapKind::NAMES[0];

    /// `expected-rank` or `binomial`.
    pub fn as_str(&self) -> &'static str {
        match self {
            MapKind::ExpectedRank => "expected-rank",
            MapKind::Binomial => "binomial",
        }
    }

    /// Inverse of [`MapKind::as_str`].
    pub fn parse(s: &str) -> Option<MapKind> {
        match s {
            "expected-rank" => Some(MapKind::ExpectedRank),
            "binomial" => Some(MapKind::Binomial),
            _ => None,
        }
    }
}

fn clean_n(n_pool: f64) -> f64 {
    if n_pool > 0.0 {
        n_pool
    } else {
        0.0
    }
}

fn clean_x(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// `N·x̂`, snapped to the nearest integer when within a relative 1e-9 of it (so that realized
/// fractions `K/N` give back `K` exactly); 0 when `x̂ = 0` (also for N = ∞).
pub fn expected_count(n_pool: f64, x_hat: f64) -> f64 {
    let x = clean_x(x_hat);
    if x == 0.0 {
        return 0.0;
    }
    let e = clean_n(n_pool) * x;
    if e.is_finite() {
        let r = e.round();
        if (e - r).abs() <= 1e-9 * r.max(1.0) {
            return r;
        }
    }
    e
}

/// Expected ranks `r_j(N) = j + C_j + N·x̂_j` of a query's positives, in positive order.
pub fn expected_ranks(q: &QueryHardness, n_pool: f64) -> Vec<f64> {
    q.positives
        .iter()
        .enumerate()
        .map(|(i, p)| rank_from_counts(i + 1, p.core_above, expected_count(n_pool, p.x_hat)))
        .collect()
}

/// Sum over `i = 0..=m` of `Bin(i; N, x)·w(i)` (N a non-negative integer as f64, x in
/// [0, 1]). Returns NaN for NaN x.
fn binom_weighted_sum(n: f64, x: f64, m: u64, w: impl Fn(u64) -> f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 {
        return w(0);
    }
    if n.is_infinite() {
        return 0.0;
    }
    if x >= 1.0 {
        // K = N with certainty.
        return if n <= m as f64 { w(n as u64) } else { 0.0 };
    }
    let ln_x = x.ln();
    let ln_1mx = (-x).ln_1p();
    let mean = n * x;
    let mf = m as f64;
    if mf < mean && n > 0.0 {
        // Chernoff: P(K ≤ m) ≤ exp(−N·D(m/N ‖ x)); weights are ≤ 1, so below e^-40 the whole
        // sum is negligible (< 5e-18) and the O(m) loop is skipped (hopeless positives).
        let a = mf / n;
        let d = if a > 0.0 { a * (a / x).ln() } else { 0.0 } + (1.0 - a) * ((-a).ln_1p() - ln_1mx);
        if n * d > 40.0 {
            return 0.0;
        }
    }
    if m > WINDOW_FROM {
        // Below `mean − √(90·mean)` the mass is under e^-45 (Chernoff); starting there keeps
        // the sum O(√mean) instead of O(mean) for a large k (`curve --k 10^9`).
        let start = (mean - (90.0 * mean).sqrt()).floor();
        if start > 0.0 {
            return binom_sum_window(n, x, m, start as u64, &w);
        }
    }
    let mut lp = n * ln_1mx; // ln P(0)
    let mut acc = 0.0;
    let mut i: u64 = 0;
    loop {
        let p = lp.exp();
        acc += p * w(i);
        if i >= m || (i + 1) as f64 > n {
            break;
        }
        let (ratio_ln, falling, tail_done) = next_term(n, i, mean, (ln_x, ln_1mx), p, acc);
        if tail_done || (p == 0.0 && falling) {
            break;
        }
        lp += ratio_ln;
        i += 1;
    }
    acc
}

/// The step from term `i` (value `t`, the sum so far `sum`) of a binomial sum with
/// `(ln x, ln(1−x))`: `ln` of the ratio `r = Bin(i+1)/Bin(i) = (N−i)x/((i+1)(1−x))`; whether the
/// terms are falling (`i` past the mean and `r < 1`, so `r` keeps falling); and whether the rest
/// is negligible: then at most `t·r/(1−r)` (weights ≤ 1), here at most `1e-17·sum`.
fn next_term(n: f64, i: u64, mean: f64, ln: (f64, f64), t: f64, sum: f64) -> (f64, bool, bool) {
    let fi = i as f64;
    let ratio_ln = (n - fi).ln() - (fi + 1.0).ln() + ln.0 - ln.1;
    // Before the mean the terms rise: r is not needed (one exp less per term).
    let r = if fi >= mean {
        ratio_ln.exp()
    } else {
        f64::INFINITY
    };
    let falling = r < 1.0;
    (
        ratio_ln,
        falling,
        falling && t * r / (1.0 - r) <= 1e-17 * sum,
    )
}

/// Above this many terms (`m`), [`binom_weighted_sum`] starts near the mean
/// ([`binom_sum_window`]); at or below it (every k up to 10^5) it sums from 0.
const WINDOW_FROM: u64 = 100_000;

/// The log of the running term above which [`binom_sum_window`] rescales its sums (e^600 is
/// far below f64's largest, e^709.8).
const RESCALE_AT: f64 = 600.0;

/// `Σ_{i=start}^{m} Bin(i; N, x)·w(i)` normalised by the mass from `start` to the upper tail:
/// the terms are taken relative to `Bin(start; N, x)` through the ratio
/// `Bin(i+1)/Bin(i) = (N−i)x/((i+1)(1−x))`, so no `ln Γ` of N enters (its rounding at N = 10^9
/// would be 10^-3 in the probabilities); exact up to the mass below `start` (≤ e^-45).
fn binom_sum_window(n: f64, x: f64, m: u64, start: u64, w: &impl Fn(u64) -> f64) -> f64 {
    let (ln_x, ln_1mx) = (x.ln(), (-x).ln_1p());
    let mean = n * x;
    let (mut lt, mut total, mut acc) = (0.0f64, 0.0, 0.0);
    let mut i = start;
    loop {
        // Near x = 1 the peak is e^(45/(1 − x)) times Bin(start): rescale before exp overflows.
        if lt > RESCALE_AT {
            let scale = (-lt).exp();
            (acc, total, lt) = (acc * scale, total * scale, 0.0);
        }
        let t = lt.exp();
        total += t;
        if i <= m {
            acc += t * w(i);
        }
        if (i + 1) as f64 > n {
            break;
        }
        let (ratio_ln, _, tail_done) = next_term(n, i, mean, (ln_x, ln_1mx), t, total);
        if tail_done {
            break;
        }
        lt += ratio_ln;
        i += 1;
    }
    acc / total
}

/// Per-positive binomial precision term `j · Σ_{i=0}^{k−j−C_j} Bin(i; N, x̂)/(j + C_j + i)`.
fn binomial_precision_term(j: usize, core_above: u64, x_hat: f64, n: f64, k: usize) -> f64 {
    let base = j as u64 + core_above;
    if base > k as u64 {
        return 0.0;
    }
    let m = k as u64 - base;
    let jf = j as f64;
    binom_weighted_sum(n, clean_x(x_hat), m, |i| jf / (base + i) as f64)
}

/// `P(K ≤ m)` for `K ~ Binomial(N, x)` (N rounded to an integer, x clamped to [0, 1]).
pub fn binomial_cdf(n_pool: f64, x: f64, m: u64) -> f64 {
    binom_weighted_sum(clean_n(n_pool).round(), clean_x(x), m, |_| 1.0).min(1.0)
}

/// AP@k of one query at pool size `n_pool` under `map` (module docs).
pub fn ap_at_k(q: &QueryHardness, n_pool: f64, k: usize, map: MapKind) -> f64 {
    let n = q.positives.len();
    if k == 0 || n == 0 {
        return 0.0;
    }
    match map {
        MapKind::ExpectedRank => ap_at_k_from_ranks(&expected_ranks(q, n_pool), n, k),
        MapKind::Binomial => {
            let nn = clean_n(n_pool).round();
            let s: f64 = q
                .positives
                .iter()
                .enumerate()
                .map(|(i, p)| binomial_precision_term(i + 1, p.core_above, p.x_hat, nn, k))
                .sum();
            (s / k.min(n) as f64).min(1.0)
        }
    }
}

/// The law of a positive's count `K_N` in a pool of N items, given the hash sample of S items
/// the hardness came from (`docs/method.md`, the count law). The sample's own items above the
/// positive are known exactly (`K_S = pool_above`); every other item lies above it with
/// probability `x̂`:
///
/// - `N ≥ S` (the pool contains the sample): `K_N = K_S + B`, `B ~ Binomial(N − S, x̂)`;
/// - `N < S` (a nested hash sample of the sample, each item kept with probability N/S):
///   `K_N ~ Binomial(K_S, N/S)`.
///
/// Both branches give the point mass at `K_S` when `N = S` (a whole-pool scan: the realized
/// count), and `K_N` grows stochastically with N. With `S = 0` (hardness from a law, not from
/// a sample) the law is `Binomial(N, x̂)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountLaw {
    /// Items known to lie above the positive (`K_S` when `N ≥ S`, else 0).
    pub known: u64,
    /// Number of uncertain items, a non-negative integer (`N − S`, or `K_S` when `N < S`).
    pub trials: f64,
    /// Probability that one uncertain item counts (`x̂` clamped to [0, 1], or `N/S`).
    pub rate: f64,
}

impl CountLaw {
    /// The law of positive `p` of a query whose hardness came from a sample of `sample_size`
    /// items, in a pool of `n_pool` items (N rounded to an integer; N ≤ 0 or NaN counts as 0).
    pub fn new(p: &PositiveHardness, sample_size: u64, n_pool: f64) -> CountLaw {
        let n = clean_n(n_pool).round();
        let s = sample_size as f64;
        if n >= s {
            CountLaw {
                known: p.pool_above,
                trials: n - s,
                rate: clean_x(p.x_hat),
            }
        } else {
            CountLaw {
                known: 0,
                trials: p.pool_above as f64,
                rate: n / s,
            }
        }
    }

    /// `P(K_N ≤ m)`.
    pub fn cdf(&self, m: u64) -> f64 {
        if self.known > m {
            return 0.0;
        }
        binom_weighted_sum(self.trials, self.rate, m - self.known, |_| 1.0).min(1.0)
    }
}

/// Recall@k of one query: `mean_j P(K_N,j ≤ k − j − C_j)` under [`CountLaw`] (module docs).
pub fn recall_at_k(q: &QueryHardness, n_pool: f64, k: usize) -> f64 {
    let n = q.positives.len();
    if k == 0 || n == 0 {
        return 0.0;
    }
    let s: f64 = q
        .positives
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let base = (i + 1) as u64 + p.core_above;
            if base > k as u64 {
                0.0
            } else {
                CountLaw::new(p, q.sample_size, n_pool).cdf(k as u64 - base)
            }
        })
        .sum();
    s / n as f64
}

/// hit@1 of one query: `P(K_N,1 = 0)` under [`CountLaw`] when `C_1 = 0`, else 0.
pub fn hit_at_1(q: &QueryHardness, n_pool: f64) -> f64 {
    let Some(p) = q.positives.first() else {
        return 0.0;
    };
    if p.core_above > 0 {
        return 0.0;
    }
    CountLaw::new(p, q.sample_size, n_pool).cdf(0)
}

/// mAP@k: the mean of [`ap_at_k`] over `qs`; NaN when `qs` is empty.
pub fn mean_ap_at_k(qs: &[QueryHardness], n_pool: f64, k: usize, map: MapKind) -> f64 {
    if qs.is_empty() {
        return f64::NAN;
    }
    qs.iter().map(|q| ap_at_k(q, n_pool, k, map)).sum::<f64>() / qs.len() as f64
}

/// A log-spaced grid of pool sizes from `lo` to `hi` with `points_per_decade` points per
/// factor 10: `lo·10^(i/ppd)` for `i = 0, 1, …` while below `hi`, then `hi` itself (so both
/// ends are included exactly; the last step may be shorter). `[lo]` when `lo == hi`; empty
/// when `lo ≤ 0`, `hi < lo`, either is not finite, or `points_per_decade == 0`.
pub fn log_grid(lo: f64, hi: f64, points_per_decade: usize) -> Vec<f64> {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) || points_per_decade == 0 {
        return Vec::new();
    }
    if lo == hi {
        return vec![lo];
    }
    let ppd = points_per_decade as f64;
    let decades = (hi / lo).log10();
    let steps = (decades * ppd - 1e-9).ceil().max(1.0) as usize;
    let mut out = Vec::with_capacity(steps + 1);
    out.push(lo);
    for i in 1..steps {
        out.push(lo * 10f64.powf(i as f64 / ppd));
    }
    out.push(hi);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The windowed sum (m above [`WINDOW_FROM`]) equals the sum from 0, which is still
    /// feasible at these sizes, to 1e-8 (the reference's own log walk from 0 drifts by ~1e-9),
    /// and scipy's `binom.pmf` summed with `math.fsum` to 1e-12.
    #[test]
    fn the_window_from_near_the_mean_equals_the_sum_from_zero() {
        // |ln Bin(0)| = N·|ln(1 − x)| stays near 10^5: the reference's own log walk from 0
        // drifts past 1e-8 when it starts much lower.
        for (n, x) in [(1e6, 0.15), (4e5, 0.4), (2e7, 0.006), (2.5e5, 0.5)] {
            let mean: f64 = n * x;
            let sd = (mean * (1.0 - x)).sqrt();
            for m in [mean - 3.0 * sd, mean, mean + 0.5 * sd, mean + 40.0 * sd] {
                let m = m as u64;
                assert!(m > WINDOW_FROM);
                let start = (mean - (90.0 * mean).sqrt()).floor() as u64;
                let w = |i: u64| 1.0 / (1.0 + i as f64).sqrt();
                let windowed = binom_weighted_sum(n, x, m, w);
                let mut lp = n * (-x).ln_1p();
                let mut full = 0.0;
                for i in 0..=m.min(n as u64) {
                    full += lp.exp() * w(i);
                    let fi = i as f64;
                    lp += (n - fi).ln() - (fi + 1.0).ln() + x.ln() - (-x).ln_1p();
                }
                let rel = (windowed - full).abs() / full;
                assert!(
                    rel < 1e-8,
                    "N {n} x {x} m {m} (start {start}): {windowed} vs {full}"
                );
            }
        }
        // scipy: math.fsum(binom.pmf(i, n, x) / sqrt(1 + i)) over mean − 60·sd ≤ i ≤ m
        // (`binom.logpmf` is off by 1.6e-7 at N = 10^8: its pmf sums to 1 − 1.6e-7).
        let w = |i: u64| 1.0 / (1.0 + i as f64).sqrt();
        for (n, x, m, scipy) in [
            (4e5, 0.4, 159_070, 3.376468255214309e-06),
            (1e8, 0.002, 200_223, 0.0015474598155466456),
            // x near 1: the peak is e^(45/(1 − x)) above Bin(start), past f64 without rescaling.
            (2e5, 0.95, 190_000, 0.0011505970489476688),
            (2e5, 0.95, 189_950, 0.000700784898677937),
            (1e6, 0.999, 999_000, 0.0005044699114965845),
        ] {
            let got = binom_weighted_sum(n, x, m, w);
            assert!(
                (got - scipy).abs() < 1e-12 * scipy,
                "N {n}: {got} vs scipy {scipy}"
            );
        }
        for (n, x) in [(2e5, 0.95), (1e9, 0.999)] {
            let cdf = binomial_cdf(n, x, n as u64);
            assert!((cdf - 1.0).abs() < 1e-12, "P(K ≤ N) at N {n}, x {x}: {cdf}");
        }
    }
}
