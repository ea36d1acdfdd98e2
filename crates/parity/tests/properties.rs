//! Properties over random stripes (proptest shrinks a failure to the smallest stripe):
//! every kernel computes the scalar reference's bytes, and any loss the stripe tolerates is
//! recovered exactly, for any width, length and pair of missing blocks.

use proptest::prelude::*;
use raidlab_parity::{kernels, Block, Kernel};

fn stripe() -> impl Strategy<Value = (Vec<Vec<u8>>, usize)> {
    (2usize..=40, 0usize..700).prop_flat_map(|(n, len)| {
        (
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), len), n),
            Just(len),
        )
    })
}

fn block_of(i: usize, n: usize) -> Block {
    match i {
        i if i < n => Block::Data(i),
        i if i == n => Block::P,
        _ => Block::Q,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn kernels_agree_with_scalar((data, len) in stripe()) {
        let srcs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
        let (mut p0, mut q0) = (vec![0u8; len], vec![0u8; len]);
        Kernel::Scalar.gen_pq(&srcs, &mut p0, &mut q0);
        for k in kernels() {
            let (mut p, mut q, mut x) = (vec![0u8; len], vec![0u8; len], vec![0u8; len]);
            k.gen_pq(&srcs, &mut p, &mut q);
            k.gen_p(&srcs, &mut x);
            prop_assert_eq!(&p, &p0, "kernel {}", k);
            prop_assert_eq!(&q, &q0, "kernel {}", k);
            prop_assert_eq!(&x, &p0, "kernel {}", k);
        }
    }

    #[test]
    fn any_two_losses_are_recovered((data, len) in stripe(), a in 0usize..64, b in 0usize..64, junk in any::<u8>()) {
        let n = data.len();
        let (x, y) = (a % (n + 2), b % (n + 2));
        let lost: Vec<Block> = if x == y { vec![block_of(x, n)] } else { vec![block_of(x, n), block_of(y, n)] };
        let srcs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
        let (mut p0, mut q0) = (vec![0u8; len], vec![0u8; len]);
        Kernel::Scalar.gen_pq(&srcs, &mut p0, &mut q0);
        for k in kernels() {
            let (mut d, mut p, mut q) = (data.clone(), p0.clone(), q0.clone());
            for l in &lost {
                let buf = match l { Block::Data(i) => &mut d[*i], Block::P => &mut p, Block::Q => &mut q };
                buf.iter_mut().for_each(|v| *v = junk);
            }
            let mut dm: Vec<&mut [u8]> = d.iter_mut().map(|b| b.as_mut_slice()).collect();
            k.recover(&mut dm, &mut p, Some(&mut q), &lost).unwrap();
            prop_assert!(d == data, "kernel {} lost {:?}", k, lost);
            prop_assert!(p == p0 && q == q0, "kernel {} lost {:?}", k, lost);
        }
    }

    #[test]
    fn read_modify_write_matches_regeneration((data, len) in stripe(), which in 0usize..64, fill in any::<u8>()) {
        let n = data.len();
        let i = which % n;
        let srcs: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
        let (mut p, mut q) = (vec![0u8; len], vec![0u8; len]);
        Kernel::Scalar.gen_pq(&srcs, &mut p, &mut q);
        let new: Vec<u8> = (0..len).map(|j| fill.wrapping_add(j as u8)).collect();
        let mut after = data.clone();
        after[i] = new.clone();
        let srcs2: Vec<&[u8]> = after.iter().map(|d| d.as_slice()).collect();
        let (mut p1, mut q1) = (vec![0u8; len], vec![0u8; len]);
        Kernel::Scalar.gen_pq(&srcs2, &mut p1, &mut q1);
        for k in kernels() {
            let (mut pu, mut qu) = (p.clone(), q.clone());
            k.update_pq(i, &data[i], &new, &mut pu, &mut qu);
            prop_assert!(pu == p1 && qu == q1, "kernel {}", k);
        }
    }
}
