//! `tailrank._native`: the PyO3 layer under the Python package `tailrank`.
//!
//! Thin by design: every computation is the library's (`scan::request::ScanRequest`,
//! `scan::engine::scan`, `Summary::{read, write, merge}`, `predict::predict`,
//! `report::prediction_json`, `metric::evaluate_results`, `protocols::evaluate_revisited`,
//! `sample::id_hash`), so Python
//! results equal the CLI's. The
//! Python side (`python/tailrank/__init__.py`) turns numpy arrays into the plain inputs taken
//! here (ids + little-endian f32 bytes) and wraps the outputs. Scans, predictions and
//! evaluations run with the GIL released (`py.allow_threads`).

mod error;
mod interrupt;
mod source;

use error::{err, input_err, internal_err, kind_err, option_err};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use source::source;
use std::path::PathBuf;
use tailrank::formats::descriptors::DescriptorSource;
use tailrank::formats::gt::{load_ground_truth, QuerySet};
use tailrank::formats::results::{read_results, QueryResults, Results};
use tailrank::hardness::{Branch, Estimator, EvtOptions};
use tailrank::maps::MapKind;
use tailrank::metric::{evaluate_results_for, select_sets, EvalOptions, MetricName, MissingPolicy};
use tailrank::predict::PredictOptions;
use tailrank::protocols::{evaluate_revisited, read_revisited_gt, Protocol};
use tailrank::metric::DEFAULT_K;
use tailrank::sample::DEFAULT_SEED;
use tailrank::scan::config::{ScanOptions, DEFAULT_FRACTION};
use tailrank::scan::engine::{scan, DEFAULT_DRIFT_SHARDS, DEFAULT_TOP_M};
use tailrank::scan::request::{listed_seed_note, sample_rows_note, ScanRequest};
use tailrank::summary::Summary;

/// The scan request of a ground truth from Python: a path (with an optional query-set name, as
/// in the CLI) or `(name, query_ids, positives)`.
fn scan_request(
    gt: &Bound<'_, PyAny>,
    query_set: Option<&str>,
    pool_size: Option<u64>,
) -> PyResult<ScanRequest> {
    if let Ok((name, qids, pos)) = gt.extract::<(String, Vec<String>, Vec<Vec<String>>)>() {
        let qs = QuerySet::new("<ground truth dict>", name, qids, pos).map_err(err)?;
        return Ok(ScanRequest::from_query_set(qs, "<dict>".into(), pool_size));
    }
    let path: PathBuf = gt.extract()?;
    ScanRequest::from_ground_truth(&path, query_set, pool_size).map_err(err)
}

/// A scan summary (`docs/reference/summary-format.md`).
#[pyclass(module = "tailrank._native", frozen)]
pub struct NativeSummary {
    inner: Summary,
}

#[pymethods]
impl NativeSummary {
    /// Read a summary folder.
    #[staticmethod]
    fn read(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let (inner, mut notes) = py
            .allow_threads(|| Summary::read_with_warnings(&path))
            .map_err(err)?;
        notes.extend(inner.ties_unknown_warning());
        let shown: Vec<String> = notes
            .into_iter()
            .map(|n| format!("{}: {n}", path.display()))
            .collect();
        warn_all(py, "tailrank.load_summary", &shown)?;
        Ok(NativeSummary { inner })
    }

    /// Write the summary folder (replaced atomically if it exists).
    fn write(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.allow_threads(|| self.inner.write(&path)).map_err(err)
    }

    /// Merge summaries of disjoint pool shards, in order (`Summary::merge`).
    #[staticmethod]
    fn merge(py: Python<'_>, parts: Vec<PyRef<'_, NativeSummary>>) -> PyResult<Self> {
        let owned: Vec<Summary> = parts.iter().map(|p| p.inner.clone()).collect();
        let (inner, notes) = py
            .allow_threads(|| Summary::merge_with_warnings(&owned))
            .map_err(err)?;
        warn_all(py, "tailrank merge", &notes)?;
        Ok(NativeSummary { inner })
    }

    /// Grow the summary `base` of a sample by `part`, the summary of its increment
    /// (`Summary::grow`).
    #[staticmethod]
    fn grow(
        py: Python<'_>,
        base: PyRef<'_, NativeSummary>,
        part: PyRef<'_, NativeSummary>,
    ) -> PyResult<Self> {
        let (b, p) = (&base.inner, &part.inner);
        let (inner, notes) = py
            .allow_threads(|| Summary::grow_with_warnings(b, p))
            .map_err(err)?;
        warn_all(py, "tailrank grow", &notes)?;
        Ok(NativeSummary { inner })
    }

    /// Compact exact binary form (bincode of every field; f32 scores bitwise), used to pickle
    /// summaries between processes (Ray). Not a file format: use `write` for files.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let v = py
            .allow_threads(|| bincode::serialize(&self.inner))
            .map_err(internal_err)?;
        Ok(PyBytes::new(py, &v))
    }

    /// Inverse of `to_bytes` (same library version); the summary is validated.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<Self> {
        let b = data.as_bytes();
        let inner: Summary = py
            .allow_threads(|| bincode::deserialize(b))
            .map_err(|e| input_err(format!("summary bytes: {e}")))?;
        inner.validate().map_err(err)?;
        Ok(NativeSummary { inner })
    }

    /// Every field except the per-query data, as JSON text. The per-query data (top-M scores:
    /// megabytes) is left out before serialising, not after: this runs for every summary made.
    fn meta_json(&self) -> PyResult<String> {
        // Exhaustive, so that a new field cannot be forgotten here.
        let Summary {
            format_version,
            tool_version,
            model,
            query_set,
            pool_size,
            fraction,
            seed,
            top_m,
            core_size,
            subsets,
            subset_sizes,
            queries: _,
            inputs,
            pool_id_hashes: _,
            ties_known,
        } = &self.inner;
        let head = Summary {
            format_version: *format_version,
            tool_version: tool_version.clone(),
            model: model.clone(),
            query_set: query_set.clone(),
            pool_size: *pool_size,
            fraction: *fraction,
            seed: *seed,
            top_m: *top_m,
            core_size: *core_size,
            subsets: subsets.clone(),
            subset_sizes: subset_sizes.clone(),
            queries: Vec::new(),
            inputs: inputs.clone(),
            pool_id_hashes: None,
            ties_known: *ties_known,
        };
        let mut v = serde_json::to_value(&head).map_err(internal_err)?;
        if let Some(o) = v.as_object_mut() {
            o.remove("queries");
            o.remove("pool_id_hashes");
        }
        serde_json::to_string(&v).map_err(internal_err)
    }

    fn n_queries(&self) -> usize {
        self.inner.queries.len()
    }

    /// `Summary::is_exact`: f = 1 and S_0 = N (one shard of an exact scan is not exact).
    fn is_exact(&self) -> bool {
        self.inner.is_exact()
    }

    /// Query ids, in order.
    fn query_ids(&self) -> Vec<String> {
        self.inner.queries.iter().map(|q| q.id.clone()).collect()
    }

    /// Query `i`: `(id, positive_ids, scores f32, core_above, pool_above per positive and
    /// subset, top scores per subset)`.
    #[allow(clippy::type_complexity)]
    fn query(
        &self,
        i: usize,
    ) -> PyResult<(
        String,
        Vec<String>,
        Vec<f32>,
        Vec<u64>,
        Vec<Vec<u64>>,
        Vec<Vec<f32>>,
    )> {
        let q = self
            .inner
            .queries
            .get(i)
            .ok_or_else(|| option_err(format!("query index {i} out of range")))?;
        Ok((
            q.id.clone(),
            q.positives.iter().map(|p| p.id.clone()).collect(),
            q.positives.iter().map(|p| p.score).collect(),
            q.positives.iter().map(|p| p.core_above).collect(),
            q.positives.iter().map(|p| p.pool_above.clone()).collect(),
            q.top_scores.clone(),
        ))
    }

    fn __eq__(&self, other: PyRef<'_, NativeSummary>) -> bool {
        self.inner == other.inner
    }
}

/// Scan queries and core against pool sources into a summary (the CLI's `tailrank scan`).
#[pyfunction]
#[pyo3(signature = (queries, core, pool, gt, query_set=None, fraction=DEFAULT_FRACTION, seed=DEFAULT_SEED,
    after=None, min_fraction=None, pool_size=None, top_m=DEFAULT_TOP_M, drift_shards=DEFAULT_DRIFT_SHARDS,
    model=String::new(),
    threads=None, normalize=false, warn_empty=true))]
#[allow(clippy::too_many_arguments)]
fn scan_native(
    py: Python<'_>,
    queries: &Bound<'_, PyDict>,
    core: &Bound<'_, PyDict>,
    pool: &Bound<'_, PyList>,
    gt: &Bound<'_, PyAny>,
    query_set: Option<String>,
    fraction: f64,
    seed: u64,
    after: Option<f64>,
    min_fraction: Option<f64>,
    pool_size: Option<u64>,
    top_m: usize,
    drift_shards: usize,
    model: String,
    threads: Option<usize>,
    normalize: bool,
    warn_empty: bool,
) -> PyResult<NativeSummary> {
    let mut cfg = ScanOptions {
        fraction,
        seed,
        after,
        min_fraction,
        top_m,
        drift_shards,
        threads,
        normalize,
        model,
        ..ScanOptions::default()
    }
    .config(|k| std::env::var(k).ok())
    .map_err(err)?;
    if pool.is_empty() {
        return Err(option_err("no pool source given"));
    }
    let request = scan_request(gt, query_set.as_deref(), pool_size)?;
    let q = source(queries)?;
    let c = source(core)?;
    let p: Vec<Box<dyn DescriptorSource>> = pool
        .iter()
        .map(|x| source(x.downcast::<PyDict>()?))
        .collect::<PyResult<_>>()?;
    let pool_rows: u64 = p.iter().map(|s| s.rows() as u64).sum();
    cfg.pool_size = request.pool_size_for(&cfg, pool_rows).map_err(err)?;
    let scanned = interrupt::interruptible(py, |cancel| {
        let inputs = request.inputs(
            q.as_ref(),
            c.as_ref(),
            p.iter().map(|s| s.as_ref()).collect(),
        );
        let out = scan(&inputs, &cfg, cancel)?;
        let mut notes = request.notes.clone();
        notes.extend(out.notes());
        let summary = request.finish(out)?.summary;
        // A part of a scan (an iterator's chunk, a Ray task) leaves it to the whole scan.
        if warn_empty {
            notes.extend(sample_rows_note(pool_rows, &summary));
            let sources: Vec<&dyn DescriptorSource> = p.iter().map(|s| s.as_ref()).collect();
            let seed_note = listed_seed_note(&sources, &summary)?;
            notes.extend(seed_note.map(|n| format!("warning: {n}")));
        }
        tailrank::Result::Ok((summary, notes))
    })?;
    let (summary, notes) = scanned.map_err(err)?;
    // What the CLI prints after a scan (rows normalised, pilot blocks scanned twice, an empty
    // sample), as Python warnings.
    warn_all(py, "tailrank.scan", &notes)?;
    Ok(NativeSummary { inner: summary })
}

/// The empty-sample warning of a scan that read `pool_rows` pool rows into `summary`
/// (`scan::request::sample_rows_note`), for the merge of a scan's parts.
#[pyfunction]
fn scan_rows_note(summary: PyRef<'_, NativeSummary>, pool_rows: u64) -> Option<String> {
    sample_rows_note(pool_rows, &summary.inner)
}

/// Each note as a Python `UserWarning` "`what`: note" (what the CLI prints as a warning).
fn warn_all(py: Python<'_>, what: &str, notes: &[String]) -> PyResult<()> {
    if notes.is_empty() {
        return Ok(());
    }
    let warnings = py.import("warnings")?;
    for note in notes {
        warnings.call_method1("warn", (format!("{what}: {note}"),))?;
    }
    Ok(())
}

/// Hardness columns, one entry per positive (query order, positives by score descending).
type Columns = Vec<(&'static str, Py<PyAny>)>;

/// Predict mAP@k at N from a summary: `(report JSON text, hardness columns)`. The JSON is
/// `report::prediction_json`, what `tailrank predict --json` prints.
#[pyfunction]
#[pyo3(signature = (summary, pool_size=None, k=PredictOptions::DEFAULT.k,
    estimator=Estimator::DEFAULT_NAME, map=MapKind::DEFAULT_NAME,
    bootstrap=PredictOptions::DEFAULT.bootstrap, sample_noise=PredictOptions::DEFAULT.sample_noise,
    confidence=PredictOptions::DEFAULT.confidence, seed=PredictOptions::DEFAULT.seed,
    fit_top=None, quantile=EvtOptions::DEFAULT.quantile,
    c_min=EvtOptions::DEFAULT.c_min, fit=PredictOptions::DEFAULT.fit.as_str(),
    excess_centre=PredictOptions::DEFAULT.excess_centre, target_width=None, summary_path=None))]
#[allow(clippy::too_many_arguments)]
fn predict_native(
    py: Python<'_>,
    summary: PyRef<'_, NativeSummary>,
    pool_size: Option<u64>,
    k: usize,
    estimator: &str,
    map: &str,
    bootstrap: usize,
    sample_noise: usize,
    confidence: f64,
    seed: u64,
    fit_top: Option<usize>,
    quantile: f64,
    c_min: u64,
    fit: &str,
    excess_centre: bool,
    target_width: Option<f64>,
    summary_path: Option<String>,
) -> PyResult<(String, Columns)> {
    let s = &summary.inner;
    let request = tailrank::predict::PredictRequest {
        pool_size,
        k,
        estimator,
        map,
        fit,
        bootstrap,
        sample_noise,
        confidence,
        seed,
        fit_top,
        quantile,
        c_min,
        excess_centre,
    };
    let opts = request.options().map_err(err)?;
    request.check_fit_top(s, None).map_err(err)?;
    let p = py
        .allow_threads(|| {
            let plan = tailrank::predict::NextStepPlan {
                target_width,
                summary_path,
            };
            tailrank::predict::predict_with_plan(s, &opts, &plan)
        })
        .map_err(err)?;
    let json =
        serde_json::to_string(&tailrank::report::prediction_json(&p)).map_err(internal_err)?;

    let mut query_id = Vec::new();
    let mut positive_id = Vec::new();
    let mut rank = Vec::new();
    let mut score = Vec::new();
    let mut core_above = Vec::new();
    let mut pool_above = Vec::new();
    let mut x_hat = Vec::new();
    let mut branch = Vec::new();
    let (mut u, mut sigma, mut xi, mut n_u) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for q in &p.hardness {
        for (j, h) in q.positives.iter().enumerate() {
            query_id.push(q.query_id.clone());
            positive_id.push(h.id.clone());
            rank.push(j as u64 + 1);
            score.push(h.score);
            core_above.push(h.core_above);
            pool_above.push(h.pool_above);
            x_hat.push(h.x_hat);
            branch.push(match h.branch {
                Branch::Count => "count",
                Branch::Tail => "tail",
                Branch::Immune => "immune",
            });
            match &q.tail {
                Some(t) => {
                    u.push(t.u);
                    sigma.push(t.fit.gpd.sigma);
                    xi.push(t.fit.gpd.xi);
                    n_u.push(t.n_u as i64);
                }
                None => {
                    u.push(f64::NAN);
                    sigma.push(f64::NAN);
                    xi.push(f64::NAN);
                    n_u.push(-1);
                }
            }
        }
    }
    let cols: Columns = vec![
        ("query_id", query_id.into_pyobject(py)?.into_any().unbind()),
        (
            "positive_id",
            positive_id.into_pyobject(py)?.into_any().unbind(),
        ),
        ("j", rank.into_pyobject(py)?.into_any().unbind()),
        ("score", score.into_pyobject(py)?.into_any().unbind()),
        (
            "core_above",
            core_above.into_pyobject(py)?.into_any().unbind(),
        ),
        (
            "pool_above",
            pool_above.into_pyobject(py)?.into_any().unbind(),
        ),
        ("x_hat", x_hat.into_pyobject(py)?.into_any().unbind()),
        ("branch", branch.into_pyobject(py)?.into_any().unbind()),
        ("u", u.into_pyobject(py)?.into_any().unbind()),
        ("sigma", sigma.into_pyobject(py)?.into_any().unbind()),
        ("xi", xi.into_pyobject(py)?.into_any().unbind()),
        ("n_u", n_u.into_pyobject(py)?.into_any().unbind()),
    ];
    Ok((json, cols))
}

/// Evaluate ILIAS-style results against a ground truth (`tailrank eval --json`).
/// `results`: a path, or `[(query, [(db_id, score)])]`; `gt`: a path (every set, or those named
/// in `sets`) or `(name, query_ids, positives)`.
#[pyfunction]
#[pyo3(signature = (results, gt, k=DEFAULT_K, missing_as_zero=false, sets=None, metrics=None))]
fn evaluate_native(
    py: Python<'_>,
    results: &Bound<'_, PyAny>,
    gt: &Bound<'_, PyAny>,
    k: usize,
    missing_as_zero: bool,
    sets: Option<Vec<String>>,
    metrics: Option<Vec<String>>,
) -> PyResult<String> {
    let metrics = metrics
        .unwrap_or_default()
        .iter()
        .map(|m| m.parse::<MetricName>())
        .collect::<tailrank::Result<Vec<_>>>()
        .map_err(err)?;
    let results = results_of(py, results)?;
    let chosen_sets = sets.as_ref().is_some_and(|v| !v.is_empty());
    let query_sets: Vec<QuerySet> =
        if let Ok((name, qids, pos)) = gt.extract::<(String, Vec<String>, Vec<Vec<String>>)>() {
            vec![py
                .allow_threads(|| QuerySet::new("<ground truth dict>", name, qids, pos))
                .map_err(err)?]
        } else {
            let path: PathBuf = gt.extract()?;
            let all = py.allow_threads(|| load_ground_truth(&path)).map_err(err)?;
            let notes = tailrank::formats::gt::ground_truth_notes(&path).map_err(err)?;
            warn_all(py, "tailrank.evaluate", &notes)?;
            select_sets(all, &sets.unwrap_or_default())
                .map_err(|e| kind_err(e.kind(), format!("{}: {e}", path.display())))?
        };
    let opts = EvalOptions {
        k,
        missing: MissingPolicy::zero_if(missing_as_zero),
        metrics,
        chosen_sets,
    };
    let report = py
        .allow_threads(|| evaluate_results_for(&query_sets, &results, &opts))
        .map_err(err)?;
    serde_json::to_string(&report).map_err(internal_err)
}

/// Results given from Python: a path, or `[(query, [(db_id, score)])]`.
fn results_of(py: Python<'_>, results: &Bound<'_, PyAny>) -> PyResult<Results> {
    if let Ok(list) = results.extract::<Vec<(String, Vec<(String, f64)>)>>() {
        let qs = list
            .into_iter()
            .map(|(query, items)| QueryResults { query, items })
            .collect();
        // Extracting reads Python objects (GIL held); checking and indexing them does not.
        return py
            .allow_threads(|| Results::new("<results dict>", qs))
            .map_err(err);
    }
    let path: PathBuf = results.extract()?;
    py.allow_threads(|| read_results(&path)).map_err(err)
}

/// Revisited mAP per protocol (`tailrank eval --protocol ... --json`): `results` as for
/// [`evaluate_native`], `gt` the path of a revisited ground truth JSON
/// `{query: {easy, hard, junk}}`, `protocols` by name (`easy`, `medium`, `hard`, `plain`).
#[pyfunction]
#[pyo3(signature = (results, gt, protocols, missing_as_zero=false))]
fn evaluate_revisited_native(
    py: Python<'_>,
    results: &Bound<'_, PyAny>,
    gt: PathBuf,
    protocols: Vec<String>,
    missing_as_zero: bool,
) -> PyResult<String> {
    let protocols = protocols
        .iter()
        .map(|p| p.parse::<Protocol>())
        .collect::<tailrank::Result<Vec<_>>>()
        .map_err(err)?;
    let results = results_of(py, results)?;
    let gts = py.allow_threads(|| read_revisited_gt(&gt)).map_err(err)?;
    let missing = MissingPolicy::zero_if(missing_as_zero);
    let report = py
        .allow_threads(|| evaluate_revisited(&results, &gts, &protocols, missing))
        .map_err(err)?;
    serde_json::to_string(&report).map_err(internal_err)
}

/// `xxh3_64_with_seed(utf8(id), seed)` for each id (docs/method.md §4).
#[pyfunction]
fn id_hashes(ids: Vec<String>, seed: u64) -> Vec<u64> {
    ids.iter()
        .map(|id| tailrank::sample::id_hash(id, seed))
        .collect()
}

/// 0-based positions `(first, second)` of the first repeated id (`formats::ids::find_duplicate`,
/// the check every id reader and `tailrank sample` apply), if any.
#[pyfunction]
fn find_duplicate_id(py: Python<'_>, ids: Vec<String>) -> Option<(usize, usize)> {
    py.allow_threads(|| tailrank::formats::ids::find_duplicate(&ids))
}

/// Sampling threshold t(f) = ⌊f · 2^64⌋ (u64::MAX at f = 1).
#[pyfunction]
fn threshold(fraction: f64) -> PyResult<u64> {
    tailrank::sample::threshold(fraction).map_err(err)
}

/// The hash range `(lo, hi)` of the sample at `fraction`, or of its increment over `after`
/// (`HashRange::sample`; `hi = 2^64 − 1` is inclusive).
#[pyfunction]
#[pyo3(signature = (fraction, after=None))]
fn sample_range(fraction: f64, after: Option<f64>) -> PyResult<(u64, u64)> {
    let r = tailrank::sample::HashRange::sample(fraction, after).map_err(err)?;
    Ok((r.lo, r.hi))
}

/// Check, before any work, that a summary folder may be written at `path` by a command reading
/// `inputs` (descriptor files count with their id files): `outputs::check_output`'s rules, so
/// that a bad output path fails at once rather than after a long scan.
#[pyfunction]
fn check_summary_output(path: PathBuf, inputs: Vec<PathBuf>) -> PyResult<()> {
    let all: Vec<PathBuf> = inputs
        .iter()
        .flat_map(|p| tailrank::outputs::descriptor_inputs(p))
        .collect();
    let refs: Vec<&std::path::Path> = all.iter().map(|p| p.as_path()).collect();
    let resolved = tailrank::outputs::resolve_inputs(&refs);
    tailrank::outputs::check_output(&path, true, &resolved, &[])
        .map(|_| ())
        .map_err(err)
}

/// Library version.
#[pyfunction]
fn version() -> &'static str {
    tailrank::TOOL_VERSION
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    error::register(m)?;
    m.add_class::<NativeSummary>()?;
    m.add_function(wrap_pyfunction!(scan_native, m)?)?;
    m.add_function(wrap_pyfunction!(scan_rows_note, m)?)?;
    m.add_function(wrap_pyfunction!(predict_native, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_native, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_revisited_native, m)?)?;
    m.add_function(wrap_pyfunction!(id_hashes, m)?)?;
    m.add_function(wrap_pyfunction!(threshold, m)?)?;
    m.add_function(wrap_pyfunction!(sample_range, m)?)?;
    m.add_function(wrap_pyfunction!(find_duplicate_id, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(check_summary_output, m)?)?;
    // The prediction defaults, read by the Python signatures (stated once, in the library).
    let d = PredictOptions::DEFAULT;
    let e = EvtOptions::DEFAULT;
    let defaults = pyo3::types::PyDict::new(m.py());
    defaults.set_item("k", d.k)?;
    defaults.set_item("estimator", Estimator::DEFAULT_NAME)?;
    defaults.set_item("map", MapKind::DEFAULT_NAME)?;
    defaults.set_item("bootstrap", d.bootstrap)?;
    defaults.set_item("sample_noise", d.sample_noise)?;
    defaults.set_item("confidence", d.confidence)?;
    defaults.set_item("seed", d.seed)?;
    defaults.set_item("fit_top", e.top_m)?;
    defaults.set_item("quantile", e.quantile)?;
    defaults.set_item("c_min", e.c_min)?;
    defaults.set_item("fit", PredictOptions::DEFAULT.fit.as_str())?;
    defaults.set_item("excess_centre", d.excess_centre)?;
    m.add("PREDICT_DEFAULTS", defaults)?;
    // The scan defaults of the Python signatures (ScanConfig's, stated in scan::config).
    let scan_defaults = pyo3::types::PyDict::new(m.py());
    scan_defaults.set_item("top_m", DEFAULT_TOP_M)?;
    scan_defaults.set_item("drift_shards", DEFAULT_DRIFT_SHARDS)?;
    scan_defaults.set_item("fraction", DEFAULT_FRACTION)?;
    scan_defaults.set_item("seed", DEFAULT_SEED)?;
    m.add("SCAN_DEFAULTS", scan_defaults)?;
    // The cut-off of `evaluate` (metric::DEFAULT_K).
    let eval_defaults = pyo3::types::PyDict::new(m.py());
    eval_defaults.set_item("k", DEFAULT_K)?;
    m.add("EVAL_DEFAULTS", eval_defaults)?;
    // The protocols `evaluate_revisited` uses by default.
    let revisited: Vec<&str> = Protocol::REVISITED.iter().map(|p| p.as_str()).collect();
    m.add("REVISITED_PROTOCOLS", revisited)?;
    Ok(())
}
