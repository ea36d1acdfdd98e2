//! A minimal front end to the engine for benchmarks and manual checks:
//! `rlrun --name=x --rw=randread --bs=4k ... [--force]`, fio-style options; prints one line per
//! job (IOPS, bandwidth in decimal MB/s, ios, usr/sys CPU) and exits 1 if a job failed.

use raidlab_engine::{resolve_path, run, RunOptions};
use raidlab_workload::{apply_option, JobSpec};

fn main() {
    let mut spec = JobSpec::default();
    let mut opts = RunOptions::default();
    for a in std::env::args().skip(1) {
        let a = a.trim_start_matches("--");
        if a == "force" {
            opts.force = true;
            continue;
        }
        if a == "progress" {
            opts.progress = true;
            continue;
        }
        let (k, v) = match a.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (a, None),
        };
        if let Err(e) = apply_option(&mut spec, k, v) {
            eprintln!("rlrun: {e}");
            std::process::exit(2);
        }
    }
    match run(std::slice::from_ref(&spec), &mut resolve_path, &opts) {
        Ok(r) => {
            let mut failed = false;
            for j in &r.jobs {
                let s = j.summary();
                println!(
                    "{} {} {}: iops={:.0} bw={:.1}MB/s ios={} bytes={} usr={:.1}% sys={:.1}% lat_mean={:.1}us{}{}",
                    j.name,
                    j.engine,
                    j.target,
                    s.iops,
                    s.mb_s,
                    s.ios,
                    s.io_bytes,
                    s.usr_cpu,
                    s.sys_cpu,
                    s.lat_mean_us,
                    j.verify.as_ref().map(|v| format!(" verified={} mismatches={}", v.blocks_checked, v.mismatches)).unwrap_or_default(),
                    j.error.as_ref().map(|e| format!(" error: {e}")).unwrap_or_default(),
                );
                failed |= j.error.is_some();
            }
            std::process::exit(if failed { 1 } else { 0 });
        }
        Err(e) => {
            eprintln!("rlrun: {e}");
            std::process::exit(if e.is_usage() { 2 } else { 1 });
        }
    }
}
