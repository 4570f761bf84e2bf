//! `tailrank merge`: shard summaries merged by the binary equal the brute-force summary of the
//! union; overlapping or corrupted inputs fail with exit code 2 and a message naming the problem.

use tailrank_test_support::cli;
use tailrank_test_support::summary_util;

use std::path::Path;
use summary_util::{build, Rng, Settings, World};
use tailrank::summary::Summary;

fn tailrank(args: &[&Path]) -> std::process::Output {
    cli::output([Path::new("merge")].iter().chain(args))
}

#[test]
fn merge_cli_equals_whole_and_refuses_bad_inputs() {
    let d = tempfile::tempdir().unwrap();
    let w = World::random(21, 8, 20, 2000);
    let st = Settings {
        fraction: 0.5,
        min_fraction: 0.1,
        shards: 2,
        seed: 5,
        top_m: 60,
        pool_size: Some(50_000),
    };
    let mut rng = Rng(3);
    let mut parts = vec![Vec::new(); 3];
    for i in 0..w.pool_ids.len() {
        parts[rng.below(3) as usize].push(i);
    }
    let labels = ["p0.npy", "p1.npy", "p2.npy"];
    let named: Vec<(&str, Vec<usize>)> = labels.iter().copied().zip(parts).collect();
    let paths: Vec<_> = named
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = d.path().join(format!("part{i}"));
            build(&w, std::slice::from_ref(p), &st)
                .write(&path)
                .unwrap();
            path
        })
        .collect();
    let out = d.path().join("merged");
    let o = Path::new("-o");
    let r = tailrank(&[&paths[0], &paths[1], &paths[2], o, &out]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(Summary::read(&out).unwrap(), build(&w, &named, &st));

    // The same shard twice.
    let bad = d.path().join("bad");
    let r = tailrank(&[&paths[0], &paths[1], &paths[0], o, &bad]);
    assert_eq!(
        r.status.code(),
        Some(tailrank::ErrorKind::Mismatch.exit_code())
    );
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("overlapping shards") && err.contains("p0.npy"),
        "{err}"
    );
    assert!(!bad.exists());

    // A corrupted part is named.
    let f = paths[2].join("pos_scores.npy");
    let mut bytes = std::fs::read(&f).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    std::fs::write(&f, bytes).unwrap();
    let r = tailrank(&[&paths[0], &paths[2], o, &bad]);
    assert_eq!(
        r.status.code(),
        Some(tailrank::ErrorKind::Input.exit_code())
    );
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("part2") && err.contains("pos_scores.npy") && err.contains("checksum"),
        "{err}"
    );
    assert!(!bad.exists());
}
