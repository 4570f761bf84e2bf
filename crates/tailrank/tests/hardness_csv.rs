//! The hardness CSV artifact: exact round trip, readability with Python's csv module, and
//! clear errors on malformed files.

use tailrank_test_support::python as common;

use std::path::Path;
use tailrank::evt::{Gpd, GpdFit};
use tailrank::formats::hardness_csv::{read_hardness_csv, write_hardness_csv, HARDNESS_COLUMNS};
use tailrank::hardness::{
    Branch, ExcessMove, HardnessMeta, HitScales, PositiveHardness, QueryHardness, QueryTail,
    SpacingMove,
};

fn meta() -> HardnessMeta {
    HardnessMeta {
        model: "dinov3-l".into(),
        query_set: "image".into(),
        pool_size: Some(100_000_000),
        sample_size: 5_000_123,
        fraction: 0.05,
        seed: 42,
        estimator: "evt(top_m=4000,quantile=0.95,c_min=5)".into(),
        tool_version: tailrank::TOOL_VERSION.into(),
        excess_move: None,
        hit_scales: None,
        spacing_move: None,
    }
}

fn pos(id: &str, score: f32, c: u64, k: u64, x: f64, b: Branch) -> PositiveHardness {
    PositiveHardness {
        id: id.into(),
        score,
        core_above: c,
        pool_above: k,
        x_hat: x,
        branch: b,
    }
}

fn queries() -> Vec<QueryHardness> {
    let tail = QueryTail {
        u: 0.412_345_678_901_234_5,
        n_u: 200,
        fit: GpdFit {
            gpd: Gpd {
                sigma: 0.021_987_654_321,
                xi: -0.318_181_818_181_818_2,
            },
            log_likelihood: 647.267_152_3,
            n: 200,
        },
    };
    vec![
        QueryHardness {
            query_id: "Q001/query.jpg".into(),
            sample_size: 5_000_123,
            tail: Some(tail),
            positives: vec![
                pos(
                    "Q001/pos,with comma.jpg",
                    0.731_234_5,
                    0,
                    0,
                    0.0,
                    Branch::Immune,
                ),
                pos(
                    "Q001/\"quoted\".jpg",
                    0.52,
                    1,
                    2,
                    1.234_567_890_123e-9,
                    Branch::Tail,
                ),
                pos("#hash", 0.41, 3, 17, 17.0 / 5_000_123.0, Branch::Count),
            ],
        },
        QueryHardness {
            query_id: "no tail".into(),
            sample_size: 5_000_123,
            tail: None,
            positives: vec![pos("p", -0.1, 0, 5_000_123, 1.0, Branch::Count)],
        },
        QueryHardness {
            query_id: "no positives".into(),
            sample_size: 5_000_123,
            tail: None,
            positives: vec![],
        },
    ]
}

#[test]
fn round_trip_is_exact_and_python_reads_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.csv");
    write_hardness_csv(&p, &meta(), &queries()).unwrap();
    let (m, q) = read_hardness_csv(&p).unwrap();
    assert_eq!(m, meta());
    assert_eq!(q, queries());
    // Only the file itself is left (written atomically through a temp sibling).
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);

    let mut m2 = meta();
    m2.pool_size = None;
    write_hardness_csv(&p, &m2, &queries()[..1]).unwrap();
    assert_eq!(read_hardness_csv(&p).unwrap().0, m2);

    // The move to the centre of the excess travels with the file, bit for bit.
    let mut m3 = meta();
    m3.excess_move = Some(ExcessMove {
        rate: 1.234_567_890_123e-9,
        weight: 0.912_345_678_9,
        decay: 1.35,
        pool_size: Some(100_000_000),
    });
    write_hardness_csv(&p, &m3, &queries()).unwrap();
    assert_eq!(read_hardness_csv(&p).unwrap().0, m3);

    // So do the hit@1 scales calibrated on the levels (format version 3).
    let mut m4 = m3.clone();
    m4.hit_scales = Some(HitScales {
        tail: 0.123_456_789_012_3,
        immune: 0.045_678_901_234,
    });
    write_hardness_csv(&p, &m4, &queries()).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains("# format_version: 4\n"), "{text}");
    assert!(
        text.contains("# hit_tail_scale: 0.1234567890123\n"),
        "{text}"
    );
    assert_eq!(read_hardness_csv(&p).unwrap().0, m4);

    // And the move to the centre of the rare items above the top positive (version 4).
    let mut m5 = m4.clone();
    m5.spacing_move = Some(SpacingMove {
        rate: 7.135_852_289_191_417e-9,
        weight: 0.618_033_988_749,
    });
    write_hardness_csv(&p, &m5, &queries()).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.contains("# spacing_weight: 0.618033988749\n"),
        "{text}"
    );
    assert_eq!(read_hardness_csv(&p).unwrap().0, m5);

    // Python's csv module reads the same table after skipping the '#' lines.
    let code = r#"
import csv, sys
lines = [l for l in open(sys.argv[1], newline='') if not l.startswith('#')]
rows = list(csv.DictReader(lines))
print(','.join(rows[0].keys()))
for r in rows:
    print(r['query_id'], '|', r['positive_id'], '|', r['j'], '|', r['branch'], '|', r['x_hat'])
"#;
    write_hardness_csv(&p, &meta(), &queries()).unwrap();
    let out = common::run_python(code, &[p.to_str().unwrap()]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], HARDNESS_COLUMNS.join(","));
    assert_eq!(lines.len(), 1 + 5);
    assert_eq!(
        lines[1],
        "Q001/query.jpg | Q001/pos,with comma.jpg | 1 | immune | 0"
    );
    assert_eq!(lines[2].split(" | ").nth(1), Some("Q001/\"quoted\".jpg"));
    assert_eq!(lines[3].split(" | ").nth(1), Some("#hash"));
    assert_eq!(lines[5], "no positives |  | 0 |  | ");
}

fn write_text(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("bad.csv");
    std::fs::write(&p, text).unwrap();
    p
}

const HEAD: &str = "# model: m\n# query_set: image\n# pool_size: 1000\n# sample_size: 100\n\
# fraction: 0.1\n# seed: 1\n# estimator: count\n# tool_version: 0.1.0\n";
const COLS: &str = "query_id,positive_id,j,score,core_above,pool_above,sample_size,x_hat,branch,\
tail_u,tail_sigma,tail_xi,tail_n_u\n";

fn err(dir: &Path, text: &str) -> String {
    let p = write_text(dir, text);
    let e = read_hardness_csv(&p).unwrap_err().to_string();
    assert!(e.contains("bad.csv"), "error names the file: {e}");
    e
}

#[test]
fn malformed_files_give_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    // A minimal valid file (no tail_log_likelihood column: it reads as NaN), as another tool
    // writes it (no checksum: it says so on its last line).
    let ok = format!(
        "{HEAD}{COLS}q,p,1,0.5,0,3,100,0.03,count,,,,\nq,r,2,0.4,1,4,100,0.04,count,,,,\n\
         # checksum: none\n"
    );
    let (m, q) = read_hardness_csv(&write_text(dir, &ok)).unwrap();
    assert_eq!(m.pool_size, Some(1000));
    // Extra columns are ignored, even repeated ones (trailing commas of a spreadsheet).
    let extra = ok
        .replace("tail_n_u\n", "tail_n_u,note,note,,\n")
        .replace(",,,,\n", ",,,,,a,b,,\n");
    assert_eq!(extra.matches(",a,b,,").count(), 2);
    assert_eq!(read_hardness_csv(&write_text(dir, &extra)).unwrap().1, q);
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].positives.len(), 2);
    let ok_tail =
        format!("{HEAD}{COLS}q,p,1,0.5,0,3,100,0.03,tail,0.3,0.01,-0.2,20\n# checksum: none\n");
    let (_, q) = read_hardness_csv(&write_text(dir, &ok_tail)).unwrap();
    let t = q[0].tail.unwrap();
    assert_eq!((t.u, t.n_u, t.fit.gpd.xi), (0.3, 20, -0.2));
    assert!(t.fit.log_likelihood.is_nan());
    let e = err(dir, &ok_tail.replace(",-0.2,20\n", ",-0.2,0\n"));
    assert!(e.contains("tail_n_u: 0 exceedances"), "{e}");
    // A tail (or immune) positive needs its query's fit; another format is not read.
    let e = err(dir, &ok_tail.replace("0.3,0.01,-0.2,20", ",,,"));
    assert!(
        e.contains("line 10") && e.contains("branch tail needs"),
        "{e}"
    );
    let e = err(dir, &format!("# format: other\n{ok_tail}"));
    assert!(
        e.contains("line 1") && e.contains("format \"other\""),
        "{e}"
    );

    let e = err(
        dir,
        &format!("{HEAD}query_id,positive_id,j,score,x_hat,branch\n"),
    );
    for c in [
        "core_above",
        "pool_above",
        "sample_size",
        "tail_u",
        "tail_n_u",
    ] {
        assert!(e.contains(c), "{e}");
    }
    assert!(!e.contains("x_hat"), "{e}");
    let e = err(
        dir,
        &format!("{HEAD}{COLS}q,p,1,0.5,0,3,100,abc,count,,,,\n"),
    );
    assert!(
        e.contains("line 10") && e.contains("x_hat") && e.contains("abc"),
        "{e}"
    );
    let e = err(
        dir,
        &format!("{HEAD}{COLS}q,p,1,0.5,0,3,100,0.03,maybe,,,,\n"),
    );
    assert!(
        e.contains("line 10") && e.contains("unknown branch") && e.contains("maybe"),
        "{e}"
    );
    let e = err(
        dir,
        &format!("{HEAD}{COLS}q,p,1,0.5,0,3,100,1.5,count,,,,\n"),
    );
    assert!(e.contains("x_hat"), "{e}");
    let e = err(
        dir,
        &format!("{HEAD}{COLS}q,p,1,0.5,0,-3,100,0.03,count,,,,\n"),
    );
    assert!(e.contains("pool_above"), "{e}");
    let e = err(
        dir,
        &format!("{HEAD}{COLS}q,p,2,0.5,0,3,100,0.03,count,,,,\n"),
    );
    assert!(e.contains("j = 2, expected 1"), "{e}");
    let e = err(
        dir,
        &format!("{HEAD}{COLS}q,p,1,0.5,0,3,100,0.03,count,,,,\nr,p,1,0.5,0,3,100,0.03,count,,,,\nq,s,2,0.5,0,3,100,0.03,count,,,,\n"),
    );
    assert!(
        e.contains("line 12") && e.contains("separate blocks"),
        "{e}"
    );
    let e = err(
        dir,
        &format!("{HEAD}{COLS}q,p,1,0.5,0,3,100,0.03,tail,0.3,,-0.2,20\n"),
    );
    assert!(e.contains("partly empty"), "{e}");
    let e = err(
        dir,
        &format!("{HEAD}{COLS}q,p,1,0.5,0,3,100,0.03,count,,,\n"),
    );
    assert!(e.contains("12 fields"), "{e}");
    let e = err(
        dir,
        &format!("{HEAD}{COLS}\"q,p,1,0.5,0,3,100,0.03,count,,,,\n"),
    );
    assert!(e.contains("unterminated quote"), "{e}");
    let e = err(dir, &format!("# model: m\n{COLS}"));
    assert!(
        e.contains("query_set") && e.contains("sample_size") && e.contains("seed"),
        "{e}"
    );
    let e = err(
        dir,
        &format!("{}{COLS}", HEAD.replace("seed: 1", "seed: one")),
    );
    assert!(e.contains("seed") && e.contains("one"), "{e}");
    // The hit@1 scales come in a pair, the tail scale positive, the immune one in [0, 1].
    for (keys, want) in [
        ("# hit_tail_scale: 0.2\n", "without its pair"),
        ("# hit_immune_scale: 0.2\n", "without its pair"),
        (
            "# hit_tail_scale: 0\n# hit_immune_scale: 0.2\n",
            "hit_tail_scale",
        ),
        (
            "# hit_tail_scale: 0.2\n# hit_immune_scale: 1.5\n",
            "hit_immune_scale",
        ),
        // So does the spacing move, its rate positive, its weight in (0, 1].
        ("# spacing_rate: 1e-8\n", "without its pair"),
        ("# spacing_weight: 0.5\n", "without its pair"),
        (
            "# spacing_rate: -1\n# spacing_weight: 0.5\n",
            "spacing_rate",
        ),
        (
            "# spacing_rate: 1e-8\n# spacing_weight: 0\n",
            "spacing_weight",
        ),
    ] {
        let e = err(dir, &format!("{HEAD}{keys}{COLS}"));
        assert!(e.contains(want), "{keys}: {e}");
    }
    let e = err(dir, &format!("# format_version: 9\n{HEAD}{COLS}"));
    assert!(e.contains("newer"), "{e}");
    // The centre of the excess: both keys or neither, each in its range; the decay needs the
    // pool size its rate is for. (header lines, words the error must name)
    let excess_cases: [(&str, &[&str]); 6] = [
        (
            "# excess_rate: 1e-9\n",
            &["excess_rate", "without its pair"],
        ),
        (
            "# excess_rate: -1\n# excess_weight: 0.5\n",
            &["excess_rate", "positive"],
        ),
        (
            "# excess_rate: 1e-9\n# excess_weight: 1.5\n",
            &["excess_weight", "(0, 1]"],
        ),
        (
            "# excess_rate: 1e-9\n# excess_weight: 0.5\n# excess_decay: -1\n",
            &["excess_decay", "≥ 0"],
        ),
        (
            "# excess_rate: 1e-9\n# excess_weight: 0.5\n# excess_decay: 1\n",
            &["excess_pool_size"],
        ),
        ("# excess_decay: 1\n", &["excess_decay", "without"]),
    ];
    for (lines, words) in excess_cases {
        let e = err(dir, &format!("{HEAD}{lines}{COLS}"));
        assert!(words.iter().all(|w| e.contains(w)), "{lines:?}: {e}");
    }
    let e = err(dir, HEAD);
    assert!(e.contains("no header"), "{e}");

    // Values no sample can hold, read unchecked (`# checksum: none`): refused, line named.
    let row = "q,p,1,0.5,0,3,100,0.03,count,,,,\n";
    let impossible: [(String, &[&str]); 13] = [
        (
            format!("{HEAD}{COLS}q,p,1,0.5,0,101,100,0.03,count,,,,\n"),
            &["line 10", "pool_above", "101", "sample_size 100"],
        ),
        (
            format!("{HEAD}{COLS}q,p,1,0.5,0,3,100,0.03,tail,0.3,0.01,-0.2,101\n"),
            &[
                "line 10",
                "tail_n_u",
                "101",
                "more than the sample_size 100",
            ],
        ),
        (
            format!("{HEAD}{COLS}{row}r,p,1,0.5,0,3,200,0.015,count,,,,\n"),
            &[
                "line 11",
                "query r",
                "sample_size 200",
                "metadata's sample_size 100",
            ],
        ),
        (
            HEAD.replace("fraction: 0.1", "fraction: 1.5") + COLS + row,
            &["line 5", "fraction", "1.5", "(0, 1]"],
        ),
        (
            HEAD.replace("fraction: 0.1", "fraction: 0") + COLS + row,
            &["fraction", "(0, 1]"],
        ),
        (
            format!("{HEAD}# sample_size: 200\n{COLS}{row}"),
            &["line 9", "sample_size", "second time", "line 4"],
        ),
        // A positive twice, and positives out of score order (j is the score order).
        (
            format!("{HEAD}{COLS}{row}q,p,2,0.4,1,4,100,0.04,count,,,,\n"),
            &["line 11", "query q", "\"p\" listed twice"],
        ),
        (
            format!("{HEAD}{COLS}{row}q,r,2,0.6,1,4,100,0.04,count,,,,\n"),
            &["line 11", "\"r\" scores 0.6 above", "0.5", "descending"],
        ),
        // Edits the writer never makes: a column twice (two readers would take different
        // ones), empty ids, a version that never existed, N below S.
        (
            format!(
                "{HEAD}{}x_hat\nq,p,1,0.5,0,3,100,0.03,count,,,,,0\n",
                COLS.trim_end().to_owned() + ","
            ),
            &[
                "line 9",
                "column \"x_hat\" appears twice",
                "columns 8 and 14",
            ],
        ),
        (
            format!("{HEAD}{COLS},p,1,0.5,0,3,100,0.03,count,,,,\n"),
            &["line 10", "column query_id is empty"],
        ),
        (
            format!("{HEAD}{COLS}q,,1,0.5,0,3,100,0.03,count,,,,\n"),
            &["line 10", "column positive_id is empty"],
        ),
        (
            format!("# format_version: 0\n{HEAD}{COLS}{row}"),
            &["line 1", "format_version 0 does not exist"],
        ),
        (
            HEAD.replace("pool_size: 1000", "pool_size: 99") + COLS + row,
            &[
                "line 3",
                "pool_size: N = 99",
                "smaller than the sample_size 100",
            ],
        ),
    ];
    for (text, words) in impossible {
        let e = err(dir, &format!("{text}# checksum: none\n"));
        assert!(words.iter().all(|w| e.contains(w)), "{text:?}: {e}");
    }
    // A comment line that looks like `# key: value` may repeat.
    let commented = format!("# note: a\n# note: b\n{HEAD}{COLS}{row}# checksum: none\n");
    assert!(read_hardness_csv(&write_text(dir, &commented)).is_ok());
    let missing = dir.join("missing.csv");
    assert!(read_hardness_csv(&missing)
        .unwrap_err()
        .to_string()
        .contains("missing.csv"));

    // Ids with line breaks cannot be stored: refused at write time, nothing written.
    let mut q = queries();
    q[0].positives[0].id = "a\nb".into();
    let p = dir.join("out.csv");
    let e = write_hardness_csv(&p, &meta(), &q).unwrap_err().to_string();
    assert!(e.contains("line break"), "{e}");
    assert!(!p.exists());
}

/// Regression (found by the round-trip property in CI): a query without positives whose id is
/// "\0" followed by a query with another id and a positive. The reader once marked
/// declared-empty queries in the same set as the ids, under "\0" + id, so the two collided
/// (the ids were "\0" and ""; empty ids are refused now, "\0\0" is the same marker).
#[test]
fn empty_query_id_markers_do_not_collide() {
    let qs = vec![
        QueryHardness {
            query_id: "\0".into(),
            sample_size: 0,
            tail: None,
            positives: vec![],
        },
        QueryHardness {
            query_id: "\0\0".into(),
            sample_size: 0,
            tail: None,
            positives: vec![pos("p", 0.0, 0, 0, 0.0, Branch::Count)],
        },
    ];
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.csv");
    write_hardness_csv(&p, &meta(), &qs).unwrap();
    assert_eq!(read_hardness_csv(&p).unwrap().1, qs);
}

mod roundtrip {
    use super::*;
    use proptest::prelude::*;

    fn branch() -> impl Strategy<Value = Branch> {
        prop_oneof![
            Just(Branch::Count),
            Just(Branch::Tail),
            Just(Branch::Immune)
        ]
    }

    /// A positive of a query whose sample holds `s` items (`pool_above ≤ s`).
    fn positive(s: u64) -> impl Strategy<Value = PositiveHardness> {
        (
            "[^\r\n]{1,12}",
            -1.0f32..1.0,
            0u64..1000,
            0u64..=s,
            prop_oneof![Just(0.0), Just(1.0), 0.0f64..1.0, 1e-300f64..1e-10],
            branch(),
        )
            .prop_map(|(id, score, c, k, x, b)| pos(&id, score, c, k, x, b))
    }

    /// A valid query of an artifact whose metadata records sample size `max_s`: its sample
    /// no larger, its counts and exceedances no larger than its sample.
    fn query(max_s: u64) -> impl Strategy<Value = QueryHardness> {
        prop_oneof![Just(0u64), Just(max_s), 0..=max_s].prop_flat_map(query_of_sample)
    }

    /// [`meta`] with the largest sample (and pool) size a u64 holds (counts up to it round-trip
    /// too).
    fn huge_meta() -> HardnessMeta {
        HardnessMeta {
            sample_size: u64::MAX,
            pool_size: Some(u64::MAX),
            ..meta()
        }
    }

    fn query_of_sample(s: u64) -> impl Strategy<Value = QueryHardness> {
        (
            "[^\r\n]{1,12}",
            Just(s),
            // A fitted tail has at least one exceedance (n_u ≤ s), so an empty sample has none.
            prop::option::of((
                -1.0f64..1.0,
                1usize..=(s.clamp(1, 5000) as usize),
                1e-9f64..1.0,
                -1.0f64..=0.0,
                -1e6f64..1e6,
            ))
            .prop_map(move |t| t.filter(|_| s > 0)),
            prop::collection::vec(positive(s), 0..4),
        )
            .prop_map(|(id, s, tail, mut positives)| {
                // A query's positives as a prediction holds them: each once, by score
                // descending (the reader refuses other orders).
                positives.sort_by(|a, b| b.score.total_cmp(&a.score));
                let mut ids = std::collections::HashSet::new();
                positives.retain(|p| ids.insert(p.id.clone()));
                // Without a fitted tail every positive is resolved by its count.
                if tail.is_none() {
                    for p in &mut positives {
                        p.branch = Branch::Count;
                    }
                }
                (id, s, tail, positives)
            })
            .prop_map(|(id, s, tail, positives)| QueryHardness {
                query_id: id,
                sample_size: s,
                tail: tail.map(|(u, n_u, sigma, xi, ll)| QueryTail {
                    u,
                    n_u,
                    fit: GpdFit {
                        gpd: Gpd { sigma, xi },
                        log_likelihood: ll,
                        n: n_u,
                    },
                }),
                positives,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
        /// Any ids (commas, quotes, '#', spaces, unicode) and any numbers survive the round trip.
        #[test]
        fn random_artifacts_round_trip(
            qs in prop::collection::vec(query(meta().sample_size), 1..6),
            huge in prop::collection::vec(query(u64::MAX), 1..4),
        ) {
            for (m, qs) in [(meta(), qs), (huge_meta(), huge)] {
                // Query ids must be distinct (one block per query).
                let mut seen = std::collections::HashSet::new();
                let qs: Vec<QueryHardness> =
                    qs.into_iter().filter(|q| seen.insert(q.query_id.clone())).collect();
                let d = tempfile::tempdir().unwrap();
                let p = d.path().join("h.csv");
                write_hardness_csv(&p, &m, &qs).unwrap();
                let (m_back, back) = read_hardness_csv(&p).unwrap();
                prop_assert_eq!(m_back, m);
                prop_assert_eq!(back, qs);
            }
        }
    }

    /// An artifact without a query row is refused on reading, naming the file.
    #[test]
    fn an_artifact_without_rows_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h.csv");
        write_hardness_csv(&p, &meta(), &[]).unwrap();
        let e = read_hardness_csv(&p).unwrap_err().to_string();
        assert!(
            e.contains("h.csv") && e.contains("holds no query row"),
            "{e}"
        );
    }
}

/// Every whole-file reader refuses a device at once (`/dev/zero` filled the memory): the
/// hardness CSV, the ILIAS taxonomy, a simulation's truth.
#[cfg(unix)]
#[test]
fn a_device_is_refused_by_every_whole_file_reader() {
    let dev = Path::new("/dev/zero");
    let msgs = [
        read_hardness_csv(dev).unwrap_err().to_string(),
        tailrank::ilias::read_taxonomy(dev).unwrap_err().to_string(),
        tailrank::simulate::Truth::read(dev)
            .unwrap_err()
            .to_string(),
    ];
    for m in msgs {
        assert!(m.starts_with("/dev/zero: a device, not a file"), "{m}");
    }
}
