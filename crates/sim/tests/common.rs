//! Helpers shared by the simulator's integration tests.
#![allow(dead_code)]

use raidlab_workload::{apply_option, JobSpec};
use std::path::PathBuf;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn system(rel: &str) -> String {
    format!("sim:{}", repo().join("systems").join(rel).display())
}

/// The seeds' reference tables: $RAIDLAB_REFERENCE, or `shared/reference` next to the
/// repository (main checkout or a worktree of it). Panics (fails the test) if missing.
pub fn reference_dir() -> PathBuf {
    if let Ok(p) = std::env::var("RAIDLAB_REFERENCE") {
        return PathBuf::from(p);
    }
    let m = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for up in ["../../../shared/reference", "../../../../shared/reference"] {
        let p = m.join(up);
        if p.join("llnl2000/single-chain.csv").exists() {
            return p;
        }
    }
    panic!("reference tables not found: set RAIDLAB_REFERENCE or put shared/reference next to the repository");
}

pub fn spec(target: &str, opts: &[(&str, &str)]) -> JobSpec {
    let mut s = JobSpec {
        filenames: vec![target.to_string()],
        ..Default::default()
    };
    for (k, v) in opts {
        apply_option(&mut s, k, Some(v)).unwrap();
    }
    s
}

/// A simulated run of one job on `target` with fio options `opts`.
pub fn sim_run(target: &str, opts: &[(&str, &str)]) -> raidlab_result::RunResult {
    raidlab_sim::run(&[spec(target, opts)]).unwrap()
}

/// A simulated run of `specs` to their end, without stopping early at a steady rate (which
/// extends a run's counts from the part simulated): its counts are exact.
pub fn run_to_the_end(specs: &[JobSpec]) -> raidlab_result::RunResult {
    let cfg = raidlab_sim::RunConfig {
        convergence: raidlab_sim::engine::Convergence {
            enabled: false,
            ..Default::default()
        },
    };
    raidlab_sim::run_with(specs, &cfg).unwrap()
}

/// Aggregate MB/s (decimal) of a simulated run.
pub fn mb_s(target: &str, opts: &[(&str, &str)]) -> f64 {
    sim_run(target, opts).aggregate().summary().mb_s
}

pub fn iops(target: &str, opts: &[(&str, &str)]) -> f64 {
    sim_run(target, opts).aggregate().summary().iops
}

/// `file` of systems/`folder` copied to a temporary folder (with its includes), each
/// (from, to) replaced once in it; the copy's target `sim:...`.
pub fn variant(folder: &str, file: &str, edits: &[(&str, &str)]) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d: PathBuf =
        std::env::temp_dir().join(format!("raidlab-sim-variant-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    for e in std::fs::read_dir(repo().join("systems").join(folder)).unwrap() {
        let p = e.unwrap().path();
        let mut text = std::fs::read_to_string(&p).unwrap();
        if p.file_name().unwrap() == file {
            for (from, to) in edits {
                assert!(text.contains(from), "{file} has {from}");
                text = text.replacen(from, to, 1);
            }
        }
        std::fs::write(d.join(p.file_name().unwrap()), text).unwrap();
    }
    format!("sim:{}", d.join(file).display())
}

/// `file` of systems/`folder` as [`variant`] copies it, its first array's drives (catalog
/// `disk`) made without read segments (`cache_segments = 0`): a drive that serves every
/// read from the media.
pub fn without_read_segments(folder: &str, file: &str, disk: &str) -> String {
    let name = format!("{disk}-no-segments");
    variant(
        folder,
        file,
        &[
            (
                "[system]",
                &format!("[[disk]]\nname = \"{name}\"\nbase = \"{disk}\"\ncache_segments = 0\n\n[system]"),
            ),
            (&format!("disk = \"{disk}\""), &format!("disk = \"{name}\"")),
        ],
    )
}
