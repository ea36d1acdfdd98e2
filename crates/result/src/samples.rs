//! Bandwidth and IOPS samples (fio's `bw_min`, `bw_max`, `bw_agg`, `bw_mean`, `bw_dev`,
//! `bw_samples`, `iops_min` … `iops_samples`, and the terse line's bandwidth fields), and
//! the averaged lines of the bandwidth and IOPS logs, which are the same samples.
//!
//! fio takes one sample per direction every `bw_avg_time` ms (IOPS: `iops_avg_time`; both
//! 500 by default): what the direction moved in that interval over its length, KiB/s
//! (`bytes × 1000 / ms / 1024`, whole numbers) and I/Os per second. An interval in which a
//! direction moved nothing gives that direction no sample. The samples' statistics are
//! their count, minimum, maximum, mean and sample standard deviation (running mean and sum
//! of squared deviations, fio's `io_stat`); a reporting group adds its jobs' statistics up
//! (count, minimum, maximum, mean and squared deviations each summed, as fio 3.33 sums them
//! under `group_reporting`).
//!
//! A job that writes a bandwidth (or IOPS) log samples as the log does (fio 3.33's
//! `setup_log` and `calc_log_samples`): with `log_avg_msec=0` every completion is a sample
//! (bandwidth: its bytes × 10^6 over its completion latency in ns; IOPS: 1), and otherwise
//! each sample, taken every `log_avg_msec` ms (or every `bw_avg_time` if the job gives that
//! too), is also the log's line for its interval. [`SampleEvery`] says which, per kind; the
//! workload crate's `JobSpec::sample_every` decides it from a job's options.
//!
//! [`Sampler`] is plain data an executor feeds each counted completion at its time since the
//! ramp ended: the engine at clock times, the simulator at virtual times. Intervals are
//! `[k·T, (k+1)·T)` from there; those that end before the job's measured runtime does, and
//! before its `runtime` if it has one, are sampled (fio's last interval, cut short or ending
//! as the job does, is not; nor are requests completing after the runtime).

use crate::timelog::LogSample;
use serde::{Deserialize, Serialize};

/// fio's default `bw_avg_time` and `iops_avg_time`, ms.
pub const DEFAULT_AVG_TIME_MS: u64 = 500;

/// When one kind of sample (bandwidth or IOPS) is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleEvery {
    /// At the end of every interval of this many ms (at least 1).
    Ms(u64),
    /// At every completion (a log without averaging, fio's `log_avg_msec=0`).
    Io,
}

/// The statistics of a series of samples (fio's `io_stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleStats {
    /// How many samples.
    pub samples: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub s: f64,
}

impl SampleStats {
    /// Add one sample (a running mean and sum of squares, as fio's `add_stat_sample`).
    pub fn add(&mut self, v: u64) {
        if self.samples == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.samples += 1;
        let x = v as f64;
        let delta = x - self.mean;
        self.mean += delta / self.samples as f64;
        self.s += delta * (x - self.mean);
    }

    /// Sample standard deviation (0 for fewer than two samples).
    pub fn stddev(&self) -> f64 {
        if self.samples > 1 {
            (self.s / (self.samples - 1) as f64).sqrt()
        } else {
            0.0
        }
    }

    /// Fold in another job's samples of the same reporting group: everything adds up, so
    /// the group's mean is the jobs' rates summed (fio's "pure sum" of bw and IOPS stats).
    pub fn sum_group(&mut self, other: &SampleStats) {
        if other.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *other;
            return;
        }
        self.min += other.min;
        self.max += other.max;
        self.samples += other.samples;
        self.mean += other.mean;
        self.s += other.s;
    }
}

/// One direction's samples: bandwidth in KiB/s and IOPS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirSamples {
    pub bw_kib: SampleStats,
    pub iops: SampleStats,
}

impl DirSamples {
    /// Fold in another job's samples of the same reporting group.
    pub fn sum_group(&mut self, other: &DirSamples) {
        self.bw_kib.sum_group(&other.bw_kib);
        self.iops.sum_group(&other.iops);
    }
}

/// One interval series: its length, where the current interval ends, and each direction's
/// count (bytes or I/Os) at the last sample. A series sampled at every completion has no
/// interval: its end never comes.
#[derive(Clone, Copy, Debug)]
struct Series {
    every: SampleEvery,
    len_ns: u64,
    ends_at: u64,
    base: [u64; 3],
}

impl Series {
    fn new(every: SampleEvery) -> Series {
        let len_ns = match every {
            SampleEvery::Ms(ms) => ms.max(1) * 1_000_000,
            SampleEvery::Io => u64::MAX,
        };
        Series {
            every,
            len_ns,
            ends_at: len_ns,
            base: [0; 3],
        }
    }

    fn per_io(&self) -> bool {
        self.every == SampleEvery::Io
    }

    /// Close every interval that ends at or before `t` (`strictly`: before `t`), sampling
    /// each direction that moved something in it; `per_s` turns an interval's count into
    /// a rate.
    /// Only intervals ending before `limit` are sampled.
    /// Each sample is also a log line when `lines` is given.
    #[allow(clippy::too_many_arguments)]
    fn close(
        &mut self,
        t: u64,
        strictly: bool,
        limit: u64,
        now: [u64; 3],
        out: &mut [SampleStats; 3],
        mut lines: Option<&mut Vec<LogSample>>,
        per_s: impl Fn(u64, u64) -> u64,
    ) {
        while self.ends_at < t || (!strictly && self.ends_at == t) {
            for d in 0..3 {
                let delta = now[d] - self.base[d];
                if delta > 0 {
                    if self.ends_at < limit {
                        let v = per_s(delta, self.len_ns / 1_000_000);
                        out[d].add(v);
                        if let Some(l) = lines.as_deref_mut() {
                            l.push(LogSample {
                                time_ms: self.ends_at / 1_000_000,
                                value: v,
                                dir: d as u8,
                                bs: 0,
                                offset: 0,
                            });
                        }
                    }
                    self.base[d] = now[d];
                }
            }
            self.ends_at += self.len_ns;
        }
    }
}

/// A job's sampler: fed each counted completion, it closes intervals as time passes them.
#[derive(Clone, Debug)]
pub struct Sampler {
    bw: Series,
    iops: Series,
    /// The earlier of the two intervals' ends: nothing to close before it.
    next_end: u64,
    /// Intervals ending at or after this are not sampled (the job's runtime).
    limit: u64,
    bytes: [u64; 3],
    ios: [u64; 3],
    bw_out: [SampleStats; 3],
    iops_out: [SampleStats; 3],
    /// The samples as log lines (bandwidth, IOPS), for a job whose averaged log they are.
    lines: [Option<Vec<LogSample>>; 2],
}

impl Default for Sampler {
    fn default() -> Self {
        let every = SampleEvery::Ms(DEFAULT_AVG_TIME_MS);
        Sampler::new(every, every)
    }
}

fn kib_per_s(bytes: u64, ms: u64) -> u64 {
    (bytes as u128 * 1000 / ms as u128 / 1024) as u64
}

fn per_s(ios: u64, ms: u64) -> u64 {
    (ios as u128 * 1000 / ms as u128) as u64
}

impl Sampler {
    /// Samples bandwidth and IOPS each as `bw` and `iops` say.
    pub fn new(bw: SampleEvery, iops: SampleEvery) -> Sampler {
        let (bw, iops) = (Series::new(bw), Series::new(iops));
        let mut s = Sampler {
            next_end: 0,
            limit: u64::MAX,
            bw,
            iops,
            bytes: [0; 3],
            ios: [0; 3],
            bw_out: [SampleStats::default(); 3],
            iops_out: [SampleStats::default(); 3],
            lines: [None, None],
        };
        s.next_end = s.next_end();
        s
    }

    /// A job's sampler: each kind every that many ms, or at every completion (`None`), as
    /// the workload crate's `JobSpec::sample_every` says; `logged`, the kinds whose samples
    /// are also its averaged log's lines (`JobSpec::samples_logged`); `runtime_ns`, its
    /// runtime if it has one.
    pub fn for_job(every: [Option<u64>; 2], logged: [bool; 2], runtime_ns: Option<u64>) -> Sampler {
        let [bw, iops] = every.map(|e| e.map_or(SampleEvery::Io, SampleEvery::Ms));
        Sampler::new(bw, iops)
            .with_runtime(runtime_ns)
            .logging(logged[0], logged[1])
    }

    /// Keep each interval's bandwidth (`bw`) and IOPS (`iops`) samples as log lines too, for
    /// [`Sampler::finish_logged`]: the averaged lines of a job's bandwidth and IOPS logs.
    pub fn logging(mut self, bw: bool, iops: bool) -> Sampler {
        self.lines = [bw, iops].map(|on| on.then(Vec::new));
        self
    }

    /// The same sampler (its intervals, runtime and logging), empty: for a job whose
    /// counting starts again (the final run of fio's latency-target mode).
    pub fn restarted(&self) -> Sampler {
        let mut s = Sampler::new(self.bw.every, self.iops.every);
        s.limit = self.limit;
        s.lines = [&self.lines[0], &self.lines[1]].map(|l| l.as_ref().map(|_| Vec::new()));
        s
    }

    /// Where the next interval ends: 0 (at every completion) when a kind is sampled per
    /// completion.
    fn next_end(&self) -> u64 {
        if self.bw.per_io() || self.iops.per_io() {
            0
        } else {
            self.bw.ends_at.min(self.iops.ends_at)
        }
    }

    /// A job that stops after `runtime_ns` (from the end of its ramp), if it has a
    /// runtime: what completes after it is not sampled.
    pub fn with_runtime(mut self, runtime_ns: Option<u64>) -> Sampler {
        self.limit = runtime_ns.unwrap_or(u64::MAX);
        self
    }

    /// A request of `bytes` in direction `dir` (0 read, 1 write, 2 trim) completed `t_ns` after
    /// the job started counting, `clat_ns` after it was submitted. Times never go back.
    #[inline]
    pub fn record(&mut self, t_ns: u64, dir: usize, bytes: u64, clat_ns: u64) {
        if t_ns >= self.next_end {
            self.close(t_ns, false);
            if self.next_end == 0 && t_ns < self.limit {
                self.each_io(dir, bytes, clat_ns);
            }
        }
        self.bytes[dir] += bytes;
        self.ios[dir] += 1;
    }

    /// A verify read-back of `bytes` completed at `t_ns`, `clat_ns` after it was submitted.
    /// fio 3.33 samples it where it samples every completion, but leaves it out of the
    /// intervals' counts (its `io_completed` adds a verify read to the job's I/O, not to
    /// what the interval samples measure): an interval of the verify phase samples nothing
    /// but the writes that completed in it before the phase began.
    #[inline]
    pub fn record_verify(&mut self, t_ns: u64, dir: usize, bytes: u64, clat_ns: u64) {
        if t_ns >= self.next_end {
            self.close(t_ns, false);
            if self.next_end == 0 && t_ns < self.limit {
                self.each_io(dir, bytes, clat_ns);
            }
        }
    }

    /// A completion's own samples, for the kinds sampled at every completion (fio's
    /// `add_bw_sample` and `add_iops_sample`: its bytes × 10^6 over its completion latency
    /// in ns — 0 if that is 0 — and 1).
    #[cold]
    #[inline(never)]
    fn each_io(&mut self, dir: usize, bytes: u64, clat_ns: u64) {
        if self.bw.per_io() {
            let bw = if clat_ns == 0 {
                0
            } else {
                (bytes as u128 * 1_000_000 / clat_ns as u128) as u64
            };
            self.bw_out[dir].add(bw);
        }
        if self.iops.per_io() {
            self.iops_out[dir].add(1);
        }
    }

    #[cold]
    #[inline(never)]
    fn close(&mut self, t: u64, strictly: bool) {
        let limit = self.limit;
        let [bw_lines, iops_lines] = &mut self.lines;
        let (bytes, ios) = (self.bytes, self.ios);
        self.bw.close(
            t,
            strictly,
            limit,
            bytes,
            &mut self.bw_out,
            bw_lines.as_mut(),
            kib_per_s,
        );
        self.iops.close(
            t,
            strictly,
            limit,
            ios,
            &mut self.iops_out,
            iops_lines.as_mut(),
            per_s,
        );
        self.next_end = self.next_end();
    }

    /// The samples of a job whose measured runtime was `runtime_ns`: the intervals that
    /// ended before it, (reads, writes, trims).
    pub fn finish(self, runtime_ns: u64) -> [DirSamples; 3] {
        self.finish_logged(runtime_ns, None)
    }

    /// [`Sampler::finish`], and the job's log finished at the same time
    /// ([`crate::JobLog::finish`]), with the samples kept as log lines
    /// ([`Sampler::logging`]) as its averaged bandwidth and IOPS lines.
    pub fn finish_logged(
        mut self,
        runtime_ns: u64,
        log: Option<&mut crate::JobLog>,
    ) -> [DirSamples; 3] {
        self.close(runtime_ns, true);
        if let Some(log) = log {
            log.finish(runtime_ns);
            let [bw, iops] = std::mem::take(&mut self.lines);
            log.put_sampled(bw.unwrap_or_default(), iops.unwrap_or_default());
        }
        [0, 1, 2].map(|d| DirSamples {
            bw_kib: self.bw_out[d],
            iops: self.iops_out[d],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn stats_match_a_direct_computation() {
        let mut s = SampleStats::default();
        for v in [1024, 1024, 1024, 1024, 1032] {
            s.add(v);
        }
        // fio 3.33 printed these for such samples: mean 1025.6, dev 3.577709.
        assert_eq!((s.samples, s.min, s.max), (5, 1024, 1032));
        assert!((s.mean - 1025.6).abs() < 1e-9);
        assert!((s.stddev() - 3.577709).abs() < 1e-6, "{}", s.stddev());
        assert_eq!(SampleStats::default().stddev(), 0.0);
    }

    #[test]
    fn a_steady_rate_gives_one_sample_per_whole_interval() {
        // 1 MiB/s of 4 KiB reads for 3 s: five whole intervals before the end (fio: 5
        // samples of 1024 KiB/s and 256 IOPS for a 3 s job).
        let mut s = Sampler::default();
        let gap = 1_000_000_000 / 256;
        for i in 0..768u64 {
            s.record(i * gap, 0, 4096, 0);
        }
        let [r, w, _] = s.clone().finish(3_000 * MS);
        assert_eq!(
            (r.bw_kib.samples, r.bw_kib.min, r.bw_kib.max),
            (5, 1024, 1024)
        );
        // Requests completing after a 3 s runtime close the interval ending at 3 s: not
        // sampled either.
        let mut late = s.with_runtime(Some(3_000 * MS));
        late.record(3_001 * MS, 0, 4096, 0);
        let [l, _, _] = late.finish(3_001 * MS);
        assert_eq!(l.bw_kib.samples, 5);
        assert_eq!((r.iops.samples, r.iops.min, r.iops.max), (5, 256, 256));
        assert_eq!(r.bw_kib.stddev(), 0.0);
        assert_eq!(w, DirSamples::default());
    }

    #[test]
    fn idle_intervals_give_no_sample_and_lengths_are_options() {
        // Writes in the first and third 100 ms only; reads throughout.
        let mut s = Sampler::new(SampleEvery::Ms(100), SampleEvery::Ms(200));
        for t in (0..400).map(|ms| ms * MS) {
            s.record(t, 0, 1024, 0);
            if t < 100 * MS || (200 * MS..300 * MS).contains(&t) {
                s.record(t, 1, 2048, 0);
            }
        }
        let [r, w, _] = s.finish(400 * MS);
        // Reads: 100 KiB per 100 ms = 1000 KiB/s, intervals ending at 100, 200, 300 ms.
        assert_eq!((r.bw_kib.samples, r.bw_kib.mean), (3, 1000.0));
        // IOPS over 200 ms: the one at 200 ms (the one at 400 is the job's end).
        assert_eq!((r.iops.samples, r.iops.max), (1, 1000));
        assert_eq!((w.bw_kib.samples, w.bw_kib.min), (2, 2000));
    }

    #[test]
    fn a_group_adds_its_jobs_up() {
        let mut a = SampleStats::default();
        let mut b = SampleStats::default();
        for v in [100, 110] {
            a.add(v);
            b.add(v + 1000);
        }
        let mut g = SampleStats::default();
        g.sum_group(&a);
        g.sum_group(&b);
        g.sum_group(&SampleStats::default());
        assert_eq!((g.samples, g.min, g.max), (4, 1200, 1220));
        assert_eq!(g.mean, 1210.0);
        assert_eq!(g.s, a.s + b.s);
    }

    /// Sampled at every completion (a log without averaging): a bandwidth sample of bytes ×
    /// 10^6 over the completion latency in ns, an IOPS sample of 1, each completion before
    /// the runtime; the other kind still by intervals.
    #[test]
    fn per_io_sampling_takes_every_completion() {
        let mut s =
            Sampler::new(SampleEvery::Io, SampleEvery::Ms(100)).with_runtime(Some(300 * MS));
        for k in 0..30u64 {
            // 4 KiB every 10 ms, each 100 µs (then 0 ns for the last) from submission.
            let clat = if k == 29 { 0 } else { 100_000 };
            s.record(k * 10 * MS, 0, 4096, clat);
        }
        s.record(301 * MS, 1, 4096, 100_000); // after the runtime: not sampled
        let [r, w, _] = s.finish(302 * MS);
        assert_eq!(r.bw_kib.samples, 30);
        assert_eq!((r.bw_kib.min, r.bw_kib.max), (0, 40_960));
        assert_eq!(w.bw_kib.samples, 0);
        // IOPS by 100 ms intervals: 10 a 100 ms = 100 IOPS, ending at 100 and 200 ms (the
        // one ending at 300 is the runtime's end).
        assert_eq!((r.iops.samples, r.iops.mean), (2, 100.0));
        let mut both = Sampler::new(SampleEvery::Io, SampleEvery::Io);
        both.record(5 * MS, 1, 512, 1_000);
        let [_, w, _] = both.finish(6 * MS);
        assert_eq!((w.bw_kib.samples, w.bw_kib.max), (1, 512_000));
        assert_eq!((w.iops.samples, w.iops.max), (1, 1));
    }

    /// A verify read-back: a sample of its own where every completion is sampled, nothing in
    /// an interval's counts; it closes the intervals it passes (the writes' last one).
    #[test]
    fn verify_reads_are_sampled_only_one_by_one() {
        let every = SampleEvery::Ms(100);
        let mut s = Sampler::new(every, every);
        s.record(50 * MS, 1, 4096, 1_000);
        s.record_verify(150 * MS, 0, 4096, 1_000);
        s.record_verify(250 * MS, 0, 4096, 1_000);
        let [r, w, _] = s.finish(260 * MS);
        assert_eq!((r.bw_kib.samples, r.iops.samples), (0, 0));
        assert_eq!((w.bw_kib.samples, w.bw_kib.max), (1, 40));
        let mut s = Sampler::new(SampleEvery::Io, every);
        s.record_verify(150 * MS, 0, 4096, 1_000);
        let [r, _, _] = s.finish(260 * MS);
        assert_eq!(
            (r.bw_kib.samples, r.bw_kib.max, r.iops.samples),
            (1, 4_096_000, 0)
        );
    }

    /// Logging: each interval's samples, one line a direction, at the interval's end; a
    /// restarted sampler logs afresh.
    #[test]
    fn logged_samples_are_lines_at_interval_ends() {
        let every = SampleEvery::Ms(100);
        let mut s = Sampler::new(every, every).logging(true, false);
        for (t, dir, bytes) in [
            (10, 0, 1024),
            (150, 0, 1024),
            (160, 0, 1024),
            (170, 1, 4096),
            (420, 0, 1024),
        ] {
            s.record(t * MS, dir, bytes, 1);
        }
        let again = s.restarted();
        let mut log = crate::JobLog::new(
            1,
            crate::LogNames {
                bw: Some("b".into()),
                iops: Some("i".into()),
                ..Default::default()
            },
            100,
            false,
        );
        s.finish_logged(500 * MS, Some(&mut log));
        let lines: Vec<(u64, u8, u64)> =
            log.bw.iter().map(|l| (l.time_ms, l.dir, l.value)).collect();
        // (The read at 420 ms is in the interval the job's end cuts short: no line.)
        assert_eq!(lines, [(100, 0, 10), (200, 0, 20), (200, 1, 40)]);
        // IOPS lines were not asked to be kept: the log has none.
        assert!(log.iops.is_empty());
        let mut fresh = crate::JobLog::new(1, log.names.clone(), 100, false);
        again.finish_logged(500 * MS, Some(&mut fresh));
        assert!(fresh.bw.is_empty());
    }
}
