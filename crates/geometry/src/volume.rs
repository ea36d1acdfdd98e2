//! Nested arrays: an array whose members are arrays (RAID 50, 60, 10 of RAID 1s, seed 002's
//! RAID 0 over RAID 5), planned down to leaf members.

use serde::{Deserialize, Serialize};

use crate::plan::{Cost, IoKind, MemberIo, Plan};
use crate::{plan, Geometry, PlanError};

/// A tree of arrays over leaf members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Volume {
    /// A leaf: a member file or device, by its number among all leaves.
    Member(u32),
    /// An array; `children[i]` is its member i. A child array's capacity must hold the
    /// parent's `member_bytes`.
    Array {
        geometry: Geometry,
        children: Vec<Volume>,
    },
}

impl Volume {
    /// `top` striped over `top.members` arrays shaped like `child`; leaves numbered
    /// depth-first from 0 (child 0's members are leaves 0..child.members, and so on).
    /// `top.member_bytes` should be at most `child.capacity()` (checked by [`Volume::validate`]).
    pub fn nest(top: Geometry, child: Geometry) -> Volume {
        let per = child.members;
        let children = (0..top.members)
            .map(|i| Volume::Array {
                geometry: child.clone(),
                children: (0..per).map(|j| Volume::Member(i * per + j)).collect(),
            })
            .collect();
        Volume::Array {
            geometry: top,
            children,
        }
    }

    /// A single-level array over leaves 0..members.
    pub fn flat(geometry: Geometry) -> Volume {
        let children = (0..geometry.members).map(Volume::Member).collect();
        Volume::Array { geometry, children }
    }

    /// Logical capacity (None for a bare leaf, whose size the tree does not know).
    pub fn capacity(&self) -> Option<u64> {
        match self {
            Volume::Member(_) => None,
            Volume::Array { geometry, .. } => Some(geometry.capacity()),
        }
    }

    /// Leaf member numbers, depth-first.
    pub fn leaves(&self) -> Vec<u32> {
        match self {
            Volume::Member(m) => vec![*m],
            Volume::Array { children, .. } => children.iter().flat_map(Volume::leaves).collect(),
        }
    }

    /// Check the tree: member counts match, child arrays are big enough, leaves are distinct.
    pub fn validate(&self) -> Result<(), PlanError> {
        let mut leaves = self.leaves();
        let n = leaves.len();
        leaves.sort_unstable();
        leaves.dedup();
        if leaves.len() != n {
            return Err(PlanError::BadVolume(
                "a leaf member appears twice in the volume".into(),
            ));
        }
        self.validate_shape()
    }

    fn validate_shape(&self) -> Result<(), PlanError> {
        if let Volume::Array { geometry, children } = self {
            if children.len() != geometry.members as usize {
                return Err(PlanError::BadVolume(format!(
                    "{} array declares {} members but has {} children",
                    geometry.level,
                    geometry.members,
                    children.len()
                )));
            }
            for (i, c) in children.iter().enumerate() {
                if let Some(cap) = c.capacity() {
                    if cap < geometry.member_used_bytes() {
                        return Err(PlanError::BadVolume(format!(
                            "member {i} of the {} array holds {cap} bytes but {} are needed",
                            geometry.level,
                            geometry.member_used_bytes()
                        )));
                    }
                }
                c.validate_shape()?;
            }
        }
        Ok(())
    }

    /// Whether all data is still readable with these leaves failed.
    pub fn survives(&self, failed_leaves: &[u32]) -> bool {
        match self {
            Volume::Member(m) => !failed_leaves.contains(m),
            Volume::Array { geometry, children } => {
                geometry.survives(&failed_children(children, failed_leaves))
            }
        }
    }
}

fn failed_children(children: &[Volume], failed_leaves: &[u32]) -> Vec<u32> {
    (0..children.len() as u32)
        .filter(|&i| !children[i as usize].survives(failed_leaves))
        .collect()
}

/// What a member I/O of a [`VolumePlan`] lands on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Child {
    /// A leaf member: execute the I/O on it directly.
    Leaf(u32),
    /// A child array: execute this plan, whose `BlockRef::User` buffer is the parent I/O's
    /// block.
    Array(VolumePlan),
}

/// Children of one step, parallel to `Step::reads` and `Step::writes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepChildren {
    pub reads: Vec<Child>,
    pub writes: Vec<Child>,
}

/// A plan on a volume: the top array's plan, and for each of its member I/Os either the leaf
/// it goes to or the child array's plan for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumePlan {
    pub plan: Plan,
    /// Parallel to `plan.steps`.
    pub children: Vec<StepChildren>,
}

/// One I/O on a leaf member, from [`VolumePlan::leaf_ios`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeafIo {
    pub leaf: u32,
    pub offset: u64,
    pub len: u64,
    pub kind: IoKind,
}

impl VolumePlan {
    /// Wrap a plan on a single-level array whose members are leaves 0..members.
    pub fn flat_plan(plan: Plan) -> VolumePlan {
        let children = plan
            .steps
            .iter()
            .map(|s| StepChildren {
                reads: s.reads.iter().map(|io| Child::Leaf(io.member)).collect(),
                writes: s.writes.iter().map(|io| Child::Leaf(io.member)).collect(),
            })
            .collect();
        VolumePlan { plan, children }
    }

    /// Totals down to the leaves: leaf reads/writes and bytes, plus parity work at every level.
    pub fn cost(&self) -> Cost {
        let mut total = Cost::default();
        for (step, ch) in self.plan.steps.iter().zip(&self.children) {
            let own = step.cost();
            total.parity_in_bytes += own.parity_in_bytes;
            total.parity_out_bytes += own.parity_out_bytes;
            total.prereads_steps += own.prereads_steps;
            let mut add = |io: &MemberIo, child: &Child, write: bool| match child {
                Child::Leaf(_) => {
                    if write {
                        total.member_writes += 1;
                        total.write_bytes += io.len;
                    } else {
                        total.member_reads += 1;
                        total.read_bytes += io.len;
                    }
                }
                Child::Array(p) => total = total + p.cost(),
            };
            for (io, c) in step.reads.iter().zip(&ch.reads) {
                add(io, c, false);
            }
            for (io, c) in step.writes.iter().zip(&ch.writes) {
                add(io, c, true);
            }
        }
        total
    }

    /// Every leaf I/O, flattened (phase order within a level is lost; for counting and for
    /// simulators that model members only).
    pub fn leaf_ios(&self) -> Vec<LeafIo> {
        let mut out = vec![];
        self.collect(&mut out);
        out
    }

    fn collect(&self, out: &mut Vec<LeafIo>) {
        for (step, ch) in self.plan.steps.iter().zip(&self.children) {
            for (ios, children) in [(&step.reads, &ch.reads), (&step.writes, &ch.writes)] {
                for (io, c) in ios.iter().zip(children.iter()) {
                    match c {
                        Child::Leaf(leaf) => out.push(LeafIo {
                            leaf: *leaf,
                            offset: io.offset,
                            len: io.len,
                            kind: if std::ptr::eq(ios, &step.reads) {
                                IoKind::Read
                            } else {
                                IoKind::Write
                            },
                        }),
                        Child::Array(p) => p.collect(out),
                    }
                }
            }
        }
    }
}

/// Plan a logical I/O on a volume with the given leaves failed. A child array counts as a
/// failed member of its parent when it does not survive its own failed leaves; a child array
/// that survives serves its parent's member I/O through its own plan (degraded if need be).
pub fn plan_volume(
    volume: &Volume,
    kind: IoKind,
    offset: u64,
    len: u64,
    failed_leaves: &[u32],
) -> Result<VolumePlan, PlanError> {
    let Volume::Array { geometry, children } = volume else {
        return Err(PlanError::BadVolume(
            "a volume to plan on must be an array, not a bare member".into(),
        ));
    };
    volume.validate()?;
    plan_array(geometry, children, kind, offset, len, failed_leaves)
}

fn plan_array(
    geometry: &Geometry,
    children: &[Volume],
    kind: IoKind,
    offset: u64,
    len: u64,
    failed_leaves: &[u32],
) -> Result<VolumePlan, PlanError> {
    let failed = failed_children(children, failed_leaves);
    let top = plan(geometry, kind, offset, len, &failed)?;
    let child_of = |io: &MemberIo, k: IoKind| -> Result<Child, PlanError> {
        match &children[io.member as usize] {
            Volume::Member(m) => Ok(Child::Leaf(*m)),
            Volume::Array { geometry, children } => Ok(Child::Array(plan_array(
                geometry,
                children,
                k,
                io.offset,
                io.len,
                failed_leaves,
            )?)),
        }
    };
    let mut out = Vec::with_capacity(top.steps.len());
    for step in &top.steps {
        out.push(StepChildren {
            reads: step
                .reads
                .iter()
                .map(|io| child_of(io, IoKind::Read))
                .collect::<Result<_, _>>()?,
            writes: step
                .writes
                .iter()
                .map(|io| child_of(io, IoKind::Write))
                .collect::<Result<_, _>>()?,
        });
    }
    Ok(VolumePlan {
        plan: top,
        children: out,
    })
}
