//! Members left out of a management verb: `fail`, `remove`, `add` and the assignment of spares find
//! the array's other members beside those given and record the change there too, in a
//! nested array within the leaf array changed; they refuse, writing nothing, when a member
//! found holds a newer record than the members given; `remove` by device uuid refuses a
//! spare whose device is found beside them (that one is removed by its path).

use raidlab_array::create::{create, CreateOptions, CreateSpec};
use raidlab_array::manage;
use raidlab_array::member::Member;
use raidlab_array::superblock::Superblock;
use std::path::{Path, PathBuf};

mod common;
use common::{create_array, member_paths, raid5_child, scratch};

fn sb(p: &Path) -> Superblock {
    Member::open(p).unwrap().read_superblock().unwrap().unwrap()
}

/// A member found beside those given with a newer record than theirs (they missed a change):
/// the change would be made on an older record than the array's, so the verb is refused in
/// one line naming that member, and no member is written.
#[test]
fn a_member_found_with_a_newer_record_is_refused_and_nothing_is_written() {
    let dir = scratch("not-given-newer");
    let ms = member_paths(dir.path(), "m", 4);
    create_array("5", &ms, Some(4 << 20), false, false)
        .close()
        .unwrap();
    let old: Vec<Vec<u8>> = ms[..2].iter().map(|p| std::fs::read(p).unwrap()).collect();
    manage::fail(&ms, &ms[3], false).unwrap();
    // m0 and m1 as they were before the failure: older than m2 and m3.
    for (p, bytes) in ms.iter().zip(&old) {
        std::fs::write(p, bytes).unwrap();
    }
    let before: Vec<Vec<u8>> = ms.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let e = manage::fail(&ms[..2], &ms[1], false).unwrap_err();
    let msg = e.to_string();
    assert!(e.is_usage(), "{msg}");
    assert!(
        msg.contains("newer record") && msg.contains("m2") && !msg.contains('\n'),
        "{msg}"
    );
    let e = manage::remove(&ms[..2], &ms[1]).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("newer record"),
        "{e}"
    );
    for (p, b) in ms.iter().zip(&before) {
        assert!(
            std::fs::read(p).unwrap() == *b,
            "{} was written",
            p.display()
        );
    }
}

/// In a nested array (RAID 1 over two RAID 5s) a failure given with part of one child's
/// members reaches that child's other members, and the other child's members, which hold
/// another leaf array's record, are left as they were.
#[test]
fn in_a_nested_array_the_leaf_changed_is_recorded_whole_and_only_it() {
    let dir = scratch("not-given-nested");
    let (c0, c1) = (
        member_paths(dir.path(), "x", 3),
        member_paths(dir.path(), "y", 3),
    );
    let top = CreateSpec::new("1", None, None, vec![raid5_child(&c0), raid5_child(&c1)]).unwrap();
    let opts = CreateOptions {
        size: Some(4 << 20),
        ..Default::default()
    };
    create(&top, &opts).unwrap().close().unwrap();
    let other: Vec<Vec<u8>> = c1.iter().map(|p| std::fs::read(p).unwrap()).collect();
    manage::fail(&c0[..2], &c0[1], false).unwrap();
    let events: Vec<u64> = c0.iter().map(|p| sb(p).events).collect();
    assert!(events.iter().all(|&e| e == events[0]), "{events:?}");
    for (p, b) in c1.iter().zip(&other) {
        assert!(
            std::fs::read(p).unwrap() == *b,
            "{} was written",
            p.display()
        );
    }
    let all: Vec<PathBuf> = c0.iter().chain(&c1).cloned().collect();
    let st = manage::status(&all).unwrap();
    let states: Vec<&str> = st.children[0]
        .member_status
        .iter()
        .map(|m| m.state.as_str())
        .collect();
    assert_eq!(states, ["active", "faulty", "active"], "{st:?}");
    manage::open(&all, false).unwrap().close().unwrap();
}

/// `remove` by device uuid is for a spare whose device is gone: one found beside the members
/// given is refused, naming its path, and stays recorded.
#[test]
fn remove_by_uuid_refuses_a_spare_found_beside_the_members() {
    let dir = scratch("not-given-spare");
    let ms = member_paths(dir.path(), "m", 3);
    create_array("5", &ms, Some(4 << 20), false, false)
        .close()
        .unwrap();
    let s = dir.path().join("s");
    std::fs::File::create(&s)
        .unwrap()
        .set_len(std::fs::metadata(&ms[0]).unwrap().len())
        .unwrap();
    manage::add(&ms, &s, false).unwrap();
    let e = manage::remove_spare_record(&ms, sb(&s).dev_uuid).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains(&s.display().to_string()),
        "{e}"
    );
    assert_eq!(sb(&ms[0]).spares, vec![sb(&s).dev_uuid]);
}

/// A copy of a member given, beside it and as current as it: the member is the one given, so
/// the copy is not written.
#[test]
fn a_copy_of_a_member_given_is_not_written() {
    let dir = scratch("not-given-copy");
    let ms = member_paths(dir.path(), "m", 3);
    create_array("5", &ms, Some(4 << 20), false, false)
        .close()
        .unwrap();
    let copy = dir.path().join("m2.copy");
    std::fs::copy(&ms[2], &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    manage::fail(&ms, &ms[1], false).unwrap();
    assert!(
        std::fs::read(&copy).unwrap() == before,
        "the copy was written"
    );
    assert!(
        std::fs::read(&ms[2]).unwrap() != before,
        "m2 was not written"
    );
}

/// A spare added with only some of the members given is recorded by the others too, found
/// beside them: each member's record names it, and an assembly from the members not given
/// knows it (status lists its path, not "not known").
#[test]
fn a_spare_added_with_some_members_given_is_recorded_by_all() {
    let dir = scratch("not-given-add");
    let ms = member_paths(dir.path(), "m", 4);
    create_array("5", &ms, Some(4 << 20), false, false)
        .close()
        .unwrap();
    let s = dir.path().join("s");
    std::fs::File::create(&s)
        .unwrap()
        .set_len(std::fs::metadata(&ms[0]).unwrap().len())
        .unwrap();
    manage::add(&ms[..2], &s, false).unwrap();
    let dev = sb(&s).dev_uuid;
    for p in &ms {
        assert_eq!(sb(p).spares, vec![dev], "{}", p.display());
    }
    // The members not given, read alone, know the spare as the newest record.
    let rest: Vec<PathBuf> = ms[2..].iter().cloned().chain([s.clone()]).collect();
    let st = manage::status(&rest).unwrap();
    let text = manage::status_text(&st, 0);
    assert!(!text.contains("not known"), "{text}");
    assert!(text.contains(&s.display().to_string()), "{text}");
}
