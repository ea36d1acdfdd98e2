//! `raidlab array …` end to end: create/status/fail/remove/add/rebuild/scrub through the
//! binary, bad input as one line with exit 2, an interrupted rebuild resumed, stale, missing,
//! foreign and data-holding members named, kill -9 of a serving process mid-writes, serve
//! stopped by Ctrl-C and SIGTERM, and fio's verify over the FUSE volume with a member failed
//! mid-run.
//!
//! Needs /dev/fuse, fusermount3 (Debian: fuse3) and fio (Debian: fio); these tests fail, not
//! skip, when they are missing.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn raidlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_raidlab"))
}

fn run(args: &[&str]) -> Output {
    raidlab().args(args).output().expect("raidlab runs")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "raidlab {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn scratch() -> tempfile::TempDir {
    common::scratch("raidlab-cli-array")
}

fn members(dir: &Path, n: usize, tag: &str) -> Vec<String> {
    (0..n)
        .map(|i| dir.join(format!("{tag}{i}")).display().to_string())
        .collect()
}

#[test]
fn create_status_fail_remove_add_rebuild_scrub() {
    let d = scratch();
    let ms = members(d.path(), 4, "m");
    let list = ms.join(",");
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "64k", "--size", "8m",
    ];
    args.extend(ms.iter().map(String::as_str));
    let out = ok(&args);
    assert!(
        out.contains("raid5") && out.contains("left-symmetric") && out.contains("chunk 64 KiB"),
        "{out}"
    );

    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["level"], "raid5");
    assert_eq!(js["state"], "clean");
    assert_eq!(js["degraded"], false);
    assert_eq!(js["member_status"].as_array().unwrap().len(), 4);
    assert_eq!(js["member_status"][0]["data_offset"], 1 << 20);
    // Members in tmpfs are mapped; on disk they would be O_DIRECT.
    let io = js["member_status"][0]["io"].as_str().unwrap();
    let in_shm = ms[0].starts_with("/dev/shm");
    assert!(
        if in_shm {
            io == "mapped (in memory)"
        } else {
            io.starts_with("O_DIRECT") || io.starts_with("buffered")
        },
        "{io}"
    );
    let text = ok(&["array", "status", &list]);
    assert!(text.contains(&format!("{} ({io})", ms[0])), "{text}");

    // Creating over members that now hold an array is refused without --force, naming it.
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("raidlab array metadata")
            && err.contains("--force")
            && err.lines().count() == 1,
        "{err}"
    );

    // Write known data through the library's target (what `raidlab run --filename array:` uses).
    let pattern: Vec<u8> = (0..3 * 64 * 1024 * 5)
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    {
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        t.write_at(&pattern, 4096).unwrap();
    }

    ok(&["array", "fail", &list, &ms[2]]);
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["degraded"], true);
    // A second failure would lose data: refused.
    let o = run(&["array", "fail", &list, &ms[0]]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Removing an active member is refused; the faulty one goes.
    assert_eq!(
        run(&["array", "remove", &list, &ms[1]]).status.code(),
        Some(2)
    );
    ok(&["array", "remove", &list, &ms[2]]);
    let rest: Vec<String> = ms
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 2)
        .map(|(_, m)| m.clone())
        .collect();
    // The removed member is zeroed of its superblock; refill it with junk to prove the rebuild.
    std::fs::write(&ms[2], vec![0x77u8; 8 << 20]).unwrap();
    let o = run(&["array", "add", &rest.join(","), &ms[2]]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "junk-filled member must need --force"
    );
    ok(&["array", "add", "--force", &rest.join(","), &ms[2]]);
    let out = ok(&["array", "rebuild", "--quiet", &list]);
    assert!(out.contains("complete"), "{out}");
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["degraded"], false, "{js}");

    // The rebuilt member carries its share: fail another one and read everything back.
    ok(&["array", "fail", &list, &ms[0]]);
    {
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        let mut got = vec![0u8; pattern.len()];
        t.read_at(&mut got, 4096).unwrap();
        assert!(got == pattern, "data differs after rebuild + failure");
    }

    // Scrub on a degraded array is refused; on a healthy one it counts mismatches.
    assert_eq!(
        run(&["array", "scrub", "--check", &list]).status.code(),
        Some(2)
    );
    let d2 = scratch();
    let m6 = members(d2.path(), 5, "s");
    let mut a6 = vec![
        "array", "create", "--level", "6", "--chunk", "16k", "--size", "4m",
    ];
    a6.extend(m6.iter().map(String::as_str));
    ok(&a6);
    let l6 = m6.join(",");
    {
        let t = raidlab_array::open_target(&l6, &raidlab_array::OpenOptions::default()).unwrap();
        t.write_at(&pattern[..3 * 16384 * 4], 0).unwrap();
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&m6[3])
        .unwrap();
    f.write_all_at(&[1u8; 512], (1 << 20) + 16384 + 100)
        .unwrap();
    let out = ok(&["array", "scrub", "--check", "--output-format", "json", &l6]);
    let js: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(js[0]["mismatches"], 1, "{out}");
    let out = ok(&["array", "scrub", "--repair", &l6]);
    assert!(out.contains("1 mismatched"), "{out}");
    let out = ok(&["array", "scrub", "--check", &l6]);
    assert!(out.contains(" 0 mismatched"), "{out}");
}

/// RAID 6 with each of md's DDF layouts (and a `-6` one, whose name is longer than the
/// superblock's short name field): create, I/O, fail, rebuild onto a spare, scrub.
#[test]
fn raid6_ddf_layouts_end_to_end() {
    for layout in [
        "ddf-zero-restart",
        "ddf-N-restart",
        "ddf-N-continue",
        "right-asymmetric-6",
    ] {
        let d = scratch();
        let ms = members(d.path(), 6, "m");
        let list = ms.join(",");
        let mut args = vec![
            "array", "create", "--level", "6", "--layout", layout, "--chunk", "16k", "--size", "3m",
        ];
        args.extend(ms.iter().map(String::as_str));
        let out = ok(&args);
        assert!(out.contains(&format!("layout {layout}")), "{out}");
        let js: serde_json::Value =
            serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list]))
                .unwrap();
        assert_eq!(js["layout"], layout, "{js}");
        let pattern: Vec<u8> = (0..4 * 16384 * 9).map(|i| (i * 13 % 251) as u8).collect();
        {
            let t =
                raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
            t.write_at(&pattern, 8192).unwrap();
        }
        // Two members lost, one replaced by a junk-filled spare and rebuilt.
        ok(&["array", "fail", &list, &ms[1]]);
        ok(&["array", "fail", &list, &ms[4]]);
        ok(&["array", "remove", &list, &ms[1]]);
        std::fs::write(&ms[1], vec![0x3cu8; 3 << 20]).unwrap();
        let rest: Vec<String> = ms
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 1 && *i != 4)
            .map(|(_, m)| m.clone())
            .collect();
        ok(&["array", "add", "--force", &rest.join(","), &ms[1]]);
        // Slot 1 is rebuilt; slot 4 has no spare yet, which rebuild reports as the user's to
        // fix (exit 2), saying how.
        let o = run(&["array", "rebuild", "--quiet", &rest.join(","), &ms[1]]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.code() == Some(2)
                && err.contains("nothing to rebuild onto: slot 4")
                && err.contains("raidlab array add"),
            "{layout}: {err}"
        );
        // Member 4 is still faulty: reads need the rebuilt member 1 and parity.
        {
            let t =
                raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
            let mut got = vec![0u8; pattern.len()];
            t.read_at(&mut got, 8192).unwrap();
            assert!(got == pattern, "{layout}: data differs after rebuild");
        }
        ok(&["array", "remove", &list, &ms[4]]);
        std::fs::write(&ms[4], vec![0xc3u8; 3 << 20]).unwrap();
        let rest: Vec<String> = ms
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 4)
            .map(|(_, m)| m.clone())
            .collect();
        ok(&["array", "add", "--force", &rest.join(","), &ms[4]]);
        let out = ok(&["array", "rebuild", "--quiet", &list]);
        assert!(out.contains("complete"), "{layout}: {out}");
        let out = ok(&["array", "scrub", "--check", &list]);
        assert!(out.contains(" 0 mismatched"), "{layout}: {out}");
        // A corrupt data block is located and repaired.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&ms[2])
            .unwrap();
        f.write_all_at(&[0xeeu8; 1024], (1 << 20) + 2 * 16384 + 512)
            .unwrap();
        let out = ok(&["array", "scrub", "--repair", &list]);
        assert!(
            out.contains("1 mismatched") && out.contains(&format!("bad block on {}", ms[2])),
            "{layout}: {out}"
        );
        let out = ok(&["array", "scrub", "--check", &list]);
        assert!(out.contains(" 0 mismatched"), "{layout}: {out}");
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        let mut got = vec![0u8; pattern.len()];
        t.read_at(&mut got, 8192).unwrap();
        assert!(got == pattern, "{layout}: data differs after repair");
    }
}

#[test]
fn bad_input_is_one_line_exit_2() {
    let d = scratch();
    let ms = members(d.path(), 3, "b");
    for (args, want) in [
        (
            vec!["array", "create", "--level", "7", "--size", "4m"],
            "unknown RAID level '7'",
        ),
        (
            vec![
                "array", "create", "--level", "5", "--chunk", "3000", "--size", "4m",
            ],
            "chunk",
        ),
        (
            vec![
                "array", "create", "--level", "5", "--layout", "diagonal", "--size", "4m",
            ],
            "layout 'diagonal'",
        ),
        (
            vec!["array", "create", "--level", "6", "--size", "4m"],
            "at least 4 members",
        ),
        // f1 is one copy, shown as n1: the message says copies, not only the layout's name.
        (
            vec![
                "array", "create", "--level", "10", "--layout", "f1", "--size", "4m",
            ],
            "keeps 1 copy of each chunk (valid on 3 members: 2 to 3 copies",
        ),
        (vec!["array", "create", "--level", "5"], "does not exist"),
        (vec!["array", "status", "/nonexistent/x"], "does not exist"),
        (
            vec!["array", "create", "--level", "5", "--size", "-4m"],
            "--size -4m: '-4m' is not a size",
        ),
        // mdadm's --raid-devices is checked against the members given.
        (
            vec!["array", "create", "-l", "5", "-n", "4", "--size", "4m"],
            "--raid-devices 4, but 3 members given",
        ),
        (
            vec![
                "array",
                "create",
                "-l",
                "5",
                "--raid-devices",
                "three",
                "--size",
                "4m",
            ],
            "--raid-devices three: not a number of devices",
        ),
        // A bare chunk is bytes; mdadm's KiB reading is pointed out.
        (
            vec!["array", "create", "-l", "5", "-c", "64", "--size", "4m"],
            "a bare number is bytes, not KiB as mdadm reads it: 64k",
        ),
    ] {
        let mut a = args.clone();
        a.extend(ms.iter().map(String::as_str));
        let o = run(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(want), "{a:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{a:?}: {err}");
        assert!(!err.contains("panicked"));
    }
    // One member is refused without --force, as mdadm refuses it (a member list cut short).
    let one = d.path().join("one").display().to_string();
    for level in ["0", "linear"] {
        let o = run(&["array", "create", "--level", level, "--size", "4m", &one]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("with 1 member") && err.contains("--force"),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!Path::new(&one).exists(), "nothing is made");
    }
    ok(&[
        "array", "create", "--level", "0", "--size", "4m", "--force", &one,
    ]);
    // A child of one member too (`--of 0:64k:a` for `--of 0:64k:a,b`), named by its --of.
    let (k1, k2) = (members(d.path(), 2, "k"), members(d.path(), 1, "kk"));
    let (of1, of2) = (format!("1::{}", k1.join(",")), format!("0:64k:{}", k2[0]));
    let o = run(&[
        "array", "create", "--level", "0", "--size", "4m", "--of", &of1, "--of", &of2,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("--of '{of2}': raid0 with 1 member")) && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!Path::new(&k2[0]).exists(), "nothing is made");
    // A plain file is not a member.
    std::fs::write(&ms[0], b"hello").unwrap();
    let o = run(&["array", "status", &ms[0]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no raidlab superblock"));
    // Seed 002's layout: RAID 0 (256 KiB) over 8+1 RAID 5s (64 KiB) — here two of them.
    let a: Vec<String> = members(d.path(), 9, "x");
    let b: Vec<String> = members(d.path(), 9, "y");
    let out = ok(&[
        "array",
        "create",
        "--level",
        "0",
        "--chunk",
        "256k",
        "--size",
        "3m",
        "--of",
        &format!("5:64k:{}", a.join(",")),
        "--of",
        &format!("5:64k:{}", b.join(",")),
    ]);
    assert!(
        out.contains("raid0") && out.contains("chunk 256 KiB"),
        "{out}"
    );
    let all = format!("{},{}", a.join(","), b.join(","));
    let st = ok(&["array", "status", &all]);
    assert!(st.contains("child 1:") && st.contains("raid5"), "{st}");
    // mdadm's words: -l, -n, -c, -p.
    let m = members(d.path(), 4, "m");
    let mut args = vec![
        "array",
        "create",
        "-l",
        "6",
        "-n",
        "4",
        "-c",
        "16k",
        "-p",
        "right-symmetric",
        "--size",
        "4m",
    ];
    args.extend(m.iter().map(String::as_str));
    let out = ok(&args);
    assert!(
        out.contains("raid6") && out.contains("right-symmetric") && out.contains("chunk 16 KiB"),
        "{out}"
    );
    let (p, q) = (members(d.path(), 3, "p"), members(d.path(), 3, "q"));
    let out = ok(&[
        "array",
        "create",
        "-l",
        "0",
        "-n",
        "2",
        "-c",
        "32k",
        "--size",
        "3m",
        "--of",
        &format!("5:8k:{}", p.join(",")),
        "--of",
        &format!("5:8k:{}", q.join(",")),
    ]);
    assert!(out.contains("chunk 32 KiB"), "{out}");
    let st = ok(&[
        "array",
        "status",
        &format!("{},{}", p.join(","), q.join(",")),
    ]);
    assert!(st.contains("chunk 8 KiB"), "{st}");
}

fn ensure_fuse() {
    assert!(
        Path::new("/dev/fuse").exists(),
        "/dev/fuse is missing: these tests need FUSE (kernel module fuse)"
    );
    let o = Command::new("fusermount3").arg("-V").output();
    assert!(o.is_ok(), "fusermount3 is missing: install Debian's fuse3");
}

struct Served {
    child: Child,
    dir: PathBuf,
}

impl Served {
    fn start(list: &str, dir: &Path) -> Served {
        std::fs::create_dir_all(dir).unwrap();
        let mut child = raidlab()
            .args(["array", "serve", "--fuse", dir.to_str().unwrap(), list])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for "serving".
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line.clone());
                eprintln!("[serve] {line}");
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(l) if l.contains("serving") => break,
                _ if Instant::now() > deadline => panic!("serve did not start"),
                _ => {}
            }
            if let Ok(Some(st)) = child.try_wait() {
                panic!("serve exited early: {st}");
            }
        }
        Served {
            child,
            dir: dir.to_path_buf(),
        }
    }
    fn volume(&self) -> PathBuf {
        self.dir.join("volume")
    }
    fn stop(mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let st = self.child.wait().unwrap();
        assert!(st.success(), "serve did not stop cleanly on SIGTERM: {st}");
        std::mem::forget(self);
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = Command::new("fusermount3")
            .args(["-u", "-z"])
            .arg(&self.dir)
            .status();
    }
}

#[test]
fn kill_9_mid_writes_then_resync_keeps_acknowledged_data() {
    ensure_fuse();
    let d = scratch();
    let ms = members(d.path(), 5, "k");
    let mut args = vec![
        "array", "create", "--level", "6", "--chunk", "16k", "--size", "6m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    kill_9_then_resync(d.path(), &ms.join(","), 1, 8192);
}

/// The same crash under a nested array with redundancy at both levels (RAID 5 over three
/// RAID 1s): after assembly every level's redundancy agrees and acknowledged data is there.
#[test]
fn kill_9_mid_writes_to_a_nested_array_then_resync_at_every_level() {
    ensure_fuse();
    let d = scratch();
    let kids: Vec<Vec<String>> = (0..3)
        .map(|i| members(d.path(), 2, &format!("n{i}-")))
        .collect();
    let of: Vec<String> = kids
        .iter()
        .map(|k| format!("1:0:{}", k.join(",")))
        .collect();
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "16k", "--size", "6m",
    ];
    for o in &of {
        args.extend(["--of", o.as_str()]);
    }
    ok(&args);
    let list = kids.concat().join(",");
    kill_9_then_resync(d.path(), &list, 4, 8192);
}

/// The same crash with whole-stripe writes to tmpfs members, which are written as stripe
/// copies (data and parity copied into the mapped members' pages with streaming stores).
#[test]
fn kill_9_mid_full_stripe_writes_then_resync_keeps_acknowledged_data() {
    ensure_fuse();
    let d = scratch();
    let ms = members(d.path(), 5, "f");
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "16k", "--size", "6m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    // Four data members × 16 KiB: every write is one whole stripe.
    kill_9_then_resync(d.path(), &ms.join(","), 1, 65536);
}

/// Serve `list`, write stamped blocks through the volume, kill -9 the server mid-writes, then
/// assemble (resync) and check every acknowledged write and the redundancy of each of the
/// `arrays` arrays with redundancy in the tree. Blocks are `bs` bytes at multiples of `bs`.
fn kill_9_then_resync(d: &Path, list: &str, arrays: usize, bs: u64) {
    let list = list.to_string();
    let served = Served::start(&list, &d.join("mnt"));
    let vol = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(served.volume())
        .unwrap();
    let cap = vol.metadata().unwrap().len();
    // Writer: blocks of bs bytes at pseudo-random block indices, each stamped with its sequence
    // number; a write is acknowledged once pwrite returned.
    let blocks = cap / bs;
    // The block of write `seq` (from 1): a fixed sequence, so the one write that may have
    // been in flight at the kill is known.
    let block_of = move |seq: u64| {
        let mut x: u64 = 12345;
        for _ in 0..seq {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        x % blocks
    };
    let stamp = move |seq: u64, i: u64| (seq.wrapping_mul(31) ^ i.wrapping_mul(7)) as u8;
    let (tx, rx) = std::sync::mpsc::channel::<(u64, u64)>();
    let writer = std::thread::spawn(move || {
        for seq in 1u64.. {
            let blk = block_of(seq);
            let buf: Vec<u8> = (0..bs).map(|i| stamp(seq, i)).collect();
            if vol.write_all_at(&buf, blk * bs).is_err() {
                break;
            }
            if tx.send((blk, seq)).is_err() {
                break;
            }
        }
    });
    let mut acked = std::collections::HashMap::new();
    let start = Instant::now();
    while acked.len() < 300 && start.elapsed() < Duration::from_secs(60) {
        if let Ok((b, s)) = rx.recv_timeout(Duration::from_millis(100)) {
            acked.insert(b, s);
        }
    }
    assert!(acked.len() >= 300, "writer made no progress");
    let mut served = served;
    unsafe { libc::kill(served.child.id() as i32, libc::SIGKILL) };
    let _ = served.child.wait();
    // Writes in flight at the kill may or may not have completed: only acknowledged ones count.
    while let Ok((b, s)) = rx.try_recv() {
        acked.insert(b, s);
    }
    drop(served);
    let _ = writer.join();
    while let Ok((b, s)) = rx.try_recv() {
        acked.insert(b, s);
    }

    let st: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(
        st["state"], "dirty",
        "the crash must leave the array marked dirty"
    );
    // Assemble (resyncs dirty regions), then check parity and the data. One write was
    // unacknowledged at the kill (the writer is one thread): if it was to an acknowledged
    // block it may have landed in whole, in part or not at all (a kill between two stores of
    // a copy), so each byte of that block holds the acknowledged stamp or the newer one.
    // Every other block holds exactly its last acknowledged write.
    let last = acked.values().copied().max().unwrap_or(0);
    let in_flight = (last + 1, block_of(last + 1));
    let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
    for (&b, &s) in &acked {
        let mut got = vec![0u8; bs as usize];
        t.read_at(&mut got, b * bs).unwrap();
        let mut allowed = vec![s];
        if in_flight.1 == b {
            allowed.push(in_flight.0);
        }
        let lines: Vec<String> = got
            .chunks(64)
            .enumerate()
            .filter_map(|(n, line)| {
                let from = n as u64 * 64;
                let at = |i: usize| from + i as u64;
                let bad = line
                    .iter()
                    .enumerate()
                    .any(|(i, &v)| !allowed.iter().any(|&k| v == stamp(k, at(i))));
                bad.then(|| {
                    // Which write the line holds, if any, for the message.
                    let who = (0..=last + 1)
                        .rev()
                        .find(|&k| line.iter().enumerate().all(|(i, &v)| v == stamp(k, at(i))));
                    format!("bytes {from}..{}: write {who:?}", from + 64)
                })
            })
            .take(4)
            .collect();
        assert!(
            lines.is_empty(),
            "block {b}: acknowledged write {s} lost (in flight at the kill: write {} to block {}); {}",
            in_flight.0,
            in_flight.1,
            lines.join(", ")
        );
    }
    drop(t);
    let out = ok(&["array", "scrub", "--check", &list]);
    let levels = out
        .lines()
        .filter(|l| l.contains("stripes checked"))
        .count();
    assert!(
        levels == arrays && levels == out.matches(" 0 mismatched").count(),
        "redundancy inconsistent after resync: {out}"
    );
}

#[test]
fn fio_verify_over_fuse_with_member_failed_mid_run() {
    ensure_fuse();
    assert!(
        Command::new("fio").arg("--version").output().is_ok(),
        "fio is missing: install Debian's fio"
    );
    let d = scratch();
    let ms = members(d.path(), 5, "f");
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "64k", "--size", "34m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    let list = ms.join(",");
    let served = Served::start(&list, &d.path().join("mnt"));
    let vol = served.volume();
    // fio writes its verify-state file into its working directory: keep it in the scratch.
    let fio = Command::new("fio")
        .current_dir(d.path())
        .args([
            "--name=verify",
            &format!("--filename={}", vol.display()),
            "--rw=randwrite",
            "--bs=16k",
            "--size=100%",
            "--verify=crc32c",
            "--verify_fatal=1",
            "--do_verify=1",
            "--ioengine=psync",
            "--direct=1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    ok(&["array", "fail", &list, &ms[1]]);
    let out = fio.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && !text.contains("verify: bad"),
        "fio verify failed:\n{text}"
    );
    served.stop();
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(
        js["degraded"], true,
        "the failure must have been picked up by serve: {js}"
    );
    assert_eq!(js["state"], "clean");
}

/// `fail` while `array serve` runs the array goes to the serving process (one writer of the
/// superblocks); verbs that would write metadata behind its back, and a second serve, are
/// refused in one line.
#[test]
fn fail_on_a_served_array_goes_through_the_serving_process() {
    ensure_fuse();
    let d = scratch();
    let ms = members(d.path(), 4, "f");
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "16k", "--size", "4m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    let list = ms.join(",");
    let served = Served::start(&list, &d.path().join("mnt"));
    let pattern: Vec<u8> = (0..3 * 16384 * 7).map(|i| (i * 11 % 253) as u8).collect();
    let vol = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(served.volume())
        .unwrap();
    vol.write_all_at(&pattern, 4096).unwrap();

    let spare = d.path().join("spare").display().to_string();
    std::fs::write(&spare, vec![0u8; 4 << 20]).unwrap();
    let other_mnt = d.path().join("mnt2");
    std::fs::create_dir_all(&other_mnt).unwrap();
    for (verb, args) in [
        ("remove", vec!["array", "remove", &list, &ms[3]]),
        ("add", vec!["array", "add", &list, &spare]),
        ("rebuild", vec!["array", "rebuild", "--quiet", &list]),
        ("scrub", vec!["array", "scrub", "--check", &list]),
        (
            "serve",
            vec![
                "array",
                "serve",
                "--fuse",
                other_mnt.to_str().unwrap(),
                &list,
            ],
        ),
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{verb} while served: {err}");
        assert!(
            err.contains("in use by another process") && err.trim_end().lines().count() == 1,
            "{verb} while served: {err}"
        );
    }

    let out = ok(&["array", "fail", &list, &ms[1]]);
    assert!(out.contains("running array"), "{out}");
    // A second failure would lose data: the serving process refuses it as bad input.
    let o = run(&["array", "fail", &list, &ms[2]]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("survives"), "{err}");
    // The volume keeps serving, degraded, and takes new writes.
    let mut got = vec![0u8; pattern.len()];
    vol.read_exact_at(&mut got, 4096).unwrap();
    assert!(got == pattern, "served data differs after fail");
    vol.write_all_at(&pattern[..16384], 1 << 20).unwrap();
    drop(vol);
    served.stop();

    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["degraded"], true, "{js}");
    assert_eq!(js["state"], "clean", "{js}");
    let faulty: Vec<&serde_json::Value> = js["member_status"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["state"] == "faulty")
        .collect();
    assert_eq!(faulty.len(), 1, "{js}");
    assert_eq!(faulty[0]["path"], ms[1].as_str(), "{js}");
    let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
    let mut got = vec![0u8; pattern.len()];
    t.read_at(&mut got, 4096).unwrap();
    assert!(got == pattern, "data differs after reassembly");
    let mut got = vec![0u8; 16384];
    t.read_at(&mut got, 1 << 20).unwrap();
    assert!(got == pattern[..16384], "degraded write lost");
}

/// Run a system tool; panic with its stderr if it fails.
fn tool(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd} cannot run ({e}): install util-linux and e2fsprogs"));
    assert!(
        o.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// A loop device bound to a file, detached when dropped.
struct Loop(String);
impl Loop {
    fn attach(file: &Path) -> Loop {
        let dev = tool("losetup", &["--find", "--show", file.to_str().unwrap()]);
        Loop(dev.trim().to_string())
    }
}
impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A mounted filesystem, unmounted when dropped (lazily if it is busy).
struct Mounted(PathBuf);
impl Mounted {
    fn mount(dev: &str, dir: &Path, opts: &str) -> Mounted {
        std::fs::create_dir_all(dir).unwrap();
        tool("mount", &["-o", opts, dev, dir.to_str().unwrap()]);
        Mounted(dir.to_path_buf())
    }
}
impl Drop for Mounted {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// FNV-1a, 64 bits: a checksum of a file's bytes.
fn fnv64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn file_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The issue's "any program can use it": a RAID 5 of four files served through FUSE, a loop
/// device over DIR/volume, ext4 made and mounted on it, files written and read back by
/// checksum (after a remount, so they come from the array, not the page cache), everything
/// torn down, the server stopped with SIGTERM, and the array assembled again from its members
/// with the files intact. Needs root (losetup, mount), util-linux, e2fsprogs and FUSE.
#[test]
fn losetup_mkfs_mount_over_the_fuse_volume() {
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test needs root: losetup and mount"
    );
    ensure_fuse();
    let d = scratch();
    let ms = members(d.path(), 4, "l");
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "64k", "--size", "40m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    let list = ms.join(",");
    let files: Vec<(String, Vec<u8>)> = [(1u64, 3 << 20), (2, 4096), (3, 777), (4, 1 << 20)]
        .iter()
        .map(|&(seed, len)| (format!("file{seed}"), file_bytes(seed, len)))
        .collect();
    let sums: Vec<u64> = files.iter().map(|(_, b)| fnv64(b)).collect();
    let fs_dir = d.path().join("fs");
    let verify = |dir: &Path, when: &str| {
        for ((name, _), want) in files.iter().zip(&sums) {
            let got = std::fs::read(dir.join(name)).unwrap();
            assert_eq!(fnv64(&got), *want, "{name} differs {when}");
        }
    };
    {
        let served = Served::start(&list, &d.path().join("mnt"));
        let lo = Loop::attach(&served.volume());
        tool("mkfs.ext4", &["-q", &lo.0]);
        {
            let m = Mounted::mount(&lo.0, &fs_dir, "rw");
            for (name, bytes) in &files {
                std::fs::write(m.0.join(name), bytes).unwrap();
            }
            tool("sync", &[]);
            verify(&m.0, "right after writing");
        }
        {
            let m = Mounted::mount(&lo.0, &fs_dir, "ro");
            verify(&m.0, "after a remount");
        }
        drop(lo);
        served.stop();
    }
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(
        js["state"], "clean",
        "SIGTERM must stop the array cleanly: {js}"
    );
    let out = ok(&["array", "scrub", "--check", &list]);
    assert!(out.contains(" 0 mismatched"), "{out}");
    // Assembled again from the members alone: the filesystem and its files are there.
    let served = Served::start(&list, &d.path().join("mnt"));
    let lo = Loop::attach(&served.volume());
    tool("fsck.ext4", &["-n", "-f", &lo.0]);
    {
        let m = Mounted::mount(&lo.0, &fs_dir, "ro");
        verify(&m.0, "after re-assembly");
    }
    drop(lo);
    served.stop();
}

/// A rebuild of two RAID 6 members interrupted half way keeps its checkpoint: status shows
/// the progress, and the next `rebuild` resumes from there (its first progress line is past
/// half), shows percent, rate and time left, and ends with every byte back.
#[test]
fn interrupted_rebuild_resumes_with_progress_and_rate() {
    let d = scratch();
    let ms = members(d.path(), 6, "r");
    let list = ms.join(",");
    let mut args = vec![
        "array", "create", "--level", "6", "--chunk", "16k", "--size", "9m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    let pattern: Vec<u8> = (0..4 * 16384 * 100).map(|i| (i * 29 % 241) as u8).collect();
    {
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        t.write_at(&pattern, 0).unwrap();
    }
    ok(&["array", "fail", &list, &ms[1]]);
    ok(&["array", "fail", &list, &ms[4]]);
    ok(&["array", "remove", &list, &ms[1]]);
    let without1: Vec<String> = [0, 2, 3, 4, 5].iter().map(|&i| ms[i].clone()).collect();
    ok(&["array", "remove", &without1.join(","), &ms[4]]);
    for m in [&ms[1], &ms[4]] {
        std::fs::write(m, vec![0x5au8; 9 << 20]).unwrap();
    }
    let rest: Vec<String> = [0, 2, 3, 5].iter().map(|&i| ms[i].clone()).collect();
    for m in [&ms[1], &ms[4]] {
        ok(&["array", "add", "--force", &rest.join(","), m]);
    }
    // Interrupted half way (what Ctrl-C does: the stop flag), through the library.
    let paths: Vec<PathBuf> = ms.iter().map(PathBuf::from).collect();
    assert_eq!(raidlab_array::manage::assign_spares(&paths).unwrap(), 2);
    {
        let arr = raidlab_array::manage::open(&paths, false).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let done = raidlab_array::manage::rebuild_all(&arr, &stop, &mut |_, d, t| {
            if d * 2 >= t {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        })
        .unwrap();
        assert!(!done, "the rebuild must stop when asked");
        arr.close().unwrap();
    }
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    let p = js["rebuild_progress"].as_f64().unwrap_or(-1.0);
    assert!((0.45..0.6).contains(&p), "rebuild progress {p}: {js}");
    assert_eq!(js["degraded"], true, "{js}");
    let text = ok(&["array", "status", &list]);
    assert!(text.contains("rebuild: 5"), "{text}");
    // Resume, with the progress line on.
    let o = run(&["array", "rebuild", &list]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("MB/s") && err.contains("s left") && err.contains("100.0%"),
        "{err}"
    );
    let first = err
        .split(['\r', '\n'])
        .find_map(|l| {
            let (head, _) = l.split_once('%')?;
            head.rsplit(' ').next()?.parse::<f64>().ok()
        })
        .unwrap();
    assert!(first >= 45.0, "resumed rebuild started at {first}%: {err}");
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["degraded"], false, "{js}");
    assert!(js["rebuild_progress"].is_null(), "{js}");
    let out = ok(&["array", "scrub", "--check", &list]);
    assert!(out.contains(" 0 mismatched"), "{out}");
    // The two rebuilt members alone with the rest: fail two others, read everything.
    ok(&["array", "fail", &list, &ms[0]]);
    ok(&["array", "fail", &list, &ms[5]]);
    let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
    let mut got = vec![0u8; pattern.len()];
    t.read_at(&mut got, 0).unwrap();
    assert!(got == pattern, "data differs after the resumed rebuild");
}

/// Members that are out of date, missing, foreign, or hold data: each named in one line.
#[test]
fn stale_missing_foreign_and_data_holding_members_are_named() {
    let d = scratch();
    // A member holding data is refused by create without --force, and by name.
    let ms = members(d.path(), 4, "s");
    std::fs::write(&ms[2], vec![0x11u8; 4 << 20]).unwrap();
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "16k", "--size", "4m",
    ];
    args.extend(ms.iter().map(String::as_str));
    let o = run(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&ms[2]) && err.contains("data") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // Data past a zeroed first MiB is found too.
    std::fs::write(&ms[2], vec![0u8; 4 << 20]).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&ms[2])
        .unwrap();
    f.write_all_at(b"still here", (4 << 20) - 100).unwrap();
    let o = run(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&ms[2]) && err.contains("nonzero bytes at byte"),
        "{err}"
    );
    args.push("--force");
    ok(&args);
    let list = ms.join(",");
    // A copy of member 1 taken now goes out of date when the array is written.
    let stale = std::fs::read(&ms[1]).unwrap();
    let pattern: Vec<u8> = (0..3 * 16384 * 9).map(|i| (i * 17 % 239) as u8).collect();
    {
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        t.write_at(&pattern, 0).unwrap();
    }
    std::fs::write(&ms[1], &stale).unwrap();
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["member_status"][1]["state"], "out-of-date", "{js}");
    // `run --filename array:` kicks it (md's non-fresh member), says so, and reads right.
    let target = format!("--filename=array:{list}");
    let o = run(&["run", &target, "--rw=read", "--size=64k", "--name=x"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&ms[1]) && err.contains("out of date") && err.contains("kicking"),
        "{err}"
    );
    {
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        let mut got = vec![0u8; pattern.len()];
        t.read_at(&mut got, 0).unwrap();
        assert!(got == pattern, "data differs with a stale member kicked");
    }
    // Stale member 1 and member 3 left out of the list: more than RAID 5 survives, but
    // listed, member 3 would start it: the list is the mistake (exit 2), one line naming
    // both.
    let without3 = ms[..3].join(",");
    let o = run(&[
        "run",
        &format!("--filename=array:{without3}"),
        "--rw=read",
        "--size=64k",
        "--name=x",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with("raidlab: ")
            && last.contains("cannot start")
            && last.contains("slot 3 is in service but no member given holds it")
            && last.contains(&format!("{} out of date", ms[1]))
            && last.contains("survives 1")
            && last.contains("list all 4 members"),
        "{err}"
    );
    // Listed, member 3 starts it (member 1 kicked); member 3 itself missing is a failure
    // of the array, exit 1, naming both.
    let gone = d.path().join("gone");
    std::fs::rename(&ms[3], &gone).unwrap();
    let o = run(&[
        "run",
        &format!("--filename=array:{without3}"),
        "--rw=read",
        "--size=64k",
        "--name=x",
        "--force",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(
        last.contains("cannot start")
            && last.contains("slot 3 missing")
            && last.contains(&format!("{} out of date", ms[1])),
        "{err}"
    );
    std::fs::rename(&gone, &ms[3]).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    // A member of another array in the list: named as foreign, bad input.
    let other = members(d.path(), 2, "o");
    let mut a1 = vec!["array", "create", "--level", "1", "--size", "4m"];
    a1.extend(other.iter().map(String::as_str));
    ok(&a1);
    let mixed = format!("{list},{}", other[0]);
    let o = run(&[
        "run",
        &format!("--filename=array:{mixed}"),
        "--rw=read",
        "--size=64k",
        "--name=x",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("foreign") && err.contains(&other[0]), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

fn mounted(dir: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let want = dir.canonicalize().unwrap().display().to_string();
    mounts
        .lines()
        .any(|l| l.split(' ').nth(1) == Some(want.as_str()))
}

/// `array serve` stops on Ctrl-C (SIGINT) and on SIGTERM alike: the volume is unmounted, the
/// process exits 0, and the array is recorded clean with what was written.
#[test]
fn serve_unmounts_cleanly_on_ctrl_c_and_sigterm() {
    ensure_fuse();
    let d = scratch();
    let ms = members(d.path(), 3, "u");
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "16k", "--size", "4m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    let list = ms.join(",");
    for (k, sig) in [libc::SIGINT, libc::SIGTERM].into_iter().enumerate() {
        let mnt = d.path().join(format!("mnt{k}"));
        let mut served = Served::start(&list, &mnt);
        assert!(mounted(&mnt), "not mounted while serving");
        let block = vec![0x40u8 + k as u8; 65536];
        {
            let vol = std::fs::OpenOptions::new()
                .write(true)
                .open(served.volume())
                .unwrap();
            vol.write_all_at(&block, 65536 * k as u64).unwrap();
        }
        unsafe { libc::kill(served.child.id() as i32, sig) };
        let st = served.child.wait().unwrap();
        assert!(
            st.success(),
            "serve did not stop cleanly on signal {sig}: {st}"
        );
        assert!(!mounted(&mnt), "still mounted after signal {sig}");
        std::mem::forget(served);
        let js: serde_json::Value =
            serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list]))
                .unwrap();
        assert_eq!(js["state"], "clean", "after signal {sig}: {js}");
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        let mut got = vec![0u8; block.len()];
        t.read_at(&mut got, 65536 * k as u64).unwrap();
        assert!(
            got == block,
            "write through the volume lost after signal {sig}"
        );
    }
}

/// An array stopped uncleanly and then missing a member does not start through `raidlab run`
/// without --force, and says why in one line; with --force it does, and reads what was written.
/// A member left out of `run`'s list by mistake would be marked missing at the first write,
/// and the array would need a rebuild: refused (one line, nothing changed) unless `--force`;
/// forced, the array runs degraded, and the left-out member, given again, is named stale with
/// the commands that put it back, which do.
#[test]
fn a_member_left_out_of_the_list_needs_force() {
    let d = scratch();
    let ms = members(d.path(), 3, "l");
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "16k", "--size", "4m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    let list = ms.join(",");
    let two = ms[..2].join(",");
    let before: Vec<Vec<u8>> = ms.iter().map(|m| std::fs::read(m).unwrap()).collect();
    let write_two = format!("--filename=array:{two}");
    let job = ["--rw=randwrite", "--bs=4k", "--size=256k", "--name=x"];
    for rw in ["--rw=randwrite", "--rw=read"] {
        let mut a = vec![
            "run",
            write_two.as_str(),
            rw,
            "--bs=4k",
            "--size=256k",
            "--name=x",
        ];
        a.push("--no-progress");
        let o = run(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{rw}: {err}");
        assert!(
            err.contains("slot 2 is in service but no member given holds it")
                && err.contains("list all 3 members")
                && err.contains("--force"),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    for (m, b) in ms.iter().zip(&before) {
        assert!(
            std::fs::read(m).unwrap() == *b,
            "{m} changed by a refused run"
        );
    }
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["degraded"], false, "{js}");
    // Forced, it runs degraded.
    let mut a = vec!["run", write_two.as_str()];
    a.extend(job);
    a.extend(["--force", "--no-progress"]);
    let o = run(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["degraded"], true, "{js}");
    // Once recorded as missing, the slot is no longer "in service": no --force needed.
    let mut a = vec!["run", write_two.as_str()];
    a.extend(job);
    a.push("--no-progress");
    let o = run(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Given again, the member is named stale, with the way back; following it makes the
    // array whole.
    let all = format!("--filename=array:{list}");
    let o = run(&[
        "run",
        &all,
        "--rw=read",
        "--size=64k",
        "--name=x",
        "--no-progress",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let note = err
        .lines()
        .find(|l| l.contains("is stale"))
        .unwrap_or_else(|| panic!("no stale note: {err}"));
    let steps = note
        .split("to put it back: ")
        .nth(1)
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no commands in: {note}"));
    for step in steps.split(", ") {
        let words: Vec<&str> = step.split(' ').collect();
        assert_eq!(words[0], "raidlab", "{note}");
        ok(&words[1..]);
    }
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["degraded"], false, "{js}");
    assert_eq!(js["member_status"][2]["state"], "active", "{js}");
}

#[test]
fn dirty_and_degraded_array_needs_force_and_says_why() {
    let d = scratch();
    let ms = members(d.path(), 4, "w");
    let mut args = vec![
        "array", "create", "--level", "5", "--chunk", "16k", "--size", "4m",
    ];
    args.extend(ms.iter().map(String::as_str));
    ok(&args);
    let list = ms.join(",");
    let block = vec![0x2du8; 65536];
    {
        let paths: Vec<PathBuf> = ms.iter().map(PathBuf::from).collect();
        let arr =
            raidlab_array::assemble(&paths, &raidlab_array::AssembleOptions::default()).unwrap();
        arr.write_at(&block, 0).unwrap();
        // The process "dies": the array is never stopped, its superblocks say dirty.
        std::mem::forget(arr);
    }
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["state"], "dirty", "{js}");
    let three = format!("--filename=array:{}", ms[..3].join(","));
    let o = run(&["run", &three, "--rw=read", "--size=64k", "--name=x"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not stopped cleanly")
            && err.contains("degraded")
            && err.contains("write hole")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let o = run(&[
        "run",
        &three,
        "--rw=read",
        "--size=64k",
        "--name=x",
        "--force",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // The forced start says what it risks, verbose or not.
    assert!(
        err.contains("warning: started the dirty, degraded raid5 array because of --force")
            && err.contains("a rebuild writes them wrong"),
        "{err}"
    );
    let t = raidlab_array::open_target(
        &ms[..3].join(","),
        &raidlab_array::OpenOptions { force: true },
    )
    .unwrap();
    let mut got = vec![0u8; block.len()];
    t.read_at(&mut got, 0).unwrap();
    assert!(got == block, "data differs on the forced degraded start");
}

/// `array create` of a nested array: `children` arrays of `per_child` new member files each
/// (named TAG{i}m…), every child given as `--of CHILD:members` (CHILD = "level:chunk:"), under
/// the parent's `args`. Returns the members per child, all members, and the array's list.
fn create_nested(
    dir: &Path,
    (tag, children, per_child, child): (&str, usize, usize, &str),
    args: &[&str],
) -> (Vec<Vec<String>>, Vec<String>, String) {
    let kids: Vec<Vec<String>> = (0..children)
        .map(|i| members(dir, per_child, &format!("{tag}{i}m")))
        .collect();
    let all: Vec<String> = kids.iter().flatten().cloned().collect();
    let list = all.join(",");
    let ofs: Vec<String> = kids
        .iter()
        .map(|k| format!("{child}{}", k.join(",")))
        .collect();
    let mut full = vec!["array", "create"];
    full.extend_from_slice(args);
    for o in &ofs {
        full.extend(["--of", o.as_str()]);
    }
    ok(&full);
    (kids, all, list)
}

/// Assemble `list`, fill the whole volume with byte `i * mul % modulo` at offset `i`, and
/// return what was written.
fn fill_volume(list: &str, mul: usize, modulo: usize) -> Vec<u8> {
    let t = raidlab_array::open_target(list, &raidlab_array::OpenOptions::default()).unwrap();
    let pattern: Vec<u8> = (0..t.size() as usize)
        .map(|i| (i * mul % modulo) as u8)
        .collect();
    t.write_at(&pattern, 0).unwrap();
    pattern
}

/// Assemble `list` and say whether the whole volume reads back as `want`.
fn volume_holds(list: &str, want: &[u8]) -> bool {
    let t = raidlab_array::open_target(list, &raidlab_array::OpenOptions::default()).unwrap();
    let mut got = vec![0u8; want.len()];
    t.read_at(&mut got, 0).unwrap();
    got == want
}

/// Two children degraded, a spare for one of them only: rebuild rebuilds that child and
/// then says what is still out of service (exit 2), not that the array is in sync.
#[test]
fn rebuild_with_a_child_left_degraded_does_not_say_in_sync() {
    let d = scratch();
    let (kids, _, list) = create_nested(
        d.path(),
        ("r", 2, 3, "5:16k:"),
        &["--level", "0", "--chunk", "64k", "--size", "4m"],
    );
    ok(&["array", "fail", &list, &kids[0][1]]);
    ok(&["array", "fail", &list, &kids[1][2]]);
    let s = d.path().join("s").display().to_string();
    std::fs::File::create(&s).unwrap().set_len(4 << 20).unwrap();
    ok(&["array", "add", &kids[0].join(","), &s]);
    let with_s = format!("{list},{s}");
    let o = run(&["array", "rebuild", "--quiet", &with_s]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(!out.contains("in sync"), "{out}");
    assert!(
        err.contains("child 1 slot 2") && err.contains("no spare"),
        "{err}"
    );
    // The first child was rebuilt onto the spare all the same.
    let st = ok(&["array", "status", &with_s]);
    assert!(!st.contains("rebuilding"), "{st}");
}

/// A RAID 0 child of a RAID 5 loses a disk: the child fails, the RAID 5 runs degraded; the
/// dead disk is replaced (`fail --force`, `remove`, `add`) and `rebuild` rewrites the whole
/// child from the RAID 5's parity — interrupted, shown rebuilding at the parent's level,
/// resumed. A RAID 0 over RAID 5s losing a whole child says its data is lost.
#[test]
fn a_failed_child_is_replaced_and_rebuilt_from_the_parent() {
    let d = scratch();
    let (kids, all, list) = create_nested(
        d.path(),
        ("c", 3, 2, "0:4k:"),
        &["--level", "5", "--chunk", "16k", "--size", "6m"],
    );
    let pattern = fill_volume(&list, 31, 251);
    let read_all = |list: &str| volume_holds(list, &pattern);

    // Failing a disk of a RAID 0 child needs --force (the child fails with it).
    let o = run(&["array", "fail", &list, &kids[1][0]]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--force") && err.lines().count() == 1, "{err}");
    ok(&["array", "fail", "--force", &list, &kids[1][0]]);
    assert!(read_all(&list), "degraded at the RAID 5 level");
    // Nothing replaced yet: rebuild says what is missing (the user's to fix: exit 2).
    let o = run(&["array", "rebuild", "--quiet", &list]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("add a spare"), "{err}");

    ok(&["array", "remove", &list, &kids[1][0]]);
    std::fs::write(&kids[1][0], vec![0xa5u8; 6 << 20]).unwrap();
    let rest: Vec<String> = all.iter().filter(|m| **m != kids[1][0]).cloned().collect();
    let out = ok(&["array", "add", "--force", &rest.join(","), &kids[1][0]]);
    assert!(out.contains("spare"), "{out}");

    // Interrupted (what Ctrl-C does), through the library; the child shows as rebuilding.
    let paths: Vec<PathBuf> = all.iter().map(PathBuf::from).collect();
    raidlab_array::manage::assign_spares(&paths).unwrap();
    {
        let arr = raidlab_array::manage::open(&paths, false).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let done = raidlab_array::manage::rebuild_all(&arr, &stop, &mut |_, d, t| {
            if d * 2 >= t {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        })
        .unwrap();
        assert!(!done);
        arr.close().unwrap();
    }
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["not_active"][0][0], 1, "{js}");
    assert_eq!(js["not_active"][0][1], "rebuilding", "{js}");
    let p = js["rebuild_progress"].as_f64().unwrap_or(-1.0);
    assert!((0.4..0.7).contains(&p), "rebuild progress {p}: {js}");
    let text = ok(&["array", "status", &list]);
    assert!(
        text.contains("slot 1 rebuilding") && text.contains("rebuild: "),
        "{text}"
    );
    assert!(read_all(&list), "half rebuilt");

    let o = run(&["array", "rebuild", &list]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("rebuild raid5") && err.contains("MB/s") && err.contains("100.0%"),
        "{err}"
    );
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["degraded"], false, "{js}");
    let out = ok(&["array", "scrub", "--check", &list]);
    assert!(out.contains(" 0 mismatched"), "{out}");
    // The rebuilt child carries real data: fail another child, read everything.
    ok(&["array", "fail", "--force", &list, &kids[2][1]]);
    assert!(read_all(&list), "served through the rebuilt child");

    // RAID 0 over RAID 5s: a RAID 5 child losing two disks has lost its data.
    let (kids, all, list) = create_nested(
        d.path(),
        ("z", 2, 3, "5:4k:"),
        &["--level", "0", "--chunk", "16k", "--size", "4m"],
    );
    ok(&["array", "fail", &list, &kids[0][0]]);
    ok(&["array", "fail", "--force", &list, &kids[0][1]]);
    let mut given: Vec<String> = all[2..].to_vec();
    for m in &kids[0][..2] {
        ok(&["array", "remove", &list, m]);
        ok(&["array", "add", "--force", &given.join(","), m]);
        given.push(m.clone());
    }
    let o = run(&["array", "rebuild", "--quiet", &list]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with("raidlab: cannot rebuild")
            && last.contains("no redundancy")
            && last.contains("data is lost"),
        "{err}"
    );
}

/// kill -9 of `raidlab array rebuild` while it rewrites a child from the parent: the child
/// stays marked rebuilding, and the next `rebuild` finishes it with every byte right.
#[test]
fn kill_9_during_a_parent_level_rebuild_then_rebuild_again() {
    let d = scratch();
    let (kids, all, list) = create_nested(
        d.path(),
        ("k", 3, 2, "0:16k:"),
        &["--level", "5", "--chunk", "64k", "--size", "48m"],
    );
    let pattern = fill_volume(&list, 37, 253);
    ok(&["array", "fail", "--force", &list, &kids[0][1]]);
    ok(&["array", "remove", &list, &kids[0][1]]);
    std::fs::write(&kids[0][1], vec![0x3cu8; 48 << 20]).unwrap();
    let rest: Vec<String> = all.iter().filter(|m| **m != kids[0][1]).cloned().collect();
    ok(&["array", "add", "--force", &rest.join(","), &kids[0][1]]);

    let mut child = raidlab()
        .args(["array", "rebuild", &list])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // The first progress line means the parent-level rebuild is under way.
    let mut err = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains("rebuild raid5") {
        use std::io::Read;
        if err.read(&mut byte).unwrap() == 0 {
            panic!("rebuild ended early: {}", String::from_utf8_lossy(&seen));
        }
        seen.push(byte[0]);
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["not_active"][0][1], "rebuilding", "{js}");

    let o = run(&["array", "rebuild", "--quiet", &list]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = ok(&["array", "scrub", "--check", &list]);
    assert!(out.contains(" 0 mismatched"), "{out}");
    ok(&["array", "fail", "--force", &list, &kids[1][0]]);
    assert!(
        volume_holds(&list, &pattern),
        "data differs after a rebuild killed and run again"
    );
}

/// `args` fails with exit `code` and one line on stderr containing every one of `want`, and
/// no panic; the line.
fn refused(args: &[&str], code: i32, want: &[&str]) -> String {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: wanted '{w}' in: {err}");
    }
    err
}

fn create_args<'a>(level: &'a str, extra: &[&'a str], ms: &'a [String]) -> Vec<&'a str> {
    let mut a = vec!["array", "create", "--level", level];
    a.extend_from_slice(extra);
    a.extend(ms.iter().map(String::as_str));
    a
}

/// Members of different sizes give an array sized by the smallest, as md's; what the larger
/// ones lose is said in one note (mdadm warns past 1%), not lost silently. Members within 1%
/// of each other say nothing.
#[test]
fn create_notes_members_larger_than_the_smallest() {
    let d = scratch();
    let ms = members(d.path(), 3, "s");
    for (m, size) in ms.iter().zip([16u64 << 20, 16 << 20, 32 << 20]) {
        std::fs::File::create(m).unwrap().set_len(size).unwrap();
    }
    let mut args = vec!["array", "create", "--level", "5", "--chunk", "64k"];
    args.extend(ms.iter().map(String::as_str));
    let o = run(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].contains(&format!("member {} is 33554432 bytes", ms[2]))
            && notes[0].contains("16777216"),
        "{err}"
    );
    let ms = members(d.path(), 3, "e");
    for (m, size) in ms.iter().zip([16u64 << 20, 16 << 20, (16 << 20) + 65536]) {
        std::fs::File::create(m).unwrap().set_len(size).unwrap();
    }
    let mut args = vec!["array", "create", "--level", "5", "--chunk", "64k"];
    args.extend(ms.iter().map(String::as_str));
    let o = run(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && !err.contains("note:"), "{err}");
    // --size over existing larger members (mdadm's --size would cap them): said, once each.
    let ms = members(d.path(), 3, "z");
    for m in &ms {
        std::fs::File::create(m).unwrap().set_len(16 << 20).unwrap();
    }
    let mut args = vec!["array", "create", "--level", "5", "--size", "8m"];
    args.extend(ms.iter().map(String::as_str));
    let o = run(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(notes.len(), 3, "{err}");
    assert!(
        notes[0].contains(&format!("member {} exists and is 16777216 bytes", ms[0]))
            && notes[0].contains("all of it is used"),
        "{err}"
    );
}

/// Data past the first MiB of a member file, between the blocks a sample would read, is
/// found by create and by add (which share the check), and nothing is written.
#[test]
fn create_and_add_find_data_anywhere_in_a_member_file() {
    let d = scratch();
    let ms = members(d.path(), 3, "u");
    for m in &ms {
        std::fs::File::create(m).unwrap().set_len(16 << 20).unwrap();
    }
    let block: Vec<u8> = (0..65536).map(|i| (i % 251 + 1) as u8).collect();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&ms[2])
        .unwrap();
    f.write_all_at(&block, 150 * 65536).unwrap();
    refused(
        &create_args("1", &[], &ms),
        2,
        &[&ms[2], "nonzero bytes at byte 9830400", "--force"],
    );
    let mut got = vec![0u8; 65536];
    f.read_exact_at(&mut got, 150 * 65536).unwrap();
    assert!(got == block, "the member's data was overwritten");
    // add: the same check.
    ok(&create_args("1", &[], &ms[..2]));
    refused(
        &["array", "add", &ms[..2].join(","), &ms[2]],
        2,
        &[&ms[2], "nonzero bytes at byte 9830400", "--force"],
    );
    f.read_exact_at(&mut got, 150 * 65536).unwrap();
    assert!(got == block, "the member's data was overwritten by add");
}

/// One file under two names (symbolic link, hard link, ./name beside the absolute path, a
/// loop device over it) is refused before any superblock is written, by create, add and
/// assembly.
#[test]
fn one_file_under_two_names_is_refused_before_anything_is_written() {
    let d = scratch();
    let ms = members(d.path(), 3, "k");
    for m in &ms {
        std::fs::File::create(m).unwrap().set_len(16 << 20).unwrap();
    }
    let sym = d.path().join("k0link").display().to_string();
    let hard = d.path().join("k0hard").display().to_string();
    std::os::unix::fs::symlink(&ms[0], &sym).unwrap();
    std::fs::hard_link(&ms[0], &hard).unwrap();
    let dotted = d.path().join("sub/../k0").display().to_string();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let untouched = |what: &str| {
        for m in &ms {
            let mut head = [0u8; 8];
            std::fs::File::open(m)
                .unwrap()
                .read_exact_at(&mut head, 0)
                .unwrap();
            assert_eq!(head, [0u8; 8], "{what}: a superblock was written to {m}");
        }
    };
    for other in [&sym, &hard, &dotted] {
        let mut list = ms.clone();
        list.push(other.clone());
        refused(
            &create_args("5", &["--chunk", "64k"], &list),
            2,
            &[&ms[0], other.as_str(), "are one file"],
        );
        untouched(other);
    }
    // A loop device over k0, where this machine lets us make one.
    let lo = Command::new("losetup")
        .args(["-f", "--show", &ms[0]])
        .output();
    match lo {
        Ok(o) if o.status.success() => {
            let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
            let mut list = ms.clone();
            list.push(dev.clone());
            let o = run(&create_args("5", &["--chunk", "64k"], &list));
            let _ = Command::new("losetup").args(["-d", &dev]).status();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert!(
                err.contains("are one file") && err.contains("loop device over"),
                "{err}"
            );
            untouched(&dev);
        }
        _ => eprintln!("no loop device here (not root?): the loop-device case is not run"),
    }
    // Assembly and add: the array's own members under a second name.
    ok(&create_args("5", &["--chunk", "64k"], &ms));
    let list = format!("{},{sym}", ms.join(","));
    refused(&["array", "status", &list], 2, &["are one file"]);
    let o = run(&[
        "run",
        &format!("--filename=array:{list}"),
        "--rw=read",
        "--size=64k",
        "--name=x",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    refused(
        &["array", "add", &ms.join(","), &hard],
        2,
        &["already a member", "are one file"],
    );
}

/// Superblocks damaged in both copies with the checksum recomputed: every verb refuses the
/// member in one line naming the file and the field; nothing panics or aborts.
#[test]
fn damaged_but_checksum_valid_superblocks_are_refused_by_field() {
    use raidlab_array::member::Member;
    use raidlab_array::superblock::Superblock;
    let d = scratch();
    let ms = members(d.path(), 4, "z");
    ok(&create_args("5", &["--chunk", "64k", "--size", "8m"], &ms));
    let list = ms.join(",");
    let pristine: Vec<Vec<u8>> = ms.iter().map(|m| std::fs::read(m).unwrap()).collect();
    let restore = || {
        for (m, b) in ms.iter().zip(&pristine) {
            std::fs::write(m, b).unwrap();
        }
    };
    let edit = |m: &str, f: &dyn Fn(&mut Superblock)| {
        let member = Member::open(Path::new(m)).unwrap();
        let mut sb = member.read_superblock().unwrap().unwrap();
        f(&mut sb);
        member.write_superblock(&sb).unwrap();
    };
    type Damage = (&'static str, bool, fn(&mut Superblock));
    let cases: [Damage; 5] = [
        ("array.members", true, |s| s.array.members = 200),
        ("array.role", false, |s| s.array.role = 50),
        ("bitmap_bytes", true, |s| s.bitmap_bytes = (1 << 63) - 1),
        ("data_offset", true, |s| s.data_offset = 0),
        ("array.chunk_bytes", true, |s| s.array.chunk_bytes = 3000),
    ];
    for (field, all, damage) in cases {
        let targets = if all { &ms[..] } else { &ms[1..2] };
        for m in targets {
            edit(m, &damage);
        }
        let want = [targets[0].as_str(), field];
        refused(&["array", "status", &list], 2, &want);
        refused(&["array", "scrub", "--check", &list], 2, &want);
        refused(&["array", "rebuild", &list], 2, &want);
        refused(&["array", "fail", &list, &ms[3]], 2, &want);
        let o = run(&[
            "run",
            &format!("--filename=array:{list}"),
            "--rw=read",
            "--size=64k",
            "--name=x",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{field}: {err}");
        assert!(err.contains(field) && !err.contains("panicked"), "{err}");
        restore();
    }
    ok(&["array", "status", &list]);
}

/// scrub --repair: a 3-way mirror takes the majority's copy over a bad first copy; RAID 5
/// says what it did (parity rewritten) and what it cannot know, with the stripe.
#[test]
fn scrub_repair_says_what_it_could_locate() {
    let d = scratch();
    let ms = members(d.path(), 3, "r");
    ok(&create_args("1", &["--size", "4m"], &ms));
    let list = ms.join(",");
    let pattern: Vec<u8> = (0..65536).map(|i| (i * 3 % 253) as u8).collect();
    {
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        t.write_at(&pattern, 0).unwrap();
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&ms[0])
        .unwrap();
    f.write_all_at(&[0xeeu8; 4096], 1 << 20).unwrap();
    let out = ok(&["array", "scrub", "--repair", &list]);
    assert!(
        out.contains("1 mismatched")
            && out.contains("repaired")
            && out.contains(&format!("stripe 0: bad block on {}", ms[0])),
        "{out}"
    );
    {
        let t = raidlab_array::open_target(&list, &raidlab_array::OpenOptions::default()).unwrap();
        let mut got = vec![0u8; pattern.len()];
        t.read_at(&mut got, 0).unwrap();
        assert!(got == pattern, "the bad copy won");
    }
    assert!(ok(&["array", "scrub", "--check", &list]).contains(" 0 mismatched"));

    let r5 = members(d.path(), 3, "p");
    ok(&create_args("5", &["--chunk", "16k", "--size", "4m"], &r5));
    let list5 = r5.join(",");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&r5[1])
        .unwrap();
    f.write_all_at(&[0x77u8; 512], (1 << 20) + 2 * 16384)
        .unwrap();
    let out = ok(&["array", "scrub", "--repair", &list5]);
    assert!(
        out.contains("1 mismatched")
            && out.contains("parity was rewritten to match the data")
            && out.contains("raid5 cannot tell which block")
            && out.contains("may still be wrong")
            && out.contains("stripe 2: mismatch, bad block not located")
            && !out.contains(", repaired"),
        "{out}"
    );
    let js: serde_json::Value = serde_json::from_str(&ok(&[
        "array",
        "scrub",
        "--check",
        "--output-format",
        "json",
        &list5,
    ]))
    .unwrap();
    assert_eq!(js[0]["mismatches"], 0, "{js}");
}

/// The messages of the probe: each one line, the right exit code, advice that fits.
#[test]
fn status_rebuild_scrub_messages_fit_the_situation() {
    let d = scratch();
    // A directory is a usage error, not a raw os error.
    let dir = d.path().join("adir");
    std::fs::create_dir(&dir).unwrap();
    refused(
        &["array", "status", dir.to_str().unwrap()],
        2,
        &["is a directory"],
    );
    // status of a missing file does not suggest --size (status has none).
    let e = refused(
        &[
            "array",
            "status",
            d.path().join("nonexist").to_str().unwrap(),
        ],
        2,
        &["does not exist"],
    );
    assert!(!e.contains("--size"), "{e}");
    // --of with a chunk for RAID 1 is refused as --level 1 --chunk is.
    let k = members(d.path(), 4, "c");
    refused(
        &[
            "array", "create", "--level", "1", "--chunk", "64k", "--size", "4m", &k[0], &k[1],
        ],
        2,
        &["no chunk"],
    );
    refused(
        &[
            "array",
            "create",
            "--level",
            "0",
            "--chunk",
            "64k",
            "--size",
            "4m",
            "--of",
            &format!("1:64k:{},{}", k[0], k[1]),
            "--of",
            &format!("1:64k:{},{}", k[2], k[3]),
        ],
        2,
        &["no chunk"],
    );

    let ms = members(d.path(), 4, "q");
    ok(&create_args("5", &["--chunk", "16k", "--size", "4m"], &ms));
    let list = ms.join(",");
    ok(&["array", "fail", &list, &ms[2]]);
    ok(&["array", "remove", &list, &ms[2]]);
    // The removed member has no superblock: the advice is not to create an array over it.
    let e = refused(
        &["array", "status", &list],
        2,
        &["no raidlab superblock", "raidlab array add"],
    );
    assert!(!e.contains("array create"), "{e}");
    // rebuild with no spare: the user's to fix, saying how.
    let rest = format!("{},{},{}", ms[0], ms[1], ms[3]);
    refused(
        &["array", "rebuild", "--quiet", &rest],
        2,
        &["nothing to rebuild onto", "slot 2", "raidlab array add"],
    );
    // Dirty and degraded: scrub says what scrub needs, not a --force it does not have.
    {
        let paths: Vec<PathBuf> = [&ms[0], &ms[1], &ms[3]].iter().map(PathBuf::from).collect();
        let arr = raidlab_array::assemble(
            &paths,
            &raidlab_array::AssembleOptions {
                force: true,
                ..Default::default()
            },
        )
        .unwrap();
        arr.write_at(&[0x2du8; 4096], 0).unwrap();
        std::mem::forget(arr);
    }
    let e = refused(
        &["array", "scrub", "--check", &rest],
        2,
        &["degraded", "rebuild"],
    );
    assert!(!e.contains("pass --force to start it anyway"), "{e}");
    // Two of four RAID 5 members out: failed, not "clean, degraded".
    let ms = members(d.path(), 4, "v");
    ok(&create_args("5", &["--chunk", "16k", "--size", "4m"], &ms));
    let list = ms.join(",");
    ok(&["array", "fail", &list, &ms[1]]);
    ok(&["array", "fail", "--force", &list, &ms[2]]);
    let st = ok(&["array", "status", &list]);
    assert!(
        st.contains("failed, cannot start: 2 of 4 members out of service")
            && st.contains("raid5 tolerates 1")
            && !st.contains("clean, degraded"),
        "{st}"
    );
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert!(js["cannot_start"].is_string(), "{js}");
}

/// Spares added with `add` show in `status` given only the array's members, numbered after
/// the slots in the order added, each a line saying its path is not known (as mdadm --detail
/// lists an array's spares); `rebuild` gives the lowest slot out of service to the spare
/// added first, whichever order the paths come in.
#[test]
fn status_shows_spares_added_outside_the_list_and_rebuild_takes_them_in_order() {
    let d = scratch();
    let ms = members(d.path(), 5, "m");
    let list = ms.join(",");
    ok(&create_args("6", &["--chunk", "16k", "--size", "4m"], &ms));
    let sp = members(d.path(), 2, "s");
    for (k, s) in sp.iter().enumerate() {
        std::fs::File::create(s).unwrap().set_len(4 << 20).unwrap();
        let out = ok(&["array", "add", &list, s]);
        assert!(out.contains(&format!("number {}", 5 + k)), "{out}");
    }
    let text = ok(&["array", "status", &list]);
    let unknown: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("path not known"))
        .collect();
    assert_eq!(unknown.len(), 2, "{text}");
    for (k, l) in unknown.iter().enumerate() {
        let number = l.split_whitespace().next().unwrap();
        assert_eq!(number, (5 + k).to_string(), "{text}");
        assert!(l.contains("spare"), "{text}");
    }
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["spares_not_given"].as_array().unwrap().len(), 2, "{js}");
    assert_eq!(js["spares_not_given"][0]["number"], 5, "{js}");

    ok(&["array", "fail", &list, &ms[3]]);
    ok(&["array", "fail", &list, &ms[1]]);
    // The spares first and in the reverse of the order they were added.
    let all = format!("{},{},{list}", sp[1], sp[0]);
    ok(&["array", "rebuild", "--quiet", &all]);
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &all])).unwrap();
    let slot_of = |p: &str| {
        let m = js["member_status"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["path"] == p)
            .unwrap_or_else(|| panic!("{p} not in {js}"));
        (m["number"].clone(), m["role"].clone(), m["state"].clone())
    };
    assert_eq!(
        slot_of(&sp[0]),
        (1.into(), 1.into(), "active".into()),
        "{js}"
    );
    assert_eq!(
        slot_of(&sp[1]),
        (3.into(), 3.into(), "active".into()),
        "{js}"
    );
    assert!(
        js["spares_not_given"].as_array().unwrap().is_empty(),
        "{js}"
    );
}

/// Holes in the data areas of `ms` (member files of one array), from their superblocks.
fn data_holes(ms: &[String]) -> u64 {
    ms.iter()
        .map(|p| {
            let m = raidlab_array::member::Member::open(Path::new(p)).unwrap();
            let sb = m.read_superblock().unwrap().unwrap();
            let f = std::fs::File::open(p).unwrap();
            raidlab_engine::safety::hole_bytes(&f, sb.data_offset, sb.data_offset + sb.data_size)
                .unwrap()
        })
        .sum()
}

/// `array create` runs the initial sync: its member files have no holes left and status says
/// nothing of a sync. One whose sync was interrupted (the stop flag Ctrl-C sets, through the
/// library) is shown as not synced, `run` starts it with one line of warning, and `rebuild`
/// finishes the sync, after which the warning is gone.
#[test]
fn an_interrupted_initial_sync_is_shown_warned_about_and_finished_by_rebuild() {
    static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    let d = scratch();
    let help = ok(&["array", "create", "--help"]);
    assert!(
        help.contains("--assume-clean") && help.contains("Skip the initial sync"),
        "{help}"
    );
    let ms = members(d.path(), 4, "y");
    ok(&create_args("5", &["--chunk", "16k", "--size", "4m"], &ms));
    assert_eq!(data_holes(&ms), 0, "create left holes in its members");
    let list = ms.join(",");
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert!(js["sync_progress"].is_null(), "{js}");
    assert!(!ok(&["array", "status", &list]).contains("sync"));

    let ms = members(d.path(), 4, "u");
    let list = ms.join(",");
    let paths: Vec<PathBuf> = ms.iter().map(PathBuf::from).collect();
    let spec = raidlab_array::CreateSpec::new(
        "5",
        None,
        Some(16384),
        paths
            .iter()
            .cloned()
            .map(raidlab_array::MemberSpec::Path)
            .collect(),
    )
    .unwrap();
    let made = raidlab_array::create(
        &spec,
        &raidlab_array::CreateOptions {
            size: Some(4 << 20),
            stop: Some(&STOP),
            ..Default::default()
        },
    );
    assert!(made.is_err(), "an interrupted sync fails create");
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert_eq!(js["sync_progress"], 0.0, "{js}");
    let text = ok(&["array", "status", &list]);
    assert!(
        text.contains("state: clean, not synced") && text.contains("initial sync: 0.0% done"),
        "{text}"
    );
    let target = format!("--filename=array:{list}");
    let read = [
        "run",
        &target,
        "--bs=64k",
        "--size=1m",
        "--name=r",
        "--rw=read",
    ];
    let o = run(&read);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "one line of warning: {err}");
    assert!(
        warnings[0].contains("not synced")
            && warnings[0].contains("do not reach the devices")
            && warnings[0].contains(&format!("raidlab array rebuild {list}")),
        "{err}"
    );
    let o = run(&["array", "rebuild", &list]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("initial sync complete"), "{err}");
    assert_eq!(data_holes(&ms), 0, "the finished sync left holes");
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert!(js["sync_progress"].is_null(), "{js}");
    let out = ok(&["array", "scrub", "--check", &list]);
    assert!(out.contains(" 0 mismatched"), "{out}");
    let o = run(&read);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && !err.contains("warning"), "{err}");
}

/// A nested initial sync (RAID 1 over RAID 5s) stopped in the RAID 1's own pass, after both
/// RAID 5s synced: status says how far (past the leaves' share), `rebuild` goes on from
/// there (its first progress line is no lower), and scrub finds every level consistent.
#[test]
fn a_nested_sync_stopped_in_the_outer_pass_is_resumed_there_by_rebuild() {
    static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    let d = scratch();
    let kids: Vec<Vec<String>> = (0..2)
        .map(|i| members(d.path(), 3, &format!("n{i}m")))
        .collect();
    let all: Vec<String> = kids.iter().flatten().cloned().collect();
    let list = all.join(",");
    let child = |ms: &[String]| {
        raidlab_array::MemberSpec::Array(
            raidlab_array::CreateSpec::new(
                "5",
                None,
                Some(16384),
                ms.iter()
                    .map(|m| raidlab_array::MemberSpec::Path(PathBuf::from(m)))
                    .collect(),
            )
            .unwrap(),
        )
    };
    let spec =
        raidlab_array::CreateSpec::new("1", None, None, kids.iter().map(|k| child(k)).collect())
            .unwrap();
    let made = raidlab_array::create(
        &spec,
        &raidlab_array::CreateOptions {
            size: Some(12 << 20),
            stop: Some(&STOP),
            ..Default::default()
        },
    );
    assert!(made.is_err(), "an interrupted sync fails create");
    // Through the library (what Ctrl-C does: the stop flag), stopped a few batches into the
    // RAID 1's pass: past the leaves' share of the progress.
    let paths: Vec<PathBuf> = all.iter().map(PathBuf::from).collect();
    let leaf_bytes: u64 = paths
        .iter()
        .map(|p| {
            let m = raidlab_array::member::Member::open(p).unwrap();
            m.read_superblock().unwrap().unwrap().data_size
        })
        .sum();
    {
        let arr = raidlab_array::manage::open(&paths, false).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let mut batches = 0;
        let done = raidlab_array::manage::finish_sync(&arr, &stop, &mut |d, _| {
            if d > leaf_bytes {
                batches += 1;
                if batches == 2 {
                    stop.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            }
        })
        .unwrap();
        assert!(!done, "the sync must stop when asked");
        arr.close().unwrap();
    }
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    let p = js["sync_progress"].as_f64().unwrap();
    assert!(p > 0.6 && p < 1.0, "sync progress {p}: {js}");
    for c in 0..2 {
        // Each RAID 5 is synced within itself; the RAID 1's pass is what is left.
        assert_eq!(js["children"][c]["sync_progress"], 1.0, "{js}");
        let w = js["children"][c]["sync_waiting_for"].as_str().unwrap_or("");
        assert!(
            w.starts_with("the pass of the raid1 array above it"),
            "{js}"
        );
    }
    let text = ok(&["array", "status", &list]);
    assert!(
        text.contains(&format!(
            "initial sync: {:.1}% done",
            (p * 1000.0).floor() / 10.0
        )),
        "{text}"
    );

    let o = run(&["array", "rebuild", &list]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("initial sync complete"), "{err}");
    let first = err
        .split(['\r', '\n'])
        .find_map(|l| {
            let (head, _) = l.split_once('%')?;
            head.rsplit(' ').next()?.parse::<f64>().ok()
        })
        .unwrap();
    assert!(
        first >= (p * 1000.0).floor() / 10.0,
        "the resumed sync started at {first}%, below the {:.1}% done: {err}",
        p * 100.0
    );
    let out = ok(&["array", "scrub", "--check", &list]);
    assert_eq!(out.matches(" 0 mismatched").count(), 3, "{out}");
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &list])).unwrap();
    assert!(js["sync_progress"].is_null(), "{js}");
}

/// The device uuid of the member at `p`, as status and the warnings name it.
fn device_uuid(p: &str) -> String {
    let m = raidlab_array::member::Member::open(Path::new(p)).unwrap();
    raidlab_array::superblock::uuid_string(&m.read_superblock().unwrap().unwrap().dev_uuid)
}

/// (state, events) of every member in `status` of `list`, by path.
fn member_states(list: &str) -> Vec<(String, String, u64)> {
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", list])).unwrap();
    js["member_status"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["state"].as_str().unwrap().to_string(),
                m["events"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `fail`, `remove` and `rebuild` (with its spare assignment) record the array's new state on
/// every member of it they find beside the members given, as md records a change on every
/// member of the running array: a member left out of the command is not out of date at the
/// next assembly. Nothing else there is written: another array's members, a file with no
/// superblock, a copy of a member (which of the two is the member cannot be told: neither
/// is written, and the warning says so). A member found nowhere is named in one line.
#[test]
fn fail_remove_and_spare_assignment_reach_members_left_out_of_the_command() {
    let d = scratch();
    let ms = members(d.path(), 4, "m");
    ok(&create_args("5", &["--chunk", "16k", "--size", "4m"], &ms));
    // Neighbours that are not members: another array, a file of data, a link to a member.
    let other = members(d.path(), 3, "f");
    ok(&create_args(
        "5",
        &["--chunk", "16k", "--size", "4m"],
        &other,
    ));
    let data = d.path().join("data").display().to_string();
    std::fs::write(&data, vec![0x5au8; 4 << 20]).unwrap();
    std::os::unix::fs::symlink(&ms[3], d.path().join("link-to-m3")).unwrap();
    let untouched: Vec<(String, Vec<u8>)> = other
        .iter()
        .chain([&data])
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    let all = ms.join(",");

    // m3 left out of fail: it records the failure too.
    let o = run(&["array", "fail", &ms[..3].join(","), &ms[1]]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.is_empty(), "{err}");
    let st = member_states(&all);
    assert_eq!(st[3].1, "active", "{st:?}");
    assert!(st.iter().all(|m| m.2 == st[0].2), "one record: {st:?}");

    // m2 and m3 left out of remove.
    let o = run(&["array", "remove", &ms[..2].join(","), &ms[1]]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rest = format!("{},{},{}", ms[0], ms[2], ms[3]);
    let st = member_states(&rest);
    assert!(st.iter().all(|m| m.1 == "active"), "{st:?}");
    assert!(st.iter().all(|m| m.2 == st[0].2), "one record: {st:?}");

    // rebuild given the spare but not m3: m3, found beside them, takes part (named in one
    // line), so the spare takes slot 1 and the rebuild runs; every member records it.
    let s = d.path().join("s").display().to_string();
    std::fs::File::create(&s).unwrap().set_len(4 << 20).unwrap();
    ok(&["array", "add", &rest, &s]);
    let o = run(&[
        "array",
        "rebuild",
        "--quiet",
        &format!("{},{},{s}", ms[0], ms[2]),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.contains("found beside") && l.contains(&ms[3])),
        "{err}"
    );
    let whole = format!("{rest},{s}");
    let st = member_states(&whole);
    assert!(st.iter().all(|m| m.1 == "active"), "{st:?}");
    assert!(st.iter().all(|m| m.2 == st[0].2), "one record: {st:?}");
    let out = ok(&["array", "scrub", "--check", &whole]);
    assert!(out.contains(" 0 mismatched"), "{out}");
    for (p, bytes) in &untouched {
        assert!(std::fs::read(p).unwrap() == *bytes, "{p} was written");
    }

    // A copy of m3 beside it: neither is written, and one line says so; so is a member
    // found nowhere (m2 moved away).
    let copy = d.path().join("m3.copy").display().to_string();
    std::fs::copy(&ms[3], &copy).unwrap();
    let away = scratch();
    let moved = away.path().join("m2").display().to_string();
    std::fs::copy(&ms[2], &moved).unwrap();
    std::fs::remove_file(&ms[2]).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let o = run(&["array", "fail", &format!("{},{s}", ms[0]), &s]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let (u2, u3) = (device_uuid(&moved), device_uuid(&ms[3]));
    assert!(
        err.starts_with("raidlab: warning: ")
            && err.contains(&format!("slot 2 (device {u2}"))
            && err.contains(&format!("slot 3 (device {u3}"))
            && err.contains(&copy)
            && err.contains("not found"),
        "{err}"
    );
    assert!(
        std::fs::read(&copy).unwrap() == before,
        "the copy was written"
    );
    assert!(std::fs::read(&ms[3]).unwrap() == before, "m3 was written");
}

/// Rewrite the superblock of member `p` as `edit` changes it (what a crash between two
/// members' updates, or a sync stopped at a chosen point, leaves).
fn edit_superblock(p: &str, edit: impl Fn(&mut raidlab_array::superblock::Superblock)) {
    let m = raidlab_array::member::Member::open(Path::new(p)).unwrap();
    let mut sb = m.read_superblock().unwrap().unwrap();
    edit(&mut sb);
    m.write_superblock(&sb).unwrap();
}

/// A nested array created with its initial sync stopped at once (as by Ctrl-C): `top` over
/// children of `child` level, each over `per` members of 4 MiB.
fn nested_unsynced(d: &Path, top: &str, child: &str, per: usize, tag: &str) -> Vec<Vec<String>> {
    static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    let kids: Vec<Vec<String>> = (0..2)
        .map(|i| members(d, per, &format!("{tag}{i}m")))
        .collect();
    let spec = |ms: &[String]| {
        raidlab_array::MemberSpec::Array(
            raidlab_array::CreateSpec::new(
                child,
                None,
                Some(16384),
                ms.iter()
                    .map(|m| raidlab_array::MemberSpec::Path(PathBuf::from(m)))
                    .collect(),
            )
            .unwrap(),
        )
    };
    let top =
        raidlab_array::CreateSpec::new(top, None, None, kids.iter().map(|k| spec(k)).collect())
            .unwrap();
    let made = raidlab_array::create(
        &top,
        &raidlab_array::CreateOptions {
            size: Some(4 << 20),
            stop: Some(&STOP),
            ..Default::default()
        },
    );
    assert!(made.is_err(), "an interrupted sync fails create");
    kids
}

/// `array status` of a nested array whose initial sync has not finished says, at every
/// level, no more than is true: a level whose own part is done but whose tree is still
/// syncing says what it waits for instead of "100.0% done", a fraction short of all is
/// never shown as 100.0%, and the top line is the whole tree's progress, as the assembled
/// array counts it.
#[test]
fn nested_status_shows_no_level_done_before_its_tree() {
    let d = scratch();
    let status = |list: &str| -> (serde_json::Value, String) {
        let js = serde_json::from_str(&ok(&["array", "status", "--output-format", "json", list]))
            .unwrap();
        (js, ok(&["array", "status", list]))
    };
    let whole = |list: &str| {
        let paths = raidlab_array::split_members(list);
        let arr = raidlab_array::manage::open(&paths, false).unwrap();
        let (done, total) = arr.sync_pending().unwrap();
        arr.close().unwrap();
        done as f64 / total as f64
    };

    // RAID 10 as a RAID 1 over two RAID 0s: the RAID 0s are done, the RAID 1's pass is not.
    let kids = nested_unsynced(d.path(), "1", "0", 2, "t");
    let all: Vec<String> = kids.iter().flatten().cloned().collect();
    let list = all.join(",");
    let paths: Vec<PathBuf> = all.iter().map(PathBuf::from).collect();
    {
        // Stopped in the RAID 1's pass: past its leaves' share of the progress.
        let leaf_bytes: u64 = paths
            .iter()
            .map(|p| {
                let m = raidlab_array::member::Member::open(p).unwrap();
                m.read_superblock().unwrap().unwrap().data_size
            })
            .sum();
        let arr = raidlab_array::manage::open(&paths, false).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let done = raidlab_array::manage::finish_sync(&arr, &stop, &mut |d, _| {
            if d > leaf_bytes {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        })
        .unwrap();
        assert!(!done, "the sync must stop when asked");
        arr.close().unwrap();
    }
    let (js, text) = status(&list);
    let p = js["sync_progress"].as_f64().unwrap();
    assert!(p > 0.5 && p < 1.0, "{js}");
    assert!((p - whole(&list)).abs() < 1e-9, "{p}: {js}");
    assert!(!text.contains("100.0%"), "{text}");
    let tenths = (p * 1000.0).floor() / 10.0;
    assert!(
        text.lines().next().is_some()
            && text.contains(&format!("initial sync: {tenths:.1}% done (interrupted")),
        "{text}"
    );
    for c in 0..2 {
        let w = js["children"][c]["sync_waiting_for"].as_str().unwrap_or("");
        assert!(
            w.starts_with("the pass of the raid1 array above it"),
            "{js}"
        );
    }
    assert_eq!(
        text.matches("initial sync: this array's part is done; waiting for the pass of the raid1 array above it").count(),
        2,
        "{text}"
    );

    // Its pass one sector short of the end: 99.9%, not 100.0%.
    let cap = js["capacity_bytes"].as_u64().unwrap();
    for m in &all {
        edit_superblock(m, |sb| sb.parents[0].initial_sync = Some(cap - 512));
    }
    let (js, text) = status(&list);
    let p = js["sync_progress"].as_f64().unwrap();
    assert!(p < 1.0 && p > 0.9999, "{js}");
    assert!(!text.contains("100.0%"), "{text}");
    assert!(text.contains("initial sync: 99.9% done"), "{text}");
    // Every part done, the end not yet recorded (a crash before the leaves cleared their
    // marks): said as such at the top, and rebuild records it.
    for m in &all {
        edit_superblock(m, |sb| sb.parents[0].initial_sync = Some(cap));
    }
    let (js, text) = status(&list);
    assert_eq!(js["sync_progress"], 1.0, "{js}");
    assert!(
        text.lines().any(|l| l.starts_with("initial sync: this array's part is done; waiting for the end of the sync to be recorded")),
        "{text}"
    );
    assert!(!text.contains("100.0%"), "{text}");
    ok(&["array", "rebuild", "--quiet", &list]);
    let (js, _) = status(&list);
    assert!(js["sync_progress"].is_null(), "{js}");

    // RAID 50 with one RAID 5 recorded done and the other not (a stop between the leaves'
    // records): that one waits for the rest of the tree, the top says half.
    let kids = nested_unsynced(d.path(), "0", "5", 3, "f");
    let list = kids.iter().flatten().cloned().collect::<Vec<_>>().join(",");
    for m in &kids[0] {
        edit_superblock(m, |sb| sb.initial_sync = Some(sb.data_size));
    }
    let (js, text) = status(&list);
    assert_eq!(js["sync_progress"], 0.5, "{js}");
    assert!((0.5 - whole(&list)).abs() < 1e-9, "{js}");
    assert_eq!(
        js["children"][0]["sync_waiting_for"], "the rest of the tree (50.0% done in all)",
        "{js}"
    );
    assert_eq!(js["children"][1]["sync_progress"], 0.0, "{js}");
    assert!(!text.contains("100.0%"), "{text}");
    assert!(
        text.contains("initial sync: 50.0% done (interrupted"),
        "{text}"
    );
}

/// `rebuild` given a list that leaves out a healthy member, with another member failed and a
/// spare added: the member left out is found beside those given and takes part (named in
/// one line), so the spare takes the failed member's slot — not the healthy one's, which
/// would leave the RAID 5 with two slots out of service — and the volume reads back whole.
#[test]
fn rebuild_with_a_healthy_member_left_out_takes_it_in() {
    let d = scratch();
    let ms = members(d.path(), 4, "m");
    let list = ms.join(",");
    ok(&create_args("5", &["--chunk", "16k", "--size", "4m"], &ms));
    let want = fill_volume(&list, 7, 251);
    ok(&["array", "fail", &list, &ms[3]]);
    let s = d.path().join("s").display().to_string();
    std::fs::File::create(&s).unwrap().set_len(4 << 20).unwrap();
    ok(&["array", "add", &list, &s]);
    // m2 left out of the list.
    let given = format!("{},{},{s}", ms[0], ms[1]);
    let out = run(&["array", "rebuild", "--quiet", &given]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let named: Vec<&str> = err.lines().filter(|l| l.contains("found beside")).collect();
    assert_eq!(named.len(), 1, "{err}");
    assert!(
        named[0].contains(&ms[2]) && !named[0].contains(&ms[3]),
        "{err}"
    );
    let all = format!("{},{},{},{s}", ms[0], ms[1], ms[2]);
    let js: serde_json::Value =
        serde_json::from_str(&ok(&["array", "status", "--output-format", "json", &all])).unwrap();
    let row = |p: &str| {
        let m = js["member_status"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["path"] == p)
            .unwrap_or_else(|| panic!("{p} not in {js}"));
        (m["role"].clone(), m["state"].clone())
    };
    assert_eq!(row(&ms[2]), (2.into(), "active".into()), "{js}");
    assert_eq!(row(&s), (3.into(), "active".into()), "{js}");
    assert!(volume_holds(&all, &want));
}

/// A member left out of `fail` whose superblock is damaged cannot be known as the array's:
/// the warning names its slot as not found, and names the file found with a damaged
/// superblock beside the members given (with why), which is not written.
#[test]
fn a_member_left_out_with_a_damaged_superblock_is_named_in_the_warning() {
    use raidlab_array::member::Member;
    let d = scratch();
    let ms = members(d.path(), 4, "m");
    ok(&create_args("5", &["--chunk", "16k", "--size", "4m"], &ms));
    let member = Member::open(Path::new(&ms[3])).unwrap();
    let mut sb = member.read_superblock().unwrap().unwrap();
    sb.array.chunk_bytes = 3000;
    member.write_superblock(&sb).unwrap();
    let before = std::fs::read(&ms[3]).unwrap();
    let o = run(&["array", "fail", &ms[..3].join(","), &ms[1]]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("slot 3 (device")
            && err.contains("not found")
            && err.contains("damaged superblock")
            && err.contains(&ms[3])
            && err.contains("chunk"),
        "{err}"
    );
    assert!(std::fs::read(&ms[3]).unwrap() == before, "m3 was written");
}

/// The uuid `array create` printed ("created raid5 array UUID: …").
fn created_uuid(out: &str) -> String {
    out.split_whitespace()
        .nth(3)
        .unwrap()
        .trim_end_matches(':')
        .to_string()
}

#[test]
fn a_removed_member_goes_back_in_without_force_and_foreign_data_still_needs_it() {
    let d = scratch();
    let ms = members(d.path(), 4, "r");
    let list = ms.join(",");
    let out = ok(&create_args("5", &["--chunk", "64k", "--size", "8m"], &ms));
    let uuid = created_uuid(&out);
    // Data all over the array, so the removed member's data area holds nonzero bytes.
    let want = fill_volume(&list, 13, 251);
    ok(&["array", "fail", &list, &ms[2]]);
    ok(&["array", "remove", &list, &ms[2]]);
    let rest = [&ms[0], &ms[1], &ms[3]].map(String::as_str).join(",");
    // A new array over it is told whose data it holds.
    let other = members(d.path(), 1, "o");
    let o = run(&[
        "array", "create", "--level", "1", "--size", "8m", &ms[2], &other[0],
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&uuid) && err.contains("raid5") && err.contains("removed from slot 2"),
        "{err}"
    );
    // Back into the array it came from: no --force needed (md's remove, then add).
    let out = ok(&["array", "add", &rest, &ms[2]]);
    assert!(out.contains("added"), "{out}");
    let out = ok(&["array", "rebuild", "--quiet", &list]);
    assert!(out.contains("complete"), "{out}");
    assert!(volume_holds(&list, &want));
    // Removed again, then written in its metadata area: that is data written since.
    ok(&["array", "fail", &list, &ms[2]]);
    ok(&["array", "remove", &list, &ms[2]]);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&ms[2])
        .unwrap();
    f.write_all_at(b"mine", 300_000).unwrap();
    let o = run(&["array", "add", &rest, &ms[2]]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--force") && err.trim_end().lines().count() == 1,
        "{err}"
    );
}

#[test]
fn adding_another_arrays_member_names_that_array_and_slot() {
    let d = scratch();
    let ms = members(d.path(), 3, "a");
    let list = ms.join(",");
    ok(&create_args("5", &["--chunk", "64k", "--size", "4m"], &ms));
    let theirs = members(d.path(), 2, "b");
    let uuid = created_uuid(&ok(&create_args("1", &["--size", "4m"], &theirs)));
    ok(&["array", "fail", &list, &ms[1]]);
    let o = run(&["array", "add", &list, &theirs[1]]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&uuid)
            && err.contains("raid1")
            && err.contains("slot 1")
            && err.contains("--force")
            && err.trim_end().lines().count() == 1,
        "{err}"
    );
}

/// A RAID 0 member left out of `array:…` is a mistake in the list, as for any level: one
/// line, exit 2, naming the slot, not a failure of the array (exit 1).
#[test]
fn a_raid0_member_left_out_of_the_list_is_bad_input() {
    let d = scratch();
    let ms = members(d.path(), 2, "e");
    ok(&create_args("0", &["--chunk", "64k", "--size", "4m"], &ms));
    let one = format!("--filename=array:{}", ms[0]);
    refused(
        &[
            "run",
            &one,
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            "--name=x",
            "--no-progress",
        ],
        2,
        &["raid0", "slot 1 is in service", "list all 2 members"],
    );
}

/// `serve --fuse DIR` over a directory that holds files would hide them while it runs (the
/// members' own directory, say): refused in one line naming them, before the array starts.
#[test]
fn serve_refuses_a_mount_directory_that_is_not_empty() {
    let d = scratch();
    let ms = members(d.path(), 2, "f");
    ok(&create_args("1", &["--size", "4m"], &ms));
    let list = ms.join(",");
    let dir = d.path().display().to_string();
    // Mounted, serve would run until stopped: give it a minute, then stop it and fail.
    let mut child = raidlab()
        .args(["array", "serve", "--fuse", &dir, &list])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if child.try_wait().unwrap().is_none() {
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        child.wait().unwrap();
        panic!("serve mounted over {dir}, which holds the members");
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for w in ["not empty", "f0", "f1", "--force", "empty directory", &dir] {
        assert!(err.contains(w), "wanted '{w}' in: {err}");
    }
    // Not a directory at all: one line too.
    refused(
        &["array", "serve", "--fuse", &ms[0], &list],
        2,
        &["not a directory"],
    );
}
