//! The reach of the interval's readings that a test reads (docs/method.md §9,
//! `predict::realized`): a reading counts towards the realized interval by a weight `w(z)` of
//! how clearly its test sees it, rising linearly from 0 at `|z|` = [`Z_WEIGHT_NONE`] to 1 at
//! [`Z_WEIGHT_FULL`], instead of a switch that a doubling of the sample flips. Two readings
//! are read so: the level trend ([`TrendReach`]) and the rare items above the top positive
//! ([`AboveReach`]); the next step projects both by the z a doubling brings (`z·√2`).

use super::stats;
use super::trust::Trust;
use serde::{Deserialize, Serialize};

/// The z below which a reading read from a test (the level trend, the rare items above the
/// top positive) does not count towards the interval, and above which it counts in full
/// (`w(z)`, module docs).
pub const Z_WEIGHT_NONE: f64 = 2.0;
pub const Z_WEIGHT_FULL: f64 = 4.0;

/// How far (`m_cal − m̂` on the trend's side, a fraction of the metric) the level-calibrated
/// law must lie from the estimate for the trend to count in full on that side (`v(x)`);
/// half a point.
pub const SIDE_RAMP: f64 = 0.005;

/// `w(z) = clamp((|z| − Z_WEIGHT_NONE)/(Z_WEIGHT_FULL − Z_WEIGHT_NONE), 0, 1)`.
pub fn z_weight(z: f64) -> f64 {
    ((z.abs() - Z_WEIGHT_NONE) / (Z_WEIGHT_FULL - Z_WEIGHT_NONE)).clamp(0.0, 1.0)
}

/// `v(x) = clamp(1/2 + x/(2·SIDE_RAMP), 0, 1)`, `x = (m_cal − m̂)·sign(Δ_trend)`.
pub fn side_weight(x: f64) -> f64 {
    (0.5 + x / (2.0 * SIDE_RAMP)).clamp(0.0, 1.0)
}

/// The level trend as the interval reads it with a level-selected fit: the projected move
/// `Δ_trend`, its paired `|z|`, and the side weight `v` of the level-calibrated law (0
/// without the law). `Δ = 0` when `|Δ_trend| ≤ trust::TOLERANCE`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrendReach {
    pub delta: f64,
    pub z: f64,
    pub side: f64,
}

impl TrendReach {
    /// `Δ·w(z·z_scale)·v`: the interval's trend shift (`z_scale = 1`), or after `j` more
    /// doublings of the sample when the statistic holds still (`z_scale = 2^(j/2)`; the move
    /// left to N is scaled by the caller).
    pub fn weighted(&self, z_scale: f64) -> f64 {
        self.delta * z_weight(self.z * z_scale) * self.side
    }
}

/// The reach towards the reading of rare items above the top positive, `m_above`: spanned as
/// `m_tail + w(z)·(m_above − m_tail)`, `z` the top-spacing test's `reach_z` (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AboveReach {
    /// `m_above`, the reading in full.
    pub estimate: f64,
    /// `m_tail`, the tail model's own value it is read against.
    pub tail: f64,
    /// The top-spacing test's `reach_z = max(z, z_a)`.
    pub z: f64,
    /// The lowest of the interval's other readings (the estimate included).
    pub low_others: f64,
}

impl AboveReach {
    /// `w(z)`: the share of the way from `m_tail` to `m_above` the interval reaches.
    pub fn weight(&self) -> f64 {
        z_weight(self.z)
    }

    /// `m_tail + w(z·z_scale)·(m_above − m_tail)`: the value spanned (`z_scale = 1`), or after
    /// `j` more doublings (`z_scale = 2^(j/2)`: the test's z grows as √S for a fixed rate).
    pub fn spanned(&self, z_scale: f64) -> f64 {
        self.tail + z_weight(self.z * z_scale) * (self.estimate - self.tail)
    }

    /// How far the spanned value lowers the interval's lower end below the other readings.
    pub fn extension(&self, z_scale: f64) -> f64 {
        (self.low_others - self.spanned(z_scale)).max(0.0)
    }
}

/// The [`TrendReach`] of `trust`'s level trend around `estimate`, `calibrated` the
/// level-calibrated law's value.
pub fn trend_reach(trust: &Trust, calibrated: Option<f64>, estimate: f64) -> TrendReach {
    let d = trust.trend_projected;
    if d.abs() <= super::trust::TOLERANCE {
        return TrendReach {
            delta: 0.0,
            z: 0.0,
            side: 0.0,
        };
    }
    TrendReach {
        delta: d,
        z: stats::z_score(d, trust.trend_std_error).abs(),
        side: calibrated
            .filter(|c| c.is_finite())
            .map_or(0.0, |c| side_weight((c - estimate) * d.signum())),
    }
}
