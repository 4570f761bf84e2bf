//! Positional arguments shared by the corpus study examples (`next_step_validation`,
//! `projection_bound`, `projection_plugin`, `projection_law`, `projection_levels`,
//! `projection_ends`, `hit_at_1_readings`): a seed range and a family list.

use tailrank::simulate::corpus::CORPUS;

/// Positional argument `i` (1 = the first after the program name).
pub fn arg(i: usize) -> Option<String> {
    std::env::args().nth(i)
}

/// The seed range `FIRST..END` of argument `i`, `default` when it is absent.
pub fn seeds(i: usize, default: &str) -> std::ops::Range<u64> {
    let seeds = arg(i).unwrap_or_else(|| default.into());
    let (first, end) = seeds.split_once("..").expect("SEEDS as FIRST..END");
    first.parse().expect("FIRST_SEED")..end.parse().expect("END_SEED")
}

/// The comma-separated families of argument `i`, every corpus family when it is absent.
pub fn families(i: usize) -> Vec<String> {
    arg(i).map_or_else(
        || CORPUS.iter().map(|e| e.name.to_string()).collect(),
        |s| s.split(',').map(str::to_string).collect(),
    )
}

/// The positional arguments of a corpus study, `[FIRST_SEED..END_SEED [F [QUERIES
/// [FAMILIES]]]]`: the seeds, f, the queries and the families (defaults 0..3, 0.05, 300 and
/// every corpus family; the examples with other arguments do not use it).
#[allow(dead_code)]
pub fn study() -> (std::ops::Range<u64>, f64, usize, Vec<String>) {
    (
        seeds(1, "0..3"),
        arg(2).map_or(0.05, |s| s.parse().expect("F")),
        arg(3).map_or(300, |s| s.parse().expect("QUERIES")),
        families(4),
    )
}
