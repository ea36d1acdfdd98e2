//! The engine over in-process block targets and an injected clock: ordering, stopping,
//! errors, stale blocks, alignment, determinism.

mod common;
use common::*;
use raidlab_engine::clock::Stepping;
use raidlab_engine::RunOptions;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[test]
fn stonewall_runs_groups_one_after_another() {
    let dev = Arc::new(MemTarget::new(2 << 20, 512));
    let a = spec(&[
        ("name", "a"),
        ("rw", "randwrite"),
        ("bs", "4k"),
        ("size", "1m"),
        ("iodepth", "8"),
    ]);
    let mut b = spec(&[
        ("name", "b"),
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "1m"),
        ("offset", "1m"),
        ("iodepth", "8"),
    ]);
    b.stonewall = true;
    let (mut a, mut b) = (a, b);
    a.filenames = vec!["mem".into()];
    b.filenames = vec!["mem".into()];
    let r = run_block(&[a, b], dev.clone(), &RunOptions::default()).unwrap();
    assert_eq!(r.jobs.len(), 2);
    assert_eq!((r.jobs[0].groupid, r.jobs[1].groupid), (0, 1));
    let log = dev.log.lock().unwrap();
    let last_a = log
        .iter()
        .filter(|e| e.2 < 1 << 20)
        .map(|e| e.0)
        .max()
        .unwrap();
    let first_b = log
        .iter()
        .filter(|e| e.2 >= 1 << 20)
        .map(|e| e.0)
        .min()
        .unwrap();
    assert!(
        last_a < first_b,
        "job b started (request {first_b}) before job a finished (request {last_a})"
    );
    assert_eq!(log.len(), 512);
    assert_eq!(r.jobs[0].engine, "block");
}

#[test]
fn requests_never_leave_the_region() {
    let dev = Arc::new(MemTarget::new(8 << 20, 4096));
    let mut s = spec(&[
        ("rw", "randrw"),
        ("bs", "16k"),
        ("offset", "3m"),
        ("size", "2m"),
        ("loops", "5"),
        ("iodepth", "16"),
        ("numjobs", "2"),
        ("offset_increment", "2m"),
    ]);
    s.filenames = vec!["mem".into()];
    run_block(&[s], dev.clone(), &RunOptions::default()).unwrap();
    let log = dev.log.lock().unwrap();
    assert_eq!(log.len(), 2 * 5 * 128);
    assert!(log
        .iter()
        .all(|&(_, _, off, len)| off >= 3 << 20 && off + len <= 7 << 20));
}

#[test]
fn the_alignment_of_a_block_target_is_checked_before_any_io() {
    let dev = Arc::new(MemTarget::new(1 << 20, 4096));
    let mut s = spec(&[("rw", "write"), ("bs", "512")]);
    s.filenames = vec!["array:x".into()];
    let e = run_block(&[s], dev.clone(), &RunOptions::default()).unwrap_err();
    assert!(e.is_usage());
    assert!(
        e.to_string().contains("bs=512") && e.to_string().contains("4096"),
        "{e}"
    );
    assert!(dev.log.lock().unwrap().is_empty());
}

#[test]
fn a_stop_request_drains_and_returns_what_ran() {
    let stop = Arc::new(AtomicBool::new(false));
    let mut dev = MemTarget::new(4 << 20, 512);
    dev.stop_after = Some((100, Arc::clone(&stop)));
    let mut s = spec(&[
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "4m"),
        ("iodepth", "4"),
        ("loops", "50"),
    ]);
    s.filenames = vec!["mem".into()];
    let mut later = s.clone();
    later.stonewall = true;
    let opts = RunOptions {
        stop: Arc::clone(&stop),
        ..Default::default()
    };
    let r = run_block(&[s, later], Arc::new(dev), &opts).unwrap();
    assert_eq!(
        r.jobs.len(),
        1,
        "the stonewalled job must not start after a stop"
    );
    let j = &r.jobs[0];
    assert_eq!(j.stopped.as_deref(), Some("interrupted"));
    assert!(
        j.read.total_ios >= 100 && j.read.total_ios < 50 * 1024,
        "{}",
        j.read.total_ios
    );
    assert_eq!(j.read.clat.count(), j.read.total_ios);
}

#[test]
fn an_io_error_ends_the_job_and_names_the_offset() {
    let mut dev = MemTarget::new(1 << 20, 512);
    dev.fail_at = Some(300 * 1024);
    let mut s = spec(&[("rw", "read"), ("bs", "4k"), ("iodepth", "1")]);
    s.filenames = vec!["mem".into()];
    let r = run_block(&[s], Arc::new(dev), &RunOptions::default()).unwrap();
    let j = &r.jobs[0];
    let e = j.error.as_deref().unwrap();
    assert_eq!(j.error_code(), libc::EIO, "fio's error: the errno");
    assert!(
        e.contains("read of 4096 bytes at offset 307200 on mem"),
        "{e}"
    );
    assert_eq!(j.read.total_ios, 75);
}

#[test]
fn verify_catches_a_stale_block_from_a_lost_write() {
    let mut dev = MemTarget::new(1 << 20, 512);
    dev.lose_rewrites_at = Some(64 * 1024);
    let mut w = spec(&[
        ("name", "w"),
        ("rw", "write"),
        ("bs", "4k"),
        ("size", "256k"),
        ("loops", "2"),
        ("verify", "1"),
    ]);
    w.filenames = vec!["mem".into()];
    let mut r = spec(&[
        ("name", "r"),
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "256k"),
        ("verify", "1"),
    ]);
    r.filenames = vec!["mem".into()];
    r.stonewall = true;
    let res = run_block(&[w, r], Arc::new(dev), &RunOptions::default()).unwrap();
    // The write job's own read-back (fio's do_verify) catches it first, then the read job.
    for j in &res.jobs {
        let v = j.verify.as_ref().unwrap();
        assert_eq!((v.blocks_checked, v.mismatches), (64, 1), "{}", j.name);
        let m = v.first_mismatch.as_deref().unwrap();
        assert!(
            m.starts_with("stale block at offset 65536"),
            "{}: {m}",
            j.name
        );
        assert!(j
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("verify: stale block")));
    }
}

#[test]
fn an_injected_clock_makes_time_based_runs_deterministic() {
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "1m"),
        ("iodepth", "8"),
        ("ioengine", "null"),
        ("runtime", "1ms"),
        ("time_based", "1"),
        ("filename", "nowhere"),
    ]);
    let go_batched = |ramp: &str, batch: &str| {
        let mut s = s.clone();
        raidlab_workload::apply_option(&mut s, "ramp_time", Some(ramp)).unwrap();
        raidlab_workload::apply_option(&mut s, "iodepth_batch_submit", Some(batch)).unwrap();
        let clock = Arc::new(Stepping::new(1000));
        raidlab_engine::run_with_clock(
            &[s],
            &mut raidlab_engine::resolve_path,
            &RunOptions::default(),
            clock,
        )
        .unwrap()
        .jobs
        .remove(0)
    };
    let go = |ramp: &str| go_batched(ramp, "1");
    let (a, b) = (go("0"), go("0"));
    assert_eq!(a.read, b.read);
    assert!(a.read.total_ios > 100, "{}", a.read.total_ios);
    // Runtime is measured up to the last completion: within one step batch of 1 ms.
    assert!(
        a.read.runtime_ns >= 1_000_000 && a.read.runtime_ns < 1_100_000,
        "{}",
        a.read.runtime_ns
    );
    // The null engine runs a refill when the driver reaps, whatever iodepth_batch_submit
    // says: each refill of 8 costs 2 clock reads (submit, complete) of 1 µs each, and clat
    // is 1 µs exactly.
    assert_eq!((a.read.clat.min(), a.read.clat.max()), (1000, 1000));
    let whole = go_batched("0", "0");
    assert_eq!(whole.read, a.read);
    let ramped = go("1ms");
    assert!(
        (ramped.read.total_ios as i64 - a.read.total_ios as i64).abs() <= 8,
        "ramp time is not counted"
    );
    assert!(ramped.elapsed_ns >= 2_000_000);
}

#[test]
fn impossible_depths_and_buffers_are_usage_errors() {
    let dev = Arc::new(MemTarget::new(1 << 20, 512));
    let mut s = spec(&[("rw", "read"), ("bs", "4k"), ("iodepth", "5000")]);
    s.filenames = vec!["mem".into()];
    let e = run_block(&[s], dev.clone(), &RunOptions::default()).unwrap_err();
    assert!(
        e.is_usage()
            && e.to_string().contains("iodepth=5000")
            && e.to_string().contains("1 to 1024"),
        "{e}"
    );
    let s = spec(&[
        ("rw", "read"),
        ("bs", "1g"),
        ("iodepth", "65536"),
        ("ioengine", "null"),
        ("size", "1g"),
        ("filename", "nowhere"),
    ]);
    let e = raidlab_engine::run(
        &[s],
        &mut raidlab_engine::resolve_path,
        &RunOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("half of this machine's memory"),
        "{e}"
    );
    // One thread a request in flight, over every job running together: 17 jobs at the
    // one-job limit start more threads than the kernel maps stacks for (they panicked in
    // thread start-up); refused before any starts.
    let mut s = spec(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("iodepth", "1024"),
        ("numjobs", "17"),
    ]);
    s.filenames = vec!["mem".into()];
    let e = run_block(&[s], dev.clone(), &RunOptions::default()).unwrap_err();
    let m = e.to_string();
    assert!(
        e.is_usage()
            && m.contains("17 jobs on in-process targets")
            && m.contains("17408 requests in flight")
            && m.contains(&format!(
                "up to {}",
                raidlab_engine::MAX_BLOCK_TARGET_THREADS
            )),
        "{m}"
    );
    assert!(dev.log.lock().unwrap().is_empty(), "a refused run did I/O");
}

/// Jobs that run together hold their buffers together: copies of a job (numjobs) each within
/// the one-job limit, but over half of the machine's memory between them, are refused in one
/// line before the file is laid out (the allocator would abort the process mid-run); jobs of
/// another stonewall group do not add to a group's, and the group is named.
#[test]
fn jobs_running_together_are_refused_when_their_buffers_exceed_memory() {
    // SAFETY: sysconf has no preconditions.
    let half = unsafe {
        libc::sysconf(libc::_SC_PHYS_PAGES) as u64 * libc::sysconf(libc::_SC_PAGESIZE) as u64 / 2
    };
    let bs: u64 = 16 << 20;
    // Each job a little over a quarter of the memory: one is within the limit, two are not.
    let depth = (half / 2 / bs + 1).to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    let f = file.display().to_string();
    let job = |numjobs: &str| {
        spec(&[
            ("name", "big"),
            ("rw", "read"),
            ("bs", "16m"),
            ("iodepth", depth.as_str()),
            ("numjobs", numjobs),
            ("size", "64m"),
            ("filename", f.as_str()),
        ])
    };
    let e = run_paths(&[job("3")], false).unwrap_err();
    let m = e.to_string();
    assert!(
        e.is_usage()
            && m.contains("3 jobs run together")
            && m.contains("half of this machine's memory")
            && m.contains("valid: fewer jobs"),
        "{m}"
    );
    assert_eq!(m.lines().count(), 1, "{m}");
    assert!(!file.exists(), "the file was laid out before the refusal");
    // One job alone each in two stonewall groups: within the limit, so the refusal names
    // the group that is not.
    let mut second = job("2");
    second.stonewall = true;
    let e = run_paths(&[job("1"), second], false).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("stonewall group 1: 2 jobs run together"),
        "{e}"
    );
    assert!(!file.exists(), "the file was laid out before the refusal");
}

/// fio's end_fsync: a job that wrote flushes its target once, after its last write and
/// inside its runtime (a flush taking 1 s shows in the write rate); without it the target is
/// still flushed once, after the job and outside its runtime.
#[test]
fn end_fsync_flushes_after_the_last_write_inside_the_runtime() {
    for (rw, end_fsync, depth, inside) in [
        ("write", "1", "1", true),
        ("randwrite", "1", "8", true),
        ("write", "0", "1", false),
        ("read", "1", "4", false),
    ] {
        let clock = Arc::new(Stepping::new(1000));
        let mut dev = MemTarget::new(1 << 20, 512);
        dev.flush_takes = Some((Arc::clone(&clock), 1_000_000_000));
        let dev = Arc::new(dev);
        let mut s = spec(&[
            ("rw", rw),
            ("bs", "4k"),
            ("size", "256k"),
            ("iodepth", depth),
            ("end_fsync", end_fsync),
        ]);
        s.filenames = vec!["mem".into()];
        let d = Arc::clone(&dev);
        let mut resolve = |name: &str| {
            Ok(raidlab_engine::Target::Block {
                label: name.to_string(),
                dev: Arc::clone(&d) as Arc<dyn raidlab_engine::BlockTarget>,
            })
        };
        let r = raidlab_engine::run_with_clock(&[s], &mut resolve, &RunOptions::default(), clock)
            .unwrap();
        let j = &r.jobs[0];
        assert!(j.error.is_none(), "{:?}", j.error);
        let f = dev.flushes.lock().unwrap().clone();
        assert_eq!(
            f,
            vec![64],
            "{rw} end_fsync={end_fsync}: one flush, after the 64 requests"
        );
        let runtime = j.read.runtime_ns.max(j.write.runtime_ns);
        assert_eq!(
            runtime >= 1_000_000_000,
            inside,
            "{rw} end_fsync={end_fsync}: runtime {runtime} ns"
        );
    }
}
