//! The Python exceptions of the package, one per `tailrank::ErrorKind` (`docs/reference/errors.md`), and
//! the conversion of library errors into them. `TailrankError` derives from `ValueError`, so
//! code written before the kinds (`except ValueError`) still catches every tailrank error;
//! `TailrankIOError` also derives from `OSError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::PyErr;
use tailrank::ErrorKind;

create_exception!(
    _native,
    TailrankError,
    PyValueError,
    "An error reported by tailrank; its subclass says the kind (docs/reference/errors.md)."
);
create_exception!(
    _native,
    OptionError,
    TailrankError,
    "An option out of its range, unknown, missing or excluded by another option."
);
create_exception!(
    _native,
    InputError,
    TailrankError,
    "An input (file or array) is malformed, corrupt, or holds nothing to work from."
);
create_exception!(
    _native,
    MismatchError,
    TailrankError,
    "Inputs that are each well formed do not fit together, or do not fit the options."
);
create_exception!(
    _native,
    UnsupportedError,
    TailrankError,
    "An input of a format, version, dtype or layout tailrank does not read."
);
create_exception!(
    _native,
    OutputError,
    TailrankError,
    "An output path is refused (an input, a folder tailrank did not write, in use)."
);
create_exception!(
    _native,
    InternalError,
    TailrankError,
    "A bug in tailrank (a broken internal invariant); please report it."
);

/// `TailrankIOError(TailrankError, OSError)`: made at import (`create_exception!` takes one
/// base), kept here to raise it.
static IO_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

/// Add every exception class to the module `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TailrankError", py.get_type::<TailrankError>())?;
    m.add("OptionError", py.get_type::<OptionError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("MismatchError", py.get_type::<MismatchError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("OutputError", py.get_type::<OutputError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    let bases = PyTuple::new(
        py,
        [py.get_type::<TailrankError>(), py.get_type::<PyOSError>()],
    )?;
    let attrs = PyDict::new(py);
    attrs.set_item(
        "__doc__",
        "The operating system refused (a missing file, a permission, a full disk).",
    )?;
    attrs.set_item("__module__", "_native")?;
    let io = py
        .get_type::<PyType>()
        .call1(("TailrankIOError", bases, attrs))?
        .downcast_into::<PyType>()?;
    m.add("TailrankIOError", &io)?;
    let _ = IO_ERROR.set(py, io.unbind());
    // Each kind's class carries the CLI's exit status of that kind (`python -m tailrank.ray`).
    for (class, kind) in [
        ("OptionError", ErrorKind::Option),
        ("InputError", ErrorKind::Input),
        ("MismatchError", ErrorKind::Mismatch),
        ("UnsupportedError", ErrorKind::Unsupported),
        ("OutputError", ErrorKind::Output),
        ("TailrankIOError", ErrorKind::Io),
        ("InternalError", ErrorKind::Internal),
    ] {
        m.getattr(class)?.setattr("exit_code", kind.exit_code())?;
    }
    Ok(())
}

/// The exception of kind `kind` with message `msg`.
pub fn kind_err(kind: ErrorKind, msg: impl Into<String>) -> PyErr {
    let msg = msg.into();
    match kind {
        ErrorKind::Option => OptionError::new_err(msg),
        ErrorKind::Input => InputError::new_err(msg),
        ErrorKind::Mismatch => MismatchError::new_err(msg),
        ErrorKind::Unsupported => UnsupportedError::new_err(msg),
        ErrorKind::Output => OutputError::new_err(msg),
        ErrorKind::Internal => InternalError::new_err(msg),
        ErrorKind::Io => Python::with_gil(|py| match IO_ERROR.get(py) {
            Some(t) => PyErr::from_type(t.bind(py).clone(), msg),
            None => TailrankError::new_err(msg),
        }),
    }
}

/// A library error as the exception of its kind (the message is the error's text).
pub fn err(e: tailrank::Error) -> PyErr {
    kind_err(e.kind(), e.to_string())
}

/// An invalid option or argument ([`OptionError`]).
pub fn option_err(msg: impl Into<String>) -> PyErr {
    kind_err(ErrorKind::Option, msg)
}

/// A malformed input array or value ([`InputError`]).
pub fn input_err(msg: impl Into<String>) -> PyErr {
    kind_err(ErrorKind::Input, msg)
}

/// An input of a dtype or layout tailrank does not read ([`UnsupportedError`]).
pub fn unsupported_err(msg: impl Into<String>) -> PyErr {
    kind_err(ErrorKind::Unsupported, msg)
}

/// A value tailrank failed to serialise, or another broken invariant ([`InternalError`]).
pub fn internal_err(e: impl std::fmt::Display) -> PyErr {
    kind_err(ErrorKind::Internal, e.to_string())
}
