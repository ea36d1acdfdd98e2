//! `raidlab run` against real targets through the built binary: the null engine, files, job
//! files with groups, a loop device, the embedded default, the --force rule and Ctrl-C.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn read_total(v: &serde_json::Value, dir: &str) -> (u64, u64) {
    let jobs = v["jobs"].as_array().unwrap();
    let bytes = jobs
        .iter()
        .map(|j| j[dir]["io_bytes"].as_u64().unwrap())
        .sum();
    let ios = jobs
        .iter()
        .map(|j| j[dir]["total_ios"].as_u64().unwrap())
        .sum();
    (bytes, ios)
}

#[test]
fn null_engine_counts_requests_and_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("n").display().to_string();
    let out = raidlab(&[
        "--ioengine=null",
        &format!("--filename={f}"),
        "--size=4m",
        "--bs=4k",
        "--rw=randread",
        "--iodepth=32",
        "--name=null-4k",
        "--loops=2",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "null engine"));
    assert_eq!(v["jobs"][0]["jobname"], "null-4k");
    // 4 MiB / 4 KiB = 1024 requests per pass, two passes.
    assert_eq!(read_total(&v, "read"), (8 << 20, 2048));
    assert_eq!(v["jobs"][0]["read"]["clat_ns"]["N"], 2048);
    assert_eq!(v["jobs"][0]["job options"]["ioengine"], "null");
    assert_eq!(v["jobs"][0]["raidlab"]["engine"], "null");
    assert!(v["fio version"].as_str().unwrap().starts_with("raidlab-"));
}

#[test]
fn file_target_write_then_verified_read_text_and_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data").display().to_string();
    let result = dir.path().join("result.json");
    let out = raidlab(&[
        &format!("--filename={f}"),
        "--size=2m",
        "--bs=64k",
        "--verify",
        "--ioengine=psync",
        "--name=fill",
        "--rw=write",
        "--name=check",
        "--stonewall",
        "--rw=randread",
        "--iodepth=4",
        "--output-format=json",
        "--output",
        &result.display().to_string(),
    ]);
    assert_ok(&out, "file write+read");
    assert!(out.stdout.is_empty(), "--output still printed to stdout");
    let v = json(&std::fs::read_to_string(&result).unwrap());
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["write"]["io_bytes"], 2 << 20);
    assert_eq!(jobs[1]["read"]["io_bytes"], 2 << 20);
    assert_eq!(jobs[1]["read"]["total_ios"], 32);
    assert_ne!(
        jobs[0]["groupid"], jobs[1]["groupid"],
        "stonewall starts a new group"
    );
    assert_eq!(jobs[1]["raidlab"]["verify"]["mismatches"], 0);
    assert_eq!(jobs[1]["raidlab"]["verify"]["blocks_checked"], 32);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 2 << 20);

    // Same file, text output: fio-like lines with both units labelled.
    let out = raidlab(&[
        &format!("--filename={f}"),
        "--size=2m",
        "--bs=64k",
        "--rw=read",
        "--name=again",
    ]);
    let text = assert_ok(&out, "text");
    assert!(
        text.contains("again: (groupid=0, jobs=1): err= 0:"),
        "{text}"
    );
    assert!(text.contains("  read: IOPS="), "{text}");
    // Binary and decimal units side by side; from the page cache 2 MiB can go by in under a
    // millisecond, so the rate may print in GiB/s (GB/s) rather than MiB/s (MB/s).
    let both_units = ["KiB/s (", "MiB/s (", "GiB/s ("]
        .iter()
        .any(|u| text.contains(u))
        && ["kB/s)", "MB/s)", "GB/s)"].iter().any(|u| text.contains(u));
    assert!(both_units, "{text}");
    assert!(text.contains("Run status group 0 (all jobs):"), "{text}");
    assert!(text.contains("io=2048KiB (2097kB)"), "{text}");
}

#[test]
fn job_file_with_global_sections_comments_stonewall_and_group_reporting() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("jf").display().to_string();
    let job = dir.path().join("t.fio");
    std::fs::write(
        &job,
        format!(
            "; a comment\n# another\n[global]\nfilename={f}\nsize=1m\nbs=16k\nioengine=psync\n\n[writers]\nrw=write\nnumjobs=2\noffset_increment=1m\ngroup_reporting\n\n[readers]\nstonewall\nrw=read\nnumjobs=2\noffset_increment=1m\ngroup_reporting\n"
        ),
    )
    .unwrap();
    let out = raidlab(&["--job", &job.display().to_string(), "--output-format=json"]);
    let v = json(&assert_ok(&out, "job file"));
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(
        jobs.len(),
        2,
        "group_reporting folds each pair into one result: {v}"
    );
    assert_eq!(jobs[0]["jobname"], "writers");
    assert_eq!(jobs[1]["jobname"], "readers");
    assert_eq!(jobs[0]["write"]["io_bytes"], 2 << 20);
    assert_eq!(jobs[1]["read"]["io_bytes"], 2 << 20);
    assert_eq!(jobs[0]["raidlab"]["instances"], 2);
    assert_ne!(jobs[0]["groupid"], jobs[1]["groupid"]);
    // Options before --job are the file's defaults; a bare job file argument works like --job.
    let out = raidlab(&[
        "--iodepth=4",
        &job.display().to_string(),
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "bare job file"));
    assert_eq!(v["jobs"][1]["job options"]["iodepth"], "4");
}

#[test]
fn writing_over_an_ext4_signature_needs_force() {
    require_tool("mkfs.ext4", "e2fsprogs");
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("fs.img");
    std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    let st = Command::new("mkfs.ext4")
        .args(["-F", "-q"])
        .arg(&img)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "mkfs.ext4 failed");
    let before = std::fs::read(&img).unwrap();
    let target = format!("--filename={}", img.display());
    let out = raidlab(&[
        &target,
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--name=clobber",
    ]);
    let err = assert_usage_error(&out, "write over ext4");
    assert!(err.contains("ext4"), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(
        std::fs::read(&img).unwrap(),
        before,
        "refused run still changed the file"
    );
    // Reading is harmless and allowed.
    assert_ok(
        &raidlab(&[&target, "--rw=read", "--bs=64k", "--size=1m", "--name=look"]),
        "read ext4 image",
    );
    let out = raidlab(&[
        &target,
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--name=clobber",
        "--force",
    ]);
    assert_ok(&out, "write with --force");
    assert_ne!(std::fs::read(&img).unwrap(), before);
}

/// A loop device over a file in a temporary folder, detached when dropped.
struct Loop(String);
impl Loop {
    /// Attach `backing` (needs root and losetup).
    fn attach(backing: &Path) -> Loop {
        assert!(is_root(), "this test attaches a loop device and needs root");
        require_tool("losetup", "mount");
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(backing)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Loop(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The device's `queue/discard_max_bytes` (0: it takes no discards).
    fn discard_max_bytes(&self) -> u64 {
        let name = self.0.trim_start_matches("/dev/");
        let path = format!("/sys/block/{name}/queue/discard_max_bytes");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        text.trim().parse().unwrap()
    }

    /// Attach `backing` to a loop device that takes discards. A loop device's discards,
    /// once turned off through sysfs (`discard_max_bytes` set to 0), stay off until the
    /// machine restarts, whatever file it is attached to next; such devices are held
    /// (attached to `backing` too) while the next free one is tried, and given back after.
    fn attach_discarding(backing: &Path) -> Loop {
        let mut held = Vec::new();
        for _ in 0..16 {
            let dev = Loop::attach(backing);
            if dev.discard_max_bytes() > 0 {
                return dev;
            }
            held.push(dev);
        }
        let names: Vec<&str> = held.iter().map(|l| l.0.as_str()).collect();
        panic!("no loop device takes discards: {names:?} have queue/discard_max_bytes 0");
    }
}
impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A loop device over a sparse file reads its holes without reaching a disk, as the file
/// does: a read job over it is warned about, naming the backing file; once written, not.
#[test]
fn reading_a_loop_device_over_a_sparse_file_warns() {
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("sparse.img");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let dev = Loop::attach(&backing);
    let target = format!("--filename={}", dev.0);
    let read = || {
        let out = raidlab(&[&target, "--bs=1m", "--name=r", "--rw=read", "--size=4m"]);
        assert_ok(&out, "read the loop device");
        stderr(&out)
    };
    let err = read();
    let want = format!(
        "raidlab: warning: {}: 100% of the region read lies in holes of the loop device's backing file {}",
        dev.0,
        backing.display()
    );
    assert!(err.contains(&want), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("warning")).count(),
        1,
        "{err}"
    );
    let out = raidlab(&[
        &target,
        "--bs=1m",
        "--name=w",
        "--rw=write",
        "--size=4m",
        "--direct=1",
        "--force",
    ]);
    assert_ok(&out, "write the loop device");
    let err = read();
    assert!(!err.contains("holes"), "{err}");
}

#[test]
fn loop_device_target() {
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("loop.img");
    std::fs::write(&backing, vec![0u8; 16 << 20]).unwrap();
    let dev = Loop::attach(&backing);
    let target = format!("--filename={}", dev.0);
    let out = raidlab(&[
        &target,
        "--direct=1",
        "--bs=4k",
        "--size=8m",
        "--verify",
        "--name=w",
        "--rw=write",
        "--iodepth=16",
        "--name=r",
        "--stonewall",
        "--rw=read",
        "--iodepth=4",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "loop device"));
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 8 << 20);
    assert_eq!(v["jobs"][1]["read"]["io_bytes"], 8 << 20);
    assert_eq!(v["jobs"][1]["raidlab"]["verify"]["mismatches"], 0);
    assert_eq!(v["jobs"][1]["raidlab"]["target"], dev.0);
    // I/O stayed inside [0, 8 MiB): the rest of the backing file is still zero.
    let data = std::fs::read(&backing).unwrap();
    assert!(
        data[8 << 20..].iter().all(|&b| b == 0),
        "I/O left the region"
    );
}

#[test]
fn embedded_default_measures_a_scratch_file_and_removes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = raidlab_with(
        &["--output-format=json"],
        &[("TMPDIR", tmp.path())],
        Duration::from_secs(300),
    );
    let v = json(&assert_ok(&out, "embedded default"));
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    assert_eq!(jobs[0]["write"]["io_bytes"], 256 << 20);
    assert_eq!(jobs[1]["read"]["io_bytes"], 256 << 20);
    assert!(jobs[2]["read"]["total_ios"].as_u64().unwrap() > 0);
    assert_eq!(jobs[2]["job options"]["bs"], "4k");
    assert_eq!(jobs[2]["job options"]["iodepth"], "32");
    let err = stderr(&out);
    assert!(err.contains("embedded default"), "{err}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "scratch folder left behind: {left:?}");
}

#[test]
fn embedded_default_is_removed_when_the_run_fails() {
    // A scratch folder on a filesystem that cannot hold 256 MiB would fail; simpler: an
    // unwritable TMPDIR fails before anything is created, and says so in one line.
    let out = raidlab_with(
        &[],
        &[("TMPDIR", Path::new("/proc"))],
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_one_line(&stderr(&out), "unwritable TMPDIR");
    assert!(
        stderr(&out).contains("temporary folder"),
        "{}",
        stderr(&out)
    );
}

/// Ctrl-C (SIGINT) and SIGTERM, as fio takes both, stop the run after the I/O in flight and
/// the results still print; the exit code is 128 + the signal (130, 143), so a script does not
/// take the cut-short run for a whole one (it exited 0).
#[test]
fn ctrl_c_stops_the_run_and_still_prints_results() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c").display().to_string();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let child = Command::new(bin())
            .args([
                "run",
                "--ioengine=null",
                &format!("--filename={f}"),
                "--size=1m",
                "--runtime=60s",
                "--time_based",
            ])
            .args(["--name=forever", "--output-format=json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let start = std::time::Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "did not stop promptly"
        );
        assert_eq!(out.status.code(), Some(128 + sig), "{}", stderr(&out));
        let said = if sig == libc::SIGINT {
            "Ctrl-C"
        } else {
            "SIGTERM"
        };
        assert!(
            stderr(&out).trim_end().ends_with(&format!(
                "raidlab: run stopped by {said}: the results cover what ran until then"
            )),
            "{}",
            stderr(&out)
        );
        let v = json(&stdout(&out));
        assert!(v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
        assert!(
            v["jobs"][0]["raidlab"]["stopped"].is_string(),
            "{}",
            v["jobs"][0]["raidlab"]
        );
        if sig == libc::SIGTERM {
            assert!(
                stderr(&out).contains("terminating on SIGTERM"),
                "{}",
                stderr(&out)
            );
        }
    }
}

/// Ctrl-C while the target is being laid out, before any job ran, exits as an interrupted
/// run does (130), the half-laid-out file removed; it exited 1, as for a failure.
#[test]
fn ctrl_c_during_the_layout_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big");
    let child = Command::new(bin())
        .args(["run", "--name=j", "--rw=write", "--bs=1m", "--size=4g"])
        .arg(format!("--filename={}", f.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The layout has begun once the file exists; 4 GiB takes it seconds more.
    assert!(
        wait_for_entry(dir.path(), Duration::from_secs(60)),
        "no file laid out"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!f.exists(), "the half-laid-out file was left");
}

/// `--directory` names a folder that exists: a file there, or nothing, is refused in one
/// line saying so, exit 2 (a file was "cannot check whether F/j.0.0 is in use: Not a
/// directory", exit 1). A folder works, and a folder given as --filename points to it.
#[test]
fn directory_must_be_an_existing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let missing = dir.path().join("missing");
    for (d, said) in [(&file, "is not a folder"), (&missing, "does not exist")] {
        let out = raidlab(&[
            "--name=j",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            &format!("--directory={}", d.display()),
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let want = format!("job 'j': directory={} {said} (valid: ", d.display());
        assert_one_line(&stderr(&out), &want);
        assert!(stderr(&out).contains(&want), "{}", stderr(&out));
        assert!(!missing.exists());
    }
    let out = raidlab(&[
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        &format!("--filename={}", dir.path().display()),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let want = format!("--directory={}", dir.path().display());
    assert_one_line(&stderr(&out), &want);
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
    let out = raidlab(&[
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        &format!("--directory={}", dir.path().display()),
    ]);
    assert_ok(&out, "a folder as --directory");
    assert!(dir.path().join("j.0.0").is_file());
}

#[test]
fn simulated_target_runs_in_virtual_time_with_component_extras() {
    let system = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../systems/llnl2000/fig11.toml");
    assert!(system.is_file(), "system file {} missing", system.display());
    let target = format!("--filename=sim:{}", system.display());
    let out = raidlab(&[
        &target,
        "--rw=write",
        "--bs=1m",
        "--size=64m",
        "--name=seq",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "simulated run"));
    let job = &v["jobs"][0];
    assert_eq!(job["write"]["io_bytes"], 64 << 20);
    assert_eq!(job["raidlab"]["engine"], "sim");
    assert!(
        job["raidlab"]["sim"]["components"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    assert!(job["write"]["bw_bytes"].as_u64().unwrap() > 0);
    // Text output shows the simulation's extras.
    let out = raidlab(&[&target, "--rw=write", "--bs=1m", "--size=64m", "--name=seq"]);
    let text = assert_ok(&out, "simulated text");
    assert!(text.contains("simulated    : system="), "{text}");
    assert!(text.contains("bottleneck   :"), "{text}");
    // The simulated host has no page cache: a buffered job (fio's default) is told, once, that
    // it ran as direct I/O; a direct one is not.
    let note = "a simulated host has no page cache";
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches(note).count(), 1, "{err}");
    let out = raidlab(&[&target, "--rw=write", "--bs=1m", "--size=64m", "--direct=1"]);
    assert_ok(&out, "simulated direct");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(note), "{err}");
    // A host with a page cache runs the buffered job through it, says what the cache did,
    // and gives no note.
    let dir = tempfile::tempdir().unwrap();
    let sys = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../systems/linuxraid2010");
    let comps: String = std::fs::read_to_string(sys.join("components.toml"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("page_cache_mib") && !l.starts_with("copy_mb_s"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(
        dir.path().join("components.toml"),
        comps.replacen(
            "[host]\n",
            "[host]\npage_cache_mib = 512\ncopy_mb_s = 2000\n",
            1,
        ),
    )
    .unwrap();
    std::fs::copy(sys.join("raid0-4d-c64.toml"), dir.path().join("r0.toml")).unwrap();
    let cached = format!("--filename=sim:{}", dir.path().join("r0.toml").display());
    let out = raidlab(&[&cached, "--rw=read", "--bs=4k", "--size=64m", "--name=seq"]);
    let text = assert_ok(&out, "simulated page cache");
    assert!(
        text.contains("page cache   : 512 MiB, read hits="),
        "{text}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(note), "{err}");
    // A system file that does not exist is bad input.
    let out = raidlab(&[
        "--filename=sim:/nonexistent/system.toml",
        "--rw=read",
        "--size=1m",
        "--name=x",
    ]);
    assert_usage_error(&out, "missing system file");
}

/// A system file with several mistakes: `run`, `explain` and `sweep` give each on its own
/// `raidlab: ` line, the file's line where it is, and exit 2.
#[test]
fn every_error_of_a_system_file_is_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("s.toml");
    std::fs::write(
        &sys,
        "[system]\nname = \"x\"\n[host]\ncpus = 0\n\
[[controller]]\nname = \"c\"\nwrite_mb_s = 0\n\
[[array]]\nname = \"a\"\ncontroller = \"c\"\nlevel = \"raid7\"\ndisks = 4\ndisk = \"compaq-18g-10k\"\n\
[[lun]]\nname = \"l\"\narray = \"b\"\n",
    )
    .unwrap();
    let s = sys.display().to_string();
    let want = [
        format!("raidlab: {s}:4: host: cpus = 0: valid is 1 to 1024 CPUs"),
        format!("raidlab: {s}:7: controller 'c': write_mb_s = 0: valid is 0.001 to 1000000 MB/s"),
        format!("raidlab: {s}:11: array 'a': level 'raid7' is not known (valid: "),
        format!("raidlab: {s}:16: lun 'l': array 'b' is not defined"),
    ];
    let check = |out: &std::process::Output, what: &str| {
        let err = stderr(out);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), want.len(), "{what}: {err}");
        for (l, w) in lines.iter().zip(&want) {
            assert!(l.starts_with(w.as_str()), "{what}: wanted {w}…, got {l}");
        }
    };
    let target = format!("--filename=sim:{s}");
    check(
        &raidlab(&[&target, "--rw=read", "--size=1m", "--name=x"]),
        "run",
    );
    let explain = std::process::Command::new(bin())
        .args(["explain", &s])
        .output()
        .unwrap();
    check(&explain, "explain");
    // A sweep puts the point in front of each.
    let exp = dir.path().join("e.toml");
    std::fs::write(
        &exp,
        "name = \"e\"\n[workload]\nrw = \"read\"\nbs = \"1m\"\nsize = \"1m\"\n\
[target]\nsystem = \"s.toml\"\n",
    )
    .unwrap();
    let sweep = std::process::Command::new(bin())
        .arg("sweep")
        .arg(&exp)
        .arg("--db")
        .arg(dir.path().join("r.db"))
        .output()
        .unwrap();
    let want: Vec<String> = want
        .iter()
        .map(|w| w.replacen("raidlab: ", "raidlab: point 0 rep 0: ", 1))
        .collect();
    let err = stderr(&sweep);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("raidlab: ")).collect();
    assert_eq!(sweep.status.code(), Some(2), "sweep: {err}");
    assert_eq!(lines.len(), want.len(), "sweep: {err}");
    for (l, w) in lines.iter().zip(&want) {
        assert!(l.starts_with(w.as_str()), "sweep: wanted {w}…, got {l}");
    }
}

/// A RAID 5 (64 KiB chunks) of `n` new member files of `size` bytes in `dir`, created
/// clean and closed: its member paths.
fn clean_raid5(dir: &Path, n: usize, size: u64) -> Vec<std::path::PathBuf> {
    use raidlab_array::{create, CreateOptions, CreateSpec, MemberSpec};
    let members: Vec<_> = (0..n).map(|i| dir.join(format!("m{i}"))).collect();
    let spec = CreateSpec::new(
        "5",
        None,
        Some(64 << 10),
        members.iter().cloned().map(MemberSpec::Path).collect(),
    )
    .unwrap();
    let arr = create(
        &spec,
        &CreateOptions {
            size: Some(size),
            assume_clean: true,
            ..Default::default()
        },
    )
    .unwrap();
    arr.close().unwrap();
    members
}

#[test]
fn array_target_is_written_and_verified_through_the_user_space_array() {
    let dir = tempfile::tempdir().unwrap();
    let members = clean_raid5(dir.path(), 4, 16 << 20);
    let list = members
        .iter()
        .map(|m| m.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let target = format!("--filename=array:{list}");
    let out = raidlab(&[
        &target,
        "--size=8m",
        "--bs=64k",
        "--verify",
        "--name=w",
        "--rw=write",
        "--iodepth=8",
        "--name=r",
        "--stonewall",
        "--rw=randread",
        "--iodepth=8",
        "--output-format=json",
    ]);
    let v = json(&assert_ok(&out, "array target"));
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 8 << 20);
    assert_eq!(v["jobs"][1]["raidlab"]["verify"]["mismatches"], 0);
    assert!(
        v["jobs"][1]["raidlab"]["verify"]["blocks_checked"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(v["jobs"][0]["raidlab"]["target"], format!("array:{list}"));
    // Created with --assume-clean, its sparse members are holes where nothing was written:
    // the read of the written region is not warned about (the write came first, in an
    // earlier group), a read of a region never written is.
    assert!(!stderr(&out).contains("holes"), "{}", stderr(&out));
    let out = raidlab(&[
        &target,
        "--offset=16m",
        "--size=8m",
        "--bs=1m",
        "--name=unwritten",
        "--rw=read",
    ]);
    assert_ok(&out, "read of a region never written");
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "raidlab: warning: array:{list}: 100% of the region read lies in holes of the files it is stored on; reads of holes do not reach the devices"
        )),
        "{err}"
    );
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    // Members that are not an array: bad input, one line.
    let junk = dir.path().join("junk");
    std::fs::write(&junk, vec![0u8; 1 << 20]).unwrap();
    let out = raidlab(&[
        &format!("--filename=array:{}", junk.display()),
        "--rw=read",
        "--size=64k",
        "--name=x",
    ]);
    let code = out.status.code();
    assert!(matches!(code, Some(1) | Some(2)), "{code:?}");
    assert_one_line(&stderr(&out), "not an array");
}

/// One array named two ways in one run (its members in another order, or under another
/// path) would be assembled twice in one process, two writers of its stripes and metadata
/// that do not know of each other: parity goes stale and blocks are lost. Refused, one line.
#[test]
fn one_array_named_two_ways_in_one_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let members = clean_raid5(dir.path(), 3, 8 << 20);
    let names: Vec<String> = members.iter().map(|m| m.display().to_string()).collect();
    let list = names.join(",");
    let reversed = names.iter().rev().cloned().collect::<Vec<_>>().join(",");
    let out = raidlab(&[
        &format!("--filename=array:{list}:array:{reversed}"),
        "--rw=randwrite",
        "--bs=4k",
        "--size=1m",
        "--name=w",
    ]);
    let err = assert_usage_error(&out, "one array under two names");
    assert!(
        err.contains(&format!("array:{reversed}")) && err.contains(&format!("array:{list}")),
        "{err}"
    );
    // The same text twice is one target, opened once, as before.
    let out = raidlab(&[
        &format!("--filename=array:{list}:array:{list}"),
        "--rw=randwrite",
        "--bs=4k",
        "--size=1m",
        "--name=w",
    ]);
    assert_ok(&out, "one array under one name, twice");
}

/// Wait until `dir` has an entry (the scratch folder), up to `limit`.
fn wait_for_entry(dir: &Path, limit: Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if std::fs::read_dir(dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn ctrl_c_on_the_embedded_default_prints_results_and_removes_the_scratch_folder() {
    for presses in [1, 2] {
        let tmp = tempfile::tempdir().unwrap();
        let child = Command::new(bin())
            .args(["run", "--output-format=json"])
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert!(
            wait_for_entry(tmp.path(), Duration::from_secs(30)),
            "no scratch folder appeared"
        );
        // Let the scratch file be laid out so the jobs are running when Ctrl-C comes.
        let full = |d: &Path| -> bool {
            std::fs::read_dir(d)
                .unwrap()
                .filter_map(Result::ok)
                .any(|e| {
                    std::fs::metadata(e.path().join("scratch"))
                        .map(|m| m.len() >= 256 << 20)
                        .unwrap_or(false)
                })
        };
        let start = std::time::Instant::now();
        while !full(tmp.path()) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(1500));
        for _ in 0..presses {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let code = out.status.code();
        if presses == 1 {
            assert_eq!(code, Some(130), "one Ctrl-C: {}", stderr(&out));
            let v = json(&stdout(&out));
            let jobs = v["jobs"].as_array().unwrap();
            assert!(
                jobs.iter().any(|j| j["raidlab"]["stopped"].is_string()),
                "no job marked stopped: {v}"
            );
        } else {
            // The second press exits at once (130), unless the run had already finished.
            assert!(
                matches!(code, Some(130) | Some(0)),
                "two Ctrl-C: {code:?}; {}",
                stderr(&out)
            );
        }
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(
            left.is_empty(),
            "{presses} Ctrl-C: scratch left behind: {left:?}"
        );
    }
}

/// Whether `dir` takes an O_DIRECT open and aligned write (the same probe, written apart).
fn direct_works(dir: &Path) -> bool {
    let probe = dir.join("probe");
    let script = "import mmap, os, sys\nfd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_DIRECT)\nbuf = mmap.mmap(-1, 4096)\nos.pwrite(fd, buf, 0)\n";
    let ok = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&probe)
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    let _ = std::fs::remove_file(&probe);
    ok
}

#[test]
fn embedded_default_uses_direct_io_where_the_filesystem_takes_it_and_says_when_not() {
    require_tool("python3", "python3");
    // tmpfs: refuses O_DIRECT before Linux 6.6, takes it since.
    let shm = Path::new("/dev/shm");
    assert!(shm.is_dir(), "this test needs /dev/shm (tmpfs)");
    let tmp = tempfile::tempdir_in(shm).unwrap();
    let expect_direct = direct_works(tmp.path());
    let out = raidlab_with(
        &["--output-format=json"],
        &[("TMPDIR", tmp.path())],
        Duration::from_secs(300),
    );
    let v = json(&assert_ok(&out, "embedded default on tmpfs"));
    let want = if expect_direct { "1" } else { "0" };
    assert!(
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|j| j["job options"]["direct"] == want),
        "direct should be {want}"
    );
    assert_eq!(
        stderr(&out).contains("no direct I/O"),
        !expect_direct,
        "{}",
        stderr(&out)
    );
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "scratch folder left behind"
    );
}

/// A read job over a file that is mostly holes (made with truncate, never written) is warned
/// about in one line: reads of holes are answered without the device. Once per file however
/// many jobs read it; not where the region read was written, nor where an earlier group of
/// the same run writes it first, nor below a tenth of holes.
#[test]
fn reading_a_sparse_file_warns_that_holes_do_not_reach_the_device() {
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let sparse = |name: &str, written: u64| {
        let p = dir.path().join(name);
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(4 << 20).unwrap();
        f.write_all_at(&vec![1u8; written as usize], 0).unwrap();
        p.display().to_string()
    };
    let holes_line = |f: &str, pct: u32| {
        format!(
            "raidlab: warning: {f}: {pct}% of the region read is holes; reads of holes do not reach the device — write it first (e.g. a write job) to measure the device"
        )
    };
    let read = |f: &str, extra: &[&str]| {
        let target = format!("--filename={f}");
        let mut args = vec![target.as_str(), "--bs=1m", "--name=r", "--rw=read"];
        args.extend_from_slice(extra);
        let out = raidlab(&args);
        assert_ok(&out, "read");
        stderr(&out)
    };
    let all = sparse("all-holes", 0);
    let err = read(&all, &["--name=again", "--rw=randread"]);
    assert!(err.contains(&holes_line(&all, 100)), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("warning")).count(),
        1,
        "{err}"
    );
    // A quarter written: the whole file is 75% holes, its first MiB none.
    let quarter = sparse("quarter", 1 << 20);
    let err = read(&quarter, &[]);
    assert!(err.contains(&holes_line(&quarter, 75)), "{err}");
    let err = read(&quarter, &["--size=1m"]);
    assert!(!err.contains("holes"), "{err}");
    // Under a tenth of holes: no warning.
    let most = sparse("most", (4 << 20) - (256 << 10));
    let err = read(&most, &[]);
    assert!(!err.contains("holes"), "{err}");
    // Written by the group before the read: no warning, and afterwards none either.
    let fresh = sparse("fresh", 0);
    let target = format!("--filename={fresh}");
    let out = raidlab(&[
        &target,
        "--bs=1m",
        "--name=w",
        "--rw=write",
        "--name=r",
        "--stonewall",
        "--rw=read",
    ]);
    assert_ok(&out, "write then read");
    assert!(!stderr(&out).contains("holes"), "{}", stderr(&out));
    let err = read(&fresh, &[]);
    assert!(!err.contains("holes"), "{err}");
    // Written in the same group as it is read (a mixed job's own writes, or a writer beside
    // the reader): the reads before the writes read holes, and the line says so.
    let in_group = |f: &str| {
        format!(
            "raidlab: warning: {f}: 100% of the region read is holes; reads of holes do not reach the device, and this group's writes fill them only as they go — write it first, in an earlier group (a write job, then stonewall), to measure the device"
        )
    };
    let mixed = sparse("mixed", 0);
    let err = read(&mixed, &["--rw=randrw"]);
    assert!(err.contains(&in_group(&mixed)), "{err}");
    let beside = sparse("beside", 0);
    let err = read(&beside, &["--name=w", "--rw=write"]);
    assert!(err.contains(&in_group(&beside)), "{err}");
    // A job that only writes reads nothing: no warning.
    let target = format!("--filename={}", sparse("written", 0));
    let out = raidlab(&[&target, "--bs=1m", "--name=w", "--rw=write"]);
    assert_ok(&out, "write");
    assert!(!stderr(&out).contains("holes"), "{}", stderr(&out));
}

/// fio's disk statistics: a run on a loop device reports what that device did (text, JSON
/// and terse, as fio does), `disk_util=0` leaves them out, an array's run reports each of
/// its members' devices, and a file in tmpfs, on no disk, reports none.
#[test]
fn a_run_reports_the_disks_under_its_targets() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let backing = |n: &str| {
        let p = dir.path().join(n);
        std::fs::File::create(&p)
            .unwrap()
            .set_len(16 << 20)
            .unwrap();
        p
    };
    let (a, b) = (
        Loop::attach(&backing("a.img")),
        Loop::attach(&backing("b.img")),
    );
    let name = |l: &Loop| l.0.trim_start_matches("/dev/").to_string();
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["--name=w", "--rw=write", "--bs=64k", "--direct=1"];
        all.extend_from_slice(args);
        all.push("--output-format=json");
        let out = raidlab(&all);
        assert_ok(&out, "write");
        serde_json::from_str(&stdout(&out)).unwrap()
    };

    // 64 writes of 64 KiB: the device counts each (or merges some into others), 4 MiB.
    let v = json(&[&format!("--filename={}", a.0), "--size=4m"]);
    let disks = v["disk_util"].as_array().expect("a disk_util list");
    assert_eq!(disks.len(), 1, "{disks:?}");
    let d = &disks[0];
    assert_eq!(d["name"], name(&a));
    let (ios, merges) = (
        d["write_ios"].as_u64().unwrap(),
        d["write_merges"].as_u64().unwrap(),
    );
    assert!(ios >= 1 && ios + merges >= 64, "{d}");
    let util = d["util"].as_f64().unwrap();
    assert!((0.0..=100.0).contains(&util), "{d}");

    let write_a = |format: &str| {
        let target = format!("--filename={}", a.0);
        let args = [
            &target,
            "--name=w",
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            format,
        ];
        stdout(&raidlab(&args))
    };
    let text = write_a("--output-format=normal");
    let line = format!("Disk stats (read/write):\n  {}: ios=", name(&a));
    assert!(text.contains(&line), "{text}");
    let terse = write_a("--output-format=terse");
    let f: Vec<&str> = terse.trim_end().split(';').collect();
    assert_eq!(f.len(), 130, "{terse}");
    assert_eq!(f[121], name(&a));

    // Off, as fio's option turns it off.
    let off = json(&[&format!("--filename={}", a.0), "--size=1m", "--disk_util=0"]);
    assert!(off.get("disk_util").is_none(), "{off}");

    // An array over both devices: each member's device, once.
    let members = format!("{},{}", a.0, b.0);
    let out = Command::new(bin())
        .args([
            "array", "create", "--force", "--level", "0", "--chunk", "64k", "--size", "8m",
        ])
        .args([&a.0, &b.0])
        .output()
        .unwrap();
    assert_ok(&out, "create the array");
    let v = json(&[&format!("--filename=array:{members}"), "--size=4m"]);
    let mut names: Vec<String> = v["disk_util"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    let mut want = vec![name(&a), name(&b)];
    want.sort();
    assert_eq!(names, want);
    for d in v["disk_util"].as_array().unwrap() {
        assert!(d["write_ios"].as_u64().unwrap() >= 1, "{d}");
    }

    // A file in tmpfs lies on no disk.
    let f = dir.path().join("plain").display().to_string();
    let v = json(&[&format!("--filename={f}"), "--size=1m", "--direct=0"]);
    assert!(v.get("disk_util").is_none(), "{v}");
}

/// fio's `fadvise_hint`, seen in the device's counters: buffered 4 KiB reads of a loop
/// device advised random reach it one request a block (no read-ahead), advised sequential
/// in a few large read-ahead requests; by default a random pattern is advised random, a
/// sequential one sequential, as fio advises (fio 3.33: 1024 requests for 4 MiB read at
/// random, 13 read in order).
#[test]
fn fadvise_hint_sets_the_read_ahead_a_job_gets() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let backing = dir.path().join("ra.img");
    std::fs::write(&backing, vec![7u8; 8 << 20]).unwrap();
    let dev = Loop::attach(&backing);
    let reads = |rw: &str, hint: Option<&str>| -> u64 {
        let mut args = vec![
            format!("--filename={}", dev.0),
            "--name=r".into(),
            format!("--rw={rw}"),
            "--bs=4k".into(),
            "--size=1m".into(),
            "--ioengine=psync".into(),
            "--output-format=json".into(),
        ];
        args.extend(hint.map(|h| format!("--fadvise_hint={h}")));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = raidlab(&args);
        assert_ok(&out, "buffered reads");
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        v["disk_util"][0]["read_ios"].as_u64().unwrap()
    };
    // 256 blocks of 4 KiB.
    assert!(reads("read", Some("random")) >= 250);
    assert!(reads("randread", None) >= 250);
    assert!(reads("read", Some("sequential")) <= 32);
    assert!(reads("read", None) <= 32);
    // Without advice the kernel does not read ahead of random reads either, but reads
    // ahead of sequential ones.
    assert!(reads("read", Some("0")) <= 32);
}

/// fio's `pre_read`: a buffered job's region is read into the page cache before it starts,
/// so its 4 KiB random reads find memory, not the device (which sees the pre-read's few
/// large requests); without it they reach the device one by one. It is refused with
/// direct=1, which bypasses the cache, and on a raidlab array, which has none.
#[test]
fn pre_read_fills_the_cache_before_the_job() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let backing = dir.path().join("pr.img");
    std::fs::write(&backing, vec![7u8; 8 << 20]).unwrap();
    let dev = Loop::attach(&backing);
    let target = format!("--filename={}", dev.0);
    let reads = |pre: &str| -> u64 {
        let args = [
            target.as_str(),
            "--name=r",
            "--rw=randread",
            "--bs=4k",
            "--size=1m",
            "--ioengine=psync",
            pre,
            "--output-format=json",
        ];
        let out = raidlab(&args);
        assert_ok(&out, "buffered random reads");
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["jobs"][0]["read"]["total_ios"], 256);
        v["disk_util"][0]["read_ios"].as_u64().unwrap()
    };
    assert!(reads("--pre_read=0") >= 250);
    assert!(reads("--pre_read=1") <= 32);

    let err = assert_usage_error(
        &raidlab(&[
            &target,
            "--name=r",
            "--rw=read",
            "--size=1m",
            "--direct=1",
            "--pre_read",
        ]),
        "pre_read with direct=1",
    );
    assert!(err.contains("pre_read fills the page cache"), "{err}");
    let members: Vec<String> = (0..2)
        .map(|i| dir.path().join(format!("m{i}")).display().to_string())
        .collect();
    let out = Command::new(bin())
        .args(["array", "create", "--level", "1", "--size", "4m"])
        .args(&members)
        .output()
        .unwrap();
    assert_ok(&out, "create the array");
    let err = assert_usage_error(
        &raidlab(&[
            &format!("--filename=array:{}", members.join(",")),
            "--name=r",
            "--rw=read",
            "--size=1m",
            "--pre_read=1",
        ]),
        "pre_read on an array",
    );
    assert!(err.contains("a raidlab array has none"), "{err}");
}

/// Bytes of `path` the file system has allocated (st_blocks × 512).
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

/// Trims release what they cover: a file's range is punched out (reads zeros, its size
/// kept, its blocks given back), a device's range discarded (a loop device over a file
/// punches its backing file). Results count trims apart in text, JSON and terse (version 3
/// has no trim fields: the line keeps its length); `trimwrite` writes each block after
/// trimming it, so it leaves no zeros. Trims destroy data as writes do: somebody else's
/// file needs --force. (A device that takes no discards is refused before the run: the
/// unit test of `target::discards_refused`. Turning a loop device's discards off through
/// sysfs cannot be undone until the machine restarts, so no test does it.)
#[test]
fn trims_release_what_they_cover_on_files_and_devices() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = dir.path().join("f");
    let target = format!("--filename={}", f.display());
    assert_ok(
        &raidlab(&[&target, "--name=w", "--rw=write", "--bs=64k", "--size=1m"]),
        "lay out and write",
    );
    let before = allocated(&f);
    let trim = |fmt: &str| {
        raidlab(&[
            &target,
            "--name=t",
            "--rw=trim",
            "--bs=64k",
            "--offset=256k",
            "--size=256k",
            fmt,
        ])
    };
    let v = json(&assert_ok(&trim("--output-format=json"), "trim"));
    let j = &v["jobs"][0];
    assert_eq!(
        (
            j["trim"]["io_bytes"].as_u64(),
            j["trim"]["total_ios"].as_u64()
        ),
        (Some(256 << 10), Some(4)),
        "{j}"
    );
    assert_eq!(j["write"]["total_ios"], 0);
    assert_eq!(j["job options"]["rw"], "trim");
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 1 << 20);
    assert!(data[256 << 10..512 << 10].iter().all(|&b| b == 0));
    // Outside the range the written data stands (random bytes: no 4 KiB block of zeros).
    for k in (0..256 << 10).chain(512 << 10..1 << 20).step_by(4096) {
        assert!(data[k..k + 4096].iter().any(|&b| b != 0), "block at {k}");
    }
    assert!(
        allocated(&f) <= before - (256 << 10),
        "{} of {before} bytes still allocated",
        allocated(&f)
    );
    let text = assert_ok(&trim("--output-format=normal"), "trim, text");
    assert!(text.contains("\n  trim: IOPS="), "{text}");
    assert!(text.contains("\n   TRIM: bw="), "{text}");
    assert!(text.contains("issued rwts: total=0,0,4,0"), "{text}");
    assert!(
        !text.contains("\n  read: ") && !text.contains("\n  write: "),
        "{text}"
    );
    let terse = assert_ok(&trim("--output-format=terse"), "trim, terse");
    assert_eq!(terse.trim_end().split(';').count(), 121, "{terse}");

    // trimwrite: each block trimmed, then written: none left reading zeros.
    let v = json(&assert_ok(
        &raidlab(&[
            &target,
            "--name=tw",
            "--rw=randtrimwrite",
            "--bs=16k",
            "--size=1m",
            "--iodepth=8",
            "--output-format=json",
        ]),
        "randtrimwrite",
    ));
    let j = &v["jobs"][0];
    assert_eq!(j["trim"]["total_ios"], 64, "{j}");
    assert_eq!(j["write"]["total_ios"], 64, "{j}");
    let data = std::fs::read(&f).unwrap();
    for k in (0..1 << 20).step_by(4096) {
        assert!(
            data[k..k + 4096].iter().any(|&b| b != 0),
            "block at {k} reads zeros"
        );
    }

    // Somebody's file: trimming it needs --force, as writing it does.
    let theirs = dir.path().join("theirs");
    std::fs::write(&theirs, vec![7u8; 1 << 20]).unwrap();
    let t = format!("--filename={}", theirs.display());
    let err = assert_usage_error(
        &raidlab(&[&t, "--name=t", "--rw=trim", "--size=64k"]),
        "trim without --force",
    );
    assert!(err.contains("use --force"), "{err}");
    assert_eq!(std::fs::read(&theirs).unwrap(), vec![7u8; 1 << 20]);

    // A loop device: its range discarded reads zeros after.
    let img = dir.path().join("dev.img");
    std::fs::write(&img, vec![0x5au8; 4 << 20]).unwrap();
    let dev = Loop::attach_discarding(&img);
    let t = format!("--filename={}", dev.0);
    let v = json(&assert_ok(
        &raidlab(&[
            &t,
            "--name=t",
            "--rw=randtrim",
            "--bs=128k",
            "--offset=1m",
            "--size=1m",
            "--iodepth=4",
            "--force",
            "--output-format=json",
        ]),
        "trim a loop device",
    ));
    assert_eq!(v["jobs"][0]["trim"]["total_ios"], 8);
    let mut back = vec![0u8; 4 << 20];
    {
        use std::os::unix::fs::FileExt;
        std::fs::File::open(&dev.0)
            .unwrap()
            .read_exact_at(&mut back, 0)
            .unwrap();
    }
    assert!(back[1 << 20..2 << 20].iter().all(|&b| b == 0));
    assert!(back[..1 << 20]
        .iter()
        .chain(&back[2 << 20..])
        .all(|&b| b == 0x5a));
    // fio's trimwrite on the same device, and raidlab's: the same requests in each
    // direction, in the same JSON places.
    let job = [
        "--name=tw",
        "--rw=trimwrite",
        "--bs=64k",
        "--size=2m",
        "--ioengine=io_uring",
        "--iodepth=4",
    ];
    let mut fa: Vec<String> = job.iter().map(|s| s.to_string()).collect();
    fa.extend([
        format!("--filename={}", dev.0),
        "--output-format=json".into(),
    ]);
    let f = json(&fio_json(&fa));
    let mut ra: Vec<&str> = job.to_vec();
    ra.extend([t.as_str(), "--force", "--output-format=json"]);
    let r = json(&assert_ok(&raidlab(&ra), "raidlab trimwrite"));
    for v in [&f, &r] {
        let j = &v["jobs"][0];
        for d in ["trim", "write"] {
            assert_eq!(j[d]["total_ios"], 32, "{d}: {j}");
            assert_eq!(j[d]["io_bytes"], 2 << 20, "{d}: {j}");
        }
        assert_eq!(j["read"]["total_ios"], 0);
    }
}

/// A user-space array trims as md does: striping and mirroring levels discard every piece
/// (every copy) of the range, parity levels whole stripes only, data and parity alike, and
/// leave the parts of stripes at its ends as they were. What was discarded reads zeros,
/// also through a failed member's reconstruction, and every stripe's parity still agrees
/// with its data (a scrub finds nothing), after plain trims and after trims and writes of
/// the same blocks raced at depth 8.
#[test]
fn arrays_trim_as_md_does_and_stay_consistent() {
    for (level, n) in [("0", 3), ("1", 2), ("10", 4), ("5", 4), ("6", 5)] {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let ms: Vec<String> = (0..n)
            .map(|i| dir.path().join(format!("m{i}")).display().to_string())
            .collect();
        let list = ms.join(",");
        let top = |args: &[&str]| {
            let out = Command::new(bin())
                .args(args)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert_ok(&out, &format!("raid{level} {args:?}"))
        };
        let mut create = vec!["array", "create", "--level", level, "--size", "4m"];
        if level != "1" {
            create.extend(["--chunk", "16k"]);
        }
        create.extend(ms.iter().map(String::as_str));
        top(&create);
        let target = format!("--filename=array:{list}");
        let run = |args: &[&str]| {
            let mut a = vec![target.as_str(), "--name=j"];
            a.extend_from_slice(args);
            assert_ok(&raidlab(&a), &format!("raid{level} {args:?}"));
        };
        run(&["--rw=write", "--bs=64k", "--size=2m"]);
        // One trim from 8 KiB into the array to 1 MiB + 8 KiB. (A trim shorter than a
        // stripe releases nothing of a parity array, as md's: each request is its own.)
        run(&["--rw=trim", "--bs=1m", "--offset=8k", "--size=1m"]);
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        let stripe: u64 = match level {
            "5" => 3 * 16384,
            "6" => 3 * 16384,
            _ => 1,
        };
        let (lo, hi) = (
            (8192u64).div_ceil(stripe) * stripe,
            (8192 + (1 << 20)) / stripe * stripe,
        );
        let mut back = vec![0u8; 2 << 20];
        t.read_at(&mut back, 0).unwrap();
        let zero = |a: u64, b: u64| back[a as usize..b as usize].iter().all(|&x| x == 0);
        assert!(zero(lo, hi), "raid{level}: [{lo}, {hi}) reads zeros");
        for k in (0..lo)
            .chain(hi..2 << 20)
            .step_by(4096)
            .filter(|&k| k + 4096 <= lo || k >= hi)
        {
            assert!(
                !zero(k, k + 4096),
                "raid{level}: block at {k} was left alone"
            );
        }
        drop(t);
        if level != "0" {
            let out = top(&["array", "scrub", "--check", &list]);
            assert!(out.contains(" 0 mismatched"), "raid{level}: {out}");
            // Trims and writes of the same blocks, eight at a time.
            run(&["--rw=randtrimwrite", "--bs=16k", "--size=2m", "--iodepth=8"]);
            let out = top(&["array", "scrub", "--check", &list]);
            assert!(
                out.contains(" 0 mismatched"),
                "raid{level} after trimwrite: {out}"
            );
            // Degraded: the failed member's share of a trimmed range reads zeros.
            top(&["array", "fail", &list, &ms[0]]);
            run(&["--rw=trim", "--bs=1m", "--offset=1m", "--size=1m"]);
            let t =
                raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
            let mut back = vec![0u8; 1 << 20];
            t.read_at(&mut back, 1 << 20).unwrap();
            let (a, b) = (
                ((1u64 << 20).div_ceil(stripe) * stripe - (1 << 20)) as usize,
                ((2u64 << 20) / stripe * stripe - (1 << 20)) as usize,
            );
            assert!(back[a..b].iter().all(|&x| x == 0), "raid{level} degraded");
        }
    }
}

/// A tmpfs of `mib` MiB mounted on a new folder, unmounted when dropped.
struct SmallFs(tempfile::TempDir);
impl SmallFs {
    fn mount(mib: u64) -> SmallFs {
        assert!(is_root(), "this test mounts a tmpfs and needs root");
        let dir = tempfile::tempdir().unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(st.success(), "mount -t tmpfs failed");
        SmallFs(dir)
    }
    /// Bytes free, as statvfs tells them.
    fn free(&self) -> u64 {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(self.0.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path and a zeroed statvfs the call fills.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        st.f_bavail as u64 * st.f_frsize as u64
    }
    /// Remove `name` and wait until its space is given back (an io_uring instance's last
    /// file references go a moment after its process ends).
    fn remove(&self, name: &str, whole: u64) {
        std::fs::remove_file(self.0.path().join(name)).unwrap();
        let start = std::time::Instant::now();
        while self.free() < whole && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(self.free(), whole, "space not given back");
    }
}
impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// fio's `fill_device` (`fill_fs`): a job writes until its filesystem is full, and that ends
/// it as its size would (exit 0, no error). Without a size its region is the filesystem's
/// free space; with a larger one, ENOSPC ends it where the room does, at any depth and in
/// random order (and verify then checks every block written). Where there is no room, or
/// the job writes nothing, it is refused in one line.
#[test]
fn fill_device_writes_until_the_filesystem_is_full() {
    let fs = SmallFs::mount(8);
    let whole = fs.free();
    assert_eq!(whole, 8 << 20);
    let f = format!("--filename={}", fs.0.path().join("f").display());
    let run = |extra: &[&str]| {
        let mut a = vec![f.as_str(), "--name=fill", "--output-format=json"];
        a.extend_from_slice(extra);
        raidlab(&a)
    };
    let written = |extra: &[&str]| -> serde_json::Value {
        let v = json(&assert_ok(&run(extra), &format!("{extra:?}")));
        let j = v["jobs"][0].clone();
        assert_eq!(j["error"], 0, "{j}");
        j
    };
    let j = written(&["--rw=write", "--bs=64k", "--fill_device=1"]);
    assert_eq!(j["write"]["io_bytes"], 8 << 20, "{j}");
    assert_eq!(j["job options"]["fill_device"], "1");
    assert_eq!(fs.free(), 0);

    // The filesystem is full: nothing to fill.
    let err = assert_usage_error(
        &run(&["--rw=write", "--bs=64k", "--fill_device=1", "--offset=8m"]),
        "fill a full filesystem",
    );
    assert!(err.contains("there is no room to fill"), "{err}");
    fs.remove("f", whole);

    for (extra, bs) in [
        (vec!["--rw=write", "--iodepth=8"], 65536),
        (vec!["--rw=write", "--ioengine=psync"], 65536),
        (
            vec!["--rw=randwrite", "--iodepth=8", "--verify=crc32c"],
            4096,
        ),
    ] {
        let bs_opt = format!("--bs={bs}");
        let mut a = vec![bs_opt.as_str(), "--size=16m", "--fill_fs"];
        a.extend(extra.iter().copied());
        let j = written(&a);
        let ios = j["write"]["total_ios"].as_u64().unwrap();
        assert_eq!(ios * bs, 8 << 20, "{extra:?}: {j}");
        if extra.contains(&"--verify=crc32c") {
            assert_eq!(j["raidlab"]["verify"]["blocks_checked"], ios, "{j}");
            assert_eq!(j["raidlab"]["verify"]["mismatches"], 0, "{j}");
        }
        fs.remove("f", whole);
    }
    // Without fill_device a size beyond the room is refused before anything is written.
    let err = assert_usage_error(&run(&["--rw=write", "--size=16m"]), "no room");
    assert!(err.contains("has 8388608 bytes free"), "{err}");
    let err = assert_usage_error(
        &run(&["--rw=read", "--size=1m", "--fill_device=1"]),
        "fill by reading",
    );
    assert!(err.contains("the job writes nothing"), "{err}");
}

/// A file another process has locked, as a raidlab array's runner locks its members (array
/// serve, rebuild, scrub), is not written even with `--force`: a run over a served array's
/// member wiped its superblock under the running array. Once the lock is let go, `--force`
/// writes it.
#[test]
fn a_locked_file_is_not_written_even_with_force() {
    use std::os::fd::AsRawFd;
    let d = scratch("raidlab-lock-");
    let f = d.path().join("member");
    std::fs::write(&f, vec![0x5a; 1 << 20]).unwrap();
    let holder = std::fs::File::open(&f).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(
        unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let file = format!("--filename={}", f.display());
    let args = [
        "--name=w",
        file.as_str(),
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--force",
    ];
    let o = raidlab(&args);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.lines().count() == 1
            && err.contains(&format!("refusing to write to {}", f.display()))
            && err.contains("another process holds a lock on it"),
        "{err}"
    );
    assert!(std::fs::read(&f).unwrap().iter().all(|&b| b == 0x5a));
    // Reading it is no harm.
    let read = [
        "--name=r",
        file.as_str(),
        "--rw=read",
        "--bs=64k",
        "--size=1m",
    ];
    assert_ok(&raidlab(&read), "read of a locked file");
    drop(holder);
    assert_ok(&raidlab(&args), "forced write once the lock is gone");
}

/// The file behind a loop device holding a mounted filesystem is that filesystem's storage:
/// writing it is refused even with `--force`, as writing the device is.
#[test]
fn the_file_under_a_mounted_loop_device_is_not_written_even_with_force() {
    assert!(is_root(), "this test attaches a loop device and needs root");
    let d = scratch("raidlab-loopfs-");
    let backing = d.path().join("disk");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&backing)
        .output()
        .expect("losetup");
    assert!(out.status.success(), "losetup failed");
    let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
    /// Unmounts and detaches when dropped, so a failed assertion leaves nothing behind.
    struct Attached(String, Option<std::path::PathBuf>);
    impl Drop for Attached {
        fn drop(&mut self) {
            if let Some(m) = &self.1 {
                let _ = Command::new("umount").arg(m).status();
            }
            let _ = Command::new("losetup").args(["-d", &self.0]).status();
        }
    }
    let mut att = Attached(dev.clone(), None);
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
        .arg(&dev)
        .status()
        .expect("mkfs.ext4 (e2fsprogs) must be installed");
    assert!(mkfs.success());
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    assert!(Command::new("mount")
        .arg(&dev)
        .arg(&mnt)
        .status()
        .unwrap()
        .success());
    att.1 = Some(mnt.clone());
    let o = raidlab(&[
        "--name=w",
        &format!("--filename={}", backing.display()),
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.lines().count() == 1
            && err.contains(&format!(
                "it is the backing file of {dev}, which is held by"
            ))
            && err.contains("mounted at"),
        "{err}"
    );
    // (The filesystem itself may write its storage meanwhile: the check is that the run did
    // not, which would have put its own blocks over ext4's superblock magic, 0xEF53 at byte
    // 1024 + 56.)
    let head = std::fs::read(&backing).unwrap();
    assert_eq!(
        &head[1024 + 56..1024 + 58],
        &[0x53, 0xEF],
        "ext4's superblock is gone"
    );
    drop(att);
}
