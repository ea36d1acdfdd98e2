//! `raidlab bench sim`: the cases it runs, and one-line refusals of what it cannot run.

mod common;
use common::*;
use std::process::Output;

/// `raidlab bench ARGS...`, stdin closed.
fn bench(args: &[&str]) -> Output {
    raidlab_sub("bench", args)
}

/// `--case levels`: seed 001's four arrays × random reads and writes, one row each, in order,
/// each having simulated member I/Os through its events.
#[test]
fn bench_sim_levels_runs_every_array_both_ways() {
    let o = bench(&[
        "sim",
        "--case",
        "levels",
        "--systems",
        &systems_dir().display().to_string(),
        "--output-format",
        "json",
    ]);
    let v = json(&assert_ok(&o, "bench sim --case levels"));
    let rows = v.as_array().expect("a list of cases");
    let mut want = Vec::new();
    for level in ["raid0", "raid10", "raid5", "raid6"] {
        for rw in ["randread", "randwrite"] {
            want.push(format!("xdd2008 {level} 8k {rw} "));
        }
    }
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    for (row, w) in rows.iter().zip(&want) {
        let name = row["name"].as_str().unwrap();
        assert!(name.starts_with(w.as_str()), "{name} is not {w}…");
        let ios = row["member_ios"].as_u64().unwrap();
        let events = row["events"].as_u64().unwrap();
        assert!(
            ios > 10_000 && events > ios,
            "{name}: {ios} member I/Os, {events} events"
        );
        assert!(row["seconds"].as_f64().unwrap() > 0.0, "{name}");
    }
}

#[test]
fn bench_sim_refuses_an_unknown_case_or_a_folder_without_its_systems() {
    let err = assert_usage_error(&bench(&["sim", "--case", "random,bogus"]), "case");
    assert!(
        err.contains("--case bogus") && err.contains("valid: random, llnl, levels"),
        "{err}"
    );
    let empty = scratch("raidlab-bench-");
    let dir = empty.path().display().to_string();
    let err = assert_usage_error(
        &bench(&["sim", "--case", "levels", "--systems", &dir]),
        "systems",
    );
    assert!(
        err.contains("no xdd2008/ folder") && err.contains("case levels"),
        "{err}"
    );
}
