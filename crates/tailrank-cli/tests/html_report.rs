//! `tailrank predict --html`: the page renders in a real headless browser (Debian's chromium,
//! `scripts/setup-browser.sh`), its screenshot is not blank, and the rendered DOM holds the
//! estimate, the interval ends, hit@1 and Recall@k exactly as `--json` prints them; the next
//! step is rendered when the JSON carries one and reported missing when not.
//!
//! The browser is `TAILRANK_CHROMIUM`, else `/usr/bin/chromium`; without either the test fails
//! and names the setup script, unless `TAILRANK_SKIP_BROWSER=1`.

use tailrank_test_support::predict_support;

use predict_support::{synth, SynthOpts};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser to use, or None when the test is skipped on purpose.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TAILRANK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let default = Path::new("/usr/bin/chromium");
    if default.exists() {
        return Some(default.to_path_buf());
    }
    if std::env::var("TAILRANK_SKIP_BROWSER").as_deref() == Ok("1") {
        eprintln!("html_report: TAILRANK_SKIP_BROWSER=1: the headless browser test is skipped");
        return None;
    }
    panic!(
        "no headless browser: TAILRANK_CHROMIUM is unset and /usr/bin/chromium is missing; run \
         scripts/setup-browser.sh (or set TAILRANK_SKIP_BROWSER=1 to skip this test)"
    );
}

/// Run headless chromium on `page` with `mode` (`--dump-dom` or `--screenshot=PNG`), with a
/// fresh profile and no network use; returns stdout. Killed after 60 s.
fn browse(browser: &Path, page: &Path, mode: &str, profile: &Path) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1200,2000",
            mode,
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{} {mode} took over 60 s", browser.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{} {mode}: {status}", browser.display());
    reader.join().unwrap()
}

/// The attribute `attr` and the text of the element with `id="{id}"` in a serialized DOM.
fn element(dom: &str, id: &str, attr: &str) -> (String, String) {
    let at = dom
        .find(&format!(r#"id="{id}""#))
        .unwrap_or_else(|| panic!("no element {id} in the DOM"));
    let start = dom[..at].rfind('<').unwrap();
    let end = at + dom[at..].find('>').unwrap();
    let tag = &dom[start..end];
    let key = format!(r#"{attr}=""#);
    let v = &tag[tag
        .find(&key)
        .unwrap_or_else(|| panic!("{id}: no {attr} in {tag}"))
        + key.len()..];
    let value = v[..v.find('"').unwrap()].to_string();
    let text = &dom[end + 1..];
    (value, text[..text.find('<').unwrap()].to_string())
}

/// Distinct colours and the share of non-white pixels of a PNG.
fn png_variety(path: &Path) -> (usize, f64, (u32, u32)) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let bytes = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut ink = 0usize;
    for p in bytes.chunks(px) {
        colours.insert(p[..3.min(px)].to_vec());
        ink += usize::from(p[..3.min(px)].iter().any(|&c| c < 240));
    }
    let n = bytes.len() / px;
    (
        colours.len(),
        ink as f64 / n as f64,
        (info.width, info.height),
    )
}

fn predict_json_and_html(dir: &Path, html: &Path) -> Value {
    let sdir = dir.join("summary");
    synth(&SynthOpts {
        queries: 30,
        sample: 8000,
        ..SynthOpts::default()
    })
    .summary
    .write(&sdir)
    .unwrap();
    let out = Command::new(tailrank_test_support::cli::bin())
        .args(["predict", "--summary", sdir.to_str().unwrap()])
        .args([
            "--bootstrap",
            "200",
            "--sample-noise",
            "20",
            "--json",
            "--html",
        ])
        .arg(html)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn html_report_renders_in_chromium_with_the_json_numbers() {
    let d = tempfile::tempdir().unwrap();
    let html = d.path().join("report.html");
    let j = predict_json_and_html(d.path(), &html);
    let Some(browser) = chromium() else { return };
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("<script") && !page.contains("src=") && !page.contains("href="),
        "the page loads nothing"
    );
    let dom = browse(&browser, &html, "--dump-dom", &d.path().join("p1"));
    let realized = &j["realized"]["map_at_k_realized_interval"];
    assert!(realized.is_array(), "{j}");
    for (id, v) in [
        ("estimate", &j["map_at_k"]),
        ("interval-lo", &realized[0]),
        ("interval-hi", &realized[1]),
        ("hit-at-1", &j["hit_at_1"]),
        ("recall-at-k", &j["recall_at_k"]),
    ] {
        let (json_text, shown) = element(&dom, id, "data-json");
        assert_eq!(json_text, v.to_string(), "{id}: the JSON's number");
        assert_eq!(
            shown,
            format!("{:.2}", 100.0 * v.as_f64().unwrap()),
            "{id}: shown in percent"
        );
    }
    let (_, verdict) = element(&dom, "verdict", "class");
    assert_eq!(verdict, j["trust"]["verdict"].as_str().unwrap());
    let levels = j["levels"].as_array().unwrap();
    assert_eq!(dom.matches("class=\"reading\"").count(), levels.len());
    assert_eq!(
        dom.matches("class=\"level-prediction\"").count(),
        levels.len()
    );
    let bins: usize = dom
        .match_indices("data-count=\"")
        .map(|(i, m)| dom[i + m.len()..].split('"').next().unwrap())
        .map(|c| c.parse::<usize>().unwrap())
        .sum();
    assert_eq!(bins, j["queries"].as_array().unwrap().len());
    for check in [
        "trend",
        "in-sample",
        "fit-choice",
        "falling",
        "endpoint",
        "spacing",
        "budget",
        "drift",
    ] {
        assert!(dom.contains(&format!("id=\"check-{check}\"")), "{check}");
    }
    let sp = &j["trust"]["spacing"];
    assert!(
        dom.contains(&format!(
            "In {} of the {} queries tested",
            sp["exceeding"], sp["tested"]
        )),
        "the top-spacing check's numbers: {sp}"
    );
    // The next step `predict` computed is on the page as in the JSON.
    let (action, _) = element(&dom, "next-step", "data-action");
    assert_eq!(action, j["next_step"]["action"].as_str().unwrap());
    let message = j["next_step"]["message"].as_str().unwrap();
    assert!(
        dom.contains(&tailrank::report::html::escape(message)),
        "{message}"
    );

    let shot = d.path().join("report.png");
    let arg = format!("--screenshot={}", shot.display());
    browse(&browser, &html, &arg, &d.path().join("p2"));
    let (colours, ink, size) = png_variety(&shot);
    assert_eq!(size, (1200, 2000));
    assert!(colours >= 20, "{colours} colours: a blank page");
    assert!(ink > 0.02, "{ink}: almost no ink on the page");
}

#[test]
fn html_report_renders_the_next_step_of_the_json() {
    let d = tempfile::tempdir().unwrap();
    let mut j = predict_json_and_html(d.path(), &d.path().join("plain.html"));
    let Some(browser) = chromium() else { return };
    j["next_step"] = serde_json::json!({
        "action": "grow",
        "message": "Grow the sample to 10% <twice the budget> & rerun.",
        "fraction": 0.1,
        "projected_width": 0.04,
        "commands": ["tailrank sample --ids ids.txt --fraction 0.1 --after 0.05 -o new.txt",
                     "tailrank grow s5 part -o s10"],
    });
    let html = d.path().join("next.html");
    std::fs::write(&html, tailrank::report::html::prediction_html(&j)).unwrap();
    let dom = browse(&browser, &html, "--dump-dom", &d.path().join("p"));
    let (action, _) = element(&dom, "next-step", "data-action");
    assert_eq!(action, "grow");
    assert!(dom.contains("Grow the sample to 10% &lt;twice the budget&gt; &amp; rerun."));
    assert!(dom.contains(
        "<pre>tailrank sample --ids ids.txt --fraction 0.1 --after 0.05 -o new.txt\n\
         tailrank grow s5 part -o s10</pre>"
    ));
    assert!(!dom.contains("No next step was computed"));

    // A JSON without the key (a report of an older tailrank) says so.
    j.as_object_mut().unwrap().remove("next_step");
    std::fs::write(&html, tailrank::report::html::prediction_html(&j)).unwrap();
    let dom = browse(&browser, &html, "--dump-dom", &d.path().join("p3"));
    assert!(dom.contains("No next step was computed"));
}

/// Run the `tailrank` binary with `args`; stdout as JSON.
fn json_of(args: &[&str]) -> Value {
    let out = Command::new(tailrank_test_support::cli::bin())
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The element `id`'s `data-json` is the JSON's `v` and its text `v` in percent.
fn assert_shown(dom: &str, id: &str, v: &Value, signed: bool) {
    let (json_text, shown) = element(dom, id, "data-json");
    assert_eq!(json_text, v.to_string(), "{id}: the JSON's number");
    let x = 100.0 * v.as_f64().unwrap();
    let want = if signed {
        format!("{x:+.2}")
    } else {
        format!("{x:.2}")
    };
    assert_eq!(shown, want, "{id}: shown in percent");
}

#[test]
fn compare_and_demo_pages_render_with_the_json_numbers() {
    let d = tempfile::tempdir().unwrap();
    let sdir = d.path().join("summary");
    synth(&SynthOpts {
        queries: 30,
        sample: 8000,
        ..SynthOpts::default()
    })
    .summary
    .write(&sdir)
    .unwrap();
    let s = sdir.to_str().unwrap();
    let page = d.path().join("compare.html");
    let c = json_of(&[
        "compare",
        s,
        s,
        "--bootstrap",
        "200",
        "--json",
        "--html",
        page.to_str().unwrap(),
    ]);
    let p = json_of(&[
        "predict",
        "--summary",
        s,
        "--bootstrap",
        "200",
        "--sample-noise",
        "0",
        "--json",
    ]);
    let demo_page = d.path().join("demo.html");
    let demo_dir = d.path().join("demo");
    let out = Command::new(tailrank_test_support::cli::bin())
        .args(["demo", "--queries", "30", "--bootstrap", "200"])
        .args(["--sample-noise", "0", "-o"])
        .arg(&demo_dir)
        .arg("--html")
        .arg(&demo_page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let Some(browser) = chromium() else { return };

    let dom = browse(&browser, &page, "--dump-dom", &d.path().join("p1"));
    assert_shown(&dom, "difference", &c["difference"], true);
    assert_shown(&dom, "difference-lo", &c["interval"]["lo"], true);
    assert_shown(&dom, "difference-hi", &c["interval"]["hi"], true);
    let (separated, _) = element(&dom, "separated", "data-json");
    assert_eq!(separated, c["separated"].to_string());
    // Each model's section is `predict`'s page with compare's options.
    for prefix in ["a", "b"] {
        assert_shown(&dom, &format!("{prefix}-estimate"), &p["map_at_k"], false);
        assert_shown(&dom, &format!("{prefix}-hit-at-1"), &p["hit_at_1"], false);
        let (action, _) = element(&dom, &format!("{prefix}-next-step"), "data-action");
        assert_eq!(action, p["next_step"]["action"].as_str().unwrap());
    }
    let shot = d.path().join("compare.png");
    browse(
        &browser,
        &page,
        &format!("--screenshot={}", shot.display()),
        &d.path().join("p2"),
    );
    let (colours, ink, _) = png_variety(&shot);
    assert!(
        colours >= 20 && ink > 0.02,
        "{colours} colours, ink {ink}: a blank page"
    );

    let dom = browse(&browser, &demo_page, "--dump-dom", &d.path().join("p3"));
    let read = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(demo_dir.join(name)).unwrap()).unwrap()
    };
    let (prediction, truth) = (read("prediction.json"), read("truth.json"));
    assert_shown(&dom, "estimate", &prediction["map_at_k"], false);
    assert_shown(&dom, "truth-map-at-k", &truth["map_at_k"], false);
    let error = prediction["map_at_k"].as_f64().unwrap() - truth["map_at_k"].as_f64().unwrap();
    assert_shown(&dom, "truth-error", &Value::from(error), true);
}
