//! `tailrank ilias --selected-ids` (a distractor subset, as the official `search.py --selected`
//! defines it for mini-ILIAS) end to end on the tied synthetic ILIAS folder of
//! `tests/data/ilias_synth.py` (positives copied bitwise into distractor shards and over other
//! instances' positives), with the positives in `features_positive.hdf5` (the official kNN
//! README's name). `tailrank ilias` and `tailrank eval --summary` must equal the official
//! evaluate.py logic replicated in Python (`tests/data/ilias_reference.py`, the same subset
//! rule) for mAP@k, every per-query AP and every breakdown group, at k = 100 and 1000 where tie
//! blocks cross the cut; prediction from a hash sample of the subset must give the reference's
//! evaluate-at-S and count numbers. Bad selection files fail naming the file and line.

use tailrank_test_support::python as common;

use serde_json::Value;
use std::path::Path;
use std::process::Output;

mod ilias_common;
use ilias_common::*;

fn ok(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// [`compare_set`], after checking that the reference has every breakdown group.
fn set_matches(set: &Value, want: &Value, field: &str, overall: f64, what: &str) {
    for g in GROUPS {
        assert!(!want[g].as_object().unwrap().is_empty(), "{what} {g}");
    }
    compare_set(set, want, field, overall, what);
}

#[test]
fn selected_subset_with_ties_matches_the_official_logic() {
    let dir = tempfile::tempdir().unwrap();
    let (ds, feat) = (dir.path().join("ds"), dir.path().join("feat"));
    let script = dir.path().join("ilias_synth.py");
    std::fs::write(&script, SYNTH).unwrap();
    let run = "import sys; src = open(sys.argv[1]).read(); sys.argv = sys.argv[1:]; \
               exec(compile(src, 'ilias_synth.py', 'exec'), {'__name__': '__main__'})";
    common::run_python(
        run,
        &[
            script.to_str().unwrap(),
            ds.to_str().unwrap(),
            feat.to_str().unwrap(),
            "ties",
        ],
    );
    // The official kNN README's name for the positives' file.
    std::fs::rename(
        feat.join("features_positives.hdf5"),
        feat.join("features_positive.hdf5"),
    )
    .unwrap();
    let (ds, feat) = (ds.to_str().unwrap(), feat.to_str().unwrap());

    // Two distractors in three, mostly in the official form (the key after the shard name),
    // a few as full ids.
    let listed: Vec<String> = common::run_python(
        "import gzip, sys; print(gzip.open(sys.argv[1], 'rt').read(), end='')",
        &[&format!("{ds}/image_ids/distractor_ids.txt.gz")],
    )
    .lines()
    .map(str::to_string)
    .collect();
    let lines: Vec<String> = listed
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(i, id)| {
            if i % 50 == 1 {
                id.clone()
            } else {
                id.split('/').nth(1).unwrap().to_string()
            }
        })
        .collect();
    let sel = dir.path().join("mini_ids.txt");
    std::fs::write(&sel, lines.join("\n") + "\n").unwrap();
    let sel = sel.to_str().unwrap();

    for k in ["100", "1000"] {
        let reference: Value = serde_json::from_str(&common::run_python(
            REFERENCE,
            &[ds, feat, k, "1", "0", sel],
        ))
        .unwrap();
        assert_eq!(reference["N"].as_u64(), Some(lines.len() as u64));
        assert!(reference["min_gap"].as_f64().unwrap() > 1e-6);
        let straddles: u64 = ["image", "text"]
            .iter()
            .map(|n| reference[n]["straddles"].as_u64().unwrap())
            .sum();
        assert!(straddles > 0, "k = {k}: no tie block crosses the cut");
        let sums = dir.path().join(format!("summaries_{k}"));
        let r = ok(&tailrank(&[
            "ilias",
            "--dataset-dir",
            ds,
            "--features",
            feat,
            "--selected-ids",
            sel,
            "--k",
            k,
            "--json",
            "--summary-out",
            sums.to_str().unwrap(),
        ]));
        assert_eq!(r["pool_size"].as_u64(), reference["N"].as_u64());
        assert_eq!(r["sample_size"].as_u64(), reference["N"].as_u64());
        assert_eq!(r["selected_ids"].as_str(), Some(sel));
        let mut all = Vec::new();
        for set in r["sets"].as_array().unwrap() {
            let name = set["query_set"].as_str().unwrap();
            let want = &reference[name]["official"];
            let what = format!("subset, k = {k}, {name}");
            set_matches(
                set,
                want,
                "map_at_k",
                set["map_at_k"].as_f64().unwrap(),
                &what,
            );
            compare_queries(&set["queries"], &want["aps"], &what);
            assert_eq!(
                set["tied_pairs"].as_u64(),
                reference[name]["tied_pairs"].as_u64()
            );
            assert!(set["tied_pairs"].as_u64().unwrap() > 0);
            all.extend(
                want["aps"]
                    .as_object()
                    .unwrap()
                    .values()
                    .map(|v| v.as_f64().unwrap()),
            );
            // The kept summary through `eval --summary`.
            let e = ok(&tailrank(&[
                "eval",
                "--summary",
                sums.join(name).to_str().unwrap(),
                "--gt",
                ds,
                "--k",
                k,
                "--json",
            ]));
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
        }
        close(
            100.0 * r["combined"]["map_at_k"].as_f64().unwrap(),
            all.iter().sum::<f64>() / all.len() as f64,
            &format!("subset, k = {k}, combined"),
        );
    }

    // The table names the selection in its first line.
    let out = tailrank(&[
        "ilias",
        "--dataset-dir",
        ds,
        "--features",
        feat,
        "--selected-ids",
        sel,
        "--k",
        "100",
    ]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        lines.len() == 1000 && table.contains(&format!("N = 1,000 distractors selected by {sel}")),
        "{table}"
    );

    // Prediction from a hash sample of the subset: evaluate-at-S and the count map.
    let (k, f, seed) = ("100", "0.5", "3");
    let reference: Value =
        serde_json::from_str(&common::run_python(REFERENCE, &[ds, feat, k, f, seed, sel])).unwrap();
    let predict_args = [
        "ilias",
        "--dataset-dir",
        ds,
        "--features",
        feat,
        "--selected-ids",
        sel,
        "--k",
        k,
        "--fraction",
        f,
        "--seed",
        seed,
        "--bootstrap",
        "50",
        "--sample-noise",
        "0",
    ];
    let r = ok(&tailrank(&[&predict_args[..], &["--json"]].concat()));
    assert_eq!(r["pool_size"].as_u64(), reference["N"].as_u64());
    assert_eq!(r["sample_size"].as_u64(), reference["S"].as_u64());
    for set in r["sets"].as_array().unwrap() {
        let name = set["query_set"].as_str().unwrap();
        let p = &set["prediction"];
        assert_eq!(p["pool_size"].as_u64(), reference["N"].as_u64());
        set_matches(
            set,
            &reference[name]["official"],
            "evaluate_at_s_map_at_k",
            p["baselines"]["evaluate_at_s_map_at_k"].as_f64().unwrap(),
            &format!("subset evaluate-at-S {name}"),
        );
        set_matches(
            set,
            &reference[name]["count"],
            "count_map_at_k",
            p["baselines"]["count_map_at_k"].as_f64().unwrap(),
            &format!("subset count {name}"),
        );
    }

    // The short headline names the selection too.
    let out = tailrank(&predict_args);
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().find(|l| l.starts_with("ILIAS")).unwrap_or("");
    assert!(
        out.status.success() && first.contains(&format!("distractors selected by {sel} from S")),
        "{text}"
    );

    // Bad selection files: unknown id, duplicate, empty; each error names the file and line.
    use tailrank::ErrorKind::{Input, Mismatch};
    let cases: [(&str, String, &[&str], tailrank::ErrorKind); 3] = [
        (
            "unknown.txt",
            format!("{}\nyfcc999/nope\n", lines[0]),
            &["unknown.txt", "line 2", "unknown id \"yfcc999/nope\""],
            Mismatch,
        ),
        (
            "dup.txt",
            format!("{}\n{}\n{}\n", lines[0], lines[1], lines[0]),
            &["dup.txt", "line 3", "listed twice (first on line 1)"],
            Input,
        ),
        (
            "empty.txt",
            "\n".to_string(),
            &["empty.txt", "is empty"],
            Input,
        ),
    ];
    for (name, text, words, kind) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let out = tailrank(&[
            "ilias",
            "--dataset-dir",
            ds,
            "--features",
            feat,
            "--selected-ids",
            p.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(kind.exit_code()), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        for w in words {
            assert!(err.contains(w), "{name}: {w:?} not in {err}");
        }
    }

    // A selected distractor without features: "missing", naming the list and the selection.
    let missing = dir.path().join("missing.txt");
    std::fs::write(&missing, format!("{}\n", lines[0])).unwrap();
    let feat2 = dir.path().join("feat2");
    std::fs::create_dir(&feat2).unwrap();
    for f in std::fs::read_dir(feat).unwrap() {
        let p = f.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        std::fs::copy(&p, feat2.join(&name)).unwrap();
    }
    common::run_python(
        "import h5py, sys\nfor n in ['features_distractors_000.hdf5', 'features_distractors_001.hdf5']:\n    \
         p = f'{sys.argv[1]}/{n}'\n    f = h5py.File(p, 'r'); ids = [x.decode() for x in f['index'][:]]; \
         v = f['features'][:]; f.close()\n    keep = [i for i, x in enumerate(ids) if x.split('/')[1] != sys.argv[2]]\n    \
         g = h5py.File(p, 'w'); g.create_dataset('index', data=[ids[i] for i in keep], \
         dtype=h5py.string_dtype(encoding='ascii')); g.create_dataset('features', data=v[keep]); g.close()\n",
        &[feat2.to_str().unwrap(), lines[0].rsplit('/').next().unwrap()],
    );
    let out = tailrank(&[
        "ilias",
        "--dataset-dir",
        ds,
        "--features",
        feat2.to_str().unwrap(),
        "--selected-ids",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(Mismatch.exit_code()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("distractor_ids.txt.gz")
            && err.contains("missing")
            && err.contains("missing.txt"),
        "{err}"
    );
    assert!(Path::new(&feat2).join("features_positive.hdf5").exists());
}
