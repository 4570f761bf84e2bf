//! The runs of the corpus study examples of the next step's projection (`next_step_validation`,
//! `projection_bound`, `projection_plugin`, `projection_law`, `projection_levels`,
//! `projection_ends`): each family and seed simulated at 2f as a scan at 2f sees it (one more
//! level, twice the drift shards: `SimConfig::doubled_from`), with the prediction options at
//! the simulation's pool size N.

use std::ops::Range;
use tailrank::predict::PredictOptions;
use tailrank::simulate::corpus::{self, summary_config};
use tailrank::simulate::{simulate_summary, Simulation};

/// One family and seed: the simulation at 2f and the options to predict from it.
pub struct Run<'a> {
    pub family: &'a str,
    /// Whether the family is held out of tuning (docs/reference/validation.md).
    pub held_out: bool,
    pub seed: u64,
    pub sim: Simulation,
    pub opts: PredictOptions,
}

/// The runs of `families` × `seeds` (families outer), `queries` queries each, simulated at
/// `2f`; each is simulated when the iterator reaches it.
pub fn doubled_runs(
    families: &[String],
    seeds: Range<u64>,
    queries: usize,
    f: f64,
) -> impl Iterator<Item = Run<'_>> {
    families.iter().flat_map(move |family| {
        let held_out = corpus::entry(family).expect("family").held_out;
        seeds.clone().map(move |seed| {
            let cfg = summary_config(family, seed)
                .expect("family")
                .with_queries(queries)
                .doubled_from(f);
            let sim = simulate_summary(&cfg).expect("simulate");
            let opts = PredictOptions {
                k: cfg.k,
                seed,
                pool_size: Some(sim.truth.pool_size),
                ..PredictOptions::default()
            };
            Run {
                family,
                held_out,
                seed,
                sim,
                opts,
            }
        })
    })
}
