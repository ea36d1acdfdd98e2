//! Orchestration of a run: targets, stonewall groups, one thread per job instance.

use crate::clock::Clock;
use crate::{EngineError, RunOptions, Target};
use raidlab_result::RunResult;
use raidlab_workload::JobSpec;
use std::sync::Arc;

/// [`crate::run`] with an explicit clock.
pub fn run_with_clock(
    _specs: &[JobSpec],
    _resolve: &mut dyn FnMut(&str) -> Result<Target, EngineError>,
    _opts: &RunOptions,
    _clock: Arc<dyn Clock>,
) -> Result<RunResult, EngineError> {
    Err(EngineError::failed("the engine is being built"))
}
