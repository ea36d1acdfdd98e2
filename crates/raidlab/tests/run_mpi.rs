//! `raidlab run --mpi` under Open MPI's `mpirun`, two ranks on this host: a shared file split
//! by `offset_increment`, files of their own under `directory`, and a run one rank cannot
//! start, which must end every rank with one line rather than leave the others waiting.
//! These tests need the Debian package `openmpi-bin` (mpirun and Open MPI's library); they
//! fail when it is missing.

mod common;
use common::*;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `mpirun -np RANKS raidlab run --mpi ARGS...`, killed (and the test failed) past two
/// minutes: a rank left waiting at a meeting shows as a hang here.
fn mpirun(ranks: u32, args: &[&str]) -> Output {
    mpirun_in(None, ranks, args)
}

/// [`mpirun`] with the ranks' working folder `dir` (where exec_prerun's output goes).
fn mpirun_in(dir: Option<&std::path::Path>, ranks: u32, args: &[&str]) -> Output {
    require_tool("mpirun", "openmpi-bin");
    let mut cmd = Command::new("mpirun");
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut line: Vec<String> = vec!["-np".into(), ranks.to_string(), "--oversubscribe".into()];
    line.extend([bin(), "run", "--mpi"].iter().map(|s| s.to_string()));
    line.extend(args.iter().map(|s| s.to_string()));
    mpirun_line(cmd, &line)
}

/// `mpirun LINE...` as [`mpirun_in`] runs it (LINE may hold several `-np N raidlab …`
/// separated by `:`, Open MPI's form for ranks given different command lines).
fn mpirun_line(mut cmd: Command, line: &[String]) -> Output {
    let args = line;
    cmd.args(line)
        // (CI runs as root; Open MPI refuses root without these.)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn mpirun");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = Command::new("pkill").args(["-KILL", "-f", bin()]).status();
            let out = child.wait_with_output().expect("output");
            panic!(
                "mpirun raidlab run --mpi {args:?} ran past two minutes (a rank waiting for \
                 another?); stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// raidlab's own lines on stderr (mpirun adds banners of its own when a rank exits nonzero).
fn raidlab_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.contains("raidlab"))
        .map(str::to_string)
        .collect()
}

/// Two ranks writing one file: rank 1's region follows rank 0's (`offset_increment`), each
/// reads back what it wrote without a mismatch (so neither wrote over the other), and
/// `group_reporting` shows one result whose bytes are both ranks'.
#[test]
fn ranks_split_a_shared_file_by_offset_increment() {
    let d = scratch("raidlab-mpi-");
    let f = d.path().join("shared");
    let file = format!("--filename={}", f.display());
    let o = mpirun(
        2,
        &[
            "--name=w",
            &file,
            "--rw=write",
            "--bs=64k",
            "--size=2m",
            "--offset_increment=2m",
            "--verify=crc32c",
            "--group_reporting",
            "--output-format=json",
        ],
    );
    let out = json(&assert_ok(&o, "shared file"));
    let jobs = out["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{out}");
    let j = &jobs[0];
    assert_eq!(j["raidlab"]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(j["write"]["io_bytes"], 4 << 20);
    assert_eq!(j["error"], 0);
    assert_eq!(j["raidlab"]["verify"]["mismatches"], 0);
    assert_eq!(j["raidlab"]["verify"]["blocks_checked"], 64);
    // Rank 1 laid the file out to the end of its region: 2 MiB past rank 0's.
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 4 << 20);
}

/// Under `directory` each rank's instances get files of their own, numbered after the ranks
/// before it (`JOB.N.0`), and without `group_reporting` every instance is its own result,
/// by rank.
#[test]
fn ranks_take_their_own_files_under_directory() {
    let d = scratch("raidlab-mpi-");
    let dir = format!("--directory={}", d.path().display());
    let o = mpirun(
        2,
        &[
            "--name=w",
            &dir,
            "--numjobs=2",
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--output-format=json",
        ],
    );
    let out = json(&assert_ok(&o, "directory"));
    let ranks: Vec<serde_json::Value> = out["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["raidlab"]["ranks"].clone())
        .collect();
    assert_eq!(
        ranks,
        [
            serde_json::json!([0]),
            serde_json::json!([0]),
            serde_json::json!([1]),
            serde_json::json!([1])
        ]
    );
    for n in 0..4 {
        let f = d.path().join(format!("w.{n}.0"));
        assert_eq!(
            std::fs::metadata(&f).map(|m| m.len()).ok(),
            Some(1 << 20),
            "{}",
            f.display()
        );
    }
    assert!(!d.path().join("w.4.0").exists());
}

/// Two stonewall groups in the folder `dir` (a `--directory=` option): job `w` writes 1 MiB in
/// 64 KiB blocks (with `write_extra`'s options too), then job `r` reads it.
fn write_then_read<'a>(dir: &'a str, write_extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--name=w", dir, "--rw=write", "--bs=64k", "--size=1m"];
    v.extend_from_slice(write_extra);
    v.extend([
        "--name=r",
        "--stonewall",
        dir,
        "--rw=read",
        "--bs=64k",
        "--size=1m",
    ]);
    v
}

/// One rank cannot start (its file holds data raidlab did not write): every rank ends, none
/// waits for it, and rank 0 says why in one line naming that rank; nothing is measured and
/// no empty `--output` file is left.
#[test]
fn a_rank_that_cannot_start_ends_the_run_in_one_line() {
    let d = scratch("raidlab-mpi-");
    let theirs = d.path().join("w.1.0");
    std::fs::write(&theirs, vec![0x5a; 1 << 20]).unwrap();
    let dir = format!("--directory={}", d.path().display());
    let results = d.path().join("results.json");
    let output = format!("--output={}", results.display());
    let mut args = vec![output.as_str()];
    args.extend(write_then_read(&dir, &[]));
    let o = mpirun(2, &args);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let lines = raidlab_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert!(
        lines[0].starts_with("raidlab: rank 1 on ") && lines[0].contains("w.1.0"),
        "{lines:?}"
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(
        !results.exists(),
        "an output file with no results is left behind"
    );
    // Somebody's data is untouched.
    assert!(std::fs::read(&theirs).unwrap().iter().all(|&b| b == 0x5a));
}

/// exec_prerun under MPI: every rank runs the command, each into its own output file named
/// with its rank (a shared working folder held them all under one name before); a file of
/// that name holding somebody's data is refused before any rank runs anything.
#[test]
fn each_rank_writes_its_own_exec_prerun_output() {
    let d = scratch("raidlab-mpi-");
    let dir = format!("--directory={}", d.path().display());
    let job = [
        "--name=p",
        dir.as_str(),
        "--rw=write",
        "--bs=64k",
        "--size=256k",
        "--exec_prerun=echo rank $OMPI_COMM_WORLD_RANK",
    ];
    let o = mpirun_in(Some(d.path()), 2, &job);
    assert_ok(&o, "exec_prerun under mpi");
    for r in 0..2 {
        let out = d.path().join(format!("p.rank{r}.prerun.txt"));
        let text =
            std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        assert_eq!(text, format!("rank {r}\n"), "{}", out.display());
    }
    assert!(!d.path().join("p.prerun.txt").exists());
    // Somebody's file under rank 1's name: refused in one line, and left as it was.
    // (A new file: the one rank 1 wrote carries raidlab's mark.)
    let theirs = d.path().join("p.rank1.prerun.txt");
    std::fs::remove_file(&theirs).unwrap();
    std::fs::write(&theirs, "notes\n").unwrap();
    std::fs::remove_file(d.path().join("p.rank0.prerun.txt")).unwrap();
    let o = mpirun_in(Some(d.path()), 2, &job);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let lines = raidlab_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("p.rank1.prerun.txt") && lines[0].contains("--force"),
        "{lines:?}"
    );
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "notes\n");
    assert!(
        !d.path().join("p.rank0.prerun.txt").exists(),
        "rank 0 ran its command although rank 1 refused"
    );
}

/// Bad input that every rank finds is said once, as a run without MPI says it.
#[test]
fn bad_input_on_every_rank_is_one_line() {
    let o = mpirun(
        2,
        &["--name=w", "--filename=/dev/shm/raidlab-mpi-x", "--bs=4q"],
    );
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let lines = raidlab_lines(&o);
    assert_eq!(
        lines,
        ["raidlab: --bs=4q: '4q' has unknown unit 'q' (valid: k, m, g, t, p, optionally followed by b or ib)"]
    );
}

/// What one process must run is refused under --mpi in one line: a simulated system, an
/// array, fio's log files; and a missing MPI library is named.
#[test]
fn what_runs_in_one_process_is_refused_under_mpi() {
    require_tool("mpirun", "openmpi-bin");
    let envs = [
        ("OMPI_ALLOW_RUN_AS_ROOT", std::path::Path::new("1")),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", std::path::Path::new("1")),
    ];
    let limit = Duration::from_secs(120);
    for (args, what) in [
        (
            &[
                "--mpi",
                "--name=w",
                "--filename=sim:systems/xdd2008/raid5.toml",
                "--size=1m",
            ][..],
            "a simulated system runs in one process",
        ),
        (
            &[
                "--mpi",
                "--name=w",
                "--filename=array:/dev/shm/a,/dev/shm/b",
                "--size=1m",
            ][..],
            "an array is assembled by one process",
        ),
        (
            &[
                "--mpi",
                "--name=w",
                "--filename=/dev/shm/raidlab-mpi-y",
                "--size=1m",
                "--write_bw_log=x",
            ][..],
            "writes fio's log files",
        ),
    ] {
        let o = raidlab_with(args, &envs, limit);
        let err = assert_usage_error(&o, what);
        assert!(err.contains(what), "{err}");
    }
    let missing = std::path::Path::new("/nonexistent/libmpi.so");
    let o = raidlab_with(
        &[
            "--mpi",
            "--name=w",
            "--filename=/dev/shm/raidlab-mpi-y",
            "--size=1m",
        ],
        &[("RAIDLAB_LIBMPI", missing)],
        limit,
    );
    let err = assert_usage_error(&o, "no MPI library");
    assert!(err.contains("cannot load Open MPI's library"), "{err}");
}

/// `rank_shift=1` (IOR's task reordering): each rank runs the job as the next rank would, so
/// it reads the region the next rank wrote. Only the second of two regions holds verified
/// data: unshifted, rank 0 reads the empty first region and finds no headers; shifted, rank
/// 0 reads the second, and rank 1, shifted round to the first, finds none.
#[test]
fn rank_shift_reads_the_next_ranks_region() {
    let d = scratch("raidlab-mpi-");
    let f = d.path().join("shared");
    let file = format!("--filename={}", f.display());
    let o = raidlab(&[
        "--name=second-region",
        &file,
        "--rw=write",
        "--bs=64k",
        "--offset=1m",
        "--size=1m",
        "--verify=crc32c",
    ]);
    assert_ok(&o, "writing the second region");
    let read = |shift: &str| {
        let o = mpirun(
            2,
            &[
                "--name=r",
                &file,
                "--rw=read",
                "--bs=64k",
                "--size=1m",
                "--offset_increment=1m",
                "--verify=crc32c",
                shift,
                "--output-format=json",
            ],
        );
        // (A verify mismatch is the job's error: the run exits 1 with its results.)
        assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
        let out = json(&stdout(&o));
        out["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["raidlab"]["ranks"][0].as_u64().unwrap(),
                    j["raidlab"]["verify"]["mismatches"].as_u64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(read("--rank_shift=0"), [(0, 16), (1, 0)]);
    assert_eq!(read("--rank_shift=1"), [(0, 0), (1, 16)]);
}

/// Ranks given different command lines (Open MPI's `-np 1 A : -np 1 B`) that run different
/// numbers of stonewall groups, or where one asks for --help, would meet a different number
/// of times: one line names them and every rank ends, rather than each waiting at a meeting
/// the other never holds (the run hung before).
#[test]
fn ranks_given_different_jobs_end_in_one_line() {
    require_tool("mpirun", "openmpi-bin");
    let d = scratch("raidlab-mpi-");
    let f = |n: &str| format!("--filename={}", d.path().join(n).display());
    let one: Vec<String> = vec![
        "--name=w".into(),
        f("a"),
        "--rw=write".into(),
        "--bs=64k".into(),
        "--size=1m".into(),
    ];
    let mut two = one.clone();
    two[1] = f("b");
    two.extend(
        [
            "--name=r",
            "--stonewall",
            "--rw=read",
            "--bs=64k",
            "--size=1m",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    two.push(f("b"));
    let rank = |args: &[String]| -> Vec<String> {
        let mut v: Vec<String> = ["-np", "1", "--oversubscribe", bin(), "run", "--mpi"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(args.iter().cloned());
        v
    };
    for (a, b, said) in [
        (&one, &two, "rank 0 on"),
        (&vec!["--help".to_string()], &one, "--help"),
    ] {
        let mut line = rank(a);
        line.push(":".into());
        line.extend(rank(b));
        let o = mpirun_line(Command::new("mpirun"), &line);
        assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
        let lines = raidlab_lines(&o);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("the ranks were given different jobs") && lines[0].contains(said),
            "{lines:?}"
        );
        assert!(!stdout(&o).contains("Run status"), "{}", stdout(&o));
    }
}

/// A job that fails on one rank only (its exec_prerun exits nonzero there) is reported in its
/// rank's result, the other groups still run, and the run's error line names the rank whose
/// job it was (it named the job alone, as if every rank's had failed).
#[test]
fn a_job_that_fails_on_one_rank_is_named_with_its_rank() {
    let d = scratch("raidlab-mpi-");
    let dir = format!("--directory={}", d.path().display());
    let o = mpirun_in(
        Some(d.path()),
        2,
        &write_then_read(&dir, &["--exec_prerun=test $OMPI_COMM_WORLD_RANK = 0"]),
    );
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let lines = raidlab_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("raidlab: rank 1 on ") && lines[0].contains("job 'w': exec_prerun"),
        "{lines:?}"
    );
    // Both ranks' read group ran.
    assert_eq!(
        stdout(&o).matches("\nr: (groupid=1").count(),
        2,
        "{}",
        stdout(&o)
    );
}
