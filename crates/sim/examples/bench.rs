//! The simulator's speed: `cargo run --release -p raidlab-sim --example bench` from the
//! repository root (one core; prints member I/Os per second and the seed-000 sweep's time).
fn main() {
    let t0 = std::time::Instant::now();
    let clock = move || t0.elapsed().as_secs_f64();
    let dir = std::path::Path::new("systems");
    for r in [
        raidlab_sim::bench::random_raid5(dir, &clock),
        raidlab_sim::bench::llnl2000(dir, &clock),
    ] {
        let r = r.expect("benchmark systems");
        println!(
            "{}: {} points, {} member I/Os in {:.2} s = {:.0} member I/Os/s",
            r.name,
            r.points,
            r.member_ios,
            r.seconds,
            r.member_ios_per_s()
        );
    }
}
