//! The initial sync `array create` runs, md's resync at creation: every member's data area is
//! written, so the array's redundancy is consistent and its blocks are on the devices. Without
//! it, a read of a region never written reads holes of sparse member files, which the kernel
//! answers from nothing: no device is measured (tens of GB/s where the devices give one or
//! two).
//!
//! Two ways, by what the members are known to hold:
//! - *zeros* (member files `create` made, or whose data areas are all holes): zeros are
//!   written over every member's data area. Consistency comes from the invariant that zero
//!   data has zero redundancy — P and Q of zero data blocks are zero, every mirror copy of
//!   a zero chunk is zero — at every level of a nested array alike, so nothing is computed
//!   or read;
//! - *anything else* (block devices, files that held data and `--force`): the holes of member
//!   files are filled with zeros, which changes nothing a read returns, then md's resync makes
//!   the redundancy agree with the data (parity recomputed, the first mirror copy written
//!   over the others), for each leaf array and then each enclosing array with redundancy.
//!   Both steps keep every byte the array reads, so this is also how an interrupted sync
//!   resumes, whatever was written to the array in between.
//!
//! Progress is kept in every leaf's superblocks ([`Superblock::initial_sync`]): bytes of each
//! member's data area done. It is written as `Some(0)` with the superblocks at creation, so a
//! sync cut short by Ctrl-C, a crash or a kill leaves the array marked as not synced; `status`
//! shows it, `run` warns, and `rebuild` finishes it. The pass of each enclosing array with
//! redundancy keeps its own checkpoint, in that array's bytes, in its description on every
//! leaf below it ([`ArrayDesc::initial_sync`]), recorded only once what it counts is durable
//! and read as the lowest any of those leaves records: a resumed sync goes on from where
//! each level stopped. Every leaf keeps its mark (and the enclosing arrays theirs) until the
//! whole tree is synced.
//!
//! [`Superblock::initial_sync`]: crate::superblock::Superblock::initial_sync
//! [`ArrayDesc::initial_sync`]: crate::superblock::ArrayDesc::initial_sync

use super::{Array, Backing, SlotRt};
use crate::error::ArrayError;
use crate::member::{AlignedBuf, Member};
use crate::shape;
use crate::superblock::SlotState;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes written per request: large, aligned for direct I/O.
const BLOCK: usize = 4 << 20;
/// Bytes of each member's data area done per round, every member of the tree at once.
const ROUND: u64 = 16 << 20;
/// Most threads writing members at once.
const WRITERS: usize = 16;

/// What one member is asked to do in a round: (member, data-area range).
type Job = (Arc<Member>, u64, u64);

/// One part of the initial sync's work, a leaf's members or an enclosing array's pass: (where
/// it stands, `None` once done; its size in its own bytes; the bytes it counts for in the
/// progress).
pub(crate) type Part = (Option<u64>, u64, u64);

impl Array {
    /// The leaf arrays of this tree (itself, if it is one).
    fn leaves(&self) -> Vec<&Array> {
        match &self.backing {
            Backing::Leaf(_) => vec![self],
            Backing::Nested(children) => {
                children.iter().flatten().flat_map(|c| c.leaves()).collect()
            }
        }
    }

    /// The arrays of this tree with children and redundancy, the lowest first.
    fn enclosing_redundant(&self) -> Vec<&Array> {
        let Backing::Nested(children) = &self.backing else {
            return Vec::new();
        };
        let mut out: Vec<&Array> = children
            .iter()
            .flatten()
            .flat_map(|c| c.enclosing_redundant())
            .collect();
        if self.geo.redundancy() > 0 {
            out.push(self);
        }
        out
    }

    /// A leaf's (initial sync progress, data-area size) from its superblock.
    fn sync_state(&self) -> (Option<u64>, u64) {
        match &self.backing {
            Backing::Leaf(leaf) => {
                let sb = leaf.sb.lock().unwrap();
                (sb.initial_sync, sb.data_size)
            }
            Backing::Nested(_) => (None, 0),
        }
    }

    /// Where the initial sync stands when it has not finished: (bytes done, of how many), all
    /// members of every leaf counted and, for each enclosing array with redundancy, its
    /// children's bytes it reads in its pass. `None` once synced.
    pub fn sync_pending(&self) -> Option<(u64, u64)> {
        let leaves = self.leaves();
        let states: Vec<(Option<u64>, u64)> = leaves.iter().map(|l| l.sync_state()).collect();
        if states.iter().all(|(s, _)| s.is_none()) {
            return None;
        }
        let mut parts: Vec<Part> = leaves
            .iter()
            .zip(&states)
            .map(|(l, &(s, n))| (s, n, n * l.geo.members as u64))
            .collect();
        for a in self.enclosing_redundant() {
            parts.push(a.pass_part(a.pass_checkpoint()));
        }
        Some(sync_bytes(&parts))
    }

    /// Where this enclosing array's pass of the initial sync stands, in its bytes: the lowest
    /// checkpoint recorded by the leaves below it that are still syncing (leaves may disagree
    /// after a crash between their updates; the lowest is one all of them reached), 0 where
    /// one records none; its capacity when no leaf below it is syncing (the marks are cleared
    /// only once the whole tree is synced).
    fn pass_checkpoint(&self) -> u64 {
        let mut lowest: Option<u64> = None;
        for l in self.leaves() {
            let Backing::Leaf(leaf) = &l.backing else {
                continue;
            };
            let sb = leaf.sb.lock().unwrap();
            if sb.initial_sync.is_none() {
                continue;
            }
            // This array's description among the leaf's enclosing ones (innermost first).
            let at = l.depth - self.depth - 1;
            let cp = sb.parents.get(at).and_then(|d| d.initial_sync).unwrap_or(0);
            lowest = Some(lowest.map_or(cp, |x| x.min(cp)));
        }
        lowest.unwrap_or(self.capacity()).min(self.capacity())
    }

    /// This enclosing array's pass at `at` as a part of the sync's progress: it reads every
    /// child's share.
    fn pass_part(&self, at: u64) -> Part {
        (
            Some(at),
            self.capacity(),
            self.geo.member_bytes * self.geo.members as u64,
        )
    }

    /// Record on every leaf below this enclosing array that its pass has made its units wholly
    /// below `at` consistent, after flushing what made them so.
    fn record_pass(&self, at: u64) -> Result<(), ArrayError> {
        let Backing::Nested(children) = &self.backing else {
            return Ok(());
        };
        self.flush().map_err(|e| {
            ArrayError::failed(format!(
                "initial sync: cannot flush the {} array: {e}",
                self.geo.level
            ))
        })?;
        for c in children.iter().flatten() {
            c.set_ancestor(0, &|d| d.initial_sync = Some(at))?;
        }
        Ok(())
    }

    /// The present, writable members of a leaf array.
    fn writable_members(&self) -> Vec<Arc<Member>> {
        let Backing::Leaf(leaf) = &self.backing else {
            return Vec::new();
        };
        let slots = self.slots();
        leaf.members
            .iter()
            .enumerate()
            .filter(|(i, _)| Self::writable(&slots, *i as u32))
            .filter_map(|(_, m)| m.clone())
            .collect()
    }

    /// Whether every data area of every leaf member is holes (member files never written
    /// there): the array then reads as zeros everywhere.
    pub fn all_holes(&self) -> Result<bool, ArrayError> {
        for l in self.leaves() {
            let (_, size) = l.sync_state();
            for m in l.writable_members() {
                let holes = m
                    .hole_bytes(0, size)
                    .map_err(|e| ArrayError::io("cannot look for holes in", &m.path, &e))?;
                if holes < size {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The share (0 to 1) of the member bytes behind logical [offset, offset + len) that is
    /// holes of member files: reads there are answered without reaching a device. Member
    /// bytes are those a write of the range may touch (whole rows with their parity, every
    /// mirror copy), down to the leaves of a nested array.
    pub fn hole_share(&self, offset: u64, len: u64) -> Result<f64, ArrayError> {
        let (holes, bytes) = self.holes_in(offset, len)?;
        Ok(holes as f64 / bytes.max(1) as f64)
    }

    /// (hole bytes, member bytes) behind logical [offset, offset + len); see
    /// [`Self::hole_share`]. A member being rebuilt counts only below its checkpoint: above
    /// it, reads reconstruct its data from the others.
    fn holes_in(&self, offset: u64, len: u64) -> Result<(u64, u64), ArrayError> {
        let end = offset + len.min(self.capacity().saturating_sub(offset));
        let slots = self.slots();
        // Pieces of the range that each lie wholly below or above every checkpoint.
        let mut cuts: Vec<u64> = slots
            .iter()
            .filter(|s| s.state == SlotState::Rebuilding)
            .map(|s| s.checkpoint)
            .filter(|&c| c > offset && c < end)
            .collect();
        cuts.sort_unstable();
        cuts.push(end);
        let (mut holes, mut bytes) = (0, 0);
        let mut from = offset;
        for to in cuts {
            if to > from {
                let (h, b) = self.holes_in_piece(&slots, from, to)?;
                holes += h;
                bytes += b;
            }
            from = to;
        }
        Ok((holes, bytes))
    }

    /// [`Self::holes_in`] of logical [from, to), a piece no rebuild checkpoint cuts.
    fn holes_in_piece(
        &self,
        slots: &[SlotRt],
        from: u64,
        to: u64,
    ) -> Result<(u64, u64), ArrayError> {
        let (mut holes, mut bytes) = (0, 0);
        for (m, off, l) in shape::logical_to_member_ranges(&self.geo, from, to - from) {
            if !Self::readable(slots, m, to) {
                continue;
            }
            match &self.backing {
                Backing::Leaf(leaf) => {
                    let Some(Some(member)) = leaf.members.get(m as usize) else {
                        continue;
                    };
                    holes += member.hole_bytes(off, off + l).map_err(|e| {
                        ArrayError::io("cannot look for holes in", &member.path, &e)
                    })?;
                    bytes += l;
                }
                Backing::Nested(children) => {
                    if let Some(Some(c)) = children.get(m as usize) {
                        let (h, b) = c.holes_in(off, l)?;
                        holes += h;
                        bytes += b;
                    }
                }
            }
        }
        Ok((holes, bytes))
    }

    /// Record a leaf's initial sync progress (`None`: synced, and so is the whole tree: the
    /// enclosing arrays' checkpoints go with it) in its superblocks, after flushing its
    /// members: what the progress counts is durable before it is recorded.
    fn record_sync(&self, state: Option<u64>) -> Result<(), ArrayError> {
        let Backing::Leaf(leaf) = &self.backing else {
            return Ok(());
        };
        for m in self.writable_members() {
            m.flush()
                .map_err(|e| ArrayError::io("initial sync: cannot flush member", &m.path, &e))?;
        }
        {
            let mut sb = leaf.sb.lock().unwrap();
            sb.initial_sync = state;
            if state.is_none() {
                for d in sb.parents.iter_mut() {
                    d.initial_sync = None;
                }
            }
        }
        let _g = self.meta_lock.lock().unwrap();
        self.persist()
    }

    /// Run (or resume) the initial sync of this tree; see the module's description. `zeros`:
    /// every member's data area is known to read as zeros, so zeros are written over it all
    /// and nothing is read. `stop` interrupts between rounds (progress is kept, and a later
    /// call resumes); `progress(done, total)` in bytes of the members' data areas and of the
    /// enclosing arrays' passes. Returns true when the array is synced (at once if it was).
    pub fn initial_sync(
        &self,
        zeros: bool,
        stop: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<bool, ArrayError> {
        let leaves = self.leaves();
        let sizes: Vec<u64> = leaves.iter().map(|l| l.sync_state().1).collect();
        let mut done: Vec<Option<u64>> = leaves.iter().map(|l| l.sync_state().0).collect();
        if done.iter().all(Option::is_none) {
            return Ok(true);
        }
        // The enclosing arrays' passes, the lowest first, each from where it stopped.
        let passes = self.enclosing_redundant();
        let mut pass_at: Vec<u64> = passes.iter().map(|a| a.pass_checkpoint()).collect();
        let parts = |done: &[Option<u64>], pass_at: &[u64]| -> Vec<Part> {
            let mut parts: Vec<Part> = leaves
                .iter()
                .zip(done.iter().zip(&sizes))
                .map(|(l, (&d, &n))| (d, n, n * l.geo.members as u64))
                .collect();
            parts.extend(passes.iter().zip(pass_at).map(|(a, &at)| a.pass_part(at)));
            parts
        };
        let sum = |done: &[Option<u64>], pass_at: &[u64]| sync_bytes(&parts(done, pass_at)).0;
        let total = sync_bytes(&parts(&done, &pass_at)).1;
        let reported = std::cell::Cell::new(0);
        let mut report = |d: u64| {
            reported.set(d);
            progress(d, total);
        };
        let record = |done: &[Option<u64>]| -> Result<(), ArrayError> {
            for (l, d) in leaves.iter().zip(done) {
                if d.is_some() {
                    l.record_sync(*d)?;
                }
            }
            Ok(())
        };
        // A leaf of block devices without redundancy (RAID 0 or linear on disks) has nothing
        // to fill and nothing to make agree: done at once, as md does not sync it either.
        if !zeros {
            for (k, l) in leaves.iter().enumerate() {
                let idle =
                    l.geo.redundancy() == 0 && l.writable_members().iter().all(|m| !m.is_file());
                if idle && done[k].is_some() {
                    done[k] = Some(sizes[k]);
                }
            }
        }
        let block = AlignedBuf::new(BLOCK);
        // Progress is written to the superblocks about every 1/64 of the sync (at least every
        // 256 MiB), and whenever it stops.
        let every = (total / 64).max(256 << 20);
        let mut since = 0;
        loop {
            let mut jobs: Vec<Job> = Vec::new();
            let mut ends = done.clone();
            for (k, l) in leaves.iter().enumerate() {
                let Some(from) = done[k].filter(|&d| d < sizes[k]) else {
                    continue;
                };
                let to = (from + ROUND).min(sizes[k]);
                ends[k] = Some(to);
                // Only member files have holes to fill.
                jobs.extend(
                    l.writable_members()
                        .into_iter()
                        .filter(|m| zeros || m.is_file())
                        .map(|m| (m, from, to)),
                );
            }
            if ends == done {
                break;
            }
            if stop.load(Ordering::SeqCst) {
                record(&done)?;
                return Ok(false);
            }
            if let Err(e) = write_round(jobs, zeros, &block) {
                // What was done before this round stays recorded.
                let _ = record(&done);
                return Err(e);
            }
            for (k, l) in leaves.iter().enumerate() {
                let (Some(from), Some(to)) = (done[k], ends[k]) else {
                    continue;
                };
                if !zeros && to > from {
                    l.resync_share(from, to, sizes[k])?;
                }
            }
            since += sum(&ends, &pass_at) - sum(&done, &pass_at);
            done = ends;
            report(sum(&done, &pass_at));
            if since >= every {
                since = 0;
                record(&done)?;
            }
        }
        if !zeros
            && pass_at
                .iter()
                .zip(&passes)
                .any(|(&at, a)| at < a.capacity())
        {
            // The leaves agree within themselves, and are recorded so before any pass records
            // a checkpoint; now each enclosing array with redundancy (the lowest first) over
            // what its children hold, from where its pass stopped.
            record(&done)?;
            for (p, a) in passes.iter().enumerate() {
                let cap = a.capacity();
                if pass_at[p] >= cap {
                    continue;
                }
                let unit = shape::unit(&a.geo);
                let units = cap.div_ceil(unit);
                let pass_every = (cap / 64).max(256 << 20);
                let mut since = 0;
                let mut u = pass_at[p] / unit;
                while u < units {
                    if stop.load(Ordering::SeqCst) {
                        a.record_pass(pass_at[p])?;
                        return Ok(false);
                    }
                    let last = (u + 64).min(units);
                    a.resync_range(u * unit, last * unit)?;
                    since += (last - u) * unit;
                    u = last;
                    pass_at[p] = (u * unit).min(cap);
                    report(sum(&done, &pass_at));
                    if since >= pass_every && u < units {
                        since = 0;
                        a.record_pass(pass_at[p])?;
                    }
                }
                a.record_pass(cap)?;
            }
        }
        // Zeros over every data area leave every level consistent: the passes have nothing
        // to do.
        if reported.get() < total {
            report(total);
        }
        for l in &leaves {
            l.record_sync(None)?;
        }
        Ok(true)
    }

    /// md's resync over the share of this leaf's units that member bytes [from, to) of
    /// `size` stand for. Shares of consecutive ranges meet exactly, and all of them together
    /// are every unit once, whatever the layout maps where.
    fn resync_share(&self, from: u64, to: u64, size: u64) -> Result<(), ArrayError> {
        if self.geo.redundancy() == 0 || size == 0 {
            return Ok(());
        }
        let unit = shape::unit(&self.geo);
        let units = self.capacity().div_ceil(unit) as u128;
        let at = |b: u64| (units * b as u128 / size as u128) as u64;
        let (a, b) = (at(from), at(to));
        if b > a {
            self.resync_range(a * unit, b * unit)?;
        }
        Ok(())
    }
}

/// (bytes done, bytes in all) over `parts`: each counts its bytes in the share of its size
/// it has done.
pub(crate) fn sync_bytes(parts: &[Part]) -> (u64, u64) {
    let (mut done, mut total) = (0, 0);
    for &(at, size, bytes) in parts {
        total += bytes;
        let at = at.unwrap_or(size).min(size);
        done += match size {
            0 => bytes,
            _ => (at as u128 * bytes as u128 / size as u128) as u64,
        };
    }
    (done, total)
}

/// Do one round's jobs, a few members at a time in parallel: zeros over each range (`zeros`),
/// or over its holes only. (Members are flushed when the progress is recorded.)
fn write_round(jobs: Vec<Job>, zeros: bool, block: &AlignedBuf) -> Result<(), ArrayError> {
    let workers = jobs.len().min(WRITERS);
    let queue = Mutex::new(jobs);
    let first_err: Mutex<Option<ArrayError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let Some((m, from, to)) = queue.lock().unwrap().pop() else {
                    return;
                };
                let res = if zeros {
                    m.zero_data(from, to, block)
                } else {
                    m.fill_holes(from, to, block).map(|_| ())
                };
                if let Err(e) = res {
                    let mut f = first_err.lock().unwrap();
                    if f.is_none() {
                        *f = Some(ArrayError::io(
                            "initial sync: cannot write to member",
                            &m.path,
                            &e,
                        ));
                    }
                    // The others stop too: the round failed.
                    queue.lock().unwrap().clear();
                    return;
                }
            });
        }
    });
    match first_err.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
