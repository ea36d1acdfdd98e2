//! Messages on standard error that never end the program: `eprintln!` panics when stderr
//! is a pipe whose reader went away (`2>&1 | head`) or a full disk, and a note, warning or
//! progress line nobody can read is not worth a panic. Written through [`ewriteln!`] and
//! [`ewrite!`].
//!
//! [`ewriteln!`]: crate::ewriteln
//! [`ewrite!`]: crate::ewrite

use std::io::Write;
use std::sync::OnceLock;

/// What every line begins with (a rank of an MPI run names itself: `[rank 2] `); set once.
static PREFIX: OnceLock<String> = OnceLock::new();

/// Begin every later line on standard error with `prefix`. The first call's stays.
pub fn set_prefix(prefix: &str) {
    let _ = PREFIX.set(prefix.to_string());
}

/// Write `text` to standard error in one write, ignoring any failure.
pub fn write(text: &str) {
    let text = match PREFIX.get() {
        Some(p) => std::borrow::Cow::Owned(prefixed(text, p)),
        None => std::borrow::Cow::Borrowed(text),
    };
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// `text` with `prefix` before each of its lines.
fn prefixed(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len() + prefix.len());
    for line in text.split_inclusive('\n') {
        out.push_str(prefix);
        out.push_str(line);
    }
    out
}

/// Like `eprintln!`, but a failed write to standard error (a closed pipe, a full disk) is
/// ignored instead of panicking. The line goes out in one write, so lines of concurrent
/// writers do not interleave mid-line.
#[macro_export]
macro_rules! ewriteln {
    () => {
        $crate::stderr::write("\n")
    };
    ($($arg:tt)*) => {
        $crate::stderr::write(&::std::format!("{}\n", ::std::format_args!($($arg)*)))
    };
}

/// Like `eprint!`, but a failed write to standard error is ignored instead of panicking.
#[macro_export]
macro_rules! ewrite {
    ($($arg:tt)*) => {
        $crate::stderr::write(&::std::format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_line_takes_the_prefix() {
        assert_eq!(
            super::prefixed("a\nb\n", "[rank 1] "),
            "[rank 1] a\n[rank 1] b\n"
        );
        assert_eq!(super::prefixed("a", "> "), "> a");
    }
}
