//! Time-series logs of one job (fio's `write_bw_log`, `write_iops_log`, `write_lat_log`):
//! plain data the executors feed one completion at a time, and the text of fio's log files.
//!
//! Times are milliseconds since the job started counting (after its ramp): the engine gives
//! wall-clock times through its clock, the simulator virtual times, so a simulated job's logs
//! are the same bit for bit on every run.
//!
//! Without averaging (`log_avg_msec=0`) every completion is one line in each log: its
//! bandwidth (bytes × 10^6 / completion latency in ns, fio's per-I/O figure), `1` in the
//! IOPS log, its completion and total latency in ns. With `log_avg_msec=N` each window
//! `[kN, (k+1)N)` ms that saw I/O of a direction is one line per direction at its end:
//! KiB/s over the window, I/Os per second over it, and the window's mean latencies (ns); the
//! last window ends when the job does and is taken over its own length. Windows without I/O
//! are left out, as fio leaves them out. Averaged lines carry block size 0 and offset 0.
//!
//! Submission latency is not measured apart from completion latency (see the JSON's
//! `slat_ns`), so the `slat` log is written empty, as fio writes it for its synchronous
//! engines.

use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The file name prefixes of the logs a job writes (fio's option values); `None`: not written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogNames {
    /// `write_bw_log`: `{name}_bw.{job}.log`.
    pub bw: Option<String>,
    /// `write_iops_log`: `{name}_iops.{job}.log`.
    pub iops: Option<String>,
    /// `write_lat_log`: `{name}_clat`, `_slat` and `_lat.{job}.log`.
    pub lat: Option<String>,
}

impl LogNames {
    /// Whether any log is asked for.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some()
    }
}

/// One line of a log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSample {
    /// Milliseconds since the job started counting.
    pub time_ms: u64,
    /// KiB/s (averaged) or bytes per ms of latency (per I/O) for bandwidth; I/Os per second
    /// or 1 for IOPS; nanoseconds for latencies.
    pub value: u64,
    /// 0 read, 1 write (fio's direction codes).
    pub dir: u8,
    /// Bytes of the request; 0 on averaged lines.
    pub bs: u64,
    /// Byte offset of the request; 0 on averaged lines.
    pub offset: u64,
}

/// What one averaging window has gathered for one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct WindowDir {
    bytes: u64,
    ios: u64,
    clat_ns: u128,
    lat_ns: u128,
}

/// A job's time-series logs being recorded, and then recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobLog {
    /// fio's job number, from 1 in the order the run's jobs were expanded: the `N` of
    /// `NAME_bw.N.log`.
    pub number: u32,
    pub names: LogNames,
    /// Averaging window, ms (fio's `log_avg_msec`); 0 logs every I/O.
    pub avg_msec: u64,
    /// Lines carry the request's offset (fio's `log_offset`).
    pub with_offset: bool,
    pub bw: Vec<LogSample>,
    pub iops: Vec<LogSample>,
    pub clat: Vec<LogSample>,
    pub lat: Vec<LogSample>,
    /// Index of the open averaging window, and what it holds per direction.
    window: u64,
    open: [WindowDir; 2],
}

impl JobLog {
    /// An empty log for job `number` (from 1).
    pub fn new(number: u32, names: LogNames, avg_msec: u64, with_offset: bool) -> JobLog {
        JobLog {
            number,
            names,
            avg_msec,
            with_offset,
            ..Default::default()
        }
    }

    /// One completed request: `t_ns` since the job started counting, direction (0 read,
    /// 1 write), its bytes and offset, its completion and total latency.
    pub fn record(
        &mut self,
        t_ns: u64,
        dir: u8,
        bytes: u64,
        offset: u64,
        clat_ns: u64,
        lat_ns: u64,
    ) {
        let dir = dir.min(1);
        if self.avg_msec == 0 {
            let at = |value| LogSample {
                time_ms: t_ns / 1_000_000,
                value,
                dir,
                bs: bytes,
                offset,
            };
            if self.names.bw.is_some() {
                let bw = if clat_ns == 0 {
                    0
                } else {
                    (bytes as u128 * 1_000_000 / clat_ns as u128) as u64
                };
                self.bw.push(at(bw));
            }
            if self.names.iops.is_some() {
                self.iops.push(at(1));
            }
            if self.names.lat.is_some() {
                self.clat.push(at(clat_ns));
                self.lat.push(at(lat_ns));
            }
            return;
        }
        let k = t_ns / (self.avg_msec * 1_000_000);
        if k != self.window {
            let end = (self.window + 1) * self.avg_msec * 1_000_000;
            self.close_window(end);
            self.window = k;
        }
        let w = &mut self.open[dir as usize];
        w.bytes += bytes;
        w.ios += 1;
        w.clat_ns += clat_ns as u128;
        w.lat_ns += lat_ns as u128;
    }

    /// The job ended at `end_ns` since it started counting: the last window is closed there.
    pub fn finish(&mut self, end_ns: u64) {
        if self.avg_msec > 0 {
            let full = (self.window + 1) * self.avg_msec * 1_000_000;
            self.close_window(end_ns.min(full));
        }
    }

    /// Emit the open window's lines, the window ending at `end_ns`.
    fn close_window(&mut self, end_ns: u64) {
        let start = self.window * self.avg_msec * 1_000_000;
        let span = end_ns.saturating_sub(start);
        for dir in 0..2u8 {
            let w = std::mem::take(&mut self.open[dir as usize]);
            if w.ios == 0 || span == 0 {
                continue;
            }
            let at = |value| LogSample {
                time_ms: end_ns / 1_000_000,
                value,
                dir,
                bs: 0,
                offset: 0,
            };
            if self.names.bw.is_some() {
                // KiB/s over the window.
                let kib_s = w.bytes as u128 * 1_000_000_000 / span as u128 / 1024;
                self.bw.push(at(kib_s as u64));
            }
            if self.names.iops.is_some() {
                let iops = w.ios as u128 * 1_000_000_000 / span as u128;
                self.iops.push(at(iops as u64));
            }
            if self.names.lat.is_some() {
                self.clat.push(at((w.clat_ns / w.ios as u128) as u64));
                self.lat.push(at((w.lat_ns / w.ios as u128) as u64));
            }
        }
    }

    /// The log files this job writes: (file name, text), fio's names and line format
    /// (`time, value, direction, block size[, offset], priority`; priority is always 0).
    pub fn files(&self) -> Vec<(String, String)> {
        let n = self.number;
        let mut out = Vec::new();
        if let Some(name) = &self.names.bw {
            out.push((format!("{name}_bw.{n}.log"), self.text(&self.bw)));
        }
        if let Some(name) = &self.names.iops {
            out.push((format!("{name}_iops.{n}.log"), self.text(&self.iops)));
        }
        if let Some(name) = &self.names.lat {
            out.push((format!("{name}_clat.{n}.log"), self.text(&self.clat)));
            out.push((format!("{name}_slat.{n}.log"), String::new()));
            out.push((format!("{name}_lat.{n}.log"), self.text(&self.lat)));
        }
        out
    }

    /// The lines of one log.
    pub fn text(&self, samples: &[LogSample]) -> String {
        let mut s = String::with_capacity(samples.len() * 24);
        for x in samples {
            let _ = write!(s, "{}, {}, {}, {}", x.time_ms, x.value, x.dir, x.bs);
            if self.with_offset {
                let _ = write!(s, ", {}", x.offset);
            }
            s.push_str(", 0\n");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> LogNames {
        LogNames {
            bw: Some("a".into()),
            iops: Some("b".into()),
            lat: Some("c".into()),
        }
    }

    #[test]
    fn every_io_is_a_line_in_fios_format() {
        let mut l = JobLog::new(2, names(), 0, false);
        l.record(1_500_000, 0, 4096, 8192, 10_000, 12_000);
        l.record(2_000_000, 1, 8192, 0, 0, 5);
        let files = l.files();
        let file_names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(
            file_names,
            [
                "a_bw.2.log",
                "b_iops.2.log",
                "c_clat.2.log",
                "c_slat.2.log",
                "c_lat.2.log"
            ]
        );
        // 4096 bytes in 10 µs: 4096 × 10^6 / 10000.
        assert_eq!(files[0].1, "1, 409600, 0, 4096, 0\n2, 0, 1, 8192, 0\n");
        assert_eq!(files[1].1, "1, 1, 0, 4096, 0\n2, 1, 1, 8192, 0\n");
        assert_eq!(files[2].1, "1, 10000, 0, 4096, 0\n2, 0, 1, 8192, 0\n");
        assert_eq!(files[3].1, "");
        assert_eq!(files[4].1, "1, 12000, 0, 4096, 0\n2, 5, 1, 8192, 0\n");
        let mut o = JobLog::new(1, names(), 0, true);
        o.record(0, 0, 4096, 8192, 1000, 1000);
        assert_eq!(o.text(&o.bw), "0, 4096000, 0, 4096, 8192, 0\n");
    }

    #[test]
    fn averaged_windows_cover_the_bytes_and_skip_idle_windows() {
        let mut l = JobLog::new(1, names(), 100, false);
        // Window 0: two reads of 1 MiB; window 1: nothing; window 2: one write; the job
        // ends 50 ms into window 3 after one more read.
        l.record(10_000_000, 0, 1 << 20, 0, 100, 200);
        l.record(90_000_000, 0, 1 << 20, 0, 300, 400);
        l.record(250_000_000, 1, 1 << 20, 0, 1000, 1000);
        l.record(320_000_000, 0, 1 << 20, 0, 50, 60);
        l.finish(350_000_000);
        let bw: Vec<(u64, u64, u8)> = l.bw.iter().map(|s| (s.time_ms, s.value, s.dir)).collect();
        // 2 MiB in 100 ms = 20480 KiB/s; 1 MiB in 100 ms; 1 MiB in the last 50 ms.
        assert_eq!(bw, [(100, 20480, 0), (300, 10240, 1), (350, 20480, 0)]);
        let iops: Vec<u64> = l.iops.iter().map(|s| s.value).collect();
        assert_eq!(iops, [20, 10, 20]);
        let clat: Vec<u64> = l.clat.iter().map(|s| s.value).collect();
        assert_eq!(clat, [200, 1000, 50]);
        assert!(l.bw.iter().all(|s| s.bs == 0 && s.offset == 0));
        // value × window length adds up to the bytes.
        let kib: u64 = [100u64, 100, 50]
            .iter()
            .zip(&l.bw)
            .map(|(ms, s)| s.value * ms / 1000)
            .sum();
        assert_eq!(kib * 1024, 4 << 20);
    }
}
