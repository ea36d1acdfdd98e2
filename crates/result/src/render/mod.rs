//! Renderings of a [`RunResult`](crate::RunResult) for people and for fio's tools: pure
//! functions from a result to a `String`, no I/O.
//!
//! - [`text`]: fio-like text, with decimal MB/s and binary MiB/s both labelled.
//! - [`json`]: fio's JSON structure (`json`), optionally with latency `bins` (`json+`).

pub mod json;
pub mod text;
mod units;

pub use json::{render_json, render_json_with_options, JSON_ABSENT_KEYS};
pub use text::render_text;

/// fio's default completion-latency percentile list.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The output formats `raidlab run --output-format` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    /// JSON with fio's latency histogram `bins`.
    JsonPlus,
}

impl OutputFormat {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "text" | "normal" => Ok(OutputFormat::Text),
            "json" => Ok(OutputFormat::Json),
            "json+" => Ok(OutputFormat::JsonPlus),
            other => Err(format!(
                "'{other}' is not an output format (valid: text, json, json+)"
            )),
        }
    }
}

/// Render `result` in `format`.
pub fn render(result: &crate::RunResult, format: OutputFormat) -> String {
    render_with_options(result, &[], format)
}

/// Render `result` in `format`, with each job's options (index-aligned with `result.jobs`)
/// for fio's `job options` in JSON.
pub fn render_with_options(
    result: &crate::RunResult,
    options: &[Vec<(String, String)>],
    format: OutputFormat,
) -> String {
    match format {
        OutputFormat::Text => render_text(result),
        OutputFormat::Json => render_json_with_options(result, options, false),
        OutputFormat::JsonPlus => render_json_with_options(result, options, true),
    }
}
