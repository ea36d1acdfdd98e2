//! The crate's one error type: a one-line message that says what, where and what is valid,
//! and whether it was bad input (exit 2) or a failure while running (exit 1).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayError {
    usage: bool,
    message: String,
}

impl ArrayError {
    /// Bad input: wrong flags, members that do not form an array, data that would be lost.
    pub fn usage(message: impl Into<String>) -> Self {
        ArrayError {
            usage: true,
            message: one_line(message.into()),
        }
    }
    /// Something failed while running: member I/O, too many failed members, a torn metadata write.
    pub fn failed(message: impl Into<String>) -> Self {
        ArrayError {
            usage: false,
            message: one_line(message.into()),
        }
    }
    /// An I/O error on a path, while doing something.
    pub fn io(what: &str, path: &std::path::Path, e: &std::io::Error) -> Self {
        ArrayError::failed(format!("{what} {}: {e}", path.display()))
    }
    pub fn is_usage(&self) -> bool {
        self.usage
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

fn one_line(s: String) -> String {
    if s.contains('\n') {
        s.split('\n')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        s
    }
}

impl fmt::Display for ArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ArrayError {}

impl From<ArrayError> for std::io::Error {
    fn from(e: ArrayError) -> Self {
        std::io::Error::other(e.message)
    }
}
