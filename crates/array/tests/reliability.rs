//! Reliability: random geometries × random writes × random member failures within the
//! redundancy → every read returns what was written, before and after rebuild; corruption
//! found and repaired by scrub; more failures than the redundancy → errors, never wrong data.

use raidlab_array::array::Array;
use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
use raidlab_array::manage;
use raidlab_array::Level;
use raidlab_array::{assemble, AssembleOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

mod common;
use common::{check_all, scratch, Rng};

fn paths(dir: &Path, n: usize, tag: &str) -> Vec<PathBuf> {
    (0..n).map(|i| dir.join(format!("{tag}{i}"))).collect()
}

fn spec(level: &str, layout: Option<&str>, chunk: u64, members: &[PathBuf]) -> CreateSpec {
    let ms = members.iter().cloned().map(MemberSpec::Path).collect();
    CreateSpec::new(
        level,
        layout,
        if level == "1" || level == "linear" {
            None
        } else {
            Some(chunk)
        },
        ms,
    )
    .unwrap()
}

fn new_array(s: &CreateSpec, member_size: u64) -> Arc<Array> {
    create(
        s,
        &CreateOptions {
            force: false,
            size: Some(member_size),
            assume_clean: false,
            verbose: false,
            stop: None,
        },
    )
    .unwrap()
}

const GEOMETRIES: &[(&str, Option<&str>, u32, u32)] = &[
    // level, layout, min members, max members
    ("linear", None, 1, 4),
    ("0", None, 1, 5),
    ("1", None, 2, 3),
    ("10", Some("n2"), 2, 5),
    ("10", Some("f2"), 2, 5),
    ("10", Some("o2"), 2, 5),
    ("10", Some("n3"), 3, 5),
    ("4", None, 2, 6),
    ("5", Some("left-symmetric"), 2, 7),
    ("5", Some("right-symmetric"), 3, 6),
    ("5", Some("left-asymmetric"), 3, 6),
    ("5", Some("right-asymmetric"), 3, 6),
    ("5", Some("parity-first"), 3, 5),
    ("6", Some("left-symmetric"), 4, 8),
    ("6", Some("right-asymmetric"), 4, 7),
    ("6", Some("left-asymmetric"), 4, 7),
    ("6", Some("parity-last"), 4, 6),
    ("6", Some("left-symmetric-6"), 5, 7),
    ("6", Some("right-symmetric-6"), 4, 7),
    ("6", Some("left-asymmetric-6"), 4, 6),
    ("6", Some("right-asymmetric-6"), 4, 6),
    ("6", Some("parity-first-6"), 4, 6),
    // SNIA DDF layouts (Q coefficients in member order, zero sources at P and Q).
    ("6", Some("ddf-zero-restart"), 4, 8),
    ("6", Some("ddf-N-restart"), 4, 8),
    ("6", Some("ddf-N-continue"), 4, 8),
];

fn one_case(case: u64) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (case * 0x1000_0001 + 1));
    let (level, layout, lo, hi) = GEOMETRIES[rng.below(GEOMETRIES.len() as u64) as usize];
    let n = (lo + rng.below((hi - lo + 1) as u64) as u32) as usize;
    let chunk = 4096u64 << rng.below(3);
    let rows = 3 + rng.below(6);
    let member_size = (1 << 20) + rows * chunk;
    let dir = scratch("raidlab-array-test");
    let ms = paths(dir.path(), n, "m");
    let s = spec(level, layout, chunk, &ms);
    let what = format!("case {case}: raid{level} {layout:?} x{n} chunk {chunk}");
    let arr = new_array(&s, member_size);
    let cap = arr.capacity() as usize;
    let mut model = vec![0u8; cap];
    let redundancy = arr.geo.redundancy();
    let mut failed: Vec<usize> = Vec::new();
    for step in 0..24 {
        let len = (1 + rng.below(3 * arr.geo.stripe_data_bytes() / 512)) as usize * 512;
        let len = len.min(cap);
        let off = rng.below((cap - len) as u64 / 512 + 1) as usize * 512;
        let mut data = vec![0u8; len];
        rng.fill(&mut data);
        arr.write_at(&data, off as u64)
            .unwrap_or_else(|e| panic!("{what} step {step}: write failed: {e}"));
        model[off..off + len].copy_from_slice(&data);
        // A random read must see exactly the model.
        let rl = (1 + rng.below(cap as u64 / 512)) as usize * 512;
        let rl = rl.min(cap);
        let ro = rng.below((cap - rl) as u64 / 512 + 1) as usize * 512;
        let mut got = vec![0u8; rl];
        arr.read_at(&mut got, ro as u64)
            .unwrap_or_else(|e| panic!("{what} step {step}: read failed: {e}"));
        assert!(
            got == model[ro..ro + rl],
            "{what} step {step}: read at {ro}+{rl} differs"
        );
        if (failed.len() as u32) < redundancy && rng.below(6) == 0 {
            let m = rng.below(n as u64) as usize;
            if !failed.contains(&m) {
                arr.fail_member(m, "test failure");
                failed.push(m);
            }
        }
    }
    check_all(
        &arr,
        &model,
        &format!("{what} degraded ({failed:?} failed)"),
    );
    arr.close().unwrap();
    drop(arr);

    // Reassemble degraded from the superblocks alone: same data.
    let arr = assemble(
        &ms,
        &AssembleOptions {
            force: false,
            resync: true,
            verbose: false,
            all_members: false,
        },
    )
    .unwrap();
    check_all(&arr, &model, &format!("{what} reassembled"));
    arr.close().unwrap();
    drop(arr);

    if failed.is_empty() {
        return;
    }
    // Replace each failed member with a fresh disk full of garbage, rebuild, verify.
    for &m in &failed {
        manage::remove(&ms, &ms[m]).unwrap();
        let mut junk = vec![0u8; member_size as usize];
        rng.fill(&mut junk);
        std::fs::write(&ms[m], &junk).unwrap();
        let others: Vec<PathBuf> = ms
            .iter()
            .enumerate()
            .filter(|(i, _)| !failed.contains(i))
            .map(|(_, p)| p.clone())
            .collect();
        manage::add(&others, &ms[m], true).unwrap();
    }
    assert_eq!(manage::assign_spares(&ms).unwrap(), failed.len(), "{what}");
    let arr = manage::open(&ms, false).unwrap();
    check_all(&arr, &model, &format!("{what} before rebuild"));
    let stop = AtomicBool::new(false);
    assert!(manage::rebuild_all(&arr, &stop, &mut |_, _, _| {}).unwrap());
    assert_eq!(
        arr.degraded_count(),
        0,
        "{what}: still degraded after rebuild"
    );
    check_all(&arr, &model, &format!("{what} after rebuild"));
    if redundancy > 0 {
        let reps = manage::scrub_all(&arr, false, &mut |_, _, _| {}).unwrap();
        for (name, r) in reps {
            assert_eq!(
                r.mismatches, 0,
                "{what}: scrub of {name} after rebuild found mismatches"
            );
        }
    }
    arr.close().unwrap();
    drop(arr);
    // The rebuilt members alone carry the data: fail the survivors instead.
    let arr = assemble(&ms, &AssembleOptions::default()).unwrap();
    let survivors: Vec<usize> = (0..n)
        .filter(|i| !failed.contains(i))
        .take(failed.len())
        .collect();
    for &s in &survivors {
        arr.fail_member(s, "test: survivors fail now");
    }
    check_all(&arr, &model, &format!("{what} served by rebuilt members"));
}

#[test]
fn random_geometries_writes_and_failures() {
    let cases: u64 = std::env::var("RAIDLAB_ARRAY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    for case in 0..cases {
        one_case(case);
    }
}

#[test]
fn more_failures_than_redundancy_error_never_wrong_data() {
    let dir = scratch("raidlab-array-test");
    for (level, n, kill) in [
        ("5", 4, 2),
        ("6", 5, 3),
        ("0", 3, 1),
        ("1", 2, 2),
        ("10", 4, 2),
    ] {
        let ms = paths(dir.path(), n, &format!("r{level}-"));
        let arr = new_array(&spec(level, None, 65536, &ms), 3 << 20);
        let data = vec![0xabu8; arr.capacity() as usize];
        arr.write_at(&data, 0).unwrap();
        // RAID 10 n2 on 4: members 0 and 1 hold the same chunks.
        for m in 0..kill {
            arr.fail_member(m, "test");
        }
        let mut got = vec![0u8; data.len()];
        let err = arr
            .read_at(&mut got, 0)
            .expect_err(&format!("raid{level} with {kill} failed must not read"));
        assert!(
            err.to_string().contains("fail"),
            "raid{level}: unclear error: {err}"
        );
        assert!(arr.write_at(&data[..4096], 0).is_err());
        drop(arr);
        if level == "1" {
            // The last mirror's failure has no surviving member to be recorded on.
            continue;
        }
        let e = assemble(&ms, &AssembleOptions::default())
            .err()
            .expect("must not assemble");
        assert!(e.to_string().contains("cannot start"), "{e}");
    }
}

#[test]
fn scrub_finds_and_repairs_a_corrupt_block() {
    use std::os::unix::fs::FileExt;
    let dir = scratch("raidlab-array-test");
    for (level, layout, n) in [
        ("5", None, 4),
        ("6", None, 6),
        ("6", Some("ddf-N-continue"), 6),
        ("6", Some("ddf-zero-restart"), 5),
        ("6", Some("right-asymmetric-6"), 5),
        ("1", None, 3),
        ("10", None, 4),
    ] {
        let ms = paths(dir.path(), n, &format!("s{level}{}-", layout.unwrap_or("")));
        let arr = new_array(&spec(level, layout, 16384, &ms), (1 << 20) + 16 * 16384);
        let mut rng = Rng(77);
        let mut data = vec![0u8; arr.capacity() as usize];
        rng.fill(&mut data);
        arr.write_at(&data, 0).unwrap();
        let reps = manage::scrub_all(&arr, false, &mut |_, _, _| {}).unwrap();
        assert_eq!(
            reps[0].1.mismatches, 0,
            "raid{level} {layout:?}: fresh array"
        );
        arr.close().unwrap();
        drop(arr);
        // Corrupt 4 KiB inside each of n consecutive rows of member 1: over n rows the member
        // holds data, P and Q (parity levels), so each kind of bad block is found.
        let victim = 1;
        let rows = 3..3 + n as u64;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&ms[victim])
            .unwrap();
        for r in rows.clone() {
            f.write_all_at(&[0x5a; 4096], (1 << 20) + r * 16384 + 4096)
                .unwrap();
        }
        drop(f);
        let arr = manage::open(&ms, false).unwrap();
        let reps = manage::scrub_all(&arr, false, &mut |_, _, _| {}).unwrap();
        assert_eq!(
            reps[0].1.mismatches, n as u64,
            "raid{level} {layout:?}: check must find every corrupt block"
        );
        if level == "6" {
            for (row, who) in &reps[0].1.located {
                assert_eq!(
                    who.as_deref(),
                    Some(ms[victim].to_str().unwrap()),
                    "raid6 {layout:?} must locate the bad block of row {row}"
                );
            }
        }
        let reps = manage::scrub_all(&arr, true, &mut |_, _, _| {}).unwrap();
        assert_eq!(reps[0].1.mismatches, n as u64);
        let reps = manage::scrub_all(&arr, false, &mut |_, _, _| {}).unwrap();
        assert_eq!(
            reps[0].1.mismatches, 0,
            "raid{level} {layout:?}: repair must leave it consistent"
        );
        if level == "6" {
            // RAID 6 repaired the located block: the data reads back as written.
            check_all(&arr, &data, "raid6 after repair");
        }
    }
}

#[test]
fn concurrent_writers_to_one_stripe_serialize() {
    let dir = scratch("raidlab-array-test");
    for level in ["5", "6"] {
        let ms = paths(dir.path(), 6, &format!("c{level}-"));
        let arr = new_array(&spec(level, None, 65536, &ms), (1 << 20) + 8 * 65536);
        let cap = arr.capacity() as usize;
        let threads = 4;
        std::thread::scope(|s| {
            for t in 0..threads {
                let arr = arr.clone();
                s.spawn(move || {
                    // Each thread owns every 4th 4 KiB block: all threads hit every stripe.
                    for round in 0..3u8 {
                        let mut off = t * 4096;
                        while off + 4096 <= cap {
                            let fill = (t as u8) << 4 | round;
                            arr.write_at(&[fill; 4096], off as u64).unwrap();
                            off += threads * 4096;
                        }
                    }
                });
            }
        });
        let mut model = vec![0u8; cap];
        for (i, b) in model.chunks_mut(4096).enumerate() {
            b.fill(((i % threads) as u8) << 4 | 2);
        }
        check_all(&arr, &model, &format!("raid{level} concurrent"));
        let reps = manage::scrub_all(&arr, false, &mut |_, _, _| {}).unwrap();
        assert_eq!(
            reps[0].1.mismatches, 0,
            "raid{level}: parity inconsistent after concurrent writes"
        );
    }
}

#[test]
fn nested_raid0_over_raid5_degrades_and_rebuilds() {
    let dir = scratch("raidlab-array-test");
    let a = paths(dir.path(), 3, "a");
    let b = paths(dir.path(), 3, "b");
    let child = |ms: &[PathBuf]| MemberSpec::Array(spec("5", None, 16384, ms));
    let top = CreateSpec::new("0", None, Some(65536), vec![child(&a), child(&b)]).unwrap();
    let arr = new_array(&top, (1 << 20) + 32 * 16384);
    assert_eq!(arr.geo.level, Level::Raid0);
    let cap = arr.capacity() as usize;
    assert_eq!(cap, 2 * 2 * 32 * 16384 / 65536 * 65536);
    let mut rng = Rng(5);
    let mut data = vec![0u8; cap];
    rng.fill(&mut data);
    arr.write_at(&data, 0).unwrap();
    arr.close().unwrap();
    drop(arr);
    let all: Vec<PathBuf> = a.iter().chain(&b).cloned().collect();
    // Listed in any order, assembled from the leaves' superblocks.
    let mut shuffled = all.clone();
    shuffled.reverse();
    let arr = assemble(&shuffled, &AssembleOptions::default()).unwrap();
    check_all(&arr, &data, "nested reassembled");
    drop(arr);
    // One member of each RAID 5 missing: still readable.
    let partial: Vec<PathBuf> = vec![a[0].clone(), a[2].clone(), b[1].clone(), b[2].clone()];
    let arr = assemble(&partial, &AssembleOptions::default()).unwrap();
    check_all(&arr, &data, "nested degraded");
    let st = manage::status(&all).unwrap();
    assert_eq!(st.children.len(), 2);
    drop(arr);
    // fail inside the running process (what a served array's control socket does) reaches
    // the leaf array holding the member, and refuses a second failure in that leaf.
    let arr = assemble(&all, &AssembleOptions::default()).unwrap();
    let msg = manage::fail_running(&arr, &b[1], false).unwrap();
    assert!(msg.contains("slot 1"), "{msg}");
    let e = manage::fail_running(&arr, &b[2], false).unwrap_err();
    assert!(e.is_usage() && e.message().contains("survives"), "{e}");
    manage::fail_running(&arr, &a[0], false).unwrap();
    check_all(&arr, &data, "nested with a member of each child failed");
    let e = manage::fail_running(&arr, Path::new("/nonexistent"), false).unwrap_err();
    assert!(e.message().contains("not a member"), "{e}");
    drop(arr);
    let st = manage::status(&all).unwrap();
    assert!(st.children.iter().all(|c| c.degraded), "{st:?}");
    // A foreign member is named in the error.
    let other = paths(dir.path(), 2, "x");
    let _ = new_array(&spec("1", None, 0, &other), 3 << 20);
    let mut mixed = all.clone();
    mixed.push(other[0].clone());
    let e = assemble(&mixed, &AssembleOptions::default()).err().unwrap();
    assert!(e.to_string().contains("foreign") && e.is_usage(), "{e}");
}

/// A RAID 5 (16 KiB chunks) over RAID 1 children, one of each list of `kids` members.
fn raid5_of_mirrors(kids: &[Vec<PathBuf>]) -> CreateSpec {
    let child = |ms: &[PathBuf]| MemberSpec::Array(spec("1", None, 0, ms));
    CreateSpec::new(
        "5",
        None,
        Some(16384),
        kids.iter().map(|k| child(k)).collect(),
    )
    .unwrap()
}

/// A child out of service is not among `status`'s children; the ones after it are still
/// named by their slot, as the state line ("slot 0 missing") names the missing one.
#[test]
fn status_names_children_by_slot_when_one_is_missing() {
    let dir = scratch("raidlab-array-test");
    let kids: Vec<Vec<PathBuf>> = ["a", "b", "c"]
        .iter()
        .map(|t| paths(dir.path(), 2, t))
        .collect();
    let top = raid5_of_mirrors(&kids);
    new_array(&top, (1 << 20) + 8 * 16384).close().unwrap();
    // Child 0's members left out: it is missing.
    let rest: Vec<PathBuf> = kids[1..].iter().flatten().cloned().collect();
    let st = manage::status(&rest).unwrap();
    assert_eq!(st.not_active, vec![(0, "missing".to_string())], "{st:?}");
    let roles: Vec<Option<u32>> = st.children.iter().map(|c| c.role).collect();
    assert_eq!(roles, vec![Some(1), Some(2)], "{st:?}");
    let text = manage::status_text(&st, 0);
    assert!(
        text.contains("child 1:") && text.contains("child 2:") && !text.contains("child 0:"),
        "{text}"
    );
    let b0 = kids[1][0].display().to_string();
    let at_b0 = text.find(&b0).unwrap();
    assert!(text.find("child 1:").unwrap() < at_b0, "{text}");
    assert!(at_b0 < text.find("child 2:").unwrap(), "{text}");
}

#[test]
fn dirty_and_degraded_refuses_without_force() {
    let dir = scratch("raidlab-array-test");
    let ms = paths(dir.path(), 4, "d");
    let arr = new_array(&spec("5", None, 65536, &ms), 3 << 20);
    arr.write_at(&[1u8; 8192], 0).unwrap();
    // Simulate a crash: never close, just forget the array (superblocks say dirty).
    std::mem::forget(arr);
    let degraded = &ms[..3];
    let e = assemble(degraded, &AssembleOptions::default())
        .err()
        .unwrap();
    assert!(
        e.is_usage() && e.to_string().contains("write hole") && e.to_string().contains("--force"),
        "{e}"
    );
    let arr = assemble(
        degraded,
        &AssembleOptions {
            force: true,
            resync: true,
            verbose: false,
            all_members: false,
        },
    )
    .unwrap();
    let mut got = [0u8; 8192];
    arr.read_at(&mut got, 0).unwrap();
    assert_eq!(got, [1u8; 8192]);
}

/// A redundant array over arrays (RAID 5 over three RAID 1s) has no bitmap of its own: after an
/// unclean stop its children's bitmaps say which of its stripes to resync — those, not all.
#[test]
fn nested_resync_after_a_crash_follows_the_childrens_bitmaps() {
    use std::os::unix::fs::FileExt;
    let dir = scratch("raidlab-array-test");
    let kids: Vec<Vec<PathBuf>> = (0..3)
        .map(|i| paths(dir.path(), 2, &format!("k{i}-")))
        .collect();
    let top = raid5_of_mirrors(&kids);
    let arr = new_array(&top, (1 << 20) + (2 << 20));
    let sd = arr.geo.stripe_data_bytes();
    assert_eq!(sd, 2 * 16384);
    // One small write in stripe 1, then a crash: nothing is closed.
    let data = vec![0x6bu8; 4096];
    arr.write_at(&data, sd + 8192).unwrap();
    let geo = arr.geo.clone();
    std::mem::forget(arr);
    // The crash hit stripe 1's parity write: it did not land, and the parity child's bitmap
    // still marks its first region (set before the write, cleared only after it). Stripe 100,
    // far from any write, has bad parity too: what a full resync would also rewrite.
    let all: Vec<PathBuf> = kids.iter().flatten().cloned().collect();
    let found = raidlab_array::assemble::read_members(&all).unwrap();
    let data_offset = found[0].sb.data_offset;
    for row in [1u64, 100] {
        let p = geo.stripe_layout(row).unwrap().p.unwrap() as usize;
        for leaf in &kids[p] {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(leaf)
                .unwrap();
            f.write_all_at(&[0xa5; 4096], data_offset + row * 16384 + 4096)
                .unwrap();
            if row == 1 {
                let at = raidlab_array::superblock::BITMAP_OFFSET;
                let mut bits = [0u8; 1];
                f.read_exact_at(&mut bits, at).unwrap();
                f.write_all_at(&[bits[0] | 1], at).unwrap();
            }
        }
    }
    let with_resync = AssembleOptions {
        force: false,
        resync: true,
        verbose: false,
        all_members: false,
    };
    let arr = assemble(&all, &with_resync).unwrap();
    let mut got = vec![0u8; 4096];
    arr.read_at(&mut got, sd + 8192).unwrap();
    assert_eq!(got, data);
    let reps = manage::scrub_all(&arr, false, &mut |_, _, _| {}).unwrap();
    let (name, top_rep) = reps.last().unwrap();
    assert!(name.starts_with("raid5"), "{name}");
    for (name, r) in &reps[..reps.len() - 1] {
        assert_eq!(r.mismatches, 0, "{name}: mirror copies differ");
    }
    assert_eq!(
        top_rep.located.iter().map(|l| l.0).collect::<Vec<_>>(),
        vec![100],
        "resync must repair the written stripe and only the stripes the children mark"
    );
}
