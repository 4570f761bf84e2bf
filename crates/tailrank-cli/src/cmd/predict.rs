//! `tailrank predict`: the predicted full-pool mAP@k from a scan summary (`--summary`) or a
//! released hardness file (`--hardness`), with intervals, baselines, budget and drift verdicts
//! and the tail report, as one table (or `--json`).

use clap::Args;
use std::path::PathBuf;
use tailrank::hardness::{Estimator, EvtOptions};
use tailrank::jobs::predict::{PredictFlags, PredictInputFiles, PredictJob};
use tailrank::maps::MapKind;
use tailrank::predict::{PredictOptions, PredictRequest};

/// Input and model options shared by `predict` and `curve`.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Scan summary folder (prediction mode).
    #[arg(
        long,
        conflicts_with = "hardness",
        required_unless_present = "hardness"
    )]
    pub summary: Option<PathBuf>,
    /// Hardness CSV artifact (instead of a summary).
    #[arg(long)]
    pub hardness: Option<PathBuf>,
    #[command(flatten)]
    pub est: EstimateArgs,
}

/// The pool size, estimator, map, interval and fit options shared by `predict`, `curve` and
/// `compare`.
#[derive(Args, Debug, Clone)]
pub struct EstimateArgs {
    /// Pool size N to predict at; `curve` marks it on the plot (default: the N in the input).
    #[arg(long)]
    pub pool_size: Option<u64>,
    /// Cut-off k of mAP@k.
    #[arg(long, default_value_t = PredictOptions::DEFAULT.k)]
    pub k: usize,
    #[command(flatten)]
    pub method: MethodArgs,
    /// Seed of the bootstrap draws.
    #[arg(long, default_value_t = PredictOptions::DEFAULT.seed)]
    pub seed: u64,
    #[command(flatten)]
    pub fit: super::FitArgs,
    #[arg(long, help = tailrank::jobs::predict::fit_top_help())]
    pub fit_top: Option<usize>,
    /// Former name of --fit-top (deprecated: warns; removed in the next release).
    #[arg(long = "top-m", hide = true, conflicts_with = "fit_top")]
    pub top_m_deprecated: Option<usize>,
    /// evt: threshold quantile of the options' fitted top scores (as --fit-top).
    #[arg(allow_negative_numbers = true, long, default_value_t = EvtOptions::DEFAULT.quantile)]
    pub quantile: f64,
    /// evt: counts at or above this are used as they are.
    #[arg(long, default_value_t = EvtOptions::DEFAULT.c_min)]
    pub c_min: u64,
}

/// The hardness estimator, the map and the query-bootstrap intervals: the prediction options
/// that `ilias` shares with `predict`, `curve` and `compare`.
#[derive(Args, Debug, Clone)]
pub struct MethodArgs {
    /// Hardness estimator: evt (tail-aware) or count (from a hardness file, the file's estimator
    /// is used and this and the evt options are ignored).
    #[arg(long, default_value = Estimator::DEFAULT_NAME, value_parser = Estimator::NAMES)]
    pub estimator: String,
    /// Hardness-to-metric map.
    #[arg(long, default_value = MapKind::DEFAULT_NAME, value_parser = MapKind::NAMES)]
    pub map: String,
    /// Query-bootstrap replicates (0: no bootstrap intervals nor verdict; a realized interval is still given).
    #[arg(long, default_value_t = PredictOptions::DEFAULT.bootstrap)]
    pub bootstrap: usize,
    /// Confidence level of the intervals.
    #[arg(allow_negative_numbers = true, long, default_value_t = PredictOptions::DEFAULT.confidence)]
    pub confidence: f64,
}

impl MethodArgs {
    /// `request` with these options in place of its own.
    pub fn apply<'a>(&'a self, request: PredictRequest<'a>) -> PredictRequest<'a> {
        PredictRequest {
            estimator: &self.estimator,
            map: &self.map,
            bootstrap: self.bootstrap,
            confidence: self.confidence,
            ..request
        }
    }
}

/// Sample-noise replicates, shared by `predict` and `ilias`.
#[derive(Args, Debug, Clone, Copy)]
pub struct SampleNoiseArgs {
    /// Sample-noise replicates (Poisson reweighting of the sample; 0 = off; summary only).
    #[arg(long, default_value_t = PredictOptions::DEFAULT.sample_noise)]
    pub sample_noise: usize,
}

impl ModelArgs {
    /// The input: the summary folder or the hardness file.
    pub fn input(&self) -> PredictInputFiles<'_> {
        PredictInputFiles {
            summary: self.summary.as_deref(),
            hardness: self.hardness.as_deref(),
        }
    }
}

impl EstimateArgs {
    /// The library's request, with whether the fit's number came by its deprecated name
    /// `--top-m`.
    pub fn flags(&self, sample_noise: usize, excess_centre: bool) -> PredictFlags<'_> {
        PredictFlags {
            request: self.method.apply(PredictRequest {
                pool_size: self.pool_size,
                k: self.k,
                fit: &self.fit.fit,
                sample_noise,
                seed: self.seed,
                fit_top: self.fit_top.or(self.top_m_deprecated),
                quantile: self.quantile,
                c_min: self.c_min,
                excess_centre,
                ..PredictRequest::DEFAULT
            }),
            fit_top_renamed: self.top_m_deprecated.is_some(),
        }
    }
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub centre: super::CentreArgs,
    #[command(flatten)]
    pub noise: SampleNoiseArgs,
    #[command(flatten)]
    pub view: super::ViewArgs,
    /// Write the level-0 hardness artifact (CSV) here.
    #[arg(long)]
    pub hardness_out: Option<PathBuf>,
    /// Width (in points) the interval for the realized metric should reach: the next step
    /// names the fraction expected to reach it.
    #[arg(allow_negative_numbers = true, long)]
    pub target_width: Option<f64>,
}

pub fn run(a: PredictArgs) -> anyhow::Result<()> {
    let job = PredictJob {
        flags: a.model.est.flags(a.noise.sample_noise, a.centre.enabled()),
        input: a.model.input(),
        hardness_out: a.hardness_out.as_deref(),
        html: a.view.html.as_deref(),
        target_width: a.target_width,
        view: a.view.view(),
    };
    Ok(job.run(&mut super::Terminal)?)
}
