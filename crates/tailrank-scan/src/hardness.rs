//! Per-positive hardness estimators (docs/method.md §6): `x_{q,j}` = fraction of the pool scoring strictly
//! above positive j of query q; over a uniform pool of size N, `K_j ~ Binomial(N, x_j)`.
//!
//! - `count`: `x̂ = K_j / S` (0 when S = 0).
//! - `evt` (default): per query, `T` = the top-M sample scores (all of them when fewer),
//!   `u` = the `quantile` (0.95) of `T` with numpy's default linear interpolation, excesses
//!   `y = t − u` for `t > u` (`n_u` of them), GPD fitted by [`crate::evt::fit_gpd_bounded`]
//!   (ξ ∈ [−1, 0]). Per positive with score `s` and sample count `K`:
//!   - `K ≥ c_min` → count branch, `x̂ = K/S`;
//!   - otherwise, when the query has a tail and `s > u` → tail branch,
//!     `x̂ = (n_u/S)·(1 + ξ(s−u)/σ)^(−1/ξ)` (`exp(−(s−u)/σ)` at ξ = 0);
//!     when `s − u` reaches the endpoint `−σ/ξ`, `x̂ = 0` and the branch is `immune`;
//!   - otherwise (no tail for the query, or `s ≤ u`) → count branch, `x̂ = K/S`. A positive at
//!     or below `u` already has at least `n_u` sampled items above it, so this only happens
//!     when `c_min > n_u`; the count is then as well resolved as the tail's own data.
//!
//!   A query gets no tail (all its positives use the count) when fewer than
//!   [`MIN_TAIL_EXCESSES`] scores lie strictly above `u`, e.g. when `S < 200` with the defaults,
//!   or when the top scores are tied at `u`.
//!
//! The hardness artifact, a CSV with one row per positive and [`HardnessMeta`] before the
//! header, is read and written by [`crate::formats::hardness_csv`] (`docs/reference/hardness.md`).

use crate::error::{Error, Result};
use crate::evt::{fit_gpd_bounded, Gpd, GpdFit};
use crate::summary::{QuerySummary, Summary};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// A query's tail is fitted only when at least this many excesses lie above `u`; below that
/// the query's positives all use the count estimate.
pub const MIN_TAIL_EXCESSES: usize = 10;

/// Which hardness estimator.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    Count,
    Evt(EvtOptions),
}

/// Options of the tail-aware estimator (defaults: [`EvtOptions::DEFAULT`], the paper's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EvtOptions {
    /// Number of top sample scores the tail is fitted on (the CLI's `--fit-top`): the first
    /// `min(top_m, list length)` of a subset's kept top-M list. Not the M a scan keeps
    /// ([`ScanConfig::top_m`](crate::scan::config::ScanConfig::top_m)), which bounds it.
    pub top_m: usize,
    /// Threshold quantile of the top-M scores (numpy linear interpolation).
    pub quantile: f64,
    /// Counts at or above `c_min` are trusted as they are.
    pub c_min: u64,
}

impl EvtOptions {
    /// The defaults, stated once (the CLI and Python signatures read them from here): every
    /// score a default scan keeps ([`DEFAULT_TOP_M`](crate::scan::config::DEFAULT_TOP_M),
    /// 4000), quantile 0.95, c_min = 5.
    pub const DEFAULT: EvtOptions = EvtOptions {
        top_m: crate::scan::config::DEFAULT_TOP_M,
        quantile: 0.95,
        c_min: 5,
    };

    /// What is wrong with these options, if anything: the threshold quantile must lie in
    /// (0, 1) and the tail be fitted on at least 2 scores.
    pub fn range_error(&self) -> Option<String> {
        if !(self.quantile > 0.0 && self.quantile < 1.0) {
            return Some(format!(
                "tail threshold quantile must be in (0, 1), got {}",
                self.quantile
            ));
        }
        if self.top_m < 2 {
            return Some(format!(
                "fit-top (the top scores the tail is fitted on) must be at least 2, got {}",
                self.top_m
            ));
        }
        None
    }
}

impl Default for EvtOptions {
    fn default() -> Self {
        EvtOptions::DEFAULT
    }
}

/// How a positive's hardness was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Branch {
    Count,
    Tail,
    Immune,
}

/// Fitted tail of one query: threshold u and GPD above it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QueryTail {
    pub u: f64,
    pub n_u: usize,
    pub fit: GpdFit,
}

/// Hardness of one positive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositiveHardness {
    pub id: String,
    pub score: f32,
    /// C_j + T^C_j: non-relevant core items at or above `s_j` (exact; ties count as above).
    pub core_above: u64,
    /// K_j + T^K_j in the sample the estimate came from (items at or above `s_j`).
    pub pool_above: u64,
    /// x̂_j.
    pub x_hat: f64,
    pub branch: Branch,
}

/// Hardness of one query's positives (sorted by score, descending).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryHardness {
    pub query_id: String,
    /// S, the sample size the estimate used.
    pub sample_size: u64,
    pub tail: Option<QueryTail>,
    pub positives: Vec<PositiveHardness>,
}

impl Default for Estimator {
    /// The tail-aware estimator with default options.
    fn default() -> Self {
        Estimator::Evt(EvtOptions::default())
    }
}

impl Estimator {
    /// The estimator names [`Estimator::named`] accepts, the default first.
    pub const NAMES: [&'static str; 2] = ["evt", "count"];

    /// The default estimator's name.
    pub const DEFAULT_NAME: &'static str = Estimator::NAMES[0];

    /// The estimator called `name` (one of [`Estimator::NAMES`]) with the tail options `evt`
    /// (unused by `count`). The one place an estimator name is parsed.
    pub fn named(name: &str, evt: EvtOptions) -> Result<Estimator> {
        match name.trim() {
            "evt" => Ok(Estimator::Evt(evt)),
            "count" => Ok(Estimator::Count),
            other => Err(Error::option(format!(
                "unknown estimator {other:?} (known: {})",
                Estimator::NAMES.join(", ")
            ))),
        }
    }

    /// The short name (`evt` or `count`).
    pub fn name(&self) -> &'static str {
        match self {
            Estimator::Evt(_) => "evt",
            Estimator::Count => "count",
        }
    }

    /// A stable label recorded in artifacts: `count`, or
    /// `evt(top_m=4000,quantile=0.95,c_min=5)`. [`Estimator::parse_label`] reads it back.
    pub fn label(&self) -> String {
        match self {
            Estimator::Count => "count".to_string(),
            Estimator::Evt(o) => format!(
                "evt(top_m={},quantile={},c_min={})",
                o.top_m, o.quantile, o.c_min
            ),
        }
    }

    /// Parse `count`, `evt` (default options) or `evt(top_m=..,quantile=..,c_min=..)` (any
    /// subset of the keys, the rest default). None when malformed or out of range
    /// ([`EvtOptions::range_error`]).
    pub fn parse_label(s: &str) -> Option<Estimator> {
        Estimator::parse_label_unchecked(s).filter(|e| match e {
            Estimator::Evt(o) => o.range_error().is_none(),
            Estimator::Count => true,
        })
    }

    /// [`Estimator::parse_label`] without the range check.
    pub fn parse_label_unchecked(s: &str) -> Option<Estimator> {
        let s = s.trim();
        if s == "count" {
            return Some(Estimator::Count);
        }
        if s == "evt" {
            return Some(Estimator::default());
        }
        let inner = s.strip_prefix("evt(")?.strip_suffix(')')?;
        let mut o = EvtOptions::default();
        for kv in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = kv.split_once('=')?;
            match k.trim() {
                "top_m" => o.top_m = v.trim().parse().ok()?,
                "quantile" => o.quantile = v.trim().parse().ok()?,
                "c_min" => o.c_min = v.trim().parse().ok()?,
                _ => return None,
            }
        }
        Some(Estimator::Evt(o))
    }
}

impl Branch {
    /// Name used in artifacts: `count`, `tail`, `immune`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Branch::Count => "count",
            Branch::Tail => "tail",
            Branch::Immune => "immune",
        }
    }

    /// Inverse of [`Branch::as_str`].
    pub fn parse(s: &str) -> Option<Branch> {
        match s {
            "count" => Some(Branch::Count),
            "tail" => Some(Branch::Tail),
            "immune" => Some(Branch::Immune),
            _ => None,
        }
    }
}

impl QueryTail {
    /// The fitted GPD of the excesses over `u`.
    pub fn gpd(&self) -> Gpd {
        self.fit.gpd
    }

    /// Score at which the fitted tail ends: `u − σ/ξ` (`+∞` at ξ = 0).
    pub fn score_endpoint(&self) -> f64 {
        self.u + self.fit.gpd.endpoint()
    }

    /// Tail estimate of the pool fraction above `score` from a sample of `sample_size`:
    /// `x̂ = (n_u/S)·S_gpd(score − u)`, and [`Branch::Immune`] with `x̂ = 0` when
    /// `score − u` reaches the endpoint `−σ/ξ`. Meant for `score > u`; below `u` it returns
    /// `n_u/S` (the survival is 1 there).
    pub fn x_hat(&self, score: f64, sample_size: u64) -> (f64, Branch) {
        let excess = score - self.u;
        let gpd = self.fit.gpd;
        if excess >= gpd.endpoint() {
            return (0.0, Branch::Immune);
        }
        if sample_size == 0 {
            return (0.0, Branch::Tail);
        }
        let x = self.n_u as f64 / sample_size as f64 * gpd.survival(excess);
        (x.clamp(0.0, 1.0), Branch::Tail)
    }
}

/// Quantile of `values` with numpy's default method (`numpy.quantile(values, q)`, "linear"):
/// sort ascending into `v_0 ≤ … ≤ v_{n−1}`, `h = (n−1)·q`, `i = ⌊h⌋`, `γ = h − i`, result
/// `v_i + γ (v_{i+1} − v_i)` (numpy's `_lerp`, which uses `v_{i+1} − (1−γ)(v_{i+1} − v_i)`
/// for γ ≥ 0.5). Computed in f64 from the f32 values (numpy on an f32 array rounds the result
/// to f32). `q` is clamped to [0, 1]; NaN for empty `values` or NaN `q`.
pub fn quantile_linear(values: &[f32], q: f64) -> f64 {
    if values.is_empty() || q.is_nan() {
        return f64::NAN;
    }
    let mut v: Vec<f64> = values.iter().map(|&x| x as f64).collect();
    v.sort_by(f64::total_cmp);
    crate::numerics::quantile::quantile_sorted_as_numpy(v.len(), |i| v[i], q)
}

/// `(every score finite, scores in descending order)`. Both are folds without early exit over
/// chunks of 256, so that they vectorize: a fit checks its whole list (M ≈ 4000 scores) and
/// `predict` fits every query some fifty times, so a scalar scan with a branch per score
/// would cost as much as the fit itself.
fn finite_and_descending(x: &[f32]) -> (bool, bool) {
    const CHUNK: usize = 256;
    let (mut finite, mut descending) = (true, true);
    let mut start = 0;
    while start < x.len() {
        let end = (start + CHUNK).min(x.len());
        let chunk = &x[start..end];
        let next = &x[start + 1..(end + 1).min(x.len())];
        finite &= chunk.iter().fold(true, |ok, v| ok & v.is_finite());
        descending &= chunk
            .iter()
            .zip(next)
            .fold(true, |ok, (a, b)| ok & (a >= b));
        if !finite {
            break;
        }
        start = end;
    }
    (finite, descending)
}

/// Fit the tail of one query (docs/method.md §6): `T` = the first `min(M, len)` of `top_scores` (the
/// subset's top scores, descending; sorted here if they are not), `u` = the `opts.quantile`
/// quantile of `T` ([`quantile_linear`]), excesses `y = t − u` for `t > u`, GPD by
/// [`fit_gpd_bounded`]. `None` when `sample_size` is 0, `T` is empty or holds a non-finite
/// score, or fewer than [`MIN_TAIL_EXCESSES`] excesses remain.
pub fn fit_query_tail(
    top_scores: &[f32],
    sample_size: u64,
    opts: &EvtOptions,
) -> Option<QueryTail> {
    if sample_size == 0 || opts.top_m == 0 || top_scores.is_empty() {
        return None;
    }
    let (finite, descending) = finite_and_descending(top_scores);
    if !finite {
        return None;
    }
    let sorted;
    let all: &[f32] = if descending {
        top_scores
    } else {
        let mut v = top_scores.to_vec();
        v.sort_by(|a, b| b.total_cmp(a));
        sorted = v;
        &sorted
    };
    let t = &all[..opts.top_m.min(all.len())];
    let m = t.len();
    let u = crate::numerics::quantile::quantile_sorted_as_numpy(
        m,
        |i| t[m - 1 - i] as f64,
        opts.quantile,
    );
    let y: Vec<f64> = t
        .iter()
        .map(|&s| s as f64)
        .take_while(|&s| s > u)
        .map(|s| s - u)
        .collect();
    if y.len() < MIN_TAIL_EXCESSES {
        return None;
    }
    let fit = fit_gpd_bounded(&y)?;
    Some(QueryTail {
        u,
        n_u: y.len(),
        fit,
    })
}

/// Hardness of one query's positives from subset `subset` of its summary (sample size
/// `sample_size` = S of that subset), with the estimator `est` (module docs for the rules).
/// Positives keep the summary's order (score descending).
///
/// Panics if `subset` is out of range for `q.top_scores` or a positive's `pool_above`
/// ([`estimate_summary`] checks this and returns an error instead).
pub fn estimate_query(
    q: &QuerySummary,
    subset: usize,
    sample_size: u64,
    est: &Estimator,
) -> QueryHardness {
    let count = |k: u64| {
        if sample_size == 0 {
            0.0
        } else {
            (k as f64 / sample_size as f64).min(1.0)
        }
    };
    let tail = match est {
        Estimator::Count => None,
        Estimator::Evt(o) => fit_query_tail(&q.top_scores[subset], sample_size, o),
    };
    let c_min = match est {
        Estimator::Count => 0,
        Estimator::Evt(o) => o.c_min,
    };
    let positives = q
        .positives
        .iter()
        .map(|p| {
            // Ties count as above (the positive sits at the end of its tie block).
            let k = p.pool_at_or_above(subset);
            let s = p.score as f64;
            let (x_hat, branch) = match &tail {
                Some(t) if k < c_min && s > t.u => t.x_hat(s, sample_size),
                _ => (count(k), Branch::Count),
            };
            PositiveHardness {
                id: p.id.clone(),
                score: p.score,
                core_above: p.core_at_or_above(),
                pool_above: k,
                x_hat,
                branch,
            }
        })
        .collect();
    QueryHardness {
        query_id: q.id.clone(),
        sample_size,
        tail,
        positives,
    }
}

/// Hardness of every query of `s` from subset `subset` (S = `s.subset_sizes[subset]`), in the
/// summary's query order. Errors when `subset` is out of range or a query's arrays do not have
/// one entry per subset, or a count exceeds S.
pub fn estimate_summary(s: &Summary, subset: usize, est: &Estimator) -> Result<Vec<QueryHardness>> {
    let n_sub = s.subsets.len();
    if subset >= n_sub || subset >= s.subset_sizes.len() {
        return Err(Error::option(format!(
            "summary has {n_sub} subsets, subset {subset} requested"
        )));
    }
    let size = s.subset_sizes[subset];
    for q in &s.queries {
        if q.top_scores.len() != n_sub {
            return Err(Error::input_msg(format!(
                "query {}: {} top-score lists for {n_sub} subsets",
                q.id,
                q.top_scores.len()
            )));
        }
        for p in &q.positives {
            if p.pool_above.len() != n_sub {
                return Err(Error::input_msg(format!(
                    "query {}, positive {}: {} counts for {n_sub} subsets",
                    q.id,
                    p.id,
                    p.pool_above.len()
                )));
            }
            if p.pool_above[subset] > size {
                return Err(Error::input_msg(format!(
                    "query {}, positive {}: count {} exceeds the subset size {size}",
                    q.id, p.id, p.pool_above[subset]
                )));
            }
        }
    }
    Ok(s.queries
        .par_iter()
        .map(|q| estimate_query(q, subset, size, est))
        .collect())
}

/// Metadata of a hardness artifact.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HardnessMeta {
    pub model: String,
    pub query_set: String,
    /// N of the full pool, when known.
    pub pool_size: Option<u64>,
    /// S of the subset the hardness was estimated from.
    pub sample_size: u64,
    /// Sampling fraction of that subset.
    pub fraction: f64,
    pub seed: u64,
    /// [`Estimator::label`].
    pub estimator: String,
    pub tool_version: String,
    /// The move of the estimate to the centre of the endpoint test's shrunk excess, when the
    /// prediction this hardness came from made one (it needs the nested levels, which a
    /// hardness file lacks); a prediction from the file re-applies it.
    #[serde(default)]
    pub excess_move: Option<ExcessMove>,
    /// The scales of hit@1 calibrated on the nested levels, when the prediction this hardness
    /// came from had levels to learn them on; a prediction from the file re-applies them.
    #[serde(default)]
    pub hit_scales: Option<HitScales>,
    /// The move of the estimate to the centre of the rare items above the top positive that
    /// the top-spacing test reads, when the prediction this hardness came from made one (it
    /// needs the sample's top lists); a prediction from the file re-applies it.
    #[serde(default)]
    pub spacing_move: Option<SpacingMove>,
}

/// The scales of hit@1 calibrated on the nested levels (docs/method.md §7, "hit@1 calibrated
/// on the levels"): a level-0 top positive in the tail branch keeps no pool item above it at
/// N with probability `(1 − tail·x̂)^(N−S)`, an immune one with the endpoint law's rates
/// times `immune`. `tail = 1`, `immune = 0` are the count law's own readings.
/// Invariants: `tail > 0` and finite, `0 ≤ immune ≤ 1`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct HitScales {
    pub tail: f64,
    pub immune: f64,
}

/// The centre of the excess as a hardness file carries it (docs/method.md §9): every level-0
/// immune positive's count law at `rate` (`r_γ`, per unsampled pool item, at the pool size
/// `pool_size`) is one end of the move, the hardness as written the other; `weight`
/// (`w = 1 − 1/z²`) is for the report, and `decay` (the survivor decay `γ̂` behind the rate)
/// carries the rate to other pool sizes ([`ExcessMove::rate_at`]).
/// Invariants: `rate > 0` and finite, `0 < weight ≤ 1`, `decay ≥ 0` and finite, `pool_size`
/// given when `decay > 0`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct ExcessMove {
    pub rate: f64,
    pub weight: f64,
    #[serde(default)]
    pub decay: f64,
    /// The N `rate` is for (None: a constant rate, `decay = 0`, which holds at every N).
    #[serde(default)]
    pub pool_size: Option<u64>,
}

impl ExcessMove {
    /// The rate of the same decayed hazard at pool size `n` from the sample `s0`
    /// (`numerics::hazard::rate_between`); `rate` itself when the decay is 0 or the
    /// pool size unknown.
    pub fn rate_at(&self, n: f64, s0: f64) -> f64 {
        match self.pool_size {
            Some(at) if self.decay > 0.0 && at as f64 != n => {
                crate::numerics::hazard::rate_between(self.rate, at as f64, n, s0, self.decay)
            }
            _ => self.rate,
        }
    }
}

/// The centre of the rare items above the top positive as a hardness file carries it
/// (docs/method.md §9): the hardness with `rate` (`r_a`, per unsampled pool item) added to
/// every positive is one end of the move, the hardness as written the other, and the estimate
/// moves `weight/2` of the way (`weight` = `w_move(z)` of the top-spacing test's z).
/// Invariants: `rate > 0` and finite, `0 < weight ≤ 1`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct SpacingMove {
    pub rate: f64,
    pub weight: f64,
}

impl HardnessMeta {
    /// Metadata for hardness estimated from `subset` of `s` with `est`.
    pub fn from_summary(s: &Summary, subset: usize, est: &Estimator) -> HardnessMeta {
        HardnessMeta {
            model: s.model.clone(),
            query_set: s.query_set.clone(),
            pool_size: s.pool_size,
            sample_size: s.subset_sizes.get(subset).copied().unwrap_or(0),
            fraction: s.subsets.get(subset).map_or(s.fraction, |x| x.fraction),
            seed: s.seed,
            estimator: est.label(),
            tool_version: crate::TOOL_VERSION.to_string(),
            excess_move: None,
            hit_scales: None,
            spacing_move: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::finite_and_descending;

    #[test]
    fn finite_and_descending_sees_every_pair_across_chunk_edges() {
        for n in [0usize, 1, 2, 255, 256, 257, 600] {
            let x: Vec<f32> = (0..n).map(|i| -(i as f32)).collect();
            assert_eq!(finite_and_descending(&x), (true, true), "n={n}");
            for at in [1, 255, 256, 257, 511, 512].into_iter().filter(|&i| i < n) {
                let mut y = x.clone();
                y.swap(at - 1, at);
                assert_eq!(
                    finite_and_descending(&y),
                    (true, false),
                    "n={n} swap at {at}"
                );
                let mut z = x.clone();
                z[at] = f32::NAN;
                assert!(!finite_and_descending(&z).0, "n={n} NaN at {at}");
                z[at] = f32::INFINITY;
                assert!(!finite_and_descending(&z).0, "n={n} inf at {at}");
            }
        }
        assert_eq!(finite_and_descending(&[0.5, 0.5, 0.5]), (true, true));
    }
}
