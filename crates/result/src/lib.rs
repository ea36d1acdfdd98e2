//! The result of a run, real or simulated: one schema, one set of renderings.
//!
//! This crate is for: the plain data a run produces ([`RunResult`], [`JobResult`],
//! [`DirStats`], [`LatencyHistogram`]), the flat [`Summary`] metrics the lab stores, and the
//! renderings users read (fio-compatible JSON and json+, fio's terse lines, and fio-like
//! text), and the text of fio's time-series log files ([`JobLog`]).
//!
//! It is not for: doing I/O or keeping time. The engine fills these structures from real
//! completions, the simulator from virtual ones; both are rendered the same way.

pub mod histogram;
pub mod iolog;
pub mod passes;
pub mod render;
pub mod samples;
pub mod schema;
pub mod steady;
pub mod timelog;

pub use histogram::LatencyHistogram;
pub use iolog::{IoAct, IoLog, IoLogEntry};
pub use passes::{PassTally, PassesBetween};
pub use render::{
    io_error_text, render, render_formats, render_json, render_terse, render_text,
    render_with_options, toml_syntax_error_text, OutputFormat,
};
pub use samples::{DirSamples, SampleEvery, SampleStats, Sampler};
pub use schema::{
    ComponentUse, DirStats, DiskUtil, DriveCacheUse, ErrorCount, JobResult, LatencyDepth, MpiPlace,
    PageCacheUse, PassStats, Percentiles, RebuildUse, RunResult, SimExtras, StripeCacheUse,
    Summary, SyncStats, UnifiedRw, VerifySummary, DIRECTION_NAMES, MIXED, TRIM,
};
pub use steady::{Steady, SteadyReport, SteadyRule};
pub use timelog::{shared_files, JobLog, LogNames, LogSample};
