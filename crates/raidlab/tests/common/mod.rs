//! Helpers for the `raidlab run` integration tests: run the built binary, check the
//! one-line error contract, require the tools a test needs (never skip silently).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_raidlab")
}

/// Run `raidlab run ARGS...` with stdin closed, killing it after `limit`.
pub fn raidlab_with(args: &[&str], envs: &[(&str, &Path)], limit: Duration) -> Output {
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn raidlab");
    // The pipes are read as the child writes them: a child whose output outgrows a pipe's
    // buffer would otherwise wait on it while this waits on the child.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    use std::io::Read;
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "raidlab run {args:?} ran longer than {limit:?}; stderr: {}",
                String::from_utf8_lossy(&err.join().unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

pub fn raidlab(args: &[&str]) -> Output {
    raidlab_with(args, &[], Duration::from_secs(120))
}

/// Run `raidlab run ARGS...` in the folder `dir` (names relative to it, and what the run
/// leaves in its working folder, are there), stdin closed.
pub fn raidlab_in<S: AsRef<std::ffi::OsStr>>(dir: &Path, args: &[S]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .arg("run")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run raidlab")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Bad input: exit 2, exactly one line on stderr starting `raidlab: `, no panic.
pub fn assert_usage_error(o: &Output, what: &str) -> String {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{what}: expected exit 2, got {:?}; stderr: {err}",
        o.status
    );
    assert_one_line(&err, what);
    err
}

pub fn assert_one_line(err: &str, what: &str) {
    assert!(!err.contains("panicked"), "{what}: panic: {err}");
    assert_eq!(
        err.lines().count(),
        1,
        "{what}: stderr is not one line: {err:?}"
    );
    assert!(
        err.starts_with("raidlab: "),
        "{what}: stderr does not start with 'raidlab: ': {err:?}"
    );
}

/// Success, with the stdout.
pub fn assert_ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: exit {:?}; stderr: {}",
        o.status,
        stderr(o)
    );
    stdout(o)
}

/// A tool the test needs: fail (not skip) with the Debian package to install when missing.
pub fn require_tool(tool: &str, debian_package: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "this test needs '{tool}': install the Debian package '{debian_package}'"
    );
}

/// Run fio with `args` (it must succeed) and return its JSON output (past any banner line
/// fio prints before it).
pub fn fio_json<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    require_tool("fio", "fio");
    let o = Command::new("fio").args(args).output().expect("run fio");
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    out[out.find('{').expect("fio's JSON")..].to_string()
}

/// The repository's `systems/` folder.
pub fn systems_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../systems")
}

/// A system file of the repository's `systems/` folder (`rel` such as
/// `xdd2008/raid5.toml`), as a path for `sim:` targets.
pub fn system(rel: &str) -> String {
    systems_dir().join(rel).display().to_string()
}

/// Run `raidlab SUBCOMMAND ARGS...` (not `run`: see [`raidlab`]) with stdin closed.
pub fn raidlab_sub(subcommand: &str, args: &[&str]) -> Output {
    Command::new(bin())
        .arg(subcommand)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn raidlab")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("output is not JSON ({e}): {text}"))
}

/// A scratch folder for a test, in /dev/shm when there is one (fast, and gone at reboot).
pub fn scratch(prefix: &str) -> tempfile::TempDir {
    let base = if Path::new("/dev/shm").is_dir() {
        "/dev/shm"
    } else {
        "/tmp"
    };
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .unwrap()
}
