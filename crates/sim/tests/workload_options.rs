//! fio options whose meaning the simulator must share with the real executor.

mod common;
use common::{run_to_the_end, sim_run, spec, system};

/// psync is synchronous: one request in flight whatever iodepth says (fio's sync engines,
/// and the real executor on files, run at depth 1).
#[test]
fn psync_runs_one_request_at_a_time() {
    let target = system("xdd2008/raid0.toml");
    let run = |opts: &[(&str, &str)]| {
        let mut o = vec![
            ("rw", "randread"),
            ("bs", "8k"),
            ("size", "64m"),
            ("direct", "1"),
        ];
        o.extend_from_slice(opts);
        sim_run(&target, &o)
    };
    let psync_deep = run(&[("ioengine", "psync"), ("iodepth", "64")]);
    let psync_one = run(&[("ioengine", "psync"), ("iodepth", "1")]);
    let uring_deep = run(&[("iodepth", "64")]);
    let iops = |r: &raidlab_result::RunResult| r.aggregate().summary().iops;
    assert_eq!(iops(&psync_deep), iops(&psync_one));
    let depths = &psync_deep.jobs[0].iodepth_level;
    assert_eq!(
        depths.iter().sum::<u64>(),
        depths[0],
        "all at depth 1: {depths:?}"
    );
    assert!(
        iops(&uring_deep) > 2.0 * iops(&psync_one),
        "io_uring at depth 64 {} vs psync {}",
        iops(&uring_deep),
        iops(&psync_one)
    );
}

/// group_reporting folds a job's instances into one result, as a real run reports them: on
/// a simulated target the four jobs were printed one by one.
#[test]
fn group_reporting_folds_the_instances() {
    let target = system("xdd2008/raid0.toml");
    let opts = |grouped: bool| {
        let mut o = vec![
            ("rw", "read"),
            ("bs", "64k"),
            ("size", "16m"),
            ("numjobs", "4"),
            ("offset_increment", "1g"),
            ("direct", "1"),
        ];
        if grouped {
            o.push(("group_reporting", "1"));
        }
        o
    };
    let apart = sim_run(&target, &opts(false));
    let grouped = sim_run(&target, &opts(true));
    assert_eq!(apart.jobs.len(), 4);
    assert_eq!(grouped.jobs.len(), 1, "{:?}", grouped.jobs.len());
    let g = &grouped.jobs[0];
    assert_eq!(g.instances, 4);
    assert_eq!(g.read.io_bytes, 4 * (16 << 20));
    assert_eq!(
        g.read.total_ios,
        apart.jobs.iter().map(|j| j.read.total_ios).sum::<u64>()
    );
    assert_eq!(
        g.runtime_sum_ns,
        apart.jobs.iter().map(|j| j.job_runtime_ns()).sum::<u64>()
    );
    assert!(
        g.sim.is_some(),
        "the simulator's extras stay on the folded result"
    );
}

/// A converged run is extended to the job's size whatever its block sizes: a bssplit job
/// (and one reading with `bs=4k,64k`) stopped at convergence and reported only the part it
/// had simulated (186 MiB of a 1 GiB job, 3 MiB in 248 ms of another) as the whole job.
#[test]
fn a_converged_job_with_drawn_block_sizes_still_moves_its_size() {
    let target = system("xdd2008/raid5.toml");
    let gib = 1u64 << 30;
    // (The bssplit job draws its offsets with replacement: over fio's random map its
    // requests come out shorter as the pass fills, a rate that does not settle.)
    for (bs, map) in [
        (("bssplit", "4k/50:64k/50"), ("norandommap", "1")),
        (("bs", "4k,64k"), ("norandommap", "0")),
    ] {
        let r = sim_run(
            &target,
            &[
                ("rw", "randread"),
                bs,
                map,
                ("size", "1g"),
                ("iodepth", "16"),
                ("direct", "1"),
            ],
        );
        let j = &r.jobs[0];
        assert_eq!(
            j.sim.as_ref().unwrap().stop_reason,
            "converged",
            "{bs:?}: the case needs a converged run"
        );
        let moved = j.read.io_bytes;
        assert!(
            moved.abs_diff(gib) < gib / 100,
            "{bs:?}: moved {moved} of {gib}"
        );
    }
    let r = sim_run(
        &target,
        &[
            ("rw", "randread"),
            ("bs", "4k,64k"),
            ("size", "1g"),
            ("iodepth", "16"),
            ("direct", "1"),
        ],
    );
    assert_eq!(r.jobs[0].read.total_ios, gib / 4096);
}

/// ioengine=null does no I/O: a simulated target refuses it in one line rather than run the
/// modelled system under its name (it ran as io_uring did, 541 MB/s where fio's null engine
/// reports its own overhead).
#[test]
fn the_null_engine_is_refused() {
    let target = system("xdd2008/raid0.toml");
    let s = common::spec(
        &target,
        &[
            ("rw", "read"),
            ("bs", "64k"),
            ("size", "1m"),
            ("ioengine", "null"),
        ],
    );
    let e = raidlab_sim::run(&[s]).unwrap_err();
    assert!(e.is_usage(), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("ioengine=null") && m.contains("valid for sim: targets: io_uring"),
        "{m}"
    );
    assert!(!m.contains('\n'), "{m}");
}

/// Each stonewall group's jobs carry that group's components, bottleneck, virtual time and
/// member I/Os: they carried the whole run's, so a sequential read before a long random write
/// showed its link 4% busy (it was 29% busy while the read ran) and the write's stop reason.
#[test]
fn stonewall_groups_report_their_own_utilization() {
    let target = system("xdd2008/raid5.toml");
    let read = common::spec(
        &target,
        &[
            ("name", "r"),
            ("rw", "read"),
            ("bs", "1m"),
            ("size", "1g"),
            ("iodepth", "8"),
            ("direct", "1"),
        ],
    );
    let write = common::spec(
        &target,
        &[
            ("name", "w"),
            ("stonewall", "1"),
            ("rw", "randwrite"),
            ("bs", "8k"),
            ("size", "256m"),
            ("iodepth", "32"),
            ("direct", "1"),
        ],
    );
    let alone = raidlab_sim::run(std::slice::from_ref(&read)).unwrap();
    let both = raidlab_sim::run(&[read, write]).unwrap();
    let (a, r, w) = (
        alone.jobs[0].sim.as_ref().unwrap(),
        both.jobs[0].sim.as_ref().unwrap(),
        both.jobs[1].sim.as_ref().unwrap(),
    );
    // The first group is the same run as the read alone, so it reports the same.
    assert_eq!(r, a);
    assert_ne!(r.virtual_time_ns, w.virtual_time_ns);
    assert!(w.member_ios > 0 && w.member_ios != r.member_ios, "{w:?}");
}

/// A run converges only once the jobs still running would end together at their rates: the
/// mix it extends then lasts to the end. Four readers of their own 2 GiB of an md raid0, two
/// of them kept waiting by the others' streams, converged with those two at no rate: they
/// reported 0 bytes (and, extended at a crawl, one ran 4826 s).
#[test]
fn jobs_kept_waiting_are_not_extended_at_their_crawl() {
    let sys = "linuxraid2010/raid0-4d-c1024.toml";
    let r = sim_run(
        &system(sys),
        &[
            ("rw", "read"),
            ("bs", "1m"),
            ("size", "2g"),
            ("iodepth", "16"),
            ("numjobs", "4"),
            ("offset_increment", "4g"),
            ("direct", "1"),
        ],
    );
    assert_eq!(r.jobs.len(), 4);
    for j in &r.jobs {
        assert_eq!(j.read.io_bytes, 2 << 30, "{}", j.read.runtime_ns);
    }
    let agg = r.aggregate().summary().mb_s * 1e6;
    let b = raidlab_sim::bounds(&common::repo().join("systems").join(sys)).unwrap();
    let lun = b.iter().find(|c| c.name == "lun/md0").unwrap();
    assert!(agg <= lun.outer_bytes_s, "{agg} B/s over {lun:?}");
    // The drives stream throughout: no job drags the run out at a crawl.
    assert!(agg > 0.5 * lun.outer_bytes_s, "{agg} B/s under {lun:?}");
}

/// A drive that reorders its queue keeps no command waiting past its age limit: four
/// sequential readers of an md raid0, each in its own 4 GiB, where reading on would serve
/// one stream while the others' commands wait. With the catalog's limit (2 s) no command
/// of any job takes much longer than that; with aging off (`age_limit_ms = 0`, the drive
/// overridden in a copy of the system) a job waits for most of the run.
#[test]
fn drives_age_commands_that_streams_keep_waiting() {
    let opts = [
        ("rw", "read"),
        ("bs", "1m"),
        ("size", "2g"),
        ("iodepth", "16"),
        ("numjobs", "4"),
        ("offset_increment", "4g"),
        ("direct", "1"),
    ];
    let worst = |target: &str| {
        let r = sim_run(target, &opts);
        assert_eq!(r.jobs.len(), 4);
        r.jobs.iter().map(|j| j.read.clat.max()).max().unwrap()
    };
    let aged = worst(&system("linuxraid2010/raid0-4d-c1024.toml"));
    assert!(aged < 3_000_000_000, "a command waited {aged} ns");

    let dir = std::env::temp_dir().join(format!("raidlab-sim-noage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sys = common::repo().join("systems/linuxraid2010");
    std::fs::copy(sys.join("components.toml"), dir.join("components.toml")).unwrap();
    let text = std::fs::read_to_string(sys.join("raid0-4d-c1024.toml")).unwrap();
    assert!(text.contains("disk = \"samsung-hd501lj\""));
    let text = text.replace("disk = \"samsung-hd501lj\"", "disk = \"hd501lj-no-aging\"")
        + "\n[[disk]]\nname = \"hd501lj-no-aging\"\nbase = \"samsung-hd501lj\"\nage_limit_ms = 0\n";
    let f = dir.join("no-aging.toml");
    std::fs::write(&f, text).unwrap();
    let unaged = worst(&format!("sim:{}", f.display()));
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        unaged > 5_000_000_000,
        "without aging the worst wait is {unaged} ns"
    );
}

/// A job over several LUNs is one job, as a real run's over several files: its size split
/// between them, its iodepth shared, so two chains at depth 2 move what two jobs at depth 1
/// (one a chain, `job_per_file=1`) move, and more than one chain at depth 1. What lays files
/// out (nrfiles, filesize) has no meaning on a LUN and is refused.
#[test]
fn one_job_over_several_luns_shares_its_depth_and_size() {
    let a = system("llnl2000/fig16.toml");
    let both = format!("{a}#u0c0:{a}#u1c0");
    let run = |target: &str, opts: &[(&str, &str)]| {
        let mut o = vec![
            ("filename", target),
            ("rw", "write"),
            ("bs", "1m"),
            ("size", "256m"),
            ("direct", "1"),
            ("group_reporting", "1"),
        ];
        o.extend_from_slice(opts);
        raidlab_sim::run(&[common::spec(&a, &o)]).unwrap()
    };
    let one_job = run(&both, &[("iodepth", "2")]);
    assert_eq!(one_job.jobs.len(), 1);
    assert_eq!(one_job.jobs[0].instances, 1);
    assert_eq!(one_job.jobs[0].write.io_bytes, 256 << 20);
    assert_eq!(one_job.jobs[0].target, both);
    let per_file = run(&both, &[("iodepth", "1"), ("job_per_file", "1")]);
    assert_eq!(per_file.jobs[0].instances, 2);
    assert_eq!(per_file.jobs[0].write.io_bytes, 512 << 20);
    let single = run(&format!("{a}#u0c0"), &[("iodepth", "1")]);
    let rate = |r: &raidlab_result::RunResult| r.aggregate().summary().mb_s;
    let (j, p, s1) = (rate(&one_job), rate(&per_file), rate(&single));
    assert!(
        (j / p - 1.0).abs() < 0.1,
        "one job over two {j} MB/s, a job each {p}"
    );
    assert!(
        j > 1.3 * s1,
        "two chains at depth 2 {j} MB/s, one at depth 1 {s1}"
    );
    for (k, v) in [("nrfiles", "2"), ("filesize", "1m")] {
        let f = common::spec(&a, &[("rw", "read"), ("size", "16m"), (k, v)]);
        let e = raidlab_sim::run(std::slice::from_ref(&f)).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("nrfiles and filesize"),
            "{e}"
        );
    }
}

/// fio's steady state in virtual time: random writes through a write-back cache run fast
/// until the cache is full, then at the drives' pace; judged over five seconds of samples,
/// the run ends once that pace holds, long before its runtime, and says why. Without the
/// options it runs on (converging by the simulator's own rule).
#[test]
fn steadystate_ends_a_run_once_its_rate_settles() {
    let target = system("xdd2008/raid5.toml");
    let base = [
        ("rw", "randwrite"),
        ("bs", "8k"),
        ("iodepth", "32"),
        ("direct", "1"),
        ("time_based", "1"),
        ("runtime", "120s"),
    ];
    let run = |extra: &[(&str, &str)]| {
        let mut o = base.to_vec();
        o.extend_from_slice(extra);
        sim_run(&target, &o)
    };
    let r = run(&[("ss", "iops:2%"), ("ss_dur", "5s")]);
    let j = &r.jobs[0];
    let ss = j.steadystate.as_ref().expect("a steady-state report");
    assert!(ss.attained, "{ss:?}");
    assert_eq!(ss.iops.len(), 5);
    assert!(ss.criterion < 2.0);
    assert_eq!(j.sim.as_ref().unwrap().stop_reason, "steadystate");
    assert!(
        j.write.runtime_ns < 60_000_000_000,
        "{}",
        j.write.runtime_ns
    );
    // The settled pace is the drives', well under the cache-filling start's.
    let settled = ss.iops_mean() as f64;
    assert!(
        j.write.iops() > 2.0 * settled,
        "{} {settled}",
        j.write.iops()
    );
    // The same run again: the same samples (virtual time).
    let again = run(&[("ss", "iops:2%"), ("ss_dur", "5s")]);
    assert_eq!(again.jobs[0].steadystate.as_ref().unwrap().iops, ss.iops);
    let plain = run(&[]);
    assert!(plain.jobs[0].steadystate.is_none());
    assert_ne!(
        plain.jobs[0].sim.as_ref().unwrap().stop_reason,
        "steadystate"
    );
}

/// fio's max_latency in virtual time: random reads 32 deep on 15K drives wait for milliseconds,
/// so a 1 ms bound ends the job with ETIMEDOUT and fio's words; a 10 s bound changes nothing.
#[test]
fn max_latency_ends_a_simulated_job_with_etimedout() {
    let target = system("xdd2008/raid5.toml");
    let run = |bound: &str| {
        sim_run(
            &target,
            &[
                ("rw", "randread"),
                ("bs", "8k"),
                ("iodepth", "32"),
                ("direct", "1"),
                ("size", "64m"),
                ("max_latency", bound),
            ],
        )
    };
    let r = run("1ms");
    let j = &r.jobs[0];
    assert_eq!(j.errno, 110, "{:?}", j.error);
    assert!(
        j.error
            .as_deref()
            .unwrap()
            .contains("exceeds specified max (1000000 nsec)"),
        "{:?}",
        j.error
    );
    assert!(j.read.io_bytes < 64 << 20);
    let r = run("10s");
    assert_eq!((r.jobs[0].error.as_deref(), r.jobs[0].errno), (None, 0));
}

/// A 16 MiB job writing 64 KiB blocks at depth 4, direct, on seed 001's RAID 0, with
/// `opts` besides: the verify tests' job.
fn write_16m_on_raid0(opts: &[(&str, &str)]) -> raidlab_result::RunResult {
    let target = system("xdd2008/raid0.toml");
    let mut o = vec![
        ("rw", "write"),
        ("bs", "64k"),
        ("size", "16m"),
        ("iodepth", "4"),
        ("direct", "1"),
    ];
    o.extend_from_slice(opts);
    run_to_the_end(&[common::spec(&target, &o)])
}

/// A job that only writes, with verify, reads back every block it wrote once its writes are
/// done (fio's do_verify), as the real engine does: the read-backs take the drives' time and
/// the job's, and count as its reads (as fio counts them) over the time they took, so its
/// writes' figures are those of the same job without verify, to the nanosecond.
#[test]
fn verify_reads_back_what_a_write_job_wrote_after_its_measured_part() {
    let run = write_16m_on_raid0;
    let plain = run(&[]);
    let checked = run(&[("verify", "crc32c")]);
    let unchecked = run(&[("verify", "crc32c"), ("do_verify", "0")]);
    let (p, c) = (&plain.jobs[0], &checked.jobs[0]);
    assert_eq!(c.write.io_bytes, p.write.io_bytes);
    assert_eq!(c.write.total_ios, p.write.total_ios);
    assert_eq!(c.write.runtime_ns, p.write.runtime_ns, "the writes' time");
    assert_eq!(
        (c.read.total_ios, c.read.io_bytes),
        (256, 16 << 20),
        "the read-backs are the job's reads"
    );
    assert!(
        c.read.runtime_ns > 0 && c.read.runtime_ns == c.elapsed_ns - p.elapsed_ns,
        "over the read-back's time: {} ns of {} more",
        c.read.runtime_ns,
        c.elapsed_ns - p.elapsed_ns
    );
    assert!(
        c.elapsed_ns > p.elapsed_ns,
        "the job ends after its read-back: {} vs {} ns",
        c.elapsed_ns,
        p.elapsed_ns
    );
    let read =
        |r: &raidlab_result::RunResult| r.disk_util.iter().map(|d| d.read_bytes).sum::<u64>();
    assert!(
        read(&checked) >= read(&plain) + (16 << 20),
        "the drives read the 16 MiB back: {} vs {} bytes",
        read(&checked),
        read(&plain)
    );
    assert_eq!(unchecked.jobs[0].elapsed_ns, p.elapsed_ns, "do_verify=0");
    assert_eq!(read(&unchecked), read(&plain));
}

/// A verify job's read-backs in its samples and logs, as fio 3.33 has them: with logs of
/// every I/O each read-back is a sample and a line, as each write is; averaged, the lines
/// are the samples, the read-backs in none of them (fio leaves verify's reads out of the
/// intervals' counts), and the writes' last interval is sampled as the read-back passes its
/// end.
#[test]
fn verify_read_backs_are_sampled_and_logged_as_fio_does() {
    let run = |opts: &[(&str, &str)]| {
        let mut o = vec![
            ("verify", "crc32c"),
            ("write_bw_log", "b"),
            ("write_iops_log", "i"),
        ];
        o.extend_from_slice(opts);
        write_16m_on_raid0(&o)
    };
    let every_io = run(&[]);
    let j = &every_io.jobs[0];
    for d in [&j.read, &j.write] {
        assert_eq!(d.total_ios, 256);
        assert_eq!(
            (d.samples.bw_kib.samples, d.samples.iops.samples),
            (256, 256)
        );
    }
    let log = &j.logs[0];
    for lines in [&log.bw, &log.iops] {
        let reads = lines.iter().filter(|l| l.dir == 0).count();
        assert_eq!((reads, lines.len()), (256, 512));
    }
    let averaged = run(&[("log_avg_msec", "5")]);
    let j = &averaged.jobs[0];
    assert_eq!(j.read.total_ios, 256);
    assert_eq!(
        (j.read.samples.bw_kib.samples, j.read.samples.iops.samples),
        (0, 0)
    );
    let log = &j.logs[0];
    let writes = j.write.samples.bw_kib.samples as usize;
    assert!(writes > 2, "{writes} samples");
    assert!(log.bw.iter().chain(&log.iops).all(|l| l.dir == 1));
    assert_eq!((log.bw.len(), log.iops.len()), (writes, writes));
    // The intervals sampled reach past the writes' runtime, into the read-back.
    let last_ms = log.bw.last().unwrap().time_ms;
    assert!(
        last_ms * 1_000_000 > j.write.runtime_ns,
        "last line at {last_ms} ms, writes for {} ns",
        j.write.runtime_ns
    );
}

/// verify_backlog: every N blocks written, what is in flight completes and the blocks
/// written since are read back before the job goes on, inside its time: the writes' rate
/// falls, more for a check of every block than for a batch of a few. The read-backs are
/// the job's reads; `do_verify=0` checks nothing, as in fio.
#[test]
fn verify_backlog_checks_as_the_job_goes_and_costs_its_writes_time() {
    let target = system("xdd2008/raid5.toml");
    let run = |opts: &[(&str, &str)]| {
        let mut o = vec![
            ("rw", "randwrite"),
            ("bs", "8k"),
            ("size", "8m"),
            ("iodepth", "8"),
            ("direct", "1"),
        ];
        o.extend_from_slice(opts);
        run_to_the_end(&[common::spec(&target, &o)])
    };
    let plain = run(&[]);
    let all = run(&[("verify", "crc32c"), ("verify_backlog", "64")]);
    let few = run(&[
        ("verify", "crc32c"),
        ("verify_backlog", "64"),
        ("verify_backlog_batch", "8"),
    ]);
    let w = |r: &raidlab_result::RunResult| r.jobs[0].write.runtime_ns;
    // 1024 writes, each read back once when every check reads all it covers (the end's
    // read-back takes what the last check left); 8 a check of the 64 or so written since
    // the last (those in flight when a check falls due join it), and what is left at the end.
    assert_eq!(all.jobs[0].read.total_ios, 1024, "the read-backs");
    let few_reads = few.jobs[0].read.total_ios;
    assert!((112..256).contains(&few_reads), "{few_reads} read-backs");
    for r in [&all, &few] {
        assert_eq!(r.jobs[0].write.io_bytes, 8 << 20);
    }
    let off = run(&[
        ("verify", "crc32c"),
        ("verify_backlog", "64"),
        ("do_verify", "0"),
    ]);
    assert_eq!(off.jobs[0].read.total_ios, 0);
    assert_eq!(off.jobs[0].write.runtime_ns, w(&plain), "do_verify=0");
    assert!(w(&few) > w(&plain), "{} vs {}", w(&few), w(&plain));
    assert!(w(&all) > w(&few), "{} vs {}", w(&all), w(&few));
    let read =
        |r: &raidlab_result::RunResult| r.disk_util.iter().map(|d| d.read_bytes).sum::<u64>();
    // (RAID 5 writes read too: the read-backs come on top.)
    assert!(
        read(&all) >= read(&plain) + (8 << 20),
        "{} vs {}",
        read(&all),
        read(&plain)
    );
    // A time-based job checks as it goes, and ends at its runtime.
    let timed = run(&[
        ("verify", "crc32c"),
        ("verify_backlog", "64"),
        ("time_based", "1"),
        ("runtime", "2s"),
    ]);
    // (What is in flight at the runtime's end completes after it.)
    let ran = timed.jobs[0].write.runtime_ns;
    assert!((2_000_000_000..2_100_000_000).contains(&ran), "{ran} ns");
    assert!(read(&timed) > 0);
}

/// A job whose blocks another job of its group writes at the same time reads nothing back
/// (the real engine says so in a note); jobs writing apart each read back their own.
#[test]
fn jobs_writing_the_same_blocks_do_not_read_back() {
    let target = system("xdd2008/raid0.toml");
    let run = |opts: &[(&str, &str)]| {
        let mut o = vec![
            ("rw", "write"),
            ("bs", "64k"),
            ("size", "8m"),
            ("numjobs", "2"),
            ("direct", "1"),
        ];
        o.extend_from_slice(opts);
        run_to_the_end(&[common::spec(&target, &o)])
    };
    let read =
        |r: &raidlab_result::RunResult| r.disk_util.iter().map(|d| d.read_bytes).sum::<u64>();
    let together = run(&[("verify", "crc32c")]);
    assert_eq!(read(&together), read(&run(&[])), "no read-backs");
    // It says so, once, on each job's results (as the real engine says it on stderr).
    for j in &together.jobs {
        let notes = &j.sim.as_ref().unwrap().notes;
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("job 'job': verify does not read back what it wrote: another of its instances writes some of its blocks of sim:")
                && notes[0].contains("raid0.toml#"),
            "{}",
            notes[0]
        );
    }
    let apart = run(&[("verify", "crc32c"), ("offset_increment", "1g")]);
    assert!(apart
        .jobs
        .iter()
        .all(|j| j.sim.as_ref().unwrap().notes.is_empty()));
    assert!(
        read(&apart) >= read(&run(&[("offset_increment", "1g")])) + (16 << 20),
        "each reads back its own 8 MiB"
    );
}

/// A job that reads back what it wrote at its end is simulated to its end, not extended
/// from a steady window (the read-back follows the last write): its every block is read
/// back, where the same job without verify stops early once its rate has settled.
#[test]
fn a_read_back_at_the_end_is_simulated_not_extended() {
    let target = system("xdd2008/raid0.toml");
    let opts = |verify: &'static str| {
        vec![
            ("rw", "write"),
            ("bs", "64k"),
            ("size", "512m"),
            ("iodepth", "4"),
            ("direct", "1"),
            ("verify", verify),
        ]
    };
    let plain = sim_run(&target, &opts("0"));
    let stop = |r: &raidlab_result::RunResult| r.jobs[0].sim.as_ref().unwrap().stop_reason.clone();
    assert_eq!(
        stop(&plain),
        "converged",
        "the case converges without verify"
    );
    let checked = sim_run(&target, &opts("crc32c"));
    assert_eq!(stop(&checked), "size");
    assert_eq!(checked.jobs[0].write.total_ios, 8192);
    assert_eq!(
        checked.jobs[0].read.total_ios, 8192,
        "every block read back"
    );
}

/// A drive read in strided zones (fio's `zonemode=strided`, its `disk-zone-profile`) reads
/// each zone at that zone's media rate: a job over a zone at the start and one near the end
/// of a 250 GB drive takes as long as reading each zone alone, the inner one slower. The
/// job is simulated whole (its rate changes from zone to zone), so the run to its end is
/// the same run.
#[test]
fn strided_zones_read_each_zone_at_its_rate() {
    let target = system("bokhari2006/direct-1disk.toml");
    let base = [
        ("rw", "read"),
        ("bs", "1m"),
        ("direct", "1"),
        ("size", "1g"),
    ];
    let alone = |offset: &str| {
        let mut o = base.to_vec();
        o.push(("offset", offset));
        let r = run_to_the_end(&[spec(&target, &o)]);
        r.jobs[0].read.runtime_ns
    };
    let (outer, inner) = (alone("0"), alone("201g")); // 1g + 200g
    assert!(
        inner as f64 > 1.3 * outer as f64,
        "inner zone {inner} ns, outer {outer} ns"
    );
    let mut z = base.to_vec();
    z.extend([
        ("size", "2g"),
        ("zonemode", "strided"),
        ("zonesize", "1g"),
        ("zoneskip", "200g"),
    ]);
    let zoned = sim_run(&target, &z);
    assert_eq!(zoned.jobs[0].read.io_bytes, 2 << 30);
    let t = zoned.jobs[0].read.runtime_ns;
    let both = (outer + inner) as f64;
    assert!(
        (t as f64 - both).abs() < 0.05 * both,
        "zoned {t} ns against the zones alone {outer} + {inner} ns"
    );
    let exact = run_to_the_end(&[spec(&target, &z)]);
    assert_eq!(
        exact.jobs[0].read.runtime_ns, t,
        "simulated whole either way"
    );
}

/// A sequential read of a whole drive moves at its zones' rates, outer to inner: the
/// simulator does not extend the rate it settled at in the outer zone over the whole stroke
/// (it did: 67.7 MB/s, the outer zone's, for a drive of 37.5–67.7 MB/s). A read of a small
/// region near the start, where the rate lasts, still stops once it has settled.
#[test]
fn a_whole_drive_read_is_not_extended_at_the_outer_zones_rate() {
    let target = system("bokhari2006/direct-1disk.toml");
    let whole = [("rw", "read"), ("bs", "1m"), ("direct", "1")];
    let r = sim_run(&target, &whole);
    let j = &r.jobs[0];
    assert_eq!(j.sim.as_ref().unwrap().stop_reason, "size");
    let mb_s = r.aggregate().summary().mb_s;
    // (The drive's media: 67.7 MB/s at the outer zone, 37.5 at the inner.)
    assert!(mb_s > 40.0 && mb_s < 60.0, "whole drive at {mb_s} MB/s");
    let mut near = whole.to_vec();
    near.push(("size", "8g"));
    let n = sim_run(&target, &near);
    assert_eq!(n.jobs[0].sim.as_ref().unwrap().stop_reason, "converged");
    assert!(n.aggregate().summary().mb_s > 64.0);
}

/// fio's wait_for in virtual time: the reader waiting for another job starts when that job
/// ends, and so runs alone, about as fast as a reader alone; a job that waits for nothing
/// runs beside the first from the start. The run is simulated to its end.
#[test]
fn a_simulated_job_waiting_for_another_starts_at_its_end() {
    let target = system("xdd2008/raid0.toml");
    let job = |name: &str, opts: &[(&str, &str)]| {
        let mut o = vec![("bs", "64k"), ("direct", "1"), ("size", "256m")];
        o.extend_from_slice(opts);
        let mut s = spec(&target, &o);
        s.name = name.into();
        s
    };
    let alone = run_to_the_end(&[job("b", &[("rw", "randread"), ("offset", "2g")])]).jobs[0]
        .read
        .runtime_ns;
    let run = raidlab_sim::run(&[
        job("a", &[("rw", "read"), ("rate", "64m")]),
        // (Apart from a's region, which a's read-ahead left in the controller's cache.)
        job(
            "b",
            &[("rw", "randread"), ("offset", "2g"), ("wait_for", "a")],
        ),
        job(
            "c",
            &[("rw", "randread"), ("offset", "1g"), ("size", "16m")],
        ),
    ])
    .unwrap();
    let (a, b, c) = (&run.jobs[0].read, &run.jobs[1].read, &run.jobs[2].read);
    assert_eq!(b.io_bytes, 256 << 20);
    assert!(
        (b.runtime_ns as f64 - alone as f64).abs() < 0.05 * alone as f64,
        "b {} ns after a, {alone} ns alone",
        b.runtime_ns
    );
    // a takes 4 s at 64 MiB/s; c ran beside it and ended first; b began once a had ended.
    assert!(a.runtime_ns > 3_900_000_000, "a {} ns", a.runtime_ns);
    assert!(c.runtime_ns < a.runtime_ns, "c {} ns", c.runtime_ns);
    let sim = run.jobs[1].sim.as_ref().unwrap();
    assert!(
        sim.virtual_time_ns >= a.runtime_ns + b.runtime_ns,
        "the group's {} ns",
        sim.virtual_time_ns
    );
}

/// fio's flow in virtual time: two jobs of one flow issue 2:1 by their weights (alone on the
/// array they would be even), with or without flow_sleep; a job of another flow is not held.
#[test]
fn simulated_jobs_of_a_flow_keep_their_requests_in_proportion() {
    let target = system("xdd2008/raid0.toml");
    let run = |sleep: Option<&str>| {
        let job = |name: &str, flow: &str, id: &str, offset: &str| {
            let mut o = vec![
                ("rw", "randread"),
                ("bs", "4k"),
                ("direct", "1"),
                ("size", "1g"),
                ("offset", offset),
                ("iodepth", "4"),
                ("time_based", "1"),
                ("runtime", "2s"),
                ("flow", flow),
                ("flow_id", id),
            ];
            if let Some(s) = sleep {
                o.push(("flow_sleep", s));
            }
            let mut s = spec(&target, &o);
            s.name = name.into();
            s
        };
        let r = raidlab_sim::run(&[
            job("a", "2", "1", "0"),
            job("b", "1", "1", "2g"),
            job("c", "1", "2", "4g"),
        ])
        .unwrap();
        let ios: Vec<f64> = r.jobs.iter().map(|j| j.read.total_ios as f64).collect();
        (ios[0], ios[1], ios[2])
    };
    for sleep in [None, Some("1ms")] {
        let (a, b, c) = run(sleep);
        assert!((a / b - 2.0).abs() < 0.02, "{sleep:?}: a {a}, b {b}");
        assert!(c > 1.5 * b, "{sleep:?}: c {c} held back with b {b}");
    }
}

/// raidlab's `sim_converge=0`: a time-based run is simulated for its whole runtime, as the
/// library's exact mode runs it, where by default it stops once its rate has settled and is
/// carried on at that rate. Only the group whose job asks for it runs to the end.
#[test]
fn sim_converge_0_simulates_every_request_of_its_group() {
    let target = system("xdd2008/raid5.toml");
    let opts = [
        ("rw", "randread"),
        ("bs", "8k"),
        ("iodepth", "32"),
        ("direct", "1"),
        ("runtime", "20s"),
        ("time_based", "1"),
    ];
    let sim = |r: &raidlab_result::RunResult, k: usize| r.jobs[k].sim.clone().unwrap();
    let settled = sim_run(&target, &opts);
    assert_eq!(sim(&settled, 0).stop_reason, "converged");
    assert!(sim(&settled, 0).virtual_time_ns < 20_000_000_000);

    let mut whole = opts.to_vec();
    whole.push(("sim_converge", "0"));
    let exact = sim_run(&target, &whole);
    let x = sim(&exact, 0);
    assert_eq!(x.stop_reason, "runtime");
    assert!(x.virtual_time_ns >= 20_000_000_000, "{}", x.virtual_time_ns);
    assert!(x.member_ios > 2 * sim(&settled, 0).member_ios);
    // The same run as the library's exact mode gives, bit for bit.
    let lib = run_to_the_end(&[spec(&target, &opts)]);
    assert_eq!(exact.jobs[0].read, lib.jobs[0].read);
    assert_eq!(x, sim(&lib, 0));

    // Two groups, the second asking for every request: the first still settles early.
    let mut second = spec(&target, &whole);
    second.stonewall = true;
    let two = raidlab_sim::run(&[spec(&target, &opts), second]).unwrap();
    assert_eq!(sim(&two, 0).stop_reason, "converged");
    assert_eq!(sim(&two, 1).stop_reason, "runtime");
}

/// The simulator keeps every request in flight: a group whose jobs would hold more than
/// `MAX_IN_FLIGHT` at once (iodepth summed, numjobs counted) is refused in one line before it
/// runs (4096 jobs at iodepth=65536 asked for 60 GB, and the allocator aborted the process);
/// a group of its own is named.
#[test]
fn too_many_requests_in_flight_are_refused() {
    let target = system("xdd2008/raid0.toml");
    let job = |numjobs: &str| {
        spec(
            &target,
            &[
                ("rw", "randread"),
                ("bs", "4k"),
                ("iodepth", "65536"),
                ("numjobs", numjobs),
                ("size", "16m"),
                ("direct", "1"),
            ],
        )
    };
    let e = raidlab_sim::run(&[job("17")]).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("17 jobs run together")
            && m.contains("1114112 requests in flight")
            && m.contains(&format!("up to {}", raidlab_sim::MAX_IN_FLIGHT)),
        "{m}"
    );
    assert_eq!(m.lines().count(), 1, "{m}");
    let mut second = job("17");
    second.stonewall = true;
    let mut first = job("1");
    first.iodepth = 1;
    let e = raidlab_sim::run(&[first, second]).unwrap_err();
    assert!(
        e.to_string().starts_with("stonewall group 1: 17 jobs"),
        "{e}"
    );
}
