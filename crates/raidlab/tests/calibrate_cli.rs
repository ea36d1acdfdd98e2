//! `raidlab calibrate` through the built binary. The key test is a round trip: calibrate a
//! simulated drive built from a catalog entry, check the fitted parameters against the
//! catalog's, then simulate the same jobs on the fitted drive and on the original. Simulated
//! targets are deterministic, so fitted values may be asserted.

mod common;

use common::*;
use std::path::Path;
use std::process::Output;

fn calibrate(args: &[&str]) -> Output {
    raidlab_sub("calibrate", args)
}

/// One drive behind a host adapter whose link is far faster than the drive (12 GB/s), so
/// the path adds little to what the probes see of the drive.
fn one_drive_system(disk: &str, extra: &str) -> String {
    format!(
        "[system]
name = \"one-{disk}\"

[host]
cpus = 2
per_io_us = 5

[[interface]]
name = \"hba0\"
link_mb_s = 12000

[[controller]]
name = \"hba\"

[[array]]
name = \"d0\"
controller = \"hba\"
level = \"single\"
disks = 1
disk = \"{disk}\"

[[lun]]
name = \"lun0\"
array = \"d0\"
path = [\"hba0\"]
{extra}"
    )
}

fn json_of(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// (IOPS, bytes/s) of one simulated job on LUN `lun`.
fn simulate_lun(system: &Path, lun: &str, job: &[&str]) -> (f64, f64) {
    let mut args = vec![
        "--name=j".to_string(),
        format!("--filename=sim:{}#{lun}", system.display()),
        "--direct=1".into(),
        "--output-format=json".into(),
    ];
    args.extend(job.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = json_of(&raidlab(&a));
    let r = &v["jobs"][0]["read"];
    (r["iops"].as_f64().unwrap(), r["bw_bytes"].as_f64().unwrap())
}

/// The fitted drive's system against the original's, LUN `lun`: each job's IOPS within 5 %.
fn assert_fitted_like(orig: &Path, fitted: &Path, lun: &str, jobs: &[&[&str]], what: &str) {
    for job in jobs {
        let (a, b) = (simulate_lun(orig, lun, job), simulate_lun(fitted, lun, job));
        assert!(
            rel(b.0, a.0) < 0.05,
            "{what} {job:?}: fitted {} IOPS, original {}",
            b.0,
            a.0
        );
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

/// The catalog's figures of a drive: rpm, random-seek average (ms), outer and inner media
/// rates (bytes/s, sectors per track × 512 B × turns a second).
struct Truth {
    rpm: f64,
    seek_avg_ms: f64,
    outer: f64,
    inner: f64,
}

fn round_trip(disk: &str, truth: Truth) {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("orig.toml");
    std::fs::write(&sys, one_drive_system(disk, "")).unwrap();
    let target = format!("sim:{}#lun0", sys.display());
    let v = json_of(&calibrate(&[
        &target,
        "--output-format=json",
        "--name=fitted",
    ]));
    assert_eq!(v["kind"], "hdd", "{v}");
    let h = &v["hdd"];
    let rpm = h["rpm"].as_f64().unwrap();
    let seek_avg_ms = h["seek_avg_ns"].as_f64().unwrap() / 1e6;
    let outer = v["media"]["outer_bytes_s"].as_f64().unwrap();
    let inner = v["media"]["inner_bytes_s"].as_f64().unwrap();
    // The rotation comes from the spread of about 2000 uniformly distributed rotational
    // waits (the 5th and 95th percentiles each carry ~0.5 % of a turn of sampling error):
    // 3 %. The average seek is the table's mean, each point a mean of ~100 reads less half
    // of that turn: 5 %. The media rates come from sequential 1 MiB reads, which also pay
    // the command overhead (0.3–0.5 % of a request): 1 %.
    assert!(rel(rpm, truth.rpm) < 0.03, "{disk}: rpm {rpm}");
    assert!(
        rel(seek_avg_ms, truth.seek_avg_ms) < 0.05,
        "{disk}: average seek {seek_avg_ms} ms"
    );
    assert!(rel(outer, truth.outer) < 0.01, "{disk}: outer {outer}");
    assert!(rel(inner, truth.inner) < 0.01, "{disk}: inner {inner}");
    assert_eq!(v["media"]["zones"], 16, "{disk}");
    assert!(
        h["read_ahead_bytes"].as_u64().unwrap() > 0,
        "{disk}: reads ahead"
    );

    // The fitted drive in the same system, in place of the catalog's.
    let stanza = v["stanza"].as_str().unwrap();
    let fitted = dir.path().join("fitted.toml");
    let text =
        one_drive_system(disk, stanza).replace(&format!("disk = \"{disk}\""), "disk = \"fitted\"");
    std::fs::write(&fitted, text).unwrap();
    // Random 4 KiB reads at depth 1 (seek and rotation), sequential 1 MiB reads (media
    // rate), random 64 KiB reads at depth 8 (queueing on top of both). The fitted drive
    // has the model's own structure, so what differs is what the fit got wrong (the turn,
    // the seek table read linearly between its points): within 5 % (measured: under 3 %).
    let jobs: &[&[&str]] = &[
        &["--rw=randread", "--bs=4k", "--number_ios=2000"],
        &["--rw=read", "--bs=1m", "--size=2g"],
        &[
            "--rw=randread",
            "--bs=64k",
            "--iodepth=8",
            "--number_ios=2000",
        ],
    ];
    assert_fitted_like(&sys, &fitted, "lun0", jobs, disk);
}

#[test]
fn round_trip_savvio_15k() {
    // Catalog: 15,000 rpm, seek 0.2/2.9/6.5 ms, 875 → 617 sectors a track.
    let rps = 15_000.0 / 60.0;
    round_trip(
        "seagate-st973451ss",
        Truth {
            rpm: 15_000.0,
            seek_avg_ms: 2.9,
            outer: 875.0 * 512.0 * rps,
            inner: 617.0 * 512.0 * rps,
        },
    );
}

#[test]
fn round_trip_maxtor_7200() {
    // Catalog: 7200 rpm, seek 0.8/8.5/17 ms, 1102 → 610 sectors a track.
    let rps = 7_200.0 / 60.0;
    round_trip(
        "maxtor-7y250m0",
        Truth {
            rpm: 7_200.0,
            seek_avg_ms: 8.5,
            outer: 1102.0 * 512.0 * rps,
            inner: 610.0 * 512.0 * rps,
        },
    );
}

#[test]
fn behind_a_slower_link_the_interface_fits_the_path() {
    // Seed 002's Maxtor on a PC's SATA port: the drive's interface and the SATA link each
    // move 150 MB/s. The port holds no data, so a read crosses both at once: the probes see
    // 150 MB/s (not the two one after the other, 75 MB/s), and a drive fitted with that
    // behaves behind the link as the original does.
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(repo.join("systems/bokhari2006/direct-1disk.toml")).unwrap();
    let sys = dir.path().join("orig.toml");
    std::fs::write(&sys, &text).unwrap();
    let target = format!("sim:{}", sys.display());
    let v = json_of(&calibrate(&[
        &target,
        "--output-format=json",
        "--name=fitted",
    ]));
    let iface = v["hdd"]["interface_bytes_s"].as_f64().unwrap();
    assert!(rel(iface, 150e6) < 0.03, "interface {iface} B/s");
    let stanza = v["stanza"].as_str().unwrap();
    let fitted = dir.path().join("fitted.toml");
    let text = text.replace("disk = \"maxtor-7y250m0\"", "disk = \"fitted\"") + "\n" + stanza;
    std::fs::write(&fitted, text).unwrap();
    // Sequential 64 KiB reads (the transfer over the link a good part of each), random
    // small ones and large sequential ones. (The fitted command overhead also holds the
    // host's cost of a request, 20 µs here, which the host then adds again: 2–3 % at 64 KiB.)
    let jobs: &[&[&str]] = &[
        &["--rw=read", "--bs=64k", "--number_ios=4000"],
        &["--rw=randread", "--bs=4k", "--number_ios=2000"],
        &["--rw=read", "--bs=1m", "--size=2g"],
    ];
    assert_fitted_like(&sys, &fitted, "disk", jobs, "behind the SATA port");
}

#[test]
fn the_same_target_gives_the_same_description() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("s.toml");
    std::fs::write(&sys, one_drive_system("seagate-st973451ss", "")).unwrap();
    let t = format!("sim:{}", sys.display());
    let a = calibrate(&[&t, "--output-format=toml", "--probes=100"]);
    let b = calibrate(&[&t, "--output-format=toml", "--probes=100"]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
    // The one visible LUN is named in the probes' target.
    assert!(stdout(&a).contains("#lun0 on "), "{}", stdout(&a));
    // One drive behind a controller without a cache: nothing to note.
    assert!(stderr(&a).is_empty(), "{}", stderr(&a));
}

/// A LUN that is an array, or sits behind a controller's cache, answers as no one drive
/// does: calibrate says so in one note (its stanza would otherwise look like a drive's).
#[test]
fn an_array_behind_a_cache_is_noted_as_not_one_drive() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("r5.toml");
    let text = one_drive_system("seagate-st973451ss", "")
        .replace(
            "level = \"single\"\ndisks = 1",
            "level = \"raid5\"\nchunk_kib = 64\ndisks = 4",
        )
        .replace(
            "name = \"hba\"\n",
            "name = \"hba\"\ncache_mib = 256\nread_ahead_kib = 256\n",
        );
    std::fs::write(&sys, text).unwrap();
    let t = format!("sim:{}", sys.display());
    let o = calibrate(&[&t, "--output-format=toml", "--probes=100"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("raidlab: note: calibrate: sim:{}#lun0 is a raid5 of 4 drives, behind controller hba's 256 MiB cache with 256 KiB of read-ahead: ", sys.display())),
        "{err}"
    );
    assert!(stdout(&o).contains("[[disk]]"), "{}", stdout(&o));
}

#[test]
fn a_flash_target_is_recognised_as_flash() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("nvme.toml");
    // A host that serves a million requests a second (8 CPUs, 1 µs each) and a drive queue
    // as deep as NVMe's (128, as systems/modern/nvme.toml), so the drive and not the host
    // caps the deep probes: what Little's law finds is then the drive's.
    let host = |s: String| {
        s.replace("cpus = 2\nper_io_us = 5", "cpus = 8\nper_io_us = 1")
            .replace("disks = 1\n", "disks = 1\ndisk_queue_depth = 128\n")
    };
    std::fs::write(&sys, host(one_drive_system("nvme-tlc-1tb", ""))).unwrap();
    let t = format!("sim:{}#lun0", sys.display());
    let v = json_of(&calibrate(&[&t, "--output-format=json", "--name=fitted"]));
    assert_eq!(v["kind"], "ssd", "{v}");
    assert_eq!(v["positioning"]["found"], false);
    let f = &v["flash"];
    // The catalog's drive: 3500 MB/s reads, 32 dies; reads at depth 128 reach its
    // parallelism, so Little's law finds the dies within a few.
    let rate = f["read_bytes_s"].as_f64().unwrap();
    assert!(rel(rate, 3500e6) < 0.05, "read rate {rate}");
    let units = f["units"].as_u64().unwrap();
    assert!((28..=36).contains(&units), "units {units}");
    // The stanza loads, and small random reads at depth 1 take what they took.
    let fitted = dir.path().join("fitted.toml");
    let text = host(one_drive_system(
        "nvme-tlc-1tb",
        v["stanza"].as_str().unwrap(),
    ))
    .replace("disk = \"nvme-tlc-1tb\"", "disk = \"fitted\"");
    std::fs::write(&fitted, text).unwrap();
    let job: &[&str] = &["--rw=randread", "--bs=4k", "--number_ios=2000"];
    assert_fitted_like(&sys, &fitted, "lun0", &[job], "flash");
}

#[test]
fn bad_input_gets_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("s.toml");
    std::fs::write(&sys, one_drive_system("seagate-st973451ss", "")).unwrap();
    let t = format!("sim:{}", sys.display());
    let missing = dir.path().join("nothing-here").display().to_string();
    let folder = dir.path().display().to_string();
    let small = dir.path().join("small");
    std::fs::write(&small, vec![0u8; 4096]).unwrap();
    let small = small.display().to_string();
    // A sparse file: its reads would measure memory, not a device.
    let sparse = dir.path().join("sparse");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let sparse = sparse.display().to_string();
    let no_lun = format!("{t}#nolun");
    for (args, what) in [
        (vec![missing.as_str()], "No such file"),
        (
            vec![folder.as_str()],
            "neither a block device nor a regular file",
        ),
        (vec!["array:a,b"], "is an array"),
        (vec![no_lun.as_str()], "no LUN 'nolun'"),
        (vec![small.as_str()], "at least 256 MiB"),
        (vec![sparse.as_str()], "100% of the 268435456 bytes"),
        (vec![t.as_str(), "--size=1q"], "--size 1q"),
        (vec![t.as_str(), "--size=1t"], "larger than"),
        (
            vec![t.as_str(), "--output-format=yaml"],
            "valid: text, toml, json",
        ),
        (vec![t.as_str(), "--probes=3"], "--probes 3"),
        (vec![t.as_str(), "--runtime=soon"], "--runtime soon"),
        (vec![t.as_str(), "--name=a b"], "not a plain name"),
    ] {
        let o = calibrate(&args);
        let line = assert_usage_error(&o, what);
        assert!(line.contains(what), "{args:?}: {line}");
    }
}

/// Ctrl-C stops a calibration with nothing fitted and exits as an interrupted run does, 130
/// (it exited 1, as for a failure).
#[test]
fn ctrl_c_stops_a_calibration_with_exit_130() {
    use std::process::{Command, Stdio};
    // On tmpfs when there is one: 256 MiB of data (not a hole) to probe.
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let f = dir.path().join("drive");
    std::fs::write(&f, vec![1u8; 256 << 20]).unwrap();
    let child = Command::new(bin())
        .args(["calibrate", f.to_str().unwrap(), "--probes", "1000000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A million requests a probe: the first stage is still running.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.trim_end()
            .ends_with("raidlab: calibrate: interrupted by Ctrl-C: nothing fitted"),
        "{err}"
    );
}
