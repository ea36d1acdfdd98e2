//! The limits table (seed 002's stage 2): every component on the path from host to disks with
//! its theoretical bound (disks × per-disk rate, link rates, controller rates where known),
//! against the best rate achieved, naming the component that bounds the path and how close
//! the achieved rate came to it.
//!
//! Bounds come in as plain data: from the simulator's component bounds for simulated systems,
//! or from a `[limits]` table an experiment declares for a real system.

use std::collections::BTreeMap;

use crate::chart::Source;
use crate::points::{campaigns, label};
use crate::rows::RunRow;
use crate::ReportError;

/// One component's theoretical bound, in bytes per second.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentLimit {
    pub name: String,
    /// disk, link, controller, bus, host …
    pub kind: String,
    pub bound_bytes_s: f64,
    /// How the bound was obtained (e.g. "36 × 34.5 MB/s inner-track rate").
    pub note: String,
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
        let campaign = self.campaign.as_ref().map_or(true, |c| *c == run.campaign);
        let target = self.target.as_ref().map_or(true, |t| {
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
    /// achieved / bound for the best measured rate (or predicted, when nothing was measured).
    pub ratio: Option<f64>,
    /// The component with the lowest bound: the one that limits the path.
    pub bounding: bool,
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
}

/// Build one table per input, comparing its bounds with the best median rate (`mb_s`) of the
/// runs it applies to. Components are listed from the lowest bound up.
pub fn limits_tables(runs: &[RunRow], inputs: &[LimitsInput]) -> Vec<LimitsTable> {
    inputs
        .iter()
        .map(|inp| {
            let matching: Vec<RunRow> =
                runs.iter().filter(|r| inp.applies_to(r)).cloned().collect();
            let mut best: BTreeMap<Source, Achieved> = BTreeMap::new();
            for c in campaigns(&matching) {
                for p in &c.points {
                    let Some(s) = p.stats("mb_s") else { continue };
                    let bytes_s = s.median * 1e6;
                    if best.get(&p.source).map_or(true, |b| bytes_s > b.bytes_s) {
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
            let measured = best.remove(&Source::Measured);
            let predicted = best.remove(&Source::Predicted);
            let reference = best.remove(&Source::Reference);
            let achieved = measured
                .as_ref()
                .or(predicted.as_ref())
                .or(reference.as_ref())
                .map(|a| a.bytes_s);
            let mut comps: Vec<ComponentLimit> = inp
                .components
                .iter()
                .filter(|c| c.bound_bytes_s.is_finite() && c.bound_bytes_s > 0.0)
                .cloned()
                .collect();
            comps.sort_by(|a, b| a.bound_bytes_s.total_cmp(&b.bound_bytes_s));
            let bounding = comps.first().map(|c| c.name.clone());
            let rows = comps
                .into_iter()
                .enumerate()
                .map(|(i, component)| LimitsRow {
                    ratio: achieved.map(|a| a / component.bound_bytes_s),
                    bounding: i == 0,
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
        ReportError::usage(format!(
            "{origin}: not valid TOML ({})",
            e.message().lines().next().unwrap_or("parse error")
        ))
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
                    kind: String::new(),
                    bound_bytes_s: mb * 1e6,
                    note: String::new(),
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
            note: String::new(),
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
}
