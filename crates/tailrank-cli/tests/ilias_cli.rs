//! `tailrank ilias` end to end on a synthetic ILIAS-shaped folder (h5py writes the id lists,
//! taxonomy and the extractor's HDF5 layout: `tests/data/ilias_synth.py`). The binary's JSON
//! report must equal the official evaluation logic replicated in Python with scikit-learn
//! (`tests/data/ilias_reference.py`) for the overall, scale, clutter, category and subcategory
//! numbers of i2i and t2i, in exact mode; in prediction mode (`--fraction`) the per-group
//! evaluate-at-S and count-baseline numbers must equal the reference on the sample gallery and
//! the count map, and the prediction block must be present. Broken feature folders fail with a
//! message naming the file.

use tailrank_test_support::python as common;

use serde_json::Value;
use std::path::Path;
use tailrank::metric::evaluate_summary;
use tailrank::summary::Summary;

mod ilias_common;
use ilias_common::*;

/// Write the synthetic folders `ds_<variant>` / `feat_<variant>` of every variant, with one
/// Python process.
fn make_all(dir: &Path, variants: &[&str]) -> Vec<(String, String)> {
    let script = dir.join("ilias_synth.py");
    std::fs::write(&script, SYNTH).unwrap();
    let driver = "import sys\nsrc = open(sys.argv[1]).read()\nbase = sys.argv[2]\n\
                  for v in sys.argv[3:]:\n    \
                  sys.argv = ['ilias_synth.py', f'{base}/ds_{v}', f'{base}/feat_{v}', v]\n    \
                  exec(compile(src, 'ilias_synth.py', 'exec'), {'__name__': '__main__'})\n";
    let mut args = vec![
        script.to_str().unwrap().to_string(),
        dir.to_str().unwrap().to_string(),
    ];
    args.extend(variants.iter().map(|v| v.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run_python(driver, &refs);
    variants
        .iter()
        .map(|v| {
            (
                dir.join(format!("ds_{v}")).to_str().unwrap().to_string(),
                dir.join(format!("feat_{v}")).to_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `tailrank ilias` in prediction mode on `ds`/`feat` at cut `k`, sample fraction `f` and
/// hash seed `seed`, with `bootstrap` query-bootstrap replicates, no sample noise, JSON out.
fn prediction_args<'a>(
    ds: &'a str,
    feat: &'a str,
    k: &'a str,
    f: &'a str,
    seed: &'a str,
    bootstrap: &'a str,
) -> Vec<&'a str> {
    vec![
        "ilias",
        "--dataset-dir",
        ds,
        "--features",
        feat,
        "--k",
        k,
        "--fraction",
        f,
        "--seed",
        seed,
        "--bootstrap",
        bootstrap,
        "--sample-noise",
        "0",
        "--json",
    ]
}

#[test]
fn ilias_exact_and_predicted_match_the_official_logic() {
    let dir = tempfile::tempdir().unwrap();
    let (ds, feat) = make_all(dir.path(), &["ok"]).remove(0);
    let k = "100";

    // Exact mode.
    let reference: Value =
        serde_json::from_str(&common::run_python(REFERENCE, &[&ds, &feat, k, "1", "0"])).unwrap();
    assert!(
        reference["min_gap"].as_f64().unwrap() > 3e-6,
        "synthetic scores too close to compare f32 and f64 rankings"
    );
    let out = tailrank(&[
        "ilias",
        "--dataset-dir",
        &ds,
        "--features",
        &feat,
        "--k",
        k,
        "--json",
        "--model",
        "synthetic",
        "--summary-out",
        dir.path().join("summaries").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["mode"], "exact");
    assert_eq!(r["pool_size"].as_u64(), reference["N"].as_u64());
    assert_eq!(r["sample_size"].as_u64(), reference["N"].as_u64());
    let sets = r["sets"].as_array().unwrap();
    assert_eq!(sets.len(), 2);
    for set in sets {
        let name = set["query_set"].as_str().unwrap();
        let want = &reference[name]["official"];
        compare_set(
            set,
            want,
            "map_at_k",
            set["map_at_k"].as_f64().unwrap(),
            &format!("exact {name}"),
        );
        // The breakdowns are not trivially equal to the overall number.
        assert!(set["scale"].as_array().unwrap().len() == 4);
    }
    // The kept summaries give the same overall numbers through `metric::evaluate_summary`.
    for set in sets {
        let name = set["query_set"].as_str().unwrap();
        let summary = Summary::read(&dir.path().join("summaries").join(name)).unwrap();
        assert_eq!(summary.query_set, name);
        assert_eq!(summary.model, "synthetic");
        let e = evaluate_summary(&summary, 100).unwrap();
        close(
            e.sets[0].map_at_k,
            set["map_at_k"].as_f64().unwrap(),
            "summary",
        );
    }
    assert_eq!(sets[0]["task"], "i2i");
    assert_eq!(sets[1]["task"], "t2i");

    // The human table shows both tasks in percent.
    let out = tailrank(&[
        "ilias",
        "--dataset-dir",
        &ds,
        "--features",
        &feat,
        "--k",
        k,
        "--queries",
        "text",
    ]);
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let t2i = reference["text"]["official"]["map"].as_f64().unwrap();
    assert!(table.contains(&format!("{t2i:.2}")), "{table}");
    assert!(table.contains("t2i") && !table.contains("i2i"), "{table}");

    // Prediction mode: half of the distractors.
    let (f, seed) = ("0.5", "3");
    let reference: Value =
        serde_json::from_str(&common::run_python(REFERENCE, &[&ds, &feat, k, f, seed])).unwrap();
    let predicted = |extra: &[&str]| {
        let mut args = prediction_args(&ds, &feat, k, f, seed, "200");
        args.extend_from_slice(extra);
        tailrank(&args)
    };
    let out = predicted(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["mode"], "prediction");
    // Without --json: the headline, at most 12 lines, with each set's estimate and next step.
    let mut head_args = prediction_args(&ds, &feat, k, f, seed, "200");
    head_args.retain(|a| *a != "--json");
    let head = String::from_utf8(tailrank(&head_args).stdout).unwrap();
    assert!(head.lines().count() <= 12, "{head}");
    for set in r["sets"].as_array().unwrap() {
        let p = &set["prediction"];
        let est = format!("{:.2}%", 100.0 * p["map_at_k"].as_f64().unwrap());
        let next = p["next_step"]["message"].as_str().unwrap();
        assert!(head.contains(&est) && head.contains(next), "{head}");
    }
    // A set that grows gets the way to grow an ILIAS run: the increment to embed, the rerun.
    let grows: Vec<f64> = r["sets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["prediction"]["next_step"]["action"] == "grow")
        .map(|s| s["prediction"]["next_step"]["fraction"].as_f64().unwrap())
        .collect();
    assert!(!grows.is_empty(), "this run's sets grow (f = {f}): {head}");
    match grows.iter().copied().reduce(f64::max) {
        Some(to) if to < 1.0 => {
            let want = format!("--fraction {to} --after {f} --seed {seed} -o new_ids.txt");
            assert!(head.contains(&want), "{head}");
            assert!(
                head.contains(&format!("rerun with --fraction {to}")),
                "{head}"
            );
        }
        Some(_) => assert!(head.contains("rerun without --fraction"), "{head}"),
        None => assert!(!head.contains("to grow:"), "{head}"),
    }
    // --html: one page, each set's section carrying its prediction's numbers as the JSON's.
    let page = std::path::Path::new(&ds).with_file_name("ilias_report.html");
    let out = predicted(&["--html", page.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    for set in r["sets"].as_array().unwrap() {
        let task = set["task"].as_str().unwrap();
        let p = &set["prediction"];
        for (id, v) in [("estimate", &p["map_at_k"]), ("hit-at-1", &p["hit_at_1"])] {
            let span = format!(
                r#"id="{task}-{id}" data-json="{v}">{:.2}</span>"#,
                100.0 * v.as_f64().unwrap()
            );
            assert!(html.contains(&span), "{span} not in the page");
        }
    }
    assert_eq!(r["sample_size"].as_u64(), reference["S"].as_u64());
    assert_eq!(r["pool_size"].as_u64(), reference["N"].as_u64());
    for set in r["sets"].as_array().unwrap() {
        let name = set["query_set"].as_str().unwrap();
        let p = &set["prediction"];
        assert_eq!(p["pool_size"].as_u64(), reference["N"].as_u64());
        close(
            p["map_at_k"].as_f64().unwrap(),
            set["map_at_k"].as_f64().unwrap(),
            "estimate",
        );
        let lo = p["map_at_k_percentile_interval"][0].as_f64().unwrap();
        let hi = p["map_at_k_percentile_interval"][1].as_f64().unwrap();
        assert!(lo <= hi);
        compare_set(
            set,
            &reference[name]["official"],
            "evaluate_at_s_map_at_k",
            p["baselines"]["evaluate_at_s_map_at_k"].as_f64().unwrap(),
            &format!("evaluate-at-S {name}"),
        );
        compare_set(
            set,
            &reference[name]["count"],
            "count_map_at_k",
            p["baselines"]["count_map_at_k"].as_f64().unwrap(),
            &format!("count {name}"),
        );
    }
    // `--no-excess-centre` gives each set the tail model's own estimate: the default's unmoved
    // value where the default moved it, the same number where it did not.
    let plain = predicted(&["--no-excess-centre"]);
    assert!(plain.status.success());
    let plain: Value = serde_json::from_slice(&plain.stdout).unwrap();
    for (set, own) in r["sets"]
        .as_array()
        .unwrap()
        .iter()
        .zip(plain["sets"].as_array().unwrap())
    {
        let (p, q) = (&set["prediction"], &own["prediction"]);
        assert_eq!(p["options"]["excess_centre"], true);
        assert_eq!(q["options"]["excess_centre"], false);
        assert!(q["excess_centre"].is_null());
        let want = match p["excess_centre"]["unmoved_map_at_k"].as_f64() {
            Some(unmoved) => unmoved,
            None => p["map_at_k"].as_f64().unwrap(),
        };
        close(q["map_at_k"].as_f64().unwrap(), want, "tail model's own");
    }
}

#[test]
fn broken_feature_folders_are_refused_naming_the_file() {
    use tailrank::ErrorKind::{Input, Mismatch, Output};
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "dup_positive",
            "features_positives.hdf5",
            "duplicate",
            Input,
        ),
        (
            "missing_positive",
            "features_positives.hdf5",
            "missing",
            Mismatch,
        ),
        (
            "unknown_query",
            "features_image_queries.hdf5",
            "unknown id",
            Mismatch,
        ),
        (
            "unknown_distractor",
            "features_distractors_000.hdf5",
            "unknown distractor id",
            Mismatch,
        ),
        (
            "dup_distractor",
            "features_distractors_001.hdf5",
            "duplicate distractor id",
            Input,
        ),
        (
            "missing_distractor",
            "distractor_ids.txt.gz",
            "missing",
            Mismatch,
        ),
    ];
    let variants: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let folders = make_all(dir.path(), &variants);
    let ilias_to = |ds: &str, feat: &str, so: &str| {
        tailrank(&[
            "ilias",
            "--dataset-dir",
            ds,
            "--features",
            feat,
            "--summary-out",
            so,
        ])
    };
    for ((variant, file, words, kind), (ds, feat)) in cases.into_iter().zip(folders) {
        let out = tailrank(&["ilias", "--dataset-dir", &ds, "--features", &feat]);
        assert_eq!(out.status.code(), Some(kind.exit_code()), "{variant}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(file) && err.contains(words),
            "{variant}: {err}"
        );
        // With --summary-out, the refused run leaves no new folder behind.
        let so = dir.path().join(format!("so_{variant}"));
        let out = ilias_to(&ds, &feat, so.to_str().unwrap());
        assert_eq!(out.status.code(), Some(kind.exit_code()), "{variant}");
        assert!(!so.exists(), "{variant}: {} left behind", so.display());
    }
    // --summary-out inside an input folder is refused (a rerun found the summaries there as
    // part of the input and refused them), and so is one whose parent does not exist.
    let (ds, feat) = make_all(dir.path(), &["ok"]).remove(0);
    let inside = format!("{feat}/summaries");
    let missing = dir.path().join("no/such").to_string_lossy().into_owned();
    for (so, words) in [
        (&inside, "inside the input folder"),
        (&missing, "does not exist"),
    ] {
        let out = ilias_to(&ds, &feat, so);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(Output.exit_code()), "{err}");
        assert!(err.contains(words) && !Path::new(so).exists(), "{err}");
    }
    // A query listed among the positives would rank itself first (mAP went up silently):
    // refused naming positive_ids.txt and the id.
    let positives = format!("{ds}/image_ids/positive_ids.txt");
    let mut text = std::fs::read_to_string(&positives).unwrap();
    text.push_str("inst_00/query_0.jpg,0.1,10\n");
    std::fs::write(&positives, text).unwrap();
    let out = tailrank(&["ilias", "--dataset-dir", &ds, "--features", &feat]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(Input.exit_code()), "{err}");
    assert!(
        err.contains("positive_ids.txt") && err.contains("\"inst_00/query_0.jpg\", a query"),
        "{err}"
    );
}

/// The per-query APs of a report's set (`queries: [{query, ap_at_k}]`) against the reference's
/// `aps` (percent), to 1e-9.
#[test]
fn exact_ties_follow_the_official_tie_blocks() {
    // Positives copied bitwise into the distractor shards (blocks of 1 to 40 copies), over
    // other instances' positives and over positives of their own instance: `tailrank ilias`
    // (overall, per query and every breakdown) and `tailrank eval --summary` must equal the
    // official evaluate.py logic with sklearn's tie blocks, at k = 10, 100 and 1000, where tie
    // blocks holding positives and non-relevant items straddle the cut. Prediction mode: the
    // evaluate-at-S and count numbers on the sample follow the same rule.
    let dir = tempfile::tempdir().unwrap();
    let (ds, feat) = make_all(dir.path(), &["ties"]).remove(0);
    for k in ["10", "100", "1000"] {
        let reference: Value =
            serde_json::from_str(&common::run_python(REFERENCE, &[&ds, &feat, k, "1", "0"]))
                .unwrap();
        // Unequal scores are far enough apart for f32 and f64 to rank them alike.
        assert!(reference["min_gap"].as_f64().unwrap() > 1e-6);
        let straddles: u64 = ["image", "text"]
            .iter()
            .map(|n| reference[n]["straddles"].as_u64().unwrap())
            .sum();
        assert!(straddles > 0, "k = {k}: no tie block crosses the cut");
        let sums = dir.path().join(format!("summaries_{k}"));
        let out = tailrank(&[
            "ilias",
            "--dataset-dir",
            &ds,
            "--features",
            &feat,
            "--k",
            k,
            "--json",
            "--summary-out",
            sums.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        // The combined i2i+t2i row: the mean AP over the queries of both sets.
        let all: Vec<f64> = ["image", "text"]
            .iter()
            .flat_map(|n| {
                reference[n]["official"]["aps"]
                    .as_object()
                    .unwrap()
                    .values()
                    .map(|v| v.as_f64().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(r["combined"]["task"], "i2i+t2i");
        assert_eq!(r["combined"]["n_queries"].as_u64(), Some(all.len() as u64));
        close(
            100.0 * r["combined"]["map_at_k"].as_f64().unwrap(),
            all.iter().sum::<f64>() / all.len() as f64,
            &format!("k = {k}, combined"),
        );
        for set in r["sets"].as_array().unwrap() {
            let name = set["query_set"].as_str().unwrap();
            let want = &reference[name]["official"];
            let what = format!("k = {k}, {name}");
            compare_set(
                set,
                want,
                "map_at_k",
                set["map_at_k"].as_f64().unwrap(),
                &what,
            );
            compare_queries(&set["queries"], &want["aps"], &what);
            assert_eq!(
                set["tied_pairs"].as_u64(),
                reference[name]["tied_pairs"].as_u64(),
                "{what}: tied pairs"
            );
            assert!(set["tied_pairs"].as_u64().unwrap() > 0);

            // The kept summary through `tailrank eval --summary`, checked against the ground truth.
            let out = tailrank(&[
                "eval",
                "--summary",
                sums.join(name).to_str().unwrap(),
                "--gt",
                &ds,
                "--k",
                k,
                "--json",
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let e: Value = serde_json::from_slice(&out.stdout).unwrap();
            let es = &e["sets"][0];
            close(
                100.0 * es["map_at_k"].as_f64().unwrap(),
                want["map"].as_f64().unwrap(),
                &format!("eval --summary {what}"),
            );
            compare_queries(
                &es["queries"],
                &want["aps"],
                &format!("eval --summary {what}"),
            );
            assert_eq!(es["tied_pairs"], set["tied_pairs"]);
        }
        // The table names the tied pairs.
        if k == "100" {
            let out = tailrank(&[
                "eval",
                "--summary",
                sums.join("image").to_str().unwrap(),
                "--k",
                k,
            ]);
            let table = String::from_utf8(out.stdout).unwrap();
            assert!(
                table.contains("tied positive/non-relevant pairs"),
                "{table}"
            );
        }
    }

    // Prediction mode on half of the distractors: evaluate-at-S and the count map with ties.
    let (k, f, seed) = ("100", "0.5", "3");
    let reference: Value =
        serde_json::from_str(&common::run_python(REFERENCE, &[&ds, &feat, k, f, seed])).unwrap();
    let out = tailrank(&prediction_args(&ds, &feat, k, f, seed, "50"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    for set in r["sets"].as_array().unwrap() {
        let name = set["query_set"].as_str().unwrap();
        let p = &set["prediction"];
        assert!(set["tied_pairs"].as_u64().unwrap() > 0);
        compare_set(
            set,
            &reference[name]["official"],
            "evaluate_at_s_map_at_k",
            p["baselines"]["evaluate_at_s_map_at_k"].as_f64().unwrap(),
            &format!("ties evaluate-at-S {name}"),
        );
        compare_set(
            set,
            &reference[name]["count"],
            "count_map_at_k",
            p["baselines"]["count_map_at_k"].as_f64().unwrap(),
            &format!("ties count {name}"),
        );
    }

    // Without taxonomy.json the table starts with the warning (no category rows below), and
    // shows the combined row under the per-task rows.
    std::fs::remove_file(Path::new(&ds).join("taxonomy.json")).unwrap();
    let out = tailrank(&[
        "ilias",
        "--dataset-dir",
        &ds,
        "--features",
        &feat,
        "--k",
        "100",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.starts_with("warning: no taxonomy.json found"),
        "{table}"
    );
    assert!(table.contains("\ni2i+t2i "), "{table}");
    assert!(!table.contains("subcategory"), "{table}");
}

/// `--summary-out` makes the scan resumable as `tailrank scan` is: chunked, it writes the same
/// summaries and report and leaves no partial folder; a partial folder in the way is refused
/// without `--resume` and continued with it.
#[test]
fn ilias_scan_resumes_like_scan() {
    let dir = tempfile::tempdir().unwrap();
    let (ds, feat) = make_all(dir.path(), &["ok"]).remove(0);
    // The command writing into `out`, with `failpoint` as the test hook when given.
    let run_with = |out: &str, extra: &[&str], failpoint: Option<&str>| {
        let out_dir = dir.path().join(out);
        let mut c = std::process::Command::new(tailrank_test_support::cli::bin());
        c.args(["ilias", "--dataset-dir", &ds, "--features", &feat])
            .args(["--k", "100", "--json", "--summary-out"])
            .arg(&out_dir)
            .args(extra);
        if let Some(f) = failpoint {
            c.env("TAILRANK_FAILPOINT", f);
        }
        (c.output().expect("run tailrank"), out_dir)
    };
    let run = |out: &str, extra: &[&str]| run_with(out, extra, None);
    let ok = |o: &std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let (whole, whole_dir) = run("whole", &[]);
    ok(&whole);
    let (chunked, chunked_dir) = run("chunked", &["--chunk-rows", "150"]);
    ok(&chunked);
    assert_eq!(whole.stdout, chunked.stdout);
    for set in ["image", "text"] {
        let a = Summary::read(&whole_dir.join(set)).unwrap();
        let b = Summary::read(&chunked_dir.join(set)).unwrap();
        assert_eq!(a.queries, b.queries, "{set}");
        assert_eq!(a.subset_sizes, b.subset_sizes, "{set}");
    }
    assert!(!dir.path().join("chunked.partial").exists());

    // An empty partial folder holds nothing to resume: the plain run starts over.
    std::fs::create_dir(dir.path().join("fresh.partial")).unwrap();
    let (fresh, _) = run("fresh", &["--chunk-rows", "150"]);
    ok(&fresh);
    assert_eq!(whole.stdout, fresh.stdout);

    // A run killed after its first chunk was saved (test hook) leaves one to resume.
    let (killed, _) = run_with("again", &["--chunk-rows", "150"], Some("chunk:0"));
    assert_eq!(killed.status.code(), None, "the test hook did not fire");
    let (refused, _) = run("again", &["--chunk-rows", "150"]);
    assert_eq!(
        refused.status.code(),
        Some(tailrank::ErrorKind::Output.exit_code())
    );
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("rerun with `--resume`"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let (resumed, _) = run("again", &["--chunk-rows", "150", "--resume"]);
    ok(&resumed);
    assert_eq!(whole.stdout, resumed.stdout);
    assert!(!dir.path().join("again.partial").exists());
}

/// `--summary-out` with `--html`: the page is replaced in the summaries' commit, so a run
/// killed once the commit journals are written (test hook) leaves the page's journal too, and
/// the next run completes both.
#[test]
fn ilias_page_and_summaries_are_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (ds, feat) = make_all(dir.path(), &["ok"]).remove(0);
    let (out, page) = (dir.path().join("sums"), dir.path().join("page.html"));
    let run = |failpoint: Option<&str>| {
        let mut c = std::process::Command::new(tailrank_test_support::cli::bin());
        c.args(["ilias", "--dataset-dir", &ds, "--features", &feat])
            .args([
                "--fraction",
                "0.5",
                "--bootstrap",
                "20",
                "--sample-noise",
                "0",
            ])
            .arg("--summary-out")
            .arg(&out)
            .arg("--html")
            .arg(&page);
        if let Some(f) = failpoint {
            c.env("TAILRANK_FAILPOINT", f);
        }
        c.output().expect("run tailrank")
    };
    let killed = run(Some("commit:0"));
    assert_eq!(
        killed.status.code(),
        None,
        "the test hook did not fire: {}",
        String::from_utf8_lossy(&killed.stderr)
    );
    assert!(dir.path().join("page.html.tmp/.pending.json").exists());
    assert!(!page.exists());
    let done = run(None);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(page.is_file() && out.join("image/manifest.json").is_file());
    assert!(!dir.path().join("page.html.tmp").exists());
    // A page on a stream is written on its own (it cannot be replaced with the summaries).
    let (d, f) = (ds.as_str(), feat.as_str());
    let o = std::process::Command::new(tailrank_test_support::cli::bin())
        .args([
            "ilias",
            "--dataset-dir",
            d,
            "--features",
            f,
            "--fraction",
            "0.5",
        ])
        .args([
            "--bootstrap",
            "20",
            "--sample-noise",
            "0",
            "--html",
            "/dev/null",
        ])
        .arg("--summary-out")
        .arg(dir.path().join("sums2"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `--top-m` is the M the scan keeps and `--fit-top` the tail fit's number of top scores (at
/// most M); `--fit-top` alone keeps its former meaning (M too) with a deprecation warning.
#[test]
fn ilias_top_m_is_the_scans_and_fit_top_the_fits() {
    let dir = tempfile::tempdir().unwrap();
    let (ds, feat) = make_all(dir.path(), &["ok"]).remove(0);
    let run = |out: &str, extra: &[&str]| {
        let out_dir = dir.path().join(out);
        let o = std::process::Command::new(tailrank_test_support::cli::bin())
            .args(["ilias", "--dataset-dir", &ds, "--features", &feat])
            .args([
                "--fraction",
                "0.5",
                "--bootstrap",
                "0",
                "--sample-noise",
                "0",
            ])
            .args(["--queries", "image", "--json", "--summary-out"])
            .arg(&out_dir)
            .args(extra)
            .output()
            .expect("run tailrank");
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        (o, out_dir, err)
    };
    let top_m = |d: &Path| Summary::read(&d.join("image")).unwrap().top_m;
    let (new, new_dir, new_err) = run("new", &["--top-m", "30", "--fit-top", "30"]);
    assert!(new.status.success(), "{new_err}");
    assert!(!new_err.contains("deprecated"), "{new_err}");
    assert_eq!(top_m(&new_dir), 30);
    let (old, old_dir, old_err) = run("old", &["--fit-top", "30"]);
    assert!(old.status.success(), "{old_err}");
    assert!(
        old_err.contains("warning: --fit-top without --top-m is deprecated"),
        "{old_err}"
    );
    assert_eq!(top_m(&old_dir), 30);
    assert_eq!(
        new.stdout, old.stdout,
        "the former meaning gives the same report"
    );
    // With M = 30 the default fit (4000) is used up to M: the same estimate again.
    let (dflt, _, dflt_err) = run("dflt", &["--top-m", "30"]);
    assert!(dflt.status.success(), "{dflt_err}");
    let estimate = |o: &std::process::Output| {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["sets"][0]["prediction"]["map_at_k"].as_f64().unwrap()
    };
    assert_eq!(estimate(&new), estimate(&dflt));
    let (above, _, above_err) = run("above", &["--top-m", "30", "--fit-top", "31"]);
    assert_eq!(
        above.status.code(),
        Some(tailrank::ErrorKind::Option.exit_code())
    );
    assert!(
        above_err.contains("--fit-top 31 is above --top-m 30"),
        "{above_err}"
    );
}
