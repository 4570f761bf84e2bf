//! The HTML reports of `demo`, `compare` and `ilias --fraction` (`--html FILE`), built from the
//! prediction pages of [`super::html`]: one self-contained page each, every number one of the
//! command's JSON.
//!
//! A page with several predictions (compare's A and B, ilias' query sets) gives each its own
//! section, whose element ids carry the section's prefix (`a-estimate`, `i2i-verdict`), so that
//! every id on the page stays unique.

use super::html::{escape, page, prediction_body};
use super::pct;
use crate::error::{IoContext, Result};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// `html` with every element id prefixed by `prefix-`.
fn prefixed(html: &str, prefix: &str) -> String {
    html.replace(" id=\"", &format!(" id=\"{prefix}-"))
}

/// A number of the JSON in percent, in an element with `id` and the JSON's text in
/// `data-json` (as the prediction page's headline values).
fn value_span(id: &str, v: &Value, signed: bool) -> String {
    let x = v.as_f64().unwrap_or(f64::NAN);
    let shown = if signed && x.is_finite() {
        format!("{:+.2}", 100.0 * x)
    } else {
        pct(x)
    };
    format!(
        r#"<span id="{id}" data-json="{}">{shown}</span>"#,
        escape(&v.to_string())
    )
}

/// `tailrank demo --html`: the prediction's page with the known truth beside it (`truth` the
/// truth file's JSON: `map_at_k`, `k`).
pub fn demo_html(doc: &Value, truth: &Value) -> String {
    let t = &truth["map_at_k"];
    let error = doc["map_at_k"].as_f64().unwrap_or(f64::NAN) - t.as_f64().unwrap_or(f64::NAN);
    let realized = &doc["realized"]["map_at_k_realized_interval"];
    let inside = realized[0]
        .as_f64()
        .zip(realized[1].as_f64())
        .map(|(lo, hi)| {
            let x = t.as_f64().unwrap_or(f64::NAN);
            lo <= x && x <= hi
        });
    let mut body = prediction_body(doc);
    let _ = write!(
        body,
        r#"<h2>Known truth</h2><p id="truth">The simulated pool's exact mAP@{}: {}% (error of the estimate {} points, {}).</p>"#,
        truth["k"],
        value_span("truth-map-at-k", t, false),
        value_span("truth-error", &Value::from(error), true),
        match inside {
            Some(true) => "inside the interval for the realized metric",
            Some(false) => "outside the interval for the realized metric",
            None => "no realized interval",
        }
    );
    page(
        "tailrank demo: the prediction and the known truth",
        &body,
        "tailrank demo",
    )
}

/// `tailrank compare --html`: the difference with its paired interval and verdict (`cmp` the
/// comparison's JSON), then each model's prediction page (`a`, `b`; ids prefixed `a-`, `b-`).
pub fn compare_html(cmp: &Value, a: &Value, b: &Value) -> String {
    let iv = &cmp["interval"];
    let mut body = String::new();
    let _ = write!(
        body,
        r#"<h1>tailrank compare: {} − {}</h1><table class="headline"><tr><td>A − B at N</td><td class="big">{} points</td></tr><tr><td>paired interval</td><td>{} – {} points</td></tr><tr><td>extrapolation error</td><td>{} points</td></tr><tr><td>verdict</td><td><b id="separated" data-json="{}">{}</b>: {}</td></tr></table>"#,
        escape(cmp["model_a"].as_str().unwrap_or("")),
        escape(cmp["model_b"].as_str().unwrap_or("")),
        value_span("difference", &cmp["difference"], true),
        value_span("difference-lo", &iv["lo"], true),
        value_span("difference-hi", &iv["hi"], true),
        value_span("extrapolation-error", &cmp["extrapolation_error"], false),
        cmp["separated"],
        if cmp["separated"] == true {
            "separated"
        } else {
            "not separated"
        },
        escape(cmp["reason"].as_str().unwrap_or(""))
    );
    for (prefix, name, doc) in [("a", "A", a), ("b", "B", b)] {
        let _ = write!(
            body,
            r#"<section id="model-{prefix}"><h2>Model {name}</h2>{}</section>"#,
            prefixed(&prediction_body(doc), prefix)
        );
    }
    page("tailrank compare", &body, "tailrank compare --json")
}

/// `tailrank ilias --fraction --html`: each query set's prediction page (`sets`: the task
/// name and the prediction's JSON; ids prefixed by the task), after the report's warnings.
pub fn ilias_html(model: &str, sets: &[(String, Value)], warnings: &[String]) -> String {
    let mut body = format!("<h1>tailrank ILIAS report: {}</h1>", escape(model));
    for w in warnings {
        let _ = write!(body, "<p class=\"meta\">warning: {}</p>", escape(w));
    }
    for (task, doc) in sets {
        let id: String = task
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let _ = write!(
            body,
            r#"<section id="set-{id}"><h2>{}</h2>{}</section>"#,
            escape(task),
            prefixed(&prediction_body(doc), &id)
        );
    }
    page("tailrank ILIAS report", &body, "tailrank ilias --json")
}

/// Write `html` to `path` (a staging path of an output transaction).
pub fn write_html(html: &str, path: &Path) -> Result<()> {
    std::fs::write(path, html).at(path)
}

/// `tailrank compare --html`: [`compare_html`] of comparison `c` of summaries `a` and `b` (each
/// with its folder), each model's page its prediction as `predict` gives it with `opts`.
pub fn compare_page(
    c: &crate::predict::compare::Comparison,
    a: (&crate::summary::Summary, &Path),
    b: (&crate::summary::Summary, &Path),
    opts: &crate::predict::PredictOptions,
) -> Result<String> {
    let doc = |(s, path): (&crate::summary::Summary, &Path)| -> Result<Value> {
        let plan = crate::predict::NextStepPlan {
            target_width: None,
            summary_path: Some(path.display().to_string()),
        };
        let p = crate::predict::predict_with_plan(s, opts, &plan)?;
        Ok(super::prediction_json(&p))
    };
    let cmp = serde_json::to_value(c)
        .map_err(|e| crate::error::Error::internal(format!("comparison JSON: {e}")))?;
    Ok(compare_html(&cmp, &doc(a)?, &doc(b)?))
}

/// `tailrank ilias --fraction … --html`: [`ilias_html`] of report `r`, one section per query
/// set with a prediction.
pub fn ilias_report_html(r: &crate::ilias::IliasReport) -> String {
    let sets: Vec<(String, Value)> = r
        .sets
        .iter()
        .filter_map(|s| {
            Some((
                s.task.clone(),
                super::prediction_json(s.prediction.as_ref()?),
            ))
        })
        .collect();
    ilias_html(&r.model, &sets, &r.warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(estimate: f64) -> Value {
        json!({"model": "m", "query_set": "q", "pool_size": 1000u64, "sample_size": 50u64,
               "k": 10, "n_queries": 1, "n_positives": 1, "tool_version": "0",
               "map_at_k": estimate, "map_at_k_bca_interval": [0.1, 0.9],
               "realized": {"map_at_k_realized_interval": [0.2, 0.6]},
               "hit_at_1": 0.5, "recall_at_k": 0.5, "trust": {"verdict": "trusted"},
               "levels": [], "queries": []})
    }

    #[test]
    fn sections_keep_ids_unique() {
        let cmp = json!({"model_a": "m<a>", "model_b": "n", "difference": -0.0125,
            "interval": {"lo": -0.02, "hi": -0.005}, "extrapolation_error": 0.001,
            "separated": true, "reason": "ok"});
        let h = compare_html(&cmp, &doc(0.3), &doc(0.3125));
        assert!(
            h.contains(r#"id="difference" data-json="-0.0125">-1.25</span>"#),
            "{h}"
        );
        assert!(h.contains(r#"id="a-estimate" data-json="0.3">30.00<"#));
        assert!(h.contains(r#"id="b-estimate" data-json="0.3125">31.25<"#));
        assert!(h.contains("m&lt;a&gt;") && !h.contains("<a>"));
        let ids: Vec<&str> = h
            .split(" id=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        let unique: std::collections::HashSet<&&str> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
    }

    #[test]
    fn demo_page_says_where_the_truth_lies() {
        let h = demo_html(&doc(0.3), &json!({"map_at_k": 0.25, "k": 10}));
        assert!(
            h.contains(r#"id="truth-map-at-k" data-json="0.25">25.00<"#),
            "{h}"
        );
        assert!(h.contains(">+5.00<") && h.contains("inside the interval"));
        let h = demo_html(&doc(0.3), &json!({"map_at_k": 0.7, "k": 10}));
        assert!(h.contains("outside the interval"));
    }
}
