//! Every report tailrank prints, in one place: human tables (metric values in percent, two
//! decimals) and machine-readable JSON (fractions in [0, 1], unit in the field name:
//! `map_at_k`, `recall_at_k`, `hit_at_1`, `*_std_error`, ...; NaN, e.g. intervals with
//! `bootstrap = 0`, becomes `null`, and a negative zero prints as `0.0`).
//!
//! The JSON schema of each report is a serde type: the report structs of the modules that
//! compute them (`metric::EvalReport`, `ilias::IliasReport`, `predict::compare::Comparison`,
//! ...) derive `Serialize`, and a [`Prediction`](crate::predict::Prediction) is written through
//! the schema types of `predict::json` ([`prediction_json`]). A table of rows and columns is a
//! [`Table`](crate::table::Table), rendered as aligned text or markdown. The renderers of the
//! tables sit here, one file per report:
//!
//! * [`prediction`]: `tailrank predict` (and each set of `tailrank ilias` in prediction mode);
//! * `tailrank eval`'s tables (query-set metrics and the revisited protocols) are methods of
//!   the report types, in tailrank-eval's `tables`;
//! * [`ilias`]: `tailrank ilias`;
//! * [`compare`]: `tailrank compare`;
//! * [`validation`] (tailrank-sim's `validation_report`): `tailrank validate` and
//!   `tailrank simulate --vectors --validate`;
//! * [`demo`]: `tailrank demo` and `tailrank simulate`;
//! * [`headline`]: the short default output of `predict`, `compare`, `ilias --fraction`
//!   and `demo` (the tables above are their `--details`);
//! * [`html`]: the HTML report of a prediction (`--html`), charts in [`html_svg`];
//! * [`written`]: the one-line accounts of `tailrank scan` and `tailrank merge`.

pub mod compare;
#[cfg(feature = "simulate")]
pub mod demo;
pub mod headline;
pub mod html;
pub mod html_pages;
pub mod html_svg;
pub mod ilias;
pub mod prediction;
#[cfg(feature = "simulate")]
pub use tailrank_sim::validation_report as validation;
pub mod written;

pub use crate::predict::json::prediction_json;
pub use prediction::prediction_table;

/// A fraction as percent with two decimals (`n/a` for NaN).
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.2}", 100.0 * x)
    } else {
        "n/a".to_string()
    }
}

/// A confidence level as a percent label (`95%`): the fewest decimals that give its value, and
/// never `100%` or `0%` for a level inside (0, 1) (0.999999999999 is `99.9999999999%`).
pub fn confidence_label(c: f64) -> String {
    let x = 100.0 * c;
    for prec in 0..=12 {
        let s = format!("{x:.prec$}");
        let v: f64 = s.parse().unwrap_or(f64::NAN);
        let at_edge = (v >= 100.0 && x < 100.0) || (v <= 0.0 && x > 0.0);
        if !at_edge && (v - x).abs() <= 1e-9 * x.abs().max(1.0) {
            return format!("{s}%");
        }
    }
    format!("{x}%")
}

/// [`pct`] of a value that may be missing (`n/a`).
pub fn pct_opt(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), pct)
}

/// A sampling fraction as given (`0.05`), in scientific notation below 1e-4 (`1e-300`, not
/// three hundred digits).
pub fn fraction(f: f64) -> String {
    if f != 0.0 && f.abs() < 1e-4 {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

/// An integer with thousands separators.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The `tailrank predict` command that reproduces prediction `p` from `summary`: the flags of
/// the options that differ from `predict`'s defaults (`--bootstrap`, `--sample-noise`,
/// `--seed`), so that the re-run gives the same interval.
pub fn rerun_command(p: &crate::predict::Prediction, summary: &std::path::Path) -> String {
    let (o, d) = (&p.options, &crate::predict::PredictOptions::DEFAULT);
    let mut c = format!("tailrank predict --summary {}", summary.display());
    if o.bootstrap != d.bootstrap {
        c.push_str(&format!(" --bootstrap {}", o.bootstrap));
    }
    if o.sample_noise != d.sample_noise {
        c.push_str(&format!(" --sample-noise {}", o.sample_noise));
    }
    if o.seed != d.seed {
        c.push_str(&format!(" --seed {}", o.seed));
    }
    c
}

pub fn share(a: usize, total: usize) -> String {
    if total == 0 {
        "n/a".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    /// The label keeps the level's digits and never rounds a level inside (0, 1) to 100%.
    #[test]
    fn confidence_labels() {
        for (c, want) in [
            (0.95, "95%"),
            (0.9, "90%"),
            (0.975, "97.5%"),
            (0.999999999999, "99.9999999999%"),
            (0.5, "50%"),
        ] {
            assert_eq!(super::confidence_label(c), want);
        }
    }
}
