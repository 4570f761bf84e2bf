//! `tailrank simulate`: a benchmark with known truth, either at the summary level
//! (`--preset`, writes `DIR/summary` and `DIR/truth.json`) or as descriptor files (`--vectors`,
//! geometry `--geometry`); `--vectors --validate` runs the vector-level validation families
//! (files in `DIR`, truth from the whole-pool scan, predictions from hash samples).

use clap::Args;
use std::path::PathBuf;
use tailrank::formats::descriptors::Dtype;
use tailrank::report::demo::{simulation_report, vectors_report};
use tailrank::report::validation::{vector_decomposition_table, vector_table};
use tailrank::simulate::vector_validation::{StreamTiming, VectorRun, VectorRunOptions};
use tailrank::simulate::vectors::{write_vectors, VectorConfig};
use tailrank::simulate::web_validation::run_families;
use tailrank::simulate::{simulate_to_dir, SimConfig, SimulationFiles};

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Output folder.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Summary-level family of the validation corpus (`tailrank validate --list` names them).
    #[arg(long, default_value = "ilias-like", conflicts_with = "vectors")]
    pub preset: String,
    /// Write a clustered synthetic benchmark as descriptor files instead (.npy + ids + gt.json).
    #[arg(long)]
    pub vectors: bool,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Pool size N (presets: default 10^8; vectors: number of pool rows, default 50,000;
    /// --validate: the families' 2,000,000, the web families' 10^8).
    #[arg(long)]
    pub pool_size: Option<u64>,
    /// Level-0 sampling fraction f of the summary (presets only; default 0.05).
    #[arg(long, conflicts_with = "validate")]
    pub fraction: Option<f64>,
    /// Scale the preset to this many queries (refused, before anything is written, when the
    /// simulation's estimated memory exceeds what is available).
    #[arg(long, conflicts_with = "validate")]
    pub queries: Option<usize>,
    /// Vectors: geometry (clustered, burst, cone; default: the library's, clustered).
    #[arg(long, conflicts_with = "validate")]
    pub geometry: Option<String>,
    /// Vectors: descriptor dimension (default: the geometry's).
    #[arg(long)]
    pub dim: Option<usize>,
    /// Vectors: number of object instances, one query each, plus --extra-queries (default: the
    /// library's, 40).
    #[arg(long, conflicts_with = "validate")]
    pub instances: Option<usize>,
    /// Vectors: extra queries on random instances (default: the library's, 10).
    #[arg(long, conflicts_with = "validate")]
    pub extra_queries: Option<usize>,
    /// Vectors: element type of the .npy files (default: f16).
    #[arg(long, value_parser = ["f16", "f32"], conflicts_with = "validate")]
    pub dtype: Option<String>,
    /// Vectors: run the validation families instead (write each into --out, scan the whole
    /// pool for the truth, scan and predict the hash samples, print a table).
    #[arg(long, requires = "vectors")]
    pub validate: bool,
    /// Validation: comma-separated families (default: the file-based ones; the web families,
    /// generated on the fly at N = 10^8, by name: web-clustered-1e8, web-burst-1e8,
    /// web-hubs-1e8).
    #[arg(long, value_delimiter = ',', requires = "validate")]
    pub family: Vec<String>,
    /// Validation: number of seeds (from --seed).
    #[arg(long, default_value_t = 1, requires = "validate")]
    pub seeds: u64,
    /// Validation: comma-separated sample fractions.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.05,0.01",
        requires = "validate"
    )]
    pub fractions: Vec<f64>,
    /// Validation: whether the predictions move to the centre of the excess (as `predict`).
    #[command(flatten)]
    pub centre: super::CentreArgs,
    /// Validation: which evt fit gives the estimate (as `predict`).
    #[command(flatten)]
    pub fit: super::FitArgs,
    /// Validation: also write the runs as JSON here.
    #[arg(long, requires = "validate")]
    pub json: Option<PathBuf>,
}

fn validate(a: &SimulateArgs) -> anyhow::Result<()> {
    let opts = VectorRunOptions {
        fractions: a.fractions.clone(),
        pool_size: a.pool_size,
        dim: a.dim,
        excess_centre: a.centre.enabled(),
        fit: a.fit.mode()?,
        ..VectorRunOptions::default()
    };
    let seeds = a.seed..a.seed + a.seeds;
    let runs = run_families(&a.family, seeds, &opts, &a.out, |family, seed, secs| {
        eprintln!("tailrank simulate: {family} seed {seed} done in {secs:.0} s");
    })?;
    for r in &runs {
        if let Some(t) = &r.stream {
            eprintln!("{}", stream_line(r, t));
        }
    }
    print!("{}", vector_table(&runs));
    if runs.iter().any(|r| r.decomposition.is_some()) {
        print!("\n{}", vector_decomposition_table(&runs));
    }
    if let Some(j) = &a.json {
        tailrank::atomic::write_bytes(j, &serde_json::to_vec_pretty(&runs)?)?;
    }
    Ok(())
}

/// One line of a generated family's timings: wall and CPU seconds of each scan, and rows/s
/// per thread of CPU time for the generation and for the scan proper (CPU − generation).
fn stream_line(r: &VectorRun, t: &StreamTiming) -> String {
    let n = r.pool_size as f64;
    let s = r.sample_size as f64;
    let rate = |rows: f64, secs: f64| rows / secs.max(1e-9);
    format!(
        "tailrank simulate: {} seed {} f {}, {} threads: truth pass {:.1} s wall, {:.1} CPU-s \
         (generation {:.1} CPU-s: {:.2e} rows/s per thread; scan {:.2e} rows/s per thread); \
         sample scan {:.1} s wall, {:.1} CPU-s (generation {:.2} CPU-s for {} rows: {:.2e} \
         rows/s per thread); predict {:.1} s wall",
        r.family,
        r.seed,
        r.fraction,
        t.threads,
        t.truth_wall,
        t.truth_cpu,
        t.truth_generation,
        rate(n, t.truth_generation),
        rate(n, t.truth_cpu - t.truth_generation),
        t.sample_wall,
        t.sample_cpu,
        t.sample_generation,
        r.sample_size,
        rate(s, t.sample_generation),
        t.predict_wall,
    )
}

/// Refuse options that the chosen mode would ignore (clap's `requires` does not see through
/// `--preset`, which has a default).
fn check_mode(a: &SimulateArgs) -> anyhow::Result<()> {
    if a.validate && !a.vectors {
        anyhow::bail!(
            "--validate runs the vector-level families and needs --vectors; the summary-level \
             families (--preset) are validated by `tailrank validate`"
        );
    }
    let vector_only = a.dim.is_some()
        || a.geometry.is_some()
        || a.instances.is_some()
        || a.extra_queries.is_some()
        || a.dtype.is_some();
    if !a.vectors && vector_only {
        anyhow::bail!(
            "--geometry, --dim, --instances, --extra-queries and --dtype apply to --vectors, \
             not to a --preset simulation"
        );
    }
    let fit_default = tailrank::predict::PredictOptions::DEFAULT.fit.as_str();
    if !a.validate
        && (a.fit.fit != fit_default || a.centre.excess_centre || a.centre.no_excess_centre)
    {
        anyhow::bail!(
            "--fit and --(no-)excess-centre apply to --vectors --validate (a simulation writes \
             files and predicts nothing; give them to `tailrank predict` on its summary)"
        );
    }
    Ok(())
}

pub fn run(a: SimulateArgs) -> anyhow::Result<()> {
    check_mode(&a)?;
    if a.validate {
        return validate(&a);
    }
    if a.vectors {
        let base = VectorConfig::for_geometry(
            a.geometry
                .as_deref()
                .unwrap_or(VectorConfig::default().geometry.name()),
        )?;
        if a.fraction.is_some() || a.queries.is_some() {
            anyhow::bail!("--fraction and --queries apply to --preset, not --vectors");
        }
        let cfg = VectorConfig {
            seed: a.seed,
            dim: a.dim.unwrap_or(base.dim),
            instances: a.instances.unwrap_or(base.instances),
            extra_queries: a.extra_queries.unwrap_or(base.extra_queries),
            dtype: match a.dtype.as_deref() {
                Some("f32") => Dtype::F32,
                Some(_) => Dtype::F16,
                None => base.dtype,
            },
            pool_size: a.pool_size.unwrap_or(base.pool_size),
            ..base
        };
        let b = write_vectors(&cfg, &a.out)?;
        print!("{}", vectors_report(&cfg, &b, &a.out));
        return Ok(());
    }
    let mut cfg = SimConfig::preset(&a.preset, a.seed)?;
    if let Some(n) = a.pool_size {
        cfg = cfg.with_pool_size(n);
    }
    if let Some(f) = a.fraction {
        cfg.fraction = f;
    }
    if let Some(q) = a.queries {
        cfg = cfg.with_queries(q);
    }
    let (sim, _) = simulate_to_dir(&cfg, &a.out, None)?;
    let files = SimulationFiles::in_dir(&a.out);
    print!("{}", simulation_report(&cfg, &sim, &files));
    Ok(())
}
