//! `tailrank simulate`: a benchmark with known truth, either at the summary level
//! (`--preset`, writes `DIR/summary` and `DIR/truth.json`) or as descriptor files (`--vectors`,
//! geometry `--geometry`); `--vectors --validate` runs the vector-level validation families
//! (files in `DIR`, truth from the whole-pool scan, predictions from hash samples).

use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use tailrank::formats::descriptors::Dtype;
use tailrank::simulate::vector_validation::{
    family, run_family, table, VectorRunOptions, VECTOR_FAMILIES,
};
use tailrank::simulate::vectors::{write_vectors, VectorConfig};
use tailrank::simulate::{simulate_summary, SimConfig};

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Output folder.
    #[arg(short, long)]
    pub out: PathBuf,
    /// Summary-level family of the validation corpus (`tailrank validate --list` names them).
    #[arg(long, default_value = "ilias-like", conflicts_with = "vectors")]
    pub preset: String,
    /// Write a clustered synthetic benchmark as descriptor files instead (.npy + ids + gt.json).
    #[arg(long)]
    pub vectors: bool,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Pool size N (presets: default 10^8; vectors: number of pool rows, default 50,000;
    /// --validate: the families' 2,000,000).
    #[arg(long)]
    pub pool_size: Option<u64>,
    /// Level-0 sampling fraction f of the summary (presets only; default 0.05).
    #[arg(long)]
    pub fraction: Option<f64>,
    /// Scale the preset down to this many queries.
    #[arg(long)]
    pub queries: Option<usize>,
    /// Vectors: geometry (clustered, burst, cone).
    #[arg(long, default_value = "clustered")]
    pub geometry: String,
    /// Vectors: descriptor dimension (default: the geometry's).
    #[arg(long)]
    pub dim: Option<usize>,
    /// Vectors: number of object instances (one query each, plus --extra-queries).
    #[arg(long, default_value_t = 40)]
    pub instances: usize,
    /// Vectors: extra queries on random instances.
    #[arg(long, default_value_t = 10)]
    pub extra_queries: usize,
    /// Vectors: element type of the .npy files.
    #[arg(long, default_value = "f16", value_parser = ["f16", "f32"])]
    pub dtype: String,
    /// Vectors: run the validation families instead (write each into --out, scan the whole
    /// pool for the truth, scan and predict the hash samples, print a table).
    #[arg(long, requires = "vectors")]
    pub validate: bool,
    /// Validation: comma-separated families (default: all).
    #[arg(long, value_delimiter = ',', requires = "validate")]
    pub family: Vec<String>,
    /// Validation: number of seeds (from --seed).
    #[arg(long, default_value_t = 1, requires = "validate")]
    pub seeds: u64,
    /// Validation: comma-separated sample fractions.
    #[arg(long, value_delimiter = ',', default_value = "0.05,0.01")]
    pub fractions: Vec<f64>,
    /// Validation: also write the runs as JSON here.
    #[arg(long, requires = "validate")]
    pub json: Option<PathBuf>,
}

fn validate(a: &SimulateArgs) -> anyhow::Result<()> {
    let families = if a.family.is_empty() {
        VECTOR_FAMILIES.iter().collect::<Vec<_>>()
    } else {
        a.family
            .iter()
            .map(|n| family(n))
            .collect::<tailrank::Result<Vec<_>>>()?
    };
    let opts = VectorRunOptions {
        fractions: a.fractions.clone(),
        pool_size: a.pool_size,
        dim: a.dim,
        ..VectorRunOptions::default()
    };
    let mut runs = Vec::new();
    for f in families {
        for seed in a.seed..a.seed + a.seeds {
            let t = std::time::Instant::now();
            let r = run_family(f, seed, &opts, &a.out)?;
            eprintln!(
                "tailrank simulate: {} seed {seed} done in {:.0} s",
                f.name,
                t.elapsed().as_secs_f64()
            );
            runs.extend(r);
        }
    }
    print!("{}", table(&runs));
    if let Some(j) = &a.json {
        let bytes = serde_json::to_vec_pretty(&runs)?;
        tailrank::atomic::write_bytes(j, &bytes)?;
    }
    Ok(())
}

pub fn run(a: SimulateArgs) -> anyhow::Result<()> {
    if a.validate {
        return validate(&a);
    }
    if a.vectors {
        let base = VectorConfig::for_geometry(&a.geometry)?;
        let mut cfg = VectorConfig {
            seed: a.seed,
            dim: a.dim.unwrap_or(base.dim),
            instances: a.instances,
            extra_queries: a.extra_queries,
            dtype: if a.dtype == "f32" {
                Dtype::F32
            } else {
                Dtype::F16
            },
            ..base
        };
        if let Some(n) = a.pool_size {
            cfg.pool_size = n;
        }
        if a.fraction.is_some() || a.queries.is_some() {
            anyhow::bail!("--fraction and --queries apply to --preset, not --vectors");
        }
        let b = write_vectors(&cfg, &a.out)?;
        println!(
            "wrote {} queries, {} core items, {} pool rows ({} burst/hub copies; {}, dim {}) to {}:",
            b.queries,
            b.core,
            b.pool,
            b.special_rows,
            cfg.geometry.name(),
            cfg.dim,
            a.out.display()
        );
        for f in &b.files {
            println!("  {}", a.out.join(f).display());
        }
        return Ok(());
    }
    let mut cfg = SimConfig::preset(&a.preset, a.seed)?;
    if let Some(n) = a.pool_size {
        cfg.pool_size = n;
        cfg.truth_pool_sizes.retain(|&m| m < n);
    }
    if let Some(f) = a.fraction {
        cfg.fraction = f;
    }
    if let Some(q) = a.queries {
        cfg = cfg.with_queries(q);
    }
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    let summary_dir = a.out.join("summary");
    let truth_path = a.out.join("truth.json");
    // The truth and the summary are replaced together (the truth first).
    let mut outputs = tailrank::atomic::Transaction::new(&[]);
    let truth_slot = outputs.add_file(&truth_path)?;
    let summary_slot = outputs.add_dir(&summary_dir)?;
    let sim = simulate_summary(&cfg)?;
    outputs.write(truth_slot, |p| sim.truth.write(p))?;
    outputs.write(summary_slot, |p| sim.summary.write(p))?;
    outputs.commit()?;
    let t = &sim.truth;
    println!(
        "simulated {:?} (seed {}): {} queries, {} positives, N = {}, S = {} (f = {})",
        cfg.preset,
        cfg.seed,
        sim.summary.queries.len(),
        sim.summary
            .queries
            .iter()
            .map(|q| q.positives.len())
            .sum::<usize>(),
        t.pool_size,
        t.sample_size,
        cfg.fraction
    );
    println!(
        "true mAP@{} at N: {:.2}%   (evaluate-at-S: {:.2}%)",
        t.k,
        100.0 * t.map_at_k,
        100.0 * t.levels[0].map_at_k
    );
    println!("summary: {}", summary_dir.display());
    println!("truth:   {}", truth_path.display());
    Ok(())
}
