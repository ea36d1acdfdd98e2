//! `raidlab sweep [EXPERIMENT.toml] [--db FILE] [--report DIR] [--format text|csv|json]
//! [--set KEY=VALUE]… [--dry-run] [--force] [--parallel N]`: run an experiment into its results database and
//! print one row per point.
//!
//! Without an experiment file it runs the embedded default (recipes/default.toml: a block-size
//! sweep on a scratch file in a temporary folder, removed afterwards; plus, when
//! `recipes/llnl2000.toml` and the simulated systems are found under the current folder, seed
//! 000's single-chain systems predicted against the reference tables) and writes the database
//! and report to ./raidlab-report/.
//!
//! The wall clock, progress with ETA, Ctrl-C and the runs themselves live here, at the edge;
//! the campaign logic is raidlab-lab's.

use crate::cmd::run::{
    catch_interrupts, execute, interrupted, quit_on_first_interrupt, target_kind, ExecOptions,
    TargetKind,
};
use crate::error::CliError;
use raidlab_engine::ewriteln;
use raidlab_lab::campaign::{self, Event, Io, Runner};
use raidlab_lab::db::Db;
use raidlab_lab::experiment::Experiment;
use raidlab_lab::plan::Context;
use raidlab_lab::LabError;
use raidlab_result::RunResult;
use raidlab_workload::JobSpec;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The embedded default experiment.
pub const DEFAULT_EXPERIMENT: &str = include_str!("../../../../recipes/default.toml");

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The experiment (TOML). Without one, the embedded default runs.
    experiment: Option<PathBuf>,
    /// Results database (default: <name>.db next to the experiment).
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Also write an HTML report with figures into DIR.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// How to print the points: text (aligned table), csv, json.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "csv", "json"])]
    format: String,
    /// Override a value of the experiment: a fio option (bs=4k), a target key
    /// (filename=/dev/sdb, members=/dev/sdb,/dev/sdc, system=…), or a dotted path (repeat.count=5).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Print the points and their jobs without running anything or touching the database.
    #[arg(long)]
    dry_run: bool,
    /// Write even over targets holding data (a filesystem, partition table or array
    /// signature, or a file raidlab did not write), and let --report replace files in its
    /// folder that raidlab did not write.
    #[arg(long)]
    force: bool,
    /// Simulated runs to compute at once (default: the CPUs this process may use). Measured
    /// runs, and runs with hooks or cache defeat around them, always go one at a time.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    parallel: Option<u32>,
}

/// The lab's error, each of its lines (a system file's errors) a line of its own. A sweep an
/// interrupt stopped exits as `raidlab run` does then: 128 + the signal.
fn cli(e: LabError) -> CliError {
    let code = if e.is_usage() {
        2
    } else {
        crate::cmd::run::interrupt_exit_code().unwrap_or(1)
    };
    CliError::lines(code, e.message().lines())
}

/// Runs points through `raidlab run`'s dispatcher (engine, arrays or simulator by target).
/// Simulated runs are pure functions of their jobs, so `parallel` of them go at once.
struct ExecRunner {
    force: bool,
    parallel: usize,
}

impl ExecRunner {
    /// What a run not started because of Ctrl-C (or SIGTERM) returns: the campaign stops
    /// there, with every run before it stored, and a later sweep resumes from it.
    fn interrupted_error() -> LabError {
        LabError::failed(format!(
            "interrupted by {}; run the same sweep again to resume",
            crate::cmd::run::interrupt_name()
        ))
    }

    /// One run through `raidlab run`'s dispatcher, unless Ctrl-C came first.
    fn execute(specs: &[JobSpec], force: bool) -> Result<RunResult, LabError> {
        if interrupted() {
            return Err(Self::interrupted_error());
        }
        if let Some(dir) = SCRATCH.get() {
            for f in specs.iter().flat_map(|s| &s.filenames) {
                if Path::new(f).starts_with(dir) {
                    crate::cmd::run::remove_file_on_quit(Path::new(f));
                }
            }
        }
        let lab = |e: CliError| LabError::lines(e.code == 2, e.message.lines());
        // The run's log files (named for its point and repetition by the campaign) are
        // checked before it, as `raidlab run` checks them, and written after it.
        crate::cmd::run::check_log_paths(specs, force).map_err(lab)?;
        let result = execute(
            specs.to_vec(),
            &ExecOptions {
                force,
                progress: false,
                coordinator: None,
                readonly: false,
            },
        )
        .map_err(lab)?;
        crate::cmd::run::write_logs(&result).map_err(lab)?;
        Ok(result)
    }
}

impl Runner for ExecRunner {
    fn run(&mut self, specs: &[JobSpec]) -> Result<RunResult, LabError> {
        Self::execute(specs, self.force)
    }

    fn independent(&self, specs: &[JobSpec]) -> bool {
        !specs.is_empty()
            && specs.iter().all(|s| {
                !s.filenames.is_empty()
                    && s.filenames
                        .iter()
                        .all(|f| target_kind(f) == TargetKind::Simulated)
            })
    }

    fn width(&self) -> usize {
        self.parallel
    }

    fn stopped(&self) -> Option<LabError> {
        interrupted().then(Self::interrupted_error)
    }

    /// Workers take the next run not yet taken, so long and short runs even out.
    fn run_many(&mut self, batch: &[&[JobSpec]]) -> Vec<Result<RunResult, LabError>> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        let workers = self.parallel.min(batch.len()).max(1);
        let force = self.force;
        let mut done: Vec<(usize, Result<RunResult, LabError>)> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    sc.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(specs) = batch.get(i) else { break };
                            mine.push((i, Self::execute(specs, force)));
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| match h.join() {
                    Ok(v) => v,
                    Err(p) => std::panic::resume_unwind(p),
                })
                .collect()
        });
        done.sort_by_key(|d| d.0);
        done.into_iter().map(|d| d.1).collect()
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn fmt_secs(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// A scratch folder removed when dropped (also when a run fails).
struct Scratch(PathBuf);

/// The sweep's scratch folder: a second Ctrl-C removes the scratch file of the run then
/// going, and the folder, instead of leaving them in the temporary folder.
static SCRATCH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

impl Scratch {
    fn new() -> Result<Scratch, CliError> {
        let base = std::env::temp_dir();
        for i in 0..100u32 {
            let p = base.join(format!("raidlab-sweep-{}-{i}", std::process::id()));
            if std::fs::create_dir(&p).is_ok() {
                crate::cmd::run::remove_on_quit(&p);
                let _ = SCRATCH.set(p.clone());
                return Ok(Scratch(p));
            }
        }
        Err(CliError::failed(format!(
            "cannot make a scratch folder in {}",
            base.display()
        )))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Plan {
    exp: Experiment,
    db: PathBuf,
}

/// `--db FILE` must name a file in an existing folder (the database is created there).
fn check_db_arg(db: &Path) -> Result<(), CliError> {
    if let Some(why) = raidlab_lab::db::missing_folder(db) {
        return Err(CliError::usage(format!(
            "--db {}: {why} (create it first, or give a file in an existing folder)",
            db.display()
        )));
    }
    if db.is_dir() {
        return Err(CliError::usage(format!(
            "--db {}: is a folder (give a database file, e.g. {})",
            db.display(),
            db.join("results.db").display()
        )));
    }
    Ok(())
}

/// `--report DIR` must be a folder or a path one can be made at: checked before anything
/// runs, so a sweep does not end in an error after its runs.
fn check_report_arg(dir: &Path) -> Result<(), CliError> {
    if dir.exists() {
        if !dir.is_dir() {
            return Err(CliError::usage(format!(
                "--report {}: is a file, not a folder (give a folder; it is created if missing)",
                dir.display()
            )));
        }
        return Ok(());
    }
    // The nearest part of the path that exists must be a folder to create the rest in.
    if let Some(a) = dir.ancestors().skip(1).find(|a| a.exists()) {
        if !a.is_dir() {
            return Err(CliError::usage(format!(
                "--report {}: cannot create it: {} is a file, not a folder",
                dir.display(),
                a.display()
            )));
        }
    }
    Ok(())
}

pub fn main(args: SweepArgs) -> Result<(), CliError> {
    // The options naming files are checked before anything is read or run.
    if let Some(db) = &args.db {
        check_db_arg(db)?;
    }
    if let Some(dir) = &args.report {
        check_report_arg(dir)?;
    }
    let mut plans = Vec::new();
    let mut report_dir = args.report.clone();
    match &args.experiment {
        Some(path) => {
            let exp = Experiment::load(path, &args.set).map_err(cli)?;
            let db = args
                .db
                .clone()
                .unwrap_or_else(|| exp.base_dir.join(format!("{}.db", exp.name)));
            plans.push(Plan { exp, db });
        }
        None => {
            let out = PathBuf::from("raidlab-report");
            let db = args
                .db
                .clone()
                .unwrap_or_else(|| out.join("raidlab-default.db"));
            let here = std::env::current_dir()
                .map_err(|e| CliError::failed(format!("current folder: {e}")))?;
            let exp = Experiment::parse(
                DEFAULT_EXPERIMENT,
                "(embedded default experiment)",
                &here,
                &args.set,
            )
            .map_err(cli)?;
            plans.push(Plan {
                exp,
                db: db.clone(),
            });
            let llnl = here.join("recipes/llnl2000.toml");
            if llnl.is_file() && here.join("systems/llnl2000/fig11.toml").is_file() {
                let mut set = vec!["repeat.count=1".to_string()];
                set.extend(
                    args.set
                        .iter()
                        .filter(|s| s.starts_with("repeat."))
                        .cloned(),
                );
                let exp = Experiment::load(&llnl, &set).map_err(cli)?;
                plans.push(Plan { exp, db });
            } else if !args.dry_run {
                ewriteln!("raidlab: note: recipes/llnl2000.toml or systems/llnl2000/ not found here; the default runs the measured sweep only");
            }
            if report_dir.is_none() {
                report_dir = Some(out.clone());
            }
            if !args.dry_run {
                std::fs::create_dir_all(&out).map_err(|e| {
                    CliError::failed(format!("cannot create {}: {e}", out.display()))
                })?;
            }
        }
    }

    // A report folder whose page (or manifest) raidlab did not write refuses the report: said
    // now, by the rule and in the words of the report itself, rather than after the campaign.
    if let Some(dir) = &report_dir {
        raidlab_report::check_destination(dir, raidlab_report::WriteOptions { force: args.force })
            .map_err(crate::cmd::report::report_err)?;
    }

    // Simulated points stored by another build of the simulator are not resumed.
    for p in &mut plans {
        p.exp.simulated_by(raidlab_sim::MODEL_PRINT);
    }

    let parallel = args
        .parallel
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    // Ctrl-C stops the sweep before its next run, not in the middle of storing one. A dry
    // run has no run in flight and nothing to store: it quits on the first.
    if args.dry_run {
        quit_on_first_interrupt();
    } else {
        catch_interrupts();
    }
    let scratch = Scratch::new()?;
    let raidlab = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "raidlab".into());
    let ctx = Context {
        raidlab,
        scratch: scratch.0.clone(),
    };

    // Every point of every experiment is planned, and the system files they simulate found,
    // before the first run (or the database) is touched.
    let mut planned_all = Vec::with_capacity(plans.len());
    for p in &plans {
        let points = campaign::plan_all(&p.exp, &ctx).map_err(cli)?;
        campaign::check_system_files(&p.exp, &points).map_err(cli)?;
        planned_all.push(points);
    }

    if args.dry_run {
        let mut out = Output::default();
        for (p, points) in plans.iter().zip(&planned_all) {
            out.line(format_args!(
                "# {} ({}): {} points × {} repetitions, database {}",
                p.exp.name,
                p.exp.origin,
                points.len(),
                p.exp.repeat.count,
                p.db.display()
            ));
            for pt in points {
                let spec = &pt.specs[0];
                out.line(format_args!(
                    "point {}: {} -> {} [{}] rw={} bs={} size={}{} iodepth={} numjobs={}",
                    pt.point.index,
                    raidlab_lab::plan::describe(&pt.point),
                    pt.target,
                    pt.source,
                    spec.rw.name(),
                    spec.bs.read.min(),
                    spec.size
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "(target)".into()),
                    spec.io_size
                        .map(|s| format!(" io_size={s}"))
                        .unwrap_or_default(),
                    spec.iodepth,
                    spec.numjobs
                ));
            }
        }
        return out.finish();
    }

    let mut out = Output::default();
    // Each experiment's points, for a CSV or JSON document over several experiments.
    let mut tables: Vec<(String, Vec<raidlab_lab::campaign::Outcome>, Vec<String>)> = Vec::new();
    for (p, planned) in plans.iter().zip(&planned_all) {
        let mut db = Db::open_or_create(&p.db).map_err(|e| {
            if e.is_usage() {
                CliError::usage(format!("{e}; give another file with --db"))
            } else {
                cli(e)
            }
        })?;
        let mut targets = Vec::new();
        for pl in planned {
            for t in raidlab_lab::env::target_paths(&pl.target) {
                if !targets.contains(&t) {
                    targets.push(t);
                }
            }
        }
        let env =
            raidlab_lab::env::capture(&format!("raidlab-{}", env!("CARGO_PKG_VERSION")), &targets);
        let mut runner = ExecRunner {
            force: args.force,
            parallel: parallel as usize,
        };
        let mut actions = raidlab_lab::actions::SystemActions;
        let started = Instant::now();
        let mut ran_here = 0u64;
        let name = p.exp.name.clone();
        let mut observe = |e: &Event| match e {
            Event::RunStart {
                point,
                rep,
                attempt,
                done,
                total,
                what,
            } => {
                let eta = if ran_here > 0 {
                    let per = started.elapsed().as_secs_f64() / ran_here as f64;
                    format!(" ETA {}", fmt_secs(per * (total - done) as f64))
                } else {
                    String::new()
                };
                let again = if *attempt > 0 {
                    format!(" (re-run {attempt})")
                } else {
                    String::new()
                };
                ewriteln!(
                    "{name} [{}/{total}] point {point} rep {rep}{again}: {what}{eta}",
                    done + 1
                );
            }
            Event::RunDone { .. } => ran_here += 1,
            Event::Skipped {
                point,
                what,
                stored,
                missing,
            } => {
                let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
                if missing.is_empty() {
                    ewriteln!("{name}: point {point} ({what}) already in the database, skipped")
                } else {
                    ewriteln!(
                        "{name}: point {point} ({what}): rep{} {} already stored, running rep{} {}",
                        if stored.len() == 1 { "" } else { "s" },
                        list(stored),
                        if missing.len() == 1 { "" } else { "s" },
                        list(missing)
                    )
                }
            }
            Event::Flagged {
                point,
                spread_pct,
                rerun,
            } => ewriteln!(
                "{name}: point {point} spread {spread_pct:.1}% over the threshold{}",
                if *rerun {
                    ", running it again"
                } else {
                    "; flagged"
                }
            ),
            Event::Converge {
                point,
                step,
                value,
                mb_s,
            } => {
                ewriteln!(
                    "{name}: point {point} convergence step {step}: {value} -> {mb_s:.2} MB/s"
                )
            }
            Event::Note(n) => ewriteln!("{name}: note: {n}"),
        };
        let mut io = Io {
            runner: &mut runner,
            actions: &mut actions,
            now: &now_secs,
            observe: &mut observe,
        };
        let report = campaign::run(&p.exp, &mut db, &env, &ctx, &mut io).map_err(cli)?;
        let axes: Vec<String> = p.exp.axes.iter().map(|a| a.name.clone()).collect();
        let metric = &p.exp.repeat.metric;
        match args.format.as_str() {
            // Machine formats are one document over every experiment, printed at the end.
            "csv" | "json" if plans.len() > 1 => {
                tables.push((p.exp.name.clone(), report.outcomes, axes))
            }
            "csv" => out.text(&raidlab_lab::output::csv(&report.outcomes, &axes, metric)),
            "json" => out.text(&raidlab_lab::output::json(&report.outcomes)),
            _ => {
                out.line(format_args!(
                    "# {}: {} points, {} runs now, {} already stored; database {}",
                    p.exp.name,
                    report.outcomes.len(),
                    report.runs_done,
                    report.runs_skipped,
                    p.db.display()
                ));
                out.text(&raidlab_lab::output::text(&report.outcomes, &axes, metric));
            }
        }
    }
    drop(scratch);
    if !tables.is_empty() {
        // The embedded default's experiments judge the same metric (its `repeat.` settings
        // go to both).
        let metric = &plans[0].exp.repeat.metric;
        if args.format == "csv" {
            let parts: Vec<(&str, &[_], &[String])> = tables
                .iter()
                .map(|(n, o, a)| (n.as_str(), &o[..], &a[..]))
                .collect();
            out.text(&raidlab_lab::output::csv_experiments(&parts, metric));
        } else {
            let parts: Vec<(&str, &[_])> = tables
                .iter()
                .map(|(n, o, _)| (n.as_str(), &o[..]))
                .collect();
            out.text(&raidlab_lab::output::json_experiments(&parts));
        }
    }

    if let Some(dir) = report_dir {
        let db = &plans[0].db;
        write_report(db, &dir, args.force)?;
    }
    // The database and report are complete whatever became of standard output.
    out.finish()
}

/// Standard output through [`crate::stdout::write`]: a closed pipe (`| head`, `| true`) ends
/// the printing quietly; any other failure (a full disk, /dev/full) is kept and reported by
/// [`Output::finish`] once everything else is done, so the database and report are complete.
#[derive(Default)]
struct Output {
    /// Stop writing: a write failed (a reader that went away is no failure, and its later
    /// writes are as quiet).
    closed: bool,
    error: Option<std::io::Error>,
}

impl Output {
    fn text(&mut self, s: &str) {
        if self.closed {
            return;
        }
        if let Err(e) = crate::stdout::write(s) {
            self.closed = true;
            self.error = Some(e);
        }
    }

    fn line(&mut self, a: std::fmt::Arguments) {
        self.text(&format!("{a}\n"));
    }

    fn finish(self) -> Result<(), CliError> {
        match self.error {
            Some(e) => Err(CliError::failed(format!(
                "cannot write results to standard output: {e}"
            ))),
            None => Ok(()),
        }
    }
}

/// Write the HTML report of `db` into `dir` through raidlab-report (what `raidlab report`
/// does).
fn write_report(db: &Path, dir: &Path, force: bool) -> Result<(), CliError> {
    let opts = crate::cmd::report::ReportOptions {
        title: None,
        limits_files: Vec::new(),
        command: Some(format!("raidlab sweep … --report {}", dir.display())),
    };
    let files =
        crate::cmd::report::report_db_with(db, dir, &opts, raidlab_report::WriteOptions { force })?;
    for w in &files.warnings {
        ewriteln!("raidlab: warning: {w}");
    }
    let n = files.svgs.len();
    ewriteln!(
        "report: {} ({n} figure{})",
        files.index.display(),
        if n == 1 { "" } else { "s" }
    );
    Ok(())
}
