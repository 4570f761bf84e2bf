//! Exact random draws the summary-level simulator is built from (docs/method.md §10): a
//! binomial that accepts the edge probabilities, joint counts below nested thresholds, and the
//! smallest uniforms of a large sample by Rényi's exponential spacings.

use rand::Rng;
use rand_distr::{Binomial, Distribution, Exp1};

/// `Binomial(n, p)`, with `p ≤ 0` giving 0 and `p ≥ 1` giving `n`.
pub(crate) fn binomial<R: Rng + ?Sized>(rng: &mut R, n: u64, p: f64) -> u64 {
    if n == 0 || p <= 0.0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    Binomial::new(n, p).expect("p in (0, 1)").sample(rng)
}

/// Counts of `n` i.i.d. items (exceedance `p ~ U(p0, 1)`) below each of the non-decreasing
/// exceedance thresholds `xs` (i.e. scoring above the corresponding scores), jointly:
/// `D_j = D_{j−1} + Bin(n − D_{j−1}, (x_j − x_{j−1})/(1 − x_{j−1}))` with `x_0 = p0`.
/// Marginally `D_j ~ Binomial(n, (x_j − p0)/(1 − p0))`. Returns the cumulative counts.
pub fn joint_counts<R: Rng + ?Sized>(rng: &mut R, n: u64, p0: f64, xs: &[f64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(xs.len());
    let (mut d, mut prev) = (0u64, p0);
    for &x in xs {
        if x > prev && d < n {
            let q = if prev >= 1.0 {
                1.0
            } else {
                ((x - prev) / (1.0 - prev)).min(1.0)
            };
            d += binomial(rng, n - d, q);
            prev = x;
        }
        out.push(d);
    }
    out
}

/// One step of Rényi's representation: with `cum = −ln(1 − p_(i))` for the i-th smallest of `n`
/// uniforms and `remaining = n − i`, returns `p_(i+1) = 1 − exp(−cum − E/remaining)`,
/// `E ~ Exp(1)`, updating `cum`.
#[inline]
pub fn renyi_step<R: Rng + ?Sized>(rng: &mut R, cum: &mut f64, remaining: u64) -> f64 {
    let e: f64 = Exp1.sample(rng);
    *cum += e / remaining as f64;
    -(-*cum).exp_m1()
}

/// The `m` smallest of `n` i.i.d. U(0, 1) variables, ascending, drawn exactly in `O(m)` without
/// drawing the other `n − m` (Rényi's exponential spacings). On the exceedance scale these are
/// the `m` highest scores of `n` items: score = `F̄⁻¹(p)`.
pub fn smallest_uniforms<R: Rng + ?Sized>(rng: &mut R, n: u64, m: usize) -> Vec<f64> {
    let m = m.min(n as usize);
    let mut cum = 0.0;
    (0..m)
        .map(|i| renyi_step(rng, &mut cum, n - i as u64))
        .collect()
}
