//! Seed 002: the FAStT600 pool from one disk to the full system and the 16-node pool, every
//! configuration from one parameter set, within 15% of the reference points.
//!
//! Workloads at the device as Linux 2.6 issued them: ext3 read-ahead turns each thread's
//! sequential reads into 128 KiB requests, one at a time per thread; threads split the file
//! into contiguous regions; page-cache write-back keeps several 128 KiB writes in flight.

mod common;
use common::*;

fn reference(config: &str, op: &str) -> f64 {
    let csv = std::fs::read_to_string(reference_dir().join("bokhari2006/points.csv"))
        .expect("points.csv");
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f[0] == config && f[2] == op {
            return f[6].parse().unwrap();
        }
    }
    panic!("no reference point {config} {op}");
}

fn read_threads(file: &str, threads: u32, per_thread: &str, offset: Option<u64>) -> f64 {
    let mut s = spec(
        &system(&format!("bokhari2006/{file}.toml")),
        &[
            ("rw", "read"),
            ("bs", "128k"),
            ("size", per_thread),
            ("numjobs", &threads.to_string()),
        ],
    );
    s.offset_increment = s.size.unwrap();
    if let Some(o) = offset {
        s.offset = o;
    }
    raidlab_sim::run(&[s]).unwrap().aggregate().summary().mb_s
}

#[test]
fn every_configuration_within_fifteen_percent() {
    let disk = raidlab_sim::catalog::find("maxtor-7y250m0")
        .unwrap()
        .capacity_bytes;
    let inner_off = (disk - 14_000_000_000) / 4096 * 4096; // the last 14 GB: innermost zone
    let write = {
        let s = spec(
            &system("bokhari2006/2c-4x8p1.toml"),
            &[
                ("rw", "write"),
                ("bs", "128k"),
                ("size", "32g"),
                ("iodepth", "8"),
            ],
        );
        raidlab_sim::run(&[s]).unwrap().aggregate().summary().mb_s
    };
    let cases = [
        (
            "direct-1disk-outer",
            "read",
            read_threads("direct-1disk", 1, "13g", None),
        ),
        (
            "direct-1disk-inner",
            "read",
            read_threads("direct-1disk", 1, "13g", Some(inner_off)),
        ),
        ("1C:1x(1)", "read", read_threads("1c-1x1", 1, "64g", None)),
        (
            "1C:1x(4+1)",
            "read",
            read_threads("1c-1x4p1", 1, "54g", None),
        ),
        (
            "1C:1x(8+1)",
            "read",
            read_threads("1c-1x8p1", 1, "64g", None),
        ),
        (
            "2C:4x(8+1)",
            "read",
            read_threads("2c-4x8p1", 4, "16g", None),
        ),
        ("2C:4x(8+1)", "write", write),
        (
            "16 x 2C:4x(8+1)",
            "read",
            read_threads("pool16", 4, "4g", None),
        ),
    ];
    let mut bad = Vec::new();
    for (cfg, op, got) in cases {
        let want = reference(cfg, op);
        let e = (got - want) / want;
        if e.abs() > 0.15 {
            bad.push(format!(
                "{cfg} {op}: sim {got:.1} MB/s, reference {want} ({:+.0}%)",
                e * 100.0
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("; "));
}

#[test]
fn more_threads_help_the_full_system_and_not_the_single_disk() {
    let full1 = read_threads("2c-4x8p1", 1, "16g", None);
    let full4 = read_threads("2c-4x8p1", 4, "16g", None);
    assert!(
        full4 > full1 * 2.0,
        "full system: 1 thread {full1:.1}, 4 threads {full4:.1}"
    );
    let one1 = read_threads("1c-1x1", 1, "16g", None);
    let one4 = read_threads("1c-1x1", 4, "16g", None);
    assert!(
        one4 <= one1 * 1.02,
        "single disk: 1 thread {one1:.1}, 4 threads {one4:.1}"
    );
}
