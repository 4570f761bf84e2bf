//! `tailrank validate` on a small study: table, markdown report, JSON runs; bad presets fail.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// `tailrank validate ARGS -o MD --json JS`: its stdout (the run must succeed).
fn validate(args: &[&str], md: &Path, js: &Path) -> String {
    let out = [
        OsStr::new("-o"),
        md.as_os_str(),
        OsStr::new("--json"),
        js.as_os_str(),
    ];
    let args = args.iter().map(OsStr::new).chain(out);
    tailrank_test_support::cli::stdout_ok(args)
}

#[test]
fn validate_writes_report() {
    let d = tempfile::tempdir().unwrap();
    let md = d.path().join("report.md");
    let js = d.path().join("runs.json");
    let stdout = validate(
        &[
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
        ],
        &md,
        &js,
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

/// `validate --exam` on a tiny corpus: one table per fraction, tuning and held-out rows, and
/// every count of a family's row equal to the one recomputed here from its runs in `--json`.
#[test]
fn exam_tables_match_the_runs_counted_by_hand() {
    let d = tempfile::tempdir().unwrap();
    let md = d.path().join("exam.md");
    let js = d.path().join("runs.json");
    let stdout = validate(
        &[
            "validate",
            "--exam",
            "--seeds",
            "2",
            "--presets",
            "ilias-like,hubs",
            "--queries",
            "60",
            "--pool-size",
            "20000000",
            "--bootstrap",
            "50",
            "-q",
        ],
        &md,
        &js,
    );
    let report = std::fs::read_to_string(&md).unwrap();
    assert!(stdout.contains(&report), "{stdout}");
    assert!(report.contains("At f = 0.05:") && report.contains("At f = 0.01:"));
    // Read as plain JSON (a NaN of a run is written as null).
    let all: serde_json::Value = serde_json::from_slice(&std::fs::read(&js).unwrap()).unwrap();
    struct R {
        preset: String,
        fraction: f64,
        truth: f64,
        evt: f64,
        lo: f64,
        hi: f64,
        verdict: String,
    }
    let runs: Vec<R> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|r| R {
            preset: r["preset"].as_str().unwrap().into(),
            fraction: r["fraction"].as_f64().unwrap(),
            truth: r["truth"].as_f64().unwrap(),
            evt: r["evt"].as_f64().unwrap(),
            lo: r["realized"]["lo"].as_f64().unwrap(),
            hi: r["realized"]["hi"].as_f64().unwrap(),
            verdict: r["verdict"].as_str().unwrap().into(),
        })
        .collect();
    assert_eq!(runs.len(), 2 * 2 * 2, "2 families × 2 seeds × 2 fractions");
    // Cells of the tests' tables compared with a count (not both "–").
    let mut compared = 0;
    for f in [0.05, 0.01] {
        let section = report
            .split(&format!("At f = {f}:"))
            .nth(1)
            .unwrap()
            .split("At f = ")
            .next()
            .unwrap();
        for (side, family) in [("tuning", "ilias-like"), ("held out", "hubs")] {
            let of: Vec<_> = runs
                .iter()
                .filter(|r| r.preset == family && (r.fraction - f).abs() < 1e-12)
                .collect();
            assert_eq!(of.len(), 2);
            let covered = of
                .iter()
                .filter(|r| r.lo <= r.truth && r.truth <= r.hi)
                .count();
            let off: Vec<_> = of
                .iter()
                .filter(|r| (r.evt - r.truth).abs() > 0.01)
                .collect();
            let close: Vec<_> = of
                .iter()
                .filter(|r| (r.evt - r.truth).abs() < 0.005)
                .collect();
            let is = |r: &&&R, v: &str| r.verdict == v;
            let count = |a: usize, b: usize| {
                if b == 0 {
                    "–".to_string()
                } else {
                    format!("{a}/{b}")
                }
            };
            let mean_abs = of.iter().map(|r| (r.evt - r.truth).abs()).sum::<f64>() / 2.0;
            let line = section
                .lines()
                .find(|l| l.starts_with(&format!("| {side} | {family} |")))
                .unwrap_or_else(|| panic!("no row of {family} in\n{section}"));
            let cols: Vec<&str> = line.split('|').map(str::trim).collect();
            // | side | family | runs | mAP |e| | mAP e | hit@1 | Recall@k | covers | width | misses | false alarms |
            assert_eq!(cols[3], "2", "{line}");
            assert_eq!(cols[4], format!("{:.2}", 100.0 * mean_abs), "{line}");
            assert_eq!(cols[8], format!("{covered}/2"), "{line}");
            let misses = off.iter().filter(|r| is(r, "trusted")).count();
            let alarms = close.iter().filter(|r| is(r, "doubtful")).count();
            assert_eq!(cols[10], count(misses, off.len()), "{line}");
            assert_eq!(cols[11], count(alarms, close.len()), "{line}");
        }
        assert!(
            section.contains("**tuning (pooled)**") && section.contains("**held out (pooled)**")
        );
        // The verdict's tests: each test's firings on the far and the close runs of a side
        // (one family a side here: --presets ilias-like,hubs), recounted from the run file:
        // the `*_fired` fields and the trust statistics of the other two tests. This checks
        // the table's selection and counting; the firing rules are predict::trust's.
        let fires = |r: &serde_json::Value, test: &str| -> bool {
            let t = &r["trust"];
            match test {
                "falling estimate" => t["level_rises"]
                    .as_array()
                    .is_some_and(|v| v.iter().all(|x| x.as_f64().unwrap() >= 0.0)),
                "top spacing" => t["spacing"]["z"].as_f64().unwrap() > 3.0,
                "the verdict" => r["verdict"] == "doubtful",
                field => r[field].as_bool().unwrap(),
            }
        };
        for test in [
            "trend_fired",
            "in_sample_fired",
            "fit_choice_fired",
            "endpoint_fired",
            "falling estimate",
            "top spacing",
            "the verdict",
        ] {
            let row = match test {
                "trend_fired" => "trend",
                "in_sample_fired" => "in-sample check",
                "fit_choice_fired" => "fit choice",
                "endpoint_fired" => "endpoint",
                "the verdict" => "**the verdict**",
                other => other,
            };
            let line = section
                .lines()
                .find(|l| l.starts_with(&format!("| {row} |")))
                .unwrap_or_else(|| panic!("no row of the test {row} in\n{section}"));
            let cols: Vec<&str> = line.split('|').map(str::trim).collect();
            for (side, family, at) in [("tuning", "ilias-like", 2), ("held out", "hubs", 5)] {
                let of: Vec<&serde_json::Value> = all
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| {
                        r["preset"] == family && (r["fraction"].as_f64().unwrap() - f).abs() < 1e-12
                    })
                    .collect();
                let err = |r: &serde_json::Value| {
                    (r["evt"].as_f64().unwrap() - r["truth"].as_f64().unwrap()).abs()
                };
                let mut tally = |keep: &dyn Fn(f64) -> bool| {
                    let runs: Vec<_> = of.iter().filter(|r| keep(err(r))).collect();
                    let fired = runs.iter().filter(|r| fires(r, test)).count();
                    if runs.is_empty() {
                        "–".to_string()
                    } else {
                        compared += 1;
                        format!("{fired}/{}", runs.len())
                    }
                };
                assert_eq!(cols[at], tally(&|e| e > 0.01), "{side}: {line}");
                assert_eq!(cols[at + 1], tally(&|e| e < 0.005), "{side}: {line}");
            }
        }
    }
    assert!(compared > 0, "every cell of the tests' tables was empty");
}

/// Without a query bootstrap every verdict is `unchecked`: its tests did not run, so the exam
/// counts no miss and no false alarm (`–`, not `0/n`) and prints no tests' table.
#[test]
fn unchecked_verdicts_are_neither_misses_nor_false_alarms() {
    let d = tempfile::tempdir().unwrap();
    let (md, js) = (d.path().join("exam.md"), d.path().join("runs.json"));
    validate(
        &[
            "validate",
            "--exam",
            "--seeds",
            "2",
            "--presets",
            "ilias-like",
            "--queries",
            "40",
            "--pool-size",
            "20000000",
            "--bootstrap",
            "0",
            "-q",
        ],
        &md,
        &js,
    );
    let report = std::fs::read_to_string(&md).unwrap();
    let all: serde_json::Value = serde_json::from_slice(&std::fs::read(&js).unwrap()).unwrap();
    assert!(all
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["verdict"] == "unchecked"));
    // Some run is far (> 1 point) or close (< 0.5): its row would count it were it scored.
    assert!(all.as_array().unwrap().iter().any(|r| {
        let e = (r["evt"].as_f64().unwrap() - r["truth"].as_f64().unwrap()).abs();
        !(0.005..=0.01).contains(&e)
    }));
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("| tuning |"))
        .collect();
    assert_eq!(rows.len(), 4, "{report}");
    for row in rows {
        assert!(row.ends_with("| – | – |"), "{row}");
    }
    assert!(!report.contains("The verdict's tests"), "{report}");
}
