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

/// The next step of prediction `p` from summary `s` (`docs/reference/predict.md`, "The next step").
pub fn next_step(s: &Summary, p: &Prediction, plan: &NextStepPlan) -> NextStep {
    if let Some(whole) = super::exact_scan(s, p.pool_size) {
        return exact_scan_step(whole);
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
                "Nothing to do: the interval is {} points wide{target} and the verdict does not \
                 doubt; another doubling would make it {} points{trend}.",
                points(w.width),
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
mod tests {
    use super::*;
    use crate::predict::reach::z_weight;
    use crate::predict::PredictOptions;
    use tailrank_sim::simulate::{simulate_summary, SimConfig};

    fn parts(width: f64, noise: f64, trend: f64, l: f64) -> WidthParts {
        WidthParts {
            width,
            noise,
            trend,
            spread: width - noise - trend,
            doublings_to_pool: l,
            trend_reach: None,
            above_reach: None,
            levels_extension: 0.0,
        }
    }

    /// The reach up to the levels' highest prediction halves with each doubling: 2 points of
    /// a 6-point spread leave 1 point after one doubling and 1.5 after two.
    #[test]
    fn the_levels_reach_halves_per_doubling() {
        let w = WidthParts {
            levels_extension: 0.02,
            ..parts(0.10, 0.04, 0.0, 4.0)
        };
        for (j, left) in [(0, 0.02), (1, 0.01), (2, 0.005)] {
            let want = 0.04 + left + 0.04 / 2f64.sqrt().powi(j as i32);
            assert!(
                (w.projected(j) - want).abs() < 1e-12,
                "{j}: {}",
                w.projected(j)
            );
        }
    }

    /// The reach towards the rare items above the top positive grows with the z a doubling
    /// brings: at z = 2.5 (w = 0.25) a reading 4 points below the other readings lowers the
    /// end by 1 point now and by 4·w(2.5·√2) = 2.07 points after one doubling.
    #[test]
    fn the_reach_above_the_top_positive_follows_its_weight() {
        let a = AboveReach {
            estimate: 0.36,
            tail: 0.40,
            z: 2.5,
            low_others: 0.40,
        };
        let mut w = parts(0.05, 0.02, 0.0, 4.0);
        w.above_reach = Some(a);
        assert!((a.extension(1.0) - 0.01).abs() < 1e-12);
        let e1 = 0.04 * z_weight(2.5 * 2f64.sqrt());
        let want = 0.03 - 0.01 + e1 + 0.02 / 2f64.sqrt();
        assert!(
            (w.projected(1) - want).abs() < 1e-12,
            "{} {want}",
            w.projected(1)
        );
        assert!((w.projected(0) - 0.05).abs() < 1e-12);
    }

    /// The weighted trend's part grows with the paired z a doubling brings (`z·√2`) and
    /// shrinks with the doublings left: `t_j = |Δ|·w(z·2^(j/2))·v`.
    #[test]
    fn the_trend_part_follows_its_weight() {
        // z = 2.5: w = 0.25 now, w(2.5·√2) = 0.5178 after one doubling, 1 after three.
        let reach = TrendReach {
            delta: -0.04,
            z: 2.5,
            side: 0.5,
        };
        let w = WidthParts {
            trend_reach: Some(reach),
            ..parts(0.10, 0.06, 0.005, 4.0)
        };
        let by_hand = |j: i32| {
            let weight = ((2.5 * 2f64.sqrt().powi(j) - 2.0) / 2.0).clamp(0.0, 1.0);
            0.035 + 0.06 / 2f64.sqrt().powi(j) + 0.04 * weight * 0.5 * f64::from(4 - j) / 4.0
        };
        for j in 0..4 {
            assert!(
                (w.projected(j as u32) - by_hand(j)).abs() < 1e-15,
                "j = {j}"
            );
        }
        assert!((reach.weighted(1.0) - (-0.04 * 0.25 * 0.5)).abs() < 1e-15);
    }

    #[test]
    fn doublings_reach_the_target_by_the_projection() {
        let w = parts(0.10, 0.06, 0.02, 4.0);
        // Independent: W(j) = 0.02 + 0.06/√2^j + 0.02·(4 − j)/4.
        let by_hand = |j: i32| 0.02 + 0.06 / 2f64.sqrt().powi(j) + 0.02 * f64::from(4 - j) / 4.0;
        for j in 0..4 {
            assert!((w.projected(j as u32) - by_hand(j)).abs() < 1e-15);
        }
        // Past N the trend is spent: W(6) = s + n/8.
        assert!((w.projected(6) - (0.02 + 0.06 / 8.0)).abs() < 1e-15);
        let t = 0.06;
        let j = doublings_to(0.01, &w, Some(t), 1);
        assert!(w.projected(j) <= t && w.projected(j - 1) > t, "{j}");
        // No target: one doubling. Capped at the whole pool: 0.25 → 0.5 → 1.
        assert_eq!(doublings_to(0.01, &w, None, 1), 1);
        assert_eq!(doublings_to(0.25, &w, Some(1e-9), 1), 2);
        assert!(!w.spread_dominates() && parts(0.1, 0.02, 0.03, 4.0).spread_dominates());
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
        // A prediction at another N: the part is scanned at the N the base records, so that
        // grow accepts it.
        let recorded = s.pool_size.unwrap();
        let c = grow_commands(&s, 7 * recorded, 0.05, 0.1, "my/summary");
        assert!(
            c[1].contains(&format!("--pool-size {recorded} ")),
            "{}",
            c[1]
        );
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
        let n = next_step(&s, &p, &plan);
        let w = width_parts(&p).unwrap();
        assert!((w.spread + w.noise + w.trend - w.width).abs() < 1e-12);
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
            Action::BudgetCannotHelp => assert!(w.lasting_spread() >= 1e-4, "{w:?}"),
            Action::None => panic!("a target of 0.01 points is not met: {n:?}"),
        }
    }

    /// A 40-query ilias-like summary at 5% and its prediction with the default options.
    fn small_prediction() -> (Summary, Prediction) {
        let cfg = SimConfig::preset("ilias-like", 0).unwrap().with_queries(40);
        let s = simulate_summary(&cfg).unwrap().summary;
        let p = super::super::predict_without_next_step(&s, &PredictOptions::default()).unwrap();
        (s, p)
    }

    /// The trend's remaining move is a line in log2(N/S) without bound; the message keeps it
    /// within the metric's range around the estimate.
    #[test]
    fn the_trend_clause_stays_within_the_metric() {
        let (s, mut p) = small_prediction();
        p.trust.verdict = super::super::Verdict::Trusted;
        (p.trust.trend_projected, p.trust.trend_std_error) = (-0.9, 0.01);
        p.trust.trend_per_doubling = -5.0;
        assert!(p.trust.trend_fired());
        let n = next_step(&s, &p, &NextStepPlan::default());
        let by = format!("move it by {} points", points(-p.estimate));
        assert!(n.message.contains(&by), "{} (expected {by})", n.message);
    }

    /// The parts add up to the width: the tutorial's 1% sample, a falling trend of 73.5 points
    /// clamped at 0 below and the levels' reach of 27 points above, leaves the trend's part
    /// all but the noise of the width and no spread, so the reach counts for nothing and the
    /// message names none.
    #[test]
    fn the_parts_add_up_to_the_width() {
        let (s, mut p) = small_prediction();
        p.trust.verdict = super::super::Verdict::Doubtful;
        let r = p.realized.as_mut().unwrap();
        r.interval = super::super::stats::Interval { lo: 0.0, hi: 0.85 };
        r.pool_sd = 0.037;
        r.trend_shift = -0.735;
        r.levels_high = Some(super::super::realized::LevelsHigh {
            estimate: 0.8,
            extension: 0.27,
        });
        let w = width_parts(&p).unwrap();
        assert!(w.spread < 0.01, "{w:?}");
        assert_eq!(w.levels_extension, w.spread);
        assert!(w.noise + w.trend + w.spread <= w.width + 1e-12);
        let n = next_step(&s, &p, &NextStepPlan::default());
        assert!(!n.message.contains("levels' highest"), "{}", n.message);
    }

    /// A target that only the whole pool meets: the step says so, with no projected width
    /// of a sample (the metric is exact at f = 1) and the commands up to f = 1.
    #[test]
    fn a_target_met_only_by_the_whole_pool_says_so() {
        let (s, mut p) = small_prediction();
        // All of a 30-point width is pool noise: W(j) = 0.3·2^(−j/2) stays above 0.01
        // until 2^(j/2) ≥ 30 (j ≥ 10), past f·2^j = 1 at j = 5.
        let r = p.realized.as_mut().unwrap();
        r.interval = super::super::stats::Interval { lo: 0.2, hi: 0.5 };
        r.pool_sd = 1.0;
        r.trend_shift = 0.0;
        let w = width_parts(&p).unwrap();
        assert_eq!((w.noise, w.trend, w.spread), (w.width, 0.0, 0.0));
        let plan = NextStepPlan {
            target_width: Some(0.01),
            summary_path: None,
        };
        let n = next_step(&s, &p, &plan);
        assert_eq!(n.action, Action::Grow);
        assert_eq!((n.fraction, n.projected_width), (Some(1.0), Some(0.0)));
        assert!(
            n.message
                .starts_with("Scan the whole pool to reach the target width of 1.00 points")
                && n.message.contains("at f = 1 the metric is exact"),
            "{}",
            n.message
        );
        assert!(!n.message.contains("level trend"), "{}", n.message);
        assert_eq!(n.commands.len(), 3 * 5);
        assert!(n.commands[14].ends_with("-o summary_1"), "{:?}", n.commands);
    }

    /// A summary scanned at f = 1 needs no more sample: the whole pool says its metric is
    /// exact, a part of it (one shard) says to merge the others.
    #[test]
    fn an_exact_scan_needs_no_growing() {
        let (mut s, mut p) = small_prediction();
        s.fraction = 1.0;
        p.trust.verdict = super::super::Verdict::Doubtful;
        p.pool_size = s.subset_sizes[0];
        let n = next_step(&s, &p, &NextStepPlan::default());
        assert_eq!((n.action, n.projected_width), (Action::None, Some(0.0)));
        assert!(
            n.message.contains("`tailrank eval --summary`"),
            "{}",
            n.message
        );
        assert!(n.commands.is_empty());
        p.pool_size = 2 * s.subset_sizes[0];
        let n = next_step(&s, &p, &NextStepPlan::default());
        assert_eq!((n.action, n.projected_width), (Action::None, None));
        assert!(
            n.message.starts_with("Merge the other shards"),
            "{}",
            n.message
        );
    }
}
