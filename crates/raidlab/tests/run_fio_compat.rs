//! fio compatibility of `raidlab run`'s output: fio's own json+ post-processing script
//! accepts it, a real fio run's JSON keys are all present (apart from the documented absent
//! ones), and a plain Python consumer reads the fields fio tools read. These tests need the
//! Debian package `fio` and python3; they fail when those are missing.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

fn raidlab_json(dir: &std::path::Path, format: &str) -> (String, Value) {
    raidlab_json_with(dir, format, &[])
}

/// [`raidlab_json`] with more options.
fn raidlab_json_with(dir: &std::path::Path, format: &str, more: &[&str]) -> (String, Value) {
    let f = dir.join("data").display().to_string();
    let mut args = vec![
        format!("--filename={f}"),
        "--size=2m".into(),
        "--bs=4k".into(),
        "--ioengine=psync".into(),
        "--name=mix".into(),
        "--rw=randrw".into(),
        "--rwmixread=60".into(),
        format!("--output-format={format}"),
    ];
    args.extend(more.iter().map(|m| m.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = raidlab(&args);
    let text = assert_ok(&out, "raidlab json");
    let v = json(&text);
    (text, v)
}

#[test]
fn fio_jsonplus_clat2csv_accepts_json_plus_with_the_right_counts() {
    require_tool("fio_jsonplus_clat2csv", "fio");
    let dir = tempfile::tempdir().unwrap();
    let (text, v) = raidlab_json(dir.path(), "json+");
    let src = dir.path().join("out.json");
    std::fs::write(&src, &text).unwrap();
    let dest = dir.path().join("lat.csv");
    let run = |extra: &[&str]| {
        let o = Command::new("fio_jsonplus_clat2csv")
            .arg(&src)
            .arg(&dest)
            .args(extra)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "fio_jsonplus_clat2csv {extra:?} failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    run(&[]);
    let validated = run(&["--validate"]);
    assert!(validated.contains("validated"), "{validated}");

    let csv = std::fs::read_to_string(dir.path().join("lat_job0.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (rc, wc, rlc) = (
        col("read_clat_ns_count"),
        col("write_clat_ns_count"),
        col("read_lat_ns_count"),
    );
    let (mut reads, mut writes, mut read_lat) = (0u64, 0u64, 0u64);
    let mut rows = 0;
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |i: usize| cells[i].parse::<u64>().unwrap_or(0);
        reads += num(rc);
        writes += num(wc);
        read_lat += num(rlc);
        rows += 1;
    }
    let job = &v["jobs"][0];
    let total_r = job["read"]["total_ios"].as_u64().unwrap();
    let total_w = job["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(total_r + total_w, 512, "2 MiB in 4 KiB requests");
    assert!(total_r > 0 && total_w > 0);
    assert_eq!(reads, total_r);
    assert_eq!(writes, total_w);
    assert_eq!(read_lat, total_r);
    assert!(rows > 1);
}

/// Every key path of a JSON value, with map keys that are data (percentiles, bins, option
/// names, latency thresholds) collapsed to `*`.
fn key_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let data_keyed = [
                    "job options",
                    "percentile",
                    "bins",
                    "latency_ns",
                    "latency_us",
                    "latency_ms",
                ]
                .iter()
                .any(|d| prefix.ends_with(&format!("/{d}")));
                let k = if data_keyed { "*" } else { k.as_str() };
                let p = format!("{prefix}/{k}");
                out.insert(p.clone());
                key_paths(child, &p, out);
            }
        }
        Value::Array(items) => {
            for item in items.iter().take(1) {
                key_paths(item, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn json_has_every_key_a_real_fio_run_writes() {
    let (fio, ours) = fio_and_raidlab_json(&[]);
    // Percentile keys are fio's default list, written the same way.
    let pk = |v: &Value| {
        v["jobs"][0]["read"]["clat_ns"]["percentile"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(pk(&fio), pk(&ours));
    // A job without latency_target: fio 3.33 still writes its latency-target fields, the
    // job's iodepth as given, target 0, percentile 100, window 0.
    for k in [
        "latency_depth",
        "latency_target",
        "latency_percentile",
        "latency_window",
    ] {
        assert_eq!(fio["jobs"][0][k], ours["jobs"][0][k], "{k}");
    }
}

/// `unified_rw_reporting=mixed` and `both` give fio's structure: `mixed` alone in place of
/// the directions, or after them (the key check of [`fio_and_raidlab_json`]), with reads
/// and writes added up in it.
#[test]
fn unified_rw_reporting_has_fios_keys() {
    for mode in ["mixed", "both"] {
        let opt = format!("--unified_rw_reporting={mode}");
        let (fio, ours) = fio_and_raidlab_json(&[&opt]);
        let j = &ours["jobs"][0];
        assert_eq!(fio["jobs"][0].get("read").is_some(), mode == "both");
        assert_eq!(j.get("read").is_some(), mode == "both", "{mode}");
        let total = |k: &str| j[k]["total_ios"].as_u64().unwrap();
        assert_eq!(total("mixed"), 512, "{mode}: 2 MiB in 4 KiB requests");
        if mode == "both" {
            assert_eq!(total("read") + total("write"), total("mixed"));
            assert!(total("read") > 0 && total("write") > 0);
        }
        assert_eq!(j["job options"]["unified_rw_reporting"], mode);
    }
}

/// A real fio run's JSON and raidlab's of the same job (2 MiB of 4 KiB random requests,
/// 60% reads, psync, plus `more`), after checking that raidlab's has every key fio's has
/// (but those documented absent) and none more outside its `raidlab` key.
fn fio_and_raidlab_json(more: &[&str]) -> (Value, Value) {
    require_tool("fio", "fio");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("fio-data").display().to_string();
    let o = Command::new("fio")
        .args([
            "--name=mix",
            &format!("--filename={f}"),
            "--size=2m",
            "--bs=4k",
            "--ioengine=psync",
            "--rw=randrw",
        ])
        .args(["--rwmixread=60", "--output-format=json"])
        .args(more)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let fio: Value = serde_json::from_slice(&o.stdout).expect("fio's JSON");
    let (_, ours) = raidlab_json_with(dir.path(), "json", more);

    assert!(
        want_len(&fio) > 100,
        "fio's JSON looks too small to compare against"
    );
    let absent = raidlab_result::render::JSON_ABSENT_KEYS;
    let mut want = BTreeSet::new();
    key_paths(&fio, "", &mut want);
    let mut have = BTreeSet::new();
    key_paths(&ours, "", &mut have);
    let missing: Vec<&String> = want
        .iter()
        .filter(|p| !have.contains(*p))
        .filter(|p| {
            !p.split('/')
                .any(|seg| absent.contains(&seg.trim_end_matches("[]")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{more:?}: keys fio writes that raidlab's JSON lacks (and does not document as absent): {missing:?}"
    );
    // Nothing raidlab adds outside its own key (not even lat_ns percentiles: fio lists
    // them only with lat_percentiles=1, as raidlab does).
    let extra: Vec<&String> = have
        .iter()
        .filter(|p| !want.contains(*p))
        .filter(|p| !p.contains("/raidlab"))
        .collect();
    assert!(
        extra.is_empty(),
        "{more:?}: keys raidlab adds outside its 'raidlab' key: {extra:?}"
    );
    (fio, ours)
}

#[test]
fn python_consumers_read_the_fields_fio_tools_read() {
    require_tool("python3", "python3");
    let dir = tempfile::tempdir().unwrap();
    let (text, v) = raidlab_json(dir.path(), "json");
    let src = dir.path().join("out.json");
    std::fs::write(&src, text).unwrap();
    let script = r#"
import json, sys
d = json.load(open(sys.argv[1]))
assert d['fio version'].startswith('raidlab-')
for job in d['jobs']:
    for ddir in ('read', 'write', 'trim'):
        s = job[ddir]
        print(job['jobname'], ddir, s['io_bytes'], s['bw'], int(s['iops']), s['runtime'], s['total_ios'],
              s['clat_ns']['N'], s['clat_ns']['percentile']['99.000000'] if s['total_ios'] else 0,
              job['usr_cpu'] >= 0, job['sys_cpu'] >= 0)
"#;
    let o = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "python: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let printed = String::from_utf8_lossy(&o.stdout);
    let read_line = printed
        .lines()
        .find(|l| l.starts_with("mix read "))
        .unwrap();
    let fields: Vec<&str> = read_line.split_whitespace().collect();
    assert_eq!(fields[2], v["jobs"][0]["read"]["io_bytes"].to_string());
    assert_eq!(fields[6], v["jobs"][0]["read"]["total_ios"].to_string());
    assert_eq!(
        fields[7],
        v["jobs"][0]["read"]["total_ios"].to_string(),
        "clat N equals total_ios"
    );
}

fn want_len(v: &Value) -> usize {
    let mut s = BTreeSet::new();
    key_paths(v, "", &mut s);
    s.len()
}

/// A job file with IEC units runs differently under fio (powers of 10, its default
/// `kb_base=1024`) and raidlab (powers of 2): raidlab says so, one note a line, and the note's
/// claim about fio holds for the fio installed.
#[test]
fn iec_units_in_a_job_file_are_noted_as_fio_reads_them_otherwise() {
    require_tool("fio", "fio");
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    let text = |engine: &str, file: &str| {
        format!(
            "[global]\nioengine={engine}\nfilename={file}\n[a]\nrw=write\nbs=4KiB\nsize=64KiB\n"
        )
    };
    let read = |o: &std::process::Output| {
        json(&assert_ok(o, "job"))["jobs"][0]["write"]["io_bytes"].as_u64()
    };
    // fio: 64KiB is 64000 bytes, written in 4000-byte blocks.
    let fio_file = dir.path().join("by-fio").display().to_string();
    std::fs::write(&job, text("psync", &fio_file)).unwrap();
    let o = Command::new("fio")
        .args(["--output-format=json"])
        .arg(&job)
        .output()
        .unwrap();
    assert_eq!(read(&o), Some(64_000));
    // raidlab: 65536 bytes, and a note for each of the two lines.
    let ours = dir.path().join("by-raidlab").display().to_string();
    std::fs::write(&job, text("null", &ours)).unwrap();
    let o = raidlab(&[&job.display().to_string(), "--output-format=json"]);
    assert_eq!(read(&o), Some(65_536));
    let err = stderr(&o);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains(": note: ")).collect();
    assert_eq!(notes.len(), 2, "{err}");
    assert!(
        notes[0].contains("j.fio:6: note: bs=4KiB") && notes[0].contains("4KiB = 4000 bytes"),
        "{err}"
    );
    assert!(notes[1].contains("j.fio:7: note: size=64KiB"), "{err}");
}

/// fio's `verify=pattern` reads each tool's blocks alike: fio checks what raidlab wrote with
/// `verify_pattern=0xdeadbeef` and finds it whole, raidlab checks what fio wrote with a
/// decimal pattern (1234: the bytes d2 04), and a byte changed in the file is found by both at
/// the same place in the same block.
#[test]
fn verify_pattern_blocks_read_back_in_fio_and_raidlab_alike() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-vp-");
    let f = d.path().join("p").display().to_string();
    let file = format!("--filename={f}");
    let common = ["--size=64k", "--bs=4k", "--verify=pattern"];
    let fio = |args: &[&str]| {
        // (In the scratch folder: a failed verify leaves fio's state file where it runs.)
        Command::new("fio")
            .current_dir(d.path())
            .arg("--name=j")
            .arg(&file)
            .args(common)
            .args(args)
            .output()
            .expect("run fio")
    };
    let rl = |args: &[&str]| {
        let mut a = vec!["--name=j", file.as_str(), "--output-format=json"];
        a.extend_from_slice(&common);
        a.extend_from_slice(args);
        raidlab(&a)
    };
    // raidlab writes, fio checks.
    assert_ok(
        &rl(&["--rw=write", "--verify_pattern=0xdeadbeef"]),
        "raidlab writes the pattern",
    );
    let o = fio(&["--rw=read", "--verify_pattern=0xdeadbeef"]);
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // fio writes a decimal pattern, raidlab checks.
    std::fs::remove_file(&f).unwrap();
    let o = fio(&["--rw=write", "--verify_pattern=1234"]);
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(&std::fs::read(&f).unwrap()[..4], &[0xd2, 0x04, 0xd2, 0x04]);
    let v = json(&assert_ok(
        &rl(&["--rw=read", "--verify_pattern=1234"]),
        "raidlab checks fio's pattern",
    ));
    assert_eq!(v["jobs"][0]["raidlab"]["verify"]["blocks_checked"], 16);
    assert_eq!(v["jobs"][0]["raidlab"]["verify"]["mismatches"], 0);
    // One byte changed: both name block 4096, byte 904.
    {
        use std::os::unix::fs::FileExt;
        let h = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        h.write_at(b"z", 5000).unwrap();
    }
    let o = fio(&["--rw=read", "--verify_pattern=1234"]);
    let fio_says = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        fio_says.contains("bad pattern block offset 904") && fio_says.contains("offset 4096"),
        "{fio_says}"
    );
    let o = rl(&["--rw=read", "--verify_pattern=1234"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&stdout(&o));
    let first = v["jobs"][0]["raidlab"]["verify"]["first_mismatch"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(first.contains("offset 4096, byte 904"), "{first}");
}

/// fio's steady state: a group_reporting group of two null jobs, steady from the start, ends
/// well before its runtime in both tools, and the group's result carries fio's steadystate
/// object with the same keys (raidlab's text shows fio's line).
#[test]
fn steadystate_ends_a_settled_group_with_fios_report() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-ss-");
    let f = d.path().join("n").display().to_string();
    let opts = [
        "--name=n",
        "--ioengine=null",
        // (Large: a pass over a small region lasts microseconds, and every pass is listed.)
        "--size=1t",
        "--rw=randread",
        "--time_based",
        "--runtime=60",
        "--ss=iops:50%",
        "--ss_dur=2",
        "--numjobs=2",
        "--group_reporting",
    ];
    let fio = Command::new("fio")
        .args(opts)
        .arg(format!("--filename={f}"))
        .arg("--output-format=json")
        .output()
        .expect("run fio");
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let fio: Value = json(&String::from_utf8_lossy(&fio.stdout));
    let file = format!("--filename={f}");
    let mut args = opts.to_vec();
    args.push(&file);
    args.push("--output-format=json,text");
    let out = assert_ok(&raidlab(&args), "raidlab steadystate");
    let (json_part, text_part) = out.split_at(out.rfind("\n}\n").expect("json first") + 3);
    let rl = json(json_part);
    let keys = |v: &Value| {
        let mut k = BTreeSet::new();
        key_paths(&v["jobs"][0]["steadystate"], "", &mut k);
        k
    };
    assert!(!keys(&fio).is_empty());
    assert_eq!(keys(&rl), keys(&fio));
    let ss = &rl["jobs"][0]["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["ss"], "iops:50.000000%");
    assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 2);
    // Two jobs, each well short of its 60 s.
    assert!(rl["jobs"][0]["job_runtime"].as_u64().unwrap() < 60_000);
    assert!(
        text_part.contains("  steadystate  : attained=yes, bw="),
        "{text_part}"
    );
}

/// fio run in `dir` (where it leaves its verify state) with `args`: its standard output,
/// once it succeeded.
fn fio_in<S: AsRef<std::ffi::OsStr>>(dir: &std::path::Path, args: &[S]) -> String {
    let o = Command::new("fio")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run fio");
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The JSON document of an output that may begin with other lines (fio's notes).
fn json_in(out: &str) -> Value {
    json(&out[out.find('{').expect("a JSON document")..])
}

/// Verify's read-backs are the job's reads in fio's report, and in raidlab's: a write job
/// with verify reads every block back once its writes are done, and with `verify_backlog`
/// checks as it goes (each block once, the end's read-back finding nothing left), the
/// same counts in the same JSON places; `do_verify=0` reads nothing in either.
#[test]
fn verify_read_backs_are_counted_as_reads_as_fio_counts_them() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-vr-");
    let f = d.path().join("v").display().to_string();
    let file = format!("--filename={f}");
    let common = [
        "--name=j",
        file.as_str(),
        "--rw=write",
        "--bs=4k",
        "--size=256k",
        "--ioengine=psync",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let counts = |v: &Value| {
        let j = &v["jobs"][0];
        (
            j["write"]["total_ios"].as_u64().unwrap(),
            j["read"]["total_ios"].as_u64().unwrap(),
            j["read"]["io_bytes"].as_u64().unwrap(),
        )
    };
    for (extra, want) in [
        (&[][..], (64, 64, 256 << 10)),
        (&["--verify_backlog=16"][..], (64, 64, 256 << 10)),
        (&["--verify_backlog=16", "--do_verify=0"][..], (64, 0, 0)),
    ] {
        let args: Vec<&str> = common.iter().chain(extra).copied().collect();
        let fio = json_in(&fio_in(d.path(), &args));
        let mut ra = args.clone();
        ra.push("--force");
        let ours = json(&assert_ok(&raidlab(&ra), &format!("raidlab {extra:?}")));
        assert_eq!(counts(&fio), want, "fio {extra:?}");
        assert_eq!(counts(&ours), want, "raidlab {extra:?}");
        if want.1 > 0 {
            let runtime = ours["jobs"][0]["read"]["runtime"].as_u64().unwrap_or(0);
            let bw = ours["jobs"][0]["read"]["bw_bytes"].as_u64().unwrap_or(0);
            assert!(
                bw > 0,
                "a read rate over the read-backs' time: {runtime} ms, {bw} B/s"
            );
        }
    }
}

/// A bandwidth or IOPS log decides how the job's samples are taken, in fio and in raidlab
/// alike (fio 3.33's `setup_log` and `calc_log_samples`): with `log_avg_msec=0` every
/// completion is a sample and a line, verify's read-backs too; averaged, every line is one
/// of the samples, taken every `log_avg_msec` (or `bw_avg_time` when the job gives it), and
/// the read-backs are in none. Both tools run each job in turn; counts that depend on how
/// long the job ran may differ by one interval between them.
#[test]
fn samples_follow_the_logs_as_fios_do() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-samples-");
    let file = format!("--filename={}", d.path().join("v").display());
    // (Paced, so that the writes take about a second: 256 × 4 KiB at 250 a second.)
    let common = [
        "--name=j",
        file.as_str(),
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        "--ioengine=psync",
        "--rate_iops=250",
        "--output-format=json",
    ];
    // One run: the JSON, and each log's lines by direction (reads, writes).
    let run = |tool: &str, extra: &[&str]| -> (Value, Vec<(String, [usize; 2])>) {
        for e in std::fs::read_dir(d.path()).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "log") {
                std::fs::remove_file(p).unwrap();
            }
        }
        let args: Vec<&str> = common.iter().chain(extra).copied().collect();
        let text = if tool == "fio" {
            fio_in(d.path(), &args)
        } else {
            let mut ra = args.clone();
            ra.push("--force");
            assert_ok(&raidlab_in(d.path(), &ra), &format!("raidlab {extra:?}"))
        };
        let v = json_in(&text);
        let mut logs: Vec<(String, [usize; 2])> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .map(|p| {
                let mut by_dir = [0; 2];
                for line in std::fs::read_to_string(&p).unwrap().lines() {
                    let dir: usize = line.split(", ").nth(2).unwrap().parse().unwrap();
                    by_dir[dir.min(1)] += 1;
                }
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    by_dir,
                )
            })
            .collect();
        logs.sort();
        (v, logs)
    };
    let samples = |v: &Value, dir: &str| {
        let j = &v["jobs"][0][dir];
        [
            j["total_ios"].as_u64().unwrap() as usize,
            j["bw_samples"].as_u64().unwrap() as usize,
            j["iops_samples"].as_u64().unwrap() as usize,
        ]
    };
    let near = |a: usize, b: usize| a.abs_diff(b) <= 1;
    let verify = "--verify=crc32c";
    let per_io = ["--write_bw_log=p", "--write_iops_log=p", verify];
    let averaged = [
        "--write_bw_log=a",
        "--write_iops_log=a",
        "--log_avg_msec=100",
        verify,
    ];
    let given = ["--write_bw_log=g", "--log_avg_msec=100", "--bwavgtime=400"];
    for tool in ["fio", "raidlab"] {
        // Every completion a sample and a line, the read-backs too.
        let (v, logs) = run(tool, &per_io);
        let ([w, wbw, wiops], [r, rbw, riops]) = (samples(&v, "write"), samples(&v, "read"));
        assert_eq!((w, r), (256, 256), "{tool}");
        assert_eq!((wbw, wiops, rbw, riops), (256, 256, 256, 256), "{tool}");
        assert_eq!(
            logs,
            [
                ("p_bw.1.log".to_string(), [256, 256]),
                ("p_iops.1.log".to_string(), [256, 256])
            ],
            "{tool}"
        );
        // Averaged: about ten write samples of 100 ms, each a line; no read-back in any.
        let (v, logs) = run(tool, &averaged);
        let ([_, wbw, wiops], [r, rbw, riops]) = (samples(&v, "write"), samples(&v, "read"));
        assert_eq!((r, rbw, riops), (256, 0, 0), "{tool}");
        assert!(
            (8..=11).contains(&wbw) && near(wbw, wiops),
            "{tool}: {wbw} {wiops}"
        );
        assert_eq!(logs.len(), 2, "{tool}: {logs:?}");
        for (name, by_dir) in &logs {
            let want = if name.contains("_bw") { wbw } else { wiops };
            assert_eq!(*by_dir, [0, want], "{tool}: {name}");
        }
        // bw_avg_time given: its interval, not the log's.
        let (v, logs) = run(tool, &given);
        let [_, wbw, _] = samples(&v, "write");
        assert!((1..=3).contains(&wbw), "{tool}: {wbw}");
        assert_eq!(logs, [("g_bw.1.log".to_string(), [0, wbw])], "{tool}");
    }
}

/// fio's keywords in a job file (`$pagesize`, `$ncpus`, `$mb_memory`) and the math fio does
/// on a value holding one: the same jobs in fio and raidlab, the same bytes moved; math fio
/// refuses is refused in one line.
#[test]
fn job_file_keywords_mean_what_fio_makes_of_them() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-kw-");
    let job = d.path().join("k.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nrw=read\nbs=$pagesize\nsize=($pagesize*16)\nioengine=psync\n\
             [k]\nnumjobs=$ncpus\nio_size=($mb_memory*0+$pagesize*($ncpus+2)^2/$ncpus)\n",
            d.path().join("f").display()
        ),
    )
    .unwrap();
    let jobs = |v: &Value| -> Vec<u64> {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["read"]["io_bytes"].as_u64().unwrap())
            .collect()
    };
    let job_s = job.display().to_string();
    let fio = jobs(&json_in(&fio_in(
        d.path(),
        &[job_s.as_str(), "--output-format=json"],
    )));
    let ours = jobs(&json(&assert_ok(
        &raidlab(&["--job", &job_s, "--output-format=json"]),
        "raidlab --job",
    )));
    // (numjobs=$ncpus: as many jobs as CPUs online, in both.)
    assert!(!fio.is_empty() && fio.iter().all(|&b| b > 0), "{fio:?}");
    assert_eq!(ours, fio, "jobs and bytes read per job");
    // Math on a keyword with a unit after it: fio's bc refuses it, and so does raidlab.
    std::fs::write(&job, "[k]\nrw=read\nsize=($mb_memory/2)m\n").unwrap();
    let o = Command::new("fio").arg(&job_s).output().expect("run fio");
    assert!(!o.status.success() || String::from_utf8_lossy(&o.stderr).contains("failed parsing"));
    let err = assert_usage_error(&raidlab(&["--job", &job_s]), "math with a unit");
    assert!(err.contains("k.fio:3: option 'size'"), "{err}");
}

/// Several block sizes over fio's random map: a pass's requests are cut short where they
/// would run into blocks already moved, in fio and in raidlab alike, so both move the whole
/// region once in about the same number of requests (well above what the drawn sizes alone
/// would take: 493 for this 16 MiB pass).
#[test]
fn several_block_sizes_fill_the_random_map_as_fios_do() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-map-");
    let file = format!("--filename={}", d.path().join("m").display());
    let args = [
        "--name=m",
        file.as_str(),
        "--rw=randrw",
        "--bssplit=4k/50:64k/50",
        "--size=16m",
        "--ioengine=psync",
        "--output-format=json",
    ];
    let ios = |v: &Value| {
        let j = &v["jobs"][0];
        let n =
            j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap();
        let b = j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap();
        (n, b)
    };
    let (fio_n, fio_b) = ios(&json_in(&fio_in(d.path(), &args)));
    let mut ra = args.to_vec();
    ra.push("--force");
    let (n, b) = ios(&json(&assert_ok(&raidlab(&ra), "raidlab bssplit")));
    assert_eq!((fio_b, b), (16 << 20, 16 << 20), "each byte once");
    assert!(
        fio_n > 700 && n > 700,
        "cut requests: fio {fio_n}, raidlab {n}"
    );
    assert!(n.abs_diff(fio_n) * 10 < fio_n, "fio {fio_n}, raidlab {n}");
}

/// Strided zones walk a file as fio's do: each zone's `zonesize` bytes, the skip, back to
/// the region's start past the file's end, round a zone again when `zonesize` exceeds
/// `zonerange`, and a pass that would run past the file's end ends there. The same requests,
/// in the same order, in both tools' I/O logs (sequential jobs: nothing is drawn).
#[test]
fn strided_zones_walk_the_file_as_fios_do() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-zones-");
    std::fs::write(d.path().join("z"), vec![7u8; 8 << 20]).unwrap();
    // (Each request of a log: its direction and offset.)
    let logged = |log: &str| -> Vec<(String, u64)> {
        std::fs::read_to_string(d.path().join(log))
            .unwrap()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 5 && matches!(f[2], "read" | "write"))
                    .then(|| (f[2].to_string(), f[3].parse().unwrap()))
            })
            .collect()
    };
    let cases: &[&[&str]] = &[
        &["--rw=read", "--bs=64k", "--zonesize=256k", "--zoneskip=1m"],
        &[
            "--rw=read",
            "--bs=64k",
            "--zonesize=128k",
            "--zonerange=512k",
            "--zoneskip=1m",
        ],
        &[
            "--rw=read",
            "--bs=64k",
            "--zonesize=512k",
            "--zonerange=256k",
            "--zoneskip=1m",
        ],
        &[
            "--rw=write",
            "--bs=64k",
            "--zonesize=256k",
            "--zoneskip=1m",
            "--size=2m",
            "--offset=512k",
        ],
        &[
            "--rw=read",
            "--bs=256k",
            "--zonesize=768k",
            "--zoneskip=768k",
            "--loops=3",
        ],
        &[
            "--rw=read",
            "--bs=64k",
            "--zonesize=256k",
            "--zoneskip=1m",
            "--size=1m",
            "--loops=2",
        ],
    ];
    for case in cases {
        let mut args = vec![
            "--name=z".to_string(),
            "--filename=z".into(),
            "--ioengine=psync".into(),
            "--zonemode=strided".into(),
            "--output-format=json".into(),
        ];
        args.extend(case.iter().map(|a| a.to_string()));
        // (fio adds to a log that is there.)
        for log in ["fio.log", "raidlab.log"] {
            let _ = std::fs::remove_file(d.path().join(log));
        }
        let mut fa = args.clone();
        fa.push("--write_iolog=fio.log".into());
        let fio_json = json_in(&fio_in(d.path(), &fa));
        let mut ra = args.clone();
        ra.extend(["--write_iolog=raidlab.log".to_string(), "--force".into()]);
        let rl_json = json(&assert_ok(&raidlab_in(d.path(), &ra), "raidlab zones"));
        let (want, got) = (logged("fio.log"), logged("raidlab.log"));
        assert!(want.len() >= 16, "{case:?}: fio issued {}", want.len());
        assert_eq!(got, want, "{case:?}: raidlab's requests against fio's");
        let bytes = |v: &Value| {
            let j = &v["jobs"][0];
            j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap()
        };
        assert_eq!(bytes(&rl_json), bytes(&fio_json), "{case:?}: bytes moved");
    }
}

/// fio's dedupe_mode=working_set, side by side: 8 MiB written in 4 KiB blocks, half of them
/// duplicates drawn from a working set of 10% of the size. Both tools' files hold about the
/// same number of distinct blocks (fio 1 054 of 2 048 when checked), with the set's blocks
/// the ones repeated (fio 202, of a set of 204), and no block repeated outside the set;
/// in the repeat mode each tool repeats the last unique block, so many more distinct
/// blocks repeat, in both alike.
#[test]
fn dedupe_working_set_writes_data_that_dedupes_as_fios() {
    require_tool("fio", "fio");
    let dir = tempfile::tempdir().unwrap();
    let args = |file: &str, mode: &str| {
        vec![
            "--name=d".to_string(),
            format!("--filename={file}"),
            "--size=8m".into(),
            "--bs=4k".into(),
            "--rw=write".into(),
            "--dedupe_percentage=50".into(),
            format!("--dedupe_mode={mode}"),
            "--dedupe_working_set_percentage=10".into(),
        ]
    };
    // (Distinct blocks, and blocks written more than once.)
    let blocks = |file: &str| {
        let d = std::fs::read(dir.path().join(file)).unwrap();
        let mut c: std::collections::HashMap<&[u8], u32> = Default::default();
        for b in d.chunks(4096) {
            *c.entry(b).or_default() += 1;
        }
        (c.len(), c.values().filter(|&&n| n > 1).count())
    };
    // Each tool's file in `mode`: (fio's, raidlab's), as (distinct, repeated) blocks.
    let both = |mode: &str| {
        let (f, r) = (format!("fio-{mode}"), format!("rl-{mode}"));
        fio_in(dir.path(), &args(&f, mode));
        assert_ok(&raidlab_in(dir.path(), &args(&r, mode)), "raidlab");
        (blocks(&f), blocks(&r))
    };
    let near = |a: usize, b: usize, pct: usize| a.abs_diff(b) * 100 <= b * pct;
    let (fio, ours) = both("working_set");
    assert!(
        near(ours.0, fio.0, 8),
        "distinct blocks: raidlab {ours:?}, fio {fio:?}"
    );
    assert!(
        near(ours.1, fio.1, 8),
        "repeated blocks: raidlab {ours:?}, fio {fio:?}"
    );
    assert!(
        ours.1 <= 204 && fio.1 <= 204,
        "only the set's blocks repeat"
    );
    let (fio_rep, ours_rep) = both("repeat");
    for (a, b) in [(ours_rep.0, fio_rep.0), (ours_rep.1, fio_rep.1)] {
        assert!(
            near(a, b, 8),
            "repeat: raidlab {ours_rep:?}, fio {fio_rep:?}"
        );
    }
    // (Repeating the last unique block repeats about half the unique ones, 511 in fio.)
    assert!(
        ours_rep.1 > 2 * ours.1,
        "{ours_rep:?} against the set's {ours:?}"
    );
}
