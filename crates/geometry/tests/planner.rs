//! The planner's choices on small arrays, checked against md's rules by counting.

mod common;

use raidlab_geometry::{
    plan, plan_extents, plan_volume, plan_with, Geometry, IoKind, Layout, Level, PlanError,
    PlanOptions, Strategy, Volume,
};
use std::collections::BTreeMap;

const K: u64 = 64 * 1024;

fn raid(level: Level, members: u32) -> Geometry {
    Geometry::new(level, Layout::None, K, members, 64 * K).unwrap()
}

fn strategies(p: &raidlab_geometry::Plan) -> Vec<Strategy> {
    p.steps.iter().map(|s| s.strategy).collect()
}

#[test]
fn raid5_small_write_is_read_modify_write() {
    let g = raid(Level::Raid5, 5); // 4 + 1
    let p = plan(&g, IoKind::Write, 4096, 4096, &[]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReadModifyWrite]);
    let c = p.cost();
    assert_eq!((c.member_reads, c.member_writes), (2, 2));
    assert_eq!((c.read_bytes, c.write_bytes), (8192, 8192));
    // Old data + old P + new data in, new P out.
    assert_eq!((c.parity_in_bytes, c.parity_out_bytes), (3 * 4096, 4096));
    // The pre-reads hit the data member and the parity member of stripe 0.
    let sl = g.stripe_layout(0).unwrap();
    let mut read_members: Vec<u32> = p.steps[0].reads.iter().map(|r| r.member).collect();
    read_members.sort();
    let mut want = vec![sl.data[0], sl.p.unwrap()];
    want.sort();
    assert_eq!(read_members, want);
}

#[test]
fn raid5_write_of_most_of_a_stripe_is_reconstruct_write() {
    let g = raid(Level::Raid5, 5);
    // Three of four chunks: rmw would read 4, rcw reads 1.
    let p = plan(&g, IoKind::Write, 0, 3 * K, &[]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReconstructWrite]);
    assert_eq!((p.cost().member_reads, p.cost().member_writes), (1, 4));
    // Two of four: rmw 3 reads vs rcw 2 → rcw.
    let p = plan(&g, IoKind::Write, 0, 2 * K, &[]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReconstructWrite]);
    assert_eq!(p.cost().member_reads, 2);
    // Three-member RAID 5: one chunk written, rmw 2 reads vs rcw 1 → rcw.
    let g3 = raid(Level::Raid5, 3);
    let p = plan(&g3, IoKind::Write, 0, K, &[]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReconstructWrite]);
}

#[test]
fn rmw_and_rcw_ties_go_to_reconstruct_write() {
    // 5 + 1, two and a half chunks: rows with 3 chunks written: rmw 4 vs rcw 2 → rcw; rows
    // with 2 written: rmw 3 vs rcw 3, a tie → rcw.
    let g = raid(Level::Raid5, 6);
    let p = plan(&g, IoKind::Write, 0, 2 * K + K / 2, &[]).unwrap();
    assert_eq!(
        strategies(&p),
        vec![Strategy::ReconstructWrite, Strategy::ReconstructWrite]
    );
    // 6 + 1: the same write mixes strategies per row range: 4 vs 3 → rcw, then 3 vs 4 → rmw.
    let g = raid(Level::Raid5, 7);
    let p = plan(&g, IoKind::Write, 0, 2 * K + K / 2, &[]).unwrap();
    assert_eq!(
        strategies(&p),
        vec![Strategy::ReconstructWrite, Strategy::ReadModifyWrite]
    );
    assert_eq!(
        p.steps[0].reads.iter().map(|r| r.len).sum::<u64>(),
        3 * K / 2
    );
    // RAID 6 4 + 2, one chunk: rmw 1 + 2 = 3 vs rcw 3: tie → rcw, 3 reads + 3 writes.
    let g6 = raid(Level::Raid6, 6);
    let p = plan(&g6, IoKind::Write, 0, 4096, &[]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReconstructWrite]);
    assert_eq!((p.cost().member_reads, p.cost().member_writes), (3, 3));
}

#[test]
fn raid6_small_write_updates_p_and_q_from_deltas() {
    let g = raid(Level::Raid6, 8); // 6 + 2: rmw 3 reads < rcw 5
    let p = plan(&g, IoKind::Write, K + 512, 4096, &[]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReadModifyWrite]);
    assert_eq!((p.cost().member_reads, p.cost().member_writes), (3, 3));
}

#[test]
fn full_stripe_write_has_no_prereads() {
    let g = raid(Level::Raid5, 5);
    let p = plan(&g, IoKind::Write, 4 * K, 4 * K, &[]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::FullStripeWrite]);
    assert_eq!(
        (
            p.cost().member_reads,
            p.cost().member_writes,
            p.cost().prereads_steps
        ),
        (0, 5, 0)
    );
    let g6 = raid(Level::Raid6, 6);
    let p = plan(&g6, IoKind::Write, 0, 8 * K, &[]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::FullStripeWrite; 2]);
    assert_eq!((p.cost().member_reads, p.cost().member_writes), (0, 12));
}

#[test]
fn extents_in_one_stripe_merge_like_md_stripe_cache() {
    let g = raid(Level::Raid5, 5);
    let opts = PlanOptions::default();
    // Chunks 0-1 and 2-3 of stripe 0, given as two extents: one full-stripe write.
    let p = plan_extents(&g, IoKind::Write, &[(2 * K, 2 * K), (0, 2 * K)], &[], &opts).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::FullStripeWrite]);
    assert_eq!((p.cost().member_reads, p.cost().member_writes), (0, 5));
    assert_eq!(p.len, 4 * K);
    // The second extent's bytes start at 2K in the caller's buffer.
    let w0 = p.steps[0]
        .writes
        .iter()
        .find(|w| w.member == g.stripe_layout(0).unwrap().data[0])
        .unwrap();
    assert_eq!(w0.block, raidlab_geometry::BlockRef::User { at: 2 * K });
    let e = plan_extents(&g, IoKind::Write, &[(0, 10), (5, 10)], &[], &opts).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("overlap"), "{e}");
}

#[test]
fn degraded_read_reads_every_survivor_of_the_stripe() {
    let g = raid(Level::Raid5, 5);
    let sl = g.stripe_layout(0).unwrap();
    let lost = sl.data[1];
    let p = plan(&g, IoKind::Read, K, K, &[lost]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::DegradedRead]);
    let mut read: Vec<u32> = p.steps[0].reads.iter().map(|r| r.member).collect();
    read.sort();
    let want: Vec<u32> = (0..5).filter(|&m| m != lost).collect();
    assert_eq!(read, want);
    // Reading a healthy chunk of the same stripe is direct.
    let p = plan(&g, IoKind::Read, 0, K, &[lost]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::Direct]);
    assert_eq!(p.cost().member_reads, 1);
    // A read spanning both: healthy part direct, lost part rebuilt, no member read twice for
    // the same rows.
    let p = plan(&g, IoKind::Read, K / 2, K, &[lost]).unwrap();
    assert_eq!(
        strategies(&p),
        vec![Strategy::Direct, Strategy::DegradedRead]
    );
}

#[test]
fn degraded_writes_never_touch_failed_members() {
    let g = raid(Level::Raid5, 5);
    let sl = g.stripe_layout(0).unwrap();
    // Writing the failed member's chunk: reconstruct-write from the others, parity only.
    let p = plan(&g, IoKind::Write, 0, 4096, &[sl.data[0]]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReconstructWrite]);
    assert_eq!((p.cost().member_reads, p.cost().member_writes), (3, 1));
    // Parity member failed: md still reconstruct-writes (rmw would need the failed P); only
    // the data is written.
    let p = plan(&g, IoKind::Write, 0, 4096, &[sl.p.unwrap()]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReconstructWrite]);
    assert_eq!((p.cost().member_reads, p.cost().member_writes), (3, 1));
    // RAID 6 (6 + 2) with Q failed: md's rmw count includes the failed Q, so even a small
    // write reconstruct-writes (5 reads) and updates data and P.
    let g8 = raid(Level::Raid6, 8);
    let q = g8.stripe_layout(0).unwrap().q.unwrap();
    let p = plan(&g8, IoKind::Write, 0, 4096, &[q]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::ReconstructWrite]);
    assert_eq!((p.cost().member_reads, p.cost().member_writes), (5, 2));
    // RAID 6 with the written member and another data member failed: rebuild first.
    let g6 = raid(Level::Raid6, 6);
    let sl6 = g6.stripe_layout(0).unwrap();
    let p = plan(&g6, IoKind::Write, 0, 4096, &[sl6.data[0], sl6.data[1]]).unwrap();
    assert_eq!(strategies(&p), vec![Strategy::DegradedWrite]);
    assert!(p
        .steps
        .iter()
        .flat_map(|s| s.writes.iter().chain(&s.reads))
        .all(|io| io.member != sl6.data[0] && io.member != sl6.data[1]));
}

#[test]
fn mirror_reads_spread_over_copies_and_writes_hit_all() {
    let count = |p: &raidlab_geometry::Plan| {
        let mut m = BTreeMap::new();
        for s in &p.steps {
            for r in &s.reads {
                *m.entry(r.member).or_insert(0) += r.len;
            }
        }
        m
    };
    let n2 = Geometry::new(
        Level::Raid10,
        Layout::Raid10 {
            near: 2,
            far: 1,
            offset: false,
        },
        K,
        4,
        64 * K,
    )
    .unwrap();
    let p = plan(&n2, IoKind::Read, 0, 8 * K, &[]).unwrap();
    assert_eq!(
        count(&p),
        BTreeMap::from([(0, 2 * K), (1, 2 * K), (2, 2 * K), (3, 2 * K)])
    );
    assert!(strategies(&p).iter().all(|&s| s == Strategy::MirrorRead));
    let r1 = raid(Level::Raid1, 2);
    let p = plan(&r1, IoKind::Read, 0, 4 * K, &[]).unwrap();
    assert_eq!(count(&p), BTreeMap::from([(0, 2 * K), (1, 2 * K)]));
    let p = plan_with(
        &r1,
        IoKind::Read,
        0,
        K,
        &[],
        &PlanOptions {
            mirror_bias: 1,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(p.steps[0].reads[0].member, 1);
    // A load hint steers reads to the idlest copy; ties keep the plain rule.
    let busy = [5u64, 1, 0, 9];
    let hint = PlanOptions {
        member_load: Some(&busy),
        ..PlanOptions::default()
    };
    let p = plan_with(&n2, IoKind::Read, 0, 2 * K, &[], &hint).unwrap();
    assert_eq!(
        p.steps
            .iter()
            .map(|s| s.reads[0].member)
            .collect::<Vec<_>>(),
        vec![1, 2]
    );
    let even = [0u64; 4];
    let p = plan_with(
        &n2,
        IoKind::Read,
        0,
        8 * K,
        &[],
        &PlanOptions {
            member_load: Some(&even),
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        count(&p),
        BTreeMap::from([(0, 2 * K), (1, 2 * K), (2, 2 * K), (3, 2 * K)])
    );
    // With a copy failed, everything comes from the survivor.
    let p = plan(&r1, IoKind::Read, 0, 4 * K, &[0]).unwrap();
    assert_eq!(count(&p), BTreeMap::from([(1, 4 * K)]));
    let p = plan(&r1, IoKind::Write, 0, K, &[]).unwrap();
    assert_eq!((p.cost().member_writes, p.cost().write_bytes), (2, 2 * K));
    // Far layout reads the first copies: like RAID 0 over all members.
    let f2 = Geometry::new(
        Level::Raid10,
        Layout::Raid10 {
            near: 1,
            far: 2,
            offset: false,
        },
        K,
        4,
        64 * K,
    )
    .unwrap();
    let p = plan(&f2, IoKind::Read, 0, 4 * K, &[]).unwrap();
    assert_eq!(count(&p), BTreeMap::from([(0, K), (1, K), (2, K), (3, K)]));
    assert!(p
        .steps
        .iter()
        .all(|s| s.reads[0].offset < f2.member_used_bytes() / 2));
}

#[test]
fn errors_say_what_and_which_kind() {
    let g = raid(Level::Raid5, 5);
    let e = plan(&g, IoKind::Read, g.capacity() - 10, 11, &[]).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("capacity"), "{e}");
    let e = plan(&g, IoKind::Read, 0, 1, &[7]).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("member 7"), "{e}");
    let e = plan(&g, IoKind::Read, 0, 1, &[0, 3]).unwrap_err();
    assert!(
        !e.is_usage() && e.to_string().contains("tolerates 1"),
        "{e}"
    );
    assert!(!e.to_string().contains('\n'));
    let r0 = raid(Level::Raid0, 3);
    assert!(matches!(
        plan(&r0, IoKind::Read, 0, 1, &[2]),
        Err(PlanError::TooManyFailures { .. })
    ));
    // RAID 10 n2 on 4: members 0 and 2 hold different copy sets, so the array survives them;
    // 0 and 1 hold both copies of chunk 0.
    let n2 = Geometry::new(
        Level::Raid10,
        Layout::Raid10 {
            near: 2,
            far: 1,
            offset: false,
        },
        K,
        4,
        64 * K,
    )
    .unwrap();
    assert!(plan(&n2, IoKind::Read, 0, n2.capacity(), &[0, 2]).is_ok());
    assert!(plan(&n2, IoKind::Read, 0, 1, &[0, 1]).is_err());
    assert_eq!(plan(&g, IoKind::Write, 5, 0, &[]).unwrap().steps.len(), 0);
}

/// Seed 002: a 4-way RAID 0 with 256 KiB chunks over four 8 + 1 RAID 5 with 64 KiB chunks.
fn seed002() -> Volume {
    let child = Geometry::new(Level::Raid5, Layout::LeftSymmetric, 64 * 1024, 9, 4 << 20).unwrap();
    let top = Geometry::new(Level::Raid0, Layout::None, 256 * 1024, 4, child.capacity()).unwrap();
    Volume::nest(top, child)
}

#[test]
fn raid0_over_raid5_composes_plans_down_to_leaves() {
    let v = seed002();
    v.validate().unwrap();
    assert_eq!(v.leaves(), (0..36).collect::<Vec<_>>());
    // One top stripe (1 MiB): each RAID 5 gets 256 KiB = 4 of its 8 chunks: rcw (4 reads < 5).
    let p = plan_volume(&v, IoKind::Write, 0, 1 << 20, &[]).unwrap();
    let c = p.cost();
    assert_eq!((c.member_reads, c.member_writes), (16, 20));
    assert_eq!(c.write_bytes, (1 << 20) + 4 * 64 * 1024);
    let ios = p.leaf_ios();
    assert_eq!(ios.len(), 36);
    assert!(ios.iter().all(|io| io.leaf < 36));
    // A leaf lost in child 2 (leaves 18..27): still plannable, degraded below.
    assert!(plan_volume(&v, IoKind::Read, 0, 4 << 20, &[20]).is_ok());
    // Two leaves lost in one RAID 5: that child fails, and RAID 0 cannot survive it.
    assert!(matches!(
        plan_volume(&v, IoKind::Read, 0, 1, &[20, 21]),
        Err(PlanError::TooManyFailures { .. })
    ));
    // Two leaves lost in different children: fine.
    assert!(plan_volume(&v, IoKind::Write, 0, 4 << 20, &[0, 35]).is_ok());
}

#[test]
fn nested_volumes_round_trip_with_failures() {
    use common::{execute, pattern, Members};
    let r1 = Geometry::new(Level::Raid1, Layout::None, 4096, 2, 64 * 1024).unwrap();
    let raid10_of_1s = Volume::nest(
        Geometry::new(Level::Raid0, Layout::None, 4096, 3, r1.capacity()).unwrap(),
        r1,
    );
    let r6 = Geometry::new(Level::Raid6, Layout::LeftSymmetric, 4096, 5, 64 * 1024).unwrap();
    let raid60 = Volume::nest(
        Geometry::new(Level::Raid0, Layout::None, 8192, 2, r6.capacity()).unwrap(),
        r6,
    );
    let r5 = Geometry::new(Level::Raid5, Layout::LeftAsymmetric, 4096, 4, 64 * 1024).unwrap();
    let raid51 = Volume::nest(
        Geometry::new(Level::Raid1, Layout::None, 4096, 2, r5.capacity()).unwrap(),
        r5,
    );
    for (v, failed) in [
        (raid10_of_1s, vec![0, 3, 5]),
        (raid60, vec![1, 4, 7]),
        (raid51, vec![0, 1, 6]),
    ] {
        v.validate().unwrap();
        assert!(v.survives(&failed));
        let cap = v.capacity().unwrap();
        let mut members = Members::new(v.leaves().len(), 64 * 1024);
        let mut shadow = vec![0u8; cap as usize];
        for i in 0..40u64 {
            if i == 20 {
                members.failed = failed.clone();
            }
            let off = (i * 7919 * 13) % cap;
            let len = 1 + (i * 104729) % (cap - off).min(40000);
            let mut data = pattern(i, len as usize);
            let p = plan_volume(&v, IoKind::Write, off, len, &members.failed).unwrap();
            execute(&p, &mut members, &mut data);
            shadow[off as usize..(off + len) as usize].copy_from_slice(&data);
        }
        let mut all = vec![0u8; cap as usize];
        execute(
            &plan_volume(&v, IoKind::Read, 0, cap, &members.failed).unwrap(),
            &mut members,
            &mut all,
        );
        assert!(all == shadow);
    }
}

#[test]
fn volumes_are_checked() {
    let child = Geometry::new(Level::Raid5, Layout::None, 4096, 3, 64 * 1024).unwrap();
    // Parent wants more per member than the child array holds.
    let top = Geometry::new(Level::Raid0, Layout::None, 4096, 2, child.capacity() + 4096).unwrap();
    let e = Volume::nest(top, child.clone()).validate().unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("holds"), "{e}");
    // A leaf used twice.
    let top = Geometry::new(Level::Raid1, Layout::None, 4096, 2, child.capacity()).unwrap();
    let twice = Volume::Array {
        geometry: top.clone(),
        children: vec![Volume::Member(0), Volume::Member(0)],
    };
    assert!(twice.validate().is_err());
    // Child count must match.
    let short = Volume::Array {
        geometry: top,
        children: vec![Volume::Member(0)],
    };
    assert!(plan_volume(&short, IoKind::Read, 0, 1, &[]).is_err());
    assert!(plan_volume(&Volume::Member(0), IoKind::Read, 0, 1, &[]).is_err());
}

#[test]
fn unmap_skips_parity_and_unused_space() {
    let g = raid(Level::Raid5, 4);
    let sl = g.stripe_layout(0).unwrap();
    assert_eq!(g.unmap(sl.p.unwrap(), 10), None);
    assert_eq!(g.unmap(sl.data[2], 10), Some(2 * K + 10));
    assert_eq!(g.unmap(0, g.member_used_bytes()), None);
    assert_eq!(g.unmap(9, 0), None);
}

#[test]
fn rebuild_plans_read_survivors_and_write_the_target() {
    let g = raid(Level::Raid6, 6);
    let p = raidlab_geometry::plan_rebuild(&g, 2, 0, 2 * K, &[4]).unwrap();
    assert_eq!(p.steps.len(), 2);
    for s in &p.steps {
        assert_eq!(s.strategy, Strategy::Rebuild);
        assert_eq!(s.writes.len(), 1);
        assert_eq!(s.writes[0].member, 2);
        assert!(s.reads.iter().all(|r| r.member != 2 && r.member != 4));
    }
    // Three lost members of a RAID 6: refused.
    assert!(raidlab_geometry::plan_rebuild(&g, 2, 0, K, &[0, 4]).is_err());
    // RAID 0 cannot rebuild anything.
    assert!(raidlab_geometry::plan_rebuild(&raid(Level::Raid0, 2), 0, 0, K, &[]).is_err());
}

#[test]
fn rebuilding_two_raid6_members_reads_each_survivor_once_per_row() {
    let g = raid(Level::Raid6, 6);
    // Every pair of lost members (two data, data + P, data + Q, P + Q over the rows).
    for a in 0..6 {
        for b in a + 1..6 {
            let both = raidlab_geometry::plan_rebuild_set(&g, &[a, b], 0, 4 * K, &[]).unwrap();
            let apart: u64 = [a, b]
                .iter()
                .map(|&t| {
                    let other = if t == a { b } else { a };
                    raidlab_geometry::plan_rebuild(&g, t, 0, 4 * K, &[other])
                        .unwrap()
                        .cost()
                        .member_reads
                })
                .sum();
            assert_eq!(both.steps.len(), 4);
            for s in &both.steps {
                let mut read: Vec<u32> = s.reads.iter().map(|r| r.member).collect();
                read.sort_unstable();
                let want: Vec<u32> = (0..6).filter(|&m| m != a && m != b).collect();
                assert_eq!(read, want, "row {} of targets {a},{b}", s.stripe);
                let mut written: Vec<u32> = s.writes.iter().map(|w| w.member).collect();
                written.sort_unstable();
                assert_eq!(written, vec![a, b]);
            }
            assert_eq!(both.cost().member_reads, 4 * 4);
            assert_eq!(apart, 2 * 4 * 4, "one target at a time reads the row twice");
        }
    }
    // A 3-way mirror rebuilding two copies reads the third once.
    let m = raid(Level::Raid1, 3);
    let p = raidlab_geometry::plan_rebuild_set(&m, &[0, 2], 0, 2 * K, &[]).unwrap();
    assert_eq!(p.cost().member_reads, 2);
    assert_eq!(p.cost().member_writes, 4);
    assert!(p
        .steps
        .iter()
        .all(|s| s.reads.iter().all(|r| r.member == 1)));
    // More lost than RAID 6 survives, and unknown targets: refused.
    assert!(raidlab_geometry::plan_rebuild_set(&g, &[0, 1], 0, K, &[2]).is_err());
    assert!(raidlab_geometry::plan_rebuild_set(&g, &[0, 9], 0, K, &[]).is_err());
}
