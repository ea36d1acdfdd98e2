//! Full-stripe writes through an array vs. writing the same member bytes to the members
//! directly, side by side in one run. Prints the rates (decimal MB/s of logical data) and the
//! ratios. Usage: full_stripe DIR [members=9] [chunk=64k] [member_mib=128] [reps=5]
//! [stripes_per_request=4] [requests_in_flight=1]
//!
//! The peers write the bytes the array writes (data chunks from the same buffer, each row's
//! parity precomputed), at the same offsets and sizes, four ways: pwrite from a thread per
//! member, pwrite from one thread writing each member in turn, memcpy into the members'
//! mapped pages from a thread per member, and the same with streaming stores (the array's
//! own copy for tmpfs members). Every member page is written once before timing (an untimed
//! array pass), so the array and the peers all overwrite allocated pages. Passes alternate
//! which side goes first. Ratios are per pass (array / peer of the same pass); the medians
//! over passes are reported, with the load average before and after, and CPU seconds per
//! pass (user + system, all threads). `RAIDLAB_MEMBER_IO` picks the array's member I/O
//! method (auto, uring, uring-async, psync), `RAIDLAB_MEMBER_BUFFERED=1` turns off mapping;
//! `FULL_STRIPE_ARRAY_ONLY=1` times the array alone (for profiling).

use raidlab_array::create::{create, CreateOptions, CreateSpec, MemberSpec};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Instant;

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// CPU seconds (user + system) this process has used, all threads (and io_uring's
/// io-wq workers, which are threads of the process) included.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes only into the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The bytes the array writes, as the peer writes them: member `m`'s chunk of row `row` is
/// data chunk m of that row from the caller's buffer (the last member: the row's parity).
/// The layout rotates which member gets which chunk; the bytes written, their sources and
/// the cache footprint are the array's.
struct Image<'a> {
    buf: &'a [u8],
    parity: Vec<Vec<u8>>,
    chunk: usize,
}

impl Image<'_> {
    fn chunk(&self, member: usize, row: usize) -> &[u8] {
        let rows = self.parity.len();
        let data = self.buf.len() / rows / self.chunk; // data chunks per row
        let r = row % rows;
        if member < data {
            &self.buf[(r * data + member) * self.chunk..][..self.chunk]
        } else {
            &self.parity[r]
        }
    }
}

/// A member file mapped shared, read-write (the peer that copies into members' pages).
struct Mapped {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: shared memory, each peer thread copies into its own member's mapping.
unsafe impl Send for Mapped {}
unsafe impl Sync for Mapped {}

impl Mapped {
    fn new(f: &File) -> Mapped {
        use std::os::unix::io::AsRawFd;
        let len = f.metadata().unwrap().len() as usize;
        // SAFETY: a fresh shared mapping of a file we hold open.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        assert!(p != libc::MAP_FAILED, "mmap of a member failed");
        Mapped { ptr: p.cast(), len }
    }
    fn write(&self, src: &[u8], at: usize, stream: bool) {
        assert!(at + src.len() <= self.len);
        // SAFETY: in bounds (asserted); the pages were allocated by the untimed pass.
        unsafe {
            if stream {
                raidlab_array::stream_copy(self.ptr.add(at), src.as_ptr(), src.len())
            } else {
                std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(at), src.len())
            }
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps what `new` mapped.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// How the peer writes the members.
#[derive(Clone, Copy, PartialEq)]
enum Peer {
    /// pwrite, one thread per member.
    Threads,
    /// pwrite, one thread writing each member in turn.
    One,
    /// memcpy into the members' mapped pages, one thread per member.
    Mapped,
    /// The same with streaming stores (the copy the array uses for mapped members).
    Streamed,
}

/// The peer: each member receives `member_bytes` in chunk-sized writes at the offsets the
/// array uses. Returns (wall seconds, CPU seconds).
fn direct(
    files: &[File],
    maps: &[Mapped],
    img: &Image,
    member_bytes: usize,
    peer: Peer,
) -> (f64, f64) {
    let c = cpu_seconds();
    let t = Instant::now();
    let n = img.chunk;
    if peer == Peer::Mapped || peer == Peer::Streamed {
        let stream = peer == Peer::Streamed;
        std::thread::scope(|sc| {
            for (m, map) in maps.iter().enumerate() {
                let t = std::thread::Builder::new().name(format!("mapped-{m}"));
                t.spawn_scoped(sc, move || {
                    let mut off = 0;
                    while off < member_bytes {
                        map.write(img.chunk(m, off / n), (1 << 20) + off, stream);
                        off += n;
                    }
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: a fence has no preconditions.
                    unsafe {
                        std::arch::x86_64::_mm_sfence()
                    };
                })
                .unwrap();
            }
        });
    } else if peer == Peer::Threads {
        std::thread::scope(|sc| {
            for (m, f) in files.iter().enumerate() {
                let t = std::thread::Builder::new().name(format!("direct-{m}"));
                t.spawn_scoped(sc, move || {
                    let mut off = 0;
                    while off < member_bytes {
                        f.write_all_at(img.chunk(m, off / n), (1 << 20) + off as u64)
                            .unwrap();
                        off += n;
                    }
                    f.sync_data().unwrap();
                })
                .unwrap();
            }
        });
    } else {
        let mut off = 0;
        while off < member_bytes {
            for (m, f) in files.iter().enumerate() {
                f.write_all_at(img.chunk(m, off / n), (1 << 20) + off as u64)
                    .unwrap();
            }
            off += n;
        }
        for f in files {
            f.sync_data().unwrap();
        }
    }
    (t.elapsed().as_secs_f64(), cpu_seconds() - c)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(args.get(1).map(String::as_str).unwrap_or("/dev/shm"));
    let n: usize = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(9);
    let chunk = args
        .get(3)
        .map(|v| raidlab_workload::size::parse_size(v).unwrap())
        .unwrap_or(65536);
    let member_mib: u64 = args.get(4).and_then(|v| v.parse().ok()).unwrap_or(128);
    let reps: usize = args.get(5).and_then(|v| v.parse().ok()).unwrap_or(5);
    let array_only = std::env::var_os("FULL_STRIPE_ARRAY_ONLY").is_some();
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
            stop: None,
        },
    )
    .unwrap();
    let stripe = arr.geo.stripe_data_bytes() as usize;
    // Requests of 4 full stripes by default, like a large sequential writer (fio bs = 4
    // stripes); the 6th argument changes how many.
    let per_request: usize = args.get(6).and_then(|v| v.parse().ok()).unwrap_or(4);
    let req = stripe * per_request.max(1);
    let total = arr.capacity() as usize / req * req;
    let mut buf = vec![0u8; req];
    let mut x: u64 = 0x1234_5678_9abc_def1;
    for b in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.copy_from_slice(&x.to_le_bytes()[..b.len()]);
    }
    let files: Vec<File> = members
        .iter()
        .map(|m| OpenOptions::new().read(true).write(true).open(m).unwrap())
        .collect();
    // Data + parity bytes per member for `total` logical bytes; each member receives
    // chunk-sized writes from the array, and the peer writes the same sizes.
    let member_bytes = total / (n - 1);
    let cz = chunk as usize;
    let rows = req / stripe;
    let parity = (0..rows)
        .map(|r| {
            let mut p = vec![0u8; cz];
            for d in 0..n - 1 {
                let src = &buf[(r * (n - 1) + d) * cz..][..cz];
                p.iter_mut().zip(src).for_each(|(a, b)| *a ^= b);
            }
            p
        })
        .collect();
    let img = Image {
        buf: &buf,
        parity,
        chunk: cz,
    };
    // Requests in flight on the array (7th argument, default 1): that many threads each
    // writing the next request, the way `raidlab run` drives an array target with iodepth
    // N (N threads calling write_at); the FUSE volume has one request in flight.
    let depth: usize = args.get(7).and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
    // Each request in flight has a buffer of its own, as with `raidlab run` (same bytes, so
    // the peer's image stays the array's).
    let copies: Vec<Vec<u8>> = (0..depth).map(|_| buf.clone()).collect();
    let array_pass = || {
        let c = cpu_seconds();
        let t = Instant::now();
        if depth == 1 {
            let mut off = 0;
            while off < total {
                arr.write_at(&buf, off as u64).unwrap();
                off += req;
            }
        } else {
            let next = std::sync::atomic::AtomicUsize::new(0);
            std::thread::scope(|sc| {
                for own in &copies {
                    let next = &next;
                    let arr = &arr;
                    sc.spawn(move || loop {
                        let off = next.fetch_add(req, std::sync::atomic::Ordering::Relaxed);
                        if off >= total {
                            break;
                        }
                        arr.write_at(own, off as u64).unwrap();
                    });
                }
            });
        }
        arr.flush().unwrap();
        (t.elapsed().as_secs_f64(), cpu_seconds() - c)
    };
    let load0 = loadavg();
    array_pass(); // allocate every member page before timing anything
    let maps: Vec<Mapped> = files.iter().map(Mapped::new).collect();
    let (mut a, mut d, mut d1, mut dm, mut ds) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut ra, mut ra1, mut ram, mut ras) = (vec![], vec![], vec![], vec![]);
    let (mut ca, mut cd, mut cm, mut cs) = (vec![], vec![], vec![], vec![]);
    for rep in 0..reps {
        let (ta, td, td1, tm, ts);
        let nan = (f64::NAN, f64::NAN);
        let peer = |p| direct(&files, &maps, &img, member_bytes, p);
        if array_only {
            ta = array_pass();
            (td, td1, tm, ts) = (nan, nan, nan, nan);
        } else if rep % 2 == 0 {
            ta = array_pass();
            td = peer(Peer::Threads);
            tm = peer(Peer::Mapped);
            ts = peer(Peer::Streamed);
            td1 = peer(Peer::One);
        } else {
            td1 = peer(Peer::One);
            ts = peer(Peer::Streamed);
            tm = peer(Peer::Mapped);
            td = peer(Peer::Threads);
            ta = array_pass();
        }
        a.push(total as f64 / ta.0 / 1e6);
        d.push(total as f64 / td.0 / 1e6);
        d1.push(total as f64 / td1.0 / 1e6);
        dm.push(total as f64 / tm.0 / 1e6);
        ds.push(total as f64 / ts.0 / 1e6);
        ras.push(ts.0 / ta.0);
        cs.push(ts.1);
        ra.push(td.0 / ta.0);
        ra1.push(td1.0 / ta.0);
        ram.push(tm.0 / ta.0);
        ca.push(ta.1);
        cd.push(td.1);
        cm.push(tm.1);
    }
    println!(
        "raid5 {}+1 chunk {} KiB, {} KiB requests, {} in flight, {} MiB logical per pass, {} passes (median), member I/O: {}",
        n - 1,
        chunk / 1024,
        req >> 10,
        depth,
        total >> 20,
        reps,
        arr.member_io()
    );
    println!("  load average before / after: {load0} / {}", loadavg());
    println!(
        "  array full-stripe writes : {:8.1} MB/s (logical data)",
        median(&a)
    );
    if !array_only {
        println!(
            "  members written directly : {:8.1} MB/s (same member bytes, thread per member)",
            median(&d)
        );
        println!(
            "  members written directly : {:8.1} MB/s (same member bytes, one thread)",
            median(&d1)
        );
        println!(
            "  members copied directly  : {:8.1} MB/s (same member bytes into their mapped pages, thread per member)",
            median(&dm)
        );
        println!(
            "  members streamed directly: {:8.1} MB/s (the same with streaming stores, the array's copy)",
            median(&ds)
        );
        let list = |v: &[f64]| {
            v.iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!(
            "  ratio array/direct per pass: {} (thread per member); {} (one thread); {} (mapped); {} (streamed)",
            list(&ra),
            list(&ra1),
            list(&ram),
            list(&ras)
        );
        println!(
            "  ratio array/direct (median of passes): {:.2} (thread per member), {:.2} (one thread), {:.2} (mapped), {:.2} (streamed)",
            median(&ra),
            median(&ra1),
            median(&ram),
            median(&ras)
        );
        // On a shared machine wall-clock ratios also measure how much CPU each side got;
        // CPU seconds per pass measure the work each side did.
        println!(
            "  CPU seconds per pass (median): array {:.3}, direct thread per member {:.3}, mapped {:.3}, streamed {:.3}; direct/array {:.2}, mapped/array {:.2}, streamed/array {:.2}",
            median(&ca),
            median(&cd),
            median(&cm),
            median(&cs),
            median(&cd) / median(&ca),
            median(&cm) / median(&ca),
            median(&cs) / median(&ca)
        );
    }
    arr.close().unwrap();
    drop(arr);
    for m in &members {
        let _ = std::fs::remove_file(m);
    }
}
