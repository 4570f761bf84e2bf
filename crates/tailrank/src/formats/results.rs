//! Results to evaluate: the ILIAS JSON `{query_id: {db_id: score}}` (see `docs/metrics.md`).
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
use crate::error::{Error, IoContext, Result};
use std::collections::{HashMap, HashSet};
use std::io::Write;
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
                return Err(Error::file(
                    &path,
                    format!("query id {:?} appears twice", q.query),
                ));
            }
            let mut seen = HashSet::with_capacity(q.items.len());
            for (id, s) in &q.items {
                if !seen.insert(id.as_str()) {
                    return Err(Error::file(
                        &path,
                        format!("query {:?}: db id {:?} appears twice", q.query, id),
                    ));
                }
                if !s.is_finite() {
                    return Err(Error::file(
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
    let bytes = std::fs::read(path).at(path)?;
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
            return Err(Error::file(
                path,
                format!("cannot write results: query id {q:?} given twice"),
            ));
        }
        let mut seen = HashSet::with_capacity(items.len());
        for (id, s) in items {
            if !s.is_finite() {
                return Err(Error::file(
                    path,
                    format!(
                        "cannot write results: query {q:?}: db id {id:?}: score {s} is not finite"
                    ),
                ));
            }
            if !seen.insert(id.as_str()) {
                return Err(Error::file(
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

/// Write `s` as a JSON string literal.
pub(crate) fn write_json_string(w: &mut dyn Write, s: &str) -> std::io::Result<()> {
    w.write_all(b"\"")?;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let esc: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            c if (c as u32) < 0x20 => None,
            _ => continue,
        };
        w.write_all(&s.as_bytes()[start..i])?;
        match esc {
            Some(e) => w.write_all(e.as_bytes())?,
            None => write!(w, "\\u{:04x}", c as u32)?,
        }
        start = i + c.len_utf8();
    }
    w.write_all(&s.as_bytes()[start..])?;
    w.write_all(b"\"")
}

/// A JSON scalar as seen where a number is expected.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Number(f64),
    /// `NaN`, `Infinity` or `-Infinity` (Python's extension to JSON).
    NonFinite(&'static str),
    /// Any other JSON value (skipped); the name of its kind.
    Other(&'static str),
}

/// A small order-preserving JSON reader over a byte buffer, with messages that name the file,
/// the line and the column. Used for the results and the JSON ground truth, where the order of
/// keys matters and duplicated keys must be caught (a generic map would hide both).
pub(crate) struct JsonReader<'a> {
    path: &'a Path,
    b: &'a [u8],
    pos: usize,
}

impl<'a> JsonReader<'a> {
    pub(crate) fn new(path: &'a Path, b: &'a [u8]) -> Result<Self> {
        if let [0x80, proto @ 2..=5, ..] = b {
            return Err(Error::file(
                path,
                format!(
                    "this is a Python pickle (protocol {proto}), not JSON; convert it first, \
                     e.g. python -c \"import pickle, json, sys; \
                     json.dump(pickle.load(open(sys.argv[1], 'rb')), open(sys.argv[2], 'w'))\" \
                     IN.pkl OUT.json (the JSON must be {{query_id: {{db_id: score}}}})"
                ),
            ));
        }
        if let Err(e) = std::str::from_utf8(b) {
            return Err(Error::file(
                path,
                format!("not UTF-8 text (byte {})", e.valid_up_to()),
            ));
        }
        let b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
        Ok(JsonReader { path, b, pos: 0 })
    }

    /// An error at the current position: `path: line L, column C: msg`.
    pub(crate) fn error(&self, msg: impl AsRef<str>) -> Error {
        let upto = &self.b[..self.pos.min(self.b.len())];
        let line = upto.iter().filter(|&&c| c == b'\n').count() + 1;
        let line_start = upto.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
        let col = String::from_utf8_lossy(&upto[line_start..]).chars().count() + 1;
        Error::file(
            self.path,
            format!("line {line}, column {col}: {}", msg.as_ref()),
        )
    }

    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.pos).copied()
    }

    fn found(&mut self) -> String {
        match self.peek() {
            None => "end of file".to_string(),
            Some(c) => {
                let s =
                    String::from_utf8_lossy(&self.b[self.pos..(self.pos + 4).min(self.b.len())])
                        .chars()
                        .next()
                        .unwrap_or(c as char);
                format!("{s:?}")
            }
        }
    }

    /// Iterate over the entries of an object, calling `f(reader, key)` with the reader placed at
    /// the value, which `f` must consume. `what` describes the expected object in messages.
    pub(crate) fn object<F>(&mut self, what: &str, mut f: F) -> Result<()>
    where
        F: FnMut(&mut Self, String) -> Result<()>,
    {
        if self.peek() != Some(b'{') {
            let found = self.found();
            return Err(self.error(format!("{what}; found {found}")));
        }
        self.pos += 1;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let key = self.key()?;
            f(self, key)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    let found = self.found();
                    return Err(self.error(format!("expected ',' or '}}'; found {found}")));
                }
            }
        }
    }

    /// Iterate over the elements of an array, calling `f(reader)` at each element.
    pub(crate) fn array<F>(&mut self, what: &str, mut f: F) -> Result<()>
    where
        F: FnMut(&mut Self) -> Result<()>,
    {
        if self.peek() != Some(b'[') {
            let found = self.found();
            return Err(self.error(format!("{what}; found {found}")));
        }
        self.pos += 1;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            f(self)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    let found = self.found();
                    return Err(self.error(format!("expected ',' or ']'; found {found}")));
                }
            }
        }
    }

    /// Read a string value (`what` describes it in the message when something else is found).
    pub(crate) fn expect_string(&mut self, what: &str) -> Result<String> {
        if self.peek() == Some(b'"') {
            self.string()
        } else {
            let kind = self.peek_kind();
            let e = self.error(format!("{what}; found {kind}"));
            Err(e)
        }
    }

    fn peek_kind(&mut self) -> &'static str {
        match self.peek() {
            None => "end of file",
            Some(b'{') => "an object",
            Some(b'[') => "an array",
            Some(b'"') => "a string",
            Some(b't') | Some(b'f') => "a boolean",
            Some(b'n') => "null",
            Some(b'-') | Some(b'0'..=b'9') | Some(b'N') | Some(b'I') => "a number",
            Some(_) => "an invalid token",
        }
    }

    /// Read a scalar where a number is expected; other values are skipped and reported by kind.
    pub(crate) fn scalar(&mut self) -> Result<Scalar> {
        match self.peek() {
            Some(b'-') | Some(b'0'..=b'9') => {
                if self.b[self.pos..].starts_with(b"-Infinity") {
                    self.pos += 9;
                    return Ok(Scalar::NonFinite("-Infinity"));
                }
                self.number().map(Scalar::Number)
            }
            Some(b'N') if self.b[self.pos..].starts_with(b"NaN") => {
                self.pos += 3;
                Ok(Scalar::NonFinite("NaN"))
            }
            Some(b'I') if self.b[self.pos..].starts_with(b"Infinity") => {
                self.pos += 8;
                Ok(Scalar::NonFinite("Infinity"))
            }
            _ => {
                let kind = self.peek_kind();
                self.skip_value()?;
                Ok(Scalar::Other(kind))
            }
        }
    }

    /// Skip any JSON value, checking its grammar. Iterative: containers are tracked on an
    /// explicit stack (one byte per open level), so nesting depth is bounded only by the file's
    /// size, never by the thread's stack (a score nested 50,000 levels deep overflowed the stack
    /// of the recursive version: an abort).
    pub(crate) fn skip_value(&mut self) -> Result<()> {
        // Open containers, innermost last: `{` or `[`.
        let mut open: Vec<u8> = Vec::new();
        loop {
            // A value is expected here.
            match self.peek() {
                Some(c @ (b'{' | b'[')) => {
                    self.pos += 1;
                    let close = if c == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                    } else {
                        open.push(c);
                        if c == b'{' {
                            self.key()?;
                        }
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                // `N`/`I` only as `NaN`/`Infinity` (below): routing any `N` to `scalar`, which
                // skips what is not NaN through this function, recursed forever on e.g. `Nope`
                // (found by fuzzing: stack overflow).
                Some(b'-') | Some(b'0'..=b'9') => {
                    self.scalar()?;
                }
                _ => {
                    let lit = [&b"true"[..], b"false", b"null", b"NaN", b"Infinity"]
                        .into_iter()
                        .find(|lit| self.b[self.pos..].starts_with(lit));
                    match lit {
                        Some(lit) => self.pos += lit.len(),
                        None => {
                            let found = self.found();
                            return Err(self.error(format!("expected a JSON value; found {found}")));
                        }
                    }
                }
            }
            // A value ended: close the containers it completes, or move to the next element.
            loop {
                let Some(&top) = open.last() else {
                    return Ok(());
                };
                let close = if top == b'{' { b'}' } else { b']' };
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if top == b'{' {
                            self.key()?;
                        }
                        break;
                    }
                    Some(c) if c == close => {
                        self.pos += 1;
                        open.pop();
                    }
                    _ => {
                        let found = self.found();
                        return Err(self.error(format!(
                            "expected ',' or '{}'; found {found}",
                            close as char
                        )));
                    }
                }
            }
        }
    }

    /// Read an object key and its `:` (the reader is placed at the key).
    fn key(&mut self) -> Result<String> {
        if self.peek() != Some(b'"') {
            let found = self.found();
            return Err(self.error(format!("expected a string key; found {found}")));
        }
        let key = self.string()?;
        if self.peek() != Some(b':') {
            let found = self.found();
            return Err(self.error(format!("expected ':' after key {key:?}; found {found}")));
        }
        self.pos += 1;
        Ok(key)
    }

    /// Parse a JSON number (strict grammar) at the current position as f64 (correctly rounded,
    /// like Python's `float`); out-of-range magnitudes give ±inf.
    fn number(&mut self) -> Result<f64> {
        let start = self.pos;
        let b = self.b;
        let mut p = self.pos;
        let digits = |p: &mut usize| {
            let s = *p;
            while *p < b.len() && b[*p].is_ascii_digit() {
                *p += 1;
            }
            *p - s
        };
        if b.get(p) == Some(&b'-') {
            p += 1;
        }
        let int_start = p;
        let nd = digits(&mut p);
        let bad = |r: &mut Self, p: usize| {
            r.pos = p;
            let found = r.found();
            Err(r.error(format!("malformed number; found {found}")))
        };
        if nd == 0 || (nd > 1 && b[int_start] == b'0') {
            return bad(self, p);
        }
        if b.get(p) == Some(&b'.') {
            p += 1;
            if digits(&mut p) == 0 {
                return bad(self, p);
            }
        }
        if matches!(b.get(p), Some(b'e') | Some(b'E')) {
            p += 1;
            if matches!(b.get(p), Some(b'+') | Some(b'-')) {
                p += 1;
            }
            if digits(&mut p) == 0 {
                return bad(self, p);
            }
        }
        self.pos = p;
        // The slice is ASCII by construction.
        let s = std::str::from_utf8(&b[start..p]).unwrap_or("");
        s.parse::<f64>().map_err(|_| {
            self.pos = start;
            self.error("malformed number")
        })
    }

    /// Parse a string literal (current byte is `"`), decoding escapes.
    fn string(&mut self) -> Result<String> {
        self.pos += 1;
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            let Some(&c) = self.b.get(self.pos) else {
                return Err(self.error("unterminated string"));
            };
            match c {
                b'"' => {
                    out.push_str(self.slice(run, self.pos));
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(self.slice(run, self.pos));
                    self.pos += 1;
                    let Some(&e) = self.b.get(self.pos) else {
                        return Err(self.error("unterminated string"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if !self.b[self.pos..].starts_with(b"\\u") {
                                    return Err(self.error("unpaired surrogate in \\u escape"));
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.error("unpaired surrogate in \\u escape"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            match char::from_u32(cp) {
                                Some(ch) => out.push(ch),
                                None => return Err(self.error("unpaired surrogate in \\u escape")),
                            }
                        }
                        _ => {
                            self.pos -= 1;
                            return Err(self.error("invalid escape in string"));
                        }
                    }
                    run = self.pos;
                }
                c if c < 0x20 => return Err(self.error("control character in string")),
                _ => self.pos += 1,
            }
        }
    }

    fn hex4(&mut self) -> Result<u32> {
        let s = self
            .b
            .get(self.pos..self.pos + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        match s {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.error("invalid \\u escape")),
        }
    }

    fn slice(&self, a: usize, b: usize) -> &'a str {
        // Validated as UTF-8 in `new`, and `a`, `b` sit at ASCII bytes.
        std::str::from_utf8(&self.b[a..b]).unwrap_or("")
    }

    /// Check that nothing but whitespace follows the top-level value.
    pub(crate) fn finish(&mut self) -> Result<()> {
        if self.peek().is_some() {
            let found = self.found();
            return Err(self.error(format!("unexpected content after the JSON value: {found}")));
        }
        Ok(())
    }
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
