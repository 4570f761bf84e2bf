//! Exact retrieval metrics (docs/method.md §3): ILIAS mAP@k from a ranked list (tie blocks), from
//! per-positive counts, and the variants (GLDv2 mAP@100, full AP, Recall@k, hit@1).
//!
//! The rank-based core, shared with the prediction maps: for a query with `n` positives whose
//! (possibly real-valued, e.g. expected) ranks in positive order are `r_1 ≤ r_2 ≤ … ≤ r_n`,
//!
//! ```text
//! AP@k = 1/min(k, n) · Σ_{j : r_j ≤ k} j / r_j
//! ```
//!
//! **Ranked lists (ILIAS semantics).** A query's results are sorted by score, descending, with a
//! *stable* sort: equal scores keep the order of the results file. The list is cut after its
//! first `k` items. In the cut list, items of equal score form a block, and every relevant item
//! of a block gets the precision at the end of the block:
//!
//! ```text
//! AP@k = 1/min(k, n) · Σ_{blocks B ⊆ top-k} hits(B) · H(end B) / end(B)
//! ```
//!
//! with `H(i)` the relevant items among the first `i`. This is what the official evaluator gets
//! from `sklearn.metrics.average_precision_score(y_true[:k], y_score[:k]) · hits / min(k, n)`.
//! **Tie block straddling the cut**: the block is cut too (its items in file order up to rank
//! `k` are kept; the relevant ones among them get the precision at rank `k`). The official code
//! truncates after `np.argsort(-scores)`, so it does the same whenever numpy keeps tied scores in
//! input order (it does for a stable sort); its default quicksort may permute ties, which makes
//! the official number itself ill-defined for such a block — ours is the deterministic version.
//!
//! **From counts** (`docs/metrics.md`): positives sorted by score,
//!
//! ```text
//! r_j = j + C_j + K_j + T_j
//! ```
//!
//! with `C_j`, `K_j` the non-relevant core and pool items scoring strictly above `s_j` and
//! `T_j = T^C_j + T^K_j` those scoring exactly `s_j` (f32 `==`). This is the rank of positive j
//! in the ranked list whose tie blocks hold their non-relevant items first and their positives
//! last; positives of equal score form a block, and [`ap_at_k_ties`]'s rule applies: a block
//! inside the cut gives each of its positives the precision at its end, `e / r_e` (the block's
//! last position, whatever the order inside it, as sklearn's one threshold per distinct score
//! does); a block straddling the cut keeps the positives ranked ≤ k under that order, each
//! with the precision at rank k. So the counts give the ranked-list value exactly for every
//! block that ends within k, and for a straddling block the value of the order "non-relevant
//! first" (the lowest the official code can give; its `np.argsort` default order decides it
//! there, see `docs/metrics.md`). Summaries without tie counts (`T_j = 0`, format version 1)
//! resolve ties in the positive's favour.

use crate::error::{Error, Result};
use crate::formats::gt::QuerySet;
use crate::formats::results::Results;
use crate::scan::summary::Summary;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// AP@k from the ranks of a query's positives, in positive order (`ranks[j-1]` is the rank of
/// the j-th best positive, `ranks[j-1] ≥ j`). `n_pos` is the number of positives of the query
/// (positives beyond `ranks.len()` are treated as never retrieved).
///
/// `AP@k = 1/min(k, n_pos) · Σ_{j ≤ ranks.len(), r_j ≤ k} j / r_j`; 0 when `k == 0` or
/// `n_pos == 0`.
pub fn ap_at_k_from_ranks(ranks: &[f64], n_pos: usize, k: usize) -> f64 {
    if k == 0 || n_pos == 0 {
        return 0.0;
    }
    let kf = k as f64;
    let sum: f64 = ranks
        .iter()
        .enumerate()
        .filter(|(_, &r)| r <= kf)
        .map(|(i, &r)| (i + 1) as f64 / r)
        .sum();
    sum / k.min(n_pos) as f64
}

/// Rank of the j-th positive (1-based `j`) from counts: `r_j = j + C_j + K_j` where `C_j`
/// (`core_above`) and `K_j` (`pool_above`) count non-relevant core and pool items scoring
/// strictly above it.
#[inline]
pub fn rank_from_counts(j: usize, core_above: u64, pool_above: f64) -> f64 {
    j as f64 + core_above as f64 + pool_above
}

// ---------------------------------------------------------------------------------------------
// Ranked lists
// ---------------------------------------------------------------------------------------------

/// Order of `scores` by score descending, ties in input order (stable). Scores must not be NaN.
pub fn rank_order(scores: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    // Plain float comparison (−0.0 == 0.0, as in numpy); `sort_by` is stable.
    idx.sort_by(|&a, &b| {
        scores[b]
            .partial_cmp(&scores[a])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    idx
}

/// ILIAS AP@k of a ranked list: `scores` sorted descending (ties in the order to use at the
/// cut), `relevant[i]` whether item `i` is relevant, `n_pos` the number of positives of the
/// query. Cut after `k` items; each relevant item gets the precision at the end of its tie block
/// within the cut list; divisor `min(k, n_pos)`. `k = usize::MAX` gives the full AP (divisor
/// `n_pos`). 0 when `k == 0`, `n_pos == 0` or no hit.
pub fn ap_at_k_ties(scores: &[f64], relevant: &[bool], n_pos: usize, k: usize) -> f64 {
    assert_eq!(
        scores.len(),
        relevant.len(),
        "scores and relevance differ in length"
    );
    if k == 0 || n_pos == 0 {
        return 0.0;
    }
    let m = k.min(scores.len());
    let mut hits = 0usize;
    let mut block_hits = 0usize;
    let mut sum = 0.0;
    for i in 0..m {
        if relevant[i] {
            hits += 1;
            block_hits += 1;
        }
        let block_ends = i + 1 == m || scores[i + 1] != scores[i];
        if block_ends {
            if block_hits > 0 {
                sum += block_hits as f64 * hits as f64 / (i + 1) as f64;
            }
            block_hits = 0;
        }
    }
    sum / k.min(n_pos) as f64
}

/// GLDv2 official AP@k (the Kaggle metric, `k = 100`) of a ranked list of predicted ids: no tie
/// grouping; a relevant id at rank `i` earns `hits/i` the first time it appears; a repeated id
/// uses its rank but earns nothing. Divisor `min(n_pos, k)`.
pub fn gldv2_ap_at_k(
    ranked_ids: &[&str],
    positives: &HashSet<&str>,
    n_pos: usize,
    k: usize,
) -> f64 {
    if k == 0 || n_pos == 0 {
        return 0.0;
    }
    let mut seen: HashSet<&str> = HashSet::new();
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (i, id) in ranked_ids.iter().take(k).enumerate() {
        if seen.insert(id) && positives.contains(id) {
            hits += 1;
            sum += hits as f64 / (i + 1) as f64;
        }
    }
    sum / n_pos.min(k) as f64
}

/// Recall@k of a ranked list: relevant items among the first `k`, over `n_pos`.
pub fn recall_at_k(relevant: &[bool], n_pos: usize, k: usize) -> f64 {
    if n_pos == 0 {
        return 0.0;
    }
    relevant.iter().take(k).filter(|&&r| r).count() as f64 / n_pos as f64
}

/// hit@1 of a ranked list: 1 when the first item is relevant (ties at the top: file order).
pub fn hit_at_1(relevant: &[bool]) -> f64 {
    if relevant.first().copied().unwrap_or(false) {
        1.0
    } else {
        0.0
    }
}

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------

/// The metrics `tailrank eval` can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// ILIAS mAP@k (tie blocks).
    Map,
    /// GLDv2 official mAP@100.
    Gldv2Map100,
    /// Full, untruncated AP (mean over queries).
    Ap,
    /// Recall@k (mean over queries).
    Recall,
    /// hit@1 (mean over queries).
    Hit1,
}

impl Metric {
    /// All metrics, in table order.
    pub const ALL: [Metric; 5] = [
        Metric::Map,
        Metric::Gldv2Map100,
        Metric::Ap,
        Metric::Recall,
        Metric::Hit1,
    ];

    /// Parse a CLI name: `map`, `gldv2-map100`, `ap`, `recall`, `hit1`.
    pub fn parse(s: &str) -> Result<Metric> {
        Ok(match s {
            "map" => Metric::Map,
            "gldv2-map100" => Metric::Gldv2Map100,
            "ap" => Metric::Ap,
            "recall" => Metric::Recall,
            "hit1" => Metric::Hit1,
            _ => {
                return Err(Error::invalid(format!(
                    "unknown metric {s:?} (use map, gldv2-map100, ap, recall, hit1)"
                )))
            }
        })
    }

    /// Column title in the human table.
    pub fn title(self, k: usize) -> String {
        match self {
            Metric::Map => format!("mAP@{k}"),
            Metric::Gldv2Map100 => "GLDv2 mAP@100".to_string(),
            Metric::Ap => "mAP(full)".to_string(),
            Metric::Recall => format!("R@{k}"),
            Metric::Hit1 => "hit@1".to_string(),
        }
    }

    /// The set-level value of this metric (a fraction).
    pub fn of(self, s: &SetReport) -> f64 {
        match self {
            Metric::Map => s.map_at_k,
            Metric::Gldv2Map100 => s.gldv2_map_at_100,
            Metric::Ap => s.map_full,
            Metric::Recall => s.recall_at_k,
            Metric::Hit1 => s.hit_at_1,
        }
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
}

impl QueryReport {
    fn zero(query: &str, n_positives: usize, missing: bool) -> Self {
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
    pub queries: Vec<QueryReport>,
}

impl SetReport {
    fn from_queries(name: &str, queries: Vec<QueryReport>) -> Self {
        let n = queries.len().max(1) as f64;
        let mean = |f: fn(&QueryReport) -> f64| queries.iter().map(f).sum::<f64>() / n;
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

impl EvalReport {
    /// Human table: one row per query set, the chosen metrics in percent with 2 decimals.
    pub fn table(&self, metrics: &[Metric]) -> String {
        let metrics = if metrics.is_empty() {
            &[Metric::Map][..]
        } else {
            metrics
        };
        let name_w = self
            .sets
            .iter()
            .map(|s| s.name.len())
            .max()
            .unwrap_or(0)
            .max("query set".len());
        let titles: Vec<String> = metrics.iter().map(|m| m.title(self.k)).collect();
        let mut out = format!("{:<name_w$}  {:>7}", "query set", "queries");
        for t in &titles {
            out.push_str(&format!("  {:>w$}", t, w = t.len().max(7)));
        }
        out.push('\n');
        for s in &self.sets {
            out.push_str(&format!("{:<name_w$}  {:>7}", s.name, s.n_queries));
            for (m, t) in metrics.iter().zip(&titles) {
                let v = format!("{:.2}", 100.0 * m.of(s));
                out.push_str(&format!("  {:>w$}", v, w = t.len().max(7)));
            }
            if s.n_missing > 0 {
                out.push_str(&format!("  ({} missing counted as 0)", s.n_missing));
            }
            out.push('\n');
        }
        out.push_str("(percent)\n");
        for s in &self.sets {
            match s.tied_pairs {
                Some(0) => {}
                Some(t) => out.push_str(&format!(
                    "{}: {t} tied positive/non-relevant pair{} (equal scores: official tie \
                     blocks, positives at the block's end)\n",
                    s.name,
                    if t == 1 { "" } else { "s" }
                )),
                None => out.push_str(&format!(
                    "{}: ties unknown (summary without tie counts)\n",
                    s.name
                )),
            }
        }
        out
    }
}

/// All metrics of one query from its results (file order) and positives.
pub fn evaluate_query(
    query: &str,
    items: &[(String, f64)],
    positives: &[String],
    k: usize,
) -> QueryReport {
    let pos: HashSet<&str> = positives.iter().map(String::as_str).collect();
    let n = pos.len();
    let scores: Vec<f64> = items.iter().map(|(_, s)| *s).collect();
    let order = rank_order(&scores);
    let sorted: Vec<f64> = order.iter().map(|&i| scores[i]).collect();
    let ids: Vec<&str> = order.iter().map(|&i| items[i].0.as_str()).collect();
    let relevant: Vec<bool> = ids.iter().map(|id| pos.contains(id)).collect();
    QueryReport {
        query: query.to_string(),
        n_positives: n,
        n_results: Some(items.len()),
        missing: false,
        ap_at_k: ap_at_k_ties(&sorted, &relevant, n, k),
        gldv2_ap_at_100: gldv2_ap_at_k(&ids, &pos, n, 100),
        ap_full: ap_at_k_ties(&sorted, &relevant, n, usize::MAX),
        recall_at_k: recall_at_k(&relevant, n, k),
        hit_at_1: hit_at_1(&relevant),
        tied_pairs: Some(tied_pairs(&sorted, &relevant)),
    }
}

/// Pairs (relevant, non-relevant) of equal score in a list sorted by score (f64 `==`):
/// `Σ_blocks hits(B) · (|B| − hits(B))`.
pub fn tied_pairs(sorted_scores: &[f64], relevant: &[bool]) -> u64 {
    let mut total = 0u64;
    let mut a = 0;
    while a < sorted_scores.len() {
        let mut b = a + 1;
        while b < sorted_scores.len() && sorted_scores[b] == sorted_scores[a] {
            b += 1;
        }
        let hits = relevant[a..b].iter().filter(|&&r| r).count() as u64;
        total += hits * ((b - a) as u64 - hits);
        a = b;
    }
    total
}

fn check_k(k: usize) -> Result<()> {
    if k == 0 {
        return Err(Error::invalid("k must be at least 1"));
    }
    Ok(())
}

/// Evaluate a results file against query sets. A query of a set missing from the results is an
/// error naming it and the results file, or a 0 flagged `missing` with
/// [`MissingPolicy::Zero`]. Results for queries in no set are reported as a warning.
///
/// When several sets are given and a set has no query at all in the results (e.g. an image-only
/// results file against the ILIAS ground truth with its text set), that set is skipped with a
/// warning; it is an error when no set has any result. A single set is always evaluated.
pub fn evaluate_results(
    sets: &[QuerySet],
    results: &Results,
    k: usize,
    missing: MissingPolicy,
) -> Result<EvalReport> {
    check_k(k)?;
    let mut out = Vec::with_capacity(sets.len());
    let mut known: HashSet<&str> = HashSet::new();
    let mut warnings = Vec::new();
    for set in sets {
        known.extend(set.query_ids.iter().map(String::as_str));
        let covered = set.query_ids.iter().any(|q| results.get(q).is_some());
        if !covered && sets.len() > 1 {
            warnings.push(format!(
                "{}: no query of set {:?} has results; set skipped",
                results.path.display(),
                set.name
            ));
            continue;
        }
        let mut qs = Vec::with_capacity(set.query_ids.len());
        for (q, pos) in set.query_ids.iter().zip(&set.positives) {
            match results.get(q) {
                Some(r) => qs.push(evaluate_query(q, &r.items, pos, k)),
                None => match missing {
                    MissingPolicy::Error => {
                        return Err(Error::file(
                            &results.path,
                            format!(
                                "query {q:?} of query set {:?} has no results (use \
                                 --missing-as-zero to count it as 0)",
                                set.name
                            ),
                        ))
                    }
                    MissingPolicy::Zero => qs.push(QueryReport::zero(q, pos.len(), true)),
                },
            }
        }
        out.push(SetReport::from_queries(&set.name, qs));
    }
    if out.is_empty() {
        let names: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
        return Err(Error::file(
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

// ---------------------------------------------------------------------------------------------
// From counts
// ---------------------------------------------------------------------------------------------

/// One positive for the counts path: score, `C_j`, `K_j` and the ties `T_j = T^C_j + T^K_j`
/// (non-relevant core and pool items scoring exactly `s_j`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositiveCounts {
    pub score: f32,
    pub core_above: u64,
    pub pool_above: u64,
    pub ties: u64,
}

/// All metrics of one query from per-positive counts. `pos` sorted by score descending (all
/// n_q positives of the query). Ranks `r_j = j + C_j + K_j + T_j` (the positives last in their
/// tie block); equal positive scores form a block whose positives get the precision at the
/// block's end `e / r_e` (cut at `k`: a straddling block is cut and its kept positives get the
/// precision at rank k). Recall@k, hit@1 and GLDv2 AP@100 use the same ranks.
pub fn evaluate_counts(query: &str, pos: &[PositiveCounts], k: usize) -> QueryReport {
    let n = pos.len();
    let ranks: Vec<f64> = pos
        .iter()
        .enumerate()
        .map(|(i, p)| rank_from_counts(i + 1, p.core_above + p.ties, p.pool_above as f64))
        .collect();
    QueryReport {
        query: query.to_string(),
        n_positives: n,
        n_results: None,
        missing: false,
        ap_at_k: ap_from_counts_blocks(pos, &ranks, k),
        gldv2_ap_at_100: ap_at_k_from_ranks(&ranks, n, 100),
        ap_full: ap_from_counts_blocks(pos, &ranks, usize::MAX),
        recall_at_k: if n == 0 {
            0.0
        } else {
            ranks.iter().filter(|&&r| r <= k as f64).count() as f64 / n as f64
        },
        hit_at_1: if ranks.first() == Some(&1.0) {
            1.0
        } else {
            0.0
        },
        tied_pairs: Some(pos.iter().map(|p| p.ties).sum()),
    }
}

/// ILIAS AP@k from counts with positive tie blocks (see [`evaluate_counts`]).
fn ap_from_counts_blocks(pos: &[PositiveCounts], ranks: &[f64], k: usize) -> f64 {
    let n = pos.len();
    if k == 0 || n == 0 {
        return 0.0;
    }
    let kf = k as f64;
    let mut sum = 0.0;
    let mut j = 0;
    while j < n {
        let mut e = j;
        while e + 1 < n && pos[e + 1].score == pos[j].score {
            e += 1;
        }
        // Block j..=e (0-based), ranks contiguous under the counts' tie rule.
        let in_cut = (j..=e).filter(|&i| ranks[i] <= kf).count();
        if in_cut > 0 {
            let end_rank = ranks[e];
            let prec = if end_rank <= kf {
                (e + 1) as f64 / end_rank
            } else {
                // Straddling block: precision at rank k = positives ranked ≤ k, over k.
                (j + in_cut) as f64 / kf
            };
            sum += in_cut as f64 * prec;
        }
        j = e + 1;
    }
    sum / k.min(n) as f64
}

/// The per-positive counts of query `qi` of a summary, at subset `subset` (0: the level-0
/// sample; in exact mode the whole pool), in the summary's positive order (score descending).
/// With a sample level this gives the "evaluate-at-S" gallery (core plus the S_ℓ sampled items)
/// through [`evaluate_counts`]. Errors on a missing count, a non-finite score or unsorted
/// positives.
pub fn positive_counts(s: &Summary, qi: usize, subset: usize) -> Result<Vec<PositiveCounts>> {
    let Some(q) = s.queries.get(qi) else {
        return Err(Error::invalid(format!(
            "summary has {} queries, no query index {qi}",
            s.queries.len()
        )));
    };
    let mut out = Vec::with_capacity(q.positives.len());
    for (j, p) in q.positives.iter().enumerate() {
        let Some(&k0) = p.pool_above.get(subset) else {
            return Err(Error::invalid(format!(
                "summary query {:?}: positive {:?} has no pool count for subset {subset}",
                q.id, p.id
            )));
        };
        if !p.score.is_finite() {
            return Err(Error::invalid(format!(
                "summary query {:?}: positive {:?} has a non-finite score",
                q.id, p.id
            )));
        }
        if j > 0 && p.score > q.positives[j - 1].score {
            return Err(Error::invalid(format!(
                "summary query {:?}: positives are not sorted by score, descending (at {:?})",
                q.id, p.id
            )));
        }
        out.push(PositiveCounts {
            score: p.score,
            core_above: p.core_above,
            pool_above: k0,
            ties: p.core_ties + p.pool_tie(subset),
        });
    }
    if out.is_empty() {
        return Err(Error::invalid(format!(
            "summary query {:?} has no positives",
            q.id
        )));
    }
    Ok(out)
}

/// Exact metrics from a summary that covers the whole pool ([`Summary::is_exact`]), using the
/// level-0 counts `pool_above[0]`. One set, named after `s.query_set`.
pub fn evaluate_summary(s: &Summary, k: usize) -> Result<EvalReport> {
    evaluate_summary_for_set(s, None, k, MissingPolicy::Error)
}

/// [`evaluate_summary`], checked against a query set of the ground truth when one is given:
/// every query of the set must be in the summary (else an error, or 0 with
/// [`MissingPolicy::Zero`]) with the same positives; summary queries outside the set are
/// ignored with a warning. Without a set, every summary query is evaluated.
pub fn evaluate_summary_for_set(
    s: &Summary,
    set: Option<&QuerySet>,
    k: usize,
    missing: MissingPolicy,
) -> Result<EvalReport> {
    check_k(k)?;
    if !s.is_exact() {
        return Err(Error::invalid(format!(
            "summary of query set {:?} is a sample (fraction {}, {} of {} pool items seen): exact \
             metrics need a whole-pool scan; use `tailrank predict`",
            s.query_set,
            s.fraction,
            s.subset_sizes.first().copied().unwrap_or(0),
            s.pool_size.map_or("?".to_string(), |n| n.to_string())
        )));
    }
    let mut warnings = Vec::new();
    let mut queries = match set {
        None => {
            let mut seen = HashSet::new();
            let mut qs = Vec::with_capacity(s.queries.len());
            for (qi, q) in s.queries.iter().enumerate() {
                if !seen.insert(q.id.as_str()) {
                    return Err(Error::invalid(format!(
                        "summary: query {:?} appears twice",
                        q.id
                    )));
                }
                qs.push(evaluate_counts(&q.id, &positive_counts(s, qi, 0)?, k));
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
                            return Err(Error::invalid(format!(
                                "summary query {q:?}: its {} positives differ from the {} of the \
                                 ground truth (set {:?})",
                                have.len(),
                                want.len(),
                                set.name
                            )));
                        }
                        qs.push(evaluate_counts(q, &positive_counts(s, qi, 0)?, k));
                    }
                    None => match missing {
                        MissingPolicy::Error => {
                            return Err(Error::invalid(format!(
                                "query {q:?} of query set {:?} is not in the summary (use \
                                 --missing-as-zero to count it as 0)",
                                set.name
                            )))
                        }
                        MissingPolicy::Zero => qs.push(QueryReport::zero(q, gt.len(), true)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn official_vector_from_ranks() {
        // gt = {a, c, f, z}; ranked a..f: positives a, c, f at ranks 1, 3, 6; z never retrieved.
        let r = [1.0, 3.0, 6.0];
        assert!((ap_at_k_from_ranks(&r, 4, 1000) - 0.541_666_7).abs() < 1e-6);
        assert!((ap_at_k_from_ranks(&r, 4, 3) - 0.555_555_6).abs() < 1e-6);
        assert!((ap_at_k_from_ranks(&r, 4, 2) - 0.5).abs() < 1e-12);
        assert_eq!(ap_at_k_from_ranks(&[], 4, 1000), 0.0);
    }

    #[test]
    fn official_vector_from_list() {
        let items: Vec<(String, f64)> = ["a", "b", "c", "d", "e", "f"]
            .iter()
            .zip([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
            .map(|(i, s)| (i.to_string(), s))
            .collect();
        let gt: Vec<String> = ["a", "c", "f", "z"].iter().map(|s| s.to_string()).collect();
        let ap = |k| evaluate_query("q", &items, &gt, k).ap_at_k;
        assert!((ap(1000) - 0.541_666_7).abs() < 1e-6);
        assert!((ap(3) - 0.555_555_6).abs() < 1e-6);
        assert!((ap(2) - 0.5).abs() < 1e-12);
        let none: Vec<String> = vec!["y".into(), "z".into()];
        assert_eq!(evaluate_query("q", &items, &none, 1000).ap_at_k, 0.0);
    }

    #[test]
    fn tie_block_gets_end_precision() {
        // Scores: r(1.0) n(0.5) r(0.5) n(0.1): block {n, r} ends at 3 with 2 hits.
        let s = [1.0, 0.5, 0.5, 0.1];
        let rel = [true, false, true, false];
        let ap = ap_at_k_ties(&s, &rel, 2, 1000);
        assert!((ap - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
        // Same with the tied items swapped: identical (tie grouping).
        let rel2 = [true, true, false, false];
        assert!((ap_at_k_ties(&s, &rel2, 2, 1000) - ap).abs() < 1e-15);
        // Cut at 2 straddles the block: rel2 keeps the relevant one, precision at rank 2.
        assert!((ap_at_k_ties(&s, &rel2, 2, 2) - (1.0 + 1.0) / 2.0).abs() < 1e-15);
        assert!((ap_at_k_ties(&s, &rel, 2, 2) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn gldv2_duplicates_use_a_rank() {
        let pos: HashSet<&str> = ["a", "b"].into_iter().collect();
        let ap = gldv2_ap_at_k(&["a", "a", "b"], &pos, 2, 100);
        assert!((ap - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
    }

    /// Expand per-positive counts into the ranked list they describe, tie blocks holding their
    /// non-relevant items first: (score, relevant) in rank order. Positive block `b..=e` at
    /// score `s` gets `T_e` non-relevant items of score `s` just before it; strictly-above
    /// items get a score between blocks.
    fn expand(pos: &[PositiveCounts]) -> (Vec<f64>, Vec<bool>) {
        let (mut sc, mut rel) = (Vec::new(), Vec::new());
        let mut placed_above = 0u64;
        let mut j = 0;
        while j < pos.len() {
            let mut e = j;
            while e + 1 < pos.len() && pos[e + 1].score == pos[j].score {
                e += 1;
            }
            let s = pos[j].score as f64;
            let above = pos[j].core_above + pos[j].pool_above;
            for _ in placed_above..above {
                sc.push(s + 0.5e-3);
                rel.push(false);
            }
            placed_above = above + pos[e].ties;
            for _ in 0..pos[e].ties {
                sc.push(s);
                rel.push(false);
            }
            for _ in j..=e {
                sc.push(s);
                rel.push(true);
            }
            j = e + 1;
        }
        (sc, rel)
    }

    #[test]
    fn counts_with_ties_equal_the_ranked_list_rule() {
        // Random queries with positive blocks, non-relevant ties and strictly-above items;
        // every k from 1 to past the list: the counts path equals `ap_at_k_ties` on the list
        // whose tie blocks put the positives last, and Recall@k / hit@1 agree.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        let mut straddles = 0;
        for _ in 0..300 {
            let n = 1 + next(6) as usize;
            let mut pos = Vec::new();
            let mut above = 0u64;
            let mut score = 1.0f32;
            let mut j = 0;
            while j < n {
                let size = (1 + next(3) as usize).min(n - j);
                above += next(4);
                let ties = next(4);
                score -= 0.01;
                for _ in 0..size {
                    pos.push(PositiveCounts {
                        score,
                        core_above: above / 2,
                        pool_above: above - above / 2,
                        ties,
                    });
                }
                // Ties of this block are strictly above the next block's positives.
                above += ties;
                j += size;
            }
            let (sc, rel) = expand(&pos);
            for k in 1..=sc.len() + 2 {
                let r = evaluate_counts("q", &pos, k);
                let want = ap_at_k_ties(&sc, &rel, n, k);
                assert!((r.ap_at_k - want).abs() < 1e-12, "k {k}: {pos:?}");
                assert!((r.recall_at_k - recall_at_k(&rel, n, k)).abs() < 1e-12);
                assert_eq!(r.hit_at_1, hit_at_1(&rel));
                let cut_block = k < sc.len() && sc[k] == sc[k - 1];
                straddles += usize::from(cut_block && rel[..k].iter().any(|&x| !x));
            }
            let full = evaluate_counts("q", &pos, 1);
            assert_eq!(full.tied_pairs, Some(tied_pairs(&sc, &rel)));
            let r = evaluate_counts("q", &pos, usize::MAX);
            assert!((r.ap_full - ap_at_k_ties(&sc, &rel, n, usize::MAX)).abs() < 1e-12);
        }
        assert!(
            straddles > 50,
            "the cases must cut tie blocks ({straddles})"
        );
    }

    #[test]
    fn tie_block_positive_and_nonrelevant_gets_block_end() {
        // The issue's case: one positive tied with 2 non-relevant items at the top: the block
        // ends at rank 3, AP = 1/3 (not 1, which "strictly above" counts alone would give).
        let p = PositiveCounts {
            score: 0.5,
            core_above: 0,
            pool_above: 0,
            ties: 2,
        };
        let r = evaluate_counts("q", &[p], 1000);
        assert!((r.ap_at_k - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(r.hit_at_1, 0.0);
        assert_eq!(r.tied_pairs, Some(2));
        // Cut at 2 inside the block: non-relevant first, the positive is cut off.
        assert_eq!(evaluate_counts("q", &[p], 2).ap_at_k, 0.0);
    }

    #[test]
    fn counts_tie_block_of_positives() {
        // Two tied positives with one non-relevant above: ranks 2, 3, block end 3: 2·(2/3)/2.
        let p = PositiveCounts {
            score: 0.5,
            core_above: 1,
            pool_above: 0,
            ties: 0,
        };
        let r = evaluate_counts("q", &[p, p], 1000);
        assert!((r.ap_at_k - 2.0 / 3.0).abs() < 1e-15);
        // Cut at 2: only the first is in; precision at rank 2 = 1/2; divisor 2.
        let r = evaluate_counts("q", &[p, p], 2);
        assert!((r.ap_at_k - 0.25).abs() < 1e-15);
    }
}
