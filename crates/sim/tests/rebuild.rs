//! Rebuilds (`rebuild = true` beside `failed = [..]`): the replacement is written stripe by
//! stripe while the jobs run, md paced by its speed limits, a controller by its rebuild
//! rate; below the rebuild's watermark the array is whole again.

mod common;

use common::*;

const MD: (&str, &str) = ("linuxraid2010", "raid5-4d-c64-rebuild.toml");
const CTRL: (&str, &str) = ("xdd2008", "raid5-rebuild.toml");

fn rebuild(r: &raidlab_result::RunResult) -> raidlab_result::RebuildUse {
    let sim = r.jobs[0].sim.as_ref().unwrap();
    assert_eq!(sim.rebuilds.len(), 1, "one rebuilding array");
    sim.rebuilds[0].clone()
}

fn component(r: &raidlab_result::RunResult, name: &str) -> raidlab_result::ComponentUse {
    let sim = r.jobs[0].sim.as_ref().unwrap();
    sim.components
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no component {name}"))
        .clone()
}

/// An almost idle array: one 4 KiB read a second for `secs` seconds.
fn idle(secs: &str) -> [(&'static str, &str); 6] {
    [
        ("rw", "randread"),
        ("bs", "4k"),
        ("rate_iops", "1"),
        ("runtime", secs),
        ("time_based", "1"),
        ("direct", "1"),
    ]
}

// (16 s: md paces a rebuild by windows of seconds, and a reader can wait up to the drives'
// 2 s age limit behind the rebuild's stream, so a few seconds show one window's luck.)
const BUSY: [(&str, &str); 6] = [
    ("rw", "randread"),
    ("bs", "4k"),
    ("iodepth", "16"),
    ("runtime", "16"),
    ("time_based", "1"),
    ("direct", "1"),
];

#[test]
fn an_idle_md_rebuild_runs_near_the_members_media_rate() {
    let t = variant(MD.0, MD.1, &[]);
    let r = sim_run(&t, &idle("8"));
    let rb = rebuild(&r);
    // The replacement's media rate where the rebuild is (its outer zone).
    let media = component(&r, "ctrl/rr2320/sd2/disk0")
        .bound_bytes_s
        .unwrap();
    let rate = rb.bytes_s();
    assert!(
        rate > 0.85 * media && rate <= media,
        "rebuild {rate} B/s, media {media} B/s"
    );
    // Far below md's default speed_limit_max: it does not bind.
    assert!(rate < 200_000.0 * 1024.0);
    assert!(!rb.finished && rb.rebuilt_to_bytes == rb.rebuilt_bytes);
    // The whole-rebuild estimate is the member at that rate.
    let want = rb.member_bytes as f64 / rate * 1e9;
    assert!((rb.full_rebuild_ns as f64 / want - 1.0).abs() < 1e-6);
}

#[test]
fn md_keeps_to_speed_limit_max() {
    // 20000 KiB/s per member, a quarter of what the drives could do. md's speed counts
    // whole seconds since its mark plus one, so over 8 s it lets about 9/8 of the limit go.
    let t = variant(
        MD.0,
        MD.1,
        &[("speed_limit_max = 200000", "speed_limit_max = 20000")],
    );
    let rb = rebuild(&sim_run(&t, &idle("8")));
    let max = 20_000.0 * 1024.0;
    let rate = rb.bytes_s();
    assert!(
        rate > 0.9 * max && rate < 1.2 * max,
        "rebuild {rate} B/s against speed_limit_max {max} B/s"
    );
}

#[test]
fn foreground_io_pushes_an_md_rebuild_toward_speed_limit_min() {
    let t = variant(MD.0, MD.1, &[]);
    let idle_rate = rebuild(&sim_run(&t, &idle("8"))).bytes_s();
    let busy_rate = rebuild(&sim_run(&t, &BUSY)).bytes_s();
    assert!(
        busy_rate < 0.5 * idle_rate,
        "busy {busy_rate} B/s, idle {idle_rate} B/s"
    );
    // md never holds it below speed_limit_min (1000 KiB/s).
    assert!(busy_rate >= 1000.0 * 1024.0, "busy {busy_rate} B/s");
    // A higher minimum holds it up: below it md no longer drains its I/O for the
    // foreground's, and goes as fast as the drives, shared with the readers, let it (which
    // may be under the minimum: md guarantees no speed, it only stops yielding).
    let t = variant(
        MD.0,
        MD.1,
        &[("speed_limit_min = 1000", "speed_limit_min = 40000")],
    );
    let held = rebuild(&sim_run(&t, &BUSY)).bytes_s();
    assert!(
        held > 1.1 * busy_rate,
        "min 40000 KiB/s: {held} B/s, min 1000: {busy_rate} B/s"
    );
}

#[test]
fn an_idle_controller_rebuild_streams_the_replacement_at_its_media_rate() {
    // Seed 001's eight 15K SAS drives with their write caches off: the replacement's
    // sequential writes, queued back to back, must not each wait a turn of the platter.
    let t = variant(CTRL.0, CTRL.1, &[]);
    let r = sim_run(&t, &idle("5"));
    let media = component(&r, "ctrl/arc1680/raid5/disk3")
        .bound_bytes_s
        .unwrap();
    let rate = rebuild(&r).bytes_s();
    assert!(
        rate > 0.7 * media && rate <= media,
        "rebuild {rate} B/s, media {media} B/s"
    );
}

#[test]
fn a_rebuild_costs_the_foreground_and_the_foreground_slows_the_rebuild() {
    let healthy = iops(&system("xdd2008/raid5.toml"), &BUSY);
    let t = variant(CTRL.0, CTRL.1, &[]);
    let r = sim_run(&t, &BUSY);
    let during = r.aggregate().summary().iops;
    assert!(
        during < healthy,
        "IOPS healthy {healthy}, rebuilding {during}"
    );
    let busy_rate = rebuild(&r).bytes_s();
    let idle_rate = rebuild(&sim_run(&t, &idle("5"))).bytes_s();
    assert!(
        busy_rate < 0.5 * idle_rate,
        "busy {busy_rate}, idle {idle_rate}"
    );
    // A higher rebuild rate gives the rebuild more and the host less.
    let t = variant(
        CTRL.0,
        CTRL.1,
        &[("rebuild_rate = 30", "rebuild_rate = 90")],
    );
    let r90 = sim_run(&t, &BUSY);
    assert!(rebuild(&r90).bytes_s() > busy_rate);
    assert!(r90.aggregate().summary().iops < during);
}

#[test]
fn a_controller_rebuild_takes_what_light_host_io_leaves() {
    // 50 random 4 KiB reads a second keep the drives a few percent busy. Each still costs
    // the rebuild's stream on its drive a seek away and back, and the rebuild gives way for
    // the steps they land in; but it owes no pause for the steps they miss, and it streams
    // between its pauses rather than positioning for each step. So it keeps a good part of
    // its idle rate (a step at a time, each followed by its pause, kept under 5%), and
    // several times what it gets under 16 readers.
    let t = variant(CTRL.0, CTRL.1, &[]);
    let idle_rate = rebuild(&sim_run(&t, &idle("5"))).bytes_s();
    let light = sim_run(
        &t,
        &[
            ("rw", "randread"),
            ("bs", "4k"),
            ("iodepth", "4"),
            ("rate_iops", "50"),
            ("runtime", "5"),
            ("time_based", "1"),
            ("direct", "1"),
        ],
    );
    let light_rate = rebuild(&light).bytes_s();
    let busy_rate = rebuild(&sim_run(&t, &BUSY)).bytes_s();
    assert!(
        light_rate > 0.15 * idle_rate && light_rate > 3.0 * busy_rate,
        "light host I/O {light_rate}, idle {idle_rate}, 16 readers {busy_rate} (bytes/s)"
    );
    assert!(
        light_rate < idle_rate,
        "light {light_rate}, idle {idle_rate}"
    );
}

#[test]
fn reads_below_the_watermark_are_not_rebuilt_from_parity() {
    // A sequential read starting 2 s into the rebuild, of the array's first 128 MiB (18 MiB
    // of each member, which the rebuild has passed by then) or of 128 MiB 20 GiB in (which
    // it has not): only the second has the controller's XOR engine rebuild member 3's data.
    let t = variant(CTRL.0, CTRL.1, &[]);
    let foreground_parity = |offset: &str| {
        let r = sim_run(
            &t,
            &[
                ("rw", "read"),
                ("bs", "64k"),
                ("size", "128m"),
                ("offset", offset),
                ("startdelay", "2"),
                ("direct", "1"),
            ],
        );
        let rb = rebuild(&r);
        assert!(rb.rebuilt_to_bytes > 18 << 20, "{rb:?}");
        let engine = component(&r, "ctrl/arc1680/parity");
        // The rebuild's own share: 7 survivors' bytes per byte rebuilt, at the engine's
        // rate, for what it has written and what it may have computed ahead (4 steps).
        let per_byte = 1e9 / engine.bound_bytes_s.unwrap();
        let own = (rb.rebuilt_bytes + 4 * 128 * 1024) as f64 * 7.0 * per_byte;
        engine.busy_ns as f64 - own
    };
    let below = foreground_parity("0");
    let above = foreground_parity("20g");
    // Above: an eighth of 128 MiB lost, each byte from 7 others: about 100 ms of XOR.
    assert!(above > 50e6, "above the watermark: {above} ns of XOR");
    assert!(below < 0.1 * above, "below {below} ns, above {above} ns");
}

#[test]
fn rebuild_runs_repeat_bit_for_bit() {
    for (folder, file) in [MD, CTRL] {
        let t = variant(folder, file, &[]);
        let opts = [
            ("rw", "randrw"),
            ("bs", "16k"),
            ("iodepth", "8"),
            ("runtime", "2"),
            ("time_based", "1"),
        ];
        let a = format!("{:?}", sim_run(&t, &opts));
        let b = format!("{:?}", sim_run(&t, &opts));
        assert!(a == b, "{file}: two runs differ");
    }
}

#[test]
fn bad_rebuild_settings_are_refused_in_one_line_each() {
    /// (folder, file, edits, what the error says)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 8] = [
        (
            "xdd2008",
            "raid5.toml",
            &[("name = \"raid5\"\n", "name = \"raid5\"\nrebuild = true\n")],
            "rebuild = true needs a failed member",
        ),
        (
            "xdd2008",
            "raid0.toml",
            &[("name = \"raid0\"\n", "name = \"raid0\"\nrebuild = true\n")],
            "raid0 has no redundancy",
        ),
        (
            CTRL.0,
            CTRL.1,
            &[("rebuild_rate = 30", "speed_limit_max = 5000")],
            "speed limits apply to host (md) arrays",
        ),
        (
            CTRL.0,
            CTRL.1,
            &[("rebuild_rate = 30", "rebuild_rate = 0")],
            "rebuild_rate = 0: valid is 1 to 100",
        ),
        (
            CTRL.0,
            CTRL.1,
            &[("rebuild = true", "rebuild = false")],
            "rebuild_rate = 30 needs rebuild = true",
        ),
        (
            MD.0,
            MD.1,
            &[("speed_limit_min = 1000", "rebuild_rate = 50")],
            "rebuild_rate = 50: applies to controller arrays",
        ),
        (
            MD.0,
            MD.1,
            &[("speed_limit_min = 1000", "speed_limit_min = 300000")],
            "speed_limit_min = 300000 is above speed_limit_max = 200000",
        ),
        (
            MD.0,
            MD.1,
            &[("speed_limit_max = 200000", "speed_limit_max = 0")],
            "speed_limit_max = 0: valid is 1 to",
        ),
    ];
    for (folder, file, edits, want) in cases {
        let t = variant(folder, file, edits);
        let e = raidlab_sim::run(&[spec(&t, &[("rw", "read"), ("size", "1m")])])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(want) && e.lines().count() == 1 && e.contains(file),
            "{want}: {e}"
        );
    }
}

/// A rebuild that finishes leaves a whole array: once member 3's replacement is written (small
/// drives, so within a few virtual seconds of idle), reads in the next job group rebuild
/// nothing from parity and run as on an array that never failed.
#[test]
fn a_finished_rebuild_leaves_the_array_whole() {
    // (The drive's own table goes last: it would take the array's keys after it.)
    let lun_end = "offset_bytes = 32256";
    let small = [
        ("disk = \"seagate-st973451ss\"", "disk = \"small\""),
        (
            lun_end,
            "offset_bytes = 32256\n\n[[disk]]\nname = \"small\"\nbase = \"seagate-st973451ss\"\ncapacity_bytes = 500000000\n#",
        ),
    ];
    let rebuilding = variant(CTRL.0, CTRL.1, &small);
    let whole = variant(CTRL.0, "raid5.toml", &small);
    let reads = [
        ("rw", "randread"),
        ("bs", "8k"),
        ("iodepth", "16"),
        ("runtime", "4"),
        ("time_based", "1"),
        ("direct", "1"),
    ];
    let run = |target: &str| {
        let wait = spec(target, &idle("15"));
        let mut read = spec(target, &reads);
        read.stonewall = true;
        run_to_the_end(&[wait, read])
    };
    let r = run(&rebuilding);
    let rb = rebuild(&r);
    assert!(
        rb.finished && rb.rebuilt_to_bytes == rb.member_bytes,
        "the rebuild ends within the idle group: {rb:?}"
    );
    let after = &r.jobs[1];
    let parity = after
        .sim
        .as_ref()
        .unwrap()
        .components
        .iter()
        .find(|c| c.name == "ctrl/arc1680/parity")
        .expect("the controller's XOR engine")
        .utilization;
    assert!(
        parity == 0.0,
        "reads after the rebuild used the XOR engine: {parity}"
    );
    let (got, want) = (after.summary().iops, run(&whole).jobs[1].summary().iops);
    assert!(
        (got - want).abs() < 0.05 * want,
        "IOPS after the rebuild {got}, on an array that never failed {want}"
    );
}
