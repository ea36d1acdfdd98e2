//! Side-by-side throughput of raidlab's parity kernels and ISA-L's `xor_gen` / `pq_gen` on the
//! same buffers in one process, alternating in short rounds so that both see the same machine
//! noise. GB/s are decimal (10^9 bytes of DATA per second: data blocks × chunk, P/Q not counted).
//!
//! Run: `bench/parity/vs-isal.sh` (one core via taskset) or
//! `cargo run --release -p raidlab-parity --example vs_isal -- [--data-disks 8] [--chunk 65536] [--seconds 4] [--kernel NAME] [--isal auto|avx512|avx2|sse]`
//! Needs libisal (Debian package `libisal-dev`).

use raidlab_parity::Kernel;
use std::os::raw::{c_int, c_void};
use std::time::{Duration, Instant};

#[link(name = "isal")]
extern "C" {
    fn xor_gen(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    fn pq_gen(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    // The versions ISA-L's dispatcher chooses among (raid_multibinary.asm), exported by name:
    // `--isal` calls one set directly, e.g. what a CPU without AVX-512 would run.
    fn xor_gen_sse(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    fn xor_gen_avx(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    fn xor_gen_avx512(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    fn pq_gen_sse(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    fn pq_gen_avx2(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    fn pq_gen_avx512(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
}

type IsalFn = unsafe extern "C" fn(c_int, c_int, *mut *mut c_void) -> c_int;

/// ISA-L's xor and P+Q functions by the name `--isal` takes: `auto` is its dispatcher's
/// choice for this CPU; `avx2` is what it chooses on a CPU with AVX2 and no AVX-512
/// (xor_gen_avx, 256-bit, and pq_gen_avx2); `sse` without AVX.
const ISAL_SETS: [(&str, IsalFn, IsalFn); 4] = [
    ("auto", xor_gen, pq_gen),
    ("avx512", xor_gen_avx512, pq_gen_avx512),
    ("avx2", xor_gen_avx, pq_gen_avx2),
    ("sse", xor_gen_sse, pq_gen_sse),
];

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

fn aligned(len: usize, seed: &mut u64) -> Vec<Line> {
    let mut v = vec![Line([0; 64]); len / 64];
    for line in &mut v {
        for b in line.0.iter_mut() {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *b = *seed as u8;
        }
    }
    v
}

fn bytes(v: &mut [Line]) -> &mut [u8] {
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, v.len() * 64) }
}

/// Run `f` repeatedly for about `d`; return (calls, elapsed).
fn timed(d: Duration, mut f: impl FnMut()) -> (u64, Duration) {
    let start = Instant::now();
    let mut calls = 0u64;
    loop {
        for _ in 0..16 {
            f();
        }
        calls += 16;
        let e = start.elapsed();
        if e >= d {
            return (calls, e);
        }
    }
}

/// Bad input: one line saying what and what is valid, exit status 2.
fn usage(msg: &str) -> ! {
    eprintln!("vs_isal: {msg}");
    std::process::exit(2)
}

fn value<T: std::str::FromStr>(opt: &str, v: Option<&String>, valid: &str) -> T {
    let v = v.unwrap_or_else(|| usage(&format!("{opt} needs a value ({valid})")));
    v.parse()
        .unwrap_or_else(|_| usage(&format!("{opt} {v}: not valid ({valid})")))
}

fn main() {
    let mut n = 8usize;
    let mut chunk = 65536usize;
    let mut seconds = 4.0f64;
    let mut kernel = raidlab_parity::selected();
    let mut stagger = 0usize;
    let mut isal = ISAL_SETS[0];
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--data-disks" => n = value(a, it.next(), "2..=253"),
            "--chunk" => chunk = value(a, it.next(), "bytes, a multiple of 64"),
            "--stagger" => stagger = value(a, it.next(), "bytes, a multiple of 64"),
            "--seconds" => seconds = value(a, it.next(), "seconds, e.g. 4 or 0.5"),
            "--kernel" => {
                let name: String = value(a, it.next(), "a kernel name");
                kernel = Kernel::from_name(&name)
                    .filter(|k| k.is_available())
                    .unwrap_or_else(|| {
                        let here: Vec<&str> =
                            raidlab_parity::kernels().iter().map(|k| k.name()).collect();
                        usage(&format!(
                            "--kernel {name}: not available here (valid: {})",
                            here.join(", ")
                        ))
                    })
            }
            "--isal" => {
                let name: String = value(a, it.next(), "auto, avx512, avx2 or sse");
                isal = *ISAL_SETS
                    .iter()
                    .find(|s| s.0 == name)
                    .unwrap_or_else(|| usage(&format!("--isal {name}: not a set (valid: auto, avx512, avx2, sse)")));
                let needs = match isal.0 {
                    "avx512" => is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"),
                    "avx2" => is_x86_feature_detected!("avx2"),
                    _ => true,
                };
                if !needs {
                    usage(&format!("--isal {name}: this CPU lacks the instructions"));
                }
            }
            _ => usage(&format!(
                "unknown option {a} (valid: --data-disks, --chunk, --stagger, --seconds, --kernel, --isal)"
            )),
        }
    }
    if !(2..=253).contains(&n)
        || chunk == 0
        || chunk & 63 != 0
        || stagger & 63 != 0
        || seconds.is_nan()
        || seconds <= 0.0
    {
        usage("need 2..=253 data disks, a chunk and stagger that are multiples of 64 bytes, seconds > 0");
    }
    // One arena, every block starting on a 4 KiB page boundary plus `stagger` × its index
    // (page-aligned blocks are what O_DIRECT member I/O uses; stagger 0 is that case).
    let mut seed = 0x5eed_u64;
    let stride = chunk.div_ceil(4096) * 4096 + 4096;
    let mut arena = aligned(stride * (n + 2) + 4096, &mut seed);
    let base = bytes(&mut arena).as_mut_ptr();
    let base = unsafe { base.add(base.align_offset(4096)) };
    let block = |i: usize| unsafe { base.add(i * stride + (i * stagger) % 4096) };
    let mut ptrs: Vec<*mut c_void> = (0..n + 2).map(|i| block(i) as *mut c_void).collect();
    let srcs: Vec<&[u8]> = (0..n)
        .map(|i| unsafe { std::slice::from_raw_parts(block(i) as *const u8, chunk) })
        .collect();
    let pb = block(n);
    let qb = block(n + 1);
    let (pm, qm) = unsafe {
        (
            std::slice::from_raw_parts_mut(pb, chunk),
            std::slice::from_raw_parts_mut(qb, chunk),
        )
    };

    // Many short rounds, the four measurements interleaved in each: on a shared machine the
    // best round of each is the least disturbed, and the ratio of best rounds is reported next
    // to the ratio of totals.
    let rounds = 200;
    let slice = Duration::from_secs_f64(seconds / (4.0 * rounds as f64));
    let mut best = [0f64; 4];
    let mut total = [[0u64; 2]; 4];
    let per = |(c, e): (u64, Duration)| (c, e.as_nanos() as u64);
    let mut xptrs: Vec<*mut c_void> = ptrs[..n].to_vec();
    xptrs.push(ptrs[n]);
    for _ in 0..rounds {
        let runs = [
            per(timed(slice, || kernel.gen_p(&srcs, pm))),
            per(timed(slice, || unsafe {
                (isal.1)((n + 1) as c_int, chunk as c_int, xptrs.as_mut_ptr());
            })),
            per(timed(slice, || kernel.gen_pq(&srcs, pm, qm))),
            per(timed(slice, || unsafe {
                (isal.2)((n + 2) as c_int, chunk as c_int, ptrs.as_mut_ptr());
            })),
        ];
        for (i, (c, ns)) in runs.into_iter().enumerate() {
            let rate = c as f64 * (n * chunk) as f64 / ns as f64; // bytes per ns = GB/s
            best[i] = best[i].max(rate);
            total[i][0] += c;
            total[i][1] += ns;
        }
    }
    let avg = |i: usize| total[i][0] as f64 * (n * chunk) as f64 / total[i][1] as f64;
    println!("parity vs ISA-L: {n} data disks, {chunk}-byte chunks, one thread, {seconds} s in {rounds} interleaved rounds, raidlab kernel {kernel}, ISA-L set {}", isal.0);
    println!(
        "GB/s of data (decimal)  raidlab best  ISA-L best  ratio | raidlab avg  ISA-L avg  ratio"
    );
    for (name, r, i) in [("xor (P only)", 0, 1), ("pq (P+Q)", 2, 3)] {
        println!(
            "{name:<22} {:12.2} {:11.2} {:6.3} | {:11.2} {:10.2} {:6.3}",
            best[r],
            best[i],
            best[r] / best[i],
            avg(r),
            avg(i),
            avg(r) / avg(i)
        );
    }
}
