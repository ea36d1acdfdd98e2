//! What a workload is, in fio's words, and the exact sequence of requests it issues.
//!
//! This crate is for: parsing workload options (`rw`, `bs`, `iodepth`, …) from command-line
//! flags and fio job files into plain [`JobSpec`] values, expanding them into job instances
//! (one per job's files × `numjobs`), and generating each instance's deterministic
//! [`RequestStream`] of `(offset, length, direction)` (a [`JobStream`] over several files
//! for a multi-file job), and each instance's [`Pacer`]: when
//! its next request may go (rate caps, think time, periodic syncs), computed from times its
//! executor passes in.
//!
//! It is not for: doing I/O, reading a clock or measuring anything. The real-time engine
//! (`raidlab-engine`) and the simulator (`raidlab-sim`) both consume the same stream, so a
//! simulated run replays exactly the requests a real run would issue.

pub mod content;
pub mod distribution;
pub mod files;
pub mod flow;
pub mod iolog;
pub mod jobfile;
pub mod keywords;
pub mod latency;
pub mod pace;
pub mod readback;
pub mod size;
pub mod spec;
pub mod steady;
pub mod stream;

pub use content::{BufferContent, ContentGen, DedupeMode};
pub use files::{FileService, JobStream, ServiceKind};
pub use iolog::{ReplayOptions, ReplaySkip, Trace, TraceIo};
pub use jobfile::{
    expand_vars, fio_notes, iec_note, parse_job_file, parse_job_text, read_job_file,
};
pub use latency::{max_latency_exceeded, DepthSearch, DepthStep, LatencyTarget};
pub use pace::{Pace, Pacer, RateProcess, SyncIo, SyncKind, Think, ThinkBlocks};
pub use spec::{
    apply_directories, apply_option, check_reported, exit_scope, for_rank, group_over,
    group_totals, job_groups, parse_percentile_list, split_filenames, waitees, BlockSizes, BsDist,
    Distribution, ErrorKinds, ErrorPolicy, ExitWhat, FadviseHint, Fallocate, GroupTotal, IoEngine,
    JobSpec, LogOptions, MemPolicy, PercentileOptions, Priority, ReadAdvice, RwMode, SpecError,
    UnifiedRw, Zone, OPTION_NAMES,
};
pub use steady::{steady_judges, SteadyCriterion};
pub use stream::{Dir, JobInstance, Request, RequestStream, Rng};
