//! fio's latency-target mode (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`) in both executors: the job finds the deepest queue that meets the target,
//! runs a last window there, and reports it as fio does. The fio comparison needs the
//! Debian package `fio`; it fails when it is missing.

mod common;
use common::*;

/// 8 KiB random reads on seed 001's RAID 5 (eight 15K drives), simulated: the job's results
/// and its text.
fn sim_run(extra: &[&str]) -> (serde_json::Value, String) {
    let target = format!("--filename=sim:{}", system("xdd2008/raid5.toml"));
    let mut a = vec![
        "--name=l",
        &target,
        "--rw=randread",
        "--bs=8k",
        "--direct=1",
        "--time_based",
    ];
    a.extend_from_slice(extra);
    let mut j = a.clone();
    j.push("--output-format=json");
    let v = json(&assert_ok(&raidlab(&j), &format!("{extra:?}")));
    let text = assert_ok(&raidlab(&a), &format!("{extra:?}"));
    (v, text)
}

/// The 90th percentile of a result's read latency, ns.
fn p90(v: &serde_json::Value) -> f64 {
    v["jobs"][0]["read"]["clat_ns"]["percentile"]["90.000000"]
        .as_f64()
        .unwrap()
}

/// In virtual time the search is exact and repeatable: the depth it settles on meets the
/// target (its 90th percentile, run at that depth alone, is at the target within the
/// histogram's resolution), twice that depth misses it by far, and the job ends after its
/// final window, long before its runtime. The report is fio's line and JSON fields.
#[test]
fn a_simulated_array_finds_the_deepest_queue_that_meets_the_target() {
    let search = [
        "--iodepth=256",
        "--runtime=120s",
        "--latency_target=30ms",
        "--latency_window=2s",
        "--latency_percentile=90",
    ];
    let (v, text) = sim_run(&search);
    let j = &v["jobs"][0];
    let depth = j["latency_depth"].as_u64().unwrap();
    assert!((2..256).contains(&depth), "{j}");
    assert_eq!(j["latency_target"], 30_000_000);
    assert_eq!(j["latency_window"], 2_000_000);
    assert_eq!(j["latency_percentile"], 90.0);
    assert!(
        j["job_runtime"].as_u64().unwrap() < 120_000,
        "ended by the search"
    );
    assert!(
        text.contains(&format!(
            "     latency   : target=30000000, window=2000000, percentile=90.00%, depth={depth}\n"
        )),
        "{text}"
    );
    assert_eq!(sim_run(&search).0["jobs"][0]["latency_depth"], depth);
    let at = |d: u64| {
        let qd = format!("--iodepth={d}");
        p90(&sim_run(&[&qd, "--runtime=10s"]).0)
    };
    let (met, twice) = (at(depth), at(2 * depth));
    assert!(met <= 30e6 * 1.05, "depth {depth}: p90 {met}");
    assert!(twice > 30e6 * 1.2, "depth {}: p90 {twice}", 2 * depth);
    // Without a target, no search: the JSON has fio 3.33's fields for a plain job (its
    // iodepth, target 0, percentile 100, window 0), and the text fio's line of them.
    let (plain, text) = sim_run(&["--iodepth=4", "--runtime=1s"]);
    let p = &plain["jobs"][0];
    assert_eq!(p["latency_depth"], 4, "{p}");
    assert_eq!(p["latency_target"], 0, "{p}");
    assert_eq!(p["latency_percentile"], 100.0, "{p}");
    assert_eq!(p["latency_window"], 0, "{p}");
    assert!(
        text.contains("\n     latency   : target=0, window=0, percentile=100.00%, depth=4\n"),
        "{text}"
    );
}

/// A target that even one request at a time cannot meet ends the job with ETIMEDOUT (at the
/// default percentile of 100), in one line, in both executors; and latency_run keeps the
/// search going to the job's end.
#[test]
fn a_target_no_depth_meets_ends_the_job_and_latency_run_never_settles() {
    let target = format!("--filename=sim:{}", system("xdd2008/raid5.toml"));
    let o = raidlab(&[
        "--name=l",
        &target,
        "--rw=randread",
        "--bs=8k",
        "--direct=1",
        "--iodepth=8",
        "--size=64m",
        "--latency_target=100us",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_one_line(&err, "simulated");
    assert!(
        err.contains("exceeds latency_target (100 usec) at depth 1"),
        "{err}"
    );
    let d = scratch("raidlab-lat-");
    let f = format!("--filename={}/f", d.path().display());
    let o = raidlab(&[
        "--name=l",
        &f,
        "--rw=randread",
        "--bs=4k",
        "--size=1m",
        "--iodepth=4",
        "--latency_target=1ns",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("exceeds latency_target (1 nsec) at depth 1"),
        "{}",
        stderr(&o)
    );
    // latency_run: the job runs its whole runtime, however the depth moves.
    let (v, _) = sim_run(&[
        "--iodepth=64",
        "--runtime=20s",
        "--latency_target=30ms",
        "--latency_window=1s",
        "--latency_percentile=90",
        "--latency_run=1",
    ]);
    let ran = v["jobs"][0]["job_runtime"].as_u64().unwrap();
    assert!((20_000..20_500).contains(&ran), "{}", v["jobs"][0]);
    // Bad values, one line each.
    for (opt, want) in [
        ("--latency_percentile=0", "is not a percentage"),
        ("--latency_percentile=101", "is not a percentage"),
        ("--latency_target=soon", "is not a duration"),
    ] {
        let err = assert_usage_error(&raidlab(&["--name=l", &f, "--size=1m", opt]), opt);
        assert!(err.contains(want), "{opt}: {err}");
    }
}

/// On a real file, a target every request meets: the depth doubles to iodepth's ceiling
/// (1, 2, 4, then 6), the final window runs there and the job ends well before its runtime,
/// as fio's does on the same file with the same options.
#[test]
fn a_real_job_settles_where_fio_settles() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-lat-");
    let path = format!("{}/f", d.path().display());
    let opts = [
        "--name=l".to_string(),
        format!("--filename={path}"),
        "--rw=randread".into(),
        "--bs=4k".into(),
        "--size=8m".into(),
        "--ioengine=libaio".into(),
        "--iodepth=6".into(),
        "--time_based".into(),
        "--runtime=60s".into(),
        "--latency_target=1h".into(),
        "--latency_window=100ms".into(),
        "--output-format=json".into(),
    ];
    let a: Vec<&str> = opts.iter().map(String::as_str).collect();
    let ours = json(&assert_ok(&raidlab(&a), "raidlab"));
    let theirs = json(&fio_json(&opts));
    for v in [&ours, &theirs] {
        let j = &v["jobs"][0];
        assert_eq!(j["latency_depth"], 6, "{j}");
        assert_eq!(j["latency_target"], 3_600_000_000_000u64);
        assert_eq!(j["latency_window"], 100_000);
        assert!(j["job_runtime"].as_u64().unwrap() < 30_000, "{j}");
        assert!(j["read"]["total_ios"].as_u64().unwrap() > 0);
    }
}
