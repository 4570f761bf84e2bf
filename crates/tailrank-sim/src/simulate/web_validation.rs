//! Web families at N = 10⁸ (docs/reference/validation.md, "Web families at 10⁸"): vector-level
//! validation over a pool generated on the fly ([`super::web_pool`]), never stored. For a
//! (family, seed): the layout, the exact whole-pool pass for the truth (`K_N` of every
//! positive), then for each fraction the sample scan (only the sampled rows are generated) and
//! the prediction, recorded as [`VectorRun`]s like the file-based families.

use super::vector_validation::{
    check_fractions, family_or_list, run_family, runs_from_scans, PoolShape, StreamTiming,
    VectorFamily, VectorRun, VectorRunOptions, KEEP_TRUTH_TOP, VECTOR_FAMILIES,
};
use super::web_geometry::{WebConfig, WebLayout};
use super::web_pool::{sample_scan, truth_scan, WebInputs};
use crate::error::{Error, Result};
use crate::scan::engine::Progress;
use std::path::Path;

/// A web family: a name, what it models, and its configuration for a seed.
#[derive(Debug, Clone, Copy)]
pub struct WebFamily {
    pub name: &'static str,
    pub description: &'static str,
    pub config: fn(seed: u64) -> WebConfig,
}

/// Pool rows of the web families (override with [`VectorRunOptions::pool_size`]).
pub const WEB_POOL: u64 = 100_000_000;

/// What the web families share: 230 instances + 20 extra queries = 250 queries, D = 64,
/// N = [`WEB_POOL`], 100,000 Zipf(1) clusters, no bursts, no hubs.
pub(crate) fn base(seed: u64) -> WebConfig {
    WebConfig {
        seed,
        dim: 64,
        pool_size: WEB_POOL,
        instances: 230,
        extra_queries: 20,
        mean_positives: 4.0,
        positive_spread: [0.2, 1.2],
        query_spread: 0.4,
        instance_spread: 0.6,
        cone_amp: 0.0,
        decay: 0.0,
        clusters: 100_000,
        zipf: 1.0,
        cluster_spread: [0.5, 1.0],
        burst_share: 0.0,
        burst_size: [1.0, 5000.0],
        burst_offset: [0.3, 1.2],
        hubs: 0,
        hub_copies: [1.0, 1000.0],
        hub_spread: 0.2,
        copy_noise: 0.05,
    }
}

/// The names of every vector-level family: the file-based ones ([`VECTOR_FAMILIES`]) and the
/// generated ones ([`WEB_FAMILIES`]).
pub fn vector_family_names() -> impl Iterator<Item = &'static str> {
    VECTOR_FAMILIES
        .iter()
        .map(|f| f.name)
        .chain(WEB_FAMILIES.iter().map(|f| f.name))
}

/// The web families (docs/reference/validation.md has their parameters as a table).
pub const WEB_FAMILIES: &[WebFamily] = &[
    WebFamily {
        name: "web-clustered-1e8",
        description: "semantic clusters with Zipf sizes on the sphere, isotropic",
        config: base,
    },
    WebFamily {
        name: "web-burst-1e8",
        description: "Zipf clusters, power-law spectrum (decay 0.5), bursts of 1-5000 \
                      near-object copies for 30% of the instances",
        config: |s| WebConfig {
            decay: 0.5,
            burst_share: 0.3,
            ..base(s)
        },
    },
    WebFamily {
        name: "web-hubs-1e8",
        description: "CLIP-like cone of Zipf(1.1) topics, 300 hubs of 1-1000 copies, bursts of \
                      1-1000 copies for 15% of the instances",
        config: |s| WebConfig {
            cone_amp: 0.6,
            clusters: 20_000,
            zipf: 1.1,
            cluster_spread: [0.6, 1.1],
            burst_share: 0.15,
            burst_size: [1.0, 1000.0],
            hubs: 300,
            ..base(s)
        },
    },
];

/// The web family called `name`, if any.
pub fn web_family(name: &str) -> Option<&'static WebFamily> {
    WEB_FAMILIES.iter().find(|f| f.name == name)
}

/// The configuration of `family` at `seed` with the overrides of `opts` (N, D).
pub fn family_config(family: &WebFamily, seed: u64, opts: &VectorRunOptions) -> WebConfig {
    let mut cfg = (family.config)(seed);
    if let Some(n) = opts.pool_size {
        cfg.pool_size = n;
    }
    if let Some(d) = opts.dim {
        cfg.dim = d;
    }
    cfg
}

/// Makes the [`Progress`] of one pass over a generated pool: its label and its rows.
pub type ProgressFactory<'a> = dyn Fn(&str, u64) -> Box<dyn Progress> + 'a;

/// Run `family` at `seed`: truth pass, then each fraction's sample scan (hash seed = `seed`)
/// and prediction; one record per fraction, with the scans' times ([`StreamTiming`]). With
/// [`VectorRunOptions::keep_summaries`] the summaries are written under `work`. Each pass over
/// the generated pool reports its rows to a [`Progress`] made by `progress`.
pub fn run_web_family(
    family: &WebFamily,
    seed: u64,
    opts: &VectorRunOptions,
    work: &Path,
    progress: &ProgressFactory<'_>,
) -> Result<Vec<VectorRun>> {
    check_fractions(opts)?;
    let cfg = family_config(family, seed, opts);
    super::vector_validation::check_sample_not_empty(cfg.pool_size, opts)?;
    let layout = WebLayout::new(&cfg)?;
    let inputs = WebInputs::new(&layout)?;
    let keep = opts
        .keep_summaries
        .then(|| work.join(format!("{}-s{seed}", family.name)));
    let top = if keep.is_some() { KEEP_TRUTH_TOP } else { 1 };
    let (name, n) = (family.name, cfg.pool_size);
    let bar = progress(&format!("{name} seed {seed}, truth"), n);
    let truth = truth_scan(&layout, &inputs, opts.threads, top, &*bar)?;
    drop(bar);
    if let Some(dir) = &keep {
        std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io(dir, e))?;
        truth.summary.write(&dir.join("full"))?;
    }
    let shape = PoolShape {
        family: family.name,
        seed,
        dim: cfg.dim,
        queries: layout.query_ids.len(),
        pool_size: cfg.pool_size,
    };
    let mut samples: Vec<(f64, f64, f64)> = Vec::new();
    let t = std::time::Instant::now();
    let mut runs = runs_from_scans(&shape, &truth.summary, opts, |f| {
        let bar = progress(&format!("{name} seed {seed}, f = {f}"), n);
        let s = sample_scan(&layout, &inputs, f, seed, opts.threads, &*bar)?;
        drop(bar);
        if let Some(dir) = &keep {
            s.summary.write(&dir.join(format!("f{f}")))?;
        }
        samples.push((s.wall_secs, s.cpu_secs, s.generation_secs));
        Ok(s.summary)
    })?;
    let sampling: f64 = samples.iter().map(|s| s.0).sum();
    let predict_wall = (t.elapsed().as_secs_f64() - sampling) / runs.len().max(1) as f64;
    let threads = opts.threads.unwrap_or_else(rayon::current_num_threads);
    for (run, &(sample_wall, sample_cpu, sample_generation)) in runs.iter_mut().zip(&samples) {
        run.stream = Some(StreamTiming {
            threads,
            truth_wall: truth.wall_secs,
            truth_cpu: truth.cpu_secs,
            truth_generation: truth.generation_secs,
            sample_wall,
            sample_cpu,
            sample_generation,
            predict_wall,
        });
    }
    Ok(runs)
}

/// The vector-level validation of the families named `names` (every family of
/// [`VECTOR_FAMILIES`] when empty; the web families ([`WEB_FAMILIES`]) by name only;
/// an unknown name is an error before anything runs), for each seed of `seeds`, in the work
/// folder `work` ([`run_family`], [`run_web_family`]); `done(family, seed, seconds)` is called
/// after each family and seed, `progress` makes the progress of each pass over a generated pool.
pub fn run_families(
    names: &[String],
    seeds: std::ops::RangeInclusive<u64>,
    opts: &VectorRunOptions,
    work: &Path,
    mut done: impl FnMut(&str, u64, f64),
    progress: &ProgressFactory<'_>,
) -> Result<Vec<VectorRun>> {
    enum Either {
        Files(&'static VectorFamily),
        Web(&'static WebFamily),
    }
    if seeds.is_empty() {
        return Err(Error::option("--seeds must be at least 1"));
    }
    super::validation::check_distinct(names, "--family")?;
    super::validation::check_distinct(&opts.fractions, "--fractions")?;
    let web_names: Vec<&str> = WEB_FAMILIES.iter().map(|f| f.name).collect();
    let families: Vec<Either> = if names.is_empty() {
        VECTOR_FAMILIES.iter().map(Either::Files).collect()
    } else {
        names
            .iter()
            .map(|n| match web_family(n) {
                Some(w) => Ok(Either::Web(w)),
                None => family_or_list(n, &web_names).map(Either::Files),
            })
            .collect::<Result<_>>()?
    };
    if opts.keep_summaries && !families.iter().any(|f| matches!(f, Either::Web(_))) {
        return Err(Error::option(format!(
            "--keep-summaries keeps the summaries of the web families ({}); the families asked \
             for write their descriptor files into --out and have none to keep",
            web_names.join(", ")
        )));
    }
    let mut runs = Vec::new();
    for f in families {
        for seed in seeds.clone() {
            let t = std::time::Instant::now();
            let name = match f {
                Either::Files(f) => {
                    runs.extend(run_family(f, seed, opts, work)?);
                    f.name
                }
                Either::Web(f) => {
                    runs.extend(run_web_family(f, seed, opts, work, progress)?);
                    f.name
                }
            };
            done(name, seed, t.elapsed().as_secs_f64());
        }
    }
    Ok(runs)
}
