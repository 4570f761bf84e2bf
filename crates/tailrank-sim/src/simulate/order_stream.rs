//! Lazily drawn order statistics of `n` i.i.d. items of one component of a score law, highest
//! score first (docs/method.md §10): item `i` is drawn only when a merge reaches it, by Rényi's
//! exponential spacings on the exceedance scale (`draws::renyi_step`), `s_i = F̄⁻¹(p_i)` with
//! `p_0 < p_1 < …` the smallest uniforms of the `n`.

use super::draws::renyi_step;
use super::law::ScoreLaw;
use rand::Rng;

/// The drawn head of one stream: exceedance probabilities `p` and scores `s` of its largest
/// items, in order.
#[derive(Debug, Clone)]
pub struct OrderStream {
    n: u64,
    comp: usize,
    /// `−ln(1 − p)` of the last drawn item.
    cum: f64,
    p: Vec<f64>,
    s: Vec<f32>,
}

impl OrderStream {
    /// A stream of `n` items of component `comp`, nothing drawn yet.
    pub fn new(n: u64, comp: usize) -> Self {
        Self {
            n,
            comp,
            cum: 0.0,
            p: Vec::new(),
            s: Vec::new(),
        }
    }

    /// Make item `i` available; false when the stream holds fewer than `i + 1` items.
    pub fn ensure<R: Rng + ?Sized>(&mut self, i: usize, rng: &mut R, law: &ScoreLaw) -> bool {
        while self.p.len() <= i {
            let drawn = self.p.len() as u64;
            if drawn >= self.n {
                return false;
            }
            let p = renyi_step(rng, &mut self.cum, self.n - drawn);
            self.p.push(p);
            self.s.push(law.components[self.comp].family.isf(p) as f32);
        }
        true
    }

    /// Score of item `i`, drawing up to it; None when the stream holds fewer items.
    pub fn score<R: Rng + ?Sized>(&mut self, i: usize, rng: &mut R, law: &ScoreLaw) -> Option<f32> {
        self.ensure(i, rng, law).then(|| self.s[i])
    }

    /// The scores drawn so far, largest first.
    pub fn drawn_scores(&self) -> &[f32] {
        &self.s
    }

    /// Items not drawn yet.
    pub fn undrawn(&self) -> u64 {
        self.n - self.p.len() as u64
    }

    /// The law component the items come from.
    pub fn component(&self) -> usize {
        self.comp
    }

    /// Exceedance probability of the last drawn item (0 before any): the undrawn items lie
    /// above it on the exceedance scale.
    pub fn last_p(&self) -> f64 {
        self.p.last().copied().unwrap_or(0.0)
    }
}
