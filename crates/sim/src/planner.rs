//! Adapter between the simulator and the RAID planner: turns a logical range of an array into
//! member I/Os (which member, where, how long) and a stripe's dirty data into a destage plan
//! (read-modify-write, reconstruct-write or full-stripe write).
//!
//! The mapping follows md's layouts (RAID-5/6 left-symmetric, RAID-10 near-2) so the
//! simulator reproduces the member I/O pattern a real array issues. It is kept behind this
//! small interface so the workspace's shared planner (raidlab-geometry) can replace it
//! without touching the models.

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayGeom {
    pub level: Level,
    pub members: u32,
    pub chunk: u64,
    pub member_bytes: u64,
}

impl ArrayGeom {
    pub fn data_disks(&self) -> u32 {
        match self.level {
            Level::Single | Level::Raid1 => 1,
            Level::Linear | Level::Raid0 => self.members,
            Level::Raid10 => self.members / 2,
            Level::Raid5 => self.members - 1,
            Level::Raid6 => self.members - 2,
        }
    }
    pub fn stripe_data_bytes(&self) -> u64 {
        match self.level {
            Level::Linear => self.member_bytes,
            _ => self.chunk * self.data_disks() as u64,
        }
    }
    pub fn rows(&self) -> u64 {
        self.member_bytes / self.chunk
    }
    pub fn capacity(&self) -> u64 {
        match self.level {
            Level::Linear => self.member_bytes * self.members as u64,
            _ => self.rows() * self.stripe_data_bytes(),
        }
    }
    /// Parity members of stripe `s` (md's left-symmetric order: P walks backwards).
    fn parity_members(&self, s: u64) -> (u32, u32) {
        let n = self.members as u64;
        let p = (n - 1 - s % n) as u32;
        (p, ((p as u64 + 1) % n) as u32)
    }
    /// Member holding data chunk `i` of stripe `s`.
    fn data_member(&self, s: u64, i: u32) -> u32 {
        let n = self.members as u64;
        match self.level {
            Level::Raid5 => ((self.parity_members(s).0 as u64 + 1 + i as u64) % n) as u32,
            Level::Raid6 => ((self.parity_members(s).1 as u64 + 1 + i as u64) % n) as u32,
            _ => i,
        }
    }
    /// Every copy of logical byte range `[off, off+len)` that lies within one chunk:
    /// (candidates, member offset). Mirrors give several candidates.
    fn locate(&self, off: u64) -> (Vec<u32>, u64) {
        let n = self.members as u64;
        match self.level {
            Level::Single => (vec![0], off),
            Level::Linear => (vec![(off / self.member_bytes) as u32], off % self.member_bytes),
            Level::Raid1 => ((0..self.members).collect(), off),
            Level::Raid0 => {
                let k = off / self.chunk;
                (vec![(k % n) as u32], (k / n) * self.chunk + off % self.chunk)
            }
            Level::Raid10 => {
                // near-2: chunk k's copies sit side by side.
                let k = off / self.chunk;
                let a = 2 * k;
                (vec![(a % n) as u32, ((a + 1) % n) as u32], (a / n) * self.chunk + off % self.chunk)
            }
            Level::Raid5 | Level::Raid6 => {
                let sd = self.stripe_data_bytes();
                let s = off / sd;
                let i = ((off % sd) / self.chunk) as u32;
                (vec![self.data_member(s, i)], s * self.chunk + off % self.chunk)
            }
        }
    }

    fn piece_end(&self, off: u64) -> u64 {
        match self.level {
            Level::Single | Level::Raid1 => u64::MAX,
            Level::Linear => (off / self.member_bytes + 1) * self.member_bytes,
            _ => (off / self.chunk + 1) * self.chunk,
        }
    }

    /// Member reads for a logical range; `choose` picks one copy among mirrors.
    pub fn map_read(&self, off: u64, len: u64, mut choose: impl FnMut(&[u32]) -> u32, out: &mut Vec<MemberIo>) {
        let mut pos = off;
        let end = off + len;
        let start = out.len();
        while pos < end {
            let pe = self.piece_end(pos).min(end);
            let (cands, moff) = self.locate(pos);
            let m = if cands.len() == 1 { cands[0] } else { choose(&cands) };
            push_merge(out, start, MemberIo { member: m, offset: moff, len: pe - pos });
            pos = pe;
        }
    }

    /// Writes without parity (single, linear, raid0/1/10): every copy of every piece.
    fn map_direct_write(&self, off: u64, len: u64, out: &mut Vec<MemberIo>) {
        let mut pos = off;
        let end = off + len;
        let start = out.len();
        while pos < end {
            let pe = self.piece_end(pos).min(end);
            let (cands, moff) = self.locate(pos);
            for m in cands {
                push_merge(out, start, MemberIo { member: m, offset: moff, len: pe - pos });
            }
            pos = pe;
        }
    }

    /// Plan writing the byte ranges `dirty` (sorted, within stripe `s`, offsets relative to the
    /// stripe's start) for parity levels; any range for the others.
    pub fn plan_stripe_write(&self, s: u64, dirty: &[(u64, u64)]) -> WritePlan {
        let sd = self.stripe_data_bytes();
        if self.level.parity() == 0 {
            let mut writes = Vec::new();
            for &(a, b) in dirty {
                self.map_direct_write(s * sd + a, b - a, &mut writes);
            }
            return WritePlan { strategy: Strategy::Direct, reads: vec![], parity_bytes: 0, writes };
        }
        let dd = self.data_disks();
        let base = s * self.chunk;
        let (p, q) = self.parity_members(s);
        let pm: Vec<u32> = if self.level == Level::Raid6 { vec![p, q] } else { vec![p] };
        let total: u64 = dirty.iter().map(|(a, b)| b - a).sum();
        let mut writes = Vec::new();
        if total >= sd {
            for m in 0..self.members {
                writes.push(MemberIo { member: m, offset: base, len: self.chunk });
            }
            return WritePlan { strategy: Strategy::FullStripe, reads: vec![], parity_bytes: sd * pm.len() as u64, writes };
        }
        // Per data chunk: dirty extent within the chunk (min..max of its dirty bytes).
        let mut ext: Vec<Option<(u64, u64)>> = vec![None; dd as usize];
        for &(a, b) in dirty {
            let mut x = a;
            while x < b {
                let i = (x / self.chunk) as usize;
                let ce = ((i as u64) + 1) * self.chunk;
                let y = b.min(ce);
                let (lo, hi) = (x - i as u64 * self.chunk, y - i as u64 * self.chunk);
                ext[i] = Some(match ext[i] {
                    Some((l, h)) => (l.min(lo), h.max(hi)),
                    None => (lo, hi),
                });
                x = y;
            }
        }
        // Parity extent: union of the dirty extents (parity bytes at the same offsets).
        let (plo, phi) = ext.iter().flatten().fold((u64::MAX, 0), |(l, h), &(a, b)| (l.min(a), h.max(b)));
        let touched = ext.iter().filter(|e| e.is_some()).count() as u32;
        // Read-modify-write reads old data of touched chunks and old parity; reconstruct-write
        // reads the untouched chunks. Pick the one reading fewer blocks (md's choice).
        let rmw_reads = touched + pm.len() as u32;
        let rcw_reads = dd - touched;
        let mut reads = Vec::new();
        let strategy;
        if rmw_reads <= rcw_reads {
            strategy = Strategy::ReadModifyWrite;
            for (i, e) in ext.iter().enumerate() {
                if let Some((a, b)) = e {
                    reads.push(MemberIo { member: self.data_member(s, i as u32), offset: base + a, len: b - a });
                }
            }
            for &m in &pm {
                reads.push(MemberIo { member: m, offset: base + plo, len: phi - plo });
            }
        } else {
            strategy = Strategy::ReconstructWrite;
            for (i, e) in ext.iter().enumerate() {
                if e.is_none() {
                    reads.push(MemberIo { member: self.data_member(s, i as u32), offset: base + plo, len: phi - plo });
                }
            }
        }
        for (i, e) in ext.iter().enumerate() {
            if let Some((a, b)) = e {
                writes.push(MemberIo { member: self.data_member(s, i as u32), offset: base + a, len: b - a });
            }
        }
        for &m in &pm {
            writes.push(MemberIo { member: m, offset: base + plo, len: phi - plo });
        }
        let parity_bytes = (phi - plo) * (dd.min(rmw_reads + touched) as u64) * pm.len() as u64;
        WritePlan { strategy, reads, parity_bytes, writes }
    }
}

/// Append, merging with an earlier I/O of the same member that ends where this one starts.
fn push_merge(out: &mut Vec<MemberIo>, start: usize, io: MemberIo) {
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
        ArrayGeom { level, members: n, chunk: 4096, member_bytes: 1 << 20 }
    }

    #[test]
    fn raid5_left_symmetric_rotates_parity_backwards() {
        let a = g(Level::Raid5, 4);
        assert_eq!(a.parity_members(0).0, 3);
        assert_eq!(a.parity_members(1).0, 2);
        // Stripe 1: parity on 2, data starts on 3.
        let mut v = vec![];
        a.map_read(3 * 4096, 4096, |c| c[0], &mut v);
        assert_eq!(v, vec![MemberIo { member: 3, offset: 4096, len: 4096 }]);
    }

    #[test]
    fn sequential_read_merges_per_member() {
        let a = g(Level::Raid0, 4);
        let mut v = vec![];
        a.map_read(0, 8 * 4096, |c| c[0], &mut v);
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
        assert_eq!(p.writes, vec![MemberIo { member: 2, offset: 0, len: 4096 }, MemberIo { member: 3, offset: 0, len: 4096 }]);
    }
}
