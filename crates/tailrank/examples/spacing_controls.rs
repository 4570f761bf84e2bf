//! Exploration of the top-spacing test's calibration (docs/notes/2026-12-06-spacing-centre.md):
//! for each corpus family and seed, simulated at 2f as `next_step_validation` does, the level-0
//! top lists of the cuts at 2f, f and f/2 (levels 0, 1, 2), one CSV row per tested query:
//! `family,held_out,seed,f,level,query,xi,above,x1,…,x8,x50` — ξ̂ of the test's GPD fit (the 50
//! largest sample scores over `x₅₁`, as `predict::spacing_test` fits it), whether `x₁` outranks
//! the top positive, and the scores the spacings `R_k = (x_k − x_{k+1})/(x_{k+1} − x₅₀)` need.
//!
//! Usage: `spacing_controls FIRST_SEED..END_SEED F [QUERIES [FAMILIES]]`.
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
#[allow(dead_code)] // the runs' prediction options are not needed here
mod runs;
use tailrank::predict::next_step::level_summary;
use tailrank::predict::spacing_test::{self, SPACING_N as N};

fn main() {
    let (seeds, f, queries, families) = args::study();
    println!("family,held_out,seed,f,level,query,xi,above,x1,x2,x3,x4,x5,x6,x7,x8,x50");
    for run in runs::doubled_runs(&families, seeds, queries, f) {
        for level in 0..3 {
            let s = level_summary(&run.sim.summary, level).expect("level");
            let f_level = 2.0 * f / f64::powi(2.0, level as i32);
            for (qi, q) in s.queries.iter().enumerate() {
                let Some(top) = q.top_scores.first() else {
                    continue;
                };
                let Some(xi) = spacing_test::tail_xi(top) else {
                    continue;
                };
                let above = q.positives.first().is_some_and(|p| top[0] > p.score);
                let xs: Vec<String> = top[..8]
                    .iter()
                    .chain(std::iter::once(&top[N - 1]))
                    .map(|x| x.to_string())
                    .collect();
                println!(
                    "{},{},{},{f_level},{level},{qi},{:.4},{},{}",
                    run.family,
                    run.held_out,
                    run.seed,
                    xi,
                    u8::from(above),
                    xs.join(",")
                );
            }
        }
    }
}
