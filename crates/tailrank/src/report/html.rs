//! The HTML report of a prediction (`tailrank predict --html FILE`): one self-contained page
//! (inline CSS and SVG, no script, nothing fetched) rendered from the prediction's JSON
//! document ([`crate::report::prediction_json`], what `--json` prints), so that every number
//! on the page is one of the JSON's.
//!
//! Every headline value sits in an element whose `id` names it and whose `data-json`
//! attribute holds the JSON's number exactly as `--json` prints it (`estimate`, `interval-lo`,
//! `interval-hi`, `hit-at-1`, `recall-at-k`); the text shows it in percent with two decimals.
//! The page carries the curve (mAP@k against pool size with the interval band at N), the
//! levels' points, the verdict's checks with one sentence each, the histogram of the per-query
//! AP@k at N and the next step (the document's `next_step` when present).

use super::html_svg::{self, Band, Point};
use super::pct;
use crate::error::{IoContext, Result};
use crate::predict::trust::{FIT_TOLERANCE, TOLERANCE, Z_CRIT};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

const STYLE: &str = "body{font-family:sans-serif;max-width:1140px;margin:1.5em auto;padding:0 1em;\
color:#222}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse}td,th{padding:.25em .7em;border-bottom:1px solid #e4e4e4;\
text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.headline td:first-child{color:#555}.big{font-size:1.5em;font-weight:bold}\
.fired{color:#b00;font-weight:bold}.passed{color:#070}.not-run{color:#777}\
svg text{font-size:11px;fill:#333}pre{background:#f4f4f4;padding:.6em;overflow-x:auto}\
.meta{color:#555}figure{margin:.5em 0}figcaption{color:#555;font-size:.9em;max-width:520px}\
.row{display:flex;flex-wrap:wrap;gap:1.5em}.row svg{width:520px;height:auto}.row h2{margin-top:.6em}\
.trusted{color:#070}.doubtful{color:#b00}.unchecked{color:#777}";

/// Escape text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn text(v: &Value) -> String {
    escape(v.as_str().unwrap_or(""))
}

/// `v` in points (percent of mAP) with two decimals and a sign.
fn points(v: &Value) -> String {
    let x = f(v);
    if x.is_finite() {
        format!("{:+.2}", 100.0 * x)
    } else {
        "n/a".into()
    }
}

/// A count with thousands separators.
fn count(v: &Value) -> String {
    v.as_u64().map_or_else(|| "n/a".into(), super::thousands)
}

fn z_text(v: &Value) -> String {
    let x = f(v);
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "n/a".into()
    }
}

/// A value of the JSON in percent, in an element with `id` and the JSON's own text in
/// `data-json`.
fn value_span(id: &str, v: &Value) -> String {
    format!(
        r#"<span id="{id}" data-json="{}">{}</span>"#,
        escape(&v.to_string()),
        pct(f(v))
    )
}

/// The interval the headline shows: the realized metric's when computed, else the total
/// interval, else the BCa interval of the query bootstrap; with its name.
fn headline_interval(doc: &Value) -> (&'static str, &Value) {
    let realized = &doc["realized"]["map_at_k_realized_interval"];
    if realized.is_array() {
        ("interval for the realized metric at N", realized)
    } else if doc["map_at_k_total_interval"].is_array() {
        ("total interval", &doc["map_at_k_total_interval"])
    } else {
        (
            "BCa interval (over other query sets)",
            &doc["map_at_k_bca_interval"],
        )
    }
}

fn band(doc: &Value) -> Band {
    let (_, iv) = headline_interval(doc);
    Band {
        estimate: f(&doc["map_at_k"]),
        lo: f(&iv[0]),
        hi: f(&iv[1]),
    }
}

/// The verdict in plain words.
fn verdict_words(verdict: &str) -> &'static str {
    match verdict {
        "trusted" => "the paired tests across the nested levels found no sign of a tail model missing mass",
        "doubtful" => "a test fired or the input is degenerate: the estimate may be off by more than its interval says",
        _ => "the tests could not run (fewer than three levels, no query bootstrap, or a hardness file)",
    }
}

fn header(out: &mut String, doc: &Value) {
    let frac = &doc["levels"][0]["fraction"];
    let _ = write!(
        out,
        r#"<h1>tailrank prediction: {} on {}</h1><p class="meta">pool size N = {}, sample S = {}{}, k = {}, {} queries, {} positives; tailrank {}</p>"#,
        text(&doc["model"]),
        text(&doc["query_set"]),
        count(&doc["pool_size"]),
        count(&doc["sample_size"]),
        frac.as_f64()
            .map_or(String::new(), |x| format!(" (fraction {x})")),
        doc["k"],
        doc["n_queries"],
        doc["n_positives"],
        text(&doc["tool_version"])
    );
}

fn headline(out: &mut String, doc: &Value) {
    let (name, iv) = headline_interval(doc);
    let verdict = doc["trust"]["verdict"].as_str().unwrap_or("unchecked");
    let k = &doc["k"];
    let b = &doc["baselines"];
    // A whole-pool scan: the exact metrics first, and the tail model's reading, which the
    // interval and the verdict judge, beside them.
    let (first, hit, recall) = match doc["exact_scan"] == true {
        true => (
            format!(
                r#"<tr><td>exact mAP@{k} at N (the whole pool is scanned)</td><td class="big">{}%</td></tr><tr><td>the tail model reads</td><td>{}%</td></tr>"#,
                value_span("exact-map", &b["evaluate_at_s_map_at_k"]),
                value_span("estimate", &doc["map_at_k"]),
            ),
            value_span("exact-hit-at-1", &b["evaluate_at_s_hit_at_1"]),
            value_span("exact-recall-at-k", &b["evaluate_at_s_recall_at_k"]),
        ),
        false => (
            format!(
                r#"<tr><td>predicted mAP@{k} at N</td><td class="big">{}%</td></tr>"#,
                value_span("estimate", &doc["map_at_k"]),
            ),
            value_span("hit-at-1", &doc["hit_at_1"]),
            value_span("recall-at-k", &doc["recall_at_k"]),
        ),
    };
    let _ = write!(
        out,
        r#"<table class="headline">{first}<tr><td>{name}</td><td>{}% – {}%</td></tr><tr><td>verdict</td><td><b id="verdict" class="{}">{}</b>: {}. <span id="verdict-reason">{}</span></td></tr><tr><td>hit@1</td><td>{hit}%</td></tr><tr><td>Recall@{k}</td><td>{recall}%</td></tr></table>"#,
        value_span("interval-lo", &iv[0]),
        value_span("interval-hi", &iv[1]),
        escape(verdict),
        escape(verdict),
        verdict_words(verdict),
        text(&doc["trust"]["reason"]),
    );
}

fn levels(doc: &Value) -> &[Value] {
    doc["levels"].as_array().map_or(&[], |v| v.as_slice())
}

fn curve_section(out: &mut String, doc: &Value) {
    let readings: Vec<Point> = levels(doc)
        .iter()
        .map(|l| Point {
            x: f(&l["sample_size"]),
            y: f(&l["evaluate_at_s_map_at_k"]),
        })
        .collect();
    let _ = write!(
        out,
        "<h2>The curve</h2><figure>{}<figcaption>mAP@k of the sample pools of the nested levels \
         (blue: evaluate-at-S, the exact value for a pool of S items) and the prediction at N \
         (red: the estimate with its interval band).</figcaption></figure>",
        html_svg::curve_svg(&readings, f(&doc["pool_size"]), &band(doc))
    );
}

fn levels_chart(out: &mut String, doc: &Value) {
    let predictions: Vec<(Point, f64)> = levels(doc)
        .iter()
        .map(|l| {
            let p = Point {
                x: f(&l["sample_size"]),
                y: f(&l["map_at_k"]),
            };
            (p, f(&l["map_at_k_std_error"]))
        })
        .collect();
    let _ = write!(
        out,
        "<h2>The levels</h2><figure>{}<figcaption>Each nested level's own prediction at N \
         (green, ± one standard error) against its sample size; red band: the interval at \
         N. Predictions that drift with the sample size are what the trend check tests.\
         </figcaption></figure>",
        html_svg::levels_svg(&predictions, &band(doc))
    );
}

fn levels_table(out: &mut String, doc: &Value) {
    out.push_str(
        "<table id=\"levels\"><tr><th>level</th><th>fraction</th><th>sample size</th>\
         <th>evaluate-at-S</th><th>prediction at N</th><th>std. error (points)</th></tr>",
    );
    for l in levels(doc) {
        let _ = write!(
            out,
            r#"<tr data-level="{}"><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}%</td><td class="n" data-json="{}">{}%</td><td class="n">{}</td></tr>"#,
            l["level"],
            l["level"],
            l["fraction"],
            count(&l["sample_size"]),
            pct(f(&l["evaluate_at_s_map_at_k"])),
            escape(&l["map_at_k"].to_string()),
            pct(f(&l["map_at_k"])),
            pct(f(&l["map_at_k_std_error"])),
        );
    }
    out.push_str("</table>");
}

/// One check of the verdict: its name, whether it fired (None: it did not run) and one
/// sentence with its numbers.
struct Check {
    id: &'static str,
    name: &'static str,
    fired: Option<bool>,
    sentence: String,
}

fn trust_checks(t: &Value) -> Vec<Check> {
    let ran = |v: &Value| f(v).is_finite();
    let mut checks = vec![Check {
        id: "check-trend",
        name: "trend",
        fired: ran(&t["trend_projected"]).then(|| t["trend_fired"] == true),
        sentence: format!(
            "The levels' predictions at N move {} points per doubling of the sample, {} points \
             carried on to N (standard error {}); it fires above {} points with |z| > {Z_CRIT}.",
            points(&t["trend_per_doubling"]),
            points(&t["trend_projected"]),
            pct(f(&t["trend_std_error"])),
            100.0 * TOLERANCE
        ),
    }];
    let used = t["in_sample_used_level"].as_u64();
    let u = t["in_sample"]
        .as_array()
        .and_then(|v| v.iter().find(|c| c["level"].as_u64() == used));
    checks.push(Check {
        id: "check-in-sample",
        name: "in-sample",
        fired: u.map(|_| t["in_sample_fired"] == true),
        sentence: u.map_or("Not run: no level below the sample.".into(), |c| {
            format!(
                "Predicting the known sample from level {} ({} items) is off by {} points \
                 (standard error {}), {} points projected to N; it fires above {} points with \
                 |z| > {Z_CRIT}.",
                c["level"],
                count(&c["sample_size"]),
                points(&c["error"]),
                pct(f(&c["std_error"])),
                points(&c["projected_error"]),
                100.0 * TOLERANCE
            )
        }),
    });
    let shift = &t["fit_choice_shift"];
    checks.push(Check {
        id: "check-fit-choice",
        name: "fit choice",
        fired: ran(shift).then(|| t["fit_choice_fired"] == true),
        sentence: format!(
            "The other tail fit, which also passes for the sample, lands {} points from the \
             estimate at N; it fires beyond ±{} points.",
            points(shift),
            100.0 * FIT_TOLERANCE
        ),
    });
    let rises = &t["level_rises"];
    checks.push(Check {
        id: "check-falling",
        name: "falling estimate",
        fired: rises.is_array().then(|| t["falling_fired"] == true),
        sentence: format!(
            "Levels 1 and 2 (a half and a quarter of the sample) predict {} and {} points \
             against level 0 at N; it fires when both lie at or above it, the whole sample \
             reading harder than its half and its quarter.",
            points(&rises[0]),
            points(&rises[1])
        ),
    });
    let e = &t["endpoint"];
    checks.push(Check {
        id: "check-endpoint",
        name: "endpoint",
        fired: e.is_object().then(|| t["endpoint_fired"] == true),
        sentence: format!(
            "{} of the {} positives that levels 1–3 call immune are outranked at level 0, {:.1} \
             expected from the fitted endpoints (z = {}); it fires when more are outranked \
             than expected with z > {Z_CRIT}.",
            e["observed"],
            e["immune"],
            f(&e["predicted"]),
            z_text(&e["z"])
        ),
    });
    let sp = &t["spacing"];
    checks.push(Check {
        id: "check-spacing",
        name: "top spacing",
        fired: sp.is_object().then(|| t["spacing_fired"] == true),
        sentence: format!(
            "In {} of the {} queries tested, the gap between the two top sampled scores is \
             wider than the gap only 1% of draws from the query's fitted tail exceed (1% of \
             the queries expected; z = {}); it fires with z > {Z_CRIT}: rare items above the \
             tail, one per query.",
            sp["exceeding"],
            sp["tested"],
            z_text(&sp["z"])
        ),
    });
    checks
}

fn data_checks(doc: &Value) -> Vec<Check> {
    let b = &doc["budget"];
    let d = &doc["drift"];
    vec![
        Check {
            id: "check-budget",
            name: "budget",
            fired: b.is_object().then(|| b["sufficient"] != true),
            sentence: match b["first_sufficient_size"].as_u64() {
                Some(s) => format!(
                    "Consecutive levels agree within their noise from level {} ({} items) on, \
                     so the sample is large enough for a stable estimate.",
                    b["first_sufficient_level"],
                    super::thousands(s)
                ),
                None => "Consecutive levels still disagree beyond their noise: a larger sample \
                         would move the estimate."
                    .into(),
            },
        },
        Check {
            id: "check-drift",
            name: "drift",
            fired: d.is_object().then(|| d["flagged"] == true),
            sentence: format!(
                "The disjoint shards of the sample differ from their mean by at most |z| = {} \
                 (flagged when {}): {}.",
                z_text(&d["max_abs_z"]),
                d["rule"].as_str().unwrap_or(""),
                if d["flagged"] == true {
                    "one part of the pool reads differently from the rest"
                } else {
                    "the pool reads the same throughout"
                }
            ),
        },
    ]
}

fn checks_section(out: &mut String, doc: &Value) {
    out.push_str(
        "<h2>The verdict's checks</h2><table id=\"checks\"><tr><th>check</th><th>result</th>\
         <th>what it says</th></tr>",
    );
    let mut all = trust_checks(&doc["trust"]);
    all.extend(data_checks(doc));
    for c in all {
        let (class, word) = match c.fired {
            Some(true) => ("fired", "fired"),
            Some(false) => ("passed", "passed"),
            None => ("not-run", "not run"),
        };
        let sentence = if c.fired.is_some() {
            escape(&c.sentence)
        } else {
            "This check did not run for this input.".into()
        };
        let _ = write!(
            out,
            r#"<tr id="{}"><td>{}</td><td class="{class}">{word}</td><td>{sentence}</td></tr>"#,
            c.id, c.name
        );
    }
    out.push_str("</table>");
}

fn histogram_section(out: &mut String, doc: &Value) {
    let queries = doc["queries"].as_array().map_or(&[][..], |v| v.as_slice());
    let aps: Vec<f64> = queries.iter().map(|q| f(&q["ap_at_k"])).collect();
    let sum = |key: &str| -> u64 { queries.iter().filter_map(|q| q[key].as_u64()).sum() };
    let _ = write!(
        out,
        "<h2>Per-query hardness</h2><figure>{}<figcaption>Queries by their predicted AP@k at N: \
         at 0 every positive is buried under distractors, at 1 none is. Positives by how their \
         hardness was estimated: {} counted, {} from a fitted tail, {} immune (above every \
         distractor the tail allows).</figcaption></figure>",
        html_svg::histogram_svg(&html_svg::bin_counts(&aps)),
        sum("n_count"),
        sum("n_tail"),
        sum("n_immune")
    );
}

fn next_step_section(out: &mut String, doc: &Value) {
    out.push_str("<h2>Next step</h2>");
    let n = &doc["next_step"];
    if !n.is_object() {
        out.push_str(
            r#"<p id="next-step" data-action="">No next step was computed for this report.</p>"#,
        );
        return;
    }
    let _ = write!(
        out,
        r#"<div id="next-step" data-action="{}"><p>{}</p>"#,
        text(&n["action"]),
        text(&n["message"])
    );
    let commands: Vec<String> = n["commands"]
        .as_array()
        .map_or(Vec::new(), |c| c.iter().map(text).collect());
    if !commands.is_empty() {
        let _ = write!(out, "<pre>{}</pre>", commands.join("\n"));
    }
    out.push_str("</div>");
}

fn warnings_section(out: &mut String, doc: &Value) {
    let w = doc["warnings"].as_array().map_or(&[][..], |v| v.as_slice());
    if w.is_empty() {
        return;
    }
    out.push_str("<h2>Warnings</h2><ul id=\"warnings\">");
    for x in w {
        let _ = write!(out, "<li>{}</li>", text(x));
    }
    out.push_str("</ul>");
}

/// The sections of a prediction's page, from its JSON document (the value `--json` prints,
/// optionally with a `next_step` object: `action`, `message`, `commands`).
pub fn prediction_body(doc: &Value) -> String {
    let mut out = String::new();
    header(&mut out, doc);
    headline(&mut out, doc);
    out.push_str("<div class=\"row\"><div>");
    curve_section(&mut out, doc);
    out.push_str("</div><div>");
    levels_chart(&mut out, doc);
    out.push_str("</div></div>");
    levels_table(&mut out, doc);
    checks_section(&mut out, doc);
    histogram_section(&mut out, doc);
    next_step_section(&mut out, doc);
    warnings_section(&mut out, doc);
    out
}

/// One self-contained page: `title` (escaped here), the style, `body` (HTML) and the footer
/// naming the command whose `--json` the numbers are.
pub fn page(title: &str, body: &str, command: &str) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body>{body}<p class=\"meta\">Rendered from the JSON \
         report of <code>{}</code>; metric values in percent with two decimals.</p>\
         </body></html>\n",
        escape(title),
        escape(command)
    )
}

/// The HTML page of a prediction's JSON document (see [`prediction_body`]).
pub fn prediction_html(doc: &Value) -> String {
    let title = format!(
        "tailrank prediction: {}",
        doc["model"].as_str().unwrap_or("")
    );
    page(&title, &prediction_body(doc), "tailrank predict --json")
}

/// Write [`prediction_html`] of `doc` to `path` (a staging path of an output transaction).
pub fn write_prediction_html(doc: &Value, path: &Path) -> Result<()> {
    std::fs::write(path, prediction_html(doc)).at(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "model": "m<script>\"x\"", "query_set": "q&a", "pool_size": 1000000u64,
            "sample_size": 50000u64, "k": 1000, "n_queries": 2, "n_positives": 3,
            "tool_version": "0", "map_at_k": 0.4038406313351789,
            "map_at_k_bca_interval": [0.30, 0.50],
            "realized": {"map_at_k_realized_interval": [0.3656589793628519, 0.48]},
            "hit_at_1": 0.65, "recall_at_k": 0.4995021645021618,
            "trust": {"verdict": "trusted", "reason": "flat <ok>", "trend_projected": 0.01,
                      "trend_per_doubling": 0.002, "trend_std_error": 0.02, "trend_fired": false},
            "levels": [{"level": 0, "fraction": 0.05, "sample_size": 50000u64, "map_at_k": 0.41,
                        "map_at_k_std_error": 0.02, "evaluate_at_s_map_at_k": 0.48}],
            "queries": [{"query_id": "a", "ap_at_k": 0.95, "n_count": 1, "n_tail": 0, "n_immune": 1},
                        {"query_id": "b", "ap_at_k": 0.05, "n_count": 1, "n_tail": 0, "n_immune": 0}],
            "warnings": ["</li><b>"]
        })
    }

    #[test]
    fn strings_of_the_document_are_escaped() {
        let h = prediction_html(&doc());
        assert!(h.contains("m&lt;script&gt;&quot;x&quot;"), "{h}");
        assert!(h.contains("q&amp;a") && h.contains("flat &lt;ok&gt;"));
        assert!(h.contains("&lt;/li&gt;&lt;b&gt;"));
        assert!(!h.contains("<script"), "no script in the page");
        assert_eq!(
            escape(r#"<a href='x'>&"#),
            "&lt;a href=&#39;x&#39;&gt;&amp;"
        );
    }

    #[test]
    fn headline_numbers_are_the_json_numbers() {
        let d = doc();
        let h = prediction_html(&d);
        for (id, v) in [
            ("estimate", &d["map_at_k"]),
            (
                "interval-lo",
                &d["realized"]["map_at_k_realized_interval"][0],
            ),
            (
                "interval-hi",
                &d["realized"]["map_at_k_realized_interval"][1],
            ),
            ("hit-at-1", &d["hit_at_1"]),
            ("recall-at-k", &d["recall_at_k"]),
        ] {
            let span = format!(r#"id="{id}" data-json="{v}">{}</span>"#, pct(f(v)));
            assert!(h.contains(&span), "missing {span} in {h}");
        }
        assert!(h.contains(">40.38%<") || h.contains(">40.38</span>%"));
        assert!(h.contains("interval for the realized metric at N"));
        assert!(h.contains("No next step was computed"));
        // Two queries: one in the first bin, one in the last.
        assert_eq!(h.matches(r#"data-count="1""#).count(), 2);
    }

    #[test]
    fn a_whole_pool_scan_shows_its_exact_metrics_first() {
        let mut d = doc();
        d["exact_scan"] = json!(true);
        d["baselines"] = json!({"evaluate_at_s_map_at_k": 0.4125, "evaluate_at_s_hit_at_1": 0.5,
            "evaluate_at_s_recall_at_k": 0.75});
        let h = prediction_html(&d);
        for (id, v) in [
            ("exact-map", 0.4125),
            ("exact-hit-at-1", 0.5),
            ("exact-recall-at-k", 0.75),
        ] {
            let span = format!(r#"id="{id}" data-json="{v}">{}</span>"#, pct(v));
            assert!(h.contains(&span), "missing {span} in {h}");
        }
        assert!(h.contains("exact mAP@1000 at N (the whole pool is scanned)"));
        assert!(h.contains("the tail model reads") && h.contains(r#"id="estimate""#));
        assert!(!h.contains(r#"id="hit-at-1""#) && !h.contains("predicted mAP@"));
        // A sample is still a prediction.
        assert!(prediction_html(&doc()).contains("predicted mAP@1000 at N"));
    }

    #[test]
    fn next_step_is_rendered_when_present() {
        let mut d = doc();
        d["next_step"] = json!({"action": "grow", "message": "grow to 10% <now>",
            "fraction": 0.1, "projected_width": 0.05,
            "commands": ["tailrank sample --after 0.05", "tailrank grow a b -o c"]});
        let h = prediction_html(&d);
        assert!(h.contains(r#"data-action="grow""#));
        assert!(h.contains("grow to 10% &lt;now&gt;"));
        assert!(h.contains("<pre>tailrank sample --after 0.05\ntailrank grow a b -o c</pre>"));
        assert!(!h.contains("No next step was computed"));
    }
}
