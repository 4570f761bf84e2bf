//! Per-query top-M of f32 scores: a reservoir with a rising threshold (faiss-style for large M).
//! TODO(scan helper): implement.
