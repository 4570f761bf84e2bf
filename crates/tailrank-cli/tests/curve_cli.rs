//! `tailrank curve`: SVG and PNG output with the bundled font, and the curve's JSON.

use tailrank_test_support::predict_support;
use tailrank_test_support::python as common;

use predict_support::{synth, SynthOpts};

use tailrank_test_support::cli::tailrank;

#[test]
fn svg_and_png_curves() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    synth(&SynthOpts {
        queries: 30,
        sample: 8000,
        levels: 4,
        ..SynthOpts::default()
    })
    .summary
    .write(&sdir)
    .unwrap();
    let sd = sdir.to_str().unwrap();
    let svg = d.path().join("c.svg");
    let (ok, out, err) = tailrank(&[
        "curve",
        "--summary",
        sd,
        "-o",
        svg.to_str().unwrap(),
        "--bootstrap",
        "100",
        "--json",
    ]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.contains("mAP@1000") && text.contains("count baseline")
    );
    let c: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pts = c["points"].as_array().unwrap();
    assert_eq!(pts.first().unwrap()["pool_size"].as_f64().unwrap(), 1e3);
    assert_eq!(pts.last().unwrap()["pool_size"].as_f64().unwrap(), 1e9);
    // mAP@k never grows with N; the band holds the estimate.
    for w in pts.windows(2) {
        assert!(w[1]["estimate"].as_f64().unwrap() <= w[0]["estimate"].as_f64().unwrap() + 1e-12);
    }
    for p in pts {
        let (lo, e, hi) = (
            p["lo"].as_f64().unwrap(),
            p["estimate"].as_f64().unwrap(),
            p["hi"].as_f64().unwrap(),
        );
        assert!(lo <= e + 1e-12 && e <= hi + 1e-12);
    }
    assert_eq!(c["level_points"].as_array().unwrap().len(), 4);

    let png = d.path().join("c.png");
    let (ok, _, err) = tailrank(&[
        "curve",
        "--summary",
        sd,
        "-o",
        png.to_str().unwrap(),
        "--bootstrap",
        "100",
    ]);
    assert!(ok, "{err}");
    let code = r#"
import sys, zlib, struct
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", b[16:24])
# Decode the IDAT stream (8-bit RGB, filters) enough to count non-white pixels.
pos, data = 8, b""
while pos < len(b):
    n = struct.unpack(">I", b[pos:pos+4])[0]; t = b[pos+4:pos+8]
    if t == b"IDAT": data += b[pos+8:pos+8+n]
    pos += 12 + n
raw = zlib.decompress(data)
print(w, h, len(raw) == h * (1 + 3 * w))
"#;
    let r = common::run_python(code, &[png.to_str().unwrap()]);
    assert_eq!(r.trim(), "960 600 True");

    let (ok, _, err) = tailrank(&[
        "curve",
        "--summary",
        sd,
        "-o",
        d.path().join("c.jpg").to_str().unwrap(),
    ]);
    assert!(!ok && err.contains(".svg or .png"), "{err}");
    let (ok, _, err) = tailrank(&[
        "curve",
        "--summary",
        sd,
        "-o",
        svg.to_str().unwrap(),
        "--from",
        "1e6",
        "--to",
        "1e3",
    ]);
    assert!(!ok && err.contains("curve range"), "{err}");
    // One pool size (`--from` = `--to`): a marker at it, on an axis with ticks around it.
    let one = d.path().join("one.svg");
    let (ok, _, err) = tailrank(&[
        "curve",
        "--summary",
        sd,
        "-o",
        one.to_str().unwrap(),
        "--from",
        "5e4",
        "--to",
        "5e4",
    ]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&one).unwrap().replace('\n', "");
    // The estimate's marker is blue (the level points are red circles too).
    let blue = (text.split("<circle").skip(1))
        .any(|c| c.split("/>").next().unwrap().contains("stroke=\"#1F77B4\""));
    assert!(blue, "no marker for the one point");
    assert!(
        text.contains(">1e4</text>") && text.contains(">1e5</text>"),
        "no ticks around the point's N"
    );
}

/// Writes an example summary, table and plots into `$TAILRANK_PLOT_DIR` for a visual check.
#[test]
#[ignore]
fn write_example_plots() {
    let dir = std::path::PathBuf::from(std::env::var("TAILRANK_PLOT_DIR").unwrap());
    let sdir = dir.join("summary");
    synth(&SynthOpts {
        queries: 60,
        sample: 20_000,
        levels: 4,
        ..SynthOpts::default()
    })
    .summary
    .write(&sdir)
    .unwrap();
    let sd = sdir.to_str().unwrap();
    for name in ["curve.png", "curve.svg"] {
        let (ok, _, err) = tailrank(&[
            "curve",
            "--summary",
            sd,
            "-o",
            dir.join(name).to_str().unwrap(),
        ]);
        assert!(ok, "{err}");
    }
    let (ok, out, err) = tailrank(&["predict", "--summary", sd, "--details"]);
    assert!(ok, "{err}");
    std::fs::write(dir.join("table.txt"), out).unwrap();
}

/// A summary that keeps one top score per query (`scan --top-m 1`) has no tail to fit: `curve`
/// says so, naming M, instead of blaming a `--fit-top` the user never gave; the count
/// estimator still draws it.
#[test]
fn a_summary_of_one_top_score_is_refused_naming_m() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    synth(&SynthOpts {
        queries: 10,
        sample: 2000,
        top_m: 1,
        ..SynthOpts::default()
    })
    .summary
    .write(&sdir)
    .unwrap();
    let (sd, svg) = (sdir.to_str().unwrap(), d.path().join("c.svg"));
    let args = [
        "curve",
        "--summary",
        sd,
        "-o",
        svg.to_str().unwrap(),
        "--bootstrap",
        "0",
    ];
    let (ok, _, err) = tailrank(&args);
    assert!(
        !ok && err.contains("top M = 1") && !err.contains("fit-top"),
        "{err}"
    );
    let (ok, _, err) = tailrank(&[&args[..], &["--estimator", "count"]].concat());
    assert!(ok, "{err}");
}
