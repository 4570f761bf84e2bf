//! ILIAS end to end from its own files: layout discovery, id checks of the feature files
//! against the id lists, one scan of both query sets, and the ILIAS report with the official
//! breakdowns (scale, clutter, category, subcategory), exact or predicted. See `docs/reference/ilias.md`.
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
//!
//! ## Modules
//!
//! `layout` finds the files (dataset folder, taxonomy, feature folder); `ids` checks the
//! feature files' ids against the lists (the distractor list as 64-bit keys); `scan` runs the
//! one pass over both query sets, resumable or not; `report` turns summaries into the
//! report with its breakdowns; `request` checks the options and opens the inputs. Everything public is re-exported here (`tailrank::ilias::…`).

mod ids;
mod layout;
mod report;
mod request;
mod scan;

pub use ids::*;
pub use layout::*;
pub use report::*;
pub use request::*;
pub use scan::*;
