//! `raidlab run` with the options that shape which requests a job issues
//! (`random_distribution`, `percentage_random`, `rw=PATTERN:N`, `randrepeat`, `bsrange`,
//! percentages of the target, `new_group`), through the built binary: against a small file and a simulated
//! system.

mod common;

use common::*;
use std::path::Path;

fn sim_target() -> String {
    let system =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../systems/bokhari2006/1c-1x1.toml");
    assert!(system.is_file(), "system file {} missing", system.display());
    format!("--filename=sim:{}", system.display())
}

/// The first job's `dir` (read/write) figures of a JSON run.
fn dir_of(v: &serde_json::Value, dir: &str) -> (u64, u64, f64) {
    let d = &v["jobs"][0][dir];
    (
        d["io_bytes"].as_u64().unwrap(),
        d["total_ios"].as_u64().unwrap(),
        d["iops"].as_f64().unwrap(),
    )
}

#[test]
fn shaping_options_on_a_file() {
    let dir = scratch("raidlab-dist");
    let f = format!("--filename={}", dir.path().join("f").display());
    // A 2 MiB file raidlab lays out, then shares of it.
    let v = json(&assert_ok(
        &raidlab(&[
            &f,
            "--rw=write",
            "--bs=64k",
            "--size=2m",
            "--output-format=json",
        ]),
        "lay out",
    ));
    assert_eq!(dir_of(&v, "write").0, 2 << 20);
    for (opts, bytes) in [
        (&["--size=50%"][..], 1 << 20),
        (&["--size=25%", "--offset=50%"][..], 512 << 10),
        (&["--io_size=25%", "--rw=randread"][..], 512 << 10),
    ] {
        let mut args = vec![f.as_str(), "--rw=read", "--bs=4k", "--ioengine=psync"];
        args.extend_from_slice(opts);
        args.push("--output-format=json");
        let v = json(&assert_ok(&raidlab(&args), &format!("{opts:?}")));
        assert_eq!(dir_of(&v, "read").0, bytes, "{opts:?}");
        let (k, val) = opts[0][2..].split_once('=').unwrap();
        assert_eq!(v["jobs"][0]["job options"][k], val, "{opts:?}");
    }
    // zipf, percentage_random: one pass of the region's bytes, drawn with replacement.
    for opt in ["--random_distribution=zipf:1.2", "--percentage_random=50"] {
        let v = json(&assert_ok(
            &raidlab(&[
                &f,
                "--rw=randwrite",
                "--bs=4k",
                "--size=1m",
                "--ioengine=psync",
                opt,
                "--output-format=json",
            ]),
            opt,
        ));
        assert_eq!(dir_of(&v, "write").1, 256, "{opt}");
        let (k, val) = opt[2..].split_once('=').unwrap();
        assert_eq!(v["jobs"][0]["job options"][k], val, "{opt}");
    }
    // bsrange: exactly the size, in requests of several sizes (neither all 4k nor all 16k).
    let v = json(&assert_ok(
        &raidlab(&[
            &f,
            "--rw=write",
            "--bsrange=4k-16k",
            "--size=1m",
            "--ioengine=psync",
            "--output-format=json",
        ]),
        "bsrange",
    ));
    let (bytes, ios, _) = dir_of(&v, "write");
    assert_eq!(bytes, 1 << 20);
    assert!(ios > 64 && ios < 256, "{ios} requests");
    assert_eq!(v["jobs"][0]["job options"]["bsrange"], "4k-16k");
    // Bad shares: one line, exit 2.
    for bad in ["--size=0%", "--size=101%", "--offset=100%"] {
        let e = assert_usage_error(&raidlab(&[&f, "--rw=read", bad]), bad);
        assert!(e.contains("is not a share of the target (valid: "), "{e}");
    }
}

/// new_group: b and c run beside a (one stonewall group) but report as group 1; d, after a
/// stonewall, is group 2 (fio 3.33: groupid 0, 1, 1, 2).
#[test]
fn new_group_starts_a_reporting_group() {
    let dir = scratch("raidlab-dist");
    let f = format!("--filename={}", dir.path().join("g").display());
    let args = [
        f.as_str(),
        "--ioengine=null",
        "--size=1m",
        "--rw=read",
        "--name=a",
        "--name=b",
        "--new_group",
        "--name=c",
        "--name=d",
        "--stonewall",
    ];
    let mut json_args = args.to_vec();
    json_args.push("--output-format=json");
    let v = json(&assert_ok(&raidlab(&json_args), "new_group json"));
    let groups: Vec<(String, u64)> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = [("a", 0), ("b", 1), ("c", 1), ("d", 2)]
        .iter()
        .map(|(n, g)| (n.to_string(), *g))
        .collect();
    assert_eq!(groups, want);
    assert_eq!(v["jobs"][1]["job options"]["new_group"], "");
    let text = assert_ok(&raidlab(&args), "new_group text");
    for g in 0..3 {
        assert!(
            text.contains(&format!("Run status group {g} (all jobs):")),
            "{text}"
        );
    }
}

/// randrepeat=0 draws a seed per run and shows it (text: a `randseed=` line under the job;
/// json: `job options`); the simulated run with that seed given repeats bit for bit, and
/// so does one with allrandrepeat=1.
#[test]
fn randrepeat_off_draws_a_seed_the_results_show() {
    let target = sim_target();
    let base = [
        target.as_str(),
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
        "--number_ios=300",
        "--direct=1",
    ];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        a.push("--output-format=json");
        json(&assert_ok(&raidlab(&a), &format!("{extra:?}")))
    };
    let one = run(&["--randrepeat=0"]);
    let two = run(&["--randrepeat=0"]);
    let seed = |v: &serde_json::Value| {
        v["jobs"][0]["job options"]["randseed"]
            .as_str()
            .expect("randseed in job options")
            .to_string()
    };
    assert_eq!(one["jobs"][0]["job options"]["randrepeat"], "0");
    assert_ne!(seed(&one), seed(&two), "two runs, two seeds");
    let again = run(&[&format!("--randseed={}", seed(&one))]);
    assert_eq!(one["jobs"][0]["read"], again["jobs"][0]["read"]);
    assert_ne!(one["jobs"][0]["read"], two["jobs"][0]["read"]);
    // fio's default repeats without any seed shown; a given seed wins over randrepeat=0.
    let plain = run(&[]);
    assert!(plain["jobs"][0]["job options"]["randseed"].is_null());
    let given = run(&["--randrepeat=0", "--randseed=7"]);
    assert_eq!(given["jobs"][0]["job options"]["randseed"], "7");
    // fio's allrandrepeat=1 repeats whatever randrepeat says: no seed drawn, the default
    // run's requests.
    let all = run(&["--randrepeat=0", "--allrandrepeat=1"]);
    assert!(all["jobs"][0]["job options"]["randseed"].is_null());
    assert_eq!(all["jobs"][0]["read"], plain["jobs"][0]["read"]);
    let mut a = base.to_vec();
    a.push("--randrepeat=0");
    let text = assert_ok(&raidlab(&a), "text");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("randseed="))
        .unwrap_or_else(|| panic!("no randseed line: {text}"));
    assert!(line.contains("--randseed="), "{line}");
}

/// fio's `rw=write:4k` on a file: every other 4 KiB block written, the ones skipped left
/// as they were (zeros, as a job with `zero_buffers` laid the file out); then
/// `rw=read:-8k` reads the whole file back, each block once.
#[test]
fn sequential_holes_skip_blocks_of_a_file() {
    let dir = scratch("raidlab-holes");
    let path = dir.path().join("f");
    let f = format!("--filename={}", path.display());
    assert_ok(
        &raidlab(&[
            &f,
            "--rw=read",
            "--size=64k",
            "--zero_buffers=1",
            "--create_only=1",
        ]),
        "zeroed layout",
    );
    let v = json(&assert_ok(
        &raidlab(&[
            &f,
            "--rw=write:4k",
            "--bs=4k",
            "--size=64k",
            "--io_size=32k",
            "--ioengine=psync",
            "--output-format=json",
        ]),
        "write:4k",
    ));
    assert_eq!(v["jobs"][0]["job options"]["rw"], "write:4k");
    assert_eq!(dir_of(&v, "write").1, 8);
    let data = std::fs::read(&path).unwrap();
    assert_eq!(data.len(), 64 << 10);
    for (i, block) in data.chunks(4096).enumerate() {
        let zero = block.iter().all(|&b| b == 0);
        assert_eq!(zero, i % 2 == 1, "block {i}: written {}", !zero);
    }
    let v = json(&assert_ok(
        &raidlab(&[
            &f,
            "--rw=read:-8k",
            "--bs=4k",
            "--ioengine=psync",
            "--output-format=json",
        ]),
        "read:-8k",
    ));
    assert_eq!(v["jobs"][0]["job options"]["rw"], "read:-8k");
    assert_eq!(dir_of(&v, "read").0, 64 << 10);
}

/// In virtual time (deterministic, no wall clock): random reads confined to a hot 1 MiB of
/// the disk (zoned_abs) or mostly sequential (percentage_random) are far faster than random
/// reads over the whole disk; a bsrange job moves exactly its size.
#[test]
fn shaped_streams_change_simulated_results() {
    let target = sim_target();
    let run = |extra: &[&str]| {
        let mut a = vec![
            target.as_str(),
            "--rw=randread",
            "--bs=4k",
            "--number_ios=400",
            "--direct=1",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        json(&assert_ok(&raidlab(&a), &format!("{extra:?}")))
    };
    let uniform = dir_of(&run(&[]), "read").2;
    let zoned = run(&["--random_distribution=zoned_abs:100/1m:0/1m"]);
    assert_eq!(
        zoned["jobs"][0]["job options"]["random_distribution"],
        "zoned_abs:100/1048576:0/1048576"
    );
    let zoned = dir_of(&zoned, "read").2;
    assert!(
        zoned > 2.0 * uniform,
        "zoned {zoned} vs uniform {uniform} IOPS"
    );
    let zipf = dir_of(&run(&["--random_distribution=zipf:1.2"]), "read").2;
    let sequential = dir_of(&run(&["--percentage_random=0"]), "read").2;
    assert!(sequential > 2.0 * uniform, "{sequential} vs {uniform} IOPS");
    // Runs of 16 sequential reads from each random offset (fio's rw=randread:16): most
    // reads follow on, streaming from the drive's read-ahead.
    let runs = run(&["--rw=randread:16"]);
    assert_eq!(runs["jobs"][0]["job options"]["rw"], "randread:16");
    let runs = dir_of(&runs, "read").2;
    assert!(
        runs > 2.0 * uniform,
        "runs {runs} vs uniform {uniform} IOPS"
    );
    // Each offset read 16 times (identical): the drive model keeps no data it has read, so
    // a repeat waits a turn for its sector; still no seek for 15 reads in 16.
    let same = run(&["--rw=randread:16", "--rw_sequencer=identical"]);
    assert_eq!(same["jobs"][0]["job options"]["rw_sequencer"], "identical");
    let same = dir_of(&same, "read").2;
    assert!(
        same > 1.3 * uniform,
        "identical {same} vs uniform {uniform} IOPS"
    );
    // Same options, same results (zipf's hot blocks are drawn from the seed).
    assert_eq!(
        zipf,
        dir_of(&run(&["--random_distribution=zipf:1.2"]), "read").2
    );
    let v = json(&assert_ok(
        &raidlab(&[
            &target,
            "--rw=write",
            "--bsrange=64k-1m",
            "--size=64m",
            "--direct=1",
            "--output-format=json",
        ]),
        "bsrange",
    ));
    assert_eq!(dir_of(&v, "write").0, 64 << 20);
    // A share of the LUN's capacity.
    let v = json(&assert_ok(
        &raidlab(&[
            &target,
            "--rw=read",
            "--bs=1m",
            "--size=1%",
            "--number_ios=8",
            "--direct=1",
            "--output-format=json",
        ]),
        "size=1%",
    ));
    assert_eq!(dir_of(&v, "read").0, 8 << 20);
}
