//! Fingerprint of the code that decides a simulated result: this crate's sources and those of
//! the crates it takes the request stream, the RAID planner and the result schema from. The lab
//! folds it into an experiment's hash, so stored simulated points are reused only by the same
//! simulator (see `MODEL_PRINT` in lib.rs).

use std::path::{Path, PathBuf};

/// The crates (beside this one, in the workspace) whose code decides a simulated result.
const INPUTS: [&str; 4] = ["sim", "workload", "geometry", "result"];

fn main() {
    let here =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let crates = here.parent().unwrap_or(&here).to_path_buf();
    let mut files = Vec::new();
    for name in INPUTS {
        let src = crates.join(name).join("src");
        if src.is_dir() {
            println!("cargo:rerun-if-changed={}", src.display());
            collect(&src, &mut files);
        }
    }
    // Sorted by path relative to the workspace's crates, so the print does not depend on where
    // the checkout is or on the order the file system lists a folder in.
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&crates)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            (rel, p)
        })
        .collect();
    named.sort();
    // 64-bit FNV-1a over each file's relative path and bytes.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (rel, path) in &named {
        eat(rel.as_bytes());
        eat(&[0]);
        eat(&std::fs::read(path).unwrap_or_default());
        eat(&[0]);
    }
    println!("cargo:rustc-env=RAIDLAB_SIM_MODEL_PRINT={h:016x}");
}

fn collect(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, into);
        } else if p.extension().is_some_and(|x| x == "rs") {
            into.push(p);
        }
    }
}
