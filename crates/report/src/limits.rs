//! The limits table (seed 002's stage 2): every component on the path from host to disks with
//! its theoretical bound (disks × per-disk rate, link rates, controller rates where known),
//! against the best rate achieved, naming the component that bounds the path and how close
//! the achieved rate came to it.
//!
//! Bounds come in as plain data: from the simulator's component bounds for simulated systems,
//! or from a `[limits]` table an experiment declares for a real system. Simulated bounds come
//! per direction: the read bounds against the best read rate, the write bounds against the
//! best write rate, each naming its own bounding component. A declared table's bounds are
//! for any direction, against the best rate of all.

use std::collections::BTreeMap;

use crate::chart::Source;
use crate::points::{campaigns, label};
use crate::rows::RunRow;
use crate::ReportError;

/// One component's theoretical bound, in bytes per second.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ComponentLimit {
    pub name: String,
    /// disk, link, controller, bus, host …
    pub kind: String,
    /// With a write bound: for reads. Without: for either direction. Not finite: none.
    pub bound_bytes_s: f64,
    /// How the bound was obtained (e.g. "36 × 34.5 MB/s inner-track rate").
    pub note: String,
    /// The bound on writes, where known apart (the simulator's); `None` for a declared one.
    pub write_bound_bytes_s: Option<f64>,
}

/// The components on one path, and which runs they apply to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LimitsInput {
    /// Campaign whose runs are compared; `None` for every campaign.
    pub campaign: Option<String>,
    /// Only runs whose target starts with this (e.g. `/dev/sd`), or is this with
    /// [`whole_target`](Self::whole_target); `None` for all.
    pub target: Option<String>,
    /// Whether `target` must be a run's whole target, not only its start: a simulated
    /// system's table lists the components on the paths of exactly the LUNs its runs drive
    /// (`sim:x.toml` all of them at once, `sim:x.toml#lun0` that one), so it is not for
    /// runs of another LUN whose target merely starts the same.
    pub whole_target: bool,
    /// Where the bounds come from, shown with the table (e.g. "simulator model systems/fc.toml").
    pub origin: String,
    pub components: Vec<ComponentLimit>,
}

impl LimitsInput {
    /// Whether this input's bounds are for `run`: its campaign, and its target.
    pub fn applies_to(&self, run: &RunRow) -> bool {
        let campaign = self.campaign.as_ref().is_none_or(|c| *c == run.campaign);
        let target = self.target.as_ref().is_none_or(|t| {
            if self.whole_target {
                run.target == *t
            } else {
                run.target.starts_with(t.as_str())
            }
        });
        campaign && target
    }
}

/// The best rate found among the runs a limits input applies to.
#[derive(Debug, Clone, PartialEq)]
pub struct Achieved {
    pub bytes_s: f64,
    pub source: Source,
    /// The configuration that achieved it (`bs=1m, rw=read`).
    pub config: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LimitsRow {
    pub component: ComponentLimit,
    /// achieved / bound for the best measured rate (or predicted, when nothing was measured);
    /// with write bounds, the best read rate against the read bound.
    pub ratio: Option<f64>,
    /// The component with the lowest bound: the one that limits the path.
    pub bounding: bool,
    /// The best write rate against the write bound, and whether it is the lowest write bound.
    pub write_ratio: Option<f64>,
    pub write_bounding: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LimitsTable {
    pub campaign: Option<String>,
    pub target: Option<String>,
    pub origin: String,
    /// Best measured, and best simulated, rate among the matching runs.
    pub measured: Option<Achieved>,
    pub predicted: Option<Achieved>,
    pub rows: Vec<LimitsRow>,
    /// Name of the bounding component.
    pub bounding: Option<String>,
    /// Whether the bounds come per direction (some component has a write bound): then
    /// `measured`, `predicted`, `bounding` and `ratio` are about reads, and these about writes.
    pub by_direction: bool,
    pub write_measured: Option<Achieved>,
    pub write_predicted: Option<Achieved>,
    pub write_bounding: Option<String>,
}

/// The best median of `metric` among `matching`'s points: measured, predicted, reference.
type Best = (Option<Achieved>, Option<Achieved>, Option<Achieved>);

fn best(matching: &[RunRow], metric: &str) -> Best {
    let mut best: BTreeMap<Source, Achieved> = BTreeMap::new();
    for c in campaigns(matching) {
        for p in &c.points {
            let Some(s) = p.stats(metric) else {
                continue;
            };
            let bytes_s = s.median * 1e6;
            if bytes_s > 0.0 && best.get(&p.source).is_none_or(|b| bytes_s > b.bytes_s) {
                best.insert(
                    p.source,
                    Achieved {
                        bytes_s,
                        source: p.source,
                        config: label(p, &c.varying),
                    },
                );
            }
        }
    }
    (
        best.remove(&Source::Measured),
        best.remove(&Source::Predicted),
        best.remove(&Source::Reference),
    )
}

/// Build one table per input, comparing its bounds with the best median rate (`mb_s`) of the
/// runs it applies to; with write bounds (a simulated system's), the read bounds with the best
/// read rate (`read_mb_s`) and the write bounds with the best write rate (`write_mb_s`).
/// Components are listed from the lowest (read) bound up.
pub fn limits_tables(runs: &[RunRow], inputs: &[LimitsInput]) -> Vec<LimitsTable> {
    inputs
        .iter()
        .map(|inp| {
            let matching: Vec<RunRow> =
                runs.iter().filter(|r| inp.applies_to(r)).cloned().collect();
            let usable = |x: f64| x.is_finite() && x > 0.0;
            let by_direction = inp
                .components
                .iter()
                .any(|c| c.write_bound_bytes_s.is_some_and(usable));
            let (reads, writes) = if by_direction {
                (best(&matching, "read_mb_s"), best(&matching, "write_mb_s"))
            } else {
                (best(&matching, "mb_s"), (None, None, None))
            };
            // The best measured rate, else the predicted, else the reference's.
            let top =
                |(m, p, r): &Best| m.as_ref().or(p.as_ref()).or(r.as_ref()).map(|a| a.bytes_s);
            let (achieved, write_achieved) = (top(&reads), top(&writes));
            let ((measured, predicted, reference), (write_measured, write_predicted, write_ref)) =
                (reads, writes);
            let write_of = |c: &ComponentLimit| c.write_bound_bytes_s.filter(|&x| usable(x));
            let mut comps: Vec<ComponentLimit> = inp
                .components
                .iter()
                .filter(|c| usable(c.bound_bytes_s) || write_of(c).is_some())
                .cloned()
                .collect();
            // The lowest bound of a direction; of equals, the first given (a component before
            // the LUN it bounds).
            let lowest = |f: &dyn Fn(&ComponentLimit) -> Option<f64>| {
                comps
                    .iter()
                    .filter_map(|c| Some((f(c)?, c.name.clone())))
                    .fold(None, |m: Option<(f64, String)>, x| match m {
                        Some(m) if m.0 <= x.0 => Some(m),
                        _ => Some(x),
                    })
                    .map(|(_, n)| n)
            };
            let bounding = lowest(&|c| Some(c.bound_bytes_s).filter(|&x| usable(x)));
            let write_bounding = lowest(&write_of);
            // Lowest read bound first (of equals, as given); those with none (a parity engine)
            // after, by write bound.
            let key = |c: &ComponentLimit| {
                if usable(c.bound_bytes_s) {
                    (c.bound_bytes_s, 0.0)
                } else {
                    (f64::INFINITY, write_of(c).unwrap_or(f64::INFINITY))
                }
            };
            comps.sort_by(|a, b| {
                let (a, b) = (key(a), key(b));
                a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1))
            });
            let rows = comps
                .into_iter()
                .map(|component| LimitsRow {
                    ratio: achieved
                        .filter(|_| usable(component.bound_bytes_s))
                        .map(|a| a / component.bound_bytes_s),
                    bounding: bounding.as_ref() == Some(&component.name),
                    write_ratio: write_achieved.zip(write_of(&component)).map(|(a, b)| a / b),
                    write_bounding: write_bounding.as_ref() == Some(&component.name),
                    component,
                })
                .collect();
            LimitsTable {
                campaign: inp.campaign.clone(),
                target: inp.target.clone(),
                origin: inp.origin.clone(),
                measured: measured.or(reference),
                predicted,
                rows,
                bounding,
                by_direction,
                write_measured: write_measured.or(write_ref),
                write_predicted,
                write_bounding,
            }
        })
        .collect()
}

/// Read a `[limits]` table from an experiment (or limits) TOML file:
///
/// ```toml
/// [limits]
/// campaign = "osc-full"            # optional: which campaign; default all
/// target = "/dev/sdb"              # optional: runs whose target starts with this
/// "FC links (2 × 212.5 MB/s)" = 425                       # MB/s (decimal)
/// disks = { mb_s = 1242, kind = "disk", note = "36 × 34.5 MB/s inner tracks" }
/// ```
///
/// Rates are decimal MB/s. A file without a `[limits]` table gives no input.
pub fn limits_from_toml(text: &str, origin: &str) -> Result<Option<LimitsInput>, ReportError> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        ReportError::usage(raidlab_lab::experiment::toml_syntax_error(origin, text, &e))
    })?;
    let Some(limits) = doc.get("limits") else {
        return Ok(None);
    };
    let Some(limits) = limits.as_table() else {
        return Err(ReportError::usage(format!(
            "{origin}: [limits] must be a table of component = MB/s"
        )));
    };
    let mut inp = LimitsInput {
        origin: format!("declared in {origin}"),
        ..Default::default()
    };
    for (key, value) in limits {
        let bad = |what: &str| {
            ReportError::usage(format!(
                "{origin}: [limits] {key}: {what} (valid: a rate in MB/s, or {{ mb_s = N, kind = \"…\", note = \"…\" }})"
            ))
        };
        match (key.as_str(), value) {
            ("campaign", toml::Value::String(s)) => inp.campaign = Some(s.clone()),
            ("target", toml::Value::String(s)) => inp.target = Some(s.clone()),
            (_, toml::Value::Integer(_) | toml::Value::Float(_)) => {
                let mb = number(value)
                    .filter(|v| *v > 0.0)
                    .ok_or_else(|| bad("not a positive rate"))?;
                inp.components.push(ComponentLimit {
                    name: key.clone(),
                    bound_bytes_s: mb * 1e6,
                    ..Default::default()
                });
            }
            (_, toml::Value::Table(t)) => {
                for k in t.keys() {
                    if !matches!(k.as_str(), "mb_s" | "kind" | "note") {
                        return Err(bad(&format!("unknown key '{k}'")));
                    }
                }
                let mb = t
                    .get("mb_s")
                    .and_then(number)
                    .filter(|v| *v > 0.0)
                    .ok_or_else(|| bad("mb_s missing or not a positive rate"))?;
                let text = |k: &str| t.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                inp.components.push(ComponentLimit {
                    name: key.clone(),
                    kind: text("kind"),
                    bound_bytes_s: mb * 1e6,
                    note: text("note"),
                    write_bound_bytes_s: None,
                });
            }
            _ => return Err(bad("not a rate")),
        }
    }
    if inp.components.is_empty() {
        return Err(ReportError::usage(format!(
            "{origin}: [limits] names no component (give component = MB/s)"
        )));
    }
    Ok(Some(inp))
}

fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str, target: &str, threads: &str, mb_s: f64) -> RunRow {
        RunRow {
            campaign: "osc".into(),
            experiment: "series".into(),
            point: 0,
            rep: 0,
            source: source.into(),
            target: target.into(),
            params: [("threads".to_string(), threads.to_string())]
                .into_iter()
                .collect(),
            metrics: [("mb_s".to_string(), mb_s)].into_iter().collect(),
        }
    }

    fn comp(name: &str, mb_s: f64) -> ComponentLimit {
        ComponentLimit {
            name: name.into(),
            kind: "k".into(),
            bound_bytes_s: mb_s * 1e6,
            ..Default::default()
        }
    }

    #[test]
    fn names_the_lowest_bound_and_the_achieved_fraction_of_each() {
        // Seed 002's stage 2 numbers: disks 36 × 34.5, FC 2 × 212.5; best read ≈ 280 MB/s.
        let runs = vec![
            run("measured", "/dev/x", "1", 200.0),
            run("measured", "/dev/x", "4", 280.0),
            run("measured", "/dev/x", "4", 270.0),
        ];
        let input = LimitsInput {
            origin: "test".into(),
            components: vec![
                comp("disks", 1242.0),
                comp("FC links", 425.0),
                comp("switch", 2000.0),
            ],
            ..Default::default()
        };
        let t = &limits_tables(&runs, &[input])[0];
        assert_eq!(t.bounding.as_deref(), Some("FC links"));
        let best = t.measured.as_ref().unwrap();
        assert_eq!(best.bytes_s, 275e6, "median of the two 4-thread runs");
        assert_eq!(best.config, "threads=4");
        let names: Vec<&str> = t.rows.iter().map(|r| r.component.name.as_str()).collect();
        assert_eq!(names, ["FC links", "disks", "switch"]);
        assert!(t.rows[0].bounding && !t.rows[1].bounding);
        assert!((t.rows[0].ratio.unwrap() - 275.0 / 425.0).abs() < 1e-12);
    }

    #[test]
    fn target_filter_and_predicted_rates_are_kept_apart() {
        let runs = vec![
            run("measured", "/dev/x", "1", 50.0),
            run("simulated", "sim:a.toml#0", "1", 80.0),
            run("simulated", "sim:b.toml", "1", 999.0),
        ];
        let input = LimitsInput {
            target: Some("sim:a.toml".into()),
            components: vec![comp("disk", 100.0)],
            ..Default::default()
        };
        let t = &limits_tables(&runs, &[input])[0];
        assert!(t.measured.is_none());
        assert_eq!(t.predicted.as_ref().unwrap().bytes_s, 80e6);
        assert!((t.rows[0].ratio.unwrap() - 0.8).abs() < 1e-12);
    }

    /// A simulated LUN's table is for that LUN's runs: not for another LUN of the same
    /// system, nor for the runs of all its LUNs at once, whose targets start the same.
    #[test]
    fn a_whole_target_table_is_for_exactly_that_targets_runs() {
        let runs = vec![
            run("simulated", "sim:s.toml#lun0", "1", 80.0),
            run("simulated", "sim:s.toml#lun01", "1", 300.0),
            run("simulated", "sim:s.toml", "1", 500.0),
        ];
        let lun0 = LimitsInput {
            target: Some("sim:s.toml#lun0".into()),
            whole_target: true,
            components: vec![comp("host/fc0", 100.0)],
            ..Default::default()
        };
        let all = LimitsInput {
            target: Some("sim:s.toml".into()),
            whole_target: true,
            components: vec![comp("all", 1000.0)],
            ..Default::default()
        };
        let t = limits_tables(&runs, &[lun0, all]);
        assert_eq!(t[0].predicted.as_ref().unwrap().bytes_s, 80e6);
        assert_eq!(t[1].predicted.as_ref().unwrap().bytes_s, 500e6);
        let prefix = LimitsInput {
            target: Some("sim:s.toml".into()),
            ..Default::default()
        };
        assert!(
            runs.iter().all(|r| prefix.applies_to(r)),
            "a declared target is a start"
        );
    }

    /// A simulated system's bounds come per direction: its reads against the read bounds,
    /// its writes against the write bounds, each naming its own bounding component (a parity
    /// engine, which bounds no read, bounds writes); of equal bounds, the component given
    /// first, before the LUN it bounds.
    #[test]
    fn reads_and_writes_are_held_to_their_own_bounds() {
        let rw = |rw: &str, bs: &str, read: f64, write: f64| RunRow {
            params: [
                ("rw".to_string(), rw.to_string()),
                ("bs".to_string(), bs.to_string()),
            ]
            .into_iter()
            .collect(),
            metrics: [
                ("mb_s".to_string(), read + write),
                ("read_mb_s".to_string(), read),
                ("write_mb_s".to_string(), write),
            ]
            .into_iter()
            .collect(),
            ..run("simulated", "sim:f.toml", "1", 0.0)
        };
        let runs = vec![
            rw("read", "1m", 49.0, 0.0),
            rw("write", "1m", 0.0, 26.0),
            rw("write", "64k", 0.0, 20.0),
        ];
        let with_write = |name: &str, read: f64, write: f64| ComponentLimit {
            write_bound_bytes_s: Some(write * 1e6),
            ..comp(name, read)
        };
        let input = LimitsInput {
            target: Some("sim:f.toml".into()),
            components: vec![
                with_write("ctrl/data", 50.0, 45.0),
                with_write("ctrl/parity", f64::INFINITY, 37.0),
                with_write("lun/l", 50.0, 37.0),
            ],
            ..Default::default()
        };
        let t = &limits_tables(&runs, &[input])[0];
        assert!(t.by_direction);
        assert_eq!(t.bounding.as_deref(), Some("ctrl/data"));
        assert_eq!(t.write_bounding.as_deref(), Some("ctrl/parity"));
        assert_eq!(t.predicted.as_ref().unwrap().bytes_s, 49e6);
        assert_eq!(t.write_predicted.as_ref().unwrap().bytes_s, 26e6);
        let row = |n: &str| t.rows.iter().find(|r| r.component.name == n).unwrap();
        let parity = row("ctrl/parity");
        assert_eq!(parity.ratio, None, "no read bound");
        assert!((parity.write_ratio.unwrap() - 26.0 / 37.0).abs() < 1e-12);
        assert!(parity.write_bounding && !parity.bounding);
        assert!((row("ctrl/data").ratio.unwrap() - 49.0 / 50.0).abs() < 1e-12);
        assert_eq!(t.rows.last().unwrap().component.name, "ctrl/parity");
        // A declared table (no write bounds) holds the best run of all to its bounds.
        let declared = LimitsInput {
            components: vec![comp("link", 100.0)],
            ..Default::default()
        };
        let t = &limits_tables(&runs, &[declared])[0];
        assert!(!t.by_direction && t.write_bounding.is_none());
        assert_eq!(t.predicted.as_ref().unwrap().bytes_s, 49e6);
    }

    #[test]
    fn limits_table_from_toml_in_both_forms_and_bad_input_is_one_line() {
        let text = r#"
            [limits]
            campaign = "osc"
            "FC links" = 425
            disks = { mb_s = 1242.0, kind = "disk", note = "36 x 34.5" }
        "#;
        let inp = limits_from_toml(text, "exp.toml").unwrap().unwrap();
        assert_eq!(inp.campaign.as_deref(), Some("osc"));
        assert_eq!(inp.components.len(), 2);
        let disks = inp.components.iter().find(|c| c.name == "disks").unwrap();
        assert_eq!((disks.bound_bytes_s, disks.kind.as_str()), (1242e6, "disk"));
        assert!(limits_from_toml("[other]\nx = 1", "e.toml")
            .unwrap()
            .is_none());
        let e = limits_from_toml("[limits]\nfc = \"fast\"", "e.toml").unwrap_err();
        assert!(
            e.is_usage()
                && e.to_string().contains("e.toml: [limits] fc")
                && !e.to_string().contains('\n'),
            "{e}"
        );
        assert!(limits_from_toml("[limits]\nfc = -3", "e.toml").is_err());
        assert!(limits_from_toml("[limits]\nfc = { mb_s = 3, colour = 1 }", "e.toml").is_err());
        assert!(limits_from_toml("[limits", "e.toml")
            .unwrap_err()
            .is_usage());
    }

    /// A file that is not TOML at all (`--limits notes.txt`) is refused saying where, in
    /// the file:line:column form of the project's other TOML errors.
    #[test]
    fn a_file_that_is_not_toml_is_refused_with_its_line_and_column() {
        let e = limits_from_toml("[limits]\nfc = 425\nsome notes here\n", "notes.txt").unwrap_err();
        let s = e.to_string();
        assert!(e.is_usage(), "{s}");
        assert!(s.starts_with("notes.txt:3:6: not valid TOML: "), "{s}");
        assert!(!s.contains('\n'), "{s}");
    }
}
