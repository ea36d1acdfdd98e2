//! Parity over one stripe's blocks, in the terms the I/O path uses (data in syndrome order),
//! on top of raidlab-parity's run-time chosen kernels. Recovery of missing blocks goes
//! through the plans' `RecoverPq` computations (see `Array::compute`).

pub use raidlab_parity::Syndrome;

/// P = XOR of the data blocks.
pub fn gen_p(data: &[&[u8]], p: &mut [u8]) {
    raidlab_parity::gen_p(data, p);
}

/// P and Q of data blocks given in syndrome order (Q = Σ g^k · data[k]).
pub fn gen_pq(data: &[&[u8]], p: &mut [u8], q: &mut [u8]) {
    raidlab_parity::gen_pq(data, p, q);
}

/// Check a stripe (data in syndrome order) and, for RAID 6, locate a single bad block.
pub fn check(data: &[&[u8]], p: &[u8], q: Option<&[u8]>) -> Syndrome {
    raidlab_parity::check(data, p, q)
}
