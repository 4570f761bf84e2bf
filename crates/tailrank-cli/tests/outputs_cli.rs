//! Outputs of the real binary (issue #17, part C): outputs that belong together are replaced
//! together even when the process dies at any step of the commit (`TAILRANK_FAILPOINT` aborts
//! it there, as a kill would); inputs are never overwritten; a concurrent writer is named.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tailrank::formats::descriptors::Dtype;
use tailrank::formats::ids::write_ids;
use tailrank::formats::npy::write_npy;

const DIM: usize = 8;

use tailrank_test_support::cli::bin;

fn run(args: &[&str], failpoint: Option<usize>) -> Output {
    let mut c = Command::new(bin());
    c.args(args);
    match failpoint {
        Some(n) => c.env("TAILRANK_FAILPOINT", format!("commit:{n}")),
        None => c.env_remove("TAILRANK_FAILPOINT"),
    };
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn vecs(n: usize, salt: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(n * DIM);
    for r in 0..n {
        let mut v = [0f32; DIM];
        let a = ((r * 7 + salt * 13) % 97) as f32 / 97.0;
        v[(r + salt) % DIM] = (1.0 - a * a).sqrt();
        v[(r + salt + 1) % DIM] = a;
        out.extend_from_slice(&v);
    }
    out
}

fn ids(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn save(dir: &Path, name: &str, ids: &[String], data: &[f32]) {
    write_npy(
        &dir.join(format!("{name}.npy")),
        ids.len(),
        DIM,
        data,
        Dtype::F32,
    )
    .unwrap();
    write_ids(&dir.join(format!("{name}.ids.txt")), ids).unwrap();
}

fn fixtures(dir: &Path) {
    save(dir, "queries", &ids("q", 3), &vecs(3, 0));
    let cids: Vec<String> = (0..3)
        .flat_map(|q| (0..2).map(move |j| format!("c{q}_{j}")))
        .chain(ids("other", 4))
        .collect();
    save(dir, "core", &cids, &vecs(10, 1));
    save(dir, "pool", &ids("p", 300), &vecs(300, 2));
    let gt = r#"{"q0": ["c0_0", "c0_1"], "q1": ["c1_0", "c1_1"], "q2": ["c2_0", "c2_1"]}"#;
    std::fs::write(dir.join("gt.json"), gt).unwrap();
    let many: String = (0..3000).map(|i| format!("yfcc/{i:06}\n")).collect();
    std::fs::write(dir.join("pool_ids.txt"), many).unwrap();
}

fn scan_args(dir: &Path, out: &str, results: &str, model: &str, k: &str) -> Vec<String> {
    let p = |n: &str| dir.join(n).display().to_string();
    vec![
        "scan".into(),
        "--queries".into(),
        p("queries.npy"),
        "--core".into(),
        p("core.npy"),
        "--gt".into(),
        p("gt.json"),
        "--pool".into(),
        p("pool.npy"),
        "--top-m".into(),
        "20".into(),
        "--chunk-rows".into(),
        "100".into(),
        "--model".into(),
        model.into(),
        "--k".into(),
        k.into(),
        "--results-out".into(),
        p(results),
        "-o".into(),
        p(out),
    ]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|s| s.as_str()).collect()
}

/// Model recorded in a summary folder (None when absent or unreadable).
fn summary_model(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(v["model"].as_str()?.to_string())
}

/// Items of query q0 in a results JSON (None when absent).
fn results_k(path: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(v["q0"].as_object()?.len())
}

/// Names in `dir` other than the fixtures.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp") || n.ends_with(".lock") || n.ends_with(".partial"))
        .collect();
    v.sort();
    v
}

#[test]
fn scan_killed_at_every_commit_step_leaves_old_or_new_never_a_mix() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    fixtures(dir);
    let old = scan_args(dir, "s", "r.json", "old", "3");
    let new = scan_args(dir, "s", "r.json", "new", "5");
    let mut new_resume = new.clone();
    new_resume.push("--resume".into());
    let (s, r) = (dir.join("s"), dir.join("r.json"));
    let gt = dir.join("gt.json").display().to_string();
    let mut completed = false;
    for step in 0..12 {
        // Old outputs in place, then the new scan killed at `step` of its commit.
        let _ = std::fs::remove_dir_all(dir.join("s.partial"));
        let o = run(&strs(&old), None);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            (summary_model(&s).as_deref(), results_k(&r)),
            (Some("old"), Some(3))
        );
        let o = run(&strs(&new), Some(step));
        if o.status.success() {
            // Past the last step: a plain successful run.
            assert_eq!(
                (summary_model(&s).as_deref(), results_k(&r)),
                (Some("new"), Some(5))
            );
            assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
            completed = true;
            assert!(
                step >= 5,
                "a replacing commit has 5 failpoints, ended at {step}"
            );
            break;
        }
        assert_eq!(o.status.code(), None, "step {step}: killed: {}", stderr(&o));
        let pair = (summary_model(&s), results_k(&r));
        let consistent =
            pair == (Some("old".into()), Some(3)) || pair == (Some("new".into()), Some(5));
        // Readers: a consistent pair reads; otherwise both refuse, naming the interruption.
        let eval_s = run(&["eval", "--summary", s.to_str().unwrap()], None);
        let eval_r = run(
            &[
                "eval",
                "--results",
                r.to_str().unwrap(),
                "--gt",
                &gt,
                "--k",
                "5",
            ],
            None,
        );
        if consistent && step == 0 {
            // Nothing renamed yet: the old pair reads... unless a journal says otherwise.
            assert!(!eval_s.status.success() && stderr(&eval_s).contains("interrupted"));
        }
        if !consistent {
            for e in [&eval_s, &eval_r] {
                assert_eq!(
                    e.status.code(),
                    Some(tailrank::ErrorKind::Input.exit_code()),
                    "step {step}: {pair:?} read: {}",
                    stderr(e)
                );
                assert!(
                    stderr(e).contains("interrupted tailrank run"),
                    "step {step}: {}",
                    stderr(e)
                );
            }
        }
        // The next run of the command completes the commit first, then writes its own outputs.
        let o = run(&strs(&new_resume), None);
        assert!(o.status.success(), "step {step}: {}", stderr(&o));
        assert_eq!(
            (summary_model(&s).as_deref(), results_k(&r)),
            (Some("new"), Some(5)),
            "step {step}"
        );
        assert!(
            leftovers(dir).is_empty(),
            "step {step}: {:?}",
            leftovers(dir)
        );
        let e = run(&["eval", "--summary", s.to_str().unwrap()], None);
        assert!(e.status.success(), "step {step}: {}", stderr(&e));
    }
    assert!(completed);
}

#[test]
fn sample_killed_at_every_commit_step_ids_and_manifest_stay_paired() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    fixtures(dir);
    let ids_in = dir.join("pool_ids.txt").display().to_string();
    let out = dir.join("s.txt");
    let manifest = dir.join("s.txt.manifest.json");
    let args = |f: &str| {
        vec![
            "sample".to_string(),
            "--ids".into(),
            ids_in.clone(),
            "--fraction".into(),
            f.into(),
            "-o".into(),
            out.display().to_string(),
        ]
    };
    let paired = || -> Option<bool> {
        let kept = std::fs::read_to_string(&out).ok()?;
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&manifest).ok()?).ok()?;
        let ids: Vec<String> = kept.lines().map(String::from).collect();
        Some(m["digest"].as_str()? == tailrank::sample::sample_digest(&ids))
    };
    let mut completed = false;
    for step in 0..8 {
        assert!(run(&strs(&args("0.5")), None).status.success());
        let o = run(&strs(&args("0.2")), Some(step));
        if o.status.success() {
            completed = true;
            break;
        }
        assert_eq!(o.status.code(), None, "step {step}: {}", stderr(&o));
        if paired() != Some(true) {
            // A mix: the id list is refused by tailrank's reader until the commit is completed.
            let e = run(
                &[
                    "sample",
                    "--ids",
                    out.to_str().unwrap(),
                    "--fraction",
                    "1",
                    "-o",
                    dir.join("again.txt").to_str().unwrap(),
                ],
                None,
            );
            assert_eq!(
                e.status.code(),
                Some(tailrank::ErrorKind::Input.exit_code()),
                "step {step}"
            );
            assert!(
                stderr(&e).contains("interrupted tailrank run"),
                "{}",
                stderr(&e)
            );
        }
        let o = run(&strs(&args("0.2")), None);
        assert!(o.status.success(), "step {step}: {}", stderr(&o));
        assert_eq!(paired(), Some(true), "step {step}");
        assert!(
            leftovers(dir).is_empty(),
            "step {step}: {:?}",
            leftovers(dir)
        );
    }
    assert!(completed);
}

fn digest_tree(p: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    if p.is_dir() {
        let mut es: Vec<_> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        es.sort();
        for e in es {
            out.extend(digest_tree(&e));
        }
    } else {
        out.push((p.to_path_buf(), std::fs::read(p).unwrap()));
    }
    out
}

#[test]
fn outputs_over_inputs_or_foreign_paths_are_refused_and_inputs_stay_intact() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    fixtures(dir);
    let ok = run(&strs(&scan_args(dir, "s", "r.json", "m", "3")), None);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let p = |n: &str| dir.join(n).display().to_string();
    std::fs::create_dir(dir.join("photos")).unwrap();
    std::fs::write(dir.join("photos/cat.jpg"), b"meow").unwrap();
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("gt.json"), dir.join("gt_link.json")).unwrap();
    std::fs::hard_link(dir.join("pool_ids.txt"), dir.join("hard_ids.txt")).unwrap();
    let before = digest_tree(dir);
    let scan = |results: &str, out: &str| scan_args(dir, out, results, "m", "3");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (scan("gt.json", "s2"), "is an input of this command"),
        (scan("queries.ids.txt", "s2"), "is an input of this command"),
        #[cfg(unix)]
        (scan("gt_link.json", "s2"), "is an input of this command"),
        (scan("r2.json", "gt.json"), "is an input of this command"),
        (scan("r2.json", "notes.txt"), "exists and is not a folder"),
        (scan("r2.json", "photos"), "not a folder tailrank wrote"),
        (scan("r2.json", "r2.json"), "given twice"),
        (
            vec!["merge".into(), p("s"), "-o".into(), p("s")],
            "is an input of this command",
        ),
        (
            vec![
                "merge".into(),
                p("s"),
                "-o".into(),
                dir.display().to_string(),
            ],
            "holds the input",
        ),
        (
            vec![
                "predict".into(),
                "--summary".into(),
                p("s"),
                "--bootstrap".into(),
                "0".into(),
                "--sample-noise".into(),
                "0".into(),
                "--estimator".into(),
                "count".into(),
                "--hardness-out".into(),
                p("s/manifest.json"),
            ],
            "lies inside the input summary",
        ),
        (
            vec![
                "sample".into(),
                "--ids".into(),
                p("pool_ids.txt"),
                "--fraction".into(),
                "0.5".into(),
                "-o".into(),
                p("hard_ids.txt"),
            ],
            "is an input of this command",
        ),
    ];
    for (args, want) in cases {
        let o = run(&strs(&args), None);
        assert_eq!(
            o.status.code(),
            Some(tailrank::ErrorKind::Output.exit_code()),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
        assert_eq!(digest_tree(dir), before, "{args:?} changed the folder");
    }
}

#[test]
fn a_live_writer_is_named_not_called_an_interrupted_run() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    fixtures(dir);
    let pid = std::process::id();
    // Another process writes the output: the scan stops before reading anything.
    let lock = tailrank::atomic::Lock::acquire(&dir.join("s")).unwrap();
    let o = run(&strs(&scan_args(dir, "s", "r.json", "m", "3")), None);
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Output.exit_code())
    );
    assert!(
        stderr(&o).contains(&format!(
            "another tailrank process (pid {pid}) is writing it"
        )),
        "{}",
        stderr(&o)
    );
    drop(lock);
    // Another process scans into the partial folder (a library caller): named, not "left by
    // an interrupted run".
    std::fs::create_dir(dir.join("s.partial")).unwrap();
    let lock = tailrank::atomic::Lock::acquire(&dir.join("s.partial")).unwrap();
    let o = run(&strs(&scan_args(dir, "s", "r.json", "m", "3")), None);
    let e = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Output.exit_code()),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "another tailrank process (pid {pid}) is writing it"
        )),
        "{e}"
    );
    assert!(e.contains("s.partial") && !e.contains("interrupted"), "{e}");
    drop(lock);
    std::fs::remove_dir(dir.join("s.partial")).unwrap();
    let o = run(&strs(&scan_args(dir, "s", "r.json", "m", "3")), None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
}

/// The files of `simulate --vectors` are replaced together: a run killed at any step of its
/// commit leaves the old benchmark, the new one, or files that `scan` refuses; the next run
/// completes it.
#[test]
fn simulate_vectors_killed_at_every_commit_step_never_mixes_benchmarks() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    let sim = |dir: &Path, seed: &str, fp: Option<usize>| {
        run(
            &[
                "simulate",
                "--vectors",
                "--pool-size",
                "500",
                "--instances",
                "6",
                "--extra-queries",
                "2",
                "--seed",
                seed,
                "-o",
                dir.to_str().unwrap(),
            ],
            fp,
        )
    };
    let files = |dir: &Path| -> Vec<Option<Vec<u8>>> {
        [
            "queries.npy",
            "queries.ids.txt",
            "core.npy",
            "core.ids.txt",
            "gt.json",
            "pool.npy",
            "pool.ids.txt",
            "benchmark.json",
        ]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).ok())
        .collect()
    };
    let (old_ref, new_ref) = (root.join("old"), root.join("new"));
    assert!(sim(&old_ref, "1", None).status.success());
    assert!(sim(&new_ref, "2", None).status.success());
    let (old, new) = (files(&old_ref), files(&new_ref));
    let mut completed = false;
    for step in 0..20 {
        let dir = root.join(format!("run{step}"));
        assert!(sim(&dir, "1", None).status.success());
        let o = sim(&dir, "2", Some(step));
        if o.status.success() {
            assert_eq!(files(&dir), new);
            completed = true;
            break;
        }
        assert_eq!(o.status.code(), None, "step {step}: {}", stderr(&o));
        let now = files(&dir);
        if now != old && now != new {
            let p = |n: &str| dir.join(n).display().to_string();
            let o = run(
                &[
                    "scan",
                    "--queries",
                    &p("queries.npy"),
                    "--core",
                    &p("core.npy"),
                    "--gt",
                    &p("gt.json"),
                    "--pool",
                    &p("pool.npy"),
                    "-o",
                    &p("s"),
                ],
                None,
            );
            assert_eq!(
                o.status.code(),
                Some(tailrank::ErrorKind::Input.exit_code()),
                "step {step}: a mix was scanned"
            );
            assert!(
                stderr(&o).contains("interrupted tailrank run"),
                "{}",
                stderr(&o)
            );
        }
        assert!(sim(&dir, "2", None).status.success());
        assert_eq!(files(&dir), new, "step {step}");
        assert!(
            leftovers(&dir).is_empty(),
            "step {step}: {:?}",
            leftovers(&dir)
        );
    }
    assert!(completed);
}

/// `demo --html`: the page and the demo folder are one commit. Killed at any of its steps,
/// the page and the folder's prediction come from one seed, or a commit journal is pending
/// (the next writer completes it); rerun, both are the new seed's.
#[test]
fn demo_killed_at_every_commit_step_keeps_page_and_folder_paired() {
    let t = tempfile::tempdir().unwrap();
    let (out, page) = (t.path().join("demo"), t.path().join("demo.html"));
    let demo = |seed: &str, fp: Option<usize>| {
        let args = [
            "demo",
            "--queries",
            "20",
            "--bootstrap",
            "0",
            "--seed",
            seed,
        ];
        let (o, h) = (out.to_str().unwrap(), page.to_str().unwrap());
        run(&[&args[..], &["-o", o, "--html", h]].concat(), fp)
    };
    let seed_of = |text: &str| {
        [
            "ilias-like:seed1 ",
            "ilias-like:seed1\"",
            "ilias-like:seed2 ",
            "ilias-like:seed2\"",
        ]
        .iter()
        .position(|s| text.contains(s))
        .map(|i| i / 2 + 1)
    };
    let state = || {
        let pred = std::fs::read_to_string(out.join("prediction.json")).unwrap_or_default();
        let html = std::fs::read_to_string(&page).unwrap_or_default();
        (seed_of(&pred), seed_of(&html))
    };
    let pending = || {
        [
            page.with_extension("html.tmp"),
            out.join("prediction.json.tmp"),
        ]
        .iter()
        .any(|s| s.join(".pending.json").exists())
    };
    let mut completed = false;
    for step in 0..12 {
        assert!(demo("1", None).status.success());
        assert_eq!(state(), (Some(1), Some(1)));
        let o = demo("2", Some(step));
        if o.status.success() {
            assert_eq!(state(), (Some(2), Some(2)));
            completed = true;
            break;
        }
        let (pred, html) = state();
        assert!(pred == html || pending(), "step {step}: {pred:?} {html:?}");
        assert!(demo("2", None).status.success(), "step {step}");
        assert_eq!(state(), (Some(2), Some(2)), "step {step}");
    }
    assert!(completed);
    // A page on a stream is written on its own (a stream cannot be replaced with the folder).
    let o = out.to_str().unwrap();
    let args = ["demo", "--queries", "20", "--bootstrap", "0", "-o", o];
    let r = run(&[&args[..], &["--html", "/dev/null"]].concat(), None);
    assert!(r.status.success(), "{}", stderr(&r));
}

/// A plain simulation into a demo's folder is refused: it would leave the demo's
/// `prediction.json` beside a new summary and truth.
#[test]
fn simulate_over_a_demo_folder_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("demo");
    let o = out.to_str().unwrap();
    let demo = ["demo", "--queries", "20", "--bootstrap", "0", "-o", o];
    assert!(run(&demo, None).status.success());
    let before = digest_tree(&out);
    let r = run(
        &["simulate", "--queries", "20", "--seed", "1", "-o", o],
        None,
    );
    assert_eq!(r.status.code(), Some(6), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("prediction.json: is the prediction of an earlier `tailrank demo`"),
        "{}",
        stderr(&r)
    );
    assert_eq!(digest_tree(&out), before);
}

/// A reader that closes the pipe early (`tailrank predict --json | head -1`) ends the process
/// quietly, as for any Unix filter: no panic, no "failed printing to stdout".
#[cfg(unix)]
#[test]
fn closed_stdout_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let sim = dir.path().join("sim");
    let o = run(
        &[
            "simulate",
            "--preset",
            "ilias-like",
            "--queries",
            "300",
            "--out",
            sim.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = sim.join("summary");
    let mut child = Command::new(bin())
        .args(["predict", "--summary", summary.to_str().unwrap(), "--json"])
        .args(["--bootstrap", "0", "--sample-noise", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then the pipe closes
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    child.wait().unwrap();
    assert_eq!(first[0], b'{');
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("failed printing"), "{err}");
}

/// Issue #44: special files are never replaced (a lone output streams to them, a paired one is
/// refused), symbolic links are written through, the longest legal names work, and a summary
/// folder holding a user's file is not replaced.
#[cfg(unix)]
#[test]
fn special_files_links_long_names_and_user_files() {
    use std::os::unix::fs::FileTypeExt;
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    fixtures(dir);
    let p = |n: &str| dir.join(n).display().to_string();
    let ok = run(&strs(&scan_args(dir, "s", "r.json", "m", "3")), None);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let is_null_device = || {
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    };
    let sample = |out: &str| {
        let ids = p("pool_ids.txt");
        run(
            &["sample", "--ids", &ids, "--fraction", "0.5", "-o", out],
            None,
        )
    };
    // Paired outputs refuse a device, naming it; nothing is written next to it.
    for args in [
        vec![
            "sample",
            "--ids",
            &p("pool_ids.txt"),
            "--fraction",
            "0.5",
            "-o",
            "/dev/null",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>(),
        scan_args(dir, "s2", "r.json", "m", "3")
            .into_iter()
            .map(|a| {
                if a == p("r.json") {
                    "/dev/null".into()
                } else {
                    a
                }
            })
            .collect(),
    ] {
        let o = run(&strs(&args), None);
        assert_eq!(
            o.status.code(),
            Some(tailrank::ErrorKind::Output.exit_code()),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("/dev/null: is a character device, not a regular file"),
            "{}",
            stderr(&o)
        );
        assert!(is_null_device());
        assert!(!Path::new("/dev/null.manifest.json").exists());
        assert!(!Path::new("/dev/null.tmp").exists() && !Path::new("/dev/null.lock").exists());
    }
    // A lone output streams into the device, which stays a device.
    let o = run(
        &[
            "predict",
            "--summary",
            &p("s"),
            "--bootstrap",
            "0",
            "--sample-noise",
            "0",
            "--estimator",
            "count",
            "--hardness-out",
            "/dev/null",
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_null_device());
    assert!(!Path::new("/dev/null.tmp").exists() && !Path::new("/dev/null.lock").exists());

    // A link to a regular file: the file is replaced, the link stays; reruns work.
    std::fs::write(dir.join("real.txt"), b"old").unwrap();
    std::os::unix::fs::symlink(dir.join("real.txt"), dir.join("link.txt")).unwrap();
    for _ in 0..2 {
        let o = sample(&p("link.txt"));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::symlink_metadata(dir.join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink());
        let kept = std::fs::read_to_string(dir.join("real.txt")).unwrap();
        assert!(kept.lines().count() > 1000 && kept.starts_with("yfcc/"));
        assert!(dir.join("link.txt.manifest.json").is_file());
        assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
    }

    // The longest legal names: a scan with a 255-byte summary and results name.
    let long_s = "s".repeat(255);
    let long_r = format!("{}.json", "r".repeat(250));
    let o = run(&strs(&scan_args(dir, &long_s, &long_r, "m", "3")), None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(summary_model(&dir.join(&long_s)).as_deref(), Some("m"));
    assert_eq!(results_k(&dir.join(&long_r)), Some(3));
    let o = run(&strs(&scan_args(dir, &long_s, &long_r, "m2", "3")), None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(summary_model(&dir.join(&long_s)).as_deref(), Some("m2"));
    let hashed: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tailrank-"))
        .collect();
    assert!(hashed.is_empty(), "{hashed:?}");
    // A companion name that cannot fit is refused with a clear message, before any work.
    let o = sample(&p(&"x".repeat(250)));
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Output.exit_code())
    );
    assert!(stderr(&o).contains("at most 241 bytes"), "{}", stderr(&o));

    // A user's file in a summary folder: the next scan refuses, naming it, and keeps it.
    std::fs::write(dir.join("s/notes.txt"), b"mine").unwrap();
    let o = run(&strs(&scan_args(dir, "s", "r.json", "m3", "3")), None);
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Output.exit_code())
    );
    assert!(
        stderr(&o).contains("also holds notes.txt"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(dir.join("s/notes.txt")).unwrap(), b"mine");
    assert_eq!(summary_model(&dir.join("s")).as_deref(), Some("m"));
    assert!(leftovers(dir).is_empty(), "{:?}", leftovers(dir));
}

/// A standard stream the OS refuses (a full disk: `/dev/full`) ends the run with exit 7
/// (`io`) and the stream named, never a panic (exit 101).
#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_stream_is_an_io_error() {
    use std::process::Stdio;
    let full = || std::fs::File::create("/dev/full").map(Stdio::from);
    if full().is_err() {
        return; // no /dev/full in this sandbox
    }
    let d = tempfile::tempdir().unwrap();
    let (res, gt) = (d.path().join("r.json"), d.path().join("gt.json"));
    std::fs::write(&res, r#"{"q1": {"a": 0.9, "b": 0.5}}"#).unwrap();
    std::fs::write(&gt, r#"{"q1": ["a"]}"#).unwrap();
    let eval = |gt: &Path| {
        let mut c = Command::new(bin());
        c.args(["eval", "--results", res.to_str().unwrap(), "--gt"]);
        c.arg(gt);
        c
    };
    let out = eval(&gt).stdout(full().unwrap()).output().unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("standard output: No space left"),
        "{}",
        stderr(&out)
    );
    // The job runs to its end and commits (or rolls back) its outputs: no staging folder or
    // lock is left behind (an exit in the middle of the job left both).
    let demo = d.path().join("demo");
    let mut c = Command::new(bin());
    c.args(["demo", "--queries", "20", "--bootstrap", "0", "--out"]);
    c.arg(&demo).arg("--html").arg(d.path().join("demo.html"));
    let out = c.stdout(full().unwrap()).output().unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["demo", "demo.html", "gt.json", "r.json"]);
    // The error line itself cannot be written: the exit code of the error is kept.
    let missing = d.path().join("missing.json");
    let told = eval(&missing).output().unwrap().status.code();
    let out = eval(&missing).stderr(full().unwrap()).output().unwrap();
    assert!(
        told != Some(101) && out.status.code() == told,
        "{told:?} {out:?}"
    );
}

/// A results file read from a pipe (`--results <(zcat r.json.gz)`, here `/dev/stdin`) is read to
/// its end; a folder in its place is refused as bad input.
#[cfg(target_os = "linux")]
#[test]
fn results_are_read_from_a_pipe() {
    use std::io::Write;
    use std::process::Stdio;
    let d = tempfile::tempdir().unwrap();
    let gt = d.path().join("gt.json");
    std::fs::write(&gt, r#"{"q1": ["a"]}"#).unwrap();
    let mut c = Command::new(bin());
    c.args(["eval", "--results", "/dev/stdin", "--gt"]).arg(&gt);
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(br#"{"q1": {"b": 0.9, "a": 0.5}}"#).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("50.00"));
    let o = Command::new(bin())
        .args(["eval", "--results", d.path().to_str().unwrap(), "--gt"])
        .arg(&gt)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
}
