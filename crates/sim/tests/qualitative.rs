//! The seeds' qualitative findings, as the issue lists them.

mod common;
use common::*;

#[test]
fn two_interfaces_roughly_double_one_for_writes() {
    // Seed 000 §5: two 11+p units on two interfaces write about twice one unit on one.
    let one = mb_s(
        &system("llnl2000/fig14.toml"),
        &[("rw", "write"), ("bs", "1m"), ("size", "4g")],
    );
    let two = mb_s(
        &system("llnl2000/fig20.toml"),
        &[("rw", "write"), ("bs", "1m"), ("size", "4g")],
    );
    assert!(
        (1.7..2.2).contains(&(two / one)),
        "one {one:.1}, two {two:.1}"
    );
    // …while one interface with two units is held by the interface's write limit.
    let shared = mb_s(
        &system("llnl2000/fig16.toml"),
        &[("rw", "write"), ("bs", "1m"), ("size", "4g")],
    );
    assert!(
        shared < two * 0.97,
        "one interface {shared:.1} vs two {two:.1}"
    );
}

#[test]
fn same_inputs_same_results_bit_for_bit() {
    let s = spec(
        &system("llnl2000/fig18.toml"),
        &[
            ("rw", "randrw"),
            ("bs", "16k"),
            ("size", "64m"),
            ("iodepth", "4"),
        ],
    );
    let a = raidlab_sim::run(std::slice::from_ref(&s)).unwrap();
    let b = raidlab_sim::run(std::slice::from_ref(&s)).unwrap();
    assert_eq!(a, b);
}

fn xdd(level: &str, rw: &str) -> f64 {
    // Seed 001's xdd run: 64 KiB random requests, 128 in flight, over a 24 GiB file.
    iops(
        &system(&format!("xdd2008/{level}.toml")),
        &[
            ("rw", rw),
            ("bs", "64k"),
            ("size", "24g"),
            ("iodepth", "128"),
        ],
    )
}

#[test]
fn mirrors_give_the_most_random_read_iops() {
    let r10 = xdd("raid10", "randread");
    for l in ["raid0", "raid5", "raid6"] {
        let x = xdd(l, "randread");
        assert!(r10 > x, "raid10 {r10:.0} IOPS vs {l} {x:.0}");
    }
}

#[test]
fn random_writes_parity_levels_below_raid10() {
    // Seed 001: parity RAID pays a write penalty on small random writes. (RAID 6 below RAID 5,
    // the seed's other claim, does not follow from this model yet with 8 KiB chunks and 64 KiB
    // requests: RAID 6's narrower stripe is covered whole more often, which saves pre-reads.)
    let (r6, r5, r10) = (
        xdd("raid6", "randwrite"),
        xdd("raid5", "randwrite"),
        xdd("raid10", "randwrite"),
    );
    assert!(
        r5 < r10 && r6 < r10,
        "raid5 {r5:.0} and raid6 {r6:.0} below raid10 {r10:.0} IOPS"
    );
}

#[test]
fn a_write_back_controller_without_battery_writes_through() {
    // Seed 004's controller had no BBU: parity RAID small writes pay the full penalty.
    let dir = tempfile_dir();
    let with = std::fs::read_to_string(repo().join("systems/xdd2008/components.toml")).unwrap();
    std::fs::write(
        dir.join("components.toml"),
        with.replace("battery = true ", "battery = false"),
    )
    .unwrap();
    std::fs::copy(
        repo().join("systems/xdd2008/raid5.toml"),
        dir.join("raid5.toml"),
    )
    .unwrap();
    let t = format!("sim:{}", dir.join("raid5.toml").display());
    let opts = [
        ("rw", "randwrite"),
        ("bs", "8k"),
        ("size", "1g"),
        ("iodepth", "16"),
    ];
    let without = iops(&t, &opts);
    let with_bbu = iops(&system("xdd2008/raid5.toml"), &opts);
    assert!(
        without < with_bbu * 0.8,
        "no battery {without:.0} vs battery {with_bbu:.0} IOPS"
    );
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("raidlab-sim-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn parity_levels_prefer_smaller_chunks_than_striping_for_sequential_writes() {
    // Seed 003: md RAID 5/6 do best near 64 KiB chunks, RAID 0/10 with larger ones. dd bs=1M
    // through the page cache: several 1 MiB writes in flight.
    let best = |level: &str| -> u64 {
        let mut best = (0.0, 0);
        for c in [16u64, 64, 256, 1024] {
            let t = system(&format!("linuxraid2010/{level}-4d-c{c}.toml"));
            let r = mb_s(
                &t,
                &[
                    ("rw", "write"),
                    ("bs", "1m"),
                    ("size", "2g"),
                    ("iodepth", "8"),
                ],
            );
            if r > best.0 {
                best = (r, c);
            }
        }
        best.1
    };
    let (r5, r0) = (best("raid5"), best("raid0"));
    assert!(r5 < r0, "best chunk: raid5 {r5} KiB, raid0 {r0} KiB");
}
