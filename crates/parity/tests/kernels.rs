//! Every kernel against the definition of P and Q, and recovery of every one- and two-block
//! loss. Randomized with a fixed seed so failures reproduce; lengths cover SIMD block sizes,
//! their tails, and unaligned starts.

use raidlab_parity::{gf, kernels, two_data_coefficients, Block, Kernel, Syndrome};

/// xorshift64*: a small deterministic generator for test data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf.iter_mut() {
            *b = self.next() as u8;
        }
    }
    fn blocks(&mut self, n: usize, len: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|_| {
                let mut v = vec![0u8; len];
                self.fill(&mut v);
                v
            })
            .collect()
    }
}

fn naive_p(data: &[Vec<u8>], len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| data.iter().fold(0, |a, d| a ^ d[i]))
        .collect()
}

/// Q straight from its definition, Σ g^i · D_i, with the table-free field multiply.
fn naive_q(data: &[Vec<u8>], len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            data.iter()
                .enumerate()
                .fold(0, |a, (j, d)| a ^ gf::mul(gf::pow_g(j as i64), d[i]))
        })
        .collect()
}

fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(|b| b.as_slice()).collect()
}

/// Lengths around every block size a kernel uses (8, 32, 64, 128, 256, 512 bytes) and a chunk.
const LENGTHS: &[usize] = &[
    0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1000, 4096,
    4099,
];

#[test]
fn scalar_is_always_available_and_listed_first() {
    let k = kernels();
    assert_eq!(k[0], Kernel::Scalar);
    assert!(k.iter().all(|k| k.is_available()));
    assert!(k.contains(&raidlab_parity::selected()));
    for k in Kernel::ALL {
        assert_eq!(Kernel::from_name(k.name()), Some(k));
    }
}

#[test]
fn gen_p_matches_definition_for_1_to_255_data_blocks() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for k in kernels() {
        for n in 1..=255usize {
            let len = LENGTHS[rng.below(LENGTHS.len() as u64) as usize];
            let data = rng.blocks(n, len);
            let mut p = vec![0xa5u8; len];
            k.gen_p(&refs(&data), &mut p);
            assert_eq!(p, naive_p(&data, len), "kernel {k} n={n} len={len}");
        }
        for &len in LENGTHS {
            let data = rng.blocks(5, len);
            let mut p = vec![0x5au8; len];
            k.gen_p(&refs(&data), &mut p);
            assert_eq!(p, naive_p(&data, len), "kernel {k} len={len}");
        }
    }
}

#[test]
fn gen_pq_matches_definition_for_2_to_253_data_blocks() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for k in kernels() {
        for n in 2..=253usize {
            let len = LENGTHS[rng.below(LENGTHS.len() as u64) as usize];
            let data = rng.blocks(n, len);
            let (mut p, mut q) = (vec![1u8; len], vec![2u8; len]);
            k.gen_pq(&refs(&data), &mut p, &mut q);
            assert_eq!(p, naive_p(&data, len), "P kernel {k} n={n} len={len}");
            assert_eq!(q, naive_q(&data, len), "Q kernel {k} n={n} len={len}");
        }
        for &len in LENGTHS {
            for n in [1, 2, 3, 4, 8, 255] {
                let data = rng.blocks(n, len);
                let (mut p, mut q) = (vec![1u8; len], vec![2u8; len]);
                k.gen_pq(&refs(&data), &mut p, &mut q);
                assert_eq!(p, naive_p(&data, len), "P kernel {k} n={n} len={len}");
                assert_eq!(q, naive_q(&data, len), "Q kernel {k} n={n} len={len}");
            }
        }
    }
}

#[test]
fn kernels_are_byte_identical_on_unaligned_slices() {
    let mut rng = Rng(77);
    let len = 4096 + 77;
    let backing = rng.blocks(10, len + 64);
    for off in [0usize, 1, 3, 17, 31, 33] {
        let data: Vec<&[u8]> = backing
            .iter()
            .enumerate()
            .map(|(i, b)| &b[(off + i) % 64..][..len])
            .collect();
        let (mut p0, mut q0) = (vec![0u8; len + 64], vec![0u8; len + 64]);
        Kernel::Scalar.gen_pq(&data, &mut p0[off..off + len], &mut q0[off..off + len]);
        for k in kernels() {
            let (mut p, mut q) = (vec![0u8; len + 64], vec![0u8; len + 64]);
            k.gen_pq(&data, &mut p[off..off + len], &mut q[off..off + len]);
            assert_eq!(p, p0, "kernel {k} P offset {off}");
            assert_eq!(q, q0, "kernel {k} Q offset {off}");
            let mut x = vec![0u8; len + 64];
            k.gen_p(&data, &mut x[off..off + len]);
            assert_eq!(
                &x[off..off + len],
                &p0[off..off + len],
                "kernel {k} xor offset {off}"
            );
        }
    }
}

/// Every set of missing blocks a stripe of n data + P (+ Q) can lose and survive.
fn loss_sets(n: usize, with_q: bool) -> Vec<Vec<Block>> {
    let mut all: Vec<Block> = (0..n).map(Block::Data).collect();
    all.push(Block::P);
    if with_q {
        all.push(Block::Q);
    }
    let mut sets: Vec<Vec<Block>> = all.iter().map(|&b| vec![b]).collect();
    if with_q {
        for i in 0..all.len() {
            for j in i + 1..all.len() {
                sets.push(vec![all[j], all[i]]); // unsorted on purpose
            }
        }
    }
    sets
}

fn recover_case(
    k: Kernel,
    data: &[Vec<u8>],
    p: &[u8],
    q: Option<&[u8]>,
    lost: &[Block],
    rng: &mut Rng,
) {
    let len = p.len();
    let mut d: Vec<Vec<u8>> = data.to_vec();
    let mut pp = p.to_vec();
    let mut qq = q.map(|q| q.to_vec());
    for b in lost {
        let victim: &mut Vec<u8> = match b {
            Block::Data(i) => &mut d[*i],
            Block::P => &mut pp,
            Block::Q => qq.as_mut().unwrap(),
        };
        rng.fill(victim);
    }
    let mut dm: Vec<&mut [u8]> = d.iter_mut().map(|b| b.as_mut_slice()).collect();
    k.recover(&mut dm, &mut pp, qq.as_deref_mut(), lost)
        .unwrap();
    assert_eq!(d, data, "kernel {k} lost {lost:?} len {len}");
    assert_eq!(pp, p, "kernel {k} lost {lost:?} P");
    assert_eq!(qq.as_deref(), q, "kernel {k} lost {lost:?} Q");
}

/// A zeroed buffer whose start is 64-byte aligned, so that `&buf[off..]` is aligned exactly
/// when `off` is a multiple of 64 (large aligned outputs take the streaming-store path).
struct AlignedBuf {
    lines: Vec<Line>,
    len: usize,
}
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);
impl AlignedBuf {
    fn new(len: usize) -> Self {
        AlignedBuf {
            lines: vec![Line([0; 64]); len.div_ceil(64)],
            len,
        }
    }
    fn bytes(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const u8, self.len) }
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr() as *mut u8, self.len) }
    }
}

#[test]
fn large_outputs_aligned_and_not_are_byte_identical() {
    let mut rng = Rng(2024);
    for len in [16384usize, 65536 + 37, 200_000] {
        let data = rng.blocks(9, len);
        let (mut p0, mut q0) = (vec![0u8; len], vec![0u8; len]);
        Kernel::Scalar.gen_pq(&refs(&data), &mut p0, &mut q0);
        for k in kernels() {
            for off in [0usize, 64, 32, 1] {
                let mut pb = AlignedBuf::new(len + off);
                let mut qb = AlignedBuf::new(len + off);
                k.gen_pq(
                    &refs(&data),
                    &mut pb.bytes_mut()[off..],
                    &mut qb.bytes_mut()[off..],
                );
                assert!(
                    pb.bytes()[off..] == p0[..],
                    "kernel {k} P len {len} off {off}"
                );
                assert!(
                    qb.bytes()[off..] == q0[..],
                    "kernel {k} Q len {len} off {off}"
                );
                let mut xb = AlignedBuf::new(len + off);
                k.gen_p(&refs(&data), &mut xb.bytes_mut()[off..]);
                assert!(
                    xb.bytes()[off..] == p0[..],
                    "kernel {k} xor len {len} off {off}"
                );
            }
        }
    }
}

#[test]
fn recover_every_one_and_two_block_loss() {
    let mut rng = Rng(4242);
    for k in kernels() {
        for n in [1usize, 2, 3, 4, 6, 9] {
            for len in [1usize, 40, 300, 1027, 5000] {
                let data = rng.blocks(n, len);
                let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
                Kernel::Scalar.gen_pq(&refs(&data), &mut p, &mut q);
                for lost in loss_sets(n, true) {
                    recover_case(k, &data, &p, Some(&q), &lost, &mut rng);
                }
                for lost in loss_sets(n, false) {
                    recover_case(k, &data, &p, None, &lost, &mut rng);
                }
            }
        }
    }
}

#[test]
fn recover_two_data_blocks_at_wide_stripes() {
    let mut rng = Rng(99);
    for k in kernels() {
        for n in [16usize, 60, 128, 253, 255] {
            let len = 200;
            let data = rng.blocks(n, len);
            let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
            Kernel::Scalar.gen_pq(&refs(&data), &mut p, &mut q);
            for _ in 0..8 {
                let x = rng.below(n as u64) as usize;
                let mut y = rng.below(n as u64) as usize;
                if y == x {
                    y = (x + 1) % n;
                }
                recover_case(
                    k,
                    &data,
                    &p,
                    Some(&q),
                    &[Block::Data(x), Block::Data(y)],
                    &mut rng,
                );
                recover_case(
                    k,
                    &data,
                    &p,
                    Some(&q),
                    &[Block::Data(x), Block::P],
                    &mut rng,
                );
                recover_case(
                    k,
                    &data,
                    &p,
                    Some(&q),
                    &[Block::Q, Block::Data(y)],
                    &mut rng,
                );
            }
            recover_case(
                k,
                &data,
                &p,
                Some(&q),
                &[Block::Data(0), Block::Data(n - 1)],
                &mut rng,
            );
        }
    }
}

#[test]
fn two_data_coefficients_solve_the_equations() {
    // For random D_x, D_y: a = D_x ^ D_y, b = g^x·D_x ^ g^y·D_y must give back D_x.
    for x in 0..20usize {
        for y in x + 1..25 {
            let (ca, cb) = two_data_coefficients(x, y);
            for (dx, dy) in [(1u8, 2u8), (0xff, 0), (0x53, 0xca), (0, 0x80)] {
                let a = dx ^ dy;
                let b = gf::mul(gf::pow_g(x as i64), dx) ^ gf::mul(gf::pow_g(y as i64), dy);
                assert_eq!(gf::mul(ca, a) ^ gf::mul(cb, b), dx);
            }
        }
    }
}

#[test]
fn update_equals_regeneration() {
    let mut rng = Rng(5);
    for k in kernels() {
        for &len in LENGTHS {
            let n = 7;
            let mut data = rng.blocks(n, len);
            let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
            k.gen_pq(&refs(&data), &mut p, &mut q);
            let mut p5 = p.clone();
            for step in 0..4 {
                let i = (step * 3 + len) % n;
                let mut new = vec![0u8; len];
                rng.fill(&mut new);
                k.update_pq(i, &data[i], &new, &mut p, &mut q);
                k.update_p(&data[i], &new, &mut p5);
                data[i] = new;
                assert_eq!(p, naive_p(&data, len), "kernel {k} len {len}");
                assert_eq!(p5, p);
                assert_eq!(q, naive_q(&data, len), "kernel {k} len {len}");
            }
        }
    }
}

#[test]
fn recover_rejects_impossible_requests_with_one_line_errors() {
    let mut a = vec![0u8; 8];
    let mut b = vec![0u8; 8];
    let mut p = vec![0u8; 8];
    let mut q = vec![0u8; 8];
    let mut short = vec![0u8; 4];
    let cases: Vec<(Vec<Block>, bool, &str)> = vec![
        (
            vec![Block::Data(0), Block::Data(1), Block::P],
            true,
            "at most 2",
        ),
        (vec![Block::Data(0), Block::P], false, "at most 1"),
        (vec![Block::Q], false, "no Q"),
        (vec![Block::Data(2)], true, "out of range"),
        (vec![Block::P, Block::P], true, "twice"),
    ];
    for (lost, with_q, want) in cases {
        let mut d: Vec<&mut [u8]> = vec![&mut a, &mut b];
        let e = raidlab_parity::recover(
            &mut d,
            &mut p,
            if with_q { Some(&mut q) } else { None },
            &lost,
        )
        .unwrap_err();
        assert!(e.to_string().contains(want), "{lost:?}: {e}");
        assert!(!e.to_string().contains('\n'));
        assert!(e.is_usage());
    }
    let mut d: Vec<&mut [u8]> = vec![&mut a, &mut short];
    let e = raidlab_parity::recover(&mut d, &mut p, None, &[Block::P]).unwrap_err();
    assert!(e.to_string().contains("same length"), "{e}");
}

#[test]
fn check_locates_a_single_corrupt_block() {
    let mut rng = Rng(31337);
    for k in kernels() {
        let (n, len) = (8usize, 512usize);
        let data = rng.blocks(n, len);
        let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
        k.gen_pq(&refs(&data), &mut p, &mut q);
        assert_eq!(k.check(&refs(&data), &p, Some(&q)), Syndrome::Clean);
        assert_eq!(k.check(&refs(&data), &p, None), Syndrome::Clean);
        for victim in (0..n).map(Block::Data).chain([Block::P, Block::Q]) {
            let (mut d, mut pp, mut qq) = (data.clone(), p.clone(), q.clone());
            let buf = match victim {
                Block::Data(i) => &mut d[i],
                Block::P => &mut pp,
                Block::Q => &mut qq,
            };
            for _ in 0..3 {
                let at = rng.below(len as u64) as usize;
                buf[at] ^= 1 + rng.below(255) as u8;
            }
            assert_eq!(
                k.check(&refs(&d), &pp, Some(&qq)),
                Syndrome::Bad(victim),
                "kernel {k}"
            );
            let mut dm: Vec<&mut [u8]> = d.iter_mut().map(|b| b.as_mut_slice()).collect();
            k.recover(&mut dm, &mut pp, Some(&mut qq), &[victim])
                .unwrap();
            assert_eq!(d, data);
            assert_eq!((&pp, &qq), (&p, &q));
        }
        // Two data blocks corrupt at the same byte: not explained by any single block.
        let mut d = data.clone();
        d[1][10] ^= 0x11;
        d[5][10] ^= 0x11;
        d[2][20] ^= 0x01;
        assert_eq!(k.check(&refs(&d), &p, Some(&q)), Syndrome::Unlocatable);
        assert_eq!(k.check(&refs(&d), &p, None), Syndrome::Bad(Block::P));
    }
}
