//! The input of a prediction ([`PredictInput`]): a scan summary, or a released hardness file
//! (`formats::hardness_csv`), which holds the level-0 hardness only (no levels, shards or
//! sample noise; its own estimator is used, [`predict_from_hardness`]).

use super::Prediction;
use super::{curve, curve_from_hardness, predict_from_hardness, Curve, PredictOptions};
use super::{predict_with_plan, NextStepPlan};
use crate::error::{Error, Result};
use crate::formats::hardness_csv::read_hardness_csv;
use crate::hardness::{Estimator, EvtOptions, HardnessMeta, QueryHardness};
use crate::summary::Summary;
use std::path::Path;

/// A scan summary or the contents of a hardness file.
#[derive(Debug, Clone)]
pub enum PredictInput {
    Summary(Box<Summary>),
    /// The metadata boxed, as the summary is: both variants stay a pointer wide.
    Hardness(Box<HardnessMeta>, Vec<QueryHardness>),
}

impl PredictInput {
    /// The pool size N the input records, if any.
    pub fn recorded_pool_size(&self) -> Option<u64> {
        match self {
            PredictInput::Summary(s) => s.pool_size,
            PredictInput::Hardness(meta, _) => meta.pool_size,
        }
    }

    /// The prediction ([`predict`] or [`predict_from_hardness`]) and the metadata of the
    /// level-0 hardness it came from (what a hardness file of `Prediction::hardness` records).
    pub fn predict(self, opts: &PredictOptions) -> Result<(Prediction, HardnessMeta)> {
        self.predict_with_plan(opts, &NextStepPlan::default())
    }

    /// [`PredictInput::predict`] with the next step asked for by `plan`.
    pub fn predict_with_plan(
        self,
        opts: &PredictOptions,
        plan: &NextStepPlan,
    ) -> Result<(Prediction, HardnessMeta)> {
        match self {
            PredictInput::Summary(s) => {
                let p = predict_with_plan(&s, opts, plan)?;
                let meta = super::hardness_meta(&s, &p);
                Ok((p, meta))
            }
            PredictInput::Hardness(meta, qs) => {
                let p = predict_from_hardness(&meta, &qs, opts)?;
                Ok((p, *meta))
            }
        }
    }

    /// The predicted curve over pool sizes `lo..=hi` ([`curve`] or [`curve_from_hardness`]).
    pub fn curve(
        &self,
        opts: &PredictOptions,
        lo: f64,
        hi: f64,
        per_decade: usize,
    ) -> Result<Curve> {
        match self {
            PredictInput::Summary(s) => curve(s, opts, lo, hi, per_decade),
            PredictInput::Hardness(meta, qs) => {
                curve_from_hardness(meta, qs, opts, lo, hi, per_decade)
            }
        }
    }
}

/// The options of a prediction as a front end names them (`tailrank predict`'s flags, Python's
/// keywords), turned into [`PredictOptions`] and checked against the input once.
#[derive(Debug, Clone)]
pub struct PredictRequest<'a> {
    /// Target pool size N (None: the input's).
    pub pool_size: Option<u64>,
    pub k: usize,
    /// `Estimator::NAMES`, `MapKind::NAMES` and `FitMode::NAMES`.
    pub estimator: &'a str,
    pub map: &'a str,
    pub fit: &'a str,
    pub bootstrap: usize,
    pub sample_noise: usize,
    pub confidence: f64,
    pub seed: u64,
    /// evt: top sample scores the options' tail is fitted on (None: `EvtOptions::DEFAULT`'s,
    /// used up to the summary's M; given, at most that M).
    pub fit_top: Option<usize>,
    pub quantile: f64,
    pub c_min: u64,
    pub excess_centre: bool,
}

impl PredictRequest<'static> {
    /// [`PredictOptions::DEFAULT`] by name: the default estimator, map and fit, no explicit
    /// pool size or fit_top.
    pub const DEFAULT: PredictRequest<'static> = PredictRequest {
        pool_size: None,
        k: PredictOptions::DEFAULT.k,
        estimator: Estimator::DEFAULT_NAME,
        map: crate::maps::MapKind::DEFAULT_NAME,
        fit: PredictOptions::DEFAULT.fit.as_str(),
        bootstrap: PredictOptions::DEFAULT.bootstrap,
        sample_noise: PredictOptions::DEFAULT.sample_noise,
        confidence: PredictOptions::DEFAULT.confidence,
        seed: PredictOptions::DEFAULT.seed,
        fit_top: None,
        quantile: EvtOptions::DEFAULT.quantile,
        c_min: EvtOptions::DEFAULT.c_min,
        excess_centre: PredictOptions::DEFAULT.excess_centre,
    };
}

impl PredictRequest<'_> {
    /// The prediction options.
    pub fn options(&self) -> Result<PredictOptions> {
        let evt = EvtOptions {
            top_m: self.fit_top.unwrap_or(EvtOptions::DEFAULT.top_m),
            quantile: self.quantile,
            c_min: self.c_min,
        };
        Ok(PredictOptions {
            pool_size: self.pool_size,
            k: self.k,
            bootstrap: self.bootstrap,
            sample_noise: self.sample_noise,
            confidence: self.confidence,
            seed: self.seed,
            fit: self.fit.parse()?,
            excess_centre: self.excess_centre,
            ..PredictOptions::named(self.estimator, evt, self.map)?
        })
    }

    /// Refuse an explicit `fit_top` of the evt estimator above the M of `summary` (read from
    /// `dir`, where known).
    pub fn check_fit_top(&self, summary: &Summary, dir: Option<&Path>) -> Result<()> {
        let evt = matches!(
            Estimator::named(self.estimator, EvtOptions::DEFAULT)?,
            Estimator::Evt(_)
        );
        summary.check_fit_top(self.fit_top, evt, dir)
    }

    /// Read the input, a summary folder or a hardness file (exactly one), passing the summary
    /// reader's warnings to `warn`; a summary is checked against an explicit `fit_top`, and
    /// without an explicit pool size the input must record N.
    pub fn load(
        &self,
        summary: Option<&Path>,
        hardness: Option<&Path>,
        mut warn: impl FnMut(String),
    ) -> Result<PredictInput> {
        let (input, path) = match (summary, hardness) {
            (Some(dir), None) => {
                let s = read_summary_for_metrics(dir, &mut warn)?;
                if let Some(why) = super::increment_refusal(&s) {
                    return Err(Error::mismatch_at(dir, why));
                }
                self.check_fit_top(&s, Some(dir))?;
                (PredictInput::Summary(Box::new(s)), dir)
            }
            (None, Some(h)) => {
                let (meta, qs) = read_hardness_csv(h)?;
                if let Some(q) = qs.iter().find(|q| q.positives.is_empty()) {
                    return Err(Error::input(
                        h,
                        format!(
                            "query {:?} has no positives (its `j = 0` row): AP is undefined \
                             for it, so nothing can be predicted from this file",
                            q.query_id
                        ),
                    ));
                }
                (PredictInput::Hardness(Box::new(meta), qs), h)
            }
            _ => {
                return Err(Error::option(
                    "give exactly one of --summary and --hardness",
                ))
            }
        };
        if self.pool_size.is_none() && input.recorded_pool_size().is_none() {
            return Err(Error::option(format!(
                "the pool size N is unknown: {} does not record it; give --pool-size",
                path.display()
            )));
        }
        Ok(input)
    }
}

/// Read the summary folder `dir`, passing to `warn` the reader's warnings (e.g. a format-1
/// folder whose manifest is not checksummed) and, when its tie counts are unknown (a format-1
/// folder), that the metrics then resolve ties in the positive's favour.
pub fn read_summary_for_metrics(dir: &Path, mut warn: impl FnMut(String)) -> Result<Summary> {
    let (s, warnings) = Summary::read_with_warnings(dir)?;
    warnings.into_iter().for_each(&mut warn);
    if let Some(w) = s.ties_unknown_warning() {
        warn(format!("{}: {w}", dir.display()));
    }
    Ok(s)
}
