//! The simulated host's page cache: what buffered jobs (`direct=0`) read and write through.
//!
//! It is for: deciding, in pages, what a buffered read finds in memory and which block
//! requests it must wait for (its own misses and the read-ahead windows of a sequential
//! stream), which pages a buffered write dirties, when the host writes dirty pages back and
//! when it makes a writer wait for them — as plain data the event loop turns into commands.
//!
//! It is not for: timing anything (the event loop sends its block requests down the LUN's
//! path and charges the copies to the host's CPUs) or holding data.
//!
//! The policies follow Linux's, whose behaviour the seeds measured through (seed 002's ext3
//! on 2.6.6, seed 003's md):
//! - pages of 4 KiB, evicted least recently used first; only clean pages are evicted;
//! - on-demand read-ahead per open file (each job): a read that continues where the last one
//!   ended opens a window of 4 or 2 × the request rounded up to a power of two (at most the
//!   read-ahead size), a read that reaches the window's marker page reads the next window
//!   ahead of the reader, 4 × then 2 × larger up to the read-ahead size; any other read is
//!   read as is (Linux mm/readahead.c, `get_init_ra_size`, `get_next_ra_size`);
//! - a job's advice (fio's `fadvise_hint`) as Linux takes it: POSIX_FADV_RANDOM reads only
//!   what is asked for, POSIX_FADV_SEQUENTIAL reads ahead up to twice the LUN's read-ahead
//!   size (mm/fadvise.c);
//! - block requests of at most `max_request` bytes (the queue's `max_sectors_kb`);
//! - dirty pages: written back in offset order from where the last write-back stopped while
//!   those not yet under write-back exceed the background threshold
//!   (`dirty_background_ratio`), or once a LUN has held dirty pages for 30 s (the flusher
//!   wakes every 5 s: `dirty_expire_centisecs`, `dirty_writeback_centisecs`); a writer waits
//!   while dirty and under-write-back pages together exceed the dirty limit (`dirty_ratio`),
//!   the limit `balance_dirty_pages` keeps (Documentation/admin-guide/sysctl/vm.rst);
//! - a write that covers part of a page the cache does not hold reads that page first.

use crate::world::FastMap;
use raidlab_workload::ReadAdvice;
use std::collections::BTreeMap;

/// The page size, bytes.
pub const PAGE: u64 = 4096;
/// How often the flusher wakes, and how old dirty data is before it is written back
/// regardless of the thresholds (Linux's defaults: 5 s and 30 s).
pub const FLUSH_EVERY_NS: u64 = 5_000_000_000;
pub const EXPIRE_NS: u64 = 30_000_000_000;

/// The cache's settings (sizes in pages).
#[derive(Clone, Debug, PartialEq)]
pub struct PageCacheCfg {
    pub capacity: u64,
    /// Read-ahead size of each LUN, pages.
    pub read_ahead: Vec<u64>,
    pub max_request: u64,
    /// Dirty pages not yet under write-back above which the host writes back.
    pub background: u64,
    /// Dirty plus under-write-back pages above which a writer waits.
    pub limit: u64,
    /// Write-back requests in flight at most (the block queue's `nr_requests`).
    pub writeback_depth: u32,
    /// Copy time between the cache and a program's buffer, ns per byte of one CPU.
    pub copy_ns_per_byte: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Clean: on the LRU list, may be evicted.
    Ready,
    /// Being read by block request `id`.
    Reading(u32),
    Dirty,
    /// Being written back; `redirtied` if written again meanwhile.
    Writeback {
        redirtied: bool,
    },
}

#[derive(Clone, Copy, Debug)]
struct Page {
    key: u64,
    state: State,
    /// LRU links (slot numbers; `NIL` at the ends); only `Ready` pages are linked.
    prev: u32,
    next: u32,
}

const NIL: u32 = u32::MAX;

/// A block request the cache wants sent: read or write `len` bytes at `offset` of `lun`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockIo {
    pub id: u32,
    pub lun: u32,
    pub offset: u64,
    pub len: u64,
    pub write: bool,
}

/// One job's read-ahead state, in pages of its LUN.
#[derive(Clone, Copy, Debug, Default)]
struct Ra {
    start: u64,
    size: u64,
    async_size: u64,
    /// The page after the job's last read (`None` before its first).
    next: Option<u64>,
    advice: ReadAdvice,
}

struct Request {
    /// Host commands waiting for it (reads only).
    waiters: Vec<u32>,
    key: u64,
    pages: u64,
    write: bool,
}

/// Counters for the run's report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Pages buffered reads found in the cache (or already on their way), and pages they
    /// had to read themselves.
    pub hit_pages: u64,
    pub miss_pages: u64,
    /// Pages read ahead of the reader.
    pub read_ahead_pages: u64,
    pub written_back_pages: u64,
    /// Buffered writes that waited for write-back (over the dirty limit).
    pub throttled: u64,
}

pub struct PageCache {
    pub cfg: PageCacheCfg,
    /// Page slots by key, under the simulator's own hasher: the standard one's SipHash was
    /// a third or more of a buffered sequential reader's or writer's cost, and its random
    /// seed left the map's order to chance. (Only `new_group` walks the map in its own
    /// order, and what it does to each page does not depend on it.)
    map: FastMap<u64, u32>,
    slots: Vec<Page>,
    free: Vec<u32>,
    /// LRU list of clean pages: `head` most recently used.
    head: u32,
    tail: u32,
    /// Dirty pages not under write-back, by key (LUN, page): write-back goes in this order.
    dirty: DirtyRuns,
    /// Dirty pages including those under write-back, in all and per LUN.
    pub dirty_pages: u64,
    lun_dirty: Vec<u64>,
    writeback_inflight: u32,
    cursor: u64,
    /// Per LUN: when it went from clean to dirty, and whether the flusher found it expired.
    dirtied_at: Vec<Option<u64>>,
    expired: Vec<bool>,
    reqs: Vec<Option<Request>>,
    free_reqs: Vec<u32>,
    ra: Vec<Ra>,
    pub stats: CacheStats,
}

fn key(lun: u32, page: u64) -> u64 {
    debug_assert!(page < 1 << 40);
    (lun as u64) << 40 | page
}
fn lun_of(key: u64) -> u32 {
    (key >> 40) as u32
}
fn page_of(key: u64) -> u64 {
    key & ((1 << 40) - 1)
}

/// A set of page keys kept as runs of consecutive keys within one LUN: the dirty pages
/// waiting for write-back. A writer dirties pages a run at a time and write-back takes them a
/// run at a time, so the runs are few where the pages are many (a page at a time in a
/// `BTreeSet` was two thirds of a buffered sequential writer's cost). A run never crosses
/// from one LUN's keys to the next, as write-back requests do not.
#[derive(Debug, Default)]
struct DirtyRuns {
    /// First key of each run → one past its last.
    runs: BTreeMap<u64, u64>,
    /// Keys in all.
    len: u64,
}

impl DirtyRuns {
    fn len(&self) -> u64 {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[cfg(test)]
    fn contains(&self, k: u64) -> bool {
        self.runs
            .range(..=k)
            .next_back()
            .is_some_and(|(_, &e)| k < e)
    }

    /// Adds key `k` (not held: a page becomes dirty once until written back).
    fn insert(&mut self, k: u64) {
        self.insert_run(k, k + 1);
    }

    /// Adds keys `[a, b)`, of one LUN, none held; joined to the runs that end at `a` and
    /// start at `b` (unless one of them is another LUN's).
    fn insert_run(&mut self, a: u64, b: u64) {
        debug_assert!(a < b && lun_of(a) == lun_of(b - 1));
        debug_assert!(
            self.runs
                .range(..b)
                .next_back()
                .is_none_or(|(_, &e)| e <= a),
            "[{a}, {b}) held in part"
        );
        let next = match self.runs.range(b..).next() {
            Some((&s, &e)) if s == b && page_of(b) != 0 => Some(e),
            _ => None,
        };
        if next.is_some() {
            self.runs.remove(&b);
        }
        let end = next.unwrap_or(b);
        match self.runs.range_mut(..=a).next_back() {
            Some((_, e)) if *e == a && page_of(a) != 0 => *e = end,
            _ => {
                self.runs.insert(a, end);
            }
        }
        self.len += b - a;
    }

    /// The first key at or past `from` whose LUN `ok` accepts, and the end of its run.
    fn first_from(&self, from: u64, ok: impl Fn(u32) -> bool) -> Option<(u64, u64)> {
        let holding = self
            .runs
            .range(..from)
            .next_back()
            .filter(|(_, &e)| e > from)
            .map(|(_, &e)| (from, e));
        holding
            .into_iter()
            .chain(self.runs.range(from..).map(|(&s, &e)| (s, e)))
            .find(|&(k, _)| ok(lun_of(k)))
    }

    /// Takes out keys `[a, b)`, all held, in one run.
    fn remove(&mut self, a: u64, b: u64) {
        let (&s, &e) = self.runs.range(..=a).next_back().expect("held");
        debug_assert!(s <= a && b <= e, "[{a}, {b}) not in the run [{s}, {e})");
        if s < a {
            self.runs.insert(s, a);
        } else {
            self.runs.remove(&s);
        }
        if b < e {
            self.runs.insert(b, e);
        }
        self.len -= b - a;
    }
}

/// Linux's first read-ahead window for a sequential read of `req` pages (at most `max`).
pub fn init_window(req: u64, max: u64) -> u64 {
    let n = req.max(1).next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// The window after one of `cur` pages (at most `max`).
pub fn next_window(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

impl PageCache {
    pub fn new(cfg: PageCacheCfg) -> PageCache {
        assert!(cfg.capacity > cfg.limit && cfg.limit >= cfg.background && cfg.max_request > 0);
        let luns = cfg.read_ahead.len();
        PageCache {
            cfg,
            map: FastMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            dirty: DirtyRuns::default(),
            dirty_pages: 0,
            writeback_inflight: 0,
            cursor: 0,
            lun_dirty: vec![0; luns],
            dirtied_at: vec![None; luns],
            expired: vec![false; luns],
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            ra: Vec::new(),
            stats: CacheStats::default(),
        }
    }

    /// Pages held (any state).
    pub fn pages(&self) -> u64 {
        self.map.len() as u64
    }

    /// A new job group: `jobs` fresh read-ahead states. Block requests in flight were dropped
    /// with the group's events: pages being read are forgotten, pages being written back are
    /// dirty again.
    pub fn new_group(&mut self, jobs: usize) {
        self.ra = vec![Ra::default(); jobs];
        let keys: Vec<u64> = self.map.keys().copied().collect();
        for k in keys {
            let s = self.map[&k];
            match self.slots[s as usize].state {
                State::Reading(_) => self.drop_page(k),
                State::Writeback { .. } => {
                    self.slots[s as usize].state = State::Dirty;
                    self.dirty.insert(k);
                }
                _ => {}
            }
        }
        self.reqs.clear();
        self.free_reqs.clear();
        self.writeback_inflight = 0;
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.slots[s as usize].prev, self.slots[s as usize].next);
        if p == NIL {
            self.head = n;
        } else {
            self.slots[p as usize].next = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.slots[n as usize].prev = p;
        }
    }
    fn link_head(&mut self, s: u32) {
        self.slots[s as usize].prev = NIL;
        self.slots[s as usize].next = self.head;
        if self.head != NIL {
            self.slots[self.head as usize].prev = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }
    /// Make a clean page the most recently used.
    fn touch(&mut self, s: u32) {
        self.unlink(s);
        self.link_head(s);
    }
    fn set_state(&mut self, s: u32, st: State) {
        let was = self.slots[s as usize].state;
        if was == State::Ready && st != State::Ready {
            self.unlink(s);
        }
        self.slots[s as usize].state = st;
        if was != State::Ready && st == State::Ready {
            self.link_head(s);
        }
    }
    fn drop_page(&mut self, k: u64) {
        if let Some(s) = self.map.remove(&k) {
            if self.slots[s as usize].state == State::Ready {
                self.unlink(s);
            }
            self.free.push(s);
        }
    }
    /// A new page in `st`, evicting the least recently used clean page if the cache is full
    /// (if every page is busy the cache runs over for a while, as memory reclaim would wait).
    fn insert(&mut self, k: u64, st: State) -> u32 {
        if self.map.len() as u64 >= self.cfg.capacity && self.tail != NIL {
            let victim = self.slots[self.tail as usize].key;
            self.drop_page(victim);
        }
        let page = Page {
            key: k,
            state: State::Dirty,
            prev: NIL,
            next: NIL,
        };
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = page;
                s
            }
            None => {
                self.slots.push(page);
                (self.slots.len() - 1) as u32
            }
        };
        self.map.insert(k, s);
        self.set_state(s, st);
        s
    }

    fn new_request(&mut self, k: u64, pages: u64, write: bool) -> u32 {
        let r = Request {
            waiters: Vec::new(),
            key: k,
            pages,
            write,
        };
        match self.free_reqs.pop() {
            Some(i) => {
                self.reqs[i as usize] = Some(r);
                i
            }
            None => {
                self.reqs.push(Some(r));
                (self.reqs.len() - 1) as u32
            }
        }
    }

    /// Read the pages of `[p0, p1)` of `lun` the cache does not hold, in block requests of
    /// at most `max_request` pages, appended to `out`.
    fn read_missing(&mut self, lun: u32, p0: u64, p1: u64, out: &mut Vec<BlockIo>) -> u64 {
        let mut p = p0;
        let mut read = 0;
        while p < p1 {
            if self.map.contains_key(&key(lun, p)) {
                p += 1;
                continue;
            }
            let mut q = p + 1;
            while q < p1 && q - p < self.cfg.max_request && !self.map.contains_key(&key(lun, q)) {
                q += 1;
            }
            let id = self.new_request(key(lun, p), q - p, false);
            for x in p..q {
                self.insert(key(lun, x), State::Reading(id));
            }
            out.push(BlockIo {
                id,
                lun,
                offset: p * PAGE,
                len: (q - p) * PAGE,
                write: false,
            });
            read += q - p;
            p = q;
        }
        read
    }

    /// Register host command `io` as waiting on the pages of `[p0, p1)` being read; returns
    /// how many block requests it waits for. Pages it finds are made most recently used.
    fn wait_on(&mut self, lun: u32, p0: u64, p1: u64, io: u32) -> u32 {
        let mut waits = 0;
        let mut last = NIL;
        for p in p0..p1 {
            let Some(&s) = self.map.get(&key(lun, p)) else {
                continue;
            };
            match self.slots[s as usize].state {
                State::Reading(id) if id != last => {
                    last = id;
                    let r = self.reqs[id as usize].as_mut().expect("a live request");
                    if r.waiters.last() != Some(&io) {
                        r.waiters.push(io);
                        waits += 1;
                    }
                }
                State::Reading(_) => {}
                State::Ready => self.touch(s),
                _ => {}
            }
        }
        waits
    }

    /// A read of `[p0, p1)` that reaches the window's marker page (still in the cache) reads
    /// the next window ahead.
    fn async_ahead(
        &mut self,
        ra: &mut Ra,
        lun: u32,
        p0: u64,
        p1: u64,
        max: u64,
        out: &mut Vec<BlockIo>,
    ) {
        if ra.size == 0 || ra.async_size == 0 {
            return;
        }
        let marker = ra.start + ra.size - ra.async_size;
        if (p0..p1).contains(&marker) && self.map.contains_key(&key(lun, marker)) {
            ra.start += ra.size;
            ra.size = next_window(ra.size, max);
            ra.async_size = ra.size;
            let got = self.read_missing(lun, ra.start, ra.start + ra.size, out);
            self.stats.read_ahead_pages += got;
        }
    }

    /// How `job` will read (its open files' advice) for the rest of the group.
    pub fn advise(&mut self, job: usize, advice: ReadAdvice) {
        self.ra[job].advice = advice;
    }

    /// The read-ahead size of `job`'s reads of `lun`, pages: the LUN's, as its advice
    /// changes it.
    fn ra_pages(&self, job: usize, lun: u32) -> u64 {
        let lun_pages = self.cfg.read_ahead[lun as usize];
        match self.ra[job].advice {
            ReadAdvice::Normal => lun_pages,
            ReadAdvice::Sequential => 2 * lun_pages,
            ReadAdvice::Random => 0,
        }
    }

    /// The largest step a buffered read of `lun` by `job` takes through [`PageCache::read`]
    /// at a time, bytes: its largest read-ahead window.
    pub fn read_step(&self, job: usize, lun: u32) -> u64 {
        self.ra_pages(job, lun).max(self.cfg.max_request) * PAGE
    }

    /// A buffered read of `len` bytes at `offset` of `lun` by `job`, host command `io`: the
    /// block requests to send (appended to `out`) and how many the command waits for
    /// (0: every page is in memory).
    pub fn read(
        &mut self,
        job: usize,
        lun: u32,
        offset: u64,
        len: u64,
        io: u32,
        out: &mut Vec<BlockIo>,
    ) -> u32 {
        let p0 = offset / PAGE;
        let p1 = (offset + len).div_ceil(PAGE).max(p0 + 1);
        let n = p1 - p0;
        // A request larger than the read-ahead opens windows of its size, up to the largest
        // block request (Linux's `ondemand_readahead`, since 2.6.3x: `io_pages`).
        let ra_pages = self.ra_pages(job, lun);
        let max = ra_pages.max(n.min(self.cfg.max_request));
        let mut ra = self.ra[job];
        let held = |c: &PageCache| {
            (p0..p1)
                .filter(|&p| c.map.contains_key(&key(lun, p)))
                .count() as u64
        };
        let held_before = held(self);
        // What the request finds is the most recently used, before read-ahead makes room.
        for p in p0..p1 {
            if let Some(&s) = self.map.get(&key(lun, p)) {
                if self.slots[s as usize].state == State::Ready {
                    self.touch(s);
                }
            }
        }
        self.async_ahead(&mut ra, lun, p0, p1, max, out);
        let held_now = held(self);
        if held_now < n {
            // (A LUN with read-ahead off, or a job advised random, reads only what is asked
            // for.)
            // (Sequential: from the page the last read ended in or the next, as Linux
            // counts it.)
            let sequential = ra_pages > 0
                && match ra.next {
                    Some(nx) => p0 == nx || p0 + 1 == nx,
                    None => p0 == 0,
                };
            if sequential {
                // A new window from here: the request and the read-ahead after it.
                ra.size = if ra.size == 0 {
                    init_window(n, max)
                } else {
                    next_window(ra.size, max)
                }
                .max(n);
                ra.start = p0;
                // (A window no larger than the request is marked at its start: the reader,
                // still in it, reads the next one ahead at once.)
                ra.async_size = if ra.size > n { ra.size - n } else { ra.size };
                let got = self.read_missing(lun, p0, p0 + ra.size, out);
                self.stats.read_ahead_pages += got.saturating_sub(n - held_now);
                self.async_ahead(&mut ra, lun, p0, p1, max, out);
            } else {
                self.read_missing(lun, p0, p1, out);
            }
        }
        self.stats.miss_pages += n - held_before;
        self.stats.hit_pages += held_before;
        ra.next = Some(p1);
        self.ra[job] = ra;
        self.wait_on(lun, p0, p1, io)
    }

    /// A block read finished: its pages are in memory. Returns the host commands that waited
    /// for it.
    pub fn read_done(&mut self, id: u32) -> Vec<u32> {
        let r = self.reqs[id as usize].take().expect("a live request");
        debug_assert!(!r.write);
        self.free_reqs.push(id);
        for k in r.key..r.key + r.pages {
            if let Some(&s) = self.map.get(&k) {
                if self.slots[s as usize].state == State::Reading(id) {
                    self.set_state(s, State::Ready);
                }
            }
        }
        r.waiters
    }

    /// Before a buffered write of `[offset, offset + len)`: its partly covered end pages the
    /// cache does not hold are read first. Returns how many block requests `io` waits for.
    pub fn write_prepare(
        &mut self,
        lun: u32,
        offset: u64,
        len: u64,
        io: u32,
        out: &mut Vec<BlockIo>,
    ) -> u32 {
        let end = offset + len;
        let (p0, p1) = (offset / PAGE, end.div_ceil(PAGE));
        let mut partial = Vec::new();
        if !offset.is_multiple_of(PAGE) {
            partial.push(p0);
        }
        if !end.is_multiple_of(PAGE) && partial.last() != Some(&(p1 - 1)) {
            partial.push(p1 - 1);
        }
        let mut waits = 0;
        for p in partial {
            self.read_missing(lun, p, p + 1, out);
            waits += self.wait_on(lun, p, p + 1, io);
        }
        waits
    }

    /// A buffered write's data is in the cache at `now`: its pages are dirty. Those that
    /// have just become so are queued for write-back (a run at a time) and counted.
    pub fn write_commit(&mut self, lun: u32, offset: u64, len: u64, now: u64) {
        let (p0, p1) = (offset / PAGE, (offset + len).div_ceil(PAGE));
        // The run of pages just made dirty, from `run` to `k`, not yet queued.
        let mut run = None;
        for p in p0..p1 {
            let k = key(lun, p);
            let newly = match self.map.get(&k).copied() {
                None => {
                    self.insert(k, State::Dirty);
                    true
                }
                Some(s) => match self.slots[s as usize].state {
                    State::Ready | State::Reading(_) => {
                        // (A page still being read is overwritten: the read's data is stale
                        // for these bytes, and the page is dirty from now on.)
                        self.set_state(s, State::Dirty);
                        true
                    }
                    State::Dirty => false,
                    State::Writeback { .. } => {
                        self.slots[s as usize].state = State::Writeback { redirtied: true };
                        false
                    }
                },
            };
            if newly {
                self.dirty_pages += 1;
                self.lun_dirty[lun as usize] += 1;
            }
            match (newly, run) {
                (true, None) => run = Some(k),
                (false, Some(a)) => {
                    self.dirty.insert_run(a, k);
                    run = None;
                }
                _ => {}
            }
        }
        if let Some(a) = run {
            self.dirty.insert_run(a, key(lun, p1));
        }
        let l = lun as usize;
        if self.dirtied_at[l].is_none() {
            self.dirtied_at[l] = Some(now);
        }
    }

    /// The clean pages of `[offset, offset + len)` of `lun` are dropped: after a direct write
    /// went past the cache (they are stale, as Linux invalidates them after an O_DIRECT
    /// write), and as a job starts (fio's `invalidate`: POSIX_FADV_DONTNEED drops clean
    /// pages). Dirty pages and those being written back stay (Linux would write them back
    /// before a direct write; not modelled). Looks through whichever is smaller, the range
    /// or the cache, dropping pages in ascending order either way.
    pub fn invalidate(&mut self, lun: u32, offset: u64, len: u64) {
        if self.map.is_empty() {
            return;
        }
        let (first, end) = (offset / PAGE, (offset + len).div_ceil(PAGE));
        let clean = |pc: &PageCache, s: u32| pc.slots[s as usize].state == State::Ready;
        if end - first > self.map.len() as u64 {
            let mut keys: Vec<u64> = self
                .map
                .iter()
                .filter(|&(&k, &s)| {
                    lun_of(k) == lun && (first..end).contains(&page_of(k)) && clean(self, s)
                })
                .map(|(&k, _)| k)
                .collect();
            keys.sort_unstable();
            for k in keys {
                self.drop_page(k);
            }
        } else {
            for p in first..end {
                let k = key(lun, p);
                if self.map.get(&k).is_some_and(|&s| clean(self, s)) {
                    self.drop_page(k);
                }
            }
        }
    }

    /// `[offset, offset + len)` of `lun` read into the cache before a job starts, untimed
    /// (fio's `pre_read`): each page it does not hold comes in clean, most recently used;
    /// those it holds are touched. A range larger than the cache leaves its last pages.
    pub fn preload(&mut self, lun: u32, offset: u64, len: u64) {
        let (first, end) = (offset / PAGE, (offset + len).div_ceil(PAGE));
        // (Only the last `capacity` pages would stay.)
        let first = first.max(end.saturating_sub(self.cfg.capacity));
        for p in first..end {
            let k = key(lun, p);
            match self.map.get(&k) {
                Some(&s) => {
                    if self.slots[s as usize].state == State::Ready {
                        self.touch(s);
                    }
                }
                None => {
                    self.insert(k, State::Ready);
                }
            }
        }
    }

    /// Dirty pages of `lun`, including those under write-back.
    pub fn lun_dirty(&self, lun: u32) -> u64 {
        self.lun_dirty[lun as usize]
    }

    /// Write back every dirty page of `lun` now, whatever the thresholds (an fsync).
    pub fn flush_lun(&mut self, lun: u32) {
        if self.lun_dirty[lun as usize] > 0 {
            self.expired[lun as usize] = true;
        }
    }

    /// Whether a writer must wait for write-back.
    pub fn over_limit(&self) -> bool {
        self.dirty_pages > self.cfg.limit
    }

    /// The flusher's wake-up at `now`: LUNs dirty for 30 s are written back whole. Returns
    /// whether anything is dirty (the flusher wakes again).
    pub fn flusher_tick(&mut self, now: u64) -> bool {
        for l in 0..self.dirtied_at.len() {
            if self.dirtied_at[l].is_some_and(|t| now >= t + EXPIRE_NS) {
                self.expired[l] = true;
            }
        }
        self.dirty_pages > 0
    }

    /// The next write-back request to send, if write-back is due and the queue has room: the
    /// longest run of dirty pages (at most `max_request`) from where the last one stopped.
    pub fn next_writeback(&mut self) -> Option<BlockIo> {
        if self.writeback_inflight >= self.cfg.writeback_depth || self.dirty.is_empty() {
            return None;
        }
        let background = self.dirty.len() > self.cfg.background;
        let any_expired = self.expired.iter().any(|&e| e);
        if !background && !any_expired {
            return None;
        }
        // From the cursor, wrapping; below the thresholds only expired LUNs' pages.
        let exp = &self.expired;
        let ok = |lun: u32| background || exp[lun as usize];
        let (first, run_end) = self
            .dirty
            .first_from(self.cursor, ok)
            .or_else(|| self.dirty.first_from(0, ok))?;
        let lun = lun_of(first);
        // The run of dirty pages from there (one LUN's), at most `max_request` of it.
        let last = (run_end - 1).min(first + self.cfg.max_request - 1);
        let id = self.new_request(first, last + 1 - first, true);
        self.dirty.remove(first, last + 1);
        for k in first..=last {
            let s = self.map[&k];
            self.slots[s as usize].state = State::Writeback { redirtied: false };
        }
        self.cursor = last + 1;
        self.writeback_inflight += 1;
        Some(BlockIo {
            id,
            lun,
            offset: page_of(first) * PAGE,
            len: (last + 1 - first) * PAGE,
            write: true,
        })
    }

    /// A write-back request finished: its pages are clean (or dirty again if written
    /// meanwhile).
    pub fn writeback_done(&mut self, id: u32) {
        let r = self.reqs[id as usize].take().expect("a live request");
        debug_assert!(r.write);
        self.free_reqs.push(id);
        self.writeback_inflight -= 1;
        for k in r.key..r.key + r.pages {
            let s = self.map[&k];
            match self.slots[s as usize].state {
                State::Writeback { redirtied: true } => {
                    self.slots[s as usize].state = State::Dirty;
                    self.dirty.insert(k);
                }
                State::Writeback { redirtied: false } => {
                    self.set_state(s, State::Ready);
                    self.dirty_pages -= 1;
                    self.lun_dirty[lun_of(k) as usize] -= 1;
                    self.stats.written_back_pages += 1;
                }
                st => unreachable!("page under write-back found {st:?}"),
            }
        }
        // A LUN with nothing dirty left starts its 30 s again when next written.
        let lun = lun_of(r.key) as usize;
        if self.lun_dirty[lun] == 0 {
            self.dirtied_at[lun] = None;
            self.expired[lun] = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs hold what a plain set of keys would, through random dirtying (runs, lone
    /// pages, both sides of a LUN's edge) and write-backs of runs from a cursor, and answer
    /// where write-back starts as a walk of the set would.
    #[test]
    fn dirty_runs_are_a_set_of_keys() {
        let mut rng = raidlab_workload::Rng::new(5);
        let (mut runs, mut set) = (DirtyRuns::default(), std::collections::BTreeSet::new());
        // (LUN 1's first pages follow LUN 0's last keys: a run must not cross.)
        let edge = key(1, 0);
        for round in 0..20_000 {
            if rng.below(3) > 0 {
                let base = [0, edge - 40, key(2, 5000)][rng.below(3) as usize];
                let k = base + rng.below(80);
                // A run of up to 4 keys none of which is held, in k's LUN.
                let mut b = k;
                while b < k + 1 + rng.below(4) && !set.contains(&b) && lun_of(b) == lun_of(k) {
                    b += 1;
                }
                if b > k {
                    if b == k + 1 && rng.below(2) == 0 {
                        runs.insert(k);
                    } else {
                        runs.insert_run(k, b);
                    }
                    set.extend(k..b);
                }
            } else {
                // (Mostly among the keys, at a run's edges too; now and then anywhere.)
                let from = match rng.below(4) {
                    0 => rng.below(key(3, 0)),
                    b => [0, edge - 40, key(2, 5000)][b as usize - 1] + rng.below(80),
                };
                let ok = |lun: u32| lun != 1 || round % 2 == 0;
                let want = set.range(from..).copied().find(|&k| ok(lun_of(k)));
                let got = runs.first_from(from, ok);
                assert_eq!(got.map(|g| g.0), want, "from {from}");
                if let Some((first, end)) = got {
                    // The run: consecutive keys of one LUN, all held, the next not held.
                    assert!((first..end).all(|k| set.contains(&k) && lun_of(k) == lun_of(first)));
                    assert!(!set.contains(&end) || page_of(end) == 0);
                    let last = (end - 1).min(first + rng.below(8));
                    runs.remove(first, last + 1);
                    for k in first..=last {
                        set.remove(&k);
                    }
                }
            }
            assert_eq!(runs.len(), set.len() as u64);
            assert_eq!(runs.is_empty(), set.is_empty());
        }
        for k in 0..80 {
            for b in [0, edge - 40, key(2, 5000)] {
                assert_eq!(runs.contains(b + k), set.contains(&(b + k)));
            }
        }
        // Runs that meet are one; none crosses the LUNs' edge.
        for w in runs.runs.iter().collect::<Vec<_>>().windows(2) {
            assert!(w[0].1 < w[1].0 || page_of(*w[1].0) == 0, "{w:?}");
        }
        assert!(runs.runs.iter().all(|(&s, &e)| lun_of(s) == lun_of(e - 1)));
    }

    fn cache(capacity: u64, ra: u64) -> PageCache {
        PageCache::new(PageCacheCfg {
            capacity,
            read_ahead: vec![ra, ra],
            max_request: 128,
            background: capacity / 10,
            limit: capacity / 5,
            writeback_depth: 4,
            copy_ns_per_byte: 0.5,
        })
    }

    #[test]
    fn window_sizes_ramp_up_as_linux_does() {
        // 128 KiB of read-ahead (32 pages): a 4 KiB reader starts with 4 pages, then 16, 32.
        assert_eq!(init_window(1, 32), 4);
        assert_eq!(next_window(4, 32), 8);
        assert_eq!(next_window(8, 32), 16);
        assert_eq!(next_window(16, 32), 32);
        assert_eq!(next_window(32, 32), 32);
        // A request of a quarter of the maximum or more: the whole window at once.
        assert_eq!(init_window(8, 32), 16);
        assert_eq!(init_window(16, 32), 32);
        assert_eq!(init_window(3, 512), 16);
    }

    #[test]
    fn a_sequential_reader_reads_ahead_and_then_finds_its_pages() {
        let mut c = cache(10_000, 32);
        c.new_group(1);
        let mut out = Vec::new();
        // The first 4 KiB read at the start of the file: a window of 4 pages, one request.
        let w = c.read(0, 0, 0, 4096, 7, &mut out);
        assert_eq!(w, 1);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].offset, out[0].len), (0, 4 * 4096));
        let waiters = c.read_done(out[0].id);
        assert_eq!(waiters, vec![7]);
        // The next page is in memory; it is the marker, so the next window (8 pages) goes out.
        out.clear();
        assert_eq!(c.read(0, 0, 4096, 4096, 8, &mut out), 0);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].offset, out[0].len), (4 * 4096, 8 * 4096));
        // Reading on through the window waits for that request only once it gets there.
        let (mut total, mut reads) = (0u64, 0);
        let mut pending: Vec<BlockIo> = out.clone();
        for p in 2..200u64 {
            out.clear();
            let w = c.read(0, 0, p * 4096, 4096, 100 + p as u32, &mut out);
            pending.extend(out.iter().copied());
            if w > 0 {
                reads += 1;
            }
            // Requests finish before the reader comes back.
            for b in pending.drain(..) {
                total += b.len;
                c.read_done(b.id);
            }
        }
        // The reader always found its pages (waited only on the request already in flight
        // the moment it asked), and the windows grew to the 32-page maximum.
        assert_eq!(reads, 0, "the read-ahead kept ahead of the reader");
        assert!(total >= 190 * 4096);
        assert!(c.stats.read_ahead_pages > 150);
    }

    #[test]
    fn a_read_larger_than_the_read_ahead_goes_in_windows_of_the_largest_request() {
        // Read-ahead 32 pages, requests of up to 128: a reader asking for 128 pages at a
        // time gets a window of 128 and the next 128 ahead, never its whole buffer at once.
        let mut c = cache(100_000, 32);
        c.new_group(1);
        assert_eq!(c.read_step(0, 0), 128 * 4096);
        let mut out = Vec::new();
        assert_eq!(c.read(0, 0, 0, 128 * 4096, 1, &mut out), 1);
        let reqs: Vec<(u64, u64)> = out
            .iter()
            .map(|b| (b.offset / 4096, b.len / 4096))
            .collect();
        assert_eq!(reqs, vec![(0, 128), (128, 128)]);
    }

    /// A job's advice as Linux takes it: a sequential reader advised sequential reads
    /// ahead up to twice the LUN's read-ahead, one advised random reads each page it asks
    /// for and nothing more; without advice, up to the LUN's.
    #[test]
    fn advice_sets_how_far_a_reader_reads_ahead() {
        let run = |advice: ReadAdvice| {
            let mut c = cache(10_000, 32);
            c.new_group(1);
            c.advise(0, advice);
            let (mut largest, mut requests) = (0u64, 0u32);
            let mut out = Vec::new();
            for p in 0..400u64 {
                out.clear();
                c.read(0, 0, p * 4096, 4096, p as u32, &mut out);
                for b in &out {
                    largest = largest.max(b.len / 4096);
                    requests += 1;
                    c.read_done(b.id);
                }
            }
            (
                largest,
                requests,
                c.stats.read_ahead_pages,
                c.read_step(0, 0),
            )
        };
        let (normal, sequential, random) = (
            run(ReadAdvice::Normal),
            run(ReadAdvice::Sequential),
            run(ReadAdvice::Random),
        );
        assert_eq!(normal.0, 32, "{normal:?}");
        assert_eq!(sequential.0, 64, "{sequential:?}");
        assert!(sequential.1 < normal.1, "{sequential:?} {normal:?}");
        assert_eq!(random, (1, 400, 0, 128 * 4096));
        assert_eq!(sequential.3, 128 * 4096);
    }

    #[test]
    fn random_reads_read_only_what_they_ask_for() {
        let mut c = cache(10_000, 32);
        c.new_group(1);
        let mut out = Vec::new();
        for (i, p) in [900u64, 17, 5000, 333].iter().enumerate() {
            out.clear();
            assert_eq!(c.read(0, 0, p * 4096 + 512, 8192, i as u32, &mut out), 1);
            // 8 KiB at an offset inside a page covers three pages.
            assert_eq!(out.len(), 1);
            assert_eq!((out[0].offset, out[0].len), (p * 4096, 3 * 4096));
            c.read_done(out[0].id);
        }
        assert_eq!(c.stats.read_ahead_pages, 0);
        // Read again: all in memory.
        out.clear();
        assert_eq!(c.read(0, 0, 17 * 4096, 4096, 9, &mut out), 0);
        assert!(out.is_empty());
    }

    #[test]
    fn a_full_cache_evicts_the_least_recently_used_clean_page() {
        let mut c = cache(20, 1);
        c.new_group(1);
        let mut out = Vec::new();
        for p in 0..20u64 {
            c.read(0, 1, (100 + 2 * p) * 4096, 4096, 0, &mut out);
        }
        for b in out.drain(..) {
            c.read_done(b.id);
        }
        assert_eq!(c.pages(), 20);
        // Touch the oldest page, then read a new one: the second oldest goes.
        c.read(0, 1, 100 * 4096, 4096, 0, &mut out);
        assert!(out.is_empty());
        c.read(0, 1, 999 * 4096, 4096, 0, &mut out);
        assert_eq!(c.pages(), 20);
        assert!(c.map.contains_key(&key(1, 100)));
        assert!(!c.map.contains_key(&key(1, 102)));
    }

    #[test]
    fn dirty_pages_are_written_back_in_runs_from_the_cursor_over_the_threshold() {
        let mut c = cache(1000, 32); // background 100 pages, limit 200
        c.new_group(1);
        // 80 dirty pages: under the background threshold, nothing is written.
        c.write_commit(0, 0, 80 * 4096, 0);
        assert_eq!(c.next_writeback(), None);
        // 110 more elsewhere: 190 dirty, under the limit; write-back starts in offset order
        // and goes on while what is not yet under write-back exceeds the threshold.
        c.write_commit(0, 1000 * 4096, 110 * 4096, 1);
        assert!(!c.over_limit());
        let got: Vec<BlockIo> = std::iter::from_fn(|| c.next_writeback()).collect();
        let runs: Vec<(u64, u64)> = got.iter().map(|b| (b.offset, b.len)).collect();
        assert_eq!(runs, vec![(0, 80 * 4096), (1000 * 4096, 110 * 4096)]);
        for b in &got {
            c.writeback_done(b.id);
        }
        assert_eq!(c.dirty_pages, 0);
        // 300 pages on the other LUN: over the limit, a writer waits; write-back sends
        // requests of at most 128 pages until 44 are left, under the threshold.
        c.write_commit(1, 0, 300 * 4096, 2);
        assert!(c.over_limit());
        let got: Vec<BlockIo> = std::iter::from_fn(|| c.next_writeback()).collect();
        let runs: Vec<(u32, u64, u64)> = got.iter().map(|b| (b.lun, b.offset, b.len)).collect();
        assert_eq!(runs, vec![(1, 0, 128 * 4096), (1, 128 * 4096, 128 * 4096)]);
        assert!(
            c.over_limit(),
            "pages under write-back still count against the limit"
        );
        c.writeback_done(got[0].id);
        assert!(!c.over_limit());
    }

    #[test]
    fn dirty_data_older_than_30_s_is_written_back_under_the_threshold() {
        let mut c = cache(1000, 32);
        c.new_group(1);
        c.write_commit(0, 0, 10 * 4096, 1_000_000_000);
        assert!(c.flusher_tick(5_000_000_000));
        assert_eq!(c.next_writeback(), None);
        assert!(c.flusher_tick(31_000_000_000));
        let b = c.next_writeback().expect("expired");
        assert_eq!((b.offset, b.len, b.write), (0, 10 * 4096, true));
        c.writeback_done(b.id);
        assert_eq!(c.dirty_pages, 0);
        assert!(!c.flusher_tick(36_000_000_000));
    }

    #[test]
    fn a_partial_page_write_reads_the_page_first_and_a_rewrite_under_write_back_stays_dirty() {
        let mut c = cache(1000, 32);
        c.new_group(1);
        let mut out = Vec::new();
        // 512 bytes into page 3: read it first.
        assert_eq!(c.write_prepare(0, 3 * 4096 + 512, 512, 5, &mut out), 1);
        assert_eq!((out[0].offset, out[0].len), (3 * 4096, 4096));
        assert_eq!(c.read_done(out[0].id), vec![5]);
        c.write_commit(0, 3 * 4096 + 512, 512, 0);
        // Whole pages need no read.
        out.clear();
        assert_eq!(c.write_prepare(0, 8 * 4096, 8192, 6, &mut out), 0);
        assert!(out.is_empty());
        // Expire, start write-back, write the page again meanwhile: still dirty after.
        c.flusher_tick(EXPIRE_NS);
        let b = c.next_writeback().unwrap();
        c.write_commit(0, 3 * 4096, 4096, EXPIRE_NS);
        c.writeback_done(b.id);
        assert_eq!(c.dirty_pages, 1);
        assert_eq!(c.dirty.len(), 1);
    }
}
