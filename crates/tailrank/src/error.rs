//! One error type for the library. Every variant that concerns a file names it, so that a user
//! with a hundred shards knows which one is wrong and what is wrong with it.

use std::path::{Path, PathBuf};

/// Errors raised by tailrank. Never a panic on bad input: every problem with a file or an
/// argument ends up here with a message a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operating system refused an operation on `path`.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The content of `path` is malformed or inconsistent (`msg` says how; it names the row or
    /// the id where one is known).
    #[error("{}: {msg}", path.display())]
    File { path: PathBuf, msg: String },
    /// Arguments or inputs that do not fit together (no single file is to blame).
    #[error("{0}")]
    Invalid(String),
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

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// Malformed or inconsistent content in `path`.
    pub fn file(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::File {
            path: path.as_ref().to_path_buf(),
            msg: msg.into(),
        }
    }

    /// Arguments or inputs that do not fit together.
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
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
