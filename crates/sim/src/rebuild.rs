//! Rebuilding failed members onto replacement drives (`rebuild = true` beside `failed = [..]`
//! in an `[[array]]`): the state of one array's rebuild and the rules that pace it. The event
//! loop (`engine.rs`) issues the steps: each reads the survivors over a range of member
//! offsets, has the parity engine compute the lost blocks (the planner's rebuild plan, the one
//! the real arrays run), and writes the replacements. Steps go in member-offset order, several
//! at once; below the lowest step not yet written (`ArrayGeom::rebuilt_below`) the array is
//! whole again.
//!
//! Two pacers, as the two kinds of array have:
//!
//! - md (a host array) paces its recovery as `md_do_sync` in the kernel's drivers/md/md.c
//!   does: after every `window` of sync I/O issued (32 pages, 128 KiB of each member) it works
//!   out its speed, KiB/s per member, over its last marks (ten marks three seconds apart); at
//!   or below `speed_limit_min` it goes on at once; above `speed_limit_max` it sleeps 500 ms
//!   and looks again; in between, if the members saw I/O other than its own since it last
//!   looked (`is_mddev_idle`: more than 64 sectors on some member), it waits until all of its
//!   own I/O in flight has completed before issuing more. So an idle array rebuilds as fast as
//!   the members (or `speed_limit_max`) allow, and foreground I/O pushes the rebuild back, one
//!   drained window at a time, toward `speed_limit_min`.
//! - A RAID controller gives its rebuild a share of its time while the host's I/O reaches the
//!   array (its "rebuild rate", or priority): for each step during which host I/O reached
//!   the drives, the rebuild owes a pause of `(100 - rate) / rate` of the step's own time, and
//!   takes it once the pauses owed add up to `CTRL_PAUSE_NS`: under steady host I/O it holds
//!   `rate`% of the time, under lighter I/O more, alone all of it. Between pauses, several
//!   steps at once back to back (the replacement's writes stream).

use std::collections::VecDeque;

/// md's defaults for `/proc/sys/dev/raid/speed_limit_min` and `speed_limit_max`, KiB/s per
/// member (drivers/md/md.c `sysctl_speed_limit_min` = 1000, `sysctl_speed_limit_max` =
/// 200000).
pub const SPEED_LIMIT_MIN_DEFAULT: u64 = 1000;
pub const SPEED_LIMIT_MAX_DEFAULT: u64 = 200_000;
/// The largest speed limit accepted: the sysctls are C ints.
pub const SPEED_LIMIT_MAX: u64 = i32::MAX as u64;

/// md_do_sync's `window = 32*(PAGE_SIZE/512)` sectors: 128 KiB of each member between looks
/// at its speed. The md rebuild's step is one window.
pub const MD_WINDOW: u64 = 32 * 4096;
/// is_mddev_idle: a member with more than 64 sectors of other I/O since the last look is busy.
pub const MD_IDLE_BYTES: u64 = 64 * 512;
/// md_do_sync's speed marks: `SYNC_MARKS` = 10, `SYNC_MARK_STEP` = 3 s.
pub const SYNC_MARKS: usize = 10;
pub const SYNC_MARK_STEP_NS: u64 = 3_000_000_000;
/// md_do_sync's `msleep(500)` above speed_limit_max.
pub const MD_SLEEP_NS: u64 = 500_000_000;
/// md's RAID 1/10 resync buffers in flight: raid1.c/raid10.c `RESYNC_DEPTH` (32) buffers of
/// `RESYNC_BLOCK_SIZE` (64 KiB). (RAID 5/6 resync through the stripe cache: its stripe heads,
/// a page of each member each, bound what is in flight.)
pub const MD_RESYNC_BYTES: u64 = 32 * 64 * 1024;

/// A controller's rebuild step, bytes of each member (rounded up to whole chunks).
/// Assumption: one back-end command per drive of the size controllers commonly move in
/// sequential work (128 KiB); a chunk-sized step over seed 001's 8 KiB chunks would make
/// every command pay its overhead on a fraction of a track.
pub const CTRL_STEP: u64 = 128 * 1024;
/// Steps a controller keeps in flight while no host I/O comes. Assumption: enough that the
/// survivors' reads of later steps are done before the replacement has written the current
/// one, so its writes wait queued back to back (each streams on from the last) rather than
/// arriving after the head has passed their start.
pub const CTRL_DEPTH: u32 = 4;
/// The pause a controller's rebuild takes at once, when host I/O comes, ns. Assumption: the
/// rebuild keeps its share of the time over pauses of 100 ms, so that between them it streams
/// several steps (a pause after every step, as short as the step, would have each step
/// position its drives afresh: a rebuild at 30% then moved a tenth of what 30% of its idle
/// rate is, however light the host's I/O).
pub const CTRL_PAUSE_NS: u64 = 100_000_000;
/// A controller's rebuild rate when the system file gives none, percent. Assumption: 30%,
/// the default LSI/Broadcom MegaRAID controllers ship with (their "rebuild rate" setting);
/// other makers' "medium" priority is of that order.
pub const CTRL_RATE_DEFAULT: u32 = 30;

/// How an array's rebuild is paced.
#[derive(Clone, Debug)]
pub enum Pacer {
    Md(Box<MdPacer>),
    Ctrl {
        /// Percent of the time the rebuild takes while host I/O comes.
        rate: u32,
        /// Host I/O came during the last step (it owed a pause).
        busy: bool,
        /// Drive commands of the host's I/O sent to the array when last looked.
        seen: u64,
        /// Pause owed for the steps run while host I/O came, ns.
        owed: u64,
    },
}

#[derive(Clone, Debug)]
pub struct MdPacer {
    /// KiB/s per member.
    pub min: u64,
    pub max: u64,
    /// (time, bytes completed) at each mark; the one in use.
    marks: [(u64, u64); SYNC_MARKS],
    last_mark: usize,
    resync_mark: (u64, u64),
    /// Per member: its other I/O, bytes, when last counted busy (`rdev->last_events`).
    last_events: Vec<u64>,
}

/// What md does after a window: go on, sleep until a time, or wait for its I/O to drain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MdCheck {
    Go,
    Sleep(u64),
    Drain,
}

impl MdPacer {
    pub fn new(min: u64, max: u64, members: usize) -> MdPacer {
        MdPacer {
            min,
            max,
            marks: [(0, 0); SYNC_MARKS],
            last_mark: 0,
            resync_mark: (0, 0),
            last_events: vec![0; members],
        }
    }

    /// Start (again) at `now` with `done` bytes completed and the members' other I/O at
    /// `events` (`is_mddev_idle(mddev, 1)` and the marks' initialisation).
    pub fn start(&mut self, now: u64, done: u64, events: &[u64]) {
        self.marks = [(now, done); SYNC_MARKS];
        self.last_mark = 0;
        self.resync_mark = (now, done);
        self.last_events.copy_from_slice(events);
    }

    /// md_do_sync's look after a window, at `now`, with `done` bytes (of each member)
    /// completed and each member's other I/O so far `events` (bytes).
    pub fn check(&mut self, now: u64, done: u64, events: &[u64]) -> MdCheck {
        if now >= self.marks[self.last_mark].0 + SYNC_MARK_STEP_NS {
            let next = (self.last_mark + 1) % SYNC_MARKS;
            self.resync_mark = self.marks[next];
            self.marks[next] = (now, done);
            self.last_mark = next;
        }
        // currspeed = KiB since the mark / (whole seconds since it + 1) + 1.
        let kib = done.saturating_sub(self.resync_mark.1) / 1024;
        let secs = (now - self.resync_mark.0) / 1_000_000_000 + 1;
        let speed = kib / secs + 1;
        if speed > self.min {
            if speed > self.max {
                return MdCheck::Sleep(now + MD_SLEEP_NS);
            }
            if !self.idle(events) {
                return MdCheck::Drain;
            }
        }
        MdCheck::Go
    }

    /// is_mddev_idle: every member has seen at most 64 sectors of other I/O since it was
    /// last found busy (a member found busy starts counting again).
    fn idle(&mut self, events: &[u64]) -> bool {
        let mut idle = true;
        for (last, &now) in self.last_events.iter_mut().zip(events) {
            if now.saturating_sub(*last) > MD_IDLE_BYTES {
                *last = now;
                idle = false;
            }
        }
        idle
    }
}

/// One step in flight: its member offset, when it was issued, whether its writes are done.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub start: u64,
    pub issued: u64,
    pub done: bool,
}

/// One array's rebuild.
#[derive(Clone, Debug)]
pub struct Rebuild {
    /// The members being rebuilt.
    pub targets: Vec<u32>,
    /// Member bytes to rebuild (the layout's used part of each member).
    pub end: u64,
    /// Member bytes per step.
    pub step: u64,
    /// Steps in flight at most.
    pub depth: u32,
    /// The member offset of the next step to issue.
    pub next: u64,
    /// Steps in flight, in member-offset order.
    pub flight: VecDeque<Step>,
    /// Member bytes of the steps completed (md's `io_sectors - recovery_active`).
    pub done_bytes: u64,
    /// No step is issued before this time (md's sleep, a controller's pause).
    pub resume_at: u64,
    /// md: look at the speed before the next step. Waiting for the steps in flight to drain.
    pub recheck: bool,
    pub draining: bool,
    /// A wake-up is queued.
    pub wake_armed: bool,
    pub pacer: Pacer,
    /// When the last step was written (0: none yet).
    pub last_done: u64,
    /// When the whole rebuild was written, if it has been.
    pub finished_at: Option<u64>,
    /// Host arrays: each member's I/O the rebuild sent, bytes (md does not count it as other
    /// I/O). Controller arrays: drive commands it sent, in `own[0]`.
    pub own: Vec<u64>,
}

impl Rebuild {
    pub fn new(targets: Vec<u32>, end: u64, step: u64, depth: u32, pacer: Pacer) -> Rebuild {
        let members = match &pacer {
            Pacer::Md(m) => m.last_events.len(),
            Pacer::Ctrl { .. } => 1,
        };
        Rebuild {
            targets,
            end,
            step,
            depth: depth.max(1),
            next: 0,
            flight: VecDeque::new(),
            done_bytes: 0,
            resume_at: 0,
            recheck: false,
            draining: false,
            wake_armed: false,
            pacer,
            last_done: 0,
            finished_at: None,
            own: vec![0; members],
        }
    }

    /// Its own I/O `ios`, being sent: md counts the bytes per member (it does not count them
    /// as other I/O), a controller its drive commands.
    pub fn count_own(&mut self, ios: &[crate::planner::MemberIo]) {
        match self.pacer {
            Pacer::Md(_) => {
                for m in ios {
                    self.own[m.member as usize] += m.len;
                }
            }
            Pacer::Ctrl { .. } => self.own[0] += ios.len() as u64,
        }
    }

    /// Whether it is under way (not finished).
    pub fn running(&self) -> bool {
        self.finished_at.is_none()
    }

    /// The steps in flight were dropped (a new stonewall group starts from clean queues):
    /// issue again from the first one not written.
    pub fn restart(&mut self, rebuilt_below: u64, now: u64) {
        self.flight.clear();
        self.next = rebuilt_below;
        self.resume_at = now;
        self.recheck = false;
        self.draining = false;
        self.wake_armed = false;
        self.last_done = now;
        if let Pacer::Ctrl { busy, owed, .. } = &mut self.pacer {
            *busy = false;
            *owed = 0;
        }
    }

    /// Step at member offset `start` written at `now`: returns the new watermark (the start
    /// of the first step still in flight, or where the next one will start) and the time
    /// the step had to itself: from its issue or the last step's end, whichever is later (a
    /// step queued behind others in flight did not hold the drives while it waited).
    pub fn step_done(&mut self, start: u64, now: u64) -> (u64, u64) {
        let mut took = 0;
        if let Some(s) = self.flight.iter_mut().find(|s| s.start == start) {
            s.done = true;
            took = now - s.issued.max(self.last_done).min(now);
        }
        self.last_done = now;
        while self.flight.front().is_some_and(|s| s.done) {
            let s = self.flight.pop_front().expect("a step");
            self.done_bytes += self.step.min(self.end - s.start);
        }
        let mark = self.flight.front().map_or(self.next, |s| s.start);
        (mark.min(self.end), took)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_goes_on_below_min_whatever_the_members_do() {
        let mut m = MdPacer::new(1000, 200_000, 2);
        m.start(0, 0, &[0, 0]);
        // 512 KiB in 1 s counts as 512 KiB over (1 + 1) s: 257 KiB/s, not above 1000.
        assert_eq!(
            m.check(1_000_000_000, 512 * 1024, &[1 << 30, 0]),
            MdCheck::Go
        );
    }

    #[test]
    fn md_drains_when_busy_and_sleeps_above_max() {
        let mut m = MdPacer::new(1000, 200_000, 2);
        m.start(0, 0, &[0, 0]);
        // 100 MiB in 0.5 s: 102400 KiB/s, between the limits; a member saw other I/O.
        let done = 100 << 20;
        assert_eq!(m.check(500_000_000, done, &[0, 40 * 1024]), MdCheck::Drain);
        // No other I/O since: idle, goes on.
        assert_eq!(m.check(500_000_000, done, &[0, 40 * 1024]), MdCheck::Go);
        // 64 sectors more is still idle; a byte past that is not.
        assert_eq!(m.check(500_000_000, done, &[0, 72 * 1024]), MdCheck::Go);
        assert_eq!(
            m.check(500_000_000, done, &[0, 72 * 1024 + 1]),
            MdCheck::Drain
        );
        // 300 MiB in 0.5 s is above 200000 KiB/s: sleep half a second.
        assert_eq!(
            m.check(500_000_000, 300 << 20, &[0, 0]),
            MdCheck::Sleep(1_000_000_000)
        );
    }

    #[test]
    fn the_watermark_waits_for_the_lowest_step() {
        let mut r = Rebuild::new(
            vec![1],
            1000,
            100,
            4,
            Pacer::Ctrl {
                rate: 30,
                busy: false,
                seen: 0,
                owed: 0,
            },
        );
        for k in 0..3 {
            r.flight.push_back(Step {
                start: k * 100,
                issued: 0,
                done: false,
            });
        }
        r.next = 300;
        assert_eq!(r.step_done(100, 10), (0, 10));
        assert_eq!(r.step_done(0, 20), (200, 10));
        assert_eq!(r.step_done(200, 30), (300, 10));
        assert_eq!(r.done_bytes, 300);
    }
}
