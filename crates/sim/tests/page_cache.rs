//! The simulated host's page cache: buffered jobs (`direct=0`) on a host whose system file
//! gives it one. Seed 003's host (2 GB of RAM, md over four drives) with the cache sizes below.

mod common;

use common::*;
use raidlab_workload::JobSpec;
use std::path::PathBuf;

/// Seed 003's systems in a temporary folder, the host given `mib` of page cache.
fn cached_systems(mib: u64) -> PathBuf {
    cached_systems_with(mib, "")
}

fn cached_systems_with(mib: u64, extra: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("raidlab-sim-pagecache-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let src = repo().join("systems/linuxraid2010");
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let text = if p.file_name().unwrap() == "components.toml" {
            // (The host's own cache settings out, these in.)
            let text: String = text
                .lines()
                .filter(|l| !l.starts_with("page_cache_mib") && !l.starts_with("copy_mb_s"))
                .map(|l| format!("{l}\n"))
                .collect();
            text.replacen(
                "[host]\n",
                &format!("[host]\npage_cache_mib = {mib}\ncopy_mb_s = 2000\n{extra}"),
                1,
            )
        } else {
            text
        };
        std::fs::write(d.join(p.file_name().unwrap()), text).unwrap();
    }
    d
}

/// What the page cache did over run `r` (every job of a run reports the same).
fn cache_use(r: &raidlab_result::RunResult, job: usize) -> raidlab_result::PageCacheUse {
    let sim = r.jobs[job].sim.as_ref().expect("a simulated run");
    sim.page_cache.clone().expect("a host with a page cache")
}

fn target(dir: &std::path::Path, file: &str) -> String {
    format!("sim:{}", dir.join(file).display())
}

/// Two jobs, the second after the first (stonewall): their MB/s.
fn twice(t: &str, opts: &[(&str, &str)]) -> (f64, f64) {
    let a = spec(t, opts);
    let mut b: JobSpec = spec(t, opts);
    b.name = "again".into();
    b.stonewall = true;
    let r = raidlab_sim::run(&[a, b]).unwrap();
    let mb = |j: &raidlab_result::JobResult| {
        j.read.io_bytes as f64 / (j.read.runtime_ns as f64 / 1e9) / 1e6
    };
    (mb(&r.jobs[0]), mb(&r.jobs[1]))
}

/// Seed 002's cache defeat: "for large enough files, this is a non-issue as there will
/// eventually be enough cache turnover", but a file that fits in memory is read from memory
/// the second time, unless the job drops its region from the cache first (fio's
/// `invalidate`, on by default).
#[test]
fn a_file_that_fits_in_the_page_cache_is_read_again_from_memory_and_one_twice_its_size_is_not() {
    let dir = cached_systems(512);
    let t = target(&dir, "raid0-4d-c64.toml");
    let opts = |size: &'static str, invalidate: &'static str| {
        [
            ("rw", "read"),
            ("bs", "1m"),
            ("size", size),
            ("invalidate", invalidate),
        ]
    };
    let (cold, warm) = twice(&t, &opts("256m", "0"));
    assert!(
        warm > 5.0 * cold,
        "a 256 MiB file in 512 MiB of cache: {cold:.0} then {warm:.0} MB/s"
    );
    let (cold, again) = twice(&t, &opts("1g", "0"));
    assert!(
        again < 1.15 * cold,
        "a 1 GiB file through 512 MiB of cache: {cold:.0} then {again:.0} MB/s"
    );
    let (cold, dropped) = twice(&t, &opts("256m", "1"));
    assert!(
        dropped < 1.15 * cold,
        "a 256 MiB file dropped from the cache before the second job: {cold:.0} then {dropped:.0} MB/s"
    );
}

/// Read-ahead: a program reading 4 KiB at a time gets the array's streaming rate, because the
/// host reads ahead in windows of up to two of md's stripes; without the page cache each 4 KiB
/// read waits its turn.
#[test]
fn small_buffered_sequential_reads_stream_through_read_ahead() {
    let dir = cached_systems(512);
    let t = target(&dir, "raid0-4d-c64.toml");
    let opts = |direct: &'static str| {
        [
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "256m"),
            ("direct", direct),
        ]
    };
    let buffered = sim_run(&t, &opts("0"));
    let direct = mb_s(&t, &opts("1"));
    let streaming = mb_s(
        &t,
        &[
            ("rw", "read"),
            ("bs", "1m"),
            ("size", "1g"),
            ("direct", "1"),
            ("iodepth", "4"),
        ],
    );
    let b = buffered.aggregate().summary().mb_s;
    assert!(
        b > 3.0 * direct && b > 0.8 * streaming,
        "4 KiB reads: buffered {b:.0}, direct {direct:.0}, 1 MiB × 4 direct {streaming:.0} MB/s"
    );
    let pc = cache_use(&buffered, 0);
    assert!(pc.read_ahead_bytes >= pc.hit_bytes, "{pc:?}");
    assert!(pc.hit_bytes > 100 * pc.miss_bytes, "{pc:?}");
}

/// A program's buffer far larger than the read-ahead is filled window by window, every byte
/// read once: a 64 MiB buffer reads as fast as a 1 MiB one.
#[test]
fn a_large_buffer_is_read_window_by_window() {
    let dir = cached_systems(512);
    let t = target(&dir, "raid0-4d-c64.toml");
    let run = |bs: &'static str| sim_run(&t, &[("rw", "read"), ("bs", bs), ("size", "512m")]);
    let (big, small) = (run("64m"), run("1m"));
    let pc = cache_use(&big, 0);
    assert_eq!(big.jobs[0].read.total_ios, 8);
    assert_eq!(pc.hit_bytes + pc.miss_bytes, 512 << 20, "{pc:?}");
    let (b, s) = (
        big.aggregate().summary().mb_s,
        small.aggregate().summary().mb_s,
    );
    assert!(
        (b - s).abs() < 0.1 * s,
        "64 MiB buffer {b:.0} MB/s, 1 MiB {s:.0}"
    );
}

/// A reader whose buffer is its whole read-ahead window (1 MiB) streams at the array's rate
/// whatever advice it gave: the two block requests of each window reach the drives in the
/// order the cache sent them, so no drive serves a window's second half first and seeks
/// back for its first (as the host's varying cost per command had them do, at two thirds of
/// the rate); with fio's default advice (sequential) the window doubles and it streams too.
#[test]
fn a_window_the_size_of_the_buffer_streams() {
    let dir = cached_systems_with(512, "read_ahead_kib = 1024\n");
    let t = target(&dir, "raid0-4d-c64.toml");
    let direct = mb_s(
        &t,
        &[
            ("rw", "read"),
            ("bs", "1m"),
            ("size", "512m"),
            ("direct", "1"),
        ],
    );
    for hint in ["0", "1"] {
        let buffered = mb_s(
            &t,
            &[
                ("rw", "read"),
                ("bs", "1m"),
                ("size", "512m"),
                ("fadvise_hint", hint),
            ],
        );
        assert!(
            buffered > 0.95 * direct,
            "fadvise_hint={hint}: buffered {buffered:.0} MB/s, direct {direct:.0}"
        );
    }
}

/// fio's `pre_read`: the job's region is in the cache when it starts (read untimed), so its
/// random reads all find their pages; without it (and with fio's `invalidate`) they reach
/// the drives. A host without a page cache refuses it in one line.
#[test]
fn pre_read_starts_a_job_with_its_region_in_the_cache() {
    let dir = cached_systems(512);
    let t = target(&dir, "raid0-4d-c64.toml");
    let opts = |pre: &'static str| {
        [
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "64m"),
            ("io_size", "16m"),
            ("pre_read", pre),
        ]
    };
    let warm = sim_run(&t, &opts("1"));
    let pc = cache_use(&warm, 0);
    // (The simulation may stop once the rate has settled: every read it ran found its page.)
    assert!(pc.hit_bytes > 0 && pc.miss_bytes == 0, "{pc:?}");
    let cold = sim_run(&t, &opts("0"));
    let pc = cache_use(&cold, 0);
    assert!(pc.miss_bytes > 10 * pc.hit_bytes, "{pc:?}");
    let (w, c) = (
        warm.aggregate().summary().iops,
        cold.aggregate().summary().iops,
    );
    assert!(w > 20.0 * c, "pre-read {w:.0} IOPS, cold {c:.0}");

    let bare = format!(
        "sim:{}",
        repo().join("systems/xdd2008/raid5.toml").display()
    );
    let mut s = spec(
        &bare,
        &[("rw", "randread"), ("size", "16m"), ("pre_read", "1")],
    );
    s.direct = false;
    let e = raidlab_sim::run(&[s]).unwrap_err().to_string();
    assert!(
        e.contains("pre_read reads into the host's page cache") && !e.contains('\n'),
        "{e}"
    );
}

/// Buffered writes: under the background threshold they only fill memory (fio without
/// end_fsync reports that); far over the page cache they go at the rate write-back reaches
/// the array, writers waiting on the dirty limit.
#[test]
fn buffered_writes_fill_memory_then_wait_for_write_back() {
    let dir = cached_systems(512);
    let t = target(&dir, "raid5-4d-c64.toml");
    let small = mb_s(&t, &[("rw", "write"), ("bs", "1m"), ("size", "32m")]);
    assert!(
        small > 1000.0,
        "32 MiB into 512 MiB of cache: {small:.0} MB/s"
    );
    let big = sim_run(&t, &[("rw", "write"), ("bs", "1m"), ("size", "4g")]);
    let b = big.aggregate().summary().mb_s;
    let direct = mb_s(
        &t,
        &[
            ("rw", "write"),
            ("bs", "512k"),
            ("size", "2g"),
            ("direct", "1"),
            ("iodepth", "16"),
        ],
    );
    assert!(
        b < 1.3 * direct && b > 0.5 * direct,
        "4 GiB buffered {b:.0} MB/s, 512 KiB direct writes at depth 16 {direct:.0} MB/s"
    );
    let pc = cache_use(&big, 0);
    assert!(
        pc.throttled_writes > 0 && pc.written_back_bytes > 1 << 30,
        "{pc:?}"
    );
    // What is dirty at the end stays under the limit (20% of the cache) plus what is in
    // flight.
    assert!(
        pc.dirty_bytes <= pc.capacity_bytes / 5 + (64 << 20),
        "{pc:?}"
    );
}

/// md reads ahead at least two full stripes of its array; a LUN behind a controller reads
/// ahead the host's default.
#[test]
fn md_arrays_read_ahead_two_stripes() {
    let dir = cached_systems(512);
    let ra = |file: &str| {
        let sys = raidlab_sim::config::load(&dir.join(file)).unwrap();
        let w = raidlab_sim::world::World::build(&sys).unwrap();
        let pc = w.page_cache.as_ref().unwrap();
        let md = w.luns.iter().position(|l| !l.hidden).unwrap();
        let member = w.luns.iter().position(|l| l.hidden).unwrap();
        (
            pc.cfg.read_ahead[md] * 4096,
            pc.cfg.read_ahead[member] * 4096,
        )
    };
    // 6 drives of RAID 6 with 1 MiB chunks: 4 MiB of data a stripe.
    assert_eq!(ra("raid6-6d-c1024.toml"), (8 << 20, 128 << 10));
    // 4 drives of RAID 0 with 16 KiB chunks: 2 × 64 KiB is less than the default.
    assert_eq!(ra("raid0-4d-c16.toml"), (128 << 10, 128 << 10));
    // `explain` says so, and says when a host has no page cache.
    let e = raidlab_sim::explain(&dir.join("raid0-4d-c16.toml")).unwrap();
    assert!(
        e.contains("  page cache 512 MiB, copies at 2000 MB/s a CPU; read-ahead 128 KiB"),
        "{e}"
    );
    let e = raidlab_sim::explain(&repo().join("systems/xdd2008/raid5.toml")).unwrap();
    assert!(
        e.contains("  no page cache: buffered jobs run as direct ones"),
        "{e}"
    );
}

#[test]
fn a_page_cache_needs_its_copy_rate_and_sane_dirty_ratios() {
    let dir = cached_systems(64);
    let comps = dir.join("components.toml");
    let good = std::fs::read_to_string(&comps).unwrap();
    let ours = "page_cache_mib = 64\ncopy_mb_s = 2000\n";
    let error = |host: &str| {
        std::fs::write(&comps, good.replacen(ours, host, 1)).unwrap();
        let r = raidlab_sim::config::load(&dir.join("raid0-4d-c64.toml"));
        r.expect_err("bad host settings are refused").to_string()
    };
    let e = error("page_cache_mib = 64\n");
    assert!(
        e.contains("components.toml:") && e.contains("needs copy_mb_s"),
        "{e}"
    );
    let e = error("page_cache_mib = 64\ncopy_mb_s = 2000\ndirty_ratio = 5\n");
    assert!(
        e.contains("0 < dirty_background_ratio <= dirty_ratio < 100"),
        "{e}"
    );
    let e = error("copy_mb_s = 2000\n");
    assert!(e.contains("give page_cache_mib as well"), "{e}");
    std::fs::write(&comps, &good).unwrap();
    assert!(raidlab_sim::config::load(&dir.join("raid0-4d-c64.toml")).is_ok());
}

/// Dirty data a job group leaves in memory is written back during the next one: once it is
/// 30 s old, even under the background threshold.
#[test]
fn dirty_data_left_by_one_group_is_written_back_in_the_next() {
    let dir = cached_systems(512);
    let t = target(&dir, "raid0-4d-c64.toml");
    // 32 MiB: under the background threshold (10% of 512 MiB), so it stays dirty.
    let write = spec(&t, &[("rw", "write"), ("bs", "1m"), ("size", "32m")]);
    let mut read = spec(
        &t,
        &[
            ("rw", "randread"),
            ("bs", "4k"),
            ("offset", "1g"),
            ("size", "100m"),
            ("direct", "1"),
            ("runtime", "40s"),
            ("time_based", "1"),
        ],
    );
    read.stonewall = true;
    let only_write = run_to_the_end(std::slice::from_ref(&write));
    let pc = cache_use(&only_write, 0);
    assert_eq!(pc.dirty_bytes, 32 << 20, "{pc:?}");
    let r = run_to_the_end(&[write, read]);
    let pc = cache_use(&r, 1);
    assert_eq!(
        (pc.dirty_bytes, pc.written_back_bytes),
        (0, 32 << 20),
        "{pc:?}"
    );
}

/// fio's end_fsync: the job ends once its dirty data is on the devices, and its rate counts
/// that time — a write that fits in memory then runs near the array's rate, not memory's.
/// The drives are flushed too: 64 MiB fits in their own write caches (4 × 16 MiB), and the
/// job still waits for their media.
#[test]
fn end_fsync_counts_the_flush_in_the_rate() {
    let dir = cached_systems(512);
    let t = target(&dir, "raid0-4d-c64.toml");
    let run = |size: &'static str, fsync: &'static str| {
        sim_run(
            &t,
            &[
                ("rw", "write"),
                ("bs", "1m"),
                ("size", size),
                ("end_fsync", fsync),
            ],
        )
    };
    let direct = mb_s(
        &t,
        &[
            ("rw", "write"),
            ("bs", "1m"),
            ("size", "1g"),
            ("direct", "1"),
            ("iodepth", "4"),
        ],
    );
    let small = run("64m", "1").aggregate().summary().mb_s;
    assert!(
        small < 1.3 * direct,
        "64 MiB flushed: {small:.0} MB/s; direct {direct:.0}"
    );
    let memory = run("256m", "0");
    let flushed = run("256m", "1");
    let (m, f) = (
        memory.aggregate().summary().mb_s,
        flushed.aggregate().summary().mb_s,
    );
    assert!(
        m > 1.8 * f && f < 1.3 * direct,
        "256 MiB: {m:.0} MB/s into memory, {f:.0} flushed; direct {direct:.0}"
    );
    assert!(cache_use(&memory, 0).dirty_bytes > 0);
    assert_eq!(cache_use(&flushed, 0).dirty_bytes, 0);
    // fio's fsync_on_close flushes as the job closes its file at its end: the same flush,
    // counted the same way (fio 3.33: 256 MiB buffered, 47 ms without either, 170 ms with
    // fsync_on_close, 169 ms with end_fsync).
    let closed = sim_run(
        &t,
        &[
            ("rw", "write"),
            ("bs", "1m"),
            ("size", "256m"),
            ("fsync_on_close", "1"),
        ],
    );
    assert_eq!(cache_use(&closed, 0).dirty_bytes, 0);
    assert_eq!(
        closed.aggregate().summary().mb_s,
        flushed.aggregate().summary().mb_s
    );
    // Far over the cache (the run converges and is extended): the flush of what is dirty at
    // the end still costs a little.
    let (a, b) = (run("8g", "0"), run("8g", "1"));
    let (a, b) = (a.aggregate().summary().mb_s, b.aggregate().summary().mb_s);
    assert!(
        b < a && b > 0.9 * a,
        "8 GiB: {a:.0} MB/s, with end_fsync {b:.0}"
    );
}

/// A direct write makes the clean cached pages it covers stale: a buffered re-read reads
/// that part from the devices again, and only that part.
#[test]
fn a_direct_write_drops_the_cached_pages_it_covers() {
    let dir = cached_systems(512);
    let t = target(&dir, "raid0-4d-c64.toml");
    let read = |stonewall: bool| {
        let mut s = spec(
            &t,
            &[
                ("rw", "read"),
                ("bs", "1m"),
                ("size", "64m"),
                ("invalidate", "0"),
            ],
        );
        s.stonewall = stonewall;
        s
    };
    let mut write = spec(
        &t,
        &[
            ("rw", "write"),
            ("bs", "1m"),
            ("size", "32m"),
            ("direct", "1"),
        ],
    );
    write.stonewall = true;
    // Bytes the cache read from the devices over the run: each group's (one job each).
    let from_devices = |specs: &[raidlab_workload::JobSpec]| {
        let r = raidlab_sim::run(specs).unwrap();
        (0..r.jobs.len())
            .map(|i| {
                let pc = cache_use(&r, i);
                pc.miss_bytes + pc.read_ahead_bytes
            })
            .sum::<u64>()
    };
    let without = from_devices(&[read(false), read(true)]);
    let with = from_devices(&[read(false), write, read(true)]);
    let again = with - without;
    assert!(
        (32 << 20..=(32 << 20) + (1 << 20)).contains(&again),
        "read again after the direct write: {again} bytes"
    );
}

/// end_fsync on a direct job: the drive's write cache is flushed too, so 12 MiB that fit in
/// it are counted at the media's rate (the seed 003 drive writes 88 MB/s), not the link's.
#[test]
fn end_fsync_flushes_a_drives_write_cache_after_direct_writes() {
    let t = system("linuxraid2010/raid0-4d-c64.toml#sd0lun");
    let run = |fsync: &'static str| {
        mb_s(
            &t,
            &[
                ("rw", "write"),
                ("bs", "1m"),
                ("size", "12m"),
                ("direct", "1"),
                ("end_fsync", fsync),
            ],
        )
    };
    let (cached, flushed) = (run("0"), run("1"));
    assert!(
        cached > 150.0 && flushed < 95.0,
        "12 MiB: {cached:.0} MB/s into the drive's cache, {flushed:.0} flushed"
    );
}

/// end_fsync below a battery-backed write-back controller: the controller answers the flush
/// (its cache holds the data stable), so the job does not wait for its drives' write caches
/// — as a sync in the middle of a job (`fsync=N`) does not. Seed 004's controller, given the
/// battery it lacks, over drives with their write caches on.
#[test]
fn end_fsync_below_a_battery_backed_controller_does_not_wait_for_the_drives() {
    let d = std::env::temp_dir().join(format!("raidlab-sim-bbu-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    for f in ["components.toml", "raid0-4d.toml"] {
        let text = std::fs::read_to_string(repo().join("systems/iometer2008").join(f)).unwrap();
        let text = text.replace("battery = false", "battery = true");
        std::fs::write(d.join(f), text).unwrap();
    }
    let t = target(&d, "raid0-4d.toml");
    let run = |fsync: &'static str| {
        let r = sim_run(
            &t,
            &[
                ("rw", "randwrite"),
                ("bs", "64k"),
                ("size", "64m"),
                ("iodepth", "8"),
                ("direct", "1"),
                ("end_fsync", fsync),
            ],
        );
        r.jobs[0].write.runtime_ns
    };
    let (plain, synced) = (run("0"), run("1"));
    assert_eq!(plain, synced, "runtime without and with end_fsync, ns");
}
