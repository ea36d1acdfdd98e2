//! fio's steady state (`steadystate`, `steadystate_duration`, `steadystate_ramp_time`): a job
//! (or a `group_reporting` group) stops once its rate has settled. Once a second its IOPS and
//! bandwidth over the second are sampled; over the last `steadystate_duration` seconds of
//! samples, the criterion is either the largest deviation from their mean (`iops`, `bw`) or
//! the least-squares slope of the samples against their index (`iops_slope`, `bw_slope`), as
//! a value or as a percent of the mean; under the limit, the job has attained steady state.
//! (Method after fio 3.33's documentation: samples once a second, starting one second after
//! the ramp; the slope taken over evenly spaced samples.)
//!
//! Plain data fed times and counts by its executor (real or virtual time alike): no clock
//! is read here. The criterion as a job spells it is parsed by the workload crate.

use serde::{Deserialize, Serialize};

/// What the judge applies: which rate, which measure of it, and the limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyRule {
    /// Bandwidth (bytes/s) rather than IOPS.
    pub bw: bool,
    /// The slope rather than the largest deviation from the mean.
    pub slope: bool,
    pub limit: f64,
    /// `limit` is a percent of the mean.
    pub percent: bool,
}

/// Where a steady-state judgement stands: the window's samples and what they give.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    /// The criterion as given (`iops_slope:0.010000%`).
    pub ss: String,
    /// The window, seconds.
    pub duration_s: u32,
    pub attained: bool,
    /// The criterion's last value (a percent of the mean when the limit is one).
    pub criterion: f64,
    pub percent: bool,
    /// The largest deviation from the window's mean, of the metric judged (0 when the slope
    /// is judged, as fio reports it).
    pub max_deviation: f64,
    /// The slope of the metric judged, per sample (0 when the deviation is judged).
    pub slope: f64,
    /// The window's samples, oldest first: I/Os per second and bytes per second.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
}

impl SteadyReport {
    pub fn iops_mean(&self) -> u64 {
        mean_u64(&self.iops)
    }
    pub fn bw_mean(&self) -> u64 {
        mean_u64(&self.bw)
    }
}

fn mean_u64(v: &[u64]) -> u64 {
    if v.is_empty() {
        0
    } else {
        v.iter().sum::<u64>() / v.len() as u64
    }
}

const SECOND: u64 = 1_000_000_000;

/// One job's (or group's) steady-state judge.
#[derive(Clone, Debug)]
pub struct Steady {
    rule: SteadyRule,
    dur: usize,
    /// Samples are taken from this time on (ns since the job started): its ramp and one
    /// second.
    from: u64,
    /// When the next sample is due, and the counts and time at the last one.
    next: u64,
    last: (u64, u64, u64),
    window: std::collections::VecDeque<(u64, u64)>,
    report: SteadyReport,
}

impl Steady {
    /// A judge of `rule` (spelled `text`, as the job gave it) over `duration_s` seconds of
    /// samples, starting `ramp_ns` into the job.
    pub fn new(rule: SteadyRule, text: String, duration_s: u32, ramp_ns: u64) -> Steady {
        Steady {
            rule,
            dur: duration_s.max(1) as usize,
            from: ramp_ns.saturating_add(SECOND),
            next: SECOND,
            last: (0, 0, 0),
            window: std::collections::VecDeque::with_capacity(duration_s.max(1) as usize),
            report: SteadyReport {
                ss: text,
                duration_s: duration_s.max(1),
                percent: rule.percent,
                ..Default::default()
            },
        }
    }

    /// When the next sample is due, ns since the job started: call [`Self::sample`] at or
    /// after it.
    pub fn due(&self) -> u64 {
        self.next
    }

    /// A sample at `t` ns since the job started, of the job's (or group's) cumulative bytes
    /// and I/Os: the rates since the last sample enter the window (once the ramp is over),
    /// and the criterion is judged once the window is full. Whether steady state is attained.
    pub fn sample(&mut self, t: u64, bytes: u64, ios: u64) -> bool {
        if self.report.attained {
            return true;
        }
        let (b0, n0, t0) = self.last;
        self.last = (bytes, ios, t);
        // (The next sample a second after this one, whenever the executor came to it.)
        self.next = t.saturating_add(SECOND);
        let dt = t.saturating_sub(t0);
        if t < self.from || dt == 0 {
            return false;
        }
        let per_s = |d: u64| (u128::from(d) * u128::from(SECOND) / u128::from(dt)) as u64;
        let sample = (
            per_s(ios.saturating_sub(n0)),
            per_s(bytes.saturating_sub(b0)),
        );
        if self.window.len() == self.dur {
            self.window.pop_front();
        }
        self.window.push_back(sample);
        self.report.iops = self.window.iter().map(|s| s.0).collect();
        self.report.bw = self.window.iter().map(|s| s.1).collect();
        if self.window.len() < self.dur {
            return false;
        }
        let ys: Vec<f64> = self
            .window
            .iter()
            .map(|&(i, b)| if self.rule.bw { b } else { i } as f64)
            .collect();
        let n = ys.len() as f64;
        let mean = ys.iter().sum::<f64>() / n;
        let deviation = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
        // Least squares over x = 0, 1, …, n − 1.
        let mean_x = (n - 1.0) / 2.0;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for (x, y) in ys.iter().enumerate() {
            let dx = x as f64 - mean_x;
            sxy += dx * (y - mean);
            sxx += dx * dx;
        }
        let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let value = if self.rule.slope { slope } else { deviation };
        let criterion = if self.rule.percent {
            if mean > 0.0 {
                100.0 * value / mean
            } else {
                f64::INFINITY
            }
        } else {
            value
        };
        // (As fio reports them: the measure judged, the other left at 0.)
        self.report.max_deviation = if self.rule.slope { 0.0 } else { deviation };
        self.report.slope = if self.rule.slope { slope } else { 0.0 };
        self.report.criterion = criterion;
        self.report.attained = criterion.abs() < self.rule.limit;
        self.report.attained
    }

    /// Where it stands.
    pub fn report(&self) -> &SteadyReport {
        &self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(s: &mut Steady, rates: &[u64], bs: u64) -> Option<usize> {
        let (mut ios, mut t) = (0u64, 0u64);
        for (k, &r) in rates.iter().enumerate() {
            t += SECOND;
            ios += r;
            if s.sample(t, ios * bs, ios) {
                return Some(k);
            }
        }
        None
    }

    /// A deviation criterion waits for a full window and for every sample in it to lie within
    /// the limit of their mean; the ramp and the first second are not sampled.
    #[test]
    fn deviation_settles_once_a_full_window_is_within_the_limit() {
        let c = SteadyRule {
            bw: false,
            slope: false,
            limit: 5.0,
            percent: true,
        };
        let mut s = Steady::new(c, "iops:5.000000%".into(), 3, 2 * SECOND);
        // Seconds 1–3 fall in the ramp and its second; then a climb, then a plateau.
        let rates = [10, 20, 40, 100, 200, 1000, 1010, 990, 1000, 1000];
        let k = feed(&mut s, &rates, 4096).expect("settles");
        assert_eq!(k, 7, "the window 1000, 1010, 990 is the first within 5%");
        let r = s.report();
        assert!(r.attained);
        assert_eq!(r.iops, [1000, 1010, 990]);
        assert_eq!(r.bw, [1000 * 4096, 1010 * 4096, 990 * 4096]);
        assert!((r.max_deviation - 10.0).abs() < 1e-9);
        assert!((r.criterion - 1.0).abs() < 1e-9);
        assert_eq!(r.iops_mean(), 1000);
    }

    /// A slope criterion settles on a flat run and not on a steady climb, however smooth.
    #[test]
    fn slope_sees_a_steady_climb() {
        let c = SteadyRule {
            bw: false,
            slope: true,
            limit: 1.0,
            percent: true,
        };
        let mut s = Steady::new(c, String::new(), 4, 0);
        let climb: Vec<u64> = (0..20).map(|k| 1000 + 100 * k).collect();
        assert_eq!(feed(&mut s, &climb, 512), None);
        let r = s.report().clone();
        assert!((r.slope - 100.0).abs() < 1e-9, "{}", r.slope);
        assert!(!r.attained);
        let mut s = Steady::new(c, String::new(), 4, 0);
        assert_eq!(feed(&mut s, &[500, 1000, 1000, 1000, 1000], 512), Some(4));
        assert_eq!(s.report().slope, 0.0);
    }

    /// Samples late or early are rated over the time that passed.
    #[test]
    fn rates_are_over_the_time_that_passed() {
        let c = SteadyRule {
            bw: true,
            slope: false,
            limit: 1.0,
            percent: false,
        };
        let mut s = Steady::new(c, String::new(), 2, 0);
        assert!(!s.sample(SECOND, 0, 0));
        assert_eq!(s.due(), 2 * SECOND);
        assert!(!s.sample(3 * SECOND, 2000, 2));
        assert!(s.sample(4 * SECOND, 3000, 3));
        assert_eq!(s.report().bw, [1000, 1000]);
        assert_eq!(s.report().iops, [1, 1]);
    }
}
