//! `tailrank predict`: the predicted full-pool mAP@k from a scan summary (`--summary`) or a
//! released hardness file (`--hardness`), with intervals, baselines, budget and drift verdicts
//! and the tail report, as one table (or `--json`).

use anyhow::bail;
use clap::Args;
use std::path::{Path, PathBuf};
use tailrank::hardness::{self, Estimator, EvtOptions, HardnessMeta, QueryHardness};
use tailrank::maps::MapKind;
use tailrank::predict::PredictOptions;
use tailrank::scan::summary::Summary;

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
    /// Cut-off k of mAP@k.
    #[arg(long, default_value_t = 1000)]
    pub k: usize,
    /// Hardness estimator: evt (tail-aware) or count (with --hardness, the file's estimator is
    /// used and this and the evt options are ignored).
    #[arg(long, default_value = "evt", value_parser = ["evt", "count"])]
    pub estimator: String,
    /// Hardness-to-metric map.
    #[arg(long, default_value = "expected-rank", value_parser = ["expected-rank", "binomial"])]
    pub map: String,
    /// Query-bootstrap replicates (0 = no intervals).
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
    /// Confidence level of the intervals.
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// Seed of the bootstrap draws.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// evt: number of top sample scores the tail is fitted on.
    #[arg(long, default_value_t = 4000)]
    pub top_m: usize,
    /// evt: threshold quantile of the top-M scores.
    #[arg(long, default_value_t = 0.95)]
    pub quantile: f64,
    /// evt: counts at or above this are used as they are.
    #[arg(long, default_value_t = 5)]
    pub c_min: u64,
}

/// The model's input: a summary or a hardness artifact.
pub enum Input {
    Summary(Box<Summary>),
    Hardness(HardnessMeta, Vec<QueryHardness>),
}

impl ModelArgs {
    /// Prediction options from the arguments (`sample_noise` set by the caller).
    pub fn options(&self, sample_noise: usize) -> anyhow::Result<PredictOptions> {
        let estimator = match self.estimator.as_str() {
            "count" => Estimator::Count,
            _ => Estimator::Evt(EvtOptions {
                top_m: self.top_m,
                quantile: self.quantile,
                c_min: self.c_min,
            }),
        };
        let map = MapKind::parse(&self.map)
            .ok_or_else(|| anyhow::anyhow!("unknown map {:?}", self.map))?;
        Ok(PredictOptions {
            pool_size: self.pool_size,
            k: self.k,
            estimator,
            map,
            bootstrap: self.bootstrap,
            sample_noise,
            confidence: self.confidence,
            seed: self.seed,
        })
    }

    /// Read the input.
    pub fn load(&self) -> anyhow::Result<Input> {
        match (&self.summary, &self.hardness) {
            (Some(s), None) => {
                let summary = Summary::read(s)?;
                if let Some(w) = summary.ties_unknown_warning() {
                    eprintln!("tailrank: warning: {}: {w}", s.display());
                }
                Ok(Input::Summary(Box::new(summary)))
            }
            (None, Some(h)) => {
                let (meta, qs) = hardness::read_hardness_csv(h)?;
                Ok(Input::Hardness(meta, qs))
            }
            _ => bail!("give exactly one of --summary and --hardness"),
        }
    }
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Sample-noise replicates (Poisson reweighting of the sample; 0 = off; summary only).
    #[arg(long, default_value_t = 50)]
    pub sample_noise: usize,
    /// Print the full JSON report instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write the level-0 hardness artifact (CSV) here.
    #[arg(long)]
    pub hardness_out: Option<PathBuf>,
}

fn write_hardness(path: &Path, meta: &HardnessMeta, qs: &[QueryHardness]) -> anyhow::Result<()> {
    hardness::write_hardness_csv(path, meta, qs)?;
    Ok(())
}

pub fn run(a: PredictArgs) -> anyhow::Result<()> {
    let mut opts = a.model.options(a.sample_noise)?;
    let (p, meta) = match a.model.load()? {
        Input::Summary(s) => {
            let p = tailrank::predict::predict(&s, &opts)?;
            let meta = HardnessMeta::from_summary(&s, 0, &opts.estimator);
            (p, meta)
        }
        Input::Hardness(meta, qs) => {
            if let Some(e) = Estimator::parse_label(&meta.estimator) {
                opts.estimator = e;
            }
            opts.sample_noise = 0;
            let p = tailrank::predict::predict_from_hardness(&meta, &qs, &opts)?;
            (p, meta)
        }
    };
    if let Some(path) = &a.hardness_out {
        write_hardness(path, &meta, &p.hardness)?;
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&tailrank::report::prediction_json(&p))?
        );
    } else {
        print!("{}", tailrank::report::prediction_table(&p));
    }
    Ok(())
}
