//! A scan from files to a summary folder, as `tailrank scan` runs it ([`ScanFiles::run`]):
//! the outputs are locked for the whole run and checked against every input (a concurrent
//! scan to the same output is refused; an output over an input is an error), the
//! [`ScanRequest`] resolves the query set and N, the pool is scanned chunk by chunk through
//! the partial folder `OUTPUT.partial/` ([`crate::scan::resume`]), and the results JSON and the
//! summary are written to staging paths and renamed together at the end (the results first,
//! the summary last), after which the partial folder is removed.

use super::engine::{Progress, ScanConfig};
use super::request::{listed_seed_note, sample_rows_note, ScanRequest};
use super::resume::{
    output_failed, partial_dir_for, remove_partial, scan_resumable, ResumeOptions, ResumeReport,
};
use crate::atomic::Transaction;
use crate::error::{Error, Result};
use crate::formats::descriptors::DescriptorSource;
use crate::formats::open_descriptors;
use crate::formats::results::write_results;
use crate::outputs::descriptor_inputs;
use crate::summary::Summary;
use std::path::{Path, PathBuf};

/// The files of one scan: descriptors (with their id files, when not the default siblings),
/// the ground truth, and the outputs.
#[derive(Debug, Clone)]
pub struct ScanFiles {
    pub queries: PathBuf,
    pub queries_ids: Option<PathBuf>,
    pub core: PathBuf,
    pub core_ids: Option<PathBuf>,
    /// Pool shards, scanned in this order.
    pub pool: Vec<PathBuf>,
    /// Id files of the pool shards: none (the default siblings) or one per shard, in order.
    pub pool_ids: Vec<PathBuf>,
    /// Ground truth (`formats::gt::load_ground_truth`).
    pub gt: PathBuf,
    /// The query set of the ground truth to scan (see [`ScanRequest`]).
    pub query_set: Option<String>,
    /// N, when given (see [`ScanRequest::pool_size`]).
    pub pool_size: Option<u64>,
    /// The summary folder written.
    pub output: PathBuf,
    /// The exact top-k results JSON written, if any (k = `ScanConfig::results_k`).
    pub results_out: Option<PathBuf>,
    /// Pool rows per chunk of the partial folder.
    pub chunk_rows: usize,
    /// Continue from an existing partial folder (without it, one is an error).
    pub resume: bool,
}

/// What a finished [`ScanFiles::run`] wrote and did.
#[derive(Debug, Clone)]
pub struct ScanFilesOutcome {
    /// The summary written to `output`.
    pub summary: Summary,
    /// Pool rows over all shards.
    pub pool_rows: u64,
    /// What a front end prints after the scan, one line each: what was reused from the
    /// partial folder and discarded in it ([`ResumeReport::notes`]), then, when they happened,
    /// the queries scanned a second time and the rows normalised
    /// ([`ScanOutput::notes`](super::engine::ScanOutput::notes)).
    pub notes: Vec<String>,
    /// What the rows kept say of the rows read, for a front end to print as warnings: none in
    /// the sample ([`sample_rows_note`]), or rows listed with another seed
    /// ([`listed_seed_note`]).
    pub warnings: Vec<String>,
    /// `ScanOutput::rescanned_queries` and `ScanOutput::renormalized_rows` of the scan.
    pub rescanned_queries: u64,
    pub renormalized_rows: u64,
}

impl ScanFiles {
    /// Refuse pool id files that do not pair one with each shard, chunks of no rows, and a
    /// results file inside the summary folder the scan replaces.
    pub fn check(&self) -> Result<()> {
        // (The same path for both is the transaction's "given twice".)
        let resolve = crate::outputs::resolve_output;
        if let Some(r) = self
            .results_out
            .as_ref()
            .filter(|r| resolve(r) != resolve(&self.output))
        {
            crate::outputs::refuse_inside(r, &self.output, "scan")?;
        }
        if !self.pool_ids.is_empty() && self.pool_ids.len() != self.pool.len() {
            return Err(Error::option(format!(
                "--pool-ids gives {} id files for {} --pool shards (give one per shard, in order)",
                self.pool_ids.len(),
                self.pool.len()
            )));
        }
        if self.chunk_rows == 0 {
            return Err(Error::option("--chunk-rows must be at least 1"));
        }
        Ok(())
    }

    /// Every input path: the ground truth, each descriptor file with its default id files,
    /// and the explicit id files. No output may be one of them.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut paths = vec![self.gt.clone()];
        for p in [&self.queries, &self.core].into_iter().chain(&self.pool) {
            paths.extend(descriptor_inputs(p));
        }
        paths.extend(self.queries_ids.iter().cloned());
        paths.extend(self.core_ids.iter().cloned());
        paths.extend(self.pool_ids.iter().cloned());
        paths
    }

    /// Scan with `cfg` (its `pool_size` is set from the request and the pool rows; with
    /// `results_out`, `cfg.results_k` must be set). `progress` is made once the pool's row
    /// count is known and dropped when the scan ends.
    pub fn run<P: Progress>(
        &self,
        mut cfg: ScanConfig,
        progress: impl FnOnce(u64) -> P,
    ) -> Result<ScanFilesOutcome> {
        let inputs = self.inputs();
        let input_refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        let mut outputs = Transaction::new(&input_refs);
        let results_slot = match &self.results_out {
            Some(p) => Some(outputs.add_file(p)?),
            None => None,
        };
        let summary_slot = outputs.add_dir(&self.output)?;

        let request =
            ScanRequest::from_ground_truth(&self.gt, self.query_set.as_deref(), self.pool_size)?;
        let queries = open_descriptors(&self.queries, self.queries_ids.as_deref())?;
        let core = open_descriptors(&self.core, self.core_ids.as_deref())?;
        let core_note = request.queries_in_core_note(core.as_ref())?;
        let pool: Vec<Box<dyn DescriptorSource>> = self
            .pool
            .iter()
            .enumerate()
            .map(|(i, p)| open_descriptors(p, self.pool_ids.get(i).map(PathBuf::as_path)))
            .collect::<Result<_>>()?;
        let pool_rows: u64 = pool.iter().map(|p| p.rows() as u64).sum();
        cfg.pool_size = request.pool_size_for(&cfg, pool_rows)?;

        let scan_inputs = request.inputs(
            queries.as_ref(),
            core.as_ref(),
            pool.iter().map(|p| p.as_ref()).collect(),
        );
        let partial_dir = partial_dir_for(&self.output);
        let ropts = ResumeOptions {
            partial_dir: partial_dir.clone(),
            chunk_rows: self.chunk_rows,
            resume: self.resume,
            store_last_chunk: false,
        };
        let bar = progress(pool_rows);
        let scanned = scan_resumable(&scan_inputs, &cfg, &ropts, &bar);
        drop(bar);
        let (out, resume) = scanned?;
        let (rescanned_queries, renormalized_rows) = (out.rescanned_queries, out.renormalized_rows);
        let scan_notes = out.notes();
        let request_notes = request.notes.clone();
        let written = (|| {
            let scanned = request.finish(out)?;
            if let (Some(slot), Some(lists)) = (results_slot, &scanned.results) {
                outputs.write(slot, |p| write_results(p, lists))?;
            }
            outputs.write(summary_slot, |p| scanned.summary.write(p))?;
            outputs.commit()?;
            Ok(scanned)
        })();
        let scanned = written.map_err(|e| output_failed(&partial_dir, e))?;
        remove_partial(&partial_dir)?;
        let pool_refs: Vec<&dyn DescriptorSource> = pool.iter().map(|p| p.as_ref()).collect();
        let mut warnings: Vec<String> = sample_rows_note(pool_rows, &scanned.summary)
            .into_iter()
            .collect();
        warnings.extend(listed_seed_note(&pool_refs, &scanned.summary)?);
        let mut notes = request_notes;
        notes.extend(core_note);
        notes.extend(resume.notes(&partial_dir));
        notes.extend(scan_notes);
        Ok(ScanFilesOutcome {
            summary: scanned.summary,
            pool_rows,
            notes,
            warnings,
            rescanned_queries,
            renormalized_rows,
        })
    }
}

impl ResumeReport {
    /// One line per discarded entry, one when `chunk_rows` was raised to the minimum and, when
    /// chunks were reused, one saying how many, for the partial folder `partial_dir` (what a
    /// front end prints after a resumed scan).
    pub fn notes(&self, partial_dir: &Path) -> Vec<String> {
        let dir = partial_dir.display();
        let mut notes: Vec<String> = self
            .discarded
            .iter()
            .map(|d| format!("discarded {dir}: {d}"))
            .collect();
        if let Some(asked) = self.chunk_rows_raised_from {
            notes.push(format!(
                "chunks of {asked} rows raised to the minimum of {} (each chunk is a pass and a \
                 folder of files of its own: smaller ones only slow the scan)",
                super::resume::MIN_CHUNK_ROWS
            ));
        }
        if self.reused > 0 {
            notes.push(format!(
                "resumed: {} chunk(s) reused from {dir}, {} scanned",
                self.reused, self.scanned
            ));
        }
        notes
    }
}
