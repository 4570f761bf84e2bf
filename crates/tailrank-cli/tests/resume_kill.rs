//! Kill and resume: a real `tailrank scan` process is killed with SIGKILL at seeded random
//! moments (possibly several times in a row), then continued with `--resume`; the final
//! summary folder and results JSON must be byte-identical to an uninterrupted scan, and the
//! partial folder must be gone. Also: an existing partial folder without `--resume` is an
//! error saying what to do, and `--resume` with other options is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;
use tailrank::formats::descriptors::Dtype;
use tailrank::formats::ids::write_ids;
use tailrank::formats::npy::write_npy;

use tailrank_test_support::cli::bin;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unif(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn unit(rng: &mut Rng, center: Option<&[f32]>, d: usize, w: f32) -> Vec<f32> {
    let mut v: Vec<f32> = (0..d)
        .map(|i| center.map_or(0.0, |c| c[i]) + w * (rng.unif() as f32 - 0.5))
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// Queries, core, ground truth and three pool shards of f16 descriptors in `dir`.
fn write_inputs(dir: &Path) -> Vec<String> {
    let d = 32;
    let mut rng = Rng(7);
    let nq = 8;
    let centers: Vec<Vec<f32>> = (0..nq).map(|_| unit(&mut rng, None, d, 1.0)).collect();
    let (mut qd, mut cd, mut qids, mut cids) = (vec![], vec![], vec![], vec![]);
    let mut gt = serde_json::Map::new();
    for (q, c) in centers.iter().enumerate() {
        qids.push(format!("q{q}"));
        qd.extend(unit(&mut rng, Some(c), d, 0.1));
        let mut pos = vec![];
        for j in 0..4 {
            cids.push(format!("c{q}_{j}"));
            cd.extend(unit(&mut rng, Some(c), d, 0.2 + 0.3 * j as f32));
            pos.push(serde_json::Value::from(format!("c{q}_{j}")));
        }
        gt.insert(format!("q{q}"), pos.into());
    }
    let save = |name: &str, ids: &[String], data: &[f32]| {
        write_npy(
            &dir.join(format!("{name}.npy")),
            ids.len(),
            d,
            data,
            Dtype::F16,
        )
        .unwrap();
        write_ids(&dir.join(format!("{name}.ids.txt")), ids).unwrap();
    };
    save("queries", &qids, &qd);
    save("core", &cids, &cd);
    std::fs::write(dir.join("gt.json"), serde_json::to_string(&gt).unwrap()).unwrap();
    let mut args = vec![
        "--queries".into(),
        dir.join("queries.npy").display().to_string(),
        "--core".into(),
        dir.join("core.npy").display().to_string(),
        "--gt".into(),
        dir.join("gt.json").display().to_string(),
        "--pool".into(),
    ];
    for (s, n) in [(0, 3000), (1, 1700), (2, 2500)] {
        let ids: Vec<String> = (0..n).map(|i| format!("yfcc/{s}/{i:05}")).collect();
        let data: Vec<f32> = (0..n)
            .flat_map(|_| {
                let c = centers[(rng.next() % nq as u64) as usize].clone();
                let w = 0.5 + 2.0 * rng.unif() as f32;
                unit(&mut rng, Some(&c), d, w)
            })
            .collect();
        save(&format!("pool{s}"), &ids, &data);
        args.push(dir.join(format!("pool{s}.npy")).display().to_string());
    }
    args
}

fn scan_cmd(inputs: &[String], out: &Path, extra: &[&str]) -> Command {
    scan_cmd_chunks(inputs, out, 150, extra)
}

fn scan_cmd_chunks(inputs: &[String], out: &Path, chunk_rows: usize, extra: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.arg("scan")
        .args(inputs)
        .args(["--fraction", "0.5", "--seed", "3", "--top-m", "50"])
        .args(["--model", "m", "--k", "20", "--threads", "1"])
        .args(["--chunk-rows", &chunk_rows.to_string()])
        .arg("-o")
        .arg(out)
        .arg("--results-out")
        .arg(out.with_extension("results.json"))
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn run(mut c: Command) -> Output {
    c.output().unwrap()
}

fn partial(out: &Path) -> PathBuf {
    let mut n = out.file_name().unwrap().to_os_string();
    n.push(".partial");
    out.with_file_name(n)
}

/// Every file of summary folder `a` equals the one in `b`, and the results files are equal.
fn assert_identical(a: &Path, b: &Path) {
    let mut names: Vec<_> = std::fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    let mut names_b: Vec<_> = std::fs::read_dir(b)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names_b.sort();
    assert_eq!(names, names_b);
    // manifest.json, manifest.xxh3, six arrays, pool_id_hashes.npy and the two tie arrays
    // (format 2).
    assert_eq!(names.len(), 11);
    for n in &names {
        assert!(
            std::fs::read(a.join(n)).unwrap() == std::fs::read(b.join(n)).unwrap(),
            "{} differs between {} and {}",
            n.to_string_lossy(),
            a.display(),
            b.display()
        );
    }
    assert_eq!(
        std::fs::read(a.with_extension("results.json")).unwrap(),
        std::fs::read(b.with_extension("results.json")).unwrap()
    );
}

#[test]
fn sigkill_at_random_points_then_resume_equals_uninterrupted() {
    let t = tempfile::tempdir().unwrap();
    let inputs = write_inputs(t.path());
    let reference = t.path().join("reference");
    let started = Instant::now();
    let o = run(scan_cmd(&inputs, &reference, &[]));
    let full = started.elapsed();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!partial(&reference).exists(), "partial folder removed");

    // One chunk for all files: the same summary.
    let whole = t.path().join("whole");
    assert!(run(scan_cmd_chunks(&inputs, &whole, 100_000, &[]))
        .status
        .success());
    assert_identical(&reference, &whole);

    let mut rng = Rng(2026);
    let mut interrupted = 0;
    for round in 0..5 {
        let out = t.path().join(format!("run{round}"));
        let kills = 1 + rng.next() % 3;
        let mut first = true;
        for _ in 0..kills {
            let extra: &[&str] = if first { &[] } else { &["--resume"] };
            first = false;
            let mut child = scan_cmd(&inputs, &out, extra).spawn().unwrap();
            let at = full.mul_f64(0.05 + 0.9 * rng.unif());
            std::thread::sleep(at);
            child.kill().unwrap(); // SIGKILL
            let status = child.wait().unwrap();
            if !status.success() {
                interrupted += 1;
            }
        }
        let o = run(scan_cmd(&inputs, &out, &["--resume"]));
        assert!(
            o.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            !partial(&out).exists(),
            "round {round}: partial folder left"
        );
        assert_identical(&reference, &out);
    }
    assert!(
        interrupted >= 3,
        "only {interrupted} kills interrupted a scan"
    );
}

#[test]
fn partial_folder_needs_resume_and_matching_options() {
    let t = tempfile::tempdir().unwrap();
    let inputs = write_inputs(t.path());
    let out = t.path().join("out");
    // A partial folder as an interrupted run leaves it: a run killed after its third chunk
    // was saved (test hook).
    let o = {
        let mut c = scan_cmd(&inputs, &out, &[]);
        c.env("TAILRANK_FAILPOINT", "chunk:2");
        run(c)
    };
    assert_eq!(
        o.status.code(),
        None,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(partial(&out).join("plan.json").is_file());
    assert!(partial(&out).join("chunk-000002").is_dir());

    let o = run(scan_cmd(&inputs, &out, &[]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Output.exit_code()),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{}: a partial scan is in the way (left by an interrupted run): rerun with `--resume` \
             to continue it, or delete this folder to start over",
            partial(&out).display()
        )),
        "{err}"
    );
    let o = run(scan_cmd(&inputs, &out, &["--resume", "--normalize"]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Mismatch.exit_code()),
        "{err}"
    );
    assert!(
        err.contains("cannot resume: the partial scan was made with a different normalize (partial: false, now: true)"),
        "{err}"
    );
    let o = run(scan_cmd(&inputs, &out, &["--resume"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("chunk(s) reused"));
    assert!(!partial(&out).exists());
}

#[test]
fn partial_folder_without_a_chunk_is_started_over() {
    let t = tempfile::tempdir().unwrap();
    let inputs = write_inputs(t.path());
    let reference = t.path().join("reference");
    let o = run(scan_cmd(&inputs, &reference, &[]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Killed before its first chunk was saved: only the plan (and an unfinished chunk).
    let out = t.path().join("out");
    let o = {
        let mut c = scan_cmd(&inputs, &out, &[]);
        c.env("TAILRANK_FAILPOINT", "chunk:0");
        run(c)
    };
    assert_eq!(o.status.code(), None);
    for e in std::fs::read_dir(partial(&out)).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with("chunk-") {
            std::fs::rename(e.path(), partial(&out).join("chunk-000000.tmp")).unwrap();
        }
    }
    assert!(partial(&out).join("plan.json").is_file());
    let o = run(scan_cmd(&inputs, &out, &[]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!partial(&out).exists());
    assert_identical(&reference, &out);

    // A folder of that name holding anything else is never deleted.
    let other = t.path().join("other");
    std::fs::create_dir_all(partial(&other)).unwrap();
    std::fs::write(partial(&other).join("notes.txt"), "mine").unwrap();
    let o = run(scan_cmd(&inputs, &other, &[]));
    assert_eq!(
        o.status.code(),
        Some(tailrank::ErrorKind::Output.exit_code())
    );
    assert!(partial(&other).join("notes.txt").is_file());
}
