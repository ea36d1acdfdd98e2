//! fio's disk statistics of simulated runs: the modeled drives under a run's targets, with
//! the commands they completed, their bytes and times, as the kernel counts a real disk's.

mod common;

use common::*;

/// One drive, one read at a time, bypassing every cache on the way: the drive completes a
/// command for each read the job does (and those its controller reads ahead), moving their
/// bytes; its ticks are the commands' times at the drive, at most the job's own latencies;
/// its utilization is its component's; `disk_util=0` leaves the drive out, as fio leaves a
/// disk out.
#[test]
fn a_drive_counts_the_commands_it_completes() {
    let t = system("bokhari2006/direct-1disk.toml");
    let opts = [
        ("rw", "randread"),
        ("bs", "64k"),
        ("size", "1g"),
        ("number_ios", "500"),
        ("direct", "1"),
    ];
    let r = sim_run(&t, &opts);
    assert_eq!(r.disk_util.len(), 1, "{:?}", r.disk_util);
    let d = &r.disk_util[0];
    let j = &r.jobs[0];
    assert!(d.read_ios >= j.read.total_ios, "{d:?}");
    assert!(d.read_bytes >= j.read.io_bytes, "{d:?}");
    assert_eq!((d.write_ios, d.read_merges, d.write_merges), (0, 0, 0));
    let job_lat = j.read.lat.mean() * j.read.total_ios as f64;
    assert!(
        d.read_ticks_ns > 0 && d.read_ticks_ns as f64 <= job_lat,
        "{d:?} vs {job_lat}"
    );
    assert_eq!(d.in_queue_ns, d.read_ticks_ns);
    let sim = j.sim.as_ref().unwrap();
    let comp = sim.components.iter().find(|c| c.kind == "disk").unwrap();
    assert_eq!(d.name, comp.name);
    assert!(
        (d.utilization() - comp.utilization).abs() < 0.01,
        "{d:?} vs {comp:?}"
    );
    let mut off = opts.to_vec();
    off.push(("disk_util", "0"));
    assert!(sim_run(&t, &off).disk_util.is_empty());
}

/// A drive's `util` is fio's: the time it had a command outstanding, over the run. A flash
/// drive with one read at a time always has one: near 100%, as the kernel would count it,
/// though its 32 dies are nearly all idle (its component's utilization, which says what is
/// left of its capacity). One command at a time, the time outstanding is the commands'
/// times summed (its ticks). (It was the dies' mean busy time, 2.8%.)
#[test]
fn util_is_the_time_a_command_was_outstanding() {
    let t = system("modern/nvme.toml");
    let r = sim_run(
        &t,
        &[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "16m"),
            ("direct", "1"),
        ],
    );
    let d = &r.disk_util[0];
    let sim = r.jobs[0].sim.as_ref().unwrap();
    let comp = sim.components.iter().find(|c| c.kind == "disk").unwrap();
    assert!(d.utilization() > 0.9 && d.utilization() <= 1.0, "{d:?}");
    assert!(comp.utilization < 0.2, "{comp:?}");
    let (busy, ticks) = (d.busy_ns as f64, d.in_queue_ns as f64);
    assert!((busy - ticks).abs() <= 0.01 * ticks, "{d:?}");
    // Eight at a time, the time outstanding is less than the ticks summed.
    let r = sim_run(
        &t,
        &[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "16m"),
            ("iodepth", "8"),
            ("direct", "1"),
        ],
    );
    let d = &r.disk_util[0];
    assert!(
        d.utilization() <= 1.0 && (d.busy_ns as f64) < 0.5 * d.in_queue_ns as f64,
        "{d:?}"
    );
}

/// RAID 5 behind a controller that writes through (seed 004's, no BBU): small random writes
/// read old data and parity before writing both, so every drive shows reads and writes in
/// about equal numbers; random reads of a chunk reach one drive each.
#[test]
fn raid5_writes_show_their_pre_reads_at_the_drives() {
    let t = system("iometer2008/raid5-8d.toml");
    // The job, over the drives of seed 004's RAID 5 of 8.
    let job = |rw: &str| {
        spec(
            &t,
            &[
                ("rw", rw),
                ("bs", "8k"),
                ("iodepth", "16"),
                ("runtime", "2s"),
                ("time_based", "1"),
                ("direct", "1"),
                ("offset", "8k"),
                ("blockalign", "8k"),
            ],
        )
    };
    // (Simulated to the end: the counts are then exact.)
    let run = |rw: &str| run_to_the_end(&[job(rw)]);
    let w = run("randwrite");
    assert_eq!(w.disk_util.len(), 8);
    let (reads, writes): (u64, u64) = w
        .disk_util
        .iter()
        .fold((0, 0), |(r, wr), d| (r + d.read_ios, wr + d.write_ios));
    let host = w.jobs[0].write.total_ios;
    assert!(
        writes >= 2 * host * 9 / 10,
        "{writes} drive writes for {host} host writes"
    );
    let ratio = reads as f64 / writes as f64;
    assert!(
        (0.8..=1.2).contains(&ratio),
        "{reads} reads, {writes} writes"
    );
    let r = run("randread");
    let reads: u64 = r.disk_util.iter().map(|d| d.read_ios).sum();
    let host = r.jobs[0].read.total_ios;
    assert!(
        reads >= host && reads <= host * 11 / 10,
        "{reads} for {host}"
    );
    // The same run stopped early at its steady rate and extended: the drives' figures are
    // extended as the job's are, over the same time.
    let c = raidlab_sim::run(&[job("randread")]).unwrap();
    assert_eq!(c.jobs[0].sim.as_ref().unwrap().stop_reason, "converged");
    let reads: u64 = c.disk_util.iter().map(|d| d.read_ios).sum();
    let host = c.jobs[0].read.total_ios;
    assert!(
        reads * 10 >= host * 9 && reads <= host * 11 / 10,
        "{reads} for {host}"
    );
    assert!(c
        .disk_util
        .iter()
        .all(|d| d.elapsed_ns == c.jobs[0].elapsed_ns));
}
