//! Vector-level simulator: a clustered synthetic benchmark written as descriptor files.
