//! The sample-size rule of a prediction (how many sampled items resolve a positive near the
//! cut-off) and the warning on a sample whose size is not what a hash sample of the pool
//! gives (docs/reference/predict.md, "Usage").

use crate::error::{Error, Result};
use crate::hardness::{Estimator, EvtOptions};
use crate::summary::Summary;

/// The sample-size rule of a prediction, stated once (used by [`predict`],
/// [`predict_from_hardness`] and the curves):
///
/// * `S = 0` is an error: with no sampled pool item every positive is immune and the
///   "prediction" is the metric of the core alone, whatever N.
/// * The report warns (see [`sample_warnings`]) when `S < c_min` (no positive can reach the
///   count threshold) or when `S·k/N < c_min`: a positive ranked k-th among the N pool items
///   has on average `S·k/N` sampled items above it, so near the cut-off k no positive is
///   resolved by its count and the prediction at k rests on the fitted tail (evt) or on counts
///   below `c_min` (count). `c_min` is the estimator's (the default, 5, for `count`).
pub fn check_sample_size(sample: u64) -> Result<()> {
    if sample == 0 {
        return Err(Error::input_msg(
            "the sample is empty (S = 0 sampled pool items): there is nothing to predict from \
             (with no sampled item every positive looks unbeatable); scan a larger fraction, or \
             check that the pool ids are those the sample was drawn from",
        ));
    }
    Ok(())
}

/// `c_min` of estimator `est` (the default's for `count`).
pub(super) fn c_min_of(est: &Estimator) -> u64 {
    match est {
        Estimator::Evt(e) => e.c_min,
        Estimator::Count => EvtOptions::default().c_min,
    }
}

/// The sample size the sample-size rule ([`check_sample_size`]) asks for at pool size `n`,
/// cut-off `k` and estimator `est`, `max(⌈c_min·N/k⌉, c_min)`, when `sample` falls short of it;
/// None when the sample is large enough.
pub fn sample_needed(sample: u64, n: u64, k: usize, est: &Estimator) -> Option<u64> {
    let c_min = c_min_of(est);
    let expected = sample as f64 * k as f64 / n.max(1) as f64;
    if sample >= c_min && expected >= c_min as f64 {
        return None;
    }
    Some(
        (c_min as f64 * n as f64 / k as f64)
            .ceil()
            .max(c_min as f64) as u64,
    )
}

/// What a prediction near the cut-off rests on when the sample-size rule fails: the fitted
/// tail (evt) or counts below `c_min` (count).
pub fn rests_on(est: &Estimator) -> &'static str {
    match est {
        Estimator::Evt(_) => "the fitted tail alone",
        Estimator::Count => "counts below c_min",
    }
}

/// Warnings of the sample-size rule ([`check_sample_size`]) for a sample of `sample` items, a
/// pool of `n`, cut-off `k` and estimator `est`; empty when the sample is large enough.
pub fn sample_warnings(sample: u64, n: u64, k: usize, est: &Estimator) -> Vec<String> {
    let c_min = c_min_of(est);
    let expected = sample as f64 * k as f64 / n.max(1) as f64;
    let Some(need) = sample_needed(sample, n, k, est) else {
        return Vec::new();
    };
    if expected >= c_min as f64 {
        // The rule fails on S itself: fewer items than c_min in the whole sample.
        return vec![format!(
            "small sample: S = {sample} sampled items, below c_min = {c_min}: no positive is \
             resolved by its count, so the prediction rests on {} (sample at least {need} items)",
            rests_on(est)
        )];
    }
    vec![format!(
        "small sample: S = {sample} sampled items for N = {n} and k = {k} gives S·k/N = \
         {expected:.2} sampled items on average above a positive ranked k-th, below c_min = \
         {c_min}: near the cut-off no positive is resolved by its count, so the prediction \
         rests on {} (sample at least {need} items for S·k/N ≥ c_min)",
        rests_on(est)
    )]
}

/// How far `S_0` may lie from `p·N` before [`sample_size_warnings`] warns: the larger of
/// `SAMPLE_SIZE_SDS` binomial sds, `SAMPLE_SIZE_SHARE` of `p·N` and `SAMPLE_SIZE_ITEMS`.
pub const SAMPLE_SIZE_SDS: f64 = 5.0;
pub const SAMPLE_SIZE_SHARE: f64 = 0.01;
pub const SAMPLE_SIZE_ITEMS: f64 = 5.0;

/// The warning on a sample whose size `S_0` is not what a hash sample of a pool of N gives
/// (`S_0 ~ Bin(N, p)`, `p` the width of level 0's hash range), below f = 1: rows of it missing
/// from the scan, or an N that is not the sampled pool's. It leaves the verdict as it is:
/// predicting at another N than the sampled pool's (`--pool-size`) is legitimate.
pub fn sample_size_warnings(s: &Summary, n: u64) -> Vec<String> {
    let Some(level0) = s.subsets.first().filter(|_| s.fraction < 1.0) else {
        return Vec::new();
    };
    let s0 = s.subset_sizes.first().copied().unwrap_or(0) as f64;
    let p = level0.range.width_fraction();
    let (expected, sd) = (p * n as f64, (n as f64 * p * (1.0 - p)).sqrt());
    let allowed = (SAMPLE_SIZE_SDS * sd)
        .max(SAMPLE_SIZE_SHARE * expected)
        .max(SAMPLE_SIZE_ITEMS);
    if (s0 - expected).abs() <= allowed {
        return Vec::new();
    }
    let cause = if s0 < expected {
        "rows of the sample are missing from the scan, or N is larger than the pool it was \
         drawn from"
    } else {
        "N is smaller than the pool the sample was drawn from"
    };
    vec![format!(
        "the sample holds S = {s0} pool items, where a hash sample of {:.4}% of N = {n} holds \
         {expected:.0} ± {sd:.0}: {cause} (`--pool-size`, Python `pool_size=`); when N is \
         meant to differ from the sampled pool's, this is expected",
        100.0 * p
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The warning names the part of the rule that fails: S itself below c_min, or the
    /// expected count S·k/N near the cut-off.
    #[test]
    fn the_warning_names_the_failing_part_of_the_rule() {
        let est = Estimator::default();
        let tiny = sample_warnings(2, 2, 1000, &est);
        assert!(
            tiny[0].contains("S = 2 sampled items, below c_min = 5"),
            "{tiny:?}"
        );
        assert!(!tiny[0].contains("S·k/N"), "{tiny:?}");
        let thin = sample_warnings(100_000, 100_000_000, 1000, &est);
        assert!(thin[0].contains("S·k/N = 1.00"), "{thin:?}");
        assert!(sample_warnings(5_000_000, 100_000_000, 1000, &est).is_empty());
    }
}
