//! Adapter between the simulator and the RAID planner: turns a logical range of an array into
//! member I/Os (which member, where, how long) and a stripe's dirty data into a destage plan
//! (read-modify-write, reconstruct-write or full-stripe write).
//!
//! All mapping and strategy choices come from the workspace's one RAID planner
//! (raidlab-geometry), the same one real arrays use; this module only converts its plans into
//! the member I/O lists the event loop queues at drives.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Single,
    Linear,
    Raid0,
    Raid1,
    Raid10,
    Raid5,
    Raid6,
}

/// A level in the system file's words (`level = "raid5"`), as explain names it.
impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Level::Single => "single",
            Level::Linear => "linear",
            Level::Raid0 => "raid0",
            Level::Raid1 => "raid1",
            Level::Raid10 => "raid10",
            Level::Raid5 => "raid5",
            Level::Raid6 => "raid6",
        })
    }
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "single" => Level::Single,
            "linear" => Level::Linear,
            "raid0" => Level::Raid0,
            "raid1" => Level::Raid1,
            "raid10" => Level::Raid10,
            "raid5" => Level::Raid5,
            "raid6" => Level::Raid6,
            _ => return None,
        })
    }
    /// The planner's level this one is laid out as (a single drive is a linear array of one).
    pub fn geometry(self) -> raidlab_geometry::Level {
        use raidlab_geometry::Level as G;
        match self {
            Level::Single | Level::Linear => G::Linear,
            Level::Raid0 => G::Raid0,
            Level::Raid1 => G::Raid1,
            Level::Raid10 => G::Raid10,
            Level::Raid5 => G::Raid5,
            Level::Raid6 => G::Raid6,
        }
    }
    pub fn parity(self) -> u32 {
        match self {
            Level::Raid5 => 1,
            Level::Raid6 => 2,
            _ => 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberIo {
    pub member: u32,
    pub offset: u64,
    pub len: u64,
}

/// How a stripe's new data reaches the members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// No redundancy to update, or mirrors: write the data (and its copies).
    Direct,
    FullStripe,
    ReadModifyWrite,
    ReconstructWrite,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WritePlan {
    pub strategy: Strategy,
    pub reads: Vec<MemberIo>,
    /// Data bytes the parity engine processes (per parity block computed).
    pub parity_bytes: u64,
    pub writes: Vec<MemberIo>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayGeom {
    pub level: Level,
    pub members: u32,
    pub chunk: u64,
    pub member_bytes: u64,
    /// Failed members, sorted (empty: the array is whole). The planner never reads or
    /// writes them; their data is rebuilt from the others.
    pub failed: Vec<u32>,
    /// The shared planner's geometry (built by [`ArrayGeom::finish`] once sizes are known).
    pub g: Option<raidlab_geometry::Geometry>,
    /// A stripe's data bytes (see [`ArrayGeom::stripe_data_bytes`]), worked out once: every
    /// cached host command asks.
    stripe_data: u64,
    /// The failed members are being rebuilt onto replacements (`rebuild = true`: all of
    /// them): below member offset `rebuilt_below` the replacements hold their data, and a
    /// request whose every member byte lies below it is planned as on a whole array.
    pub rebuilding: bool,
    pub rebuilt_below: u64,
}

impl ArrayGeom {
    pub fn new(level: Level, members: u32, chunk: u64, member_bytes: u64) -> ArrayGeom {
        let mut a = ArrayGeom {
            level,
            members,
            chunk,
            member_bytes,
            failed: Vec::new(),
            g: None,
            stripe_data: 0,
            rebuilding: false,
            rebuilt_below: 0,
        };
        a.stripe_data = a.stripe_data_of_shape();
        a
    }

    /// Build the planner's geometry; errors are the planner's own (bad shapes).
    pub fn finish(&mut self) -> Result<(), String> {
        use raidlab_geometry::{Geometry, Layout};
        let n = match self.level {
            Level::Single => 1,
            _ => self.members,
        };
        self.g = Some(
            Geometry::new(
                self.level.geometry(),
                Layout::None,
                self.chunk,
                n,
                self.member_bytes,
            )
            .map_err(|e| e.to_string())?,
        );
        if !self.failed.is_empty() {
            // Every role a member takes comes round within `members` stripes: a read of
            // them all meets each failure the layout cannot rebuild from.
            let span = (self.members as u64 * self.stripe_data_bytes()).min(self.capacity());
            raidlab_geometry::plan(
                self.geo(),
                raidlab_geometry::IoKind::Read,
                0,
                span,
                &self.failed,
            )
            .map_err(|e| format!("failed = {:?}: {e}", self.failed))?;
        }
        Ok(())
    }

    /// The members a request of `len` bytes at logical `off` finds missing: the failed ones,
    /// or during a rebuild, once the rebuild has passed every member byte the request can
    /// touch, none.
    #[inline]
    pub fn missing(&self, off: u64, len: u64) -> &[u32] {
        if self.rebuilding && self.member_end(off, len) <= self.rebuilt_below {
            &[]
        } else {
            &self.failed
        }
    }

    /// The end of the member range, on any member, that logical bytes `[off, off + len)`
    /// (or their copies, or their stripes' parity) occupy: the end of their last chunk row.
    fn member_end(&self, off: u64, len: u64) -> u64 {
        let last = off + len.max(1) - 1;
        let c = self.chunk;
        match self.level {
            Level::Raid1 => last / c * c + c,
            Level::Raid10 | Level::Single | Level::Linear => self
                .geo()
                .map(last)
                .iter()
                .map(|l| l.offset / c * c + c)
                .max()
                .unwrap_or(u64::MAX),
            _ => (last / self.stripe_data + 1) * c,
        }
    }

    /// The member I/O of rebuilding `len` bytes at member offset `off` of every failed member
    /// (the planner's rebuild plan: survivors read, lost blocks computed, the replacements
    /// written): reads and writes merged per member, and the parity bytes.
    pub fn rebuild_step(&self, off: u64, len: u64) -> (Vec<MemberIo>, u64, Vec<MemberIo>) {
        let plan = raidlab_geometry::plan_rebuild_set(self.geo(), &self.failed, off, len, &[])
            .expect("a rebuild step inside the members");
        let io = |member, offset, len| MemberIo {
            member,
            offset,
            len,
        };
        let (mut reads, mut writes, mut parity) = (Vec::new(), Vec::new(), 0);
        for st in &plan.steps {
            for r in &st.reads {
                push_merge(&mut reads, 0, io(r.member, r.offset, r.len));
            }
            for w in &st.writes {
                push_merge(&mut writes, 0, io(w.member, w.offset, w.len));
            }
            parity += st.compute.iter().map(|c| c.input_bytes()).sum::<u64>();
        }
        (reads, parity, writes)
    }

    /// Bytes of parity work to rebuild what a read of `len` bytes at `off` wants from failed
    /// members (0 for a whole array).
    pub fn reconstruct_bytes(&self, off: u64, len: u64) -> u64 {
        if self.failed.is_empty() {
            return 0;
        }
        let missing = self.missing(off, len);
        if missing.is_empty() {
            return 0;
        }
        raidlab_geometry::plan(
            self.geo(),
            raidlab_geometry::IoKind::Read,
            off,
            len,
            missing,
        )
        .map(|p| {
            p.steps
                .iter()
                .flat_map(|st| st.compute.iter())
                .map(|c| c.input_bytes())
                .sum()
        })
        .unwrap_or(0)
    }

    pub fn geo(&self) -> &raidlab_geometry::Geometry {
        self.g.as_ref().expect("ArrayGeom::finish not called")
    }

    pub fn data_disks(&self) -> u32 {
        match self.level {
            Level::Single | Level::Raid1 => 1,
            Level::Linear | Level::Raid0 => self.members,
            Level::Raid10 => self.members / 2,
            Level::Raid5 => self.members - 1,
            Level::Raid6 => self.members - 2,
        }
    }
    /// The unit the controller caches and destages in: a stripe's data (a chunk for a single
    /// drive or a linear array, so read-ahead works in chunks there too).
    #[inline]
    pub fn stripe_data_bytes(&self) -> u64 {
        debug_assert_eq!(self.stripe_data, self.stripe_data_of_shape());
        self.stripe_data
    }
    fn stripe_data_of_shape(&self) -> u64 {
        match self.level {
            Level::Single | Level::Linear => self.chunk,
            _ => self.chunk * self.data_disks() as u64,
        }
    }
    pub fn capacity(&self) -> u64 {
        match &self.g {
            Some(g) => g.capacity(),
            None => 0,
        }
    }

    /// Member reads for a logical range. `loads` (per member, e.g. queued commands) lets a
    /// mirror read go to the least busy copy.
    pub fn map_read(&self, off: u64, len: u64, loads: Option<&[u64]>, out: &mut Vec<MemberIo>) {
        let opts = raidlab_geometry::PlanOptions {
            member_load: loads,
            ..Default::default()
        };
        let plan = raidlab_geometry::plan_with(
            self.geo(),
            raidlab_geometry::IoKind::Read,
            off,
            len,
            self.missing(off, len),
            &opts,
        )
        .expect("read inside the array");
        let start = out.len();
        for st in &plan.steps {
            for r in &st.reads {
                push_merge(
                    out,
                    start,
                    MemberIo {
                        member: r.member,
                        offset: r.offset,
                        len: r.len,
                    },
                );
            }
        }
    }

    /// A mirror read of `len` bytes at logical `off` as the planner plans it without loads,
    /// piece by piece: each piece's surviving copies and the copy the plain rule reads (see
    /// [`MirrorPiece`]). The copies are the planner's own, those its write of the same bytes
    /// goes to, in its order. None if the two plans do not pair up piece by piece (then the
    /// read is planned whole each time).
    pub fn mirror_read_pieces(&self, off: u64, len: u64) -> Option<Vec<MirrorPiece>> {
        use raidlab_geometry::IoKind;
        let missing = self.missing(off, len);
        let read = raidlab_geometry::plan(self.geo(), IoKind::Read, off, len, missing).ok()?;
        let write = raidlab_geometry::plan(self.geo(), IoKind::Write, off, len, missing).ok()?;
        if read.steps.len() != write.steps.len() {
            return None;
        }
        read.steps
            .iter()
            .zip(&write.steps)
            .map(|(r, w)| {
                let [one] = r.reads.as_slice() else {
                    return None;
                };
                let copies: Vec<(u32, u64)> =
                    w.writes.iter().map(|c| (c.member, c.offset)).collect();
                let pick = copies.iter().position(|&c| c == (one.member, one.offset))?;
                w.writes
                    .iter()
                    .all(|c| c.len == one.len)
                    .then_some(MirrorPiece {
                        len: one.len,
                        copies,
                        pick,
                    })
            })
            .collect()
    }

    /// Plan writing the byte ranges `dirty` (relative to stripe `s`'s start) the way md's
    /// stripe cache would: one plan over all extents, so full stripes are recognised.
    pub fn plan_stripe_write(&self, s: u64, dirty: &[(u64, u64)]) -> WritePlan {
        let sd = self.stripe_data_bytes();
        let ext: Vec<(u64, u64)> = dirty.iter().map(|&(a, b)| (s * sd + a, b - a)).collect();
        let plan = raidlab_geometry::plan_extents(
            self.geo(),
            raidlab_geometry::IoKind::Write,
            &ext,
            self.missing(s * sd, sd),
            &Default::default(),
        )
        .expect("write inside the array");
        let mut wp = WritePlan {
            strategy: Strategy::Direct,
            reads: Vec::new(),
            parity_bytes: 0,
            writes: Vec::new(),
        };
        for st in &plan.steps {
            use raidlab_geometry::Strategy as S;
            let strat = match st.strategy {
                S::FullStripeWrite => Strategy::FullStripe,
                S::ReadModifyWrite => Strategy::ReadModifyWrite,
                S::ReconstructWrite | S::DegradedWrite => Strategy::ReconstructWrite,
                _ => Strategy::Direct,
            };
            if wp.strategy == Strategy::Direct || strat != Strategy::FullStripe {
                wp.strategy = strat;
            }
            wp.reads.extend(st.reads.iter().map(|r| MemberIo {
                member: r.member,
                offset: r.offset,
                len: r.len,
            }));
            wp.writes.extend(st.writes.iter().map(|r| MemberIo {
                member: r.member,
                offset: r.offset,
                len: r.len,
            }));
            wp.parity_bytes += st.compute.iter().map(|c| c.input_bytes()).sum::<u64>();
        }
        wp
    }
}

/// One piece of a mirror read (a chunk's worth or less): where each surviving copy of it
/// lies, and which of them the planner's plain rule reads (`pick`). With the members' loads,
/// [`raidlab_geometry::least_loaded_copy`] chooses among them as the planner would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorPiece {
    pub len: u64,
    /// (member, member offset) of each copy.
    pub copies: Vec<(u32, u64)>,
    pub pick: usize,
}

impl MirrorPiece {
    /// The member I/O reading this piece under `loads`, its offsets moved up by `by`.
    #[inline]
    pub fn read(&self, loads: &[u64], by: u64) -> MemberIo {
        let c = &self.copies;
        let i = raidlab_geometry::least_loaded_copy(self.pick, c.len(), |i| c[i].0, loads);
        MemberIo {
            member: c[i].0,
            offset: c[i].1 + by,
            len: self.len,
        }
    }
}

/// Append, merging with an earlier I/O of the same member that ends where this one starts.
pub(crate) fn push_merge(out: &mut Vec<MemberIo>, start: usize, io: MemberIo) {
    for o in out[start..].iter_mut().rev() {
        if o.member == io.member {
            if o.offset + o.len == io.offset {
                o.len += io.len;
                return;
            }
            break;
        }
    }
    out.push(io);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(level: Level, n: u32) -> ArrayGeom {
        let mut a = ArrayGeom::new(level, n, 4096, 1 << 20);
        a.finish().unwrap();
        a
    }

    #[test]
    fn raid5_left_symmetric_rotates_parity_backwards() {
        let a = g(Level::Raid5, 4);
        // Stripe 1: parity on 2, data starts on 3.
        let mut v = vec![];
        a.map_read(3 * 4096, 4096, None, &mut v);
        assert_eq!(
            v,
            vec![MemberIo {
                member: 3,
                offset: 4096,
                len: 4096
            }]
        );
    }

    #[test]
    fn sequential_read_merges_per_member() {
        let a = g(Level::Raid0, 4);
        let mut v = vec![];
        a.map_read(0, 8 * 4096, None, &mut v);
        assert_eq!(v.len(), 4);
        assert!(v.iter().all(|m| m.len == 8192));
    }

    #[test]
    fn small_write_is_rmw_full_stripe_is_not() {
        let a = g(Level::Raid5, 5);
        let p = a.plan_stripe_write(0, &[(0, 4096)]);
        assert_eq!(p.strategy, Strategy::ReadModifyWrite);
        assert_eq!((p.reads.len(), p.writes.len()), (2, 2));
        let p = a.plan_stripe_write(0, &[(0, 3 * 4096)]);
        assert_eq!(p.strategy, Strategy::ReconstructWrite);
        assert_eq!((p.reads.len(), p.writes.len()), (1, 4));
        let p = a.plan_stripe_write(0, &[(0, 4 * 4096)]);
        assert_eq!(p.strategy, Strategy::FullStripe);
        assert_eq!(p.writes.len(), 5);
        let six = g(Level::Raid6, 8).plan_stripe_write(0, &[(0, 4096)]);
        assert_eq!((six.reads.len(), six.writes.len()), (3, 3));
    }

    #[test]
    fn raid10_has_two_copies() {
        let a = g(Level::Raid10, 4);
        let p = a.plan_stripe_write(0, &[(4096, 8192)]);
        assert_eq!(
            p.writes,
            vec![
                MemberIo {
                    member: 2,
                    offset: 0,
                    len: 4096
                },
                MemberIo {
                    member: 3,
                    offset: 0,
                    len: 4096
                }
            ]
        );
    }
}
