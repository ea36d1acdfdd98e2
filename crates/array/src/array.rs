//! An assembled array: logical reads and writes turned into member I/O, parity, degraded
//! operation, member failure handling, the write-intent bitmap, resync, rebuild and scrub.
//!
//! Parity levels work one *row* (stripe) at a time over a column range of the chunk; each
//! request locks its rows so concurrent writers to one stripe serialize. Phase 1 (pre-reads)
//! and phase 2 (writes) of all the request's rows each run as one parallel batch over the
//! members. A member I/O error marks the member faulty and the request is retried, now in
//! degraded mode; more failures than the level survives fail the I/O, never return wrong data.

use crate::bitmap::Bitmap;
use crate::error::ArrayError;
use crate::layout::{Geometry, Level, Row};
use crate::member::Member;
use crate::pool::{Dev, Op, Pool};
use crate::pq;
use crate::superblock::{ArrayDesc, SlotState, Superblock, BITMAP_OFFSET, ROLE_SPARE};
use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotRt {
    pub state: SlotState,
    /// Logical bytes already rebuilt (for `Rebuilding`).
    pub checkpoint: u64,
}

/// Leaf arrays keep their metadata on their members.
pub struct Leaf {
    pub members: Vec<Option<Arc<Member>>>,
    pub spares: Vec<Arc<Member>>,
    /// The superblock every member shares, less its own `dev_uuid` and role.
    pub sb: Mutex<Superblock>,
    /// Per member, its device uuid.
    pub dev_uuids: Vec<[u8; 16]>,
    pub bitmap: Bitmap,
}

pub enum Backing {
    Leaf(Leaf),
    /// Children arrays, by role; their leaves hold this array's description in `parents`.
    Nested(Vec<Option<Arc<Array>>>),
}

pub struct Array {
    pub geo: Geometry,
    pub uuid: [u8; 16],
    pub labels: Vec<String>,
    pub backing: Backing,
    /// How many enclosing arrays this one has (0 at the top).
    pub depth: usize,
    pool: Pool,
    slots: RwLock<Vec<SlotRt>>,
    locks: StripeLocks,
    dirty: AtomicBool,
    failed: AtomicBool,
    meta_lock: Mutex<()>,
}

impl Dev for Member {
    fn read(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.read_data(buf, offset)
    }
    fn write(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.write_data(buf, offset)
    }
    fn flush(&self) -> io::Result<()> {
        Member::flush(self)
    }
}

impl Dev for Array {
    fn read(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.read_at(buf, offset)
    }
    fn write(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.write_at(buf, offset)
    }
    fn flush(&self) -> io::Result<()> {
        Array::flush(self)
    }
}

/// Row (or chunk) locks: a request takes all of its units at once, so there is no lock order
/// to get wrong.
struct StripeLocks {
    held: Mutex<HashSet<u64>>,
    freed: Condvar,
}

struct LockGuard<'a> {
    locks: &'a StripeLocks,
    units: Vec<u64>,
}

impl StripeLocks {
    fn new() -> Self {
        StripeLocks { held: Mutex::new(HashSet::new()), freed: Condvar::new() }
    }
    fn lock(&self, units: impl Iterator<Item = u64>) -> LockGuard<'_> {
        let units: Vec<u64> = units.collect();
        let mut held = self.held.lock().unwrap();
        while units.iter().any(|u| held.contains(u)) {
            held = self.freed.wait(held).unwrap();
        }
        held.extend(units.iter().copied());
        LockGuard { locks: self, units }
    }
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        let mut held = self.locks.held.lock().unwrap();
        for u in &self.units {
            held.remove(u);
        }
        self.locks.freed.notify_all();
    }
}

fn eio(msg: String) -> io::Error {
    io::Error::other(msg)
}

/// What a row write does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Every data block of the row is written whole: parity from the new data, no reads.
    Full,
    /// Read old data and old parity of the touched blocks, fold the difference into parity.
    ReadModifyWrite,
    /// Read the untouched data, compute parity from the whole row.
    ReconstructWrite,
    /// Degraded: read everything readable, rebuild what is missing, then compute.
    Degraded,
}

struct Seg {
    idx: usize,
    a: u64,
    b: u64,
    buf_off: usize,
}

struct RowJob {
    row: u64,
    info: Row,
    lo: u64,
    hi: u64,
    segs: Vec<Seg>,
    strategy: Strategy,
    data: Vec<Option<Vec<u8>>>,
    p: Option<Vec<u8>>,
    q: Option<Vec<u8>>,
}

impl Array {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        geo: Geometry,
        uuid: [u8; 16],
        labels: Vec<String>,
        backing: Backing,
        devs: Vec<Option<Arc<dyn Dev>>>,
        slots: Vec<SlotRt>,
        dirty: bool,
        depth: usize,
    ) -> Array {
        Array {
            geo,
            uuid,
            labels,
            backing,
            depth,
            pool: Pool::new(devs),
            slots: RwLock::new(slots),
            locks: StripeLocks::new(),
            dirty: AtomicBool::new(dirty),
            failed: AtomicBool::new(false),
            meta_lock: Mutex::new(()),
        }
    }

    pub fn capacity(&self) -> u64 {
        self.geo.capacity()
    }

    pub fn slots(&self) -> Vec<SlotRt> {
        self.slots.read().unwrap().clone()
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::SeqCst)
    }

    /// Slots not usable for reading (faulty, missing, or rebuilding).
    pub fn degraded_count(&self) -> u32 {
        self.slots.read().unwrap().iter().filter(|s| s.state != SlotState::Active).count() as u32
    }

    fn lost_count(slots: &[SlotRt]) -> u32 {
        slots.iter().filter(|s| matches!(s.state, SlotState::Faulty | SlotState::Missing)).count() as u32
    }

    /// Whether slot `m` holds valid data for logical position range ending at `end`.
    fn readable(slots: &[SlotRt], m: u32, end: u64) -> bool {
        let s = slots[m as usize];
        match s.state {
            SlotState::Active => true,
            SlotState::Rebuilding => end <= s.checkpoint,
            _ => false,
        }
    }

    fn writable(slots: &[SlotRt], m: u32) -> bool {
        matches!(slots[m as usize].state, SlotState::Active | SlotState::Rebuilding)
    }

    fn check_failed(&self) -> io::Result<()> {
        if self.failed.load(Ordering::SeqCst) {
            return Err(eio(format!(
                "{} array {} has failed: more members failed than it survives ({})",
                self.geo.level.name(),
                crate::superblock::uuid_string(&self.uuid),
                self.geo.redundancy()
            )));
        }
        Ok(())
    }

    /// A member I/O failed: mark it faulty (in memory and in the superblocks), md-style.
    pub fn fail_member(&self, m: usize, why: &str) {
        let newly = {
            let mut slots = self.slots.write().unwrap();
            if matches!(slots[m].state, SlotState::Faulty | SlotState::Missing) {
                false
            } else {
                slots[m].state = SlotState::Faulty;
                true
            }
        };
        if !newly {
            return;
        }
        eprintln!(
            "raidlab: member {} of {} array failed ({why}); continuing degraded",
            self.labels.get(m).map(String::as_str).unwrap_or("?"),
            self.geo.level.name()
        );
        let lost = Self::lost_count(&self.slots.read().unwrap());
        let fatal = match self.geo.level {
            Level::Raid1 | Level::Raid10 => !self.mirror_survives(),
            _ => lost > self.geo.redundancy(),
        };
        if fatal {
            self.failed.store(true, Ordering::SeqCst);
        }
        let _ = self.persist();
    }

    /// RAID 1/10: does every logical chunk still have a copy on a non-failed member?
    pub fn mirror_survives(&self) -> bool {
        let slots = self.slots.read().unwrap();
        let failed: Vec<u32> = (0..slots.len() as u32)
            .filter(|&m| matches!(slots[m as usize].state, SlotState::Faulty | SlotState::Missing))
            .collect();
        self.geo.md.survives(&failed)
    }

    // ---------------------------------------------------------------- reads

    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.bounds(buf.len(), offset)?;
        if buf.is_empty() {
            return Ok(());
        }
        match self.geo.level {
            Level::Raid4 | Level::Raid5 | Level::Raid6 => self.read_parity(buf, offset),
            _ => self.read_chunks(buf, offset),
        }
    }

    fn bounds(&self, len: usize, offset: u64) -> io::Result<()> {
        if offset.checked_add(len as u64).is_none_or(|e| e > self.capacity()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("I/O at {offset}+{len} is past the array's end ({} bytes)", self.capacity()),
            ));
        }
        self.check_failed()
    }

    fn segments(&self, offset: u64, len: usize) -> Vec<(u64, u64, u64, usize, usize)> {
        // (unit, within-unit start, length, buf offset) where unit = row (parity) or chunk.
        let unit = match self.geo.level {
            Level::Raid4 | Level::Raid5 | Level::Raid6 => self.geo.stripe_data_bytes(),
            _ => self.geo.chunk,
        };
        let mut out = Vec::new();
        let mut pos = offset;
        let end = offset + len as u64;
        while pos < end {
            let u = pos / unit;
            let within = pos % unit;
            let chunk_in = within % self.geo.chunk;
            let n = (self.geo.chunk - chunk_in).min(end - pos);
            out.push((u, within, n, (pos - offset) as usize, (within / self.geo.chunk) as usize));
            pos += n;
        }
        out
    }

    fn read_chunks(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let segs = self.segments(offset, buf.len());
        let mirrored = matches!(self.geo.level, Level::Raid1 | Level::Raid10);
        let _guard = if mirrored && self.degraded_count() > 0 {
            Some(self.locks.lock(segs.iter().map(|s| s.0)))
        } else {
            None
        };
        for _attempt in 0..=self.geo.members {
            self.check_failed()?;
            let slots = self.slots();
            let mut ops = Vec::with_capacity(segs.len());
            for &(c, within, n, boff, _) in &segs {
                let copies = self.geo.chunk_copies(c);
                let k = copies.len();
                let start = if self.geo.level == Level::Raid1 { (c as usize) % k } else { 0 };
                let pick = (0..k)
                    .map(|j| copies[(start + j) % k])
                    .find(|x| Self::readable(&slots, x.member, (c + 1) * self.geo.chunk));
                let Some(x) = pick else {
                    return Err(eio(format!(
                        "no readable copy of logical chunk {c} of the {} array: every member holding it has failed",
                        self.geo.level.name()
                    )));
                };
                ops.push(Op::read(x.member as usize, x.offset + within % self.geo.chunk, &mut buf[boff..boff + n as usize]));
            }
            let errs = self.pool.run(ops);
            if errs.is_empty() {
                return Ok(());
            }
            for (m, e) in errs {
                self.fail_member(m, &e.to_string());
            }
        }
        Err(eio("read failed on every attempt".into()))
    }

    fn read_parity(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let segs = self.segments(offset, buf.len());
        let sd = self.geo.stripe_data_bytes();
        let mut guard = if self.degraded_count() > 0 { Some(self.locks.lock(unique(segs.iter().map(|s| s.0)))) } else { None };
        for _attempt in 0..=self.geo.members {
            self.check_failed()?;
            let slots = self.slots();
            let mut ops = Vec::new();
            let mut recon: Vec<(u64, usize, u64, u64, usize)> = Vec::new();
            for &(row, within, n, boff, idx) in &segs {
                let info = self.geo.row(row);
                let m = info.data[idx];
                let a = within % self.geo.chunk;
                if Self::readable(&slots, m, (row + 1) * sd) {
                    ops.push(Op::read(m as usize, row * self.geo.chunk + a, &mut buf[boff..boff + n as usize]));
                } else {
                    recon.push((row, idx, a, a + n, boff));
                }
            }
            let mut errs = self.pool.run(ops);
            if errs.is_empty() && !recon.is_empty() {
                if guard.is_none() {
                    guard = Some(self.locks.lock(unique(segs.iter().map(|s| s.0))));
                }
                // Group missing pieces by row: one reconstruction per row over their column span.
                let mut i = 0;
                while i < recon.len() && errs.is_empty() {
                    let row = recon[i].0;
                    let mut j = i;
                    let (mut lo, mut hi) = (u64::MAX, 0);
                    while j < recon.len() && recon[j].0 == row {
                        lo = lo.min(recon[j].2);
                        hi = hi.max(recon[j].3);
                        j += 1;
                    }
                    let info = self.geo.row(row);
                    match self.reconstruct(row, &info, lo, hi, &slots) {
                        Ok(blocks) => {
                            for &(_, idx, a, b, boff) in &recon[i..j] {
                                let src = blocks.data[idx].as_ref().unwrap();
                                buf[boff..boff + (b - a) as usize].copy_from_slice(&src[(a - lo) as usize..(b - lo) as usize]);
                            }
                        }
                        Err(ReconError::Io(e)) => errs = e,
                        Err(ReconError::Lost(msg)) => return Err(eio(msg)),
                    }
                    i = j;
                }
            }
            if errs.is_empty() {
                return Ok(());
            }
            for (m, e) in errs {
                self.fail_member(m, &e.to_string());
            }
        }
        drop(guard);
        Err(eio("read failed on every attempt".into()))
    }

    /// Read every readable block of a row over [lo, hi) and rebuild the missing ones.
    fn reconstruct(&self, row: u64, info: &Row, lo: u64, hi: u64, slots: &[SlotRt]) -> Result<Blocks, ReconError> {
        let len = (hi - lo) as usize;
        let end = (row + 1) * self.geo.stripe_data_bytes();
        let off = row * self.geo.chunk + lo;
        let mut data: Vec<Option<Vec<u8>>> =
            info.data.iter().map(|&m| Self::readable(slots, m, end).then(|| vec![0u8; len])).collect();
        let mut p = Self::readable(slots, info.p, end).then(|| vec![0u8; len]);
        let mut q = info.q.and_then(|qm| Self::readable(slots, qm, end).then(|| vec![0u8; len]));
        let mut ops = Vec::new();
        for (i, d) in data.iter_mut().enumerate() {
            if let Some(b) = d {
                ops.push(Op::read(info.data[i] as usize, off, b));
            }
        }
        if let Some(b) = p.as_mut() {
            ops.push(Op::read(info.p as usize, off, b));
        }
        if let (Some(b), Some(qm)) = (q.as_mut(), info.q) {
            ops.push(Op::read(qm as usize, off, b));
        }
        let errs = self.pool.run(ops);
        if !errs.is_empty() {
            return Err(ReconError::Io(errs));
        }
        let mut blocks = Blocks { data, p, q };
        self.recover_blocks(info, &mut blocks, len).map_err(ReconError::Lost)?;
        Ok(blocks)
    }

    /// Fill in missing blocks of a row (data in logical order) from parity.
    fn recover_blocks(&self, info: &Row, b: &mut Blocks, len: usize) -> Result<(), String> {
        let missing_data = b.data.iter().any(|d| d.is_none());
        let missing_parity = b.p.is_none() || (info.q.is_some() && b.q.is_none());
        if !missing_data && !missing_parity {
            return Ok(());
        }
        let mut syn: Vec<Option<Vec<u8>>> = info.syndrome.iter().map(|&i| b.data[i].take()).collect();
        let res = if info.q.is_some() {
            pq::recover(&mut syn, &mut b.p, Some(&mut b.q), len)
        } else {
            pq::recover(&mut syn, &mut b.p, None, len)
        };
        for (k, &i) in info.syndrome.iter().enumerate() {
            b.data[i] = syn[k].take();
        }
        res.map_err(|e| format!("row {} of the {} array cannot be read: {e}", info_row_label(info), self.geo.level.name()))
    }

    // ---------------------------------------------------------------- writes

    pub fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.bounds(buf.len(), offset)?;
        if buf.is_empty() {
            return Ok(());
        }
        self.mark_dirty()?;
        if let Backing::Leaf(leaf) = &self.backing {
            leaf.bitmap.start_write(offset, buf.len() as u64, |d| self.persist_bitmap(leaf, d))?;
        }
        let res = match self.geo.level {
            Level::Raid4 | Level::Raid5 | Level::Raid6 => self.write_parity(buf, offset),
            _ => self.write_chunks(buf, offset),
        };
        if let Backing::Leaf(leaf) = &self.backing {
            leaf.bitmap.end_write(offset, buf.len() as u64);
            let now = Instant::now();
            if leaf.bitmap.clear_due(now) {
                let _ = self.clear_bitmap(leaf, now);
            }
        }
        res
    }

    fn write_chunks(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let segs = self.segments(offset, buf.len());
        let mirrored = matches!(self.geo.level, Level::Raid1 | Level::Raid10);
        let _guard = mirrored.then(|| self.locks.lock(segs.iter().map(|s| s.0)));
        self.check_failed()?;
        let slots = self.slots();
        let mut ops = Vec::new();
        for &(c, within, n, boff, _) in &segs {
            let mut any = false;
            for x in self.geo.chunk_copies(c) {
                if Self::writable(&slots, x.member) {
                    any = true;
                    ops.push(Op::write(x.member as usize, x.offset + within % self.geo.chunk, &buf[boff..boff + n as usize]));
                }
            }
            if !any {
                return Err(eio(format!(
                    "no writable copy of logical chunk {c} of the {} array: every member holding it has failed",
                    self.geo.level.name()
                )));
            }
        }
        let errs = self.pool.run(ops);
        if errs.is_empty() {
            return Ok(());
        }
        for (m, e) in &errs {
            self.fail_member(*m, &e.to_string());
        }
        // Mirrors: the write stands if every chunk still reached one good copy.
        self.check_failed()?;
        if !mirrored {
            return Err(eio(format!("write to {} array failed: {}", self.geo.level.name(), errs[0].1)));
        }
        let slots = self.slots();
        for &(c, ..) in &segs {
            if !self.geo.chunk_copies(c).iter().any(|x| Self::writable(&slots, x.member)) {
                return Err(eio(format!("write of logical chunk {c} reached no surviving copy")));
            }
        }
        Ok(())
    }

    fn plan_rows(&self, buf_len: usize, offset: u64, slots: &[SlotRt], force_degraded: bool) -> Vec<RowJob> {
        let sd = self.geo.stripe_data_bytes();
        let chunk = self.geo.chunk;
        let mut jobs: Vec<RowJob> = Vec::new();
        for (row, within, n, boff, idx) in self.segments(offset, buf_len) {
            let a = within % chunk;
            if jobs.last().is_none_or(|j| j.row != row) {
                let info = self.geo.row(row);
                let nd = info.data.len();
                jobs.push(RowJob {
                    row,
                    info,
                    lo: u64::MAX,
                    hi: 0,
                    segs: Vec::new(),
                    strategy: Strategy::Full,
                    data: vec![None; nd],
                    p: None,
                    q: None,
                });
            }
            let j = jobs.last_mut().unwrap();
            j.lo = j.lo.min(a);
            j.hi = j.hi.max(a + n);
            j.segs.push(Seg { idx, a, b: a + n, buf_off: boff });
        }
        for j in &mut jobs {
            let nd = j.info.data.len();
            let end = (j.row + 1) * sd;
            let full = j.segs.len() == nd && j.segs.iter().all(|s| s.a == 0 && s.b == chunk);
            let all_readable = j.info.data.iter().all(|&m| Self::readable(slots, m, end))
                && Self::readable(slots, j.info.p, end)
                && j.info.q.is_none_or(|q| Self::readable(slots, q, end));
            j.strategy = if full {
                Strategy::Full
            } else if force_degraded || !all_readable {
                Strategy::Degraded
            } else {
                // md's handle_stripe_dirtying: count the pre-reads each way, prefer the fewer.
                let rmw = j.segs.len() + j.info.q.map_or(1, |_| 2);
                let rcw = (0..nd).filter(|&i| !j.covers(i)).count();
                if rmw < rcw {
                    Strategy::ReadModifyWrite
                } else {
                    Strategy::ReconstructWrite
                }
            };
        }
        jobs
    }

    fn write_parity(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let sd = self.geo.stripe_data_bytes();
        let _guard = self.locks.lock(unique(self.segments(offset, buf.len()).iter().map(|s| s.0)));
        let mut force_degraded = false;
        for _attempt in 0..=self.geo.members {
            self.check_failed()?;
            let slots = self.slots();
            let mut jobs = self.plan_rows(buf.len(), offset, &slots, force_degraded);
            // Phase 1: pre-reads of every row, in one parallel batch.
            let mut ops = Vec::new();
            for j in &mut jobs {
                let len = (j.hi - j.lo) as usize;
                let off = j.row * self.geo.chunk + j.lo;
                let end = (j.row + 1) * sd;
                match j.strategy {
                    Strategy::Full => {}
                    Strategy::ReadModifyWrite => {
                        for s in &j.segs {
                            j.data[s.idx] = Some(vec![0u8; len]);
                        }
                        j.p = Some(vec![0u8; len]);
                        if j.info.q.is_some() {
                            j.q = Some(vec![0u8; len]);
                        }
                    }
                    Strategy::ReconstructWrite => {
                        for i in 0..j.info.data.len() {
                            if !j.covers(i) {
                                j.data[i] = Some(vec![0u8; len]);
                            }
                        }
                    }
                    Strategy::Degraded => {
                        for (i, &m) in j.info.data.iter().enumerate() {
                            if Self::readable(&slots, m, end) {
                                j.data[i] = Some(vec![0u8; len]);
                            }
                        }
                        if Self::readable(&slots, j.info.p, end) {
                            j.p = Some(vec![0u8; len]);
                        }
                        if j.info.q.is_some_and(|q| Self::readable(&slots, q, end)) {
                            j.q = Some(vec![0u8; len]);
                        }
                    }
                }
                for (i, d) in j.data.iter_mut().enumerate() {
                    if let Some(b) = d {
                        ops.push(Op::read(j.info.data[i] as usize, off, b));
                    }
                }
                if let Some(b) = j.p.as_mut() {
                    ops.push(Op::read(j.info.p as usize, off, b));
                }
                if let (Some(b), Some(q)) = (j.q.as_mut(), j.info.q) {
                    ops.push(Op::read(q as usize, off, b));
                }
            }
            let errs = self.pool.run(ops);
            if !errs.is_empty() {
                for (m, e) in errs {
                    self.fail_member(m, &e.to_string());
                }
                force_degraded = true;
                continue;
            }
            // Compute.
            let mut full_parity: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
            for j in &mut jobs {
                let len = (j.hi - j.lo) as usize;
                match j.strategy {
                    Strategy::Full => {
                        let refs: Vec<&[u8]> = j
                            .info
                            .syndrome
                            .iter()
                            .map(|&i| {
                                let s = j.segs.iter().find(|s| s.idx == i).unwrap();
                                &buf[s.buf_off..s.buf_off + len]
                            })
                            .collect();
                        let mut p = vec![0u8; len];
                        if j.info.q.is_some() {
                            let mut q = vec![0u8; len];
                            pq::gen_pq(&refs, &mut p, &mut q);
                            full_parity.push((p, Some(q)));
                        } else {
                            pq::gen_p(&refs, &mut p);
                            full_parity.push((p, None));
                        }
                    }
                    Strategy::ReadModifyWrite => {
                        let p = j.p.as_mut().unwrap();
                        for s in &j.segs {
                            let old = j.data[s.idx].as_ref().unwrap();
                            let r = (s.a - j.lo) as usize..(s.b - j.lo) as usize;
                            let new = &buf[s.buf_off..s.buf_off + (s.b - s.a) as usize];
                            match j.q.as_mut() {
                                Some(q) => {
                                    let k = j.info.syndrome.iter().position(|&x| x == s.idx).unwrap();
                                    pq::update_pq(k, &old[r.clone()], new, &mut p[r.clone()], &mut q[r]);
                                }
                                None => pq::update_p(&old[r.clone()], new, &mut p[r]),
                            }
                        }
                    }
                    Strategy::ReconstructWrite | Strategy::Degraded => {
                        if j.strategy == Strategy::Degraded {
                            // Rebuild missing blocks that the write does not wholly replace.
                            let need = (0..j.info.data.len()).any(|i| j.data[i].is_none() && !j.covers(i));
                            if need {
                                let mut b = Blocks { data: std::mem::take(&mut j.data), p: j.p.take(), q: j.q.take() };
                                let r = self.recover_blocks(&j.info, &mut b, len);
                                j.data = b.data;
                                if let Err(msg) = r {
                                    return Err(eio(msg));
                                }
                            }
                        }
                        for i in 0..j.info.data.len() {
                            if j.data[i].is_none() {
                                j.data[i] = Some(vec![0u8; len]);
                            }
                        }
                        for s in &j.segs {
                            let d = j.data[s.idx].as_mut().unwrap();
                            d[(s.a - j.lo) as usize..(s.b - j.lo) as usize]
                                .copy_from_slice(&buf[s.buf_off..s.buf_off + (s.b - s.a) as usize]);
                        }
                        let refs: Vec<&[u8]> = j.info.syndrome.iter().map(|&i| j.data[i].as_deref().unwrap()).collect();
                        let mut p = vec![0u8; len];
                        if j.info.q.is_some() {
                            let mut q = vec![0u8; len];
                            pq::gen_pq(&refs, &mut p, &mut q);
                            j.q = Some(q);
                        } else {
                            pq::gen_p(&refs, &mut p);
                        }
                        j.p = Some(p);
                    }
                }
            }
            // Phase 2: writes of every row, in one parallel batch.
            let mut ops = Vec::new();
            let mut fp = full_parity.iter();
            for j in &jobs {
                let off = j.row * self.geo.chunk + j.lo;
                let end = (j.row + 1) * sd;
                for s in &j.segs {
                    let m = j.info.data[s.idx];
                    if Self::writable(&slots, m) {
                        ops.push(Op::write(m as usize, j.row * self.geo.chunk + s.a, &buf[s.buf_off..s.buf_off + (s.b - s.a) as usize]));
                    }
                }
                if j.strategy == Strategy::Degraded {
                    // Members being rebuilt get the whole column, now correct.
                    for (i, &m) in j.info.data.iter().enumerate() {
                        if Self::writable(&slots, m) && !Self::readable(&slots, m, end) && !j.segs.iter().any(|s| s.idx == i && s.a == j.lo && s.b == j.hi) {
                            ops.push(Op::write(m as usize, off, j.data[i].as_deref().unwrap()));
                        }
                    }
                }
                let (p, q) = if j.strategy == Strategy::Full {
                    let (p, q) = fp.next().unwrap();
                    (p.as_slice(), q.as_deref())
                } else {
                    (j.p.as_deref().unwrap(), j.q.as_deref())
                };
                if Self::writable(&slots, j.info.p) {
                    ops.push(Op::write(j.info.p as usize, off, p));
                }
                if let (Some(qm), Some(q)) = (j.info.q, q) {
                    if Self::writable(&slots, qm) {
                        ops.push(Op::write(qm as usize, off, q));
                    }
                }
            }
            let errs = self.pool.run(ops);
            if errs.is_empty() {
                return Ok(());
            }
            for (m, e) in errs {
                self.fail_member(m, &e.to_string());
            }
            // Retry the whole request degraded: every block is recomputed from what survived.
            force_degraded = true;
        }
        Err(eio("write failed on every attempt".into()))
    }

    pub fn flush(&self) -> io::Result<()> {
        self.check_failed()?;
        for i in 0..self.geo.members as usize {
            if let Some(d) = self.pool.dev(i) {
                if Self::writable(&self.slots(), i as u32) {
                    if let Err(e) = d.flush() {
                        self.fail_member(i, &e.to_string());
                    }
                }
            }
        }
        if let Backing::Leaf(leaf) = &self.backing {
            self.clear_bitmap(leaf, Instant::now())?;
        }
        self.check_failed()
    }

    // ---------------------------------------------------------------- metadata

    fn persist_bitmap(&self, leaf: &Leaf, dirty: &crate::bitmap::Dirty) -> io::Result<()> {
        let slots = self.slots();
        for (i, m) in leaf.members.iter().enumerate() {
            let Some(m) = m else { continue };
            if !Self::writable(&slots, i as u32) {
                continue;
            }
            let r = dirty
                .iter()
                .try_for_each(|(off, bytes)| m.write_raw(bytes, BITMAP_OFFSET + off))
                .and_then(|_| m.flush());
            if let Err(e) = r {
                self.fail_member(i, &e.to_string());
            }
        }
        self.check_failed()
    }

    fn clear_bitmap(&self, leaf: &Leaf, now: Instant) -> io::Result<()> {
        leaf.bitmap.clear_idle(
            now,
            || {
                for i in 0..self.geo.members as usize {
                    if let Some(m) = &leaf.members[i] {
                        if Self::writable(&self.slots(), i as u32) {
                            m.flush()?;
                        }
                    }
                }
                Ok(())
            },
            |d| self.persist_bitmap(leaf, d),
        )
    }

    /// First write since assembly: record the array as dirty before any data moves.
    fn mark_dirty(&self) -> io::Result<()> {
        if self.dirty.load(Ordering::SeqCst) {
            return Ok(());
        }
        let _g = self.meta_lock.lock().unwrap();
        if self.dirty.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.persist().map_err(io::Error::from)
    }

    /// Write this array's state (dirty flag, slot states, checkpoints) to its metadata: a leaf
    /// to its members' superblocks, a nested array into every leaf's `parents` entry.
    pub fn persist(&self) -> Result<(), ArrayError> {
        let dirty = self.dirty.load(Ordering::SeqCst);
        match &self.backing {
            Backing::Leaf(leaf) => {
                let mut sb = leaf.sb.lock().unwrap();
                sb.array.dirty = dirty;
                let slots = self.slots();
                for (i, s) in slots.iter().enumerate() {
                    sb.slots[i].state = s.state;
                    sb.slots[i].checkpoint = s.checkpoint;
                    if s.state == SlotState::Missing {
                        sb.slots[i].dev_uuid = [0; 16];
                    }
                }
                sb.events += 1;
                sb.seq = sb.events;
                let mut last_err = None;
                let mut written = 0;
                for (i, m) in leaf.members.iter().enumerate() {
                    let Some(m) = m else { continue };
                    if !Self::writable(&slots, i as u32) {
                        continue;
                    }
                    let mut own = sb.clone();
                    own.dev_uuid = leaf.dev_uuids[i];
                    own.array.role = i as u32;
                    match m.write_superblock(&own) {
                        Ok(()) => written += 1,
                        Err(e) => last_err = Some(e),
                    }
                }
                for sp in &leaf.spares {
                    if let Ok(Some(mut own)) = sp.read_superblock() {
                        let dev = own.dev_uuid;
                        own = sb.clone();
                        own.dev_uuid = dev;
                        own.array.role = ROLE_SPARE;
                        let _ = sp.write_superblock(&own);
                    }
                }
                match last_err {
                    Some(e) if written == 0 => Err(e),
                    _ => Ok(()),
                }
            }
            Backing::Nested(children) => {
                for c in children.iter().flatten() {
                    c.set_ancestor(0, &|d: &mut ArrayDesc| d.dirty = dirty)?;
                }
                Ok(())
            }
        }
    }

    /// Update the description of the `k`-th enclosing array (0 = the parent) on every leaf.
    fn set_ancestor(&self, k: usize, f: &dyn Fn(&mut ArrayDesc)) -> Result<(), ArrayError> {
        match &self.backing {
            Backing::Leaf(leaf) => {
                {
                    let mut sb = leaf.sb.lock().unwrap();
                    if let Some(d) = sb.parents.get_mut(k) {
                        f(d);
                    }
                }
                let _g = self.meta_lock.lock().unwrap();
                self.persist()
            }
            Backing::Nested(children) => {
                for c in children.iter().flatten() {
                    c.set_ancestor(k + 1, f)?;
                }
                Ok(())
            }
        }
    }

    /// Stop cleanly: data and bitmap durable, array recorded clean.
    pub fn close(&self) -> Result<(), ArrayError> {
        if let Backing::Nested(children) = &self.backing {
            for c in children.iter().flatten() {
                c.close()?;
            }
        }
        if self.failed.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.flush().map_err(|e| ArrayError::failed(format!("cannot flush array: {e}")))?;
        if self.dirty.swap(false, Ordering::SeqCst) {
            let _g = self.meta_lock.lock().unwrap();
            self.persist()?;
        }
        Ok(())
    }

    /// Pick up slot failures recorded in the superblocks by another process (`raidlab array
    /// fail` while the array is served). Returns true if anything changed.
    pub fn refresh(&self) -> bool {
        let mut changed = false;
        match &self.backing {
            Backing::Leaf(leaf) => {
                let ours = leaf.sb.lock().unwrap().events;
                let mut newest: Option<Superblock> = None;
                for m in leaf.members.iter().flatten() {
                    if let Ok(Some(sb)) = m.read_superblock() {
                        if sb.array.uuid == self.uuid && sb.events > ours && newest.as_ref().is_none_or(|n| sb.events > n.events) {
                            newest = Some(sb);
                        }
                    }
                }
                if let Some(n) = newest {
                    leaf.sb.lock().unwrap().events = n.events;
                    for (i, s) in n.slots.iter().enumerate() {
                        if s.state == SlotState::Faulty && i < self.geo.members as usize {
                            let cur = self.slots()[i].state;
                            if cur != SlotState::Faulty {
                                self.fail_member(i, "marked faulty by raidlab array fail");
                                changed = true;
                            }
                        }
                    }
                }
            }
            Backing::Nested(children) => {
                for c in children.iter().flatten() {
                    changed |= c.refresh();
                }
            }
        }
        changed
    }

    // ---------------------------------------------------------------- resync, rebuild, scrub

    /// Make redundancy consistent again over logical [start, end): recompute parity from data,
    /// or copy the first readable mirror copy over the others.
    pub fn resync_range(&self, start: u64, end: u64) -> Result<(), ArrayError> {
        let end = end.min(self.capacity());
        match self.geo.level {
            Level::Raid4 | Level::Raid5 | Level::Raid6 => {
                let sd = self.geo.stripe_data_bytes();
                for row in start / sd..end.div_ceil(sd) {
                    self.repair_row(row, RowRepair::Parity)?;
                }
            }
            Level::Raid1 | Level::Raid10 => {
                let c0 = start / self.geo.chunk;
                for c in c0..end.div_ceil(self.geo.chunk) {
                    self.repair_chunk(c, false)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Resync the regions the bitmap marks (after an unclean stop), then clear it.
    pub fn resync_dirty(&self) -> Result<u64, ArrayError> {
        let Backing::Leaf(leaf) = &self.backing else {
            // An enclosing array with redundancy and no bitmap of its own: resync it all.
            if self.geo.redundancy() > 0 {
                self.resync_range(0, self.capacity())?;
                return Ok(self.capacity());
            }
            return Ok(0);
        };
        let regions = leaf.bitmap.set_regions();
        let mut bytes = 0;
        for r in &regions {
            let s = r * leaf.bitmap.region;
            self.resync_range(s, s + leaf.bitmap.region)?;
            bytes += leaf.bitmap.region;
        }
        let all = leaf.bitmap.clear_all();
        self.persist_bitmap(leaf, &all).map_err(|e| ArrayError::failed(format!("cannot write bitmap: {e}")))?;
        Ok(bytes.min(self.capacity()))
    }

    /// One mirror chunk: copy the first readable copy to every other writable one
    /// (`only_invalid`: only to copies not yet valid, as rebuild does). Returns copies differing.
    fn repair_chunk(&self, c: u64, only_invalid: bool) -> Result<u64, ArrayError> {
        let _g = self.locks.lock(std::iter::once(c));
        let slots = self.slots();
        let end = (c + 1) * self.geo.chunk;
        let copies = self.geo.chunk_copies(c);
        let Some(src) = copies.iter().find(|x| Self::readable(&slots, x.member, end)) else {
            return Err(ArrayError::failed(format!("logical chunk {c} has no readable copy")));
        };
        let mut good = vec![0u8; self.geo.chunk as usize];
        let errs = self.pool.run(vec![Op::read(src.member as usize, src.offset, &mut good)]);
        self.take_errs(errs)?;
        let mut differing = 0;
        for x in copies.iter().filter(|x| x.member != src.member && Self::writable(&slots, x.member)) {
            let valid = Self::readable(&slots, x.member, end);
            if only_invalid && valid {
                continue;
            }
            if valid {
                let mut other = vec![0u8; good.len()];
                self.take_errs(self.pool.run(vec![Op::read(x.member as usize, x.offset, &mut other)]))?;
                if other == good {
                    continue;
                }
                differing += 1;
            }
            self.take_errs(self.pool.run(vec![Op::write(x.member as usize, x.offset, &good)]))?;
        }
        Ok(differing)
    }

    fn take_errs(&self, errs: Vec<(usize, io::Error)>) -> Result<(), ArrayError> {
        if errs.is_empty() {
            return Ok(());
        }
        let msg = errs[0].1.to_string();
        for (m, e) in errs {
            self.fail_member(m, &e.to_string());
        }
        Err(ArrayError::failed(format!("member I/O failed: {msg}")))
    }

    /// One whole row of a parity level: read everything readable, then per `what`:
    /// rebuild the members being rebuilt, rewrite parity, or check/repair (scrub).
    fn repair_row(&self, row: u64, what: RowRepair) -> Result<RowOutcome, ArrayError> {
        let _g = self.locks.lock(std::iter::once(row));
        let slots = self.slots();
        let info = self.geo.row(row);
        let chunk = self.geo.chunk;
        let len = chunk as usize;
        let sd = self.geo.stripe_data_bytes();
        let end = (row + 1) * sd;
        let mut b = match self.reconstruct(row, &info, 0, chunk, &slots) {
            Ok(b) => b,
            Err(ReconError::Io(errs)) => {
                self.take_errs(errs)?;
                unreachable!()
            }
            Err(ReconError::Lost(m)) => return Err(ArrayError::failed(m)),
        };
        let off = row * chunk;
        let mut outcome = RowOutcome::Consistent;
        let mut writes: Vec<(u32, Vec<u8>)> = Vec::new();
        match what {
            RowRepair::Rebuild => {
                for (i, &m) in info.data.iter().enumerate() {
                    if Self::writable(&slots, m) && !Self::readable(&slots, m, end) {
                        writes.push((m, b.data[i].clone().unwrap()));
                    }
                }
                for (m, blk) in [(Some(info.p), &b.p), (info.q, &b.q)] {
                    if let Some(m) = m {
                        if Self::writable(&slots, m) && !Self::readable(&slots, m, end) {
                            writes.push((m, blk.clone().unwrap()));
                        }
                    }
                }
            }
            RowRepair::Parity | RowRepair::Check | RowRepair::Repair => {
                if Self::lost_count(&slots) > 0 || slots.iter().any(|s| s.state != SlotState::Active) {
                    // Degraded rows have no redundancy left to check against; rebuilt blocks
                    // are consistent by construction.
                    if what == RowRepair::Parity {
                        for (m, blk) in [(Some(info.p), &b.p), (info.q, &b.q)] {
                            if let Some(m) = m {
                                if Self::writable(&slots, m) {
                                    writes.push((m, blk.clone().unwrap()));
                                }
                            }
                        }
                    }
                } else {
                    let syn_refs: Vec<&[u8]> = info.syndrome.iter().map(|&i| b.data[i].as_deref().unwrap()).collect();
                    let verdict = pq::check(&syn_refs, b.p.as_deref().unwrap(), b.q.as_deref());
                    let fix_parity = |writes: &mut Vec<(u32, Vec<u8>)>| {
                        let mut p = vec![0u8; len];
                        if let Some(qm) = info.q {
                            let mut q = vec![0u8; len];
                            pq::gen_pq(&syn_refs, &mut p, &mut q);
                            writes.push((qm, q));
                        } else {
                            pq::gen_p(&syn_refs, &mut p);
                        }
                        writes.push((info.p, p));
                    };
                    use raidlab_parity::Block;
                    if verdict != pq::Syndrome::Clean {
                        let bad = match verdict {
                            pq::Syndrome::Bad(Block::P) => Some(info.p),
                            pq::Syndrome::Bad(Block::Q) => info.q,
                            pq::Syndrome::Bad(Block::Data(k)) => Some(info.data[info.syndrome[k]]),
                            _ => None,
                        };
                        // RAID 5 cannot tell which block is wrong: parity is what it rewrites.
                        outcome = RowOutcome::Mismatch(if info.q.is_some() { bad } else { None });
                        if what != RowRepair::Check {
                            match verdict {
                                pq::Syndrome::Bad(Block::Data(k)) if info.q.is_some() => {
                                    // Rebuild the located block from the others and P.
                                    let mut syn: Vec<Option<Vec<u8>>> =
                                        info.syndrome.iter().map(|&x| b.data[x].clone()).collect();
                                    syn[k] = None;
                                    let mut p = b.p.clone();
                                    pq::recover(&mut syn, &mut p, None, len).map_err(ArrayError::failed)?;
                                    writes.push((info.data[info.syndrome[k]], syn[k].take().unwrap()));
                                }
                                _ => fix_parity(&mut writes),
                            }
                        }
                    }
                }
            }
        }
        let ops: Vec<Op> = writes.iter().map(|(m, blk)| Op::write(*m as usize, off, blk)).collect();
        let errs = self.pool.run(ops);
        b.data.clear();
        self.take_errs(errs)?;
        Ok(outcome)
    }

    /// Rebuild slots in `Rebuilding` state from `checkpoint` on, persisting progress every
    /// `persist_every` bytes. `progress(done, total)` is called as it goes; `stop` interrupts
    /// (the checkpoint is kept, so a later rebuild resumes). Returns true when finished.
    pub fn rebuild(&self, persist_every: u64, stop: &AtomicBool, progress: &mut dyn FnMut(u64, u64)) -> Result<bool, ArrayError> {
        let cap = self.capacity();
        let targets: Vec<usize> =
            self.slots().iter().enumerate().filter(|(_, s)| s.state == SlotState::Rebuilding).map(|(i, _)| i).collect();
        if targets.is_empty() {
            return Ok(true);
        }
        let start = targets.iter().map(|&i| self.slots()[i].checkpoint).min().unwrap_or(0);
        let unit = match self.geo.level {
            Level::Raid4 | Level::Raid5 | Level::Raid6 => self.geo.stripe_data_bytes(),
            Level::Raid1 | Level::Raid10 => self.geo.chunk,
            _ => return Err(ArrayError::usage(format!("{} has no redundancy to rebuild from", self.geo.level.name()))),
        };
        let mut pos = start / unit * unit;
        let mut since = 0;
        while pos < cap {
            if stop.load(Ordering::SeqCst) {
                self.persist()?;
                return Ok(false);
            }
            match self.geo.level {
                Level::Raid1 | Level::Raid10 => {
                    self.repair_chunk(pos / unit, true)?;
                }
                _ => {
                    self.repair_row(pos / unit, RowRepair::Rebuild)?;
                }
            }
            pos = (pos + unit).min(cap);
            {
                let mut slots = self.slots.write().unwrap();
                for &t in &targets {
                    if slots[t].state == SlotState::Rebuilding && slots[t].checkpoint < pos {
                        slots[t].checkpoint = pos;
                    }
                }
            }
            since += unit;
            if since >= persist_every {
                since = 0;
                self.persist()?;
            }
            progress(pos, cap);
        }
        {
            let mut slots = self.slots.write().unwrap();
            for &t in &targets {
                if slots[t].state == SlotState::Rebuilding {
                    slots[t] = SlotRt { state: SlotState::Active, checkpoint: 0 };
                }
            }
        }
        self.persist()?;
        Ok(true)
    }

    /// Scrub: check every row's redundancy; with `repair`, fix what is found.
    pub fn scrub(&self, repair: bool, progress: &mut dyn FnMut(u64, u64)) -> Result<ScrubReport, ArrayError> {
        if self.slots().iter().any(|s| s.state != SlotState::Active) {
            return Err(ArrayError::usage(
                "the array is degraded: scrub needs every member active (rebuild first)".to_string(),
            ));
        }
        let mut rep = ScrubReport::default();
        let cap = self.capacity();
        match self.geo.level {
            Level::Raid4 | Level::Raid5 | Level::Raid6 => {
                let sd = self.geo.stripe_data_bytes();
                for row in 0..cap / sd {
                    let out = self.repair_row(row, if repair { RowRepair::Repair } else { RowRepair::Check })?;
                    rep.stripes += 1;
                    if let RowOutcome::Mismatch(m) = out {
                        rep.mismatches += 1;
                        rep.mismatch_sectors += self.geo.chunk / 512;
                        rep.located.push((row, m.map(|m| self.labels[m as usize].clone())));
                    }
                    progress((row + 1) * sd, cap);
                }
            }
            Level::Raid1 | Level::Raid10 => {
                for c in 0..cap / self.geo.chunk {
                    let d = if repair { self.repair_chunk(c, false)? } else { self.compare_chunk(c)? };
                    rep.stripes += 1;
                    if d > 0 {
                        rep.mismatches += 1;
                        rep.mismatch_sectors += self.geo.chunk / 512;
                        rep.located.push((c, None));
                    }
                    progress((c + 1) * self.geo.chunk, cap);
                }
            }
            _ => return Err(ArrayError::usage(format!("{} has no redundancy to scrub", self.geo.level.name()))),
        }
        rep.repaired = repair;
        Ok(rep)
    }

    fn compare_chunk(&self, c: u64) -> Result<u64, ArrayError> {
        let _g = self.locks.lock(std::iter::once(c));
        let copies = self.geo.chunk_copies(c);
        let mut bufs = vec![vec![0u8; self.geo.chunk as usize]; copies.len()];
        let ops = copies.iter().zip(bufs.iter_mut()).map(|(x, b)| Op::read(x.member as usize, x.offset, b)).collect();
        self.take_errs(self.pool.run(ops))?;
        Ok(bufs.iter().skip(1).filter(|b| **b != bufs[0]).count() as u64)
    }
}

#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ScrubReport {
    pub stripes: u64,
    /// Stripes (rows, or mirror chunks) whose redundancy did not match.
    pub mismatches: u64,
    /// md's mismatch_cnt: 512-byte sectors in mismatched stripes (one chunk each).
    pub mismatch_sectors: u64,
    pub repaired: bool,
    /// (row or chunk, member located as bad where parity could tell)
    pub located: Vec<(u64, Option<String>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowRepair {
    Rebuild,
    Parity,
    Check,
    Repair,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum RowOutcome {
    Consistent,
    Mismatch(Option<u32>),
}

struct Blocks {
    data: Vec<Option<Vec<u8>>>,
    p: Option<Vec<u8>>,
    q: Option<Vec<u8>>,
}

enum ReconError {
    Io(Vec<(usize, io::Error)>),
    Lost(String),
}

impl RowJob {
    /// Does the request overwrite data block `i` over the whole column range?
    fn covers(&self, i: usize) -> bool {
        self.segs.iter().any(|s| s.idx == i && s.a <= self.lo && s.b >= self.hi)
    }
}

fn unique(it: impl Iterator<Item = u64>) -> impl Iterator<Item = u64> {
    let mut v: Vec<u64> = it.collect();
    v.dedup();
    v.into_iter()
}

fn info_row_label(info: &Row) -> String {
    format!("(parity on member {})", info.p)
}
