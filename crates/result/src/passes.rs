//! A job's passes over its region, kept in bounded room however many there are.
//!
//! A time-based job over a small region makes a pass every few milliseconds (a 4 MiB file
//! at 4 KiB requests: ~80 passes a second on tmpfs), so a list of every pass grew without
//! limit, in memory and in the JSON. A result lists every pass up to [`PASSES_LISTED`];
//! past that it lists the first and last [`PASS_ENDS`] and adds up those between in one
//! [`PassesBetween`] (their counts, summed runtimes, slowest and fastest rate). The text
//! output shows the same: a line for each listed pass and one for those between.
//!
//! [`PassTally`] is what an executor feeds, one counted completion at a time: it keeps the
//! first passes and a window of the latest ones (completions of neighbouring passes
//! overlap at queue depth > 1, and a job over several files runs each file's passes at its
//! own pace), and adds a pass up once it falls behind the window.

use crate::schema::PassStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A result lists every pass up to this many.
pub const PASSES_LISTED: usize = 12;
/// Past [`PASSES_LISTED`] passes, the first and the last this many are listed.
pub const PASS_ENDS: usize = 5;
/// Latest passes [`PassTally`] keeps open to completions, as their spans may still grow.
const OPEN: usize = 64;

/// Add what `$from` moved (bytes and requests by direction) to `$to`: a [`PassStats`] or a
/// [`PassesBetween`], which count them in fields of the same names.
macro_rules! add_counts {
    ($to:expr, $from:expr) => {{
        $to.read_bytes += $from.read_bytes;
        $to.read_ios += $from.read_ios;
        $to.write_bytes += $from.write_bytes;
        $to.write_ios += $from.write_ios;
        $to.trim_bytes += $from.trim_bytes;
        $to.trim_ios += $from.trim_ios;
    }};
}

/// The passes between the listed first and last ones, added up: passes `first` to `last`
/// (every pass number between them), what they moved and how long they took.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PassesBetween {
    pub first: u32,
    pub last: u32,
    /// Passes added up here: `last - first + 1`.
    pub count: u64,
    pub read_bytes: u64,
    pub read_ios: u64,
    pub write_bytes: u64,
    pub write_ios: u64,
    pub trim_bytes: u64,
    pub trim_ios: u64,
    /// The passes' runtimes, summed, ns.
    pub runtime_ns: u64,
    /// The slowest and the fastest of these passes, bytes/s (all directions).
    pub bw_bytes_min: u64,
    pub bw_bytes_max: u64,
}

/// A pass's rate, bytes/s over its runtime (all directions); 0 for a pass without one.
pub fn pass_rate(p: &PassStats) -> f64 {
    let bytes = p.read_bytes + p.write_bytes + p.trim_bytes;
    if p.runtime_ns == 0 {
        0.0
    } else {
        bytes as f64 * 1e9 / p.runtime_ns as f64
    }
}

impl PassesBetween {
    fn add(&mut self, p: &PassStats) {
        let rate = pass_rate(p).round() as u64;
        if self.count == 0 {
            self.first = p.pass;
            self.last = p.pass;
            self.bw_bytes_min = rate;
            self.bw_bytes_max = rate;
        } else {
            self.bw_bytes_min = self.bw_bytes_min.min(rate);
            self.bw_bytes_max = self.bw_bytes_max.max(rate);
        }
        self.first = self.first.min(p.pass);
        self.last = self.last.max(p.pass);
        self.count = u64::from(self.last - self.first) + 1;
        self.add_counts(p);
        self.runtime_ns += p.runtime_ns;
    }

    /// A completion of a pass already added up (a slow file's pass): counted, its runtime
    /// and rates as they were.
    fn add_counts(&mut self, p: &PassStats) {
        add_counts!(self, p);
    }
}

/// Fold another job's passes into a job's, as `group_reporting` folds jobs (numjobs, MPI
/// ranks): passes of one number add their bytes and requests over the longer of their
/// times. Passes either job added up stay added up: the span between them covers both
/// jobs' spans, and a pass the other listed inside it is added there (bytes and requests;
/// its time ran beside those already there). The sums between are the jobs' side by side:
/// the longer runtime, the slowest and the fastest of either's passes. So the listed
/// passes and those between still add up to the group's total, once each.
pub fn merge(
    (passes, between): (&mut Vec<PassStats>, &mut Option<PassesBetween>),
    (other, other_between): (&[PassStats], &Option<PassesBetween>),
) {
    for o in other {
        match passes.iter_mut().find(|p| p.pass == o.pass) {
            Some(p) => {
                add_counts!(p, o);
                p.runtime_ns = p.runtime_ns.max(o.runtime_ns);
            }
            None => passes.push(o.clone()),
        }
    }
    passes.sort_by_key(|p| p.pass);
    *between = match (between.take(), other_between) {
        (None, None) => return,
        (Some(b), None) => Some(b),
        (None, Some(o)) => Some(o.clone()),
        (Some(mut b), Some(o)) => {
            b.first = b.first.min(o.first);
            b.last = b.last.max(o.last);
            b.count = u64::from(b.last - b.first) + 1;
            add_counts!(b, o);
            b.runtime_ns = b.runtime_ns.max(o.runtime_ns);
            b.bw_bytes_min = b.bw_bytes_min.min(o.bw_bytes_min);
            b.bw_bytes_max = b.bw_bytes_max.max(o.bw_bytes_max);
            Some(b)
        }
    };
    if let Some(b) = between.as_mut() {
        passes.retain(|p| {
            let inside = (b.first..=b.last).contains(&p.pass);
            if inside {
                let rate = pass_rate(p).round() as u64;
                b.bw_bytes_min = b.bw_bytes_min.min(rate);
                b.bw_bytes_max = b.bw_bytes_max.max(rate);
                b.add_counts(p);
            }
            !inside
        });
    }
}

/// Passes in order, each listed, bounded: up to [`PASSES_LISTED`] as they are; past that the
/// first and last [`PASS_ENDS`] listed and the rest added up.
pub fn bound(mut passes: Vec<PassStats>) -> (Vec<PassStats>, Option<PassesBetween>) {
    if passes.len() <= PASSES_LISTED {
        return (passes, None);
    }
    let mut between = PassesBetween::default();
    let tail = passes.split_off(passes.len() - PASS_ENDS);
    for p in passes.drain(PASS_ENDS..) {
        between.add(&p);
    }
    passes.extend(tail);
    (passes, Some(between))
}

/// One pass being counted: its stats and the span of its completions (from the first one's
/// submission to the last one's completion).
#[derive(Clone, Debug)]
struct Open {
    stats: PassStats,
    from: u64,
    to: u64,
}

impl Open {
    fn new(pass: u32) -> Self {
        Open {
            stats: PassStats {
                pass,
                ..Default::default()
            },
            from: u64::MAX,
            to: 0,
        }
    }

    fn count(&mut self, dir: usize, len: u64, from: u64, to: u64) {
        let s = &mut self.stats;
        match dir {
            0 => {
                s.read_bytes += len;
                s.read_ios += 1;
            }
            1 => {
                s.write_bytes += len;
                s.write_ios += 1;
            }
            _ => {
                s.trim_bytes += len;
                s.trim_ios += 1;
            }
        }
        self.from = self.from.min(from);
        self.to = self.to.max(to);
    }

    fn done(mut self) -> PassStats {
        self.stats.runtime_ns = self.to.saturating_sub(self.from);
        self.stats
    }
}

/// A job's passes as its completions come, in bounded room (see the module's comment).
#[derive(Clone, Debug, Default)]
pub struct PassTally {
    /// The first passes, up to [`PASSES_LISTED`], still open to late completions.
    first: Vec<Open>,
    /// Passes after those already added up.
    between: PassesBetween,
    /// The latest passes, by number.
    latest: BTreeMap<u32, Open>,
}

impl PassTally {
    /// Count one completion of `len` bytes of pass `pass` in direction `dir` (0 read,
    /// 1 write, 2 trim), submitted at `from` (or the measurement's start, if later) and
    /// completed at `to`, ns on the executor's clock.
    pub fn count(&mut self, pass: u32, dir: usize, len: u64, from: u64, to: u64) {
        if let Ok(i) = self.first.binary_search_by_key(&pass, |o| o.stats.pass) {
            self.first[i].count(dir, len, from, to);
            return;
        }
        if self.between.count > 0 && pass <= self.between.last {
            let mut p = Open::new(pass);
            p.count(dir, len, from, to);
            self.between.add_counts(&p.stats);
            return;
        }
        self.latest
            .entry(pass)
            .or_insert_with(|| Open::new(pass))
            .count(dir, len, from, to);
        if self.latest.len() <= OPEN {
            return;
        }
        if let Some((_, oldest)) = self.latest.pop_first() {
            let lower = self
                .first
                .last()
                .is_none_or(|o| o.stats.pass < oldest.stats.pass);
            if self.first.len() < PASSES_LISTED && self.between.count == 0 && lower {
                self.first.push(oldest);
            } else {
                self.between.add(&oldest.done());
            }
        }
    }

    /// The passes counted, bounded as [`bound`] says.
    pub fn finish(self) -> (Vec<PassStats>, Option<PassesBetween>) {
        let mut listed: Vec<PassStats> = self.first.into_iter().map(Open::done).collect();
        let latest: Vec<PassStats> = self.latest.into_values().map(Open::done).collect();
        if self.between.count == 0 {
            listed.extend(latest);
            listed.sort_by_key(|p| p.pass);
            return bound(listed);
        }
        // Some are added up already: every listed first pass past the first few joins them,
        // and every latest pass but the last few.
        let mut between = self.between;
        for p in listed.drain(PASS_ENDS.min(listed.len())..) {
            between.add(&p);
        }
        let keep = latest.len().saturating_sub(PASS_ENDS);
        for p in &latest[..keep] {
            between.add(p);
        }
        listed.extend_from_slice(&latest[keep..]);
        (listed, Some(between))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass of `n` 4 KiB reads, completions 1 µs apart from `t`.
    fn pass(t: &mut PassTally, p: u32, n: u64, at: &mut u64) {
        for _ in 0..n {
            t.count(p, 0, 4096, *at, *at + 1000);
            *at += 1000;
        }
    }

    /// However many passes a job makes, its result lists at most a dozen, and what the ones
    /// not listed moved is added up: nothing is lost. (A time-based job over a 4 MiB file
    /// listed every pass: 236 in 3 s, hundreds of thousands in an hour.)
    #[test]
    fn many_passes_keep_their_ends_and_add_up_the_rest() {
        let mut t = PassTally::default();
        let mut at = 0;
        let n = 100_000u32;
        for p in 0..n {
            pass(&mut t, p, 3, &mut at);
        }
        let (listed, between) = t.finish();
        let numbers: Vec<u32> = listed.iter().map(|p| p.pass).collect();
        assert_eq!(
            numbers,
            [0, 1, 2, 3, 4, n - 5, n - 4, n - 3, n - 2, n - 1],
            "{numbers:?}"
        );
        let b = between.expect("the passes between");
        assert_eq!((b.first, b.last, b.count), (5, n - 6, u64::from(n) - 10));
        let ios: u64 = b.read_ios + listed.iter().map(|p| p.read_ios).sum::<u64>();
        assert_eq!(ios, 3 * u64::from(n));
        assert_eq!(b.read_bytes, 4096 * b.read_ios);
        // Each pass: 3 × 4 KiB in 3 µs.
        assert_eq!(b.runtime_ns, 3000 * b.count);
        assert_eq!(
            (b.bw_bytes_min, b.bw_bytes_max),
            (4_096_000_000, 4_096_000_000)
        );
        assert!(listed.iter().all(|p| p.runtime_ns == 3000), "{listed:?}");
    }

    /// A dozen passes or fewer are all listed, each with its own counts, whatever order
    /// neighbouring passes' completions come in.
    #[test]
    fn a_dozen_passes_are_all_listed() {
        let mut t = PassTally::default();
        for p in 0..12u32 {
            t.count(p, 1, 8192, 10 * u64::from(p), 10 * u64::from(p) + 5);
            t.count(
                p.saturating_sub(1),
                1,
                8192,
                10 * u64::from(p),
                10 * u64::from(p) + 5,
            );
        }
        let (listed, between) = t.finish();
        assert_eq!(between, None);
        assert_eq!(listed.len(), 12);
        assert_eq!(listed[0].write_ios, 3);
        assert!(listed[1..11].iter().all(|p| p.write_ios == 2), "{listed:?}");
        assert_eq!(listed[11].write_ios, 1);
    }

    /// A slow file's completions for a pass already added up still count there; the
    /// count of passes between stays the pass numbers between the listed ones.
    #[test]
    fn late_completions_count_where_their_pass_went() {
        let mut t = PassTally::default();
        let mut at = 0;
        for p in 0..200u32 {
            pass(&mut t, p, 1, &mut at);
        }
        t.count(100, 0, 4096, at, at + 1);
        t.count(2, 0, 4096, at, at + 1);
        let (listed, between) = t.finish();
        let b = between.unwrap();
        assert_eq!((b.first, b.last, b.count), (5, 194, 190));
        assert_eq!(b.read_ios, 191);
        assert_eq!(listed[2].read_ios, 2);
        assert_eq!(
            listed.iter().map(|p| p.read_ios).sum::<u64>() + b.read_ios,
            202
        );
    }

    /// Jobs folded by group_reporting: passes one job added up stay added up, the other's
    /// listed passes inside that span join them, and every request is counted once. (Jobs
    /// of 100 and 30 passes folded listed passes 25–29 with the second job's bytes alone
    /// beside a span 5–94 holding the first's.)
    #[test]
    fn folded_jobs_passes_add_up_once_each() {
        let tally = |n: u32| {
            let (mut t, mut at) = (PassTally::default(), 0);
            for p in 0..n {
                pass(&mut t, p, 2, &mut at);
            }
            t.finish()
        };
        let (mut listed, mut between) = tally(100);
        for n in [30, 8] {
            let (o, ob) = tally(n);
            merge((&mut listed, &mut between), (&o, &ob));
        }
        let numbers: Vec<u32> = listed.iter().map(|p| p.pass).collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4, 95, 96, 97, 98, 99]);
        assert_eq!(listed[0].read_ios, 6, "three jobs' first pass");
        assert_eq!(listed[9].read_ios, 2, "the first job's last pass alone");
        let b = between.expect("the passes between");
        assert_eq!((b.first, b.last, b.count), (5, 94, 90));
        let ios = b.read_ios + listed.iter().map(|p| p.read_ios).sum::<u64>();
        assert_eq!(ios, 2 * (100 + 30 + 8));
        assert_eq!(b.read_bytes, 4096 * b.read_ios);
        // Jobs with a dozen passes or fewer fold into a list alone.
        let (mut listed, mut between) = tally(12);
        let (o, ob) = tally(7);
        merge((&mut listed, &mut between), (&o, &ob));
        assert_eq!((listed.len(), between), (12, None));
        assert_eq!(listed.iter().map(|p| p.read_ios).sum::<u64>(), 2 * 19);
    }
}
