use std::fmt;

/// A geometry that md would refuse (bad member count, chunk, layout ...). Always bad input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeometryError {
    message: String,
}

impl GeometryError {
    pub(crate) fn usage(message: impl Into<String>) -> GeometryError {
        GeometryError {
            message: message.into(),
        }
    }
    /// Always true: a geometry error is bad input (exit status 2).
    pub fn is_usage(&self) -> bool {
        true
    }
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GeometryError {}

/// Why a logical I/O cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// The extent lies (partly) beyond the array's capacity. Bad input.
    OutOfRange {
        offset: u64,
        len: u64,
        capacity: u64,
    },
    /// A failed-member index that the array does not have. Bad input.
    NoSuchMember { member: u32, members: u32 },
    /// More members failed than the array survives: some data has no readable copy and no
    /// parity to rebuild it from. Failed while running.
    TooManyFailures {
        failed: Vec<u32>,
        redundancy: u32,
        what: String,
    },
    /// Two extents of one multi-extent plan overlap. Bad input.
    Overlap {
        first: (u64, u64),
        second: (u64, u64),
    },
    /// A nested volume whose description is inconsistent. Bad input.
    BadVolume(String),
}

impl PlanError {
    /// True when the caller gave bad input (exit 2); false for a failed array (exit 1).
    pub fn is_usage(&self) -> bool {
        !matches!(self, PlanError::TooManyFailures { .. })
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::OutOfRange { offset, len, capacity } => write!(
                f,
                "I/O of {len} bytes at offset {offset} goes past the array's end (capacity {capacity} bytes)"
            ),
            PlanError::NoSuchMember { member, members } => {
                write!(f, "failed member {member} does not exist (members are 0..{})", members.saturating_sub(1))
            }
            PlanError::TooManyFailures { failed, redundancy, what } => write!(
                f,
                "{what}: members {failed:?} failed but the array tolerates {redundancy} failure(s); data would be lost"
            ),
            PlanError::Overlap { first, second } => write!(
                f,
                "extents overlap: {} bytes at {} and {} bytes at {} (extents of one I/O must be disjoint)",
                first.1, first.0, second.1, second.0
            ),
            PlanError::BadVolume(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for PlanError {}
