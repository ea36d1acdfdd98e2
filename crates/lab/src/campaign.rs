//! Running a campaign: every point's repetitions, in order, with hooks around each run,
//! statistics and automatic re-runs of noisy points, convergence searches, and every run stored
//! as it completes so an interrupted campaign resumes where it stopped.
//!
//! Runs go through a [`Runner`] and side effects (hooks, cache defeat, member files) through
//! [`Actions`], so the whole loop is testable without I/O. Time is injected (`now`).
//!
//! Order around each run: create member files (arrays the lab builds) → setup hooks → cache
//! defeat → run → teardown hooks → remove member files. Teardown and removal happen even when
//! an earlier step failed.

use crate::db::{params_key, CampaignInfo, Db, Environment, PointRow, RunRecord};
use crate::error::LabError;
use crate::experiment::{CacheDefeat, Experiment, Grow};
use crate::plan::{describe, plan_point, template, Context, PointPlan};
use crate::stats::Stats;
use crate::sweep::expand;
use raidlab_result::RunResult;
use raidlab_workload::JobSpec;
use std::collections::BTreeMap;

/// Runs one repetition of a point.
pub trait Runner {
    fn run(&mut self, specs: &[JobSpec]) -> Result<RunResult, LabError>;
    /// Whether a run may be computed ahead of its turn and beside other runs: it neither
    /// touches nor measures the machine (a simulated target), so when it runs and what runs
    /// beside it cannot change its result. Default: no.
    fn independent(&self, _specs: &[JobSpec]) -> bool {
        false
    }
    /// How many independent runs [`Runner::run_many`] works on at once; 1 (the default):
    /// every run goes in its turn.
    fn width(&self) -> usize {
        1
    }
    /// Independent runs, possibly at once; the results in the order given. Default: one
    /// after another.
    fn run_many(&mut self, batch: &[&[JobSpec]]) -> Vec<Result<RunResult, LabError>> {
        batch.iter().map(|s| self.run(s)).collect()
    }
    /// Why no further run may start (Ctrl-C), if so. Asked before anything is done for a run
    /// in its turn — member files, setup hooks, cache defeat — so a campaign told to stop
    /// between runs does not first build the next point's array only to tear it down.
    /// Default: never.
    fn stopped(&self) -> Option<LabError> {
        None
    }
}

/// Side effects around a run.
pub trait Actions {
    /// Run a shell command (already templated).
    fn command(&mut self, cmd: &str) -> Result<(), LabError>;
    /// `sync`, then drop the page cache.
    fn drop_caches(&mut self) -> Result<(), LabError>;
    /// Read `size` bytes of `path`: created first if missing, extended only if raidlab made
    /// it; a file holding other data, or a block device, is never written (refused when
    /// shorter than `size`).
    fn read_file(&mut self, path: &str, size: u64) -> Result<(), LabError>;
    /// Create member files of `size` bytes (refusing to replace existing ones).
    fn create_files(&mut self, files: &[String], size: u64) -> Result<(), LabError>;
    fn remove_files(&mut self, files: &[String]) -> Result<(), LabError>;
}

/// What the campaign tells its observer (progress, notes).
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A run is starting: `done` of `total` runs planned so far are finished or skipped.
    RunStart {
        point: u64,
        rep: u32,
        attempt: u32,
        done: u64,
        total: u64,
        what: String,
    },
    /// A run finished with this value of the spread metric.
    RunDone { point: u64, rep: u32, value: f64 },
    /// A point with repetitions already in the database: `stored` are kept, `missing` run
    /// now (empty: the whole point is skipped).
    Skipped {
        point: u64,
        what: String,
        stored: Vec<u32>,
        missing: Vec<u32>,
    },
    /// A point's spread is over the threshold; `rerun` says whether it will run again.
    Flagged {
        point: u64,
        spread_pct: f64,
        rerun: bool,
    },
    /// A convergence step.
    Converge {
        point: u64,
        step: u32,
        value: u64,
        mb_s: f64,
    },
    /// Something worth telling that is not an error.
    Note(String),
}

/// A point's outcome, for the tables the command prints.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub point: u64,
    /// Swept parameters in axis order, as shown.
    pub values: Vec<(String, String)>,
    pub params: BTreeMap<String, String>,
    pub source: String,
    pub target: String,
    pub attempts: u32,
    pub stats: BTreeMap<String, Stats>,
    pub flagged: bool,
    /// Rate at each convergence step (total, mb_s), when the point converged.
    pub convergence: Vec<(u64, f64)>,
}

/// The result of [`run`].
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub outcomes: Vec<Outcome>,
    pub runs_done: u64,
    pub runs_skipped: u64,
    pub reference_rows: u64,
}

/// Plan every point (so an impossible one stops the campaign before anything runs). An
/// exclude list that leaves no point is the experiment's mistake, as an empty axis is.
pub fn plan_all(exp: &Experiment, ctx: &Context) -> Result<Vec<PointPlan>, LabError> {
    let points = expand(&exp.axes, &exp.exclude);
    if points.is_empty() {
        return Err(LabError::usage(format!(
            "{}: [sweep] exclude leaves no points: every combination of the axes matches one of its entries (valid: entries that leave at least one point)",
            exp.origin
        )));
    }
    points.iter().map(|p| plan_point(exp, p, ctx)).collect()
}

/// Check that every simulated system file the plans name (`system = …`, or a `sim:`
/// filename) is a file that can be read, so a missing one is reported before anything runs
/// (and by a dry run). Only existence and readability: whether it is a valid system is the
/// simulator's to say when it loads it. The error names the file and where it was given.
pub fn check_system_files(exp: &Experiment, plans: &[PointPlan]) -> Result<(), LabError> {
    let mut seen = std::collections::BTreeSet::new();
    for plan in plans {
        let Some(rest) = plan.target.strip_prefix("sim:") else {
            continue;
        };
        let file = rest.split('#').next().unwrap_or(rest);
        if !seen.insert(file.to_string()) {
            continue;
        }
        let problem = match std::fs::metadata(file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "does not exist".to_string(),
            Err(e) => format!("cannot be read: {e}"),
            Ok(m) if m.is_dir() => "is a folder, not a system file".to_string(),
            Ok(_) => match std::fs::File::open(file) {
                Ok(_) => continue,
                Err(e) => format!("cannot be read: {e}"),
            },
        };
        let key = if plan.point.get("system").is_some() || exp.target.contains_key("system") {
            "system"
        } else {
            "filename"
        };
        let place = if plan.point.get(key).is_some() {
            format!(
                "[sweep] {key}, point {} ({})",
                plan.point.index,
                describe(&plan.point)
            )
        } else {
            format!("[target] {key}")
        };
        return Err(LabError::usage(format!(
            "{}: {place}: system file {file} {problem}",
            exp.origin
        )));
    }
    Ok(())
}

/// Everything a campaign needs from its caller.
pub struct Io<'a> {
    pub runner: &'a mut dyn Runner,
    pub actions: &'a mut dyn Actions,
    pub now: &'a dyn Fn() -> u64,
    pub observe: &'a mut dyn FnMut(&Event),
}

/// Run an experiment into `db`.
pub fn run(
    exp: &Experiment,
    db: &mut Db,
    env: &Environment,
    ctx: &Context,
    io: &mut Io,
) -> Result<Report, LabError> {
    let plans = plan_all(exp, ctx)?;
    let info = CampaignInfo {
        experiment: exp.name.clone(),
        experiment_hash: exp.hash.clone(),
        experiment_text: exp.text.clone(),
        experiment_path: exp.origin.clone(),
        started_at: (io.now)(),
    };
    let campaign_id = db.begin_campaign(&info)?;
    let env_id = db.record_environment(campaign_id, env)?;
    let mut report = Report {
        reference_rows: crate::reference::import(
            exp,
            &crate::reference::Scope::of(exp, &plans),
            db,
            campaign_id,
            &mut *io.observe,
            (io.now)(),
        )?,
        ..Default::default()
    };
    let ahead = Ahead::plan(exp, db, &plans, &*io.runner)?;
    let mut state = State {
        exp,
        campaign_id,
        env_id,
        done: 0,
        total: 0,
        ahead,
    };
    state.total = plans.len() as u64 * exp.repeat.count as u64;
    for pi in 0..plans.len() {
        match run_point(&mut state, db, &plans, pi, io, &mut report) {
            Ok(outcome) => report.outcomes.push(outcome),
            Err(e) => {
                // The runs stored before the failure are kept.
                db.commit_group()?;
                return Err(e);
            }
        }
    }
    db.commit_group()?;
    db.end_campaign(campaign_id, (io.now)())?;
    Ok(report)
}

struct State<'e> {
    exp: &'e Experiment,
    campaign_id: i64,
    env_id: i64,
    done: u64,
    total: u64,
    ahead: Ahead,
}

/// A run: (plan index, attempt, repetition).
type RunKey = (usize, u32, u32);

/// Runs computed ahead of their turn, several at once ([`Runner::run_many`]). Only runs
/// with nothing around them qualify (no hooks, no cache defeat, no member files, no
/// convergence search) whose runner says they are independent (simulated targets). They
/// are stored in the campaign's order as their turn comes, exactly as if run then; runs
/// computed together share the batch's start and end times.
struct Ahead {
    /// Runs still to come that may be computed ahead, in the order the campaign meets them.
    queue: std::collections::VecDeque<RunKey>,
    /// Computed runs waiting for their turn: (started, ended, result).
    ready: BTreeMap<RunKey, (u64, u64, Result<RunResult, LabError>)>,
    /// Runs per batch.
    batch: usize,
}

impl Ahead {
    /// The runs the campaign will meet, as the database stands, that may go ahead.
    fn plan(
        exp: &Experiment,
        db: &Db,
        plans: &[PointPlan],
        runner: &dyn Runner,
    ) -> Result<Ahead, LabError> {
        let width = runner.width();
        let mut queue = std::collections::VecDeque::new();
        // Runs around which the campaign does something must go in their turn.
        let alone = exp.converge.is_some()
            || !exp.hooks.setup.is_empty()
            || !exp.hooks.teardown.is_empty()
            || !matches!(exp.hooks.cache_defeat, CacheDefeat::None);
        if width > 1 && !alone {
            for (pi, plan) in plans.iter().enumerate() {
                if !plan.member_files_to_create.is_empty() || !runner.independent(&plan.specs) {
                    continue;
                }
                let key = params_key(&plan.params);
                let attempt = db.last_attempt(&exp.hash, &key, &plan.source)?.unwrap_or(0);
                let done = db.done_reps(&exp.hash, &key, &plan.source, attempt)?;
                for rep in 0..exp.repeat.count {
                    if !done.contains(&rep) {
                        queue.push_back((pi, attempt, rep));
                    }
                }
            }
        }
        Ok(Ahead {
            queue,
            ready: BTreeMap::new(),
            // A few runs per worker, so one long run does not leave the others idle for
            // long while a batch finishes.
            batch: width.saturating_mul(4),
        })
    }

    /// Run `key`'s result if it may go ahead: computed now with the next runs in the queue,
    /// or earlier. None: it runs in its turn.
    ///
    /// The batch's runs, and whatever the campaign stores while it goes through them, are
    /// committed together ([`Db::begin_group`]) when the next batch is computed or the
    /// campaign ends or fails.
    #[allow(clippy::type_complexity)]
    fn take(
        &mut self,
        key: RunKey,
        plans: &[PointPlan],
        db: &mut Db,
        io: &mut Io,
    ) -> Result<Option<(u64, u64, Result<RunResult, LabError>)>, LabError> {
        if let Some(r) = self.ready.remove(&key) {
            return Ok(Some(r));
        }
        // Runs the campaign passed by without asking (it took another path) are dropped.
        while self.queue.front().is_some_and(|&k| k < key) {
            self.queue.pop_front();
        }
        if self.queue.front() != Some(&key) {
            return Ok(None);
        }
        db.commit_group()?;
        let n = self.batch.min(self.queue.len());
        let keys: Vec<RunKey> = self.queue.drain(..n).collect();
        // Each run's logs under names of their own, as in its turn (`run_once`).
        let labelled: Vec<_> = keys
            .iter()
            .map(|k| crate::plan::label_logs(&plans[k.0].specs, &plans[k.0].point, k.2))
            .collect();
        let batch: Vec<&[JobSpec]> = labelled.iter().map(|s| &s[..]).collect();
        let started = (io.now)();
        let results = io.runner.run_many(&batch);
        let ended = (io.now)();
        debug_assert_eq!(results.len(), keys.len());
        for (k, r) in keys.into_iter().zip(results) {
            self.ready.insert(k, (started, ended, r));
        }
        db.begin_group()?;
        Ok(self.ready.remove(&key))
    }
}

fn run_point(
    st: &mut State,
    db: &mut Db,
    plans: &[PointPlan],
    pi: usize,
    io: &mut Io,
    report: &mut Report,
) -> Result<Outcome, LabError> {
    let plan = &plans[pi];
    let exp = st.exp;
    let key = params_key(&plan.params);
    let hash = &exp.hash;
    let metric = exp.repeat.metric.as_str();

    // Convergence first: find the transfer at which the rate settles, then repeat there.
    let mut specs = plan.specs.clone();
    let mut convergence = Vec::new();
    if let Some(c) = &exp.converge {
        let (value, curve) = converge(st, db, plan, &key, io)?;
        convergence = curve;
        for s in &mut specs {
            c.grow.apply(s, value);
        }
    }

    let mut attempt = db.last_attempt(hash, &key, &plan.source)?.unwrap_or(0);
    let mut first_skip = true;
    loop {
        let done = db.done_reps(hash, &key, &plan.source, attempt)?;
        // The attempt's last run, its point's row and the superseding of earlier attempts
        // are committed together (one synchronous commit instead of three when runs go one
        // at a time); a batch's open group already holds them.
        let last_rep = (0..exp.repeat.count).rev().find(|r| !done.contains(r));
        let mut point_group = false;
        for rep in 0..exp.repeat.count {
            if done.contains(&rep) {
                st.done += 1;
                report.runs_skipped += 1;
                if first_skip {
                    let (stored, missing): (Vec<u32>, Vec<u32>) =
                        (0..exp.repeat.count).partition(|r| done.contains(r));
                    (io.observe)(&Event::Skipped {
                        point: plan.point.index,
                        what: describe(&plan.point),
                        stored,
                        missing,
                    });
                    first_skip = false;
                }
                continue;
            }
            (io.observe)(&Event::RunStart {
                point: plan.point.index,
                rep,
                attempt,
                done: st.done,
                total: st.total,
                what: describe(&plan.point),
            });
            let (started, result, ended) = match st.ahead.take((pi, attempt, rep), plans, db, io)? {
                Some((started, ended, r)) => {
                    let r = r
                        .and_then(|r| check_complete(&r).map(|_| r))
                        .map_err(|e| e.context(run_label(plan, rep)))?;
                    (started, r, ended)
                }
                None => {
                    let started = (io.now)();
                    let r = run_once(exp, plan, &specs, rep, io)?;
                    check_complete(&r).map_err(|e| e.context(run_label(plan, rep)))?;
                    (started, r, (io.now)())
                }
            };
            let metrics = crate::metrics::of_run(&result);
            let record = RunRecord {
                campaign_id: st.campaign_id,
                environment_id: Some(st.env_id),
                experiment: exp.name.clone(),
                experiment_hash: hash.clone(),
                point: plan.point.index,
                rep,
                attempt,
                source: plan.source.clone(),
                target: plan.stored_target.clone(),
                params: plan.params.clone(),
                metrics: metrics.clone(),
                workload: serde_json::to_string(&specs).unwrap_or_default(),
                result_json: serde_json::to_string(&result).ok(),
                started_at: started,
                ended_at: ended,
            };
            if Some(rep) == last_rep && !db.in_group() {
                db.begin_group()?;
                point_group = true;
            }
            db.insert_run(&record)?;
            st.done += 1;
            report.runs_done += 1;
            (io.observe)(&Event::RunDone {
                point: plan.point.index,
                rep,
                value: metrics.get(metric).copied().unwrap_or(f64::NAN),
            });
        }
        let by_rep = db.point_metrics(hash, &key, &plan.source, attempt, exp.repeat.count)?;
        let stats = stats_of(&by_rep);
        let flagged = match (exp.repeat.spread_threshold, stats.get(metric)) {
            (Some(th), Some(s)) => s.over(th),
            _ => false,
        };
        let again = flagged && attempt < exp.repeat.rerun;
        db.upsert_point(
            hash,
            &PointRow {
                campaign: crate::db::campaign_label(&exp.name, hash),
                experiment: exp.name.clone(),
                point: plan.point.index,
                attempt,
                source: plan.source.clone(),
                target: plan.stored_target.clone(),
                params: plan.params.clone(),
                stats: stats.clone(),
                flagged,
            },
        )?;
        if flagged {
            let spread = stats.get(metric).map(|s| s.spread_pct).unwrap_or(0.0);
            (io.observe)(&Event::Flagged {
                point: plan.point.index,
                spread_pct: spread,
                rerun: again,
            });
        }
        if again {
            if point_group {
                db.commit_group()?;
            }
            attempt += 1;
            st.total += exp.repeat.count as u64;
            continue;
        }
        db.supersede(hash, &key, &plan.source, attempt, exp.repeat.count)?;
        if point_group {
            db.commit_group()?;
        }
        return Ok(Outcome {
            point: plan.point.index,
            values: plan
                .point
                .values
                .iter()
                .map(|(k, v)| (k.clone(), plan.params.get(k).cloned().unwrap_or(v.clone())))
                .collect(),
            params: plan.params.clone(),
            source: plan.source.clone(),
            target: plan.stored_target.clone(),
            attempts: attempt + 1,
            stats,
            flagged,
            convergence,
        });
    }
}

/// Whether a run's result may be stored as a repetition: every job ran to its end (none was
/// stopped early, by Ctrl-C or an error) and some job counted I/O. A run that fails this is
/// not stored (its point fails with the reason), so a later sweep runs it again instead of
/// keeping a partial or empty measurement.
pub fn check_complete(result: &RunResult) -> Result<(), LabError> {
    if let Some(j) = result.jobs.iter().find(|j| j.stopped.is_some()) {
        let why = j.stopped.as_deref().unwrap_or("");
        return Err(LabError::failed(format!(
            "job '{}' was stopped early ({why}) after {:.2} s; the run is not stored (run the same sweep again to resume)",
            j.name,
            j.elapsed_ns as f64 / 1e9
        )));
    }
    if let Some(j) = result.jobs.iter().find(|j| j.error.is_some()) {
        return Err(LabError::failed(format!(
            "job '{}' failed: {}; the run is not stored",
            j.name,
            j.error.as_deref().unwrap_or("")
        )));
    }
    let ios: u64 = result
        .jobs
        .iter()
        .map(|j| j.read.total_ios + j.write.total_ios + j.trim.total_ios)
        .sum();
    let bytes: u64 = result
        .jobs
        .iter()
        .map(|j| j.read.io_bytes + j.write.io_bytes + j.trim.io_bytes)
        .sum();
    if ios == 0 && bytes == 0 {
        return Err(LabError::failed(
            "no job counted any I/O (is ramp_time as long as the run, or the size or runtime too small?); the run is not stored, as its rates and latencies would be 0",
        ));
    }
    Ok(())
}

/// Statistics per metric over repetitions.
pub fn stats_of(by_rep: &BTreeMap<u32, BTreeMap<String, f64>>) -> BTreeMap<String, Stats> {
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for m in by_rep.values() {
        for (k, v) in m {
            values.entry(k.clone()).or_default().push(*v);
        }
    }
    values
        .into_iter()
        .filter_map(|(k, v)| Stats::of(&v).map(|s| (k, s)))
        .collect()
}

/// A run in an error: its point's index and values (`point 1 (size=109951162777600) rep 0`),
/// so a value the workload or target refuses only when it runs is named with its axis.
fn run_label(plan: &PointPlan, rep: u32) -> String {
    if plan.point.values.is_empty() {
        format!("point {} rep {rep}", plan.point.index)
    } else {
        format!(
            "point {} ({}) rep {rep}",
            plan.point.index,
            describe(&plan.point)
        )
    }
}

/// One run with everything around it. Teardown and file removal run even if a step failed;
/// the first error is the one returned.
fn run_once(
    exp: &Experiment,
    plan: &PointPlan,
    specs: &[JobSpec],
    rep: u32,
    io: &mut Io,
) -> Result<RunResult, LabError> {
    let mut vars = plan.vars.clone();
    vars.insert("rep".into(), rep.to_string());
    let what = run_label(plan, rep);
    // Nothing has been set up yet, so there is nothing to tear down either.
    if let Some(e) = io.runner.stopped() {
        return Err(e.context(what));
    }
    let body = |io: &mut Io| -> Result<RunResult, LabError> {
        if !plan.member_files_to_create.is_empty() {
            io.actions
                .create_files(&plan.member_files_to_create, plan.member_size)?;
        }
        for cmd in &exp.hooks.setup {
            let c = template(cmd, &vars).map_err(LabError::usage)?;
            io.actions
                .command(&c)
                .map_err(|e| e.context(format!("{what}: setup hook")))?;
        }
        match &exp.hooks.cache_defeat {
            CacheDefeat::None => {}
            CacheDefeat::DropCaches => io
                .actions
                .drop_caches()
                .map_err(|e| e.context(format!("{what}: cache defeat")))?,
            CacheDefeat::ReadFile { path, size } => {
                let p = template(path, &vars).map_err(LabError::usage)?;
                io.actions
                    .read_file(&p, *size)
                    .map_err(|e| e.context(format!("{what}: cache defeat")))?
            }
        }
        // Each run's logs under names of their own (the point's label and the repetition).
        let specs = crate::plan::label_logs(specs, &plan.point, rep);
        io.runner.run(&specs).map_err(|e| e.context(what.clone()))
    };
    let result = body(io);
    let mut cleanup: Result<(), LabError> = Ok(());
    for cmd in &exp.hooks.teardown {
        let r = template(cmd, &vars)
            .map_err(LabError::usage)
            .and_then(|c| io.actions.command(&c))
            .map_err(|e| e.context(format!("{what}: teardown hook")));
        if cleanup.is_ok() {
            cleanup = r;
        }
    }
    if !plan.member_files_to_create.is_empty() {
        let r = io.actions.remove_files(&plan.member_files_to_create);
        if cleanup.is_ok() {
            cleanup = r;
        }
    }
    let result = result?;
    cleanup?;
    Ok(result)
}

/// Grow the point's transfer by `factor` until the rate changes by less than `tolerance`
/// between steps (or `max_steps` / `max` is reached). Returns the last value and the curve.
/// Steps already stored are reused, so an interrupted search resumes.
fn converge(
    st: &mut State,
    db: &mut Db,
    plan: &PointPlan,
    key: &str,
    io: &mut Io,
) -> Result<(u64, Vec<(u64, f64)>), LabError> {
    let exp = st.exp;
    let c = exp.converge.as_ref().expect("called with [converge]");
    let stored = db.convergence_steps(&exp.hash, key)?;
    let mut curve: Vec<(u64, f64)> = Vec::new();
    let mut value = c.start;
    for step in 0..c.max_steps {
        let mb_s = if let Some((_, total, _, r)) = stored.iter().find(|s| s.0 == step) {
            curve.push((*total, *r));
            *r
        } else {
            let mut specs = plan.specs.clone();
            for s in &mut specs {
                c.grow.apply(s, value);
            }
            let result = run_once(exp, plan, &specs, 0, io)?;
            check_complete(&result).map_err(|e| {
                e.context(format!(
                    "point {} convergence step {step}",
                    plan.point.index
                ))
            })?;
            let s = result.aggregate().summary();
            db.insert_convergence(
                st.campaign_id,
                &exp.name,
                &exp.hash,
                plan.point.index,
                key,
                step,
                s.io_bytes,
                s.runtime_ns,
                s.mb_s,
            )?;
            curve.push((s.io_bytes, s.mb_s));
            s.mb_s
        };
        (io.observe)(&Event::Converge {
            point: plan.point.index,
            step,
            value,
            mb_s,
        });
        if curve.len() >= 2 {
            let prev = curve[curve.len() - 2].1;
            if prev > 0.0 && ((mb_s - prev) / prev).abs() < c.tolerance {
                return Ok((value, curve));
            }
        }
        let mut next = (value as f64 * c.factor).round() as u64;
        if c.grow == Grow::Size {
            // Whole blocks, so direct I/O and the block size stay valid.
            let unit = plan
                .specs
                .iter()
                .map(|s| s.bs.max())
                .max()
                .unwrap_or(1)
                .max(512);
            next = (next / unit).max(1) * unit;
        }
        if c.max.is_some_and(|m| next > m) {
            (io.observe)(&Event::Note(format!(
                "point {}: rate still changing by more than {}% at the largest allowed value",
                plan.point.index,
                c.tolerance * 100.0
            )));
            return Ok((value, curve));
        }
        if step + 1 < c.max_steps {
            value = next;
        }
    }
    (io.observe)(&Event::Note(format!(
        "point {}: rate did not settle within {} steps; using the last",
        plan.point.index, c.max_steps
    )));
    Ok((value, curve))
}
