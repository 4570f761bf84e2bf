//! A tiny deterministic generator for test data: SplitMix64 over a counter (no dependency on
//! the `rand` API, so the data never changes with it).

use tailrank::numerics::rng::splitmix64;

/// SplitMix64 with state `self.0`: each draw advances the state by the golden-ratio increment.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        let z = splitmix64(self.0);
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z
    }
    /// Uniform in (0, 1).
    pub fn unif(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Uniform in `0..n` (modulo, as the test data always were).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// A score in [-1, 1) on a 1/256 grid (ties are common).
    pub fn score(&mut self) -> f32 {
        (self.below(512) as f32 - 256.0) / 256.0
    }
}
