//! Simulators with known truth (SPEC 10): summary-level (ILIAS-like presets, exact order
//! statistics, Binomial increments to N) and vector-level (descriptor files small enough to scan).
//! TODO(simulate helper): implement.
