//! A projection of the realized width at 2f by simulation, from the sample at f alone
//! (docs/notes/2026-12-05-projection-bound.md, "A plug-in doubling"): each run is simulated at
//! 2f as `next_step_validation` does; its increment (the upper half of the drift shards and its
//! share of level 0) is replaced by a plug-in built from the f part only, and the width
//! predicted from that plug-in summary is the projection.
//!
//! The plug-in increment: shard `h + H/2` is a jittered copy of shard `h`'s top list (item `i`
//! moved uniformly within `(s_{i+1}, s_{i−1})`, the first within `(s_2, 2·s_1 − s_2)`), its
//! counts above a positive the copy's items above it, or shard `h`'s count for a positive
//! below the list (made non-increasing in the score); level 0 is level 1 merged with a jittered
//! copy of level 1's list (top M), its counts level 1's plus the copied shards'.
//!
//! Prints one CSV row per run: `family,held_out,seed,projected,plugin,measured` (the adopted
//! projection `WidthParts::projected(1)`, the plug-in's width, the width at 2f).
//!
//! Usage: `projection_plugin FIRST_SEED..END_SEED F [FAMILIES]` (default every corpus family;
//! 300 queries).
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
mod runs;
use rand::RngExt;
use tailrank::numerics::{rng_for, StreamSeeding};
use tailrank::predict::next_step::{level_summary, width_parts};
use tailrank::predict::predict_without_next_step;
use tailrank::summary::Summary;

/// A jittered copy of descending list `l`: item `i` uniform on `(s_{i+1}, s_{i−1})`.
fn jitter<R: rand::Rng>(rng: &mut R, l: &[f32]) -> Vec<f32> {
    let m = l.len();
    (0..m)
        .map(|i| {
            let hi = if i == 0 {
                if m > 1 {
                    2.0 * l[0] - l[1]
                } else {
                    l[0]
                }
            } else {
                l[i - 1]
            };
            let lo = if i + 1 < m { l[i + 1] } else { l[i] };
            let u: f32 = rng.random();
            lo + u * (hi - lo)
        })
        .collect::<Vec<f32>>()
}

fn sorted_desc(mut v: Vec<f32>) -> Vec<f32> {
    v.sort_by(|a, b| b.total_cmp(a));
    v
}

/// Summary `s` at 2f with its increment replaced by the plug-in built from its f part.
fn plugin(s: &Summary, seed: u64) -> Summary {
    let mut out = s.clone();
    let (l, sh) = (s.level_indices(), s.shard_indices());
    let h_all = sh.len();
    for (qi, q) in out.queries.iter_mut().enumerate() {
        let mut rng = rng_for(StreamSeeding::Nested, seed, 5000, qi as u64);
        let mut inc = vec![0u64; q.positives.len()];
        for h in 0..h_all / 2 {
            let (src, dst) = (sh[h], sh[h + h_all / 2]);
            let list = sorted_desc(jitter(&mut rng, &q.top_scores[src]));
            let bottom = list.last().copied().unwrap_or(f32::INFINITY);
            let mut order: Vec<usize> = (0..q.positives.len()).collect();
            order.sort_by(|&a, &b| q.positives[b].score.total_cmp(&q.positives[a].score));
            let mut prev = 0u64;
            for &j in &order {
                let p = &mut q.positives[j];
                let k = if p.score >= bottom {
                    list.partition_point(|&v| v > p.score) as u64
                } else {
                    p.pool_above[src]
                };
                let k = k.max(prev);
                prev = k;
                p.pool_above[dst] = k;
                inc[j] += k;
            }
            q.top_scores[dst] = list;
        }
        let mut top = q.top_scores[l[1]].clone();
        top.extend(jitter(&mut rng, &q.top_scores[l[1]]));
        let mut top = sorted_desc(top);
        top.truncate(s.subsets[l[0]].kept(s.top_m));
        q.top_scores[l[0]] = top;
        for (p, k) in q.positives.iter_mut().zip(&inc) {
            p.pool_above[l[0]] = p.pool_above[l[1]] + k;
        }
    }
    out
}

fn main() {
    let seeds = args::seeds(1, "0..3");
    let f: f64 = args::arg(2).expect("F").parse().expect("F");
    let families = args::families(3);
    println!("family,held_out,seed,projected,plugin,measured");
    for run in runs::doubled_runs(&families, seeds, 300, f) {
        let (seed, sim, opts) = (run.seed, run.sim, run.opts);
        let w = |s: &Summary| {
            predict_without_next_step(s, &opts)
                .unwrap()
                .realized
                .map_or(f64::NAN, |r| r.width())
        };
        let pf =
            predict_without_next_step(&level_summary(&sim.summary, 1).unwrap(), &opts).unwrap();
        let proj = width_parts(&pf).unwrap().projected(1);
        println!(
            "{},{},{seed},{proj:.5},{:.5},{:.5}",
            run.family,
            run.held_out,
            w(&plugin(&sim.summary, seed)),
            w(&sim.summary)
        );
    }
}
