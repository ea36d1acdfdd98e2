//! Time-series logs of one job (fio's `write_bw_log`, `write_iops_log`, `write_lat_log`):
//! plain data the executors feed one completion at a time, and the text of fio's log files.
//!
//! Times are milliseconds since the job started counting (after its ramp): the engine gives
//! wall-clock times through its clock, the simulator virtual times, so a simulated job's logs
//! are the same bit for bit on every run.
//!
//! Without averaging (`log_avg_msec=0`) every completion is one line in each log: its
//! bandwidth (bytes × 10^6 / completion latency in ns, fio's per-I/O figure), `1` in the
//! IOPS log, its completion and total latency in ns. With `log_avg_msec=N`:
//! - the latency logs: each window `[kN, (k+1)N)` ms that saw I/O of a direction is one line
//!   per direction at its end, the window's mean latencies (ns); the last window ends when
//!   the job does and is taken over its own length. With `log_max_value` a window's lines
//!   give its highest latency instead of its mean.
//! - the bandwidth and IOPS logs: their lines are the job's bandwidth and IOPS samples (the
//!   results' `bw_*` and `iops_*`), one per interval and direction that moved something,
//!   KiB/s and I/Os per second, as fio 3.33 takes them: [`crate::samples`] says when, and
//!   [`crate::Sampler::finish_logged`] hands them over. The last, unfinished interval has
//!   none.
//!
//! Windows without I/O are left out, as fio leaves them out. Averaged lines carry block size
//! 0 and offset 0.
//!
//! Submission latency is not measured apart from completion latency (see the JSON's
//! `slat_ns`), so the `slat` log is written empty, as fio writes it for its synchronous
//! engines.
//!
//! The histogram log (fio's `write_hist_log`, `log_hist_msec`, `log_hist_coarseness`), which
//! fio's `fiologparser_hist.py` reads: every `log_hist_msec` window `[kN, (k+1)N)` in which
//! a direction completed I/O is one line per direction, `time, direction, block size, c0,
//! c1, …`: the completion latencies of the window counted in fio's 1856 latency bins (the
//! `json+` bins, [`crate::histogram`]), 2^coarseness neighbouring bins added into one. The
//! time is the window's end (fio stamps the first completion past it); the job's last,
//! unfinished window is not written, as fio does not write it. Without `log_hist_msec` the
//! file is written empty, as fio writes it.

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
    /// `write_hist_log`: `{name}_clat_hist.{job}.log`.
    #[serde(default)]
    pub hist: Option<String>,
}

impl LogNames {
    /// Whether any log is asked for.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }
}

/// The files of several jobs' logs, each once: a file two jobs share (`per_job_logs=0`)
/// holds their lines one job after another, in the jobs' order (their numbers), as fio
/// appends them.
pub fn shared_files<'a>(logs: impl IntoIterator<Item = &'a JobLog>) -> Vec<(String, String)> {
    let mut logs: Vec<&JobLog> = logs.into_iter().collect();
    logs.sort_by_key(|l| l.number);
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, text) in logs.iter().flat_map(|l| l.files()) {
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => t.push_str(&text),
            None => out.push((name, text)),
        }
    }
    out
}

/// The most `log_hist_coarseness` fio takes: 1856 bins added 64 at a time into 29.
pub const MAX_HIST_COARSENESS: u32 = 6;

/// One line of a log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSample {
    /// Milliseconds since the job started counting.
    pub time_ms: u64,
    /// KiB/s (averaged) or bytes per ms of latency (per I/O) for bandwidth; I/Os per second
    /// or 1 for IOPS; nanoseconds for latencies.
    pub value: u64,
    /// 0 read, 1 write, 2 trim (fio's direction codes).
    pub dir: u8,
    /// Bytes of the request; 0 on averaged lines.
    pub bs: u64,
    /// Byte offset of the request; 0 on averaged lines.
    pub offset: u64,
}

/// What one averaging window has gathered for one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct WindowDir {
    ios: u64,
    clat_ns: u128,
    lat_ns: u128,
    clat_max_ns: u64,
    lat_max_ns: u64,
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
    /// An averaged window's latency lines give its highest latency, not its mean (fio's
    /// `log_max_value`). Its bandwidth and IOPS lines are one figure over the window
    /// either way.
    #[serde(default)]
    pub max_value: bool,
    /// Added to every line's time (fio's `log_unix_epoch`: the job's start on the wall
    /// clock, ms since the Unix epoch; 0: times from the job's start).
    #[serde(default)]
    pub epoch_ms: u64,
    /// Its files are named without the job's number and shared with the other jobs of the
    /// same names (fio's `per_job_logs=0`): see [`shared_files`].
    #[serde(default)]
    pub shared: bool,
    pub bw: Vec<LogSample>,
    pub iops: Vec<LogSample>,
    pub clat: Vec<LogSample>,
    pub lat: Vec<LogSample>,
    /// Index of the open averaging window, and what it holds per direction.
    window: u64,
    open: [WindowDir; 3],
    /// The histogram log's window, ms (fio's `log_hist_msec`; 0: the log stays empty), and
    /// how many neighbouring bins it adds into one (2^`hist_coarseness`).
    pub hist_msec: u64,
    pub hist_coarseness: u32,
    /// Index of the open histogram window; its counts and last block size per direction
    /// (counts allocated at the first completion).
    hist_window: u64,
    hist_counts: [Vec<u64>; 3],
    hist_bs: [u64; 3],
    /// The histogram log's lines so far.
    hist_text: String,
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

    /// Files named without the job's number, shared with other jobs (fio's `per_job_logs=0`).
    pub fn shared(mut self, shared: bool) -> JobLog {
        self.shared = shared;
        self
    }

    /// Averaged latency lines give each window's highest latency (fio's `log_max_value`).
    pub fn with_max(mut self, max_value: bool) -> JobLog {
        self.max_value = max_value;
        self
    }

    /// The histogram log too: windows of `msec` ms (0: the file stays empty), `coarseness`
    /// (0 to 6) halving the bins that many times.
    pub fn with_hist(mut self, msec: u64, coarseness: u32) -> JobLog {
        self.hist_msec = msec;
        self.hist_coarseness = coarseness.min(MAX_HIST_COARSENESS);
        self
    }

    /// The averaged bandwidth and IOPS lines: the job's samples (see the module's doc).
    pub fn put_sampled(&mut self, bw: Vec<LogSample>, iops: Vec<LogSample>) {
        if self.avg_msec > 0 {
            if self.names.bw.is_some() {
                self.bw = bw;
            }
            if self.names.iops.is_some() {
                self.iops = iops;
            }
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
        if self.hist_msec > 0 && self.names.hist.is_some() {
            self.hist_record(t_ns, dir, bytes, clat_ns);
        }
        if self.avg_msec > 0 {
            // (Only the latency logs are averaged here: see `put_sampled`.)
            if self.names.lat.is_some() {
                self.average(t_ns, dir, clat_ns, lat_ns);
            }
            return;
        }
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
    }

    /// A completion in the latency logs' averaging windows.
    fn average(&mut self, t_ns: u64, dir: u8, clat_ns: u64, lat_ns: u64) {
        let k = t_ns / (self.avg_msec * 1_000_000);
        if k != self.window {
            let end = (self.window + 1) * self.avg_msec * 1_000_000;
            self.close_window(end);
            self.window = k;
        }
        let w = &mut self.open[dir as usize];
        w.ios += 1;
        w.clat_ns += clat_ns as u128;
        w.lat_ns += lat_ns as u128;
        w.clat_max_ns = w.clat_max_ns.max(clat_ns);
        w.lat_max_ns = w.lat_max_ns.max(lat_ns);
    }

    /// The job ended at `end_ns` since it started counting: the last window is closed there.
    pub fn finish(&mut self, end_ns: u64) {
        if self.avg_msec > 0 {
            let full = (self.window + 1) * self.avg_msec * 1_000_000;
            self.close_window(end_ns.min(full));
        }
    }

    fn hist_record(&mut self, t_ns: u64, dir: u8, bytes: u64, clat_ns: u64) {
        let k = t_ns / (self.hist_msec * 1_000_000);
        if k != self.hist_window {
            self.hist_flush();
            self.hist_window = k;
        }
        let c = &mut self.hist_counts[dir as usize];
        if c.is_empty() {
            c.resize(crate::histogram::PLAT_NR, 0);
        }
        c[crate::histogram::bucket_of(clat_ns)] += 1;
        self.hist_bs[dir as usize] = bytes;
    }

    /// The open histogram window's lines (one per direction that completed I/O in it).
    fn hist_flush(&mut self) {
        let end_ms = (self.hist_window + 1) * self.hist_msec + self.epoch_ms;
        let group = 1usize << self.hist_coarseness;
        for dir in 0..3 {
            let c = &mut self.hist_counts[dir];
            if c.iter().all(|&n| n == 0) {
                continue;
            }
            let _ = write!(self.hist_text, "{end_ms}, {dir}, {}", self.hist_bs[dir]);
            for bins in c.chunks(group) {
                let _ = write!(self.hist_text, ", {}", bins.iter().sum::<u64>());
            }
            self.hist_text.push('\n');
            c.iter_mut().for_each(|n| *n = 0);
        }
    }

    /// Emit the open window's lines, the window ending at `end_ns`.
    fn close_window(&mut self, end_ns: u64) {
        let start = self.window * self.avg_msec * 1_000_000;
        let span = end_ns.saturating_sub(start);
        for dir in 0..3u8 {
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
            {
                let (clat, lat) = if self.max_value {
                    (w.clat_max_ns, w.lat_max_ns)
                } else {
                    // The mean to the nearest ns, halves up (fio adds 0.5 to its mean).
                    let mean = |sum: u128| ((sum + w.ios as u128 / 2) / w.ios as u128) as u64;
                    (mean(w.clat_ns), mean(w.lat_ns))
                };
                self.clat.push(at(clat));
                self.lat.push(at(lat));
            }
        }
    }

    /// The log files this job writes: (file name, text), fio's names and line format
    /// (`time, value, direction, block size[, offset], priority`; priority is always 0).
    pub fn files(&self) -> Vec<(String, String)> {
        let n = if self.shared {
            String::new()
        } else {
            format!(".{}", self.number)
        };
        let mut out = Vec::new();
        if let Some(name) = &self.names.bw {
            out.push((format!("{name}_bw{n}.log"), self.text(&self.bw)));
        }
        if let Some(name) = &self.names.iops {
            out.push((format!("{name}_iops{n}.log"), self.text(&self.iops)));
        }
        if let Some(name) = &self.names.lat {
            out.push((format!("{name}_clat{n}.log"), self.text(&self.clat)));
            out.push((format!("{name}_slat{n}.log"), String::new()));
            out.push((format!("{name}_lat{n}.log"), self.text(&self.lat)));
        }
        if let Some(name) = &self.names.hist {
            out.push((format!("{name}_clat_hist{n}.log"), self.hist_text.clone()));
        }
        out
    }

    /// The lines of one log.
    pub fn text(&self, samples: &[LogSample]) -> String {
        let mut s = String::with_capacity(samples.len() * 24);
        for x in samples {
            let t = x.time_ms + self.epoch_ms;
            let _ = write!(s, "{t}, {}, {}, {}", x.value, x.dir, x.bs);
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
            hist: None,
        }
    }

    /// The histogram log: a line per direction per window that completed I/O, at the
    /// window's end, counts in fio's bins added 2^coarseness at a time; the unfinished last
    /// window left out; only the histogram file when only it is asked for.
    #[test]
    fn histogram_lines_count_each_window_in_fios_bins() {
        let names = LogNames {
            hist: Some("h".into()),
            ..Default::default()
        };
        let ms = 1_000_000;
        let mut l = JobLog::new(3, names.clone(), 0, false).with_hist(100, 3);
        l.record(10 * ms, 0, 4096, 0, 1_000, 1_100); // bin 1000 ns
        l.record(20 * ms, 0, 4096, 0, 1_010, 1_100);
        l.record(30 * ms, 1, 8192, 0, 50_000, 50_000);
        l.record(250 * ms, 0, 4096, 0, 2_000_000, 2_000_000); // window 2 (none in 1)
        l.record(310 * ms, 0, 4096, 0, 7, 7); // window 3, unfinished at the end
        l.finish(320 * ms);
        let files = l.files();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "h_clat_hist.3.log");
        let lines: Vec<Vec<u64>> = files[0]
            .1
            .lines()
            .map(|x| x.split(", ").map(|f| f.parse().unwrap()).collect())
            .collect();
        assert_eq!(lines.len(), 3);
        let bins = crate::histogram::PLAT_NR >> 3;
        for (line, (t, dir, bs, n, at)) in lines.iter().zip([
            (100, 0, 4096, 2, 1_000),
            (100, 1, 8192, 1, 50_000),
            (300, 0, 4096, 1, 2_000_000),
        ]) {
            assert_eq!(line.len(), 3 + bins);
            assert_eq!((line[0], line[1], line[2]), (t, dir, bs));
            assert_eq!(line[3..].iter().sum::<u64>(), n);
            assert_eq!(line[3 + (crate::histogram::bucket_of(at) >> 3)], n);
        }
        // Without a window the file is there, empty, as fio writes it.
        let l = JobLog::new(1, names, 0, false);
        assert_eq!(
            l.files(),
            [("h_clat_hist.1.log".to_string(), String::new())]
        );
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

    /// Averaged: the latency lines are each window's means, the last window ending with the
    /// job; the bandwidth and IOPS lines are the job's samples, handed over by its sampler
    /// (the unfinished last interval has none).
    #[test]
    fn averaged_lines_skip_idle_windows_and_bandwidth_lines_are_the_samples() {
        use crate::samples::{SampleEvery, Sampler};
        let every = SampleEvery::Ms(100);
        let mut l = JobLog::new(1, names(), 100, false);
        let mut s = Sampler::new(every, every).logging(true, true);
        // Window 0: two reads of 1 MiB; window 1: nothing; window 2: one write; the job
        // ends 50 ms into window 3 after one more read.
        for (t, dir, clat, lat) in [
            (10_000_000, 0, 100, 200),
            (90_000_000, 0, 300, 400),
            (250_000_000, 1, 1000, 1000),
            (320_000_000, 0, 50, 60),
        ] {
            l.record(t, dir, 1 << 20, 0, clat, lat);
            s.record(t, dir as usize, 1 << 20, clat);
        }
        // (The log is finished with the samples.)
        let [r, w, _] = s.finish_logged(350_000_000, Some(&mut l));
        let bw: Vec<(u64, u64, u8)> = l.bw.iter().map(|s| (s.time_ms, s.value, s.dir)).collect();
        // 2 MiB in 100 ms = 20480 KiB/s; 1 MiB in 100 ms; the last 50 ms not sampled.
        assert_eq!(bw, [(100, 20480, 0), (300, 10240, 1)]);
        let iops: Vec<u64> = l.iops.iter().map(|s| s.value).collect();
        assert_eq!(iops, [20, 10]);
        assert_eq!((r.bw_kib.samples, r.bw_kib.max), (1, 20480));
        assert_eq!((w.bw_kib.samples, w.iops.max), (1, 10));
        let clat: Vec<u64> = l.clat.iter().map(|s| s.value).collect();
        assert_eq!(clat, [200, 1000, 50]);
        assert!(l.bw.iter().all(|s| s.bs == 0 && s.offset == 0));

        // A mean of 100.5 ns is logged as 101, as fio rounds it.
        let mut h = JobLog::new(1, names(), 100, false);
        h.record(10_000_000, 0, 4096, 0, 100, 100);
        h.record(20_000_000, 0, 4096, 0, 101, 102);
        h.finish(100_000_000);
        assert_eq!((h.clat[0].value, h.lat[0].value), (101, 101));

        // log_max_value: the same windows, their highest latencies.
        let mut m = JobLog::new(1, names(), 100, false).with_max(true);
        m.record(10_000_000, 0, 1 << 20, 0, 100, 200);
        m.record(90_000_000, 0, 1 << 20, 0, 300, 400);
        m.record(250_000_000, 1, 1 << 20, 0, 1000, 1000);
        m.record(320_000_000, 0, 1 << 20, 0, 50, 60);
        m.finish(350_000_000);
        let clat: Vec<u64> = m.clat.iter().map(|s| s.value).collect();
        assert_eq!(clat, [300, 1000, 50]);
        let lat: Vec<u64> = m.lat.iter().map(|s| s.value).collect();
        assert_eq!(lat, [400, 1000, 60]);
        // (The sampler's lines replace nothing in a log that logs every I/O.)
        let mut every_io = JobLog::new(1, names(), 0, false);
        every_io.record(10_000_000, 0, 4096, 0, 1_000, 1_000);
        every_io.put_sampled(Vec::new(), Vec::new());
        assert_eq!(every_io.bw.len(), 1);
    }
}
