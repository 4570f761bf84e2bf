//! The comparison of two models (`tailrank compare`).

use super::{pct, pct_opt};
use crate::predict::compare::Comparison;
use std::fmt::Write as _;

/// The comparison as a table (percent, two decimals).
pub fn table(c: &Comparison) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "compare at N = {} from a sample of S = {} ({} queries, {}), mAP@{} (%)",
        c.pool_size, c.sample_size, c.n_queries, c.query_set, c.k
    );
    let _ = writeln!(t, "  A {:<30} {:>8}", c.model_a, pct(c.map_at_k_a));
    let _ = writeln!(t, "  B {:<30} {:>8}", c.model_b, pct(c.map_at_k_b));
    let _ = writeln!(
        t,
        "  A - B{:<28} {:>+8.2}   paired interval [{}, {}], SE {}",
        "",
        100.0 * c.difference,
        pct(c.interval.lo),
        pct(c.interval.hi),
        pct(c.std_error)
    );
    for (i, (s, d)) in c.level_differences.iter().enumerate() {
        let _ = writeln!(
            t,
            "  A - B from level {i} (S = {s}){:>10} {:>+8.2}",
            "",
            100.0 * d
        );
    }
    let _ = writeln!(
        t,
        "  extrapolation error of the margin: {}",
        pct_opt(c.extrapolation_error)
    );
    let _ = writeln!(t, "{}", verdict_line(c));
    t
}

/// `verdict: separated (REASON)` or `verdict: not separated (REASON)`: the last line of the
/// table and of the headline.
pub fn verdict_line(c: &Comparison) -> String {
    let verdict = if c.separated {
        "separated"
    } else {
        "not separated"
    };
    format!("verdict: {verdict} ({})", c.reason)
}
