//! Validation of the next step's width projection (docs/reference/validation.md, "The next step's
//! projection"): for each corpus family and seed, simulate the summary at 2f with one more
//! level and twice the drift shards, cut it to level 1 (the nested sample at f, with H shards
//! of f/H as a scan at f has), project the realized width at 2f from that cut
//! (`predict::next_step::width_scaling`) and compare with the width predicted from the whole
//! 2f summary. Prints one CSV row per run:
//! `family,held_out,seed,f,w_f,w_half,ratio,projected_2f,measured_2f,rel_error,within_30,verdict_f`.
//!
//! Usage: `next_step_validation [SEEDS [F [QUERIES [FAMILIES]]]]` (defaults 3, 0.05, 300, every
//! corpus family; FAMILIES comma-separated).
use tailrank::predict::next_step::{level_summary, width_scaling};
use tailrank::predict::{predict_without_next_step, PredictOptions};
use tailrank::simulate::corpus::{summary_config, CORPUS};
use tailrank::simulate::simulate_summary;

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let seeds: u64 = arg(1).map_or(3, |s| s.parse().expect("SEEDS"));
    let f: f64 = arg(2).map_or(0.05, |s| s.parse().expect("F"));
    let queries: usize = arg(3).map_or(300, |s| s.parse().expect("QUERIES"));
    let families: Vec<String> = arg(4).map_or_else(
        || CORPUS.iter().map(|e| e.name.to_string()).collect(),
        |s| s.split(',').map(str::to_string).collect(),
    );
    println!(
        "family,held_out,seed,f,w_f,w_half,ratio,projected_2f,measured_2f,rel_error,within_30,verdict_f"
    );
    for fam in &families {
        let held_out = CORPUS.iter().any(|e| e.name == fam && e.held_out);
        for seed in 0..seeds {
            let mut cfg = summary_config(fam, seed)
                .expect("family")
                .with_queries(queries);
            cfg.fraction = 2.0 * f;
            cfg.levels += 1;
            cfg.shards *= 2;
            let sim = simulate_summary(&cfg).expect("simulate");
            let s2 = sim.summary;
            let s1 = level_summary(&s2, 1).expect("level 1");
            let opts = PredictOptions {
                k: cfg.k,
                seed,
                pool_size: Some(sim.truth.pool_size),
                ..PredictOptions::default()
            };
            let p1 = predict_without_next_step(&s1, &opts).expect("predict at f");
            let p2 = predict_without_next_step(&s2, &opts).expect("predict at 2f");
            let w = width_scaling(&s1, &p1, &opts).expect("scaling");
            let measured = p2.realized.map_or(f64::NAN, |r| r.width());
            let (wf, wh, ratio, proj) = match w {
                Some(w) => (w.width, w.width_half, w.ratio(), w.projected(1)),
                None => (f64::NAN, f64::NAN, f64::NAN, f64::NAN),
            };
            let rel = proj / measured - 1.0;
            println!(
                "{fam},{held_out},{seed},{f},{:.5},{:.5},{:.3},{:.5},{:.5},{:+.3},{},{}",
                wf,
                wh,
                ratio,
                proj,
                measured,
                rel,
                rel.abs() <= 0.3,
                p1.trust.verdict.as_str()
            );
        }
    }
}
