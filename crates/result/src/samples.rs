//! Bandwidth and IOPS samples (fio's `bw_min`, `bw_max`, `bw_agg`, `bw_mean`, `bw_dev`,
//! `bw_samples`, `iops_min` … `iops_samples`, and the terse line's bandwidth fields).
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
//! [`Sampler`] is plain data an executor feeds each counted completion at its time since the
//! ramp ended: the engine at clock times, the simulator at virtual times. Intervals are
//! `[k·T, (k+1)·T)` from there; those that end before the job's measured runtime does, and
//! before its `runtime` if it has one, are sampled (fio's last interval, cut short or ending
//! as the job does, is not; nor are requests completing after the runtime).

use serde::{Deserialize, Serialize};

/// fio's default `bw_avg_time` and `iops_avg_time`, ms.
pub const DEFAULT_AVG_TIME_MS: u64 = 500;

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
/// count (bytes or I/Os) at the last sample.
#[derive(Clone, Copy, Debug)]
struct Series {
    len_ns: u64,
    ends_at: u64,
    base: [u64; 3],
}

impl Series {
    fn new(ms: u64) -> Series {
        let len_ns = ms.max(1) * 1_000_000;
        Series {
            len_ns,
            ends_at: len_ns,
            base: [0; 3],
        }
    }

    /// Close every interval that ends at or before `t` (`strictly`: before `t`), sampling
    /// each direction that moved something in it; `per_s` turns an interval's count into
    /// a rate.
    /// Only intervals ending before `limit` are sampled.
    fn close(
        &mut self,
        t: u64,
        strictly: bool,
        limit: u64,
        now: [u64; 3],
        out: &mut [SampleStats; 3],
        per_s: impl Fn(u64, u64) -> u64,
    ) {
        while self.ends_at < t || (!strictly && self.ends_at == t) {
            for d in 0..3 {
                let delta = now[d] - self.base[d];
                if delta > 0 {
                    if self.ends_at < limit {
                        out[d].add(per_s(delta, self.len_ns / 1_000_000));
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
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::new(DEFAULT_AVG_TIME_MS, DEFAULT_AVG_TIME_MS)
    }
}

fn kib_per_s(bytes: u64, ms: u64) -> u64 {
    (bytes as u128 * 1000 / ms as u128 / 1024) as u64
}

fn per_s(ios: u64, ms: u64) -> u64 {
    (ios as u128 * 1000 / ms as u128) as u64
}

impl Sampler {
    /// Samples every `bw_ms` ms of bandwidth and every `iops_ms` ms of IOPS.
    pub fn new(bw_ms: u64, iops_ms: u64) -> Sampler {
        let (bw, iops) = (Series::new(bw_ms), Series::new(iops_ms));
        Sampler {
            next_end: bw.ends_at.min(iops.ends_at),
            limit: u64::MAX,
            bw,
            iops,
            bytes: [0; 3],
            ios: [0; 3],
            bw_out: [SampleStats::default(); 3],
            iops_out: [SampleStats::default(); 3],
        }
    }

    /// The same sampler (its intervals and runtime), empty: for a job whose counting
    /// starts again (the final run of fio's latency-target mode).
    pub fn restarted(&self) -> Sampler {
        let mut s = Sampler::new(self.bw.len_ns / 1_000_000, self.iops.len_ns / 1_000_000);
        s.limit = self.limit;
        s
    }

    /// A job that stops after `runtime_ns` (from the end of its ramp), if it has a
    /// runtime: what completes after it is not sampled.
    pub fn with_runtime(mut self, runtime_ns: Option<u64>) -> Sampler {
        self.limit = runtime_ns.unwrap_or(u64::MAX);
        self
    }

    /// A request of `bytes` in direction `dir` (0 read, 1 write, 2 trim) completed `t_ns` after
    /// the job started counting. Times never go back.
    #[inline]
    pub fn record(&mut self, t_ns: u64, dir: usize, bytes: u64) {
        if t_ns >= self.next_end {
            self.close(t_ns, false);
        }
        self.bytes[dir] += bytes;
        self.ios[dir] += 1;
    }

    #[cold]
    #[inline(never)]
    fn close(&mut self, t: u64, strictly: bool) {
        let limit = self.limit;
        self.bw
            .close(t, strictly, limit, self.bytes, &mut self.bw_out, kib_per_s);
        self.iops
            .close(t, strictly, limit, self.ios, &mut self.iops_out, per_s);
        self.next_end = self.bw.ends_at.min(self.iops.ends_at);
    }

    /// The samples of a job whose measured runtime was `runtime_ns`: the intervals that
    /// ended before it, (reads, writes, trims).
    pub fn finish(mut self, runtime_ns: u64) -> [DirSamples; 3] {
        self.close(runtime_ns, true);
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
            s.record(i * gap, 0, 4096);
        }
        let [r, w, _] = s.clone().finish(3_000 * MS);
        assert_eq!(
            (r.bw_kib.samples, r.bw_kib.min, r.bw_kib.max),
            (5, 1024, 1024)
        );
        // Requests completing after a 3 s runtime close the interval ending at 3 s: not
        // sampled either.
        let mut late = s.with_runtime(Some(3_000 * MS));
        late.record(3_001 * MS, 0, 4096);
        let [l, _, _] = late.finish(3_001 * MS);
        assert_eq!(l.bw_kib.samples, 5);
        assert_eq!((r.iops.samples, r.iops.min, r.iops.max), (5, 256, 256));
        assert_eq!(r.bw_kib.stddev(), 0.0);
        assert_eq!(w, DirSamples::default());
    }

    #[test]
    fn idle_intervals_give_no_sample_and_lengths_are_options() {
        // Writes in the first and third 100 ms only; reads throughout.
        let mut s = Sampler::new(100, 200);
        for t in (0..400).map(|ms| ms * MS) {
            s.record(t, 0, 1024);
            if t < 100 * MS || (200 * MS..300 * MS).contains(&t) {
                s.record(t, 1, 2048);
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
}
