//! `tailrank._native`: the PyO3 layer under the Python package `tailrank`.
//!
//! Thin by design: every computation is the library's (`tailrank::scan::engine::scan`,
//! `Summary::{read, write, merge}`, `predict::predict`, `report::prediction_json`,
//! `metric::evaluate_results`, `sample::id_hash`), so Python results equal the CLI's. The
//! Python side (`python/tailrank/__init__.py`) turns numpy arrays into the plain inputs taken
//! here (ids + little-endian f32 bytes) and wraps the outputs. Scans, predictions and
//! evaluations run with the GIL released (`py.allow_threads`).

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::PathBuf;
use tailrank::formats::descriptors::{open_descriptors, DescriptorSource, InMemoryDescriptors};
use tailrank::formats::gt::{load_ground_truth, QuerySet};
use tailrank::formats::results::{read_results, QueryResults, Results};
use tailrank::hardness::{Branch, Estimator, EvtOptions};
use tailrank::maps::MapKind;
use tailrank::metric::{evaluate_results, MissingPolicy};
use tailrank::predict::PredictOptions;
use tailrank::scan::engine::{scan, NoProgress, ScanConfig, ScanInputs};
use tailrank::scan::summary::{query_set_digest, InputRecord, Summary, POOL_ROLE};

create_exception!(
    _native,
    TailrankError,
    PyValueError,
    "An error reported by tailrank (bad input file, inconsistent summaries, bad option)."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    TailrankError::new_err(e.to_string())
}

/// A descriptor source given from Python: `{"path": str, "ids": str | None}` (a `.npy` or
/// HDF5 file) or `{"label": str, "ids": [str], "dim": int, "data": bytes}` (row-major
/// little-endian f32, `len(ids) × dim` values).
fn source(d: &Bound<'_, PyDict>) -> PyResult<Box<dyn DescriptorSource>> {
    if let Some(path) = d.get_item("path")? {
        let path: PathBuf = path.extract()?;
        let ids: Option<PathBuf> = match d.get_item("ids")? {
            Some(x) if !x.is_none() => Some(x.extract()?),
            _ => None,
        };
        return open_descriptors(&path, ids.as_deref()).map_err(err);
    }
    let label: String = d
        .get_item("label")?
        .map(|x| x.extract())
        .transpose()?
        .unwrap_or_else(|| "<array>".into());
    let ids: Vec<String> = d
        .get_item("ids")?
        .ok_or_else(|| err(format!("{label}: no ids given")))?
        .extract()?;
    let dim: usize = d
        .get_item("dim")?
        .ok_or_else(|| err(format!("{label}: no dim given")))?
        .extract()?;
    let data = d
        .get_item("data")?
        .ok_or_else(|| err(format!("{label}: no data given")))?;
    let bytes = data.downcast::<PyBytes>()?.as_bytes();
    if bytes.len() % 4 != 0 {
        return Err(err(format!(
            "{label}: {} bytes are not a whole number of f32 values",
            bytes.len()
        )));
    }
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(Box::new(ArraySource::new(
        InMemoryDescriptors::new(label, ids, dim, values).map_err(err)?,
    )))
}

/// In-memory descriptors with their digest computed once, in large blocks. The value is
/// `InMemoryDescriptors::digest`'s (xxh3 streaming over `id + "\n"` for every id, then every
/// value's little-endian bytes; streaming xxh3 does not depend on how the input is cut), which
/// feeds the hasher 4 bytes at a time and costs seconds for large pools.
struct ArraySource {
    inner: InMemoryDescriptors,
    digest: String,
}

impl ArraySource {
    fn new(inner: InMemoryDescriptors) -> Self {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for id in &inner.ids {
            h.update(id.as_bytes());
            h.update(b"\n");
        }
        let mut buf = Vec::with_capacity(1 << 16);
        for block in inner.data.chunks(1 << 14) {
            buf.clear();
            for v in block {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            h.update(&buf);
        }
        let digest = format!("xxh3:{:016x}", h.digest());
        ArraySource { inner, digest }
    }
}

impl DescriptorSource for ArraySource {
    fn path(&self) -> &std::path::Path {
        self.inner.path()
    }
    fn rows(&self) -> usize {
        self.inner.rows()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn dtype(&self) -> tailrank::formats::descriptors::Dtype {
        self.inner.dtype()
    }
    fn ids(&self) -> &[String] {
        self.inner.ids()
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> tailrank::Result<()> {
        self.inner.read_rows(start, out)
    }
    fn digest(&self) -> String {
        self.digest.clone()
    }
}

/// Ground truth from Python: a path (with an optional query-set name, required when the ground
/// truth holds several sets, as in the CLI) or `(name, query_ids, positives)`.
fn ground_truth(gt: &Bound<'_, PyAny>, query_set: Option<&str>) -> PyResult<(QuerySet, String)> {
    if let Ok((name, qids, pos)) = gt.extract::<(String, Vec<String>, Vec<Vec<String>>)>() {
        let qs = QuerySet::new("<ground truth dict>", name, qids, pos).map_err(err)?;
        return Ok((qs, "<dict>".into()));
    }
    let path: PathBuf = gt.extract()?;
    let sets = load_ground_truth(&path).map_err(err)?;
    let names: Vec<String> = sets.iter().map(|s| s.name.clone()).collect();
    let set = match query_set {
        Some(n) => sets.into_iter().find(|s| s.name == n).ok_or_else(|| {
            err(format!(
                "{}: no query set {n:?} in the ground truth (it has: {})",
                path.display(),
                names.join(", ")
            ))
        })?,
        None if sets.len() == 1 => sets.into_iter().next().expect("one set"),
        None => {
            return Err(err(format!(
                "{}: the ground truth holds several query sets ({}); choose one with query_set=",
                path.display(),
                names.join(", ")
            )))
        }
    };
    Ok((set, path.display().to_string()))
}

/// A scan summary (`docs/summary-format.md`).
#[pyclass(module = "tailrank._native", frozen)]
pub struct NativeSummary {
    inner: Summary,
}

#[pymethods]
impl NativeSummary {
    /// Read a summary folder.
    #[staticmethod]
    fn read(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.allow_threads(|| Summary::read(&path)).map_err(err)?;
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
        let inner = py.allow_threads(|| Summary::merge(&owned)).map_err(err)?;
        Ok(NativeSummary { inner })
    }

    /// Compact exact binary form (bincode of every field; f32 scores bitwise), used to pickle
    /// summaries between processes (Ray). Not a file format: use `write` for files.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let v = py
            .allow_threads(|| bincode::serialize(&self.inner))
            .map_err(err)?;
        Ok(PyBytes::new(py, &v))
    }

    /// Inverse of `to_bytes` (same library version); the summary is validated.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<Self> {
        let b = data.as_bytes();
        let inner: Summary = py
            .allow_threads(|| bincode::deserialize(b))
            .map_err(|e| err(format!("summary bytes: {e}")))?;
        inner.validate().map_err(err)?;
        Ok(NativeSummary { inner })
    }

    /// Every field except the per-query data, as JSON text.
    fn meta_json(&self) -> PyResult<String> {
        let mut v = serde_json::to_value(&self.inner).map_err(err)?;
        if let Some(o) = v.as_object_mut() {
            o.remove("queries");
        }
        serde_json::to_string(&v).map_err(err)
    }

    fn n_queries(&self) -> usize {
        self.inner.queries.len()
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
            .ok_or_else(|| err(format!("query index {i} out of range")))?;
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
#[pyo3(signature = (queries, core, pool, gt, query_set=None, fraction=1.0, seed=0,
    min_fraction=None, pool_size=None, top_m=4000, drift_shards=4, model=String::new(),
    threads=None, normalize=false))]
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
    min_fraction: Option<f64>,
    pool_size: Option<u64>,
    top_m: usize,
    drift_shards: usize,
    model: String,
    threads: Option<usize>,
    normalize: bool,
) -> PyResult<NativeSummary> {
    if top_m == 0 {
        return Err(err("top_m must be at least 1"));
    }
    if pool.is_empty() {
        return Err(err("no pool source given"));
    }
    let (set, gt_label) = ground_truth(gt, query_set.as_deref())?;
    let q = source(queries)?;
    let c = source(core)?;
    let p: Vec<Box<dyn DescriptorSource>> = pool
        .iter()
        .map(|x| source(x.downcast::<PyDict>()?))
        .collect::<PyResult<_>>()?;
    let pool_rows: u64 = p.iter().map(|s| s.rows() as u64).sum();
    let pool_size = match pool_size {
        Some(n) => Some(n),
        None if fraction >= 1.0 => Some(pool_rows),
        None => None,
    };
    if let Some(n) = pool_size {
        if fraction >= 1.0 && n < pool_rows {
            return Err(err(format!(
                "pool_size {n} is smaller than the {pool_rows} pool rows scanned with f = 1 \
                 (N must be the size of the whole pool)"
            )));
        }
    }
    let mut cfg = ScanConfig::new(fraction, seed);
    if let Some(m) = min_fraction {
        cfg.min_fraction = m;
    }
    cfg.drift_shards = drift_shards;
    cfg.top_m = top_m;
    cfg.threads = threads;
    cfg.normalize = normalize;
    cfg.model = model;
    cfg.pool_size = pool_size;
    let summary = py.allow_threads(|| -> tailrank::Result<Summary> {
        let inputs = ScanInputs {
            query_set: &set,
            queries: q.as_ref(),
            core: c.as_ref(),
            pool: p.iter().map(|s| s.as_ref()).collect(),
        };
        let mut summary = scan(&inputs, &cfg, &NoProgress)?.summary;
        if let Some(n) = summary.pool_size {
            if n < summary.subset_sizes[0] {
                return Err(tailrank::Error::invalid(format!(
                    "pool_size {n} is smaller than the {} pool items sampled (S_0); \
                     N must be the size of the whole pool",
                    summary.subset_sizes[0]
                )));
            }
        }
        // As the CLI: the ground truth recorded before the pool inputs.
        let at = summary
            .inputs
            .iter()
            .position(|r| r.role == POOL_ROLE)
            .unwrap_or(summary.inputs.len());
        summary.inputs.insert(
            at,
            InputRecord {
                role: "ground_truth".into(),
                path: gt_label,
                digest: query_set_digest(&set),
                rows: set.query_ids.len() as u64,
            },
        );
        Ok(summary)
    });
    Ok(NativeSummary {
        inner: summary.map_err(err)?,
    })
}

/// Hardness columns, one entry per positive (query order, positives by score descending).
type Columns = Vec<(&'static str, Py<PyAny>)>;

/// Predict mAP@k at N from a summary: `(report JSON text, hardness columns)`. The JSON is
/// `report::prediction_json`, what `tailrank predict --json` prints.
#[pyfunction]
#[pyo3(signature = (summary, pool_size=None, k=1000, estimator="evt", map="expected-rank",
    bootstrap=1000, sample_noise=50, confidence=0.95, seed=0, top_m=4000, quantile=0.95,
    c_min=5))]
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
    top_m: usize,
    quantile: f64,
    c_min: u64,
) -> PyResult<(String, Columns)> {
    let estimator = match estimator {
        "count" => Estimator::Count,
        "evt" => Estimator::Evt(EvtOptions {
            top_m,
            quantile,
            c_min,
        }),
        other => {
            return Err(err(format!(
                "unknown estimator {other:?} (use evt or count)"
            )))
        }
    };
    let map = MapKind::parse(map).ok_or_else(|| {
        err(format!(
            "unknown map {map:?} (use expected-rank or binomial)"
        ))
    })?;
    let opts = PredictOptions {
        pool_size,
        k,
        estimator,
        map,
        bootstrap,
        sample_noise,
        confidence,
        seed,
    };
    let s = &summary.inner;
    let p = py
        .allow_threads(|| tailrank::predict::predict(s, &opts))
        .map_err(err)?;
    let json = serde_json::to_string(&tailrank::report::prediction_json(&p)).map_err(err)?;

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
#[pyo3(signature = (results, gt, k=1000, missing_as_zero=false, sets=None))]
fn evaluate_native(
    py: Python<'_>,
    results: &Bound<'_, PyAny>,
    gt: &Bound<'_, PyAny>,
    k: usize,
    missing_as_zero: bool,
    sets: Option<Vec<String>>,
) -> PyResult<String> {
    let results: Results = if let Ok(list) = results.extract::<Vec<(String, Vec<(String, f64)>)>>()
    {
        let qs = list
            .into_iter()
            .map(|(query, items)| QueryResults { query, items })
            .collect();
        Results::new("<results dict>", qs).map_err(err)?
    } else {
        let path: PathBuf = results.extract()?;
        py.allow_threads(|| read_results(&path)).map_err(err)?
    };
    let query_sets: Vec<QuerySet> =
        if let Ok((name, qids, pos)) = gt.extract::<(String, Vec<String>, Vec<Vec<String>>)>() {
            vec![QuerySet::new("<ground truth dict>", name, qids, pos).map_err(err)?]
        } else {
            let path: PathBuf = gt.extract()?;
            let all = load_ground_truth(&path).map_err(err)?;
            match sets {
                None => all,
                Some(names) => {
                    let have: Vec<String> = all.iter().map(|s| s.name.clone()).collect();
                    if let Some(n) = names.iter().find(|n| !have.contains(n)) {
                        return Err(err(format!(
                            "{}: no query set {n:?} (it has {have:?})",
                            path.display()
                        )));
                    }
                    all.into_iter()
                        .filter(|s| names.contains(&s.name))
                        .collect()
                }
            }
        };
    let missing = if missing_as_zero {
        MissingPolicy::Zero
    } else {
        MissingPolicy::Error
    };
    let report = py
        .allow_threads(|| evaluate_results(&query_sets, &results, k, missing))
        .map_err(err)?;
    serde_json::to_string(&report).map_err(err)
}

/// `xxh3_64_with_seed(utf8(id), seed)` for each id (SPEC 4).
#[pyfunction]
fn id_hashes(ids: Vec<String>, seed: u64) -> Vec<u64> {
    ids.iter()
        .map(|id| tailrank::sample::id_hash(id, seed))
        .collect()
}

/// Sampling threshold t(f) = ⌊f · 2^64⌋ (u64::MAX at f = 1).
#[pyfunction]
fn threshold(fraction: f64) -> PyResult<u64> {
    tailrank::sample::threshold(fraction).map_err(err)
}

/// Library version.
#[pyfunction]
fn version() -> &'static str {
    tailrank::TOOL_VERSION
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TailrankError", m.py().get_type::<TailrankError>())?;
    m.add_class::<NativeSummary>()?;
    m.add_function(wrap_pyfunction!(scan_native, m)?)?;
    m.add_function(wrap_pyfunction!(predict_native, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_native, m)?)?;
    m.add_function(wrap_pyfunction!(id_hashes, m)?)?;
    m.add_function(wrap_pyfunction!(threshold, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
