//! The result of a run, real or simulated: one schema, one set of renderings.
//!
//! This crate is for: the plain data a run produces ([`RunResult`], [`JobResult`],
//! [`DirStats`], [`LatencyHistogram`]), the flat [`Summary`] metrics the lab stores, and the
//! renderings users read (fio-compatible JSON and json+, and fio-like text).
//!
//! It is not for: doing I/O or keeping time. The engine fills these structures from real
//! completions, the simulator from virtual ones; both are rendered the same way.

pub mod histogram;
pub mod render;
pub mod schema;

pub use histogram::LatencyHistogram;
pub use render::{render, render_json, render_text, render_with_options, OutputFormat};
pub use schema::{
    ComponentUse, DirStats, JobResult, PageCacheUse, PassStats, RunResult, SimExtras,
    StripeCacheUse, Summary, SyncStats, VerifySummary,
};
