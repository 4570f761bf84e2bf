//! The decaying hazard `h(t) = a·t^{−γ}` of the endpoint test's excess (docs/method.md §9;
//! its fit is `predict::survivor_decay`): the window integral and the rate carried from one
//! pool size to another.

/// `W(x, y; γ) = ∫_x^y t^{−γ} dt` for `0 < x ≤ y`.
pub fn window(x: f64, y: f64, gamma: f64) -> f64 {
    if (gamma - 1.0).abs() < 1e-9 {
        (y / x).ln()
    } else {
        (y.powf(1.0 - gamma) - x.powf(1.0 - gamma)) / (1.0 - gamma)
    }
}

/// The rate the decayed hazard gives at pool size `n` when it gives `rate` at `n_ref` (both
/// from the sample `s0`): the hazard scale `a = rate·(n_ref − s0)/W(1, n_ref/s0; γ)` carried
/// to `a·W(1, n/s0; γ)/(n − s0)`. 0 for `n ≤ s0` (no unsampled item); `rate` when `n_ref ≤ s0`.
pub fn rate_between(rate: f64, n_ref: f64, n: f64, s0: f64, gamma: f64) -> f64 {
    if n <= s0 {
        return 0.0;
    }
    if n_ref <= s0 {
        return rate;
    }
    let a = rate * (n_ref - s0) / window(1.0, n_ref / s0, gamma);
    a * window(1.0, n / s0, gamma) / (n - s0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `W` is the integral of `t^{−γ}`: additive over adjacent windows, `y − x` at `γ = 0`,
    /// continuous through `γ = 1`.
    #[test]
    fn window_is_the_integral() {
        assert!((window(0.25, 1.0, 0.0) - 0.75).abs() < 1e-15);
        for g in [0.0, 0.5, 1.0, 2.0, 3.5] {
            let whole = window(0.125, 20.0, g);
            let parts = window(0.125, 1.0, g) + window(1.0, 20.0, g);
            assert!((whole - parts).abs() < 1e-12 * whole, "{g}");
        }
        let near = window(0.5, 1.0, 1.0 + 1e-7);
        assert!((near - 2f64.ln()).abs() < 1e-6);
    }
}
