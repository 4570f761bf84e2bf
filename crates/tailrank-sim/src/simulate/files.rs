//! A simulated benchmark written to a folder (`tailrank simulate`, `tailrank demo`): the
//! summary a scan of the sample would have produced (`summary/`), the known truth
//! (`truth.json`) and, for the demo, the prediction from the summary (`prediction.json`).
//! The files are replaced together, the summary last ([`crate::atomic::Transaction`]).

use super::{simulate_summary, SimConfig, Simulation};
use crate::atomic::{write_bytes, Transaction};
use crate::error::{Error, Result};
use crate::predict::{predict_with_plan, NextStepPlan, PredictOptions, Prediction};
use std::path::{Path, PathBuf};

/// Where the files of a simulation go in its output folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimulationFiles {
    /// `OUT/summary`.
    pub summary: PathBuf,
    /// `OUT/truth.json`.
    pub truth: PathBuf,
    /// `OUT/prediction.json` (written only when a prediction is asked for).
    pub prediction: PathBuf,
}

impl SimulationFiles {
    /// The paths inside `out`.
    pub fn in_dir(out: &Path) -> Self {
        SimulationFiles {
            summary: out.join("summary"),
            truth: out.join("truth.json"),
            prediction: out.join("prediction.json"),
        }
    }
}

impl SimulationFiles {
    /// Refuse an output folder whose files tailrank would replace but did not write: `out`
    /// itself a scan summary (it holds `manifest.json`), or a `truth.json` / `prediction.json`
    /// there that is no JSON object with the keys every simulated truth / prediction report has
    /// (a user's file of that name; `prediction.json` only when `with_prediction`, the demo's).
    /// A folder a simulation wrote before is rewritten; one holding a `prediction.json` is
    /// refused without `with_prediction` (the file would be left stale).
    fn check_replaceable(&self, out: &Path, with_prediction: bool) -> Result<()> {
        if out.join("manifest.json").is_file() {
            return Err(Error::output(
                out,
                "is a scan summary folder (it holds manifest.json); a simulation writes \
                 OUT/summary and OUT/truth.json: choose another output folder",
            ));
        }
        let ours = |path: &Path, keys: &[&str]| {
            std::fs::read(path)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|v| keys.iter().all(|k| v.get(k).is_some()))
        };
        let checked = [
            (
                &self.truth,
                &["config", "pool_size", "map_at_k", "queries"][..],
                "simulated truth",
            ),
            (
                &self.prediction,
                &["tool_version", "map_at_k", "options"][..],
                "prediction report",
            ),
        ];
        if !with_prediction && std::fs::symlink_metadata(&self.prediction).is_ok() {
            return Err(Error::output(
                &self.prediction,
                "is the prediction of an earlier `tailrank demo` in this folder, which a \
                 simulation (it predicts nothing) would leave beside a new summary and truth: \
                 choose another output folder (or move the file away)",
            ));
        }
        for (path, keys, what) in &checked[..if with_prediction { 2 } else { 1 }] {
            if std::fs::symlink_metadata(path).is_ok() && !ours(path, keys) {
                return Err(Error::output(
                    path,
                    format!(
                        "exists and is not a {what} tailrank wrote; refusing to replace it: \
                         choose another output folder (or move the file away)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The demo (`tailrank demo`): simulate `cfg` into `out` and predict from its sample with
/// [`demo_options`], staging the prediction beside the summary and the truth in `outputs`
/// ([`stage_simulation`]; the caller commits, with its own outputs of the demo).
pub fn run_demo(
    cfg: &SimConfig,
    out: &Path,
    bootstrap: usize,
    sample_noise: usize,
    outputs: &mut Transaction,
) -> Result<(Simulation, Prediction)> {
    let opts = demo_options(cfg, bootstrap, sample_noise);
    let (sim, p) = stage_simulation(cfg, out, Some(&opts), outputs)?;
    Ok((sim, p.expect("a prediction was asked for")))
}

/// The demo's prediction options for a simulation `cfg`: mAP@k at the simulation's k, with
/// `bootstrap` query-bootstrap and `sample_noise` sample-noise replicates, seeded with the
/// simulation's seed; everything else [`PredictOptions::DEFAULT`].
pub fn demo_options(cfg: &SimConfig, bootstrap: usize, sample_noise: usize) -> PredictOptions {
    PredictOptions {
        k: cfg.k,
        bootstrap,
        sample_noise,
        seed: cfg.seed,
        ..PredictOptions::default()
    }
}

/// Simulate `cfg` into the folder `out` ([`SimulationFiles`]): the truth and the summary, and
/// with `prediction` also the prediction from the summary (its JSON report,
/// `report::prediction_json`). Creates `out`; replaces the files together, the summary last.
pub fn simulate_to_dir(
    cfg: &SimConfig,
    out: &Path,
    prediction: Option<&PredictOptions>,
) -> Result<(Simulation, Option<Prediction>)> {
    let mut outputs = Transaction::new(&[]);
    let done = stage_simulation(cfg, out, prediction, &mut outputs)?;
    outputs.commit()?;
    Ok(done)
}

/// [`simulate_to_dir`] with its files staged in `outputs` (after the outputs the caller added
/// there) and not yet committed: the caller commits them together with its own.
pub fn stage_simulation(
    cfg: &SimConfig,
    out: &Path,
    prediction: Option<&PredictOptions>,
    outputs: &mut Transaction,
) -> Result<(Simulation, Option<Prediction>)> {
    // A configuration or prediction options `check` refuses leave nothing on disk.
    cfg.check()?;
    prediction.map(PredictOptions::check).transpose()?;
    let files = SimulationFiles::in_dir(out);
    files.check_replaceable(out, prediction.is_some())?;
    crate::outputs::refuse_in_summary(out)?;
    crate::outputs::create_output_folder(out)?;
    let truth_slot = outputs.add_file(&files.truth)?;
    let prediction_slot = match prediction {
        Some(_) => Some(outputs.add_file(&files.prediction)?),
        None => None,
    };
    let summary_slot = outputs.add_dir(&files.summary)?;
    let sim = simulate_summary(cfg)?;
    // The next step's commands name the summary folder written here.
    let plan = NextStepPlan {
        summary_path: Some(files.summary.display().to_string()),
        ..NextStepPlan::default()
    };
    let p = prediction
        .map(|opts| predict_with_plan(&sim.summary, opts, &plan))
        .transpose()?;
    outputs.write(truth_slot, |path| sim.truth.write(path))?;
    if let (Some(slot), Some(p)) = (prediction_slot, &p) {
        let json = serde_json::to_vec_pretty(&crate::predict::json::prediction_json(p))
            .map_err(|e| Error::internal(format!("cannot serialise the prediction: {e}")))?;
        outputs.write(slot, |path| write_bytes(path, &json))?;
    }
    outputs.write(summary_slot, |path| sim.summary.write(path))?;
    Ok((sim, p))
}
