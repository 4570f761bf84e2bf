//! Per-query top-M of f32 scores: a reservoir with a rising threshold (faiss-style for large M).
//!
//! Invariant of [`TopM`]: after any sequence of pushes, the multiset of the `m` largest values
//! pushed equals the multiset of the `m` largest values of the buffer, and every value pushed but
//! no longer held is `≤ threshold ≤` each of the `m` largest values. A push costs one compare
//! while the score is not above the threshold; when the buffer reaches `cap` (≈ 2M) values it is
//! partially selected (`select_nth_unstable`, O(cap)) down to `m` and the threshold rises to the
//! m-th largest value. Amortised cost per accepted value: O(1).
//!
//! Values equal to the threshold are rejected: they cannot change the multiset of the top-m
//! values (only which copy of an equal value is held). [`TopKeyed`] keeps `(score, key)` pairs in
//! the total order "score descending, then key ascending", so its result is independent of the
//! push order (used for the top-k result lists with ids).

use std::cmp::Ordering;

/// Descending order on f32 (`total_cmp`; inputs are finite, so this is the numeric order with
/// `-0 < +0`).
#[inline]
fn desc(a: &f32, b: &f32) -> Ordering {
    b.total_cmp(a)
}

/// Top-`m` f32 values of a stream (values only).
#[derive(Debug, Clone)]
pub struct TopM {
    m: usize,
    cap: usize,
    buf: Vec<f32>,
    /// Values `≤ threshold` are rejected. `-inf` until the buffer first fills.
    threshold: f32,
}

impl TopM {
    /// A reservoir keeping the `m` largest values, compacting when `cap` (≥ m + 1; `2m` is a
    /// good choice) values are buffered. `m = 0` keeps nothing.
    pub fn new(m: usize, cap: usize) -> Self {
        TopM {
            m,
            cap: cap.max(m + 1),
            buf: Vec::new(),
            threshold: if m == 0 {
                f32::INFINITY
            } else {
                f32::NEG_INFINITY
            },
        }
    }

    /// Current threshold: a value is kept only if strictly above it.
    #[inline]
    pub fn threshold(&self) -> f32 {
        self.threshold
    }

    /// Offer one value.
    #[inline]
    pub fn push(&mut self, s: f32) {
        if s > self.threshold {
            self.buf.push(s);
            if self.buf.len() >= self.cap {
                self.compact();
            }
        }
    }

    /// Reduce the buffer to the `m` largest values and raise the threshold to the m-th largest.
    fn compact(&mut self) {
        if self.buf.len() > self.m {
            self.buf.select_nth_unstable_by(self.m - 1, desc);
            self.buf.truncate(self.m);
            self.threshold = self.buf.iter().copied().fold(f32::INFINITY, f32::min);
        }
    }

    /// Add every value held by `other` (merging reservoirs of disjoint streams).
    pub fn merge(&mut self, other: &TopM) {
        for &s in &other.buf {
            self.push(s);
        }
    }

    /// The `m` largest values pushed (fewer if fewer were pushed), descending.
    pub fn into_sorted(mut self) -> Vec<f32> {
        self.compact();
        self.buf.sort_unstable_by(desc);
        self.buf.truncate(self.m);
        self.buf
    }
}

/// Order for keyed entries: score descending, then key ascending.
#[inline]
fn keyed(a: &(f32, u64), b: &(f32, u64)) -> Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// Top-`k` `(score, key)` pairs of a stream in the order score descending, key ascending
/// (deterministic for unique keys whatever the push order).
#[derive(Debug, Clone)]
pub struct TopKeyed {
    k: usize,
    cap: usize,
    buf: Vec<(f32, u64)>,
    /// Entries ordered after `threshold` are rejected.
    threshold: (f32, u64),
}

impl TopKeyed {
    pub fn new(k: usize, cap: usize) -> Self {
        TopKeyed {
            k,
            cap: cap.max(k + 1),
            buf: Vec::new(),
            threshold: if k == 0 {
                (f32::INFINITY, 0)
            } else {
                (f32::NEG_INFINITY, u64::MAX)
            },
        }
    }

    /// Lowest score that may still be accepted (entries with a lower score are rejected).
    #[inline]
    pub fn threshold(&self) -> f32 {
        self.threshold.0
    }

    /// Offer one entry.
    #[inline]
    pub fn push(&mut self, s: f32, key: u64) {
        if keyed(&(s, key), &self.threshold) == Ordering::Less {
            self.buf.push((s, key));
            if self.buf.len() >= self.cap {
                self.compact();
            }
        }
    }

    fn compact(&mut self) {
        if self.buf.len() > self.k {
            self.buf.select_nth_unstable_by(self.k - 1, keyed);
            self.buf.truncate(self.k);
            self.threshold = *self.buf.iter().max_by(|a, b| keyed(a, b)).expect("k ≥ 1");
        }
    }

    pub fn merge(&mut self, other: &TopKeyed) {
        for &(s, key) in &other.buf {
            self.push(s, key);
        }
    }

    /// The best `k` entries, best first.
    pub fn into_sorted(mut self) -> Vec<(f32, u64)> {
        self.compact();
        self.buf.sort_unstable_by(keyed);
        self.buf.truncate(self.k);
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(state: &mut u64) -> f32 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Coarse values so that ties occur.
        ((*state >> 40) % 5000) as f32 / 5000.0
    }

    #[test]
    fn topm_equals_sort() {
        let mut st = 1u64;
        let vals: Vec<f32> = (0..50_000).map(|_| lcg(&mut st)).collect();
        for m in [0, 1, 7, 100, 4000, 60_000] {
            let mut t = TopM::new(m, 2 * m);
            for &v in &vals {
                t.push(v);
            }
            let mut want = vals.clone();
            want.sort_unstable_by(desc);
            want.truncate(m);
            assert_eq!(t.into_sorted(), want, "m = {m}");
        }
    }

    #[test]
    fn topm_merge_equals_single_stream() {
        let mut st = 9u64;
        let vals: Vec<f32> = (0..20_000).map(|_| lcg(&mut st)).collect();
        let mut whole = TopM::new(300, 600);
        let (mut a, mut b) = (TopM::new(300, 600), TopM::new(300, 600));
        for (i, &v) in vals.iter().enumerate() {
            whole.push(v);
            if i % 3 == 0 {
                a.push(v)
            } else {
                b.push(v)
            }
        }
        a.merge(&b);
        assert_eq!(a.into_sorted(), whole.into_sorted());
    }

    #[test]
    fn keyed_is_order_free() {
        let mut st = 5u64;
        let vals: Vec<(f32, u64)> = (0..20_000).map(|i| (lcg(&mut st), i)).collect();
        let mut fwd = TopKeyed::new(500, 1000);
        let mut rev = TopKeyed::new(500, 1000);
        for &(s, k) in &vals {
            fwd.push(s, k);
        }
        for &(s, k) in vals.iter().rev() {
            rev.push(s, k);
        }
        let mut want = vals.clone();
        want.sort_unstable_by(keyed);
        want.truncate(500);
        assert_eq!(fwd.into_sorted(), want);
        assert_eq!(rev.into_sorted(), want);
    }
}
