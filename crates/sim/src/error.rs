//! The simulator's one error type: a one-line message and whether it was bad input.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub message: String,
    usage: bool,
}

impl SimError {
    /// Bad input (a system file, a target, an option): exit code 2.
    pub fn usage(message: impl Into<String>) -> Self {
        SimError { message: one_line(message.into()), usage: true }
    }
    /// A failure while simulating: exit code 1.
    pub fn failed(message: impl Into<String>) -> Self {
        SimError { message: one_line(message.into()), usage: false }
    }
    pub fn is_usage(&self) -> bool {
        self.usage
    }
}

fn one_line(s: String) -> String {
    if s.contains('\n') {
        s.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
    } else {
        s
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SimError {}
