//! `tailrank eval`: the exact metrics of a results file or of a whole-pool scan summary
//! ([`EvalRequest`]), printed as their table or, with `json`, as the full report.

use super::{json_text, Console};
use crate::error::Result;
use crate::metric::{EvalOutcome, EvalRequest};

#[derive(Debug, Clone)]
pub struct EvalJob {
    pub request: EvalRequest,
    pub json: bool,
}

impl EvalJob {
    /// Evaluate ([`EvalRequest::evaluate`], its warnings to `console` as they come) and print.
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        let text = match self.request.evaluate(|w| console.warn(&w))? {
            EvalOutcome::Sets(r) if self.json => json_text(&r)?,
            EvalOutcome::Sets(r) => r.table(&self.request.metrics),
            EvalOutcome::Revisited(r) if self.json => json_text(&r)?,
            EvalOutcome::Revisited(r) => r.table(),
        };
        console.out(&text);
        Ok(())
    }
}
