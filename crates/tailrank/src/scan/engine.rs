//! Blocked GEMM scan fused with per-query top-M and per-positive counts.
//! TODO(scan helper): implement.
