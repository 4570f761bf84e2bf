//! `tailrank predict` end to end: table and JSON from a summary folder, the hardness artifact
//! round trip, and clear errors for bad input.

use tailrank_test_support::predict_support;

use predict_support::{summary_with_a_move, synth, SynthOpts};
use std::path::Path;
use tailrank::predict::{predict, PredictOptions};

use tailrank_test_support::cli::tailrank;

fn write_summary(dir: &Path) -> tailrank::summary::Summary {
    let s = synth(&SynthOpts {
        queries: 30,
        sample: 8000,
        ..SynthOpts::default()
    })
    .summary;
    s.write(dir).unwrap();
    s
}

#[test]
fn table_and_json_from_a_summary() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    let s = write_summary(&sdir);
    let sd = sdir.to_str().unwrap();
    let (ok, out, err) = tailrank(&[
        "predict",
        "--summary",
        sd,
        "--bootstrap",
        "200",
        "--sample-noise",
        "20",
        "--details",
    ]);
    assert!(ok, "{err}");
    // `--details` is the full table, byte for byte.
    let full = predict(
        &s,
        &PredictOptions {
            bootstrap: 200,
            sample_noise: 20,
            ..PredictOptions::default()
        },
    )
    .unwrap();
    assert_eq!(out, tailrank::report::prediction_table(&full));
    for needle in [
        "predicted mAP@1000",
        "BCa",
        "evaluate-at-S",
        "count (K/S)",
        "power-law",
        "budget",
        "drift",
        "tail report",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let (ok, out, err) = tailrank(&[
        "predict",
        "--summary",
        sd,
        "--bootstrap",
        "200",
        "--sample-noise",
        "20",
        "--json",
        "--seed",
        "4",
    ]);
    assert!(ok, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lib = predict(
        &s,
        &PredictOptions {
            bootstrap: 200,
            sample_noise: 20,
            seed: 4,
            ..PredictOptions::default()
        },
    )
    .unwrap();
    let m = j["map_at_k"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&m));
    assert_eq!(m, lib.estimate);
    assert_eq!(j["map_at_k_bca_interval"][0].as_f64().unwrap(), lib.bca.lo);
    assert_eq!(
        j["baselines"]["count_map_at_k"].as_f64().unwrap(),
        lib.baselines.count
    );
    assert_eq!(j["pool_size"].as_u64().unwrap(), 400_000);
    assert_eq!(j["queries"].as_array().unwrap().len(), 30);
    assert_eq!(j["levels"].as_array().unwrap().len(), 3);
    assert!(j["drift"]["shards"].as_array().unwrap().len() == 4);
    // The default headline: at most 12 lines, carrying the JSON's numbers (percent, two
    // decimals) and its next step.
    let (ok, head, err) = tailrank(&[
        "predict",
        "--summary",
        sd,
        "--bootstrap",
        "200",
        "--sample-noise",
        "20",
        "--seed",
        "4",
    ]);
    assert!(ok, "{err}");
    assert!(head.lines().count() <= 12, "{head}");
    let pc = |v: &serde_json::Value| format!("{:.2}", 100.0 * v.as_f64().unwrap());
    let r = &j["realized"]["map_at_k_realized_interval"];
    for needle in [
        format!("{}%", pc(&j["map_at_k"])),
        format!("[{}, {}]", pc(&r[0]), pc(&r[1])),
        format!("{} points wide", pc(&j["realized"]["width"])),
        format!("hit@1 {}%", pc(&j["hit_at_1"])),
        format!("Recall@1000 {}%", pc(&j["recall_at_k"])),
        format!("verdict: {}", j["trust"]["verdict"].as_str().unwrap()),
        format!("next step: {}", j["next_step"]["message"].as_str().unwrap()),
    ] {
        assert!(head.contains(&needle), "missing {needle:?} in\n{head}");
    }
    assert!(!head.contains("tail report"), "{head}");
}

#[test]
fn hardness_artifact_predicts_at_any_pool_size() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    let s = write_summary(&sdir);
    let h = d.path().join("hardness.csv");
    let (ok, _, err) = tailrank(&[
        "predict",
        "--summary",
        sdir.to_str().unwrap(),
        "--bootstrap",
        "50",
        "--sample-noise",
        "0",
        "--hardness-out",
        h.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = tailrank(&[
        "predict",
        "--hardness",
        h.to_str().unwrap(),
        "--pool-size",
        "2000000",
        "--bootstrap",
        "50",
        "--json",
    ]);
    assert!(ok, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lib = predict(
        &s,
        &PredictOptions {
            pool_size: Some(2_000_000),
            bootstrap: 50,
            sample_noise: 0,
            ..PredictOptions::default()
        },
    )
    .unwrap();
    assert!((j["map_at_k"].as_f64().unwrap() - lib.estimate).abs() < 1e-9);
    assert!(j["baselines"]["power_law_map_at_k"].is_null());
    assert!(j["budget"].is_null() && j["drift"].is_null());
    let (ok, table, _) = tailrank(&[
        "predict",
        "--hardness",
        h.to_str().unwrap(),
        "--pool-size",
        "2000000",
        "--bootstrap",
        "50",
        "--details",
    ]);
    assert!(ok);
    assert!(table.contains("n/a"), "{table}");
}

/// By default (and with `--excess-centre`) the estimate moves to the centre of the endpoint
/// test's excess (this simulated summary has one); with `--no-excess-centre` it is the tail
/// model's. A hardness file carries the move, applied unless `--no-excess-centre` is given.
#[test]
fn excess_centre_is_the_default_and_travels_with_the_hardness_file() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    let s = summary_with_a_move();
    s.write(&sdir).unwrap();
    let h = d.path().join("hardness.csv");
    let sd = sdir.to_str().unwrap();
    let base = ["--bootstrap", "100", "--sample-noise", "0", "--json"];
    let run = |input: &[&str], extra: &[&str]| {
        let args: Vec<&str> = ["predict"]
            .iter()
            .chain(input)
            .chain(&base)
            .chain(extra)
            .copied()
            .collect();
        let (ok, out, err) = tailrank(&args);
        assert!(ok, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let lib = |excess_centre: bool| {
        predict(
            &s,
            &PredictOptions {
                bootstrap: 100,
                sample_noise: 0,
                excess_centre,
                ..PredictOptions::default()
            },
        )
        .unwrap()
    };
    let (plain, moved) = (lib(false), lib(true));
    let c = moved
        .excess_centre
        .expect("this summary's levels find an excess");
    assert_eq!(c.unmoved_map_at_k, plain.estimate);
    let j = run(&["--summary", sd], &["--no-excess-centre"]);
    assert!(j["excess_centre"].is_null());
    assert!((j["map_at_k"].as_f64().unwrap() - plain.estimate).abs() < 1e-12);
    let hp = h.to_str().unwrap();
    let j = run(&["--summary", sd], &["--hardness-out", hp]);
    assert!((j["map_at_k"].as_f64().unwrap() - moved.estimate).abs() < 1e-12);
    assert_eq!(j["excess_centre"]["weight"].as_f64(), Some(c.weight));
    let named = run(&["--summary", sd], &["--excess-centre"]);
    assert_eq!(named["map_at_k"], j["map_at_k"]);
    for flag in [&[][..], &["--excess-centre"][..]] {
        let j = run(&["--hardness", hp], flag);
        assert!((j["map_at_k"].as_f64().unwrap() - moved.estimate).abs() < 1e-9);
    }
    let j = run(&["--hardness", hp], &["--no-excess-centre"]);
    assert!(j["excess_centre"].is_null());
    assert!((j["map_at_k"].as_f64().unwrap() - plain.estimate).abs() < 1e-9);
    let (ok, _, err) = tailrank(&[
        "predict",
        "--summary",
        sd,
        "--excess-centre",
        "--no-excess-centre",
    ]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
}

#[test]
fn bad_input_is_reported_clearly() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    write_summary(&sdir);
    let sd = sdir.to_str().unwrap();
    let (ok, _, err) = tailrank(&["predict", "--summary", sd, "--pool-size", "100"]);
    assert!(!ok && err.contains("smaller than the sample size"), "{err}");

    // Hardness file with a missing column.
    let h = d.path().join("h.csv");
    tailrank(&[
        "predict",
        "--summary",
        sd,
        "--bootstrap",
        "0",
        "--sample-noise",
        "0",
        "--hardness-out",
        h.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&h).unwrap();
    let broken: String = text.replace(",x_hat,", ",xhat,");
    let hb = d.path().join("broken.csv");
    std::fs::write(&hb, broken).unwrap();
    let (ok, _, err) = tailrank(&[
        "predict",
        "--hardness",
        hb.to_str().unwrap(),
        "--pool-size",
        "1000000",
    ]);
    assert!(
        !ok && err.contains("broken.csv") && err.contains("x_hat"),
        "{err}"
    );

    // Unknown summary version.
    let man = sdir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&man).unwrap()).unwrap();
    m["format_version"] = serde_json::json!(99);
    std::fs::write(&man, m.to_string()).unwrap();
    let (ok, _, err) = tailrank(&["predict", "--summary", sd]);
    assert!(!ok && err.contains("99"), "{err}");

    let (ok, _, err) = tailrank(&["predict"]);
    assert!(!ok && err.contains("--summary"), "{err}");
}

#[test]
fn compare_two_summaries() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("a");
    write_summary(&sdir);
    let a = sdir.to_str().unwrap();
    let (ok, out, err) = tailrank(&[
        "compare",
        a,
        a,
        "--pool-size",
        "1000000",
        "--bootstrap",
        "100",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("A - B"), "{out}");
    assert!(out.contains("verdict: not separated"), "{out}");
    assert!(out.lines().count() <= 12, "{out}");
    let head = out.clone();
    let (ok, full, err) = tailrank(&[
        "compare",
        a,
        a,
        "--pool-size",
        "1000000",
        "--bootstrap",
        "100",
        "--details",
    ]);
    assert!(ok, "{err}");
    assert!(full.contains("A - B from level 0"), "{full}");
    let (ok, out, err) = tailrank(&["compare", a, a, "--pool-size", "1000000", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["difference"].as_f64(), Some(0.0));
    assert_eq!(v["separated"].as_bool(), Some(false));
    // The headline's hit@1 and Recall@k are the JSON's; without the move to the centre of
    // the excess they are predict's own for the same summary.
    let a_line = head.lines().find(|l| l.starts_with("  A ")).unwrap();
    let hit = v["hit_at_1_a"].as_f64().unwrap();
    let recall = v["recall_at_k_a"].as_f64().unwrap();
    assert!(
        a_line.contains(&format!(
            "hit@1 {:.2}%, Recall@1000 {:.2}%",
            100.0 * hit,
            100.0 * recall
        )),
        "{a_line} vs {v}"
    );
    assert_eq!(v["hit_at_1_a"], v["hit_at_1_b"]);
    let (ok, pj, err) = tailrank(&[
        "predict",
        "--summary",
        a,
        "--pool-size",
        "1000000",
        "--json",
    ]);
    assert!(ok, "{err}");
    let p: serde_json::Value = serde_json::from_str(&pj).unwrap();
    if p["excess_centre"].is_null() {
        assert!(
            (hit - p["hit_at_1"].as_f64().unwrap()).abs() < 1e-12,
            "{hit} vs {p}"
        );
        assert!((recall - p["recall_at_k"].as_f64().unwrap()).abs() < 1e-12);
    }
    let (ok, _, err) = tailrank(&["compare", a, d.path().join("missing").to_str().unwrap()]);
    assert!(!ok && err.contains("missing"), "{err}");
}

/// `--fit-top` is the number of top sample scores the tail is fitted on; `--top-m`, its former
/// name, still gives the same prediction with a deprecation warning on stderr, and `--help`
/// shows only the new name.
#[test]
fn fit_top_and_its_former_name_top_m() {
    use tailrank::hardness::{Estimator, EvtOptions};
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    let s = write_summary(&sdir);
    let sd = sdir.to_str().unwrap();
    let m = (s.top_m / 2).to_string();
    let run = |flag: &str| {
        let base = [
            "predict",
            "--summary",
            sd,
            "--bootstrap",
            "0",
            "--sample-noise",
            "0",
        ];
        let (ok, out, err) = tailrank(&[&base[..], &["--json", flag, &m]].concat());
        assert!(ok, "{flag}: {err}");
        let warned = err.contains("warning: --top-m is deprecated here: it is now --fit-top");
        assert_eq!(warned, flag == "--top-m", "{flag}: {err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let new = run("--fit-top");
    assert_eq!(new, run("--top-m"));
    let lib = predict(
        &s,
        &PredictOptions {
            bootstrap: 0,
            sample_noise: 0,
            estimator: Estimator::Evt(EvtOptions {
                top_m: s.top_m / 2,
                ..EvtOptions::DEFAULT
            }),
            ..PredictOptions::default()
        },
    )
    .unwrap();
    assert_eq!(new["map_at_k"].as_f64().unwrap(), lib.estimate);
    let (_, help, _) = tailrank(&["predict", "--help"]);
    assert!(
        help.contains("--fit-top <") && !help.contains("--top-m <"),
        "{help}"
    );
}

/// A summary that holds the whole pool (f = 1, S = N) has its metrics exactly: the headline
/// leads with the exact mAP@k, the value `eval --summary` prints, beside the model's reading.
#[test]
fn an_exact_scan_leads_with_the_exact_metric() {
    let d = tempfile::tempdir().unwrap();
    let v = d.path().join("v");
    let full = d.path().join("full");
    let (v, full) = (v.to_str().unwrap(), full.to_str().unwrap());
    tailrank_test_support::cli::stdout_ok([
        "simulate",
        "--vectors",
        "--pool-size",
        "3000",
        "--dim",
        "16",
        "--instances",
        "10",
        "-o",
        v,
    ]);
    let file = |f: &str| format!("{v}/{f}");
    tailrank_test_support::cli::stdout_ok([
        "scan",
        "--queries",
        &file("queries.npy"),
        "--core",
        &file("core.npy"),
        "--gt",
        &file("gt.json"),
        "--pool",
        &file("pool.npy"),
        "--fraction",
        "1",
        "--top-m",
        "200",
        "-o",
        full,
    ]);
    let (ok, out, err) = tailrank(&["predict", "--summary", full, "--k", "100"]);
    assert!(ok, "{err}");
    let eval100 =
        tailrank_test_support::cli::stdout_ok(["eval", "--summary", full, "--metric", "map@100"]);
    let exact100 = eval100
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().last())
        .unwrap();
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("exact mAP@100 at N = 3,000: {exact100}%")),
        "{first} (eval: {eval100})"
    );
    assert!(out.contains("(exact: the whole pool)"), "{out}");
}

/// A `--fit-top` (or `--quantile`) that leaves no query with a fitted tail makes the evt
/// estimate the count estimate: the report's warnings say so; the defaults do not warn.
#[test]
fn no_fitted_tail_is_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    write_summary(&sdir);
    let base = [
        "predict",
        "--summary",
        sdir.to_str().unwrap(),
        "--bootstrap",
        "0",
    ];
    let needle = "no query's tail could be fitted (fit-top 2";
    let fixed = ["--fit", "fixed", "--json"];
    let (ok, out, err) = tailrank(&[&base[..], &fixed, &["--fit-top", "2"]].concat());
    assert!(ok && out.contains(needle), "{out}{err}");
    let (ok, out, err) = tailrank(&[&base[..], &fixed].concat());
    assert!(ok && !out.contains("no query's tail"), "{err}");
}
