//! `tailrank validate` on a small study: table, markdown report, JSON runs; bad presets fail.

use std::process::Command;

#[test]
fn validate_writes_report() {
    let d = tempfile::tempdir().unwrap();
    let md = d.path().join("report.md");
    let js = d.path().join("runs.json");
    let o = Command::new(tailrank_test_support::cli::bin())
        .args([
            "validate",
            "--seeds",
            "2",
            "--presets",
            "ilias-like,mixture-tail",
            "--queries",
            "80",
            "--pool-size",
            "20000000",
            "--fractions",
            "0.02,0.05",
            "--bootstrap",
            "50",
            "-q",
            "-o",
        ])
        .arg(&md)
        .arg("--json")
        .arg(&js)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("ilias-like") && stdout.contains("mixture-tail"));
    assert!(stdout.contains("coverage"));
    let text = std::fs::read_to_string(&md).unwrap();
    for needle in [
        "# tailrank validation report",
        "| evt |",
        "| count |",
        "| evaluate-at-S |",
        "Convergence",
        "endpoint test: fired in ",
    ] {
        assert!(text.contains(needle), "missing {needle:?}");
    }
    let runs: serde_json::Value = serde_json::from_slice(&std::fs::read(&js).unwrap()).unwrap();
    // 2 presets × 2 seeds × 2 fractions (the main fraction is one of them).
    assert_eq!(runs["runs"].as_array().unwrap().len(), 8);
    for r in runs["runs"].as_array().unwrap() {
        let (t, e) = (
            r["truth"].as_f64().unwrap(),
            r["evaluate_at_s"].as_f64().unwrap(),
        );
        assert!(e >= t, "evaluate-at-S is never below the truth at N");
    }
    // The exam's totals, recounted from the run file: hits are doubtful runs off by more than
    // 1 point, false alarms doubtful runs under 0.5 point, at the main fraction (0.05).
    let main: Vec<&serde_json::Value> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| (r["fraction"].as_f64().unwrap() - 0.05).abs() < 1e-12)
        .collect();
    let (mut hit, mut big, mut fa, mut small, mut cover, mut with) = (0, 0, 0, 0, 0, 0);
    for r in &main {
        let err = (r["evt"].as_f64().unwrap() - r["truth"].as_f64().unwrap()).abs();
        let doubtful = r["verdict"].as_str() == Some("doubtful");
        if err > 0.01 {
            big += 1;
            hit += usize::from(doubtful);
        } else if err < 0.005 {
            small += 1;
            fa += usize::from(doubtful);
        }
        let t = r["truth"].as_f64().unwrap();
        if let (Some(lo), Some(hi)) = (r["realized"]["lo"].as_f64(), r["realized"]["hi"].as_f64()) {
            with += 1;
            cover += usize::from(lo <= t && t <= hi);
        }
    }
    assert!(with > 0, "no run carries a realized interval");
    assert!(text.contains("## The exam at f = 0.05"), "{text}");
    for needle in [
        format!("the verdict flags {hit}/{big} "),
        format!("and {fa}/{small} of the runs under"),
        format!("the realized interval covers {cover}/{with} "),
    ] {
        assert!(text.contains(&needle), "missing {needle:?} in the exam");
        assert!(stdout.contains(&needle), "missing {needle:?} in the table");
    }
}

#[test]
fn validate_rejects_unknown_preset() {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(tailrank_test_support::cli::bin())
        .args(["validate", "--presets", "nope", "--seeds", "1", "-o"])
        .arg(d.path().join("r.md"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown simulation preset \"nope\""), "{err}");
    assert!(!d.path().join("r.md").exists());
}

#[test]
fn zero_queries_and_flags_that_do_not_apply_are_refused_before_writing() {
    let d = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(tailrank_test_support::cli::bin())
            .args(args)
            .output()
            .unwrap()
    };
    let md = d.path().join("v0.md");
    let o = run(&[
        "validate",
        "--presets",
        "ilias-like",
        "--queries",
        "0",
        "-q",
        "-o",
        md.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("at least one query (got 0)"), "{err}");
    assert!(!md.exists());
    let sim = d.path().join("sim0");
    let o = run(&["simulate", "--queries", "0", "-o", sim.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("at least one query (got 0)"), "{err}");
    assert!(!sim.exists(), "a refused simulation leaves no folder");
    // The vector validation runs the families' own configurations: a preset's --queries or
    // --fraction there would be ignored, so it is refused.
    for flag in [["--queries", "5"], ["--fraction", "0.01"]] {
        let o = run(&[
            "simulate",
            "--vectors",
            "--validate",
            flag[0],
            flag[1],
            "-o",
            d.path().join("v").to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("cannot be used with"), "{err}");
        assert!(!d.path().join("v").exists());
    }
}
