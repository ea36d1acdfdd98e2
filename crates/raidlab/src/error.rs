//! The one error type commands return: a one-line message and an exit code.
//! Code 2 is bad input (flags, values, files); 1 is a failure while running. An input with
//! several independent mistakes (a system file) gives each on its own line.

use std::fmt;

#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
}

impl CliError {
    /// Bad input: exit code 2.
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: 2,
            message: one_line(message.into()),
        }
    }
    /// A failure while running: exit code 1.
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            code: 1,
            message: one_line(message.into()),
        }
    }
    /// Several independent errors with exit code `code`, each one line (`main` prints each
    /// as its own `raidlab: ` line).
    pub fn lines<'a>(code: i32, lines: impl IntoIterator<Item = &'a str>) -> Self {
        let lines: Vec<String> = lines.into_iter().map(|l| one_line(l.into())).collect();
        CliError {
            code,
            message: lines.join("\n"),
        }
    }
    /// The simulator's error: bad input (each of a system file's errors on its own line) or
    /// a failure.
    pub fn sim(e: raidlab_sim::SimError) -> Self {
        CliError::lines(if e.is_usage() { 2 } else { 1 }, e.lines())
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

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
