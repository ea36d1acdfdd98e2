//! Messages on standard error that never end the program: `eprintln!` panics when stderr
//! is a pipe whose reader went away (`2>&1 | head`) or a full disk, and a note, warning or
//! progress line nobody can read is not worth a panic. Written through [`ewriteln!`] and
//! [`ewrite!`].
//!
//! [`ewriteln!`]: crate::ewriteln
//! [`ewrite!`]: crate::ewrite

use std::io::Write;

/// Write `text` to standard error in one write, ignoring any failure.
pub fn write(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
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
