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
//! Entry points: [`Geometry::new`], [`Geometry::map`], [`plan`], and [`Volume`] /
//! [`plan_volume`] for nested arrays (RAID 50, 60, 10 of 1s, RAID 0 over RAID 5).

mod error;
mod geometry;
mod level;
mod plan;
mod planner;
mod volume;

pub use error::{GeometryError, PlanError};
pub use geometry::{Geometry, Location, StripeLayout};
pub use level::{Layout, Level};
pub use plan::{BlockRef, Compute, Cost, IoKind, MemberIo, Plan, Slot, Step, Strategy};
pub use planner::{plan, plan_extents, plan_with, PlanOptions};
pub use volume::{plan_volume, Child, LeafIo, StepChildren, Volume, VolumePlan};
