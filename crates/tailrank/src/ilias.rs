//! ILIAS end to end from its own files: layout discovery, id checks of the feature files
//! against the id lists, one scan of both query sets, and the ILIAS report with the official
//! breakdowns (scale, clutter, category, subcategory), exact or predicted. See `docs/ilias.md`.
//!
//! ## Layout
//!
//! Dataset folder `DIR` (files in `DIR/image_ids/` or directly in `DIR`):
//! `image_query_ids.txt`, `text_query_ids.txt` (CSV, id first), `positive_ids.txt`
//! (CSV `id,scale,clutter`), `distractor_ids.txt.gz` (one id per line) and optionally
//! `taxonomy.json` (also looked for in `DIR/misc/`). Feature folder `FEATDIR`:
//! `features_image_queries.hdf5`, `features_text_queries.hdf5`, `features_positives.hdf5` and the
//! shards `features_distractors_*.hdf5` (`.h5` accepted too), as the ILIAS extractor writes them.
//!
//! ## Breakdowns (the official evaluator's definitions)
//!
//! - **Scale / clutter group** `[t1, t2)` (thresholds [`SCALE_GROUPS`], [`CLUTTER_GROUPS`]): for
//!   each query whose instance has at least one positive with `t1 ≤ value < t2`, the positives
//!   outside the group are removed from the ranking before the cut at k, the divisor is
//!   `min(k, group size)`, and the group's mAP is the mean over those queries. From counts: the
//!   removed positives are relevant items of the same query, so they simply vanish; `C_j` counts
//!   non-relevant core items (other instances' positives) and `K_j` pool items, neither of which
//!   changes, so the kept positive `j'` (1-based among the kept ones) sits at
//!   `r = j' + C_j + K_j`.
//! - **Category / subcategory** (from `taxonomy.json`, `{category: {subcategory: {type:
//!   [instances]}}}` or `{category: {subcategory: [instances]}}`): the AP of each instance is the
//!   mean over its queries, the group's mAP the mean over its instances. Subcategories are named
//!   `category-subcategory`, as in the official report.
//!
//! In prediction mode every breakdown is predicted the same way from the level-0 hardness: the
//! positives outside the group are dropped from each query's hardness before the map.

use crate::error::{Error, IoContext, Result};
use crate::formats::descriptors::DescriptorSource;
use crate::formats::gt::{is_header, load_ground_truth, split_csv, QuerySet};
use crate::formats::hdf5::Hdf5Descriptors;
use crate::hardness::QueryHardness;
use crate::maps::{self, MapKind};
use crate::metric::{evaluate_counts, PositiveCounts};
use crate::predict::{self, PredictOptions, Prediction};
use crate::scan::engine::{scan_sets, NoProgress, PoolScan, Progress, QuerySetInput, ScanConfig};
use crate::scan::resume::{scan_sets_resumable, ResumeOptions, ResumeReport};
use crate::scan::summary::{ground_truth_record, Summary, POOL_ROLE};
use crate::selected::{SelectedIds, SubsetSource};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Scale groups `[t1, t2)` of the official evaluator (relative object size in the positive).
pub const SCALE_GROUPS: [(f64, f64); 4] = [
    (0.0, 0.06880213760855043),
    (0.06880213760855043, 0.13526567164179104),
    (0.13526567164179104, 0.2729876723163842),
    (0.2729876723163842, f64::INFINITY),
];

/// Clutter groups `[t1, t2)` of the official evaluator.
pub const CLUTTER_GROUPS: [(f64, f64); 4] = [
    (0.0, 18.0),
    (18.0, 33.0),
    (33.0, 53.0),
    (53.0, f64::INFINITY),
];

/// The official report's key of a group, `"{t1}-{t2}"` as Python prints the thresholds
/// (`0-0.06880213760855043`, `53-inf`).
pub fn group_key(t1: f64, t2: f64) -> String {
    let f = |x: f64| {
        if x.is_infinite() {
            "inf".to_string()
        } else {
            format!("{x}")
        }
    };
    format!("{}-{}", f(t1), f(t2))
}

const IMAGE_QUERIES: &str = "image_query_ids.txt";
const TEXT_QUERIES: &str = "text_query_ids.txt";
const POSITIVES: &str = "positive_ids.txt";
const DISTRACTORS: &str = "distractor_ids.txt.gz";
const TAXONOMY: &str = "taxonomy.json";
/// Where `taxonomy.json` is looked for, relative to the dataset folder, in this order (the
/// ILIAS download has no taxonomy: it is `misc/taxonomy.json` of the ILIAS code repository).
const TAXONOMY_DIRS: [&str; 3] = ["", "image_ids", "misc"];

fn find_in(dir: &Path, subdirs: &[&str], name: &str) -> Option<PathBuf> {
    subdirs
        .iter()
        .map(|s| {
            if s.is_empty() {
                dir.join(name)
            } else {
                dir.join(s).join(name)
            }
        })
        .find(|p| p.is_file())
}

/// Scale and clutter of one positive (columns 2 and 3 of `positive_ids.txt`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PositiveInfo {
    pub scale: f64,
    pub clutter: f64,
}

/// Instance → (category, subcategory) from `taxonomy.json`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Taxonomy {
    pub instance: HashMap<String, (String, String)>,
}

/// An ILIAS dataset folder: the id lists, the query sets, positive attributes, taxonomy.
#[derive(Debug, Clone)]
pub struct IliasDataset {
    pub dir: PathBuf,
    pub image_queries_file: Option<PathBuf>,
    pub text_queries_file: Option<PathBuf>,
    pub positives_file: PathBuf,
    pub distractors_file: PathBuf,
    pub taxonomy_file: Option<PathBuf>,
    /// `image` and/or `text` query sets (queries of an instance share its positives).
    pub sets: Vec<QuerySet>,
    /// Every positive id, in file order.
    pub positive_ids: Vec<String>,
    /// Scale and clutter per positive id (None when `positive_ids.txt` has only the id column).
    pub positive_info: Option<HashMap<String, PositiveInfo>>,
    pub taxonomy: Option<Taxonomy>,
    /// `--selected-ids`: the distractor subset to scan (`crate::selected`); None: all.
    pub selected_ids: Option<PathBuf>,
}

impl IliasDataset {
    /// Discover and load a dataset folder; `taxonomy` overrides the discovered `taxonomy.json`.
    pub fn open(dir: &Path, taxonomy: Option<&Path>) -> Result<Self> {
        if !dir.is_dir() {
            return Err(Error::file(dir, "ILIAS dataset folder not found"));
        }
        let subs = ["image_ids", ""];
        let positives_file = find_in(dir, &subs, POSITIVES).ok_or_else(|| {
            Error::file(
                dir,
                format!("no image_ids/{POSITIVES}: not an ILIAS dataset folder"),
            )
        })?;
        let distractors_file = find_in(dir, &subs, DISTRACTORS).ok_or_else(|| {
            Error::file(
                dir,
                format!("no image_ids/{DISTRACTORS} (the distractor id list gives N and is checked against the features)"),
            )
        })?;
        let taxonomy_file = match taxonomy {
            Some(t) => Some(t.to_path_buf()),
            None => find_in(dir, &TAXONOMY_DIRS, TAXONOMY),
        };
        let sets = load_ground_truth(dir)?;
        let (positive_ids, positive_info) = read_positive_info(&positives_file)?;
        let taxonomy = match &taxonomy_file {
            Some(t) => Some(read_taxonomy(t)?),
            None => None,
        };
        Ok(IliasDataset {
            dir: dir.to_path_buf(),
            image_queries_file: find_in(dir, &subs, IMAGE_QUERIES),
            text_queries_file: find_in(dir, &subs, TEXT_QUERIES),
            positives_file,
            distractors_file,
            taxonomy_file,
            sets,
            positive_ids,
            positive_info,
            taxonomy,
            selected_ids: None,
        })
    }

    /// The query set named `name` (`image` or `text`).
    pub fn set(&self, name: &str) -> Option<&QuerySet> {
        self.sets.iter().find(|s| s.name == name)
    }

    fn list_file(&self, set: &str) -> PathBuf {
        match set {
            "image" => self.image_queries_file.clone(),
            _ => self.text_queries_file.clone(),
        }
        .unwrap_or_else(|| self.dir.clone())
    }
}

/// Scale and clutter per positive id.
pub type PositiveInfoMap = HashMap<String, PositiveInfo>;

/// Read `positive_ids.txt`: CSV `id,scale,clutter` (a header line is skipped). Returns the ids in
/// file order and, when the file has the two attribute columns, scale and clutter per id.
pub fn read_positive_info(path: &Path) -> Result<(Vec<String>, Option<PositiveInfoMap>)> {
    let text = std::fs::read_to_string(path).at(path)?;
    // A leading byte order mark is skipped, as `formats::gt` does for the same CSV files.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        rows.push((i + 1, split_csv(path, i + 1, line)?));
    }
    if rows.is_empty() {
        return Err(Error::file(path, "no positive ids"));
    }
    let start = usize::from(is_header(&rows[0].1, rows.get(1).map(|r| r.1.as_slice())));
    let ncols = rows.get(start).map_or(0, |r| r.1.len());
    let mut ids = Vec::with_capacity(rows.len());
    let mut info = HashMap::with_capacity(rows.len());
    for (line, f) in rows.into_iter().skip(start) {
        if f.len() != ncols {
            return Err(Error::file(
                path,
                format!(
                    "line {line}: {} columns where the first data line has {ncols}",
                    f.len()
                ),
            ));
        }
        if ncols >= 3 {
            let num = |s: &str, what: &str| -> Result<f64> {
                s.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        Error::file(
                            path,
                            format!("line {line}: {what} {s:?} is not a finite number"),
                        )
                    })
            };
            let scale = num(&f[1], "scale")?;
            let clutter = num(&f[2], "clutter")?;
            info.insert(f[0].clone(), PositiveInfo { scale, clutter });
        }
        ids.push(f[0].clone());
    }
    Ok((ids, (ncols >= 3).then_some(info)))
}

/// Read `taxonomy.json` into instance → (category, subcategory). Accepts three levels
/// (`{category: {subcategory: {type: [instances]}}}`, the official file) or two
/// (`{category: {subcategory: [instances]}}`). An instance listed twice is an error.
pub fn read_taxonomy(path: &Path) -> Result<Taxonomy> {
    let bytes = std::fs::read(path).at(path)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::file(path, format!("not valid JSON: {e}")))?;
    let bad = |msg: String| Error::file(path, msg);
    let cats = v
        .as_object()
        .ok_or_else(|| bad("expected an object {category: {subcategory: ...}}".into()))?;
    let mut t = Taxonomy::default();
    let mut add = |inst: &serde_json::Value, c: &str, sc: &str| -> Result<()> {
        let i = inst
            .as_str()
            .ok_or_else(|| bad(format!("{c}/{sc}: instance names must be strings")))?;
        if t.instance
            .insert(i.to_string(), (c.to_string(), sc.to_string()))
            .is_some()
        {
            return Err(bad(format!("instance {i:?} is listed twice")));
        }
        Ok(())
    };
    for (c, subs) in cats {
        let subs = subs.as_object().ok_or_else(|| {
            bad(format!(
                "category {c:?}: expected an object of subcategories"
            ))
        })?;
        for (sc, inner) in subs {
            match inner {
                serde_json::Value::Array(list) => {
                    for i in list {
                        add(i, c, sc)?;
                    }
                }
                serde_json::Value::Object(types) => {
                    for (ty, list) in types {
                        let list = list.as_array().ok_or_else(|| {
                            bad(format!("{c}/{sc}/{ty}: expected an array of instances"))
                        })?;
                        for i in list {
                            add(i, c, sc)?;
                        }
                    }
                }
                _ => {
                    return Err(bad(format!(
                        "{c}/{sc}: expected an array of instances or an object of types"
                    )))
                }
            }
        }
    }
    Ok(t)
}

/// The feature files of an ILIAS feature folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureFiles {
    pub image_queries: Option<PathBuf>,
    pub text_queries: Option<PathBuf>,
    pub positives: PathBuf,
    /// `features_distractors_*.hdf5`, sorted by name.
    pub distractors: Vec<PathBuf>,
}

/// Find the feature files in `dir` (see the module docs; `.hdf5` or `.h5`).
pub fn find_features(dir: &Path) -> Result<FeatureFiles> {
    let entries = std::fs::read_dir(dir).at(dir)?;
    let mut names: Vec<PathBuf> = Vec::new();
    for e in entries {
        let e = e.at(dir)?;
        if e.path().is_file() {
            names.push(e.path());
        }
    }
    names.sort();
    let stem_ext = |p: &Path| -> Option<(String, bool)> {
        let name = p.file_name()?.to_str()?;
        for ext in [".hdf5", ".h5"] {
            if let Some(stem) = name.strip_suffix(ext) {
                return Some((stem.to_string(), true));
            }
        }
        None
    };
    let mut image = None;
    let mut text = None;
    let mut pos: Vec<PathBuf> = Vec::new();
    let mut distractors = Vec::new();
    for p in names {
        let Some((stem, _)) = stem_ext(&p) else {
            continue;
        };
        match stem.as_str() {
            "features_image_queries" => image = Some(p),
            "features_text_queries" => text = Some(p),
            // The extractor's name, and the singular spelling some feature folders use.
            "features_positives" | "features_positive" => pos.push(p),
            s if s.starts_with("features_distractors") => distractors.push(p),
            _ => {}
        }
    }
    let positives = match pos.len() {
        0 => {
            return Err(Error::file(
                dir,
                "no features_positives.hdf5 or features_positive.hdf5 (the positives' \
                 descriptors) in the feature folder",
            ))
        }
        1 => pos.remove(0),
        _ => {
            let names: Vec<String> = pos.iter().map(|p| p.display().to_string()).collect();
            return Err(Error::file(
                dir,
                format!(
                    "several positives feature files ({}): keep one of features_positives.hdf5 \
                     and features_positive.hdf5",
                    names.join(", ")
                ),
            ));
        }
    };
    if distractors.is_empty() {
        return Err(Error::file(
            dir,
            "no features_distractors_*.hdf5 shard in the feature folder",
        ));
    }
    Ok(FeatureFiles {
        image_queries: image,
        text_queries: text,
        positives,
        distractors,
    })
}

/// Check the ids of a feature file against the id list it must match exactly: a duplicate row,
/// an id not in the list (unknown) and a listed id without a row (missing) are errors naming
/// the feature file, the row or id, and the list.
pub fn check_ids_exact(
    file: &Path,
    ids: &[String],
    list: &Path,
    expected: &[String],
) -> Result<()> {
    crate::formats::ids::check_unique_at(file, ids, "rows", 0)?;
    let want: HashSet<&str> = expected.iter().map(String::as_str).collect();
    for (row, id) in ids.iter().enumerate() {
        if !want.contains(id.as_str()) {
            return Err(Error::file(
                file,
                format!("row {row}: unknown id {id:?}: not in {}", list.display()),
            ));
        }
    }
    let have: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let missing: Vec<&String> = expected
        .iter()
        .filter(|e| !have.contains(e.as_str()))
        .collect();
    if let Some(first) = missing.first() {
        return Err(Error::file(
            file,
            format!(
                "{} id(s) of {} have no row here (missing), e.g. {first:?}",
                missing.len(),
                list.display()
            ),
        ));
    }
    Ok(())
}

fn key64(id: &str) -> u64 {
    crate::formats::ids::id_key(id)
}

/// Stream the lines of an id list (`.gz` accepted): `(1-based line, id)` for non-blank lines.
pub(crate) fn for_each_id(path: &Path, mut f: impl FnMut(usize, &str) -> Result<()>) -> Result<()> {
    let mut r = crate::formats::ids::open_text(path)?;
    let mut buf = Vec::with_capacity(128);
    let mut line = 0usize;
    loop {
        buf.clear();
        let n = r
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::file(path, format!("cannot read line {}: {e}", line + 1)))?;
        if n == 0 {
            return Ok(());
        }
        line += 1;
        if line == 1 {
            crate::formats::ids::check_no_bom(path, &buf)?;
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        if buf.is_empty() {
            continue;
        }
        let id = std::str::from_utf8(&buf)
            .map_err(|_| Error::file(path, format!("line {line} is not valid UTF-8")))?;
        f(line, id)?;
    }
}

/// The distractor id list, held as sorted 64-bit xxh3 keys ([`crate::formats::ids::id_key`]:
/// 8 bytes per id, 0.8 GB for the 100M of ILIAS, instead of the strings), with the number of
/// ids in the hash sample and, with `--selected-ids`, the selected subset as a bit per id.
///
/// Invariant: the keys are distinct. Two equal keys are checked exactly (the list is streamed
/// again and the strings compared): the same id twice is a "duplicate" error naming both
/// lines, two different ids with one hash a "hash collision" error naming both.
#[derive(Debug, Clone)]
pub struct DistractorList {
    pub path: PathBuf,
    keys: Vec<u64>,
    /// N: the number of distractor ids, or of the selected ones with [`DistractorList::select`].
    pub len: u64,
    /// Ids in the list file (N without a selection).
    pub total: u64,
    /// `(fraction, seed)` of the sample the features must cover; None: all of them.
    pub sample: Option<(f64, u64)>,
    /// Ids of the list (of the selection) in the sample (N when `sample` is None).
    pub required: u64,
    /// The `--selected-ids` file and a bit per key index (in key order); None: every id.
    selection: Option<(PathBuf, Vec<u64>)>,
}

fn bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] & (1u64 << (i % 64)) != 0
}

impl DistractorList {
    /// Read the list, counting the ids in the hash sample `(f, seed)` (all when None). A
    /// duplicate id is an error naming both lines, and so is a hash collision.
    pub fn read(path: &Path, sample: Option<(f64, u64)>) -> Result<Self> {
        let t = match sample {
            Some((f, _)) => Some(crate::sample::threshold(f)?),
            None => None,
        };
        let mut keys = Vec::new();
        let mut required = 0u64;
        for_each_id(path, |_, id| {
            keys.push(key64(id));
            if in_sample(id, t, sample) {
                required += 1;
            }
            Ok(())
        })?;
        if keys.is_empty() {
            return Err(Error::file(path, "the distractor id list is empty"));
        }
        rayon::slice::ParallelSliceMut::par_sort_unstable(&mut keys[..]);
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            let dup = w[0];
            let mut lines: Vec<(usize, String)> = Vec::new();
            for_each_id(path, |line, id| {
                if key64(id) == dup && lines.len() < 2 {
                    lines.push((line, id.to_string()));
                }
                Ok(())
            })?;
            let (l1, a) = lines.first().cloned().unwrap_or((0, String::new()));
            let (l2, b) = lines.get(1).cloned().unwrap_or((0, String::new()));
            return Err(Error::file(
                path,
                if a == b {
                    format!("duplicate distractor id {a:?} on lines {l1} and {l2}")
                } else {
                    format!(
                        "hash collision: the different ids {a:?} (line {l1}) and {b:?} (line \
                         {l2}) have the same 64-bit xxh3 hash {dup:016x}, under which tailrank \
                         holds distractor ids; it cannot tell them apart (please report it)"
                    )
                },
            ));
        }
        Ok(DistractorList {
            path: path.to_path_buf(),
            len: keys.len() as u64,
            total: keys.len() as u64,
            keys,
            sample,
            required,
            selection: None,
        })
    }

    /// Restrict N to the distractors of `sel` (`--selected-ids`, [`SelectedIds::matches`]):
    /// streams the list once; every line of the selection must match a listed distractor
    /// (else "unknown", naming the selection file and the line).
    pub fn select(&mut self, sel: &mut SelectedIds) -> Result<()> {
        let t = match self.sample {
            Some((f, _)) => Some(crate::sample::threshold(f)?),
            None => None,
        };
        let mut bits = vec![0u64; self.keys.len().div_ceil(64)];
        let (mut n, mut required) = (0u64, 0u64);
        let keys = &self.keys;
        let sample = self.sample;
        for_each_id(&self.path, |_, id| {
            if sel.matches(id) {
                let i = keys.binary_search(&key64(id)).unwrap_or(0);
                bits[i / 64] |= 1u64 << (i % 64);
                n += 1;
                if in_sample(id, t, sample) {
                    required += 1;
                }
            }
            Ok(())
        })?;
        sel.check_all_matched(&self.path)?;
        self.len = n;
        self.required = required;
        self.selection = Some((sel.path.clone(), bits));
        Ok(())
    }

    /// The listed id whose key is `key` (streams the list; for error messages).
    fn listed_id(&self, key: u64) -> Result<Option<String>> {
        let mut found = None;
        for_each_id(&self.path, |_, id| {
            if found.is_none() && key64(id) == key {
                found = Some(id.to_string());
            }
            Ok(())
        })?;
        Ok(found)
    }

    /// Check the ids of the distractor feature shards: every id must be in the list (else
    /// "unknown", naming the shard and row), no id may appear twice across the shards
    /// ("duplicate", naming the shard and row), and every listed id of the sample (all of
    /// them in exact mode; of the selection with [`DistractorList::select`]) must have a row
    /// somewhere ("missing", naming the list and an id). Returns, with a selection, the rows
    /// of each shard that hold selected ids (ascending), None without one.
    ///
    /// Ids are matched by their 64-bit key; a repeated key is checked against the list's
    /// string, so a shard id colliding with a listed id that is also present is reported as a
    /// hash collision. (A colliding id whose listed twin is absent would pass for it: at most
    /// `unknown ids · N / 2⁶⁴`, about 5·10⁻¹² per unknown id at N = 10⁸.)
    pub fn check_features(
        &self,
        shards: &[&dyn DescriptorSource],
    ) -> Result<Option<Vec<Vec<usize>>>> {
        let t = match self.sample {
            Some((f, _)) => Some(crate::sample::threshold(f)?),
            None => None,
        };
        let mut seen = vec![0u64; self.keys.len().div_ceil(64)];
        let mut found_required = 0u64;
        let mut rows_of: Vec<Vec<usize>> = Vec::new();
        for src in shards {
            let mut rows = Vec::new();
            src.ids().for_each(|row, id| {
                let Ok(i) = self.keys.binary_search(&key64(id)) else {
                    return Err(Error::file(
                        src.path(),
                        format!(
                            "row {row}: unknown distractor id {id:?}: not in {}",
                            self.path.display()
                        ),
                    ));
                };
                if bit(&seen, i) {
                    let listed = self.listed_id(self.keys[i])?;
                    if listed.as_deref().is_some_and(|l| l != id) {
                        return Err(Error::file(
                            src.path(),
                            format!(
                                "row {row}: hash collision: id {id:?} has the same 64-bit xxh3 \
                                 hash as the listed id {:?} of {} (one of them is unknown, or \
                                 tailrank cannot tell them apart: please report it)",
                                listed.unwrap_or_default(),
                                self.path.display()
                            ),
                        ));
                    }
                    return Err(Error::file(
                        src.path(),
                        format!("row {row}: duplicate distractor id {id:?} (already in this or an earlier shard)"),
                    ));
                }
                seen[i / 64] |= 1u64 << (i % 64);
                let selected = self.selection.as_ref().is_none_or(|(_, b)| bit(b, i));
                if selected {
                    rows.push(row);
                    if in_sample(id, t, self.sample) {
                        found_required += 1;
                    }
                }
            Ok(())
            })?;
            rows_of.push(rows);
        }
        if found_required < self.required {
            let mut first = None;
            for_each_id(&self.path, |_, id| {
                if first.is_none() && in_sample(id, t, self.sample) {
                    let i = self.keys.binary_search(&key64(id)).unwrap_or(0);
                    let selected = self.selection.as_ref().is_none_or(|(_, b)| bit(b, i));
                    if selected && !bit(&seen, i) {
                        first = Some(id.to_string());
                    }
                }
                Ok(())
            })?;
            let mut what = match self.sample {
                Some((f, s)) => format!("of the hash sample (f = {f}, seed {s})"),
                None => "(exact mode needs every distractor)".to_string(),
            };
            if let Some((p, _)) = &self.selection {
                what = format!("{what} selected by {}", p.display());
            }
            return Err(Error::file(
                &self.path,
                format!(
                    "{} listed distractor id(s) {what} have no row in the features_distractors_* shards (missing), e.g. {:?}",
                    self.required - found_required,
                    first.unwrap_or_default()
                ),
            ));
        }
        Ok(self.selection.is_some().then_some(rows_of))
    }
}

fn in_sample(id: &str, t: Option<u64>, sample: Option<(f64, u64)>) -> bool {
    match (t, sample) {
        (Some(t), Some((f, seed))) => f >= 1.0 || crate::sample::id_hash(id, seed) < t,
        _ => true,
    }
}

/// Scan the chosen query sets of an ILIAS dataset in one pass over the distractors (the sets
/// are query sets of one scan, [`scan_sets`]: the pool is read once for all of them). Checks
/// every feature file's ids first (see [`check_ids_exact`], [`DistractorList::check_features`]).
/// `cfg.pool_size` is set to N, the length of the distractor list. Returns one summary per set,
/// in the order of `sets`.
pub fn scan_ilias(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    sets: &[&str],
    cfg: &ScanConfig,
    progress: &dyn Progress,
) -> Result<Vec<Summary>> {
    scan_ilias_with(ds, feats, sets, cfg, |q, core, pool, cfg| {
        scan_sets(q, core, pool, cfg, progress)
    })
}

/// [`scan_ilias`] chunk by chunk with a partial folder, as `tailrank scan` does
/// ([`scan_sets_resumable`]): an interrupted scan resumes from its finished chunks. Returns the
/// summaries (identical to [`scan_ilias`]'s) and what was reused; the caller removes the
/// partial folder ([`crate::scan::resume::remove_partial`]) once they are written.
pub fn scan_ilias_resumable(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    sets: &[&str],
    cfg: &ScanConfig,
    opts: &ResumeOptions,
    progress: &dyn Progress,
) -> Result<(Vec<Summary>, ResumeReport)> {
    let mut report = ResumeReport::default();
    let summaries = scan_ilias_with(ds, feats, sets, cfg, |q, core, pool, cfg| {
        let (out, r) = scan_sets_resumable(q, core, pool, cfg, opts, progress)?;
        report = r;
        Ok(out)
    })?;
    Ok((summaries, report))
}

/// The ILIAS scan around `run`, which scans the query sets over the distractors.
fn scan_ilias_with(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    sets: &[&str],
    cfg: &ScanConfig,
    run: impl FnOnce(
        &[QuerySetInput],
        &dyn DescriptorSource,
        &[&dyn DescriptorSource],
        &ScanConfig,
    ) -> Result<PoolScan>,
) -> Result<Vec<Summary>> {
    if sets.is_empty() {
        return Err(Error::invalid("no query set chosen"));
    }
    // Positives: the core.
    let core = Hdf5Descriptors::open(&feats.positives)?;
    check_ids_exact(
        &feats.positives,
        &core.ids().to_vec()?,
        &ds.positives_file,
        &ds.positive_ids,
    )?;

    // Queries of every chosen set, each from its own file.
    let mut chosen: Vec<&QuerySet> = Vec::with_capacity(sets.len());
    let mut query_files: Vec<Hdf5Descriptors> = Vec::with_capacity(sets.len());
    for &name in sets {
        let set = ds.set(name).ok_or_else(|| {
            Error::file(
                &ds.dir,
                format!("query set {name:?} not found ({name}_query_ids.txt missing)"),
            )
        })?;
        let file = match name {
            "image" => feats.image_queries.as_ref(),
            "text" => feats.text_queries.as_ref(),
            _ => None,
        }
        .ok_or_else(|| {
            Error::file(
                feats.positives.parent().unwrap_or(Path::new(".")),
                format!("no features_{name}_queries.hdf5 in the feature folder"),
            )
        })?;
        let src = Hdf5Descriptors::open(file)?;
        check_ids_exact(
            file,
            &src.ids().to_vec()?,
            &ds.list_file(name),
            &set.query_ids,
        )?;
        if let Some(first) = query_files.first() {
            if src.dim() != first.dim() {
                return Err(Error::file(
                    file,
                    format!(
                        "dimension {} differs from the other query file's {}",
                        src.dim(),
                        first.dim()
                    ),
                ));
            }
        }
        chosen.push(set);
        query_files.push(src);
    }
    let query_sets: Vec<QuerySetInput> = chosen
        .iter()
        .zip(&query_files)
        .map(|(set, src)| QuerySetInput {
            set,
            queries: src as &dyn DescriptorSource,
        })
        .collect();

    // Distractors: check the ids against the list, then scan.
    let sample = (cfg.fraction < 1.0).then_some((cfg.fraction, cfg.seed));
    let mut list = DistractorList::read(&ds.distractors_file, sample)?;
    if let Some(sel) = &ds.selected_ids {
        list.select(&mut SelectedIds::read(sel)?)?;
    }
    let shards: Vec<Hdf5Descriptors> = feats
        .distractors
        .iter()
        .map(|p| Hdf5Descriptors::open(p))
        .collect::<Result<_>>()?;
    let all_refs: Vec<&dyn DescriptorSource> =
        shards.iter().map(|s| s as &dyn DescriptorSource).collect();
    // With --selected-ids the pool is the selected rows of each shard (N = their number).
    let subsets: Vec<SubsetSource> = match list.check_features(&all_refs)? {
        Some(rows) => all_refs
            .iter()
            .zip(rows)
            .filter(|(_, r)| !r.is_empty())
            .map(|(s, r)| SubsetSource::new(*s, r))
            .collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let shard_refs: Vec<&dyn DescriptorSource> = if ds.selected_ids.is_some() {
        subsets.iter().map(|s| s as &dyn DescriptorSource).collect()
    } else {
        all_refs
    };

    let mut cfg = cfg.clone();
    cfg.pool_size = Some(list.len);
    let out = run(&query_sets, &core, &shard_refs, &cfg)?;
    let mut result = Vec::with_capacity(sets.len());
    for ((&name, set), one) in sets.iter().zip(&chosen).zip(out.sets) {
        let mut s = one.summary;
        if cfg.fraction >= 1.0 && s.subset_sizes[0] != list.len {
            return Err(Error::file(
                &list.path,
                format!(
                    "exact scan saw {} distractors but the list holds N = {}",
                    s.subset_sizes[0], list.len
                ),
            ));
        }
        // Inputs: the set's queries, the core, the set's ground truth, the pool shards.
        let at = s
            .inputs
            .iter()
            .position(|r| r.role == POOL_ROLE)
            .unwrap_or(s.inputs.len());
        s.inputs
            .insert(at, ground_truth_record(ds.dir.display().to_string(), set));
        s.query_set = name.to_string();
        s.validate()?;
        result.push(s);
    }
    Ok(result)
}

/// [`scan_ilias`] without progress reporting.
pub fn scan_ilias_quiet(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    sets: &[&str],
    cfg: &ScanConfig,
) -> Result<Vec<Summary>> {
    scan_ilias(ds, feats, sets, cfg, &NoProgress)
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

/// One breakdown group. Values are fractions in [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupResult {
    /// `scale`, `clutter`, `category` or `subcategory`.
    pub kind: String,
    /// The official report's key (`0-18`, `product`, `product-food`, ...).
    pub group: String,
    /// Queries (scale, clutter) or instances (category, subcategory) averaged over.
    pub n: usize,
    /// Exact mAP@k, or the predicted mAP@k at N.
    pub map_at_k: f64,
    /// Prediction mode: the count baseline and evaluate-at-S for the same group.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub count_map_at_k: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub evaluate_at_s_map_at_k: Option<f64>,
}

/// Per-query AP (exact, or predicted with its baselines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryAp {
    pub query: String,
    pub ap_at_k: f64,
}

/// The ILIAS report of one query set.
#[derive(Debug, Clone, Serialize)]
pub struct IliasSetReport {
    /// `image` or `text`.
    pub query_set: String,
    /// `i2i` or `t2i`.
    pub task: String,
    pub n_queries: usize,
    /// Exact mAP@k, or the predicted mAP@k at N.
    pub map_at_k: f64,
    pub queries: Vec<QueryAp>,
    pub scale: Vec<GroupResult>,
    pub clutter: Vec<GroupResult>,
    pub categories: Vec<GroupResult>,
    pub subcategories: Vec<GroupResult>,
    /// Pairs (positive, non-relevant item) of one query with bitwise-equal scores, over all
    /// queries of the set (`Σ_j T^C_j + T^K_j`; in prediction mode, in the level-0 sample);
    /// None when the summary has no tie counts. Such pairs are ranked as the official
    /// evaluator ranks them (tie blocks, positives at the block's end).
    pub tied_pairs: Option<u64>,
    /// Prediction mode: the full prediction report (`report::prediction_json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<serde_json::Value>,
    #[serde(skip)]
    pub prediction_full: Option<Prediction>,
}

/// The ILIAS report (what `tailrank ilias --json` prints).
#[derive(Debug, Clone, Serialize)]
pub struct IliasReport {
    pub tool_version: String,
    pub model: String,
    /// `exact` or `prediction`.
    pub mode: String,
    pub k: usize,
    pub unit: String,
    /// N, the number of distractors (from `distractor_ids.txt.gz`).
    pub pool_size: u64,
    /// Distractors scanned (S_0).
    pub sample_size: u64,
    pub fraction: f64,
    pub seed: u64,
    /// `--selected-ids`: the file selecting the distractors (N counts the selected ones);
    /// None without a selection.
    pub selected_ids: Option<String>,
    pub sets: Vec<IliasSetReport>,
    /// With both query sets: i2i and t2i together, the mean AP over all their queries
    /// (`Σ_sets Σ_q AP_q / Σ_sets n_queries`), beside the per-task rows; None with one set.
    pub combined: Option<CombinedRow>,
    pub warnings: Vec<String>,
}

/// The combined row of [`IliasReport`]: every query of every set counted once.
#[derive(Debug, Clone, Serialize)]
pub struct CombinedRow {
    /// The tasks joined with `+` (`i2i+t2i`).
    pub task: String,
    pub n_queries: usize,
    /// Mean over all queries of the sets of their (exact or predicted) AP@k.
    pub map_at_k: f64,
}

impl CombinedRow {
    /// The combined row of `sets` (None unless there are at least two).
    pub fn of(sets: &[IliasSetReport]) -> Option<CombinedRow> {
        if sets.len() < 2 {
            return None;
        }
        let aps: Vec<f64> = sets
            .iter()
            .flat_map(|s| s.queries.iter().map(|q| q.ap_at_k))
            .collect();
        Some(CombinedRow {
            task: sets
                .iter()
                .map(|s| s.task.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            n_queries: aps.len(),
            map_at_k: mean(&aps),
        })
    }
}

/// Where per-query APs of a filtered positive set come from.
enum Source<'a> {
    Exact(&'a Summary),
    Predicted {
        h: &'a [QueryHardness],
        n: f64,
        map: MapKind,
    },
}

impl Source<'_> {
    fn n_queries(&self) -> usize {
        match self {
            Source::Exact(s) => s.queries.len(),
            Source::Predicted { h, .. } => h.len(),
        }
    }
    fn query_id(&self, qi: usize) -> &str {
        match self {
            Source::Exact(s) => &s.queries[qi].id,
            Source::Predicted { h, .. } => &h[qi].query_id,
        }
    }
    /// `[ap, count ap, at-S ap]` of query `qi` keeping the positives for which `keep` holds;
    /// None when none is kept.
    fn ap(&self, qi: usize, k: usize, keep: &dyn Fn(&str) -> bool) -> Option<[f64; 3]> {
        match self {
            Source::Exact(s) => {
                let pos: Vec<PositiveCounts> = s.queries[qi]
                    .positives
                    .iter()
                    .filter(|p| keep(&p.id))
                    .map(|p| PositiveCounts {
                        score: p.score,
                        core_above: p.core_above,
                        pool_above: p.pool_above[0],
                        ties: p.core_ties + p.pool_tie(0),
                    })
                    .collect();
                if pos.is_empty() {
                    return None;
                }
                let ap = evaluate_counts(&s.queries[qi].id, &pos, k).ap_at_k;
                Some([ap, f64::NAN, f64::NAN])
            }
            Source::Predicted { h, n, map } => {
                let mut q = h[qi].clone();
                q.positives.retain(|p| keep(&p.id));
                if q.positives.is_empty() {
                    return None;
                }
                let ap = maps::ap_at_k(&q, *n, k, *map);
                let qs = [q];
                let count = maps::ap_at_k(&predict::count_hardness(&qs)[0], *n, k, *map);
                let at_s = predict::baselines::per_query_at_sample(&qs, k)[0];
                Some([ap, count, at_s])
            }
        }
    }
}

fn instance(id: &str) -> &str {
    id.split('/').next().unwrap_or("")
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn group_from(kind: &str, group: String, vals: &[[f64; 3]], predicted: bool) -> GroupResult {
    let col = |c: usize| mean(&vals.iter().map(|v| v[c]).collect::<Vec<_>>());
    GroupResult {
        kind: kind.into(),
        group,
        n: vals.len(),
        map_at_k: col(0),
        count_map_at_k: predicted.then(|| col(1)),
        evaluate_at_s_map_at_k: predicted.then(|| col(2)),
    }
}

/// Breakdowns of one set: scale, clutter (when the positives carry them), category and
/// subcategory (when a taxonomy is given). `Err` when a query's instance is not in the
/// taxonomy.
fn breakdowns(
    ds: &IliasDataset,
    src: &Source,
    k: usize,
    predicted: bool,
) -> Result<[Vec<GroupResult>; 4]> {
    let nq = src.n_queries();
    let mut scale = Vec::new();
    let mut clutter = Vec::new();
    if let Some(info) = &ds.positive_info {
        for (kind, groups, out) in [
            ("scale", &SCALE_GROUPS, &mut scale),
            ("clutter", &CLUTTER_GROUPS, &mut clutter),
        ] {
            for &(t1, t2) in groups.iter() {
                let keep = |id: &str| {
                    info.get(id).is_some_and(|i| {
                        let v = if kind == "scale" { i.scale } else { i.clutter };
                        v >= t1 && v < t2
                    })
                };
                let vals: Vec<[f64; 3]> = (0..nq).filter_map(|qi| src.ap(qi, k, &keep)).collect();
                if !vals.is_empty() {
                    out.push(group_from(kind, group_key(t1, t2), &vals, predicted));
                }
            }
        }
    }
    let mut categories = Vec::new();
    let mut subcategories = Vec::new();
    if let Some(tax) = &ds.taxonomy {
        // instance → its queries' APs.
        let mut per_inst: BTreeMap<&str, Vec<[f64; 3]>> = BTreeMap::new();
        for qi in 0..nq {
            if let Some(v) = src.ap(qi, k, &|_| true) {
                per_inst
                    .entry(instance(src.query_id(qi)))
                    .or_default()
                    .push(v);
            }
        }
        let mut cat: BTreeMap<String, Vec<[f64; 3]>> = BTreeMap::new();
        let mut sub: BTreeMap<String, Vec<[f64; 3]>> = BTreeMap::new();
        for (inst, v) in &per_inst {
            let (c, sc) = tax.instance.get(*inst).ok_or_else(|| {
                Error::file(
                    ds.taxonomy_file.as_deref().unwrap_or(&ds.dir),
                    format!("instance {inst:?} (of the query set) is not in the taxonomy"),
                )
            })?;
            let m = [0, 1, 2].map(|c| mean(&v.iter().map(|x| x[c]).collect::<Vec<_>>()));
            cat.entry(c.clone()).or_default().push(m);
            sub.entry(format!("{c}-{sc}")).or_default().push(m);
        }
        for (c, v) in cat {
            categories.push(group_from("category", c, &v, predicted));
        }
        for (c, v) in sub {
            subcategories.push(group_from("subcategory", c, &v, predicted));
        }
    }
    Ok([scale, clutter, categories, subcategories])
}

fn task_of(set: &str) -> String {
    match set {
        "image" => "i2i".into(),
        "text" => "t2i".into(),
        other => other.into(),
    }
}

/// The exact ILIAS report of a whole-pool scan summary of one set.
pub fn exact_set_report(ds: &IliasDataset, s: &Summary, k: usize) -> Result<IliasSetReport> {
    if !s.is_exact() {
        return Err(Error::invalid(format!(
            "summary of {:?} is a sample (f = {}): use the prediction report",
            s.query_set, s.fraction
        )));
    }
    let src = Source::Exact(s);
    let queries: Vec<QueryAp> = (0..s.queries.len())
        .map(|qi| QueryAp {
            query: s.queries[qi].id.clone(),
            ap_at_k: src.ap(qi, k, &|_| true).map_or(0.0, |v| v[0]),
        })
        .collect();
    let [scale, clutter, categories, subcategories] = breakdowns(ds, &src, k, false)?;
    Ok(IliasSetReport {
        query_set: s.query_set.clone(),
        task: task_of(&s.query_set),
        n_queries: queries.len(),
        map_at_k: mean(&queries.iter().map(|q| q.ap_at_k).collect::<Vec<_>>()),
        queries,
        scale,
        clutter,
        categories,
        subcategories,
        tied_pairs: s.ties_known.then(|| s.tied_pairs(0)),
        prediction: None,
        prediction_full: None,
    })
}

/// The predicted ILIAS report of a sample summary of one set (N from the summary or `opts`).
pub fn predicted_set_report(
    ds: &IliasDataset,
    s: &Summary,
    opts: &PredictOptions,
) -> Result<IliasSetReport> {
    let p = predict::predict(s, opts)?;
    let src = Source::Predicted {
        h: &p.hardness,
        n: p.pool_size as f64,
        map: opts.map,
    };
    let [scale, clutter, categories, subcategories] = breakdowns(ds, &src, opts.k, true)?;
    Ok(IliasSetReport {
        query_set: s.query_set.clone(),
        task: task_of(&s.query_set),
        n_queries: p.queries.len(),
        map_at_k: p.estimate,
        queries: p
            .queries
            .iter()
            .map(|q| QueryAp {
                query: q.query_id.clone(),
                ap_at_k: q.ap_at_k,
            })
            .collect(),
        scale,
        clutter,
        categories,
        subcategories,
        tied_pairs: s.ties_known.then(|| s.tied_pairs(0)),
        prediction: Some(crate::report::prediction_json(&p)),
        prediction_full: Some(p),
    })
}

/// Options of [`evaluate_ilias`].
#[derive(Debug, Clone)]
pub struct IliasOptions {
    /// Query sets to evaluate (`image`, `text`).
    pub sets: Vec<String>,
    /// Scan options (fraction, seed, M, threads, model, ...); `pool_size` is set from the list.
    pub scan: ScanConfig,
    /// Prediction options (k is used in exact mode too).
    pub predict: PredictOptions,
}

/// What the dataset folder lacks for a full report: positives without scale/clutter columns
/// (no scale/clutter rows) and a missing taxonomy (no category rows), naming the places
/// looked in. Printed at the top of the report (and by the CLI before the scan).
pub fn dataset_warnings(ds: &IliasDataset) -> Vec<String> {
    let mut warnings = Vec::new();
    if ds.positive_info.is_none() {
        warnings.push(format!(
            "{} has no scale/clutter columns: no scale or clutter breakdown",
            ds.positives_file.display()
        ));
    }
    if ds.taxonomy.is_none() {
        let looked: Vec<String> = TAXONOMY_DIRS
            .iter()
            .map(|d| ds.dir.join(d).join(TAXONOMY).display().to_string())
            .collect();
        warnings.push(format!(
            "no taxonomy.json found (looked for {}; it is misc/taxonomy.json of the ILIAS code \
             repository, not part of the download: give --taxonomy FILE): no (sub)category \
             breakdown",
            looked.join(", ")
        ));
    }
    warnings
}

/// Scan and report: exact when `opts.scan.fraction == 1`, predicted otherwise.
pub fn evaluate_ilias(
    ds: &IliasDataset,
    feats: &FeatureFiles,
    opts: &IliasOptions,
    progress: &dyn Progress,
) -> Result<(IliasReport, Vec<Summary>)> {
    let names: Vec<&str> = opts.sets.iter().map(String::as_str).collect();
    let summaries = scan_ilias(ds, feats, &names, &opts.scan, progress)?;
    report_ilias(ds, opts, summaries)
}

/// The report of the summaries of [`scan_ilias`] or [`scan_ilias_resumable`] (one per set of
/// `opts.sets`): exact when `opts.scan.fraction == 1`, predicted otherwise. Returns the
/// summaries with it.
pub fn report_ilias(
    ds: &IliasDataset,
    opts: &IliasOptions,
    summaries: Vec<Summary>,
) -> Result<(IliasReport, Vec<Summary>)> {
    let exact = opts.scan.fraction >= 1.0;
    let mut sets = Vec::new();
    for s in &summaries {
        sets.push(if exact {
            exact_set_report(ds, s, opts.predict.k)?
        } else {
            predicted_set_report(ds, s, &opts.predict)?
        });
    }
    let warnings = dataset_warnings(ds);
    let first = &summaries[0];
    Ok((
        IliasReport {
            tool_version: crate::TOOL_VERSION.to_string(),
            model: opts.scan.model.clone(),
            mode: if exact { "exact" } else { "prediction" }.into(),
            k: opts.predict.k,
            unit: "fraction".into(),
            pool_size: first.pool_size.unwrap_or(first.subset_sizes[0]),
            sample_size: first.subset_sizes[0],
            fraction: first.fraction,
            seed: first.seed,
            selected_ids: ds.selected_ids.as_ref().map(|p| p.display().to_string()),
            combined: CombinedRow::of(&sets),
            sets,
            warnings,
        },
        summaries,
    ))
}

fn k_label(k: usize) -> String {
    if k >= 1000 && k % 1000 == 0 {
        format!("{}k", k / 1000)
    } else {
        k.to_string()
    }
}

/// The human report: mAP@k per task in percent (two decimals), then the breakdowns; in
/// prediction mode each set's prediction table (interval, baselines, diagnostics) too.
pub fn table(r: &IliasReport) -> String {
    use crate::report::{pct, thousands};
    use std::fmt::Write;
    let kl = k_label(r.k);
    let mut t = String::new();
    // Warnings first (e.g. a missing taxonomy: no category rows below).
    for w in &r.warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    let _ = writeln!(
        t,
        "ILIAS, model {:?}: {} mAP@{kl}, N = {} distractors{}{}",
        r.model,
        r.mode,
        thousands(r.pool_size),
        match &r.selected_ids {
            Some(f) => format!(" selected by {f}"),
            None => String::new(),
        },
        if r.mode == "exact" {
            " (all scanned)".to_string()
        } else {
            format!(
                " predicted from S = {} sampled (f = {}, seed {})",
                thousands(r.sample_size),
                r.fraction,
                r.seed
            )
        }
    );
    let predicted = r.sets.iter().any(|s| s.prediction_full.is_some());
    if predicted {
        let _ = writeln!(
            t,
            "{:<6} {:>8} {:>12}  {:<26} {:<26} {:>9} {:>9}  verdict",
            "task",
            "queries",
            format!("mAP@{kl} (%)"),
            "interval (other query sets)",
            "interval (these queries)",
            "count",
            "at-S"
        );
    } else {
        let _ = writeln!(
            t,
            "{:<6} {:>8} {:>12}",
            "task",
            "queries",
            format!("mAP@{kl} (%)")
        );
    }
    for s in &r.sets {
        match &s.prediction_full {
            Some(p) => {
                let conf = 100.0 * p.options.confidence;
                let (iv, what) = match &p.total {
                    Some(i) => (i, "total"),
                    None => (&p.percentile, "pct"),
                };
                let realized = match &p.realized {
                    Some(r) => format!(
                        "{conf:.0}% [{}, {}]",
                        pct(r.interval.lo),
                        pct(r.interval.hi)
                    ),
                    None => "n/a".into(),
                };
                let _ = writeln!(
                    t,
                    "{:<6} {:>8} {:>12}  {:<26} {:<26} {:>9} {:>9}  {}",
                    s.task,
                    s.n_queries,
                    pct(s.map_at_k),
                    format!("{conf:.0}% {what} [{}, {}]", pct(iv.lo), pct(iv.hi)),
                    realized,
                    pct(p.baselines.count),
                    pct(p.baselines.evaluate_at_s),
                    p.trust.verdict.as_str()
                );
            }
            None => {
                let _ = writeln!(
                    t,
                    "{:<6} {:>8} {:>12}",
                    s.task,
                    s.n_queries,
                    pct(s.map_at_k)
                );
            }
        }
    }
    if let Some(c) = &r.combined {
        // The task name is one character wider than the column: the count keeps its place.
        let _ = writeln!(t, "{:<7}{:>8} {:>12}", c.task, c.n_queries, pct(c.map_at_k));
    }
    for s in &r.sets {
        match s.tied_pairs {
            Some(0) => {}
            Some(n) => {
                let _ = writeln!(
                    t,
                    "{}: {} tied positive/non-relevant pair{} (equal scores: official tie blocks, \
                     positives at the block's end)",
                    s.task,
                    thousands(n),
                    if n == 1 { "" } else { "s" }
                );
            }
            None => {
                let _ = writeln!(t, "{}: ties unknown (summary without tie counts)", s.task);
            }
        }
    }
    for s in &r.sets {
        if let Some(p) = &s.prediction_full {
            let _ = writeln!(t, "\n{} prediction:", s.task);
            t.push_str(&crate::report::prediction_table(p));
        }
        let groups: Vec<&GroupResult> = s
            .scale
            .iter()
            .chain(&s.clutter)
            .chain(&s.categories)
            .chain(&s.subcategories)
            .collect();
        if groups.is_empty() {
            continue;
        }
        let pred = s.prediction_full.is_some();
        let _ = writeln!(t, "\n{} breakdown, mAP@{kl} (%):", s.task);
        if pred {
            let _ = writeln!(
                t,
                "  {:<12} {:<40} {:>5} {:>9} {:>9} {:>9}",
                "kind", "group", "n", "estimate", "count", "at-S"
            );
        } else {
            let _ = writeln!(
                t,
                "  {:<12} {:<40} {:>5} {:>9}",
                "kind", "group", "n", "mAP"
            );
        }
        for g in groups {
            if pred {
                let _ = writeln!(
                    t,
                    "  {:<12} {:<40} {:>5} {:>9} {:>9} {:>9}",
                    g.kind,
                    g.group,
                    g.n,
                    pct(g.map_at_k),
                    pct(g.count_map_at_k.unwrap_or(f64::NAN)),
                    pct(g.evaluate_at_s_map_at_k.unwrap_or(f64::NAN))
                );
            } else {
                let _ = writeln!(
                    t,
                    "  {:<12} {:<40} {:>5} {:>9}",
                    g.kind,
                    g.group,
                    g.n,
                    pct(g.map_at_k)
                );
            }
        }
    }
    t
}
