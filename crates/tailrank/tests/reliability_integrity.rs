//! Integrity of the hardness CSV: the writer ends the file with `# checksum: xxh3:…` over every
//! preceding byte (checked against Python's `xxhash`), the reader refuses a file whose content
//! was changed (one digit of `x_hat`), and reads a file without the line (other tools) unchecked.

use tailrank_test_support::python as common;

use tailrank::evt::{Gpd, GpdFit};
use tailrank::formats::hardness_csv::{
    read_hardness_csv, write_hardness_csv, CHECKSUM_NONE, CHECKSUM_PREFIX,
};
use tailrank::hardness::{Branch, HardnessMeta, PositiveHardness, QueryHardness, QueryTail};

fn artifact() -> (HardnessMeta, Vec<QueryHardness>) {
    let meta = HardnessMeta {
        model: "m".into(),
        query_set: "image".into(),
        pool_size: Some(1_000_000),
        sample_size: 50_000,
        fraction: 0.05,
        seed: 7,
        estimator: "evt(top_m=4000,quantile=0.95,c_min=5)".into(),
        tool_version: "0.1.0".into(),
        excess_move: None,
        hit_scales: None,
        spacing_move: None,
    };
    let p = |id: &str, s: f32, c: u64, k: u64, x: f64, b: Branch| PositiveHardness {
        id: id.into(),
        score: s,
        core_above: c,
        pool_above: k,
        x_hat: x,
        branch: b,
    };
    let qs = vec![
        QueryHardness {
            query_id: "q1".into(),
            sample_size: 50_000,
            tail: Some(QueryTail {
                u: 0.41,
                n_u: 200,
                fit: GpdFit {
                    gpd: Gpd {
                        sigma: 0.02,
                        xi: -0.31,
                    },
                    log_likelihood: 647.25,
                    n: 200,
                },
            }),
            positives: vec![
                p("a", 0.73, 0, 0, 0.0, Branch::Immune),
                p("b,c", 0.52, 1, 2, 1.25e-9, Branch::Tail),
            ],
        },
        QueryHardness {
            query_id: "q2".into(),
            sample_size: 50_000,
            tail: None,
            positives: vec![p("d", 0.38, 0, 12, 0.00024, Branch::Count)],
        },
    ];
    (meta, qs)
}

#[test]
fn hardness_csv_checksum_written_verified_and_refused_when_corrupted() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("h.csv");
    let (meta, qs) = artifact();
    write_hardness_csv(&path, &meta, &qs).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.lines().last().unwrap();
    assert!(last.starts_with(CHECKSUM_PREFIX), "{last}");
    // Independent reference: Python's xxhash over the bytes before the last line.
    let py = common::run_python(
        "import sys, xxhash\n\
         b = open(sys.argv[1], 'rb').read()\n\
         body = b[: b.rstrip(b'\\n').rfind(b'\\n') + 1]\n\
         print('xxh3:%016x' % xxhash.xxh3_64_intdigest(body))",
        &[path.to_str().unwrap()],
    );
    assert_eq!(last.strip_prefix(CHECKSUM_PREFIX).unwrap(), py.trim());
    let (m2, q2) = read_hardness_csv(&path).unwrap();
    assert_eq!(m2, meta);
    assert_eq!(q2.len(), qs.len());
    assert_eq!(q2[0].positives[1].x_hat, 1.25e-9);

    // One digit of x_hat changed: still a well-formed file, refused by the checksum.
    let bad = text.replacen(",0.00000000125,", ",0.00000000135,", 1);
    assert_ne!(bad, text);
    let bad_path = t.path().join("bad.csv");
    std::fs::write(&bad_path, &bad).unwrap();
    let e = read_hardness_csv(&bad_path).unwrap_err().to_string();
    assert!(
        e.contains("bad.csv") && e.contains("checksum mismatch"),
        "{e}"
    );

    // Without the checksum line: refused (a cut file loses it); with `# checksum: none`
    // (another tool's file, or a deliberate edit): read unchecked.
    let body: String = bad
        .lines()
        .filter(|l| !l.starts_with(CHECKSUM_PREFIX))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&bad_path, &body).unwrap();
    let e = read_hardness_csv(&bad_path).unwrap_err().to_string();
    assert!(
        e.contains("bad.csv") && e.contains("no checksum line"),
        "{e}"
    );
    std::fs::write(&bad_path, format!("{body}{CHECKSUM_NONE}\n")).unwrap();
    let (_, q3) = read_hardness_csv(&bad_path).unwrap();
    assert_eq!(q3[0].positives[1].x_hat, 1.35e-9);
}

/// Regression: a hardness file cut at a line boundary (whole rows lost, the checksum line with
/// them) used to be read as a smaller, well-formed artifact.
#[test]
fn hardness_csv_cut_at_a_line_boundary_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("h.csv");
    let (meta, qs) = artifact();
    write_hardness_csv(&path, &meta, &qs).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Every cut after the header at a line boundary, the last one dropping only the checksum.
    let header = lines
        .iter()
        .position(|l| l.starts_with("query_id"))
        .unwrap();
    for keep in header + 1..lines.len() {
        let cut: String = lines[..keep].iter().map(|l| format!("{l}\n")).collect();
        let p = t.path().join(format!("cut{keep}.csv"));
        std::fs::write(&p, &cut).unwrap();
        let e = read_hardness_csv(&p).unwrap_err().to_string();
        assert!(
            e.contains(&format!("cut{keep}.csv")) && e.contains("cut short"),
            "{keep}: {e}"
        );
    }
}
