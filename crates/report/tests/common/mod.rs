//! Synthetic campaigns shaped like the seed studies, for the report's tests.
#![allow(dead_code)]

use raidlab_report::{ConvergenceStep, RunRow};

pub fn row(
    campaign: &str,
    source: &str,
    target: &str,
    point: u64,
    rep: u32,
    params: &[(&str, String)],
    metrics: &[(&str, f64)],
) -> RunRow {
    RunRow {
        campaign: campaign.into(),
        experiment: format!("{campaign}-experiment"),
        point,
        rep,
        source: source.into(),
        target: target.into(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

/// Seed 000: one chain, bs 512 B … 2 MiB, read and write, 3 repetitions, measured, with a
/// simulated prediction of the same points.
pub fn bs_sweep() -> Vec<RunRow> {
    let mut rows = Vec::new();
    let mut point = 0;
    for rw in ["read", "write"] {
        for e in 9..=21u32 {
            let bs = 1u64 << e;
            // Constant time per I/O up to a plateau, as seed 000 found.
            let plateau = if rw == "read" { 50.0 } else { 20.0 };
            let rate = (bs as f64 / 512.0 * 1.5).min(plateau);
            for rep in 0..3 {
                let jitter = 1.0 + (rep as f64 - 1.0) * 0.02;
                rows.push(row(
                    "chain",
                    "measured",
                    "/dev/sdb",
                    point,
                    rep,
                    &[("bs", bs.to_string()), ("rw", rw.to_string())],
                    &[
                        ("mb_s", rate * jitter),
                        ("iops", rate * jitter * 1e6 / bs as f64),
                    ],
                ));
            }
            rows.push(row(
                "chain",
                "simulated",
                "sim:systems/chain.toml",
                point,
                0,
                &[("bs", bs.to_string()), ("rw", rw.to_string())],
                &[("mb_s", rate * 1.1), ("iops", rate * 1.1e6 / bs as f64)],
            ));
            point += 1;
        }
    }
    rows
}

/// Seed 004: read % × queue depth at 8 KiB random.
pub fn mix_grid() -> Vec<RunRow> {
    let mut rows = Vec::new();
    let mut point = 0;
    for qd in [1u32, 16, 256] {
        for read in (0..=100).step_by(25) {
            let iops = 150.0 * (qd as f64).sqrt() * (1.0 + read as f64 / 100.0);
            let lat = qd as f64 / iops * 1e6;
            rows.push(row(
                "database",
                "measured",
                "array:a,b,c,d",
                point,
                0,
                &[
                    ("bs", "8k".into()),
                    ("rw", "randrw".into()),
                    ("rwmixread", read.to_string()),
                    ("iodepth", qd.to_string()),
                ],
                &[
                    ("iops", iops),
                    ("mb_s", iops * 8192.0 / 1e6),
                    ("lat_mean_us", lat),
                    ("lat_p99_us", lat * 3.0),
                ],
            ));
            point += 1;
        }
    }
    rows
}

/// Seed 003: level × chunk, 5 runs each.
pub fn level_chunk() -> Vec<RunRow> {
    let mut rows = Vec::new();
    let mut point = 0;
    for level in ["raid0", "raid10", "raid5", "raid6"] {
        for chunk in ["4k", "64k", "256k", "1024k"] {
            let base = match level {
                "raid0" => 300.0,
                "raid10" => 200.0,
                "raid5" => 180.0,
                _ => 160.0,
            };
            for rep in 0..5 {
                rows.push(row(
                    "chunks",
                    "measured",
                    "array:m0,m1,m2,m3",
                    point,
                    rep,
                    &[
                        ("level", level.into()),
                        ("chunk", chunk.into()),
                        ("rw", "read".into()),
                        ("bs", "1m".into()),
                    ],
                    &[("mb_s", base + rep as f64)],
                ));
            }
            point += 1;
        }
    }
    rows
}

/// Seed 002 Figure 12: threads × buffer.
pub fn threads_buffer() -> Vec<RunRow> {
    let mut rows = Vec::new();
    let mut point = 0;
    for threads in [1u32, 2, 4, 8, 16] {
        for buf in ["64k", "256k", "1m", "4m", "16m"] {
            let rate = 100.0 + 30.0 * (threads as f64).log2() + buf.len() as f64;
            rows.push(row(
                "osc-full",
                "measured",
                "/mnt/fastt",
                point,
                0,
                &[
                    ("numjobs", threads.to_string()),
                    ("bs", buf.into()),
                    ("rw", "read".into()),
                ],
                &[("mb_s", rate)],
            ));
            point += 1;
        }
    }
    rows
}

/// Seed 000 Figure 26: rate against total transferred.
pub fn convergence() -> Vec<ConvergenceStep> {
    (0..6)
        .map(|i| ConvergenceStep {
            campaign: "chain".into(),
            point: 12,
            step: i,
            total_bytes: (8 * 1024 * 1024) << (2 * i),
            mb_s: 40.0 + 12.0 / (i as f64 + 1.0),
        })
        .collect()
}

pub fn all_rows() -> Vec<RunRow> {
    let mut rows = bs_sweep();
    rows.extend(mix_grid());
    rows.extend(level_chunk());
    rows.extend(threads_buffer());
    rows
}
