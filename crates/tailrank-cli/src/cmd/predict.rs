//! `tailrank predict`: the predicted full-pool mAP@k from a scan summary (`--summary`) or a
//! released hardness file (`--hardness`), with intervals, baselines, budget and drift verdicts
//! and the tail report, as one table (or `--json`).

use anyhow::bail;
use clap::Args;
use std::path::{Path, PathBuf};
use tailrank::formats::hardness_csv;
use tailrank::hardness::{Estimator, EvtOptions};
use tailrank::maps::MapKind;
use tailrank::predict::{NextStepPlan, PredictInput, PredictOptions};
use tailrank::report::headline::prediction_headline;
use tailrank::summary::Summary;

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
    /// Prediction options from the arguments (`sample_noise` set by the caller).
    pub fn options(&self, sample_noise: usize) -> anyhow::Result<PredictOptions> {
        self.est.options(self.pool_size, sample_noise)
    }

    /// The input path (summary folder or hardness file).
    pub fn input_paths(&self) -> Vec<&Path> {
        self.summary
            .iter()
            .chain(&self.hardness)
            .map(|p| p.as_path())
            .collect()
    }

    /// Without `--pool-size`, the input must record N (the error names the input).
    pub fn require_pool_size(&self, input: &PredictInput) -> anyhow::Result<()> {
        if self.pool_size.is_none() && input.recorded_pool_size().is_none() {
            let path = self.input_paths().first().map(|p| p.display().to_string());
            bail!(
                "the pool size N is unknown: {} does not record it; give --pool-size",
                path.unwrap_or_default()
            );
        }
        Ok(())
    }

    /// Read the input (a summary is checked against an explicit `--fit-top`).
    pub fn load(&self) -> anyhow::Result<PredictInput> {
        match (&self.summary, &self.hardness) {
            (Some(s), None) => {
                let summary = super::read_summary_for_metrics(s)?;
                self.est.check_fit_top(&summary, s)?;
                Ok(PredictInput::Summary(Box::new(summary)))
            }
            (None, Some(h)) => {
                let (meta, qs) = hardness_csv::read_hardness_csv(h)?;
                Ok(PredictInput::Hardness(meta, qs))
            }
            _ => bail!("give exactly one of --summary and --hardness"),
        }
    }
}

impl EstimateArgs {
    /// `--fit-top`, or its former name `--top-m`.
    fn fit_top(&self) -> Option<usize> {
        self.fit_top.or(self.top_m_deprecated)
    }

    /// Refuse an explicit `--fit-top` above the M of `summary` (read from `dir`).
    pub fn check_fit_top(&self, summary: &Summary, dir: &Path) -> anyhow::Result<()> {
        let evt = matches!(
            Estimator::named(&self.estimator, EvtOptions::DEFAULT)?,
            Estimator::Evt(_)
        );
        Ok(summary.check_fit_top(self.fit_top(), evt, Some(dir))?)
    }

    /// Prediction options for pool size `pool_size` (None: the input's N); warns once when
    /// the deprecated `--top-m` is given.
    pub fn options(
        &self,
        pool_size: Option<u64>,
        sample_noise: usize,
    ) -> anyhow::Result<PredictOptions> {
        if self.top_m_deprecated.is_some() {
            super::warn_all([FIT_TOP_RENAMED]);
        }
        let evt = EvtOptions {
            top_m: self.fit_top().unwrap_or(EvtOptions::DEFAULT.top_m),
            quantile: self.quantile,
            c_min: self.c_min,
        };
        Ok(PredictOptions {
            pool_size,
            k: self.k,
            bootstrap: self.bootstrap,
            sample_noise,
            confidence: self.confidence,
            seed: self.seed,
            fit: self.fit.mode()?,
            ..PredictOptions::named(&self.estimator, evt, &self.map)?
        })
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
    let opts = PredictOptions {
        excess_centre: a.centre.enabled(),
        ..a.model.options(a.sample_noise)?
    };
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
    let input = a.model.load()?;
    a.model.require_pool_size(&input)?;
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
