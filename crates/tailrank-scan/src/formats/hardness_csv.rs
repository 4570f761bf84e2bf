//! The hardness artifact (`docs/reference/hardness.md`): a CSV with one row per positive of every query,
//! `# key: value` metadata lines before the header ([`HardnessMeta`]), and a last line
//! `# checksum: xxh3:<hex>` over every byte before it ([`CHECKSUM_PREFIX`]).
//!
//! Reading gives back what was written bit for bit: floats are written in shortest round-trip
//! form, and [`read_hardness_csv`] refuses any file that does not describe a valid estimate
//! (errors name the file and the line).

// `!(x > 0.0)` is meant: it is also true for NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::atomic;
use crate::error::{Error, IoContext, Result};
use crate::evt::{Gpd, GpdFit};
use crate::formats::csv::{split_fields, Padding};
use crate::hardness::{Branch, HardnessMeta, PositiveHardness, QueryHardness, QueryTail};
use std::path::Path;

mod meta;
use meta::hardness_meta;

/// Version of the hardness CSV layout; readers refuse newer ones.
/// Version 2 added the optional `excess_rate` and `excess_weight` keys (an older reader would
/// ignore them and predict an unmoved estimate, so it must refuse the file), and later the
/// optional `excess_decay` and `excess_pool_size` (the decay and the N the rate is for, which
/// carry the rate to another N; absent, the rate is constant, as it was when written).
/// Version 3 added the optional `hit_tail_scale` and `hit_immune_scale` keys ([`HitScales`]:
/// an older reader would ignore them and predict the uncalibrated hit@1).
/// Version 4 added the optional `spacing_rate` and `spacing_weight` keys ([`SpacingMove`]: an
/// older reader would ignore them and predict the estimate without that move).
///
/// [`SpacingMove`]: crate::hardness::SpacingMove
pub const HARDNESS_FORMAT_VERSION: u32 = 4;
/// The `format` metadata of a hardness CSV; the reader refuses any other.
pub const HARDNESS_FORMAT_NAME: &str = "tailrank-hardness";

/// Columns of the hardness CSV, in the order written. All but `tail_log_likelihood` are
/// required when reading.
pub const HARDNESS_COLUMNS: [&str; 14] = [
    "query_id",
    "positive_id",
    "j",
    "score",
    "core_above",
    "pool_above",
    "sample_size",
    "x_hat",
    "branch",
    "tail_u",
    "tail_sigma",
    "tail_xi",
    "tail_n_u",
    "tail_log_likelihood",
];

fn csv_field(s: &str) -> String {
    let needs = s.contains([',', '"'])
        || s.starts_with('#')
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace);
    if needs {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn check_text(path: &Path, what: &str, s: &str) -> Result<()> {
    if s.contains(['\n', '\r']) {
        return Err(Error::output(
            path,
            format!("{what} {s:?} contains a line break, which the hardness CSV cannot hold"),
        ));
    }
    Ok(())
}

/// An id the file can hold and the reader accepts: one line, not empty (a ground truth has no
/// empty ids, so an empty one in a hardness file is an edit).
fn check_id(path: &Path, what: &str, s: &str) -> Result<()> {
    if s.is_empty() {
        return Err(Error::output(
            path,
            format!("a {what} is empty, which the hardness CSV does not hold"),
        ));
    }
    check_text(path, what, s)
}

/// Write the hardness artifact (atomically): `# key: value` metadata lines (`format`,
/// `format_version`, `model`, `query_set`, `pool_size` (`unknown` when None), `sample_size`,
/// `fraction`, `seed`, `estimator`, `tool_version`, and `excess_rate`, `excess_weight`,
/// `excess_decay`, `excess_pool_size` when the meta carries an [`ExcessMove`], and
/// `hit_tail_scale`, `hit_immune_scale` when it carries [`HitScales`]), then a header with
/// [`HARDNESS_COLUMNS`] and one row per positive (`j` 1-based, in score order). The tail
/// columns repeat the query's tail on every row and are empty when the query has none. A query
/// without positives gets one row with `j = 0` and empty positive columns. Floats are written
/// in shortest round-trip form, so reading gives back the same numbers.
pub fn write_hardness_csv(path: &Path, meta: &HardnessMeta, qs: &[QueryHardness]) -> Result<()> {
    for (k, v) in [
        ("model", &meta.model),
        ("query_set", &meta.query_set),
        ("estimator", &meta.estimator),
        ("tool_version", &meta.tool_version),
    ] {
        check_text(path, k, v)?;
    }
    for q in qs {
        check_id(path, "query id", &q.query_id)?;
        for p in &q.positives {
            check_id(path, "positive id", &p.id)?;
        }
    }
    atomic::write_file(path, |out| {
        let mut hashing = ChecksumWriter {
            inner: out,
            hash: xxhash_rust::xxh3::Xxh3::new(),
        };
        let w: &mut dyn std::io::Write = &mut hashing;
        let mut head = String::new();
        head.push_str(&format!("# format: {HARDNESS_FORMAT_NAME}\n"));
        head.push_str(&format!("# format_version: {HARDNESS_FORMAT_VERSION}\n"));
        head.push_str(&format!("# model: {}\n", meta.model));
        head.push_str(&format!("# query_set: {}\n", meta.query_set));
        match meta.pool_size {
            Some(n) => head.push_str(&format!("# pool_size: {n}\n")),
            None => head.push_str("# pool_size: unknown\n"),
        }
        head.push_str(&format!("# sample_size: {}\n", meta.sample_size));
        head.push_str(&format!("# fraction: {}\n", meta.fraction));
        head.push_str(&format!("# seed: {}\n", meta.seed));
        head.push_str(&format!("# estimator: {}\n", meta.estimator));
        head.push_str(&format!("# tool_version: {}\n", meta.tool_version));
        if let Some(m) = &meta.excess_move {
            head.push_str(&format!("# excess_rate: {}\n", m.rate));
            head.push_str(&format!("# excess_weight: {}\n", m.weight));
            head.push_str(&format!("# excess_decay: {}\n", m.decay));
            if let Some(n) = m.pool_size {
                head.push_str(&format!("# excess_pool_size: {n}\n"));
            }
        }
        if let Some(h) = &meta.hit_scales {
            head.push_str(&format!("# hit_tail_scale: {}\n", h.tail));
            head.push_str(&format!("# hit_immune_scale: {}\n", h.immune));
        }
        if let Some(m) = &meta.spacing_move {
            head.push_str(&format!("# spacing_rate: {}\n", m.rate));
            head.push_str(&format!("# spacing_weight: {}\n", m.weight));
        }
        head.push_str(&HARDNESS_COLUMNS.join(","));
        head.push('\n');
        w.write_all(head.as_bytes()).at(path)?;
        for q in qs {
            let qid = csv_field(&q.query_id);
            let tail = match &q.tail {
                Some(t) => format!(
                    "{},{},{},{},{}",
                    t.u, t.fit.gpd.sigma, t.fit.gpd.xi, t.n_u, t.fit.log_likelihood
                ),
                None => ",,,,".to_string(),
            };
            if q.positives.is_empty() {
                writeln!(w, "{qid},,0,,,,{},,,{tail}", q.sample_size).at(path)?;
            }
            for (i, p) in q.positives.iter().enumerate() {
                writeln!(
                    w,
                    "{qid},{},{},{},{},{},{},{},{},{tail}",
                    csv_field(&p.id),
                    i + 1,
                    p.score,
                    p.core_above,
                    p.pool_above,
                    q.sample_size,
                    p.x_hat,
                    p.branch.as_str()
                )
                .at(path)?;
            }
        }
        let line = format!("{CHECKSUM_PREFIX}xxh3:{:016x}\n", hashing.hash.digest());
        hashing.inner.write_all(line.as_bytes()).at(path)
    })
}

/// Prefix of the last line of a hardness artifact: `# checksum: xxh3:<16 hex digits>`, the
/// xxh3-64 (seed 0) of every byte before that line. Written by [`write_hardness_csv`]; required
/// and checked by [`read_hardness_csv`], so that a file cut short (even at a line boundary) is
/// refused. A file from another tool may end with [`CHECKSUM_NONE`] instead, to be read
/// unchecked.
pub const CHECKSUM_PREFIX: &str = "# checksum: ";

/// Last line of a hardness artifact whose writer computed no checksum (read unchecked).
pub const CHECKSUM_NONE: &str = "# checksum: none";

/// A writer that hashes what it forwards (for the checksum line).
struct ChecksumWriter<'a> {
    inner: &'a mut dyn std::io::Write,
    hash: xxhash_rust::xxh3::Xxh3,
}

impl std::io::Write for ChecksumWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Byte offset where the last line of `text` starts.
fn checksum_body_end(text: &str) -> usize {
    text.trim_end_matches(['\n', '\r'])
        .rfind('\n')
        .map_or(0, |i| i + 1)
}

/// Verify the trailing checksum line of `text` (required: a file cut short lacks it); returns
/// the text before it.
fn verify_checksum<'t>(path: &Path, text: &'t str) -> Result<&'t str> {
    let body_end = checksum_body_end(text);
    let last = text[body_end..].trim_end();
    let Some(rest) = last.strip_prefix(CHECKSUM_PREFIX.trim_end()) else {
        return Err(Error::input(
            path,
            format!(
                "no checksum line at the end: the file is cut short (truncated, possibly at a \
                 line boundary) or was written without one; tailrank ends every hardness file \
                 with `{CHECKSUM_PREFIX}xxh3:…` (a file from another tool may end with \
                 `{CHECKSUM_NONE}` to be read unchecked)"
            ),
        ));
    };
    let body = &text[..body_end];
    if rest.trim() == "none" {
        return Ok(body);
    }
    let actual = format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(body.as_bytes()));
    if rest.trim() != actual {
        return Err(Error::input(
            path,
            format!(
                "checksum mismatch: the last line records {}, the content hashes to {actual} \
                 (the file is corrupted or was edited; replace the last line with `# checksum: \
                 none` to accept deliberate edits)",
                rest.trim()
            ),
        ));
    }
    Ok(body)
}

/// Read a hardness artifact written by [`write_hardness_csv`] (or by another tool following
/// `docs/reference/hardness.md`). Errors name the file and the line: missing metadata keys or columns
/// (all named), malformed numbers, unknown branches, positives out of order (`j` must run
/// 1, 2, … within a query), a query split into separate blocks, tail columns that are partly
/// empty or differ between rows of one query, a newer format version, a metadata key given
/// twice, a fraction outside (0, 1], and counts no sample holds (`pool_above` or `tail_n_u`
/// above the row's sample size, a row's sample size above the metadata's). Extra columns are
/// ignored. When `tail_log_likelihood` is absent the fits' log-likelihood reads as NaN.
///
/// The trailing `# checksum:` line is required (a file without it, e.g. one cut short at a line
/// boundary, is refused; [`CHECKSUM_NONE`] opts out) and verified after parsing: a file that
/// parses but whose content does not match its checksum is refused (structural errors are
/// reported first, as they are more specific).
pub fn read_hardness_csv(path: &Path) -> Result<(HardnessMeta, Vec<QueryHardness>)> {
    crate::atomic::check_settled(path)?;
    if path.is_dir() {
        return Err(Error::input(
            path,
            "is a folder, not a hardness CSV (`predict --hardness-out` writes one; a summary \
             folder is read with `--summary`)",
        ));
    }
    let raw = crate::formats::read_input_text(path, "a hardness CSV")?;
    let (body, checked) = match verify_checksum(path, &raw) {
        Ok(body) => (body, Ok(())),
        // No checksum line: parse everything (a cut row is reported as such).
        Err(e) if !raw[checksum_body_end(&raw)..].starts_with(CHECKSUM_PREFIX.trim_end()) => {
            (raw.as_str(), Err(e))
        }
        Err(e) => (&raw[..checksum_body_end(&raw)], Err(e)),
    };
    let parsed = parse_hardness_text(path, body)?;
    checked?;
    if parsed.1.is_empty() {
        return Err(Error::input(
            path,
            "holds no query row: nothing to predict from (write it again with \
             `tailrank predict --hardness-out`)",
        ));
    }
    Ok(parsed)
}

/// Parse the text of a hardness artifact (without its checksum line).
fn parse_hardness_text(path: &Path, text: &str) -> Result<(HardnessMeta, Vec<QueryHardness>)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut meta_kv: Vec<(String, String, usize)> = Vec::new();
    let mut header: Option<Vec<String>> = None;
    let mut col = std::collections::HashMap::new();
    let mut qs: Vec<QueryHardness> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Queries declared with a `j = 0` row (no positives); kept apart from `seen`, so that no
    // query id can collide with a marker.
    let mut declared_empty = std::collections::HashSet::new();
    let mut tail_of_last: Option<Vec<String>> = None;
    // Line of each query's first row (for the check against the metadata's sample size).
    let mut first_lines: Vec<usize> = Vec::new();
    for (ln0, raw) in text.lines().enumerate() {
        let ln = ln0 + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if header.is_none() {
                if let Some((k, v)) = c.split_once(':') {
                    meta_kv.push((k.trim().to_string(), v.trim().to_string(), ln));
                }
            }
            continue;
        }
        let fields = split_fields(line, Padding::Keep)
            .map_err(|e| Error::input(path, format!("line {ln}: {e}")))?;
        let Some(hdr) = &header else {
            let (names, columns) = header_columns(path, ln, &fields)?;
            (header, col) = (Some(names), columns);
            continue;
        };
        if fields.len() != hdr.len() {
            return Err(Error::input(
                path,
                format!(
                    "line {ln}: {} fields, the header has {}",
                    fields.len(),
                    hdr.len()
                ),
            ));
        }
        let get = |name: &str| -> Option<&str> { col.get(name).map(|&i| fields[i].as_str()) };
        let field = |name: &str| get(name).unwrap_or("");
        let qid = field("query_id").to_string();
        if qid.is_empty() {
            return Err(Error::input(
                path,
                format!("line {ln}: column query_id is empty"),
            ));
        }
        let j: usize = num(path, ln, "j", field("j"))?;
        let sample_size: u64 = num(path, ln, "sample_size", field("sample_size"))?;
        let tail_cols = [
            "tail_u",
            "tail_sigma",
            "tail_xi",
            "tail_n_u",
            "tail_log_likelihood",
        ];
        let tail_vals: Vec<String> = tail_cols
            .iter()
            .map(|c| field(c).trim().to_string())
            .collect();
        let new_query = qs.last().is_none_or(|q| q.query_id != qid);
        if new_query {
            if !seen.insert(qid.clone()) {
                return Err(Error::input(
                    path,
                    format!("line {ln}: query {qid} appears in two separate blocks of rows"),
                ));
            }
            let tail = query_tail(path, ln, &qid, &tail_vals, sample_size)?;
            first_lines.push(ln);
            qs.push(QueryHardness {
                query_id: qid.clone(),
                sample_size,
                tail,
                positives: Vec::new(),
            });
            tail_of_last = Some(tail_vals);
        } else {
            let q = qs.last().expect("non-empty");
            if q.sample_size != sample_size || tail_of_last.as_ref() != Some(&tail_vals) {
                return Err(Error::input(
                    path,
                    format!(
                        "line {ln}: sample_size or tail columns differ from the query's \
                         first row (query {qid})"
                    ),
                ));
            }
        }
        let q = qs.last_mut().expect("non-empty");
        if j == 0 {
            if !new_query {
                return Err(Error::input(
                    path,
                    format!("line {ln}: j = 0 (no positives) but query {qid} has other rows"),
                ));
            }
            // A query without positives: nothing else on this row.
            declared_empty.insert(qid);
            continue;
        }
        if declared_empty.contains(&qid) {
            return Err(Error::input(
                path,
                format!("line {ln}: query {qid} was declared without positives (j = 0)"),
            ));
        }
        if j != q.positives.len() + 1 {
            return Err(Error::input(
                path,
                format!(
                    "line {ln}: query {qid}: j = {j}, expected {} (rows must list positives \
                     in order j = 1, 2, ...)",
                    q.positives.len() + 1
                ),
            ));
        }
        let p = positive_row(path, ln, &field, sample_size)?;
        push_positive(path, ln, q, p)?;
    }
    if header.is_none() {
        return Err(Error::input(
            path,
            "no header line (query_id,positive_id,...)",
        ));
    }
    let meta = hardness_meta(path, &meta_kv)?;
    check_query_samples(path, &meta, &qs, &first_lines)?;
    Ok((meta, qs))
}

/// The header line `ln`'s column names and the position of each: every column of
/// [`HARDNESS_COLUMNS`] but the log-likelihood present, none of those named twice (extra
/// columns are ignored, repeated or not).
fn header_columns(
    path: &Path,
    ln: usize,
    fields: &[String],
) -> Result<(Vec<String>, std::collections::HashMap<String, usize>)> {
    let names: Vec<String> = fields.iter().map(|f| f.trim().to_string()).collect();
    let has = |c: &str| names.iter().any(|n| n == c);
    if let Some(missing) = missing_names(&HARDNESS_COLUMNS[..13], has) {
        return Err(Error::input(
            path,
            format!("line {ln}: header lacks the column(s) {missing}"),
        ));
    }
    let mut col = std::collections::HashMap::new();
    for (i, n) in names.iter().enumerate() {
        let read = HARDNESS_COLUMNS.contains(&n.as_str());
        if let Some(first) = col.insert(n.clone(), i).filter(|_| read) {
            return Err(Error::input(
                path,
                format!(
                    "line {ln}: column {n:?} appears twice in the header (columns {} and {}): \
                     which one counts would be a guess",
                    first + 1,
                    i + 1
                ),
            ));
        }
    }
    Ok((names, col))
}

/// Append positive `p` (line `ln`) to query `q`: j counts positives in score order, each
/// positive once (what the writer writes), so a score above the previous row's or an id
/// already listed is an error, as is a tail or immune positive of a query without a tail.
fn push_positive(path: &Path, ln: usize, q: &mut QueryHardness, p: PositiveHardness) -> Result<()> {
    let qid = &q.query_id;
    if p.branch != crate::hardness::Branch::Count && q.tail.is_none() {
        return Err(Error::input(
            path,
            format!(
                "line {ln}: query {qid}: branch {} needs the query's fitted tail, but its tail \
                 columns are empty",
                p.branch.as_str()
            ),
        ));
    }
    if let Some(prev) = q.positives.last().filter(|prev| p.score > prev.score) {
        return Err(Error::input(
            path,
            format!(
                "line {ln}: query {qid}: positive {:?} scores {} above the row before's {} \
                 (rows list positives by score, descending)",
                p.id, p.score, prev.score
            ),
        ));
    }
    if q.positives.iter().any(|x| x.id == p.id) {
        return Err(Error::input(
            path,
            format!("line {ln}: query {qid}: positive {:?} listed twice", p.id),
        ));
    }
    q.positives.push(p);
    Ok(())
}

/// Every query's sample size at most the metadata's (a query's sample is part of the subset
/// the estimate used); `first_lines[i]` is the line of query i's first row, named in the error.
fn check_query_samples(
    path: &Path,
    meta: &HardnessMeta,
    qs: &[QueryHardness],
    first_lines: &[usize],
) -> Result<()> {
    match qs
        .iter()
        .zip(first_lines)
        .find(|(q, _)| q.sample_size > meta.sample_size)
    {
        None => Ok(()),
        Some((q, ln)) => Err(Error::input(
            path,
            format!(
                "line {ln}: query {}: sample_size {} is above the metadata's sample_size {} \
                 (a query's sample is part of the subset the estimate used)",
                q.query_id, q.sample_size, meta.sample_size
            ),
        )),
    }
}

/// Field `v` of column `name` on line `ln`, parsed.
fn num<T: std::str::FromStr + Expected>(path: &Path, ln: usize, name: &str, v: &str) -> Result<T> {
    v.trim().parse::<T>().map_err(|_| {
        Error::input(
            path,
            format!("line {ln}: column {name}: {v:?} is not {}", T::WHAT),
        )
    })
}

/// `v` of column `name` on line `ln`, refused unless finite.
fn finite(path: &Path, ln: usize, name: &str, v: f64) -> Result<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Error::input(
            path,
            format!("line {ln}: column {name}: {v} is not finite"),
        ))
    }
}

/// The tail of the query whose first row (line `ln`) holds tail columns `tail_vals` (u,
/// sigma, xi, n_u, log-likelihood) and sample size `sample_size`: none when the first four are
/// empty, an error when only some are, or when `n_u > sample_size` (the exceedances are
/// sampled items).
fn query_tail(
    path: &Path,
    ln: usize,
    qid: &str,
    tail_vals: &[String],
    sample_size: u64,
) -> Result<Option<QueryTail>> {
    let present = tail_vals[..4].iter().filter(|v| !v.is_empty()).count();
    match present {
        0 => Ok(None),
        4 => {
            // Tail column `i`, called `name`, as a finite number.
            let float =
                |i: usize, name: &str| finite(path, ln, name, num(path, ln, name, &tail_vals[i])?);
            let u = float(0, "tail_u")?;
            let sigma = float(1, "tail_sigma")?;
            let xi = float(2, "tail_xi")?;
            let n_u: usize = num(path, ln, "tail_n_u", &tail_vals[3])?;
            if n_u as u64 > sample_size {
                return Err(Error::input(
                    path,
                    format!(
                        "line {ln}: column tail_n_u: {n_u} exceedances, more than the \
                         sample_size {sample_size} (query {qid})"
                    ),
                ));
            }
            if !(sigma > 0.0) {
                return Err(Error::input(
                    path,
                    format!("line {ln}: column tail_sigma: {sigma} is not positive"),
                ));
            }
            if n_u == 0 {
                return Err(Error::input(
                    path,
                    format!("line {ln}: column tail_n_u: 0 exceedances for a fitted tail"),
                ));
            }
            let ll = if tail_vals[4].is_empty() {
                f64::NAN
            } else {
                num(path, ln, "tail_log_likelihood", &tail_vals[4])?
            };
            Ok(Some(QueryTail {
                u,
                n_u,
                fit: GpdFit {
                    gpd: Gpd { sigma, xi },
                    log_likelihood: ll,
                    n: n_u,
                },
            }))
        }
        _ => Err(Error::input(
            path,
            format!(
                "line {ln}: tail columns are partly empty (query {qid}): give all \
                 of tail_u, tail_sigma, tail_xi, tail_n_u or none"
            ),
        )),
    }
}

/// The positive of a row (line `ln`) whose columns `field` gives: score, counts
/// (`pool_above ≤ sample_size`, the row's S), x̂ in [0, 1] and branch.
fn positive_row<'a>(
    path: &Path,
    ln: usize,
    field: &impl Fn(&str) -> &'a str,
    sample_size: u64,
) -> Result<PositiveHardness> {
    let score: f32 = num(path, ln, "score", field("score"))?;
    finite(path, ln, "score", score as f64)?;
    let core_above: u64 = num(path, ln, "core_above", field("core_above"))?;
    let pool_above: u64 = num(path, ln, "pool_above", field("pool_above"))?;
    if pool_above > sample_size {
        return Err(Error::input(
            path,
            format!(
                "line {ln}: column pool_above: {pool_above} sampled items above the positive, \
                 more than the sample_size {sample_size}"
            ),
        ));
    }
    let x_hat: f64 = num(path, ln, "x_hat", field("x_hat"))?;
    if !(0.0..=1.0).contains(&x_hat) {
        return Err(Error::input(
            path,
            format!("line {ln}: column x_hat: {x_hat} is not a fraction in [0, 1]"),
        ));
    }
    if field("positive_id").is_empty() {
        return Err(Error::input(
            path,
            format!("line {ln}: column positive_id is empty"),
        ));
    }
    let b = field("branch").trim();
    let branch = Branch::parse(b).ok_or_else(|| {
        Error::input(
            path,
            format!("line {ln}: unknown branch {b:?} (expected count, tail or immune)"),
        )
    })?;
    Ok(PositiveHardness {
        id: field("positive_id").to_string(),
        score,
        core_above,
        pool_above,
        x_hat,
        branch,
    })
}

/// The names of `wanted` that `has` does not find, in order and joined by `, `; None when it
/// finds them all.
fn missing_names(wanted: &[&str], has: impl Fn(&str) -> bool) -> Option<String> {
    let missing: Vec<&str> = wanted.iter().copied().filter(|w| !has(w)).collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// What a numeric field of the hardness CSV must hold, said in its parse errors (a count
/// given as `-1` is "not a non-negative integer", not merely "not a valid number").
pub(super) trait Expected {
    const WHAT: &'static str;
}

impl Expected for u64 {
    const WHAT: &'static str = "a non-negative integer";
}

impl Expected for usize {
    const WHAT: &'static str = "a non-negative integer";
}

impl Expected for f64 {
    const WHAT: &'static str = "a number";
}

impl Expected for f32 {
    const WHAT: &'static str = "a number";
}
