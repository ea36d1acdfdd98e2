//! Parity over one stripe's blocks, in the terms the I/O path uses (blocks that may be
//! missing, data in syndrome order), on top of raidlab-parity's run-time chosen kernels.

use raidlab_parity::Block;
pub use raidlab_parity::Syndrome;

/// P = XOR of the data blocks.
pub fn gen_p(data: &[&[u8]], p: &mut [u8]) {
    raidlab_parity::gen_p(data, p);
}

/// P and Q of data blocks given in syndrome order (Q = Σ g^k · data[k]).
pub fn gen_pq(data: &[&[u8]], p: &mut [u8], q: &mut [u8]) {
    raidlab_parity::gen_pq(data, p, q);
}

/// The blocks of one stripe over the same byte range: data in syndrome order, P, and for
/// RAID 6 Q (`q` is `Some`). `None` marks a missing block. Rebuilds every missing block; fails
/// if more are missing than the parity covers.
pub fn recover(
    data: &mut [Option<Vec<u8>>],
    p: &mut Option<Vec<u8>>,
    q: Option<&mut Option<Vec<u8>>>,
    len: usize,
) -> Result<(), String> {
    let mut missing: Vec<Block> = (0..data.len())
        .filter(|&i| data[i].is_none())
        .map(Block::Data)
        .collect();
    if p.is_none() {
        missing.push(Block::P);
    }
    let has_q = q.is_some();
    let mut no_q = None;
    let q = q.unwrap_or(&mut no_q);
    if has_q && q.is_none() {
        missing.push(Block::Q);
    }
    let tolerance = if has_q { 2 } else { 1 };
    if missing.len() > tolerance {
        return Err(format!(
            "{} blocks of the stripe are missing; parity covers {tolerance}",
            missing.len()
        ));
    }
    if missing.is_empty() {
        return Ok(());
    }
    for d in data.iter_mut() {
        d.get_or_insert_with(|| vec![0u8; len]);
    }
    let pbuf = p.get_or_insert_with(|| vec![0u8; len]);
    let mut refs: Vec<&mut [u8]> = data.iter_mut().map(|d| d.as_deref_mut().unwrap()).collect();
    let qbuf = if has_q {
        Some(q.get_or_insert_with(|| vec![0u8; len]).as_mut_slice())
    } else {
        None
    };
    raidlab_parity::recover(&mut refs, pbuf, qbuf, &missing).map_err(|e| e.to_string())
}

/// Check a stripe (data in syndrome order) and, for RAID 6, locate a single bad block.
pub fn check(data: &[&[u8]], p: &[u8], q: Option<&[u8]>) -> Syndrome {
    raidlab_parity::check(data, p, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(n: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn any_two_missing_are_recovered_and_three_are_refused() {
        let n = 6;
        let len = 64;
        let d = blocks(n, len, 7);
        let refs: Vec<&[u8]> = d.iter().map(|v| v.as_slice()).collect();
        let mut p = vec![0u8; len];
        let mut q = vec![0u8; len];
        gen_pq(&refs, &mut p, &mut q);
        for a in 0..n + 2 {
            for b in a + 1..n + 2 {
                let mut data: Vec<Option<Vec<u8>>> = d.iter().cloned().map(Some).collect();
                let mut pp = Some(p.clone());
                let mut qq = Some(q.clone());
                for m in [a, b] {
                    match m {
                        m if m < n => data[m] = None,
                        m if m == n => pp = None,
                        _ => qq = None,
                    }
                }
                recover(&mut data, &mut pp, Some(&mut qq), len).unwrap();
                for i in 0..n {
                    assert_eq!(data[i].as_ref().unwrap(), &d[i], "missing {a},{b}");
                }
                assert_eq!(pp.unwrap(), p);
                assert_eq!(qq.unwrap(), q);
            }
        }
        let mut data: Vec<Option<Vec<u8>>> = d.iter().cloned().map(Some).collect();
        data[0] = None;
        data[1] = None;
        data[2] = None;
        assert!(recover(
            &mut data,
            &mut Some(p.clone()),
            Some(&mut Some(q.clone())),
            len
        )
        .is_err());
        let mut data: Vec<Option<Vec<u8>>> = d.iter().cloned().map(Some).collect();
        data[0] = None;
        assert!(
            recover(&mut data, &mut None, None, len).is_err(),
            "RAID 5 cannot lose data and P"
        );
    }
}
