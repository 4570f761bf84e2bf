//! The JSON of the results and the JSON ground truth, read in file order.
//!
//! [`JsonReader`] is a small pull reader over a byte buffer: objects are visited key by key in
//! the order of the file (the tie rule of the metrics depends on it, and duplicated keys are
//! the caller's to catch, which a generic map would hide), values other than the ones asked
//! for are skipped iteratively (no recursion, so nesting depth cannot overflow the stack) but
//! checked against the grammar, and every error reads `path: line L, column C: message`.
//! Python's `json.dump` extensions `NaN`, `Infinity`, `-Infinity` are recognised as
//! [`Scalar::NonFinite`] so that callers can name them. [`write_json_string`] writes a string
//! literal that any JSON reader gives back unchanged; [`to_json_value`] gives the value of a
//! report with its keys sorted, and [`to_pretty_json`] prints a report in the order of its
//! type; neither ever writes `-0.0`.

use crate::error::{Error, Result};
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

/// Replace every `-0.0` in a JSON tree by `0.0`. A metric such as an AP of 0 can come out of
/// the arithmetic as −0.0 (e.g. a zero times a negative weight); JSON readers keep the sign, and
/// a report that prints `-0.0` for "no positive retrieved" reads like an error.
pub fn positive_zeros(v: &mut Value) {
    match v {
        Value::Number(n)
            if n.as_f64() == Some(0.0) && n.as_f64().is_some_and(f64::is_sign_negative) =>
        {
            *v = json!(0.0);
        }
        Value::Array(a) => a.iter_mut().for_each(positive_zeros),
        Value::Object(o) => o.values_mut().for_each(positive_zeros),
        _ => {}
    }
}

/// A serde value as JSON, with negative zeros printed as `0.0` ([`positive_zeros`]) and the
/// object keys in sorted order (the order `serde_json::Value` keeps).
pub fn to_json_value<T: serde::Serialize>(v: &T) -> Value {
    let mut v = serde_json::to_value(v).expect("report types serialize to JSON");
    positive_zeros(&mut v);
    v
}

/// A pretty JSON formatter (serde_json's [`PrettyFormatter`]) that writes a negative zero as
/// `0.0`: a metric such as an AP of 0 can come out of the arithmetic as −0.0, and a report
/// that prints `-0.0` for "no positive retrieved" reads like an error. Keys keep the order of
/// the serialised type.
struct PositiveZeros(PrettyFormatter<'static>);

/// Formatter methods of [`PositiveZeros`] that only hand the writer (and their arguments) to
/// the wrapped [`PrettyFormatter`]: its layout, unchanged.
macro_rules! pretty_layout {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> std::io::Result<()> {
            self.0.$name(w $(, $arg)*)
        }
    )*};
}

impl Formatter for PositiveZeros {
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        self.0.write_f64(w, if v == 0.0 { 0.0 } else { v })
    }
    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        self.0.write_f32(w, if v == 0.0 { 0.0 } else { v })
    }
    pretty_layout! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        begin_object_value();
        end_object_value();
    }
}

/// `value` as pretty JSON (serde_json's layout, keys in the order of the type), with every
/// negative zero written as `0.0`: how tailrank prints and writes its reports.
pub fn to_pretty_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String> {
    let mut out = Vec::new();
    let mut ser =
        serde_json::Serializer::with_formatter(&mut out, PositiveZeros(PrettyFormatter::new()));
    value
        .serialize(&mut ser)
        .map_err(|e| Error::internal(format!("cannot serialise a report as JSON: {e}")))?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
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
pub struct JsonReader<'a> {
    path: &'a Path,
    b: &'a [u8],
    pos: usize,
}

impl<'a> JsonReader<'a> {
    pub fn new(path: &'a Path, b: &'a [u8]) -> Result<Self> {
        if let [0x80, proto @ 2..=5, ..] = b {
            return Err(Error::unsupported(
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
            return Err(Error::input(
                path,
                format!("not UTF-8 text (byte {})", e.valid_up_to()),
            ));
        }
        let b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
        Ok(JsonReader { path, b, pos: 0 })
    }

    /// An error at the current position: `path: line L, column C: msg`.
    pub fn error(&self, msg: impl AsRef<str>) -> Error {
        let upto = &self.b[..self.pos.min(self.b.len())];
        let line = upto.iter().filter(|&&c| c == b'\n').count() + 1;
        let line_start = upto.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
        let col = String::from_utf8_lossy(&upto[line_start..]).chars().count() + 1;
        Error::input(
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
    pub fn object<F>(&mut self, what: &str, mut f: F) -> Result<()>
    where
        F: FnMut(&mut Self, String) -> Result<()>,
    {
        self.items(b'{', b'}', what, |r| {
            let key = r.key()?;
            f(r, key)
        })
    }

    /// Iterate over the elements of an array, calling `f(reader)` at each element.
    pub fn array<F>(&mut self, what: &str, f: F) -> Result<()>
    where
        F: FnMut(&mut Self) -> Result<()>,
    {
        self.items(b'[', b']', what, f)
    }

    /// The items of a container opened by `open` and closed by `close`, separated by commas:
    /// `item(reader)` reads each one. `what` describes the container in the message when
    /// something else is found.
    fn items<F>(&mut self, open: u8, close: u8, what: &str, mut item: F) -> Result<()>
    where
        F: FnMut(&mut Self) -> Result<()>,
    {
        if self.peek() != Some(open) {
            let found = self.found();
            return Err(self.error(format!("{what}; found {found}")));
        }
        self.pos += 1;
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    let found = self.found();
                    let close = close as char;
                    return Err(self.error(format!("expected ',' or '{close}'; found {found}")));
                }
            }
        }
    }

    /// Read a string value (`what` describes it in the message when something else is found).
    pub fn expect_string(&mut self, what: &str) -> Result<String> {
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
            // Four hex digits, no sign (`from_str_radix` alone takes "+041").
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
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
    pub fn finish(&mut self) -> Result<()> {
        if self.peek().is_some() {
            let found = self.found();
            return Err(self.error(format!("unexpected content after the JSON value: {found}")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod zero_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn negative_zeros_print_as_zero() {
        let mut v = json!({"a": -0.0, "b": [1.0, -0.0, {"c": -0.0}], "d": -1.5, "e": 0});
        positive_zeros(&mut v);
        let text = serde_json::to_string(&v).unwrap();
        assert!(!text.contains("-0.0"), "{text}");
        assert_eq!(v["d"], json!(-1.5));
        assert_eq!(v["e"], json!(0));
        assert_eq!(v["b"][2]["c"].as_f64(), Some(0.0));
    }

    /// Objects and arrays read through one item loop: their keys and elements in order, and
    /// each container's own closing bracket named when a separator is missing.
    #[test]
    fn objects_and_arrays_read_items_and_name_their_closing_bracket() {
        let path = Path::new("t.json");
        let mut r = JsonReader::new(path, br#"{"a": [1, 2], "b": []}"#).unwrap();
        let mut seen = Vec::new();
        r.object("an object", |r, key| {
            r.array("an array", |r| {
                seen.push(format!("{key}{:?}", r.scalar()?));
                Ok(())
            })
        })
        .unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(
            seen[0].starts_with('a') && seen[1].starts_with('a'),
            "{seen:?}"
        );
        let err = |text: &'static str| {
            let mut r = JsonReader::new(path, text.as_bytes()).unwrap();
            r.object("an object", |r, _| r.skip_value())
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"a": 1 "b": 2}"#).contains("expected ',' or '}'; found"));
        assert!(err("[1]").contains("an object; found"));
        let mut r = JsonReader::new(path, b"[1 2]").unwrap();
        let e = r.array("an array", |r| r.skip_value()).unwrap_err();
        assert!(e.to_string().contains("expected ',' or ']'; found"), "{e}");
    }
}
