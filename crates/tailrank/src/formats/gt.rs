//! Ground truth: the ILIAS layout (a folder with `image_query_ids.txt`, `text_query_ids.txt`,
//! `positive_ids.txt`; an id's first path component names its instance) or a JSON object
//! `{query_id: [positive_id, ...]}`. See `docs/metrics.md` for the formats with examples.
//!
//! ILIAS layout: each file is CSV with the id in the first column (other columns, e.g. the
//! positives' scale and clutter, are ignored); blank lines are skipped; a header line is detected
//! and skipped (see [`is_header`]). The files may sit in `DIR/` or in `DIR/image_ids/` (the
//! layout of the ILIAS download). Instance of an id = the text before its first `/`. Every query
//! of an instance gets all positives of that instance. Query sets: `image` (from
//! `image_query_ids.txt`) and `text` (from `text_query_ids.txt`; a missing file means no text
//! set). Queries keep the order of the file.
//!
//! JSON: `{query_id: [positive_id, ...]}` gives one set named `queries`, in file order.

use crate::error::{Error, IoContext, Result};
use crate::formats::json::JsonReader;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// One set of queries evaluated together (ILIAS: `image` or `text`; JSON ground truth: `queries`).
///
/// Invariants: `query_ids` unique, `positives.len() == query_ids.len()`, each query has ≥ 1
/// positive, positive ids unique within a query.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QuerySet {
    pub name: String,
    pub query_ids: Vec<String>,
    pub positives: Vec<Vec<String>>,
}

impl QuerySet {
    /// Build a set from in-memory data, checking the invariants (`origin` is named in errors).
    pub fn new(
        origin: impl AsRef<Path>,
        name: impl Into<String>,
        query_ids: Vec<String>,
        positives: Vec<Vec<String>>,
    ) -> Result<Self> {
        let origin = origin.as_ref();
        let name = name.into();
        if query_ids.is_empty() {
            return Err(Error::file(origin, format!("query set {name:?} is empty")));
        }
        if query_ids.len() != positives.len() {
            return Err(Error::file(
                origin,
                format!(
                    "query set {name:?}: {} queries but {} positive lists",
                    query_ids.len(),
                    positives.len()
                ),
            ));
        }
        let mut seen = HashSet::with_capacity(query_ids.len());
        for (q, pos) in query_ids.iter().zip(&positives) {
            if !seen.insert(q.as_str()) {
                return Err(Error::file(
                    origin,
                    format!("query set {name:?}: duplicate query id {q:?}"),
                ));
            }
            if pos.is_empty() {
                return Err(Error::file(
                    origin,
                    format!("query set {name:?}: query {q:?} has no positives"),
                ));
            }
            let mut ps = HashSet::with_capacity(pos.len());
            for p in pos {
                if !ps.insert(p.as_str()) {
                    return Err(Error::file(
                        origin,
                        format!("query set {name:?}: query {q:?}: duplicate positive {p:?}"),
                    ));
                }
            }
        }
        Ok(QuerySet {
            name,
            query_ids,
            positives,
        })
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.query_ids.len()
    }

    /// Whether the set has no query (never true for a loaded set).
    pub fn is_empty(&self) -> bool {
        self.query_ids.is_empty()
    }
}

/// Load every query set of a ground truth (a folder in ILIAS layout, or a `.json` file).
///
/// Errors name the file and the line or id: empty query set, a query with no positives,
/// duplicate query ids, duplicate positives, an instance with queries but no positives,
/// malformed JSON (line, column) or CSV (line).
pub fn load_ground_truth(path: &Path) -> Result<Vec<QuerySet>> {
    let meta = std::fs::metadata(path).at(path)?;
    if meta.is_dir() {
        load_ilias_dir(path)
    } else {
        let bytes = std::fs::read(path).at(path)?;
        Ok(vec![parse_json_gt(path, &bytes)?])
    }
}

/// Parse a JSON ground truth `{query_id: [positive_id, ...]}` into one set named `queries`.
pub fn parse_json_gt(path: &Path, bytes: &[u8]) -> Result<QuerySet> {
    let mut r = JsonReader::new(path, bytes)?;
    let mut qids: Vec<String> = Vec::new();
    let mut pos: Vec<Vec<String>> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    r.object(
        "the ground truth must be a JSON object {query_id: [positive ids]} or a folder in ILIAS layout",
        |r, q| {
            if !seen.insert(q.clone()) {
                return Err(r.error(format!("duplicate query id {q:?}")));
            }
            let mut list: Vec<String> = Vec::new();
            let mut ps: HashSet<String> = HashSet::new();
            let what = format!("query {q:?}: expected an array of positive ids");
            r.array(&what, |r| {
                let p = r.expect_string(&format!("query {q:?}: a positive id must be a string"))?;
                if !ps.insert(p.clone()) {
                    return Err(r.error(format!("query {q:?}: duplicate positive {p:?}")));
                }
                list.push(p);
                Ok(())
            })?;
            if list.is_empty() {
                return Err(r.error(format!("query {q:?} has no positives")));
            }
            qids.push(q);
            pos.push(list);
            Ok(())
        },
    )?;
    r.finish()?;
    QuerySet::new(path, "queries", qids, pos)
}

const IMAGE_QUERIES: &str = "image_query_ids.txt";
const TEXT_QUERIES: &str = "text_query_ids.txt";
const POSITIVES: &str = "positive_ids.txt";

/// Find `name` in `dir` or `dir/image_ids`.
fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    [dir.join(name), dir.join("image_ids").join(name)]
        .into_iter()
        .find(|p| p.is_file())
}

fn load_ilias_dir(dir: &Path) -> Result<Vec<QuerySet>> {
    let pos_path = find_file(dir, POSITIVES).ok_or_else(|| {
        Error::file(
            dir,
            format!(
                "not a ground truth in ILIAS layout: no {POSITIVES} here or in image_ids/ \
                 (a JSON ground truth must be a file)"
            ),
        )
    })?;
    let image = find_file(dir, IMAGE_QUERIES);
    let text = find_file(dir, TEXT_QUERIES);
    if image.is_none() && text.is_none() {
        return Err(Error::file(
            dir,
            format!("ILIAS layout: neither {IMAGE_QUERIES} nor {TEXT_QUERIES} found here or in image_ids/"),
        ));
    }

    // Positives, grouped by instance, in file order.
    let positives = read_id_column(&pos_path)?;
    if positives.is_empty() {
        return Err(Error::file(&pos_path, "no positive ids"));
    }
    let mut by_instance: HashMap<String, Vec<String>> = HashMap::new();
    let mut seen = HashSet::with_capacity(positives.len());
    for (line, id) in &positives {
        if !seen.insert(id.as_str()) {
            return Err(Error::file(
                &pos_path,
                format!("line {line}: duplicate positive {id:?}"),
            ));
        }
        let inst = instance_of(&pos_path, *line, id)?;
        by_instance
            .entry(inst.to_string())
            .or_default()
            .push(id.clone());
    }

    let mut sets = Vec::new();
    for (name, path) in [("image", image), ("text", text)] {
        let Some(path) = path else { continue };
        let ids = read_id_column(&path)?;
        if ids.is_empty() {
            return Err(Error::file(&path, format!("query set {name:?} is empty")));
        }
        let mut qids = Vec::with_capacity(ids.len());
        let mut pos = Vec::with_capacity(ids.len());
        let mut seen = HashSet::with_capacity(ids.len());
        for (line, q) in ids {
            if !seen.insert(q.clone()) {
                return Err(Error::file(
                    &path,
                    format!("line {line}: duplicate query id {q:?}"),
                ));
            }
            let inst = instance_of(&path, line, &q)?;
            let Some(p) = by_instance.get(inst) else {
                return Err(Error::file(
                    &path,
                    format!(
                        "line {line}: query {q:?}: instance {inst:?} has no positives in {}",
                        pos_path.display()
                    ),
                ));
            };
            qids.push(q);
            pos.push(p.clone());
        }
        sets.push(QuerySet::new(&path, name, qids, pos)?);
    }
    Ok(sets)
}

/// The instance of an ILIAS id: its first path component (non-empty).
fn instance_of<'a>(path: &Path, line: usize, id: &'a str) -> Result<&'a str> {
    let inst = id.split('/').next().unwrap_or("");
    if inst.is_empty() {
        return Err(Error::file(
            path,
            format!("line {line}: id {id:?} has an empty first path component (no instance)"),
        ));
    }
    Ok(inst)
}

/// Split a CSV line into fields (RFC 4180 quotes; `""` inside quotes is a quote).
pub fn split_csv(path: &Path, line_no: usize, line: &str) -> Result<Vec<String>> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut in_quotes = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    cur.push('"');
                    chars.next();
                } else {
                    in_quotes = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == ',' {
            fields.push(std::mem::take(&mut cur));
            was_quoted = false;
        } else if c == '"' && cur.trim().is_empty() && !was_quoted {
            cur.clear();
            in_quotes = true;
            was_quoted = true;
        } else if was_quoted && !c.is_whitespace() {
            return Err(Error::file(
                path,
                format!("line {line_no}: malformed CSV: text after a closing quote"),
            ));
        } else {
            cur.push(c);
        }
    }
    if in_quotes {
        return Err(Error::file(
            path,
            format!("line {line_no}: malformed CSV: unterminated quote"),
        ));
    }
    fields.push(cur);
    Ok(fields.into_iter().map(|f| f.trim().to_string()).collect())
}

/// Words that mark a header's first field.
const HEADER_WORDS: &[&str] = &[
    "id",
    "ids",
    "image_id",
    "query_id",
    "positive_id",
    "query",
    "image",
    "path",
    "image_path",
    "file",
    "filename",
    "name",
];

/// Whether the first non-blank line of an id file is a header rather than data. It is when its
/// first field is a usual column name (`id`, `image_id`, `query_id`, `path`, ...: see
/// `HEADER_WORDS`), or when it has no `/` while the next line's id has one (ILIAS ids always
/// carry an instance directory), or when its extra columns are not numbers while the next line's
/// are (the scale/clutter columns of `positive_ids.txt`).
pub fn is_header(first: &[String], second: Option<&[String]>) -> bool {
    let f0 = first[0].to_ascii_lowercase();
    if HEADER_WORDS.contains(&f0.as_str()) {
        return true;
    }
    let Some(second) = second else { return false };
    if !first[0].contains('/') && second[0].contains('/') {
        return true;
    }
    let numeric = |s: &String| s.parse::<f64>().is_ok();
    first.len() > 1
        && first.len() == second.len()
        && first[1..].iter().all(|s| !numeric(s))
        && second[1..].iter().all(numeric)
}

/// Read the first column of an id file: `(line number, id)` pairs, header skipped, blank lines
/// skipped. Every data line must have as many columns as the first data line and a non-empty id.
fn read_id_column(path: &Path) -> Result<Vec<(usize, String)>> {
    let bytes = std::fs::read(path).at(path)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| Error::file(path, format!("not UTF-8 text (byte {})", e.valid_up_to())))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        rows.push((i + 1, split_csv(path, i + 1, line)?));
    }
    let mut start = 0;
    if let Some((_, first)) = rows.first() {
        if is_header(first, rows.get(1).map(|(_, r)| r.as_slice())) {
            start = 1;
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    let ncols = rows.get(start).map(|(_, r)| r.len());
    for (line, fields) in rows.into_iter().skip(start) {
        if Some(fields.len()) != ncols {
            return Err(Error::file(
                path,
                format!(
                    "line {line}: malformed CSV: {} columns where the first data line has {}",
                    fields.len(),
                    ncols.unwrap_or(0)
                ),
            ));
        }
        let id = fields.into_iter().next().unwrap_or_default();
        if id.is_empty() {
            return Err(Error::file(
                path,
                format!("line {line}: malformed CSV: empty id"),
            ));
        }
        out.push((line, id));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn header_detection() {
        assert!(is_header(&s(&["image_id", "scale"]), None));
        assert!(is_header(&s(&["ID"]), Some(&s(&["a/1"]))));
        assert!(is_header(&s(&["whatever"]), Some(&s(&["a/1"]))));
        assert!(is_header(
            &s(&["x/y", "scale", "clutter"]),
            Some(&s(&["a/1", "0.1", "3"]))
        ));
        assert!(!is_header(
            &s(&["a/0", "0.2", "5"]),
            Some(&s(&["a/1", "0.1", "3"]))
        ));
        assert!(!is_header(&s(&["a/0"]), None));
    }

    #[test]
    fn csv_split() {
        let p = Path::new("f.txt");
        assert_eq!(
            split_csv(p, 1, r#" "a,b/c" , 1"#).unwrap(),
            s(&["a,b/c", "1"])
        );
        assert_eq!(split_csv(p, 1, r#""a""b""#).unwrap(), s(&["a\"b"]));
        assert!(split_csv(p, 3, r#""abc"#)
            .unwrap_err()
            .to_string()
            .contains("line 3"));
        assert!(split_csv(p, 4, r#""ab"c,1"#).is_err());
    }
}
