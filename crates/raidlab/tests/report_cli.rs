//! `raidlab report DB --out DIR` end to end: a database written through the lab's API, the
//! page with figures, description, environment and the declared limits; one-line errors for a
//! missing or foreign database and an unwritable folder.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use raidlab_lab::db::{CampaignInfo, Db, DeviceInfo, Environment, RunRecord};

fn raidlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_raidlab"))
}

const EXPERIMENT: &str = r#"
name = "chain"
description = "One RAID-5 chain read with block sizes from 512 B to 2 MiB."

[workload]
rw = "read"

[target]
filename = "/dev/sdz"

[sweep]
bs = { pow2 = ["512", "2m"] }

[limits]
"FC interface" = 100
disks = { mb_s = 250, kind = "disk", note = "5 x 50 MB/s" }
"#;

/// A campaign like seed 000's single chain: 13 block sizes × 3 repetitions, and convergence.
fn make_db(path: &Path) {
    make_db_with(path, EXPERIMENT, 13);
}

/// [`make_db`] with another experiment text, storing only the first `points` block sizes (an
/// interrupted sweep when fewer than the experiment's 13).
fn make_db_with(path: &Path, experiment_text: &str, points: usize) {
    let db = Db::open_or_create(path).unwrap();
    let info = CampaignInfo {
        experiment: "chain".into(),
        experiment_hash: "0123456789abcdef".into(),
        experiment_text: experiment_text.into(),
        experiment_path: "recipes/chain.toml".into(),
        started_at: 1,
    };
    let cid = db.begin_campaign(&info).unwrap();
    let env = Environment {
        kernel: "6.1.0-test".into(),
        cpu_model: "Test CPU".into(),
        raidlab_version: "0.1.0".into(),
        hostname: "lab1".into(),
        devices: vec![DeviceInfo {
            target: "/dev/sdz".into(),
            block_device: "sdz".into(),
            model: Some("TESTDISK".into()),
            ..Default::default()
        }],
    };
    let eid = db.record_environment(cid, &env).unwrap();
    let mut db = db;
    for (point, e) in (9..=21u32).enumerate().take(points) {
        let bs = 1u64 << e;
        let rate = (bs as f64 / 512.0 * 1.5).min(50.0);
        for rep in 0..3u32 {
            let mut params = BTreeMap::new();
            params.insert("bs".to_string(), bs.to_string());
            let mut metrics = BTreeMap::new();
            metrics.insert("mb_s".to_string(), rate * (1.0 + rep as f64 * 0.01));
            metrics.insert("iops".to_string(), rate * 1e6 / bs as f64);
            db.insert_run(&RunRecord {
                campaign_id: cid,
                environment_id: Some(eid),
                experiment: "chain".into(),
                experiment_hash: info.experiment_hash.clone(),
                point: point as u64,
                rep,
                attempt: 0,
                source: "measured".into(),
                target: "/dev/sdz".into(),
                params,
                metrics,
                workload: "{}".into(),
                result_json: None,
                started_at: 1,
                ended_at: 2,
            })
            .unwrap();
        }
    }
    for step in 0..4u32 {
        db.insert_convergence(
            cid,
            "chain",
            &info.experiment_hash,
            12,
            "bs=2097152",
            step,
            8 << (20 + 2 * step),
            1,
            45.0 + 8.0 / (step + 1) as f64,
        )
        .unwrap();
    }
}

#[test]
fn report_from_a_database_writes_a_page_with_figures_environment_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.db");
    make_db(&db);
    let out = dir.path().join("report");
    let o = raidlab()
        .arg("report")
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("index.html"));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        out.join("fig-01-rate-vs-bs.svg").is_file() && out.join("fig-01-rate-vs-bs.png").is_file()
    );
    assert!(out.join("fig-02-convergence.svg").is_file());
    assert!(
        html.contains("One RAID-5 chain read with block sizes"),
        "description from the experiment"
    );
    assert!(
        html.contains("<dd>6.1.0-test</dd>") && html.contains("model=TESTDISK"),
        "environment"
    );
    assert!(html.contains("data from <code>raidlab sweep recipes/chain.toml</code>"));
    // [limits] of the experiment: the 100 MB/s interface bounds a best of ~50.5 MB/s.
    assert!(html.contains("FC interface — bounds the path"));
    assert!(
        html.contains("<td>51%</td>") || html.contains("<td>50%</td>"),
        "achieved/bound ratio"
    );
    assert!(!html.contains("://"));
}

fn one_line_error(o: &std::process::Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(code), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("raidlab: "), "{stderr}");
    assert!(!stderr.contains("panicked"));
    stderr
}

#[test]
fn missing_foreign_database_and_unwritable_folder_are_one_line_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = raidlab()
        .arg("report")
        .arg(dir.path().join("nope.db"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(one_line_error(&o, 2).contains("does not exist"));

    let foreign = dir.path().join("notes.db");
    std::fs::write(&foreign, "not a database at all, and it must stay this way").unwrap();
    let o = raidlab()
        .arg("report")
        .arg(&foreign)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = one_line_error(&o, 2);
    assert!(err.contains("not an SQLite database"), "{err}");
    // report takes the database as its argument: no --db to point at.
    assert!(!err.contains("--db"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "not a database at all, and it must stay this way"
    );
    assert!(!out.exists(), "nothing written for a foreign database");

    let db = dir.path().join("lab.db");
    make_db(&db);
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let o = raidlab()
        .arg("report")
        .arg(&db)
        .arg("--out")
        .arg(file.join("sub"))
        .output()
        .unwrap();
    assert!(one_line_error(&o, 2).contains("cannot create report directory"));

    let o = raidlab().arg("report").arg(&db).output().unwrap();
    let err = one_line_error(&o, 2);
    assert!(err.contains("--out"), "names the missing argument: {err}");
    for content in [&b""[..], b"some notes\n", &[0x9c, 0x01, 0xff, 0x00, 0x42]] {
        let f = dir.path().join("other.db");
        std::fs::write(&f, content).unwrap();
        let o = raidlab()
            .arg("report")
            .arg(&f)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = one_line_error(&o, 2);
        assert!(!err.contains("--db") && err.contains("other.db"), "{err}");
        assert_eq!(std::fs::read(&f).unwrap(), content);
    }

    let limits = dir.path().join("limits.toml");
    std::fs::write(&limits, "[limits]\nlink = \"fast\"\n").unwrap();
    let o = raidlab()
        .arg("report")
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .arg("--limits")
        .arg(&limits)
        .output()
        .unwrap();
    assert!(one_line_error(&o, 2).contains("[limits] link"));

    // A file that is not TOML at all: refused saying where, file:line:column.
    let notes = dir.path().join("notdb.txt");
    std::fs::write(&notes, "These are my notes about the run.\n").unwrap();
    let o = raidlab()
        .arg("report")
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .arg("--limits")
        .arg(&notes)
        .output()
        .unwrap();
    let err = one_line_error(&o, 2);
    assert!(
        err.starts_with(&format!(
            "raidlab: report: {}:1:7: not valid TOML: ",
            notes.display()
        )),
        "{err}"
    );
}

#[test]
fn limits_file_for_a_real_system_adds_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.db");
    make_db(&db);
    let limits = dir.path().join("fc.toml");
    std::fs::write(
        &limits,
        "[limits]\ntarget = \"/dev/sdz\"\n\"switch port\" = 200\n",
    )
    .unwrap();
    let out = dir.path().join("r");
    let o = raidlab()
        .arg("report")
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .arg("--limits")
        .arg(&limits)
        .arg("--title")
        .arg("Chain study")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<title>Chain study</title>"));
    assert!(html.contains("switch port — bounds the path"));
}

/// A simulated LUN's limits table lists the components on its own path, from host to
/// drives: seed 002's lun0 goes through fc0 and ctrlA, lun2 through fc1 and ctrlB. One
/// table for the whole system listed both paths for each (and named a component of the
/// other LUN's path the bottleneck when it had the lowest bound).
#[test]
fn a_simulated_luns_limits_table_lists_its_own_path_only() {
    let dir = tempfile::tempdir().unwrap();
    let system = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../systems/bokhari2006/2c-4x8p1.toml")
        .canonicalize()
        .unwrap();
    let db_path = dir.path().join("sim.db");
    let mut db = Db::open_or_create(&db_path).unwrap();
    let info = CampaignInfo {
        experiment: "luns".into(),
        experiment_hash: "fedcba9876543210".into(),
        experiment_text: "name = \"luns\"\n".into(),
        experiment_path: "luns.toml".into(),
        started_at: 1,
    };
    let cid = db.begin_campaign(&info).unwrap();
    for (point, lun) in ["lun0", "lun2"].into_iter().enumerate() {
        let target = format!("sim:{}#{lun}", system.display());
        db.insert_run(&RunRecord {
            campaign_id: cid,
            environment_id: None,
            experiment: "luns".into(),
            experiment_hash: info.experiment_hash.clone(),
            point: point as u64,
            rep: 0,
            attempt: 0,
            source: "simulated".into(),
            target: target.clone(),
            params: BTreeMap::from([("system".to_string(), target)]),
            metrics: BTreeMap::from([("mb_s".to_string(), 170.0)]),
            workload: "{}".into(),
            result_json: None,
            started_at: 1,
            ended_at: 2,
        })
        .unwrap();
    }
    drop(db);
    let out = dir.path().join("r");
    let o = report(&db_path, &out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let limits = &html[html.find("id=\"limits\"").expect("a limits section")..];
    let table = |lun: &str| -> &str {
        let at = limits
            .find(&format!("2c-4x8p1.toml#{lun}</code>"))
            .unwrap_or_else(|| panic!("no table for {lun}: {limits}"));
        let rest = &limits[at..];
        &rest[..rest.find("</table>").unwrap()]
    };
    let (lun0, lun2) = (table("lun0"), table("lun2"));
    for own in ["host/fc0", "ctrl/ctrlA/port", "array/raid0", "lun/lun0"] {
        assert!(lun0.contains(own), "{own} in lun0's: {lun0}");
    }
    for other in [
        "fc1", "ctrlB", "raid1", "raid2", "lun/lun1", "lun/md0", ">all<",
    ] {
        assert!(!lun0.contains(other), "{other} in lun0's: {lun0}");
    }
    assert!(
        lun2.contains("host/fc1") && lun2.contains("array/raid2"),
        "{lun2}"
    );
    assert!(!lun2.contains("fc0") && !lun2.contains("ctrlA"), "{lun2}");
}

/// A simulated system's limits table holds reads to the read bounds and writes to the write
/// bounds: seed 000's chain reads up to its controller's data path and writes, once the cache
/// is full, up to its XOR engine, which bounds no read.
#[test]
fn a_simulated_limits_table_gives_read_and_write_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let system = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../systems/llnl2000/fig14.toml")
        .canonicalize()
        .unwrap();
    let db_path = dir.path().join("sim.db");
    let mut db = Db::open_or_create(&db_path).unwrap();
    let info = CampaignInfo {
        experiment: "rw".into(),
        experiment_hash: "0123456789abcdef".into(),
        experiment_text: "name = \"rw\"\n".into(),
        experiment_path: "rw.toml".into(),
        started_at: 1,
    };
    let cid = db.begin_campaign(&info).unwrap();
    let target = format!("sim:{}", system.display());
    for (point, (rw, read, write)) in [("read", 49.0, 0.0), ("write", 0.0, 26.0)]
        .into_iter()
        .enumerate()
    {
        db.insert_run(&RunRecord {
            campaign_id: cid,
            environment_id: None,
            experiment: "rw".into(),
            experiment_hash: info.experiment_hash.clone(),
            point: point as u64,
            rep: 0,
            attempt: 0,
            source: "simulated".into(),
            target: target.clone(),
            params: BTreeMap::from([("rw".to_string(), rw.to_string())]),
            metrics: BTreeMap::from([
                ("mb_s".to_string(), read + write),
                ("read_mb_s".to_string(), read),
                ("write_mb_s".to_string(), write),
            ]),
            workload: "{}".into(),
            result_json: None,
            started_at: 1,
            ended_at: 2,
        })
        .unwrap();
    }
    drop(db);
    let out = dir.path().join("r");
    let o = report(&db_path, &out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let limits = &html[html.find("id=\"limits\"").expect("a limits section")..];
    for want in [
        "<th>write bound MB/s</th>",
        "Best simulated read: <b>49 MB/s</b>",
        "Best simulated write: <b>26 MB/s</b>",
        "ctrl/unit0A/data — bounds reads",
        "ctrl/unit0A/parity — bounds writes",
        "The best write run reached only 70% of the lowest known bound (ctrl/unit0A/parity)",
    ] {
        assert!(limits.contains(want), "{want}: {limits}");
    }
}

fn report(db: &Path, out: &Path) -> Command {
    let mut c = raidlab();
    c.arg("report").arg(db).arg("--out").arg(out);
    c
}

#[test]
fn a_folder_holding_the_users_own_page_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.db");
    make_db(&db);
    let out = dir.path().join("site");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("index.html"), "my own page").unwrap();
    std::fs::write(out.join("index.tmp"), "unrelated").unwrap();
    let o = report(&db, &out).output().unwrap();
    let e = one_line_error(&o, 2);
    assert!(e.contains("index.html") && e.contains("--force"), "{e}");
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        "my own page"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("index.tmp")).unwrap(),
        "unrelated"
    );
    assert!(
        !out.join("fig-01-rate-vs-bs.svg").exists(),
        "nothing written"
    );

    // raidlab's own earlier report is written over without --force.
    let mine = dir.path().join("report");
    for _ in 0..2 {
        let o = report(&db, &mine).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    // --force writes over the user's page; the unrelated file stays.
    let o = report(&db, &out).arg("--force").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(out.join("index.html"))
        .unwrap()
        .contains("<meta name=\"generator\" content=\"raidlab"));
    assert_eq!(
        std::fs::read_to_string(out.join("index.tmp")).unwrap(),
        "unrelated"
    );
}

#[test]
fn points_are_flagged_by_the_experiments_own_spread_threshold() {
    // make_db's repetitions spread 2% (1.00, 1.01, 1.02 × rate).
    let flags = |repeat: &str| {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("lab.db");
        make_db_with(&db, &format!("{EXPERIMENT}\n{repeat}"), 13);
        let out = dir.path().join("r");
        let o = report(&db, &out).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let html = std::fs::read_to_string(out.join("index.html")).unwrap();
        html.matches("<tr class=\"flag\">").count()
    };
    assert_eq!(flags("[repeat]\ncount = 3\nspread_threshold = 0.01"), 13);
    assert_eq!(flags("[repeat]\ncount = 3\nspread_threshold = 0.05"), 0);
    // No threshold (the lab's default): the sweep flagged nothing, nor does the page.
    assert_eq!(flags("[repeat]\ncount = 3"), 0);
}

#[test]
fn an_interrupted_sweep_is_reported_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.db");
    make_db_with(&db, EXPERIMENT, 5);
    let out = dir.path().join("r");
    let o = report(&db, &out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("incomplete: 5 of 13 points stored"), "{html}");

    let full = dir.path().join("full.db");
    make_db(&full);
    let out = dir.path().join("f");
    assert!(report(&full, &out).output().unwrap().status.success());
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!html.contains("incomplete"));
}

#[test]
fn a_full_standard_output_is_one_line_and_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lab.db");
    make_db(&db);
    let out = dir.path().join("r");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = report(&db, &out).stdout(full).output().unwrap();
    let e = one_line_error(&o, 1);
    assert!(e.contains("standard output"), "{e}");
    assert!(
        out.join("index.html").is_file(),
        "the report is written all the same"
    );
}
