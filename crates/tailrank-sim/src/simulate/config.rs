//! What defines a simulated summary-level benchmark ([`SimConfig`]) and the ILIAS-like
//! starting point of every family of the validation corpus.

use super::corpus;
use super::discrete::{BurstModel, HubModel, RareModel};
use super::families::TailModel;
use super::hardness_law::HardnessLaw;
use crate::error::{Error, Result};
use crate::sample::check_fraction;
use crate::scan::config::{DEFAULT_DRIFT_SHARDS, DEFAULT_LEVELS, DEFAULT_TOP_M};
use serde::{Deserialize, Serialize};

/// Everything that defines a simulated benchmark. Same config ⇒ same output, bit for bit,
/// whatever the number of threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub preset: String,
    pub seed: u64,
    /// Number of object instances; each has `1 + Poisson(mean_positives − 1)` positives.
    pub instances: usize,
    /// Number of queries; every instance gets one, the rest go to distinct random instances
    /// (queries of one instance share its positives).
    pub queries: usize,
    pub mean_positives: f64,
    /// N, the full pool size.
    pub pool_size: u64,
    /// f, the level-0 sampling fraction.
    pub fraction: f64,
    /// Number of nesting levels (f, f/2, …, f/2^(levels−1)).
    pub levels: usize,
    /// Number of drift shards (disjoint equal hash slices of the sample; 0 for none).
    pub shards: usize,
    /// M, the top pool scores kept per query and subset.
    pub top_m: usize,
    /// k of the truth mAP@k.
    pub k: usize,
    pub tails: TailModel,
    pub hardness: HardnessLaw,
    /// γ: a non-relevant core item outranks positive j with probability `min(1, γ·x_j)`.
    pub core_hardness: f64,
    /// Extra pool sizes (between S and N) at which the truth curve is realized, nested.
    pub truth_pool_sizes: Vec<u64>,
    /// Near-duplicate bursts ([`discrete`]); none in the presets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bursts: Option<BurstModel>,
    /// Hubs shared across queries ([`discrete`]); none in the presets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hubs: Option<HubModel>,
    /// Rare items above every positive ([`discrete`]); none in the presets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rare: Option<RareModel>,
}

/// Refuse a pool of `pool_size` items whose sample at `fraction` is empty on average
/// (`f·N < 1`): the rule of every simulator, before anything is generated.
pub fn check_sample_not_empty(pool_size: u64, fraction: f64) -> Result<()> {
    if fraction * (pool_size as f64) < 1.0 {
        return Err(Error::option(format!(
            "pool size {pool_size} with fraction {fraction} leaves an empty sample"
        )));
    }
    Ok(())
}

impl SimConfig {
    /// A named family of the validation corpus ([`corpus::CORPUS`], which includes the presets
    /// `ilias-like` and `mixture-tail`) with the given seed.
    pub fn preset(name: &str, seed: u64) -> Result<SimConfig> {
        corpus::summary_config(name, seed)
    }

    /// The ILIAS-like benchmark every summary family starts from: 1,232 queries over 1,000
    /// instances, ~4,700 positives, N = 10^8, f = 5%, M = 4000, levels f … f/16, 4 drift
    /// shards, k = 1000; GPD-like per-query tails ([`TailModel::Families`]) and the preset
    /// hardness law ([`HardnessLaw::PRESET`]).
    pub fn ilias_like(name: &str, seed: u64) -> SimConfig {
        SimConfig {
            preset: name.to_string(),
            seed,
            instances: 1000,
            queries: 1232,
            mean_positives: 4.7,
            pool_size: 100_000_000,
            fraction: 0.05,
            // What a default scan keeps, at the default cut-off.
            levels: DEFAULT_LEVELS,
            shards: DEFAULT_DRIFT_SHARDS,
            top_m: DEFAULT_TOP_M,
            k: crate::metric::DEFAULT_K,
            tails: TailModel::Families {
                weights: [0.4, 0.4, 0.2],
                xi_range: [-0.5, -0.05],
                kumaraswamy_a: [1.2, 2.0],
                endpoint: [0.45, 0.75],
            },
            hardness: HardnessLaw::PRESET,
            core_hardness: 10.0,
            truth_pool_sizes: vec![10_000_000, 20_000_000, 50_000_000],
            bursts: None,
            hubs: None,
            rare: None,
        }
    }

    /// Scale the benchmark down to `queries` queries (instances scaled in proportion, at least
    /// one while there is a query). Zero queries is kept, for [`SimConfig::check`] to refuse.
    pub fn with_queries(mut self, queries: usize) -> Self {
        let ratio = self.instances as f64 / self.queries.max(1) as f64;
        self.queries = queries;
        self.instances = ((queries as f64 * ratio).round() as usize).clamp(1, queries.max(1));
        self
    }

    /// The sample at `2f` that nests the sample at `f`: fraction `2f`, one more level and twice
    /// the drift shards, so that its level-1 cut (`predict::next_step::level_summary`) is the
    /// sample at `f` with the shards a scan at `f` has. What the next step's projection is
    /// checked on (docs/reference/validation.md, "The next step's projection").
    pub fn doubled_from(mut self, f: f64) -> Self {
        self.fraction = 2.0 * f;
        self.levels += 1;
        self.shards *= 2;
        self
    }

    /// Simulate a pool of `pool_size` items instead; the truth curve keeps only the pool sizes
    /// below it.
    pub fn with_pool_size(mut self, pool_size: u64) -> Self {
        self.pool_size = pool_size;
        self.truth_pool_sizes.retain(|&m| m < pool_size);
        self
    }

    /// Refuse a configuration no simulation can run (no query, a fraction outside (0, 1], an
    /// empty sample, …), with the reason.
    pub fn check(&self) -> Result<()> {
        check_fraction(self.fraction)?;
        let bad = |m: String| Err(Error::option(m));
        if self.queries == 0 {
            return bad("simulation needs at least one query (got 0)".into());
        }
        if self.instances == 0 {
            return bad("simulation needs at least one object instance (got 0)".into());
        }
        if self.levels == 0 || self.levels > 20 {
            return bad(format!("levels must be in 1..=20, got {}", self.levels));
        }
        if self.top_m == 0 || self.k == 0 {
            return bad("top_m and k must be positive".into());
        }
        if self.pool_size > 1 << 53 {
            // Counts and ranks are carried in f64: above 2^53 they are no longer exact integers
            // (N = 2^64 − 1 printed a true mAP of -0.00%).
            return bad(format!(
                "pool size {} is above 2^53 = 9007199254740992, the largest the simulator's \
                 f64 counts hold exactly",
                self.pool_size
            ));
        }
        if self.pool_size < 2 {
            return bad(format!(
                "pool size {}: the simulator needs a pool of at least 2 items",
                self.pool_size
            ));
        }
        check_sample_not_empty(self.pool_size, self.fraction)?;
        if self.mean_positives.is_nan() || self.mean_positives < 1.0 {
            return bad("mean_positives must be at least 1".into());
        }
        if let Some(r) = &self.rare {
            let share_ok = r.share > 0.0 && r.share <= 1.0;
            let rate_ok = r.rate >= 0.0 && r.rate.is_finite();
            let above_ok = r.above[0] > 0.0 && r.above[0] <= r.above[1];
            if !(share_ok && rate_ok && above_ok) {
                return bad(format!(
                    "rare items need a share in (0, 1], a finite rate >= 0 and 0 < above[0] <= \
                     above[1] (got share {}, rate {}, above {:?})",
                    r.share, r.rate, r.above
                ));
            }
        }
        self.check_memory()
    }

    /// Bytes the simulation holds at its peak, from above: per query its top lists (4 bytes
    /// per kept score, `Σ_ℓ min(M_ℓ, E S_ℓ)` with `E S_ℓ = f·N/2^ℓ` on levels, `f·N/H` and
    /// ⌈M/H⌉ on shards), its positives (`mean_positives` × (16 bytes per subset of counts and
    /// ties + 600 for ids, truth and its JSON)) and 1 KiB of per-query records; per instance
    /// its positives' ids (64 bytes each); all of it × 1.25 (allocator slack), plus 64 MB for
    /// the process itself. (3,000 ILIAS-like queries: 0.44 GB estimated, 0.31 GB peak RSS.)
    pub fn memory_estimate(&self) -> f64 {
        let sample = self.fraction * self.pool_size as f64;
        let m = self.top_m as f64;
        let levels: f64 = (0..self.levels)
            .map(|l| m.min(sample / 2f64.powi(l as i32)))
            .sum();
        let shards = match self.shards {
            0 => 0.0,
            h => h as f64 * (m / h as f64).ceil().min(sample / h as f64),
        };
        let subsets = (self.levels + self.shards) as f64;
        let per_query =
            4.0 * (levels + shards) + self.mean_positives * (16.0 * subsets + 600.0) + 1024.0;
        let data =
            self.queries as f64 * per_query + self.instances as f64 * self.mean_positives * 64.0;
        1.25 * data + 64e6
    }

    /// Refuse a simulation whose [`SimConfig::memory_estimate`] exceeds the memory available
    /// ([`available_memory`]) before anything is allocated or written; no check where the
    /// available memory is unknown.
    fn check_memory(&self) -> Result<()> {
        let need = self.memory_estimate();
        match available_memory() {
            Some(have) if need > have as f64 => Err(Error::option(format!(
                "simulating {} queries (M = {}, {} subsets, {:.1} positives per query) needs \
                 about {:.1} GB of memory, more than is available: give fewer queries \
                 (--queries) or a smaller M",
                self.queries,
                self.top_m,
                self.levels + self.shards,
                self.mean_positives,
                need / 1e9
            ))),
            _ => Ok(()),
        }
    }
}

/// Bytes of memory this process may still take: `MemAvailable` of `/proc/meminfo`, lowered
/// to the room left under a cgroup-v2 limit (`memory.max − memory.current` of
/// `/sys/fs/cgroup`) when there is one; `None` where neither can be read (not Linux).
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb.saturating_mul(1024))
    });
    let read = |name: &str| {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{name}"))
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    let cgroup =
        read("memory.max").map(|max| max.saturating_sub(read("memory.current").unwrap_or(0)));
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
