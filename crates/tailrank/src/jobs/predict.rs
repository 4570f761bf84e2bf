//! `tailrank predict`, `compare` and `curve`: a prediction from a scan summary or a hardness
//! file ([`PredictJob`]), the difference between two models' summaries ([`CompareJob`]), and
//! the predicted curve over pool sizes drawn as an image ([`CurveJob`]).

use super::{json_text, serde_pretty, Console, View};
use crate::atomic::Transaction;
use crate::error::{Error, Result};
use crate::formats::hardness_csv::write_hardness_csv;
use crate::predict::compare::compare;
use crate::predict::{read_summary_for_metrics, NextStepPlan, PredictInput};
use crate::predict::{PredictOptions, PredictRequest};
use crate::report::headline::{compare_headline, prediction_headline};
use crate::report::html::write_prediction_html;
use crate::report::html_pages::{compare_page, write_html};
use crate::report::{prediction_json, prediction_table};
use std::path::Path;

/// The warning of `--top-m` where it names the fit's number (`predict`, `curve`, `compare`).
pub const FIT_TOP_RENAMED: &str = "--top-m is deprecated here: it is now --fit-top (the number \
     of top sample scores the tail is fitted on; --top-m is the M a scan keeps); --top-m will be \
     removed in the next release";

/// The help of `--fit-top` (`predict`, `compare`, `curve`), with the default's value,
/// `EvtOptions::DEFAULT.top_m`.
pub fn fit_top_help() -> String {
    format!(
        "evt: number of top sample scores the options' tail is fitted on (the estimate's \
         under --fit fixed; under level-selected, the other opinion and one more candidate) \
         (default {}, used up to the M the summary keeps; given explicitly, at most that M)",
        crate::hardness::EvtOptions::DEFAULT.top_m
    )
}

/// A prediction's options as a front end names them, and whether the number of top scores
/// the tail is fitted on came by its former name (`--top-m`: [`FIT_TOP_RENAMED`]).
#[derive(Debug, Clone)]
pub struct PredictFlags<'a> {
    pub request: PredictRequest<'a>,
    pub fit_top_renamed: bool,
}

impl PredictFlags<'_> {
    /// [`PredictRequest::options`], after the warning of the former name when it was used.
    pub fn options(&self, console: &mut dyn Console) -> Result<PredictOptions> {
        if self.fit_top_renamed {
            console.warn(FIT_TOP_RENAMED);
        }
        self.request.options()
    }
}

/// The input of a prediction: a summary folder or a hardness file (exactly one).
#[derive(Debug, Clone, Copy)]
pub struct PredictInputFiles<'a> {
    pub summary: Option<&'a Path>,
    pub hardness: Option<&'a Path>,
}

impl<'a> PredictInputFiles<'a> {
    /// The input paths (no output may land over one).
    pub fn paths(&self) -> Vec<&'a Path> {
        self.summary.iter().chain(&self.hardness).copied().collect()
    }

    /// Read the input for `request` ([`PredictRequest::load`]), the summary reader's warnings
    /// to `console`.
    pub fn load(
        &self,
        request: &PredictRequest,
        console: &mut dyn Console,
    ) -> Result<PredictInput> {
        request.load(self.summary, self.hardness, |w| console.warn(&w))
    }
}

/// `tailrank predict`: the prediction of `input`, with the level-0 hardness CSV and the HTML
/// page written when asked for, printed in `view`.
#[derive(Debug, Clone)]
pub struct PredictJob<'a> {
    pub flags: PredictFlags<'a>,
    pub input: PredictInputFiles<'a>,
    pub hardness_out: Option<&'a Path>,
    pub html: Option<&'a Path>,
    /// Width in points (positive) that the realized metric's interval should reach: the next
    /// step names the fraction expected to reach it.
    pub target_width: Option<f64>,
    pub view: View,
}

impl PredictJob<'_> {
    /// The options made and the outputs claimed (the width checked between the two files)
    /// before the input is read; the files written together once the prediction is made.
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        let opts = self.flags.options(console)?;
        let mut outputs = Transaction::new(&self.input.paths());
        let hardness_slot = self.hardness_out.map(|p| outputs.add_file(p)).transpose()?;
        if let Some(w) = self.target_width.filter(|w| !(w.is_finite() && *w > 0.0)) {
            return Err(Error::option(format!(
                "--target-width must be a positive number of points, got {w}"
            )));
        }
        let plan = NextStepPlan {
            target_width: self.target_width.map(|w| w / 100.0),
            summary_path: self.input.summary.map(|s| s.display().to_string()),
        };
        let html_slot = self.html.map(|p| outputs.add_file(p)).transpose()?;
        let input = self.input.load(&self.flags.request, console)?;
        let (p, meta) = input.predict_with_plan(&opts, &plan)?;
        if let Some(slot) = hardness_slot {
            outputs.write(slot, |path| write_hardness_csv(path, &meta, &p.hardness))?;
        }
        if let Some(slot) = html_slot {
            let doc = prediction_json(&p);
            outputs.write(slot, |path| write_prediction_html(&doc, path))?;
        }
        if hardness_slot.is_some() || html_slot.is_some() {
            outputs.commit()?;
            super::note_written(console, "predict", &[self.hardness_out, self.html]);
        }
        console.out(&match self.view {
            View::Json => serde_pretty(&prediction_json(&p))? + "\n",
            View::Details => prediction_table(&p),
            View::Headline => prediction_headline(&p),
        });
        Ok(())
    }
}

/// `tailrank compare A B`: the predicted difference at N between the models of summaries `a`
/// and `b` (same queries, same pool sample), with the HTML page written when asked for,
/// printed in `view`.
#[derive(Debug, Clone)]
pub struct CompareJob<'a> {
    pub flags: PredictFlags<'a>,
    pub a: &'a Path,
    pub b: &'a Path,
    pub html: Option<&'a Path>,
    pub view: View,
}

impl CompareJob<'_> {
    /// The options made and the page claimed before the summaries are read (each checked
    /// against an explicit fit-top); an error of the comparison names both folders.
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        let opts = self.flags.options(console)?;
        let mut outputs = Transaction::new(&[self.a, self.b]);
        let html_slot = self.html.map(|p| outputs.add_file(p)).transpose()?;
        let sa = read_summary_for_metrics(self.a, |w| console.warn(&w))?;
        let sb = read_summary_for_metrics(self.b, |w| console.warn(&w))?;
        self.flags.request.check_fit_top(&sa, Some(self.a))?;
        self.flags.request.check_fit_top(&sb, Some(self.b))?;
        let c = compare(&sa, &sb, &opts).map_err(|e| {
            let (a, b) = (self.a.display(), self.b.display());
            Error::new(e.kind(), format!("comparing {a} with {b}: {e}"))
        })?;
        if let Some(slot) = html_slot {
            let page = compare_page(&c, (&sa, self.a), (&sb, self.b), &opts)?;
            outputs.write(slot, |path| write_html(&page, path))?;
            outputs.commit()?;
            super::note_written(console, "compare", &[self.html]);
        }
        console.out(&match self.view {
            View::Json => json_text(&c)?,
            View::Details => crate::report::compare::table(&c),
            View::Headline => compare_headline(&c),
        });
        Ok(())
    }
}

/// `tailrank curve`: the predicted curve of `input` over pool sizes `from..=to`
/// (`per_decade` points per decade) drawn to `out` (`.svg` or `.png`); with `json` the curve
/// is printed as JSON, else a line naming the image.
#[derive(Debug, Clone)]
pub struct CurveJob<'a> {
    pub flags: PredictFlags<'a>,
    pub input: PredictInputFiles<'a>,
    pub out: &'a Path,
    pub from: f64,
    pub to: f64,
    pub per_decade: usize,
    pub json: bool,
}

impl CurveJob<'_> {
    /// The image's format checked and its path claimed before the options are made and the
    /// input read.
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        crate::plot::PlotFormat::from_path(self.out)?;
        let mut outputs = Transaction::new(&self.input.paths());
        let slot = outputs.add_file(self.out)?;
        let opts = self.flags.options(console)?;
        let input = self.input.load(&self.flags.request, console)?;
        let c = input.curve(&opts, self.from, self.to, self.per_decade)?;
        outputs.write(slot, |p| crate::plot::write_curve(&c, p))?;
        outputs.commit()?;
        console.out(&if self.json {
            json_text(&c)?
        } else {
            format!("wrote {} ({} points)\n", self.out.display(), c.points.len())
        });
        Ok(())
    }
}
