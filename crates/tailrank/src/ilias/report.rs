//! The ILIAS report: exact or predicted mAP per query set with the official breakdowns
//! (scale and clutter groups, category, subcategory; see the [module doc](super)), the
//! combined rows and the text table.

use crate::atomic::Transaction;
use crate::error::{Error, Result};
use crate::hardness::QueryHardness;
use crate::maps::{self, MapKind};
use crate::metric::{evaluate_counts, PositiveCounts};
use crate::numerics::mean;
use crate::predict::{self, PredictOptions, Prediction};
use crate::scan::engine::{Progress, ScanConfig, DEFAULT_TOP_M};
use crate::scan::resume::{output_failed, partial_dir_for, remove_partial, ResumeOptions};
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use super::layout::{FeatureFiles, IliasDataset, TAXONOMY, TAXONOMY_DIRS};
use super::scan::{scan_ilias, scan_ilias_resumable};

/// Scale groups `[t1, t2)` of the official evaluator (relative object size in the positive).
pub const SCALE_GROUPS: [(f64, f64); 4] = [
    (0.0, 0.06880213760855043),
    (0.06880213760855043, 0.13526567164179104),
    (0.13526567164179104, 0.2729876723163842),
    (0.2729876723163842, f64::INFINITY),
];

/// Clutter groups `[t1, t2)` of the official evaluator.
pub const CLUTTER_GROUPS: [(f64, f64); 4] = [
    (0.0, 18.0),
    (18.0, 33.0),
    (33.0, 53.0),
    (53.0, f64::INFINITY),
];

/// The official report's key of a group, `"{t1}-{t2}"` as Python prints the thresholds
/// (`0-0.06880213760855043`, `53-inf`).
pub fn group_key(t1: f64, t2: f64) -> String {
    let f = |x: f64| {
        if x.is_infinite() {
            "inf".to_string()
        } else {
            format!("{x}")
        }
    };
    format!("{}-{}", f(t1), f(t2))
}

/// One breakdown group. Values are fractions in [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupResult {
    /// `scale`, `clutter`, `category` or `subcategory`.
    pub kind: String,
    /// The official report's key (`0-18`, `product`, `product-food`, ...).
    pub group: String,
    /// Queries (scale, clutter) or instances (category, subcategory) averaged over.
    pub n: usize,
    /// Exact mAP@k, or the predicted mAP@k at N.
    pub map_at_k: f64,
    /// Prediction mode: the count baseline and evaluate-at-S for the same group.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub count_map_at_k: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub evaluate_at_s_map_at_k: Option<f64>,
}

/// Per-query AP (exact, or predicted with its baselines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryAp {
    pub query: String,
    pub ap_at_k: f64,
}

/// The ILIAS report of one query set.
#[derive(Debug, Clone, Serialize)]
pub struct IliasSetReport {
    /// `image` or `text`.
    pub query_set: String,
    /// `i2i` or `t2i`.
    pub task: String,
    pub n_queries: usize,
    /// Exact mAP@k, or the predicted mAP@k at N.
    pub map_at_k: f64,
    pub queries: Vec<QueryAp>,
    pub scale: Vec<GroupResult>,
    pub clutter: Vec<GroupResult>,
    pub categories: Vec<GroupResult>,
    pub subcategories: Vec<GroupResult>,
    /// Pairs (positive, non-relevant item) of one query with bitwise-equal scores, over all
    /// queries of the set (`Σ_j T^C_j + T^K_j`; in prediction mode, in the level-0 sample);
    /// None when the summary has no tie counts. Such pairs are ranked as the official
    /// evaluator ranks them (tie blocks, positives at the block's end).
    pub tied_pairs: Option<u64>,
    /// Prediction mode: the prediction, written as its report (`report::prediction_json`).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::predict::json::serialize_prediction"
    )]
    pub prediction: Option<Prediction>,
}

/// The ILIAS report (what `tailrank ilias --json` prints).
#[derive(Debug, Clone, Serialize)]
pub struct IliasReport {
    pub tool_version: String,
    pub model: String,
    /// `exact` or `prediction`.
    pub mode: String,
    pub k: usize,
    pub unit: String,
    /// N, the number of distractors (from `distractor_ids.txt.gz`).
    pub pool_size: u64,
    /// Distractors scanned (S_0).
    pub sample_size: u64,
    pub fraction: f64,
    pub seed: u64,
    /// `--selected-ids`: the file selecting the distractors (N counts the selected ones);
    /// None without a selection.
    pub selected_ids: Option<String>,
    pub sets: Vec<IliasSetReport>,
    /// With both query sets: i2i and t2i together, the mean AP over all their queries
    /// (`Σ_sets Σ_q AP_q / Σ_sets n_queries`), beside the per-task rows; None with one set.
    pub combined: Option<CombinedRow>,
    pub warnings: Vec<String>,
}

/// The combined row of [`IliasReport`]: every query of every set counted once.
#[derive(Debug, Clone, Serialize)]
pub struct CombinedRow {
    /// The tasks joined with `+` (`i2i+t2i`).
    pub task: String,
    pub n_queries: usize,
    /// Mean over all queries of the sets of their (exact or predicted) AP@k.
    pub map_at_k: f64,
}

impl CombinedRow {
    /// The combined row of `sets` (None unless there are at least two).
    pub fn of(sets: &[IliasSetReport]) -> Option<CombinedRow> {
        if sets.len() < 2 {
            return None;
        }
        let aps: Vec<f64> = sets
            .iter()
            .flat_map(|s| s.queries.iter().map(|q| q.ap_at_k))
            .collect();
        Some(CombinedRow {
            task: sets
                .iter()
                .map(|s| s.task.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            n_queries: aps.len(),
            map_at_k: mean(&aps),
        })
    }
}

/// Where per-query APs of a filtered positive set come from.
enum Source<'a> {
    Exact(&'a Summary),
    Predicted {
        h: &'a [QueryHardness],
        n: f64,
        map: MapKind,
    },
}

impl Source<'_> {
    fn n_queries(&self) -> usize {
        match self {
            Source::Exact(s) => s.queries.len(),
            Source::Predicted { h, .. } => h.len(),
        }
    }
    fn query_id(&self, qi: usize) -> &str {
        match self {
            Source::Exact(s) => &s.queries[qi].id,
            Source::Predicted { h, .. } => &h[qi].query_id,
        }
    }
    /// `[ap, count ap, at-S ap]` of query `qi` keeping the positives for which `keep` holds;
    /// None when none is kept.
    fn ap(&self, qi: usize, k: usize, keep: &dyn Fn(&str) -> bool) -> Option<[f64; 3]> {
        match self {
            Source::Exact(s) => {
                let pos: Vec<PositiveCounts> = s.queries[qi]
                    .positives
                    .iter()
                    .filter(|p| keep(&p.id))
                    .map(|p| PositiveCounts {
                        score: p.score,
                        core_above: p.core_above,
                        pool_above: p.pool_above[0],
                        ties: p.core_ties + p.pool_tie(0),
                    })
                    .collect();
                if pos.is_empty() {
                    return None;
                }
                let ap = evaluate_counts(&s.queries[qi].id, &pos, k).ap_at_k;
                Some([ap, f64::NAN, f64::NAN])
            }
            Source::Predicted { h, n, map } => {
                let mut q = h[qi].clone();
                q.positives.retain(|p| keep(&p.id));
                if q.positives.is_empty() {
                    return None;
                }
                let ap = maps::ap_at_k(&q, *n, k, *map);
                let qs = [q];
                let count = maps::ap_at_k(&predict::count_hardness(&qs)[0], *n, k, *map);
                let at_s = predict::baselines::per_query_at_sample(&qs, k)[0];
                Some([ap, count, at_s])
            }
        }
    }
}

fn instance(id: &str) -> &str {
    id.split('/').next().unwrap_or("")
}

fn group_from(kind: &str, group: String, vals: &[[f64; 3]], predicted: bool) -> GroupResult {
    let col = |c: usize| mean(&vals.iter().map(|v| v[c]).collect::<Vec<_>>());
    GroupResult {
        kind: kind.into(),
        group,
        n: vals.len(),
        map_at_k: col(0),
        count_map_at_k: predicted.then(|| col(1)),
        evaluate_at_s_map_at_k: predicted.then(|| col(2)),
    }
}

/// Breakdowns of one set: scale, clutter (when the positives carry them), category and
/// subcategory (when a taxonomy is given). `Err` when a query's instance is not in the
/// taxonomy.
fn breakdowns(
    ds: &IliasDataset,
    src: &Source,
    k: usize,
    predicted: bool,
) -> Result<[Vec<GroupResult>; 4]> {
    let nq = src.n_queries();
    let mut scale = Vec::new();
    let mut clutter = Vec::new();
    if let Some(info) = &ds.positive_info {
        for (kind, groups, out) in [
            ("scale", &SCALE_GROUPS, &mut scale),
            ("clutter", &CLUTTER_GROUPS, &mut clutter),
        ] {
            for &(t1, t2) in groups.iter() {
                let keep = |id: &str| {
                    info.get(id).is_some_and(|i| {
                        let v = if kind == "scale" { i.scale } else { i.clutter };
                        v >= t1 && v < t2
                    })
                };
                let vals: Vec<[f64; 3]> = (0..nq).filter_map(|qi| src.ap(qi, k, &keep)).collect();
                if !vals.is_empty() {
                    out.push(group_from(kind, group_key(t1, t2), &vals, predicted));
                }
            }
        }
    }
    let mut categories = Vec::new();
    let mut subcategories = Vec::new();
    if let Some(tax) = &ds.taxonomy {
        // instance → its queries' APs.
        let mut per_inst: BTreeMap<&str, Vec<[f64; 3]>> = BTreeMap::new();
        for qi in 0..nq {
            if let Some(v) = src.ap(qi, k, &|_| true) {
                per_inst
                    .entry(instance(src.query_id(qi)))
                    .or_default()
                    .push(v);
            }
        }
        let mut cat: BTreeMap<String, Vec<[f64; 3]>> = BTreeMap::new();
        let mut sub: BTreeMap<String, Vec<[f64; 3]>> = BTreeMap::new();
        for (inst, v) in &per_inst {
            let (c, sc) = tax.instance.get(*inst).ok_or_else(|| {
                Error::mismatch_at(
                    ds.taxonomy_file.as_deref().unwrap_or(&ds.dir),
                    format!("instance {inst:?} (of the query set) is not in the taxonomy"),
                )
            })?;
            let m = [0, 1, 2].map(|c| mean(&v.iter().map(|x| x[c]).collect::<Vec<_>>()));
            cat.entry(c.clone()).or_default().push(m);
            sub.entry(format!("{c}-{sc}")).or_default().push(m);
        }
        for (c, v) in cat {
            categories.push(group_from("category", c, &v, predicted));
        }
        for (c, v) in sub {
            subcategories.push(group_from("subcategory", c, &v, predicted));
        }
    }
    Ok([scale, clutter, categories, subcategories])
}

fn task_of(set: &str) -> String {
    match set {
        "image" => "i2i".into(),
        "text" => "t2i".into(),
        other => other.into(),
    }
}

/// The exact ILIAS report of a whole-pool scan summary of one set.
pub fn exact_set_report(ds: &IliasDataset, s: &Summary, k: usize) -> Result<IliasSetReport> {
    if !s.is_exact() {
        return Err(Error::mismatch(format!(
            "summary of {:?} is a sample (f = {}): use the prediction report",
            s.query_set, s.fraction
        )));
    }
    let src = Source::Exact(s);
    let queries: Vec<QueryAp> = (0..s.queries.len())
        .map(|qi| QueryAp {
            query: s.queries[qi].id.clone(),
            ap_at_k: src.ap(qi, k, &|_| true).map_or(0.0, |v| v[0]),
        })
        .collect();
    let [scale, clutter, categories, subcategories] = breakdowns(ds, &src, k, false)?;
    Ok(IliasSetReport {
        query_set: s.query_set.clone(),
        task: task_of(&s.query_set),
        n_queries: queries.len(),
        map_at_k: mean(&queries.iter().map(|q| q.ap_at_k).collect::<Vec<_>>()),
        queries,
        scale,
        clutter,
        categories,
        subcategories,
        tied_pairs: s.ties_known.then(|| s.tied_pairs(0)),
        prediction: None,
    })
}

/// The predicted ILIAS report of a sample summary of one set (N from the summary or `opts`).
pub fn predicted_set_report(
    ds: &IliasDataset,
    s: &Summary,
    opts: &PredictOptions,
) -> Result<IliasSetReport> {
    let p = predict::predict(s, opts)?;
    let src = Source::Predicted {
        h: &p.hardness,
        n: p.pool_size as f64,
        map: opts.map,
    };
    let [scale, clutter, categories, subcategories] = breakdowns(ds, &src, opts.k, true)?;
    Ok(IliasSetReport {
        query_set: s.query_set.clone(),
        task: task_of(&s.query_set),
        n_queries: p.queries.len(),
        map_at_k: p.estimate,
        queries: p
            .queries
            .iter()
            .map(|q| QueryAp {
                query: q.query_id.clone(),
                ap_at_k: q.ap_at_k,
            })
            .collect(),
        scale,
        clutter,
        categories,
        subcategories,
        tied_pairs: s.ties_known.then(|| s.tied_pairs(0)),
        prediction: Some(p),
    })
}

/// Options of [`evaluate_ilias`].
#[derive(Debug, Clone)]
pub struct IliasOptions {
    /// Query sets to evaluate (`image`, `text`).
    pub sets: Vec<String>,
    /// Scan options (fraction, seed, M, threads, model, ...); `pool_size` is set from the list.
    pub scan: ScanConfig,
    /// Prediction options (k is used in exact mode too).
    pub predict: PredictOptions,
}

impl IliasOptions {
    /// Refuse bad prediction options before the scan (hours at full scale) rather than after
    /// it: [`PredictOptions::check`], in exact mode too (a value that would be refused in
    /// prediction mode is a mistake either way).
    pub fn check(&self) -> Result<()> {
        self.predict.check()
    }
}

/// The top counts of `tailrank ilias`: the M its scan keeps and the number of top scores its
/// tail fit uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IliasTopCounts {
    /// M of the scan (`--top-m`).
    pub top_m: usize,
    /// Top scores of the evt fit (`--fit-top`, `EvtOptions::top_m`).
    pub fit_top: usize,
    /// `--fit-top` was given alone, in its former meaning (M too): deprecated.
    pub deprecated_fit_top: bool,
}

impl IliasTopCounts {
    /// From `--top-m` and `--fit-top` as given: M as given, else [`DEFAULT_TOP_M`]; the fit's
    /// as given (at most M), else `EvtOptions::DEFAULT.top_m`, used up to M (as `predict`).
    /// `--fit-top` alone keeps its former meaning for one release: it sets M too.
    pub fn new(top_m: Option<usize>, fit_top: Option<usize>) -> Result<Self> {
        let deprecated_fit_top = top_m.is_none() && fit_top.is_some();
        let m = top_m.or(fit_top).unwrap_or(DEFAULT_TOP_M);
        let fit = fit_top.unwrap_or(crate::hardness::EvtOptions::DEFAULT.top_m);
        if fit_top.is_some_and(|f| f > m) {
            return Err(Error::option(format!(
                "--fit-top {fit} is above --top-m {m}: the tail fit can use at most the M top \
                 scores the scan keeps; give --fit-top at most {m} or a larger --top-m"
            )));
        }
        Ok(IliasTopCounts {
            top_m: m,
            fit_top: fit,
            deprecated_fit_top,
        })
    }
}

/// The deprecation warning of `ilias --fit-top` given without `--top-m`.
pub const ILIAS_FIT_TOP_DEPRECATED: &str = "--fit-top without --top-m is deprecated: it sets the \
     scan's M too, as before; give the scan's M with --top-m (--fit-top is then only the number \
     of top scores the tail is fitted on); from the next release --fit-top alone sets only that";

/// Header lines skipped in the id files, and what the dataset folder lacks for a full report: positives without scale/clutter columns
/// (no scale/clutter rows) and a missing taxonomy (no category rows), naming the places
/// looked in. Printed at the top of the report (and by the CLI before the scan).
pub fn dataset_warnings(ds: &IliasDataset) -> Vec<String> {
    let mut warnings = ds.header_notes.clone();
    if ds.positive_info.is_none() {
        warnings.push(format!(
            "{} has no scale/clutter columns: no scale or clutter breakdown",
            ds.positives_file.display()
        ));
    }
    if ds.taxonomy.is_none() {
        let looked: Vec<String> = TAXONOMY_DIRS
            .iter()
            .map(|d| ds.dir.join(d).join(TAXONOMY).display().to_string())
            .collect();
        warnings.push(format!(
            "no taxonomy.json found (looked for {}; it is misc/taxonomy.json of the ILIAS code \
             repository, not part of the download: give its path as the taxonomy file): no \
             (sub)category breakdown",
            looked.join(", ")
        ));
    }
    warnings
}

/// Scan and report: exact when `opts.scan.fraction == 1`, predicted otherwise.
pub fn evaluate_ilias(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    opts: &IliasOptions,
    progress: &dyn Progress,
) -> Result<(IliasReport, Vec<Summary>)> {
    opts.check()?;
    let names: Vec<&str> = opts.sets.iter().map(String::as_str).collect();
    let summaries = scan_ilias(ds, feats, &names, &opts.scan, progress)?;
    report_ilias(ds, opts, summaries)
}

/// Where [`run_ilias`] writes the scan summaries: `dir/<set>` for each query set, replaced
/// together and never over one of `inputs`, scanned chunk by chunk through the partial folder
/// `dir.partial/` (`crate::scan::resume`), which is removed once they are written.
#[derive(Debug, Clone)]
pub struct SummaryOutput<'a> {
    pub dir: &'a Path,
    /// The dataset and feature folders and any other input file.
    pub inputs: Vec<&'a Path>,
    /// Distractor rows per chunk of the partial folder.
    pub chunk_rows: usize,
    /// Continue from an existing partial folder (without it, one is an error).
    pub resume: bool,
    /// A page rendered from the report and replaced together with the summaries.
    pub page: Option<ReportPage<'a>>,
}

/// A file rendered from the report (`ilias --html`): its path and its renderer.
#[derive(Clone, Copy)]
pub struct ReportPage<'a> {
    pub path: &'a Path,
    pub render: &'a dyn Fn(&IliasReport) -> String,
}

impl std::fmt::Debug for ReportPage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportPage")
            .field("path", &self.path)
            .finish()
    }
}

/// The ILIAS report of `opts.sets`, from the scan to the report: without `out`
/// [`evaluate_ilias`]; with it, the resumable scan
/// ([`scan_ilias_resumable`](super::scan_ilias_resumable)) and the summaries written (see
/// [`SummaryOutput`]). Returns the report and, with `out`, the notes of the resumable scan
/// ([`ResumeReport::notes`](crate::scan::resume::ResumeReport::notes)).
pub fn run_ilias(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    opts: &IliasOptions,
    out: Option<&SummaryOutput>,
    progress: &dyn Progress,
) -> Result<(IliasReport, Vec<String>)> {
    opts.check()?;
    let Some(out) = out else {
        return evaluate_ilias(ds, feats, opts, progress).map(|(report, _)| (report, Vec::new()));
    };
    let created = summary_out_folder(out)?;
    let result = scan_and_write(ds, feats, opts, out, progress);
    if result.is_err() && created {
        let _ = std::fs::remove_dir(out.dir); // only if still empty
    }
    result
}

/// [`run_ilias`] with `--summary-out` once its folder exists: the resumable scan, the report
/// and the summaries written together.
fn scan_and_write(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    opts: &IliasOptions,
    out: &SummaryOutput,
    progress: &dyn Progress,
) -> Result<(IliasReport, Vec<String>)> {
    let mut outputs = Transaction::new(&out.inputs);
    let slots = opts
        .sets
        .iter()
        .map(|s| outputs.add_dir(&out.dir.join(s)))
        .collect::<Result<Vec<_>>>()?;
    let page_slot = out.page.map(|p| outputs.add_file(p.path)).transpose()?;
    let partial_dir = partial_dir_for(out.dir);
    let ropts = ResumeOptions {
        partial_dir: partial_dir.clone(),
        chunk_rows: out.chunk_rows,
        resume: out.resume,
        store_last_chunk: false,
    };
    let names: Vec<&str> = opts.sets.iter().map(String::as_str).collect();
    let (summaries, resumed) =
        scan_ilias_resumable(ds, feats, &names, &opts.scan, &ropts, progress)?;
    let written = (|| {
        let (report, summaries) = report_ilias(ds, opts, summaries)?;
        for (set, slot) in opts.sets.iter().zip(slots) {
            let s = summaries
                .iter()
                .find(|s| &s.query_set == set)
                .ok_or_else(|| {
                    Error::internal(format!(
                        "internal error: no summary of the query set {set:?} to write"
                    ))
                })?;
            outputs.write(slot, |p| s.write(p))?;
        }
        if let (Some(page), Some(slot)) = (out.page, page_slot) {
            let text = (page.render)(&report);
            outputs.write(slot, |p| crate::atomic::write_bytes(p, text.as_bytes()))?;
        }
        outputs.commit()?;
        Ok(report)
    })();
    let report = written.map_err(|e| output_failed(&partial_dir, e))?;
    remove_partial(&partial_dir)?;
    Ok((report, resumed.notes(&partial_dir)))
}

/// Create `--summary-out` (not its parents) unless it exists as a folder; `true` when created.
/// Refused inside an input folder (the dataset's, the features'): a rerun would find the
/// summaries there as part of that input and refuse to replace them.
fn summary_out_folder(out: &SummaryOutput) -> Result<bool> {
    let dir = crate::outputs::resolve_output(out.dir);
    for input in out.inputs.iter().filter(|p| p.is_dir()) {
        if dir.starts_with(crate::outputs::resolve_output(input)) {
            return Err(Error::output(
                out.dir,
                format!(
                    "inside the input folder {}: give --summary-out a folder outside the \
                     dataset and feature folders",
                    input.display()
                ),
            ));
        }
    }
    if out.dir.is_dir() {
        return Ok(false);
    }
    crate::outputs::check_output_path(out.dir, true)?;
    crate::outputs::create_output_folder(out.dir)?;
    Ok(true)
}

/// The report of the summaries of [`scan_ilias`] or
/// [`scan_ilias_resumable`](super::scan_ilias_resumable) (one per set of `opts.sets`): exact
/// when `opts.scan.fraction == 1`, predicted otherwise. Returns the summaries with it.
pub fn report_ilias(
    ds: &IliasDataset,
    opts: &IliasOptions,
    summaries: Vec<Summary>,
) -> Result<(IliasReport, Vec<Summary>)> {
    let exact = crate::sample::is_exact_fraction(opts.scan.fraction);
    let mut sets = Vec::new();
    for s in &summaries {
        sets.push(if exact {
            exact_set_report(ds, s, opts.predict.k)?
        } else {
            predicted_set_report(ds, s, &opts.predict)?
        });
    }
    let warnings = dataset_warnings(ds);
    let first = &summaries[0];
    Ok((
        IliasReport {
            tool_version: crate::TOOL_VERSION.to_string(),
            model: opts.scan.model.clone(),
            mode: if exact { "exact" } else { "prediction" }.into(),
            k: opts.predict.k,
            unit: "fraction".into(),
            pool_size: first.pool_size.unwrap_or(first.subset_sizes[0]),
            sample_size: first.subset_sizes[0],
            fraction: first.fraction,
            seed: first.seed,
            selected_ids: ds.selected_ids.as_ref().map(|p| p.display().to_string()),
            combined: CombinedRow::of(&sets),
            sets,
            warnings,
        },
        summaries,
    ))
}
