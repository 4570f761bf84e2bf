//! The Python exception of the package and the conversion of library errors into it.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

create_exception!(
    _native,
    TailrankError,
    PyValueError,
    "An error reported by tailrank (bad input file, inconsistent summaries, bad option)."
);

pub fn err(e: impl std::fmt::Display) -> PyErr {
    TailrankError::new_err(e.to_string())
}
