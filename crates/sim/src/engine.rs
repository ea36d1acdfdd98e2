//! The event loop: jobs issue their request streams against LUNs; commands, transfers, caches,
//! destaging and drives advance in virtual time (integer ns). Events are ordered by time and
//! then by a sequence number, so the same inputs give the same results bit for bit.

use crate::device::{f64_of, u64_of};
use crate::planner::{Level, MemberIo};
use crate::world::{
    add_range, buffer_serve, stream_read_ahead, transfer, Dirty, DiskReq, FastMap, Fill, Ranked,
    World, HELD,
};
use raidlab_result::{DirStats, SyncStats};
use raidlab_workload::{Dir, ExitWhat, JobStream, Pacer, Request};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Issue(u32),
    AtCtrl(u32),
    Landed(u32),
    DiskDone(u32),
    Join(u32),
    IoDone(u32),
    /// Next segment of a host ↔ controller transfer.
    Seg(u32),
    /// The page cache's flusher wakes (see [`crate::pagecache::FLUSH_EVERY_NS`]).
    Flusher,
    /// Look again whether the drives under jobs in end_fsync still hold writes.
    SyncCheck,
    /// A host parity array's unplug timer (see [`crate::stripecache::UNPLUG_NS`]).
    Unplug(u32),
    /// An array's rebuild may go on (its pause or md's sleep is over).
    Rebuild(u32),
    /// A steady-state judge's next sample (fio's `steadystate`), once a second.
    SteadyCheck,
}

/// A steady-state judge of a job or a `group_reporting` group (fio's `steadystate`): its
/// members' completed bytes and I/Os sampled once a second of virtual time; once attained,
/// the members stop as at their runtime's end. The report goes on the last member's result.
pub struct SimSteady {
    pub judge: raidlab_result::Steady,
    /// Indices of the member jobs in the group's jobs.
    pub members: Vec<usize>,
}

/// How close to its bound at the region's end (`JobRt::media_floor`) a sequential job may
/// move and still be extended from a steady window: below it the media there is no limit.
const MEDIA_MARGIN: f64 = 0.9;

/// How often a steady-state judge samples its jobs' rates (fio's: once a second).
const STEADY_EVERY_NS: u64 = 1_000_000_000;

/// How often a job in end_fsync looks whether its drives have written out what their write
/// caches hold (the flush the drives are sent; they drain them when idle).
const SYNC_CHECK_NS: u64 = 100_000;

/// The job of a block request the host's page cache sends (its `parent` is the cache's
/// request id).
const CACHE_JOB: u32 = u32::MAX - 1;

/// The pending events: a binary heap, and beside it the soonest event if it was the soonest
/// when scheduled (`first`, never later than any event in the heap). An event scheduled
/// sooner than everything pending — the next step of the command at hand, often — is taken
/// back out without passing through the heap. Pops come in the same (time, seq) order as
/// from the heap alone.
///
/// The heap is the simulator's own (a min-heap on (time, seq) in a `Vec`): it holds a dozen
/// events or so, and a pop that stops sifting down where the moved event fits does fewer
/// moves there than the standard library's, which sifts to the bottom and back up.
#[derive(Default)]
struct EventQueue {
    heap: Vec<Pending>,
    first: Option<Pending>,
}

impl EventQueue {
    #[inline(always)]
    fn push(&mut self, p: Pending) {
        let key = p.key();
        match self.first {
            Some(f) if key < f.key() => {
                self.first = Some(p);
                self.heap_push(f);
            }
            Some(_) => self.heap_push(p),
            None => match self.heap.first() {
                Some(h) if h.key() < key => self.heap_push(p),
                _ => self.first = Some(p),
            },
        }
    }
    #[inline(always)]
    fn heap_push(&mut self, p: Pending) {
        let key = p.key();
        let h = &mut self.heap;
        let mut i = h.len();
        h.push(p);
        let h = h.as_mut_ptr();
        // SAFETY: `i` starts as the index of the entry just pushed, below the length, and
        // each `parent` is below the `i` it was taken from: every index read or written is
        // within the heap. (As the sift-down's, bounds checks here were instructions of every
        // event scheduled.)
        unsafe {
            while i > 0 {
                let parent = (i - 1) / 2;
                if (*h.add(parent)).key() <= key {
                    break;
                }
                *h.add(i) = *h.add(parent);
                i = parent;
            }
            *h.add(i) = p;
        }
    }
    #[inline]
    fn peek(&self) -> Option<&Pending> {
        self.first.as_ref().or_else(|| self.heap.first())
    }
    #[inline]
    fn pop(&mut self) -> Option<Pending> {
        match self.first.take() {
            Some(p) => Some(p),
            None => self.heap_pop(),
        }
    }
    #[inline(always)]
    fn heap_pop(&mut self) -> Option<Pending> {
        let h = &mut self.heap;
        let last = h.pop()?;
        if h.is_empty() {
            return Some(last);
        }
        let top = h[0];
        // Sift `last` down from the root to where it fits.
        let (n, key) = (h.len(), last.key());
        let h = h.as_mut_ptr();
        let mut i = 0;
        // SAFETY: every index read or written is below `n`, the length of the heap: `c` and
        // `c + 1` are compared with it before they are read, and `i` is 0 (the heap is not
        // empty) or a `c` read before. (Indexed with checks, the sift cost four instructions
        // of its 29 a level in the random benchmark, its hottest loop on the host side.)
        unsafe {
            loop {
                let mut c = 2 * i + 1;
                if c >= n {
                    break;
                }
                if c + 1 < n {
                    c += ((*h.add(c + 1)).key() < (*h.add(c)).key()) as usize;
                }
                if key <= (*h.add(c)).key() {
                    break;
                }
                *h.add(i) = *h.add(c);
                i = c;
            }
            *h.add(i) = last;
        }
        Some(top)
    }
    fn clear(&mut self) {
        self.heap.clear();
        self.first = None;
    }
}

/// A pending event: ordered by time, then by the order it was scheduled in (`seq`), only
/// (see [`Pending::key`]) — the event itself never takes part in the comparison.
#[derive(Clone, Copy, Debug)]
struct Pending {
    t: u64,
    seq: u64,
    ev: Ev,
}

impl Pending {
    /// The order events are handled in: time, then scheduling order.
    #[inline(always)]
    fn key(&self) -> u128 {
        // One 128-bit number, compared without a branch (a tuple compares field by field).
        (self.t as u128) << 64 | self.seq as u128
    }
}

/// A host ↔ controller transfer in progress, moved one segment at a time so streams sharing
/// a hop take turns on it at the time they actually get there.
#[derive(Clone, Copy, Debug)]
struct Xfer {
    io: u32,
    left: u64,
    write: bool,
}

/// A cached read whose stripes are still being filled: its data goes up to the host as the
/// stripes arrive, in order, as far as the leading ones are in the controller's cache.
#[derive(Clone, Copy, Debug)]
struct UpStream {
    /// Bytes of the read, from its start, that are in the cache (may go up).
    ready: u64,
    /// The first stripe of the read not yet counted in `ready`.
    next_stripe: u64,
    /// The read's transfer, waiting for more data (parked), if it has caught up.
    parked: Option<u32>,
    /// Whether its transfer has begun.
    started: bool,
}

#[derive(Clone, Copy, Debug)]
struct Io {
    /// Job index, u32::MAX for a member I/O of a host array, or [`CACHE_JOB`].
    job: u32,
    lun: u32,
    /// Byte offset within the LUN.
    offset: u64,
    len: u64,
    write: bool,
    /// A host trim (`write` false): done along its path at once ([`Engine::host_trim`]).
    trim: bool,
    /// A job's verify read-back (a read, `write` false): timed as any read, and counted in
    /// the job's reads by [`Engine::read_back_done`] ([`ReadBack`]).
    check: bool,
    issued: u64,
    /// For host-array member I/Os: the join to signal.
    parent: u32,
    /// Stripes still being filled before a cached read can go up; for a buffered job's
    /// command, the page cache's block reads it waits for.
    waiting: u32,
}

#[derive(Clone, Debug)]
enum JoinKind {
    /// Member reads of a direct (uncached) read done: send the data up.
    ReadUp(u32),
    /// A stripe's read-ahead fill done.
    Fill { array: u32, stripe: u64 },
    /// Destage phase 1 (old data/parity read) done: compute parity, write.
    Destage1 {
        array: u32,
        stripes: Vec<(u64, u64)>,
        writes: Vec<MemberIo>,
        parity: u64,
    },
    /// Destage writes done: (stripe, bytes) of each stripe written.
    Destage2 {
        array: u32,
        stripes: Vec<(u64, u64)>,
    },
    /// Write-through: phase-1 reads done.
    Through1 {
        io: u32,
        writes: Vec<MemberIo>,
        parity: u64,
    },
    /// Write-through writes done, or a host array's member I/Os done: complete the I/O.
    Complete(u32),
    /// A host parity array's stripe: its pre-reads done (compute parity, write).
    StripeRead {
        array: u32,
        stripes: Vec<u64>,
        writes: Vec<MemberIo>,
        parity: u64,
    },
    /// A host parity array's stripes: their writes done.
    StripeDone { array: u32, stripes: Vec<u64> },
    /// A slice (rows `r0..r1` within the chunk) of a host parity array's stripe written.
    StripeSlice {
        array: u32,
        stripe: u64,
        r0: u64,
        r1: u64,
    },
    /// A degraded array's read whose lost data has been rebuilt (its parity computed): go
    /// on with the read's own step.
    Rebuilt(Box<JoinKind>),
    /// A rebuild step's survivor reads done: compute the lost blocks, write the replacements.
    RebuildRead {
        array: u32,
        start: u64,
        writes: Vec<MemberIo>,
        parity: u64,
    },
    /// A rebuild step's replacement writes done.
    RebuildWrite { array: u32, start: u64 },
}

struct Join {
    remaining: u32,
    ready: u64,
    kind: JoinKind,
}

/// One job instance's live state and counters.
pub struct JobRt {
    pub stream: JobStream,
    /// A sequential job's bound at its region's end, bytes/ns, when the drives' zones put it
    /// below the bound at the region's start (`media_floor` in lib.rs): the run is not
    /// extended from a steady window while the job moves faster than `MEDIA_MARGIN` of
    /// it, since further in the media would hold it back. A full drive read at the outer
    /// zone's rate was extended at that rate over the whole stroke.
    pub media_floor: Option<f64>,
    /// Its job's index among the run's jobs (`JobSpec`s), and that of the job it waits for
    /// (fio's `wait_for`): it starts once every instance of that job in its group has ended.
    pub spec: u32,
    pub waits_on: Option<u32>,
    /// Waiting for that job to end: not started yet.
    pub waiting: bool,
    /// Its spec says `sim_converge=0`: its group is simulated to the end, never stopped
    /// and extended from a steady window.
    pub exact: bool,
    /// fio's flow: (flow_id, weight, flow_sleep in ns) of a job in one, and its place in
    /// the engine's flows (set as its group starts); the requests it has issued; whether it
    /// waits for the flow's other jobs to issue (it was ahead, with no flow_sleep).
    pub flow: Option<(u32, u32, u64)>,
    flow_slot: usize,
    flow_counted: bool,
    flow_own: u64,
    flow_blocked: bool,
    /// A flow_sleep due, ns, from when what the job has in flight is done (as fio sleeps).
    flow_sleep: Option<u64>,
    /// The read-ahead its advice gives its buffered reads (fio's `fadvise_hint`).
    pub read_advice: raidlab_workload::ReadAdvice,
    /// The job's LUNs, by its requests' `file` (one but for a job over several targets).
    pub luns: Vec<u32>,
    pub depth: u32,
    pub inflight: u32,
    /// Once the queue is full it is filled again only with this many or fewer in flight
    /// (`JobSpec::refill_at`: fio's `iodepth_low` and `iodepth_batch_complete_min`; by
    /// default `depth` − 1, each completion making room for the next request).
    pub refill_at: u32,
    /// The queue was filled and is draining to `refill_at`.
    draining: bool,
    pub exhausted: bool,
    pub stopped: bool,
    pub start: u64,
    /// When its first request may go: `start` plus the program's start and `startdelay`
    /// (where a replayed trace's and an I/O log's times count from).
    pub first: u64,
    pub ramp_end: u64,
    pub deadline: Option<u64>,
    pub end: u64,
    pub read: DirStats,
    pub write: DirStats,
    pub trim: DirStats,
    /// A trim is done as it is issued, as the real engine does it (the submitting thread
    /// waits for it): the job issues nothing more before it ends.
    blocked_until: u64,
    pub bytes_done: u64,
    /// Bytes completed including the ramp.
    pub bytes_all: u64,
    /// I/Os completed including the ramp.
    pub ios_all: u64,
    /// Bytes the job would move if run to its end (size × loops), when known.
    pub target_bytes: Option<u64>,
    /// Set when the run converged: the simulated part was extended to the job's size at the
    /// steady rate (virtual ns added).
    pub extrapolated_ns: u64,
    /// fio's IO depths: requests issued at each depth bucket (see `raidlab_result::schema`).
    pub iodepth_level: [u64; 7],
    /// Through the host's page cache (`direct=0` on a host that has one).
    pub buffered: bool,
    /// fio's end_fsync: once its last request is done, the job waits (`syncing`) until
    /// its LUN's dirty pages are written back.
    pub end_fsync: bool,
    pub syncing: bool,
    synced: bool,
    /// When requests may go (rate caps, think time, periodic syncs); `None` for a job
    /// without such options, which then issues exactly as before them.
    pub pacer: Option<Pacer>,
    /// `startdelay`: virtual ns after its group's start before the job starts.
    pub start_delay: u64,
    /// Periodic syncs done (count, latencies).
    pub sync: SyncStats,
    /// What ended the job with an error (a missed `rate_min`, a request past `max_latency`),
    /// and its errno as fio gives it.
    pub error: Option<String>,
    pub errno: i32,
    /// fio's `max_latency`, ns; 0 none.
    pub max_latency_ns: u64,
    /// fio's latency-target mode: the search for the deepest queue that meets the target
    /// (its depth is the job's `depth` meanwhile), with the job's `iodepth` as ceiling.
    pub search: Option<Box<raidlab_workload::DepthSearch>>,
    /// A lower depth (or the depth found) waits for what is in flight to complete: the
    /// queue drains to none (`refill_at` 0 meanwhile; this is its own value). Then, for the
    /// depth found, the job's counters start again (`final_run`).
    drain_to_zero: Option<u32>,
    final_run: bool,
    /// `max_latency` or a latency target: each completion's latency is looked at (one test
    /// on the completion path for both).
    pub latency_watch: bool,
    /// The next request, drawn from the stream and waiting for its time, a sync or a
    /// think time to pass.
    held: Option<Request>,
    /// Waits for its requests in flight, then until this time (its rate's schedule).
    wait_until: Option<u64>,
    /// Waits for its requests in flight, then thinks this long (ns).
    think: Option<u64>,
    /// Waits for its requests in flight, then syncs.
    sync_wait: bool,
    /// A sync in progress: when it was issued, and when its command has passed the path.
    flush: Option<(u64, u64)>,
    /// An `Issue` wake-up is queued for the job.
    wake_armed: bool,
    /// The job's time-series logs, when it writes any: each counted completion is recorded
    /// at its virtual time since the ramp ended.
    pub log: Option<Box<raidlab_result::JobLog>>,
    /// The job's I/O log (fio's `write_iolog`), when it writes one: each request and sync at
    /// its virtual issue time since the job's start.
    pub iolog: Option<Box<raidlab_result::IoLog>>,
    /// fio's verify read-backs (`do_verify`'s at the end, `verify_backlog`'s as it goes):
    /// what the job wrote and reads back; None for a job that reads nothing back.
    pub readback: Option<Box<ReadBack>>,
    /// Where the job's measured part ended, when a read-back at its end followed (0: at its
    /// end): its writes' rates are over the time before it, as the real engine's are.
    measured_end: u64,
    /// Whether the job has a pacer, replays a trace or logs its requests (see
    /// [`JobRt::set_special`]): the issue path's rarer steps, behind one test.
    special: bool,
    /// Bandwidth and IOPS samples: each counted completion at its virtual time since the
    /// ramp ended.
    pub sampler: raidlab_result::Sampler,
    /// What the job's end stops (fio's `exitall`, `exitall_on_error`, `exit_what`: see
    /// `raidlab_workload::exit_scope`): when it ends without an error, and with one.
    pub exits: [Option<ExitWhat>; 2],
    /// Its reporting group (`groupid`), for `exit_what=group`.
    pub report_group: u32,
}

impl JobRt {
    /// A request took `lat` ns, past `max_latency`: fio's lat_fatal, the job ends with
    /// ETIMEDOUT, the request still counted.
    #[cold]
    #[inline(never)]
    fn past_max_latency(&mut self, lat: u64) {
        if self.error.is_none() {
            self.error = Some(raidlab_workload::max_latency_exceeded(
                lat,
                self.max_latency_ns,
            ));
            self.errno = libc::ETIMEDOUT;
        }
        self.stopped = true;
    }

    /// A completion whose total latency was `lat`, for a job with `max_latency` or a
    /// latency target. Whether a latency-target search ended the job.
    #[cold]
    #[inline(never)]
    fn latency_done(&mut self, now: u64, lat: u64) -> bool {
        if self.max_latency_ns > 0 && lat > self.max_latency_ns {
            self.past_max_latency(lat);
        }
        self.latency_completed(now, lat)
    }

    /// A completion (total latency `lat`) in fio's latency-target mode: the search told,
    /// the window judged, and the job's depth set to the search's. A lower depth, and the
    /// final run at the depth found, wait for the queue to drain; the final run restarts the
    /// job's counters and runtime; the search's end stops the job as its runtime's end
    /// would. Whether the search ended the job.
    fn latency_completed(&mut self, now: u64, lat: u64) -> bool {
        use raidlab_workload::DepthStep;
        // (A job that has stopped, by the search or otherwise, searches no more.)
        let Some(sr) = self.search.as_mut().filter(|_| !self.stopped) else {
            return false;
        };
        let mut step = if now >= self.ramp_end {
            sr.completed(lat, now, self.ios_all)
        } else {
            DepthStep::Go
        };
        if step == DepthStep::Go && self.drain_to_zero.is_none() {
            step = sr.check(now, self.ios_all);
        }
        self.depth = sr.depth();
        if matches!(step, DepthStep::Drain | DepthStep::FinalRun) {
            // (The queue's own drain, to none: see `issue`.)
            self.drain_to_zero.get_or_insert(self.refill_at);
            self.refill_at = 0;
            self.draining = true;
            self.final_run |= step == DepthStep::FinalRun;
        }
        match step {
            DepthStep::Go | DepthStep::Drain | DepthStep::FinalRun => {}
            DepthStep::GiveUp => {
                if self.error.is_none() {
                    self.error = Some(raidlab_workload::latency::missed_at_depth_1(
                        lat,
                        sr.target_ns(),
                    ));
                    self.errno = libc::ETIMEDOUT;
                }
                self.stopped = true;
            }
            DepthStep::Done => {
                self.halt(now);
                return true;
            }
        }
        if self.inflight == 0 {
            if let Some(r) = self.drain_to_zero.take() {
                self.refill_at = r;
            }
            if std::mem::take(&mut self.final_run) {
                // (fio's reset_all_stats: the results are the final run's.)
                if let Some(d) = self.deadline {
                    self.deadline = Some(now + (d - self.ramp_end));
                }
                self.ramp_end = now;
                self.read = DirStats::default();
                self.write = DirStats::default();
                self.bytes_done = 0;
                self.iodepth_level = [0; 7];
                self.sync = SyncStats::default();
                self.sampler = self.sampler.restarted();
            }
        }
        false
    }

    /// Stop as at the runtime's end: issue nothing more, wait for nothing, and end once the
    /// requests in flight are done (now, with none). Whether the job was still running.
    fn halt(&mut self, now: u64) -> bool {
        if self.finished() {
            return false;
        }
        self.stopped = true;
        self.held = None;
        if let Some(rb) = self.readback.as_mut() {
            // (A check under way ends with its batch in flight.)
            rb.pending &= rb.in_flight > 0;
        }
        self.wait_until = None;
        self.think = None;
        self.flow_sleep = None;
        self.sync_wait = false;
        if self.finished() {
            self.end = now;
        }
        true
    }

    pub fn new(stream: JobStream, luns: Vec<u32>, depth: u32) -> JobRt {
        JobRt {
            stream,
            media_floor: None,
            spec: 0,
            waits_on: None,
            waiting: false,
            exact: false,
            flow: None,
            flow_slot: 0,
            flow_counted: false,
            flow_own: 0,
            flow_blocked: false,
            flow_sleep: None,
            read_advice: Default::default(),
            luns,
            depth,
            inflight: 0,
            refill_at: depth.max(1) - 1,
            draining: false,
            exhausted: false,
            stopped: false,
            start: 0,
            first: 0,
            ramp_end: 0,
            deadline: None,
            end: 0,
            read: DirStats::default(),
            write: DirStats::default(),
            trim: DirStats::default(),
            blocked_until: 0,
            bytes_done: 0,
            bytes_all: 0,
            ios_all: 0,
            target_bytes: None,
            extrapolated_ns: 0,
            iodepth_level: [0; 7],
            buffered: false,
            end_fsync: false,
            syncing: false,
            synced: false,
            pacer: None,
            start_delay: 0,
            sync: SyncStats::default(),
            error: None,
            errno: 0,
            max_latency_ns: 0,
            search: None,
            drain_to_zero: None,
            final_run: false,
            latency_watch: false,
            held: None,
            wait_until: None,
            think: None,
            sync_wait: false,
            flush: None,
            wake_armed: false,
            log: None,
            iolog: None,
            readback: None,
            measured_end: 0,
            special: false,
            sampler: raidlab_result::Sampler::default(),
            exits: [None; 2],
            report_group: 0,
        }
    }
    /// Held back by its pacer: no request is to go until its requests in flight have
    /// completed and its wait, think time or sync is over. (Only a pacer sets those: a job
    /// without one is asked one question.)
    #[inline(always)]
    fn paused(&self) -> bool {
        self.special
            && (self.wait_until.is_some()
                || self.think.is_some()
                || self.flow_sleep.is_some()
                || self.sync_wait
                || self.readback.as_ref().is_some_and(|r| r.pending))
    }
    /// The sync the job waits to run, and whether it is its trace's (else its pacer's).
    fn pending_sync(&self) -> Option<(raidlab_workload::SyncKind, bool)> {
        match self.stream.sync_due(self.held.as_ref()) {
            Some(k) => Some((k, true)),
            None => self
                .pacer
                .as_ref()
                .and_then(|p| p.sync_due())
                .map(|k| (k, false)),
        }
    }
    /// Note whether the job has a pacer, a trace, an I/O log or read-backs, once they are
    /// set, or `trims` (its trims take the issue path's rarer steps).
    pub fn set_special(&mut self, trims: bool) {
        self.special = self.pacer.is_some()
            || self.flow.is_some()
            || self.stream.replays()
            || self.iolog.is_some()
            || self.readback.is_some()
            || trims;
    }
    /// Nothing more to issue and nothing in flight.
    fn drained(&self) -> bool {
        (self.exhausted || self.stopped) && self.inflight == 0
    }
    fn finished(&self) -> bool {
        self.drained()
            && !self.syncing
            && !self
                .readback
                .as_ref()
                .is_some_and(|r| r.holds(self.stopped))
    }
    /// Where the job's measured part ended: its end, or where a read-back at its end began.
    pub fn counted_end(&self) -> u64 {
        if self.measured_end > 0 {
            self.measured_end
        } else {
            self.end
        }
    }
}

/// A job's verify read-backs, as the real engine does them
/// ([`raidlab_workload::readback`]): the blocks written since the last check, and the check
/// under way, read `depth` at a time, each batch complete before the next goes. Timed as
/// reads along the job's path and counted as its reads, as fio counts them; nothing is
/// checked (the simulator has no data). A run with a read-back at a job's end is simulated
/// to its end, not extended from a steady window; `verify_backlog`'s alone are extended
/// with the writes they follow.
#[derive(Debug, Default)]
pub struct ReadBack {
    /// `verify_backlog`: blocks written between checks (0: none), and how many a check
    /// reads (0: all of them).
    every: u64,
    batch: u64,
    /// `do_verify`: what was written (since the last backlog check) is read back once the
    /// writes and end_fsync are done; and whether that check has begun.
    at_end: bool,
    end_begun: bool,
    /// Blocks written since the last check, as their writes completed.
    wrote: Vec<raidlab_workload::readback::Block>,
    /// The check under way: its blocks, how many have gone, how many of its batch are in
    /// flight.
    blocks: Vec<raidlab_workload::readback::Block>,
    next: usize,
    in_flight: u32,
    /// A check is due (what is in flight completing first) or under way: none of the job's
    /// own requests goes meanwhile.
    pending: bool,
    /// When the check under way began; and, as fio counts read-backs (as the job's reads),
    /// those counted (past the ramp), their bytes, and the time the checks took: the read
    /// line's runtime when the job reads nothing else.
    began: u64,
    ios: u64,
    bytes: u64,
    spent_ns: u64,
}

impl ReadBack {
    /// `backlog` as [`raidlab_workload::readback::backlog`] gives it; `at_end` as
    /// [`raidlab_workload::readback::at_end`].
    pub fn new(backlog: (u64, u64), at_end: bool) -> ReadBack {
        ReadBack {
            every: backlog.0,
            batch: backlog.1,
            at_end,
            ..Default::default()
        }
    }
    /// Whether the job may not end yet: read-backs in flight, or (unless it stopped) a
    /// check due or the end's still to come.
    fn holds(&self, stopped: bool) -> bool {
        self.in_flight > 0
            || (!stopped
                && (self.pending || (self.at_end && !self.end_begun && !self.wrote.is_empty())))
    }
    /// A write of the job's completed: kept to be read back, and a backlog check due once
    /// `every` have.
    fn written(&mut self, b: raidlab_workload::readback::Block) {
        self.wrote.push(b);
        if self.every > 0 && self.wrote.len() as u64 >= self.every {
            self.pending = true;
        }
    }
}

/// Steady-state detection, like fio's `ss=bw:<tol>%`: the rate over each of the last `window`
/// intervals stays within `tolerance` of their mean, and caches are not filling or draining.
#[derive(Clone, Debug)]
pub struct Convergence {
    pub window: usize,
    pub tolerance: f64,
    /// Completions per interval (at least).
    pub interval_ios: u64,
    pub enabled: bool,
}

impl Default for Convergence {
    fn default() -> Self {
        Convergence {
            window: 12,
            tolerance: 0.02,
            interval_ios: 64,
            enabled: true,
        }
    }
}

pub struct Engine<'w> {
    pub w: &'w mut World,
    pending: EventQueue,
    /// Events scheduled for the current time, in scheduling order: kept out of the heap
    /// (a quarter of all events are completions due at once), merged with it by (time, seq)
    /// in [`Engine::next_event`]. Empty whenever time moves on. A list read from `due_head`
    /// rather than a ring: they are only added, then all taken.
    due: Vec<(u64, Ev)>,
    /// The first of `due` not yet handled (the list is emptied once all are).
    due_head: usize,
    /// The time of the event being handled.
    event_t: u64,
    seq: u64,
    pub now: u64,
    ios: Vec<Io>,
    free_ios: Vec<u32>,
    joins: Vec<Join>,
    free_joins: Vec<u32>,
    pub member_ios: u64,
    /// Events handled and host commands issued (for the simulator's speed benchmark).
    pub events: u64,
    pub host_ios: u64,
    scratch: Vec<MemberIo>,
    /// Scratch for a mirror read's loads by member (see [`member_loads`]).
    loads: Vec<u64>,
    /// Scratch for [`merge_ios`].
    sort_tmp: Vec<MemberIo>,
    /// A dirty stripe's ranges, as the planner takes them.
    range_tmp: Vec<(u64, u64)>,
    /// Scratch for host parity arrays' stripe caches: stripes to start, writes done.
    stripes_ready: Vec<u64>,
    stripe_writers: Vec<u32>,
    xfers: Vec<Xfer>,
    free_xfers: Vec<u32>,
    /// Cached reads going up while their later stripes are still filling, by I/O (an I/O
    /// with `waiting > 0` on a controller's read path has an entry).
    up_streams: FastMap<u32, UpStream>,
    /// Emptied member-I/O and stripe lists, reused instead of allocating per plan.
    mio_pool: Vec<Vec<MemberIo>>,
    stripe_pool: Vec<Vec<(u64, u64)>>,
    /// Scratch: the commands a drive's scheduler looked at, with their approximate
    /// positioning times.
    ranks: Vec<Ranked>,
    /// Host software cost varies per request (scheduling, interrupts): uniform over
    /// 0.5–1.5 × its mean, drawn from a fixed seed so runs repeat exactly. Without it,
    /// threads that start in lockstep would stay in lockstep forever.
    jitter: raidlab_workload::Rng,
    /// The page cache's block requests to send (scratch), the buffered writes waiting for
    /// write-back (command, when its copy ends), and whether the flusher's wake-up is queued.
    block_out: Vec<crate::pagecache::BlockIo>,
    /// When the page cache last sent a block request, and when it reached the array.
    block_sent: (u64, u64),
    throttled: std::collections::VecDeque<(u32, u64)>,
    flusher_armed: bool,
    /// A group has run since the last `between_groups`.
    group_ended: bool,
    /// A job's end under `exit_what=all` stopped everything: no later group is to run.
    pub exit_all: bool,
    /// A job's end has stopped others in this group (`exitall`).
    exit_stopped: bool,
    /// The group's steady-state judges (fio's `steadystate`), set by the caller before `run`.
    pub steady: Vec<SimSteady>,
    /// A judge stopped its jobs this group.
    steady_stopped: bool,
    /// A latency-target search ended a job (it found its depth and ran the final window).
    latency_stopped: bool,
    /// Buffered reads waiting for a step: where the next step starts, the end, and the
    /// waited-for step's length.
    reading: crate::world::FastMap<u32, (u64, u64, u64)>,
    sync_check_armed: bool,
    /// By LUN, as md keeps them for each member of a host array: member I/Os sent and not
    /// yet done (`nr_pending`), and where the last one done ended (`head_position`), which
    /// its mirror reads are balanced by ([`Engine::host_mirror_loads`]).
    member_pending: Vec<u32>,
    member_head: Vec<u64>,
    /// By LUN: bytes of host arrays' member I/O sent to it (what md's `is_mddev_idle` counts
    /// on each member, the rebuild's own I/O included).
    member_sent: Vec<u64>,
    /// By array, for host RAID 1: where the last read sent ended, and the member it went to
    /// (md's `next_seq_sect` and `last_used`).
    mirror_next: Vec<(u64, u32)>,
    /// Jobs with a sync in progress, and whether a drive wrote out held data since they
    /// were last looked at.
    flushing: u32,
    flush_check: bool,
    /// fio's flows of the group running: (flow_id, requests its jobs have issued, the
    /// weight of its jobs still running), in the order the jobs name them.
    flows: Vec<(u32, u64, u64)>,
}

impl<'w> Engine<'w> {
    pub fn new(w: &'w mut World) -> Self {
        Engine {
            pending: EventQueue::default(),
            due: Vec::new(),
            due_head: 0,
            event_t: 0,
            seq: 0,
            now: 0,
            ios: Vec::new(),
            free_ios: Vec::new(),
            joins: Vec::new(),
            free_joins: Vec::new(),
            member_ios: 0,
            events: 0,
            host_ios: 0,
            scratch: Vec::new(),
            loads: Vec::new(),
            sort_tmp: Vec::new(),
            range_tmp: Vec::new(),
            stripes_ready: Vec::new(),
            stripe_writers: Vec::new(),
            xfers: Vec::new(),
            free_xfers: Vec::new(),
            up_streams: FastMap::default(),
            mio_pool: Vec::new(),
            stripe_pool: Vec::new(),
            ranks: Vec::new(),
            jitter: raidlab_workload::Rng::new(0x06a1_77e5),
            block_out: Vec::new(),
            block_sent: (u64::MAX, 0),
            throttled: std::collections::VecDeque::new(),
            flusher_armed: false,
            group_ended: false,
            exit_all: false,
            exit_stopped: false,
            steady: Vec::new(),
            steady_stopped: false,
            latency_stopped: false,
            flows: Vec::new(),
            reading: Default::default(),
            sync_check_armed: false,
            member_pending: vec![0; w.luns.len()],
            member_head: vec![0; w.luns.len()],
            member_sent: vec![0; w.luns.len()],
            mirror_next: vec![(0, 0); w.arrays.len()],
            flushing: 0,
            flush_check: false,
            w,
        }
    }

    fn take_mios(&mut self) -> Vec<MemberIo> {
        self.mio_pool.pop().unwrap_or_default()
    }
    fn put_mios(&mut self, mut v: Vec<MemberIo>) {
        v.clear();
        self.mio_pool.push(v);
    }
    fn take_stripes(&mut self) -> Vec<(u64, u64)> {
        self.stripe_pool.pop().unwrap_or_default()
    }
    fn put_stripes(&mut self, mut v: Vec<(u64, u64)>) {
        v.clear();
        self.stripe_pool.push(v);
    }

    #[inline(always)]
    fn at(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        let t = t.max(self.now);
        // (`now` runs ahead of the event being handled while a host array's member command
        // is sent at a later time; only what is due at the event's own time queues here.)
        if t == self.event_t {
            self.due.push((self.seq, ev));
        } else {
            self.pending.push(Pending {
                t,
                seq: self.seq,
                ev,
            });
        }
    }

    /// The next event by (time, seq): the heap's first, or the first of those due now.
    #[inline]
    fn next_event(&mut self) -> Option<(u64, Ev)> {
        if let Some(&(seq, ev)) = self.due.get(self.due_head) {
            match self.pending.peek() {
                Some(p) if p.t == self.event_t && p.seq < seq => {}
                _ => {
                    self.due_head += 1;
                    if self.due_head == self.due.len() {
                        self.due.clear();
                        self.due_head = 0;
                    }
                    return Some((self.event_t, ev));
                }
            }
        }
        self.pending.pop().map(|p| (p.t, p.ev))
    }

    fn new_io(&mut self, io: Io) -> u32 {
        if let Some(i) = self.free_ios.pop() {
            self.ios[i as usize] = io;
            i
        } else {
            self.ios.push(io);
            (self.ios.len() - 1) as u32
        }
    }

    #[inline(always)]
    fn new_join(&mut self, remaining: u32, kind: JoinKind) -> u32 {
        let j = Join {
            remaining,
            ready: self.now,
            kind,
        };
        if let Some(i) = self.free_joins.pop() {
            // A free slot's kind is `Complete(u32::MAX)` (see `join_done`), which owns
            // nothing: overwritten without a call to drop it.
            let old = std::mem::replace(&mut self.joins[i as usize], j);
            debug_assert!(matches!(old.kind, JoinKind::Complete(u32::MAX)));
            std::mem::forget(old);
            i
        } else {
            self.joins.push(j);
            (self.joins.len() - 1) as u32
        }
    }

    #[inline(always)]
    fn signal(&mut self, j: u32, t: u64) {
        let jj = &mut self.joins[j as usize];
        jj.ready = jj.ready.max(t);
        jj.remaining -= 1;
        if jj.remaining == 0 {
            let r = jj.ready;
            self.at(r, Ev::Join(j));
        }
    }

    /// Run the jobs until every one has finished or the rate has converged.
    /// Returns the stop reason.
    pub fn run(&mut self, jobs: &mut [JobRt], conv: &Convergence) -> &'static str {
        if std::mem::take(&mut self.group_ended) {
            self.between_groups();
        }
        let start = self.now;
        self.event_t = start;
        if let Some(pc) = self.w.page_cache.as_mut() {
            pc.new_group(jobs.len());
            for (k, j) in jobs.iter().enumerate() {
                pc.advise(k, j.read_advice);
            }
            // Dirty pages the last group left: the flusher and write-back carry on.
            if pc.dirty_pages > 0 {
                self.arm_flusher();
                self.pump_writeback();
            }
        }
        // fio's flows: the weights of this group's jobs in each.
        self.flows.clear();
        for j in jobs.iter_mut() {
            if let Some((id, weight, _)) = j.flow {
                j.flow_slot = match self.flows.iter().position(|f| f.0 == id) {
                    Some(k) => k,
                    None => {
                        self.flows.push((id, 0, 0));
                        self.flows.len() - 1
                    }
                };
                let _ = weight; // (counted in the flow as the job starts)
            }
        }
        for i in 0..jobs.len() {
            // (fio's wait_for: a job whose waitee runs in this group starts once it ends.)
            let w = jobs[i].waits_on;
            if w.is_some_and(|w| jobs.iter().any(|k| k.spec == w)) {
                jobs[i].waiting = true;
                continue;
            }
            self.start_job(&mut jobs[i], i, start);
        }
        // Rebuilds under way go on (or start) with the group. The array changes under the
        // jobs as a rebuild passes: such a run is simulated to its end, not extended from a
        // steady window.
        let rebuilding = self.rebuild_begin();
        // (Nor is one in which a job's end stops others, `exitall`: the extension would run
        // each job on to its own end.)
        let stops_others = jobs.iter().any(|j| j.exits.iter().any(Option::is_some));
        // (Nor one judged for steady state: its judge, not the extension, ends it.)
        // (Nor one that replays a trace, or logs its requests: each request is simulated.)
        // (Nor one that walks strided zones: the rate changes from zone to zone.)
        // (Nor one with a job waiting for another's end: it starts then.)
        // (Nor one searching for a latency target's depth: the search ends it.)
        // (Nor one with a job that reads back what it wrote once its writes are done: the
        // read-back follows the last write.)
        // (Nor one with a job whose spec asks for every request, `sim_converge=0`.)
        let exact = jobs.iter().any(|j| {
            j.exact
                || j.stream.replays()
                || j.stream.zoned()
                || j.waiting
                || j.iolog.is_some()
                || j.search.is_some()
                || j.readback.as_ref().is_some_and(|r| r.at_end)
        });
        let conv_enabled =
            conv.enabled && !rebuilding && !stops_others && !exact && self.steady.is_empty();
        if !self.steady.is_empty() {
            self.at(start + STEADY_EVERY_NS, Ev::SteadyCheck);
        }
        // Drives still holding writes from the group before write them out as they would
        // have: when nothing else waits, or first when their buffers are pressed.
        for d in 0..self.w.disks.len() {
            if self.w.disks[d]
                .wcache
                .as_ref()
                .is_some_and(|wc| !wc.held.is_empty())
            {
                self.at(start, Ev::DiskDone(d as u32 | 0x8000_0000));
            }
        }
        // Write-back caches, the controllers' and the drives': while one fills, the rate is
        // about to change.
        let total_cache: u64 = self
            .w
            .ctrls
            .iter()
            .filter(|c| c.write_back)
            .map(|c| c.cache_bytes)
            .sum::<u64>()
            + self
                .w
                .disks
                .iter()
                .filter_map(|d| d.wcache.as_ref().map(|wc| wc.capacity))
                .sum::<u64>()
            + self.ssd_buffers(|f, _| f.buffer_bytes())
            + self
                .w
                .page_cache
                .as_ref()
                .map_or(0, |pc| pc.cfg.limit * crate::pagecache::PAGE);
        let depth: u64 = jobs.iter().map(|j| j.depth as u64).sum();
        let mut interval_ios = conv.interval_ios.max(depth * 4);
        let mut completions = 0u64;
        // The next multiple of `interval_ios` (a division per completion was measurable).
        let mut next_interval = interval_ios;
        let mut iv_start = (start, 0u64, 0u64, self.slc_used()); // time, bytes, dirty, SLC
                                                                 // The flash drives' SLC cache in use at each interval start.
        let mut slc_hist: std::collections::VecDeque<u64> = Default::default();
        let mut rates: Vec<(f64, u64, u64)> = Vec::new(); // rate, dirty at start, dirty at end
                                                          // Per-job bytes at each interval start, to get each job's steady rate over the window.
        let mut iv_bytes: Vec<u64> = vec![0; jobs.len()];
        let mut snaps: std::collections::VecDeque<(u64, Vec<u64>)> =
            std::collections::VecDeque::new();
        let mut reason = "size";
        let mut any_runtime = false;
        while let Some((t, ev)) = self.next_event() {
            self.now = t;
            self.event_t = t;
            self.events += 1;
            // Every event but a command's completion is handled in its arm; a completion
            // (`IoDone`, or one a write's landing in the cache makes due next) below.
            let io = match ev {
                Ev::IoDone(io) => io,
                Ev::Landed(io) => {
                    if !self.landed(io) {
                        continue;
                    }
                    // Its completion, the next event, handled at once (as its own event).
                    self.events += 1;
                    io
                }
                Ev::AtCtrl(io) => {
                    self.at_ctrl(io);
                    continue;
                }
                Ev::DiskDone(d) => {
                    self.disk_done(d);
                    if std::mem::take(&mut self.flush_check) {
                        self.settle_flushes(jobs);
                    }
                    continue;
                }
                Ev::Join(j) => {
                    self.join_done(j);
                    continue;
                }
                Ev::Issue(j) => {
                    jobs[j as usize].wake_armed = false;
                    self.issue(jobs, j);
                    if jobs[j as usize].finished() && jobs.iter().all(|j| j.finished()) {
                        break;
                    }
                    continue;
                }
                Ev::Seg(x) => {
                    self.segment(x);
                    continue;
                }
                Ev::Flusher => {
                    self.flusher();
                    continue;
                }
                Ev::Unplug(a) => {
                    self.unplug_timer(a as usize);
                    continue;
                }
                Ev::Rebuild(a) => {
                    self.rebuild_wake(a as usize);
                    continue;
                }
                Ev::SteadyCheck => {
                    if self.steady_check(jobs, start) {
                        break;
                    }
                    continue;
                }
                Ev::SyncCheck => {
                    self.sync_check_armed = false;
                    if self.flushing > 0 {
                        self.settle_flushes(jobs);
                    }
                    if self.synced_jobs(jobs) {
                        break;
                    }
                    continue;
                }
            };
            let ioc = self.ios[io as usize];
            self.free_ios.push(io);
            if ioc.job >= CACHE_JOB {
                if ioc.job == u32::MAX {
                    let m = ioc.lun as usize;
                    self.member_pending[m] -= 1;
                    self.member_head[m] = ioc.offset + ioc.len;
                    self.signal(ioc.parent, self.now);
                } else {
                    self.cache_io_done(ioc);
                    if ioc.write && self.flushing > 0 {
                        self.settle_flushes(jobs);
                    }
                    if ioc.write && self.synced_jobs(jobs) {
                        break;
                    }
                }
                continue;
            }
            if ioc.check {
                self.read_back_done(jobs, &ioc);
                if jobs[ioc.job as usize].finished() && jobs.iter().all(|j| j.finished()) {
                    break;
                }
                continue;
            }
            let job = &mut jobs[ioc.job as usize];
            job.inflight -= 1;
            job.bytes_all += ioc.len;
            job.ios_all += 1;
            if job.latency_watch && job.latency_done(self.now, self.now - ioc.issued) {
                self.latency_stopped = true;
            }
            // (0 read, 1 write, 2 trim: the results' and logs' direction codes.)
            let d = if ioc.trim { 2 } else { usize::from(ioc.write) };
            if self.now >= job.ramp_end {
                let st = match d {
                    0 => &mut job.read,
                    1 => &mut job.write,
                    _ => &mut job.trim,
                };
                st.io_bytes += ioc.len;
                st.total_ios += 1;
                let lat = self.now - ioc.issued;
                // (`lat` equals `clat` here: it is copied once the run ends.)
                st.clat.record(lat);
                job.bytes_done += ioc.len;
                let t = self.now - job.ramp_end;
                job.sampler.record(t, d, ioc.len, lat);
                if let Some(l) = job.log.as_mut() {
                    l.record(t, d as u8, ioc.len, ioc.offset, lat, lat);
                }
            }
            if ioc.write {
                if let Some(rb) = job.readback.as_mut() {
                    let file = job.luns.iter().position(|&l| l == ioc.lun).unwrap_or(0);
                    rb.written((file as u32, ioc.offset, ioc.len));
                }
            }
            if let Some(p) = job.pacer.as_mut() {
                let dir = [Dir::Read, Dir::Write, Dir::Trim][d];
                p.completed(dir, ioc.len);
                if self.now >= job.ramp_end {
                    if let Err(e) = p.check_min_rate(self.now) {
                        // fio ends a job that misses its minimum rate, with EIO.
                        if job.error.is_none() {
                            job.error = Some(e);
                            job.errno = libc::EIO;
                        }
                        job.stopped = true;
                    }
                }
            }
            if job.drained() {
                self.start_sync(job);
            }
            if job.finished() {
                job.end = self.now;
                self.exit_others(jobs, ioc.job as usize);
            } else {
                self.issue(jobs, ioc.job);
            }
            completions += 1;
            let interval_done = completions == next_interval;
            if interval_done {
                next_interval += interval_ios;
            }
            if conv_enabled && interval_done && self.now > iv_start.0 {
                let ramp_done = jobs.iter().all(|j| self.now >= j.ramp_end);
                let bytes: u64 = jobs.iter().map(|j| j.bytes_done).sum();
                let dirty: u64 = self.w.ctrls.iter().map(|c| c.dirty).sum::<u64>()
                    + self
                        .w
                        .disks
                        .iter()
                        .filter_map(|d| d.wcache.as_ref().map(|wc| wc.bytes))
                        .sum::<u64>()
                    + self.ssd_buffers(|f, st| f.buffered(st, self.now))
                    + self
                        .w
                        .page_cache
                        .as_ref()
                        .map_or(0, |pc| pc.dirty_pages * crate::pagecache::PAGE);
                if ramp_done {
                    let rate = (bytes - iv_start.1) as f64 / (self.now - iv_start.0) as f64;
                    rates.push((rate, iv_start.2, dirty));
                    snaps.push_back((iv_start.0, iv_bytes.clone()));
                    slc_hist.push_back(iv_start.3);
                    if rates.len() > conv.window {
                        rates.remove(0);
                        snaps.pop_front();
                        slc_hist.pop_front();
                    }
                    // Bytes still to move if every job ran to its size.
                    let left: u64 = jobs
                        .iter()
                        .map(|j| j.target_bytes.map_or(0, |t| t.saturating_sub(j.bytes_all)))
                        .sum();
                    let left_ns = if rate > 0.0 { left as f64 / rate } else { 0.0 };
                    let span = (self.now - snaps[0].0) as f64;
                    // The jobs still running would end together at their window
                    // rates (within a tenth, or a window): the mix the window saw
                    // lasts to the end. Otherwise the first to end changes it (the
                    // others speed up), and a job a busier stream kept waiting has
                    // little or no rate of its own to extend: stopped here, it
                    // reported nothing, or its size at that crawl.
                    let all_moving = || {
                        let (mut first, mut last) = (f64::INFINITY, 0.0f64);
                        for (j, &b0) in jobs.iter().zip(&snaps[0].1) {
                            if j.finished() {
                                continue;
                            }
                            let moved = j.bytes_all.saturating_sub(b0);
                            let end = match (j.target_bytes, j.deadline) {
                                (Some(t), _) if moved > 0 => {
                                    t.saturating_sub(j.bytes_all) as f64 * span / moved as f64
                                }
                                (None, Some(d)) => d.saturating_sub(self.now) as f64,
                                _ => return false,
                            };
                            let end = match j.deadline {
                                Some(d) => end.min(d.saturating_sub(self.now) as f64),
                                None => end,
                            };
                            first = first.min(end);
                            last = last.max(end);
                        }
                        last - first <= 0.1 * last + span
                    };
                    // Each sequential job well below its bound where its region ends (the
                    // drives' inner zones, for one that runs inward): the rate lasts.
                    let media_holds = || {
                        jobs.iter()
                            .zip(&snaps[0].1)
                            .all(|(j, &b0)| match j.media_floor {
                                Some(floor) if !j.finished() => {
                                    j.bytes_all.saturating_sub(b0) as f64 / span
                                        <= MEDIA_MARGIN * floor
                                }
                                _ => true,
                            })
                    };
                    if rates.len() == conv.window
                        && self.steady(&rates, conv.tolerance, total_cache, span, left_ns)
                        && !self.slc_fills(jobs, slc_hist[0], span, left_ns)
                        && all_moving()
                        && media_holds()
                    {
                        reason = "converged";
                        let (t0, ref b0) = snaps[0];
                        let span = (self.now - t0) as f64;
                        for (k, j) in jobs.iter_mut().enumerate() {
                            if !j.finished() {
                                j.stopped = true;
                                j.end = self.now;
                                // Extend to the job's own end at its steady rate, as if it
                                // had run to its size (or runtime).
                                let rate =
                                    (j.bytes_all - b0.get(k).copied().unwrap_or(0)) as f64 / span;
                                if rate > 0.0 {
                                    // A job with no size to reach (time_based)
                                    // runs on to its deadline.
                                    let mut left_ns = match j.target_bytes {
                                        Some(tb) => tb.saturating_sub(j.bytes_all) as f64 / rate,
                                        None => f64::INFINITY,
                                    };
                                    let mut extra_bytes = j
                                        .target_bytes
                                        .map_or(0, |tb| tb.saturating_sub(j.bytes_all));
                                    if let Some(d) = j.deadline {
                                        let until = d.saturating_sub(self.now) as f64;
                                        if until < left_ns {
                                            left_ns = until;
                                            extra_bytes = (left_ns * rate) as u64;
                                        }
                                    }
                                    if !left_ns.is_finite() {
                                        left_ns = 0.0;
                                    }
                                    // end_fsync: its LUN's dirty data written at
                                    // the steady rate too.
                                    if j.end_fsync && j.buffered {
                                        let pc = self.w.page_cache.as_ref();
                                        let dirty = pc.map_or(0, |pc| {
                                            j.luns.iter().map(|&l| pc.lun_dirty(l)).sum::<u64>()
                                                * crate::pagecache::PAGE
                                        });
                                        left_ns += dirty as f64 / rate;
                                    }
                                    // Read-backs go on with the writes they follow:
                                    // out of the reads while the job's own requests are
                                    // extended, then extended by as much.
                                    let (rb_ios, rb_bytes) =
                                        j.readback.as_ref().map_or((0, 0), |r| (r.ios, r.bytes));
                                    j.read.total_ios -= rb_ios;
                                    j.read.io_bytes -= rb_bytes;
                                    // (The size, not rate × time, when the size ends
                                    // the job: the byte count stays exact.)
                                    let total =
                                        (j.read.io_bytes + j.write.io_bytes + j.trim.io_bytes)
                                            .max(1);
                                    // Syncs go on at the rate of the writes
                                    // they follow.
                                    if j.sync.total_ios > 0 && j.write.io_bytes > 0 {
                                        let add = extra_bytes as u128 * j.write.io_bytes as u128
                                            / total as u128;
                                        j.sync.total_ios += (add * j.sync.total_ios as u128
                                            / j.write.io_bytes as u128)
                                            as u64;
                                    }
                                    for st in [&mut j.read, &mut j.write, &mut j.trim] {
                                        if st.io_bytes > 0 {
                                            let add = (extra_bytes as u128 * st.io_bytes as u128
                                                / total as u128)
                                                as u64;
                                            let avg = st.io_bytes / st.total_ios.max(1);
                                            st.total_ios += add / avg.max(1);
                                            st.io_bytes += add;
                                        }
                                    }
                                    if let Some(r) = j.readback.as_mut().filter(|r| r.ios > 0) {
                                        let grow = (total + extra_bytes) as f64 / total as f64;
                                        r.ios = (r.ios as f64 * grow) as u64;
                                        r.bytes = (r.bytes as f64 * grow) as u64;
                                        r.spent_ns = (r.spent_ns as f64 * grow) as u64;
                                    }
                                    let (rb_ios, rb_bytes) =
                                        j.readback.as_ref().map_or((0, 0), |r| (r.ios, r.bytes));
                                    j.read.total_ios += rb_ios;
                                    j.read.io_bytes += rb_bytes;
                                    j.extrapolated_ns = left_ns as u64;
                                }
                            }
                        }
                        break;
                    }
                    if rates.len() == conv.window
                        && cv(rates.iter().map(|r| r.0)) > 2.0 * conv.tolerance
                    {
                        // The intervals are too short to tell a trend from their
                        // noise (random service times, writes waiting on full
                        // caches): judge longer ones.
                        interval_ios *= 2;
                        next_interval = completions + interval_ios;
                        rates.clear();
                        snaps.clear();
                        slc_hist.clear();
                    }
                }
                iv_start = (self.now, bytes, dirty, self.slc_used());
                iv_bytes = jobs.iter().map(|j| j.bytes_all).collect();
            }
            // Only starting and completing I/Os change whether every job is done
            // (and not while this one is still going).
            if jobs[ioc.job as usize].finished() && jobs.iter().all(|j| j.finished()) {
                break;
            }
        }
        for j in jobs.iter_mut() {
            if j.end == 0 {
                j.end = self.now;
            }
            if j.deadline.is_some_and(|d| j.end >= d) {
                any_runtime = true;
            }
            // A simulated command is submitted the moment it is issued: its total latency
            // is its completion latency.
            // (Copied into the histogram it has: no allocation.)
            j.read.lat.clone_from(&j.read.clat);
            j.write.lat.clone_from(&j.write.clat);
            j.trim.lat.clone_from(&j.trim.clat);
            // (The measured part: up to a read-back at the end, if one followed.)
            let counted_end = j.counted_end();
            // Samples and logs: up to where the simulation stopped, the read-back at the
            // end included (a converged run's extension is not simulated, so it has none).
            let sampled = j.end.max(counted_end).saturating_sub(j.ramp_end);
            let measured = counted_end.saturating_sub(j.ramp_end) + j.extrapolated_ns;
            j.read.runtime_ns = if j.read.total_ios > 0 { measured } else { 0 };
            if let Some(r) = j.readback.as_ref().filter(|r| r.ios > 0) {
                if j.read.total_ios == r.ios {
                    // Reads that are all read-backs: their rate is over the time spent
                    // reading back (fio's do_verify phase is the read runtime).
                    j.read.runtime_ns = r.spent_ns.max(1);
                }
            }
            j.write.runtime_ns = if j.write.total_ios > 0 { measured } else { 0 };
            j.trim.runtime_ns = if j.trim.total_ios > 0 { measured } else { 0 };
            // Samples of the part simulated, as the logs (whose averaged bandwidth and IOPS
            // lines they are).
            let sampler = std::mem::take(&mut j.sampler);
            [j.read.samples, j.write.samples, j.trim.samples] =
                sampler.finish_logged(sampled, j.log.as_deref_mut());
        }
        if reason != "converged" && any_runtime {
            reason = "runtime";
        }
        if std::mem::take(&mut self.exit_stopped) {
            reason = "exitall";
        }
        if std::mem::take(&mut self.steady_stopped) {
            reason = "steadystate";
        }
        if std::mem::take(&mut self.latency_stopped) {
            reason = "latency_target";
        }
        // The next group, if any, starts from a clean queue: see `between_groups`.
        self.group_ended = true;
        reason
    }

    /// Drop whatever the last group left in flight: the next group starts from a clean queue
    /// but the caches keep their contents (as a real system between jobs). Done when a next
    /// group starts, not when a group ends: after the last one nothing needs it (re-queueing
    /// every dirty stripe by age was a few percent of a random-write run).
    fn between_groups(&mut self) {
        self.pending.clear();
        self.up_streams.clear();
        self.due.clear();
        self.due_head = 0;
        let now = self.now;
        for d in self.w.disks.iter_mut() {
            d.in_flight.drop_at(now);
            d.queue.clear();
            // A drive keeps what its write cache holds, including a held write the media
            // was writing: it writes that one again.
            for (_, r) in d.active.drain(..) {
                if r.join == HELD {
                    d.wcache
                        .as_mut()
                        .expect("held writes only in a write cache")
                        .rehold(r);
                }
            }
        }
        for a in self.w.arrays.iter_mut() {
            a.drive_cmds = 0;
            a.landing.clear();
            a.rcache.retain(|_, f| matches!(f, Fill::Ready));
            a.destaging = 0;
            for d in a.dirty.values_mut() {
                d.destaging = false;
            }
            // Destages in flight were dropped from the age queue; queue every dirty stripe
            // again in age order.
            let mut by_age: Vec<(u64, u64)> = a.dirty.iter().map(|(s, d)| (d.born, s)).collect();
            by_age.sort_unstable();
            a.aged = by_age.into_iter().map(|(b, s)| (s, b)).collect();
        }
        for c in self.w.ctrls.iter_mut() {
            c.space_waiters.clear();
        }
        // (Rebuilds restart their dropped steps when the next group begins.)
        // (The page cache forgets its dropped requests when the next group starts.)
        self.throttled.clear();
        self.reading.clear();
        // (The member I/Os in flight were dropped with the events.)
        self.member_pending.fill(0);
        self.flusher_armed = false;
        self.sync_check_armed = false;
        self.flushing = 0;
        self.flush_check = false;
    }

    /// The window is steady: rates within `tol` of their mean, and the write caches neither
    /// moved much nor are heading for full (or empty) before the jobs would end, at the
    /// window's fill rate (else the rate is about to change).
    fn steady(
        &self,
        rates: &[(f64, u64, u64)],
        tol: f64,
        total_cache: u64,
        span_ns: f64,
        left_ns: f64,
    ) -> bool {
        let mean = rates.iter().map(|r| r.0).sum::<f64>() / rates.len() as f64;
        if mean <= 0.0 {
            return false;
        }
        // No trend (the two halves of the window agree within `tol`) and no interval far off
        // (within 5 × `tol`): random workloads jitter from interval to interval without drifting.
        let h = rates.len() / 2;
        let m1 = rates[..h].iter().map(|r| r.0).sum::<f64>() / h as f64;
        let m2 = rates[h..].iter().map(|r| r.0).sum::<f64>() / (rates.len() - h) as f64;
        if ((m2 - m1) / mean).abs() > tol
            || rates
                .iter()
                .any(|r| ((r.0 - mean) / mean).abs() > 5.0 * tol)
        {
            return false;
        }
        // Caches at equilibrium: dirty level moved by less than 1% of the cache over the window.
        let d0 = rates[0].1 as f64;
        let d1 = rates[rates.len() - 1].2 as f64;
        if (d1 - d0).abs() > 0.01 * total_cache as f64 + 1.0 {
            return false;
        }
        let growth = (d1 - d0) / span_ns.max(1.0);
        let projected = d1 + growth * left_ns;
        projected <= 0.95 * total_cache as f64 || total_cache == 0 || d1 >= 0.9 * total_cache as f64
    }

    /// `f` of each flash drive (its model and state), summed: e.g. what its write buffer
    /// holds, which like any write-back cache must stop filling before a rate has settled.
    fn ssd_buffers(&self, f: impl Fn(&crate::ssd::SsdModel, &crate::ssd::SsdState) -> u64) -> u64 {
        self.w
            .disks
            .iter()
            .filter_map(|d| {
                self.w.models[d.model]
                    .ssd
                    .as_ref()
                    .map(|m| f(m, &d.state.ssd))
            })
            .sum()
    }

    /// SLC cache in use, bytes, over every flash drive.
    fn slc_used(&self) -> u64 {
        self.w
            .disks
            .iter()
            .filter(|d| self.w.models[d.model].ssd.is_some())
            .map(|d| d.state.ssd.slc_used())
            .sum()
    }

    /// Whether the flash drives' SLC caches, filling as they did over the window (from
    /// `since` bytes, `span_ns` ago), would fill before the jobs end (`left_ns` at their rate,
    /// or their runtime): then writes slow to the direct rate, and the window's rate does not
    /// last. Full already, they stay so.
    fn slc_fills(&self, jobs: &[JobRt], since: u64, span_ns: f64, left_ns: f64) -> bool {
        let total: u64 = self
            .w
            .disks
            .iter()
            .filter_map(|d| self.w.models[d.model].ssd.as_ref())
            .map(|f| f.slc_bytes())
            .sum();
        if total == 0 {
            return false;
        }
        let now_used = self.slc_used();
        if now_used as f64 >= 0.999 * total as f64 {
            return false;
        }
        let runtime_left = jobs
            .iter()
            .filter(|j| !j.finished())
            .filter_map(|j| j.deadline.map(|d| d.saturating_sub(self.now) as f64))
            .fold(0.0f64, f64::max);
        let growth = now_used.saturating_sub(since) as f64 / span_ns.max(1.0);
        now_used as f64 + growth * left_ns.max(runtime_left) >= 0.999 * total as f64
    }

    fn issue(&mut self, jobs: &mut [JobRt], j: u32) {
        loop {
            let job = &mut jobs[j as usize];
            if job.draining && job.inflight <= job.refill_at {
                job.draining = false;
            }
            if job.inflight >= job.depth
                || job.draining
                || job.exhausted
                || job.stopped
                || job.paused()
            {
                // (A backlog check due goes before end_fsync; the end's check after it.)
                if job.inflight == 0 && job.readback.is_some() && self.read_back(job, j) {
                    return;
                }
                if job.drained() {
                    self.start_sync(job);
                    if job.readback.is_some() && self.read_back(job, j) {
                        return;
                    }
                }
                if job.finished() && job.end == 0 {
                    job.end = self.now;
                    self.exit_others(jobs, j as usize);
                    return;
                }
                if job.inflight == 0
                    && job.paused()
                    && !job.stopped
                    && !job.exhausted
                    && self.pause(job, j)
                {
                    continue;
                }
                return;
            }
            if job.deadline.is_some_and(|d| self.now >= d) {
                job.stopped = true;
                continue;
            }
            // (Its trim's completion, at this time, issues again.)
            if job.special && self.now < job.blocked_until {
                return;
            }
            // fio's flow: a job ahead of its share sleeps its flow_sleep once what it has
            // in flight is done, or without one waits for the flow's others to issue.
            if job.special {
                if let Some((_, weight, sleep_ns)) = job.flow {
                    let (_, issued, total) = self.flows[job.flow_slot];
                    if raidlab_workload::flow::ahead(job.flow_own, issued, weight, total) {
                        if sleep_ns > 0 {
                            job.flow_sleep = Some(sleep_ns);
                            continue;
                        }
                        job.flow_blocked = true;
                        return;
                    }
                }
            }
            let next = match job.held.take() {
                Some(r) => Some(r),
                None => match &job.pacer {
                    // A mixed job under a cap: a direction ahead of its rate yields (fio's
                    // rate_ddir).
                    Some(p) if p.switches() => {
                        let now = self.now;
                        job.stream.next_as(|d| p.rate_dir(d, now))
                    }
                    _ => job.stream.next(),
                },
            };
            let Some(req) = next else {
                // A trace's last sync, after its last request.
                if job.stream.sync_due(None).is_some() {
                    job.sync_wait = true;
                } else {
                    job.exhausted = true;
                }
                continue;
            };
            // (A pacer, a trace or an I/O log: none of them on the plain path.)
            if job.special {
                if job.stream.replays() {
                    if job.stream.sync_due(Some(&req)).is_some() {
                        // Held until what is in flight completes and the sync is done.
                        job.held = Some(req);
                        job.sync_wait = true;
                        continue;
                    }
                    if self.replay_waits(job, j, req) {
                        return;
                    }
                }
                if let Some(p) = job.pacer.as_mut() {
                    // A sync due, or the request's time not come: the job waits for what it
                    // has in flight first (fio quiesces before it syncs or sleeps).
                    if p.sync_due().is_some() {
                        job.held = Some(req);
                        job.sync_wait = true;
                        continue;
                    }
                    let t = p.issue_at(req.dir);
                    if t > self.now {
                        job.held = Some(req);
                        job.wait_until = Some(t);
                        continue;
                    }
                    p.issued(req.dir, req.len);
                    job.think = p.think_due(self.now).map(|t| t.total_ns());
                }
                if let Some(l) = job.iolog.as_mut() {
                    let act = raidlab_result::IoAct::of_direction(req.dir as usize);
                    l.record_io(
                        self.now.saturating_sub(job.first),
                        req.file,
                        act,
                        req.offset,
                        req.len,
                    );
                }
            }
            job.inflight += 1;
            job.draining = job.inflight >= job.depth;
            self.host_ios += 1;
            let job = if job.special && job.flow.is_some() {
                job.flow_own += 1;
                let slot = job.flow_slot;
                self.flows[slot].1 += 1;
                self.wake_flow(jobs, slot);
                &mut jobs[j as usize]
            } else {
                job
            };
            job.iodepth_level[raidlab_result::schema::iodepth_bucket(job.inflight)] += 1;
            let lun = job.luns[req.file as usize];
            if req.dir == Dir::Trim {
                let io = self.new_io(Io {
                    job: j,
                    lun,
                    offset: req.offset,
                    len: req.len,
                    write: false,
                    check: false,
                    trim: true,
                    issued: self.now,
                    parent: 0,
                    waiting: 0,
                });
                let done = self.host_trim(lun, req.offset, req.len);
                job.blocked_until = done;
                self.at(done, Ev::IoDone(io));
                continue;
            }
            let buffered = job.buffered;
            let io = self.new_io(Io {
                job: j,
                lun,
                offset: req.offset,
                len: req.len,
                write: req.dir == Dir::Write,
                check: false,
                trim: false,
                issued: self.now,
                parent: 0,
                waiting: 0,
            });
            if buffered {
                self.buffered(io);
            } else {
                if req.dir == Dir::Write && self.w.page_cache.is_some() {
                    self.direct_write_past_cache(io);
                }
                self.submit(io);
            }
            // The queue full again (the usual end: one completion, one request): another
            // turn of the loop would find it so, above its low mark, with something in
            // flight, and return having done nothing. Returned from here instead.
            let job = &jobs[j as usize];
            if job.inflight >= job.depth && job.inflight > job.refill_at {
                return;
            }
        }
    }

    /// With nothing of `job`'s in flight, start a verify check that is due: the backlog's,
    /// or, once its writes and end_fsync are done, the end's (its measured part ends here).
    /// Whether one started; a job that stopped (its runtime's end, exitall) checks nothing.
    #[cold]
    #[inline(never)]
    fn read_back(&mut self, job: &mut JobRt, j: u32) -> bool {
        use raidlab_workload::readback::{backlog_blocks, end_blocks};
        if job.inflight > 0 {
            return false;
        }
        if job.deadline.is_some_and(|d| self.now >= d) {
            job.stopped = true;
        }
        let Some(rb) = job.readback.as_mut() else {
            return false;
        };
        if job.stopped {
            rb.pending = false;
            return false;
        }
        rb.began = self.now;
        if rb.pending {
            rb.blocks = backlog_blocks(&rb.wrote, rb.batch);
            rb.wrote.clear();
        } else if rb.at_end
            && !rb.end_begun
            && !rb.wrote.is_empty()
            && job.exhausted
            && !job.syncing
            && (!job.end_fsync || job.synced)
        {
            rb.end_begun = true;
            rb.pending = true;
            rb.blocks = end_blocks(std::mem::take(&mut rb.wrote));
            job.measured_end = self.now;
        } else {
            return false;
        }
        rb.next = 0;
        self.read_back_batch(job, j);
        true
    }

    /// Issue the next batch of the check under way: up to the job's depth of reads, each
    /// down the job's path as its own reads go.
    fn read_back_batch(&mut self, job: &mut JobRt, j: u32) {
        let rb = job
            .readback
            .as_mut()
            .expect("a check under way is the job's");
        let end = (rb.next + job.depth.max(1) as usize).min(rb.blocks.len());
        debug_assert!(end > rb.next, "a batch reads something");
        rb.in_flight = (end - rb.next) as u32;
        job.inflight += rb.in_flight;
        for &(file, offset, len) in &rb.blocks[rb.next..end] {
            self.host_ios += 1;
            let io = self.new_io(Io {
                job: j,
                lun: job.luns[file as usize],
                offset,
                len,
                write: false,
                check: true,
                trim: false,
                issued: self.now,
                parent: 0,
                waiting: 0,
            });
            if job.buffered {
                self.buffered(io);
            } else {
                self.submit(io);
            }
        }
        rb.next = end;
    }

    /// A read-back of job `j` completed: the next batch goes once this one is done, and the
    /// job goes on (or ends) once the check is.
    #[cold]
    #[inline(never)]
    fn read_back_done(&mut self, jobs: &mut [JobRt], ioc: &Io) {
        let j = ioc.job;
        let job = &mut jobs[j as usize];
        job.inflight -= 1;
        let rb = job.readback.as_mut().expect("a read-back's job reads back");
        rb.in_flight -= 1;
        let counted = self.now >= job.ramp_end;
        if counted {
            // (As the job's reads: a simulated command's latency is its completion latency.)
            let lat = self.now - ioc.issued;
            job.read.io_bytes += ioc.len;
            job.read.total_ios += 1;
            job.read.clat.record(lat);
            rb.ios += 1;
            rb.bytes += ioc.len;
            // (Sampled and logged as fio samples and logs verify's reads.)
            let t = self.now - job.ramp_end;
            job.sampler.record_verify(t, 0, ioc.len, lat);
            if let Some(l) = job.log.as_mut() {
                l.record(t, 0, ioc.len, ioc.offset, lat, lat);
            }
        }
        if rb.in_flight > 0 {
            return;
        }
        if rb.next < rb.blocks.len() && !job.stopped {
            return self.read_back_batch(job, j);
        }
        if counted {
            rb.spent_ns += self.now - rb.began;
        }
        rb.blocks.clear();
        rb.next = 0;
        rb.pending = false;
        if job.finished() {
            if job.end == 0 {
                job.end = self.now;
            }
            self.exit_others(jobs, j as usize);
        } else {
            self.issue(jobs, j);
        }
    }

    /// A replayed trace's request `req`: held until its time, with the earlier ones still
    /// in flight (as fio replays). Whether it waits.
    #[cold]
    #[inline(never)]
    fn replay_waits(&mut self, job: &mut JobRt, j: u32, req: raidlab_workload::Request) -> bool {
        let Some(due) = job.stream.due_ns(req.seq) else {
            return false;
        };
        let t = job.first + due;
        if t <= self.now {
            return false;
        }
        job.held = Some(req);
        if !job.wake_armed {
            job.wake_armed = true;
            let wake = job.deadline.map_or(t, |d| t.min(d));
            self.at(wake, Ev::Issue(j));
        }
        true
    }

    /// A paused job has nothing in flight: sync, think or wait for its rate's time. Whether
    /// it may issue again at once.
    #[cold]
    #[inline(never)]
    fn pause(&mut self, job: &mut JobRt, j: u32) -> bool {
        if job.sync_wait {
            if job.flush.is_none() {
                self.start_flush(job, j);
            }
            return false;
        }
        // A wait never runs past the job's end: it wakes then and stops.
        let until = |t: u64| job.deadline.map_or(t, |d| t.min(d));
        let wake = if let Some(ns) = job.think.take() {
            let t = until(self.now.saturating_add(ns));
            if let Some(p) = job.pacer.as_mut() {
                p.thought(t, t - self.now);
            }
            t
        } else if let Some(t) = job.wait_until.take() {
            until(t)
        } else if let Some(ns) = job.flow_sleep.take() {
            until(self.now.saturating_add(ns))
        } else {
            return false;
        };
        if wake <= self.now {
            return true;
        }
        if !job.wake_armed {
            job.wake_armed = true;
            self.at(wake, Ev::Issue(j));
        }
        false
    }

    /// A job's periodic sync (fio's fsync/fdatasync) with nothing in flight: a flush
    /// command down its LUN's path (the path's per-command costs), which completes once
    /// the data the job's writes left in volatile caches is stable: the host's dirty pages
    /// of the LUN written back, then the write caches of the drives under it written out,
    /// except below a controller whose write-back cache has a battery (there the data is
    /// stable already, and the flush returns once the controller has the command).
    fn start_flush(&mut self, job: &mut JobRt, j: u32) {
        if job.iolog.is_some() {
            let data_only = job
                .pending_sync()
                .is_some_and(|(k, _)| k == raidlab_workload::SyncKind::Fdatasync);
            let at = self.now.saturating_sub(job.first);
            if let Some(l) = job.iolog.as_mut() {
                l.record_sync(at, data_only);
            }
        }
        // (A job over several LUNs flushes each, down its own path, at once.)
        let mut done = self.now;
        for &l in &job.luns {
            done = done.max(self.command_down(l as usize, self.now));
        }
        job.flush = Some((self.now, done));
        self.flushing += 1;
        if let Some(pc) = self.w.page_cache.as_mut().filter(|_| job.buffered) {
            let mut any = false;
            for &l in &job.luns {
                if pc.lun_dirty(l) > 0 {
                    pc.flush_lun(l);
                    any = true;
                }
            }
            if any {
                self.pump_writeback();
            }
        }
        if !self.finish_flush(job, j) {
            self.arm_sync_check();
        }
    }

    /// Complete `job`'s sync if its data is stable now: counted from its issue to now (or
    /// to when its command reached the end of its path, if later); the job goes on from
    /// then. Whether it completed.
    fn finish_flush(&mut self, job: &mut JobRt, j: u32) -> bool {
        let Some((from, path_done)) = job.flush else {
            return false;
        };
        let dirty = job.buffered && self.lun_dirty_any(&job.luns);
        if dirty || job.luns.iter().any(|&l| self.volatile_writes(l as usize)) {
            return false;
        }
        // Flash drives' buffers: the flush ends when their programs do (known already).
        let stable = job
            .luns
            .iter()
            .map(|&l| self.flash_stable_at(l as usize))
            .max()
            .unwrap_or(0);
        let done = path_done.max(self.now).max(stable);
        job.flush = None;
        job.sync_wait = false;
        self.flushing -= 1;
        if self.now >= job.ramp_end {
            job.sync.record(done - from);
        }
        match job.pending_sync() {
            Some((_, true)) => job.stream.synced(),
            _ => {
                if let Some(p) = job.pacer.as_mut() {
                    p.synced();
                }
            }
        }
        if !job.wake_armed {
            job.wake_armed = true;
            self.at(done, Ev::Issue(j));
        }
        true
    }

    /// Whether what was written to `lun` is not yet stable: held in a drive's write cache
    /// with no battery-backed controller cache above it.
    fn volatile_writes(&self, lun: usize) -> bool {
        let a = &self.w.arrays[self.w.luns[lun].array];
        match a.ctrl {
            Some(c) if self.w.ctrls[c].write_back => false,
            Some(_) => a.members.iter().any(|&d| {
                self.w.disks[d]
                    .wcache
                    .as_ref()
                    .is_some_and(|wc| wc.bytes > 0)
            }),
            None => a.members.iter().any(|&l| self.volatile_writes(l)),
        }
    }

    /// When the flash drives under `lun` have programmed what their buffers hold (0 if
    /// none do, or a battery-backed controller cache above them holds the data stable).
    fn flash_stable_at(&self, lun: usize) -> u64 {
        let a = &self.w.arrays[self.w.luns[lun].array];
        match a.ctrl {
            Some(c) if self.w.ctrls[c].write_back => 0,
            Some(_) => a
                .members
                .iter()
                .map(|&d| {
                    let disk = &self.w.disks[d];
                    self.w.models[disk.model]
                        .ssd
                        .as_ref()
                        .map_or(0, |f| f.stable_at(&disk.state.ssd))
                })
                .max()
                .unwrap_or(0),
            None => a
                .members
                .iter()
                .map(|&l| self.flash_stable_at(l))
                .max()
                .unwrap_or(0),
        }
    }

    /// Complete the syncs whose data is now stable ([`Engine::finish_flush`]); look
    /// again later for the others.
    #[cold]
    #[inline(never)]
    fn settle_flushes(&mut self, jobs: &mut [JobRt]) {
        let mut waiting = false;
        for (i, job) in jobs.iter_mut().enumerate() {
            if job.flush.is_some() && !self.finish_flush(job, i as u32) {
                waiting = true;
            }
        }
        if waiting {
            self.arm_sync_check();
        }
    }

    /// A host trim of `len` bytes at `offset` of `lun`, issued now: the page cache's clean
    /// pages of the range are dropped (as the kernel drops them for a discard; dirty ones
    /// stay to be written back, a simplification), and the trim goes down the LUN's path as
    /// a command without data. When it ends.
    #[cold]
    #[inline(never)]
    fn host_trim(&mut self, lun: u32, offset: u64, len: u64) -> u64 {
        if let Some(pc) = self.w.page_cache.as_mut() {
            pc.invalidate(lun, offset, len);
        }
        self.trim_lun(lun as usize, offset, len, self.now)
    }

    /// A trim through a LUN from time `t`: the per-command costs of its path (the host's,
    /// the links', the controller's for a write command: a trim is one of its commands) and
    /// then its array's. When the last piece ends.
    fn trim_lun(&mut self, lun: usize, offset: u64, len: u64, t: u64) -> u64 {
        let t = self.command_down(lun, t);
        let l = &self.w.luns[lun];
        self.trim_array(l.array, l.offset + offset, len, t)
    }

    /// A command without data (a flush, a trim) sent down `lun`'s path at `t`: each
    /// processor on the way takes it in turn (the host's, the links', the controller's, as
    /// for a write command). When it reaches the end of the path.
    fn command_down(&mut self, lun: usize, t: u64) -> u64 {
        let (l, res) = (&self.w.luns[lun], &mut self.w.res);
        let mut t = t;
        for &(r, ns) in &l.cmd_path {
            t = res[r].reserve(t, ns);
        }
        if let Some((cpu, ns)) = l.ctrl_cmd {
            t = res[cpu].reserve(t, ns[1]);
        }
        t
    }

    /// A trim of an array's logical range from time `t`: the member ranges md would discard
    /// (the shared planner's [`raidlab_geometry::trim_extents`]: every piece and copy, whole
    /// stripes of parity levels), each to its drive (a controller's array) or member LUN (a
    /// host array), all at once. A write-back controller first drops what its cache holds
    /// dirty of the range ([`Engine::drop_dirty`]). When the last ends.
    fn trim_array(&mut self, a: usize, offset: u64, len: u64, t: u64) -> u64 {
        self.drop_dirty(a, offset, len);
        let arr = &self.w.arrays[a];
        let missing = arr.geom.missing(offset, len);
        let extents = raidlab_geometry::trim_extents(arr.geom.geo(), offset, len, missing)
            .expect("a trim inside its array (the job's region is checked against its LUN)");
        let on_drives = arr.ctrl.is_some();
        let members = arr.members.clone();
        let mut done = t;
        for e in extents {
            let m = members[e.at.member as usize];
            let end = if on_drives {
                let disk = &mut self.w.disks[m];
                let flash = self.w.models[disk.model]
                    .ssd
                    .as_ref()
                    .expect("trims reach flash drives only (checked before the run)");
                t + flash.trim(&mut disk.state.ssd, t, e.at.offset, e.len)
            } else {
                self.trim_lun(m, e.at.offset, e.len, t)
            };
            done = done.max(end);
        }
        done
    }

    /// A trim through a controller: what its cache holds of the array's range
    /// `offset..offset + len` is dropped, as a write drops what the read cache holds of its
    /// stripes; with write-back, the dirty data there is never destaged, and its space is
    /// free for the writes waiting for room. Stripes being destaged are left to finish (with
    /// what landed on them meanwhile): a simplification, their destage already under way.
    fn drop_dirty(&mut self, ai: usize, offset: u64, len: u64) {
        let arr = &mut self.w.arrays[ai];
        let Some(ci) = arr.ctrl else {
            return;
        };
        let write_back = self.w.ctrls[ci].write_back;
        let sd = arr.geom.stripe_data_bytes();
        let end = offset + len;
        let (first, last) = (offset / sd, (end - 1) / sd);
        let cached = arr.rcache.len() + if write_back { arr.dirty.len() } else { 0 };
        if cached == 0 {
            return;
        }
        // The range's stripes, or where the cache holds fewer, the cached ones in it.
        let stripes: Vec<u64> = if last - first >= cached as u64 {
            let dirty = write_back.then(|| arr.dirty.iter().map(|(s, _)| s));
            let mut v: Vec<u64> = (arr.rcache.keys().copied())
                .chain(dirty.into_iter().flatten())
                .filter(|s| (first..=last).contains(s))
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        } else {
            (first..=last).collect()
        };
        let mut freed = 0u64;
        for s in stripes {
            let (a, b) = (offset.max(s * sd) - s * sd, end.min((s + 1) * sd) - s * sd);
            if !arr.rcache.is_empty() {
                arr.rcache.remove(&s);
            }
            if !write_back {
                continue;
            }
            let Some(d) = arr.dirty.get_mut(s).filter(|d| !d.destaging) else {
                continue;
            };
            let full = d.ranges.bytes() == sd;
            let gone = d.ranges.remove(a, b);
            let empty = d.ranges.bytes() == 0;
            freed += gone;
            if full && gone > 0 {
                // (Its entry in `full`, if still queued, is passed over as any stale one.)
                arr.full_dirty.remove(&s);
            }
            if empty {
                // (Its entry in `aged` goes stale: passed over when met.)
                arr.dirty.remove(s);
            }
        }
        if freed > 0 {
            let ctrl = &mut self.w.ctrls[ci];
            ctrl.dirty -= freed.min(ctrl.dirty);
            self.after_destage(ci, ai);
        }
    }

    /// A direct write on a host with a page cache: the cached pages it covers are stale.
    #[inline(never)]
    fn direct_write_past_cache(&mut self, io: u32) {
        let ioc = self.ios[io as usize];
        if let Some(pc) = self.w.page_cache.as_mut() {
            pc.invalidate(ioc.lun, ioc.offset, ioc.len);
        }
    }

    /// A buffered job's command: through the page cache, which may send block requests
    /// (its misses, read-ahead, the pages a partial write needs) and have it wait for them.
    #[inline(never)]
    fn buffered(&mut self, io: u32) {
        let ioc = self.ios[io as usize];
        if !ioc.write {
            return self.buffered_read(io, ioc.offset, ioc.offset + ioc.len);
        }
        let mut out = std::mem::take(&mut self.block_out);
        let pc = self
            .w
            .page_cache
            .as_mut()
            .expect("buffered jobs run with a page cache");
        let waits = pc.write_prepare(ioc.lun, ioc.offset, ioc.len, io, &mut out);
        for b in out.drain(..) {
            self.send_block(b);
        }
        self.block_out = out;
        self.ios[io as usize].waiting = waits;
        if waits == 0 {
            self.buffered_copy(io, ioc.len);
        }
    }

    /// Bytes `[from, end)` of a buffered read, through the cache one read-ahead step at a
    /// time (as the kernel reads a large request: a window, then the next), each step's data
    /// copied once it is in memory.
    fn buffered_read(&mut self, io: u32, mut from: u64, end: u64) {
        loop {
            let ioc = self.ios[io as usize];
            let mut out = std::mem::take(&mut self.block_out);
            let pc = self.w.page_cache.as_mut().expect("a page cache");
            let len = (end - from).min(pc.read_step(ioc.job as usize, ioc.lun));
            let waits = pc.read(ioc.job as usize, ioc.lun, from, len, io, &mut out);
            for b in out.drain(..) {
                self.send_block(b);
            }
            self.block_out = out;
            from += len;
            if waits > 0 {
                self.ios[io as usize].waiting = waits;
                self.reading.insert(io, (from, end, len));
                return;
            }
            if from == end {
                return self.buffered_copy(io, len);
            }
            self.copy(len);
        }
    }

    /// Copy `bytes` between the page cache and a program's buffer on a host CPU; when it ends.
    fn copy(&mut self, bytes: u64) -> u64 {
        let pc = self.w.page_cache.as_ref().expect("a page cache");
        let ns = ((bytes as f64 * pc.cfg.copy_ns_per_byte) as u64).max(1);
        self.w.res[self.w.host_cpu].reserve(self.now, ns)
    }

    /// Send one of the page cache's block requests down its LUN's path, as a direct command.
    fn send_block(&mut self, b: crate::pagecache::BlockIo) {
        let io = self.new_io(Io {
            job: CACHE_JOB,
            lun: b.lun,
            offset: b.offset,
            len: b.len,
            write: b.write,
            check: false,
            trim: false,
            issued: self.now,
            parent: b.id,
            waiting: 0,
        });
        // The block requests the cache sends at one moment come from one kernel context
        // (a reader's read-ahead, the flusher), one after another: the host's varying cost
        // per command does not let a later one reach the array before an earlier one, which
        // would have a drive serve the later part of a stream first and seek back.
        let floor = match self.block_sent {
            (at, t) if at == self.now => t,
            _ => 0,
        };
        let t = self.submit_after(io, floor);
        self.block_sent = (self.now, t);
    }

    /// A buffered command's pages are in memory: copy its data on a host CPU; a write's pages
    /// are dirty from then on, and its writer waits while dirty data is over the limit.
    fn buffered_copy(&mut self, io: u32, bytes: u64) {
        let ioc = self.ios[io as usize];
        let t = self.copy(bytes);
        if ioc.write {
            let pc = self.w.page_cache.as_mut().expect("a page cache");
            pc.write_commit(ioc.lun, ioc.offset, ioc.len, self.now);
            let over = pc.over_limit();
            if over {
                pc.stats.throttled += 1;
            }
            self.arm_flusher();
            self.pump_writeback();
            if over {
                self.throttled.push_back((io, t));
                return;
            }
        }
        self.at(t, Ev::IoDone(io));
    }

    /// Send the write-back requests that are due and fit in the queue.
    fn pump_writeback(&mut self) {
        while let Some(b) = self
            .w
            .page_cache
            .as_mut()
            .and_then(|pc| pc.next_writeback())
        {
            self.send_block(b);
        }
    }

    /// Queue the flusher's next wake-up, unless one is queued.
    fn arm_flusher(&mut self) {
        if !self.flusher_armed {
            self.flusher_armed = true;
            self.at(self.now + crate::pagecache::FLUSH_EVERY_NS, Ev::Flusher);
        }
    }

    fn flusher(&mut self) {
        self.flusher_armed = false;
        let pc = self.w.page_cache.as_mut().expect("a page cache");
        if pc.flusher_tick(self.now) {
            self.arm_flusher();
        }
        self.pump_writeback();
    }

    /// A job whose last request is done starts its end_fsync: its LUN's dirty pages are
    /// written back now, and it ends when none are left and the drives under the LUN have
    /// written out their write caches (the cache flush an fsync sends them).
    #[cold]
    #[inline(never)]
    fn start_sync(&mut self, job: &mut JobRt) {
        if !job.end_fsync || job.synced || job.syncing {
            return;
        }
        job.synced = true;
        if job.buffered && self.lun_dirty_any(&job.luns) {
            job.syncing = true;
            if let Some(pc) = self.w.page_cache.as_mut() {
                for &l in &job.luns {
                    if pc.lun_dirty(l) > 0 {
                        pc.flush_lun(l);
                    }
                }
            }
            self.pump_writeback();
        } else if job
            .luns
            .iter()
            .any(|&l| self.drives_hold_writes(l as usize))
        {
            job.syncing = true;
            self.arm_sync_check();
        }
    }

    /// Whether the host's page cache holds dirty pages of any of `luns`.
    fn lun_dirty_any(&self, luns: &[u32]) -> bool {
        self.w
            .page_cache
            .as_ref()
            .is_some_and(|pc| luns.iter().any(|&l| pc.lun_dirty(l) > 0))
    }

    fn arm_sync_check(&mut self) {
        if !self.sync_check_armed {
            self.sync_check_armed = true;
            self.at(self.now + SYNC_CHECK_NS, Ev::SyncCheck);
        }
    }

    /// Whether a drive under `lun` still holds writes in its volatile cache that an fsync
    /// waits for: none below a controller whose write-back cache has a battery (it answers
    /// the flush itself, its data stable already, as [`Engine::volatile_writes`] has it).
    fn drives_hold_writes(&self, lun: usize) -> bool {
        let a = &self.w.arrays[self.w.luns[lun].array];
        match a.ctrl {
            Some(c) if self.w.ctrls[c].write_back => false,
            Some(_) => a.members.iter().any(|&d| self.disk_holds_writes(d)),
            None => a.members.iter().any(|&l| self.drives_hold_writes(l)),
        }
    }

    /// Whether drive `d` holds written data only in its volatile cache: a hard disk's write
    /// cache, a flash drive's buffer with programs still going.
    fn disk_holds_writes(&self, d: usize) -> bool {
        let disk = &self.w.disks[d];
        disk.wcache.as_ref().is_some_and(|wc| wc.bytes > 0)
            || self.w.models[disk.model]
                .ssd
                .as_ref()
                .is_some_and(|f| f.holds_unwritten(&disk.state.ssd, self.now))
    }

    /// After a write-back: jobs whose end_fsync is done end now. Whether every job is done.
    #[inline(never)]
    fn synced_jobs(&mut self, jobs: &mut [JobRt]) -> bool {
        let mut any = false;
        let mut drives_busy = false;
        // Jobs whose sync is done and whose read-back at the end is due.
        let mut checks: Vec<usize> = Vec::new();
        for (k, j) in jobs.iter_mut().enumerate().filter(|(_, j)| j.syncing) {
            if self.lun_dirty_any(&j.luns) {
                continue;
            }
            // The page cache's part is done; the drives' caches must be empty too.
            if j.luns.iter().any(|&l| self.drives_hold_writes(l as usize)) {
                drives_busy = true;
                continue;
            }
            j.syncing = false;
            if j.finished() {
                j.end = self.now;
                any = true;
            } else {
                checks.push(k);
            }
        }
        if drives_busy {
            self.arm_sync_check();
        }
        for k in checks {
            if !self.read_back(&mut jobs[k], k as u32) {
                // (It stopped meanwhile: it checks nothing and ends now.)
                jobs[k].end = self.now;
                any = true;
            }
        }
        for k in 0..jobs.len() {
            if jobs[k].end == self.now && jobs[k].finished() {
                self.exit_others(jobs, k);
            }
        }
        any && jobs.iter().all(|j| j.finished())
    }

    /// A steady-state sample for every judge still judging (at `start` + whole seconds):
    /// the members of one that has settled stop as at their runtime's end. Whether every job
    /// has ended; if not, and a judge still judges, the next sample is queued.
    fn steady_check(&mut self, jobs: &mut [JobRt], start: u64) -> bool {
        let t = self.now.saturating_sub(start);
        let mut settled: Vec<usize> = Vec::new();
        for ss in &mut self.steady {
            if ss.judge.report().attained || ss.members.iter().all(|&m| jobs[m].finished()) {
                continue;
            }
            let bytes = ss.members.iter().map(|&m| jobs[m].bytes_all).sum();
            let ios = ss.members.iter().map(|&m| jobs[m].ios_all).sum();
            if ss.judge.sample(t, bytes, ios) {
                settled.extend_from_slice(&ss.members);
            }
        }
        for k in settled {
            if jobs[k].halt(self.now) {
                self.steady_stopped = true;
            }
        }
        if jobs.iter().all(JobRt::finished) {
            return true;
        }
        let judging = self.steady.iter().any(|ss| {
            !ss.judge.report().attained && ss.members.iter().any(|&m| !jobs[m].finished())
        });
        if judging {
            self.at(self.now + STEADY_EVERY_NS, Ev::SteadyCheck);
        }
        false
    }

    /// The jobs of flow `slot` waiting for its others to issue look again (now).
    fn wake_flow(&mut self, jobs: &mut [JobRt], slot: usize) {
        for (k, o) in jobs.iter_mut().enumerate() {
            if o.flow_blocked && o.flow_slot == slot {
                o.flow_blocked = false;
                if !o.wake_armed {
                    o.wake_armed = true;
                    self.at(self.now, Ev::Issue(k as u32));
                }
            }
        }
    }

    /// Job `i` starts at `start`: its times, until now relative to its group's start, are
    /// taken from there, and its first request is due once its program has started and
    /// opened its target (after its `startdelay`).
    fn start_job(&mut self, j: &mut JobRt, i: usize, start: u64) {
        j.waiting = false;
        // Its weight joins its flow's (a job waiting to start weighs nothing there).
        if let Some((_, weight, _)) = j.flow {
            self.flows[j.flow_slot].2 += u64::from(weight);
            j.flow_counted = true;
        }
        j.start = start;
        j.ramp_end += start;
        j.deadline = j.deadline.map(|d| start + d);
        j.first = start + self.w.host_job_start_ns + j.start_delay;
        if let Some(p) = j.pacer.as_mut() {
            p.begin(j.first);
        }
        if let Some(sr) = j.search.as_mut() {
            sr.begin(j.first, j.ios_all);
        }
        self.at(j.first, Ev::Issue(i as u32));
    }

    /// Job `k` has just ended: the jobs waiting for its job (fio's `wait_for`) start once
    /// every instance of it has ended; and under fio's `exitall` (or `exitall_on_error`,
    /// when it ended with an error) the jobs its `exit_what` names stop as at their
    /// runtime's end: they issue nothing more and end once their requests in flight are
    /// done (at once, with none).
    fn exit_others(&mut self, jobs: &mut [JobRt], k: usize) {
        // Its weight leaves its flow: the others' shares are of the rest.
        if let Some((_, weight, _)) = jobs[k].flow.take() {
            let slot = jobs[k].flow_slot;
            if std::mem::take(&mut jobs[k].flow_counted) {
                // (Its weight and its requests, as fio's flow_put.)
                self.flows[slot].2 -= u64::from(weight);
                self.flows[slot].1 -= jobs[k].flow_own;
            }
            self.wake_flow(jobs, slot);
        }
        let spec = jobs[k].spec;
        if jobs.iter().any(|j| j.waiting && j.waits_on == Some(spec))
            && jobs.iter().all(|j| j.spec != spec || j.finished())
        {
            let now = self.now;
            for (i, j) in jobs.iter_mut().enumerate() {
                // (One an exitall stopped while it waited does not start.)
                if j.waiting && j.waits_on == Some(spec) && !j.stopped {
                    self.start_job(j, i, now);
                }
            }
        }
        let Some(what) = jobs[k].exits[usize::from(jobs[k].error.is_some())] else {
            return;
        };
        let group = jobs[k].report_group;
        for j in jobs.iter_mut() {
            if what == ExitWhat::Group && j.report_group != group {
                continue;
            }
            if j.halt(self.now) {
                self.exit_stopped = true;
            }
        }
        if what == ExitWhat::All {
            self.exit_all = true;
        }
    }

    /// One of the page cache's block requests is done.
    #[inline(never)]
    fn cache_io_done(&mut self, ioc: Io) {
        let pc = self.w.page_cache.as_mut().expect("a page cache");
        if ioc.write {
            pc.writeback_done(ioc.parent);
            while !self
                .w
                .page_cache
                .as_ref()
                .expect("a page cache")
                .over_limit()
            {
                let Some((io, t)) = self.throttled.pop_front() else {
                    break;
                };
                self.at(t, Ev::IoDone(io));
            }
            self.pump_writeback();
        } else {
            for h in pc.read_done(ioc.parent) {
                let x = &mut self.ios[h as usize];
                x.waiting -= 1;
                if x.waiting > 0 {
                    continue;
                }
                if x.write {
                    let len = x.len;
                    self.buffered_copy(h, len);
                    continue;
                }
                let (next, end, len) = self.reading.remove(&h).expect("a read in progress");
                if next == end {
                    self.buffered_copy(h, len);
                } else {
                    self.copy(len);
                    self.buffered_read(h, next, end);
                }
            }
        }
    }

    /// Send a command from the host down its LUN's path.
    #[inline(always)]
    fn submit(&mut self, io: u32) {
        self.submit_after(io, 0);
    }

    /// [`Engine::submit`], the command reaching the controller (or host array) no sooner
    /// than `floor`; returns when it does.
    #[inline(always)]
    fn submit_after(&mut self, io: u32, floor: u64) -> u64 {
        let ioc = &self.ios[io as usize];
        let write = ioc.write;
        let lun = &self.w.luns[ioc.lun as usize];
        let res = &mut self.w.res;
        // The host's share varies per command (see `jitter`); the others' do not.
        let (&(cpu, ns), rest) = lun.cmd_path.split_first().expect("a host CPU");
        let ns = u64_of(f64_of(ns) * (0.5 + self.jitter.next_f64()));
        let mut t = res[cpu].reserve(self.now, ns);
        for &(r, ns) in rest {
            t = res[r].reserve(t, ns);
        }
        if let Some((cpu, ns)) = lun.ctrl_cmd {
            t = res[cpu].reserve(t, ns[write as usize]);
        }
        let t = t.max(floor);
        let arr = &self.w.arrays[lun.array];
        if write || !arr.dirty.is_empty() {
            // A write-back controller's dirty-map entries for the command's stripes, wanted
            // when a write's data lands or when a read asks whether the cache holds its data:
            // asked for now, while the command (and data) cross the path.
            let (sd, logical) = (arr.geom.stripe_data_bytes(), lun.offset + ioc.offset);
            // (An exclusive range: an inclusive one's iteration cost more than the prefetch.)
            for s in logical / sd..(logical + ioc.len - 1) / sd + 1 {
                arr.dirty.prefetch(s);
            }
        }
        self.at(t, Ev::AtCtrl(io));
        t
    }

    fn at_ctrl(&mut self, io: u32) {
        let ioc = self.ios[io as usize];
        let li = ioc.lun as usize;
        let ai = self.w.luns[li].array;
        let logical = self.w.luns[li].offset + ioc.offset;
        let Some(ci) = self.w.arrays[ai].ctrl else {
            return self.host_array(io, ai, logical);
        };
        if ioc.write {
            let ctrl = &mut self.w.ctrls[ci];
            if ctrl.write_back {
                if ctrl.dirty + ioc.len <= ctrl.cache_bytes && ctrl.space_waiters.is_empty() {
                    ctrl.dirty += ioc.len;
                    self.data_down(io);
                } else {
                    ctrl.space_waiters.push_back(io);
                    self.kick_destage(ai);
                }
            } else {
                self.w.arrays[ai].landing.push_back(io);
                self.data_down(io);
            }
            return;
        }
        // Reads.
        let read_ahead = self.w.ctrls[ci].read_ahead;
        let read_cache = self.read_cache_bytes(ai);
        let arr = &mut self.w.arrays[ai];
        arr.cache_reads += 1;
        let sd = arr.geom.stripe_data_bytes();
        let (s0, s1) = (logical / sd, (logical + ioc.len - 1) / sd);
        let cached = (s0..=s1).all(|s| arr.rcache.contains_key(&s) || arr.fully_dirty(s));
        // How far past this read the controller reads ahead: a continuing stream's window
        // (`stream_read_ahead`), the configured depth after a cache hit off any stream.
        let window = match arr.read_streams.iter().position(|&e| e == logical) {
            Some(i) => {
                arr.read_streams[i] = logical + ioc.len;
                let w = stream_read_ahead(arr.read_windows[i], ioc.len, read_ahead);
                arr.read_windows[i] = w;
                Some(w)
            }
            None => {
                let k = arr.next_stream;
                arr.read_streams[k] = logical + ioc.len;
                arr.read_windows[k] = 0;
                arr.next_stream = (k + 1) % arr.read_streams.len();
                cached.then_some(read_ahead)
            }
        };
        if let (true, Some(window)) = (read_ahead > 0, window) {
            // No further ahead than the read cache holds beside this read's own stripes: a
            // window past that would push the stripes read ahead out of the cache (first in,
            // first out) before the stream reaches them, and read each twice. A read of more
            // than that room keeps its one-request window, all of it in flight at once.
            let span = (s1 - s0 + 1) * sd;
            let room = read_cache.saturating_sub(span);
            let window = window.min(room.max(ioc.len));
            let ra_end = ((logical + ioc.len + window).min(arr.geom.capacity()) - 1) / sd;
            for s in s0..=ra_end.max(s1) {
                self.ensure_fill(ai, s);
            }
            let mut waiting = 0;
            for s in s0..=s1 {
                if let Some(Fill::Pending(w)) = self.w.arrays[ai].rcache.get_mut(&s) {
                    w.push(io);
                    waiting += 1;
                }
            }
            self.ios[io as usize].waiting = waiting;
            if waiting == 0 {
                self.w.arrays[ai].cache_read_hits += 1;
                self.data_up(io);
            } else {
                // What is already in the cache goes up now; the rest as its stripes arrive.
                let up = UpStream {
                    ready: 0,
                    next_stripe: s0,
                    parked: None,
                    started: false,
                };
                self.up_streams.insert(io, up);
                self.stream_up(io);
            }
            return;
        }
        // Data the cache holds dirty goes up from it (a read wholly of such data: one
        // that is partly is read from the drives whole).
        if self.w.arrays[ai].dirty_holds(logical, ioc.len) {
            self.w.arrays[ai].cache_read_hits += 1;
            return self.data_up(io);
        }
        let mut v = std::mem::take(&mut self.scratch);
        v.clear();
        self.ctrl_map_read(ai, logical, ioc.len, &mut v);
        let j = self.new_join(v.len() as u32, JoinKind::ReadUp(io));
        for m in &v {
            self.disk_submit(ai, *m, false, j);
        }
        self.scratch = v;
    }

    /// The member reads of `len` bytes at `logical` of controller array `ai`, into `v`: a
    /// mirror's go to the copies [`member_loads`] ranks first.
    #[inline(always)]
    fn ctrl_map_read(&mut self, ai: usize, logical: u64, len: u64, v: &mut Vec<MemberIo>) {
        let mut loads = std::mem::take(&mut self.loads);
        let mirror = member_loads(self.w, ai, logical, len, &mut loads);
        let arr = &mut self.w.arrays[ai];
        let by_load = mirror.then_some(loads.as_slice());
        arr.plans.map_read(&arr.geom, logical, len, by_load, v);
        self.loads = loads;
    }

    /// The bytes controller array `ai` keeps read (filled or being filled) stripes in, whole
    /// stripes: as many as half its controller's cache holds, and at least four.
    fn read_cache_bytes(&self, ai: usize) -> u64 {
        let arr = &self.w.arrays[ai];
        let sd = arr.geom.stripe_data_bytes();
        (self.w.ctrls[arr.ctrl.unwrap()].cache_bytes / 2 / sd).max(4) * sd
    }

    fn ensure_fill(&mut self, ai: usize, s: u64) {
        let arr = &mut self.w.arrays[ai];
        let sd = arr.geom.stripe_data_bytes();
        if arr.rcache.contains_key(&s) || arr.fully_dirty(s) || (s + 1) * sd > arr.geom.capacity() {
            return;
        }
        arr.rcache.insert(s, Fill::Pending(Vec::new()));
        arr.rfifo.push_back(s);
        let cap = self.read_cache_bytes(ai);
        let arr = &mut self.w.arrays[ai];
        while arr.rfifo.len() as u64 * sd > cap {
            let old = arr.rfifo.pop_front().unwrap();
            if matches!(arr.rcache.get(&old), Some(Fill::Ready)) {
                arr.rcache.remove(&old);
            } else {
                arr.rfifo.push_back(old);
                break;
            }
        }
        let mut v = std::mem::take(&mut self.scratch);
        v.clear();
        self.ctrl_map_read(ai, s * sd, sd, &mut v);
        let j = self.new_join(
            v.len() as u32,
            JoinKind::Fill {
                array: ai as u32,
                stripe: s,
            },
        );
        for m in &v {
            self.disk_submit(ai, *m, false, j);
        }
        self.scratch = v;
    }

    /// Data of a read travels from the controller to host memory.
    fn data_up(&mut self, io: u32) {
        self.start_xfer(io, false);
    }

    /// A read's data is all in from its drives: up to the host, from the controller's cache,
    /// or through a controller without one as the drives sent it ([`Engine::pass_up`]).
    #[inline(always)]
    fn read_up(&mut self, io: u32) {
        match self.w.luns[self.ios[io as usize].lun as usize].pass_through {
            Some(mi) => self.pass_up(io, mi),
            None => self.data_up(io),
        }
    }

    /// A read through a controller without a cache (a host adapter, AHCI, an NVMe drive's
    /// own controller), whose drives' model is `mi`: such a controller holds no data, so the
    /// data went on up the path as the drive sent it, not once all of it was in — the same
    /// bytes do not cross the drive's interface and then, again, its link (with a link as
    /// fast as the interface, twice the time). The drive sent them over the last
    /// `iface_ns(len)` of its command, which ended now (the last member's, for a read over
    /// several drives). Each segment that could have started up by now is booked from when
    /// the drive had sent its first byte, and ends no sooner than it had sent its last; the
    /// rest go up from there as any transfer does.
    #[inline(never)]
    fn pass_up(&mut self, io: u32, mi: usize) {
        let now = self.now;
        let x = self.ios[io as usize];
        let model = &self.w.models[mi];
        let t0 = now.saturating_sub(model.iface_ns(x.len)).max(x.issued);
        let sent = |b: u64| (t0 + model.iface_ns(b)).min(now);
        let l = &mut self.w.luns[x.lun as usize];
        let (path, costs, res) = (&l.data_path, &mut l.seg_costs[0], &mut self.w.res);
        let (mut done, mut next) = (0, t0);
        while done < x.len {
            let start = next.max(sent(done));
            if start >= now {
                break;
            }
            let seg = (x.len - done).min(crate::world::SEGMENT);
            next = costs
                .transfer(res, path, start, seg, false)
                .max(sent(done + seg));
            done += seg;
        }
        if done == x.len {
            return self.at(next.max(now), Ev::IoDone(io));
        }
        let id = self.new_xfer(Xfer {
            io,
            left: x.len - done,
            write: false,
        });
        self.next_segment(id, next.max(now));
    }

    /// Data of a write travels from host memory to the controller.
    fn data_down(&mut self, io: u32) {
        self.start_xfer(io, true);
    }

    #[inline(always)]
    fn start_xfer(&mut self, io: u32, write: bool) {
        let len = self.ios[io as usize].len;
        let room = self.up_room(io, len, write);
        // Most transfers are one segment long: they need no entry in `xfers`.
        let (left, next) = self.move_segment(io, len, write, room);
        if left == 0 {
            return;
        }
        let id = self.new_xfer(Xfer { io, left, write });
        self.next_segment(id, next);
    }

    /// A slot for transfer `x`, a freed one if any.
    fn new_xfer(&mut self, x: Xfer) -> u32 {
        if let Some(i) = self.free_xfers.pop() {
            self.xfers[i as usize] = x;
            i
        } else {
            self.xfers.push(x);
            (self.xfers.len() - 1) as u32
        }
    }

    fn segment(&mut self, id: u32) {
        let x = self.xfers[id as usize];
        let room = self.up_room(x.io, x.left, x.write);
        let (left, next) = self.move_segment(x.io, x.left, x.write, room);
        if left == 0 {
            self.free_xfers.push(id);
        } else {
            self.xfers[id as usize].left = left;
            self.next_segment(id, next);
        }
    }

    /// How many of the `left` bytes still to go of `io`'s data may move now: all, except
    /// for a read still waiting for stripes ([`UpStream`]), which moves what the cache holds.
    #[inline(always)]
    fn up_room(&self, io: u32, left: u64, write: bool) -> u64 {
        let x = &self.ios[io as usize];
        if write || x.waiting == 0 {
            return u64::MAX;
        }
        let up = &self.up_streams[&io];
        up.ready - (x.len - left)
    }

    /// Schedule transfer `id`'s next segment at `t`, or park it if a read has sent all that
    /// has arrived (the stripe it waits for resumes it).
    #[inline(always)]
    fn next_segment(&mut self, id: u32, t: u64) {
        let x = self.xfers[id as usize];
        if self.up_room(x.io, x.left, x.write) == 0 {
            let up = self.up_streams.get_mut(&x.io).expect("a read going up");
            up.parked = Some(id);
        } else {
            self.at(t, Ev::Seg(id));
        }
    }

    /// A cached read still waiting for stripes: count the leading ones that have arrived and
    /// start or resume its transfer if more may go up.
    fn stream_up(&mut self, io: u32) {
        let ioc = self.ios[io as usize];
        let lun = &self.w.luns[ioc.lun as usize];
        let (ai, logical) = (lun.array, lun.offset + ioc.offset);
        let arr = &self.w.arrays[ai];
        let sd = arr.geom.stripe_data_bytes();
        let up = self.up_streams.get_mut(&io).expect("a read going up");
        let mut s = up.next_stripe;
        while (s * sd) < logical + ioc.len && !matches!(arr.rcache.get(&s), Some(Fill::Pending(_)))
        {
            s += 1;
        }
        up.next_stripe = s;
        let ready = (s * sd).saturating_sub(logical).min(ioc.len);
        if ready == up.ready {
            return;
        }
        up.ready = ready;
        if let Some(id) = up.parked.take() {
            self.at(self.now, Ev::Seg(id));
        } else if !up.started {
            up.started = true;
            self.data_up(io);
        }
    }

    /// Move the next segment of the `left` bytes still to go of `io`'s data. Returns the bytes
    /// left after it and when the next segment may start; when none are left, the transfer's
    /// end (data landed in the cache, or in host memory) is scheduled instead.
    #[inline(always)]
    fn move_segment(&mut self, io: u32, left: u64, write: bool, room: u64) -> (u64, u64) {
        let lun = self.ios[io as usize].lun as usize;
        let l = &mut self.w.luns[lun];
        let burst = if write { l.write_burst } else { None };
        let pass = l.pass_through;
        let seg = left.min(burst.unwrap_or(crate::world::SEGMENT)).min(room);
        let (path, costs, res) = (&l.data_path, &mut l.seg_costs, &mut self.w.res);
        // Store and forward: a burst crosses to the controller, then into its cache; the next
        // burst follows on the link as soon as the link is done with this one.
        let (end, next) = match burst {
            Some(_) => {
                let (to, into) = path.split_at(path.len() - 1);
                let (c_to, c_into) = costs.split_at_mut(3);
                let arrived = c_to[2].transfer(res, to, self.now, seg, true);
                (c_into[0].transfer(res, into, arrived, seg, true), arrived)
            }
            None => {
                let e = costs[write as usize].transfer(res, path, self.now, seg, write);
                (e, e)
            }
        };
        let left = left - seg;
        if left == 0 {
            if !write {
                self.at(end, Ev::IoDone(io));
            } else if let Some(mi) = pass {
                // Through a controller that holds no data, the drive takes a write's data as
                // it arrives: its command (whose service takes the data in over its
                // interface) starts once the rest can come no faster than the link brings it.
                let len = self.ios[io as usize].len;
                let t = end.saturating_sub(self.w.models[mi].iface_ns(len));
                self.at(t.max(self.now), Ev::Landed(io));
            } else {
                self.at(end, Ev::Landed(io));
            }
        }
        (left, next)
    }

    /// A write's data has landed in the controller. Returns whether its completion is due
    /// next and left to the caller (see [`Engine::run`]).
    fn landed(&mut self, io: u32) -> bool {
        let ioc = self.ios[io as usize];
        let lun = &self.w.luns[ioc.lun as usize];
        let (ai, logical) = (lun.array, lun.offset + ioc.offset);
        let arr = &mut self.w.arrays[ai];
        let ci = arr.ctrl.unwrap();
        let sd = arr.geom.stripe_data_bytes();
        let ctrl = &mut self.w.ctrls[ci];
        if ctrl.write_back {
            let mut pos = logical;
            let end = logical + ioc.len;
            let mut overlap = 0;
            while pos < end {
                let s = pos / sd;
                let e = end.min((s + 1) * sd);
                if !arr.rcache.is_empty() {
                    arr.rcache.remove(&s);
                }
                let d = arr.dirty_mut(s);
                let (a, b) = (pos - s * sd, e - s * sd);
                if d.destaging {
                    add_range(arr.redirty.entry(s).or_default(), a, b);
                } else {
                    let added = d.ranges.add(a, b);
                    overlap += (b - a) - added;
                    if d.ranges.bytes() == sd {
                        arr.full.push_back(s);
                        arr.full_dirty.insert(s);
                    }
                }
                pos = e;
            }
            // Rewritten bytes did not need new space.
            ctrl.dirty -= overlap;
            let destage = may_destage(arr, ctrl);
            // The write completes now. With nothing else due now, its completion is the next
            // event whatever the destages below schedule (all later in (time, seq) order):
            // the caller handles it at once instead of queueing it.
            let next = self.due.is_empty() && self.pending.peek().is_none_or(|p| p.t > self.now);
            if next {
                self.seq += 1; // (its place in the scheduling order)
            } else {
                self.at(self.now, Ev::IoDone(io));
            }
            if destage {
                self.start_destages(ai);
            }
            return next;
        }
        // Write-through: in the order the controller took the commands.
        if self.w.arrays[ai].landing.front() != Some(&io) {
            debug_assert!(self.w.arrays[ai].landing.contains(&io));
            self.ios[io as usize].waiting = 1;
            return false;
        }
        self.w.arrays[ai].landing.pop_front();
        self.write_through(io, ai, logical);
        while let Some(&next) = self.w.arrays[ai].landing.front() {
            if self.ios[next as usize].waiting == 0 {
                break;
            }
            self.w.arrays[ai].landing.pop_front();
            self.ios[next as usize].waiting = 0;
            let n = self.ios[next as usize];
            let logical = self.w.luns[n.lun as usize].offset + n.offset;
            self.write_through(next, ai, logical);
        }
        false
    }

    /// A write-through write's data is in: plan every stripe now; reads, parity, writes; then
    /// complete.
    fn write_through(&mut self, io: u32, ai: usize, logical: u64) {
        let ioc = self.ios[io as usize];
        let sd = self.w.arrays[ai].geom.stripe_data_bytes();
        let (mut reads, mut writes) = (self.take_mios(), self.take_mios());
        let end = logical + ioc.len;
        let parity = self.w.arrays[ai].plan_write_extent(logical, ioc.len, &mut reads, &mut writes);
        // One command per member for what the request puts there contiguously, as a
        // controller's firmware (and the block layer under md) joins them.
        merge_ios(&mut reads, &mut self.sort_tmp);
        merge_ios(&mut writes, &mut self.sort_tmp);
        let rcache = &mut self.w.arrays[ai].rcache;
        for s in logical / sd..=(end - 1) / sd {
            rcache.remove(&s);
        }
        if reads.is_empty() {
            self.through_writes(io, ai, writes, parity);
        } else {
            let j = self.new_join(
                reads.len() as u32,
                JoinKind::Through1 { io, writes, parity },
            );
            for &m in &reads {
                self.disk_submit(ai, m, false, j);
            }
        }
        self.put_mios(reads);
    }

    fn through_writes(&mut self, io: u32, ai: usize, writes: Vec<MemberIo>, parity: u64) {
        let t = self.parity_time(ai, parity);
        let j = self.new_join(writes.len() as u32, JoinKind::Complete(io));
        self.joins[j as usize].ready = t;
        for &m in &writes {
            self.disk_submit_at(ai, m, true, j, t);
        }
        self.put_mios(writes);
    }

    fn parity_time(&mut self, ai: usize, bytes: u64) -> u64 {
        if bytes == 0 {
            return self.now;
        }
        let p = match self.w.arrays[ai].ctrl {
            Some(c) => self.w.ctrls[c].parity,
            None => self.w.host_parity,
        };
        match p {
            Some(r) => {
                let d = (bytes as f64 * self.w.res[r].ns_per_byte[1]) as u64;
                self.w.res[r].reserve(self.now, d)
            }
            None => self.now,
        }
    }

    /// Start destages of array `ai`'s dirty stripes, as many as its controller allows now.
    #[inline(always)]
    fn kick_destage(&mut self, ai: usize) {
        let arr = &self.w.arrays[ai];
        if may_destage(arr, &self.w.ctrls[arr.ctrl.unwrap()]) {
            self.start_destages(ai);
        }
    }

    fn start_destages(&mut self, ai: usize) {
        let ci = self.w.arrays[ai].ctrl.unwrap();
        loop {
            let depth = self.w.ctrls[ci].destage_depth;
            let arr = &self.w.arrays[ai];
            if arr.destaging >= depth {
                return;
            }
            let ctrl = &self.w.ctrls[ci];
            let pressure = destage_pressure(ctrl);
            if ctrl.lazy_destage && !pressure {
                return;
            }
            // The controller feeds the drives up to their command queue depth and no more:
            // with every member's queue full, another destage would only wait in the
            // controller.
            debug_assert_eq!(
                arr.drive_cmds,
                arr.members
                    .iter()
                    .map(|&d| {
                        let disk = &self.w.disks[d];
                        disk.queue.len()
                            + disk.active.iter().filter(|(_, r)| r.join != HELD).count()
                    })
                    .sum::<usize>()
            );
            if arr.destaging > 0 && arr.drive_cmds >= arr.drive_room {
                return;
            }
            let arr = &mut self.w.arrays[ai];
            let mut pick = None;
            while let Some(s) = arr.full.pop_front() {
                if arr.dirty.get(s).is_some_and(|d| !d.destaging) {
                    pick = Some(s);
                    break;
                }
            }
            if pick.is_none() && pressure {
                // Oldest first (a write-back cache's LRU order). Taking the lowest address
                // instead starves the high end of the array: its stripes pile up in the
                // cache until they are contiguous and destage almost sequentially, which no
                // controller's random-write rate shows.
                pick = arr.oldest_dirty();
            }
            let Some(s) = pick else { return };
            // Coalesce the dirty stripes that follow into one destage: their member writes
            // join into longer ones (what a controller's write cache does with neighbours).
            let mut stripes = self.take_stripes();
            let (mut reads, mut writes, mut parity) = (self.take_mios(), self.take_mios(), 0);
            let mut x = s;
            let coalesce = self.w.ctrls[ci].destage_coalesce as usize;
            let arr = &mut self.w.arrays[ai];
            while stripes.len() < coalesce {
                let Some(d) = arr.dirty.get_mut(x) else {
                    break;
                };
                if d.destaging {
                    break;
                }
                d.destaging = true;
                self.range_tmp.clear();
                self.range_tmp.extend(d.ranges.iter());
                parity +=
                    arr.plans
                        .stripe_write(&arr.geom, x, &self.range_tmp, &mut reads, &mut writes);
                stripes.push((x, d.ranges.bytes()));
                x += 1;
            }
            merge_ios(&mut reads, &mut self.sort_tmp);
            merge_ios(&mut writes, &mut self.sort_tmp);
            arr.destaging += 1;
            if reads.is_empty() {
                self.put_mios(reads);
                self.destage_writes(ai, stripes, writes, parity);
            } else {
                let j = self.new_join(
                    reads.len() as u32,
                    JoinKind::Destage1 {
                        array: ai as u32,
                        stripes,
                        writes,
                        parity,
                    },
                );
                for &m in &reads {
                    self.disk_submit(ai, m, false, j);
                }
                self.put_mios(reads);
            }
        }
    }

    fn destage_writes(
        &mut self,
        ai: usize,
        stripes: Vec<(u64, u64)>,
        writes: Vec<MemberIo>,
        parity: u64,
    ) {
        let t = self.parity_time(ai, parity);
        let j = self.new_join(
            writes.len() as u32,
            JoinKind::Destage2 {
                array: ai as u32,
                stripes,
            },
        );
        self.joins[j as usize].ready = t;
        for &m in &writes {
            self.disk_submit_at(ai, m, true, j, t);
        }
        self.put_mios(writes);
    }

    fn destage_all_done(&mut self, ai: usize, stripes: Vec<(u64, u64)>) {
        self.w.arrays[ai].destaging -= 1;
        for &(s, bytes) in &stripes {
            self.destage_done(ai, s, bytes);
        }
        self.put_stripes(stripes);
        let ci = self.w.arrays[ai].ctrl.unwrap();
        self.after_destage(ci, ai);
    }

    fn destage_done(&mut self, ai: usize, s: u64, bytes: u64) {
        let ci = self.w.arrays[ai].ctrl.unwrap();
        let arr = &mut self.w.arrays[ai];
        let d = arr.dirty.remove(s).unwrap_or_default();
        if d.ranges.bytes() == arr.geom.stripe_data_bytes() {
            arr.full_dirty.remove(&s);
        }
        let mut freed = bytes;
        let redirty = if arr.redirty.is_empty() {
            None
        } else {
            arr.redirty.remove(&s)
        };
        if let Some(redirty) = redirty.filter(|r| !r.is_empty()) {
            let mut nd = Dirty::default();
            for &(a, b) in redirty.iter() {
                nd.ranges.add(a, b);
            }
            // Rewritten bytes stay in cache.
            freed = freed.saturating_sub(nd.ranges.bytes());
            if nd.ranges.bytes() == arr.geom.stripe_data_bytes() {
                arr.full.push_back(s);
                arr.full_dirty.insert(s);
            }
            nd.born = arr.note_dirty(s);
            arr.dirty.insert(s, nd);
        }
        let ctrl = &mut self.w.ctrls[ci];
        ctrl.dirty -= freed.min(ctrl.dirty);
    }

    fn after_destage(&mut self, ci: usize, ai: usize) {
        // Drain the rest of the waiters that fit, then keep destaging every array of this controller.
        loop {
            let ctrl = &mut self.w.ctrls[ci];
            let Some(&io) = ctrl.space_waiters.front() else {
                break;
            };
            let len = self.ios[io as usize].len;
            if ctrl.dirty + len > ctrl.cache_bytes {
                break;
            }
            ctrl.dirty += len;
            ctrl.space_waiters.pop_front();
            self.data_down(io);
        }
        self.kick_destage(ai);
        let others: Vec<usize> = self.w.ctrls[ci]
            .arrays
            .iter()
            .copied()
            .filter(|&a| a != ai)
            .collect();
        for a in others {
            self.kick_destage(a);
        }
    }

    fn host_array(&mut self, io: u32, ai: usize, logical: u64) {
        let ioc = self.ios[io as usize];
        if !ioc.write {
            let mut v = self.take_mios();
            let mut loads = std::mem::take(&mut self.loads);
            let mirror = self.host_mirror_loads(ai, logical, ioc.len, &mut loads);
            let arr = &mut self.w.arrays[ai];
            let by_load = mirror.then_some(loads.as_slice());
            arr.plans
                .map_read(&arr.geom, logical, ioc.len, by_load, &mut v);
            self.loads = loads;
            if arr.geom.level == Level::Raid1 {
                if let Some(m) = v.last() {
                    self.mirror_next[ai] = (logical + ioc.len, m.member);
                }
            }
            let j = self.new_join(v.len() as u32, JoinKind::Complete(io));
            self.member_ios(ai, &v, false, j, self.now);
            self.put_mios(v);
            return;
        }
        if let Some(sc) = self.w.arrays[ai].stripe_cache.as_mut() {
            // md: through the stripe cache, done once every piece is written.
            self.ios[io as usize].waiting = sc.pieces(logical, logical + ioc.len);
            let mut ready = std::mem::take(&mut self.stripes_ready);
            sc.admit(io, logical, logical + ioc.len, self.now, &mut ready);
            if ioc.job != CACHE_JOB && ioc.job != u32::MAX {
                // A job's own (direct) write: the task that submits it finishes its plug as
                // the submission returns (fio submits one I/O a call unless told to batch;
                // Linux's direct I/O unplugs before it waits), and the unplug lets md take
                // its delayed stripes then, not at the queue's timer. Write-back from the
                // page cache and an upper md's requests keep to the timer.
                sc.unplug(&mut ready);
            }
            return self.start_stripes(ai, ready);
        }
        let (mut reads, mut writes) = (self.take_mios(), self.take_mios());
        let parity = self.w.arrays[ai].plan_write_extent(logical, ioc.len, &mut reads, &mut writes);
        merge_ios(&mut reads, &mut self.sort_tmp);
        merge_ios(&mut writes, &mut self.sort_tmp);
        if reads.is_empty() {
            self.host_writes(ai, writes, parity, JoinKind::Complete(io));
        } else {
            let j = self.new_join(
                reads.len() as u32,
                JoinKind::Through1 { io, writes, parity },
            );
            self.member_ios(ai, &reads, false, j, self.now);
        }
        self.put_mios(reads);
    }

    /// For a read at `logical` of host array `ai`, if a mirror, each member's rank under md's
    /// read balancing (drivers/md/raid10.c and raid1.c `read_balance` of the seeds' kernels,
    /// 2.6.2x–3x): a copy on a member with no member I/O pending is taken as it is met
    /// (ranked alike: the planner meets the copies from the one its layout rotation names);
    /// if none is idle, the one whose last member I/O ended nearest the data. RAID 1 first
    /// keeps a read that goes on from where the last read sent ended on the member that one
    /// went to, as raid1.c does for sequential reads. md counts a member busy from when it
    /// sends a request, not from when the drive has it, so a burst of reads (read-ahead, a
    /// deep queue) spreads over the copies.
    fn host_mirror_loads(&self, ai: usize, logical: u64, len: u64, out: &mut Vec<u64>) -> bool {
        let arr = &self.w.arrays[ai];
        if !matches!(arr.geom.level, Level::Raid1 | Level::Raid10) {
            return false;
        }
        let target = mirror_target(arr, logical, len);
        let (next, last) = self.mirror_next[ai];
        let sequential = arr.geom.level == Level::Raid1 && logical == next && next > 0;
        out.clear();
        out.extend(arr.members.iter().enumerate().map(|(m, &lun)| {
            if sequential && m as u32 == last {
                0
            } else if self.member_pending[lun] == 0 {
                1
            } else {
                2 + self.member_head[lun].abs_diff(target).min(1 << 60)
            }
        }));
        true
    }

    /// Host parity array `ai`'s unplug timer: its delayed stripes start, unless some are
    /// pre-reading.
    fn unplug_timer(&mut self, ai: usize) {
        let sc = self.w.arrays[ai]
            .stripe_cache
            .as_mut()
            .expect("a stripe cache");
        sc.timer = false;
        let mut ready = std::mem::take(&mut self.stripes_ready);
        sc.unplug(&mut ready);
        self.start_stripes(ai, ready);
    }

    /// Start the operations of host parity array `ai`'s stripes in `ready`, as one batch: the
    /// stripes that need no pre-read write together, those that do read together and then
    /// write together, each member's pieces joined where they meet (as the block layer merges
    /// the requests md sends while the queue is plugged). Then arm the array's unplug timer if
    /// stripes are left delayed.
    fn start_stripes(&mut self, ai: usize, mut ready: Vec<u64>) {
        let (mut reads, mut writes) = (self.take_mios(), self.take_mios());
        let (mut r_reads, mut r_writes) = (self.take_mios(), self.take_mios());
        let (mut w_stripes, mut r_stripes) = (Vec::new(), Vec::new());
        let (mut w_parity, mut r_parity) = (0, 0);
        for &s in &ready {
            let arr = &mut self.w.arrays[ai];
            let sc = arr.stripe_cache.as_mut().expect("a stripe cache");
            let sc_chunk = sc.chunk();
            let Some(op) = sc.take(s, self.now) else {
                continue;
            };
            let w0 = writes.len();
            let parity = arr
                .plans
                .stripe_write(&arr.geom, s, &op.ranges, &mut reads, &mut writes);
            if reads.is_empty() {
                if sc_chunk > crate::stripecache::SLICE {
                    let mine: Vec<MemberIo> = writes.drain(w0..).collect();
                    self.stripe_slices(ai, s, mine, parity);
                    continue;
                }
                w_stripes.push(s);
                w_parity += parity;
            } else {
                arr.stripe_cache
                    .as_mut()
                    .expect("a stripe cache")
                    .prereads(s);
                r_stripes.push(s);
                r_parity += parity;
                r_reads.append(&mut reads);
                r_writes.extend(writes.drain(w0..));
            }
        }
        ready.clear();
        self.stripes_ready = ready;
        if !w_stripes.is_empty() {
            merge_ios(&mut writes, &mut self.sort_tmp);
            let kind = JoinKind::StripeDone {
                array: ai as u32,
                stripes: w_stripes,
            };
            self.host_writes(ai, writes, w_parity, kind);
        } else {
            self.put_mios(writes);
        }
        self.put_mios(reads);
        if !r_stripes.is_empty() {
            merge_ios(&mut r_reads, &mut self.sort_tmp);
            merge_ios(&mut r_writes, &mut self.sort_tmp);
            let j = self.new_join(
                r_reads.len() as u32,
                JoinKind::StripeRead {
                    array: ai as u32,
                    stripes: r_stripes,
                    writes: r_writes,
                    parity: r_parity,
                },
            );
            self.member_ios(ai, &r_reads, false, j, self.now);
        } else {
            self.put_mios(r_writes);
        }
        self.put_mios(r_reads);
        let sc = self.w.arrays[ai]
            .stripe_cache
            .as_mut()
            .expect("a stripe cache");
        if !sc.timer && sc.has_delayed() {
            sc.timer = true;
            self.at(
                self.now + crate::stripecache::UNPLUG_NS,
                Ev::Unplug(ai as u32),
            );
        }
    }

    /// A host parity array's stripe whose chunks are larger than the largest member request
    /// writes its members in slices of rows, each its own requests (after its parity is
    /// computed): md frees a slice's stripe heads once the slice is written.
    fn stripe_slices(&mut self, ai: usize, s: u64, writes: Vec<MemberIo>, parity: u64) {
        use crate::stripecache::SLICE;
        let t = self.parity_time(ai, parity);
        let sc = self.w.arrays[ai]
            .stripe_cache
            .as_mut()
            .expect("a stripe cache");
        let chunk = sc.chunk();
        // A member's chunk of stripe `s` starts at `s` chunks into the member.
        let base = s * chunk;
        debug_assert!(writes
            .iter()
            .all(|m| m.offset >= base && m.offset + m.len <= base + chunk));
        let slices: Vec<(u64, u64, Vec<MemberIo>)> = (0..chunk.div_ceil(SLICE))
            .map(|i| (i * SLICE, ((i + 1) * SLICE).min(chunk)))
            .map(|(r0, r1)| {
                let part = writes
                    .iter()
                    .filter_map(|m| {
                        let a = m.offset.max(base + r0);
                        let b = (m.offset + m.len).min(base + r1);
                        // (`then`, not `then_some`: `b - a` only when a < b.)
                        (a < b).then(|| MemberIo {
                            member: m.member,
                            offset: a,
                            len: b - a,
                        })
                    })
                    .collect::<Vec<_>>();
                (r0, r1, part)
            })
            .filter(|(_, _, part)| !part.is_empty())
            .collect();
        sc.sliced(s, slices.len() as u32);
        for (r0, r1, part) in slices {
            let j = self.new_join(
                part.len() as u32,
                JoinKind::StripeSlice {
                    array: ai as u32,
                    stripe: s,
                    r0,
                    r1,
                },
            );
            self.member_ios(ai, &part, true, j, t);
        }
    }

    /// A slice of a host parity array's stripe is written: its stripe heads are free for
    /// writes waiting for room; the stripe is done with its last slice.
    fn stripe_slice_done(&mut self, ai: usize, s: u64, r0: u64, r1: u64) {
        let sc = self.w.arrays[ai]
            .stripe_cache
            .as_mut()
            .expect("a stripe cache");
        if sc.slice_done(s, r0, r1) {
            return self.stripe_done(ai, vec![s]);
        }
        let mut ready = std::mem::take(&mut self.stripes_ready);
        sc.resume(self.now, &mut ready);
        self.start_stripes(ai, ready);
    }

    /// A batch of a host parity array's stripes is written: the host writes whose last piece
    /// they held are done; writes waiting for room go on.
    fn stripe_done(&mut self, ai: usize, stripes: Vec<u64>) {
        let sc = self.w.arrays[ai]
            .stripe_cache
            .as_mut()
            .expect("a stripe cache");
        let mut ready = std::mem::take(&mut self.stripes_ready);
        let mut writes = std::mem::take(&mut self.stripe_writers);
        let mut freed = false;
        for &s in &stripes {
            freed |= sc.done(s, self.now, &mut writes, &mut ready);
        }
        if freed {
            sc.resume(self.now, &mut ready);
        }
        for &io in &writes {
            let x = &mut self.ios[io as usize];
            x.waiting -= 1;
            if x.waiting == 0 {
                self.at(self.now, Ev::IoDone(io));
            }
        }
        writes.clear();
        self.stripe_writers = writes;
        self.start_stripes(ai, ready);
    }

    /// A degraded array's read whose member reads are in (join `j`): the failed members'
    /// data is computed from them first, and the read goes on once the parity engine has
    /// done so (the join comes back as [`JoinKind::Rebuilt`]). Whether it waits for that.
    #[cold]
    #[inline(never)]
    fn rebuild_first(&mut self, j: u32) -> bool {
        let kind = &mut self.joins[j as usize].kind;
        if let JoinKind::Rebuilt(k) = kind {
            let k = std::mem::replace(&mut **k, JoinKind::Complete(u32::MAX));
            *kind = k;
            return false;
        }
        let Some((ai, bytes)) = self.lost_data(&self.joins[j as usize].kind) else {
            return false;
        };
        let t = self.parity_time(ai, bytes);
        let k = std::mem::replace(
            &mut self.joins[j as usize].kind,
            JoinKind::Complete(u32::MAX),
        );
        self.free_joins.push(j);
        let again = self.new_join(1, JoinKind::Rebuilt(Box::new(k)));
        self.signal(again, t);
        true
    }

    /// For a read's join `k` on a degraded array: the array, and the parity bytes that
    /// rebuild what the read wants of its failed members (None if there are none).
    fn lost_data(&self, k: &JoinKind) -> Option<(usize, u64)> {
        let (ai, off, len) = match *k {
            JoinKind::ReadUp(io) | JoinKind::Complete(io) => {
                let x = &self.ios[io as usize];
                let lun = &self.w.luns[x.lun as usize];
                if x.write || self.w.arrays[lun.array].geom.failed.is_empty() {
                    return None;
                }
                (lun.array, lun.offset + x.offset, x.len)
            }
            JoinKind::Fill { array, stripe } => {
                let g = &self.w.arrays[array as usize].geom;
                if g.failed.is_empty() {
                    return None;
                }
                let sd = g.stripe_data_bytes();
                (array as usize, stripe * sd, sd)
            }
            _ => return None,
        };
        let bytes = self.w.arrays[ai].geom.reconstruct_bytes(off, len);
        (bytes > 0).then_some((ai, bytes))
    }

    /// Host array `ai` writes its members once the parity of `parity` bytes is computed; the
    /// writes signal a join of `kind` when done.
    fn host_writes(&mut self, ai: usize, writes: Vec<MemberIo>, parity: u64, kind: JoinKind) {
        let t = self.parity_time(ai, parity);
        let j = self.new_join(writes.len() as u32, kind);
        self.member_ios(ai, &writes, true, j, t);
        self.put_mios(writes);
    }

    /// Send host array `ai`'s member I/Os `ios` down their member LUNs at `t` (or now, if
    /// later), each signalling `join` when done.
    fn member_ios(&mut self, ai: usize, ios: &[MemberIo], write: bool, join: u32, t: u64) {
        let saved = self.now;
        self.now = t.max(saved);
        for &m in ios {
            let lun = self.w.arrays[ai].members[m.member as usize];
            self.member_pending[lun] += 1;
            self.member_sent[lun] += m.len;
            let io = self.new_io(Io {
                job: u32::MAX,
                lun: lun as u32,
                offset: m.offset,
                len: m.len,
                write,
                check: false,
                trim: false,
                issued: t,
                parent: join,
                waiting: 0,
            });
            self.submit(io);
        }
        self.now = saved;
    }

    fn join_done(&mut self, j: u32) {
        if self.w.degraded && self.rebuild_first(j) {
            return;
        }
        self.free_joins.push(j);
        let kind = std::mem::replace(
            &mut self.joins[j as usize].kind,
            JoinKind::Complete(u32::MAX),
        );
        // (The kinds that own nothing are forgotten as they are taken: no call to drop them.)
        match kind {
            JoinKind::ReadUp(io) => {
                std::mem::forget(kind);
                self.read_up(io)
            }
            JoinKind::Fill { array, stripe } => {
                let arr = &mut self.w.arrays[array as usize];
                if let Some(Fill::Pending(waiters)) = arr.rcache.insert(stripe, Fill::Ready) {
                    for io in waiters {
                        let x = &mut self.ios[io as usize];
                        x.waiting -= 1;
                        if x.waiting == 0 {
                            // Nothing left to wait for: the transfer runs on unlimited.
                            match self.up_streams.remove(&io) {
                                Some(UpStream {
                                    parked: Some(id), ..
                                }) => self.at(self.now, Ev::Seg(id)),
                                Some(UpStream { started: true, .. }) => {}
                                _ => self.data_up(io),
                            }
                        } else {
                            self.stream_up(io);
                        }
                    }
                }
            }
            JoinKind::Destage1 {
                array,
                stripes,
                writes,
                parity,
            } => self.destage_writes(array as usize, stripes, writes, parity),
            JoinKind::Destage2 { array, stripes } => self.destage_all_done(array as usize, stripes),
            JoinKind::Through1 { io, writes, parity } => {
                let ai = self.w.luns[self.ios[io as usize].lun as usize].array;
                if self.w.arrays[ai].ctrl.is_some() {
                    self.through_writes(io, ai, writes, parity)
                } else {
                    self.host_writes(ai, writes, parity, JoinKind::Complete(io))
                }
            }
            JoinKind::StripeRead {
                array,
                stripes,
                writes,
                parity,
            } => {
                let ai = array as usize;
                let kind = JoinKind::StripeDone { array, stripes };
                self.host_writes(ai, writes, parity, kind)
            }
            JoinKind::StripeDone { array, stripes } => self.stripe_done(array as usize, stripes),
            JoinKind::StripeSlice {
                array,
                stripe,
                r0,
                r1,
            } => self.stripe_slice_done(array as usize, stripe, r0, r1),
            JoinKind::Rebuilt(_) => unreachable!("a rebuilt read's own step is taken above"),
            JoinKind::RebuildRead {
                array,
                start,
                writes,
                parity,
            } => self.rebuild_writes(array as usize, start, writes, parity),
            JoinKind::RebuildWrite { array, start } => {
                self.rebuild_step_done(array as usize, start)
            }
            JoinKind::Complete(io) => {
                std::mem::forget(kind);
                let ioc = self.ios[io as usize];
                let ai = self.w.luns[ioc.lun as usize].array;
                if ioc.write || self.w.arrays[ai].ctrl.is_none() {
                    // Status (writes) or data already in host memory (host arrays).
                    self.at(self.now, Ev::IoDone(io));
                } else {
                    self.read_up(io);
                }
            }
        }
    }

    /// At a group's start: every rebuild under way issues again from its watermark (what
    /// was in flight was dropped with the last group). Whether any is under way.
    #[cold]
    #[inline(never)]
    fn rebuild_begin(&mut self) -> bool {
        let mut any = false;
        for ai in 0..self.w.arrays.len() {
            let arr = &mut self.w.arrays[ai];
            let Some(rb) = arr.rebuild.as_mut().filter(|rb| rb.running()) else {
                continue;
            };
            any = true;
            rb.restart(arr.geom.rebuilt_below, self.now);
            if matches!(rb.pacer, crate::rebuild::Pacer::Md(_)) {
                let events = self.md_events(ai);
                let rb = self.w.arrays[ai].rebuild.as_mut().expect("a rebuild");
                let done = rb.done_bytes;
                if let crate::rebuild::Pacer::Md(m) = &mut rb.pacer {
                    m.start(self.now, done, &events);
                }
            }
            self.rebuild_pump(ai);
        }
        any
    }

    /// Each member of host array `ai`: the I/O md counts on it that is not its rebuild's
    /// (what its member LUN was sent, less the rebuild's own), bytes.
    fn md_events(&self, ai: usize) -> Vec<u64> {
        let arr = &self.w.arrays[ai];
        let rb = arr.rebuild.as_ref().expect("a rebuild");
        arr.members
            .iter()
            .zip(&rb.own)
            .map(|(&lun, &own)| self.member_sent[lun] - own)
            .collect()
    }

    /// A rebuild's pause is over.
    #[cold]
    #[inline(never)]
    fn rebuild_wake(&mut self, ai: usize) {
        if let Some(rb) = self.w.arrays[ai].rebuild.as_mut() {
            rb.wake_armed = false;
        }
        self.rebuild_pump(ai);
    }

    /// Issue array `ai`'s next rebuild steps, as many as its pacer lets go now.
    #[cold]
    #[inline(never)]
    fn rebuild_pump(&mut self, ai: usize) {
        use crate::rebuild::{MdCheck, Pacer};
        loop {
            let now = self.now;
            let arr = &mut self.w.arrays[ai];
            let rb = arr.rebuild.as_mut().expect("a rebuild");
            if !rb.running() || rb.next >= rb.end {
                return;
            }
            if rb.draining {
                if !rb.flight.is_empty() {
                    return; // (its last step in flight calls again)
                }
                rb.draining = false;
            }
            if now < rb.resume_at {
                if !rb.wake_armed {
                    rb.wake_armed = true;
                    let t = rb.resume_at;
                    self.at(t, Ev::Rebuild(ai as u32));
                }
                return;
            }
            if rb.recheck {
                rb.recheck = false;
                let events = self.md_events(ai);
                let rb = self.w.arrays[ai].rebuild.as_mut().expect("a rebuild");
                let done = rb.done_bytes;
                let Pacer::Md(m) = &mut rb.pacer else {
                    unreachable!("only md looks at its speed")
                };
                match m.check(now, done, &events) {
                    MdCheck::Go => {}
                    MdCheck::Sleep(t) => {
                        rb.resume_at = t;
                        rb.recheck = true; // (md's `goto repeat`)
                        continue;
                    }
                    MdCheck::Drain => {
                        rb.draining = true;
                        continue;
                    }
                }
            }
            let rb = self.w.arrays[ai].rebuild.as_mut().expect("a rebuild");
            if rb.flight.len() >= rb.depth as usize {
                return;
            }
            self.rebuild_issue(ai);
        }
    }

    /// Issue array `ai`'s next rebuild step: read the survivors over its member range.
    #[cold]
    #[inline(never)]
    fn rebuild_issue(&mut self, ai: usize) {
        let now = self.now;
        let arr = &mut self.w.arrays[ai];
        let rb = arr.rebuild.as_mut().expect("a rebuild");
        let start = rb.next;
        let len = rb.step.min(rb.end - start);
        let (reads, parity, writes) = arr.geom.rebuild_step(start, len);
        rb.next += len;
        rb.flight.push_back(crate::rebuild::Step {
            start,
            issued: now,
            done: false,
        });
        if let crate::rebuild::Pacer::Md(_) = rb.pacer {
            // md looks at its speed after each window (a step).
            rb.recheck = true;
        }
        // (Its own I/O is counted as it is sent, as the member's or array's count is: the
        // writes when the reads are in, in `rebuild_writes`.)
        rb.count_own(&reads);
        let kind = JoinKind::RebuildRead {
            array: ai as u32,
            start,
            writes,
            parity,
        };
        let j = self.new_join(reads.len().max(1) as u32, kind);
        self.rebuild_send(ai, &reads, false, j, now);
    }

    /// Send a rebuild step's member I/O `ios` at `t`, each signalling `join` when done: down
    /// a host array's member LUNs, or to a controller array's drives (none: `join` now).
    fn rebuild_send(&mut self, ai: usize, ios: &[MemberIo], write: bool, join: u32, t: u64) {
        if ios.is_empty() {
            self.signal(join, t);
        } else if self.w.arrays[ai].ctrl.is_none() {
            self.member_ios(ai, ios, write, join, t);
        } else {
            for &m in ios {
                self.disk_submit_at(ai, m, write, join, t);
            }
        }
    }

    /// A rebuild step's survivors are read: the parity engine computes the lost blocks (as
    /// for a degraded read), then the replacements are written.
    #[cold]
    #[inline(never)]
    fn rebuild_writes(&mut self, ai: usize, start: u64, writes: Vec<MemberIo>, parity: u64) {
        let t = self.parity_time(ai, parity);
        let j = self.new_join(
            writes.len().max(1) as u32,
            JoinKind::RebuildWrite {
                array: ai as u32,
                start,
            },
        );
        self.joins[j as usize].ready = t;
        self.w.arrays[ai]
            .rebuild
            .as_mut()
            .expect("a rebuild")
            .count_own(&writes);
        self.rebuild_send(ai, &writes, true, j, t);
    }

    /// A rebuild step is written: the watermark moves up past every step done below the
    /// first still in flight; once it reaches the end the array is whole.
    #[cold]
    #[inline(never)]
    fn rebuild_step_done(&mut self, ai: usize, start: u64) {
        let now = self.now;
        let arr = &mut self.w.arrays[ai];
        let sent = arr.sent;
        let rb = arr.rebuild.as_mut().expect("a rebuild");
        let (mark, took) = rb.step_done(start, now);
        arr.geom.rebuilt_below = mark;
        if mark >= rb.end {
            rb.finished_at = Some(now);
            arr.geom.rebuilding = false;
            arr.geom.failed.clear();
            // Whole again: its plans no longer change as a rebuild passes, and may be kept.
            arr.plans = crate::world::PlanCache::default();
            return;
        }
        if let crate::rebuild::Pacer::Ctrl {
            rate,
            busy,
            seen,
            owed,
        } = &mut rb.pacer
        {
            // Host I/O reached the drives during the step: the rebuild gave way to it for
            // the step's own time, a pause owed in proportion, taken once the pauses owed add
            // up to CTRL_PAUSE_NS. (A step with no host I/O beside it owes nothing: the
            // rebuild takes what the host leaves, and under steady host I/O its share.)
            let host = sent - rb.own[0];
            *busy = host != *seen;
            *seen = host;
            if *busy {
                *owed += took * (100 - *rate as u64) / *rate as u64;
                if *owed >= crate::rebuild::CTRL_PAUSE_NS {
                    rb.resume_at = rb.resume_at.max(now + *owed);
                    *owed = 0;
                }
            }
        }
        self.rebuild_pump(ai);
    }

    fn disk_submit(&mut self, ai: usize, m: MemberIo, write: bool, join: u32) {
        let t = self.now;
        self.disk_submit_at(ai, m, write, join, t);
    }

    #[inline(always)]
    fn disk_submit_at(&mut self, ai: usize, m: MemberIo, write: bool, join: u32, t: u64) {
        let d = self.w.arrays[ai].members[m.member as usize];
        let disk = &mut self.w.disks[d];
        let model = &self.w.models[disk.model];
        disk.head_hint = m.offset + m.len;
        disk.in_flight.arrive(t);
        let arr = &mut self.w.arrays[ai];
        arr.drive_cmds += 1;
        arr.sent += 1;
        if !write {
            disk.reads += 1;
            if model.holds(&disk.state, t, m.offset, m.len) {
                // The drive's buffer holds the data: the command's overhead and the
                // transfer, no media (a drive checks its segments as a read comes in).
                let end = buffer_serve(&mut disk.buffer_free, t, model.accept_ns(m.len));
                disk.read_hits += 1;
                disk.ios += 1;
                self.member_ios += 1;
                return self.command_done(d, t, end, m.len, false, join);
            }
        }
        let loc = model.loc_inline(m.offset);
        disk.queue.push_back(DiskReq {
            offset: m.offset,
            len: m.len,
            write,
            join,
            ready: t,
            loc,
        });
        self.member_ios += 1;
        if t > self.now {
            // Parity is still being computed: the drive sees the command then.
            // (Dispatch happens at the latest when the drive next looks at its queue.) A drive
            // whose every unit is busy until then or later will look at its queue when one
            // finishes anyway, and a wake-up at `t` would find nothing to do: skip it.
            let busy_through = disk.active.len() as u32 >= disk.units
                && disk.active.iter().all(|&(end, _)| end >= t);
            if !busy_through {
                self.at(t, Ev::DiskDone(d as u32 | 0x8000_0000));
            }
        } else if disk.may_start() {
            // (Checked here as well, to skip the call: most arrivals find the drive busy.)
            self.dispatch(d);
        }
    }

    /// A drive with its write cache on takes the data of ready writes while it has room, in
    /// the order they came: each completes once its data is in (after the command's overhead
    /// and the interface transfer, one at a time), and the drive holds it for the media.
    /// Returns whether a ready write is still waiting for room.
    fn accept_writes(&mut self, d: usize) -> bool {
        let now = self.now;
        loop {
            let disk = &mut self.w.disks[d];
            let model = &self.w.models[disk.model];
            let Some(wc) = disk.wcache.as_mut() else {
                return false;
            };
            let room = wc.capacity.saturating_sub(wc.bytes);
            let Some(mut r) = disk.queue.take_first_write(now, room) else {
                return disk.queue.has_ready_write(now);
            };
            let end = buffer_serve(&mut disk.buffer_free, now, model.accept_ns(r.len));
            let join = std::mem::replace(&mut r.join, HELD);
            disk.ios += 1;
            // A rewrite of data the buffer holds, and that the media is not writing now,
            // replaces it there: the media writes it once.
            let (offset, len, arrived) = (r.offset, r.len, r.ready);
            let rewrite = wc.holds(offset, len)
                && !disk.active.iter().any(|(_, a)| {
                    a.join == HELD && a.offset < offset + len && offset < a.offset + a.len
                });
            if rewrite {
                self.command_done(d, arrived, end, len, true, join);
                continue;
            }
            // The media writes it once its data has arrived.
            r.ready = end;
            wc.hold(r);
            // (What the media is on ends before the data is in: the drive looks again then.
            // Looking again as the media's command ends would find nothing ready.)
            let idle_by_then = disk.active.iter().all(|&(t, _)| t < end);
            self.command_done(d, arrived, end, len, true, join);
            if idle_by_then {
                self.at(end, Ev::DiskDone(d as u32 | 0x8000_0000));
            }
        }
    }

    /// A drive with held writes serves a ready read of data it holds from its buffer: the
    /// command's overhead and the transfer, no media.
    fn read_hits(&mut self, d: usize) {
        let now = self.now;
        loop {
            let disk = &mut self.w.disks[d];
            let model = &self.w.models[disk.model];
            let Some(wc) = disk.wcache.as_mut().filter(|wc| !wc.extents.is_empty()) else {
                return;
            };
            let Some(r) = disk
                .queue
                .take_first_read(now, |r| wc.holds(r.offset, r.len))
            else {
                return;
            };
            let end = buffer_serve(&mut disk.buffer_free, now, model.accept_ns(r.len));
            disk.ios += 1;
            self.command_done(d, r.ready, end, r.len, false, r.join);
        }
    }

    /// A drive's command is done at `at` (from the media, or from its buffer: a write taken
    /// in, a read of held data): it leaves the drive's count of queued commands, its data
    /// crosses the back-end bus, and whoever waits on `join` is told.
    fn command_done(&mut self, d: usize, arrived: u64, at: u64, len: u64, write: bool, join: u32) {
        self.command_done_inline(d, arrived, at, len, write, join)
    }

    /// [`Engine::command_done`], inline where a drive's media completes a command (once per
    /// member I/O).
    #[inline(always)]
    fn command_done_inline(
        &mut self,
        d: usize,
        arrived: u64,
        at: u64,
        len: u64,
        write: bool,
        join: u32,
    ) {
        let disk = &self.w.disks[d];
        let backend = disk.backend;
        self.w.arrays[disk.array].drive_cmds -= 1;
        let t = match backend {
            // The data crosses the back-end bus as it leaves (or enters) the drive, over the
            // last `iface_ns(len)` of the command — the bus and the drive's interface are one
            // wire — and the command is done once both are.
            Some(b) => {
                let from = at.saturating_sub(self.w.models[disk.model].iface_ns(len));
                transfer(&mut self.w.res, &[b], from, len, write).max(at)
            }
            None => at,
        };
        debug_assert!(t >= arrived, "a command completes after it arrives");
        self.w.disks[d].in_flight.complete(t);
        let done = &mut self.w.disks[d].done[usize::from(write)];
        done.ios += 1;
        done.bytes += len;
        done.ticks_ns += t - arrived;
        self.signal(join, t);
    }

    /// Let drive `d` take in and start what it can now.
    #[inline(always)]
    fn dispatch(&mut self, d: usize) {
        let disk = &self.w.disks[d];
        if disk.wcache.is_none() && disk.units == 1 && disk.queue_depth > 1 {
            self.start_one(d)
        } else {
            self.dispatch_any(d)
        }
    }

    /// [`Engine::dispatch`] for the usual hard disk: one command at a time, no write cache,
    /// commands chosen by shortest positioning time first. The general loop's steps that
    /// apply, in its order, on one straight path: an idle drive with a queue starts the
    /// command that streams on from its last one if any, else the one `sptf_pick` picks.
    fn start_one(&mut self, d: usize) {
        let now = self.now;
        let disk = &mut self.w.disks[d];
        debug_assert!(disk.wcache.is_none() && disk.units == 1 && disk.queue_depth > 1);
        if !disk.active.is_empty() || disk.queue.is_empty() {
            return;
        }
        let model = &self.w.models[disk.model];
        let Some((k, positioning)) = disk.queue.pick(model, &disk.state, now, &mut self.ranks)
        else {
            return; // nothing ready yet
        };
        disk.queue.take_into(k, now, &mut disk.active);
        debug_assert!(disk.active.last().is_some_and(|(_, r)| r.join != HELD));
        let end = start_last(disk, model, now, positioning);
        self.at(end, Ev::DiskDone(d as u32));
    }

    /// [`Engine::dispatch`] for any drive.
    fn dispatch_any(&mut self, d: usize) {
        let now = self.now;
        // A drive without a write cache whose every unit is busy takes nothing in and starts
        // nothing: it looks again when a command finishes.
        if !self.w.disks[d].may_start() {
            return;
        }
        let waiting = self.accept_writes(d);
        self.read_hits(d);
        loop {
            let disk = &mut self.w.disks[d];
            if disk.active.len() as u32 >= disk.units {
                break;
            }
            let model = &self.w.models[disk.model];
            // The write cache's held writes go to the media when it is three quarters full or
            // a write waits for room, and otherwise when no command of the queue is ready.
            // The command chosen goes straight from its queue's store into `active` (its end
            // time set once its service time is known), with no copy on the way.
            let mut from_held = None;
            if let Some(wc) = disk.wcache.as_mut().filter(|wc| !wc.held.is_empty()) {
                let press = waiting || wc.bytes * 4 >= wc.capacity * 3;
                if press || disk.queue.is_empty() {
                    let pick = wc.held.pick(model, &disk.state, now, &mut self.ranks);
                    from_held = pick.map(|(k, p)| {
                        wc.held.take_into(k, now, &mut disk.active);
                        p
                    });
                }
            }
            let positioning = if let Some(p) = from_held {
                p
            } else if disk.queue.is_empty() {
                break; // (held data not in yet: a wake-up is due when it is)
            } else if disk.queue_depth <= 1 || disk.units > 1 {
                match disk.queue.first_ready(now) {
                    Some(i) => {
                        disk.active.push((0, disk.queue.remove(i)));
                        None
                    }
                    None => break,
                }
            } else {
                // A command that continues the last one streams on with no positioning
                // (write cache, read-ahead): the drive serves it before any other; otherwise
                // shortest positioning time first (see `world::sptf_pick`).
                let Some((k, positioning)) =
                    disk.queue.pick(model, &disk.state, now, &mut self.ranks)
                else {
                    break; // nothing ready yet
                };
                disk.queue.take_into(k, now, &mut disk.active);
                positioning
            };
            let end = start_last(disk, model, now, positioning);
            self.at(end, Ev::DiskDone(d as u32));
        }
    }

    fn disk_done(&mut self, d: u32) {
        if d & 0x8000_0000 != 0 {
            return self.dispatch((d & 0x7fff_ffff) as usize);
        }
        let d = d as usize;
        let now = self.now;
        let disk = &mut self.w.disks[d];
        let i = disk.active.iter().position(|(t, _)| *t == now).unwrap_or(0);
        let r = &disk.active[i].1;
        let (len, write, join, arrived) = (r.len, r.write, r.join, r.ready);
        if join == HELD {
            // The media has written data the write cache held: its room is free again.
            let (_, r) = disk.active.swap_remove(i);
            let wc = disk
                .wcache
                .as_mut()
                .expect("held writes only in a write cache");
            wc.written(&r);
            self.flush_check |= self.flushing > 0;
            return self.dispatch(d);
        }
        // It leaves as by `swap_remove` (the last takes its place), without a copy of it: the
        // one unit's command is the last.
        let last = disk.active.len() - 1;
        if i != last {
            disk.active[i] = disk.active[last];
        }
        disk.active.truncate(last);
        self.command_done_inline(d, arrived, now, len, write, join);
        self.dispatch(d);
    }
}

/// Start the command just moved into the drive's `active` list (its last): its service time
/// from now (`positioning` as the scheduler worked it out, or None to work it out), which
/// the drive's busy time and count take; returns when it ends.
#[inline(always)]
fn start_last(
    disk: &mut crate::world::Disk,
    model: &crate::device::DeviceModel,
    now: u64,
    positioning: Option<f64>,
) -> u64 {
    let (end, r) = disk.active.last_mut().expect("the command just started");
    let svc = model.service_at(
        &mut disk.state,
        now,
        r.offset,
        r.len,
        r.write,
        &r.loc,
        positioning,
    );
    if model.ssd.is_none() {
        // (A flash drive's commands overlap: its busy time is its dies', counted as it
        // books them.)
        disk.busy_ns += svc;
    }
    if r.join != HELD {
        // (A held write was counted when the drive took it in.)
        disk.ios += 1;
    }
    *end = now + svc;
    *end
}

/// Whether [`Engine::start_destages`] may start a destage of `arr` (of controller `ctrl`).
/// Without pressure on the cache, a lazy controller starts nothing, nor does any with no full
/// stripe queued (most writes land so); nor does any with as many destages going as it
/// allows, or with its drives' queues full while one is going (most writes land so under
/// pressure): decided without the call, by the checks it starts with.
#[inline(always)]
fn may_destage(arr: &crate::world::Array, ctrl: &crate::world::Controller) -> bool {
    let room = arr.destaging < ctrl.destage_depth
        && !(arr.destaging > 0 && arr.drive_cmds >= arr.drive_room);
    room && (destage_pressure(ctrl) || !(ctrl.lazy_destage || arr.full.is_empty()))
}

/// Whether a controller's cache is pressed: three quarters dirty, or writes wait for room.
/// Then it destages whatever is oldest, lazy or not.
#[inline(always)]
fn destage_pressure(ctrl: &crate::world::Controller) -> bool {
    ctrl.dirty * 4 >= ctrl.cache_bytes * 3 || !ctrl.space_waiters.is_empty()
}

/// Coefficient of variation (standard deviation over mean) of some rates; 0 if their mean
/// is not positive.
fn cv(rates: impl Iterator<Item = f64> + Clone) -> f64 {
    let n = rates.clone().count() as f64;
    let mean = rates.clone().sum::<f64>() / n;
    if mean <= 0.0 {
        return 0.0;
    }
    let var = rates.map(|r| (r - mean) * (r - mean)).sum::<f64>() / n;
    var.sqrt() / mean
}

/// Sort member I/Os by (member, offset) and join those that continue each other on the same
/// member. `tmp` is scratch space (it may come back holding `v`'s old buffer).
///
/// A destage's list is its stripes' plans one after the other, so each member's I/Os mostly
/// come in offset order already. Such a list is chained by member as it is read (checking
/// that order), then each member's chain, members in order, is joined into `tmp` in one pass,
/// which becomes the list: two passes over it. A list out of order on some member takes a
/// counting sort by member that keeps their order, then an insertion sort of each member's
/// few. (Any order sorted by (member, offset) joins to the same list: I/Os at one offset merge
/// whatever their order.)
fn merge_ios(v: &mut Vec<MemberIo>, tmp: &mut Vec<MemberIo>) {
    /// Members the chains and the counting sort handle; wider arrays take the general sort.
    const MAX_MEMBERS: usize = 64;
    /// Lists the chains handle (their links are on the stack, one byte each).
    const MAX_CHAINED: usize = 128;
    let n = v.len();
    if n < 2 {
        return;
    }
    if n <= MAX_CHAINED {
        // Each member's first and last I/O, and each I/O's next on its member.
        let mut head = [0u8; MAX_MEMBERS];
        let mut tail = [0u8; MAX_MEMBERS];
        let mut next = [0u8; MAX_CHAINED];
        let mut seen = 0u64;
        let mut in_order = true;
        for (i, m) in v.iter().enumerate() {
            let k = m.member as usize;
            if k >= MAX_MEMBERS {
                return merge_sorted(v, |v| v.sort_unstable_by_key(|m| (m.member, m.offset)));
            }
            let bit = 1u64 << k;
            if seen & bit == 0 {
                seen |= bit;
                head[k] = i as u8;
            } else {
                let t = tail[k] as usize;
                in_order &= v[t].offset <= m.offset;
                next[t] = i as u8;
            }
            tail[k] = i as u8;
        }
        if in_order {
            tmp.clear();
            while seen != 0 {
                let k = seen.trailing_zeros() as usize;
                seen &= seen - 1;
                let (mut i, last) = (head[k] as usize, tail[k] as usize);
                let mut l = v[i];
                while i != last {
                    i = next[i] as usize;
                    let m = v[i];
                    if !join_into(&mut l, &m) {
                        tmp.push(l);
                        l = m;
                    }
                }
                tmp.push(l);
            }
            std::mem::swap(v, tmp);
            return;
        }
    } else if n > u16::MAX as usize {
        return merge_sorted(v, |v| v.sort_unstable_by_key(|m| (m.member, m.offset)));
    }
    let mut starts = [0u16; MAX_MEMBERS + 1];
    let mut top = 0usize;
    for m in v.iter() {
        let k = m.member as usize;
        if k >= MAX_MEMBERS {
            return merge_sorted(v, |v| v.sort_unstable_by_key(|m| (m.member, m.offset)));
        }
        starts[k + 1] += 1;
        top = top.max(k + 1);
    }
    for k in 1..=top {
        starts[k] += starts[k - 1];
    }
    // Scatter by member, keeping each member's order; `starts[k]` ends as member k's end.
    tmp.clear();
    tmp.extend_from_slice(v);
    for m in tmp.iter() {
        let at = &mut starts[m.member as usize];
        v[*at as usize] = *m;
        *at += 1;
    }
    let mut lo = 0;
    for &end in &starts[..top] {
        let run = &mut v[lo..end as usize];
        for i in 1..run.len() {
            let mut j = i;
            let x = run[i];
            while j > 0 && run[j - 1].offset > x.offset {
                run[j] = run[j - 1];
                j -= 1;
            }
            run[j] = x;
        }
        lo = end as usize;
    }
    merge_sorted(v, |_| {});
}

/// Sort `v` with `sort` (to (member, offset) order), then join I/Os that continue each other.
#[inline(always)]
fn merge_sorted(v: &mut Vec<MemberIo>, sort: impl FnOnce(&mut Vec<MemberIo>)) {
    sort(v);
    debug_assert!(v
        .windows(2)
        .all(|w| (w[0].member, w[0].offset) <= (w[1].member, w[1].offset)));
    let mut w = 1;
    for i in 1..v.len() {
        let m = v[i];
        if v[w - 1].member == m.member && join_into(&mut v[w - 1], &m) {
            continue;
        }
        v[w] = m;
        w += 1;
    }
    v.truncate(w);
}

/// Join `m`, an I/O of `l`'s member at or past `l`'s start, into `l` if it starts where `l`
/// ends or before: whether it did.
#[inline(always)]
fn join_into(l: &mut MemberIo, m: &MemberIo) -> bool {
    if l.offset + l.len < m.offset {
        return false;
    }
    l.len = (l.offset + l.len).max(m.offset + m.len) - l.offset;
    true
}

/// For a mirror read at `logical`, each member's rank under md's read balancing for rotating
/// disks (drivers/md/raid1.c and raid10.c `read_balance`); the planner sends the read to the
/// copy with the smallest value. A member with nothing queued wins; among those, and when
/// every member is busy, the one whose last command ends nearest the data (both copies hold
/// it at the same member offset). Each copy thus keeps the reads near where it is working and
/// seeks over less of the disk than a striped drive does.
/// (The check inline: most arrays are not mirrors.)
#[inline(always)]
fn member_loads(w: &World, ai: usize, logical: u64, len: u64, out: &mut Vec<u64>) -> bool {
    let arr = &w.arrays[ai];
    if !matches!(arr.geom.level, Level::Raid1 | Level::Raid10) || arr.ctrl.is_none() {
        return false;
    }
    mirror_loads(w, ai, logical, len, out);
    true
}

/// Where a mirror read of `len` bytes at `logical` of `arr` begins on its members (every
/// copy of it lies at the same member offset): what read balancing measures head distances
/// to. From the plan cache's pieces of the read's shape where it has them.
fn mirror_target(arr: &crate::world::Array, logical: u64, len: u64) -> u64 {
    let at = |logical| {
        let copies = arr.geom.geo().map(logical);
        debug_assert!(
            copies.windows(2).all(|w| w[0].offset == w[1].offset),
            "the simulator's mirrors keep every copy at one member offset"
        );
        copies.first().map_or(0, |l| l.offset)
    };
    match arr.plans.mirror_offset(&arr.geom, logical, len) {
        Some(o) => {
            debug_assert_eq!(
                o,
                at(logical),
                "the cached pieces begin where the read does"
            );
            o
        }
        None => at(logical),
    }
}

/// [`member_loads`] of a mirror, into `out`.
fn mirror_loads(w: &World, ai: usize, logical: u64, len: u64, out: &mut Vec<u64>) {
    let arr = &w.arrays[ai];
    let target = mirror_target(arr, logical, len);
    out.clear();
    out.extend(arr.members.iter().map(|&d| {
        let disk = &w.disks[d];
        let idle = disk.queue.is_empty() && disk.active.is_empty();
        let dist = disk.head_hint.abs_diff(target).min(1 << 60);
        if idle {
            dist
        } else {
            dist | 1 << 61
        }
    }));
}

#[allow(dead_code)]
fn level_has_parity(l: Level) -> bool {
    l.parity() > 0
}

#[cfg(test)]
mod tests {
    use super::{merge_ios, merge_sorted, Ev, EventQueue, Pending};
    use crate::planner::MemberIo;

    /// The counting sort's merge gives what the general sort's does, for lists of any order
    /// (touching, overlapping and equal offsets; narrow and too-wide arrays).
    #[test]
    fn merge_ios_matches_a_full_sort() {
        let mut rng = raidlab_workload::Rng::new(9);
        let mut tmp = Vec::new();
        for round in 0..20_000 {
            let members = [1, 3, 8, 64, 70][round % 5];
            let n = rng.below(if round % 7 == 0 { 300 } else { 40 }) as usize;
            let v: Vec<MemberIo> = (0..n)
                .map(|_| MemberIo {
                    member: rng.below(members) as u32,
                    offset: rng.below(16) * 512,
                    len: (1 + rng.below(3)) * 512,
                })
                .collect();
            // As given, and with each member's I/Os in offset order (a destage's list).
            let mut sorted = v.clone();
            sorted.sort_by_key(|m| m.offset);
            for v in [v, sorted] {
                let mut a = v.clone();
                merge_ios(&mut a, &mut tmp);
                let mut b = v;
                merge_sorted(&mut b, |b| b.sort_unstable_by_key(|m| (m.member, m.offset)));
                assert_eq!(a, b);
            }
        }
    }
    use raidlab_workload::{apply_option, JobSpec};

    /// The queue with its soonest slot pops in the same (time, seq) order as a plain binary
    /// heap, under random interleavings of pushes (often sooner than all pending) and pops.
    #[test]
    fn event_queue_pops_in_heap_order() {
        let mut rng = raidlab_workload::Rng::new(5);
        let (mut q, mut h) = (EventQueue::default(), std::collections::BinaryHeap::new());
        let (mut now, mut seq) = (0u64, 0u64);
        for _ in 0..200_000 {
            if rng.below(3) < 2 {
                seq += 1;
                let t = now + [0, 1, rng.below(50), rng.below(10_000)][rng.below(4) as usize];
                let p = Pending {
                    t,
                    seq,
                    ev: Ev::Issue(seq as u32),
                };
                q.push(p);
                h.push(std::cmp::Reverse((p.t, p.seq)));
            } else {
                let (a, b) = (q.pop(), h.pop());
                assert_eq!(a.map(|p| (p.t, p.seq)), b.map(|r| r.0));
                if let Some(p) = a {
                    now = p.t;
                }
            }
            assert_eq!(q.peek().map(|p| (p.t, p.seq)), h.peek().map(|r| r.0));
        }
    }

    fn spec(system: &str, opts: &[(&str, &str)]) -> JobSpec {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../systems")
            .join(system);
        let mut s = JobSpec {
            filenames: vec![format!("sim:{}", path.display())],
            ..Default::default()
        };
        for (k, v) in opts {
            apply_option(&mut s, k, Some(v)).unwrap();
        }
        s
    }

    /// Same inputs, same results, bit for bit: every counter, histogram bucket and component
    /// figure of two runs of the same jobs is equal (drive scheduling, caches, destaging,
    /// host arrays and convergence all take part).
    #[test]
    fn runs_repeat_bit_for_bit() {
        let cases = [
            spec(
                "xdd2008/raid5.toml",
                &[
                    ("rw", "randrw"),
                    ("bs", "8k"),
                    ("iodepth", "128"),
                    ("runtime", "300ms"),
                    ("time_based", "1"),
                ],
            ),
            spec(
                "llnl2000/fig16.toml",
                &[("rw", "write"), ("bs", "64k"), ("size", "512m")],
            ),
            spec(
                "bokhari2006/pool16.toml",
                &[
                    ("rw", "read"),
                    ("bs", "1m"),
                    ("size", "256m"),
                    ("numjobs", "2"),
                ],
            ),
        ];
        for s in cases {
            let a = crate::run(std::slice::from_ref(&s)).unwrap();
            let b = crate::run(std::slice::from_ref(&s)).unwrap();
            assert!(a
                .jobs
                .iter()
                .all(|j| j.read.total_ios + j.write.total_ios > 0));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{:?}", s.filenames);
        }
    }
}
