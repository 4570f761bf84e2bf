//! Human tables (mAP in percent, two decimals) and machine-readable JSON reports (fractions in
//! [0, 1], unit in the field name).
//! TODO(predict helper): implement.
