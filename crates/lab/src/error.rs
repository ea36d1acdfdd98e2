//! The lab's one error type: a one-line message (or several independent errors, a line
//! each) and whether it is bad input or a failure.

use std::fmt;

/// What went wrong, where, and what is valid — on one line. `is_usage()` tells bad input
/// (a wrong experiment file, a foreign database: exit 2) from a failure while running (exit 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabError {
    usage: bool,
    message: String,
}

impl LabError {
    /// Bad input: the experiment, an option or a file given by the user is wrong.
    pub fn usage(message: impl Into<String>) -> Self {
        LabError {
            usage: true,
            message: one_line(message.into()),
        }
    }
    /// A failure while running: a run, a hook, the database on disk.
    pub fn failed(message: impl Into<String>) -> Self {
        LabError {
            usage: false,
            message: one_line(message.into()),
        }
    }
    /// Several independent errors (a simulated system file's), each one line: bad input if
    /// `usage`. [`LabError::context`] goes in front of each.
    pub fn lines<'a>(usage: bool, lines: impl IntoIterator<Item = &'a str>) -> Self {
        let lines: Vec<String> = lines.into_iter().map(|l| one_line(l.into())).collect();
        LabError {
            usage,
            message: lines.join("\n"),
        }
    }
    pub fn is_usage(&self) -> bool {
        self.usage
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The same error with `context` in front (e.g. the file it came from).
    pub fn context(self, context: impl fmt::Display) -> Self {
        LabError {
            usage: self.usage,
            message: self
                .message
                .lines()
                .map(|l| format!("{context}: {l}"))
                .collect::<Vec<_>>()
                .join("\n"),
        }
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

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LabError {}
