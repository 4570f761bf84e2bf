//! What `tailrank ilias` is asked for, checked before the scan (hours at full scale): the
//! options of the scan and of the prediction, with M and the fit's number from
//! [`IliasTopCounts`], and the inputs, opened with the warnings of what the report will lack.

use super::{
    dataset_warnings, find_features, FeatureFiles, IliasDataset, IliasOptions, IliasTopCounts,
    ILIAS_FIT_TOP_DEPRECATED,
};
use crate::error::{Error, Result};
use crate::predict::PredictRequest;
use crate::scan::config::ScanOptions;
use std::path::Path;

/// The inputs and options of `tailrank ilias` as a front end receives them.
#[derive(Debug, Clone)]
pub struct IliasRequest<'a> {
    pub dataset_dir: &'a Path,
    pub features: &'a Path,
    /// taxonomy.json (None: looked for in the dataset folder).
    pub taxonomy: Option<&'a Path>,
    /// The distractors to scan (None: all).
    pub selected_ids: Option<&'a Path>,
    /// `--top-m` and `--fit-top` as given ([`IliasTopCounts::new`]).
    pub top_m: Option<usize>,
    pub fit_top: Option<usize>,
    /// The scan's options; its M is set from the top counts.
    pub scan: ScanOptions,
    /// The prediction's options; its fit's number is set from the top counts.
    pub predict: PredictRequest<'a>,
    /// The query sets to evaluate (`image`, `text` or `both`: [`IliasDataset::chosen_sets`]).
    pub queries: &'a str,
    /// Where the scan summaries are written ([`super::SummaryOutput`]: `dir`, `chunk_rows`,
    /// `resume`), if anywhere.
    pub summary_out: Option<&'a Path>,
    pub chunk_rows: usize,
    pub resume: bool,
    /// Where the HTML page of the prediction is written, if asked for.
    pub html: Option<&'a Path>,
}

impl IliasRequest<'_> {
    /// The checked options (`sets` left empty: they are chosen once the dataset is open), the
    /// scan's tuning read through `tuning`; the deprecation warning of `--fit-top` alone goes
    /// to `warn` first.
    pub fn options(
        &self,
        tuning: impl Fn(&str) -> Option<String>,
        warn: impl FnOnce(&str),
    ) -> Result<IliasOptions> {
        let counts = IliasTopCounts::new(self.top_m, self.fit_top)?;
        if counts.deprecated_fit_top {
            warn(ILIAS_FIT_TOP_DEPRECATED);
        }
        let scan = ScanOptions {
            top_m: counts.top_m,
            ..self.scan.clone()
        };
        let predict = PredictRequest {
            fit_top: Some(counts.fit_top),
            ..self.predict.clone()
        };
        let opts = IliasOptions {
            sets: Vec::new(),
            scan: scan.config(tuning)?,
            predict: predict.options()?,
        };
        opts.check()?;
        if self.html.is_some() && crate::sample::is_exact_fraction(self.scan.fraction) {
            return Err(Error::option(
                "--html writes the report of a prediction: give --fraction below 1 (an exact \
                 run has no prediction to render)",
            ));
        }
        Ok(opts)
    }

    /// Every input: the dataset and feature folders, the taxonomy and the selected ids (no
    /// output may land over one).
    pub fn inputs(&self) -> Vec<&Path> {
        let mut inputs = vec![self.dataset_dir, self.features];
        inputs.extend(self.taxonomy);
        inputs.extend(self.selected_ids);
        inputs
    }

    /// The dataset (with the selected ids) and the feature files, with the warnings of what
    /// the report will lack ([`dataset_warnings`], which the report repeats at its top).
    pub fn open(&self) -> Result<(IliasDataset, FeatureFiles, Vec<String>)> {
        let mut ds = IliasDataset::open(self.dataset_dir, self.taxonomy)?;
        ds.selected_ids = self.selected_ids.map(Path::to_path_buf);
        let feats = find_features(self.features)?;
        let mut warnings = dataset_warnings(&ds);
        if ds.taxonomy.is_none() {
            warnings.push("give the taxonomy file with --taxonomy FILE".to_string());
        }
        Ok((ds, feats, warnings))
    }
}
