//! Options of a scan ([`ScanConfig`], each default stated once here) and the subsets they
//! define ([`subsets`], docs/method.md §5).

use crate::error::{Error, Result};
use crate::sample::{check_fraction, HashRange};
use crate::scan::kernel::Backend;
use crate::scan::screen::ScreenIsa;
pub use crate::summary::shard_top_m;
use crate::summary::{Subset, SubsetKind};

/// Default M, the top pool scores kept per query and subset (the CLI's `scan --top-m`; the
/// tail fit's default, `EvtOptions::DEFAULT.top_m`, fits all of them).
pub const DEFAULT_TOP_M: usize = 4000;
/// Largest M accepted: a list's length is stored as a 32-bit integer (`top_len.npy`). Any M
/// up to it costs only what is stored: a list never holds more than its subset's items, so
/// the reservoirs are sized by `min(M, S_0)` and the summary pads to `min(M, max_ℓ S_ℓ)`.
pub const MAX_TOP_M: usize = u32::MAX as usize;

/// Check M (`1 ≤ M ≤` [`MAX_TOP_M`]) before anything is allocated for it.
pub fn check_top_m(m: usize) -> Result<()> {
    if m == 0 {
        return Err(Error::option("top-M must be at least 1"));
    }
    if m > MAX_TOP_M {
        return Err(Error::option(format!(
            "top-M = {m} is beyond the largest M a summary can store ({MAX_TOP_M}: list \
             lengths are 32-bit); an M above the number of pool rows keeps every row anyway, so \
             give at most the pool size"
        )));
    }
    Ok(())
}
/// Most worker threads accepted (`--threads`): far above any machine's cores, low enough
/// that a typo (an extra digit or two) is an error instead of minutes spent starting threads.
pub const MAX_THREADS: usize = 1024;

/// Check the worker thread count (`1 ≤ threads ≤` [`MAX_THREADS`], or unset).
pub fn check_threads(threads: Option<usize>) -> Result<()> {
    match threads {
        Some(0) => Err(Error::option("threads must be at least 1, got 0")),
        Some(n) if n > MAX_THREADS => Err(Error::option(format!(
            "threads = {n} is more than {MAX_THREADS}: give at most the number of cores (the \
             default uses them all)"
        ))),
        _ => Ok(()),
    }
}
/// Default sampling fraction of a scan: 1, exact mode (the whole pool scanned).
pub const DEFAULT_FRACTION: f64 = 1.0;
/// Default number of drift shards.
pub const DEFAULT_DRIFT_SHARDS: usize = 4;
/// Default number of nested levels (`min_fraction = f / 2^(levels-1)`).
pub const DEFAULT_LEVELS: usize = 5;
/// At most this many nested levels.
pub const MAX_LEVELS: usize = 32;
/// At most this many drift shards.
pub const MAX_SHARDS: usize = 256;
/// Pool rows per GEMM block (the `n` of every `Q × n × D` product). Tuned on Zen 3 (AVX2/FMA),
/// see `docs/reference/performance.md`.
pub const BLOCK_ROWS: usize = 512;

/// Options of a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanConfig {
    /// Level-0 sampling fraction f in (0, 1]; 1 is exact mode.
    pub fraction: f64,
    /// Scan only the sample increment `[t(after), t(f))` into a part summary
    /// ([`increment_subsets`]); every pool row must lie in it. `None`: the whole sample.
    pub after: Option<f64>,
    /// Hash seed of the sample (docs/method.md §4).
    pub seed: u64,
    /// Nested levels are `f, f/2, f/4, …` while `≥ min_fraction` (level 0 always).
    pub min_fraction: f64,
    /// Number of disjoint drift shards of the level-0 sample (0: none). Kept in exact mode too.
    pub drift_shards: usize,
    /// M, top pool scores kept per query and subset.
    pub top_m: usize,
    /// When set, also return the top-k `(id, score)` over core ∪ scanned pool per query.
    pub results_k: Option<usize>,
    /// Worker threads (None: the current rayon pool).
    pub threads: Option<usize>,
    /// L2-normalise rows instead of refusing rows that are not unit-norm.
    pub normalize: bool,
    /// Model name recorded in the summary.
    pub model: String,
    /// Size N of the full pool, recorded in the summary.
    pub pool_size: Option<u64>,
    /// Scan the pool in stages (pilots of one block in 64 and one in 16, then the rest), each
    /// starting its top-M reservoirs from floors estimated on the stages before
    /// ([`speculate`](super::speculate)); the floors are verified, so the result is the same
    /// either way (only the time differs).
    pub speculate: bool,
    /// In the stages that start from floors, bound every score with the integer screen and
    /// compute the f32 score only where the bound passes the cut
    /// ([`screen`](super::screen)); the result is bitwise the same either way. Ignored
    /// where the screen is unavailable (no AVX2 + FMA, the `gemm` kernel, `D > 2048`).
    ///
    /// The screen works only in stages that start from floors: without `speculate` there are
    /// none, so `speculate = false` scores every pair in f32 whatever `screen` says.
    pub screen: bool,
    /// Pool rows per GEMM block ([`BLOCK_ROWS`] by default; a tuning knob, read from
    /// `TAILRANK_BLOCK_ROWS` by the front ends). The AVX2 kernel rounds it up to a multiple of
    /// 16. Scores do not depend on it on the AVX2 kernel; the `gemm` backend's last bits may.
    pub block_rows: usize,
    /// Score kernel backend; `None` picks the fastest this CPU supports ([`Backend::detect`]).
    /// The front ends set `Some(Backend::Gemm)` for `TAILRANK_KERNEL=gemm`.
    pub backend: Option<Backend>,
    /// Widest instruction set of the screen's integer product; `None` (the default) runs the
    /// widest this CPU has ([`ScreenIsa::detect`]). Every one gives the same bounds bitwise;
    /// a tuning knob for benchmarks (`TAILRANK_SCREEN`).
    pub screen_isa: Option<ScreenIsa>,
}

impl ScanConfig {
    /// Defaults for a sample at `fraction`: 5 levels (`min_fraction = f/16`), 4 drift shards,
    /// M = 4000, no results, all threads, no normalisation, speculation and screen on, blocks
    /// of [`BLOCK_ROWS`], the detected kernel.
    pub fn new(fraction: f64, seed: u64) -> Self {
        ScanConfig {
            fraction,
            after: None,
            seed,
            min_fraction: fraction / (1u64 << (DEFAULT_LEVELS - 1)) as f64,
            drift_shards: DEFAULT_DRIFT_SHARDS,
            top_m: DEFAULT_TOP_M,
            results_k: None,
            threads: None,
            normalize: false,
            model: String::new(),
            pool_size: None,
            speculate: true,
            screen: true,
            block_rows: BLOCK_ROWS,
            backend: None,
            screen_isa: None,
        }
    }
}

impl Default for ScanConfig {
    /// Exact mode ([`DEFAULT_FRACTION`]), the default hash seed.
    fn default() -> Self {
        ScanConfig::new(DEFAULT_FRACTION, crate::sample::DEFAULT_SEED)
    }
}

/// A scan's options as the front ends take them (`tailrank scan`, `tailrank ilias`, Python
/// `tailrank.scan`): each default stated once ([`ScanOptions::default`]), checked and turned
/// into a [`ScanConfig`] once ([`ScanOptions::config`]). Fields as in [`ScanConfig`];
/// `min_fraction: None` is `f/16` ([`DEFAULT_LEVELS`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ScanOptions {
    pub fraction: f64,
    pub seed: u64,
    pub after: Option<f64>,
    pub min_fraction: Option<f64>,
    pub top_m: usize,
    pub drift_shards: usize,
    pub results_k: Option<usize>,
    pub threads: Option<usize>,
    pub normalize: bool,
    pub speculate: bool,
    pub screen: bool,
    pub model: String,
}

impl Default for ScanOptions {
    /// [`ScanConfig::default`]'s values: exact mode (f = 1), seed 0, M = [`DEFAULT_TOP_M`].
    fn default() -> Self {
        let c = ScanConfig::default();
        ScanOptions {
            fraction: c.fraction,
            seed: c.seed,
            after: c.after,
            min_fraction: None,
            top_m: c.top_m,
            drift_shards: c.drift_shards,
            results_k: c.results_k,
            threads: c.threads,
            normalize: c.normalize,
            speculate: c.speculate,
            screen: c.screen,
            model: c.model,
        }
    }
}

impl ScanOptions {
    /// The scan's configuration: the fraction ([`check_fraction`]), M ([`check_top_m`]) and
    /// the k of the results ([`check_k`]) checked, then the tuning knobs applied as `tuning`
    /// gives them ([`ScanConfig::apply_tuning`]; the front ends pass the process environment).
    /// The rest is checked by the scan.
    pub fn config(&self, tuning: impl Fn(&str) -> Option<String>) -> Result<ScanConfig> {
        check_fraction(self.fraction)?;
        check_top_m(self.top_m)?;
        if let Some(k) = self.results_k {
            check_k(k)?;
        }
        let base = ScanConfig::new(self.fraction, self.seed);
        let mut cfg = ScanConfig {
            after: self.after,
            min_fraction: self.min_fraction.unwrap_or(base.min_fraction),
            top_m: self.top_m,
            drift_shards: self.drift_shards,
            results_k: self.results_k,
            threads: self.threads,
            normalize: self.normalize,
            speculate: self.speculate,
            screen: self.screen,
            model: self.model.clone(),
            ..base
        };
        cfg.apply_tuning(tuning)?;
        Ok(cfg)
    }
}

/// Check a cut-off k (of mAP@k or of the results' top-k lists): `k ≥ 1`.
pub fn check_k(k: usize) -> Result<()> {
    if k == 0 {
        return Err(Error::option("k must be at least 1"));
    }
    Ok(())
}

/// The subsets of a scan: nesting levels `ℓ = 0, 1, …` with fraction `f/2^ℓ ≥ min_fraction`
/// (hash ranges `[0, t(f/2^ℓ))`, level 0 always present, at most [`MAX_LEVELS`]), then
/// `drift_shards` disjoint, adjacent, equal hash slices of `[0, t(f))` (fraction `f/H`).
/// Shards are kept in exact mode (f = 1) too: there they split the whole pool, which makes
/// drift checks of the exact scan possible. Levels keep the top `top_m` scores per query,
/// shards the top [`shard_top_m`].
pub fn subsets(
    fraction: f64,
    min_fraction: f64,
    drift_shards: usize,
    top_m: usize,
) -> Result<Vec<Subset>> {
    let f = check_fraction(fraction)?;
    if !(min_fraction.is_finite() && min_fraction > 0.0 && min_fraction <= f) {
        return Err(Error::option(format!(
            "minimum level fraction must be in (0, f = {f:?}], got {min_fraction:?}"
        )));
    }
    let mut out = Vec::new();
    let mut level_f = f;
    // Relative slack so that f/16 with min_fraction = f/16 is kept despite rounding.
    while level_f >= min_fraction * (1.0 - 1e-12) {
        if out.len() == MAX_LEVELS {
            return Err(Error::option(format!(
                "more than {MAX_LEVELS} nested levels between f = {f} and {min_fraction}"
            )));
        }
        out.push(Subset {
            kind: SubsetKind::Level,
            fraction: level_f,
            range: HashRange::fraction(level_f)?,
            top_m: None,
        });
        level_f /= 2.0;
    }
    if drift_shards > 0 {
        if drift_shards > MAX_SHARDS {
            return Err(Error::option(format!(
                "at most {MAX_SHARDS} drift shards, got {drift_shards}"
            )));
        }
        let whole = HashRange::fraction(f)?;
        for range in whole.split(drift_shards as u64) {
            out.push(Subset {
                kind: SubsetKind::Shard,
                fraction: f / drift_shards as f64,
                range,
                top_m: Some(shard_top_m(top_m, drift_shards)),
            });
        }
    }
    Ok(out)
}

/// The subsets of a scan of the sample increment `[t(after), t(f))` (a *part*, grown into
/// the sample at f by [`Summary::grow`](crate::summary::Summary::grow)): each subset of the
/// whole scan at f ([`subsets`]) clipped to the increment, empty ones dropped and equal ones
/// kept once. Level 0 is the increment itself, then the levels `[t(after), t(f/2^ℓ))` for
/// `f/2^ℓ > after`, then the pieces of the drift shards that meet the increment (keeping the
/// shards' `top_m`). Each subset's `fraction` is its range's width over 2^64.
pub fn increment_subsets(
    after: f64,
    fraction: f64,
    min_fraction: f64,
    drift_shards: usize,
    top_m: usize,
) -> Result<Vec<Subset>> {
    let part = HashRange::increment(after, fraction)?;
    let mut out: Vec<Subset> = Vec::new();
    for s in subsets(fraction, min_fraction, drift_shards, top_m)? {
        let Some(range) = part.intersect(&s.range) else {
            continue;
        };
        if out.iter().any(|o| o.range == range && o.kind == s.kind) {
            continue;
        }
        out.push(Subset {
            fraction: range.width_fraction(),
            range,
            ..s
        });
    }
    Ok(out)
}

/// The subsets a scan with `cfg` collects: [`subsets`], or [`increment_subsets`] with
/// `cfg.after`.
pub fn scan_subsets(cfg: &ScanConfig) -> Result<Vec<Subset>> {
    match cfg.after {
        Some(after) => increment_subsets(
            after,
            cfg.fraction,
            cfg.min_fraction,
            cfg.drift_shards,
            cfg.top_m,
        ),
        None => subsets(cfg.fraction, cfg.min_fraction, cfg.drift_shards, cfg.top_m),
    }
}

impl ScanConfig {
    /// Rows per block as given, at least 1.
    pub(crate) fn rows_per_block(&self) -> usize {
        self.block_rows.max(1)
    }

    /// The kernel backend: the one asked for, else the detected one.
    pub(crate) fn kernel_backend(&self) -> Backend {
        self.backend.unwrap_or_else(Backend::detect)
    }
}

/// The environment variable of [`ScanConfig::block_rows`] (pool rows per block).
pub const ENV_BLOCK_ROWS: &str = "TAILRANK_BLOCK_ROWS";
/// The environment variable of [`ScanConfig::backend`] (`gemm`: the portable kernel; `auto`).
pub const ENV_KERNEL: &str = "TAILRANK_KERNEL";
/// The environment variable of [`ScanConfig::screen_isa`] (`avx2`, `avx512`, `amx`; `auto`).
pub const ENV_SCREEN: &str = "TAILRANK_SCREEN";

impl ScanConfig {
    /// Apply the tuning knobs [`ENV_BLOCK_ROWS`], [`ENV_KERNEL`] and [`ENV_SCREEN`] as `lookup`
    /// gives them (the
    /// front ends pass the process environment; the library never reads it). A value that does
    /// not parse is an error naming the variable.
    pub fn apply_tuning(&mut self, lookup: impl Fn(&str) -> Option<String>) -> Result<()> {
        if let Some(v) = lookup(ENV_BLOCK_ROWS) {
            self.block_rows = v.parse().ok().filter(|&n: &usize| n > 0).ok_or_else(|| {
                Error::option(format!(
                    "{ENV_BLOCK_ROWS} = {v:?} is not a positive number of rows"
                ))
            })?;
        }
        if let Some(v) = lookup(ENV_KERNEL) {
            self.backend = match v.to_ascii_lowercase().as_str() {
                "gemm" => Some(Backend::Gemm),
                "" | "auto" => None,
                _ => {
                    return Err(Error::option(format!(
                        "{ENV_KERNEL} = {v:?}: expected gemm or auto"
                    )))
                }
            };
        }
        if let Some(v) = lookup(ENV_SCREEN) {
            let name = v.to_ascii_lowercase();
            self.screen_isa = match name.as_str() {
                "" | "auto" => None,
                _ => Some(ScreenIsa::from_name(&name).ok_or_else(|| {
                    Error::option(format!(
                        "{ENV_SCREEN} = {v:?}: expected avx2, avx512, amx or auto"
                    ))
                })?),
            };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuned(pairs: &[(&str, &str)]) -> Result<ScanConfig> {
        let mut cfg = ScanConfig::default();
        cfg.apply_tuning(|k| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string()))?;
        Ok(cfg)
    }

    #[test]
    fn increment_subsets_clip_the_direct_scans() {
        let part = increment_subsets(0.025, 0.1, 0.1 / 16.0, 4, 40).unwrap();
        let inc = HashRange::increment(0.025, 0.1).unwrap();
        // Level 0 = the increment, then [t(0.025), t(0.05)); then the shards meeting it: the
        // first shard [0, t(0.1)/4) ends exactly at t(0.025), so three pieces remain.
        let ranges: Vec<(SubsetKind, u64, u64)> = part
            .iter()
            .map(|s| (s.kind, s.range.lo, s.range.hi))
            .collect();
        let t = |f: f64| crate::sample::threshold(f).unwrap();
        let whole = HashRange::fraction(0.1).unwrap().split(4);
        assert_eq!(
            ranges,
            vec![
                (SubsetKind::Level, inc.lo, inc.hi),
                (SubsetKind::Level, inc.lo, t(0.05)),
                (SubsetKind::Shard, whole[1].lo, whole[1].hi),
                (SubsetKind::Shard, whole[2].lo, whole[2].hi),
                (SubsetKind::Shard, whole[3].lo, whole[3].hi),
            ]
        );
        assert!(part[2..].iter().all(|s| s.top_m == Some(10)));
        assert_eq!(part[0].fraction, inc.width_fraction());
        assert!(increment_subsets(0.1, 0.1, 0.01, 4, 40).is_err());
    }

    #[test]
    fn tuning_knobs_parse_or_name_the_variable() {
        let cfg = tuned(&[]).unwrap();
        assert_eq!(
            (cfg.block_rows, cfg.backend, cfg.screen_isa),
            (BLOCK_ROWS, None, None)
        );
        let cfg = tuned(&[
            (ENV_BLOCK_ROWS, "256"),
            (ENV_KERNEL, "GEMM"),
            (ENV_SCREEN, "avx512"),
        ])
        .unwrap();
        assert_eq!(cfg.block_rows, 256);
        assert_eq!(cfg.backend, Some(Backend::Gemm));
        assert_eq!(cfg.screen_isa, Some(ScreenIsa::Avx512Vnni));
        assert_eq!(tuned(&[(ENV_SCREEN, "auto")]).unwrap().screen_isa, None);
        for (var, bad) in [
            (ENV_BLOCK_ROWS, "0"),
            (ENV_KERNEL, "blas"),
            (ENV_SCREEN, "sse"),
        ] {
            let e = tuned(&[(var, bad)]).unwrap_err().to_string();
            assert!(e.contains(var) && e.contains(bad), "{e}");
        }
    }
}
