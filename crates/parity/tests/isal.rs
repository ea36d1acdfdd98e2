//! Byte-identical to ISA-L (libisal, Debian package `libisal-dev`): its `xor_gen` and `pq_gen`
//! on the same random buffers as every kernel here. Linked for this test only; if the library
//! is missing the test fails to link, it does not skip.

use raidlab_parity::{kernels, Kernel};
use std::os::raw::{c_int, c_void};

#[link(name = "isal")]
extern "C" {
    /// `vects` counts sources plus the destination (last pointer). Pointers 32-byte aligned.
    fn xor_gen(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
    /// `vects` counts sources plus P and Q (the last two pointers). len a multiple of 32.
    fn pq_gen(vects: c_int, len: c_int, array: *mut *mut c_void) -> c_int;
}

/// A 64-byte-aligned buffer (ISA-L's AVX paths require 32-byte alignment).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

struct Aligned {
    words: Vec<Line>,
    len: usize,
}
impl Aligned {
    fn new(len: usize) -> Self {
        Aligned {
            words: vec![Line([0; 64]); len.div_ceil(64).max(1)],
            len,
        }
    }
    fn bytes(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.words.as_ptr() as *const u8, self.len) }
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr() as *mut u8, self.len) }
    }
}

fn fill(seed: &mut u64, buf: &mut [u8]) {
    for b in buf {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *b = (*seed >> 24) as u8;
    }
}

fn isal_pq(data: &mut [Aligned], len: usize) -> (Aligned, Aligned) {
    let (mut p, mut q) = (Aligned::new(len), Aligned::new(len));
    let mut ptrs: Vec<*mut c_void> = data
        .iter_mut()
        .map(|d| d.bytes_mut().as_mut_ptr() as *mut c_void)
        .collect();
    ptrs.push(p.bytes_mut().as_mut_ptr() as *mut c_void);
    ptrs.push(q.bytes_mut().as_mut_ptr() as *mut c_void);
    let rc = unsafe { pq_gen(ptrs.len() as c_int, len as c_int, ptrs.as_mut_ptr()) };
    assert_eq!(
        rc,
        0,
        "ISA-L pq_gen failed for {} sources, len {len}",
        data.len()
    );
    (p, q)
}

fn isal_xor(data: &mut [Aligned], len: usize) -> Aligned {
    let mut p = Aligned::new(len);
    let mut ptrs: Vec<*mut c_void> = data
        .iter_mut()
        .map(|d| d.bytes_mut().as_mut_ptr() as *mut c_void)
        .collect();
    ptrs.push(p.bytes_mut().as_mut_ptr() as *mut c_void);
    let rc = unsafe { xor_gen(ptrs.len() as c_int, len as c_int, ptrs.as_mut_ptr()) };
    assert_eq!(
        rc,
        0,
        "ISA-L xor_gen failed for {} sources, len {len}",
        data.len()
    );
    p
}

#[test]
fn pq_gen_matches_isal() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut compared = 0;
    // ISA-L's pq_gen needs at least 2 sources and a length that is a multiple of 32.
    for n in (2..=253usize).step_by(3).chain([4, 8, 11, 252, 253]) {
        for len in [32usize, 64, 96, 4096, 65536] {
            if n * len > 4 << 20 {
                continue;
            }
            let mut data: Vec<Aligned> = (0..n).map(|_| Aligned::new(len)).collect();
            for d in &mut data {
                fill(&mut seed, d.bytes_mut());
            }
            let (ip, iq) = isal_pq(&mut data, len);
            let srcs: Vec<&[u8]> = data.iter().map(|d| d.bytes()).collect();
            for k in kernels() {
                let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
                k.gen_pq(&srcs, &mut p, &mut q);
                assert!(
                    p == ip.bytes(),
                    "P differs from ISA-L: kernel {k}, {n} data, len {len}"
                );
                assert!(
                    q == iq.bytes(),
                    "Q differs from ISA-L: kernel {k}, {n} data, len {len}"
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 400);
}

#[test]
fn xor_gen_matches_isal() {
    let mut seed = 0xdead_beef_cafe_f00du64;
    // ISA-L's xor_gen needs at least 2 sources (with one, P is a copy: checked elsewhere).
    for n in (3..=255usize).step_by(2).chain([2, 8, 254]) {
        for len in [32usize, 64, 4096, 65536] {
            if n * len > 4 << 20 {
                continue;
            }
            let mut data: Vec<Aligned> = (0..n).map(|_| Aligned::new(len)).collect();
            for d in &mut data {
                fill(&mut seed, d.bytes_mut());
            }
            let ip = isal_xor(&mut data, len);
            let srcs: Vec<&[u8]> = data.iter().map(|d| d.bytes()).collect();
            for k in kernels() {
                let mut p = vec![0u8; len];
                k.gen_p(&srcs, &mut p);
                assert!(
                    p == ip.bytes(),
                    "P differs from ISA-L: kernel {k}, {n} data, len {len}"
                );
            }
        }
    }
}

#[test]
fn scalar_reference_matches_isal_on_a_typical_stripe() {
    // 8 data disks, 64 KiB chunks: the benchmark's shape, checked on its own for clarity.
    let (n, len) = (8, 65536);
    let mut seed = 42u64;
    let mut data: Vec<Aligned> = (0..n).map(|_| Aligned::new(len)).collect();
    for d in &mut data {
        fill(&mut seed, d.bytes_mut());
    }
    let (ip, iq) = isal_pq(&mut data, len);
    let srcs: Vec<&[u8]> = data.iter().map(|d| d.bytes()).collect();
    let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
    Kernel::Scalar.gen_pq(&srcs, &mut p, &mut q);
    assert!(p == ip.bytes() && q == iq.bytes());
}
