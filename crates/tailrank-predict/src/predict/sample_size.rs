//! The warning on a sample whose size is not what a hash sample of the pool gives
//! (docs/reference/predict.md, "Usage").

use crate::summary::Summary;

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
