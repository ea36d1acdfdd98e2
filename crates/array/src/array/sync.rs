//! md's sync actions on an assembled array, one stripe (parity levels) or chunk (mirrors) at a
//! time, each under that unit's lock:
//! - *recovery* of members being rebuilt: raidlab-geometry's [`plan_rebuild_set`] for all the
//!   targets' blocks of the unit at once (one read of the survivors), then the checkpoint
//!   moves past it. An enclosing array recovers the same way onto a child array rebuilt whole
//!   (one that lost more members than it survives and was given new ones): the child takes
//!   the blocks as ordinary writes, then resyncs its own redundancy (and its children's) over
//!   what was written, still under the unit's lock; the progress is a checkpoint in the
//!   child's description on its leaves (`ArrayDesc::rebuild`), so an interrupted rebuild
//!   resumes and assembly knows the child is valid only below it;
//! - *resync* after an unclean stop or at creation: [`plan_check`], then the recomputed parity
//!   (or the first mirror copy) written where it differs — md's resync, which trusts the data;
//! - *scrub* (`check` / `repair`): [`plan_check`], a parity row compared one 4 KiB page at a
//!   time as md does ([`PAGE`]); RAID 6 locates a single bad block of a page from the P/Q
//!   syndromes and repair rebuilds that page of it with [`plan_rebuild`]; a mirror with three or more
//!   copies lets a strict majority of agreeing copies decide, and repair rewrites the others
//!   from it; otherwise (RAID 4/5, two copies, no majority) the bad block cannot be located
//!   and repair rewrites the parity from the data, or the other copies from the first, which
//!   makes the stripe consistent but not necessarily right ([`ScrubReport::unlocated`]).
//!
//! The plans are the ones the simulator costs, so arrays and models share one definition of
//! what rebuilding and scrubbing read, compute and write.

use super::{Array, SlotRt};
use crate::error::ArrayError;
use crate::pq;
use crate::shape;
use crate::superblock::SlotState;
use raidlab_geometry::{
    plan_check, plan_rebuild, plan_rebuild_set, BlockRef, CheckPlan, IoKind, Plan,
};
use raidlab_parity::Block;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ScrubReport {
    pub stripes: u64,
    /// Stripes (rows, or mirror chunks) whose redundancy did not match.
    pub mismatches: u64,
    /// md's mismatch_cnt, in 512-byte sectors: 8 (md's `STRIPE_SECTORS`) per 4 KiB page of
    /// a parity row whose parity does not agree, as md counts; a mirror chunk's sectors per
    /// mismatched chunk (md counts mirrors per resync block of up to 64 KiB instead).
    pub mismatch_sectors: u64,
    pub repaired: bool,
    /// (row or chunk, member located as bad where parity or a majority of copies could tell;
    /// several, comma-joined, when a majority outvoted more than one copy)
    pub located: Vec<(u64, Option<String>)>,
    /// Mismatches whose bad block could not be located (RAID 4/5; RAID 6 with more than one
    /// bad block in one 4 KiB page of the row; mirrors without a strict majority of agreeing copies). `--repair` made
    /// them consistent by rewriting the parity from the data, or the other copies from the
    /// first: the data read from them may still be the wrong one.
    pub unlocated: u64,
}

/// Write intent held in leaf bitmaps: (bitmap, logical offset, length) in each leaf's space.
/// Dropping it ends the intent (the bits may then clear once idle and durable).
pub(super) struct Intent<'a> {
    held: Vec<(&'a crate::bitmap::Bitmap, u64, u64)>,
}

impl Drop for Intent<'_> {
    fn drop(&mut self) {
        for (bm, offset, len) in self.held.drain(..) {
            bm.end_write(offset, len);
        }
    }
}

/// What a check of one unit found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    Consistent,
    /// Redundancy disagrees; RAID 6 (from the syndromes) and mirrors of three or more copies
    /// (by majority) may name the members holding the bad blocks.
    Mismatch {
        /// Members located as holding bad blocks.
        located: Vec<u32>,
        /// md's mismatch_cnt for the unit: [`PAGE`]'s sectors per mismatched page of a
        /// parity row, a mirror chunk's sectors.
        sectors: u64,
        /// Some mismatch (a page of a parity row, a mirror chunk) was not located.
        unlocated: bool,
    },
}

/// md checks a parity row one 4 KiB page at a time (a stripe head, `STRIPE_SIZE`) and adds
/// `STRIPE_SECTORS` (8) to mismatch_cnt for each page whose parity does not agree
/// (drivers/md/raid5.c, `handle_parity_checks5` and `handle_parity_checks6`); RAID 6 locates
/// and repairs a bad block page by page here too, so bad blocks of two members in different
/// pages of one row are each located.
const PAGE: u64 = 4096;

/// What to do with a unit that does not agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnMismatch {
    /// Count it only (scrub --check).
    Count,
    /// Rewrite parity / other copies from the data / first copy (resync).
    RewriteRedundancy,
    /// Rebuild a located bad block, else rewrite redundancy (scrub --repair).
    Repair,
}

/// The plans of several steps as one (steps are independent; one parallel batch per phase).
fn merged(kind: IoKind, offset: u64, len: u64, plans: Vec<Plan>) -> Plan {
    Plan {
        kind,
        offset,
        len,
        extents: vec![(offset, len)],
        steps: plans.into_iter().flat_map(|p| p.steps).collect(),
    }
}

/// A member's blocks left in a buffer: (member, member offset, offset in the buffer, length).
type Span = (u32, u64, u64, u64);

/// A rebuild plan whose writes (to the members being rebuilt) read from blocks the plan
/// computes or reads itself, turned into one that leaves those blocks in a caller's buffer
/// instead of writing them: each member's writes laid out contiguously by member offset.
/// Returns the plan, the spans (member, member offset, offset in the buffer, length) and the
/// buffer's size; `None` when a member's writes are not one contiguous range, or a written
/// block is the caller's already.
fn redirect_writes(plan: &Plan) -> Option<(Plan, Vec<Span>, u64)> {
    // Per member: (lowest offset, end, bytes).
    let mut range: std::collections::BTreeMap<u32, (u64, u64, u64)> = Default::default();
    for w in plan.steps.iter().flat_map(|s| &s.writes) {
        if matches!(w.block, BlockRef::User { .. }) {
            return None;
        }
        let r = range
            .entry(w.member)
            .or_insert((w.offset, w.offset + w.len, 0));
        r.0 = r.0.min(w.offset);
        r.1 = r.1.max(w.offset + w.len);
        r.2 += w.len;
    }
    let mut base = std::collections::BTreeMap::new();
    let mut spans = Vec::new();
    let mut at = 0;
    for (&m, &(lo, hi, bytes)) in &range {
        if bytes != hi - lo {
            return None;
        }
        base.insert(m, (lo, at));
        spans.push((m, lo, at, hi - lo));
        at += hi - lo;
    }
    let mut out = plan.clone();
    for step in &mut out.steps {
        let mut map: Vec<(BlockRef, BlockRef)> = Vec::new();
        for w in &step.writes {
            let (lo, b) = base[&w.member];
            let to = BlockRef::User {
                at: b + w.offset - lo,
            };
            if map.iter().any(|(from, _)| *from == w.block) {
                // One block written to two members: keep the plan as it is.
                return None;
            }
            map.push((w.block, to));
        }
        let sub = |b: &mut BlockRef| {
            if let Some((_, to)) = map.iter().find(|(from, _)| from == b) {
                *b = *to;
            }
        };
        let sub_slot = |s: &mut raidlab_geometry::Slot| match s {
            raidlab_geometry::Slot::Known(b) | raidlab_geometry::Slot::Missing(b) => sub(b),
            raidlab_geometry::Slot::Zero => {}
        };
        for r in &mut step.reads {
            sub(&mut r.block);
        }
        for c in &mut step.compute {
            match c {
                raidlab_geometry::Compute::Xor { inputs, out, .. } => {
                    inputs.iter_mut().for_each(sub);
                    sub(out);
                }
                raidlab_geometry::Compute::GenPq { data, p, q, .. } => {
                    data.iter_mut().flatten().for_each(sub);
                    sub(p);
                    sub(q);
                }
                raidlab_geometry::Compute::RecoverPq { data, p, q, .. } => {
                    data.iter_mut().for_each(sub_slot);
                    sub_slot(p);
                    sub_slot(q);
                }
            }
        }
        step.writes.clear();
    }
    Some((out, spans, at))
}

/// The block `o` bytes into block `b` of the caller's buffer.
fn at(b: BlockRef, o: u64) -> BlockRef {
    match b {
        BlockRef::User { at } => BlockRef::User { at: at + o },
        BlockRef::Scratch(_) => unreachable!("check plans keep every block in the caller's buffer"),
    }
}

/// The member offset `cp` read `member`'s block `b` from.
fn read_offset(cp: &CheckPlan, member: u32, b: BlockRef) -> u64 {
    cp.plan.steps[0]
        .reads
        .iter()
        .find(|r| r.member == member && r.block == b)
        .map(|r| r.offset)
        .expect("every compared block was read")
}

fn block(buf: &[u8], b: BlockRef, len: u64) -> &[u8] {
    match b {
        BlockRef::User { at } => &buf[at as usize..(at + len) as usize],
        BlockRef::Scratch(_) => unreachable!("check plans keep every block in the caller's buffer"),
    }
}

impl Array {
    fn plan_failed(&self, e: raidlab_geometry::PlanError) -> ArrayError {
        let msg = format!("{} array: {e}", self.geo.level);
        if e.is_usage() {
            ArrayError::usage(msg)
        } else {
            ArrayError::failed(msg)
        }
    }

    /// Run a plan; a member error marks the member faulty and fails this unit. An enclosing
    /// array's rewrites (resync, rebuild, repair may write two children of one stripe) hold
    /// write intent in the leaves below over the plan's logical range while they run.
    fn run_plan(&self, plan: &Plan, buf: &mut [u8]) -> Result<(), ArrayError> {
        let writes = plan.steps.iter().any(|s| !s.writes.is_empty());
        let _intent = match &self.backing {
            super::Backing::Nested(_) if writes => Some(
                self.start_intent(plan.offset, plan.len)
                    .map_err(|e| ArrayError::failed(format!("cannot record write intent: {e}")))?,
            ),
            _ => None,
        };
        let errs = self.exec_plan(plan, buf.as_mut_ptr(), buf.len());
        self.take_errs(errs)
    }

    /// The byte ranges (member offset, length) member `m` holds of unit `u`.
    fn member_ranges(&self, m: u32, u: u64) -> Vec<(u64, u64)> {
        let c = self.geo.chunk_bytes;
        if self.geo.level.has_parity() {
            vec![(u * c, c)]
        } else {
            shape::chunk_copies(&self.geo, u)
                .into_iter()
                .filter(|x| x.member == m)
                .map(|x| (x.offset, c))
                .collect()
        }
    }

    /// Number of units (rows or chunks) of a redundant array.
    fn units(&self) -> u64 {
        self.capacity() / shape::unit(&self.geo)
    }

    /// Recovery of units `first..=last`: every member being rebuilt and not yet past a unit
    /// gets its blocks of the unit from one [`plan_rebuild_set`], so the survivors are read
    /// once per row however many members are rebuilt (mirror copies at different member
    /// offsets are planned per offset); all the units' plans run as one parallel batch under
    /// their locks, then the checkpoint moves past them. A leaf takes one unit at a time; an
    /// enclosing array rebuilding a child whole takes as many as cover one of the child's
    /// own units, so the child's redundancy is resynced once per child row.
    fn rebuild_units(&self, first: u64, last: u64) -> Result<(), ArrayError> {
        let _g = self.locks.lock(first..=last);
        let slots = self.slots();
        let unit = shape::unit(&self.geo);
        let mut plans = Vec::new();
        // (target, member offset, length) written.
        let mut written: Vec<(u32, u64, u64)> = Vec::new();
        for u in first..=last {
            let end = (u + 1) * unit;
            let failed = self.failed_for(&slots, u);
            // Member range → the targets holding it.
            let mut ranges: Vec<((u64, u64), Vec<u32>)> = Vec::new();
            for t in 0..slots.len() as u32 {
                if !Self::writable(&slots, t) || Self::readable(&slots, t, end) {
                    continue;
                }
                for r in self.member_ranges(t, u) {
                    match ranges.iter_mut().find(|(x, _)| *x == r) {
                        Some((_, ts)) => ts.push(t),
                        None => ranges.push((r, vec![t])),
                    }
                }
            }
            for ((off, len), targets) in &ranges {
                plans.push(
                    plan_rebuild_set(&self.geo, targets, *off, *len, &failed)
                        .map_err(|e| self.plan_failed(e))?,
                );
                written.extend(targets.iter().map(|&t| (t, *off, *len)));
            }
        }
        let len = (last + 1 - first) * unit;
        let plan = merged(IoKind::Write, first * unit, len, plans);
        if let super::Backing::Nested(children) = &self.backing {
            if let Some((plan, spans, bytes)) = redirect_writes(&plan) {
                // The children's blocks computed into one buffer, then written to each child
                // as one extent: whole rows of the child become full-stripe writes, whose
                // parity is computed from the data alone.
                let mut buf = vec![0u8; bytes as usize];
                self.run_plan(&plan, &mut buf)?;
                for (t, off, at, l) in spans {
                    let Some(dev) = self.pool.dev(t as usize) else {
                        continue;
                    };
                    if let Err(e) = dev.write(&buf[at as usize..(at + l) as usize], off) {
                        self.fail_member(t as usize, &e.to_string());
                        return Err(ArrayError::failed(format!("member I/O failed: {e}")));
                    }
                    let Some(Some(c)) = children.get(t as usize) else {
                        continue;
                    };
                    // Rows only partly written (or a child with arrays below it) are resynced.
                    let cu = shape::unit(&c.geo);
                    let leaf = matches!(c.backing, super::Backing::Leaf(_));
                    if !(leaf && off % cu == 0 && l % cu == 0) {
                        c.resync_subtree(off, l)?;
                    }
                }
                self.advance_checkpoint((last + 1) * unit);
                return Ok(());
            }
        }
        self.run_plan(&plan, &mut [])?;
        // A child array rebuilt whole from this array's redundancy took the blocks as plain
        // writes over whatever its new members held: its own parity (and its children's) is
        // made consistent over what was written, still under the units' locks.
        if let super::Backing::Nested(children) = &self.backing {
            written.sort_unstable();
            let mut spans: Vec<(u32, u64, u64)> = Vec::new();
            for (t, o, l) in written {
                match spans.last_mut() {
                    Some(s) if s.0 == t && s.1 + s.2 >= o => s.2 = s.2.max(o + l - s.1),
                    _ => spans.push((t, o, l)),
                }
            }
            for (t, o, l) in spans {
                if let Some(Some(c)) = children.get(t as usize) {
                    c.resync_subtree(o, l)?;
                }
            }
        }
        // Still holding the units' locks: a write planned after this sees them in sync.
        self.advance_checkpoint((last + 1) * unit);
        Ok(())
    }

    /// How many units [`Self::rebuild_units`] takes at once for these targets: for an
    /// enclosing parity or RAID 1 array (one chunk of each member per unit), a multiple of
    /// what covers the largest of the target children's own units (at most 64 units), about
    /// 256 KiB of each child; else 1.
    fn rebuild_group(&self, targets: &[usize]) -> u64 {
        let super::Backing::Nested(children) = &self.backing else {
            return 1;
        };
        if !(self.geo.level.has_parity() || self.geo.level == raidlab_geometry::Level::Raid1) {
            return 1;
        }
        let per_unit = self.geo.chunk_bytes.max(1);
        let Some(row) = targets
            .iter()
            .filter_map(|&t| children.get(t).and_then(|c| c.as_ref()))
            .map(|c| (shape::unit(&c.geo) / per_unit).clamp(1, 64))
            .max()
        else {
            return 1;
        };
        // Whole child rows, at least 256 KiB of each child per batch: fewer, larger writes
        // (larger batches measured slower: nothing overlaps the reads and writes of one).
        row * ((256 << 10) / per_unit / row).max(1)
    }

    /// Make redundancy consistent over logical [offset, offset+len) of this array and of every
    /// array below it (the lowest levels first, each level reading through the ones below).
    pub(super) fn resync_subtree(&self, offset: u64, len: u64) -> Result<(), ArrayError> {
        if len == 0 {
            return Ok(());
        }
        if let super::Backing::Nested(children) = &self.backing {
            for (m, o, l) in shape::logical_to_member_ranges(&self.geo, offset, len) {
                if let Some(Some(c)) = children.get(m as usize) {
                    let l = l.min(c.capacity().saturating_sub(o));
                    c.resync_subtree(o, l)?;
                }
            }
        }
        self.resync_range(offset, offset + len)
    }

    /// Record in a child array being rebuilt whole how far this array's rebuild has come
    /// (`None`: it holds its data again). The mark sits in the child's own description on
    /// every leaf below it, so assembly knows the child is valid only below the checkpoint.
    fn set_child_mark(&self, child: &Array, mark: Option<u64>) -> Result<(), ArrayError> {
        child.set_rebuild_mark(0, mark)
    }

    /// Set the rebuild mark of the description `up` levels above this array's own (0 = its
    /// own) on every leaf of this array.
    fn set_rebuild_mark(&self, up: usize, mark: Option<u64>) -> Result<(), ArrayError> {
        match &self.backing {
            super::Backing::Leaf(leaf) => {
                {
                    let mut sb = leaf.sb.lock().unwrap();
                    let d = if up == 0 {
                        Some(&mut sb.array)
                    } else {
                        sb.parents.get_mut(up - 1)
                    };
                    match d {
                        Some(d) if d.rebuild != mark => d.rebuild = mark,
                        _ => return Ok(()),
                    }
                }
                let _g = self.meta_lock.lock().unwrap();
                self.persist()
            }
            super::Backing::Nested(children) => {
                for c in children.iter().flatten() {
                    c.set_rebuild_mark(up + 1, mark)?;
                }
                Ok(())
            }
        }
    }

    /// Persist this array's state and, for an enclosing array, the rebuild checkpoints of the
    /// children being rebuilt whole (`targets`).
    fn persist_rebuild(&self, targets: &[usize]) -> Result<(), ArrayError> {
        self.persist()?;
        if let super::Backing::Nested(children) = &self.backing {
            let slots = self.slots();
            for &t in targets {
                let Some(Some(c)) = children.get(t) else {
                    continue;
                };
                match slots[t].state {
                    SlotState::Rebuilding => self.set_child_mark(c, Some(slots[t].checkpoint))?,
                    SlotState::Active => self.set_child_mark(c, None)?,
                    // Failed again: its own leaves record why; keep the mark as it was.
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Check unit `u` of an array whose members are all in sync, and act on a mismatch.
    fn check_unit(&self, u: u64, on: OnMismatch) -> Result<Found, ArrayError> {
        let cp: CheckPlan = plan_check(&self.geo, u).map_err(|e| self.plan_failed(e))?;
        let mut buf = vec![0u8; cp.buffer as usize];
        self.run_plan(&cp.plan, &mut buf)?;
        if self.geo.level.has_parity() {
            return self.check_row(u, on, &cp, &mut buf);
        }
        let bad: Vec<_> = cp
            .agree
            .iter()
            .filter(|a| block(&buf, a.stored, a.len) != block(&buf, a.expected, a.len))
            .collect();
        if bad.is_empty() {
            return Ok(Found::Consistent);
        }
        // Mirrors of three or more copies: the copies outside a strict majority that agree.
        // Two-way mirrors cannot tell.
        let mut majority = None;
        let located: Vec<u32> = if cp.agree.len() >= 2 {
            // Every copy: (member, block); the first is what the others are compared with.
            let first = cp.agree[0].expected;
            let len = cp.agree[0].len;
            let first_member = cp.plan.steps[0]
                .reads
                .iter()
                .find(|r| r.block == first)
                .map(|r| r.member)
                .expect("the first copy was read");
            let copies: Vec<(u32, BlockRef)> = std::iter::once((first_member, first))
                .chain(cp.agree.iter().map(|a| (a.member, a.stored)))
                .collect();
            let n = copies.len();
            let winner = copies.iter().find(|(_, b)| {
                let same = copies
                    .iter()
                    .filter(|(_, o)| block(&buf, *o, len) == block(&buf, *b, len))
                    .count();
                2 * same > n
            });
            match winner {
                Some(&(_, good)) => {
                    majority = Some(good);
                    copies
                        .iter()
                        .filter(|(_, b)| block(&buf, *b, len) != block(&buf, good, len))
                        .map(|(m, _)| *m)
                        .collect()
                }
                None => vec![],
            }
        } else {
            vec![]
        };
        let mut writes = Vec::new();
        match (on, majority) {
            (OnMismatch::Count, _) => {}
            (OnMismatch::Repair, Some(good)) => {
                // A mirror's majority: every other copy is rewritten from it.
                for &m in &located {
                    let (stored, len) = if let Some(a) = cp.agree.iter().find(|a| a.member == m) {
                        (a.stored, a.len)
                    } else {
                        (cp.agree[0].expected, cp.agree[0].len)
                    };
                    writes.push(raidlab_geometry::MemberIo {
                        member: m,
                        offset: read_offset(&cp, m, stored),
                        len,
                        block: good,
                    });
                }
            }
            _ => {
                for a in &bad {
                    writes.push(raidlab_geometry::MemberIo {
                        member: a.member,
                        offset: read_offset(&cp, a.member, a.stored),
                        len: a.len,
                        block: a.expected,
                    });
                }
            }
        }
        self.write_fixes(u, &cp, Vec::new(), writes, &mut buf)?;
        Ok(Found::Mismatch {
            unlocated: located.is_empty(),
            located,
            sectors: self.geo.chunk_bytes / 512,
        })
    }

    /// [`Array::check_unit`] of a parity row, read into `buf` by `cp`: compared, located
    /// (RAID 6, from the syndromes) and repaired one [`PAGE`] at a time, as md does.
    fn check_row(
        &self,
        u: u64,
        on: OnMismatch,
        cp: &CheckPlan,
        buf: &mut [u8],
    ) -> Result<Found, ArrayError> {
        let c = cp.agree[0].len;
        let page = PAGE.min(c);
        let zeros = vec![0u8; page as usize];
        let (mut located, mut unlocated, mut pages) = (Vec::new(), false, 0u64);
        let (mut plans, mut writes) = (Vec::new(), Vec::new());
        for o in (0..c).step_by(page as usize) {
            let len = page.min(c - o);
            let bad: Vec<_> = cp
                .agree
                .iter()
                .filter(|a| block(buf, at(a.stored, o), len) != block(buf, at(a.expected, o), len))
                .collect();
            if bad.is_empty() {
                continue;
            }
            pages += 1;
            // RAID 6: the one block of the page that explains both syndromes (Anvin's
            // single-disk corruption rule, over md's syndrome source list), if one does.
            // RAID 4/5 cannot tell.
            let who = if cp.sources.is_empty() {
                None
            } else {
                let srcs: Vec<&[u8]> = cp
                    .sources
                    .iter()
                    .map(|s| s.map_or(&zeros[..len as usize], |(_, b)| block(buf, at(b, o), len)))
                    .collect();
                let (p, q) = (&cp.agree[0], &cp.agree[1]);
                match pq::check(
                    &srcs,
                    block(buf, at(p.stored, o), len),
                    Some(block(buf, at(q.stored, o), len)),
                ) {
                    pq::Syndrome::Bad(Block::P) => Some(p.member),
                    pq::Syndrome::Bad(Block::Q) => Some(q.member),
                    pq::Syndrome::Bad(Block::Data(z)) => cp.sources[z].map(|(m, _)| m),
                    _ => None,
                }
            };
            match who {
                Some(m) if !located.contains(&m) => located.push(m),
                Some(_) => {}
                None => unlocated = true,
            }
            let parity_member = |m: u32| cp.agree.iter().any(|a| a.member == m);
            match (on, who) {
                (OnMismatch::Count, _) => {}
                (OnMismatch::Repair, Some(m)) if !parity_member(m) => {
                    // A located data block: this page of it rebuilt from the rest of the row.
                    plans.push(
                        plan_rebuild(&self.geo, m, u * c + o, len, &[m])
                            .map_err(|e| self.plan_failed(e))?,
                    );
                }
                _ => {
                    for a in &bad {
                        writes.push(raidlab_geometry::MemberIo {
                            member: a.member,
                            offset: read_offset(cp, a.member, a.stored) + o,
                            len,
                            block: at(a.expected, o),
                        });
                    }
                }
            }
        }
        if pages == 0 {
            return Ok(Found::Consistent);
        }
        self.write_fixes(u, cp, plans, writes, buf)?;
        Ok(Found::Mismatch {
            located,
            sectors: pages * page / 512,
            unlocated,
        })
    }

    /// Run the repairs of unit `u`: `plans` (rebuilt blocks) and `writes` of blocks of `buf`
    /// (the check's buffer) over the members, as one plan.
    fn write_fixes(
        &self,
        u: u64,
        cp: &CheckPlan,
        mut plans: Vec<Plan>,
        writes: Vec<raidlab_geometry::MemberIo>,
        buf: &mut [u8],
    ) -> Result<(), ArrayError> {
        if !writes.is_empty() {
            let mut step = cp.plan.steps[0].clone();
            step.reads.clear();
            step.compute.clear();
            step.writes = writes;
            plans.push(Plan {
                kind: IoKind::Write,
                steps: vec![step],
                ..cp.plan.clone()
            });
        }
        if !plans.is_empty() {
            let unit = shape::unit(&self.geo);
            self.run_plan(&merged(IoKind::Write, u * unit, unit, plans), buf)?;
        }
        Ok(())
    }

    /// Resync unit `u` with members missing or behind: recompute every present parity block
    /// (parity levels) or copy the first readable copy over the others (mirrors), each through
    /// [`plan_rebuild`] with the rewritten member treated as lost.
    fn resync_degraded_unit(&self, u: u64) -> Result<(), ArrayError> {
        let slots = self.slots();
        let unit = shape::unit(&self.geo);
        let end = (u + 1) * unit;
        let failed = self.failed_for(&slots, u);
        let mut targets = Vec::new();
        if self.geo.level.has_parity() {
            let sl = self.geo.stripe_layout(u).expect("parity level");
            targets.extend([sl.p, sl.q].into_iter().flatten());
        } else {
            let copies = shape::chunk_copies(&self.geo, u);
            let first = copies
                .iter()
                .position(|x| Self::readable(&slots, x.member, end));
            if let Some(f) = first {
                targets.extend(copies[f + 1..].iter().map(|x| x.member));
            }
        }
        let mut plans = Vec::new();
        for t in targets {
            if !Self::readable(&slots, t, end) {
                continue;
            }
            let mut lost = failed.clone();
            lost.push(t);
            if !self.geo.survives(&lost) {
                // RAID 5 missing a member: its parity is the only record of the lost block and
                // has nothing independent to be recomputed from.
                continue;
            }
            for (off, len) in self.member_ranges(t, u) {
                plans.push(
                    plan_rebuild(&self.geo, t, off, len, &lost).map_err(|e| self.plan_failed(e))?,
                );
            }
        }
        self.run_plan(&merged(IoKind::Write, u * unit, unit, plans), &mut [])
    }

    fn resync_unit(&self, u: u64) -> Result<(), ArrayError> {
        let _g = self.locks.lock(std::iter::once(u));
        self.units_resynced.fetch_add(1, Ordering::Relaxed);
        let slots = self.slots();
        if slots.iter().all(|s| s.state == SlotState::Active) {
            self.check_unit(u, OnMismatch::RewriteRedundancy)?;
            Ok(())
        } else {
            self.resync_degraded_unit(u)
        }
    }

    /// Make redundancy consistent again over logical [start, end): parity recomputed from the
    /// data, or the first readable mirror copy written over the others, where they differ.
    pub fn resync_range(&self, start: u64, end: u64) -> Result<(), ArrayError> {
        if self.geo.redundancy() == 0 {
            return Ok(());
        }
        let end = end.min(self.capacity());
        let unit = shape::unit(&self.geo);
        for u in start / unit..end.div_ceil(unit) {
            self.resync_unit(u)?;
        }
        Ok(())
    }

    /// Resync the regions the bitmap marks (after an unclean stop), then clear it.
    pub fn resync_dirty(&self) -> Result<u64, ArrayError> {
        let super::Backing::Leaf(leaf) = &self.backing else {
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
        if self.depth == 0 {
            let all = leaf.bitmap.clear_all();
            self.persist_bitmap(leaf, &all)
                .map_err(|e| ArrayError::failed(format!("cannot write bitmap: {e}")))?;
        }
        // Under an enclosing array the bits stay (pinned) until every level above has
        // resynced too: see [`Array::release_found_bits`].
        Ok(bytes.min(self.capacity()))
    }

    /// Every level of this tree has resynced what its leaves' bitmaps marked at assembly: the
    /// bits found then may be cleared like any other (lazily, once idle).
    pub fn release_found_bits(&self) {
        match &self.backing {
            super::Backing::Leaf(leaf) => leaf.bitmap.release_found(),
            super::Backing::Nested(children) => children
                .iter()
                .flatten()
                .for_each(|c| c.release_found_bits()),
        }
    }

    /// Mark the write intent of a write to logical [offset, offset+len) of this array, before
    /// any of its member writes starts; the intent lasts until the returned guard is dropped
    /// (after every member write of it has completed). A leaf sets its own bitmap's bits. An
    /// enclosing array with redundancy sets, in every leaf below it, the bits under the
    /// stripes (or mirror chunks) the write may touch — the invariant stated in
    /// [`crate::bitmap`]. One without redundancy (RAID 0 over RAID 5s) has no stripe of its
    /// own to keep consistent: each child marks its own intent when written.
    pub(super) fn start_intent(&self, offset: u64, len: u64) -> std::io::Result<Intent<'_>> {
        let mut intent = Intent { held: Vec::new() };
        match &self.backing {
            super::Backing::Leaf(_) => self.intent_below(offset, len, &mut intent)?,
            super::Backing::Nested(_) if self.geo.redundancy() > 0 => {
                self.intent_below(offset, len, &mut intent)?
            }
            super::Backing::Nested(_) => {}
        }
        Ok(intent)
    }

    fn intent_below<'a>(
        &'a self,
        offset: u64,
        len: u64,
        intent: &mut Intent<'a>,
    ) -> std::io::Result<()> {
        match &self.backing {
            super::Backing::Leaf(leaf) => {
                leaf.bitmap
                    .start_write(offset, len, |d| self.persist_bitmap(leaf, d))?;
                intent.held.push((&leaf.bitmap, offset, len));
            }
            super::Backing::Nested(children) => {
                let slots = self.slots();
                for (m, off, l) in shape::logical_to_member_ranges(&self.geo, offset, len) {
                    let Some(Some(child)) = children.get(m as usize) else {
                        continue;
                    };
                    if !Self::writable(&slots, m) {
                        continue;
                    }
                    // A child that cannot record intent cannot take the write either: its
                    // own write path fails the same way, and this array then fails it.
                    let _ = child.intent_below(off, l, intent);
                }
            }
        }
        Ok(())
    }

    /// Members being rebuilt are valid up to logical position `pos`.
    pub(super) fn advance_checkpoint(&self, pos: u64) {
        let mut slots = self.slots.write().unwrap();
        for s in slots.iter_mut() {
            if s.state == SlotState::Rebuilding && s.checkpoint < pos {
                s.checkpoint = pos;
            }
        }
    }

    pub(super) fn take_errs(&self, errs: Vec<(usize, std::io::Error)>) -> Result<(), ArrayError> {
        if errs.is_empty() {
            return Ok(());
        }
        let msg = errs[0].1.to_string();
        for (m, e) in errs {
            if m < self.geo.members as usize {
                self.fail_member(m, &e.to_string());
            }
        }
        Err(ArrayError::failed(format!("member I/O failed: {msg}")))
    }

    /// Rebuild slots in `Rebuilding` state from `checkpoint` on, persisting progress every
    /// `persist_every` bytes. `progress(done, total)` is called as it goes; `stop` interrupts
    /// (the checkpoint is kept, so a later rebuild resumes). Returns true when finished.
    pub fn rebuild(
        &self,
        persist_every: u64,
        stop: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<bool, ArrayError> {
        let cap = self.capacity();
        let targets: Vec<usize> = self
            .slots()
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state == SlotState::Rebuilding)
            .map(|(i, _)| i)
            .collect();
        if targets.is_empty() {
            return Ok(true);
        }
        if self.geo.redundancy() == 0 {
            return Err(ArrayError::usage(format!(
                "{} has no redundancy to rebuild from",
                self.geo.level
            )));
        }
        let start = targets
            .iter()
            .map(|&i| self.slots()[i].checkpoint)
            .min()
            .unwrap_or(0);
        let unit = shape::unit(&self.geo);
        let group = self.rebuild_group(&targets);
        let units = self.units();
        let mut since = 0;
        let mut u = start / unit;
        while u < units {
            if stop.load(Ordering::SeqCst) {
                self.persist_rebuild(&targets)?;
                return Ok(false);
            }
            let last = ((u / group + 1) * group).min(units) - 1;
            self.rebuild_units(u, last)?;
            since += (last + 1 - u) * unit;
            if since >= persist_every {
                since = 0;
                self.persist_rebuild(&targets)?;
            }
            progress(((last + 1) * unit).min(cap), cap);
            u = last + 1;
        }
        // A child rebuilt whole may be larger than what this array uses of it: its tail is
        // made consistent too, so its own scrub finds nothing to repair.
        if let super::Backing::Nested(children) = &self.backing {
            let used = self.geo.member_used_bytes();
            for &t in &targets {
                if let Some(Some(c)) = children.get(t) {
                    c.resync_subtree(used, c.capacity().saturating_sub(used))?;
                }
            }
        }
        {
            let mut slots = self.slots.write().unwrap();
            for &t in &targets {
                if slots[t].state == SlotState::Rebuilding {
                    slots[t] = SlotRt {
                        state: SlotState::Active,
                        checkpoint: 0,
                    };
                }
            }
        }
        self.persist_rebuild(&targets)?;
        Ok(true)
    }

    /// Scrub: check every stripe's redundancy; with `repair`, fix what is found.
    pub fn scrub(
        &self,
        repair: bool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ScrubReport, ArrayError> {
        if self.geo.redundancy() == 0 {
            return Err(ArrayError::usage(format!(
                "{} has no redundancy to scrub",
                self.geo.level
            )));
        }
        let degraded = || {
            ArrayError::usage(
                "the array is degraded: scrub needs every member active (rebuild first)"
                    .to_string(),
            )
        };
        if self.slots().iter().any(|s| s.state != SlotState::Active) {
            return Err(degraded());
        }
        let mut rep = ScrubReport::default();
        let cap = self.capacity();
        let unit = shape::unit(&self.geo);
        let on = if repair {
            OnMismatch::Repair
        } else {
            OnMismatch::Count
        };
        for u in 0..self.units() {
            let found = {
                let _g = self.locks.lock(std::iter::once(u));
                if self.slots().iter().any(|s| s.state != SlotState::Active) {
                    return Err(ArrayError::failed(
                        "a member failed during the scrub; rebuild, then scrub again",
                    ));
                }
                self.check_unit(u, on)?
            };
            rep.stripes += 1;
            if let Found::Mismatch {
                located: ms,
                sectors,
                unlocated,
            } = found
            {
                rep.mismatches += 1;
                rep.mismatch_sectors += sectors;
                if unlocated {
                    rep.unlocated += 1;
                    rep.located.push((u, None));
                } else {
                    let names: Vec<&str> = ms
                        .iter()
                        .map(|&m| self.labels[m as usize].as_str())
                        .collect();
                    rep.located.push((u, Some(names.join(", "))));
                }
            }
            progress(((u + 1) * unit).min(cap), cap);
        }
        rep.repaired = repair;
        Ok(rep)
    }
}

#[cfg(test)]
mod tests;
