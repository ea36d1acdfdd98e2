//! RAID geometry as md lays it out, and the planner that turns logical I/O into member I/O.
//!
//! What it is for: the one description of "where does this byte live" and "which member I/Os
//! and which parity work does this logical read or write cost" shared by real arrays (which
//! execute plans on member files and devices with real parity) and by the simulator (which
//! counts member I/Os and bytes to model time). Data sits where Linux md would put it:
//! drivers/md/raid5.c `raid5_compute_sector` for RAID 4/5/6 (every md layout, including RAID 6's
//! DDF and `-6` variants), raid10.c `__raid10_find_phys` for RAID 10 (near, far, offset), raid0
//! with one zone, linear concatenation, n-way RAID 1.
//!
//! What it is NOT for: no I/O, no parity arithmetic (plans say which blocks to XOR or run
//! through the P/Q syndrome; the parity crate does the math), no superblocks, no clock. Offsets
//! on members are relative to each member's data area.
//!
//! Entry points: [`Geometry::new`], [`Geometry::map`] / [`Geometry::unmap`],
//! [`Geometry::stripe_layout`] (P/Q placement and md's Q coefficients per stripe), [`plan`] /
//! [`plan_extents`] (logical I/O), [`trim_extents`] (what a discard releases), [`plan_rebuild`] / [`plan_rebuild_set`] (recovering members), [`plan_check`] (checking a stripe's
//! redundancy, as scrub does), and [`Volume`] /
//! [`plan_volume`] for nested arrays (RAID 50, 60, 10 of 1s, RAID 0 over RAID 5).
//!
//! # Executing a plan
//! For each [`Step`] (steps are independent; they may run concurrently):
//! 1. allocate `step.scratch[i]` bytes for each `BlockRef::Scratch(i)`;
//! 2. issue every `step.reads` I/O (they may run in parallel) into its block — for a read plan,
//!    `BlockRef::User { at }` is `buf[at..at + len]` of the caller's buffer;
//! 3. run `step.compute` in order: [`Compute::Xor`], [`Compute::GenPq`] (md's syndrome order:
//!    hand `data` to a P/Q generator as-is, `None` = a zero block) and [`Compute::RecoverPq`];
//! 4. issue every `step.writes` I/O (in parallel) from its block — for a write plan `User`
//!    blocks are the new data.
//!
//! Failed members never appear in a plan. `Plan::cost()` totals member I/Os, bytes and parity
//! work for models that only count.
//!
//! # Known simplifications
//! md decides rmw/rcw per 4 KiB page and rounds sub-page writes to whole pages; plans use
//! byte ranges (same decision for page-aligned I/O). RAID 10's optional "far sets" layout bit
//! (md ≥ 3.12, mdadm `--layout` with use_far_sets) is not supported. RAID 0 has one zone (equal
//! member sizes).

mod check;
mod error;
mod geometry;
mod level;
mod plan;
mod planner;
mod trim;
mod volume;

pub use check::{plan_check, Agree, CheckPlan};
pub use error::{GeometryError, PlanError};
pub use geometry::{Geometry, Location, StripeLayout};
pub use level::{Layout, Level, MAX_MEMBERS};
pub use plan::{BlockRef, Compute, Cost, IoKind, MemberIo, Plan, Slot, Step, Strategy};
pub use planner::{
    least_loaded_copy, plan, plan_extents, plan_rebuild, plan_rebuild_set, plan_with, PlanOptions,
};
pub use trim::{trim_extents, TrimExtent};
pub use volume::{plan_volume, Child, LeafIo, StepChildren, Volume, VolumePlan};
