//! The simulated system built from a [`System`]: resources, drives, controllers, arrays and
//! LUNs, as plain indexed vectors the event loop works on.
//!
//! Shared paths (host bus, adapters, links, switch, controller ports and data paths, parity
//! engines, back-end buses) are *reservation servers*: a transfer reserves every resource on
//! its path at once, starting when the last of them is free, in segments so a long transfer
//! pipelines across them. Commands reserve the processors (host CPUs, adapter, controller)
//! one after the other. Drives have queues and are served by the event loop.

use crate::catalog::DeviceKind;
use crate::config::{System, WritePolicy};
use crate::device::{f64_of, u64_of, DeviceModel, DeviceState, Loc, RegionCounts, FIBONACCI};
use crate::error::SimError;
use crate::planner::{push_merge, ArrayGeom, Level, MemberIo, MirrorPiece};
use std::collections::{BTreeMap, VecDeque};

/// Replaces a binary min-heap's root with `v` (no smaller than it) and sifts it down.
fn sift_down_from_root(heap: &mut [u64], v: u64) {
    let n = heap.len();
    let mut i = 0;
    loop {
        let l = 2 * i + 1;
        if l >= n {
            break;
        }
        let r = l + 1;
        let c = if r < n && heap[r] < heap[l] { r } else { l };
        if heap[c] >= v {
            break;
        }
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = v;
}

/// Transfers are cut into segments this long so they pipeline across a path.
pub const SEGMENT: u64 = 64 * 1024;

#[derive(Clone, Debug)]
pub struct Res {
    pub name: String,
    pub kind: &'static str,
    /// ns per byte for reads (towards the host) and writes (away from it); 0 = not on that way.
    pub ns_per_byte: [f64; 2],
    /// Free time of the first server (every bandwidth resource has just one), and of the
    /// others as a binary min-heap: which of them is which does not matter, only when each
    /// is free (a host with 64 CPUs looked through all 64 at every command).
    free0: u64,
    free_more: Vec<u64>,
    pub busy_ns: u64,
    pub note: String,
}

impl Res {
    pub fn new(
        name: impl Into<String>,
        kind: &'static str,
        servers: u32,
        note: impl Into<String>,
    ) -> Res {
        Res {
            name: name.into(),
            kind,
            ns_per_byte: [0.0; 2],
            free0: 0,
            free_more: vec![0; servers.max(1) as usize - 1],
            busy_ns: 0,
            note: note.into(),
        }
    }
    pub fn bw(mut self, read_mb_s: Option<f64>, write_mb_s: Option<f64>) -> Res {
        self.ns_per_byte = [
            read_mb_s.map_or(0.0, |r| 1e3 / r),
            write_mb_s.map_or(0.0, |w| 1e3 / w),
        ];
        self
    }
    /// Occupy the earliest-free server for `dur` from no earlier than `now`; returns the end.
    /// (Inlined always: with a sync's flush as one more caller it was left out of line, and
    /// each host command paid two calls.)
    #[inline(always)]
    pub fn reserve(&mut self, now: u64, dur: u64) -> u64 {
        // The earliest free: the first server unless another is free strictly earlier.
        self.busy_ns += dur;
        match self.free_more.first() {
            Some(&m) if m < self.free0 => {
                let end = now.max(m) + dur;
                sift_down_from_root(&mut self.free_more, end);
                end
            }
            _ => {
                let end = now.max(self.free0) + dur;
                self.free0 = end;
                end
            }
        }
    }
    /// How long `bytes` take to cross it in direction `w` (0 read, 1 write), if that
    /// direction carries data through it (a nonzero rate); at least 1 ns.
    #[inline(always)]
    fn hop_ns(&self, bytes: u64, w: usize) -> Option<u64> {
        let npb = self.ns_per_byte[w];
        (npb > 0.0).then(|| u64_of(f64_of(bytes) * npb).max(1))
    }
    /// Occupy its first server for `d` from no earlier than `t`, as a hop of a transfer does
    /// (links, buses and adapters have one); returns when the hop starts.
    #[inline(always)]
    fn hop_from(&mut self, t: u64, d: u64) -> u64 {
        let s = t.max(self.free0);
        self.free0 = s + d;
        self.busy_ns += d;
        s
    }
    /// How many servers it has.
    pub fn servers(&self) -> usize {
        1 + self.free_more.len()
    }
    /// Bound in bytes/s (the faster direction), if it has one.
    pub fn bound(&self) -> Option<f64> {
        let m = self
            .ns_per_byte
            .iter()
            .cloned()
            .filter(|x| *x > 0.0)
            .fold(f64::INFINITY, f64::min);
        if m.is_finite() {
            Some(1e9 / m)
        } else {
            None
        }
    }
}

/// Move `bytes` over every resource of `path` (listed from the host side; reads flow the
/// other way); returns when the last byte arrives.
///
/// The transfer is cut into segments. A segment enters each hop in flow order as soon as it
/// has entered the hop before it and the hop has finished what it took earlier (first come,
/// first served), and occupies the hop for its own duration there; it arrives when its slowest
/// hop is done. One stream thus moves at its slowest hop's rate with cut-through latency, and
/// streams that share a hop take turns on it instead of waiting for each other's whole path.
///
/// (Inline for the commonest case, one segment over one hop — a drive's data on its back
/// end, once per member I/O: what the general loop works out for it, without the loop.)
#[inline(always)]
pub fn transfer(res: &mut [Res], path: &[usize], now: u64, bytes: u64, write: bool) -> u64 {
    if let &[r] = path {
        if bytes > 0 && bytes <= SEGMENT {
            let r = &mut res[r];
            return match r.hop_ns(bytes, write as usize) {
                Some(d) => r.hop_from(now, d) + d,
                None => now,
            };
        }
    }
    transfer_segments(res, path, now, bytes, write)
}

/// [`transfer`] in general.
#[inline(never)]
fn transfer_segments(res: &mut [Res], path: &[usize], now: u64, bytes: u64, write: bool) -> u64 {
    let w = write as usize;
    let mut end = now;
    let mut left = bytes;
    while left > 0 {
        let seg = left.min(SEGMENT);
        let mut s = now;
        let mut hop = |r: usize, s: &mut u64, end: &mut u64| {
            if let Some(d) = res[r].hop_ns(seg, w) {
                *s = res[r].hop_from(*s, d);
                *end = (*end).max(*s + d);
            }
        };
        if write {
            for &r in path {
                hop(r, &mut s, &mut end);
            }
        } else {
            for &r in path.iter().rev() {
                hop(r, &mut s, &mut end);
            }
        }
        left -= seg;
    }
    end
}

/// One segment length's time on each hop of a path that carries data that way, in flow order:
/// [`transfer`]'s float formula worked out once per segment length instead of once per
/// segment and hop (a stream's segments are nearly always of one length). Moving a segment
/// with it reserves the hops exactly as [`transfer`] does.
#[derive(Clone, Debug, Default)]
pub struct SegCosts {
    /// The segment length `hops` holds times for (0: none yet; a segment is never empty).
    seg: u64,
    hops: Vec<(usize, u64)>,
}

impl SegCosts {
    /// [`transfer`] of `bytes` over `path` (the same for every path and direction this
    /// memo is used with).
    #[inline(always)]
    pub fn transfer(
        &mut self,
        res: &mut [Res],
        path: &[usize],
        now: u64,
        bytes: u64,
        write: bool,
    ) -> u64 {
        if bytes > SEGMENT || bytes == 0 {
            return transfer(res, path, now, bytes, write);
        }
        if self.seg != bytes {
            let w = write as usize;
            self.seg = bytes;
            self.hops.clear();
            let mut add = |r: usize| {
                if let Some(d) = res[r].hop_ns(bytes, w) {
                    self.hops.push((r, d));
                }
            };
            if write {
                path.iter().for_each(|&r| add(r));
            } else {
                path.iter().rev().for_each(|&r| add(r));
            }
        }
        let (mut s, mut end) = (now, now);
        for &(r, d) in &self.hops {
            s = res[r].hop_from(s, d);
            end = end.max(s + d);
        }
        end
    }
}

#[derive(Clone, Copy, Debug)]
pub struct DiskReq {
    pub offset: u64,
    pub len: u64,
    pub write: bool,
    pub join: u32,
    /// Not before this time (parity still being computed).
    pub ready: u64,
    /// Where it starts on the media (HDDs), for the drive's scheduler.
    pub loc: Loc,
}

/// A command in a drive's scheduling window (the first `queue_depth` commands of its queue),
/// with what shortest-positioning-time-first needs to rank it, and its neighbours in the
/// window's order (see [`Window`]): 32 bytes, which the scheduler's walk reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cand {
    /// Angular position of its first sector, as a fraction of a turn.
    pub target: f64,
    pub ready: u64,
    pub cyl: u32,
    /// The slots of the next and the previous command by (angle, arrival), round the turn:
    /// the last command's next is the first.
    next: u32,
    prev: u32,
    /// Whether the command is a write (the low bit), and its arc of the turn
    /// ([`arc_of`], the bits above).
    flags: u32,
}

impl Cand {
    pub fn new(target: f64, ready: u64, cyl: u32, write: bool) -> Cand {
        Cand {
            target,
            ready,
            cyl,
            next: 0,
            prev: 0,
            flags: write as u32,
        }
    }
    /// Whether the command is a write (its seek takes the write settle too).
    #[inline(always)]
    pub fn write(&self) -> bool {
        self.flags & 1 != 0
    }
    #[inline(always)]
    fn arc(&self) -> usize {
        (self.flags >> 1) as usize
    }
}

/// How many equal arcs a [`Window`] cuts the turn into (one bit each of a `u64`).
const ARCS: usize = 64;

/// The arc of the turn holding angle `target` (a fraction of a turn): the top bits of the
/// fraction of `1 + target` (no float to integer conversion). Arcs rise with the angle (the
/// sum is rounded monotonically), so the window's order by angle is by arc first.
#[inline(always)]
fn arc_of(target: f64) -> usize {
    debug_assert!((0.0..1.0).contains(&target), "{target}");
    const SHIFT: u32 = 52 - ARCS.trailing_zeros();
    // `1 + target` lies in [1, 2] (2 only by rounding up, which the `min` puts in the last arc).
    let a = ((1.0 + target).to_bits() >> SHIFT) - (1.0f64.to_bits() >> SHIFT);
    (a as usize).min(ARCS - 1)
}

/// A drive's scheduling window: its commands ordered by the angle of their first sector,
/// then by arrival, as a ring linked through their slots, with the first command of each of
/// `ARCS` (64) equal arcs of the turn. The scheduler walks it from the head's angle in the order
/// the sectors pass under the head; a command enters or leaves without moving the others,
/// and the first command at or past an angle is found from its arc.
#[derive(Debug)]
pub struct Window {
    /// The commands by slot (those of slots out of the window are stale).
    nodes: Vec<Cand>,
    /// Their arrival order on the drive, by slot (ties go to the earliest).
    seqs: Vec<u64>,
    /// The first command (by angle, arrival) of each arc that holds any.
    heads: [u32; ARCS],
    /// Which arcs hold commands (bit `b`: arc `b`).
    occupied: u64,
    len: usize,
}

impl Default for Window {
    fn default() -> Window {
        Window {
            nodes: Vec::new(),
            seqs: Vec::new(),
            heads: [0; ARCS],
            occupied: 0,
            len: 0,
        }
    }
}

impl Window {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    fn clear(&mut self) {
        self.occupied = 0;
        self.len = 0;
    }
    /// The command in `slot` (which must be in the window).
    #[inline(always)]
    pub fn get(&self, slot: u32) -> &Cand {
        &self.nodes[slot as usize]
    }
    /// [`Window::get`] for a slot read from the window's links (a command's `next` or `prev`,
    /// an occupied arc's head), without a bounds check: the scheduler's walk follows the links
    /// at every step.
    #[inline(always)]
    fn linked(&self, slot: u32) -> &Cand {
        debug_assert!((slot as usize) < self.nodes.len());
        // SAFETY: every link is below `nodes.len()`. A slot is linked only by `insert`, after
        // its checked write of `seqs[slot]` (`span` keeps `seqs` and `nodes` the same length);
        // every other write of a link (`remove`'s, `insert`'s of the neighbours) copies a link;
        // `Cand::default()`'s links are 0, below the length of any `nodes` holding one; a
        // head is read only while its arc is occupied, which only `insert` marks, setting the
        // head; and `nodes` never shrinks.
        unsafe { self.nodes.get_unchecked(slot as usize) }
    }
    /// [`Window::linked`], to relink the command: as sound, by the same argument.
    #[inline(always)]
    fn linked_mut(&mut self, slot: u32) -> &mut Cand {
        debug_assert!((slot as usize) < self.nodes.len());
        // SAFETY: see `Window::linked`.
        unsafe { self.nodes.get_unchecked_mut(slot as usize) }
    }
    /// The arrival order of the command in `slot` (which must be in the window).
    #[inline(always)]
    pub fn seq(&self, slot: u32) -> u64 {
        self.seqs[slot as usize]
    }
    /// The first command by (angle, arrival).
    #[inline]
    pub fn first(&self) -> Option<u32> {
        (self.occupied != 0).then(|| self.heads[self.occupied.trailing_zeros() as usize])
    }
    /// The window's commands (slot and command) by (angle, arrival).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Cand)> + '_ {
        let mut n = self.first().unwrap_or(0);
        (0..self.len).map(move |_| {
            let s = n;
            let c = self.get(s);
            n = c.next;
            (s, c)
        })
    }
    /// The first command at an angle of `target` or past it (strictly past if `PAST`); None
    /// if every command is before it.
    #[inline]
    fn seek<const PAST: bool>(&self, target: f64) -> Option<u32> {
        let b = arc_of(target);
        if self.occupied >> b & 1 != 0 {
            let h = self.heads[b];
            let mut n = h;
            loop {
                let c = self.linked(n);
                if c.target > target || (!PAST && c.target == target) {
                    return Some(n);
                }
                n = c.next;
                if n == h || self.linked(n).arc() != b {
                    break;
                }
            }
        }
        // The first command of the next arc that holds any (b < 64: both shifts in range).
        let later = self.occupied & (u64::MAX << b << 1);
        (later != 0).then(|| self.heads[later.trailing_zeros() as usize])
    }
    /// Make room for commands in slots up to `n` (exclusive): [`Window::insert`] takes a slot
    /// in the room made.
    fn span(&mut self, n: usize) {
        if self.nodes.len() < n {
            self.nodes.resize(n, Cand::default());
            self.seqs.resize(n, 0);
        }
    }
    /// Put command `c`, the `seq`th to arrive, in the window, in `slot` (within the room made
    /// by [`Window::span`]). It arrived after
    /// every command there, so it goes after all at its angle.
    #[inline]
    fn insert(&mut self, slot: u32, seq: u64, mut c: Cand) {
        let b = arc_of(c.target);
        c.flags = c.flags & 1 | (b as u32) << 1;
        let s = slot as usize;
        self.seqs[s] = seq;
        match self.first() {
            None => {
                c.next = slot;
                c.prev = slot;
            }
            Some(first) => {
                debug_assert!(self.iter().all(|(x, _)| self.seq(x) < seq));
                // Before the first command past its angle; if none, last (before the first).
                let past = self.seek::<true>(c.target);
                let next = past.unwrap_or(first);
                let prev = self.linked(next).prev;
                c.next = next;
                c.prev = prev;
                self.linked_mut(prev).next = slot;
                self.linked_mut(next).prev = slot;
                debug_assert!(past.is_none() || self.get(next).target > c.target);
                debug_assert!(past == Some(first) || self.get(prev).target <= c.target);
                if self.occupied >> b & 1 != 0 && past != Some(self.heads[b]) {
                    // Not the arc's first.
                    self.nodes[s] = c;
                    self.len += 1;
                    return;
                }
            }
        }
        self.heads[b] = slot;
        self.occupied |= 1 << b;
        self.nodes[s] = c;
        self.len += 1;
    }
    /// Take the command in `slot` out of the window.
    #[inline(always)]
    fn remove(&mut self, slot: u32) {
        let c = *self.get(slot);
        let b = c.arc();
        debug_assert!(self.occupied >> b & 1 != 0);
        if self.heads[b] == slot {
            if c.next != slot && self.linked(c.next).arc() == b {
                self.heads[b] = c.next;
            } else {
                self.occupied &= !(1 << b);
            }
        }
        self.linked_mut(c.prev).next = c.next;
        self.linked_mut(c.next).prev = c.prev;
        self.len -= 1;
    }
}

/// A drive's queue of commands not yet in service. For drives that schedule by shortest
/// positioning time, the first `window` (its queue depth) by arrival are kept in a
/// [`Window`] ordered by the angle of their first sector, so the scheduler can look at them
/// in the order they pass under the head and stop once the rotation alone takes longer than
/// the best found; the rest wait in arrival order. Drives that serve in arrival order keep
/// all in `rest`. The window's commands stay put in `slab`; its orders hold their slots.
#[derive(Debug, Default)]
pub struct DriveQueue {
    slab: Vec<DiskReq>,
    free: Vec<u32>,
    /// The first `depth` commands by arrival, by (angle, arrival); empty if `depth` = 0.
    pub window: Window,
    /// The commands after the window, in arrival order: (arrival, command). They are held
    /// here rather than in `slab`, so that the slab, and the window's arrays by slot, span no
    /// more slots than the window holds: a walk of the window stays within a few cache lines
    /// however long the queue behind it grows (a random workload's drives queue hundreds).
    rest: VecDeque<(u64, DiskReq)>,
    /// The slot of the window's first command to arrive, its oldest (see
    /// [`DriveQueue::overdue`]); meaningless while the window is empty. Commands enter the
    /// window in arrival order, so only the oldest leaving moves it: to the least arrival
    /// left, found by a look through the window (the oldest is rarely the nearest).
    oldest: u32,
    /// When the oldest command is ready in the window (its candidate's `ready`), kept here
    /// for [`DriveQueue::overdue`], which every pick asks.
    oldest_ready: u64,
    /// Whether a command waiting past the drive's age limit goes first (queued commands);
    /// not for the writes a write cache holds, which the host has seen done: the drive
    /// writes them out in its own order however long they wait.
    ages: bool,
    /// How many commands the window holds at most.
    depth: usize,
    next_seq: u64,
    /// How many of the window's commands start at an offset of each bucket
    /// ([`start_bucket`]): a command streaming on from the drive's last one starts where that
    /// one ended, and none can while that offset's bucket counts none. None for windows too
    /// wide to count in a `u16`. (Arrays, which a bucket indexes without a check.) A window
    /// of a few dozen commands leaves one bucket in ten counting any at 256 buckets, and each
    /// pick asks: [`START_BUCKETS`] leaves few of the picks to look for a stream not there.
    starts: Option<Box<[u16; START_BUCKETS]>>,
    /// The window's reads by the 1 MiB region of the drive they start in: the first read
    /// (its slot) of each bucket's list ([`region_bucket`]), [`NO_SLOT`] for none. A read the
    /// drive reaches by reading on lies within its read-ahead span past the last read's end,
    /// so only the lists of the regions that span covers are looked through (mostly empty).
    /// The window's writes are listed the same way, after the reads' buckets.
    read_heads: RegionHeads,
    /// Each slot's neighbours (next, previous) in its bucket's list.
    read_links: Vec<(u32, u32)>,
    /// How many of the queue's commands (window and rest) are writes: a drive with a write
    /// cache looks for a write to take in at every dispatch, and mostly there is none.
    writes: u32,
}

/// [`DriveQueue::read_heads`]: an array, which a bucket indexes without a check.
#[derive(Debug)]
struct RegionHeads(Box<[u32; 2 * REGION_BUCKETS]>);

impl Default for RegionHeads {
    fn default() -> RegionHeads {
        RegionHeads(Box::new([NO_SLOT; 2 * REGION_BUCKETS]))
    }
}

/// No slot: the end of a list of [`DriveQueue::read_heads`].
const NO_SLOT: u32 = u32::MAX;

/// How many buckets [`region_bucket`] hashes regions into.
const REGION_BUCKETS: usize = 256;

/// The size of a region of [`DriveQueue::read_heads`], as a shift: 1 MiB.
const REGION_SHIFT: u32 = 20;

/// The bucket of [`DriveQueue::read_heads`] listing region `region` (an offset shifted by
/// [`REGION_SHIFT`]), by Fibonacci hashing.
#[inline]
fn region_bucket(region: u64) -> usize {
    (region.wrapping_mul(FIBONACCI) >> 56) as usize
}

/// How many buckets [`start_bucket`] hashes the window's start offsets into (2 KiB a queue).
const START_BUCKETS: usize = 1024;

/// The bucket of [`DriveQueue::starts`] a command starting at byte `offset` counts in: the
/// top bits of its sector by Fibonacci hashing (commands' sectors share their low bits).
#[inline]
fn start_bucket(offset: u64) -> usize {
    ((offset >> 9).wrapping_mul(FIBONACCI) >> (64 - START_BUCKETS.trailing_zeros())) as usize
}

impl DriveQueue {
    /// `window`: how many of the first commands the scheduler chooses among (0: none is
    /// kept by angle — the drive serves in arrival order).
    pub fn new(window: usize) -> DriveQueue {
        DriveQueue {
            depth: window,
            starts: (window <= u16::MAX as usize).then(|| Box::new([0; START_BUCKETS])),
            ages: true,
            ..Default::default()
        }
    }
    /// [`DriveQueue::new`] for the writes a write cache holds: no command ages.
    pub fn held(window: usize) -> DriveQueue {
        DriveQueue {
            ages: false,
            ..DriveQueue::new(window)
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.window.len() + self.rest.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.window.is_empty() && self.rest.is_empty()
    }
    pub fn clear(&mut self) {
        self.slab.clear();
        self.free.clear();
        self.window.clear();
        self.rest.clear();
        self.writes = 0;
        if let Some(starts) = &mut self.starts {
            starts.fill(0);
        }
        self.read_heads.0.fill(NO_SLOT);
    }
    /// Count the command in `slot` in [`DriveQueue::starts`] as it enters the window (or
    /// leaves it, if not `enters`).
    #[inline(always)]
    fn count_start(&mut self, slot: u32, enters: bool) {
        let r = &self.slab[slot as usize];
        let (offset, write) = (r.offset, r.write);
        let b = start_bucket(offset);
        if let Some(n) = self.starts.as_mut().map(|starts| &mut starts[b]) {
            if enters {
                *n += 1;
            } else {
                *n -= 1;
            }
        }
        self.list_by_region(slot, offset, write, enters);
    }
    /// Put the command in `slot`, at `offset`, on its region's list of reads, or of writes
    /// (or take it off, if not `enters`). Writes are listed apart, and not looked at, rather
    /// than not listed: reads and writes come in no order a branch could learn.
    #[inline(always)]
    fn list_by_region(&mut self, slot: u32, offset: u64, write: bool, enters: bool) {
        let b = region_bucket(offset >> REGION_SHIFT) + REGION_BUCKETS * write as usize;
        let s = slot as usize;
        if enters {
            let head = self.read_heads.0[b];
            self.read_links[s] = (head, NO_SLOT);
            if head != NO_SLOT {
                self.read_links[head as usize].1 = slot;
            }
            self.read_heads.0[b] = slot;
        } else {
            let (next, prev) = self.read_links[s];
            if prev == NO_SLOT {
                self.read_heads.0[b] = next;
            } else {
                self.read_links[prev as usize].0 = next;
            }
            if next != NO_SLOT {
                self.read_links[next as usize].1 = prev;
            }
        }
    }
    /// The command in `slot`, the `seq`th to arrive, enters the window at `now`. Its
    /// candidate is ready from when it is ready and in the window (the later): the drive's
    /// scheduler sees it from then, and its age counts from then — the drive knows nothing
    /// of the time it waited behind the window (see [`DriveQueue::overdue`]).
    #[inline]
    fn enter(&mut self, seq: u64, slot: u32, now: u64) {
        let r = &self.slab[slot as usize];
        let c = Cand::new(r.loc.target(), r.ready.max(now), r.loc.cyl, r.write);
        self.count_start(slot, true);
        if self.window.is_empty() {
            self.oldest = slot;
            self.oldest_ready = c.ready;
        }
        self.window.insert(slot, seq, c);
    }
    /// The window's oldest command if it has been ready for the drive's age limit or longer
    /// by `now` ([`DeviceModel::age_limit_ns`]): it goes next. Its slot.
    #[inline(always)]
    fn overdue(&self, model: &DeviceModel, now: u64) -> Option<u32> {
        if !self.ages || self.window.is_empty() {
            return None;
        }
        debug_assert_eq!(
            Some(self.oldest),
            self.window
                .iter()
                .min_by_key(|&(s, _)| self.window.seq(s))
                .map(|(s, _)| s),
            "the oldest is the window's first arrival"
        );
        debug_assert_eq!(self.oldest_ready, self.window.get(self.oldest).ready);
        (now.saturating_sub(self.oldest_ready) >= model.age_limit_ns).then_some(self.oldest)
    }
    #[inline(always)]
    pub fn push_back(&mut self, r: DiskReq) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.writes += r.write as u32;
        if self.window.len() < self.depth {
            let slot = self.place(r);
            self.enter(seq, slot, 0);
        } else {
            self.rest.push_back((seq, r));
        }
    }
    /// Put a command entering the window in a free slot of the slab (which never holds more
    /// than the window does).
    #[inline(always)]
    fn place(&mut self, r: DiskReq) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = r;
                i
            }
            None => self.grow(r),
        }
    }
    /// [`DriveQueue::place`] into a new slot at the slab's end, which the window's arrays by
    /// slot and the lists by region grow to span (only here, so that a command entering or
    /// leaving the window finds them spanning its slot). Out of line: the slab grows only
    /// until it spans the window.
    #[inline(never)]
    fn grow(&mut self, r: DiskReq) -> u32 {
        self.slab.push(r);
        debug_assert!(self.slab.len() <= self.depth, "the slab spans the window");
        let n = self.slab.len();
        self.window.span(n);
        if self.read_links.len() < n {
            self.read_links.resize(n, (NO_SLOT, NO_SLOT));
        }
        (n - 1) as u32
    }
    /// The first to arrive of the window's commands ready by `now` that the drive streams
    /// on to from its last one ([`DeviceModel::streams`]): they start at the offset where the
    /// last ended, so the window holds them at that offset's angle. Its slot.
    #[inline]
    pub fn streaming(&self, model: &DeviceModel, st: &DeviceState, now: u64) -> Option<u32> {
        // (The count of starts first: it rules out most calls, the drive's state few.)
        if self
            .starts
            .as_ref()
            .map(|starts| starts[start_bucket(st.last_end)])
            == Some(0)
        {
            debug_assert!(self
                .window
                .iter()
                .all(|(s, _)| self.slab[s as usize].offset != st.last_end));
            return None;
        }
        if model.kind != DeviceKind::Hdd || !model.any_may_stream(st) {
            return None;
        }
        self.streaming_at(model, st, now)
    }
    /// The nearest of the window's reads, ready by `now`, that the drive reaches by reading
    /// on from its last read ([`DeviceModel::reads_ahead_to`]: a little past where that one
    /// ended, as a RAID 5 member's next data chunk lies past a parity chunk), with the wait
    /// until its first sector passes under the head ([`DeviceModel::read_on_wait`]). Its slot.
    #[inline(always)]
    pub fn reading_on(
        &self,
        model: &DeviceModel,
        st: &DeviceState,
        now: u64,
    ) -> Option<(u32, f64)> {
        let span = model.read_ahead_bytes();
        if model.kind != DeviceKind::Hdd || !st.last_was_read || span == 0 {
            return None;
        }
        let first = st.last_end.saturating_add(1) >> REGION_SHIFT;
        let last = st.last_end.saturating_add(span - 1) >> REGION_SHIFT;
        // (A span of more regions than buckets looks through every bucket once.)
        let regions = (last - first + 1).min(REGION_BUCKETS as u64);
        if (0..regions).all(|g| self.read_heads.0[region_bucket(first + g)] == NO_SLOT) {
            debug_assert!(self.window.iter().all(|(s, _)| {
                let r = &self.slab[s as usize];
                r.write || !model.reads_ahead_to(st, r.offset)
            }));
            return None;
        }
        self.reading_on_at(model, st, now, first, regions)
    }
    /// [`DriveQueue::reading_on`]'s search through the lists of `regions` regions from
    /// `first` (out of line; most calls end before it).
    #[inline(never)]
    fn reading_on_at(
        &self,
        model: &DeviceModel,
        st: &DeviceState,
        now: u64,
        first: u64,
        regions: u64,
    ) -> Option<(u32, f64)> {
        let mut best: Option<(u64, u64, u32)> = None; // offset, arrival, slot
        let mut seen = [NO_SLOT; 8]; // (buckets already looked through: regions may share one)
        for g in 0..regions {
            let b = region_bucket(first + g);
            // (Only the entries written so far: most spans cover two regions.)
            if seen[..(g as usize).min(seen.len())].contains(&(b as u32)) {
                continue;
            }
            seen[g as usize % seen.len()] = b as u32;
            let mut s = self.read_heads.0[b];
            while s != NO_SLOT {
                let r = &self.slab[s as usize];
                if r.ready <= now && model.reads_ahead_to(st, r.offset) {
                    let key = (r.offset, self.window.seq(s), s);
                    if best.is_none_or(|b| key < b) {
                        best = Some(key);
                    }
                }
                s = self.read_links[s as usize].0;
            }
        }
        let (offset, _, s) = best?;
        Some((
            s,
            model.read_on_wait(st, model.t_cmd(now), offset, &self.slab[s as usize].loc),
        ))
    }
    /// The command a drive that schedules by positioning time starts next from this queue's
    /// window: the one that streams on from its last command if any (no positioning), else the
    /// one [`sptf_pick`] picks, with its positioning time, or the nearest read the drive
    /// reaches by reading on ([`DriveQueue::reading_on`]) if it gets there no later; None if
    /// none is ready. Its slot.
    #[inline(always)]
    pub fn pick(
        &self,
        model: &DeviceModel,
        st: &DeviceState,
        now: u64,
        ranks: &mut Vec<Ranked>,
    ) -> Option<(u32, Option<f64>)> {
        // A command kept waiting past the drive's age limit goes first, positioned as it
        // must be (no stream, however close, keeps it waiting longer).
        if let Some(k) = self.overdue(model, now) {
            return Some((k, None));
        }
        if let Some(k) = self.streaming(model, st, now) {
            return Some((k, None));
        }
        // A read the drive reaches within a turn by reading on goes first: positioning
        // elsewhere would end the read-ahead, and getting back to it cost up to a turn.
        // (Its service time is worked out as a read on, or positioned if that is sooner.)
        let on = self.reading_on(model, st, now);
        if let Some((k, wait)) = on {
            if wait <= model.rev_ns() {
                return Some((k, None));
            }
        }
        let best = sptf_pick(model, st, &self.window, now, ranks);
        match on {
            Some((k, wait)) if best.is_none_or(|(_, p)| wait <= p) => Some((k, None)),
            _ => best.map(|(k, p)| (k, Some(p))),
        }
    }
    /// [`DriveQueue::streaming`] once a command may start at the last one's end: the search
    /// (out of line; most calls end before it).
    #[inline(never)]
    fn streaming_at(&self, model: &DeviceModel, st: &DeviceState, now: u64) -> Option<u32> {
        let target = model.last_end_target(st);
        let mut n = self.window.seek::<false>(target)?;
        for _ in 0..self.window.len() {
            let c = self.window.get(n);
            if c.target != target {
                break;
            }
            let r = &self.slab[n as usize];
            if c.ready <= now && model.streams(st, r.offset, r.write) {
                return Some(n);
            }
            n = c.next;
        }
        None
    }
    /// Take out the first write to arrive that is ready by `now` and no longer than `room`
    /// bytes (for a write cache to take in).
    pub fn take_first_write(&mut self, now: u64, room: u64) -> Option<DiskReq> {
        self.debug_check_writes();
        if self.writes == 0 {
            return None;
        }
        self.take_first(now, |r| r.write && r.ready <= now && r.len <= room)
    }
    /// Take out the first read to arrive that is ready by `now` and that `hit` accepts.
    pub fn take_first_read(&mut self, now: u64, hit: impl Fn(&DiskReq) -> bool) -> Option<DiskReq> {
        self.take_first(now, |r| !r.write && r.ready <= now && hit(r))
    }
    fn take_first(&mut self, now: u64, fits: impl Fn(&DiskReq) -> bool) -> Option<DiskReq> {
        // The window holds the earliest arrivals; the rest came after them.
        let k = self
            .window
            .iter()
            .filter(|&(s, _)| fits(&self.slab[s as usize]))
            .min_by_key(|&(s, _)| self.window.seq(s))
            .map(|(s, _)| s);
        if let Some(k) = k {
            return Some(self.take(k, now));
        }
        let idx = self.rest.iter().position(|(_, r)| fits(r))?;
        Some(self.remove(idx))
    }
    /// Whether a write ready by `now` is queued.
    pub fn has_ready_write(&self, now: u64) -> bool {
        self.debug_check_writes();
        if self.writes == 0 {
            return false;
        }
        let ready = |r: &DiskReq| r.write && r.ready <= now;
        self.window
            .iter()
            .any(|(s, _)| ready(&self.slab[s as usize]))
            || self.rest.iter().any(|(_, r)| ready(r))
    }
    /// (Debug builds: [`DriveQueue::writes`] counts the queue's writes.)
    #[inline(always)]
    fn debug_check_writes(&self) {
        debug_assert_eq!(
            self.writes as usize,
            self.window
                .iter()
                .filter(|&(s, _)| self.slab[s as usize].write)
                .count()
                + self.rest.iter().filter(|(_, r)| r.write).count(),
            "the count of queued writes"
        );
    }
    /// Arrival-order drives: the first command ready by `now`, by its place in the queue.
    #[inline]
    pub fn first_ready(&self, now: u64) -> Option<usize> {
        self.rest.iter().position(|(_, r)| r.ready <= now)
    }
    /// Arrival-order drives: take out the command at `idx` in arrival order.
    #[inline]
    pub fn remove(&mut self, idx: usize) -> DiskReq {
        let r = self.rest.remove(idx).unwrap().1;
        self.writes -= r.write as u32;
        r
    }
    /// Take out the window's command in `slot` at `now`; the next in arrival order moves up
    /// into the window.
    #[inline]
    pub fn take(&mut self, slot: u32, now: u64) -> DiskReq {
        let r = self.slab[slot as usize];
        self.take_slot(slot, now);
        r
    }
    /// [`DriveQueue::take`] into the drive's commands in service (`active`), with an end
    /// time of 0 for the caller to set: copied once, from where the queue kept it.
    #[inline(always)]
    pub fn take_into(&mut self, slot: u32, now: u64, active: &mut Vec<(u64, DiskReq)>) {
        // (By `extend`, which makes room before it reads the command: a `push` reads it first
        // and keeps it on the stack across the list's growth.)
        let s = slot as usize;
        active.extend(self.slab[s..=s].iter().map(|&r| (0, r)));
        self.take_slot(slot, now);
    }
    /// The window's command in `slot` leaves it (see [`DriveQueue::take`]), and the first of
    /// the rest, if any, takes its place: the slot is free to hold it, and the command that
    /// left is gone from the slab.
    #[inline(always)]
    fn take_slot(&mut self, slot: u32, now: u64) {
        self.writes -= self.slab[slot as usize].write as u32;
        self.window.remove(slot);
        if slot == self.oldest {
            if let Some((s, c)) = self.window.iter().min_by_key(|&(s, _)| self.window.seq(s)) {
                self.oldest = s;
                self.oldest_ready = c.ready;
            }
        }
        self.count_start(slot, false);
        // The first of the rest goes straight from there into the slot just freed (as
        // `place` would put it), with no copy on the way.
        match self.rest.front() {
            Some(&(seq, ref r)) => {
                self.slab[slot as usize] = *r;
                self.rest.pop_front();
                self.enter(seq, slot, now);
            }
            None => self.free.push(slot),
        }
    }
}

/// Shortest positioning time first: which of a drive's window of queued commands to start
/// at `now` (its slot), the first to arrive among equals; None if none is ready, with its
/// positioning time (by [`DeviceModel::positioning_from`]). `ranks` is scratch space.
pub fn sptf_pick(
    model: &DeviceModel,
    st: &DeviceState,
    w: &Window,
    now: u64,
    ranks: &mut Vec<Ranked>,
) -> Option<(u32, f64)> {
    // Shortest positioning time first, the first of equals on ties (by arrival),
    // among the first `queue_depth` commands that are ready. A command's
    // positioning time is its seek (and settle) plus the wait for its sector: it
    // ends when the sector passes under the head, so it is at least the time `u`
    // until the sector first passes under the head from now (one turn later for
    // each turn the seek takes). The window is kept in angle order: looking at the
    // commands in the order their sectors come round (rising `u`), the search can
    // stop at the first whose `u` exceeds the best positioning time found — no
    // later one can reach its sector sooner. `u` is approximate: `slack` covers
    // its rounding against the exact formula, which alone picks the command.
    //
    // In the walk a command's positioning time is taken as `u` when its seek ends
    // before the sector comes round (by more than `slack`), `u` + one turn when it
    // ends after that and before the next pass, and by the exact formula
    // otherwise. The exact formula then decides among those within twice `slack`
    // of the best so found.
    let t_cmd = model.t_cmd(now);
    let a0 = model.angle_at(st, t_cmd);
    let slack = 1.0 + f64_of(now) * 1e-14;
    let n = w.len();
    let mut walk = Walk {
        model,
        st,
        now,
        t_cmd,
        settle: [model.settle_ns() * 0.0, model.settle_ns() * 1.0],
        rev: model.rev_ns(),
        slack,
        rev_less: model.rev_ns() - slack,
        low: f64::INFINITY,
        low_plus: f64::INFINITY + slack,
        slack_2: 2.0 * slack,
        ranks,
    };
    walk.ranks.clear();
    let rev = walk.rev;
    // From the first sector at or past the head's angle round the turn: those still to come
    // this turn (`wait` below is `target - a0` ≥ 0), then those that come round on the next
    // (`wait` < 0, plus a turn).
    let start = w.seek::<false>(a0).or_else(|| w.first())?;
    // (The command before the start, for the look back below: read with the start's.)
    let before = w.linked(start).prev;
    // (How many commands are not yet looked at: counted down, the loops' test is the count's.)
    let mut left = n;
    let mut k = start;
    let mut stopped = false;
    while left > 0 {
        let c = w.linked(k);
        let wait = c.target - a0;
        if wait < 0.0 {
            break; // (the first of the next turn)
        }
        let u = wait * rev;
        if u - slack > walk.low_plus {
            stopped = true;
            break;
        }
        walk.look(c, k, u);
        left -= 1;
        k = c.next;
    }
    if !stopped {
        while left > 0 {
            let c = w.linked(k);
            let wait = c.target - a0;
            debug_assert!(wait < 0.0);
            let u = (wait + 1.0) * rev;
            if u - slack > walk.low_plus {
                break;
            }
            walk.look(c, k, u);
            left -= 1;
            k = c.next;
        }
    }
    // Sectors just past the head by the approximate angle may in fact be just
    // ahead of it: those at the end of the order within `slack` of a full turn, the
    // commands not yet looked at back from the head's angle (those of the next turn,
    // then those of this one).
    // (Almost always none is: the first of them is checked before the loop.)
    let near_turn = rev - 2.0 * slack;
    if left > 0 {
        let mut k = before;
        if turn_wait(w.linked(k).target - a0, rev) >= near_turn {
            while left > 0 {
                let c = w.linked(k);
                let u = turn_wait(c.target - a0, rev);
                if u < near_turn {
                    break;
                }
                walk.look(c, k, u);
                left -= 1;
                k = c.prev;
            }
        }
    }
    // Often (two picks in five) one command is ranked: the lowest, within twice `slack` of
    // itself. It is chosen unless its exact time is NaN (as the loop below would have it).
    if let [r] = walk.ranks[..] {
        let p = model.positioning_to(st, t_cmd, r.pos, w.linked(r.k).target);
        return (!p.is_nan()).then_some((r.k, p));
    }
    let near_low = walk.low_2();
    let mut best = (f64::INFINITY, u64::MAX, 0u32);
    for r in walk.ranks.iter() {
        if r.p <= near_low {
            let (k, pos) = (r.k, r.pos);
            let p = model.positioning_to(st, t_cmd, pos, w.linked(k).target);
            let seq = w.seq(k);
            if p < best.0 || (p == best.0 && seq < best.1) {
                best = (p, seq, k);
            }
        }
    }
    (best.1 != u64::MAX).then_some((best.2, best.0))
}

/// [`sptf_pick`]'s walk through the window: the best positioning time so far and the
/// commands near it.
struct Walk<'a> {
    model: &'a DeviceModel,
    st: &'a DeviceState,
    now: u64,
    t_cmd: f64,
    /// The settle a read and a write add to the seek (× 0 and × 1).
    settle: [f64; 2],
    /// One turn, ns; and one turn less `slack`.
    rev: f64,
    rev_less: f64,
    slack: f64,
    /// The lowest positioning time so far, and it plus `slack`; twice `slack` (exactly).
    low: f64,
    low_plus: f64,
    slack_2: f64,
    /// The commands looked at that may yet be within twice `slack` of the lowest.
    ranks: &'a mut Vec<Ranked>,
}

/// A command [`sptf_pick`] looked at: its approximate positioning time, its seek (and
/// settle), and its slot.
#[derive(Clone, Copy, Debug)]
pub struct Ranked {
    p: f64,
    pos: f64,
    k: u32,
}

/// The time, ns, until an angle `wait` (a fraction of a turn, > −1) from the head's passes
/// under it: `wait` of a turn, or `wait` plus a turn if the angle is behind the head.
#[inline(always)]
fn turn_wait(wait: f64, rev: f64) -> f64 {
    if wait < 0.0 {
        (wait + 1.0) * rev
    } else {
        wait * rev
    }
}

impl Walk<'_> {
    /// The lowest positioning time so far plus twice `slack` (worked out as needed rather
    /// than kept: the walk's every step compares `low_plus`, few `low_2`).
    #[inline(always)]
    fn low_2(&self) -> f64 {
        self.low + self.slack_2
    }
    /// Look at command `c` (in slot `k`), whose sector first passes under the head `u` ns
    /// from now (approximately).
    #[inline(always)]
    fn look(&mut self, c: &Cand, k: u32, u: f64) {
        if c.ready > self.now {
            return;
        }
        let seek = self.model.seek_to_ns(self.st, c.cyl as u64);
        if seek > self.low_plus {
            return;
        }
        let slack = self.slack;
        // (Reads and writes come in no order a branch could learn: the settle is looked up.)
        let pos = seek + self.settle[(c.flags & 1) as usize];
        // (The first two cases exclude each other; the first is the more common, a seek
        // that ends after its sector has passed. Each tests first what decides it most often:
        // where the seek ends against the sector.)
        let p = if pos > u + slack && u >= slack && pos <= u + self.rev - slack {
            u + self.rev
        } else if pos <= u - slack && u >= slack && u <= self.rev_less {
            u
        } else {
            self.model
                .positioning_to(self.st, self.t_cmd, pos, c.target)
        };
        // Only those within twice `slack` of the lowest are ranked by the exact formula at
        // the end; the lowest only falls, and one lower than it is within.
        if p <= self.low_2() {
            if p < self.low {
                self.low = p;
                self.low_plus = p + slack;
            }
            self.ranks.push(Ranked { p, pos, k });
        }
    }
}

/// A drive's write cache, when it is on: the writes it has acknowledged and holds until the
/// media takes them, in its own order (the one continuing the last first, else by
/// positioning time) — not the order they came in.
#[derive(Debug, Default)]
pub struct WriteCache {
    /// Held writes (their `join` is [`HELD`]).
    pub held: DriveQueue,
    /// Where held writes start: (end, how many start there), so a read of held data is
    /// served from the buffer.
    pub extents: BTreeMap<u64, (u64, u32)>,
    /// Bytes held, and how many it can hold.
    pub bytes: u64,
    pub capacity: u64,
    /// How many held writes reach into each 64 KiB region's bucket: a read whose first
    /// byte's bucket counts none is held by no write, known without a look in `extents` (a
    /// drive asks for every read queued behind held writes). (Boxed: 16 KiB.)
    reach: Box<RegionCounts<16, 4096>>,
}

impl WriteCache {
    /// Hold a write the drive has taken in.
    pub fn hold(&mut self, r: DiskReq) {
        self.reach.count(r.offset, r.offset + r.len.max(1), true);
        self.bytes += r.len;
        let e = self.extents.entry(r.offset).or_insert((0, 0));
        e.0 = e.0.max(r.offset + r.len);
        e.1 += 1;
        self.held.push_back(r);
    }
    /// Hold again a write the media had started but not finished (its bytes and extent
    /// are still counted).
    pub fn rehold(&mut self, r: DiskReq) {
        debug_assert!(self.extents.contains_key(&r.offset));
        self.held.push_back(r);
    }
    /// The media has written a held write.
    pub fn written(&mut self, r: &DiskReq) {
        self.reach.count(r.offset, r.offset + r.len.max(1), false);
        self.bytes -= r.len;
        if let Some(e) = self.extents.get_mut(&r.offset) {
            e.1 -= 1;
            if e.1 == 0 {
                self.extents.remove(&r.offset);
            }
        }
    }
    /// Whether [offset, offset + len) lies within one held write (the one starting nearest
    /// below it).
    pub fn holds(&self, offset: u64, len: u64) -> bool {
        // (A write holding the read holds its first byte, so it counts in that byte's
        // bucket.)
        let held = |offset: u64, len: u64| {
            self.extents
                .range(..=offset)
                .next_back()
                .is_some_and(|(_, &(end, _))| end >= offset + len)
        };
        if !self.reach.reaches(offset) {
            debug_assert!(!held(offset, len), "a held write counts in its buckets");
            return false;
        }
        held(offset, len)
    }
}

/// The `join` of a write a drive holds in its write cache: nobody waits for it.
pub const HELD: u32 = u32::MAX;

pub struct Disk {
    pub name: String,
    pub model: usize,
    pub state: DeviceState,
    pub queue: DriveQueue,
    /// Commands in service with their end times.
    pub active: Vec<(u64, DiskReq)>,
    pub units: u32,
    pub queue_depth: u32,
    pub backend: Option<usize>,
    pub busy_ns: u64,
    pub ios: u64,
    /// The write cache (HDDs with it on).
    pub wcache: Option<WriteCache>,
    /// Member offset where the last command given to it ends (md's `head_position`: where
    /// the head will be once the queue has drained), for the mirror read rule.
    pub head_hint: u64,
    /// The array it belongs to.
    pub array: usize,
    /// When the drive's buffer has done with the last command it served without the media
    /// (a write taken into the write cache, a read of data held): their overhead and
    /// transfers go one at a time.
    pub buffer_free: u64,
    /// Reads given to the drive, and those served from its buffer's read segments.
    pub reads: u64,
    pub read_hits: u64,
    /// Commands completed to the controller or host, reads then writes: how many, their
    /// bytes, and their times from arrival at the drive to completion summed (the kernel's
    /// disk statistics, fio's `Disk stats`).
    pub done: [DoneCount; 2],
    /// The time it had a command outstanding (the kernel's `io_ticks`, fio's `util`).
    pub in_flight: InFlight,
}

/// The time a drive has had at least one command outstanding — from its arrival at the drive
/// to its completion to the controller or host — as the kernel counts a disk's `io_ticks`,
/// which fio's `util` divides by the run's time. Unlike [`Disk::busy_ns`] (the media's and
/// the buffer's service, summed over a flash drive's units), it is full for a drive that
/// always has a command outstanding, however many of its units are idle, and it leaves out
/// what a drive does on its own (reading ahead, writing out its write cache).
///
/// Commands are counted as they are given to the drive and as they complete, in the order
/// the simulator handles them, while their times may lie a little ahead (a write waits for
/// its parity; a buffer hit's completion is known as it arrives): a period runs from the
/// earliest arrival while commands are outstanding to the latest completion among them, and
/// a command that arrives before that completion continues the period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InFlight {
    outstanding: u32,
    start: u64,
    end: u64,
    /// The closed periods' time, ns.
    closed_ns: u64,
}

impl InFlight {
    /// A command arrives at the drive at `t`.
    #[inline(always)]
    pub fn arrive(&mut self, t: u64) {
        if self.outstanding == 0 && t > self.end {
            self.closed_ns += self.end - self.start;
            self.start = t;
            self.end = t;
        } else if t < self.start {
            self.start = t;
        }
        self.outstanding += 1;
    }

    /// A command completes at `t`.
    #[inline(always)]
    pub fn complete(&mut self, t: u64) {
        debug_assert!(
            self.outstanding > 0,
            "a command completes that never arrived"
        );
        self.outstanding -= 1;
        self.end = self.end.max(t);
    }

    /// The commands outstanding are dropped at `t` (between stonewall groups): the period
    /// ends there.
    pub fn drop_at(&mut self, t: u64) {
        self.closed_ns = self.ns_at(t);
        self.start = t;
        self.end = t;
        self.outstanding = 0;
    }

    /// The time, ns, with a command outstanding up to `t` (a period still open counts up
    /// to `t`, one that ends after `t` up to `t` as well).
    pub fn ns_at(&self, t: u64) -> u64 {
        let until = if self.outstanding > 0 {
            t
        } else {
            self.end.min(t)
        };
        self.closed_ns + until.saturating_sub(self.start)
    }
}

/// A drive's completed commands of one direction (see [`Disk::done`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DoneCount {
    pub ios: u64,
    pub bytes: u64,
    pub ticks_ns: u64,
}

/// A command a drive serves from its buffer, without the media (a write taken into the
/// write cache, a read of data held), arriving at `t` and taking `ns` of overhead and
/// transfer: it waits for the one before ([`Disk::buffer_free`], moved on), and ends at the
/// time returned. (Of the field alone, so a caller may hold the write cache meanwhile.)
#[inline]
pub fn buffer_serve(buffer_free: &mut u64, t: u64, ns: u64) -> u64 {
    *buffer_free = t.max(*buffer_free) + ns;
    *buffer_free
}

impl Disk {
    /// Whether the drive could do something now: take a write into its cache, or start a
    /// command on an idle unit. A drive without a write cache whose every unit is busy looks
    /// again when a command finishes.
    #[inline(always)]
    pub fn may_start(&self) -> bool {
        self.wcache.is_some() || (self.active.len() as u32) < self.units
    }
}

pub struct Controller {
    pub name: String,
    pub cpu: usize,
    pub read_cmd_ns: u64,
    pub write_cmd_ns: u64,
    pub parity: Option<usize>,
    pub cache_bytes: u64,
    pub write_back: bool,
    pub read_ahead: u64,
    pub destage_depth: u32,
    pub destage_coalesce: u32,
    /// Destage nothing, not even full stripes, until the cache is three quarters full.
    pub lazy_destage: bool,
    pub dirty: u64,
    /// Writes waiting for cache space: (io, array).
    pub space_waiters: VecDeque<u32>,
    pub arrays: Vec<usize>,
}

/// A dirty stripe in a controller's write-back cache.
#[derive(Clone, Debug, Default)]
pub struct Dirty {
    /// Dirty byte ranges relative to the stripe start, sorted, merged, and their bytes.
    pub ranges: Ranges,
    /// When it became dirty (the array's count of stripes made dirty so far): with
    /// [`Array::aged`] it gives the oldest dirty stripe.
    pub born: u64,
    pub destaging: bool,
}

/// Ranges a [`Ranges`] holds without allocating.
const INLINE_RANGES: usize = 3;

/// The largest stripe [`Ranges`] can describe: its offsets are kept in 32 bits (the system
/// file's check refuses arrays with larger stripes).
pub const MAX_STRIPE_BYTES: u64 = u32::MAX as u64;

/// Byte ranges within one stripe, sorted and merged as by [`add_range`], and the bytes they
/// cover: the first few inline (random small writes leave one to three a stripe), more
/// behind a pointer. A stripe made dirty thus needs no allocation, nor a free when the world
/// is dropped, however many stripes the cache holds.
///
/// Offsets are below [`MAX_STRIPE_BYTES`], so the inline ranges take 32 bits each and the
/// whole is 40 bytes: small enough that a dirty stripe's entry fits one cache line
/// ([`DirtyMap`]).
#[derive(Clone, Debug, Default)]
pub struct Ranges {
    inline: [(u32, u32); INLINE_RANGES],
    /// Every range, once more than fit inline were needed.
    // (Boxed: 8 bytes here where a Vec takes 24, and a stripe's entry is a cache line.)
    #[allow(clippy::box_collection)]
    spill: Option<Box<Vec<(u64, u64)>>>,
    /// The bytes the ranges cover.
    bytes: u32,
    /// How many of `inline` hold ranges, or [`SPILLED`].
    len: u8,
}

// (The sizes the notes above count on.)
const _: () = assert!(std::mem::size_of::<Ranges>() == 40);
const _: () = assert!(std::mem::size_of::<Dirty>() == 56);

/// [`Ranges::len`] once the ranges are in `spill` (past the inline array, so the inline
/// fast path's bounds check fails).
const SPILLED: u8 = u8::MAX;

impl Ranges {
    /// The ranges, in order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        type Parts<'a> = (&'a [(u32, u32)], &'a [(u64, u64)]);
        let (inline, spill): Parts = match &self.spill {
            Some(v) if self.len == SPILLED => (&[], v),
            _ => (&self.inline[..self.len as usize], &[]),
        };
        inline
            .iter()
            .map(|&(a, b)| (a as u64, b as u64))
            .chain(spill.iter().copied())
    }

    /// The bytes the ranges cover.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes as u64
    }

    /// Whether [a, b) is covered: within one range (they are merged, so a span two ranges
    /// would cover has a gap).
    pub fn covers(&self, a: u64, b: u64) -> bool {
        self.iter().any(|(x, y)| x <= a && b <= y)
    }

    /// Add [a, b), as [`add_range`] does to a `Vec`; returns the bytes newly covered.
    #[inline(always)]
    pub fn add(&mut self, a: u64, b: u64) -> u64 {
        debug_assert!(a <= MAX_STRIPE_BYTES && b <= MAX_STRIPE_BYTES);
        // A sequential writer's next range continues the last one: inline, the rest not.
        if let Some(last) = self.inline.get_mut((self.len as usize).wrapping_sub(1)) {
            if last.1 as u64 == a && a < b {
                last.1 = b as u32;
                self.bytes += (b - a) as u32;
                return b - a;
            }
        }
        let added = self.add_more(a, b);
        self.bytes += added as u32;
        added
    }

    /// Take [a, b) out of the ranges (a trim of cached data); returns the bytes it covered.
    /// Out of line and allocating: trims are rare next to writes.
    #[inline(never)]
    pub fn remove(&mut self, a: u64, b: u64) -> u64 {
        let before = self.bytes();
        let mut kept = Ranges::default();
        for (x, y) in self.iter() {
            if x < a.min(y) {
                kept.add(x, a.min(y));
            }
            if y > b.max(x) {
                kept.add(b.max(x), y);
            }
        }
        *self = kept;
        before - self.bytes()
    }

    /// [`Ranges::add`] for the other cases (out of line): as `add_range_more`, in place, or
    /// moving the ranges to `spill` when one more does not fit.
    #[inline(never)]
    fn add_more(&mut self, a: u64, b: u64) -> u64 {
        if self.len == SPILLED {
            return add_range(self.spill.as_mut().expect("spilled ranges"), a, b);
        }
        let n = self.len as usize;
        if a < b {
            let (a, b) = (a as u32, b as u32);
            let r = &self.inline[..n];
            let i = r.partition_point(|&(_, y)| y < a);
            let j = r.partition_point(|&(x, _)| x <= b);
            if i < j {
                let covered: u32 = r[i..j].iter().map(|(x, y)| y - x).sum();
                let (lo, hi) = (a.min(r[i].0), b.max(r[j - 1].1));
                self.inline[i] = (lo, hi);
                self.inline.copy_within(j..n, i + 1);
                self.len = (n - (j - i - 1)) as u8;
                return ((hi - lo) - covered) as u64;
            }
            if n < INLINE_RANGES {
                self.inline.copy_within(i..n, i + 1);
                self.inline[i] = (a, b);
                self.len = (n + 1) as u8;
                return (b - a) as u64;
            }
        }
        let mut spill: Vec<(u64, u64)> = self.inline[..n]
            .iter()
            .map(|&(x, y)| (x as u64, y as u64))
            .collect();
        let added = add_range(&mut spill, a, b);
        self.spill = Some(Box::new(spill));
        self.len = SPILLED;
        added
    }
}

/// A controller's read-ahead window for a read stream that just continued with a request of
/// `len` bytes, its window having been `prev` bytes (0 when this is the stream's first
/// continuation); `depth` is the controller's configured read-ahead.
///
/// The window starts at one request and grows by one request each time the stream continues,
/// up to the configured depth, or to one request if requests are larger than that: adaptive
/// sequential prefetching as storage controllers do it (Gill & Bathen, "AMP: Adaptive
/// Multi-stream Prefetching in a Shared Cache", FAST 2007, §III-C: the degree of prefetch
/// starts small and grows by the read size on each hit of a sequence, which keeps a short run
/// from reading far past its end; "variable" prefetch policies prefetch a multiple of the
/// request length). A window of at least one request keeps the drives reading the next
/// request while this one's data goes to the host, whatever the request size.
#[inline]
pub fn stream_read_ahead(prev: u64, len: u64, depth: u64) -> u64 {
    (prev + len).min(depth.max(len))
}

/// Add [a, b) to sorted, merged (touching ranges join) byte ranges; returns the bytes newly
/// covered. In place: the ranges it meets are replaced by their union with [a, b).
#[inline(always)]
pub fn add_range(ranges: &mut Vec<(u64, u64)>, a: u64, b: u64) -> u64 {
    // A sequential writer's next range continues the last one: inline, the rest not.
    match ranges.last_mut() {
        Some(last) if last.1 == a && a < b => {
            last.1 = b;
            b - a
        }
        _ => add_range_more(ranges, a, b),
    }
}

/// [`add_range`] for any range but one continuing the last (out of line).
fn add_range_more(ranges: &mut Vec<(u64, u64)>, a: u64, b: u64) -> u64 {
    if a >= b {
        return add_range_sorting(ranges, a, b);
    }
    // A writer's next range follows the last one, or is the first.
    match ranges.last_mut() {
        Some(last) if last.1 < a => {
            ranges.push((a, b));
            return b - a;
        }
        None => {
            ranges.push((a, b));
            return b - a;
        }
        _ => {}
    }
    // Ranges before `i` end before `a`; ranges from `j` on start after `b`; those between
    // overlap or touch [a, b) and merge with it.
    let i = ranges.partition_point(|&(_, y)| y < a);
    let j = ranges.partition_point(|&(x, _)| x <= b);
    if i >= j {
        ranges.insert(i, (a, b));
        return b - a;
    }
    let covered: u64 = ranges[i..j].iter().map(|(x, y)| y - x).sum();
    let (lo, hi) = (a.min(ranges[i].0), b.max(ranges[j - 1].1));
    ranges[i] = (lo, hi);
    ranges.drain(i + 1..j);
    (hi - lo) - covered
}

/// The general form (any input, including an empty range): append, sort, merge.
fn add_range_sorting(ranges: &mut Vec<(u64, u64)>, a: u64, b: u64) -> u64 {
    let before: u64 = ranges.iter().map(|(x, y)| y - x).sum();
    ranges.push((a, b));
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for &(x, y) in ranges.iter() {
        if let Some(last) = out.last_mut() {
            if x <= last.1 {
                last.1 = last.1.max(y);
                continue;
            }
        }
        out.push((x, y));
    }
    *ranges = out;
    let after: u64 = ranges.iter().map(|(x, y)| y - x).sum();
    after - before
}

/// Member I/O plans of an array by the shape of the request, for arrays whose layout repeats
/// every `members` stripes (each stripe one chunk row deep on every member): the planner is
/// then a pure function of (stripe mod members, range within the stripe) up to a shift of the
/// member offsets, and is asked once per shape. Whether the layout repeats is checked against
/// the planner itself before the cache is used; otherwise every call goes to the planner.
#[derive(Debug, Default)]
pub struct PlanCache {
    /// None until first used; then whether the layout was found periodic.
    periodic: Option<bool>,
    /// (stripe mod period, dirty ranges within the stripe, unused entries empty) → destage
    /// plan for that residue.
    writes: FastMap<(u64, [(u64, u64); MAX_RANGES]), CachedWrite>,
    /// (offset mod period bytes, length) → member reads for that offset.
    reads: FastMap<(u64, u64), CachedRead>,
    /// Mirrors: (offset mod period bytes, length) → the read's pieces and their copies, for
    /// reads that go to the least loaded copy; None where the planner's read and write do
    /// not pair up (those reads are planned whole).
    mirror_reads: FastMap<(u64, u64), Option<Vec<MirrorPiece>>>,
    /// RAID 5 only: the destage plans by their member roles (see [`Roles`]), which all
    /// stripes share, instead of by residue and roles in one: a `members`-th of the shapes
    /// to plan. None until first used; then whether the planner was found to plan by roles.
    roles: Option<Option<Roles>>,
    /// Parity arrays: (stripe mod period, bit mask of the data chunks a row segment writes)
    /// → what one such segment reads and writes, or None where the planner's plan for it
    /// is not of that form (see [`PlanCache::by_segments`]).
    segments: FastMap<(u64, u64), Option<SegmentPlan>>,
    /// Scratch for `by_segments`: the ranges' pieces by data chunk (index, lo, hi within
    /// the chunk), and their edges.
    pieces: Vec<(u32, u64, u64)>,
    cuts: Vec<u64>,
}

/// What the planner does for one row segment of a parity stripe that some data chunks write
/// (the segment's mask): which members it reads and writes, each over the segment's bytes at
/// the segment's own member offset, and the parity computation's input bytes per byte of
/// the segment.
#[derive(Debug)]
struct SegmentPlan {
    reads: Vec<u32>,
    writes: Vec<u32>,
    parity_per_byte: u64,
}

/// The length of the one-segment write a [`SegmentPlan`] is taken from.
const SEGMENT_UNIT: u64 = 512;

/// A RAID 5 array's member roles in each stripe of a period: role k < data disks is the
/// stripe's k-th data chunk, role `data disks` its parity. The planner plans a parity stripe
/// from its layout alone (`raidlab_geometry::planner::plan_parity`: which member holds each
/// data chunk and P, and the stripe's base offset), so a plan by roles, member offsets taken
/// from the stripe's base, holds for every stripe — up to the order of its I/Os, which
/// callers sort anyway ([`PlanCache::stripe_write`]).
#[derive(Debug)]
struct Roles {
    /// Per stripe residue: role → member.
    member: Vec<Vec<u32>>,
    /// Per stripe residue: member → role.
    role: Vec<Vec<u32>>,
    /// Dirty ranges within the stripe (unused entries empty) → plan by roles.
    writes: FastMap<[(u64, u64); MAX_RANGES], CachedWrite>,
}

impl Roles {
    /// The roles of `g`'s stripes, if it is a RAID 5 array whose layout repeats every
    /// `members` stripes.
    fn new(g: &ArrayGeom) -> Option<Roles> {
        if g.level != Level::Raid5 {
            return None;
        }
        let geo = g.g.as_ref()?;
        let p = PlanCache::period(g);
        let (mut member, mut role) = (Vec::new(), Vec::new());
        for r in 0..p {
            let sl = geo.stripe_layout(r)?;
            if (r + p + 1) * g.stripe_data_bytes() <= g.capacity() {
                let next = geo.stripe_layout(r + p)?;
                if (&next.data, next.p) != (&sl.data, sl.p) {
                    return None;
                }
            }
            let mut m = sl.data.clone();
            m.push(sl.p?);
            let mut inv = vec![u32::MAX; g.members as usize];
            for (k, &x) in m.iter().enumerate() {
                inv[x as usize] = k as u32;
            }
            member.push(m);
            role.push(inv);
        }
        Some(Roles {
            member,
            role,
            writes: FastMap::default(),
        })
    }

    /// `v` (member I/Os of stripe residue `r`, base offset `base`) by roles.
    fn to_roles(&self, r: u64, base: u64, v: &[MemberIo]) -> Vec<MemberIo> {
        let role = &self.role[r as usize];
        v.iter()
            .map(|m| MemberIo {
                member: role[m.member as usize],
                offset: m.offset - base,
                len: m.len,
            })
            .collect()
    }

    /// Append `v` (by roles) as member I/Os of stripe residue `r`, base offset `base`.
    #[inline]
    fn extend(&self, r: u64, base: u64, v: &[MemberIo], out: &mut Vec<MemberIo>) {
        let member = &self.member[r as usize];
        out.extend(v.iter().map(|m| MemberIo {
            member: member[m.member as usize],
            offset: m.offset + base,
            len: m.len,
        }));
    }
}

/// `v` sorted by (member, offset, len): the order-free form of a plan's I/Os.
fn sorted_ios(mut v: Vec<MemberIo>) -> Vec<MemberIo> {
    v.sort_unstable_by_key(|m| (m.member, m.offset, m.len));
    v
}

/// A cached read's member I/Os: one (a read within a chunk, nearly always) kept in the map's
/// slot itself, so a hit reads no other memory; more in a list of their own.
#[derive(Debug)]
enum CachedRead {
    One(MemberIo),
    Many(Vec<MemberIo>),
}

impl CachedRead {
    fn new(v: Vec<MemberIo>) -> CachedRead {
        match v.as_slice() {
            [one] => CachedRead::One(*one),
            _ => CachedRead::Many(v),
        }
    }
    #[inline]
    fn ios(&self) -> &[MemberIo] {
        match self {
            CachedRead::One(m) => std::slice::from_ref(m),
            CachedRead::Many(v) => v,
        }
    }
}

#[derive(Debug)]
struct CachedWrite {
    reads: Vec<MemberIo>,
    writes: Vec<MemberIo>,
    parity: u64,
}

/// Destages of stripes with up to this many dirty ranges have their plans cached (random
/// small writes leave one to three; their shapes repeat).
const MAX_RANGES: usize = 4;

/// Entries kept per map before it starts over (random small I/O over wide stripes has many
/// shapes; the cache must not grow without bound).
const PLAN_CACHE_MAX: usize = 1 << 16;

/// Keeps `v` under `k` in a plan cache map, emptying the map first if it is full.
fn insert_capped<K: std::hash::Hash + Eq, V>(map: &mut FastMap<K, V>, k: K, v: V) {
    if map.len() >= PLAN_CACHE_MAX {
        map.clear();
    }
    map.insert(k, v);
}

impl PlanCache {
    /// The plan cache of a degraded array: its failed member keeps its place while the
    /// roles rotate, so plans repeat only from period to period, never by roles.
    pub fn degraded() -> PlanCache {
        PlanCache {
            roles: Some(None),
            ..PlanCache::default()
        }
    }

    /// A plan cache that caches nothing: every plan comes from the planner (a rebuilding
    /// array's plans change as the rebuild passes).
    pub fn uncached() -> PlanCache {
        PlanCache {
            periodic: Some(false),
            ..PlanCache::default()
        }
    }

    /// How many stripes the layout's plans repeat after, if they repeat: `members` (every
    /// role comes round), times the survivors for a degraded RAID 1, whose plain read rule
    /// rotates over the surviving copies (chunk mod survivors).
    fn period(g: &ArrayGeom) -> u64 {
        let n = g.members.max(1) as u64;
        match g.level {
            Level::Raid1 if !g.failed.is_empty() => n * (n - g.failed.len() as u64).max(1),
            _ => n,
        }
    }

    /// Layouts that can repeat every `members` stripes (linear arrays fill one member after
    /// the other; a near-2 RAID 10 over an odd count shifts its copies from row to row).
    fn may_repeat(g: &ArrayGeom) -> bool {
        g.g.is_some()
            && match g.level {
                Level::Single | Level::Raid0 | Level::Raid1 | Level::Raid5 | Level::Raid6 => true,
                Level::Raid10 => g.members.is_multiple_of(2),
                Level::Linear => false,
            }
    }

    fn periodic(&mut self, g: &ArrayGeom) -> bool {
        *self.periodic.get_or_insert_with(|| Self::may_repeat(g))
    }

    /// Where logical byte `off` falls in the layout's period: its offset within the period
    /// (the cache's key), and how far member offsets there lie past the period's first
    /// (what a cached plan's offsets move up by).
    #[inline(always)]
    fn residue(g: &ArrayGeom, off: u64) -> (u64, u64) {
        let sd = g.stripe_data_bytes();
        let r = off % (Self::period(g) * sd);
        (r, (off - r) / sd * g.chunk)
    }

    /// `v` with every member offset moved by `by` (down when `down`).
    fn shift(v: &[MemberIo], by: u64, down: bool) -> Vec<MemberIo> {
        v.iter()
            .map(|m| MemberIo {
                offset: if down { m.offset - by } else { m.offset + by },
                ..*m
            })
            .collect()
    }

    /// The stripe to check a new shape at stripe `s` against: its residue stripe, or one
    /// period on when `s` is the residue (if the array reaches that far).
    fn probe(g: &ArrayGeom, s: u64, stripes_needed: u64) -> Option<u64> {
        let p = Self::period(g);
        let r = s % p;
        if s != r {
            return Some(r);
        }
        ((r + p + stripes_needed) * g.stripe_data_bytes() <= g.capacity()).then_some(r + p)
    }

    /// The planner's destage plan for dirty ranges `ranges` of stripe `s`: appends its reads
    /// and writes, returns the parity bytes (as `ArrayGeom::plan_stripe_write`). The I/Os
    /// may come in another order than the planner's (see `Roles`): callers sort them.
    ///
    /// A shape met for the first time is put together from its row segments' plans
    /// (`PlanCache::by_segments`), as is one of more ranges than shapes are kept for;
    /// where that does not apply, it is planned at `s` and at a stripe a whole number of
    /// periods away. Either way a plan checked one period away must agree up to the shift
    /// of member offsets, or this array's plans are not cached at all from then on.
    pub fn stripe_write(
        &mut self,
        g: &ArrayGeom,
        s: u64,
        ranges: &[(u64, u64)],
        reads: &mut Vec<MemberIo>,
        writes: &mut Vec<MemberIo>,
    ) -> u64 {
        if ranges.len() > MAX_RANGES && self.periodic(g) {
            if let Some(parity) = self.by_segments(g, s, ranges, reads, writes) {
                return parity;
            }
        }
        if ranges.is_empty() || ranges.len() > MAX_RANGES || !self.periodic(g) {
            let p = g.plan_stripe_write(s, ranges);
            reads.extend(p.reads);
            writes.extend(p.writes);
            return p.parity_bytes;
        }
        let p = Self::period(g);
        let r = s % p;
        let by = (s - r) * g.chunk;
        let mut shape = [(0u64, 0u64); MAX_RANGES];
        shape[..ranges.len()].copy_from_slice(ranges);
        if let Some(roles) = self.roles.get_or_insert_with(|| Roles::new(g)) {
            let base = s * g.chunk;
            if let Some(c) = roles.writes.get(&shape) {
                let (r0, w0) = (reads.len(), writes.len());
                roles.extend(r, base, &c.reads, reads);
                roles.extend(r, base, &c.writes, writes);
                debug_assert!({
                    let direct = g.plan_stripe_write(s, ranges);
                    sorted_ios(reads[r0..].to_vec()) == sorted_ios(direct.reads)
                        && sorted_ios(writes[w0..].to_vec()) == sorted_ios(direct.writes)
                        && c.parity == direct.parity_bytes
                });
                return c.parity;
            }
            let here = g.plan_stripe_write(s, ranges);
            let c = CachedWrite {
                reads: roles.to_roles(r, base, &here.reads),
                writes: roles.to_roles(r, base, &here.writes),
                parity: here.parity_bytes,
            };
            // Checked once a shape against the planner at a neighbouring stripe, whose
            // roles fall on other members.
            let sd = g.stripe_data_bytes();
            let q = if (s + 2) * sd <= g.capacity() {
                Some(s + 1)
            } else {
                s.checked_sub(1)
            };
            let same = q.is_none_or(|q| {
                let there = g.plan_stripe_write(q, ranges);
                let (qr, qbase) = (q % p, q * g.chunk);
                sorted_ios(c.reads.clone()) == sorted_ios(roles.to_roles(qr, qbase, &there.reads))
                    && sorted_ios(c.writes.clone())
                        == sorted_ios(roles.to_roles(qr, qbase, &there.writes))
                    && c.parity == there.parity_bytes
            });
            if same {
                insert_capped(&mut roles.writes, shape, c);
            } else {
                self.roles = Some(None);
            }
            reads.extend(here.reads);
            writes.extend(here.writes);
            return here.parity_bytes;
        }
        let key = (r, shape);
        if let Some(c) = self.writes.get(&key) {
            reads.extend(c.reads.iter().map(|m| MemberIo {
                offset: m.offset + by,
                ..*m
            }));
            writes.extend(c.writes.iter().map(|m| MemberIo {
                offset: m.offset + by,
                ..*m
            }));
            return c.parity;
        }
        // A new shape: from its segments' plans, each checked once against the planner one
        // period away, as a whole shape is below.
        let (r0, w0) = (reads.len(), writes.len());
        if let Some(parity) = self.by_segments(g, s, ranges, reads, writes) {
            let c = CachedWrite {
                reads: Self::shift(&reads[r0..], by, true),
                writes: Self::shift(&writes[w0..], by, true),
                parity,
            };
            insert_capped(&mut self.writes, key, c);
            return parity;
        }
        let here = g.plan_stripe_write(s, ranges);
        if let Some(q) = Self::probe(g, s, 1) {
            let there = g.plan_stripe_write(q, ranges);
            let qby = (q - r) * g.chunk;
            let base = CachedWrite {
                reads: Self::shift(&here.reads, by, true),
                writes: Self::shift(&here.writes, by, true),
                parity: here.parity_bytes,
            };
            if base.reads == Self::shift(&there.reads, qby, true)
                && base.writes == Self::shift(&there.writes, qby, true)
                && there.parity_bytes == base.parity
            {
                insert_capped(&mut self.writes, key, base);
            } else {
                self.periodic = Some(false);
            }
        }
        reads.extend(here.reads);
        writes.extend(here.writes);
        here.parity_bytes
    }

    /// A parity stripe's destage plan put together from its row segments, as the planner
    /// makes it: the planner cuts the rows the dirty ranges cover at every range's edge
    /// within its chunk, and plans each segment that some chunk writes whole on its own
    /// (`raidlab_geometry::planner`'s `parity_write`: read-modify-write, reconstruct-write
    /// or a full-stripe write by md's counts, from which chunks write the segment and which
    /// members have failed). A segment's plan is then the same for every segment of the
    /// same chunks, up to its offset and length, at every stripe of the same residue: it is
    /// asked of the planner once, for a 512-byte segment, and checked one period away.
    /// None (nothing appended) for a level or width this does not cover, or where the
    /// planner's segment plan is not of that form; `periodic` is cleared where the check
    /// fails. A debug build checks the result against the planner.
    fn by_segments(
        &mut self,
        g: &ArrayGeom,
        s: u64,
        ranges: &[(u64, u64)],
        reads: &mut Vec<MemberIo>,
        writes: &mut Vec<MemberIo>,
    ) -> Option<u64> {
        let (c, dd) = (g.chunk, u64::from(g.data_disks()));
        if !matches!(g.level, Level::Raid5 | Level::Raid6) || dd > 64 || ranges.is_empty() {
            return None;
        }
        let r = s % Self::period(g);
        let base = s * c;
        let mut pieces = std::mem::take(&mut self.pieces);
        let mut cuts = std::mem::take(&mut self.cuts);
        pieces.clear();
        cuts.clear();
        for &(a, b) in ranges {
            let mut pos = a;
            while pos < b {
                let k = pos / c;
                let (lo, hi) = (pos - k * c, (b - k * c).min(c));
                pieces.push((k as u32, lo, hi));
                cuts.extend([lo, hi]);
                pos = k * c + hi;
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let (r0, w0) = (reads.len(), writes.len());
        let mut parity = Some(0);
        for w in cuts.windows(2) {
            let (x, y) = (w[0], w[1]);
            let mask = pieces
                .iter()
                .filter(|p| p.1 <= x && y <= p.2)
                .fold(0u64, |m, p| m | 1 << p.0);
            if mask == 0 {
                continue;
            }
            let t = match self.segments.get(&(r, mask)) {
                Some(t) => t,
                None => {
                    let plan = self.segment_plan(g, s, mask);
                    if !self.periodic(g) {
                        parity = None;
                        break;
                    }
                    insert_capped(&mut self.segments, (r, mask), plan);
                    &self.segments[&(r, mask)]
                }
            };
            let Some(t) = t else {
                parity = None;
                break;
            };
            let io = |&member: &u32| MemberIo {
                member,
                offset: base + x,
                len: y - x,
            };
            reads.extend(t.reads.iter().map(io));
            writes.extend(t.writes.iter().map(io));
            parity = parity.map(|p| p + t.parity_per_byte * (y - x));
        }
        self.pieces = pieces;
        self.cuts = cuts;
        if parity.is_none() {
            reads.truncate(r0);
            writes.truncate(w0);
        }
        debug_assert!(parity.is_none_or(|p| {
            let direct = g.plan_stripe_write(s, ranges);
            sorted_ios(reads[r0..].to_vec()) == sorted_ios(direct.reads)
                && sorted_ios(writes[w0..].to_vec()) == sorted_ios(direct.writes)
                && p == direct.parity_bytes
        }));
        parity
    }

    /// The planner's plan for one segment written by the data chunks in `mask`, at stripe
    /// `s`, if it has the form [`SegmentPlan`] holds; `periodic` cleared if the planner plans
    /// the same segment otherwise one period away.
    fn segment_plan(&mut self, g: &ArrayGeom, s: u64, mask: u64) -> Option<SegmentPlan> {
        let c = g.chunk;
        let unit: Vec<(u64, u64)> = (0..u64::from(g.data_disks()))
            .filter(|k| mask >> k & 1 == 1)
            .map(|k| (k * c, k * c + SEGMENT_UNIT))
            .collect();
        let of = |p: crate::planner::WritePlan, st: u64| {
            let whole = |m: &MemberIo| m.offset == st * c && m.len == SEGMENT_UNIT;
            (p.reads.iter().chain(&p.writes).all(whole)
                && p.parity_bytes.is_multiple_of(SEGMENT_UNIT))
            .then(|| SegmentPlan {
                reads: p.reads.iter().map(|m| m.member).collect(),
                writes: p.writes.iter().map(|m| m.member).collect(),
                parity_per_byte: p.parity_bytes / SEGMENT_UNIT,
            })
        };
        let here = of(g.plan_stripe_write(s, &unit), s)?;
        if let Some(q) = Self::probe(g, s, 1) {
            let same = of(g.plan_stripe_write(q, &unit), q).is_some_and(|t| {
                t.reads == here.reads
                    && t.writes == here.writes
                    && t.parity_per_byte == here.parity_per_byte
            });
            if !same {
                self.periodic = Some(false);
            }
        }
        Some(here)
    }

    /// The planner's member reads for `len` bytes at `off`, appended to `out` (which must be
    /// empty, as the planner merges within what it appends). `loads` (mirror read balancing)
    /// depend on the moment, so those plans are not cached. New shapes are checked as in
    /// [`PlanCache::stripe_write`].
    pub fn map_read(
        &mut self,
        g: &ArrayGeom,
        off: u64,
        len: u64,
        loads: Option<&[u64]>,
        out: &mut Vec<MemberIo>,
    ) {
        if !out.is_empty() || !self.periodic(g) {
            return g.map_read(off, len, loads, out);
        }
        if let Some(loads) = loads {
            return self.mirror_read(g, off, len, loads, out);
        }
        let sd = g.stripe_data_bytes();
        let (r, by) = Self::residue(g, off);
        if let Some(c) = self.reads.get(&(r, len)) {
            out.extend(c.ios().iter().map(|m| MemberIo {
                offset: m.offset + by,
                ..*m
            }));
            return;
        }
        g.map_read(off, len, None, out);
        let s = off / sd;
        if let Some(q) = Self::probe(g, s, len.div_ceil(sd) + 1) {
            let qoff = q * sd + off % sd;
            let mut there = Vec::new();
            g.map_read(qoff, len, None, &mut there);
            let qby = (qoff - r) / sd * g.chunk;
            let base = Self::shift(out, by, true);
            if base == Self::shift(&there, qby, true) {
                insert_capped(&mut self.reads, (r, len), CachedRead::new(base));
            } else {
                self.periodic = Some(false);
            }
        }
    }
}

impl PlanCache {
    /// Where a mirror read of `len` bytes at `off` begins on its members, if the cache has
    /// the pieces of its shape (their first piece's first copy).
    #[inline]
    pub fn mirror_offset(&self, g: &ArrayGeom, off: u64, len: u64) -> Option<u64> {
        let (r, by) = Self::residue(g, off);
        let pieces = self.mirror_reads.get(&(r, len))?.as_ref()?;
        let first = pieces.first()?.copies.first()?;
        Some(first.1 + by)
    }

    /// [`PlanCache::map_read`] of a mirror read that goes to the least loaded copy: the
    /// planner's pieces of the read's shape, kept once the same shape a period on is found
    /// the same; each piece's copy chosen under `loads` by the planner's rule.
    fn mirror_read(
        &mut self,
        g: &ArrayGeom,
        off: u64,
        len: u64,
        loads: &[u64],
        out: &mut Vec<MemberIo>,
    ) {
        let sd = g.stripe_data_bytes();
        let (r, by) = Self::residue(g, off);
        if let Some(c) = self.mirror_reads.get(&(r, len)) {
            match c {
                Some(pieces) => {
                    for p in pieces {
                        push_merge(out, 0, p.read(loads, by));
                    }
                }
                None => g.map_read(off, len, Some(loads), out),
            }
            return;
        }
        g.map_read(off, len, Some(loads), out);
        let s = off / sd;
        let Some(q) = Self::probe(g, s, len.div_ceil(sd) + 1) else {
            return;
        };
        let qoff = q * sd + off % sd;
        let qby = (qoff - r) / sd * g.chunk;
        let base = |pieces: Option<Vec<MirrorPiece>>, by: u64| {
            pieces.map(|v| {
                v.into_iter()
                    .map(|mut p| {
                        p.copies.iter_mut().for_each(|c| c.1 -= by);
                        p
                    })
                    .collect::<Vec<_>>()
            })
        };
        let here = base(g.mirror_read_pieces(off, len), by);
        let there = base(g.mirror_read_pieces(qoff, len), qby);
        let fits = |pieces: &Option<Vec<MirrorPiece>>| {
            // (The pieces read as the planner read: checked on the read just planned.)
            pieces.as_ref().is_some_and(|v| {
                let mut mine = Vec::new();
                for p in v {
                    push_merge(&mut mine, 0, p.read(loads, by));
                }
                mine == *out
            })
        };
        let keep = (here == there && fits(&here)).then_some(here).flatten();
        insert_capped(&mut self.mirror_reads, (r, len), keep);
    }
}

/// A hasher for the simulator's own integer keys (no untrusted input reaches these maps):
/// multiply-and-rotate per word, far cheaper than the default SipHash.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64)
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64)
    }
}

pub type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;
pub type FastSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<FastHasher>>;

/// A controller array's dirty stripes by number: a hash table whose entries are one aligned
/// cache line each (the stripe and its [`Dirty`]), open addressing with linear probing.
///
/// A random workload keeps tens of thousands of dirty stripes, more than a core's caches
/// hold, and each landing write, destage and age check touches one at random: one miss, to
/// memory, each. The table is its own so that the line a stripe will be found in (or put
/// in) is known before the lookup: [`DirtyMap::prefetch`] asks for it when the host sends a
/// write, and the command and its data crossing the path take long enough, in the
/// simulator's own work (a few events), that the line is in when the write lands (see
/// BENCHMARKS.md).
///
/// At most half the slots are used, so a lookup almost always ends at the stripe's home slot
/// or the next. Removal shifts the entries after it back (no tombstones).
#[derive(Clone, Debug, Default)]
pub struct DirtyMap {
    /// A power of two many slots (or none); a slot whose `key` is [`VACANT`] is free.
    slots: Slots,
    len: usize,
    /// 64 − log2(slots), the shift that takes a hash to its home slot.
    shift: u32,
}

#[derive(Clone, Debug, Default)]
#[repr(align(64))]
struct DirtyEntry {
    /// The stripe's number plus one (0: a free slot, so that zeroed memory is all free).
    key: u64,
    dirty: Dirty,
}

/// The dirty map's slots, in one allocation whose every slot starts free. A random
/// workload's map grows to megabytes; faulted in 4 KiB at a time, its pages cost the random
/// benchmark about 3% of its wall time on a virtual machine (BENCHMARKS.md). Large ones are
/// therefore aligned to 2 MiB and the kernel asked to back them with huge pages before they
/// are first written (a hint: where it declines, or elsewhere than Linux, nothing changes).
///
/// The memory comes zeroed from the allocator (`alloc_zeroed`), not cleared here: a large
/// one is then fresh pages from the kernel, zero already, and the table's growth costs no
/// pass over it (clearing each new table had been 1% of the random benchmark's instructions,
/// and its pages faulted in before any entry was put there).
struct Slots {
    ptr: std::ptr::NonNull<DirtyEntry>,
    len: usize,
    /// Where the allocation starts (the slots start at its first boundary of their
    /// alignment: see [`Slots::layout`]).
    base: *mut u8,
}

// SAFETY: `Slots` owns its entries as a `Vec` would; they are `Send` and `Sync`.
unsafe impl Send for Slots {}
unsafe impl Sync for Slots {}

/// A huge page (x86-64's, and the alignment asked for large slot arrays).
const HUGE_PAGE: usize = 2 << 20;

impl Slots {
    /// The allocation for `len` slots, and the alignment the slots take within it: a huge
    /// page's for a large table, a line's otherwise. The allocation is asked for with no more
    /// than a word's alignment, which the system allocator serves zeroed by `calloc`: fresh
    /// pages, not cleared again, for any table past its first few. (A larger alignment is
    /// served by an aligned allocation that it then clears byte by byte.) It is that
    /// alignment longer than the slots, which start at its first boundary.
    fn layout(len: usize) -> (std::alloc::Layout, usize) {
        let size = len
            .checked_mul(std::mem::size_of::<DirtyEntry>())
            .expect("a dirty map within the address space");
        let align = if size >= 2 * HUGE_PAGE {
            HUGE_PAGE
        } else {
            std::mem::align_of::<DirtyEntry>()
        };
        let layout = size
            .checked_add(align)
            .and_then(|n| std::alloc::Layout::from_size_align(n, std::mem::align_of::<u64>()).ok())
            .expect("a dirty map's layout");
        (layout, align)
    }

    /// `len` free slots.
    fn free(len: usize) -> Slots {
        if len == 0 {
            return Slots::default();
        }
        let (layout, align) = Self::layout(len);
        // SAFETY: the layout's size is nonzero (len ≥ 1 entries of 64 bytes). The memory is
        // all zeros, and all-zero bytes are a free entry (a zero key, zero counts and
        // offsets, `false`, and `None` for the boxed spill, which Rust guarantees is the null
        // pointer).
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        if base.is_null() {
            std::alloc::handle_alloc_error(layout)
        }
        // (The slots fit after the first boundary: the allocation is `align` longer.)
        let skip = base.align_offset(align);
        assert!(skip < align, "a boundary within the allocation");
        let p = base.wrapping_add(skip);
        #[cfg(target_os = "linux")]
        if align == HUGE_PAGE {
            // SAFETY: the range is within the allocation, page-aligned; MADV_HUGEPAGE changes
            // only how the kernel backs it, never its contents. The result is ignored (a hint).
            unsafe {
                libc::madvise(
                    p.cast(),
                    len * std::mem::size_of::<DirtyEntry>(),
                    libc::MADV_HUGEPAGE,
                );
            }
        }
        let ptr = std::ptr::NonNull::new(p.cast::<DirtyEntry>()).expect("within the allocation");
        Slots { ptr, len, base }
    }
}

impl Default for Slots {
    fn default() -> Slots {
        Slots {
            ptr: std::ptr::NonNull::dangling(),
            len: 0,
            base: std::ptr::null_mut(),
        }
    }
}

impl std::ops::Deref for Slots {
    type Target = [DirtyEntry];
    #[inline(always)]
    fn deref(&self) -> &[DirtyEntry] {
        // SAFETY: `ptr` holds `len` initialised entries (or dangles, aligned, with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for Slots {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [DirtyEntry] {
        // SAFETY: as for `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        // SAFETY: the entries are initialised and dropped once, then the memory is given
        // back with the layout it was taken with.
        unsafe {
            std::ptr::drop_in_place(&mut **self as *mut [DirtyEntry]);
            std::alloc::dealloc(self.base, Self::layout(self.len).0);
        }
    }
}

impl Clone for Slots {
    fn clone(&self) -> Slots {
        let mut c = Slots::free(self.len);
        c.clone_from_slice(self);
        c
    }
}

impl std::fmt::Debug for Slots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().filter(|e| e.key != VACANT))
            .finish()
    }
}

/// Stripes whose slots [`DirtyMap::home`] keeps together (a power of two, below the
/// table's least size, so that a run's number keeps at least one bit).
const RUN: u64 = 8;

/// The fewest slots a dirty map holds once it holds any.
const MIN_SLOTS: usize = 16;

const _: () = assert!(RUN.is_power_of_two() && (RUN as usize) < MIN_SLOTS);

/// How far ahead in an array's age queue [`Array::oldest_dirty`] asks for dirty-map lines.
const AGED_AHEAD: usize = 4;

/// A free slot's key.
const VACANT: u64 = 0;

// (One cache line: what the map is for.)
const _: () = assert!(std::mem::size_of::<DirtyEntry>() == 64);

impl DirtyMap {
    /// Stripe `s`'s home slot. Stripes go in runs of [`RUN`]: a run's home by Fibonacci
    /// hashing of its number (the product's top bits, which every bit reaches, so runs spread
    /// over the table), a stripe's in its run's place. Neighbouring stripes thus sit in
    /// neighbouring lines, which a destage looking for dirty neighbours to coalesce reads in
    /// turn, and the hardware's prefetch fetches them ahead. Only with slots (more than
    /// `RUN`: at least [`MIN_SLOTS`]).
    #[inline(always)]
    fn home(&self, s: u64) -> usize {
        debug_assert!(self.slots.len() >= MIN_SLOTS);
        let run =
            ((s / RUN).wrapping_mul(FIBONACCI) >> (self.shift + RUN.trailing_zeros())) as usize;
        run * RUN as usize + (s % RUN) as usize
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot holding `key` (a stripe's number plus one), else the free slot its probe from
    /// the stripe's home ends at. Only with slots.
    #[inline(always)]
    fn probe(&self, key: u64) -> usize {
        let mask = self.mask();
        let mut i = self.home(key - 1);
        while self.slots[i].key != key && self.slots[i].key != VACANT {
            i = (i + 1) & mask;
        }
        i
    }

    /// The slot holding stripe `s`, if any.
    #[inline]
    fn find(&self, s: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let i = self.probe(s + 1);
        (self.slots[i].key != VACANT).then_some(i)
    }

    /// Ask for the line stripe `s` would be found in (its home slot), ahead of a lookup.
    #[inline]
    pub fn prefetch(&self, s: u64) {
        if self.slots.is_empty() {
            return;
        }
        let p = &self.slots[self.home(s)] as *const DirtyEntry;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint; it reads nothing the program sees and cannot fault,
        // and SSE is part of the x86-64 baseline.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = p;
    }

    #[inline]
    pub fn get(&self, s: u64) -> Option<&Dirty> {
        self.find(s).map(|i| &self.slots[i].dirty)
    }

    #[inline]
    pub fn get_mut(&mut self, s: u64) -> Option<&mut Dirty> {
        self.find(s).map(|i| &mut self.slots[i].dirty)
    }

    /// Stripe `s`'s entry, made by `make` if it has none: one lookup.
    #[inline]
    pub fn get_or_insert_with(&mut self, s: u64, make: impl FnOnce() -> Dirty) -> &mut Dirty {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let key = s + 1;
        let i = self.probe(key);
        if self.slots[i].key == VACANT {
            self.slots[i] = DirtyEntry { key, dirty: make() };
            self.len += 1;
        }
        &mut self.slots[i].dirty
    }

    /// Twice the slots (at least [`MIN_SLOTS`]), every entry moved to its new home.
    #[cold]
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(MIN_SLOTS);
        let mut old = std::mem::replace(&mut self.slots, Slots::free(n));
        self.shift = 64 - n.trailing_zeros();
        for e in old.iter_mut().filter(|e| e.key != VACANT) {
            // (Not yet in the new table: the probe ends at a free slot.)
            let i = self.probe(e.key);
            // (Taken, the old slot is left free: nothing of it is dropped twice.)
            self.slots[i] = std::mem::take(e);
        }
    }

    /// Put in stripe `s`'s entry, replacing any it had.
    pub fn insert(&mut self, s: u64, dirty: Dirty) {
        *self.get_or_insert_with(s, Dirty::default) = dirty;
    }

    pub fn remove(&mut self, s: u64) -> Option<Dirty> {
        let mut i = self.find(s)?;
        let out = std::mem::take(&mut self.slots[i].dirty);
        self.len -= 1;
        // Close the gap: each entry after it in the run moves back into the hole when the
        // hole lies between its home and where it is (cyclically), so every entry stays
        // reachable from its home without a free slot in between.
        let mask = self.mask();
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let x = self.slots[j].key;
            if x == VACANT {
                break;
            }
            let h = self.home(x - 1);
            if (j.wrapping_sub(h) & mask) >= (j.wrapping_sub(i) & mask) {
                self.slots.swap(i, j);
                i = j;
            }
        }
        self.slots[i].key = VACANT;
        debug_assert_eq!(self.slots[i].dirty.ranges.bytes(), 0);
        Some(out)
    }

    /// The entries, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Dirty)> + '_ {
        self.slots
            .iter()
            .filter(|e| e.key != VACANT)
            .map(|e| (e.key - 1, &e.dirty))
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Dirty> + '_ {
        self.slots
            .iter_mut()
            .filter(|e| e.key != VACANT)
            .map(|e| &mut e.dirty)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[derive(Clone, Debug)]
pub enum Fill {
    Pending(Vec<u32>),
    Ready,
}

impl Array {
    /// Plan a write of `[logical, logical + len)` stripe by stripe (through the plan cache):
    /// pre-reads into `reads`, member writes into `writes`; returns the parity bytes made.
    pub fn plan_write_extent(
        &mut self,
        logical: u64,
        len: u64,
        reads: &mut Vec<MemberIo>,
        writes: &mut Vec<MemberIo>,
    ) -> u64 {
        let sd = self.geom.stripe_data_bytes();
        let mut parity = 0;
        let mut pos = logical;
        let end = logical + len;
        while pos < end {
            let s = pos / sd;
            let e = end.min((s + 1) * sd);
            parity += self.plans.stripe_write(
                &self.geom,
                s,
                &[(pos - s * sd, e - s * sd)],
                reads,
                writes,
            );
            pos = e;
        }
        parity
    }

    /// Set up the rebuild of its failed members (`rebuild = true`, checked with the file):
    /// plans go to the planner uncached from then on (they change as the rebuild passes).
    fn start_rebuild(&mut self, cfg: &crate::config::ArrayCfg) {
        use crate::rebuild::*;
        let g = &mut self.geom;
        let targets = g.failed.clone();
        g.rebuilding = true;
        g.rebuilt_below = 0;
        let end = g.g.as_ref().map_or(0, |x| x.member_used_bytes());
        let (step, depth, pacer) = match self.ctrl {
            None => {
                // md: a window a step; in flight, what its resync buffers hold.
                let buffers = match &self.stripe_cache {
                    Some(sc) => sc.rows().1 * 4096,
                    None => MD_RESYNC_BYTES,
                };
                let pacer = MdPacer::new(
                    cfg.speed_limit_min.unwrap_or(SPEED_LIMIT_MIN_DEFAULT),
                    cfg.speed_limit_max.unwrap_or(SPEED_LIMIT_MAX_DEFAULT),
                    self.members.len(),
                );
                (
                    MD_WINDOW,
                    (buffers / MD_WINDOW).max(1) as u32,
                    Pacer::Md(Box::new(pacer)),
                )
            }
            Some(_) => (
                CTRL_STEP.div_ceil(g.chunk) * g.chunk,
                CTRL_DEPTH,
                Pacer::Ctrl {
                    rate: cfg.rebuild_rate.unwrap_or(CTRL_RATE_DEFAULT),
                    busy: false,
                    seen: 0,
                    owed: 0,
                },
            ),
        };
        self.plans = PlanCache::uncached();
        self.rebuild = Some(Box::new(Rebuild::new(targets, end, step, depth, pacer)));
    }

    /// A stripe just became dirty: stamp it and queue it by age.
    pub fn note_dirty(&mut self, s: u64) -> u64 {
        Self::stamp(&mut self.births, &mut self.aged, s)
    }

    fn stamp(births: &mut u64, aged: &mut VecDeque<(u64, u64)>, s: u64) -> u64 {
        let b = *births;
        *births += 1;
        aged.push_back((s, b));
        b
    }

    /// Stripe `s`'s dirty entry, made (and stamped as by [`Array::note_dirty`]) if it has
    /// none: one lookup.
    #[inline]
    pub fn dirty_mut(&mut self, s: u64) -> &mut Dirty {
        let (births, aged) = (&mut self.births, &mut self.aged);
        self.dirty.get_or_insert_with(s, || Dirty {
            born: Self::stamp(births, aged, s),
            ..Default::default()
        })
    }

    /// Whether every byte of the `len` at array offset `logical` is dirty in the
    /// controller's write-back cache (written there and not yet on the drives, or being
    /// written out): a read of them is the cache's to serve, as a controller must, or it
    /// would return the drives' older data.
    pub fn dirty_holds(&self, logical: u64, len: u64) -> bool {
        if self.dirty.is_empty() {
            return false;
        }
        let sd = self.geom.stripe_data_bytes();
        let end = logical + len;
        let mut at = logical;
        while at < end {
            let s = at / sd;
            let base = s * sd;
            let b = (end - base).min(sd);
            if !self
                .dirty
                .get(s)
                .is_some_and(|d| d.ranges.covers(at - base, b))
            {
                return false;
            }
            at = base + sd;
        }
        true
    }

    /// Whether every data byte of stripe `s` is dirty (as the dirty map has it).
    #[inline]
    pub fn fully_dirty(&self, s: u64) -> bool {
        let full = self.full_dirty.contains(&s);
        debug_assert_eq!(
            full,
            self.dirty
                .get(s)
                .is_some_and(|d| d.ranges.bytes() == self.geom.stripe_data_bytes()),
            "full_dirty out of step for stripe {s}"
        );
        full
    }

    /// Finish the array's geometry once its members are known, or say where the system
    /// file describes an array the planner refuses.
    fn finish_geom(&mut self, sys: &System) -> Result<(), SimError> {
        self.geom.finish().map_err(|e| {
            let key = if e.starts_with("failed = ") {
                "failed"
            } else {
                "name"
            };
            sys.usage_at(
                "[[array]]",
                &self.name,
                key,
                format!("array '{}': {e}", self.name),
            )
        })
    }

    /// The oldest dirty stripe not being destaged (dropping stale queue entries on the way).
    pub fn oldest_dirty(&mut self) -> Option<u64> {
        while let Some(&(s, b)) = self.aged.front() {
            match self.dirty.get(s) {
                Some(d) if d.born == b && !d.destaging => {
                    // The stripes a few places behind in the queue are looked up when their
                    // turn comes, and the one after each when a destage looks to coalesce:
                    // their lines asked for now, a few destages ahead.
                    if let Some(&(t, _)) = self.aged.get(AGED_AHEAD) {
                        self.dirty.prefetch(t);
                        self.dirty.prefetch(t + 1);
                    }
                    return Some(s);
                }
                _ => {
                    self.aged.pop_front();
                }
            }
        }
        None
    }
}

pub struct Array {
    pub name: String,
    pub geom: ArrayGeom,
    pub ctrl: Option<usize>,
    /// Drives (controller arrays) or member LUNs (host arrays).
    pub members: Vec<usize>,
    /// Dirty stripes by number (looked up by key only: their order is kept by `full` and
    /// `aged`).
    pub dirty: DirtyMap,
    pub full: VecDeque<u64>,
    /// Stripes in the order they became dirty, as (stripe, born); entries whose stripe has
    /// since been destaged (or re-dirtied with a newer `born`) are skipped when met.
    pub aged: VecDeque<(u64, u64)>,
    pub births: u64,
    pub destaging: u32,
    pub rcache: FastMap<u64, Fill>,
    /// Writes that landed on stripes being destaged, by stripe (rare: out of the dirty map).
    pub redirty: FastMap<u64, Vec<(u64, u64)>>,
    /// The stripes whose every data byte is dirty (`dirty[s].bytes` is the stripe's data
    /// size): what a read asks of the dirty map, kept apart so reads do not probe the map,
    /// whose entries a random workload scatters over megabytes.
    pub full_dirty: FastSet<u64>,
    /// Host reads the controller was given, and those it served from its cache (data read
    /// ahead, or dirty data: [`Array::dirty_holds`]) without a drive.
    pub cache_reads: u64,
    pub cache_read_hits: u64,
    pub plans: PlanCache,
    pub rfifo: VecDeque<u64>,
    /// Where recent sequential read streams will continue (controllers track several).
    pub read_streams: [u64; 8],
    /// Each tracked stream's read-ahead window, bytes ([`stream_read_ahead`]; 0: the stream
    /// has not continued yet).
    pub read_windows: [u64; 8],
    pub next_stream: usize,
    /// Write-through writes whose data is on its way, in the order the controller took their
    /// commands: a write's data that lands before an earlier one's waits for it, so the drives
    /// get commands in that order (a drive takes a command, then the data it asks for).
    pub landing: VecDeque<u32>,
    /// Commands queued or in service on its drives, and how many their queues take.
    pub drive_cmds: usize,
    pub drive_room: usize,
    /// md's stripe cache, for a parity array the host runs.
    pub stripe_cache: Option<crate::stripecache::StripeCache>,
    /// Drive commands sent to its drives (controller arrays), the rebuild's included.
    pub sent: u64,
    /// Its failed members being rebuilt (`rebuild = true`).
    pub rebuild: Option<Box<crate::rebuild::Rebuild>>,
}

pub struct Lun {
    pub name: String,
    pub array: usize,
    pub offset: u64,
    pub capacity: u64,
    pub hidden: bool,
    /// Processors a command visits before the controller: (resource, ns), the host's CPU
    /// first.
    pub cmd_path: Vec<(usize, u64)>,
    /// The controller's processor, with its time per read and per write command (None for a
    /// LUN of a host array).
    pub ctrl_cmd: Option<(usize, [u64; 2])>,
    /// Bandwidth resources data crosses between host memory and the controller's cache.
    pub data_path: Vec<usize>,
    /// Write data reaches the controller in bursts of this many bytes, each moved into its
    /// cache only once the whole burst has arrived (the last hop of `data_path` is then the
    /// controller's data path). None: writes cut through like reads.
    pub write_burst: Option<u64>,
    /// Segment times on `data_path`: reads, writes (cut through), and a burst's two legs
    /// (to the controller, into its cache).
    pub seg_costs: [SegCosts; 4],
    /// For a LUN behind a controller without a cache (a host adapter, AHCI, an NVMe drive's
    /// own controller): its drives' model, whose interface time the data's way through the
    /// controller overlaps — such a controller holds no data, so it passes a read's data on
    /// as the drive sends it, and a write's as the drive takes it, rather than once all of
    /// it is in.
    pub pass_through: Option<usize>,
}

pub struct World {
    pub system: String,
    pub res: Vec<Res>,
    pub models: Vec<DeviceModel>,
    pub disks: Vec<Disk>,
    pub ctrls: Vec<Controller>,
    pub arrays: Vec<Array>,
    pub luns: Vec<Lun>,
    pub host_cpu: usize,
    pub host_io_ns: u64,
    /// Fixed cost of starting a job (process start, opening the target), ns.
    pub host_job_start_ns: u64,
    pub host_parity: Option<usize>,
    /// Whether any array runs degraded (some member failed).
    pub degraded: bool,
    /// The host's page cache, if the system file gives it one.
    pub page_cache: Option<crate::pagecache::PageCache>,
}

fn mb(x: f64) -> String {
    format!("{x:.0} MB/s")
}

impl World {
    /// The drives under LUN `lun`: its array's, or for a host array's LUN, those of its
    /// member LUNs.
    pub fn drives_under(&self, lun: usize) -> Vec<usize> {
        let a = &self.arrays[self.luns[lun].array];
        if a.ctrl.is_some() {
            a.members.clone()
        } else {
            a.members
                .iter()
                .flat_map(|&m| self.drives_under(m))
                .collect()
        }
    }

    pub fn build(sys: &System) -> Result<World, SimError> {
        let c = &sys.cfg;
        let mut res = Vec::new();
        let host_cpu = res.len();
        res.push(Res::new(
            "host/cpu",
            "host",
            c.host.cpus,
            format!("{} CPUs, {} µs per I/O", c.host.cpus, c.host.per_io_us),
        ));
        let host_bus = c.host.bus_mb_s.map(|b| {
            res.push(
                Res::new("host/bus", "bus", 1, format!("memory/I-O bus {}", mb(b)))
                    .bw(Some(b), Some(b)),
            );
            res.len() - 1
        });
        let host_parity = c.host.parity_mb_s.map(|p| {
            res.push(
                Res::new(
                    "host/parity",
                    "parity",
                    c.host.cpus,
                    format!("software parity {} per CPU", mb(p)),
                )
                .bw(Some(p), Some(p)),
            );
            res.len() - 1
        });
        // Interfaces: adapter DMA and link.
        let mut iface_ids = BTreeMap::new();
        for i in &c.interface {
            let dma = res.len();
            let (r, w) = (
                i.read_mb_s.unwrap_or(i.link_mb_s),
                i.write_mb_s.unwrap_or(i.link_mb_s),
            );
            res.push(
                Res::new(
                    format!("host/{}", i.name),
                    "interface",
                    1,
                    format!(
                        "adapter DMA {} in, {} out; {} µs per command",
                        mb(r),
                        mb(w),
                        i.per_command_us
                    ),
                )
                .bw(Some(r), Some(w)),
            );
            let link = res.len();
            res.push(
                Res::new(
                    format!("host/{}/link", i.name),
                    "link",
                    1,
                    format!("link {}", mb(i.link_mb_s)),
                )
                .bw(Some(i.link_mb_s), Some(i.link_mb_s)),
            );
            iface_ids.insert(i.name.clone(), (dma, link, (i.per_command_us * 1e3) as u64));
        }
        let mut switch_ids = BTreeMap::new();
        for s in &c.switch {
            let id = res.len();
            let mut r = Res::new(
                format!("switch/{}", s.name),
                "switch",
                1,
                match s.bandwidth_mb_s {
                    Some(b) => format!("backplane {}", mb(b)),
                    None => "non-blocking".into(),
                },
            );
            if let Some(b) = s.bandwidth_mb_s {
                r = r.bw(Some(b), Some(b));
            }
            res.push(r);
            switch_ids.insert(s.name.clone(), (id, (s.per_command_us * 1e3) as u64));
        }
        let mut ctrls = Vec::new();
        struct CtrlRes {
            port: Option<usize>,
            data: Option<usize>,
            backend: Option<usize>,
        }
        let mut ctrl_res = Vec::new();
        for k in &c.controller {
            let cpu = res.len();
            res.push(Res::new(
                format!("ctrl/{}", k.name),
                "controller",
                1,
                format!(
                    "{} µs per read, {} µs per write command",
                    k.read_command_us, k.write_command_us
                ),
            ));
            let port = k.port_mb_s.map(|p| {
                res.push(
                    Res::new(
                        format!("ctrl/{}/port", k.name),
                        "link",
                        1,
                        format!("host port {}", mb(p)),
                    )
                    .bw(Some(p), Some(p)),
                );
                res.len() - 1
            });
            let data = if k.read_mb_s.is_some() || k.write_mb_s.is_some() {
                res.push(
                    Res::new(
                        format!("ctrl/{}/data", k.name),
                        "controller",
                        1,
                        format!(
                            "data path {} to host, {} into cache",
                            k.read_mb_s.map_or("-".into(), mb),
                            k.write_mb_s.map_or("-".into(), mb)
                        ),
                    )
                    .bw(k.read_mb_s, k.write_mb_s),
                );
                Some(res.len() - 1)
            } else {
                None
            };
            let parity = k.parity_mb_s.map(|p| {
                res.push(
                    Res::new(
                        format!("ctrl/{}/parity", k.name),
                        "parity",
                        1,
                        format!("XOR engine {}", mb(p)),
                    )
                    .bw(Some(p), Some(p)),
                );
                res.len() - 1
            });
            let backend = k.backend_mb_s.map(|b| {
                res.push(
                    Res::new(
                        format!("ctrl/{}/backend", k.name),
                        "bus",
                        1,
                        format!("device bus {}", mb(b)),
                    )
                    .bw(Some(b), Some(b)),
                );
                res.len() - 1
            });
            let policy = k.write_policy.unwrap_or(if k.cache_mib > 0 {
                WritePolicy::WriteBack
            } else {
                WritePolicy::WriteThrough
            });
            ctrls.push(Controller {
                name: k.name.clone(),
                cpu,
                read_cmd_ns: (k.read_command_us * 1e3) as u64,
                write_cmd_ns: (k.write_command_us * 1e3) as u64,
                parity,
                // A mirrored cache holds a copy of the partner controller's writes in half of it.
                cache_bytes: (k.cache_mib << 20) >> k.mirrored_cache as u32,
                // Without a battery the cache may not hold writes: write-through.
                write_back: policy == WritePolicy::WriteBack && k.battery && k.cache_mib > 0,
                read_ahead: k.read_ahead_kib * 1024,
                destage_depth: k.destage_depth.max(1),
                destage_coalesce: k.destage_coalesce.max(1),
                lazy_destage: k.lazy_destage,
                dirty: 0,
                space_waiters: VecDeque::new(),
                arrays: Vec::new(),
            });
            ctrl_res.push(CtrlRes {
                port,
                data,
                backend,
            });
        }
        // Arrays: controller arrays first get drives; host arrays refer to LUNs (resolved below).
        let mut models: Vec<DeviceModel> = Vec::new();
        let mut disks = Vec::new();
        let mut arrays = Vec::new();
        let mut phase = raidlab_workload::Rng::new(0x5eed_d15c);
        for a in &c.array {
            let level = Level::parse(&a.level).expect("checked by config");
            let ctrl = a
                .controller
                .as_ref()
                .map(|n| c.controller.iter().position(|k| &k.name == n).unwrap());
            let (members, member_bytes) = if let Some(ci) = ctrl {
                let spec = &sys.disks[&a.name];
                let model = DeviceModel::new(spec, a.disk_write_cache);
                let mi = models.len();
                let cap = model.capacity;
                // A flash drive takes in as many commands as its queue holds (its dies and
                // channels decide how they overlap); by default one per die.
                let units = if model.ssd.is_some() {
                    a.disk_queue_depth.unwrap_or(model.servers()).max(1)
                } else {
                    1
                };
                models.push(model);
                let n = a.disks.unwrap();
                let mut m = Vec::new();
                for d in 0..n {
                    m.push(disks.len());
                    disks.push(Disk {
                        name: format!("ctrl/{}/{}/disk{d}", c.controller[ci].name, a.name),
                        model: mi,
                        state: DeviceState::new(phase.next_f64(), &models[mi]),
                        // Drives with one unit and a queue choose by positioning time.
                        queue: DriveQueue::new(
                            if a.disk_queue_depth() <= 1 || spec.kind == DeviceKind::Ssd {
                                0
                            } else {
                                a.disk_queue_depth() as usize
                            },
                        ),
                        active: Vec::new(),
                        units,
                        queue_depth: if spec.kind == DeviceKind::Ssd {
                            units
                        } else {
                            a.disk_queue_depth().max(1)
                        },
                        backend: ctrl_res[ci].backend,
                        busy_ns: 0,
                        ios: 0,
                        done: [DoneCount::default(); 2],
                        in_flight: InFlight::default(),
                        wcache: (spec.kind == DeviceKind::Hdd && models[mi].write_cache).then(
                            || WriteCache {
                                held: DriveQueue::held(a.disk_queue_depth().max(1) as usize),
                                capacity: models[mi].write_cache_bytes,
                                ..Default::default()
                            },
                        ),
                        head_hint: 0,
                        array: arrays.len(),
                        buffer_free: 0,
                        reads: 0,
                        read_hits: 0,
                    });
                }
                ctrls[ci].arrays.push(arrays.len());
                (m, cap)
            } else {
                (Vec::new(), 0)
            };
            let drive_room = members.len() * a.disk_queue_depth().max(1) as usize;
            let chunk = a.chunk_kib * 1024;
            let mb_ = if member_bytes > 0 {
                member_bytes / chunk * chunk
            } else {
                0
            };
            let mut geom = ArrayGeom::new(
                level,
                members.len().max(a.members.as_ref().map_or(0, |m| m.len())) as u32,
                chunk,
                mb_,
            );
            geom.failed = a.failed.clone();
            geom.failed.sort_unstable();
            geom.failed.dedup();
            let degraded = !geom.failed.is_empty();
            arrays.push(Array {
                name: a.name.clone(),
                geom,
                ctrl,
                members,
                dirty: DirtyMap::default(),
                full: VecDeque::new(),
                aged: VecDeque::new(),
                births: 0,
                destaging: 0,
                rcache: FastMap::default(),
                redirty: FastMap::default(),
                full_dirty: FastSet::default(),
                cache_reads: 0,
                cache_read_hits: 0,
                plans: if degraded {
                    PlanCache::degraded()
                } else {
                    PlanCache::default()
                },
                rfifo: VecDeque::new(),
                read_streams: [u64::MAX; 8],
                read_windows: [0; 8],
                next_stream: 0,
                landing: VecDeque::new(),
                drive_cmds: 0,
                drive_room,
                stripe_cache: None,
                sent: 0,
                rebuild: None,
            });
        }
        for a in arrays.iter_mut().filter(|a| a.ctrl.is_some()) {
            a.finish_geom(sys)?;
        }
        let mut luns = Vec::new();
        for l in &c.lun {
            let ai = c.array.iter().position(|a| a.name == l.array).unwrap();
            let mut cmd_path = vec![(host_cpu, (c.host.per_io_us * 1e3) as u64)];
            let mut data_path: Vec<usize> = host_bus.into_iter().collect();
            for p in &l.path {
                if let Some(&(dma, link, cmd)) = iface_ids.get(p) {
                    data_path.push(dma);
                    data_path.push(link);
                    if cmd > 0 {
                        cmd_path.push((dma, cmd));
                    }
                } else if let Some(&(sw, cmd)) = switch_ids.get(p) {
                    if res[sw].ns_per_byte[0] > 0.0 {
                        data_path.push(sw);
                    }
                    if cmd > 0 {
                        cmd_path.push((sw, cmd));
                    }
                }
            }
            let mut write_burst = None;
            if let Some(ci) = arrays[ai].ctrl {
                data_path.extend(ctrl_res[ci].port);
                data_path.extend(ctrl_res[ci].data);
                if ctrl_res[ci].data.is_some() {
                    write_burst = c.controller[ci]
                        .write_burst_kib
                        .filter(|&k| k > 0)
                        .map(|k| k * 1024);
                }
            }
            luns.push(Lun {
                name: l.name.clone(),
                array: ai,
                offset: l.offset_bytes,
                capacity: 0,
                hidden: l.hidden,
                cmd_path,
                ctrl_cmd: arrays[ai].ctrl.map(|ci| {
                    let ctrl = &ctrls[ci];
                    (ctrl.cpu, [ctrl.read_cmd_ns, ctrl.write_cmd_ns])
                }),
                data_path,
                write_burst,
                seg_costs: Default::default(),
                pass_through: arrays[ai]
                    .ctrl
                    .filter(|&ci| ctrls[ci].cache_bytes == 0)
                    .map(|_| disks[arrays[ai].members[0]].model),
            });
        }
        // Every error below at once, one line each. A LUN's offset is judged once its array's
        // size is known: controller arrays' first, then host arrays' (sized from their member
        // LUNs). A host array over a LUN found wrong is not sized, and its own LUNs are not
        // judged against a size it does not have.
        let mut errs: Vec<SimError> = Vec::new();
        let mut not_sized = vec![false; c.array.len()];
        let mut bad_lun = vec![false; luns.len()];
        let place = |l: &mut Lun, arrays: &[Array]| -> Option<SimError> {
            let cap = arrays[l.array].geom.capacity();
            if l.offset >= cap {
                return Some(sys.usage_at(
                    "[[lun]]",
                    &l.name,
                    "offset_bytes",
                    format!(
                        "lun '{}': offset_bytes {} is not inside array '{}' (valid: 0 to {})",
                        l.name,
                        l.offset,
                        arrays[l.array].name,
                        cap.saturating_sub(1)
                    ),
                ));
            }
            l.capacity = cap - l.offset;
            None
        };
        for (li, l) in luns.iter_mut().enumerate() {
            if c.array[l.array].members.is_none() {
                if let Some(e) = place(l, &arrays) {
                    errs.push(e);
                    bad_lun[li] = true;
                }
            }
        }
        // Host arrays: members are LUNs; their size is the smallest member LUN.
        for (ai, a) in c.array.iter().enumerate() {
            if let Some(m) = &a.members {
                let ids: Vec<usize> = m
                    .iter()
                    .map(|n| c.lun.iter().position(|l| &l.name == n).unwrap())
                    .collect();
                let n = errs.len();
                for &li in &ids {
                    let la = luns[li].array;
                    if c.array[la].members.is_some() {
                        errs.push(sys.usage_at(
                            "[[array]]",
                            &a.name,
                            "members",
                            format!(
                                "array '{}': member '{}' is a LUN of host array '{}' (valid: \
                                 LUNs of controller arrays; host arrays do not nest)",
                                a.name, luns[li].name, c.array[la].name
                            ),
                        ));
                    }
                }
                if errs.len() > n || ids.iter().any(|&li| bad_lun[li]) {
                    not_sized[ai] = true;
                    continue;
                }
                let mut mb_ = u64::MAX;
                for &li in &ids {
                    let la = luns[li].array;
                    mb_ = mb_.min(arrays[la].geom.capacity().saturating_sub(luns[li].offset));
                }
                let chunk = arrays[ai].geom.chunk;
                arrays[ai].members = ids;
                arrays[ai].geom.member_bytes = mb_ / chunk * chunk;
                if let Err(e) = arrays[ai].finish_geom(sys) {
                    errs.push(e);
                    not_sized[ai] = true;
                    continue;
                }
                let g = &arrays[ai].geom;
                if g.level.parity() > 0 {
                    arrays[ai].stripe_cache = Some(crate::stripecache::StripeCache::new(
                        a.stripe_cache_size
                            .unwrap_or(crate::stripecache::DEFAULT_STRIPES),
                        g.chunk,
                        g.stripe_data_bytes(),
                    ));
                }
            }
        }
        for l in luns.iter_mut() {
            if c.array[l.array].members.is_some() && !not_sized[l.array] {
                if let Some(e) = place(l, &arrays) {
                    errs.push(e);
                }
            }
        }
        if !errs.is_empty() {
            return Err(SimError::usage_all(errs));
        }
        let page_cache = c.host.page_cache_mib.map(|mib| {
            use crate::pagecache::{PageCache, PageCacheCfg, PAGE};
            let capacity = ((mib * 1048576.0) as u64 / PAGE).max(2);
            let ra = c.host.read_ahead_kib * 1024 / PAGE;
            // md reads ahead at least two full stripes of a striped array (Linux
            // drivers/md: raid0, raid10 and raid5 set their queue's read-ahead so).
            let read_ahead = luns
                .iter()
                .map(|l| {
                    let a = &arrays[l.array];
                    let striped = matches!(
                        a.geom.level,
                        Level::Raid0 | Level::Raid10 | Level::Raid5 | Level::Raid6
                    );
                    if a.ctrl.is_none() && striped {
                        ra.max(2 * a.geom.stripe_data_bytes() / PAGE)
                    } else {
                        ra
                    }
                })
                .collect();
            let limit =
                ((capacity as f64 * c.host.dirty_ratio / 100.0) as u64).clamp(1, capacity - 1);
            PageCache::new(PageCacheCfg {
                capacity,
                read_ahead,
                max_request: (c.host.max_request_kib * 1024 / PAGE).max(1),
                background: ((capacity as f64 * c.host.dirty_background_ratio / 100.0) as u64)
                    .min(limit),
                limit,
                writeback_depth: c.host.nr_requests,
                copy_ns_per_byte: c.host.copy_mb_s.map_or(0.0, |r| 1e3 / r),
            })
        });
        for (a, cfg) in arrays.iter_mut().zip(&c.array) {
            if cfg.rebuild {
                a.start_rebuild(cfg);
            }
        }
        let arrays_degraded = arrays.iter().any(|a| !a.geom.failed.is_empty());
        Ok(World {
            page_cache,
            system: sys.file.clone(),
            res,
            models,
            disks,
            ctrls,
            arrays,
            luns,
            host_cpu,
            host_io_ns: (c.host.per_io_us * 1e3) as u64,
            host_job_start_ns: (c.host.job_start_ms * 1e6) as u64,
            host_parity,
            degraded: arrays_degraded,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trim takes its range out of a stripe's dirty ranges, inline or spilled, splitting
    /// a range it falls inside, and says how many bytes were dirty there.
    #[test]
    fn ranges_give_up_what_a_trim_covers() {
        let of = |r: &Ranges| r.iter().collect::<Vec<_>>();
        let mut r = Ranges::default();
        r.add(0, 10);
        r.add(20, 30);
        assert_eq!(r.remove(5, 25), 10);
        assert_eq!(of(&r), [(0, 5), (25, 30)]);
        assert_eq!(r.bytes(), 10);
        assert_eq!(r.remove(40, 50), 0);
        let mut r = Ranges::default();
        for k in 0..6 {
            r.add(k * 100, k * 100 + 50);
        }
        assert_eq!(r.remove(120, 130), 10);
        assert_eq!(r.bytes(), 290);
        assert_eq!(of(&r)[1..3], [(100, 120), (130, 150)]);
        assert_eq!(r.remove(0, 1000), 290);
        assert_eq!((r.bytes(), of(&r).len()), (0, 0));
    }

    /// A span is covered only within one (merged) range, inline or spilled.
    #[test]
    fn ranges_cover_a_span_only_within_one_range() {
        let mut r = Ranges::default();
        r.add(0, 10);
        r.add(20, 30);
        assert!(r.covers(0, 10) && r.covers(22, 30) && r.covers(5, 5));
        assert!(!r.covers(5, 25) && !r.covers(25, 31) && !r.covers(10, 20));
        r.add(10, 20);
        assert!(r.covers(5, 25), "merged into one");
        for k in 1..6 {
            r.add(k * 100, k * 100 + 50);
        }
        assert!(r.covers(320, 350) && r.covers(0, 30));
        assert!(!r.covers(340, 360) && !r.covers(450, 460));
    }

    #[test]
    fn a_stream_read_ahead_starts_at_one_request_and_grows_to_the_depth() {
        const K: u64 = 1024;
        // 64 KiB requests against a 256 KiB depth: one request, then one more each time.
        let mut w = 0;
        let mut seen = Vec::new();
        for _ in 0..6 {
            w = stream_read_ahead(w, 64 * K, 256 * K);
            seen.push(w / K);
        }
        assert_eq!(seen, [64, 128, 192, 256, 256, 256]);
        // Requests larger than the depth: one request ahead from the first continuation on.
        assert_eq!(stream_read_ahead(0, 4096 * K, 256 * K), 4096 * K);
        assert_eq!(stream_read_ahead(4096 * K, 4096 * K, 256 * K), 4096 * K);
        // A stream whose requests shrink keeps the depth, not its larger past window.
        assert_eq!(stream_read_ahead(4096 * K, 64 * K, 256 * K), 256 * K);
    }

    fn geom(level: Level, members: u32, chunk: u64) -> ArrayGeom {
        let mut g = ArrayGeom::new(level, members, chunk, 64 * chunk);
        g.finish().unwrap();
        g
    }

    /// The plan cache must hand out exactly what the planner says, for every level and odd
    /// or even member counts, whether or not the layout turns out periodic.
    #[test]
    fn plan_cache_gives_the_planners_plans() {
        let mut rng = raidlab_workload::Rng::new(7);
        let shapes = [
            (Level::Single, 1),
            (Level::Linear, 3),
            (Level::Raid0, 3),
            (Level::Raid1, 2),
            (Level::Raid10, 4),
            (Level::Raid10, 3),
            (Level::Raid5, 5),
            (Level::Raid5, 4),
            (Level::Raid6, 6),
        ];
        for (level, n) in shapes {
            let g = geom(level, n, 8192);
            let mut cache = PlanCache::default();
            let sd = g.stripe_data_bytes();
            let stripes = g.capacity() / sd;
            for _ in 0..400 {
                // Repeat a few shapes so the cached path is taken.
                let s = rng.below(stripes);
                let a = rng.below(4) * 512 * (sd / 2048);
                let b = (a + 512 * (1 + rng.below(sd / 512))).min(sd);
                let direct = g.plan_stripe_write(s, &[(a, b)]);
                let (mut r, mut w) = (Vec::new(), Vec::new());
                let parity = cache.stripe_write(&g, s, &[(a, b)], &mut r, &mut w);
                assert_eq!(
                    (r, w, parity),
                    (direct.reads, direct.writes, direct.parity_bytes)
                );
                // Several dirty ranges in the stripe (sorted, apart), from a few shapes so
                // they repeat.
                let mut ranges = Vec::new();
                for _ in 0..1 + rng.below(5) {
                    let x = rng.below(8) * (sd / 8);
                    add_range(&mut ranges, x, (x + 512 * (1 + rng.below(3))).min(sd));
                }
                let direct = g.plan_stripe_write(s, &ranges);
                let (mut r, mut w) = (Vec::new(), Vec::new());
                let parity = cache.stripe_write(&g, s, &ranges, &mut r, &mut w);
                assert_eq!(
                    (r, w, parity),
                    (direct.reads, direct.writes, direct.parity_bytes),
                    "{level:?} × {n}: stripe {s} ranges {ranges:?}"
                );
                let off = s * sd + a;
                let len = (b - a).min(g.capacity() - off) + rng.below(2) * sd;
                let len = len.min(g.capacity() - off);
                let (mut x, mut y) = (Vec::new(), Vec::new());
                g.map_read(off, len, None, &mut x);
                cache.map_read(&g, off, len, None, &mut y);
                assert_eq!(x, y, "{level:?} × {n}: read {off}+{len}");
                if matches!(level, Level::Raid1 | Level::Raid10) {
                    mirror_read_agrees(&g, &mut cache, off, len, &mut rng);
                }
            }
            let expect_periodic =
                !matches!(level, Level::Linear) && (level != Level::Raid10 || n % 2 == 0);
            assert_eq!(cache.periodic, Some(expect_periodic), "{level:?} × {n}");
            // Mirror reads by load come from the cache's pieces where the layout repeats.
            assert_eq!(
                cache.mirror_reads.values().any(Option::is_some),
                expect_periodic && matches!(level, Level::Raid1 | Level::Raid10),
                "{level:?} × {n}"
            );
            // RAID 5 destage plans come from the cache by roles, and the planner agreed.
            assert_eq!(
                matches!(cache.roles, Some(Some(_))),
                level == Level::Raid5,
                "{level:?} × {n}"
            );
        }
    }

    /// A resource with many servers (a host's CPUs) gives each reservation the end a look
    /// through every server for the earliest free would: the first server on ties, any of
    /// the others otherwise, as only their free times matter.
    #[test]
    fn reserving_a_server_takes_the_earliest_free() {
        let mut rng = raidlab_workload::Rng::new(9);
        for servers in [1, 2, 3, 8, 64] {
            let mut res = Res::new("cpu", "host", servers, "");
            let mut free = vec![0u64; servers as usize];
            let (mut now, mut busy) = (0, 0);
            for _ in 0..5000 {
                now += rng.below(40);
                let dur = rng.below(4) * rng.below(300);
                busy += dur;
                let k = (0..free.len()).fold(0, |k, i| if free[i] < free[k] { i } else { k });
                let end = now.max(free[k]) + dur;
                free[k] = end;
                assert_eq!(res.reserve(now, dur), end, "{servers} servers at {now}");
                assert_eq!(res.free0, free[0]);
            }
            let mut rest = free[1..].to_vec();
            let mut heap = res.free_more.clone();
            rest.sort_unstable();
            heap.sort_unstable();
            assert_eq!(heap, rest);
            assert_eq!(res.busy_ns, busy);
        }
    }

    /// Destages of parity stripes with many dirty ranges (a page cache's write-back leaves
    /// up to a dozen) come from the plans of their row segments: the same member I/Os and
    /// parity bytes as the planner's, for RAID 5 and 6 of several widths and chunks, whole
    /// and with members failed, the segments' plans kept and reused.
    #[test]
    fn parity_destages_by_segments_are_the_planners() {
        let mut rng = raidlab_workload::Rng::new(11);
        let cases: [(Level, u32, u64, &[u32]); 8] = [
            (Level::Raid5, 4, 16384, &[]),
            (Level::Raid5, 5, 65536, &[]),
            (Level::Raid5, 8, 4096, &[]),
            (Level::Raid5, 5, 16384, &[2]),
            (Level::Raid6, 4, 16384, &[]),
            (Level::Raid6, 6, 65536, &[]),
            (Level::Raid6, 9, 8192, &[4]),
            (Level::Raid6, 6, 16384, &[0, 5]),
        ];
        for (level, n, chunk, failed) in cases {
            let mut g = ArrayGeom::new(level, n, chunk, 64 * chunk);
            g.failed = failed.to_vec();
            g.finish().unwrap();
            let mut cache = if failed.is_empty() {
                PlanCache::default()
            } else {
                PlanCache::degraded()
            };
            let sd = g.stripe_data_bytes();
            let stripes = g.capacity() / sd;
            // (Runs of 512-byte multiples, a 64th of the stripe or less each.)
            let grain = 512 * (sd / 64 / 512).max(1);
            let pages = sd / grain;
            let mut many = 0;
            for _ in 0..300 {
                let s = rng.below(stripes);
                // Up to 14 dirty runs anywhere in the stripe, merged where they touch.
                let mut ranges = Vec::new();
                for _ in 0..1 + rng.below(14) {
                    let x = rng.below(pages) * grain;
                    add_range(&mut ranges, x, (x + grain * (1 + rng.below(3))).min(sd));
                }
                many += usize::from(ranges.len() > MAX_RANGES);
                let direct = g.plan_stripe_write(s, &ranges);
                let (mut r, mut w) = (Vec::new(), Vec::new());
                let parity = cache.stripe_write(&g, s, &ranges, &mut r, &mut w);
                assert_eq!(
                    (sorted_ios(r), sorted_ios(w), parity),
                    (
                        sorted_ios(direct.reads),
                        sorted_ios(direct.writes),
                        direct.parity_bytes
                    ),
                    "{level:?} × {n}, chunk {chunk}, failed {failed:?}: stripe {s} ranges {ranges:?}"
                );
            }
            assert!(many > 50, "{level:?} × {n}: {many} destages of many ranges");
            assert_eq!(cache.periodic, Some(true), "{level:?} × {n}");
            assert!(
                cache.segments.values().filter(|t| t.is_some()).count() > 4,
                "{level:?} × {n}, failed {failed:?}: segment plans kept"
            );
        }
    }

    /// A mirror read by the members' loads (ties likely: loads of 0 to 2) is what the planner
    /// plans, and the cache's offset for it is where the read begins.
    fn mirror_read_agrees(
        g: &ArrayGeom,
        cache: &mut PlanCache,
        off: u64,
        len: u64,
        rng: &mut raidlab_workload::Rng,
    ) {
        let loads: Vec<u64> = (0..g.members).map(|_| rng.below(3)).collect();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        g.map_read(off, len, Some(&loads), &mut x);
        cache.map_read(g, off, len, Some(&loads), &mut y);
        assert_eq!(
            x, y,
            "{:?} × {}: read {off}+{len} by {loads:?}",
            g.level, g.members
        );
        if let Some(o) = cache.mirror_offset(g, off, len) {
            assert_eq!(o, g.geo().map(off)[0].offset, "read {off}+{len}");
        }
    }

    /// Mirrors with a failed copy: by load, a read goes where the planner sends it, whether
    /// or not the survivors' rotation repeats from period to period.
    #[test]
    fn degraded_mirror_reads_by_load_are_the_planners() {
        let mut rng = raidlab_workload::Rng::new(11);
        for (level, n, failed) in [
            (Level::Raid1, 3, 1),
            (Level::Raid1, 4, 0),
            (Level::Raid10, 4, 2),
            (Level::Raid10, 6, 5),
        ] {
            let mut g = ArrayGeom::new(level, n, 8192, 64 * 8192);
            g.failed = vec![failed];
            g.finish().unwrap();
            // (One cache for reads by load, one for plain reads: a plain read that finds the
            // layout not repeating turns the first's cache off too.)
            let (mut cache, mut plain) = (PlanCache::degraded(), PlanCache::degraded());
            let sd = g.stripe_data_bytes();
            for _ in 0..400 {
                let off = rng.below(g.capacity() / 512) * 512;
                let len = (512 * (1 + rng.below(3 * sd / 512))).min(g.capacity() - off);
                mirror_read_agrees(&g, &mut cache, off, len, &mut rng);
                let (mut x, mut y) = (Vec::new(), Vec::new());
                g.map_read(off, len, None, &mut x);
                plain.map_read(&g, off, len, None, &mut y);
                assert_eq!(x, y, "{level:?} × {n}: read {off}+{len}");
            }
        }
    }

    /// The angle-ordered search picks exactly what ranking every ready command by the exact
    /// positioning formula picks (the first to arrive among equals): narrow and full-stroke
    /// queues, commands not yet ready, sectors right at the head's angle and seeks that end
    /// right as the sector comes round.
    #[test]
    fn sptf_search_picks_the_exact_shortest() {
        let mut rng = raidlab_workload::Rng::new(5);
        for disk in ["seagate-st973451ss", "maxtor-7y250m0"] {
            let m = DeviceModel::new(&crate::catalog::find(disk).unwrap(), Some(false));
            let cyls = m.loc(m.capacity - 512).cyl as u64 + 1;
            let mut ranks = Vec::new();
            for round in 0..4000 {
                let mut st = DeviceState::new(rng.next_f64(), &m);
                st.cyl = rng.below(cyls);
                // Up to a minute of virtual time, and now and then hours.
                let now = rng.below(if round % 3 == 0 {
                    1 << 44
                } else {
                    60_000_000_000
                });
                let t_cmd = m.t_cmd(now);
                let a0 = m.angle_at(&st, t_cmd);
                let span = if round % 2 == 0 { cyls / 100 } else { cyls };
                let n = 1 + rng.below(40) as usize;
                let cands: Vec<Cand> = (0..n as u64)
                    .map(|_| {
                        let cyl = (st.cyl + rng.below(span)).min(cyls - 1);
                        let write = rng.below(3) == 0;
                        let target = match rng.below(6) {
                            0 => a0,
                            1 => {
                                // Seek ends as the sector arrives.
                                let mut pos = m.seek_to_ns(&st, cyl);
                                if write {
                                    pos += m.settle_ns();
                                }
                                (a0 + pos / m.rev_ns()).fract()
                            }
                            2 => (a0 + 1.0 - 1e-13).fract(),
                            _ => rng.next_f64(),
                        };
                        let ready = if rng.below(5) == 0 { now + 1 } else { now };
                        Cand::new(target, ready, cyl as u32, write)
                    })
                    .collect();
                // The window, filled in arrival order (slot = arrival), keeps them by
                // (angle, arrival).
                let mut w = Window::default();
                w.span(cands.len());
                for (seq, c) in cands.iter().enumerate() {
                    w.insert(seq as u32, seq as u64, *c);
                }
                let order: Vec<(f64, u64)> = w.iter().map(|(s, c)| (c.target, w.seq(s))).collect();
                assert_eq!(order.len(), n);
                assert!(
                    order.windows(2).all(|p| p[0] < p[1]),
                    "{disk} round {round}"
                );
                let mut best: Option<(f64, u64)> = None;
                for (seq, c) in cands.iter().enumerate() {
                    let seq = seq as u64;
                    if c.ready > now {
                        continue;
                    }
                    let mut pos = m.seek_to_ns(&st, c.cyl as u64);
                    if c.write() {
                        pos += m.settle_ns();
                    }
                    let p = m.positioning_to(&st, t_cmd, pos, c.target);
                    if best.is_none_or(|b| p < b.0 || (p == b.0 && seq < b.1)) {
                        best = Some((p, seq));
                    }
                }
                let picked = sptf_pick(&m, &st, &w, now, &mut ranks);
                assert_eq!(
                    picked.map(|(k, p)| (w.seq(k), p.to_bits())),
                    best.map(|b| (b.1, b.0.to_bits())),
                    "{disk} round {round}"
                );
            }
        }
    }

    /// The read a drive reaches by reading on is the nearest past its last read's end within
    /// its read-ahead span, ready, the first to arrive among equals, as a search of the whole
    /// window finds it; none when there is none, whatever the region lists hold after
    /// commands come and go.
    #[test]
    fn reading_on_finds_the_nearest_read_within_the_span() {
        let m = DeviceModel::new(&crate::catalog::find("seagate-st973451ss").unwrap(), None);
        let span = m.read_ahead_bytes();
        let mut rng = raidlab_workload::Rng::new(21);
        let mut q = DriveQueue::new(16);
        let base = (m.capacity / 2) & !511;
        let mut found = 0;
        for step in 0..20_000u64 {
            if q.window.is_empty() || (rng.below(2) == 0 && q.len() < 40) {
                // Near the head (within two spans either side) mostly, anywhere now and then.
                let offset = if rng.below(4) == 0 {
                    rng.below(m.capacity / 512 - 64) * 512
                } else {
                    base - 2 * span + rng.below(4 * span / 512) * 512
                };
                q.push_back(DiskReq {
                    offset,
                    len: 4096,
                    write: rng.below(3) == 0,
                    join: 0,
                    ready: rng.below(3),
                    loc: m.loc(offset),
                });
            } else {
                let k = rng.below(q.window.len() as u64) as usize;
                let (slot, _) = q.window.iter().nth(k).unwrap();
                q.take(slot, 0);
            }
            let mut st = DeviceState::new(0.3, &m);
            st.last_was_read = step % 5 != 0;
            st.last_end = base - span / 2 + rng.below(span / 512) * 512;
            st.last_done = 1;
            let now = rng.below(3);
            let want = q
                .window
                .iter()
                .map(|(s, _)| (s, &q.slab[s as usize]))
                .filter(|(_, r)| !r.write && r.ready <= now && m.reads_ahead_to(&st, r.offset))
                .min_by_key(|(s, r)| (r.offset, q.window.seq(*s)))
                .map(|(s, _)| s);
            let got = q.reading_on(&m, &st, now);
            assert_eq!(got.map(|g| g.0), want, "step {step}");
            if let Some((s, wait)) = got {
                found += 1;
                let r = &q.slab[s as usize];
                assert_eq!(wait, m.read_on_wait(&st, m.t_cmd(now), r.offset, &r.loc));
                assert!(wait >= 0.0);
            }
        }
        assert!(found > 1000, "{found}");
    }

    /// Entries whose ranges spilled to the heap survive the map's growth, a clone and a
    /// removal, and each is dropped once (a double drop or a use after free aborts the test).
    #[test]
    fn dirty_map_moves_clones_and_drops_spilled_entries() {
        let mut m = DirtyMap::default();
        for s in 0..5_000u64 {
            let d = m.get_or_insert_with(s * 3, Dirty::default);
            for k in 0..6 {
                d.ranges.add(k * 1000, k * 1000 + 10 + s % 7);
            }
        }
        let c = m.clone();
        for s in (0..5_000u64).step_by(2) {
            let d = m.remove(s * 3).expect("present");
            assert_eq!(d.ranges.iter().count(), 6);
        }
        drop(m);
        assert_eq!(c.len(), 5_000);
        for s in 0..5_000u64 {
            let d = c.get(s * 3).expect("in the clone");
            assert_eq!(d.ranges.bytes(), 6 * (10 + s % 7));
            assert!(c.get(s * 3 + 1).is_none());
        }
    }

    /// The dirty map keeps what a `HashMap` would under random inserts, updates and removes
    /// (stripes close together, so that entries collide, runs wrap round the table's end and
    /// removals shift the runs back).
    #[test]
    fn dirty_map_agrees_with_a_hash_map() {
        let mut rng = raidlab_workload::Rng::new(3);
        let (mut m, mut h) = (DirtyMap::default(), std::collections::HashMap::new());
        for round in 0..50_000u64 {
            let s = rng.below(2_000);
            match rng.below(5) {
                0 => {
                    let d = m.get_or_insert_with(s, || Dirty {
                        born: round,
                        ..Default::default()
                    });
                    let e = h.entry(s).or_insert((round, 0));
                    let (a, b) = (rng.below(4096), 4096 + rng.below(4096));
                    e.1 += d.ranges.add(a, b);
                    assert_eq!((d.born, d.ranges.bytes()), *e);
                }
                1 => assert_eq!(
                    m.remove(s).map(|d| (d.born, d.ranges.bytes())),
                    h.remove(&s)
                ),
                2 => {
                    m.insert(
                        s,
                        Dirty {
                            born: round,
                            ..Default::default()
                        },
                    );
                    h.insert(s, (round, 0));
                }
                3 => {
                    if let Some(d) = m.get_mut(s) {
                        d.destaging = !d.destaging;
                    }
                }
                _ => assert_eq!(
                    m.get(s).map(|d| (d.born, d.ranges.bytes())),
                    h.get(&s).copied()
                ),
            }
            assert_eq!(m.len(), h.len());
        }
        let mut all: Vec<_> = m
            .iter()
            .map(|(s, d)| (s, d.born, d.ranges.bytes()))
            .collect();
        all.sort_unstable();
        let mut want: Vec<_> = h.iter().map(|(&s, &(b, n))| (s, b, n)).collect();
        want.sort_unstable();
        assert_eq!(all, want);
    }

    /// A drive's window holds its first `window` commands by arrival, ordered by angle, as
    /// commands come and go; the one taken is the one chosen.
    #[test]
    fn drive_queue_window_is_the_first_arrivals_by_angle() {
        let m = DeviceModel::new(&crate::catalog::find("seagate-st973451ss").unwrap(), None);
        let mut rng = raidlab_workload::Rng::new(9);
        let mut q = DriveQueue::new(8);
        // (arrival, offset) of what the queue should hold, in arrival order.
        let mut want: Vec<(u64, u64)> = Vec::new();
        let mut arrivals = 0u64;
        for step in 0..5000 {
            if want.is_empty() || (rng.below(2) == 0 && want.len() < 40) {
                let offset = rng.below(m.capacity / 512 - 64) * 512;
                q.push_back(DiskReq {
                    offset,
                    len: 4096,
                    write: rng.below(2) == 0,
                    join: 0,
                    ready: 0,
                    loc: m.loc(offset),
                });
                want.push((arrivals, offset));
                arrivals += 1;
            } else {
                let k = rng.below(q.window.len() as u64) as usize;
                let (slot, _) = q.window.iter().nth(k).unwrap();
                let seq = q.window.seq(slot);
                let r = q.take(slot, 0);
                let i = want.iter().position(|w| w.0 == seq).unwrap();
                assert_eq!(r.offset, want.remove(i).1, "step {step}");
            }
            assert_eq!(q.len(), want.len());
            let order: Vec<(f64, u64)> = q
                .window
                .iter()
                .map(|(s, c)| (c.target, q.window.seq(s)))
                .collect();
            assert!(order.windows(2).all(|p| p[0] < p[1]));
            let mut seqs: Vec<u64> = order.iter().map(|o| o.1).collect();
            seqs.sort_unstable();
            let first: Vec<u64> = want.iter().take(8).map(|w| w.0).collect();
            assert_eq!(seqs, first, "step {step}");
        }
    }

    #[test]
    fn add_range_merges_touching_and_counts_new_bytes() {
        let mut v = Vec::new();
        assert_eq!(add_range(&mut v, 10, 20), 10);
        assert_eq!(add_range(&mut v, 30, 40), 10);
        assert_eq!(add_range(&mut v, 20, 30), 10);
        assert_eq!(v, vec![(10, 40)]);
        assert_eq!(add_range(&mut v, 0, 5), 5);
        assert_eq!(add_range(&mut v, 3, 50), 50 - 3 - (2 + 30));
        assert_eq!(v, vec![(0, 50)]);
        // Against the append-sort-merge form on random input.
        let mut rng = raidlab_workload::Rng::new(3);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..2000 {
            let x = rng.below(1000);
            let y = x + 1 + rng.below(50);
            assert_eq!(add_range(&mut a, x, y), add_range_sorting(&mut b, x, y));
            assert_eq!(a, b);
            if a.len() > 20 {
                a.clear();
                b.clear();
            }
        }
        // A sequential writer: ranges that continue or follow the last one.
        let mut x = 0;
        for k in 0..200 {
            let y = x + 1 + rng.below(20);
            assert_eq!(add_range(&mut a, x, y), add_range_sorting(&mut b, x, y));
            assert_eq!(a, b);
            x = y + (k % 3 == 0) as u64 * rng.below(5);
        }
        // The inline form, few ranges or many (spilled), empty ranges among them.
        for round in 0..400 {
            let (mut r, mut b) = (Ranges::default(), Vec::new());
            for _ in 0..1 + round % 12 {
                let x = rng.below(200);
                let y = x + rng.below(30);
                assert_eq!(r.add(x, y), add_range_sorting(&mut b, x, y));
                assert_eq!(r.iter().collect::<Vec<_>>(), b);
                assert_eq!(r.bytes(), b.iter().map(|(x, y)| y - x).sum::<u64>());
            }
        }
    }

    #[test]
    fn seg_costs_reserve_as_transfer_does() {
        let mk = || {
            vec![
                Res::new("bus", "bus", 1, "").bw(Some(900.0), Some(700.0)),
                Res::new("cpu", "cpu", 1, ""),
                Res::new("link", "link", 1, "").bw(Some(100.0), None),
                Res::new("port", "port", 1, "").bw(Some(3.0), Some(0.7)),
            ]
        };
        let (mut r1, mut r2) = (mk(), mk());
        let path = [0, 1, 2, 3];
        let mut costs = [SegCosts::default(), SegCosts::default()];
        let mut rng = raidlab_workload::Rng::new(9);
        let mut now = 0;
        for _ in 0..500 {
            let write = rng.below(2) == 1;
            // Mostly repeated lengths, some new ones, some longer than a segment.
            let bytes = match rng.below(4) {
                0 => 1 + rng.below(3 * SEGMENT),
                _ => 512 << rng.below(3),
            };
            now += rng.below(200_000);
            let a = transfer(&mut r1, &path, now, bytes, write);
            let b = costs[write as usize].transfer(&mut r2, &path, now, bytes, write);
            assert_eq!(a, b);
            for (x, y) in r1.iter().zip(&r2) {
                assert_eq!((x.free0, x.busy_ns), (y.free0, y.busy_ns));
            }
        }
    }

    /// A one-hop transfer's inline case reserves the hop as the general loop does, over
    /// hops with and without a rate, for empty, one-segment and longer transfers.
    #[test]
    fn one_hop_transfer_matches_the_general_loop() {
        let mk = || {
            vec![
                Res::new("bus", "bus", 1, "").bw(Some(900.0), Some(700.0)),
                Res::new("cpu", "cpu", 1, ""),
                Res::new("port", "port", 1, "").bw(Some(3.0), Some(0.7)),
            ]
        };
        let (mut r1, mut r2) = (mk(), mk());
        let mut rng = raidlab_workload::Rng::new(11);
        let mut now = 0;
        for _ in 0..2000 {
            let write = rng.below(2) == 1;
            let path = [rng.below(3) as usize];
            let bytes = match rng.below(5) {
                0 => rng.below(3 * SEGMENT),
                1 => 0,
                _ => 512 << rng.below(5),
            };
            now += rng.below(100_000);
            let a = transfer(&mut r1, &path, now, bytes, write);
            let b = transfer_segments(&mut r2, &path, now, bytes, write);
            assert_eq!(a, b);
            for (x, y) in r1.iter().zip(&r2) {
                assert_eq!((x.free0, x.busy_ns), (y.free0, y.busy_ns));
            }
        }
    }
}
