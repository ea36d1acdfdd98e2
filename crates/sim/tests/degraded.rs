//! Degraded arrays (`failed = [...]` in an `[[array]]`): the planner's degraded plans, shared
//! with the real arrays, drive the simulation — no I/O reaches a failed drive, reads of its
//! data are rebuilt from the others by the parity engine, writes go to the survivors.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// A seed's system folder copied to a temporary one, with `failed` given to array `array`
/// of `file` (the copy's target, `sim:...`).
fn degraded(folder: &str, file: &str, array: &str, failed: &str) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d: PathBuf =
        std::env::temp_dir().join(format!("raidlab-sim-degraded-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let src = repo().join("systems").join(folder);
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let mut text = std::fs::read_to_string(&p).unwrap();
        if p.file_name().unwrap() == file {
            let at = format!("name = \"{array}\"\n");
            assert!(text.contains(&at), "{file} has array {array}");
            text = text.replacen(&at, &format!("{at}failed = {failed}\n"), 1);
        }
        std::fs::write(d.join(p.file_name().unwrap()), text).unwrap();
    }
    format!("sim:{}", d.join(file).display())
}

fn disk_use(r: &raidlab_result::RunResult, name_ends: &str) -> f64 {
    let sim = r.jobs[0].sim.as_ref().unwrap();
    sim.components
        .iter()
        .find(|c| c.kind == "disk" && c.name.ends_with(name_ends))
        .unwrap_or_else(|| panic!("no disk {name_ends}"))
        .utilization
}

const RANDREAD: [(&str, &str); 5] = [
    ("rw", "randread"),
    ("bs", "8k"),
    ("iodepth", "128"),
    ("runtime", "5"),
    ("time_based", "1"),
];

#[test]
fn a_degraded_raid5_reads_the_lost_drives_data_from_all_the_others() {
    // Seed 001's RAID 5 of 8: a read of the failed drive's chunks takes the other seven, so
    // random reads load the survivors 7/8 + 1/8 × 7 = 1.75 times as much.
    let whole = sim_run(&system("xdd2008/raid5.toml"), &RANDREAD);
    let t = degraded("xdd2008", "raid5.toml", "raid5", "[3]");
    let less = sim_run(&t, &RANDREAD);
    let (a, b) = (
        whole.aggregate().summary().iops,
        less.aggregate().summary().iops,
    );
    let ratio = a / b;
    assert!((1.5..2.0).contains(&ratio), "IOPS whole {a}, degraded {b}");
    assert_eq!(disk_use(&less, "/disk3"), 0.0, "the failed drive");
    assert!(disk_use(&less, "/disk4") > 0.9);
    // explain says which drives read: the seven survivors, not all eight.
    let path = t.trim_start_matches("sim:");
    let bounds = raidlab_sim::bounds(Path::new(path)).unwrap();
    let arr = bounds.iter().find(|c| c.kind == "array").unwrap();
    assert!(
        arr.note.starts_with(
            "raid5 of 8 drives, 1 failed: the 7 others read, and rebuild the failed drive's data;"
        ),
        "{}",
        arr.note
    );
}

#[test]
fn a_degraded_chain_reads_at_its_parity_engines_pace() {
    // Seed 000's 4+p chain: its controller's XOR engine (37 MB/s) rebuilds the failed
    // member's chunks, 4 of every 5 stripes; sequential reads, 48.6 MB/s whole (the
    // controller's data path), slow to what the engine keeps up with.
    let opts = [
        ("rw", "read"),
        ("bs", "1m"),
        ("size", "256m"),
        ("direct", "1"),
    ];
    let whole = sim_run(&system("llnl2000/fig11.toml"), &opts);
    let t = degraded("llnl2000", "fig11.toml", "unit0chain0", "[1]");
    let less = sim_run(&t, &opts);
    let sim = less.jobs[0].sim.as_ref().unwrap();
    assert_eq!(sim.bottleneck.as_deref(), Some("ctrl/unit0A/parity"));
    let (a, b) = (
        whole.aggregate().summary().mb_s,
        less.aggregate().summary().mb_s,
    );
    // 37 MB/s of parity input per 4/5 of the data read: 46 MB/s.
    assert!(
        b < a && (43.0..46.3).contains(&b),
        "MB/s whole {a}, degraded {b}"
    );
    // The bound explain gives holds the run.
    let path = t.trim_start_matches("sim:");
    let bounds = raidlab_sim::bounds(Path::new(path)).unwrap();
    let lun = bounds.iter().find(|c| c.kind == "lun").unwrap();
    assert!(
        lun.bound_bytes_s >= b * 1e6 && lun.bound_bytes_s < 47e6,
        "{lun:?}"
    );
}

#[test]
fn a_mirror_with_a_failed_copy_reads_from_the_other() {
    let whole = sim_run(&system("xdd2008/raid10.toml"), &RANDREAD);
    let t = degraded("xdd2008", "raid10.toml", "raid10", "[0]");
    let less = sim_run(&t, &RANDREAD);
    assert_eq!(disk_use(&less, "/disk0"), 0.0, "the failed drive");
    // Its partner now serves every read of their pair alone: a quarter of the random reads
    // on one drive, where each of the eight served an eighth. With 128 in flight that drive
    // sets the pace: four drives' worth, half the whole array's.
    let (a, b) = (
        whole.aggregate().summary().iops,
        less.aggregate().summary().iops,
    );
    let ratio = b / a;
    assert!(
        (0.45..0.55).contains(&ratio),
        "IOPS whole {a}, degraded {b}"
    );
}

#[test]
fn md_rebuilds_lost_data_with_the_hosts_parity() {
    // md RAID 5 over four NVMe drives, one failed: a 4 KiB read of its chunk reads the three
    // others and computes it on the host; the failed drive sees nothing.
    let t = degraded("modern", "nvme-raid5.toml", "md", "[2]");
    let r = sim_run(
        &t,
        &[
            ("rw", "randread"),
            ("bs", "4k"),
            ("iodepth", "32"),
            ("runtime", "1"),
            ("time_based", "1"),
        ],
    );
    assert_eq!(disk_use(&r, "nvme2/disk0"), 0.0);
    let whole = iops(
        &system("modern/nvme-raid5.toml"),
        &[
            ("rw", "randread"),
            ("bs", "4k"),
            ("iodepth", "32"),
            ("runtime", "1"),
            ("time_based", "1"),
        ],
    );
    let less = r.aggregate().summary().iops;
    assert!(less < whole, "IOPS whole {whole}, degraded {less}");
}

#[test]
fn failures_an_array_does_not_survive_are_refused_in_one_line() {
    for (folder, file, array, failed, want) in [
        (
            "xdd2008",
            "raid5.toml",
            "raid5",
            "[8]",
            "failed member 8 does not exist",
        ),
        (
            "xdd2008",
            "raid5.toml",
            "raid5",
            "[1, 2]",
            "tolerates 1 failure",
        ),
        (
            "xdd2008",
            "raid0.toml",
            "raid0",
            "[0]",
            "tolerates 0 failure",
        ),
        (
            "xdd2008",
            "raid10.toml",
            "raid10",
            "[2, 3]",
            "data would be lost",
        ),
    ] {
        let t = degraded(folder, file, array, failed);
        let e = raidlab_sim::run(&[spec(&t, &[("rw", "read"), ("size", "1m")])])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(want) && e.contains("failed") && e.lines().count() == 1,
            "{failed}: {e}"
        );
    }
}
