//! Speculative top-M floors from a pilot pass; exactness is kept by verification.
//!
//! Beyond the product itself, the pool pass spends its time in the top-M warm-up: a reservoir
//! accepts every value until it first fills, and its threshold then trails the M-th value it
//! will end with. With M = 4000 and 9 subsets on a 1M-row pool, about a fifth of all scores
//! become candidates, against a tenth with the final thresholds known in advance.
//!
//! **Pilot.** Every [`PILOT_STRIDE`]-th block (spread over the whole pool) is scanned first.
//! For a query and a subset `S` of which the pilot saw `n` items out of `|S|` (fraction
//! `φ = n/|S|`), let `v_r` be the `r`-th largest pilot score with `r = ⌈SAFETY · M · φ⌉`. If
//! the pilot is a fair sample of `S`, about `r/φ = SAFETY · M` items of `S` score above `v_r`.
//! The remaining blocks are then scanned with `v_r` as the reservoir's starting threshold (its
//! *floor*), so that only values above it are candidates from the start.
//!
//! **Verification.** A floor is a guess, never trusted. When the merged reservoir of `S` holds
//! at least M values strictly above the floor, the M-th largest value of `S` is above the
//! floor, so every rejected value (at or below it) lies outside the top M: the result is exact.
//! Any query with a subset that fails the check is scanned again from scratch without floors.
//!
//! **How often a check fails.** If only `K = M` items of `S` scored above `v_r`, the pilot
//! would have seen `Binomial(M, φ)` of them, mean `Mφ`, yet it saw `r = SAFETY · Mφ`. Floors are
//! only set where `Mφ ≥` [`MIN_EXPECTED`], which puts that at `(SAFETY − 1)·√(Mφ) ≥ 5`
//! standard deviations for a pool in random order. A pool ordered so that its pilot blocks are
//! unrepresentative costs a rescan of the affected queries, not a wrong number.

use super::topm::TopM;

/// One block in this many (starting at the middle of the first stride) goes to the pilot.
pub const PILOT_STRIDE: usize = 16;
/// A floor aims at `SAFETY · M` items of the subset above it.
pub const SAFETY: f64 = 1.5;
/// Floors are set only where the pilot expects at least this many of the top M (`M·φ`).
pub const MIN_EXPECTED: f64 = 100.0;

/// Split block indices `0..n` into (pilot, rest). The pilot is every [`PILOT_STRIDE`]-th block
/// from `PILOT_STRIDE / 2`; it is empty (no speculation) when `n < 2 · PILOT_STRIDE`.
pub fn split_blocks(n: usize) -> (Vec<usize>, Vec<usize>) {
    if n < 2 * PILOT_STRIDE {
        return (Vec::new(), (0..n).collect());
    }
    (0..n).partition(|&b| b % PILOT_STRIDE == PILOT_STRIDE / 2)
}

/// The floor of one query and subset, from the pilot reservoirs `parts` (one per pilot
/// worker), the number of the subset's items the pilot scanned and the subset's size;
/// `-inf` (no floor) where the pilot is too thin. `scratch` is reused between calls.
pub fn floor(
    parts: &[&TopM],
    pilot_items: u64,
    subset_items: u64,
    m: usize,
    scratch: &mut Vec<f32>,
) -> f32 {
    if m == 0 || pilot_items == 0 || subset_items == 0 {
        return f32::NEG_INFINITY;
    }
    let phi = pilot_items as f64 / subset_items as f64;
    if (m as f64) * phi < MIN_EXPECTED {
        return f32::NEG_INFINITY;
    }
    let r = (SAFETY * m as f64 * phi).ceil() as usize;
    // r ≤ m: every pilot worker's reservoir then holds its own top r, so their union holds
    // the pilot's top r (up to copies of a value equal to a threshold, which only lowers the
    // floor).
    if r > m || r as u64 > pilot_items {
        return f32::NEG_INFINITY;
    }
    scratch.clear();
    for t in parts {
        scratch.extend(t.values());
    }
    if scratch.len() < r {
        return f32::NEG_INFINITY;
    }
    let (_, v, _) = scratch.select_nth_unstable_by(r - 1, |a, b| b.total_cmp(a));
    *v
}

/// Whether the merged reservoir `t` of a subset proves its floor harmless: no floor, or at
/// least `m` values held strictly above it.
pub fn verified(t: &TopM, floor: f32, m: usize) -> bool {
    floor == f32::NEG_INFINITY || t.count_above(floor) >= m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pilot_is_spread_and_disjoint() {
        let (p, r) = split_blocks(100);
        assert_eq!(p, vec![8, 24, 40, 56, 72, 88]);
        assert_eq!(p.len() + r.len(), 100);
        assert!(p.iter().all(|b| !r.contains(b)));
        assert_eq!(split_blocks(31), (Vec::new(), (0..31).collect()));
    }

    #[test]
    fn floor_is_the_r_th_largest_pilot_value() {
        // 1000 pilot values 0..1000 split over two workers; subset of 20,000 items, M = 4000:
        // φ = 0.05, Mφ = 200, r = 300 → the 300th largest value is 700.
        let (mut a, mut b) = (TopM::new(4000, 8000), TopM::new(4000, 8000));
        for v in 0..1000 {
            if v % 2 == 0 {
                a.push(v as f32)
            } else {
                b.push(v as f32)
            };
        }
        let mut s = Vec::new();
        assert_eq!(floor(&[&a, &b], 1000, 20_000, 4000, &mut s), 700.0);
        // Too thin a pilot (Mφ < MIN_EXPECTED), or r > M: no floor.
        assert_eq!(
            floor(&[&a, &b], 1000, 100_000, 4000, &mut s),
            f32::NEG_INFINITY
        );
        assert_eq!(
            floor(&[&a, &b], 1000, 1000, 4000, &mut s),
            f32::NEG_INFINITY
        );
        assert_eq!(floor(&[&a, &b], 0, 1000, 4000, &mut s), f32::NEG_INFINITY);
    }

    #[test]
    fn verification_counts_values_strictly_above() {
        let mut t = TopM::new(3, 6);
        for v in [1.0, 2.0, 3.0, 3.0] {
            t.push(v);
        }
        assert!(verified(&t, 1.0, 3));
        assert!(!verified(&t, 2.0, 3), "only two values above 2");
        assert!(verified(&t, f32::NEG_INFINITY, 3));
    }
}
