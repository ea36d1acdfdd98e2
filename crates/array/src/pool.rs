//! Parallel member I/O. The member reads or writes of one phase of a plan are submitted
//! together and waited for together, so every member works at the same time.
//!
//! Two ways of doing it, chosen per member when the array is assembled:
//! - **io_uring** (the default for members on block devices and disk filesystems): members
//!   are read and written through a ring; one ring serves one submitting thread at a time
//!   (rings are taken from a free list, and a new one is set up when every ring is busy).
//!   Each batch's operations go in as SQEs, one `io_uring_enter` submits them, and
//!   completions are reaped together; short reads and writes are resubmitted for the rest,
//!   metadata writes are followed by an fdatasync SQE. A batch can take several submissions
//!   before its wait, so parity of the next stripe is computed while writes are in flight.
//! - **threads**: members in memory (tmpfs, ramfs) share as many threads as there are CPUs,
//!   the submitting threads among them — their I/O is a memory copy, which io_uring would
//!   hand to its io-wq workers one SQE at a time (measured slower, see BENCHMARKS.md,
//!   Arrays). Their operations go into per-member queues as soon as they are submitted;
//!   worker threads, and submitting threads while they wait for their batch, take them, one
//!   thread per member at a time (see `Shared`). Where io_uring cannot be set up (old
//!   kernels, seccomp, `io_uring_disabled`), and for child arrays of a nested array, each
//!   device gets a pread/pwrite thread (*lane*) of its own.
//!
//! `RAIDLAB_MEMBER_IO=auto|uring|uring-async|psync` forces a method (`uring-async` flags every
//! SQE IOSQE_ASYNC); set `RAIDLAB_DEBUG` to have the choice printed when an array is
//! assembled.
//!
//! Every operation of a batch runs to completion even if another fails, so the caller sees
//! every member that failed and the state a retry starts from is well defined.

use crate::member::{memory_backed, AlignedBuf};
use crate::stripe_copy::StripeCopy;
use raidlab_engine::ewriteln;
use std::collections::VecDeque;
use std::io;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A device the array reads and writes: a member's data area, or a child array.
pub trait Dev: Send + Sync {
    fn read(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    fn write(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    fn flush(&self) -> io::Result<()>;
    /// Discard `len` bytes of the data area at `offset` so that they read as zeros after
    /// (what a trim needs of a member: see `raidlab_geometry::trim_extents`). A device that
    /// cannot says so (the default).
    fn trim(&self, _offset: u64, _len: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this device takes no trims",
        ))
    }
    /// The file descriptor and the byte offset of the data area within it, for devices a ring
    /// can read and write directly (files and block devices). `None` for child arrays.
    fn raw(&self) -> Option<(RawFd, u64)> {
        None
    }
    /// Write metadata at an absolute byte offset (outside the data area) and make it durable.
    fn write_meta(&self, _buf: &[u8], _offset: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this device holds no member metadata",
        ))
    }
    /// The alignment direct I/O through `raw()`'s descriptor needs (offset, length, buffer
    /// address); 1 if none. `read`, `write` and `write_meta` take any alignment.
    fn align(&self) -> u64 {
        1
    }
    /// Where `len` bytes of the data area at `offset` can be read and written in memory (a
    /// mapped member, its pages allocated), or None: then only `read` and `write` reach
    /// them. A write through the pointer is a write to the device.
    fn map_data(&self, _offset: u64, _len: usize) -> Option<*mut u8> {
        None
    }
}

/// One member operation. The buffer is referenced by pointer because it is borrowed from the
/// caller's stack frame for exactly the duration of a batch ([`Pool::run`], or a [`Batch`]
/// until it is waited for or dropped).
pub struct Op {
    pub dev: usize,
    pub offset: u64,
    ptr: *mut u8,
    len: usize,
    write: bool,
    /// Metadata: `offset` is absolute (not in the data area) and the write is made durable
    /// (fdatasync) before the op counts as done.
    meta: bool,
    /// A full-stripe write to mapped members, done as memory copies (`dev` is its parity
    /// member, for the queue it waits in): never on a ring.
    stripe: Option<Box<StripeCopy>>,
}

unsafe impl Send for Op {}

#[cfg_attr(not(test), allow(dead_code))]
impl Op {
    pub fn read(dev: usize, offset: u64, buf: &mut [u8]) -> Op {
        Op {
            dev,
            offset,
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
            write: false,
            meta: false,
            stripe: None,
        }
    }
    /// # Safety
    /// `ptr` must point at `len` bytes that stay valid (and, for reads, unaliased) until the
    /// batch this op is submitted to has been waited for (or dropped).
    pub unsafe fn raw(dev: usize, offset: u64, ptr: *mut u8, len: usize, write: bool) -> Op {
        Op {
            dev,
            offset,
            ptr,
            len,
            write,
            meta: false,
            stripe: None,
        }
    }
    /// A full-stripe write to mapped members, queued as an operation on `dev`.
    ///
    /// # Safety
    /// As [`StripeCopy::run`]'s, until the batch this op is submitted to has been waited
    /// for (or dropped); `dev` is served by threads, not a ring.
    pub unsafe fn stripe_copy(dev: usize, sc: StripeCopy) -> Op {
        Op {
            dev,
            offset: 0,
            ptr: std::ptr::null_mut(),
            len: sc.bytes(),
            write: true,
            meta: false,
            stripe: Some(Box::new(sc)),
        }
    }
    pub fn write(dev: usize, offset: u64, buf: &[u8]) -> Op {
        Op {
            dev,
            offset,
            ptr: buf.as_ptr() as *mut u8,
            len: buf.len(),
            write: true,
            meta: false,
            stripe: None,
        }
    }
    /// Write metadata (superblock area, bitmap) at absolute byte `offset` of the device and
    /// make it durable before the batch counts it done.
    pub fn meta_write(dev: usize, offset: u64, buf: &[u8]) -> Op {
        Op {
            dev,
            offset,
            ptr: buf.as_ptr() as *mut u8,
            len: buf.len(),
            write: true,
            meta: true,
            stripe: None,
        }
    }
    fn exec(&self, dev: &dyn Dev) -> io::Result<()> {
        // SAFETY: the pointer and length come from a live slice whose borrow outlives the
        // batch (a batch does not end before every op has executed); reads get a unique
        // borrow, and writes only read through the pointer.
        unsafe {
            if let Some(sc) = &self.stripe {
                // SAFETY: the contract of `Op::stripe_copy`.
                sc.run();
                Ok(())
            } else if self.meta {
                dev.write_meta(std::slice::from_raw_parts(self.ptr, self.len), self.offset)
            } else if self.write {
                dev.write(std::slice::from_raw_parts(self.ptr, self.len), self.offset)
            } else {
                dev.read(
                    std::slice::from_raw_parts_mut(self.ptr, self.len),
                    self.offset,
                )
            }
        }
    }
}

/// How member I/O is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberIo {
    /// io_uring for members on devices and disk filesystems; worker threads for members in
    /// memory (tmpfs, ramfs), whose I/O is a memory copy that only threads run in parallel.
    Auto,
    /// io_uring for every member; `punt`: every SQE flagged IOSQE_ASYNC (straight to the
    /// kernel's io-wq workers instead of first trying inline at submit).
    Uring { punt: bool },
    /// One pread/pwrite worker thread per member.
    Psync,
}

impl MemberIo {
    pub fn name(self) -> &'static str {
        match self {
            MemberIo::Auto => "auto",
            MemberIo::Uring { punt: true } => "io_uring (async punt)",
            MemberIo::Uring { punt: false } => "io_uring",
            MemberIo::Psync => "psync (thread per member)",
        }
    }

    /// The method asked for by `RAIDLAB_MEMBER_IO`, else the default.
    fn from_env() -> Result<MemberIo, String> {
        match std::env::var("RAIDLAB_MEMBER_IO").as_deref() {
            Err(_) | Ok("") => Ok(DEFAULT_IO),
            Ok("auto") => Ok(MemberIo::Auto),
            Ok("uring") => Ok(MemberIo::Uring { punt: false }),
            Ok("uring-async") => Ok(MemberIo::Uring { punt: true }),
            Ok("psync") => Ok(MemberIo::Psync),
            Ok(v) => Err(format!(
                "RAIDLAB_MEMBER_IO={v} is not valid (valid: auto, uring, uring-async, psync)"
            )),
        }
    }
}

/// The default, chosen by measurement (BENCHMARKS.md, Arrays): a buffered write to a tmpfs
/// file cannot be done without blocking, so io_uring hands every one to its io-wq workers,
/// and io-wq runs buffered writes to regular files on about one worker — full-stripe writes
/// to tmpfs members ran at about half the rate of a thread per member (with or without
/// IOSQE_ASYNC). Members on devices and disk filesystems, where the kernel itself does the
/// I/O asynchronously, go through the ring.
pub const DEFAULT_IO: MemberIo = MemberIo::Auto;

/// Submission queue entries per ring; a batch with more operations keeps this many in flight.
const RING_ENTRIES: u32 = 128;
/// The most bytes one SQE moves (the rest of a longer operation is resubmitted).
const MAX_SQE_BYTES: usize = 1 << 30;
/// Resubmissions of one operation after EAGAIN/EINTR before it counts as failed.
const MAX_RETRIES: u32 = 1000;

/// Completion count of a set of operations handed to worker threads.
struct Counter {
    state: Mutex<(usize, Vec<(usize, io::Error)>)>,
    /// Signalled when the count reaches zero, and when [`Counter::wake`] is called.
    done: Condvar,
    /// Bumped (then `done` signalled under `state`'s lock) whenever one of these operations
    /// may have become runnable: a waiter that saw no operation it could start re-checks
    /// before it sleeps, so no such change is missed.
    epoch: AtomicUsize,
}

impl Counter {
    fn new() -> Arc<Counter> {
        Arc::new(Counter {
            state: Mutex::new((0, Vec::new())),
            done: Condvar::new(),
            epoch: AtomicUsize::new(0),
        })
    }
    /// One of these operations may be runnable now (its member was released).
    fn wake(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        let _held = self.state.lock().unwrap();
        self.done.notify_all();
    }
    fn remaining(&self) -> usize {
        self.state.lock().unwrap().0
    }
    /// `n` units of work are done, with these errors.
    fn finish(&self, n: usize, errs: Vec<(usize, io::Error)>) {
        let mut st = self.state.lock().unwrap();
        st.0 -= n;
        st.1.extend(errs);
        if st.0 == 0 {
            self.done.notify_all();
        }
    }
}

type Job = (Vec<Op>, Arc<Counter>);

/// Memory-backed members' operations not yet taken by a thread, from every batch in flight,
/// queued per member. A thread takes a member's next operation only while no other thread is
/// writing that member, and keeps to the member it has just written while it has work; it
/// looks at its home members first, then at any other: a member file is written by one
/// thread at a time, mostly the same one (two writers of one tmpfs file contend for its inode
/// lock and pass its page-cache structures between CPUs), and the threads stay busy as long
/// as there is work, whichever request it belongs to. A request's writes start as soon as
/// they are submitted. Home 0 belongs to the submitting threads (they work through the
/// queues while they wait for their batch).
struct Shared {
    state: Mutex<SharedState>,
    more: Condvar,
    /// Changes whenever work is queued or a member is released (watched without the lock
    /// by a worker polling before it sleeps).
    stamp: AtomicUsize,
    /// Batches with memory-backed operations not all done. A submitting thread polls for
    /// its last writes only when its batch is the only one: with more submitters than
    /// CPUs, polling takes the CPU from threads with work.
    active: AtomicUsize,
    /// Per device, the thread it is home to.
    home: Vec<usize>,
}

type Task = (Op, Arc<Counter>);

/// How long a thread out of work polls before it sleeps: a worker for more work (the gap
/// between one request's last write and the next request's first, from a writer with one
/// request in flight: the caller's own work between requests, then planning), a submitting
/// thread for the last writes of its batch that other threads are running. Waking a
/// sleeping thread on an idle CPU costs more than that in latency (a virtual CPU that halts
/// needs an interrupt), and meanwhile the other thread does the sleeper's share. Measured on
/// an idle 2-CPU machine (BENCHMARKS.md, Arrays): without polling full-stripe writes ran at
/// 0.47–0.51 of the direct writers, with 30 µs 0.64–0.70; with stripe copies into mapped
/// members, 100 µs against 30 µs took `raidlab run` 2 MiB writes from 670–890 context
/// switches per 5 GiB to 95–184 and 9.2–9.7 to 10.0–11.1 GB/s, and the bench from 0.77–0.91
/// to 0.95–1.01 of the memcpy peer. On a busy machine the polling costs CPU: at most this
/// long per request.
const POLL: std::time::Duration = std::time::Duration::from_micros(100);

struct SharedState {
    /// Per device, its operations not yet started.
    tasks: Vec<VecDeque<Task>>,
    /// Per device, whether a thread is running one of its operations.
    busy: Vec<bool>,
    /// Workers asleep waiting for tasks.
    idle: usize,
    closed: bool,
}

impl Shared {
    fn push(&self, ops: Vec<Op>, counter: &Arc<Counter>) {
        counter.state.lock().unwrap().0 += ops.len();
        let wake = {
            let mut st = self.state.lock().unwrap();
            for op in ops {
                let d = op.dev;
                st.tasks[d].push_back((op, Arc::clone(counter)));
            }
            self.stamp.fetch_add(1, Ordering::Release);
            st.idle > 0
        };
        if wake {
            self.more.notify_all();
        }
    }

    /// The next task for thread `own` that last ran an operation of device `last`, and
    /// claim its device: `last` again if it has work, else a home device, else any.
    fn take(&self, st: &mut SharedState, own: usize, last: Option<usize>) -> Option<Task> {
        let free = |st: &SharedState, d: usize| !st.busy[d] && !st.tasks[d].is_empty();
        let d = last
            .filter(|&d| free(st, d))
            .or_else(|| (0..st.tasks.len()).find(|&d| self.home[d] == own && free(st, d)))
            .or_else(|| (0..st.tasks.len()).find(|&d| free(st, d)))?;
        st.busy[d] = true;
        st.tasks[d].pop_front()
    }

    /// Run one task for thread `own` (claimed from `last` onwards, see [`Shared::take`]);
    /// the device it ran on, None if there was nothing to run.
    fn run_one(
        &self,
        devs: &[Option<Arc<dyn Dev>>],
        own: usize,
        last: Option<usize>,
    ) -> Option<usize> {
        let (op, counter) = self.take(&mut self.state.lock().unwrap(), own, last)?;
        let d = op.dev;
        self.run(devs, op, counter);
        Some(d)
    }

    fn run(&self, devs: &[Option<Arc<dyn Dev>>], op: Op, counter: Arc<Counter>) {
        let d = op.dev;
        let errs = match exec_on(devs, &op) {
            Ok(()) => Vec::new(),
            Err(e) => vec![(d, e)],
        };
        let (wake, next) = {
            let mut st = self.state.lock().unwrap();
            st.busy[d] = false;
            self.stamp.fetch_add(1, Ordering::Release);
            let next = st.tasks[d].front().map(|t| Arc::clone(&t.1));
            (st.idle > 0 && next.is_some(), next)
        };
        // A device with more work is free again: a sleeping worker may take it, and so may
        // the submitting thread whose operation is next on it (this thread may be a
        // submitting thread about to return, and there may be no worker).
        if wake {
            self.more.notify_one();
        }
        if let Some(c) = next {
            c.wake();
        }
        counter.finish(1, errs);
    }

    /// A worker: run tasks until the pool is closed.
    fn serve(&self, devs: &[Option<Arc<dyn Dev>>], own: usize) {
        let mut last = None;
        loop {
            let task = {
                let mut st = self.state.lock().unwrap();
                // Poll until POLL has passed without work, however often the queues change
                // meanwhile (a member released by another thread changes them too).
                let t0 = std::time::Instant::now();
                loop {
                    if let Some(t) = self.take(&mut st, own, last) {
                        break t;
                    }
                    if st.closed {
                        return;
                    }
                    if t0.elapsed() < POLL {
                        let seen = self.stamp.load(Ordering::Acquire);
                        drop(st);
                        while self.stamp.load(Ordering::Acquire) == seen && t0.elapsed() < POLL {
                            for _ in 0..32 {
                                std::hint::spin_loop();
                            }
                        }
                        st = self.state.lock().unwrap();
                        continue;
                    }
                    st.idle += 1;
                    st = self.more.wait(st).unwrap();
                    st.idle -= 1;
                }
            };
            last = Some(task.0.dev);
            self.run(devs, task.0, task.1);
        }
    }
}

fn exec_on(devs: &[Option<Arc<dyn Dev>>], op: &Op) -> io::Result<()> {
    match devs.get(op.dev).and_then(|d| d.as_ref()) {
        Some(d) => op.exec(&**d),
        None => Err(io::Error::other("member is not present")),
    }
}

/// Where thread-served devices' operations run.
///
/// Memory-backed members (tmpfs) share the queues of [`Shared`], served by as many threads
/// as there are CPUs, the submitting threads counting as one (they work through the queues
/// while they wait for their batch): their I/O is a memory copy, so more threads than CPUs
/// only add wakeups
/// (measured: with a thread per member, scheduling and wakeups took about as much CPU as the
/// copying). Other devices (psync fallback, child arrays) get a thread (*lane*) each, since
/// their I/O blocks on a device; lane 0 is the submitting thread.
struct Workers {
    /// Per device, its own lane (None: ring-served, memory-backed, or absent).
    lane: Vec<Option<usize>>,
    /// Per device, served through the shared queue.
    shared_dev: Vec<bool>,
    /// Per lane, the channel to its thread (None for lane 0 and lanes whose thread could
    /// not be started: their ops run on the submitting thread).
    senders: Vec<Option<Sender<Job>>>,
    threads: Vec<JoinHandle<()>>,
    shared: Arc<Shared>,
    /// Threads serving the shared queue, the submitting thread included; 0 if no device
    /// is memory-backed.
    shared_lanes: usize,
}

impl Workers {
    /// `kind(dev)`: None = not thread-served, Some(true) = memory-backed (shared queue),
    /// Some(false) = a lane of its own.
    fn new(
        devs: &Arc<Vec<Option<Arc<dyn Dev>>>>,
        cpus: usize,
        kind: impl Fn(&dyn Dev) -> Option<bool>,
    ) -> Workers {
        let kinds: Vec<Option<bool>> = devs
            .iter()
            .map(|d| d.as_ref().and_then(|d| kind(&**d)))
            .collect();
        let shared_count = kinds.iter().filter(|k| **k == Some(true)).count();
        let mut shared_lanes = shared_count.min(cpus);
        let mut lane = vec![None; devs.len()];
        let mut lanes = 1;
        for (i, k) in kinds.iter().enumerate() {
            if *k == Some(false) {
                lane[i] = Some(lanes);
                lanes += 1;
            }
        }
        let shared_dev: Vec<bool> = kinds.iter().map(|k| *k == Some(true)).collect();
        let mut home = vec![0; devs.len()];
        let mut next = 0;
        for (i, s) in shared_dev.iter().enumerate() {
            if *s {
                // The submitting thread also computes the parity: it gets the smaller share.
                home[i] = (next + 1) % shared_lanes;
                next += 1;
            }
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(SharedState {
                tasks: devs.iter().map(|_| VecDeque::new()).collect(),
                busy: vec![false; devs.len()],
                idle: 0,
                closed: false,
            }),
            more: Condvar::new(),
            stamp: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            home,
        });
        let mut threads = Vec::new();
        for w in 1..shared_lanes {
            let devs = Arc::clone(devs);
            let q = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name(format!("raidlab-mem{w}"))
                .spawn(move || q.serve(&devs, w));
            match spawned {
                Ok(t) => threads.push(t),
                // Fewer workers: the submitting threads do the rest.
                Err(_) => {
                    shared_lanes = w;
                    break;
                }
            }
        }
        let mut senders: Vec<Option<Sender<Job>>> = vec![None];
        for l in 1..lanes {
            let (tx, rx) = channel::<Job>();
            let devs = Arc::clone(devs);
            let spawned = std::thread::Builder::new()
                .name(format!("raidlab-lane{l}"))
                .spawn(move || {
                    while let Ok((ops, counter)) = rx.recv() {
                        let mut errs = Vec::new();
                        for op in &ops {
                            if let Err(e) = exec_on(&devs, op) {
                                errs.push((op.dev, e));
                            }
                        }
                        counter.finish(1, errs);
                    }
                });
            match spawned {
                Ok(t) => {
                    threads.push(t);
                    senders.push(Some(tx));
                }
                // No thread: this lane's ops run on the submitting thread.
                Err(_) => senders.push(None),
            }
        }
        Workers {
            lane,
            shared_dev,
            senders,
            threads,
            shared,
            shared_lanes,
        }
    }
}

/// A ring and the state of the operations in flight on it.
struct Ring {
    ring: io_uring::IoUring,
}

impl Ring {
    fn new() -> io::Result<Ring> {
        // Cooperative task running (5.19+) saves an interrupt per completion; rings move
        // between threads, so no single-issuer mode.
        let ring = io_uring::IoUring::builder()
            .setup_coop_taskrun()
            .build(RING_ENTRIES)
            .or_else(|_| io_uring::IoUring::new(RING_ENTRIES))?;
        Ok(Ring { ring })
    }
}

pub struct Pool {
    devs: Arc<Vec<Option<Arc<dyn Dev>>>>,
    /// The method in effect (after any fallback).
    #[cfg_attr(not(test), allow(dead_code))]
    io: MemberIo,
    /// Per device: served through a ring (else by its worker thread).
    via_ring: Vec<bool>,
    punt: bool,
    /// Why io_uring is not in use, when it was wanted.
    fallback: Option<String>,
    rings: Mutex<Vec<Ring>>,
    workers: Workers,
    /// Per device, a descriptor to use in the ring instead of the device's own (-1: none).
    /// Tests put a descriptor opened for the wrong direction here to have the kernel fail a
    /// member's operations through the ring path.
    fd_override: Vec<AtomicI32>,
}

impl Pool {
    pub fn new(devs: Vec<Option<Arc<dyn Dev>>>) -> Pool {
        match MemberIo::from_env() {
            Ok(io) => Pool::with_io(devs, io),
            Err(msg) => {
                ewriteln!("raidlab: {msg}; using {}", DEFAULT_IO.name());
                Pool::with_io(devs, DEFAULT_IO)
            }
        }
    }

    /// A pool doing member I/O the way asked, falling back to psync threads when a ring
    /// cannot be set up.
    pub fn with_io(devs: Vec<Option<Arc<dyn Dev>>>, want: MemberIo) -> Pool {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        Pool::with_io_on(devs, want, cpus)
    }

    /// As [`Pool::with_io`], sized for `cpus` CPUs.
    fn with_io_on(devs: Vec<Option<Arc<dyn Dev>>>, want: MemberIo, cpus: usize) -> Pool {
        let mut io = want;
        let mut fallback = None;
        let mut rings = Vec::new();
        if want != MemberIo::Psync {
            match Ring::new() {
                Ok(r) => rings.push(r),
                Err(e) => {
                    fallback = Some(format!("io_uring setup failed: {e}"));
                    io = MemberIo::Psync;
                }
            }
        }
        let ring_for = |d: &dyn Dev| match (io, d.raw()) {
            (MemberIo::Psync, _) | (_, None) => false,
            (MemberIo::Uring { .. }, Some(_)) => true,
            (MemberIo::Auto, Some((fd, _))) => !memory_backed(fd),
        };
        let via_ring = devs
            .iter()
            .map(|d| d.as_ref().is_some_and(|d| ring_for(&**d)))
            .collect();
        let devs = Arc::new(devs);
        let workers = Workers::new(&devs, cpus, |d| {
            if ring_for(d) {
                None
            } else {
                Some(io == MemberIo::Auto && d.raw().is_some_and(|(fd, _)| memory_backed(fd)))
            }
        });
        let fd_override = devs.iter().map(|_| AtomicI32::new(-1)).collect();
        let pool = Pool {
            devs,
            io,
            via_ring,
            punt: io == MemberIo::Uring { punt: true },
            fallback,
            rings: Mutex::new(rings),
            workers,
            fd_override,
        };
        if std::env::var_os("RAIDLAB_DEBUG").is_some() {
            ewriteln!("raidlab: member I/O: {}", pool.describe());
        }
        pool
    }

    /// How member I/O is done, in words: "io_uring", "psync (thread per member)",
    /// "io_uring for 2 members, threads for 3 (memory-backed or child arrays)", with the
    /// reason when io_uring was wanted and could not be set up.
    pub fn describe(&self) -> String {
        let present = self.devs.iter().filter(|d| d.is_some()).count();
        let ring = self.via_ring.iter().filter(|&&r| r).count();
        let shared = self.workers.shared_dev.iter().filter(|&&s| s).count();
        let mut s = if ring == 0 && shared > 0 && shared == present {
            format!(
                "psync, {shared} memory-backed members on {} threads",
                self.workers.shared_lanes
            )
        } else if ring == 0 {
            MemberIo::Psync.name().to_string()
        } else if ring == present {
            let punt = if self.punt { " (async punt)" } else { "" };
            format!("io_uring{punt}")
        } else {
            format!(
                "io_uring for {ring} members, threads for {} (memory-backed or child arrays)",
                present - ring
            )
        };
        if let Some(f) = &self.fallback {
            s.push_str(&format!(" ({f})"));
        }
        s
    }

    /// Threads that serve memory-backed members' operations, submitting threads counted
    /// as one (at least 1).
    pub fn threads(&self) -> usize {
        self.workers.shared_lanes.max(1)
    }

    /// Whether device `dev` is served through a ring.
    pub fn via_ring(&self, dev: usize) -> bool {
        self.via_ring.get(dev).copied().unwrap_or(false)
    }

    pub fn dev(&self, i: usize) -> Option<&Arc<dyn Dev>> {
        self.devs.get(i).and_then(|d| d.as_ref())
    }

    /// Have the ring use `fd` for device `dev`'s operations (-1: the device's own again).
    /// For tests that make the kernel fail a member's I/O.
    #[cfg(test)]
    pub fn override_fd(&self, dev: usize, fd: RawFd) {
        self.fd_override[dev].store(fd, Ordering::SeqCst);
    }

    /// Run every op, members in parallel; return each (device, error) that failed.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn run(&self, ops: Vec<Op>) -> Vec<(usize, io::Error)> {
        let mut b = self.batch();
        b.submit(ops);
        b.wait()
    }

    /// An empty batch: submit ops to it (several times, to overlap work with I/O in flight),
    /// then wait. Dropping it waits too, so no operation outlives its buffer's borrow.
    pub fn batch(&self) -> Batch<'_> {
        Batch {
            pool: self,
            ring: None,
            slots: Vec::new(),
            free: Vec::new(),
            inflight: 0,
            backlog: VecDeque::new(),
            counter: None,
            active: false,
            deferred: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn ring_fd(&self, dev: usize) -> Option<(RawFd, u64)> {
        if !self.via_ring(dev) {
            return None;
        }
        let (fd, base) = self.dev(dev)?.raw()?;
        let o = self.fd_override[dev].load(Ordering::SeqCst);
        Some((if o >= 0 { o } else { fd }, base))
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.workers.senders.clear();
        self.workers.shared.state.lock().unwrap().closed = true;
        self.workers.shared.more.notify_all();
        for t in self.workers.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// An operation on a ring: where it goes and how much of it is done.
struct Slot {
    dev: usize,
    fd: RawFd,
    /// Byte offset in the file (data area offset added).
    at: u64,
    ptr: *mut u8,
    len: usize,
    write: bool,
    done: usize,
    retries: u32,
    /// Needs an fdatasync after the write (metadata); `synced` once it is queued.
    sync: bool,
    synced: bool,
    /// For direct I/O from or into a misaligned buffer: the aligned copy the ring uses
    /// (`ptr` points into it), and for reads the caller's buffer to copy it to when done.
    bounce: Option<AlignedBuf>,
    user: *mut u8,
}

/// Operations submitted and not yet waited for. See [`Pool::batch`].
pub struct Batch<'p> {
    pool: &'p Pool,
    ring: Option<Ring>,
    slots: Vec<Slot>,
    /// Indices of finished slots, reused by later submissions.
    free: Vec<usize>,
    inflight: usize,
    /// Slots waiting for room in the ring.
    backlog: VecDeque<usize>,
    counter: Option<Arc<Counter>>,
    /// Counted in the shared queues' active batches.
    active: bool,
    /// Ops for thread-served devices, by device, not yet handed out.
    deferred: Vec<(usize, Vec<Op>)>,
    errors: Vec<(usize, io::Error)>,
}

impl Batch<'_> {
    /// Start every op for devices served by a ring; queue every op for memory-backed
    /// devices (the pool's threads start on them at once); ops for devices with a thread of
    /// their own are collected and handed out when the batch is waited for, one job per
    /// device — each hand-off is a thread wakeup.
    pub fn submit(&mut self, ops: Vec<Op>) {
        let pool = self.pool;
        let mut queued = false;
        let mut mem = Vec::new();
        for op in ops {
            if !op.meta
                && pool
                    .workers
                    .shared_dev
                    .get(op.dev)
                    .copied()
                    .unwrap_or(false)
            {
                mem.push(op);
                continue;
            }
            // A stripe copy is memory copies, never ring I/O: it runs on a thread.
            debug_assert!(op.stripe.is_none() || !pool.via_ring(op.dev));
            if let Some((fd, base)) = pool.ring_fd(op.dev).filter(|_| op.stripe.is_none()) {
                if self.ring.is_none() {
                    self.ring = pool
                        .rings
                        .lock()
                        .unwrap()
                        .pop()
                        .or_else(|| Ring::new().ok());
                }
                let at = if op.meta { op.offset } else { base + op.offset };
                let a = pool.dev(op.dev).map_or(1, |d| d.align()).max(1);
                if !at.is_multiple_of(a) || !(op.len as u64).is_multiple_of(a) {
                    // Part of a block: the device's own path reads the rest of the block
                    // first. Rare (sub-block I/O), so it runs here, synchronously.
                    if let Some(d) = pool.dev(op.dev) {
                        if let Err(e) = op.exec(&**d) {
                            self.errors.push((op.dev, e));
                        }
                    }
                    continue;
                }
                if self.ring.is_some() {
                    let mut bounce = None;
                    let mut ptr = op.ptr;
                    if !(ptr as u64).is_multiple_of(a) {
                        let mut b = AlignedBuf::new(op.len);
                        if op.write {
                            // SAFETY: op.ptr points at op.len readable bytes (Op's contract).
                            b.as_mut_slice().copy_from_slice(unsafe {
                                std::slice::from_raw_parts(op.ptr, op.len)
                            });
                        }
                        ptr = b.as_mut_ptr();
                        bounce = Some(b);
                    }
                    let s = Slot {
                        dev: op.dev,
                        fd,
                        at,
                        ptr,
                        len: op.len,
                        write: op.write,
                        done: 0,
                        retries: 0,
                        sync: op.meta,
                        synced: false,
                        bounce,
                        user: op.ptr,
                    };
                    let i = match self.free.pop() {
                        Some(i) => {
                            self.slots[i] = s;
                            i
                        }
                        None => {
                            self.slots.push(s);
                            self.slots.len() - 1
                        }
                    };
                    self.backlog.push_back(i);
                    queued = true;
                    continue;
                }
            }
            match self.deferred.iter_mut().find(|(d, _)| *d == op.dev) {
                Some((_, v)) => v.push(op),
                None => self.deferred.push((op.dev, vec![op])),
            }
        }
        if !mem.is_empty() {
            if !self.active {
                self.active = true;
                pool.workers.shared.active.fetch_add(1, Ordering::AcqRel);
            }
            let c = self.counter.get_or_insert_with(Counter::new);
            pool.workers.shared.push(mem, c);
        }
        if queued {
            self.fill();
            self.enter(0);
        }
    }

    /// Hand the collected thread-served ops out, one job per lane: lane 0's ops (or, if it
    /// has none, one other lane's) run on this thread, which would otherwise only wait.
    /// Metadata writes (a block or two per member) run here too: cheaper than a wakeup.
    fn start_deferred(&mut self) {
        if self.deferred.is_empty() {
            return;
        }
        let pool = self.pool;
        let mut own: Vec<Op> = Vec::new();
        let mut lanes: Vec<(usize, Vec<Op>)> = Vec::new();
        for (dev, group) in std::mem::take(&mut self.deferred) {
            let lane = pool.workers.lane.get(dev).copied().flatten().unwrap_or(0);
            for op in group {
                if op.meta || lane == 0 {
                    own.push(op);
                } else {
                    match lanes.iter_mut().find(|(l, _)| *l == lane) {
                        Some((_, v)) => v.push(op),
                        None => lanes.push((lane, vec![op])),
                    }
                }
            }
        }
        if own.is_empty() {
            if let Some((_, g)) = lanes.pop() {
                own = g;
            }
        }
        for (lane, group) in lanes {
            self.hand_to_lane(lane, group);
        }
        self.run_here(own);
    }

    fn run_here(&mut self, ops: Vec<Op>) {
        for op in &ops {
            let r = match self.pool.dev(op.dev) {
                Some(d) => op.exec(&**d),
                None => Err(io::Error::other("member is not present")),
            };
            if let Err(e) = r {
                self.errors.push((op.dev, e));
            }
        }
    }

    /// Hand one lane's ops to its thread, or run them here when it has none.
    fn hand_to_lane(&mut self, lane: usize, group: Vec<Op>) {
        let pool = self.pool;
        if let Some(tx) = pool.workers.senders.get(lane).and_then(|s| s.as_ref()) {
            let counter = self.counter.get_or_insert_with(Counter::new).clone();
            counter.state.lock().unwrap().0 += 1;
            if let Err(e) = tx.send((group, counter.clone())) {
                counter.state.lock().unwrap().0 -= 1;
                // The thread is gone: do its ops here.
                self.run_here(e.0 .0);
            }
        } else {
            self.run_here(group);
        }
    }

    /// Move backlog slots into the submission queue while the ring has room (never more in
    /// flight than the ring has entries, so the completion queue cannot overflow).
    fn fill(&mut self) {
        let Some(r) = self.ring.as_mut() else { return };
        let punt = self.pool.punt;
        while self.inflight < RING_ENTRIES as usize {
            let Some(i) = self.backlog.pop_front() else {
                break;
            };
            let s = &self.slots[i];
            let fd = io_uring::types::Fd(s.fd);
            if s.synced {
                // The write is complete: now the fdatasync.
                let e = io_uring::opcode::Fsync::new(fd)
                    .flags(io_uring::types::FsyncFlags::DATASYNC)
                    .build()
                    .user_data(i as u64);
                // SAFETY: no buffer; room as below.
                if unsafe { r.ring.submission().push(&e) }.is_err() {
                    self.backlog.push_front(i);
                    break;
                }
                self.inflight += 1;
                continue;
            }
            let n = (s.len - s.done).min(MAX_SQE_BYTES) as u32;
            // SAFETY (of the pointer arithmetic): done < len, inside the op's buffer.
            let p = unsafe { s.ptr.add(s.done) };
            let at = s.at + s.done as u64;
            let mut e = if s.write {
                io_uring::opcode::Write::new(fd, p, n).offset(at).build()
            } else {
                io_uring::opcode::Read::new(fd, p, n).offset(at).build()
            };
            e = e.user_data(i as u64);
            if punt {
                e = e.flags(io_uring::squeue::Flags::ASYNC);
            }
            // SAFETY: the buffer stays valid until this batch is waited for (Op's contract),
            // and the batch does not end while the slot is in flight. The queue has room:
            // fewer than RING_ENTRIES are in flight, and everything pushed is submitted by
            // `enter` before the next fill.
            if unsafe { r.ring.submission().push(&e) }.is_err() {
                self.backlog.push_front(i);
                break;
            }
            self.inflight += 1;
        }
    }

    /// Submit what is queued and wait for at least `min` completions, then handle every
    /// completion there is.
    fn enter(&mut self, min: usize) {
        let Some(r) = self.ring.as_mut() else { return };
        let mut tries = 0;
        loop {
            match r.ring.submit_and_wait(min) {
                Ok(_) => break,
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
                    ) && tries < MAX_RETRIES =>
                {
                    tries += 1;
                    if e.raw_os_error() != Some(libc::EINTR) {
                        // Completions are what frees kernel resources: take them first.
                        break;
                    }
                }
                Err(e) => {
                    // The ring itself fails (not a member): report it against no member, so
                    // the I/O fails without failing members. What is in flight is waited for
                    // below through the completion queue.
                    self.errors
                        .push((usize::MAX, io::Error::other(format!("io_uring: {e}"))));
                    break;
                }
            }
        }
        let done: Vec<(u64, i32)> = r
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (i, res) in done {
            self.complete(i as usize, res);
        }
    }

    fn complete(&mut self, i: usize, res: i32) {
        let s = &mut self.slots[i];
        self.inflight -= 1;
        let err = if res < 0 {
            let errno = -res;
            if (errno == libc::EAGAIN || errno == libc::EINTR) && s.retries < MAX_RETRIES {
                s.retries += 1;
                self.backlog.push_back(i);
                return;
            }
            Some(io::Error::from_raw_os_error(errno))
        } else if s.synced {
            None
        } else if res == 0 {
            Some(if s.write {
                io::Error::new(io::ErrorKind::WriteZero, "member accepted no bytes")
            } else {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "member ended before the data area did",
                )
            })
        } else {
            s.done += res as usize;
            if s.done < s.len {
                // Short read or write: the rest goes in again.
                self.backlog.push_back(i);
                return;
            }
            if s.sync {
                s.synced = true;
                self.backlog.push_back(i);
                return;
            }
            if let (false, Some(b)) = (s.write, s.bounce.take()) {
                // SAFETY: user points at len writable bytes (Op's contract), b holds len.
                unsafe { std::ptr::copy_nonoverlapping(b.as_slice().as_ptr(), s.user, s.len) };
            }
            None
        };
        if let Some(e) = err {
            self.errors.push((s.dev, e));
        }
        self.free.push(i);
    }

    /// Wait for every op submitted; return each (device, error) that failed.
    pub fn wait(mut self) -> Vec<(usize, io::Error)> {
        self.finish();
        std::mem::take(&mut self.errors)
    }

    /// Wait for everything submitted so far; the batch can take more ops afterwards.
    pub fn wait_all(&mut self) -> Vec<(usize, io::Error)> {
        self.finish();
        std::mem::take(&mut self.errors)
    }

    fn finish(&mut self) {
        self.start_deferred();
        if self.ring.is_some() {
            let mut stuck = 0;
            while self.inflight > 0 || !self.backlog.is_empty() {
                self.fill();
                let before = (self.inflight, self.backlog.len());
                // Wait for everything in flight at once: one wakeup per batch, not one per
                // completion (on a busy machine every wakeup may queue behind other tasks).
                self.enter(self.inflight.max(1));
                if self.inflight > 0 && (self.inflight, self.backlog.len()) == before {
                    // enter failed without progress: nothing else can free these buffers'
                    // borrows, so keep waiting (a broken ring is reported in `errors`).
                    stuck += 1;
                    if stuck % 1000 == 0 {
                        std::thread::yield_now();
                    }
                }
            }
        }
        if let Some(c) = self.counter.take() {
            // Work through the memory-backed queues until this batch has nothing left that
            // this thread may start, then wait for what other threads are running; whenever
            // one of this batch's operations may have become startable (`Counter::wake`,
            // when its member is released), look again.
            let shared = &self.pool.workers.shared;
            let mut last = None;
            let mut seen = c.epoch.load(Ordering::Acquire);
            let work = |last: &mut Option<usize>| {
                while c.remaining() > 0 {
                    match shared.run_one(&self.pool.devs, 0, *last) {
                        Some(d) => *last = Some(d),
                        None => break,
                    }
                }
            };
            work(&mut last);
            // What is left is running on other threads and ends within one operation:
            // poll for it a little before sleeping.
            let t0 = std::time::Instant::now();
            let alone = shared.active.load(Ordering::Acquire) <= 1;
            while alone && c.remaining() > 0 && t0.elapsed() < POLL {
                let e = c.epoch.load(Ordering::Acquire);
                if e != seen {
                    seen = e;
                    work(&mut last);
                }
                for _ in 0..32 {
                    std::hint::spin_loop();
                }
            }
            let mut st = c.state.lock().unwrap();
            while st.0 > 0 {
                // `seen` was read before the last look found nothing to start; a wake since
                // has bumped the epoch (checked under the lock `wake` signals under).
                let e = c.epoch.load(Ordering::Acquire);
                if e != seen {
                    seen = e;
                    drop(st);
                    work(&mut last);
                    st = c.state.lock().unwrap();
                    continue;
                }
                st = c.done.wait(st).unwrap();
            }
            self.errors.append(&mut st.1);
        }
        if self.active {
            self.active = false;
            self.pool
                .workers
                .shared
                .active
                .fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.finish();
        if let Some(r) = self.ring.take() {
            self.pool.rings.lock().unwrap().push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::FileExt;
    use std::os::unix::io::AsRawFd;

    struct FileDev {
        f: File,
        base: u64,
    }
    impl Dev for FileDev {
        fn read(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
            self.f.read_exact_at(buf, self.base + offset)
        }
        fn write(&self, buf: &[u8], offset: u64) -> io::Result<()> {
            self.f.write_all_at(buf, self.base + offset)
        }
        fn flush(&self) -> io::Result<()> {
            self.f.sync_data()
        }
        fn raw(&self) -> Option<(RawFd, u64)> {
            Some((self.f.as_raw_fd(), self.base))
        }
    }

    /// Member `i` in `dir`: a new file of `size` bytes, its data area 4 KiB in.
    fn file_dev(dir: &std::path::Path, i: usize, size: u64) -> FileDev {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.join(format!("m{i}")))
            .unwrap();
        f.set_len(size).unwrap();
        FileDev { f, base: 4096 }
    }

    fn devs(dir: &std::path::Path, n: usize, size: u64) -> Vec<Option<Arc<dyn Dev>>> {
        (0..n)
            .map(|i| Some(Arc::new(file_dev(dir, i, size)) as Arc<dyn Dev>))
            .collect()
    }

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31) ^ seed)
            .collect()
    }

    const ALL: [MemberIo; 3] = [
        MemberIo::Uring { punt: true },
        MemberIo::Uring { punt: false },
        MemberIo::Psync,
    ];

    #[test]
    fn writes_then_reads_round_trip_with_every_method() {
        for io in ALL {
            let dir = tempfile::tempdir().unwrap();
            let pool = Pool::with_io(devs(dir.path(), 4, 1 << 20), io);
            assert_eq!(pool.io, io, "io_uring is available on this machine");
            assert_eq!(pool.via_ring(0), io != MemberIo::Psync);
            // More ops than the ring has entries, so the backlog path runs too.
            let bufs: Vec<Vec<u8>> = (0..300).map(|k| pattern(4096, k as u8)).collect();
            let ops = bufs
                .iter()
                .enumerate()
                .map(|(k, b)| Op::write(k % 4, (k / 4) as u64 * 4096, b))
                .collect();
            assert!(pool.run(ops).is_empty());
            let mut back = vec![vec![0u8; 4096]; 300];
            let ops = back
                .iter_mut()
                .enumerate()
                .map(|(k, b)| Op::read(k % 4, (k / 4) as u64 * 4096, b))
                .collect();
            assert!(pool.run(ops).is_empty());
            assert_eq!(back, bufs, "{}", io.name());
            // The data area starts at the device's base offset.
            let Some(d) = pool.dev(1) else { panic!() };
            let mut raw = vec![0u8; 4096];
            d.read(&mut raw, 0).unwrap();
            assert_eq!(raw, bufs[1]);
        }
    }

    #[test]
    fn metadata_writes_land_at_absolute_offsets_with_every_method() {
        struct Meta(FileDev);
        impl Dev for Meta {
            fn read(&self, b: &mut [u8], o: u64) -> io::Result<()> {
                self.0.read(b, o)
            }
            fn write(&self, b: &[u8], o: u64) -> io::Result<()> {
                self.0.write(b, o)
            }
            fn flush(&self) -> io::Result<()> {
                self.0.flush()
            }
            fn raw(&self) -> Option<(RawFd, u64)> {
                self.0.raw()
            }
            fn write_meta(&self, b: &[u8], o: u64) -> io::Result<()> {
                self.0.f.write_all_at(b, o)?;
                self.0.f.sync_data()
            }
        }
        for io in ALL {
            let dir = tempfile::tempdir().unwrap();
            let d: Vec<Option<Arc<dyn Dev>>> = devs(dir.path(), 3, 1 << 20)
                .into_iter()
                .enumerate()
                .map(|(i, _)| {
                    let f = OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(dir.path().join(format!("m{i}")))
                        .unwrap();
                    Some(Arc::new(Meta(FileDev { f, base: 4096 })) as Arc<dyn Dev>)
                })
                .collect();
            let pool = Pool::with_io(d, io);
            let head = pattern(512, 5);
            let data = pattern(4096, 6);
            let mut ops: Vec<Op> = (0..3).map(|m| Op::meta_write(m, 1024, &head)).collect();
            ops.push(Op::write(1, 0, &data));
            assert!(pool.run(ops).is_empty(), "{}", io.name());
            for m in 0..3 {
                let f = File::open(dir.path().join(format!("m{m}"))).unwrap();
                let mut got = vec![0u8; 512];
                f.read_exact_at(&mut got, 1024).unwrap();
                assert_eq!(got, head, "{} member {m}", io.name());
            }
            let f = File::open(dir.path().join("m1")).unwrap();
            let mut got = vec![0u8; 4096];
            f.read_exact_at(&mut got, 4096).unwrap();
            assert_eq!(got, data, "the data write is relative to the data area");
        }
    }

    #[test]
    fn memory_backed_members_share_a_few_threads_and_round_trip() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let pool = Pool::with_io(devs(dir.path(), 9, 1 << 20), MemberIo::Auto);
        let cpus = std::thread::available_parallelism().unwrap().get();
        assert!((0..9).all(|d| !pool.via_ring(d)), "{}", pool.describe());
        assert_eq!(pool.workers.shared_lanes, cpus.min(9));
        assert_eq!(pool.workers.threads.len(), cpus.min(9) - 1);
        assert!(
            pool.describe().contains("memory-backed"),
            "{}",
            pool.describe()
        );
        let bufs: Vec<Vec<u8>> = (0..36).map(|k| pattern(65536, k as u8)).collect();
        let ops = bufs
            .iter()
            .enumerate()
            .map(|(k, b)| Op::write(k % 9, (k / 9) as u64 * 65536, b))
            .collect();
        assert!(pool.run(ops).is_empty());
        let mut back = vec![vec![0u8; 65536]; 36];
        let ops = back
            .iter_mut()
            .enumerate()
            .map(|(k, b)| Op::read(k % 9, (k / 9) as u64 * 65536, b))
            .collect();
        assert!(pool.run(ops).is_empty());
        assert!(back == bufs);
    }

    /// Several threads submitting batches at once to memory-backed members (as with
    /// several requests in flight on an array): every operation runs exactly once, each
    /// member is written by one thread at a time, and every batch sees its own bytes land.
    #[test]
    fn concurrent_batches_on_memory_members_run_each_member_on_one_thread_at_a_time() {
        use std::sync::atomic::{AtomicBool, AtomicUsize};
        struct Watched {
            f: FileDev,
            running: AtomicBool,
            overlaps: Arc<AtomicUsize>,
            ops: AtomicUsize,
        }
        impl Dev for Watched {
            fn read(&self, buf: &mut [u8], o: u64) -> io::Result<()> {
                self.f.read(buf, o)
            }
            fn write(&self, buf: &[u8], o: u64) -> io::Result<()> {
                if self.running.swap(true, Ordering::SeqCst) {
                    self.overlaps.fetch_add(1, Ordering::SeqCst);
                }
                self.ops.fetch_add(1, Ordering::SeqCst);
                let r = self.f.write(buf, o);
                self.running.store(false, Ordering::SeqCst);
                r
            }
            fn flush(&self) -> io::Result<()> {
                self.f.flush()
            }
            fn raw(&self) -> Option<(RawFd, u64)> {
                self.f.raw()
            }
        }
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let overlaps = Arc::new(AtomicUsize::new(0));
        let watched: Vec<Arc<Watched>> = (0..5)
            .map(|i| {
                Arc::new(Watched {
                    f: file_dev(dir.path(), i, 8 << 20),
                    running: AtomicBool::new(false),
                    overlaps: Arc::clone(&overlaps),
                    ops: AtomicUsize::new(0),
                })
            })
            .collect();
        let d = watched
            .iter()
            .map(|w| Some(Arc::clone(w) as Arc<dyn Dev>))
            .collect();
        let pool = Pool::with_io(d, MemberIo::Auto);
        assert!(
            pool.describe().contains("memory-backed"),
            "{}",
            pool.describe()
        );
        const THREADS: usize = 4;
        const BATCHES: usize = 40;
        std::thread::scope(|sc| {
            for t in 0..THREADS {
                let pool = &pool;
                sc.spawn(move || {
                    for b in 0..BATCHES {
                        // Each thread owns its own 16 KiB slots of every member.
                        let slot = (b * THREADS + t) as u64 % 128;
                        let bufs: Vec<Vec<u8>> = (0..5)
                            .map(|m| pattern(16384, (t * 31 + b + m) as u8))
                            .collect();
                        let mut batch = pool.batch();
                        // Two submissions per batch, like a pipelined request.
                        for half in [0..3, 3..5] {
                            let ops = half.map(|m| Op::write(m, slot * 16384, &bufs[m])).collect();
                            batch.submit(ops);
                        }
                        assert!(batch.wait().is_empty());
                        for (m, want) in bufs.iter().enumerate() {
                            let mut got = vec![0u8; 16384];
                            pool.dev(m).unwrap().read(&mut got, slot * 16384).unwrap();
                            assert!(&got == want, "thread {t} batch {b} member {m}");
                        }
                    }
                });
            }
        });
        assert_eq!(
            overlaps.load(Ordering::SeqCst),
            0,
            "two threads wrote one member at once"
        );
        for w in &watched {
            assert_eq!(w.ops.load(Ordering::SeqCst), THREADS * BATCHES);
        }
    }

    /// With no worker thread (one CPU), concurrent submitters of memory-backed writes all
    /// finish: the submitters run every operation between them.
    #[test]
    fn concurrent_batches_finish_without_worker_threads() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let pool = Arc::new(Pool::with_io_on(
            devs(dir.path(), 3, 5 << 20),
            MemberIo::Auto,
            1,
        ));
        assert!(pool.workers.threads.is_empty());
        let (tx, rx) = std::sync::mpsc::channel();
        for t in 0..4u8 {
            let pool = Arc::clone(&pool);
            let tx = tx.clone();
            std::thread::spawn(move || {
                for b in 0..200u64 {
                    let bufs: Vec<Vec<u8>> = (0..3).map(|m| pattern(65536, t ^ m as u8)).collect();
                    let at = (b % 16 * 4 + t as u64) * 65536;
                    let mut batch = pool.batch();
                    for (m, buf) in bufs.iter().enumerate() {
                        batch.submit(vec![Op::write(m, at, buf)]);
                    }
                    assert!(batch.wait().is_empty());
                }
                tx.send(t).unwrap();
            });
        }
        for _ in 0..4 {
            rx.recv_timeout(std::time::Duration::from_secs(60))
                .expect("a submitter is stuck waiting for its batch");
        }
    }

    #[test]
    fn pipelined_submissions_in_one_batch_all_complete() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Pool::with_io(devs(dir.path(), 3, 1 << 20), DEFAULT_IO);
        let bufs: Vec<Vec<u8>> = (0..6).map(|k| pattern(65536, k)).collect();
        {
            let mut b = pool.batch();
            for (k, buf) in bufs.iter().enumerate() {
                b.submit(vec![Op::write(k % 3, (k / 3) as u64 * 65536, buf)]);
            }
            assert!(b.wait().is_empty());
        }
        for (k, buf) in bufs.iter().enumerate() {
            let mut r = vec![0u8; 65536];
            pool.dev(k % 3)
                .unwrap()
                .read(&mut r, (k / 3) as u64 * 65536)
                .unwrap();
            assert_eq!(&r, buf);
        }
    }

    #[test]
    fn reading_past_a_member_end_is_an_error_of_that_member() {
        for io in ALL {
            let dir = tempfile::tempdir().unwrap();
            let pool = Pool::with_io(devs(dir.path(), 2, 8192 + 4096), io);
            let mut a = vec![0u8; 4096];
            let mut b = vec![0u8; 8192];
            // Member 1's data area is 8192 bytes: this read gets 4096 and then end of file.
            let errs = pool.run(vec![Op::read(0, 0, &mut a), Op::read(1, 4096, &mut b)]);
            assert_eq!(errs.len(), 1, "{}", io.name());
            assert_eq!(errs[0].0, 1);
            assert_eq!(errs[0].1.kind(), io::ErrorKind::UnexpectedEof);
        }
    }

    #[test]
    fn kernel_errors_through_the_ring_name_the_member() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Pool::with_io(devs(dir.path(), 3, 1 << 20), MemberIo::Uring { punt: true });
        // Member 2 is now written through a descriptor opened read-only: the kernel fails the
        // write (EBADF) in the ring, and only that member's operation.
        let ro = File::open(dir.path().join("m2")).unwrap();
        pool.override_fd(2, ro.as_raw_fd());
        let data = pattern(8192, 9);
        let ops = (0..3).map(|m| Op::write(m, 0, &data)).collect();
        let errs = pool.run(ops);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].0, 2);
        assert_eq!(errs[0].1.raw_os_error(), Some(libc::EBADF));
        pool.override_fd(2, -1);
        assert!(pool.run(vec![Op::write(2, 0, &data)]).is_empty());
    }

    #[test]
    fn a_missing_member_is_reported_not_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = devs(dir.path(), 2, 1 << 20);
        d[1] = None;
        let pool = Pool::with_io(d, DEFAULT_IO);
        let buf = vec![1u8; 512];
        let errs = pool.run(vec![Op::write(0, 0, &buf), Op::write(1, 0, &buf)]);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].0, 1);
    }

    #[test]
    fn devices_without_a_descriptor_go_through_worker_threads() {
        struct Mem(Mutex<Vec<u8>>);
        impl Dev for Mem {
            fn read(&self, buf: &mut [u8], o: u64) -> io::Result<()> {
                let v = self.0.lock().unwrap();
                buf.copy_from_slice(&v[o as usize..o as usize + buf.len()]);
                Ok(())
            }
            fn write(&self, buf: &[u8], o: u64) -> io::Result<()> {
                self.0.lock().unwrap()[o as usize..o as usize + buf.len()].copy_from_slice(buf);
                Ok(())
            }
            fn flush(&self) -> io::Result<()> {
                Ok(())
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let mut d = devs(dir.path(), 1, 1 << 20);
        d.push(Some(
            Arc::new(Mem(Mutex::new(vec![0; 8192]))) as Arc<dyn Dev>
        ));
        let pool = Pool::with_io(d, DEFAULT_IO);
        let a = pattern(4096, 1);
        let b = pattern(4096, 2);
        assert!(pool
            .run(vec![Op::write(0, 0, &a), Op::write(1, 4096, &b)])
            .is_empty());
        let (mut ra, mut rb) = (vec![0u8; 4096], vec![0u8; 4096]);
        assert!(pool
            .run(vec![Op::read(0, 0, &mut ra), Op::read(1, 4096, &mut rb)])
            .is_empty());
        assert_eq!((ra, rb), (a, b));
    }
}
