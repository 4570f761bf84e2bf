//! Prediction of the full-pool metric from a sample summary (SPEC 7–9): the estimate, the
//! baselines beside it, query bootstrap and sample-noise intervals, the sufficient-budget and
//! drift diagnostics, and the tail report.
//! TODO(predict helper): implement.
