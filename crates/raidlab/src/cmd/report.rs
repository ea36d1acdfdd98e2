//! `raidlab report DB --out DIR`: a self-contained HTML report (figures as SVG and PNG, tables
//! of points, the limits table) from a results database written by `raidlab sweep`.
//!
//! Bounds for the limits tables come from the simulator for `sim:` targets (one table per
//! target, listing the components on the paths of the LUNs it drives: `sim:x.toml#lun0`
//! that LUN's, `sim:x.toml` its visible LUNs') and from the `[limits]` table of the files
//! given with `--limits` (an experiment file or a file of its own) for real systems.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use raidlab_report::{
    limits_from_toml, write_report_opts, ComponentLimit, LimitsInput, ReportFiles, ReportMeta,
    WriteOptions,
};

use crate::error::CliError;

#[derive(clap::Args)]
pub struct ReportArgs {
    /// Results database written by `raidlab sweep` (SQLite).
    db: PathBuf,
    /// Folder to write index.html and the figures (SVG, PNG) into; created if missing.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Title of the page (default: the database's file name).
    #[arg(long)]
    title: Option<String>,
    /// TOML file with a [limits] table (component = MB/s) giving the bounds of a real system's
    /// components; an experiment file may carry it. Repeatable.
    #[arg(long = "limits", value_name = "FILE")]
    limits: Vec<PathBuf>,
    /// Write over files in DIR that raidlab's report did not write (or that were changed since
    /// it wrote them). Without it such a file is left alone and the report is refused.
    #[arg(long)]
    force: bool,
}

/// What `report` needs besides the database and the folder.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    pub title: Option<String>,
    pub limits_files: Vec<PathBuf>,
    /// The command line shown in the captions.
    pub command: Option<String>,
}

pub fn main(args: ReportArgs) -> Result<(), CliError> {
    let command = format!(
        "raidlab report {} --out {}",
        args.db.display(),
        args.out.display()
    );
    let opts = ReportOptions {
        title: args.title,
        limits_files: args.limits,
        command: Some(command),
    };
    let files = report_db_with(
        &args.db,
        &args.out,
        &opts,
        WriteOptions { force: args.force },
    )?;
    warn(&files.warnings);
    let n = files.svgs.len();
    let mut text = format!(
        "report: {} ({n} figure{}, SVG and PNG beside it)\n",
        files.index.display(),
        if n == 1 { "" } else { "s" }
    );
    if !files.removed.is_empty() {
        text.push_str(&format!(
            "report: removed {} figure file(s) of the earlier report that this one no longer draws\n",
            files.removed.len()
        ));
    }
    // A closed pipe (| head) is not worth a message; any other failure (a full disk,
    // /dev/full) says so in one line. The report itself is written either way.
    crate::stdout::write(&text).map_err(|e| {
        CliError::failed(format!(
            "report: written, but cannot print to standard output: {}",
            raidlab_result::io_error_text(&e)
        ))
    })
}

/// Warnings on standard error, which may itself be closed or full: never a panic.
fn warn(warnings: &[String]) {
    for w in warnings {
        raidlab_engine::ewriteln!("raidlab: warning: {w}");
    }
}

/// Read the database and write the report: what `raidlab report` does, and what
/// `raidlab sweep --report DIR` calls after its campaign. Files in `out` that raidlab's
/// report did not write are written over only with `write.force` (`--force`).
pub fn report_db_with(
    db_path: &Path,
    out: &Path,
    opts: &ReportOptions,
    write: WriteOptions,
) -> Result<ReportFiles, CliError> {
    if !db_path.exists() {
        return Err(CliError::usage(format!(
            "report: results database '{}' does not exist (give the file raidlab sweep wrote, see its --db)",
            db_path.display()
        )));
    }
    if db_path.is_dir() {
        return Err(CliError::usage(format!(
            "report: '{}' is a directory, not a results database",
            db_path.display()
        )));
    }
    let lab = |e: raidlab_lab::LabError| {
        if e.is_usage() {
            CliError::usage(format!("report: {e}"))
        } else {
            CliError::failed(format!("report: {e}"))
        }
    };
    // The database is this command's argument (there is no --db here).
    let db = raidlab_lab::db::Db::open_existing(db_path).map_err(|e| {
        if e.is_usage() {
            CliError::usage(format!(
                "report: {e}; give the results database raidlab sweep wrote"
            ))
        } else {
            lab(e)
        }
    })?;
    let runs = db.runs().map_err(lab)?;
    let conv = db.convergence().map_err(lab)?;

    let mut meta = ReportMeta {
        title: Some(opts.title.clone().unwrap_or_else(|| {
            let name = db_path
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            format!("raidlab report: {name}")
        })),
        command: opts.command.clone(),
        generator: Some(format!("raidlab {}", env!("CARGO_PKG_VERSION"))),
        ..Default::default()
    };
    // Provenance and declared bounds of each campaign; a database without them still reports.
    let records = match raidlab_report::campaign_meta::read_campaigns(db_path, &db) {
        Ok(r) => r,
        Err(e) => {
            meta.notes.push(format!(
                "Campaign descriptions and environments could not be read: {e}"
            ));
            Vec::new()
        }
    };
    let mut limits = Vec::new();
    for rec in &records {
        meta.campaigns.insert(
            rec.label.clone(),
            raidlab_report::campaign_meta::campaign_meta(rec),
        );
        match raidlab_report::campaign_meta::campaign_limits(rec) {
            Ok(Some(l)) => limits.push(l),
            Ok(None) => {}
            Err(e) => meta
                .notes
                .push(format!("[limits] of campaign {} ignored: {e}", rec.label)),
        }
    }
    let experiment_dirs: Vec<PathBuf> = records
        .iter()
        .filter_map(|r| {
            Path::new(&r.experiment_path)
                .parent()
                .map(Path::to_path_buf)
        })
        .collect();
    for f in &opts.limits_files {
        let text = std::fs::read_to_string(f).map_err(|e| {
            CliError::usage(format!(
                "report: cannot read limits file '{}': {e}",
                f.display()
            ))
        })?;
        match limits_from_toml(&text, &f.display().to_string()).map_err(report_err)? {
            Some(l) => limits.push(l),
            None => {
                return Err(CliError::usage(format!(
                    "report: '{}' has no [limits] table (give component = MB/s under [limits])",
                    f.display()
                )))
            }
        }
    }
    // One table per simulated target the runs name: a LUN's lists the components on its own
    // path, a whole system's those on the paths of the LUNs its runs drive.
    let sim_targets: BTreeSet<&str> = runs
        .iter()
        .map(|r| r.target.as_str())
        .filter(|t| t.starts_with("sim:"))
        .collect();
    for target in sim_targets {
        match sim_limits(target, &experiment_dirs) {
            Ok(l) => limits.push(l),
            Err(e) => meta.notes.push(format!(
                "No limits table for {target}: {}",
                e.lines().collect::<Vec<_>>().join("; ")
            )),
        }
    }
    write_report_opts(&runs, &conv, &limits, &meta, out, write).map_err(report_err)
}

/// The limits table of the runs on a simulated `target` (`sim:PATH.toml[#LUN]`, or several
/// such joined by `:`), for exactly those runs: the simulator's bounds of the components on
/// the paths of the LUNs it drives. The system file is found as the sweep named it: relative
/// to where it ran, or to the experiment (`experiment_dirs`).
fn sim_limits(
    target: &str,
    experiment_dirs: &[PathBuf],
) -> Result<LimitsInput, raidlab_sim::SimError> {
    let mut components: Vec<ComponentLimit> = Vec::new();
    for file in raidlab_workload::split_filenames(target) {
        let Some(rest) = file.strip_prefix("sim:") else {
            continue;
        };
        let (system, lun) = match rest.split_once('#') {
            Some((s, l)) => (s, format!("#{l}")),
            None => (rest, String::new()),
        };
        let found = std::iter::once(PathBuf::from(system))
            .chain(experiment_dirs.iter().map(|d| d.join(system)))
            .find(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from(system));
        let path = PathBuf::from(format!("{}{lun}", found.display()));
        for b in raidlab_sim::bounds(&path)? {
            if !components.iter().any(|c| c.name == b.name) {
                components.push(component_limit(b));
            }
        }
    }
    Ok(LimitsInput {
        campaign: None,
        target: Some(target.to_string()),
        whole_target: true,
        origin: format!(
            "from the simulator's model {}",
            target.strip_prefix("sim:").unwrap_or(target)
        ),
        components,
    })
}

/// A simulator bound as a row of the limits table: its read and its write bound. The whole
/// stroke's bound is the one that holds for a large data set (and for writes, once a
/// write-back cache is full); the note gives the outer zone's where the drives set it, and
/// what writes reach while a cache takes them.
fn component_limit(b: raidlab_sim::ComponentBound) -> ComponentLimit {
    let mut note = b.note.clone();
    if b.zoned() {
        note += &format!("; {:.1} MB/s at the outer zone", b.outer_bytes_s / 1e6);
    }
    if !b.write_note.is_empty() {
        note += &format!("; writes {}", b.write_note);
    }
    if b.write_zoned() {
        note += &format!(
            "; {:.1} MB/s writing at the outer zone",
            b.write_outer_bytes_s / 1e6
        );
    }
    ComponentLimit {
        note,
        name: b.name,
        kind: b.kind,
        bound_bytes_s: b.bound_bytes_s,
        write_bound_bytes_s: Some(b.write_bytes_s).filter(|x| x.is_finite()),
    }
}

pub(crate) fn report_err(e: raidlab_report::ReportError) -> CliError {
    if e.is_usage() {
        CliError::usage(format!("report: {e}"))
    } else {
        CliError::failed(format!("report: {e}"))
    }
}
