//! When requests go in virtual time: fio's rate caps, think time, start delay, periodic
//! syncs and minimum rates, scheduled by the workload crate's `Pacer` as in a real run.

mod common;
use common::{run_to_the_end, sim_run, spec, system, variant};
use raidlab_result::JobResult;

fn job(target: &str, opts: &[(&str, &str)]) -> JobResult {
    sim_run(target, opts).jobs.remove(0)
}

/// The same job simulated to its end, without stopping early at a steady rate.
fn job_to_the_end(target: &str, opts: &[(&str, &str)]) -> JobResult {
    run_to_the_end(&[spec(target, opts)]).jobs.remove(0)
}

const SEQ_READ: [(&str, &str); 5] = [
    ("rw", "read"),
    ("bs", "4k"),
    ("direct", "1"),
    ("runtime", "2s"),
    ("time_based", "1"),
];

fn with<'a>(base: &[(&'a str, &'a str)], more: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut v = base.to_vec();
    v.extend_from_slice(more);
    v
}

/// rate_iops=1000 for 2 s is 2000 requests: exactly, simulated to the end; within 1% when
/// the run stops at its steady rate and extends it. Unpaced, the array does far more.
#[test]
fn rate_iops_caps_a_job_at_its_rate() {
    let t = system("xdd2008/raid0.toml");
    let free = job(&t, &SEQ_READ);
    assert!(free.read.total_ios > 20_000, "{}", free.read.total_ios);
    for depth in ["1", "16"] {
        let o = with(&SEQ_READ, &[("rate_iops", "1000"), ("iodepth", depth)]);
        let full = job_to_the_end(&t, &o);
        assert!(
            (1999..=2000).contains(&full.read.total_ios),
            "iodepth={depth}: {}",
            full.read.total_ios
        );
        let quick = job(&t, &o);
        let n = quick.read.total_ios as f64;
        assert!((n - 2000.0).abs() <= 20.0, "iodepth={depth}: {n}");
    }
    // rate= counts bytes: 4 MiB/s of 64 KiB reads is 64 a second.
    let o = with(&SEQ_READ, &[("rate", "4m"), ("bs", "64k")]);
    let full = job_to_the_end(&t, &o);
    assert!(
        (127..=128).contains(&full.read.total_ios),
        "{}",
        full.read.total_ios
    );
    // A cap on writes only leaves reads alone.
    let o = with(&SEQ_READ, &[("rate_iops", ",1000")]);
    assert!(job(&t, &o).read.total_ios > 20_000);
}

/// rate_process=poisson: exponential gaps around the same mean, drawn from the job's seed:
/// the same run twice is the same bit for bit, another seed another run.
#[test]
fn poisson_arrivals_keep_the_rate_and_repeat() {
    let t = system("xdd2008/raid0.toml");
    let o = with(
        &SEQ_READ,
        &[("rate_iops", "1000"), ("rate_process", "poisson")],
    );
    let a = job_to_the_end(&t, &o);
    let b = job_to_the_end(&t, &o);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let n = a.read.total_ios as f64;
    assert!((n - 2000.0).abs() < 150.0, "{n}");
    let linear = job_to_the_end(&t, &with(&SEQ_READ, &[("rate_iops", "1000")]));
    assert_ne!(a.read.total_ios, linear.read.total_ios);
    let c = job_to_the_end(&t, &with(&o, &[("randseed", "7")]));
    assert_ne!(a.read.total_ios, c.read.total_ios);
}

/// thinktime=1ms after every request: each request costs its service time plus 1 ms.
/// thinktime_blocks=4 thinks after every fourth, so four times as many go.
#[test]
fn thinktime_stalls_between_requests() {
    let t = system("xdd2008/raid0.toml");
    let one = job_to_the_end(&t, &with(&SEQ_READ, &[("thinktime", "1000")]));
    let n = one.read.total_ios;
    assert!((1500..2000).contains(&n), "{n}");
    let four = job_to_the_end(
        &t,
        &with(
            &SEQ_READ,
            &[
                ("thinktime", "1ms"),
                ("thinktime_blocks", "4"),
                ("iodepth", "4"),
            ],
        ),
    );
    let m = four.read.total_ios;
    assert!(m > 3 * n && m <= 4 * 2000, "{m} vs {n}");
}

/// startdelay: the job starts that much later; its runtime and requests are as without.
#[test]
fn startdelay_starts_the_job_later() {
    let t = system("xdd2008/raid0.toml");
    let o = with(&SEQ_READ, &[("rate_iops", "500")]);
    let now = job_to_the_end(&t, &o);
    let later = job_to_the_end(&t, &with(&o, &[("startdelay", "3")]));
    assert_eq!(later.read.total_ios, now.read.total_ios);
    assert_eq!(later.read.runtime_ns, now.read.runtime_ns);
    assert!(
        later.elapsed_ns >= now.elapsed_ns + 3_000_000_000,
        "{} vs {}",
        later.elapsed_ns,
        now.elapsed_ns
    );
}

/// fsync=8: a flush after every 8 writes, counted in the sync section. Drives with their
/// write caches on behind a controller without a battery must write out what they hold
/// first; a controller's battery-backed cache is stable at once, so there a flush costs
/// only its trip down the path.
#[test]
fn fsync_flushes_volatile_caches_and_not_battery_backed_ones() {
    let o = [
        ("rw", "randwrite"),
        ("bs", "4k"),
        ("direct", "1"),
        ("size", "4m"),
        ("fsync", "8"),
    ];
    let drives = job_to_the_end(&system("iometer2008/raid5-4d.toml"), &o);
    let bbu = job_to_the_end(&system("xdd2008/raid5.toml"), &o);
    for j in [&drives, &bbu] {
        assert_eq!(j.write.total_ios, 1024);
        // One after every 8 writes but the last: 1024 / 8 - 1.
        assert_eq!(j.sync.total_ios, 127, "{}", j.target);
        assert_eq!(j.sync.lat.count(), 127);
    }
    // Stopped at a steady rate and extended, the syncs are extended with the writes.
    let quick = job(&system("iometer2008/raid5-4d.toml"), &o);
    assert!(
        quick.sync.total_ios.abs_diff(127) <= 3,
        "{}",
        quick.sync.total_ios
    );
    assert!(
        bbu.sync.lat.max() < 100_000,
        "battery-backed: {} ns",
        bbu.sync.lat.max()
    );
    assert!(
        drives.sync.lat.mean() > 1_000_000.0,
        "drive caches written out: {} ns",
        drives.sync.lat.mean()
    );
    // The flushes cost the job time: fewer writes a second than without them.
    let no_sync = job(&system("iometer2008/raid5-4d.toml"), &o[..4]);
    assert_eq!(no_sync.sync.total_ios, 0);
    assert!(no_sync.write.iops() > drives.write.iops());
}

/// A buffered job's fdatasync writes its LUN's dirty pages back before it returns.
#[test]
fn fdatasync_writes_back_a_buffered_jobs_pages() {
    let t = system("linuxraid2010/raid5-4d-c64.toml");
    let o = [
        ("rw", "write"),
        ("bs", "64k"),
        ("size", "64m"),
        ("fdatasync", "64"),
    ];
    let r = sim_run(&t, &o);
    let j = &r.jobs[0];
    assert_eq!(j.sync.total_ios, 1024 / 64 - 1);
    let pc = j.sim.as_ref().unwrap().page_cache.as_ref().unwrap();
    assert!(pc.written_back_bytes >= 60 << 20, "{pc:?}");
    let plain = sim_run(&t, &o[..3]);
    let pc0 = plain.jobs[0]
        .sim
        .as_ref()
        .unwrap()
        .page_cache
        .clone()
        .unwrap();
    assert!(pc0.written_back_bytes < pc.written_back_bytes, "{pc0:?}");
}

/// rate_min: a job that cannot keep the minimum ends with fio's error (EIO) after its 2 s
/// of grace; one that keeps it runs on.
#[test]
fn a_missed_rate_min_ends_the_job_with_an_error() {
    let t = system("xdd2008/raid0.toml");
    let o = with(
        &SEQ_READ,
        &[("runtime", "10s"), ("rate_iops", "100"), ("rate_min", "1m")],
    );
    let j = job_to_the_end(&t, &o);
    assert_eq!(j.errno, 5);
    let e = j.error.as_deref().unwrap_or("");
    assert!(e.contains("rate_min=1048576B/s not met, got 4"), "{e}");
    assert!(j.read.total_ios <= 400, "{}", j.read.total_ios);
    let ok = job_to_the_end(&t, &with(&o, &[("rate_min", "100k")]));
    assert_eq!(ok.error, None);
}

/// O_SYNC writes are a real file's; the simulator refuses them in one line.
#[test]
fn sync_writes_are_refused_in_one_line() {
    let s = spec(
        &system("xdd2008/raid0.toml"),
        &[("rw", "write"), ("sync", "1")],
    );
    let e = raidlab_sim::run(&[s]).unwrap_err().to_string();
    assert!(
        !e.contains('\n') && e.contains("sync=sync") && e.contains("fsync=N"),
        "{e}"
    );
}

/// A drive with its write cache on takes a write's data over its interface while its media
/// writes the last one; when the media is done first, the drive writes the new data as it
/// comes in, whether or not another command arrives. (It once looked again only when the
/// media's command ended, found nothing ready and waited for the next command: the write
/// before a sync stayed in the cache, and the sync waiting for it never returned.)
#[test]
fn a_write_whose_data_comes_in_after_the_media_is_done_is_written_and_synced() {
    // Seed 002's Maxtor behind an interface slower than its media, so that taking a write
    // in takes longer than writing it.
    let target = variant(
        "bokhari2006",
        "direct-1disk.toml",
        &[(
            "disk = \"maxtor-7y250m0\"",
            "disk = \"slow\"\n\n[[disk]]\nname = \"slow\"\nbase = \"maxtor-7y250m0\"\n\
             interface_mb_s = 20",
        )],
    );
    let opts = [
        ("rw", "write"),
        ("bs", "64k"),
        ("size", "4m"),
        ("direct", "1"),
        ("fsync", "8"),
    ];
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(sim_run(&target, &opts).jobs.remove(0));
    });
    let j = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the run ends (its syncs return)");
    assert_eq!(j.write.io_bytes, 4 << 20);
    // (As fio counts them: none after the last write.)
    assert_eq!(j.sync.total_ios, 64 / 8 - 1);
    // 64 writes, each taken in at the interface's 20 MB/s: the run is that long, and each
    // sync adds a few milliseconds at most.
    let taken_in = (4 << 20) as f64 / 20e6;
    let ran = j.write.runtime_ns as f64 / 1e9;
    assert!(ran > taken_in && ran < 1.3 * taken_in, "{ran:.3} s");
}

/// fio's `iodepth_low`: a full queue of 32 drains to 4 before it is filled again, so the
/// drives see shallower queues and the job issues at every depth from 5 up; with
/// `iodepth_low` equal to the depth (or at fio's default) the run is the same bit for bit.
/// `iodepth_batch_complete_min=28` drains it to the same point.
#[test]
fn a_full_queue_drains_to_iodepth_low_before_it_is_filled_again() {
    let t = system("xdd2008/raid5.toml");
    let base = [
        ("rw", "randread"),
        ("bs", "8k"),
        ("direct", "1"),
        ("iodepth", "32"),
        ("size", "1g"),
        ("runtime", "2s"),
        ("time_based", "1"),
    ];
    let full = job_to_the_end(&t, &base);
    let same = job_to_the_end(&t, &with(&base, &[("iodepth_low", "32")]));
    assert_eq!(full.read, same.read);
    assert_eq!(full.iodepth_level, same.iodepth_level);
    // At fio's default every request but the first 31 goes in at depth 32.
    let at = |r: &JobResult, bucket: usize| r.iodepth_level[bucket] as f64;
    let total = |r: &JobResult| r.iodepth_level.iter().sum::<u64>() as f64;
    assert!(
        at(&full, 5) / total(&full) > 0.99,
        "{:?}",
        full.iodepth_level
    );
    let low = job_to_the_end(&t, &with(&base, &[("iodepth_low", "4")]));
    // Refills of 28 go in at depths 5 to 32: 3/28 of them at 5–7, 8/28 at 8–15, 16/28 at
    // 16–31 — none at depth 32 but each refill's last.
    let share = |b: usize| at(&low, b) / total(&low);
    assert!(
        (share(2) - 3.0 / 28.0).abs() < 0.02,
        "{:?}",
        low.iodepth_level
    );
    assert!(
        (share(3) - 8.0 / 28.0).abs() < 0.02,
        "{:?}",
        low.iodepth_level
    );
    assert!(
        (share(4) - 16.0 / 28.0).abs() < 0.02,
        "{:?}",
        low.iodepth_level
    );
    // Shallower queues at the drives: fewer IOPS.
    assert!(
        low.read.total_ios < full.read.total_ios,
        "{} against {}",
        low.read.total_ios,
        full.read.total_ios
    );
    let batch = job_to_the_end(&t, &with(&base, &[("iodepth_batch_complete_min", "28")]));
    assert_eq!(batch.read, low.read);
}
