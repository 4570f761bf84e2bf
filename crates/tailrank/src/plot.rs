//! Metric-vs-N curves as SVG/PNG with a bundled font.
//! TODO(predict helper): implement.
