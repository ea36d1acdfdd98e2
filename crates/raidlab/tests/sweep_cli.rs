//! `raidlab sweep` end to end: real runs on scratch files, the CSV table, the database (refused
//! when foreign, resumed after kill -9), and every recipe planning cleanly.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_raidlab")
}

fn sweep(args: &[&str], cwd: &Path) -> Output {
    let mut child = Command::new(bin())
        .arg("sweep")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn raidlab");
    // Drain both pipes while waiting: a listing larger than a pipe's buffer would otherwise
    // block the child on its write and the wait below would never end.
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).expect("read child output");
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!("raidlab sweep {args:?} ran longer than 300 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn write_experiment(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, format!("name = \"{name}\"\n{body}")).unwrap();
    p
}

const SMALL: &str = r#"
[workload]
size = "1m"
ioengine = "psync"
[target]
filename = "{scratch}/data"
[sweep]
rw = ["write", "read"]
bs = ["4k", "64k"]
[repeat]
count = 2
"#;

#[test]
fn csv_prints_one_row_per_point_with_swept_columns_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(dir.path(), "small", SMALL);
    let out = sweep(&[exp.to_str().unwrap(), "--format", "csv"], dir.path());
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let csv = text(&out.stdout);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&head[..4], ["point", "rw", "bs", "source"]);
    for m in [
        "mb_s",
        "mib_s",
        "iops",
        "lat_mean_us",
        "lat_p99_us",
        "mb_s_median",
        "mb_s_spread_pct",
        "mb_s_ci95_low",
    ] {
        assert!(head.contains(&m), "missing {m} in {head:?}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4);
    assert_eq!((rows[0][1], rows[0][2]), ("write", "4096"));
    assert_eq!((rows[3][1], rows[3][2]), ("read", "65536"));
    let mb = head.iter().position(|h| *h == "mb_s").unwrap();
    let reps = head.iter().position(|h| *h == "reps").unwrap();
    for r in &rows {
        assert_eq!(r[reps], "2");
        assert!(r[mb].parse::<f64>().unwrap() > 0.0, "{r:?}");
        assert_eq!(r[3], "measured");
    }
    // The database sits next to the experiment; a second run skips every point.
    let db = dir.path().join("small.db");
    let runs = raidlab_lab::db::Db::open_existing(&db)
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(runs.len(), 8);
    let again = sweep(&[exp.to_str().unwrap()], dir.path());
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(
        text(&again.stdout).contains("0 runs now, 8 already stored"),
        "{}",
        text(&again.stdout)
    );
}

/// Log options in a sweep write one log set per point and repetition, named with the
/// point's label (`PREFIX.AXIS-VALUE….repR_bw.N.log`); a file raidlab did not write is
/// refused before the run, in one line, and left as it was.
#[test]
fn a_sweep_writes_each_runs_logs_under_its_points_label() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"
[workload]
size = "1m"
ioengine = "psync"
write_bw_log = "bw"
write_lat_log = ""
[target]
filename = "{scratch}/data"
[sweep]
rw = ["read"]
bs = ["4k", "64k"]
[repeat]
count = 2
"#;
    let exp = write_experiment(dir.path(), "lg", body);
    let out = sweep(&[exp.to_str().unwrap()], dir.path());
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    for (bs, ios) in [("4096", 256), ("65536", 16)] {
        for rep in 0..2 {
            let label = format!("rw-read.bs-{bs}.rep{rep}");
            // Every I/O is a line of the bandwidth log (no log_avg_msec).
            let bw = std::fs::read_to_string(dir.path().join(format!("bw.{label}_bw.1.log")))
                .unwrap_or_else(|e| panic!("bw log of {label}: {e}"));
            assert_eq!(bw.lines().count(), ios, "{label}");
            assert!(
                bw.lines().all(|l| l.ends_with(&format!(", 0, {}, 0", bs))),
                "{bw}"
            );
            // No prefix: the job's name (the experiment's).
            for kind in ["clat", "slat", "lat"] {
                let f = dir.path().join(format!("lg.{label}_{kind}.1.log"));
                assert!(f.is_file(), "{}", f.display());
            }
        }
    }
    // Somebody's file where a log would go: refused, untouched.
    let theirs = dir.path().join("bw.rw-read.bs-4096.rep0_bw.1.log");
    std::fs::remove_file(&theirs).unwrap();
    std::fs::write(&theirs, "not raidlab's\n").unwrap();
    std::fs::remove_file(dir.path().join("lg.db")).unwrap();
    let out = sweep(&[exp.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("log file ") && err.contains("bw.rw-read.bs-4096.rep0_bw.1.log"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "not raidlab's\n");
}

#[test]
fn a_foreign_database_is_refused_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(dir.path(), "small", SMALL);
    for content in [b"my thesis draft\n".to_vec(), {
        let mut v = b"SQLite format 3\0".to_vec();
        v.extend(std::iter::repeat_n(0x42, 4096));
        v
    }] {
        let db = dir.path().join("other.db");
        std::fs::write(&db, &content).unwrap();
        let out = sweep(
            &[exp.to_str().unwrap(), "--db", db.to_str().unwrap()],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("raidlab: ") && err.contains("other.db"),
            "{err}"
        );
        assert_eq!(std::fs::read(&db).unwrap(), content);
    }
}

/// A results database the sweep may not write (a read-only file, a database in a read-only
/// folder, a new one in a read-only folder) is bad input: one line naming it, exit 2, before
/// anything runs, and the file left as it was. It was exit 1 at the campaign's first write
/// ("record campaign: attempt to write a readonly database"). Root may write anything, so as
/// root the sweep runs as nobody.
#[test]
fn a_read_only_database_is_a_usage_error() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let root = unsafe { libc::geteuid() } == 0;
    let nobody = 65534;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let system = repo_root().join("systems/llnl2000/fig12.toml");
    let exp = write_experiment(
        dir.path(),
        "ro",
        &format!(
            "[workload]\nrw = \"read\"\nsize = \"1m\"\n[target]\nsystem = \"{}\"\n[sweep]\nbs = [\"64k\"]\n",
            system.display()
        ),
    );
    let folder = dir.path().join("ro-folder");
    std::fs::create_dir(&folder).unwrap();
    let in_folder = folder.join("in-folder.db");
    let read_only_file = dir.path().join("read-only.db");
    for db in [&in_folder, &read_only_file] {
        drop(raidlab_lab::db::Db::open_or_create(db).unwrap());
        std::fs::set_permissions(db, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(&read_only_file, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o555)).unwrap();
    if root {
        for p in [dir.path(), &folder, &in_folder, &read_only_file] {
            std::os::unix::fs::chown(p, Some(nobody), Some(nobody)).unwrap();
        }
    }
    let new_in_folder = folder.join("new.db");
    for db in [&read_only_file, &in_folder, &new_in_folder] {
        let before = std::fs::read(db).ok();
        let mut cmd = Command::new(bin());
        cmd.arg("sweep")
            .arg(&exp)
            .arg("--db")
            .arg(db)
            .current_dir(dir.path())
            .stdin(Stdio::null());
        if root {
            cmd.uid(nobody).gid(nobody);
        }
        let out = cmd.output().unwrap();
        let err = usage_line(&out);
        assert!(
            err.contains(&format!(
                "results database {} cannot be written",
                db.display()
            )),
            "{err}"
        );
        assert!(!err.contains("creating"), "names the file given: {err}");
        assert_eq!(
            std::fs::read(db).ok(),
            before,
            "{} left as it was",
            db.display()
        );
    }
    let left: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        ["in-folder.db"],
        "nothing made in the read-only folder"
    );
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn bad_experiments_are_one_line_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(
        dir.path(),
        "bad",
        "[target]\nfilename = \"x\"\n[sweep]\nbs = { pow2 = [\"2m\", \"512\"] }\n",
    );
    let out = sweep(&[exp.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bad.toml") && err.contains("low <= high"),
        "{err}"
    );
    let out = sweep(
        &[dir.path().join("missing.toml").to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !dir.path().join("bad.db").exists(),
        "no database for an experiment that cannot run"
    );
}

#[test]
fn kill_9_mid_campaign_keeps_committed_runs_and_a_rerun_completes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    // Each run's setup hook sleeps, so the campaign is still going when it is killed.
    let exp = write_experiment(
        dir.path(),
        "slow",
        r#"
[workload]
size = "256k"
ioengine = "psync"
[target]
filename = "{scratch}/data"
[sweep]
bs = ["4k", "8k", "16k", "32k", "64k", "128k"]
[repeat]
count = 2
[hooks]
setup = ["sleep 0.4"]
"#,
    );
    let db = dir.path().join("slow.db");
    let mut child = Command::new(bin())
        .args(["sweep", exp.to_str().unwrap()])
        .current_dir(dir.path())
        // A killed sweep cannot remove its scratch folder: keep it inside the test's own.
        .env("TMPDIR", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let stored = loop {
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(d) = raidlab_lab::db::Db::open_existing(&db) {
            let n = d.runs().map(|r| r.len()).unwrap_or(0);
            if n >= 3 {
                break n;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "campaign never stored 3 runs"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "campaign ended before it could be killed"
        );
    };
    // SIGKILL: no chance to clean up.
    child.kill().unwrap();
    child.wait().unwrap();
    let after_kill = raidlab_lab::db::Db::open_existing(&db)
        .unwrap()
        .runs()
        .unwrap();
    assert!(
        after_kill.len() >= stored && after_kill.len() < 12,
        "{} runs",
        after_kill.len()
    );
    let out = sweep(&[exp.to_str().unwrap(), "--format", "csv"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let runs = raidlab_lab::db::Db::open_existing(&db)
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(runs.len(), 12);
    let mut keys: Vec<(u64, u32)> = runs.iter().map(|r| (r.point, r.rep)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 12, "no run stored twice");
    let err = text(&out.stderr);
    assert!(err.contains("already in the database, skipped"), "{err}");
}

#[test]
fn every_recipe_plans_cleanly() {
    let root = repo_root();
    let recipes: Vec<PathBuf> = std::fs::read_dir(root.join("recipes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    assert!(recipes.len() >= 6, "{recipes:?}");
    for r in recipes {
        let out = sweep(&[r.to_str().unwrap(), "--dry-run"], &root);
        assert!(
            out.status.success(),
            "{}: {}",
            r.display(),
            text(&out.stderr)
        );
        let listing = text(&out.stdout);
        assert!(
            listing.lines().filter(|l| l.starts_with("point ")).count() >= 1,
            "{listing}"
        );
        if r.ends_with("llnl2000.toml") {
            // 15 configurations (Figures 11-25) x read/write x 11 block sizes.
            assert!(listing.contains(": 330 points"), "{listing}");
            assert!(listing.contains("[simulated]"));
        }
        if r.ends_with("llnl2000-total.toml") {
            // Figure 26: read/write x the 24 measured (bs, count) pairs.
            assert!(listing.contains(": 48 points"), "{listing}");
            assert!(listing.contains("size=51200 "), "100 x 512 B: {listing}");
        }
        if r.ends_with("xdd2008.toml") {
            // 4 levels x randread/randwrite, against the simulated systems.
            assert!(listing.contains(": 8 points"), "{listing}");
            assert!(listing.contains("[simulated]"));
        }
        if r.ends_with("linuxraid2010.toml") {
            // 4 levels x 4 chunks x 4 or 6 drives x write/read, simulated.
            assert!(listing.contains(": 64 points"), "{listing}");
            assert!(listing.contains("[simulated]"));
        }
        if r.ends_with("iometer2008.toml") {
            // 8 systems x 5 read shares x 9 queue depths, simulated.
            assert!(listing.contains(": 360 points"), "{listing}");
            assert!(listing.contains("[simulated]"));
        }
        if r.ends_with("iometer2008-latency.toml") {
            // 4 levels x 3 read shares, each searching for its depth.
            assert!(listing.contains(": 12 points"), "{listing}");
            assert!(listing.contains("[simulated]"));
        }
        if r.ends_with("linux-raid-chunk.toml") {
            assert!(listing.contains(": 72 points × 5 repetitions"), "{listing}");
        }
    }
}

#[test]
fn report_is_written_after_the_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(dir.path(), "small", SMALL);
    let out_dir = dir.path().join("rep");
    let out = sweep(
        &[exp.to_str().unwrap(), "--report", out_dir.to_str().unwrap()],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(out_dir.join("index.html")).expect("index.html written");
    assert!(html.contains("<svg"), "the page carries its figures inline");
}

/// `raidlab sweep RECIPE --format csv` of a repository recipe (its results in `db`, `extra`
/// options after): the CSV it prints.
fn recipe_csv(recipe: &str, db: &Path, extra: &[&str]) -> String {
    let root = repo_root();
    let recipe = root.join(recipe);
    let mut args = vec![
        recipe.to_str().unwrap(),
        "--format",
        "csv",
        "--db",
        db.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = sweep(&args, &root);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// A CSV's rows as fields, and each named column's index (a missing column fails the test).
fn csv_rows<'a, const N: usize>(csv: &'a str, names: [&str; N]) -> (Vec<Vec<&'a str>>, [usize; N]) {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cols = names.map(|name| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name} column in {header:?}"))
    });
    (lines.map(|l| l.split(',').collect()).collect(), cols)
}

#[test]
fn xdd2008_recipe_prints_one_row_per_system_and_direction() {
    // Issue 5: `raidlab sweep recipes/xdd2008.toml --format csv` gives one row per point with
    // the system's file stem, rw and the metrics.
    let dir = tempfile::tempdir().unwrap();
    let csv = recipe_csv("recipes/xdd2008.toml", &dir.path().join("xdd.db"), &[]);
    let (rows, [sys, rw, iops]) = csv_rows(&csv, ["system", "rw", "iops"]);
    let mut seen = Vec::new();
    for f in rows {
        let v: f64 = f[iops].parse().unwrap();
        assert!(v > 0.0, "{f:?}");
        seen.push(format!("{} {}", f[sys], f[rw]));
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "raid0 randread",
            "raid0 randwrite",
            "raid10 randread",
            "raid10 randwrite",
            "raid5 randread",
            "raid5 randwrite",
            "raid6 randread",
            "raid6 randwrite",
        ]
    );
}

/// Seed 004's arrays at a latency target (recipes/iometer2008-latency.toml): each point
/// searches for the deepest queue at which 99% of requests meet 20 ms, and the CSV gives the
/// depth found beside the rates. The seeds' ordering of random writes holds at the target
/// (RAID 6 below RAID 5 below RAID 10), every level reads alike, and the depth found leaves
/// the 99th percentile near the target.
#[test]
fn the_latency_target_recipe_gives_each_arrays_depth_and_iops_at_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let csv = recipe_csv(
        "recipes/iometer2008-latency.toml",
        &dir.path().join("lat.db"),
        &[],
    );
    let (rows, [sys, mix, iops, p99, depth]) = csv_rows(
        &csv,
        ["system", "rwmixread", "iops", "lat_p99_us", "latency_depth"],
    );
    let mut at = std::collections::BTreeMap::new();
    for f in rows {
        let d: f64 = f[depth].parse().unwrap();
        assert!((1.0..=256.0).contains(&d), "{f:?}");
        let p: f64 = f[p99].parse().unwrap();
        assert!(p <= 20_000.0 * 1.25, "{f:?}");
        at.insert(
            (f[sys].to_string(), f[mix].to_string()),
            f[iops].parse::<f64>().unwrap(),
        );
    }
    assert_eq!(at.len(), 12, "{csv}");
    let w = |level: &str| at[&(format!("{level}-8d"), "0".to_string())];
    assert!(w("raid6") < w("raid5") && w("raid5") < w("raid10"), "{csv}");
    let r = |level: &str| at[&(format!("{level}-8d"), "100".to_string())];
    for level in ["raid10", "raid5", "raid6"] {
        assert!((r(level) / r("raid0") - 1.0).abs() < 0.1, "{level}: {csv}");
    }
    // A sweep without a target has no such column.
    let plain = recipe_csv(
        "recipes/xdd2008.toml",
        &dir.path().join("x.db"),
        &["--set", "io_size=64m"],
    );
    assert!(!plain.contains("latency_depth"));
}

#[test]
fn simulated_points_computed_in_parallel_print_and_store_what_one_at_a_time_does() {
    let root = repo_root();
    let dir = tempfile::tempdir().unwrap();
    let recipe = root.join("recipes/xdd2008.toml");
    let run = |parallel: &str| {
        let db = dir.path().join(format!("p{parallel}.db"));
        let out = sweep(
            &[
                recipe.to_str().unwrap(),
                "--format",
                "csv",
                "--set",
                "io_size=256m",
                "--parallel",
                parallel,
                "--db",
                db.to_str().unwrap(),
            ],
            &root,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let one = run("1");
    assert_eq!(one.lines().count(), 9, "{one}");
    assert_eq!(one, run("3"));
    // A second sweep into the same database finds every run stored and prints the same.
    assert_eq!(one, run("3"));

    let out = sweep(&[recipe.to_str().unwrap(), "--parallel", "0"], &root);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--parallel") && err.contains("0"), "{err}");
}

#[test]
fn ctrl_c_stops_a_sweep_before_its_next_run_with_every_run_before_it_stored() {
    interrupt_stops_a_sweep(libc::SIGINT, "interrupted by Ctrl-C");
}

/// SIGTERM stops a campaign as Ctrl-C does, and the message names it (it said Ctrl-C).
#[test]
fn sigterm_stops_a_sweep_and_says_so() {
    interrupt_stops_a_sweep(libc::SIGTERM, "interrupted by SIGTERM");
}

fn interrupt_stops_a_sweep(sig: libc::c_int, said: &str) {
    let root = repo_root();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("int.db");
    let recipe = root.join("recipes/llnl2000.toml");
    let child = Command::new(bin())
        .args(["sweep", recipe.to_str().unwrap(), "--parallel", "2", "--db"])
        .arg(&db)
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let start = Instant::now();
    let mut child = child;
    let runs = |db: &Path| -> Vec<(u64, String)> {
        raidlab_lab::db::Db::open_existing(db)
            .and_then(|d| d.runs())
            .map(|r| r.into_iter().map(|r| (r.point, r.source)).collect())
            .unwrap_or_default()
    };
    loop {
        std::thread::sleep(Duration::from_millis(20));
        if runs(&db).iter().any(|(_, s)| s != "reference") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the sweep never stored a run"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it could be interrupted"
        );
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, sig) };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    let status = child.wait().unwrap();
    // 128 + the signal, as `raidlab run` cut short (and a second Ctrl-C) exits.
    assert_eq!(status.code(), Some(128 + sig), "{err}");
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(
        last.contains(said) && last.contains("again to resume"),
        "{err}"
    );
    // The runs stored are the campaign's first ones, each once: it stopped at its turn.
    let mut points: Vec<u64> = runs(&db)
        .into_iter()
        .filter(|(_, s)| s != "reference")
        .map(|(p, _)| p)
        .collect();
    points.sort();
    assert!(
        !points.is_empty() && points.len() < 330,
        "{} runs",
        points.len()
    );
    assert_eq!(points, (0..points.len() as u64).collect::<Vec<_>>());
}

/// Copy `systems/xdd2008` (the system files and what they include) into `to`.
fn copy_xdd2008(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(repo_root().join("systems/xdd2008")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Two different system files both named raid5.toml are two points: both run, each row
/// carries its own file's result under a label telling them apart, and a second sweep finds
/// both stored. Before, the second point was "already in the database" and both rows
/// carried the first file's result.
#[test]
fn two_system_files_with_the_same_name_are_two_points() {
    let dir = tempfile::tempdir().unwrap();
    copy_xdd2008(&dir.path().join("systems/xdd2008"));
    copy_xdd2008(&dir.path().join("alt"));
    let alt = dir.path().join("alt/raid5.toml");
    let system = std::fs::read_to_string(&alt).unwrap();
    assert!(system.contains("\ndisks = 8"), "{system}");
    std::fs::write(&alt, system.replace("\ndisks = 8", "\ndisks = 3")).unwrap();
    let body = format!(
        "[workload]\nrw = \"randread\"\nbs = \"64k\"\niodepth = 16\ndirect = 1\nsize = \"1g\"\nio_size = \"256m\"\n\
         [sweep]\nsystem = [\"{}\", \"{}\"]\n",
        dir.path().join("systems/xdd2008/raid5.toml").display(),
        alt.display()
    );
    let exp = write_experiment(dir.path(), "same", &body);
    let out = sweep(&[exp.to_str().unwrap(), "--format", "csv"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("already in the database"),
        "{}",
        text(&out.stderr)
    );
    let csv = text(&out.stdout);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    let (sys, mb) = (col("system"), col("mb_s"));
    assert_eq!((rows[0][sys], rows[1][sys]), ("xdd2008/raid5", "alt/raid5"));
    assert_ne!(rows[0][mb], rows[1][mb], "each file's own result: {csv}");
    let runs = raidlab_lab::db::Db::open_existing(&dir.path().join("same.db"))
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0].metrics.get("mb_s"), runs[1].metrics.get("mb_s"));
    // The resume check tells them apart too: both found, the same rows printed.
    let again = sweep(&[exp.to_str().unwrap(), "--format", "csv"], dir.path());
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(text(&again.stdout), csv);
    assert_eq!(
        text(&again.stderr)
            .matches("already in the database")
            .count(),
        2,
        "{}",
        text(&again.stderr)
    );
}

fn usage_line(out: &Output) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.starts_with("raidlab: ") && !err.contains("panicked"),
        "{err}"
    );
    err
}

/// Bad options and values are one line, exit 2, before anything runs: a pow2 axis whose
/// ends are not powers of two, a --db in a missing folder (named as given, not the side
/// file the schema is built in), a --report that is a file, a system file that does not
/// exist (also in a dry run), a foreign database (pointing at --db).
#[test]
fn bad_options_are_caught_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let exp = write_experiment(d, "small", SMALL);
    let e = exp.to_str().unwrap();

    let pow = write_experiment(
        d,
        "pow",
        "[target]\nfilename = \"{scratch}/f\"\n[workload]\nsize = \"1m\"\n[sweep]\nbs = { pow2 = [\"3k\", \"5k\"] }\n",
    );
    let err = usage_line(&sweep(&[pow.to_str().unwrap(), "--dry-run"], d));
    assert!(
        err.contains("[sweep] bs") && err.contains("3k (3072) is not a power of two"),
        "{err}"
    );

    let nodir = d.join("nodir/x.db");
    let err = usage_line(&sweep(&[e, "--db", nodir.to_str().unwrap()], d));
    assert!(
        err.contains(nodir.to_str().unwrap())
            && err.contains("does not exist")
            && !err.contains("creating"),
        "{err}"
    );

    let file = d.join("afile");
    std::fs::write(&file, "keep").unwrap();
    let err = usage_line(&sweep(&[e, "--report", file.to_str().unwrap()], d));
    assert!(err.contains("--report") && err.contains("afile"), "{err}");
    let err = usage_line(&sweep(
        &[e, "--report", file.join("sub").to_str().unwrap()],
        d,
    ));
    assert!(err.contains("is a file, not a folder"), "{err}");
    assert!(!d.join("small.db").exists(), "nothing ran");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");

    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec![e, "--set", "system=/nonexistent"];
        args.extend_from_slice(extra);
        let err = usage_line(&sweep(&args, d));
        assert!(
            err.contains("[target] system") && err.contains("/nonexistent does not exist"),
            "{err}"
        );
    }
    let two = write_experiment(
        d,
        "two",
        "[workload]\nsize = \"1m\"\n[sweep]\nsystem = [\"gone/raid5.toml\"]\nrw = [\"read\", \"write\"]\n",
    );
    let err = usage_line(&sweep(&[two.to_str().unwrap(), "--dry-run"], d));
    assert!(
        err.contains("[sweep] system, point 0 (system=raid5 rw=read)")
            && err.contains("gone/raid5.toml does not exist"),
        "{err}"
    );
    assert!(!d.join("small.db").exists() && !d.join("two.db").exists());

    let foreign = d.join("notes.db");
    std::fs::write(&foreign, "text").unwrap();
    let err = usage_line(&sweep(&[e, "--db", foreign.to_str().unwrap()], d));
    assert!(err.contains("--db"), "{err}");
}

/// An exclude list that matches every combination of the axes leaves nothing to run: that
/// is the experiment's mistake, said in one line (as an empty axis is), not a campaign of
/// zero points that exits 0 with an empty table and database.
#[test]
fn an_exclude_that_leaves_no_points_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let exp = write_experiment(
        d,
        "none",
        "[workload]\nsize = \"1m\"\n[target]\nfilename = \"{scratch}/f\"\n[sweep]\nrw = [\"read\", \"write\"]\nbs = [\"4k\"]\nexclude = [{ bs = \"4k\" }]\n",
    );
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec![exp.to_str().unwrap()];
        args.extend_from_slice(extra);
        let err = usage_line(&sweep(&args, d));
        assert!(
            err.contains("none.toml") && err.contains("exclude leaves no points"),
            "{err}"
        );
    }
    assert!(!d.join("none.db").exists(), "nothing ran");
}

/// A missing required argument is named, for any command (clap's list used to be lost).
#[test]
fn missing_arguments_are_named_in_one_line() {
    for (args, want) in [
        (
            &["report", "good.db"][..],
            "report: missing required arguments: --out <DIR>",
        ),
        (&["explain"], "explain: missing required arguments: <"),
        (
            &["array", "status"],
            "array status: missing required arguments: <",
        ),
        (&["array"], "array: missing a command (valid: create"),
        (&[], "missing a command (valid: run"),
    ] {
        let out = Command::new(bin()).args(args).output().unwrap();
        let err = usage_line(&out);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("provided: ("), "{args:?}: {err}");
    }
    let out = Command::new(bin())
        .args(["sweep", "--format", "xml"])
        .output()
        .unwrap();
    let err = usage_line(&out);
    assert!(
        err.contains("xml") && err.contains("text, csv, json"),
        "{err}"
    );
}

/// Runs the sweep with standard output going to `stdout`; (status, stderr).
fn sweep_to(args: &[&str], cwd: &Path, stdout: Stdio) -> (std::process::ExitStatus, String) {
    let out = Command::new(bin())
        .arg("sweep")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("run raidlab");
    (out.status, text(&out.stderr))
}

fn stored_runs(db: &Path) -> usize {
    raidlab_lab::db::Db::open_existing(db)
        .and_then(|d| d.runs())
        .map(|r| r.len())
        .unwrap_or(0)
}

#[test]
fn a_full_or_closed_stdout_is_reported_or_ignored_after_the_database_and_report() {
    for format in ["csv", "text"] {
        let dir = tempfile::tempdir().unwrap();
        let exp = write_experiment(dir.path(), "small", SMALL);
        let rep = dir.path().join("rep");
        let args = [
            exp.to_str().unwrap(),
            "--format",
            format,
            "--report",
            rep.to_str().unwrap(),
        ];
        let full = std::fs::File::create("/dev/full").unwrap();
        let (status, err) = sweep_to(&args, dir.path(), Stdio::from(full));
        assert_eq!(status.code(), Some(1), "{err}");
        let last = err.trim().lines().last().unwrap_or_default();
        assert!(
            last.starts_with("raidlab: cannot write results to standard output:"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(stored_runs(&dir.path().join("small.db")), 8);
        assert!(rep.join("index.html").is_file(), "the report is written");

        // A reader that went away (| true): quiet, exit 0, everything written.
        let dir = tempfile::tempdir().unwrap();
        let exp = write_experiment(dir.path(), "small", SMALL);
        let rep = dir.path().join("rep");
        let mut child = Command::new(bin())
            .args([
                "sweep",
                exp.to_str().unwrap(),
                "--format",
                format,
                "--report",
            ])
            .arg(&rep)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{err}");
        assert!(
            !err.contains("panicked") && !err.contains("cannot write"),
            "{err}"
        );
        assert_eq!(stored_runs(&dir.path().join("small.db")), 8);
        assert!(rep.join("index.html").is_file());
    }
}

#[test]
fn a_run_cut_short_by_ctrl_c_is_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let body = "[workload]\nsize = \"1m\"\nioengine = \"psync\"\nrw = \"read\"\nruntime = \"5s\"\ntime_based = true\n[target]\nfilename = \"{scratch}/data\"\n[repeat]\ncount = 1\n";
    let exp = write_experiment(dir.path(), "cut", body);
    let db = dir.path().join("cut.db");
    let child = Command::new(bin())
        .args(["sweep", exp.to_str().unwrap(), "--db"])
        .arg(&db)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("stopped early (interrupted)") && err.contains("not stored"),
        "{err}"
    );
    assert_eq!(stored_runs(&db), 0, "a cut-short run is not a repetition");
}

/// A dry run has nothing in flight and nothing to store: the first SIGTERM ends it there
/// (as a second one ends a campaign), exit 128 + 15, its scratch folder removed, instead of
/// "stopping after the I/O in flight" and printing every remaining point.
#[test]
fn sigterm_ends_a_dry_run_at_once() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let system = repo_root().join("systems/modern/nvme.toml");
    // 5000 points: far more listing than a pipe holds, so the child is still writing (and,
    // as the test reads no further, blocked) when the signal comes.
    let body = format!(
        "[target]\nsystem = \"{}\"\n[sweep]\nrwmixread = {{ from = 0, to = 99, step = 1 }}\niodepth = {{ from = 1, to = 50, step = 1 }}\n",
        system.display()
    );
    let exp = write_experiment(dir.path(), "many", &body);
    let mut child = Command::new(bin())
        .args(["sweep", exp.to_str().unwrap(), "--dry-run"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("5000 points"), "{first}");
    // Planned and listing: the handler is in place.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let rest = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the dry run went on after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let listed = text(&rest.join().unwrap())
        .lines()
        .filter(|l| l.starts_with("point "))
        .count();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{err}");
    assert!(
        listed < 5000,
        "it stopped listing: {listed} points after the signal"
    );
    assert!(!err.contains("in flight"), "{err}");
    let scratch = format!("raidlab-sweep-{pid}-");
    assert!(
        !std::fs::read_dir(std::env::temp_dir()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(&scratch)),
        "the scratch folder is removed"
    );
}

/// Each axis is capped; so is their product: a sweep of millions of points is refused when
/// read, in one line naming each axis's count, before anything is planned or run (the
/// dry run too).
#[test]
fn a_sweep_of_more_points_than_the_bound_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let system = repo_root().join("systems/modern/nvme.toml");
    let body = format!(
        "[target]\nsystem = \"{}\"\n[sweep]\nrwmixread = {{ from = 0, to = 100, step = 1 }}\niodepth = {{ from = 1, to = 1000, step = 1 }}\nnumjobs = {{ from = 1, to = 40, step = 1 }}\n",
        system.display()
    );
    let exp = write_experiment(dir.path(), "big", &body);
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec![exp.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = sweep(&args, dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("big.toml: [sweep] the axes make rwmixread 101 × iodepth 1000 × numjobs 40 = 4040000 points, more than 100000"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    assert!(!dir.path().join("big.db").exists());
    // Fixing an axis brings it under the bound.
    let out = sweep(
        &[
            exp.to_str().unwrap(),
            "--dry-run",
            "--set",
            "numjobs=1",
            "--set",
            "rwmixread=50",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// An array target over member files the lab makes is built by a setup hook; without one
/// the sweep is refused up front saying so (not with a missing superblock at the first
/// run), and array parameters `raidlab array create` refuses are refused when the recipe is
/// read, the dry run included, in create's words.
#[test]
fn array_targets_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let arr = "[workload]\nrw=\"randread\"\nbs=\"4k\"\nsize=\"1m\"\nruntime=\"1s\"\n\
               [target]\nlevel=5\nmembers=3\nmember_size=\"4m\"\nchunk=\"64k\"\n[sweep]\nbs=[\"4k\"]\n";
    let exp = write_experiment(dir.path(), "arr", arr);
    let db = dir.path().join("arr.db");
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec![exp.to_str().unwrap(), "--db", db.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = sweep(&args, dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("arr.toml: [target] an array over members = COUNT")
                && err.contains("[hooks] has no setup command")
                && !err.contains("superblock"),
            "{err}"
        );
    }
    assert!(!db.exists(), "nothing ran");
    let hooked = format!("{arr}[hooks]\nsetup = [\"{{raidlab}} array create --level {{level}} --chunk {{chunk}} --force {{member_paths}}\"]\n");
    let exp = write_experiment(dir.path(), "arr", &hooked);
    let out = sweep(&[exp.to_str().unwrap(), "--dry-run"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (set, want) in [
        ("level=9", "unknown RAID level '9'"),
        ("members=1", "raid5 needs at least 2 members, got 1"),
        (
            "member_size=1k",
            "each member is 1024 bytes; members need more than 1 MiB",
        ),
        ("chunk=3k", "chunk 3072 bytes is not valid"),
        ("members=a,a,b", "member a is listed twice"),
    ] {
        let out = sweep(
            &[exp.to_str().unwrap(), "--dry-run", "--set", set],
            dir.path(),
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("arr.toml: [target] array level=") && err.contains(want),
            "{set}: {err}"
        );
        assert!(out.stdout.is_empty(), "{set}: no point listed");
    }
}

#[test]
fn a_sweep_that_measures_nothing_fails_its_point_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let body = "[workload]\nsize = \"1m\"\nioengine = \"psync\"\nrw = \"read\"\nramp_time = \"30s\"\n[target]\nfilename = \"{scratch}/data\"\n[repeat]\ncount = 2\n";
    let exp = write_experiment(dir.path(), "ramp", body);
    let out = sweep(&[exp.to_str().unwrap()], dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(
        last.contains("point 0 rep 0") && last.contains("no job counted any I/O"),
        "{err}"
    );
    assert_eq!(stored_runs(&dir.path().join("ramp.db")), 0);
}

#[test]
fn a_decimal_repeat_count_is_called_not_a_whole_number() {
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(dir.path(), "small", SMALL);
    let out = sweep(
        &[
            exp.to_str().unwrap(),
            "--set",
            "repeat.count=1e3",
            "--dry-run",
        ],
        dir.path(),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a whole number") && err.lines().count() == 1,
        "{err}"
    );
}

/// `--report` leaves a folder's own files alone: a page raidlab did not write stops the
/// sweep before its campaign (nothing runs, no database is made, the dry run says so too),
/// `--force` writes over it, and raidlab's own report is replaced freely.
#[test]
fn the_report_folder_keeps_files_raidlab_did_not_write() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let recipe = root.join("recipes/xdd2008.toml").display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("index.html"), b"my page").unwrap();
    let db = dir.path().join("x.db").display().to_string();
    let report = out.display().to_string();
    let o = sweep(&[&recipe, "--db", &db, "--report", &report], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not a file raidlab's report wrote") && err.lines().count() == 1,
        "refused in one line, before any run: {err}"
    );
    assert!(!Path::new(&db).exists(), "nothing ran: no database");
    assert_eq!(std::fs::read(out.join("index.html")).unwrap(), b"my page");
    let o = sweep(
        &[&recipe, "--db", &db, "--report", &report, "--dry-run"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "a dry run is refused alike");
    assert!(o.stdout.is_empty());
    // A manifest raidlab did not write is refused up front as well.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join(".raidlab-report"), b"my notes").unwrap();
    let o = sweep(
        &[&recipe, "--db", &db, "--report", other.to_str().unwrap()],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(".raidlab-report") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!Path::new(&db).exists(), "nothing ran: no database");
    let o = sweep(
        &[&recipe, "--db", &db, "--report", &report, "--force"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = sweep(&[&recipe, "--db", &db, "--report", &report], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(out.join("index.html"))
        .unwrap()
        .contains("raidlab"));
}

/// Progress lines and notes go to standard error; a stderr nobody reads (a pipe whose reader
/// went away, `2>&1 | head -c 10`, or closed outright, `2>&-`) is no reason to stop: the sweep
/// runs to the end, and an error still exits 1, not with a panic (101).
#[test]
fn a_closed_stderr_is_ignored() {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    // A pipe whose read end is closed before the child starts: every write fails (EPIPE).
    let gone_reader = || {
        let mut fds = [0; 2];
        // SAFETY: pipe fills both descriptors, which we then own.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(read);
        Stdio::from(write)
    };
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(dir.path(), "small", SMALL);
    let status = Command::new(bin())
        .args(["sweep", exp.to_str().unwrap()])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(gone_reader())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "progress lines to a gone reader");
    assert_eq!(stored_runs(&dir.path().join("small.db")), 8);

    // An error: its one line cannot be read, but the exit code is the one it has when read.
    let error = |stderr: Stdio| {
        Command::new(bin())
            .args(["sweep", "no-such-experiment.toml"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .status()
            .unwrap()
            .code()
    };
    let read = error(Stdio::null());
    assert!(matches!(read, Some(1 | 2)), "{read:?}");
    assert_eq!(error(gone_reader()), read, "an error to a gone reader");

    // Standard error closed outright (`2>&-`).
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(dir.path(), "small", SMALL);
    let mut cmd = Command::new(bin());
    cmd.args(["sweep", exp.to_str().unwrap()])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    // SAFETY: close(2) is async-signal-safe; it runs in the child between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::close(2);
            Ok(())
        })
    };
    let status = cmd.status().unwrap();
    assert_eq!(status.code(), Some(0), "progress lines with stderr closed");
    assert_eq!(stored_runs(&dir.path().join("small.db")), 8);
}
