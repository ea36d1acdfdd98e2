//! A child array that lost more members than it survives, replaced and rebuilt whole from its
//! enclosing array's redundancy: RAID 5 over RAID 0s, RAID 1 over RAID 5s, RAID 6 over RAID 0s.
//! Every read is checked against a model of what was written — degraded at the parent level,
//! while the child is being rebuilt, after it — scrub finds nothing at any level, and the
//! rebuilt child then serves data alone (other children failed).

use raidlab_array::array::Array;
use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
use raidlab_array::manage;
use raidlab_array::superblock::SlotState;
use raidlab_array::{assemble, AssembleOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

mod common;
use common::{check_all, scratch, scrub_clean, Rng};

fn quiet() -> AssembleOptions {
    AssembleOptions {
        force: false,
        resync: true,
        verbose: false,
        all_members: false,
    }
}

/// A nested array: `top` level over `children` child arrays of `child_level`, each with
/// `per_child` members. Returns the array and the leaves, by child.
struct Case {
    name: &'static str,
    top: &'static str,
    top_chunk: u64,
    child_level: &'static str,
    child_chunk: u64,
    children: usize,
    per_child: usize,
    /// (child, leaf) pairs failed until those children fail.
    fail: &'static [(usize, usize)],
    /// Children failed afterwards, to read through the rebuilt ones.
    then_fail: &'static [usize],
}

const CASES: &[Case] = &[
    Case {
        name: "raid5 over raid0s",
        top: "5",
        top_chunk: 16384,
        child_level: "0",
        child_chunk: 4096,
        children: 3,
        per_child: 2,
        fail: &[(1, 0)],
        then_fail: &[2],
    },
    Case {
        name: "raid1 over raid5s",
        top: "1",
        top_chunk: 0,
        child_level: "5",
        child_chunk: 8192,
        children: 2,
        // Wide enough that the parent's small writes into a child are read-modify-writes.
        per_child: 5,
        fail: &[(0, 2), (0, 0)],
        then_fail: &[1],
    },
    Case {
        // A child row (6 × 4 KiB) is no multiple of the parent's 16 KiB chunk: the rebuild
        // writes rows of the child in part (two blocks: read-modify-write over the new
        // members' garbage), and must resync them.
        name: "raid5 over raid5s",
        top: "5",
        top_chunk: 16384,
        child_level: "5",
        child_chunk: 4096,
        children: 3,
        per_child: 7,
        fail: &[(2, 3), (2, 1)],
        then_fail: &[0],
    },
    Case {
        name: "raid6 over raid0s",
        top: "6",
        top_chunk: 8192,
        child_level: "0",
        child_chunk: 4096,
        children: 4,
        per_child: 2,
        fail: &[(0, 1), (2, 0)],
        then_fail: &[1, 3],
    },
];

fn spec(level: &str, chunk: u64, ms: Vec<MemberSpec>) -> CreateSpec {
    CreateSpec::new(level, None, (chunk > 0).then_some(chunk), ms).unwrap()
}

fn build(c: &Case, dir: &Path, rows: u64) -> (Arc<Array>, Vec<Vec<PathBuf>>) {
    let leaves: Vec<Vec<PathBuf>> = (0..c.children)
        .map(|i| {
            (0..c.per_child)
                .map(|j| dir.join(format!("c{i}m{j}")))
                .collect()
        })
        .collect();
    let kids = leaves
        .iter()
        .map(|ms| {
            MemberSpec::Array(spec(
                c.child_level,
                c.child_chunk,
                ms.iter().cloned().map(MemberSpec::Path).collect(),
            ))
        })
        .collect();
    let top = spec(c.top, c.top_chunk, kids);
    let arr = create(
        &top,
        &CreateOptions {
            force: false,
            size: Some((1 << 20) + rows * 16384),
            assume_clean: false,
            verbose: false,
            stop: None,
        },
    )
    .unwrap();
    (arr, leaves)
}

/// Random writes (and a read of each) against the model.
fn scribble(arr: &Array, model: &mut [u8], rng: &mut Rng, n: usize, what: &str) {
    let cap = model.len() as u64;
    for step in 0..n {
        let len = ((1 + rng.below(64)) * 512).min(cap);
        let off = rng.below((cap - len) / 512 + 1) * 512;
        let mut data = vec![0u8; len as usize];
        rng.fill(&mut data);
        arr.write_at(&data, off)
            .unwrap_or_else(|e| panic!("{what} step {step}: write failed: {e}"));
        model[off as usize..(off + len) as usize].copy_from_slice(&data);
        let mut got = vec![0u8; len as usize];
        let ro = rng.below((cap - len) / 512 + 1) * 512;
        arr.read_at(&mut got, ro).unwrap();
        assert!(
            got == model[ro as usize..(ro + len) as usize],
            "{what} step {step}: read at {ro} differs"
        );
    }
}

fn all_leaves(leaves: &[Vec<PathBuf>]) -> Vec<PathBuf> {
    leaves.iter().flatten().cloned().collect()
}

/// Fail the case's leaves through the superblocks, as `raidlab array fail --force` does:
/// (every leaf, the failed ones, the others).
fn fail_leaves(c: &Case, leaves: &[Vec<PathBuf>]) -> (Vec<PathBuf>, Vec<PathBuf>, Vec<PathBuf>) {
    let all = all_leaves(leaves);
    for &(ci, li) in c.fail {
        manage::fail(&all, &leaves[ci][li], true).unwrap();
    }
    let failed: Vec<PathBuf> = c
        .fail
        .iter()
        .map(|&(ci, li)| leaves[ci][li].clone())
        .collect();
    let present = all
        .iter()
        .filter(|p| !failed.contains(p))
        .cloned()
        .collect();
    (all, failed, present)
}

/// Remove each failed leaf and add it back as a spare, filled with garbage first when `rng`
/// is given.
fn replace_leaves(
    all: &[PathBuf],
    failed: &[PathBuf],
    present: &[PathBuf],
    mut rng: Option<&mut Rng>,
) {
    let mut given = present.to_vec();
    for p in failed {
        manage::remove(all, p).unwrap();
        if let Some(rng) = rng.as_deref_mut() {
            let mut junk = vec![0u8; std::fs::metadata(p).unwrap().len() as usize];
            rng.fill(&mut junk);
            std::fs::write(p, &junk).unwrap();
        }
        manage::add(&given, p, true).unwrap();
        given.push(p.clone());
    }
}

/// Fail the case's leaves, then replace each with a fresh file of garbage added as a spare.
fn fail_and_replace(c: &Case, leaves: &[Vec<PathBuf>], rng: &mut Rng, model: &mut [u8]) {
    let (all, failed, present) = fail_leaves(c, leaves);
    // Degraded at the parent level: every byte still reads, and writes land.
    let arr = assemble(&present, &quiet()).unwrap();
    for &(ci, _) in c.fail {
        assert_ne!(arr.slots()[ci].state, SlotState::Active, "{}", c.name);
    }
    check_all(&arr, model, &format!("{}: degraded", c.name));
    scribble(&arr, model, rng, 20, &format!("{}: degraded", c.name));
    arr.close().unwrap();
    drop(arr);
    // Rebuilding now cannot work: nothing has been replaced yet.
    replace_leaves(&all, &failed, &present, Some(rng));
}

/// Fail the case's other children at the parent level: the rebuilt ones must carry the data.
fn read_through_rebuilt(c: &Case, all: &[PathBuf], model: &[u8]) {
    let arr = assemble(all, &quiet()).unwrap();
    for &ci in c.then_fail {
        arr.fail_member(ci, "test: other children fail now");
    }
    check_all(
        &arr,
        model,
        &format!("{}: served by rebuilt children", c.name),
    );
}

#[test]
fn failed_children_are_replaced_and_rebuilt_from_the_parent() {
    for (k, c) in CASES.iter().enumerate() {
        let dir = scratch("raidlab-nested-rebuild");
        let mut rng = Rng(0x5eed_0000 + k as u64 * 7919 + 1);
        let (arr, leaves) = build(c, dir.path(), 12);
        let mut model = vec![0u8; arr.capacity() as usize];
        rng.fill(&mut model);
        arr.write_at(&model, 0).unwrap();
        scribble(&arr, &mut model, &mut rng, 20, c.name);
        arr.close().unwrap();
        drop(arr);

        fail_and_replace(c, &leaves, &mut rng, &mut model);
        let all = all_leaves(&leaves);
        manage::assign_spares(&all).unwrap();
        let st = manage::status(&all).unwrap();
        let rebuilding: Vec<u32> = st
            .not_active
            .iter()
            .filter(|(_, s)| s == "rebuilding")
            .map(|(i, _)| *i)
            .collect();
        let mut want: Vec<u32> = c.fail.iter().map(|&(ci, _)| ci as u32).collect();
        want.dedup();
        assert_eq!(rebuilding, want, "{}: status {st:?}", c.name);
        assert_eq!(st.rebuild_progress, Some(0.0), "{}", c.name);

        let arr = manage::open(&all, false).unwrap();
        check_all(&arr, &model, &format!("{}: before rebuild", c.name));
        let stop = AtomicBool::new(false);
        let mut calls = 0;
        assert!(manage::rebuild_all(&arr, &stop, &mut |_, _, _| calls += 1).unwrap());
        assert!(calls > 0, "{}: no progress reported", c.name);
        assert_eq!(arr.degraded_count(), 0, "{}: still degraded", c.name);
        check_all(&arr, &model, &format!("{}: after rebuild", c.name));
        scrub_clean(&arr, c.name);
        scribble(
            &arr,
            &mut model,
            &mut rng,
            10,
            &format!("{}: rebuilt", c.name),
        );
        arr.close().unwrap();
        drop(arr);
        let st = manage::status(&all).unwrap();
        assert!(!st.degraded && st.rebuild_progress.is_none(), "{st:?}");
        let arr = assemble(&all, &quiet()).unwrap();
        check_all(&arr, &model, &format!("{}: reassembled", c.name));
        scrub_clean(&arr, c.name);
        drop(arr);
        read_through_rebuilt(c, &all, &model);
    }
}

/// Build the case with `rows` rows of random data, fail and replace its children, and stop
/// the parent-level rebuild once 1/`stop_div` of the capacity is done. Returns the model,
/// the leaves per child and all leaf paths.
fn interrupted_rebuild(
    c: &Case,
    dir: &Path,
    rng: &mut Rng,
    rows: u64,
    stop_div: u64,
) -> (Vec<u8>, Vec<Vec<PathBuf>>, Vec<PathBuf>) {
    let (arr, leaves) = build(c, dir, rows);
    let mut model = vec![0u8; arr.capacity() as usize];
    rng.fill(&mut model);
    arr.write_at(&model, 0).unwrap();
    arr.close().unwrap();
    drop(arr);
    fail_and_replace(c, &leaves, rng, &mut model);
    let all = all_leaves(&leaves);
    manage::assign_spares(&all).unwrap();
    let arr = manage::open(&all, false).unwrap();
    let cap = arr.capacity();
    let stop = AtomicBool::new(false);
    let done = manage::rebuild_all(&arr, &stop, &mut |_, d, _| {
        if d >= cap / stop_div {
            stop.store(true, Ordering::SeqCst);
        }
    })
    .unwrap();
    assert!(!done, "the rebuild was to be interrupted");
    arr.close().unwrap();
    drop(arr);
    (model, leaves, all)
}

#[test]
fn interrupted_parent_level_rebuild_resumes() {
    let c = &CASES[0];
    let dir = scratch("raidlab-nested-rebuild");
    let mut rng = Rng(77);
    let (mut model, _leaves, all) = interrupted_rebuild(c, dir.path(), &mut rng, 256, 3);
    let cap = model.len() as u64;
    let st = manage::status(&all).unwrap();
    let p = st.rebuild_progress.expect("progress is kept");
    assert!(p > 0.2 && p < 0.9, "progress {p}");
    assert!(st.not_active.contains(&(1, "rebuilding".into())), "{st:?}");

    // Reassembled half rebuilt: reads below and above the checkpoint, writes on both sides.
    let arr = assemble(&all, &quiet()).unwrap();
    assert_eq!(arr.slots()[1].state, SlotState::Rebuilding);
    let e = manage::scrub_all(&arr, true, &mut |_, _, _| {}).unwrap_err();
    assert!(e.is_usage() && e.message().contains("rebuild first"), "{e}");
    let cp = arr.slots()[1].checkpoint;
    assert!(cp > 0 && cp < cap, "checkpoint {cp}");
    check_all(&arr, &model, "half rebuilt");
    scribble(&arr, &mut model, &mut rng, 30, "half rebuilt");
    let stop = AtomicBool::new(false);
    let mut first = None;
    assert!(manage::rebuild_all(&arr, &stop, &mut |_, d, _| {
        first.get_or_insert(d);
    })
    .unwrap());
    // It resumed where it stopped instead of starting over.
    assert!(first.unwrap() > cp, "resumed at {first:?}, checkpoint {cp}");
    check_all(&arr, &model, "resumed and finished");
    scrub_clean(&arr, "resumed");
    arr.close().unwrap();
    drop(arr);
    read_through_rebuilt(c, &all, &model);
}

#[test]
fn a_lost_child_without_parent_redundancy_is_a_clear_error() {
    // RAID 0 over RAID 5s: a RAID 5 child losing two members has lost its data.
    let dir = scratch("raidlab-nested-rebuild");
    let c = Case {
        name: "raid0 over raid5s",
        top: "0",
        top_chunk: 16384,
        child_level: "5",
        child_chunk: 4096,
        children: 2,
        per_child: 3,
        fail: &[(0, 0), (0, 1)],
        then_fail: &[],
    };
    let (arr, leaves) = build(&c, dir.path(), 8);
    arr.write_at(&vec![7u8; arr.capacity() as usize], 0)
        .unwrap();
    arr.close().unwrap();
    drop(arr);
    let (all, failed, present) = fail_leaves(&c, &leaves);
    replace_leaves(&all, &failed, &present, None);
    let e = manage::assign_spares(&all).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("no redundancy") && msg.contains("data is lost") && !msg.contains('\n'),
        "{msg}"
    );
    assert!(assemble(&all, &quiet()).is_err());

    // RAID 5 over RAID 0s with two children failed: more than the parent survives.
    let dir = scratch("raidlab-nested-rebuild");
    let c = Case {
        fail: &[(0, 0), (1, 1)],
        ..CASES[0]
    };
    let (arr, leaves) = build(&c, dir.path(), 8);
    arr.close().unwrap();
    drop(arr);
    let (all, failed, present) = fail_leaves(&c, &leaves);
    replace_leaves(&all, &failed, &present, None);
    let msg = manage::assign_spares(&all).unwrap_err().to_string();
    assert!(
        msg.contains("2 of 3 children out of service") && msg.contains("survives 1"),
        "{msg}"
    );
}

#[test]
fn writes_during_the_parent_level_rebuild_land() {
    // The rebuild and a writer share the array (what a process serving it would do): every
    // unit is rebuilt under its lock, so writes before, behind and ahead of the checkpoint
    // all read back, and the child ends consistent.
    let c = &CASES[1];
    let dir = scratch("raidlab-nested-rebuild");
    let mut rng = Rng(4242);
    let (arr, leaves) = build(c, dir.path(), 128);
    let mut model = vec![0u8; arr.capacity() as usize];
    rng.fill(&mut model);
    arr.write_at(&model, 0).unwrap();
    arr.close().unwrap();
    drop(arr);
    fail_and_replace(c, &leaves, &mut rng, &mut model);
    let all = all_leaves(&leaves);
    manage::assign_spares(&all).unwrap();
    let arr = manage::open(&all, false).unwrap();
    let stop = AtomicBool::new(false);
    let model = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut model = model;
            scribble(&arr, &mut model, &mut rng, 300, "during rebuild");
            model
        });
        assert!(manage::rebuild_all(&arr, &stop, &mut |_, _, _| {}).unwrap());
        writer.join().unwrap()
    });
    assert_eq!(arr.degraded_count(), 0);
    check_all(&arr, &model, "written during the rebuild");
    scrub_clean(&arr, "written during the rebuild");
    arr.close().unwrap();
    drop(arr);
    read_through_rebuilt(c, &all, &model);
}

#[test]
fn three_levels_raid6_over_raid0s_of_raid1s() {
    // Both disks of one RAID 1 fail: that RAID 1 fails, so does the RAID 0 above it; the
    // RAID 6 rewrites that whole RAID 0 (both its RAID 1s) from its P and Q.
    let dir = scratch("raidlab-nested-rebuild");
    let mut rng = Rng(99);
    let disk = |i: usize, j: usize, k: usize| dir.path().join(format!("d{i}{j}{k}"));
    let tree: Vec<MemberSpec> = (0..4)
        .map(|i| {
            let pairs = (0..2)
                .map(|j| {
                    MemberSpec::Array(spec(
                        "1",
                        0,
                        (0..2).map(|k| MemberSpec::Path(disk(i, j, k))).collect(),
                    ))
                })
                .collect();
            MemberSpec::Array(spec("0", 4096, pairs))
        })
        .collect();
    let arr = create(
        &spec("6", 8192, tree),
        &CreateOptions {
            force: false,
            size: Some((1 << 20) + 24 * 16384),
            assume_clean: false,
            verbose: false,
            stop: None,
        },
    )
    .unwrap();
    let mut model = vec![0u8; arr.capacity() as usize];
    rng.fill(&mut model);
    arr.write_at(&model, 0).unwrap();
    arr.close().unwrap();
    drop(arr);
    let all: Vec<PathBuf> = (0..4)
        .flat_map(|i| (0..2).flat_map(move |j| (0..2).map(move |k| (i, j, k))))
        .map(|(i, j, k)| disk(i, j, k))
        .collect();
    let dead = [disk(2, 1, 0), disk(2, 1, 1)];
    for p in &dead {
        manage::fail(&all, p, true).unwrap();
    }
    let present: Vec<PathBuf> = all.iter().filter(|p| !dead.contains(p)).cloned().collect();
    let arr = assemble(&present, &quiet()).unwrap();
    check_all(&arr, &model, "raid6 degraded");
    scribble(&arr, &mut model, &mut rng, 20, "raid6 degraded");
    arr.close().unwrap();
    drop(arr);
    // One disk at a time, so that the RAID 1 keeps a member whose superblock names it (a
    // leaf array with no readable member left is re-created, not added to).
    for p in &dead {
        manage::remove(&all, p).unwrap();
        let others: Vec<PathBuf> = all.iter().filter(|q| *q != p).cloned().collect();
        manage::add(&others, p, true).unwrap();
    }
    manage::assign_spares(&all).unwrap();
    let st = manage::status(&all).unwrap();
    assert!(st.not_active.contains(&(2, "rebuilding".into())), "{st:?}");
    let arr = manage::open(&all, false).unwrap();
    assert_eq!(arr.slots()[2].state, SlotState::Rebuilding);
    let stop = AtomicBool::new(false);
    assert!(manage::rebuild_all(&arr, &stop, &mut |_, _, _| {}).unwrap());
    check_all(&arr, &model, "raid6 rebuilt");
    scrub_clean(&arr, "raid6 rebuilt");
    arr.close().unwrap();
    drop(arr);
    // Two other RAID 0s out: the rebuilt one is needed for every stripe.
    let arr = assemble(&all, &quiet()).unwrap();
    arr.fail_member(0, "test");
    arr.fail_member(3, "test");
    check_all(&arr, &model, "raid6 through the rebuilt raid0");
}

#[test]
fn a_child_replaced_again_mid_rebuild_starts_over() {
    let c = &CASES[0];
    let dir = scratch("raidlab-nested-rebuild");
    let mut rng = Rng(31337);
    let (model, leaves, all) = interrupted_rebuild(c, dir.path(), &mut rng, 128, 2);
    assert!(manage::status(&all).unwrap().rebuild_progress.unwrap() > 0.4);
    // The new disk (half rebuilt) dies too and is replaced: the child's rebuild restarts.
    let (ci, li) = c.fail[0];
    let p = &leaves[ci][li];
    manage::fail(&all, p, true).unwrap();
    manage::remove(&all, p).unwrap();
    let mut junk = vec![0u8; std::fs::metadata(p).unwrap().len() as usize];
    rng.fill(&mut junk);
    std::fs::write(p, &junk).unwrap();
    let others: Vec<PathBuf> = all.iter().filter(|q| *q != p).cloned().collect();
    manage::add(&others, p, true).unwrap();
    manage::assign_spares(&all).unwrap();
    assert_eq!(manage::status(&all).unwrap().rebuild_progress, Some(0.0));
    let arr = manage::open(&all, false).unwrap();
    assert_eq!(arr.slots()[ci].state, SlotState::Rebuilding);
    assert_eq!(arr.slots()[ci].checkpoint, 0);
    check_all(&arr, &model, "replaced again");
    assert!(manage::rebuild_all(&arr, &stop_never(), &mut |_, _, _| {}).unwrap());
    check_all(&arr, &model, "rebuilt after the second replacement");
    scrub_clean(&arr, "rebuilt after the second replacement");
    arr.close().unwrap();
    drop(arr);
    read_through_rebuilt(c, &all, &model);
}

fn stop_never() -> AtomicBool {
    AtomicBool::new(false)
}
