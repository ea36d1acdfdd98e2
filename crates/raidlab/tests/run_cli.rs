//! `raidlab run`'s argument and job-file handling through the built binary: every bad flag,
//! value or job file is one line on stderr and exit 2, never a panic.

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

#[test]
fn bad_flags_and_values_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f").display().to_string();
    let file_opt = format!("--filename={f}");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![&file_opt, "--bs=4q"],
            "--bs=4q: '4q' has unknown unit 'q' (valid: k, m, g, t, p",
        ),
        (
            vec![&file_opt, "--rw=sideways"],
            "--rw=sideways: 'sideways' is not an I/O pattern (valid: read,",
        ),
        (vec![&file_opt, "--iodepth=0"], "--iodepth=0:"),
        // (A list of sizes or rates with none in it, as fio refuses it: not the default.)
        (
            vec![&file_opt, "--bs="],
            "--bs=: empty value (valid: one to three sizes, for reads, writes and trims, e.g. 4k,64k)",
        ),
        (vec![&file_opt, "--rate=,"], "--rate=,: ',' gives no values, only commas"),
        (vec![&file_opt, "--iodepth"], "--iodepth: needs a value"),
        (vec!["--frobnicate=3"], "unknown option 'frobnicate'"),
        (
            vec!["--zonemode", "zbd"],
            "--zonemode=zbd: 'zbd' drives zoned block devices, which raidlab does not (valid: none, strided)",
        ),
        (
            vec!["--zonecapacity", "1m"],
            "option 'zonecapacity' is fio's and raidlab does not run it",
        ),
        (vec!["-q"], "'-q': unknown flag"),
        (vec!["--=3"], "'--=3': expected --key=value"),
        (
            vec!["--output-format=xml"],
            "'xml' is not an output format (valid: text, normal, json, json+, terse, or several joined by commas)",
        ),
        (vec!["--output-format"], "--output-format: needs a value"),
        (vec!["--force=1"], "--force takes no value"),
        // No target: files in the working folder, as fio names them; reading one that is not
        // there needs a size to lay it out.
        (
            vec!["--name=a", "--rw=read"],
            "target ./a.0.0 does not exist; give size=",
        ),
        (
            vec![&file_opt, "--time_based"],
            "time_based needs a runtime",
        ),
        (
            vec![&file_opt, "--direct=1", "--bs=1000"],
            "multiple of 512",
        ),
        (
            vec![&file_opt, "--verify=sideways"],
            "'sideways' is not a verify mode",
        ),
        (
            vec![&file_opt, "--verify=pattern"],
            "verify=pattern checks the bytes verify_pattern gives",
        ),
        (
            vec![&file_opt, "--ioengine=posixaio"],
            "'posixaio' is not a supported ioengine (valid: io_uring, libaio, psync, sync, vsync, pvsync, pvsync2, mmap, null)",
        ),
        // size=0 is fio's default, the whole file: a file that is not there has none to
        // take, and fio 3.33 says "you need to specify size=".
        (
            vec![&file_opt, "--size=0"],
            "does not exist; give size=",
        ),
        (vec![&file_opt, "--bssplit=4k/60:8k/60"], "add up to 120%"),
        (
            vec![&file_opt, "--rate_process=bursty"],
            "--rate_process=bursty: 'bursty' is not a rate process (valid: linear, poisson)",
        ),
        (vec![&file_opt, "--thinktime=soon"], "--thinktime=soon: 'soon' is not a duration"),
        (
            vec![&file_opt, "--sync=always"],
            "'always' is not a sync mode (valid: none, 0, sync, 1, dsync)",
        ),
        (
            vec![&file_opt, "--size=1m", "--rate=1m", "--rate_min=2m"],
            "rate_min=2097152 for reads is above its cap rate=1048576",
        ),
        (
            vec![&file_opt, "--size=1m", "--iodepth=65536"],
            "iodepth=65536 with ioengine=io_uring: the kernel's rings hold at most 32768 requests (valid: 1 to 32768)",
        ),
        (vec!["--job"], "--job: needs a value"),
        (
            vec!["--job", "/nonexistent/x.fio"],
            "/nonexistent/x.fio: cannot read job file",
        ),
        (
            vec!["/nonexistent/y.fio"],
            "/nonexistent/y.fio: cannot read job file",
        ),
        (
            vec!["--filename=sim:a.toml:/tmp/x", "--size=1m"],
            "either simulated or real",
        ),
        (
            vec![&file_opt, "--size=1m", "--output=/nonexistent/dir/out.json"],
            "--output /nonexistent/dir/out.json: cannot open for writing",
        ),
    ];
    for (args, expect) in cases {
        let out = raidlab(&args);
        let err = assert_usage_error(&out, &format!("{args:?}"));
        assert!(
            err.contains(expect),
            "{args:?}: expected '{expect}' in {err:?}"
        );
        assert!(
            out.stdout.is_empty(),
            "{args:?}: printed results on bad input"
        );
    }
}

#[test]
fn bad_job_files_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[global]\nbs=4k\n[a]\nrw=read\nzonecapacity=1m\n",
            ":5: option 'zonecapacity' is fio's and raidlab does not run it",
        ),
        (
            "rw=read\n[a]\n",
            ":1: option 'rw' comes before any [section]",
        ),
        ("; only globals\n[global]\nbs=4k\n", "no job sections"),
        (
            "[a]\nbs=12x\n",
            ":2: option 'bs': '12x' has unknown unit 'x'",
        ),
        ("[a\nrw=read\n", ":1: '[a' is not a section header"),
        ("[a]\nrw\n", ":2: option 'rw': needs a value"),
        (
            "[a]\nfilename=/tmp/x\niodepth=99999999\n",
            ":3: option 'iodepth'",
        ),
    ];
    for (i, (text, expect)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("bad{i}.fio"));
        std::fs::write(&path, text).unwrap();
        let p = path.display().to_string();
        let out = raidlab(&["--job", &p]);
        let err = assert_usage_error(&out, text);
        assert!(
            err.contains(&format!("{p}{expect}")) || err.contains(expect),
            "{text:?}: expected '{expect}' in {err:?}"
        );
        assert!(
            err.contains(&p),
            "{text:?}: error does not name the file: {err:?}"
        );
    }
}

#[test]
fn help_lists_every_supported_fio_option() {
    let out = raidlab(&["--help"]);
    let text = assert_ok(&out, "run --help");
    for name in raidlab_workload::OPTION_NAMES {
        assert!(
            text.contains(&format!("--{name} ")),
            "--help does not list --{name}"
        );
    }
    for own in [
        "--output-format",
        "--output",
        "--force",
        "--verify",
        "--progress",
        "--job",
    ] {
        assert!(text.contains(own), "--help does not list {own}");
    }
}

/// A small deterministic generator (splitmix64) for the random argument vectors.
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// Random argument vectors from a vocabulary of good and bad pieces: raidlab never panics
/// (exit 101), and whenever it fails, stderr is exactly one `raidlab: ` line. Targets are
/// confined to a temporary folder, sizes and runtimes are small, the engine mostly null.
#[test]
fn random_argument_vectors_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t").display().to_string();
    let job = dir.path().join("j.fio");
    std::fs::write(&job, format!("[global]\nioengine=null\nsize=64k\nfilename={f}\n[x]\nrw=randrw\n[y]\nstonewall\nrw=read\n")).unwrap();
    let job = job.display().to_string();
    let keys = [
        "rw",
        "bs",
        "bssplit",
        "iodepth",
        "numjobs",
        "rwmixread",
        "rwmixwrite",
        "size",
        "offset",
        "offset_increment",
        "runtime",
        "time_based",
        "ramp_time",
        "loops",
        "direct",
        "ioengine",
        "randseed",
        "verify",
        "group_reporting",
        "stonewall",
        "thread",
        "name",
        "frob",
        "",
        "output-format",
        "job",
        "bogus_key",
        "BS",
        "exitall",
        "exit_what",
        "unified_rw_reporting",
        "prio",
        "nice",
        "random_generator",
        "per_job_logs",
        "log_hist_msec",
        "log_hist_coarseness",
        "allow_mounted_write",
        "nrfiles",
        "filesize",
        "file_service_type",
        "job_per_file",
    ];
    let values = [
        "",
        "0",
        "1",
        "2",
        "-1",
        "4k",
        "4q",
        "64k",
        "1m",
        "read",
        "write",
        "randrw",
        "rw",
        "null",
        "psync",
        "json",
        "json+",
        "text",
        "crc32c",
        "4k/50:8k/50",
        "4k/200",
        "10ms",
        "1x",
        "99999999999999999999999",
        "a,b",
        "☃",
        "=",
        "k",
        "512",
        "0x10",
        "mixed",
        "both",
        "all",
        "lfsr",
        "random:2",
        "sequential",
        "roundrobin:0",
    ];
    let mut g = Gen(0x5eed);
    let cases = 150;
    for case in 0..cases {
        let mut args: Vec<String> = vec![
            "--no-progress".into(),
            "--ioengine=null".into(),
            "--size=64k".into(),
        ];
        args.push(format!(
            "--filename={}",
            if case % 7 == 0 {
                "sim:/nonexistent.toml".to_string()
            } else {
                f.clone()
            }
        ));
        let n = 1 + g.next() % 6;
        for _ in 0..n {
            let key = g.pick(&keys);
            let val = g.pick(&values);
            let arg = match g.next() % 8 {
                0 => format!("--{key}"),
                1 => val.to_string(),
                2 => format!("-{key}"),
                3 => format!("--job={job}"),
                _ => format!("--{key}={val}"),
            };
            // Keep runs short and inside the temporary folder.
            if arg.contains("ioengine=psync")
                || arg.contains("ioengine=io_uring")
                || arg.starts_with("--size")
            {
                continue;
            }
            args.push(arg);
        }
        args.push("--runtime=20ms".into());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = raidlab_with(&argv, &[], Duration::from_secs(60));
        let code = out.status.code();
        assert_ne!(code, Some(101), "{argv:?} panicked: {}", stderr(&out));
        assert!(code.is_some(), "{argv:?} died by signal");
        if code != Some(0) {
            assert_one_line(&stderr(&out), &format!("{argv:?}"));
            assert!(matches!(code, Some(1) | Some(2)), "{argv:?}: exit {code:?}");
        }
    }
}

/// The example job files parse and validate once a target is given, as their comments say.
#[test]
fn example_job_files_are_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/jobs");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("fio") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let base = raidlab_workload::JobSpec {
            filenames: vec!["/dev/null".into()],
            ..Default::default()
        };
        let jobs = raidlab_workload::parse_job_text(&text, &path.display().to_string(), base)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for j in &jobs {
            j.validate()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        n += 1;
    }
    assert!(
        n >= 3,
        "expected the seed example job files in {}",
        dir.display()
    );
}

/// Seed 000's dd-like job runs end to end against its simulated system.
#[test]
fn seed000_example_runs_on_the_simulated_system() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let system = root.join("systems/llnl2000/fig11.toml");
    let job = root.join("examples/jobs/seed000-dd-sequential.fio");
    let out = raidlab(&[
        &format!("--filename=sim:{}", system.display()),
        "--job",
        &job.display().to_string(),
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "seed 000 example"));
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["read"]["io_bytes"], 8u64 << 30);
    assert_eq!(jobs[1]["write"]["io_bytes"], 8u64 << 30);
}

#[test]
fn io_size_limits_each_pass_inside_a_larger_region() {
    // xdd's `-mbytes` inside `-seek range`: 2 passes of 64 KiB of 4 KiB random reads over a
    // 1 MiB region of a simulated drive.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let system = root.join("systems/llnl2000/fig11.toml");
    let out = raidlab(&[
        &format!("--filename=sim:{}", system.display()),
        "--rw=randread",
        "--bs=4k",
        "--size=1m",
        "--io_size=64k",
        "--loops=2",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "io_size run"));
    let read = &v["jobs"][0]["read"];
    assert_eq!(read["io_bytes"], 128u64 << 10, "{read}");
    assert_eq!(read["total_ios"], 32, "{read}");
}

/// size=0 and io_size=0 are fio's defaults, not errors: fio 3.33 reads all of a 2 MiB file
/// with size=0 (also from a job file, undoing a [global] size), and io_size=0 leaves the
/// pass at the job's size.
#[test]
fn size_zero_is_the_whole_file_as_in_fio() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    std::fs::write(&f, vec![7u8; 2 << 20]).unwrap();
    let file_opt = format!("--filename={}", f.display());
    let read_bytes = |args: &[&str]| {
        let out = raidlab(args);
        let v = json(&assert_ok(&out, &format!("{args:?}")));
        v["jobs"][0]["read"]["io_bytes"].as_u64().unwrap()
    };
    let base = [
        &file_opt[..],
        "--name=s",
        "--rw=read",
        "--output-format=json",
    ];
    let mut a = base.to_vec();
    a.push("--size=0");
    assert_eq!(read_bytes(&a), 2 << 20, "size=0 reads the whole file");
    let mut a = base.to_vec();
    a.extend(["--size=1m", "--io_size=0"]);
    assert_eq!(read_bytes(&a), 1 << 20, "io_size=0 is the job's size");
    let job = dir.path().join("s.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nsize=1m\n[s]\nfilename={}\nrw=read\nsize=0\n",
            f.display()
        ),
    )
    .unwrap();
    let job = job.display().to_string();
    assert_eq!(
        read_bytes(&["--job", &job, "--output-format=json"]),
        2 << 20,
        "a job's size=0 undoes [global]'s size"
    );
}

/// A job that ends inside its ramp_time counts nothing: the run says so instead of printing
/// empty results as if they were measured.
#[test]
fn a_job_ending_within_its_ramp_is_noted() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let system = root.join("systems/xdd2008/raid0.toml");
    let target = format!("--filename=sim:{}", system.display());
    let base = [
        "--name=j",
        target.as_str(),
        "--rw=read",
        "--bs=4k",
        "--size=1m",
        "--direct=1",
    ];
    let mut args = base.to_vec();
    args.push("--ramp_time=10s");
    let out = raidlab(&args);
    assert_ok(&out, "ramp longer than the job");
    let err = stderr(&out);
    assert!(
        err.contains("job 'j' ended within its ramp_time=10s: nothing was counted"),
        "{err}"
    );
    let out = raidlab(&base);
    assert_ok(&out, "no ramp");
    assert!(!stderr(&out).contains("ramp_time"), "{}", stderr(&out));
}

/// verify on a simulated target checks nothing, as no data moves: the run says so in one
/// note (it printed results without a verify line or a word). Its read-back after the
/// writes is simulated (counted as its reads): the writes' figures are those of the same
/// run without verify.
#[test]
fn verify_on_a_simulated_target_is_noted() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let system = root.join("systems/xdd2008/raid0.toml");
    let target = format!("--filename=sim:{}", system.display());
    let base = [
        "--name=j",
        target.as_str(),
        "--rw=write",
        "--bs=64k",
        "--size=8m",
        "--direct=1",
        "--output-format=json",
    ];
    let plain = raidlab(&base);
    let plain_json = assert_ok(&plain, "without verify");
    assert!(!stderr(&plain).contains("verify"), "{}", stderr(&plain));
    let mut args = base.to_vec();
    args.push("--verify=crc32c");
    let out = raidlab(&args);
    let v = json(&assert_ok(&out, "with verify"));
    let err = stderr(&out);
    assert_eq!(
        err.lines().filter(|l| l.contains("verify")).count(),
        1,
        "{err}"
    );
    assert!(err.contains("nothing is checked"), "{err}");
    let p = json(&plain_json);
    assert_eq!(v["jobs"][0]["write"], p["jobs"][0]["write"]);
}

/// A real run hands requests to the kernel `iodepth_batch_submit` at a time; a simulated one
/// makes no system calls: it says so once, and its results are those without the option.
#[test]
fn iodepth_batch_submit_on_a_simulated_target_is_noted() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let system = root.join("systems/xdd2008/raid5.toml");
    let target = format!("--filename=sim:{}", system.display());
    let base = [
        "--name=j",
        target.as_str(),
        "--rw=randread",
        "--bs=8k",
        "--iodepth=32",
        "--size=64m",
        "--direct=1",
        "--output-format=json",
    ];
    let plain = raidlab(&base);
    let plain_json = assert_ok(&plain, "without iodepth_batch");
    assert!(
        !stderr(&plain).contains("iodepth_batch"),
        "{}",
        stderr(&plain)
    );
    let mut args = base.to_vec();
    args.extend(["--iodepth_batch=16", "--iodepth_batch_complete_max=8"]);
    let out = raidlab(&args);
    let v = json(&assert_ok(&out, "with iodepth_batch"));
    let err = stderr(&out);
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("iodepth_batch_submit"))
            .count(),
        1,
        "{err}"
    );
    let p = json(&plain_json);
    assert_eq!(v["jobs"][0]["read"], p["jobs"][0]["read"]);
}

/// A simulated device models no data content: the buffer options are noted once, and the
/// results are those without them.
#[test]
fn buffer_options_on_a_simulated_target_are_noted() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let system = root.join("systems/xdd2008/raid5.toml");
    let target = format!("--filename=sim:{}", system.display());
    let base = [
        "--name=j",
        target.as_str(),
        "--rw=randwrite",
        "--bs=8k",
        "--iodepth=16",
        "--size=16m",
        "--direct=1",
        "--output-format=json",
    ];
    let plain = json(&assert_ok(&raidlab(&base), "without buffer options"));
    let mut args = base.to_vec();
    args.extend(["--dedupe_percentage=20", "--buffer_compress_percentage=50"]);
    let out = raidlab(&args);
    let v = json(&assert_ok(&out, "with buffer options"));
    let err = stderr(&out);
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("models no data content"))
            .count(),
        1,
        "{err}"
    );
    assert_eq!(v["jobs"][0]["write"], plain["jobs"][0]["write"]);
}

/// A job file written for fio's libaio, with its buffer options, runs as written: the
/// engine is libaio and the file holds what the options say (half of each 512 bytes zeros).
#[test]
fn a_libaio_job_file_with_buffer_options_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    let job = dir.path().join("aio.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=libaio\ndirect=1\nrefill_buffers\nbuffer_compress_percentage=50\nbuffer_compress_chunk=512\n\n[w]\nfilename={}\nrw=randwrite\nbs=4k\nsize=256k\niodepth=8\n",
            f.display()
        ),
    )
    .unwrap();
    let out = raidlab(&["--job", &job.display().to_string()]);
    let text = assert_ok(&out, "libaio job file");
    assert!(text.contains("engine=libaio"), "{text}");
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 256 << 10);
    for (i, c) in data.chunks(512).enumerate() {
        assert!(c[256..].iter().all(|&b| b == 0), "sector {i}");
        assert!(
            c[..256].iter().filter(|&&b| b == 0).count() < 16,
            "sector {i}"
        );
    }
}

/// `description` shows where fio shows it: a line under the job's header, JSON's `desc`
/// and `job options`, and one more terse field; from a job file, quotes and all.
#[test]
fn a_description_shows_as_fio_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f").display().to_string();
    let file = format!("--filename={f}");
    let base = [
        "--name=d",
        file.as_str(),
        "--size=64k",
        "--description=seq read of f",
    ];
    let text = assert_ok(&raidlab(&base), "text");
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("d: (groupid=0"))
        .unwrap();
    assert_eq!(lines[at + 1], "  Description  : [seq read of f]");
    let mut args = base.to_vec();
    args.push("--output-format=json");
    let v = json(&assert_ok(&raidlab(&args), "json"));
    assert_eq!(v["jobs"][0]["desc"], "seq read of f");
    assert_eq!(v["jobs"][0]["job options"]["description"], "seq read of f");
    let mut args = base.to_vec();
    args.push("--output-format=terse");
    let terse = assert_ok(&raidlab(&args), "terse");
    let fields: Vec<&str> = terse.trim_end().split(';').collect();
    // (After the disk fields, nine for each disk under the file; none in tmpfs.)
    assert_eq!((fields.len() - 122) % 9, 0, "{terse}");
    assert_eq!(fields.last(), Some(&"seq read of f"));
    // Without one, none of them.
    let plain = assert_ok(&raidlab(&base[..3]), "plain");
    assert!(!plain.contains("Description"));
    let job = dir.path().join("d.fio");
    std::fs::write(
        &job,
        format!("[d]\ndescription=\"from a file\"\nfilename={f}\nsize=64k\n"),
    )
    .unwrap();
    let out = assert_ok(&raidlab(&["--job", &job.display().to_string()]), "job file");
    assert!(out.contains("  Description  : [from a file]\n"), "{out}");
}

/// gtod_reduce (and disable_clat, disable_lat, disable_bw_measurement alone) leave those
/// figures out as fio does: N=0 latencies and no samples in JSON, no lines for them in the
/// text, `0%=0` percentiles in terse; the rates stay. A simulated job alike.
#[test]
fn gtod_reduce_leaves_out_latency_and_samples_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", dir.path().join("f").display());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sim = format!(
        "--filename=sim:{}",
        root.join("systems/xdd2008/raid5.toml").display()
    );
    // (On the simulated array a region the drives' buffers cannot hold, so that its rate
    // does not settle before the samples below are taken.)
    for (target, size) in [(f.as_str(), "--size=4m"), (sim.as_str(), "--size=4g")] {
        let base = [
            "--name=g",
            target,
            size,
            "--rw=randread",
            "--direct=1",
            "--iodepth=4",
        ];
        let with = |extra: &[&str], format: &str| {
            let mut a = base.to_vec();
            a.extend_from_slice(extra);
            a.push(format);
            assert_ok(&raidlab(&a), target)
        };
        let v = json(&with(&["--gtod_reduce=1"], "--output-format=json"));
        let r = &v["jobs"][0]["read"];
        assert_eq!(
            (&r["clat_ns"]["N"], &r["lat_ns"]["N"]),
            (&0.into(), &0.into()),
            "{target}"
        );
        assert_eq!(r["bw_samples"], 0, "{target}");
        assert!(r["iops"].as_f64().unwrap() > 0.0, "{target}");
        let text = with(&["--gtod_reduce"], "--output-format=normal");
        for gone in ["clat (", "lat (", "bw (", "iops        :", "percentiles"] {
            assert!(!text.contains(gone), "{target}: {gone}\n{text}");
        }
        assert!(text.contains("read: IOPS="), "{target}");
        let terse = with(&["--gtod_reduce=1"], "--output-format=terse");
        let fields: Vec<&str> = terse.trim_end().split(';').collect();
        assert!(
            fields[17..37].iter().all(|x| *x == "0%=0"),
            "{target}: {terse}"
        );
        // One at a time: total latency gone, completion latency kept.
        // (Over 1.1 s, so the bandwidth has two 500 ms samples to keep.)
        let v = json(&with(
            &["--disable_lat=1", "--runtime=1100ms", "--time_based"],
            "--output-format=json",
        ));
        let r = &v["jobs"][0]["read"];
        assert_eq!(r["lat_ns"]["N"], 0, "{target}");
        assert!(r["clat_ns"]["N"].as_u64().unwrap() > 0, "{target}");
        assert_eq!(r["bw_samples"], 2, "{target}");
    }
}

/// fio's other checksum names run as raidlab's own verify, and raidlab says so once.
#[test]
fn a_verify_checksum_named_by_fio_runs_as_raidlabs_and_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", dir.path().join("f").display());
    let out = raidlab(&[
        "--name=v",
        f.as_str(),
        "--size=256k",
        "--rw=write",
        "--verify=md5",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "verify=md5"));
    assert_eq!(v["jobs"][0]["raidlab"]["verify"]["blocks_checked"], 64);
    assert_eq!(v["jobs"][0]["job options"]["verify"], "md5");
    let err = stderr(&out);
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("verify=md5: raidlab checks"))
            .count(),
        1,
        "{err}"
    );
    // clocksource likewise: the clock raidlab reads, whichever is named.
    let out = raidlab(&["--name=c", f.as_str(), "--size=64k", "--clocksource=cpu"]);
    assert_ok(&out, "clocksource=cpu");
    assert!(
        stderr(&out).contains(
            "clocksource=cpu: raidlab times every request with clock_gettime(CLOCK_MONOTONIC)"
        ),
        "{}",
        stderr(&out)
    );
    let out = raidlab(&[
        "--name=c",
        f.as_str(),
        "--size=64k",
        "--clocksource=clock_gettime",
    ]);
    assert_ok(&out, "clocksource=clock_gettime");
    assert!(!stderr(&out).contains("clocksource"), "{}", stderr(&out));
}

/// A job file with `directory` and no `filename` runs each job on its own file there, named
/// as fio names them.
#[test]
fn a_directory_without_filenames_gives_each_job_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("d.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=256k\nbs=64k\nrw=write\n\n[w]\nnumjobs=2\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let out = raidlab(&["--job", &job.display().to_string(), "--output-format=json"]);
    let v = json(&assert_ok(&out, "directory job file"));
    assert_eq!(v["jobs"].as_array().unwrap().len(), 2);
    for n in 0..2 {
        let f = dir.path().join(format!("w.{n}.0"));
        assert_eq!(
            std::fs::metadata(&f).unwrap().len(),
            256 << 10,
            "{}",
            f.display()
        );
    }
}

/// The pacing options work from a job file as from flags, and fio's JSON carries them in
/// "job options" and the syncs in its "sync" section.
#[test]
fn pacing_options_work_from_a_job_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f").display().to_string();
    let job = dir.path().join("paced.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={f}\nsize=256k\nbs=4k\n[w]\nrw=write\nfsync=16\nrate_iops=100000\nthinktime=1\nthinktime_blocks=32\n"
        ),
    )
    .unwrap();
    let out = raidlab(&["--job", &job.display().to_string(), "--output-format=json"]);
    let v = json(&assert_ok(&out, "paced job file"));
    let j = &v["jobs"][0];
    assert_eq!(j["write"]["total_ios"], 64);
    assert_eq!(j["sync"]["total_ios"], 3);
    assert_eq!(j["sync"]["lat_ns"]["N"], 3);
    assert_eq!(j["job options"]["fsync"], "16");
    assert_eq!(j["job options"]["rate_iops"], "100000");
    assert_eq!(j["job options"]["thinktime"], "1us");
}

/// ioengine=null on a simulated target is a usage error in one line.
#[test]
fn the_null_engine_on_a_simulated_target_is_refused() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let system = root.join("systems/xdd2008/raid0.toml");
    let out = raidlab(&[
        "--name=j",
        &format!("--filename=sim:{}", system.display()),
        "--rw=read",
        "--size=1m",
        "--ioengine=null",
    ]);
    assert_usage_error(&out, "ioengine=null on sim:");
    assert!(stderr(&out).contains("ioengine=null"), "{}", stderr(&out));
}

/// The results file never replaces data: not a job's target, not a file raidlab did not
/// write (without --force); raidlab's own earlier results are replaced freely, and
/// /dev/null takes them.
#[test]
fn output_does_not_replace_data() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    std::fs::write(p("tgt"), vec![5u8; 1 << 20]).unwrap();
    std::fs::write(p("notes.txt"), b"my notes").unwrap();
    let run_to = |out: &str, force: bool| {
        let target = format!("--filename={}", p("tgt"));
        let output = format!("--output={out}");
        let mut a = vec![
            "--name=a",
            target.as_str(),
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            output.as_str(),
        ];
        if force {
            a.push("--force");
        }
        raidlab(&a)
    };
    let out = run_to(&p("tgt"), true);
    let err = assert_usage_error(&out, "--output onto the target");
    assert!(err.contains("is job 'a''s target"), "{err}");
    assert_eq!(std::fs::read(p("tgt")).unwrap(), vec![5u8; 1 << 20]);
    let out = run_to(&p("notes.txt"), false);
    let err = assert_usage_error(&out, "--output onto a text file");
    assert!(err.contains("holds 8 bytes raidlab did not write"), "{err}");
    assert_eq!(std::fs::read(p("notes.txt")).unwrap(), b"my notes");
    assert_ok(&run_to(&p("notes.txt"), true), "forced");
    assert!(std::fs::read_to_string(p("notes.txt"))
        .unwrap()
        .contains("groupid=0"));
    assert_ok(&run_to(&p("res.txt"), false), "new file");
    assert_ok(&run_to(&p("res.txt"), false), "raidlab's own results again");
    assert_ok(&run_to("/dev/null", false), "/dev/null");
}

/// A read job reaching past the end of a file raidlab did not lay out is refused; what is
/// valid counts the job's offset (its size alone may be under the file's length and still
/// reach past it).
#[test]
fn a_read_past_the_end_of_a_foreign_file_names_the_valid_end() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    std::fs::write(&f, vec![5u8; 1 << 20]).unwrap();
    let target = format!("--filename={}", f.display());
    let out = raidlab(&[
        "--name=a",
        &target,
        "--rw=read",
        "--offset=512k",
        "--size=1m",
    ]);
    let err = assert_usage_error(&out, "read past the end of a foreign file");
    assert!(
        err.contains("reads to byte 1572864") && err.contains("offset + size up to 1048576"),
        "{err}"
    );
    assert_eq!(std::fs::read(&f).unwrap(), vec![5u8; 1 << 20]);
}

/// Results that cannot be written (a full disk, here /dev/full) are an error, not exit 0 with
/// the results lost; a closed pipe (`| head`) is not.
#[test]
fn results_that_cannot_be_written_are_an_error() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = format!(
        "--filename=sim:{}",
        root.join("systems/xdd2008/raid0.toml").display()
    );
    let args = [
        "run",
        "--name=j",
        &target,
        "--rw=read",
        "--bs=64k",
        "--size=1m",
        "--direct=1",
    ];
    let full = std::process::Command::new(bin())
        .args(args)
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = stderr(&full);
    assert_eq!(full.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot write the results to standard output"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // A reader that goes away early.
    let mut child = std::process::Command::new(bin())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A size in IEC units on the command line (`--bs=4KiB`, or `--size 1MiB` with its value as
/// the next argument) gets the same one-line note as in a job file: raidlab reads it as a
/// power of 2, fio as a power of 10. `k`/`m` and names that contain a unit get none.
#[test]
fn iec_sizes_on_the_command_line_are_noted() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let system = root.join("systems/xdd2008/raid0.toml");
    let target = format!("--filename=sim:{}", system.display());
    let base = [
        "--name=4KiB",
        target.as_str(),
        "--rw=read",
        "--direct=1",
        "--output-format=json",
    ];
    let mut args = base.to_vec();
    args.extend(["--bs=4KiB", "--size", "1MiB"]);
    let out = raidlab(&args);
    let v = json(&assert_ok(&out, "iec sizes"));
    let err = stderr(&out);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(notes.len(), 2, "{err}");
    assert!(
        notes[0].starts_with("raidlab: note: --bs=4KiB: ") && notes[0].contains("4000 bytes"),
        "{err}"
    );
    assert!(
        notes[1].starts_with("raidlab: note: --size=1MiB: "),
        "{err}"
    );
    // What ran: powers of 2.
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20, "{v}");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 256, "{v}");
    let mut args = base.to_vec();
    args.extend(["--bs=4k", "--size=1m"]);
    let out = raidlab(&args);
    assert_ok(&out, "k and m");
    assert!(!stderr(&out).contains("note:"), "{}", stderr(&out));
}

/// Each job's (name, groupid, job_runtime ms, I/Os) of a run of job file `text` with
/// `target`, and the simulator's stop reason when the target is simulated.
fn jobs_of(target: &str, text: &str) -> Vec<(String, u64, u64, u64, Option<String>)> {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    std::fs::write(&job, text).unwrap();
    let out = raidlab(&[
        &format!("--filename={target}"),
        "--job",
        &job.display().to_string(),
        "--output-format=json",
    ]);
    // (A job's error makes the exit status 1, as fio's: its results are printed all the
    // same.)
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "exitall run: {code:?}: {}",
        stderr(&out)
    );
    let v = json(&stdout(&out));
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let ios = j["read"]["total_ios"].as_u64().unwrap()
                + j["write"]["total_ios"].as_u64().unwrap();
            let reason = j["raidlab"]["sim"]["stop_reason"]
                .as_str()
                .map(String::from);
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["groupid"].as_u64().unwrap(),
                j["job_runtime"].as_u64().unwrap(),
                ios,
                reason,
            )
        })
        .collect()
}

/// fio's `exitall`, checked against fio 3.33: one job's end stops the running jobs of its
/// reporting group (`exit_what=group`, the default), of its stonewall group (`stonewall`,
/// the next group then runs), or everything (`all`: later groups' jobs reported with
/// nothing done); `exitall` in any job holds for every job's end. Here a short job
/// (256 requests) ends first beside a long one (60 s, 100 IOPS) that would otherwise run
/// its full minute.
#[test]
fn exitall_stops_the_jobs_its_exit_what_names() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t").display().to_string();
    let text = |what: &str| {
        format!(
            "[global]\nioengine=null\nbs=4k\nrw=read\nsize=1m\nexit_what={what}\n\
             [short]\n\
             [mate]\ntime_based\nruntime=60\nrate_iops=100\n\
             [other]\nnew_group\ntime_based\nruntime=60\nrate_iops=100\nexitall\n\
             [later]\nstonewall\n"
        )
    };
    // `other` alone gives exitall, and `short`'s end (its exit_what) stops the others.
    // (Under `group` it would stop `mate` only, and `other` run its minute: the simulated
    // test below checks that case.)
    for what in ["stonewall", "all"] {
        let jobs = jobs_of(&f, &text(what));
        let get = |n: &str| jobs.iter().find(|j| j.0 == n).unwrap().clone();
        let (mate, other, later) = (get("mate"), get("other"), get("later"));
        // Stopped long before their minute (at 100 IOPS, a handful of requests at most).
        assert!(mate.2 < 30_000 && mate.3 < 3_000, "{what}: {jobs:?}");
        assert!(other.2 < 30_000 && other.3 < 3_000, "{what}: {jobs:?}");
        if what == "all" {
            assert_eq!(
                (later.2, later.3),
                (0, 0),
                "{what}: later not run: {jobs:?}"
            );
        } else {
            assert_eq!(later.3, 256, "{what}: later runs: {jobs:?}");
        }
    }
}

/// The simulator stops jobs under `exitall` as the engine does, at the virtual time the
/// first job ends, and says so (`stop_reason` `exitall`, `not run` after `exit_what=all`).
#[test]
fn simulated_exitall_stops_jobs_at_the_first_end() {
    let system =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../systems/xdd2008/raid5.toml");
    let target = format!("sim:{}", system.display());
    let text = |what: &str| {
        format!(
            "[global]\nbs=8k\nrw=randread\ndirect=1\niodepth=8\ntime_based\nexitall\nexit_what={what}\n\
             [short]\nruntime=1\n\
             [other]\nnew_group\nruntime=3\n\
             [later]\nstonewall\nruntime=1\n"
        )
    };
    let run = |what: &str| jobs_of(&target, &text(what));
    // group: `short`'s end stops only its own group; `other` runs its 3 s.
    let g = run("group");
    assert!(
        g[1].2 >= 3_000 && g[1].4.as_deref() == Some("runtime"),
        "{g:?}"
    );
    for what in ["stonewall", "all"] {
        let j = run(what);
        // `other` stopped within a few requests' time of `short`'s end.
        assert!(j[1].2 < j[0].2 + 100, "{what}: {j:?}");
        assert_eq!(j[1].4.as_deref(), Some("exitall"), "{what}: {j:?}");
        let later = &j[2];
        if what == "all" {
            assert_eq!((later.3, later.4.as_deref()), (0, Some("not run")), "{j:?}");
        } else {
            assert!(
                later.3 > 0 && later.4.as_deref() == Some("runtime"),
                "{j:?}"
            );
        }
    }
    // Repeats bit for bit.
    assert_eq!(run("stonewall"), run("stonewall"));
    // exitall_on_error: a job that misses its minimum rate ends with an error, and stops
    // its group only if it gives the option.
    let on_error = |opt: &str| {
        jobs_of(
            &target,
            &format!(
                "[global]\nbs=8k\nrw=randread\ndirect=1\ntime_based\nruntime=3\n\
                 [slow]\nrate_iops_min=100000\nrate_cycle=200\n{opt}\n[mate]\niodepth=8\n"
            ),
        )
    };
    let stopped = on_error("exitall_on_error");
    assert!(
        stopped[1].2 < stopped[0].2 + 100 && stopped[1].2 < 3_000,
        "{stopped:?}"
    );
    let ran = on_error("");
    assert!(ran[1].2 >= 3_000, "{ran:?}");
}

/// `prio`, `prioclass` and `nice` run a real job at those priorities (the idle class and a
/// higher nice value need no privilege) and show in its options; a value out of range is
/// one line naming the valid ones.
#[test]
fn priorities_run_and_out_of_range_values_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t").display().to_string();
    let run = |more: &[&str]| {
        let mut args = vec![
            "--name=p".to_string(),
            format!("--filename={f}"),
            "--size=256k".into(),
            "--rw=randread".into(),
            "--output-format=json".into(),
        ];
        args.extend(more.iter().map(|m| m.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        raidlab(&args)
    };
    let v = json(&assert_ok(
        &run(&["--prioclass=3", "--prio=5", "--nice=5"]),
        "idle class",
    ));
    let o = &v["jobs"][0]["job options"];
    assert_eq!(
        (
            o["prioclass"].as_str(),
            o["prio"].as_str(),
            o["nice"].as_str()
        ),
        (Some("3"), Some("5"), Some("5"))
    );
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 64);
    let err = assert_usage_error(&run(&["--nice=-21"]), "nice=-21");
    assert!(err.contains("valid: -20 to 19"), "{err}");
}

/// `ioscheduler` switches the target's block device to the named scheduler for the run and
/// back after it (a loop device of the test's own, which needs root: the test fails, never
/// skips, without); a name the device does not offer is one line listing those it does.
#[test]
fn ioscheduler_switches_the_device_and_back() {
    let (dev, _detach) = loop_device("raidlab-iosched");
    let queue = format!(
        "/sys/block/{}/queue/scheduler",
        dev.trim_start_matches("/dev/")
    );
    std::fs::write(&queue, "none").unwrap();
    let offered = std::fs::read_to_string(&queue).unwrap();
    let name = offered
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
        .find(|w| *w != "none")
        .unwrap_or_else(|| panic!("{dev} offers no scheduler but none: {offered}"))
        .to_string();
    let run = |sched: &str| {
        raidlab(&[
            "--name=s",
            &format!("--filename={dev}"),
            "--size=1m",
            "--rw=randwrite",
            "--bs=4k",
            "--direct=1",
            "--force",
            &format!("--ioscheduler={sched}"),
        ])
    };
    let out = run(&name);
    assert_ok(&out, "a run with ioscheduler");
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "runs the {name} I/O scheduler for the jobs that ask (was none;"
        )),
        "{err}"
    );
    let after = std::fs::read_to_string(&queue).unwrap();
    assert!(after.contains("[none]"), "switched back: {after}");
    let err = assert_usage_error(&run("nosuch"), "ioscheduler=nosuch");
    assert!(
        err.contains("offers no such I/O scheduler (valid: none, "),
        "{err}"
    );
}

/// A loop device over an 8 MiB file in /var/tmp (a disk filesystem), detached (and the file
/// removed) when the second value is dropped. Needs root: the test fails, never skips,
/// without.
fn loop_device(prefix: &str) -> (String, impl Drop) {
    assert!(
        is_root(),
        "this test attaches a loop device and must run as root"
    );
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .unwrap();
    let backing = dir.path().join("disk");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["--find", "--show", "--direct-io=on"])
        .arg(&backing)
        .output()
        .expect("losetup (util-linux) must be installed");
    assert!(out.status.success(), "losetup: {}", stderr(&out));
    let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
    struct Detach(String, #[allow(dead_code)] tempfile::TempDir);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Command::new("losetup").args(["-d", &self.0]).status();
        }
    }
    (dev.clone(), Detach(dev, dir))
}

/// A block device the kernel holds for another user (here: this test's exclusive open, as
/// a mount or md would hold it) is not written, `--force` or not, unless the job gives
/// `allow_mounted_write`; nor made an array member. Reading it is allowed.
#[test]
fn a_device_held_by_another_user_is_not_written() {
    use std::os::unix::fs::OpenOptionsExt;
    let (dev, _detach) = loop_device("raidlab-held");
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&dev)
        .unwrap();
    let run = |rw: &str, more: &[&str]| {
        let mut args = vec![
            "--name=w".to_string(),
            format!("--filename={dev}"),
            format!("--rw={rw}"),
            "--size=1m".into(),
            "--force".into(),
        ];
        args.extend(more.iter().map(|m| m.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        raidlab(&args)
    };
    let err = assert_usage_error(&run("write", &[]), "write to a held device");
    assert!(
        err.contains(&format!(
            "refusing to write to {dev}: it is held by the kernel for another user"
        )),
        "{err}"
    );
    assert_ok(&run("read", &[]), "read of a held device");
    assert_ok(
        &run("write", &["--allow_mounted_write=1"]),
        "allow_mounted_write",
    );
    let other = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
    let out = Command::new(bin())
        .args([
            "array",
            "create",
            "--level=raid1",
            "--size=4m",
            "--force",
            &dev,
        ])
        .arg(other.path())
        .output()
        .unwrap();
    let err = assert_usage_error(&out, "array member held");
    assert!(
        err.contains("it cannot be a member, even with --force"),
        "{err}"
    );
    drop(held);
    assert_ok(&run("write", &[]), "written once let go");
}

/// io_uring's own options on a job that runs without a ring are noted (fio refuses them
/// there); on an io_uring job they are not.
#[test]
fn io_uring_options_without_a_ring_are_noted() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t").display().to_string();
    let run = |engine: &str| {
        raidlab(&[
            "--name=u",
            &format!("--filename={f}"),
            "--size=256k",
            "--rw=randread",
            &format!("--ioengine={engine}"),
            "--fixedbufs=0",
        ])
    };
    let out = run("psync");
    assert_ok(&out, "psync with fixedbufs");
    let err = stderr(&out);
    assert!(
        err.contains("raidlab: note: job 'u': fixedbufs, registerfiles, sqthread_poll, sqthread_poll_cpu and hipri are io_uring's, and it runs without a ring (psync): they change nothing"),
        "{err}"
    );
    let out = run("io_uring");
    assert_ok(&out, "io_uring with fixedbufs");
    assert!(!stderr(&out).contains("io_uring's"), "{}", stderr(&out));
}

/// fio's exec_prerun and exec_postrun: shell commands around a real job, their output saved
/// as fio saves it; a prerun that fails ends the job with an error saying so, and the job
/// does no I/O; a simulated job refuses them.
#[test]
fn exec_prerun_and_postrun_run_around_the_job() {
    let d = scratch("raidlab-exec-");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--name=j",
            "--filename=data",
            "--size=64k",
            "--output-format=json",
        ];
        args.extend_from_slice(extra);
        raidlab_in(d.path(), &args)
    };
    let o = run(&[
        "--exec_prerun=echo \"before $((1+1))\"",
        "--exec_postrun=ls data >&2",
    ]);
    let v = json(&assert_ok(&o, "hooks"));
    assert_eq!(v["jobs"][0]["write"]["io_bytes"].as_u64(), Some(0));
    assert_eq!(v["jobs"][0]["read"]["io_bytes"].as_u64(), Some(65536));
    let read = |f: &str| std::fs::read_to_string(d.path().join(f)).unwrap();
    assert_eq!(read("j.prerun.txt"), "before 2\n");
    assert_eq!(read("j.postrun.txt"), "data\n");

    std::fs::remove_file(d.path().join("j.postrun.txt")).unwrap();
    let o = run(&["--exec_prerun=echo no; exit 3", "--exec_postrun=true"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_one_line(&err, "failed prerun");
    assert!(
        err.contains("exec_prerun 'echo no; exit 3' exited with 3 (its output: j.prerun.txt)"),
        "{err}"
    );
    let v = json(&stdout(&o));
    assert_eq!(v["jobs"][0]["read"]["io_bytes"].as_u64(), Some(0));
    assert_eq!(read("j.prerun.txt"), "no\n");
    assert!(!d.path().join("j.postrun.txt").exists());

    let sim = format!(
        "--filename=sim:{}/../../systems/xdd2008/raid5.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let err = assert_usage_error(
        &raidlab(&["--name=j", &sim, "--size=64k", "--exec_postrun=true"]),
        "sim",
    );
    assert!(
        err.contains("exec_postrun runs a command on the host"),
        "{err}"
    );
}

/// The files exec_prerun and exec_postrun write are held to the rule of every other output:
/// one holding data raidlab did not write is refused before the job or the command runs,
/// `--force` replaces it, and what raidlab wrote there is its own to replace next time.
#[test]
fn exec_outputs_do_not_replace_data() {
    let d = scratch("raidlab-exec-force-");
    let path = |f: &str| d.path().join(f);
    let run = |name: &str, hook: &str, force: bool| {
        let mut args = vec![
            format!("--name={name}"),
            "--filename=f1".to_string(),
            "--rw=read".to_string(),
            "--bs=4k".to_string(),
            "--size=64k".to_string(),
            format!("--{hook}=touch ran; echo hi"),
        ];
        if force {
            args.push("--force".to_string());
        }
        raidlab_in(d.path(), &args)
    };
    for (name, hook, file) in [
        ("a", "exec_prerun", "a.prerun.txt"),
        ("b", "exec_postrun", "b.postrun.txt"),
    ] {
        std::fs::write(path(file), "precious\n").unwrap();
        let err = assert_usage_error(&run(name, hook, false), hook);
        assert!(
            err.contains(&format!(
                "{hook} output {file}: it holds 9 bytes raidlab did not write (use --force"
            )),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(path(file)).unwrap(), "precious\n");
        // (Refused before anything ran: no file laid out, no command run.)
        assert!(!path("f1").exists() && !path("ran").exists(), "{hook}");

        assert_ok(&run(name, hook, true), "forced");
        assert_eq!(std::fs::read_to_string(path(file)).unwrap(), "hi\n");
        std::fs::remove_file(path("ran")).unwrap();
        assert_ok(&run(name, hook, false), "raidlab's own output again");
        assert!(path("ran").exists(), "{hook} ran again");
        std::fs::remove_file(path("ran")).unwrap();
        std::fs::remove_file(path("f1")).unwrap();
    }
}

/// fio's create_only: the job's file is laid out and nothing else runs; a later job reads it as raidlab's own; a simulated job refuses it.
#[test]
fn create_only_lays_out_and_runs_nothing() {
    let d = scratch("raidlab-create-");
    let f = d.path().join("data");
    let f = f.to_str().unwrap();
    let o = raidlab(&[
        "--name=c",
        &format!("--filename={f}"),
        "--size=1m",
        "--rw=randread",
        "--create_only=1",
        &format!("--exec_prerun=touch {}/ran", d.path().display()),
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&o, "create_only"));
    assert_eq!(v["jobs"][0]["read"]["io_bytes"].as_u64(), Some(0));
    assert_eq!(std::fs::metadata(f).unwrap().len(), 1 << 20);
    // (Nothing else ran: not the prerun either.)
    assert!(!d.path().join("ran").exists());
    let o = raidlab(&[
        "--name=r",
        &format!("--filename={f}"),
        "--size=1m",
        "--rw=randread",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&o, "read after"));
    assert_eq!(v["jobs"][0]["read"]["io_bytes"].as_u64(), Some(1 << 20));
    let sim = format!(
        "--filename=sim:{}/../../systems/xdd2008/raid5.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let err = assert_usage_error(
        &raidlab(&["--name=j", &sim, "--size=64k", "--create_only=1"]),
        "sim",
    );
    assert!(err.contains("create_only lays a job's files out"), "{err}");
}

/// fio's `stats=0`: the job runs (a preconditioning write that lays the data down) and is
/// left out of every output and its group's lines, against a file and a simulated LUN alike;
/// a run whose every job says so is refused in one line.
#[test]
fn stats_0_runs_a_job_and_leaves_it_out() {
    let dir = scratch("raidlab-stats-");
    let f = dir.path().join("f").display().to_string();
    let sim = format!("sim:{}", system("xdd2008/raid5.toml"));
    for target in [f.as_str(), sim.as_str()] {
        let job = dir.path().join("j.fio");
        std::fs::write(
            &job,
            format!(
                "[global]\nfilename={target}\nsize=1m\nbs=64k\n[precondition]\nrw=write\nstats=0\n[measure]\nstonewall\nrw=read\n"
            ),
        )
        .unwrap();
        let job = job.display().to_string();
        let v = json(&assert_ok(
            &raidlab(&["--job", &job, "--output-format=json"]),
            "json",
        ));
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "{target}: {jobs:?}");
        assert_eq!(jobs[0]["jobname"], "measure");
        assert_eq!(jobs[0]["read"]["io_bytes"], 1 << 20);
        let text = assert_ok(&raidlab(&["--job", &job]), "text");
        assert!(
            !text.contains("precondition") && !text.contains("WRITE:"),
            "{text}"
        );
        assert!(text.contains("measure: (groupid=1"), "{text}");
        if target == f {
            // It ran: the file holds what it wrote, not the zeros a read-only layout gives.
            let data = std::fs::read(&f).unwrap();
            assert!(data.iter().filter(|&&b| b != 0).count() > data.len() / 2);
        }
    }
    let err = assert_usage_error(
        &raidlab(&[
            &format!("--filename={f}"),
            "--name=a",
            "--size=1m",
            "--stats=0",
        ]),
        "every job stats=0",
    );
    assert!(err.contains("every job has stats=0"), "{err}");
}

/// fio's kb_base=1000 from the command line, before the sizes: `size=1m` and `bs=4k` are
/// 1 000 000 and 4000 bytes (fio 3.33 wrote 250 blocks, 1000000 bytes), and the text puts
/// decimal units first (`BW=… MB/s (… MiB/s)`, `io=…kB (…KiB)`).
#[test]
fn kb_base_1000_reads_decimal_sizes_and_shows_decimal_first() {
    let dir = scratch("raidlab-kb-");
    let f = format!("--filename={}", dir.path().join("f").display());
    let args = [
        "--kb_base=1000",
        &f,
        "--name=w",
        "--rw=write",
        "--size=1m",
        "--bs=4k",
    ];
    let mut with_json = args.to_vec();
    with_json.push("--output-format=json");
    let v = json(&assert_ok(&raidlab(&with_json), "json"));
    let w = &v["jobs"][0]["write"];
    assert_eq!(
        (w["io_bytes"].as_u64(), w["total_ios"].as_u64()),
        (Some(1_000_000), Some(250))
    );
    assert_eq!(v["jobs"][0]["job options"]["kb_base"], "1000");
    let text = assert_ok(&raidlab(&args), "text");
    let line = text
        .lines()
        .find(|l| l.starts_with("  write: IOPS="))
        .unwrap();
    assert!(
        line.contains("MB/s (") && line.contains("MiB/s)(1000kB/"),
        "{line}"
    );
    let group = text
        .lines()
        .find(|l| l.starts_with("  WRITE: bw="))
        .unwrap();
    assert!(group.contains("io=1000kB (977KiB)"), "{group}");
}

/// fio's `file_append`: the job writes after the file's end (its offset is the file's size
/// as the run starts), leaving what the file held as it was; a file holding data still needs
/// --force, as any file raidlab writes does. A simulated LUN has no end to append at.
#[test]
fn file_append_writes_after_the_end_of_the_file() {
    let dir = scratch("raidlab-append-");
    let path = dir.path().join("f");
    let held: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + i / 4096) as u8).collect();
    std::fs::write(&path, &held).unwrap();
    let f = format!("--filename={}", path.display());
    let args = [
        &f,
        "--name=a",
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--file_append=1",
    ];
    let refused = raidlab(&args);
    assert!(!refused.status.success() && stderr(&refused).contains("--force"));
    let mut forced = args.to_vec();
    forced.extend(["--force", "--output-format=json"]);
    let v = json(&assert_ok(&raidlab(&forced), "append"));
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 1 << 20);
    let now = std::fs::read(&path).unwrap();
    assert_eq!(now.len(), 2 << 20);
    assert!(now[..1 << 20] == held[..], "the file's first MiB changed");
    assert!(now[1 << 20..].iter().any(|&b| b != 0));

    // Two files of different sizes: one job has one offset.
    let other = dir.path().join("g");
    std::fs::write(&other, [1u8; 4096]).unwrap();
    let both = format!("--filename={}:{}", path.display(), other.display());
    let err = assert_usage_error(
        &raidlab(&[
            &both,
            "--name=a",
            "--rw=write",
            "--size=1m",
            "--file_append=1",
        ]),
        "file_append over two sizes",
    );
    assert!(
        err.contains("file_append over files of different sizes"),
        "{err}"
    );

    let sim = format!("--filename=sim:{}", system("xdd2008/raid5.toml"));
    let err = assert_usage_error(
        &raidlab(&[
            &sim,
            "--name=a",
            "--rw=write",
            "--size=1m",
            "--file_append=1",
        ]),
        "file_append on a LUN",
    );
    assert!(
        err.contains("file_append writes after a file's end"),
        "{err}"
    );
}

/// fio's `verify_only`: a write job run again with it writes nothing and reads back, block by
/// block, what its first run wrote (the same requests: a random subset with `norandommap`),
/// timed as reads. A block changed since is a mismatch (exit 1); another seed's blocks, never
/// written, are mismatches too. Through a RAID 5 array with a member failed since the writes,
/// everything checks out. A job that cannot be checked this way, or a target with nothing
/// written there, is refused in one line, and nothing is laid out.
#[test]
fn verify_only_checks_what_the_job_wrote_without_writing() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let path = dir.path().join("f");
    let f = format!("--filename={}", path.display());
    let job = [
        f.as_str(),
        "--name=v",
        "--rw=randwrite",
        "--bs=16k",
        "--size=4m",
        "--norandommap",
        "--number_ios=100",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let run = |extra: &[&str]| {
        let mut a = job.to_vec();
        a.extend_from_slice(extra);
        raidlab(&a)
    };
    let v = json(&assert_ok(&run(&[]), "the writes"));
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 100);
    let written = std::fs::read(&path).unwrap();
    // The blocks carrying a verify header: the random subset written.
    let headed: Vec<usize> = (0..written.len())
        .step_by(16384)
        .filter(|&k| written[k..k + 8] == *b"RLVERIF1")
        .collect();
    assert!(
        headed.len() > 20 && headed.len() < 100,
        "{} blocks written",
        headed.len()
    );

    let v = json(&assert_ok(&run(&["--verify_only"]), "verify_only"));
    let j = &v["jobs"][0];
    assert_eq!(j["read"]["total_ios"], 100, "{j}");
    assert_eq!(j["read"]["io_bytes"], 100 * 16384, "{j}");
    assert_eq!(j["write"]["total_ios"], 0, "{j}");
    assert_eq!(j["raidlab"]["verify"]["blocks_checked"], 100, "{j}");
    assert_eq!(j["raidlab"]["verify"]["mismatches"], 0, "{j}");
    assert_eq!(j["job options"]["verify_only"], "1");
    assert_eq!(std::fs::read(&path).unwrap(), written, "verify_only wrote");

    // One written block changed: found, named, exit 1.
    let k = headed[headed.len() / 2];
    let mut changed = written.clone();
    changed[k + 5000] ^= 0xff;
    std::fs::write(&path, &changed).unwrap();
    let out = run(&["--verify_only"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&stdout(&out));
    let verify = &v["jobs"][0]["raidlab"]["verify"];
    assert!(verify["mismatches"].as_u64().unwrap() >= 1, "{verify}");
    assert!(
        verify["first_mismatch"]
            .as_str()
            .unwrap()
            .contains(&format!("offset {k}")),
        "{verify}"
    );
    std::fs::write(&path, &written).unwrap();
    // Another seed draws other blocks, most never written.
    let out = run(&["--verify_only", "--randseed=99"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&stdout(&out));
    assert!(
        v["jobs"][0]["raidlab"]["verify"]["mismatches"]
            .as_u64()
            .unwrap()
            > 20
    );

    // Refused, one line each, before anything is laid out.
    for (extra, what) in [
        (vec!["--verify=0"], "it checks the headers"),
        (vec!["--rw=randrw"], "rw=randrw reads or trims"),
        (vec!["--time_based", "--runtime=1s"], "a time-based job"),
        (vec!["--size=8m"], "ends at byte 4194304"),
    ] {
        let mut a = extra.clone();
        a.push("--verify_only");
        let err = assert_usage_error(&run(&a), &format!("verify_only with {extra:?}"));
        assert!(err.contains(what), "{extra:?}: {err}");
    }
    let missing = dir.path().join("missing");
    let err = assert_usage_error(
        &raidlab(&[
            &format!("--filename={}", missing.display()),
            "--name=v",
            "--rw=write",
            "--size=1m",
            "--verify=crc32c",
            "--verify_only",
        ]),
        "verify_only on a missing file",
    );
    assert!(err.contains("does not exist"), "{err}");
    assert!(!missing.exists(), "a missing file was laid out");

    // Through an array: written whole, a member failed since, checked degraded.
    let ms: Vec<String> = (0..4)
        .map(|i| dir.path().join(format!("m{i}")).display().to_string())
        .collect();
    let list = ms.join(",");
    let array = |args: &[&str]| {
        let out = Command::new(bin())
            .arg("array")
            .args(args)
            .output()
            .unwrap();
        assert_ok(&out, &format!("array {args:?}"));
    };
    let mut create = vec!["create", "--level", "5", "--chunk", "16k", "--size", "4m"];
    create.extend(ms.iter().map(String::as_str));
    array(&create);
    let target = format!("--filename=array:{list}");
    let ajob = |extra: &[&str]| {
        let mut a = vec![
            target.as_str(),
            "--name=a",
            "--rw=randwrite",
            "--bs=16k",
            "--size=6m",
            "--iodepth=8",
            "--verify=crc32c",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        json(&assert_ok(&raidlab(&a), &format!("array job {extra:?}")))
    };
    ajob(&["--do_verify=0"]);
    array(&["fail", &list, &ms[2]]);
    let v = ajob(&["--verify_only"]);
    let verify = &v["jobs"][0]["raidlab"]["verify"];
    assert_eq!(verify["blocks_checked"], 384, "{verify}");
    assert_eq!(verify["mismatches"], 0, "{verify}");
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 0);
}

/// fio's `verify_backlog`: a job checks its writes as it goes, every N blocks written, so a
/// time-based job (which has no read-back at its end) checks all but its last few blocks;
/// the reads are counted as the job's, as fio counts them. `verify_backlog_batch` reads
/// back that many of each N, the oldest first, round again when it is more; `do_verify=0`
/// checks nothing, as in fio. Refused in one line where there is nothing to check; off,
/// with a note, where another job of the group writes the same blocks.
#[test]
fn verify_backlog_checks_writes_as_the_job_goes() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = format!("--filename={}", dir.path().join("f").display());
    let run = |extra: &[&str]| {
        let mut a = vec![
            f.as_str(),
            "--name=b",
            "--rw=randwrite",
            "--bs=4k",
            "--size=1m",
            "--verify=crc32c",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        raidlab(&a)
    };
    let counts = |extra: &[&str]| -> (u64, u64, u64) {
        let v = json(&assert_ok(&run(extra), &format!("{extra:?}")));
        let j = &v["jobs"][0];
        (
            j["write"]["total_ios"].as_u64().unwrap(),
            j["read"]["total_ios"].as_u64().unwrap(),
            j["raidlab"]["verify"]["blocks_checked"]
                .as_u64()
                .unwrap_or(0),
        )
    };
    // Time-based: no read-back at the end, so every check is the backlog's.
    let (writes, reads, checked) = counts(&[
        "--verify_backlog=64",
        "--time_based",
        "--runtime=300ms",
        "--iodepth=4",
    ]);
    assert_eq!(reads, checked, "the read-backs are the job's reads");
    assert!(writes > 256, "{writes} writes");
    assert!(
        checked <= writes && writes - checked < 64 + 4,
        "{checked} of {writes} checked"
    );
    let (_, _, unchecked) = counts(&["--time_based", "--runtime=100ms"]);
    assert_eq!(
        unchecked, 0,
        "a time-based job without the backlog checks nothing"
    );
    // 256 writes at depth 1: four checks of 16, or of 100 (the 64 round again); each
    // check clears what it covered, so the end's read-back has nothing left.
    assert_eq!(
        counts(&["--verify_backlog=64", "--verify_backlog_batch=16"]),
        (256, 64, 64)
    );
    assert_eq!(
        counts(&["--verify_backlog=64", "--verify_backlog_batch=100"]),
        (256, 400, 400)
    );
    assert_eq!(
        counts(&["--verify_backlog=64", "--do_verify=0"]),
        (256, 0, 0),
        "do_verify=0 checks nothing"
    );
    let v = json(&assert_ok(&run(&["--verify_backlog=64"]), "echo"));
    assert_eq!(v["jobs"][0]["job options"]["verify_backlog"], "64");

    for (extra, what) in [
        (vec!["--verify=0"], "it checks blocks written with verify"),
        (vec!["--rw=randread"], "the job writes nothing"),
        (vec!["--verify_only"], "verify_only writes nothing"),
        (
            vec!["--verify_backlog=0", "--verify_backlog_batch=8"],
            "needs verify_backlog",
        ),
    ] {
        let mut a = vec!["--verify_backlog=64"];
        a.extend(extra.iter().copied());
        let err = assert_usage_error(&run(&a), &format!("verify_backlog with {extra:?}"));
        assert!(err.contains(what), "{extra:?}: {err}");
    }

    // Two instances writing the same blocks at once: no check could be trusted.
    let out = run(&[
        "--verify_backlog=16",
        "--numjobs=2",
        "--time_based",
        "--runtime=100ms",
    ]);
    let v = json(&assert_ok(&out, "two writers"));
    assert!(
        stderr(&out).contains("verify does not read back what it wrote"),
        "{}",
        stderr(&out)
    );
    for j in v["jobs"].as_array().unwrap() {
        assert_eq!(
            j["raidlab"]["verify"]["blocks_checked"]
                .as_u64()
                .unwrap_or(0),
            0,
            "{j}"
        );
    }
}

/// fio's `allow_file_create=0`: a job whose file does not exist is refused in one line (as
/// fio refuses it), the file not made; an existing file runs as usual.
#[test]
fn allow_file_create_0_refuses_a_missing_file() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let path = dir.path().join("typo");
    let f = format!("--filename={}", path.display());
    let job = [
        f.as_str(),
        "--name=w",
        "--rw=write",
        "--size=1m",
        "--allow_file_create=0",
    ];
    let err = assert_usage_error(&raidlab(&job), "a missing file");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!path.exists(), "the file was made");
    require_tool("fio", "fio");
    let fio = Command::new("fio")
        .args(job.iter().chain(&["--output-format=json"]))
        .output()
        .unwrap();
    assert!(!fio.status.success() && !path.exists(), "fio makes it too?");

    std::fs::write(&path, vec![0u8; 1 << 20]).unwrap();
    let mut a = job.to_vec();
    a.extend(["--force", "--output-format=json"]);
    let v = json(&assert_ok(&raidlab(&a), "an existing file"));
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 1 << 20);
    assert_eq!(v["jobs"][0]["job options"]["allow_file_create"], "0");
}

/// fio's run-wide flags for checking and guarding job files: `--readonly` refuses any job
/// that writes or trims and any file that would be laid out (so a disk holding data is only
/// read; fio refuses the writer too), `--parse-only` checks the jobs and runs nothing (no
/// file made, no output), `--section` runs only the named job file sections.
#[test]
fn readonly_parse_only_and_section_guard_a_job_file() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let data = dir.path().join("data");
    let bytes: Vec<u8> = (0..1u32 << 20).map(|k| (k % 251) as u8).collect();
    std::fs::write(&data, &bytes).unwrap();
    let f = format!("--filename={}", data.display());
    let v = json(&assert_ok(
        &raidlab(&[
            "--readonly",
            &f,
            "--name=r",
            "--rw=randread",
            "--output-format=json",
        ]),
        "a read under --readonly",
    ));
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20);
    for (job, what) in [
        (vec!["--rw=write", "--force"], "writes or trims (rw=write)"),
        (
            vec!["--rw=randtrim", "--force"],
            "writes or trims (rw=randtrim)",
        ),
        (vec!["--rw=read", "--create_only=1"], "lays its files out"),
        (vec!["--rw=read", "--size=2m"], "so it would be laid out"),
    ] {
        let mut a = vec!["--readonly", f.as_str(), "--name=j"];
        a.extend(job.iter().copied());
        let err = assert_usage_error(&raidlab(&a), &format!("{job:?}"));
        assert!(err.contains(what), "{job:?}: {err}");
    }
    assert_eq!(
        std::fs::read(&data).unwrap(),
        bytes,
        "--readonly changed the file"
    );
    let missing = dir.path().join("missing");
    let m = format!("--filename={}", missing.display());
    let err = assert_usage_error(
        &raidlab(&["--readonly", &m, "--name=r", "--rw=read", "--size=1m"]),
        "a missing file",
    );
    assert!(err.contains("holds 0 bytes"), "{err}");
    assert!(!missing.exists());
    // A trace's writes are known once it is read: refused then.
    let trace = dir.path().join("w.log");
    std::fs::write(
        &trace,
        format!(
            "fio version 2 iolog\n{0} add\n{0} open\n{0} write 0 4096\n{0} close\n",
            data.display()
        ),
    )
    .unwrap();
    let t = format!("--read_iolog={}", trace.display());
    let err = assert_usage_error(&raidlab(&["--readonly", "--name=t", &t]), "a trace");
    assert!(err.contains("job 't' writes"), "{err}");
    assert_eq!(std::fs::read(&data).unwrap(), bytes);
    let err = assert_usage_error(&raidlab(&["--readonly"]), "the embedded default");
    assert!(err.contains("the embedded default writes"), "{err}");
    require_tool("fio", "fio");
    let fio = Command::new("fio")
        .args(["--readonly", &f, "--name=w", "--rw=write", "--size=64k"])
        .output()
        .unwrap();
    assert!(!fio.status.success(), "fio wrote under --readonly");

    let jobs = dir.path().join("jobs.fio");
    std::fs::write(
        &jobs,
        format!(
            "[global]\nfilename={}\nsize=1m\n[a]\nrw=read\n[b]\nrw=randread\n[c]\nrw=write\n",
            missing.display()
        ),
    )
    .unwrap();
    let jf = jobs.display().to_string();
    let out = raidlab(&["--parse-only", "--job", &jf]);
    assert_ok(&out, "--parse-only");
    assert!(
        stdout(&out).is_empty() && !missing.exists(),
        "{}",
        stdout(&out)
    );
    let bad = dir.path().join("bad.fio");
    std::fs::write(&bad, "[x]\nrw=sideways\n").unwrap();
    let err = assert_usage_error(
        &raidlab(&["--parse-only", "--job", &bad.display().to_string()]),
        "--parse-only of a bad file",
    );
    assert!(err.contains("bad.fio:2"), "{err}");

    let names = |args: &[&str]| -> Vec<String> {
        let mut a = args.to_vec();
        a.extend(["--job", &jf, "--output-format=json"]);
        let v = json(&assert_ok(&raidlab(&a), &format!("{args:?}")));
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["jobname"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&["--section", "b", "--section=a"]), ["a", "b"]);
    std::fs::remove_file(&missing).unwrap();
    let err = assert_usage_error(&raidlab(&["--section=d", "--job", &jf]), "no section d");
    assert!(err.contains("valid: a, b, c"), "{err}");
    // As fio, the sections not picked are skipped whole: their ${VAR}s need not be set
    // (fio's example job files leave the variables of the sections not run unset).
    let vars = dir.path().join("vars.fio");
    std::fs::write(
        &vars,
        "[global]\nsize=64k\n[x]\nrw=${RAIDLAB_NEVER_SET}\n[y]\nrw=read\n",
    )
    .unwrap();
    let v = vars.display().to_string();
    assert_ok(
        &raidlab(&["--parse-only", "--section=y", &v]),
        "--section=y",
    );
    let err = assert_usage_error(&raidlab(&["--parse-only", &v]), "every section");
    assert!(
        err.contains("vars.fio:4: ${RAIDLAB_NEVER_SET} is not set"),
        "{err}"
    );
    let err = assert_usage_error(&raidlab(&["--readonly", "--job", &jf]), "c writes");
    assert!(err.contains("job 'c'"), "{err}");
}

/// fio's `--eta=always|never|auto`: the progress line on (even when stderr is not a
/// terminal, as here), off, or as raidlab decides; anything else is one line.
#[test]
fn eta_is_fios_name_for_the_progress_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", dir.path().join("e").display());
    let run = |eta: &str| {
        raidlab(&[
            "--name=e",
            &f,
            "--rw=read",
            "--size=1m",
            "--ioengine=null",
            // (Long enough for the line to be drawn: a job done before it is due has none.)
            "--time_based",
            "--runtime=700ms",
            eta,
            "--output-format=terse",
        ])
    };
    let always = run("--eta=always");
    assert_ok(&always, "--eta=always");
    assert!(stderr(&always).contains('%'), "{}", stderr(&always));
    for quiet in ["--eta=never", "--eta=auto"] {
        let o = run(quiet);
        assert_ok(&o, quiet);
        assert!(!stderr(&o).contains('%'), "{quiet}: {}", stderr(&o));
    }
    let err = assert_usage_error(&run("--eta=sometimes"), "--eta=sometimes");
    assert!(err.contains("valid: always, never or auto"), "{err}");
}

/// A job with no target writes its files in the working folder, named as fio names them
/// (`JOB.N.0`), and `timeout` is fio's other name for `runtime`: fio's tiobench-style job
/// file runs as it is.
#[test]
fn a_job_without_a_target_uses_the_working_folder_as_fios_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.fio"),
        "[global]\nsize=64k\nbsrange=4k-4k\ntimeout=60\nnumjobs=2\nioengine=psync\n\
         [f1]\nrw=write\n[f2]\nstonewall\nrw=read\n",
    )
    .unwrap();
    let o = raidlab_in(
        dir.path(),
        &["--job", "t.fio", "--output-format=json", "--no-progress"],
    );
    let v = json(&assert_ok(&o, "a job file with no filename"));
    let mut made: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "t.fio")
        .collect();
    made.sort();
    assert_eq!(made, ["f1.0.0", "f1.1.0", "f2.0.0", "f2.1.0"]);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    for j in jobs {
        assert_eq!(j["job options"]["runtime"], "60s", "{j}");
        let moved =
            j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap();
        assert_eq!(moved, 64 << 10, "{j}");
    }
}

/// fio's file-creation options run: `create_fsync=0` lays a file out without flushing it
/// (and the JSON's job options say so), `create_serialize` is taken, as fio's example job
/// files give them; a value neither 0 nor 1 is refused in one line.
#[test]
fn create_options_are_taken_as_fios() {
    let dir = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", dir.path().join("c").display());
    let run = |more: &[&str]| {
        let mut a = vec![
            "--name=c",
            f.as_str(),
            "--rw=read",
            "--size=1m",
            "--ioengine=psync",
            "--output-format=json",
        ];
        a.extend_from_slice(more);
        raidlab(&a)
    };
    let o = run(&["--create_fsync=0", "--create_serialize=0"]);
    let v = json(&assert_ok(&o, "create_fsync=0"));
    assert_eq!(v["jobs"][0]["job options"]["create_fsync"], "0");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20);
    assert_eq!(
        std::fs::metadata(dir.path().join("c")).unwrap().len(),
        1 << 20
    );
    let err = assert_usage_error(&run(&["--create_fsync=2"]), "create_fsync=2");
    assert!(err.contains("not a boolean"), "{err}");
}

/// fio's wait_for: a job starts once the job it names has ended, in the same group. A
/// reader that checks what a slow writer wrote finds every block written when it waits for
/// the writer (without wait_for it reads blocks the writer has not reached: checked by
/// hand, 64 mismatches); a name no job before it has is refused in one line.
#[test]
fn wait_for_starts_a_job_once_the_one_it_names_has_ended() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w");
    let job = |waits: &str| {
        format!(
            "[global]\nfilename={}\nsize=4m\nbs=64k\nioengine=psync\n\
             [a]\nrw=write\nverify=crc32c\ndo_verify=0\nrate=8m\n\
             [b]\n{waits}\nrw=read\nverify=crc32c\n",
            file.display()
        )
    };
    let path = dir.path().join("w.fio");
    std::fs::write(&path, job("wait_for=a")).unwrap();
    let p = path.to_str().unwrap();
    let o = raidlab(&["--job", p, "--force", "--output-format=json"]);
    let v = json(&assert_ok(&o, "wait_for=a"));
    let b = &v["jobs"][1];
    assert_eq!(b["jobname"], "b");
    assert_eq!(b["job options"]["wait_for"], "a");
    assert_eq!(b["read"]["io_bytes"], 4 << 20);
    assert_eq!(b["raidlab"]["verify"]["blocks_checked"], 64);
    assert_eq!(b["raidlab"]["verify"]["mismatches"], 0);
    std::fs::write(&path, job("wait_for=c")).unwrap();
    let err = assert_usage_error(&raidlab(&["--job", p, "--force"]), "wait_for=c");
    assert!(
        err.contains("wait_for=c names no job defined before it (valid: a)"),
        "{err}"
    );
}

/// fio's flow: jobs of one flow_id keep the requests they issue in proportion to their
/// weights (3:1 here, where alone, each thinking 500 µs after a request, they would be
/// even), a job of another flow runs as it would; flow_sleep makes one that is ahead sleep
/// between looks, the proportion the same. (The think time keeps each job's count near
/// 2000 a second, so the few milliseconds between the job threads' starts, on a loaded
/// machine, move it little: an unpaced null job issues millions a second.)
#[test]
fn jobs_of_a_flow_keep_their_requests_in_proportion() {
    let dir = tempfile::tempdir().unwrap();
    let run = |sleep: &str| {
        let path = dir.path().join("f.fio");
        std::fs::write(
            &path,
            format!(
                "[global]\nioengine=null\nfilename={}\nsize=1g\nbs=4k\nrw=randread\n\
                 thinktime=500\ntime_based\nruntime=1s\nflow_id=1\n{sleep}\n\
                 [a]\nflow=3\n[b]\nflow=1\n[c]\nflow_id=2\nflow=1\n",
                dir.path().join("n").display()
            ),
        )
        .unwrap();
        let v = json(&assert_ok(
            &raidlab(&[path.to_str().unwrap(), "--output-format=json"]),
            "flow",
        ));
        let ios = |k: usize| v["jobs"][k]["read"]["total_ios"].as_u64().unwrap() as f64;
        (ios(0), ios(1), ios(2))
    };
    for sleep in ["", "flow_sleep=50"] {
        let (a, b, c) = run(sleep);
        let ratio = a / b;
        assert!((2.6..3.4).contains(&ratio), "{sleep}: a {a}, b {b}");
        assert!(c > 2.5 * b, "{sleep}: c {c} held back with b {b}");
    }
}

/// fio's verify_dump: a block that fails its check is written to the working folder as
/// `FILE.OFFSET.received`, with what it should hold as `FILE.OFFSET.expected` (its header's
/// write regenerated); a block that passes is not.
#[test]
fn verify_dump_writes_what_was_read_and_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| raidlab_in(dir.path(), args);
    let common = [
        "--name=v",
        "--filename=d",
        "--size=64k",
        "--bs=4k",
        "--ioengine=psync",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let mut w = common.to_vec();
    w.extend(["--rw=write", "--do_verify=0"]);
    assert_ok(&run(&w), "write with verify");
    // One byte of the block at 8 KiB changed behind the job's back.
    let path = dir.path().join("d");
    let mut data = std::fs::read(&path).unwrap();
    let good = data[8192..12288].to_vec();
    data[8192 + 100] ^= 0xff;
    std::fs::write(&path, &data).unwrap();
    let mut r = common.to_vec();
    r.extend(["--rw=read", "--verify_dump=1"]);
    let o = run(&r);
    assert!(!o.status.success(), "the mismatch fails the job");
    let received = std::fs::read(dir.path().join("d.8192.received")).unwrap();
    let expected = std::fs::read(dir.path().join("d.8192.expected")).unwrap();
    assert_eq!(received, &data[8192..12288]);
    assert_eq!(expected, good);
    let dumped: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".received"))
        .collect();
    assert_eq!(dumped, ["d.8192.received"], "only the failed block");
}

/// The jobs of a stonewall group start together, once every one is set up: here job b's
/// prerun command takes a second, and job a, spawned first, still starts with b (their
/// logs' first lines, on the wall clock, within a few milliseconds rather than a second
/// apart).
#[test]
fn the_jobs_of_a_group_start_together_once_all_are_set_up() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("g.fio"),
        "[global]\nioengine=null\nfilename=n\nsize=1g\nbs=4k\nrw=randread\nrate_iops=1000\n\
         time_based\nruntime=500ms\nwrite_iops_log=t\nlog_avg_msec=50\nlog_unix_epoch=1\n\
         [a]\n[b]\nexec_prerun=sleep 1\n",
    )
    .unwrap();
    let v = json(&assert_ok(
        &raidlab_in(dir.path(), &["g.fio", "--output-format=json"]),
        "two jobs, one with a slow prerun",
    ));
    let first = |k: u32| -> i64 {
        let log = std::fs::read_to_string(dir.path().join(format!("t_iops.{k}.log"))).unwrap();
        let line = log.lines().next().expect("a log line");
        line.split(',').next().unwrap().trim().parse().unwrap()
    };
    let (a, b) = (first(1), first(2));
    assert!(
        (a - b).abs() < 300,
        "a's first line at {a} ms, b's at {b} ms"
    );
    for k in 0..2 {
        assert!(
            v["jobs"][k]["read"]["total_ios"].as_u64().unwrap() > 0,
            "job {k} ran"
        );
    }
}

/// fio's verify_interval: each 1 KiB span of a 4 KiB block carries its own header, so a
/// byte changed behind the job's back is named by the span it is in (10240, in the block at
/// 8192); without it, by the block. The job's options list it.
#[test]
fn verify_interval_names_the_span_that_fails() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| raidlab_in(dir.path(), args);
    let common = [
        "--name=v",
        "--filename=d",
        "--size=64k",
        "--bs=4k",
        "--ioengine=psync",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let write = |interval: &str| {
        let mut w = common.to_vec();
        w.extend(["--rw=write", "--do_verify=0", interval]);
        let v = json(&assert_ok(&run(&w), "write with verify"));
        let path = dir.path().join("d");
        let mut data = std::fs::read(&path).unwrap();
        data[8192 + 2048 + 100] ^= 0xff;
        std::fs::write(&path, &data).unwrap();
        v
    };
    let read = |interval: &str| {
        let mut r = common.to_vec();
        r.extend(["--rw=read", interval]);
        let o = run(&r);
        assert!(!o.status.success(), "the mismatch fails the job");
        let v = json(&stdout(&o));
        v["jobs"][0]["raidlab"]["verify"]["first_mismatch"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let v = write("--verify_interval=1k");
    assert_eq!(v["jobs"][0]["job options"]["verify_interval"], "1024");
    let err = read("--verify_interval=1k");
    assert!(err.contains("torn block at offset 10240"), "{err}");
    write("--verify_interval=0");
    let err = read("--verify_interval=0");
    assert!(err.contains("torn block at offset 8192"), "{err}");
}

/// verify with several block sizes, as fio checks them: each span (here fio's default, the
/// smallest write, 4 KiB) carries its header, so writes of 4, 12 and 64 KiB, overlapping one
/// another at random with 16 in flight, read back clean; a job reading sizes of its own
/// over them finds a byte changed behind their back in the span it is in. A job that both
/// reads and writes several sizes is refused in one line.
#[test]
fn verify_checks_several_block_sizes_span_by_span() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| raidlab_in(dir.path(), args);
    let common = [
        "--name=v",
        "--filename=d",
        "--size=4m",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let verify = |extra: &[&str]| {
        let mut a = common.to_vec();
        a.extend_from_slice(extra);
        let o = run(&a);
        let v = json(&stdout(&o));
        (
            o.status.success(),
            v["jobs"][0]["raidlab"]["verify"].clone(),
        )
    };
    let split = "--bssplit=4k/30:12k/30:64k/40";
    let (ok, v) = verify(&["--rw=write", split, "--ioengine=psync"]);
    assert!(
        ok && v["mismatches"] == 0 && v["blocks_checked"].as_u64() > Some(50),
        "{v}"
    );
    let (ok, v) = verify(&[
        "--rw=randwrite",
        split,
        "--norandommap",
        "--ioengine=io_uring",
        "--iodepth=16",
        "--number_ios=2000",
    ]);
    assert!(ok && v["mismatches"] == 0, "{v}");
    let path = dir.path().join("d");
    let mut data = std::fs::read(&path).unwrap();
    data[100_000] ^= 0xff;
    std::fs::write(&path, &data).unwrap();
    let (ok, v) = verify(&["--rw=read", "--bsrange=4k-64k", "--ioengine=psync"]);
    assert!(!ok, "the changed byte fails the reader");
    let first = v["first_mismatch"].as_str().unwrap();
    assert!(first.starts_with("torn block at offset 98304:"), "{first}");
    assert_eq!(v["mismatches"], 1, "{v}");
    let err = assert_usage_error(
        &run(&[&common[..], &["--rw=randrw", split]].concat()),
        "randrw",
    );
    assert!(
        err.contains("several block sizes in a job that reads and writes"),
        "{err}"
    );
}

/// fio's mmap engine: writes through the shared mapping reach the file (a psync reader
/// checks every block), a mapped reader, cached or with direct=1 (each request's pages then
/// written out and dropped), checks what psync wrote, syncs run, and a write past a file's
/// end (file_append) extends the file first.
#[test]
fn the_mmap_engine_moves_data_through_a_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| raidlab_in(dir.path(), args);
    let job = |rw: &str, engine: &str, extra: &[&str]| {
        let mut a = vec![
            "--name=m",
            "--filename=d",
            "--size=1m",
            "--bs=16k",
            "--verify=crc32c",
            "--output-format=json",
        ];
        let (rw, engine) = (format!("--rw={rw}"), format!("--ioengine={engine}"));
        a.extend([rw.as_str(), engine.as_str()]);
        a.extend_from_slice(extra);
        let v = json(&assert_ok(&run(&a), &a.join(" ")));
        let j = &v["jobs"][0];
        assert_eq!(j["raidlab"]["verify"]["mismatches"], 0, "{a:?}: {j}");
        (
            j["raidlab"]["verify"]["blocks_checked"].as_u64().unwrap(),
            j.clone(),
        )
    };
    let syncs = ["--do_verify=0", "--fsync=4", "--end_fsync=1"];
    let (_, w) = job("randwrite", "mmap", &syncs);
    assert_eq!(w["job options"]["ioengine"], "mmap");
    assert_eq!(job("read", "psync", &[]).0, 64);
    let mut other = syncs.to_vec();
    other.push("--filename=p");
    let (_, p) = job("randwrite", "psync", &other);
    assert!(w["sync"]["total_ios"].as_u64() > Some(0), "{w}");
    assert_eq!(w["sync"]["total_ios"], p["sync"]["total_ios"], "as psync's");
    job("write", "psync", &["--do_verify=0"]);
    assert_eq!(job("randread", "mmap", &[]).0, 64);
    assert_eq!(job("read", "mmap", &["--direct=1"]).0, 64);
    assert_eq!(job("randwrite", "mmap", &["--direct=1"]).0, 64, "read back");
    std::fs::write(dir.path().join("a"), b"head").unwrap();
    assert_ok(
        &run(&[
            "--name=a",
            "--filename=a",
            "--size=64k",
            "--bs=4k",
            "--rw=write",
            "--ioengine=mmap",
            "--file_append=1",
            "--force",
        ]),
        "append through a mapping",
    );
    let a = std::fs::read(dir.path().join("a")).unwrap();
    assert_eq!((a.len(), &a[..4]), (4 + 65536, &b"head"[..]));
}

/// fio's error_dump: each error continue_on_error goes past is told on standard error as it
/// happens (on by default, as fio), one line naming the job, the request and the error;
/// error_dump=0 tells none, and the job's options say so. The errors: writes past the first
/// MiB of a sparse 2 MiB file on a tmpfs of 1 MiB fail with ENOSPC.
#[test]
fn error_dump_tells_each_error_gone_past() {
    struct Mounted(tempfile::TempDir);
    impl Drop for Mounted {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(self.0.path()).status();
        }
    }
    let m = Mounted(tempfile::tempdir().unwrap());
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(m.0.path())
        .status()
        .expect("mount (util-linux); these tests run as root");
    assert!(ok.success(), "mount of a tmpfs");
    std::fs::File::create(m.0.path().join("f"))
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "--name=e",
            "--filename=f",
            "--size=2m",
            "--bs=64k",
            "--rw=write",
            "--ioengine=psync",
            "--continue_on_error=write",
            "--ignore_error=,ENOSPC",
            "--force",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let o = raidlab_in(m.0.path(), &a);
        let v = json(&assert_ok(&o, "writes past a full tmpfs"));
        (v["jobs"][0].clone(), stderr(&o))
    };
    let (j, err) = run(&[]);
    let errors = j["total_err"].as_u64().unwrap();
    assert!(errors >= 8, "{j}");
    let told: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("continue_on_error"))
        .collect();
    assert_eq!(told.len() as u64, errors, "{err}");
    assert!(
        told[0].starts_with("raidlab: job 'e': write of 65536 bytes at offset ")
            && told[0].contains("No space left on device"),
        "{}",
        told[0]
    );
    let (j, err) = run(&["--error_dump=0"]);
    assert_eq!(j["total_err"].as_u64(), Some(errors));
    assert!(!err.contains("continue_on_error"), "{err}");
    assert_eq!(j["job options"]["error_dump"], "0");
}

/// fio's NUMA options: numa_cpu_nodes binds a job to its nodes' CPUs (node 0's, read from
/// sysfs, here), narrowed by cpus_allowed; numa_mem_policy sets where its memory comes
/// from, every mode running; a node the machine does not have online is refused before any
/// I/O in one line naming those it has; the job's options list both.
#[test]
fn numa_options_bind_a_job_to_its_nodes() {
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist")
        .expect("node 0's CPUs in sysfs");
    let node0 = raidlab_workload::spec::parse_cpu_list(node0.trim()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "--name=n",
            "--ioengine=null",
            "--filename=x",
            "--size=16m",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        raidlab_in(dir.path(), &a)
    };
    let cpus = |extra: &[&str]| {
        let v = json(&assert_ok(&run(extra), &extra.join(" ")));
        let j = v["jobs"][0].clone();
        let c: Vec<u32> = j["raidlab"]["cpus"]
            .as_array()
            .map(|a| a.iter().map(|c| c.as_u64().unwrap() as u32).collect())
            .unwrap_or_default();
        (c, j)
    };
    let (c, j) = cpus(&["--numa_cpu_nodes=0"]);
    assert_eq!(c, node0);
    assert_eq!(j["job options"]["numa_cpu_nodes"], "0");
    let last = node0.last().unwrap().to_string();
    let (c, _) = cpus(&["--numa_cpu_nodes=0", &format!("--cpus_allowed={last}")]);
    assert_eq!(c, [*node0.last().unwrap()]);
    for p in ["default", "local", "prefer:0", "bind:0", "interleave:0"] {
        let (_, j) = cpus(&[&format!("--numa_mem_policy={p}")]);
        assert_eq!(j["job options"]["numa_mem_policy"], p);
        assert!(j["raidlab"]["error"].is_null(), "{p}: {j}");
    }
    let online = std::fs::read_to_string("/sys/devices/system/node/online").unwrap();
    let beyond = raidlab_workload::spec::parse_node_list(online.trim())
        .unwrap()
        .last()
        .unwrap()
        + 1;
    for o in [
        format!("--numa_cpu_nodes={beyond}"),
        format!("--numa_mem_policy=bind:{beyond}"),
    ] {
        let err = assert_usage_error(&run(&[&o]), &o);
        assert!(
            err.contains(&format!(
                "names node {beyond}, which this machine does not have online (valid: {}",
                online.trim()
            )),
            "{err}"
        );
    }
}

/// fio's verify_async: threads check the job's reads off its thread, with the same outcome
/// as checking them inline: every block checked, the two blocks changed behind the job's
/// back found (at 16 in flight through io_uring), verify_fatal still ending the job at a
/// mismatch, and the job's options listing it.
#[test]
fn verify_async_checks_reads_as_the_job_itself_would() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "--name=v",
            "--filename=d",
            "--size=8m",
            "--bs=4k",
            "--ioengine=io_uring",
            "--iodepth=16",
            "--verify=crc32c",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let o = raidlab_in(dir.path(), &a);
        (o.status.success(), json(&stdout(&o))["jobs"][0].clone())
    };
    let (ok, _) = run(&["--rw=randwrite", "--do_verify=0"]);
    assert!(ok);
    let path = dir.path().join("d");
    let mut data = std::fs::read(&path).unwrap();
    data[5000] ^= 1;
    data[6_000_000] ^= 1;
    std::fs::write(&path, &data).unwrap();
    let (_, inline) = run(&["--rw=randread"]);
    for n in ["1", "3"] {
        let (ok, j) = run(&["--rw=randread", &format!("--verify_async={n}")]);
        assert!(!ok, "the mismatches fail the job");
        let v = &j["raidlab"]["verify"];
        assert_eq!(v["blocks_checked"], 2048, "{v}");
        assert_eq!(v["mismatches"], 2, "{v}");
        assert_eq!(v["mismatches"], inline["raidlab"]["verify"]["mismatches"]);
        assert_eq!(j["job options"]["verify_async"], n);
    }
    let (_, j) = run(&["--rw=read", "--verify_async=2", "--verify_fatal=1"]);
    let v = &j["raidlab"]["verify"];
    assert_eq!(v["mismatches"], 1, "{v}");
    assert!(
        v["blocks_checked"].as_u64() < Some(2048),
        "ended at the first: {v}"
    );
}

/// `--sim_converge=0` on the command line: the simulated run covers its whole runtime (by
/// default it stops once its rate has settled), the job's options say so, a value that is
/// not a boolean gets one line, and a real run says the option changes nothing there.
#[test]
fn sim_converge_0_runs_a_simulated_job_to_its_end() {
    let target = format!("--filename=sim:{}", system("xdd2008/raid5.toml"));
    let base = [
        target.as_str(),
        "--rw=randread",
        "--bs=8k",
        "--iodepth=32",
        "--direct=1",
        "--runtime=10s",
        "--time_based",
        "--output-format=json",
    ];
    let stop = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let v = json(&assert_ok(&raidlab(&args), "sim_converge run"));
        let job = &v["jobs"][0];
        (
            job["raidlab"]["sim"]["stop_reason"]
                .as_str()
                .unwrap()
                .to_string(),
            job["raidlab"]["sim"]["virtual_time_ns"].as_u64().unwrap(),
            job["job options"]["sim_converge"].clone(),
        )
    };
    let (reason, ns, opt) = stop(&[]);
    assert_eq!((reason.as_str(), opt.is_null()), ("converged", true));
    assert!(ns < 10_000_000_000, "{ns}");
    let (reason, ns, opt) = stop(&["--sim_converge=0"]);
    assert_eq!(reason, "runtime");
    assert!(ns >= 10_000_000_000, "{ns}");
    assert_eq!(opt, "0");

    let bad: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--sim_converge=maybe"])
        .collect();
    let err = assert_usage_error(&raidlab(&bad), "sim_converge=maybe");
    assert!(
        err.contains("sim_converge") && err.contains("valid"),
        "{err}"
    );

    let dir = scratch("raidlab-sim-converge");
    let file = dir.path().join("f");
    let out = raidlab(&[
        &format!("--filename={}", file.display()),
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--sim_converge=0",
    ]);
    assert_ok(&out, "real run with sim_converge=0");
    assert!(
        stderr(&out).contains("sim_converge=0 tells a simulated run"),
        "{}",
        stderr(&out)
    );
}

/// A time-based job that only writes, with verify and no verify_backlog, never reads back
/// (its runtime ends its writes, and the check after them never comes): the run says so
/// instead of printing "0 blocks checked" as if verify had run and found nothing.
#[test]
fn a_time_based_writer_whose_verify_never_reads_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    let target = format!("--filename={}", file.display());
    let out = raidlab(&[
        "--name=j",
        target.as_str(),
        "--rw=randwrite",
        "--bs=4k",
        "--size=256k",
        "--verify=crc32c",
        "--time_based",
        "--runtime=100ms",
    ]);
    assert_ok(&out, "time-based verify");
    let err = stderr(&out);
    assert!(
        err.contains("job 'j': verify reads nothing back"),
        "stderr: {err}"
    );
}
