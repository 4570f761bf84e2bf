//! Ground truth (ILIAS layout, JSON) and results files: what they give, and a clear error naming
//! the file (and line / id) for every kind of bad input.

use std::fs;
use std::path::{Path, PathBuf};
use tailrank::formats::gt::{ground_truth_notes, load_ground_truth, QuerySet};
use tailrank::formats::results::{read_results, QueryResults, Results};
use tailrank::metric::{evaluate_results, MissingPolicy};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, text).unwrap();
    p
}

fn err_of<T: std::fmt::Debug>(r: tailrank::Result<T>) -> String {
    r.unwrap_err().to_string()
}

/// A small ILIAS-like layout: 3 instances, image and text queries; positives with scale and
/// clutter columns.
fn ilias_layout(dir: &Path, sub: &str) {
    write(
        dir,
        &format!("{sub}image_query_ids.txt"),
        "I1/q_a.jpg,0.1,3\nI2/q_b.jpg,0.2,4\nI1/q_c.jpg,0.3,5\n",
    );
    write(
        dir,
        &format!("{sub}text_query_ids.txt"),
        "I2/text\nI3/text\n",
    );
    write(
        dir,
        &format!("{sub}positive_ids.txt"),
        "I1/p1.jpg,0.05,10\nI2/p1.jpg,0.5,20\nI1/p2.jpg,0.25,30\nI3/p1.jpg,0.1,1\nI9/p1.jpg,0.1,1\n",
    );
}

#[test]
fn ilias_layout_groups_positives_by_instance() {
    for sub in ["", "image_ids/"] {
        let d = tempfile::tempdir().unwrap();
        ilias_layout(d.path(), sub);
        let sets = load_ground_truth(d.path()).unwrap();
        assert_eq!(sets.len(), 2);
        let img = &sets[0];
        assert_eq!(img.name, "image");
        assert_eq!(img.query_ids, ["I1/q_a.jpg", "I2/q_b.jpg", "I1/q_c.jpg"]);
        assert_eq!(img.positives[0], ["I1/p1.jpg", "I1/p2.jpg"]);
        assert_eq!(img.positives[1], ["I2/p1.jpg"]);
        assert_eq!(img.positives[2], img.positives[0]);
        let txt = &sets[1];
        assert_eq!(txt.name, "text");
        assert_eq!(txt.query_ids, ["I2/text", "I3/text"]);
        assert_eq!(txt.positives[1], ["I3/p1.jpg"]);
    }
}

#[test]
fn ilias_layout_headers_and_missing_text_file() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "image_query_ids.txt",
        "image_id,scale,clutter\r\nA/q1,0.1,2\r\n\r\nB/q2,0.3,1\r\n",
    );
    write(
        d.path(),
        "positive_ids.txt",
        "id,scale,clutter\nA/p,0.1,1\nB/p,0.2,2\n",
    );
    let sets = load_ground_truth(d.path()).unwrap();
    assert_eq!(sets.len(), 1, "no text file: no text set");
    assert_eq!(sets[0].query_ids, ["A/q1", "B/q2"]);
    assert_eq!(
        sets[0].positives,
        vec![vec!["A/p".to_string()], vec!["B/p".to_string()]]
    );
}

/// Regression (issue 44): a first line was taken for a header by its shape (extra columns not
/// numbers while the next line's are; no `/` while the next id has one) and dropped silently.
/// Now only a column name makes a header, and a skipped header is reported.
#[test]
fn ilias_header_only_by_column_name_and_reported() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "image_query_ids.txt", "A/q1\nB/q1\n");
    write(
        d.path(),
        "text_query_ids.txt",
        "A/text,a red mug\nB/text,3\n",
    );
    write(
        d.path(),
        "positive_ids.txt",
        "A/p0.jpg,NA,NA\nA/p1.jpg,0.1,3\nB/p0.jpg,0.2,5\n",
    );
    let sets = load_ground_truth(d.path()).unwrap();
    assert_eq!(sets[0].positives[0], ["A/p0.jpg", "A/p1.jpg"]);
    assert_eq!(sets[1].query_ids, ["A/text", "B/text"]);
    assert!(ground_truth_notes(d.path()).unwrap().is_empty());

    // A column name is a header: skipped, and the note names the file, the line and the text.
    write(
        d.path(),
        "text_query_ids.txt",
        "query_id,description\nA/text,mug\n",
    );
    let sets = load_ground_truth(d.path()).unwrap();
    assert_eq!(sets[1].query_ids, ["A/text"]);
    let notes = ground_truth_notes(d.path()).unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("text_query_ids.txt: line 1")
            && notes[0].contains("query_id,description")
            && notes[0].contains("header"),
        "{notes:?}"
    );

    // A first id without `/` is data, not a header: its instance has no positives (line 1).
    write(d.path(), "text_query_ids.txt", "whatever\nA/text\n");
    let e = err_of(load_ground_truth(d.path()));
    assert!(
        e.contains("text_query_ids.txt: line 1") && e.contains("\"whatever\""),
        "{e}"
    );
}

/// The line rule of the id lists holds for the ILIAS id files too: a carriage return inside a
/// line and a byte order mark are refused, naming the file and the line; CRLF endings are read.
#[test]
fn ilias_id_files_follow_the_id_list_line_rule() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "positive_ids.txt", "A/p0\r\nB/p0\r\n");
    write(d.path(), "image_query_ids.txt", "A/q1\r\nB/q\r1\n");
    let e = err_of(load_ground_truth(d.path()));
    assert!(
        e.contains("image_query_ids.txt: line 2") && e.contains("carriage return"),
        "{e}"
    );
    write(d.path(), "image_query_ids.txt", "\u{feff}A/q1\nB/q1\n");
    let e = err_of(load_ground_truth(d.path()));
    assert!(
        e.contains("image_query_ids.txt: line 1") && e.contains("byte order mark"),
        "{e}"
    );
    write(d.path(), "image_query_ids.txt", "A/q1\r\nB/q1\r\n");
    let sets = load_ground_truth(d.path()).unwrap();
    assert_eq!(sets[0].query_ids, ["A/q1", "B/q1"]);
    assert_eq!(sets[0].positives[1], ["B/p0"]);
}

#[test]
fn ilias_layout_errors_name_file_and_line() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        // (image queries, positives, file named, message parts)
        (
            "A/q\nA/q\n",
            "A/p\n",
            "image_query_ids.txt",
            &["line 2", "duplicate query id", "A/q"],
        ),
        (
            "A/q\n",
            "A/p\nA/p\n",
            "positive_ids.txt",
            &["line 2", "duplicate positive"],
        ),
        (
            "A/q\nB/q\n",
            "A/p\n",
            "image_query_ids.txt",
            &["line 2", "instance \"B\" has no positives"],
        ),
        ("", "A/p\n", "image_query_ids.txt", &["empty"]),
        ("\n\n", "A/p\n", "image_query_ids.txt", &["empty"]),
        ("A/q\n", "", "positive_ids.txt", &["no positive ids"]),
        (
            "A/q,1\nA/r\n",
            "A/p\n",
            "image_query_ids.txt",
            &["line 2", "columns"],
        ),
        (
            "\"A/q\n",
            "A/p\n",
            "image_query_ids.txt",
            &["line 1", "unterminated quote"],
        ),
        (
            "A/q,1\n,3\n",
            "A/p\n",
            "image_query_ids.txt",
            &["line 2", "empty id"],
        ),
        (
            "/q\n",
            "A/p\n",
            "image_query_ids.txt",
            &["line 1", "no instance"],
        ),
    ];
    for (queries, positives, file, parts) in cases {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "image_query_ids.txt", queries);
        write(d.path(), "positive_ids.txt", positives);
        let e = err_of(load_ground_truth(d.path()));
        assert!(e.contains(file), "{queries:?}/{positives:?}: {e}");
        for p in *parts {
            assert!(
                e.contains(p),
                "{queries:?}/{positives:?}: missing {p:?} in {e}"
            );
        }
    }
    // A folder without the files.
    let d = tempfile::tempdir().unwrap();
    let e = err_of(load_ground_truth(d.path()));
    assert!(e.contains("positive_ids.txt"), "{e}");
    write(d.path(), "positive_ids.txt", "A/p\n");
    let e = err_of(load_ground_truth(d.path()));
    assert!(e.contains("image_query_ids.txt"), "{e}");
    // Not there at all.
    let e = err_of(load_ground_truth(&d.path().join("nope.json")));
    assert!(e.contains("nope.json"), "{e}");
}

#[test]
fn json_ground_truth() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "gt.json", r#"{"q2": ["a", "b"], "q1": ["c"]}"#);
    let escaped = write(d.path(), "esc.json", r#"{"q\u0041": ["\u00e9"]}"#);
    let sets = load_ground_truth(&escaped).unwrap();
    assert_eq!(
        (
            sets[0].query_ids[0].as_str(),
            sets[0].positives[0][0].as_str()
        ),
        ("qA", "é")
    );
    let sets = load_ground_truth(&p).unwrap();
    assert_eq!(
        sets,
        vec![QuerySet {
            name: "queries".into(),
            query_ids: vec!["q2".into(), "q1".into()],
            positives: vec![vec!["a".into(), "b".into()], vec!["c".into()]],
        }]
    );
    let cases: &[(&str, &[&str])] = &[
        (r#"{}"#, &["empty"]),
        (r#"{"q": []}"#, &["\"q\" has no positives"]),
        (
            r#"{"q": ["a"], "q": ["b"]}"#,
            &["duplicate query id", "\"q\""],
        ),
        (r#"{"q": ["a", "a"]}"#, &["duplicate positive", "\"a\""]),
        (r#"{"q": ["a", 3]}"#, &["must be a string"]),
        (r#"{"q": "a"}"#, &["expected an array"]),
        ("{\"q\": [\"a\"],\n \"r\": [\"b\"}", &["line 2"]),
        (r#"["a"]"#, &["JSON object"]),
        (r#"not json"#, &["line 1"]),
        // Four hex digits after \u: a sign is no digit (Python's json refuses it too).
        (r#"{"q": ["\u+041"]}"#, &["invalid \\u escape"]),
        (r#"{"q": ["\u-041"]}"#, &["invalid \\u escape"]),
    ];
    for (text, parts) in cases {
        let p = write(d.path(), "bad.json", text);
        let e = err_of(load_ground_truth(&p));
        assert!(e.contains("bad.json"), "{text}: {e}");
        for part in *parts {
            assert!(e.contains(part), "{text}: missing {part:?} in {e}");
        }
    }
}

#[test]
fn results_errors_name_query_and_db_id() {
    let d = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str])] = &[
        (
            r#"{"q1": {"a": 0.5, "b": NaN}}"#,
            &["\"q1\"", "\"b\"", "NaN", "not finite"],
        ),
        (r#"{"q1": {"a": Infinity}}"#, &["\"a\"", "Infinity"]),
        (r#"{"q1": {"a": 1e400}}"#, &["\"a\"", "not finite"]),
        (
            r#"{"q1": {"a": null}}"#,
            &["\"q1\"", "\"a\"", "must be a number", "null"],
        ),
        (r#"{"q1": {"a": "1.0"}}"#, &["\"a\"", "a string"]),
        (r#"{"q1": {"a": [1]}}"#, &["\"a\"", "an array"]),
        (r#"{"q1": {"a": true}}"#, &["\"a\"", "a boolean"]),
        (r#"{"q1": {"a": 1, "a": 2}}"#, &["\"a\"", "appears twice"]),
        (r#"{"q1": {}, "q1": {}}"#, &["\"q1\"", "appears twice"]),
        (r#"{"q1": [["a", 1]]}"#, &["\"q1\"", "expected an object"]),
        (
            "{\"q1\": {\"a\": 1}\n\"q2\": {}}",
            &["line 2", "expected ','"],
        ),
        (r#"{"q1": {"a": .5}}"#, &["line 1"]),
    ];
    for (text, parts) in cases {
        let p = write(d.path(), "res.json", text);
        let e = err_of(read_results(&p));
        assert!(e.contains("res.json"), "{text}: {e}");
        for part in *parts {
            assert!(e.contains(part), "{text}: missing {part:?} in {e}");
        }
    }
    let bin = d.path().join("bin.json");
    fs::write(&bin, b"{\"q\": {\"\xff\": 1}}").unwrap();
    assert!(err_of(read_results(&bin)).contains("UTF-8"));
}

#[test]
fn missing_queries_error_or_zero_and_unknown_warns() {
    let set = QuerySet::new(
        "gt",
        "image",
        vec!["q1".into(), "q2".into()],
        vec![vec!["a".into()], vec!["b".into()]],
    )
    .unwrap();
    let res = Results::new(
        "res.json",
        vec![
            QueryResults {
                query: "q1".into(),
                items: vec![("x".into(), 0.9), ("a".into(), 0.8)],
            },
            QueryResults {
                query: "stray".into(),
                items: vec![],
            },
        ],
    )
    .unwrap();
    let e = evaluate_results(std::slice::from_ref(&set), &res, 1000, MissingPolicy::Error)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("res.json") && e.contains("\"q2\"") && e.contains("\"image\""),
        "{e}"
    );
    let r = evaluate_results(&[set], &res, 1000, MissingPolicy::Zero).unwrap();
    let s = &r.sets[0];
    assert_eq!((s.n_queries, s.n_missing), (2, 1));
    assert!(!s.queries[0].missing && s.queries[1].missing);
    assert_eq!(s.queries[1].ap_at_k, 0.0);
    assert!((s.map_at_k - 0.25).abs() < 1e-15);
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("stray"), "{:?}", r.warnings);
    assert!(r.table(&[]).contains("25.00") && r.table(&[]).contains("1 missing"));
}

#[test]
fn bad_k_is_refused() {
    let set = QuerySet::new("gt", "s", vec!["q".into()], vec![vec!["a".into()]]).unwrap();
    let res = Results::new(
        "r.json",
        vec![QueryResults {
            query: "q".into(),
            items: vec![],
        }],
    )
    .unwrap();
    assert!(evaluate_results(&[set], &res, 0, MissingPolicy::Error).is_err());
}

#[test]
fn uncovered_sets_are_skipped_only_beside_covered_ones() {
    let image = QuerySet::new("gt", "image", vec!["a/q".into()], vec![vec!["a/p".into()]]).unwrap();
    let text = QuerySet::new("gt", "text", vec!["a/t".into()], vec![vec!["a/p".into()]]).unwrap();
    let res = Results::new(
        "res.json",
        vec![QueryResults {
            query: "a/q".into(),
            items: vec![("a/p".into(), 0.5)],
        }],
    )
    .unwrap();
    let both = [image.clone(), text.clone()];
    let r = evaluate_results(&both, &res, 10, MissingPolicy::Error).unwrap();
    assert_eq!(r.sets.len(), 1);
    assert_eq!(r.sets[0].name, "image");
    assert_eq!(r.sets[0].map_at_k, 1.0);
    assert!(
        r.warnings.iter().any(|w| w.contains("\"text\"")),
        "{:?}",
        r.warnings
    );
    // Alone, the uncovered set is evaluated strictly.
    let e = evaluate_results(std::slice::from_ref(&text), &res, 10, MissingPolicy::Error)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"a/t\""), "{e}");
    // No set covered at all.
    let empty = Results::new("res.json", vec![]).unwrap();
    let e = evaluate_results(&both, &empty, 10, MissingPolicy::Zero)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no query of the ground truth"), "{e}");
}
