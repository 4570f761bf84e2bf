//! Every report tailrank prints, in one place: human tables (metric values in percent, two
//! decimals) and machine-readable JSON (fractions in [0, 1], unit in the field name:
//! `map_at_k`, `recall_at_k`, `hit_at_1`, `*_std_error`, ...; NaN, e.g. intervals with
//! `bootstrap = 0`, becomes `null`, and a negative zero prints as `0.0`).
//!
//! The JSON schema of each report is a serde type: the report structs of the modules that
//! compute them (`metric::EvalReport`, `ilias::IliasReport`, `predict::compare::Comparison`,
//! ...) derive `Serialize`, and a [`Prediction`](crate::predict::Prediction) is written through
//! the schema types of [`prediction`]. The renderers of the tables sit here, one file per
//! report:
//!
//! * [`prediction`]: `tailrank predict` (and each set of `tailrank ilias` in prediction mode);
//! * [`eval`]: `tailrank eval` (query-set metrics and the revisited protocols);
//! * [`ilias`]: `tailrank ilias`;
//! * [`compare`]: `tailrank compare`;
//! * [`validation`]: `tailrank validate` and `tailrank simulate --vectors --validate`;
//! * [`demo`]: `tailrank demo` and `tailrank simulate`.

pub mod compare;
pub mod demo;
pub mod eval;
pub mod ilias;
pub mod prediction;
pub mod validation;

pub use prediction::{prediction_json, prediction_table};
use serde_json::{json, Value};

/// A fraction as percent with two decimals (`n/a` for NaN).
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.2}", 100.0 * x)
    } else {
        "n/a".to_string()
    }
}

pub fn pct_opt(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), pct)
}

/// An integer with thousands separators.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn share(a: usize, total: usize) -> String {
    if total == 0 {
        "n/a".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / total as f64)
    }
}

/// Replace every `-0.0` in a JSON tree by `0.0`. A metric such as an AP of 0 can come out of
/// the arithmetic as −0.0 (e.g. a zero times a negative weight); JSON readers keep the sign, and
/// a report that prints `-0.0` for "no positive retrieved" reads like an error.
pub fn positive_zeros(v: &mut Value) {
    match v {
        Value::Number(n)
            if n.as_f64() == Some(0.0) && n.as_f64().is_some_and(f64::is_sign_negative) =>
        {
            *v = json!(0.0);
        }
        Value::Array(a) => a.iter_mut().for_each(positive_zeros),
        Value::Object(o) => o.values_mut().for_each(positive_zeros),
        _ => {}
    }
}

/// A serde value as JSON, with negative zeros printed as `0.0` ([`positive_zeros`]) and the
/// object keys in sorted order (the order `serde_json::Value` keeps).
pub fn to_json_value<T: serde::Serialize>(v: &T) -> Value {
    let mut v = serde_json::to_value(v).expect("report types serialize to JSON");
    positive_zeros(&mut v);
    v
}

#[cfg(test)]
mod zero_tests {
    use super::*;

    #[test]
    fn negative_zeros_print_as_zero() {
        let mut v = json!({"a": -0.0, "b": [1.0, -0.0, {"c": -0.0}], "d": -1.5, "e": 0});
        positive_zeros(&mut v);
        let text = serde_json::to_string(&v).unwrap();
        assert!(!text.contains("-0.0"), "{text}");
        assert_eq!(v["d"], json!(-1.5));
        assert_eq!(v["e"], json!(0));
        assert_eq!(v["b"][2]["c"].as_f64(), Some(0.0));
    }
}
