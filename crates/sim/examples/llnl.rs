//! Print the simulator's predictions for seed 000's systems next to the reference (where
//! published): `cargo run --release -p raidlab-sim --example llnl -- [fig11 fig14 ... fig26]`.
//! `fig26` is rate against the total transferred for the 11+p chain (Figure 26), with the
//! elapsed time `time dd` would print (0.1 s resolution). Run from the repository root.

use raidlab_workload::{apply_option, JobSpec};
use std::collections::BTreeMap;

const BS: [u64; 11] = [
    512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 524288, 1048576, 2097152,
];

fn reference() -> BTreeMap<(u32, u64), (f64, f64)> {
    let mut m = BTreeMap::new();
    let p = reference_dir();
    if let Ok(t) = std::fs::read_to_string(format!("{p}/llnl2000/single-chain.csv")) {
        for l in t.lines().skip(1) {
            let f: Vec<&str> = l.split(',').collect();
            let bs = (f[7].parse::<f64>().unwrap() * 1024.0) as u64;
            m.insert(
                (f[0].parse().unwrap(), bs),
                (f[9].parse().unwrap(), f[10].parse().unwrap()),
            );
        }
    }
    m
}

fn reference_dir() -> String {
    std::env::var("RAIDLAB_REFERENCE").unwrap_or_else(|_| "/work/shared/reference".into())
}

fn simulate(fig: &str, rw: &str, bs: u64, size: u64) -> raidlab_result::JobResult {
    let mut s = JobSpec {
        filenames: vec![format!("sim:systems/llnl2000/{fig}.toml")],
        ..Default::default()
    };
    apply_option(&mut s, "rw", Some(rw)).unwrap();
    apply_option(&mut s, "bs", Some(&bs.to_string())).unwrap();
    apply_option(&mut s, "size", Some(&size.to_string())).unwrap();
    apply_option(&mut s, "direct", Some("1")).unwrap();
    raidlab_sim::run(&[s]).unwrap().aggregate()
}

/// Figure 26: the 11+p chain (the system of Figure 14) at every measured count × block size.
fn fig26() {
    let p = format!("{}/llnl2000/total-size-11p.csv", reference_dir());
    let Ok(t) = std::fs::read_to_string(&p) else {
        eprintln!("{p}: not found (set RAIDLAB_REFERENCE)");
        return;
    };
    println!(
        "fig26:    count       bs   read MB/s (sim ref)  time s (sim ref)   write MB/s (sim ref)"
    );
    for l in t.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (count, bs): (u64, u64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        let bytes = (count * bs) as f64;
        let tick = |mb_s: f64| (bytes / (mb_s * 1e6) * 10.0).round() / 10.0;
        let mut row = format!("{count:>14} {bs:>8}");
        for (rw, col) in [("read", 3), ("write", 4)] {
            let got = simulate("fig14", rw, bs, count * bs).summary().mb_s;
            let want: f64 = f[col].parse().unwrap();
            row += &format!(
                "   {got:>7.2} {want:>5.1} {:>+4.0}%",
                (got - want) / want * 100.0
            );
            if rw == "read" {
                row += &format!("  {:>7.1} {:>7.1}", tick(got), tick(want));
            }
        }
        println!("{row}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "fig26") {
        fig26();
    }
    let args: Vec<String> = args.into_iter().filter(|a| a != "fig26").collect();
    if args.is_empty() && std::env::args().any(|a| a == "fig26") {
        return;
    }
    let figs: Vec<String> = if args.is_empty() {
        (11..=25).map(|f| format!("fig{f}")).collect()
    } else {
        args
    };
    let r = reference();
    let mut errs = Vec::new();
    let t0 = std::time::Instant::now();
    for fig in &figs {
        let n: u32 = fig.trim_start_matches("fig").parse().unwrap();
        println!("{fig}:   bs      read(sim ref)      write(sim ref)   stop");
        for bs in BS {
            let mut row = format!("{:>9}", bs);
            let mut stops = String::new();
            for rw in ["read", "write"] {
                let agg = simulate(fig, rw, bs, 8 << 30);
                let mb = agg.summary().mb_s;
                let rf = r
                    .get(&(n, bs))
                    .map(|x| if rw == "read" { x.0 } else { x.1 });
                match rf {
                    Some(v) => {
                        errs.push((mb - v).abs() / v);
                        row +=
                            &format!("   {:>7.2} {:>6.1} {:>+4.0}%", mb, v, (mb - v) / v * 100.0);
                    }
                    None => row += &format!("   {:>7.2}              ", mb),
                }
                let x = agg.sim.unwrap();
                stops += &format!(
                    " {}:{}",
                    &x.stop_reason[..4],
                    x.bottleneck.unwrap_or_default()
                );
            }
            println!("{row}  {stops}");
        }
    }
    if !errs.is_empty() {
        errs.sort_by(f64::total_cmp);
        println!(
            "median abs rel error {:.1}% over {} points; max {:.1}%",
            errs[errs.len() / 2] * 100.0,
            errs.len(),
            errs.last().unwrap() * 100.0
        );
    }
    eprintln!("{:.2} s", t0.elapsed().as_secs_f64());
}
