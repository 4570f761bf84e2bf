//! The reports of `tailrank demo` (the prediction from a simulated sample next to the known
//! truth) and of `tailrank simulate` (what was written).

use crate::predict::Prediction;
use crate::simulate::vectors::{VectorBenchmark, VectorConfig};
use crate::simulate::{SimConfig, Simulation, SimulationFiles, Truth};
use std::fmt::Write as _;
use std::path::Path;

/// A fraction as percent, two decimals, right-aligned in 6 characters.
fn pct6(x: f64) -> String {
    format!("{:6.2}", 100.0 * x)
}

/// The line announcing the demo's simulation (printed before it runs).
pub fn demo_header(cfg: &SimConfig) -> String {
    format!(
        "simulating an ILIAS-like benchmark (seed {}): {} queries, N = {} distractors, {}% sample ...\n",
        cfg.seed,
        cfg.queries,
        cfg.pool_size,
        100.0 * cfg.fraction
    )
}

/// The demo's report: the prediction table, then the prediction and every baseline against
/// the realized truth (errors in points), Recall@k and hit@1 against theirs, and the files.
pub fn demo_table(t: &Truth, p: &Prediction, files: &SimulationFiles) -> String {
    let mut s = super::prediction_table(p);
    let k = t.k;
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "known truth: realized mAP@{k} of the full pool (N = {}) = {}%",
        t.pool_size,
        pct6(t.map_at_k).trim()
    );
    let _ = writeln!(
        s,
        "{:<34} {:>9} {:>10}",
        "",
        format!("@{k} (%)"),
        "error (%)"
    );
    let _ = writeln!(
        s,
        "{:<34} {:>9}",
        "TRUE mAP (realized at N)",
        pct6(t.map_at_k)
    );
    let covered = p.percentile.lo <= t.map_at_k && t.map_at_k <= p.percentile.hi;
    let interval = match p.percentile.lo.is_nan() {
        true => "no interval over query sets (no query bootstrap)".to_string(),
        false => format!(
            "{} interval over query sets [{}, {}] {} the truth",
            super::confidence_label(p.options.confidence),
            pct6(p.percentile.lo).trim(),
            pct6(p.percentile.hi).trim(),
            if covered { "covers" } else { "misses" }
        ),
    };
    let _ = writeln!(
        s,
        "{:<34} {:>9} {:>+10.2}   {interval}",
        format!(
            "PREDICTED ({}{}, {})",
            p.options.estimator_name(),
            match p.options.fit {
                crate::predict::FitMode::LevelSelected => " level-selected",
                crate::predict::FitMode::Fixed => "",
            },
            match p.options.map {
                crate::maps::MapKind::ExpectedRank => "ER",
                crate::maps::MapKind::Binomial => "binomial",
            }
        ),
        pct6(p.estimate),
        100.0 * (p.estimate - t.map_at_k),
    );
    let b = &p.baselines;
    let other_fit = match p.options.fit {
        crate::predict::FitMode::LevelSelected => "baseline: the paper's fit (fixed)",
        crate::predict::FitMode::Fixed => "baseline: level-selected fit",
    };
    let rows: [(&str, Option<f64>); 5] = [
        (other_fit, p.other_fit_estimate()),
        ("baseline: evaluate-at-S", Some(b.evaluate_at_s)),
        ("baseline: count hardness", Some(b.count)),
        ("baseline: power-law fit", b.power_law),
        ("baseline: log-linear fit", b.log_linear),
    ];
    for (name, v) in rows {
        let _ = match v {
            Some(v) => writeln!(
                s,
                "{:<34} {:>9} {:>+10.2}",
                name,
                pct6(v),
                100.0 * (v - t.map_at_k)
            ),
            None => writeln!(s, "{name:<34} {:>9}", "n/a"),
        };
    }
    let (truth_recall, truth_hit) = t.recall_and_hit();
    let _ = writeln!(s);
    let _ = writeln!(s, "{:<34} {:>9} {:>10}", "", "truth (%)", "error (%)");
    for (name, pred, truth) in [
        (format!("PREDICTED Recall@{k}"), p.recall_at_k, truth_recall),
        ("PREDICTED hit@1".to_string(), p.hit_at_1, truth_hit),
    ] {
        let _ = writeln!(
            s,
            "{:<34} {:>9} {:>+10.2}   (predicted {}%)",
            name,
            pct6(truth),
            100.0 * (pred - truth),
            pct6(pred).trim()
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "files:");
    let _ = writeln!(s, "  summary     {}", files.summary.display());
    let _ = writeln!(s, "  truth       {}", files.truth.display());
    let _ = writeln!(s, "  prediction  {}", files.prediction.display());
    let _ = writeln!(
        s,
        "re-run the prediction with: {}",
        super::rerun_command(p, &files.summary)
    );
    s
}

/// What `tailrank simulate --preset` wrote: the benchmark's size, its true mAP@k at N next to
/// evaluate-at-S, and the files.
pub fn simulation_report(cfg: &SimConfig, sim: &Simulation, files: &SimulationFiles) -> String {
    let t = &sim.truth;
    let mut s = String::new();
    let _ = writeln!(
        s,
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
        super::fraction(cfg.fraction)
    );
    let _ = writeln!(
        s,
        "true mAP@{} at N: {:.2}%   (evaluate-at-S: {:.2}%)",
        t.k,
        100.0 * t.map_at_k,
        100.0 * t.levels[0].map_at_k
    );
    let _ = writeln!(s, "summary: {}", files.summary.display());
    let _ = writeln!(s, "truth:   {}", files.truth.display());
    s
}

/// What `tailrank simulate --vectors` wrote into `dir`: the row counts and every file.
pub fn vectors_report(cfg: &VectorConfig, b: &VectorBenchmark, dir: &Path) -> String {
    let mut s = format!(
        "wrote {} queries, {} core items, {} pool rows ({} burst/hub copies; {}, dim {}) to {}:\n",
        b.queries,
        b.core,
        b.pool,
        b.special_rows,
        cfg.geometry.name(),
        cfg.dim,
        dir.display()
    );
    for f in &b.files {
        let _ = writeln!(s, "  {}", dir.join(f).display());
    }
    s
}
