//! Members in tmpfs are mapped into memory and written as memory copies. What mapping
//! must not change: a full filesystem is an I/O error (never SIGBUS), and reading a sparse
//! member does not fill it.
//!
//! The full-filesystem test mounts a small tmpfs: it needs root, and fails, never skips,
//! without.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Sparse members, no initial resync (it would write every page).
fn new_array(
    level: &str,
    members: &[PathBuf],
    size: u64,
) -> std::sync::Arc<raidlab_array::array::Array> {
    common::create_array(level, members, Some(size), false, true)
}

fn blocks(paths: &[PathBuf]) -> u64 {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().blocks())
        .sum()
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct SmallTmpfs(tempfile::TempDir);

impl SmallTmpfs {
    fn new(size: &str) -> SmallTmpfs {
        assert!(
            // SAFETY: geteuid has no preconditions.
            unsafe { libc::geteuid() } == 0,
            "this test mounts a tmpfs and must run as root"
        );
        let dir = tempfile::tempdir().unwrap();
        let st = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount runs");
        assert!(st.success(), "mount -t tmpfs failed");
        SmallTmpfs(dir)
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// Sparse members on a tmpfs too small to hold them: writing the whole array runs the
/// filesystem out of space. The write fails with an error and the process lives on
/// (a store into an unallocatable page of a mapping would be SIGBUS).
#[test]
fn a_full_tmpfs_is_an_io_error_not_a_signal() {
    let fs = SmallTmpfs::new("6m");
    let ms: Vec<PathBuf> = (0..3).map(|i| fs.path().join(format!("m{i}"))).collect();
    let arr = new_array("5", &ms, 4 << 20);
    assert!(arr.member_io().contains("mapped"), "{}", arr.member_io());
    let cap = arr.capacity() as usize;
    let mut data = vec![0u8; cap];
    common::Rng(0xfeed).fill(&mut data);
    let mut failed = false;
    for (i, piece) in data.chunks(1 << 20).enumerate() {
        if let Err(e) = arr.write_at(piece, (i << 20) as u64) {
            failed = true;
            eprintln!("write failed as expected: {e}");
            break;
        }
    }
    assert!(
        failed,
        "writing 8 MiB of parity RAID into a 6 MiB tmpfs succeeded"
    );
    assert!(arr.degraded_count() > 0, "no member was marked faulty");
}

/// Reading a sparse mapped member reads its holes as zeros without allocating them.
#[test]
fn reading_holes_allocates_nothing() {
    let dir = common::scratch("mapped-holes");
    let ms: Vec<PathBuf> = (0..4).map(|i| dir.path().join(format!("m{i}"))).collect();
    let arr = new_array("5", &ms, 16 << 20);
    assert!(arr.member_io().contains("mapped"), "{}", arr.member_io());
    let before = blocks(&ms);
    let mut got = vec![1u8; arr.capacity() as usize];
    arr.read_at(&mut got, 0).unwrap();
    assert!(got.iter().all(|&b| b == 0), "holes read as zeros");
    assert_eq!(blocks(&ms), before, "reading allocated member pages");
    // Writing allocates, and what is written reads back.
    let data = vec![7u8; 3 * 65536];
    arr.write_at(&data, 0).unwrap();
    assert!(blocks(&ms) > before);
    let mut back = vec![0u8; data.len()];
    arr.read_at(&mut back, 0).unwrap();
    assert_eq!(back, data);
}
