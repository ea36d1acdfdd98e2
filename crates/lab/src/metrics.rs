//! The flat metrics stored per run, named as in the CSV output: decimal `mb_s` (10^6 B/s),
//! binary `mib_s` (2^20 B/s), `iops`, latencies in µs (`lat_*_us`), CPU in percent.

use raidlab_result::{RunResult, Summary};
use std::collections::BTreeMap;

/// Every metric name a run produces, in the order tables print them.
pub const METRIC_NAMES: &[&str] = &[
    "mb_s",
    "mib_s",
    "iops",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_max_us",
    "read_mb_s",
    "write_mb_s",
    "read_iops",
    "write_iops",
    "io_bytes",
    "runtime_ns",
    "usr_cpu",
    "sys_cpu",
    LATENCY_DEPTH,
    DISK_UTIL,
    TRIM_MB_S,
    TRIM_IOPS,
];

/// The metrics of a run whose jobs trimmed: the trims' rate, decimal MB/s, and IOPS (the
/// trims count in `mb_s` and `iops` too).
pub const TRIM_MB_S: &str = "trim_mb_s";
pub const TRIM_IOPS: &str = "trim_iops";

/// The metric only a run with fio's latency-target mode has: the depths its jobs settled on,
/// summed (the queue the system held at the target).
pub const LATENCY_DEPTH: &str = "latency_depth";

/// The metric of a run that saw its disks: the busiest one's share of the run it had work,
/// in percent. Measured, from the kernel's counters (fio's `util`); simulated, from the
/// modeled drives' busy time (a drive serving several commands at once, an SSD's dies, counts
/// its busy share over them all).
pub const DISK_UTIL: &str = "disk_util";

/// The metrics of a summary, by name.
pub fn of_summary(s: &Summary) -> BTreeMap<String, f64> {
    let pairs: [(&str, f64); 15] = [
        ("mb_s", s.mb_s),
        ("mib_s", s.mib_s),
        ("iops", s.iops),
        ("lat_mean_us", s.lat_mean_us),
        ("lat_p50_us", s.lat_p50_us),
        ("lat_p99_us", s.lat_p99_us),
        ("lat_max_us", s.lat_max_us),
        ("read_mb_s", s.read_bw_bytes / 1e6),
        ("write_mb_s", s.write_bw_bytes / 1e6),
        ("read_iops", s.read_iops),
        ("write_iops", s.write_iops),
        ("io_bytes", s.io_bytes as f64),
        ("runtime_ns", s.runtime_ns as f64),
        ("usr_cpu", s.usr_cpu),
        ("sys_cpu", s.sys_cpu),
    ];
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// The metrics of a whole run: all its jobs folded together (they ran side by side),
/// [`LATENCY_DEPTH`] when they searched for a latency target's depth, and [`DISK_UTIL`] when
/// it saw its disks.
pub fn of_run(r: &RunResult) -> BTreeMap<String, f64> {
    let summary = r.aggregate().summary();
    let mut m = of_summary(&summary);
    let depth = r
        .jobs
        .iter()
        .filter_map(|j| j.latency_target.map(|l| f64::from(l.depth)))
        .reduce(|a, b| a + b);
    if let Some(d) = depth {
        m.insert(LATENCY_DEPTH.to_string(), d);
    }
    if r.jobs.iter().any(|j| j.trim.total_ios > 0) {
        m.insert(TRIM_MB_S.to_string(), summary.trim_bw_bytes / 1e6);
        m.insert(TRIM_IOPS.to_string(), summary.trim_iops);
    }
    let measured = r.disk_util.iter().map(|d| d.utilization());
    let modeled = r
        .jobs
        .iter()
        .filter_map(|j| j.sim.as_ref())
        .flat_map(|s| s.components.iter())
        .filter(|c| c.kind == "disk")
        .map(|c| c.utilization);
    if let Some(u) = measured.chain(modeled).reduce(f64::max) {
        m.insert(DISK_UTIL.to_string(), u * 100.0);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bytes` in `ios` requests over one second.
    fn one_second(d: &mut raidlab_result::DirStats, bytes: u64, ios: u64) {
        d.io_bytes = bytes;
        d.total_ios = ios;
        d.runtime_ns = 1_000_000_000;
    }

    /// A job that did `bytes` in `ios` writes in one second.
    fn writer(bytes: u64, ios: u64) -> raidlab_result::JobResult {
        let mut j = raidlab_result::JobResult {
            instances: 1,
            ..Default::default()
        };
        one_second(&mut j.write, bytes, ios);
        j
    }

    #[test]
    fn names_match_the_map() {
        let m = of_summary(&Summary::default());
        let mut names: Vec<&str> = METRIC_NAMES
            .iter()
            .copied()
            .filter(|n| ![LATENCY_DEPTH, DISK_UTIL, TRIM_MB_S, TRIM_IOPS].contains(n))
            .collect();
        names.sort();
        assert_eq!(m.keys().map(String::as_str).collect::<Vec<_>>(), names);
        assert!(METRIC_NAMES.contains(&LATENCY_DEPTH) && METRIC_NAMES.contains(&DISK_UTIL));
    }

    #[test]
    fn two_jobs_add_up() {
        let mut r = RunResult::default();
        for _ in 0..2 {
            let mut j = raidlab_result::JobResult {
                instances: 1,
                ..Default::default()
            };
            one_second(&mut j.read, 50_000_000, 50);
            r.jobs.push(j);
        }
        let m = of_run(&r);
        assert!((m["mb_s"] - 100.0).abs() < 1e-9);
        assert!((m["iops"] - 100.0).abs() < 1e-9);
        assert!((m["read_mb_s"] - 100.0).abs() < 1e-9);
        assert!(!m.contains_key(LATENCY_DEPTH));
        // Jobs that searched for a latency target's depth: their depths add up.
        for (j, d) in r.jobs.iter_mut().zip([12, 20]) {
            j.latency_target = Some(raidlab_result::LatencyDepth {
                target_ns: 1_000_000,
                window_ns: 1_000_000,
                percentile: 99.0,
                depth: d,
            });
        }
        assert_eq!(of_run(&r)[LATENCY_DEPTH], 32.0);
        assert!(!of_run(&r).contains_key(DISK_UTIL));
    }

    /// A run that trimmed has the trims' rate apart (they count in `mb_s` and `iops` too);
    /// one that did not has no such metrics.
    #[test]
    fn trims_have_metrics_of_their_own() {
        let mut r = RunResult::default();
        r.jobs.push(writer(30_000_000, 30));
        assert!(!of_run(&r).contains_key(TRIM_MB_S) && !of_run(&r).contains_key(TRIM_IOPS));
        one_second(&mut r.jobs[0].trim, 20_000_000, 10);
        let m = of_run(&r);
        assert!((m[TRIM_MB_S] - 20.0).abs() < 1e-9, "{m:?}");
        assert!((m[TRIM_IOPS] - 10.0).abs() < 1e-9, "{m:?}");
        assert!((m["mb_s"] - 50.0).abs() < 1e-9, "{m:?}");
        assert!((m["write_mb_s"] - 30.0).abs() < 1e-9, "{m:?}");
    }

    /// The busiest disk's utilization in percent: a measured run's from its disks' counters,
    /// a simulated one's from its modeled drives (not its links or controllers).
    #[test]
    fn the_busiest_disk_is_the_runs_disk_util() {
        let mut r = RunResult::default();
        for (busy, name) in [(250, "loop0"), (750, "loop1")] {
            r.disk_util.push(raidlab_result::DiskUtil {
                name: name.into(),
                busy_ns: busy,
                elapsed_ns: 1000,
                ..Default::default()
            });
        }
        assert_eq!(of_run(&r)[DISK_UTIL], 75.0);
        let part = |kind: &str, utilization: f64| raidlab_result::ComponentUse {
            name: kind.into(),
            kind: kind.into(),
            utilization,
            busy_ns: 0,
            bound_bytes_s: None,
        };
        let sim = raidlab_result::SimExtras {
            components: vec![part("link", 0.99), part("disk", 0.5), part("disk", 0.25)],
            ..Default::default()
        };
        let r = RunResult {
            jobs: vec![raidlab_result::JobResult {
                instances: 1,
                sim: Some(sim),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(of_run(&r)[DISK_UTIL], 50.0);
    }
}
