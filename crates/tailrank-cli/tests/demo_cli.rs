//! `tailrank demo` runs end to end and prints the predicted and the true values: the full
//! table with `--details`, a headline of at most 12 lines by default.

use std::ffi::OsStr;
use std::path::Path;

/// `tailrank demo` on 150 queries (seed 3, 100 bootstrap replicates, no sample noise) into
/// `out`, with the flags `extra`: its stdout (the run must succeed).
fn demo(out: &Path, extra: &[&str]) -> String {
    let args = [
        "demo",
        "--queries",
        "150",
        "--bootstrap",
        "100",
        "--sample-noise",
        "0",
        "--seed",
        "3",
    ];
    let out = [OsStr::new("--out"), out.as_os_str()];
    let extra = extra.iter().map(OsStr::new);
    let args = args.iter().map(OsStr::new).chain(extra).chain(out);
    tailrank_test_support::cli::stdout_ok(args)
}

#[test]
fn demo_prints_predicted_and_true() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("demo");
    let stdout = demo(&out, &["--details"]);
    for needle in [
        "TRUE mAP",
        "PREDICTED",
        "baseline: count hardness",
        "baseline: evaluate-at-S",
        "interval",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
    let grab = |label: &str| -> f64 {
        let line = stdout.lines().find(|l| l.starts_with(label)).unwrap();
        line[label.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (truth, pred) = (
        grab("TRUE mAP (realized at N)"),
        grab("PREDICTED (evt level-selected, ER)"),
    );
    assert!(truth > 5.0 && truth < 70.0, "{truth}");
    assert!((pred - truth).abs() < 5.0, "{pred} vs {truth}");
    // Recall@k and hit@1 under the count law: the error column. With 150 queries the realized
    // hit@1 itself varies by ~4 points around its expectation (Bernoulli per query), so the
    // bound is loose; the expected-rank plug-in was off by 25+ points here.
    let error = |label: &str| -> f64 {
        let line = stdout.lines().find(|l| l.starts_with(label)).unwrap();
        line[label.len()..]
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(error("PREDICTED hit@1").abs() < 10.0, "{stdout}");
    assert!(error("PREDICTED Recall@1000").abs() < 5.0, "{stdout}");
    // The files it names exist and are what they claim to be.
    let s = tailrank::summary::Summary::read(&out.join("summary")).unwrap();
    assert_eq!(s.queries.len(), 150);
    let t = tailrank::simulate::Truth::read(&out.join("truth.json")).unwrap();
    assert!((100.0 * t.map_at_k - truth).abs() < 0.006);
    let p: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("prediction.json")).unwrap()).unwrap();
    assert!(p.is_object());
    // Same seed, same numbers.
    let s2 = demo(&out, &["--details"]);
    let pick = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with("TRUE") || l.starts_with("PREDICTED"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(pick(&stdout), pick(&s2));
}

#[test]
fn demo_headline_is_short_and_carries_the_prediction() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("demo");
    let stdout = demo(&out, &[]);
    assert!(stdout.lines().count() <= 12, "{stdout}");
    let p: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("prediction.json")).unwrap()).unwrap();
    let t = tailrank::simulate::Truth::read(&out.join("truth.json")).unwrap();
    let pc = |v: f64| format!("{:.2}", 100.0 * v);
    let r = &p["realized"]["map_at_k_realized_interval"];
    for needle in [
        format!("{}%", pc(p["map_at_k"].as_f64().unwrap())),
        format!(
            "[{}, {}]",
            pc(r[0].as_f64().unwrap()),
            pc(r[1].as_f64().unwrap())
        ),
        format!("hit@1 {}%", pc(p["hit_at_1"].as_f64().unwrap())),
        format!("Recall@1000 {}%", pc(p["recall_at_k"].as_f64().unwrap())),
        format!("known truth: mAP@1000 {}%", pc(t.map_at_k)),
        format!("next step: {}", p["next_step"]["message"].as_str().unwrap()),
    ] {
        assert!(stdout.contains(&needle), "missing {needle:?} in\n{stdout}");
    }
    // The next step's grow command names the demo's summary folder (it printed SUMMARY).
    let commands = p["next_step"]["commands"].as_array().unwrap();
    let grow = (commands.iter().filter_map(|c| c.as_str()))
        .find(|c| c.starts_with("tailrank grow"))
        .expect("this demo's verdict doubts: a grow command");
    let summary = out.join("summary").display().to_string();
    assert!(
        grow.starts_with(&format!("tailrank grow {summary} ")),
        "{grow}"
    );
}

/// The headline's re-run command carries the demo's non-default options (here
/// `--bootstrap 100 --sample-noise 0 --seed 3`): run as printed, `predict` gives the same
/// estimate and the same realized interval.
#[test]
fn the_printed_rerun_command_reproduces_the_prediction() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("demo");
    let stdout = demo(&out, &[]);
    let files = stdout.lines().find(|l| l.starts_with("files: ")).unwrap();
    let command = files
        .split("(re-run: tailrank ")
        .nth(1)
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("no re-run command in {files:?}"));
    assert!(
        command.contains("--sample-noise 0") && command.contains("--seed 3"),
        "{command}"
    );
    let rerun = tailrank_test_support::cli::stdout_ok(command.split_whitespace());
    let line = |s: &str, start: &str| s.lines().find(|l| l.starts_with(start)).map(String::from);
    for start in ["predicted mAP@", "realized mAP@"] {
        assert!(line(&stdout, start).is_some(), "{stdout}");
        assert_eq!(line(&rerun, start), line(&stdout, start));
    }
}

/// Without a query bootstrap the full table says there is no interval over query sets (it
/// printed "[NaN, NaN] misses the truth").
#[test]
fn demo_without_a_bootstrap_names_the_missing_interval() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("demo");
    let args = [
        "demo",
        "--queries",
        "20",
        "--bootstrap",
        "0",
        "--details",
        "--out",
    ];
    let args = args.iter().map(OsStr::new).chain([out.as_os_str()]);
    let text = tailrank_test_support::cli::stdout_ok(args);
    let line = text.lines().find(|l| l.starts_with("PREDICTED (")).unwrap();
    assert!(
        line.ends_with("no interval over query sets (no query bootstrap)"),
        "{text}"
    );
    assert!(!text.contains("NaN"), "{text}");
}
