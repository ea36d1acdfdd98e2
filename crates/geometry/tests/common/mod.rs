//! A tiny reference executor: runs plans on in-memory members with plain XOR and a slow,
//! table-free GF(2^8) (polynomial 0x11d, generator 2).
#![allow(dead_code)]

use raidlab_geometry::{BlockRef, Child, Compute, Slot, Step, VolumePlan};

pub fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0x1d;
        }
        b >>= 1;
    }
    r
}

pub fn gf_pow2(e: u32) -> u8 {
    (0..e).fold(1u8, |x, _| gf_mul(x, 2))
}

pub fn gf_inv(a: u8) -> u8 {
    assert_ne!(a, 0);
    (1..=255u8).find(|&b| gf_mul(a, b) == 1).unwrap()
}

/// Members as byte vectors, with a set of failed members that must never be touched.
pub struct Members {
    pub data: Vec<Vec<u8>>,
    pub failed: Vec<u32>,
}

impl Members {
    pub fn new(count: usize, size: u64) -> Members {
        Members {
            data: vec![vec![0u8; size as usize]; count],
            failed: vec![],
        }
    }
    fn read(&self, m: u32, off: u64, len: u64) -> Vec<u8> {
        assert!(!self.failed.contains(&m), "plan reads failed member {m}");
        self.data[m as usize][off as usize..(off + len) as usize].to_vec()
    }
    fn write(&mut self, m: u32, off: u64, buf: &[u8]) {
        assert!(!self.failed.contains(&m), "plan writes failed member {m}");
        self.data[m as usize][off as usize..off as usize + buf.len()].copy_from_slice(buf);
    }
}

struct Blocks<'a> {
    user: &'a mut [u8],
    scratch: Vec<Option<Vec<u8>>>,
}

impl Blocks<'_> {
    fn get(&self, b: BlockRef, len: u64) -> Vec<u8> {
        match b {
            BlockRef::User { at } => self.user[at as usize..(at + len) as usize].to_vec(),
            BlockRef::Scratch(i) => {
                let v = self.scratch[i as usize]
                    .clone()
                    .expect("scratch used before it was filled");
                assert_eq!(v.len() as u64, len);
                v
            }
        }
    }
    fn set(&mut self, b: BlockRef, v: Vec<u8>) {
        match b {
            BlockRef::User { at } => {
                self.user[at as usize..at as usize + v.len()].copy_from_slice(&v)
            }
            BlockRef::Scratch(i) => self.scratch[i as usize] = Some(v),
        }
    }
}

fn compute(blocks: &mut Blocks, c: &Compute) {
    match c {
        Compute::Xor { inputs, out, len } => {
            let mut acc = vec![0u8; *len as usize];
            for i in inputs {
                for (a, b) in acc.iter_mut().zip(blocks.get(*i, *len)) {
                    *a ^= b;
                }
            }
            blocks.set(*out, acc);
        }
        Compute::GenPq { data, p, q, len } => {
            let (mut pv, mut qv) = (vec![0u8; *len as usize], vec![0u8; *len as usize]);
            for (i, d) in data.iter().enumerate() {
                if let Some(d) = d {
                    let g = gf_pow2(i as u32);
                    for (j, b) in blocks.get(*d, *len).into_iter().enumerate() {
                        pv[j] ^= b;
                        qv[j] ^= gf_mul(g, b);
                    }
                }
            }
            blocks.set(*p, pv);
            blocks.set(*q, qv);
        }
        Compute::RecoverPq { data, p, q, len } => {
            let n = *len as usize;
            let (mut pk, mut qk) = (vec![0u8; n], vec![0u8; n]);
            let mut unknown = vec![];
            for (i, s) in data.iter().enumerate() {
                match s {
                    Slot::Zero => {}
                    Slot::Known(b) => {
                        let g = gf_pow2(i as u32);
                        for (j, v) in blocks.get(*b, *len).into_iter().enumerate() {
                            pk[j] ^= v;
                            qk[j] ^= gf_mul(g, v);
                        }
                    }
                    Slot::Missing(b) => unknown.push((i as u32, *b)),
                }
            }
            let known = |s: &Slot, blocks: &Blocks| match s {
                Slot::Known(b) => Some(blocks.get(*b, *len)),
                _ => None,
            };
            let (pv, qv) = (known(p, blocks), known(q, blocks));
            let mut solved: Vec<Vec<u8>> = vec![];
            match (unknown.len(), &pv, &qv) {
                (2, Some(pv), Some(qv)) => {
                    let (x, y) = (unknown[0].0, unknown[1].0);
                    let (gx, gy) = (gf_pow2(x), gf_pow2(y));
                    let inv = gf_inv(gx ^ gy);
                    let (mut dx, mut dy) = (vec![0u8; n], vec![0u8; n]);
                    for j in 0..n {
                        let a = pv[j] ^ pk[j];
                        let b = qv[j] ^ qk[j];
                        dx[j] = gf_mul(b ^ gf_mul(gy, a), inv);
                        dy[j] = a ^ dx[j];
                    }
                    solved.push(dx);
                    solved.push(dy);
                }
                (1, Some(pv), _) => solved.push((0..n).map(|j| pv[j] ^ pk[j]).collect()),
                (1, None, Some(qv)) => {
                    let inv = gf_inv(gf_pow2(unknown[0].0));
                    solved.push((0..n).map(|j| gf_mul(qv[j] ^ qk[j], inv)).collect());
                }
                (0, _, _) => {}
                other => panic!(
                    "unsolvable recovery: {} unknowns, p {} q {}",
                    other.0,
                    pv.is_some(),
                    qv.is_some()
                ),
            }
            // Fold recovered data into the sums, then fill missing P / Q.
            for ((i, b), v) in unknown.iter().zip(solved) {
                let g = gf_pow2(*i);
                for j in 0..n {
                    pk[j] ^= v[j];
                    qk[j] ^= gf_mul(g, v[j]);
                }
                blocks.set(*b, v);
            }
            if let Slot::Missing(b) = p {
                blocks.set(*b, pk);
            }
            if let Slot::Missing(b) = q {
                blocks.set(*b, qk);
            }
        }
    }
}

/// Execute a volume plan; `user` is the logical buffer (read into, or written from).
pub fn execute(vp: &VolumePlan, members: &mut Members, user: &mut [u8]) {
    // Rebuild plans have no caller buffer.
    assert!(user.len() as u64 == vp.plan.len || user.is_empty());
    for (step, ch) in vp.plan.steps.iter().zip(&vp.children) {
        execute_step(step, &ch.reads, &ch.writes, members, user);
    }
}

fn execute_step(
    step: &Step,
    reads: &[Child],
    writes: &[Child],
    members: &mut Members,
    user: &mut [u8],
) {
    let mut blocks = Blocks {
        user,
        scratch: vec![None; step.scratch.len()],
    };
    for (io, child) in step.reads.iter().zip(reads) {
        let v = match child {
            Child::Leaf(m) => members.read(*m, io.offset, io.len),
            Child::Array(p) => {
                let mut buf = vec![0u8; io.len as usize];
                execute(p, members, &mut buf);
                buf
            }
        };
        blocks.set(io.block, v);
    }
    for c in &step.compute {
        compute(&mut blocks, c);
    }
    for (io, child) in step.writes.iter().zip(writes) {
        let mut v = blocks.get(io.block, io.len);
        match child {
            Child::Leaf(m) => members.write(*m, io.offset, &v),
            Child::Array(p) => execute(p, members, &mut v),
        }
    }
}

/// Deterministic pseudo-random bytes.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
