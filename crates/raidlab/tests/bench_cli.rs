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
        err.contains("--case bogus") && err.contains("valid: random, llnl, levels, paths"),
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

/// `--case paths`: the pool's, md's and the page cache's paths (random, and seed 003's
/// sequential dd), one row each, named by their system, block size and whether they go
/// through the page cache; a folder missing one of the case's systems is refused by name
/// before anything runs.
#[test]
fn bench_sim_paths_runs_the_pool_md_and_page_cache_cases() {
    let systems = systems_dir().display().to_string();
    let o = bench(&[
        "sim",
        "--case",
        "paths",
        "--systems",
        &systems,
        "--output-format",
        "json",
    ]);
    let v = json(&assert_ok(&o, "bench sim --case paths"));
    let rows = v.as_array().expect("a list of cases");
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for (name, want) in names.iter().zip([
        "bokhari2006 pool16 8k randread qd32",
        "linuxraid2010 raid6-6d-c64 8k randwrite qd32",
        "linuxraid2010 raid6-6d-c64 8k randwrite qd32",
        "iometer2008 raid5-8d 8k randrw qd32",
        "linuxraid2010 raid5-4d-c64 1m write qd1",
        "linuxraid2010 raid5-4d-c64 1m read qd1",
    ]) {
        assert!(name.starts_with(want), "{name} is not {want}…");
    }
    let buffered: Vec<bool> = names.iter().map(|n| n.ends_with(", buffered")).collect();
    assert_eq!(buffered, [false, false, true, false, true, true]);
    // Through the page cache a writer's commands complete once copied into memory, ahead of
    // the drives: more of them in the same virtual minute than direct ones.
    let host = |k: usize| rows[k]["host_ios"].as_u64().unwrap();
    assert!(
        host(2) > host(1),
        "buffered {} vs direct {}",
        host(2),
        host(1)
    );
    for r in rows {
        assert!(r["events"].as_u64().unwrap() > r["member_ios"].as_u64().unwrap());
    }

    // A systems folder with seed 002's systems but not seed 003's.
    let partial = scratch("raidlab-bench-paths-");
    std::fs::create_dir(partial.path().join("bokhari2006")).unwrap();
    let dir = partial.path().display().to_string();
    let err = assert_usage_error(
        &bench(&["sim", "--case", "paths", "--systems", &dir]),
        "paths",
    );
    assert!(
        err.contains("no linuxraid2010/ folder") && err.contains("case paths"),
        "{err}"
    );
}
