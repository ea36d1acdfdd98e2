//! The engine against real block devices: loop devices over /dev/shm files with direct I/O.
//! Needs root and losetup (util-linux); every device is detached when its test ends.

mod common;
use common::*;
use std::os::unix::fs::FileExt;

#[test]
fn direct_random_reads_on_a_loop_device_with_each_executor() {
    let lo = Loop::new(16 << 20, 512);
    for engine in ["io_uring", "psync", "libaio"] {
        let s = spec(&[
            ("rw", "randread"),
            ("bs", "4k"),
            ("iodepth", "32"),
            ("direct", "1"),
            ("ioengine", engine),
            ("size", "8m"),
            ("filename", &lo.dev),
        ]);
        let r = run_paths(&[s], false).unwrap();
        let j = &r.jobs[0];
        assert_eq!(j.error, None, "{engine}");
        assert_eq!(
            (j.read.total_ios, j.read.io_bytes),
            (2048, 8 << 20),
            "{engine}"
        );
        assert!(
            j.read.clat.min() > 0 && j.read.clat.percentile(99.0) >= j.read.clat.percentile(50.0)
        );
    }
}

#[test]
fn the_whole_device_is_the_default_region() {
    let lo = Loop::new(3 << 20, 512);
    let r = run_paths(
        &[spec(&[
            ("rw", "read"),
            ("bs", "1m"),
            ("direct", "1"),
            ("filename", &lo.dev),
        ])],
        false,
    )
    .unwrap();
    assert_eq!(
        r.jobs[0].read.io_bytes,
        3 << 20,
        "size comes from BLKGETSIZE64"
    );
}

#[test]
fn verify_round_trips_through_a_loop_device() {
    let lo = Loop::new(8 << 20, 512);
    let w = spec(&[
        ("name", "w"),
        ("rw", "write"),
        ("bs", "16k"),
        ("iodepth", "16"),
        ("direct", "1"),
        ("verify", "1"),
        ("filename", &lo.dev),
    ]);
    let mut r = spec(&[
        ("name", "r"),
        ("rw", "randread"),
        ("bs", "16k"),
        ("iodepth", "16"),
        ("direct", "1"),
        ("verify", "1"),
        ("filename", &lo.dev),
    ]);
    r.stonewall = true;
    let res = run_paths(&[w, r], false).unwrap();
    assert_eq!(res.jobs[0].error, None);
    assert_eq!(res.jobs[1].error, None);
    let v = res.jobs[1].verify.as_ref().unwrap();
    assert_eq!((v.blocks_checked, v.mismatches), (512, 0));
    // What landed in the backing file is what the headers say.
    let back = std::fs::File::open(&lo.backing).unwrap();
    let mut b = vec![0u8; 16384];
    back.read_exact_at(&mut b, 5 * 16384).unwrap();
    let h = raidlab_engine::verify::read_header(&b).unwrap();
    assert_eq!((h.offset, h.length), (5 * 16384, 16384));
}

#[test]
fn a_partition_table_on_a_device_refuses_writes_without_force() {
    let lo = Loop::new(4 << 20, 512);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&lo.dev)
        .unwrap();
    let mut sector = vec![0u8; 4096];
    sector[512..520].copy_from_slice(b"EFI PART");
    f.write_all_at(&sector, 0).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let w = spec(&[
        ("rw", "write"),
        ("bs", "4k"),
        ("direct", "1"),
        ("size", "1m"),
        ("filename", &lo.dev),
    ]);
    let e = run_paths(std::slice::from_ref(&w), false).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("GPT partition table"),
        "{e}"
    );
    // With --force it is written. (Right after the table was written, something on the
    // machine may hold the device exclusively for a moment, probing the new table: raidlab
    // then refuses, as it should, so the run is tried again while that lasts, up to 5 s.)
    let mut tries = 0;
    let r = loop {
        match run_paths(std::slice::from_ref(&w), true) {
            Err(e) if e.to_string().contains("is held by") && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            r => break r.unwrap(),
        }
    };
    assert_eq!(r.jobs[0].write.io_bytes, 1 << 20);
}

#[test]
fn direct_io_smaller_than_the_logical_block_is_a_clear_error() {
    let lo = Loop::new(4 << 20, 4096);
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "512"),
        ("direct", "1"),
        ("filename", &lo.dev),
    ]);
    let e = run_paths(&[s], false).unwrap_err();
    assert!(e.is_usage());
    let m = e.to_string();
    assert!(
        m.contains("bs=512")
            && m.contains("logical block size")
            && m.contains("4096")
            && m.contains(&lo.dev),
        "{m}"
    );
    // Without direct the page cache takes any size.
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "512"),
        ("size", "64k"),
        ("filename", &lo.dev),
    ]);
    assert_eq!(run_paths(&[s], false).unwrap().jobs[0].read.total_ios, 128);
}

/// hipri polls the device for completions; a loop device has no polled queues, and the job
/// says so in its error rather than failing with a bare errno.
#[test]
fn hipri_on_a_device_without_polled_queues_says_so() {
    let lo = Loop::new(8 << 20, 512);
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "4k"),
        ("iodepth", "4"),
        ("direct", "1"),
        ("hipri", "1"),
        ("filename", &lo.dev),
    ]);
    let r = run_paths(&[s], false).unwrap();
    let e = r.jobs[0].error.as_deref().unwrap_or("");
    assert!(e.contains("hipri: this device takes no polled I/O"), "{e}");
    assert_eq!(r.jobs[0].errno, libc::EOPNOTSUPP);
}

/// A device that runs out of room: a loop device over a sparse 4 MiB file on a tmpfs of
/// 1 MiB, whose writes past the first MiB fail with ENOSPC (the loop driver passes the
/// filesystem's error on). Unmounted when dropped, after the device is detached.
struct Cramped {
    lo: Option<Loop>,
    mnt: tempfile::TempDir,
}

impl Cramped {
    fn new() -> Cramped {
        let mnt = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(mnt.path())
            .status()
            .expect("mount (util-linux) must be installed; these tests run as root");
        assert!(ok.success(), "mount of a tmpfs failed");
        let lo = Loop::over(mnt.path().join("backing"), 4 << 20, 512);
        Cramped { lo: Some(lo), mnt }
    }
    fn dev(&self) -> &str {
        &self.lo.as_ref().unwrap().dev
    }
}

impl Drop for Cramped {
    fn drop(&mut self) {
        drop(self.lo.take());
        // (Lazily: the loop device lets go of its file a moment after it is detached.)
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.mnt.path())
            .status();
    }
}

/// fio's continue_on_error on a device that fills: with ENOSPC listed (ignore_error), the
/// job writes the whole device, counting the 48 writes of 64 KiB past the first MiB and
/// measuring the 16 that landed; without the list, ENOSPC (not among fio's defaults, EIO and
/// EILSEQ) ends the job at the first, as in fio.
#[test]
fn continue_on_error_goes_past_a_full_device() {
    let c = Cramped::new();
    let job = |extra: &[(&str, &str)]| {
        let mut opts = vec![
            ("rw", "write"),
            ("bs", "64k"),
            ("direct", "1"),
            ("ioengine", "psync"),
            ("filename", c.dev()),
            ("continue_on_error", "write"),
        ];
        opts.extend_from_slice(extra);
        let r = run_paths(&[spec(&opts)], true).unwrap();
        r.jobs.into_iter().next().unwrap()
    };
    let j = job(&[("ignore_error", ",ENOSPC")]);
    assert_eq!(j.error, None);
    let e = j.errors.unwrap();
    assert_eq!((e.total, e.first), (48, libc::ENOSPC));
    assert_eq!((j.write.total_ios, j.write.io_bytes), (16, 1 << 20));
    let j = job(&[]);
    assert_eq!(j.errno, libc::ENOSPC);
    assert_eq!(j.errors.unwrap().total, 1);
    assert_eq!(j.write.io_bytes, 1 << 20);
}
