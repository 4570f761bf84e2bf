//! Exploration aid (issue #15): per nested level, every positive's evt x̂ and branch, as CSV on
//! stdout: `level,query,pos,x_hat,branch,u,sigma,xi,n_u`. Usage: `hardness_levels SUMMARY_DIR
//! [FIT_TOP QUANTILE [LEVELS]]` (the fit's top-M and threshold quantile, default the paper's;
//! LEVELS, the number of nesting levels written from level 0, default all).
use tailrank::hardness::{estimate_summary, Branch, Estimator, EvtOptions};
fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: hardness_levels SUMMARY_DIR");
    let s = tailrank::summary::Summary::read(std::path::Path::new(&dir)).expect("summary");
    let arg = |i: usize| std::env::args().nth(i);
    let mut evt = EvtOptions::DEFAULT;
    if let (Some(m), Some(q)) = (arg(2), arg(3)) {
        evt.top_m = m.parse().expect("FIT_TOP");
        evt.quantile = q.parse().expect("QUANTILE");
    }
    let levels = arg(4).map_or(usize::MAX, |l| l.parse().expect("LEVELS"));
    println!("level,query,pos,x_hat,branch,u,sigma,xi,n_u");
    for (lv, &sub) in s.level_indices().iter().enumerate().take(levels) {
        let qs = estimate_summary(&s, sub, &Estimator::Evt(evt)).expect("estimate");
        for (qi, q) in qs.iter().enumerate() {
            let (u, sg, xi, nu) = match &q.tail {
                Some(t) => (t.u, t.fit.gpd.sigma, t.fit.gpd.xi, t.n_u),
                None => (f64::NAN, f64::NAN, f64::NAN, 0),
            };
            for (pi, p) in q.positives.iter().enumerate() {
                let b = match p.branch {
                    Branch::Count => 0,
                    Branch::Tail => 1,
                    Branch::Immune => 2,
                };
                println!("{lv},{qi},{pi},{:e},{b},{u},{sg},{xi},{nu}", p.x_hat);
            }
        }
    }
}
