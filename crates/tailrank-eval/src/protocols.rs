//! Average precision of other instance-retrieval benchmarks: revisited Oxford and Paris
//! (ROxford5k / RParis6k, Easy / Medium / Hard protocols with junk removal) and INSTRE (the same
//! AP over the full ranking, without junk), from ranked lists and from per-positive counts.
//! GLDv2's official mAP@100 lives in [`crate::metric::gldv2_ap_at_k`].
//!
//! ## AP (the revisitop `compute_ap` definition)
//!
//! The ranking is the full database sorted by score, descending. Junk items are removed from
//! it first (they neither help nor hurt). Let `r_0 < r_1 < … ` be the 0-based positions of the
//! query's positives that appear in the junk-free ranking, and `n` the number of positives of
//! the query (all of them, retrieved or not). With the trapezoidal rule between the precision
//! just before and just after each positive,
//!
//! ```text
//! AP = 1/n · Σ_j ½ · (P0_j + P1_j),   P0_j = j / r_j (1 when r_j = 0),   P1_j = (j + 1) / (r_j + 1)
//! ```
//!
//! (`j` 0-based). A query with no positive in the protocol has an undefined AP; it is left out
//! of the mean (`NaN` per query), as revisitop does.
//!
//! **From counts.** With the positives sorted by score, descending, and `A_j` the number of
//! items that are neither positive nor junk and score strictly above positive `j`, its 0-based
//! junk-free position is `r_j = j + A_j` (positives win ties with other items, as in
//! [`crate::metric`]), so the AP above needs only the counts.
//!
//! ## Protocols
//!
//! The ground truth of a revisited query lists `easy`, `hard` and `junk` database items:
//!
//! | protocol | positives      | junk (removed)        |
//! |----------|----------------|-----------------------|
//! | Easy     | easy           | junk ∪ hard           |
//! | Medium   | easy ∪ hard    | junk                  |
//! | Hard     | hard           | junk ∪ easy           |
//! | Plain    | easy ∪ hard    | junk (INSTRE: empty)  |
//!
//! `Plain` is what INSTRE uses with a ground truth that only has `easy` (or `ok`) lists.

use crate::error::{Error, Result};
use crate::formats::json::JsonReader;
use crate::formats::results::Results;
use crate::metric::{rank_order, MissingPolicy};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;

/// Evaluation protocol of the revisited benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    Easy,
    Medium,
    Hard,
    /// All listed positives, only the listed junk removed (INSTRE).
    Plain,
}

impl Protocol {
    pub const REVISITED: [Protocol; 3] = [Protocol::Easy, Protocol::Medium, Protocol::Hard];

    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Easy => "easy",
            Protocol::Medium => "medium",
            Protocol::Hard => "hard",
            Protocol::Plain => "plain",
        }
    }
}

impl FromStr for Protocol {
    type Err = Error;

    /// `easy`, `medium`, `hard` or `plain` (case-insensitive).
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "easy" => Ok(Protocol::Easy),
            "medium" => Ok(Protocol::Medium),
            "hard" => Ok(Protocol::Hard),
            "plain" => Ok(Protocol::Plain),
            _ => Err(Error::option(format!(
                "unknown protocol {s:?} (use easy, medium, hard, or plain for INSTRE)"
            ))),
        }
    }
}

/// Ground truth of one query of a revisited benchmark.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RevisitedGt {
    #[serde(default)]
    pub easy: Vec<String>,
    #[serde(default)]
    pub hard: Vec<String>,
    #[serde(default)]
    pub junk: Vec<String>,
}

impl RevisitedGt {
    /// `(positives, junk)` of the query under `protocol` (see the module table).
    pub fn split(&self, protocol: Protocol) -> (HashSet<&str>, HashSet<&str>) {
        fn set<'a>(lists: &[&'a Vec<String>]) -> HashSet<&'a str> {
            lists
                .iter()
                .flat_map(|l| l.iter().map(String::as_str))
                .collect()
        }
        match protocol {
            Protocol::Easy => (set(&[&self.easy]), set(&[&self.junk, &self.hard])),
            Protocol::Medium | Protocol::Plain => {
                (set(&[&self.easy, &self.hard]), set(&[&self.junk]))
            }
            Protocol::Hard => (set(&[&self.hard]), set(&[&self.junk, &self.easy])),
        }
    }
}

/// Trapezoidal AP from the sorted 0-based junk-free positions of the retrieved positives and
/// the number `n_pos` of positives of the query (module formula). NaN when `n_pos == 0`.
pub fn ap_from_positions(positions: &[usize], n_pos: usize) -> f64 {
    if n_pos == 0 {
        return f64::NAN;
    }
    let step = 1.0 / n_pos as f64;
    let mut ap = 0.0;
    for (j, &r) in positions.iter().enumerate() {
        let p0 = if r == 0 { 1.0 } else { j as f64 / r as f64 };
        let p1 = (j + 1) as f64 / (r + 1) as f64;
        ap += (p0 + p1) * step / 2.0;
    }
    ap
}

/// AP of a ranked list of database ids (best first; the full ranking, or a prefix of it: the
/// positives it lacks count as never retrieved) under `protocol`.
pub fn ap_ranked(ranked: &[&str], gt: &RevisitedGt, protocol: Protocol) -> f64 {
    let (pos, junk) = gt.split(protocol);
    let mut positions = Vec::new();
    let mut junk_seen = 0usize;
    let mut seen = HashSet::new();
    for (i, id) in ranked.iter().enumerate() {
        if !seen.insert(*id) {
            // A repeated id is the same item: it keeps its first position only.
            junk_seen += 1;
            continue;
        }
        if pos.contains(id) {
            positions.push(i - junk_seen);
        } else if junk.contains(id) {
            junk_seen += 1;
        }
    }
    ap_from_positions(&positions, pos.len())
}

/// AP from counts: `above[j]` = number of items that are neither positive nor junk scoring
/// strictly above the j-th best positive (positives sorted by score, descending, all `n_pos`
/// of them, i.e. the full ranking). Position `r_j = j + above[j]`.
pub fn ap_from_counts(above: &[u64]) -> f64 {
    let positions: Vec<usize> = above
        .iter()
        .enumerate()
        .map(|(j, &a)| j + a as usize)
        .collect();
    ap_from_positions(&positions, above.len())
}

/// Counts for [`ap_from_counts`] from raw scores: `pos_scores` of the protocol's positives and
/// `other_scores` of every database item that is neither positive nor junk. Returns the
/// positives' `A_j` in positive order (scores descending).
pub fn counts_from_scores(pos_scores: &[f32], other_scores: &[f32]) -> Vec<u64> {
    let mut p: Vec<f32> = pos_scores.to_vec();
    p.sort_by(|a, b| b.total_cmp(a));
    let mut o: Vec<f32> = other_scores.to_vec();
    o.sort_by(|a, b| b.total_cmp(a));
    // Both descending: count others strictly above each positive with one merge pass.
    let mut i = 0usize;
    p.iter()
        .map(|&s| {
            while i < o.len() && o[i] > s {
                i += 1;
            }
            i as u64
        })
        .collect()
}

/// Mean AP over queries under `protocol`, leaving out queries with no positive (revisitop).
/// `ranked[q]` is query q's ranked list. Returns `(mAP, queries used)`; mAP is NaN when none.
pub fn map_ranked(ranked: &[Vec<&str>], gts: &[RevisitedGt], protocol: Protocol) -> (f64, usize) {
    let aps: Vec<f64> = ranked
        .iter()
        .zip(gts)
        .map(|(r, g)| ap_ranked(r, g, protocol))
        .filter(|a| !a.is_nan())
        .collect();
    (aps.iter().sum::<f64>() / aps.len() as f64, aps.len())
}

/// Read a revisited ground truth: a JSON object `{query_id: {"easy": [...], "hard": [...],
/// "junk": [...]}}` (missing lists are empty; INSTRE: `{"easy": [...]}` or `{"ok": [...]}` per
/// query). Queries come sorted by id. Errors name the file.
pub fn read_revisited_gt(path: &Path) -> Result<Vec<(String, RevisitedGt)>> {
    let bytes = crate::formats::read_input_file(path, "a revisited ground truth")?;
    let mut r = JsonReader::new(path, &bytes)?;
    let mut out: Vec<(String, RevisitedGt)> = Vec::new();
    let mut queries = HashSet::new();
    r.object(
        "expected a JSON object {query_id: {easy, hard, junk}}",
        |r, q| {
            if q.is_empty() {
                return Err(r.error("an empty query id"));
            }
            if !queries.insert(q.clone()) {
                return Err(r.error(format!("duplicate query id {q:?}")));
            }
            let g = read_query_lists(r, &q)?;
            out.push((q, g));
            Ok(())
        },
    )?;
    r.finish()?;
    if out.is_empty() {
        return Err(Error::input(
            path,
            "the revisited ground truth holds no query",
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The list a key names (`ok` is INSTRE's spelling of `easy`).
fn list_name(key: &str) -> &str {
    if key == "ok" {
        "easy"
    } else {
        key
    }
}

/// The lists of query `q` (the reader placed at its object): `easy` (or `ok`), `hard`, `junk`,
/// each at most once, with non-empty ids listed once over the three.
fn read_query_lists(r: &mut JsonReader, q: &str) -> Result<RevisitedGt> {
    let mut g = RevisitedGt::default();
    let mut keys: Vec<String> = Vec::new();
    let mut ids = HashSet::new();
    let what = format!("query {q:?}: expected an object with easy/hard/junk lists");
    r.object(&what, |r, key| {
        let target = match key.as_str() {
            "easy" | "ok" => &mut g.easy,
            "hard" => &mut g.hard,
            "junk" => &mut g.junk,
            other => {
                return Err(r.error(format!(
                    "query {q:?}: unknown list {other:?} (expected easy, hard, junk or ok)"
                )))
            }
        };
        if let Some(first) = keys.iter().find(|k| list_name(k) == list_name(&key)) {
            return Err(r.error(match first == &key {
                true => format!("query {q:?}: list {key:?} given twice"),
                false => {
                    format!("query {q:?}: both \"easy\" and \"ok\", two spellings of one list")
                }
            }));
        }
        keys.push(key.clone());
        r.array(
            &format!("query {q:?}: {key:?} must be an array of ids"),
            |r| {
                let id = r.expect_string(&format!("query {q:?}: {key:?} holds a non-string id"))?;
                if id.is_empty() {
                    return Err(r.error(format!("query {q:?}: an empty id in {key:?}")));
                }
                if !ids.insert(id.clone()) {
                    return Err(r.error(format!(
                        "query {q:?}: id {id:?} is listed twice (easy/hard/junk overlap)"
                    )));
                }
                target.push(id);
                Ok(())
            },
        )
    })?;
    Ok(g)
}

/// One query's AP under a protocol; `None` when the protocol leaves it no positive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RevisitedQuery {
    pub query: String,
    pub ap: Option<f64>,
    /// The query had no results and was counted as an empty ranking.
    pub missing: bool,
}

/// mAP under one protocol: the mean over the queries whose AP is defined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolReport {
    pub protocol: Protocol,
    /// Queries with at least one positive under the protocol (the mean's divisor).
    pub n_queries: usize,
    /// A fraction in [0, 1]; NaN (JSON `null`) when no query has a positive.
    pub map: f64,
    pub queries: Vec<RevisitedQuery>,
}

/// What `tailrank eval --protocol` prints with `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RevisitedReport {
    pub tool_version: String,
    pub protocols: Vec<ProtocolReport>,
    pub warnings: Vec<String>,
}

/// Revisited AP (module formula) of a results file against a revisited ground truth, per
/// protocol. Each query's ranking is its results sorted by score, descending (equal scores in
/// file order, as a stable `argsort` would keep them); positives absent from the list count as
/// never retrieved, so a truncated results list gives the AP of the full ranking only when every
/// positive is in it. A ground-truth query without results is an error naming it, or an empty
/// ranking with [`MissingPolicy::Zero`]; results for queries outside the ground truth are
/// reported as a warning.
pub fn evaluate_revisited(
    results: &Results,
    gt: &[(String, RevisitedGt)],
    protocols: &[Protocol],
    missing: MissingPolicy,
) -> Result<RevisitedReport> {
    if protocols.is_empty() {
        return Err(Error::option("no protocol to evaluate"));
    }
    // Each protocol once, in the order first asked for (`--protocol easy,easy`: one row).
    let mut distinct: Vec<Protocol> = Vec::with_capacity(protocols.len());
    for &p in protocols {
        if !distinct.contains(&p) {
            distinct.push(p);
        }
    }
    let protocols = &distinct[..];
    let mut rankings: Vec<Option<Vec<&str>>> = Vec::with_capacity(gt.len());
    for (q, _) in gt {
        match results.get(q) {
            Some(r) => {
                let scores: Vec<f64> = r.items.iter().map(|(_, s)| *s).collect();
                let order = rank_order(&scores);
                rankings.push(Some(order.iter().map(|&i| r.items[i].0.as_str()).collect()));
            }
            None if missing == MissingPolicy::Zero => rankings.push(None),
            None => {
                return Err(Error::mismatch_at(
                    &results.path,
                    format!("query {q:?} of the revisited ground truth has no results"),
                ))
            }
        }
    }
    let known: HashSet<&str> = gt.iter().map(|(q, _)| q.as_str()).collect();
    let extra = results
        .queries
        .iter()
        .filter(|r| !known.contains(r.query.as_str()))
        .count();
    let mut warnings = Vec::new();
    if extra > 0 {
        warnings.push(format!(
            "{}: {extra} result queries are not in the ground truth, ignored",
            results.path.display()
        ));
    }
    let reports = protocols
        .iter()
        .map(|&protocol| {
            let queries: Vec<RevisitedQuery> = gt
                .iter()
                .zip(&rankings)
                .map(|((q, g), ranked)| {
                    let ap = ap_ranked(ranked.as_deref().unwrap_or(&[]), g, protocol);
                    RevisitedQuery {
                        query: q.clone(),
                        ap: (!ap.is_nan()).then_some(ap),
                        missing: ranked.is_none(),
                    }
                })
                .collect();
            let aps: Vec<f64> = queries.iter().filter_map(|q| q.ap).collect();
            let map = if aps.is_empty() {
                f64::NAN
            } else {
                aps.iter().sum::<f64>() / aps.len() as f64
            };
            ProtocolReport {
                protocol,
                n_queries: aps.len(),
                map,
                queries,
            }
        })
        .collect::<Vec<ProtocolReport>>();
    if reports.iter().all(|r| r.n_queries == 0) {
        let names: Vec<&str> = protocols.iter().map(|p| p.as_str()).collect();
        return Err(Error::mismatch(format!(
            "no query of the revisited ground truth has a positive under {}: nothing to score",
            names.join(", ")
        )));
    }
    Ok(RevisitedReport {
        tool_version: crate::TOOL_VERSION.to_string(),
        protocols: reports,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_position_is_full_precision() {
        assert_eq!(ap_from_positions(&[0], 1), 1.0);
        // Positive at position 1 of 1: (0/1 + 1/2)/2.
        assert!((ap_from_positions(&[1], 1) - 0.25).abs() < 1e-15);
        assert!(ap_from_positions(&[], 0).is_nan());
    }

    #[test]
    fn counts_match_ranked() {
        let gt = RevisitedGt {
            easy: vec!["a".into(), "c".into()],
            hard: vec!["e".into()],
            junk: vec!["b".into()],
        };
        let ranked = ["a", "b", "c", "d", "e"];
        // Medium: b removed → a@0, c@1, d, e@3.
        let ap = ap_ranked(&ranked, &gt, Protocol::Medium);
        assert!((ap - ap_from_counts(&[0, 0, 1])).abs() < 1e-15);
        // Easy: b and e removed → a@0, c@1.
        assert_eq!(ap_ranked(&ranked, &gt, Protocol::Easy), 1.0);
    }
}
