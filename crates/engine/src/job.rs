//! The job driver: keeps `iodepth` requests of one job instance in flight on an executor,
//! times them, checks verify headers, and folds everything into a [`JobResult`].

use crate::clock::Clock;
use crate::exec::{Completion, Executor};
use crate::verify;
use raidlab_result::{
    DirStats, ErrorCount, JobLog, JobResult, PassTally, SyncStats, VerifySummary,
};
use raidlab_workload::DepthStep;
use raidlab_workload::{
    ContentGen, Dir, ErrorKinds, ErrorPolicy, JobStream, Pacer, Request, SyncKind, Think,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// CPU time of the calling thread: (user ns, system ns).
pub fn thread_cpu() -> (u64, u64) {
    // SAFETY: getrusage fills the struct; RUSAGE_THREAD is Linux's per-thread usage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

/// Memory for `slots` buffers of `slot_bytes`, aligned for direct I/O.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
    slot_bytes: usize,
}

impl AlignedBuf {
    /// `slots` buffers of `slot_bytes` (rounded up to `align`), filled as `content` says
    /// (by default pseudo-random bytes, once, as fio fills its buffers).
    pub fn new(slots: usize, slot_bytes: usize, align: usize, content: &ContentGen) -> Self {
        let slot_bytes = slot_bytes.div_ceil(align) * align;
        let total = (slots * slot_bytes).max(align);
        let layout = std::alloc::Layout::from_size_align(total, align).expect("buffer layout");
        // SAFETY: layout has nonzero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // SAFETY: ptr points to `total` initialised bytes we own.
        let all = unsafe { std::slice::from_raw_parts_mut(ptr, total) };
        content.initial(all, slot_bytes);
        AlignedBuf {
            ptr,
            layout,
            slot_bytes,
        }
    }
    /// Bytes each slot's buffer holds.
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }
    #[inline]
    pub fn slot(&self, i: u32) -> *mut u8 {
        // SAFETY: i < slots, checked by the driver's slot accounting.
        unsafe { self.ptr.add(i as usize * self.slot_bytes) }
    }
    pub fn area(&self) -> (*mut u8, usize) {
        (self.ptr, self.layout.size())
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// What the jobs of one of fio's flows share: the requests they have issued, and the
/// weight of those still running (see [`raidlab_workload::flow`]).
#[derive(Debug, Default)]
pub struct FlowShared {
    pub issued: AtomicU64,
    pub weight: AtomicU64,
}

/// A job's place in its flow: the flow's shared counts, its weight (counted in the flow's
/// while it runs) and its `flow_sleep`, ns.
#[derive(Clone, Debug)]
pub struct JobFlow {
    pub shared: Arc<FlowShared>,
    pub weight: u32,
    pub sleep_ns: u64,
}

/// A running job's place in its flow, if it is in one: its weight joins the flow's as it
/// starts (a job waiting to start weighs nothing there); as it ends, however it ends, its
/// weight and the requests it issued leave (fio's `flow_init_job` and `flow_put`), so the
/// others' shares are of the rest.
struct FlowPlace<'f> {
    flow: Option<&'f JobFlow>,
    /// The requests this job has issued.
    own: u64,
}

impl<'f> FlowPlace<'f> {
    fn join(flow: Option<&'f JobFlow>) -> Self {
        if let Some(f) = flow {
            f.shared
                .weight
                .fetch_add(u64::from(f.weight), Ordering::Relaxed);
        }
        FlowPlace { flow, own: 0 }
    }
    /// Ahead of its weight's share of the flow's requests ([`raidlab_workload::flow::ahead`]).
    fn ahead(&self) -> bool {
        self.flow.is_some_and(|f| {
            let issued = f.shared.issued.load(Ordering::Relaxed);
            let total = f.shared.weight.load(Ordering::Relaxed);
            raidlab_workload::flow::ahead(self.own, issued, f.weight, total)
        })
    }
    /// It issued a request.
    fn issued(&mut self) {
        if let Some(f) = self.flow {
            self.own += 1;
            f.shared.issued.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for FlowPlace<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.flow {
            f.shared
                .weight
                .fetch_sub(u64::from(f.weight), Ordering::Relaxed);
            f.shared.issued.fetch_sub(self.own, Ordering::Relaxed);
        }
    }
}

/// Verify state shared by every job of a run that touches one target (one file).
#[derive(Clone)]
pub struct VerifyShared {
    /// Offset → the generation and length of the last write this run completed there.
    pub last_gen: Arc<Mutex<HashMap<u64, (u64, u64)>>>,
    /// The run's generation counter.
    pub generation: Arc<AtomicU64>,
}

/// Everything a job instance needs besides its executor.
pub struct JobSetup {
    pub name: String,
    /// The job's targets as results name them (several joined by ':').
    pub target: String,
    /// Each of the job's files as errors name it, in the order requests count them.
    pub files: Vec<String>,
    pub engine: &'static str,
    pub group_id: u32,
    pub stream: JobStream,
    pub depth: u32,
    /// Requests handed to the executor at once (`JobSpec::submit_batch`): 1 submits each as
    /// it is queued, as fio does by default.
    pub submit_batch: u32,
    /// Once the queue is full, it is filled again only with this many or fewer in flight
    /// (`JobSpec::refill_at`: `iodepth_low`, `iodepth_batch_complete_min`).
    pub refill_at: u32,
    /// Completions each reap waits for (at most those in flight) and takes at most
    /// (`JobSpec::reap_bounds`).
    pub reap: (u32, u32),
    pub ramp_ns: u64,
    pub runtime_ns: Option<u64>,
    /// Each of the job's files' verify state, when the job verifies.
    pub verify: Option<Vec<VerifyShared>>,
    /// What its verified blocks carry (`verify_pattern`, `verify=pattern`).
    pub verify_form: verify::Form,
    /// Verify every block read (the job only reads), not only those written this run.
    pub verify_all: bool,
    /// The first mismatch ends the job (fio's `verify_fatal`).
    pub verify_fatal: bool,
    /// Write each block that fails its check to the working folder (fio's `verify_dump`).
    pub verify_dump: bool,
    /// The I/O errors the job counts and goes on past (fio's `continue_on_error`,
    /// `ignore_error`); the others end it.
    pub on_error: ErrorPolicy,
    pub seed: u64,
    pub clock: Arc<dyn Clock>,
    pub stop: Arc<AtomicBool>,
    /// Set when another job's end stops this one (fio's `exitall`): its reporting group's
    /// flag and its stonewall group's. It then ends as at its runtime's end, not as
    /// interrupted.
    pub halted: [Arc<AtomicBool>; 2],
    /// fio's flow: the one this job is in (its count shared with the flow's other jobs of
    /// the group), or None.
    pub flow: Option<JobFlow>,
    /// Bytes completed, for the progress line (and a steady-state judge).
    pub progress: Arc<AtomicU64>,
    /// I/Os completed (for a steady-state judge).
    pub progress_ios: Arc<AtomicU64>,
    /// fio's steady state, when the job (or its group) judges it.
    pub steady: Option<SteadyShare>,
    /// fio's `max_latency`: a request whose total latency exceeds it ends the job
    /// (ETIMEDOUT), ns; 0 none.
    pub max_latency_ns: u64,
    /// fio's latency-target mode (`latency_target`, …): the job queues only as deep as the
    /// search says ([`raidlab_workload::DepthSearch`]).
    pub latency: raidlab_workload::LatencyTarget,
    /// Flush written data to the device at the end, inside the job's runtime (`end_fsync`).
    pub end_fsync: bool,
    /// Once its writes are done, read back every block the job wrote and check it (fio's
    /// `do_verify`), outside its timing and rates: only for a job that writes with verify
    /// and reads nothing.
    pub read_back: bool,
    /// fio's `verify_backlog` and `verify_backlog_batch`: every `.0` blocks written (0:
    /// never), what is in flight completes, and every block written since the last check
    /// (`.1` 0), or `.1` of them, the oldest first, are read back and checked.
    pub backlog: (u64, u64),
    /// fio's `fill_device`: a write failing for want of room (ENOSPC, EDQUOT, or short)
    /// ends the job as its size would, neither counted nor an error.
    pub fill: bool,
    /// fio's `log_unix_epoch`: (the clock's reading, the wall clock in ns since the Unix
    /// epoch) at one instant, so that the logs' times can be put on the wall clock.
    pub log_epoch: Option<(u64, u64)>,
    /// When requests may go (rate caps, think time, periodic syncs); `None` issues every
    /// request as soon as a slot is free.
    pub pacer: Option<Pacer>,
    /// `startdelay`: how long the job waits before it starts, ns.
    pub start_delay_ns: u64,
    /// The job's time-series logs, when it writes any: each counted completion is recorded
    /// at its time since the ramp ended.
    pub log: Option<JobLog>,
    /// The job's I/O log (fio's `write_iolog`), when it writes one: each request and sync
    /// at its issue time since the job's start.
    pub iolog: Option<raidlab_result::IoLog>,
    /// Its bandwidth and IOPS samples, taken as its options and logs say
    /// (`Sampler::for_job`; an averaged log's bandwidth and IOPS lines are these samples).
    pub sampler: raidlab_result::Sampler,
    /// What writes carry (fio's buffer options); verify's headers take its place.
    pub content: ContentGen,
    /// fio's `verify_async`: threads that check the job's reads off its thread (0: the job
    /// checks them itself).
    pub verify_async: u32,
    /// Its place at its stonewall group's start (see [`crate::gate`]): set up, it waits
    /// there for the group's other jobs before its clock starts. None starts at once.
    pub start_gate: Option<crate::gate::Ticket>,
}

/// A steady-state judge and the jobs it judges (fio's `steadystate`): one job, or a
/// `group_reporting` group, whose last job (the leader, as fio's) samples the members'
/// completed bytes and I/Os once a second and, once they have settled, ends the group as at
/// its runtime's end (through the group's `halted` flag; a job of its own, itself).
#[derive(Clone)]
pub struct SteadyShare {
    pub judge: Arc<Mutex<raidlab_result::Steady>>,
    /// Each member's completed bytes and I/Os.
    pub members: Arc<[(Arc<AtomicU64>, Arc<AtomicU64>)]>,
    /// This job samples and carries the report.
    pub leader: bool,
    /// A group's (ends the group), not one job's.
    pub group: bool,
}

/// The steady-state judge `spec` asks for (its `steadystate`, `ss_dur`, `ss_ramp`).
pub(crate) fn steady_judge(spec: &raidlab_workload::JobSpec) -> raidlab_result::Steady {
    let c = &spec.ss;
    raidlab_result::Steady::new(
        raidlab_result::SteadyRule {
            bw: c.bw,
            slope: c.slope,
            limit: c.limit,
            percent: c.percent,
        },
        c.text(),
        spec.ss_dur_s,
        spec.ss_ramp_ns,
    )
}

/// What a paced job waits for once its requests in flight have completed.
#[derive(Clone, Copy, Debug)]
enum Pause {
    /// Its next request's time on the rate's schedule.
    Until(u64),
    /// Its think time.
    Think(Think),
    /// fio's `flow_sleep`, ns, from when what is in flight is done.
    Sleep(u64),
    /// A periodic sync.
    Sync(SyncKind),
    /// `verify_backlog`'s check of the blocks written since the last.
    Backlog,
}

/// Sleep until `t` on `clock` in steps short enough to notice `halt` (Ctrl-C, or another
/// job's end under `exitall`) soon.
fn sleep_until(clock: &dyn Clock, t: u64, halt: &dyn Fn() -> bool) {
    const STEP_NS: u64 = 50_000_000;
    loop {
        let now = clock.now_ns();
        if now >= t || halt() {
            return;
        }
        clock.sleep_until(t.min(now + STEP_NS));
    }
}

/// Busy the CPU until `t` (fio's `thinktime_spin`).
fn spin_until(clock: &dyn Clock, t: u64) {
    while clock.now_ns() < t {
        std::hint::spin_loop();
    }
}

#[derive(Clone, Copy)]
struct Slot {
    req: Request,
    ready: u64,
    submit: u64,
    generation: u64,
    /// Reads: whether and against what to verify (the generation and length of the last
    /// write at the read's offset). Writes: raced with another write.
    check: bool,
    racy: bool,
    expect: Option<(u64, u64)>,
}

const EMPTY: Request = Request {
    seq: 0,
    pass: 0,
    file: 0,
    offset: 0,
    len: 0,
    dir: Dir::Read,
};

#[derive(Default)]
struct Counters {
    read: DirStats,
    write: DirStats,
    trim: DirStats,
    /// The passes, in bounded room (a time-based job over a small region makes thousands).
    passes: PassTally,
    verify: VerifySummary,
    iodepth_level: [u64; 7],
}

/// Requests queued and now handed to the executor: each stamped with the time (its clat
/// starts there), and counted in fio's IO depths at the depth in flight, as fio's commit
/// counts them. Clears `fresh`; nothing to do if it is empty.
fn hand_off(
    fresh: &mut Vec<u32>,
    slots: &mut [Slot],
    clock: &dyn Clock,
    inflight: u32,
    c: &mut Counters,
) {
    if fresh.is_empty() {
        return;
    }
    let t = clock.now_ns();
    for &f in fresh.iter() {
        // (A trim was done as it was queued: its clat starts where it was stamped then.)
        if slots[f as usize].req.dir != Dir::Trim {
            slots[f as usize].submit = t;
        }
    }
    c.iodepth_level[raidlab_result::schema::iodepth_bucket(inflight)] += fresh.len() as u64;
    fresh.clear();
}

/// fio's `error` for an I/O error: its errno, or for an executor's own description of a
/// refusal (hipri's, say) the errno of its kind; EIO otherwise.
fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(match e.kind() {
        std::io::ErrorKind::Unsupported => libc::EOPNOTSUPP,
        _ => libc::EIO,
    })
}

/// Run one job instance to its end (stream exhausted, runtime reached, stop flag, or error).
pub fn drive<E: Executor>(setup: JobSetup, exec: &mut E, bufs: &AlignedBuf) -> JobResult {
    let JobSetup {
        clock,
        stop,
        halted,
        progress,
        progress_ios,
        steady,
        verify,
        verify_all,
        seed,
        mut stream,
        read_back,
        backlog,
        mut pacer,
        mut log,
        mut iolog,
        mut sampler,
        mut content,
        flow,
        start_gate,
        ..
    } = setup;
    let mut flow_place = FlowPlace::join(flow.as_ref());
    let flow_sleep_ns = flow.as_ref().map_or(0, |f| f.sleep_ns);
    let content_acts = content.acts_on_writes();
    // (fio's verify_dump: the files a failed block's dump is named after.)
    let dump_files = setup.verify_dump.then_some(&setup.files[..]);
    let halted_by_others = || halted.iter().any(|h| h.load(Ordering::Relaxed));
    let halt = || stop.load(Ordering::Relaxed) || halted_by_others();
    let depth = setup.depth.max(1);
    // (An executor that runs nothing before it reaps takes each refill whole.)
    let batch = if exec.submits_early() {
        setup.submit_batch.clamp(1, depth) as usize
    } else {
        depth as usize
    };
    // Each file's region: `[start, end)`.
    let regions: Vec<(u64, u64)> = (0..stream.files())
        .map(|k| {
            let (start, len) = stream.region(k);
            (start, start + len)
        })
        .collect();
    // fio's verify_async: the threads that check reads (inline without them).
    let mut pool = match (&verify, setup.verify_async) {
        (Some(_), n) if n > 0 => match VerifyPool::new(n) {
            Ok(p) => Some(p),
            Err(e) => {
                crate::ewriteln!(
                    "raidlab: warning: job '{}': cannot start verify_async's {n} threads ({e}); the job checks its reads itself",
                    setup.name
                );
                None
            }
        },
        _ => None,
    };
    let mut checks_back: Vec<(u32, Checked)> = Vec::new();
    // The group's jobs start together, once all are set up (a stop lets it go at once).
    if let Some(t) = start_gate {
        t.arrive(halt);
    }
    let cpu0 = thread_cpu();
    // fio's elapsed time includes the start delay.
    let began = clock.now_ns();
    if setup.start_delay_ns > 0 {
        let t = clock.now_ns() + setup.start_delay_ns;
        sleep_until(clock.as_ref(), t, &halt);
    }
    let start = clock.now_ns();
    if let Some(p) = pacer.as_mut() {
        p.begin(start);
    }
    let mut measure_from = start + setup.ramp_ns;
    // The logs' times count from `measure_from`; on the wall clock, from this.
    let epoch_ms = |from: u64| {
        setup
            .log_epoch
            .map(|(at, wall)| (wall + from.saturating_sub(at)) / 1_000_000)
    };
    if let (Some(l), Some(e)) = (log.as_mut(), epoch_ms(measure_from)) {
        l.epoch_ms = e;
    }
    let mut deadline = setup.runtime_ns.map(|r| measure_from + r);
    // fio's latency-target mode: how deep the job may queue, the search's word on what
    // next, and the requests completed (all of them, as the search counts them).
    let mut search = raidlab_workload::DepthSearch::new(&setup.latency, depth, start, 0);
    let mut draining_to_zero = false;
    let mut final_run_pending = false;
    let mut completed_ios = 0u64;

    let mut slots = vec![
        Slot {
            req: EMPTY,
            ready: 0,
            submit: 0,
            generation: 0,
            check: false,
            racy: false,
            expect: None
        };
        depth as usize
    ];
    let mut free: Vec<u32> = (0..depth).rev().collect();
    // The slots whose buffers a read has used since they were filled with the job's content.
    let mut read_into: Vec<bool> = vec![false; depth as usize];
    let mut inflight_list: Vec<u32> = Vec::with_capacity(depth as usize);
    // Slots queued and not yet handed off (see `hand_off`).
    let mut fresh: Vec<u32> = Vec::with_capacity(depth as usize);
    // The queue was filled and drains to `refill_at` before it is filled again.
    let mut draining = false;
    let refill_at = setup.refill_at.min(depth - 1);
    let mut done: Vec<Completion> = Vec::with_capacity(depth as usize);
    let mut c = Counters::default();
    let mut error: Option<String> = None;
    // fio's `error`: the errno of the first error (set together with `error`).
    let mut errno = 0i32;
    // (Kept, and shown, only when the job goes on past some errors.)
    let mut errors: Option<ErrorCount> = setup.on_error.counts().then(ErrorCount::default);
    // An I/O error ends the job; a verify mismatch is recorded and the job goes on counting.
    let mut io_failed = false;
    let mut stopped: Option<String> = None;
    let mut exhausted = false;
    let mut inflight = 0u32;
    let mut now = start;
    let mut last_counted = measure_from;
    // The blocks this job wrote, for the read-back (file, offset, length).
    let mut wrote: Vec<(u32, u64, u64)> = Vec::new();
    let mut read_backs = ReadBacks::default();
    // A paced job's next request, drawn and waiting; what it waits for.
    let mut held: Option<Request> = None;
    let mut pause: Option<Pause> = None;
    let mut syncs = SyncStats::default();
    // Steady state attained (a job judged alone): it ends as at its runtime's end.
    let mut settled = false;

    loop {
        let stopping = io_failed
            || stopped.is_some()
            || exhausted
            || settled
            || deadline.is_some_and(|d| now >= d)
            || {
                if stop.load(Ordering::Relaxed) {
                    stopped = Some("interrupted".into());
                    true
                } else {
                    halted_by_others()
                }
            };
        if draining && inflight <= refill_at {
            draining = false;
        }
        if draining_to_zero && inflight == 0 {
            // A lower depth, or the depth found: the queue has drained.
            draining_to_zero = false;
            if std::mem::take(&mut final_run_pending) {
                // The final run at the depth found: the job's counters and runtime start
                // again (fio's reset_all_stats).
                now = clock.now_ns();
                measure_from = now;
                if let (Some(l), Some(e)) = (log.as_mut(), epoch_ms(measure_from)) {
                    l.epoch_ms = e;
                }
                deadline = setup.runtime_ns.map(|r| now + r);
                last_counted = now;
                c.read = DirStats::default();
                c.write = DirStats::default();
                c.passes = PassTally::default();
                c.iodepth_level = [0; 7];
                syncs = SyncStats::default();
                sampler = sampler.restarted();
            }
        }
        let limit = search.as_ref().map_or(depth, |s| s.depth());
        if !stopping && pause.is_none() && !draining && !draining_to_zero {
            while let Some(slot) = (inflight < limit).then(|| free.pop()).flatten() {
                // fio's flow: a job ahead of its share sleeps its flow_sleep once what it has
                // in flight is done, or without one looks again after a completion (or at
                // once, with nothing in flight).
                if flow_place.ahead() {
                    if flow_sleep_ns == 0 && inflight == 0 {
                        // Nothing in flight: look again until the others have caught up, as
                        // fio spins (yielding the CPU between looks), but not past the end.
                        while flow_place.ahead()
                            && !halt()
                            && deadline.is_none_or(|d| clock.now_ns() < d)
                        {
                            std::thread::yield_now();
                        }
                        now = clock.now_ns();
                    }
                    if flow_place.ahead() {
                        pause = match (flow_sleep_ns, inflight) {
                            (0, 0) => Some(Pause::Until(now)), // (the job's end came)
                            (0, _) => pause,
                            (ns, _) => Some(Pause::Sleep(ns)),
                        };
                        free.push(slot);
                        break;
                    }
                }
                // A mixed job under a cap: a direction ahead of its rate yields (fio's
                // rate_ddir).
                let next = match (held.take(), &pacer) {
                    (Some(r), _) => Some(r),
                    (None, Some(p)) if p.switches() => stream.next_as(|d| p.rate_dir(d, now)),
                    (None, _) => stream.next(),
                };
                let Some(req) = next else {
                    // A trace's last sync, after its last request.
                    if let Some(kind) = stream.sync_due(None) {
                        pause = Some(Pause::Sync(kind));
                    } else {
                        exhausted = true;
                    }
                    free.push(slot);
                    break;
                };
                // A replayed trace: its sync before this request, with nothing in flight;
                // then the request at its time. (fio sleeps to a request's time with the
                // earlier ones still in flight, reaping them after.)
                if let Some(kind) = stream.sync_due(Some(&req)) {
                    held = Some(req);
                    pause = Some(Pause::Sync(kind));
                    free.push(slot);
                    break;
                }
                if let Some(due) = stream.due_ns(req.seq) {
                    let t = start + due;
                    if t > now {
                        if !fresh.is_empty() {
                            hand_off(&mut fresh, &mut slots, clock.as_ref(), inflight, &mut c);
                            exec.submit();
                        }
                        sleep_until(clock.as_ref(), deadline.map_or(t, |d| t.min(d)), &halt);
                        now = clock.now_ns();
                        if now < t {
                            // Its end, or a stop, came first.
                            held = Some(req);
                            free.push(slot);
                            break;
                        }
                    }
                }
                if let Some(p) = &pacer {
                    // A sync due, or the request's time not come: what is in flight
                    // completes first (fio quiesces before it syncs or sleeps).
                    let wait = match p.sync_due() {
                        Some(k) => Some(Pause::Sync(k)),
                        None => Some(Pause::Until(p.issue_at(req.dir)))
                            .filter(|_| p.issue_at(req.dir) > now),
                    };
                    if wait.is_some() {
                        held = Some(req);
                        pause = wait;
                        free.push(slot);
                        break;
                    }
                }
                let (region_start, region_end) = regions[req.file as usize];
                assert!(
                    req.offset >= region_start && req.offset + req.len <= region_end,
                    "request [{}, {}) leaves the job's region [{region_start}, {region_end}) of its file #{}",
                    req.offset,
                    req.offset + req.len,
                    req.file
                );
                let buf = bufs.slot(slot);
                let mut s = Slot {
                    req,
                    ready: now,
                    submit: 0,
                    generation: 0,
                    check: false,
                    racy: false,
                    expect: None,
                };
                if let Some(v) = &verify {
                    let v = &v[req.file as usize];
                    let form = &setup.verify_form;
                    prepare_verify(&mut s, &mut slots, &inflight_list, (v, form), buf, seed);
                } else if req.dir == Dir::Trim {
                    // A trim moves no data (its buffer is left as it was); executors do it
                    // as it is queued, so its submission is now.
                    s.submit = clock.now_ns();
                } else if req.dir == Dir::Write {
                    if read_into[slot as usize] {
                        // A read left the device's data in this buffer: what the job writes
                        // is filled in afresh (as fio refills a write buffer a read used).
                        read_into[slot as usize] = false;
                        // SAFETY: the slot's buffer is `slot_bytes` long and idle until queued.
                        let whole =
                            unsafe { std::slice::from_raw_parts_mut(buf, bufs.slot_bytes()) };
                        content.initial(whole, whole.len());
                    }
                    if content_acts {
                        // SAFETY: the slot's buffer is `len` bytes and idle until queued.
                        let b = unsafe { std::slice::from_raw_parts_mut(buf, req.len as usize) };
                        content.before_write(b, req.offset);
                    }
                } else {
                    read_into[slot as usize] = true;
                }
                slots[slot as usize] = s;
                if let Some(l) = iolog.as_mut() {
                    let act = raidlab_result::IoAct::of_direction(req.dir as usize);
                    l.record_io(now - start, req.file, act, req.offset, req.len);
                }
                exec.queue(slot, req.file, req.dir, req.offset, buf, req.len as usize);
                fresh.push(slot);
                flow_place.issued();
                if verify.is_some() {
                    inflight_list.push(slot);
                }
                inflight += 1;
                if fresh.len() >= batch {
                    hand_off(&mut fresh, &mut slots, clock.as_ref(), inflight, &mut c);
                    exec.submit();
                }
                if let Some(p) = pacer.as_mut() {
                    p.issued(req.dir, req.len);
                    if let Some(t) = p.think_due(now) {
                        pause = Some(Pause::Think(t));
                        break;
                    }
                }
            }
        }
        // Reads verify_async's threads have checked: their slots are free again. With
        // nothing in flight, the job waits for one (it has no slot, or is to end or pause
        // once every check is in).
        if let Some(p) = pool.as_mut() {
            let wait = inflight == 0 && p.pending > 0;
            p.collect(wait, &mut checks_back);
            for (slot, checked) in checks_back.drain(..) {
                free.push(slot);
                tally_check(checked, &mut c.verify, &mut error);
            }
            if setup.verify_fatal && c.verify.mismatches > 0 {
                io_failed = true;
            }
            if wait {
                continue;
            }
        }
        if inflight == 0 {
            let Some(what) = pause.take().filter(|_| !stopping) else {
                break;
            };
            // Nothing in flight: sync, think or wait, never past the job's end.
            let end = |t: u64| deadline.map_or(t, |d| t.min(d));
            match what {
                Pause::Sync(kind) => {
                    let t0 = clock.now_ns();
                    if let Some(l) = iolog.as_mut() {
                        l.record_sync(t0.saturating_sub(start), kind == SyncKind::Fdatasync);
                    }
                    let r = exec.sync_kind(kind);
                    let t1 = clock.now_ns();
                    match r {
                        Ok(()) => {
                            if t1 >= measure_from {
                                syncs.record(t1 - t0);
                                last_counted = t1;
                            }
                            if stream.sync_due(held.as_ref()).is_some() {
                                stream.synced();
                            } else if let Some(p) = pacer.as_mut() {
                                p.synced();
                            }
                        }
                        Err(e) => {
                            io_failed = true;
                            if error.is_none() {
                                errno = errno_of(&e);
                            }
                            error.get_or_insert(format!("sync of {}: {e}", setup.target));
                        }
                    }
                }
                Pause::Backlog => {
                    let Some(v) = &verify else {
                        unreachable!("verify_backlog without verify is refused")
                    };
                    let check = raidlab_workload::readback::backlog_blocks(&wrote, backlog.1);
                    wrote.clear();
                    if let Err((file, what, e)) = read_back_blocks(
                        exec,
                        &check,
                        depth,
                        bufs,
                        (v, &setup.verify_form),
                        (setup.verify_fatal, dump_files),
                        (&mut c.verify, &mut error),
                        (
                            clock.as_ref(),
                            ReadTally {
                                count: now >= measure_from,
                                from: measure_from,
                                read: &mut c.read,
                                spent: &mut read_backs,
                                sampler: &mut sampler,
                                log: log.as_mut(),
                            },
                        ),
                    ) {
                        io_failed = true;
                        let at = &setup.files[file as usize];
                        let line = format!("verify_backlog read-back: {what} on {at}: {e}");
                        fail_with(&mut error, &mut errno, line, &e);
                    }
                    if setup.verify_fatal && c.verify.mismatches > 0 {
                        io_failed = true;
                    }
                }
                Pause::Until(t) => sleep_until(clock.as_ref(), end(t), &halt),
                Pause::Sleep(ns) => {
                    let t0 = clock.now_ns();
                    sleep_until(clock.as_ref(), end(t0 + ns), &halt);
                }
                Pause::Think(t) => {
                    let t0 = clock.now_ns();
                    spin_until(clock.as_ref(), end(t0 + t.spin_ns));
                    sleep_until(clock.as_ref(), end(t0 + t.total_ns()), &halt);
                    if let Some(p) = pacer.as_mut() {
                        let t1 = clock.now_ns();
                        p.thought(t1, t1.saturating_sub(t0));
                    }
                }
            }
            now = clock.now_ns();
            continue;
        }
        // (The rest of the refill goes with the reap.)
        hand_off(&mut fresh, &mut slots, clock.as_ref(), inflight, &mut c);
        if inflight >= depth {
            draining = true;
        }
        let min = (setup.reap.0 as usize).min(inflight as usize).max(1);
        if let Err(e) = exec.submit_and_reap(min, setup.reap.1 as usize, &mut done) {
            if error.is_none() {
                errno = errno_of(&e);
            }
            error.get_or_insert(format!("submitting I/O to {}: {e}", setup.target));
            // The executor cannot tell us which requests are still in flight: stop here.
            break;
        }
        now = clock.now_ns();
        let mut bytes_done = 0u64;
        let mut ios_done = 0u64;
        for comp in done.drain(..) {
            let s = slots[comp.slot as usize];
            // A read checked on verify_async's threads keeps its slot until it comes back.
            let deferred = pool.is_some()
                && s.req.dir == Dir::Read
                && s.check
                && matches!(comp.res, Ok(n) if n == s.req.len);
            if !deferred {
                free.push(comp.slot);
            }
            inflight -= 1;
            if verify.is_some() {
                inflight_list.retain(|&x| x != comp.slot);
            }
            let r = s.req;
            let what = r.dir.name();
            // With continue_on_error every error is counted (as fio counts them, the one
            // that ends the job too); one the job goes on past leaves its request neither
            // measured nor retried, as in fio.
            let failed = match &comp.res {
                Err(e) => Some(errno_of(e)),
                Ok(n) if *n != r.len => Some(libc::EIO),
                Ok(_) => None,
            };
            // fio's fill_device: the filesystem is full, and that is the job's end.
            if setup.fill
                && r.dir == Dir::Write
                && (matches!(failed, Some(libc::ENOSPC | libc::EDQUOT))
                    || matches!(comp.res, Ok(n) if n < r.len))
            {
                exhausted = true;
                continue;
            }
            if let Some(e) = failed {
                if let Some(count) = errors.as_mut() {
                    count.count(e);
                }
                // (fio's continue_on_error has no kind for trims: they count as writes.)
                let kind = match r.dir {
                    Dir::Read => ErrorKinds::READ,
                    Dir::Write | Dir::Trim => ErrorKinds::WRITE,
                };
                if setup.on_error.continues_past(kind, e) {
                    // fio's error_dump (on by default): each error gone past is told.
                    if setup.on_error.error_dump {
                        let why = match &comp.res {
                            Err(err) => err.to_string(),
                            Ok(n) => format!("short transfer, {n} of {} bytes", r.len),
                        };
                        crate::ewriteln!(
                            "raidlab: job '{}': {what} of {} bytes at offset {} on {}: {why} (continue_on_error: counted, the job goes on)",
                            setup.name,
                            r.len,
                            r.offset,
                            setup.files[r.file as usize]
                        );
                    }
                    continue;
                }
            }
            match comp.res {
                Err(e) => {
                    io_failed = true;
                    if error.is_none() {
                        errno = errno_of(&e);
                    }
                    error.get_or_insert(format!(
                        "{what} of {} bytes at offset {} on {}: {e}",
                        r.len, r.offset, setup.files[r.file as usize]
                    ));
                    continue;
                }
                Ok(n) if n != r.len => {
                    io_failed = true;
                    if error.is_none() {
                        errno = libc::EIO; // as fio reports a short transfer
                    }
                    error.get_or_insert(format!(
                        "short {what} at offset {} on {}: {n} of {} bytes",
                        r.offset, setup.files[r.file as usize], r.len
                    ));
                    continue;
                }
                Ok(_) => {}
            }
            if let Some(p) = pacer.as_mut() {
                p.completed(r.dir, r.len);
            }
            if setup.max_latency_ns > 0 && now - s.ready > setup.max_latency_ns {
                // fio's lat_fatal: the job ends with ETIMEDOUT, the request still counted.
                io_failed = true;
                if error.is_none() {
                    errno = libc::ETIMEDOUT;
                }
                error.get_or_insert(raidlab_workload::max_latency_exceeded(
                    now - s.ready,
                    setup.max_latency_ns,
                ));
            }
            if let Some(v) = &verify {
                let dump = dump_files.map(|f| f[r.file as usize].as_str());
                match pool.as_mut().filter(|_| deferred) {
                    Some(p) => {
                        let check = Check {
                            slot: comp.slot,
                            buf: bufs.slot(comp.slot) as usize,
                            len: r.len as usize,
                            offset: r.offset,
                            expect: s.expect,
                            form: setup.verify_form.clone(),
                            verify_all,
                            dump: dump.map(str::to_string),
                        };
                        if let Some((slot, checked)) = p.send(check) {
                            free.push(slot);
                            tally_check(checked, &mut c.verify, &mut error);
                        }
                    }
                    None => finish_verify(
                        &s,
                        (&v[r.file as usize], &setup.verify_form),
                        bufs.slot(comp.slot),
                        (verify_all, dump),
                        &mut c.verify,
                        &mut error,
                    ),
                }
                if setup.verify_fatal && c.verify.mismatches > 0 {
                    io_failed = true;
                }
                if (read_back || backlog.0 > 0) && r.dir == Dir::Write {
                    wrote.push((r.file, r.offset, r.len));
                    if backlog.0 > 0 && wrote.len() as u64 >= backlog.0 && pause.is_none() {
                        pause = Some(Pause::Backlog);
                    }
                }
            }
            bytes_done += r.len;
            ios_done += 1;
            completed_ios += 1;
            if let Some(sr) = search
                .as_mut()
                .filter(|_| now >= measure_from && !io_failed && !settled)
            {
                let lat = now - s.ready;
                match sr.completed(lat, now, completed_ios) {
                    DepthStep::Go => {}
                    DepthStep::GiveUp => {
                        // fio's lat_fatal: at depth 1 the target cannot be met.
                        io_failed = true;
                        if error.is_none() {
                            errno = libc::ETIMEDOUT;
                        }
                        error.get_or_insert(raidlab_workload::latency::missed_at_depth_1(
                            lat,
                            setup.latency.target_ns,
                        ));
                    }
                    step => take_step(
                        step,
                        &mut draining_to_zero,
                        &mut final_run_pending,
                        &mut settled,
                    ),
                }
            }
            if now < measure_from {
                continue;
            }
            last_counted = now;
            let d = match r.dir {
                Dir::Read => &mut c.read,
                Dir::Write => &mut c.write,
                Dir::Trim => &mut c.trim,
            };
            d.io_bytes += r.len;
            d.total_ios += 1;
            d.clat.record(now - s.submit);
            d.lat.record(now - s.ready);
            sampler.record(now - measure_from, r.dir as usize, r.len, now - s.submit);
            if let Some(l) = log.as_mut() {
                let dir = r.dir as u8;
                l.record(
                    now - measure_from,
                    dir,
                    r.len,
                    r.offset,
                    now - s.submit,
                    now - s.ready,
                );
            }
            c.passes.count(
                r.pass,
                r.dir as usize,
                r.len,
                s.submit.max(measure_from),
                now,
            );
        }
        if bytes_done > 0 {
            progress.fetch_add(bytes_done, Ordering::Relaxed);
            progress_ios.fetch_add(ios_done, Ordering::Relaxed);
        }
        if let Some(sr) = search
            .as_mut()
            .filter(|_| !draining_to_zero && !io_failed && !settled)
        {
            let step = sr.check(now, completed_ios);
            take_step(
                step,
                &mut draining_to_zero,
                &mut final_run_pending,
                &mut settled,
            );
        }
        if let Some(ss) = steady.as_ref().filter(|s| s.leader) {
            let t = now.saturating_sub(start);
            let mut judge = ss.judge.lock().unwrap_or_else(|p| p.into_inner());
            if t >= judge.due() {
                let (bytes, ios) = ss.members.iter().fold((0, 0), |(b, n), m| {
                    (
                        b + m.0.load(Ordering::Relaxed),
                        n + m.1.load(Ordering::Relaxed),
                    )
                });
                if judge.sample(t, bytes, ios) {
                    if ss.group {
                        halted[0].store(true, Ordering::Relaxed);
                    } else {
                        settled = true;
                    }
                }
            }
        }
        if let Some(p) = pacer.as_mut().filter(|_| now >= measure_from && !io_failed) {
            if let Err(e) = p.check_min_rate(now) {
                // fio ends a job that misses its minimum rate, with EIO.
                io_failed = true;
                if error.is_none() {
                    errno = libc::EIO;
                }
                error.get_or_insert(format!("{}: {e}", setup.name));
            }
        }
    }
    // A job that ran to its runtime's end ran all of it: time spent waiting on its rate,
    // think time or flow after its last completion is part of its runtime, as in fio
    // (without it a paced job's rate is over a shorter time than it ran, and reads high).
    if let Some(d) = deadline.filter(|&d| now >= d && !io_failed && stopped.is_none()) {
        last_counted = last_counted.max(d);
    }
    // Every check verify_async's threads still hold (a loop that broke off with requests in
    // flight), before the slots' buffers serve anything else; then the threads end.
    if let Some(mut p) = pool.take() {
        while p.pending > 0 {
            p.collect(true, &mut checks_back);
            for (_, checked) in checks_back.drain(..) {
                tally_check(checked, &mut c.verify, &mut error);
            }
        }
    }

    // fio's end_fsync: the flush is part of the job (its time counts in the rate).
    if setup.end_fsync && c.write.total_ios > 0 && !io_failed && stopped.is_none() {
        match exec.sync() {
            Ok(()) => last_counted = last_counted.max(clock.now_ns()),
            Err(e) => {
                if error.is_none() {
                    errno = errno_of(&e);
                    error = Some(format!("end_fsync: {e}"));
                }
            }
        }
    }
    // fio's do_verify: every block written, read back in offset order and checked, after the
    // job's measured part (the rates above are the writes').
    let ended_by_size = exhausted && deadline.is_none_or(|d| now < d);
    if let (true, Some(v)) = (read_back && ended_by_size, &verify) {
        if !io_failed && stopped.is_none() && !stop.load(Ordering::Relaxed) {
            let wrote = raidlab_workload::readback::end_blocks(std::mem::take(&mut wrote));
            if let Err((file, what, e)) = read_back_blocks(
                exec,
                &wrote,
                depth,
                bufs,
                (v, &setup.verify_form),
                (setup.verify_fatal, dump_files),
                (&mut c.verify, &mut error),
                (
                    clock.as_ref(),
                    ReadTally {
                        count: true,
                        from: measure_from,
                        read: &mut c.read,
                        spent: &mut read_backs,
                        sampler: &mut sampler,
                        log: log.as_mut(),
                    },
                ),
            ) {
                let at = &setup.files[file as usize];
                let line = format!("verify read-back: {what} on {at}: {e}");
                fail_with(&mut error, &mut errno, line, &e);
            }
        }
    }
    let end = clock.now_ns();
    let (eu, es) = exec.finish();
    let cpu1 = thread_cpu();
    let elapsed = end.saturating_sub(began).max(1);
    let measured = last_counted
        .max(measure_from)
        .saturating_sub(measure_from)
        .max(
            if c.read.total_ios + c.write.total_ios + c.trim.total_ios > 0 {
                1
            } else {
                0
            },
        );
    for d in [&mut c.read, &mut c.write, &mut c.trim] {
        if d.total_ios > 0 {
            d.runtime_ns = measured;
        }
    }
    if read_backs.ios > 0 && c.read.total_ios == read_backs.ios {
        // Reads that are all read-backs: their rate is over the time spent reading back.
        c.read.runtime_ns = read_backs.ns.max(1);
    }
    // Samples and logs run on through the read-backs at the end (fio samples its verify
    // phase too).
    let sampled = measured.max(read_backs.last_ns.saturating_sub(measure_from));
    [c.read.samples, c.write.samples, c.trim.samples] =
        sampler.finish_logged(sampled, log.as_mut());
    // (Passes that saw no counted I/O, all inside the ramp, were never counted.)
    let (passes, passes_between) = c.passes.finish();
    let pct = |ns: u64| ns as f64 * 100.0 / elapsed as f64;
    if error.is_some() && errno == 0 {
        // A verify mismatch is the only error without an errno of its own: fio says EILSEQ.
        errno = libc::EILSEQ;
    }
    JobResult {
        name: setup.name,
        groupid: setup.group_id,
        instances: 1,
        target: setup.target,
        engine: setup.engine.to_string(),
        read: c.read,
        write: c.write,
        trim: c.trim,
        sync: syncs,
        usr_cpu: pct(cpu1.0.saturating_sub(cpu0.0) + eu),
        sys_cpu: pct(cpu1.1.saturating_sub(cpu0.1) + es),
        runtime_sum_ns: 0,
        elapsed_ns: elapsed,
        passes,
        passes_between,
        verify: verify.as_ref().map(|_| c.verify),
        sim: None,
        stopped,
        error,
        iodepth_level: c.iodepth_level,
        // A verify mismatch is the only error without an errno of its own: fio says EILSEQ.
        errno,
        percentiles: Default::default(),
        unified_rw: Default::default(),
        significant_figures: None,
        decimal_first: false,
        rates_in_bits: false,
        description: None,
        cpus: Vec::new(),
        errors,
        mpi: None,
        steadystate: steady.as_ref().filter(|s| s.leader).map(|s| {
            s.judge
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .report()
                .clone()
        }),
        logs: log.into_iter().collect(),
        iologs: iolog
            .map(|mut l| {
                l.end_ns = now.saturating_sub(start);
                l
            })
            .into_iter()
            .collect(),
        latency_target: search.map(|s| raidlab_result::LatencyDepth {
            target_ns: setup.latency.target_ns,
            window_ns: setup.latency.window_ns,
            percentile: setup.latency.percentile,
            depth: s.depth(),
        }),
        // (Set from the job's options by the caller, as the other report options.)
        iodepth: None,
    }
}

/// What a latency-target search's step asks of the job's loop: drain before queueing again
/// (a lower depth, or the final run after it), or end.
fn take_step(step: DepthStep, drain: &mut bool, final_run: &mut bool, settled: &mut bool) {
    match step {
        DepthStep::Go | DepthStep::GiveUp => {}
        DepthStep::Drain => *drain = true,
        DepthStep::FinalRun => {
            *drain = true;
            *final_run = true;
        }
        DepthStep::Done => *settled = true,
    }
}

/// The job's error becomes `line`, with `e`'s errno, unless it has one already.
fn fail_with(error: &mut Option<String>, errno: &mut i32, line: String, e: &std::io::Error) {
    if error.is_none() {
        *errno = errno_of(e);
        *error = Some(line);
    }
}

/// A job's read-backs as fio counts them: as its reads, and their time as the read line's
/// runtime when the job reads nothing else (fio's do_verify phase sets the read runtime).
#[derive(Default)]
struct ReadBacks {
    /// Read-backs counted in the job's read statistics.
    ios: u64,
    /// Time spent reading back (each check from its first read to its last completion).
    ns: u64,
    /// When the last counted one completed (the clock's time; 0: none).
    last_ns: u64,
}

/// Where a check's read-backs are counted, as the job's reads: its read statistics, its
/// bandwidth and IOPS samples and its logs, as fio counts, samples and logs verify's reads
/// (see `Sampler::record_verify`).
struct ReadTally<'a> {
    /// Whether they count (not while the job ramps).
    count: bool,
    /// When the job's counting began (the clock's time).
    from: u64,
    read: &'a mut DirStats,
    spent: &'a mut ReadBacks,
    sampler: &'a mut raidlab_result::Sampler,
    log: Option<&'a mut JobLog>,
}

impl ReadTally<'_> {
    /// A read-back of `len` bytes at `offset` completed at `now`, `clat` after it was
    /// submitted.
    fn record(&mut self, now: u64, len: u64, offset: u64, clat: u64) {
        if !self.count {
            return;
        }
        self.read.io_bytes += len;
        self.read.total_ios += 1;
        self.read.clat.record(clat);
        self.read.lat.record(clat);
        self.spent.ios += 1;
        self.spent.last_ns = now;
        let t = now.saturating_sub(self.from);
        self.sampler.record_verify(t, Dir::Read as usize, len, clat);
        if let Some(l) = self.log.as_deref_mut() {
            l.record(t, Dir::Read as u8, len, offset, clat, clat);
        }
    }
}

/// Read the blocks `wrote` (file, offset, length; in that order) back through `exec`,
/// `depth` at a time, and check each against the generation last written there (`v`, by
/// file). Checked in `sum`; with `count`, each read counted in `read` as the job's reads
/// are, and the check's time and reads in `spent`. With `fatal`, the batch holding the first
/// mismatch is the last. An I/O error ends it: (its file, what failed, the error).
#[allow(clippy::too_many_arguments)]
fn read_back_blocks<E: Executor>(
    exec: &mut E,
    wrote: &[(u32, u64, u64)],
    depth: u32,
    bufs: &AlignedBuf,
    (v, form): (&[VerifyShared], &verify::Form),
    (fatal, dump): (bool, Option<&[String]>),
    (sum, error): (&mut VerifySummary, &mut Option<String>),
    (clock, mut tally): (&dyn Clock, ReadTally),
) -> Result<(), (u32, String, std::io::Error)> {
    let mut done: Vec<Completion> = Vec::with_capacity(depth as usize);
    let began = clock.now_ns();
    // (However the check ends, its time so far is spent.)
    let result = (|| {
        for batch in wrote.chunks(depth.max(1) as usize) {
            let mut slots = Vec::with_capacity(batch.len());
            for (i, &(file, offset, len)) in batch.iter().enumerate() {
                let slot = i as u32;
                let mut s = Slot {
                    req: Request {
                        seq: 0,
                        pass: 0,
                        file,
                        offset,
                        len,
                        dir: Dir::Read,
                    },
                    ready: 0,
                    submit: 0,
                    generation: 0,
                    check: false,
                    racy: false,
                    expect: None,
                };
                prepare_verify(
                    &mut s,
                    &mut [],
                    &[],
                    (&v[file as usize], form),
                    bufs.slot(slot),
                    0,
                );
                exec.queue(slot, file, Dir::Read, offset, bufs.slot(slot), len as usize);
                slots.push(s);
            }
            let mut left = batch.len();
            let submitted = clock.now_ns();
            while left > 0 {
                exec.submit_and_reap(1, usize::MAX, &mut done)
                    .map_err(|e| (batch[0].0, "submitting reads".to_string(), e))?;
                let now = clock.now_ns();
                for comp in done.drain(..) {
                    left -= 1;
                    let s = slots[comp.slot as usize];
                    let file = s.req.file;
                    match comp.res {
                        Ok(n) if n == s.req.len => {}
                        Ok(n) => {
                            return Err((
                                file,
                                format!("short read at offset {}", s.req.offset),
                                std::io::Error::new(
                                    std::io::ErrorKind::UnexpectedEof,
                                    format!("{n} of {} bytes", s.req.len),
                                ),
                            ))
                        }
                        Err(e) => {
                            return Err((file, format!("read at offset {}", s.req.offset), e))
                        }
                    }
                    tally.record(now, s.req.len, s.req.offset, now - submitted);
                    finish_verify(
                        &s,
                        (&v[file as usize], form),
                        bufs.slot(comp.slot),
                        (true, dump.map(|f| f[file as usize].as_str())),
                        sum,
                        error,
                    );
                }
            }
            if fatal && sum.mismatches > 0 {
                break;
            }
        }
        Ok(())
    })();
    if tally.count {
        tally.spent.ns += clock.now_ns().saturating_sub(began);
    }
    result
}

/// Before queueing: writes get their header and generation; reads decide what to expect.
fn prepare_verify(
    s: &mut Slot,
    slots: &mut [Slot],
    inflight: &[u32],
    (v, form): (&VerifyShared, &verify::Form),
    buf: *mut u8,
    seed: u64,
) {
    let off = s.req.offset;
    // (Requests of several sizes may overlap without starting at one offset.)
    let (file, end) = (s.req.file, off + s.req.len);
    let overlaps = |o: &Request| o.file == file && o.offset < end && off < o.offset + o.len;
    match s.req.dir {
        Dir::Write => {
            s.generation = v.generation.fetch_add(1, Ordering::Relaxed) + 1;
            for &i in inflight {
                let o = &mut slots[i as usize];
                if overlaps(&o.req) {
                    match o.req.dir {
                        // A read racing this write may see either version: do not judge it.
                        Dir::Read => o.check = false,
                        // Two writes racing: either may land last.
                        Dir::Write => s.racy = true,
                        Dir::Trim => {}
                    }
                }
            }
            // SAFETY: the slot's buffer is `len` bytes and idle until queued.
            let b = unsafe { std::slice::from_raw_parts_mut(buf, s.req.len as usize) };
            verify::fill(b, off, s.generation, seed, form);
        }
        Dir::Read => {
            let racing = inflight.iter().any(|&i| {
                let o = &slots[i as usize];
                o.req.dir == Dir::Write && overlaps(&o.req)
            });
            s.check = !racing;
            s.expect = v
                .last_gen
                .lock()
                .map(|m| m.get(&off).copied())
                .unwrap_or(None);
        }
        // (verify with trims is refused: nothing to prepare.)
        Dir::Trim => {}
    }
}

/// After a successful completion: writes record their generation; reads are checked.
fn finish_verify(
    s: &Slot,
    (v, form): (&VerifyShared, &verify::Form),
    buf: *mut u8,
    (verify_all, dump): (bool, Option<&str>),
    sum: &mut VerifySummary,
    error: &mut Option<String>,
) {
    let off = s.req.offset;
    match s.req.dir {
        Dir::Write => {
            if let Ok(mut m) = v.last_gen.lock() {
                let (g, len) = (s.generation, s.req.len);
                match m.get_mut(&off) {
                    // A write that raced another may have landed first: expect the older one.
                    Some(e) => {
                        *e = if s.racy {
                            (e.0.min(g), e.1.min(len))
                        } else if g > e.0 {
                            (g, len)
                        } else {
                            *e
                        }
                    }
                    // (A write that raced another expects nothing of the spans they share: the
                    // other, older or not, may have landed on them last.)
                    None => {
                        m.insert(off, (if s.racy { 0 } else { g }, len));
                    }
                }
            }
        }
        Dir::Read => {
            if !s.check {
                return;
            }
            // SAFETY: the read filled `len` bytes of the slot's buffer.
            let b = unsafe { std::slice::from_raw_parts(buf as *const u8, s.req.len as usize) };
            let checked = check_read(b, off, s.expect, form, (verify_all, dump));
            tally_check(checked, sum, error);
        }
        Dir::Trim => {}
    }
}

/// What a read's check found.
enum Checked {
    /// Not judged: never written with verify, and the job does not claim it was.
    Skipped,
    Passed,
    /// The mismatch, described.
    Failed(String),
}

/// Check `b`, read from `off`, against the last write there (`expect`) as `form` says; with
/// `dump` (fio's verify_dump) a block that fails is written out.
fn check_read(
    b: &[u8],
    off: u64,
    expect: Option<(u64, u64)>,
    form: &verify::Form,
    (verify_all, dump): (bool, Option<&str>),
) -> Checked {
    // Never written with verify (no header; with no header at all, not this run), and this
    // job does not claim it was.
    let unwritten = !form.header || verify::read_header(b).is_none();
    if expect.is_none() && !verify_all && unwritten {
        return Checked::Skipped;
    }
    match verify::check(b, off, expect, form) {
        Ok(_) => Checked::Passed,
        Err(m) => {
            // fio's verify_dump: what was read, and what should have been.
            if let Some(file) = dump {
                if let Err(e) = verify::dump(file, off, b, form) {
                    crate::ewriteln!("raidlab: warning: verify_dump of {file} at {off}: {e}");
                }
            }
            Checked::Failed(m.describe())
        }
    }
}

/// Count a check's outcome into the job's verify summary (the first mismatch is its error).
fn tally_check(c: Checked, sum: &mut VerifySummary, error: &mut Option<String>) {
    match c {
        Checked::Skipped => {}
        Checked::Passed => sum.blocks_checked += 1,
        Checked::Failed(d) => {
            sum.blocks_checked += 1;
            sum.mismatches += 1;
            if sum.first_mismatch.is_none() {
                error.get_or_insert(format!("verify: {d}"));
                sum.first_mismatch = Some(d);
            }
        }
    }
}

/// fio's `verify_async`: threads that check the job's reads off its own thread. A read to
/// check keeps its slot (its buffer holds the data) until its check comes back, so the
/// job's depth counts it until then, as fio holds the request.
struct VerifyPool {
    to: Option<std::sync::mpsc::Sender<Check>>,
    from: std::sync::mpsc::Receiver<(u32, Checked)>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Checks sent and not yet collected.
    pending: u32,
}

/// One read for a [`VerifyPool`] to check.
struct Check {
    slot: u32,
    /// The slot's buffer (an address: it stays put, and unused, until the check returns).
    buf: usize,
    len: usize,
    offset: u64,
    expect: Option<(u64, u64)>,
    form: verify::Form,
    verify_all: bool,
    dump: Option<String>,
}

impl Check {
    fn run(&self) -> Checked {
        // SAFETY: the slot's buffer holds the `len` bytes read into it, and the job neither
        // reuses the slot nor frees the buffers until this check is collected (or, on its
        // way out, the pool's threads are joined).
        let b = unsafe { std::slice::from_raw_parts(self.buf as *const u8, self.len) };
        let dump = self.dump.as_deref();
        check_read(
            b,
            self.offset,
            self.expect,
            &self.form,
            (self.verify_all, dump),
        )
    }
}

impl VerifyPool {
    fn new(threads: u32) -> std::io::Result<VerifyPool> {
        let (to, work) = std::sync::mpsc::channel::<Check>();
        let (done, from) = std::sync::mpsc::channel();
        let work = Arc::new(Mutex::new(work));
        let mut pool = VerifyPool {
            to: Some(to),
            from,
            threads: Vec::new(),
            pending: 0,
        };
        for i in 0..threads {
            let (work, done) = (Arc::clone(&work), done.clone());
            let h = std::thread::Builder::new()
                .name(format!("raidlab-verify{i}"))
                .spawn(move || loop {
                    let next = work.lock().map(|w| w.recv());
                    let Ok(Ok(c)) = next else { break };
                    if done.send((c.slot, c.run())).is_err() {
                        break;
                    }
                })?;
            pool.threads.push(h);
        }
        Ok(pool)
    }

    /// Hand a read to the threads; it comes back by [`VerifyPool::collect`]. Checked here
    /// instead (and returned at once) if the threads are gone.
    fn send(&mut self, c: Check) -> Option<(u32, Checked)> {
        let sent = self.to.as_ref().map(|t| t.send(c));
        match sent {
            Some(Ok(())) => {
                self.pending += 1;
                None
            }
            Some(Err(std::sync::mpsc::SendError(c))) => Some((c.slot, c.run())),
            None => unreachable!("the sender lives as long as the pool"),
        }
    }

    /// The checks that have come back; with `wait`, at least one (if any is pending).
    fn collect(&mut self, wait: bool, out: &mut Vec<(u32, Checked)>) {
        if wait && self.pending > 0 {
            match self.from.recv() {
                Ok(r) => {
                    self.pending -= 1;
                    out.push(r);
                }
                // (The threads are gone: what they held will not come back.)
                Err(_) => self.pending = 0,
            }
        }
        while self.pending > 0 {
            match self.from.try_recv() {
                Ok(r) => {
                    self.pending -= 1;
                    out.push(r);
                }
                Err(_) => break,
            }
        }
    }
}

impl Drop for VerifyPool {
    fn drop(&mut self) {
        drop(self.to.take());
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use raidlab_workload::{apply_option, JobInstance, JobSpec};
    use std::io;

    /// An executor that records how many requests each hand-off to the "kernel" carries
    /// (`submit`, or what `submit_and_reap` still finds queued) and completes as many
    /// handed-off requests a reap as it may take, oldest first.
    #[derive(Default)]
    struct Recorder {
        queued: Vec<u32>,
        handed: std::collections::VecDeque<(u32, u64)>,
        handoffs: Vec<usize>,
        /// Every this many completions (the first included), one fails with this errno, or
        /// (errno 0) is short by half.
        fail_every: Option<(usize, i32)>,
        completions: usize,
    }

    impl Recorder {
        fn hand_off(&mut self) {
            if !self.queued.is_empty() {
                self.handoffs.push(self.queued.len());
                for s in self.queued.drain(..) {
                    self.handed.push_back((s, 4096));
                }
            }
        }
    }

    impl Executor for Recorder {
        fn queue(
            &mut self,
            slot: u32,
            _file: u32,
            _dir: Dir,
            _offset: u64,
            _buf: *mut u8,
            len: usize,
        ) {
            assert_eq!(len, 4096);
            self.queued.push(slot);
        }
        fn submit(&mut self) {
            self.hand_off();
        }
        fn submits_early(&self) -> bool {
            true
        }
        fn submit_and_reap(
            &mut self,
            min: usize,
            max: usize,
            done: &mut Vec<Completion>,
        ) -> io::Result<()> {
            self.hand_off();
            for _ in 0..max.max(min) {
                let Some((slot, n)) = self.handed.pop_front() else {
                    break;
                };
                let res = match self.fail_every {
                    Some((every, errno)) if self.completions.is_multiple_of(every) => {
                        if errno == 0 {
                            Ok(n / 2)
                        } else {
                            Err(io::Error::from_raw_os_error(errno))
                        }
                    }
                    _ => Ok(n),
                };
                self.completions += 1;
                done.push(Completion { slot, res });
            }
            Ok(())
        }
    }

    /// 64 reads of 4 KiB at depth 8, reaped three at a time, `iodepth_batch_submit` =
    /// `batch`: the hand-offs.
    fn handoffs(batch: &str) -> (Vec<usize>, u64) {
        handoffs_with(&[("iodepth_batch_submit", batch)])
    }

    fn handoffs_with(options: &[(&str, &str)]) -> (Vec<usize>, u64) {
        let (h, r) = run_with(options);
        (h, r.read.total_ios)
    }

    fn run_with(options: &[(&str, &str)]) -> (Vec<usize>, JobResult) {
        run_failing(options, None)
    }

    /// [`run_with`] where every `fail.0`th completion fails with errno `fail.1` (0: short).
    fn run_failing(
        options: &[(&str, &str)],
        fail: Option<(usize, i32)>,
    ) -> (Vec<usize>, JobResult) {
        run_set(options, fail, |_, _| {})
    }

    /// [`run_failing`] with the job's setup changed by `set` (given the spec) before it runs.
    fn run_set(
        options: &[(&str, &str)],
        fail: Option<(usize, i32)>,
        set: impl FnOnce(&mut JobSetup, &JobSpec),
    ) -> (Vec<usize>, JobResult) {
        let mut spec = JobSpec::default();
        for &(k, v) in [
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "256k"),
            ("iodepth", "8"),
            ("iodepth_batch_complete_max", "3"),
        ]
        .iter()
        .chain(options)
        {
            apply_option(&mut spec, k, Some(v)).unwrap();
        }
        spec.filenames = vec!["recorder".into()];
        let inst = JobInstance::expand(std::slice::from_ref(&spec)).remove(0);
        let setup = JobSetup {
            name: "t".into(),
            target: "recorder".into(),
            files: vec!["recorder".into()],
            engine: "test",
            group_id: 0,
            stream: raidlab_workload::JobStream::new(&spec, &inst, &[256 << 10]).unwrap(),
            depth: spec.iodepth,
            submit_batch: spec.submit_batch(),
            refill_at: spec.refill_at(),
            reap: spec.reap_bounds(),
            ramp_ns: 0,
            runtime_ns: None,
            verify: None,
            verify_form: Default::default(),
            verify_all: false,
            seed: 1,
            clock: Arc::new(crate::clock::Stepping::new(1000)),
            stop: Arc::new(AtomicBool::new(false)),
            halted: Default::default(),
            flow: None,
            progress: Arc::new(AtomicU64::new(0)),
            progress_ios: Arc::new(AtomicU64::new(0)),
            steady: None,
            max_latency_ns: spec.max_latency_ns,
            latency: spec.latency,
            end_fsync: false,
            read_back: false,
            backlog: (0, 0),
            fill: false,
            log_epoch: None,
            verify_fatal: false,
            verify_dump: false,
            on_error: spec.on_error.clone(),
            pacer: None,
            start_delay_ns: 0,
            log: None,
            iolog: None,
            sampler: raidlab_result::Sampler::default(),
            content: ContentGen::new(&spec.buffers, 1),
            verify_async: spec.verify_async,
            start_gate: None,
        };
        let mut setup = setup;
        set(&mut setup, &spec);
        let mut exec = Recorder {
            fail_every: fail,
            ..Default::default()
        };
        let bufs = AlignedBuf::new(8, 4096, 4096, &ContentGen::new(&Default::default(), 0));
        let r = drive(setup, &mut exec, &bufs);
        (exec.handoffs, r)
    }

    /// fio's steady state: a time-based job whose rate is steady (the stepping clock's) ends
    /// once a full window of samples is within the limit, long before its runtime, as at
    /// its runtime's end (not interrupted), and carries the report; a window it cannot fill
    /// leaves it to its runtime.
    #[test]
    fn a_steady_job_ends_once_its_window_settles() {
        let run = |criterion: &str, dur: &str| {
            let opts = [
                ("time_based", "1"),
                ("runtime", "60s"),
                ("norandommap", "1"),
                ("ss", criterion),
                ("ss_dur", dur),
            ];
            run_set(&opts, None, |setup, spec| {
                setup.runtime_ns = spec.runtime_ns;
                setup.steady = Some(SteadyShare {
                    judge: Arc::new(Mutex::new(steady_judge(spec))),
                    members: vec![(Arc::clone(&setup.progress), Arc::clone(&setup.progress_ios))]
                        .into(),
                    leader: true,
                    group: false,
                });
            })
            .1
        };
        let r = run("iops:5%", "3s");
        let ss = r.steadystate.expect("a report");
        assert!(ss.attained, "{ss:?}");
        assert_eq!(ss.iops.len(), 3);
        assert_eq!(r.stopped, None);
        assert!(r.read.runtime_ns < 10_000_000_000, "{}", r.read.runtime_ns);
        // A window longer than the runtime is never full.
        let r = run("iops:5%", "120s");
        assert!(!r.steadystate.expect("a report").attained);
        assert!(r.read.runtime_ns >= 60_000_000_000, "{}", r.read.runtime_ns);
    }

    /// A paced job run to its runtime's end ran all of it: its runtime is the runtime asked
    /// for, not the time to its last completion, so its rate is over the time it ran (as
    /// fio's: rate_iops=3 over 1 s is 3 IOPS, not 3 over the ~0.67 s to the third request).
    #[test]
    fn a_paced_job_run_to_its_end_counts_all_of_its_runtime() {
        let opts = [
            ("time_based", "1"),
            ("runtime", "1s"),
            ("rate_iops", "3"),
            ("iodepth", "1"),
        ];
        let (_, r) = run_set(&opts, None, |setup, spec| {
            setup.runtime_ns = spec.runtime_ns;
            setup.pacer = raidlab_workload::Pacer::new(spec, 1);
        });
        assert_eq!((r.error, r.stopped), (None, None));
        assert_eq!(r.read.total_ios, 3);
        assert_eq!(r.read.runtime_ns, 1_000_000_000);
    }

    /// fio's max_latency: the first request whose total latency exceeds it ends the job with
    /// ETIMEDOUT and fio 3.33's words (in nsec); a bound none reaches changes nothing.
    #[test]
    fn max_latency_ends_the_job_with_etimedout() {
        // (The stepping clock moves 1 µs a reading: a request takes several.)
        let (_, r) = run_with(&[("max_latency", "1")]);
        assert_eq!(r.errno, libc::ETIMEDOUT);
        let e = r.error.unwrap();
        assert!(e.contains("exceeds specified max (1000 nsec)"), "{e}");
        assert!(r.read.total_ios < 64);
        // A limit under a microsecond is said as given, not rounded to 0.
        let (_, r) = run_with(&[("max_latency", "1ns")]);
        let e = r.error.unwrap();
        assert!(e.contains("exceeds specified max (1 nsec)"), "{e}");
        let (_, r) = run_with(&[("max_latency", "10s")]);
        assert_eq!((r.error, r.read.total_ios), (None, 64));
    }

    /// fio's continue_on_error: errors of the kinds and errnos it names are counted and gone
    /// past (their requests not measured), others end the job, counted too; without it, the
    /// first error ends the job and no count is kept.
    #[test]
    fn continue_on_error_counts_and_goes_past_the_errors_it_names() {
        let eio = Some((8, libc::EIO)); // 8 of the 64 reads fail
        let (_, r) = run_failing(&[("continue_on_error", "read")], eio);
        assert_eq!(r.error, None);
        assert_eq!(r.errors.unwrap().total, 8);
        assert_eq!(r.errors.unwrap().first, libc::EIO);
        assert_eq!(r.read.total_ios, 56);
        assert_eq!(r.read.io_bytes, 56 * 4096);
        // Short transfers count as EIO, as fio reports them.
        let (_, r) = run_failing(&[("continue_on_error", "io")], Some((16, 0)));
        assert_eq!(
            (r.errors.unwrap().total, r.errors.unwrap().first),
            (4, libc::EIO)
        );
        assert_eq!(r.read.total_ios, 60);
        // ENOSPC is not among fio's defaults (EIO, EILSEQ): it ends the job, counted.
        let nospc = Some((8, libc::ENOSPC));
        let (_, r) = run_failing(&[("continue_on_error", "all")], nospc);
        assert_eq!(r.errno, libc::ENOSPC);
        assert!(r.error.is_some());
        assert!(r.errors.unwrap().total >= 1);
        assert!(r.read.total_ios < 56);
        // Unless ignore_error lists it for the kind.
        let (_, r) = run_failing(
            &[
                ("continue_on_error", "read"),
                ("ignore_error", "ENOSPC:EIO"),
            ],
            nospc,
        );
        assert_eq!((r.error.as_deref(), r.errors.unwrap().total), (None, 8));
        // Writes' errors do not cover reads.
        let (_, r) = run_failing(&[("continue_on_error", "write")], eio);
        assert_eq!(r.errno, libc::EIO);
        assert!(r.error.is_some());
        // Without the option: the first error ends the job, no count.
        let (_, r) = run_failing(&[], eio);
        assert_eq!((r.errno, r.errors), (libc::EIO, None));
        let (_, r) = run_failing(&[("continue_on_error", "read")], None);
        assert_eq!(r.errors, Some(ErrorCount::default()));
        assert_eq!(r.read.total_ios, 64);
    }

    #[test]
    fn requests_go_to_the_kernel_in_batches_of_iodepth_batch_submit() {
        // fio's default, 1: each request on its own, as soon as it is queued.
        let (h, ios) = handoffs("1");
        assert_eq!(ios, 64);
        assert_eq!(h.len(), 64, "{h:?}");
        assert!(h.iter().all(|&n| n == 1), "{h:?}");
        // 4: the first eight in two fours; each refill of three (the reaps take three) is
        // handed off whole when the driver waits, being short of four.
        let (h, ios) = handoffs("4");
        assert_eq!(ios, 64);
        assert_eq!(&h[..2], &[4, 4], "{h:?}");
        assert!(h[2..h.len() - 1].iter().all(|&n| n == 3), "{h:?}");
        // 0: the whole depth at once, then whatever the driver refilled.
        let (h, ios) = handoffs("0");
        assert_eq!(ios, 64);
        assert_eq!(h[0], 8, "{h:?}");
        assert_eq!(h.iter().sum::<usize>(), 64);
    }

    #[test]
    fn a_full_queue_drains_to_iodepth_low_before_it_is_filled_again() {
        // Reaps of three: 8 → 5 → 2 in flight, then six go in at once (handed off whole).
        let (h, ios) = handoffs_with(&[("iodepth_batch_submit", "0"), ("iodepth_low", "2")]);
        assert_eq!(ios, 64);
        assert_eq!(&h[..3], &[8, 6, 6], "{h:?}");
        // Reaps of one: 8 → 7 → … → 2, then the same six.
        let (h1, _) = handoffs_with(&[
            ("iodepth_batch_submit", "0"),
            ("iodepth_low", "2"),
            ("iodepth_batch_complete_max", "1"),
        ]);
        assert_eq!(&h1[..3], &[8, 6, 6], "{h1:?}");
        // Waiting for five completions a reap (the recorder then gives five): 8 → 3 in
        // flight, then five go in.
        let (h2, _) = handoffs_with(&[
            ("iodepth_batch_submit", "0"),
            ("iodepth_batch_complete_min", "5"),
        ]);
        assert_eq!(&h2[..3], &[8, 5, 5], "{h2:?}");
        // A reap of three makes room for three.
        let (h3, _) = handoffs("0");
        assert_eq!(&h3[..3], &[8, 3, 3], "{h3:?}");
    }

    /// fio's defaults take one completion a reap and queue one request in its place: past
    /// the first eight, each goes in with the queue full again, and fio's IO depths count
    /// it there. Taking three a reap, the refill's requests go in at depths 6, 7 and 8.
    #[test]
    fn the_default_reaps_one_and_counts_each_request_at_its_own_depth() {
        let (h, r) = run_with(&[("iodepth_batch_complete_max", "1")]);
        assert!(h.iter().all(|&n| n == 1) && h.len() == 64, "{h:?}");
        // Buckets 1, 2–3, 4–7, 8–15: the first eight at depths 1 to 8, the other 56 at 8.
        assert_eq!(r.iodepth_level[..4], [1, 2, 4, 57], "{:?}", r.iodepth_level);
        let (_, r3) = run_with(&[]);
        // Depths 6 and 7 (bucket 4–7) for two of every three after the first eight.
        assert!(r3.iodepth_level[2] > 30, "{:?}", r3.iodepth_level);
    }
}
