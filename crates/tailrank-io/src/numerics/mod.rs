//! Numerics of the whole library, in one place (foundation layer: imports nothing of the
//! crate): the normal distribution and `erfc` ([`normal`]), `ln Γ` and the incomplete beta
//! function ([`beta`]), linear quantiles ([`quantile`]), seeded generators per stream
//! ([`rng`]), the decaying-hazard window ([`hazard`]) and the mean.
//!
//! Where two numerical variants exist they differ on purpose and are named for how they
//! differ: every output the library writes is pinned to the variant it was computed with
//! (double-precision `norm_cdf` for the bootstrap, the Chebyshev-fitted one for the
//! simulator's copula; two seeding schemes, [`rng::StreamSeeding`]; two interpolation forms
//! of the linear quantile).

pub mod beta;
pub mod hazard;
pub mod normal;
pub mod quantile;
pub mod rng;

pub use normal::{erfc, norm_cdf, norm_ppf};
pub use quantile::quantile_sorted;
pub use rng::{rng_for, StreamSeeding};

/// Arithmetic mean `Σ v_i / n` (summed in order); NaN when empty.
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// One step of the modified Lentz method for a continued fraction `… + a/(b + …)`:
/// `D ← 1/(b + a·D)` and `C ← b + a/C` (each denominator kept away from 0 by `1e-300`); returns
/// `C·D`, the factor by which the convergent changes.
pub(crate) fn lentz_step(b: f64, a: f64, c: &mut f64, d: &mut f64) -> f64 {
    const TINY: f64 = 1e-300;
    let away_from_zero = |v: f64| if v.abs() < TINY { TINY } else { v };
    *d = 1.0 / away_from_zero(b + a * *d);
    *c = away_from_zero(b + a / *c);
    *c * *d
}

#[cfg(test)]
mod tests {
    #[test]
    fn mean_of_a_slice() {
        assert_eq!(super::mean(&[1.0, 2.0, 6.0]), 3.0);
        assert!(super::mean(&[]).is_nan());
    }
}
