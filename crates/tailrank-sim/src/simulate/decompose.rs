//! Where a prediction's error comes from, against a simulation's truth (`docs/reference/validation.md`,
//! "error decomposition"). A prediction counts as right only when its parts are.
//!
//! With `T` the realized mAP@k at N, `ER(h)` the expected-rank map fed hardness `h`, `x` the
//! true hardness of every positive and `x̂` the estimate:
//!
//! - **oracles**: `ER(x) − T` (the map's own error on a superpopulation draw), `Bin(x) − T`
//!   (the binomial map fed `x`; unbiased when the pool is an i.i.d. draw from the law), and
//!   `ER(K_N/N) − T` (the realized fractions: 0 up to tie handling, a check of the identity);
//! - **parts of the estimate's error**, by substituting the estimate branch by branch, in the
//!   order count → tail → immune: `ER(x) − T` (map) + `ER(x̂ on count, x elsewhere) − ER(x)`
//!   (count) + `ER(x̂ on count and tail) − ER(x̂ on count)` (tail) + `ER(x̂) − ER(x̂ on count and
//!   tail)` (immune) `= ER(x̂) − T` exactly; when the prediction moved its estimate to the
//!   centre of the excess or to the centre of the rare items above the top positive
//!   (docs/method.md §9), each move is one more part (`part_centre`, `part_spacing`, set by
//!   the caller), so the parts sum to the reported estimate's error;
//! - **calibration**: `log10(x̂/x)` by depth band of `N·x` and by branch (median and
//!   interquartile range), and the share of positives called immune that the full pool
//!   outranks (`K_N > 0`).

use super::Truth;
use crate::error::{Error, Result};
use crate::hardness::{Branch, QueryHardness};
use crate::maps::{mean_ap_at_k, MapKind};
use crate::numerics::quantile_sorted;
use crate::table::{Column, Table};
use serde::{Deserialize, Serialize};

/// Upper ends of the depth bands of `N·x` (the last band is open).
pub const DEPTH_BANDS: [f64; 4] = [0.1, 1.0, 10.0, 100.0];

/// Labels of the depth bands, in order.
pub const DEPTH_BAND_LABELS: [&str; 5] = ["<0.1", "0.1-1", "1-10", "10-100", ">100"];

/// Calibration of one (band, branch) cell: `log10(x̂/x)` over its positives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationCell {
    pub band: usize,
    pub branch: Branch,
    pub positives: usize,
    /// Median and quartiles of `log10(x̂/x)`; NaN for the immune branch (x̂ = 0) and for a cell
    /// without a finite ratio (JSON writes NaN as `null`, read back as NaN).
    #[serde(deserialize_with = "nan_from_null")]
    pub median: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub q25: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub q75: f64,
    /// Share of the cell's positives that the full pool outranks (`K_N > 0`).
    pub outranked: f64,
}

/// A number that JSON may hold as `null` (serde_json's NaN): `null` → NaN.
fn nan_from_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The decomposition of one run (fractions of mAP, not points).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decomposition {
    pub oracle_expected_rank: f64,
    pub oracle_binomial: f64,
    pub realized_expected_rank: f64,
    pub part_map: f64,
    pub part_count: f64,
    pub part_tail: f64,
    pub part_immune: f64,
    /// The move of the estimate to the centre of the excess (0 without one).
    #[serde(default)]
    pub part_centre: f64,
    /// The move of the estimate to the centre of the rare items above the top positive (0
    /// without one).
    #[serde(default)]
    pub part_spacing: f64,
    /// Positives called immune, and how many of them the full pool outranks.
    pub immune: usize,
    pub immune_outranked: usize,
    pub calibration: Vec<CalibrationCell>,
}

impl Decomposition {
    /// The sum of the parts: the reported estimate's error `m̂ − T`.
    pub fn total(&self) -> f64 {
        self.part_map
            + self.part_count
            + self.part_tail
            + self.part_immune
            + self.part_centre
            + self.part_spacing
    }
}

/// Band index of an expected count `N·x`.
pub fn depth_band(expected: f64) -> usize {
    DEPTH_BANDS
        .iter()
        .position(|&hi| expected < hi)
        .unwrap_or(DEPTH_BANDS.len())
}

/// What the decomposition needs of one positive: its true hardness `x` and `K_N`, the pool
/// items at N that outrank it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositiveFacts {
    pub x: f64,
    pub pool_above_n: u64,
}

/// Decompose the error of `hardness` (the estimate behind a prediction at `truth.pool_size`)
/// against `truth`. Queries and positives must be in the same order in both.
pub fn decompose(hardness: &[QueryHardness], truth: &Truth) -> Result<Decomposition> {
    if hardness.len() != truth.queries.len() {
        return Err(Error::mismatch(format!(
            "decomposition: {} queries of hardness but {} in the truth",
            hardness.len(),
            truth.queries.len()
        )));
    }
    for (h, t) in hardness.iter().zip(&truth.queries) {
        let same = h.query_id == t.id
            && h.positives.len() == t.positives.len()
            && h.positives
                .iter()
                .zip(&t.positives)
                .all(|(a, b)| a.id == b.id);
        if !same {
            return Err(Error::mismatch(format!(
                "decomposition: query {:?} of the hardness does not match the truth's {:?}",
                h.query_id, t.id
            )));
        }
    }
    let facts: Vec<Vec<PositiveFacts>> = truth
        .queries
        .iter()
        .map(|q| {
            q.positives
                .iter()
                .map(|p| PositiveFacts {
                    x: p.x,
                    pool_above_n: p.pool_above_n,
                })
                .collect()
        })
        .collect();
    decompose_facts(hardness, &facts, truth.pool_size, truth.k, truth.map_at_k)
}

/// [`decompose`] against per-positive facts (`facts[q][j]` for `hardness[q].positives[j]`),
/// a pool of `pool_size` rows, cut `k` and realized mAP@k `truth_map`. With the realized
/// `x = K_N/N` (a vector-level pool has no law) the map part is `ER(K_N/N) − T`, zero up to
/// tie handling, and the count, tail and immune parts are the estimate's error.
pub fn decompose_facts(
    hardness: &[QueryHardness],
    facts: &[Vec<PositiveFacts>],
    pool_size: u64,
    k: usize,
    truth_map: f64,
) -> Result<Decomposition> {
    let aligned = hardness.len() == facts.len()
        && hardness
            .iter()
            .zip(facts)
            .all(|(h, f)| h.positives.len() == f.len());
    if !aligned {
        return Err(Error::internal(
            "decomposition: the facts do not match the hardness query by query",
        ));
    }
    let n = pool_size as f64;
    // Hardness with x̂ replaced by `f(branch, x̂, x, K_N)` for every positive; S = 0, so that the
    // count law of an oracle is Binomial(N, x) (the AP maps do not use S).
    let with = |f: &dyn Fn(Branch, f64, f64, u64) -> f64| -> Vec<QueryHardness> {
        hardness
            .iter()
            .zip(facts)
            .map(|(h, t)| {
                let mut q = h.clone();
                q.sample_size = 0;
                for (p, pt) in q.positives.iter_mut().zip(t) {
                    p.x_hat = f(p.branch, p.x_hat, pt.x, pt.pool_above_n);
                    p.pool_above = 0;
                }
                q
            })
            .collect()
    };
    let er = |h: &[QueryHardness]| mean_ap_at_k(h, n, k, MapKind::ExpectedRank);
    let oracle = with(&|_, _, x, _| x);
    let er_oracle = er(&oracle);
    let realized = with(&|_, _, _, kn| kn as f64 / n);
    let upto = |last: Branch| {
        let order = |b: Branch| match b {
            Branch::Count => 0,
            Branch::Tail => 1,
            Branch::Immune => 2,
        };
        with(&move |b, xh, x, _| if order(b) <= order(last) { xh } else { x })
    };
    let er_count = er(&upto(Branch::Count));
    let er_tail = er(&upto(Branch::Tail));
    let er_all = er(&upto(Branch::Immune));

    let mut cells: Vec<(usize, Branch, Vec<f64>, usize, usize)> = Vec::new();
    let (mut immune, mut immune_outranked) = (0usize, 0usize);
    for (h, t) in hardness.iter().zip(facts) {
        for (p, pt) in h.positives.iter().zip(t) {
            let band = depth_band(n * pt.x);
            let cell = match cells
                .iter_mut()
                .position(|c| c.0 == band && c.1 == p.branch)
            {
                Some(i) => &mut cells[i],
                None => {
                    cells.push((band, p.branch, Vec::new(), 0, 0));
                    cells.last_mut().expect("just pushed")
                }
            };
            if p.branch != Branch::Immune && pt.x > 0.0 && p.x_hat > 0.0 {
                cell.2.push((p.x_hat / pt.x).log10());
            }
            let out = pt.pool_above_n > 0;
            cell.3 += out as usize;
            cell.4 += 1;
            if p.branch == Branch::Immune {
                immune += 1;
                immune_outranked += out as usize;
            }
        }
    }
    cells.sort_by_key(|c| (c.0, c.1 as u8));
    let calibration = cells
        .into_iter()
        .map(|(band, branch, mut v, out, positives)| {
            v.sort_by(f64::total_cmp);
            let q = |p: f64| quantile_sorted(&v, p);
            CalibrationCell {
                band,
                branch,
                positives,
                median: q(0.5),
                q25: q(0.25),
                q75: q(0.75),
                outranked: out as f64 / positives.max(1) as f64,
            }
        })
        .collect();
    Ok(Decomposition {
        oracle_expected_rank: er_oracle - truth_map,
        oracle_binomial: mean_ap_at_k(&oracle, n, k, MapKind::Binomial) - truth_map,
        realized_expected_rank: er(&realized) - truth_map,
        part_map: er_oracle - truth_map,
        part_count: er_count - er_oracle,
        part_tail: er_tail - er_count,
        part_immune: er_all - er_tail,
        part_centre: 0.0,
        part_spacing: 0.0,
        immune,
        immune_outranked,
        calibration,
    })
}

/// Mean over runs of each decomposition entry, and the calibration cells pooled over runs
/// (positives summed; median and quartiles averaged over the runs that have the cell).
pub fn mean_of(ds: &[&Decomposition]) -> Option<Decomposition> {
    let first = ds.first()?;
    let m =
        |f: &dyn Fn(&Decomposition) -> f64| ds.iter().map(|d| f(d)).sum::<f64>() / ds.len() as f64;
    let mut cells: Vec<CalibrationCell> = Vec::new();
    let mut seen: Vec<usize> = Vec::new();
    for d in ds {
        for c in &d.calibration {
            match cells
                .iter()
                .position(|a| a.band == c.band && a.branch == c.branch)
            {
                Some(i) => {
                    let a = &mut cells[i];
                    let w = a.positives as f64;
                    a.outranked = (a.outranked * w + c.outranked * c.positives as f64)
                        / (w + c.positives as f64).max(1.0);
                    a.positives += c.positives;
                    a.median += c.median;
                    a.q25 += c.q25;
                    a.q75 += c.q75;
                    seen[i] += 1;
                }
                None => {
                    cells.push(c.clone());
                    seen.push(1);
                }
            }
        }
    }
    for (c, &n) in cells.iter_mut().zip(&seen) {
        c.median /= n as f64;
        c.q25 /= n as f64;
        c.q75 /= n as f64;
    }
    cells.sort_by_key(|c| (c.band, c.branch as u8));
    Some(Decomposition {
        oracle_expected_rank: m(&|d| d.oracle_expected_rank),
        oracle_binomial: m(&|d| d.oracle_binomial),
        realized_expected_rank: m(&|d| d.realized_expected_rank),
        part_map: m(&|d| d.part_map),
        part_count: m(&|d| d.part_count),
        part_tail: m(&|d| d.part_tail),
        part_immune: m(&|d| d.part_immune),
        part_centre: m(&|d| d.part_centre),
        part_spacing: m(&|d| d.part_spacing),
        immune: ds.iter().map(|d| d.immune).sum(),
        immune_outranked: ds.iter().map(|d| d.immune_outranked).sum(),
        calibration: if ds.len() == 1 {
            first.calibration.clone()
        } else {
            cells
        },
    })
}

/// The decomposition as markdown (points of mAP, i.e. percent).
pub fn markdown(d: &Decomposition, runs: usize) -> String {
    use std::fmt::Write as _;
    let mut m = String::new();
    let pt = |v: f64| format!("{:+.2}", 100.0 * v);
    let _ = writeln!(
        m,
        "Error decomposition (mean over {runs} runs, mAP points):\n"
    );
    let mut parts = Table::new(vec![Column::left("oracle / part"), Column::right("error")]);
    for (name, v) in [
        (
            "oracle: expected-rank fed the true x",
            d.oracle_expected_rank,
        ),
        ("oracle: binomial fed the true x", d.oracle_binomial),
        (
            "oracle: expected-rank fed the realized K_N/N",
            d.realized_expected_rank,
        ),
        ("evt part: map (= expected-rank oracle)", d.part_map),
        ("evt part: count-branch hardness", d.part_count),
        ("evt part: tail-branch hardness", d.part_tail),
        ("evt part: positives called immune", d.part_immune),
        ("evt part: move to the centre of the excess", d.part_centre),
        (
            "evt part: move towards the rare items above the top positive",
            d.part_spacing,
        ),
        ("evt total (sum of the parts)", d.total()),
    ] {
        parts.push(vec![name.to_string(), pt(v)]);
    }
    m.push_str(&parts.markdown());
    let _ = writeln!(
        m,
        "\nPositives called immune: {}; the full pool outranks {} of them ({:.1}%).\n",
        d.immune,
        d.immune_outranked,
        100.0 * d.immune_outranked as f64 / d.immune.max(1) as f64
    );
    let _ = writeln!(
        m,
        "Hardness calibration, log10(x̂/x) by depth band of N·x and branch \
         (median [q25, q75], averaged over runs; outranked = share with K_N > 0):\n"
    );
    let calibration = Table::new(vec![
        Column::left("N·x"),
        Column::left("branch"),
        Column::right("positives"),
        Column::right("median"),
        Column::left("IQR"),
        Column::right("outranked"),
    ]);
    let num = |v: f64| {
        if v.is_nan() {
            "n/a".to_string()
        } else {
            format!("{v:+.2}")
        }
    };
    let rows = d.calibration.iter().map(|c| {
        vec![
            DEPTH_BAND_LABELS[c.band].to_string(),
            format!("{:?}", c.branch),
            c.positives.to_string(),
            num(c.median),
            format!("[{}, {}]", num(c.q25), num(c.q75)),
            format!("{:.1}%", 100.0 * c.outranked),
        ]
    });
    m.push_str(&calibration.with_rows(rows).markdown());
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nan_calibration_cell_round_trips_through_json() {
        let c = CalibrationCell {
            band: 1,
            branch: Branch::Immune,
            positives: 3,
            median: f64::NAN,
            q25: f64::NAN,
            q75: -0.5,
            outranked: 0.25,
        };
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains("\"median\":null"), "{json}");
        let back: CalibrationCell = serde_json::from_str(&json).unwrap();
        assert!(back.median.is_nan() && back.q25.is_nan());
        assert_eq!((back.q75, back.positives, back.outranked), (-0.5, 3, 0.25));
    }
}
