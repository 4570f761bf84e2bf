//! The validation reports: `tailrank validate` (the summary-level corpus: a plain-text table
//! and a markdown report, errors in mAP points) and `tailrank simulate --vectors --validate`
//! (a markdown table of the vector-level runs). error = prediction − realized truth.

mod corpus;
mod vectors;
use crate::atomic::{write_bytes, Transaction};
use crate::error::{Error, Result};
use crate::numerics::quantile_sorted;
use crate::predict::endpoint_test::EndpointTest;
use crate::predict::Interval;
use crate::simulate::corpus_report::{exam, exam_totals, exam_totals_text, points, signed_points};
use crate::simulate::decompose::{self, Decomposition};
use crate::simulate::validation::{
    coverage_width, doubted, mean, share_text, stats_of, verdict_rates, Coverage, Run,
    ValidationReport, FLAG_MUST, FLAG_NOT,
};
use crate::table::{Column, Table};
pub use corpus::{corpus_markdown, corpus_table, exam_markdown};
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
            let headline = Table::new(vec![
                Column::left("method").width(16),
                Column::right("mean err (%)"),
                Column::right("mean |err| (%)"),
                Column::right("max |err| (%)"),
            ]);
            t.push_str(
                &headline
                    .with_rows(self.headline_rows(preset))
                    .text("  ", " "),
            );
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
                     immune {:+.2}, centre {:+.2}, spacing {:+.2}; binomial oracle {:+.2}; \
                     immune outranked {}/{}",
                    100.0 * d.part_map,
                    100.0 * d.part_count,
                    100.0 * d.part_tail,
                    100.0 * d.part_immune,
                    100.0 * d.part_centre,
                    100.0 * d.part_spacing,
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
            let methods = ["evt", "count", "evaluate-at-S"];
            let mut columns = vec![Column::right("f").width(8), Column::right("S").width(10)];
            columns.extend(methods.map(|m| Column::right(m).width(17)));
            t.push_str(
                &Table::new(columns)
                    .with_rows(self.convergence_rows(preset, &methods))
                    .text("  ", " "),
            );
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
            let headline = Table::new(vec![
                Column::left("method"),
                Column::right("mean error"),
                Column::right("mean abs error"),
                Column::right("max abs error"),
            ]);
            m.push_str(&headline.with_rows(self.headline_rows(preset)).markdown());
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
            let recall_hit = Table::new(vec![
                Column::left("metric (evt hardness, count law)"),
                Column::right("mean truth"),
                Column::right("mean error"),
                Column::right("max abs error"),
            ]);
            let rows =
                recall_hit_stats(&runs, r0.k)
                    .into_iter()
                    .map(|(name, truth, err, max_abs)| {
                        vec![name, points(truth), signed_points(err), points(max_abs)]
                    });
            m.push_str(&recall_hit.with_rows(rows).markdown());
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
        let methods = ["evt", "evt-binomial", "count", "evaluate-at-S"];
        let mut columns = vec![Column::right("f"), Column::right("S")];
        columns.extend(methods.map(Column::right));
        m.push_str(
            &Table::new(columns)
                .with_rows(self.convergence_rows(preset, &methods))
                .markdown(),
        );
        let _ = writeln!(m, "\nPer seed at f = {} (percent):\n", o.fraction);
        let seeds = Table::new(vec![
            Column::right("seed"),
            Column::right("truth"),
            Column::right("evt"),
            Column::left("interval (percentile)"),
            Column::left("realized interval"),
            Column::left("verdict"),
            Column::right("count"),
            Column::right("evaluate-at-S"),
            Column::right("power-law"),
            Column::right("log-linear"),
        ]);
        let opt = |v: Option<f64>| v.map_or("n/a".into(), points);
        let ivs = |i: Option<Interval>| {
            i.map_or("n/a".into(), |i| {
                format!("[{:.2}, {:.2}]", 100.0 * i.lo, 100.0 * i.hi)
            })
        };
        let rows = runs.iter().map(|r| {
            vec![
                r.seed.to_string(),
                points(r.truth),
                points(r.evt),
                ivs(r.percentile),
                ivs(r.realized),
                r.verdict.map_or("n/a", |v| v.as_str()).to_string(),
                points(r.count),
                points(r.evaluate_at_s),
                opt(r.power_law),
                opt(r.log_linear),
            ]
        });
        m.push_str(&seeds.with_rows(rows).markdown());
    }

    /// The headline rows of `preset` (one per method, main fraction): the method, its mean
    /// error, mean |error| and max |error| in points; the text and the markdown report print
    /// them under their own titles.
    fn headline_rows(&self, preset: &str) -> Vec<Vec<String>> {
        self.headline(preset)
            .into_iter()
            .map(|s| {
                vec![
                    s.method,
                    signed_points(s.mean_error),
                    points(s.mean_abs_error),
                    points(s.max_abs_error),
                ]
            })
            .collect()
    }

    /// The convergence rows of `preset`: per sample fraction with runs, `f`, `S` and for each
    /// of `methods` its `mean error / mean |error|` in points (`n/a` where it did not run).
    fn convergence_rows(&self, preset: &str, methods: &[&str]) -> Vec<Vec<String>> {
        self.fractions()
            .into_iter()
            .filter_map(|f| {
                let rs = self.runs_at(preset, f);
                let r = rs.first()?;
                let mut row = vec![f.to_string(), r.sample_size.to_string()];
                row.extend(methods.iter().map(|meth| match stats_of(meth, &rs) {
                    Some(s) => format!(
                        "{} / {}",
                        signed_points(s.mean_error),
                        points(s.mean_abs_error)
                    ),
                    None => "n/a".into(),
                }));
                Some(row)
            })
            .collect()
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
    let (hit, fa) = verdict_rates(runs, doubted);
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
    /// Claim the markdown report `markdown` and the runs JSON `json`, neither of them one of
    /// the command's `inputs` (the exam's vector run files) nor inside a summary folder.
    pub fn claim(markdown: &Path, json: Option<&Path>, inputs: &[&Path]) -> Result<Self> {
        for p in std::iter::once(markdown).chain(json) {
            crate::outputs::refuse_in_summary(p)?;
        }
        let mut outputs = Transaction::new(inputs);
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
        self.write_both(&report.markdown(command), report)
    }

    /// Write the exam (`tailrank validate --exam`): its tables `markdown` and its corpus runs.
    pub fn write_exam(self, markdown: &str, runs: &[Run]) -> Result<()> {
        self.write_both(markdown, runs)
    }

    /// Write `runs` as pretty JSON (when claimed) and then `markdown`, and commit both.
    fn write_both(self, markdown: &str, runs: &(impl serde::Serialize + ?Sized)) -> Result<()> {
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
