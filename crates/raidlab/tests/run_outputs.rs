//! fio's other outputs from `raidlab run`: terse lines, time-series logs and percentile
//! options, on simulated targets (deterministic) and real files, beside fio 3.33 where fio can
//! run the same job. The fio comparisons need the Debian package `fio`; they fail without it.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn system() -> String {
    let s = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../systems/bokhari2006/1c-1x1.toml");
    assert!(s.is_file(), "system file {} missing", s.display());
    format!("--filename=sim:{}", s.display())
}

/// The terse line and the JSON of one `--output-format=json,terse` run.
fn terse_and_json(args: &[&str]) -> (Vec<Vec<String>>, Value) {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--output-format=json,terse");
    let out = assert_ok(&raidlab(&all), "json,terse run");
    // fio's order: terse lines first, then the JSON document.
    let at = out.find('{').expect("JSON after the terse lines");
    let lines = out[..at]
        .lines()
        .map(|l| l.split(';').map(str::to_string).collect())
        .collect();
    (lines, json(&out[at..]))
}

fn num(s: &str) -> f64 {
    s.trim_end_matches('%')
        .parse()
        .unwrap_or_else(|_| panic!("'{s}' is not a number"))
}

/// Each read field of the terse line is the JSON's value of the same run, in fio's units
/// (KiB, KiB/s, µs) at fio's positions.
#[test]
fn terse_fields_hold_the_json_values_at_fios_positions() {
    let sys = system();
    let (lines, v) = terse_and_json(&[
        &sys,
        "--name=r",
        "--rw=randread",
        "--bs=4k",
        "--size=8m",
        "--direct=1",
        "--iodepth=4",
    ]);
    assert_eq!(lines.len(), 1);
    let f = &lines[0];
    let at = |n: usize| f[n - 1].as_str();
    // 121 fields, then nine for each modeled drive under the target, as for each disk fio
    // sampled: its name, requests, merges, ticks, time in queue, utilization.
    let disks = v["disk_util"].as_array().expect("disk_util");
    assert!(!disks.is_empty());
    assert_eq!(f.len(), 121 + 9 * disks.len(), "{f:?}");
    for (k, d) in disks.iter().enumerate() {
        let at = |n: usize| f[121 + 9 * k + n].as_str();
        assert_eq!(at(0), d["name"].as_str().unwrap());
        assert_eq!(num(at(1)), d["read_ios"].as_f64().unwrap());
        assert!(
            (num(at(8)) - d["util"].as_f64().unwrap()).abs() < 0.01,
            "{}",
            at(8)
        );
    }
    let r = &v["jobs"][0]["read"];
    assert_eq!([at(1), at(3)], ["3", "r"]);
    assert_eq!(at(2), v["fio version"].as_str().unwrap());
    assert_eq!(num(at(6)), r["io_kbytes"].as_f64().unwrap());
    assert!(
        (num(at(7)) - r["bw"].as_f64().unwrap()).abs() <= 1.0,
        "{}",
        at(7)
    );
    assert_eq!(num(at(8)), r["iops"].as_f64().unwrap().floor());
    assert_eq!(num(at(9)), r["runtime"].as_f64().unwrap());
    let clat = &r["clat_ns"];
    assert_eq!(num(at(14)), (clat["min"].as_u64().unwrap() / 1000) as f64);
    assert_eq!(num(at(15)), (clat["max"].as_u64().unwrap() / 1000) as f64);
    assert!((num(at(16)) - clat["mean"].as_f64().unwrap() / 1000.0).abs() < 1e-3);
    // The 13th percentile is 99%: the JSON's 99.000000 in µs.
    let p99 = at(30).strip_prefix("99.000000%=").expect("99th percentile");
    let want = clat["percentile"]["99.000000"].as_u64().unwrap() / 1000;
    assert_eq!(p99.parse::<u64>().unwrap(), want);
    assert!((num(at(40)) - r["lat_ns"]["mean"].as_f64().unwrap() / 1000.0).abs() < 1e-3);
    // Nothing written; the simulated host's system CPU share.
    assert_eq!([at(47), at(48), at(49)], ["0", "0", "0"]);
    assert!((num(at(89)) - v["jobs"][0]["sys_cpu"].as_f64().unwrap()).abs() < 1e-5);
}

/// The bandwidth samples, in virtual time: terse fields 42–46 are the JSON's `bw_min`,
/// `bw_max`, `bw_agg`, `bw_mean`, `bw_dev`; one sample per 500 ms (or `bw_avg_time`) before
/// the runtime ends; a capped direction's samples sit at its cap.
#[test]
fn bandwidth_samples_fill_terse_and_json_alike() {
    let sys = system();
    let base = [
        sys.as_str(),
        "--name=s",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
        "--direct=1",
        "--rate=200k",
        "--runtime=3",
        "--time_based",
    ];
    let (lines, v) = terse_and_json(&base);
    let f = &lines[0];
    let at = |n: usize| f[n - 1].as_str();
    let r = &v["jobs"][0]["read"];
    assert_eq!(r["bw_samples"], 5, "{r}");
    assert_eq!(r["iops_samples"], 5, "{r}");
    assert_eq!(num(at(42)), r["bw_min"].as_f64().unwrap());
    assert_eq!(num(at(43)), r["bw_max"].as_f64().unwrap());
    assert!((num(at(44)) - r["bw_agg"].as_f64().unwrap()).abs() < 1e-5);
    assert!((num(at(45)) - r["bw_mean"].as_f64().unwrap()).abs() < 1e-5);
    assert!((num(at(46)) - r["bw_dev"].as_f64().unwrap()).abs() < 1e-5);
    let mean = r["bw_mean"].as_f64().unwrap();
    assert!((mean - 200.0).abs() <= 8.0, "{r}");
    assert!(
        (r["iops_mean"].as_f64().unwrap() - 50.0).abs() <= 2.0,
        "{r}"
    );
    // Nothing written: no write samples, zeros as fio.
    assert_eq!(v["jobs"][0]["write"]["bw_samples"], 0);
    assert_eq!([at(83), at(84), at(85)], ["0", "0", "0.000000%"]);
    // bw_avg_time=1000: one sample a second; a bad value is one line.
    let mut args = base.to_vec();
    args.extend(["--bw_avg_time=1000", "--output-format=json"]);
    let v = json(&assert_ok(&raidlab(&args), "bw_avg_time"));
    assert_eq!(v["jobs"][0]["read"]["bw_samples"], 2);
    assert_eq!(v["jobs"][0]["read"]["iops_samples"], 5);
    // (Under fio's name for it, as fio lists it.)
    assert_eq!(v["jobs"][0]["job options"]["bwavgtime"], "1000");
    let mut bad = base.to_vec();
    bad.push("--iops_avg_time=0");
    let err = assert_usage_error(&raidlab(&bad), "iops_avg_time=0");
    assert!(
        err.contains("iops_avg_time=0: '0' is not a whole number of milliseconds above 0"),
        "{err}"
    );
}

/// A mixed job under caps, in virtual time: each direction holds its own cap whatever
/// `rwmixread` (fio 3.33 on a file: 1 MiB/s and 4 MiB/s for rate=1m,4m at any mix), and
/// `rate_ignore_thinktime` stops the catching up after a stall.
#[test]
fn mixed_caps_and_ignored_think_time_in_virtual_time() {
    let sys = system();
    let run = |extra: &[&str]| {
        let mut args = vec![
            sys.as_str(),
            "--name=m",
            "--bs=4k",
            "--size=1g",
            "--direct=1",
            "--runtime=10",
            "--time_based",
            "--output-format=json",
        ];
        args.extend(extra);
        let v = json(&assert_ok(&raidlab(&args), "paced run"));
        let bw = |d: &str| v["jobs"][0][d]["bw_bytes"].as_f64().unwrap();
        let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
        (bw("read"), bw("write"), ios)
    };
    for mix in ["--rwmixread=50", "--rwmixread=80", "--rwmixread=20"] {
        let (r, w, _) = run(&["--rw=randrw", mix, "--rate=100k,400k"]);
        assert!((r / 102_400.0 - 1.0).abs() < 0.03, "{mix}: reads {r} B/s");
        assert!((w / 409_600.0 - 1.0).abs() < 0.03, "{mix}: writes {w} B/s");
    }
    // Reads capped only: writes take the rest of the drive's time.
    let (r, w, _) = run(&["--rw=randrw", "--rate=100k,"]);
    assert!((r / 102_400.0 - 1.0).abs() < 0.03, "reads {r} B/s");
    assert!(w > 4.0 * r, "writes {w} B/s beside reads {r} B/s");
    let think = [
        "--rw=randread",
        "--rate_iops=10",
        "--thinktime=1s",
        "--thinktime_blocks=10",
    ];
    let (_, _, caught_up) = run(&think);
    let mut ignore = think.to_vec();
    ignore.push("--rate_ignore_thinktime=1");
    let (_, _, ignored) = run(&ignore);
    // Catching up: ~10 reads a second of issuing; ignoring: ~10 per 2 s (1 s issuing, 1 s
    // thinking).
    assert!(caught_up >= 80 && ignored <= 60, "{caught_up} vs {ignored}");
}

/// `--minimal` is terse; group_reporting gives one line per group; only terse version 3 is
/// written, and others are refused in one line.
#[test]
fn minimal_and_group_reporting_and_versions() {
    let sys = system();
    let common = [
        sys.as_str(),
        "--rw=randread",
        "--bs=4k",
        "--size=2m",
        "--direct=1",
    ];
    let mut args = common.to_vec();
    args.extend(["--name=a", "--numjobs=3", "--minimal", "--terse-version=3"]);
    let out = assert_ok(&raidlab(&args), "numjobs=3 terse");
    assert_eq!(out.lines().count(), 3, "{out}");
    args.push("--group_reporting");
    let out = assert_ok(&raidlab(&args), "group_reporting terse");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert_eq!(num(out.split(';').nth(5).unwrap()), 3.0 * 2048.0);
    for (flag, want) in [
        (
            "--terse-version=2",
            "--terse-version=2: raidlab writes terse version 3 only (valid: 3)",
        ),
        ("--output-format=json,xml", "'xml' is not an output format"),
    ] {
        let mut bad = common.to_vec();
        bad.extend(["--name=a", flag]);
        let err = assert_usage_error(&raidlab(&bad), flag);
        assert!(err.contains(want), "{err}");
    }
}

/// raidlab's terse line and fio's for the same job on a file: the same number of fields, and
/// each field of the same kind (number, `P%=v` percentile, `x%` share) in the same place;
/// under each `unified_rw_reporting` (one block of direction fields for `mixed`, three for
/// `both`).
#[test]
fn terse_line_has_fios_shape_beside_fio() {
    require_tool("fio", "fio");
    let dir = scratch("raidlab-terse-");
    let file = dir.path().join("data");
    for (mode, fields) in [("none", 121), ("mixed", 80), ("both", 162)] {
        let job = [
            format!("--filename={}", file.display()),
            "--name=t".into(),
            "--size=1m".into(),
            "--bs=4k".into(),
            "--rw=randrw".into(),
            "--ioengine=psync".into(),
            "--minimal".into(),
            format!("--unified_rw_reporting={mode}"),
        ];
        let args: Vec<&str> = job.iter().map(String::as_str).collect();
        let ours = assert_ok(&raidlab(&args), "raidlab --minimal");
        let fio = Command::new("fio").args(&job).output().unwrap();
        let theirs = assert_ok(&fio, "fio --minimal");
        let kind = |s: &str| -> &'static str {
            if s.contains("%=") {
                "percentile"
            } else if s.ends_with('%') {
                "share"
            } else if s.parse::<f64>().is_ok() {
                "number"
            } else {
                "text"
            }
        };
        let shape =
            |line: &str| -> Vec<&'static str> { line.trim_end().split(';').map(kind).collect() };
        let (a, b) = (shape(&ours), shape(theirs.lines().last().unwrap()));
        assert_eq!(a.len(), fields, "{mode}: raidlab: {ours}");
        assert_eq!(a.len(), b.len(), "{mode}: raidlab: {ours}\nfio: {theirs}");
        assert_eq!(a, b, "{mode}: raidlab: {ours}\nfio: {theirs}");
        // The first block's KiB moved: the reads' (part of the 1 MiB), or under `mixed`
        // both directions' (all of it).
        let f: Vec<&str> = ours.trim_end().split(';').collect();
        assert_eq!(f[5] == "1024", mode == "mixed", "{mode}: {ours}");
    }
}

/// A simulated job's bandwidth and IOPS logs, averaged over 500 ms of virtual time, are its
/// samples, as fio's are: one line per whole interval at its end, the same count, least,
/// most and mean as the JSON's `bw_*` and `iops_*`, never more than the job moved; and a
/// second run writes the same files.
#[test]
fn simulated_averaged_logs_are_the_samples_and_repeat() {
    let dir = scratch("raidlab-simlog-");
    let name = dir.path().join("s");
    let run = || {
        let out = raidlab(&[
            &system(),
            "--name=s",
            "--rw=randread",
            "--bs=4k",
            // (A region whose rate does not settle before the job ends: the log covers the
            // whole job, none of it extended at a converged rate.)
            "--size=8m",
            "--direct=1",
            &format!("--write_bw_log={}", name.display()),
            &format!("--write_iops_log={}", name.display()),
            "--log_avg_msec=500",
            "--output-format=json",
        ]);
        let v = json(&assert_ok(&out, "simulated run with logs"));
        let bw = std::fs::read_to_string(dir.path().join("s_bw.1.log")).unwrap();
        let iops = std::fs::read_to_string(dir.path().join("s_iops.1.log")).unwrap();
        (v, bw, iops)
    };
    let (v, bw, iops) = run();
    let read = &v["jobs"][0]["read"];
    assert_eq!(v["jobs"][0]["raidlab"]["sim"]["stop_reason"], "size");
    let values = |log: &str| -> Vec<u64> {
        log.lines()
            .enumerate()
            .map(|(k, l)| {
                let cols: Vec<u64> = l.split(", ").map(|c| c.parse().unwrap()).collect();
                assert_eq!(cols.len(), 5, "{l}");
                assert_eq!(cols[2], 0, "reads only: {l}");
                assert_eq!(cols[0], (k as u64 + 1) * 500, "one line per interval: {l}");
                cols[1]
            })
            .collect()
    };
    for (kind, log) in [("bw", &bw), ("iops", &iops)] {
        let x = values(log);
        assert!(x.len() > 3, "{log}");
        let mean = x.iter().sum::<u64>() as f64 / x.len() as f64;
        assert_eq!(read[format!("{kind}_samples")], x.len(), "{kind}");
        assert_eq!(
            read[format!("{kind}_min")],
            *x.iter().min().unwrap(),
            "{kind}"
        );
        assert_eq!(
            read[format!("{kind}_max")],
            *x.iter().max().unwrap(),
            "{kind}"
        );
        let json_mean = read[format!("{kind}_mean")].as_f64().unwrap();
        assert!(
            (json_mean - mean).abs() < 1e-6 * mean,
            "{kind}: {json_mean} vs {mean}"
        );
    }
    // Each line's KiB/s over its 500 ms: what the job moved before its last, unfinished
    // interval.
    let kib: u64 = values(&bw).iter().map(|v| v / 2).sum();
    let moved = read["io_kbytes"].as_u64().unwrap();
    assert!(
        kib <= moved && kib > moved / 2,
        "{kib} KiB logged, {moved} KiB moved"
    );
    let (_, bw2, iops2) = run();
    assert_eq!(
        (bw, iops),
        (bw2, iops2),
        "virtual-time logs differ between runs"
    );
}

/// fio's `log_max_value`: a simulated job's averaged latency log gives each window's highest
/// completion latency instead of its mean: the same windows, no line below the mean's, some
/// above, and the highest of them the job's highest latency (JSON's `clat_ns.max`).
#[test]
fn log_max_value_logs_each_windows_highest_latency() {
    let dir = scratch("raidlab-simmax-");
    let run = |name: &str, extra: &[&str]| {
        let prefix = dir.path().join(name);
        let mut args = vec![
            system(),
            "--name=s".into(),
            "--rw=randread".into(),
            "--bs=4k".into(),
            "--size=8m".into(),
            "--iodepth=4".into(),
            "--direct=1".into(),
            format!("--write_lat_log={}", prefix.display()),
            "--log_avg_msec=500".into(),
            "--output-format=json".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let v = json(&assert_ok(
            &raidlab(&args),
            "simulated run with a latency log",
        ));
        let log = std::fs::read_to_string(dir.path().join(format!("{name}_clat.1.log"))).unwrap();
        let lines: Vec<(u64, u64)> = log
            .lines()
            .map(|l| {
                let c: Vec<u64> = l.split(", ").map(|c| c.parse().unwrap()).collect();
                (c[0], c[1])
            })
            .collect();
        (v, lines)
    };
    let (v, mean) = run("mean", &[]);
    let (vm, max) = run("max", &["--log_max_value=1"]);
    assert_eq!(vm["jobs"][0]["job options"]["log_max_value"], "1");
    assert!(mean.len() > 3, "{mean:?}");
    assert_eq!(mean.len(), max.len());
    for ((t, m), (t2, x)) in mean.iter().zip(&max) {
        assert_eq!(t, t2);
        assert!(x >= m, "window ending {t} ms: max {x} below mean {m}");
    }
    assert!(mean.iter().zip(&max).any(|((_, m), (_, x))| x > m));
    let highest = max.iter().map(|&(_, x)| x).max().unwrap();
    assert_eq!(
        highest,
        v["jobs"][0]["read"]["clat_ns"]["max"].as_u64().unwrap()
    );
}

/// A short real run logs every I/O in fio's format: one line per counted I/O with fio's six
/// columns under log_offset (time, value, direction 0/1, block size, offset, priority),
/// offsets inside the region, an empty slat log, and files numbered per job.
#[test]
fn real_run_logs_every_io_in_fios_format() {
    let dir = scratch("raidlab-reallog-");
    let file = dir.path().join("data");
    let name = dir.path().join("r");
    let out = raidlab(&[
        &format!("--filename={}", file.display()),
        "--name=r",
        "--size=1m",
        "--bs=4k",
        "--rw=randrw",
        "--ioengine=psync",
        "--numjobs=2",
        "--offset_increment=1m",
        &format!("--write_bw_log={}", name.display()),
        &format!("--write_iops_log={}", name.display()),
        &format!("--write_lat_log={}", name.display()),
        "--log_offset=1",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "real run with logs"));
    for (n, job) in v["jobs"].as_array().unwrap().iter().enumerate() {
        let ios = job["read"]["total_ios"].as_u64().unwrap()
            + job["write"]["total_ios"].as_u64().unwrap();
        let region = (n as u64) << 20..((n as u64) + 1) << 20;
        for kind in ["bw", "iops", "clat", "lat"] {
            let path = dir.path().join(format!("r_{kind}.{}.log", n + 1));
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(text.lines().count() as u64, ios, "{}", path.display());
            let mut dirs = [0u64; 2];
            for line in text.lines() {
                let cols: Vec<u64> = line.split(", ").map(|c| c.parse().unwrap()).collect();
                assert_eq!(cols.len(), 6, "{line}");
                assert!(cols[2] <= 1, "direction: {line}");
                dirs[cols[2] as usize] += 1;
                assert_eq!(cols[3], 4096, "{line}");
                assert!(
                    region.contains(&cols[4]) && cols[4].is_multiple_of(4096),
                    "{line}"
                );
                assert_eq!(cols[5], 0, "{line}");
                if kind == "iops" {
                    assert_eq!(cols[1], 1, "{line}");
                }
            }
            assert_eq!(
                dirs[0],
                job["read"]["total_ios"].as_u64().unwrap(),
                "{kind}"
            );
        }
        let slat = dir.path().join(format!("r_slat.{}.log", n + 1));
        assert_eq!(std::fs::read_to_string(slat).unwrap(), "");
    }
}

/// `percentile_list`, `clat_percentiles` and `lat_percentiles` shape the text and JSON.
#[test]
fn percentile_options_reach_text_and_json() {
    let sys = system();
    let base = [
        sys.as_str(),
        "--name=p",
        "--rw=randread",
        "--bs=4k",
        "--size=2m",
        "--direct=1",
        "--percentile_list=99.9:50",
        "--lat_percentiles=1",
    ];
    let text = assert_ok(&raidlab(&base), "text");
    assert!(
        text.contains("    clat percentiles (usec):\n     | 50.0th=["),
        "{text}"
    );
    assert!(
        text.contains("    lat percentiles (usec):\n     | 50.0th=["),
        "{text}"
    );
    // Without lat_percentiles=1, no total-latency percentiles in JSON (fio 3.33).
    let mut args = base[..base.len() - 1].to_vec();
    args.push("--output-format=json");
    let v = json(&assert_ok(&raidlab(&args), "json"));
    let r = &v["jobs"][0]["read"];
    assert!(r["lat_ns"].get("percentile").is_none(), "{r}");
    assert!(r["clat_ns"]["percentile"].is_object(), "{r}");
    let mut args = base.to_vec();
    args.extend(["--clat_percentiles=0", "--output-format=json"]);
    let v = json(&assert_ok(&raidlab(&args), "json"));
    let r = &v["jobs"][0]["read"];
    assert!(r["clat_ns"].get("percentile").is_none(), "{r}");
    let keys: Vec<&String> = r["lat_ns"]["percentile"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["50.000000", "99.900000"]);
    assert_eq!(v["jobs"][0]["job options"]["percentile_list"], "50.0:99.9");
    let mut bad = base.to_vec();
    bad.push("--percentile_list=50:101");
    let err = assert_usage_error(&raidlab(&bad), "percentile over 100");
    assert!(
        err.contains("percentile 101 is out of range (valid: 0 to 100)"),
        "{err}"
    );
}

/// A log in a folder that does not exist is refused before the run, in one line.
#[test]
fn log_in_a_missing_folder_is_refused_before_the_run() {
    let err = assert_usage_error(
        &raidlab(&[
            &system(),
            "--name=x",
            "--size=1m",
            "--write_bw_log=/nonexistent/dir/x",
        ]),
        "missing log folder",
    );
    assert!(
        err.contains("log file /nonexistent/dir/x_bw.1.log: no folder /nonexistent/dir"),
        "{err}"
    );
}

/// A simulated job's completion-latency histogram log is what fio's own reader of such logs
/// (`fio-histo-log-pctiles.py`, shipped with Debian's fio package) takes: it counts the
/// completions of the job's finished windows, and finds their median where the job's JSON
/// has it.
#[test]
fn histogram_log_is_read_by_fios_percentile_script() {
    require_tool("fio", "fio");
    let script_gz = Path::new("/usr/share/doc/fio/fio-histo-log-pctiles.py.gz");
    assert!(
        script_gz.is_file(),
        "{} is part of Debian's fio package",
        script_gz.display()
    );
    let dir = scratch("raidlab-histlog-");
    let script = dir.path().join("pctiles.py");
    let gz = std::fs::read(script_gz).unwrap();
    let out = Command::new("gzip")
        .arg("-dc")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(&gz)?;
            c.wait_with_output()
        })
        .expect("gzip");
    std::fs::write(&script, out.stdout).unwrap();
    let name = dir.path().join("h");
    let out = raidlab(&[
        &system(),
        "--name=h",
        "--rw=randread",
        "--bs=4k",
        "--direct=1",
        "--iodepth=4",
        "--runtime=3",
        "--time_based",
        &format!("--write_hist_log={}", name.display()),
        "--log_hist_msec=500",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "simulated run with a histogram log"));
    let read = &v["jobs"][0]["read"];
    let log = dir.path().join("h_clat_hist.1.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let logged: u64 = text
        .lines()
        .map(|l| {
            l.split(", ")
                .skip(3)
                .map(|c| c.parse::<u64>().unwrap())
                .sum::<u64>()
        })
        .sum();
    let total = read["total_ios"].as_u64().unwrap();
    // The six whole windows of its 3 s (the job runs a little past them: its last,
    // unfinished window is not logged).
    let times: Vec<&str> = text
        .lines()
        .map(|l| l.split(", ").next().unwrap())
        .collect();
    assert_eq!(times, ["500", "1000", "1500", "2000", "2500", "3000"]);
    assert!(
        logged < total && logged * 6 > total * 4,
        "{logged} of {total}"
    );
    let o = Command::new("python3")
        .arg(&script)
        .args([
            "--log-hist-msec",
            "500",
            "--time-quantum",
            "10",
            "--output-unit",
            "usec",
        ])
        .arg(&log)
        .output()
        .expect("python3");
    let report = assert_ok(&o, "fio-histo-log-pctiles.py");
    let row: Vec<f64> = report
        .lines()
        .last()
        .unwrap()
        .split(',')
        .filter_map(|f| f.trim().parse().ok())
        .collect();
    // msec-since-start, samples, min, median, 95, 99, max.
    assert_eq!(row[1] as u64, logged, "{report}");
    let p50_us = read["clat_ns"]["percentile"]["50.000000"].as_f64().unwrap() / 1000.0;
    assert!(
        (row[3] / p50_us - 1.0).abs() < 0.05,
        "script median {} µs, JSON {p50_us} µs\n{report}",
        row[3]
    );
}

/// `per_job_logs=0`: the jobs that name a log share one file without their numbers, their
/// lines one job after another (fio 3.33 writes the two jobs of 2 and 3 requests here as one
/// `pj_iops.log` of 5 lines).
#[test]
fn jobs_share_their_logs_without_per_job_logs() {
    let dir = scratch("raidlab-sharedlog-");
    let prefix = dir.path().join("pj").display().to_string();
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=null\nbs=4k\nwrite_iops_log={prefix}\nper_job_logs=0\n\
             [a]\nsize=8k\n[b]\nsize=12k\n"
        ),
    )
    .unwrap();
    let target = dir.path().join("t").display().to_string();
    let out = raidlab(&[
        &format!("--filename={target}"),
        "--job",
        &job.display().to_string(),
    ]);
    assert_ok(&out, "shared logs");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pj"))
        .collect();
    names.sort();
    assert_eq!(names, ["pj_iops.log"]);
    let text = std::fs::read_to_string(dir.path().join("pj_iops.log")).unwrap();
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(
        text.lines().all(|l| l.ends_with(", 1, 0, 4096, 0")),
        "{text}"
    );
}

/// `significant_figures` sets the digits of the text output's rates and sizes, as fio's:
/// with 10 a simulated job's rate shows whole bytes per second, with 3 three digits.
#[test]
fn significant_figures_set_the_texts_digits() {
    let job = |more: &str| {
        raidlab(&[
            &system(),
            "--name=s",
            "--rw=read",
            "--bs=1m",
            "--direct=1",
            "--size=256m",
            more,
        ])
    };
    let run = |sig: &str| {
        let text = assert_ok(
            &job(&format!("--significant_figures={sig}")),
            "significant_figures",
        );
        text.lines()
            .find(|l| l.starts_with("  read: IOPS="))
            .unwrap()
            .to_string()
    };
    let json = json(&assert_ok(&job("--output-format=json"), "json"));
    let bw = json["jobs"][0]["read"]["bw_bytes"].as_u64().unwrap();
    let ten = run("10");
    assert!(
        ten.contains(&format!("BW={bw}B/s (")) || ten.contains(&format!("BW={}B/s (", bw + 1)),
        "{ten} vs {bw}"
    );
    assert!(ten.contains("(268435456B/"), "{ten}");
    let two = run("3");
    assert!(two.contains("MiB/s") && two.contains("(256MiB/"), "{two}");
    let digits = |s: &str| {
        s.split("BW=")
            .nth(1)
            .unwrap()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .count()
    };
    assert!(digits(&two) <= 3, "{two}");
    let e = assert_usage_error(
        &raidlab(&[&system(), "--name=s", "--significant_figures=0"]),
        "significant_figures=0",
    );
    assert!(e.contains("valid: 1 to 10"), "{e}");
}

/// fio's `log_unix_epoch`: a real run's log lines carry the wall clock, ms since the Unix
/// epoch, within the run's span as the test's own clock saw it, in the same order and
/// spacing as without it; a simulated run, which has only virtual time, refuses it in one
/// line.
#[test]
fn log_unix_epoch_puts_a_real_runs_logs_on_the_wall_clock() {
    let dir = scratch("raidlab-epoch-");
    let file = dir.path().join("data");
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let run = |name: &str, extra: &[&str]| -> Vec<u64> {
        let prefix = dir.path().join(name);
        let mut args = vec![
            format!("--filename={}", file.display()),
            "--name=r".into(),
            "--size=4m".into(),
            "--bs=4k".into(),
            "--rw=randread".into(),
            format!("--write_lat_log={}", prefix.display()),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_ok(&raidlab(&args), "a run with a latency log");
        std::fs::read_to_string(dir.path().join(format!("{name}_clat.1.log")))
            .unwrap()
            .lines()
            .map(|l| l.split(", ").next().unwrap().parse().unwrap())
            .collect()
    };
    let plain = run("plain", &[]);
    assert!(
        plain.len() == 1024 && plain[0] < 60_000,
        "{:?}",
        &plain[..4]
    );
    let before = now_ms();
    let stamped = run("epoch", &["--log_unix_epoch=1"]);
    let after = now_ms();
    assert_eq!(stamped.len(), 1024);
    assert!(
        stamped.iter().all(|&t| (before..=after).contains(&t)),
        "{before}..{after}: {:?}",
        &stamped[..4]
    );
    assert!(stamped.windows(2).all(|w| w[0] <= w[1]));

    let err = assert_usage_error(
        &raidlab(&[
            &system(),
            "--name=s",
            "--rw=read",
            "--size=16m",
            &format!("--write_lat_log={}", dir.path().join("s").display()),
            "--log_unix_epoch=1",
        ]),
        "log_unix_epoch on a simulated target",
    );
    assert!(err.contains("has only virtual time"), "{err}");
}

/// fio's `unit_base=1`: the text shows rates in bits a second (binary `Mibit/s`, decimal
/// `Mbit/s` in parentheses), eight times the bytes the JSON carries; sizes stay in bytes,
/// and the JSON is the same. The units line says so. fio 3.33 prints the same unit words.
#[test]
fn unit_base_1_shows_rates_in_bits() {
    let run = |extra: &[&str]| -> (String, serde_json::Value) {
        let mut a = vec![
            system(),
            "--name=s".into(),
            "--rw=read".into(),
            "--bs=1m".into(),
            "--size=64m".into(),
            "--direct=1".into(),
            "--output-format=json,normal".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = assert_ok(&raidlab(&a), "a simulated read");
        let at = out.find("\n{").map_or(0, |k| k + 1);
        let end = out[at..].find("\n}").unwrap() + at + 2;
        (
            format!("{}{}", &out[..at], &out[end..]),
            json(&out[at..end]),
        )
    };
    let (bytes_text, bytes_json) = run(&[]);
    let (bits_text, bits_json) = run(&["--unit_base=1"]);
    let bw = bits_json["jobs"][0]["read"]["bw_bytes"].as_f64().unwrap();
    assert_eq!(
        bw,
        bytes_json["jobs"][0]["read"]["bw_bytes"].as_f64().unwrap()
    );
    assert!(bytes_text.contains("MB/s)") && !bytes_text.contains("bit/s"));
    // The job line: "BW=NMibit/s (NMbit/s)(64.0MiB/...": the decimal rate is 8 × bytes/s.
    let line = bits_text
        .lines()
        .find(|l| l.contains("read: IOPS="))
        .unwrap();
    let dec = line.split('(').nth(1).unwrap();
    let mbit: f64 = dec
        .strip_suffix("Mbit/s)")
        .unwrap_or(dec)
        .trim_end_matches("Mbit/s)")
        .parse()
        .unwrap_or_else(|_| panic!("{line}"));
    assert!(
        (mbit - bw * 8.0 / 1e6).abs() / mbit < 0.005,
        "{line} vs {bw} B/s"
    );
    assert!(
        line.contains("Mibit/s (") && line.contains("64.0MiB/"),
        "{line}"
    );
    let group = bits_text.lines().find(|l| l.contains("READ: bw=")).unwrap();
    assert!(
        group.contains("Mibit/s") && group.contains("io=64.0MiB"),
        "{group}"
    );
    assert!(bits_text.contains("Mibit/s = 2^20 bits/s"), "{bits_text}");
    assert_eq!(bits_json["jobs"][0]["job options"]["unit_base"], "1");

    let dir = scratch("raidlab-unitbase-");
    let f = format!("--filename={}", dir.path().join("f").display());
    require_tool("fio", "fio");
    let fio = Command::new("fio")
        .args([
            &f,
            "--name=u",
            "--rw=write",
            "--bs=64k",
            "--size=8m",
            "--unit_base=1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&fio.stdout);
    let line = text.lines().find(|l| l.contains("write: IOPS=")).unwrap();
    assert!(
        line.contains("ibit/s (") && line.contains("bit/s)"),
        "{line}"
    );
}

/// A job whose verify cannot read back (two instances writing the same blocks at once) says
/// so in one note, once, in a simulated run as in a real one: the same words, each naming
/// its own target.
#[test]
fn a_skipped_read_back_says_so_in_a_simulated_run_as_in_a_real_one() {
    let dir = scratch("raidlab-clash-");
    let file = dir.path().join("f");
    let common = [
        "--name=w",
        "--rw=write",
        "--bs=64k",
        "--size=4m",
        "--numjobs=2",
        "--verify=crc32c",
        "--output-format=terse",
    ];
    let note = |target: &str| {
        let mut args = vec![target];
        args.extend(common);
        let out = raidlab(&args);
        assert_ok(&out, target);
        let lines: Vec<String> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("does not read back"))
            .map(str::to_string)
            .collect();
        assert_eq!(lines.len(), 1, "{target}: {lines:?}");
        lines[0].clone()
    };
    let real_target = format!("--filename={}", file.display());
    let real = note(&real_target);
    let sim_target = system();
    let simulated = note(&sim_target);
    let say = |target: &str| {
        format!(
            "raidlab: note: job 'w': verify does not read back what it wrote: another of its \
             instances writes some of its blocks of {target} at the same time (valid: regions \
             apart, e.g. offset_increment, or a stonewall between the jobs)"
        )
    };
    assert_eq!(real, say(&file.display().to_string()));
    let lun = simulated
        .split("blocks of ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap();
    assert!(
        lun.starts_with("sim:") && lun.contains("1c-1x1.toml#"),
        "{simulated}"
    );
    assert_eq!(simulated, say(lun));
}
