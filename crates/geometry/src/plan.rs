//! The planner: one logical read or write → the member I/Os and parity work md would do.
//!
//! A [`Plan`] is a list of independent [`Step`]s (one per stripe, or per range of rows of a
//! stripe in which every member plays the same part — md decides read-modify-write vs
//! reconstruct-write per 4 KiB row of a stripe; this planner decides it per byte range in which
//! the set of written members is constant, which is the same rule without the page rounding).
//! Each step runs in up to three phases: `reads` (phase 1), `compute` (in order), `writes`
//! (phase 2). Steps touch disjoint member ranges and may run in parallel.
//!
//! Bytes move between member I/Os and computations through [`BlockRef`]s: either a range of the
//! caller's buffer (`User`, offsets relative to the start of the logical I/O) or one of the
//! step's scratch buffers (`Scratch`, sizes in `Step::scratch`).

use serde::{Deserialize, Serialize};

/// Direction of a logical I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IoKind {
    Read,
    Write,
}

/// How a step serves its part of the logical I/O, in md's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Strategy {
    /// Plain data I/O without redundancy work: linear, RAID 0, reads of healthy members of
    /// RAID 4/5/6.
    Direct,
    /// Read of one copy of mirrored data (RAID 1, RAID 10), picked by the read rule.
    MirrorRead,
    /// Write of every surviving copy (RAID 1, RAID 10).
    MirrorWrite,
    /// Every data block of the rows is overwritten: parity from the new data alone, no
    /// pre-reads (md's full-stripe write).
    FullStripeWrite,
    /// Pre-read the old data being overwritten and the old parity; new parity = old parity
    /// updated by the data's change (md's rmw, `handle_stripe_dirtying`; RAID 6 updates P and Q
    /// from the deltas, as md does since Linux 4.1).
    ReadModifyWrite,
    /// Pre-read the data blocks not being overwritten; parity from all data (md's rcw).
    ReconstructWrite,
    /// A write where old data of a failed member must first be rebuilt from parity before
    /// parity can be recomputed (RAID 6 with two data members failed, one of them written);
    /// then as reconstruct-write.
    DegradedWrite,
    /// A read of a failed member's data rebuilt from the survivors and parity.
    DegradedRead,
    /// Recovery of a member's range onto its replacement from the other members (md's
    /// resync/recovery of a spare): a mirror copy, or data / P / Q recomputed from the stripe.
    Rebuild,
    /// A consistency check of a stripe (md's check/repair sync action): every block read and
    /// the parity recomputed for comparison (see [`crate::plan_check`]).
    Check,
}

/// Where the bytes of a member I/O or computation operand live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BlockRef {
    /// The caller's buffer, starting `at` bytes after the start of the logical I/O.
    User { at: u64 },
    /// Scratch buffer `i` of the step (`Step::scratch[i]` bytes, contents undefined until read
    /// or computed).
    Scratch(u32),
}

/// One member I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MemberIo {
    pub member: u32,
    /// Offset within the member's data area.
    pub offset: u64,
    pub len: u64,
    /// Read into / write from here (`len` bytes).
    pub block: BlockRef,
}

/// An operand of a RAID 6 recovery, in md's syndrome source order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Slot {
    /// A block of zeros (DDF layouts' P and Q positions, or data not taking part).
    Zero,
    /// A known block.
    Known(BlockRef),
    /// An unknown block to be computed into this buffer.
    Missing(BlockRef),
}

/// Parity work between the phases. All operands of one computation have the same length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compute {
    /// `out = inputs[0] ^ inputs[1] ^ ...` (RAID 4/5 parity, RMW parity update, single-block
    /// recovery from P).
    Xor {
        inputs: Vec<BlockRef>,
        out: BlockRef,
        len: u64,
    },
    /// RAID 6 syndromes: `p = Σ data[i]`, `q = Σ g^i · data[i]` over GF(2^8) (polynomial 0x11d,
    /// generator 2); `data` in md's syndrome source order, `None` = zeros.
    GenPq {
        data: Vec<Option<BlockRef>>,
        p: BlockRef,
        q: BlockRef,
        len: u64,
    },
    /// RAID 6: solve `p = Σ data[i]`, `q = Σ g^i · data[i]` for the one or two `Missing` slots
    /// (two data; data + P; data + Q; or one data from Q).
    RecoverPq {
        data: Vec<Slot>,
        p: Slot,
        q: Slot,
        len: u64,
    },
}

impl Compute {
    /// Bytes read by this computation (its inputs) — the work a parity kernel does.
    pub fn input_bytes(&self) -> u64 {
        match self {
            Compute::Xor { inputs, len, .. } => inputs.len() as u64 * len,
            Compute::GenPq { data, len, .. } => {
                data.iter().filter(|d| d.is_some()).count() as u64 * len
            }
            Compute::RecoverPq { data, p, q, len } => {
                let known = data
                    .iter()
                    .chain([p, q])
                    .filter(|s| matches!(s, Slot::Known(_)))
                    .count();
                known as u64 * len
            }
        }
    }
    /// Bytes produced by this computation.
    pub fn output_bytes(&self) -> u64 {
        match self {
            Compute::Xor { len, .. } => *len,
            Compute::GenPq { len, .. } => 2 * len,
            Compute::RecoverPq { data, p, q, len } => {
                let missing = data
                    .iter()
                    .chain([p, q])
                    .filter(|s| matches!(s, Slot::Missing(_)))
                    .count();
                missing as u64 * len
            }
        }
    }
}

/// One independent piece of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Stripe number (row of chunks) for striped levels; chunk number for RAID 1/10; member
    /// index for linear.
    pub stripe: u64,
    pub strategy: Strategy,
    /// Sizes of the step's scratch buffers (`BlockRef::Scratch(i)` is `scratch[i]` bytes).
    pub scratch: Vec<u64>,
    /// Phase 1: member reads (for reads: the data itself; for writes: pre-reads).
    pub reads: Vec<MemberIo>,
    /// Parity work, in order, after phase 1.
    pub compute: Vec<Compute>,
    /// Phase 2: member writes.
    pub writes: Vec<MemberIo>,
}

/// Counts and bytes of a plan, for the simulator and for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cost {
    pub member_reads: u64,
    pub member_writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Bytes fed into parity computations (XOR / syndrome / recovery inputs).
    pub parity_in_bytes: u64,
    /// Bytes produced by parity computations.
    pub parity_out_bytes: u64,
    /// Steps that needed a pre-read phase before writing (RMW, RCW, degraded writes).
    pub prereads_steps: u64,
}

impl std::ops::Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost {
            member_reads: self.member_reads + o.member_reads,
            member_writes: self.member_writes + o.member_writes,
            read_bytes: self.read_bytes + o.read_bytes,
            write_bytes: self.write_bytes + o.write_bytes,
            parity_in_bytes: self.parity_in_bytes + o.parity_in_bytes,
            parity_out_bytes: self.parity_out_bytes + o.parity_out_bytes,
            prereads_steps: self.prereads_steps + o.prereads_steps,
        }
    }
}

impl Step {
    pub fn cost(&self) -> Cost {
        Cost {
            member_reads: self.reads.len() as u64,
            member_writes: self.writes.len() as u64,
            read_bytes: self.reads.iter().map(|r| r.len).sum(),
            write_bytes: self.writes.iter().map(|w| w.len).sum(),
            parity_in_bytes: self.compute.iter().map(Compute::input_bytes).sum(),
            parity_out_bytes: self.compute.iter().map(Compute::output_bytes).sum(),
            prereads_steps: (!self.writes.is_empty() && !self.reads.is_empty()) as u64,
        }
    }
}

/// The member work for one logical I/O.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub kind: IoKind,
    /// Logical extent planned (for [`crate::plan_extents`]: the first extent's offset and the
    /// total length).
    pub offset: u64,
    pub len: u64,
    /// The logical extents (offset, length) in the caller's buffer order; one for [`crate::plan`].
    pub extents: Vec<(u64, u64)>,
    pub steps: Vec<Step>,
}

impl Plan {
    /// Totals over all steps.
    pub fn cost(&self) -> Cost {
        self.steps
            .iter()
            .map(Step::cost)
            .fold(Cost::default(), |a, b| a + b)
    }
}
