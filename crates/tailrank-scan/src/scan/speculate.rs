//! Speculative top-M floors from pilot stages; exactness is kept by verification.
//!
//! Beyond the product itself, the pool pass spends its time in the top-M warm-up: a reservoir
//! accepts every value until it first fills, and its threshold then trails the M-th value it
//! will end with. With M = 4000 and 9 subsets on a 1M-row pool, about a fifth of all scores
//! became candidates, against a tenth with the final thresholds known in advance.
//!
//! **Stages.** The blocks are scanned in [`stages`]: one block in 64 (spread over the whole
//! pool), then one in 16, then the rest. After each stage, for every query and subset `S` of
//! which the stages so far saw `n` items out of `|S|`, the expected number of `S`'s top M among
//! them is `e = M·n/|S|`. Let `v_r` be the `r`-th largest value seen, `r = ⌈e + 5√e⌉`. If the
//! blocks seen are a fair sample of `S`, about `M·r/e` items of `S` score above `v_r`: more than
//! M, by five standard deviations of the count the sample would show. `v_r` becomes the
//! reservoir's *floor* for the next stage (its threshold is raised to it), so that stage's
//! candidates are only the values above. Floors are set where `e ≥` [`MIN_EXPECTED`].
//!
//! **Verification.** A floor is a guess, never trusted. When the merged reservoir of `S` holds
//! at least M values strictly above the highest floor it was given, the M-th largest value of
//! `S` is above every floor, so every rejected value (at or below a floor) lies outside the top
//! M: the result is exact. Any query with a subset that fails the check is scanned again from
//! scratch without floors.
//!
//! **How often a check fails.** If only M items of `S` scored above `v_r`, the sample would
//! have seen about `Binomial(M, n/|S|)` of them, mean `e`, yet it saw `r = e + 5√e`: a
//! five-sigma event for a pool stored in random order (exactly, at most 1.2·10⁻⁵ per query
//! and subset where floors are set, [`MIN_EXPECTED`]). A pool ordered so that the pilot blocks
//! are unrepresentative costs a rescan of the affected queries, not a wrong number.

use super::topm::TopM;

/// Blocks of the first pilot: one in this many (at the middle of each stride).
pub const FIRST_PILOT_STRIDE: usize = 64;
/// Blocks of the second pilot: one in this many.
pub const PILOT_STRIDE: usize = 16;
/// Standard deviations of margin a floor keeps (see the module documentation).
pub const MARGIN_SD: f64 = 5.0;
/// Floors are set only where the blocks seen so far expect at least this many of the top M
/// (`M·φ`). The exact chance that a floor fails, `P(Poisson(e) ≥ ⌈e + 5√e⌉)`, is at most
/// 1.2·10⁻⁵ for every `e ≥ 15` (7·10⁻⁶ for `e ≥ 25`; scipy, e on a 0.01 grid up to 400), and
/// 15 lets a drift shard's ⌈M/H⌉ = 1000 get its floor from the first pilot (1000/64 = 15.6).
pub const MIN_EXPECTED: f64 = 15.0;

/// The stages of a pool pass over blocks `0..n`: disjoint, covering every block, each
/// scanned from the floors estimated on all the stages before it. With at least
/// `2 · FIRST_PILOT_STRIDE` blocks: one block in 64, then one in 16, then the rest; with at
/// least `2 · PILOT_STRIDE`: one in 16, then the rest; else one stage (no speculation).
pub fn stages(n: usize) -> Vec<Vec<usize>> {
    let first = |b: usize| b % FIRST_PILOT_STRIDE == FIRST_PILOT_STRIDE / 2;
    let second = |b: usize| b % PILOT_STRIDE == PILOT_STRIDE / 2;
    let mut out: Vec<Vec<usize>> = Vec::new();
    if n >= 2 * FIRST_PILOT_STRIDE {
        out.push((0..n).filter(|&b| first(b)).collect());
    }
    if n >= 2 * PILOT_STRIDE {
        out.push((0..n).filter(|&b| second(b) && !first(b)).collect());
    }
    let taken = out.len();
    out.push(
        (0..n)
            .filter(|&b| taken == 0 || !(second(b) || (taken == 2 && first(b))))
            .collect(),
    );
    out
}

/// The floor of one query and subset, from the pilot reservoirs `parts` (one per pilot
/// worker), the number of the subset's items scanned so far and the subset's size;
/// `-inf` (no floor) where the pilot is too thin. `scratch` is reused between calls.
pub fn floor(
    parts: &[&TopM],
    seen_items: u64,
    subset_items: u64,
    m: usize,
    scratch: &mut Vec<f32>,
) -> f32 {
    if m == 0 || seen_items == 0 || subset_items == 0 {
        return f32::NEG_INFINITY;
    }
    let expected = m as f64 * seen_items as f64 / subset_items as f64;
    if expected < MIN_EXPECTED {
        return f32::NEG_INFINITY;
    }
    let r = (expected + MARGIN_SD * expected.sqrt()).ceil() as usize;
    // r ≤ m: every pilot worker's reservoir then holds its own top r, so their union holds
    // the pilot's top r (up to copies of a value equal to a threshold, which only lowers the
    // floor).
    if r > m || r as u64 > seen_items {
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
    fn stages_are_spread_disjoint_and_cover_every_block() {
        for n in [0usize, 1, 31, 32, 100, 127, 128, 1000] {
            let st = stages(n);
            let mut all: Vec<usize> = st.concat();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "n = {n}");
            let want = if n >= 128 {
                3
            } else if n >= 32 {
                2
            } else {
                1
            };
            assert_eq!(st.len(), want, "n = {n}");
        }
        let st = stages(256);
        assert_eq!(st[0], vec![32, 96, 160, 224]);
        assert_eq!(st[1].len(), 16);
        assert!(st[1].iter().all(|b| b % 16 == 8));
        assert_eq!(stages(100)[0], vec![8, 24, 40, 56, 72, 88]);
    }

    #[test]
    fn floor_is_the_r_th_largest_pilot_value() {
        // 1000 values 0..1000 seen, split over two workers; subset of 20,000 items, M = 4000:
        // e = 200, r = ⌈200 + 5·√200⌉ = 271 → the 271st largest value is 729.
        let (mut a, mut b) = (TopM::new(4000, 8000), TopM::new(4000, 8000));
        for v in 0..1000 {
            if v % 2 == 0 {
                a.push(v as f32)
            } else {
                b.push(v as f32)
            };
        }
        let mut s = Vec::new();
        assert_eq!(floor(&[&a, &b], 1000, 20_000, 4000, &mut s), 729.0);
        // Too thin a sample (e < MIN_EXPECTED), or r > M: no floor.
        assert_eq!(
            floor(&[&a, &b], 1000, 400_000, 4000, &mut s),
            f32::NEG_INFINITY,
            "e = 10 < MIN_EXPECTED"
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
