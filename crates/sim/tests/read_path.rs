//! A controller's read path: how far it reads ahead of a sequential stream, and when a read's
//! data starts up to the host; and a controller that holds no data, which passes reads and
//! writes through as the drive sends or takes them.

mod common;
use common::*;

/// Bytes/s of one sequential reader at depth 1, after a second's ramp.
fn seq_read_bw(system_file: &str, bs: &str) -> f64 {
    seq_read_bw_of(&system(system_file), bs)
}

/// [`seq_read_bw`] of a `sim:` target.
fn seq_read_bw_of(target: &str, bs: &str) -> f64 {
    let r = sim_run(
        target,
        &[
            ("rw", "read"),
            ("bs", bs),
            ("iodepth", "1"),
            ("direct", "1"),
            ("runtime", "4s"),
            ("ramp_time", "1s"),
            ("time_based", "1"),
        ],
    );
    let d = &r.jobs[0].read;
    d.io_bytes as f64 * 1e9 / d.runtime_ns as f64
}

#[test]
fn large_sequential_reads_at_depth_one_keep_pace_with_small_ones() {
    // The controller's read-ahead (256 KiB) is smaller than the larger requests: it keeps
    // one request ahead of the stream, so the drives read the next request while this one
    // goes to the host, and every size runs at the drives' rate. (It ran 635 MB/s at 64 KiB
    // and 403 MB/s at 4 MiB when the read-ahead stayed at its configured depth.)
    for level in ["raid0", "raid5"] {
        let file = format!("xdd2008/{level}.toml");
        let small = seq_read_bw(&file, "64k");
        for bs in ["1m", "4m", "16m"] {
            let large = seq_read_bw(&file, bs);
            assert!(
                large >= small * 0.99,
                "{level}: {bs} reads at {:.1} MB/s, 64k at {:.1}",
                large / 1e6,
                small / 1e6
            );
        }
    }
}

#[test]
fn a_drive_reads_ahead_while_it_takes_the_next_command() {
    // Seed 002's Maxtor on its own SATA port, one sequential reader at depth 1: between two
    // reads the host and the drive's firmware take their time, and the media reads on
    // meanwhile. From 16 KiB a request the command and its transfer take less than the media
    // takes to read it, so the stream runs at the outer zone's rate; 4 KiB requests are
    // bound by the command instead.
    let spec = raidlab_sim::catalog::find("maxtor-7y250m0").unwrap();
    let outer = spec.spt_outer as f64 * 512.0 * spec.rpm / 60.0;
    for bs in ["16k", "64k", "1m"] {
        let got = seq_read_bw("bokhari2006/direct-1disk.toml", bs);
        assert!(
            (got / outer - 1.0).abs() < 0.02,
            "{bs}: {:.1} MB/s, outer zone {:.1}",
            got / 1e6,
            outer / 1e6
        );
    }
    let small = seq_read_bw("bokhari2006/direct-1disk.toml", "4k");
    assert!(small < 0.75 * outer, "4k: {:.1} MB/s", small / 1e6);
}

#[test]
fn a_read_goes_up_to_the_host_as_its_stripes_arrive() {
    // Two 16 MiB reads on 8 drives. The first misses the cache: its member reads are joined
    // and then its data crosses to the host (16 MiB at 2000 MB/s, 8.4 ms). The second
    // continues the stream: its stripes are filled into the cache, and each goes up as it
    // arrives, in order, so little of the host transfer is left when the last stripe lands.
    let r = sim_run(
        &system("xdd2008/raid0.toml"),
        &[
            ("rw", "read"),
            ("bs", "16m"),
            ("size", "32m"),
            ("direct", "1"),
        ],
    );
    let clat = &r.jobs[0].read.clat;
    assert_eq!(clat.count(), 2);
    let (second, first) = (clat.min() as f64, clat.max() as f64);
    assert!(
        second < first * 0.75,
        "second read {:.2} ms, first {:.2} ms",
        second / 1e6,
        first / 1e6
    );
}

/// IOPS and member I/Os per request of 64 KiB reads at depth 1 on one drive behind the
/// FAStT600, `pct` percent of them random and the rest continuing from the last one.
fn partly_random(pct: &str) -> (f64, f64) {
    let r = sim_run(
        &system("bokhari2006/1c-1x1.toml"),
        &[
            ("rw", "randread"),
            ("bs", "64k"),
            ("norandommap", "1"),
            ("percentage_random", pct),
            ("runtime", "10s"),
            ("time_based", "1"),
            ("direct", "1"),
            ("iodepth", "1"),
        ],
    );
    let s = r.aggregate().summary();
    let member = r.jobs[0].sim.as_ref().unwrap().member_ios as f64;
    (s.iops, member / r.jobs[0].read.total_ios as f64)
}

#[test]
fn reads_continuing_a_random_one_cost_little_and_read_little_ahead() {
    // Half the reads continue the one before: the drive streams them from its read-ahead and
    // the controller reads one request ahead, not its whole 1 MiB depth, for a run that
    // usually ends at the next read. (With the full depth at the first continuation, the
    // next random read waited behind 1 MiB of prefetch: 64 IOPS, as fully random, and five
    // member I/Os per request.)
    let (random, _) = partly_random("100");
    let (half, per_request) = partly_random("50");
    assert!(
        half > random * 1.5,
        "50% random {half:.1} IOPS, 100% random {random:.1}"
    );
    assert!(per_request < 2.0, "{per_request:.2} member I/Os a request");
}

/// Mean completion latency, ns, of sequential 64 KiB requests (`rw`: read or write) at
/// depth 1 on `target`.
fn depth1_64k_ns(target: &str, rw: &str) -> f64 {
    let r = sim_run(
        target,
        &[
            ("rw", rw),
            ("bs", "64k"),
            ("iodepth", "1"),
            ("direct", "1"),
            ("size", "256m"),
        ],
    );
    let j = &r.jobs[0];
    if rw == "write" { &j.write } else { &j.read }.clat.mean()
}

fn read_64k_ns(target: &str) -> f64 {
    depth1_64k_ns(target, "read")
}

fn write_64k_ns(target: &str) -> f64 {
    depth1_64k_ns(target, "write")
}

/// 64 KiB at `mb_s` decimal MB/s, ns.
fn ns_64k(mb_s: f64) -> f64 {
    65536.0 * 1e3 / mb_s
}

// systems/modern/nvme.toml: the drive's interface moves 3900 MB/s, its PCIe link 3940 MB/s,
// and its controller (the drive's own) holds no data.
const NVME_LINK: &str = "link_mb_s = 3940";

/// systems/modern/nvme.toml with its PCIe link at `mb_s`, and `more` edits.
fn nvme_with_link(mb_s: &str, more: &[(&str, &str)]) -> String {
    let link = format!("link_mb_s = {mb_s}");
    let mut edits = vec![(NVME_LINK, link.as_str())];
    edits.extend_from_slice(more);
    variant("modern", "nvme.toml", &edits)
}

/// A hop as fast as the drive's interface adds nothing to a 64 KiB command (`shipped`
/// against `fast`, within 0.5 µs; it would add 16.6 µs crossed once all the data is in).
fn assert_adds_nothing(what: &str, shipped: f64, fast: f64) {
    assert!(
        (shipped - fast).abs() < 500.0,
        "{what}: {shipped} ns, fast: {fast} ns"
    );
}

/// A 1000 MB/s hop adds to a 64 KiB command (`slow` against `fast`) only what the data takes
/// longer over it than over the drive's 3900 MB/s interface, within 5%.
fn assert_adds_the_difference(what: &str, slow: f64, fast: f64) {
    let want = ns_64k(1000.0) - ns_64k(3900.0);
    assert!(
        (slow - fast - want).abs() < 0.05 * want,
        "{what} 1000 MB/s: {slow} ns, fast: {fast} ns, want {want} ns more"
    );
}

/// The NVMe system's PCIe link against one far faster (`ns_of` a 64 KiB command's time on
/// a system): as shipped, as fast as the drive's interface, it adds nothing; at 1000 MB/s
/// it adds only what the data takes longer over it.
fn assert_link_adds_only_its_difference(ns_of: fn(&str) -> f64) {
    let fast = ns_of(&nvme_with_link("100000", &[]));
    let shipped = ns_of(&system("modern/nvme.toml"));
    assert_adds_nothing("link 3940 MB/s", shipped, fast);
    let slow = ns_of(&nvme_with_link("1000", &[]));
    assert_adds_the_difference("link", slow, fast);
}

#[test]
fn a_controller_without_a_cache_passes_a_read_on_as_the_drive_sends_it() {
    // A link as fast as the interface carries the data as it leaves the drive; a slower one
    // ends the read, which started as the drive began to send.
    assert_link_adds_only_its_difference(read_64k_ns);
}

#[test]
fn a_back_end_bus_carries_a_drives_data_as_it_leaves_the_drive() {
    // The drive's interface and its lane of the controller's back-end bus are one wire.
    let with = |backend: &str| {
        let bus = format!("name = \"nvme\"\nbackend_mb_s = {backend}");
        read_64k_ns(&nvme_with_link("100000", &[("name = \"nvme\"", &bus)]))
    };
    assert_adds_the_difference("back end", with("1000"), with("100000"));
}

#[test]
fn a_controller_without_a_cache_passes_a_write_on_as_the_drive_takes_it() {
    // The drive takes the data in over its interface as the link brings it.
    assert_link_adds_only_its_difference(write_64k_ns);
}

/// A drive's buffer keeps what it read: a read of data it has just read is served from the
/// buffer, in the time of the command and the transfer, where a drive without read segments
/// waits a turn for the sector. fio's `rw=randread:8` with `rw_sequencer=identical` reads
/// each random block eight times.
#[test]
fn a_drive_serves_a_read_of_what_it_has_just_read_from_its_buffer() {
    let opts = [
        ("rw", "randread:8"),
        ("rw_sequencer", "identical"),
        ("bs", "4k"),
        ("size", "1g"),
        ("direct", "1"),
        ("runtime", "5s"),
        ("time_based", "1"),
    ];
    let with = sim_run(&system("bokhari2006/direct-1disk.toml"), &opts);
    let without = sim_run(
        &without_read_segments("bokhari2006", "direct-1disk.toml", "maxtor-7y250m0"),
        &opts,
    );
    let caches = with.jobs[0]
        .sim
        .as_ref()
        .unwrap()
        .drive_caches
        .clone()
        .unwrap();
    // Seven reads in eight find their block held (a run starts on a random block).
    let share = caches.read_hits as f64 / caches.reads as f64;
    assert!((share - 7.0 / 8.0).abs() < 0.01, "{caches:?}");
    assert_eq!(without.jobs[0].sim.as_ref().unwrap().drive_caches, None);
    let (fast, slow) = (with.jobs[0].read.iops(), without.jobs[0].read.iops());
    // Without segments each repeat waits a turn (7200 rpm: 120 a second); with them, one
    // read in eight waits for the media.
    assert!(slow < 150.0, "{slow:.0} IOPS without segments");
    assert!(
        fast > 4.0 * slow,
        "{fast:.0} IOPS with segments, {slow:.0} without"
    );
}

/// A write-back controller serves a read of data it holds dirty (written to its cache, not
/// yet to the drives) from the cache, as it must: the drives hold older data. On seed 001's
/// controller with its read-ahead off and destaging lazily (so the writes stay in the cache),
/// blocks just written by small random writes are read back without a drive read; blocks
/// nobody wrote are read from the drives.
#[test]
fn a_write_back_cache_serves_reads_of_its_dirty_data() {
    let comps = variant(
        "xdd2008",
        "components.toml",
        &[(
            "read_ahead_kib = 256",
            "lazy_destage = true\nread_ahead_kib = 0",
        )],
    );
    let target = comps.replace("components.toml", "raid5.toml");
    let read_after_writes = |offset: &str| {
        let write = common::spec(
            &target,
            &[
                ("rw", "randwrite"),
                ("bs", "8k"),
                ("size", "4m"),
                ("iodepth", "8"),
                ("direct", "1"),
            ],
        );
        let mut read = common::spec(
            &target,
            &[
                ("rw", "randread"),
                ("bs", "8k"),
                ("size", "4m"),
                ("offset", offset),
                ("iodepth", "8"),
                ("direct", "1"),
            ],
        );
        read.name = "read".into();
        read.stonewall = true;
        let r = common::run_to_the_end(&[write, read]);
        let j = &r.jobs[1];
        assert_eq!(j.read.io_bytes, 4 << 20);
        let sim = j.sim.as_ref().unwrap();
        (sim.member_ios, j.read.iops(), sim.controller_caches.clone())
    };
    let (same_ios, same_iops, same_hits) = read_after_writes("0");
    let (apart_ios, apart_iops, apart_hits) = read_after_writes("1g");
    // The read group's member I/Os: none reading what was written, at least one a read
    // reading elsewhere (the LUN starts at sector 63, so most 8 KiB reads take two chunks).
    assert_eq!(same_ios, 0, "reading what was written");
    // The run says where they went: every read the cache's, or none.
    let hits = same_hits.expect("the controller's cache served reads");
    assert_eq!((hits.reads, hits.read_hits), (512, 512));
    assert_eq!(apart_hits, None);
    assert!(apart_ios >= 512, "reading elsewhere: {apart_ios}");
    assert!(
        same_iops > 4.0 * apart_iops,
        "IOPS {same_iops} vs {apart_iops}"
    );
}

#[test]
fn a_read_ahead_deeper_than_the_read_cache_reads_no_further_than_it_holds() {
    // Seed 001's controller given a 1 MiB cache (half of it, nine 56 KiB stripes, holds
    // reads) and read-ahead depths within it and far past it. A window past the read cache
    // pushed the stripes it read ahead out before the stream reached them (first in, first
    // out), so each was read twice: 4 KiB sequential reads ran at a few MB/s.
    let bw = |read_ahead: &str| {
        let components = variant(
            "xdd2008",
            "components.toml",
            &[
                ("cache_mib = 512", "cache_mib = 1"),
                ("read_ahead_kib = 256", read_ahead),
            ],
        );
        let target = components.replace("components.toml", "raid5.toml");
        seq_read_bw_of(&target, "4k")
    };
    let fits = bw("read_ahead_kib = 256");
    for deep in ["read_ahead_kib = 1024", "read_ahead_kib = 65536"] {
        let got = bw(deep);
        assert!(
            got >= fits * 0.99,
            "{deep}: {:.1} MB/s, 256 KiB: {:.1}",
            got / 1e6,
            fits / 1e6
        );
    }
}
