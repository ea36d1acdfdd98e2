//! `array create`'s initial sync: every member's data area written (no holes left in member
//! files, so reads reach the devices), the redundancy consistent; `--assume-clean` leaves
//! members as they are; an interrupted sync leaves the array marked as not synced, and
//! finishing it later keeps what the array holds.
//!
//! Members in tmpfs (mapped) and on the disk filesystem of /tmp (O_DIRECT) alike: holes are
//! the filesystem's, and both have them.

mod common;

use raidlab_array::array::Array;
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

fn paths(dir: &Path, tag: &str, n: usize) -> Vec<PathBuf> {
    (0..n).map(|i| dir.join(format!("{tag}{i}"))).collect()
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
            let ms = paths(dir.path(), &format!("s{level}-"), n);
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

            let ms = paths(dir.path(), &format!("c{level}-"), n);
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
        let ms = paths(dir.path(), "e", 4);
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
    let a = paths(dir.path(), "a", 3);
    let b = paths(dir.path(), "b", 3);
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
    let ms = paths(dir.path(), "i", 4);
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
    let ms = paths(dir.path(), "r", 4);
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
