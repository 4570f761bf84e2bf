//! A projection of the realized width at 2f by simulating the f → 2f increment from each
//! query's own fitted law (docs/notes/2026-12-05-projection-law.md): each run is simulated at
//! 2f as `next_step_validation` does; its increment (the drift shards outside level 1's hash
//! range and their share of level 0) is replaced by a stand-in drawn from the sample at f
//! alone, and the width parts predicted from that stand-in summary are printed beside the
//! adopted projection and the width measured at 2f.
//!
//! The stand-in increment of one query, a Poisson process with the f sample's own mean measure:
//! above the f tail's threshold `u` (the fit `predict` uses, `hardness::fit_query_tail` on
//! level 1's list), Poisson(`n_u`) scores `u + Y`, `Y` drawn from the fitted GPD; between the
//! bottom `b` of level 1's list and `u`, Poisson(`m − n_u`) scores drawn uniformly within the
//! spacings of the list's items below `u` (`m` = the list's length); below `b`, the counts above
//! each positive grow by Poisson draws of the f sample's own count increments. Each item falls
//! in one of the increment shards at random. Level 0 is level 1 merged with the increment (its
//! counts level 1's plus the increment's). When the f list has no tail fit, its items above
//! `u` are drawn like those below it (uniform within the spacings).
//!
//! Prints one CSV row per run: `family,held_out,seed,f,w_f,n_f,t_f,s_f,projected,measured,
//! n_2f,t_2f,s_2f`, then per draw `w_d,n_d,t_d,s_d` (the stand-in's width and parts); on
//! stderr, the wall time of the prediction at f and of the stand-in draws (built and predicted).
//!
//! The variant `mixed` draws the increment above the list's bottom from the list's own items,
//! each jittered upwards within its spacing `(s_i, s_{i−1})`, the first beyond the list's top
//! from the fitted GPD (the f sample's empirical law, with the fit only past its maximum).
//!
//! Usage: `projection_law FIRST_SEED..END_SEED F [QUERIES [FAMILIES [DRAWS [law|mixed]]]]`
//! (defaults 300 queries, every corpus family, 2 draws, `law`).
#[path = "support/args.rs"]
mod args;
#[path = "support/runs.rs"]
mod runs;
use rand::RngExt;
use tailrank::hardness::{fit_query_tail, Estimator, EvtOptions};
use tailrank::numerics::{rng_for, StreamSeeding};
use tailrank::predict::next_step::{level_summary, width_parts, WidthParts};
use tailrank::predict::predict_without_next_step;
use tailrank::predict::stats::poisson;
use tailrank::summary::Summary;

/// One score uniform within the spacing below item `i` of descending list `l`.
fn within_spacing<R: rand::Rng>(rng: &mut R, l: &[f32], i: usize) -> f32 {
    let hi = l[i];
    let lo = l[(i + 1).min(l.len() - 1)];
    let v: f32 = rng.random();
    lo + v * (hi - lo)
}

/// Summary `s` at 2f with its increment replaced by a stand-in drawn from its level 1 (module
/// docs); `draw` seeds the stand-in. `mixed`: the increment's items above the list's bottom
/// are the list's own items jittered (the fitted GPD only beyond its top) instead of the
/// fitted law above `u`.
fn stand_in(s: &Summary, evt: &EvtOptions, draw: u64, mixed: bool) -> Summary {
    let mut out = s.clone();
    let l = s.level_indices();
    let (l0, l1) = (l[0], l[1]);
    let r1 = s.subsets[l1].range;
    let inc: Vec<usize> = s
        .shard_indices()
        .into_iter()
        .filter(|&i| {
            let r = s.subsets[i].range;
            !(r.lo >= r1.lo && r.hi <= r1.hi)
        })
        .collect();
    let h = inc.len().max(1);
    let s1 = s.subset_sizes[l1];
    for (qi, q) in out.queries.iter_mut().enumerate() {
        let mut rng = rng_for(
            StreamSeeding::Nested,
            s.seed ^ 0x5eed,
            7000 + draw,
            qi as u64,
        );
        let list = q.top_scores[l1].clone();
        let m = list.len();
        // (score, shard) of every increment item down to the list's bottom.
        let mut items: Vec<(f32, usize)> = Vec::new();
        let (n_above, tail) = match fit_query_tail(&list, s1, evt) {
            Some(t) => (t.n_u, Some(t)),
            None => (0, None),
        };
        if mixed && m > 0 {
            // The list's own items jittered upwards within their spacings, the first beyond
            // the list's top by the fitted GPD (uniformly within the top spacing without a
            // fit).
            for _ in 0..poisson(&mut rng, m as f64) {
                let i = rng.random_range(0..m);
                let v: f32 = rng.random();
                let score = if i > 0 {
                    list[i] + v * (list[i - 1] - list[i])
                } else if let Some(t) = tail {
                    let g = t.gpd();
                    let p0 = 1.0 - g.survival(f64::from(list[0]) - t.u);
                    let y = g.quantile(p0 + f64::from(v) * (1.0 - p0));
                    ((t.u + y) as f32).max(list[0])
                } else {
                    let next = list.get(1).copied().unwrap_or(list[0]);
                    list[0] + v * (list[0] - next)
                };
                items.push((score, rng.random_range(0..h)));
            }
        } else if let Some(t) = tail {
            for _ in 0..poisson(&mut rng, n_above as f64) {
                let p: f64 = rng.random();
                let y = t.gpd().quantile(p);
                items.push(((t.u + y) as f32, rng.random_range(0..h)));
            }
        }
        if !mixed && m > n_above {
            for _ in 0..poisson(&mut rng, (m - n_above) as f64) {
                let i = rng.random_range(n_above..m);
                items.push((within_spacing(&mut rng, &list, i), rng.random_range(0..h)));
            }
        }
        items.sort_by(|a, b| b.0.total_cmp(&a.0));
        let bottom = list.last().copied().unwrap_or(f32::INFINITY);
        // Level 0: level 1 merged with the increment.
        let mut top = list.clone();
        top.extend(items.iter().map(|x| x.0));
        top.sort_by(|a, b| b.total_cmp(a));
        top.truncate(s.subsets[l0].kept(s.top_m));
        q.top_scores[l0] = top;
        for (r, &dst) in inc.iter().enumerate() {
            let mut v: Vec<f32> = items.iter().filter(|x| x.1 == r).map(|x| x.0).collect();
            v.truncate(s.subsets[dst].kept(s.top_m));
            q.top_scores[dst] = v;
        }
        // Counts, positives in descending score order (the summary's order).
        let mut below = vec![0u64; h];
        let mut prev_k: Option<u64> = None;
        for p in q.positives.iter_mut() {
            let per: Vec<u64> = if p.score >= bottom || m == 0 {
                (0..h)
                    .map(|r| {
                        items
                            .iter()
                            .take_while(|x| x.0 > p.score)
                            .filter(|x| x.1 == r)
                            .count() as u64
                    })
                    .collect()
            } else {
                let k = p.pool_above[l1];
                let base = prev_k.unwrap_or(m as u64);
                let delta = k.saturating_sub(base) as f64;
                prev_k = Some(k.max(base));
                for b in below.iter_mut() {
                    *b += poisson(&mut rng, delta / h as f64);
                }
                (0..h)
                    .map(|r| items.iter().filter(|x| x.1 == r).count() as u64 + below[r])
                    .collect()
            };
            let total: u64 = per.iter().sum();
            p.pool_above[l0] = p.pool_above[l1] + total;
            for (r, &dst) in inc.iter().enumerate() {
                p.pool_above[dst] = per[r];
            }
            if !p.pool_ties.is_empty() {
                p.pool_ties[l0] = p.pool_ties[l1];
                for &dst in &inc {
                    p.pool_ties[dst] = 0;
                }
            }
        }
    }
    out
}

fn main() {
    let (seeds, f, queries, families) = args::study();
    let draws: u64 = args::arg(5).map_or(2, |s| s.parse().expect("DRAWS"));
    let mixed = args::arg(6).is_some_and(|s| s == "mixed");
    let mut head =
        "family,held_out,seed,f,w_f,n_f,t_f,s_f,projected,measured,n_2f,t_2f,s_2f".to_string();
    for d in 0..draws {
        head += &format!(",w_{d},n_{d},t_{d},s_{d}");
    }
    println!("{head}");
    for run in runs::doubled_runs(&families, seeds, queries, f) {
        let runs::Run {
            family: fam,
            held_out,
            seed,
            sim,
            opts,
        } = run;
        let evt = match opts.estimator {
            Estimator::Evt(o) => o,
            Estimator::Count => EvtOptions::DEFAULT,
        };
        let parts = |s: &Summary| -> Option<WidthParts> {
            width_parts(&predict_without_next_step(s, &opts).expect("predict"))
        };
        let fmt = |w: Option<WidthParts>| {
            w.map_or("NaN,NaN,NaN,NaN".to_string(), |w| {
                format!(
                    "{:.5},{:.5},{:.5},{:.5}",
                    w.width, w.noise, w.trend, w.spread
                )
            })
        };
        let clock = std::time::Instant::now();
        let pf = parts(&level_summary(&sim.summary, 1).expect("level 1"))
            .expect("a realized interval at f");
        let predict_s = clock.elapsed().as_secs_f64();
        let p2 = parts(&sim.summary);
        let mut row = format!(
            "{fam},{held_out},{seed},{f},{},{:.5},{:.5},",
            fmt(Some(pf)),
            pf.projected(1),
            p2.map_or(f64::NAN, |w| w.width)
        );
        row += fmt(p2).split_once(',').expect("four fields").1;
        let clock = std::time::Instant::now();
        for d in 0..draws {
            row += ",";
            row += &fmt(parts(&stand_in(&sim.summary, &evt, d, mixed)));
        }
        eprintln!(
            "{fam} seed {seed}: prediction at f {predict_s:.2} s, {draws} stand-in draws \
                 {:.2} s",
            clock.elapsed().as_secs_f64()
        );
        println!("{row}");
    }
}
