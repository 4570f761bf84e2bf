//! `tailrank demo`, `simulate` and `validate`: benchmarks with known truth simulated into
//! folders, predicted from their samples and compared with the truth.

use super::{serde_pretty, Console};
use crate::atomic::{write_bytes, Transaction};
use crate::error::{Error, Result};
use crate::outputs::resolve_output;
use crate::predict::FitMode;
use crate::report::demo::{demo_header, demo_table, simulation_report, vectors_report};
use crate::report::headline::demo_headline;
use crate::report::html_pages::{demo_html, write_html};
use crate::report::prediction_json;
use crate::report::validation::ValidationFiles;
use crate::report::validation::{corpus_list, run_line, vector_decomposition_table, vector_table};
use crate::simulate::exam::exam;
use crate::simulate::files::run_demo;
use crate::simulate::request::{stream_line, SimulateRequest};
use crate::simulate::validation::{run_validation, Run, ValidationOptions};
use crate::simulate::vector_validation::VectorRunOptions;
use crate::simulate::vectors::{write_vectors_batched, WRITE_BATCH_ROWS};
use crate::simulate::web_validation::run_families;
use crate::simulate::{simulate_to_dir, SimConfig, SimulationFiles};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

/// `tailrank demo`: the `ilias-like` preset (seed `seed`, scaled to `queries` when given)
/// simulated into `out` and predicted from its sample with `bootstrap` query-bootstrap and
/// `sample_noise` sample-noise replicates ([`run_demo`]); the full table with `details`, else
/// the headline; the HTML page (never inside `out`, which the demo replaces) when asked for.
#[derive(Debug, Clone)]
pub struct DemoJob<'a> {
    pub seed: u64,
    pub out: &'a Path,
    pub bootstrap: usize,
    pub sample_noise: usize,
    pub queries: Option<usize>,
    pub details: bool,
    pub html: Option<&'a Path>,
}

impl DemoJob<'_> {
    /// Prints the header of the simulation before it runs, the report once it is done.
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        let mut cfg = SimConfig::preset("ilias-like", self.seed)?;
        if let Some(q) = self.queries {
            cfg = cfg.with_queries(q);
        }
        cfg.check()?;
        crate::simulate::files::demo_options(&cfg, self.bootstrap, self.sample_noise).check()?;
        if let Some(h) = self.html {
            crate::outputs::refuse_inside(h, self.out, "demo")?;
        }
        // The page is replaced together with the folder's files; on a stream (`/dev/stdout`,
        // a pipe), which cannot be, it is written on its own.
        let page_alone = self.html.is_some_and(crate::outputs::is_stream);
        let (mut outputs, mut page_out) = (Transaction::new(&[]), Transaction::new(&[]));
        let html_slot = match self.html {
            Some(p) if page_alone => Some(page_out.add_file(p)?),
            Some(p) => Some(outputs.add_file(p)?),
            None => None,
        };
        console.out(&demo_header(&cfg));
        let (sim, p) = run_demo(
            &cfg,
            self.out,
            self.bootstrap,
            self.sample_noise,
            &mut outputs,
        )?;
        let files = SimulationFiles::in_dir(self.out);
        if let Some(slot) = html_slot {
            let truth = serde_json::to_value(&sim.truth)
                .map_err(|e| Error::internal(format!("cannot serialise the truth: {e}")))?;
            let page = demo_html(&prediction_json(&p), &truth);
            let page_tx = if page_alone { &page_out } else { &outputs };
            page_tx.write(slot, |path| write_html(&page, path))?;
        }
        outputs.commit()?;
        page_out.commit()?;
        super::note_written(console, "demo", &[self.html]);
        console.out(&if self.details {
            demo_table(&sim.truth, &p, &files)
        } else {
            demo_headline(&sim.truth, &p, &files)
        });
        Ok(())
    }
}

/// `tailrank simulate`: what `request` asks for ([`SimulateRequest::check`]) written into
/// `out`: a summary-level preset, a vector benchmark's descriptor files, or the vector-level
/// validation ([`VectorValidation`], run with `out` as its work folder).
#[derive(Debug, Clone)]
pub struct SimulateJob<'a> {
    pub request: SimulateRequest,
    pub out: &'a Path,
    pub validation: VectorValidation<'a>,
}

impl SimulateJob<'_> {
    /// Options the chosen mode would ignore are refused before anything is written.
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        self.request.check()?;
        if self.request.validate {
            return self.validation.run(self.out, console);
        }
        if self.request.vectors {
            let cfg = self.request.vector_config()?;
            let bar = console.progress("simulate", Some(cfg.pool_size));
            let b = write_vectors_batched(&cfg, self.out, WRITE_BATCH_ROWS, &bar)?;
            drop(bar);
            console.out(&vectors_report(&cfg, &b, self.out));
            return Ok(());
        }
        let cfg = self.request.sim_config()?;
        let (sim, _) = simulate_to_dir(&cfg, self.out, None)?;
        let files = SimulationFiles::in_dir(self.out);
        console.out(&simulation_report(&cfg, &sim, &files));
        Ok(())
    }
}

/// The vector-level validation (`tailrank simulate --vectors --validate`): `families` by name
/// (empty: every file-based family) for each seed of `seeds` ([`run_families`]), their table
/// printed and the runs written as JSON to `json` when asked for.
#[derive(Debug, Clone)]
pub struct VectorValidation<'a> {
    pub families: &'a [String],
    pub seeds: RangeInclusive<u64>,
    pub options: VectorRunOptions,
    pub json: Option<&'a Path>,
}

impl VectorValidation<'_> {
    /// Run in the work folder `work`: a line as each family and seed is done, the timings of
    /// the generated (web) families, then the table (and the error decomposition, when a run
    /// has one).
    /// The runs JSON is claimed first: never a file the runs write into `work` (a benchmark
    /// file, or anything inside a kept run's folder) nor in a summary folder, so a bad path
    /// fails before the runs.
    pub fn run(&self, work: &Path, console: &mut dyn Console) -> Result<()> {
        crate::outputs::refuse_in_summary(work)?;
        let mut outputs = Transaction::new(&[]);
        let json = match self.json {
            Some(j) => {
                refuse_run_file(j, work)?;
                crate::outputs::refuse_in_summary(j)?;
                Some(outputs.add_file(j)?)
            }
            None => None,
        };
        let seeds = self.seeds.clone();
        // The lines of `done` and the progress of each pass share the console.
        let shared = std::cell::RefCell::new(&mut *console);
        let runs = run_families(
            self.families,
            seeds,
            &self.options,
            work,
            |f, seed, secs| {
                shared.borrow_mut().err(&format!(
                    "tailrank simulate: {f} seed {seed} done in {secs:.0} s"
                ));
            },
            &|task, rows| shared.borrow().progress(task, Some(rows)),
        )?;
        for r in &runs {
            if let Some(t) = &r.stream {
                console.err(&stream_line(r, t));
            }
        }
        console.out(&vector_table(&runs));
        if runs.iter().any(|r| r.decomposition.is_some()) {
            console.out(&format!("\n{}", vector_decomposition_table(&runs)));
        }
        if let Some(slot) = json {
            let bytes = serde_pretty(&runs)?;
            outputs.write(slot, |p| write_bytes(p, bytes.as_bytes()))?;
            outputs.commit()?;
        }
        Ok(())
    }
}

/// Refuse `json` where the runs in `work` write: one of the benchmark files
/// (`simulate::vectors::FILES`) in `work`, or a path deeper inside `work` (the kept runs'
/// folders). Other files of `work` are left alone by the runs.
fn refuse_run_file(json: &Path, work: &Path) -> Result<()> {
    let (j, w) = (resolve_output(json), resolve_output(work));
    let ours = match j.strip_prefix(&w) {
        Ok(rel) if rel.as_os_str().is_empty() => true,
        Ok(rel) => {
            rel.components().count() > 1
                || crate::simulate::vectors::FILES
                    .iter()
                    .any(|f| rel == Path::new(f))
        }
        Err(_) => false,
    };
    if ours {
        return Err(Error::output(
            json,
            format!(
                "is where the runs write into --out {} (its benchmark files and kept runs): \
                 choose another path for the runs",
                work.display()
            ),
        ));
    }
    Ok(())
}

/// `tailrank validate`: the validation study ([`run_validation`]) or, with `exam`, the exam
/// ([`exam`]) on simulated benchmarks, as the options are given (None: the study's default,
/// [`ValidationOptions::default`]); the table printed, the markdown report written to `out`
/// and the runs to `json` when asked for; with `list`, only the corpus is printed.
#[derive(Debug, Clone)]
pub struct ValidateJob<'a> {
    pub list: bool,
    pub presets: Option<&'a [String]>,
    pub seeds: Option<usize>,
    pub first_seed: u64,
    pub fraction: Option<f64>,
    /// The further fractions of the study; the exam's fractions (None: its default).
    pub fractions: Option<&'a [f64]>,
    pub pool_size: Option<u64>,
    pub queries: Option<usize>,
    pub bootstrap: Option<usize>,
    pub fit: FitMode,
    pub excess_centre: bool,
    pub out: &'a Path,
    pub json: Option<&'a Path>,
    /// No line per run on standard error.
    pub quiet: bool,
    pub exam: bool,
    /// Vector-level run files added to the exam as held-out rows.
    pub vector_runs: &'a [PathBuf],
    /// The command line, recorded in the report.
    pub command: String,
}

impl ValidateJob<'_> {
    /// The study's options: those given, the defaults for the others.
    pub fn options(&self) -> ValidationOptions {
        let d = ValidationOptions::default();
        ValidationOptions {
            presets: self.presets.map_or(d.presets, <[String]>::to_vec),
            seeds: self.seeds.unwrap_or(d.seeds),
            first_seed: self.first_seed,
            fraction: self.fraction.unwrap_or(d.fraction),
            fractions: self.fractions.map_or(d.fractions, <[f64]>::to_vec),
            pool_size: self.pool_size,
            queries: self.queries,
            bootstrap: self.bootstrap.unwrap_or(d.bootstrap),
            fit: self.fit,
            excess_centre: self.excess_centre,
            ..d
        }
    }

    /// The outputs are claimed before the study runs (hours at full size).
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        if self.list {
            console.out(&corpus_list());
            return Ok(());
        }
        let inputs: Vec<&Path> = self.vector_runs.iter().map(PathBuf::as_path).collect();
        let files = ValidationFiles::claim(self.out, self.json, &inputs)?;
        let opts = self.options();
        let mut progress = |r: &Run| {
            if !self.quiet {
                console.err(&run_line(r));
            }
        };
        if self.exam {
            let (tables, runs) = exam(&opts, self.fractions, self.vector_runs, &mut progress)?;
            console.out(&tables);
            files.write_exam(&tables, &runs)?;
        } else {
            let report = run_validation(&opts, &mut progress)?;
            console.out(&report.table());
            files.write(&report, &self.command)?;
        }
        console.out(&format!("report: {}\n", self.out.display()));
        if let Some(j) = self.json {
            console.out(&format!("runs:   {}\n", j.display()));
        }
        Ok(())
    }
}
