//! Simulate one point and print every component's utilization:
//! `cargo run --release -p raidlab-sim --example point -- SYSTEM.toml rw bs [size] [iodepth]`.
use raidlab_workload::{apply_option, JobSpec};
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let mut s = JobSpec { filenames: vec![format!("sim:{}", a[0])], ..Default::default() };
    apply_option(&mut s, "rw", Some(&a[1])).unwrap();
    apply_option(&mut s, "bs", Some(&a[2])).unwrap();
    apply_option(&mut s, "size", Some(a.get(3).map(String::as_str).unwrap_or("8g"))).unwrap();
    apply_option(&mut s, "iodepth", Some(a.get(4).map(String::as_str).unwrap_or("1"))).unwrap();
    let r = raidlab_sim::run(&[s]).unwrap();
    for j in &r.jobs {
        let x = j.summary();
        println!("{} {:.2} MB/s {:.0} IOPS lat {:.0} us", j.target, x.mb_s, x.iops, x.lat_mean_us);
    }
    let agg = r.aggregate();
    println!("all {:.2} MB/s", agg.summary().mb_s);
    let x = agg.sim.unwrap();
    println!("stop {} vt {:.3}s member ios {}", x.stop_reason, x.virtual_time_ns as f64 / 1e9, x.member_ios);
    for c in x.components {
        if c.utilization > 0.01 {
            println!("  {:<36} {:>5.1}%", c.name, c.utilization * 100.0);
        }
    }
}
