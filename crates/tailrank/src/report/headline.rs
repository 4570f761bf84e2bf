//! The short default output of `predict`, `compare`, `ilias --fraction` and `demo`: a headline
//! of at most [`MAX_LINES`] lines with the estimate, the interval for the realized metric, the
//! verdict in plain words, the next step, hit@1 and Recall@k. `--details` prints the full
//! tables of the sibling modules instead (docs/reference/predict.md, "The headline").

use super::{pct, pct_opt, thousands};
use crate::ilias::IliasReport;
use crate::predict::compare::Comparison;
use crate::predict::next_step::Action;
use crate::predict::{Prediction, Verdict};
#[cfg(feature = "simulate")]
use crate::simulate::{SimulationFiles, Truth};
use std::fmt::Write as _;

/// The most lines a headline prints.
pub const MAX_LINES: usize = 12;

/// The last line of every headline.
const DETAILS_HINT: &str = "(--details for the full table, --json for every number)";

/// The verdict in plain words, with why in one sentence: the checks that fired (doubtful), or
/// that every check passed (trusted), or why none ran (unchecked).
pub fn verdict_sentence(p: &Prediction) -> String {
    let t = &p.trust;
    match t.verdict {
        Verdict::Trusted => "trusted: every check passed (trend, in-sample check, fit choice, \
                             falling estimate, endpoint test, top spacing)."
            .to_string(),
        Verdict::Unchecked => format!("unchecked: {}.", t.reason),
        Verdict::Doubtful => {
            let mut fired = Vec::new();
            if t.trend_fired() {
                fired.push(format!(
                    "the estimate still moves {:+.2} points per doubling of the sample",
                    100.0 * t.trend_per_doubling
                ));
            }
            if t.in_sample_fired() {
                fired.push("the levels mispredict the known sample".to_string());
            }
            if let Some(d) = t.fit_choice_shift.filter(|_| t.fit_choice_fired()) {
                fired.push(format!(
                    "the two tail fits part by {:.2} points",
                    100.0 * d.abs()
                ));
            }
            if t.falling_fired() {
                fired.push(
                    "the estimate is lower on the whole sample than on its half and its quarter"
                        .to_string(),
                );
            }
            if t.endpoint_fired() {
                fired.push("the sample holds mass past the fitted tails' endpoints".to_string());
            }
            if t.spacing_fired() {
                fired.push("the sample holds rare items far above the fitted tails".to_string());
            }
            if fired.is_empty() {
                fired.push(
                    "the input is degenerate (a warning or a drift flag; see --details)"
                        .to_string(),
                );
            }
            format!("doubtful: {}.", fired.join("; "))
        }
    }
}

/// The headline lines of prediction `p`, without the closing hint: estimate, realized
/// interval, verdict, next step (with the first doubling's commands), hit@1 and Recall@k, and
/// the first input warning with the count of the others. At most `MAX_LINES − 1` lines.
pub fn prediction_lines(p: &Prediction) -> Vec<String> {
    let k = p.k;
    let whole_pool = p.is_exact_scan();
    let mut out = if whole_pool {
        vec![format!(
            "exact mAP@{k} at N = {}: {}%  (model {:?}, {} queries; the summary is a scan of the \
             whole pool, f = 1 and S = N, so the metrics are exact: `tailrank eval --summary`; \
             the tail model, which the interval and verdict below judge, reads {}%)",
            thousands(p.pool_size),
            pct(p.baselines.evaluate_at_s),
            p.model,
            thousands(p.n_queries as u64),
            pct(p.estimate)
        )]
    } else {
        vec![format!(
            "predicted mAP@{k} at N = {}: {}%  (model {:?}, {} queries, S = {} sampled)",
            thousands(p.pool_size),
            pct(p.estimate),
            p.model,
            thousands(p.n_queries as u64),
            thousands(p.sample_size)
        )]
    };
    out.push(match &p.realized {
        Some(r) => format!(
            "realized mAP@{k} of these queries at N: {} interval [{}, {}], {} points wide",
            super::confidence_label(p.options.confidence),
            pct(r.interval.lo),
            pct(r.interval.hi),
            pct(r.width())
        ),
        None => {
            format!("realized mAP@{k} of these queries at N: no interval (no pool noise source)")
        }
    });
    out.push(format!("verdict: {}", verdict_sentence(p)));
    let n = &p.next_step;
    out.push(format!("next step: {}", n.message));
    if n.action == Action::Grow {
        out.extend(n.commands.iter().take(3).map(|c| format!("  {c}")));
        if n.commands.len() > 3 {
            out.push(format!(
                "  ... and {} more commands for the further doublings (--json)",
                n.commands.len() - 3
            ));
        }
    }
    out.push(if whole_pool {
        format!(
            "hit@1 {}%, Recall@{k} {}%  (exact: the whole pool)",
            pct(p.baselines.evaluate_at_s_hit_at_1),
            pct(p.baselines.evaluate_at_s_recall_at_k)
        )
    } else {
        format!(
            "hit@1 {}%, Recall@{k} {}%  (predicted at N; no interval)",
            pct(p.hit_at_1),
            pct(p.recall_at_k)
        )
    });
    // The first input warning in full (a sample of another N or seed, a small sample): it can
    // make the number meaningless, so it is not left to --details.
    if let Some(first) = p.warnings.first() {
        out.push(match p.warnings.len() {
            1 => format!("WARNING: {first}"),
            n => format!("WARNING: {first} (and {} more: --details)", n - 1),
        });
    }
    out
}

/// The headline of `tailrank predict`.
pub fn prediction_headline(p: &Prediction) -> String {
    let mut lines = prediction_lines(p);
    lines.push(DETAILS_HINT.to_string());
    join(&lines)
}

/// The headline of `tailrank demo`: the prediction's, the truth beside it, and the files.
#[cfg(feature = "simulate")]
pub fn demo_headline(t: &Truth, p: &Prediction, files: &SimulationFiles) -> String {
    let mut lines = prediction_lines(p);
    let (recall, hit) = t.recall_and_hit();
    let inside = p
        .realized
        .as_ref()
        .is_some_and(|r| r.interval.lo <= t.map_at_k && t.map_at_k <= r.interval.hi);
    lines.push(format!(
        "known truth: mAP@{} {}% (error {:+.2} points, {} the interval); hit@1 {}%, Recall@{} {}%",
        t.k,
        pct(t.map_at_k),
        100.0 * (p.estimate - t.map_at_k),
        if inside { "inside" } else { "outside" },
        pct(hit),
        t.k,
        pct(recall)
    ));
    lines.push(format!(
        "files: {} (re-run: {}; --details for the full table)",
        files.prediction.display(),
        super::rerun_command(p, &files.summary)
    ));
    join(&lines)
}

/// The headline of `tailrank ilias --fraction`: per query set the estimate with its realized
/// interval, the verdict, the next step, hit@1 and Recall@k (3 lines a set).
pub fn ilias_headline(r: &IliasReport) -> String {
    let mut lines: Vec<String> = r.warnings.iter().map(|w| format!("warning: {w}")).collect();
    lines.push(format!(
        "ILIAS, model {:?}: predicted mAP@{} at N = {}{} from S = {} sampled (f = {}, seed {})",
        r.model,
        r.k,
        thousands(r.pool_size),
        r.selected_ids
            .as_ref()
            .map_or(String::new(), |f| format!(" distractors selected by {f}")),
        thousands(r.sample_size),
        super::fraction(r.fraction),
        r.seed
    ));
    for s in &r.sets {
        let Some(p) = &s.prediction else { continue };
        let interval = p.realized.as_ref().map_or("no interval".to_string(), |i| {
            format!(
                "these queries [{}, {}]",
                pct(i.interval.lo),
                pct(i.interval.hi)
            )
        });
        lines.push(format!(
            "{}: {}% ({interval}); hit@1 {}%, Recall@{} {}%",
            s.task,
            pct(p.estimate),
            pct(p.hit_at_1),
            p.k,
            pct(p.recall_at_k)
        ));
        lines.push(format!("  verdict: {}", verdict_sentence(p)));
        lines.push(format!("  next step: {}", p.next_step.message));
    }
    lines.extend(ilias_grow_line(r));
    lines.push(DETAILS_HINT.to_string());
    join(&lines)
}

/// How an `ilias` run grows to the largest fraction its sets' next steps name: list the
/// distractors of the increment, embed them, rerun with the new `--fraction` (the run reads
/// only the sample's features); at f = 1, rerun without it. None when no set grows.
fn ilias_grow_line(r: &IliasReport) -> Option<String> {
    let to = r
        .sets
        .iter()
        .filter_map(|s| s.prediction.as_ref())
        .filter(|p| p.next_step.action == Action::Grow)
        .filter_map(|p| p.next_step.fraction)
        .reduce(f64::max)?;
    Some(if to >= 1.0 {
        "to act on it: embed the remaining distractors and rerun without --fraction (the whole \
         pool, exact metrics)"
            .to_string()
    } else {
        format!(
            "to grow: `tailrank sample --ids DISTRACTOR_IDS --fraction {to} --after {} --seed {} \
             -o new_ids.txt` lists the distractors to embed (DISTRACTOR_IDS: the dataset's \
             distractor_ids.txt.gz); add their features to the feature folder and rerun with \
             --fraction {to}",
            r.fraction, r.seed
        )
    })
}

/// The headline of `tailrank compare`: both estimates with their hit@1 and Recall@k, the
/// margin with its paired interval and the verdict (the per-level margins are in `--details`).
pub fn compare_headline(c: &Comparison) -> String {
    let exact = c.exact;
    let mut lines = vec![format!(
        "compare at N = {} from {} ({} queries, {}), mAP@{} (%)",
        thousands(c.pool_size),
        match exact {
            true => "a scan of the whole pool: exact metrics".to_string(),
            false => format!("a sample of S = {}", thousands(c.sample_size)),
        },
        c.n_queries,
        c.query_set,
        c.k
    )];
    let k = c.k;
    for (name, model, map, hit, recall) in [
        ("A", &c.model_a, c.map_at_k_a, c.hit_at_1_a, c.recall_at_k_a),
        ("B", &c.model_b, c.map_at_k_b, c.hit_at_1_b, c.recall_at_k_b),
    ] {
        lines.push(format!(
            "  {name} {model:<30} {:>8}  (hit@1 {}%, Recall@{k} {}%; no interval)",
            pct(map),
            pct(hit),
            pct(recall)
        ));
    }
    lines.push(format!(
        "  A - B {:>+8.2} points, paired interval [{}, {}]; extrapolation error {}",
        100.0 * c.difference,
        pct(c.interval.lo),
        pct(c.interval.hi),
        pct_opt(c.extrapolation_error)
    ));
    lines.push(super::compare::verdict_line(c));
    lines.push(if exact {
        "next step: none; the metrics are exact (more queries would narrow the paired interval)."
            .to_string()
    } else if c.separated {
        "next step: none; the margin exceeds its extrapolation error.".to_string()
    } else {
        "next step: `tailrank predict --summary` on each model says which fraction would \
         narrow its interval (a larger sample shrinks the paired interval and the margin's \
         extrapolation error)."
            .to_string()
    });
    lines.push(DETAILS_HINT.to_string());
    join(&lines)
}

fn join(lines: &[String]) -> String {
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(s, "{l}");
    }
    s
}
