//! System files: errors point at file:line and say what is valid; every shipped system loads.

mod common;
use common::*;

#[test]
fn bad_files_say_where_and_what_is_valid() {
    let e = raidlab_sim::config::parse(
        "x.toml",
        "[system]\nname = \"x\"\n[host]\ncpus = \"four\"\n",
    )
    .unwrap_err();
    assert!(e.is_usage());
    assert!(e.message.starts_with("x.toml:4:"), "{e}");
    let text = "[system]\nname = \"x\"\n[host]\n[[controller]]\nname = \"c\"\n[[array]]\nname = \"a\"\ncontroller = \"c\"\nlevel = \"raid7\"\ndisks = 4\ndisk = \"compaq-18g-10k\"\n[[lun]]\nname = \"l\"\narray = \"a\"\n";
    let e = raidlab_sim::config::parse("y.toml", text).unwrap_err();
    assert!(
        e.message.contains("y.toml:9:") && e.message.contains("valid: raid0"),
        "{e}"
    );
    let e = raidlab_sim::config::parse(
        "z.toml",
        &text
            .replace("raid7", "raid5")
            .replace("compaq-18g-10k", "floppy"),
    )
    .unwrap_err();
    assert!(
        e.message.contains("z.toml:11:") && e.message.contains("not in the catalog"),
        "{e}"
    );
    assert!(raidlab_sim::parse_target("sim:").is_err());
    assert!(raidlab_sim::parse_target("/dev/sda")
        .unwrap_err()
        .is_usage());
    assert_eq!(
        raidlab_sim::parse_target("sim:a.toml#lun1")
            .unwrap()
            .lun
            .as_deref(),
        Some("lun1")
    );
}

/// A drive can carry a measured seek table; a malformed one is one line naming the disk, the
/// point and the valid form, and a good one changes what random reads cost.
#[test]
fn a_measured_seek_table_is_checked_and_used() {
    let base = "[system]\nname = \"x\"\n[host]\n[[controller]]\nname = \"c\"\n\
[[disk]]\nname = \"d\"\nbase = \"samsung-hd501lj\"\nTABLE\n\
[[array]]\nname = \"a\"\ncontroller = \"c\"\nlevel = \"single\"\ndisks = 1\ndisk = \"d\"\n\
[[lun]]\nname = \"l\"\narray = \"a\"\n";
    for (table, what) in [
        ("seek_table = [[0.0, 1.0]]", "at least two points"),
        (
            "seek_table = [[0.0, 1.0], [1.5, 9.0]]",
            "point 2 is [1.5, 9]",
        ),
        (
            "seek_table = [[0.0, 5.0], [0.5, 4.0], [1.0, 9.0]]",
            "does not follow",
        ),
        ("seek_table = [[0.5, 5.0], [0.2, 6.0]]", "does not follow"),
    ] {
        let e = raidlab_sim::config::parse("s.toml", &base.replace("TABLE", table)).unwrap_err();
        assert!(
            e.is_usage()
                && e.message.contains("disk 'd'")
                && e.message.contains(what)
                && e.message.contains("fraction of a full stroke")
                && !e.message.contains('\n'),
            "{table}: {e}"
        );
    }
    let dir = std::env::temp_dir().join(format!("raidlab-seek-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let iops_with = |table: &str| {
        let p = dir.join("s.toml");
        std::fs::write(&p, base.replace("TABLE", table)).unwrap();
        iops(
            &format!("sim:{}", p.display()),
            &[
                ("rw", "randread"),
                ("bs", "4k"),
                ("size", "100g"),
                ("io_size", "8m"),
            ],
        )
    };
    let fitted = iops_with("");
    // `explain` says what curve a drive seeks on: fitted to the datasheet, or the table.
    let text = raidlab_sim::explain(&dir.join("s.toml")).unwrap();
    assert!(
        text.contains("seek 0.80/8.90/18.00 ms track/average/full (√ of the distance"),
        "{text}"
    );
    std::fs::write(
        dir.join("t.toml"),
        base.replace("TABLE", "seek_table = [[0, 1], [1, 19]]"),
    )
    .unwrap();
    let text = raidlab_sim::explain(&dir.join("t.toml")).unwrap();
    assert!(
        text.contains("seek 1.00/7.00/19.00 ms track/average/full (measured table, 2 points)"),
        "{text}"
    );
    let slow = iops_with("seek_table = [[0.0, 20.0], [1.0, 40.0]]");
    let fast = iops_with("seek_table = [[0.0, 0.1], [1.0, 0.2]]");
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        slow < fitted * 0.6 && fast > fitted * 1.3,
        "IOPS: table 20-40 ms {slow:.0}, fitted {fitted:.0}, table 0.1-0.2 ms {fast:.0}"
    );
}

#[test]
fn every_shipped_system_loads_and_explains() {
    let mut n = 0;
    for dir in std::fs::read_dir(repo().join("systems")).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "toml")
                && p.file_name().unwrap() != "components.toml"
            {
                let text =
                    raidlab_sim::explain(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                assert!(text.contains("bound"), "{}", p.display());
                n += 1;
            }
        }
    }
    assert!(n >= 15 + 4 + 7 + 32 + 8, "{n} systems");
}

#[test]
fn unknown_lun_is_a_usage_error() {
    let s = spec(
        &format!("{}#nope", system("llnl2000/fig11.toml")),
        &[("rw", "read"), ("size", "1m")],
    );
    let e = raidlab_sim::run(&[s]).unwrap_err();
    assert!(e.is_usage() && e.message.contains("LUNs: u0c0"), "{e}");
}

#[test]
fn simulated_jobs_report_the_queue_depth_they_kept() {
    // fio's IO depths, as the real engine counts them: a QD 16 random job keeps 16 in flight.
    let s = common::spec(
        &common::system("xdd2008/raid5.toml"),
        &[
            ("rw", "randread"),
            ("bs", "8k"),
            ("size", "64m"),
            ("iodepth", "16"),
        ],
    );
    let r = raidlab_sim::run(&[s]).unwrap();
    let levels = r.jobs[0].iodepth_level;
    let total: u64 = levels.iter().sum();
    assert!(total >= 500, "{levels:?}");
    assert!(
        levels[4] * 10 > total * 9,
        "bucket 16 dominates: {levels:?}"
    );
}

/// `explain` says whether each array's drives hold writes in a write cache and how much; a
/// `[[disk]]` entry sets it with `write_cache` and `cache_kib`.
#[test]
fn explain_names_the_drive_write_cache() {
    let text = raidlab_sim::explain(&repo().join("systems/iometer2008/raid0-4d.toml")).unwrap();
    assert!(
        text.contains("drive write cache on: holds 16384 KiB of writes"),
        "{text}"
    );
    let text = raidlab_sim::explain(&repo().join("systems/llnl2000/fig11.toml")).unwrap();
    assert!(text.contains("drive write cache off"), "{text}");
    let dir = std::env::temp_dir().join(format!("raidlab-wcache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    std::fs::write(
        &p,
        "[system]\nname = \"x\"\n[host]\n[[controller]]\nname = \"c\"\n\
[[disk]]\nname = \"d\"\nbase = \"compaq-18g-10k\"\nwrite_cache = true\ncache_kib = 2048\n\
[[array]]\nname = \"a\"\ncontroller = \"c\"\nlevel = \"single\"\ndisks = 1\ndisk = \"d\"\n\
[[lun]]\nname = \"l\"\narray = \"a\"\n",
    )
    .unwrap();
    let text = raidlab_sim::explain(&p).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        text.contains("drive write cache on: holds 2048 KiB of writes"),
        "{text}"
    );
}

/// An md array's stripe cache: `explain` gives its size; `stripe_cache_size` sets it, within
/// md's range and only where there is one (a host raid5/raid6 array).
#[test]
fn the_md_stripe_cache_is_explained_and_checked() {
    let src = repo().join("systems/linuxraid2010");
    let text = raidlab_sim::explain(&src.join("raid6-4d-c64.toml")).unwrap();
    assert!(
        text.contains("stripe cache 256 stripe heads (1024 KiB of each member)"),
        "{text}"
    );
    let text = raidlab_sim::explain(&src.join("raid10-4d-c64.toml")).unwrap();
    assert!(!text.contains("stripe cache"), "{text}");
    let dir = std::env::temp_dir().join(format!("raidlab-stripecache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(src.join("components.toml"), dir.join("components.toml")).unwrap();
    let md = std::fs::read_to_string(src.join("raid5-4d-c64.toml")).unwrap();
    let r10 = std::fs::read_to_string(src.join("raid10-4d-c64.toml")).unwrap();
    for (base, n, what) in [
        (&md, 16, "must be 17 to 32768 stripe heads"),
        (&md, 40000, "must be 17 to 32768 stripe heads"),
        (&r10, 512, "applies to host (md) raid5/raid6 arrays only"),
    ] {
        let p = dir.join("s.toml");
        let text = base.replacen(
            "chunk_kib = 64\n",
            &format!("chunk_kib = 64\nstripe_cache_size = {n}\n"),
            1,
        );
        assert!(text.contains("stripe_cache_size"));
        std::fs::write(&p, text).unwrap();
        let e = raidlab_sim::explain(&p).unwrap_err();
        assert!(
            e.is_usage()
                && e.message.contains("s.toml:")
                && e.message
                    .contains(&format!("stripe_cache_size = {n}: {what}"))
                && !e.message.contains('\n'),
            "{e}"
        );
    }
    let p = dir.join("s.toml");
    std::fs::write(
        &p,
        md.replacen(
            "chunk_kib = 64\n",
            "chunk_kib = 64\nstripe_cache_size = 1024\n",
            1,
        ),
    )
    .unwrap();
    let text = raidlab_sim::explain(&p).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        text.contains("stripe cache 1024 stripe heads (4096 KiB"),
        "{text}"
    );
}

/// A LUN must start inside its array: an offset past the end is one line naming the LUN, the
/// array and the valid offsets, not a job that "covers" a target of 0 bytes.
#[test]
fn a_lun_offset_past_its_array_is_a_usage_error() {
    let dir = std::env::temp_dir().join(format!("raidlab-sim-lunoff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(repo().join("systems/xdd2008/raid0.toml"))
        .unwrap()
        .replace("offset_bytes = 32256", "offset_bytes = 999999999999999")
        .replace(
            "include = [\"components.toml\"]",
            "include = [\"comp.toml\"]",
        );
    assert!(text.contains("999999999999999"));
    std::fs::copy(
        repo().join("systems/xdd2008/components.toml"),
        dir.join("comp.toml"),
    )
    .unwrap();
    let f = dir.join("far.toml");
    std::fs::write(&f, text).unwrap();
    let e = raidlab_sim::run(&[spec(
        &format!("sim:{}", f.display()),
        &[("rw", "randread"), ("bs", "8k"), ("size", "64m")],
    )])
    .unwrap_err();
    assert!(e.is_usage(), "{e}");
    assert!(
        e.message.contains("lun 'ntfs'")
            && e.message.contains("offset_bytes 999999999999999")
            && e.message.contains("array 'raid0'")
            && e.message.contains("valid: 0 to "),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A drive-bound LUN has two read bounds: over the whole stroke (the inner zone's rate, seed
/// 002's stage-2 figure) and at the outer zone. A sequential read at the drives' start runs
/// above the first and never above the second; one at their end stays under the first.
#[test]
fn drive_bound_luns_have_an_inner_and_an_outer_zone_bound() {
    let sys = repo().join("systems/linuxraid2010/raid0-4d-c256.toml");
    let b = raidlab_sim::bounds(&sys).unwrap();
    let md = b.iter().find(|c| c.name == "lun/md0").expect("lun/md0");
    assert!(md.outer_bytes_s > 1.5 * md.bound_bytes_s, "{md:?}");
    let t = system("linuxraid2010/raid0-4d-c256.toml");
    let read = |offset: &str| {
        mb_s(
            &t,
            &[
                ("rw", "read"),
                ("bs", "1m"),
                ("size", "1g"),
                ("iodepth", "8"),
                ("direct", "1"),
                ("offset", offset),
            ],
        ) * 1e6
    };
    let start = read("0");
    assert!(
        start > md.bound_bytes_s && start <= md.outer_bytes_s,
        "start {start:.0} B/s, bounds {md:?}"
    );
    let end = read("1850g"); // 1850 GiB: the last 12 GB of the 2 TB LUN
    assert!(
        end <= md.bound_bytes_s * 1.01,
        "end {end:.0} B/s, bounds {md:?}"
    );
    let text = raidlab_sim::explain(&sys).unwrap();
    assert!(
        text.contains(
            "186.8 MB/s read over the whole stroke (inner zone), 344.1 at the outer zone"
        ),
        "{text}"
    );
    // A path-limited LUN has one bound.
    let text = raidlab_sim::explain(&repo().join("systems/llnl2000/fig16.toml")).unwrap();
    assert!(
        text.contains("  bound: 50.0 MB/s read (limited by ctrl/"),
        "{text}"
    );
}

/// The fingerprint sweeps resume simulated points by is made when the crate is built: 16
/// lowercase hex digits (the build script hashed the sources it found).
#[test]
fn the_model_print_is_a_fingerprint() {
    let p = raidlab_sim::MODEL_PRINT;
    assert_eq!(p.len(), 16, "{p}");
    assert!(
        p.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{p}"
    );
    // The hash of no sources at all would be FNV-1a's offset basis.
    assert_ne!(p, "cbf29ce484222325", "the build script found no sources");
}
