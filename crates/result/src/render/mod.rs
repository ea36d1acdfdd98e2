//! Renderings of a [`RunResult`](crate::RunResult) for people and for fio's tools: pure
//! functions from a result to a `String`, no I/O.
//!
//! - [`text`]: fio-like text, with decimal MB/s and binary MiB/s both labelled.
//! - [`json`]: fio's JSON structure (`json`), optionally with latency `bins` (`json+`).
//! - [`terse`]: fio's terse lines, version 3 (`terse`, `--minimal`).

pub mod json;
pub mod terse;
pub mod text;
pub(crate) mod units;
pub use units::civil_from_days;

pub use json::{render_json, render_json_with_options, JSON_ABSENT_KEYS};
pub use terse::render_terse;
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
    /// fio's terse lines, version 3.
    Terse,
}

impl OutputFormat {
    /// One format's name.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "text" | "normal" => Ok(OutputFormat::Text),
            "json" => Ok(OutputFormat::Json),
            "json+" => Ok(OutputFormat::JsonPlus),
            "terse" => Ok(OutputFormat::Terse),
            other => Err(format!(
                "'{other}' is not an output format (valid: text, normal, json, json+, terse, or several joined by commas)"
            )),
        }
    }

    /// fio's comma-separated list of formats (`json,terse`), each once, in the order fio
    /// prints them: terse lines first, then JSON, then text.
    pub fn parse_list(s: &str) -> Result<Vec<Self>, String> {
        let mut out: Vec<OutputFormat> = Vec::new();
        for part in s.split(',') {
            let f = OutputFormat::parse(part.trim())?;
            if !out.contains(&f) {
                out.push(f);
            }
        }
        out.sort_by_key(|f| match f {
            OutputFormat::Terse => 0,
            OutputFormat::Json | OutputFormat::JsonPlus => 1,
            OutputFormat::Text => 2,
        });
        Ok(out)
    }
}

/// Render `result` in `format`.
pub fn render(result: &crate::RunResult, format: OutputFormat) -> String {
    render_with_options(result, &[], format)
}

/// Render `result` in `format`, with each job's options (index-aligned with `result.jobs`)
/// for fio's `job options` in JSON (and the seed of a `randrepeat=0` job in text).
pub fn render_with_options(
    result: &crate::RunResult,
    options: &[Vec<(String, String)>],
    format: OutputFormat,
) -> String {
    match format {
        OutputFormat::Text => text::render_text_with_options(result, options),
        OutputFormat::Json => render_json_with_options(result, options, false),
        OutputFormat::JsonPlus => render_json_with_options(result, options, true),
        OutputFormat::Terse => render_terse(result),
    }
}

/// Render `result` in each of `formats`, one after the other (see
/// [`OutputFormat::parse_list`] for their order).
pub fn render_formats(
    result: &crate::RunResult,
    options: &[Vec<(String, String)>],
    formats: &[OutputFormat],
) -> String {
    formats
        .iter()
        .map(|&f| render_with_options(result, options, f))
        .collect()
}

/// One unit group of fio's coarse latency distribution.
pub(crate) struct LatencyGroup {
    /// fio's JSON key: `latency_ns`, `latency_us`, `latency_ms`.
    pub key: &'static str,
    /// fio's text unit: `nsec`, `usec`, `msec`.
    pub unit: &'static str,
    /// (threshold label, percent of I/Os at or above the previous threshold and below this one).
    pub entries: Vec<(String, f64)>,
}

/// fio's coarse latency distribution: percent of I/Os under each threshold (and at or above
/// the previous one), thresholds 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 in ns and µs, and
/// those plus 2000 (and ">=2000") in ms.
pub(crate) fn latency_distribution(h: &crate::LatencyHistogram) -> Vec<LatencyGroup> {
    const STEPS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    const MS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];
    let edges: Vec<u64> = STEPS
        .iter()
        .copied()
        .chain(STEPS.iter().map(|x| x * 1000))
        .chain(MS.iter().map(|x| x * 1_000_000))
        .collect();
    let mut counts = vec![0u64; edges.len() + 1];
    for (ns, c) in h.bins() {
        let i = edges.iter().position(|&e| ns < e).unwrap_or(edges.len());
        counts[i] += c;
    }
    let n = h.count();
    let pct = |c: u64| {
        if n == 0 {
            0.0
        } else {
            c as f64 * 100.0 / n as f64
        }
    };
    let group = |key, unit, range: std::ops::Range<usize>, labels: &[u64], last: Option<&str>| {
        let mut entries: Vec<(String, f64)> = range
            .zip(labels)
            .map(|(i, l)| (l.to_string(), pct(counts[i])))
            .collect();
        if let Some(label) = last {
            entries.push((label.to_string(), pct(counts[edges.len()])));
        }
        LatencyGroup { key, unit, entries }
    };
    vec![
        group("latency_ns", "nsec", 0..10, &STEPS, None),
        group("latency_us", "usec", 10..20, &STEPS, None),
        group("latency_ms", "msec", 20..31, &MS, Some(">=2000")),
    ]
}

/// A direction's runtime as fio reports it, whole ms rounded up from whole µs (fio's
/// backend.c, update_runtime: `(elapsed_us + 999) / 1000`), so a direction that moved data
/// in under a millisecond shows 1, never 0.
pub(crate) fn runtime_ms(runtime_ns: u64) -> u64 {
    (runtime_ns / 1000).div_ceil(1000)
}

/// The aggregate bandwidth of reporting group `groupid` in `result`, reads, writes, trims
/// and all together (fio's `mixed`), bytes/s as fio figures it for a group: the bytes its
/// jobs moved that way × 1000 over the longest of their runtimes in whole ms (0 when none
/// moved data that way).
pub(crate) fn group_agg_bytes(result: &crate::RunResult, groupid: u32) -> [u64; 4] {
    let mut bytes = [0u64; 4];
    let mut run_ms = [0u64; 4];
    for j in result.jobs.iter().filter(|j| j.groupid == groupid) {
        for (d, s) in [&j.read, &j.write, &j.trim].into_iter().enumerate() {
            if s.total_ios > 0 {
                for d in [d, crate::schema::MIXED] {
                    bytes[d] += s.io_bytes;
                    run_ms[d] = run_ms[d].max(runtime_ms(s.runtime_ns));
                }
            }
        }
    }
    [0, 1, 2, 3].map(|d| {
        if run_ms[d] == 0 {
            0
        } else {
            (bytes[d] as u128 * 1000 / run_ms[d] as u128) as u64
        }
    })
}

/// fio's `bw_agg` (the terse line's bandwidth percent): a job's mean bandwidth sample
/// (KiB/s) as percent of its group's aggregate `agg_bytes` (bytes/s, taken in whole KiB/s),
/// at most 100; 100 when the aggregate is under 1 KiB/s.
pub(crate) fn bw_agg_pct(mean_kib: f64, agg_bytes: u64) -> f64 {
    let agg_kib = agg_bytes / 1024;
    if agg_kib == 0 {
        100.0
    } else {
        (mean_kib * 100.0 / agg_kib as f64).min(100.0)
    }
}

/// fio's `IO depths` buckets and the percent of submissions in each (0 when none counted).
pub(crate) fn iodepth_percentages(counts: &[u64; 7]) -> Vec<(&'static str, f64)> {
    const LABELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    let total: u64 = counts.iter().sum();
    LABELS
        .iter()
        .zip(counts)
        .map(|(l, &n)| {
            let p = if total == 0 {
                0.0
            } else {
                n as f64 * 100.0 / total as f64
            };
            (*l, p)
        })
        .collect()
}

/// The C library's text for `errno`, as fio shows it (`Success` for 0).
pub(crate) fn strerror(errno: i32) -> String {
    if errno == 0 {
        return "Success".into();
    }
    io_error_text(&std::io::Error::from_raw_os_error(errno))
}

/// An I/O error's text without Rust's ` (os error N)`, as a line for people reads it.
pub fn io_error_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(at) => s[..at].to_string(),
        None => s,
    }
}

/// A TOML syntax error as the one line every raidlab file reader gives (experiments, limits
/// files, simulated system files): `origin:LINE:COLUMN: not valid TOML: what`, 1-based, the
/// column counted in characters, so an editor or a reader finds the spot. `at` is the byte
/// offset the parser's error span starts at (none: the line is `origin: not valid TOML: what`);
/// `what` is the parser's message, its lines joined by `; `. (Here rather than beside a TOML
/// parser: this crate is below every crate that reads TOML, and the text needs no parser.)
pub fn toml_syntax_error_text(origin: &str, text: &str, at: Option<usize>, what: &str) -> String {
    let what = what
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let Some(at) = at else {
        return format!("{origin}: not valid TOML: {what}");
    };
    // A cut inside a character counts from that character.
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    format!("{origin}:{line}:{column}: not valid TOML: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Line and column are 1-based, the column in characters; the message is one line.
    #[test]
    fn a_toml_syntax_error_says_file_line_and_column() {
        let text = "a = 1\nb = \"é\" c\n";
        // `c` starts at byte 15 (é is two bytes): column 9.
        let s = toml_syntax_error_text("u.toml", text, Some(15), "expected newline\n  here\n");
        assert_eq!(s, "u.toml:2:9: not valid TOML: expected newline; here");
        // An offset inside a character counts from that character; past the end, the end.
        assert!(toml_syntax_error_text("u.toml", text, Some(12), "x").starts_with("u.toml:2:6: "));
        assert!(toml_syntax_error_text("u.toml", text, Some(99), "x").starts_with("u.toml:3:1: "));
        assert_eq!(
            toml_syntax_error_text("u.toml", text, None, "bad"),
            "u.toml: not valid TOML: bad"
        );
    }

    /// fio prints terse lines first, then JSON, then text, whatever order they were given in.
    #[test]
    fn format_lists_are_put_in_fios_order() {
        assert_eq!(
            OutputFormat::parse_list("normal,json,terse").unwrap(),
            [OutputFormat::Terse, OutputFormat::Json, OutputFormat::Text]
        );
        assert_eq!(
            OutputFormat::parse_list("terse,terse").unwrap(),
            [OutputFormat::Terse]
        );
        let e = OutputFormat::parse_list("json,xml").unwrap_err();
        assert!(e.contains("'xml' is not an output format (valid: "), "{e}");
    }

    /// A direction that moved data in under a millisecond reports 1 ms, as fio rounds its
    /// runtime up (update_runtime): json's `runtime`, the terse line's, text's `/1msec`
    /// and `run=1-1msec`; 0 ms, which a reader divides by, only for no time at all.
    #[test]
    fn runtimes_are_whole_ms_rounded_up_as_fio() {
        assert_eq!(
            [0, 999, 1000, 400_000, 1_000_000, 1_000_999, 1_001_000].map(runtime_ms),
            [0, 0, 1, 1, 1, 1, 2]
        );
        let mut j = crate::JobResult {
            name: "quick".into(),
            ..Default::default()
        };
        j.write.clat.record(40_000);
        j.write.lat.record(40_000);
        j.write.io_bytes = 1 << 20;
        j.write.total_ios = 16;
        j.write.runtime_ns = 400_000;
        let r = crate::RunResult {
            version: "raidlab-test".into(),
            jobs: vec![j],
            ..Default::default()
        };
        let json: serde_json::Value =
            serde_json::from_str(&render(&r, OutputFormat::Json)).unwrap();
        assert_eq!(json["jobs"][0]["write"]["runtime"], 1);
        // (Terse v3: the write direction's runtime is field 50 of the line, from 1.)
        let terse = render(&r, OutputFormat::Terse);
        assert_eq!(terse.split(';').nth(49), Some("1"), "{terse}");
        let text = render(&r, OutputFormat::Text);
        assert!(
            text.contains("/1msec)") && text.contains("run=1-1msec"),
            "{text}"
        );
    }
}
