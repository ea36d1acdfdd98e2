//! Reference measurements (CSV files such as the seed studies' tables) stored as
//! `source = reference` rows, so reports overlay them on measured and simulated curves.
//!
//! Each `[[reference.series]]` turns every CSV row into one stored row: `params` are templates
//! over the row's columns (`"fig{figure}"`, `"{block_kib*1024}"` for KiB → bytes) and `metrics`
//! name the column holding each metric. Rows whose metric cells are all empty are skipped, and
//! so are rows of a configuration none of the campaign's points runs: a `system` or `rw` no
//! point runs (a sweep narrowed with `--set system=…` or `--set rw=read` overlays those rows,
//! not every figure's and direction's). See [`Scope::admit`].

use crate::campaign::Event;
use crate::db::{params_key, Db, RunRecord};
use crate::error::LabError;
use crate::experiment::{canonical_value, display_value, Experiment, Reference};
use crate::plan::PointPlan;
use std::collections::{BTreeMap, BTreeSet};

/// Split one CSV line (fields may be double-quoted, with `""` for a quote).
pub fn split_csv_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

fn fmt_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e18 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Evaluate `a*b/c`, left to right: each operand a number, or a name `value` looks up.
/// Shared by reference templates (over CSV columns) and computed workload values (over a
/// point's parameters).
pub fn arith(expr: &str, value: impl Fn(&str) -> Result<f64, String>) -> Result<f64, String> {
    let operand = |t: &str| -> Result<f64, String> {
        let t = t.trim();
        if t.is_empty() {
            return Err(format!("'{expr}': an operator lacks an operand"));
        }
        match t.parse::<f64>() {
            Ok(n) => Ok(n),
            Err(_) => value(t),
        }
    };
    let mut ops = expr.match_indices(['*', '/']).peekable();
    let first_end = ops.peek().map(|(j, _)| *j).unwrap_or(expr.len());
    let mut acc = operand(&expr[..first_end])?;
    while let Some((j, op)) = ops.next() {
        let next_end = ops.peek().map(|(k, _)| *k).unwrap_or(expr.len());
        let x = operand(&expr[j + 1..next_end])?;
        acc = if op == "*" { acc * x } else { acc / x };
    }
    Ok(acc)
}

/// Fill a template over a CSV row: `{col}` (the cell as written), or arithmetic over columns
/// and numbers with `*` and `/`, left to right: `{block_kib*1024}`, `{count*block_bytes}`.
pub fn fill(template: &str, row: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("'{template}': unclosed '{{'"))?;
        let expr = &after[..end];
        let cell = |col: &str| {
            row.get(col.trim()).ok_or_else(|| {
                format!(
                    "'{template}': no column '{}' (columns: {})",
                    col.trim(),
                    row.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            })
        };
        if !expr.contains(['*', '/']) {
            out.push_str(cell(expr)?);
        } else {
            let acc = arith(expr, |t| {
                let c = cell(t)?;
                c.parse().map_err(|_| {
                    format!("'{template}': '{c}' in column {} is not a number", t.trim())
                })
            })?;
            out.push_str(&fmt_number(acc));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A reference row: its parameters, and its metrics.
pub type RefRow = (BTreeMap<String, String>, BTreeMap<String, f64>);

/// Rows (params, metrics) a reference yields from CSV text.
pub fn rows_of(r: &Reference, text: &str) -> Result<Vec<RefRow>, String> {
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let header = split_csv_line(lines.next().ok_or("empty file")?);
    let mut out = Vec::new();
    for (n, line) in lines.enumerate() {
        let cells = split_csv_line(line);
        let row: BTreeMap<String, String> = header.iter().cloned().zip(cells).collect();
        for s in &r.series {
            let mut params = BTreeMap::new();
            for (k, t) in &s.params {
                let v = fill(t, &row).map_err(|e| format!("row {}: {e}", n + 2))?;
                let v = canonical_value(k, &v).map_err(|e| format!("row {}: {k}: {e}", n + 2))?;
                params.insert(k.clone(), display_value(k, &v));
            }
            let mut metrics = BTreeMap::new();
            for (m, col) in &s.metrics {
                let cell = row
                    .get(col)
                    .ok_or_else(|| format!("no column '{col}' (columns: {})", header.join(", ")))?;
                if let Ok(v) = cell.parse::<f64>() {
                    metrics.insert(m.clone(), v);
                }
            }
            if !metrics.is_empty() {
                out.push((params, metrics));
            }
        }
    }
    Ok(out)
}

/// Parameters that say how much a point moves, not what it measures: a reference row
/// measured with another amount is still the same configuration, overlaid with its amount
/// kept (the report names it), where another value of any other parameter the points fix
/// (`rw`, `system`) is a configuration no point runs.
pub const AMOUNT_KEYS: &[&str] = &["size", "io_size", "number_ios", "runtime"];

/// What a campaign's points run, to choose the reference rows that belong with them.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Each parameter the points store (swept axes, fixed target parameters) → its values.
    stored: BTreeMap<String, BTreeSet<String>>,
    /// Workload options the experiment fixes for every point, which the points do not
    /// store (`rw = "read"`, `--set rw=read`), as stored values.
    fixed: BTreeMap<String, String>,
}

impl Scope {
    /// The scope of `plans`, the points of `exp`.
    pub fn of(exp: &Experiment, plans: &[PointPlan]) -> Scope {
        let mut stored: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for p in plans {
            for (k, v) in &p.params {
                stored.entry(k.clone()).or_default().insert(v.clone());
            }
        }
        let fixed = exp
            .workload
            .iter()
            // `{…}` values are computed per point: not one fixed value.
            .filter(|(k, v)| !v.contains('{') && !stored.contains_key(k))
            .filter_map(|(k, v)| {
                let c = canonical_value(k, v).ok()?;
                Some((k.clone(), display_value(k, &c)))
            })
            .collect();
        Scope { stored, fixed }
    }

    /// The parameters to store a reference row with, or `None` when the row is of a
    /// configuration no point runs. A parameter the points store keeps a row when its value is
    /// one the points run; when the points fix it to one value, only that value does; a
    /// numeric axis the points sweep keeps every value (the reference's between and beyond
    /// are on the same curve). A workload option the experiment fixes keeps a row of that
    /// value, stored without it as the points are; an [`AMOUNT_KEYS`] value other than the
    /// points' stays with the row. A parameter the points neither store nor fix keeps it.
    pub fn admit(&self, params: &BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        for (k, v) in params {
            if let Some(values) = self.stored.get(k) {
                let axis = values.len() > 1 && values.iter().all(|x| x.parse::<f64>().is_ok());
                if !axis && !values.contains(v) {
                    return None;
                }
            } else if let Some(f) = self.fixed.get(k) {
                if f == v {
                    continue;
                }
                if !AMOUNT_KEYS.contains(&k.as_str()) {
                    return None;
                }
            }
            out.insert(k.clone(), v.clone());
        }
        Some(out)
    }
}

/// Store the experiment's references (skipping rows already stored, and rows of
/// configurations no point of `scope` runs: [`Scope::admit`]). A missing file is a note, not
/// an error: the campaign's own runs do not depend on it.
pub fn import(
    exp: &Experiment,
    scope: &Scope,
    db: &mut Db,
    campaign_id: i64,
    observe: &mut dyn FnMut(&Event),
    now: u64,
) -> Result<u64, LabError> {
    let mut stored = 0;
    for r in &exp.references {
        let text = match std::fs::read_to_string(&r.file) {
            Ok(t) => t,
            Err(e) => {
                observe(&Event::Note(format!(
                    "reference {}: {e}; not overlaid",
                    r.file.display()
                )));
                continue;
            }
        };
        let rows = rows_of(r, &text)
            .map_err(|e| LabError::usage(format!("reference {}: {e}", r.file.display())))?;
        for (i, (params, metrics)) in rows.into_iter().enumerate() {
            let Some(params) = scope.admit(&params) else {
                continue;
            };
            let key = params_key(&params);
            if !db.done_reps(&exp.hash, &key, "reference", 0)?.is_empty() {
                continue;
            }
            db.insert_run(&RunRecord {
                campaign_id,
                environment_id: None,
                experiment: exp.name.clone(),
                experiment_hash: exp.hash.clone(),
                point: i as u64,
                rep: 0,
                attempt: 0,
                source: "reference".into(),
                target: r.label.clone(),
                params,
                metrics,
                workload: String::new(),
                result_json: None,
                started_at: now,
                ended_at: now,
            })?;
            stored += 1;
        }
    }
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ReferenceSeries;

    #[test]
    fn llnl_table_becomes_read_and_write_rows_in_bytes() {
        let csv = "figure,chain,block_kib,read_mb_s,write_mb_s\n11,4+p,0.5,1.5,1.0\n11,4+p,2048.0,47.1,\n";
        let r = Reference {
            file: "x.csv".into(),
            label: "x".into(),
            series: vec![
                ReferenceSeries {
                    params: vec![
                        ("system".into(), "fig{figure}".into()),
                        ("rw".into(), "read".into()),
                        ("bs".into(), "{block_kib*1024}".into()),
                    ],
                    metrics: vec![("mb_s".into(), "read_mb_s".into())],
                },
                ReferenceSeries {
                    params: vec![
                        ("system".into(), "fig{figure}".into()),
                        ("rw".into(), "write".into()),
                        ("bs".into(), "{block_kib*1024}".into()),
                    ],
                    metrics: vec![("mb_s".into(), "write_mb_s".into())],
                },
            ],
        };
        let rows = rows_of(&r, csv).unwrap();
        assert_eq!(rows.len(), 3, "the empty write cell is skipped");
        assert_eq!(rows[0].0["bs"], "512");
        assert_eq!(rows[0].0["system"], "fig11");
        assert_eq!(rows[1].0["rw"], "write");
        assert_eq!(rows[2].0["bs"], "2097152");
        assert_eq!(rows[2].1["mb_s"], 47.1);
    }

    fn params(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn scope(stored: &[(&str, &[&str])], fixed: &[(&str, &str)]) -> Scope {
        Scope {
            stored: stored
                .iter()
                .map(|(k, vs)| (k.to_string(), vs.iter().map(|v| v.to_string()).collect()))
                .collect(),
            fixed: params(fixed),
        }
    }

    #[test]
    fn rows_of_other_systems_are_not_for_these_points() {
        let fig12 = scope(&[("system", &["fig12"]), ("bs", &["512", "65536"])], &[]);
        let row = |sys: &str| params(&[("system", sys), ("bs", "65536")]);
        assert!(fig12.admit(&row("fig12")).is_some());
        assert!(fig12.admit(&row("fig11")).is_none());
        assert!(
            fig12.admit(&params(&[("bs", "65536")])).is_some(),
            "a row naming no system"
        );
        assert!(
            scope(&[("bs", &["65536"])], &[])
                .admit(&row("fig11"))
                .is_some(),
            "points naming no system (a real target)"
        );
        // A block size between the swept ones is on the same curve.
        let between = params(&[("system", "fig12"), ("bs", "4096")]);
        assert_eq!(fig12.admit(&between), Some(between.clone()));
    }

    /// `--set rw=read` fixes the direction without storing it: the write rows are of no
    /// point (they were overlaid as "rw=write (reference)" beside no simulated curve), and
    /// the read rows are stored without `rw`, as the points are, so that they overlay them.
    #[test]
    fn rows_of_a_direction_no_point_runs_are_not_for_these_points() {
        let read = scope(&[("system", &["fig12"])], &[("rw", "read")]);
        let row = |rw: &str| params(&[("system", "fig12"), ("rw", rw), ("bs", "65536")]);
        assert_eq!(read.admit(&row("write")), None);
        assert_eq!(
            read.admit(&row("read")),
            Some(params(&[("system", "fig12"), ("bs", "65536")]))
        );
        // Swept directions keep each row of a direction run, and no other.
        let both = scope(&[("rw", &["read", "write"])], &[]);
        assert!(both.admit(&row("write")).is_some());
        assert!(both.admit(&row("randread")).is_none());
        // Another amount is the same configuration: the row keeps its size for the report.
        let small = scope(&[], &[("size", "268435456")]);
        let sized = params(&[("bs", "65536"), ("size", "8589934592")]);
        assert_eq!(small.admit(&sized), Some(sized.clone()));
        let same = scope(&[], &[("size", "8589934592")]);
        assert_eq!(same.admit(&sized), Some(params(&[("bs", "65536")])));
    }

    #[test]
    fn csv_quotes_and_bad_columns() {
        assert_eq!(
            split_csv_line("a,\"b, c\",\"d\"\"e\""),
            ["a", "b, c", "d\"e"]
        );
        let row = BTreeMap::from([("x".to_string(), "2".to_string())]);
        assert_eq!(fill("{x/4}", &row).unwrap(), "0.5");
        assert!(fill("{y}", &row).unwrap_err().contains("no column 'y'"));
        let fig26 = BTreeMap::from([
            ("count".to_string(), "1000".to_string()),
            ("block_bytes".to_string(), "8192".to_string()),
        ]);
        assert_eq!(fill("{count*block_bytes}", &fig26).unwrap(), "8192000");
        assert_eq!(fill("{count*block_bytes/1024}k", &fig26).unwrap(), "8000k");
        assert!(fill("{count*nope}", &fig26)
            .unwrap_err()
            .contains("no column 'nope'"));
    }
}
