//! Sync actions over in-memory members that count what is asked of them.

use super::super::{Array, Backing, SlotRt};
use crate::pool::Dev;
use crate::superblock::SlotState;
use raidlab_geometry::{Geometry, Layout, Level};
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// A member held in memory that counts its reads per (offset, length).
struct CountingDev {
    bytes: Mutex<Vec<u8>>,
    reads: Mutex<BTreeMap<(u64, usize), u32>>,
    writes: Mutex<u64>,
}

impl CountingDev {
    fn new(size: u64) -> Arc<CountingDev> {
        Arc::new(CountingDev {
            bytes: Mutex::new(vec![0; size as usize]),
            reads: Mutex::new(BTreeMap::new()),
            writes: Mutex::new(0),
        })
    }
    fn reset_counts(&self) {
        self.reads.lock().unwrap().clear();
        *self.writes.lock().unwrap() = 0;
    }
}

impl Dev for CountingDev {
    fn read(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        *self
            .reads
            .lock()
            .unwrap()
            .entry((offset, buf.len()))
            .or_default() += 1;
        let b = self.bytes.lock().unwrap();
        buf.copy_from_slice(&b[offset as usize..offset as usize + buf.len()]);
        Ok(())
    }
    fn write(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        *self.writes.lock().unwrap() += 1;
        let mut b = self.bytes.lock().unwrap();
        b[offset as usize..offset as usize + buf.len()].copy_from_slice(buf);
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        Ok(())
    }
}

/// An array over `devs` with the given slot states and no metadata of its own.
fn array_over(geo: &Geometry, devs: &[Arc<CountingDev>], slots: Vec<SlotRt>) -> Array {
    Array::new(
        geo.clone(),
        [7; 16],
        (0..devs.len()).map(|i| format!("mem{i}")).collect(),
        Backing::Nested(vec![]),
        devs.iter()
            .map(|d| Some(d.clone() as Arc<dyn Dev>))
            .collect(),
        slots,
        false,
        0,
    )
}

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Rebuilding several members reads each survivor's block of a row once, whatever the number
/// of targets, and restores every target byte for byte.
#[test]
fn rebuild_reads_each_survivor_once_per_row_for_all_targets() {
    let chunk = 16384;
    for (level, members, targets) in [
        (Level::Raid6, 6, vec![1, 4]),
        (Level::Raid6, 5, vec![0, 1]),
        (Level::Raid6, 7, vec![3]),
        (Level::Raid5, 4, vec![2]),
        (Level::Raid1, 3, vec![0, 2]),
    ] {
        let what = format!("{level} x{members} rebuilding {targets:?}");
        let geo = Geometry::new(
            level,
            Layout::default_for(level),
            chunk,
            members,
            24 * chunk,
        )
        .unwrap();
        let devs: Vec<Arc<CountingDev>> = (0..members)
            .map(|_| CountingDev::new(geo.member_bytes))
            .collect();
        let active = SlotRt {
            state: SlotState::Active,
            checkpoint: 0,
        };
        let healthy = array_over(&geo, &devs, vec![active; members as usize]);
        let model = pattern(healthy.capacity() as usize, members as u64);
        healthy.write_at(&model, 0).unwrap();
        drop(healthy);
        let originals: Vec<Vec<u8>> = devs
            .iter()
            .map(|d| d.bytes.lock().unwrap().clone())
            .collect();
        for &t in &targets {
            let junk = pattern(geo.member_bytes as usize, 99 + t as u64);
            *devs[t as usize].bytes.lock().unwrap() = junk;
        }
        let slots = (0..members)
            .map(|m| SlotRt {
                state: if targets.contains(&m) {
                    SlotState::Rebuilding
                } else {
                    SlotState::Active
                },
                checkpoint: 0,
            })
            .collect();
        let arr = array_over(&geo, &devs, slots);
        devs.iter().for_each(|d| d.reset_counts());
        let stop = AtomicBool::new(false);
        assert!(
            arr.rebuild(u64::MAX, &stop, &mut |_, _| {}).unwrap(),
            "{what}"
        );
        let used = geo.member_used_bytes();
        let units = used / chunk;
        for (m, d) in devs.iter().enumerate() {
            let reads = d.reads.lock().unwrap();
            if targets.contains(&(m as u32)) {
                assert!(reads.is_empty(), "{what}: target {m} was read");
                assert_eq!(*d.writes.lock().unwrap(), units, "{what}: writes to {m}");
                assert!(
                    d.bytes.lock().unwrap()[..used as usize] == originals[m][..used as usize],
                    "{what}: member {m} not restored"
                );
                continue;
            }
            if level == Level::Raid1 {
                // One surviving copy, read once per chunk.
                assert_eq!(
                    reads.len() as u64,
                    units,
                    "{what}: member {m} reads {reads:?}"
                );
            } else {
                // Whole rows of the survivor; with as many targets as the level survives every
                // survivor is needed for every row (one lost member of RAID 6 leaves Q unread
                // wherever P can do).
                let rows: Vec<(u64, usize)> =
                    (0..units).map(|r| (r * chunk, chunk as usize)).collect();
                let got: Vec<(u64, usize)> = reads.keys().copied().collect();
                if targets.len() as u32 == geo.redundancy() {
                    assert_eq!(got, rows, "{what}: member {m}");
                } else {
                    assert!(got.iter().all(|r| rows.contains(r)), "{what}: member {m}");
                }
            }
            assert!(
                reads.values().all(|&n| n == 1),
                "{what}: member {m} read a block more than once: {reads:?}"
            );
        }
        assert!(arr.slots().iter().all(|s| s.state == SlotState::Active));
        let mut got = vec![0u8; model.len()];
        arr.read_at(&mut got, 0).unwrap();
        assert!(got == model, "{what}: read-back after rebuild differs");
    }
}
