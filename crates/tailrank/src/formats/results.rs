//! Results to evaluate: the ILIAS JSON `{query_id: {db_id: score}}`.
//! TODO(metric helper): implement.
