//! How well can any projection of the realized width at 2f, read from the sample at f, do?
//! (docs/notes/2026-12-05-projection-bound.md). For each corpus family and seed: simulate the
//! summary at 2f as `next_step_validation` does (one more level, twice the drift shards), keep
//! its f part (level 1 and the shards inside it) fixed and redraw the f → 2f increment `R`
//! times, and predict the realized width at 2f from each redrawn summary.
//!
//! The redraw, per query, given the query's score law and positives (the truth): the increment
//! is the hash range `[f, 2f)`, i.e. the upper half of the 2f drift shards. Each of its shards
//! keeps its size and its discrete items (hubs, burst copies); its continuous items, a
//! multinomial split over the law's components, are drawn afresh as the simulator draws them
//! (Rényi's spacings for the top of each stream, lazily, largest first; `joint_counts` for the
//! not-yet-drawn items above each positive). The 2f summary's level 0 is then the f part's
//! level 1 plus the increment: its top list the top M of the two lists merged, its counts the
//! sum. Holding more than the f sample fixed (the law, the positives, the subset sizes, the
//! discrete items) can only narrow the conditional spread of `W_2f`, so the hit rate computed
//! from it bounds from above what any rule read from the f sample can reach.
//!
//! Per run, with `W_0` the width of the original draw and `W_1..W_R` the redraws:
//! `bound_empirical = max_p #{i: |W_i − p| ≤ 0.3·W_i}/(R+1)` (the window `W ∈ [p/1.3, p/0.7]`
//! slid over the sorted widths) and `bound_lognormal = 2Φ(ln(1.3/0.7)/(2σ)) − 1`, `σ` the sd of
//! `ln W_i`; `adopted_hit` the share of the `W_i` within ±30% of the adopted projection.
//!
//! Prints one CSV row per run: `family,held_out,seed,f,w_f,n_f,t_f,s_f,w_h,n_h,t_h,s_h,L,
//! projected_2f,measured_2f,redraws,bound_empirical,bound_lognormal,adopted_hit,
//! increment_count_ratio` (`redraws` the `W_i`, `;`-separated, `W_0` first; `h` = f/2;
//! `increment_count_ratio` = the redraws' mean count of increment items above the positives
//! over the original draw's, a check of the redraw).
//!
//! Usage: `projection_bound [FIRST_SEED..END_SEED [F [QUERIES [REDRAWS [FAMILIES]]]]]`
//! (defaults 6..9, 0.05, 300, 8, every corpus family).
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
mod runs;
use rayon::prelude::*;
use tailrank::numerics::{norm_cdf, rng_for, StreamSeeding};
use tailrank::predict::next_step::{level_summary, width_parts, WidthParts};
use tailrank::predict::predict_without_next_step;
use tailrank::simulate::order_stream::OrderStream;
use tailrank::simulate::{joint_counts, ScoreLaw, Simulation};
use tailrank::summary::{QuerySummary, Summary};

/// The top `kept` scores of `streams` and `extra` (any order), merged largest first.
fn merged_top<R: rand::Rng>(
    rng: &mut R,
    law: &ScoreLaw,
    streams: &mut [OrderStream],
    extra: &[f32],
    kept: usize,
) -> Vec<f32> {
    let mut cursor = vec![0usize; streams.len()];
    let mut top = Vec::with_capacity(kept);
    while top.len() < kept {
        let mut best: Option<(usize, f32)> = None;
        for (k, st) in streams.iter_mut().enumerate() {
            if let Some(v) = st.score(cursor[k], rng, law) {
                if best.is_none_or(|(_, b)| v > b) {
                    best = Some((k, v));
                }
            }
        }
        let Some((k, v)) = best else { break };
        top.push(v);
        cursor[k] += 1;
    }
    top.extend_from_slice(extra);
    top.sort_by(|a, b| b.total_cmp(a));
    top.truncate(kept);
    top
}

/// Query `qi` of `sim` with its increment (the upper half of the drift shards) redrawn from
/// `rng`; returns the query and its count of increment items above the positives.
fn redraw_query<R: rand::Rng>(sim: &Simulation, qi: usize, rng: &mut R) -> (QuerySummary, u64) {
    let s = &sim.summary;
    let truth = &sim.truth.queries[qi];
    let law = &truth.law;
    let mut q = s.queries[qi].clone();
    let (levels, shards) = (s.level_indices(), s.shard_indices());
    let h_all = shards.len();
    // Positives in descending score order (the order `joint_counts` needs).
    let mut order: Vec<usize> = (0..q.positives.len()).collect();
    order.sort_by(|&a, &b| q.positives[b].score.total_cmp(&q.positives[a].score));
    let mut increment_top: Vec<f32> = Vec::new();
    let mut increment_above = vec![0u64; q.positives.len()];
    for (h, &si) in shards.iter().enumerate().skip(h_all / 2) {
        let (lo, hi) = (h as f64 / h_all as f64, (h + 1) as f64 / h_all as f64);
        let items: Vec<f32> = truth
            .discrete
            .iter()
            .filter(|d| d.hash.is_some_and(|x| lo <= x && x < hi))
            .map(|d| d.score)
            .collect();
        // Continuous items: a multinomial split of the shard over the law's components.
        let (mut left, mut wleft) = (s.subset_sizes[si] - items.len() as u64, 1.0f64);
        let ncomp = law.components.len();
        let mut streams: Vec<OrderStream> = law
            .components
            .iter()
            .enumerate()
            .map(|(c, comp)| {
                let n = if c + 1 == ncomp {
                    left
                } else {
                    joint_counts(rng, left, 0.0, &[(comp.weight / wleft).min(1.0)])[0]
                };
                left -= n;
                wleft -= comp.weight;
                OrderStream::new(n, c)
            })
            .collect();
        let kept = s.subsets[si].kept(s.top_m);
        q.top_scores[si] = merged_top(rng, law, &mut streams, &items, kept);
        // The increment's own top M (for level 0): drawn further from the same streams.
        increment_top.extend(merged_top(rng, law, &mut streams, &items, s.top_m));
        let mut above = vec![0u64; q.positives.len()];
        for st in &streams {
            let xs: Vec<f64> = order
                .iter()
                .map(|&j| {
                    law.components[st.component()]
                        .family
                        .sf(f64::from(q.positives[j].score))
                })
                .collect();
            let undrawn = joint_counts(rng, st.undrawn(), st.last_p(), &xs);
            for (&j, u) in order.iter().zip(undrawn) {
                let sj = q.positives[j].score;
                above[j] += st.drawn_scores().partition_point(|&v| v > sj) as u64 + u;
            }
        }
        for (j, p) in q.positives.iter_mut().enumerate() {
            let disc = items.iter().filter(|&&v| v > p.score).count() as u64;
            p.pool_above[si] = above[j] + disc;
            increment_above[j] += above[j] + disc;
        }
    }
    let (l0, l1) = (levels[0], levels[1]);
    let mut top = q.top_scores[l1].clone();
    top.extend(increment_top);
    top.sort_by(|a, b| b.total_cmp(a));
    top.truncate(s.subsets[l0].kept(s.top_m));
    q.top_scores[l0] = top;
    for (p, inc) in q.positives.iter_mut().zip(&increment_above) {
        p.pool_above[l0] = p.pool_above[l1] + inc;
    }
    (q, increment_above.iter().sum())
}

/// Summary `sim.summary` with its increment redrawn (redraw `r`), and the total count of
/// increment items above the positives.
fn redrawn(sim: &Simulation, seed: u64, r: u64) -> (Summary, u64) {
    let (queries, counts): (Vec<QuerySummary>, Vec<u64>) = (0..sim.summary.queries.len())
        .into_par_iter()
        .map(|qi| {
            let mut rng = rng_for(StreamSeeding::Nested, seed, 1000 + r, qi as u64);
            redraw_query(sim, qi, &mut rng)
        })
        .unzip();
    let mut s = sim.summary.clone();
    s.queries = queries;
    (s, counts.iter().sum())
}

/// The original draw's count of increment items above the positives (level 0 − level 1).
fn increment_count(s: &Summary) -> u64 {
    let l = s.level_indices();
    s.queries
        .iter()
        .flat_map(|q| &q.positives)
        .map(|p| p.pool_above[l[0]] - p.pool_above[l[1]])
        .sum()
}

/// `max_p #{i: p/1.3 ≤ W_i ≤ p/0.7} / #W`.
fn best_window_share(widths: &[f64]) -> f64 {
    let mut w: Vec<f64> = widths.to_vec();
    w.sort_by(|a, b| a.total_cmp(b));
    let ratio = 1.3 / 0.7;
    let best = (0..w.len())
        .map(|i| w[i..].iter().take_while(|&&x| x <= w[i] * ratio).count())
        .max()
        .unwrap_or(0);
    best as f64 / w.len() as f64
}

/// `2Φ(ln(1.3/0.7)/(2σ)) − 1`, `σ` the sd of `ln W`: the best window share of a lognormal.
fn lognormal_window_share(widths: &[f64]) -> f64 {
    let logs: Vec<f64> = widths.iter().map(|w| w.ln()).collect();
    let m = logs.iter().sum::<f64>() / logs.len() as f64;
    let var = logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
    let half = (1.3f64 / 0.7).ln() / 2.0;
    if var <= 0.0 {
        return 1.0;
    }
    2.0 * norm_cdf(half / var.sqrt()) - 1.0
}

fn main() {
    let seeds = args::seeds(1, "6..9");
    let f: f64 = args::arg(2).map_or(0.05, |s| s.parse().expect("F"));
    let queries: usize = args::arg(3).map_or(300, |s| s.parse().expect("QUERIES"));
    let redraws: u64 = args::arg(4).map_or(8, |s| s.parse().expect("REDRAWS"));
    let families = args::families(5);
    println!(
        "family,held_out,seed,f,w_f,n_f,t_f,s_f,w_h,n_h,t_h,s_h,L,projected_2f,measured_2f,\
         redraws,bound_empirical,bound_lognormal,adopted_hit,increment_count_ratio"
    );
    for run in runs::doubled_runs(&families, seeds, queries, f) {
        let (fam, held_out, seed, sim, opts) =
            (run.family, run.held_out, run.seed, run.sim, run.opts);
        let width = |s: &Summary| {
            let p = predict_without_next_step(s, &opts).expect("predict");
            p.realized.map_or(f64::NAN, |r| r.width())
        };
        let parts = |level: usize| -> WidthParts {
            let s = level_summary(&sim.summary, level).expect("level");
            let p = predict_without_next_step(&s, &opts).expect("predict");
            width_parts(&p).expect("a realized interval")
        };
        let (pf, ph) = (parts(1), parts(2));
        let projected = pf.projected(1);
        let mut widths = vec![width(&sim.summary)];
        let base_count = increment_count(&sim.summary) as f64;
        let mut counts = 0.0;
        for r in 0..redraws {
            let (s, c) = redrawn(&sim, seed, r);
            assert!(
                level_summary(&s, 1) == level_summary(&sim.summary, 1),
                "f part kept"
            );
            counts += c as f64;
            widths.push(width(&s));
        }
        let hit = widths
            .iter()
            .filter(|&&w| (projected / w - 1.0).abs() <= 0.3)
            .count() as f64
            / widths.len() as f64;
        let list: Vec<String> = widths.iter().map(|w| format!("{w:.5}")).collect();
        println!(
            "{fam},{held_out},{seed},{f},{:.5},{:.5},{:.5},{:.5},{:.5},{:.5},{:.5},{:.5},\
                 {:.3},{projected:.5},{:.5},{},{:.3},{:.3},{hit:.3},{:.4}",
            pf.width,
            pf.noise,
            pf.trend,
            pf.spread,
            ph.width,
            ph.noise,
            ph.trend,
            ph.spread,
            pf.doublings_to_pool,
            widths[0],
            list.join(";"),
            best_window_share(&widths),
            lognormal_window_share(&widths),
            counts / redraws.max(1) as f64 / base_count,
        );
    }
}
