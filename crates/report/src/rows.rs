//! The report's input rows: the results database's, as `raidlab_lab::db` reads them.

pub use raidlab_lab::db::{ConvergenceStep, RunRow};
