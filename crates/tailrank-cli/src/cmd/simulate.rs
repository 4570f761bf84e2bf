//! `tailrank simulate`: a benchmark with known truth, either at the summary level
//! (`--preset`, writes `DIR/summary` and `DIR/truth.json`) or as descriptor files (`--vectors`,
//! geometry `--geometry`); `--vectors --validate` runs the vector-level validation families
//! (files in `DIR`, truth from the whole-pool scan, predictions from hash samples).

use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::simulate::{SimulateJob, VectorValidation};
use tailrank::simulate::request::{SimulateRequest, VectorOptions};
use tailrank::simulate::{validation::seed_range, vector_validation::VectorRunOptions};

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
    #[arg(allow_negative_numbers = true, long, conflicts_with = "validate")]
    pub fraction: Option<f64>,
    /// Scale the preset to this many queries (refused first if its memory would not fit).
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
    /// Validation: comma-separated sample fractions (default: the exam's, 0.05,0.01).
    #[arg(
        allow_hyphen_values = true,
        long,
        value_delimiter = ',',
        requires = "validate"
    )]
    pub fractions: Option<Vec<f64>>,
    /// Validation: whether the predictions move to the centre of the excess (as `predict`).
    #[command(flatten)]
    pub centre: super::CentreArgs,
    /// Validation: which evt fit gives the estimate (as `predict`).
    #[command(flatten)]
    pub fit: super::FitArgs,
    /// Validation, web families: keep the whole-pool truth summary (top 1,000 scores per query)
    /// and each fraction's sample summary in --out (`<family>-s<seed>/full`, `.../f<f>`), for
    /// rerunning `tailrank predict` on them.
    #[arg(long, requires = "validate")]
    pub keep_summaries: bool,
    /// Validation: also write the runs as JSON here.
    #[arg(long, requires = "validate")]
    pub json: Option<PathBuf>,
}

pub fn run(a: SimulateArgs) -> anyhow::Result<()> {
    let fit_default = tailrank::predict::PredictOptions::DEFAULT.fit.as_str();
    let request = SimulateRequest {
        preset: a.preset.clone(),
        vectors: a.vectors,
        validate: a.validate,
        seed: a.seed,
        pool_size: a.pool_size,
        fraction: a.fraction,
        queries: a.queries,
        vector: VectorOptions {
            geometry: a.geometry.clone(),
            dim: a.dim,
            instances: a.instances,
            extra_queries: a.extra_queries,
            dtype: a.dtype.clone(),
        },
        prediction_options: a.fit.fit != fit_default || a.centre.given().is_some(),
    };
    let defaults = VectorRunOptions::default();
    let validation = VectorValidation {
        families: &a.family,
        seeds: seed_range(a.seed, a.seeds, "--seed", "--seeds")?,
        options: VectorRunOptions {
            fractions: a.fractions.clone().unwrap_or(defaults.fractions),
            pool_size: a.pool_size,
            dim: a.dim,
            excess_centre: a.centre.enabled(),
            fit: a.fit.fit.parse()?,
            keep_summaries: a.keep_summaries,
            ..defaults
        },
        json: a.json.as_deref(),
    };
    let job = SimulateJob {
        request,
        out: &a.out,
        validation,
    };
    Ok(job.run(&mut super::Terminal)?)
}
