//! The input of a prediction ([`PredictInput`]): a scan summary, or a released hardness file
//! (`formats::hardness_csv`), which holds the level-0 hardness only (no levels, shards or
//! sample noise; its own estimator is used, [`predict_from_hardness`]).

use super::Prediction;
use super::{curve, curve_from_hardness, predict_from_hardness, Curve, PredictOptions};
use super::{predict_with_plan, NextStepPlan};
use crate::error::Result;
use crate::hardness::{HardnessMeta, QueryHardness};
use crate::summary::Summary;

/// A scan summary or the contents of a hardness file.
#[derive(Debug, Clone)]
pub enum PredictInput {
    Summary(Box<Summary>),
    Hardness(HardnessMeta, Vec<QueryHardness>),
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
                Ok((p, meta))
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
