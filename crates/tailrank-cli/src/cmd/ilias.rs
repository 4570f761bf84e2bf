//! `tailrank ilias`: ILIAS end to end from its own files. Finds the id lists in `--dataset-dir`
//! and the HDF5 features in `--features`, checks every feature id against the lists, scans the
//! distractors once for all chosen query sets (all of them, or the hash sample with
//! `--fraction`), and prints the ILIAS report: mAP@k for i2i and t2i, the scale, clutter and
//! (sub)category breakdowns, and in prediction mode the predicted N mAP with its interval and
//! baselines. See `docs/ilias.md`.

use anyhow::bail;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use tailrank::hardness::{Estimator, EvtOptions};
use tailrank::ilias::{
    dataset_warnings, evaluate_ilias, find_features, report_ilias, scan_ilias_resumable, table,
    IliasDataset, IliasOptions,
};
use tailrank::maps::MapKind;
use tailrank::predict::PredictOptions;
use tailrank::scan::engine::{Progress, ScanConfig};
use tailrank::scan::resume::{partial_dir_for, remove_partial, ResumeOptions};

/// A spinner on stderr when it is a terminal: distractor rows done and the rate (the total is
/// only known once every shard's index has been read inside the scan).
struct Spinner(Option<ProgressBar>);

impl Spinner {
    fn new() -> Spinner {
        if !std::io::stderr().is_terminal() {
            return Spinner(None);
        }
        let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template(
                "ilias scan {spinner} {human_pos} distractor rows {per_sec}",
            )
            .expect("valid template"),
        );
        Spinner(Some(pb))
    }
    fn finish(&self) {
        if let Some(pb) = &self.0 {
            pb.finish_and_clear();
        }
    }
}

impl Progress for Spinner {
    fn rows_done(&self, rows: u64) {
        if let Some(pb) = &self.0 {
            pb.inc(rows);
        }
    }
}

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
    /// Hardness estimator (prediction mode).
    #[arg(long, default_value = Estimator::DEFAULT_NAME, value_parser = Estimator::NAMES)]
    pub estimator: String,
    /// Hardness-to-metric map (prediction mode).
    #[arg(long, default_value = MapKind::DEFAULT_NAME, value_parser = MapKind::NAMES)]
    pub map: String,
    /// evt: number of top sample scores the tail is fitted on; the scan keeps as many per query
    /// and subset. `--top-m` is its former name, still accepted.
    #[arg(long, alias = "top-m", default_value_t = EvtOptions::DEFAULT.top_m)]
    pub fit_top: usize,
    /// Query-bootstrap replicates (prediction mode; 0 = no intervals).
    #[arg(long, default_value_t = PredictOptions::DEFAULT.bootstrap)]
    pub bootstrap: usize,
    /// Sample-noise replicates (prediction mode; 0 = off).
    #[arg(long, default_value_t = PredictOptions::DEFAULT.sample_noise)]
    pub sample_noise: usize,
    /// Confidence level of the intervals.
    #[arg(long, default_value_t = PredictOptions::DEFAULT.confidence)]
    pub confidence: f64,
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
}

pub fn run(a: IliasArgs) -> anyhow::Result<()> {
    if a.k == 0 {
        bail!("--k must be at least 1");
    }
    if !(a.fraction > 0.0 && a.fraction <= 1.0) {
        bail!("--fraction must be in (0, 1], got {}", a.fraction);
    }
    let mut ds = IliasDataset::open(&a.dataset_dir, a.taxonomy.as_deref())?;
    ds.selected_ids = a.selected_ids.clone();
    let feats = find_features(&a.features)?;
    // Before the scan (hours at full scale): what the report will lack. The report repeats
    // these lines at its top.
    for w in dataset_warnings(&ds) {
        eprintln!("warning: {w}");
    }
    let sets: Vec<String> = match a.queries.as_str() {
        "both" => ds.sets.iter().map(|s| s.name.clone()).collect(),
        one => vec![one.to_string()],
    };
    // The summaries of all sets are replaced together, never over the dataset or features.
    let mut inputs: Vec<&std::path::Path> = vec![&a.dataset_dir, &a.features];
    inputs.extend(a.taxonomy.as_deref());
    inputs.extend(a.selected_ids.as_deref());
    let mut outputs = tailrank::atomic::Transaction::new(&inputs);
    let mut slots = Vec::new();
    if let Some(dir) = &a.summary_out {
        std::fs::create_dir_all(dir).map_err(|e| tailrank::Error::io(dir, e))?;
        for s in &sets {
            slots.push((s.clone(), outputs.add_dir(&dir.join(s))?));
        }
    }
    let mut scan = ScanConfig::new(a.fraction, a.seed);
    scan.top_m = a.fit_top;
    scan.threads = a.threads;
    scan.normalize = a.normalize;
    scan.model = a.model.clone();
    scan.apply_tuning(|k| std::env::var(k).ok())?;
    let estimator = Estimator::named(
        &a.estimator,
        EvtOptions {
            top_m: a.fit_top,
            ..EvtOptions::DEFAULT
        },
    )?;
    let map: MapKind = a.map.parse()?;
    let predict = PredictOptions {
        pool_size: None,
        k: a.k,
        estimator,
        map,
        bootstrap: a.bootstrap,
        sample_noise: a.sample_noise,
        confidence: a.confidence,
        seed: a.seed,
    };
    let opts = IliasOptions {
        sets,
        scan,
        predict,
    };
    let spinner = Spinner::new();
    // With --summary-out the scan is resumable: chunks are kept in SUMMARY_OUT.partial/.
    let partial = a.summary_out.as_deref().map(partial_dir_for);
    let result = match &partial {
        Some(dir) => {
            let names: Vec<&str> = opts.sets.iter().map(String::as_str).collect();
            let ropts = ResumeOptions {
                partial_dir: dir.clone(),
                chunk_rows: a.chunk_rows,
                resume: a.resume,
            };
            scan_ilias_resumable(&ds, &feats, &names, &opts.scan, &ropts, &spinner).and_then(
                |(summaries, report)| {
                    for d in &report.discarded {
                        eprintln!("tailrank ilias: discarded {}: {d}", dir.display());
                    }
                    if report.reused > 0 {
                        eprintln!(
                            "tailrank ilias: resumed: {} chunk(s) reused from {}, {} scanned",
                            report.reused,
                            dir.display(),
                            report.scanned
                        );
                    }
                    report_ilias(&ds, &opts, summaries)
                },
            )
        }
        None => evaluate_ilias(&ds, &feats, &opts, &spinner),
    };
    spinner.finish();
    let (report, summaries) = result?;
    for (set, slot) in slots {
        if let Some(s) = summaries.iter().find(|s| s.query_set == set) {
            outputs.write(slot, |p| s.write(p))?;
        } else {
            bail!("internal error: no summary of the query set {set:?} to write");
        }
    }
    if a.summary_out.is_some() {
        outputs.commit()?;
    }
    if let Some(dir) = &partial {
        remove_partial(dir)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(())
}
