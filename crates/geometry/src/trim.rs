//! Trims: which member ranges a logical discard releases.
//!
//! md's rules (drivers/md/raid0.c, raid1.c, raid10.c `raid10_handle_discard`, raid5.c
//! `make_discard_request`): striping and mirroring levels pass a discard to every member
//! range (every copy) under it; parity levels discard whole stripes only — data and parity
//! of every stripe the range covers entirely, on every member — and leave the parts of
//! stripes at its ends alone, since discarding part of a stripe would leave its parity
//! standing for data that is gone. A member whose discarded range then reads zeros keeps
//! every stripe consistent (P and Q of zeros are zeros): the caller discards so.

use crate::{Geometry, Level, Location, PlanError};

/// One member range a trim releases: `len` bytes at `at` (an offset in the member's data
/// area).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TrimExtent {
    pub at: Location,
    pub len: u64,
}

/// The member ranges a trim of `len` bytes at logical `offset` releases, every member's in
/// offset order, adjacent ranges of a member joined; members in `failed` left out. Empty
/// for a parity array when the range covers no whole stripe.
pub fn trim_extents(
    geom: &Geometry,
    offset: u64,
    len: u64,
    failed: &[u32],
) -> Result<Vec<TrimExtent>, PlanError> {
    let capacity = geom.capacity();
    if offset.checked_add(len).is_none_or(|end| end > capacity) {
        return Err(PlanError::OutOfRange {
            offset,
            len,
            capacity,
        });
    }
    if let Some(&m) = failed.iter().find(|&&m| m >= geom.members) {
        return Err(PlanError::NoSuchMember {
            member: m,
            members: geom.members,
        });
    }
    let mut out: Vec<TrimExtent> = Vec::new();
    match geom.level {
        Level::Raid4 | Level::Raid5 | Level::Raid6 => {
            // Whole stripes only: each is one chunk-high row on every member.
            let stripe = geom.stripe_data_bytes();
            let first = offset.div_ceil(stripe);
            let end = (offset + len) / stripe;
            if end > first {
                for m in 0..geom.members {
                    out.push(TrimExtent {
                        at: Location {
                            member: m,
                            offset: first * geom.chunk_bytes,
                        },
                        len: (end - first) * geom.chunk_bytes,
                    });
                }
            }
        }
        Level::Linear | Level::Raid0 | Level::Raid1 | Level::Raid10 => {
            // Piece by piece within a chunk (a member, for linear): every copy of it.
            let unit = match geom.level {
                Level::Linear => geom.member_bytes,
                _ => geom.chunk_bytes,
            };
            let mut at = offset;
            while at < offset + len {
                let n = (unit - at % unit).min(offset + len - at);
                for l in geom.map(at) {
                    out.push(TrimExtent { at: l, len: n });
                }
                at += n;
            }
        }
    }
    out.retain(|e| !failed.contains(&e.at.member));
    out.sort_unstable();
    let mut joined: Vec<TrimExtent> = Vec::with_capacity(out.len());
    for e in out {
        match joined.last_mut() {
            Some(j) if j.at.member == e.at.member && j.at.offset + j.len == e.at.offset => {
                j.len += e.len;
            }
            _ => joined.push(e),
        }
    }
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Layout;

    fn geom(level: Level, layout: Layout, members: u32) -> Geometry {
        Geometry::new(level, layout, 64 << 10, members, 64 << 20).unwrap()
    }

    fn ext(member: u32, offset: u64, len: u64) -> TrimExtent {
        TrimExtent {
            at: Location { member, offset },
            len,
        }
    }

    /// RAID 0 passes each chunk's piece to its member, joined per member; RAID 1 every
    /// copy; a failed member is left out.
    #[test]
    fn striping_and_mirroring_trim_every_piece_and_copy() {
        let k = 64 << 10;
        let r0 = geom(Level::Raid0, Layout::default_for(Level::Raid0), 4);
        // From half a chunk into chunk 0 to the end of chunk 5: members 0..3 get chunk-row 0
        // (member 0 from its middle), members 0 and 1 row 1 too.
        let got = trim_extents(&r0, k / 2, 6 * k - k / 2, &[]).unwrap();
        assert_eq!(
            got,
            [
                ext(0, k / 2, k + k / 2),
                ext(1, 0, 2 * k),
                ext(2, 0, k),
                ext(3, 0, k)
            ]
        );
        let r1 = geom(Level::Raid1, Layout::default_for(Level::Raid1), 3);
        let got = trim_extents(&r1, 4096, 3 * k, &[1]).unwrap();
        assert_eq!(got, [ext(0, 4096, 3 * k), ext(2, 4096, 3 * k)]);
        // Every byte trimmed lands on `copies` members.
        let r10 = geom(Level::Raid10, Layout::default_for(Level::Raid10), 4);
        let got = trim_extents(&r10, 0, 8 * k, &[]).unwrap();
        assert_eq!(got.iter().map(|e| e.len).sum::<u64>(), 2 * 8 * k);
    }

    /// Parity levels trim whole stripes only, on every member, data and parity alike; a
    /// range within one stripe trims nothing.
    #[test]
    fn parity_levels_trim_whole_stripes_on_every_member() {
        let k = 64 << 10;
        for (level, members) in [(Level::Raid5, 5), (Level::Raid6, 6), (Level::Raid4, 3)] {
            let g = geom(level, Layout::default_for(level), members);
            let stripe = g.stripe_data_bytes();
            // From inside stripe 1 to inside stripe 5: stripes 2, 3 and 4.
            let got = trim_extents(&g, stripe + 512, 4 * stripe, &[]).unwrap();
            let want: Vec<TrimExtent> = (0..members).map(|m| ext(m, 2 * k, 3 * k)).collect();
            assert_eq!(got, want, "{level}");
            assert!(trim_extents(&g, 512, stripe, &[]).unwrap().is_empty());
            let without = trim_extents(&g, 0, stripe, &[0]).unwrap();
            assert_eq!(without.len() as u32, members - 1);
        }
    }

    #[test]
    fn a_trim_past_the_end_is_refused() {
        let g = geom(Level::Raid5, Layout::default_for(Level::Raid5), 3);
        assert!(matches!(
            trim_extents(&g, g.capacity() - 512, 1024, &[]),
            Err(PlanError::OutOfRange { .. })
        ));
        assert!(matches!(
            trim_extents(&g, 0, 512, &[7]),
            Err(PlanError::NoSuchMember { .. })
        ));
    }
}
