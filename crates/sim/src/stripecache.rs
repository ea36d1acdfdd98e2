//! md's stripe cache, for parity arrays the host runs (raid5/raid6 with no controller, as Linux
//! md does): which writes it holds, when it writes a stripe, and how much room it has. Plain
//! data the event loop asks; the loop plans and issues the member I/O.
//!
//! Not for controller arrays (their write-back cache is [`crate::world::Array`]'s `dirty`), and
//! not for reads: md reads around the stripe cache on a healthy array, and so does this model.
//!
//! md (drivers/md/raid5.c, the 2.6 kernels of seed 003) passes every write through stripe
//! heads: one 4 KiB page of each member at the same member offset, `stripe_cache_size` of them
//! (256 unless set). Modelled per chunk row, the planner's stripe:
//! - a write's data joins its stripe's entry; an entry whose data covers the whole stripe is
//!   written at once, without pre-reads;
//! - an entry holding part of a stripe is delayed: md plugs the array, and at the unplug (a
//!   timer, [`UNPLUG_NS`], for the page cache's write-back; at once for a job's own direct
//!   write, whose submitting task unplugs as its submission returns; or a writer waiting for
//!   room) writes every delayed stripe — but only
//!   while no stripe is pre-reading (md's `IO_THRESHOLD` of 1); else when the last pre-read
//!   stripe is done. The planner then reads what each row of the stripe needs;
//! - room: an entry takes the rows (4 KiB of offset within a chunk) its data touches, as md's
//!   stripe heads are shared by the members, until it is written and empty; a writer whose
//!   next stripe does not fit waits, in order;
//! - one operation on a stripe at a time: data for a stripe being written waits in its entry
//!   for the next round.
//!
//! So sequential writes in pieces smaller than a stripe still reach the drives as full-stripe
//! writes when the next pieces come soon enough, and large chunks, whose stripes take long to
//! fill or do not fit the cache, get pre-reads.
//!
//! It counts what a run's report shows of it: stripes written whole or with pre-reads, writes
//! that waited for room and for how long, and how long writes' pieces were held before their
//! stripe's operation began and how long the operations took (the two parts of a small
//! random writer's latency when no drive is busy).

use crate::world::{FastMap, Ranges};
use std::collections::VecDeque;

/// md's stripe head: one page of each member.
pub const ROW: u64 = 4096;

/// md's default `stripe_cache_size` (NR_STRIPES in raid5.c).
pub const DEFAULT_STRIPES: u32 = 256;

/// The range md's sysfs `stripe_cache_size` accepts (raid5.c `raid5_set_cache_size`: above 16,
/// at most 32768).
pub const STRIPES_MIN: u32 = 17;
pub const STRIPES_MAX: u32 = 32768;

/// The largest request the block layer sends a member (`max_sectors_kb`, 512 KiB): a stripe
/// whose chunks are larger is written in slices of rows this long, and md frees each slice's
/// stripe heads as it is written.
pub const SLICE: u64 = 512 * 1024;

/// How long a plugged block queue waits before it unplugs itself (the 2.6 kernels'
/// `q->unplug_delay`, 3 ms): when md looks at its delayed stripes unless something else
/// unplugs the array first.
pub const UNPLUG_NS: u64 = 3_000_000;

/// The stripe cache of one host parity array.
#[derive(Debug)]
pub struct StripeCache {
    /// Rows (stripe heads) it has, and rows in use.
    cap_rows: u64,
    rows: u64,
    chunk: u64,
    stripe_data: u64,
    entries: FastMap<u64, Entry>,
    /// Stripes delayed, oldest first (an entry no longer delayed is skipped).
    delayed: VecDeque<u64>,
    /// Stripes whose operation has pre-reads, in flight.
    prereading: u32,
    /// An unplug came while stripes were pre-reading: the delayed ones go once none is.
    unplug_wanted: bool,
    /// An unplug timer is pending.
    pub timer: bool,
    /// Host writes waiting for room: (I/O, where its unadmitted part starts, its end, when
    /// it began to wait).
    waiting: VecDeque<(u32, u64, u64, u64)>,
    /// What it did so far.
    pub counts: Counts,
}

/// What a stripe cache did, counted from its start (a run's share is the difference of two).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Stripes written whole (no pre-reads), written with pre-reads, and writes that waited
    /// for room.
    pub full_writes: u64,
    pub preread_writes: u64,
    pub room_waits: u64,
    /// How long the writes waited: for room, summed over the writes that waited (ns); held,
    /// from taken in until their stripe's operation began, summed over the pieces (ns), and
    /// how many pieces (a write has one in each stripe it touches).
    pub room_wait_ns: u64,
    pub held_ns: u64,
    pub held_pieces: u64,
    /// Stripe operations done, and their time from start to done (pre-reads and writes),
    /// summed (ns).
    pub ops_done: u64,
    pub op_ns: u64,
}

impl Counts {
    /// What was counted since `earlier`.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            full_writes: self.full_writes - earlier.full_writes,
            preread_writes: self.preread_writes - earlier.preread_writes,
            room_waits: self.room_waits - earlier.room_waits,
            room_wait_ns: self.room_wait_ns - earlier.room_wait_ns,
            held_ns: self.held_ns - earlier.held_ns,
            held_pieces: self.held_pieces - earlier.held_pieces,
            ops_done: self.ops_done - earlier.ops_done,
            op_ns: self.op_ns - earlier.op_ns,
        }
    }
}

#[derive(Debug, Default)]
struct Entry {
    /// Data not yet sent to the members, relative to the stripe's start.
    held: Ranges,
    /// The host writes with data in `held`, and when their pieces were taken in, summed
    /// (wrapping: only its difference from the pieces' operation start is used).
    waiters: Vec<u32>,
    taken_in: u64,
    /// The host writes of the operation in flight.
    sent: Vec<u32>,
    /// Offsets within a chunk, whole rows, that the entry's data touched: its stripe heads.
    rows: Ranges,
    /// An operation is in flight (Some), with pre-reads (true).
    busy: Option<bool>,
    /// When the operation in flight began.
    started: u64,
    /// Slices of the operation in flight not yet written (0: not written in slices).
    slices: u32,
    delayed: bool,
}

/// A stripe's operation to start: the data to write (relative to the stripe's start).
#[derive(Debug)]
pub struct Op {
    pub ranges: Vec<(u64, u64)>,
}

impl StripeCache {
    pub fn new(stripes: u32, chunk: u64, stripe_data: u64) -> StripeCache {
        assert!(chunk > 0 && stripe_data >= chunk && stripe_data.is_multiple_of(chunk));
        StripeCache {
            cap_rows: stripes as u64,
            rows: 0,
            chunk,
            stripe_data,
            entries: FastMap::default(),
            delayed: VecDeque::new(),
            prereading: 0,
            unplug_wanted: false,
            timer: false,
            waiting: VecDeque::new(),
            counts: Counts::default(),
        }
    }

    /// How many stripes (chunk rows) a write of [pos, end) touches.
    pub fn pieces(&self, pos: u64, end: u64) -> u32 {
        debug_assert!(pos < end);
        ((end - 1) / self.stripe_data - pos / self.stripe_data + 1) as u32
    }

    /// Rows (as offsets within a chunk, whole rows) that stripe-relative data [a, b) touches:
    /// one span, or two when it crosses into the next chunk.
    fn row_spans(&self, a: u64, b: u64) -> ([(u64, u64); 2], usize) {
        let c = self.chunk;
        let row = ROW.min(c);
        let round = |x: u64, y: u64| (x / row * row, y.div_ceil(row).saturating_mul(row).min(c));
        let (k0, k1) = (a / c, (b - 1) / c);
        if b - a >= c {
            ([(0, c), (0, 0)], 1)
        } else if k0 == k1 {
            ([round(a - k0 * c, b - k0 * c), (0, 0)], 1)
        } else {
            ([round(a - k0 * c, c), round(0, b - k1 * c)], 2)
        }
    }

    /// New rows stripe-relative data [a, b) would take in stripe `s`.
    fn new_rows(&self, s: u64, a: u64, b: u64) -> u64 {
        let mut rows = self
            .entries
            .get(&s)
            .map(|e| e.rows.clone())
            .unwrap_or_default();
        let (spans, n) = self.row_spans(a, b);
        let bytes: u64 = spans[..n].iter().map(|&(x, y)| rows.add(x, y)).sum();
        bytes / ROW.min(self.chunk)
    }

    /// Take in host write `io`'s data [pos, end) (logical offsets in the array) at `now`,
    /// stripe by stripe while there is room and no earlier write waits for it. Stripes the
    /// data completes are pushed to `ready` (start them with [`StripeCache::take`]). Returns
    /// whether every piece was taken in; if not, the rest waits for room, and the wait
    /// unplugs the array ([`StripeCache::unplug`]: the stripes it starts go to `ready` too).
    ///
    /// Writes wait in offset order: the order one writer (the flusher) submits them in, each
    /// blocking until it has its stripe heads; host CPU time may have swapped neighbours on
    /// their way here.
    pub fn admit(&mut self, io: u32, pos: u64, end: u64, now: u64, ready: &mut Vec<u64>) -> bool {
        let at = if self.waiting.is_empty() {
            self.admit_from(io, pos, end, now, ready)
        } else {
            pos
        };
        if at < end {
            self.counts.room_waits += 1;
            let i = self.waiting.partition_point(|w| w.1 <= at);
            self.waiting.insert(i, (io, at, end, now));
            self.unplug(ready);
            return false;
        }
        true
    }

    /// Take in as much of [pos, end) as fits; returns where it stopped.
    fn admit_from(
        &mut self,
        io: u32,
        mut pos: u64,
        end: u64,
        now: u64,
        ready: &mut Vec<u64>,
    ) -> u64 {
        let sd = self.stripe_data;
        while pos < end {
            let s = pos / sd;
            let (a, b) = (pos - s * sd, end.min((s + 1) * sd) - s * sd);
            let new = self.new_rows(s, a, b);
            if self.rows > 0 && self.rows + new > self.cap_rows {
                return pos;
            }
            self.rows += new;
            let (spans, n) = self.row_spans(a, b);
            let e = self.entries.entry(s).or_default();
            for &(x, y) in &spans[..n] {
                e.rows.add(x, y);
            }
            e.held.add(a, b);
            e.waiters.push(io);
            e.taken_in = e.taken_in.wrapping_add(now);
            if e.busy.is_none() {
                if e.held.bytes() == sd {
                    e.delayed = false;
                    ready.push(s);
                } else if !e.delayed {
                    e.delayed = true;
                    self.delayed.push_back(s);
                }
            }
            pos = s * sd + b;
        }
        pos
    }

    /// Whether stripes are delayed (an unplug would start them). Drops the entries at the
    /// front of the delayed list that no longer are.
    pub fn has_delayed(&mut self) -> bool {
        while let Some(s) = self.delayed.front() {
            if self.entries.get(s).is_some_and(|e| e.delayed) {
                return true;
            }
            self.delayed.pop_front();
        }
        false
    }

    /// The array is unplugged: every delayed stripe goes to `ready` if none is pre-reading;
    /// else they go once none is ([`StripeCache::done`] says so).
    pub fn unplug(&mut self, ready: &mut Vec<u64>) {
        if self.prereading > 0 {
            self.unplug_wanted = true;
            return;
        }
        self.unplug_wanted = false;
        while let Some(s) = self.delayed.pop_front() {
            if let Some(e) = self.entries.get_mut(&s) {
                if e.delayed {
                    e.delayed = false;
                    ready.push(s);
                }
            }
        }
    }

    /// Start stripe `s`'s operation at `now` on the data it holds (None if it holds none or
    /// one is in flight).
    pub fn take(&mut self, s: u64, now: u64) -> Option<Op> {
        let e = self.entries.get_mut(&s)?;
        if e.busy.is_some() || e.held.bytes() == 0 {
            return None;
        }
        let pieces = e.waiters.len() as u64;
        self.counts.held_ns += now
            .wrapping_mul(pieces)
            .wrapping_sub(std::mem::take(&mut e.taken_in));
        self.counts.held_pieces += pieces;
        e.started = now;
        e.delayed = false;
        e.busy = Some(false);
        e.sent = std::mem::take(&mut e.waiters);
        let ranges = std::mem::take(&mut e.held).iter().collect();
        Some(Op { ranges })
    }

    /// Stripe `s`'s operation reads before it writes.
    pub fn prereads(&mut self, s: u64) {
        let e = self.entries.get_mut(&s).expect("a stripe in flight");
        debug_assert_eq!(e.busy, Some(false));
        e.busy = Some(true);
        self.prereading += 1;
        self.counts.preread_writes += 1;
    }

    /// The chunk size (rows of a stripe span this much offset within each member's chunk).
    pub fn chunk(&self) -> u64 {
        self.chunk
    }

    /// Stripe `s`'s operation is written in `n` slices ([`StripeCache::slice_done`]).
    pub fn sliced(&mut self, s: u64, n: u32) {
        let e = self.entries.get_mut(&s).expect("a stripe in flight");
        debug_assert!(e.busy.is_some() && n > 0);
        e.slices = n;
    }

    /// A slice (rows [r0, r1) within the chunk) of stripe `s`'s operation is written: the
    /// rows the entry's held data does not need are free. Returns whether it was the last
    /// slice (then call [`StripeCache::done`]).
    pub fn slice_done(&mut self, s: u64, r0: u64, r1: u64) -> bool {
        let e = self.entries.get(&s).expect("a stripe in flight");
        let mut keep = Ranges::default();
        for (x, y) in e.rows.iter() {
            if x < r0 {
                keep.add(x, y.min(r0));
            }
            if y > r1 {
                keep.add(x.max(r1), y);
            }
        }
        for (a, b) in e.held.iter() {
            let (spans, n) = self.row_spans(a, b);
            for &(x, y) in &spans[..n] {
                if x.max(r0) < y.min(r1) {
                    keep.add(x.max(r0), y.min(r1));
                }
            }
        }
        let e = self.entries.get_mut(&s).expect("a stripe in flight");
        self.rows -= (e.rows.bytes() - keep.bytes()) / ROW.min(self.chunk);
        e.rows = keep;
        e.slices -= 1;
        e.slices == 0
    }

    /// Stripe `s`'s operation is done at `now`: its host writes are returned in `writes`
    /// (each once per piece it had there); stripes to start now in `ready` (this one again if
    /// it filled meanwhile, the delayed ones if an unplug waited for the pre-reads to end).
    /// Returns whether rows were freed (writes waiting for room may go on:
    /// [`StripeCache::resume`]).
    pub fn done(&mut self, s: u64, now: u64, writes: &mut Vec<u32>, ready: &mut Vec<u64>) -> bool {
        let sd = self.stripe_data;
        let e = self.entries.get_mut(&s).expect("a stripe in flight");
        self.counts.ops_done += 1;
        self.counts.op_ns += now - e.started;
        let pre = e.busy.take().expect("an operation in flight");
        if pre {
            self.prereading -= 1;
        } else {
            self.counts.full_writes += 1;
        }
        writes.append(&mut e.sent);
        let mut freed = false;
        if e.held.bytes() == sd {
            ready.push(s);
        } else if e.held.bytes() > 0 {
            if !e.delayed {
                e.delayed = true;
                self.delayed.push_back(s);
            }
        } else {
            self.rows -= e.rows.bytes() / ROW.min(self.chunk);
            self.entries.remove(&s);
            freed = true;
        }
        if self.prereading == 0 && self.unplug_wanted {
            self.unplug(ready);
        }
        freed
    }

    /// Take in the writes waiting for room at `now`, in order, while it lasts (stripes they
    /// complete go to `ready`). Returns whether one still waits; it unplugs the array, as in
    /// [`StripeCache::admit`].
    pub fn resume(&mut self, now: u64, ready: &mut Vec<u64>) -> bool {
        while let Some(&(io, pos, end, since)) = self.waiting.front() {
            let at = self.admit_from(io, pos, end, now, ready);
            if at < end {
                self.waiting.front_mut().expect("a waiting write").1 = at;
                self.unplug(ready);
                return true;
            }
            self.counts.room_wait_ns += now - since;
            self.waiting.pop_front();
        }
        false
    }

    /// Rows in use, of how many.
    pub fn rows(&self) -> (u64, u64) {
        (self.rows, self.cap_rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    /// 4-drive RAID 5: 3 data chunks a stripe.
    fn cache(stripes: u32, chunk: u64) -> StripeCache {
        StripeCache::new(stripes, chunk, 3 * chunk)
    }

    #[test]
    fn a_whole_stripe_is_ready_at_once_and_frees_its_rows_when_done() {
        let mut c = cache(256, 64 * K);
        let mut ready = vec![];
        assert!(c.admit(1, 0, 192 * K, 0, &mut ready));
        assert_eq!(ready, vec![0]);
        assert_eq!(c.rows(), (16, 256));
        let op = c.take(0, 0).unwrap();
        assert_eq!(op.ranges, vec![(0, 192 * K)]);
        let (mut w, mut r) = (vec![], vec![]);
        assert!(c.done(0, 0, &mut w, &mut r));
        assert_eq!((w, r), (vec![1], vec![]));
        assert_eq!(c.rows(), (0, 256));
        assert_eq!((c.counts.full_writes, c.counts.preread_writes), (1, 0));
    }

    #[test]
    fn pieces_of_a_stripe_wait_until_it_is_whole() {
        let mut c = cache(256, 64 * K);
        let mut ready = vec![];
        // 128 KiB, then the next 128 KiB: the first stripe is whole after the second.
        assert!(c.admit(1, 0, 128 * K, 0, &mut ready));
        assert!(ready.is_empty());
        assert!(c.has_delayed());
        assert!(c.admit(2, 128 * K, 256 * K, 0, &mut ready));
        assert_eq!(ready, vec![0]);
        let op = c.take(0, 0).unwrap();
        assert_eq!(op.ranges, vec![(0, 192 * K)]);
        // Stripe 1 holds the second write's last 64 KiB, delayed.
        assert!(c.has_delayed());
        let (mut w, mut r) = (vec![], vec![]);
        c.done(0, 0, &mut w, &mut r);
        w.sort();
        assert_eq!(w, vec![1, 2]);
    }

    #[test]
    fn an_unplug_starts_the_delayed_stripes_unless_some_are_pre_reading() {
        let mut c = cache(256, 64 * K);
        let mut ready = vec![];
        c.admit(1, 0, 8 * K, 0, &mut ready);
        c.unplug(&mut ready);
        assert_eq!(ready, vec![0]);
        c.take(0, 0).unwrap();
        c.prereads(0);
        // Another stripe, delayed; the unplug waits for the pre-reading one.
        let mut ready = vec![];
        c.admit(2, 192 * K, 200 * K, 0, &mut ready);
        c.unplug(&mut ready);
        assert!(ready.is_empty());
        let (mut w, mut r) = (vec![], vec![]);
        c.done(0, 0, &mut w, &mut r);
        assert_eq!(r, vec![1]);
        assert_eq!(c.counts.preread_writes, 1);
    }

    /// Each piece counts its time held from when it was taken in until its stripe's
    /// operation starts, and each operation its time to done; a write that waited for room,
    /// its wait until the last of it was taken in.
    #[test]
    fn the_cache_counts_time_held_time_written_and_time_waiting_for_room() {
        let mut c = cache(256, 64 * K);
        let mut ready = vec![];
        c.admit(1, 0, 8 * K, 100, &mut ready);
        c.unplug(&mut ready);
        c.take(0, 100).unwrap();
        c.prereads(0);
        // Two pieces of another stripe, taken in at 105 and 110, wait for the pre-reads.
        c.admit(2, 192 * K, 200 * K, 105, &mut ready);
        c.admit(3, 200 * K, 208 * K, 110, &mut ready);
        c.unplug(&mut ready);
        let (mut w, mut r) = (vec![], vec![]);
        c.done(0, 130, &mut w, &mut r);
        assert_eq!(r, vec![1]);
        c.take(1, 130).unwrap();
        assert_eq!((c.counts.held_pieces, c.counts.held_ns), (3, 25 + 20));
        c.done(1, 170, &mut w, &mut r);
        assert_eq!((c.counts.ops_done, c.counts.op_ns), (2, 30 + 40));

        // 1 MiB chunks: a whole stripe takes every row, and the next write waits for them.
        let mut c = cache(256, 1024 * K);
        let mut ready = vec![];
        assert!(c.admit(1, 0, 3072 * K, 0, &mut ready));
        assert!(!c.admit(2, 3072 * K, 3584 * K, 7, &mut ready));
        c.take(0, 0).unwrap();
        let mut r = vec![];
        assert!(c.done(0, 50, &mut vec![], &mut r));
        assert!(!c.resume(50, &mut r));
        assert_eq!((c.counts.room_waits, c.counts.room_wait_ns), (1, 43));
    }

    #[test]
    fn members_share_rows_and_a_full_cache_makes_writers_wait_in_order() {
        // 1 MiB chunks: a stripe's 3 MiB takes all 256 rows (each row: a page of each
        // member).
        let mut c = cache(256, 1024 * K);
        let mut ready = vec![];
        assert!(c.admit(1, 0, 512 * K, 0, &mut ready));
        assert_eq!(c.rows(), (128, 256));
        assert!(c.admit(2, 512 * K, 1536 * K, 0, &mut ready));
        assert_eq!(c.rows(), (256, 256));
        // The next chunk's rows are the same rows.
        assert!(c.admit(3, 1536 * K, 3072 * K, 0, &mut ready));
        assert_eq!(ready, vec![0]);
        // The next stripe waits for room, and so does a later write.
        assert!(!c.admit(4, 3072 * K, 3584 * K, 0, &mut ready));
        assert!(!c.admit(5, 3584 * K, 3600 * K, 0, &mut ready));
        assert_eq!(c.counts.room_waits, 2);
        c.take(0, 0).unwrap();
        let (mut w, mut r) = (vec![], vec![]);
        assert!(c.done(0, 0, &mut w, &mut r));
        assert!(!c.resume(0, &mut r));
        // Both waiting writes went in: 512 KiB and 16 KiB of the next stripe's first chunk.
        assert_eq!(c.rows(), (132, 256));
        assert!(c.has_delayed());
    }

    #[test]
    fn writes_wait_in_offset_order() {
        let mut c = cache(256, 1024 * K);
        let mut ready = vec![];
        assert!(c.admit(1, 0, 3072 * K, 0, &mut ready));
        assert_eq!(ready, vec![0]);
        // The next stripe's second piece comes before its first; both wait.
        assert!(!c.admit(3, 3584 * K, 4096 * K, 0, &mut ready));
        assert!(!c.admit(2, 3072 * K, 3584 * K, 0, &mut ready));
        c.take(0, 0).unwrap();
        let (mut w, mut r) = (vec![], vec![]);
        assert!(c.done(0, 0, &mut w, &mut r));
        assert!(!c.resume(0, &mut r));
        // In offset order: the stripe holds [0, 1 MiB) of its first chunk.
        let mut r = vec![];
        c.unplug(&mut r);
        assert_eq!(r, vec![1]);
        assert_eq!(c.take(1, 0).unwrap().ranges, vec![(0, 1024 * K)]);
    }

    #[test]
    fn data_for_a_stripe_in_flight_waits_for_the_next_round() {
        let mut c = cache(256, 64 * K);
        let mut ready = vec![];
        c.admit(1, 0, 192 * K, 0, &mut ready);
        c.take(0, 0).unwrap();
        let mut ready = vec![];
        c.admit(2, 0, 192 * K, 0, &mut ready);
        assert!(ready.is_empty());
        assert!(c.take(0, 0).is_none());
        let (mut w, mut r) = (vec![], vec![]);
        assert!(!c.done(0, 0, &mut w, &mut r));
        assert_eq!((w, r), (vec![1], vec![0]));
        c.take(0, 0).unwrap();
        let (mut w, mut r) = (vec![], vec![]);
        assert!(c.done(0, 0, &mut w, &mut r));
        assert_eq!(w, vec![2]);
    }
}
