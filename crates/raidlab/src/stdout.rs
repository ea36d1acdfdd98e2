//! Standard output that never panics: `print!` and `println!` panic (exit 101) when stdout
//! is a pipe whose reader went away (`raidlab explain … | head -1`) or a full disk
//! (`> /dev/full`). Every command prints through [`write()`] or [`print()`] instead, so a closed
//! pipe ends the printing quietly (exit 0: nobody wants the rest) and any other failure is
//! one line on standard error and exit 1.

use crate::error::CliError;
use std::io::Write;

/// Write `text` to standard output in one write and flush it. A reader that went away (a
/// closed pipe, `| head`) is not an error, so that is `Ok`; any other failure (a full disk,
/// /dev/full) is returned for the caller to say what was lost.
pub fn write(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// [`write()`], with a failure as the command's error: exit 1 and one line,
/// `raidlab: cannot write to standard output: No space left on device (os error 28)`.
pub fn print(text: &str) -> Result<(), CliError> {
    write(text).map_err(|e| CliError::failed(format!("cannot write to standard output: {e}")))
}
