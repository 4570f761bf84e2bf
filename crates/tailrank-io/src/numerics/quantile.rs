//! Linear quantiles of sorted values (numpy's default method, "linear"): position
//! `h = (n − 1)·q` with `q` clamped to [0, 1], `i = ⌊h⌋`, `γ = h − i`, between `a = v_i` and
//! `b = v_{min(i+1, n−1)}`. Two interpolation forms, equal up to rounding and each pinned by
//! the outputs computed with it:
//!
//! - [`quantile_sorted`]: `a + γ(b − a)` (bootstrap intervals, diagnostics, reports);
//! - [`quantile_sorted_as_numpy`]: numpy's `_lerp`, `a + γ(b − a)` for `γ < 1/2` and
//!   `b − (1 − γ)(b − a)` otherwise, bit for bit `numpy.quantile` (the hardness fit's
//!   quantile threshold).

/// `(i, min(i + 1, n − 1), γ)` of the linear quantile `q` of `n ≥ 1` values.
fn position(n: usize, q: f64) -> (usize, usize, f64) {
    let q = q.clamp(0.0, 1.0);
    let h = (n - 1) as f64 * q;
    let lo = (h.floor() as usize).min(n - 1);
    (lo, (lo + 1).min(n - 1), h - lo as f64)
}

/// The linear quantile `v_i + γ(v_{i+1} − v_i)` of ascending `v` (module docs); NaN when `v`
/// is empty or `q` is NaN.
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() || q.is_nan() {
        return f64::NAN;
    }
    let (lo, hi, gamma) = position(v.len(), q);
    v[lo] + gamma * (v[hi] - v[lo])
}

/// The linear quantile of the `n ≥ 1` ascending values `at(0), …, at(n − 1)` with numpy's
/// two-sided interpolation (module docs), equal to `numpy.quantile` bit for bit.
pub fn quantile_sorted_as_numpy(n: usize, at: impl Fn(usize) -> f64, q: f64) -> f64 {
    let (lo, hi, gamma) = position(n, q);
    let (a, b) = (at(lo), at(hi));
    let d = b - a;
    if gamma >= 0.5 {
        b - d * (1.0 - gamma)
    } else {
        a + d * gamma
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_quantile() {
        let v = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(quantile_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_sorted(&v, 1.0), 8.0);
        assert!((quantile_sorted(&v, 0.5) - 3.0).abs() < 1e-15);
        assert_eq!(quantile_sorted_as_numpy(4, |i| v[i], 0.5), 3.0);
        assert_eq!(quantile_sorted_as_numpy(4, |i| v[i], 2.0), 8.0);
        assert!(quantile_sorted(&[], 0.5).is_nan());
    }
}
