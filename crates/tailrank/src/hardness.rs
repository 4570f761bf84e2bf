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
//! The hardness artifact ([`write_hardness_csv`] / [`read_hardness_csv`], `docs/hardness.md`)
//! is a CSV with one row per positive and `# key: value` metadata lines before the header.
// `!(x > 0.0)` is meant: it is also true for NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::atomic;
use crate::error::{Error, IoContext, Result};
use crate::evt::{fit_gpd_bounded, Gpd, GpdFit};
use crate::summary::{QuerySummary, Summary};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

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
    /// M: number of top sample scores the tail is fitted on.
    pub top_m: usize,
    /// Threshold quantile of the top-M scores (numpy linear interpolation).
    pub quantile: f64,
    /// Counts at or above `c_min` are trusted as they are.
    pub c_min: u64,
}

impl EvtOptions {
    /// The defaults, stated once (the CLI and Python signatures read them from here):
    /// M = 4000, quantile 0.95, c_min = 5.
    pub const DEFAULT: EvtOptions = EvtOptions {
        top_m: 4000,
        quantile: 0.95,
        c_min: 5,
    };
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

impl QueryHardness {
    /// The counts of the sample gallery the hardness came from, for the counts path
    /// (`pool_above` = K_j + T^K_j and `core_above` = C_j + T^C_j: items at or above `s_j`, so
    /// the ties are already in and `ties` is 0).
    pub fn sample_counts(&self) -> Vec<crate::metric::PositiveCounts> {
        self.positives
            .iter()
            .map(|p| crate::metric::PositiveCounts {
                score: p.score,
                core_above: p.core_above,
                pool_above: p.pool_above,
                ties: 0,
            })
            .collect()
    }
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
            other => Err(Error::invalid(format!(
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
    /// subset of the keys, the rest default). None when malformed.
    pub fn parse_label(s: &str) -> Option<Estimator> {
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
    quantile_sorted(v.len(), |i| v[i], q)
}

/// numpy linear quantile of `n` ascending values given by `at(i)`.
fn quantile_sorted(n: usize, at: impl Fn(usize) -> f64, q: f64) -> f64 {
    let q = q.clamp(0.0, 1.0);
    let h = (n - 1) as f64 * q;
    let lo = (h.floor() as usize).min(n - 1);
    let hi = (lo + 1).min(n - 1);
    let gamma = h - lo as f64;
    let (a, b) = (at(lo), at(hi));
    let d = b - a;
    if gamma >= 0.5 {
        b - d * (1.0 - gamma)
    } else {
        a + d * gamma
    }
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
    if top_scores.iter().any(|t| !t.is_finite()) {
        return None;
    }
    let sorted;
    let all: &[f32] = if top_scores.windows(2).all(|w| w[0] >= w[1]) {
        top_scores
    } else {
        let mut v = top_scores.to_vec();
        v.sort_by(|a, b| b.total_cmp(a));
        sorted = v;
        &sorted
    };
    let t = &all[..opts.top_m.min(all.len())];
    let m = t.len();
    let u = quantile_sorted(m, |i| t[m - 1 - i] as f64, opts.quantile);
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
        return Err(Error::invalid(format!(
            "summary has {n_sub} subsets, subset {subset} requested"
        )));
    }
    let size = s.subset_sizes[subset];
    for q in &s.queries {
        if q.top_scores.len() != n_sub {
            return Err(Error::invalid(format!(
                "query {}: {} top-score lists for {n_sub} subsets",
                q.id,
                q.top_scores.len()
            )));
        }
        for p in &q.positives {
            if p.pool_above.len() != n_sub {
                return Err(Error::invalid(format!(
                    "query {}, positive {}: {} counts for {n_sub} subsets",
                    q.id,
                    p.id,
                    p.pool_above.len()
                )));
            }
            if p.pool_above[subset] > size {
                return Err(Error::invalid(format!(
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
        }
    }
}

/// Version of the hardness CSV layout; readers refuse newer ones.
pub const HARDNESS_FORMAT_VERSION: u32 = 1;

/// Columns of the hardness CSV, in the order written. All but `tail_log_likelihood` are
/// required when reading.
pub const HARDNESS_COLUMNS: [&str; 14] = [
    "query_id",
    "positive_id",
    "j",
    "score",
    "core_above",
    "pool_above",
    "sample_size",
    "x_hat",
    "branch",
    "tail_u",
    "tail_sigma",
    "tail_xi",
    "tail_n_u",
    "tail_log_likelihood",
];

fn csv_field(s: &str) -> String {
    let needs = s.contains([',', '"'])
        || s.starts_with('#')
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace);
    if needs {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn split_csv(line: &str) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    quoted = false;
                    match chars.peek() {
                        None | Some(',') => {}
                        Some(_) => return Err("text after a closing quote".into()),
                    }
                }
            } else {
                cur.push(c);
            }
        } else if c == ',' {
            out.push(std::mem::take(&mut cur));
            at_start = true;
            continue;
        } else if c == '"' && at_start {
            quoted = true;
        } else {
            cur.push(c);
        }
        at_start = false;
    }
    if quoted {
        return Err("unterminated quote".into());
    }
    out.push(cur);
    Ok(out)
}

fn check_text(path: &Path, what: &str, s: &str) -> Result<()> {
    if s.contains(['\n', '\r']) {
        return Err(Error::file(
            path,
            format!("{what} {s:?} contains a line break, which the hardness CSV cannot hold"),
        ));
    }
    Ok(())
}

/// Write the hardness artifact (atomically): `# key: value` metadata lines (`format`,
/// `format_version`, `model`, `query_set`, `pool_size` (`unknown` when None), `sample_size`,
/// `fraction`, `seed`, `estimator`, `tool_version`), then a header with
/// [`HARDNESS_COLUMNS`] and one row per positive (`j` 1-based, in score order). The tail
/// columns repeat the query's tail on every row and are empty when the query has none. A query
/// without positives gets one row with `j = 0` and empty positive columns. Floats are written
/// in shortest round-trip form, so reading gives back the same numbers.
pub fn write_hardness_csv(path: &Path, meta: &HardnessMeta, qs: &[QueryHardness]) -> Result<()> {
    for (k, v) in [
        ("model", &meta.model),
        ("query_set", &meta.query_set),
        ("estimator", &meta.estimator),
        ("tool_version", &meta.tool_version),
    ] {
        check_text(path, k, v)?;
    }
    for q in qs {
        check_text(path, "query id", &q.query_id)?;
        for p in &q.positives {
            check_text(path, "positive id", &p.id)?;
        }
    }
    atomic::write_file(path, |out| {
        let mut hashing = ChecksumWriter {
            inner: out,
            hash: xxhash_rust::xxh3::Xxh3::new(),
        };
        let w: &mut dyn std::io::Write = &mut hashing;
        let mut head = String::new();
        head.push_str("# format: tailrank-hardness\n");
        head.push_str(&format!("# format_version: {HARDNESS_FORMAT_VERSION}\n"));
        head.push_str(&format!("# model: {}\n", meta.model));
        head.push_str(&format!("# query_set: {}\n", meta.query_set));
        match meta.pool_size {
            Some(n) => head.push_str(&format!("# pool_size: {n}\n")),
            None => head.push_str("# pool_size: unknown\n"),
        }
        head.push_str(&format!("# sample_size: {}\n", meta.sample_size));
        head.push_str(&format!("# fraction: {}\n", meta.fraction));
        head.push_str(&format!("# seed: {}\n", meta.seed));
        head.push_str(&format!("# estimator: {}\n", meta.estimator));
        head.push_str(&format!("# tool_version: {}\n", meta.tool_version));
        head.push_str(&HARDNESS_COLUMNS.join(","));
        head.push('\n');
        w.write_all(head.as_bytes()).at(path)?;
        for q in qs {
            let qid = csv_field(&q.query_id);
            let tail = match &q.tail {
                Some(t) => format!(
                    "{},{},{},{},{}",
                    t.u, t.fit.gpd.sigma, t.fit.gpd.xi, t.n_u, t.fit.log_likelihood
                ),
                None => ",,,,".to_string(),
            };
            if q.positives.is_empty() {
                writeln!(w, "{qid},,0,,,,{},,,{tail}", q.sample_size).at(path)?;
            }
            for (i, p) in q.positives.iter().enumerate() {
                writeln!(
                    w,
                    "{qid},{},{},{},{},{},{},{},{},{tail}",
                    csv_field(&p.id),
                    i + 1,
                    p.score,
                    p.core_above,
                    p.pool_above,
                    q.sample_size,
                    p.x_hat,
                    p.branch.as_str()
                )
                .at(path)?;
            }
        }
        let line = format!("{CHECKSUM_PREFIX}xxh3:{:016x}\n", hashing.hash.digest());
        hashing.inner.write_all(line.as_bytes()).at(path)
    })
}

/// Prefix of the last line of a hardness artifact: `# checksum: xxh3:<16 hex digits>`, the
/// xxh3-64 (seed 0) of every byte before that line. Written by [`write_hardness_csv`]; required
/// and checked by [`read_hardness_csv`], so that a file cut short (even at a line boundary) is
/// refused. A file from another tool may end with [`CHECKSUM_NONE`] instead, to be read
/// unchecked.
pub const CHECKSUM_PREFIX: &str = "# checksum: ";

/// Last line of a hardness artifact whose writer computed no checksum (read unchecked).
pub const CHECKSUM_NONE: &str = "# checksum: none";

/// A writer that hashes what it forwards (for the checksum line).
struct ChecksumWriter<'a> {
    inner: &'a mut dyn std::io::Write,
    hash: xxhash_rust::xxh3::Xxh3,
}

impl std::io::Write for ChecksumWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Byte offset where the last line of `text` starts.
fn checksum_body_end(text: &str) -> usize {
    text.trim_end_matches(['\n', '\r'])
        .rfind('\n')
        .map_or(0, |i| i + 1)
}

/// Verify the trailing checksum line of `text` (required: a file cut short lacks it); returns
/// the text before it.
fn verify_checksum<'t>(path: &Path, text: &'t str) -> Result<&'t str> {
    let body_end = checksum_body_end(text);
    let last = text[body_end..].trim_end();
    let Some(rest) = last.strip_prefix(CHECKSUM_PREFIX.trim_end()) else {
        return Err(Error::file(
            path,
            format!(
                "no checksum line at the end: the file is cut short (truncated, possibly at a \
                 line boundary) or was written without one; tailrank ends every hardness file \
                 with `{CHECKSUM_PREFIX}xxh3:…` (a file from another tool may end with \
                 `{CHECKSUM_NONE}` to be read unchecked)"
            ),
        ));
    };
    let body = &text[..body_end];
    if rest.trim() == "none" {
        return Ok(body);
    }
    let actual = format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(body.as_bytes()));
    if rest.trim() != actual {
        return Err(Error::file(
            path,
            format!(
                "checksum mismatch: the last line records {}, the content hashes to {actual} \
                 (the file is corrupted or was edited; remove the checksum line to accept \
                 deliberate edits)",
                rest.trim()
            ),
        ));
    }
    Ok(body)
}

/// Read a hardness artifact written by [`write_hardness_csv`] (or by another tool following
/// `docs/hardness.md`). Errors name the file and the line: missing metadata keys or columns
/// (all named), malformed numbers, unknown branches, positives out of order (`j` must run
/// 1, 2, … within a query), a query split into separate blocks, tail columns that are partly
/// empty or differ between rows of one query, a newer format version. Extra columns are
/// ignored. When `tail_log_likelihood` is absent the fits' log-likelihood reads as NaN.
///
/// The trailing `# checksum:` line is required (a file without it, e.g. one cut short at a line
/// boundary, is refused; [`CHECKSUM_NONE`] opts out) and verified after parsing: a file that
/// parses but whose content does not match its checksum is refused (structural errors are
/// reported first, as they are more specific).
pub fn read_hardness_csv(path: &Path) -> Result<(HardnessMeta, Vec<QueryHardness>)> {
    crate::atomic::check_settled(path)?;
    let raw = std::fs::read_to_string(path).at(path)?;
    let (body, checked) = match verify_checksum(path, &raw) {
        Ok(body) => (body, Ok(())),
        // No checksum line: parse everything (a cut row is reported as such).
        Err(e) if !raw[checksum_body_end(&raw)..].starts_with(CHECKSUM_PREFIX.trim_end()) => {
            (raw.as_str(), Err(e))
        }
        Err(e) => (&raw[..checksum_body_end(&raw)], Err(e)),
    };
    let parsed = parse_hardness_text(path, body)?;
    checked?;
    Ok(parsed)
}

/// Parse the text of a hardness artifact (without its checksum line).
fn parse_hardness_text(path: &Path, text: &str) -> Result<(HardnessMeta, Vec<QueryHardness>)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut meta_kv: Vec<(String, String, usize)> = Vec::new();
    let mut header: Option<Vec<String>> = None;
    let mut col = std::collections::HashMap::new();
    let mut qs: Vec<QueryHardness> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut tail_of_last: Option<Vec<String>> = None;
    for (ln0, raw) in text.lines().enumerate() {
        let ln = ln0 + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if header.is_none() {
                if let Some((k, v)) = c.split_once(':') {
                    meta_kv.push((k.trim().to_string(), v.trim().to_string(), ln));
                }
            }
            continue;
        }
        let fields = split_csv(line).map_err(|e| Error::file(path, format!("line {ln}: {e}")))?;
        let Some(hdr) = &header else {
            let names: Vec<String> = fields.iter().map(|f| f.trim().to_string()).collect();
            let missing: Vec<&str> = HARDNESS_COLUMNS[..13]
                .iter()
                .copied()
                .filter(|c| !names.iter().any(|n| n == c))
                .collect();
            if !missing.is_empty() {
                return Err(Error::file(
                    path,
                    format!(
                        "line {ln}: header lacks the column(s) {}",
                        missing.join(", ")
                    ),
                ));
            }
            for (i, n) in names.iter().enumerate() {
                col.entry(n.clone()).or_insert(i);
            }
            header = Some(names);
            continue;
        };
        if fields.len() != hdr.len() {
            return Err(Error::file(
                path,
                format!(
                    "line {ln}: {} fields, the header has {}",
                    fields.len(),
                    hdr.len()
                ),
            ));
        }
        let get = |name: &str| -> Option<&str> { col.get(name).map(|&i| fields[i].as_str()) };
        let field = |name: &str| get(name).unwrap_or("");
        fn num<T: std::str::FromStr + Expected>(
            path: &Path,
            ln: usize,
            name: &str,
            v: &str,
        ) -> Result<T> {
            v.trim().parse::<T>().map_err(|_| {
                Error::file(
                    path,
                    format!("line {ln}: column {name}: {v:?} is not {}", T::WHAT),
                )
            })
        }
        let finite = |name: &str, v: f64| -> Result<f64> {
            if v.is_finite() {
                Ok(v)
            } else {
                Err(Error::file(
                    path,
                    format!("line {ln}: column {name}: {v} is not finite"),
                ))
            }
        };
        let qid = field("query_id").to_string();
        let j: usize = num(path, ln, "j", field("j"))?;
        let sample_size: u64 = num(path, ln, "sample_size", field("sample_size"))?;
        let tail_cols = [
            "tail_u",
            "tail_sigma",
            "tail_xi",
            "tail_n_u",
            "tail_log_likelihood",
        ];
        let tail_vals: Vec<String> = tail_cols
            .iter()
            .map(|c| field(c).trim().to_string())
            .collect();
        let new_query = qs.last().is_none_or(|q| q.query_id != qid);
        if new_query {
            if !seen.insert(qid.clone()) {
                return Err(Error::file(
                    path,
                    format!("line {ln}: query {qid} appears in two separate blocks of rows"),
                ));
            }
            let present = tail_vals[..4].iter().filter(|v| !v.is_empty()).count();
            let tail = match present {
                0 => None,
                4 => {
                    let u = finite("tail_u", num(path, ln, "tail_u", &tail_vals[0])?)?;
                    let sigma = finite("tail_sigma", num(path, ln, "tail_sigma", &tail_vals[1])?)?;
                    let xi = finite("tail_xi", num(path, ln, "tail_xi", &tail_vals[2])?)?;
                    let n_u: usize = num(path, ln, "tail_n_u", &tail_vals[3])?;
                    if !(sigma > 0.0) {
                        return Err(Error::file(
                            path,
                            format!("line {ln}: column tail_sigma: {sigma} is not positive"),
                        ));
                    }
                    let ll = if tail_vals[4].is_empty() {
                        f64::NAN
                    } else {
                        num(path, ln, "tail_log_likelihood", &tail_vals[4])?
                    };
                    Some(QueryTail {
                        u,
                        n_u,
                        fit: GpdFit {
                            gpd: Gpd { sigma, xi },
                            log_likelihood: ll,
                            n: n_u,
                        },
                    })
                }
                _ => {
                    return Err(Error::file(
                        path,
                        format!(
                            "line {ln}: tail columns are partly empty (query {qid}): give all \
                             of tail_u, tail_sigma, tail_xi, tail_n_u or none"
                        ),
                    ))
                }
            };
            qs.push(QueryHardness {
                query_id: qid.clone(),
                sample_size,
                tail,
                positives: Vec::new(),
            });
            tail_of_last = Some(tail_vals);
        } else {
            let q = qs.last().expect("non-empty");
            if q.sample_size != sample_size || tail_of_last.as_ref() != Some(&tail_vals) {
                return Err(Error::file(
                    path,
                    format!(
                        "line {ln}: sample_size or tail columns differ from the query's \
                         first row (query {qid})"
                    ),
                ));
            }
        }
        let q = qs.last_mut().expect("non-empty");
        if j == 0 {
            if !new_query {
                return Err(Error::file(
                    path,
                    format!("line {ln}: j = 0 (no positives) but query {qid} has other rows"),
                ));
            }
            // A query without positives: nothing else on this row.
            seen.insert(format!("\u{0}{qid}"));
            continue;
        }
        if seen.contains(&format!("\u{0}{qid}")) {
            return Err(Error::file(
                path,
                format!("line {ln}: query {qid} was declared without positives (j = 0)"),
            ));
        }
        if j != q.positives.len() + 1 {
            return Err(Error::file(
                path,
                format!(
                    "line {ln}: query {qid}: j = {j}, expected {} (rows must list positives \
                     in order j = 1, 2, ...)",
                    q.positives.len() + 1
                ),
            ));
        }
        let score: f32 = num(path, ln, "score", field("score"))?;
        finite("score", score as f64)?;
        let core_above: u64 = num(path, ln, "core_above", field("core_above"))?;
        let pool_above: u64 = num(path, ln, "pool_above", field("pool_above"))?;
        let x_hat: f64 = num(path, ln, "x_hat", field("x_hat"))?;
        if !(0.0..=1.0).contains(&x_hat) {
            return Err(Error::file(
                path,
                format!("line {ln}: column x_hat: {x_hat} is not a fraction in [0, 1]"),
            ));
        }
        let b = field("branch").trim();
        let branch = Branch::parse(b).ok_or_else(|| {
            Error::file(
                path,
                format!("line {ln}: unknown branch {b:?} (expected count, tail or immune)"),
            )
        })?;
        q.positives.push(PositiveHardness {
            id: field("positive_id").to_string(),
            score,
            core_above,
            pool_above,
            x_hat,
            branch,
        });
    }
    if header.is_none() {
        return Err(Error::file(
            path,
            "no header line (query_id,positive_id,...)",
        ));
    }
    let meta_get = |k: &str| meta_kv.iter().rev().find(|(key, _, _)| key == k);
    let required = [
        "model",
        "query_set",
        "sample_size",
        "fraction",
        "seed",
        "estimator",
        "tool_version",
    ];
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|k| meta_get(k).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(Error::file(
            path,
            format!(
                "metadata lacks the key(s) {} (lines '# key: value' before the header)",
                missing.join(", ")
            ),
        ));
    }
    let meta_num = |k: &str| -> Result<String> {
        let (_, v, _) = meta_get(k).expect("checked");
        Ok(v.clone())
    };
    let parse_meta = |k: &str| -> Result<(String, usize)> {
        let (_, v, ln) = meta_get(k).expect("checked");
        Ok((v.clone(), *ln))
    };
    if let Some((_, v, ln)) = meta_get("format_version") {
        let ver: u32 = v.parse().map_err(|_| {
            Error::file(
                path,
                format!("line {ln}: format_version {v:?} is not a number"),
            )
        })?;
        if ver > HARDNESS_FORMAT_VERSION {
            return Err(Error::file(
                path,
                format!(
                    "line {ln}: format_version {ver} is newer than this tool reads \
                     ({HARDNESS_FORMAT_VERSION})"
                ),
            ));
        }
    }
    let bad = |k: &str, v: &str, ln: usize, what: &str| {
        Error::file(
            path,
            format!("line {ln}: metadata {k}: {v:?} is not {what}"),
        )
    };
    let (v, ln) = parse_meta("sample_size")?;
    let sample_size: u64 = v
        .parse()
        .map_err(|_| bad("sample_size", &v, ln, u64::WHAT))?;
    let (v, ln) = parse_meta("fraction")?;
    let fraction: f64 = v.parse().map_err(|_| bad("fraction", &v, ln, f64::WHAT))?;
    let (v, ln) = parse_meta("seed")?;
    let seed: u64 = v.parse().map_err(|_| bad("seed", &v, ln, u64::WHAT))?;
    let pool_size = match meta_get("pool_size") {
        None => None,
        Some((_, v, _)) if v.is_empty() || v == "unknown" => None,
        Some((_, v, ln)) => Some(
            v.parse::<u64>()
                .map_err(|_| bad("pool_size", v, *ln, u64::WHAT))?,
        ),
    };
    let meta = HardnessMeta {
        model: meta_num("model")?,
        query_set: meta_num("query_set")?,
        pool_size,
        sample_size,
        fraction,
        seed,
        estimator: meta_num("estimator")?,
        tool_version: meta_num("tool_version")?,
    };
    Ok((meta, qs))
}

/// What a numeric field of the hardness CSV must hold, said in its parse errors (a count
/// given as `-1` is "not a non-negative integer", not merely "not a valid number").
trait Expected {
    const WHAT: &'static str;
}

impl Expected for u64 {
    const WHAT: &'static str = "a non-negative integer";
}

impl Expected for usize {
    const WHAT: &'static str = "a non-negative integer";
}

impl Expected for f64 {
    const WHAT: &'static str = "a number";
}

impl Expected for f32 {
    const WHAT: &'static str = "a number";
}
