//! Helpers shared by the ILIAS end-to-end tests (`ilias_cli.rs`, `ilias_selected_cli.rs`): the
//! synthetic-folder and reference scripts, running the binary, and comparing a report's JSON
//! (fractions) with the Python replica of the official evaluator (percent) to 1e-9.
#![allow(dead_code)]

use serde_json::Value;
use std::process::Output;

pub const SYNTH: &str = include_str!("../../../tailrank/tests/data/ilias_synth.py");
pub const REFERENCE: &str = include_str!("../../../tailrank/tests/data/ilias_reference.py");

pub fn tailrank(args: &[&str]) -> Output {
    tailrank_test_support::cli::output(args)
}

pub fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() < 1e-9,
        "{what}: tailrank {a} vs reference {b}"
    );
}

/// Compare a group list of the report (fractions) with a reference dict (percent).
pub fn compare_groups(got: &Value, want: &Value, field: &str, what: &str) {
    let want = want.as_object().unwrap();
    let got = got.as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: group count");
    for g in got {
        let key = g["group"].as_str().unwrap();
        let w = want
            .get(key)
            .unwrap_or_else(|| panic!("{what}: group {key} not in the reference"))
            .as_f64()
            .unwrap();
        close(
            100.0 * g[field].as_f64().unwrap(),
            w,
            &format!("{what} {key}"),
        );
    }
}

/// The breakdown groups of a report's set, in the report's and the reference's naming.
pub const GROUPS: [&str; 4] = ["scale", "clutter", "categories", "subcategories"];

/// A set's overall value and every breakdown group against the reference.
pub fn compare_set(set: &Value, want: &Value, field: &str, overall: f64, what: &str) {
    close(100.0 * overall, want["map"].as_f64().unwrap(), what);
    for g in GROUPS {
        compare_groups(&set[g], &want[g], field, &format!("{what} {g}"));
    }
}

/// Per-query AP@k of a report (fractions) against the reference's (percent).
pub fn compare_queries(got: &Value, want: &Value, what: &str) {
    let got = got.as_array().unwrap();
    let want = want.as_object().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: query count");
    for q in got {
        let id = q["query"].as_str().unwrap();
        close(
            100.0 * q["ap_at_k"].as_f64().unwrap(),
            want[id].as_f64().unwrap(),
            &format!("{what} {id}"),
        );
    }
}
