//! What `tailrank simulate` is asked for, checked once: a summary-level preset (`--preset`), a
//! vector benchmark written as descriptor files (`--vectors`), or the vector-level validation
//! (`--vectors --validate`), with the options each mode reads; an option the chosen mode
//! would ignore is refused.

use super::vector_validation::{StreamTiming, VectorRun};
use super::vectors::VectorConfig;
use super::SimConfig;
use crate::error::{Error, Result};
use crate::formats::descriptors::Dtype;

/// The options of a simulation as a front end receives them (None: the mode's default).
#[derive(Debug, Clone, Default)]
pub struct SimulateRequest {
    /// Summary-level family of the validation corpus.
    pub preset: String,
    /// Descriptor files instead of a summary.
    pub vectors: bool,
    /// The vector-level validation families instead (needs `vectors`).
    pub validate: bool,
    pub seed: u64,
    pub pool_size: Option<u64>,
    /// Presets: the level-0 sampling fraction and the number of queries.
    pub fraction: Option<f64>,
    pub queries: Option<usize>,
    /// The options of `vectors` alone.
    pub vector: VectorOptions,
    /// Whether a prediction option (the fit, the move to the centre) was given: only the
    /// validation predicts.
    pub prediction_options: bool,
}

/// The options that only a vector benchmark (`--vectors`) reads (None: the geometry's
/// default).
#[derive(Debug, Clone, Default)]
pub struct VectorOptions {
    pub geometry: Option<String>,
    pub dim: Option<usize>,
    pub instances: Option<usize>,
    pub extra_queries: Option<usize>,
    /// Element type of the .npy files (`f16`, `f32`).
    pub dtype: Option<String>,
}

impl VectorOptions {
    /// Whether any option is given.
    fn any(&self) -> bool {
        self.geometry.is_some()
            || self.dim.is_some()
            || self.instances.is_some()
            || self.extra_queries.is_some()
            || self.dtype.is_some()
    }
}

impl SimulateRequest {
    /// Refuse options that the chosen mode would ignore.
    pub fn check(&self) -> Result<()> {
        if self.validate && !self.vectors {
            return Err(Error::option(
                "--validate runs the vector-level families and needs --vectors; the \
                 summary-level families (--preset) are validated by `tailrank validate`",
            ));
        }
        if !self.vectors && self.vector.any() {
            return Err(Error::option(
                "--geometry, --dim, --instances, --extra-queries and --dtype apply to \
                 --vectors, not to a --preset simulation",
            ));
        }
        if !self.validate && self.prediction_options {
            return Err(Error::option(
                "--fit and --(no-)excess-centre apply to --vectors --validate (a simulation \
                 writes files and predicts nothing; give them to `tailrank predict` on its \
                 summary)",
            ));
        }
        Ok(())
    }

    /// The vector benchmark: the geometry's defaults with the options given.
    pub fn vector_config(&self) -> Result<VectorConfig> {
        let v = &self.vector;
        let base = VectorConfig::for_geometry(
            v.geometry
                .as_deref()
                .unwrap_or(VectorConfig::default().geometry.name()),
        )?;
        if self.fraction.is_some() || self.queries.is_some() {
            return Err(Error::option(
                "--fraction and --queries apply to --preset, not --vectors",
            ));
        }
        Ok(VectorConfig {
            seed: self.seed,
            dim: v.dim.unwrap_or(base.dim),
            instances: v.instances.unwrap_or(base.instances),
            extra_queries: v.extra_queries.unwrap_or(base.extra_queries),
            dtype: match v.dtype.as_deref() {
                Some("f32") => Dtype::F32,
                Some(_) => Dtype::F16,
                None => base.dtype,
            },
            pool_size: self.pool_size.unwrap_or(base.pool_size),
            ..base
        })
    }

    /// The summary-level benchmark: the preset with the options given.
    pub fn sim_config(&self) -> Result<SimConfig> {
        let mut cfg = SimConfig::preset(&self.preset, self.seed)?;
        if let Some(n) = self.pool_size {
            cfg = cfg.with_pool_size(n);
        }
        if let Some(f) = self.fraction {
            cfg.fraction = f;
        }
        if let Some(q) = self.queries {
            cfg = cfg.with_queries(q);
        }
        Ok(cfg)
    }
}

/// One line of a generated family's timings: wall and CPU seconds of each scan, and rows/s
/// per thread of CPU time for the generation and for the scan proper (CPU − generation).
pub fn stream_line(r: &VectorRun, t: &StreamTiming) -> String {
    let n = r.pool_size as f64;
    let s = r.sample_size as f64;
    let rate = |rows: f64, secs: f64| rows / secs.max(1e-9);
    format!(
        "tailrank simulate: {} seed {} f {}, {} threads: truth pass {:.1} s wall, {:.1} CPU-s \
         (generation {:.1} CPU-s: {:.2e} rows/s per thread; scan {:.2e} rows/s per thread); \
         sample scan {:.1} s wall, {:.1} CPU-s (generation {:.2} CPU-s for {} rows: {:.2e} \
         rows/s per thread); predict {:.1} s wall",
        r.family,
        r.seed,
        r.fraction,
        t.threads,
        t.truth_wall,
        t.truth_cpu,
        t.truth_generation,
        rate(n, t.truth_generation),
        rate(n, t.truth_cpu - t.truth_generation),
        t.sample_wall,
        t.sample_cpu,
        t.sample_generation,
        r.sample_size,
        rate(s, t.sample_generation),
        t.predict_wall,
    )
}
