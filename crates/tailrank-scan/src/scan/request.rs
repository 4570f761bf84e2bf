//! A scan of one query set as a front end asks for it ([`ScanRequest`]): which query set of the
//! ground truth, the pool size N to record, and how the outputs are labelled. The CLI
//! (`tailrank scan`) and the Python binding (`tailrank.scan`) translate their arguments into
//! a request; the rules below are stated here once.
//!
//! * Query set: the one named; unnamed, the ground truth's only set. A ground truth with
//!   several sets (ILIAS: `image` and `text`, whose queries live in different descriptor
//!   files) and no name is an error listing the sets.
//! * N: the one given; else the number of pool rows when f = 1 (exact mode: the scan sees the
//!   whole pool); else unknown (to be given to the prediction). With f = 1, `N < pool rows`
//!   is an error; after the scan, `N < S_0` (the pool items sampled) is one for every f.
//! * Results: the scan's per-query lists, paired with the query ids of the set, in its order.

use crate::error::{Error, Result};
use crate::formats::descriptors::DescriptorSource;
use crate::formats::gt::{load_ground_truth, QuerySet};
use crate::scan::engine::{ScanInputs, ScanOutput};
use crate::summary::Summary;
use std::path::Path;

/// One query set to scan and the pool size N asked for (module docs for the rules).
#[derive(Debug, Clone)]
pub struct ScanRequest {
    /// The query set to scan.
    pub query_set: QuerySet,
    /// The ground truth as recorded in the summary's inputs: its path, or a label when the
    /// query set was built in memory.
    pub ground_truth: String,
    /// N as given; `None` lets [`ScanRequest::pool_size`] infer it.
    pub pool_size: Option<u64>,
    /// Warnings of reading the ground truth (header lines skipped,
    /// [`crate::formats::gt::ground_truth_notes`]), for the caller to report.
    pub notes: Vec<String>,
}

/// Results paired with query ids: `(query id, [(db id, score)])` per query, best first, as
/// [`write_results`](crate::formats::results::write_results) takes them.
pub type PairedResults = Vec<(String, Vec<(String, f32)>)>;

/// A scanned request: the summary (ground truth recorded, N checked against `S_0`) and, when
/// asked for, the results in query-set order.
#[derive(Debug, Clone)]
pub struct ScannedRequest {
    pub summary: Summary,
    pub results: Option<PairedResults>,
}

impl ScanRequest {
    /// A warning when query ids are also ids of `core`: such a core row is a database item
    /// scored against its query (as itself, when it holds the query's vector), so it counts
    /// above the query's positives; a query file belongs only in `--queries`. Not refused, as
    /// the pool refuses a query id: some benchmarks crop their queries from database images
    /// under the same id. None when the two are disjoint.
    pub fn queries_in_core_note(&self, core: &dyn DescriptorSource) -> Result<Option<String>> {
        let queries: std::collections::HashSet<&str> = self
            .query_set
            .query_ids
            .iter()
            .map(String::as_str)
            .collect();
        let shared: Vec<String> = (core.ids().to_vec()?.into_iter())
            .filter(|id| queries.contains(id.as_str()))
            .collect();
        Ok((!shared.is_empty()).then(|| {
            format!(
                "warning: {} quer{} of set {:?} {} also in the core file {} (first: {:?}): \
                 each such core row is ranked against its query like any database item (with \
                 the query's own vector it scores above every positive); remove them from the \
                 core unless the benchmark means it",
                shared.len(),
                if shared.len() == 1 { "y" } else { "ies" },
                self.query_set.name,
                if shared.len() == 1 { "is" } else { "are" },
                core.path().display(),
                &shared[..shared.len().min(5)]
            )
        }))
    }

    /// Request from a ground-truth file or folder (`load_ground_truth`) and the name of the
    /// set to scan, if given.
    pub fn from_ground_truth(gt: &Path, set: Option<&str>, pool_size: Option<u64>) -> Result<Self> {
        let sets = load_ground_truth(gt)?;
        Ok(ScanRequest {
            query_set: choose_query_set(gt, sets, set)?,
            ground_truth: gt.display().to_string(),
            pool_size,
            notes: crate::formats::gt::ground_truth_notes(gt)?,
        })
    }

    /// Request for a query set built in memory, recorded in the summary as `label`.
    pub fn from_query_set(query_set: QuerySet, label: String, pool_size: Option<u64>) -> Self {
        ScanRequest {
            query_set,
            ground_truth: label,
            pool_size,
            notes: Vec::new(),
        }
    }

    /// N to record for a scan at `fraction` over `pool_rows` pool rows: the given N, else
    /// `pool_rows` when `fraction ≥ 1`, else `None`. Errors when the given N is below
    /// `pool_rows`, whatever the fraction: the rows given are part of the pool (their ids are
    /// distinct), so the pool holds at least that many items. Checked before the scan.
    pub fn pool_size(&self, fraction: f64, pool_rows: u64) -> Result<Option<u64>> {
        let exact = crate::sample::is_exact_fraction(fraction);
        match self.pool_size {
            Some(n) if n < pool_rows => Err(Error::mismatch(format!(
                "pool size N = {n} is smaller than the {pool_rows} pool rows given to the scan \
                 (N must be the size of the whole pool, of which these rows are a part)"
            ))),
            Some(n) => Ok(Some(n)),
            None if exact => Ok(Some(pool_rows)),
            None => Ok(None),
        }
    }

    /// [`ScanRequest::pool_size`] for a scan with `cfg`: a scan of an increment (`cfg.after`)
    /// is never the whole pool, even at f = 1, so its N is the one given, else `None`.
    pub fn pool_size_for(
        &self,
        cfg: &crate::scan::config::ScanConfig,
        pool_rows: u64,
    ) -> Result<Option<u64>> {
        let n = self.pool_size(cfg.fraction, pool_rows)?;
        Ok(if cfg.after.is_some() {
            self.pool_size
        } else {
            n
        })
    }

    /// The scan's inputs for this request's query set.
    pub fn inputs<'a>(
        &'a self,
        queries: &'a dyn DescriptorSource,
        core: &'a dyn DescriptorSource,
        pool: Vec<&'a dyn DescriptorSource>,
    ) -> ScanInputs<'a> {
        ScanInputs {
            query_set: &self.query_set,
            queries,
            core,
            pool,
        }
    }

    /// Finish a scan of this request: check `N ≥ S_0`, record the ground truth in the
    /// summary (before the pool inputs), and pair the results with the query ids.
    pub fn finish(&self, out: ScanOutput) -> Result<ScannedRequest> {
        let mut summary = out.summary;
        if let (Some(n), Some(&s0)) = (summary.pool_size, summary.subset_sizes.first()) {
            if n < s0 {
                return Err(Error::mismatch(format!(
                    "pool size N = {n} is smaller than the {s0} pool items sampled (S_0); \
                     N must be the size of the whole pool"
                )));
            }
        }
        summary.record_ground_truth(self.ground_truth.clone(), &self.query_set);
        let results = out.results.map(|lists| {
            self.query_set
                .query_ids
                .iter()
                .cloned()
                .zip(lists)
                .collect()
        });
        Ok(ScannedRequest { summary, results })
    }
}

/// The query set named `name` of `sets` (read from `gt`), or the only one when `name` is
/// `None`; errors list the sets the ground truth holds.
pub fn choose_query_set(gt: &Path, sets: Vec<QuerySet>, name: Option<&str>) -> Result<QuerySet> {
    let names = || {
        sets.iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        Some(n) => match sets.iter().position(|s| s.name == n) {
            Some(i) => Ok(sets.into_iter().nth(i).expect("found")),
            None => Err(Error::mismatch_at(
                gt,
                format!(
                    "no query set {n:?} in the ground truth (it has: {})",
                    names()
                ),
            )),
        },
        None if sets.len() == 1 => Ok(sets.into_iter().next().expect("one set")),
        None => Err(Error::at(
            crate::ErrorKind::Option,
            gt,
            format!(
                "the ground truth holds several query sets ({}); name the one to scan \
                 (`--query-set`, Python `query_set=`)",
                names()
            ),
        )),
    }
}

/// The warning for a scan that kept few of the `pool_rows` pool rows it read, with its likely
/// cause; None when the count kept is plausible. Two cases: none kept (`summary` holds no
/// sampled item; [`empty_sample_message`]); or, with N known, rows about as many as a sample
/// of N (at most twice the `p·N` items of level 0's hash range) of which fewer than half were
/// kept, where the rows `tailrank sample` lists all lie in the sample
/// ([`foreign_rows_message`]). The CLI prints it as a warning, Python raises a `UserWarning`.
pub fn sample_rows_note(pool_rows: u64, summary: &Summary) -> Option<String> {
    let s0 = *summary.subset_sizes.first()?;
    if pool_rows > 0 && s0 == 0 {
        return Some(empty_sample_message(
            pool_rows,
            summary.fraction,
            summary.seed,
        ));
    }
    let (n, level0) = (summary.pool_size?, summary.subsets.first()?);
    let sample = level0.range.width_fraction() * n as f64;
    let looks_sampled = summary.fraction < 1.0 && (pool_rows as f64) <= 2.0 * sample;
    (looks_sampled && pool_rows >= FOREIGN_ROWS_MIN && 2 * s0 < pool_rows)
        .then(|| foreign_rows_message(pool_rows, s0, sample, summary))
}

/// Rows read that look like a sample's, most of them outside the hash sample.
fn foreign_rows_message(rows: u64, kept: u64, sample: f64, s: &Summary) -> String {
    format!(
        "only {kept} of the {rows} pool rows read lie in the hash sample at fraction {} (seed \
         {}), whereas the rows `tailrank sample` lists for it (about {sample:.0} of N = {}) all \
         lie in it: the rows were likely listed with another --seed or --fraction than this \
         scan's; the others are left out of the summary",
        s.fraction,
        s.seed,
        s.pool_size.unwrap_or(0)
    )
}

/// Fewer pool rows than this are too few to tell a foreign sample from chance.
const FOREIGN_ROWS_MIN: u64 = 20;

/// The empty sample's message and its likely cause, read from the `f·rows` sampled items
/// expected: under [`EMPTY_SAMPLE_EXPECTED`] an empty sample is plausible (too few rows for
/// the fraction), above it the rows are unlikely to be the sample's.
fn empty_sample_message(rows: u64, fraction: f64, seed: u64) -> String {
    let expected = fraction * rows as f64;
    let cause = if expected < EMPTY_SAMPLE_EXPECTED {
        format!("{expected:.2} were expected, too few rows for this fraction to sample one")
    } else {
        format!(
            "about {expected:.0} were expected: the rows are likely not those whose ids \
             `tailrank sample` lists for this fraction and seed"
        )
    };
    format!(
        "none of the {rows} pool rows read lies in the hash sample at fraction {fraction} (seed \
         {seed}), so the summary holds no sampled item; {cause}"
    )
}

/// The expected number of sampled rows, `f·rows`, above which an empty sample (probability
/// `e^(−3)` ≈ 5% for a Poisson count of mean 3) points at the wrong rows rather than chance.
const EMPTY_SAMPLE_EXPECTED: f64 = 3.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &str) -> QuerySet {
        QuerySet::new("gt", name, vec!["q".into()], vec![vec!["p".into()]]).unwrap()
    }

    #[test]
    fn query_set_named_or_only_one() {
        let gt = Path::new("gt.json");
        let two = || vec![set("image"), set("text")];
        assert_eq!(
            choose_query_set(gt, two(), Some("text")).unwrap().name,
            "text"
        );
        assert_eq!(
            choose_query_set(gt, vec![set("queries")], None)
                .unwrap()
                .name,
            "queries"
        );
        let e = choose_query_set(gt, two(), None).unwrap_err().to_string();
        assert!(
            e.starts_with("gt.json: ") && e.contains("several query sets (image, text)"),
            "{e}"
        );
        let e = choose_query_set(gt, two(), Some("video"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no query set \"video\"") && e.contains("image, text"),
            "{e}"
        );
    }

    #[test]
    fn pool_size_given_inferred_or_unknown() {
        let r = |n| ScanRequest::from_query_set(set("queries"), "<dict>".into(), n);
        assert_eq!(r(None).pool_size(1.0, 200).unwrap(), Some(200));
        assert_eq!(r(None).pool_size(0.5, 200).unwrap(), None);
        assert_eq!(r(Some(200)).pool_size(0.5, 200).unwrap(), Some(200));
        assert_eq!(r(Some(500)).pool_size(1.0, 200).unwrap(), Some(500));
        for f in [1.0, 0.5] {
            let e = r(Some(10)).pool_size(f, 200).unwrap_err().to_string();
            assert!(e.contains("N = 10") && e.contains("200 pool rows"), "{e}");
        }
    }

    /// A sample's rows scanned with another seed: about f of them kept, the warning says so;
    /// the sample's own rows (all kept) or the whole pool (f of it kept) give none.
    #[test]
    fn rows_of_another_sample_are_named() {
        let mut s = Summary {
            format_version: 3,
            tool_version: String::new(),
            model: String::new(),
            query_set: "queries".into(),
            pool_size: Some(200_000),
            fraction: 0.05,
            seed: 1,
            top_m: 10,
            core_size: 0,
            subsets: crate::scan::config::subsets(0.05, 0.05, 0, 10).unwrap(),
            subset_sizes: vec![502],
            queries: Vec::new(),
            inputs: Vec::new(),
            pool_id_hashes: None,
            ties_known: true,
        };
        let w = sample_rows_note(10_005, &s).expect("a warning");
        assert!(
            w.starts_with("only 502 of the 10005 pool rows read") && w.contains("another --seed"),
            "{w}"
        );
        s.subset_sizes = vec![10_005];
        assert_eq!(sample_rows_note(10_005, &s), None);
        s.subset_sizes = vec![9_990];
        assert_eq!(sample_rows_note(200_000, &s), None);
        s.pool_size = None;
        s.subset_sizes = vec![502];
        assert_eq!(sample_rows_note(10_005, &s), None);
        s.subset_sizes = vec![0];
        assert!(sample_rows_note(10_005, &s).is_some_and(|w| w.starts_with("none of the")));
    }

    /// Few rows for the fraction: chance; many rows: the wrong rows.
    #[test]
    fn the_empty_sample_names_its_likely_cause() {
        let few = empty_sample_message(1500, 1e-6, 7);
        assert!(
            few.contains("none of the 1500 pool rows") && few.contains("(seed 7)"),
            "{few}"
        );
        assert!(few.contains("0.00 were expected, too few rows"), "{few}");
        let many = empty_sample_message(10_000, 0.05, 0);
        assert!(
            many.contains("about 500 were expected") && many.contains("likely not"),
            "{many}"
        );
    }
}
