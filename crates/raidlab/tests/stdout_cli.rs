//! Every command's output to a standard output nobody can read: a pipe whose reader went
//! away (`raidlab explain … | head -1`) ends the command quietly with exit 0, as `run` and
//! `sweep` do; a full disk (`> /dev/full`) is one line on stderr and exit 1. Never a panic
//! (exit 101), which `print!`/`println!` gave for both.

mod common;

use common::{assert_one_line, bin, system};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A pipe whose read end is closed before the child starts: every write fails (EPIPE).
fn gone_reader() -> Stdio {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe fills both descriptors, which we then own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    Stdio::from(write)
}

fn full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

fn raidlab(args: &[&str], stdout: Stdio) -> Output {
    Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// `args` with stdout a gone reader: exit 0, nothing on stderr; with stdout /dev/full: exit
/// 1 and one line saying standard output could not be written.
fn check(args: &[&str]) {
    let o = raidlab(args, gone_reader());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?} to a gone reader: {err}");
    assert!(err.is_empty(), "{args:?} to a gone reader: {err}");

    let o = raidlab(args, full());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{args:?} to /dev/full: {err}");
    assert_one_line(&err, &format!("{args:?} to /dev/full"));
    assert!(
        err.contains("cannot write to standard output"),
        "{args:?} to /dev/full: {err}"
    );
}

#[test]
fn help_and_version() {
    // clap's help and version, and `run`'s own help (its options are fio's).
    for args in [
        &["--help"][..],
        &["--version"],
        &["array", "--help"],
        &["explain", "--help"],
        &["run", "--help"],
    ] {
        check(args);
    }
}

#[test]
fn explain() {
    let sys = system("xdd2008/raid5.toml");
    check(&["explain", &sys]);
    check(&["explain", &sys, "--output-format", "json"]);
}

#[test]
fn bench_parity() {
    for format in ["text", "json"] {
        check(&[
            "bench",
            "parity",
            "--kernel",
            "scalar",
            "--seconds",
            "10ms",
            "--output-format",
            format,
        ]);
    }
}

fn scratch() -> tempfile::TempDir {
    common::scratch("raidlab-cli-stdout")
}

fn members(dir: &Path, tag: &str) -> Vec<PathBuf> {
    (0..4).map(|i| dir.join(format!("{tag}{i}"))).collect()
}

#[test]
fn array_commands() {
    let d = scratch();
    let create = |ms: &[PathBuf], stdout: Stdio| {
        let mut args = vec![
            "array", "create", "--level", "5", "--chunk", "64k", "--size", "4m",
        ];
        args.extend(ms.iter().map(|m| m.to_str().unwrap()));
        raidlab(&args, stdout)
    };
    // create: the array is made whatever became of the line that says so.
    let ms = members(d.path(), "gone");
    let o = create(&ms, gone_reader());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "create to a gone reader: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let ms = members(d.path(), "full");
    let o = create(&ms, full());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "create to /dev/full: {err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("raidlab: cannot write to standard output"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    let list = ms
        .iter()
        .map(|m| m.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    // Both arrays were made: status reads them.
    for made in [members(d.path(), "gone"), ms.clone()] {
        let l = made
            .iter()
            .map(|m| m.display().to_string())
            .collect::<Vec<_>>()
            .join(",");
        let o = raidlab(&["array", "status", &l], Stdio::piped());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    check(&["array", "status", &list]);
    check(&["array", "status", "--output-format", "json", &list]);
    check(&["array", "scrub", "--check", "--quiet", &list]);
    check(&[
        "array",
        "scrub",
        "--check",
        "--quiet",
        "--output-format",
        "json",
        &list,
    ]);
}
