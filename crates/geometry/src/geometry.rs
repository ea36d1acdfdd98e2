//! Where md puts each byte: logical offset → (member, offset in the member's data area).

use serde::{Deserialize, Serialize};

use crate::{GeometryError, Layout, Level};

/// One RAID array's shape. Offsets on members are relative to each member's data area (the
/// caller adds its own data offset, e.g. after a superblock).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Geometry {
    pub level: Level,
    pub layout: Layout,
    /// Chunk size in bytes (power of two, ≥ 512). RAID 1 uses it only as the granule of its
    /// read-balancing rule; linear ignores it.
    pub chunk_bytes: u64,
    /// Number of members (md's raid_disks).
    pub members: u32,
    /// Size of each member's data area in bytes (all members equal).
    pub member_bytes: u64,
}

/// One place a logical byte lives: a member and the offset within its data area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Location {
    pub member: u32,
    pub offset: u64,
}

/// The roles of the members in one stripe of a striped level (RAID 0/4/5/6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StripeLayout {
    pub stripe: u64,
    /// `data[k]` = member holding the stripe's k-th data chunk (logical order).
    pub data: Vec<u32>,
    /// Member holding P (RAID 4/5/6).
    pub p: Option<u32>,
    /// Member holding Q (RAID 6).
    pub q: Option<u32>,
    /// `q_slot[k]` = position of data chunk k in md's syndrome source list, i.e. Q includes
    /// `g^q_slot[k] · D_k`. md walks the members from the one after Q (raid5.c `raid6_d0`,
    /// `raid6_idx_to_slot`), so for asymmetric layouts this is not k; for DDF layouts it is the
    /// member index. Empty for RAID 0/4/5.
    pub q_slot: Vec<u32>,
    /// Length of md's syndrome source list: members − 2, or members for DDF layouts (whose P
    /// and Q slots hold zeros). 0 when there is no Q.
    pub syndrome_slots: u32,
}

impl StripeLayout {
    /// The data index stored on `member` in this stripe, if it holds data.
    pub fn data_index(&self, member: u32) -> Option<u32> {
        self.data
            .iter()
            .position(|&m| m == member)
            .map(|k| k as u32)
    }
}

/// md's raid10 geometry numbers (raid10.c `setup_geo` / `raid10_size`), in chunks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct R10 {
    pub near: u64,
    pub far: u64,
    pub offset: bool,
    /// Distance between far copies in chunks (1 for offset layouts).
    pub stride: u64,
    /// Array size in chunks.
    pub size: u64,
}

impl Geometry {
    /// Check the shape the way md does and build it.
    pub fn new(
        level: Level,
        layout: Layout,
        chunk_bytes: u64,
        members: u32,
        member_bytes: u64,
    ) -> Result<Geometry, GeometryError> {
        let layout = if layout == Layout::None {
            Layout::default_for(level)
        } else {
            layout
        };
        let g = Geometry {
            level,
            layout,
            chunk_bytes,
            members,
            member_bytes,
        };
        g.validate()?;
        Ok(g)
    }

    /// Check an existing value (e.g. one read back from a superblock).
    pub fn validate(&self) -> Result<(), GeometryError> {
        let (level, n) = (self.level, self.members);
        if !self.layout.valid_for(level) {
            return Err(GeometryError::usage(format!(
                "layout {} is not valid for {level}",
                self.layout
            )));
        }
        if self.chunk_bytes < 512 || !self.chunk_bytes.is_power_of_two() {
            return Err(GeometryError::usage(format!(
                "chunk size {} bytes is not valid (a power of two, at least 512)",
                self.chunk_bytes
            )));
        }
        Self::check_members(level, self.layout, n)?;
        let need = match level {
            Level::Linear | Level::Raid1 => 1,
            _ => self.chunk_bytes,
        };
        if self.member_bytes < need {
            return Err(GeometryError::usage(format!(
                "member size {} bytes is too small for {level} (at least {need} bytes)",
                self.member_bytes
            )));
        }
        if level == Level::Raid10 && self.r10().size == 0 {
            return Err(GeometryError::usage(format!(
                "member size {} bytes is too small for raid10 {} with {} byte chunks",
                self.member_bytes, self.layout, self.chunk_bytes
            )));
        }
        Ok(())
    }

    /// Whether an array of `level` laid out in `layout` (`Layout::None`: the level's default)
    /// may have `members` members, as [`Geometry::new`] checks: [`Level::members`], and for
    /// raid10 at least as many members as the layout keeps copies (near × far). The error
    /// names the valid counts.
    pub fn check_members(level: Level, layout: Layout, members: u32) -> Result<(), GeometryError> {
        let n = members;
        let valid = level.members();
        if !valid.contains(&n) {
            return Err(GeometryError::usage(format!(
                "{level} with {n} members is not valid (needs {} to {} members)",
                valid.start(),
                valid.end()
            )));
        }
        let layout = if layout == Layout::None {
            Layout::default_for(level)
        } else {
            layout
        };
        if let Layout::Raid10 { near, far, .. } = layout {
            let copies = near as u64 * far as u64;
            if near == 0 || far == 0 || copies < 2 || copies > n as u64 {
                // Said in copies: a one-copy layout prints as n1 whether given as n1 or f1.
                let kept = if copies == 1 { "copy" } else { "copies" };
                return Err(GeometryError::usage(format!(
                    "raid10 layout {layout} keeps {copies} {kept} of each chunk (valid on {n} members: 2 to {n} copies, near × far, e.g. n2, f2, o2)"
                )));
            }
        }
        Ok(())
    }

    /// Chunks of a member's data area md uses (member size rounded down to whole chunks).
    fn member_chunks(&self) -> u64 {
        self.member_bytes / self.chunk_bytes
    }

    pub(crate) fn r10(&self) -> R10 {
        let (near, far, offset) = match self.layout {
            Layout::Raid10 { near, far, offset } => (near as u64, far as u64, offset),
            _ => (1, 1, false),
        };
        let n = self.members as u64;
        // raid10.c raid10_size(): chunks per member / far copies × raid_disks / near copies.
        let size = (self.member_chunks() / far) * n / near;
        // setup_geo(): used chunks per member = ceil(size × copies / raid_disks); the far
        // copies are `stride` chunks apart (1 chunk for offset layouts).
        let used = (size * near * far).div_ceil(n);
        let stride = if offset { 1 } else { used / far };
        R10 {
            near,
            far,
            offset,
            stride,
            size,
        }
    }

    /// Logical capacity in bytes.
    pub fn capacity(&self) -> u64 {
        let n = self.members as u64;
        match self.level {
            Level::Linear => n * self.member_bytes,
            Level::Raid1 => self.member_bytes,
            Level::Raid0 => n * self.member_chunks() * self.chunk_bytes,
            Level::Raid4 | Level::Raid5 | Level::Raid6 => {
                self.data_disks() as u64 * self.member_chunks() * self.chunk_bytes
            }
            Level::Raid10 => self.r10().size * self.chunk_bytes,
        }
    }

    /// Bytes of each member's data area the layout uses (the rest is never touched).
    pub fn member_used_bytes(&self) -> u64 {
        match self.level {
            Level::Linear | Level::Raid1 => self.member_bytes,
            Level::Raid10 => {
                let r = self.r10();
                (r.size * r.near * r.far).div_ceil(self.members as u64) * self.chunk_bytes
            }
            _ => self.member_chunks() * self.chunk_bytes,
        }
    }

    /// Data chunks per stripe: members − parity for RAID 4/5/6, members for RAID 0, 1 for
    /// linear and RAID 1, members / copies (rounded down, at least 1) for RAID 10.
    pub fn data_disks(&self) -> u32 {
        match self.level {
            Level::Linear | Level::Raid1 => 1,
            Level::Raid0 => self.members,
            Level::Raid4 | Level::Raid5 => self.members - 1,
            Level::Raid6 => self.members - 2,
            Level::Raid10 => {
                let r = self.r10();
                ((self.members as u64 / (r.near * r.far)) as u32).max(1)
            }
        }
    }

    /// Data bytes in one full stripe (data_disks × chunk; the member size for linear).
    pub fn stripe_data_bytes(&self) -> u64 {
        match self.level {
            Level::Linear => self.member_bytes,
            _ => self.data_disks() as u64 * self.chunk_bytes,
        }
    }

    /// Copies of each data byte (1 for non-mirrored levels).
    pub fn copies(&self) -> u32 {
        match self.level {
            Level::Raid1 => self.members,
            Level::Raid10 => {
                let r = self.r10();
                (r.near * r.far) as u32
            }
            _ => 1,
        }
    }

    /// Member failures tolerated in the worst case.
    pub fn redundancy(&self) -> u32 {
        match self.level {
            Level::Linear | Level::Raid0 => 0,
            Level::Raid1 | Level::Raid10 => self.copies() - 1,
            Level::Raid4 | Level::Raid5 => 1,
            Level::Raid6 => 2,
        }
    }

    /// Whether every data byte is still readable (directly or through parity) with these
    /// members failed. Can be true beyond `redundancy()` for RAID 10 when the failures hit
    /// different copy sets.
    pub fn survives(&self, failed: &[u32]) -> bool {
        let mut f: Vec<u32> = failed
            .iter()
            .copied()
            .filter(|&m| m < self.members)
            .collect();
        if f.is_empty() {
            // (Whole: every level reads every byte. Planning asks at every request, so the
            // RAID 10 walk below must not run for a whole array.)
            return true;
        }
        f.sort_unstable();
        f.dedup();
        match self.level {
            Level::Linear | Level::Raid0 => f.is_empty(),
            Level::Raid1 => (f.len() as u32) < self.members,
            Level::Raid4 | Level::Raid5 | Level::Raid6 => f.len() as u32 <= self.redundancy(),
            Level::Raid10 => {
                // The copy sets depend only on (chunk × near) mod members: one period of
                // `members` chunks covers every pattern.
                let period = (self.members as u64).min(self.r10().size);
                (0..period).all(|c| {
                    self.map(c * self.chunk_bytes)
                        .iter()
                        .any(|l| f.binary_search(&l.member).is_err())
                })
            }
        }
    }

    /// The stripe's member roles for striped levels (RAID 0/4/5/6); `None` for the others.
    /// Parity placement follows drivers/md/raid5.c `raid5_compute_sector`.
    pub fn stripe_layout(&self, stripe: u64) -> Option<StripeLayout> {
        let n = self.members as u64;
        let s = stripe;
        match self.level {
            Level::Raid0 => Some(StripeLayout {
                stripe,
                data: (0..self.members).collect(),
                p: None,
                q: None,
                q_slot: vec![],
                syndrome_slots: 0,
            }),
            Level::Raid4 | Level::Raid5 => {
                let dd = n - 1;
                // (parity member, data member of index k)
                let (pd, member): (u64, Box<dyn Fn(u64) -> u64>) = match (self.level, self.layout) {
                    (Level::Raid4, _) | (_, Layout::ParityLast) => (dd, Box::new(|k| k)),
                    (_, Layout::LeftAsymmetric) => {
                        let pd = dd - s % n;
                        (pd, Box::new(move |k| if k >= pd { k + 1 } else { k }))
                    }
                    (_, Layout::RightAsymmetric) => {
                        let pd = s % n;
                        (pd, Box::new(move |k| if k >= pd { k + 1 } else { k }))
                    }
                    (_, Layout::LeftSymmetric) => {
                        let pd = dd - s % n;
                        (pd, Box::new(move |k| (pd + 1 + k) % n))
                    }
                    (_, Layout::RightSymmetric) => {
                        let pd = s % n;
                        (pd, Box::new(move |k| (pd + 1 + k) % n))
                    }
                    (_, Layout::ParityFirst) => (0, Box::new(|k| k + 1)),
                    _ => unreachable!("validated layout"),
                };
                Some(StripeLayout {
                    stripe,
                    data: (0..dd).map(|k| member(k) as u32).collect(),
                    p: Some(pd as u32),
                    q: None,
                    q_slot: vec![],
                    syndrome_slots: 0,
                })
            }
            Level::Raid6 => {
                let dd = n - 2;
                // Layouts where data fills members in order, skipping P and Q (or Q D.. P).
                let asym = |pd: u64| -> (u64, Vec<u64>) {
                    if pd == n - 1 {
                        (0, (0..dd).map(|k| k + 1).collect()) // Q D D D P
                    } else {
                        (
                            pd + 1,
                            (0..dd).map(|k| if k >= pd { k + 2 } else { k }).collect(),
                        ) // D D P Q D
                    }
                };
                let (pd, qd, data): (u64, u64, Vec<u64>) = match self.layout {
                    Layout::LeftAsymmetric => {
                        let (qd, d) = asym(n - 1 - s % n);
                        (n - 1 - s % n, qd, d)
                    }
                    Layout::RightAsymmetric | Layout::DdfZeroRestart => {
                        let (qd, d) = asym(s % n);
                        (s % n, qd, d)
                    }
                    Layout::DdfNRestart => {
                        let pd = n - 1 - (s + 1) % n;
                        let (qd, d) = asym(pd);
                        (pd, qd, d)
                    }
                    Layout::LeftSymmetric => {
                        let pd = n - 1 - s % n;
                        (
                            pd,
                            (pd + 1) % n,
                            (0..dd).map(|k| (pd + 2 + k) % n).collect(),
                        )
                    }
                    Layout::RightSymmetric => {
                        let pd = s % n;
                        (
                            pd,
                            (pd + 1) % n,
                            (0..dd).map(|k| (pd + 2 + k) % n).collect(),
                        )
                    }
                    Layout::ParityFirst => (0, 1, (0..dd).map(|k| k + 2).collect()),
                    Layout::ParityLast => (dd, dd + 1, (0..dd).collect()),
                    Layout::DdfNContinue => {
                        let pd = n - 1 - s % n;
                        (
                            pd,
                            (pd + n - 1) % n,
                            (0..dd).map(|k| (pd + 1 + k) % n).collect(),
                        )
                    }
                    Layout::LeftAsymmetric6 | Layout::RightAsymmetric6 => {
                        let pd = if self.layout == Layout::LeftAsymmetric6 {
                            dd - s % (n - 1)
                        } else {
                            s % (n - 1)
                        };
                        (
                            pd,
                            n - 1,
                            (0..dd).map(|k| if k >= pd { k + 1 } else { k }).collect(),
                        )
                    }
                    Layout::LeftSymmetric6 | Layout::RightSymmetric6 => {
                        let pd = if self.layout == Layout::LeftSymmetric6 {
                            dd - s % (n - 1)
                        } else {
                            s % (n - 1)
                        };
                        (pd, n - 1, (0..dd).map(|k| (pd + 1 + k) % (n - 1)).collect())
                    }
                    Layout::ParityFirst6 => (0, n - 1, (0..dd).map(|k| k + 1).collect()),
                    _ => unreachable!("validated layout"),
                };
                // md's syndrome source order (raid5.c raid6_d0 / raid6_idx_to_slot).
                let ddf = self.layout.is_ddf();
                let mut slot_of_member = vec![u32::MAX; n as usize];
                if ddf {
                    for (m, s) in slot_of_member.iter_mut().enumerate() {
                        *s = m as u32;
                    }
                } else {
                    let d0 = if qd == n - 1 { 0 } else { qd + 1 };
                    let mut count = 0;
                    for i in 0..n {
                        let m = (d0 + i) % n;
                        if m != pd && m != qd {
                            slot_of_member[m as usize] = count;
                            count += 1;
                        }
                    }
                }
                Some(StripeLayout {
                    stripe,
                    q_slot: data.iter().map(|&m| slot_of_member[m as usize]).collect(),
                    data: data.into_iter().map(|m| m as u32).collect(),
                    p: Some(pd as u32),
                    q: Some(qd as u32),
                    syndrome_slots: if ddf { n as u32 } else { (n - 2) as u32 },
                })
            }
            _ => None,
        }
    }

    /// Every copy of the data byte at `logical` (one location for non-mirrored levels; md's
    /// copy order for RAID 10: each near copy followed by its far copies). Empty when
    /// `logical` is at or beyond the capacity.
    pub fn map(&self, logical: u64) -> Vec<Location> {
        if logical >= self.capacity() {
            return vec![];
        }
        let c = self.chunk_bytes;
        let n = self.members as u64;
        match self.level {
            Level::Linear => vec![Location {
                member: (logical / self.member_bytes) as u32,
                offset: logical % self.member_bytes,
            }],
            Level::Raid1 => (0..self.members)
                .map(|m| Location {
                    member: m,
                    offset: logical,
                })
                .collect(),
            Level::Raid0 => {
                let chunk = logical / c;
                vec![Location {
                    member: (chunk % n) as u32,
                    offset: (chunk / n) * c + logical % c,
                }]
            }
            Level::Raid4 | Level::Raid5 | Level::Raid6 => {
                let dd = self.data_disks() as u64;
                let chunk = logical / c;
                let sl = self.stripe_layout(chunk / dd).expect("striped level");
                vec![Location {
                    member: sl.data[(chunk % dd) as usize],
                    offset: (chunk / dd) * c + logical % c,
                }]
            }
            Level::Raid10 => self.r10_copies(logical),
        }
    }

    /// raid10.c `__raid10_find_phys` (far sets of `raid_disks` members, md's classic layout).
    fn r10_copies(&self, logical: u64) -> Vec<Location> {
        let r = self.r10();
        let c = self.chunk_bytes;
        let n = self.members as u64;
        let chunk = (logical / c) * r.near;
        let mut dev = chunk % n;
        let mut stripe = chunk / n;
        if r.offset {
            stripe *= r.far;
        }
        let mut base = stripe * c + logical % c;
        let mut out = Vec::with_capacity((r.near * r.far) as usize);
        for _ in 0..r.near {
            let (mut d, mut s) = (dev, base);
            out.push(Location {
                member: d as u32,
                offset: s,
            });
            for _ in 1..r.far {
                d = (d + r.near) % n;
                s += r.stride * c;
                out.push(Location {
                    member: d as u32,
                    offset: s,
                });
            }
            dev += 1;
            if dev >= n {
                dev = 0;
                base += c;
            }
        }
        out
    }

    /// The logical offset whose data (or one copy of it) is at `offset` on `member`; `None` for
    /// parity blocks, unused space, or a member the array does not have.
    pub fn unmap(&self, member: u32, offset: u64) -> Option<u64> {
        if member >= self.members || offset >= self.member_used_bytes() {
            return None;
        }
        let c = self.chunk_bytes;
        let n = self.members as u64;
        let m = member as u64;
        let logical = match self.level {
            Level::Linear => m * self.member_bytes + offset,
            Level::Raid1 => offset,
            Level::Raid0 => ((offset / c) * n + m) * c + offset % c,
            Level::Raid4 | Level::Raid5 | Level::Raid6 => {
                let stripe = offset / c;
                let sl = self.stripe_layout(stripe)?;
                let k = sl.data_index(member)? as u64;
                (stripe * self.data_disks() as u64 + k) * c + offset % c
            }
            Level::Raid10 => {
                let r = self.r10();
                let row = offset / c;
                let (f, row0) = if r.offset {
                    (row % r.far, row / r.far)
                } else {
                    let f = row / r.stride;
                    if f >= r.far {
                        return None;
                    }
                    (f, row - f * r.stride)
                };
                let d0 = (m + n - (f * r.near) % n) % n;
                let x = row0 * n + d0;
                (x / r.near) * c + offset % c
            }
        };
        (logical < self.capacity()).then_some(logical)
    }
}

impl std::fmt::Display for Geometry {
    /// One line in mdadm's words, e.g. "raid5 left-symmetric, 5 members, 64 KiB chunks,
    /// 4 data + 1 parity per stripe, 1073741824 bytes".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.level)?;
        if self.layout != Layout::None {
            write!(f, " {}", self.layout)?;
        }
        write!(f, ", {} members", self.members)?;
        if !matches!(self.level, Level::Linear | Level::Raid1) {
            write!(f, ", {} KiB chunks", self.chunk_bytes / 1024)?;
        }
        match self.level {
            Level::Raid4 | Level::Raid5 | Level::Raid6 => write!(
                f,
                ", {} data + {} parity per stripe",
                self.data_disks(),
                self.level.parity_count()
            )?,
            Level::Raid1 | Level::Raid10 => write!(f, ", {} copies", self.copies())?,
            _ => {}
        }
        write!(f, ", {} bytes", self.capacity())
    }
}
