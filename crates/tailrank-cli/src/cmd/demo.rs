//! `tailrank demo`: simulate an ILIAS-like benchmark (known truth), predict mAP@1k at N = 10^8
//! from its 5% sample, and compare the prediction and the baselines with the truth.

use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use tailrank::predict::{predict, PredictOptions};
use tailrank::report;
use tailrank::simulate::{simulate_summary, SimConfig};

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Seed of the simulation and of the bootstrap.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Folder for the simulated summary, the truth and the prediction.
    #[arg(long, short, default_value = "tailrank-demo")]
    pub out: PathBuf,
    /// Query-bootstrap replicates.
    #[arg(long, default_value_t = 1000)]
    pub bootstrap: usize,
    /// Sample-noise replicates (Poisson reweighting of the sample, tails refitted).
    #[arg(long, default_value_t = 20)]
    pub sample_noise: usize,
    /// Scale the benchmark down to this many queries (default: the full 1,232).
    #[arg(long)]
    pub queries: Option<usize>,
}

fn pct(x: f64) -> String {
    format!("{:6.2}", 100.0 * x)
}

pub fn run(a: DemoArgs) -> anyhow::Result<()> {
    let mut cfg = SimConfig::preset("ilias-like", a.seed)?;
    if let Some(q) = a.queries {
        cfg = cfg.with_queries(q);
    }
    println!(
        "simulating an ILIAS-like benchmark (seed {}): {} queries, N = {} distractors, {}% sample ...",
        a.seed,
        cfg.queries,
        cfg.pool_size,
        100.0 * cfg.fraction
    );
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    let summary_dir = a.out.join("summary");
    let truth_path = a.out.join("truth.json");
    let pred_path = a.out.join("prediction.json");
    // The three outputs are replaced together (the summary last).
    let mut outputs = tailrank::atomic::Transaction::new(&[]);
    let truth_slot = outputs.add_file(&truth_path)?;
    let pred_slot = outputs.add_file(&pred_path)?;
    let summary_slot = outputs.add_dir(&summary_dir)?;
    let sim = simulate_summary(&cfg)?;

    let opts = PredictOptions {
        k: cfg.k,
        bootstrap: a.bootstrap,
        sample_noise: a.sample_noise,
        seed: a.seed,
        ..PredictOptions::default()
    };
    let p = predict(&sim.summary, &opts)?;
    let json = serde_json::to_vec_pretty(&report::prediction_json(&p))?;
    outputs.write(truth_slot, |p| sim.truth.write(p))?;
    outputs.write(pred_slot, |p| tailrank::atomic::write_bytes(p, &json))?;
    outputs.write(summary_slot, |p| sim.summary.write(p))?;
    outputs.commit()?;
    print!("{}", report::prediction_table(&p));

    let t = &sim.truth;
    let k = t.k;
    println!();
    println!(
        "known truth: realized mAP@{k} of the full pool (N = {}) = {}%",
        t.pool_size,
        pct(t.map_at_k).trim()
    );
    println!("{:<34} {:>9} {:>10}", "", format!("@{k} (%)"), "error (%)");
    println!("{:<34} {:>9}", "TRUE mAP (realized at N)", pct(t.map_at_k));
    let covered = p.percentile.lo <= t.map_at_k && t.map_at_k <= p.percentile.hi;
    println!(
        "{:<34} {:>9} {:>+10.2}   {:.0}% interval [{}, {}] {} the truth",
        "PREDICTED (evt, expected-rank)",
        pct(p.estimate),
        100.0 * (p.estimate - t.map_at_k),
        100.0 * opts.confidence,
        pct(p.percentile.lo).trim(),
        pct(p.percentile.hi).trim(),
        if covered { "covers" } else { "misses" }
    );
    let b = &p.baselines;
    let rows: [(&str, Option<f64>); 4] = [
        ("baseline: evaluate-at-S", Some(b.evaluate_at_s)),
        ("baseline: count hardness", Some(b.count)),
        ("baseline: power-law fit", b.power_law),
        ("baseline: log-linear fit", b.log_linear),
    ];
    for (name, v) in rows {
        match v {
            Some(v) => println!(
                "{:<34} {:>9} {:>+10.2}",
                name,
                pct(v),
                100.0 * (v - t.map_at_k)
            ),
            None => println!("{name:<34} {:>9}", "n/a"),
        }
    }
    let (truth_recall, truth_hit) = t.recall_and_hit();
    println!();
    println!("{:<34} {:>9} {:>10}", "", "truth (%)", "error (%)");
    for (name, pred, truth) in [
        (format!("PREDICTED Recall@{k}"), p.recall_at_k, truth_recall),
        ("PREDICTED hit@1".to_string(), p.hit_at_1, truth_hit),
    ] {
        println!(
            "{:<34} {:>9} {:>+10.2}   (predicted {}%)",
            name,
            pct(truth),
            100.0 * (pred - truth),
            pct(pred).trim()
        );
    }
    println!();
    println!("files:");
    println!("  summary     {}", summary_dir.display());
    println!("  truth       {}", truth_path.display());
    println!("  prediction  {}", pred_path.display());
    println!(
        "re-run the prediction with: tailrank predict --summary {}",
        summary_dir.display()
    );
    Ok(())
}
