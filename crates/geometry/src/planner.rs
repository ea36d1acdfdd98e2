//! Building plans: splitting a logical extent by stripe and choosing md's strategy per row.

use crate::plan::{BlockRef, Compute, IoKind, MemberIo, Plan, Slot, Step, Strategy};
use crate::{Geometry, Layout, Level, PlanError, StripeLayout};

/// Knobs of the planner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions<'a> {
    /// Added to the mirror read rule's copy index, so a caller can rotate reads over the copies
    /// (e.g. by request or job number). 0 = plain rule.
    pub mirror_bias: u64,
    /// Current load per member (e.g. I/Os in flight, or queued bytes), indexed by member. When
    /// given, a mirror read goes to the surviving copy with the least load; ties keep the plain
    /// rule's order. The caller keeps it current — the planner stays pure.
    pub member_load: Option<&'a [u64]>,
}

/// Plan a logical read or write of `len` bytes at `offset` with the members in `failed`
/// missing. See [`plan_with`].
pub fn plan(
    geom: &Geometry,
    kind: IoKind,
    offset: u64,
    len: u64,
    failed: &[u32],
) -> Result<Plan, PlanError> {
    plan_with(geom, kind, offset, len, failed, &PlanOptions::default())
}

/// Plan a logical I/O.
///
/// Rules (md's, with sources):
/// * Parity writes (raid5.c `handle_stripe_dirtying`): a row whose data blocks are all
///   overwritten is a full-stripe write (no pre-reads). Otherwise read-modify-write needs the
///   old data being overwritten plus the surviving parity; reconstruct-write needs the data not
///   being overwritten; md counts 1 per block to read, 2 × members per block on a failed
///   member, and takes rmw when its count is strictly smaller, rcw on a tie (default
///   `rmw_level`). When the chosen strategy needs old data of a failed member, that data is
///   rebuilt from parity first ([`Strategy::DegradedWrite`], md's compute-then-write). With
///   every parity member failed md still pre-reads for rcw; so does this planner (the parity
///   is then not written). A failed member is never read or written; surviving parity stays
///   consistent with the data it stands for.
/// * Parity reads: healthy members are read directly; a failed member's rows are rebuilt from
///   every surviving data member of the stripe and P (or Q, or P and Q for two failures).
/// * Mirror reads (md's nearest-head balancing depends on head positions, which a pure planner
///   has not): RAID 1 reads chunk-sized granule g from surviving copy number
///   `(g + mirror_bias) mod survivors`; RAID 10 near/offset layouts read chunk c from copy
///   `(c × near / members + mirror_bias) mod survivors` (alternating rows of adjacent members);
///   RAID 10 far layouts read the first surviving copy (md prefers the lowest address there, so
///   reads stripe over all members like RAID 0). With `member_load` the least-loaded surviving
///   copy wins instead (ties in that order). Mirror writes go to every surviving copy.
/// * Errors: extent past the capacity, unknown failed member, or failures the array does not
///   survive ([`Geometry::survives`]) — even for I/O that would not touch them, as md stops a
///   failed array.
pub fn plan_with(
    geom: &Geometry,
    kind: IoKind,
    offset: u64,
    len: u64,
    failed: &[u32],
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    plan_extents(geom, kind, &[(offset, len)], failed, opts)
}

/// Plan several logical extents as one I/O, the way md's stripe cache merges requests that land
/// in the same stripe: per row, the written set is the union over all extents, so e.g. two small
/// writes that together cover a row become one full-stripe write. The caller's buffer is the
/// extents' bytes concatenated in the order given (`BlockRef::User` offsets index into it).
/// Extents must not overlap; empty extents are ignored. Same rules as [`plan_with`].
pub fn plan_extents(
    geom: &Geometry,
    kind: IoKind,
    extents: &[(u64, u64)],
    failed: &[u32],
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    let capacity = geom.capacity();
    for &(offset, len) in extents {
        if offset.checked_add(len).is_none_or(|e| e > capacity) {
            return Err(PlanError::OutOfRange {
                offset,
                len,
                capacity,
            });
        }
    }
    let mut sorted: Vec<(u64, u64)> = extents.iter().copied().filter(|e| e.1 > 0).collect();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0].0 + w[0].1 > w[1].0) {
        return Err(PlanError::Overlap {
            first: w[0],
            second: w[1],
        });
    }
    let f = failed_set(geom, failed.iter().copied())?;
    if !geom.survives(&f) {
        let layout = if geom.layout == Layout::None {
            String::new()
        } else {
            format!(" {}", geom.layout)
        };
        return Err(PlanError::TooManyFailures {
            failed: f,
            redundancy: geom.redundancy(),
            what: format!("{}{layout} array of {} members", geom.level, geom.members),
        });
    }
    // (offset, end, offset of these bytes in the caller's buffer)
    let mut pieces = Vec::with_capacity(extents.len());
    let mut at = 0;
    for &(offset, len) in extents {
        if len > 0 {
            pieces.push((offset, offset + len, at));
        }
        at += len;
    }
    let mut steps = Vec::new();
    for &(offset, end, at) in &pieces {
        match geom.level {
            Level::Linear => plan_linear(geom, kind, offset, end, at, &mut steps),
            Level::Raid0 => plan_raid0(geom, kind, offset, end, at, &mut steps),
            Level::Raid1 | Level::Raid10 => {
                plan_mirror(geom, kind, (offset, end, at), &f, opts, &mut steps)
            }
            _ => {}
        }
    }
    if geom.level.has_parity() {
        plan_parity(geom, kind, &pieces, &f, &mut steps);
    }
    let (offset, len) = match extents {
        [(o, l)] => (*o, *l),
        _ => (pieces.first().map_or(0, |p| p.0), at),
    };
    Ok(Plan {
        kind,
        offset,
        len,
        extents: extents.to_vec(),
        steps,
    })
}

/// A requested range and where its first byte sits in the caller's buffer: (start, end, at).
type Span = (u64, u64, u64);

/// Builds one step.
struct StepBuilder {
    step: Step,
}

impl StepBuilder {
    fn new(stripe: u64, strategy: Strategy) -> StepBuilder {
        StepBuilder {
            step: Step {
                stripe,
                strategy,
                scratch: vec![],
                reads: vec![],
                compute: vec![],
                writes: vec![],
            },
        }
    }
    fn scratch(&mut self, len: u64) -> BlockRef {
        self.step.scratch.push(len);
        BlockRef::Scratch(self.step.scratch.len() as u32 - 1)
    }
    fn read(&mut self, member: u32, offset: u64, len: u64, block: BlockRef) {
        self.step.reads.push(MemberIo {
            member,
            offset,
            len,
            block,
        });
    }
    fn write(&mut self, member: u32, offset: u64, len: u64, block: BlockRef) {
        self.step.writes.push(MemberIo {
            member,
            offset,
            len,
            block,
        });
    }
    fn io(&mut self, kind: IoKind, member: u32, offset: u64, len: u64, block: BlockRef) {
        match kind {
            IoKind::Read => self.read(member, offset, len, block),
            IoKind::Write => self.write(member, offset, len, block),
        }
    }
    fn compute(&mut self, c: Compute) {
        self.step.compute.push(c);
    }
    fn finish(self) -> Step {
        self.step
    }
}

fn plan_linear(g: &Geometry, kind: IoKind, offset: u64, end: u64, at: u64, steps: &mut Vec<Step>) {
    let mb = g.member_bytes;
    let mut pos = offset;
    while pos < end {
        let (m, off) = (pos / mb, pos % mb);
        let l = (end - pos).min(mb - off);
        let mut s = StepBuilder::new(m, Strategy::Direct);
        s.io(
            kind,
            m as u32,
            off,
            l,
            BlockRef::User {
                at: at + pos - offset,
            },
        );
        steps.push(s.finish());
        pos += l;
    }
}

/// Pieces of [offset, end) cut at chunk boundaries: (chunk number, offset in chunk, length, pos).
fn chunk_pieces(offset: u64, end: u64, chunk: u64) -> impl Iterator<Item = (u64, u64, u64, u64)> {
    let mut pos = offset;
    std::iter::from_fn(move || {
        if pos >= end {
            return None;
        }
        let (c, within) = (pos / chunk, pos % chunk);
        let l = (end - pos).min(chunk - within);
        let item = (c, within, l, pos);
        pos += l;
        Some(item)
    })
}

fn plan_raid0(g: &Geometry, kind: IoKind, offset: u64, end: u64, at: u64, steps: &mut Vec<Step>) {
    let n = g.members as u64;
    let c = g.chunk_bytes;
    let mut current: Option<StepBuilder> = None;
    for (chunk, within, l, pos) in chunk_pieces(offset, end, c) {
        let stripe = chunk / n;
        if current.as_ref().is_some_and(|s| s.step.stripe != stripe) {
            steps.push(current.take().unwrap().finish());
        }
        let s = current.get_or_insert_with(|| StepBuilder::new(stripe, Strategy::Direct));
        s.io(
            kind,
            (chunk % n) as u32,
            stripe * c + within,
            l,
            BlockRef::User {
                at: at + pos - offset,
            },
        );
    }
    if let Some(s) = current {
        steps.push(s.finish());
    }
}

fn plan_mirror(
    g: &Geometry,
    kind: IoKind,
    (offset, end, at): Span,
    failed: &[u32],
    opts: &PlanOptions,
    steps: &mut Vec<Step>,
) {
    let (near, far, offset_layout) = match g.layout {
        Layout::Raid10 { near, far, offset } => (near as u64, far as u64, offset),
        _ => (g.members as u64, 1, false),
    };
    for (chunk, _within, l, pos) in chunk_pieces(offset, end, g.chunk_bytes) {
        let copies: Vec<_> = g
            .map(pos)
            .into_iter()
            .filter(|loc| failed.binary_search(&loc.member).is_err())
            .collect();
        debug_assert!(!copies.is_empty(), "survives() checked");
        let block = BlockRef::User {
            at: at + pos - offset,
        };
        match kind {
            IoKind::Read => {
                let pick = if g.level == Level::Raid10 && far > 1 && !offset_layout {
                    0
                } else {
                    let row = if g.level == Level::Raid1 {
                        chunk
                    } else {
                        chunk * near / g.members as u64
                    };
                    ((row + opts.mirror_bias) % copies.len() as u64) as usize
                };
                let pick = match opts.member_load {
                    Some(load) => least_loaded_copy(pick, copies.len(), |i| copies[i].member, load),
                    None => pick,
                };
                let mut s = StepBuilder::new(chunk, Strategy::MirrorRead);
                s.read(copies[pick].member, copies[pick].offset, l, block);
                steps.push(s.finish());
            }
            IoKind::Write => {
                let mut s = StepBuilder::new(chunk, Strategy::MirrorWrite);
                for loc in &copies {
                    s.write(loc.member, loc.offset, l, block);
                }
                steps.push(s.finish());
            }
        }
    }
}

/// The mirror read rule with loads: of a piece's `n` surviving copies (copy `i` on member
/// `member(i)`), the one on the least loaded member, the first of equals counting on from
/// `pick`, the copy the plain rule reads. A member `load` does not cover counts as loaded
/// without bound. A caller that keeps the plain rule's plans (the simulator, by the request's
/// shape) chooses by this, as the planner does.
pub fn least_loaded_copy(
    pick: usize,
    n: usize,
    member: impl Fn(usize) -> u32,
    load: &[u64],
) -> usize {
    (0..n)
        .map(|i| (pick + i) % n)
        .min_by_key(|&i| load.get(member(i) as usize).copied().unwrap_or(u64::MAX))
        .unwrap_or(pick)
}

/// One stripe of a parity level being planned.
struct Stripe<'a> {
    g: &'a Geometry,
    sl: StripeLayout,
    /// Member offset of the stripe's first row.
    base: u64,
    /// Per data index: requested ranges within the chunk, with the caller's buffer offset of
    /// each range's first byte: (lo, hi, at).
    pieces: Vec<Vec<(u64, u64, u64)>>,
    failed: &'a [u32],
}

impl Stripe<'_> {
    fn is_failed(&self, member: u32) -> bool {
        self.failed.binary_search(&member).is_ok()
    }
    /// The caller's buffer at chunk offset `x` of data index `k` (`x` inside a requested range).
    fn user(&self, k: usize, x: u64) -> BlockRef {
        let &(lo, _, at) = self.pieces[k]
            .iter()
            .find(|&&(lo, hi, _)| lo <= x && x < hi)
            .expect("requested");
        BlockRef::User { at: at + x - lo }
    }
    fn covers(&self, k: usize, a: u64, b: u64) -> bool {
        self.pieces[k].iter().any(|&(lo, hi, _)| lo <= a && b <= hi)
    }
    fn failed_data(&self) -> Vec<usize> {
        (0..self.sl.data.len())
            .filter(|&k| self.is_failed(self.sl.data[k]))
            .collect()
    }
    fn p_alive(&self) -> Option<u32> {
        self.sl.p.filter(|&p| !self.is_failed(p))
    }
    fn q_alive(&self) -> Option<u32> {
        self.sl.q.filter(|&q| !self.is_failed(q))
    }
    /// Elementary row intervals of [from, to) cut at every requested range's edges.
    fn segments(&self, from: u64, to: u64) -> Vec<(u64, u64)> {
        let mut cuts = vec![from, to];
        for &(lo, hi, _) in self.pieces.iter().flatten() {
            cuts.extend([lo, hi].into_iter().filter(|&x| x > from && x < to));
        }
        cuts.sort_unstable();
        cuts.dedup();
        cuts.windows(2).map(|w| (w[0], w[1])).collect()
    }

    /// Compute the surviving parity of a row from a full set of data blocks (`data[k]`).
    /// Returns the blocks holding new P and Q (when those members survive).
    fn gen_parity(
        &self,
        s: &mut StepBuilder,
        data: &[BlockRef],
        len: u64,
    ) -> (Option<BlockRef>, Option<BlockRef>) {
        let (p_alive, q_alive) = (self.p_alive(), self.q_alive());
        if self.sl.q.is_some() && q_alive.is_some() {
            let mut slots = vec![None; self.sl.syndrome_slots as usize];
            for (k, b) in data.iter().enumerate() {
                slots[self.sl.q_slot[k] as usize] = Some(*b);
            }
            let (p, q) = (s.scratch(len), s.scratch(len));
            s.compute(Compute::GenPq {
                data: slots,
                p,
                q,
                len,
            });
            (p_alive.map(|_| p), Some(q))
        } else if p_alive.is_some() {
            let p = s.scratch(len);
            s.compute(Compute::Xor {
                inputs: data.to_vec(),
                out: p,
                len,
            });
            (Some(p), None)
        } else {
            (None, None)
        }
    }

    fn write_parity(
        &self,
        s: &mut StepBuilder,
        a: u64,
        len: u64,
        p: Option<BlockRef>,
        q: Option<BlockRef>,
    ) {
        if let (Some(pm), Some(pb)) = (self.p_alive(), p) {
            s.write(pm, self.base + a, len, pb);
        }
        if let (Some(qm), Some(qb)) = (self.q_alive(), q) {
            s.write(qm, self.base + a, len, qb);
        }
    }

    /// Rebuild the failed data members' rows [a, a+len) into `targets` (one per failed data
    /// index in `fd`), given `known[k]` for every surviving data index. Reads the parity needed.
    fn recover(
        &self,
        s: &mut StepBuilder,
        a: u64,
        len: u64,
        known: &[Option<BlockRef>],
        fd: &[usize],
        targets: &[BlockRef],
    ) {
        let p_alive = self.p_alive();
        if let (1, Some(pm)) = (fd.len(), p_alive) {
            let p = s.scratch(len);
            s.read(pm, self.base + a, len, p);
            let mut inputs: Vec<BlockRef> = known.iter().flatten().copied().collect();
            inputs.push(p);
            s.compute(Compute::Xor {
                inputs,
                out: targets[0],
                len,
            });
            return;
        }
        // RAID 6: two data blocks, or one data block with P gone: use Q.
        let mut data = vec![Slot::Zero; self.sl.syndrome_slots as usize];
        for (k, b) in known.iter().enumerate() {
            if let Some(b) = b {
                data[self.sl.q_slot[k] as usize] = Slot::Known(*b);
            }
        }
        for (i, &k) in fd.iter().enumerate() {
            data[self.sl.q_slot[k] as usize] = Slot::Missing(targets[i]);
        }
        let p = match p_alive {
            Some(pm) => {
                let b = s.scratch(len);
                s.read(pm, self.base + a, len, b);
                Slot::Known(b)
            }
            None => Slot::Missing(s.scratch(len)),
        };
        let qm = self
            .q_alive()
            .expect("survives() checked: Q present when P and data are gone");
        let qb = s.scratch(len);
        s.read(qm, self.base + a, len, qb);
        s.compute(Compute::RecoverPq {
            data,
            p,
            q: Slot::Known(qb),
            len,
        });
    }
}

fn plan_parity(
    g: &Geometry,
    kind: IoKind,
    extents: &[(u64, u64, u64)],
    failed: &[u32],
    steps: &mut Vec<Step>,
) {
    // A read within one chunk of a whole array (nearly every small random read): the one
    // direct read [`plan_parity_rows`] plans for it, without grouping rows by stripe.
    if let (IoKind::Read, [], &[(offset, end, at)]) = (kind, failed, extents) {
        let c = g.chunk_bytes;
        let chunk = offset / c;
        if (end - 1) / c == chunk {
            let dd = g.data_disks() as u64;
            let stripe = chunk / dd;
            let sl = g.stripe_layout(stripe).expect("parity level");
            let mut direct = StepBuilder::new(sl.stripe, Strategy::Direct);
            let m = sl.data[(chunk % dd) as usize];
            direct.read(
                m,
                stripe * c + offset % c,
                end - offset,
                BlockRef::User { at },
            );
            steps.push(direct.finish());
            return;
        }
    }
    plan_parity_rows(g, kind, extents, failed, steps)
}

/// [`plan_parity`] for any extents: their chunk pieces grouped by stripe, each stripe planned
/// row by row.
fn plan_parity_rows(
    g: &Geometry,
    kind: IoKind,
    extents: &[(u64, u64, u64)],
    failed: &[u32],
    steps: &mut Vec<Step>,
) {
    let c = g.chunk_bytes;
    let dd = g.data_disks() as u64;
    // Group the requested chunk pieces by stripe: stripe → per data index [(lo, hi, at)].
    let mut stripes: std::collections::BTreeMap<u64, Vec<Vec<Span>>> = Default::default();
    for &(offset, end, at) in extents {
        for (chunk, within, l, pos) in chunk_pieces(offset, end, c) {
            let per = stripes
                .entry(chunk / dd)
                .or_insert_with(|| vec![vec![]; dd as usize]);
            per[(chunk % dd) as usize].push((within, within + l, at + pos - offset));
        }
    }
    for (stripe, pieces) in stripes {
        let st = Stripe {
            g,
            sl: g.stripe_layout(stripe).expect("parity level"),
            base: stripe * c,
            pieces,
            failed,
        };
        match kind {
            IoKind::Read => parity_read(&st, steps),
            IoKind::Write => parity_write(&st, steps),
        }
    }
}

/// Subtract sorted disjoint intervals `holes` from [lo, hi).
fn subtract(lo: u64, hi: u64, holes: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = vec![];
    let mut pos = lo;
    for &(a, b) in holes {
        if b <= pos || a >= hi {
            continue;
        }
        if a > pos {
            out.push((pos, a));
        }
        pos = pos.max(b);
    }
    if pos < hi {
        out.push((pos, hi));
    }
    out
}

/// Union of intervals, sorted and merged.
fn union(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = vec![];
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn parity_read(st: &Stripe, steps: &mut Vec<Step>) {
    let d = st.sl.data.len();
    let fd = st.failed_data();
    // Rows where a requested block is on a failed member.
    let degraded = union(
        fd.iter()
            .flat_map(|&k| st.pieces[k].iter().map(|&(lo, hi, _)| (lo, hi)))
            .collect(),
    );
    let mut direct = StepBuilder::new(st.sl.stripe, Strategy::Direct);
    for k in 0..d {
        let m = st.sl.data[k];
        if st.is_failed(m) {
            continue;
        }
        for &(lo, hi, at) in &st.pieces[k] {
            for (a, b) in subtract(lo, hi, &degraded) {
                direct.read(m, st.base + a, b - a, BlockRef::User { at: at + a - lo });
            }
        }
    }
    if !direct.step.reads.is_empty() {
        steps.push(direct.finish());
    }
    for &(from, to) in &degraded {
        for (a, b) in st.segments(from, to) {
            let len = b - a;
            let mut s = StepBuilder::new(st.sl.stripe, Strategy::DegradedRead);
            let mut known = vec![None; d];
            for (k, slot) in known.iter_mut().enumerate() {
                let m = st.sl.data[k];
                if !st.is_failed(m) {
                    let b = if st.covers(k, a, b) {
                        st.user(k, a)
                    } else {
                        s.scratch(len)
                    };
                    s.read(m, st.base + a, len, b);
                    *slot = Some(b);
                }
            }
            let targets: Vec<BlockRef> = fd
                .iter()
                .map(|&k| {
                    if st.covers(k, a, b) {
                        st.user(k, a)
                    } else {
                        s.scratch(len)
                    }
                })
                .collect();
            st.recover(&mut s, a, len, &known, &fd, &targets);
            steps.push(s.finish());
        }
    }
}

fn parity_write(st: &Stripe, steps: &mut Vec<Step>) {
    let d = st.sl.data.len();
    let Some(from) = st.pieces.iter().flatten().map(|r| r.0).min() else {
        return;
    };
    let to = st.pieces.iter().flatten().map(|r| r.1).max().unwrap();
    let fd = st.failed_data();
    for (a, b) in st.segments(from, to) {
        let len = b - a;
        let written: Vec<bool> = (0..d).map(|k| st.covers(k, a, b)).collect();
        let nw = written.iter().filter(|&&w| w).count();
        if nw == 0 {
            continue;
        }
        // md's counts (raid5.c handle_stripe_dirtying): each block to pre-read costs 1, or
        // 2 × members when its member is not in sync (so the other strategy wins if it can).
        let big = 2 * st.g.members as usize;
        let cost = |m: u32| if st.is_failed(m) { big } else { 1 };
        let md_rmw: usize = (0..d)
            .filter(|&k| written[k])
            .map(|k| cost(st.sl.data[k]))
            .sum::<usize>()
            + st.sl.p.into_iter().chain(st.sl.q).map(cost).sum::<usize>();
        let md_rcw: usize = (0..d)
            .filter(|&k| !written[k])
            .map(|k| cost(st.sl.data[k]))
            .sum();
        // Possible without rebuilding anything first:
        let rmw_ok = fd.iter().all(|&k| !written[k]);
        let rcw_ok = fd.iter().all(|&k| written[k]);
        let strategy = if nw == d {
            Strategy::FullStripeWrite
        } else if md_rmw < md_rcw {
            if rmw_ok {
                Strategy::ReadModifyWrite
            } else {
                Strategy::DegradedWrite
            }
        } else if rcw_ok {
            Strategy::ReconstructWrite
        } else {
            Strategy::DegradedWrite
        };
        let mut s = StepBuilder::new(st.sl.stripe, strategy);
        let new = |k: usize| st.user(k, a);
        match strategy {
            Strategy::FullStripeWrite => {
                let data: Vec<BlockRef> = (0..d).map(new).collect();
                let (p, q) = st.gen_parity(&mut s, &data, len);
                st.write_parity(&mut s, a, len, p, q);
            }
            Strategy::ReadModifyWrite => {
                let mut olds = vec![];
                for k in (0..d).filter(|&k| written[k]) {
                    let old = s.scratch(len);
                    s.read(st.sl.data[k], st.base + a, len, old);
                    olds.push((k, old));
                }
                let old_p = st.p_alive().map(|pm| {
                    let b = s.scratch(len);
                    s.read(pm, st.base + a, len, b);
                    b
                });
                let old_q = st.q_alive().map(|qm| {
                    let b = s.scratch(len);
                    s.read(qm, st.base + a, len, b);
                    b
                });
                match old_q {
                    None => {
                        // P only: P' = P ^ Σ old ^ Σ new (md picks rmw only with P in sync
                        // when Q is gone).
                        let mut inputs =
                            vec![old_p.expect("rmw chosen with a parity member in sync")];
                        inputs.extend(olds.iter().map(|&(_, o)| o));
                        inputs.extend(olds.iter().map(|&(k, _)| new(k)));
                        let p = s.scratch(len);
                        s.compute(Compute::Xor {
                            inputs,
                            out: p,
                            len,
                        });
                        st.write_parity(&mut s, a, len, Some(p), None);
                    }
                    Some(old_q) => {
                        // P' = P ^ ΣΔ, Q' = Q ^ Σ g^slot·Δ with Δ = old ^ new.
                        let mut slots = vec![None; st.sl.syndrome_slots as usize];
                        for &(k, old) in &olds {
                            let delta = s.scratch(len);
                            s.compute(Compute::Xor {
                                inputs: vec![old, new(k)],
                                out: delta,
                                len,
                            });
                            slots[st.sl.q_slot[k] as usize] = Some(delta);
                        }
                        let (dp, dq) = (s.scratch(len), s.scratch(len));
                        s.compute(Compute::GenPq {
                            data: slots,
                            p: dp,
                            q: dq,
                            len,
                        });
                        let p = old_p.map(|old_p| {
                            let p = s.scratch(len);
                            s.compute(Compute::Xor {
                                inputs: vec![old_p, dp],
                                out: p,
                                len,
                            });
                            p
                        });
                        let q = s.scratch(len);
                        s.compute(Compute::Xor {
                            inputs: vec![old_q, dq],
                            out: q,
                            len,
                        });
                        st.write_parity(&mut s, a, len, p, Some(q));
                    }
                }
            }
            Strategy::ReconstructWrite => {
                let mut data = vec![];
                for (k, &w) in written.iter().enumerate() {
                    if w {
                        data.push(new(k));
                    } else {
                        let old = s.scratch(len);
                        s.read(st.sl.data[k], st.base + a, len, old);
                        data.push(old);
                    }
                }
                let (p, q) = st.gen_parity(&mut s, &data, len);
                st.write_parity(&mut s, a, len, p, q);
            }
            Strategy::DegradedWrite => {
                let mut known = vec![None; d];
                for (k, slot) in known.iter_mut().enumerate() {
                    let m = st.sl.data[k];
                    if !st.is_failed(m) {
                        let old = s.scratch(len);
                        s.read(m, st.base + a, len, old);
                        *slot = Some(old);
                    }
                }
                let targets: Vec<BlockRef> = fd.iter().map(|_| s.scratch(len)).collect();
                st.recover(&mut s, a, len, &known, &fd, &targets);
                let data: Vec<BlockRef> = (0..d)
                    .map(|k| {
                        if written[k] {
                            new(k)
                        } else {
                            known[k].unwrap_or_else(|| {
                                targets[fd.iter().position(|&f| f == k).unwrap()]
                            })
                        }
                    })
                    .collect();
                let (p, q) = st.gen_parity(&mut s, &data, len);
                st.write_parity(&mut s, a, len, p, q);
            }
            _ => unreachable!(),
        }
        // Data writes last in the step's phase 2 list; never to a failed member.
        for k in (0..d).filter(|&k| written[k]) {
            let m = st.sl.data[k];
            if !st.is_failed(m) {
                s.write(m, st.base + a, len, new(k));
            }
        }
        steps.push(s.finish());
    }
}

/// Plan the rebuild of `len` bytes at `offset` of `member`'s data area (member offsets, not
/// logical ones) onto a replacement member, reading only the other members, with the members in
/// `failed` also missing (`member` itself may be listed or not). Each step reads survivors,
/// computes the lost block (mirror copy, XOR, or P/Q recovery), and writes it to `member`.
/// Space the layout does not use (beyond [`Geometry::member_used_bytes`]) has nothing to
/// rebuild. The plan's `offset`/`len` are the member range. [`plan_rebuild_set`] with one
/// target.
pub fn plan_rebuild(
    geom: &Geometry,
    member: u32,
    offset: u64,
    len: u64,
    failed: &[u32],
) -> Result<Plan, PlanError> {
    plan_rebuild_set(geom, &[member], offset, len, failed)
}

/// Plan the rebuild of the same member range (`len` bytes at member offset `offset`) on every
/// member of `targets` at once, with the members in `failed` also missing (targets may be
/// listed there or not). Per chunk row the survivors are read once and every target's block
/// comes out of that one read: RAID 6 losing two members recovers both from one pass over the
/// row (md's recovery of a double failure, raid6_2data_recov / raid6_datap_recov, the same way),
/// and mirror targets holding the same data share one read of a surviving copy. Targets are
/// written in the order given. Errors as [`plan_rebuild`]: a target or failed member the array
/// does not have, a range past [`Geometry::member_used_bytes`], or more lost members than the
/// array survives.
pub fn plan_rebuild_set(
    geom: &Geometry,
    targets: &[u32],
    offset: u64,
    len: u64,
    failed: &[u32],
) -> Result<Plan, PlanError> {
    let mut targets: Vec<u32> = targets.to_vec();
    {
        let mut seen = std::collections::HashSet::new();
        targets.retain(|t| seen.insert(*t));
    }
    if let Some(&member) = targets.iter().find(|&&t| t >= geom.members) {
        return Err(PlanError::NoSuchMember {
            member,
            members: geom.members,
        });
    }
    let used = geom.member_used_bytes();
    if offset.checked_add(len).is_none_or(|e| e > used) {
        return Err(PlanError::OutOfRange {
            offset,
            len,
            capacity: used,
        });
    }
    let f = failed_set(geom, failed.iter().chain(&targets).copied())?;
    if !geom.survives(&f) {
        let which = match targets.as_slice() {
            [m] => format!("member {m}"),
            ts => format!("members {ts:?}"),
        };
        return Err(PlanError::TooManyFailures {
            failed: f,
            redundancy: geom.redundancy(),
            what: format!(
                "rebuilding {which} of a {} array of {} members",
                geom.level, geom.members
            ),
        });
    }
    let mut steps = vec![];
    let c = geom.chunk_bytes;
    // Pieces of the member range cut at chunk rows: (row, offset in row, length).
    for (row, a, l, _) in chunk_pieces(offset, offset + len, c) {
        let mut s = StepBuilder::new(row, Strategy::Rebuild);
        let blocks: Vec<BlockRef> = targets.iter().map(|_| s.scratch(l)).collect();
        let block_of = |m: u32| targets.iter().position(|&t| t == m).map(|i| blocks[i]);
        if geom.level.has_parity() {
            let st = Stripe {
                g: geom,
                sl: geom.stripe_layout(row).expect("parity level"),
                base: row * c,
                pieces: vec![],
                failed: &f,
            };
            let d = st.sl.data.len();
            let fd = st.failed_data();
            let mut known = vec![None; d];
            for (k, slot) in known.iter_mut().enumerate() {
                let m = st.sl.data[k];
                if !st.is_failed(m) {
                    let blk = s.scratch(l);
                    s.read(m, st.base + a, l, blk);
                    *slot = Some(blk);
                }
            }
            // Every lost data block, into its target's block when it is one.
            let lost: Vec<BlockRef> = fd
                .iter()
                .map(|&k| block_of(st.sl.data[k]).unwrap_or_else(|| s.scratch(l)))
                .collect();
            if !fd.is_empty() {
                st.recover(&mut s, a, l, &known, &fd, &lost);
            }
            // Then the parity targets, from all the data.
            let p_target = st.sl.p.and_then(block_of);
            let q_target = st.sl.q.and_then(block_of);
            if p_target.is_some() || q_target.is_some() {
                let data: Vec<BlockRef> = (0..d)
                    .map(|k| {
                        known[k].unwrap_or_else(|| lost[fd.iter().position(|&x| x == k).unwrap()])
                    })
                    .collect();
                if st.sl.q.is_some() {
                    let mut slots = vec![None; st.sl.syndrome_slots as usize];
                    for (k, blk) in data.iter().enumerate() {
                        slots[st.sl.q_slot[k] as usize] = Some(*blk);
                    }
                    let p = p_target.unwrap_or_else(|| s.scratch(l));
                    let q = q_target.unwrap_or_else(|| s.scratch(l));
                    s.compute(Compute::GenPq {
                        data: slots,
                        p,
                        q,
                        len: l,
                    });
                } else {
                    s.compute(Compute::Xor {
                        inputs: data,
                        out: p_target.expect("checked"),
                        len: l,
                    });
                }
            }
            for (i, &t) in targets.iter().enumerate() {
                s.write(t, row * c + a, l, blocks[i]);
            }
        } else {
            // Mirrors: targets holding the same logical bytes share one read of a surviving
            // copy; space a target does not use for data is skipped.
            let mut read: Vec<(u64, BlockRef)> = vec![];
            for (i, &t) in targets.iter().enumerate() {
                let Some(logical) = geom.unmap(t, row * c + a) else {
                    continue;
                };
                let blk = match read.iter().find(|(at, _)| *at == logical) {
                    Some(&(_, b)) => b,
                    None => {
                        let Some(src) = geom
                            .map(logical)
                            .into_iter()
                            .find(|loc| f.binary_search(&loc.member).is_err())
                        else {
                            unreachable!("survives() checked")
                        };
                        s.read(src.member, src.offset, l, blocks[i]);
                        read.push((logical, blocks[i]));
                        blocks[i]
                    }
                };
                s.write(t, row * c + a, l, blk);
            }
            if read.is_empty() {
                continue;
            }
        }
        steps.push(s.finish());
    }
    Ok(Plan {
        kind: IoKind::Write,
        offset,
        len,
        extents: vec![(offset, len)],
        steps,
    })
}

/// The failed members, sorted and without repeats; a member the array does not have is an
/// error.
fn failed_set(geom: &Geometry, failed: impl Iterator<Item = u32>) -> Result<Vec<u32>, PlanError> {
    let mut f: Vec<u32> = failed.collect();
    f.sort_unstable();
    f.dedup();
    if let Some(&m) = f.iter().find(|&&m| m >= geom.members) {
        return Err(PlanError::NoSuchMember {
            member: m,
            members: geom.members,
        });
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read within one chunk of a whole parity array takes the short way: the same plan as
    /// the stripe-by-stripe planning, step for step, for every parity layout, at chunk edges
    /// and inside.
    #[test]
    fn a_read_within_a_chunk_is_planned_as_the_rows_plan_it() {
        use Layout::*;
        let layouts = [
            (Level::Raid4, ParityLast, 4),
            (Level::Raid5, LeftSymmetric, 5),
            (Level::Raid5, RightAsymmetric, 4),
            (Level::Raid5, ParityFirst, 6),
            (Level::Raid6, LeftSymmetric, 6),
            (Level::Raid6, DdfZeroRestart, 7),
            (Level::Raid6, LeftSymmetric6, 5),
        ];
        let c = 16 * 1024;
        for (level, layout, n) in layouts {
            let g = Geometry::new(level, layout, c, n, 64 * c).unwrap();
            let data = g.capacity();
            let mut shorts = 0;
            for i in 0..2000u64 {
                // Offsets spread over the array, lengths from a sector to a whole chunk, some
                // crossing a chunk's end (those take the long way).
                let offset = (i * 7919 * 512) % (data - c) / 512 * 512;
                let len = 512 * (1 + (i * 31) % (c / 512));
                let ext = [(offset, offset + len, 4096)];
                let (mut fast, mut rows) = (vec![], vec![]);
                plan_parity(&g, IoKind::Read, &ext, &[], &mut fast);
                plan_parity_rows(&g, IoKind::Read, &ext, &[], &mut rows);
                assert_eq!(fast, rows, "{level:?} {layout} × {n}: {offset}+{len}");
                shorts += usize::from(offset / c == (offset + len - 1) / c);
            }
            assert!(
                shorts > 500,
                "{level:?} {layout}: {shorts} reads within a chunk"
            );
        }
    }
}
