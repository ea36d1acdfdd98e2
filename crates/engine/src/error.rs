//! The engine's error: one line, and whether it was bad input (exit 2) or a failure (exit 1).

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineError {
    usage: bool,
    message: String,
}

impl EngineError {
    /// Bad input: a value, target or option the run cannot use (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        EngineError {
            usage: true,
            message: one_line(message.into()),
        }
    }
    /// A failure while running (exit code 1).
    pub fn failed(message: impl Into<String>) -> Self {
        EngineError {
            usage: false,
            message: one_line(message.into()),
        }
    }
    /// True for bad input (exit 2), false for a failure while running (exit 1).
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

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EngineError {}
