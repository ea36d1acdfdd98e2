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

/// A controller cache without a battery writes through, as real controllers do; `explain`
/// says why rather than leave a `write_policy = "write-back"` looking ignored.
#[test]
fn explain_says_a_cache_without_a_battery_writes_through() {
    let dir = std::env::temp_dir().join(format!("raidlab-battery-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    let ctl = |edit: &str| {
        std::fs::write(&p, small_with("cache_mib = 64\n", edit)).unwrap();
        let t = raidlab_sim::explain(&p).unwrap();
        t.lines()
            .find(|l| l.contains("→ ctrl/c "))
            .unwrap()
            .to_string()
    };
    let asked = ctl("cache_mib = 64\nwrite_policy = \"write-back\"\n");
    let default = ctl("cache_mib = 64\n");
    let battery = ctl("cache_mib = 64\nbattery = true\n");
    let through = ctl("cache_mib = 64\nwrite_policy = \"write-through\"\n");
    std::fs::remove_dir_all(&dir).ok();
    for l in [&asked, &default] {
        assert!(
            l.contains("write-through (no battery: write-back needs battery = true)"),
            "{l}"
        );
    }
    assert!(battery.contains("cache 64 MiB write-back,"), "{battery}");
    assert!(
        through.contains("write-through,") && !through.contains("battery"),
        "{through}"
    );
}

/// `explain` names an array's level in the system file's words and its drives by the name
/// the file gives them (a catalog entry or a [[disk]]), one drive in the singular: it said
/// "Raid5, 4 × drive" and "1 data drives' worth".
#[test]
fn explain_names_the_level_and_drives_as_the_file_does() {
    let dir = std::env::temp_dir().join(format!("raidlab-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    std::fs::write(&p, SMALL).unwrap();
    let text = raidlab_sim::explain(&p).unwrap();
    let json = raidlab_sim::bounds(&p).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    for want in [
        "raid5, 4 × d, chunk 64 KiB",
        "(3 data drives' worth)",
        "single, 1 × d, chunk",
        "host array md raid1 chunk",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let note = |n: &str| json.iter().find(|c| c.name == n).unwrap().note.clone();
    let a = note("array/a");
    assert!(
        a.starts_with("raid5 of 4 drives, all of which can read;"),
        "{a}"
    );
    assert!(
        a.contains("writes: 3 data drives' worth (the rest write parity or copies)"),
        "{a}"
    );
    let b = note("array/b");
    assert!(b.starts_with("single of 1 drive;"), "{b}");
    assert!(
        b.contains("writes: 1 data drive's worth, drives writing"),
        "{b}"
    );
}

/// `explain` says how many commands each array's drives queue and in what order they serve
/// them: 32 by shortest positioning time unless the array gives `disk_queue_depth`; one at a
/// time in arrival order with `disk_queue_depth = 1`.
#[test]
fn explain_names_the_drive_command_queue() {
    let queued = "drive command queue 32: shortest positioning time first, but a command that \
                  has waited 2000 ms goes first";
    for file in ["systems/xdd2008/raid5.toml", "systems/llnl2000/fig11.toml"] {
        let text = raidlab_sim::explain(&repo().join(file)).unwrap();
        assert!(text.contains(queued), "{file}: {text}");
    }
    let one = variant(
        "llnl2000",
        "fig11.toml",
        &[("chunk_kib = 64 ", "disk_queue_depth = 1\nchunk_kib = 64 ")],
    );
    let text = raidlab_sim::explain(std::path::Path::new(one.trim_start_matches("sim:"))).unwrap();
    assert!(
        text.contains("drive command queue 1: one command at a time, in arrival order"),
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
    // At the LUN's offset_bytes line, as the checks made while parsing say where.
    assert!(
        e.message.starts_with(&format!("{}:22: ", f.display())) && !e.message.contains('\n'),
        "{e}"
    );
    assert!(
        e.message.contains("lun 'ntfs'")
            && e.message.contains("offset_bytes 999999999999999")
            && e.message.contains("array 'raid0'")
            && e.message.contains("valid: 0 to "),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Host arrays do not nest: a host array's member that is a LUN of another host array is one
/// line at the `members` line of the array that lists it, saying what members may be.
#[test]
fn a_host_array_over_a_host_array_says_where() {
    let dir = std::env::temp_dir().join(format!("raidlab-sim-nested-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    let text = format!(
        "{SMALL}[[array]]\nname = \"md2\"\nlevel = \"raid0\"\nmembers = [\"m\"]\n\
         [[lun]]\nname = \"m2\"\narray = \"md2\"\n"
    );
    std::fs::write(&p, &text).unwrap();
    let e = raidlab_sim::explain(&p).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    let line = text.lines().position(|l| l == "members = [\"m\"]").unwrap() + 1;
    assert!(e.is_usage() && !e.message.contains('\n'), "{e}");
    assert!(
        e.message.starts_with(&format!("{}:{line}: ", p.display())),
        "line {line}: {e}"
    );
    assert!(
        e.message.contains("array 'md2'")
            && e.message.contains("member 'm'")
            && e.message.contains("valid: LUNs of controller arrays"),
        "{e}"
    );
}

/// A system with a host array over a host array's LUN, and a LUN whose offset lies past its
/// array, gets a line for each at once; the nested array's own LUN is not judged against a
/// size it was never given.
#[test]
fn nesting_and_offset_errors_come_all_at_once() {
    let dir = std::env::temp_dir().join(format!("raidlab-sim-nested-all-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    let text = format!(
        "{}[[array]]\nname = \"md2\"\nlevel = \"raid0\"\nmembers = [\"m\"]\n\
         [[lun]]\nname = \"m2\"\narray = \"md2\"\noffset_bytes = 1000000000000000\n",
        small_with(
            "name = \"lb\"\narray = \"b\"\n",
            "name = \"lb\"\narray = \"b\"\noffset_bytes = 1000000000000000\n"
        )
    );
    std::fs::write(&p, &text).unwrap();
    let e = raidlab_sim::explain(&p).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    let lines: Vec<&str> = e.lines().collect();
    assert!(e.is_usage(), "{e}");
    assert_eq!(lines.len(), 2, "{e}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("array 'md2'") && l.contains("host arrays do not nest")),
        "{e}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("lun 'lb'") && l.contains("is not inside array 'b'")),
        "{e}"
    );
}

/// An array the RAID planner cannot lay out (here a chunk that is not a power of two) is one
/// line at that array's entry.
#[test]
fn an_array_the_planner_refuses_says_where() {
    let dir = std::env::temp_dir().join(format!("raidlab-sim-chunk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    let text = small_with("name = \"a\"\n", "name = \"a\"\nchunk_kib = 48\n");
    std::fs::write(&p, &text).unwrap();
    let e = raidlab_sim::explain(&p).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    let line = text.lines().position(|l| l == "name = \"a\"").unwrap() + 1;
    assert!(e.is_usage() && !e.message.contains('\n'), "{e}");
    assert!(
        e.message
            .starts_with(&format!("{}:{line}: array 'a': ", p.display()))
            && e.message.contains("a power of two"),
        "line {line}: {e}"
    );
}

/// Member counts: what the RAID planner refuses is refused by the system-file check, one line
/// at the array's `disks` or `members` line naming the valid counts (a raid1 of one drive or
/// one LUN passed the check and failed later, in the planner), and so are the counts the
/// simulator's own models refuse (a raid5 of 2, an odd raid10, a single of 2).
#[test]
fn member_counts_are_refused_at_disks_or_members() {
    let r5 = "level = \"raid5\"\ndisks = 4\n";
    let with = |level: &str, n: u32| format!("level = \"{level}\"\ndisks = {n}\n");
    let cases: Vec<(String, &str)> = vec![
        (
            with("raid1", 1),
            "disks = 1: valid for raid1 is 2 to 1024 drives",
        ),
        (
            with("raid6", 3),
            "disks = 3: valid for raid6 is 4 to 1024 drives",
        ),
        (
            with("raid5", 2),
            "disks = 2: valid for raid5 is 3 to 1024 drives",
        ),
        (
            with("raid10", 3),
            "disks = 3: valid for raid10 is an even number of drives from 2 to 1024",
        ),
        // Past every level's range: 1 to the planner's most members, whatever the level.
        (with("raid1", 0), "disks = 0: valid is 1 to 1024 drives"),
        (
            with("raid0", 1025),
            "disks = 1025: valid is 1 to 1024 drives",
        ),
    ];
    for (new, want) in &cases {
        all_refused(&[(r5, new, "disks", &["array 'a': ", want])]);
    }
    all_refused(&[
        (
            "level = \"single\"\ndisks = 1\n",
            "level = \"single\"\ndisks = 2\n",
            "disks",
            &["array 'b': disks = 2: valid for single is exactly 1 drive"],
        ),
        (
            "members = [\"la\", \"lb\"]",
            "members = [\"la\"]",
            "members",
            &["array 'md': members lists 1 LUN: valid for raid1 is 2 to 1024 LUNs"],
        ),
        (
            "level = \"raid1\"\nmembers = [\"la\", \"lb\"]",
            "level = \"raid6\"\nmembers = [\"la\", \"lb\"]",
            "members",
            &["array 'md': members lists 2 LUNs: valid for raid6 is 4 to 1024 LUNs"],
        ),
        (
            "members = [\"la\", \"lb\"]",
            "members = []",
            "members",
            &["array 'md': members lists 0 LUNs: valid for raid1 is 2 to 1024 LUNs"],
        ),
    ]);
}

/// Every member count the system-file check lets through, the RAID planner lays out: the
/// world builds, at every level.
#[test]
fn every_member_count_the_check_takes_the_planner_builds() {
    let mut taken = 0;
    for level in [
        "single", "linear", "raid0", "raid1", "raid10", "raid5", "raid6",
    ] {
        for n in (0..=9).chain([1024, 1025]) {
            let text = small_with(
                "level = \"raid5\"\ndisks = 4\n",
                &format!("level = \"{level}\"\ndisks = {n}\n"),
            );
            let Ok(sys) = raidlab_sim::config::parse("s.toml", &text) else {
                continue;
            };
            taken += 1;
            if let Err(e) = raidlab_sim::world::World::build(&sys) {
                panic!("{level} with {n} drives passes the check but not the planner: {e}");
            }
        }
    }
    assert!(taken >= 7 * 2, "{taken}");
}

/// The bounds are read bounds, and a controller's XOR engine does no work for a read: it
/// bounds none. Listed at its write rate (seed 000's 37 MB/s), it was the lowest bound of a
/// 5+p chain, and the report's limits table named it the bottleneck of reads at 48 MB/s
/// ("132% of the bound") where the simulator's own bound is the 50 MB/s data path.
#[test]
fn a_parity_engine_bounds_no_read() {
    let b = raidlab_sim::bounds(&repo().join("systems/llnl2000/fig12.toml")).unwrap();
    let parity = b
        .iter()
        .find(|c| c.kind == "parity")
        .expect("a parity engine");
    assert!(!parity.bound_bytes_s.is_finite(), "{parity:?}");
    assert!(parity.note.contains("37 MB/s"), "{parity:?}");
    let lun = b.iter().find(|c| c.name == "lun/u0c0").expect("lun/u0c0");
    let lowest = b
        .iter()
        .map(|c| c.bound_bytes_s)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(lowest, lun.bound_bytes_s, "{b:?}");
}

/// The bounds are those of the components a run of the target goes through: a LUN's own
/// path from host to drives (and its member LUNs' for a host array), or for the whole system
/// the paths of its visible LUNs. Fig. 12's second controller carries no LUN, and seed 002's
/// lun0 goes through fc0 and ctrlA only: every component of the system was listed (for
/// `explain --output-format json` and the report's limits tables alike).
#[test]
fn bounds_list_only_the_components_on_the_luns_paths() {
    let names = |target: &str| -> Vec<String> {
        raidlab_sim::bounds(&repo().join(target))
            .unwrap()
            .into_iter()
            .map(|b| b.name)
            .collect()
    };
    let fig12 = names("systems/llnl2000/fig12.toml");
    assert!(!fig12.iter().any(|n| n.contains("unit0B")), "{fig12:?}");
    assert!(fig12.contains(&"ctrl/unit0A/data".to_string()), "{fig12:?}");
    assert!(fig12.contains(&"all".to_string()), "{fig12:?}");
    let u1c0 = names("systems/llnl2000/fig20.toml#u1c0");
    assert_eq!(
        u1c0,
        [
            "host/bus",
            "host/fc1",
            "host/fc1/link",
            "ctrl/unit1A/port",
            "ctrl/unit1A/data",
            "ctrl/unit1A/parity",
            "array/unit1chain0",
            "lun/u1c0"
        ]
    );
    let lun0 = names("systems/bokhari2006/2c-4x8p1.toml#lun0");
    assert_eq!(
        lun0,
        [
            "host/fc0",
            "host/fc0/link",
            "ctrl/ctrlA/port",
            "ctrl/ctrlA/parity",
            "array/raid0",
            "lun/lun0"
        ]
    );
    // A host array's path is its member LUNs' paths side by side.
    let md0 = names("systems/bokhari2006/2c-4x8p1.toml#md0");
    for n in [
        "host/fc1",
        "ctrl/ctrlB/port",
        "array/raid3",
        "lun/lun3",
        "lun/md0",
    ] {
        assert!(md0.contains(&n.to_string()), "{n}: {md0:?}");
    }
    assert!(!md0.contains(&"all".to_string()), "{md0:?}");
    // The drives' device bus is on the path behind its controller.
    let xdd = names("systems/xdd2008/raid5.toml");
    assert!(xdd.contains(&"ctrl/arc1680/backend".to_string()), "{xdd:?}");
}

/// A host array's bounds are in its own terms: a component under some of its member LUNs
/// carries only their share of its data (seed 002's md0 stripes over four LUNs, two behind
/// each FC port), so the lowest is md0's own bound, not one port's, and a read of md0 may
/// pass a port's own figure without passing its bound.
#[test]
fn a_host_arrays_bounds_count_the_share_each_component_carries() {
    let target = system("bokhari2006/2c-4x8p1.toml#md0");
    let b = raidlab_sim::bounds(std::path::Path::new(target.trim_start_matches("sim:"))).unwrap();
    let get = |n: &str| {
        b.iter()
            .find(|c| c.name == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    let (md0, fc0) = (get("lun/md0"), get("host/fc0"));
    assert!(
        fc0.note.contains("carries 50% of md0's data"),
        "{}",
        fc0.note
    );
    assert!(
        (fc0.bound_bytes_s - md0.bound_bytes_s).abs() < 1.0,
        "{fc0:?} {md0:?}"
    );
    assert!(get("array/raid0").note.contains("carries 25%"), "{b:?}");
    let lowest = b
        .iter()
        .map(|c| c.bound_bytes_s)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(lowest, md0.bound_bytes_s);
    let ran = mb_s(&target, &[("rw", "read"), ("bs", "1m"), ("size", "2g")]) * 1e6;
    assert!(ran <= lowest, "md0 read {ran} B/s past its bound {lowest}");
}

/// A controller's device bus is on its LUNs' paths, and bounds them: with the xdd2008
/// controller's bus cut to 300 MB/s, the LUN's bound is the bus's, and a read stays under it.
#[test]
fn a_slow_device_bus_bounds_its_luns() {
    let dir = std::env::temp_dir().join(format!("raidlab-sim-backend-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = repo().join("systems/xdd2008");
    let comp = std::fs::read_to_string(src.join("components.toml")).unwrap();
    assert!(comp.contains("backend_mb_s = 2400"), "the test's premise");
    std::fs::write(
        dir.join("components.toml"),
        comp.replace("backend_mb_s = 2400", "backend_mb_s = 300"),
    )
    .unwrap();
    std::fs::copy(src.join("raid0.toml"), dir.join("raid0.toml")).unwrap();
    let sys = dir.join("raid0.toml");
    let b = raidlab_sim::bounds(&sys).unwrap();
    let lun = b.iter().find(|c| c.kind == "lun").expect("a LUN");
    assert!((lun.bound_bytes_s - 300e6).abs() < 1.0, "{lun:?}");
    assert!(lun.note.contains("backend"), "{lun:?}");
    let text = raidlab_sim::explain(&sys).unwrap();
    assert!(text.contains("bound: 300.0 MB/s read"), "{text}");
    let target = format!("sim:{}", sys.display());
    let ran = mb_s(
        &target,
        &[
            ("rw", "read"),
            ("bs", "1m"),
            ("iodepth", "8"),
            ("size", "2g"),
        ],
    );
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        ran * 1e6 <= lun.bound_bytes_s,
        "read {ran} MB/s past the bus's 300"
    );
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
/// A host array's bound counts what its member LUNs share: seed 002's 2C:4x(8+1) stripes
/// over four LUNs, two behind each 2 Gb FC port, so the ports (212.5 MB/s each) bound md0 at
/// twice a port, not four times. The simulated read at depth reaches that bound and no more.
#[test]
fn a_host_arrays_bound_divides_what_its_member_luns_share() {
    let sys = repo().join("systems/bokhari2006/2c-4x8p1.toml");
    let b = raidlab_sim::bounds(&sys).unwrap();
    let md = b.iter().find(|c| c.name == "lun/md0").expect("lun/md0");
    let fc = b.iter().find(|c| c.name == "host/fc0").expect("host/fc0");
    assert!(
        (md.bound_bytes_s - 2.0 * fc.bound_bytes_s).abs() < 1e3,
        "md0 {md:?}, fc0 {fc:?}"
    );
    let all = b.iter().find(|c| c.name == "all").expect("all");
    assert!(
        (all.bound_bytes_s - md.bound_bytes_s).abs() < 1e3,
        "{all:?}"
    );
    let got = mb_s(
        &system("bokhari2006/2c-4x8p1.toml"),
        &[
            ("rw", "read"),
            ("bs", "1m"),
            ("size", "2g"),
            ("iodepth", "32"),
            ("direct", "1"),
        ],
    ) * 1e6;
    assert!(
        got <= md.bound_bytes_s * 1.01 && got >= md.bound_bytes_s * 0.9,
        "read {got:.0} B/s, md0 bound {md:?}"
    );
}

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

/// A small valid system for the checks below: a controller with a RAID 5 and a single drive,
/// each a hidden LUN, and a host RAID 1 over the two.
const SMALL: &str = "[system]\nname = \"x\"\n[host]\ncpus = 2\n\
[[interface]]\nname = \"fc0\"\nlink_mb_s = 100\n[[switch]]\nname = \"sw\"\n\
[[controller]]\nname = \"c\"\nwrite_mb_s = 50\ncache_mib = 64\n\
[[disk]]\nname = \"d\"\nbase = \"compaq-18g-10k\"\n\
[[array]]\nname = \"a\"\ncontroller = \"c\"\nlevel = \"raid5\"\ndisks = 4\ndisk = \"d\"\n\
[[array]]\nname = \"b\"\ncontroller = \"c\"\nlevel = \"single\"\ndisks = 1\ndisk = \"d\"\n\
[[array]]\nname = \"md\"\nlevel = \"raid1\"\nmembers = [\"la\", \"lb\"]\n\
[[lun]]\nname = \"la\"\narray = \"a\"\npath = [\"fc0\", \"sw\"]\nhidden = true\n\
[[lun]]\nname = \"lb\"\narray = \"b\"\npath = [\"fc0\"]\nhidden = true\n\
[[lun]]\nname = \"m\"\narray = \"md\"\n";

/// `SMALL` with its first `old` replaced by `new`.
fn small_with(old: &str, new: &str) -> String {
    assert!(SMALL.contains(old), "{old}");
    SMALL.replacen(old, new, 1)
}

/// Each (old, new, key, wanted pieces): `SMALL` so changed is refused with one usage line
/// that starts `s.toml:N:` where line N holds `key`, and names the key and what is valid.
fn all_refused(cases: &[(&str, &str, &str, &[&str])]) {
    for &(old, new, key, want) in cases {
        let text = small_with(old, new);
        let e = raidlab_sim::config::parse("s.toml", &text)
            .map(|_| ())
            .expect_err(&format!("{new} is refused"));
        let m = &e.message;
        let line: usize = m
            .strip_prefix("s.toml:")
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{new}: no s.toml:LINE in {m}"));
        assert!(
            e.is_usage() && !m.contains('\n') && m.contains(key),
            "{new}: {m}"
        );
        assert!(
            text.lines().nth(line - 1).is_some_and(|l| l.contains(key)),
            "{new}: line {line} does not hold {key}: {m}"
        );
        for w in want {
            assert!(m.contains(w), "{new}: wanted '{w}' in {m}");
        }
    }
}

#[test]
fn the_small_system_loads() {
    raidlab_sim::config::parse("s.toml", SMALL).unwrap();
}

/// Rates and costs of the host, interfaces, switches and controllers: finite, rates 1 kB/s
/// to 1 TB/s (a rate just above 0 once took a transfer past the end of virtual time), costs
/// 0 to a second; a present 0 where absence means no limit says so.
#[test]
fn rates_and_costs_must_be_finite_and_in_range() {
    const RATE: &str = "valid is 0.001 to 1000000 MB/s (1 kB/s to 1 TB/s)";
    const COST: &str = "valid is 0 to 1000000 µs (1 s)";
    let host = "cpus = 2\n";
    let ifc = "name = \"fc0\"\n";
    let sw = "name = \"sw\"\n";
    let ctl = "name = \"c\"\n";
    all_refused(&[
        (
            host,
            "cpus = 2\nper_io_us = inf\n",
            "per_io_us",
            &["host: per_io_us = inf", COST],
        ),
        (host, "cpus = 2\nper_io_us = 1e300\n", "per_io_us", &[COST]),
        (
            host,
            "cpus = 2\njob_start_ms = -1\n",
            "job_start_ms",
            &["0 to 1000000 ms"],
        ),
        (
            host,
            "cpus = 2\nbus_mb_s = 0\n",
            "bus_mb_s",
            &[RATE, "leave bus_mb_s out for no limit"],
        ),
        (
            host,
            "cpus = 2\nparity_mb_s = nan\n",
            "parity_mb_s",
            &["= NaN", RATE],
        ),
        (
            "link_mb_s = 100",
            "link_mb_s = 0",
            "link_mb_s",
            &["interface 'fc0': link_mb_s = 0", RATE],
        ),
        (
            "link_mb_s = 100",
            "link_mb_s = 1e-300",
            "link_mb_s",
            &["interface 'fc0': link_mb_s = 1e-300", RATE],
        ),
        (
            host,
            "cpus = 2\nbus_mb_s = 0.0009\n",
            "bus_mb_s",
            &["host: bus_mb_s = 0.0009", RATE],
        ),
        (
            ifc,
            "name = \"fc0\"\nread_mb_s = 2e6\n",
            "read_mb_s",
            &[RATE, "out for the link rate"],
        ),
        (
            ifc,
            "name = \"fc0\"\nper_command_us = -3\n",
            "per_command_us",
            &[COST],
        ),
        (
            sw,
            "name = \"sw\"\nbandwidth_mb_s = 0\n",
            "bandwidth_mb_s",
            &["switch 'sw'", RATE, "non-blocking"],
        ),
        (
            sw,
            "name = \"sw\"\nper_command_us = inf\n",
            "per_command_us",
            &[COST],
        ),
        (
            "write_mb_s = 50",
            "write_mb_s = 0",
            "write_mb_s",
            &[
                "controller 'c': write_mb_s = 0",
                RATE,
                "leave write_mb_s out for no limit",
            ],
        ),
        ("write_mb_s = 50", "write_mb_s = -1", "write_mb_s", &[RATE]),
        ("write_mb_s = 50", "write_mb_s = nan", "write_mb_s", &[RATE]),
        (ctl, "name = \"c\"\nport_mb_s = inf\n", "port_mb_s", &[RATE]),
        (
            ctl,
            "name = \"c\"\nbackend_mb_s = 0\n",
            "backend_mb_s",
            &[RATE],
        ),
        (
            ctl,
            "name = \"c\"\nparity_mb_s = -37\n",
            "parity_mb_s",
            &[RATE],
        ),
        (
            ctl,
            "name = \"c\"\nread_command_us = 1e300\n",
            "read_command_us",
            &[COST],
        ),
        (
            ctl,
            "name = \"c\"\nwrite_command_us = -1\n",
            "write_command_us",
            &[COST],
        ),
    ]);
    // A model's value is checked where the component takes it, and its line is the model's.
    let text = small_with(
        "[[controller]]\nname = \"c\"\n",
        "[models.controller.m]\nread_mb_s = 0\n[[controller]]\nname = \"c\"\nmodel = \"m\"\n",
    );
    let e = raidlab_sim::config::parse("s.toml", &text).unwrap_err();
    assert!(
        e.message
            .starts_with("s.toml:11: controller 'c': read_mb_s = 0"),
        "{e}"
    );
}

/// Counts, queue depths and sizes: at least 1 where 0 makes no sense, and small enough that
/// byte counts cannot overflow (KiB sizes at most 1 GiB, cache MiB at most 16 TiB).
#[test]
fn integer_keys_are_range_checked() {
    const KIB: &str = "1048576 KiB (1 GiB)";
    let ctl = "name = \"c\"\n";
    let arr = "name = \"a\"\n";
    all_refused(&[
        (
            "cpus = 2",
            "cpus = 0",
            "cpus",
            &["host: cpus = 0: valid is 1 to 1024 CPUs"],
        ),
        (
            "cpus = 2",
            "cpus = 2\nnr_requests = 0",
            "nr_requests",
            &["valid is 1 to"],
        ),
        (
            "cpus = 2",
            "cpus = 2\nmax_request_kib = 2",
            "max_request_kib",
            &["valid is 4 to", KIB],
        ),
        (
            "cpus = 2",
            "cpus = 2\nmax_request_kib = 18014398509481984",
            "max_request_kib",
            &[KIB],
        ),
        // Past TOML's own integers (64-bit signed): the parser's words, with the key and
        // what TOML takes.
        (
            "cpus = 2",
            "cpus = 2\nread_ahead_kib = 18446744073709551615",
            "read_ahead_kib",
            &[
                "read_ahead_kib: ",
                "TOML integers are at most 9223372036854775807",
            ],
        ),
        (
            "cpus = 2",
            "cpus = 2\nread_ahead_kib = 18014398509481984",
            "read_ahead_kib",
            &[KIB],
        ),
        (
            "cache_mib = 64",
            "cache_mib = 1099511627776",
            "cache_mib",
            &["16777216 MiB"],
        ),
        (
            ctl,
            "name = \"c\"\ndestage_depth = 0\n",
            "destage_depth",
            &["1 to 1024"],
        ),
        (
            ctl,
            "name = \"c\"\ndestage_coalesce = 0\n",
            "destage_coalesce",
            &["1 to 1024"],
        ),
        (
            ctl,
            "name = \"c\"\nwrite_burst_kib = 0\n",
            "write_burst_kib",
            &[KIB, "leave write_burst_kib out"],
        ),
        // Bursts go into a cache: a controller without one has nowhere to hold them.
        (
            "cache_mib = 64\n",
            "write_burst_kib = 64\n",
            "write_burst_kib",
            &[
                "controller 'c': write_burst_kib = 64",
                "no cache (cache_mib)",
                "give cache_mib, or leave write_burst_kib out",
            ],
        ),
        (
            ctl,
            "name = \"c\"\nread_ahead_kib = 18014398509481984\n",
            "read_ahead_kib",
            &[KIB],
        ),
        (
            arr,
            "name = \"a\"\nchunk_kib = 0\n",
            "chunk_kib",
            &["array 'a'", "1 to", KIB],
        ),
        (
            arr,
            "name = \"a\"\nchunk_kib = 9999999999\n",
            "chunk_kib",
            &[KIB],
        ),
        (
            arr,
            "name = \"a\"\nchunk_kib = 1099511627776\n",
            "chunk_kib",
            &[KIB],
        ),
        (
            arr,
            "name = \"a\"\ndisk_queue_depth = 0\n",
            "disk_queue_depth",
            &["1 to 1024"],
        ),
        (
            "disks = 4",
            "disks = 100000",
            "disks",
            &["disks = 100000: valid is 1 to 1024"],
        ),
    ]);
}

/// A drive entry with several values out of range gets a line for each, in one error; a value
/// whose range is set by another value out of range (seek_avg_ms by seek_track_ms) is not
/// judged against that wrong bound.
#[test]
fn a_drive_entry_reports_each_value_out_of_range() {
    let hdd = "base = \"compaq-18g-10k\"\n";
    let text = small_with(
        hdd,
        &format!("{hdd}rpm = 0\nheads = 0\nseek_track_ms = -1\nseek_avg_ms = 0.1\n"),
    );
    let e = raidlab_sim::config::parse("s.toml", &text).unwrap_err();
    assert!(e.is_usage(), "{e}");
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 3, "{e}");
    for (line, key) in lines.iter().zip(["rpm", "heads", "seek_track_ms"]) {
        assert!(line.contains(&format!("{key} = ")), "{key}: {e}");
        let n: usize = line
            .strip_prefix("s.toml:")
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no s.toml:LINE in {line}"));
        assert!(
            text.lines().nth(n - 1).is_some_and(|l| l.contains(key)),
            "{line}"
        );
    }
    assert!(!e.message.contains("seek_avg_ms"), "{e}");
}

/// A drive's values, by kind: an HDD's mechanics and an SSD's rates and latencies; each kind
/// ignores the other's fields (they default to 0), so those are not refused.
#[test]
fn drive_values_are_checked_for_their_kind() {
    let hdd = "base = \"compaq-18g-10k\"\n";
    let ssd = |extra: &str| format!("base = \"nvme-tlc-1tb\"\n{extra}\n");
    let with = |extra: &str| format!("{hdd}{extra}\n");
    let rate = "0.001 to 1000000 MB/s";
    let seeks = "(seek_track_ms ≤ seek_avg_ms ≤ seek_full_ms)";
    let cases: Vec<(String, &str, Vec<&str>)> = vec![
        (
            with("rpm = 0"),
            "rpm",
            vec!["disk 'd': rpm = 0: valid is 1000 to 30000 rpm"],
        ),
        (with("rpm = nan"), "rpm", vec!["1000 to 30000 rpm"]),
        (with("heads = 0"), "heads", vec!["1 to 255"]),
        (with("zones = 0"), "zones", vec!["1 to 65536"]),
        (with("zones = 1000000000"), "zones", vec!["1 to 65536"]),
        (
            with("spt_outer = 0"),
            "spt_outer",
            vec!["1 to 100000 sectors"],
        ),
        (
            with("spt_inner = 0"),
            "spt_inner",
            vec!["at most spt_outer"],
        ),
        (
            with("spt_inner = 500"),
            "spt_inner",
            vec!["1 to 436 sectors (at most spt_outer)"],
        ),
        (
            with("seek_track_ms = -1"),
            "seek_track_ms",
            vec!["0 to 1000 ms"],
        ),
        (
            with("seek_avg_ms = 0.1"),
            "seek_avg_ms",
            vec!["0.6 to 1000 ms", seeks],
        ),
        (
            with("seek_full_ms = 2000"),
            "seek_full_ms",
            vec!["5.2 to 1000 ms", seeks],
        ),
        (
            with("write_settle_ms = inf"),
            "write_settle_ms",
            vec!["0 to 1000 ms"],
        ),
        (
            with("head_switch_ms = -1"),
            "head_switch_ms",
            vec!["0 to 1000 ms"],
        ),
        (
            with("capacity_bytes = 0"),
            "capacity_bytes",
            vec!["1048576 to"],
        ),
        (
            with("capacity_bytes = 1000000000000000\nheads = 1\nspt_outer = 10\nspt_inner = 10"),
            "capacity_bytes",
            vec!["cylinders: valid is at most 4194304"],
        ),
        (with("interface_mb_s = 0"), "interface_mb_s", vec![rate]),
        (
            with("command_us = 1e300"),
            "command_us",
            vec!["0 to 1000000 µs"],
        ),
        (
            with("cache_kib = 4294967295"),
            "cache_kib",
            vec!["1048576 KiB"],
        ),
        (
            with("cache_segments = 33"),
            "cache_segments",
            vec!["disk 'd': cache_segments = 33: valid is 0 to 32 segments (0: reads not cached)"],
        ),
        (ssd("read_mb_s = 0"), "read_mb_s", vec![rate]),
        (ssd("write_mb_s = nan"), "write_mb_s", vec![rate]),
        (ssd("units = 0"), "units", vec!["1 to 4096"]),
        (
            ssd("channels = 64"),
            "channels",
            vec!["1 to 32 (at most units, the dies)"],
        ),
        (ssd("page_kib = 0"), "page_kib", vec!["1 to 1024 KiB"]),
        (
            ssd("slc_cache_gib = -1"),
            "slc_cache_gib",
            vec!["0 to 1048576 GiB (0: none)"],
        ),
        (ssd("max_iops = inf"), "max_iops", vec!["0: no limit"]),
        (ssd("read_us = inf"), "read_us", vec!["0 to 1000000 µs"]),
        (
            ssd("program_us = -1"),
            "program_us",
            vec!["0 to 1000000 µs"],
        ),
        (ssd("zones = 1000000"), "zones", vec!["0 to 65536"]),
        (
            ssd("zones = 65536\nspt_outer = 100000\nspt_inner = 0"),
            "spt_inner",
            vec!["too unequal to index"],
        ),
    ];
    for (new, key, want) in &cases {
        all_refused(&[(hdd, new, key, want)]);
    }
    // The other kind's fields are ignored, not refused.
    for ok in [
        ssd("rpm = 0\nheads = 0\nseek_avg_ms = 0\nspt_inner = 0"),
        with("read_mb_s = 0\nread_us = -5\nunits = 0"),
    ] {
        let text = small_with(hdd, &ok);
        raidlab_sim::config::parse("s.toml", &text).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    // A chunk must fit on a drive.
    let e = raidlab_sim::config::parse(
        "s.toml",
        &small_with(hdd, &with("capacity_bytes = 16777216")).replacen(
            "disks = 4\n",
            "disks = 4\nchunk_kib = 32768\n",
            1,
        ),
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("array 'a': chunk_kib = 32768: valid is 1 to 16384 KiB"),
        "{e}"
    );
    // A stripe must be under 4 GiB (the simulator keeps offsets within one in 32 bits).
    all_refused(&[(
        "disks = 4\n",
        "disks = 4\nchunk_kib = 1048576\n",
        "chunk_kib",
        &[
            "array 'a': chunk_kib = 1048576 over 4 members makes a 4294967296-byte stripe: \
           valid is a stripe (chunk_kib × members) under 4 GiB",
        ],
    )]);
}

/// Configurations that parse but make no sense: each is one line naming the array, disk,
/// model kind or name, and what is valid.
#[test]
fn nonsense_configurations_are_refused() {
    all_refused(&[
        (
            "members = [\"la\", \"lb\"]",
            "members = [\"la\", \"la\"]",
            "members",
            &["array 'md': members lists 'la' twice (valid: each LUN once)"],
        ),
        (
            "name = \"md\"\n",
            "name = \"md\"\ndisks = 4\n",
            "disks",
            &[
                "array 'md': disks does not apply to a host array",
                "members = [",
            ],
        ),
        (
            "name = \"md\"\n",
            "name = \"md\"\ndisk = \"nope\"\n",
            "disk",
            &["disk does not apply to a host array"],
        ),
        (
            "name = \"md\"\n",
            "name = \"md\"\ndisk_queue_depth = 8\n",
            "disk_queue_depth",
            &[
                "array 'md': disk_queue_depth does not apply to a host array",
                "set disk_queue_depth on the arrays of its member LUNs",
            ],
        ),
        (
            "name = \"a\"\n",
            "name = \"a\"\nmembers = [\"lb\"]\n",
            "members",
            &[
                "members does not apply to a controller array",
                "disks = <count>",
            ],
        ),
        (
            "name = \"a\"\n",
            "name = \"a\"\nlayout = \"bogus\"\n",
            "layout",
            &["array 'a': layout = \"bogus\"", "valid: left-symmetric"],
        ),
        (
            "name = \"md\"\n",
            "name = \"md\"\nlayout = \"f2\"\n",
            "layout",
            &["valid: none"],
        ),
        (
            "[[array]]\nname = \"a\"",
            "[[disk]]\nname = \"d\"\nbase = \"samsung-hd501lj\"\n[[array]]\nname = \"a\"",
            "name",
            &["disk 'd' is defined twice"],
        ),
        (
            "[[array]]\nname = \"a\"",
            "[models.disk.x]\nrpm = 1\n[[array]]\nname = \"a\"",
            "models.disk",
            &[
                "no disk models",
                "[models.controller.NAME], [models.interface.NAME], [models.switch.NAME]",
            ],
        ),
        (
            "[[array]]\nname = \"a\"",
            "[models.bogus.x]\n[[array]]\nname = \"a\"",
            "models.bogus",
            &["no bogus models", "[models.switch.NAME]"],
        ),
        (
            "name = \"m\"",
            "name = \"\"",
            "name",
            &["lun name \"\": valid is a name that is not empty and holds no ':' or '#'"],
        ),
        (
            "name = \"m\"",
            "name = \"m:1\"",
            "name",
            &["lun name \"m:1\""],
        ),
        (
            "name = \"m\"",
            "name = \"m#2\"",
            "name",
            &["lun name \"m#2\""],
        ),
        (
            "name = \"sw\"",
            "name = \"\"",
            "name",
            &["switch name \"\": valid is a name that is not empty"],
        ),
        // Named twice, the interface took every byte twice (half the LUN's bound).
        (
            "path = [\"fc0\", \"sw\"]",
            "path = [\"fc0\", \"sw\", \"fc0\"]",
            "path",
            &["lun 'la': path names 'fc0' twice (valid: each interface or switch once)"],
        ),
    ]);
    // The layouts the simulator lays arrays out in are accepted.
    for (old, new) in [
        (
            "name = \"a\"\n",
            "name = \"a\"\nlayout = \"left-symmetric\"\n",
        ),
        ("name = \"a\"\n", "name = \"a\"\nlayout = \"ls\"\n"),
        ("name = \"md\"\n", "name = \"md\"\nlayout = \"none\"\n"),
    ] {
        raidlab_sim::config::parse("s.toml", &small_with(old, new))
            .unwrap_or_else(|e| panic!("{new}: {e}"));
    }
}

/// `explain SYSTEM#LUN` explains that LUN and those it is built on; a LUN the system does not
/// have is a usage error listing the LUNs, as `run` says.
#[test]
fn explain_takes_and_checks_a_lun() {
    let dir = std::env::temp_dir().join(format!("raidlab-explain-lun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    std::fs::write(&p, SMALL).unwrap();
    let with_lun = |l: &str| std::path::PathBuf::from(format!("{}#{l}", p.display()));
    let e = raidlab_sim::explain(&with_lun("nolun")).unwrap_err();
    assert!(
        e.is_usage()
            && e.message.contains("no LUN 'nolun'")
            && e.message.contains("LUNs: la, lb, m"),
        "{e}"
    );
    let e = raidlab_sim::bounds(&with_lun("nolun")).unwrap_err();
    assert!(e.is_usage() && e.message.contains("LUNs: la, lb, m"), "{e}");
    assert!(raidlab_sim::explain(&with_lun("")).unwrap_err().is_usage());
    let all = raidlab_sim::explain(&p).unwrap();
    assert!(
        all.contains("lun m:") && all.contains("all LUNs at once"),
        "{all}"
    );
    let m = raidlab_sim::explain(&with_lun("m")).unwrap();
    assert!(
        m.contains("lun m:") && m.contains("lun la (hidden)") && m.contains("lun lb (hidden)"),
        "{m}"
    );
    assert!(!m.contains("all LUNs at once"), "{m}");
    let lb = raidlab_sim::explain(&with_lun("lb")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        lb.contains("lun lb (hidden)") && !lb.contains("lun m:") && !lb.contains("lun la"),
        "{lb}"
    );
}

/// `explain`'s bound is a ceiling no run passes: a controller array's bound counts every
/// drive, as a mirror's copies serve reads side by side. It counted the data drives' worth
/// (2 of a 4-drive raid10, 250 MB/s), and a sequential read ran at 471 MB/s.
#[test]
fn a_mirrored_controller_array_reads_within_its_bound() {
    let sys = repo().join("systems/iometer2008/raid10-4d.toml");
    let b = raidlab_sim::bounds(&sys).unwrap();
    let lun = b
        .iter()
        .find(|c| c.kind == "lun")
        .expect("a LUN bound")
        .clone();
    let got = mb_s(
        &system("iometer2008/raid10-4d.toml"),
        &[
            ("rw", "read"),
            ("bs", "1m"),
            ("size", "2g"),
            ("iodepth", "16"),
            ("direct", "1"),
        ],
    ) * 1e6;
    assert!(
        got <= lun.outer_bytes_s,
        "ran at {got:.0} B/s, above the bound {lun:?}"
    );
    let text = raidlab_sim::explain(&sys).unwrap();
    assert!(
        text.contains("one sequential stream about") && text.contains("(2 data drives' worth)"),
        "{text}"
    );
}

/// A section without a key it needs names the section and points at it; a missing section
/// says which; a value of the wrong type names its key and, for a key carrying its unit, what
/// is valid. A [[lun]] without `array` was reported at line 2 of the included file (a comment
/// there holding the word), and `chunk_kib = "64k"` as `invalid type` with no key.
#[test]
fn missing_keys_sections_and_wrong_types_say_which() {
    let dir = std::env::temp_dir().join(format!("raidlab-missing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("parts.toml"),
        "# every array here is made of drives\n[system]\nname = \"x\"\n[host]\n\
[[controller]]\nname = \"c\"\n",
    )
    .unwrap();
    let array = "[[array]]\nname = \"a\"\ncontroller = \"c\"\nlevel = \"single\"\ndisks = 1\n\
disk = \"compaq-18g-10k\"\n";
    let load = |text: &str| {
        let p = dir.join("s.toml");
        std::fs::write(&p, format!("include = [\"parts.toml\"]\n{text}")).unwrap();
        let e = raidlab_sim::config::load(&p).unwrap_err();
        assert!(e.is_usage() && !e.message.contains('\n'), "{e}");
        let m = e.message.clone();
        m.replace(&format!("{}/", dir.display()), "")
    };
    // array 7 lines from line 2; the LUN's name on line 9.
    let m = load(&format!("{array}[[lun]]\nname = \"l\"\n"));
    assert!(
        m.starts_with("s.toml:9: lun 'l': missing field `array`"),
        "{m}"
    );
    let m = load("[[lun]]\nname = \"l\"\narray = \"a\"\n");
    assert!(
        m.starts_with("s.toml: no [[array]] section") && m.contains("valid:"),
        "{m}"
    );
    let m = load(&format!(
        "{}[[lun]]\nname = \"l\"\narray = \"a\"\n",
        array.replace("disks = 1\n", "disks = 1\nchunk_kib = \"64k\"\n")
    ));
    assert!(
        m.starts_with("s.toml:7: chunk_kib: invalid type")
            && m.contains("valid: a whole number of KiB"),
        "{m}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A value of the wrong type or sign says what is valid in the field's words, not Rust's
/// `expected u32` alone (`cache_mib = 1.5` was told "a plain number, in MiB"), and a
/// [[disk]] entry's names its key and line (it named only the drive, at its name).
#[test]
fn wrong_types_and_signs_say_what_is_valid() {
    all_refused(&[
        (
            "cpus = 2",
            "cpus = -2",
            "cpus",
            &["(valid: a whole number, not negative)"],
        ),
        (
            "cpus = 2",
            "cpus = 2.5",
            "cpus",
            &["(valid: a whole number)"],
        ),
        (
            "cache_mib = 64",
            "cache_mib = 1.5",
            "cache_mib",
            &["(valid: a whole number of MiB)"],
        ),
        (
            "disks = 4",
            "disks = 5000000000",
            "disks",
            &["(valid: a whole number, at most 4294967295)"],
        ),
        (
            "hidden = true",
            "hidden = 1",
            "hidden",
            &["(valid: true or false)"],
        ),
        (
            "base = \"compaq-18g-10k\"",
            "base = \"compaq-18g-10k\"\ncache_kib = -1",
            "cache_kib",
            &[
                "disk 'd': cache_kib: ",
                "(valid: a whole number of KiB, not negative)",
            ],
        ),
        (
            "base = \"compaq-18g-10k\"",
            "base = \"compaq-18g-10k\"\nwrite_cache = \"no\"",
            "write_cache",
            &["disk 'd': write_cache: ", "(valid: true or false)"],
        ),
    ]);
    // A [[disk]] with neither a base nor every field: what to give.
    let e = raidlab_sim::config::parse(
        "s.toml",
        &small_with("base = \"compaq-18g-10k\"\n", "rpm = 7200\n"),
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("disk 'd': missing field `kind` (valid: base = \"NAME\""),
        "{e}"
    );
}

/// A file with several independent mistakes is refused with every one of them at once: each
/// on its own line, word for word the line it gives alone, in file order. A drive refused is
/// not refused again at the arrays that use it.
#[test]
fn every_independent_error_is_given_at_once() {
    // Each edit keeps the line count, so each error's line is the same alone and together.
    let edits = [
        ("cpus = 2", "cpus = 0"),
        ("link_mb_s = 100", "link_mb_s = 0"),
        ("write_mb_s = 50", "write_mb_s = -1"),
        ("base = \"compaq-18g-10k\"", "base = \"floppy\""),
        ("level = \"raid5\"", "level = \"raid7\""),
        ("disks = 1", "disks = 2"),
        ("members = [\"la\", \"lb\"]", "members = [\"la\", \"la\"]"),
        ("path = [\"fc0\", \"sw\"]", "path = [\"fc0\", \"sx\"]"),
    ];
    let alone: Vec<String> = edits
        .iter()
        .map(|&(old, new)| {
            let e = raidlab_sim::config::parse("s.toml", &small_with(old, new)).unwrap_err();
            assert!(e.is_usage() && !e.message.contains('\n'), "{new}: {e}");
            e.message
        })
        .collect();
    let mut all = SMALL.to_string();
    for (old, new) in edits {
        all = all.replacen(old, new, 1);
    }
    let e = raidlab_sim::config::parse("s.toml", &all).unwrap_err();
    assert!(e.is_usage());
    let got: Vec<&str> = e.lines().collect();
    let line = |m: &str| -> usize { m.split(':').nth(1).unwrap().parse().unwrap() };
    let mut want: Vec<&str> = alone.iter().map(String::as_str).collect();
    want.sort_by_key(|m| line(m));
    assert_eq!(got, want, "{e}");
    assert!(
        !e.message.contains("disk 'd' is not in the catalog"),
        "the drive refused once: {e}"
    );
}

/// Mistakes that leave nothing to check stop there: TOML that does not parse, an include
/// that cannot be read, a model that is not defined (its components lack its keys).
#[test]
fn errors_that_stop_the_checks_are_given_alone() {
    let dir = std::env::temp_dir().join(format!("raidlab-stop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("s.toml");
    // A range error too: not reported past the first two kinds.
    let bad_rate = small_with("cpus = 2", "cpus = 0");
    for (text, want) in [
        (bad_rate.replacen("[host]", "[host", 1), "s.toml:3:"),
        (
            format!("include = [\"nope.toml\"]\n{bad_rate}"),
            "cannot read include",
        ),
        (
            bad_rate
                .replacen("name = \"fc0\"\n", "name = \"fc0\"\nmodel = \"m1\"\n", 1)
                .replacen("name = \"c\"\n", "name = \"c\"\nmodel = \"m2\"\n", 1),
            "model 'm1' is not defined",
        ),
    ] {
        std::fs::write(&p, &text).unwrap();
        let e = raidlab_sim::config::load(&p).unwrap_err();
        assert!(e.is_usage() && e.message.contains(want), "{e}");
        assert!(!e.message.contains("cpus = 0"), "{e}");
    }
    // Models not defined: each, at once.
    let e = raidlab_sim::config::load(&p).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(e.lines().count(), 2, "{e}");
}

/// A TOML syntax error in a system file, or in a file it includes, is said as an experiment's
/// or a limits file's is (`raidlab_lab::experiment::toml_syntax_error`): `file:line:column:
/// not valid TOML: what`, the column in characters, with the key of the line.
#[test]
fn a_syntax_error_says_file_line_and_column_as_experiments_do() {
    // `64 KiB` is not a TOML value: the parser stops at `KiB`, column 21.
    let text = small_with("cpus = 2", "cpus = 2\nread_ahead_kib = 64 KiB");
    let e = raidlab_sim::config::parse("s.toml", &text).unwrap_err();
    assert!(e.is_usage() && !e.message.contains('\n'), "{e}");
    assert!(
        e.message
            .starts_with("s.toml:5:21: not valid TOML: read_ahead_kib: "),
        "{e}"
    );
    // Columns count characters: the é before the mistake is one.
    let text = small_with("name = \"x\"", "name = \"é\" x");
    let e = raidlab_sim::config::parse("s.toml", &text).unwrap_err();
    assert!(
        e.message.starts_with("s.toml:2:12: not valid TOML: "),
        "{e}"
    );
    // In an included file: that file's line and column.
    let dir = std::env::temp_dir().join(format!("raidlab-syntax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("parts.toml"), "# parts\n[host\n").unwrap();
    let p = dir.join("s.toml");
    std::fs::write(&p, format!("include = [\"parts.toml\"]\n{SMALL}")).unwrap();
    let e = raidlab_sim::config::load(&p).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    let want = format!("{}:2:6: not valid TOML: ", dir.join("parts.toml").display());
    assert!(e.message.starts_with(&want), "{e}");
}

/// A system file or include that cannot be read is one line in raidlab's words: the
/// system's error text without Rust's ` (os error N)`.
#[test]
fn an_unreadable_file_says_why_without_the_os_error_number() {
    let dir = std::env::temp_dir().join(format!("raidlab-unreadable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = raidlab_sim::config::load(&dir.join("nope.toml")).unwrap_err();
    assert!(e.is_usage(), "{e}");
    assert!(
        e.message.ends_with("nope.toml': No such file or directory"),
        "{e}"
    );
    let p = dir.join("s.toml");
    std::fs::write(&p, format!("include = [\"gone.toml\"]\n{SMALL}")).unwrap();
    let e = raidlab_sim::config::load(&p).unwrap_err();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        e.message.contains("s.toml:1: cannot read include")
            && e.message.ends_with("gone.toml': No such file or directory"),
        "{e}"
    );
}

/// `bounds` of a system file (or `FILE#LUN`) and one of them by name.
fn bounds_of(path: &std::path::Path) -> Vec<raidlab_sim::ComponentBound> {
    raidlab_sim::bounds(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
fn named<'a>(b: &'a [raidlab_sim::ComponentBound], n: &str) -> &'a raidlab_sim::ComponentBound {
    b.iter()
        .find(|c| c.name == n)
        .unwrap_or_else(|| panic!("{n} in {b:?}"))
}

/// A simulated run's total write rate (bytes/s), its bottleneck and its busiest component.
fn written(target: &str, opts: &[(&str, &str)]) -> (f64, Option<String>, String) {
    let mut o = vec![
        ("rw", "write"),
        ("bs", "1m"),
        ("direct", "1"),
        ("iodepth", "8"),
    ];
    o.extend_from_slice(opts);
    let r = sim_run(target, &o);
    let rate = r.aggregate().summary().write_bw_bytes;
    let x = r.jobs[0].sim.as_ref().expect("simulated extras");
    let busiest = x
        .components
        .iter()
        .max_by(|a, b| a.utilization.total_cmp(&b.utilization))
        .map(|c| c.name.clone())
        .unwrap_or_default();
    (rate, x.bottleneck.clone(), busiest)
}

/// Seed 000's chain (Fig. 14, 11+p behind one HSG80): once the write-back cache is full its
/// writes go no faster than the controller's XOR engine (components.toml: parity_mb_s = 37,
/// MB/s of data), and while the cache has room no faster than the cache side of its data
/// path (write_mb_s = 45). The simulator's long sequential write stays under the first with
/// the XOR engine its busiest component; a short one passes it, under the second, with the
/// data path saturated.
#[test]
fn a_chains_write_bound_is_its_xor_engine_and_while_cached_its_data_path() {
    let sys = repo().join("systems/llnl2000/fig14.toml");
    let b = bounds_of(&sys);
    let (lun, parity, data) = (
        named(&b, "lun/u0c0"),
        named(&b, "ctrl/unit0A/parity"),
        named(&b, "ctrl/unit0A/data"),
    );
    assert!((parity.write_bytes_s - 37e6).abs() < 1.0, "{parity:?}");
    assert!((data.write_bytes_s - 45e6).abs() < 1.0, "{data:?}");
    assert_eq!(lun.write_bytes_s, parity.write_bytes_s, "{lun:?}");
    assert_eq!(lun.write_outer_bytes_s, parity.write_bytes_s, "{lun:?}");
    assert_eq!(lun.write_peak_bytes_s, data.write_bytes_s, "{lun:?}");
    let text = raidlab_sim::explain(&sys).unwrap();
    assert!(
        text.contains(
            "37.0 MB/s write sustained (limited by ctrl/unit0A/parity; 45.0 MB/s while the \
             write-back cache has room, limited by ctrl/unit0A/data)"
        ),
        "{text}"
    );
    let t = system("llnl2000/fig14.toml");
    let (long, _, busiest) = written(&t, &[("size", "2g")]);
    assert!(long <= lun.write_bytes_s, "{long} B/s past {lun:?}");
    assert_eq!(busiest, "ctrl/unit0A/parity");
    let (short, bottleneck, _) = written(&t, &[("size", "64m")]);
    assert!(
        short > lun.write_bytes_s && short <= lun.write_peak_bytes_s,
        "{short} B/s, {lun:?}"
    );
    assert_eq!(bottleneck.as_deref(), Some("ctrl/unit0A/data"));
}

/// The write bounds are the components' own figures: with seed 000's XOR engine at 20 MB/s and
/// the KGPSA adapter writing 25 MB/s, the chain's bound is 20 MB/s (the engine), 25 while the
/// cache has room (the adapter).
#[test]
fn write_bounds_follow_the_components_parameters() {
    let dir = std::env::temp_dir().join(format!("raidlab-write-bound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = repo().join("systems/llnl2000");
    let comp = std::fs::read_to_string(src.join("components.toml")).unwrap();
    for premise in ["parity_mb_s = 37 ", "write_mb_s = 50 "] {
        assert!(comp.contains(premise), "the test's premise: {premise}");
    }
    std::fs::write(
        dir.join("components.toml"),
        comp.replace("parity_mb_s = 37 ", "parity_mb_s = 20 ")
            .replace("write_mb_s = 50 ", "write_mb_s = 25 "),
    )
    .unwrap();
    std::fs::copy(src.join("fig14.toml"), dir.join("fig14.toml")).unwrap();
    let b = bounds_of(&dir.join("fig14.toml"));
    std::fs::remove_dir_all(&dir).ok();
    let lun = named(&b, "lun/u0c0");
    assert!((lun.write_bytes_s - 20e6).abs() < 1.0, "{lun:?}");
    assert!((lun.write_peak_bytes_s - 25e6).abs() < 1.0, "{lun:?}");
    assert!(
        lun.write_note.starts_with("limited by ctrl/unit0A/parity;")
            && lun.write_note.ends_with("limited by host/fc0"),
        "{lun:?}"
    );
}

/// Seed 000 §4–5: a node "seems to be unable to write more than 50MB/s through a single
/// interface no matter how many units it can write to", and two interfaces double it. Three
/// chains behind one interface (Fig. 17) are bounded at 50 MB/s all at once by that
/// interface's adapter, four behind two (Fig. 21) at 100; the simulator writes all LUNs at
/// once at those bounds (within 1%) with the adapters saturated.
#[test]
fn one_interface_bounds_writes_at_50_mb_s_and_two_at_100() {
    for (fig, want, adapters) in [
        ("fig17", 50e6, &["host/fc0"][..]),
        ("fig21", 100e6, &["host/fc0", "host/fc1"][..]),
    ] {
        let b = bounds_of(&repo().join(format!("systems/llnl2000/{fig}.toml")));
        let all = named(&b, "all");
        assert!((all.write_bytes_s - want).abs() < 1.0, "{fig}: {all:?}");
        assert!(
            all.write_note.starts_with("shared host/fc"),
            "{fig}: {all:?}"
        );
        // Each adapter writes 50 MB/s.
        for a in adapters {
            assert!(
                (named(&b, a).write_bytes_s - 50e6).abs() < 1.0,
                "{fig}: {a}"
            );
        }
        let (rate, bottleneck, _) =
            written(&system(&format!("llnl2000/{fig}.toml")), &[("size", "2g")]);
        assert!(
            rate <= all.write_bytes_s && rate >= 0.99 * all.write_bytes_s,
            "{fig}: {rate} B/s, {all:?}"
        );
        let bottleneck = bottleneck.unwrap_or_default();
        assert!(
            adapters.contains(&bottleneck.as_str()),
            "{fig}: {bottleneck}"
        );
    }
}

/// A host RAID 5 of four drives writes three drives' worth: each stripe's parity takes the
/// fourth (a mirror of pairs, two). Written near the drives' end, md0 writes at its inner-zone
/// bound: no more than the few MB the drives' write caches still hold at the end, and no less
/// than 95% of it, the drives the busiest.
#[test]
fn a_host_parity_array_writes_its_data_members_worth() {
    for (file, data_drives) in [("raid5-4d-c64", 3.0), ("raid10-4d-c64", 2.0)] {
        let sys = repo().join(format!("systems/linuxraid2010/{file}.toml"));
        let b = bounds_of(&sys);
        let (md, member) = (named(&b, "lun/md0"), named(&b, "lun/sd0lun"));
        assert!(
            (md.write_bytes_s - data_drives * member.write_bytes_s).abs() < 1.0,
            "{file}: {md:?} {member:?}"
        );
        assert!(
            md.write_note.starts_with("limited by member LUNs"),
            "{md:?}"
        );
        if file.starts_with("raid5") {
            let (rate, _, busiest) = written(
                &system(&format!("linuxraid2010/{file}.toml")),
                &[("size", "1g"), ("offset", "1390g")],
            );
            assert!(
                rate <= 1.05 * md.write_bytes_s && rate >= 0.95 * md.write_bytes_s,
                "{rate} B/s, {md:?}"
            );
            assert!(busiest.ends_with("/disk0"), "{busiest}");
        }
    }
}
