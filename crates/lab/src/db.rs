//! The results database: one SQLite file per experiment (by default `<name>.db` next to it).
//!
//! Tables (query them with any SQLite tool):
//! - `campaigns`: one row per invocation of `raidlab sweep` — experiment name, its hash, the
//!   full experiment text, start and end (seconds since the epoch; end is NULL if interrupted).
//! - `environments`: what the runs ran on — kernel, CPU model, raidlab version, host name and,
//!   for block-device targets, the device model and queue settings read from sysfs (JSON).
//! - `runs`: one row per run (one repetition of one point). Fixed columns identify it
//!   (`experiment_hash`, `point`, `rep`, `attempt`, `source`, `target`, …) and carry the exact
//!   workload and the full JSON result; then one column per swept parameter (TEXT) and one per
//!   metric (REAL, `mb_s` decimal MB/s, `mib_s` binary MiB/s, `iops`, `lat_*_us` µs, …). Columns
//!   are added as new parameters appear. A parameter whose name clashes with a fixed column is
//!   stored as `param_<name>`. `superseded` = 1 marks a run kept but not current: one of an
//!   earlier attempt, or a repetition past the `repeat.count` the experiment last ran with.
//! - `points`: per point and attempt, the statistics over repetitions (JSON) and whether the
//!   spread was over the threshold.
//! - `convergence`: the steps of a convergence search (total bytes moved, rate at that step).
//!
//! The file carries SQLite's `application_id` = [`APPLICATION_ID`] ("RLAB") and
//! `user_version` = [`SCHEMA_VERSION`]. Any other file — not SQLite, SQLite without that
//! id, or damaged — is refused with a clear error and never written to.
//!
//! Every run is inserted in its own transaction, so killing the process loses at most the run
//! in progress (runs computed together in a batch are committed together, so at most that
//! batch); a re-run skips the runs already stored (matched by experiment hash, point
//! parameters, attempt and repetition).

use crate::error::LabError;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// SQLite `application_id` of a raidlab results database: the bytes "RLAB".
pub const APPLICATION_ID: i32 = 0x524c_4142;
/// Schema version stored in `user_version`.
pub const SCHEMA_VERSION: i32 = 1;

/// One stored run, as the report reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    /// The campaign label: the experiment's name and the first 8 hex digits of its hash
    /// (`llnl2000-1a2b3c4d`), stable when an interrupted campaign is resumed.
    pub campaign: String,
    /// The experiment's name.
    pub experiment: String,
    /// Index of the point in the experiment's sweep (for `reference` rows: the CSV row).
    pub point: u64,
    /// Repetition, from 0.
    pub rep: u32,
    /// `measured`, `simulated` or `reference`.
    pub source: String,
    /// The target(s) as given (`/dev/sdb`, `array:a,b,c`, `sim:systems/x.toml`).
    pub target: String,
    /// The point's parameters (swept axes and fixed target parameters), values as written.
    pub params: BTreeMap<String, String>,
    /// Metrics: `mb_s`, `mib_s`, `iops`, `lat_mean_us`, `lat_p99_us`, … (see `metrics_of`).
    pub metrics: BTreeMap<String, f64>,
}

/// One step of a convergence search: after moving `total_bytes`, the rate was `mb_s`
/// (decimal MB/s).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvergenceStep {
    pub campaign: String,
    pub point: u64,
    pub step: u32,
    pub total_bytes: u64,
    pub mb_s: f64,
}

/// Statistics of one point over its repetitions, as stored in `points`.
#[derive(Clone, Debug, PartialEq)]
pub struct PointRow {
    pub campaign: String,
    pub experiment: String,
    pub point: u64,
    pub attempt: u32,
    pub source: String,
    pub target: String,
    pub params: BTreeMap<String, String>,
    /// Per metric: its statistics over the repetitions.
    pub stats: BTreeMap<String, crate::stats::Stats>,
    pub flagged: bool,
}

/// A device a block target sits on, with its queue settings (from /sys/block/X/…).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeviceInfo {
    /// The target as given.
    pub target: String,
    /// Kernel name (`sda`, `loop0`, `nvme0n1`).
    pub block_device: String,
    pub model: Option<String>,
    pub scheduler: Option<String>,
    pub rotational: Option<String>,
    pub nr_requests: Option<String>,
    pub read_ahead_kb: Option<String>,
    pub logical_block_size: Option<String>,
    pub max_sectors_kb: Option<String>,
}

/// What a campaign ran on.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Environment {
    pub kernel: String,
    pub cpu_model: String,
    pub raidlab_version: String,
    pub hostname: String,
    pub devices: Vec<DeviceInfo>,
}

/// Identity of a campaign (one invocation).
#[derive(Clone, Debug)]
pub struct CampaignInfo {
    pub experiment: String,
    pub experiment_hash: String,
    pub experiment_text: String,
    pub experiment_path: String,
    pub started_at: u64,
}

impl CampaignInfo {
    /// The label stored in `RunRow::campaign`.
    pub fn label(&self) -> String {
        campaign_label(&self.experiment, &self.experiment_hash)
    }
}

/// `<experiment>-<first 8 hex digits of the hash>`.
pub fn campaign_label(experiment: &str, hash: &str) -> String {
    let short: String = hash.chars().take(8).collect();
    format!("{experiment}-{short}")
}

/// One run to store.
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub campaign_id: i64,
    pub environment_id: Option<i64>,
    pub experiment: String,
    pub experiment_hash: String,
    pub point: u64,
    pub rep: u32,
    pub attempt: u32,
    pub source: String,
    pub target: String,
    pub params: BTreeMap<String, String>,
    pub metrics: BTreeMap<String, f64>,
    /// The exact workload run (JSON of the job specs).
    pub workload: String,
    /// The full result (JSON), if there is one.
    pub result_json: Option<String>,
    pub started_at: u64,
    pub ended_at: u64,
}

/// Key of a point's parameters, independent of order: `k=v` pairs joined by `;` in name order.
pub fn params_key(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The results database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
}

const FIXED_RUN_COLUMNS: &[&str] = &[
    "id",
    "campaign_id",
    "campaign",
    "environment_id",
    "experiment",
    "experiment_hash",
    "point",
    "rep",
    "attempt",
    "superseded",
    "source",
    "target",
    "params_key",
    "params_json",
    "metrics_json",
    "workload",
    "result_json",
    "started_at",
    "ended_at",
];

const SCHEMA: &str = r#"
CREATE TABLE campaigns (
    id INTEGER PRIMARY KEY,
    experiment TEXT NOT NULL,
    experiment_hash TEXT NOT NULL,
    experiment_path TEXT NOT NULL,
    experiment_text TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER
);
CREATE TABLE environments (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    kernel TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    raidlab_version TEXT NOT NULL,
    hostname TEXT NOT NULL,
    devices_json TEXT NOT NULL
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    campaign TEXT NOT NULL,
    environment_id INTEGER REFERENCES environments(id),
    experiment TEXT NOT NULL,
    experiment_hash TEXT NOT NULL,
    point INTEGER NOT NULL,
    rep INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    superseded INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    params_key TEXT NOT NULL,
    params_json TEXT NOT NULL,
    metrics_json TEXT NOT NULL,
    workload TEXT NOT NULL,
    result_json TEXT,
    started_at INTEGER NOT NULL,
    ended_at INTEGER NOT NULL,
    UNIQUE (experiment_hash, params_key, source, attempt, rep)
);
CREATE TABLE points (
    id INTEGER PRIMARY KEY,
    campaign TEXT NOT NULL,
    experiment TEXT NOT NULL,
    experiment_hash TEXT NOT NULL,
    point INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    params_key TEXT NOT NULL,
    params_json TEXT NOT NULL,
    stats_json TEXT NOT NULL,
    flagged INTEGER NOT NULL,
    UNIQUE (experiment_hash, params_key, source, attempt)
);
CREATE TABLE convergence (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    campaign TEXT NOT NULL,
    experiment_hash TEXT NOT NULL,
    point INTEGER NOT NULL,
    params_key TEXT NOT NULL,
    step INTEGER NOT NULL,
    total_bytes INTEGER NOT NULL,
    runtime_ns INTEGER NOT NULL,
    mb_s REAL NOT NULL,
    UNIQUE (experiment_hash, params_key, step)
);
"#;

fn sql_err<'a>(path: &'a Path, what: &str) -> impl Fn(rusqlite::Error) -> LabError + 'a {
    let what = what.to_string();
    move |e| LabError::failed(format!("results database {}: {what}: {e}", path.display()))
}

/// Check that `path` holds a raidlab database, without writing to it. Errors are usage
/// errors: the user named the wrong file.
fn check_ours(path: &Path) -> Result<(), LabError> {
    use std::io::Read;
    let shown = path.display();
    let mut f = std::fs::File::open(path)
        .map_err(|e| LabError::usage(format!("results database {shown}: cannot open: {e}")))?;
    let mut header = [0u8; 16];
    let mut got = 0;
    while got < header.len() {
        match f.read(&mut header[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => {
                return Err(LabError::usage(format!(
                    "results database {shown}: cannot read: {e}"
                )))
            }
        }
    }
    if got < 16 || &header != b"SQLite format 3\0" {
        return Err(LabError::usage(format!(
            "{shown} is not an SQLite database (refusing to touch it)"
        )));
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| LabError::usage(format!("{shown}: cannot open as SQLite: {e}")))?;
    let damaged = |e: rusqlite::Error| {
        LabError::usage(format!(
            "{shown} is a damaged SQLite database ({e}); refusing to touch it"
        ))
    };
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(damaged)?;
    if app != APPLICATION_ID {
        return Err(LabError::usage(format!(
            "{shown} is an SQLite database but not a raidlab results database (application_id {app:#x}, \
             expected {APPLICATION_ID:#x}); refusing to touch it"
        )));
    }
    let version: i32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(damaged)?;
    if version != SCHEMA_VERSION {
        return Err(LabError::usage(format!(
            "{shown} is a raidlab results database of schema version {version}; this raidlab reads version {SCHEMA_VERSION}"
        )));
    }
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(damaged)?;
    if check != "ok" {
        return Err(LabError::usage(format!(
            "{shown} is a damaged SQLite database ({check}); refusing to touch it"
        )));
    }
    Ok(())
}

/// Whether SQLite refused a write because the file or its folder is read-only to this
/// process.
fn sqlite_read_only(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
    )
}

/// Whether making a file failed because its folder (or file system) may not be written.
fn not_writable(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::PermissionDenied || e.raw_os_error() == Some(libc::EROFS)
}

/// The usage error for a database a sweep cannot write: what, where, and what is valid.
fn read_only(path: &Path, why: &str) -> LabError {
    LabError::usage(format!(
        "results database {} cannot be written ({why}): a sweep stores its runs in it \
         (valid: a database file this user may write, in a folder it may write)",
        path.display()
    ))
}

/// Why a database cannot be made at `path` for want of its folder (`folder X does not
/// exist`, `folder X is not a folder`), or None when the folder is there.
pub fn missing_folder(path: &Path) -> Option<String> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    if dir.is_dir() {
        return None;
    }
    let why = if dir.exists() {
        "is not a folder"
    } else {
        "does not exist"
    };
    Some(format!("folder {} {why}", dir.display()))
}

impl Db {
    /// Open a results database that must exist and be raidlab's.
    pub fn open_existing(path: &Path) -> Result<Db, LabError> {
        if !path.exists() {
            return Err(LabError::usage(format!(
                "results database {} does not exist",
                path.display()
            )));
        }
        check_ours(path)?;
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .map_err(sql_err(path, "open"))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(sql_err(path, "open"))?;
        Ok(Db {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Open the database at `path` to store runs in, creating it (with raidlab's schema) if
    /// there is no file. An existing file that is not a raidlab database is refused and left
    /// as it is. A missing folder, or a file or folder this process may not write, is a usage
    /// error naming `path` (not the side file the schema is built in), found before anything
    /// runs.
    pub fn open_or_create(path: &Path) -> Result<Db, LabError> {
        if path.exists() {
            let db = Self::open_existing(path)?;
            db.check_writable()?;
            return Ok(db);
        }
        if let Some(why) = missing_folder(path) {
            return Err(LabError::usage(format!(
                "results database {}: {why}",
                path.display()
            )));
        }
        // Build the schema in a side file and link it into place, so a crash never leaves a
        // half-made file at `path`, and a file that appears meanwhile is not replaced.
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!(".{file_name}.creating-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        // The side file is made here, not by SQLite, whose "unable to open database file"
        // would hide why (a folder this process may not write is bad input, not a failure).
        if let Err(e) = std::fs::File::create(&tmp) {
            let why = format!("cannot create it: {e}");
            return Err(if not_writable(&e) {
                read_only(path, &why)
            } else {
                LabError::failed(format!("results database {}: {why}", path.display()))
            });
        }
        {
            let conn = Connection::open(&tmp).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                sql_err(path, "create")(e)
            })?;
            let init = format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}; BEGIN; {SCHEMA} COMMIT;"
            );
            if let Err(e) = conn.execute_batch(&init) {
                drop(conn);
                let _ = std::fs::remove_file(&tmp);
                return Err(sql_err(path, "create schema")(e));
            }
        }
        let linked = std::fs::hard_link(&tmp, path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(LabError::failed(format!(
                    "results database {}: cannot create: {e}",
                    path.display()
                )))
            }
        }
        Self::open_existing(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Refuse a database this process cannot write (a read-only file, or a folder SQLite
    /// cannot make its journal in) when it is opened, not at the campaign's first write: a
    /// write is tried and rolled back.
    fn check_writable(&self) -> Result<(), LabError> {
        let tried = self.conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; PRAGMA user_version = {SCHEMA_VERSION};"
        ));
        if !self.conn.is_autocommit() {
            self.conn
                .execute_batch("ROLLBACK")
                .map_err(sql_err(&self.path, "open for writing"))?;
        }
        match tried {
            Ok(()) => Ok(()),
            Err(e) if sqlite_read_only(&e) => Err(read_only(&self.path, &e.to_string())),
            Err(e) => Err(sql_err(&self.path, "open for writing")(e)),
        }
    }

    /// The current runs (rows of superseded attempts, and repetitions past the count their
    /// experiment last ran with, left out: [`Db::supersede`]), in insertion order.
    pub fn runs(&self) -> Result<Vec<RunRow>, LabError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT campaign, experiment, point, rep, source, target, params_json, metrics_json \
                 FROM runs WHERE superseded = 0 ORDER BY id",
            )
            .map_err(sql_err(&self.path, "read runs"))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                ))
            })
            .map_err(sql_err(&self.path, "read runs"))?;
        let mut out = Vec::new();
        for row in rows {
            let (campaign, experiment, point, rep, source, target, pj, mj) =
                row.map_err(sql_err(&self.path, "read runs"))?;
            out.push(RunRow {
                campaign,
                experiment,
                point: point as u64,
                rep: rep as u32,
                source,
                target,
                params: self.json(&pj)?,
                metrics: self.json(&mj)?,
            });
        }
        Ok(out)
    }

    /// Every convergence step, by campaign, point and step.
    pub fn convergence(&self) -> Result<Vec<ConvergenceStep>, LabError> {
        let mut st = self
            .conn
            .prepare("SELECT campaign, point, step, total_bytes, mb_s FROM convergence ORDER BY campaign, point, step")
            .map_err(sql_err(&self.path, "read convergence"))?;
        let rows = st
            .query_map([], |r| {
                Ok(ConvergenceStep {
                    campaign: r.get(0)?,
                    point: r.get::<_, i64>(1)? as u64,
                    step: r.get::<_, i64>(2)? as u32,
                    total_bytes: r.get::<_, i64>(3)? as u64,
                    mb_s: r.get(4)?,
                })
            })
            .map_err(sql_err(&self.path, "read convergence"))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(sql_err(&self.path, "read convergence"))
    }

    /// Statistics per point (latest attempt of each), by campaign and point.
    pub fn points(&self) -> Result<Vec<PointRow>, LabError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT p.campaign, p.experiment, p.point, p.attempt, p.source, p.target, p.params_json, \
                 p.stats_json, p.flagged FROM points p WHERE p.attempt = (SELECT MAX(q.attempt) FROM points q \
                 WHERE q.experiment_hash = p.experiment_hash AND q.params_key = p.params_key AND q.source = p.source) \
                 ORDER BY p.campaign, p.point",
            )
            .map_err(sql_err(&self.path, "read points"))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, i64>(8)?,
                ))
            })
            .map_err(sql_err(&self.path, "read points"))?;
        let mut out = Vec::new();
        for row in rows {
            let (campaign, experiment, point, attempt, source, target, pj, sj, flagged) =
                row.map_err(sql_err(&self.path, "read points"))?;
            out.push(PointRow {
                campaign,
                experiment,
                point: point as u64,
                attempt: attempt as u32,
                source,
                target,
                params: self.json(&pj)?,
                stats: self.json(&sj)?,
                flagged: flagged != 0,
            });
        }
        Ok(out)
    }

    fn json<T: serde::de::DeserializeOwned>(&self, text: &str) -> Result<T, LabError> {
        serde_json::from_str(text).map_err(|e| {
            LabError::failed(format!(
                "results database {}: a stored JSON value is damaged: {e}",
                self.path.display()
            ))
        })
    }

    /// Start a campaign; returns its id.
    pub fn begin_campaign(&self, c: &CampaignInfo) -> Result<i64, LabError> {
        self.conn
            .execute(
                "INSERT INTO campaigns (experiment, experiment_hash, experiment_path, experiment_text, started_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![c.experiment, c.experiment_hash, c.experiment_path, c.experiment_text, c.started_at as i64],
            )
            .map_err(sql_err(&self.path, "record campaign"))?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn end_campaign(&self, campaign_id: i64, ended_at: u64) -> Result<(), LabError> {
        self.conn
            .execute(
                "UPDATE campaigns SET ended_at = ?1 WHERE id = ?2",
                params![ended_at as i64, campaign_id],
            )
            .map_err(sql_err(&self.path, "record campaign end"))?;
        Ok(())
    }

    /// Store the environment of a campaign; returns its id.
    pub fn record_environment(&self, campaign_id: i64, env: &Environment) -> Result<i64, LabError> {
        let devices = serde_json::to_string(&env.devices).unwrap_or_else(|_| "[]".into());
        self.conn
            .execute(
                "INSERT INTO environments (campaign_id, kernel, cpu_model, raidlab_version, hostname, devices_json) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![campaign_id, env.kernel, env.cpu_model, env.raidlab_version, env.hostname, devices],
            )
            .map_err(sql_err(&self.path, "record environment"))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Environments stored for a campaign.
    pub fn environments(&self, campaign_id: i64) -> Result<Vec<Environment>, LabError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT kernel, cpu_model, raidlab_version, hostname, devices_json FROM environments \
                 WHERE campaign_id = ?1 ORDER BY id",
            )
            .map_err(sql_err(&self.path, "read environments"))?;
        let rows = st
            .query_map([campaign_id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .map_err(sql_err(&self.path, "read environments"))?;
        let mut out = Vec::new();
        for row in rows {
            let (kernel, cpu_model, raidlab_version, hostname, dj) =
                row.map_err(sql_err(&self.path, "read environments"))?;
            out.push(Environment {
                kernel,
                cpu_model,
                raidlab_version,
                hostname,
                devices: self.json(&dj)?,
            });
        }
        Ok(out)
    }

    /// Repetitions already stored for a point and attempt (`source` = measured/simulated/reference).
    pub fn done_reps(
        &self,
        hash: &str,
        params_key: &str,
        source: &str,
        attempt: u32,
    ) -> Result<BTreeSet<u32>, LabError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT rep FROM runs WHERE experiment_hash = ?1 AND params_key = ?2 AND source = ?3 AND attempt = ?4",
            )
            .map_err(sql_err(&self.path, "read runs"))?;
        let rows = st
            .query_map(params![hash, params_key, source, attempt], |r| {
                r.get::<_, i64>(0)
            })
            .map_err(sql_err(&self.path, "read runs"))?;
        rows.map(|r| r.map(|v| v as u32))
            .collect::<Result<_, _>>()
            .map_err(sql_err(&self.path, "read runs"))
    }

    /// Metrics of the stored runs of a point and attempt, by repetition: the first `reps`
    /// repetitions (0 … reps−1), the experiment's current count. More may be stored, by a
    /// campaign whose count was higher; they are kept but not counted.
    pub fn point_metrics(
        &self,
        hash: &str,
        params_key: &str,
        source: &str,
        attempt: u32,
        reps: u32,
    ) -> Result<BTreeMap<u32, BTreeMap<String, f64>>, LabError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT rep, metrics_json FROM runs WHERE experiment_hash = ?1 AND params_key = ?2 AND source = ?3 \
                 AND attempt = ?4 AND rep < ?5 ORDER BY rep",
            )
            .map_err(sql_err(&self.path, "read runs"))?;
        let rows = st
            .query_map(params![hash, params_key, source, attempt, reps], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(sql_err(&self.path, "read runs"))?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (rep, mj) = row.map_err(sql_err(&self.path, "read runs"))?;
            out.insert(rep as u32, self.json(&mj)?);
        }
        Ok(out)
    }

    /// The highest attempt stored for a point, if any.
    pub fn last_attempt(
        &self,
        hash: &str,
        params_key: &str,
        source: &str,
    ) -> Result<Option<u32>, LabError> {
        let v: Option<i64> = self
            .conn
            .query_row(
                "SELECT MAX(attempt) FROM runs WHERE experiment_hash = ?1 AND params_key = ?2 AND source = ?3",
                params![hash, params_key, source],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err(&self.path, "read runs"))?
            .flatten();
        Ok(v.map(|a| a as u32))
    }

    /// Names of the columns of `runs`.
    pub fn run_columns(&self) -> Result<Vec<String>, LabError> {
        let mut st = self
            .conn
            .prepare("PRAGMA table_info(runs)")
            .map_err(sql_err(&self.path, "read schema"))?;
        let rows = st
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(sql_err(&self.path, "read schema"))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(sql_err(&self.path, "read schema"))
    }

    /// Hold back the commits of what follows until [`Db::commit_group`]: the runs of a group
    /// computed together are stored with one synchronous commit, and kept or lost together.
    /// Nothing happens if a group is already open.
    pub fn begin_group(&mut self) -> Result<(), LabError> {
        if self.conn.is_autocommit() {
            self.conn
                .execute_batch("BEGIN")
                .map_err(sql_err(&self.path, "begin"))?;
        }
        Ok(())
    }

    /// Whether a group is open ([`Db::begin_group`]).
    pub fn in_group(&self) -> bool {
        !self.conn.is_autocommit()
    }

    /// Commit the open group ([`Db::begin_group`]), if any.
    pub fn commit_group(&mut self) -> Result<(), LabError> {
        if !self.conn.is_autocommit() {
            self.conn
                .execute_batch("COMMIT")
                .map_err(sql_err(&self.path, "commit"))?;
        }
        Ok(())
    }

    /// Store one run in its own transaction (or in the open group's: [`Db::begin_group`]),
    /// adding columns for new parameters and metrics.
    pub fn insert_run(&mut self, rec: &RunRecord) -> Result<(), LabError> {
        let existing: BTreeSet<String> = self.run_columns()?.into_iter().collect();
        let path = self.path.clone();
        // A savepoint is a transaction of its own outside a group, and nests inside one.
        let tx = self.conn.savepoint().map_err(sql_err(&path, "begin"))?;
        let mut extra_cols: Vec<(String, rusqlite::types::Value)> = Vec::new();
        let mut added: BTreeSet<String> = BTreeSet::new();
        for (k, v) in &rec.params {
            let col = param_column(k);
            if !existing.contains(&col) && added.insert(col.clone()) {
                tx.execute(
                    &format!("ALTER TABLE runs ADD COLUMN {} TEXT", quote(&col)),
                    [],
                )
                .map_err(sql_err(&path, "add parameter column"))?;
            }
            extra_cols.push((col, rusqlite::types::Value::Text(v.clone())));
        }
        for (k, v) in &rec.metrics {
            let col = metric_column(k);
            if !existing.contains(&col) && added.insert(col.clone()) {
                tx.execute(
                    &format!("ALTER TABLE runs ADD COLUMN {} REAL", quote(&col)),
                    [],
                )
                .map_err(sql_err(&path, "add metric column"))?;
            }
            let value = if v.is_finite() {
                rusqlite::types::Value::Real(*v)
            } else {
                rusqlite::types::Value::Null
            };
            extra_cols.push((col, value));
        }
        // A column may be both a parameter and a metric name only by accident; keep the first.
        let mut seen = BTreeSet::new();
        extra_cols.retain(|(c, _)| seen.insert(c.clone()));
        let params_json = serde_json::to_string(&rec.params).expect("string map serializes");
        let metrics: BTreeMap<&String, f64> = rec
            .metrics
            .iter()
            .filter(|(_, v)| v.is_finite())
            .map(|(k, v)| (k, *v))
            .collect();
        let metrics_json = serde_json::to_string(&metrics).expect("number map serializes");
        let label = campaign_label(&rec.experiment, &rec.experiment_hash);
        let mut cols: Vec<String> = [
            "campaign_id",
            "campaign",
            "environment_id",
            "experiment",
            "experiment_hash",
            "point",
            "rep",
            "attempt",
            "source",
            "target",
            "params_key",
            "params_json",
            "metrics_json",
            "workload",
            "result_json",
            "started_at",
            "ended_at",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut values: Vec<rusqlite::types::Value> = {
            use rusqlite::types::Value::*;
            vec![
                Integer(rec.campaign_id),
                Text(label),
                rec.environment_id.map(Integer).unwrap_or(Null),
                Text(rec.experiment.clone()),
                Text(rec.experiment_hash.clone()),
                Integer(rec.point as i64),
                Integer(rec.rep as i64),
                Integer(rec.attempt as i64),
                Text(rec.source.clone()),
                Text(rec.target.clone()),
                Text(params_key(&rec.params)),
                Text(params_json),
                Text(metrics_json),
                Text(rec.workload.clone()),
                rec.result_json.clone().map(Text).unwrap_or(Null),
                Integer(rec.started_at as i64),
                Integer(rec.ended_at as i64),
            ]
        };
        for (c, v) in extra_cols {
            cols.push(c);
            values.push(v);
        }
        let sql = format!(
            "INSERT OR REPLACE INTO runs ({}) VALUES ({})",
            cols.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", "),
            (1..=cols.len())
                .map(|i| format!("?{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        tx.execute(&sql, rusqlite::params_from_iter(values.iter()))
            .map_err(sql_err(&path, "store run"))?;
        tx.commit().map_err(sql_err(&path, "commit run"))?;
        Ok(())
    }

    /// Mark which runs of a point are current: those of `current_attempt` whose repetition
    /// is below `reps`, the experiment's current count. The others (earlier attempts, and
    /// repetitions past a count since lowered) are superseded: kept, but left out of
    /// [`Db::runs`] and so of reports; raising the count again brings them back.
    pub fn supersede(
        &self,
        hash: &str,
        params_key: &str,
        source: &str,
        current_attempt: u32,
        reps: u32,
    ) -> Result<(), LabError> {
        self.conn
            .execute(
                "UPDATE runs SET superseded = (attempt < ?4 OR rep >= ?5) WHERE experiment_hash = ?1 AND params_key = ?2 AND source = ?3",
                params![hash, params_key, source, current_attempt as i64, reps],
            )
            .map_err(sql_err(&self.path, "mark superseded runs"))?;
        Ok(())
    }

    /// Store (or replace) a point's statistics for one attempt.
    pub fn upsert_point(&self, hash: &str, p: &PointRow) -> Result<(), LabError> {
        let pj = serde_json::to_string(&p.params).expect("string map serializes");
        let sj = serde_json::to_string(&p.stats).expect("stats serialize");
        self.conn
            .execute(
                "INSERT OR REPLACE INTO points (campaign, experiment, experiment_hash, point, attempt, source, target, \
                 params_key, params_json, stats_json, flagged) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    p.campaign,
                    p.experiment,
                    hash,
                    p.point as i64,
                    p.attempt as i64,
                    p.source,
                    p.target,
                    params_key(&p.params),
                    pj,
                    sj,
                    p.flagged as i64
                ],
            )
            .map_err(sql_err(&self.path, "store point statistics"))?;
        Ok(())
    }

    /// Store one convergence step (replacing the same step of the same point).
    #[allow(clippy::too_many_arguments)]
    pub fn insert_convergence(
        &self,
        campaign_id: i64,
        experiment: &str,
        hash: &str,
        point: u64,
        params_key: &str,
        step: u32,
        total_bytes: u64,
        runtime_ns: u64,
        mb_s: f64,
    ) -> Result<(), LabError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO convergence (campaign_id, campaign, experiment_hash, point, params_key, step, \
                 total_bytes, runtime_ns, mb_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    campaign_id,
                    campaign_label(experiment, hash),
                    hash,
                    point as i64,
                    params_key,
                    step as i64,
                    total_bytes as i64,
                    runtime_ns as i64,
                    mb_s
                ],
            )
            .map_err(sql_err(&self.path, "store convergence step"))?;
        Ok(())
    }

    /// Convergence steps already stored for a point.
    pub fn convergence_steps(
        &self,
        hash: &str,
        params_key: &str,
    ) -> Result<Vec<(u32, u64, u64, f64)>, LabError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT step, total_bytes, runtime_ns, mb_s FROM convergence WHERE experiment_hash = ?1 AND params_key = ?2 \
                 ORDER BY step",
            )
            .map_err(sql_err(&self.path, "read convergence"))?;
        let rows = st
            .query_map(params![hash, params_key], |r| {
                Ok((
                    r.get::<_, i64>(0)? as u32,
                    r.get::<_, i64>(1)? as u64,
                    r.get::<_, i64>(2)? as u64,
                    r.get(3)?,
                ))
            })
            .map_err(sql_err(&self.path, "read convergence"))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(sql_err(&self.path, "read convergence"))
    }
}

/// The `runs` column holding parameter `name`.
pub fn param_column(name: &str) -> String {
    let c = sanitize(name);
    if FIXED_RUN_COLUMNS.contains(&c.as_str()) {
        format!("param_{c}")
    } else {
        c
    }
}

/// The `runs` column holding metric `name`.
pub fn metric_column(name: &str) -> String {
    let c = sanitize(name);
    if FIXED_RUN_COLUMNS.contains(&c.as_str()) {
        format!("metric_{c}")
    } else {
        c
    }
}

fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn campaign() -> CampaignInfo {
        CampaignInfo {
            experiment: "t".into(),
            experiment_hash: "0123456789abcdef".into(),
            experiment_text: "name = \"t\"".into(),
            experiment_path: "t.toml".into(),
            started_at: 1,
        }
    }

    fn record(cid: i64, point: u64, rep: u32, bs: &str, mb_s: f64) -> RunRecord {
        RunRecord {
            campaign_id: cid,
            environment_id: None,
            experiment: "t".into(),
            experiment_hash: "0123456789abcdef".into(),
            point,
            rep,
            attempt: 0,
            source: "measured".into(),
            target: "/tmp/x".into(),
            params: [("bs".to_string(), bs.to_string())].into(),
            metrics: [
                ("mb_s".to_string(), mb_s),
                ("iops".to_string(), mb_s * 10.0),
            ]
            .into(),
            workload: "[]".into(),
            result_json: None,
            started_at: 1,
            ended_at: 2,
        }
    }

    #[test]
    fn runs_round_trip_with_columns_per_parameter_and_metric() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut db = Db::open_or_create(&path).unwrap();
        let cid = db.begin_campaign(&campaign()).unwrap();
        db.insert_run(&record(cid, 0, 0, "4096", 12.5)).unwrap();
        let mut r = record(cid, 1, 0, "8192", 20.0);
        r.params.insert("point".into(), "clash".into());
        db.insert_run(&r).unwrap();
        let cols = db.run_columns().unwrap();
        for c in ["bs", "mb_s", "iops", "param_point"] {
            assert!(
                cols.contains(&c.to_string()),
                "missing column {c} in {cols:?}"
            );
        }
        drop(db);
        let db = Db::open_existing(&path).unwrap();
        let runs = db.runs().unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].campaign, "t-01234567");
        assert_eq!(runs[0].params["bs"], "4096");
        assert_eq!(runs[1].metrics["mb_s"], 20.0);
        assert_eq!(runs[1].params["point"], "clash");
        let key = params_key(&runs[0].params);
        assert_eq!(
            db.done_reps("0123456789abcdef", &key, "measured", 0)
                .unwrap(),
            [0].into()
        );
        assert!(db
            .done_reps("0123456789abcdef", &key, "measured", 1)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn superseded_attempts_are_not_current() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Db::open_or_create(&dir.path().join("r.db")).unwrap();
        let cid = db.begin_campaign(&campaign()).unwrap();
        db.insert_run(&record(cid, 0, 0, "4096", 10.0)).unwrap();
        let mut again = record(cid, 0, 0, "4096", 11.0);
        again.attempt = 1;
        db.insert_run(&again).unwrap();
        let key = params_key(&again.params);
        db.supersede("0123456789abcdef", &key, "measured", 1, 1)
            .unwrap();
        let runs = db.runs().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].metrics["mb_s"], 11.0);
        assert_eq!(
            db.last_attempt("0123456789abcdef", &key, "measured")
                .unwrap(),
            Some(1)
        );
    }

    #[test]
    fn convergence_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open_or_create(&dir.path().join("r.db")).unwrap();
        let cid = db.begin_campaign(&campaign()).unwrap();
        db.insert_convergence(cid, "t", "0123456789abcdef", 3, "bs=1", 0, 1000, 10, 100.0)
            .unwrap();
        db.insert_convergence(cid, "t", "0123456789abcdef", 3, "bs=1", 1, 4000, 50, 80.0)
            .unwrap();
        let c = db.convergence().unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[1].point, c[1].step, c[1].total_bytes, c[1].mb_s),
            (3, 1, 4000, 80.0)
        );
    }

    #[test]
    fn foreign_files_are_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        // Not SQLite at all.
        let text = dir.path().join("notes.db");
        std::fs::write(&text, b"these are my notes, not a database\n").unwrap();
        let e = Db::open_or_create(&text).err().unwrap();
        assert!(
            e.is_usage() && e.to_string().contains("not an SQLite database"),
            "{e}"
        );
        assert_eq!(
            std::fs::read(&text).unwrap(),
            b"these are my notes, not a database\n"
        );
        // Empty file.
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        assert!(Db::open_or_create(&empty).is_err());
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
        // SQLite, someone else's.
        let other = dir.path().join("other.db");
        {
            let c = Connection::open(&other).unwrap();
            c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
                .unwrap();
        }
        let before = std::fs::read(&other).unwrap();
        let e = Db::open_or_create(&other).err().unwrap();
        assert!(
            e.is_usage() && e.to_string().contains("not a raidlab results database"),
            "{e}"
        );
        assert_eq!(std::fs::read(&other).unwrap(), before);
        // Ours, but damaged past the header.
        let ours = dir.path().join("ours.db");
        {
            let mut db = Db::open_or_create(&ours).unwrap();
            let cid = db.begin_campaign(&campaign()).unwrap();
            for i in 0..50 {
                db.insert_run(&record(cid, i, 0, &format!("{}", 512 * (i + 1)), i as f64))
                    .unwrap();
            }
        }
        let mut bytes = std::fs::read(&ours).unwrap();
        let len = bytes.len();
        for b in &mut bytes[len / 2..] {
            *b = 0xa5;
        }
        std::fs::write(&ours, &bytes).unwrap();
        let e = Db::open_existing(&ours).err().unwrap();
        assert!(e.is_usage() && e.to_string().contains("damaged"), "{e}");
        assert_eq!(std::fs::read(&ours).unwrap(), bytes);
    }

    #[test]
    fn missing_file_is_a_clear_error_for_open_existing() {
        let dir = tempfile::tempdir().unwrap();
        let e = Db::open_existing(&dir.path().join("nope.db"))
            .err()
            .unwrap();
        assert!(e.is_usage() && e.to_string().contains("does not exist"));
    }

    /// A database in a missing folder names the path given, not the side file the schema
    /// is built in, and is bad input.
    #[test]
    fn a_missing_folder_is_a_usage_error_naming_the_path_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nodir").join("x.db");
        let e = Db::open_or_create(&path).err().unwrap();
        let s = e.to_string();
        assert!(e.is_usage(), "{s}");
        assert!(
            s.contains(&path.display().to_string())
                && s.contains("does not exist")
                && !s.contains("creating"),
            "{s}"
        );
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let e = Db::open_or_create(&file.join("x.db")).err().unwrap();
        assert!(
            e.is_usage() && e.to_string().contains("is not a folder"),
            "{e}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"x");
    }
}
