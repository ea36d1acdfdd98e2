//! Seed 000 Figures 11–14: the single-chain systems, simulated with the one calibrated
//! parameter set, against the measured table. The bar: median absolute relative
//! error ≤ 10% over all points, reads and writes.

mod common;
use common::*;

#[test]
fn figures_11_to_14_median_error_within_ten_percent() {
    let csv = std::fs::read_to_string(reference_dir().join("llnl2000/single-chain.csv")).expect("single-chain.csv");
    let mut errs = Vec::new();
    let mut lines = Vec::new();
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let fig: u32 = f[0].parse().unwrap();
        let bs = (f[7].parse::<f64>().unwrap() * 1024.0) as u64;
        let (rd, wr): (f64, f64) = (f[9].parse().unwrap(), f[10].parse().unwrap());
        let target = system(&format!("llnl2000/fig{fig}.toml"));
        for (rw, want) in [("read", rd), ("write", wr)] {
            let got = mb_s(&target, &[("rw", rw), ("bs", &bs.to_string()), ("size", "8g"), ("direct", "1")]);
            let e = (got - want).abs() / want;
            lines.push(format!("fig{fig} {rw:5} bs={bs:>7}: sim {got:6.2} ref {want:5.1} ({:+.0}%)", (got - want) / want * 100.0));
            errs.push(e);
        }
    }
    assert_eq!(errs.len(), 88, "4 figures × 11 block sizes × read/write");
    errs.sort_by(f64::total_cmp);
    let median = (errs[43] + errs[44]) / 2.0;
    assert!(median <= 0.10, "median error {:.1}% > 10%:\n{}", median * 100.0, lines.join("\n"));
}

#[test]
fn large_block_reads_stop_near_fifty_and_writes_rise_with_chain_width() {
    // Seed 000 §2: ~50 MB/s per chain for reads regardless of width; writes 18 → 27 MB/s
    // from 4+p to 11+p.
    let w: Vec<f64> = [11, 12, 13, 14]
        .iter()
        .map(|f| mb_s(&system(&format!("llnl2000/fig{f}.toml")), &[("rw", "write"), ("bs", "1m"), ("size", "8g")]))
        .collect();
    assert!(w.windows(2).all(|p| p[1] >= p[0] * 0.98), "writes should not fall with width: {w:?}");
    assert!(w[3] > w[0] * 1.15, "11+p should write clearly faster than 4+p: {w:?}");
    let r = mb_s(&system("llnl2000/fig12.toml"), &[("rw", "read"), ("bs", "1m"), ("size", "8g")]);
    assert!((45.0..55.0).contains(&r), "{r}");
}
