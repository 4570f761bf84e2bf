//! Times the scan engine (used by `scripts/bench_vs_faiss.py` and for the memory check in
//! `docs/reference/performance.md`).
//!
//! ```text
//! scan_bench npy DIR [options]      DIR: queries.npy core.npy pool.npy (+ <stem>.ids.txt) gt.json
//! scan_bench synth Q D N [options]  synthetic unit vectors generated on the fly (no pool in RAM)
//! options: --fraction F (1) --levels L (5) --shards H (4) --top-m M (4000) --threads T --seed S
//!          --no-speculate (no pilot floors, see `scan::speculate`) --no-screen (f32 for every
//!          pair, see `scan::screen`)
//! ```
//!
//! Prints one JSON line: wall seconds of the scan, rows scanned, effective GFLOP/s
//! (2·Q·S·D / s) and the peak anonymous memory (RssAnon, sampled every 20 ms) during the scan
//! above what the inputs held before it.

#[path = "support/paired.rs"]
mod paired;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;
use tailrank::formats::descriptors::{DescriptorSource, Dtype, SourceInfo};
use tailrank::formats::gt::QuerySet;
use tailrank::formats::npy::NpyDescriptors;
use tailrank::scan::engine::{scan, NoProgress, ScanConfig, ScanInputs};
use tailrank::{Error, Result};

/// User + system CPU seconds of this process (from /proc/self/stat, clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // Fields 14 and 15 of stat (utime, stime) are items 11 and 12 after the command name.
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}

fn rss_anon_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("RssAnon:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Pseudo-random unit vectors, row `i` generated from `(seed, i)`; optionally `base` rows
/// mixed in (positives near queries).
struct Synth {
    ids: Vec<String>,
    info: SourceInfo,
    seed: u64,
    near: Option<(Box<Synth>, usize)>,
}

impl Synth {
    fn new(label: &str, prefix: &str, rows: usize, dim: usize, seed: u64) -> Self {
        let ids: Vec<String> = (0..rows).map(|i| format!("{prefix}{i:09}")).collect();
        Synth {
            info: SourceInfo {
                path: label.into(),
                dim,
                dtype: Dtype::F32,
                ids: tailrank::formats::RowIds::from_strings(label, ids.clone()),
            },
            ids,
            seed,
            near: None,
        }
    }

    fn raw(&self, row: usize, out: &mut [f32]) {
        let mut s = (self.seed ^ (row as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1;
        for v in out.iter_mut() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            *v = (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
        }
        if let Some((base, every)) = &self.near {
            let mut b = vec![0f32; self.dim()];
            base.raw(row / every, &mut b);
            for (v, x) in out.iter_mut().zip(b) {
                *v = 0.6 * *v + 2.0 * x;
            }
        }
        let n = out.iter().map(|v| v * v).sum::<f32>().sqrt();
        out.iter_mut().for_each(|v| *v /= n);
    }
}

impl DescriptorSource for Synth {
    fn info(&self) -> &SourceInfo {
        &self.info
    }
    fn read_rows(&self, start: usize, out: &mut [f32]) -> Result<()> {
        for (i, row) in out.chunks_exact_mut(self.dim()).enumerate() {
            self.raw(start + i, row);
        }
        Ok(())
    }
    fn digest(&self) -> String {
        format!("synthetic:{}", self.seed)
    }
}

fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = || Error::option("usage: scan_bench npy DIR | synth Q D N [options]");
    let mode = args.get(1).ok_or_else(usage)?.as_str();
    let num = |name: &str, default: f64| -> f64 {
        opt(&args, name).map_or(default, |v| v.parse().expect("number"))
    };
    let f = num("--fraction", 1.0);
    let mut cfg = ScanConfig::new(f, num("--seed", 0.0) as u64);
    // Tuning knobs, as the CLI reads them.
    cfg.apply_tuning(|k| std::env::var(k).ok())
        .expect("tuning variables");
    cfg.min_fraction = f / 2f64.powi(num("--levels", 5.0) as i32 - 1);
    cfg.drift_shards = num("--shards", 4.0) as usize;
    cfg.top_m = num("--top-m", 4000.0) as usize;
    cfg.threads = opt(&args, "--threads").map(|t| t.parse().expect("threads"));
    cfg.speculate = !args.iter().any(|a| a == "--no-speculate");
    cfg.screen = !args.iter().any(|a| a == "--no-screen");

    type Src = Box<dyn DescriptorSource>;
    let (queries, core, pool, qs): (Src, Src, Src, QuerySet) = match mode {
        "npy" => {
            let dir = PathBuf::from(args.get(2).ok_or_else(usage)?);
            let open = |n: &str| NpyDescriptors::open(&dir.join(n), None);
            let gt: std::collections::BTreeMap<String, Vec<String>> = serde_json::from_str(
                &std::fs::read_to_string(dir.join("gt.json")).map_err(|e| Error::io(&dir, e))?,
            )
            .map_err(|e| Error::option(e.to_string()))?;
            let qs = QuerySet {
                name: "queries".into(),
                query_ids: gt.keys().cloned().collect(),
                positives: gt.values().cloned().collect(),
            };
            (
                Box::new(open("queries.npy")?),
                Box::new(open("core.npy")?),
                Box::new(open("pool.npy")?),
                qs,
            )
        }
        "synth" => {
            let p = |i: usize| -> usize { args.get(i).ok_or_else(usage).unwrap().parse().unwrap() };
            let (nq, d, n) = (p(2), p(3), p(4));
            let queries = Synth::new("synth-queries", "q/", nq, d, 1);
            let mut core = Synth::new("synth-core", "core/", 2 * nq, d, 2);
            core.near = Some((Box::new(Synth::new("", "", nq, d, 1)), 2));
            let qs = paired::paired_query_set("queries", &queries.ids, &core.ids);
            let pool = Synth::new("synth-pool", "pool/", n, d, 3);
            (Box::new(queries), Box::new(core), Box::new(pool), qs)
        }
        _ => return Err(usage()),
    };

    let before = rss_anon_kb();
    let peak = AtomicU64::new(before);
    let done = AtomicBool::new(false);
    let inputs = ScanInputs {
        query_set: &qs,
        queries: queries.as_ref(),
        core: core.as_ref(),
        pool: vec![pool.as_ref()],
    };
    let (out, secs) = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_anon_kb(), Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
        let (t, c) = (Instant::now(), cpu_seconds());
        let out = scan(&inputs, &cfg, &NoProgress);
        let secs = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
        done.store(true, Ordering::Relaxed);
        (out, secs)
    });
    let out = out?;
    let scanned = out.summary.subset_sizes[0];
    let (nq, d) = (qs.query_ids.len(), queries.dim());
    let flops = 2.0 * nq as f64 * (scanned + core.rows() as u64) as f64 * d as f64;
    println!(
        "{{\"seconds\": {:.3}, \"cpu_seconds\": {:.3}, \"queries\": {nq}, \"dim\": {d}, \
         \"pool_rows\": {}, \"rows_scanned\": {scanned}, \"gflops\": {:.1}, \
         \"gflop_per_cpu_s\": {:.1}, \"peak_extra_anon_mb\": {:.0}, \"rescanned_queries\": {}, \
         \"screened_pairs\": {}, \"rescored_pairs\": {}, \"top1_q0\": {}}}",
        secs.0,
        secs.1,
        pool.rows(),
        flops / secs.0 / 1e9,
        flops / secs.1 / 1e9,
        (peak.load(Ordering::Relaxed).saturating_sub(before)) as f64 / 1024.0,
        out.rescanned_queries,
        out.screened_pairs,
        out.rescored_pairs,
        out.summary.queries[0].top_scores[0]
            .first()
            .copied()
            .unwrap_or(f32::NAN)
    );
    Ok(())
}
