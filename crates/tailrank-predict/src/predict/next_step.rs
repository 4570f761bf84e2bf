//! The next step of a prediction (docs/reference/predict.md, "The next step"): how the realized
//! interval's width and the level trend would change with another doubling of the hash
//! sample, and which fraction to grow the sample to, with the commands that do it.
//!
//! The width is projected part by part from the realized interval's own parts
//! (`predict::realized`), each scaled as what it measures scales with the sample size S:
//!
//! ```text
//! noise  n = min(W, 2·z·sd_pool)           the pool-sample noise, ∝ 1/√S
//! trend  t = min(W − n, |Δ|)               the level trend's reach, Δ = Δ_trend·w(z)·v
//! spread s = W − n − t                     the opinions' spread (the clamps, m_lev): held
//! W(j)   = s_j + n·2^(−j/2) + min(t_j·max(0, L − j)/L, W − n),   L = log2(N/S_0)
//! t_j    = |Δ_trend|·w(z·2^(j/2))·v
//! s_j    = s − e(1) + e(2^(j/2))              e(c): how far m_above at weight w(z_reach·c)
//!          − e_lev·(1 − 2^(−j))              lowers the end below the other readings;
//!                                            e_lev ≤ s: how far m_lev raises the upper
//!                                            end, within the spread left
//! ```
//!
//! for the sample at `f·2^j`: the trend's move left to N shrinks with the doublings left, and
//! its weight `w` (`predict::reach`) rises as its paired z grows with √S for a trend that
//! holds still, and so does the z that weighs the reach towards the rare items above the top
//! positive (`reach::AboveReach`, `SpacingTest::reach_z`; for the few queries behind `z_a`
//! a doubling can move it further, docs/notes/2026-12-06-reach-z.md); the side weight `v` is
//! kept (with the count estimator, `t_j = |Δ|`, whose switch does not move). The reach up to
//! the levels' highest prediction (`realized::LevelsHigh`) counts only while the estimate
//! keeps falling with each doubling; without a trend that is an even chance per doubling, so
//! its part is projected as `e_lev·2^(−j)` (docs/notes/2026-12-07-falling-reach.md). The
//! trend's part never exceeds the room it had at f, `W − n`: past it the interval already
//! reached the end of the metric's range. The spread of the readings (maps, fits, the calibrated law) is
//! what the sample size does not reduce: when it makes at least half the width, or is wider
//! than the target by itself, more sample is not the answer (`budget_cannot_help`). Validated
//! against the width measured at 2f in docs/reference/validation.md, "The next step's projection".

use super::reach::{trend_reach, AboveReach, TrendReach};
use super::Prediction;
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
    /// The spread of the readings, which the sample size does not reduce, makes at least half
    /// the width or is wider than the target by itself: more sample is not expected to help.
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

/// The realized width `W` at the summary's fraction split into the parts that scale
/// differently with the sample (module docs); fractions of the metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WidthParts {
    /// `W`, the realized width at the summary's fraction f.
    pub width: f64,
    /// `n`, the pool-sample noise `2·z·sd_pool` (capped at `W`).
    pub noise: f64,
    /// `t`, the trend's move `|Δ|` (capped at `W − n`).
    pub trend: f64,
    /// `s = W − n − t`, what the sample size does not reduce.
    pub spread: f64,
    /// `L = log2(N/S_0)`, the doublings from the sample to the pool.
    pub doublings_to_pool: f64,
    /// The level trend as the interval weighs it (`reach::TrendReach`); None with the
    /// count estimator, whose reach `t` is switched and held.
    pub trend_reach: Option<TrendReach>,
    /// The reach towards the reading of rare items above the top positive
    /// (`reach::AboveReach`), part of the spread, when the interval has one.
    pub above_reach: Option<AboveReach>,
    /// `e_lev`, how far the reach up to the levels' highest prediction raised the upper end
    /// (0 without it), at most the spread `s`, so that the parts add up to `W`.
    pub levels_extension: f64,
}

impl WidthParts {
    /// `W(j) = s_j + n·2^(−j/2) + min(t_j·max(0, L − j)/L, W − n)`, the width projected
    /// after `j` doublings, `s_j = s − e(1) + e(2^(j/2)) − e_lev·(1 − 2^(−j))` with `e` the
    /// extension of the reach towards the rare items above the top positive and `e_lev` the
    /// reach up to the levels' highest prediction (module docs).
    pub fn projected(&self, doublings: u32) -> f64 {
        let j = f64::from(doublings);
        // How much larger a test's z is after j doublings, for a statistic that holds still.
        let z_scale = 2f64.powf(j / 2.0);
        let spread = match self.above_reach {
            Some(a) => self.spread - a.extension(1.0) + a.extension(z_scale),
            None => self.spread,
        };
        let spread = (spread - self.levels_extension * (1.0 - 2f64.powf(-j))).max(0.0);
        let l = self.doublings_to_pool;
        let t_j = match self.trend_reach {
            Some(r) => r.weighted(z_scale).abs(),
            None => self.trend,
        };
        let trend = if l > 0.0 {
            (t_j * ((l - j) / l).max(0.0)).min(self.width - self.noise)
        } else {
            0.0
        };
        spread + self.noise * 2f64.powf(-j / 2.0) + trend
    }

    /// `s − e_lev`: the spread that the sample size does not reduce (the reach up to the
    /// levels' highest prediction is expected to halve with each doubling).
    pub fn lasting_spread(&self) -> f64 {
        (self.spread - self.levels_extension).max(0.0)
    }

    /// Whether the spread that the sample size does not reduce makes at least half the width.
    pub fn spread_dominates(&self) -> bool {
        self.lasting_spread() >= 0.5 * self.width
    }

    /// The clause on the falling estimate's reach for a message ("" without it).
    fn levels_clause(&self) -> String {
        if self.levels_extension > 0.0 {
            format!(
                "; the reach up to the levels' highest prediction, {} points, is expected to \
                 halve with each doubling",
                points(self.levels_extension)
            )
        } else {
            String::new()
        }
    }
}

/// The parts of prediction `p`'s realized width (module docs). None without a realized
/// interval.
pub fn width_parts(p: &Prediction) -> Option<WidthParts> {
    let r = p.realized.as_ref()?;
    let width = r.width();
    let z = crate::numerics::norm_ppf(0.5 + p.options.confidence / 2.0);
    let noise = (2.0 * z * r.pool_sd).clamp(0.0, width);
    let trend = r.trend_shift.abs().min(width - noise);
    let spread = (width - noise - trend).max(0.0);
    Some(WidthParts {
        width,
        noise,
        trend,
        spread,
        doublings_to_pool: (p.pool_size as f64 / p.sample_size as f64).log2().max(0.0),
        trend_reach: r
            .fit_choice_estimate
            .map(|_| trend_reach(&p.trust, r.calibrated_estimate, p.estimate)),
        above_reach: r.spacing_above,
        // The parts are read off W in turn (noise, trend, spread): where the trend's part,
        // which ignores the clamp of the interval at 0 or 1 on its own side, takes what the
        // levels' reach made, the reach counts only in the spread that is left.
        levels_extension: r.levels_high.map_or(0.0, |l| l.extension).min(spread),
    })
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

/// `x` (a fraction of the metric) in points, two decimals.
fn points(x: f64) -> String {
    format!("{:.2}", 100.0 * x)
}

/// The commands that grow the sample of summary `s` from `from` to `to` one doubling at a time
/// (`docs/reference/summary-format.md`, "Growing a sample"), with the summary's seed, model and
/// N: the N it records (a part must share it with its base, whatever N the prediction was made
/// at), else `n`.
pub fn grow_commands(s: &Summary, n: u64, from: f64, to: f64, base: &str) -> Vec<String> {
    let n = s.pool_size.unwrap_or(n);
    // The increment must keep the base's M and drift shards (grow refuses others): the options
    // the base was scanned with, where they are not the scan's defaults.
    let defaults = crate::scan::config::ScanOptions::default();
    let mut kept = String::new();
    if s.top_m != defaults.top_m {
        kept.push_str(&format!(" --top-m {}", s.top_m));
    }
    let shards = s.shard_indices().len();
    if shards != defaults.drift_shards {
        kept.push_str(&format!(" --drift-shards {shards}"));
    }
    let mut out = Vec::new();
    let (mut a, mut base) = (from, shell_word(base));
    while a < to {
        let b = (2.0 * a).min(1.0);
        let seed = s.seed;
        out.push(format!(
            "tailrank sample --ids POOL_IDS --fraction {b} --after {a} --seed {seed} -o ids_{b}.txt"
        ));
        out.push(format!(
            "tailrank scan --queries QUERIES --core CORE --gt GT --pool POOL_{b} --fraction {b} \
             --after {a} --seed {seed}{kept} --pool-size {n} --model {:?} -o part_{b}",
            s.model
        ));
        out.push(format!("tailrank grow {base} part_{b} -o summary_{b}"));
        base = format!("summary_{b}");
        a = b;
    }
    out
}

/// `word` as one shell word: as it is when it holds only characters no shell reads specially,
/// else in single quotes (a `'` inside written `'\''`).
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-:=+@%,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Doublings from `f` to reach `target` by the projection `w`: the smallest `j ≥ min` with
/// `W(j) ≤ target`, or the doublings to the whole pool (`f·2^j ≥ 1`, where the metric is
/// exact) when none comes sooner.
fn doublings_to(f: f64, w: &WidthParts, target: Option<f64>, min: u32) -> u32 {
    let mut j = min;
    while f * 2f64.powi(j as i32) < 1.0 {
        if target.is_none_or(|t| w.projected(j) <= t) {
            return j;
        }
        j += 1;
    }
    j
}

/// The step of a summary scanned at f = 1 ([`super::exact_scan`]), whatever the verdict (the
/// input warnings say why it doubts): the whole pool has its metric exactly; a part of it (one shard) needs
/// its other shards merged, not a bigger sample.
fn exact_scan_step(whole: bool) -> NextStep {
    let message = if whole {
        "Nothing to do: the summary is the whole pool (f = 1), whose metric is exact; \
         `tailrank eval --summary` reports it."
    } else {
        "Merge the other shards (`tailrank merge`): the summary was scanned at f = 1 but holds \
         part of the pool, and the merged scan gives the exact metric."
    };
    NextStep {
        message: message.to_string(),
        projected_width: whole.then_some(0.0),
        ..NextStep::default()
    }
}

/// The step of a sample of `s0` items below the `need` of the sample-size rule
/// ([`super::sample_needed`]), whatever the verdict (which doubts the degenerate input) and the
/// width (no test or projection reads a sample too small to resolve a positive near the
/// cut-off): grow to the first doubling of f that holds `need` items, or scan the whole pool
/// when no sample short of it does (k below c_min, or a pool barely larger than `need`). No
/// step helps a prediction at an N above the pool the sample was drawn from (its recorded N,
/// else about `S/f` items, allowing 5 binomial sds) that holds fewer than `need`.
fn small_sample_step(
    s: &Summary,
    p: &Prediction,
    plan: &NextStepPlan,
    s0: u64,
    need: u64,
) -> NextStep {
    let f = s.fraction;
    let why = format!(
        "S = {s0} sampled items is below the {need} that k = {} at N = {} needs (the \
         small-sample warning), so near the cut-off the estimate rests on {}",
        p.options.k,
        p.pool_size,
        super::sample_size::rests_on(&p.options.estimator)
    );
    let n = p.pool_size as f64;
    let (drawn, above) = match s.pool_size {
        Some(recorded) => (recorded as f64, n > recorded as f64),
        None => {
            let drawn = s0 as f64 / f;
            (drawn, n > drawn * (1.0 + 5.0 / (s0 as f64).sqrt()))
        }
    };
    if above && drawn < need as f64 {
        return NextStep {
            action: Action::BudgetCannotHelp,
            message: format!(
                "More sample is not expected to help: {why}, and the pool this sample was drawn \
                 from holds only about {drawn:.0} items; predict at that pool size."
            ),
            ..NextStep::default()
        };
    }
    let mut to = f;
    while to < 1.0 && (to / f) * (s0 as f64) < need as f64 {
        to = (2.0 * to).min(1.0);
    }
    let message = if to >= 1.0 {
        format!("Scan the whole pool: {why}; at f = 1 the metric is exact.")
    } else {
        format!(
            "Grow the sample from {f} to {to}: {why}; at f = {to} the sample holds about {:.0} \
             items.",
            s0 as f64 * to / f
        )
    };
    let base = plan.summary_path.as_deref().unwrap_or("SUMMARY");
    NextStep {
        action: Action::Grow,
        message,
        fraction: Some(to),
        projected_width: None,
        commands: grow_commands(s, p.pool_size, f, to, base),
    }
}

/// The next step of prediction `p` from summary `s` (`docs/reference/predict.md`, "The next step").
pub fn next_step(s: &Summary, p: &Prediction, plan: &NextStepPlan) -> NextStep {
    if let Some(whole) = super::exact_scan(s, p.pool_size) {
        return exact_scan_step(whole);
    }
    let s0 = s.subset_sizes.first().copied().unwrap_or(0);
    if let Some(need) = super::sample_needed(s0, p.pool_size, p.options.k, &p.options.estimator) {
        return small_sample_step(s, p, plan, s0, need);
    }
    let doubts = p.trust.verdict == super::Verdict::Doubtful;
    let Some(w) = width_parts(p) else {
        return NextStep {
            message: "No projection: without a realized interval there is no width to project."
                .to_string(),
            ..NextStep::default()
        };
    };
    let f = s.fraction;
    let unmet = plan.target_width.filter(|&t| w.width > t);
    // The trend's move left after one more doubling, `δ·(L − 1)`, within the metric's range
    // [0, 1] around the estimate (the line extrapolates without bound).
    let doublings_left = w.doublings_to_pool - 1.0;
    let trend = if p.trust.trend_fired() && doublings_left > 0.0 {
        let shift =
            (p.trust.trend_per_doubling * doublings_left).clamp(-p.estimate, 1.0 - p.estimate);
        format!(
            "; the level trend would still move it by {} points",
            points(shift)
        )
    } else {
        String::new()
    };
    if !doubts && unmet.is_none() {
        let target = plan
            .target_width
            .map_or(String::new(), |t| format!(" (target {})", points(t)));
        return NextStep {
            action: Action::None,
            message: format!(
                "Nothing to do: the interval is {} points wide{target} and {}; another doubling \
                 would make it {} points{trend}.",
                points(w.width),
                if p.trust.verdict == super::Verdict::Unchecked {
                    "the verdict's tests did not run (the verdict line says why)"
                } else {
                    "the verdict does not doubt"
                },
                points(w.projected(1))
            ),
            projected_width: Some(w.projected(1)),
            ..NextStep::default()
        };
    }
    let out_of_reach = unmet.is_some_and(|t| w.lasting_spread() >= t);
    if out_of_reach || (unmet.is_none() && w.spread_dominates()) {
        return NextStep {
            action: Action::BudgetCannotHelp,
            message: format!(
                "More sample is not expected to help: {} of the {} points of the interval are \
                 the spread of the readings (maps, fits, the calibrated law), which does not \
                 shrink with the sample; the pool noise ({}) and the trend ({}) do{}, and \
                 another doubling would make it {} points (docs/reference/validation.md).",
                points(w.lasting_spread()),
                points(w.width),
                points(w.noise),
                points(w.trend),
                w.levels_clause(),
                points(w.projected(1))
            ),
            projected_width: Some(w.projected(1)),
            ..NextStep::default()
        };
    }
    let j = doublings_to(f, &w, unmet, 1);
    let to = (f * 2f64.powi(j as i32)).min(1.0);
    let why = match unmet {
        Some(t) => format!("to reach the target width of {} points", points(t)),
        None => "because the verdict doubts".to_string(),
    };
    let base = plan.summary_path.as_deref().unwrap_or("SUMMARY");
    let (width, message) = if to >= 1.0 {
        // Only the whole pool, where the metric is exact, has no width left.
        let reason = match unmet {
            Some(_) => format!(
                "the interval, {} points wide, is projected to stay wider than that at every \
                 smaller fraction (the spread of the readings, {} points, does not shrink with \
                 the sample)",
                points(w.width),
                points(w.lasting_spread())
            ),
            None => "the next doubling is the whole pool".to_string(),
        };
        let message = format!("Scan the whole pool {why}: {reason}; at f = 1 the metric is exact.");
        (0.0, message)
    } else {
        let width = w.projected(j);
        let message = format!(
            "Grow the sample from {f} to {to} {why}: the interval is projected to narrow from {} \
             to {} points (the pool noise, {} points, shrinks as 1/√S and the trend, {}, with \
             the doublings left to N; the spread of the readings, {}, stays{}){trend}.",
            points(w.width),
            points(width),
            points(w.noise),
            points(w.trend),
            points(w.lasting_spread()),
            w.levels_clause()
        );
        (width, message)
    };
    NextStep {
        action: Action::Grow,
        message,
        fraction: Some(to),
        projected_width: Some(width),
        commands: grow_commands(s, p.pool_size, f, to, base),
    }
}

#[cfg(test)]
mod tests;
