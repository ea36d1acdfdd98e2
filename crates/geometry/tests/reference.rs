//! Property tests: plans executed on an in-memory model of the members give back exactly what
//! was written, healthy and degraded, for every level and layout; beyond the redundancy
//! `plan()` refuses.

mod common;

use common::{execute, pattern, Members};
use proptest::prelude::*;
use raidlab_geometry::{plan_volume, Geometry, IoKind, Layout, Level, PlanError, Volume};

/// Steps may run concurrently: no two steps touch overlapping ranges of one member.
fn steps_are_disjoint(p: &raidlab_geometry::Plan) -> bool {
    let mut ranges: Vec<(u32, u64, u64, usize)> = vec![];
    for (i, s) in p.steps.iter().enumerate() {
        for io in s.reads.iter().chain(&s.writes) {
            ranges.push((io.member, io.offset, io.offset + io.len, i));
        }
    }
    ranges.sort_unstable();
    ranges
        .windows(2)
        .all(|w| w[0].0 != w[1].0 || w[0].2 <= w[1].1 || w[0].3 == w[1].3)
}

fn all_layouts() -> Vec<(Level, Layout)> {
    use Layout::*;
    let mut v = vec![
        (Level::Linear, None),
        (Level::Raid0, None),
        (Level::Raid1, None),
        (Level::Raid4, ParityLast),
    ];
    for l in [
        LeftAsymmetric,
        RightAsymmetric,
        LeftSymmetric,
        RightSymmetric,
        ParityFirst,
        ParityLast,
    ] {
        v.push((Level::Raid5, l));
    }
    for l in [
        LeftAsymmetric,
        RightAsymmetric,
        LeftSymmetric,
        RightSymmetric,
        ParityFirst,
        ParityLast,
        DdfZeroRestart,
        DdfNRestart,
        DdfNContinue,
        LeftAsymmetric6,
        RightAsymmetric6,
        LeftSymmetric6,
        RightSymmetric6,
        ParityFirst6,
    ] {
        v.push((Level::Raid6, l));
    }
    for (near, far, offset) in [
        (2, 1, false),
        (3, 1, false),
        (1, 2, false),
        (1, 2, true),
        (2, 2, false),
        (1, 3, true),
    ] {
        v.push((Level::Raid10, Raid10 { near, far, offset }));
    }
    v
}

fn geometry_strategy() -> impl Strategy<Value = Geometry> {
    (0..all_layouts().len(), 0u32..8, 0u32..4, 1u64..12, 0u64..3).prop_filter_map(
        "md refuses this shape",
        |(i, extra, chunk_shift, chunks, tail)| {
            let (level, layout) = all_layouts()[i];
            let chunk = 512u64 << chunk_shift;
            let members = match level {
                Level::Raid6 => 4 + extra,
                Level::Linear | Level::Raid0 => 1 + extra,
                _ => 2 + extra,
            };
            // Member sizes that are not whole chunks exercise md's rounding down.
            Geometry::new(level, layout, chunk, members, chunks * chunk + tail * 100).ok()
        },
    )
}

/// Pick up to `count` distinct members from a seed.
fn pick_failed(g: &Geometry, seed: u64, count: u32) -> Vec<u32> {
    let mut order: Vec<u32> = (0..g.members).collect();
    let mut x = seed | 1;
    for i in (1..order.len()).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        order.swap(i, (x >> 33) as usize % (i + 1));
    }
    order.truncate(count.min(g.members) as usize);
    order.sort_unstable();
    order
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn map_is_a_bijection_onto_member_slots(g in geometry_strategy()) {
        let cap = g.capacity();
        let step = (g.chunk_bytes / 2).max(1);
        let mut seen = std::collections::HashSet::new();
        let mut logical = 0;
        while logical < cap {
            let locs = g.map(logical);
            prop_assert_eq!(locs.len() as u32, g.copies());
            let mut members: Vec<u32> = locs.iter().map(|l| l.member).collect();
            members.sort_unstable();
            members.dedup();
            prop_assert_eq!(members.len(), locs.len(), "two copies on one member at {}", logical);
            for l in &locs {
                prop_assert!(l.offset < g.member_used_bytes() && l.member < g.members);
                prop_assert!(seen.insert((l.member, l.offset)), "slot {:?} used twice", l);
                prop_assert_eq!(g.unmap(l.member, l.offset), Some(logical));
            }
            logical += step;
        }
        prop_assert!(g.map(cap).is_empty());
        if let Some(sl) = g.stripe_layout(3) {
            let mut all: Vec<u32> = sl.data.iter().copied().chain(sl.p).chain(sl.q).collect();
            all.sort_unstable();
            prop_assert_eq!(all, (0..g.members).collect::<Vec<_>>());
            let mut slots = sl.q_slot.clone();
            slots.sort_unstable();
            slots.dedup();
            prop_assert_eq!(slots.len(), sl.q_slot.len());
            prop_assert!(sl.q_slot.iter().all(|&s| s < sl.syndrome_slots));
        }
        let expected = match g.level {
            Level::Linear => g.members as u64 * g.member_bytes,
            Level::Raid1 => g.member_bytes,
            Level::Raid10 => {
                let Layout::Raid10 { near, far, .. } = g.layout else { unreachable!() };
                (g.member_bytes / g.chunk_bytes / far as u64) * g.members as u64 / near as u64 * g.chunk_bytes
            }
            _ => (g.members - g.level.parity_count()) as u64 * (g.member_bytes / g.chunk_bytes) * g.chunk_bytes,
        };
        prop_assert_eq!(cap, expected);
    }

    /// Random writes healthy, then members fail (within the redundancy), more random writes,
    /// and every read — healthy or degraded — returns exactly the latest data.
    #[test]
    fn plans_round_trip_on_a_byte_model(
        g in geometry_strategy(),
        ops in prop::collection::vec((any::<u64>(), any::<u64>(), any::<bool>()), 1..24),
        fail_seed in any::<u64>(),
        fail_extra in 0u32..2,
        fail_at in 0usize..24,
    ) {
        let vol = Volume::flat(g.clone());
        let cap = g.capacity();
        let mut members = Members::new(g.members as usize, g.member_bytes);
        let mut shadow = vec![0u8; cap as usize];
        let nfail = g.redundancy().min(g.members - 1).saturating_sub(1) + fail_extra;
        let failed = pick_failed(&g, fail_seed, nfail.min(g.redundancy()));
        for (i, &(a, b, is_write)) in ops.iter().enumerate() {
            if i == fail_at {
                members.failed = failed.clone();
            }
            let off = a % cap;
            let len = 1 + b % (cap - off).min(3 * g.stripe_data_bytes().min(cap));
            if is_write {
                let mut data = pattern(a ^ b, len as usize);
                let p = plan_volume(&vol, IoKind::Write, off, len, &members.failed).unwrap();
                prop_assert!(steps_are_disjoint(&p.plan), "steps overlap on a member");
                execute(&p, &mut members, &mut data);
                shadow[off as usize..(off + len) as usize].copy_from_slice(&data);
            }
            let mut got = vec![0xa5u8; len as usize];
            let p = plan_volume(&vol, IoKind::Read, off, len, &members.failed).unwrap();
            prop_assert!(steps_are_disjoint(&p.plan), "steps overlap on a member");
            execute(&p, &mut members, &mut got);
            prop_assert!(got == shadow[off as usize..(off + len) as usize], "read mismatch at {}+{} after op {}", off, len, i);
        }
        // Whole array, degraded if members failed.
        let mut all = vec![0u8; cap as usize];
        let p = plan_volume(&vol, IoKind::Read, 0, cap, &members.failed).unwrap();
        execute(&p, &mut members, &mut all);
        prop_assert!(all == shadow);
        // Every member's worth of failures beyond what it survives: plan() refuses.
        let too_many = pick_failed(&g, fail_seed, g.redundancy() + 1);
        if !g.survives(&too_many) {
            let e = raidlab_geometry::plan(&g, IoKind::Read, 0, 1, &too_many).unwrap_err();
            let is_tmf = matches!(e, PlanError::TooManyFailures { .. });
            prop_assert!(is_tmf);
            prop_assert!(!e.is_usage());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Several disjoint extents planned as one I/O (in any order) read back exactly, healthy
    /// and degraded.
    #[test]
    fn multi_extent_plans_round_trip(
        g in geometry_strategy(),
        batches in prop::collection::vec(prop::collection::vec((any::<u64>(), any::<u64>()), 1..5), 1..8),
        fail_seed in any::<u64>(),
        reverse in any::<bool>(),
    ) {
        let cap = g.capacity();
        let mut members = Members::new(g.members as usize, g.member_bytes);
        members.failed = pick_failed(&g, fail_seed, g.redundancy());
        let opts = raidlab_geometry::PlanOptions::default();
        let mut shadow = vec![0u8; cap as usize];
        for (i, batch) in batches.iter().enumerate() {
            // Disjoint extents: sort random starts, clip each before the next one.
            let mut starts: Vec<(u64, u64)> = batch.iter().map(|&(a, b)| (a % cap, b)).collect();
            starts.sort_unstable();
            starts.dedup_by_key(|e| e.0);
            let mut extents = vec![];
            for (j, &(off, b)) in starts.iter().enumerate() {
                let limit = starts.get(j + 1).map_or(cap, |n| n.0) - off;
                extents.push((off, 1 + b % limit.min(2 * g.stripe_data_bytes())));
            }
            if reverse {
                extents.reverse();
            }
            let total: u64 = extents.iter().map(|e| e.1).sum();
            let mut data = pattern(i as u64 * 7 + fail_seed, total as usize);
            let p = raidlab_geometry::plan_extents(&g, IoKind::Write, &extents, &members.failed, &opts).unwrap();
            execute(&raidlab_geometry::VolumePlan::flat_plan(p), &mut members, &mut data);
            let mut at = 0usize;
            for &(off, len) in &extents {
                shadow[off as usize..(off + len) as usize].copy_from_slice(&data[at..at + len as usize]);
                at += len as usize;
            }
            let mut got = vec![0u8; total as usize];
            let p = raidlab_geometry::plan_extents(&g, IoKind::Read, &extents, &members.failed, &opts).unwrap();
            execute(&raidlab_geometry::VolumePlan::flat_plan(p), &mut members, &mut got);
            prop_assert!(got == data);
        }
        let mut all = vec![0u8; cap as usize];
        let p = plan_volume(&Volume::flat(g.clone()), IoKind::Read, 0, cap, &members.failed).unwrap();
        execute(&p, &mut members, &mut all);
        prop_assert!(all == shadow);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// A wiped member rebuilt from the others (with more members missing, within the
    /// redundancy) gets back exactly its data and parity.
    #[test]
    fn rebuild_restores_a_wiped_member(
        g in geometry_strategy(),
        ops in prop::collection::vec((any::<u64>(), any::<u64>()), 1..12),
        fail_seed in any::<u64>(),
        piece in 1u64..5,
    ) {
        let cap = g.capacity();
        let mut members = Members::new(g.members as usize, g.member_bytes);
        let vol = Volume::flat(g.clone());
        let mut shadow = vec![0u8; cap as usize];
        for &(a, b) in &ops {
            let off = a % cap;
            let len = 1 + b % (cap - off);
            let mut data = pattern(a, len as usize);
            execute(&plan_volume(&vol, IoKind::Write, off, len, &[]).unwrap(), &mut members, &mut data);
            shadow[off as usize..(off + len) as usize].copy_from_slice(&data);
        }
        let failed = pick_failed(&g, fail_seed, g.redundancy().max(1));
        let target = failed[0];
        let others: Vec<u32> = failed[1..].to_vec();
        let original = members.data[target as usize].clone();
        if g.redundancy() == 0 {
            prop_assert!(raidlab_geometry::plan_rebuild(&g, target, 0, 1, &others).is_err());
            return Ok(());
        }
        members.data[target as usize] = pattern(fail_seed, g.member_bytes as usize);
        members.failed = others.clone();
        // Rebuild in a few pieces, as a resumable rebuild would.
        let used = g.member_used_bytes();
        let step = (used / piece).max(1);
        let mut pos = 0;
        while pos < used {
            let l = step.min(used - pos);
            let p = raidlab_geometry::plan_rebuild(&g, target, pos, l, &others).unwrap();
            prop_assert!(p.steps.iter().all(|s| s.reads.iter().all(|r| r.member != target && !others.contains(&r.member))));
            execute(&raidlab_geometry::VolumePlan::flat_plan(p), &mut members, &mut []);
            pos += l;
        }
        let rebuilt = &members.data[target as usize];
        for o in 0..used {
            let holds = g.level.has_parity() || g.unmap(target, o).is_some();
            if holds {
                prop_assert_eq!(rebuilt[o as usize], original[o as usize], "member {} byte {}", target, o);
            }
        }
        let mut all = vec![0u8; cap as usize];
        execute(&plan_volume(&vol, IoKind::Read, 0, cap, &others).unwrap(), &mut members, &mut all);
        prop_assert!(all == shadow);
    }

    #[test]
    fn rebuild_set_restores_every_target_reading_survivors_once(
        g in geometry_strategy(),
        ops in prop::collection::vec((any::<u64>(), any::<u64>()), 1..12),
        fail_seed in any::<u64>(),
        split in any::<u32>(),
        piece in 1u64..5,
    ) {
        prop_assume!(g.redundancy() > 0);
        let cap = g.capacity();
        let mut members = Members::new(g.members as usize, g.member_bytes);
        let vol = Volume::flat(g.clone());
        let mut shadow = vec![0u8; cap as usize];
        for &(a, b) in &ops {
            let off = a % cap;
            let len = 1 + b % (cap - off);
            let mut data = pattern(a, len as usize);
            execute(&plan_volume(&vol, IoKind::Write, off, len, &[]).unwrap(), &mut members, &mut data);
            shadow[off as usize..(off + len) as usize].copy_from_slice(&data);
        }
        let lost = pick_failed(&g, fail_seed, g.redundancy());
        prop_assume!(g.survives(&lost));
        // Some of the lost members are rebuilt together, the rest stay missing.
        let n_targets = 1 + split as usize % lost.len();
        let (targets, others) = (lost[..n_targets].to_vec(), lost[n_targets..].to_vec());
        let originals: Vec<Vec<u8>> = targets.iter().map(|&t| members.data[t as usize].clone()).collect();
        for &t in &targets {
            members.data[t as usize] = pattern(fail_seed ^ t as u64, g.member_bytes as usize);
        }
        members.failed = others.clone();
        let used = g.member_used_bytes();
        let step = (used / piece).max(1);
        let mut pos = 0;
        while pos < used {
            let l = step.min(used - pos);
            let p = raidlab_geometry::plan_rebuild_set(&g, &targets, pos, l, &others).unwrap();
            for s in &p.steps {
                let mut read: Vec<(u32, u64)> = s.reads.iter().map(|r| (r.member, r.offset)).collect();
                prop_assert!(read.iter().all(|(m, _)| !lost.contains(m)), "read a lost member");
                read.sort_unstable();
                let n = read.len();
                read.dedup();
                prop_assert_eq!(read.len(), n, "a survivor block read twice in one row");
                if g.level.has_parity() {
                    // One pass over the row: at most one read per surviving member.
                    prop_assert!(n as u32 <= g.members - lost.len() as u32);
                }
            }
            execute(&raidlab_geometry::VolumePlan::flat_plan(p), &mut members, &mut []);
            pos += l;
        }
        for (t, original) in targets.iter().zip(&originals) {
            let rebuilt = &members.data[*t as usize];
            for o in 0..used {
                if g.level.has_parity() || g.unmap(*t, o).is_some() {
                    prop_assert_eq!(rebuilt[o as usize], original[o as usize], "member {} byte {}", t, o);
                }
            }
        }
        let mut all = vec![0u8; cap as usize];
        execute(&plan_volume(&vol, IoKind::Read, 0, cap, &others).unwrap(), &mut members, &mut all);
        prop_assert!(all == shadow);
    }
}
