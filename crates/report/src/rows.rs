//! The report's input rows. Same shape as the results database's rows.
// Mirrors raidlab_lab::db's RunRow / ConvergenceStep until that crate publishes them.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunRow {
    pub campaign: String,
    pub experiment: String,
    pub point: u64,
    pub rep: u32,
    pub source: String,
    pub target: String,
    pub params: BTreeMap<String, String>,
    pub metrics: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConvergenceStep {
    pub campaign: String,
    pub point: u64,
    pub step: u32,
    pub total_bytes: u64,
    pub mb_s: f64,
}
