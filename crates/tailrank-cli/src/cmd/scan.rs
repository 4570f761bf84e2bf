//! `tailrank scan`: one pass over query, core and pool descriptors into a scan summary
//! (`docs/reference/summary-format.md`), optionally with the exact top-k results JSON.
//!
//! The query set (`--query-set`), the pool size N (`--pool-size`) and the pairing of results
//! with query ids follow `tailrank::scan::request`; the outputs and the partial folder
//! `OUTPUT.partial/` (chunks of `--chunk-rows` rows, reused by `--resume` after a kill)
//! follow `tailrank::scan::job` and `tailrank::scan::resume`. The rules are the library's.

use clap::Args;
use std::path::PathBuf;
use tailrank::jobs::scan::ScanJob;
use tailrank::scan::config::{ScanOptions, DEFAULT_DRIFT_SHARDS, DEFAULT_TOP_M};
use tailrank::scan::job::ScanFiles;

/// Arguments of `tailrank scan` (boxed: they are large next to the other subcommands').
#[derive(Args, Debug)]
pub struct ScanArgs {
    #[command(flatten)]
    pub opts: Box<ScanOpts>,
}

#[derive(Args, Debug)]
pub struct ScanOpts {
    /// Query descriptors (.npy with ids, or ILIAS HDF5).
    #[arg(long)]
    pub queries: PathBuf,
    /// Core descriptors: every positive of every query, plus the other core images.
    #[arg(long)]
    pub core: PathBuf,
    /// Ground truth: an ILIAS-layout folder or a JSON {query_id: [positive ids]}.
    #[arg(long)]
    pub gt: PathBuf,
    /// Pool (distractor) descriptor shards.
    #[arg(long, required = true, num_args = 1..)]
    pub pool: Vec<PathBuf>,
    /// Output summary folder (replaced atomically if it exists).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Query set of the ground truth to scan (required when it holds several, e.g. image|text).
    #[arg(long)]
    pub query_set: Option<String>,
    /// Id file of the query .npy (default: sibling `<stem>.ids.txt` / `<stem>_ids.txt`).
    #[arg(long)]
    pub queries_ids: Option<PathBuf>,
    /// Id file of the core .npy.
    #[arg(long)]
    pub core_ids: Option<PathBuf>,
    /// Id files of the pool .npy shards, one per --pool, in the same order.
    #[arg(long, num_args = 1..)]
    pub pool_ids: Vec<PathBuf>,
    #[command(flatten)]
    pub sample: PoolSampleArgs,
    /// Scan only the sample increment t(AFTER) <= hash < t(f) into a part summary, for
    /// `tailrank grow` (every pool row must lie in it; `tailrank sample --after` lists them).
    #[arg(allow_negative_numbers = true, long, requires = "fraction")]
    pub after: Option<f64>,
    /// Smallest nesting level fraction (levels f, f/2, ... down to it; default f/16).
    #[arg(allow_negative_numbers = true, long)]
    pub min_fraction: Option<f64>,
    /// Size N of the full pool (default: the number of pool rows when f = 1).
    #[arg(long)]
    pub pool_size: Option<u64>,
    /// M: top pool scores kept per query and subset (`predict --fit-top` fits at most these).
    #[arg(long, default_value_t = DEFAULT_TOP_M)]
    pub top_m: usize,
    /// Disjoint hash shards of the sample, for the drift check.
    #[arg(long, default_value_t = DEFAULT_DRIFT_SHARDS)]
    pub drift_shards: usize,
    /// Model name recorded in the summary.
    #[arg(long, default_value = "")]
    pub model: String,
    /// Also write the exact top-k lists over core ∪ scanned pool (ILIAS results JSON).
    #[arg(long)]
    pub results_out: Option<PathBuf>,
    /// k of --results-out.
    #[arg(long, default_value_t = tailrank::metric::DEFAULT_K)]
    pub k: usize,
    #[command(flatten)]
    pub run: ScanRunArgs,
    /// Do not start the top-M lists from pilot floors (pilot stages of one block in 64 and
    /// one in 16 scanned first). The floors are verified, so the output is the same; this only
    /// turns the speed-up off. The integer screen runs only in stages that start from floors,
    /// so this turns the screen off too.
    #[arg(long)]
    pub no_speculate: bool,
    /// Compute every score in f32 instead of bounding the scores with the integer screen
    /// first (the stages after the pilots compute the f32 score only where the bound passes
    /// the cut). The output is bitwise the same; this only turns the speed-up off.
    #[arg(long)]
    pub no_screen: bool,
    /// Continue an interrupted scan from its partial folder `OUTPUT.partial/` (finished chunks
    /// are reused after checking that inputs and options are unchanged).
    #[arg(long)]
    pub resume: bool,
    /// Pool rows per chunk (small files share one): each chunk's summary is saved in
    /// `OUTPUT.partial/` as soon as it is scanned, so an interrupted scan loses at most one
    /// chunk. Fewer than 32 rows are raised to 32, with a note.
    #[arg(long, default_value_t = tailrank::scan::resume::DEFAULT_CHUNK_ROWS)]
    pub chunk_rows: usize,
}

/// The hash sample of the pool, shared by `scan` and `ilias`.
#[derive(Args, Debug, Clone, Copy)]
pub struct PoolSampleArgs {
    /// Level-0 sampling fraction f of the pool (1 = exact: everything scanned).
    #[arg(allow_negative_numbers = true, long, default_value_t = tailrank::scan::config::DEFAULT_FRACTION)]
    pub fraction: f64,
    /// Hash seed of the sample.
    #[arg(long, default_value_t = tailrank::sample::DEFAULT_SEED)]
    pub seed: u64,
}

/// How a scan runs on its rows, shared by `scan` and `ilias`.
#[derive(Args, Debug, Clone, Copy)]
pub struct ScanRunArgs {
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// L2-normalise descriptors that are not unit-norm instead of refusing them.
    #[arg(long)]
    pub normalize: bool,
}

impl PoolSampleArgs {
    /// The scan options `options` with this sample and `run`'s threads and normalisation.
    pub fn options(&self, run: ScanRunArgs, options: ScanOptions) -> ScanOptions {
        ScanOptions {
            fraction: self.fraction,
            seed: self.seed,
            threads: run.threads,
            normalize: run.normalize,
            ..options
        }
    }
}

pub fn run(args: ScanArgs) -> anyhow::Result<()> {
    let args = *args.opts;
    let results_k = args.results_out.as_ref().map(|_| args.k);
    let files = ScanFiles {
        queries: args.queries,
        queries_ids: args.queries_ids,
        core: args.core,
        core_ids: args.core_ids,
        pool: args.pool,
        pool_ids: args.pool_ids,
        gt: args.gt,
        query_set: args.query_set,
        pool_size: args.pool_size,
        output: args.output,
        results_out: args.results_out,
        chunk_rows: args.chunk_rows,
        resume: args.resume,
    };
    let options = args.sample.options(
        args.run,
        ScanOptions {
            after: args.after,
            min_fraction: args.min_fraction,
            top_m: args.top_m,
            drift_shards: args.drift_shards,
            results_k,
            speculate: !args.no_speculate,
            screen: !args.no_screen,
            model: args.model,
            ..ScanOptions::default()
        },
    );
    let tuning = |k: &str| std::env::var(k).ok();
    Ok(ScanJob { files, options }.run(tuning, &mut super::Terminal)?)
}
