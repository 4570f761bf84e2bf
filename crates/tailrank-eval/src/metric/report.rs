//! Evaluation reports (what `tailrank eval` prints): per query, per query set, and the whole
//! report, from a results file or from a whole-pool scan summary. Every value is a fraction in
//! [0, 1]; the fixed fields are at the report's `k`, `values` holds the requested metrics of
//! the vocabulary ([`super::names`]) by canonical name.

use super::counts::{positive_counts, ranks, PositiveCounts};
use super::list_checks::{
    by_cut, order_decides_at_cut, printed_cuts, ranked, short_list_misses_positive,
};
use super::names::MetricName;
use super::ranking::QueryRanking;
use super::tied_pairs;
use crate::error::{Error, Result};
use crate::formats::gt::QuerySet;
use crate::formats::results::Results;
use crate::scan::config::check_k;
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// What to evaluate: the cut `k` of the fixed `*_at_k` fields, the missing-query policy, and
/// extra metrics of the vocabulary (each resolved at `k` when it has no `@k` of its own).
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOptions {
    pub k: usize,
    pub missing: MissingPolicy,
    pub metrics: Vec<MetricName>,
    /// The sets were chosen by name (`--set`): none of them is skipped for having no result.
    pub chosen_sets: bool,
}

impl EvalOptions {
    /// `k` and `missing`, no extra metric.
    pub fn new(k: usize, missing: MissingPolicy) -> Self {
        EvalOptions {
            k,
            missing,
            metrics: Vec::new(),
            chosen_sets: false,
        }
    }

    /// The extra metrics with their `k` filled in, without repeats.
    fn resolved(&self) -> Vec<MetricName> {
        MetricName::distinct_at(&self.metrics, self.k)
    }
}

/// What to do with a query of the set that has no results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingPolicy {
    /// Refuse (an error naming the query): the default.
    Error,
    /// Count it as 0 on every metric, flagged `missing` in the report.
    Zero,
}

impl MissingPolicy {
    /// [`MissingPolicy::Zero`] when `missing_as_zero`, else the default [`MissingPolicy::Error`]
    /// (the front ends' `missing_as_zero` switch).
    pub fn zero_if(missing_as_zero: bool) -> Self {
        if missing_as_zero {
            MissingPolicy::Zero
        } else {
            MissingPolicy::Error
        }
    }
}

/// Per-query metrics. All values are fractions in [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryReport {
    pub query: String,
    /// n_q, the number of positives of the query.
    pub n_positives: usize,
    /// Number of results listed for the query (absent when evaluated from counts).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub n_results: Option<usize>,
    /// The query had no results and was counted as 0 (`--missing-as-zero`).
    pub missing: bool,
    /// ILIAS AP@k.
    pub ap_at_k: f64,
    /// GLDv2 official AP@100.
    pub gldv2_ap_at_100: f64,
    /// Untruncated AP over the whole list (divisor n_q).
    pub ap_full: f64,
    /// Positives in the top k over n_q.
    pub recall_at_k: f64,
    /// 1 when the top item is relevant.
    pub hit_at_1: f64,
    /// Pairs (positive, non-relevant item) with equal scores: in the results list, or from a
    /// summary's tie counts `Σ_j T_j`; None when a summary's ties are unknown (format 1).
    pub tied_pairs: Option<u64>,
    /// The requested metrics of the vocabulary, by canonical name (`map@100`, `hit@1`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, f64>,
}

impl QueryReport {
    /// Every fixed field at `k`, and `metrics` in `values`, from one ranking (the only place
    /// either path turns a ranking into a report). `n_results` and `tied_pairs` are left for
    /// the caller.
    pub fn from_ranking(
        query: &str,
        ranking: &QueryRanking<'_>,
        k: usize,
        metrics: &[MetricName],
    ) -> Self {
        use super::names::MetricKind;
        QueryReport {
            query: query.to_string(),
            n_positives: ranking.n_positives(),
            n_results: None,
            missing: false,
            ap_at_k: ranking.value(MetricName::map(k)),
            gldv2_ap_at_100: ranking.value(MetricName::new(MetricKind::Gldv2Map, 100)),
            ap_full: ranking.value(MetricName {
                kind: MetricKind::Ap,
                k: None,
            }),
            recall_at_k: ranking.value(MetricName::recall(k)),
            hit_at_1: ranking.value(MetricName::HIT_1),
            tied_pairs: None,
            values: metrics
                .iter()
                .map(|&m| (m.to_string(), ranking.value(m)))
                .collect(),
        }
    }

    /// A query counted as 0 on every metric.
    fn zero(query: &str, n_positives: usize, missing: bool, metrics: &[MetricName]) -> Self {
        QueryReport {
            query: query.to_string(),
            n_positives,
            n_results: None,
            missing,
            ap_at_k: 0.0,
            gldv2_ap_at_100: 0.0,
            ap_full: 0.0,
            recall_at_k: 0.0,
            hit_at_1: 0.0,
            tied_pairs: Some(0),
            values: metrics.iter().map(|m| (m.to_string(), 0.0)).collect(),
        }
    }
}

/// Metrics of one query set: means over its queries (fractions in [0, 1]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetReport {
    pub name: String,
    pub n_queries: usize,
    /// Queries without results, counted as 0.
    pub n_missing: usize,
    pub map_at_k: f64,
    pub gldv2_map_at_100: f64,
    pub map_full: f64,
    pub recall_at_k: f64,
    pub hit_at_1: f64,
    /// Σ of the queries' `tied_pairs`; None when any is unknown.
    pub tied_pairs: Option<u64>,
    /// Means of the queries' `values`, by metric name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, f64>,
    pub queries: Vec<QueryReport>,
}

impl SetReport {
    /// The set's value of `m` (resolved), from `values` or the fixed fields at `k`.
    pub fn value(&self, m: MetricName, k: usize) -> Option<f64> {
        use super::names::MetricKind;
        if let Some(&v) = self.values.get(&m.to_string()) {
            return Some(v);
        }
        match (m.kind, m.k) {
            (MetricKind::Map, Some(mk)) if mk == k => Some(self.map_at_k),
            (MetricKind::Recall, Some(mk)) if mk == k => Some(self.recall_at_k),
            (MetricKind::Hit, Some(1)) => Some(self.hit_at_1),
            (MetricKind::Gldv2Map, Some(100)) => Some(self.gldv2_map_at_100),
            (MetricKind::Ap, _) => Some(self.map_full),
            _ => None,
        }
    }

    fn from_queries(name: &str, queries: Vec<QueryReport>) -> Self {
        let n = queries.len().max(1) as f64;
        let mean = |f: fn(&QueryReport) -> f64| queries.iter().map(f).sum::<f64>() / n;
        let mut values: BTreeMap<String, f64> = BTreeMap::new();
        for q in &queries {
            for (name, v) in &q.values {
                *values.entry(name.clone()).or_default() += v / n;
            }
        }
        SetReport {
            name: name.to_string(),
            n_queries: queries.len(),
            n_missing: queries.iter().filter(|q| q.missing).count(),
            map_at_k: mean(|q| q.ap_at_k),
            gldv2_map_at_100: mean(|q| q.gldv2_ap_at_100),
            map_full: mean(|q| q.ap_full),
            recall_at_k: mean(|q| q.recall_at_k),
            hit_at_1: mean(|q| q.hit_at_1),
            tied_pairs: queries.iter().map(|q| q.tied_pairs).sum(),
            values,
            queries,
        }
    }
}

/// The full machine-readable evaluation (what `tailrank eval --json` prints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub tool_version: String,
    /// `results` (a results JSON) or `summary` (per-positive counts of a whole-pool scan).
    pub source: String,
    /// The cut k of `*_at_k` fields.
    pub k: usize,
    /// Unit of every metric value: `fraction` (in [0, 1]; tables print percent).
    pub unit: String,
    pub sets: Vec<SetReport>,
    /// Non-fatal findings (e.g. results for queries that are in no query set).
    pub warnings: Vec<String>,
}

/// All metrics of one query from its results (file order) and positives (the fixed fields at
/// `k`, and `metrics` in `values`).
pub fn evaluate_query(
    query: &str,
    items: &[(String, f64)],
    positives: &[String],
    k: usize,
    metrics: &[MetricName],
) -> QueryReport {
    let pos: HashSet<&str> = positives.iter().map(String::as_str).collect();
    let (sorted, ids, relevant) = ranked(items, &pos);
    let ranking = QueryRanking::List {
        scores: &sorted,
        relevant: &relevant,
        ids: &ids,
        positives: &pos,
    };
    let mut r = QueryReport::from_ranking(query, &ranking, k, metrics);
    r.n_results = Some(items.len());
    r.tied_pairs = Some(tied_pairs(&sorted, &relevant));
    r
}

/// All metrics of one query from per-positive counts. `pos` sorted by score descending (all
/// n_q positives of the query). Ranks `r_j = j + C_j + K_j + T_j` (the positives last in their
/// tie block); equal positive scores form a block whose positives get the precision at the
/// block's end `e / r_e` (cut at `k`: a straddling block is cut and its kept positives get the
/// precision at rank k). Recall@k, hit@k and GLDv2 AP@k use the same ranks. `metrics` are
/// recorded in the report's `values` besides the fixed fields at `k`.
pub fn evaluate_counts_with(
    query: &str,
    pos: &[PositiveCounts],
    k: usize,
    metrics: &[MetricName],
) -> QueryReport {
    let ranks = ranks(pos);
    let ranking = QueryRanking::Counts {
        positives: pos,
        ranks: &ranks,
    };
    let mut r = QueryReport::from_ranking(query, &ranking, k, metrics);
    r.tied_pairs = Some(pos.iter().map(|p| p.ties).sum());
    r
}

/// [`evaluate_counts_with`] without extra metrics.
pub fn evaluate_counts(query: &str, pos: &[PositiveCounts], k: usize) -> QueryReport {
    evaluate_counts_with(query, pos, k, &[])
}

/// Evaluate a results file against query sets. A query of a set missing from the results is an
/// error naming it and the results file, or a 0 flagged `missing` with
/// [`MissingPolicy::Zero`]. Results for queries in no set are reported as a warning.
///
/// When several sets are given and a set has no query at all in the results (e.g. an image-only
/// results file against the ILIAS ground truth with its text set), that set is skipped with a
/// warning; it is an error when no set has any result. A single set, and a set chosen by name
/// (`opts.chosen_sets`), is always evaluated.
pub fn evaluate_results_for(
    sets: &[QuerySet],
    results: &Results,
    opts: &EvalOptions,
) -> Result<EvalReport> {
    let (k, missing) = (opts.k, opts.missing);
    check_k(k)?;
    let metrics = opts.resolved();
    let cuts = printed_cuts(k, &metrics);
    // A list this short misses a positive that a printed column counts; the full AP counts
    // every positive, so for it any list without one is flagged.
    let full_ap = metrics.iter().any(|m| m.cut() == usize::MAX);
    let deepest = match full_ap {
        true => usize::MAX,
        false => cuts.iter().copied().max().unwrap_or(k),
    };
    let mut out = Vec::with_capacity(sets.len());
    let mut known: HashSet<&str> = HashSet::new();
    let mut warnings = Vec::new();
    for set in sets {
        known.extend(set.query_ids.iter().map(String::as_str));
        let covered = set.query_ids.iter().any(|q| results.get(q).is_some());
        if !covered && sets.len() > 1 && !opts.chosen_sets {
            warnings.push(format!(
                "{}: no query of set {:?} has results; set skipped",
                results.path.display(),
                set.name
            ));
            continue;
        }
        let mut qs = Vec::with_capacity(set.query_ids.len());
        let mut order_decides: Vec<(usize, &str)> = Vec::new();
        let mut short: Vec<&str> = Vec::new();
        for (q, pos) in set.query_ids.iter().zip(&set.positives) {
            match results.get(q) {
                Some(r) => {
                    for &c in cuts
                        .iter()
                        .filter(|&&c| order_decides_at_cut(&r.items, pos, c))
                    {
                        order_decides.push((c, q));
                    }
                    if short_list_misses_positive(&r.items, pos, deepest) {
                        short.push(q);
                    }
                    qs.push(evaluate_query(q, &r.items, pos, k, &metrics))
                }
                None => match missing {
                    MissingPolicy::Error => {
                        return Err(Error::mismatch_at(
                            &results.path,
                            format!(
                                "query {q:?} of query set {:?} has no results (it \
                                 counts as 0 only under the missing-as-zero policy)",
                                set.name
                            ),
                        ))
                    }
                    MissingPolicy::Zero => qs.push(QueryReport::zero(q, pos.len(), true, &metrics)),
                },
            }
        }
        for (c, qs) in by_cut(&cuts, &order_decides) {
            warnings.push(format!(
                "{}: set {:?}: for {} quer{} (first: {:?}) a tie block straddles the cut at k = \
                 {c} holding relevant and non-relevant items: the metric at that cut depends on \
                 the order inside the block; the file's order is used (non-relevant first gives \
                 the scan summary's value, docs/reference/metrics.md)",
                results.path.display(),
                set.name,
                qs.len(),
                if qs.len() == 1 { "y" } else { "ies" },
                &qs[..qs.len().min(5)]
            ));
        }
        if !short.is_empty() {
            let (which, advice) = match deepest {
                usize::MAX => (
                    "with a positive not listed".to_string(),
                    "the full AP counts it as not retrieved, so lists cut by the search (e.g. \
                     at 1000) give a lower full AP than the whole ranking would",
                ),
                d => (
                    format!("with fewer than k = {d} items listed and a positive not among them"),
                    "a positive not listed counts as not retrieved; if the search kept fewer \
                     items, evaluate at its depth with --k",
                ),
            };
            warnings.push(format!(
                "{}: set {:?}: {} quer{} {which} (first: {:?}): {advice}",
                results.path.display(),
                set.name,
                short.len(),
                if short.len() == 1 { "y" } else { "ies" },
                &short[..short.len().min(5)]
            ));
        }
        out.push(SetReport::from_queries(&set.name, qs));
    }
    if out.is_empty() {
        let names: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
        return Err(Error::mismatch_at(
            &results.path,
            format!("no query of the ground truth (sets {names:?}) has results"),
        ));
    }
    let unknown: Vec<&str> = results
        .queries
        .iter()
        .map(|q| q.query.as_str())
        .filter(|q| !known.contains(q))
        .collect();
    if !unknown.is_empty() {
        warnings.push(format!(
            "{}: {} result quer{} in no query set of the ground truth, ignored (first: {:?})",
            results.path.display(),
            unknown.len(),
            if unknown.len() == 1 {
                "y is"
            } else {
                "ies are"
            },
            &unknown[..unknown.len().min(5)]
        ));
    }
    Ok(EvalReport {
        tool_version: crate::TOOL_VERSION.to_string(),
        source: "results".to_string(),
        k,
        unit: "fraction".to_string(),
        sets: out,
        warnings,
    })
}

/// [`evaluate_results_for`] without extra metrics.
pub fn evaluate_results(
    sets: &[QuerySet],
    results: &Results,
    k: usize,
    missing: MissingPolicy,
) -> Result<EvalReport> {
    evaluate_results_for(sets, results, &EvalOptions::new(k, missing))
}

/// The query sets named in `names`, in the ground truth's order (all of them when `names` is
/// empty); a name the ground truth lacks is an error listing the names it has.
pub fn select_sets(sets: Vec<QuerySet>, names: &[String]) -> Result<Vec<QuerySet>> {
    if names.is_empty() {
        return Ok(sets);
    }
    let have: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
    if let Some(n) = names.iter().find(|n| !have.contains(&n.as_str())) {
        return Err(Error::mismatch(format!(
            "the ground truth has no query set {n:?} (it has {have:?})"
        )));
    }
    Ok(sets
        .into_iter()
        .filter(|s| names.contains(&s.name))
        .collect())
}

/// The query set of the ground truth `sets` that summary `s` (read from `path`) is checked
/// against: none when `sets` is empty, the only one, else the one named as the summary's
/// query set; several sets without that name are an error naming the summary.
pub fn set_for_summary<'a>(
    sets: &'a [QuerySet],
    s: &Summary,
    path: &std::path::Path,
) -> Result<Option<&'a QuerySet>> {
    match sets {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        _ => match sets.iter().find(|q| q.name == s.query_set) {
            Some(set) => Ok(Some(set)),
            None => {
                let names: Vec<&str> = sets.iter().map(|q| q.name.as_str()).collect();
                Err(Error::mismatch(format!(
                    "summary {} is for query set {:?}, which the ground truth lacks (it has \
                     {names:?})",
                    path.display(),
                    s.query_set
                )))
            }
        },
    }
}

/// Exact metrics from a summary that covers the whole pool ([`Summary::is_exact`]), using the
/// level-0 counts `pool_above[0]`. One set, named after `s.query_set`.
pub fn evaluate_summary(s: &Summary, k: usize) -> Result<EvalReport> {
    evaluate_summary_for_set(s, None, k, MissingPolicy::Error)
}

/// [`evaluate_summary_with`] without extra metrics.
pub fn evaluate_summary_for_set(
    s: &Summary,
    set: Option<&QuerySet>,
    k: usize,
    missing: MissingPolicy,
) -> Result<EvalReport> {
    evaluate_summary_with(s, set, &EvalOptions::new(k, missing))
}

/// [`evaluate_summary`], checked against a query set of the ground truth when one is given:
/// every query of the set must be in the summary (else an error, or 0 with
/// [`MissingPolicy::Zero`]) with the same positives; summary queries outside the set are
/// ignored with a warning. Without a set, every summary query is evaluated.
pub fn evaluate_summary_with(
    s: &Summary,
    set: Option<&QuerySet>,
    opts: &EvalOptions,
) -> Result<EvalReport> {
    let (k, missing) = (opts.k, opts.missing);
    check_k(k)?;
    let metrics = opts.resolved();
    if !s.is_exact() {
        let seen = s.subset_sizes.first().copied().unwrap_or(0);
        let n = s.pool_size.map_or("?".to_string(), |n| n.to_string());
        let what = if s.increment_range().is_some() {
            "is the increment of a sample (`scan --after`): grow its base with it \
             (`tailrank grow`) and predict from the grown summary (`tailrank predict`)"
                .to_string()
        } else if s.fraction >= 1.0 {
            format!(
                "holds {seen} of {n} pool items, scanned at fraction 1: a shard of the pool; \
                 merge the other shards (`tailrank merge`) for the exact metrics"
            )
        } else {
            format!(
                "is a sample (fraction {}, {seen} of {n} pool items seen): exact metrics need a \
                 whole-pool scan; use `tailrank predict`",
                s.fraction
            )
        };
        return Err(Error::mismatch(format!(
            "summary of query set {:?} {what}",
            s.query_set
        )));
    }
    let mut warnings = Vec::new();
    let mut order_decides: Vec<(usize, String)> = Vec::new();
    let cuts = printed_cuts(k, &metrics);
    let mut counts_of = |q: &str, qi: usize| -> Result<Vec<PositiveCounts>> {
        let pos = positive_counts(s, qi, 0)?;
        for &c in (cuts.iter()).filter(|&&c| super::counts::mixed_block_at_cut_counts(&pos, c)) {
            order_decides.push((c, q.to_string()));
        }
        Ok(pos)
    };
    let mut queries = match set {
        None => {
            let mut seen = HashSet::new();
            let mut qs = Vec::with_capacity(s.queries.len());
            for (qi, q) in s.queries.iter().enumerate() {
                if !seen.insert(q.id.as_str()) {
                    return Err(Error::input_msg(format!(
                        "summary: query {:?} appears twice",
                        q.id
                    )));
                }
                qs.push(evaluate_counts_with(
                    &q.id,
                    &counts_of(&q.id, qi)?,
                    k,
                    &metrics,
                ));
            }
            qs
        }
        Some(set) => {
            let index: std::collections::HashMap<&str, usize> = s
                .queries
                .iter()
                .enumerate()
                .map(|(i, q)| (q.id.as_str(), i))
                .collect();
            let mut qs = Vec::with_capacity(set.len());
            for (q, gt) in set.query_ids.iter().zip(&set.positives) {
                match index.get(q.as_str()) {
                    Some(&qi) => {
                        let have: HashSet<&str> = s.queries[qi]
                            .positives
                            .iter()
                            .map(|p| p.id.as_str())
                            .collect();
                        let want: HashSet<&str> = gt.iter().map(String::as_str).collect();
                        if have != want {
                            return Err(Error::mismatch(format!(
                                "summary query {q:?}: its {} positives differ from the {} of the \
                                 ground truth (set {:?})",
                                have.len(),
                                want.len(),
                                set.name
                            )));
                        }
                        qs.push(evaluate_counts_with(q, &counts_of(q, qi)?, k, &metrics));
                    }
                    None => match missing {
                        MissingPolicy::Error => {
                            return Err(Error::mismatch(format!(
                                "query {q:?} of query set {:?} is not in the summary (it \
                                 counts as 0 only under the missing-as-zero policy)",
                                set.name
                            )))
                        }
                        MissingPolicy::Zero => {
                            qs.push(QueryReport::zero(q, gt.len(), true, &metrics))
                        }
                    },
                }
            }
            let known: HashSet<&str> = set.query_ids.iter().map(String::as_str).collect();
            let extra = s
                .queries
                .iter()
                .filter(|q| !known.contains(q.id.as_str()))
                .count();
            if extra > 0 {
                warnings.push(format!(
                    "summary holds {extra} queries in no query set of the ground truth, ignored"
                ));
            }
            qs
        }
    };
    let order_decides: Vec<(usize, &str)> = (order_decides.iter())
        .map(|(c, q)| (*c, q.as_str()))
        .collect();
    for (c, qs) in by_cut(&cuts, &order_decides) {
        warnings.push(format!(
            "summary: for {} quer{} (first: {:?}) a tie block holds the cut at k = {c} with \
             relevant and non-relevant items: the official metric at that cut depends on the \
             order inside the block; the value given is its lowest, non-relevant first \
             (docs/reference/metrics.md)",
            qs.len(),
            if qs.len() == 1 { "y" } else { "ies" },
            &qs[..qs.len().min(5)]
        ));
    }
    if let Some(w) = s.ties_unknown_warning() {
        for q in &mut queries {
            q.tied_pairs = None;
        }
        warnings.push(w);
    }
    Ok(EvalReport {
        tool_version: crate::TOOL_VERSION.to_string(),
        source: "summary".to_string(),
        k,
        unit: "fraction".to_string(),
        sets: vec![SetReport::from_queries(&s.query_set, queries)],
        warnings,
    })
}
