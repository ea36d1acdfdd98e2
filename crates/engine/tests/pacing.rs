//! When requests go in real time: fio's rate caps, think time, start delay, periodic syncs
//! and minimum rates, scheduled by the workload crate's `Pacer`. Exact counts come from an
//! injected clock (sleeping moves it on); runs on the wall clock are judged loosely.

mod common;
use common::{run_block, run_paths, spec, MemTarget};
use raidlab_engine::clock::Stepping;
use raidlab_engine::{RunOptions, Target};
use raidlab_result::JobResult;
use std::sync::Arc;

/// One job of the null engine on a clock that moves 1 µs a reading and jumps when slept.
fn stepped(opts: &[(&str, &str)]) -> JobResult {
    let mut o = vec![
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "1m"),
        ("ioengine", "null"),
        ("filename", "nowhere"),
    ];
    o.extend_from_slice(opts);
    let clock = Arc::new(Stepping::new(1000));
    raidlab_engine::run_with_clock(
        &[spec(&o)],
        &mut raidlab_engine::resolve_path,
        &RunOptions::default(),
        clock,
    )
    .unwrap()
    .jobs
    .remove(0)
}

/// rate_iops=1000 for 1 s is 1000 requests at any iodepth (the first goes at once, so one
/// more may fit in); rate= counts bytes; a cap on one direction leaves the other free.
#[test]
fn a_rate_cap_holds_on_an_injected_clock() {
    let timed = [("runtime", "1s"), ("time_based", "1")];
    for depth in ["1", "8"] {
        let mut o = vec![("rate_iops", "1000"), ("iodepth", depth)];
        o.extend_from_slice(&timed);
        let j = stepped(&o);
        assert!(
            (1000..=1001).contains(&j.read.total_ios),
            "iodepth={depth}: {}",
            j.read.total_ios
        );
    }
    let mut o = vec![("rate", "4m"), ("bs", "64k")];
    o.extend_from_slice(&timed);
    assert!((64..=65).contains(&stepped(&o).read.total_ios));
    let mut o = vec![("rate_iops", ",10")];
    o.extend_from_slice(&timed);
    assert!(stepped(&o).read.total_ios > 10_000);
    // Poisson: around the rate, and the same run twice alike.
    let mut o = vec![("rate_iops", "1000"), ("rate_process", "poisson")];
    o.extend_from_slice(&timed);
    let (a, b) = (stepped(&o), stepped(&o));
    assert_eq!(a.read.total_ios, b.read.total_ios);
    assert!(
        a.read.total_ios.abs_diff(1000) < 100,
        "{}",
        a.read.total_ios
    );
}

/// thinktime=1ms after each completed request, on a clock where a request costs a few µs:
/// about 100 in 100 ms (the first two go before the first stall: fio counts completed
/// requests); thinktime_spin spends part of it reading the clock.
#[test]
fn thinktime_stalls_on_an_injected_clock() {
    for spin in ["0", "500"] {
        let j = stepped(&[
            ("thinktime", "1000"),
            ("thinktime_spin", spin),
            ("runtime", "100ms"),
            ("time_based", "1"),
        ]);
        assert!(
            (90..=101).contains(&j.read.total_ios),
            "spin={spin}: {}",
            j.read.total_ios
        );
    }
}

/// startdelay: the job starts later (fio counts it in the elapsed time, not the runtime).
#[test]
fn startdelay_delays_the_start() {
    let o = [("rate_iops", "100"), ("runtime", "1s"), ("time_based", "1")];
    let now = stepped(&o);
    let mut d = o.to_vec();
    d.push(("startdelay", "2"));
    let later = stepped(&d);
    assert_eq!(later.read.total_ios, now.read.total_ios);
    assert!(later.elapsed_ns >= now.elapsed_ns + 2_000_000_000);
    assert!(later.read.runtime_ns < 1_100_000_000);
}

/// fsync=4: the target is flushed after every 4 writes, once those writes have completed,
/// and each flush's time is its latency in the sync section; none follows the last write
/// (the run's own flush after the job does, outside it).
#[test]
fn fsync_every_n_writes_flushes_the_target() {
    for depth in ["1", "8"] {
        let clock = Arc::new(Stepping::new(1000));
        let mut dev = MemTarget::new(1 << 20, 512);
        dev.flush_takes = Some((Arc::clone(&clock), 3_000_000));
        let dev = Arc::new(dev);
        let mut s = spec(&[
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "256k"),
            ("iodepth", depth),
            ("fsync", "4"),
        ]);
        s.filenames = vec!["mem".into()];
        let d = Arc::clone(&dev);
        let mut resolve = |name: &str| {
            Ok(Target::Block {
                label: name.to_string(),
                dev: Arc::clone(&d) as Arc<dyn raidlab_engine::BlockTarget>,
            })
        };
        let r = raidlab_engine::run_with_clock(&[s], &mut resolve, &RunOptions::default(), clock)
            .unwrap();
        let j = &r.jobs[0];
        let flushes = dev.flushes.lock().unwrap().clone();
        let mut want: Vec<u64> = (1..16).map(|k| 4 * k).collect();
        want.push(64);
        assert_eq!(flushes, want, "iodepth={depth}");
        assert_eq!(j.sync.total_ios, 15);
        assert!(j.sync.lat.min() >= 3_000_000, "{}", j.sync.lat.min());
    }
}

/// A job that cannot keep its rate_min ends after fio's 2 s of grace with EIO.
#[test]
fn a_missed_rate_min_ends_the_job() {
    let j = stepped(&[
        ("rate_iops", "100"),
        ("rate_min", "1m"),
        ("runtime", "10s"),
        ("time_based", "1"),
    ]);
    assert_eq!(j.errno, libc::EIO);
    let e = j.error.unwrap_or_default();
    assert!(e.contains("rate_min=1048576B/s not met"), "{e}");
    assert!(j.read.total_ios < 400, "{}", j.read.total_ios);
}

/// On a real file in /dev/shm and the wall clock: a cap of 500 IOPS over 1 s issues no
/// more than the cap allows (with room for the first request and a late clock), and not
/// far fewer; fsync=4 and sync=dsync run, the syncs counted as fio counts them.
#[test]
fn a_real_file_keeps_its_cap_and_syncs() {
    let path = format!("/dev/shm/raidlab-pacing-{}", std::process::id());
    let run = |opts: &[(&str, &str)]| {
        let mut o = vec![("filename", path.as_str()), ("size", "1m"), ("bs", "4k")];
        o.extend_from_slice(opts);
        run_paths(&[spec(&o)], false).unwrap().jobs.remove(0)
    };
    let j = run(&[
        ("rw", "randread"),
        ("iodepth", "4"),
        ("rate_iops", "500"),
        ("runtime", "1s"),
        ("time_based", "1"),
    ]);
    let n = j.read.total_ios;
    assert!(
        (250..=502).contains(&n),
        "{n} requests in 1 s at rate_iops=500"
    );
    let j = run(&[("rw", "write"), ("fsync", "4"), ("ioengine", "psync")]);
    assert_eq!((j.write.total_ios, j.sync.total_ios), (256, 63));
    let j = run(&[("rw", "write"), ("sync", "dsync")]);
    assert_eq!((j.write.total_ios, j.error), (256, None));
    let _ = std::fs::remove_file(&path);
}

/// sync=1 needs a file to open O_SYNC: an in-process target refuses it in one line.
#[test]
fn sync_writes_on_an_in_process_target_are_refused() {
    let dev = Arc::new(MemTarget::new(1 << 20, 512));
    let mut s = spec(&[("rw", "write"), ("sync", "1")]);
    s.filenames = vec!["mem".into()];
    let e = run_block(&[s], dev, &RunOptions::default()).unwrap_err();
    let e = e.to_string();
    assert!(
        !e.contains('\n') && e.contains("sync=1") && e.contains("fsync=N"),
        "{e}"
    );
}
