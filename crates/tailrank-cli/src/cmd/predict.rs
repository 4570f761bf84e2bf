//! `tailrank predict`: the predicted full-pool mAP@k from a scan summary (`--summary`) or a
//! released hardness file (`--hardness`), with intervals, baselines, budget and drift verdicts
//! and the tail report, as one table (or `--json`).

use anyhow::bail;
use clap::Args;
use std::path::{Path, PathBuf};
use tailrank::formats::hardness_csv;
use tailrank::hardness::{Estimator, EvtOptions};
use tailrank::maps::MapKind;
use tailrank::predict::{NextStepPlan, PredictInput, PredictOptions, PredictRequest};
use tailrank::report::headline::prediction_headline;

use tailrank::report::html::write_prediction_html;
use tailrank::report::{prediction_json, prediction_table};

/// The deprecation warning of `--top-m` where it names the fit's number (`predict`, `curve`,
/// `compare`).
const FIT_TOP_RENAMED: &str = "--top-m is deprecated here: it is now --fit-top (the number of \
     top sample scores the tail is fitted on; --top-m is the M a scan keeps); --top-m will be \
     removed in the next release";

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
    /// Pool size N to predict for (default: the N recorded in the input).
    #[arg(long)]
    pub pool_size: Option<u64>,
    #[command(flatten)]
    pub est: EstimateArgs,
}

/// Estimator, map and interval options shared by `predict`, `curve` and `compare`.
#[derive(Args, Debug, Clone)]
pub struct EstimateArgs {
    /// Cut-off k of mAP@k.
    #[arg(long, default_value_t = PredictOptions::DEFAULT.k)]
    pub k: usize,
    /// Hardness estimator: evt (tail-aware) or count (from a hardness file, the file's estimator
    /// is used and this and the evt options are ignored).
    #[arg(long, default_value = Estimator::DEFAULT_NAME, value_parser = Estimator::NAMES)]
    pub estimator: String,
    /// Hardness-to-metric map.
    #[arg(long, default_value = MapKind::DEFAULT_NAME, value_parser = MapKind::NAMES)]
    pub map: String,
    /// Query-bootstrap replicates (0 = no intervals).
    #[arg(long, default_value_t = PredictOptions::DEFAULT.bootstrap)]
    pub bootstrap: usize,
    /// Confidence level of the intervals.
    #[arg(long, default_value_t = PredictOptions::DEFAULT.confidence)]
    pub confidence: f64,
    /// Seed of the bootstrap draws.
    #[arg(long, default_value_t = PredictOptions::DEFAULT.seed)]
    pub seed: u64,
    #[command(flatten)]
    pub fit: super::FitArgs,
    /// evt: number of top sample scores the options' tail is fitted on (the estimate's under
    /// --fit fixed; under level-selected, the other opinion and one more candidate) (default
    /// `EvtOptions::DEFAULT.top_m`, used up to the M the summary keeps; given explicitly, at
    /// most that M).
    #[arg(long)]
    pub fit_top: Option<usize>,
    /// Former name of --fit-top (deprecated: warns; removed in the next release).
    #[arg(long = "top-m", hide = true, conflicts_with = "fit_top")]
    pub top_m_deprecated: Option<usize>,
    /// evt: threshold quantile of the options' fitted top scores (as --fit-top).
    #[arg(long, default_value_t = EvtOptions::DEFAULT.quantile)]
    pub quantile: f64,
    /// evt: counts at or above this are used as they are.
    #[arg(long, default_value_t = EvtOptions::DEFAULT.c_min)]
    pub c_min: u64,
}

impl ModelArgs {
    /// The library's request from the arguments (see [`EstimateArgs::request`]).
    pub fn request(&self, sample_noise: usize, excess_centre: bool) -> PredictRequest<'_> {
        self.est
            .request(self.pool_size, sample_noise, excess_centre)
    }

    /// The input path (summary folder or hardness file).
    pub fn input_paths(&self) -> Vec<&Path> {
        self.summary
            .iter()
            .chain(&self.hardness)
            .map(|p| p.as_path())
            .collect()
    }

    /// Read the input (`PredictRequest::load`: a summary is checked against an explicit
    /// `--fit-top`; without `--pool-size`, the input must record N).
    pub fn load(&self, request: &PredictRequest) -> anyhow::Result<PredictInput> {
        let (summary, hardness) = (self.summary.as_deref(), self.hardness.as_deref());
        Ok(request.load(summary, hardness, |w| super::warn_all([w]))?)
    }
}

impl EstimateArgs {
    /// The library's request for pool size `pool_size` (None: the input's N).
    pub fn request(
        &self,
        pool_size: Option<u64>,
        sample_noise: usize,
        excess_centre: bool,
    ) -> PredictRequest<'_> {
        PredictRequest {
            pool_size,
            k: self.k,
            estimator: &self.estimator,
            map: &self.map,
            fit: &self.fit.fit,
            bootstrap: self.bootstrap,
            sample_noise,
            confidence: self.confidence,
            seed: self.seed,
            fit_top: self.fit_top.or(self.top_m_deprecated),
            quantile: self.quantile,
            c_min: self.c_min,
            excess_centre,
        }
    }

    /// The prediction options of `request`; warns once when the deprecated `--top-m` is given.
    pub fn options(&self, request: &PredictRequest) -> anyhow::Result<PredictOptions> {
        if self.top_m_deprecated.is_some() {
            super::warn_all([FIT_TOP_RENAMED]);
        }
        Ok(request.options()?)
    }
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub centre: super::CentreArgs,
    /// Sample-noise replicates (Poisson reweighting of the sample; 0 = off; summary only).
    #[arg(long, default_value_t = PredictOptions::DEFAULT.sample_noise)]
    pub sample_noise: usize,
    /// Print the full JSON report instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write the level-0 hardness artifact (CSV) here.
    #[arg(long)]
    pub hardness_out: Option<PathBuf>,
    /// Print the full table instead of the headline.
    #[arg(long, conflicts_with = "json")]
    pub details: bool,
    /// Width (in points) the interval for the realized metric should reach: the next step
    /// names the fraction expected to reach it.
    #[arg(long)]
    pub target_width: Option<f64>,
    /// Also write the report as one self-contained HTML page here (curve, levels, checks,
    /// per-query histogram, next step; the numbers of `--json`).
    #[arg(long)]
    pub html: Option<PathBuf>,
}

pub fn run(a: PredictArgs) -> anyhow::Result<()> {
    let request = a.model.request(a.sample_noise, a.centre.enabled());
    let opts = a.model.est.options(&request)?;
    let mut outputs = tailrank::atomic::Transaction::new(&a.model.input_paths());
    let hardness_slot = a
        .hardness_out
        .as_deref()
        .map(|p| outputs.add_file(p))
        .transpose()?;
    let plan = NextStepPlan {
        target_width: a.target_width.map(|w| w / 100.0),
        summary_path: a.model.summary.as_ref().map(|s| s.display().to_string()),
    };
    if let Some(w) = a.target_width.filter(|w| !(w.is_finite() && *w > 0.0)) {
        bail!("--target-width must be a positive number of points, got {w}");
    }
    let html_slot = a.html.as_deref().map(|p| outputs.add_file(p)).transpose()?;
    let input = a.model.load(&request)?;
    let (p, meta) = input.predict_with_plan(&opts, &plan)?;
    if let Some(slot) = hardness_slot {
        outputs.write(slot, |path| {
            hardness_csv::write_hardness_csv(path, &meta, &p.hardness)
        })?;
    }
    if let Some(slot) = html_slot {
        let doc = prediction_json(&p);
        outputs.write(slot, |path| write_prediction_html(&doc, path))?;
    }
    if hardness_slot.is_some() || html_slot.is_some() {
        outputs.commit()?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&prediction_json(&p))?);
    } else if a.details {
        print!("{}", prediction_table(&p));
    } else {
        print!("{}", prediction_headline(&p));
    }
    Ok(())
}
