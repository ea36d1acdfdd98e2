//! plan_check executed on in-memory members: after any writes every stripe agrees; a corrupt
//! byte makes its stripe disagree; RAID 6's syndrome sources name the corrupt member.

mod common;

use common::{execute, gf_mul, gf_pow2, pattern, Members};
use proptest::prelude::*;
use raidlab_geometry::{
    plan_check, plan_volume, BlockRef, CheckPlan, Compute, Geometry, IoKind, Layout, Level, Volume,
};

fn layouts() -> Vec<(Level, Layout)> {
    use Layout::*;
    let mut v = vec![(Level::Raid1, None), (Level::Raid4, ParityLast)];
    for l in [LeftSymmetric, RightAsymmetric, ParityFirst] {
        v.push((Level::Raid5, l));
    }
    for l in [
        LeftSymmetric,
        LeftAsymmetric,
        DdfZeroRestart,
        DdfNRestart,
        DdfNContinue,
        RightSymmetric6,
        ParityFirst6,
    ] {
        v.push((Level::Raid6, l));
    }
    for (near, far, offset) in [(2, 1, false), (1, 2, false), (1, 2, true)] {
        v.push((Level::Raid10, Raid10 { near, far, offset }));
    }
    v
}

/// Run a check plan's reads and parity work into the caller's buffer.
fn run_check(cp: &CheckPlan, members: &Members) -> Vec<u8> {
    let mut buf = vec![0u8; cp.buffer as usize];
    let at = |b: &BlockRef| match b {
        BlockRef::User { at } => *at as usize,
        BlockRef::Scratch(_) => panic!("check plans keep blocks in the caller's buffer"),
    };
    for st in &cp.plan.steps {
        assert!(st.writes.is_empty(), "a check writes nothing");
        for r in &st.reads {
            let src =
                &members.data[r.member as usize][r.offset as usize..(r.offset + r.len) as usize];
            buf[at(&r.block)..at(&r.block) + r.len as usize].copy_from_slice(src);
        }
        for c in &st.compute {
            match c {
                Compute::Xor { inputs, out, len } => {
                    let mut acc = vec![0u8; *len as usize];
                    for i in inputs {
                        for (j, a) in acc.iter_mut().enumerate() {
                            *a ^= buf[at(i) + j];
                        }
                    }
                    buf[at(out)..at(out) + *len as usize].copy_from_slice(&acc);
                }
                Compute::GenPq { data, p, q, len } => {
                    let n = *len as usize;
                    let (mut pv, mut qv) = (vec![0u8; n], vec![0u8; n]);
                    for (z, d) in data.iter().enumerate() {
                        if let Some(d) = d {
                            for j in 0..n {
                                let v = buf[at(d) + j];
                                pv[j] ^= v;
                                qv[j] ^= gf_mul(gf_pow2(z as u32), v);
                            }
                        }
                    }
                    buf[at(p)..at(p) + n].copy_from_slice(&pv);
                    buf[at(q)..at(q) + n].copy_from_slice(&qv);
                }
                Compute::RecoverPq { .. } => panic!("a check recovers nothing"),
            }
        }
    }
    buf
}

fn disagreeing(cp: &CheckPlan, buf: &[u8]) -> Vec<u32> {
    let blk = |b: BlockRef, len: u64| match b {
        BlockRef::User { at } => &buf[at as usize..(at + len) as usize],
        _ => unreachable!(),
    };
    cp.agree
        .iter()
        .filter(|a| blk(a.stored, a.len) != blk(a.expected, a.len))
        .map(|a| a.member)
        .collect()
}

/// The slot z with ΔQ = g^z · ΔP at a byte where both differ.
fn locate(cp: &CheckPlan, buf: &[u8]) -> Option<u32> {
    let (p, q) = (&cp.agree[0], &cp.agree[1]);
    let byte = |b: BlockRef, j: u64| match b {
        BlockRef::User { at } => buf[(at + j) as usize],
        _ => unreachable!(),
    };
    for j in 0..p.len {
        let dp = byte(p.stored, j) ^ byte(p.expected, j);
        let dq = byte(q.stored, j) ^ byte(q.expected, j);
        if dp != 0 && dq != 0 {
            let z = (0..cp.sources.len()).find(|&z| gf_mul(gf_pow2(z as u32), dp) == dq)?;
            return cp.sources[z].map(|(m, _)| m);
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn checks_pass_after_writes_and_catch_a_corrupt_byte(
        which in 0..layouts().len(),
        extra in 0u32..4,
        chunks in 2u64..8,
        ops in prop::collection::vec((any::<u64>(), any::<u64>()), 1..8),
        corrupt in any::<u64>(),
    ) {
        let (level, layout) = layouts()[which];
        let members = match level { Level::Raid6 => 4, Level::Raid10 => 3, _ => 2 } + extra;
        let Ok(g) = Geometry::new(level, layout, 512, members, chunks * 512) else {
            return Ok(());
        };
        let cap = g.capacity();
        let mut m = Members::new(g.members as usize, g.member_bytes);
        let vol = Volume::flat(g.clone());
        for &(a, b) in &ops {
            let off = a % cap;
            let len = 1 + b % (cap - off);
            let mut data = pattern(a, len as usize);
            execute(&plan_volume(&vol, IoKind::Write, off, len, &[]).unwrap(), &mut m, &mut data);
        }
        let units = if g.level.has_parity() { g.member_used_bytes() / 512 } else { cap / 512 };
        for u in 0..units {
            let cp = plan_check(&g, u).unwrap();
            let buf = run_check(&cp, &m);
            prop_assert!(disagreeing(&cp, &buf).is_empty(), "unit {} disagrees after writes", u);
        }
        prop_assert!(plan_check(&g, units).is_err());
        // Flip one byte somewhere the layout uses.
        let victim = (corrupt % g.members as u64) as u32;
        let off = (corrupt >> 8) % g.member_used_bytes();
        let unit = if g.level.has_parity() {
            off / 512
        } else {
            match g.unmap(victim, off) {
                Some(l) => l / 512,
                None => return Ok(()),
            }
        };
        m.data[victim as usize][off as usize] ^= 0x5a;
        let cp = plan_check(&g, unit).unwrap();
        let buf = run_check(&cp, &m);
        let bad = disagreeing(&cp, &buf);
        prop_assert!(!bad.is_empty(), "corrupt byte on member {} at {} not seen", victim, off);
        if level == Level::Raid6 {
            prop_assert_eq!(locate(&cp, &buf).or(if bad.len() == 1 { Some(bad[0]) } else { None }), Some(victim));
        }
    }
}
