//! `tailrank ilias`: ILIAS end to end from its own files ([`IliasRequest`]), from the id
//! checks to the printed report.

use super::{json_text, Console, View};
use crate::atomic::Transaction;
use crate::error::Result;
use crate::ilias::{run_ilias, IliasReport, IliasRequest, ReportPage, SummaryOutput};
use crate::report::headline::ilias_headline;
use crate::report::html_pages::{ilias_report_html, write_html};

/// `tailrank ilias` as asked for by `request`, its report printed in `view` (the headline
/// only in prediction mode: an exact run prints its table).
#[derive(Debug, Clone)]
pub struct IliasJob<'a> {
    pub request: IliasRequest<'a>,
    pub view: View,
}

impl IliasJob<'_> {
    /// The options checked ([`IliasRequest::options`], the scan's tuning read through
    /// `tuning`) and the HTML page claimed before the inputs are opened (with `--summary-out`,
    /// with the summaries, in their commit); the warnings of what
    /// the report will lack printed before the scan (the console's progress over the rows
    /// scanned shown while it runs), the scan's notes after it; then the page written and the
    /// report printed.
    pub fn run(
        &self,
        tuning: impl Fn(&str) -> Option<String>,
        console: &mut dyn Console,
    ) -> Result<()> {
        let r = &self.request;
        let mut opts = r.options(tuning, |w| console.warn(w))?;
        let inputs = r.inputs();
        if let (Some(h), Some(dir)) = (r.html, r.summary_out) {
            crate::outputs::refuse_inside(h, dir, "ilias run")?;
        }
        // With the summaries the page is replaced together with them (claimed with them, once
        // the inputs are open), else on its own: without them, or on a stream (`/dev/stdout`).
        let page_alone = r.summary_out.is_none() || r.html.is_some_and(crate::outputs::is_stream);
        let mut html_out = Transaction::new(&inputs);
        let html_slot = match page_alone {
            true => r.html.map(|p| html_out.add_file(p)).transpose()?,
            false => None,
        };
        let render = |report: &IliasReport| ilias_report_html(report);
        let (ds, feats, warnings) = r.open()?;
        for w in warnings {
            console.warn(&w);
        }
        opts.sets = ds.chosen_sets(r.queries);
        // The summaries of all sets are replaced together, never over the dataset or features.
        let out = r.summary_out.map(|dir| SummaryOutput {
            dir,
            inputs: inputs.clone(),
            chunk_rows: r.chunk_rows,
            resume: r.resume,
            page: r.html.filter(|_| !page_alone).map(|path| ReportPage {
                path,
                render: &render,
            }),
        });
        // A spinner: the distractor total is known only once the scan has read every shard.
        let bar = console.progress("ilias scan", None);
        let (report, notes) = run_ilias(&ds, &feats, &opts, out.as_ref(), &bar)?;
        drop(bar);
        for note in notes {
            console.err(&format!("tailrank ilias: {note}"));
        }
        let predicted = report.sets.iter().any(|s| s.prediction.is_some());
        if let Some(slot) = html_slot {
            let page = ilias_report_html(&report);
            html_out.write(slot, |path| write_html(&page, path))?;
            html_out.commit()?;
        }
        if r.html.is_some() {
            super::note_written(console, "ilias", &[r.html]);
        }
        console.out(&match self.view {
            View::Json => json_text(&report)?,
            View::Headline if predicted => ilias_headline(&report),
            View::Headline | View::Details => crate::report::ilias::table(&report),
        });
        Ok(())
    }
}
