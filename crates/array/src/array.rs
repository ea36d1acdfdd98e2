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
use crate::member::{AlignedBuf, Member};
use crate::pool::{Dev, Op, Pool};
use crate::pq;
use crate::stripe_copy::{Parity, Segment, StripeCopy};
use crate::superblock::{ArrayDesc, SlotState, Superblock, BITMAP_OFFSET, ROLE_SPARE};
use raidlab_engine::ewriteln;
use raidlab_geometry::{BlockRef, Compute, Geometry, IoKind, Level, Plan, Slot as PlanSlot};
use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Instant;

mod initial_sync;
mod sync;
pub(crate) use initial_sync::{sync_bytes, Part};
pub use sync::ScrubReport;

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

// One per array, never in a collection: the leaf's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
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
    /// Stripes written as stripe copies (see `stripe_copy`) since assembly.
    stripe_copies: std::sync::atomic::AtomicU64,
    /// Units (stripes or chunks) this array has resynced since assembly.
    units_resynced: std::sync::atomic::AtomicU64,
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
    fn trim(&self, offset: u64, len: u64) -> io::Result<()> {
        self.trim_data(offset, len)
    }
    fn raw(&self) -> Option<(std::os::unix::io::RawFd, u64)> {
        Some((self.raw_fd(), self.data_offset))
    }
    fn align(&self) -> u64 {
        Member::align(self)
    }
    fn map_data(&self, offset: u64, len: usize) -> Option<*mut u8> {
        Member::map_data(self, offset, len)
    }
    fn write_meta(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.write_raw(buf, offset)?;
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
    fn trim(&self, offset: u64, len: u64) -> io::Result<()> {
        Array::trim(self, offset, len)
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
        StripeLocks {
            held: Mutex::new(HashSet::new()),
            freed: Condvar::new(),
        }
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
            stripe_copies: std::sync::atomic::AtomicU64::new(0),
            units_resynced: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Stripes this array (not its children) has written since assembly as one pass of
    /// memory copies into mapped members, data and parity together (full-stripe writes to
    /// members in tmpfs).
    pub fn stripe_copies(&self) -> u64 {
        self.stripe_copies.load(Ordering::Relaxed)
    }

    /// Units (stripes of parity levels, chunks of mirrors) this array (not its children) has
    /// resynced since assembly: made its redundancy agree with its data, as after an unclean
    /// stop or in the initial sync.
    pub fn units_resynced(&self) -> u64 {
        self.units_resynced.load(Ordering::Relaxed)
    }

    pub fn capacity(&self) -> u64 {
        self.geo.capacity()
    }

    /// How member I/O is done ("io_uring", "psync (thread per member)", or a mix), with
    /// the reason when io_uring was wanted but could not be set up.
    pub fn member_io(&self) -> String {
        let mut s = self.pool.describe();
        let mut all = Vec::new();
        self.member_modes(&mut all);
        let mut modes: Vec<&str> = Vec::new();
        for (_, m) in &all {
            if !modes.contains(&m.as_str()) {
                modes.push(m);
            }
        }
        match modes.len() {
            0 => {}
            1 => s.push_str(&format!("; members {}", modes[0])),
            _ => {
                let per: Vec<String> = all.iter().map(|(p, m)| format!("{p}: {m}")).collect();
                s.push_str(&format!("; members {}", per.join(", ")));
            }
        }
        s
    }

    /// (path, how it is opened) of every leaf member below this array.
    fn member_modes(&self, out: &mut Vec<(String, String)>) {
        match &self.backing {
            Backing::Leaf(leaf) => {
                for m in leaf.members.iter().flatten() {
                    out.push((m.path.display().to_string(), m.io_mode().to_string()));
                }
            }
            Backing::Nested(children) => {
                for c in children.iter().flatten() {
                    c.member_modes(out);
                }
            }
        }
    }

    pub fn slots(&self) -> Vec<SlotRt> {
        self.slots.read().unwrap().clone()
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::SeqCst)
    }

    /// Slots not usable for reading (faulty, missing, or rebuilding).
    pub fn degraded_count(&self) -> u32 {
        self.slots
            .read()
            .unwrap()
            .iter()
            .filter(|s| s.state != SlotState::Active)
            .count() as u32
    }

    fn lost_count(slots: &[SlotRt]) -> u32 {
        slots
            .iter()
            .filter(|s| matches!(s.state, SlotState::Faulty | SlotState::Missing))
            .count() as u32
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
        matches!(
            slots[m as usize].state,
            SlotState::Active | SlotState::Rebuilding
        )
    }

    fn check_failed(&self) -> io::Result<()> {
        if self.failed.load(Ordering::SeqCst) {
            return Err(eio(format!(
                "{} array {} has failed: more members failed than it survives ({})",
                self.geo.level,
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
        ewriteln!(
            "raidlab: member {} of {} array failed ({why}); continuing degraded",
            self.labels.get(m).map(String::as_str).unwrap_or("?"),
            self.geo.level
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
            .filter(|&m| {
                matches!(
                    slots[m as usize].state,
                    SlotState::Faulty | SlotState::Missing
                )
            })
            .collect();
        self.geo.survives(&failed)
    }

    // ---------------------------------------------------------------- reads

    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.bounds(buf.len(), offset)?;
        if buf.is_empty() {
            return Ok(());
        }
        self.planned_io(IoKind::Read, buf.as_mut_ptr(), buf.len(), offset)
    }

    fn bounds(&self, len: usize, offset: u64) -> io::Result<()> {
        if offset
            .checked_add(len as u64)
            .is_none_or(|e| e > self.capacity())
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "I/O at {offset}+{len} is past the array's end ({} bytes)",
                    self.capacity()
                ),
            ));
        }
        self.check_failed()
    }

    /// The I/O unit: a row (stripe) for parity levels, a chunk otherwise.
    fn unit(&self) -> u64 {
        match self.geo.level {
            Level::Raid4 | Level::Raid5 | Level::Raid6 => self.geo.stripe_data_bytes(),
            _ => self.geo.chunk_bytes,
        }
    }

    /// Members the planner must treat as failed for I/O within unit `u`: faulty or missing
    /// ones, and members being rebuilt where the rebuild has not reached yet.
    fn failed_for(&self, slots: &[SlotRt], u: u64) -> Vec<u32> {
        let end = (u + 1) * self.unit();
        (0..slots.len() as u32)
            .filter(|&m| !Self::readable(slots, m, end))
            .collect()
    }

    /// A logical read or write: raidlab-geometry plans it (md's strategy per row: direct,
    /// full-stripe, read-modify-write, reconstruct-write, degraded), this executes the plan.
    /// A member error marks the member faulty and the I/O is planned again without it.
    fn planned_io(&self, kind: IoKind, buf: *mut u8, len: usize, offset: u64) -> io::Result<()> {
        let unit = self.unit();
        let first = offset / unit;
        let last = (offset + len as u64 - 1) / unit;
        let redundant = self.geo.redundancy() > 0;
        let lock = redundant && (kind == IoKind::Write || self.degraded_count() > 0);
        let _guard = lock.then(|| self.locks.lock(first..=last));
        for _attempt in 0..=self.geo.members {
            self.check_failed()?;
            let slots = self.slots();
            // While a member is being rebuilt, plan unit by unit: below the checkpoint it is
            // in sync, above it it is not.
            let pieces: Vec<(u64, u64)> = if slots.iter().any(|s| s.state == SlotState::Rebuilding)
            {
                let mut v = Vec::new();
                let mut o = offset;
                let end = offset + len as u64;
                while o < end {
                    let n = ((o / unit + 1) * unit).min(end) - o;
                    v.push((o, n));
                    o += n;
                }
                v
            } else {
                vec![(offset, len as u64)]
            };
            let mut errs = Vec::new();
            for (o, n) in pieces {
                let failed = self.failed_for(&slots, o / unit);
                let plan = raidlab_geometry::plan(&self.geo, kind, o, n, &failed).map_err(|e| {
                    eio(format!(
                        "{} array cannot serve this I/O: {e}",
                        self.geo.level
                    ))
                })?;
                // SAFETY: (o - offset) + n <= len, inside the caller's buffer.
                let user = unsafe { buf.add((o - offset) as usize) };
                errs = self.exec_plan(&plan, user, n as usize);
                if !errs.is_empty() {
                    break;
                }
            }
            if errs.is_empty() {
                return Ok(());
            }
            if let Some((_, e)) = errs.iter().find(|(m, _)| *m >= slots.len()) {
                return Err(eio(format!("{} array I/O failed: {e}", self.geo.level)));
            }
            for (m, e) in errs {
                self.fail_member(m, &e.to_string());
            }
        }
        Err(eio(format!("{:?} failed on every attempt", kind)))
    }

    /// Run a plan: every step's phase-1 reads as one parallel batch; then step by step, the
    /// submission of its writes that need no computation, its parity work, and the
    /// submission of the rest, so that a stripe's parity is computed while its data and the
    /// previous stripes are being written; then wait for every write (helping with them).
    ///
    /// Parity is computed straight into the buffer it is written from (a scratch buffer),
    /// and data is written straight from the caller's buffer; scratch buffers are reused
    /// from one request to the next (per thread) instead of being allocated and zeroed.
    fn exec_plan(&self, plan: &Plan, user: *mut u8, user_len: usize) -> Vec<(usize, io::Error)> {
        let mut scratch = Scratch::take(plan);
        let ptr = |scratch: &mut Scratch, step: usize, b: BlockRef, len: u64| -> *mut u8 {
            match b {
                BlockRef::User { at } => {
                    assert!(
                        at + len <= user_len as u64,
                        "plan refers past the caller's buffer"
                    );
                    // SAFETY: bounds checked just above.
                    unsafe { user.add(at as usize) }
                }
                BlockRef::Scratch(i) => scratch.ptr(step, i as usize, len),
            }
        };
        let mut batch = self.pool.batch();
        let mut ops = Vec::new();
        for (si, st) in plan.steps.iter().enumerate() {
            for io in &st.reads {
                let p = ptr(&mut scratch, si, io.block, io.len);
                // SAFETY: p points at io.len bytes that stay alive until the batch is waited
                // for (scratch and the caller's buffer outlive `batch`, which waits on drop).
                ops.push(unsafe {
                    Op::raw(io.member as usize, io.offset, p, io.len as usize, false)
                });
            }
        }
        if !ops.is_empty() {
            batch.submit(ops);
            let errs = batch.wait_all();
            if !errs.is_empty() {
                return errs;
            }
        }
        // Pipelining is safe when no computation writes into the caller's buffer (writes
        // only read it): then a step's computation touches only its own scratch, which no
        // other step's writes read.
        let pipeline = plan.steps.iter().flat_map(|s| &s.compute).all(|c| {
            compute_outputs(c)
                .iter()
                .all(|b| matches!(b, BlockRef::Scratch(_)))
        });
        let mut pending: Vec<Op> = Vec::new();
        let mut fused = StripeCopy::default();
        let mut fused_devs: Vec<usize> = Vec::new();
        for (si, st) in plan.steps.iter().enumerate() {
            // A stripe written whole to mapped members: its copies and parity are done
            // as one pass over each block, in shares of the request (see `stripe_copy`).
            if pipeline {
                if let Some((devs, seg)) =
                    self.stripe_copy(st, &mut |b, len| ptr(&mut scratch, si, b, len))
                {
                    fused.segs.push(seg);
                    for d in devs {
                        if !fused_devs.contains(&d) {
                            fused_devs.push(d);
                        }
                    }
                    continue;
                }
            }
            // When pipelining, the step's writes of blocks no computation of the step
            // produces (data from the caller's buffer) go out before its parity is
            // computed, so the member I/O of a full-stripe write starts at once and the
            // parity is computed while it runs.
            let outputs: Vec<BlockRef> = if pipeline {
                st.compute.iter().flat_map(compute_outputs).collect()
            } else {
                Vec::new()
            };
            let mut later = Vec::new();
            for io in &st.writes {
                if pipeline && !outputs.contains(&io.block) {
                    let p = ptr(&mut scratch, si, io.block, io.len);
                    // SAFETY: as for the reads.
                    pending.push(unsafe {
                        Op::raw(io.member as usize, io.offset, p, io.len as usize, true)
                    });
                } else {
                    later.push(io);
                }
            }
            if !pending.is_empty() {
                batch.submit(std::mem::take(&mut pending));
            }
            for c in &st.compute {
                if let Err(e) = self.compute(c, &mut |b, len| ptr(&mut scratch, si, b, len)) {
                    drop(batch);
                    return vec![(usize::MAX, e)];
                }
            }
            for io in later {
                let p = ptr(&mut scratch, si, io.block, io.len);
                // SAFETY: as for the reads.
                pending.push(unsafe {
                    Op::raw(io.member as usize, io.offset, p, io.len as usize, true)
                });
            }
            if pipeline && !pending.is_empty() {
                batch.submit(std::mem::take(&mut pending));
            }
        }
        if !fused.segs.is_empty() {
            self.stripe_copies
                .fetch_add(fused.segs.len() as u64, Ordering::Relaxed);
            // One share per thread serving the queues, each queued on a different member (a
            // member's queue runs one operation at a time): one hand-off per thread per
            // request, and the threads finish together.
            let shares = fused.split(self.pool.threads().min(fused_devs.len()));
            for (share, &dev) in shares.into_iter().zip(&fused_devs) {
                // SAFETY: sources are the caller's buffer, alive until the batch is waited
                // for; destinations are distinct member ranges (a plan writes a member range
                // once) and shares distinct ranges of them, held by this request's stripe
                // locks; the members are thread-served (checked by `stripe_copy`).
                pending.push(unsafe { Op::stripe_copy(dev, share) });
            }
        }
        if !pending.is_empty() {
            batch.submit(pending);
        }
        let errs = batch.wait();
        scratch.give_back();
        errs
    }

    /// A plan step as one [`StripeCopy`], if it can be: its computations are parity of the
    /// caller's data (XOR or P+Q), all of one length, and each of its writes, of that
    /// length, goes to a mapped member not served by a ring, from the caller's buffer or a
    /// computation's output (written once). Returns the members written (parity members
    /// first) and the copy. `at(b, len)` locates a block in the caller's buffer.
    fn stripe_copy(
        &self,
        st: &raidlab_geometry::Step,
        at: &mut dyn FnMut(BlockRef, u64) -> *mut u8,
    ) -> Option<(Vec<usize>, Segment)> {
        let len = match st.compute.first()? {
            Compute::Xor { len, .. } | Compute::GenPq { len, .. } => *len,
            Compute::RecoverPq { .. } => return None,
        };
        let mut outs: Vec<(BlockRef, Option<(usize, *mut u8)>)> = Vec::new();
        for c in &st.compute {
            match c {
                Compute::Xor {
                    inputs,
                    out,
                    len: l,
                } if *l == len => {
                    if !inputs.iter().all(|b| matches!(b, BlockRef::User { .. })) {
                        return None;
                    }
                    outs.push((*out, None));
                }
                Compute::GenPq { data, p, q, len: l } if *l == len => {
                    if !data
                        .iter()
                        .flatten()
                        .all(|b| matches!(b, BlockRef::User { .. }))
                    {
                        return None;
                    }
                    outs.push((*p, None));
                    outs.push((*q, None));
                }
                _ => return None,
            }
        }
        let mut copies = Vec::new();
        for io in &st.writes {
            let dev = io.member as usize;
            if io.len != len || self.pool.via_ring(dev) {
                return None;
            }
            let dst = self.pool.dev(dev)?.map_data(io.offset, len as usize)?;
            if let BlockRef::User { .. } = io.block {
                copies.push((at(io.block, len) as *const u8, dst));
            } else {
                let o = outs.iter_mut().find(|(b, _)| *b == io.block)?;
                if o.1.is_some() {
                    return None;
                }
                o.1 = Some((dev, dst));
            }
        }
        // Every output is written somewhere (else this is not a stripe copy).
        let placed: Vec<(BlockRef, (usize, *mut u8))> = outs
            .iter()
            .map(|(b, d)| d.map(|d| (*b, d)))
            .collect::<Option<_>>()?;
        let out = |b: &BlockRef| placed.iter().find(|(o, _)| o == b).map(|(_, d)| d.1);
        let mut parity = Vec::new();
        for c in &st.compute {
            parity.push(match c {
                Compute::Xor { inputs, out: o, .. } => Parity::P {
                    ins: inputs.iter().map(|&b| at(b, len) as *const u8).collect(),
                    out: out(o)?,
                },
                Compute::GenPq { data, p, q, .. } => Parity::Pq {
                    data: data
                        .iter()
                        .map(|d| d.map(|b| at(b, len) as *const u8))
                        .collect(),
                    p: out(p)?,
                    q: out(q)?,
                },
                Compute::RecoverPq { .. } => return None,
            });
        }
        let mut devs: Vec<usize> = placed.iter().map(|(_, d)| d.0).collect();
        for io in &st.writes {
            if !devs.contains(&(io.member as usize)) {
                devs.push(io.member as usize);
            }
        }
        Some((
            devs,
            Segment {
                len: len as usize,
                copies,
                parity,
            },
        ))
    }

    /// One parity computation; `at(b, len)` locates a block (bounds checked there).
    fn compute(&self, c: &Compute, at: &mut dyn FnMut(BlockRef, u64) -> *mut u8) -> io::Result<()> {
        // SAFETY (all slices below): `at` returns pointers to at least `len` valid bytes (the
        // caller's buffer or a scratch buffer, bounds checked); an output block that is also
        // an input is detected and computed through a temporary, so no &mut aliases a &.
        let ro = |p: *mut u8, len: u64| unsafe { std::slice::from_raw_parts(p, len as usize) };
        let rw = |p: *mut u8, len: u64| unsafe { std::slice::from_raw_parts_mut(p, len as usize) };
        match c {
            Compute::Xor { inputs, out, len } => {
                let o = at(*out, *len);
                let ins: Vec<*mut u8> = inputs.iter().map(|&b| at(b, *len)).collect();
                let refs: Vec<&[u8]> = ins.iter().map(|&p| ro(p, *len)).collect();
                if ins.iter().any(|&p| overlaps(p, o, *len)) {
                    let mut tmp = vec![0u8; *len as usize];
                    pq::gen_p(&refs, &mut tmp);
                    rw(o, *len).copy_from_slice(&tmp);
                } else {
                    pq::gen_p(&refs, rw(o, *len));
                }
            }
            Compute::GenPq { data, p, q, len } => {
                let zeros = ZEROS.with(|z| z.get(*len as usize));
                let ins: Vec<*mut u8> = data
                    .iter()
                    .map(|d| match d {
                        Some(b) => at(*b, *len),
                        None => zeros.as_ptr() as *mut u8,
                    })
                    .collect();
                let refs: Vec<&[u8]> = ins.iter().map(|&x| ro(x, *len)).collect();
                let (po, qo) = (at(*p, *len), at(*q, *len));
                let alias = overlaps(po, qo, *len)
                    || ins
                        .iter()
                        .any(|&x| overlaps(x, po, *len) || overlaps(x, qo, *len));
                if alias {
                    let mut pt = vec![0u8; *len as usize];
                    let mut qt = vec![0u8; *len as usize];
                    pq::gen_pq(&refs, &mut pt, &mut qt);
                    rw(po, *len).copy_from_slice(&pt);
                    rw(qo, *len).copy_from_slice(&qt);
                } else {
                    pq::gen_pq(&refs, rw(po, *len), rw(qo, *len));
                }
            }
            Compute::RecoverPq { data, p, q, len } => {
                // Degraded RAID 6 only: operands are copied in and results out.
                let n = *len as usize;
                let mut missing = Vec::new();
                let mut load = |s: &PlanSlot, blk: raidlab_parity::Block| match s {
                    PlanSlot::Zero => vec![0u8; n],
                    PlanSlot::Known(b) => ro(at(*b, *len), *len).to_vec(),
                    PlanSlot::Missing(_) => {
                        missing.push(blk);
                        vec![0u8; n]
                    }
                };
                let mut dv: Vec<Vec<u8>> = data
                    .iter()
                    .enumerate()
                    .map(|(i, s)| load(s, raidlab_parity::Block::Data(i)))
                    .collect();
                let mut pv = load(p, raidlab_parity::Block::P);
                let mut qv = load(q, raidlab_parity::Block::Q);
                let mut refs: Vec<&mut [u8]> = dv.iter_mut().map(|v| v.as_mut_slice()).collect();
                raidlab_parity::recover(&mut refs, &mut pv, Some(&mut qv), &missing)
                    .map_err(|e| io::Error::other(e.to_string()))?;
                for (i, s) in data.iter().enumerate() {
                    if let PlanSlot::Missing(b) = s {
                        rw(at(*b, *len), *len).copy_from_slice(&dv[i]);
                    }
                }
                if let PlanSlot::Missing(b) = p {
                    rw(at(*b, *len), *len).copy_from_slice(&pv);
                }
                if let PlanSlot::Missing(b) = q {
                    rw(at(*b, *len), *len).copy_from_slice(&qv);
                }
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- writes

    pub fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.bounds(buf.len(), offset)?;
        if buf.is_empty() {
            return Ok(());
        }
        self.mark_dirty()?;
        // Write intent in this leaf's bitmap, or in the leaves under an enclosing array.
        let intent = self.start_intent(offset, buf.len() as u64)?;
        // The pointer is only read through for writes (plans use the caller's buffer as input).
        let res = self.planned_io(IoKind::Write, buf.as_ptr() as *mut u8, buf.len(), offset);
        drop(intent);
        if let Backing::Leaf(leaf) = &self.backing {
            let now = Instant::now();
            if leaf.bitmap.clear_due(now) {
                let _ = self.clear_bitmap(leaf, now);
            }
        }
        res
    }

    /// A logical trim (discard): the member ranges md would release
    /// ([`raidlab_geometry::trim_extents`]: every piece and copy for striping and mirroring,
    /// whole stripes only for parity levels) discarded on every member that can be written,
    /// each reading zeros after, so parity stays consistent with the data it stands for. As
    /// a write, it is recorded in the write-intent bitmap first and holds its stripes'
    /// locks. A member that fails the discard is marked faulty; a member that cannot discard
    /// at all fails the trim and stays in the array.
    pub fn trim(&self, offset: u64, len: u64) -> io::Result<()> {
        self.bounds(len as usize, offset)?;
        if len == 0 {
            return Ok(());
        }
        self.mark_dirty()?;
        let intent = self.start_intent(offset, len)?;
        let unit = self.unit();
        let (first, last) = (offset / unit, (offset + len - 1) / unit);
        let guard = (self.geo.redundancy() > 0).then(|| self.locks.lock(first..=last));
        self.check_failed()?;
        let slots = self.slots();
        let skip: Vec<u32> = (0..self.geo.members)
            .filter(|&m| !Self::writable(&slots, m))
            .collect();
        let extents = raidlab_geometry::trim_extents(&self.geo, offset, len, &skip)
            .map_err(|e| eio(e.to_string()))?;
        let mut failed = Vec::new();
        for e in extents {
            let Some(dev) = self.pool.dev(e.at.member as usize) else {
                continue;
            };
            if let Err(err) = dev.trim(e.at.offset, e.len) {
                if err.kind() == io::ErrorKind::Unsupported {
                    return Err(err);
                }
                failed.push((e.at.member as usize, err.to_string()));
            }
        }
        for (m, why) in failed {
            self.fail_member(m, &why);
        }
        drop(guard);
        drop(intent);
        self.check_failed()
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
        // Every member's copy at once (each written and made durable); the batch returns
        // only when all are, so no data write starts before its bit is on every member.
        let slots = self.slots();
        let mut ops = Vec::new();
        for (i, m) in leaf.members.iter().enumerate() {
            if m.is_none() || !Self::writable(&slots, i as u32) {
                continue;
            }
            for (off, bytes) in dirty {
                ops.push(Op::meta_write(i, BITMAP_OFFSET + off, bytes));
            }
        }
        let mut batch = self.pool.batch();
        batch.submit(ops);
        for (i, e) in batch.wait() {
            if i < leaf.members.len() {
                self.fail_member(i, &e.to_string());
            } else {
                return Err(e);
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
        self.flush()
            .map_err(|e| ArrayError::failed(format!("cannot flush array: {e}")))?;
        if self.dirty.swap(false, Ordering::SeqCst) {
            let _g = self.meta_lock.lock().unwrap();
            self.persist()?;
        }
        Ok(())
    }
}

/// Blocks a computation writes.
fn compute_outputs(c: &Compute) -> Vec<BlockRef> {
    match c {
        Compute::Xor { out, .. } => vec![*out],
        Compute::GenPq { p, q, .. } => vec![*p, *q],
        Compute::RecoverPq { data, p, q, .. } => data
            .iter()
            .chain([p, q])
            .filter_map(|s| match s {
                PlanSlot::Missing(b) => Some(*b),
                _ => None,
            })
            .collect(),
    }
}

/// Whether [a, a+len) and [b, b+len) share a byte.
fn overlaps(a: *const u8, b: *const u8, len: u64) -> bool {
    let (a, b) = (a as usize, b as usize);
    a < b + len as usize && b < a + len as usize
}

/// A block of zeros at least as long as asked (RAID 6 syndrome slots that hold no data).
struct Zeros(std::cell::RefCell<Vec<u8>>);

impl Zeros {
    fn get(&self, len: usize) -> std::rc::Rc<[u8]> {
        let mut z = self.0.borrow_mut();
        if z.len() < len {
            *z = vec![0u8; len];
        }
        z[..len].into()
    }
}

thread_local! {
    static ZEROS: Zeros = const { Zeros(std::cell::RefCell::new(Vec::new())) };
    /// Scratch buffers of finished plans, kept for the next plan on this thread.
    static SPARE: std::cell::RefCell<Vec<AlignedBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The scratch buffers of one plan, per step. Buffers come from (and go back to) this
/// thread's spares, so a steady stream of requests allocates and zeroes nothing; contents
/// are undefined until read or computed, as the plan's contract says. They are aligned for
/// direct I/O, so parity is written to O_DIRECT members without a bounce copy.
struct Scratch {
    steps: Vec<Vec<AlignedBuf>>,
}

impl Scratch {
    /// Spare buffers kept per thread (a few stripes' worth of parity).
    const KEEP: usize = 64;

    fn take(plan: &Plan) -> Scratch {
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            let steps = plan
                .steps
                .iter()
                .map(|s| {
                    s.scratch
                        .iter()
                        .map(|&n| {
                            let n = n as usize;
                            match spare.iter().rposition(|v| v.len() == n) {
                                Some(i) => spare.swap_remove(i),
                                None => AlignedBuf::new(n),
                            }
                        })
                        .collect()
                })
                .collect();
            Scratch { steps }
        })
    }

    fn ptr(&mut self, step: usize, i: usize, len: u64) -> *mut u8 {
        let v = &mut self.steps[step][i];
        assert!(len <= v.len() as u64, "plan refers past a scratch buffer");
        v.as_mut_ptr()
    }

    fn give_back(self) {
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            for v in self.steps.into_iter().flatten() {
                if spare.len() < Self::KEEP {
                    spare.push(v);
                }
            }
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::create::{create, CreateOptions, CreateSpec, MemberSpec};
    use crate::superblock::SlotState;
    use std::fs::{File, OpenOptions};
    use std::os::unix::io::AsRawFd;
    use std::path::PathBuf;

    fn raid(
        level: &str,
        n: usize,
        dir: &std::path::Path,
    ) -> (std::sync::Arc<super::Array>, Vec<PathBuf>) {
        let paths: Vec<PathBuf> = (0..n).map(|i| dir.join(format!("m{i}"))).collect();
        let spec = CreateSpec::new(
            level,
            None,
            Some(16384),
            paths.iter().cloned().map(MemberSpec::Path).collect(),
        )
        .unwrap();
        let arr = create(
            &spec,
            &CreateOptions {
                force: false,
                size: Some(8 << 20),
                assume_clean: false,
                verbose: false,
                stop: None,
            },
        )
        .unwrap();
        (arr, paths)
    }

    pub(crate) fn pattern(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// A member whose writes the kernel refuses (through the ring: the descriptor the ring
    /// uses is read-only) is marked faulty, the write completes degraded, and every byte
    /// reads back as written.
    #[test]
    fn member_write_error_in_the_ring_fails_the_member_not_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let (arr, paths) = raid("5", 5, dir.path());
        assert!(arr.pool.via_ring(3), "{}", arr.member_io());
        let before = pattern(arr.capacity() as usize / 2, 1);
        arr.write_at(&before, 0).unwrap();
        let ro = File::open(&paths[3]).unwrap();
        arr.pool.override_fd(3, ro.as_raw_fd());
        // Full stripes and partial ones (read-modify-write) after the failure.
        let data = pattern(3 * 65536 + 5000, 2);
        arr.write_at(&data, 12345).unwrap();
        assert_eq!(arr.slots()[3].state, SlotState::Faulty);
        assert_eq!(arr.degraded_count(), 1);
        let mut model = before.clone();
        model.resize(arr.capacity() as usize, 0);
        model[12345..12345 + data.len()].copy_from_slice(&data);
        let mut got = vec![0u8; model.len()];
        arr.read_at(&mut got, 0).unwrap();
        assert!(got == model, "degraded read-back differs");
    }

    /// Full-stripe writes to tmpfs members are stripe copies (data copied and parity
    /// computed into the mapped pages in one pass), next to ordinary plans for a request's
    /// partial stripes: every byte reads back, scrub finds the parity consistent, and with
    /// a member failed, what it held is rebuilt from parity the stripe copies wrote.
    #[test]
    fn full_stripe_writes_to_mapped_members_are_stripe_copies() {
        for (level, n) in [("4", 4), ("5", 5), ("6", 6), ("6", 7)] {
            let dir = tempfile::tempdir_in("/dev/shm").unwrap();
            let (arr, _) = raid(level, n, dir.path());
            assert!(arr.member_io().contains("mapped"), "{}", arr.member_io());
            let stripe = arr.geo.stripe_data_bytes() as usize;
            let cap = arr.capacity() as usize;
            let mut model = pattern(cap, 9);
            arr.write_at(&model, 0).unwrap();
            assert_eq!(arr.stripe_copies(), (cap / stripe) as u64, "level {level}");
            // Half a stripe and 512 bytes in, three stripes long: two whole stripes inside.
            let off = stripe / 2 + 512;
            let new = pattern(3 * stripe, 11);
            model[off..off + new.len()].copy_from_slice(&new);
            arr.write_at(&new, off as u64).unwrap();
            assert_eq!(
                arr.stripe_copies(),
                (cap / stripe) as u64 + 2,
                "level {level}"
            );
            let mut got = vec![0u8; cap];
            arr.read_at(&mut got, 0).unwrap();
            assert!(
                got == model,
                "level {level}: data differs after stripe copies"
            );
            let rep = arr.scrub(false, &mut |_, _| {}).unwrap();
            assert_eq!(rep.mismatches, 0, "level {level}: parity of stripe copies");
            // Degraded: full-stripe writes with member 1 failed, then every byte read back,
            // member 1's from parity.
            arr.fail_member(1, "test");
            let new = pattern(4 * stripe, 13);
            model[2 * stripe..6 * stripe].copy_from_slice(&new);
            arr.write_at(&new, 2 * stripe as u64).unwrap();
            let mut got = vec![0u8; cap];
            arr.read_at(&mut got, 0).unwrap();
            assert!(got == model, "level {level}: degraded data differs");
        }
    }

    /// A member whose reads fail in the ring: the read is served from parity (RAID 6 here),
    /// the member is marked faulty, and a second failure is still survived.
    #[test]
    fn member_read_errors_in_the_ring_are_reconstructed() {
        let dir = tempfile::tempdir().unwrap();
        let (arr, paths) = raid("6", 6, dir.path());
        let model = pattern(arr.capacity() as usize, 3);
        arr.write_at(&model, 0).unwrap();
        assert!(arr.pool.via_ring(1), "{}", arr.member_io());
        let wo1 = OpenOptions::new().write(true).open(&paths[1]).unwrap();
        arr.pool.override_fd(1, wo1.as_raw_fd());
        let mut got = vec![0u8; model.len()];
        arr.read_at(&mut got, 0).unwrap();
        assert!(got == model, "read with one failing member differs");
        assert_eq!(arr.slots()[1].state, SlotState::Faulty);
        let wo4 = OpenOptions::new().write(true).open(&paths[4]).unwrap();
        arr.pool.override_fd(4, wo4.as_raw_fd());
        let mut got = vec![0u8; model.len()];
        arr.read_at(&mut got, 0).unwrap();
        assert!(got == model, "read with two failing members differs");
        assert_eq!(arr.degraded_count(), 2);
        // A third failure is beyond RAID 6: an error, never wrong data.
        let wo0 = OpenOptions::new().write(true).open(&paths[0]).unwrap();
        arr.pool.override_fd(0, wo0.as_raw_fd());
        let mut got = vec![0u8; 65536];
        assert!(arr.read_at(&mut got, 0).is_err());
    }
}
