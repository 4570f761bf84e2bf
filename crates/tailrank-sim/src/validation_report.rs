//! The validation reports: `tailrank validate` (the summary-level corpus: a plain-text table
//! and a markdown report, errors in mAP points) and `tailrank simulate --vectors --validate`
//! (a markdown table of the vector-level runs). error = prediction − realized truth.

mod vectors;
use crate::atomic::{write_bytes, Transaction};
use crate::error::{Error, Result};
use crate::numerics::quantile_sorted;
use crate::predict::endpoint_test::EndpointTest;
use crate::predict::{FitMode, Interval, Verdict};
use crate::simulate::corpus_report::{
    exam, exam_totals, exam_totals_text, overview, points_text, ErrorSummary, OverviewRow,
};
use crate::simulate::decompose::{self, Decomposition};
use crate::simulate::validation::{
    coverage_width, mean, share_text, stats_of, verdict_rates, Coverage, Run, ValidationReport,
    FLAG_MUST, FLAG_NOT,
};
use std::fmt::Write as _;
use std::path::Path;
pub use vectors::{vector_decomposition_table, vector_table};

impl ValidationReport {
    /// Plain-text table (mAP in percent points of error, two decimals).
    pub fn table(&self) -> String {
        let mut t = corpus_table(self);
        let _ = writeln!(
            t,
            "{} (f = {})",
            exam_totals_text(&exam_totals(&exam(self))),
            self.options.fraction
        );
        let _ = writeln!(t);
        for preset in &self.options.presets {
            let runs = self.runs_at(preset, self.options.fraction);
            let Some(r0) = runs.first() else { continue };
            let truth_mean = mean(&runs.iter().map(|r| r.truth).collect::<Vec<_>>());
            let _ = writeln!(
                t,
                "{preset}: {} seeds, N = {}, f = {} (S ≈ {}), k = {}, mean true mAP@{} = {:.2}%",
                runs.len(),
                r0.pool_size,
                self.options.fraction,
                r0.sample_size,
                r0.k,
                r0.k,
                100.0 * truth_mean
            );
            let _ = writeln!(
                t,
                "  {:<16} {:>12} {:>14} {:>13}",
                "method", "mean err (%)", "mean |err| (%)", "max |err| (%)"
            );
            for s in self.headline(preset) {
                let _ = writeln!(
                    t,
                    "  {:<16} {:>+12.2} {:>14.2} {:>13.2}",
                    s.method,
                    100.0 * s.mean_error,
                    100.0 * s.mean_abs_error,
                    100.0 * s.max_abs_error
                );
            }
            let (pc, bc) = self.coverage(preset);
            let _ = writeln!(
                t,
                "  evt {:.0}% interval coverage: percentile {}, BCa {}",
                100.0 * self.options.confidence,
                coverage_text(pc),
                coverage_text(bc)
            );
            for line in interval_verdict_lines(&runs) {
                let _ = writeln!(t, "  {line}");
            }
            let ds: Vec<&Decomposition> = runs
                .iter()
                .filter_map(|r| r.decomposition.as_ref())
                .collect();
            if let Some(d) = decompose::mean_of(&ds) {
                let _ = writeln!(
                    t,
                    "  evt error parts (points): map {:+.2}, count {:+.2}, tail {:+.2}, \
                     immune {:+.2}, centre {:+.2}; binomial oracle {:+.2}; immune outranked \
                     {}/{}",
                    100.0 * d.part_map,
                    100.0 * d.part_count,
                    100.0 * d.part_tail,
                    100.0 * d.part_immune,
                    100.0 * d.part_centre,
                    100.0 * d.oracle_binomial,
                    d.immune_outranked,
                    d.immune
                );
            }
            for (name, truth, err, max_abs) in recall_hit_stats(&runs, r0.k) {
                let _ = writeln!(
                    t,
                    "  predicted {name}: mean truth {:.2}%, mean err {:+.2}, max |err| {:.2} (points)",
                    100.0 * truth,
                    100.0 * err,
                    100.0 * max_abs
                );
            }
            let _ = writeln!(
                t,
                "  convergence over sample fractions (mean error / mean |error|, %):"
            );
            let _ = writeln!(
                t,
                "  {:>8} {:>10} {:>17} {:>17} {:>17}",
                "f", "S", "evt", "count", "evaluate-at-S"
            );
            for f in self.fractions() {
                let rs = self.runs_at(preset, f);
                let Some(r) = rs.first() else { continue };
                let cell = |m: &str| match stats_of(m, &rs) {
                    Some(s) => format!(
                        "{:+.2} / {:.2}",
                        100.0 * s.mean_error,
                        100.0 * s.mean_abs_error
                    ),
                    None => "n/a".into(),
                };
                let _ = writeln!(
                    t,
                    "  {:>8} {:>10} {:>17} {:>17} {:>17}",
                    f,
                    r.sample_size,
                    cell("evt"),
                    cell("count"),
                    cell("evaluate-at-S")
                );
            }
            let _ = writeln!(t);
        }
        t
    }

    /// Markdown report: settings, headline tables, coverage, convergence, per-run rows.
    pub fn markdown(&self, command: &str) -> String {
        let mut m = String::new();
        let o = &self.options;
        let _ = writeln!(m, "# tailrank validation report\n");
        let _ = writeln!(m, "Command: `{command}`\n");
        let _ = writeln!(
            m,
            "Presets {}, {} seeds from {}, main fraction f = {}, sweep {:?}, query bootstrap B = {} \
             ({:.0}% intervals), tool version {}.\n",
            o.presets.join(", "),
            o.seeds,
            o.first_seed,
            o.fraction,
            o.fractions,
            o.bootstrap,
            100.0 * o.confidence,
            crate::TOOL_VERSION
        );
        let _ = writeln!(
            m,
            "Errors are prediction − realized truth of mAP@k at N, in mAP points (percent). \
             `oracle` is the expected-rank map fed with the true hardness.\n"
        );
        let _ = writeln!(m, "{}", corpus_markdown(self));
        let _ = writeln!(m, "{}", exam_markdown(self));
        for preset in &o.presets {
            let runs = self.runs_at(preset, o.fraction);
            let Some(r0) = runs.first() else { continue };
            let truth_mean = mean(&runs.iter().map(|r| r.truth).collect::<Vec<_>>());
            let _ = writeln!(m, "## {preset}\n");
            if let Ok(e) = crate::simulate::corpus::entry(preset) {
                let held = if e.held_out {
                    " **Held out** of all tuning."
                } else {
                    ""
                };
                let _ = writeln!(m, "{}.{held}\n", e.description);
            }
            let _ = writeln!(
                m,
                "N = {}, f = {} (S ≈ {}), k = {}, {} seeds; mean realized mAP@{} at N = {:.2}%.\n",
                r0.pool_size,
                o.fraction,
                r0.sample_size,
                r0.k,
                runs.len(),
                r0.k,
                100.0 * truth_mean
            );
            let _ = writeln!(
                m,
                "| method | mean error | mean abs error | max abs error |"
            );
            let _ = writeln!(m, "|---|---:|---:|---:|");
            for s in self.headline(preset) {
                let _ = writeln!(
                    m,
                    "| {} | {:+.2} | {:.2} | {:.2} |",
                    s.method,
                    100.0 * s.mean_error,
                    100.0 * s.mean_abs_error,
                    100.0 * s.max_abs_error
                );
            }
            let (pc, bc) = self.coverage(preset);
            let _ = writeln!(
                m,
                "\nevt {:.0}% interval coverage over seeds: percentile {}, BCa {}.\n",
                100.0 * o.confidence,
                coverage_text(pc),
                coverage_text(bc)
            );
            for line in interval_verdict_lines(&runs) {
                let _ = writeln!(m, "{line}\n");
            }
            let _ = writeln!(
                m,
                "| metric (evt hardness, count law) | mean truth | mean error | max abs error |"
            );
            let _ = writeln!(m, "|---|---:|---:|---:|");
            for (name, truth, err, max_abs) in recall_hit_stats(&runs, r0.k) {
                let _ = writeln!(
                    m,
                    "| {name} | {:.2} | {:+.2} | {:.2} |",
                    100.0 * truth,
                    100.0 * err,
                    100.0 * max_abs
                );
            }
            let ds: Vec<&Decomposition> = runs
                .iter()
                .filter_map(|r| r.decomposition.as_ref())
                .collect();
            if let Some(d) = decompose::mean_of(&ds) {
                let _ = writeln!(m, "\n{}", decompose::markdown(&d, ds.len()));
            }
            self.convergence_and_seeds_markdown(&mut m, preset, &runs);
            let _ = writeln!(m);
        }
        m
    }

    /// The part of [`ValidationReport::markdown`] for `preset` after its headline: the
    /// convergence over sample fractions and the per-seed rows at the main fraction (`runs`).
    fn convergence_and_seeds_markdown(&self, m: &mut String, preset: &str, runs: &[&Run]) {
        let o = &self.options;
        let _ = writeln!(
            m,
            "\nConvergence over sample fractions (mean error / mean abs error):\n"
        );
        let _ = writeln!(m, "| f | S | evt | evt-binomial | count | evaluate-at-S |");
        let _ = writeln!(m, "|---:|---:|---:|---:|---:|---:|");
        for f in self.fractions() {
            let rs = self.runs_at(preset, f);
            let Some(r) = rs.first() else { continue };
            let cell = |meth: &str| match stats_of(meth, &rs) {
                Some(s) => format!(
                    "{:+.2} / {:.2}",
                    100.0 * s.mean_error,
                    100.0 * s.mean_abs_error
                ),
                None => "n/a".into(),
            };
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} | {} | {} |",
                f,
                r.sample_size,
                cell("evt"),
                cell("evt-binomial"),
                cell("count"),
                cell("evaluate-at-S")
            );
        }
        let _ = writeln!(m, "\nPer seed at f = {} (percent):\n", o.fraction);
        let _ = writeln!(
            m,
            "| seed | truth | evt | interval (percentile) | realized interval | verdict | count | evaluate-at-S | power-law | log-linear |"
        );
        let _ = writeln!(m, "|---:|---:|---:|---|---|---|---:|---:|---:|---:|");
        let opt = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{:.2}", 100.0 * v));
        let ivs = |i: Option<Interval>| {
            i.map_or("n/a".into(), |i| {
                format!("[{:.2}, {:.2}]", 100.0 * i.lo, 100.0 * i.hi)
            })
        };
        for r in runs {
            let _ = writeln!(
                m,
                "| {} | {:.2} | {:.2} | {} | {} | {} | {:.2} | {:.2} | {} | {} |",
                r.seed,
                100.0 * r.truth,
                100.0 * r.evt,
                ivs(r.percentile),
                ivs(r.realized),
                r.verdict.map_or("n/a", |v| v.as_str()),
                100.0 * r.count,
                100.0 * r.evaluate_at_s,
                opt(r.power_law),
                opt(r.log_linear)
            );
        }
    }
}

/// Error statistics of the predicted Recall@k and hit@1 over `runs`:
/// `[(name, mean truth, mean error, max |error|)]`, fractions.
fn recall_hit_stats(runs: &[&Run], k: usize) -> Vec<(String, f64, f64, f64)> {
    type Pick = fn(&Run) -> (f64, f64);
    let pick: [(String, Pick); 2] = [
        (format!("Recall@{k}"), |r| {
            (r.truth_recall_at_k, r.recall_at_k)
        }),
        ("hit@1".to_string(), |r| (r.truth_hit_at_1, r.hit_at_1)),
    ];
    pick.into_iter()
        .map(|(name, f)| {
            let pairs: Vec<(f64, f64)> = runs.iter().map(|r| f(r)).collect();
            let truth = mean(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
            let err: Vec<f64> = pairs.iter().map(|p| p.1 - p.0).collect();
            let max_abs = err.iter().fold(0.0f64, |m, e| m.max(e.abs()));
            (name, truth, mean(&err), max_abs)
        })
        .collect()
}

/// Lines of the interval and verdict summary of `runs` (one preset, main fraction).
fn interval_verdict_lines(runs: &[&Run]) -> Vec<String> {
    let cw = |c: Option<(Coverage, f64)>| match c {
        Some((c, w)) => format!(
            "coverage {}, mean width {:.2} points",
            coverage_text(Some(c)),
            100.0 * w
        ),
        None => "n/a".into(),
    };
    let rate = |c: Coverage| {
        if c.1 == 0 {
            format!("{}/{} (n/a)", c.0, c.1)
        } else {
            coverage_text(Some(c))
        }
    };
    let (hit, fa) = verdict_rates(runs, |r| r.verdict.map(|v| v == Verdict::Doubtful));
    vec![
        format!(
            "query-bootstrap interval (over other query sets): {}",
            cw(coverage_width(runs, |r| r.percentile))
        ),
        format!(
            "realized interval (these queries): {}",
            cw(coverage_width(runs, |r| r.realized))
        ),
        format!(
            "verdict doubtful: hit rate {} of runs with |err| > {} points, false alarms {} of \
             runs with |err| < {} points",
            rate(hit),
            100.0 * FLAG_MUST,
            rate(fa),
            100.0 * FLAG_NOT
        ),
        endpoint_line(runs),
        excess_centre_line(runs),
    ]
}

/// How often the estimate was moved to the centre of the endpoint test's excess, the mean
/// move, the survivor decay's range, and the tail model's own error beside the estimate's
/// (points).
fn excess_centre_line(runs: &[&Run]) -> String {
    let moved: Vec<(&Run, f64, f64)> = runs
        .iter()
        .filter_map(|r| r.excess_centre.map(|c| (*r, c.shift, c.unmoved_map_at_k)))
        .collect();
    let decay = |f: fn(f64, f64) -> f64, start: f64| {
        runs.iter()
            .filter_map(|r| r.excess_centre.map(|c| c.hazard_decay))
            .fold(start, f)
    };
    if moved.is_empty() {
        return "excess centre: the estimate is the tail model's own in every run".into();
    }
    let n = moved.len() as f64;
    let mean = |f: &dyn Fn(&(&Run, f64, f64)) -> f64| moved.iter().map(f).sum::<f64>() / n;
    format!(
        "excess centre: estimate moved in {} of {} runs, by {:+.2} points on average (survivor \
         decay {:.2} to {:.2}); over those runs mean |err| {:.2} moved, {:.2} for the tail \
         model alone",
        moved.len(),
        runs.len(),
        100.0 * mean(&|m| m.1),
        decay(f64::min, f64::INFINITY),
        decay(f64::max, 0.0),
        100.0 * mean(&|m| (m.0.evt - m.0.truth).abs()),
        100.0 * mean(&|m| (m.2 - m.0.truth).abs()),
    )
}

/// How often the verdict's endpoint test fired, the median of its observed/expected ratio and
/// of its z, and the range of z.
fn endpoint_line(runs: &[&Run]) -> String {
    let ran: Vec<&EndpointTest> = runs.iter().filter_map(|r| r.endpoint.as_ref()).collect();
    if ran.is_empty() {
        return "endpoint test: did not run (no immune positive at levels 1-3)".into();
    }
    let fired = runs
        .iter()
        .filter(|r| r.endpoint_fired == Some(true))
        .count();
    let sorted = |f: fn(&EndpointTest) -> f64| {
        let mut v: Vec<f64> = ran.iter().map(|e| f(e)).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (z, r) = (sorted(|e| e.z), sorted(EndpointTest::ratio));
    format!(
        "endpoint test: fired in {fired} of {} runs; observed / expected outranked immune \
         positives, median {:.2}; paired z median {:+.1} (from {:+.1} to {:+.1})",
        ran.len(),
        quantile_sorted(&r, 0.5),
        quantile_sorted(&z, 0.5),
        z[0],
        z[z.len() - 1]
    )
}

/// `covered/total (percent)`, or `n/a` when no interval was computed.
fn coverage_text(c: Option<Coverage>) -> String {
    match c {
        Some(c) => share_text(c),
        None => "n/a".into(),
    }
}

/// The overview as markdown: mAP@k errors, then hit@1 / Recall@k / oracles, for the tuned
/// families and then for the held-out one.
pub fn corpus_markdown(report: &ValidationReport) -> String {
    let rows = overview(report);
    let mut m = String::new();
    let k = report.runs.first().map_or(0, |r| r.k);
    let _ = writeln!(m, "## Corpus overview\n");
    let _ = writeln!(
        m,
        "Errors in mAP points (percent), as mean / mean |err| / max |err| over seeds. \
         `oracle ER` and `oracle Bin`: the expected-rank and binomial maps fed the true \
         hardness. `immune outranked`: positives called immune that the full pool outranks.\n"
    );
    for (title, held) in [("Tuned families", false), ("Held-out family", true)] {
        let part: Vec<&OverviewRow> = rows.iter().filter(|r| r.held_out == held).collect();
        if part.is_empty() {
            continue;
        }
        let _ = writeln!(m, "### {title}\n");
        let _ = writeln!(
            m,
            "| family | f | seeds | true mAP@{k} | evt | evt-binomial | count | evaluate-at-S |"
        );
        let _ = writeln!(m, "|---|---:|---:|---:|---|---|---|---|");
        for r in &part {
            let _ = writeln!(
                m,
                "| {} | {} | {} | {:.2} | {} | {} | {} | {} |",
                r.family,
                r.fraction,
                r.runs,
                100.0 * r.truth,
                r.evt.points(),
                r.evt_binomial.points(),
                r.count.points(),
                r.evaluate_at_s.points()
            );
        }
        let _ = writeln!(
            m,
            "\n| family | f | hit@1 | Recall@{k} | oracle ER | oracle Bin | immune outranked |"
        );
        let _ = writeln!(m, "|---|---:|---|---|---:|---:|---:|");
        for r in &part {
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} | {:+.2} | {:+.2} | {:.1}% |",
                r.family,
                r.fraction,
                r.hit_at_1.points(),
                r.recall_at_k.points(),
                100.0 * r.oracle_expected_rank,
                100.0 * r.oracle_binomial,
                100.0 * r.immune_outranked
            );
        }
        let _ = writeln!(m);
    }
    m
}

/// The exam at the main fraction as markdown: per family the estimate and its two second
/// opinions (mean error and mean |error|), the two intervals' coverage and mean width, the
/// verdict's doubtful count, hit rate and false alarms; then the tuned families' totals.
pub fn exam_markdown(report: &ValidationReport) -> String {
    let rows = exam(report);
    let mut m = String::new();
    if rows.is_empty() {
        return m;
    }
    let _ = writeln!(m, "## The exam at f = {}\n", report.options.fraction);
    let _ = writeln!(
        m,
        "Mean error (mean |error|) in mAP points; each interval's coverage of the realized truth \
         and mean width in points (over the runs that have one); the runs the verdict calls \
         doubtful, its hit rate (doubtful among runs off by more than {}) and false alarms \
         (doubtful among runs off by less than {}).\n",
        points_text(FLAG_MUST),
        points_text(FLAG_NOT)
    );
    let _ = writeln!(
        m,
        "| family | evt ({}) | other fit ({}) | level-calibrated | realized interval | \
         query-bootstrap interval | doubtful | hit | false alarm |",
        report.options.fit.as_str(),
        match report.options.fit {
            FitMode::LevelSelected => "the paper's",
            FitMode::Fixed => "level-selected",
        }
    );
    let _ = writeln!(m, "|---|---:|---:|---:|---|---|---:|---:|---:|");
    let err = |e: &ErrorSummary| {
        if e.mean.is_finite() {
            format!("{:+.2} ({:.2})", 100.0 * e.mean, 100.0 * e.mean_abs)
        } else {
            "n/a".into()
        }
    };
    let interval = |c: Option<(Coverage, f64)>| {
        c.map_or("n/a".into(), |((i, n), w)| {
            format!("{i}/{n}, {:.2}", 100.0 * w)
        })
    };
    let count = |c: Coverage| {
        if c.1 == 0 {
            "–".to_string()
        } else {
            format!("{}/{}", c.0, c.1)
        }
    };
    for r in &rows {
        let _ = writeln!(
            m,
            "| {}{} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.family,
            if r.held_out { " (held out)" } else { "" },
            err(&r.evt),
            err(&r.other_fit),
            err(&r.level_calibrated),
            interval(r.realized),
            interval(r.query_bootstrap),
            count(r.doubtful),
            count(r.hit),
            count(r.false_alarm)
        );
    }
    let _ = writeln!(m, "\n{}.", exam_totals_text(&exam_totals(&rows)));
    m
}

/// The overview as a plain-text table (mean error / mean |error| in points).
pub fn corpus_table(report: &ValidationReport) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "corpus overview (mean err / mean |err|, mAP points; * = held out):"
    );
    let _ = writeln!(
        t,
        "  {:<21} {:>6} {:>7} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13}",
        "family", "f", "truth", "evt", "evt-binomial", "count", "eval-at-S", "hit@1", "Recall@k"
    );
    let cell = |e: &ErrorSummary| format!("{:+.2}/{:.2}", 100.0 * e.mean, 100.0 * e.mean_abs);
    for r in overview(report) {
        let name = if r.held_out {
            format!("{}*", r.family)
        } else {
            r.family.clone()
        };
        let _ = writeln!(
            t,
            "  {:<21} {:>6} {:>7.2} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13}",
            name,
            r.fraction,
            100.0 * r.truth,
            cell(&r.evt),
            cell(&r.evt_binomial),
            cell(&r.count),
            cell(&r.evaluate_at_s),
            cell(&r.hit_at_1),
            cell(&r.recall_at_k)
        );
    }
    t
}

/// The validation corpus, one line per family: name, `(held out)`, description.
pub fn corpus_list() -> String {
    let mut s = String::new();
    for e in crate::simulate::corpus::CORPUS {
        let held = if e.held_out { " (held out)" } else { "" };
        let _ = writeln!(s, "{}{held}: {}", e.name, e.description);
    }
    s
}

/// One line per validation run: its truth and the error of each method in points, and the
/// realized interval around the truth with the verdict (when they ran).
pub fn run_line(r: &Run) -> String {
    format!(
        "{} seed {} f={}: truth {:.2}%  evt {:+.2}  count {:+.2}  evaluate-at-S {:+.2}  \
         hit@1 {:+.2}  recall {:+.2}{}",
        r.preset,
        r.seed,
        r.fraction,
        100.0 * r.truth,
        100.0 * (r.evt - r.truth),
        100.0 * (r.count - r.truth),
        100.0 * (r.evaluate_at_s - r.truth),
        100.0 * (r.hit_at_1 - r.truth_hit_at_1),
        100.0 * (r.recall_at_k - r.truth_recall_at_k),
        match (r.realized, r.verdict) {
            (Some(i), Some(v)) => format!(
                "  realized [{:+.2}, {:+.2}]  {}",
                100.0 * (i.lo - r.truth),
                100.0 * (i.hi - r.truth),
                v.as_str()
            ),
            _ => String::new(),
        }
    )
}

/// The files of a validation study (`tailrank validate`): the markdown report and, when asked
/// for, every run as JSON. Their paths are claimed before the study runs (an output that
/// cannot be written fails before hours of work), and [`ValidationFiles::write`] replaces them
/// together, the JSON first.
pub struct ValidationFiles {
    outputs: Transaction,
    markdown: usize,
    json: Option<usize>,
}

impl ValidationFiles {
    /// Claim the markdown report `markdown` and the runs JSON `json`.
    pub fn claim(markdown: &Path, json: Option<&Path>) -> Result<Self> {
        let mut outputs = Transaction::new(&[]);
        let json = json.map(|j| outputs.add_file(j)).transpose()?;
        let markdown = outputs.add_file(markdown)?;
        Ok(ValidationFiles {
            outputs,
            markdown,
            json,
        })
    }

    /// Write `report`: its markdown (headed by the `command` that ran it) and its runs.
    pub fn write(self, report: &ValidationReport, command: &str) -> Result<()> {
        let md = report.markdown(command);
        if let Some(slot) = self.json {
            let bytes = serde_json::to_vec_pretty(report)
                .map_err(|e| Error::internal(format!("cannot serialise the runs: {e}")))?;
            self.outputs.write(slot, |p| write_bytes(p, &bytes))?;
        }
        self.outputs
            .write(self.markdown, |p| write_bytes(p, md.as_bytes()))?;
        self.outputs.commit()
    }

    /// Write the exam (`tailrank validate --exam`): its tables `markdown` and its corpus runs.
    pub fn write_exam(self, markdown: &str, runs: &[Run]) -> Result<()> {
        if let Some(slot) = self.json {
            let bytes = serde_json::to_vec_pretty(runs)
                .map_err(|e| Error::internal(format!("cannot serialise the runs: {e}")))?;
            self.outputs.write(slot, |p| write_bytes(p, &bytes))?;
        }
        self.outputs
            .write(self.markdown, |p| write_bytes(p, markdown.as_bytes()))?;
        self.outputs.commit()
    }
}
