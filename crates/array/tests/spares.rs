//! Spares as mdadm numbers and uses them: the members' superblocks record every spare added,
//! in the order added, so `status` given only the array's members still shows each spare
//! (saying its path is not known); spares are numbered after the slots in that order, and a
//! rebuild gives the lowest slot out of service to the spare added first, whatever the order
//! of the paths given.

use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
use raidlab_array::manage::{self, ArrayStatus};
use raidlab_array::member::Member;
use raidlab_array::superblock::uuid_string;
use std::path::{Path, PathBuf};

mod common;
use common::{create_array, member_paths, raid5_child, scratch};

/// A RAID 0 over two RAID 5 children of three 4 MiB member files each (`x0..x2`,
/// `y0..y2` in `dir`), created; the children's members.
fn raid0_of_two_raid5s(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (c0, c1) = (member_paths(dir, "x", 3), member_paths(dir, "y", 3));
    let top = CreateSpec::new(
        "0",
        None,
        Some(65536),
        vec![raid5_child(&c0), raid5_child(&c1)],
    )
    .unwrap();
    let opts = CreateOptions {
        size: Some(4 << 20),
        ..Default::default()
    };
    create(&top, &opts).unwrap().close().unwrap();
    (c0, c1)
}

/// A fresh file as long as `like`, to be added as a spare.
fn blank(p: &Path, like: &Path) {
    let len = std::fs::metadata(like).unwrap().len();
    std::fs::File::create(p).unwrap().set_len(len).unwrap();
}

fn device_uuid(p: &Path) -> String {
    let sb = Member::open(p).unwrap().read_superblock().unwrap().unwrap();
    uuid_string(&sb.dev_uuid)
}

fn with(ms: &[PathBuf], more: &[&PathBuf]) -> Vec<PathBuf> {
    ms.iter().chain(more.iter().copied()).cloned().collect()
}

/// (number, role, state) of the member at `p` in a leaf array's status.
fn row(st: &ArrayStatus, p: &Path) -> (Option<u32>, Option<u32>, String) {
    let m = st
        .member_status
        .iter()
        .find(|m| Path::new(&m.path) == p)
        .unwrap_or_else(|| panic!("{} not in the status: {st:?}", p.display()));
    (m.number, m.role, m.state.clone())
}

/// Spares added with `add` are recorded by the members: the status of the members alone
/// lists each one (number and device, path not known, one line of text each); given, a spare
/// shows as itself with its number whatever the order of the paths; removed, it is gone.
#[test]
fn status_of_the_members_alone_shows_every_spare_added() {
    let dir = scratch("spares-status");
    let ms = member_paths(dir.path(), "m", 4);
    create_array("5", &ms, Some(4 << 20), false, false)
        .close()
        .unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for s in [&a, &b] {
        blank(s, &ms[0]);
        assert!(manage::add(&ms, s, false).unwrap().contains("spare"));
    }

    let st = manage::status(&ms).unwrap();
    let not_given: Vec<(u32, String)> = st
        .spares_not_given
        .iter()
        .map(|g| (g.number, g.device_uuid.clone()))
        .collect();
    assert_eq!(
        not_given,
        vec![(4, device_uuid(&a)), (5, device_uuid(&b))],
        "{st:?}"
    );
    let text = manage::status_text(&st, 0);
    for (_, u) in &not_given {
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(u.as_str())).collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert!(
            lines[0].contains("spare") && lines[0].contains("path not known"),
            "{text}"
        );
    }
    // The slots' members keep their numbers.
    for (i, m) in ms.iter().enumerate() {
        assert_eq!(
            row(&st, m),
            (Some(i as u32), Some(i as u32), "active".into())
        );
    }

    // The second spare given (before the members, even): number 5; the first, not given, 4.
    let st = manage::status(&with(
        std::slice::from_ref(&b),
        &ms.iter().collect::<Vec<_>>(),
    ))
    .unwrap();
    assert_eq!(row(&st, &b), (Some(5), None, "spare".into()));
    assert_eq!(st.spares_not_given.len(), 1, "{st:?}");
    assert_eq!(st.spares_not_given[0].number, 4);
    let text = manage::status_text(&st, 0);
    let at = |what: &str| text.find(what).unwrap_or_else(|| panic!("{text}"));
    assert!(
        at("path not known") < at(b.to_str().unwrap()),
        "spare 4 is listed before spare 5: {text}"
    );
    let st = manage::status(&with(&ms, &[&b, &a])).unwrap();
    assert!(st.spares_not_given.is_empty(), "{st:?}");
    assert_eq!(row(&st, &a), (Some(4), None, "spare".into()));
    assert_eq!(row(&st, &b), (Some(5), None, "spare".into()));

    // Removed, the first spare is forgotten: the other one is number 4 now.
    manage::remove(&with(&ms, &[&a]), &a).unwrap();
    let st = manage::status(&ms).unwrap();
    assert_eq!(st.spares_not_given.len(), 1, "{st:?}");
    assert_eq!(st.spares_not_given[0].number, 4);
    assert_eq!(st.spares_not_given[0].device_uuid, device_uuid(&b));
}

/// In a nested array a spare belongs to the leaf it was added to: that child's status lists
/// it when only the leaves' members are given.
#[test]
fn a_spare_of_a_child_array_shows_in_that_child() {
    let dir = scratch("spares-nested");
    let (c0, c1) = raid0_of_two_raid5s(dir.path());
    let all = with(&c0, &c1.iter().collect::<Vec<_>>());
    let s = dir.path().join("s");
    blank(&s, &c0[0]);
    // Given only the second child's members, the spare joins that child.
    manage::add(&c1, &s, false).unwrap();
    let st = manage::status(&all).unwrap();
    assert!(st.children[0].spares_not_given.is_empty(), "{st:?}");
    let g = &st.children[1].spares_not_given;
    assert_eq!(g.len(), 1, "{st:?}");
    assert_eq!(
        (g[0].number, g[0].device_uuid.clone()),
        (3, device_uuid(&s))
    );
    let st = manage::status(&with(&all, &[&s])).unwrap();
    assert_eq!(row(&st.children[1], &s), (Some(3), None, "spare".into()));
    assert!(st.children[1].spares_not_given.is_empty(), "{st:?}");
}

/// A raid0 or linear array has no redundancy: a spare could never be used, so add refuses
/// it in one line and the members record nothing.
#[test]
fn a_spare_for_an_array_without_redundancy_is_refused() {
    let dir = scratch("spares-none");
    for level in ["0", "linear"] {
        let ms = member_paths(dir.path(), &format!("r{level}"), 2);
        let spec = CreateSpec::new(
            level,
            None,
            (level == "0").then_some(65536),
            ms.iter().cloned().map(MemberSpec::Path).collect(),
        )
        .unwrap();
        let opts = CreateOptions {
            size: Some(4 << 20),
            ..Default::default()
        };
        create(&spec, &opts).unwrap().close().unwrap();
        let s = dir.path().join(format!("s{level}"));
        blank(&s, &ms[0]);
        let e = manage::add(&ms, &s, false).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("no redundancy"),
            "{e}"
        );
        let st = manage::status(&ms).unwrap();
        assert!(st.spares_not_given.is_empty(), "{st:?}");
        // fail says what failing a member of it does, not "1 members … survives 0".
        let e = manage::fail(&ms, &ms[1], false).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("no redundancy") && msg.contains("--force"),
            "{msg}"
        );
        assert!(!msg.contains("1 members"), "{msg}");
    }
}

/// Two children degraded, spares added one after another with the array's members given
/// (not the spares added before): the first spare joins the first child, the next the
/// other child, since the first already has a spare for its slot out of service.
#[test]
fn spares_added_in_turn_fill_each_degraded_child() {
    let dir = scratch("spares-turn");
    let (c0, c1) = raid0_of_two_raid5s(dir.path());
    let all = with(&c0, &c1.iter().collect::<Vec<_>>());
    manage::fail(&all, &c0[1], false).unwrap();
    manage::fail(&all, &c1[2], false).unwrap();
    let (s, t) = (dir.path().join("s"), dir.path().join("t"));
    for sp in [&s, &t] {
        blank(sp, &c0[0]);
        manage::add(&all, sp, false).unwrap();
    }
    let st = manage::status(&with(&all, &[&s, &t])).unwrap();
    assert_eq!(row(&st.children[0], &s), (Some(3), None, "spare".into()));
    assert_eq!(row(&st.children[1], &t), (Some(3), None, "spare".into()));
}

/// md's order: with two slots out of service, the spare added first takes the lower slot,
/// the one added next the higher, whichever order the paths are given in; a spare left over
/// keeps its place among the spares, numbered right after the slots.
#[test]
fn spares_take_the_lowest_slots_out_of_service_in_the_order_added() {
    for reversed in [false, true] {
        let dir = scratch("spares-order");
        let ms = member_paths(dir.path(), "m", 6);
        create_array("6", &ms, Some(4 << 20), false, false)
            .close()
            .unwrap();
        manage::fail(&ms, &ms[4], false).unwrap();
        manage::fail(&ms, &ms[1], false).unwrap();
        let spares: Vec<PathBuf> = ["first", "second", "third"]
            .iter()
            .map(|n| dir.path().join(n))
            .collect();
        for s in &spares {
            blank(s, &ms[0]);
            manage::add(&ms, s, false).unwrap();
        }
        let mut given: Vec<&PathBuf> = spares.iter().collect();
        if reversed {
            given.reverse();
        }
        let list = with(&ms, &given);
        let st = manage::status(&list).unwrap();
        for (k, s) in spares.iter().enumerate() {
            assert_eq!(row(&st, s), (Some(6 + k as u32), None, "spare".into()));
        }

        assert_eq!(manage::assign_spares(&list).unwrap(), 2);
        let st = manage::status(&list).unwrap();
        let what = if reversed {
            "paths reversed"
        } else {
            "paths in order"
        };
        assert_eq!(
            row(&st, &spares[0]),
            (Some(1), Some(1), "rebuilding".into()),
            "{what}: {st:?}"
        );
        assert_eq!(
            row(&st, &spares[1]),
            (Some(4), Some(4), "rebuilding".into()),
            "{what}: {st:?}"
        );
        assert_eq!(
            row(&st, &spares[2]),
            (Some(6), None, "spare".into()),
            "{what}: {st:?}"
        );
        assert!(st.spares_not_given.is_empty(), "{what}: {st:?}");
        // Rebuilt, then the members alone: the spare left over is still recorded.
        let arr = manage::open(&list, false).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        assert!(manage::rebuild_all(&arr, &stop, &mut |_, _, _| {}).unwrap());
        arr.close().unwrap();
        drop(arr);
        let now: Vec<PathBuf> = [0, 2, 3, 5]
            .iter()
            .map(|&i| ms[i].clone())
            .chain(spares[..2].iter().cloned())
            .collect();
        let st = manage::status(&now).unwrap();
        assert!(!st.degraded, "{what}: {st:?}");
        assert_eq!(st.spares_not_given.len(), 1, "{what}: {st:?}");
        assert_eq!(st.spares_not_given[0].number, 6);
        assert_eq!(st.spares_not_given[0].device_uuid, device_uuid(&spares[2]));
    }
}

/// `add` given only some of the members, the others in another directory (so not found beside
/// them): the others miss the record of the new spare but not anything about the data, so
/// none of them is out of date — the array starts whole, and status with every path given
/// knows the spare from the members that recorded it.
#[test]
fn a_spare_added_with_only_some_members_given_leaves_none_out_of_date() {
    let dir = scratch("spares-part");
    let (here, there) = (dir.path().join("here"), dir.path().join("there"));
    std::fs::create_dir(&here).unwrap();
    std::fs::create_dir(&there).unwrap();
    let ms: Vec<PathBuf> = std::iter::once(here.join("m0"))
        .chain(member_paths(&there, "m", 4).into_iter().skip(1))
        .collect();
    create_array("5", &ms, Some(4 << 20), false, false)
        .close()
        .unwrap();
    let s = dir.path().join("s");
    blank(&s, &ms[0]);
    manage::add(&ms[..1], &s, false).unwrap();
    let st = manage::status(&ms[1..]).unwrap();
    assert!(st.spares_not_given.is_empty(), "not recorded there: {st:?}");
    let st = manage::status(&ms).unwrap();
    assert!(!st.degraded, "{st:?}");
    for m in &st.member_status {
        assert_eq!(m.state, "active", "{st:?}");
    }
    assert_eq!(st.spares_not_given.len(), 1, "{st:?}");
    assert_eq!(st.spares_not_given[0].device_uuid, device_uuid(&s));
    let arr = manage::open(&with(&ms, &[&s]), false).unwrap();
    assert_eq!(arr.degraded_count(), 0);
    arr.close().unwrap();
}

/// A spare whose device is gone cannot be named by a path: `remove` takes the device uuid
/// `status` lists for it, and the members forget it. A uuid the record does not hold, or one
/// of a device given, is refused in one line and changes nothing.
#[test]
fn a_spare_whose_device_is_gone_is_removed_by_its_uuid() {
    use raidlab_array::superblock::parse_uuid;
    let dir = scratch("spares-gone");
    let ms = member_paths(dir.path(), "m", 3);
    create_array("5", &ms, Some(4 << 20), false, false)
        .close()
        .unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for s in [&a, &b] {
        blank(s, &ms[0]);
        manage::add(&ms, s, false).unwrap();
    }
    let (ua, ub) = (device_uuid(&a), device_uuid(&b));
    std::fs::remove_file(&a).unwrap();
    assert_eq!(parse_uuid(&ua).map(|u| uuid_string(&u)), Some(ua.clone()));
    assert_eq!(parse_uuid("not-a-uuid"), None);

    // A uuid of a device given: by its path, not this way.
    let e = manage::remove_spare_record(&with(&ms, &[&b]), parse_uuid(&ub).unwrap()).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("remove it by that path"),
        "{e}"
    );
    // A uuid nobody records.
    let e = manage::remove_spare_record(&ms, [7; 16]).unwrap_err();
    assert!(e.is_usage() && !e.to_string().contains('\n'), "{e}");
    assert_eq!(manage::status(&ms).unwrap().spares_not_given.len(), 2);

    let msg = manage::remove_spare_record(&ms, parse_uuid(&ua).unwrap()).unwrap();
    assert!(msg.contains(&ua), "{msg}");
    let st = manage::status(&ms).unwrap();
    let left: Vec<(u32, String)> = st
        .spares_not_given
        .iter()
        .map(|g| (g.number, g.device_uuid.clone()))
        .collect();
    assert_eq!(left, vec![(3, ub)], "{st:?}");
}
