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

/// Values per piece of [`TopM::push_batch`] (the buffer may overshoot `cap` by this much).
pub const BATCH: usize = 64;

/// Order-preserving map of finite f32 to u32 (`a < b ⇔ key(a) < key(b)`, `-0 < +0`).
#[inline]
fn key(s: f32) -> u32 {
    let b = s.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 0x8000_0000
    }
}

#[inline]
fn unkey(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & 0x7fff_ffff } else { !k })
}

/// Top-`m` f32 values of a stream (values only). Values are buffered as order-preserving u32
/// keys, so that compaction is an integer `select_nth_unstable`.
#[derive(Debug, Clone)]
pub struct TopM {
    m: usize,
    cap: usize,
    buf: Vec<u32>,
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

    /// Offer one value. Returns whether the threshold may have risen (a compaction ran).
    #[inline]
    pub fn push(&mut self, s: f32) -> bool {
        if s > self.threshold {
            self.buf.push(key(s));
            if self.buf.len() >= self.cap {
                self.compact();
                return true;
            }
        }
        false
    }

    /// Offer every value of `vals` (same result as pushing them one by one, except that the
    /// threshold only rises between pieces of [`BATCH`] values). Branch-free: each value is
    /// written to the buffer tail and the tail advances iff it is above the threshold. Returns
    /// whether the threshold may have risen.
    #[inline]
    pub fn push_batch(&mut self, vals: &[f32]) -> bool {
        self.append(vals, key)
    }

    /// [`push_batch`](Self::push_batch) over values given as keys (`to_key` maps them).
    /// Compares keys: `key(s) > key(threshold)` ⇔ `s > threshold`, except that `+0` passes a
    /// threshold of `-0` (an equal value; accepting it changes nothing).
    #[inline(always)]
    fn append<T: Copy>(&mut self, vals: &[T], to_key: impl Fn(T) -> u32) -> bool {
        let mut compacted = false;
        for piece in vals.chunks(BATCH) {
            let thr = key(self.threshold);
            if self.buf.capacity() == 0 {
                self.buf.reserve_exact(self.cap + BATCH);
            }
            self.buf.reserve(piece.len());
            let len = self.buf.len();
            let spare = self.buf.spare_capacity_mut();
            let mut n = 0;
            for &v in piece {
                let k = to_key(v);
                spare[n].write(k);
                n += usize::from(k > thr);
            }
            // SAFETY: the first `n` spare slots were written above (`n ≤` slots written).
            unsafe { self.buf.set_len(len + n) };
            if self.buf.len() >= self.cap {
                self.compact();
                compacted = true;
            }
        }
        compacted
    }

    /// Hint the CPU to fetch the cache line the next accepted value will be written to (the
    /// scan visits many reservoirs per block; their tails are rarely in cache).
    #[inline]
    pub fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        if self.buf.capacity() > self.buf.len() {
            // SAFETY: prefetching has no architectural effect and the address lies inside the
            // vector's allocation.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(self.buf.as_ptr().add(self.buf.len()) as *const i8);
            }
        }
    }

    /// Raise the threshold to `floor` if it is higher. Sound when `floor` is a lower bound of
    /// the final m-th largest value of the union of this stream with streams merged into it
    /// later (e.g. another worker's threshold): values `≤ floor` can then never be among the
    /// union's `m` largest, except as equal copies of a value held elsewhere.
    #[inline]
    pub fn raise_threshold(&mut self, floor: f32) {
        if floor > self.threshold {
            self.threshold = floor;
        }
    }

    /// Reduce the buffer to the `m` largest values and raise the threshold to the m-th largest
    /// (never lowering it).
    fn compact(&mut self) {
        let len = self.buf.len();
        if len > self.m {
            let cut = len - self.m;
            self.buf.select_nth_unstable(cut);
            self.threshold = self.threshold.max(unkey(self.buf[cut]));
            self.buf.drain(..cut);
        }
    }

    /// The values held: the `m` largest pushed and possibly more, in no order.
    pub fn values(&self) -> impl Iterator<Item = f32> + '_ {
        self.buf.iter().map(|&k| unkey(k))
    }

    /// How many held values are strictly above `t`.
    pub fn count_above(&self, t: f32) -> usize {
        self.values().filter(|&v| v > t).count()
    }

    /// Add every value held by `other` (merging reservoirs of disjoint streams).
    pub fn merge(&mut self, other: &TopM) {
        self.append(&other.buf, |k| k);
    }

    /// The `m` largest values pushed (fewer if fewer were pushed), descending.
    pub fn into_sorted(mut self) -> Vec<f32> {
        self.compact();
        sort_keys_descending(&mut self.buf);
        self.buf.into_iter().map(unkey).collect()
    }
}

/// Sort keys in descending order: a least-significant-digit radix sort over bytes (stable,
/// largest byte first at every digit, so the result is descending), skipping the digits all
/// keys share (the top-M scores of a query share their sign and most of their exponent bits).
/// Short inputs use a comparison sort.
fn sort_keys_descending(v: &mut Vec<u32>) {
    if v.len() < 256 {
        v.sort_unstable_by(|a, b| b.cmp(a));
        return;
    }
    let mut counts = [[0usize; 256]; 4];
    for &k in v.iter() {
        for (d, c) in counts.iter_mut().enumerate() {
            c[((k >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let mut tmp = vec![0u32; v.len()];
    for (d, c) in counts.iter().enumerate() {
        if c.contains(&v.len()) {
            continue;
        }
        let mut pos = [0usize; 256];
        let mut at = 0;
        for b in (0..256).rev() {
            pos[b] = at;
            at += c[b];
        }
        for &k in v.iter() {
            let b = ((k >> (8 * d)) & 0xff) as usize;
            tmp[pos[b]] = k;
            pos[b] += 1;
        }
        std::mem::swap(v, &mut tmp);
    }
}

/// Thresholds of [`TopM`] reservoirs shared between the workers that split one stream: slot `i`
/// holds the highest threshold any worker's reservoir `i` has reached. Each worker's reservoir
/// keeps `m` values `≥` its own threshold, so a slot is a lower bound of the final m-th largest
/// value of the merged reservoirs, and every worker may reject values at or below it
/// ([`TopM::raise_threshold`]) without changing the merged top-m.
#[derive(Debug)]
pub struct SharedThresholds(Vec<std::sync::atomic::AtomicU32>);

impl SharedThresholds {
    /// `n` slots, all `-inf`.
    pub fn new(n: usize) -> Self {
        SharedThresholds(
            (0..n)
                .map(|_| std::sync::atomic::AtomicU32::new(key(f32::NEG_INFINITY)))
                .collect(),
        )
    }

    /// The threshold of slot `i`.
    #[inline]
    pub fn get(&self, i: usize) -> f32 {
        unkey(self.0[i].load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Raise slot `i` to `t` if `t` is higher.
    #[inline]
    pub fn publish(&self, i: usize, t: f32) {
        if !t.is_nan() {
            self.0[i].fetch_max(key(t), std::sync::atomic::Ordering::Relaxed);
        }
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

    /// Offer one entry. Returns whether the threshold may have risen (a compaction ran).
    #[inline]
    pub fn push(&mut self, s: f32, key: u64) -> bool {
        if keyed(&(s, key), &self.threshold) == Ordering::Less {
            self.buf.push((s, key));
            if self.buf.len() >= self.cap {
                self.compact();
                return true;
            }
        }
        false
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

    /// The reference: the `m` largest of `vals`, descending, by a full sort.
    fn top_by_sort(vals: &[f32], m: usize) -> Vec<f32> {
        let mut want = vals.to_vec();
        want.sort_unstable_by(|a, b| b.total_cmp(a));
        want.truncate(m);
        want
    }

    fn lcg(state: &mut u64) -> f32 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Coarse values so that ties occur.
        ((*state >> 40) % 5000) as f32 / 5000.0
    }

    #[test]
    fn keys_preserve_order() {
        let v = [
            f32::NEG_INFINITY,
            -3.5,
            -1e-30,
            -0.0,
            0.0,
            1e-30,
            0.25,
            7.0,
            f32::INFINITY,
        ];
        for w in v.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{} {}", w[0], w[1]);
        }
        for &x in &v {
            assert_eq!(unkey(key(x)).to_bits(), x.to_bits());
        }
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
            assert_eq!(t.into_sorted(), top_by_sort(&vals, m), "m = {m}");
        }
    }

    #[test]
    fn radix_sort_is_descending_and_keeps_the_multiset() {
        let mut st = 11u64;
        for len in [0usize, 1, 255, 256, 1000, 9000] {
            let mut v: Vec<u32> = (0..len)
                .map(|i| {
                    st = st
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Mix shared high bytes (like scores) with fully random keys and ties.
                    if i % 3 == 0 {
                        (st >> 32) as u32
                    } else {
                        0xbe00_0000 | ((st >> 40) as u32 & 0xffff)
                    }
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable_by(|a, b| b.cmp(a));
            sort_keys_descending(&mut v);
            assert_eq!(v, want, "len = {len}");
        }
    }

    #[test]
    fn push_batch_equals_push() {
        let mut st = 3u64;
        let vals: Vec<f32> = (0..30_000).map(|_| lcg(&mut st)).collect();
        for m in [0, 1, 5, 64, 900, 40_000] {
            let (mut one, mut many) = (TopM::new(m, 2 * m), TopM::new(m, 2 * m));
            for &v in &vals {
                one.push(v);
            }
            // Uneven batch sizes, including empty ones and ones longer than BATCH.
            let mut rest = &vals[..];
            let mut len = 0;
            while !rest.is_empty() {
                let take = len.min(rest.len());
                many.push_batch(&rest[..take]);
                rest = &rest[take..];
                len = (len * 7 + 3) % 211;
            }
            assert_eq!(many.into_sorted(), one.into_sorted(), "m = {m}");
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
                a.push(v);
            } else {
                b.push(v);
            }
        }
        a.merge(&b);
        assert_eq!(a.into_sorted(), whole.into_sorted());
    }

    #[test]
    fn shared_thresholds_keep_the_merged_top_m() {
        // Three "workers" split a stream with ties; each raises its threshold to the shared
        // one before every push and publishes after compactions, like the scan's pool pass.
        let mut st = 17u64;
        let vals: Vec<f32> = (0..60_000).map(|_| lcg(&mut st)).collect();
        for m in [1usize, 50, 700] {
            let shared = SharedThresholds::new(1);
            let mut parts: Vec<TopM> = (0..3).map(|_| TopM::new(m, 2 * m)).collect();
            let mut rejected_by_shared = 0;
            for (i, &v) in vals.iter().enumerate() {
                let w = &mut parts[(i / 97) % 3];
                let before = w.threshold();
                w.raise_threshold(shared.get(0));
                if v > before && v <= w.threshold() {
                    rejected_by_shared += 1;
                }
                if w.push(v) {
                    shared.publish(0, w.threshold());
                }
            }
            assert!(
                rejected_by_shared > 0,
                "m = {m}: the shared threshold never helped"
            );
            let mut merged = TopM::new(m, 2 * m);
            for w in &parts {
                merged.merge(w);
            }
            assert_eq!(merged.into_sorted(), top_by_sort(&vals, m), "m = {m}");
        }
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
