//! `tailrank validate` on a small study: table, markdown report, JSON runs; bad presets fail.

use std::process::Command;

#[test]
fn validate_writes_report() {
    let d = tempfile::tempdir().unwrap();
    let md = d.path().join("report.md");
    let js = d.path().join("runs.json");
    let o = Command::new(env!("CARGO_BIN_EXE_tailrank"))
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
}

#[test]
fn validate_rejects_unknown_preset() {
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_tailrank"))
        .args(["validate", "--presets", "nope", "--seeds", "1", "-o"])
        .arg(d.path().join("r.md"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown simulation preset \"nope\""), "{err}");
    assert!(!d.path().join("r.md").exists());
}
