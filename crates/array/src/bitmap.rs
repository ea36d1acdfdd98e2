//! The write-intent bitmap: one bit per region of the array's logical space, stored on every
//! member after the superblocks. A region's bit is set (and made durable on every member)
//! before any write to it starts, and cleared lazily once its writes are durable; after an
//! unclean stop only the regions whose bits are set need their parity (or mirror copies)
//! made consistent again.
//!
//! A bit is cleared only when its region has no write (and no intent, see below) in flight,
//! has seen none start for [`CLEAR_AFTER`] (md's bitmap daemon likewise waits before
//! clearing), and the members were flushed after that; and never while it is *pinned*.
//!
//! Nested arrays: an enclosing array has no bitmap of its own. Its intent lives in the bitmaps
//! of the leaves below it, under this invariant:
//!
//! > For every array A with redundancy, from before the first member write of a write to a
//! > stripe (or mirror chunk) of A starts until all of that write's member writes have
//! > completed, every leaf under A that the write may touch holds, durable on its members, a
//! > set bit over the leaf range below that stripe, counted as in flight (so not clearable).
//!
//! A then writes to its children only after [`Bitmap::start_write`] has returned for each of
//! them (`Array::start_intent`). After the write, each leaf clears its bit only once its own
//! members are flushed, so a leaf whose part of the stripe is not durable still has its bit
//! set. A crash therefore leaves, for every stripe of every level that may be inconsistent, a
//! set bit in some leaf below it; assembly maps the leaves' set regions up level by level
//! (`member_range_to_logical`) and resyncs them at each level with redundancy.
//!
//! Bits found set at assembly are pinned until every level above has resynced (a leaf must not
//! lose them while its parent still needs them to know where to resync, even if the leaf itself
//! has nothing to resync); then they clear lazily like any other. A clean stop can leave
//! young bits set: harmless, they only widen a later resync.

use crate::superblock::{BITMAP_OFFSET, DATA_ALIGN};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Bits a bitmap may hold: what fits between the superblocks and the first data boundary.
pub const MAX_BITS: u64 = (DATA_ALIGN - BITMAP_OFFSET) * 8;
/// Aim for this many regions; fewer for small arrays (a region is at least one stripe).
const TARGET_REGIONS: u64 = 1 << 16;
/// Bits idle this long get cleared at the next write (or flush).
pub const CLEAR_AFTER: Duration = Duration::from_secs(2);

/// Region size and bitmap bytes for an array of `capacity` logical bytes whose stripes hold
/// `stripe` data bytes: a whole number of stripes, about 64 Ki regions, at most [`MAX_BITS`].
pub fn choose_region(capacity: u64, stripe: u64) -> (u64, u64) {
    let want = capacity.div_ceil(TARGET_REGIONS).max(1);
    let mut region = want.div_ceil(stripe).max(1) * stripe;
    while capacity.div_ceil(region) > MAX_BITS {
        region += stripe;
    }
    let bits = capacity.div_ceil(region).max(1);
    let bytes = bits.div_ceil(8).div_ceil(4096) * 4096;
    (region, bytes)
}

pub struct Bitmap {
    pub region: u64,
    pub bytes: u64,
    state: Mutex<State>,
}

struct State {
    bits: Vec<u8>,
    inflight: Vec<u32>,
    generation: Vec<u32>,
    /// `generation` as the last clearing pass saw it, and when (tenths of a second since
    /// `origin`): a region is idle since then if its generation has not moved.
    seen_generation: Vec<u32>,
    seen_at: Vec<u32>,
    /// Bits found set when the bitmap was loaded, kept until [`Bitmap::release_found`].
    pinned: Vec<u8>,
    origin: Instant,
    last_clear: Instant,
}

fn tenths(origin: Instant, now: Instant) -> u32 {
    (now.saturating_duration_since(origin).as_millis() / 100).min(u32::MAX as u128) as u32
}

/// Bitmap blocks that changed and must be written to every member: (byte offset within the
/// bitmap area, bytes).
pub type Dirty = Vec<(u64, Vec<u8>)>;

impl Bitmap {
    pub fn new(region: u64, bytes: u64, bits: Vec<u8>, now: Instant) -> Bitmap {
        let n = (bytes * 8) as usize;
        let mut b = bits;
        b.resize(bytes as usize, 0);
        let pinned = b.clone();
        Bitmap {
            region,
            bytes,
            state: Mutex::new(State {
                bits: b,
                inflight: vec![0; n],
                generation: vec![0; n],
                seen_generation: vec![0; n],
                seen_at: vec![0; n],
                pinned,
                origin: now,
                last_clear: now,
            }),
        }
    }

    fn regions(&self, offset: u64, len: u64) -> std::ops::RangeInclusive<usize> {
        let first = (offset / self.region) as usize;
        let last = ((offset + len.max(1) - 1) / self.region) as usize;
        first..=last
    }

    /// A write to [offset, offset+len) starts: count it, and hand `persist` the bitmap blocks
    /// whose bits went from clear to set (to be written and flushed before the data). When
    /// `persist` fails the write is not counted (no `end_write` follows). The lock is
    /// held by the caller through `persist` so no write can overtake a bit being made durable.
    pub fn start_write(
        &self,
        offset: u64,
        len: u64,
        persist: impl FnOnce(&Dirty) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut st = self.state.lock().unwrap();
        let mut changed_blocks = std::collections::BTreeSet::new();
        for r in self.regions(offset, len) {
            st.inflight[r] += 1;
            st.generation[r] = st.generation[r].wrapping_add(1);
            let (byte, bit) = (r / 8, r % 8);
            if st.bits[byte] & (1 << bit) == 0 {
                st.bits[byte] |= 1 << bit;
                changed_blocks.insert(byte / 4096);
            }
        }
        if changed_blocks.is_empty() {
            return Ok(());
        }
        let dirty: Dirty = changed_blocks
            .into_iter()
            .map(|b| {
                (
                    (b * 4096) as u64,
                    st.bits[b * 4096..(b + 1) * 4096].to_vec(),
                )
            })
            .collect();
        let res = persist(&dirty);
        if res.is_err() {
            // The write will not happen: it no longer holds its regions.
            for r in self.regions(offset, len) {
                st.inflight[r] -= 1;
            }
        }
        res
    }

    pub fn end_write(&self, offset: u64, len: u64) {
        let mut st = self.state.lock().unwrap();
        for r in self.regions(offset, len) {
            st.inflight[r] -= 1;
        }
    }

    /// Whether idle bits are due for clearing at `now`.
    pub fn clear_due(&self, now: Instant) -> bool {
        let st = self.state.lock().unwrap();
        now.duration_since(st.last_clear) >= CLEAR_AFTER && st.bits.iter().any(|&b| b != 0)
    }

    /// Clear the bits of regions with no write in flight and none started for [`CLEAR_AFTER`]
    /// (as seen by earlier passes). `flush` makes members' data durable first; a region
    /// written to while flushing keeps its bit.
    pub fn clear_idle(
        &self,
        now: Instant,
        flush: impl FnOnce() -> std::io::Result<()>,
        persist: impl FnOnce(&Dirty) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let candidates: Vec<(usize, u32)> = {
            let mut st = self.state.lock().unwrap();
            st.last_clear = now;
            let t = tenths(st.origin, now);
            let idle_for = (CLEAR_AFTER.as_millis() / 100) as u32;
            let mut out = Vec::new();
            for r in 0..st.inflight.len() {
                if st.bits[r / 8] & !st.pinned[r / 8] & (1 << (r % 8)) == 0 {
                    continue;
                }
                if st.generation[r] != st.seen_generation[r] {
                    st.seen_generation[r] = st.generation[r];
                    st.seen_at[r] = t;
                } else if st.inflight[r] == 0 && t.saturating_sub(st.seen_at[r]) >= idle_for {
                    out.push((r, st.generation[r]));
                }
            }
            out
        };
        if candidates.is_empty() {
            return Ok(());
        }
        flush()?;
        let mut st = self.state.lock().unwrap();
        let mut changed = std::collections::BTreeSet::new();
        for (r, gen) in candidates {
            if st.inflight[r] == 0 && st.generation[r] == gen {
                st.bits[r / 8] &= !(1 << (r % 8));
                changed.insert(r / 8 / 4096);
            }
        }
        let dirty: Dirty = changed
            .into_iter()
            .map(|b| {
                (
                    (b * 4096) as u64,
                    st.bits[b * 4096..(b + 1) * 4096].to_vec(),
                )
            })
            .collect();
        persist(&dirty)
    }

    /// Regions whose bits are set.
    pub fn set_regions(&self) -> Vec<u64> {
        let st = self.state.lock().unwrap();
        (0..st.inflight.len())
            .filter(|&r| st.bits[r / 8] & (1 << (r % 8)) != 0)
            .map(|r| r as u64)
            .collect()
    }

    /// Clear every bit (after a full resync of an array nothing encloses); returns the whole
    /// bitmap to persist.
    pub fn clear_all(&self) -> Dirty {
        let mut st = self.state.lock().unwrap();
        st.bits.iter_mut().for_each(|b| *b = 0);
        st.pinned.iter_mut().for_each(|b| *b = 0);
        vec![(0, st.bits.clone())]
    }

    /// The bits found at load may now be cleared like any other (every enclosing array has
    /// resynced the regions they stand for).
    pub fn release_found(&self) {
        let mut st = self.state.lock().unwrap();
        st.pinned.iter_mut().for_each(|b| *b = 0);
    }

    pub fn dirty_count(&self) -> u64 {
        let st = self.state.lock().unwrap();
        st.bits.iter().map(|b| b.count_ones() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_is_whole_stripes_and_fits() {
        let (r, b) = choose_region(1 << 40, 8 * 65536);
        assert_eq!(r % (8 * 65536), 0);
        assert!((1u64 << 40).div_ceil(r) <= MAX_BITS);
        assert!(b <= DATA_ALIGN - BITMAP_OFFSET);
        let (r, b) = choose_region(3 << 20, 3 * 4096);
        assert_eq!(r, 3 * 4096);
        assert_eq!(b, 4096);
    }

    #[test]
    fn bits_set_before_write_and_cleared_when_idle() {
        let now = Instant::now();
        let bm = Bitmap::new(4096, 4096, vec![], now);
        let mut persisted = Vec::new();
        bm.start_write(4096 * 3 + 10, 5000, |d| {
            persisted.push(d.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(bm.set_regions(), vec![3, 4]);
        assert_eq!(persisted.len(), 1);
        assert_eq!(persisted[0][0].1[0], 0b11000);
        // Same regions again: nothing new to persist.
        bm.start_write(4096 * 3, 10, |_| panic!("no change expected"))
            .unwrap();
        bm.end_write(4096 * 3, 10);
        // Region 3 and 4 still have the first write in flight.
        bm.clear_idle(now, || Ok(()), |_| Ok(())).unwrap();
        assert_eq!(bm.set_regions(), vec![3, 4]);
        bm.end_write(4096 * 3 + 10, 5000);
        // Idle, but not yet for CLEAR_AFTER: kept.
        bm.clear_idle(now, || Ok(()), |_| panic!("nothing to clear yet"))
            .unwrap();
        assert_eq!(bm.set_regions(), vec![3, 4]);
        // Region 4 written again in between: only region 3 has been idle long enough.
        bm.start_write(4096 * 4, 10, |_| Ok(())).unwrap();
        bm.end_write(4096 * 4, 10);
        bm.clear_idle(now + CLEAR_AFTER, || Ok(()), |_| Ok(()))
            .unwrap();
        assert_eq!(bm.set_regions(), vec![4]);
        let mut flushed = false;
        bm.clear_idle(
            now + 2 * CLEAR_AFTER,
            || {
                flushed = true;
                Ok(())
            },
            |d| {
                assert_eq!(d[0].1[0], 0);
                Ok(())
            },
        )
        .unwrap();
        assert!(flushed);
        assert!(bm.set_regions().is_empty());
    }

    #[test]
    fn bits_found_at_load_stay_until_released() {
        let now = Instant::now();
        let bm = Bitmap::new(4096, 4096, vec![0b101], now);
        assert_eq!(bm.set_regions(), vec![0, 2]);
        bm.start_write(4096, 10, |_| Ok(())).unwrap();
        bm.end_write(4096, 10);
        for k in 1..4 {
            bm.clear_idle(now + k * CLEAR_AFTER, || Ok(()), |_| Ok(()))
                .unwrap();
        }
        // The region written since is cleared; the found ones are not.
        assert_eq!(bm.set_regions(), vec![0, 2]);
        bm.release_found();
        for k in 4..6 {
            bm.clear_idle(now + k * CLEAR_AFTER, || Ok(()), |_| Ok(()))
                .unwrap();
        }
        assert!(bm.set_regions().is_empty());
    }
}
