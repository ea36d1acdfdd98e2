//! Seed 000 Figures 11–14: the single-chain systems, simulated with the one calibrated
//! parameter set, against the measured table. The bar: median absolute relative
//! error ≤ 10% over all points, reads and writes.
//!
//! # The 11+p read dip of Figure 14 is not modelled
//! Figure 14 reads 2–64 KiB blocks from the 11+p chain far below the 4+p, 5+p and 8+p chains
//! (8 KiB: 7.1 MB/s against 14.7–16.4), and the model, which has no width-dependent read cost
//! below 512 KiB, overestimates those points by up to +212%. Figure 26 measured the same
//! 11+p chain, the same node, the same `dd` and the same 8 GB totals, and shows no dip:
//! 8 KiB at 8192 MB reads 16.1 MB/s (Figure 14: 7.1), 64 KiB at 6553 MB 42.6 MB/s (22.0),
//! 512 KiB 53.7 (43.0), 1 MiB 52.7 (46.3) — the rates of the narrower chains — while its
//! writes agree with Figure 14's within 7% and its 512 B reads within 8%. A mechanism that
//! depends on the configuration (chain width against the controller's cache segments or
//! read-ahead, the stripe against the request, the two-controller failover mode) would show
//! in both experiments, so what slowed Figure 14's medium reads was not the configuration
//! (the seed leaves the cause open). Those points are kept in the median below, not fitted;
//! `figure_26_sustained_points_of_the_11p_chain` checks the model against the other
//! measurement of the same chain.

mod common;
use common::*;

#[test]
fn figures_11_to_14_median_error_within_ten_percent() {
    let csv = std::fs::read_to_string(reference_dir().join("llnl2000/single-chain.csv"))
        .expect("single-chain.csv");
    let mut errs = Vec::new();
    let mut lines = Vec::new();
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let fig: u32 = f[0].parse().unwrap();
        let bs = (f[7].parse::<f64>().unwrap() * 1024.0) as u64;
        let (rd, wr): (f64, f64) = (f[9].parse().unwrap(), f[10].parse().unwrap());
        let target = system(&format!("llnl2000/fig{fig}.toml"));
        for (rw, want) in [("read", rd), ("write", wr)] {
            let got = mb_s(
                &target,
                &[
                    ("rw", rw),
                    ("bs", &bs.to_string()),
                    ("size", "8g"),
                    ("direct", "1"),
                ],
            );
            let e = (got - want).abs() / want;
            lines.push(format!(
                "fig{fig} {rw:5} bs={bs:>7}: sim {got:6.2} ref {want:5.1} ({:+.0}%)",
                (got - want) / want * 100.0
            ));
            errs.push(e);
        }
    }
    assert_eq!(errs.len(), 88, "4 figures × 11 block sizes × read/write");
    errs.sort_by(f64::total_cmp);
    let median = (errs[43] + errs[44]) / 2.0;
    eprintln!(
        "seed 000 Figures 11-14: median absolute error {:.1}%",
        median * 100.0
    );
    assert!(
        median <= 0.10,
        "median error {:.1}% > 10%:\n{}",
        median * 100.0,
        lines.join("\n")
    );
}

#[test]
fn large_block_reads_stop_near_fifty_and_writes_rise_with_chain_width() {
    // Seed 000 §2: ~50 MB/s per chain for reads regardless of width; writes 18 → 27 MB/s
    // from 4+p to 11+p.
    let w: Vec<f64> = [11, 12, 13, 14]
        .iter()
        .map(|f| {
            mb_s(
                &system(&format!("llnl2000/fig{f}.toml")),
                &[("rw", "write"), ("bs", "1m"), ("size", "8g")],
            )
        })
        .collect();
    assert!(
        w.windows(2).all(|p| p[1] >= p[0] * 0.98),
        "writes should not fall with width: {w:?}"
    );
    assert!(
        w[3] > w[0] * 1.15,
        "11+p should write clearly faster than 4+p: {w:?}"
    );
    let r = mb_s(
        &system("llnl2000/fig12.toml"),
        &[("rw", "read"), ("bs", "1m"), ("size", "8g")],
    );
    assert!((45.0..55.0).contains(&r), "{r}");
}

/// Figure 26's points at totals of 5 GB and more (the seed's sustained rate: "above one or two
/// GB" the rate has converged), reads and writes of the one 11+p chain: each within 15% (the
/// seed puts `dd`'s accuracy at 20% and its precision at 5%). These are the 11+p chain's
/// medium-block reads without Figure 14's dip.
#[test]
fn figure_26_sustained_points_of_the_11p_chain() {
    let csv = std::fs::read_to_string(reference_dir().join("llnl2000/total-size-11p.csv"))
        .expect("total-size-11p.csv");
    let target = system("llnl2000/fig14.toml");
    let (mut n, mut bad) = (0, Vec::new());
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (count, bs): (u64, u64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        let total_mb: f64 = f[2].parse().unwrap();
        if total_mb < 5000.0 {
            continue;
        }
        let (rd, wr): (f64, f64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
        for (rw, want) in [("read", rd), ("write", wr)] {
            let got = mb_s(
                &target,
                &[
                    ("rw", rw),
                    ("bs", &bs.to_string()),
                    ("size", &(count * bs).to_string()),
                    ("direct", "1"),
                ],
            );
            n += 1;
            if (got - want).abs() / want > 0.15 {
                bad.push(format!(
                    "{rw} bs={bs} count={count}: sim {got:.2} ref {want}"
                ));
            }
        }
    }
    assert_eq!(n, 12, "6 block sizes × read/write at ≥ 5 GB");
    assert!(bad.is_empty(), "off by more than 15%:\n{}", bad.join("\n"));
}

/// Figure 26, reads of the 11+p chain at every total from 100 blocks up: the elapsed time
/// `time dd` reported, against the model's, both at the `time` command's 0.1 s resolution (the
/// seed: the smallest tests took about one tick). At 100 blocks of 512 B the host's job start
/// (`job_start_ms`, the intercept of elapsed time against count) is most of the 0.1 s; without
/// it the model finishes in 0.04 s, which `time` shows as 0.0.
///
/// The bar: median error ≤ 10% over the 24 points and at most two beyond 25%. Two points
/// break the pattern of their neighbours and the model does not follow them: 1000 × 64 KiB
/// read 21.8 MB/s, slower than both 100 and 10000 blocks (32.7 and 40.7), and 1000 × 512 B
/// read 1.7 MB/s, faster than the sustained 1.4 (a controller read-cache hit on blocks the
/// previous test read is one explanation; the seed gives none).
///
/// Writes are checked in `figure_26_large_writes_absorbed_then_sustained`.
#[test]
fn figure_26_reads_at_every_total_with_the_job_start_cost() {
    let csv = std::fs::read_to_string(reference_dir().join("llnl2000/total-size-11p.csv"))
        .expect("total-size-11p.csv");
    let target = system("llnl2000/fig14.toml");
    let tick = |t: f64| (t * 10.0).round() / 10.0;
    let (mut errs, mut lines) = (Vec::new(), Vec::new());
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (count, bs): (u64, u64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        let rate: f64 = f[3].parse().unwrap();
        let bytes = (count * bs) as f64;
        let measured = tick(bytes / (rate * 1e6));
        let got = mb_s(
            &target,
            &[
                ("rw", "read"),
                ("bs", &bs.to_string()),
                ("size", &(count * bs).to_string()),
                ("direct", "1"),
            ],
        );
        let predicted = tick(bytes / (got * 1e6));
        let e = (predicted - measured).abs() / measured;
        lines.push(format!(
            "{count:>8} × {bs:>7} B: time {predicted:.1} s, measured {measured:.1} s ({:+.0}%)",
            (predicted - measured) / measured * 100.0
        ));
        errs.push(e);
    }
    assert_eq!(errs.len(), 24);
    let mut sorted = errs.clone();
    sorted.sort_by(f64::total_cmp);
    let median = (sorted[11] + sorted[12]) / 2.0;
    let far = errs.iter().filter(|&&e| e > 0.25).count();
    assert!(
        median <= 0.10 && far <= 2,
        "median {:.1}%, {far} beyond 25%:\n{}",
        median * 100.0,
        lines.join("\n")
    );
}

/// Figure 26, writes of 512 KiB – 2 MiB blocks at every total: the write-back cache absorbs
/// the first hundred-odd MB at the rate the host can deliver (100 × 1 MiB: 40.3 MB/s) before
/// the rate falls to what destaging sustains (10000 × 1 MiB: 28.2 MB/s). Three mechanisms
/// of the HSG80 give it (systems/llnl2000/components.toml): write data reaches the cache in
/// bursts that overlap with the link for large writes, the mirrored cache keeps 128 MB of a
/// controller's own writes, and destaging waits until the cache is ¾ full. Each point within
/// 15%, and the 100-block 1 MiB rate at least 1.3 × the 10000-block one.
///
/// (Small blocks are not in this test: at 512 B – 64 KiB the rate is the host's and the
/// controller's per-command cost at every total, and Figure 26 measured those writes 5–10%
/// faster than Figure 14 did for the same chain: 64 KiB 22.5–23.4 against 21.4 MB/s.)
#[test]
fn figure_26_large_writes_absorbed_then_sustained() {
    let csv = std::fs::read_to_string(reference_dir().join("llnl2000/total-size-11p.csv"))
        .expect("total-size-11p.csv");
    let target = system("llnl2000/fig14.toml");
    let (mut lines, mut bad, mut mib) = (Vec::new(), 0, Vec::new());
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (count, bs): (u64, u64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        if bs < 512 * 1024 {
            continue;
        }
        let want: f64 = f[4].parse().unwrap();
        let got = mb_s(
            &target,
            &[
                ("rw", "write"),
                ("bs", &bs.to_string()),
                ("size", &(count * bs).to_string()),
                ("direct", "1"),
            ],
        );
        if (got - want).abs() / want > 0.15 {
            bad += 1;
        }
        if bs == 1 << 20 {
            mib.push(got);
        }
        lines.push(format!(
            "{count:>6} × {bs:>7} B: sim {got:6.2} ref {want:5.1} ({:+.0}%)",
            (got - want) / want * 100.0
        ));
    }
    assert_eq!(lines.len(), 9);
    assert!(
        bad == 0 && mib[0] >= 1.3 * mib[2],
        "writes off by more than 15% or not absorbed:\n{}",
        lines.join("\n")
    );
}
