//! What the array integration tests share: a seeded generator, a scratch folder, and the
//! checks every test ends with (the whole array reads back as the model; scrub is clean).
#![allow(dead_code)]

use raidlab_array::array::Array;
use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
use raidlab_array::manage;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// xorshift64: reproducible data and choices from a case's seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for c in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }
}

/// A scratch folder in memory when there is /dev/shm (members are mapped there), else /tmp.
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

/// The whole array reads back as `model`. The read lands one byte into its buffer, so
/// members opened O_DIRECT take the misaligned (bounce) path too.
pub fn check_all(arr: &Array, model: &[u8], what: &str) {
    let mut raw = vec![0u8; model.len() + 1];
    let got = &mut raw[1..];
    arr.read_at(got, 0)
        .unwrap_or_else(|e| panic!("{what}: full read failed: {e}"));
    if got != model {
        let first = got.iter().zip(model).position(|(a, b)| a != b).unwrap();
        panic!("{what}: data differs first at byte {first}");
    }
}

/// Scrub every level of the array: something was scrubbed and nothing mismatched.
pub fn scrub_clean(arr: &Array, what: &str) {
    let reps = manage::scrub_all(arr, false, &mut |_, _, _| {}).unwrap();
    assert!(!reps.is_empty(), "{what}: nothing scrubbed");
    for (name, r) in reps {
        assert_eq!(r.mismatches, 0, "{what}: scrub of {name} found mismatches");
    }
}

/// Create a RAID `level` array with 64 KiB chunks over `members` (created `size` bytes
/// long if given); `force` overwrites members holding data, `assume_clean` skips the
/// initial resync.
pub fn create_array(
    level: &str,
    members: &[PathBuf],
    size: Option<u64>,
    force: bool,
    assume_clean: bool,
) -> Arc<Array> {
    let spec = CreateSpec::new(
        level,
        None,
        Some(65536),
        members.iter().cloned().map(MemberSpec::Path).collect(),
    )
    .unwrap();
    create(
        &spec,
        &CreateOptions {
            force,
            size,
            assume_clean,
            verbose: false,
            stop: None,
        },
    )
    .unwrap()
}

/// `n` member paths in `dir`: `{tag}0`, `{tag}1`, ….
pub fn member_paths(dir: &Path, tag: &str, n: usize) -> Vec<PathBuf> {
    (0..n).map(|i| dir.join(format!("{tag}{i}"))).collect()
}

/// A RAID 5 child (16 KiB chunks) over member files `ms`, for a nested array's spec.
pub fn raid5_child(ms: &[PathBuf]) -> MemberSpec {
    MemberSpec::Array(
        CreateSpec::new(
            "5",
            None,
            Some(16384),
            ms.iter().cloned().map(MemberSpec::Path).collect(),
        )
        .unwrap(),
    )
}
