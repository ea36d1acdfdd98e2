//! md's stripe cache on seed 003's host: how a parity array the host runs turns a writer's
//! requests into stripe writes (whole stripes, or partial ones with pre-reads).

mod common;

use common::*;

/// What the md array's stripe cache did over a run.
fn stripe_use(r: &raidlab_result::RunResult) -> raidlab_result::StripeCacheUse {
    let sim = r.jobs[0].sim.as_ref().expect("a simulated run");
    assert_eq!(sim.stripe_caches.len(), 1, "one md array");
    sim.stripe_caches[0].clone()
}

fn mb_s_of(r: &raidlab_result::RunResult) -> f64 {
    r.jobs[0].write.bw_bytes() / 1e6
}

/// dd bs=1M through the page cache, as seed 003 wrote.
const DD: [(&str, &str); 4] = [
    ("rw", "write"),
    ("bs", "1m"),
    ("size", "4g"),
    ("direct", "0"),
];

/// Write-back sends 512 KiB requests, smaller than a 4-drive RAID 5 stripe of 64 KiB chunks
/// (192 KiB) only at their edges: the cache joins the pieces of neighbouring requests into
/// whole stripes, so nothing is read, and RAID 5 writes at three drives' rate where RAID 6
/// over the same four drives writes at two.
#[test]
fn sequential_requests_become_whole_stripes() {
    let r5 = sim_run(&system("linuxraid2010/raid5-4d-c64.toml"), &DD);
    let u = stripe_use(&r5);
    assert!(u.full_writes > 1000, "{u:?}");
    assert_eq!(u.preread_writes, 0, "{u:?}");
    let r6 = sim_run(&system("linuxraid2010/raid6-4d-c64.toml"), &DD);
    let (five, six) = (mb_s_of(&r5), mb_s_of(&r6));
    assert!(five > 1.35 * six, "RAID 5 {five:.1} MB/s, RAID 6 {six:.1}");
}

/// With 1 MiB chunks a 4-drive RAID 5 stripe needs all 256 stripe heads of md's default
/// cache: while one stripe is written the writer waits, md unplugs, and the next stripe goes
/// with only part of its data — pre-reads, and the rate falls. md's well-known remedy, a
/// larger `stripe_cache_size`, gives the writes their room back.
#[test]
fn a_stripe_wider_than_the_cache_takes_pre_reads_until_the_cache_grows() {
    let small = sim_run(&system("linuxraid2010/raid5-4d-c1024.toml"), &DD);
    let u = stripe_use(&small);
    assert_eq!(u.stripe_heads, 256);
    assert!(
        u.preread_writes * 4 > u.full_writes + u.preread_writes,
        "{u:?}"
    );
    assert!(u.room_waits > 0, "{u:?}");

    let dir = std::env::temp_dir().join(format!("raidlab-sim-stripecache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = repo().join("systems/linuxraid2010");
    std::fs::copy(src.join("components.toml"), dir.join("components.toml")).unwrap();
    let text = std::fs::read_to_string(src.join("raid5-4d-c1024.toml")).unwrap();
    let text = text.replacen(
        "chunk_kib = 1024\n",
        "chunk_kib = 1024\nstripe_cache_size = 4096\n",
        1,
    );
    assert!(text.contains("stripe_cache_size"));
    std::fs::write(dir.join("big.toml"), text).unwrap();
    let big = sim_run(&format!("sim:{}", dir.join("big.toml").display()), &DD);
    let ub = stripe_use(&big);
    assert_eq!(ub.stripe_heads, 4096);
    assert!(ub.preread_writes * 20 < ub.full_writes, "{ub:?}");
    let (s, b) = (mb_s_of(&small), mb_s_of(&big));
    assert!(b > 1.5 * s, "256 heads {s:.1} MB/s, 4096 heads {b:.1}");
    std::fs::remove_dir_all(&dir).ok();
}

/// One direct 1 MiB write at a time leaves the end of a 192 KiB-stripe array's last stripe
/// partial, and no later request comes to complete it while the write waits: md writes it
/// at the unplug, reading first. Without the unplug timer the write would never finish.
#[test]
fn a_partial_stripe_nobody_completes_is_written_at_the_unplug() {
    let r = sim_run(
        &system("linuxraid2010/raid5-4d-c64.toml"),
        &[
            ("rw", "write"),
            ("bs", "1m"),
            ("size", "256m"),
            ("direct", "1"),
        ],
    );
    let u = stripe_use(&r);
    assert!(u.preread_writes > 0, "{u:?}");
    assert_eq!(r.jobs[0].write.total_ios, 256);
    // Each write waits about the unplug delay (3 ms) past its full stripes' writes.
    let mean_ms = r.jobs[0].write.lat.mean() / 1e6;
    assert!(mean_ms > 3.0, "mean latency {mean_ms:.2} ms");
}

/// Random writes through the page cache leave pieces of 1 MiB chunks here and there: a
/// stripe written in 512 KiB slices has slices with nothing to write, which are skipped
/// (their member I/Os were once worked out anyway, an overflow in debug builds).
#[test]
fn sliced_stripes_with_empty_slices_are_written() {
    let r = sim_run(
        &system("linuxraid2010/raid6-4d-c1024.toml"),
        &[
            ("rw", "randwrite"),
            ("bs", "8k"),
            ("iodepth", "32"),
            ("runtime", "2s"),
            ("time_based", "1"),
            ("direct", "0"),
        ],
    );
    let u = stripe_use(&r);
    assert!(u.full_writes + u.preread_writes > 0, "{u:?}");
    assert!(r.jobs[0].write.total_ios > 0);
}

/// Small random direct writes on md RAID 5: each write's latency is the time its piece was
/// held in the stripe cache plus its stripe's operation (pre-reads, then writes), and the
/// run's stripe-cache figures say how much of each. One write at a time is never held (its
/// task unplugs as it submits, and no other stripe is pre-reading); a second one in flight
/// waits while the first pre-reads (md lets one pre-reading stripe go at a time, its
/// `IO_THRESHOLD`), so two in flight write no faster than one.
#[test]
fn a_random_writers_latency_is_its_time_held_plus_its_stripes_operation() {
    let run = |depth: &str| {
        let r = sim_run(
            &system("linuxraid2010/raid5-4d-c64.toml"),
            &[
                ("rw", "randwrite"),
                ("bs", "4k"),
                ("iodepth", depth),
                ("runtime", "10s"),
                ("time_based", "1"),
                ("direct", "1"),
            ],
        );
        let u = stripe_use(&r);
        assert!(u.held_pieces > 0 && u.ops_done > 0, "{u:?}");
        let held = u.held_ns as f64 / u.held_pieces as f64;
        let op = u.op_ns as f64 / u.ops_done as f64;
        let w = &r.jobs[0].write;
        let lat = w.lat.mean();
        assert!(
            ((held + op) / lat - 1.0).abs() < 0.03,
            "depth {depth}: held {held:.0} ns + operation {op:.0} ns against latency {lat:.0} ns"
        );
        (held, op, w.iops())
    };
    let (held1, op1, iops1) = run("1");
    assert_eq!(held1, 0.0);
    let (held2, op2, iops2) = run("2");
    assert!(
        held2 > 0.8 * op1 && held2 < 1.2 * op2,
        "held {held2:.0} ns at depth 2, operations {op1:.0} and {op2:.0} ns"
    );
    assert!(
        iops2 < 1.1 * iops1,
        "{iops1:.1} IOPS at depth 1, {iops2:.1} at 2"
    );
}
