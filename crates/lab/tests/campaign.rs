//! The campaign loop with a fake runner and fake actions: no I/O but the database file.

use raidlab_lab::campaign::{self, Actions, Event, Io, Runner};
use raidlab_lab::db::{Db, Environment};
use raidlab_lab::experiment::Experiment;
use raidlab_lab::plan::Context;
use raidlab_lab::LabError;
use raidlab_result::{JobResult, RunResult};
use raidlab_workload::JobSpec;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

type Log = Rc<RefCell<Vec<String>>>;

/// The rate call n reports for a job.
type RateFn = Box<dyn FnMut(u32, &JobSpec) -> Result<f64, LabError>>;
/// Changes the result of call n.
type AlterFn = Box<dyn FnMut(u32, &mut JobResult)>;

/// Returns a rate from a function of (call number, specs); logs each run.
struct FakeRunner {
    log: Log,
    calls: u32,
    rate: RateFn,
    /// Runs it computes at once (1: every run in its turn); above 1 every run is independent.
    width: usize,
    /// Changes the result of call n (a job stopped early, no I/O counted, …).
    alter: AlterFn,
}

impl Runner for FakeRunner {
    fn independent(&self, _specs: &[JobSpec]) -> bool {
        self.width > 1
    }
    fn width(&self) -> usize {
        self.width
    }
    fn run_many(&mut self, batch: &[&[JobSpec]]) -> Vec<Result<RunResult, LabError>> {
        self.log.borrow_mut().push(format!("batch {}", batch.len()));
        batch.iter().map(|s| self.run(s)).collect()
    }
    fn run(&mut self, specs: &[JobSpec]) -> Result<RunResult, LabError> {
        let n = self.calls;
        self.calls += 1;
        let s = &specs[0];
        self.log.borrow_mut().push(format!(
            "run bs={} size={:?}",
            s.bs.read.entries[0].0, s.size
        ));
        let mb_s = (self.rate)(n, s)?;
        let mut j = JobResult {
            instances: 1,
            target: s.filenames.join(":"),
            ..Default::default()
        };
        let bytes = s.size.unwrap_or(1 << 20);
        j.read.io_bytes = bytes;
        j.read.total_ios = bytes / s.bs.read.entries[0].0;
        j.read.runtime_ns = (bytes as f64 / (mb_s * 1e6) * 1e9) as u64;
        (self.alter)(n, &mut j);
        Ok(RunResult {
            version: "test".into(),
            timestamp: 0,
            jobs: vec![j],
            ..Default::default()
        })
    }
}

struct FakeActions {
    log: Log,
    fail_on: Option<String>,
}

impl Actions for FakeActions {
    fn command(&mut self, cmd: &str) -> Result<(), LabError> {
        self.log.borrow_mut().push(format!("cmd {cmd}"));
        if self.fail_on.as_deref().is_some_and(|f| cmd.contains(f)) {
            return Err(LabError::failed(format!("'{cmd}' exited with status 1")));
        }
        Ok(())
    }
    fn drop_caches(&mut self) -> Result<(), LabError> {
        self.log.borrow_mut().push("drop_caches".into());
        Ok(())
    }
    fn read_file(&mut self, path: &str, size: u64) -> Result<(), LabError> {
        self.log
            .borrow_mut()
            .push(format!("read_file {path} {size}"));
        Ok(())
    }
    fn create_files(&mut self, files: &[String], size: u64) -> Result<(), LabError> {
        self.log
            .borrow_mut()
            .push(format!("create {} x {size}", files.len()));
        Ok(())
    }
    fn remove_files(&mut self, files: &[String]) -> Result<(), LabError> {
        self.log
            .borrow_mut()
            .push(format!("remove {}", files.len()));
        Ok(())
    }
}

thread_local! {
    /// The scratch folder of the harness's "process" (each sweep has its own).
    static SCRATCH: std::cell::Cell<&'static str> = const { std::cell::Cell::new("/scratch") };
}

fn ctx() -> Context {
    Context {
        raidlab: "raidlab".into(),
        scratch: SCRATCH.get().into(),
    }
}

struct Harness {
    log: Log,
    events: Vec<Event>,
}

fn go(
    exp: &Experiment,
    db: &mut Db,
    rate: impl FnMut(u32, &JobSpec) -> Result<f64, LabError> + 'static,
    fail_on: Option<&str>,
) -> (Result<campaign::Report, LabError>, Harness) {
    go_wide(exp, db, rate, fail_on, 1)
}

fn go_wide(
    exp: &Experiment,
    db: &mut Db,
    rate: impl FnMut(u32, &JobSpec) -> Result<f64, LabError> + 'static,
    fail_on: Option<&str>,
    width: usize,
) -> (Result<campaign::Report, LabError>, Harness) {
    go_full(exp, db, rate, fail_on, width, |_, _| {})
}

fn go_full(
    exp: &Experiment,
    db: &mut Db,
    rate: impl FnMut(u32, &JobSpec) -> Result<f64, LabError> + 'static,
    fail_on: Option<&str>,
    width: usize,
    alter: impl FnMut(u32, &mut JobResult) + 'static,
) -> (Result<campaign::Report, LabError>, Harness) {
    let log: Log = Rc::new(RefCell::new(Vec::new()));
    let mut runner = FakeRunner {
        log: log.clone(),
        calls: 0,
        rate: Box::new(rate),
        width,
        alter: Box::new(alter),
    };
    let mut actions = FakeActions {
        log: log.clone(),
        fail_on: fail_on.map(str::to_string),
    };
    let mut events = Vec::new();
    let clock = || 1_700_000_000u64;
    let r = {
        let mut observe = |e: &Event| events.push(e.clone());
        let mut io = Io {
            runner: &mut runner,
            actions: &mut actions,
            now: &clock,
            observe: &mut observe,
        };
        campaign::run(exp, db, &Environment::default(), &ctx(), &mut io)
    };
    (r, Harness { log, events })
}

fn exp(text: &str) -> Experiment {
    Experiment::parse(text, "t.toml", Path::new("."), &[]).unwrap()
}

const NOISY: &str = r#"
name = "noisy"
[workload]
size = "1m"
[target]
filename = "/f"
[sweep]
bs = ["4k", "64k"]
[repeat]
count = 3
spread_threshold = 0.05
rerun = 2
"#;

#[test]
fn noisy_points_are_flagged_and_rerun_until_quiet_or_out_of_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open_or_create(&dir.path().join("n.db")).unwrap();
    // bs=4k: the first attempt is noisy (100, 150, 100), the second quiet.
    // bs=64k: always noisy (alternating 100/200).
    let (r, h) = go(
        &exp(NOISY),
        &mut db,
        |n, s| {
            Ok(if s.bs.read.entries[0].0 == 4096 {
                [100.0, 150.0, 100.0, 100.0, 101.0, 100.0][n as usize]
            } else if n % 2 == 0 {
                100.0
            } else {
                200.0
            })
        },
        None,
    );
    let r = r.unwrap();
    assert_eq!(r.outcomes.len(), 2);
    let quiet = &r.outcomes[0];
    assert_eq!((quiet.attempts, quiet.flagged), (2, false));
    assert!(
        (quiet.stats["mb_s"].spread_pct - 1.0).abs() < 0.01,
        "{:?}",
        quiet.stats["mb_s"]
    );
    let loud = &r.outcomes[1];
    assert_eq!(
        (loud.attempts, loud.flagged),
        (3, true),
        "1 run + 2 re-runs, still flagged"
    );
    assert_eq!(r.runs_done, 6 + 9);
    let flagged: Vec<_> = h
        .events
        .iter()
        .filter(|e| matches!(e, Event::Flagged { .. }))
        .collect();
    assert_eq!(flagged.len(), 4);
    // Only the last attempt's runs are current.
    let runs = db.runs().unwrap();
    assert_eq!(runs.len(), 6);
    let pts = db.points().unwrap();
    assert_eq!(pts.len(), 2);
    assert!(pts[1].flagged && !pts[0].flagged);
}

#[test]
fn convergence_grows_size_until_the_rate_settles() {
    let text = r#"
name = "conv"
[workload]
bs = "64k"
[target]
filename = "/f"
[converge]
grow = "size"
start = "1m"
factor = 4
tolerance = 0.05
max_steps = 10
"#;
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open_or_create(&dir.path().join("c.db")).unwrap();
    // A cache makes small transfers look fast: rate = 50 + 400 MB / size(MiB)... settles.
    let (r, h) = go(
        &exp(text),
        &mut db,
        |_, s| {
            let mib = s.size.unwrap() as f64 / (1 << 20) as f64;
            Ok(50.0 + 400.0 / mib)
        },
        None,
    );
    let r = r.unwrap();
    let curve = &r.outcomes[0].convergence;
    // 1m: 450, 4m: 150, 16m: 75, 64m: 56.25, 256m: 51.56 (change 8.3%), 1g: 50.39 (2.3% < 5%).
    assert_eq!(curve.len(), 6, "{curve:?}");
    assert_eq!(curve.last().unwrap().0, 1 << 30);
    let steps = db.convergence().unwrap();
    assert_eq!(steps.len(), 6);
    assert_eq!(steps[5].total_bytes, 1 << 30);
    // The repetition then runs at the converged size.
    let log = h.log.borrow();
    assert_eq!(
        log.last().unwrap(),
        &format!("run bs=65536 size=Some({})", 1u64 << 30)
    );
    assert_eq!(db.runs().unwrap().len(), 1);
}

/// A runner told to stop (Ctrl-C) after its first run.
struct StopAfterFirst(FakeRunner);

impl Runner for StopAfterFirst {
    fn run(&mut self, specs: &[JobSpec]) -> Result<RunResult, LabError> {
        self.0.run(specs)
    }
    fn stopped(&self) -> Option<LabError> {
        (self.0.calls >= 1).then(|| LabError::failed("stopped by the test"))
    }
}

/// A campaign told to stop between runs stops before the next run's member files, setup
/// hooks and cache defeat: it builds no array only to tear it down, and has nothing to tear
/// down. The run before is stored.
#[test]
fn a_stop_between_runs_sets_nothing_up_for_the_next() {
    let text = r#"
name = "stop"
[workload]
size = "1m"
[target]
level = 5
members = 3
member_size = "8m"
[sweep]
chunk = ["4k", "64k"]
[hooks]
setup = ["create {chunk} p{point}"]
teardown = ["destroy p{point}"]
cache_defeat = "drop_caches"
"#;
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open_or_create(&dir.path().join("s.db")).unwrap();
    let log: Log = Rc::new(RefCell::new(Vec::new()));
    let mut runner = StopAfterFirst(FakeRunner {
        log: log.clone(),
        calls: 0,
        rate: Box::new(|_, _| Ok(10.0)),
        width: 1,
        alter: Box::new(|_, _| {}),
    });
    let mut actions = FakeActions {
        log: log.clone(),
        fail_on: None,
    };
    let clock = || 1_700_000_000u64;
    let mut observe = |_: &Event| {};
    let mut io = Io {
        runner: &mut runner,
        actions: &mut actions,
        now: &clock,
        observe: &mut observe,
    };
    let e = campaign::run(
        &exp(text),
        &mut db,
        &Environment::default(),
        &ctx(),
        &mut io,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("point 1 (chunk=65536) rep 0: stopped by the test"),
        "{e}"
    );
    assert_eq!(
        *log.borrow(),
        [
            "create 3 x 8388608",
            "cmd create 4096 p0",
            "drop_caches",
            "run bs=4096 size=Some(1048576)",
            "cmd destroy p0",
            "remove 3",
        ],
        "nothing done for point 1"
    );
    assert_eq!(db.runs().unwrap().len(), 1);
}

#[test]
fn hooks_run_in_order_and_teardown_runs_even_when_the_run_fails() {
    let text = r#"
name = "hooks"
[workload]
size = "1m"
[target]
level = 5
members = 3
member_size = "8m"
[sweep]
chunk = ["4k"]
[hooks]
setup = ["create {level} {chunk} {members} p{point} r{rep}"]
teardown = ["destroy p{point} r{rep}"]
cache_defeat = { read_file = "/dummy", size = "2g" }
"#;
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open_or_create(&dir.path().join("h.db")).unwrap();
    let (r, h) = go(&exp(text), &mut db, |_, _| Ok(10.0), None);
    r.unwrap();
    let log = h.log.borrow().clone();
    assert_eq!(
        log,
        [
            "create 3 x 8388608",
            "cmd create 5 4096 3 p0 r0",
            &format!("read_file /dummy {}", 2u64 << 30),
            "run bs=4096 size=Some(1048576)",
            "cmd destroy p0 r0",
            "remove 3",
        ]
    );
    // The run fails: teardown and removal still happen, the error names the point.
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open_or_create(&dir.path().join("h.db")).unwrap();
    let (r, h) = go(
        &exp(text),
        &mut db,
        |_, _| Err(LabError::failed("device vanished")),
        None,
    );
    let e = r.unwrap_err();
    assert!(
        e.to_string()
            .contains("point 0 (chunk=4096) rep 0: device vanished"),
        "{e}"
    );
    let log = h.log.borrow().clone();
    assert_eq!(&log[log.len() - 2..], ["cmd destroy p0 r0", "remove 3"]);
    assert!(db.runs().unwrap().is_empty());
    // A setup hook fails: the run is skipped, teardown still runs.
    let (r, h) = go(&exp(text), &mut db, |_, _| Ok(1.0), Some("create 5"));
    assert!(r.unwrap_err().to_string().contains("setup hook"));
    let log = h.log.borrow().clone();
    assert!(!log.iter().any(|l| l.starts_with("run ")));
    assert_eq!(&log[log.len() - 2..], ["cmd destroy p0 r0", "remove 3"]);
}

#[test]
fn an_interrupted_campaign_resumes_with_the_runs_not_yet_stored() {
    let text = "name = \"resume\"\n[workload]\nsize = \"1m\"\n[target]\nfilename = \"/f\"\n[sweep]\nbs = [\"4k\", \"8k\", \"16k\"]\n[repeat]\ncount = 2";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let e = exp(text);
    {
        let mut db = Db::open_or_create(&path).unwrap();
        // The 4th run fails, as if the process had died there.
        let (r, _) = go(
            &e,
            &mut db,
            |n, _| {
                if n == 3 {
                    Err(LabError::failed("killed"))
                } else {
                    Ok(10.0)
                }
            },
            None,
        );
        assert!(r.is_err());
        assert_eq!(db.runs().unwrap().len(), 3);
    }
    let mut db = Db::open_existing(&path).unwrap();
    let (r, h) = go(&e, &mut db, |_, _| Ok(20.0), None);
    let r = r.unwrap();
    assert_eq!((r.runs_done, r.runs_skipped), (3, 3));
    let ran: Vec<_> = h
        .log
        .borrow()
        .iter()
        .filter(|l| l.starts_with("run"))
        .cloned()
        .collect();
    assert_eq!(
        ran,
        [
            "run bs=8192 size=Some(1048576)",
            "run bs=16384 size=Some(1048576)",
            "run bs=16384 size=Some(1048576)"
        ]
    );
    let runs = db.runs().unwrap();
    assert_eq!(runs.len(), 6);
    // A third invocation runs nothing.
    let (r, _) = go(&e, &mut db, |_, _| panic!("nothing left to run"), None);
    assert_eq!(r.unwrap().runs_done, 0);
    // Raising the repetition count keeps the hash: only the new repetitions run.
    let more = exp(&text.replace("count = 2", "count = 3"));
    assert_eq!(more.hash, e.hash);
    let (r, _) = go(&more, &mut db, |_, _| Ok(30.0), None);
    assert_eq!(r.unwrap().runs_done, 3);
}

/// Lowering `repeat.count` below the repetitions stored uses the first `count` of them by
/// repetition index, in the printed statistics (the CSV), the stored point and the runs a
/// report reads; raising it again brings the others back without running them. All three
/// stored repetitions were averaged whatever the count.
#[test]
fn a_lowered_repeat_count_uses_the_first_repetitions_only() {
    let text = "name = \"fewer\"\n[workload]\nsize = \"1m\"\n[target]\nfilename = \"/f\"\n[sweep]\nbs = [\"4k\"]\n[repeat]\ncount = 3";
    // The fake runner's rate comes back through a runtime in whole ns.
    let near = |a: f64, b: f64| (a - b).abs() < 1e-3;
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open_or_create(&dir.path().join("f.db")).unwrap();
    let three = exp(text);
    let (r, _) = go(
        &three,
        &mut db,
        |n, _| Ok([10.0, 20.0, 60.0][n as usize]),
        None,
    );
    assert!(near(r.unwrap().outcomes[0].stats["mb_s"].mean, 30.0));

    let one = exp(&text.replace("count = 3", "count = 1"));
    assert_eq!(
        one.hash, three.hash,
        "the stored repetitions are this point's"
    );
    let (r, _) = go(&one, &mut db, |_, _| panic!("rep 0 is stored"), None);
    let r = r.unwrap();
    let s = r.outcomes[0].stats["mb_s"];
    assert!(s.n == 1 && near(s.mean, 10.0), "rep 0 alone: {s:?}");
    assert!(near(db.points().unwrap()[0].stats["mb_s"].mean, 10.0));
    let current = db.runs().unwrap();
    assert!(
        current.len() == 1 && current[0].rep == 0 && near(current[0].metrics["mb_s"], 10.0),
        "what a report reads: {current:?}"
    );

    let (r, _) = go(&three, &mut db, |_, _| panic!("all stored"), None);
    let r = r.unwrap();
    assert_eq!(r.runs_done, 0);
    assert!(near(r.outcomes[0].stats["mb_s"].mean, 30.0));
    assert_eq!(db.runs().unwrap().len(), 3);
}

/// A sweep resumed by another process runs in another scratch folder: its runs are stored
/// with the same target as the first process's (`{scratch}/data`), so the point stays one
/// point (a report split it in two, one curve per scratch folder), while the runner is given
/// the real file.
#[test]
fn a_resumed_scratch_campaign_stores_one_target_per_point() {
    let text = "name = \"scr\"\n[workload]\nsize = \"1m\"\n[target]\nfilename = \"{scratch}/data\"\n[sweep]\nbs = [\"4k\", \"8k\"]\n[repeat]\ncount = 2";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let e = exp(text);
    let mut db = Db::open_or_create(&path).unwrap();
    SCRATCH.set("/tmp/raidlab-sweep-100-0");
    let (r, _) = go(
        &e,
        &mut db,
        |n, _| {
            if n == 2 {
                Err(LabError::failed("interrupted"))
            } else {
                Ok(10.0)
            }
        },
        None,
    );
    assert!(r.is_err());
    SCRATCH.set("/tmp/raidlab-sweep-200-0");
    let given = Rc::new(RefCell::new(Vec::new()));
    let g = given.clone();
    let (r, _) = go(
        &e,
        &mut db,
        move |_, s| {
            g.borrow_mut().push(s.filenames.join(":"));
            Ok(10.0)
        },
        None,
    );
    let r = r.unwrap();
    assert_eq!((r.runs_done, r.runs_skipped), (2, 2));
    assert!(r.outcomes.iter().all(|o| o.target == "{scratch}/data"));
    assert_eq!(*given.borrow(), ["/tmp/raidlab-sweep-200-0/data"; 2]);
    let targets: Vec<String> = db.runs().unwrap().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, ["{scratch}/data"; 4]);
    assert!(db
        .points()
        .unwrap()
        .iter()
        .all(|p| p.target == "{scratch}/data"));
}

#[test]
fn reference_rows_are_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ref.csv"),
        "block_kib,read_mb_s\n0.5,1.5\n2048,47.1\n",
    )
    .unwrap();
    let text = r#"
name = "withref"
[workload]
size = "4m"
rw = "read"
[target]
filename = "/f"
[sweep]
bs = ["512", "2m"]
[[reference]]
file = "ref.csv"
label = "seed"
[[reference.series]]
params = { bs = "{block_kib*1024}" }
metrics = { mb_s = "read_mb_s" }
"#;
    let e = Experiment::parse(text, "t.toml", dir.path(), &[]).unwrap();
    let mut db = Db::open_or_create(&dir.path().join("w.db")).unwrap();
    let (r, _) = go(&e, &mut db, |_, _| Ok(5.0), None);
    assert_eq!(r.unwrap().reference_rows, 2);
    let (r, _) = go(&e, &mut db, |_, _| Ok(5.0), None);
    assert_eq!(r.unwrap().reference_rows, 0);
    let runs = db.runs().unwrap();
    let refs: Vec<_> = runs.iter().filter(|r| r.source == "reference").collect();
    assert_eq!(refs.len(), 2);
    assert_eq!(refs[1].params["bs"], "2097152");
    assert_eq!(refs[1].target, "seed");
    let measured: Vec<_> = runs.iter().filter(|r| r.source == "measured").collect();
    assert_eq!(
        measured[1].params["bs"], "2097152",
        "same key as the reference row, so they overlay"
    );
}

/// A sweep narrowed to one system (`--set system=…/fig12.toml`) stores, and so overlays, the
/// reference rows of that system only. Every figure's rows
/// were stored, and the report overlaid them all on fig12's curve.
#[test]
fn only_the_swept_systems_reference_rows_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chains.csv"),
        "figure,block_kib,read_mb_s\n11,64,42.4\n12,64,44.0\n13,64,45.1\n",
    )
    .unwrap();
    let text = r#"
name = "narrowed"
[workload]
size = "4m"
rw = "read"
[sweep]
system = ["/p/llnl2000/fig11.toml", "/p/llnl2000/fig12.toml", "/p/llnl2000/fig13.toml"]
bs = ["64k"]
[[reference]]
file = "chains.csv"
label = "seed"
[[reference.series]]
params = { system = "fig{figure}", bs = "{block_kib*1024}" }
metrics = { mb_s = "read_mb_s" }
"#;
    let set = ["system=/p/llnl2000/fig12.toml".to_string()];
    let e = Experiment::parse(text, "t.toml", dir.path(), &set).unwrap();
    let mut db = Db::open_or_create(&dir.path().join("n.db")).unwrap();
    let (r, _) = go(&e, &mut db, |_, _| Ok(5.0), None);
    assert_eq!(r.unwrap().reference_rows, 1);
    let systems: Vec<String> = db
        .runs()
        .unwrap()
        .iter()
        .filter(|r| r.source == "reference")
        .filter_map(|r| r.params.get("system").cloned())
        .collect();
    assert_eq!(systems, ["fig12"]);
    // The whole sweep stores every figure's rows.
    let all = Experiment::parse(text, "t.toml", dir.path(), &[]).unwrap();
    let (r, _) = go(&all, &mut db, |_, _| Ok(5.0), None);
    assert_eq!(r.unwrap().reference_rows, 3);
}

/// A sweep narrowed to one direction (`--set rw=read`) stores the reference rows of that
/// direction only, keyed as its points are (without `rw`, which the points do not store
/// once it is fixed), so that they overlay them. The write rows were stored too, and the
/// report drew "rw=write (reference)" markers beside no simulated curve.
#[test]
fn only_the_swept_directions_reference_rows_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chain.csv"),
        "figure,count,block_kib,read_mb_s,write_mb_s\n12,131072,64,44.0,16.0\n12,4096,2048,47.1,18.2\n",
    )
    .unwrap();
    let text = r#"
name = "directions"
[workload]
size = "8g"
[target]
system = "/p/llnl2000/fig12.toml"
[sweep]
rw = ["read", "write"]
bs = ["64k", "2m"]
[[reference]]
file = "chain.csv"
label = "seed"
[[reference.series]]
params = { system = "fig{figure}", rw = "read", bs = "{block_kib*1024}", size = "{count*block_kib*1024}" }
metrics = { mb_s = "read_mb_s" }
[[reference.series]]
params = { system = "fig{figure}", rw = "write", bs = "{block_kib*1024}", size = "{count*block_kib*1024}" }
metrics = { mb_s = "write_mb_s" }
"#;
    let set = ["rw=read".to_string()];
    let e = Experiment::parse(text, "t.toml", dir.path(), &set).unwrap();
    let mut db = Db::open_or_create(&dir.path().join("d.db")).unwrap();
    let (r, _) = go(&e, &mut db, |_, _| Ok(5.0), None);
    assert_eq!(r.unwrap().reference_rows, 2);
    let runs = db.runs().unwrap();
    let key = |reference: bool| -> std::collections::BTreeSet<_> {
        runs.iter()
            .filter(|r| (r.source == "reference") == reference)
            .map(|r| r.params.clone())
            .collect()
    };
    assert_eq!(key(false).len(), 2);
    assert_eq!(
        key(true),
        key(false),
        "read rows only, keyed as the points (8 GiB each, the workload's size)"
    );
    // Another size keeps the rows, with the reference's size for the report to name.
    let set = ["rw=read".to_string(), "size=256m".to_string()];
    let e = Experiment::parse(text, "t.toml", dir.path(), &set).unwrap();
    let mut db = Db::open_or_create(&dir.path().join("s.db")).unwrap();
    let (r, _) = go(&e, &mut db, |_, _| Ok(5.0), None);
    assert_eq!(r.unwrap().reference_rows, 2);
    let sizes: Vec<String> = db
        .runs()
        .unwrap()
        .iter()
        .filter(|r| r.source == "reference")
        .map(|r| r.params.get("size").cloned().unwrap_or_default())
        .collect();
    assert_eq!(sizes, ["8589934592", "8589934592"]);
}

/// Rate by block size alone (so the order runs are computed in cannot change it); 16 KiB
/// fails when `fail` is set.
fn by_bs(fail: bool) -> impl FnMut(u32, &JobSpec) -> Result<f64, LabError> {
    move |_, s| {
        let bs = s.bs.read.entries[0].0;
        if fail && bs == 16384 {
            return Err(LabError::failed("16k failed"));
        }
        Ok(bs as f64 / 1024.0)
    }
}

const FIVE: &str = "name = \"five\"\n[workload]\nsize = \"1m\"\n[target]\nfilename = \"sim:x.toml\"\n[sweep]\nbs = [\"4k\", \"8k\", \"16k\", \"32k\", \"64k\"]\n[repeat]\ncount = 2";

fn batches(h: &Harness) -> Vec<String> {
    h.log
        .borrow()
        .iter()
        .filter(|l| l.starts_with("batch"))
        .cloned()
        .collect()
}

#[test]
fn independent_runs_are_computed_in_batches_and_stored_as_in_their_turn() {
    let dir = tempfile::tempdir().unwrap();
    let e = exp(FIVE);
    let mut one = Db::open_or_create(&dir.path().join("one.db")).unwrap();
    let (r1, h1) = go_wide(&e, &mut one, by_bs(false), None, 1);
    assert!(batches(&h1).is_empty(), "width 1 never batches");
    let mut wide = Db::open_or_create(&dir.path().join("wide.db")).unwrap();
    let (r2, h2) = go_wide(&e, &mut wide, by_bs(false), None, 2);
    // Ten runs, four per worker per batch: 8 then 2.
    assert_eq!(batches(&h2), ["batch 8", "batch 2"]);
    let (r1, r2) = (r1.unwrap(), r2.unwrap());
    assert_eq!(r2.runs_done, 10);
    assert_eq!(r1.outcomes, r2.outcomes);
    let key = |db: &Db| -> Vec<_> {
        db.runs()
            .unwrap()
            .into_iter()
            .map(|r| (r.point, r.rep, r.metrics.get("mb_s").copied()))
            .collect()
    };
    assert_eq!(key(&one), key(&wide));
    // Committed: another connection sees every run while this one is still open.
    let other = Db::open_existing(&dir.path().join("wide.db")).unwrap();
    assert_eq!(key(&other), key(&one));
    // Progress reads as in turn: each run starts, then is done, in order.
    let order = |h: &Harness| -> Vec<String> {
        h.events
            .iter()
            .filter_map(|e| match e {
                Event::RunStart { point, rep, .. } => Some(format!("start {point}.{rep}")),
                Event::RunDone { point, rep, .. } => Some(format!("done {point}.{rep}")),
                _ => None,
            })
            .collect()
    };
    assert_eq!(order(&h1), order(&h2));
}

#[test]
fn a_failed_run_in_a_batch_stops_the_campaign_at_its_turn_and_a_rerun_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.db");
    let e = exp(FIVE);
    {
        let mut db = Db::open_or_create(&path).unwrap();
        let (r, h) = go_wide(&e, &mut db, by_bs(true), None, 4);
        let err = r.unwrap_err().to_string();
        assert!(
            err.contains("point 2 (bs=16384) rep 0: 16k failed"),
            "{err}"
        );
        assert_eq!(batches(&h), ["batch 10"]);
        // The runs before the failed one are stored (and committed), none after it.
        assert_eq!(db.runs().unwrap().len(), 4);
        assert_eq!(Db::open_existing(&path).unwrap().runs().unwrap().len(), 4);
    }
    let mut db = Db::open_existing(&path).unwrap();
    let (r, h) = go_wide(&e, &mut db, by_bs(false), None, 4);
    let r = r.unwrap();
    assert_eq!((r.runs_done, r.runs_skipped), (6, 4));
    assert_eq!(batches(&h), ["batch 6"]);
    assert_eq!(db.runs().unwrap().len(), 10);
}

#[test]
fn runs_with_hooks_around_them_go_in_their_turn() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{FIVE}\n[hooks]\nsetup = [\"prepare {{rep}}\"]");
    let mut db = Db::open_or_create(&dir.path().join("h.db")).unwrap();
    let (r, h) = go_wide(&exp(&text), &mut db, by_bs(false), None, 4);
    assert_eq!(r.unwrap().runs_done, 10);
    assert!(batches(&h).is_empty());
    let log = h.log.borrow();
    assert_eq!(
        &log[..2],
        ["cmd prepare 0", "run bs=4096 size=Some(1048576)"]
    );
}

/// Two different system files with the same name are two points: both run, each stores its
/// own result under its own label, and a second campaign finds both stored (the resume
/// check tells them apart too). Before, the second was "already in the database" and both
/// rows carried the first file's result.
#[test]
fn systems_with_the_same_file_name_are_distinct_points() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"same\"\n[workload]\nsize = \"1m\"\n\
                [sweep]\nsystem = [\"/p/systems/xdd2008/raid5.toml\", \"/p/alt/raid5.toml\"]";
    let e = exp(text);
    let path = dir.path().join("s.db");
    let mut db = Db::open_or_create(&path).unwrap();
    let by_file = |_: u32, s: &JobSpec| -> Result<f64, LabError> {
        Ok(if s.filenames[0].contains("/alt/") {
            50.0
        } else {
            200.0
        })
    };
    let (r, h) = go(&e, &mut db, by_file, None);
    let r = r.unwrap();
    assert_eq!((r.runs_done, r.runs_skipped), (2, 0));
    assert!(
        !h.events.iter().any(|e| matches!(e, Event::Skipped { .. })),
        "{:?}",
        h.events
    );
    let shown: Vec<_> = r.outcomes.iter().map(|o| o.values[0].1.clone()).collect();
    assert_eq!(shown, ["xdd2008/raid5", "alt/raid5"]);
    let rate = |o: &campaign::Outcome| o.stats["mb_s"].mean;
    assert!(
        (rate(&r.outcomes[0]) - 200.0).abs() < 1.0,
        "{:?}",
        r.outcomes[0]
    );
    assert!(
        (rate(&r.outcomes[1]) - 50.0).abs() < 1.0,
        "{:?}",
        r.outcomes[1]
    );
    let runs = db.runs().unwrap();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0].params, runs[1].params);
    assert!(
        runs[1].target.contains("/p/alt/raid5.toml"),
        "{}",
        runs[1].target
    );
    let (r, _) = go(&e, &mut db, by_file, None);
    assert_eq!(r.unwrap().runs_skipped, 2);
    assert_eq!(db.runs().unwrap().len(), 2);
}

/// A simulated system file that is missing is named, with the point or table that gave it,
/// before anything runs.
#[test]
fn missing_system_files_are_named_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.toml");
    std::fs::write(&ok, "[host]\n").unwrap();
    let text = format!(
        "name = \"m\"\n[workload]\nsize = \"1m\"\n[sweep]\nsystem = [\"{}\", \"{}\"]",
        ok.display(),
        dir.path().join("gone.toml").display()
    );
    let e = exp(&text);
    let plans = campaign::plan_all(&e, &ctx()).unwrap();
    let err = campaign::check_system_files(&e, &plans).unwrap_err();
    let s = err.to_string();
    assert!(err.is_usage(), "{s}");
    assert!(
        s.starts_with("t.toml: [sweep] system, point 1 (system=gone)")
            && s.contains("gone.toml does not exist")
            && !s.contains('\n'),
        "{s}"
    );
    let e = Experiment::parse(
        &text,
        "t.toml",
        Path::new("."),
        &["system=/nonexistent".into()],
    )
    .unwrap();
    let plans = campaign::plan_all(&e, &ctx()).unwrap();
    let s = campaign::check_system_files(&e, &plans)
        .unwrap_err()
        .to_string();
    assert!(
        s.contains("[target] system: system file /nonexistent does not exist"),
        "{s}"
    );
    let fine = Experiment::parse(
        &text,
        "t.toml",
        Path::new("."),
        &[format!("system={}", ok.display())],
    )
    .unwrap();
    let plans = campaign::plan_all(&fine, &ctx()).unwrap();
    campaign::check_system_files(&fine, &plans).unwrap();
}

/// A job stopped by Ctrl-C: the run is neither stored nor counted, the campaign fails at it
/// with the reason, and the next sweep runs it again.
#[test]
fn a_run_stopped_early_is_not_stored_and_a_resumed_sweep_runs_it_again() {
    let text = "name = \"stop\"\n[workload]\nsize = \"1m\"\n[target]\nfilename = \"/f\"\n[sweep]\nbs = [\"4k\", \"8k\"]\n[repeat]\ncount = 2";
    let e = exp(text);
    for width in [1, 4] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        {
            let mut db = Db::open_or_create(&path).unwrap();
            // Call 1 (point 0 rep 1) is cut short.
            let (r, _) = go_full(
                &e,
                &mut db,
                |_, _| Ok(10.0),
                None,
                width,
                |n, j| {
                    if n == 1 {
                        j.stopped = Some("interrupted".into());
                        j.elapsed_ns = 970_000_000;
                    }
                },
            );
            let err = r.unwrap_err().to_string();
            assert!(
                err.contains("point 0 (bs=4096) rep 1")
                    && err.contains("stopped early (interrupted)")
                    && err.contains("not stored"),
                "{err}"
            );
            let runs = db.runs().unwrap();
            assert_eq!(runs.len(), 1, "only the complete run is stored");
        }
        let mut db = Db::open_existing(&path).unwrap();
        let (r, h) = go_wide(&e, &mut db, |_, _| Ok(20.0), None, width);
        let r = r.unwrap();
        assert_eq!((r.runs_done, r.runs_skipped), (3, 1), "width {width}");
        assert_eq!(r.outcomes[0].stats["mb_s"].n, 2);
        assert!(h.events.iter().any(|ev| matches!(
            ev,
            Event::Skipped { point: 0, stored, missing, .. } if stored == &[0] && missing == &[1]
        )));
        assert_eq!(db.runs().unwrap().len(), 4);
    }
}

#[test]
fn a_run_that_counted_no_io_fails_its_point_and_is_not_stored() {
    let text = "name = \"zero\"\n[workload]\nsize = \"1m\"\n[target]\nfilename = \"/f\"\n[repeat]\ncount = 2";
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open_or_create(&dir.path().join("z.db")).unwrap();
    let (r, _) = go_full(
        &exp(text),
        &mut db,
        |_, _| Ok(10.0),
        None,
        1,
        |_, j| {
            j.read = Default::default();
            j.write = Default::default();
        },
    );
    let err = r.unwrap_err();
    assert!(!err.is_usage());
    let m = err.to_string();
    assert!(
        m.contains("point 0 rep 0") && m.contains("no job counted any I/O"),
        "{m}"
    );
    assert!(db.runs().unwrap().is_empty());
}

#[test]
fn a_convergence_step_stopped_early_is_not_stored() {
    let text = "name = \"cs\"\n[workload]\nbs = \"64k\"\n[target]\nfilename = \"/f\"\n[converge]\ngrow = \"size\"\nstart = \"1m\"\nfactor = 4\ntolerance = 0.05\nmax_steps = 10";
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open_or_create(&dir.path().join("c.db")).unwrap();
    let (r, _) = go_full(
        &exp(text),
        &mut db,
        |_, _| Ok(10.0),
        None,
        1,
        |n, j| {
            if n == 1 {
                j.stopped = Some("interrupted".into());
            }
        },
    );
    let m = r.unwrap_err().to_string();
    assert!(
        m.contains("convergence step 1") && m.contains("stopped early"),
        "{m}"
    );
    assert_eq!(db.convergence().unwrap().len(), 1);
}
