//! Checking one stripe's redundancy, md's "check" sync action (and the first half of "repair"):
//! which member blocks to read, which parity to recompute, and which blocks must then agree.
//! Repairing what a check finds is a rebuild of the bad block ([`crate::plan_rebuild`] with
//! that member treated as failed), or a rewrite of the recomputed parity.

use serde::{Deserialize, Serialize};

use crate::plan::{BlockRef, Compute, IoKind, MemberIo, Plan, Step, Strategy};
use crate::{Geometry, Level, PlanError};

/// Two blocks that must hold the same bytes when the stripe is consistent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agree {
    /// Member holding the stored block (the one to rewrite if they differ).
    pub member: u32,
    /// The block as read from `member`.
    pub stored: BlockRef,
    /// What it should be: recomputed parity, or the first copy of mirrored data.
    pub expected: BlockRef,
    pub len: u64,
}

/// The work of checking one stripe. Every block lands in the caller's buffer
/// (`BlockRef::User`, `buffer` bytes), so the caller can compare after running `plan` (reads,
/// then the parity recomputation; no writes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckPlan {
    pub plan: Plan,
    /// Bytes of the caller's buffer the plan uses.
    pub buffer: u64,
    /// What must agree: P (and Q) against the parity recomputed from the data, or every
    /// further copy of a mirror chunk against the first.
    pub agree: Vec<Agree>,
    /// RAID 6: md's syndrome source list as read (`None` = a zero block, as DDF layouts have at
    /// their P and Q positions), with the member of each, so a caller can locate a single bad
    /// block from the P/Q syndromes (source z is bad when ΔQ = g^z · ΔP). Empty otherwise.
    pub sources: Vec<Option<(u32, BlockRef)>>,
}

/// Plan the check of stripe `stripe`: for RAID 4/5/6 the chunk row at member offset
/// `stripe × chunk` on every member; for RAID 1 and 10 the logical chunk `stripe` on each of its
/// copies. Linear and RAID 0 keep no redundancy: their check reads nothing and finds nothing.
/// Every member must be present (a degraded stripe has nothing left to check against).
pub fn plan_check(geom: &Geometry, stripe: u64) -> Result<CheckPlan, PlanError> {
    let c = geom.chunk_bytes;
    let mut step = Step {
        stripe,
        strategy: Strategy::Check,
        scratch: vec![],
        reads: vec![],
        compute: vec![],
        writes: vec![],
    };
    let mut agree = vec![];
    let mut sources = vec![];
    let mut buffer = 0u64;
    let mut block = |len: u64| {
        let b = BlockRef::User { at: buffer };
        buffer += len;
        b
    };
    let (offset, len) = match geom.level {
        Level::Linear | Level::Raid0 => (stripe * c, 0),
        Level::Raid1 | Level::Raid10 => {
            let start = stripe * c;
            if start.checked_add(c).is_none_or(|e| e > geom.capacity()) {
                return Err(PlanError::OutOfRange {
                    offset: start,
                    len: c,
                    capacity: geom.capacity(),
                });
            }
            let copies = geom.map(start);
            let first = block(c);
            for (i, loc) in copies.iter().enumerate() {
                let b = if i == 0 { first } else { block(c) };
                step.reads.push(MemberIo {
                    member: loc.member,
                    offset: loc.offset,
                    len: c,
                    block: b,
                });
                if i > 0 {
                    agree.push(Agree {
                        member: loc.member,
                        stored: b,
                        expected: first,
                        len: c,
                    });
                }
            }
            (start, c)
        }
        Level::Raid4 | Level::Raid5 | Level::Raid6 => {
            let rows = geom.member_used_bytes() / c;
            if stripe >= rows {
                return Err(PlanError::OutOfRange {
                    offset: stripe * geom.stripe_data_bytes(),
                    len: geom.stripe_data_bytes(),
                    capacity: geom.capacity(),
                });
            }
            let sl = geom.stripe_layout(stripe).expect("parity level");
            let base = stripe * c;
            let read = |member: u32, step: &mut Step, b: BlockRef| {
                step.reads.push(MemberIo {
                    member,
                    offset: base,
                    len: c,
                    block: b,
                })
            };
            let data: Vec<BlockRef> = sl
                .data
                .iter()
                .map(|&m| {
                    let b = block(c);
                    read(m, &mut step, b);
                    b
                })
                .collect();
            let p_member = sl.p.expect("parity level");
            let p = block(c);
            read(p_member, &mut step, p);
            let new_p = block(c);
            agree.push(Agree {
                member: p_member,
                stored: p,
                expected: new_p,
                len: c,
            });
            if let Some(q_member) = sl.q {
                let q = block(c);
                read(q_member, &mut step, q);
                let new_q = block(c);
                agree.push(Agree {
                    member: q_member,
                    stored: q,
                    expected: new_q,
                    len: c,
                });
                let mut slots: Vec<Option<BlockRef>> = vec![None; sl.syndrome_slots as usize];
                sources = vec![None; sl.syndrome_slots as usize];
                for (k, &b) in data.iter().enumerate() {
                    let z = sl.q_slot[k] as usize;
                    slots[z] = Some(b);
                    sources[z] = Some((sl.data[k], b));
                }
                step.compute.push(Compute::GenPq {
                    data: slots,
                    p: new_p,
                    q: new_q,
                    len: c,
                });
            } else {
                step.compute.push(Compute::Xor {
                    inputs: data,
                    out: new_p,
                    len: c,
                });
            }
            (stripe * geom.stripe_data_bytes(), geom.stripe_data_bytes())
        }
    };
    let steps = if step.reads.is_empty() {
        vec![]
    } else {
        vec![step]
    };
    Ok(CheckPlan {
        plan: Plan {
            kind: IoKind::Read,
            offset,
            len,
            extents: vec![(offset, len)],
            steps,
        },
        buffer,
        agree,
        sources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Layout;

    #[test]
    fn raid5_check_reads_the_row_and_recomputes_p() {
        let g = Geometry::new(Level::Raid5, Layout::LeftSymmetric, 4096, 4, 8 * 4096).unwrap();
        let cp = plan_check(&g, 1).unwrap();
        let st = &cp.plan.steps[0];
        assert_eq!(st.strategy, Strategy::Check);
        let mut ms: Vec<u32> = st.reads.iter().map(|r| r.member).collect();
        ms.sort();
        assert_eq!(ms, vec![0, 1, 2, 3]);
        assert!(st.reads.iter().all(|r| r.offset == 4096 && r.len == 4096));
        assert!(st.writes.is_empty());
        // Row 1 of left-symmetric on 4: parity on member 2.
        assert_eq!(cp.agree.len(), 1);
        assert_eq!(cp.agree[0].member, 2);
        assert!(matches!(&st.compute[0], Compute::Xor { inputs, .. } if inputs.len() == 3));
        assert_eq!(cp.buffer, 5 * 4096);
        assert!(cp.sources.is_empty());
        assert_eq!(cp.plan.cost().member_reads, 4);
        assert!(plan_check(&g, 8).is_err());
    }

    #[test]
    fn raid6_check_gives_md_syndrome_sources_ddf_included() {
        for layout in [
            Layout::LeftSymmetric,
            Layout::DdfNRestart,
            Layout::LeftAsymmetric,
        ] {
            let g = Geometry::new(Level::Raid6, layout, 4096, 6, 8 * 4096).unwrap();
            for row in 0..8 {
                let cp = plan_check(&g, row).unwrap();
                let sl = g.stripe_layout(row).unwrap();
                assert_eq!(cp.sources.len(), sl.syndrome_slots as usize);
                assert_eq!(cp.agree.len(), 2);
                assert_eq!(cp.agree[0].member, sl.p.unwrap());
                assert_eq!(cp.agree[1].member, sl.q.unwrap());
                for (k, &m) in sl.data.iter().enumerate() {
                    assert_eq!(cp.sources[sl.q_slot[k] as usize].unwrap().0, m);
                }
                // DDF: P and Q positions are zero sources.
                let zeros = cp.sources.iter().filter(|s| s.is_none()).count();
                assert_eq!(zeros, if layout.is_ddf() { 2 } else { 0 }, "{layout}");
                let Compute::GenPq { data, .. } = &cp.plan.steps[0].compute[0] else {
                    panic!("RAID 6 recomputes P and Q")
                };
                assert_eq!(data.len(), cp.sources.len());
            }
        }
    }

    #[test]
    fn mirror_check_compares_every_copy_with_the_first() {
        let g = Geometry::new(
            Level::Raid10,
            Layout::Raid10 {
                near: 2,
                far: 1,
                offset: false,
            },
            4096,
            4,
            8 * 4096,
        )
        .unwrap();
        let cp = plan_check(&g, 2).unwrap();
        let copies = g.map(2 * 4096);
        assert_eq!(cp.plan.steps[0].reads.len(), copies.len());
        assert_eq!(cp.agree.len(), copies.len() - 1);
        assert_eq!(cp.agree[0].member, copies[1].member);
        assert_eq!(cp.agree[0].expected, BlockRef::User { at: 0 });
        let r0 = Geometry::new(Level::Raid0, Layout::None, 4096, 3, 8 * 4096).unwrap();
        let cp = plan_check(&r0, 0).unwrap();
        assert!(cp.plan.steps.is_empty() && cp.agree.is_empty());
    }
}
