//! `array create`'s initial sync: every member's data area written (no holes left in member
//! files, so reads reach the devices), the redundancy consistent; `--assume-clean` leaves
//! members as they are; an interrupted sync leaves the array marked as not synced, and
//! finishing it later keeps what the array holds.
//!
//! Members in tmpfs (mapped) and on the disk filesystem of /tmp (O_DIRECT) alike: holes are
//! the filesystem's, and both have them.

mod common;
use common::member_paths;

use raidlab_array::array::{Array, Backing};
use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
use raidlab_array::manage;
use raidlab_array::member::Member;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A scratch folder in memory, and one on the disk filesystem of /tmp.
fn folders(tag: &str) -> Vec<tempfile::TempDir> {
    vec![
        common::scratch(tag),
        tempfile::Builder::new()
            .prefix(tag)
            .tempdir_in("/tmp")
            .unwrap(),
    ]
}

fn spec(level: &str, chunk: Option<u64>, ms: &[PathBuf]) -> CreateSpec {
    CreateSpec::new(
        level,
        None,
        chunk,
        ms.iter().cloned().map(MemberSpec::Path).collect(),
    )
    .unwrap()
}

fn opts(size: Option<u64>, force: bool, assume_clean: bool) -> CreateOptions {
    CreateOptions {
        force,
        size,
        assume_clean,
        verbose: false,
        stop: None,
    }
}

/// A member's data area: (offset, length) from its superblock.
fn data_area(p: &Path) -> (u64, u64) {
    let sb = Member::open(p).unwrap().read_superblock().unwrap().unwrap();
    (sb.data_offset, sb.data_size)
}

/// Where the first hole at or past the start of the member's data area begins (SEEK_HOLE;
/// the end of the file counts as one).
fn first_hole_in_data(p: &Path) -> u64 {
    let (off, _) = data_area(p);
    let f = std::fs::File::open(p).unwrap();
    // SAFETY: lseek on a descriptor we own.
    let at = unsafe { libc::lseek(f.as_raw_fd(), off as libc::off_t, libc::SEEK_HOLE) };
    assert!(at >= 0, "SEEK_HOLE on {}", p.display());
    at as u64
}

/// No hole in any member's data area: SEEK_HOLE from its start finds its end (or past it).
fn assert_no_holes(ms: &[PathBuf], what: &str) {
    for p in ms {
        let (off, len) = data_area(p);
        let hole = first_hole_in_data(p);
        assert!(
            hole >= off + len,
            "{what}: {} has a hole at byte {hole}, inside its data area [{off}, {})",
            p.display(),
            off + len
        );
    }
}

/// Every byte of every member's data area is a hole.
fn assert_all_holes(ms: &[PathBuf], what: &str) {
    for p in ms {
        let (off, len) = data_area(p);
        let f = std::fs::File::open(p).unwrap();
        let holes = raidlab_engine::safety::hole_bytes(&f, off, off + len).unwrap();
        assert_eq!(holes, len, "{what}: {} was written", p.display());
    }
}

/// Fresh member files of every level: no holes left in any data area, redundancy
/// consistent, the array reads as zeros; with --assume-clean the files stay sparse.
#[test]
fn create_writes_every_data_area_and_assume_clean_leaves_them_sparse() {
    for dir in folders("isync-fresh") {
        for (level, n, chunk) in [
            ("5", 4, Some(16384)),
            ("6", 5, Some(16384)),
            ("1", 2, None),
            ("10", 4, Some(16384)),
            ("0", 3, Some(16384)),
        ] {
            let what = format!("raid{level} in {}", dir.path().display());
            let ms = member_paths(dir.path(), &format!("s{level}-"), n);
            let arr = create(&spec(level, chunk, &ms), &opts(Some(3 << 20), false, false)).unwrap();
            assert_eq!(arr.sync_pending(), None, "{what}");
            assert_no_holes(&ms, &what);
            if arr.geo.redundancy() > 0 {
                common::scrub_clean(&arr, &what);
            }
            common::check_all(&arr, &vec![0u8; arr.capacity() as usize], &what);
            arr.close().unwrap();
            drop(arr);
            let st = manage::status(&ms).unwrap();
            assert_eq!(st.sync_progress, None, "{what}");

            let ms = member_paths(dir.path(), &format!("c{level}-"), n);
            let arr = create(&spec(level, chunk, &ms), &opts(Some(3 << 20), false, true)).unwrap();
            assert_eq!(arr.sync_pending(), None, "{what}: --assume-clean is synced");
            assert_all_holes(&ms, &format!("{what} --assume-clean"));
            assert!(arr.hole_share(0, arr.capacity()).unwrap() > 0.99, "{what}");
            // Written, a region is no longer holes, and the rest still is.
            // Whole rows of every level here (12 chunks of up to 64 KiB).
            let half = arr.capacity() / 2 / (12 << 16) * (12 << 16);
            arr.write_at(&vec![1u8; half as usize], 0).unwrap();
            assert_eq!(arr.hole_share(0, half).unwrap(), 0.0, "{what}");
            let rest = arr.hole_share(half + (1 << 20), 1 << 20).unwrap();
            assert!(rest > 0.99, "{what}: {rest}");
            arr.close().unwrap();
        }
    }
}

/// Members that existed before `create` — sparse files with data here and there, taken with
/// --force — keep what they hold: the holes are filled with zeros around it and the parity
/// is made to agree with it (md's resync, which trusts the data).
#[test]
fn existing_members_keep_their_data_and_lose_their_holes() {
    for dir in folders("isync-existing") {
        let what = format!("raid5 in {}", dir.path().display());
        let ms = member_paths(dir.path(), "e", 4);
        let data = vec![0xa5u8; 65536];
        for (i, p) in ms.iter().enumerate() {
            let f = std::fs::File::create(p).unwrap();
            f.set_len(4 << 20).unwrap();
            // Inside every data area (which starts at 1 MiB), at a different place each.
            f.write_all_at(&data, (2 << 20) + i as u64 * 131072)
                .unwrap();
        }
        assert!(
            create(&spec("5", Some(16384), &ms), &opts(None, false, false)).is_err(),
            "{what}: members holding data need --force"
        );
        let arr = create(&spec("5", Some(16384), &ms), &opts(None, true, false)).unwrap();
        assert_eq!(arr.sync_pending(), None, "{what}");
        assert_no_holes(&ms, &what);
        common::scrub_clean(&arr, &what);
        arr.close().unwrap();
        let mut kept = 0;
        for (i, p) in ms.iter().enumerate() {
            let f = std::fs::File::open(p).unwrap();
            let at = (2 << 20) + i as u64 * 131072;
            let (off, _) = data_area(p);
            // Four rows of 16 KiB chunks; where member i holds their parity, the parity
            // was recomputed from the data, elsewhere what it held is the data.
            for row in (at - off) / 16384..(at - off) / 16384 + 4 {
                let parity = arr.geo.stripe_layout(row).unwrap().p.unwrap();
                let mut got = vec![0u8; 16384];
                f.read_exact_at(&mut got, off + row * 16384).unwrap();
                if parity != i as u32 {
                    assert!(
                        got == data[..16384],
                        "{what}: {} lost its data",
                        p.display()
                    );
                    kept += 1;
                }
            }
        }
        assert!(kept >= 8, "{what}: {kept} data chunks checked");
    }
}

/// Nested: RAID 0 over two RAID 5s of fresh files. Every leaf's data areas are written and
/// every level's redundancy agrees.
#[test]
fn a_nested_array_is_synced_at_every_level() {
    let dir = common::scratch("isync-nested");
    let a = member_paths(dir.path(), "a", 3);
    let b = member_paths(dir.path(), "b", 3);
    let top = CreateSpec::new(
        "0",
        None,
        Some(65536),
        vec![
            MemberSpec::Array(spec("5", Some(16384), &a)),
            MemberSpec::Array(spec("5", Some(16384), &b)),
        ],
    )
    .unwrap();
    let arr = create(&top, &opts(Some(3 << 20), false, false)).unwrap();
    assert_eq!(arr.sync_pending(), None);
    let all: Vec<PathBuf> = a.iter().chain(&b).cloned().collect();
    assert_no_holes(&all, "nested");
    common::scrub_clean(&arr, "nested");
    arr.close().unwrap();
}

/// Ctrl-C before the sync starts, then again half way through when it is resumed: each time
/// the array is left marked as not synced with the progress made (status says how far); data
/// written to the array in between survives the rest of the sync, which then leaves no hole
/// and consistent parity.
#[test]
fn an_interrupted_sync_is_marked_and_resumes_keeping_the_data() {
    static STOP: AtomicBool = AtomicBool::new(false);
    let dir = common::scratch("isync-stop");
    let ms = member_paths(dir.path(), "i", 4);
    STOP.store(true, Ordering::SeqCst);
    let mut o = opts(Some(34 << 20), false, false);
    o.stop = Some(&STOP);
    let Err(e) = create(&spec("5", Some(65536), &ms), &o) else {
        panic!("create must fail when its sync is interrupted");
    };
    let list: Vec<String> = ms.iter().map(|p| p.display().to_string()).collect();
    assert!(
        e.message().contains("initial sync interrupted at 0.0%")
            && e.message()
                .contains(&format!("raidlab array rebuild {}", list.join(","))),
        "{e}"
    );
    assert!(!e.is_usage(), "{e}");
    let st = manage::status(&ms).unwrap();
    assert_eq!(
        st.sync_progress,
        Some(0.0),
        "status of the interrupted create"
    );
    assert_eq!(st.state, "clean");
    let text = manage::status_text(&st, 0);
    assert!(
        text.contains("not synced") && text.contains("initial sync: 0.0% done"),
        "{text}"
    );

    // Written before the sync resumes, where it has not reached.
    let model = {
        let arr = manage::open(&ms, false).unwrap();
        assert!(arr.sync_pending().is_some());
        let mut model = vec![0u8; arr.capacity() as usize];
        let at = model.len() - (3 << 20);
        common::Rng(7).fill(&mut model[at..at + (1 << 20)]);
        arr.write_at(&model[at..at + (1 << 20)], at as u64).unwrap();
        arr.close().unwrap();
        model
    };

    // Resumed, and stopped after its first round.
    let stop = AtomicBool::new(false);
    {
        let arr = manage::open(&ms, false).unwrap();
        let mut calls = 0;
        let done = manage::finish_sync(&arr, &stop, &mut |_, _| {
            calls += 1;
            stop.store(true, Ordering::SeqCst);
        })
        .unwrap();
        assert!(!done, "the sync must stop when asked");
        assert_eq!(calls, 1);
        arr.close().unwrap();
    }
    let p = manage::status(&ms).unwrap().sync_progress.unwrap();
    // One round of 16 MiB of each member's 33 MiB data area.
    assert!((0.4..0.6).contains(&p), "sync progress {p}");

    stop.store(false, Ordering::SeqCst);
    let arr: Arc<Array> = manage::open(&ms, false).unwrap();
    assert!(manage::finish_sync(&arr, &stop, &mut |_, _| {}).unwrap());
    assert_eq!(arr.sync_pending(), None);
    common::check_all(&arr, &model, "after the resumed sync");
    common::scrub_clean(&arr, "after the resumed sync");
    arr.close().unwrap();
    drop(arr);
    assert_no_holes(&ms, "after the resumed sync");
    assert_eq!(manage::status(&ms).unwrap().sync_progress, None);
}

/// A member being rebuilt is read only below the rebuild's checkpoint; above it the array
/// reconstructs from the others. The holes of the fresh spare's unrebuilt part are not what a
/// read reaches, so they do not count: a read of a fully written array half rebuilt onto a
/// sparse spare was warned about as lying a third in holes ("write it first").
#[test]
fn holes_of_a_spare_above_the_rebuild_checkpoint_are_not_read() {
    let dir = tempfile::Builder::new()
        .prefix("isync-rebuild")
        .tempdir_in("/tmp")
        .unwrap();
    let ms = member_paths(dir.path(), "r", 4);
    let arr = create(
        &spec("5", Some(16384), &ms),
        &opts(Some(8 << 20), false, false),
    )
    .unwrap();
    arr.write_at(&vec![7u8; arr.capacity() as usize], 0)
        .unwrap();
    arr.close().unwrap();
    drop(arr);
    manage::fail(&ms, &ms[1], false).unwrap();
    manage::remove(&ms, &ms[1]).unwrap();
    let len = std::fs::metadata(&ms[0]).unwrap().len();
    std::fs::remove_file(&ms[1]).unwrap();
    std::fs::File::create(&ms[1]).unwrap().set_len(len).unwrap();
    let others = [ms[0].clone(), ms[2].clone(), ms[3].clone()];
    manage::add(&others, &ms[1], true).unwrap();
    assert_eq!(manage::assign_spares(&ms).unwrap(), 1);
    let arr = manage::open(&ms, false).unwrap();
    // Stop after the first group of rows: the spare is rebuilt at its start only.
    let stop = AtomicBool::new(false);
    let done = manage::rebuild_all(&arr, &stop, &mut |_, d, t| {
        if d < t {
            stop.store(true, Ordering::SeqCst);
        }
    })
    .unwrap();
    assert!(!done, "the rebuild was to stop part way");
    assert_eq!(arr.degraded_count(), 1);
    let share = arr.hole_share(0, arr.capacity()).unwrap();
    assert_eq!(share, 0.0, "holes above the checkpoint counted");
    arr.close().unwrap();
}

/// The enclosing arrays with redundancy of `arr`, the lowest first (the order their passes
/// run in).
fn passes(arr: &Arc<Array>) -> Vec<Arc<Array>> {
    let mut out = Vec::new();
    if let Backing::Nested(children) = &arr.backing {
        for c in children.iter().flatten() {
            out.extend(passes(c));
        }
        if arr.geo.redundancy() > 0 {
            out.push(arr.clone());
        }
    }
    out
}

/// Units of an array's pass: its stripes or chunks.
fn units(a: &Array) -> u64 {
    a.capacity().div_ceil(raidlab_array::shape::unit(&a.geo))
}

fn child(level: &str, chunk: Option<u64>, ms: Vec<MemberSpec>) -> MemberSpec {
    MemberSpec::Array(CreateSpec::new(level, None, chunk, ms).unwrap())
}

fn leaves(dir: &Path, tag: &str, n: usize) -> Vec<MemberSpec> {
    member_paths(dir, tag, n)
        .into_iter()
        .map(MemberSpec::Path)
        .collect()
}

/// A nested sync interrupted in the pass of an enclosing array with redundancy resumes from
/// where that pass stopped, at every level of the nest: RAID 1 over RAID 5s, RAID 5 over
/// RAID 1s, and RAID 1 over RAID 5s over RAID 1s stopped in a middle pass and in the top one.
/// The checkpoint is in the leaves' superblocks; the resumed sync resyncs nothing of the
/// passes before it, only the units past the checkpoint of the pass it stopped in, all of
/// the passes after; data written in between (across the checkpoint) is kept, redundancy
/// made to disagree just past the checkpoint and at the end is made consistent, and every
/// level ends consistent (scrub clean) and recorded as synced (superblock version 1 again).
#[test]
fn a_nested_sync_stopped_in_an_enclosing_pass_resumes_there_and_ends_consistent() {
    static STOP: AtomicBool = AtomicBool::new(true);
    type Tree = fn(&Path) -> CreateSpec;
    let cases: [(&str, Tree, u64, &[usize]); 3] = [
        (
            "raid1 over raid5s",
            |d| {
                CreateSpec::new(
                    "1",
                    None,
                    None,
                    vec![
                        child("5", Some(16384), leaves(d, "a", 3)),
                        child("5", Some(16384), leaves(d, "b", 3)),
                    ],
                )
                .unwrap()
            },
            10 << 20,
            &[0],
        ),
        (
            "raid5 over raid1s",
            |d| {
                CreateSpec::new(
                    "5",
                    None,
                    Some(16384),
                    (0..3)
                        .map(|i| child("1", None, leaves(d, &format!("r{i}-"), 2)))
                        .collect(),
                )
                .unwrap()
            },
            10 << 20,
            &[0],
        ),
        (
            "raid1 over raid5s over raid1s",
            |d| {
                let mid = |t: &str| {
                    child(
                        "5",
                        Some(16384),
                        (0..3)
                            .map(|i| child("1", None, leaves(d, &format!("{t}{i}-"), 2)))
                            .collect(),
                    )
                };
                CreateSpec::new("1", None, None, vec![mid("p"), mid("q")]).unwrap()
            },
            6 << 20,
            // The first middle pass, and the top one.
            &[0, 2],
        ),
    ];
    for (name, tree, size, stop_in) in cases {
        for &k in stop_in {
            let what = format!("{name}, stopped in pass {k}");
            let dir = common::scratch("isync-passes");
            let spec = tree(dir.path());
            let ms = spec.leaf_paths();
            STOP.store(true, Ordering::SeqCst);
            let mut o = opts(Some(size), false, false);
            o.stop = Some(&STOP);
            assert!(create(&spec, &o).is_err(), "{what}: create was to stop");

            // Synced up to the first batch of pass k, then stopped.
            let stop = AtomicBool::new(false);
            let arr = manage::open(&ms, false).unwrap();
            let ps = passes(&arr);
            assert!(ps.len() > k, "{what}");
            let leaf_bytes: u64 = ms.iter().map(|p| data_area(p).1).sum();
            let before: u64 = ps[..k]
                .iter()
                .map(|a| a.geo.member_bytes * a.geo.members as u64)
                .sum();
            let done = manage::finish_sync(&arr, &stop, &mut |d, _| {
                if d > leaf_bytes + before {
                    stop.store(true, Ordering::SeqCst);
                }
            })
            .unwrap();
            assert!(!done, "{what}: the sync was to stop in pass {k}");
            arr.close().unwrap();
            let unit = |a: &Array| raidlab_array::shape::unit(&a.geo);
            let checkpoint = 64 * unit(&ps[k]);
            // (uuid, tree level, capacity) of each pass.
            let ids: Vec<([u8; 16], usize, u64)> =
                ps.iter().map(|a| (a.uuid, a.depth, a.capacity())).collect();
            drop(ps);
            drop(arr);
            // Each leaf records the passes of the arrays above it: the ones before k whole,
            // k up to its first batch, none after.
            for p in &ms {
                let sb = Member::open(p).unwrap().read_superblock().unwrap().unwrap();
                assert!(sb.initial_sync.is_some(), "{what}: {}", p.display());
                let d = sb.parents.len();
                for (i, &(uuid, level, cap)) in ids.iter().enumerate() {
                    let desc = &sb.parents[d - 1 - level];
                    if desc.uuid != uuid {
                        continue; // another branch of the tree
                    }
                    let want = match i.cmp(&k) {
                        std::cmp::Ordering::Less => Some(cap),
                        std::cmp::Ordering::Equal => Some(checkpoint),
                        std::cmp::Ordering::Greater => None,
                    };
                    assert_eq!(
                        desc.initial_sync,
                        want,
                        "{what}: pass {i} as {} records it",
                        p.display()
                    );
                }
            }
            let p = manage::status(&ms).unwrap().sync_progress.unwrap();
            assert!(p > 0.5 && p < 1.0, "{what}: status says {p}");

            // Written between, across the checkpoint of the pass it stopped in.
            let model = {
                let arr = manage::open(&ms, false).unwrap();
                let mut model = vec![0u8; arr.capacity() as usize];
                let (from, to) = (checkpoint / 2, (checkpoint * 3).min(model.len() as u64));
                common::Rng(11).fill(&mut model[from as usize..to as usize]);
                arr.write_at(&model[from as usize..to as usize], from)
                    .unwrap();
                // Then, past pass k's array, its redundancy made to disagree with its data in
                // its first unit past the checkpoint and in its last unit (a copy, or the
                // parity, written through the child alone): the resumed sync must reach both.
                let a = &passes(&arr)[k];
                let Backing::Nested(children) = &a.backing else {
                    unreachable!("a pass is an enclosing array's")
                };
                let chunk = a.geo.chunk_bytes;
                for u in [
                    checkpoint / raidlab_array::shape::unit(&a.geo),
                    units(a) - 1,
                ] {
                    let (m, off) = if a.geo.level.has_parity() {
                        (a.geo.stripe_layout(u).unwrap().p.unwrap(), u * chunk)
                    } else {
                        let copy = &raidlab_array::shape::chunk_copies(&a.geo, u)[1];
                        (copy.member, copy.offset)
                    };
                    let c = children[m as usize].as_ref().unwrap();
                    c.write_at(&vec![0x5au8; chunk as usize], off).unwrap();
                }
                arr.close().unwrap();
                model
            };

            let arr = manage::open(&ms, false).unwrap();
            let mut first = None;
            assert!(manage::finish_sync(&arr, &stop_never(), &mut |d, t| {
                first.get_or_insert((d, t));
            })
            .unwrap());
            let (d, t) = first.unwrap();
            assert!(
                d as f64 / t as f64 >= p,
                "{what}: the resumed sync started at {d} of {t}, below the {p} it had done"
            );
            for (i, a) in passes(&arr).iter().enumerate() {
                let want = match i.cmp(&k) {
                    std::cmp::Ordering::Less => 0,
                    std::cmp::Ordering::Equal => units(a) - 64,
                    std::cmp::Ordering::Greater => units(a),
                };
                assert_eq!(
                    a.units_resynced(),
                    want,
                    "{what}: units pass {i} resynced when resumed"
                );
            }
            assert_eq!(arr.sync_pending(), None, "{what}");
            common::check_all(&arr, &model, &what);
            common::scrub_clean(&arr, &what);
            arr.close().unwrap();
            drop(arr);
            for p in &ms {
                let mut v = [0u8; 12];
                std::fs::File::open(p)
                    .unwrap()
                    .read_exact_at(&mut v, 0)
                    .unwrap();
                assert_eq!(
                    u32::from_le_bytes(v[8..12].try_into().unwrap()),
                    1,
                    "{what}: {} still records work in progress",
                    p.display()
                );
            }
            assert_eq!(manage::status(&ms).unwrap().sync_progress, None, "{what}");
        }
    }
}

fn stop_never() -> AtomicBool {
    AtomicBool::new(false)
}
