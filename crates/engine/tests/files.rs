//! The engine against regular files: layout, round trips, executors, safety, verify.

mod common;
use common::*;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn a_missing_file_is_created_and_laid_out_to_size() {
    let d = tmp();
    let f = d.path().join("new");
    let r = run_paths(
        &[spec(&[
            ("rw", "read"),
            ("bs", "64k"),
            ("size", "3m"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap();
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 3 << 20);
    let j = &r.jobs[0];
    assert_eq!(j.error, None);
    assert_eq!(j.read.io_bytes, 3 << 20);
    assert_eq!(j.read.total_ios, 48);
    assert_eq!(j.engine, "io_uring");
    assert!(j.read.clat.count() == 48 && j.read.lat.count() == 48);
    assert!(j.read.lat.mean() >= j.read.clat.mean());
}

/// Offsets and sizes whose end passes 2^64 are a usage error in one line (the file's end
/// was summed unchecked: a panic, "attempt to add with overflow", in a debug build).
#[test]
fn a_region_past_two_to_the_64_is_a_usage_error_not_a_panic() {
    let d = tmp();
    let f = d.path().join("new");
    for opts in [
        &[("offset_increment", "16000p"), ("numjobs", "4000")][..],
        &[("offset", "16000p"), ("size", "16000p")][..],
    ] {
        let mut o = vec![
            ("rw", "write"),
            ("size", "1m"),
            ("filename", f.to_str().unwrap()),
        ];
        o.extend_from_slice(opts);
        let e = run_paths(&[spec(&o)], false).unwrap_err();
        assert!(e.is_usage(), "{opts:?}: {e}");
        assert!(!f.exists(), "{opts:?}");
    }
}

#[test]
fn a_missing_file_without_size_is_a_usage_error() {
    let d = tmp();
    let f = d.path().join("absent");
    let e = run_paths(
        &[spec(&[("rw", "read"), ("filename", f.to_str().unwrap())])],
        false,
    )
    .unwrap_err();
    assert!(e.is_usage());
    assert!(
        e.to_string().contains("does not exist") && e.to_string().contains("size="),
        "{e}"
    );
}

#[test]
fn a_short_file_is_extended_without_touching_its_data() {
    let d = tmp();
    let f = d.path().join("short");
    std::fs::write(&f, vec![7u8; 4096]).unwrap();
    // (Not raidlab's file: extending it takes --force, see a_read_job_extends_only_raidlabs_files.)
    run_paths(
        &[spec(&[
            ("rw", "read"),
            ("size", "1m"),
            ("filename", f.to_str().unwrap()),
        ])],
        true,
    )
    .unwrap();
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 1 << 20);
    assert!(data[..4096].iter().all(|&b| b == 7));
}

#[test]
fn written_data_reads_back_with_verify_on_every_executor() {
    // io_uring with and without its registered buffers and file (fio's `fixedbufs`,
    // `registerfiles`): each pairing takes its own opcodes.
    let cases = [
        ("io_uring", "1", "1"),
        ("io_uring", "0", "1"),
        ("io_uring", "1", "0"),
        ("io_uring", "0", "0"),
        ("psync", "1", "1"),
        ("libaio", "1", "1"),
        ("sync", "1", "1"),
        ("vsync", "1", "1"),
        ("pvsync", "1", "1"),
        ("pvsync2", "1", "1"),
    ];
    for (engine, bufs, files) in cases {
        let d = tmp();
        let f = d.path().join("v");
        let name = f.to_str().unwrap();
        let w = spec(&[
            ("name", "w"),
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("size", "2m"),
            ("iodepth", "8"),
            ("ioengine", engine),
            ("fixedbufs", bufs),
            ("registerfiles", files),
            ("verify", "1"),
            ("filename", name),
        ]);
        let mut w = w;
        w.stonewall = true;
        let mut r = spec(&[
            ("name", "r"),
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "2m"),
            ("iodepth", "8"),
            ("ioengine", engine),
            ("fixedbufs", bufs),
            ("registerfiles", files),
            ("verify", "1"),
            ("filename", name),
        ]);
        r.stonewall = true;
        // Cover the whole file first so the read-back job finds a header on every block.
        let mut full = w.clone();
        full.rw = raidlab_workload::RwMode::Write;
        full.name = "fill".into();
        let res = run_paths(&[full, w, r], false).unwrap();
        for j in &res.jobs {
            assert_eq!(
                j.error, None,
                "{engine} {bufs}{files} {}: {:?}",
                j.name, j.error
            );
        }
        let v = res.jobs[2].verify.as_ref().unwrap();
        assert_eq!(
            (v.blocks_checked, v.mismatches),
            (512, 0),
            "{engine} {bufs}{files}"
        );
    }
}

/// fio's usual verify round trip: a random write pass with verify, then a read pass that
/// checks every block. A random pass touches each block once (fio's random map), so
/// every block read back carries a header; drawn with replacement (norandommap), some block
/// was never written and the read-back reports it.
#[test]
fn a_random_write_pass_covers_the_region_for_a_verified_read_back() {
    for (norandommap, whole) in [("0", true), ("1", false)] {
        let d = tmp();
        let f = d.path().join("v");
        let job = |name: &str, rw: &str| {
            let mut s = spec(&[
                ("name", name),
                ("rw", rw),
                ("bs", "4k"),
                ("size", "2m"),
                ("iodepth", "8"),
                ("verify", "1"),
                ("norandommap", norandommap),
                ("filename", f.to_str().unwrap()),
            ]);
            s.stonewall = true;
            s
        };
        // Two runs, as two fio commands: the read-back knows only what the blocks hold.
        let w = run_paths(&[job("w", "randwrite")], false).unwrap();
        assert_eq!(w.jobs[0].error, None);
        let res = run_paths(&[job("r", "read")], false).unwrap();
        let (r, v) = (&res.jobs[0], res.jobs[0].verify.as_ref().unwrap());
        if whole {
            assert_eq!(r.error, None, "norandommap={norandommap}");
            assert_eq!((v.blocks_checked, v.mismatches), (512, 0));
        } else {
            assert!(
                r.error.is_some() || v.mismatches > 0,
                "norandommap={norandommap}: {v:?}"
            );
        }
    }
}

/// fio's do_verify: a job that only writes, with verify, reads back every block it wrote
/// and checks it once its writes are done, on each executor; as fio, it counts the
/// read-backs as its reads, over the time they took, and its write rate is the writes'
/// alone. A time-based job does not (it would keep every offset), nor one whose blocks
/// another job of its group writes.
#[test]
fn a_write_job_with_verify_reads_back_what_it_wrote() {
    for engine in ["io_uring", "psync", "libaio"] {
        let d = tmp();
        let f = d.path().join("w");
        let job = |extra: &[(&str, &str)]| {
            let mut o = vec![
                ("rw", "randwrite"),
                ("bs", "4k"),
                ("size", "1m"),
                ("iodepth", "8"),
                ("ioengine", engine),
                ("verify", "1"),
                ("filename", f.to_str().unwrap()),
            ];
            o.extend_from_slice(extra);
            spec(&o)
        };
        let r = run_paths(&[job(&[])], false).unwrap();
        let j = &r.jobs[0];
        assert_eq!(j.error, None, "{engine}");
        assert_eq!(
            (j.write.total_ios, j.read.total_ios),
            (256, 256),
            "{engine}"
        );
        assert_eq!(j.read.io_bytes, 1 << 20, "{engine}");
        assert_eq!(j.read.clat.count(), 256, "{engine}");
        assert!(
            j.read.runtime_ns > 0 && j.read.runtime_ns < j.elapsed_ns,
            "{engine}: the read-back's time {} of the job's {}",
            j.read.runtime_ns,
            j.elapsed_ns
        );
        let v = j.verify.as_ref().unwrap();
        assert_eq!((v.blocks_checked, v.mismatches), (256, 0), "{engine}");
        let r = run_paths(&[job(&[("runtime", "50ms"), ("time_based", "1")])], false).unwrap();
        assert_eq!(
            r.jobs[0].verify.as_ref().unwrap().blocks_checked,
            0,
            "{engine}"
        );
        // Two jobs writing one file side by side: a read-back could catch the other's
        // writes half done, so neither reads back.
        let r = run_paths(&[job(&[("numjobs", "2")])], false).unwrap();
        assert_eq!(r.jobs.len(), 2);
        for j in &r.jobs {
            assert_eq!(j.verify.as_ref().unwrap().blocks_checked, 0, "{engine}");
        }
        // Two jobs writing apart (offset_increment) each read back their own blocks: any
        // second writer of the file turned every read-back off, so verify checked nothing.
        let r = run_paths(
            &[job(&[("numjobs", "2"), ("offset_increment", "1m")])],
            false,
        )
        .unwrap();
        assert_eq!(r.jobs.len(), 2);
        for j in &r.jobs {
            let v = j.verify.as_ref().unwrap();
            assert_eq!((v.blocks_checked, v.mismatches), (256, 0), "{engine}");
        }
        // So do two job sections with offsets of their own; a reader beside them is no bar.
        let mut other = job(&[("offset", "3m")]);
        other.name = "other".into();
        let mut reader = job(&[("rw", "randread"), ("verify", "0")]);
        reader.name = "reader".into();
        let r = run_paths(&[job(&[]), other, reader], false).unwrap();
        for j in &r.jobs[..2] {
            let v = j.verify.as_ref().unwrap();
            assert_eq!((v.blocks_checked, v.mismatches), (256, 0), "{engine}");
        }
    }
}

#[test]
fn every_engine_issues_the_same_requests() {
    let d = tmp();
    let f = d.path().join("same");
    let mk = |engine: &str| {
        spec(&[
            ("rw", "randrw"),
            ("bs", "8k"),
            ("size", "1m"),
            ("loops", "3"),
            ("iodepth", "4"),
            ("ioengine", engine),
            ("filename", f.to_str().unwrap()),
        ])
    };
    let a = run_paths(&[mk("io_uring")], true).unwrap();
    let a = &a.jobs[0];
    for other in ["psync", "libaio", "sync", "vsync", "pvsync", "pvsync2"] {
        let b = run_paths(&[mk(other)], true).unwrap();
        let b = &b.jobs[0];
        assert_eq!((a.engine.as_str(), b.engine.as_str()), ("io_uring", other));
        assert_eq!(a.read.io_bytes, b.read.io_bytes);
        assert_eq!(a.write.io_bytes, b.write.io_bytes);
        assert_eq!(a.read.total_ios, b.read.total_ios);
        assert_eq!(a.write.total_ios, b.write.total_ios);
        assert_eq!(a.read.total_ios + a.write.total_ios, 3 * 128);
        assert_eq!(a.passes.len(), 3);
        assert_eq!(
            a.passes,
            b.passes
                .iter()
                .zip(&a.passes)
                .map(|(p, q)| raidlab_result::PassStats {
                    runtime_ns: q.runtime_ns,
                    ..p.clone()
                })
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_null_engine_counts_without_touching_the_target() {
    let d = tmp();
    let f = d.path().join("never-created");
    let r = run_paths(
        &[spec(&[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "16m"),
            ("iodepth", "32"),
            ("ioengine", "null"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap();
    assert!(!f.exists());
    let j = &r.jobs[0];
    assert_eq!(
        (j.engine.as_str(), j.read.total_ios, j.read.io_bytes),
        ("null", 4096, 16 << 20)
    );
    // fio's IO depths: every I/O counted once; the null engine completes at once, so each
    // refill tops the queue back up to 32 in flight (bucket "32": 32-63).
    assert_eq!(j.iodepth_level.iter().sum::<u64>(), 4096);
    assert!(j.iodepth_level[5] > 4000, "{:?}", j.iodepth_level);
}

#[test]
fn depth_one_jobs_submit_at_depth_one() {
    let d = tmp();
    let f = d.path().join("d1");
    let r = run_paths(
        &[spec(&[
            ("rw", "write"),
            ("bs", "64k"),
            ("size", "1m"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap();
    assert_eq!(r.jobs[0].iodepth_level, [16, 0, 0, 0, 0, 0, 0]);
}

/// Any data raidlab did not lay out is kept unless the run is forced: a text file is not
/// written over, a file raidlab created is written again freely, and so is one a forced run
/// took over; a file that is all holes holds nothing to lose.
#[test]
fn writing_over_foreign_data_needs_force() {
    let d = tmp();
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, b"my notes\n").unwrap();
    let write = |f: &std::path::Path| {
        spec(&[
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "64k"),
            ("filename", f.to_str().unwrap()),
        ])
    };
    let e = run_paths(&[write(&notes)], false).unwrap_err();
    assert!(e.is_usage());
    assert!(
        e.to_string()
            .contains("holds 9 bytes raidlab did not lay out")
            && e.to_string().contains("--force"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&notes).unwrap(),
        b"my notes\n",
        "refused run must not write"
    );
    run_paths(&[write(&notes)], true).unwrap();
    assert_eq!(std::fs::read(&notes).unwrap().len(), 64 << 10);
    run_paths(&[write(&notes)], false).expect("a forced run made it raidlab's scratch");
    // Created by raidlab: written again without force.
    let own = d.path().join("own");
    run_paths(&[write(&own)], false).unwrap();
    run_paths(&[write(&own)], false).expect("raidlab's own file");
    // All holes: nothing to lose.
    let sparse = d.path().join("sparse");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    run_paths(&[write(&sparse)], false).expect("a sparse file holds no data");
}

/// A read job longer than a file lays the rest out only on raidlab's own files: somebody
/// else's file is not extended unless the run is forced.
#[test]
fn a_read_job_extends_only_raidlabs_files() {
    let d = tmp();
    let theirs = d.path().join("theirs");
    std::fs::write(&theirs, vec![7u8; 8192]).unwrap();
    let read = |f: &std::path::Path| {
        spec(&[
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "64k"),
            ("filename", f.to_str().unwrap()),
        ])
    };
    let e = run_paths(&[read(&theirs)], false).unwrap_err();
    assert!(e.is_usage());
    assert!(
        e.to_string()
            .contains("holds 8192 bytes and the job reads to byte 65536"),
        "{e}"
    );
    assert_eq!(
        std::fs::metadata(&theirs).unwrap().len(),
        8192,
        "not extended"
    );
    run_paths(&[read(&theirs)], true).unwrap();
    assert_eq!(std::fs::metadata(&theirs).unwrap().len(), 65536);
    assert_eq!(
        std::fs::read(&theirs).unwrap()[..8192],
        vec![7u8; 8192][..],
        "data kept"
    );
    // raidlab's own file grows without force.
    let own = d.path().join("own");
    run_paths(&[read(&own)], false).unwrap();
    let longer = spec(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "128k"),
        ("filename", own.to_str().unwrap()),
    ]);
    run_paths(&[longer], false).expect("raidlab's own file");
}

#[test]
fn writing_over_a_signature_needs_force() {
    let d = tmp();
    let f = d.path().join("fs.img");
    let mut img = vec![0u8; 1 << 20];
    img[0..4].copy_from_slice(b"XFSB");
    std::fs::write(&f, &img).unwrap();
    let w = spec(&[
        ("rw", "write"),
        ("size", "1m"),
        ("filename", f.to_str().unwrap()),
    ]);
    let e = run_paths(std::slice::from_ref(&w), false).unwrap_err();
    assert!(e.is_usage());
    assert!(
        e.to_string().contains("XFS filesystem") && e.to_string().contains("--force"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&f).unwrap(),
        img,
        "refused run must not write"
    );
    // Reading is always allowed; writing with force goes ahead.
    run_paths(
        &[spec(&[
            ("rw", "read"),
            ("size", "1m"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap();
    let r = run_paths(&[w], true).unwrap();
    assert_eq!(r.jobs[0].write.io_bytes, 1 << 20);
    assert_ne!(&std::fs::read(&f).unwrap()[0..4], b"XFSB");
}

#[test]
fn io_stays_inside_the_region() {
    let d = tmp();
    let f = d.path().join("region");
    let mut before = vec![0u8; 4 << 20];
    for (i, b) in before.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    std::fs::write(&f, &before).unwrap();
    let w = spec(&[
        ("rw", "randwrite"),
        ("bs", "4k"),
        ("offset", "1m"),
        ("size", "1m"),
        ("loops", "4"),
        ("iodepth", "16"),
        ("filename", f.to_str().unwrap()),
    ]);
    // (The file holds data raidlab did not write: only a forced run writes over it.)
    run_paths(&[w], true).unwrap();
    let after = std::fs::read(&f).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after[..1 << 20], before[..1 << 20]);
    assert_eq!(after[2 << 20..], before[2 << 20..]);
    assert_ne!(after[1 << 20..2 << 20], before[1 << 20..2 << 20]);
}

fn write_then_check(damage: impl FnOnce(&std::fs::File)) -> raidlab_result::JobResult {
    let d = tmp();
    let f = d.path().join("verify");
    let name = f.to_str().unwrap();
    let w = spec(&[
        ("rw", "write"),
        ("bs", "4k"),
        ("size", "256k"),
        ("verify", "1"),
        ("filename", name),
    ]);
    assert_eq!(run_paths(&[w], false).unwrap().jobs[0].error, None);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&f)
        .unwrap();
    damage(&file);
    let r = spec(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "256k"),
        ("verify", "1"),
        ("filename", name),
    ]);
    run_paths(&[r], false).unwrap().jobs.remove(0)
}

#[test]
fn verify_catches_a_torn_block() {
    let j = write_then_check(|f| {
        let mut b = [0u8; 1];
        f.read_exact_at(&mut b, 40960 + 1000).unwrap();
        f.write_all_at(&[b[0] ^ 0xff], 40960 + 1000).unwrap();
    });
    let code = j.error_code();
    let v = j.verify.unwrap();
    assert_eq!((v.blocks_checked, v.mismatches), (64, 1));
    let m = v.first_mismatch.unwrap();
    assert!(m.starts_with("torn block at offset 40960"), "{m}");
    assert_eq!(code, libc::EILSEQ, "fio reports a verify failure as EILSEQ");
    assert!(j.error.unwrap().contains("torn block at offset 40960"));
}

#[test]
fn verify_catches_a_misplaced_block() {
    let j = write_then_check(|f| {
        let mut b = vec![0u8; 4096];
        f.read_exact_at(&mut b, 8192).unwrap();
        f.write_all_at(&b, 12288).unwrap();
    });
    let v = j.verify.unwrap();
    assert_eq!(v.mismatches, 1);
    let m = v.first_mismatch.unwrap();
    assert!(
        m.contains("misplaced block at offset 12288") && m.contains("found 8192"),
        "{m}"
    );
}

#[test]
fn verify_catches_an_overwritten_block() {
    let j = write_then_check(|f| f.write_all_at(&[0u8; 4096], 0).unwrap());
    let m = j.verify.unwrap().first_mismatch.unwrap();
    assert!(m.contains("no verify header at offset 0"), "{m}");
}

#[test]
fn time_based_runs_repeat_the_region_until_the_runtime() {
    let d = tmp();
    let f = d.path().join("tb");
    let s = spec(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "64k"),
        ("runtime", "300ms"),
        ("time_based", "1"),
        ("filename", f.to_str().unwrap()),
    ]);
    let r = run_paths(&[s], false).unwrap();
    let j = &r.jobs[0];
    assert!(j.elapsed_ns >= 300_000_000, "{}", j.elapsed_ns);
    assert!(j.read.runtime_ns >= 300_000_000 && j.read.runtime_ns < 60_000_000_000);
    assert!(
        j.read.total_ios > 16,
        "only {} ios: one pass",
        j.read.total_ios
    );
    assert!(j.passes.len() > 1);
    assert_eq!(j.stopped, None);
}

/// A job with many passes over a small region lists the first and last five and adds up
/// the rest, so its result (and the memory behind it) stays small however long it runs;
/// every I/O is still in the passes. (Each pass had its entry: a time-based job over a 4 MiB
/// file listed 236 after 3 s, hundreds of thousands in an hour.)
#[test]
fn many_passes_are_listed_at_their_ends_and_added_up_between() {
    let d = tmp();
    let f = d.path().join("passes");
    let s = spec(&[
        ("rw", "write"),
        ("bs", "4k"),
        ("size", "8k"),
        ("loops", "200"),
        ("filename", f.to_str().unwrap()),
    ]);
    let r = run_paths(&[s], false).unwrap();
    let j = &r.jobs[0];
    assert_eq!(j.write.total_ios, 400);
    let numbers: Vec<u32> = j.passes.iter().map(|p| p.pass).collect();
    assert_eq!(numbers, [0, 1, 2, 3, 4, 195, 196, 197, 198, 199]);
    assert!(j.passes.iter().all(|p| p.write_ios == 2), "{:?}", j.passes);
    let b = j.passes_between.as_ref().expect("the passes between");
    assert_eq!((b.first, b.last, b.count), (5, 194, 190));
    assert_eq!((b.write_ios, b.write_bytes), (380, 380 * 4096));
    assert!(
        b.bw_bytes_min <= b.bw_bytes_max && b.bw_bytes_max > 0,
        "{b:?}"
    );
}

#[test]
fn misaligned_direct_io_is_a_usage_error_not_einval() {
    let d = tmp();
    let f = d.path().join("direct");
    let e = run_paths(
        &[spec(&[
            ("rw", "read"),
            ("bs", "1000"),
            ("size", "1m"),
            ("direct", "1"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap_err();
    assert!(e.is_usage());
    assert!(e.to_string().contains("bs=1000"), "{e}");
}

#[test]
fn group_reporting_folds_a_jobs_instances() {
    let d = tmp();
    let f = d.path().join("gr");
    let mut s = spec(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "256k"),
        ("numjobs", "3"),
        ("offset_increment", "256k"),
        ("filename", f.to_str().unwrap()),
    ]);
    let r = run_paths(std::slice::from_ref(&s), false).unwrap();
    assert_eq!(r.jobs.len(), 3);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 768 << 10);
    s.group_reporting = true;
    let r = run_paths(&[s], false).unwrap();
    assert_eq!(r.jobs.len(), 1);
    assert_eq!((r.jobs[0].instances, r.jobs[0].read.total_ios), (3, 192));
}

#[test]
fn a_file_keeps_reading_what_was_written_before() {
    // Non-verify writes put pseudo-random data, not zeros, on the target: laid out with
    // zeros first (a reading job with zero_buffers), the block written no longer is.
    let d = tmp();
    let f = d.path().join("data");
    let zeroed = spec(&[
        ("rw", "read"),
        ("bs", "64k"),
        ("size", "1m"),
        ("zero_buffers", "1"),
        ("filename", f.to_str().unwrap()),
    ]);
    run_paths(&[zeroed], false).unwrap();
    assert!(std::fs::read(&f).unwrap().iter().all(|&b| b == 0));
    run_paths(
        &[spec(&[
            ("rw", "write"),
            ("bs", "64k"),
            ("size", "1m"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap();
    let mut file = std::fs::File::open(&f).unwrap();
    let mut buf = vec![0u8; 65536];
    file.seek(SeekFrom::Start(65536)).unwrap();
    file.read_exact(&mut buf).unwrap();
    assert!(buf.iter().filter(|&&b| b == 0).count() < 2048);
    let _ = std::io::stdout().flush();
}

#[test]
fn a_stop_during_layout_ends_the_run_with_a_clear_error() {
    let d = tmp();
    let f = d.path().join("big");
    let opts = raidlab_engine::RunOptions {
        stop: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
        ..Default::default()
    };
    let s = spec(&[
        ("rw", "read"),
        ("size", "64m"),
        ("filename", f.to_str().unwrap()),
    ]);
    let e = raidlab_engine::run(&[s], &mut raidlab_engine::resolve_path, &opts).unwrap_err();
    assert!(!e.is_usage());
    assert!(
        e.to_string().contains("laying out")
            && e.to_string()
                .contains("interrupted after 0 of 67108864 bytes"),
        "{e}"
    );
}

/// A stop that comes after the layout but before the first job starts ends the run with an
/// error, as one during the layout does: an empty result (no job, no I/O) read as a finished
/// run, and a sweep blamed the runtime or ramp_time for it.
#[test]
fn a_stop_before_the_jobs_start_ends_the_run_with_a_clear_error() {
    let d = tmp();
    let f = d.path().join("laid");
    let s = spec(&[
        ("rw", "read"),
        ("size", "1m"),
        ("filename", f.to_str().unwrap()),
    ]);
    run_paths(std::slice::from_ref(&s), false).unwrap();
    let opts = raidlab_engine::RunOptions {
        stop: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
        ..Default::default()
    };
    let e = raidlab_engine::run(&[s], &mut raidlab_engine::resolve_path, &opts).unwrap_err();
    assert!(!e.is_usage());
    assert_eq!(e.to_string(), "interrupted before the jobs started");
}

/// end_fsync on a file: each executor flushes it at the end without error, the data intact.
#[test]
fn end_fsync_flushes_a_file_on_every_executor() {
    let d = tmp();
    for engine in ["psync", "io_uring", "libaio"] {
        let f = d.path().join(engine);
        let r = run_paths(
            &[spec(&[
                ("rw", "write"),
                ("bs", "64k"),
                ("size", "1m"),
                ("ioengine", engine),
                ("end_fsync", "1"),
                ("filename", f.to_str().unwrap()),
            ])],
            false,
        )
        .unwrap();
        let j = &r.jobs[0];
        assert_eq!(j.error, None, "{engine}");
        assert_eq!(j.write.io_bytes, 1 << 20, "{engine}");
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20, "{engine}");
    }
}

/// Pages of `path` in the page cache (mincore over a mapping of it).
fn resident_pages(path: &std::path::Path) -> usize {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let page = 4096;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: a read-only shared mapping of a file we hold open, unmapped before returning;
    // mincore writes one byte per page into `vec`, sized for the mapping.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        assert_eq!(libc::mincore(p, len, vec.as_mut_ptr()), 0);
        libc::munmap(p, len);
    }
    vec.iter().filter(|&&b| b & 1 != 0).count()
}

/// fio's `invalidate`, on by default: before a job starts, the page cache's copy of its
/// region is dropped, so buffered reads reach the device. A job reading 4 KiB of a cached
/// 8 MiB file leaves it mostly out of the cache (what it read and read ahead is back in);
/// with invalidate=0 every page stays.
#[test]
fn a_buffered_job_starts_with_its_region_out_of_the_page_cache() {
    let d = tmp();
    let f = d.path().join("cached");
    let pages = (8 << 20) / 4096;
    for (invalidate, want_most) in [("1", false), ("0", true)] {
        std::fs::write(&f, vec![7u8; 8 << 20]).unwrap();
        assert_eq!(resident_pages(&f), pages, "written through the cache");
        let r = run_paths(
            &[spec(&[
                ("rw", "read"),
                ("bs", "4k"),
                ("size", "8m"),
                ("io_size", "4k"),
                ("invalidate", invalidate),
                ("ioengine", "psync"),
                ("filename", f.to_str().unwrap()),
            ])],
            true,
        )
        .unwrap();
        assert_eq!(r.jobs[0].error, None);
        let resident = resident_pages(&f);
        if want_most {
            assert_eq!(resident, pages, "invalidate={invalidate}");
        } else {
            assert!(
                resident < pages / 4,
                "invalidate={invalidate}: {resident} of {pages}"
            );
        }
    }
}

/// libaio asks the kernel for a context as deep as the job's iodepth: past the machine's
/// limit (/proc/sys/fs/aio-max-nr) a job fails to start with an error that names it. (The
/// kernel books twice the depth a context asks for against twice the limit: jobs three
/// quarters of the limit deep fit one at a time, not two at once.)
#[test]
fn libaio_beyond_the_machines_aio_limit_names_it() {
    let max: u64 = std::fs::read_to_string("/proc/sys/fs/aio-max-nr")
        .expect("/proc/sys/fs/aio-max-nr")
        .trim()
        .parse()
        .unwrap();
    let depth = (max * 3 / 4 + 1).min(65536);
    let jobs = max / depth + 2;
    let d = tmp();
    let f = d.path().join("deep");
    let r = run_paths(
        &[spec(&[
            ("rw", "randread"),
            ("bs", "512"),
            ("size", "1m"),
            ("iodepth", &depth.to_string()),
            ("numjobs", &jobs.to_string()),
            ("runtime", "300ms"),
            ("time_based", "1"),
            ("ioengine", "libaio"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap();
    let failed: Vec<&str> = r.jobs.iter().filter_map(|j| j.error.as_deref()).collect();
    assert!(
        !failed.is_empty(),
        "{jobs} jobs of depth {depth} against aio-max-nr {max}"
    );
    for e in failed {
        assert!(
            e.starts_with("cannot start libaio on ") && e.contains("/proc/sys/fs/aio-max-nr"),
            "{e}"
        );
    }
    assert!(r
        .jobs
        .iter()
        .any(|j| j.error.is_none() && j.read.total_ios > 0));
}

/// A job of `base` and `extra` options run on a new file `name` in `dir`: its result and
/// what the file holds after it.
fn run_on_new_file(
    dir: &std::path::Path,
    name: &str,
    base: &[(&str, &str)],
    extra: &[(&str, &str)],
) -> (raidlab_result::RunResult, Vec<u8>) {
    let f = dir.join(name);
    let _ = std::fs::remove_file(&f);
    let mut o = base.to_vec();
    o.push(("filename", f.to_str().unwrap()));
    o.extend_from_slice(extra);
    let r = run_paths(&[spec(&o)], false).unwrap();
    assert_eq!(r.jobs[0].error, None, "{name}");
    (r, std::fs::read(&f).unwrap())
}

/// How many different `b`-byte blocks `data` holds.
fn distinct_blocks(data: &[u8], b: usize) -> usize {
    data.chunks(b)
        .collect::<std::collections::HashSet<_>>()
        .len()
}

/// The share of `data`'s bytes that are zero.
fn zero_share(data: &[u8]) -> f64 {
    data.iter().filter(|&&b| b == 0).count() as f64 / data.len() as f64
}

/// fio's buffer options decide what a job's writes put on the target: by default every block
/// differs (scrambled), without scrambling the buffers' bytes repeat, zeros, a pattern, a
/// compressible share, a deduplicable share.
#[test]
fn buffer_options_decide_what_writes_carry() {
    let d = tmp();
    let base = [
        ("rw", "randwrite"),
        ("bs", "4k"),
        ("size", "1m"),
        ("iodepth", "4"),
    ];
    let write = |name: &str, extra: &[(&str, &str)]| -> Vec<u8> {
        let (r, data) = run_on_new_file(d.path(), name, &base, extra);
        assert_eq!(r.jobs[0].write.total_ios, 256, "{name}");
        data
    };
    let distinct = |data: &[u8]| distinct_blocks(data, 4096);
    let zeros = zero_share;

    let plain = write("default", &[]);
    assert_eq!(distinct(&plain), 256);
    assert!(zeros(&plain) < 0.01);
    // Four buffers, each written as it is: at most four different blocks.
    assert!(distinct(&write("same", &[("scramble_buffers", "0")])) <= 4);
    assert_eq!(distinct(&write("refill", &[("refill_buffers", "1")])), 256);
    assert!(write("zero", &[("zero_buffers", "1")])
        .iter()
        .all(|&b| b == 0));
    let p = write("pattern", &[("buffer_pattern", "0xdeadbeef")]);
    assert!(p.chunks(4).all(|c| c == [0xde, 0xad, 0xbe, 0xef]));
    let z = zeros(&write("compress", &[("buffer_compress_percentage", "60")]));
    assert!((0.59..0.62).contains(&z), "{z}");
    let unique = distinct(&write("dedupe", &[("dedupe_percentage", "50")]));
    assert!((100..=156).contains(&unique), "{unique}");
    // Verify writes its own headers over any of them.
    let v = write(
        "verify",
        &[("buffer_pattern", "0xdeadbeef"), ("verify", "1")],
    );
    assert_eq!(distinct(&v), 256);
}

/// A new file is laid out as fio lays it out, with the content of the job that uses it: a
/// reading job's file has every block its own random bytes (storage that compresses or
/// deduplicates gains nothing from it), and the buffer options shape it as they shape
/// writes — zeros, the pattern from each block's start (the job's largest block), a
/// compressible share. The same job lays the same bytes out again.
#[test]
fn a_new_file_is_laid_out_with_the_jobs_content() {
    let d = tmp();
    let base = [
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "1m"),
        ("io_size", "4k"),
    ];
    let lay = |name: &str, extra: &[(&str, &str)]| run_on_new_file(d.path(), name, &base, extra).1;
    let distinct = distinct_blocks;
    let zeros = zero_share;
    let plain = lay("default", &[]);
    assert_eq!(plain.len(), 1 << 20);
    assert_eq!(distinct(&plain, 4096), 256);
    assert!(zeros(&plain) < 0.01, "{}", zeros(&plain));
    assert_eq!(lay("default", &[]), plain);
    assert!(lay("zero", &[("zero_buffers", "1")])
        .iter()
        .all(|&b| b == 0));
    let p = lay(
        "pattern",
        &[("buffer_pattern", "0x010203"), ("bsrange", "4k-16k")],
    );
    for (i, block) in p.chunks(16 << 10).enumerate() {
        assert!(
            block
                .iter()
                .enumerate()
                .all(|(k, &b)| b as usize == k % 3 + 1),
            "block {i}"
        );
    }
    let c = lay(
        "compress",
        &[
            ("buffer_compress_percentage", "60"),
            ("buffer_compress_chunk", "1k"),
        ],
    );
    assert!((0.59..0.62).contains(&zeros(&c)), "{}", zeros(&c));
    assert_eq!(distinct(&c, 4096), 256);
}

/// A mixed job's writes carry the job's content even through buffers its reads used (fio
/// refills them): every block written holds the pattern, none what a read brought in.
#[test]
fn writes_after_reads_in_the_same_buffers_carry_the_pattern() {
    let d = tmp();
    let f = d.path().join("mixed");
    for (engine, depth) in [("psync", "1"), ("io_uring", "4")] {
        // Data the pattern is not, in every block (written by a job, so the file is one
        // raidlab laid out).
        let fill = spec(&[
            ("rw", "write"),
            ("bs", "64k"),
            ("size", "1m"),
            ("buffer_pattern", "0x11"),
            ("filename", f.to_str().unwrap()),
        ]);
        run_paths(&[fill], false).unwrap();
        let r = run_paths(
            &[spec(&[
                ("rw", "randrw"),
                ("bs", "4k"),
                ("size", "1m"),
                ("ioengine", engine),
                ("iodepth", depth),
                ("buffer_pattern", "0x5a"),
                ("filename", f.to_str().unwrap()),
            ])],
            false,
        )
        .unwrap();
        let j = &r.jobs[0];
        assert_eq!(j.error, None);
        assert!(j.read.total_ios > 20 && j.write.total_ios > 20, "{engine}");
        let data = std::fs::read(&f).unwrap();
        let blocks: Vec<&[u8]> = data.chunks(4096).collect();
        // Each block is either all pattern (written) or as it was (read, or untouched).
        assert!(
            blocks
                .iter()
                .all(|b| b.iter().all(|&x| x == 0x5a) || b.iter().all(|&x| x != 0x5a)),
            "{engine}: a block mixes the pattern with other bytes"
        );
        let written = blocks
            .iter()
            .filter(|b| b.iter().all(|&x| x == 0x5a))
            .count() as u64;
        assert!(
            written >= j.write.total_ios,
            "{engine}: {written} blocks hold the pattern, {} were written",
            j.write.total_ios
        );
    }
}

#[test]
fn zero_buffers_with_a_pattern_is_refused_in_one_line() {
    let d = tmp();
    let f = d.path().join("never");
    let e = run_paths(
        &[spec(&[
            ("rw", "write"),
            ("zero_buffers", "1"),
            ("buffer_pattern", "\"ab\""),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap_err();
    assert!(e.is_usage());
    assert_eq!(
        e.to_string(),
        "job 'job': zero_buffers and buffer_pattern each set what every buffer holds (valid: one of them)"
    );
    assert!(!f.exists());
}

/// The CPUs this test process may run on, from /proc/self/status.
fn allowed_cpus() -> Vec<u32> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    raidlab_workload::spec::parse_cpu_list(&list).unwrap()
}

/// cpus_allowed binds each job's thread: shared, every job to the whole set; split, each to
/// one CPU of it in turn. The result carries the set the kernel reports once bound.
#[test]
fn cpus_allowed_binds_each_job_as_its_policy_says() {
    let here = allowed_cpus();
    let n = here.len().min(4);
    let list: Vec<String> = here[..n].iter().map(u32::to_string).collect();
    let list = list.join(",");
    let d = tmp();
    let f = d.path().join("c");
    let job = |policy: &str| {
        spec(&[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "256k"),
            ("numjobs", &n.to_string()),
            ("cpus_allowed", &list),
            ("cpus_allowed_policy", policy),
            ("filename", f.to_str().unwrap()),
        ])
    };
    let r = run_paths(&[job("split")], false).unwrap();
    let got: Vec<Vec<u32>> = r.jobs.iter().map(|j| j.cpus.clone()).collect();
    let want: Vec<Vec<u32>> = here[..n].iter().map(|&c| vec![c]).collect();
    assert_eq!(got, want);
    let r = run_paths(&[job("shared")], false).unwrap();
    for j in &r.jobs {
        assert_eq!(j.cpus, here[..n], "{}", j.name);
    }
    // Without the option, no binding and nothing recorded.
    let r = run_paths(
        &[spec(&[("size", "64k"), ("filename", f.to_str().unwrap())])],
        false,
    )
    .unwrap();
    assert!(r.jobs[0].cpus.is_empty());
    // A CPU the process may not use is refused before any I/O, in one line.
    let e = run_paths(
        &[spec(&[
            ("cpus_allowed", "1023"),
            ("size", "64k"),
            ("filename", d.path().join("never").to_str().unwrap()),
        ])],
        false,
    )
    .unwrap_err();
    assert!(e.is_usage());
    assert!(
        e.to_string().starts_with(
            "job 'job': cpus_allowed names CPU 1023, which this process may not run on (valid: "
        ),
        "{e}"
    );
    assert!(!d.path().join("never").exists());
}

/// sqthread_poll: a kernel thread takes the requests from the ring (bound to
/// sqthread_poll_cpu when given); what is written reads back verified.
#[test]
fn a_polled_submission_queue_writes_and_reads_back() {
    let cpu = allowed_cpus()[0].to_string();
    for extra in [&[][..], &[("sqthread_poll_cpu", cpu.as_str())][..]] {
        let d = tmp();
        let f = d.path().join("sq");
        let mut o = vec![
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("size", "1m"),
            ("iodepth", "16"),
            ("direct", "1"),
            ("sqthread_poll", "1"),
            ("verify", "1"),
            ("filename", f.to_str().unwrap()),
        ];
        o.extend_from_slice(extra);
        let r = run_paths(&[spec(&o)], false).unwrap();
        let j = &r.jobs[0];
        assert_eq!(j.error, None, "{extra:?}");
        assert_eq!(j.write.total_ios, 256, "{extra:?}");
        let v = j.verify.as_ref().unwrap();
        assert_eq!((v.blocks_checked, v.mismatches), (256, 0), "{extra:?}");
    }
}

/// unlink removes a job's file once the run is over, when it is raidlab's own (created by
/// the run, or marked as its scratch); a file holding other data stays unless --force.
#[test]
fn unlink_removes_only_raidlabs_own_files() {
    let d = tmp();
    let f = d.path().join("u");
    let job = |rw: &str| {
        spec(&[
            ("rw", rw),
            ("bs", "64k"),
            ("size", "1m"),
            ("unlink", "1"),
            ("filename", f.to_str().unwrap()),
        ])
    };
    // Created by the run: removed, the results whole.
    let r = run_paths(&[job("write")], false).unwrap();
    assert_eq!(r.jobs[0].write.io_bytes, 1 << 20);
    assert!(!f.exists());
    // Laid out by an earlier run (its scratch mark): removed.
    let mut keep = job("write");
    keep.unlink = false;
    run_paths(&[keep], false).unwrap();
    assert!(f.exists());
    run_paths(&[job("read")], false).unwrap();
    assert!(!f.exists());
    // Someone else's data: a read job leaves it, unless --force.
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let r = run_paths(&[job("read")], false).unwrap();
    assert_eq!(r.jobs[0].read.io_bytes, 1 << 20);
    assert_eq!(std::fs::read(&f).unwrap(), vec![7u8; 1 << 20]);
    run_paths(&[job("read")], true).unwrap();
    assert!(!f.exists());
}

/// do_verify=0 writes the headers without reading them back; verify_fatal ends a checking
/// job at its first mismatch, where by default every block is checked and counted.
#[test]
fn do_verify_and_verify_fatal_do_as_fio_says() {
    let d = tmp();
    let f = d.path().join("v");
    let job = |extra: &[(&str, &str)]| {
        let mut o = vec![
            ("bs", "4k"),
            ("size", "1m"),
            ("verify", "1"),
            ("filename", f.to_str().unwrap()),
        ];
        o.extend_from_slice(extra);
        spec(&o)
    };
    let r = run_paths(&[job(&[("rw", "write"), ("do_verify", "0")])], false).unwrap();
    assert_eq!(r.jobs[0].verify.as_ref().unwrap().blocks_checked, 0);
    let r = run_paths(&[job(&[("rw", "write")])], false).unwrap();
    assert_eq!(r.jobs[0].verify.as_ref().unwrap().blocks_checked, 256);
    // Ten blocks spoiled: a reader counts all ten; with verify_fatal it stops at the first.
    {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        for b in 0..10u64 {
            file.write_all_at(&[0u8; 4096], (20 + b * 20) * 4096)
                .unwrap();
        }
    }
    let r = run_paths(&[job(&[("rw", "read")])], false).unwrap();
    let v = r.jobs[0].verify.as_ref().unwrap();
    assert_eq!((v.blocks_checked, v.mismatches), (256, 10));
    let r = run_paths(&[job(&[("rw", "read"), ("verify_fatal", "1")])], false).unwrap();
    let j = &r.jobs[0];
    let v = j.verify.as_ref().unwrap();
    assert_eq!(v.mismatches, 1);
    assert!(v.blocks_checked <= 21 + 1, "{}", v.blocks_checked);
    assert!(
        j.error.as_deref().unwrap_or("").starts_with("verify: "),
        "{:?}",
        j.error
    );
}

/// fallocate decides how a new file that only writing jobs use is prepared: by default laid
/// out (with the job's content); `none`, extended by the writes; `truncate`, sized and sparse; `posix` and
/// `native`, sized and allocated; `keep`, allocated at its old size. A job writing half the
/// region shows which. fio's `overwrite` chooses between the two ways.
#[test]
fn fallocate_prepares_a_written_file_as_fio_says() {
    use std::os::unix::fs::MetadataExt;
    let half = 512u64 << 10;
    let d = tmp();
    let prepared = |how: Option<&str>| {
        let f = d.path().join(how.unwrap_or("default"));
        let mut o = vec![
            ("rw", "write"),
            ("bs", "64k"),
            ("size", "1m"),
            ("io_size", "512k"),
            ("filename", f.to_str().unwrap()),
        ];
        if let Some(h) = how {
            o.push(("fallocate", h));
        }
        let r = run_paths(&[spec(&o)], false).unwrap();
        assert_eq!(r.jobs[0].write.io_bytes, half, "{how:?}");
        let m = std::fs::metadata(&f).unwrap();
        (m.len(), m.blocks() * 512)
    };
    let (len, allocated) = prepared(None);
    assert_eq!(len, 1 << 20);
    assert!(allocated >= 1 << 20, "{allocated}");
    assert_eq!(prepared(Some("none")).0, half);
    let (len, allocated) = prepared(Some("truncate"));
    assert_eq!(len, 1 << 20);
    assert!(allocated < 1 << 20, "{allocated}");
    for how in ["posix", "native"] {
        let (len, allocated) = prepared(Some(how));
        assert_eq!(len, 1 << 20, "{how}");
        assert!(allocated >= 1 << 20, "{how}: {allocated}");
    }
    let (len, allocated) = prepared(Some("keep"));
    assert_eq!(len, half);
    assert!(allocated >= 1 << 20, "{allocated}");
    // fio's overwrite: 1 lays the file out whatever fallocate says; 0 only allocates it
    // (fallocate, native unless given), so `none` leaves the writes to extend it.
    let with = |opts: &[(&str, &str)], name: &str| {
        let f = d.path().join(name);
        let mut o = vec![
            ("rw", "write"),
            ("bs", "64k"),
            ("size", "1m"),
            ("io_size", "512k"),
            ("filename", f.to_str().unwrap()),
        ];
        o.extend_from_slice(opts);
        run_paths(&[spec(&o)], false).unwrap();
        let m = std::fs::metadata(&f).unwrap();
        (m.len(), m.blocks() * 512)
    };
    let (len, allocated) = with(&[("overwrite", "1"), ("fallocate", "truncate")], "ow1");
    assert_eq!(len, 1 << 20);
    assert!(allocated >= 1 << 20, "overwrite=1 lays out: {allocated}");
    assert_eq!(
        with(&[("overwrite", "0"), ("fallocate", "none")], "ow0n").0,
        half
    );
    let (len, allocated) = with(&[("overwrite", "0")], "ow0");
    assert_eq!(len, 1 << 20);
    assert!(
        allocated >= 1 << 20,
        "overwrite=0 allocates natively: {allocated}"
    );
    // A file a job reads is laid out whatever fallocate says.
    let f = d.path().join("read");
    let r = run_paths(
        &[spec(&[
            ("rw", "randrw"),
            ("size", "1m"),
            ("io_size", "64k"),
            ("fallocate", "none"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap();
    assert_eq!(r.jobs[0].error, None);
    let m = std::fs::metadata(&f).unwrap();
    assert_eq!(m.len(), 1 << 20);
    assert!(m.blocks() * 512 >= 1 << 20, "{}", m.blocks());
}

/// The bytes of this process locked in memory (VmLck in /proc/self/status).
fn locked_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmLck:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

/// lockmem pins that much memory while the job runs and lets it go when it ends; more than
/// half the machine's memory is refused before anything runs.
#[test]
fn lockmem_pins_memory_while_the_job_runs() {
    let d = tmp();
    let f = d.path().join("m");
    let before = locked_bytes();
    let job = spec(&[
        ("rw", "randread"),
        ("size", "1m"),
        ("runtime", "400ms"),
        ("time_based", "1"),
        ("lockmem", "32m"),
        ("filename", f.to_str().unwrap()),
    ]);
    let during = std::thread::scope(|sc| {
        let h = sc.spawn(|| run_paths(std::slice::from_ref(&job), false).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let during = locked_bytes();
        let r = h.join().unwrap();
        assert_eq!(r.jobs[0].error, None);
        during
    });
    assert!(during >= before + (32 << 20), "{before} then {during}");
    assert!(locked_bytes() < before + (32 << 20));
    let e = run_paths(
        &[spec(&[
            ("lockmem", "1p"),
            ("size", "64k"),
            ("filename", f.to_str().unwrap()),
        ])],
        false,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("lockmem=1125899906842624 pins more than half"),
        "{e}"
    );
}

/// A coordinator that writes down each call, and whether the target existed then, and fails
/// at the group it is told to.
#[derive(Debug, Default)]
struct Recorder {
    calls: std::sync::Mutex<Vec<String>>,
    file: std::path::PathBuf,
    fail_at_group: Option<usize>,
}

impl Recorder {
    fn note(&self, what: String) {
        let there = if self.file.exists() {
            "laid out"
        } else {
            "absent"
        };
        self.calls.lock().unwrap().push(format!("{what} ({there})"));
    }
}

impl raidlab_engine::Coordinator for Recorder {
    fn before_setup(&self) -> Result<(), String> {
        self.note("before_setup".into());
        Ok(())
    }
    fn after_setup(&self) -> Result<(), String> {
        self.note("after_setup".into());
        Ok(())
    }
    fn before_group(&self, group: usize) -> Result<(), String> {
        self.note(format!("before_group {group}"));
        match self.fail_at_group {
            Some(g) if g == group => Err(format!("the others stopped before group {g}")),
            _ => Ok(()),
        }
    }
    fn after_groups(&self) -> Result<(), String> {
        self.note("after_groups".into());
        Ok(())
    }
}

/// The engine meets its coordinator at the run's fixed points, in order: around the layout
/// (the target appears between the two), before each stonewall group, after the last
/// group and before `unlink` removes the file. An error at a group ends the run with it,
/// with no later point met.
#[test]
fn a_coordinator_is_met_at_the_fixed_points_in_order() {
    let d = tmp();
    let f = d.path().join("coord");
    let name = f.to_str().unwrap();
    let specs = [
        spec(&[
            ("name", "w"),
            ("rw", "write"),
            ("bs", "64k"),
            ("size", "1m"),
            ("filename", name),
        ]),
        spec(&[
            ("name", "r"),
            ("rw", "read"),
            ("bs", "64k"),
            ("size", "1m"),
            ("filename", name),
            ("stonewall", "1"),
            ("unlink", "1"),
        ]),
    ];
    let rec = std::sync::Arc::new(Recorder {
        file: f.clone(),
        ..Default::default()
    });
    let opts = raidlab_engine::RunOptions {
        coordinator: Some(rec.clone()),
        ..Default::default()
    };
    let r = raidlab_engine::run(&specs, &mut raidlab_engine::resolve_path, &opts).unwrap();
    assert_eq!(r.jobs.len(), 2);
    assert_eq!(
        *rec.calls.lock().unwrap(),
        [
            "before_setup (absent)",
            "after_setup (laid out)",
            "before_group 0 (laid out)",
            "before_group 1 (laid out)",
            "after_groups (laid out)",
        ]
    );
    assert!(!f.exists(), "unlink removes the file after the last point");

    let rec = std::sync::Arc::new(Recorder {
        file: f.clone(),
        fail_at_group: Some(1),
        ..Default::default()
    });
    let opts = raidlab_engine::RunOptions {
        coordinator: Some(rec.clone()),
        ..Default::default()
    };
    let e = raidlab_engine::run(&specs, &mut raidlab_engine::resolve_path, &opts).unwrap_err();
    assert!(
        e.to_string().contains("the others stopped before group 1"),
        "{e}"
    );
    assert_eq!(
        rec.calls.lock().unwrap().last().map(String::as_str),
        Some("before_group 1 (laid out)")
    );
}

/// A job over two files, as fio runs `filename=a:b`: one job, its size split between the
/// files (each laid out to its share), its requests taking turns, each file verified
/// against its own writes; the read-back after the writes checks every block of both.
#[test]
fn a_job_over_two_files_splits_its_size_and_verifies_each() {
    let d = tmp();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    let list = format!("{}:{}", a.display(), b.display());
    for engine in ["io_uring", "psync", "libaio"] {
        let _ = std::fs::remove_file(&a);
        let _ = std::fs::remove_file(&b);
        let r = run_paths(
            &[spec(&[
                ("rw", "randwrite"),
                ("bs", "4k"),
                ("size", "8m"),
                ("iodepth", "8"),
                ("ioengine", engine),
                ("verify", "crc32c"),
                ("filename", &list),
            ])],
            false,
        )
        .unwrap();
        assert_eq!(r.jobs.len(), 1, "{engine}");
        let j = &r.jobs[0];
        assert_eq!(j.error, None, "{engine}");
        assert_eq!(j.target, list);
        assert_eq!(j.write.io_bytes, 8 << 20, "{engine}");
        assert_eq!(std::fs::metadata(&a).unwrap().len(), 4 << 20, "{engine}");
        assert_eq!(std::fs::metadata(&b).unwrap().len(), 4 << 20, "{engine}");
        let v = j.verify.clone().unwrap();
        assert_eq!((v.blocks_checked, v.mismatches), (2048, 0), "{engine}");
    }
    // What the job wrote is there to read: each file by a job of its own, verified.
    let r = run_paths(
        &[spec(&[
            ("rw", "read"),
            ("bs", "4k"),
            ("iodepth", "16"),
            ("size", "4m"),
            ("verify", "crc32c"),
            ("job_per_file", "1"),
            ("filename", &list),
        ])],
        false,
    )
    .unwrap();
    assert_eq!(r.jobs.len(), 2);
    for j in &r.jobs {
        assert_eq!(j.error, None);
        assert_eq!(j.read.io_bytes, 4 << 20);
        assert_eq!(j.verify.as_ref().map(|v| v.mismatches), Some(0));
    }
}

/// Without a size each of a job's files is read whole (existing files of their own sizes),
/// one after the other under `file_service_type=sequential`.
#[test]
fn without_a_size_each_file_is_read_whole() {
    let d = tmp();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::write(&a, vec![1u8; 1 << 20]).unwrap();
    std::fs::write(&b, vec![2u8; 3 << 20]).unwrap();
    let list = format!("{}:{}", a.display(), b.display());
    let r = run_paths(
        &[spec(&[
            ("rw", "read"),
            ("bs", "64k"),
            ("filename", &list),
            ("file_service_type", "sequential"),
        ])],
        false,
    )
    .unwrap();
    let j = &r.jobs[0];
    assert_eq!(j.error, None);
    assert_eq!(j.read.io_bytes, 4 << 20);
    assert_eq!(j.read.total_ios, 64);
}
