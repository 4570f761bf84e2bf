//! Ground truth: the ILIAS layout (a folder with `image_query_ids.txt`, `text_query_ids.txt`,
//! `positive_ids.txt`; an id's first path component names its instance) or a JSON object
//! `{query_id: [positive_id, ...]}`.
//! TODO(metric helper): implement.

use crate::error::{Error, Result};
use std::path::Path;

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

/// Load every query set of a ground truth (a folder in ILIAS layout, or a `.json` file).
pub fn load_ground_truth(path: &Path) -> Result<Vec<QuerySet>> {
    Err(Error::file(path, "ground truth reader not implemented yet"))
}
