//! When a job's next request may go: fio's rate caps (`rate`, `rate_iops`, `rate_process`),
//! its minimum rates (`rate_min`, `rate_iops_min`, `rate_cycle`), its think time
//! (`thinktime`, `thinktime_spin`, `thinktime_blocks`, `thinktime_blocks_type`,
//! `thinktime_iotime`), its periodic syncs (`fsync`, `fdatasync`) and its `startdelay`.
//!
//! [`Pace`] is the options, plain data inside a [`JobSpec`]. [`Pacer`] is one job instance's
//! schedule: pure code that is told what was issued and completed and at what time, and
//! answers when the next request of a direction may go, whether the job is to stop and
//! think (after every request in flight has completed), whether a sync is due, and whether
//! a minimum rate was missed. Time is always an argument (ns on the caller's clock), so the
//! real-time engine (wall clock) and the simulator (virtual time) share this one schedule.
//!
//! The schedule follows fio 3.33 (`usec_for_io`, `handle_thinktime`, `check_min_rate` in its
//! backend.c; `get_rw_ddir` in io_u.c):
//! - linear: the request that brings a direction's issued bytes to `b` makes the next one
//!   of that direction wait until `b / rate` seconds after the job's start; `rate_iops`
//!   is `rate_iops × the direction's smallest block size` bytes a second (with a `bssplit`,
//!   `1 / rate_iops` seconds a request instead);
//! - poisson: each request pushes the next of its direction on by an exponentially
//!   distributed gap of mean `1 / IOPS` (drawn from the job's seeded generator);
//! - a request whose time has not come waits until every request in flight has completed,
//!   then until its time (fio quiesces before it sleeps);
//! - a mixed job (`rw=randrw`, `rw=rw`) under a cap chooses each request's direction as
//!   fio's `rate_ddir` does ([`Pacer::rate_dir`]): the direction the mix drew, if its time
//!   has come; else the other one, if its time has come (an uncapped direction's always
//!   has); else whichever is due first, after waiting for it. So each capped direction
//!   holds its own rate whatever the mix, and an uncapped one takes the time the capped
//!   one leaves;
//! - think time: once `thinktime_blocks` more requests have completed (or been issued, with
//!   `thinktime_blocks_type=issue`) than at the last stall, or `thinktime_iotime` has passed
//!   since it, the job waits for its requests in flight, spins `thinktime_spin`, then
//!   sleeps the rest of `thinktime`, neither past the end of its runtime. A rate cap then
//!   catches up on the time spent thinking, unless `rate_ignore_thinktime`: then the
//!   direction of the request that led to the stall counts the bytes it would have moved
//!   at its rate meanwhile, less one block (so the next request goes at once), as issued;
//!   under `rate_process=poisson` its schedule moves on by the time spent;
//! - a sync follows every `fsync` (`fdatasync`) writes issued, once the requests in flight
//!   have completed; none follows the job's last write;
//! - minimum rates are judged from 2 s after the start, over each `rate_cycle` ms, for each
//!   direction that has moved data: the job ends with an error when one falls short.

use crate::spec::JobSpec;
use crate::stream::{Dir, Rng};
use serde::{Deserialize, Serialize};

/// How rate-capped requests are spread in time (fio's `rate_process`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    /// Evenly: each request when the direction's bytes so far are due at the rate.
    #[default]
    Linear,
    /// Exponential gaps between requests, a Poisson process of the capped IOPS.
    Poisson,
}

/// What `thinktime_blocks` counts (fio's `thinktime_blocks_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkBlocks {
    /// Requests completed.
    #[default]
    Complete,
    /// Requests issued.
    Issue,
}

/// Which sync a periodic sync is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncKind {
    /// Data and metadata (fio's `fsync`).
    Fsync,
    /// Data only (fio's `fdatasync`).
    Fdatasync,
}

/// fio's `sync`: whether writes are opened synchronous.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncIo {
    /// Ordinary writes (`none`, `0`).
    #[default]
    None,
    /// O_SYNC: each write returns once it and its metadata are stable (`sync`, `1`).
    Sync,
    /// O_DSYNC: each write returns once its data are stable (`dsync`).
    Dsync,
}

/// The pacing options of one job, in fio's words and units converted to bytes and ns.
/// Index 0 of each triple is reads, 1 writes, 2 trims (fio's `read,write,trim` forms).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pace {
    /// Byte rate caps (`rate`), bytes/s; 0 means no cap.
    pub rate: [u64; 3],
    /// IOPS caps (`rate_iops`); 0 means no cap. `rate` wins where both are set.
    pub rate_iops: [u64; 3],
    /// Minimum byte rates (`rate_min`), bytes/s; 0 means none.
    pub rate_min: [u64; 3],
    /// Minimum IOPS (`rate_iops_min`); 0 means none.
    pub rate_iops_min: [u64; 3],
    /// The window minimum rates are judged over (`rate_cycle`), ms.
    pub rate_cycle_ms: u64,
    pub rate_process: RateProcess,
    /// `thinktime`, ns.
    pub thinktime_ns: u64,
    /// `thinktime_spin`, ns: the part of the think time spent busy on a CPU.
    pub thinktime_spin_ns: u64,
    /// `thinktime_blocks`: requests between stalls.
    pub thinktime_blocks: u64,
    /// Whether `thinktime_blocks` was given (with `thinktime_iotime` alone, only time counts).
    pub thinktime_blocks_set: bool,
    pub thinktime_blocks_type: ThinkBlocks,
    /// `thinktime_iotime`, ns: stall after this long issuing (0: by blocks only).
    pub thinktime_iotime_ns: u64,
    /// `startdelay`, ns: the low and high end of the range a job's delay is drawn from.
    pub startdelay_ns: (u64, u64),
    /// `rate_ignore_thinktime`: the time a job spends thinking counts toward its rate
    /// (no catching up afterwards).
    pub rate_ignore_thinktime: bool,
}

impl Default for Pace {
    fn default() -> Self {
        Pace {
            rate: [0; 3],
            rate_iops: [0; 3],
            rate_min: [0; 3],
            rate_iops_min: [0; 3],
            rate_cycle_ms: 1000,
            rate_process: RateProcess::Linear,
            thinktime_ns: 0,
            thinktime_spin_ns: 0,
            thinktime_blocks: 1,
            thinktime_blocks_set: false,
            thinktime_blocks_type: ThinkBlocks::Complete,
            thinktime_iotime_ns: 0,
            startdelay_ns: (0, 0),
            rate_ignore_thinktime: false,
        }
    }
}

impl Pace {
    /// No pacing option was given (so a job's JSON and its runs stay as before them).
    pub fn is_default(&self) -> bool {
        *self == Pace::default()
    }
    /// Whether any rate is capped.
    pub fn capped(&self) -> bool {
        self.rate.iter().chain(&self.rate_iops).any(|&r| r > 0)
    }
    /// Whether any minimum rate is set.
    pub fn has_min(&self) -> bool {
        self.rate_min
            .iter()
            .chain(&self.rate_iops_min)
            .any(|&r| r > 0)
    }
}

/// Nanoseconds a second.
const SEC: u64 = 1_000_000_000;
/// fio lets a job settle this long before judging its minimum rates.
const MIN_RATE_SETTLE_NS: u64 = 2 * SEC;

/// The delay before job instance with stream seed `seed` starts: `startdelay`, or for a
/// range a draw from it (uniform, from the seed, so every run delays the same instance alike).
pub fn start_delay_ns(pace: &Pace, seed: u64) -> u64 {
    let (lo, hi) = pace.startdelay_ns;
    if hi <= lo {
        return lo;
    }
    let mut rng = Rng::new(seed ^ 0x5EED_DE1A_u64.rotate_left(17));
    lo + rng.below(hi - lo + 1)
}

/// A stall the job is to make once its requests in flight have completed: spin on a CPU,
/// then sleep (ns each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Think {
    pub spin_ns: u64,
    pub sleep_ns: u64,
}

impl Think {
    pub fn total_ns(&self) -> u64 {
        self.spin_ns + self.sleep_ns
    }
}

/// One direction's minimum-rate sample: completed bytes and requests, and when.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    bytes: u64,
    ios: u64,
    at: u64,
    taken: bool,
}

/// One job instance's schedule (see the module documentation). Times are ns on the
/// caller's clock; [`Pacer::begin`] sets the job's start.
#[derive(Clone, Debug)]
pub struct Pacer {
    pace: Pace,
    /// Effective byte rate of each direction, bytes/s (0: not capped).
    bps: [u64; 3],
    /// Each direction's smallest block size (poisson's IOPS, bssplit's per-request gap).
    min_bs: [u64; 3],
    /// With `rate_iops` and a `bssplit`: the per-request gap, ns (else 0).
    gap_ns: [u64; 3],
    /// A mixed job under a cap: a direction ahead of its rate yields to the other.
    switches: bool,
    /// The direction of the last request issued (0 reads, 1 writes).
    last_dir: usize,
    /// Time credited to each direction's schedule by `rate_ignore_thinktime`, ns, added
    /// when its next request is issued (poisson's gaps and bssplit's per-request gaps).
    credit_ns: [u64; 3],
    rng: Rng,
    epoch: u64,
    issued_bytes: [u64; 3],
    /// When the next request of each direction may go, ns after `epoch`.
    next_rel: [u64; 3],
    issued_ios: u64,
    completed_ios: u64,
    completed_bytes_dir: [u64; 3],
    completed_ios_dir: [u64; 3],
    last_think_blocks: u64,
    last_think_at: u64,
    sync_every: u64,
    sync_kind: SyncKind,
    writes_issued: u64,
    writes_at_sync: u64,
    samples: [Sample; 3],
}

fn idx(d: Dir) -> usize {
    match d {
        Dir::Read => 0,
        Dir::Write => 1,
        Dir::Trim => 2,
    }
}

impl Pacer {
    /// The schedule of a job instance whose stream seed is `seed`; `None` when the job
    /// sets nothing it needs (no cap, think time, minimum rate or periodic sync), so an
    /// unpaced job costs its executor nothing.
    pub fn new(spec: &JobSpec, seed: u64) -> Option<Pacer> {
        let p = &spec.pace;
        let (sync_every, sync_kind) = if spec.fsync > 0 {
            (spec.fsync, SyncKind::Fsync)
        } else {
            (spec.fdatasync, SyncKind::Fdatasync)
        };
        if !p.capped() && !p.has_min() && p.thinktime_ns == 0 && sync_every == 0 {
            return None;
        }
        let min_bs = [spec.bs.read.min(), spec.bs.write.min(), spec.bs.trim.min()];
        let mut bps = [0u64; 3];
        let mut gap_ns = [0u64; 3];
        for d in 0..3 {
            bps[d] = if p.rate[d] > 0 {
                p.rate[d]
            } else {
                p.rate_iops[d].saturating_mul(min_bs[d])
            };
            let split = ![&spec.bs.read, &spec.bs.write, &spec.bs.trim][d].is_fixed();
            if p.rate[d] == 0 && p.rate_iops[d] > 0 && split {
                gap_ns[d] = SEC / p.rate_iops[d];
            }
        }
        let mixed = !matches!(spec.rw.read_percent(spec.rwmixread), 0 | 100);
        Some(Pacer {
            pace: p.clone(),
            bps,
            min_bs,
            gap_ns,
            switches: mixed && p.capped(),
            last_dir: 0,
            credit_ns: [0; 3],
            rng: Rng::new(seed ^ 0x9015_5011_0000_0001),
            epoch: 0,
            issued_bytes: [0; 3],
            next_rel: [0; 3],
            issued_ios: 0,
            completed_ios: 0,
            completed_bytes_dir: [0; 3],
            completed_ios_dir: [0; 3],
            last_think_blocks: 0,
            last_think_at: 0,
            sync_every,
            sync_kind,
            writes_issued: 0,
            writes_at_sync: 0,
            samples: [Sample::default(); 3],
        })
    }

    /// The job starts issuing at `now`: rates and think intervals count from here.
    pub fn begin(&mut self, now: u64) {
        self.epoch = now;
        self.last_think_at = now;
    }

    /// The earliest time the next request of direction `dir` may be issued.
    pub fn issue_at(&self, dir: Dir) -> u64 {
        self.epoch.saturating_add(self.next_rel[idx(dir)])
    }

    /// Whether this job's directions take turns by their rates ([`Pacer::rate_dir`]): a
    /// mixed job under a cap.
    pub fn switches(&self) -> bool {
        self.switches
    }

    /// The direction the next request goes in at `now`, the mix having drawn `drawn`
    /// (fio's `rate_ddir`): `drawn` if its time has come or the job does not switch; else
    /// the other direction if its time has come; else whichever may go first (the caller
    /// waits until [`Pacer::issue_at`] it).
    pub fn rate_dir(&self, drawn: Dir, now: u64) -> Dir {
        let d = idx(drawn);
        if !self.switches || self.epoch.saturating_add(self.next_rel[d]) <= now {
            return drawn;
        }
        // (Only reads and writes mix: a trim job never switches.)
        let other = match drawn {
            Dir::Read => Dir::Write,
            Dir::Write | Dir::Trim => Dir::Read,
        };
        let o = idx(other);
        if self.epoch.saturating_add(self.next_rel[o]) <= now || self.next_rel[o] < self.next_rel[d]
        {
            other
        } else {
            drawn
        }
    }

    /// A request of `bytes` in direction `dir` was issued.
    pub fn issued(&mut self, dir: Dir, bytes: u64) {
        let d = idx(dir);
        self.last_dir = d;
        self.issued_ios += 1;
        self.issued_bytes[d] += bytes;
        if dir == Dir::Write {
            self.writes_issued += 1;
        }
        let bps = self.bps[d];
        if bps == 0 {
            return;
        }
        self.next_rel[d] = if self.pace.rate_process == RateProcess::Poisson {
            let iops = (bps / self.min_bs[d].max(1)).max(1);
            // 1 - u lies in (0, 1]: its logarithm is finite.
            let u = 1.0 - self.rng.next_f64();
            let gap = (SEC / iops) as f64 * -u.ln();
            let credit = std::mem::take(&mut self.credit_ns[d]);
            self.next_rel[d]
                .saturating_add(credit)
                .saturating_add(gap as u64)
        } else if self.gap_ns[d] > 0 {
            self.next_rel[d] + std::mem::take(&mut self.credit_ns[d]) + self.gap_ns[d]
        } else {
            let b = self.issued_bytes[d] as u128;
            (b * SEC as u128 / bps as u128).min(u64::MAX as u128) as u64
        };
    }

    /// A request of `bytes` in direction `dir` completed.
    pub fn completed(&mut self, dir: Dir, bytes: u64) {
        let d = idx(dir);
        self.completed_ios += 1;
        self.completed_ios_dir[d] += 1;
        self.completed_bytes_dir[d] += bytes;
    }

    /// After a request was issued at `now`: whether the job is to stall, and how long.
    /// The caller waits for every request in flight, spins and sleeps (neither past the
    /// job's end), then calls [`Pacer::thought`].
    pub fn think_due(&mut self, now: u64) -> Option<Think> {
        let p = &self.pace;
        if p.thinktime_ns == 0 {
            return None;
        }
        let mut stall = false;
        if p.thinktime_iotime_ns > 0 {
            if now.saturating_sub(self.last_think_at) >= p.thinktime_iotime_ns {
                stall = true;
            } else if !p.thinktime_blocks_set {
                return None;
            }
        }
        let b = match p.thinktime_blocks_type {
            ThinkBlocks::Complete => self.completed_ios,
            ThinkBlocks::Issue => self.issued_ios,
        };
        if b >= self.last_think_blocks + p.thinktime_blocks {
            stall = true;
        }
        if !stall {
            return None;
        }
        self.last_think_blocks = b;
        let spin = p.thinktime_spin_ns.min(p.thinktime_ns);
        Some(Think {
            spin_ns: spin,
            sleep_ns: p.thinktime_ns - spin,
        })
    }

    /// The stall ended at `now` after `spent_ns` of spinning and sleeping
    /// (`thinktime_iotime` counts from here). With `rate_ignore_thinktime`, the direction
    /// of the last request issued is credited with what its rate would have moved
    /// meanwhile, less one block (fio's `handle_thinktime`).
    pub fn thought(&mut self, now: u64, spent_ns: u64) {
        self.last_think_at = now;
        let d = self.last_dir;
        let bps = self.bps[d];
        if !self.pace.rate_ignore_thinktime || spent_ns == 0 || bps == 0 {
            return;
        }
        let bs = self.min_bs[d].max(1);
        let missed = (bps as u128 * spent_ns as u128 / SEC as u128) as u64;
        let per_op_ns = (bs as u128 * SEC as u128 / bps as u128) as u64;
        let over = if per_op_ns <= spent_ns { bs } else { 0 };
        if self.pace.rate_process == RateProcess::Poisson {
            self.credit_ns[d] += spent_ns;
        } else if let Some(missed_ios) = spent_ns.checked_div(self.gap_ns[d]) {
            let over_ios = u64::from(self.gap_ns[d] <= spent_ns);
            self.credit_ns[d] += (missed_ios - over_ios) * self.gap_ns[d];
        } else {
            self.issued_bytes[d] += missed.saturating_sub(over);
        }
    }

    /// Whether a sync is due before the next request: `fsync`/`fdatasync` writes have
    /// been issued since the last one. The caller waits for every request in flight,
    /// syncs, then calls [`Pacer::synced`].
    pub fn sync_due(&self) -> Option<SyncKind> {
        (self.sync_every > 0
            && self.writes_issued > self.writes_at_sync
            && self.writes_issued.is_multiple_of(self.sync_every))
        .then_some(self.sync_kind)
    }

    /// The sync [`Pacer::sync_due`] asked for is done.
    pub fn synced(&mut self) {
        self.writes_at_sync = self.writes_issued;
    }

    /// Judge the minimum rates at `now`: an error (what was missed, in fio's words) ends
    /// the job. Checked after each round of issuing and completing.
    pub fn check_min_rate(&mut self, now: u64) -> Result<(), String> {
        if !self.pace.has_min() || now.saturating_sub(self.epoch) < MIN_RATE_SETTLE_NS {
            return Ok(());
        }
        for d in 0..3 {
            let (min_bps, min_iops) = (self.pace.rate_min[d], self.pace.rate_iops_min[d]);
            if (min_bps == 0 && min_iops == 0) || self.completed_bytes_dir[d] == 0 {
                continue;
            }
            let (bytes, ios) = (self.completed_bytes_dir[d], self.completed_ios_dir[d]);
            let s = self.samples[d];
            if s.taken {
                let spent_ms = now.saturating_sub(s.at) / 1_000_000;
                if spent_ms < self.pace.rate_cycle_ms.max(1) {
                    continue;
                }
                if min_bps > 0 {
                    let got = (bytes - s.bytes).saturating_mul(1000) / spent_ms;
                    if got < min_bps {
                        return Err(format!(
                            "rate_min={min_bps}B/s not met, got {got}B/s over the last {spent_ms} ms"
                        ));
                    }
                } else {
                    let got = (ios - s.ios).saturating_mul(1000) / spent_ms;
                    if got < min_iops {
                        return Err(format!(
                            "rate_iops_min={min_iops} not met, got {got} IOPS over the last {spent_ms} ms"
                        ));
                    }
                }
            }
            self.samples[d] = Sample {
                bytes,
                ios,
                at: now,
                taken: true,
            };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::spec::spec_from as spec;

    /// The times a job issuing back to back would issue its first `n` requests.
    fn schedule(p: &mut Pacer, dir: Dir, bytes: u64, n: usize) -> Vec<u64> {
        let mut now = 0;
        let mut out = Vec::new();
        for _ in 0..n {
            now = now.max(p.issue_at(dir));
            out.push(now);
            p.issued(dir, bytes);
        }
        out
    }

    #[test]
    fn nothing_to_pace_costs_nothing() {
        assert!(Pacer::new(&spec(&[("rw", "randread")]), 1).is_none());
        assert!(Pacer::new(&spec(&[("startdelay", "1")]), 1).is_none());
    }

    #[test]
    fn rate_iops_spaces_requests_evenly() {
        let mut p = Pacer::new(&spec(&[("rate_iops", "1000")]), 1).unwrap();
        p.begin(0);
        assert_eq!(
            schedule(&mut p, Dir::Read, 4096, 4),
            vec![0, 1_000_000, 2_000_000, 3_000_000]
        );
    }

    #[test]
    fn rate_counts_bytes_and_starts_at_begin() {
        // 1 MiB/s with 64 KiB requests: one every 1/16 s.
        let mut p = Pacer::new(&spec(&[("rate", "1m"), ("bs", "64k")]), 1).unwrap();
        p.begin(5_000);
        assert_eq!(p.issue_at(Dir::Read), 5_000);
        p.issued(Dir::Read, 65536);
        assert_eq!(p.issue_at(Dir::Read), 5_000 + 62_500_000);
    }

    #[test]
    fn read_and_write_caps_are_apart() {
        // rate=,2m caps writes only; rate=1m, caps reads only.
        let mut p = Pacer::new(&spec(&[("rate", ",2m")]), 1).unwrap();
        p.issued(Dir::Read, 1 << 20);
        assert_eq!(p.issue_at(Dir::Read), 0);
        p.issued(Dir::Write, 1 << 20);
        assert_eq!(p.issue_at(Dir::Write), 500_000_000);
        let mut p = Pacer::new(&spec(&[("rate", "1m,")]), 1).unwrap();
        p.issued(Dir::Write, 1 << 20);
        assert_eq!(p.issue_at(Dir::Write), 0);
        p.issued(Dir::Read, 1 << 20);
        assert_eq!(p.issue_at(Dir::Read), SEC);
    }

    #[test]
    fn rate_wins_over_rate_iops() {
        let mut p = Pacer::new(&spec(&[("rate", "4k"), ("rate_iops", "1000")]), 1).unwrap();
        p.issued(Dir::Read, 4096);
        assert_eq!(p.issue_at(Dir::Read), SEC);
    }

    #[test]
    fn poisson_keeps_the_mean_and_repeats_by_seed() {
        let s = spec(&[("rate_iops", "1000"), ("rate_process", "poisson")]);
        let mut a = Pacer::new(&s, 7).unwrap();
        let times = schedule(&mut a, Dir::Read, 4096, 20_001);
        let mean_gap = times[20_000] as f64 / 20_000.0;
        assert!((mean_gap - 1e6).abs() < 0.03e6, "mean gap {mean_gap} ns");
        // Gaps vary (not evenly spaced), and the same seed draws the same ones.
        assert_ne!(times[1] - times[0], times[2] - times[1]);
        let mut b = Pacer::new(&s, 7).unwrap();
        assert_eq!(schedule(&mut b, Dir::Read, 4096, 100), times[..100]);
        let mut c = Pacer::new(&s, 8).unwrap();
        assert_ne!(schedule(&mut c, Dir::Read, 4096, 100), times[..100]);
    }

    #[test]
    fn thinktime_after_every_completed_block() {
        let mut p =
            Pacer::new(&spec(&[("thinktime", "100"), ("thinktime_spin", "30")]), 1).unwrap();
        p.begin(0);
        p.issued(Dir::Read, 4096);
        // Nothing completed yet: fio counts completions by default.
        assert_eq!(p.think_due(10), None);
        p.completed(Dir::Read, 4096);
        p.issued(Dir::Read, 4096);
        assert_eq!(
            p.think_due(20),
            Some(Think {
                spin_ns: 30_000,
                sleep_ns: 70_000
            })
        );
        assert_eq!(p.think_due(30), None);
    }

    #[test]
    fn thinktime_blocks_by_issue() {
        let mut p = Pacer::new(
            &spec(&[
                ("thinktime", "1ms"),
                ("thinktime_blocks", "3"),
                ("thinktime_blocks_type", "issue"),
            ]),
            1,
        )
        .unwrap();
        let mut stalls = Vec::new();
        for i in 1..=9 {
            p.issued(Dir::Write, 4096);
            if let Some(t) = p.think_due(i) {
                stalls.push((i, t.total_ns()));
            }
        }
        assert_eq!(stalls, vec![(3, 1_000_000), (6, 1_000_000), (9, 1_000_000)]);
    }

    #[test]
    fn thinktime_iotime_stalls_by_time_alone() {
        let mut p =
            Pacer::new(&spec(&[("thinktime", "1s"), ("thinktime_iotime", "9")]), 1).unwrap();
        p.begin(0);
        p.issued(Dir::Read, 4096);
        p.completed(Dir::Read, 4096);
        assert_eq!(p.think_due(8 * SEC), None);
        assert!(p.think_due(9 * SEC).is_some());
        p.thought(10 * SEC, SEC);
        assert_eq!(p.think_due(18 * SEC), None);
        assert!(p.think_due(19 * SEC).is_some());
    }

    #[test]
    fn fsync_after_every_n_writes_and_not_between() {
        let mut p = Pacer::new(&spec(&[("rw", "write"), ("fsync", "4")]), 1).unwrap();
        let mut syncs = 0;
        for _ in 0..256 {
            if p.sync_due().is_some() {
                syncs += 1;
                p.synced();
            }
            p.issued(Dir::Write, 4096);
        }
        // fio 3.33 at iodepth 1: 63 syncs for 256 writes (none after the last write).
        assert_eq!(syncs, 63);
        assert_eq!(p.sync_due(), Some(SyncKind::Fsync));
        let p = Pacer::new(&spec(&[("fdatasync", "2")]), 1).unwrap();
        assert_eq!(p.sync_due(), None);
    }

    #[test]
    fn min_rate_is_judged_after_two_seconds_each_cycle() {
        let mut p = Pacer::new(&spec(&[("rate_min", "1m")]), 1).unwrap();
        p.begin(0);
        // 512 KiB/s: under the minimum, but not judged before 2 s, nor before a cycle.
        let mut t = 0;
        let mut err = None;
        while err.is_none() && t < 10 * SEC {
            t += SEC / 8;
            p.completed(Dir::Read, 65536);
            err = p.check_min_rate(t).err();
        }
        assert_eq!(t, 3 * SEC, "{err:?}");
        let e = err.unwrap();
        assert!(
            e.contains("rate_min=1048576B/s not met, got 524288B/s"),
            "{e}"
        );
        // Fast enough: never.
        let mut p = Pacer::new(&spec(&[("rate_iops_min", "10")]), 1).unwrap();
        for i in 1..100 {
            p.completed(Dir::Write, 4096);
            p.check_min_rate(i * SEC / 20).unwrap();
        }
    }

    /// Bytes each direction of a mixed job moves in `secs` of issuing back to back, each
    /// request taking `service_ns`, its direction drawn from the mix then turned by
    /// `rate_dir`, as both executors do.
    fn mixed_run(opts: &[(&str, &str)], secs: u64, service_ns: u64) -> [u64; 2] {
        let s = spec(opts);
        let read_pct = u64::from(s.rw.read_percent(s.rwmixread));
        let mut p = Pacer::new(&s, 1).unwrap();
        p.begin(0);
        let mut mix = Rng::new(5);
        let (mut now, end, mut bytes) = (0, secs * SEC, [0u64; 2]);
        loop {
            let drawn = if mix.below(100) < read_pct {
                Dir::Read
            } else {
                Dir::Write
            };
            let d = p.rate_dir(drawn, now);
            now = now.max(p.issue_at(d));
            if now >= end {
                return bytes;
            }
            p.issued(d, 4096);
            bytes[idx(d)] += 4096;
            now += service_ns;
        }
    }

    #[test]
    fn mixed_caps_hold_each_direction_whatever_the_mix() {
        // fio 3.33, randrw rate=1m,4m: 1 MiB/s of reads and 4 MiB/s of writes at
        // rwmixread=50 and at 80 alike (a direction ahead of its rate yields).
        for mix in ["50", "80", "20"] {
            let b = mixed_run(
                &[("rw", "randrw"), ("rwmixread", mix), ("rate", "1m,4m")],
                10,
                10_000,
            );
            assert!(b[0].abs_diff(10 << 20) <= 4096, "rwmixread={mix}: {b:?}");
            assert!(b[1].abs_diff(40 << 20) <= 4096, "rwmixread={mix}: {b:?}");
        }
        // One value caps both directions at it, as in fio.
        let b = mixed_run(&[("rw", "rw"), ("rate_iops", "100,400")], 10, 10_000);
        assert_eq!(b, [1000 * 4096, 4000 * 4096]);
    }

    #[test]
    fn an_uncapped_direction_takes_the_time_the_capped_one_leaves() {
        // rate=1m, caps reads only: writes go whenever reads are ahead (fio: 1 MiB/s of
        // reads beside writes at the device's speed), not at the reads' pace.
        let b = mixed_run(&[("rw", "randrw"), ("rate", "1m,")], 10, 100_000);
        assert!(b[0].abs_diff(10 << 20) <= 4096, "{b:?}");
        assert!(b[1] > 300 << 20, "{b:?}");
    }

    #[test]
    fn rate_dir_waits_for_the_direction_due_first() {
        let mut p = Pacer::new(&spec(&[("rw", "randrw"), ("rate_iops", "100,50")]), 1).unwrap();
        assert!(p.switches());
        p.begin(0);
        p.issued(Dir::Read, 4096); // next read at 10 ms
        p.issued(Dir::Write, 4096); // next write at 20 ms
        assert_eq!(p.rate_dir(Dir::Write, 5_000_000), Dir::Read);
        assert_eq!(p.rate_dir(Dir::Read, 5_000_000), Dir::Read);
        assert_eq!(p.rate_dir(Dir::Write, 20_000_000), Dir::Write);
        // One direction only, or no cap: the drawn direction always.
        let p = Pacer::new(&spec(&[("rw", "randread"), ("rate", "1m")]), 1).unwrap();
        assert!(!p.switches());
        let p = Pacer::new(&spec(&[("rw", "randrw"), ("thinktime", "10")]), 1).unwrap();
        assert!(!p.switches());
        assert_eq!(p.rate_dir(Dir::Write, 0), Dir::Write);
    }

    /// Requests a job issuing back to back (each completing at once) issues in `secs`,
    /// thinking as told.
    fn think_run(opts: &[(&str, &str)], secs: u64) -> u64 {
        let mut p = Pacer::new(&spec(opts), 1).unwrap();
        p.begin(0);
        let (mut now, end, mut n) = (0, secs * SEC, 0);
        loop {
            now = now.max(p.issue_at(Dir::Read));
            if now >= end {
                return n;
            }
            p.issued(Dir::Read, 4096);
            p.completed(Dir::Read, 4096);
            n += 1;
            if let Some(t) = p.think_due(now) {
                let t1 = (now + t.total_ns()).min(end);
                p.thought(t1, t1 - now);
                now = t1;
            }
        }
    }

    #[test]
    fn rate_ignore_thinktime_stops_the_catching_up() {
        // fio 3.33, rate_iops=100 thinktime=1s thinktime_blocks=50 runtime=4: 200 reads
        // (the rate catches up after each stall), 150 with rate_ignore_thinktime=1.
        let base = [
            ("rw", "randread"),
            ("rate_iops", "100"),
            ("thinktime", "1s"),
            ("thinktime_blocks", "50"),
        ];
        assert_eq!(think_run(&base, 4), 200);
        let mut ignore = base.to_vec();
        ignore.push(("rate_ignore_thinktime", "1"));
        assert_eq!(think_run(&ignore, 4), 150);
        // Poisson gaps move on by the time spent thinking too.
        ignore.push(("rate_process", "poisson"));
        let mut poisson = base.to_vec();
        poisson.push(("rate_process", "poisson"));
        let (caught_up, ignored) = (think_run(&poisson, 4), think_run(&ignore, 4));
        assert!(caught_up > 185 && ignored < 165, "{caught_up} {ignored}");
    }

    #[test]
    fn startdelay_range_draws_within_and_repeats() {
        let s = spec(&[("startdelay", "1-3")]);
        let d: Vec<u64> = (0..50).map(|seed| start_delay_ns(&s.pace, seed)).collect();
        assert!(d.iter().all(|&x| (SEC..=3 * SEC).contains(&x)));
        assert!(d.iter().any(|&x| x != d[0]));
        assert_eq!(start_delay_ns(&s.pace, 3), d[3]);
        let s = spec(&[("startdelay", "250ms")]);
        assert_eq!(start_delay_ns(&s.pace, 9), 250_000_000);
    }
}
