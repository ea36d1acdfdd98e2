//! fio's latency-target mode (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`): find the deepest queue at which a job's requests still meet a latency
//! target, then measure there.
//!
//! [`DepthSearch`] is the search as plain state, fed each completion's total latency and
//! asked, at each turn of the job's loop, whether a window has passed. It says how deep the
//! job may queue now and when the job must drain, restart its counters or end. The real
//! engine and the simulator drive the same search with their own clocks. The search is
//! fio 3.33's (its `io_u.c`):
//! - it starts at depth 1, with `iodepth` as the ceiling;
//! - a window (`latency_window`) in which at least `latency_percentile` of the completed
//!   requests met the target raises the depth: doubled while no depth has failed, else
//!   halfway to the lowest depth that failed; after three such windows just below a depth
//!   that failed, that depth is tried again;
//! - a window that misses lowers the depth halfway to the last depth that met it, and the
//!   job drains before it queues again. At `latency_percentile=100` (the default) one late
//!   request is a miss at once; at depth 1 it ends the job, as fio's `max_latency` would;
//! - when a window that met the target leaves the depth where it was, the job drains, its
//!   counters restart and it runs one more window at that depth, whose results are the
//!   job's; then it ends. With `latency_run`, it never settles: the depth keeps following
//!   the target until the job's size or runtime is done.

use serde::{Deserialize, Serialize};

/// A job's latency-target options.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    /// `latency_target`, ns: a request's total latency (queued to completed) above this
    /// misses.
    pub target_ns: u64,
    /// `latency_window`, ns: how long each depth is tried before it is judged.
    pub window_ns: u64,
    /// `latency_percentile`: the share of a window's requests, in percent, that must meet
    /// the target (default 100).
    pub percentile: f64,
    /// `latency_run`: keep adjusting the depth until the job ends, rather than settling.
    pub run: bool,
}

impl Default for LatencyTarget {
    fn default() -> Self {
        LatencyTarget {
            target_ns: 0,
            window_ns: 0,
            percentile: 100.0,
            run: false,
        }
    }
}

/// The error a request past `max_latency` ends its job with, in fio 3.33's words and unit:
/// both latencies in nsec, so a limit under a microsecond (`max_latency=1ns`) is not shown
/// as 0. The real engine and the simulator both say it so.
pub fn max_latency_exceeded(lat_ns: u64, max_ns: u64) -> String {
    format!("latency of {lat_ns} nsec exceeds specified max ({max_ns} nsec)")
}

impl LatencyTarget {
    pub fn is_default(&self) -> bool {
        *self == LatencyTarget::default()
    }

    /// Whether the job searches at all (a target is set).
    pub fn on(&self) -> bool {
        self.target_ns > 0
    }
}

/// What the job does after a completion or a look at the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepthStep {
    /// Go on, queueing up to [`DepthSearch::depth`].
    Go,
    /// The depth was lowered: let what is in flight complete before queueing again.
    Drain,
    /// The depth is found: drain, restart the job's counters (and its runtime), and run a
    /// last window at this depth.
    FinalRun,
    /// The last window is over: the job ends, its results those of the final run.
    Done,
    /// A request missed the target at depth 1 (at `latency_percentile=100`): the job ends
    /// with ETIMEDOUT.
    GiveUp,
}

/// The error of a job whose request took `lat_ns` at depth 1, past a `target_ns` it cannot
/// then meet (ETIMEDOUT, as fio's).
pub fn missed_at_depth_1(lat_ns: u64, target_ns: u64) -> String {
    let target = if target_ns.is_multiple_of(1000) {
        format!("{} usec", target_ns / 1000)
    } else {
        format!("{target_ns} nsec")
    };
    format!(
        "latency of {} usec exceeds latency_target ({target}) at depth 1",
        lat_ns / 1000
    )
}

/// The search's state (see the module's documentation).
#[derive(Clone, Debug)]
pub struct DepthSearch {
    opts: LatencyTarget,
    /// The job's `iodepth`: the ceiling.
    iodepth: u32,
    /// The depth now, the last that met the target, and the lowest that missed it (the
    /// ceiling while none has).
    qd: u32,
    low: u32,
    high: u32,
    /// Windows met just below `high` in a row.
    stable: u32,
    /// This window's start (ns, the executor's clock), the job's completions then, and its
    /// misses since.
    window_start: u64,
    window_ios: u64,
    missed: u64,
    /// In the final run.
    final_run: bool,
}

impl DepthSearch {
    /// A search for a job with `opts` and `iodepth`, starting at `now` with `ios` requests
    /// completed; None without a target.
    pub fn new(opts: &LatencyTarget, iodepth: u32, now: u64, ios: u64) -> Option<DepthSearch> {
        opts.on().then(|| DepthSearch {
            opts: *opts,
            iodepth: iodepth.max(1),
            qd: 1,
            low: 1,
            high: iodepth.max(1),
            stable: 0,
            window_start: now,
            window_ios: ios,
            missed: 0,
            final_run: false,
        })
    }

    /// How many requests the job may have in flight now.
    pub fn depth(&self) -> u32 {
        self.qd
    }

    /// The target, ns.
    pub fn target_ns(&self) -> u64 {
        self.opts.target_ns
    }

    /// Whether the final run (at the depth found) has begun.
    pub fn in_final_run(&self) -> bool {
        self.final_run
    }

    /// A request completed with total latency `lat_ns`, at `now`, the job's completions
    /// then `ios` (this one counted).
    pub fn completed(&mut self, lat_ns: u64, now: u64, ios: u64) -> DepthStep {
        if lat_ns <= self.opts.target_ns {
            return DepthStep::Go;
        }
        if self.opts.percentile >= 100.0 {
            return self.missed_window(now, ios, true);
        }
        self.missed += 1;
        DepthStep::Go
    }

    /// A look at the window at `now`, the job's completions then `ios`: once it has lasted
    /// `latency_window`, judged.
    pub fn check(&mut self, now: u64, ios: u64) -> DepthStep {
        if now.saturating_sub(self.window_start) < self.opts.window_ns {
            return DepthStep::Go;
        }
        let n = ios - self.window_ios;
        // (No request completed in the window: a miss, as fio's 0/0 compares.)
        let met = n > 0 && (n - self.missed) as f64 * 100.0 / n as f64 >= self.opts.percentile;
        if met {
            self.met_window(now, ios)
        } else {
            self.missed_window(now, ios, false)
        }
    }

    /// Start the first window at `now`, with `ios` completed (when the job's clock starts
    /// after the search was made).
    pub fn begin(&mut self, now: u64, ios: u64) {
        self.new_window(now, ios);
    }

    fn new_window(&mut self, now: u64, ios: u64) {
        self.window_start = now;
        self.window_ios = ios;
        self.missed = 0;
    }

    /// A miss: the depth lowered halfway to the last that met the target, and the job
    /// drains. At depth 1 there is nowhere lower: one late request (`late`) ends the job,
    /// a missed window goes on at depth 1 (the window not restarted, as in fio).
    fn missed_window(&mut self, now: u64, ios: u64, late: bool) -> DepthStep {
        if self.qd == 1 {
            return if late {
                DepthStep::GiveUp
            } else {
                DepthStep::Go
            };
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        self.new_window(now, ios);
        DepthStep::Drain
    }

    /// A window that met the target: the depth raised; where it stays, the final run (or,
    /// after it, the end).
    fn met_window(&mut self, now: u64, ios: u64) -> DepthStep {
        let was = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            // (Just below a depth that missed, the search would stay put: after three such
            // windows the depth above is tried again.)
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.iodepth {
            (self.qd + self.high) / 2
        } else {
            self.qd.saturating_mul(2)
        }
        .min(self.iodepth);
        let step = if !self.opts.run && self.qd == was {
            if self.final_run {
                DepthStep::Done
            } else {
                self.final_run = true;
                DepthStep::FinalRun
            }
        } else {
            DepthStep::Go
        };
        self.new_window(now, ios);
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33's words for a request past max_latency, each latency to the nanosecond:
    /// a limit of 1 ns was shown as "(0 usec)".
    #[test]
    fn max_latency_error_keeps_a_limit_under_a_microsecond() {
        assert_eq!(
            max_latency_exceeded(72_345, 1),
            "latency of 72345 nsec exceeds specified max (1 nsec)"
        );
        assert_eq!(
            max_latency_exceeded(2_000_500, 1_000_000),
            "latency of 2000500 nsec exceeds specified max (1000000 nsec)"
        );
    }

    fn opts(target_us: u64, window_ms: u64, percentile: f64) -> LatencyTarget {
        LatencyTarget {
            target_ns: target_us * 1000,
            window_ns: window_ms * 1_000_000,
            percentile,
            run: false,
        }
    }

    /// A device whose latency is `per` µs for each request in flight (a queue in front of
    /// one server), windows of 10 ms each with `n` completions: the depths the search goes
    /// through, and how it ends.
    fn search(o: LatencyTarget, iodepth: u32, per_us: u64) -> (Vec<u32>, DepthStep) {
        let mut s = DepthSearch::new(&o, iodepth, 0, 0).unwrap();
        let mut depths = vec![s.depth()];
        let (mut now, mut ios) = (0u64, 0u64);
        for _ in 0..200 {
            let d = s.depth() as u64;
            let mut step = DepthStep::Go;
            for _ in 0..20 {
                now += 500_000;
                ios += 1;
                step = s.completed(d * per_us * 1000, now, ios);
                if step != DepthStep::Go {
                    break;
                }
            }
            if step == DepthStep::Go {
                now = now.max(s.window_start + o.window_ns);
                step = s.check(now, ios);
            }
            match step {
                DepthStep::Done | DepthStep::GiveUp => return (depths, step),
                _ => {}
            }
            if *depths.last().unwrap() != s.depth() {
                depths.push(s.depth());
            }
        }
        (depths, DepthStep::Go)
    }

    #[test]
    fn the_search_doubles_then_bisects_to_the_deepest_depth_that_meets_the_target() {
        // 100 µs a request in flight, a 1 ms target: depth 10 meets it, 11 does not.
        let (depths, end) = search(opts(1000, 10, 100.0), 64, 100);
        assert_eq!(end, DepthStep::Done);
        assert_eq!(depths[..6], [1, 2, 4, 8, 16, 12], "{depths:?}");
        assert_eq!(*depths.last().unwrap(), 10, "{depths:?}");
        assert!(depths.contains(&11), "depth 11 tried again: {depths:?}");
        // The ceiling is iodepth.
        let (depths, end) = search(opts(1000, 10, 100.0), 6, 100);
        assert_eq!((depths, end), (vec![1, 2, 4, 6], DepthStep::Done));
    }

    #[test]
    fn a_late_request_at_depth_1_gives_up_and_a_percentile_tolerates_misses() {
        let (depths, end) = search(opts(50, 10, 100.0), 64, 100);
        assert_eq!((depths, end), (vec![1], DepthStep::GiveUp));
        // Below 100%, a window judges its share: one request in 20 late is 95% met.
        let o = opts(1000, 10, 95.0);
        let mut s = DepthSearch::new(&o, 8, 0, 0).unwrap();
        for i in 1..=20u64 {
            let lat = if i == 7 { 5_000_000 } else { 10_000 };
            assert_eq!(s.completed(lat, i * 100_000, i), DepthStep::Go);
        }
        assert_eq!(s.check(10_000_000, 20), DepthStep::Go);
        assert_eq!(s.depth(), 2);
        // Two late in 20 (90%) miss: down, and drain.
        for i in 21..=40u64 {
            let lat = if i % 10 == 0 { 5_000_000 } else { 10_000 };
            s.completed(lat, 10_000_000 + i * 100_000, i);
        }
        assert_eq!(s.check(20_000_000, 40), DepthStep::Drain);
        assert_eq!(s.depth(), 1);
        // A window with nothing completed misses too; at depth 1 the job goes on there.
        assert_eq!(s.check(30_000_000, 40), DepthStep::Go);
        assert_eq!(s.depth(), 1);
    }

    #[test]
    fn the_final_run_comes_before_the_end_and_latency_run_never_settles() {
        let o = opts(1000, 10, 100.0);
        let mut s = DepthSearch::new(&o, 1, 0, 0).unwrap();
        assert_eq!(s.check(5_000_000, 3), DepthStep::Go, "the window not over");
        assert_eq!(s.check(10_000_000, 5), DepthStep::FinalRun);
        assert!(s.in_final_run());
        assert_eq!(s.check(20_000_000, 9), DepthStep::Done);
        let mut r = DepthSearch::new(&LatencyTarget { run: true, ..o }, 1, 0, 0).unwrap();
        for k in 1..10u64 {
            assert_eq!(r.check(k * 10_000_000, k * 5), DepthStep::Go);
        }
        assert!(DepthSearch::new(&LatencyTarget::default(), 8, 0, 0).is_none());
    }
}
