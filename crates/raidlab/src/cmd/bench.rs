//! `raidlab bench`: micro-benchmarks of raidlab's own kernels.
//!
//! - `bench parity`: GB/s of data for P-only (XOR), P+Q generation and two-data-block
//!   recovery, per parity kernel this CPU runs — in the spirit of the kernel's RAID-6 boot
//!   benchmark ("raid6: avx2x4 gen() … MB/s").
//! - `bench sim`: the simulator's own benchmark lives in `raidlab_sim::bench` and is wired in
//!   the section marked "bench sim" below.

use crate::error::CliError;
use raidlab_parity::{Block, Kernel};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: BenchWhat,
}

#[derive(clap::Subcommand)]
enum BenchWhat {
    /// GB/s (decimal) of data through each parity kernel: XOR (P), P+Q generation, and
    /// recovery of two data blocks, on one thread.
    Parity(ParityArgs),
    /// The simulator's own speed on one core: member I/Os simulated per second for random
    /// I/O on a RAID 5, and the wall time of every seed-000 configuration (15 systems × 11
    /// block sizes × read and write); `--case levels` adds seed 001's four arrays × random
    /// reads and writes, `--case paths` the pool, md and page-cache paths of seeds 002–004.
    Sim(SimBenchArgs),
}

#[derive(clap::Args)]
struct SimBenchArgs {
    /// Folder holding the simulated systems (llnl2000/ and the others).
    #[arg(long, default_value = "systems")]
    systems: std::path::PathBuf,
    /// text or json.
    #[arg(long, default_value = "text")]
    output_format: String,
    /// Which cases to run, in this order (repeat or comma-separate): random (seed 001's
    /// RAID 5, 8 KiB random reads and writes, 128 in flight), llnl (every seed-000
    /// configuration), levels (seed 001's RAID 0, 10, 5 and 6 × random reads and writes),
    /// paths (seed 002's 16-node pool, random reads; seed 003's md RAID 6, random writes
    /// direct and buffered; seed 004's RAID 5, random mixed; 32 in flight; then seed 003's
    /// buffered 1 MiB dd, writing and reading).
    #[arg(long, value_delimiter = ',', default_values_t = ["random".to_string(), "llnl".to_string()])]
    case: Vec<String>,
}

#[derive(clap::Args)]
struct ParityArgs {
    /// Data blocks per stripe (2..=255; P+Q takes at most 255).
    #[arg(long, default_value_t = 8)]
    data_disks: u32,
    /// Chunk (block) size, fio-style suffixes: 4k, 64k, 1m (k = 1024).
    #[arg(long, default_value = "64k")]
    chunk: String,
    /// Time spent on each measurement (kernel × operation): seconds, or with a unit (500ms).
    #[arg(long, default_value = "0.5", allow_hyphen_values = true)]
    seconds: String,
    /// Measure only this kernel (scalar, avx2, avx512bw, gfni-avx2, gfni-avx512).
    #[arg(long)]
    kernel: Option<String>,
    /// text (a table) or json.
    #[arg(long, default_value = "text")]
    output_format: String,
}

pub fn main(args: BenchArgs) -> Result<(), CliError> {
    match args.what {
        BenchWhat::Parity(a) => parity(a),
        BenchWhat::Sim(a) => sim(a),
    }
}

/// One kernel's rates, GB/s of data (10^9 bytes of data blocks per second).
#[derive(serde::Serialize)]
struct KernelRates {
    kernel: &'static str,
    xor_gb_s: f64,
    pq_gb_s: f64,
    recover2_gb_s: f64,
}

#[derive(serde::Serialize)]
struct ParityReport {
    units: &'static str,
    data_disks: u32,
    chunk_bytes: u64,
    seconds_per_measurement: f64,
    rounds_per_measurement: u32,
    /// The kernel raidlab uses on this CPU, and its rates (also repeated in `kernels`).
    kernel: &'static str,
    xor_gb_s: f64,
    pq_gb_s: f64,
    recover2_gb_s: f64,
    /// A call's data and parity bytes above which parity is written with streaming stores
    /// (`raidlab_parity::stream_above`); absent without SIMD kernels.
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_above_bytes: Option<u64>,
    kernels: Vec<KernelRates>,
}

/// Each measurement is split into rounds of about this long; the best round is reported,
/// because on a shared machine it is the one least disturbed by other work.
const ROUND: Duration = Duration::from_millis(2);

fn rounds(per: Duration) -> u32 {
    ((per.as_nanos() / ROUND.as_nanos()) as u32).max(1)
}

fn parity(a: ParityArgs) -> Result<(), CliError> {
    if !(2..=255).contains(&a.data_disks) {
        return Err(CliError::usage(format!(
            "bench parity: --data-disks {} out of range (valid: 2..=255)",
            a.data_disks
        )));
    }
    let chunk = raidlab_workload::size::parse_size(&a.chunk)
        .map_err(|e| CliError::usage(format!("bench parity: --chunk: {e}")))?;
    let n = a.data_disks as usize;
    if chunk == 0 || chunk > 64 << 20 {
        return Err(CliError::usage(format!(
            "bench parity: --chunk {} out of range (valid: 1 byte to 64m)",
            a.chunk
        )));
    }
    // The stripe's data blocks, P and Q, and two saved blocks for the recovery check.
    let need = (n as u64 + 4).saturating_mul(chunk);
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let half_ram = (pages.max(0) as u64).saturating_mul(page.max(0) as u64) / 2;
    if half_ram > 0 && need > half_ram {
        return Err(CliError::usage(format!(
            "bench parity: {} data disks of {} need {} MiB of buffers, more than half of this machine's memory ({} MiB; valid: a smaller --chunk or fewer --data-disks)",
            a.data_disks,
            a.chunk,
            need >> 20,
            half_ram >> 20
        )));
    }
    let ns = raidlab_workload::size::parse_duration_ns(&a.seconds)
        .map_err(|e| CliError::usage(format!("bench parity: --seconds: {e}")))?;
    if !(10_000_000..=3_600_000_000_000).contains(&ns) {
        return Err(CliError::usage(format!(
            "bench parity: --seconds {} out of range (valid: 10ms to 1h per measurement)",
            a.seconds
        )));
    }
    let json = match a.output_format.as_str() {
        "text" => false,
        "json" => true,
        other => {
            return Err(CliError::usage(format!(
                "bench parity: --output-format {other} unknown (valid: text, json)"
            )))
        }
    };
    let kernels: Vec<Kernel> = match &a.kernel {
        None => raidlab_parity::kernels(),
        Some(name) => {
            let names = Kernel::ALL
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ");
            let k = Kernel::from_name(name).ok_or_else(|| {
                CliError::usage(format!(
                    "bench parity: --kernel {name} unknown (valid: {names})"
                ))
            })?;
            if !k.is_available() {
                let here = raidlab_parity::kernels()
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(CliError::usage(format!(
                    "bench parity: --kernel {name} is not supported by this CPU (available here: {here})"
                )));
            }
            vec![k]
        }
    };

    let per = Duration::from_nanos(ns);
    let mut stripe = Stripe::new(n, chunk as usize);
    let mut rates = Vec::new();
    for k in &kernels {
        rates.push(measure(*k, &mut stripe, per)?);
    }
    let selected = raidlab_parity::selected();
    let chosen = rates
        .iter()
        .find(|r| r.kernel == selected.name())
        .or_else(|| rates.last())
        .expect("at least one kernel measured");
    let report = ParityReport {
        units: "GB/s of data, decimal (10^9 bytes of data blocks per second; P and Q not counted)",
        data_disks: a.data_disks,
        chunk_bytes: chunk,
        seconds_per_measurement: ns as f64 / 1e9,
        rounds_per_measurement: rounds(per),
        kernel: chosen.kernel,
        xor_gb_s: chosen.xor_gb_s,
        pq_gb_s: chosen.pq_gb_s,
        recover2_gb_s: chosen.recover2_gb_s,
        stream_above_bytes: raidlab_parity::stream_above().map(|b| b as u64),
        kernels: rates,
    };
    if json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::failed(format!("bench parity: encoding JSON: {e}")))?;
        crate::stdout::print(&format!("{text}\n"))
    } else {
        crate::stdout::print(&render_text(&report))
    }
}

fn render_text(r: &ParityReport) -> String {
    let mut s = format!(
        "parity kernels: {} data disks, {} B chunks ({} KiB), one thread, best of {} rounds in {:.2} s per figure\n",
        r.data_disks,
        r.chunk_bytes,
        r.chunk_bytes as f64 / 1024.0,
        r.rounds_per_measurement,
        r.seconds_per_measurement
    );
    s.push_str("GB/s of data (decimal, 10^9 B/s)\n");
    s.push_str(&format!(
        "{:<12} {:>10} {:>10} {:>12}\n",
        "kernel", "xor (P)", "gen (P+Q)", "recover 2D"
    ));
    for k in &r.kernels {
        s.push_str(&format!(
            "{:<12} {:>10.2} {:>10.2} {:>12.2}{}\n",
            k.kernel,
            k.xor_gb_s,
            k.pq_gb_s,
            k.recover2_gb_s,
            if k.kernel == r.kernel {
                "   <- used"
            } else {
                ""
            }
        ));
    }
    if let Some(b) = r.stream_above_bytes {
        s.push_str(&format!(
            "parity streams past the caches when a call's data and parity exceed {} KiB \
             (3/4 of this core's L2)\n",
            b / 1024
        ));
    }
    s
}

/// The buffers of one stripe: data blocks, P and Q, each starting on a 4 KiB boundary as
/// O_DIRECT member I/O buffers do.
struct Stripe {
    data: Vec<Aligned>,
    p: Aligned,
    q: Aligned,
}

impl Stripe {
    fn new(n: usize, chunk: usize) -> Stripe {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut block = || {
            let mut v = Aligned::new(chunk);
            for b in v.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *b = (seed >> 32) as u8;
            }
            v
        };
        let data = (0..n).map(|_| block()).collect();
        Stripe {
            data,
            p: Aligned::new(chunk),
            q: Aligned::new(chunk),
        }
    }
}

/// `len` zeroed bytes starting on a 4 KiB boundary inside an over-allocated Vec.
struct Aligned {
    raw: Vec<u8>,
    off: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let raw = vec![0u8; len + 4096];
        let off = raw.as_ptr().align_offset(4096);
        Aligned { raw, off, len }
    }
}

impl std::ops::Deref for Aligned {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.raw[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for Aligned {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.off..self.off + self.len]
    }
}

/// Time `f` for `per`, split in rounds of about ROUND; the best round's rate in GB/s of `bytes` per call.
/// The measurement ends once `per` has passed (after at least one round), so a call that
/// takes longer than a round (large stripes) does not stretch it by the number of rounds.
fn best_rate(per: Duration, bytes: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm caches and page in the buffers
    let n = rounds(per);
    let round = per / n;
    let begin = Instant::now();
    let mut best = 0f64;
    for _ in 0..n {
        let start = Instant::now();
        let mut calls = 0u64;
        let elapsed = loop {
            f();
            calls += 1;
            let e = start.elapsed();
            if e >= round {
                break e;
            }
        };
        best = best.max(calls as f64 * bytes as f64 / elapsed.as_nanos() as f64);
        if begin.elapsed() >= per {
            break;
        }
    }
    best
}

fn measure(k: Kernel, s: &mut Stripe, per: Duration) -> Result<KernelRates, CliError> {
    let n = s.data.len();
    let bytes = n * s.p.len();
    let xor_gb_s = {
        let srcs: Vec<&[u8]> = s.data.iter().map(|d| &**d).collect();
        best_rate(per, bytes, || k.gen_p(&srcs, &mut s.p))
    };
    let pq_gb_s = {
        let srcs: Vec<&[u8]> = s.data.iter().map(|d| &**d).collect();
        best_rate(per, bytes, || k.gen_pq(&srcs, &mut s.p, &mut s.q))
    };
    // Recovery of data blocks 0 and 1 from the rest and P, Q: the result is the same bytes
    // every time, so the stripe stays valid; it is checked once afterwards.
    let originals = (s.data[0].to_vec(), s.data[1].to_vec());
    let lost = [Block::Data(0), Block::Data(1)];
    let mut failed = None;
    let recover2_gb_s = {
        let Stripe { data, p, q } = s;
        let mut dm: Vec<&mut [u8]> = data.iter_mut().map(|d| &mut **d).collect();
        best_rate(per, bytes, || {
            if let Err(e) = k.recover(&mut dm, p, Some(q), &lost) {
                failed = Some(e);
            }
        })
    };
    if let Some(e) = failed {
        return Err(CliError::failed(format!(
            "bench parity: recovery with kernel {k} failed: {e}"
        )));
    }
    if *s.data[0] != *originals.0 || *s.data[1] != *originals.1 {
        return Err(CliError::failed(format!(
            "bench parity: kernel {k} recovered different bytes than were lost (a parity kernel bug)"
        )));
    }
    Ok(KernelRates {
        kernel: k.name(),
        xor_gb_s,
        pq_gb_s,
        recover2_gb_s,
    })
}

/// `bench sim`: the wall clock is read here, at the edge, and handed to the simulator's
/// benchmark, which never reads one itself.
fn sim(a: SimBenchArgs) -> Result<(), CliError> {
    if a.output_format != "text" && a.output_format != "json" {
        return Err(CliError::usage(format!(
            "--output-format {}: not a format (valid: text, json)",
            a.output_format
        )));
    }
    let cases = raidlab_sim::bench::CASE_FOLDERS;
    if let Some(c) = a.case.iter().find(|c| !cases.iter().any(|(k, _)| k == c)) {
        let valid: Vec<&str> = cases.iter().map(|(k, _)| *k).collect();
        return Err(CliError::usage(format!(
            "--case {c}: not a case (valid: {})",
            valid.join(", ")
        )));
    }
    for (case, folders) in cases {
        if !a.case.iter().any(|c| c == case) {
            continue;
        }
        if let Some(folder) = folders.iter().find(|f| !a.systems.join(f).is_dir()) {
            return Err(CliError::usage(format!(
                "--systems {}: no {folder}/ folder of simulated systems there for case {case} (run from the repository root or point --systems at it)",
                a.systems.display()
            )));
        }
    }
    let t0 = Instant::now();
    let clock = move || t0.elapsed().as_secs_f64();
    let mut rows = Vec::new();
    let mut results = Vec::new();
    for case in &a.case {
        // (Every name was checked against the cases above.)
        let Some(run) = raidlab_sim::bench::run_named(case, &a.systems, &clock) else {
            return Err(CliError::usage(format!("--case {case}: not a case")));
        };
        results.extend(run.map_err(|e| CliError::failed(e.to_string()))?);
    }
    // (The names' column as wide as the longest.)
    let width = results.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for r in results {
        rows.push(serde_json::json!({
            "name": r.name,
            "points": r.points,
            "member_ios": r.member_ios,
            "seconds": r.seconds,
            "member_ios_per_s": r.member_ios_per_s(),
            "host_ios": r.host_ios,
            "events": r.events,
            "events_per_s": r.events_per_s(),
        }));
        if a.output_format == "text" {
            crate::stdout::print(&format!(
                "{:<width$} {:>5} points  {:>12} member I/Os  {:>8.2} s  {:>12.0} member I/Os/s  {:>12} events  {:>12.0} events/s\n",
                r.name,
                r.points,
                r.member_ios,
                r.seconds,
                r.member_ios_per_s(),
                r.events,
                r.events_per_s()
            ))?;
        }
    }
    if a.output_format == "json" {
        crate::stdout::print(&format!("{}\n", serde_json::Value::Array(rows)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> ParityArgs {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Top {
            #[command(flatten)]
            a: ParityArgs,
        }
        let mut argv = vec!["bench-parity"];
        argv.extend_from_slice(extra);
        Top::try_parse_from(argv).expect("arguments parse").a
    }

    #[test]
    fn bad_values_are_usage_errors_naming_the_option_and_valid_range() {
        for (extra, want) in [
            (
                &["--data-disks", "1"][..],
                "--data-disks 1 out of range (valid: 2..=255)",
            ),
            (&["--data-disks", "256"][..], "--data-disks 256"),
            (&["--chunk", "0"][..], "--chunk 0 out of range"),
            (&["--chunk", "12x"][..], "--chunk: '12x' has unknown unit"),
            (&["--seconds", "1ms"][..], "--seconds 1ms out of range"),
            (
                &["--seconds", "-1"][..],
                "--seconds: '-1' is not a duration",
            ),
            (&["--output-format", "xml"][..], "valid: text, json"),
            (
                &["--kernel", "sse9"][..],
                "--kernel sse9 unknown (valid: scalar, avx2",
            ),
        ] {
            let e = parity(args(extra)).unwrap_err();
            assert_eq!(e.code, 2, "{extra:?}: {}", e.message);
            assert!(e.message.contains(want), "{extra:?}: {}", e.message);
            assert!(!e.message.contains('\n'));
        }
    }

    #[test]
    fn measures_every_available_kernel_and_recovers_correctly() {
        let mut stripe = Stripe::new(4, 8192);
        for k in raidlab_parity::kernels() {
            let r = measure(k, &mut stripe, Duration::from_millis(10)).unwrap();
            assert_eq!(r.kernel, k.name());
            assert!(r.xor_gb_s > 0.0 && r.pq_gb_s > 0.0 && r.recover2_gb_s > 0.0);
        }
        for b in &stripe.data {
            assert_eq!(b.as_ptr() as usize % 4096, 0, "blocks are page-aligned");
        }
    }

    #[test]
    fn json_report_carries_the_contract_keys_per_kernel_and_for_the_used_one() {
        let rates = |k: &'static str, x: f64| KernelRates {
            kernel: k,
            xor_gb_s: x,
            pq_gb_s: x / 2.0,
            recover2_gb_s: x / 3.0,
        };
        let r = ParityReport {
            units: "GB/s",
            data_disks: 8,
            chunk_bytes: 65536,
            seconds_per_measurement: 0.5,
            rounds_per_measurement: 250,
            kernel: "avx2",
            xor_gb_s: 30.0,
            pq_gb_s: 15.0,
            recover2_gb_s: 10.0,
            stream_above_bytes: Some(768 << 10),
            kernels: vec![rates("scalar", 3.0), rates("avx2", 30.0)],
        };
        let v: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        for key in ["xor_gb_s", "pq_gb_s", "recover2_gb_s"] {
            assert!(v[key].is_f64(), "{key}");
            assert!(v["kernels"][1][key].is_f64(), "{key}");
        }
        assert_eq!(v["kernels"][0]["kernel"], "scalar");
        assert_eq!(v["stream_above_bytes"], 768 << 10);
        let text = render_text(&r);
        assert!(text.contains("exceed 768 KiB"));
        assert!(text.contains("GB/s of data (decimal"));
        assert!(text
            .lines()
            .any(|l| l.starts_with("avx2") && l.contains("30.00") && l.ends_with("<- used")));
        assert!(text
            .lines()
            .any(|l| l.starts_with("scalar") && !l.contains("used")));
    }
}
