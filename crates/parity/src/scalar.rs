//! The scalar reference kernel: portable Rust, eight bytes at a time where the operation allows
//! it (XOR and multiply-by-2 on u64 words), table look-ups for other constants. Every SIMD
//! kernel must produce exactly these bytes.
//!
//! Conventions shared by all kernels (callers in lib.rs guarantee them):
//! every slice has the same length; in `pq_gen` an EMPTY source slice stands for a block of
//! zeros (a missing data block during recovery), which still takes part in Q's powers of g.

use crate::gf;

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Eight independent GF(2^8) doublings in one word: shift each byte left, and XOR 0x1d into
/// the bytes whose top bit fell off (0x11d without its x^8 term).
#[inline(always)]
fn mul2_x8(x: u64) -> u64 {
    let carries = (x & HIGH) >> 7;
    ((x & LOW7) << 1) ^ (carries * 0x1d)
}

#[inline(always)]
fn load(s: &[u8], i: usize) -> u64 {
    u64::from_ne_bytes(s[i..i + 8].try_into().unwrap())
}

#[inline(always)]
fn store(s: &mut [u8], i: usize, v: u64) {
    s[i..i + 8].copy_from_slice(&v.to_ne_bytes());
}

/// dst = XOR of all sources (zeros when there are none).
pub fn xor_gen(srcs: &[&[u8]], dst: &mut [u8]) {
    let len = dst.len();
    let words = len / 8 * 8;
    let mut i = 0;
    while i < words {
        let mut acc = 0u64;
        for s in srcs {
            acc ^= load(s, i);
        }
        store(dst, i, acc);
        i += 8;
    }
    for i in words..len {
        dst[i] = srcs.iter().fold(0, |a, s| a ^ s[i]);
    }
}

/// P = XOR of the sources (if wanted) and Q = Σ g^i · D_i, by Horner's rule from the highest
/// index down: Q = (((D_{n-1})·g + D_{n-2})·g + …)·g + D_0.
pub fn pq_gen(srcs: &[&[u8]], mut p: Option<&mut [u8]>, q: &mut [u8]) {
    let len = q.len();
    let words = len / 8 * 8;
    let mut i = 0;
    while i < words {
        let (mut pa, mut qa) = (0u64, 0u64);
        for s in srcs.iter().rev() {
            qa = mul2_x8(qa);
            if !s.is_empty() {
                let d = load(s, i);
                pa ^= d;
                qa ^= d;
            }
        }
        if let Some(p) = p.as_deref_mut() {
            store(p, i, pa);
        }
        store(q, i, qa);
        i += 8;
    }
    for i in words..len {
        let (mut pa, mut qa) = (0u8, 0u8);
        for s in srcs.iter().rev() {
            qa = gf::mul2(qa);
            if !s.is_empty() {
                pa ^= s[i];
                qa ^= s[i];
            }
        }
        if let Some(p) = p.as_deref_mut() {
            p[i] = pa;
        }
        q[i] = qa;
    }
}

/// Read-modify-write: with delta = old ^ new, P ^= delta and (if given) Q ^= c · delta, where
/// c = g^index of the data block that changed.
pub fn update(old: &[u8], new: &[u8], p: &mut [u8], q: Option<(&mut [u8], u8)>) {
    match q {
        None => {
            for i in 0..p.len() {
                p[i] ^= old[i] ^ new[i];
            }
        }
        Some((q, c)) => {
            let row = gf::mul_row(c);
            for i in 0..p.len() {
                let d = old[i] ^ new[i];
                p[i] ^= d;
                q[i] ^= row[d as usize];
            }
        }
    }
}

/// Recover data block x together with P. `srcs` are the data blocks with D_x empty (zeros);
/// P_x and Q_x are their P and Q (computed into `p` and `dx`), then
/// D_x = g^-x · (Q ^ Q_x) and the true P is P_x ^ D_x. `c` = g^-x.
pub fn recover_dp(srcs: &[&[u8]], c: u8, dx: &mut [u8], p: &mut [u8], q: &[u8]) {
    pq_gen(srcs, Some(&mut *p), dx);
    let row = gf::mul_row(c);
    for i in 0..dx.len() {
        let d = row[(dx[i] ^ q[i]) as usize];
        dx[i] = d;
        p[i] ^= d;
    }
}

/// Recover data blocks x < y. `srcs` are the data blocks with D_x and D_y empty (zeros);
/// their P and Q (P_xy, Q_xy) go into `dx`, `dy` first. With a = P ^ P_xy and b = Q ^ Q_xy:
/// D_x = A·a ^ B·b and D_y = a ^ D_x (Anvin, "The mathematics of RAID-6", section 4).
pub fn recover_dd(
    srcs: &[&[u8]],
    ca: u8,
    cb: u8,
    dx: &mut [u8],
    dy: &mut [u8],
    p: &[u8],
    q: &[u8],
) {
    pq_gen(srcs, Some(&mut *dx), dy);
    let ra = gf::mul_row(ca);
    let rb = gf::mul_row(cb);
    for i in 0..dx.len() {
        let a = dx[i] ^ p[i];
        let b = dy[i] ^ q[i];
        let x = ra[a as usize] ^ rb[b as usize];
        dx[i] = x;
        dy[i] = a ^ x;
    }
}
