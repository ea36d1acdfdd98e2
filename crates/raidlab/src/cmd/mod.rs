//! One module per command family.
pub mod array;
pub mod bench;
pub mod calibrate;
pub mod explain;
pub mod mpi;
pub mod report;
pub mod run;
pub mod sweep;
