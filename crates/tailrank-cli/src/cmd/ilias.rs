//! `tailrank ilias`: ILIAS end to end from its own files. Finds the id lists in `--dataset-dir`
//! and the HDF5 features in `--features`, checks every feature id against the lists, scans the
//! distractors once for all chosen query sets (all of them, or the hash sample with
//! `--fraction`), and prints the ILIAS report: mAP@k for i2i and t2i, the scale, clutter and
//! (sub)category breakdowns, and in prediction mode the predicted N mAP with its interval and
//! baselines. See `docs/reference/ilias.md`.

use super::predict::{MethodArgs, SampleNoiseArgs};
use super::scan::{PoolSampleArgs, ScanRunArgs};
use clap::Args;
use std::path::PathBuf;
use tailrank::ilias::IliasRequest;
use tailrank::jobs::ilias::IliasJob;
use tailrank::predict::{PredictOptions, PredictRequest};
use tailrank::scan::config::ScanOptions;

/// Help heading of the options that only a prediction (`--fraction` below 1) reads.
const PREDICTION: &str = "Prediction mode (--fraction below 1)";

#[derive(Args, Debug)]
pub struct IliasArgs {
    /// ILIAS dataset folder (holding image_ids/ with the id lists).
    #[arg(long)]
    pub dataset_dir: PathBuf,
    /// Feature folder: features_{image,text}_queries.hdf5, features_positives.hdf5,
    /// features_distractors_*.hdf5.
    #[arg(long)]
    pub features: PathBuf,
    /// Query sets to evaluate.
    #[arg(long, default_value = "both", value_parser = ["image", "text", "both"])]
    pub queries: String,
    /// The hash sample of the distractors (prediction mode below 1).
    #[command(flatten)]
    pub sample: PoolSampleArgs,
    /// Cut-off k of mAP@k.
    #[arg(long, default_value_t = PredictOptions::DEFAULT.k)]
    pub k: usize,
    /// The report's table, JSON or HTML page (with --fraction: each set's prediction).
    #[command(flatten)]
    pub view: super::ViewArgs,
    /// Model name recorded in the report.
    #[arg(long, default_value = "")]
    pub model: String,
    /// taxonomy.json for the category breakdown (default: looked for in the dataset folder,
    /// its image_ids/ and misc/).
    #[arg(long)]
    pub taxonomy: Option<PathBuf>,
    /// Scan only the distractors listed here (the official --selected_ids, e.g. mini-ILIAS):
    /// one entry per line, a distractor id or its second '/' component; N = their number.
    #[arg(long)]
    pub selected_ids: Option<PathBuf>,
    /// Write the scan summaries here (one folder per query set: `<DIR>/<set>`).
    #[arg(long)]
    pub summary_out: Option<PathBuf>,
    /// M: top distractor scores the scan keeps per query and subset [default: as `tailrank
    /// scan --top-m`].
    #[arg(long)]
    pub top_m: Option<usize>,
    /// evt: number of top sample scores the tail is fitted on, at most --top-m [default: as
    /// `tailrank predict --fit-top`, used up to M]. Without --top-m it sets M too (deprecated:
    /// warns).
    #[arg(long)]
    pub fit_top: Option<usize>,
    #[command(flatten)]
    pub run: ScanRunArgs,
    /// Continue an interrupted scan from its partial folder `SUMMARY_OUT.partial/` (finished
    /// chunks are reused after checking that inputs and options are unchanged), as
    /// `tailrank scan --resume` does. With `--summary-out`, every scan keeps that folder while
    /// it runs.
    #[arg(long, requires = "summary_out")]
    pub resume: bool,
    /// Distractor rows per chunk of a scan with `--summary-out` (small shards share one):
    /// each chunk is saved in `SUMMARY_OUT.partial/` as soon as it is scanned.
    #[arg(long, default_value_t = tailrank::scan::resume::DEFAULT_CHUNK_ROWS)]
    pub chunk_rows: usize,
    #[command(flatten, next_help_heading = PREDICTION)]
    pub method: MethodArgs,
    #[command(flatten, next_help_heading = PREDICTION)]
    pub noise: SampleNoiseArgs,
    /// Prediction mode: whether each set's estimate moves to the centre of the excess (as
    /// `predict`).
    #[command(flatten, next_help_heading = PREDICTION)]
    pub centre: super::CentreArgs,
    #[command(flatten, next_help_heading = PREDICTION)]
    pub fit: super::FitArgs,
}

pub fn run(a: IliasArgs) -> anyhow::Result<()> {
    let request = IliasRequest {
        dataset_dir: &a.dataset_dir,
        features: &a.features,
        taxonomy: a.taxonomy.as_deref(),
        selected_ids: a.selected_ids.as_deref(),
        top_m: a.top_m,
        fit_top: a.fit_top,
        scan: a.sample.options(
            a.run,
            ScanOptions {
                model: a.model.clone(),
                ..ScanOptions::default()
            },
        ),
        predict: a.method.apply(PredictRequest {
            k: a.k,
            fit: &a.fit.fit,
            sample_noise: a.noise.sample_noise,
            seed: a.sample.seed,
            excess_centre: a.centre.enabled(),
            ..PredictRequest::DEFAULT
        }),
        queries: &a.queries,
        summary_out: a.summary_out.as_deref(),
        chunk_rows: a.chunk_rows,
        resume: a.resume,
        html: a.view.html.as_deref(),
    };
    let job = IliasJob {
        request,
        view: a.view.view(),
    };
    let tuning = |k: &str| std::env::var(k).ok();
    Ok(job.run(tuning, &mut super::Terminal)?)
}
