//! `tailrank sample` against Python's `xxhash.xxh3_64_intdigest` selection (docs/method.md §4).

use tailrank_test_support::python as common;

use std::io::Write;

use tailrank_test_support::cli::tailrank;

const REFERENCE: &str = r#"
import sys, json, gzip
import xxhash
path, f, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
op = gzip.open if path.endswith(".gz") else open
# The recipe of docs/reference/formats.md: lines end at \n only (newline="\n"), CRLF endings stripped,
# trailing empty entries dropped.
ids = [l.rstrip("\r\n") for l in op(path, "rt", encoding="utf-8", newline="\n")]
while ids and ids[-1] == "":
    ids.pop()
t = int(f * 2**64)
kept = [i for i in ids if f == 1.0 or xxhash.xxh3_64_intdigest(i.encode(), seed=seed) < t]
blob = "".join(i + "\n" for i in kept).encode()
print(json.dumps({"N": len(ids), "S": len(kept), "kept": kept, "digest": "%016x" % xxhash.xxh3_64_intdigest(blob)}))
"#;

#[test]
fn sample_matches_python_xxhash() {
    let d = tempfile::tempdir().unwrap();
    let ids: Vec<String> = (0..20_000)
        .map(|i| format!("yfcc{:03}/{:09}", i % 7, i))
        .collect();
    let plain = d.path().join("ids.txt");
    std::fs::write(
        &plain,
        ids.iter().map(|i| format!("{i}\n")).collect::<String>(),
    )
    .unwrap();
    let gz = d.path().join("ids.txt.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    for i in &ids {
        writeln!(enc, "{i}").unwrap();
    }
    enc.finish().unwrap();
    // CRLF endings (and trailing blank lines) read as documented, by the tool and the recipe.
    let crlf = d.path().join("ids_crlf.txt");
    std::fs::write(
        &crlf,
        ids.iter().map(|i| format!("{i}\r\n")).collect::<String>() + "\r\n\n",
    )
    .unwrap();
    for (input, f, seed) in [
        (&plain, "0.05", "7"),
        (&gz, "0.3", "0"),
        (&plain, "1", "3"),
        (&crlf, "0.5", "1"),
    ] {
        let out = d.path().join(format!("s_{f}_{seed}.txt"));
        let (ok, _, err) = tailrank(&[
            "sample",
            "--ids",
            input.to_str().unwrap(),
            "--fraction",
            f,
            "--seed",
            seed,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(ok, "{err}");
        let r: serde_json::Value = serde_json::from_str(&common::run_python(
            REFERENCE,
            &[input.to_str().unwrap(), f, seed],
        ))
        .unwrap();
        let got: Vec<String> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        let want: Vec<String> = r["kept"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, want, "fraction {f} seed {seed}");
        let man: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(d.path().join(format!("s_{f}_{seed}.txt.manifest.json")))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(man["N"], r["N"]);
        assert_eq!(man["S"], r["S"]);
        assert_eq!(man["digest"], r["digest"]);
        assert_eq!(man["seed"].as_u64().unwrap(), seed.parse::<u64>().unwrap());
        assert_eq!(man["fraction"].as_f64().unwrap(), f.parse::<f64>().unwrap());
    }
}

#[test]
fn sample_rejects_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("ids.txt");
    std::fs::write(&p, "a\nb\na\n").unwrap();
    let o = d.path().join("o.txt");
    let (ok, _, err) = tailrank(&[
        "sample",
        "--ids",
        p.to_str().unwrap(),
        "--fraction",
        "0.5",
        "-o",
        o.to_str().unwrap(),
    ]);
    assert!(
        !ok && err.contains("duplicate") && err.contains("ids.txt"),
        "{err}"
    );
    for f in ["0", "1.5", "-0.1", "nan"] {
        let arg = format!("--fraction={f}");
        let (ok, _, err) = tailrank(&[
            "sample",
            "--ids",
            p.to_str().unwrap(),
            &arg,
            "-o",
            o.to_str().unwrap(),
        ]);
        assert!(!ok && err.contains("fraction"), "{f}: {err}");
    }
    assert!(!o.exists());
}

/// `-o X.manifest.json` next to a sample `X` would replace X's manifest by an id list (and
/// write `X.manifest.json.manifest.json`): refused, both files of X kept.
#[test]
fn a_sample_over_another_samples_manifest_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let ids = d.path().join("ids.txt");
    std::fs::write(&ids, "a\nb\nc\nd\n").unwrap();
    let s = d.path().join("s.txt");
    let sample = |out: &std::path::Path, f: &str| {
        let (i, o) = (ids.to_str().unwrap(), out.to_str().unwrap());
        tailrank(&["sample", "--ids", i, "--fraction", f, "-o", o])
    };
    let (ok, _, err) = sample(&s, "0.5");
    assert!(ok, "{err}");
    let manifest = d.path().join("s.txt.manifest.json");
    let before = std::fs::read(&manifest).unwrap();
    let (ok, _, err) = sample(&manifest, "0.25");
    assert!(
        !ok && err.contains("is the manifest of the sample") && err.contains("s.txt"),
        "{err}"
    );
    assert_eq!(std::fs::read(&manifest).unwrap(), before);
    assert!(!d.path().join("s.txt.manifest.json.manifest.json").exists());
    // Beside a file that is no sample (the id list given as input), the name is an output.
    let ids_manifest = d.path().join("ids.txt.manifest.json");
    let (ok, _, err) = sample(&ids_manifest, "0.25");
    assert!(ok, "{err}");
    // The other way: a sample over X whose manifest X.manifest.json would replace the id
    // list of a sample written under that name.
    std::fs::remove_file(&manifest).unwrap();
    let (ok, _, err) = sample(&manifest, "0.25");
    assert!(ok, "{err}");
    let list = std::fs::read(&manifest).unwrap();
    let (ok, _, err) = sample(&s, "0.5");
    assert!(
        !ok && err.contains("is not a sample manifest") && err.contains("s.txt.manifest.json"),
        "{err}"
    );
    assert_eq!(std::fs::read(&manifest).unwrap(), list);
}

/// Regression (issue 44): an id list with a bare CR inside an id was refused only when the
/// sample kept that id, naming the output and the sample index (at f = 0.5 it passed, while
/// Python's text-mode readers split the line there). Every line is checked, whatever the
/// fraction: the error names the input and its line.
#[test]
fn sample_refuses_a_carriage_return_inside_an_id_at_every_fraction() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("ids.txt");
    let mut text: String = (0..50).map(|i| format!("id{i}\n")).collect();
    text.push_str("a\rb\n");
    std::fs::write(&p, text).unwrap();
    for f in ["0.5", "0.01", "1"] {
        let o = d.path().join(format!("o_{f}.txt"));
        let (ok, _, err) = tailrank(&[
            "sample",
            "--ids",
            p.to_str().unwrap(),
            "--fraction",
            f,
            "-o",
            o.to_str().unwrap(),
        ]);
        assert!(!ok, "f = {f}: accepted");
        assert!(
            err.contains(&format!("{}: line 51: carriage return", p.display())),
            "f = {f}: {err}"
        );
        assert!(!err.contains("o_"), "f = {f}: names the output: {err}");
        assert!(!o.exists());
    }
}
