//! RAID parity: XOR (P) for RAID 4/5 and P+Q for RAID 6 over GF(2^8), with recovery of any one
//! or two missing blocks of a stripe and incremental updates for read-modify-write.
//!
//! The field is GF(2^8) with polynomial 0x11d and generator g = 2; for data blocks D_0..D_{n-1}
//! of one stripe, P = D_0 ^ D_1 ^ … and Q = Σ g^i · D_i — the coefficients Linux md's raid6 and
//! ISA-L's `pq_gen` use, so parity written here is byte-identical to theirs.
//!
//! Several kernels compute the same bytes: a portable scalar reference and x86-64 SIMD kernels
//! (AVX2, AVX-512BW, GFNI at 256- and 512-bit widths). [`kernels`] lists those this CPU runs;
//! the free functions ([`gen_p`], [`gen_pq`], [`recover`], …) use the fastest of them
//! ([`selected`]); each [`Kernel`] can also be called explicitly (tests, benchmarks).
//!
//! Which block is D_i: i is the block's slot in Q's coefficient order, and callers pass data
//! blocks in that order. For md's RAID 6 (drivers/md/raid5.c, `raid6_d0` and
//! `raid6_idx_to_slot`) the walk starts at the member after Q (at member 0 for the DDF
//! layouts) and data members take slots 0, 1, … in turn; in the DDF layouts P's and Q's
//! members take up a slot too, which counts as zeros — pass a block of zeros there (it is data
//! that never goes missing). The same index is the one [`update_pq`] and [`Block::Data`] take.
//!
//! What this crate is NOT for: it does no I/O, knows nothing of members, chunks or layouts
//! (which member holds P or Q is the geometry crate's business), and keeps no state. Callers
//! pass equal-length byte slices, one per block of a stripe.

pub mod gf;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

use std::fmt;
use std::sync::OnceLock;

/// One block of a stripe, named by its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Block {
    /// Data block with this index (0-based, the index Q's coefficient g^i uses).
    Data(usize),
    /// The XOR parity.
    P,
    /// The GF(2^8) syndrome Σ g^i · D_i.
    Q,
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Block::Data(i) => write!(f, "data block {i}"),
            Block::P => f.write_str("P"),
            Block::Q => f.write_str("Q"),
        }
    }
}

/// A request the parity code cannot satisfy (always the caller's input: exit code 2 territory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParityError {
    message: String,
}

impl ParityError {
    fn new(message: impl Into<String>) -> Self {
        ParityError {
            message: message.into(),
        }
    }
    /// Every parity error is bad input (which blocks are missing, lengths, counts).
    pub fn is_usage(&self) -> bool {
        true
    }
}

impl fmt::Display for ParityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParityError {}

/// The most data blocks Q can protect: g has order 255, so g^255 = g^0 and two data blocks
/// would share a coefficient (md allows at most 253 data blocks in a RAID-6 stripe).
pub const MAX_PQ_DATA: usize = 255;

/// A parity kernel: one implementation of every operation, all byte-identical.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Portable reference (u64 words and tables).
    Scalar,
    /// 256-bit AVX2: XOR, multiply by 2 with compare/add, other constants with byte shuffles
    /// on nibble tables.
    Avx2,
    /// 512-bit AVX-512 (F + BW): as AVX2, twice as wide, with mask registers.
    Avx512,
    /// GFNI at 256 bits (VEX): GF2P8AFFINEQB does each multiply by a constant in one instruction.
    GfniAvx2,
    /// GFNI at 512 bits (EVEX, with AVX-512F/BW).
    GfniAvx512,
}

impl Kernel {
    /// Every kernel this crate has, available here or not, slowest first.
    pub const ALL: [Kernel; 5] = [
        Kernel::Scalar,
        Kernel::Avx2,
        Kernel::Avx512,
        Kernel::GfniAvx2,
        Kernel::GfniAvx512,
    ];

    /// Short name used in benchmark output and `--kernel` style options.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512bw",
            Kernel::GfniAvx2 => "gfni-avx2",
            Kernel::GfniAvx512 => "gfni-avx512",
        }
    }

    /// The kernel with this [`name`](Kernel::name).
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether this CPU can run the kernel.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            k => x86::available(k),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    fn assert_available(self) {
        assert!(
            self.is_available(),
            "parity kernel {} is not supported by this CPU",
            self.name()
        );
    }

    /// P = XOR of the data blocks. Panics if the lengths differ.
    pub fn gen_p(self, data: &[&[u8]], p: &mut [u8]) {
        self.assert_available();
        check_lengths(data, p.len());
        self.prim_xor_gen(data, p);
    }

    /// P = XOR and Q = Σ g^i · D_i of the data blocks. Panics if the lengths differ or there
    /// are more than [`MAX_PQ_DATA`] data blocks.
    pub fn gen_pq(self, data: &[&[u8]], p: &mut [u8], q: &mut [u8]) {
        self.assert_available();
        assert!(
            data.len() <= MAX_PQ_DATA,
            "Q protects at most {MAX_PQ_DATA} data blocks, got {}",
            data.len()
        );
        check_lengths(data, p.len());
        assert_eq!(q.len(), p.len(), "P and Q lengths differ");
        self.prim_pq_gen(data, Some(p), q);
    }

    /// Read-modify-write of one data block in a RAID 4/5 stripe: P ^= old ^ new.
    pub fn update_p(self, old: &[u8], new: &[u8], p: &mut [u8]) {
        self.assert_available();
        assert!(
            old.len() == p.len() && new.len() == p.len(),
            "old, new and P lengths differ"
        );
        self.prim_update(old, new, p, None);
    }

    /// Read-modify-write of data block `index` in a RAID-6 stripe: with delta = old ^ new,
    /// P ^= delta and Q ^= g^index · delta.
    pub fn update_pq(self, index: usize, old: &[u8], new: &[u8], p: &mut [u8], q: &mut [u8]) {
        self.assert_available();
        assert!(
            index < MAX_PQ_DATA,
            "data index {index} beyond Q's {MAX_PQ_DATA} coefficients"
        );
        assert!(
            old.len() == p.len() && new.len() == p.len() && q.len() == p.len(),
            "old, new, P and Q lengths differ"
        );
        self.prim_update(old, new, p, Some((q, gf::pow_g(index as i64))));
    }

    /// Rebuild the `missing` blocks of a stripe in place from the others. `data` holds every
    /// data block (the missing ones' contents are ignored and overwritten), `p` the P block,
    /// `q` the Q block for RAID 6 (None for RAID 4/5). Any one block, or with Q any two, may
    /// be missing: data, data+data, data+P, data+Q, P, Q, P+Q.
    pub fn recover(
        self,
        data: &mut [&mut [u8]],
        p: &mut [u8],
        q: Option<&mut [u8]>,
        missing: &[Block],
    ) -> Result<(), ParityError> {
        self.assert_available();
        let n = data.len();
        let len = p.len();
        if let Some(i) = data.iter().position(|d| d.len() != len) {
            return Err(ParityError::new(format!(
                "parity recovery: data block {i} is {} bytes, P is {len}; all blocks of a stripe must be the same length",
                data[i].len()
            )));
        }
        if let Some(q) = q.as_deref() {
            if q.len() != len {
                return Err(ParityError::new(format!(
                    "parity recovery: Q is {} bytes, P is {len}; all blocks of a stripe must be the same length",
                    q.len()
                )));
            }
            if n > MAX_PQ_DATA {
                return Err(ParityError::new(format!(
                    "parity recovery: {n} data blocks; Q protects at most {MAX_PQ_DATA}"
                )));
            }
        }
        let mut m: Vec<Block> = missing.to_vec();
        m.sort();
        if m.windows(2).any(|w| w[0] == w[1]) {
            return Err(ParityError::new(format!(
                "parity recovery: a block is listed twice in {missing:?}"
            )));
        }
        for b in &m {
            match *b {
                Block::Data(i) if i >= n => {
                    return Err(ParityError::new(format!(
                        "parity recovery: missing data block {i} out of range; the stripe has data blocks 0..{n}"
                    )))
                }
                Block::Q if q.is_none() => {
                    return Err(ParityError::new(
                        "parity recovery: Q listed missing but the stripe has no Q (RAID 4/5)",
                    ))
                }
                _ => {}
            }
        }
        let redundancy = if q.is_some() { 2 } else { 1 };
        if m.len() > redundancy {
            return Err(ParityError::new(format!(
                "parity recovery: {} blocks missing ({}), the stripe tolerates at most {redundancy}",
                m.len(),
                m.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ")
            )));
        }
        match (m.first().copied(), m.get(1).copied()) {
            (None, _) => {}
            (Some(Block::P), None) => {
                let srcs: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
                self.prim_xor_gen(&srcs, p);
            }
            (Some(Block::Q), None) => {
                let srcs: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
                self.prim_pq_gen(&srcs, None, q.unwrap());
            }
            (Some(Block::P), Some(Block::Q)) => {
                let srcs: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
                self.prim_pq_gen(&srcs, Some(p), q.unwrap());
            }
            (Some(Block::Data(x)), None) => {
                let (mut srcs, dx, _) = split_missing(data, x, usize::MAX);
                srcs.retain(|s| !s.is_empty());
                srcs.push(p);
                self.prim_xor_gen(&srcs, dx);
            }
            (Some(Block::Data(x)), Some(Block::Q)) => {
                {
                    let (mut srcs, dx, _) = split_missing(data, x, usize::MAX);
                    srcs.retain(|s| !s.is_empty());
                    srcs.push(p);
                    self.prim_xor_gen(&srcs, dx);
                }
                let srcs: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
                self.prim_pq_gen(&srcs, None, q.unwrap());
            }
            (Some(Block::Data(x)), Some(Block::P)) => {
                let q = q.unwrap();
                let (srcs, dx, _) = split_missing(data, x, usize::MAX);
                self.prim_recover_dp(&srcs, gf::pow_g(-(x as i64)), dx, p, q);
            }
            (Some(Block::Data(x)), Some(Block::Data(y))) => {
                let q = q.unwrap();
                let (srcs, dx, dy) = split_missing(data, x, y);
                let dy = dy.unwrap();
                let (ca, cb) = two_data_coefficients(x, y);
                self.prim_recover_dd(&srcs, ca, cb, dx, dy, p, q);
            }
            other => unreachable!("sorted missing set {other:?}"),
        }
        Ok(())
    }

    fn prim_xor_gen(self, srcs: &[&[u8]], dst: &mut [u8]) {
        match self {
            Kernel::Scalar => scalar::xor_gen(srcs, dst),
            #[cfg(target_arch = "x86_64")]
            k => x86::xor_gen(k, srcs, dst),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!(),
        }
    }

    fn prim_pq_gen(self, srcs: &[&[u8]], p: Option<&mut [u8]>, q: &mut [u8]) {
        match self {
            Kernel::Scalar => scalar::pq_gen(srcs, p, q),
            #[cfg(target_arch = "x86_64")]
            k => x86::pq_gen(k, srcs, p, q),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!(),
        }
    }

    fn prim_update(self, old: &[u8], new: &[u8], p: &mut [u8], q: Option<(&mut [u8], u8)>) {
        match self {
            Kernel::Scalar => scalar::update(old, new, p, q),
            #[cfg(target_arch = "x86_64")]
            k => x86::update(k, old, new, p, q),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!(),
        }
    }

    fn prim_recover_dp(self, srcs: &[&[u8]], c: u8, dx: &mut [u8], p: &mut [u8], q: &[u8]) {
        match self {
            Kernel::Scalar => scalar::recover_dp(srcs, c, dx, p, q),
            #[cfg(target_arch = "x86_64")]
            k => x86::recover_dp(k, srcs, c, dx, p, q),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn prim_recover_dd(
        self,
        srcs: &[&[u8]],
        ca: u8,
        cb: u8,
        dx: &mut [u8],
        dy: &mut [u8],
        p: &[u8],
        q: &[u8],
    ) {
        match self {
            Kernel::Scalar => scalar::recover_dd(srcs, ca, cb, dx, dy, p, q),
            #[cfg(target_arch = "x86_64")]
            k => x86::recover_dd(k, srcs, ca, cb, dx, dy, p, q),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!(),
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The kernels this CPU can run, slowest first (the scalar reference is always there).
pub fn kernels() -> Vec<Kernel> {
    Kernel::ALL
        .into_iter()
        .filter(|k| k.is_available())
        .collect()
}

/// The kernel the free functions use: the fastest available. Preference order, by
/// instructions per byte: GFNI-512, AVX-512BW, GFNI-256, AVX2, scalar.
pub fn selected() -> Kernel {
    static SELECTED: OnceLock<Kernel> = OnceLock::new();
    *SELECTED.get_or_init(|| {
        [
            Kernel::GfniAvx512,
            Kernel::Avx512,
            Kernel::GfniAvx2,
            Kernel::Avx2,
        ]
        .into_iter()
        .find(|k| k.is_available())
        .unwrap_or(Kernel::Scalar)
    })
}

/// Bytes of one call's data and parity blocks above which the SIMD kernels write parity with
/// streaming (non-temporal) stores, past the caches: three quarters of the core's L2 cache
/// (0, always, if the CPU does not report its size). Outputs under 16 KiB or not aligned to
/// the vector width never stream. None where there are no SIMD kernels.
pub fn stream_above() -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        Some(x86::stream_above())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// P = XOR of the data blocks, with the [`selected`] kernel.
pub fn gen_p(data: &[&[u8]], p: &mut [u8]) {
    selected().gen_p(data, p)
}

/// P and Q of the data blocks, with the [`selected`] kernel.
pub fn gen_pq(data: &[&[u8]], p: &mut [u8], q: &mut [u8]) {
    selected().gen_pq(data, p, q)
}

/// RAID 4/5 read-modify-write, with the [`selected`] kernel. See [`Kernel::update_p`].
pub fn update_p(old: &[u8], new: &[u8], p: &mut [u8]) {
    selected().update_p(old, new, p)
}

/// RAID-6 read-modify-write, with the [`selected`] kernel. See [`Kernel::update_pq`].
pub fn update_pq(index: usize, old: &[u8], new: &[u8], p: &mut [u8], q: &mut [u8]) {
    selected().update_pq(index, old, new, p, q)
}

/// Rebuild missing blocks, with the [`selected`] kernel. See [`Kernel::recover`].
pub fn recover(
    data: &mut [&mut [u8]],
    p: &mut [u8],
    q: Option<&mut [u8]>,
    missing: &[Block],
) -> Result<(), ParityError> {
    selected().recover(data, p, q, missing)
}

/// The constants of the two-data-block recovery, for x < y (Anvin, section 4):
/// A = g^(y−x) / (g^(y−x) + 1) and B = g^(−x) / (g^(y−x) + 1), so that
/// D_x = A·(P ^ P_xy) ^ B·(Q ^ Q_xy).
pub fn two_data_coefficients(x: usize, y: usize) -> (u8, u8) {
    assert!(x < y && y < MAX_PQ_DATA);
    let gyx = gf::pow_g((y - x) as i64);
    let denom = gf::inv(gyx ^ 1);
    (gf::mul(gyx, denom), gf::mul(gf::pow_g(-(x as i64)), denom))
}

fn check_lengths(data: &[&[u8]], len: usize) {
    if let Some(i) = data.iter().position(|d| d.len() != len) {
        panic!("data block {i} is {} bytes, parity is {len}: blocks of a stripe must be the same length", data[i].len());
    }
}

/// Split the stripe's data into read-only sources (missing ones as empty slices, which the
/// kernels read as zeros) and the writable missing blocks x and (if y < n) y.
fn split_missing<'a>(
    data: &'a mut [&mut [u8]],
    x: usize,
    y: usize,
) -> (Vec<&'a [u8]>, &'a mut [u8], Option<&'a mut [u8]>) {
    let mut srcs: Vec<&[u8]> = Vec::with_capacity(data.len());
    let mut dx = None;
    let mut dy = None;
    for (i, d) in data.iter_mut().enumerate() {
        if i == x {
            dx = Some(&mut **d);
            srcs.push(&[]);
        } else if i == y {
            dy = Some(&mut **d);
            srcs.push(&[]);
        } else {
            srcs.push(&**d);
        }
    }
    (srcs, dx.expect("x < n"), dy)
}

/// What a consistency check of a stripe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syndrome {
    /// P (and Q) match the data.
    Clean,
    /// Exactly one block is wrong, and it is this one (RAID 6 can name a data block; RAID 4/5
    /// can only say P disagrees, reported as `Bad(Block::P)`).
    Bad(Block),
    /// The mismatches are not explained by any single bad block (two or more are corrupt).
    Unlocatable,
}

impl Kernel {
    /// Check a stripe and, for RAID 6, locate a single corrupt block from the P/Q syndromes:
    /// if only D_z changed by e, then P ^ P' = e and Q ^ Q' = g^z·e, so z = log(ΔQ) − log(ΔP)
    /// at every byte where they differ (Anvin, section 5, "single-disk corruption recovery").
    /// ΔP alone means P is bad; ΔQ alone means Q is bad. Repair with [`Kernel::recover`].
    pub fn check(self, data: &[&[u8]], p: &[u8], q: Option<&[u8]>) -> Syndrome {
        self.assert_available();
        let len = p.len();
        check_lengths(data, len);
        let mut pp = vec![0u8; len];
        match q {
            None => {
                self.prim_xor_gen(data, &mut pp);
                if pp == p {
                    Syndrome::Clean
                } else {
                    Syndrome::Bad(Block::P)
                }
            }
            Some(q) => {
                assert_eq!(q.len(), len, "P and Q lengths differ");
                assert!(data.len() <= MAX_PQ_DATA);
                let mut qq = vec![0u8; len];
                self.prim_pq_gen(data, Some(&mut pp), &mut qq);
                let mut culprit: Option<Block> = None;
                for i in 0..len {
                    let dp = pp[i] ^ p[i];
                    let dq = qq[i] ^ q[i];
                    let here = match (dp, dq) {
                        (0, 0) => continue,
                        (_, 0) => Block::P,
                        (0, _) => Block::Q,
                        _ => {
                            let z = (gf::LOG[dq as usize] as usize + 255
                                - gf::LOG[dp as usize] as usize)
                                % 255;
                            if z >= data.len() {
                                return Syndrome::Unlocatable;
                            }
                            Block::Data(z)
                        }
                    };
                    match culprit {
                        None => culprit = Some(here),
                        Some(c) if c == here => {}
                        Some(_) => return Syndrome::Unlocatable,
                    }
                }
                culprit.map_or(Syndrome::Clean, Syndrome::Bad)
            }
        }
    }
}

/// Check a stripe with the [`selected`] kernel. See [`Kernel::check`].
pub fn check(data: &[&[u8]], p: &[u8], q: Option<&[u8]>) -> Syndrome {
    selected().check(data, p, q)
}
