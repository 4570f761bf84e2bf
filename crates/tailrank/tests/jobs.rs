//! The jobs of the front ends (`tailrank::jobs`): what they print and in which order, which
//! report form a view selects, the outputs claimed before any input is read, and the defaults
//! a job fills in for the options not given.

use std::path::Path;
use tailrank::jobs::predict::{CurveJob, PredictFlags, PredictInputFiles, PredictJob};
use tailrank::jobs::scan::SampleJob;
use tailrank::jobs::simulate::ValidateJob;
use tailrank::jobs::{Console, View};
use tailrank::predict::{predict_with_plan, read_summary_for_metrics, NextStepPlan};
use tailrank::predict::{FitMode, PredictRequest};
use tailrank::report::headline::prediction_headline;
use tailrank::report::{prediction_json, prediction_table};
use tailrank::simulate::validation::ValidationOptions;
use tailrank::simulate::{simulate_to_dir, SimConfig};
use tailrank::ErrorKind;

/// A console that keeps what a job prints.
#[derive(Default)]
struct Recorder {
    out: String,
    err: Vec<String>,
}

impl Console for Recorder {
    fn out(&mut self, text: &str) {
        self.out.push_str(text);
    }

    fn err(&mut self, line: &str) {
        self.err.push(line.to_string());
    }
}

/// The prediction request of these tests: no bootstrap and no sample noise (fast).
fn request() -> PredictRequest<'static> {
    PredictRequest {
        bootstrap: 0,
        sample_noise: 0,
        ..PredictRequest::DEFAULT
    }
}

fn flags(fit_top_renamed: bool) -> PredictFlags<'static> {
    PredictFlags {
        request: request(),
        fit_top_renamed,
    }
}

/// A small simulated benchmark's summary folder `dir/sim/summary`.
fn summary_in(dir: &Path) -> std::path::PathBuf {
    let cfg = SimConfig::preset("ilias-like", 3).unwrap().with_queries(40);
    simulate_to_dir(&cfg, &dir.join("sim"), None).unwrap();
    dir.join("sim").join("summary")
}

fn predict_job<'a>(summary: &'a Path, view: View) -> PredictJob<'a> {
    PredictJob {
        flags: flags(false),
        input: PredictInputFiles {
            summary: Some(summary),
            hardness: None,
        },
        hardness_out: None,
        html: None,
        target_width: None,
        view,
    }
}

#[test]
fn view_prefers_json_then_details_then_the_headline() {
    assert_eq!(View::of(true, false), View::Json);
    assert_eq!(View::of(true, true), View::Json);
    assert_eq!(View::of(false, true), View::Details);
    assert_eq!(View::of(false, false), View::Headline);
}

#[test]
fn predict_job_prints_the_report_its_view_selects() {
    let d = tempfile::tempdir().unwrap();
    let dir = summary_in(d.path());
    let s = read_summary_for_metrics(&dir, |_| {}).unwrap();
    let plan = NextStepPlan {
        target_width: None,
        summary_path: Some(dir.display().to_string()),
    };
    let p = predict_with_plan(&s, &request().options().unwrap(), &plan).unwrap();
    for (view, want) in [
        (View::Headline, prediction_headline(&p)),
        (View::Details, prediction_table(&p)),
        (
            View::Json,
            serde_json::to_string_pretty(&prediction_json(&p)).unwrap() + "\n",
        ),
    ] {
        let mut c = Recorder::default();
        predict_job(&dir, view).run(&mut c).unwrap();
        assert_eq!(c.out, want, "{view:?}");
        assert!(c.err.is_empty(), "{view:?}: {:?}", c.err);
    }
}

#[test]
fn predict_job_writes_the_hardness_file_and_the_page() {
    let d = tempfile::tempdir().unwrap();
    let dir = summary_in(d.path());
    let (csv, html) = (d.path().join("h.csv"), d.path().join("p.html"));
    let job = PredictJob {
        hardness_out: Some(&csv),
        html: Some(&html),
        ..predict_job(&dir, View::Headline)
    };
    job.run(&mut Recorder::default()).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.lines().count() > 40, "one line per positive: {text}");
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
}

#[test]
fn predict_job_refuses_a_bad_width_before_reading_its_input() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("no-summary");
    let csv = d.path().join("h.csv");
    let job = PredictJob {
        hardness_out: Some(&csv),
        target_width: Some(0.0),
        ..predict_job(&missing, View::Headline)
    };
    let mut c = Recorder::default();
    let e = job.run(&mut c).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Option);
    assert_eq!(
        e.to_string(),
        "--target-width must be a positive number of points, got 0"
    );
    assert!(!csv.exists() && c.out.is_empty() && c.err.is_empty());
}

#[test]
fn predict_job_needs_a_pool_size_the_input_lacks() {
    let d = tempfile::tempdir().unwrap();
    let mut s = read_summary_for_metrics(&summary_in(d.path()), |_| {}).unwrap();
    s.pool_size = None;
    let dir = d.path().join("no-n");
    s.write(&dir).unwrap();
    let e = predict_job(&dir, View::Headline)
        .run(&mut Recorder::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Option);
    let want = format!(
        "the pool size N is unknown: {} does not record it; give --pool-size",
        dir.display()
    );
    assert_eq!(e.to_string(), want);
    let job = PredictJob {
        flags: PredictFlags {
            request: PredictRequest {
                pool_size: Some(100_000_000),
                ..request()
            },
            fit_top_renamed: false,
        },
        ..predict_job(&dir, View::Headline)
    };
    job.run(&mut Recorder::default()).unwrap();
}

#[test]
fn the_former_name_of_fit_top_warns_once() {
    let mut c = Recorder::default();
    flags(true).options(&mut c).unwrap();
    assert_eq!(
        c.err,
        [format!(
            "tailrank: warning: {}",
            tailrank::jobs::predict::FIT_TOP_RENAMED
        )]
    );
    let mut quiet = Recorder::default();
    flags(false).options(&mut quiet).unwrap();
    assert!(quiet.err.is_empty());
}

#[test]
fn curve_job_refuses_an_unknown_image_format_first() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("curve.txt");
    let job = CurveJob {
        flags: flags(true),
        input: PredictInputFiles {
            summary: Some(&d.path().join("no-summary")),
            hardness: None,
        },
        out: &out,
        from: 1e3,
        to: 1e9,
        per_decade: 8,
        json: false,
    };
    let mut c = Recorder::default();
    let e = job.run(&mut c).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Output);
    // Refused before the options are made: no warning of the former name either.
    assert!(c.err.is_empty() && c.out.is_empty());
}

#[test]
fn sample_job_prints_what_it_kept() {
    let d = tempfile::tempdir().unwrap();
    let ids = d.path().join("ids.txt");
    let list: String = (0..1000).map(|i| format!("pool/{i:06}\n")).collect();
    std::fs::write(&ids, list).unwrap();
    let out = d.path().join("sample.txt");
    let job = SampleJob {
        ids: &ids,
        fraction: 0.5,
        after: Some(0.25),
        seed: 3,
        out: &out,
    };
    let mut c = Recorder::default();
    job.run(&mut c).unwrap();
    let kept = std::fs::read_to_string(&out).unwrap().lines().count();
    assert!(kept > 150 && kept < 350, "{kept} of 1000 in [0.25, 0.5)");
    let want = format!(
        "sampled {kept} of 1000 ids (fraction 0.25 to 0.5, seed 3) -> {}\n",
        out.display()
    );
    assert_eq!(c.out, want);
}

#[test]
fn validate_job_fills_the_options_not_given_with_the_defaults() {
    let presets = ["ilias-like".to_string()];
    let job = ValidateJob {
        list: false,
        presets: Some(&presets),
        seeds: None,
        first_seed: 7,
        fraction: None,
        fractions: Some(&[0.02]),
        pool_size: Some(1_000_000),
        queries: None,
        bootstrap: None,
        fit: FitMode::Fixed,
        excess_centre: false,
        out: Path::new("report.md"),
        json: None,
        quiet: true,
        exam: false,
        vector_runs: &[],
        command: String::new(),
    };
    let d = ValidationOptions::default();
    let want = ValidationOptions {
        presets: presets.to_vec(),
        first_seed: 7,
        fractions: vec![0.02],
        pool_size: Some(1_000_000),
        fit: FitMode::Fixed,
        excess_centre: false,
        ..d.clone()
    };
    assert_eq!(job.options(), want);
    assert_eq!((want.seeds, want.fraction), (d.seeds, d.fraction));
}
