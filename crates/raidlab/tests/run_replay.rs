//! Replaying fio's I/O logs (`read_iolog` and the `replay_*` options): a log fio 3.33 wrote
//! replays in raidlab as in fio (the same requests, bytes and contents), on real files and on
//! simulated systems, with the log's times and syncs. The fio test needs the Debian package
//! `fio`; it fails when it is missing.

mod common;
use common::*;
use std::path::Path;

/// (read ios, read bytes, write ios, write bytes, syncs, runtime ms) of a result's one job.
fn counts(out: &str) -> (u64, u64, u64, u64, u64, u64) {
    let v = json(out);
    let j = &v["jobs"][0];
    let n = |p: &str, k: &str| j[p][k].as_u64().unwrap_or(0);
    (
        n("read", "total_ios"),
        n("read", "io_bytes"),
        n("write", "total_ios"),
        n("write", "io_bytes"),
        n("sync", "total_ios"),
        j["job_runtime"].as_u64().unwrap(),
    )
}

/// `raidlab` with `base` then `extra` options (it must succeed): what it prints.
fn run_ok(base: &[&str], extra: &[&str]) -> String {
    assert_ok(&raidlab(&[base, extra].concat()), &format!("{extra:?}"))
}

fn write_log(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A log fio wrote of a mixed random job replays in raidlab with fio's requests: the same
/// counts and bytes as fio's own replay of it, and the same data left in the file.
#[test]
fn a_log_fio_wrote_replays_as_fio_replays_it() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-replay-");
    let dir = d.path().display().to_string();
    let data = format!("{dir}/data");
    let log = format!("{dir}/fio.log");
    let fio = |args: &[&str]| fio_json(args);
    // Recorded: 2 MiB of 4 KiB random reads and writes (fio lays the file out first).
    fio(&[
        "--name=rec",
        &format!("--filename={data}"),
        "--size=2m",
        "--bs=4k",
        "--rw=randrw",
        "--ioengine=psync",
        "--randseed=7",
        &format!("--write_iolog={log}"),
        "--output-format=json",
    ]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("fio version 3 iolog\n"), "{text}");
    // fio replays it (no stall: its times are a fast machine's) …
    let replayed_by_fio = counts(&fio(&[
        "--name=play",
        &format!("--read_iolog={log}"),
        "--replay_no_stall=1",
        "--buffer_pattern=0x5a",
        "--output-format=json",
    ]));
    let after_fio = std::fs::read(&data).unwrap();
    // … and raidlab does (the file holds fio's data: --force).
    let o = raidlab(&[
        "--name=play",
        &format!("--read_iolog={log}"),
        "--replay_no_stall=1",
        "--buffer_pattern=0x5a",
        "--force",
        "--output-format=json",
    ]);
    let ours = counts(&assert_ok(&o, "replay"));
    let (r_ios, r_bytes, w_ios, w_bytes, ..) = replayed_by_fio;
    assert_eq!(
        (ours.0, ours.1, ours.2, ours.3),
        (r_ios, r_bytes, w_ios, w_bytes),
        "raidlab against fio"
    );
    assert!(r_ios > 0 && w_ios > 0, "{replayed_by_fio:?}");
    assert_eq!(
        r_bytes + w_bytes,
        text.lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.len() == 5 && (w[2] == "read" || w[2] == "write"))
                    .then(|| w[4].parse::<u64>().unwrap())
            })
            .sum::<u64>()
    );
    // The blocks the log writes hold the pattern in both files (the rest is each tool's
    // own layout).
    let ours_data = std::fs::read(&data).unwrap();
    let mut written = 0;
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 5 && w[2] == "write" {
            let (off, len): (usize, usize) = (w[3].parse().unwrap(), w[4].parse().unwrap());
            assert!(ours_data[off..off + len].iter().all(|&b| b == 0x5a), "{l}");
            assert_eq!(ours_data[off..off + len], after_fio[off..off + len], "{l}");
            written += len;
        }
    }
    assert_eq!(written as u64, w_bytes);
}

/// A log's times are kept, scaled by replay_time_scale or dropped by replay_no_stall; its
/// syncs are run, on a real file and on a simulated system alike.
#[test]
fn times_and_syncs_are_replayed_in_both_executors() {
    let d = scratch("raidlab-replay-");
    let dir = d.path().display().to_string();
    let log = write_log(
        d.path(),
        "t.log",
        &format!(
            "fio version 3 iolog\n0 {dir}/f add\n0 {dir}/f open\n\
             0 {dir}/f write 0 4096\n100000 {dir}/f write 4096 4096\n\
             200000 {dir}/f sync 0 0\n300000 {dir}/f read 0 8192\n400000 {dir}/f close\n"
        ),
    );
    let sim = format!("--replay_redirect=sim:{}", system("xdd2008/raid5.toml"));
    let read_log = format!("--read_iolog={log}");
    let base = ["--name=t", &read_log, "--direct=1", "--output-format=json"];
    let run = |extra: &[&str]| counts(&run_ok(&base, extra));
    // Simulated: virtual time, exact. The read goes at 300 ms and takes a few.
    let s = run(&[&sim]);
    assert_eq!((s.0, s.1, s.2, s.3, s.4), (1, 8192, 2, 8192, 1), "{s:?}");
    assert!((300..320).contains(&s.5), "{s:?}");
    let half = run(&[&sim, "--replay_time_scale=200"]);
    assert!((150..170).contains(&half.5), "{half:?}");
    let fast = run(&[&sim, "--replay_no_stall=1"]);
    assert!(fast.5 < 50, "{fast:?}");
    assert_eq!(fast.4, 1, "{fast:?}");
    // The same run, the same results.
    assert_eq!(run(&[&sim]), s);
    // Real: the file is laid out to the log's furthest request, and the read waits for
    // its time (never sooner).
    let r = run(&[]);
    assert_eq!((r.0, r.1, r.2, r.3, r.4), (1, 8192, 2, 8192, 1), "{r:?}");
    assert!(r.5 >= 300, "{r:?}");
    assert_eq!(std::fs::metadata(format!("{dir}/f")).unwrap().len(), 8192);
}

/// A trace that does not fit, or does not go with the job, is one line naming what.
#[test]
fn bad_replays_are_one_line() {
    let d = scratch("raidlab-replay-");
    let dir = d.path().display().to_string();
    let trim = write_log(
        d.path(),
        "trim.log",
        &format!("fio version 3 iolog\n0 {dir}/f add\n0 {dir}/f open\n5 {dir}/f write 0 4096\n9 {dir}/f trim 0 4096\n"),
    );
    let far = write_log(
        d.path(),
        "far.log",
        "fio version 2 iolog\n/dev/sdz add\n/dev/sdz open\n/dev/sdz read 1125899906842624 4096\n",
    );
    let odd = write_log(
        d.path(),
        "odd.log",
        &format!("fio version 2 iolog\n{dir}/f add\n{dir}/f open\n{dir}/f write 0 4096\n{dir}/f write 100 4096\n"),
    );
    let sim = format!("--replay_redirect=sim:{}", system("xdd2008/raid5.toml"));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![format!("--read_iolog={trim}"), sim.clone()],
            "whose drive ctrl/arc1680/raid5/disk0 is a disk drive, which takes no TRIM (valid: trims on LUNs of flash drives; a trace's trims left out with replay_skip=trim)",
        ),
        (
            vec![format!("--read_iolog={trim}"), format!("--filename={dir}/g")],
            "names the files its requests go to, and filename names others",
        ),
        (vec!["--replay_no_stall=1".into(), format!("--filename={dir}/g"), "--size=1m".into()], "replay_* options shape a trace's replay (valid: give read_iolog=PATH too)"),
        (vec![format!("--read_iolog={dir}/none.log")], "none.log: No such file"),
        (
            vec![format!("--read_iolog={far}"), sim.clone(), "--direct=1".into()],
            "far.log line 4: its read ends at byte 1125899906846720, past the end of sim:",
        ),
        (
            vec![format!("--read_iolog={trim}"), "--replay_skip=trim".into(), "--time_based".into(), "--runtime=1s".into()],
            "time_based does not apply",
        ),
        (vec![format!("--read_iolog={trim}"), "--replay_align=3000".into()], "'3000' is not a power of two"),
        (vec![format!("--read_iolog={dir}/a:{dir}/b")], "raidlab replays one trace a job"),
        (
            vec![format!("--read_iolog={odd}"), "--direct=1".into()],
            "odd.log line 5 (offset 100, length 4096) is not a multiple of 512 bytes, which direct=1 needs",
        ),
    ];
    for (extra, want) in cases {
        let mut a = vec!["--name=t".to_string()];
        a.extend(extra.iter().cloned());
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let err = assert_usage_error(&raidlab(&a), &format!("{extra:?}"));
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    // Nothing was written: the trim log's file was never laid out.
    assert!(!Path::new(&format!("{dir}/f")).exists());
}

/// A trace's trims replay as trims: on a file, its range is punched out (reads zeros after,
/// the file's size kept), the results count them apart, and a log written of the replay
/// logs them as fio does (`trim OFFSET LENGTH`).
#[test]
fn a_traces_trims_replay_as_trims() {
    let d = scratch("raidlab-replay-trim-");
    let dir = d.path().display().to_string();
    let log = write_log(
        d.path(),
        "t.log",
        &format!("fio version 3 iolog\n0 {dir}/f add\n0 {dir}/f open\n5 {dir}/f write 0 16384\n9 {dir}/f trim 4096 8192\n12 {dir}/f close\n"),
    );
    let out = format!("{dir}/out.log");
    let v = json(&assert_ok(
        &raidlab(&[
            "--name=t",
            &format!("--read_iolog={log}"),
            &format!("--write_iolog={out}"),
            "--output-format=json",
        ]),
        "trim replay",
    ));
    let j = &v["jobs"][0];
    assert_eq!(j["write"]["total_ios"], 1, "{j}");
    assert_eq!(j["trim"]["total_ios"], 1, "{j}");
    assert_eq!(j["trim"]["io_bytes"], 8192, "{j}");
    let data = std::fs::read(format!("{dir}/f")).unwrap();
    assert_eq!(data.len(), 16384);
    assert!(
        data[4096..12288].iter().all(|&b| b == 0),
        "the trimmed range reads zeros"
    );
    assert!(data[..4096].iter().any(|&b| b != 0) && data[12288..].iter().any(|&b| b != 0));
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.contains(&format!("{dir}/f trim 4096 8192")),
        "{written}"
    );
}

/// `write_iolog` logs what a job issued, as fio 3.33 writes it: fio replays a real run's
/// log with its requests and syncs, and a simulated run's log replays in the simulator to
/// the same result, time for time.
#[test]
fn a_log_raidlab_writes_replays_in_fio_and_in_the_simulator() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-iolog-");
    let dir = d.path().display().to_string();
    let log = format!("{dir}/real.log");
    let o = raidlab(&[
        "--name=rec",
        &format!("--filename={dir}/data"),
        "--rw=randrw",
        "--bs=4k",
        "--size=1m",
        "--fsync=16",
        &format!("--write_iolog={log}"),
        "--output-format=json",
    ]);
    let rec = counts(&assert_ok(&o, "record"));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with(&format!(
        "fio version 3 iolog\n0 {dir}/data add\n0 {dir}/data open\n"
    )));
    assert!(text.ends_with(&format!("{dir}/data close\n")), "{text}");
    let played = counts(&fio_json(&[
        "--name=play",
        &format!("--read_iolog={log}"),
        "--output-format=json",
    ]));
    assert_eq!(
        (played.0, played.1, played.2, played.3, played.4),
        (rec.0, rec.1, rec.2, rec.3, rec.4),
        "fio's replay of raidlab's log"
    );
    assert!(rec.4 >= 8, "{rec:?}");

    // Simulated: recorded, then replayed at the logged times, the same in every figure.
    let sim = format!("--filename=sim:{}", system("xdd2008/raid5.toml"));
    let slog = format!("{dir}/sim.log");
    let o = raidlab(&[
        "--name=rec",
        &sim,
        "--rw=randrw",
        "--bs=8k",
        "--iodepth=8",
        "--size=4m",
        "--direct=1",
        &format!("--write_iolog={slog}"),
        "--output-format=json",
    ]);
    let recorded = json(&assert_ok(&o, "simulated record"));
    let o = raidlab(&[
        "--name=rec",
        &format!("--read_iolog={slog}"),
        "--iodepth=8",
        "--direct=1",
        "--output-format=json",
    ]);
    let replayed = json(&assert_ok(&o, "simulated replay"));
    for key in ["read", "write"] {
        for k in ["total_ios", "io_bytes", "runtime"] {
            assert_eq!(
                recorded["jobs"][0][key][k], replayed["jobs"][0][key][k],
                "{key}.{k}"
            );
        }
        assert_eq!(
            recorded["jobs"][0][key]["clat_ns"], replayed["jobs"][0][key]["clat_ns"],
            "{key} latencies"
        );
    }
    // One log a job.
    let err = assert_usage_error(
        &raidlab(&[
            "--name=two",
            &sim,
            "--rw=randread",
            "--size=1m",
            "--numjobs=2",
            &format!("--write_iolog={dir}/two.log"),
        ]),
        "numjobs=2",
    );
    assert!(err.contains("2 jobs would write it"), "{err}");
}

/// A blktrace record: time ns, sector, bytes, action, device, data after the header.
type BlkRecord<'a> = (u64, u64, u32, u32, u32, &'a [u8]);

/// A blktrace binary trace as the kernel writes one (little-endian, version 7).
fn blktrace(records: &[BlkRecord]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(time, sector, bytes, action, dev, pdu) in records {
        out.extend_from_slice(&0x6561_7407u32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&time.to_le_bytes());
        out.extend_from_slice(&sector.to_le_bytes());
        for v in [bytes, action, 4321, dev, 0] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(pdu.len() as u16).to_le_bytes());
        out.extend_from_slice(pdu);
    }
    out
}

// blktrace's actions: what happened in the low 16 bits, categories above.
const QUEUE: u32 = 1 | (1 << 20);
const COMPLETE: u32 = 8 | (1 << 23);
const READ: u32 = 1 << 16;
const WRITE: u32 = 1 << 17;
const FLUSH: u32 = 1 << 18;
const NOTIFY: u32 = 1 << 26;
/// Device 7:0 (the first loop device), as blktrace numbers devices (major << 20 | minor).
const DEV: u32 = 7 << 20;

/// Eight 4 KiB reads queued together and completed, a notification, four 8 KiB writes half a
/// millisecond apart from 2 ms on, a flush at 5 ms and a read at 6 ms.
fn sample_blktrace() -> Vec<u8> {
    let t0 = 1_000_000;
    let mut r: Vec<BlkRecord> = Vec::new();
    for i in 0..8 {
        r.push((t0 + i * 1000, i * 8, 4096, QUEUE | READ, DEV, &[]));
    }
    for i in 0..8 {
        r.push((
            t0 + 50_000 + i * 1000,
            i * 8,
            4096,
            COMPLETE | READ,
            DEV,
            &[],
        ));
    }
    r.push((0, 0, 0, NOTIFY, DEV, b"proc\0\0\0\0"));
    for i in 0..4 {
        r.push((
            t0 + 2_000_000 + i * 500_000,
            1024 + i * 16,
            8192,
            QUEUE | WRITE,
            DEV,
            &[],
        ));
    }
    r.push((t0 + 5_000_000, 0, 0, QUEUE | WRITE | FLUSH, DEV, &[]));
    r.push((t0 + 6_000_000, 2048, 4096, QUEUE | READ, DEV, &[]));
    blktrace(&r)
}

/// A blktrace replays in raidlab as fio 3.33 replays it: its queue events' reads and writes
/// (sector × 512, on the redirect's file), its flush as a sync, the same counts and bytes and
/// the written blocks in the same places; the depth the trace shows (8 reads queued before a
/// completion) is the job's iodepth unless it gives one.
#[test]
fn a_blktrace_replays_as_fio_replays_it() {
    require_tool("fio", "fio");
    let d = scratch("raidlab-blktrace-");
    let dir = d.path().display().to_string();
    let trace = format!("{dir}/t.bin");
    std::fs::write(&trace, sample_blktrace()).unwrap();
    let data = format!("{dir}/data");
    let (read_log, redirect) = (
        format!("--read_iolog={trace}"),
        format!("--replay_redirect={data}"),
    );
    let base = [
        "--name=play",
        &read_log,
        &redirect,
        "--buffer_pattern=0x5a",
        "--output-format=json",
    ];
    let run = |extra: &[&str]| run_ok(&base, extra);
    let ours = counts(&run(&["--ioengine=psync"]));
    assert_eq!(
        (ours.0, ours.1, ours.2, ours.3, ours.4),
        (9, 36864, 4, 32768, 1),
        "{ours:?}"
    );
    // Its times kept: the last read is due 6 ms after the first.
    assert!(ours.5 >= 6, "{ours:?}");
    // The file raidlab laid out (to the furthest request), then fio's replay over it.
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 2048 * 512 + 4096);
    let ours_data = std::fs::read(&data).unwrap();
    let theirs = counts(&fio_json(&base));
    assert_eq!(
        (theirs.0, theirs.1, theirs.2, theirs.3, theirs.4),
        (ours.0, ours.1, ours.2, ours.3, ours.4),
        "fio"
    );
    let fio_data = std::fs::read(&data).unwrap();
    for i in 0..4 {
        let at = (1024 + i * 16) * 512;
        assert!(
            ours_data[at..at + 8192].iter().all(|&b| b == 0x5a),
            "write {i}"
        );
        assert_eq!(
            ours_data[at..at + 8192],
            fio_data[at..at + 8192],
            "write {i}"
        );
    }
    // The trace's depth, as a queue that reaches 8 when nothing holds it back; a job's own
    // iodepth wins.
    let levels = |out: &str| -> Vec<f64> {
        let v = json(out);
        ["1", "2", "4", "8", "16"]
            .iter()
            .map(|k| v["jobs"][0]["iodepth_level"][*k].as_f64().unwrap_or(0.0))
            .collect()
    };
    let deep = levels(&run(&["--ioengine=libaio", "--replay_no_stall=1"]));
    assert!(deep[3] > 0.0, "{deep:?}");
    let two = levels(&run(&[
        "--ioengine=libaio",
        "--replay_no_stall=1",
        "--iodepth=2",
    ]));
    assert!(two[2] == 0.0 && two[3] == 0.0 && two[1] > 0.0, "{two:?}");
}

/// A blktrace from real hardware replays against a modeled system in virtual time: its times
/// exactly (scaled by replay_time_scale), the same result every run; and a trace that cannot
/// be replayed is one line naming the record.
#[test]
fn a_blktrace_replays_in_the_simulator_and_bad_ones_are_one_line() {
    let d = scratch("raidlab-blktrace-");
    let dir = d.path().display().to_string();
    let trace = format!("{dir}/t.bin");
    std::fs::write(&trace, sample_blktrace()).unwrap();
    let sim = format!("--replay_redirect=sim:{}", system("xdd2008/raid5.toml"));
    let read_log = format!("--read_iolog={trace}");
    let base = [
        "--name=t",
        &read_log,
        &sim,
        "--direct=1",
        "--output-format=json",
    ];
    let run = |extra: &[&str]| counts(&run_ok(&base, extra));
    // Ten times slower than traced, the last read goes at 60 ms; five times, at 30 ms.
    let s = run(&["--replay_time_scale=10"]);
    assert_eq!((s.0, s.1, s.2, s.3, s.4), (9, 36864, 4, 32768, 1), "{s:?}");
    assert!((60..70).contains(&s.5), "{s:?}");
    assert_eq!(run(&["--replay_time_scale=10"]), s);
    let faster = run(&["--replay_time_scale=20"]);
    assert!((30..40).contains(&faster.5), "{faster:?}");

    // Bad traces.
    let cut = sample_blktrace();
    std::fs::write(format!("{dir}/cut.bin"), &cut[..cut.len() - 20]).unwrap();
    let far_dev = blktrace(&[(0, 0, 4096, QUEUE | READ, (4095 << 20) | 0xf_fffe, &[])]);
    std::fs::write(format!("{dir}/nodev.bin"), far_dev).unwrap();
    let cases = [
        (format!("--read_iolog={dir}/cut.bin"), "cut.bin record 23 (byte 1064): cut short, 28 of its 48 bytes"),
        (format!("--read_iolog={dir}/nodev.bin"), "nodev.bin record 1 (byte 0): device 4095:1048574 is not a block device under /dev here (valid: replay_redirect="),
    ];
    for (arg, want) in cases {
        let err = assert_usage_error(&raidlab(&["--name=t", &arg]), &arg);
        assert!(err.contains(want), "{arg}: {err}");
    }
}
