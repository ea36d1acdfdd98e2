//! Provenance of each campaign in a results database — the experiment's description, the
//! command that ran it, its `[limits]` table and the environment it ran on — for the page.
//!
//! Runs, convergence and environments are read through `raidlab_lab::db`; the list of
//! campaigns (experiment name, hash, path and text) is read here, read-only.

use std::collections::BTreeMap;
use std::path::Path;

use raidlab_lab::db::{campaign_label, Db, Environment};
use raidlab_lab::experiment::Experiment;
use rusqlite::{Connection, OpenFlags};

use crate::limits::{limits_from_toml, LimitsInput};
use crate::CampaignMeta;

/// One campaign as recorded by `raidlab sweep`.
#[derive(Debug, Clone, Default)]
pub struct CampaignRecord {
    /// The label runs carry in `RunRow::campaign`.
    pub label: String,
    pub experiment_path: String,
    pub experiment_text: String,
    pub environments: Vec<Environment>,
}

/// The campaigns recorded in the database at `path` (already opened as `db`), the latest
/// invocation of each label last.
pub fn read_campaigns(path: &Path, db: &Db) -> Result<Vec<CampaignRecord>, String> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open {} read-only: {e}", path.display()))?;
    let mut st = conn
        .prepare("SELECT id, experiment, experiment_hash, experiment_path, experiment_text FROM campaigns ORDER BY id")
        .map_err(|e| format!("cannot list campaigns: {e}"))?;
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })
        .map_err(|e| format!("cannot list campaigns: {e}"))?;
    let mut by_label: BTreeMap<String, CampaignRecord> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for row in rows {
        let (id, experiment, hash, exp_path, text) =
            row.map_err(|e| format!("cannot list campaigns: {e}"))?;
        let label = campaign_label(&experiment, &hash);
        let envs = db.environments(id).map_err(|e| e.to_string())?;
        let rec = by_label.entry(label.clone()).or_insert_with(|| {
            order.push(label.clone());
            CampaignRecord {
                label: label.clone(),
                ..Default::default()
            }
        });
        rec.experiment_path = exp_path;
        rec.experiment_text = text;
        for e in envs {
            if !rec.environments.contains(&e) {
                rec.environments.push(e);
            }
        }
    }
    Ok(order
        .into_iter()
        .filter_map(|l| by_label.remove(&l))
        .collect())
}

/// What the page shows about a campaign.
pub fn campaign_meta(rec: &CampaignRecord) -> CampaignMeta {
    let doc: Option<toml::Table> = rec.experiment_text.parse().ok();
    let description = doc
        .as_ref()
        .and_then(|d| d.get("description"))
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    let command = if rec.experiment_path.is_empty() {
        String::new()
    } else {
        format!("raidlab sweep {}", rec.experiment_path)
    };
    let mut environment = Vec::new();
    let many = rec.environments.len() > 1;
    for (i, e) in rec.environments.iter().enumerate() {
        let tag = if many {
            format!(" ({})", i + 1)
        } else {
            String::new()
        };
        environment.push((format!("host{tag}"), e.hostname.clone()));
        environment.push((format!("kernel{tag}"), e.kernel.clone()));
        environment.push((format!("CPU{tag}"), e.cpu_model.clone()));
        environment.push((format!("raidlab{tag}"), e.raidlab_version.clone()));
        for d in &e.devices {
            let mut parts = vec![format!("{} on {}", d.target, d.block_device)];
            for (k, v) in [
                ("model", &d.model),
                ("scheduler", &d.scheduler),
                ("rotational", &d.rotational),
                ("nr_requests", &d.nr_requests),
                ("read_ahead_kb", &d.read_ahead_kb),
                ("logical_block_size", &d.logical_block_size),
                ("max_sectors_kb", &d.max_sectors_kb),
            ] {
                if let Some(v) = v {
                    parts.push(format!("{k}={v}"));
                }
            }
            environment.push((format!("device{tag}"), parts.join(", ")));
        }
    }
    if !rec.experiment_text.trim().is_empty() {
        environment.push(("experiment".into(), rec.experiment_text.trim().to_string()));
    }
    let (spread_threshold, spread_metric, points_defined) = sweep_rules(rec);
    CampaignMeta {
        description,
        command,
        environment,
        spread_threshold,
        spread_metric,
        points_defined,
    }
}

/// From the stored experiment: its `[repeat] spread_threshold` and `metric` (as the sweep
/// judged its points) and how many points its sweep defines. The lab's own parser and sweep
/// expansion read it; when the text no longer parses (e.g. a file it names is gone), the
/// `[repeat]` table is read directly and the number of points is unknown.
fn sweep_rules(rec: &CampaignRecord) -> (Option<f64>, String, Option<u64>) {
    if rec.experiment_text.trim().is_empty() {
        return (None, String::new(), None);
    }
    let base = Path::new(&rec.experiment_path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let origin = if rec.experiment_path.is_empty() {
        rec.label.clone()
    } else {
        rec.experiment_path.clone()
    };
    if let Ok(exp) = Experiment::parse(&rec.experiment_text, &origin, base, &[]) {
        let n = raidlab_lab::sweep::expand(&exp.axes, &exp.exclude).len() as u64;
        return (
            exp.repeat.spread_threshold,
            exp.repeat.metric.clone(),
            Some(n),
        );
    }
    let doc: Option<toml::Table> = rec.experiment_text.parse().ok();
    let repeat = doc
        .as_ref()
        .and_then(|d| d.get("repeat"))
        .and_then(|r| r.as_table());
    let threshold = repeat
        .and_then(|r| r.get("spread_threshold"))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)));
    let metric = repeat
        .and_then(|r| r.get("metric"))
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    (threshold, metric, None)
}

/// The `[limits]` an experiment declares, applied to its own campaign unless it names one.
pub fn campaign_limits(rec: &CampaignRecord) -> Result<Option<LimitsInput>, crate::ReportError> {
    let origin = if rec.experiment_path.is_empty() {
        format!("experiment of {}", rec.label)
    } else {
        rec.experiment_path.clone()
    };
    let mut l = limits_from_toml(&rec.experiment_text, &origin)?;
    if let Some(l) = l.as_mut() {
        if l.campaign.is_none() {
            l.campaign = Some(rec.label.clone());
        }
    }
    Ok(l)
}
