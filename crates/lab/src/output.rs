//! Tables of a campaign's points (after repetitions): CSV, aligned text, JSON. One row per
//! point: its swept parameters (named as in the experiment; sizes in bytes, `system` by file
//! stem), then the mean of each metric over repetitions, then the statistics of the spread
//! metric (`mb_s_min`, `mb_s_median`, …, `mb_s_ci95_high`).

use crate::campaign::Outcome;
use crate::metrics::{DISK_UTIL, LATENCY_DEPTH, TRIM_IOPS, TRIM_MB_S};
use std::fmt::Write;

/// Metrics printed per point (mean over repetitions): the rates and latencies that lead
/// [`crate::metrics::METRIC_NAMES`], without its byte, time and CPU counters. `mb_s` is decimal
/// MB/s, `mib_s` MiB/s.
pub const TABLE_METRICS: &[&str] = crate::metrics::METRIC_NAMES.split_at(11).0;

const STAT_NAMES: &[&str] = &[
    "min",
    "median",
    "max",
    "stddev",
    "spread_pct",
    "ci95_low",
    "ci95_high",
];

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => {
            let s = format!("{x:.6}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            if s.is_empty() || s == "-" {
                "0".into()
            } else {
                s.to_string()
            }
        }
        _ => String::new(),
    }
}

/// Metrics only some runs have, each a column only when a point has it: its name, its
/// head in the text table, and the digits shown there.
const OPTIONAL: &[(&str, &str, usize)] = &[
    (LATENCY_DEPTH, "depth", 0),
    (DISK_UTIL, "disk util %", 1),
    (TRIM_MB_S, "trim MB/s", 1),
    (TRIM_IOPS, "trim IOPS", 0),
];

/// The column names of [`csv`] (the `OPTIONAL` metrics `shown` after the others).
pub fn csv_header(axes: &[String], stat_metric: &str, shown: &[&str]) -> Vec<String> {
    let mut h = vec!["point".to_string()];
    h.extend(axes.iter().cloned());
    h.extend(
        ["source", "target", "reps", "attempts", "flagged"]
            .iter()
            .map(|s| s.to_string()),
    );
    h.extend(TABLE_METRICS.iter().map(|s| s.to_string()));
    h.extend(shown.iter().map(|s| s.to_string()));
    h.extend(STAT_NAMES.iter().map(|s| format!("{stat_metric}_{s}")));
    h
}

/// The [`OPTIONAL`] metrics some point has (a latency target's depth, the busiest disk's
/// utilization), in their order.
fn optional_shown(outcomes: &[Outcome]) -> Vec<(&'static str, &'static str, usize)> {
    OPTIONAL
        .iter()
        .copied()
        .filter(|(m, _, _)| outcomes.iter().any(|o| o.stats.contains_key(*m)))
        .collect()
}

/// CSV, one row per point.
pub fn csv(outcomes: &[Outcome], axes: &[String], stat_metric: &str) -> String {
    let shown = optional_shown(outcomes);
    let names: Vec<&str> = shown.iter().map(|o| o.0).collect();
    let mut out = csv_header(axes, stat_metric, &names).join(",");
    out.push('\n');
    for o in outcomes {
        out.push_str(&csv_row(o, axes, &names, stat_metric).join(","));
        out.push('\n');
    }
    out
}

/// CSV of several experiments' points (the embedded default's two) as one table: an
/// `experiment` column first, then [`csv`]'s columns over every experiment's axes (a point
/// leaves another's axes empty). Two tables one after the other, each with its own header,
/// would not be one CSV file.
pub fn csv_experiments(parts: &[(&str, &[Outcome], &[String])], stat_metric: &str) -> String {
    let mut axes: Vec<String> = Vec::new();
    for a in parts.iter().flat_map(|p| p.2.iter()) {
        if !axes.contains(a) {
            axes.push(a.clone());
        }
    }
    let all: Vec<Outcome> = parts.iter().flat_map(|p| p.1.iter().cloned()).collect();
    let shown = optional_shown(&all);
    let names: Vec<&str> = shown.iter().map(|o| o.0).collect();
    let mut head = vec!["experiment".to_string()];
    head.extend(csv_header(&axes, stat_metric, &names));
    let mut out = head.join(",");
    out.push('\n');
    for (name, outcomes, _) in parts {
        for o in outcomes.iter() {
            let mut row = vec![csv_field(name)];
            row.extend(csv_row(o, &axes, &names, stat_metric));
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
    out
}

/// A point's repetitions as its tables show them: the values of the judged metric
/// (`stat_metric`, whose spread and interval sit beside it), so that CSV, text and the
/// statistics agree; a point without that metric counts its most-repeated one.
fn reps(o: &Outcome, stat_metric: &str) -> u32 {
    match o.stats.get(stat_metric) {
        Some(s) => s.n,
        None => o.stats.values().map(|s| s.n).max().unwrap_or(0),
    }
}

/// One point's cells under [`csv_header`]'s columns.
fn csv_row(o: &Outcome, axes: &[String], names: &[&str], stat_metric: &str) -> Vec<String> {
    let mut row: Vec<String> = vec![o.point.to_string()];
    for a in axes {
        row.push(csv_field(
            o.values
                .iter()
                .find(|(k, _)| k == a)
                .map(|(_, v)| v.as_str())
                .unwrap_or(""),
        ));
    }
    row.push(o.source.clone());
    row.push(csv_field(&o.target));
    row.push(reps(o, stat_metric).to_string());
    row.push(o.attempts.to_string());
    row.push(if o.flagged { "1" } else { "0" }.into());
    for m in TABLE_METRICS {
        row.push(num(o.stats.get(*m).map(|s| s.mean)));
    }
    for m in names {
        row.push(num(o.stats.get(*m).map(|s| s.mean)));
    }
    let s = o.stats.get(stat_metric);
    for v in [
        s.map(|s| s.min),
        s.map(|s| s.median),
        s.map(|s| s.max),
        s.map(|s| s.stddev),
        s.map(|s| s.spread_pct),
        s.map(|s| s.ci95_low),
        s.map(|s| s.ci95_high),
    ] {
        row.push(num(v));
    }
    row
}

/// An aligned table for people.
pub fn text(outcomes: &[Outcome], axes: &[String], stat_metric: &str) -> String {
    let shown = optional_shown(outcomes);
    let mut head: Vec<String> = axes.to_vec();
    head.extend([
        "MB/s".to_string(),
        "MiB/s".into(),
        "IOPS".into(),
        "lat p99 µs".into(),
    ]);
    head.extend(shown.iter().map(|o| o.1.to_string()));
    head.extend([
        format!("{stat_metric} 95% CI"),
        "spread".into(),
        "reps".into(),
        String::new(),
    ]);
    let mut rows = vec![head];
    for o in outcomes {
        let mut r: Vec<String> = axes
            .iter()
            .map(|a| {
                o.values
                    .iter()
                    .find(|(k, _)| k == a)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            })
            .collect();
        let mean = |m: &str| o.stats.get(m).map(|s| s.mean);
        let f = |v: Option<f64>, p: usize| v.map(|x| format!("{x:.p$}")).unwrap_or_default();
        r.push(f(mean("mb_s"), 2));
        r.push(f(mean("mib_s"), 2));
        r.push(f(mean("iops"), 0));
        r.push(f(mean("lat_p99_us"), 1));
        for (m, _, digits) in &shown {
            r.push(f(mean(m), *digits));
        }
        let s = o.stats.get(stat_metric);
        r.push(
            s.map(|s| format!("{:.2}–{:.2}", s.ci95_low, s.ci95_high))
                .unwrap_or_default(),
        );
        r.push(
            s.map(|s| format!("{:.1}%", s.spread_pct))
                .unwrap_or_default(),
        );
        r.push(reps(o, stat_metric).to_string());
        r.push(if o.flagged {
            "FLAGGED: spread over threshold".into()
        } else {
            String::new()
        });
        rows.push(r);
    }
    let cols = rows[0].len();
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v:>w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}

/// JSON: a list of points with parameters and full statistics.
pub fn json(outcomes: &[Outcome]) -> String {
    let v: Vec<serde_json::Value> = outcomes.iter().map(json_point).collect();
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

/// JSON of several experiments' points (the embedded default's two) as one list, each point
/// naming its `experiment`: two lists one after the other would not be one JSON document.
pub fn json_experiments(parts: &[(&str, &[Outcome])]) -> String {
    let v: Vec<serde_json::Value> = parts
        .iter()
        .flat_map(|(name, outcomes)| {
            outcomes.iter().map(move |o| {
                let mut p = json_point(o);
                if let Some(m) = p.as_object_mut() {
                    m.insert("experiment".into(), serde_json::json!(name));
                }
                p
            })
        })
        .collect();
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

fn json_point(o: &Outcome) -> serde_json::Value {
    serde_json::json!({
        "point": o.point,
        "params": o.params,
        "source": o.source,
        "target": o.target,
        "attempts": o.attempts,
        "flagged": o.flagged,
        "stats": o.stats,
        "convergence": o.convergence.iter().map(|(b, r)| serde_json::json!({"total_bytes": b, "mb_s": r})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Stats;
    use std::collections::BTreeMap;

    fn outcome() -> Outcome {
        let mut stats = BTreeMap::new();
        stats.insert(
            "mb_s".to_string(),
            Stats::of(&[100.0, 110.0, 90.0]).unwrap(),
        );
        stats.insert("iops".to_string(), Stats::of(&[25.0, 25.0, 25.0]).unwrap());
        Outcome {
            point: 0,
            values: vec![
                ("system".into(), "fig16".into()),
                ("bs".into(), "4194304".into()),
            ],
            params: BTreeMap::new(),
            source: "simulated".into(),
            target: "array:a,b".into(),
            attempts: 1,
            stats,
            flagged: true,
            convergence: vec![],
        }
    }

    #[test]
    fn csv_has_one_column_per_axis_then_metrics_then_stats() {
        let axes = vec!["system".to_string(), "bs".to_string()];
        let out = csv(&[outcome()], &axes, "mb_s");
        let mut lines = out.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(
            &head[..8],
            ["point", "system", "bs", "source", "target", "reps", "attempts", "flagged"]
        );
        assert_eq!(head[8], "mb_s");
        assert!(
            head.contains(&"lat_p99_us")
                && head.contains(&"mb_s_spread_pct")
                && head.contains(&"mb_s_ci95_high")
        );
        let row = lines.next().unwrap();
        assert!(
            row.starts_with("0,fig16,4194304,simulated,\"array:a,b\",3,1,1,100,"),
            "{row}"
        );
        let cells: Vec<&str> = row.split(",\"array:a,b\"").collect();
        assert_eq!(cells.len(), 2);
        let spread_col = head.iter().position(|h| *h == "mb_s_spread_pct").unwrap();
        let after_target: Vec<&str> = cells[1].trim_start_matches(',').split(',').collect();
        assert_eq!(after_target[spread_col - 5], "20");
    }

    /// Two experiments' points (the embedded default's) make one CSV table, with one header
    /// over both experiments' axes, and one JSON list.
    #[test]
    fn several_experiments_make_one_table_and_one_document() {
        let a = vec![outcome()];
        let mut other = outcome();
        other.values = vec![("rw".into(), "read".into())];
        let b = vec![other];
        let (axes_a, axes_b) = (
            vec!["system".to_string(), "bs".to_string()],
            vec!["rw".to_string()],
        );
        let out = csv_experiments(&[("sim", &a, &axes_a), ("default", &b, &axes_b)], "mb_s");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(
            lines[0].starts_with("experiment,point,system,bs,rw,source,target,reps"),
            "{out}"
        );
        assert!(
            lines[1].starts_with("sim,0,fig16,4194304,,simulated,"),
            "{out}"
        );
        assert!(lines[2].starts_with("default,0,,,read,simulated,"), "{out}");
        let cells = |l: &str| l.replace("\"array:a,b\"", "T").split(',').count();
        assert!(lines.iter().all(|l| cells(l) == cells(lines[0])), "{out}");
        let j = json_experiments(&[("sim", &a), ("default", &b)]);
        let v: serde_json::Value = serde_json::from_str(&j).expect("one JSON document");
        let names: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["experiment"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["sim", "default"]);
    }

    /// `reps` counts the judged metric's values, whatever metric sorts first: a latency a
    /// run did not report leaves `lat_*` with fewer values than `mb_s`.
    #[test]
    fn reps_are_the_judged_metrics() {
        let mut o = outcome();
        o.stats
            .insert("disk_util".to_string(), Stats::of(&[50.0]).unwrap());
        let axes = vec!["system".to_string(), "bs".to_string()];
        let out = csv(&[o.clone()], &axes, "mb_s");
        let head: Vec<&str> = out.lines().next().unwrap().split(',').collect();
        let row = out.lines().nth(1).unwrap().replace("\"array:a,b\"", "T");
        let cells: Vec<&str> = row.split(',').collect();
        let col = head.iter().position(|h| *h == "reps").unwrap();
        assert_eq!(cells[col], "3", "{out}");
        let t = text(&[o], &axes, "mb_s");
        let line = t.lines().nth(1).unwrap();
        assert!(
            line.trim_end()
                .ends_with("3  FLAGGED: spread over threshold"),
            "{t}"
        );
    }

    #[test]
    fn text_marks_flagged_points() {
        let t = text(&[outcome()], &["system".into(), "bs".into()], "mb_s");
        assert!(
            t.contains("FLAGGED") && t.contains("fig16") && t.contains("100.00"),
            "{t}"
        );
        let j = json(&[outcome()]);
        assert!(j.contains("\"spread_pct\": 20.0"), "{j}");
    }
}
