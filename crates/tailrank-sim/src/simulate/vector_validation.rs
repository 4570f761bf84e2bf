//! Vector-level validation (docs/method.md §10): for a family (a geometry and its settings), a
//! seed and sample fractions, write the benchmark as descriptor files
//! ([`super::vectors::write_vectors`]), scan the whole pool with the library's scan (f = 1) for
//! the truth, scan the hash sample at each fraction (docs/method.md §4) and predict from it.
//!
//! Truth: mAP@k, Recall@k and hit@1 of the exact whole-pool scan (`metric::evaluate_summary_for_set`,
//! what `tailrank eval --summary` prints). Predictions: the default estimator (`predict` with
//! default options, no intervals), the count baseline `x̂ = K_S/S` (expected-rank map for the
//! mAP, the count law of `maps` for Recall/hit, as `predict` does), and evaluate-at-S (the
//! exact metrics of the sample gallery). error = prediction − truth.
//!
//! Decomposition pieces that cost nothing extra: the realized hardness `K_N/N` of the whole-pool
//! scan fed to the expected-rank map (`oracle_expected_rank`; equal to the truth up to rounding,
//! an identity check of the map) and to the Binomial map (`oracle_binomial`); and the positives
//! the estimator called immune that the full pool outranks (`K_N > 0`).

use super::decompose::{decompose_facts, Decomposition, PositiveFacts};
use super::vectors::{write_vectors, VectorConfig};
use crate::error::{Error, Result};
use crate::formats::open_descriptors;
use crate::hardness::{Branch, QueryHardness};
use crate::maps::{self, MapKind};
use crate::metric::SampleCounts;
use crate::metric::{evaluate_counts, evaluate_summary_for_set, MissingPolicy};
use crate::numerics::mean;
use crate::predict::endpoint_test::{EndpointTest, ExcessCentre};
use crate::predict::realized::RealizedInterval;
use crate::predict::spacing_test::SpacingCentre;
use crate::predict::{
    count_hardness, per_query_ap, predict_without_next_step, FitMode, Interval, LevelPrediction,
    PredictOptions, Trust, Verdict,
};
use crate::scan::engine::{scan, NoProgress, ScanConfig};
use crate::scan::request::{PairedResults, ScanRequest};
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// A vector-level family of the validation corpus: a name, what it tests, and its
/// configuration for a seed.
#[derive(Debug, Clone, Copy)]
pub struct VectorFamily {
    pub name: &'static str,
    pub description: &'static str,
    pub config: fn(seed: u64) -> VectorConfig,
}

fn family_config(geometry: &str, dim: usize, seed: u64) -> VectorConfig {
    let mut c = VectorConfig::for_geometry(geometry).expect("known geometry");
    c.seed = seed;
    c.dim = dim;
    c.instances = 300;
    c.extra_queries = 20;
    c.pool_size = DEFAULT_FAMILY_POOL;
    c.clusters = 2000;
    c
}

/// Pool rows of the families (override with [`VectorRunOptions::pool_size`]).
pub const DEFAULT_FAMILY_POOL: u64 = 2_000_000;

/// The vector-level families: one per geometry, 320 queries, N = [`DEFAULT_FAMILY_POOL`],
/// D = 64 (clustered) or 128 (burst, cone); the CLI's `--pool-size` and `--dim` override them
/// (the geometries take any D, e.g. 768 for a CLIP-sized cone).
pub const VECTOR_FAMILIES: &[VectorFamily] = &[
    VectorFamily {
        name: "vectors-clustered",
        description: "clustered sphere: background clusters, 30% of them near an instance",
        config: |s| family_config("clustered", 64, s),
    },
    VectorFamily {
        name: "vectors-burst",
        description: "anisotropic pool noise (spectrum 1/(d+1)) with near-duplicate bursts of \
                      100-400 copies for 30% of the instances",
        config: |s| family_config("burst", 128, s),
    },
    VectorFamily {
        name: "vectors-cone",
        description: "CLIP-like narrow cone: Zipf topics, 20 hubs near the cone centre × 5 copies",
        config: |s| family_config("cone", 128, s),
    },
];

/// The vector-level families (see [`VECTOR_FAMILIES`]).
pub fn vector_families() -> &'static [VectorFamily] {
    VECTOR_FAMILIES
}

/// The file-based family called `name`.
pub fn family(name: &str) -> Result<&'static VectorFamily> {
    family_or_list(name, &[])
}

/// The family called `name`; an unknown name is an error listing the file-based families and
/// the names `more`.
pub fn family_or_list(name: &str, more: &[&str]) -> Result<&'static VectorFamily> {
    VECTOR_FAMILIES
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = VECTOR_FAMILIES
                .iter()
                .map(|f| f.name)
                .chain(more.iter().copied())
                .collect();
            Error::option(format!(
                "unknown vector family {name:?} (known: {})",
                known.join(", ")
            ))
        })
}

/// The exam's fractions, and a vector validation run's by default: each one is a main fraction
/// (intervals and verdict).
pub const EXAM_FRACTIONS: [f64; 2] = [0.05, 0.01];

/// Options of a vector validation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorRunOptions {
    /// Sampling fractions, each a run (default [`EXAM_FRACTIONS`]).
    pub fractions: Vec<f64>,
    /// Cut k of mAP@k and Recall@k.
    pub k: usize,
    /// Overrides of the family's pool size and dimension.
    pub pool_size: Option<u64>,
    pub dim: Option<usize>,
    /// Scan threads (None: all).
    pub threads: Option<usize>,
    /// `PredictOptions::excess_centre` of every prediction.
    #[serde(default)]
    pub excess_centre: bool,
    /// `PredictOptions::fit` of every prediction.
    #[serde(default)]
    pub fit: FitMode,
    /// Web families: keep each run's summaries in the work folder (`<family>-s<seed>/full`, the
    /// whole-pool truth scan with its top [`KEEP_TRUTH_TOP`] scores, and `f<f>` per fraction)
    /// so that predictions can be rerun on them without regenerating the pool.
    #[serde(default)]
    pub keep_summaries: bool,
}

/// Top scores per query that a kept whole-pool truth summary holds.
pub const KEEP_TRUTH_TOP: usize = 1000;

impl Default for VectorRunOptions {
    fn default() -> Self {
        VectorRunOptions {
            fractions: EXAM_FRACTIONS.to_vec(),
            k: crate::metric::DEFAULT_K,
            pool_size: None,
            dim: None,
            threads: None,
            excess_centre: PredictOptions::DEFAULT.excess_centre,
            fit: PredictOptions::DEFAULT.fit,
            keep_summaries: false,
        }
    }
}

/// mAP@k, Recall@k and hit@1 (fractions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub map_at_k: f64,
    pub recall_at_k: f64,
    pub hit_at_1: f64,
}

impl Metrics {
    fn minus(&self, o: &Metrics) -> Metrics {
        Metrics {
            map_at_k: self.map_at_k - o.map_at_k,
            recall_at_k: self.recall_at_k - o.recall_at_k,
            hit_at_1: self.hit_at_1 - o.hit_at_1,
        }
    }

    fn is_finite(&self) -> bool {
        self.map_at_k.is_finite() && self.recall_at_k.is_finite() && self.hit_at_1.is_finite()
    }
}

/// One (family, seed, fraction) run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorRun {
    pub family: String,
    pub seed: u64,
    pub fraction: f64,
    pub dim: usize,
    pub queries: usize,
    pub pool_size: u64,
    pub sample_size: u64,
    pub k: usize,
    /// Exact metrics of the whole-pool scan.
    pub truth: Metrics,
    /// Default estimator (tail-aware, expected-rank map; Recall/hit from the count law).
    pub evt: Metrics,
    /// Count baseline `x̂ = K_S/S`.
    pub count: Metrics,
    /// Exact metrics of the sample gallery.
    pub evaluate_at_s: Metrics,
    /// Errors (prediction − truth).
    pub evt_error: Metrics,
    pub count_error: Metrics,
    pub evaluate_at_s_error: Metrics,
    /// mAP@k of the realized `K_N/N` through the expected-rank map (= truth: identity) and
    /// through the Binomial map.
    pub oracle_expected_rank: f64,
    pub oracle_binomial: f64,
    /// Positives called immune at level 0, and those of them with `K_N > 0`.
    pub immune: usize,
    pub immune_outranked: usize,
    /// The level-selected evt fit (`predict::fit_choice`) and its error; None when the
    /// sample has a single level.
    #[serde(default)]
    pub level_selected: Option<Metrics>,
    #[serde(default)]
    pub level_selected_error: Option<Metrics>,
    /// mAP@k at N of the evt fit that is not the estimate's (the paper's under the
    /// level-selected default; `Prediction::other_fit_estimate`).
    #[serde(default)]
    pub other_fit: Option<f64>,
    /// The realized-metric interval of `evt` and the trust verdict (`predict`'s, with a query
    /// bootstrap of [`VERDICT_BOOTSTRAP`] replicates).
    #[serde(default)]
    pub realized: Option<Interval>,
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// The interval's parts, every statistic of the verdict and the prediction at N from each
    /// nesting level, so that another interval or verdict rule can be scored on the run file
    /// without re-running the study.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realized_parts: Option<RealizedInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<LevelPrediction>,
    /// The trust verdict's endpoint test (`predict::endpoint_test`), when it ran.
    #[serde(default)]
    pub endpoint: Option<EndpointTest>,
    /// The move of `evt` to the centre of the endpoint test's shrunk excess (with the tail
    /// model's own mAP@k), when `predict` made one.
    #[serde(default)]
    pub excess_centre: Option<ExcessCentre>,
    /// The estimate's move to the centre of the rare items above the top positive, when it
    /// made one.
    #[serde(default)]
    pub spacing_centre: Option<SpacingCentre>,
    /// Times of a generated (web) family's scans; None for the file-based families.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamTiming>,
    /// The estimate's error split by branch against the realized `x = K_N/N`
    /// ([`super::decompose::decompose_facts`]; the map part is then 0 up to ties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decomposition: Option<Decomposition>,
}

/// Times of a generated pool's two scans, in seconds: wall, CPU of the process (all threads)
/// and the CPU spent generating rows (summed over threads); the scan proper is CPU − generation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StreamTiming {
    pub threads: usize,
    pub truth_wall: f64,
    pub truth_cpu: f64,
    pub truth_generation: f64,
    pub sample_wall: f64,
    pub sample_cpu: f64,
    pub sample_generation: f64,
    /// Wall time of one prediction (with its query bootstrap).
    pub predict_wall: f64,
}

/// Query-bootstrap replicates of the vector runs' predictions: enough for the paired SEs of
/// the trust verdict (the sample-noise replicates stay off; the realized interval takes its
/// pool noise from the drift shards).
pub const VERDICT_BOOTSTRAP: usize = 200;

impl VectorRun {
    /// Every number of the record is finite.
    pub fn is_finite(&self) -> bool {
        [&self.truth, &self.evt, &self.count, &self.evaluate_at_s]
            .iter()
            .all(|m| m.is_finite())
            && self.oracle_expected_rank.is_finite()
            && self.oracle_binomial.is_finite()
            && self.level_selected.is_none_or(|m| m.is_finite())
    }
}

/// Count-law Recall@k and hit@1 of a hardness set at N (mean over queries).
fn law_recall_hit(h: &[QueryHardness], n: f64, k: usize) -> (f64, f64) {
    (
        mean(
            &h.iter()
                .map(|q| maps::recall_at_k(q, n, k))
                .collect::<Vec<_>>(),
        ),
        mean(&h.iter().map(|q| maps::hit_at_1(q, n)).collect::<Vec<_>>()),
    )
}

/// Exact metrics of the sample gallery from the level-0 counts.
fn at_sample(h: &[QueryHardness], k: usize) -> Metrics {
    let reports: Vec<_> = h
        .iter()
        .map(|q| evaluate_counts(&q.query_id, &q.sample_counts(), k))
        .collect();
    Metrics {
        map_at_k: mean(&reports.iter().map(|r| r.ap_at_k).collect::<Vec<_>>()),
        recall_at_k: mean(&reports.iter().map(|r| r.recall_at_k).collect::<Vec<_>>()),
        hit_at_1: mean(&reports.iter().map(|r| r.hit_at_1).collect::<Vec<_>>()),
    }
}

/// A scan's summary and, when asked for, its top-k results paired with the query ids
/// (query-set order).
pub type Scanned = (Summary, Option<PairedResults>);

/// Scan the benchmark in `dir` at `fraction` (f = 1: the whole pool), keeping the top
/// `results_k` results per query when given. A [`ScanRequest`] for the benchmark's only
/// query set with N = the pool rows; rows are L2-normalised.
pub fn scan_benchmark(
    dir: &Path,
    fraction: f64,
    seed: u64,
    threads: Option<usize>,
    results_k: Option<usize>,
) -> Result<Scanned> {
    let queries = open_descriptors(&dir.join("queries.npy"), None)?;
    let core = open_descriptors(&dir.join("core.npy"), None)?;
    let pool = open_descriptors(&dir.join("pool.npy"), None)?;
    let pool_rows = pool.rows() as u64;
    let request = ScanRequest::from_ground_truth(&dir.join("gt.json"), None, Some(pool_rows))?;
    let mut cfg = ScanConfig::new(fraction, seed);
    cfg.pool_size = request.pool_size(fraction, pool_rows)?;
    cfg.threads = threads;
    cfg.normalize = true;
    cfg.model = "simulated".into();
    cfg.results_k = results_k;
    let inputs = request.inputs(queries.as_ref(), core.as_ref(), vec![pool.as_ref()]);
    let out = scan(&inputs, &cfg, &NoProgress)?;
    let scanned = request.finish(out)?;
    Ok((scanned.summary, scanned.results))
}

/// `K_N` of each (query, positive) in the whole pool.
type RealizedCounts = HashMap<(String, String), u64>;

/// Truth, the realized-hardness oracles (expected-rank, Binomial) and `K_N` from a whole-pool
/// summary.
fn truth_of(full: &Summary, k: usize) -> Result<(Metrics, f64, f64, RealizedCounts)> {
    let r = evaluate_summary_for_set(full, None, k, MissingPolicy::Error)?;
    let set = r
        .sets
        .first()
        .ok_or_else(|| Error::internal("whole-pool summary has no query set"))?;
    let truth = Metrics {
        map_at_k: set.map_at_k,
        recall_at_k: set.recall_at_k,
        hit_at_1: set.hit_at_1,
    };
    let opts = PredictOptions {
        estimator: crate::hardness::Estimator::Count,
        ..PredictOptions::default()
    };
    let realized = crate::predict::hardness_for(full, 0, &opts)?;
    let n = full.subset_sizes[0] as f64;
    let er = mean(&per_query_ap(&realized, n, k, MapKind::ExpectedRank));
    let bin = mean(&per_query_ap(&realized, n, k, MapKind::Binomial));
    let counts = realized
        .iter()
        .flat_map(|q| {
            q.positives
                .iter()
                .map(move |p| ((q.query_id.clone(), p.id.clone()), p.pool_above))
        })
        .collect();
    Ok((truth, er, bin, counts))
}

/// The decomposition of a prediction's `hardness` against the whole-pool counts `k_n`
/// (`x = K_N/N` for every positive; a positive missing from `k_n` is an error).
fn realized_decomposition(
    hardness: &[QueryHardness],
    k_n: &RealizedCounts,
    n: u64,
    k: usize,
    truth_map: f64,
) -> Result<Decomposition> {
    let facts = hardness
        .iter()
        .map(|q| {
            q.positives
                .iter()
                .map(|p| {
                    let key = (q.query_id.clone(), p.id.clone());
                    let kn = *k_n.get(&key).ok_or_else(|| {
                        Error::internal(format!(
                            "decomposition: positive {:?} of query {:?} is not in the \
                             whole-pool scan",
                            p.id, q.query_id
                        ))
                    })?;
                    Ok(PositiveFacts {
                        x: kn as f64 / n as f64,
                        pool_above_n: kn,
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    decompose_facts(hardness, &facts, n, k, truth_map)
}

/// Check the fractions of a run: at least one, each in (0, 1].
pub(crate) fn check_fractions(opts: &VectorRunOptions) -> Result<()> {
    if opts.fractions.is_empty() {
        return Err(Error::option(
            "vector validation needs at least one fraction",
        ));
    }
    for &f in &opts.fractions {
        crate::sample::check_fraction(f)?;
    }
    Ok(())
}

/// [`check_sample_not_empty`](super::config::check_sample_not_empty) at every fraction of
/// `opts`.
pub(crate) fn check_sample_not_empty(pool_size: u64, opts: &VectorRunOptions) -> Result<()> {
    opts.fractions
        .iter()
        .try_for_each(|&f| super::config::check_sample_not_empty(pool_size, f))
}

/// Run `family` at `seed`: write the files into `work` (replaced), scan the whole pool, then
/// each fraction's sample; one record per fraction.
pub fn run_family(
    family: &VectorFamily,
    seed: u64,
    opts: &VectorRunOptions,
    work: &Path,
) -> Result<Vec<VectorRun>> {
    check_fractions(opts)?;
    let mut cfg = (family.config)(seed);
    if let Some(n) = opts.pool_size {
        cfg.pool_size = n;
    }
    if let Some(d) = opts.dim {
        cfg.dim = d;
    }
    check_sample_not_empty(cfg.pool_size, opts)?;
    let bench = write_vectors(&cfg, work)?;
    let (full, _) = scan_benchmark(work, 1.0, seed, opts.threads, None)?;
    let pool = PoolShape {
        family: family.name,
        seed,
        dim: cfg.dim,
        queries: bench.queries,
        pool_size: bench.pool,
    };
    runs_from_scans(&pool, &full, opts, |f| {
        Ok(scan_benchmark(work, f, seed, opts.threads, None)?.0)
    })
}

/// What a family run scanned: its name and seed, D, the queries and N.
pub(crate) struct PoolShape<'a> {
    pub family: &'a str,
    pub seed: u64,
    pub dim: usize,
    pub queries: usize,
    pub pool_size: u64,
}

/// The records of one (family, seed), one per fraction of `opts`: the truth from the
/// whole-pool summary `full`, the predictions from `sample(f)`, the sample summary at `f`.
pub(crate) fn runs_from_scans(
    pool: &PoolShape,
    full: &Summary,
    opts: &VectorRunOptions,
    mut sample: impl FnMut(f64) -> Result<Summary>,
) -> Result<Vec<VectorRun>> {
    let seed = pool.seed;
    let (truth, oracle_er, oracle_bin, k_n) = truth_of(full, opts.k)?;
    let n = pool.pool_size;
    let nf = n as f64;
    let mut runs = Vec::new();
    for &f in &opts.fractions {
        let s = sample(f)?;
        let popts = PredictOptions {
            k: opts.k,
            bootstrap: VERDICT_BOOTSTRAP,
            sample_noise: 0,
            seed,
            excess_centre: opts.excess_centre,
            fit: opts.fit,
            ..PredictOptions::default()
        };
        // The next step is not scored: skip its extra prediction on level 1.
        let p = predict_without_next_step(&s, &popts)?;
        let evt = Metrics {
            map_at_k: p.estimate,
            recall_at_k: p.recall_at_k,
            hit_at_1: p.hit_at_1,
        };
        let ch = count_hardness(&p.hardness);
        let (cr, chit) = law_recall_hit(&ch, nf, opts.k);
        let count = Metrics {
            map_at_k: p.baselines.count,
            recall_at_k: cr,
            hit_at_1: chit,
        };
        let eas = at_sample(&p.hardness, opts.k);
        let mut decomposition =
            realized_decomposition(&p.hardness, &k_n, n, opts.k, truth.map_at_k)?;
        decomposition.part_centre = p.excess_centre.map_or(0.0, |c| c.shift);
        decomposition.part_spacing = p.spacing_centre.map_or(0.0, |c| c.shift);
        let selected = p.baselines.level_selected.as_ref().map(|f| Metrics {
            map_at_k: f.map_at_k,
            recall_at_k: f.recall_at_k,
            hit_at_1: f.hit_at_1,
        });
        let (mut immune, mut outranked) = (0, 0);
        for q in &p.hardness {
            for ph in q.positives.iter().filter(|ph| ph.branch == Branch::Immune) {
                immune += 1;
                let key = (q.query_id.clone(), ph.id.clone());
                if k_n.get(&key).copied().unwrap_or(0) > 0 {
                    outranked += 1;
                }
            }
        }
        runs.push(VectorRun {
            family: pool.family.to_string(),
            seed,
            fraction: f,
            dim: pool.dim,
            queries: pool.queries,
            pool_size: n,
            sample_size: s.subset_sizes[0],
            k: opts.k,
            truth,
            evt,
            count,
            evaluate_at_s: eas,
            evt_error: evt.minus(&truth),
            count_error: count.minus(&truth),
            evaluate_at_s_error: eas.minus(&truth),
            oracle_expected_rank: oracle_er,
            oracle_binomial: oracle_bin,
            immune,
            immune_outranked: outranked,
            level_selected: selected,
            level_selected_error: selected.map(|m| m.minus(&truth)),
            other_fit: p.other_fit_estimate(),
            realized: p.realized.map(|r| r.interval),
            verdict: Some(p.trust.verdict),
            endpoint: p.trust.endpoint.clone(),
            excess_centre: p.excess_centre,
            spacing_centre: p.spacing_centre,
            realized_parts: p.realized,
            trust: Some(p.trust.clone()),
            levels: p.levels.clone(),
            stream: None,
            decomposition: Some(decomposition),
        });
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::gt::load_ground_truth;
    use crate::formats::results::{read_results, write_results};
    use crate::metric::evaluate_results;

    fn tiny(geometry: &str, seed: u64) -> VectorConfig {
        let mut c = VectorConfig::for_geometry(geometry).unwrap();
        c.seed = seed;
        c.dim = 32;
        c.instances = 30;
        c.extra_queries = 5;
        c.pool_size = 20_000;
        c.clusters = 100;
        if let crate::simulate::vector_geometry::Geometry::Burst { burst_size, .. } =
            &mut c.geometry
        {
            *burst_size = [20, 60];
        }
        c
    }

    /// The whole-pool scan's exact metrics equal `tailrank eval` on the brute-force results of
    /// the same scan, the realized `K_N/N` through the expected-rank map gives the truth back,
    /// and every number of the records is finite.
    #[test]
    fn end_to_end_identities_on_a_tiny_pool() {
        let fams = [
            VectorFamily {
                name: "tiny-clustered",
                description: "",
                config: |s| tiny("clustered", s),
            },
            VectorFamily {
                name: "tiny-burst",
                description: "",
                config: |s| tiny("burst", s),
            },
            VectorFamily {
                name: "tiny-cone",
                description: "",
                config: |s| tiny("cone", s),
            },
        ];
        let k = 100;
        for fam in &fams {
            let dir = tempfile::tempdir().unwrap();
            let opts = VectorRunOptions {
                fractions: vec![0.05, 0.01],
                k,
                ..VectorRunOptions::default()
            };
            let runs = run_family(fam, 3, &opts, dir.path()).unwrap();
            assert_eq!(runs.len(), 2);
            for r in &runs {
                assert!(r.is_finite(), "{r:?}");
                assert!(r.sample_size > 0 && r.sample_size < r.pool_size);
                assert!(
                    (r.oracle_expected_rank - r.truth.map_at_k).abs() < 1e-9,
                    "{}: oracle {} vs truth {}",
                    fam.name,
                    r.oracle_expected_rank,
                    r.truth.map_at_k
                );
                assert!(r.immune_outranked <= r.immune);
            }
            // Brute force: the exact scan's top-k results evaluated like `tailrank eval`.
            let (full, results) = scan_benchmark(dir.path(), 1.0, 3, None, Some(k)).unwrap();
            let sets = load_ground_truth(&dir.path().join("gt.json")).unwrap();
            let lists = results.unwrap();
            let rpath = dir.path().join("results.json");
            write_results(&rpath, &lists).unwrap();
            let ev = evaluate_results(
                &sets,
                &read_results(&rpath).unwrap(),
                k,
                MissingPolicy::Error,
            )
            .unwrap();
            let from_counts =
                evaluate_summary_for_set(&full, None, k, MissingPolicy::Error).unwrap();
            let (a, b) = (&ev.sets[0], &from_counts.sets[0]);
            assert!((a.map_at_k - b.map_at_k).abs() < 1e-12, "{}", fam.name);
            assert!((a.recall_at_k - b.recall_at_k).abs() < 1e-12);
            assert!((a.hit_at_1 - b.hit_at_1).abs() < 1e-12);
            assert!((a.map_at_k - runs[0].truth.map_at_k).abs() < 1e-12);
        }
    }

    #[test]
    fn families_are_named_and_valid() {
        for f in vector_families() {
            let c = (f.config)(0);
            assert!(c.instances + c.extra_queries >= 300, "{}", f.name);
            assert_eq!(family(f.name).unwrap().name, f.name);
        }
        assert!(family("nope").is_err());
        let bad = VectorRunOptions {
            fractions: vec![],
            ..VectorRunOptions::default()
        };
        let dir = tempfile::tempdir().unwrap();
        assert!(run_family(&VECTOR_FAMILIES[0], 0, &bad, dir.path()).is_err());
    }
}
