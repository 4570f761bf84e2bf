//! The ILIAS layout: finding the id lists, positives and taxonomy of a dataset folder
//! (`IliasDataset`) and the feature files of a feature folder (`FeatureFiles`); see the
//! layout section of the [module doc](super).

use crate::error::{Error, IoContext, Result};
use crate::formats::gt::{ground_truth_notes, ilias_file, load_ground_truth, IdTable, QuerySet};
use crate::formats::gt::{IMAGE_QUERIES, POSITIVES, TEXT_QUERIES};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const DISTRACTORS: &str = "distractor_ids.txt.gz";
pub(super) const TAXONOMY: &str = "taxonomy.json";
/// Where `taxonomy.json` is looked for, relative to the dataset folder, in this order (the
/// ILIAS download has no taxonomy: it is `misc/taxonomy.json` of the ILIAS code repository).
pub(super) const TAXONOMY_DIRS: [&str; 3] = ["", "image_ids", "misc"];

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
    /// Header lines skipped in the id files ([`ground_truth_notes`]), reported as warnings.
    pub header_notes: Vec<String>,
}

impl IliasDataset {
    /// The query sets chosen by `choice`: `both` for every set of the dataset (in its order),
    /// else the one named.
    pub fn chosen_sets(&self, choice: &str) -> Vec<String> {
        match choice {
            "both" => self.sets.iter().map(|s| s.name.clone()).collect(),
            one => vec![one.to_string()],
        }
    }

    /// Discover and load a dataset folder; `taxonomy` overrides the discovered `taxonomy.json`.
    pub fn open(dir: &Path, taxonomy: Option<&Path>) -> Result<Self> {
        if !dir.is_dir() {
            return Err(Error::missing(dir, "ILIAS dataset folder not found"));
        }
        let positives_file = ilias_file(dir, POSITIVES)?.ok_or_else(|| {
            Error::input(
                dir,
                format!("no image_ids/{POSITIVES}: not an ILIAS dataset folder"),
            )
        })?;
        let distractors_file = ilias_file(dir, DISTRACTORS)?.ok_or_else(|| {
            Error::input(
                dir,
                format!("no image_ids/{DISTRACTORS} (the distractor id list gives N and is checked against the features)"),
            )
        })?;
        let taxonomy_file = match taxonomy {
            Some(t) => Some(t.to_path_buf()),
            None => find_in(dir, &TAXONOMY_DIRS, TAXONOMY),
        };
        let sets = load_ground_truth(dir)?;
        let header_notes = ground_truth_notes(dir)?;
        let (positive_ids, positive_info) = read_positive_info(&positives_file)?;
        check_queries_are_not_positives(&positives_file, &sets, &positive_ids)?;
        let taxonomy = match &taxonomy_file {
            Some(t) => Some(read_taxonomy(t)?),
            None => None,
        };
        Ok(IliasDataset {
            dir: dir.to_path_buf(),
            image_queries_file: ilias_file(dir, IMAGE_QUERIES)?,
            text_queries_file: ilias_file(dir, TEXT_QUERIES)?,
            positives_file,
            distractors_file,
            taxonomy_file,
            sets,
            positive_ids,
            positive_info,
            taxonomy,
            selected_ids: None,
            header_notes,
        })
    }

    /// The query set named `name` (`image` or `text`).
    pub fn set(&self, name: &str) -> Option<&QuerySet> {
        self.sets.iter().find(|s| s.name == name)
    }

    pub(super) fn list_file(&self, set: &str) -> PathBuf {
        match set {
            "image" => self.image_queries_file.clone(),
            _ => self.text_queries_file.clone(),
        }
        .unwrap_or_else(|| self.dir.clone())
    }
}

/// No image query id of `sets` is listed among the positives (`positives_file`): ILIAS's image
/// queries and positives are different images, and a query that is its own positive would rank
/// itself first.
fn check_queries_are_not_positives(
    positives_file: &Path,
    sets: &[QuerySet],
    positive_ids: &[String],
) -> Result<()> {
    let positives: std::collections::HashSet<&str> =
        positive_ids.iter().map(String::as_str).collect();
    // Text queries are captions, no image: only the image queries can be listed as positives.
    for set in sets.iter().filter(|s| s.name == "image") {
        if let Some(q) = set
            .query_ids
            .iter()
            .find(|q| positives.contains(q.as_str()))
        {
            return Err(Error::input(
                positives_file,
                format!(
                    "lists {q:?}, a query of the {} set: queries and positives are different \
                     images (a query that is its own positive ranks itself first)",
                    set.name
                ),
            ));
        }
    }
    Ok(())
}

/// Scale and clutter per positive id.
pub type PositiveInfoMap = HashMap<String, PositiveInfo>;

/// Read `positive_ids.txt`: CSV `id,scale,clutter` ([`IdTable`]: the rules of every ILIAS id
/// file, a header only by its column name). Returns the ids in file order and, when the file has
/// the two attribute columns, scale and clutter per id.
pub fn read_positive_info(path: &Path) -> Result<(Vec<String>, Option<PositiveInfoMap>)> {
    let rows = IdTable::read(path)?.rows;
    if rows.is_empty() {
        return Err(Error::input(path, "no positive ids"));
    }
    let ncols = rows[0].1.len();
    let mut ids = Vec::with_capacity(rows.len());
    let mut info = HashMap::with_capacity(rows.len());
    for (line, f) in rows {
        if ncols >= 3 {
            // Scale (a share of the image) and clutter (a count) are never negative: a
            // negative value would fall in no group of the breakdown.
            let num = |s: &str, what: &str| -> Result<f64> {
                s.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        Error::input(
                            path,
                            format!("line {line}: {what} {s:?} is not a finite number ≥ 0"),
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
    let bytes = crate::formats::read_input_file(path, "a taxonomy JSON")?;
    let v: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::input(path, format!("not valid JSON: {e}")))?;
    let bad = |msg: String| Error::input(path, msg);
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
    if dir.exists() && !dir.is_dir() {
        return Err(Error::input(
            dir,
            "is a file, not a folder (--features: the folder of features_*.hdf5)",
        ));
    }
    if !dir.is_dir() {
        return Err(Error::missing(
            dir,
            "ILIAS features folder not found (--features: the folder of features_*.hdf5)",
        ));
    }
    let entries = std::fs::read_dir(dir).at(dir)?;
    let mut names: Vec<PathBuf> = Vec::new();
    for e in entries {
        names.push(e.at(dir)?.path());
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
        // A feature file's name on something that is no readable file (a dangling link, a
        // folder) is an error, never a shard skipped.
        let used = matches!(
            stem.as_str(),
            "features_image_queries"
                | "features_text_queries"
                | "features_positives"
                | "features_positive"
        ) || stem.starts_with("features_distractors");
        if used && !p.is_file() {
            return Err(if p.exists() {
                Error::input(&p, "is not a file (a feature file's name on a folder?)")
            } else {
                Error::missing(&p, "is a link to nothing (its target is gone)")
            });
        }
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
            return Err(Error::input(
                dir,
                "no features_positives.hdf5 or features_positive.hdf5 (the positives' \
                 descriptors) in the feature folder",
            ))
        }
        1 => pos.remove(0),
        _ => {
            let names: Vec<String> = pos.iter().map(|p| p.display().to_string()).collect();
            return Err(Error::input(
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
        return Err(Error::input(
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
