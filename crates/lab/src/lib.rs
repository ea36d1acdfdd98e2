//! raidlab's lab: experiments described in TOML, swept over axes, repeated, grown until the
//! rate converges, wrapped in setup/teardown hooks, and stored in an SQLite results database.
//!
//! This crate is for: reading an experiment ([`experiment`]), expanding its sweep into points
//! ([`sweep`]), running each point's repetitions through a [`campaign::Runner`] with hooks and
//! cache defeat, computing statistics over repetitions ([`stats`]), flagging and re-running
//! noisy points, finding the sustained rate ([`campaign`]'s convergence), and storing
//! everything so an interrupted campaign resumes ([`db`]).
//!
//! The binary's `raidlab sweep` implements [`campaign::Runner`] with `raidlab run`'s dispatcher
//! (engine, arrays, simulator by target prefix) and [`campaign::Actions`] with
//! [`actions::SystemActions`]; tests use fakes. [`db::Db`] is also what raidlab-report reads.
//! Whether a file is raidlab's to write (cache defeat's dummy file) is the engine's rule,
//! `raidlab_engine::safety`, shared rather than written again here; so is whether an array
//! target is one `raidlab array create` builds (`raidlab_array::create::check_new`).
//!
//! It is not for: doing the I/O of a run (the binary's runner calls the engine, the arrays
//! or the simulator), drawing figures (raidlab-report reads [`db`]), or deciding what a
//! result means.
//!
//! # Experiment file
//!
//! See `recipes/README.md` for an annotated example; in short:
//!
//! ```toml
//! name = "bs-sweep"                 # campaign name; the database defaults to bs-sweep.db
//! description = "Block size sweep"  # free text
//!
//! [workload]                        # fio options, same names and values as `raidlab run`
//! rw = "read"
//! size = "64m"
//! direct = 1
//!
//! [target]                          # one of: filename, system, array
//! filename = "/dev/sdb"             # file, device, array:M1,M2,… or sim:SYSTEM.toml
//!
//! [sweep]                           # axes; the full cartesian product is run
//! bs = { pow2 = ["512", "2m"] }     # powers of two; also lists and { from, to, step }
//! rw = ["read", "write"]
//! exclude = [{ rw = "write", bs = "512" }]
//!
//! [repeat]
//! count = 5                         # repetitions per point
//! spread_threshold = 0.05           # flag points with (max−min)/median over 5%
//! rerun = 2                         # re-run flagged points up to twice
//! ```

pub mod db;
pub mod error;
pub mod stats;

pub use error::LabError;
pub mod actions;
pub mod campaign;
pub mod env;
pub mod experiment;
pub mod metrics;
pub mod output;
pub mod plan;
pub mod reference;
pub mod sweep;
