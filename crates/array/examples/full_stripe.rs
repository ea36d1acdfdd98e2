//! Full-stripe sequential writes through an array vs. writing the same member bytes to the
//! members directly, side by side in one run. Prints both rates (decimal MB/s of logical data)
//! and their ratio. Usage: full_stripe DIR [members=9] [chunk=64k] [member_mib=128] [reps=3]

use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(args.get(1).map(String::as_str).unwrap_or("/dev/shm"));
    let n: usize = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(9);
    let chunk = args
        .get(3)
        .map(|v| raidlab_workload::size::parse_size(v).unwrap())
        .unwrap_or(65536);
    let member_mib: u64 = args.get(4).and_then(|v| v.parse().ok()).unwrap_or(128);
    let reps: usize = args.get(5).and_then(|v| v.parse().ok()).unwrap_or(3);
    let members: Vec<PathBuf> = (0..n).map(|i| dir.join(format!("fs-bench-{i}"))).collect();
    for m in &members {
        let _ = std::fs::remove_file(m);
    }
    let spec = CreateSpec::new(
        "5",
        None,
        Some(chunk),
        members.iter().cloned().map(MemberSpec::Path).collect(),
    )
    .unwrap();
    let size = (member_mib << 20) + (1 << 20);
    let arr = create(
        &spec,
        &CreateOptions {
            force: false,
            size: Some(size),
            assume_clean: true,
            verbose: false,
        },
    )
    .unwrap();
    let stripe = arr.geo.stripe_data_bytes() as usize;
    // Requests of 4 full stripes, like a large sequential writer (fio bs = 4 stripes).
    let req = stripe * 4;
    let total = arr.capacity() as usize / req * req;
    let mut buf = vec![0u8; req];
    let mut x: u64 = 0x1234_5678_9abc_def1;
    for b in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.copy_from_slice(&x.to_le_bytes()[..b.len()]);
    }
    let files: Vec<std::fs::File> = members
        .iter()
        .map(|m| OpenOptions::new().write(true).open(m).unwrap())
        .collect();
    let member_bytes = total / (n - 1); // data + parity bytes per member for `total` logical bytes
                                        // Each member receives chunk-sized writes from the array; the peer writes the same sizes.
    let per_member_req = chunk as usize;
    let mut arr_rates = Vec::new();
    let mut direct_rates = Vec::new();
    let mut serial_rates = Vec::new();
    for _ in 0..reps {
        // Array: logical sequential writes of whole stripes (parity computed, n members written).
        let t = Instant::now();
        let mut off = 0;
        while off < total {
            arr.write_at(&buf, off as u64).unwrap();
            off += req;
        }
        arr.flush().unwrap();
        arr_rates.push(total as f64 / t.elapsed().as_secs_f64());
        if std::env::var_os("FULL_STRIPE_ARRAY_ONLY").is_some() {
            direct_rates.push(1.0);
            serial_rates.push(1.0);
            continue;
        }
        // Direct: the same bytes each member receives, at the same offsets and request size,
        // one writer thread per member (as the array has one worker per member), no parity.
        let t = Instant::now();
        std::thread::scope(|sc| {
            for f in &files {
                let chunk = &buf[..per_member_req];
                sc.spawn(move || {
                    let mut off = 0;
                    while off < member_bytes {
                        f.write_all_at(chunk, (1 << 20) + off as u64).unwrap();
                        off += per_member_req;
                    }
                    f.sync_data().unwrap();
                });
            }
        });
        direct_rates.push(total as f64 / t.elapsed().as_secs_f64());
        // Direct, one thread writing each member in turn.
        let t = Instant::now();
        let mut off = 0;
        while off < member_bytes {
            for f in &files {
                f.write_all_at(&buf[..per_member_req], (1 << 20) + off as u64)
                    .unwrap();
            }
            off += per_member_req;
        }
        for f in &files {
            f.sync_data().unwrap();
        }
        serial_rates.push(total as f64 / t.elapsed().as_secs_f64());
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let a = med(&mut arr_rates);
    let d = med(&mut direct_rates);
    let d1 = med(&mut serial_rates);
    println!(
        "raid5 {}+1 chunk {} KiB, {} MiB logical per pass, {} passes (median):",
        n - 1,
        chunk / 1024,
        total >> 20,
        reps
    );
    println!(
        "  array full-stripe writes : {:8.1} MB/s (logical data)",
        a / 1e6
    );
    println!(
        "  members written directly : {:8.1} MB/s (same member bytes, thread per member)",
        d / 1e6
    );
    println!(
        "  members written directly : {:8.1} MB/s (same member bytes, one thread)",
        d1 / 1e6
    );
    println!(
        "  ratio array/direct       : {:.2} (thread per member), {:.2} (one thread)",
        a / d,
        a / d1
    );
    arr.close().unwrap();
    drop(arr);
    for m in &members {
        let _ = std::fs::remove_file(m);
    }
}
