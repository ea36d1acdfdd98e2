//! What the I/O path needs of an array's shape beyond raidlab-geometry: the array's own limits
//! (chunks of at least 4 KiB; RAID 1's copy unit; member sizes rounded to whole units), the
//! names stored in superblocks (mdadm's: `raid5`, `left-symmetric`, `n2`, ...; empty for levels
//! without a layout), and the copies of one mirror chunk as the I/O unit sees them. Placement
//! itself — md's raid5_compute_sector, raid10's copies, the Q coefficients — is raidlab-geometry's, the
//! planner the simulator uses too.

use crate::error::ArrayError;
use raidlab_geometry::{Geometry, GeometryError, Layout, Level};

impl From<GeometryError> for ArrayError {
    fn from(e: GeometryError) -> Self {
        ArrayError::usage(e.to_string())
    }
}

/// Parse a level as mdadm spells it (`5`, `raid5`, `linear`, `mirror`, ...).
pub fn parse_level(s: &str) -> Result<Level, ArrayError> {
    Ok(s.trim().parse::<Level>()?)
}

/// Parse a layout for `level` (mdadm's names; empty = md's default for the level).
pub fn parse_layout(level: Level, s: &str) -> Result<Layout, ArrayError> {
    Ok(Layout::parse(level, s.trim())?)
}

/// The layout's name as superblocks store it: mdadm's, and empty for levels without one.
pub fn layout_name(layout: Layout) -> String {
    match layout {
        Layout::None => String::new(),
        l => l.to_string(),
    }
}

/// Whether `--chunk` means anything for the level (linear and RAID 1 have no chunk).
pub fn has_chunk(level: Level) -> bool {
    !matches!(level, Level::Linear | Level::Raid1)
}

/// The array's geometry for members whose data areas hold `member_bytes` each. On top of
/// geometry's checks: the chunk is a power of two of at least 4 KiB; the member size is rounded
/// down to whole I/O units — the chunk, or for RAID 1 (whose `chunk` is 0 in superblocks)
/// 64 KiB (4 KiB on members under 1 MiB), also its lock and resync unit; for linear 4 KiB.
pub fn geometry(
    level: Level,
    layout: Layout,
    chunk: u64,
    members: u32,
    member_bytes: u64,
) -> Result<Geometry, ArrayError> {
    // The planner's rule (Level::members); past its maximum, Geometry::new says so below.
    let min = *level.members().start();
    if members < min {
        return Err(ArrayError::usage(format!(
            "{level} needs at least {min} members, got {members}"
        )));
    }
    if has_chunk(level) && (chunk < 4096 || !chunk.is_power_of_two()) {
        // (A bare number is bytes, as in every raidlab size and in a sweep's chunk axis;
        // mdadm reads one as KiB, hence the hint for small ones.)
        let kib = if chunk > 0 && chunk < 4096 && chunk.is_power_of_two() {
            format!("; a bare number is bytes, not KiB as mdadm reads it: {chunk}k")
        } else {
            String::new()
        };
        return Err(ArrayError::usage(format!(
            "chunk {chunk} bytes is not valid (valid: a power of two of at least 4 KiB, e.g. 64k, 512k{kib})"
        )));
    }
    if let Layout::Raid10 { near, far, .. } = layout {
        if near * far > members {
            return Err(ArrayError::usage(format!(
                "raid10 layout {layout} keeps {} copies but there are only {members} members",
                near * far
            )));
        }
    }
    let unit = match level {
        _ if has_chunk(level) => chunk,
        Level::Raid1 if member_bytes >= 1 << 20 => 65536,
        _ => 4096,
    };
    let member_bytes = member_bytes / unit * unit;
    let far = match layout {
        Layout::Raid10 { far, .. } => far as u64,
        _ => 1,
    };
    if member_bytes / unit < far.max(1) {
        return Err(ArrayError::usage(format!(
            "members are too small: each needs room for at least {} chunk(s) of {unit} bytes after the metadata",
            far.max(1)
        )));
    }
    Ok(Geometry::new(level, layout, unit, members, member_bytes)?)
}

/// The I/O unit: one row (stripe) of data for parity levels, one chunk otherwise (RAID 1's
/// copy unit; 4 KiB for linear). Locks, rebuild checkpoints and resync go by it.
pub fn unit(geo: &Geometry) -> u64 {
    if geo.level.has_parity() {
        geo.stripe_data_bytes()
    } else {
        geo.chunk_bytes
    }
}

/// One copy of a logical chunk: which member, and the chunk's byte offset in its data area.
pub type Copy = raidlab_geometry::Location;

/// Linear, RAID 0, 1, 10: every copy of logical chunk `c` (of `chunk_bytes`). The first copy
/// is the preferred one to read.
pub fn chunk_copies(geo: &Geometry, c: u64) -> Vec<Copy> {
    geo.map(c * geo.chunk_bytes)
}

/// The logical ranges of `geo` whose redundancy involves bytes [start, end) of `member`'s data
/// area: whole stripes for parity levels, else the logical chunks stored there. Sorted and
/// merged. A nested array uses it to turn a child's dirty ranges (the child's logical space is
/// the parent's member space) into its own ranges to resync.
pub fn member_range_to_logical(
    geo: &Geometry,
    member: u32,
    start: u64,
    end: u64,
) -> Vec<(u64, u64)> {
    let end = end.min(geo.member_used_bytes());
    let c = geo.chunk_bytes;
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut push = |s: u64, len: u64| match out.last_mut() {
        Some(last) if last.0 + last.1 >= s => last.1 = last.1.max(s + len - last.0),
        _ => out.push((s, len)),
    };
    if start >= end {
        return out;
    }
    if geo.level == Level::Linear {
        let base = member as u64 * geo.member_bytes;
        push(base + start, end - start);
    } else if geo.level.has_parity() {
        let sd = geo.stripe_data_bytes();
        for row in start / c..end.div_ceil(c) {
            push(row * sd, sd);
        }
    } else {
        let mut ls: Vec<u64> = (start / c..end.div_ceil(c))
            .filter_map(|k| geo.unmap(member, k * c))
            .map(|l| l / c * c)
            .collect();
        ls.sort_unstable();
        ls.dedup();
        for l in ls {
            push(l, c);
        }
    }
    out
}

/// The member ranges (member, offset in its data area, length) a write of logical
/// [offset, offset+len) of `geo` may touch, whatever members have failed: whole rows on every
/// member for parity levels and RAID 0, every copy for mirrors, the covered members' pieces for
/// linear. A superset of any plan's writes, merged per member. The reverse of
/// [`member_range_to_logical`]; a nested array uses it to mark write intent in its children.
pub fn logical_to_member_ranges(geo: &Geometry, offset: u64, len: u64) -> Vec<(u32, u64, u64)> {
    let mut out: Vec<(u32, u64, u64)> = Vec::new();
    if len == 0 {
        return out;
    }
    let end = offset + len;
    let c = geo.chunk_bytes;
    let rows = |first: u64, last: u64, out: &mut Vec<(u32, u64, u64)>| {
        for m in 0..geo.members {
            out.push((m, first * c, (last - first + 1) * c));
        }
    };
    match geo.level {
        Level::Linear => {
            let mb = geo.member_bytes;
            let mut pos = offset;
            while pos < end {
                let (m, off) = (pos / mb, pos % mb);
                let l = (end - pos).min(mb - off);
                out.push((m as u32, off, l));
                pos += l;
            }
        }
        Level::Raid0 => {
            let n = geo.members as u64;
            rows(offset / c / n, (end - 1) / c / n, &mut out);
        }
        Level::Raid4 | Level::Raid5 | Level::Raid6 => {
            let sd = geo.stripe_data_bytes();
            rows(offset / sd, (end - 1) / sd, &mut out);
        }
        Level::Raid1 | Level::Raid10 => {
            let mut pos = offset;
            while pos < end {
                let l = (end - pos).min(c - pos % c);
                for loc in geo.map(pos) {
                    out.push((loc.member, loc.offset, l));
                }
                pos += l;
            }
            out.sort_unstable();
            let mut merged: Vec<(u32, u64, u64)> = Vec::with_capacity(out.len());
            for (m, o, l) in out {
                match merged.last_mut() {
                    Some(last) if last.0 == m && last.1 + last.2 >= o => {
                        last.2 = last.2.max(o + l - last.1)
                    }
                    _ => merged.push((m, o, l)),
                }
            }
            out = merged;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row's members as md places them, with the data in syndrome order.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Row {
        data: Vec<u32>,
        p: u32,
        q: Option<u32>,
        syndrome: Vec<usize>,
    }

    fn row(geo: &Geometry, row: u64) -> Row {
        let st = geo.stripe_layout(row).unwrap();
        let mut syndrome: Vec<usize> = (0..st.data.len()).collect();
        if st.q.is_some() {
            syndrome.sort_by_key(|&k| st.q_slot[k]);
        }
        Row {
            data: st.data,
            p: st.p.unwrap(),
            q: st.q,
            syndrome,
        }
    }

    fn g(level: Level, layout: Layout, members: u32) -> Geometry {
        geometry(level, layout, 4096, members, 64 * 4096).unwrap()
    }

    #[test]
    fn raid5_left_symmetric_matches_md() {
        // md's left-symmetric on 4 disks: parity walks 3,2,1,0; data starts after parity.
        let geo = g(Level::Raid5, Layout::LeftSymmetric, 4);
        assert_eq!(
            row(&geo, 0),
            Row {
                data: vec![0, 1, 2],
                p: 3,
                q: None,
                syndrome: vec![0, 1, 2]
            }
        );
        assert_eq!(row(&geo, 1).data, vec![3, 0, 1]);
        assert_eq!(row(&geo, 1).p, 2);
        assert_eq!(row(&geo, 3).p, 0);
        assert_eq!(row(&geo, 3).data, vec![1, 2, 3]);
        assert_eq!(row(&geo, 4), row(&geo, 0));
    }

    #[test]
    fn raid5_asymmetric_and_fixed_parity() {
        let la = g(Level::Raid5, Layout::LeftAsymmetric, 4);
        assert_eq!((row(&la, 1).data, row(&la, 1).p), (vec![0, 1, 3], 2));
        let ra = g(Level::Raid5, Layout::RightAsymmetric, 4);
        assert_eq!((row(&ra, 1).data, row(&ra, 1).p), (vec![0, 2, 3], 1));
        let rs = g(Level::Raid5, Layout::RightSymmetric, 4);
        assert_eq!((row(&rs, 1).data, row(&rs, 1).p), (vec![2, 3, 0], 1));
        let r4 = g(Level::Raid4, Layout::ParityLast, 5);
        assert_eq!((row(&r4, 7).data, row(&r4, 7).p), (vec![0, 1, 2, 3], 4));
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
                let st = row(&geo, r);
                let mut all: Vec<u32> = st.data.clone();
                all.push(st.p);
                all.push(st.q.unwrap());
                all.sort();
                assert_eq!(all, (0..6).collect::<Vec<_>>(), "{layout:?} row {r}");
                let mut syn = st.syndrome.clone();
                syn.sort();
                assert_eq!(syn, (0..4).collect::<Vec<_>>());
            }
        }
        // left-symmetric: P walks down from the last disk, Q follows it, data after Q.
        let ls = g(Level::Raid6, Layout::LeftSymmetric, 5);
        assert_eq!(
            row(&ls, 0),
            Row {
                data: vec![1, 2, 3],
                p: 4,
                q: Some(0),
                syndrome: vec![0, 1, 2]
            }
        );
        assert_eq!(
            row(&ls, 1),
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
                let chunks = geo.capacity() / geo.chunk_bytes;
                let mut used = std::collections::HashSet::new();
                for c in 0..chunks {
                    let copies = chunk_copies(&geo, c);
                    let mut ms: Vec<u32> = copies.iter().map(|x| x.member).collect();
                    ms.sort();
                    ms.dedup();
                    assert_eq!(ms.len(), copies.len(), "{layout:?} {members} chunk {c}");
                    for x in copies {
                        assert!(x.offset + geo.chunk_bytes <= geo.member_bytes);
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
            chunk_copies(&n2, 2),
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

    #[test]
    fn superblock_names_round_trip() {
        // What superblocks written so far hold must parse to the same shape.
        for (level, text, layout) in [
            ("raid0", "", Layout::None),
            ("raid1", "", Layout::None),
            ("linear", "", Layout::None),
            ("raid4", "parity-last", Layout::ParityLast),
            ("raid5", "left-symmetric", Layout::LeftSymmetric),
            ("raid5", "right-asymmetric", Layout::RightAsymmetric),
            ("raid6", "left-symmetric-6", Layout::LeftSymmetric6),
            ("raid6", "parity-first-6", Layout::ParityFirst6),
            ("raid6", "ddf-N-restart", Layout::DdfNRestart),
            ("raid6", "ddf-zero-restart", Layout::DdfZeroRestart),
            ("raid6", "ddf-N-continue", Layout::DdfNContinue),
            (
                "raid10",
                "n2",
                Layout::Raid10 {
                    near: 2,
                    far: 1,
                    offset: false,
                },
            ),
            (
                "raid10",
                "f2",
                Layout::Raid10 {
                    near: 1,
                    far: 2,
                    offset: false,
                },
            ),
            (
                "raid10",
                "o2",
                Layout::Raid10 {
                    near: 1,
                    far: 2,
                    offset: true,
                },
            ),
        ] {
            let lv = parse_level(level).unwrap();
            assert_eq!(lv.to_string(), level);
            let want = if layout == Layout::None {
                Layout::default_for(lv)
            } else {
                layout
            };
            assert_eq!(parse_layout(lv, text).unwrap(), want, "{level} {text}");
            assert_eq!(layout_name(want), text, "{level} {text}");
        }
        // mdadm's short spellings on the command line.
        assert_eq!(parse_level("5").unwrap(), Level::Raid5);
        assert_eq!(
            parse_layout(Level::Raid5, "ls").unwrap(),
            Layout::LeftSymmetric
        );
        let e = parse_layout(Level::Raid5, "ddf-N-restart").unwrap_err();
        assert!(
            e.is_usage() && e.message().contains("left-symmetric"),
            "{e}"
        );
        assert!(parse_level("7").unwrap_err().is_usage());
    }

    #[test]
    fn member_ranges_map_to_the_stripes_and_chunks_they_hold() {
        let r5 = geometry(Level::Raid5, Layout::LeftSymmetric, 4096, 4, 64 * 4096).unwrap();
        // Member bytes 5000..9000 lie in rows 1 and 2: stripes of 3 data chunks each.
        assert_eq!(
            member_range_to_logical(&r5, 2, 5000, 9000),
            vec![(3 * 4096, 6 * 4096)]
        );
        let r1 = geometry(Level::Raid1, Layout::None, 0, 2, 1 << 20).unwrap();
        assert_eq!(
            member_range_to_logical(&r1, 1, 70000, 70001),
            vec![(65536, 65536)]
        );
        let n2 = geometry(
            Level::Raid10,
            Layout::Raid10 {
                near: 2,
                far: 1,
                offset: false,
            },
            4096,
            4,
            16 * 4096,
        )
        .unwrap();
        // Member 3, second chunk row: logical chunk 3 (copies on members 2 and 3).
        assert_eq!(
            member_range_to_logical(&n2, 3, 4096, 8192),
            vec![(3 * 4096, 4096)]
        );
        assert!(member_range_to_logical(&r5, 0, 64 * 4096, 65 * 4096).is_empty());
    }

    #[test]
    fn array_limits_on_top_of_geometry() {
        assert!(geometry(Level::Raid5, Layout::LeftSymmetric, 2048, 4, 1 << 20).is_err());
        assert!(geometry(Level::Raid6, Layout::LeftSymmetric, 4096, 3, 1 << 20).is_err());
        // RAID 1 moves 64 KiB units on members of at least 1 MiB, 4 KiB below.
        let r1 = geometry(Level::Raid1, Layout::None, 0, 2, (1 << 20) + 5000).unwrap();
        assert_eq!((r1.chunk_bytes, r1.member_bytes), (65536, 1 << 20));
        let small = geometry(Level::Raid1, Layout::None, 0, 2, 10000).unwrap();
        assert_eq!((small.chunk_bytes, small.member_bytes), (4096, 8192));
        let lin = geometry(Level::Linear, Layout::None, 0, 3, 10000).unwrap();
        assert_eq!(lin.capacity(), 3 * 8192);
    }

    /// Every member write any plan makes (healthy or degraded) lies in the ranges a nested
    /// parent marks intent for.
    #[test]
    fn member_ranges_of_a_write_cover_every_plan_s_writes() {
        use raidlab_geometry::{plan, IoKind};
        let c = 4096;
        let geos = [
            (Level::Linear, Layout::None, 3),
            (Level::Raid0, Layout::None, 3),
            (Level::Raid1, Layout::None, 3),
            (
                Level::Raid10,
                Layout::parse(Level::Raid10, "f2").unwrap(),
                3,
            ),
            (
                Level::Raid10,
                Layout::parse(Level::Raid10, "o2").unwrap(),
                4,
            ),
            (
                Level::Raid10,
                Layout::parse(Level::Raid10, "n2").unwrap(),
                5,
            ),
            (Level::Raid5, Layout::LeftSymmetric, 4),
            (Level::Raid6, Layout::LeftSymmetric, 6),
        ];
        let mut x = 12345u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for (level, layout, members) in geos {
            let g = Geometry::new(level, layout, c, members, 16 * c).unwrap();
            for _ in 0..200 {
                let off = next(g.capacity());
                let len = 1 + next((g.capacity() - off).min(5 * c));
                let ranges = logical_to_member_ranges(&g, off, len);
                let failed: Vec<u32> = match next(3) {
                    0 => vec![],
                    _ if g.redundancy() > 0 => vec![next(members as u64) as u32],
                    _ => vec![],
                };
                let p = plan(&g, IoKind::Write, off, len, &failed).unwrap();
                for s in &p.steps {
                    for w in &s.writes {
                        assert!(
                            ranges.iter().any(|&(m, o, l)| m == w.member
                                && o <= w.offset
                                && w.offset + w.len <= o + l),
                            "{level} {layout}: write {w:?} of {off}+{len} outside {ranges:?}"
                        );
                    }
                }
            }
        }
    }
}
