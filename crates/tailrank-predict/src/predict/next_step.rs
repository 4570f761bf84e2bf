//! The next step of a prediction (docs/predict.md, "The next step"): how the realized
//! interval's width and the level trend would change with another doubling of the hash
//! sample, and which fraction to grow the sample to, with the commands that do it.
//!
//! The width's scaling is measured, not assumed: the prediction is repeated on the summary cut
//! to level 1 (the nested sample at f/2, [`level_summary`]), whose realized width `W_1` sits
//! beside level 0's `W_0`. One doubling multiplies the width by `r = W_0/W_1`, so the sample
//! at `f·2^j` is projected to `W_0·r^j`. When `r ≥ 1` the width did not shrink as the sample
//! doubled: it is held by what the sample size does not reduce (the opinions' spread, a
//! trend), and more sample is not the answer. The level trend's projected move
//! `Δ_trend = b·log2(N/S_0)` (`b` per doubling) loses one doubling per doubling of the sample.

use super::{PredictOptions, Prediction};
use crate::error::Result;
use crate::summary::{Subset, SubsetKind, Summary};
use serde::{Deserialize, Serialize};

/// What the report advises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Nothing to do: the verdict does not doubt and the target width (if any) is met, or
    /// the input cannot say (a hardness file, too few levels).
    #[default]
    None,
    /// Grow the sample to `fraction` (`tailrank sample/scan --after`, `tailrank grow`).
    Grow,
    /// The width did not shrink as the sample doubled: more sample is not expected to help.
    BudgetCannotHelp,
}

/// The next step of a prediction (JSON `next_step`; widths are fractions of the metric, as
/// the realized interval's `width`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NextStep {
    pub action: Action,
    /// One plain sentence.
    pub message: String,
    /// The sampling fraction to grow to (`action = grow`), else None.
    pub fraction: Option<f64>,
    /// The realized width projected at `fraction` (`grow`), or at one more doubling.
    pub projected_width: Option<f64>,
    /// The commands that grow the sample, one doubling after another.
    pub commands: Vec<String>,
}

/// What the user asked of the next step: the width to reach (`--target-width`, a fraction)
/// and the summary's folder for the commands (`SUMMARY` when unknown).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NextStepPlan {
    pub target_width: Option<f64>,
    pub summary_path: Option<String>,
}

/// The measured scaling of the realized width with one doubling of the sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WidthScaling {
    /// `W_0`, the width at the summary's fraction f.
    pub width: f64,
    /// `W_1`, the width from the nested sample at f/2.
    pub width_half: f64,
}

impl WidthScaling {
    /// `r = W_0/W_1`, the factor one doubling applies to the width.
    pub fn ratio(&self) -> f64 {
        self.width / self.width_half
    }

    /// `W_0·r^j`, the width projected after `j` doublings.
    pub fn projected(&self, doublings: u32) -> f64 {
        self.width * self.ratio().powi(doublings as i32)
    }
}

/// Summary `s` cut to its nesting level `level` (the hash sample at `f/2^level`): levels
/// `level, level+1, …` and the drift shards that lie inside its hash range, with the counts
/// and top lists of those subsets. None when `s` has no such level.
pub fn level_summary(s: &Summary, level: usize) -> Option<Summary> {
    let levels = s.level_indices();
    let &first = levels.get(level)?;
    let range = s.subsets[first].range;
    let keep: Vec<usize> = (0..s.subsets.len())
        .filter(|&i| {
            let sub: &Subset = &s.subsets[i];
            match sub.kind {
                SubsetKind::Level => levels[level..].contains(&i),
                SubsetKind::Shard => sub.range.lo >= range.lo && sub.range.hi <= range.hi,
            }
        })
        .collect();
    let mut out = s.clone();
    out.fraction = s.subsets[first].fraction;
    out.subsets = keep.iter().map(|&i| s.subsets[i].clone()).collect();
    out.subset_sizes = keep.iter().map(|&i| s.subset_sizes[i]).collect();
    out.pool_id_hashes = None;
    for q in &mut out.queries {
        q.top_scores = keep.iter().map(|&i| q.top_scores[i].clone()).collect();
        for p in &mut q.positives {
            p.pool_above = keep.iter().map(|&i| p.pool_above[i]).collect();
            if !p.pool_ties.is_empty() {
                p.pool_ties = keep.iter().map(|&i| p.pool_ties[i]).collect();
            }
        }
    }
    Some(out)
}

/// The width's scaling of prediction `p` of summary `s`: `p`'s realized width beside the one
/// predicted (same options, same N) from `s` cut to level 1. None without a realized interval
/// or when the cut keeps fewer than `trust::MIN_LEVELS` levels (its verdict would be
/// unchecked, and its width not comparable).
pub fn width_scaling(
    s: &Summary,
    p: &Prediction,
    opts: &PredictOptions,
) -> Result<Option<WidthScaling>> {
    let Some(r0) = p.realized.as_ref() else {
        return Ok(None);
    };
    let Some(half) = level_summary(s, 1) else {
        return Ok(None);
    };
    if half.level_indices().len() < super::trust::MIN_LEVELS {
        return Ok(None);
    }
    let o = PredictOptions {
        pool_size: Some(p.pool_size),
        ..*opts
    };
    let p1 = super::predict_without_next_step(&half, &o)?;
    Ok(p1.realized.map(|r1| WidthScaling {
        width: r0.width(),
        width_half: r1.width(),
    }))
}

/// `x` (a fraction of the metric) in points, two decimals.
fn points(x: f64) -> String {
    format!("{:.2}", 100.0 * x)
}

/// The commands that grow the sample of summary `s` from `from` to `to` one doubling at a time
/// (`docs/summary-format.md`, "Growing a sample"), with the summary's seed, model and N.
pub fn grow_commands(s: &Summary, n: u64, from: f64, to: f64, base: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut a, mut base) = (from, base.to_string());
    while a < to {
        let b = (2.0 * a).min(1.0);
        let seed = s.seed;
        out.push(format!(
            "tailrank sample --ids POOL_IDS --fraction {b} --after {a} --seed {seed} -o ids_{b}.txt"
        ));
        out.push(format!(
            "tailrank scan --queries QUERIES --core CORE --gt GT --pool POOL_{b} --fraction {b} \
             --after {a} --seed {seed} --pool-size {n} --model {:?} -o part_{b}",
            s.model
        ));
        out.push(format!("tailrank grow {base} part_{b} -o summary_{b}"));
        base = format!("summary_{b}");
        a = b;
    }
    out
}

/// Doublings from `f` to reach `target` by the scaling `w`: the smallest `j ≥ min` with
/// `W_0·r^j ≤ target`, or the doublings to the whole pool (`f·2^j ≥ 1`, where the metric is
/// exact) when none comes sooner.
fn doublings_to(f: f64, w: &WidthScaling, target: Option<f64>, min: u32) -> u32 {
    let mut j = min;
    while f * 2f64.powi(j as i32) < 1.0 {
        if target.is_none_or(|t| w.projected(j) <= t) {
            return j;
        }
        j += 1;
    }
    j
}

/// The next step of prediction `p` from summary `s` (`docs/predict.md`, "The next step").
pub fn next_step(
    s: &Summary,
    p: &Prediction,
    opts: &PredictOptions,
    plan: &NextStepPlan,
) -> Result<NextStep> {
    let doubts = p.trust.verdict == super::Verdict::Doubtful;
    let Some(w) = width_scaling(s, p, opts)? else {
        return Ok(NextStep {
            message: format!(
                "No projection: the summary needs at least {} nesting levels and a realized \
                 interval to measure how the width scales with the sample.",
                super::trust::MIN_LEVELS + 1
            ),
            ..NextStep::default()
        });
    };
    let f = s.fraction;
    let unmet = plan.target_width.filter(|&t| w.width > t);
    let trend = if p.trust.trend_fired() {
        format!(
            "; the level trend would still move it by {} points",
            points(
                p.trust.trend_per_doubling
                    * ((p.pool_size as f64 / (2.0 * p.sample_size as f64)).log2())
            )
        )
    } else {
        String::new()
    };
    if !doubts && unmet.is_none() {
        let target = plan
            .target_width
            .map_or(String::new(), |t| format!(" (target {})", points(t)));
        return Ok(NextStep {
            action: Action::None,
            message: format!(
                "Nothing to do: the interval is {} points wide{target} and the verdict does not \
                 doubt; another doubling would make it {} points{trend}.",
                points(w.width),
                points(w.projected(1))
            ),
            projected_width: Some(w.projected(1)),
            ..NextStep::default()
        });
    }
    if w.ratio() >= 1.0 || !w.ratio().is_finite() {
        return Ok(NextStep {
            action: Action::BudgetCannotHelp,
            message: format!(
                "More sample is not expected to help: the width went from {} points at f/2 to \
                 {} at f, so what holds it (the spread of the readings, the trend) does not \
                 shrink with the sample (a rough reading of two levels, docs/validation.md).",
                points(w.width_half),
                points(w.width)
            ),
            projected_width: Some(w.projected(1)),
            ..NextStep::default()
        });
    }
    let j = doublings_to(f, &w, unmet, 1);
    let to = (f * 2f64.powi(j as i32)).min(1.0);
    let width = if to >= 1.0 { 0.0 } else { w.projected(j) };
    let why = match unmet {
        Some(t) => format!("to reach the target width of {} points", points(t)),
        None => "because the verdict doubts".to_string(),
    };
    let base = plan.summary_path.as_deref().unwrap_or("SUMMARY");
    Ok(NextStep {
        action: Action::Grow,
        message: format!(
            "Grow the sample from {f} to {to} {why}: the interval is projected to narrow from {} \
             to {} points (one doubling scales it by {:.2}, measured on the levels; a rough \
             projection, docs/validation.md){trend}.",
            points(w.width),
            points(width),
            w.ratio()
        ),
        fraction: Some(to),
        projected_width: Some(width),
        commands: grow_commands(s, p.pool_size, f, to, base),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tailrank_sim::simulate::{simulate_summary, SimConfig};

    #[test]
    fn doublings_reach_the_target_by_the_measured_ratio() {
        let w = WidthScaling {
            width: 0.10,
            width_half: 0.14,
        };
        // Independent: the smallest j with W_0·r^j ≤ t is ⌈ln(t/W_0)/ln r⌉.
        let t = 0.05;
        let j = ((t / w.width).ln() / w.ratio().ln()).ceil() as u32;
        assert_eq!(doublings_to(0.01, &w, Some(t), 1), j);
        assert!(w.projected(j) <= t && w.projected(j - 1) > t);
        // No target: one doubling. Capped at the whole pool: 0.25 → 0.5 → 1.
        assert_eq!(doublings_to(0.01, &w, None, 1), 1);
        assert_eq!(doublings_to(0.25, &w, Some(1e-9), 1), 2);
    }

    #[test]
    fn commands_grow_one_doubling_at_a_time() {
        let cfg = SimConfig::preset("ilias-like", 1).unwrap().with_queries(4);
        let s = simulate_summary(&cfg).unwrap().summary;
        let c = grow_commands(&s, 100_000_000, 0.05, 0.2, "my/summary");
        assert_eq!(c.len(), 6);
        assert!(c[0].starts_with("tailrank sample --ids POOL_IDS --fraction 0.1 --after 0.05"));
        assert!(c[1].contains("--fraction 0.1 --after 0.05 --seed 1 --pool-size 100000000"));
        assert_eq!(c[2], "tailrank grow my/summary part_0.1 -o summary_0.1");
        assert!(c[3].contains("--fraction 0.2 --after 0.1"));
        assert_eq!(c[5], "tailrank grow summary_0.1 part_0.2 -o summary_0.2");
    }

    #[test]
    fn level_summary_is_the_nested_sample() {
        let cfg = SimConfig::preset("ilias-like", 2).unwrap().with_queries(8);
        let s = simulate_summary(&cfg).unwrap().summary;
        let levels = s.level_indices();
        let half = level_summary(&s, 1).unwrap();
        assert_eq!(half.level_indices().len(), levels.len() - 1);
        assert_eq!(half.fraction, s.subsets[levels[1]].fraction);
        assert_eq!(half.subset_sizes[0], s.subset_sizes[levels[1]]);
        // Shards of f/4 = (f/2)/2: the first two lie inside level 1's hash range.
        assert_eq!(half.shard_indices().len(), 2);
        for (q, hq) in s.queries.iter().zip(&half.queries) {
            assert_eq!(hq.top_scores[0], q.top_scores[levels[1]]);
            for (p, hp) in q.positives.iter().zip(&hq.positives) {
                assert_eq!(hp.pool_above[0], p.pool_above[levels[1]]);
                assert_eq!(hp.pool_above.len(), half.subsets.len());
            }
        }
        assert!(level_summary(&s, levels.len()).is_none());
    }

    #[test]
    fn next_step_fields_agree() {
        let cfg = SimConfig::preset("mixture-tail", 0)
            .unwrap()
            .with_queries(120);
        let s = simulate_summary(&cfg).unwrap().summary;
        let opts = PredictOptions {
            bootstrap: 100,
            sample_noise: 0,
            ..PredictOptions::default()
        };
        let p = super::super::predict_without_next_step(&s, &opts).unwrap();
        let plan = NextStepPlan {
            target_width: Some(1e-4),
            summary_path: None,
        };
        let n = next_step(&s, &p, &opts, &plan).unwrap();
        let w = width_scaling(&s, &p, &opts).unwrap().unwrap();
        match n.action {
            Action::Grow => {
                let f = n.fraction.unwrap();
                let (mut a, mut j) = (s.fraction, 0);
                while a < f {
                    a = (2.0 * a).min(1.0);
                    j += 1;
                }
                assert!(f <= 1.0 && n.commands.len() == 3 * j, "{n:?}");
                assert!(n.commands[2].starts_with("tailrank grow SUMMARY "));
            }
            Action::BudgetCannotHelp => assert!(w.ratio() >= 1.0),
            Action::None => panic!("a target of 0.01 points is not met: {n:?}"),
        }
    }
}
