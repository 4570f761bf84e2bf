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
use crate::formats::ids::id_hash;
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

/// The warning for a scan that read `pool_rows` pool rows of which none lies in the hash
/// sample (`summary` holds no sampled item), with its likely cause; None when a row was kept
/// or none was read. (A low share kept is no sign of a wrong seed: a shard of the whole pool,
/// scanned to be merged, keeps about f of its rows too.) The CLI prints it as a warning,
/// Python raises a `UserWarning`.
pub fn sample_rows_note(pool_rows: u64, summary: &Summary) -> Option<String> {
    (pool_rows > 0 && summary.subset_sizes.first() == Some(&0))
        .then(|| empty_sample_message(pool_rows, summary.fraction, summary.seed))
}

/// The warning for a scan that kept fewer than half of the rows of `pool` although every one
/// of their first [`SEED_PROBE_ROWS`] lies in the sample at f of another seed among
/// `0..`[`SEED_PROBES`]: rows `tailrank sample` listed with that seed, scanned with
/// `summary`'s. A shard of the whole pool also keeps about f of its rows, but lies whole in
/// another seed's sample only with probability `f^rows`. None when the rows are too few
/// (under [`FOREIGN_ROWS_MIN`]), more than half were kept, or no probed seed holds them all.
pub fn listed_seed_note(
    pool: &[&dyn DescriptorSource],
    summary: &Summary,
) -> Result<Option<String>> {
    let rows: u64 = pool.iter().map(|p| p.rows() as u64).sum();
    let (Some(&kept), Some(level0)) = (summary.subset_sizes.first(), summary.subsets.first())
    else {
        return Ok(None);
    };
    if summary.fraction >= 1.0 || rows < FOREIGN_ROWS_MIN || 2 * kept >= rows {
        return Ok(None);
    }
    let mut probe: Vec<String> = Vec::new();
    for src in pool {
        let want = (SEED_PROBE_ROWS - probe.len()).min(src.rows());
        probe.extend(src.ids().names(&(0..want).collect::<Vec<_>>())?);
    }
    let listed = (0..SEED_PROBES)
        .filter(|&s| s != summary.seed)
        .find(|&s| probe.iter().all(|id| level0.range.contains(id_hash(id, s))));
    Ok(listed.map(|s| {
        format!(
            "only {kept} of the {rows} pool rows read lie in the hash sample at fraction {} (seed \
             {}), but every row checked lies in the sample of seed {s}: the rows were listed by \
             `tailrank sample --seed {s}`; scan them with --seed {s} (Python `seed={s}`)",
            summary.fraction, summary.seed
        )
    }))
}

/// The seeds [`listed_seed_note`] tries, and how many rows it hashes under each.
const SEED_PROBES: u64 = 16;
const SEED_PROBE_ROWS: usize = 256;
/// Fewer pool rows than this say too little to name a seed.
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

    /// Rows of seed 3's sample scanned at seed 0 name seed 3; a shard of the whole pool (about
    /// f of its rows kept under any seed) and the sample's own scan name none.
    #[test]
    fn rows_listed_with_another_seed_name_it() {
        use crate::formats::descriptors::InMemoryDescriptors;
        use crate::sample::HashRange;
        let f = 0.25;
        let range = HashRange::fraction(f).unwrap();
        let all: Vec<String> = (0..4000).map(|i| format!("img{i}")).collect();
        let of_seed3: Vec<String> = all
            .iter()
            .filter(|id| range.contains(id_hash(id, 3)))
            .take(300)
            .cloned()
            .collect();
        let kept_at = |ids: &[String], seed| {
            ids.iter()
                .filter(|id| range.contains(id_hash(id, seed)))
                .count() as u64
        };
        let pool = |ids: &[String]| {
            InMemoryDescriptors::new("pool", ids.to_vec(), 1, vec![1.0; ids.len()]).unwrap()
        };
        let summary = |seed, kept| Summary {
            format_version: 3,
            tool_version: String::new(),
            model: String::new(),
            query_set: "queries".into(),
            pool_size: Some(1_000_000),
            fraction: f,
            seed,
            top_m: 10,
            core_size: 0,
            subsets: crate::scan::config::subsets(f, f, 0, 10).unwrap(),
            subset_sizes: vec![kept],
            queries: Vec::new(),
            inputs: Vec::new(),
            pool_id_hashes: None,
            ties_known: true,
        };
        let (foreign, shard) = (pool(&of_seed3), pool(&all[..300]));
        let note = listed_seed_note(&[&foreign], &summary(0, kept_at(&of_seed3, 0))).unwrap();
        let note = note.expect("seed 3 named");
        assert!(
            note.contains("sample of seed 3") && note.contains("--seed 3"),
            "{note}"
        );
        let at_own_seed = summary(3, kept_at(&of_seed3, 3));
        assert_eq!(listed_seed_note(&[&foreign], &at_own_seed).unwrap(), None);
        let shard_scan = summary(0, kept_at(&all[..300], 0));
        assert_eq!(listed_seed_note(&[&shard], &shard_scan).unwrap(), None);
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
