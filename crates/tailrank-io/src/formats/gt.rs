//! Ground truth: the ILIAS layout (a folder with `image_query_ids.txt`, `text_query_ids.txt`,
//! `positive_ids.txt`; an id's first path component names its instance) or a JSON object
//! `{query_id: [positive_id, ...]}`. See `docs/reference/metrics.md` for the formats with examples.
//!
//! ILIAS layout: each file is CSV with the id in the first column (other columns, e.g. the
//! positives' scale and clutter, are ignored); blank lines are skipped; a first line whose first
//! field is a column name is skipped as a header and reported (see [`IdTable`]). The files may sit in `DIR/` or in `DIR/image_ids/` (the
//! layout of the ILIAS download). Instance of an id = the text before its first `/`. Every query
//! of an instance gets all positives of that instance. Query sets: `image` (from
//! `image_query_ids.txt`) and `text` (from `text_query_ids.txt`; a missing file means no text
//! set). Queries keep the order of the file.
//!
//! JSON: `{query_id: [positive_id, ...]}` gives one set named `queries`, in file order.

use crate::error::{Error, IoContext, Result};
use crate::formats::csv::{split_fields, Padding};
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
            return Err(Error::input(origin, format!("query set {name:?} is empty")));
        }
        if query_ids.len() != positives.len() {
            return Err(Error::input(
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
            if q.is_empty() || pos.iter().any(String::is_empty) {
                let what = if q.is_empty() {
                    "a query"
                } else {
                    "a positive"
                };
                return Err(Error::input(
                    origin,
                    format!("query set {name:?}: {what} id is empty (query {q:?})"),
                ));
            }
            if !seen.insert(q.as_str()) {
                return Err(Error::input(
                    origin,
                    format!("query set {name:?}: duplicate query id {q:?}"),
                ));
            }
            if pos.is_empty() {
                return Err(Error::input(
                    origin,
                    format!("query set {name:?}: query {q:?} has no positives"),
                ));
            }
            let mut ps = HashSet::with_capacity(pos.len());
            for p in pos {
                if !ps.insert(p.as_str()) {
                    return Err(Error::input(
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
    // A ground truth written together with descriptors (`simulate --vectors`) whose commit
    // was cut is refused, not paired with the other files' old content.
    crate::atomic::check_settled(path)?;
    let meta = std::fs::metadata(path).at(path)?;
    if meta.is_dir() {
        load_ilias_dir(path)
    } else {
        let bytes = super::read_input_file(path, "a JSON ground truth")?;
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
            if q.is_empty() {
                return Err(r.error("an empty query id"));
            }
            if !seen.insert(q.clone()) {
                return Err(r.error(format!("duplicate query id {q:?}")));
            }
            let mut list: Vec<String> = Vec::new();
            let mut ps: HashSet<String> = HashSet::new();
            let what = format!("query {q:?}: expected an array of positive ids");
            r.array(&what, |r| {
                let p = r.expect_string(&format!("query {q:?}: a positive id must be a string"))?;
                if p.is_empty() {
                    return Err(r.error(format!("query {q:?}: an empty positive id")));
                }
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

/// The id lists of a folder in ILIAS layout (found by [`ilias_file`]).
pub const IMAGE_QUERIES: &str = "image_query_ids.txt";
pub const TEXT_QUERIES: &str = "text_query_ids.txt";
pub const POSITIVES: &str = "positive_ids.txt";

/// The id file `name` of a folder in ILIAS layout: `DIR/image_ids/name` or `DIR/name` (the two
/// layouts of docs/reference/ilias.md); None when neither exists. Both existing with other
/// contents is an error: every reader of the folder (the ground truth, the id checks, the scale
/// and clutter) must read the same list.
pub fn ilias_file(dir: &Path, name: &str) -> Result<Option<PathBuf>> {
    let found: Vec<PathBuf> = [dir.join("image_ids").join(name), dir.join(name)]
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    match found.as_slice() {
        [a, b] if !same_file(a, b) => Err(Error::input(
            dir,
            format!(
                "both {} and {} exist: tailrank reads one {name} per dataset folder; remove or \
                 rename the one that is not the dataset's",
                a.display(),
                b.display()
            ),
        )),
        _ => Ok(found.into_iter().next()),
    }
}

/// Whether two existing paths hold the same list: one file (a symbolic or hard link of one to
/// the other) or two files of the same bytes.
fn same_file(a: &Path, b: &Path) -> bool {
    if matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y) {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            if (x.dev(), x.ino()) == (y.dev(), y.ino()) {
                return true;
            }
        }
    }
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    size(a) == size(b) && same_bytes(a, b).unwrap_or(false)
}

/// Whether two files hold the same bytes, compared 64 KiB at a time (an id list may be a
/// gigabyte).
fn same_bytes(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    fn fill(r: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match r.read(&mut buf[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    }
    let (mut fa, mut fb) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let (na, nb) = (fill(&mut fa, &mut ba)?, fill(&mut fb, &mut bb)?);
        if ba[..na] != bb[..nb] {
            return Ok(false);
        }
        if na == 0 {
            return Ok(true);
        }
    }
}

fn load_ilias_dir(dir: &Path) -> Result<Vec<QuerySet>> {
    let pos_path = ilias_file(dir, POSITIVES)?.ok_or_else(|| {
        Error::input(
            dir,
            format!(
                "not a ground truth in ILIAS layout: no {POSITIVES} here or in image_ids/ \
                 (a JSON ground truth must be a file)"
            ),
        )
    })?;
    let image = ilias_file(dir, IMAGE_QUERIES)?;
    let text = ilias_file(dir, TEXT_QUERIES)?;
    if image.is_none() && text.is_none() {
        return Err(Error::input(
            dir,
            format!("ILIAS layout: neither {IMAGE_QUERIES} nor {TEXT_QUERIES} found here or in image_ids/"),
        ));
    }

    // Positives, grouped by instance, in file order.
    let positives = read_id_column(&pos_path)?;
    if positives.is_empty() {
        return Err(Error::input(&pos_path, "no positive ids"));
    }
    let mut by_instance: HashMap<String, Vec<String>> = HashMap::new();
    let mut seen = HashSet::with_capacity(positives.len());
    for (line, id) in &positives {
        if !seen.insert(id.as_str()) {
            return Err(Error::input(
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
            return Err(Error::input(&path, format!("query set {name:?} is empty")));
        }
        let mut qids = Vec::with_capacity(ids.len());
        let mut pos = Vec::with_capacity(ids.len());
        let mut seen = HashSet::with_capacity(ids.len());
        for (line, q) in ids {
            if !seen.insert(q.clone()) {
                return Err(Error::input(
                    &path,
                    format!("line {line}: duplicate query id {q:?}"),
                ));
            }
            let inst = instance_of(&path, line, &q)?;
            let Some(p) = by_instance.get(inst) else {
                return Err(Error::input(
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
        return Err(Error::input(
            path,
            format!("line {line}: id {id:?} has an empty first path component (no instance)"),
        ));
    }
    Ok(inst)
}

/// Split a CSV line into trimmed fields ([`split_fields`] with [`Padding::Trim`]).
pub fn split_csv(path: &Path, line_no: usize, line: &str) -> Result<Vec<String>> {
    split_fields(line, Padding::Trim)
        .map_err(|e| Error::input(path, format!("line {line_no}: malformed CSV: {e}")))
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

/// Whether the first non-blank line of an id file, split into `fields`, is a header: exactly
/// when its first field, compared case-insensitively, is a usual column name (`id`,
/// `image_id`, `query_id`, `path`, ...: see `HEADER_WORDS`). Nothing else is taken for a
/// header, whatever the shape of its other columns, so a data line is never dropped by a guess;
/// a skipped header is reported ([`IdTable::header_note`]).
pub fn is_header(fields: &[String]) -> bool {
    fields
        .first()
        .is_some_and(|f| HEADER_WORDS.contains(&f.to_ascii_lowercase().as_str()))
}

/// An ILIAS id CSV (`image_query_ids.txt`, `text_query_ids.txt`, `positive_ids.txt`) as read:
/// its data rows `(line, fields)` and the header line skipped, if any.
///
/// Line rule: the one of the id lists (`formats::ids`): a line ends at `\n`, a trailing `\r` is
/// removed, a carriage return elsewhere, invalid UTF-8 and a leading byte order mark are errors
/// naming the file and the line. Blank lines are skipped; the first non-blank line is a header
/// iff [`is_header`]; every data row has as many columns as the first one and a non-empty id.
#[derive(Debug, Clone)]
pub struct IdTable {
    pub path: PathBuf,
    pub rows: Vec<(usize, Vec<String>)>,
    /// `(line, text)` of the skipped header.
    pub header: Option<(usize, String)>,
}

impl IdTable {
    /// Read `path` under the rules of the type doc.
    pub fn read(path: &Path) -> Result<Self> {
        let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
        let mut header = None;
        let reader = crate::formats::ids::open_text(path)?;
        crate::formats::ids::for_each_text_line(path, reader, |line, bytes| {
            let text = crate::formats::ids::utf8_id(path, line, bytes)?;
            if text.trim().is_empty() {
                return Ok(true);
            }
            let fields = split_csv(path, line, text)?;
            if rows.is_empty() && header.is_none() && is_header(&fields) {
                header = Some((line, text.to_string()));
                return Ok(true);
            }
            if let Some((_, first)) = rows.first() {
                if fields.len() != first.len() {
                    return Err(Error::input(
                        path,
                        format!(
                            "line {line}: malformed CSV: {} columns where the first data line has {}",
                            fields.len(),
                            first.len()
                        ),
                    ));
                }
            }
            if fields[0].is_empty() {
                return Err(Error::input(
                    path,
                    format!("line {line}: malformed CSV: empty id"),
                ));
            }
            rows.push((line, fields));
            Ok(true)
        })?;
        Ok(IdTable {
            path: path.to_path_buf(),
            rows,
            header,
        })
    }

    /// The warning that reports the skipped header line, if one was skipped.
    pub fn header_note(&self) -> Option<String> {
        self.header.as_ref().map(|(line, text)| {
            format!(
                "{}: line {line} ({text:?}) read as a column header and skipped (its first \
                 field is a column name); ids are read from line {} on",
                self.path.display(),
                self.rows.first().map_or(line + 1, |r| r.0)
            )
        })
    }
}

/// The first column of an id file ([`IdTable`]): `(line number, id)` pairs.
fn read_id_column(path: &Path) -> Result<Vec<(usize, String)>> {
    Ok(IdTable::read(path)?
        .rows
        .into_iter()
        .map(|(line, mut f)| (line, f.swap_remove(0)))
        .collect())
}

/// The warnings of reading a ground truth: one per ILIAS id file whose first line was read as
/// a column header and skipped ([`IdTable::header_note`]); none for a JSON ground truth.
pub fn ground_truth_notes(path: &Path) -> Result<Vec<String>> {
    if !std::fs::metadata(path).at(path)?.is_dir() {
        return Ok(Vec::new());
    }
    let mut notes = Vec::new();
    for name in [IMAGE_QUERIES, TEXT_QUERIES, POSITIVES] {
        if let Some(p) = ilias_file(path, name)? {
            notes.extend(IdTable::read(&p)?.header_note());
        }
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn header_detection_is_by_column_name_only() {
        assert!(is_header(&s(&["image_id", "scale"])));
        assert!(is_header(&s(&["ID"])));
        // Regression: these data lines were taken for headers by their shape and dropped.
        assert!(!is_header(&s(&["whatever"])));
        assert!(!is_header(&s(&["inst_00/pos_0.jpg", "NA", "NA"])));
        assert!(!is_header(&s(&["x/y", "scale", "clutter"])));
        assert!(!is_header(&s(&["a/0", "0.2", "5"])));
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

    /// Every reader of a folder in ILIAS layout reads the same list: one in `image_ids/` and
    /// another directly in the folder are refused (the ground truth read one, the id checks the
    /// other, and a positive missing from one turned into a distractor); one linked to the
    /// other is one file.
    #[test]
    fn an_id_list_in_both_layouts_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("image_ids");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join(IMAGE_QUERIES), "i1/q.jpg\n").unwrap();
        std::fs::write(sub.join(POSITIVES), "i1/p1.jpg\ni1/p2.jpg\n").unwrap();
        assert_eq!(
            load_ground_truth(d.path()).unwrap()[0].positives[0].len(),
            2
        );
        std::fs::write(d.path().join(POSITIVES), "i1/p1.jpg\n").unwrap();
        for e in [
            load_ground_truth(d.path()).unwrap_err(),
            ground_truth_notes(d.path()).unwrap_err(),
        ] {
            let msg = e.to_string();
            assert!(msg.contains("both") && msg.contains(POSITIVES), "{msg}");
        }
        std::fs::remove_file(d.path().join(POSITIVES)).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(sub.join(POSITIVES), d.path().join(POSITIVES)).unwrap();
            assert_eq!(
                load_ground_truth(d.path()).unwrap()[0].positives[0].len(),
                2
            );
            std::fs::remove_file(d.path().join(POSITIVES)).unwrap();
        }
        // A copy of the same bytes is the same list.
        std::fs::copy(sub.join(POSITIVES), d.path().join(POSITIVES)).unwrap();
        assert_eq!(
            load_ground_truth(d.path()).unwrap()[0].positives[0].len(),
            2
        );
    }

    /// An empty id names nothing a results file or a pool could hold: refused in a JSON ground
    /// truth (with its place) and in a set built in memory (Python's dict).
    #[test]
    fn empty_ids_are_refused() {
        let p = Path::new("gt.json");
        for (text, want) in [
            (
                r#"{"q1": [""]}"#,
                "line 1, column 11: query \"q1\": an empty positive id",
            ),
            (r#"{"": ["a"]}"#, "line 1, column 5: an empty query id"),
        ] {
            let e = parse_json_gt(p, text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        for (q, pos) in [("", "a"), ("q", "")] {
            let e = QuerySet::new(p, "queries", s(&[q]), vec![s(&[pos])]).unwrap_err();
            assert!(e.to_string().contains("id is empty"), "{e}");
        }
    }
}
