//! An array's shape in the terms the I/O path needs: for parity levels one *row* (a stripe:
//! one chunk at the same member offset on every member) at a time, for the others the copies
//! of one logical chunk. Placement itself (md's raid5_compute_sector, raid10's copies, the
//! syndrome order) comes from raidlab-geometry, the planner the simulator uses too; this
//! module adds the names stored in superblocks and the I/O unit of each level.

use crate::error::ArrayError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Linear,
    Raid0,
    Raid1,
    Raid10,
    Raid4,
    Raid5,
    Raid6,
}

impl Level {
    pub fn parse(s: &str) -> Result<Level, ArrayError> {
        Ok(match s.to_ascii_lowercase().trim_start_matches("raid") {
            "linear" | "-1" => Level::Linear,
            "0" => Level::Raid0,
            "1" => Level::Raid1,
            "10" => Level::Raid10,
            "4" => Level::Raid4,
            "5" => Level::Raid5,
            "6" => Level::Raid6,
            _ => {
                return Err(ArrayError::usage(format!(
                    "level '{s}' is unknown (valid: linear, 0, 1, 10, 4, 5, 6)"
                )))
            }
        })
    }
    /// mdadm's name, as stored in superblocks.
    pub fn name(self) -> &'static str {
        match self {
            Level::Linear => "linear",
            Level::Raid0 => "raid0",
            Level::Raid1 => "raid1",
            Level::Raid10 => "raid10",
            Level::Raid4 => "raid4",
            Level::Raid5 => "raid5",
            Level::Raid6 => "raid6",
        }
    }
    pub fn to_md(self) -> raidlab_geometry::Level {
        use raidlab_geometry::Level as L;
        match self {
            Level::Linear => L::Linear,
            Level::Raid0 => L::Raid0,
            Level::Raid1 => L::Raid1,
            Level::Raid10 => L::Raid10,
            Level::Raid4 => L::Raid4,
            Level::Raid5 => L::Raid5,
            Level::Raid6 => L::Raid6,
        }
    }
    pub fn parity_blocks(self) -> u32 {
        match self {
            Level::Raid4 | Level::Raid5 => 1,
            Level::Raid6 => 2,
            _ => 0,
        }
    }
    pub fn has_chunk(self) -> bool {
        !matches!(self, Level::Linear | Level::Raid1)
    }
}

/// md's parity placements (raid5.h ALGORITHM_*), and RAID 10's copy arrangement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    None,
    LeftAsymmetric,
    RightAsymmetric,
    LeftSymmetric,
    RightSymmetric,
    ParityFirst,
    ParityLast,
    LeftAsymmetric6,
    RightAsymmetric6,
    LeftSymmetric6,
    RightSymmetric6,
    ParityFirst6,
    /// RAID 10: `near` copies side by side, `far` copies in far sections (or, with `offset`,
    /// in the next chunk row).
    Raid10 {
        near: u32,
        far: u32,
        offset: bool,
    },
}

const PARITY_LAYOUTS: &str =
    "left-asymmetric, right-asymmetric, left-symmetric, right-symmetric, parity-first, parity-last";
const RAID6_EXTRA: &str =
    "left-asymmetric-6, right-asymmetric-6, left-symmetric-6, right-symmetric-6, parity-first-6";

impl Layout {
    /// mdadm's default for each level: left-symmetric for 5 and 6, parity-last for 4, n2 for 10.
    pub fn default_for(level: Level) -> Layout {
        match level {
            Level::Raid4 => Layout::ParityLast,
            Level::Raid5 | Level::Raid6 => Layout::LeftSymmetric,
            Level::Raid10 => Layout::Raid10 {
                near: 2,
                far: 1,
                offset: false,
            },
            _ => Layout::None,
        }
    }

    pub fn parse(level: Level, s: &str) -> Result<Layout, ArrayError> {
        let s = s.trim().to_ascii_lowercase();
        let bad = |valid: &str| {
            Err(ArrayError::usage(format!(
                "layout '{s}' is not valid for {} (valid: {valid})",
                level.name()
            )))
        };
        match level {
            Level::Linear | Level::Raid0 | Level::Raid1 => {
                if s.is_empty() {
                    Ok(Layout::None)
                } else {
                    bad("none")
                }
            }
            Level::Raid10 => {
                let (kind, n) = s.split_at(1.min(s.len()));
                let n: u32 = match n.parse() {
                    Ok(n) if (2..=8).contains(&n) => n,
                    _ => return bad("n2, f2, o2 (n, f or o followed by 2..8 copies)"),
                };
                Ok(match kind {
                    "n" => Layout::Raid10 {
                        near: n,
                        far: 1,
                        offset: false,
                    },
                    "f" => Layout::Raid10 {
                        near: 1,
                        far: n,
                        offset: false,
                    },
                    "o" => Layout::Raid10 {
                        near: 1,
                        far: n,
                        offset: true,
                    },
                    _ => return bad("n2, f2, o2"),
                })
            }
            Level::Raid4 => match s.as_str() {
                "parity-last" | "" => Ok(Layout::ParityLast),
                "parity-first" => Ok(Layout::ParityFirst),
                _ => bad("parity-last, parity-first"),
            },
            Level::Raid5 | Level::Raid6 => {
                let l = match s.as_str() {
                    "left-asymmetric" | "la" => Layout::LeftAsymmetric,
                    "right-asymmetric" | "ra" => Layout::RightAsymmetric,
                    "left-symmetric" | "ls" | "default" => Layout::LeftSymmetric,
                    "right-symmetric" | "rs" => Layout::RightSymmetric,
                    "parity-first" => Layout::ParityFirst,
                    "parity-last" => Layout::ParityLast,
                    "left-asymmetric-6" if level == Level::Raid6 => Layout::LeftAsymmetric6,
                    "right-asymmetric-6" if level == Level::Raid6 => Layout::RightAsymmetric6,
                    "left-symmetric-6" if level == Level::Raid6 => Layout::LeftSymmetric6,
                    "right-symmetric-6" if level == Level::Raid6 => Layout::RightSymmetric6,
                    "parity-first-6" if level == Level::Raid6 => Layout::ParityFirst6,
                    _ if level == Level::Raid6 => {
                        return bad(&format!("{PARITY_LAYOUTS}, {RAID6_EXTRA}"))
                    }
                    _ => return bad(PARITY_LAYOUTS),
                };
                Ok(l)
            }
        }
    }

    pub fn to_md(self) -> raidlab_geometry::Layout {
        use raidlab_geometry::Layout as L;
        match self {
            Layout::None => L::None,
            Layout::LeftAsymmetric => L::LeftAsymmetric,
            Layout::RightAsymmetric => L::RightAsymmetric,
            Layout::LeftSymmetric => L::LeftSymmetric,
            Layout::RightSymmetric => L::RightSymmetric,
            Layout::ParityFirst => L::ParityFirst,
            Layout::ParityLast => L::ParityLast,
            Layout::LeftAsymmetric6 => L::LeftAsymmetric6,
            Layout::RightAsymmetric6 => L::RightAsymmetric6,
            Layout::LeftSymmetric6 => L::LeftSymmetric6,
            Layout::RightSymmetric6 => L::RightSymmetric6,
            Layout::ParityFirst6 => L::ParityFirst6,
            Layout::Raid10 { near, far, offset } => L::Raid10 { near, far, offset },
        }
    }

    pub fn name(self) -> String {
        match self {
            Layout::None => String::new(),
            Layout::LeftAsymmetric => "left-asymmetric".into(),
            Layout::RightAsymmetric => "right-asymmetric".into(),
            Layout::LeftSymmetric => "left-symmetric".into(),
            Layout::RightSymmetric => "right-symmetric".into(),
            Layout::ParityFirst => "parity-first".into(),
            Layout::ParityLast => "parity-last".into(),
            Layout::LeftAsymmetric6 => "left-asymmetric-6".into(),
            Layout::RightAsymmetric6 => "right-asymmetric-6".into(),
            Layout::LeftSymmetric6 => "left-symmetric-6".into(),
            Layout::RightSymmetric6 => "right-symmetric-6".into(),
            Layout::ParityFirst6 => "parity-first-6".into(),
            Layout::Raid10 { near, far, offset } => {
                if far > 1 {
                    format!("{}{far}", if offset { 'o' } else { 'f' })
                } else {
                    format!("n{near}")
                }
            }
        }
    }
}

/// The data and parity members of one row of a RAID 4/5/6 array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Member holding data block i, in logical order.
    pub data: Vec<u32>,
    pub p: u32,
    pub q: Option<u32>,
    /// For RAID 6: the data indices in the order md feeds them to the syndrome
    /// (Q = Σ g^k · D[syndrome[k]]). Identity for the symmetric layouts.
    pub syndrome: Vec<usize>,
}

/// One copy of a logical chunk: which member, and the chunk's byte offset in its data area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copy {
    pub member: u32,
    pub offset: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    pub level: Level,
    pub layout: Layout,
    pub chunk: u64,
    pub members: u32,
    /// Usable bytes of each member's data area (a whole number of chunks where chunked).
    pub member_bytes: u64,
    /// The shared planner's geometry: every placement question (which member holds a data
    /// chunk, where parity goes, where mirror copies are) is answered by it.
    pub md: raidlab_geometry::Geometry,
}

impl Geometry {
    pub fn new(
        level: Level,
        layout: Layout,
        chunk: u64,
        members: u32,
        member_bytes: u64,
    ) -> Result<Geometry, ArrayError> {
        let min = match level {
            Level::Linear | Level::Raid0 => 1,
            Level::Raid1 | Level::Raid10 | Level::Raid4 | Level::Raid5 => 2,
            Level::Raid6 => 4,
        };
        if members < min {
            return Err(ArrayError::usage(format!(
                "{} needs at least {min} members, got {members}",
                level.name()
            )));
        }
        if level.has_chunk() && (chunk < 4096 || !chunk.is_power_of_two()) {
            return Err(ArrayError::usage(format!(
                "chunk {chunk} bytes is not valid (valid: a power of two of at least 4 KiB, e.g. 64k, 512k)"
            )));
        }
        if let Layout::Raid10 { near, far, .. } = layout {
            if near * far > members {
                return Err(ArrayError::usage(format!(
                    "raid10 layout {} keeps {} copies but there are only {members} members",
                    layout.name(),
                    near * far
                )));
            }
        }
        // Levels without a chunk still move data in units: a whole member for linear, and for
        // RAID 1 64 KiB (4 KiB on tiny members), which is also its lock and resync unit.
        let unit = match level {
            _ if level.has_chunk() => chunk,
            Level::Raid1 if member_bytes >= 1 << 20 => 65536,
            _ => 4096,
        };
        let member_bytes = member_bytes / unit * unit;
        let far = match layout {
            Layout::Raid10 { far, .. } => far as u64,
            _ => 1,
        };
        if member_bytes / unit < far {
            return Err(ArrayError::usage(format!(
                "members are too small: each needs room for at least {far} chunk(s) of {unit} bytes after the metadata"
            )));
        }
        let chunk = if level == Level::Linear {
            member_bytes
        } else {
            unit
        };
        let md = raidlab_geometry::Geometry::new(
            level.to_md(),
            layout.to_md(),
            if level == Level::Linear { 4096 } else { chunk },
            members,
            member_bytes,
        )
        .map_err(|e| ArrayError::usage(e.to_string()))?;
        Ok(Geometry {
            level,
            layout,
            chunk,
            members,
            member_bytes,
            md,
        })
    }

    pub fn data_disks(&self) -> u32 {
        self.md.data_disks()
    }

    /// Member failures tolerated in the worst case.
    pub fn redundancy(&self) -> u32 {
        self.md.redundancy()
    }

    /// Logical bytes of the array.
    pub fn capacity(&self) -> u64 {
        self.md.capacity()
    }

    /// Data bytes in one full row (stripe) of a parity level; one chunk per data member
    /// for RAID 0; one chunk for the mirrored levels.
    pub fn stripe_data_bytes(&self) -> u64 {
        match self.level {
            Level::Raid1 | Level::Raid10 => self.chunk,
            Level::Linear => self.chunk,
            _ => self.data_disks() as u64 * self.chunk,
        }
    }

    pub fn rows(&self) -> u64 {
        self.member_bytes / self.chunk
    }

    /// RAID 4/5/6: the members of row `row` (member offset `row * chunk`).
    pub fn row(&self, row: u64) -> Row {
        let st = self
            .md
            .stripe_layout(row)
            .expect("row() is for parity levels");
        let nd = st.data.len();
        // q_slot[k] is data block k's position in md's syndrome order; invert it.
        let syndrome = if st.q.is_some() {
            let mut order: Vec<usize> = (0..nd).collect();
            order.sort_by_key(|&k| st.q_slot[k]);
            order
        } else {
            (0..nd).collect()
        };
        Row {
            data: st.data,
            p: st.p.expect("parity level"),
            q: st.q,
            syndrome,
        }
    }

    /// Linear, RAID 0, 1, 10: every copy of logical chunk `c` (of `self.chunk` bytes; for
    /// linear, of the member size). The first copy is the preferred one to read.
    pub fn chunk_copies(&self, c: u64) -> Vec<Copy> {
        self.md
            .map(c * self.chunk)
            .into_iter()
            .map(|l| Copy {
                member: l.member,
                offset: l.offset,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(level: Level, layout: Layout, members: u32) -> Geometry {
        Geometry::new(level, layout, 4096, members, 64 * 4096).unwrap()
    }

    #[test]
    fn raid5_left_symmetric_matches_md() {
        // md's left-symmetric on 4 disks: parity walks 3,2,1,0; data starts after parity.
        let geo = g(Level::Raid5, Layout::LeftSymmetric, 4);
        assert_eq!(
            geo.row(0),
            Row {
                data: vec![0, 1, 2],
                p: 3,
                q: None,
                syndrome: vec![0, 1, 2]
            }
        );
        assert_eq!(geo.row(1).data, vec![3, 0, 1]);
        assert_eq!(geo.row(1).p, 2);
        assert_eq!(geo.row(3).p, 0);
        assert_eq!(geo.row(3).data, vec![1, 2, 3]);
        assert_eq!(geo.row(4), geo.row(0));
    }

    #[test]
    fn raid5_asymmetric_and_fixed_parity() {
        let la = g(Level::Raid5, Layout::LeftAsymmetric, 4);
        assert_eq!((la.row(1).data, la.row(1).p), (vec![0, 1, 3], 2));
        let ra = g(Level::Raid5, Layout::RightAsymmetric, 4);
        assert_eq!((ra.row(1).data, ra.row(1).p), (vec![0, 2, 3], 1));
        let rs = g(Level::Raid5, Layout::RightSymmetric, 4);
        assert_eq!((rs.row(1).data, rs.row(1).p), (vec![2, 3, 0], 1));
        let r4 = g(Level::Raid4, Layout::ParityLast, 5);
        assert_eq!((r4.row(7).data, r4.row(7).p), (vec![0, 1, 2, 3], 4));
    }

    #[test]
    fn raid6_rows_use_every_member_once() {
        for layout in [
            Layout::LeftAsymmetric,
            Layout::RightAsymmetric,
            Layout::LeftSymmetric,
            Layout::RightSymmetric,
            Layout::ParityFirst,
            Layout::ParityLast,
            Layout::LeftAsymmetric6,
            Layout::RightAsymmetric6,
            Layout::LeftSymmetric6,
            Layout::RightSymmetric6,
            Layout::ParityFirst6,
        ] {
            let geo = g(Level::Raid6, layout, 6);
            for r in 0..12 {
                let row = geo.row(r);
                let mut all: Vec<u32> = row.data.clone();
                all.push(row.p);
                all.push(row.q.unwrap());
                all.sort();
                assert_eq!(all, (0..6).collect::<Vec<_>>(), "{layout:?} row {r}");
                let mut syn = row.syndrome.clone();
                syn.sort();
                assert_eq!(syn, (0..4).collect::<Vec<_>>());
            }
        }
        // left-symmetric: P walks down from the last disk, Q follows it, data after Q.
        let ls = g(Level::Raid6, Layout::LeftSymmetric, 5);
        assert_eq!(
            ls.row(0),
            Row {
                data: vec![1, 2, 3],
                p: 4,
                q: Some(0),
                syndrome: vec![0, 1, 2]
            }
        );
        assert_eq!(
            ls.row(1),
            Row {
                data: vec![0, 1, 2],
                p: 3,
                q: Some(4),
                syndrome: vec![0, 1, 2]
            }
        );
    }

    #[test]
    fn raid10_copies_land_on_distinct_members() {
        for layout in [
            Layout::Raid10 {
                near: 2,
                far: 1,
                offset: false,
            },
            Layout::Raid10 {
                near: 1,
                far: 2,
                offset: false,
            },
            Layout::Raid10 {
                near: 1,
                far: 2,
                offset: true,
            },
            Layout::Raid10 {
                near: 3,
                far: 1,
                offset: false,
            },
        ] {
            for members in 3..7 {
                let geo = g(Level::Raid10, layout, members);
                let chunks = geo.capacity() / geo.chunk;
                let mut used = std::collections::HashSet::new();
                for c in 0..chunks {
                    let copies = geo.chunk_copies(c);
                    let mut ms: Vec<u32> = copies.iter().map(|x| x.member).collect();
                    ms.sort();
                    ms.dedup();
                    assert_eq!(ms.len(), copies.len(), "{layout:?} {members} chunk {c}");
                    for x in copies {
                        assert!(x.offset + geo.chunk <= geo.member_bytes);
                        assert!(
                            used.insert((x.member, x.offset)),
                            "{layout:?} {members}: overlap at chunk {c}"
                        );
                    }
                }
            }
        }
        // near=2 on 4 disks: chunk 0 on disks 0,1; chunk 1 on 2,3; chunk 2 on 0,1 one row down.
        let n2 = g(
            Level::Raid10,
            Layout::Raid10 {
                near: 2,
                far: 1,
                offset: false,
            },
            4,
        );
        assert_eq!(
            n2.chunk_copies(2),
            vec![
                Copy {
                    member: 0,
                    offset: 4096
                },
                Copy {
                    member: 1,
                    offset: 4096
                }
            ]
        );
    }
}
