//! The real-time executor: runs the workload crate's request streams against files, block
//! devices and in-process block targets (raidlab arrays), and measures them.
//!
//! This crate is for: opening and laying out targets, refusing to overwrite data it finds
//! signatures of, issuing each job instance's requests with `iodepth` in flight (io_uring,
//! psync, the null engine, or worker threads over a [`BlockTarget`]), timing every I/O into
//! the result crate's histograms, checking `verify` headers, and stopping on runtime or Ctrl-C.
//! It also holds the one way raidlab's crates write messages to standard error,
//! [`ewriteln!`], which unlike `eprintln!` does not panic when stderr is a closed pipe.
//!
//! It is not for: deciding what to issue (the workload crate's [`RequestStream`] does), RAID
//! layout (the geometry and array crates implement [`BlockTarget`]), simulated time (the
//! simulator), or rendering results (the result crate). Wall-clock time is read only through
//! the [`clock::Clock`] the caller passes to [`run_with_clock`].
//!
//! Executors, chosen by `ioengine`: `io_uring` (default; the file and buffer area are
//! registered, one `io_uring_enter` submits the batch and waits for at least one completion),
//! `psync` (pread/pwrite; synchronous, so its iodepth is 1 whatever the job says, as in fio),
//! `null` (no I/O, the target is never opened: the engine's own overhead), and for
//! [`Target::Block`] `iodepth` worker threads calling [`BlockTarget::read_at`]/`write_at`
//! (at iodepth 1, the job's own thread calls them).
//!
//! Timing: `lat` runs from when a request was ready to issue (its slot freed) to its
//! completion, `clat` from its submission to completion; I/O completing inside `ramp_time`
//! is not counted. `verify` checks every block a job reads against the header its last write
//! in this run left there. Races inside one job (a read or write in flight beside another
//! write to the same block) are recognised and not judged; jobs of one stonewall group writing
//! the same blocks at once are not coordinated, so stonewall the job that reads them back.
//!
//! [`RequestStream`]: raidlab_workload::RequestStream

mod affinity;
pub mod clock;
pub mod diskstats;
mod error;
mod exec;
mod gate;
mod iosched;
mod job;
mod progress;
mod runner;
pub mod safety;
pub mod stderr;
mod target;
pub mod verify;

pub use error::EngineError;
pub use exec::punch_hole;
pub use runner::run_with_clock;
pub use runner::MAX_BLOCK_TARGET_THREADS;

use raidlab_result::RunResult;
use raidlab_workload::JobSpec;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A byte-addressed device implemented in process (a raidlab array). Calls may come from
/// several threads at once.
pub trait BlockTarget: Send + Sync {
    /// Capacity in bytes.
    fn size(&self) -> u64;
    /// Offsets, lengths and buffer addresses must be multiples of this.
    fn alignment(&self) -> u64;
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()>;
    fn flush(&self) -> std::io::Result<()>;
    /// The share (0 to 1) of the storage behind [offset, offset + len) that is holes of
    /// files, whose reads reach no device; `None` if it cannot tell (or has said so already).
    /// A run warns before a job reads a region that is mostly holes, as it does for a plain
    /// file.
    fn hole_share(&self, _offset: u64, _len: u64) -> Option<f64> {
        None
    }
    /// The files or devices its I/O ends on (an array's members), whose disks a run's disk
    /// statistics cover; none for a target in memory.
    fn devices(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
    /// Discard [offset, offset + len): its data released (a trim). A target that takes no
    /// discards says so (the default).
    fn trim(&self, _offset: u64, _len: u64) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this target takes no trims",
        ))
    }
}

/// What a job's filename resolves to.
pub enum Target {
    /// A regular file (created and laid out if missing or short) or a block device.
    Path(std::path::PathBuf),
    /// An in-process device; `label` is how results name it.
    Block {
        label: String,
        dev: Arc<dyn BlockTarget>,
    },
}

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Write even over a target holding a recognised signature.
    pub force: bool,
    /// Draw a progress line on stderr (the caller decides whether stderr is a terminal).
    pub progress: bool,
    /// Set by the caller (e.g. its SIGINT handler): stop submitting, drain, return results so far.
    pub stop: Arc<AtomicBool>,
    /// Seconds since the epoch, recorded in the result.
    pub timestamp: u64,
    /// The wall clock as the run starts, ns since the Unix epoch (read by the caller, at the
    /// edge): where `log_unix_epoch` logs put their times.
    pub wall_ns: u64,
    /// fio's `--readonly`: nothing is written, so a file that would be laid out (missing, or
    /// shorter than a job's region) is refused instead. (Jobs that write are refused by the
    /// command before a run.)
    pub readonly: bool,
    /// Other processes running this run together with this one (the ranks of an MPI run),
    /// asked at the run's fixed points; `None` for a process on its own.
    pub coordinator: Option<Arc<dyn Coordinator>>,
}

/// Several processes running one run together, each over its own jobs, as the ranks of an
/// MPI run do. The engine calls these in this order at fixed points of every run, so each
/// process meets the others there: [`before_setup`](Coordinator::before_setup) and
/// [`after_setup`](Coordinator::after_setup) around laying out and checking the targets
/// (ranks sharing a file take turns), [`before_group`](Coordinator::before_group) as each
/// stonewall group is about to start (its jobs' clocks start after it returns), and
/// [`after_groups`](Coordinator::after_groups) once the last group has ended, before any
/// file is unlinked. A run that ends early (an error, a stop) skips the points after it: the
/// coordinator, not the engine, keeps the others from waiting for them. An error from any of
/// them (another process could not go on) ends the run with it. All of them are called on
/// the thread that called [`run`].
pub trait Coordinator: Send + Sync + std::fmt::Debug {
    fn before_setup(&self) -> Result<(), String>;
    fn after_setup(&self) -> Result<(), String>;
    fn before_group(&self, group: usize) -> Result<(), String>;
    fn after_groups(&self) -> Result<(), String>;
}

/// Run `specs` in real time. `resolve` maps each filename to a [`Target`]. Setup problems
/// (bad targets, refused writes, misaligned direct I/O) are errors; I/O errors and verify
/// mismatches during the run end that job and are reported in its `error`, results still
/// returned. Stonewalled specs run after everything before them has finished.
pub fn run(
    specs: &[JobSpec],
    resolve: &mut dyn FnMut(&str) -> Result<Target, EngineError>,
    opts: &RunOptions,
) -> Result<RunResult, EngineError> {
    run_with_clock(specs, resolve, opts, Arc::new(clock::Monotonic))
}

/// Resolve a filename the ordinary way: everything is a path.
pub fn resolve_path(name: &str) -> Result<Target, EngineError> {
    Ok(Target::Path(std::path::PathBuf::from(name)))
}
