//! `tailrank sample`, `scan`, `merge` and `grow`: the hash sample of a pool's ids
//! ([`SampleJob`]), and the summary folders scanned from descriptor files ([`ScanJob`]),
//! merged from disjoint shards ([`MergeJob`]) and grown by the increment of a sample
//! ([`GrowJob`]), each with the line saying what it wrote.

use super::Console;
use crate::atomic::Transaction;
use crate::error::Result;
use crate::report::written::{grow_written, merge_written, sample_written, scan_written};
use crate::sample::write_sample;
use crate::scan::config::ScanOptions;
use crate::scan::job::ScanFiles;
use crate::summary::Summary;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `tailrank sample`: the ids of `ids` hashed into the sample at `fraction` (only the
/// increment over `after`, when given) with `seed`, written to `out` with its manifest
/// ([`write_sample`]).
#[derive(Debug, Clone)]
pub struct SampleJob<'a> {
    pub ids: &'a Path,
    pub fraction: f64,
    pub after: Option<f64>,
    pub seed: u64,
    pub out: &'a Path,
}

impl SampleJob<'_> {
    /// Prints the line of what was kept ([`sample_written`]) on the report's side.
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        let m = write_sample(self.ids, self.fraction, self.after, self.seed, self.out)?;
        console.out(&format!("{}\n", sample_written(&m, self.out)));
        Ok(())
    }
}

/// One scan from files, as `tailrank scan` is asked for it.
#[derive(Debug, Clone)]
pub struct ScanJob {
    pub files: ScanFiles,
    pub options: ScanOptions,
}

impl ScanJob {
    /// Check the files ([`ScanFiles::check`]) and the options ([`ScanOptions::config`], the
    /// tuning knobs read through `tuning`), scan ([`ScanFiles::run`], the console's progress
    /// over the pool's rows), then print the scan's notes and the line of what was written
    /// (with the seconds since the job started) as `tailrank scan: …` lines.
    pub fn run(
        &self,
        tuning: impl Fn(&str) -> Option<String>,
        console: &mut dyn Console,
    ) -> Result<()> {
        let started = Instant::now();
        self.files.check()?;
        let cfg = self.options.config(tuning)?;
        let out = self
            .files
            .run(cfg, |rows| console.progress("scan", Some(rows)))?;
        for note in &out.notes {
            console.err(&format!("tailrank scan: {note}"));
        }
        for w in &out.warnings {
            console.warn(w);
        }
        let secs = started.elapsed().as_secs_f64();
        let line = scan_written(&out, self.files.pool.len(), &self.files.output, secs);
        console.err(&format!("tailrank scan: {line}"));
        Ok(())
    }
}

/// `tailrank merge`: the summary folders `inputs` of disjoint pool shards merged
/// ([`Summary::merge_folders`]) into the folder `output`, never over an input.
#[derive(Debug, Clone)]
pub struct MergeJob<'a> {
    pub inputs: &'a [PathBuf],
    pub output: &'a Path,
}

impl MergeJob<'_> {
    /// The output claimed before the inputs are read; the line of what was written
    /// ([`merge_written`]) after it is in place.
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        let inputs: Vec<&Path> = self.inputs.iter().map(PathBuf::as_path).collect();
        let mut outputs = Transaction::new(&inputs);
        let slot = outputs.add_dir(self.output)?;
        let merged = Summary::merge_folders(self.inputs, |w| console.warn(&w))?;
        outputs.write(slot, |p| merged.write(p))?;
        outputs.commit()?;
        let line = merge_written(self.inputs.len(), self.output, &merged);
        console.err(&format!("tailrank merge: {line}"));
        Ok(())
    }
}

/// `tailrank grow`: the summary folder `base` of a sample grown by the summary `part` of its
/// increment ([`Summary::grow_folders`]) into the folder `output`, never over an input.
#[derive(Debug, Clone)]
pub struct GrowJob<'a> {
    pub base: &'a Path,
    pub part: &'a Path,
    pub output: &'a Path,
}

impl GrowJob<'_> {
    /// Warns when the grown summary's tie counts are unknown
    /// ([`Summary::ties_unknown_warning`]).
    pub fn run(&self, console: &mut dyn Console) -> Result<()> {
        let mut outputs = Transaction::new(&[self.base, self.part]);
        let slot = outputs.add_dir(self.output)?;
        let grown = Summary::grow_folders(self.base, self.part, |w| console.warn(&w))?;
        if let Some(w) = grown.ties_unknown_warning() {
            console.err(&format!("tailrank grow: warning: {w}"));
        }
        outputs.write(slot, |p| grown.write(p))?;
        outputs.commit()?;
        console.err(&format!(
            "tailrank grow: {}",
            grow_written(self.output, &grown)
        ));
        Ok(())
    }
}
