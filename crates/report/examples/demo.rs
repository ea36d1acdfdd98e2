//! Write a report from synthetic campaigns shaped like the seed studies, to look at:
//! `cargo run -p raidlab-report --example demo -- /tmp/demo-report`
#[path = "../tests/common/mod.rs"]
mod common;

use raidlab_report::{write_report, ComponentLimit, LimitsInput};

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "demo-report".into());
    let limits = vec![LimitsInput {
        campaign: Some("osc-full".into()),
        target: None,
        whole_target: false,
        origin: "declared in the demo".into(),
        components: vec![
            ComponentLimit {
                name: "disks".into(),
                kind: "disk".into(),
                bound_bytes_s: 1242e6,
                note: "36 × 34.5 MB/s inner-track rate".into(),
                write_bound_bytes_s: None,
            },
            ComponentLimit {
                name: "FC links".into(),
                kind: "link".into(),
                bound_bytes_s: 425e6,
                note: "2 × 212.5 MB/s".into(),
                write_bound_bytes_s: None,
            },
        ],
    }];
    match write_report(
        &common::all_rows(),
        &common::convergence(),
        &limits,
        std::path::Path::new(&out),
    ) {
        Ok(f) => println!("{}", f.index.display()),
        Err(e) => {
            eprintln!("demo: {e}");
            std::process::exit(1);
        }
    }
}
