//! `tailrank ilias`: ILIAS end to end from its own files. Finds the id lists in `--dataset-dir`
//! and the HDF5 features in `--features`, checks every feature id against the lists, scans the
//! distractors once for all chosen query sets (all of them, or the hash sample with
//! `--fraction`), and prints the ILIAS report: mAP@k for i2i and t2i, the scale, clutter and
//! (sub)category breakdowns, and in prediction mode the predicted N mAP with its interval and
//! baselines. See `docs/reference/ilias.md`.

use super::progress::Bar;
use clap::Args;
use std::path::PathBuf;
use tailrank::hardness::Estimator;
use tailrank::ilias::IliasRequest;
use tailrank::jobs::ilias::IliasJob;
use tailrank::jobs::View;
use tailrank::maps::MapKind;
use tailrank::predict::{PredictOptions, PredictRequest};
use tailrank::scan::config::ScanOptions;

/// Help heading of the options that only a prediction (`--fraction` below 1) reads.
const PREDICTION: &str = "Prediction mode (--fraction below 1)";

/// The spinner of the distractor rows done (the total is only known once every shard's index
/// has been read inside the scan).
const SPINNER: &str = "ilias scan {spinner} {human_pos} distractor rows {per_sec}";

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
    /// Sample fraction of the distractors (prediction mode); 1 = exact, scan everything.
    #[arg(long, default_value_t = 1.0)]
    pub fraction: f64,
    /// Hash seed of the sample.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Cut-off k of mAP@k.
    #[arg(long, default_value_t = PredictOptions::DEFAULT.k)]
    pub k: usize,
    /// Print the full JSON report instead of the table.
    #[arg(long)]
    pub json: bool,
    /// With --fraction: print the full report (each set's prediction table, the breakdowns)
    /// instead of the headline.
    #[arg(long, conflicts_with = "json")]
    pub details: bool,
    /// With --fraction: also write the report as one self-contained HTML page here (each
    /// set's prediction page: curve, levels, checks, histogram, next step).
    #[arg(long)]
    pub html: Option<PathBuf>,
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
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// L2-normalise descriptors that are not unit-norm instead of refusing them.
    #[arg(long)]
    pub normalize: bool,
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
    /// Hardness estimator.
    #[arg(long, help_heading = PREDICTION, default_value = Estimator::DEFAULT_NAME, value_parser = Estimator::NAMES)]
    pub estimator: String,
    /// Hardness-to-metric map.
    #[arg(long, help_heading = PREDICTION, default_value = MapKind::DEFAULT_NAME, value_parser = MapKind::NAMES)]
    pub map: String,
    /// Query-bootstrap replicates (0 = no intervals).
    #[arg(long, help_heading = PREDICTION, default_value_t = PredictOptions::DEFAULT.bootstrap)]
    pub bootstrap: usize,
    /// Sample-noise replicates (0 = off).
    #[arg(long, help_heading = PREDICTION, default_value_t = PredictOptions::DEFAULT.sample_noise)]
    pub sample_noise: usize,
    /// Confidence level of the intervals.
    #[arg(long, help_heading = PREDICTION, default_value_t = PredictOptions::DEFAULT.confidence)]
    pub confidence: f64,
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
        scan: ScanOptions {
            fraction: a.fraction,
            seed: a.seed,
            threads: a.threads,
            normalize: a.normalize,
            model: a.model.clone(),
            ..ScanOptions::default()
        },
        predict: PredictRequest {
            k: a.k,
            estimator: &a.estimator,
            map: &a.map,
            fit: &a.fit.fit,
            bootstrap: a.bootstrap,
            sample_noise: a.sample_noise,
            confidence: a.confidence,
            seed: a.seed,
            excess_centre: a.centre.enabled(),
            ..PredictRequest::DEFAULT
        },
        queries: &a.queries,
        summary_out: a.summary_out.as_deref(),
        chunk_rows: a.chunk_rows,
        resume: a.resume,
        html: a.html.as_deref(),
    };
    let job = IliasJob {
        request,
        view: View::of(a.json, a.details),
    };
    let tuning = |k: &str| std::env::var(k).ok();
    let spinner = || Bar::new(None, SPINNER);
    Ok(job.run(tuning, spinner, &mut super::Terminal)?)
}
