//! Results to evaluate: the ILIAS JSON `{query_id: {db_id: score}}` (see `docs/reference/metrics.md`).
//!
//! Reading keeps the order of the file (queries and, within a query, db ids): the tie rule of
//! [`crate::metric`] uses it to decide which items of a tie block that straddles the cut at `k`
//! are kept, exactly as a stable sort of the official evaluator would. Scores are read as f64
//! (what Python's `json.load` gives the official evaluator), must be finite JSON numbers, and a
//! db id may appear only once per query; a query id only once in the file. Python's `json.dump`
//! writes `NaN`/`Infinity` for non-finite floats: these are recognised and rejected with the query
//! and db id named.
//!
//! Writing ([`write_results`]) is what `tailrank scan --results-out` produces: the same layout,
//! with each f32 score written as the shortest decimal that reads back as the exact f32 value in
//! f64, so Python and tailrank see identical scores (and identical ties).

use crate::atomic::write_file;
use crate::error::{Error, Result};
use crate::formats::json::{write_json_string, JsonReader, Scalar};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The results of one query, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResults {
    pub query: String,
    /// `(db_id, score)` in the order of the file; db ids unique, scores finite.
    pub items: Vec<(String, f64)>,
}

/// A whole results file: queries in file order, with an index by query id.
#[derive(Debug, Clone)]
pub struct Results {
    /// Where the results came from (named in errors about them).
    pub path: PathBuf,
    pub queries: Vec<QueryResults>,
    index: HashMap<String, usize>,
}

impl Results {
    /// Build from in-memory results (e.g. in tests); checks the same invariants as the reader:
    /// unique query ids, unique db ids per query, finite scores. `path` is used in messages.
    pub fn new(path: impl Into<PathBuf>, queries: Vec<QueryResults>) -> Result<Self> {
        let path = path.into();
        let mut index = HashMap::with_capacity(queries.len());
        for (i, q) in queries.iter().enumerate() {
            if index.insert(q.query.clone(), i).is_some() {
                return Err(Error::input(
                    &path,
                    format!("query id {:?} appears twice", q.query),
                ));
            }
            let mut seen = HashSet::with_capacity(q.items.len());
            for (id, s) in &q.items {
                if !seen.insert(id.as_str()) {
                    return Err(Error::input(
                        &path,
                        format!("query {:?}: db id {:?} appears twice", q.query, id),
                    ));
                }
                if !s.is_finite() {
                    return Err(Error::input(
                        &path,
                        format!(
                            "query {:?}: db id {:?}: score {s} is not finite",
                            q.query, id
                        ),
                    ));
                }
            }
        }
        Ok(Results {
            path,
            queries,
            index,
        })
    }

    /// The results of query `q`, if the file has them.
    pub fn get(&self, q: &str) -> Option<&QueryResults> {
        self.index.get(q).map(|&i| &self.queries[i])
    }
}

/// Read an ILIAS results JSON `{query_id: {db_id: score, ...}, ...}`.
///
/// Errors (all naming the file): not UTF-8, malformed JSON (line and column), a top level that
/// is not an object, a query whose value is not an object, a score that is not a number or is
/// not finite (naming query and db id), a duplicated query id or duplicated db id in a query.
pub fn read_results(path: &Path) -> Result<Results> {
    crate::atomic::check_settled(path)?;
    let bytes = super::read_input_file(path, "a results JSON")?;
    parse_results(path, &bytes)
}

/// Parse the bytes of a results JSON (see [`read_results`]); `path` is used in messages.
pub fn parse_results(path: &Path, bytes: &[u8]) -> Result<Results> {
    let mut r = JsonReader::new(path, bytes)?;
    let mut queries: Vec<QueryResults> = Vec::new();
    // Duplicated query and db ids are caught by `Results::new` (which names them).
    r.object(
        "the results file must be a JSON object {query_id: {db_id: score}}",
        |r, q| {
            let mut items: Vec<(String, f64)> = Vec::new();
            let what = format!("query {q:?}: expected an object {{db_id: score}}");
            r.object(&what, |r, db| {
                let v = r.scalar()?;
                let s = match v {
                    Scalar::Number(x) if x.is_finite() => x,
                    Scalar::Number(_) => {
                        return Err(r.error(format!(
                        "query {q:?}: db id {db:?}: score overflows a 64-bit float (not finite)"
                    )))
                    }
                    Scalar::NonFinite(tok) => {
                        return Err(r.error(format!(
                            "query {q:?}: db id {db:?}: score {tok} is not finite"
                        )))
                    }
                    Scalar::Other(kind) => {
                        return Err(r.error(format!(
                            "query {q:?}: db id {db:?}: score must be a number, found {kind}"
                        )))
                    }
                };
                items.push((db, s));
                Ok(())
            })?;
            queries.push(QueryResults { query: q, items });
            Ok(())
        },
    )?;
    r.finish()?;
    Results::new(path, queries)
}

/// Write results atomically in the ILIAS layout `{query_id: {db_id: score}}`, queries and items
/// in the given order (the scan passes each query's top-k, best first). Each f32 score is written
/// as the shortest decimal of its exact f64 value, so readers recover the f32 bit for bit.
/// Refuses non-finite scores, duplicated query ids and duplicated db ids within a query.
pub fn write_results(path: &Path, results: &[(String, Vec<(String, f32)>)]) -> Result<()> {
    let mut seen_q = HashSet::with_capacity(results.len());
    for (q, items) in results {
        if !seen_q.insert(q.as_str()) {
            return Err(Error::output(
                path,
                format!("cannot write results: query id {q:?} given twice"),
            ));
        }
        let mut seen = HashSet::with_capacity(items.len());
        for (id, s) in items {
            if !s.is_finite() {
                return Err(Error::output(
                    path,
                    format!(
                        "cannot write results: query {q:?}: db id {id:?}: score {s} is not finite"
                    ),
                ));
            }
            if !seen.insert(id.as_str()) {
                return Err(Error::output(
                    path,
                    format!("cannot write results: query {q:?}: db id {id:?} given twice"),
                ));
            }
        }
    }
    write_file(path, |w| {
        let io = |e: std::io::Error| Error::io(path, e);
        w.write_all(b"{").map_err(io)?;
        for (qi, (q, items)) in results.iter().enumerate() {
            if qi > 0 {
                w.write_all(b",").map_err(io)?;
            }
            w.write_all(b"\n  ").map_err(io)?;
            write_json_string(w, q).map_err(io)?;
            w.write_all(b": {").map_err(io)?;
            for (i, (id, s)) in items.iter().enumerate() {
                if i > 0 {
                    w.write_all(b", ").map_err(io)?;
                }
                write_json_string(w, id).map_err(io)?;
                write!(w, ": {}", f64::from(*s)).map_err(io)?;
            }
            w.write_all(b"}").map_err(io)?;
        }
        w.write_all(b"\n}\n").map_err(io)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_pickle_is_named() {
        // pickle.dumps({"q": {"a": 0.5}}, protocol=4) starts with 0x80 0x04.
        let bytes = b"\x80\x04\x95\x19\x00\x00\x00\x00\x00\x00\x00}\x94";
        let e = parse_results(Path::new("r.pkl"), bytes)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("r.pkl") && e.contains("Python pickle (protocol 4)"),
            "{e}"
        );
    }

    fn parse(s: &str) -> Result<Results> {
        parse_results(Path::new("r.json"), s.as_bytes())
    }

    #[test]
    fn keeps_order_and_values() {
        let r = parse(r#"{"q2": {"b": 0.5, "a": -1e-3, "c": 2}, "q1": {}}"#).unwrap();
        assert_eq!(r.queries[0].query, "q2");
        assert_eq!(
            r.queries[0].items,
            vec![("b".into(), 0.5), ("a".into(), -1e-3), ("c".into(), 2.0)]
        );
        assert!(r.get("q1").unwrap().items.is_empty());
        assert!(r.get("zz").is_none());
    }

    #[test]
    fn string_escapes() {
        let r = parse(r#"{"q\u00e9\"\\/\n": {"\ud83d\ude00x": 1}}"#).unwrap();
        assert_eq!(r.queries[0].query, "qé\"\\/\n");
        assert_eq!(r.queries[0].items[0].0, "😀x");
    }

    #[test]
    fn errors_name_query_and_db_id() {
        let e = parse("{\"q\": {\"a\": 1,\n \"b\": NaN}}")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("r.json")
                && e.contains("\"q\"")
                && e.contains("\"b\"")
                && e.contains("NaN")
                && e.contains("line 2"),
            "{e}"
        );
        let e = parse(r#"{"q": {"a": "0.5"}}"#).unwrap_err().to_string();
        assert!(e.contains("\"a\"") && e.contains("must be a number"), "{e}");
        let e = parse(r#"{"q": {"a": -Infinity}}"#).unwrap_err().to_string();
        assert!(e.contains("-Infinity"), "{e}");
        let e = parse(r#"{"q": {"a": 1e999}}"#).unwrap_err().to_string();
        assert!(e.contains("not finite"), "{e}");
        let e = parse(r#"{"q": {"a": 1, "a": 2}}"#).unwrap_err().to_string();
        assert!(e.contains("appears twice"), "{e}");
        let e = parse(r#"{"q": {}, "q": {}}"#).unwrap_err().to_string();
        assert!(e.contains("appears twice"), "{e}");
        let e = parse(r#"{"q": [1]}"#).unwrap_err().to_string();
        assert!(e.contains("expected an object"), "{e}");
        for bad in [
            r#"{"q": {"a": 01}}"#,
            r#"{"q": {"a": 1.}}"#,
            r#"{"q": {"a": 1}"#,
            r#"[]"#,
            r#"{"q": {}} x"#,
            "",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn deeply_nested_score_is_an_error_not_a_stack_overflow() {
        // Regression: the value skipper recursed once per level and overflowed the stack.
        let depth = 200_000;
        let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let e = parse(&format!(r#"{{"q": {{"a": {nested}}}}}"#))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"a\"") && e.contains("found an array"), "{e}");
        let nested = format!("{}1{}", r#"{"k": "#.repeat(depth), "}".repeat(depth));
        let e = parse(&format!(r#"{{"q": {{"a": {nested}}}}}"#))
            .unwrap_err()
            .to_string();
        assert!(e.contains("found an object"), "{e}");
        // Unbalanced deep nesting is a grammar error with its line and column.
        let cut = format!(r#"{{"q": {{"a": {}1"#, "[".repeat(depth));
        let e = parse(&cut).unwrap_err().to_string();
        assert!(e.contains("expected ',' or ']'; found end of file"), "{e}");
    }

    #[test]
    fn skipped_values_are_checked_like_read_ones() {
        for (bad, want) in [
            (r#"{"q": {"a": [1, 2}}"#, "expected ',' or ']'"),
            (r#"{"q": {"a": {"x" 1}}}"#, "expected ':' after key \"x\""),
            (r#"{"q": {"a": {1: 2}}}"#, "expected a string key"),
            (r#"{"q": {"a": [tru]}}"#, "expected a JSON value"),
            (
                r#"{"q": {"a": {"x": [1, {"y": nul}]}}}"#,
                "expected a JSON value",
            ),
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
        for ok in [
            r#"{"q": {"a": [1, "s", true, null, {}, [], {"x": [NaN, -2.5e3]}]}}"#,
            r#"{"q": {"a": {"x": {"y": {}}}}}"#,
        ] {
            let e = parse(ok).unwrap_err().to_string();
            assert!(e.contains("score must be a number"), "{ok}: {e}");
        }
    }

    #[test]
    fn write_read_roundtrip_is_bit_exact() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        let v = vec![
            (
                "x/q\"1".to_string(),
                vec![
                    ("a".to_string(), 0.1f32),
                    ("b\n".to_string(), -3.0e-8),
                    ("c".to_string(), f32::MAX),
                ],
            ),
            ("q2".to_string(), vec![]),
        ];
        write_results(&p, &v).unwrap();
        let r = read_results(&p).unwrap();
        assert_eq!(r.queries.len(), 2);
        for ((q, items), got) in v.iter().zip(&r.queries) {
            assert_eq!(q, &got.query);
            for ((id, s), (gid, gs)) in items.iter().zip(&got.items) {
                assert_eq!(id, gid);
                assert_eq!(f64::from(*s), *gs);
            }
        }
        let bad = vec![("q".to_string(), vec![("a".to_string(), f32::NAN)])];
        assert!(write_results(&p, &bad).is_err());
    }
}
