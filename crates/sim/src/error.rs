//! The simulator's one error type: a one-line message (or several independent errors of one
//! input, one line each) and whether it was bad input.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub message: String,
    usage: bool,
}

impl SimError {
    /// Bad input (a system file, a target, an option): exit code 2.
    pub fn usage(message: impl Into<String>) -> Self {
        SimError {
            message: one_line(message.into()),
            usage: true,
        }
    }
    /// A failure while simulating: exit code 1.
    pub fn failed(message: impl Into<String>) -> Self {
        SimError {
            message: one_line(message.into()),
            usage: false,
        }
    }
    /// Bad input found in several independent places (a system file's checking pass): each
    /// error one line, in the order given, the same message only once. One error is itself.
    pub fn usage_all(errors: Vec<SimError>) -> Self {
        let mut lines: Vec<String> = Vec::new();
        for e in errors {
            for l in e.message.lines() {
                if !lines.iter().any(|x| x == l) {
                    lines.push(l.to_string());
                }
            }
        }
        SimError {
            message: lines.join("\n"),
            usage: true,
        }
    }
    pub fn is_usage(&self) -> bool {
        self.usage
    }
    /// The errors this one holds, one line each (one for all but [`SimError::usage_all`]'s).
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.message.lines()
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

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SimError {}
