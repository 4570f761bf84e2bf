//! One error type for the library. Every variant that concerns a file names it, so that a user
//! with a hundred shards knows which one is wrong and what is wrong with it; every error has an
//! [`ErrorKind`] that says what to fix (`docs/reference/errors.md`, "Kinds of error").

use std::path::{Path, PathBuf};

/// What kind of problem an [`Error`] is, for a caller that reacts differently to each (the CLI
/// maps it to an exit code, Python to an exception class; `docs/reference/errors.md`). The message says
/// what is wrong; the kind says whose move it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// An input file is malformed, corrupt or breaks a rule of its format; the message names
    /// the file and the row, line or id where one is known.
    Input,
    /// Inputs that are each well formed do not fit together (different models, seeds, query
    /// sets, pool rows, shards that overlap, an id of one file missing from another).
    Mismatch,
    /// A well-formed input of a format, version, dtype or layout that tailrank does not read.
    Unsupported,
    /// An output path tailrank refuses to write (it would overwrite an input or a folder it
    /// did not write, is in use, or cannot hold the output).
    Output,
    /// An option (or a combination of options) out of its range or meaningless.
    Option,
    /// The operating system refused an operation (a missing file, a permission, a full disk).
    Io,
    /// A bug in tailrank (a broken internal invariant, a value it cannot serialise): please
    /// report it.
    Internal,
}

impl ErrorKind {
    /// Every kind, in the order of their exit codes.
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Option,
        ErrorKind::Input,
        ErrorKind::Mismatch,
        ErrorKind::Unsupported,
        ErrorKind::Output,
        ErrorKind::Io,
        ErrorKind::Internal,
    ];

    /// The name used in `docs/reference/errors.md` and by the Python exception classes.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Input => "input",
            ErrorKind::Mismatch => "mismatch",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Output => "output",
            ErrorKind::Option => "option",
            ErrorKind::Io => "io",
            ErrorKind::Internal => "internal",
        }
    }

    /// The kind named `name` (the inverse of [`ErrorKind::name`]).
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The `tailrank` command's exit code for an error of this kind: 2 for an option (as for
    /// clap's own usage errors), then 3 input, 4 mismatch, 5 unsupported, 6 output, 7 I/O,
    /// 8 internal.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Option => 2,
            ErrorKind::Input => 3,
            ErrorKind::Mismatch => 4,
            ErrorKind::Unsupported => 5,
            ErrorKind::Output => 6,
            ErrorKind::Io => 7,
            ErrorKind::Internal => 8,
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors raised by tailrank. Never a panic on bad input: every problem with a file or an
/// argument ends up here with a message a user can act on, and an [`ErrorKind`]
/// ([`Error::kind`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operating system refused an operation on `path` (kind [`ErrorKind::Io`]).
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A problem with `path` (`msg` says what; it names the row or the id where one is known).
    #[error("{}: {msg}", path.display())]
    File {
        kind: ErrorKind,
        path: PathBuf,
        msg: String,
    },
    /// A problem no single file is to blame for (options, or inputs that do not fit together).
    #[error("{msg}")]
    Message { kind: ErrorKind, msg: String },
}

/// One line for an error and its causes (`std::error::Error::source`, outermost first), joined
/// by `: `, skipping a cause whose text the previous message already contains:
/// [`Error::Io`] prints its OS error itself and also reports it as its source, which would
/// otherwise show twice.
pub fn error_line<'a>(
    chain: impl IntoIterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> String {
    let mut out = String::new();
    let mut prev = String::new();
    for cause in chain {
        let text = cause.to_string();
        if !prev.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        prev = text;
    }
    out
}

/// The kind of an error and its causes (outermost first): that of the first library [`Error`]
/// in the chain; else I/O for an operating-system error; else an option error (a front end's
/// own check of its arguments).
pub fn kind_of_chain<'a, I>(chain: I) -> ErrorKind
where
    I: IntoIterator<Item = &'a (dyn std::error::Error + 'static)> + Clone,
{
    let library = chain
        .clone()
        .into_iter()
        .find_map(|c| c.downcast_ref::<Error>());
    match library {
        Some(e) => e.kind(),
        None if chain.into_iter().any(|c| c.is::<std::io::Error>()) => ErrorKind::Io,
        None => ErrorKind::Option,
    }
}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An I/O error on `path`; a folder where a file was expected says so in words (still
    /// [`ErrorKind::Io`]).
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::IsADirectory {
            return Error::at(
                ErrorKind::Io,
                path,
                format!("is a folder, where a file was expected ({source})"),
            );
        }
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// A problem of kind `kind` with `path`.
    pub fn at(kind: ErrorKind, path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::File {
            kind,
            path: path.as_ref().to_path_buf(),
            msg: msg.into(),
        }
    }

    /// A problem of kind `kind` that no single file is to blame for.
    pub fn new(kind: ErrorKind, msg: impl Into<String>) -> Self {
        Error::Message {
            kind,
            msg: msg.into(),
        }
    }

    /// Malformed or corrupt content in the input `path` ([`ErrorKind::Input`]).
    pub fn input(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::at(ErrorKind::Input, path, msg)
    }

    /// `path` is of a format, version or dtype tailrank does not read
    /// ([`ErrorKind::Unsupported`]).
    pub fn unsupported(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::at(ErrorKind::Unsupported, path, msg)
    }

    /// The output `path` is refused ([`ErrorKind::Output`]).
    pub fn output(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::at(ErrorKind::Output, path, msg)
    }

    /// Inputs that do not fit together ([`ErrorKind::Mismatch`]).
    pub fn mismatch(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::Mismatch, msg)
    }

    /// An option out of its range, or options that exclude each other ([`ErrorKind::Option`]).
    pub fn option(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::Option, msg)
    }

    /// Malformed content of an input whose file is not known here ([`ErrorKind::Input`]).
    pub fn input_msg(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::Input, msg)
    }

    /// An input of a format or version tailrank does not read, its file not known here
    /// ([`ErrorKind::Unsupported`]).
    pub fn unsupported_msg(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::Unsupported, msg)
    }

    /// `path` does not fit the other inputs or the options ([`ErrorKind::Mismatch`]).
    pub fn mismatch_at(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::at(ErrorKind::Mismatch, path, msg)
    }

    /// `path` does not exist ([`ErrorKind::Io`], as the operating system's "not found").
    pub fn missing(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::at(ErrorKind::Io, path, msg)
    }

    /// A bug in tailrank ([`ErrorKind::Internal`]).
    pub fn internal(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::Internal, msg)
    }

    /// A bug in tailrank noticed at `path` ([`ErrorKind::Internal`]).
    pub fn internal_at(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::at(ErrorKind::Internal, path, msg)
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io { .. } => ErrorKind::Io,
            Error::File { kind, .. } | Error::Message { kind, .. } => *kind,
        }
    }
}

/// At most this many characters of a file's own text are echoed in a message.
pub const ECHO_CHARS: usize = 200;

/// `text` quoted for a message, cut to its first [`ECHO_CHARS`] characters followed by
/// `…(N bytes)` (N = the whole text's length) when longer: a corrupt header of 120 KB must not
/// become a 120 KB error line.
pub fn echo(text: &str) -> String {
    match text.char_indices().nth(ECHO_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}…({} bytes)", &text[..cut], text.len()),
    }
}

/// Attach a path to `std::io::Result`s.
pub trait IoContext<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_given_by_the_constructor_and_leave_the_text_alone() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let cases = [
            (Error::input("a.npy", "bad"), ErrorKind::Input, "a.npy: bad"),
            (Error::input_msg("bad"), ErrorKind::Input, "bad"),
            (Error::mismatch("m"), ErrorKind::Mismatch, "m"),
            (Error::mismatch_at("b", "m"), ErrorKind::Mismatch, "b: m"),
            (Error::unsupported("c", "u"), ErrorKind::Unsupported, "c: u"),
            (Error::unsupported_msg("u"), ErrorKind::Unsupported, "u"),
            (
                Error::output("o", "refused"),
                ErrorKind::Output,
                "o: refused",
            ),
            (Error::option("k"), ErrorKind::Option, "k"),
            (Error::missing("d", "gone"), ErrorKind::Io, "d: gone"),
            (Error::internal("bug"), ErrorKind::Internal, "bug"),
            (
                Error::internal_at("e", "bug"),
                ErrorKind::Internal,
                "e: bug",
            ),
            (Error::io("f", io), ErrorKind::Io, "f: entity not found"),
            (
                Error::io("g", std::io::ErrorKind::IsADirectory.into()),
                ErrorKind::Io,
                "g: is a folder, where a file was expected (is a directory)",
            ),
        ];
        for (e, kind, text) in cases {
            assert_eq!((e.kind(), e.to_string()), (kind, text.to_string()));
        }
    }

    #[test]
    fn kinds_have_distinct_exit_codes_and_names() {
        let codes: std::collections::BTreeSet<i32> =
            ErrorKind::ALL.iter().map(|k| k.exit_code()).collect();
        assert_eq!(codes.len(), ErrorKind::ALL.len());
        assert_eq!(
            ErrorKind::Option.exit_code(),
            2,
            "clap's usage errors exit 2"
        );
        assert!(codes.iter().all(|&c| c >= 2), "0 and 1 are not error kinds");
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(k.name()), Some(k));
        }
        assert_eq!(ErrorKind::from_name("nope"), None);
    }

    #[test]
    fn echo_caps_long_text() {
        assert_eq!(echo("ab\"c"), "\"ab\\\"c\"");
        let long = "é".repeat(100_000);
        let e = echo(&long);
        assert!(e.ends_with("…(200000 bytes)"), "{e}");
        assert_eq!(e.chars().filter(|&c| c == 'é').count(), ECHO_CHARS);
        assert_eq!(
            echo(&"x".repeat(ECHO_CHARS)),
            format!("{:?}", "x".repeat(ECHO_CHARS))
        );
    }
}
