//! How many plans per second the planner makes (to judge whether planning limits an array's
//! IOPS): `cargo run --release -p raidlab-geometry --example plan_rate`.

use raidlab_geometry::{plan, Geometry, IoKind, Layout, Level};
use std::time::Instant;

fn rate(name: &str, g: &Geometry, kind: IoKind, len: u64, failed: &[u32]) {
    let n = 200_000u64;
    let span = g.capacity() - len;
    let t = Instant::now();
    let mut steps = 0;
    for i in 0..n {
        let off = (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % span) / 4096 * 4096;
        steps += plan(g, kind, off, len, failed).unwrap().steps.len();
    }
    let s = t.elapsed().as_secs_f64();
    println!("{name:<40} {:>10.0} plans/s ({steps} steps)", n as f64 / s);
}

fn main() {
    let r5 = Geometry::new(Level::Raid5, Layout::None, 64 << 10, 9, 1 << 30).unwrap();
    let r6 = Geometry::new(Level::Raid6, Layout::None, 64 << 10, 10, 1 << 30).unwrap();
    let r10 = Geometry::new(Level::Raid10, Layout::None, 64 << 10, 4, 1 << 30).unwrap();
    rate(
        "raid5 8+1 4 KiB random write",
        &r5,
        IoKind::Write,
        4096,
        &[],
    );
    rate("raid5 8+1 4 KiB random read", &r5, IoKind::Read, 4096, &[]);
    rate(
        "raid5 8+1 4 KiB degraded read",
        &r5,
        IoKind::Read,
        4096,
        &[3],
    );
    rate("raid5 8+1 1 MiB write", &r5, IoKind::Write, 1 << 20, &[]);
    rate(
        "raid6 8+2 4 KiB random write",
        &r6,
        IoKind::Write,
        4096,
        &[],
    );
    rate("raid10 n2 4 KiB random read", &r10, IoKind::Read, 4096, &[]);
}
