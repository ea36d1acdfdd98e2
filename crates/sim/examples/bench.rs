//! The simulator's speed: `cargo run --release -p raidlab-sim --example bench
//! [random|llnl|levels|paths]` from the repository root (one core; prints member I/Os per
//! second and the seed-000 sweep's time). Without an argument `random` and `llnl` run;
//! `levels` runs seed 001's four arrays × random reads and writes, `paths` the pool, md and
//! page-cache paths of seeds 002–004 (`raidlab_sim::bench::PATHS`). `bench golden` prints
//! every system's full results instead, to check that a speed change left them bit for bit
//! the same.
fn main() {
    let which: Vec<String> = std::env::args().skip(1).collect();
    let want = |k: &str| {
        which.is_empty() && (k == "random" || k == "llnl") || which.iter().any(|w| w == k)
    };
    let t0 = std::time::Instant::now();
    let clock = move || t0.elapsed().as_secs_f64();
    let dir = std::path::Path::new("systems");
    let mut cases = Vec::new();
    for (name, _) in raidlab_sim::bench::CASE_FOLDERS {
        if want(name) {
            let run = raidlab_sim::bench::run_named(name, dir, &clock).expect("a case");
            cases.extend(run.expect("benchmark systems"));
        }
    }
    if want("golden") {
        golden(dir);
    }
    for r in cases {
        println!(
            "{}: {} points, {} member I/Os in {:.2} s = {:.0} member I/Os/s \
             ({} host commands, {} events = {:.0} events/s)",
            r.name,
            r.points,
            r.member_ios,
            r.seconds,
            r.member_ios_per_s(),
            r.host_ios,
            r.events,
            r.events_per_s()
        );
    }
}

/// `bench golden`: every system file × a few workloads, each run's full result printed (Debug
/// form, every field and histogram bucket), so a change meant to be speed-only can be checked
/// to leave every result bit for bit the same (diff two outputs).
fn golden(dir: &std::path::Path) {
    use raidlab_workload::{apply_option, JobSpec};
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .expect("systems/")
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "toml")
                && p.file_name().is_none_or(|n| n != "components.toml")
        })
        .collect();
    files.sort();
    let loads: [&[(&str, &str)]; 6] = [
        &[("rw", "read"), ("bs", "64k"), ("size", "256m")],
        &[("rw", "write"), ("bs", "512k"), ("size", "1g")],
        &[
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "64m"),
            ("numjobs", "2"),
        ],
        &[
            ("rw", "randread"),
            ("bs", "8k"),
            ("iodepth", "32"),
            ("runtime", "2s"),
            ("time_based", "1"),
        ],
        &[
            ("rw", "randwrite"),
            ("bs", "8k"),
            ("iodepth", "32"),
            ("runtime", "2s"),
            ("time_based", "1"),
        ],
        &[
            ("rw", "randrw"),
            ("bs", "16k"),
            ("iodepth", "128"),
            ("runtime", "1s"),
            ("time_based", "1"),
            ("size", "2g"),
        ],
    ];
    for f in &files {
        for (k, l) in loads.iter().enumerate() {
            let mut s = JobSpec {
                filenames: vec![format!("sim:{}", f.display())],
                ..Default::default()
            };
            for (o, v) in l.iter() {
                apply_option(&mut s, o, Some(v)).expect("valid option");
            }
            match raidlab_sim::run(&[s]) {
                Ok(r) => println!("{} load{k}: {:?}", f.display(), r),
                Err(e) => println!("{} load{k}: error {e:?}", f.display()),
            }
        }
    }
}
