//! fio's terse output, version 3 (`--output-format=terse`, `--minimal`): one line of 121
//! semicolon-separated fields per job (per group under group_reporting), in fio's order.
//!
//! Fields: `3;version;jobname;groupid;error`; then for reads and for writes 41 fields: KiB
//! moved, bandwidth (KiB/s), IOPS, runtime (ms), submission latency min/max/mean/stddev (µs),
//! completion latency min/max/mean/stddev (µs), 20 percentiles (`P%=µs`, unused ones
//! `0%=0`), total latency min/max/mean/stddev (µs), bandwidth samples
//! min/max/percent of the group/mean/stddev (KiB/s, the samples of the JSON's `bw_min`…,
//! see `crate::samples`); then CPU `usr%;sys%;ctx;majf;minf`, 7 IO
//! depth shares, 10 µs and 12 ms latency shares (the first, under 2 µs, with the shares
//! under 1 µs in it, as fio counts them). (Version 3 has no trim fields: fio added them
//! in version 4.) Under `unified_rw_reporting=mixed` one block of 41, both directions
//! added up, takes the place of the two (80 fields); under `both` it follows them (162), as
//! fio 3.33 writes them.
//!
//! Fields raidlab does not measure are written as fio writes a zero value: submission
//! latency (measured together with completion latency), `ctx`, `majf`, `minf`, and CPU usage
//! of a simulated job except the modelled host's system share. Nine fields follow for each
//! disk of the run (`RunResult::disk_util`, a simulated run's modeled drives too), as fio
//! appends them for each disk it sampled; none for a file on tmpfs, as in fio.

use super::{bw_agg_pct, group_agg_bytes, iodepth_percentages, latency_distribution};
use crate::histogram::LatencyHistogram;
use crate::schema::{DirStats, JobResult, Percentiles, RunResult};
use std::fmt::Write;

/// Percentile fields per direction (fio's `FIO_IO_U_LIST_MAX_LEN`).
pub const TERSE_PERCENTILES: usize = 20;

/// The terse version raidlab writes.
pub const TERSE_VERSION: u32 = 3;

/// `min;max;mean;stddev` of a histogram in µs, as fio writes latencies in terse lines.
fn lat_fields(out: &mut String, h: &LatencyHistogram) {
    if h.count() == 0 {
        out.push_str(";0;0;0.000000;0.000000");
    } else {
        let _ = write!(
            out,
            ";{};{};{:.6};{:.6}",
            h.min() / 1000,
            h.max() / 1000,
            h.mean() / 1000.0,
            h.stddev() / 1000.0
        );
    }
}

fn direction(out: &mut String, d: &DirStats, p: &Percentiles, agg_bytes: u64) {
    let (bw_kib, iops) = if d.runtime_ns == 0 {
        (0, 0)
    } else {
        let ns = d.runtime_ns as u128;
        (
            d.io_bytes as u128 * 1_000_000_000 / ns / 1024,
            d.total_ios as u128 * 1_000_000_000 / ns,
        )
    };
    let _ = write!(
        out,
        ";{};{bw_kib};{iops};{}",
        d.io_bytes >> 10,
        super::runtime_ms(d.runtime_ns)
    );
    // Submission latency: not measured apart (fio's zeros when it has no samples).
    out.push_str(";0;0;0.000000;0.000000");
    lat_fields(out, &d.clat);
    // As fio: total latency's percentiles when lat_percentiles is on, else completion
    // latency's when clat_percentiles is, else none.
    let hist = if p.lat == Some(true) {
        Some(&d.lat)
    } else if p.clat {
        Some(&d.clat)
    } else {
        None
    };
    let list = hist.map(|_| p.values()).unwrap_or(&[]);
    for i in 0..TERSE_PERCENTILES {
        match (list.get(i), hist) {
            (Some(&pct), Some(h)) => {
                let v = if h.count() == 0 {
                    0
                } else {
                    h.percentile(pct) / 1000
                };
                let _ = write!(out, ";{pct:.6}%={v}");
            }
            _ => out.push_str(";0%=0"),
        }
    }
    lat_fields(out, &d.lat);
    // Bandwidth samples, as fio: zeros without any.
    let bw = &d.samples.bw_kib;
    if bw.samples == 0 {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    } else {
        let _ = write!(
            out,
            ";{};{};{:.6}%;{:.6};{:.6}",
            bw.min,
            bw.max,
            bw_agg_pct(bw.mean, agg_bytes),
            bw.mean,
            bw.stddev()
        );
    }
}

/// One job's terse line (with its newline); `agg` is its reporting group's aggregate
/// bandwidth, reads, writes and both, bytes/s (the bandwidth samples' percent is of it).
/// Under `unified_rw_reporting` the direction fields are fio's: one block, `mixed`'s, in
/// place of the two; or a third block, `mixed`'s, after them.
pub fn terse_line(
    j: &JobResult,
    version: &str,
    agg: [u64; 4],
    disks: &[crate::schema::DiskUtil],
) -> String {
    let mut out = format!(
        "{TERSE_VERSION};{version};{};{};{}",
        j.name,
        j.groupid,
        j.error_code()
    );
    // (Version 3 has no trim fields: a job's trims count in `mixed` alone.)
    for (d, stats) in j
        .directions()
        .into_iter()
        .filter(|(d, _)| *d != crate::schema::TRIM)
    {
        direction(&mut out, &stats, &j.percentiles, agg[d]);
    }
    let _ = write!(out, ";{:.6}%;{:.6}%;0;0;0", j.usr_cpu, j.sys_cpu);
    for (_, p) in iodepth_percentages(&j.iodepth_level) {
        let _ = write!(out, ";{p:.1}%");
    }
    let lat = j.all_lat();
    // fio's terse line has no ns shares: those under 1 µs count in the first µs share (<2).
    let groups = latency_distribution(&lat);
    let under_us: f64 = groups
        .iter()
        .filter(|g| g.key == "latency_ns")
        .flat_map(|g| g.entries.iter().map(|e| e.1))
        .sum();
    for g in groups.iter().filter(|g| g.key != "latency_ns") {
        for (i, (_, p)) in g.entries.iter().enumerate() {
            let p = if g.key == "latency_us" && i == 0 {
                p + under_us
            } else {
                *p
            };
            let _ = write!(out, ";{p:.2}%");
        }
    }
    // Then, as fio, every disk of the run on every job's line: name, requests and merges
    // by direction, their times and the queue's (ms), and the busy share.
    for d in disks {
        let _ = write!(out, ";{}", d.name);
        for v in d.fio_figures() {
            let _ = write!(out, ";{v}");
        }
        let _ = write!(out, ";{:.2}%", d.utilization() * 100.0);
    }
    // fio appends the errors gone on past (continue_on_error), then the description, when
    // there are, as more fields.
    if let Some(e) = &j.errors {
        let _ = write!(out, ";{};{}", e.total, e.first);
    }
    if let Some(d) = &j.description {
        let _ = write!(out, ";{d}");
    }
    out.push('\n');
    out
}

/// fio's terse output for `result`: one line per job.
pub fn render_terse(result: &RunResult) -> String {
    let version = if result.version.is_empty() {
        format!("raidlab-{}", env!("CARGO_PKG_VERSION"))
    } else {
        result.version.clone()
    };
    result
        .jobs
        .iter()
        .map(|j| {
            terse_line(
                j,
                &version,
                group_agg_bytes(result, j.groupid),
                &result.disk_util,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> JobResult {
        let mut j = JobResult {
            name: "r".into(),
            instances: 1,
            target: "/tmp/x".into(),
            ..Default::default()
        };
        for i in 1..=1000u64 {
            j.read.clat.record(i * 1000);
            j.read.lat.record(i * 1000 + 500);
        }
        j.read.io_bytes = 4096 * 1000;
        j.read.total_ios = 1000;
        j.read.runtime_ns = 2_000_000_000;
        j.iodepth_level = [1000, 0, 0, 0, 0, 0, 0];
        j.sys_cpu = 12.5;
        j
    }

    fn fields(j: &JobResult) -> Vec<String> {
        let line = terse_line(j, "raidlab-test", [2_048_000, 0, 0, 2_048_000], &[]);
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        line.trim_end().split(';').map(str::to_string).collect()
    }

    /// Every disk of the run, nine fields each, on every job's line, before the errors
    /// and the description, as fio 3.33 puts them (130 fields for one disk).
    #[test]
    fn disks_follow_the_latency_shares() {
        let mut j = job();
        j.description = Some("d".into());
        let d = crate::schema::DiskUtil {
            name: "loop0".into(),
            read_ios: 15_642,
            read_ticks_ns: 539_000_000,
            in_queue_ns: 539_500_000,
            busy_ns: 534_700_000,
            elapsed_ns: 1_000_000_000,
            ..Default::default()
        };
        let line = terse_line(&j, "v", [0; 4], &[d.clone(), d]);
        let f: Vec<&str> = line.trim_end().split(';').collect();
        assert_eq!(f.len(), 121 + 18 + 1, "{line}");
        let disk = ["loop0", "15642", "0", "0", "0", "539", "0", "539", "53.47%"];
        assert_eq!(&f[121..130], disk);
        assert_eq!(&f[130..139], disk);
        assert_eq!(f[139], "d");
    }

    /// fio 3.33's field count for a job on a file without disk statistics, and each value
    /// at fio's position (1-based, as fio's HOWTO numbers them).
    #[test]
    fn fields_land_where_fio_puts_them() {
        let f = fields(&job());
        assert_eq!(f.len(), 121);
        let at = |n: usize| f[n - 1].as_str();
        assert_eq!(
            [at(1), at(2), at(3), at(4), at(5)],
            ["3", "raidlab-test", "r", "0", "0"]
        );
        // Read: KiB, KiB/s, IOPS, ms.
        assert_eq!(
            [at(6), at(7), at(8), at(9)],
            ["4000", "2000", "500", "2000"]
        );
        assert_eq!(
            [at(10), at(11), at(12), at(13)],
            ["0", "0", "0.000000", "0.000000"]
        );
        // clat in µs.
        assert_eq!([at(14), at(15)], ["1", "1000"]);
        assert_eq!(at(16).parse::<f64>().unwrap(), 500.5);
        // Percentiles 1% … 99.99%, then three unused.
        assert!(at(18).starts_with("1.000000%="), "{}", at(18));
        assert!(at(30).starts_with("99.000000%="), "{}", at(30));
        let p99: u64 = at(30).split('=').nth(1).unwrap().parse().unwrap();
        assert!((980..=1000).contains(&p99), "{p99}");
        assert_eq!([at(35), at(36), at(37)], ["0%=0", "0%=0", "0%=0"]);
        // lat in µs, then bandwidth samples.
        assert_eq!([at(38), at(39)], ["1", "1000"]);
        assert_eq!(at(40).parse::<f64>().unwrap(), 501.0);
        // No samples: zeros, as fio.
        assert_eq!([at(42), at(43), at(44)], ["0", "0", "0.000000%"]);
        // Write: nothing moved, percentiles listed with zeros as fio does.
        assert_eq!([at(47), at(48), at(49), at(50)], ["0", "0", "0", "0"]);
        assert_eq!(at(59), "1.000000%=0");
        // CPU, IO depths, µs and ms latency shares.
        assert_eq!(
            [at(88), at(89), at(90), at(91), at(92)],
            ["0.000000%", "12.500000%", "0", "0", "0"]
        );
        assert_eq!([at(93), at(94)], ["100.0%", "0.0%"]);
        let shares: f64 = f[99..121]
            .iter()
            .map(|s| s.trim_end_matches('%').parse::<f64>().unwrap())
            .sum();
        assert!((shares - 100.0).abs() < 0.05, "{shares}");
    }

    /// The bandwidth fields are the samples' min, max, percent of the group's aggregate,
    /// mean and standard deviation (fio 3.33's line for 5 samples: `1024;1032;100.000000%;
    /// 1025.600000;3.577709`).
    #[test]
    fn bandwidth_samples_fill_their_fields() {
        let mut j = job();
        for v in [1024, 1024, 1024, 1024, 1032] {
            j.read.samples.bw_kib.add(v);
        }
        let f = fields(&j);
        let at = |n: usize| f[n - 1].as_str();
        // The group's aggregate is 2000 KiB/s: 1025.6 of it is 51.28%.
        assert_eq!(
            [at(42), at(43), at(44), at(45), at(46)],
            ["1024", "1032", "51.280000%", "1025.600000", "3.577709"]
        );
        // Two such jobs in one group: each reports its share of the group's sum.
        let mut r = RunResult {
            jobs: vec![j.clone(), j],
            ..Default::default()
        };
        r.jobs[1].name = "s".into();
        let out = render_terse(&r);
        let line: Vec<&str> = out.lines().next().unwrap().split(';').collect();
        assert_eq!(line[43], "25.640000%");
    }

    /// Sub-microsecond latencies count in the first µs share, as in fio's line (it has no
    /// ns shares): 500 ns and 1.5 µs are both "<2 µs".
    #[test]
    fn nanosecond_latencies_count_under_two_microseconds() {
        let mut j = job();
        j.read = DirStats::default();
        for ns in [500, 1500] {
            j.read.lat.record(ns);
            j.read.clat.record(ns);
        }
        j.read.total_ios = 2;
        let f = fields(&j);
        assert_eq!(f[99], "100.00%");
        assert!(f[100..121].iter().all(|x| x == "0.00%"));
    }

    #[test]
    fn percentile_options_choose_the_list_and_the_latency() {
        let mut j = job();
        j.percentiles = Percentiles {
            list: vec![50.0, 99.5],
            precision: 1,
            clat: true,
            lat: Some(true),
        };
        let f = fields(&j);
        assert_eq!(f.len(), 121);
        let p50: u64 = f[17].strip_prefix("50.000000%=").unwrap().parse().unwrap();
        // Total latencies are 1.5 µs … 1000.5 µs: the median is about 500 µs.
        assert!((490..=510).contains(&p50), "{p50}");
        assert!(f[18].starts_with("99.500000%="), "{}", f[18]);
        assert!(f[19..37].iter().all(|x| x == "0%=0"));
        j.percentiles = Percentiles {
            clat: false,
            lat: None,
            ..Default::default()
        };
        let f = fields(&j);
        assert!(f[17..37].iter().all(|x| x == "0%=0"));
    }
}
