//! Exploration aid (issue #15): per nested level, every positive's evt x̂ and branch, as CSV on
//! stdout: `level,query,pos,x_hat,branch,u,sigma,xi,n_u`. Usage: `hardness_levels SUMMARY_DIR`.
use tailrank::hardness::{estimate_summary, Branch, Estimator, EvtOptions};
fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: hardness_levels SUMMARY_DIR");
    let s = tailrank::summary::Summary::read(std::path::Path::new(&dir)).expect("summary");
    println!("level,query,pos,x_hat,branch,u,sigma,xi,n_u");
    for (lv, &sub) in s.level_indices().iter().enumerate() {
        let qs = estimate_summary(&s, sub, &Estimator::Evt(EvtOptions::DEFAULT)).expect("estimate");
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
