//! Members opened O_DIRECT: arrays on loop devices (512- and 4096-byte logical blocks) and
//! on files of a disk filesystem, written and read at offsets, lengths and buffer addresses
//! that are not block-aligned; a member failed, replaced, rebuilt; scrubbed clean. Members in
//! memory stay buffered.
//!
//! The loop-device test needs root and losetup (util-linux); it fails, never skips, without.

use raidlab_array::array::{Array, Backing};
use raidlab_array::manage;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

mod common;
use common::{check_all, scrub_clean, Rng};

/// Loop devices over files in a directory on the root disk, detached when dropped.
struct Loops {
    devs: Vec<PathBuf>,
    _dir: tempfile::TempDir,
}

impl Loops {
    fn new(n: usize, bytes: u64, sector_size: impl Fn(usize) -> u32) -> Loops {
        assert!(
            unsafe { libc::geteuid() } == 0,
            "this test attaches loop devices and must run as root"
        );
        let dir = tempfile::Builder::new()
            .prefix("raidlab-odirect")
            .tempdir_in("/var/tmp")
            .unwrap();
        let mut loops = Loops {
            devs: Vec::new(),
            _dir: dir,
        };
        for i in 0..n {
            let f = loops._dir.path().join(format!("disk{i}"));
            std::fs::File::create(&f).unwrap().set_len(bytes).unwrap();
            let out = Command::new("losetup")
                .args(["--find", "--show", "--direct-io=on", "--sector-size"])
                .arg(sector_size(i).to_string())
                .arg(&f)
                .output()
                .expect("losetup (util-linux) must be installed");
            assert!(
                out.status.success(),
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
            loops.devs.push(PathBuf::from(dev));
        }
        loops
    }
}

impl Drop for Loops {
    fn drop(&mut self) {
        for d in &self.devs {
            let _ = Command::new("losetup").arg("-d").arg(d).status();
        }
    }
}

/// Members here are loop devices and files the test made: created over with --force.
fn new_array(level: &str, members: &[PathBuf], size: Option<u64>) -> Arc<Array> {
    common::create_array(level, members, size, true, false)
}

/// Every present member's descriptor carries O_DIRECT (or, `direct == false`, does not).
fn assert_member_flags(arr: &Array, direct: bool) {
    let Backing::Leaf(leaf) = &arr.backing else {
        panic!("a leaf array")
    };
    for m in leaf.members.iter().flatten() {
        // SAFETY: F_GETFL on an open descriptor.
        let fl = unsafe { libc::fcntl(m.raw_fd(), libc::F_GETFL) };
        assert!(fl >= 0);
        assert_eq!(
            fl & libc::O_DIRECT != 0,
            direct,
            "{}: O_DIRECT flag ({})",
            m.path.display(),
            m.io_mode()
        );
    }
}

/// Random writes and reads at byte or 512-byte granularity, any length up to ~300 KiB, from
/// buffers at any address; every read and a final full read compared with the model.
fn unaligned_io(arr: &Array, model: &mut Vec<u8>, rng: &mut Rng, ops: usize) {
    let cap = arr.capacity();
    model.resize(cap as usize, 0);
    for k in 0..ops {
        let gran = if k % 2 == 0 { 512 } else { 1 };
        let len = (1 + rng.below(300_000)) / gran * gran;
        let len = len.max(gran);
        let off = rng.below(cap - len) / gran * gran;
        let shift = rng.below(16) as usize;
        let mut raw = vec![0u8; len as usize + 16];
        let buf = &mut raw[shift..shift + len as usize];
        if rng.below(3) != 0 {
            rng.fill(buf);
            arr.write_at(buf, off).unwrap();
            model[off as usize..(off + len) as usize].copy_from_slice(buf);
        } else {
            arr.read_at(buf, off).unwrap();
            assert!(
                buf == &model[off as usize..(off + len) as usize],
                "read of {len} bytes at {off} differs"
            );
        }
    }
    check_all(arr, model, "after unaligned I/O");
}

#[test]
fn loop_device_members_are_direct_and_survive_unaligned_io_failure_and_rebuild() {
    // Members 0 and 2 with 4096-byte logical blocks, 1 and 3 with 512.
    let loops = Loops::new(4, 24 << 20, |i| if i % 2 == 0 { 4096 } else { 512 });
    let ms = loops.devs.clone();
    let arr = new_array("5", &ms, None);
    assert_member_flags(&arr, true);
    assert!(arr.member_io().contains("O_DIRECT"), "{}", arr.member_io());
    let mut model = Vec::new();
    let mut rng = Rng(0x0d1e_c7a5_u64 | 1);
    unaligned_io(&arr, &mut model, &mut rng, 300);
    scrub_clean(&arr, "odirect");

    // Fail a 4096-byte member, keep writing degraded, then replace and rebuild it.
    arr.fail_member(2, "test failure");
    unaligned_io(&arr, &mut model, &mut rng, 150);
    arr.close().unwrap();
    drop(arr);
    manage::remove(&ms, &ms[2]).unwrap();
    {
        use std::os::unix::fs::FileExt;
        let junk = vec![0xa5u8; 1 << 20];
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&ms[2])
            .unwrap();
        for k in 0..24 {
            f.write_all_at(&junk, k << 20).unwrap();
        }
        f.sync_all().unwrap();
    }
    let others: Vec<PathBuf> = [0, 1, 3].iter().map(|&i| ms[i].clone()).collect();
    manage::add(&others, &ms[2], true).unwrap();
    assert_eq!(manage::assign_spares(&ms).unwrap(), 1);
    let arr = manage::open(&ms, false).unwrap();
    assert_member_flags(&arr, true);
    check_all(&arr, &model, "degraded, before rebuild");
    let stop = AtomicBool::new(false);
    assert!(manage::rebuild_all(&arr, &stop, &mut |_, _, _| {}).unwrap());
    assert_eq!(arr.degraded_count(), 0);
    check_all(&arr, &model, "after rebuild");
    scrub_clean(&arr, "odirect");
    // The rebuilt member carries its share: fail another and read everything.
    arr.fail_member(0, "test: a survivor fails now");
    check_all(&arr, &model, "served by the rebuilt member");
    arr.close().unwrap();
}

#[test]
fn disk_filesystem_members_are_direct_memory_members_buffered() {
    let dir = tempfile::Builder::new()
        .prefix("raidlab-odirect")
        .tempdir_in("/var/tmp")
        .unwrap();
    let ms: Vec<PathBuf> = (0..5).map(|i| dir.path().join(format!("m{i}"))).collect();
    let arr = new_array("6", &ms, Some(8 << 20));
    let direct = arr.member_io().contains("O_DIRECT");
    // A disk filesystem that refuses O_DIRECT is allowed, and then said so.
    if !direct {
        assert!(arr.member_io().contains("buffered"), "{}", arr.member_io());
    }
    assert_member_flags(&arr, direct);
    let mut model = Vec::new();
    let mut rng = Rng(0x5eed_f11e);
    unaligned_io(&arr, &mut model, &mut rng, 200);
    scrub_clean(&arr, "odirect");
    arr.close().unwrap();
    drop(arr);

    if Path::new("/dev/shm").is_dir() {
        let shm = tempfile::tempdir_in("/dev/shm").unwrap();
        let ms: Vec<PathBuf> = (0..3).map(|i| shm.path().join(format!("m{i}"))).collect();
        let arr = new_array("5", &ms, Some(4 << 20));
        assert_member_flags(&arr, false);
        assert!(
            arr.member_io().contains("mapped (in memory)"),
            "{}",
            arr.member_io()
        );
        arr.close().unwrap();
    }
}

/// A read-only block device (`losetup -r`, `blockdev --setro`) opens for writing and
/// refuses every write: create and assembly say so in one line before writing anything,
/// rather than writing the other members and failing it at its first write.
#[test]
fn read_only_device_member_is_refused_before_anything_is_written() {
    use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
    use raidlab_array::{assemble, AssembleOptions};
    let loops = Loops::new(3, 8 << 20, |_| 512);
    let ms = loops.devs.clone();
    let set = |flag: &str, dev: &Path| {
        let st = Command::new("blockdev").arg(flag).arg(dev).status();
        assert!(st
            .expect("blockdev (util-linux) must be installed")
            .success());
    };
    let first_mib = |dev: &Path| {
        let mut b = vec![0u8; 1 << 20];
        use std::os::unix::fs::FileExt;
        std::fs::File::open(dev)
            .unwrap()
            .read_at(&mut b, 0)
            .unwrap();
        b
    };
    set("--setro", &ms[1]);
    let spec = CreateSpec::new(
        "5",
        None,
        Some(65536),
        ms.iter().cloned().map(MemberSpec::Path).collect(),
    )
    .unwrap();
    let opts = CreateOptions {
        force: true,
        ..Default::default()
    };
    let e = create(&spec, &opts).err().expect("create refuses");
    assert!(e.is_usage() && e.to_string().contains("read-only"), "{e}");
    assert!(e.to_string().contains(&ms[1].display().to_string()), "{e}");
    assert!(
        first_mib(&ms[0]).iter().all(|&b| b == 0),
        "member 0 written"
    );
    // Made writable, the array is created; set read-only again, it does not assemble.
    set("--setrw", &ms[1]);
    create(&spec, &opts).unwrap().close().unwrap();
    set("--setro", &ms[1]);
    let e = assemble(&ms, &AssembleOptions::default())
        .err()
        .expect("assembly refuses");
    assert!(e.is_usage() && e.to_string().contains("read-only"), "{e}");
    set("--setrw", &ms[1]);
}

/// A member file that backs a mounted loop device is that filesystem's storage: create
/// refuses it even with --force, as it refuses the mounted device, and writes nothing.
#[test]
fn file_under_a_mounted_loop_device_is_refused_even_with_force() {
    use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
    let loops = Loops::new(1, 16 << 20, |_| 512);
    let backing = loops._dir.path().join("disk0");
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
        .arg(&loops.devs[0])
        .status();
    assert!(mkfs
        .expect("mkfs.ext4 (e2fsprogs) must be installed")
        .success());
    let mnt = tempfile::tempdir().unwrap();
    /// Unmounts when dropped, so a failed assertion leaves nothing mounted.
    struct Mounted<'a>(&'a Path);
    impl Drop for Mounted<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let st = Command::new("mount")
        .arg(&loops.devs[0])
        .arg(mnt.path())
        .status();
    assert!(st.unwrap().success());
    let _m = Mounted(mnt.path());
    let others: Vec<PathBuf> = (1..3)
        .map(|i| loops._dir.path().join(format!("f{i}")))
        .collect();
    for o in &others {
        std::fs::File::create(o).unwrap().set_len(16 << 20).unwrap();
    }
    let before = std::fs::read(&backing).unwrap();
    let ms: Vec<PathBuf> = std::iter::once(backing.clone()).chain(others).collect();
    let spec = CreateSpec::new(
        "5",
        None,
        Some(65536),
        ms.into_iter().map(MemberSpec::Path).collect(),
    )
    .unwrap();
    let opts = CreateOptions {
        force: true,
        ..Default::default()
    };
    let e = create(&spec, &opts).err().expect("create refuses");
    let msg = e.to_string();
    assert!(e.is_usage(), "{msg}");
    assert!(
        msg.contains(&loops.devs[0].display().to_string()) && msg.contains("mounted at"),
        "{msg}"
    );
    assert!(
        std::fs::read(&backing).unwrap() == before,
        "the file was written"
    );
}
