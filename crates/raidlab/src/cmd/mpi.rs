//! `raidlab run --mpi`: one run over the ranks of an MPI job, as IOR runs its ranks. Every
//! rank runs the same jobs against its own instances (rank r's numbered after the ranks
//! before it: `offset_increment` regions of a shared file, or files of their own under
//! `directory`); the ranks meet before the layout, around it when they share a file, before
//! each stonewall group and after the last; rank 0 gathers the results and prints them as one
//! run, `group_reporting` folding ranks as it folds `numjobs` (bytes add over the slowest
//! rank's runtime: IOR's aggregate).
//!
//! No rank is ever left waiting: every meeting is an all-gather of each rank's status, and a
//! rank whose run ends early (bad input on one host, a refused target, Ctrl-C) still meets
//! every later one with its reason, so the others stop at their next meeting. Only rank 0
//! prints the results and the errors (`rank R on HOST: …`); the others exit silently with the
//! same code. What the meetings say is plain data ([`Status`]); the pure parts (who shares a
//! target, how the ranks' results fold) are functions tested without MPI.

use super::run::{self, ExecOptions};
use crate::error::CliError;
use raidlab_engine::ewriteln;
use raidlab_mpi::World;
use raidlab_result::schema::{fold_group_reporting, MpiPlace};
use raidlab_result::RunResult;
use raidlab_workload::JobSpec;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What a rank says at a meeting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Status {
    /// Going on.
    Ok,
    /// Stopped by Ctrl-C: the groups done so far are its results, and the others stop too.
    Stopped,
    /// This rank could not go on: its exit code and its one line.
    Failed { code: i32, message: String },
    /// Ended because another rank could not go on (said by that rank).
    Follows,
}

/// The first meeting's message: whether the rank could ready its run, its targets, and how
/// many stonewall groups it runs (0 for `--help`): the meetings that follow are counted from
/// the groups, so ranks that disagree on them would wait at meetings the others never hold.
#[derive(Serialize, Deserialize)]
struct Hello {
    status: Status,
    targets: Vec<String>,
    groups: usize,
}

/// The stonewall groups of a rank's jobs (at least one: a run meets once before its first).
fn stonewall_groups(jobs: &[JobSpec]) -> usize {
    raidlab_workload::job_groups(jobs)
        .last()
        .map_or(1, |g| g.0 + 1)
}

/// The line rank 0 prints when the ranks that readied their runs did not ready the same
/// number of stonewall groups (`mpirun -np 1 raidlab … : -np 1 raidlab …` given two
/// different command lines, or a job file that differs between hosts): their meetings would
/// not line up, so the run ends before any of them.
fn groups_disagree(groups: &[Option<usize>], hosts: &[String]) -> Option<String> {
    let mut seen: Vec<(usize, MpiPlace)> = Vec::new();
    for (r, g) in groups.iter().enumerate() {
        let Some(g) = *g else { continue };
        let place = MpiPlace::one(r as u32, &hosts[r]);
        match seen.iter_mut().find(|(n, _)| *n == g) {
            Some((_, p)) => p.merge(&place),
            None => seen.push((g, place)),
        }
    }
    if seen.len() < 2 {
        return None;
    }
    let says = |n: usize| match n {
        0 => "--help".to_string(),
        1 => "1 stonewall group".to_string(),
        n => format!("{n} stonewall groups"),
    };
    let parts: Vec<String> = seen
        .iter()
        .map(|(n, p)| format!("{}: {}", p.text(), says(*n)))
        .collect();
    Some(format!(
        "the ranks were given different jobs ({}) (valid: the same jobs on every rank, as one mpirun command line gives them)",
        parts.join("; ")
    ))
}

/// The last message, to rank 0: the rank's results, if it has them.
#[derive(Serialize, Deserialize)]
struct Outcome {
    status: Status,
    result: Option<RunResult>,
}

/// What the run does between the meetings, known alike on every rank once the first meeting
/// is over.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Schedule {
    rank: usize,
    size: usize,
    /// Ranks share a target: they lay it out one at a time (`size` meetings, rank r's turn
    /// between the r-th and the next), so no rank reads or extends a file another is writing.
    turns: bool,
    /// Stonewall groups, each preceded by a meeting.
    groups: usize,
}

impl Schedule {
    /// Meetings after the first: the layout's turns, one per group, one after the groups.
    fn meetings(&self) -> usize {
        self.setup_meetings() + self.groups + 1
    }
    fn setup_meetings(&self) -> usize {
        if self.turns {
            self.size
        } else {
            0
        }
    }
    /// The last meeting before this rank lays out its targets (meetings counted from 1).
    fn before_setup(&self) -> usize {
        if self.turns {
            self.rank
        } else {
            0
        }
    }
    fn after_setup(&self) -> usize {
        self.setup_meetings()
    }
    fn before_group(&self, g: usize) -> usize {
        self.setup_meetings() + 1 + g
    }
    fn after_groups(&self) -> usize {
        self.meetings()
    }
}

/// Whether any target is named by more than one rank (the same path on two hosts may be one
/// shared file: they take turns too).
fn ranks_share_a_target(targets: &[Vec<String>]) -> bool {
    let mut owner: HashMap<&str, usize> = HashMap::new();
    for (r, list) in targets.iter().enumerate() {
        for t in list {
            if let Some(&o) = owner.get(t.as_str()) {
                if o != r {
                    return true;
                }
            }
            owner.insert(t, r);
        }
    }
    false
}

/// The failures among the ranks' statuses, each with its rank.
fn failures(statuses: &[Status]) -> Vec<(usize, i32, String)> {
    statuses
        .iter()
        .enumerate()
        .filter_map(|(r, s)| match s {
            Status::Failed { code, message } => Some((r, *code, message.clone())),
            _ => None,
        })
        .collect()
}

/// The lines rank 0 prints for the ranks' failures: one per distinct message, with the ranks
/// and hosts that gave it (`ranks 1,3 on n2: …`), or the message alone when every rank of
/// the run gave it (the same bad option everywhere); and the exit code, the highest.
fn failure_lines(fails: &[(usize, i32, String)], hosts: &[String]) -> (Vec<String>, i32) {
    let mut by_message: Vec<(String, MpiPlace)> = Vec::new();
    for (r, _, m) in fails {
        let place = MpiPlace::one(*r as u32, &hosts[*r]);
        match by_message.iter_mut().find(|(mm, _)| mm == m) {
            Some((_, p)) => p.merge(&place),
            None => by_message.push((m.clone(), place)),
        }
    }
    let code = fails.iter().map(|f| f.1).max().unwrap_or(1);
    let lines = by_message
        .into_iter()
        .map(|(m, p)| {
            if p.ranks.len() == hosts.len() {
                m
            } else {
                format!("{}: {m}", p.text())
            }
        })
        .collect();
    (lines, code)
}

/// The ranks' results as one run: each job marked with its rank and host, the ranks' jobs of
/// each spec side by side (by spec, then rank, then instance, as fio would number the jobs of
/// one process running them all), then folded by `group_reporting` as one process's are.
/// Every rank runs the same specs, so their lists of results have the same shape; should
/// they not, the ranks' lists follow one another.
fn merge_ranks(mut ranks: Vec<(MpiPlace, RunResult)>, specs: &[JobSpec]) -> RunResult {
    let spec_index =
        |j: &raidlab_result::JobResult| run::spec_index_of(j, specs).unwrap_or(usize::MAX);
    for (place, r) in &mut ranks {
        for j in &mut r.jobs {
            j.mpi = Some(place.clone());
        }
    }
    // Each rank's results cut where the spec or the group changes.
    let segments = |r: &RunResult| -> Vec<std::ops::Range<usize>> {
        let mut out: Vec<std::ops::Range<usize>> = Vec::new();
        for (i, j) in r.jobs.iter().enumerate() {
            match out.last_mut() {
                Some(seg)
                    if spec_index(&r.jobs[seg.start]) == spec_index(j)
                        && r.jobs[seg.start].groupid == j.groupid =>
                {
                    seg.end = i + 1
                }
                _ => out.push(i..i + 1),
            }
        }
        out
    };
    let cuts: Vec<Vec<std::ops::Range<usize>>> = ranks.iter().map(|(_, r)| segments(r)).collect();
    let alike = cuts.windows(2).all(|w| {
        w[0].len() == w[1].len() && w[0].iter().zip(&w[1]).all(|(a, b)| a.len() == b.len())
    });
    // Each host's disks once (its ranks read the same counters over about the same time),
    // named with the host when the ranks ran on more than one.
    let mut disk_util: Vec<raidlab_result::DiskUtil> = Vec::new();
    let mut seen: std::collections::HashSet<(String, String)> = Default::default();
    let host = |p: &MpiPlace| p.hosts.first().cloned().unwrap_or_default();
    let many_hosts = ranks.iter().any(|(p, _)| host(p) != host(&ranks[0].0));
    for (place, r) in &ranks {
        for d in &r.disk_util {
            if seen.insert((host(place), d.name.clone())) {
                let mut d = d.clone();
                if many_hosts {
                    d.name = format!("{}:{}", host(place), d.name);
                }
                disk_util.push(d);
            }
        }
    }
    let (version, timestamp) = ranks
        .first()
        .map(|(_, r)| (r.version.clone(), r.timestamp))
        .unwrap_or_default();
    let mut ordered: Vec<(usize, raidlab_result::JobResult)> = Vec::new();
    if alike && !cuts.is_empty() {
        (0..cuts[0].len()).for_each(|s| {
            for (k, (_, r)) in ranks.iter().enumerate() {
                for j in &r.jobs[cuts[k][s].clone()] {
                    ordered.push((spec_index(j), j.clone()));
                }
            }
        });
    } else {
        for (_, r) in ranks {
            ordered.extend(r.jobs.into_iter().map(|j| (spec_index(&j), j)));
        }
    }
    let jobs = fold_group_reporting(ordered, |si| {
        specs.get(si).is_some_and(|s| s.group_reporting)
    });
    RunResult {
        version,
        timestamp,
        jobs,
        disk_util,
    }
}

/// One rank's side of the meetings: the engine's [`raidlab_engine::Coordinator`].
struct Ranks {
    world: Arc<World>,
    plan: Schedule,
    /// Every rank's host, by rank, from the first meeting (for naming ranks in errors).
    hosts: Vec<String>,
    /// The process's Ctrl-C flag: set here when another rank stopped.
    stop: Arc<AtomicBool>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Meetings held after the first.
    held: usize,
    /// What this rank says at the next meeting.
    own: Status,
    /// Every failure heard, with its rank (each once), in the order heard.
    fails: Vec<(usize, i32, String)>,
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ranks")
            .field("plan", &self.plan)
            .finish_non_exhaustive()
    }
}

impl Ranks {
    /// Hold the meetings up to `through` (counted from 1 after the first), each an all-gather
    /// of this rank's status. An error: another rank could not go on (this rank then says it
    /// follows), or MPI itself failed.
    fn meet_through(&self, through: usize) -> Result<(), String> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while st.held < through {
            if st.own == Status::Ok && self.stop.load(Ordering::Relaxed) {
                st.own = Status::Stopped;
            }
            let msg = serde_json::to_vec(&st.own).map_err(|e| e.to_string())?;
            let all = self.world.all_gather(&msg)?;
            st.held += 1;
            let statuses: Vec<Status> = all
                .iter()
                .map(|b| serde_json::from_slice(b).unwrap_or(Status::Follows))
                .collect();
            if statuses.contains(&Status::Stopped) {
                self.stop.store(true, Ordering::Relaxed);
            }
            for f in failures(&statuses) {
                if !st.fails.iter().any(|g| g.0 == f.0) {
                    st.fails.push(f);
                }
            }
        }
        if matches!(st.own, Status::Failed { .. }) {
            return Ok(());
        }
        // The first other rank's failure heard, as the engine is told it.
        let Some((r, _, message)) = st.fails.iter().find(|f| f.0 != self.plan.rank) else {
            return Ok(());
        };
        let host = self.hosts.get(*r).map_or("", String::as_str);
        let heard = format!("rank {r} on {host}: {message}");
        st.own = Status::Follows;
        Err(heard)
    }

    /// After the run on this rank (its result or its error): meet every meeting left, saying
    /// why this rank ended if it failed, then hand the results to rank 0. Returns, on rank 0,
    /// every rank's outcome; on the others, None.
    fn finish(&self, outcome: Result<RunResult, CliError>) -> Result<Option<Vec<Outcome>>, String> {
        {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = &outcome {
                if matches!(st.own, Status::Ok | Status::Stopped) {
                    st.own = Status::Failed {
                        code: e.code,
                        message: e.message.clone(),
                    };
                }
            }
        }
        // (An error here is another rank's, already noted.)
        let _ = self.meet_through(self.plan.meetings());
        let own = self
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .own
            .clone();
        let mine = Outcome {
            status: own,
            result: outcome.ok(),
        };
        let bytes = serde_json::to_vec(&mine).map_err(|e| e.to_string())?;
        let gathered = self.world.gather(&bytes)?;
        Ok(gathered.map(|all| {
            all.iter()
                .map(|b| {
                    serde_json::from_slice(b).unwrap_or(Outcome {
                        status: Status::Failed {
                            code: 1,
                            message: "its results did not arrive whole".into(),
                        },
                        result: None,
                    })
                })
                .collect()
        }))
    }
}

impl raidlab_engine::Coordinator for Ranks {
    fn before_setup(&self) -> Result<(), String> {
        self.meet_through(self.plan.before_setup())
    }
    fn after_setup(&self) -> Result<(), String> {
        self.meet_through(self.plan.after_setup())
    }
    fn before_group(&self, group: usize) -> Result<(), String> {
        self.meet_through(self.plan.before_group(group))
    }
    fn after_groups(&self) -> Result<(), String> {
        self.meet_through(self.plan.after_groups())
    }
}

/// A rank's run, readied before the first meeting: the jobs as this rank runs them, and, on
/// rank 0, where the results go.
struct Ready {
    jobs: Vec<JobSpec>,
    formats: Vec<raidlab_result::OutputFormat>,
    output: run::Output,
    progress: bool,
    force: bool,
    readonly: bool,
    help: bool,
}

/// Read the arguments and ready this rank's jobs; nothing here may end the rank before the
/// first meeting (the caller takes the error there).
fn ready(args: &[String], world: &World) -> Result<Ready, CliError> {
    let inv = run::parse_args(args)?;
    if inv.help {
        return Ok(Ready {
            jobs: Vec::new(),
            formats: inv.formats,
            output: run::Output::none(),
            progress: false,
            force: false,
            readonly: false,
            help: true,
        });
    }
    if inv.parse_only {
        return Err(CliError::usage(
            "--mpi: --parse-only checks the jobs in one process (valid: raidlab run --parse-only without --mpi)",
        ));
    }
    if inv.jobs.is_empty() {
        return Err(CliError::usage(
            "--mpi: no jobs to run (valid: --name=JOB with options, or --job FILE.fio; the embedded default is for one process)",
        ));
    }
    for j in &inv.jobs {
        for f in &j.filenames {
            let why = match run::target_kind(f) {
                run::TargetKind::Simulated => Some(
                    "a simulated system runs in one process (valid: raidlab run without --mpi)",
                ),
                run::TargetKind::Array => Some(
                    "an array is assembled by one process (valid: serve it with raidlab array serve --fuse and name its volume file)",
                ),
                run::TargetKind::Path => None,
            };
            if let Some(why) = why {
                return Err(CliError::usage(format!(
                    "--mpi: job '{}' targets {f}: {why}",
                    j.name
                )));
            }
        }
        if j.logs.any() || j.write_iolog.is_some() {
            return Err(CliError::usage(format!(
                "--mpi: job '{}' writes fio's log files, which every rank would write under the same names (valid: the logs in a run without --mpi)",
                j.name
            )));
        }
    }
    let mut jobs = inv.jobs;
    raidlab_workload::for_rank(&mut jobs, world.rank(), world.size());
    run::draw_seeds(&mut jobs);
    run::open_dirs(&mut jobs)?;
    raidlab_workload::apply_directories(&mut jobs);
    for s in &jobs {
        s.validate().map_err(|e| CliError::usage(e.message))?;
    }
    run::check_exec_outputs(&jobs, inv.force)?;
    // Only rank 0 writes the results.
    let output = if world.rank() == 0 {
        run::Output::open(inv.output.as_deref(), &jobs, inv.force)?
    } else {
        run::Output::none()
    };
    Ok(Ready {
        jobs,
        formats: inv.formats,
        output,
        progress: world.rank() == 0 && inv.progress.unwrap_or_else(run::progress_default),
        force: inv.force,
        readonly: inv.readonly,
        help: false,
    })
}

/// `raidlab run --mpi …`.
pub fn main(args: &[String]) -> Result<(), CliError> {
    let world = Arc::new(World::init().map_err(|e| CliError::usage(format!("--mpi: {e}")))?);
    let code = match run_ranks(args, &world) {
        Ok(()) => 0,
        Err(e) => {
            if world.rank() == 0 {
                for line in e.message.lines() {
                    ewriteln!("raidlab: {line}");
                }
            }
            e.code
        }
    };
    // The outcome is said (by rank 0). When one rank exits with an error, mpirun signals the
    // others: from here on that ends a rank silently with its code, not as a stopped run.
    // The barrier keeps every rank here until rank 0 has said it, so none is cut short.
    run::leave_quietly_on_signal(code);
    let _ = world.barrier();
    // MPI is finalized as the world is dropped: every clone (the coordinator's) is gone by
    // now, so each rank leaves the world before it exits.
    drop(world);
    if code == 0 {
        Ok(())
    } else {
        // Already said (by rank 0): exit with the code alone.
        Err(CliError {
            code,
            message: String::new(),
        })
    }
}

/// The run on this rank, from the first meeting to the printed results; an error is what
/// rank 0 prints (every rank returns the same code).
fn run_ranks(args: &[String], world: &Arc<World>) -> Result<(), CliError> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    if size > 1 && rank > 0 {
        raidlab_engine::stderr::set_prefix(&format!("[rank {rank}] "));
    }
    // After MPI_Init, so raidlab's Ctrl-C handler is the one in place.
    run::catch_interrupts();
    let readied = ready(args, world);
    // The first meeting: whether every rank could ready its run, its host and its targets.
    let hello = Hello {
        status: match &readied {
            Ok(_) => Status::Ok,
            Err(e) => Status::Failed {
                code: e.code,
                message: e.message.clone(),
            },
        },
        targets: readied
            .as_ref()
            .map(|r| r.jobs.iter().flat_map(|j| j.filenames.clone()).collect())
            .unwrap_or_default(),
        groups: readied
            .as_ref()
            .map_or(0, |r| if r.help { 0 } else { stonewall_groups(&r.jobs) }),
    };
    let bytes =
        serde_json::to_vec(&(world.host(), &hello)).map_err(|e| CliError::failed(e.to_string()))?;
    let all = world.all_gather(&bytes).map_err(CliError::failed)?;
    let mut hosts = Vec::with_capacity(size);
    let mut statuses = Vec::with_capacity(size);
    let mut targets = Vec::with_capacity(size);
    let mut groups = Vec::with_capacity(size);
    for b in &all {
        let (h, m): (String, Hello) = serde_json::from_slice(b).map_err(|e| {
            CliError::failed(format!("a rank's first message did not arrive whole: {e}"))
        })?;
        hosts.push(h);
        groups.push((m.status == Status::Ok).then_some(m.groups));
        statuses.push(m.status);
        targets.push(m.targets);
    }
    let fails = failures(&statuses);
    if let (true, Some(line)) = (fails.is_empty(), groups_disagree(&groups, &hosts)) {
        if let Ok(r) = readied {
            r.output.discard();
        }
        return Err(CliError::usage(line));
    }
    let ready = match readied {
        Ok(ready) if fails.is_empty() => ready,
        other => {
            if let Ok(r) = other {
                r.output.discard();
            }
            let (lines, code) = failure_lines(&fails, &hosts);
            return Err(CliError::lines(code, lines.iter().map(String::as_str)));
        }
    };
    if ready.help {
        return if rank == 0 { run::print_help() } else { Ok(()) };
    }
    let plan = Schedule {
        rank,
        size,
        turns: ranks_share_a_target(&targets),
        groups: stonewall_groups(&ready.jobs),
    };
    let ranks = Arc::new(Ranks {
        world: Arc::clone(world),
        plan,
        hosts: hosts.clone(),
        stop: run::stop_flag(),
        state: Mutex::new(State {
            held: 0,
            own: Status::Ok,
            fails: Vec::new(),
        }),
    });
    let opts = ExecOptions {
        force: ready.force,
        readonly: ready.readonly,
        progress: ready.progress,
        coordinator: Some(ranks.clone() as Arc<dyn raidlab_engine::Coordinator>),
    };
    let result = run::execute(ready.jobs.clone(), &opts);
    drop(opts);
    let own_job_error = result
        .as_ref()
        .is_ok_and(|r| r.jobs.iter().any(|j| j.error.is_some()));
    let gathered = ranks.finish(result).map_err(CliError::failed)?;
    let fails = ranks
        .state
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .fails
        .clone();
    drop(ranks);
    if !fails.is_empty() {
        ready.output.discard();
        let (lines, code) = failure_lines(&fails, &hosts);
        return Err(CliError::lines(code, lines.iter().map(String::as_str)));
    }
    let Some(outcomes) = gathered else {
        // Not rank 0: its results went there; a job's error is printed there too.
        return if own_job_error {
            Err(CliError::failed(""))
        } else {
            Ok(())
        };
    };
    let mut per_rank = Vec::with_capacity(size);
    for (r, o) in outcomes.into_iter().enumerate() {
        match o.result {
            Some(res) => per_rank.push((MpiPlace::one(r as u32, &hosts[r]), res)),
            None => {
                ready.output.discard();
                return Err(CliError::failed(format!(
                    "rank {r} on {}: ended without results",
                    hosts[r]
                )));
            }
        }
    }
    let mut result = merge_ranks(per_rank, &ready.jobs);
    ready
        .output
        .deliver(&mut result, &ready.jobs, &ready.formats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use raidlab_result::{DiskUtil, JobResult};

    fn job(name: &str, groupid: u32, bytes: u64, runtime_ns: u64) -> JobResult {
        let mut j = JobResult {
            name: name.into(),
            groupid,
            instances: 1,
            ..Default::default()
        };
        j.write.io_bytes = bytes;
        j.write.total_ios = bytes / 4096;
        j.write.runtime_ns = runtime_ns;
        j
    }

    fn spec(name: &str, group_reporting: bool) -> JobSpec {
        JobSpec {
            name: name.into(),
            group_reporting,
            ..Default::default()
        }
    }

    /// The meetings line up on every rank: the same count, rank r's layout between its r-th
    /// and the next when ranks take turns, each group's meeting after the layout's.
    #[test]
    fn every_rank_holds_the_same_meetings_and_lays_out_in_its_turn() {
        for turns in [false, true] {
            let plans: Vec<Schedule> = (0..4)
                .map(|rank| Schedule {
                    rank,
                    size: 4,
                    turns,
                    groups: 3,
                })
                .collect();
            let total = plans[0].meetings();
            assert!(plans.iter().all(|p| p.meetings() == total));
            assert_eq!(total, if turns { 4 } else { 0 } + 3 + 1);
            for p in &plans {
                assert!(p.before_setup() <= p.after_setup());
                assert!(p.after_setup() < p.before_group(0));
                assert!(p.before_group(2) < p.after_groups());
                assert_eq!(p.after_groups(), total);
                if turns {
                    // Rank r lays out after r meetings and before the (r+1)-th: one at a time.
                    assert_eq!(p.before_setup(), p.rank);
                    assert_eq!(p.after_setup(), 4);
                } else {
                    assert_eq!(p.before_setup(), 0);
                }
            }
        }
    }

    #[test]
    fn a_target_two_ranks_name_is_shared() {
        let t = |v: &[&[&str]]| -> Vec<Vec<String>> {
            v.iter()
                .map(|l| l.iter().map(|s| s.to_string()).collect())
                .collect()
        };
        assert!(!ranks_share_a_target(&t(&[
            &["/d/w.0.0", "/d/w.1.0"],
            &["/d/w.2.0"]
        ])));
        assert!(ranks_share_a_target(&t(&[&["/f"], &["/g", "/f"]])));
        // One rank naming a file twice (two jobs) shares it with nobody.
        assert!(!ranks_share_a_target(&t(&[&["/f", "/f"], &["/g"]])));
    }

    /// rank 0 prints one line per distinct failure, naming ranks unless all gave it.
    #[test]
    fn failures_are_one_line_each_naming_their_ranks() {
        let hosts: Vec<String> = ["n1", "n1", "n2"].iter().map(|s| s.to_string()).collect();
        let (lines, code) = failure_lines(
            &[
                (1, 2, "bad".into()),
                (2, 2, "bad".into()),
                (0, 1, "other".into()),
            ],
            &hosts,
        );
        assert_eq!(lines, ["ranks 1-2 on n1,n2: bad", "rank 0 on n1: other"]);
        assert_eq!(code, 2);
        let (lines, _) = failure_lines(
            &[(0, 2, "x".into()), (1, 2, "x".into()), (2, 2, "x".into())],
            &hosts,
        );
        assert_eq!(lines, ["x"]);
    }

    /// Without group_reporting each rank's jobs stand apart, by spec then rank; with it a
    /// group's ranks fold into one result whose bytes add over the slowest rank's runtime.
    #[test]
    fn ranks_fold_as_numjobs_do() {
        let specs = [spec("a", false), spec("b", true)];
        let rank = |r: u32, host: &str, t: u64| {
            (
                MpiPlace::one(r, host),
                RunResult {
                    version: "v".into(),
                    timestamp: 7 + r as u64,
                    jobs: vec![
                        job("a", 0, 1 << 20, t),
                        job("a", 0, 1 << 20, t),
                        job("b", 1, 4 << 20, t),
                    ],
                    disk_util: vec![DiskUtil {
                        name: "vda".into(),
                        read_ios: 10 + r as u64,
                        ..Default::default()
                    }],
                },
            )
        };
        let r = merge_ranks(vec![rank(0, "n1", 100), rank(1, "n2", 300)], &specs);
        assert_eq!(r.timestamp, 7);
        let shown: Vec<(String, Vec<u32>)> = r
            .jobs
            .iter()
            .map(|j| (j.name.clone(), j.mpi.as_ref().unwrap().ranks.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                ("a".to_string(), vec![0]),
                ("a".to_string(), vec![0]),
                ("a".to_string(), vec![1]),
                ("a".to_string(), vec![1]),
                ("b".to_string(), vec![0, 1]),
            ]
        );
        let b = &r.jobs[4];
        assert_eq!(b.write.io_bytes, 8 << 20);
        assert_eq!(b.write.runtime_ns, 300);
        assert_eq!(b.mpi.as_ref().unwrap().hosts, ["n1", "n2"]);
        // Each host's disk once, named with its host; two ranks of one host, once.
        let disks = |r: &RunResult| -> Vec<(String, u64)> {
            r.disk_util
                .iter()
                .map(|d| (d.name.clone(), d.read_ios))
                .collect()
        };
        assert_eq!(
            disks(&r),
            [("n1:vda".to_string(), 10), ("n2:vda".to_string(), 11)]
        );
        let one = merge_ranks(vec![rank(0, "n1", 100), rank(1, "n1", 300)], &specs);
        assert_eq!(disks(&one), [("vda".to_string(), 10)]);
    }

    /// What the ranks say survives the trip as JSON.
    #[test]
    fn statuses_and_outcomes_round_trip() {
        for s in [
            Status::Ok,
            Status::Stopped,
            Status::Follows,
            Status::Failed {
                code: 2,
                message: "x".into(),
            },
        ] {
            let b = serde_json::to_vec(&s).unwrap();
            assert_eq!(serde_json::from_slice::<Status>(&b).unwrap(), s);
        }
        let mut res = RunResult {
            version: "v".into(),
            timestamp: 1,
            jobs: vec![job("a", 0, 12345, 678)],
            ..Default::default()
        };
        res.jobs[0].write.clat.record(1234);
        res.jobs[0].usr_cpu = 0.1 + 0.2;
        let o = Outcome {
            status: Status::Ok,
            result: Some(res.clone()),
        };
        let back: Outcome = serde_json::from_slice(&serde_json::to_vec(&o).unwrap()).unwrap();
        assert_eq!(back.result, Some(res));
    }
}
