//! Sync actions over in-memory members that count what is asked of them.

use super::super::{Array, Backing, SlotRt};
use crate::array::tests::pattern;
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

// ------------------------------------------------------------ nested write intent

mod crash {
    use super::super::super::{Array, Backing};
    use super::pattern;
    use crate::assemble::{assemble, AssembleOptions};
    use crate::bitmap::CLEAR_AFTER;
    use crate::create::{create, CreateOptions, CreateSpec, MemberSpec};
    use crate::manage;
    use crate::pool::Dev;
    use raidlab_geometry::IoKind;
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Condvar, Mutex};

    /// Writes to one child wait at the gate (the crash happens while they wait); writes to the
    /// others go through and are counted.
    #[derive(Default)]
    struct Gate {
        state: Mutex<GateState>,
        changed: Condvar,
    }

    #[derive(Default)]
    struct GateState {
        armed: bool,
        hold: usize,
        waiting: bool,
        released: bool,
        passed: u64,
    }

    struct GatedChild {
        index: usize,
        child: Arc<Array>,
        gate: Arc<Gate>,
    }

    impl Dev for GatedChild {
        fn read(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
            self.child.read_at(buf, offset)
        }
        fn write(&self, buf: &[u8], offset: u64) -> io::Result<()> {
            let armed = {
                let mut st = self.gate.state.lock().unwrap();
                if st.armed && st.hold == self.index {
                    st.waiting = true;
                    self.gate.changed.notify_all();
                    while !st.released {
                        st = self.gate.changed.wait(st).unwrap();
                    }
                }
                st.armed
            };
            let res = self.child.write_at(buf, offset);
            if armed {
                self.gate.state.lock().unwrap().passed += 1;
                self.gate.changed.notify_all();
            }
            res
        }
        fn flush(&self) -> io::Result<()> {
            self.child.flush()
        }
    }

    fn leaves(arr: &Array) -> Vec<&Array> {
        match &arr.backing {
            Backing::Leaf(_) => vec![arr],
            Backing::Nested(c) => c.iter().flatten().flat_map(|c| leaves(c)).collect(),
        }
    }

    fn set_bits(arr: &Array) -> u64 {
        leaves(arr)
            .iter()
            .map(|l| match &l.backing {
                Backing::Leaf(leaf) => leaf.bitmap.dirty_count(),
                Backing::Nested(_) => 0,
            })
            .sum()
    }

    /// Idle bits of every leaf cleared: two clearing passes CLEAR_AFTER apart.
    fn settle(children: &[Arc<Array>]) {
        children.iter().for_each(|c| c.flush().unwrap());
        std::thread::sleep(CLEAR_AFTER + std::time::Duration::from_millis(200));
        children.iter().for_each(|c| c.flush().unwrap());
    }

    /// A spec over files `dir/{tag}{i}`, recording every leaf member path.
    fn leaf_spec(
        level: &str,
        n: usize,
        tag: &str,
        dir: &Path,
        all: &mut Vec<PathBuf>,
    ) -> MemberSpec {
        let ms: Vec<MemberSpec> = (0..n)
            .map(|i| {
                let p = dir.join(format!("{tag}{i}"));
                all.push(p.clone());
                MemberSpec::Path(p)
            })
            .collect();
        let chunk = (level != "1").then_some(16384);
        MemberSpec::Array(CreateSpec::new(level, None, chunk, ms).unwrap())
    }

    /// The crash: a write to stripe `row` of the top array has completed on every child but
    /// child 1, whose write has not started; the children written have flushed and had time
    /// to clear their bits. The leaves' files are copied as they are then (what a kill -9 or
    /// power cut would leave), assembled and resynced: every level's redundancy agrees, every
    /// other stripe reads as written, and each chunk of the crashed stripe holds either its
    /// old or its new bytes.
    fn crash_between_member_writes(what: &str, top: CreateSpec, all: &[PathBuf], dir: &Path) {
        let arr = create(
            &top,
            &CreateOptions {
                force: false,
                size: Some((1 << 20) + (1 << 20)),
                assume_clean: false,
                verbose: false,
                stop: None,
            },
        )
        .unwrap();
        let Backing::Nested(kids) = &arr.backing else {
            panic!("{what}: nested")
        };
        let children: Vec<Arc<Array>> = kids.iter().map(|c| c.clone().unwrap()).collect();
        let gate = Arc::new(Gate::default());
        let devs: Vec<Option<Arc<dyn Dev>>> = children
            .iter()
            .enumerate()
            .map(|(index, c)| {
                Some(Arc::new(GatedChild {
                    index,
                    child: c.clone(),
                    gate: gate.clone(),
                }) as Arc<dyn Dev>)
            })
            .collect();
        let top = Array::new(
            arr.geo.clone(),
            arr.uuid,
            arr.labels.clone(),
            Backing::Nested(kids.clone()),
            devs,
            arr.slots(),
            false,
            0,
        );
        let unit = crate::shape::unit(&top.geo);
        let cap = top.capacity() as usize;
        let row = 5u64;
        let (lo, hi) = ((row * unit) as usize, ((row + 1) * unit) as usize);
        // Everything but the crashed stripe written and settled: no bit left anywhere.
        let mut model = pattern(cap, 17);
        model[lo..hi].iter_mut().for_each(|b| *b = 0);
        top.write_at(&model[..lo], 0).unwrap();
        top.write_at(&model[hi..], hi as u64).unwrap();
        settle(&children);
        assert_eq!(set_bits(&top), 0, "{what}: bits left after settling");
        let new = pattern(hi - lo, 23);
        let writes =
            raidlab_geometry::plan(&top.geo, IoKind::Write, lo as u64, new.len() as u64, &[])
                .unwrap()
                .cost()
                .member_writes;
        {
            let mut st = gate.state.lock().unwrap();
            st.armed = true;
            st.hold = 1;
        }
        let snapshot = dir.join("snapshot");
        std::fs::create_dir(&snapshot).unwrap();
        std::thread::scope(|s| {
            let writer = s.spawn(|| top.write_at(&new, lo as u64));
            {
                let mut st = gate.state.lock().unwrap();
                while !(st.waiting && st.passed == writes - 1) {
                    st = gate.changed.wait(st).unwrap();
                }
            }
            // The written children flush, and stay idle long enough to clear what they may.
            let written: Vec<Arc<Array>> = children
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != 1)
                .map(|(_, c)| c.clone())
                .collect();
            settle(&written);
            for p in all {
                std::fs::copy(p, snapshot.join(p.file_name().unwrap())).unwrap();
            }
            {
                let mut st = gate.state.lock().unwrap();
                st.released = true;
                gate.changed.notify_all();
            }
            writer.join().unwrap().unwrap();
        });
        let copies: Vec<PathBuf> = all
            .iter()
            .map(|p| snapshot.join(p.file_name().unwrap()))
            .collect();
        let after = assemble(
            &copies,
            &AssembleOptions {
                force: false,
                resync: true,
                verbose: false,
                all_members: false,
            },
        )
        .unwrap();
        // The leaves keep what they found (cleared lazily from now on, not by their own resync
        // before the levels above had theirs).
        assert!(
            set_bits(&after) > 0,
            "{what}: found bits dropped at assembly"
        );
        for (name, rep) in manage::scrub_all(&after, false, &mut |_, _, _| {}).unwrap() {
            assert_eq!(
                rep.mismatches, 0,
                "{what}: {name} inconsistent after resync at {:?}",
                rep.located
            );
        }
        let mut got = vec![0u8; cap];
        after.read_at(&mut got, 0).unwrap();
        assert!(
            got[..lo] == model[..lo] && got[hi..] == model[hi..],
            "{what}: data outside the crashed stripe changed"
        );
        let chunk = top.geo.chunk_bytes as usize;
        for (k, piece) in got[lo..hi].chunks(chunk).enumerate() {
            let new_piece = &new[k * chunk..(k + 1) * chunk];
            assert!(
                piece.iter().all(|&b| b == 0) || piece == new_piece,
                "{what}: chunk {k} of the crashed stripe is neither old nor new"
            );
        }
    }

    #[test]
    fn crash_between_a_nested_parent_s_member_writes_leaves_a_bit_at_every_level() {
        type Build = fn(&Path, &mut Vec<PathBuf>) -> (&'static str, CreateSpec);
        let cases: [Build; 3] = [
            |d, all| {
                let kids = (0..3)
                    .map(|i| leaf_spec("0", 2, &format!("r0-{i}-"), d, all))
                    .collect();
                (
                    "raid5 over raid0s",
                    CreateSpec::new("5", None, Some(16384), kids).unwrap(),
                )
            },
            |d, all| {
                let kids = (0..2)
                    .map(|i| leaf_spec("5", 3, &format!("r5-{i}-"), d, all))
                    .collect();
                (
                    "raid1 over raid5s",
                    CreateSpec::new("1", None, None, kids).unwrap(),
                )
            },
            |d, all| {
                // Three levels: RAID 6 over RAID 0s of RAID 1s.
                let kids = (0..4)
                    .map(|i| {
                        let mids = (0..2)
                            .map(|j| leaf_spec("1", 2, &format!("m{i}-{j}-"), d, all))
                            .collect();
                        MemberSpec::Array(CreateSpec::new("0", None, Some(16384), mids).unwrap())
                    })
                    .collect();
                (
                    "raid6 over raid0s of raid1s",
                    CreateSpec::new("6", None, Some(16384), kids).unwrap(),
                )
            },
        ];
        std::thread::scope(|s| {
            for build in cases {
                s.spawn(move || {
                    let dir = tempfile::tempdir().unwrap();
                    let mut all = Vec::new();
                    let (what, spec) = build(dir.path(), &mut all);
                    crash_between_member_writes(what, spec, &all, dir.path());
                });
            }
        });
    }
}

/// Scrub over member files: which copy or block a mismatch is blamed on, and what repair does.
mod scrub_files {
    use crate::assemble::{assemble, AssembleOptions};
    use crate::create::{create, CreateOptions, CreateSpec, MemberSpec};
    use std::os::unix::fs::FileExt;
    use std::path::PathBuf;

    /// A `level` array over `n` new 4 MiB member files holding a known pattern (the array
    /// closed), and the pattern.
    fn made(
        level: &str,
        chunk: Option<u64>,
        n: usize,
        dir: &std::path::Path,
    ) -> (Vec<PathBuf>, Vec<u8>) {
        let ms: Vec<PathBuf> = (0..n).map(|i| dir.join(format!("m{i}"))).collect();
        let spec = CreateSpec::new(
            level,
            None,
            chunk,
            ms.iter().cloned().map(MemberSpec::Path).collect(),
        )
        .unwrap();
        let arr = create(
            &spec,
            &CreateOptions {
                size: Some(4 << 20),
                ..Default::default()
            },
        )
        .unwrap();
        let data: Vec<u8> = (0..256 << 10).map(|i| (i * 7 % 251) as u8).collect();
        arr.write_at(&data, 0).unwrap();
        arr.close().unwrap();
        (ms, data)
    }

    fn open(ms: &[PathBuf]) -> std::sync::Arc<crate::array::Array> {
        assemble(ms, &AssembleOptions::default()).unwrap()
    }

    /// Overwrite `len` bytes of member `m`'s data area at `at` with `byte`.
    fn damage(m: &PathBuf, at: u64, len: usize, byte: u8) {
        let f = std::fs::OpenOptions::new().write(true).open(m).unwrap();
        f.write_all_at(&vec![byte; len], (1 << 20) + at).unwrap();
    }

    fn member_bytes(m: &PathBuf, at: u64, len: usize) -> Vec<u8> {
        let f = std::fs::File::open(m).unwrap();
        let mut b = vec![0u8; len];
        f.read_exact_at(&mut b, (1 << 20) + at).unwrap();
        b
    }

    #[test]
    fn a_three_way_mirror_repairs_the_outvoted_copy_from_the_majority() {
        let d = tempfile::tempdir().unwrap();
        let (ms, data) = made("1", None, 3, d.path());
        // The first copy (the one the old repair trusted) goes bad.
        damage(&ms[0], 100, 512, 0xee);
        let arr = open(&ms);
        let rep = arr.scrub(true, &mut |_, _| {}).unwrap();
        assert_eq!((rep.mismatches, rep.unlocated), (1, 0), "{rep:?}");
        assert_eq!(rep.located, vec![(0, Some(ms[0].display().to_string()))]);
        let mut got = vec![0u8; data.len()];
        arr.read_at(&mut got, 0).unwrap();
        assert!(got == data, "the majority's data was not kept");
        let again = arr.scrub(false, &mut |_, _| {}).unwrap();
        assert_eq!(again.mismatches, 0);
        arr.close().unwrap();
        for m in &ms {
            assert!(member_bytes(m, 0, 4096) == data[..4096], "{m:?}");
        }
    }

    #[test]
    fn a_mirror_without_a_majority_says_the_bad_copy_is_not_located() {
        let d = tempfile::tempdir().unwrap();
        // Two copies: nothing to outvote with.
        let (ms, _) = made("1", None, 2, d.path());
        damage(&ms[1], 0, 512, 0x11);
        let arr = open(&ms);
        let rep = arr.scrub(false, &mut |_, _| {}).unwrap();
        assert_eq!((rep.mismatches, rep.unlocated), (1, 1));
        assert_eq!(rep.located, vec![(0, None)]);
        arr.close().unwrap();
        // Three copies, all different: no strict majority; repair still makes them agree.
        let d = tempfile::tempdir().unwrap();
        let (ms, _) = made("1", None, 3, d.path());
        damage(&ms[1], 0, 512, 0x11);
        damage(&ms[2], 0, 512, 0x22);
        let arr = open(&ms);
        let rep = arr.scrub(true, &mut |_, _| {}).unwrap();
        assert_eq!((rep.mismatches, rep.unlocated), (1, 1), "{rep:?}");
        assert_eq!(arr.scrub(false, &mut |_, _| {}).unwrap().mismatches, 0);
        arr.close().unwrap();
    }

    #[test]
    fn raid5_repair_rewrites_parity_and_counts_the_block_as_not_located() {
        let d = tempfile::tempdir().unwrap();
        let (ms, _) = made("5", Some(16384), 3, d.path());
        damage(&ms[0], 0, 512, 0x5a);
        let arr = open(&ms);
        let rep = arr.scrub(true, &mut |_, _| {}).unwrap();
        assert_eq!((rep.mismatches, rep.unlocated), (1, 1), "{rep:?}");
        assert_eq!(rep.located, vec![(0, None)]);
        assert_eq!(arr.scrub(false, &mut |_, _| {}).unwrap().mismatches, 0);
        arr.close().unwrap();
    }

    #[test]
    fn raid6_still_locates_and_repairs_a_bad_data_block() {
        let d = tempfile::tempdir().unwrap();
        let (ms, data) = made("6", Some(16384), 4, d.path());
        // Stripe 0 of left-symmetric RAID 6 over 4: member 0 holds data.
        damage(&ms[0], 0, 512, 0x5a);
        let arr = open(&ms);
        let rep = arr.scrub(true, &mut |_, _| {}).unwrap();
        assert_eq!((rep.mismatches, rep.unlocated), (1, 0), "{rep:?}");
        assert_eq!(rep.located, vec![(0, Some(ms[0].display().to_string()))]);
        let mut got = vec![0u8; data.len()];
        arr.read_at(&mut got, 0).unwrap();
        assert!(got == data);
        arr.close().unwrap();
    }

    /// One byte off in a parity row is 8 sectors of mismatch_cnt, md's 4 KiB page
    /// (`STRIPE_SECTORS`), not the chunk's; each mismatched page counts, and a run of bad
    /// bytes over a page boundary is two pages.
    #[test]
    fn raid5_counts_mismatch_cnt_per_4k_page_as_md() {
        let d = tempfile::tempdir().unwrap();
        let (ms, _) = made("5", Some(65536), 3, d.path());
        let arr = open(&ms);
        arr.close().unwrap();
        let single = |at: u64, len: usize, byte: u8| {
            damage(&ms[0], at, len, byte);
            let arr = open(&ms);
            let rep = arr.scrub(false, &mut |_, _| {}).unwrap();
            arr.close().unwrap();
            rep
        };
        let rep = single(77, 1, 0x5a);
        assert_eq!((rep.mismatches, rep.mismatch_sectors), (1, 8), "{rep:?}");
        // A second page of the same row, on another member.
        damage(&ms[1], 40000, 1, 0x5a);
        let arr = open(&ms);
        let rep = arr.scrub(false, &mut |_, _| {}).unwrap();
        arr.close().unwrap();
        assert_eq!((rep.mismatches, rep.mismatch_sectors), (1, 16), "{rep:?}");
        // Repair makes every page agree; the data member's bad bytes stay (RAID 5 cannot
        // tell), as md's repair leaves them.
        let arr = open(&ms);
        let rep = arr.scrub(true, &mut |_, _| {}).unwrap();
        assert_eq!((rep.mismatches, rep.unlocated), (1, 1), "{rep:?}");
        assert_eq!(
            arr.scrub(false, &mut |_, _| {}).unwrap().mismatch_sectors,
            0
        );
        arr.close().unwrap();
        // Two bytes over a page boundary of another row: two pages.
        let rep = single(65536 + 4095, 2, 0x33);
        assert_eq!((rep.mismatches, rep.mismatch_sectors), (1, 16), "{rep:?}");
    }

    /// Bad blocks of two members of one RAID 6 row in different 4 KiB pages: each page has
    /// one bad block, which its syndromes locate, so repair rebuilds both (a whole-chunk
    /// check saw two bad blocks and could locate neither).
    #[test]
    fn raid6_locates_and_repairs_two_bad_members_in_different_pages_of_a_row() {
        let d = tempfile::tempdir().unwrap();
        let (ms, data) = made("6", Some(65536), 5, d.path());
        // Row 0 of left-symmetric RAID 6 over 5: P on member 4, Q on 0, data on 1, 2, 3.
        damage(&ms[2], 77, 1, 0xa5);
        damage(&ms[3], 40000, 1, 0xa5);
        let arr = open(&ms);
        let rep = arr.scrub(false, &mut |_, _| {}).unwrap();
        assert_eq!(
            (rep.mismatches, rep.mismatch_sectors, rep.unlocated),
            (1, 16, 0),
            "{rep:?}"
        );
        let both = format!("{}, {}", ms[2].display(), ms[3].display());
        assert_eq!(rep.located, vec![(0, Some(both.clone()))]);
        let rep = arr.scrub(true, &mut |_, _| {}).unwrap();
        assert_eq!(rep.located, vec![(0, Some(both))]);
        assert_eq!(arr.scrub(false, &mut |_, _| {}).unwrap().mismatches, 0);
        let mut got = vec![0u8; data.len()];
        arr.read_at(&mut got, 0).unwrap();
        assert!(got == data, "the located blocks were not rebuilt");
        arr.close().unwrap();
        assert_eq!(member_bytes(&ms[2], 77, 1), [data[65536 + 77]]);
        assert_eq!(member_bytes(&ms[3], 40000, 1), [data[2 * 65536 + 40000]]);
    }
}
