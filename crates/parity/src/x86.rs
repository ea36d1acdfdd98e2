//! x86-64 SIMD kernels and their run-time dispatch.
//!
//! Each kernel is a module that defines a vector type `V` of `W` bytes and a handful of
//! primitives (load, store, xor, multiply by 2, multiply by a constant); the algorithms are
//! written once, in `algorithms!`, and instantiated inside each module so that every function
//! carries that kernel's `#[target_feature]` and the primitives inline into it.
//!
//! Techniques (all standard):
//! - Multiply by 2 (Horner's rule for Q): add each byte to itself and XOR 0x1d into the bytes
//!   whose top bit was set (Anvin, "The mathematics of RAID-6", section 3).
//! - Multiply by any constant c with byte shuffles: c·x = T_lo[x & 15] ^ T_hi[x >> 4], each
//!   table 16 entries, looked up 16 bytes at a time by PSHUFB per 128-bit lane.
//! - With GFNI, multiplication by a constant in 0x11d is linear over GF(2), so one
//!   GF2P8AFFINEQB with the constant's 8×8 bit matrix does it (see `gf::affine_matrix`).
//!
//! Loop shape: the destination is built one column block at a time (U vectors wide), reading
//! that block of every source in turn with the accumulators held in registers, so each source
//! byte is loaded once and each destination byte stored once. Tails shorter than one vector go
//! to the scalar kernel, which produces the same bytes.

use crate::{scalar, Kernel};
use std::sync::atomic::{AtomicUsize, Ordering};

pub(crate) fn available(k: Kernel) -> bool {
    match k {
        Kernel::Scalar => true,
        Kernel::Avx2 => is_x86_feature_detected!("avx2"),
        Kernel::Avx512 => {
            is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
        }
        Kernel::GfniAvx2 => is_x86_feature_detected!("gfni") && is_x86_feature_detected!("avx2"),
        Kernel::GfniAvx512 => {
            is_x86_feature_detected!("gfni")
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
        }
    }
}

/// Bytes of one call's sources and outputs above which its outputs stream (see the kernels'
/// `STREAM_MIN`): three quarters of the core's L2 cache, where measurements put the turn
/// (BENCHMARKS.md: on a core with 1 MiB of L2, 576 and 640 KiB ran faster through the cache,
/// 832 KiB and 1 MiB faster streamed). Read from the CPU once; 0 (always stream) if it does
/// not say.
pub(crate) fn stream_above() -> usize {
    let v = STREAM_ABOVE.load(Ordering::Relaxed);
    if v != UNREAD {
        return v;
    }
    let v = l2_bytes() / 4 * 3;
    STREAM_ABOVE.store(v, Ordering::Relaxed);
    v
}

static STREAM_ABOVE: AtomicUsize = AtomicUsize::new(UNREAD);
const UNREAD: usize = usize::MAX;

/// Override [`stream_above`] (tests: force either store path).
#[cfg(test)]
pub(crate) fn set_stream_above(bytes: usize) {
    STREAM_ABOVE.store(bytes, Ordering::Relaxed);
}

/// The core's L2 cache, bytes: CPUID leaf 0x8000_0006, ECX bits 31..16 in KiB (defined alike
/// in Intel's SDM, vol. 2A, and AMD's APM, vol. 3); 0 where the leaf is missing.
fn l2_bytes() -> usize {
    use std::arch::x86_64::__cpuid;
    // SAFETY: CPUID exists on every x86-64 CPU (newer toolchains call it safe).
    #[allow(unused_unsafe)]
    let ecx = unsafe {
        if __cpuid(0x8000_0000).eax >= 0x8000_0006 {
            __cpuid(0x8000_0006).ecx
        } else {
            0
        }
    };
    (ecx >> 16) as usize * 1024
}

// Dispatch. Safety: lib.rs only calls these for kernels whose `available` returned true, so
// the target features each module was compiled for are present; slice lengths are checked
// there too (all equal, empty source slices only in pq_gen).
macro_rules! dispatch {
    ($k:expr, $f:ident($($arg:expr),*)) => {
        match $k {
            Kernel::Avx2 => unsafe { avx2::$f($($arg),*) },
            Kernel::Avx512 => unsafe { avx512::$f($($arg),*) },
            Kernel::GfniAvx2 => unsafe { gfni256::$f($($arg),*) },
            Kernel::GfniAvx512 => unsafe { gfni512::$f($($arg),*) },
            Kernel::Scalar => scalar::$f($($arg),*),
        }
    };
}

pub(crate) fn xor_gen(k: Kernel, srcs: &[&[u8]], dst: &mut [u8]) {
    dispatch!(k, xor_gen(srcs, dst))
}
pub(crate) fn pq_gen(k: Kernel, srcs: &[&[u8]], p: Option<&mut [u8]>, q: &mut [u8]) {
    dispatch!(k, pq_gen(srcs, p, q))
}
pub(crate) fn update(k: Kernel, old: &[u8], new: &[u8], p: &mut [u8], q: Option<(&mut [u8], u8)>) {
    dispatch!(k, update(old, new, p, q))
}
pub(crate) fn recover_dp(k: Kernel, srcs: &[&[u8]], c: u8, dx: &mut [u8], p: &mut [u8], q: &[u8]) {
    dispatch!(k, recover_dp(srcs, c, dx, p, q))
}
#[allow(clippy::too_many_arguments)]
pub(crate) fn recover_dd(
    k: Kernel,
    srcs: &[&[u8]],
    ca: u8,
    cb: u8,
    dx: &mut [u8],
    dy: &mut [u8],
    p: &[u8],
    q: &[u8],
) {
    dispatch!(k, recover_dd(srcs, ca, cb, dx, dy, p, q))
}

/// Source pointers of one call: inline up to `INLINE` sources, on the heap beyond.
/// (Deliberately large: it lives on the stack for one call.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Pointers {
    Inline([*const u8; Pointers::INLINE], usize),
    Heap(Vec<*const u8>),
}

impl Pointers {
    const INLINE: usize = 32;
    fn new(srcs: &[&[u8]]) -> Pointers {
        let ptr = |s: &&[u8]| {
            if s.is_empty() {
                std::ptr::null()
            } else {
                s.as_ptr()
            }
        };
        if srcs.len() <= Self::INLINE {
            let mut a = [std::ptr::null(); Self::INLINE];
            for (d, s) in a.iter_mut().zip(srcs) {
                *d = ptr(s);
            }
            Pointers::Inline(a, srcs.len())
        } else {
            Pointers::Heap(srcs.iter().map(ptr).collect())
        }
    }
}

impl std::ops::Deref for Pointers {
    type Target = [*const u8];
    fn deref(&self) -> &[*const u8] {
        match self {
            Pointers::Inline(a, n) => &a[..*n],
            Pointers::Heap(v) => v,
        }
    }
}

/// The algorithms, over the primitives of the module they are expanded in:
/// `V`, `W`, `load`, `store`, `zero`, `xor`, `xor3`, `mul2_xor`, `M`, `mulc_new`, `mulc`.
/// `$u` is how many vectors one column block holds (register budget of the ISA); `$xu` the
/// same for XOR, whose blocks hold only accumulators; `$xa` the same for XOR of more sources
/// than have a loop of their own, whose blocks also pay for reading the source pointers.
macro_rules! algorithms {
    ($feat:literal, $u:literal, $xu:literal, $xa:literal) => {
        const U: usize = $u;
        const XU: usize = $xu;
        const XA: usize = $xa;

        /// Outputs at least this long are written with non-temporal (streaming) stores when
        /// aligned and the call's sources and outputs together overflow the core's L2 cache
        /// ([`super::stream_above`]): parity of a large stripe is headed for a device, not for
        /// the next read, and streaming it keeps the cache for the sources and saves the
        /// read-for-ownership of every destination line. When everything fits in L2, stores
        /// through the cache are faster: streaming stores then run at the memory's write
        /// rate, which capped P+Q of two 64 KiB blocks at 0.44× ISA-L's rate.
        const STREAM_MIN: usize = 16 * 1024;
        /// The last this-many bytes of a streamed output go through the cache instead, so
        /// that by the closing SFENCE most streaming stores have already drained and the
        /// fence waits for few of them.
        const TAIL_CACHED: usize = 1024;

        #[inline(always)]
        fn streaming(len: usize, blocks: usize, dsts: &[*mut u8]) -> bool {
            len >= STREAM_MIN
                && blocks.saturating_mul(len) > super::stream_above()
                && dsts.iter().all(|d| (*d as usize) % W == 0)
        }

        /// Sources as raw pointers (null for an empty slice = a block of zeros), on the stack
        /// for the usual stripe widths so a call allocates nothing.
        fn pointers(srcs: &[&[u8]]) -> super::Pointers {
            super::Pointers::new(srcs)
        }

        fn tails<'a>(srcs: &[&'a [u8]], from: usize) -> Vec<&'a [u8]> {
            srcs.iter()
                .map(|s| if s.is_empty() { *s } else { &s[from..] })
                .collect()
        }

        /// The column-block loop of [`xor_gen`] for exactly `N` sources: the source pointers
        /// live in registers and the loop over sources is unrolled, so each 32·XU-byte block
        /// costs only its loads, XORs and stores (no pointer-table loads or loop counter).
        /// Returns how many bytes it did (whole blocks).
        #[inline]
        #[target_feature(enable = $feat)]
        unsafe fn xor_blocks<const N: usize>(
            p: &[*const u8],
            d: *mut u8,
            len: usize,
            nt: bool,
        ) -> usize {
            let mut s = [std::ptr::null::<u8>(); N];
            s.copy_from_slice(&p[..N]);
            let mut i = 0;
            while i + XU * W <= len {
                let mut acc: [V; XU] = [zero(); XU];
                for u in 0..XU {
                    acc[u] = load(s[N - 1].add(i + u * W));
                }
                for j in (0..N - 1).rev() {
                    for u in 0..XU {
                        acc[u] = xor(acc[u], load(s[j].add(i + u * W)));
                    }
                }
                if nt && i + TAIL_CACHED < len {
                    for u in 0..XU {
                        store_nt(d.add(i + u * W), acc[u]);
                    }
                } else {
                    for u in 0..XU {
                        store(d.add(i + u * W), acc[u]);
                    }
                }
                i += XU * W;
            }
            i
        }

        /// The same loop for any number of sources (pointers read from the table), in blocks
        /// of `XA` vectors: each block reads every source's pointer and runs a loop over the
        /// sources, which wider blocks pay for less often (with AVX2's 4-vector blocks this
        /// loop ran at 0.4× the unrolled ones; 8 vectors brought it to 0.7×).
        #[inline]
        #[target_feature(enable = $feat)]
        unsafe fn xor_blocks_any(ptrs: &[*const u8], d: *mut u8, len: usize, nt: bool) -> usize {
            let n = ptrs.len();
            let mut i = 0;
            while i + XA * W <= len {
                let s0 = *ptrs.get_unchecked(n - 1);
                let mut acc: [V; XA] = [zero(); XA];
                for u in 0..XA {
                    acc[u] = load(s0.add(i + u * W));
                }
                for j in (0..n - 1).rev() {
                    let s = *ptrs.get_unchecked(j);
                    for u in 0..XA {
                        acc[u] = xor(acc[u], load(s.add(i + u * W)));
                    }
                }
                if nt && i + TAIL_CACHED < len {
                    for u in 0..XA {
                        store_nt(d.add(i + u * W), acc[u]);
                    }
                } else {
                    for u in 0..XA {
                        store(d.add(i + u * W), acc[u]);
                    }
                }
                i += XA * W;
            }
            i
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn xor_gen(srcs: &[&[u8]], dst: &mut [u8]) {
            let len = dst.len();
            let n = srcs.len();
            if n == 0 {
                dst.fill(0);
                return;
            }
            let ptrs = pointers(srcs);
            let d = dst.as_mut_ptr();
            let nt = streaming(len, n + 1, &[d]);
            // The usual stripe widths (up to 16 sources) get a loop of their own: with AVX2,
            // 13 to 16 sources ran at 0.4× through the general loop, measured.
            let mut i = match n {
                1 => xor_blocks::<1>(&ptrs, d, len, nt),
                2 => xor_blocks::<2>(&ptrs, d, len, nt),
                3 => xor_blocks::<3>(&ptrs, d, len, nt),
                4 => xor_blocks::<4>(&ptrs, d, len, nt),
                5 => xor_blocks::<5>(&ptrs, d, len, nt),
                6 => xor_blocks::<6>(&ptrs, d, len, nt),
                7 => xor_blocks::<7>(&ptrs, d, len, nt),
                8 => xor_blocks::<8>(&ptrs, d, len, nt),
                9 => xor_blocks::<9>(&ptrs, d, len, nt),
                10 => xor_blocks::<10>(&ptrs, d, len, nt),
                11 => xor_blocks::<11>(&ptrs, d, len, nt),
                12 => xor_blocks::<12>(&ptrs, d, len, nt),
                13 => xor_blocks::<13>(&ptrs, d, len, nt),
                14 => xor_blocks::<14>(&ptrs, d, len, nt),
                15 => xor_blocks::<15>(&ptrs, d, len, nt),
                16 => xor_blocks::<16>(&ptrs, d, len, nt),
                _ => xor_blocks_any(&ptrs, d, len, nt),
            };
            if nt {
                std::arch::x86_64::_mm_sfence();
            }
            while i + W <= len {
                let mut acc = load((*ptrs.get_unchecked(0)).add(i));
                for j in 1..n {
                    acc = xor(acc, load((*ptrs.get_unchecked(j)).add(i)));
                }
                store(d.add(i), acc);
                i += W;
            }
            if i < len {
                scalar::xor_gen(&tails(srcs, i), &mut dst[i..]);
            }
        }

        /// P and Q of one column block of N vectors at byte offset `i`, by Horner's rule from
        /// the highest index down; null sources are zeros (they still shift Q's powers of g).
        #[inline]
        #[target_feature(enable = $feat)]
        unsafe fn syndrome<const N: usize>(ptrs: &[*const u8], i: usize) -> ([V; N], [V; N]) {
            let mut pa: [V; N] = [zero(); N];
            let mut qa: [V; N] = [zero(); N];
            let mut j = ptrs.len();
            // Start from the highest-index source that is present: Q·2 of zeros is zeros.
            while j > 0 {
                j -= 1;
                let s = *ptrs.get_unchecked(j);
                if !s.is_null() {
                    for u in 0..N {
                        pa[u] = load(s.add(i + u * W));
                        qa[u] = pa[u];
                    }
                    break;
                }
            }
            while j > 0 {
                j -= 1;
                let s = *ptrs.get_unchecked(j);
                if s.is_null() {
                    for u in 0..N {
                        qa[u] = mul2_xor(qa[u], zero());
                    }
                } else {
                    for u in 0..N {
                        let x = load(s.add(i + u * W));
                        pa[u] = xor(pa[u], x);
                        qa[u] = mul2_xor(qa[u], x);
                    }
                }
            }
            (pa, qa)
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn pq_gen(srcs: &[&[u8]], mut p: Option<&mut [u8]>, q: &mut [u8]) {
            let len = q.len();
            let ptrs = pointers(srcs);
            let qd = q.as_mut_ptr();
            let pd = p.as_deref_mut().map(|p| p.as_mut_ptr());
            let blocks = srcs.len() + 1 + usize::from(pd.is_some());
            let nt = streaming(len, blocks, &[qd, pd.unwrap_or(qd)]);
            let mut i = 0;
            while i + U * W <= len {
                let (pa, qa) = syndrome::<U>(&ptrs, i);
                if nt && i + TAIL_CACHED < len {
                    if let Some(pd) = pd {
                        for u in 0..U {
                            store_nt(pd.add(i + u * W), pa[u]);
                        }
                    }
                    for u in 0..U {
                        store_nt(qd.add(i + u * W), qa[u]);
                    }
                } else {
                    if let Some(pd) = pd {
                        for u in 0..U {
                            store(pd.add(i + u * W), pa[u]);
                        }
                    }
                    for u in 0..U {
                        store(qd.add(i + u * W), qa[u]);
                    }
                }
                i += U * W;
            }
            if nt {
                std::arch::x86_64::_mm_sfence();
            }
            while i + W <= len {
                let ([pa], [qa]) = syndrome::<1>(&ptrs, i);
                if let Some(pd) = pd {
                    store(pd.add(i), pa);
                }
                store(qd.add(i), qa);
                i += W;
            }
            if i < len {
                scalar::pq_gen(&tails(srcs, i), p.map(|p| &mut p[i..]), &mut q[i..]);
            }
        }

        #[target_feature(enable = $feat)]
        pub(super) unsafe fn update(
            old: &[u8],
            new: &[u8],
            p: &mut [u8],
            q: Option<(&mut [u8], u8)>,
        ) {
            let len = p.len();
            let (o, nw, pd) = (old.as_ptr(), new.as_ptr(), p.as_mut_ptr());
            let mut i = 0;
            match q {
                None => {
                    while i + W <= len {
                        store(
                            pd.add(i),
                            xor3(load(o.add(i)), load(nw.add(i)), load(pd.add(i))),
                        );
                        i += W;
                    }
                    if i < len {
                        scalar::update(&old[i..], &new[i..], &mut p[i..], None);
                    }
                }
                Some((q, c)) => {
                    let m = mulc_new(c);
                    let qd = q.as_mut_ptr();
                    while i + W <= len {
                        let delta = xor(load(o.add(i)), load(nw.add(i)));
                        store(pd.add(i), xor(load(pd.add(i)), delta));
                        store(qd.add(i), xor(load(qd.add(i)), mulc(&m, delta)));
                        i += W;
                    }
                    if i < len {
                        scalar::update(&old[i..], &new[i..], &mut p[i..], Some((&mut q[i..], c)));
                    }
                }
            }
        }

        /// Data block x and P lost: one pass computes P_x and Q_x (D_x as zeros) per column
        /// block in registers, then D_x = c·(Q ^ Q_x) with c = g^-x, and P = P_x ^ D_x.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn recover_dp(
            srcs: &[&[u8]],
            c: u8,
            dx: &mut [u8],
            p: &mut [u8],
            q: &[u8],
        ) {
            let len = dx.len();
            let ptrs = pointers(srcs);
            let m = mulc_new(c);
            let (xd, pd, qs) = (dx.as_mut_ptr(), p.as_mut_ptr(), q.as_ptr());
            let mut i = 0;
            while i + W <= len {
                let ([px], [qx]) = syndrome::<1>(&ptrs, i);
                let d = mulc(&m, xor(qx, load(qs.add(i))));
                store(xd.add(i), d);
                store(pd.add(i), xor(px, d));
                i += W;
            }
            if i < len {
                scalar::recover_dp(&tails(srcs, i), c, &mut dx[i..], &mut p[i..], &q[i..]);
            }
        }

        /// Data blocks x < y lost: per column block, P_xy and Q_xy in registers, then with
        /// a = P ^ P_xy, b = Q ^ Q_xy: D_x = A·a ^ B·b, D_y = a ^ D_x. One pass over the
        /// stripe; nothing intermediate is written.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn recover_dd(
            srcs: &[&[u8]],
            ca: u8,
            cb: u8,
            dx: &mut [u8],
            dy: &mut [u8],
            p: &[u8],
            q: &[u8],
        ) {
            let len = dx.len();
            let ptrs = pointers(srcs);
            let (ma, mb) = (mulc_new(ca), mulc_new(cb));
            let (xd, yd, ps, qs) = (dx.as_mut_ptr(), dy.as_mut_ptr(), p.as_ptr(), q.as_ptr());
            let mut i = 0;
            while i + U * W <= len {
                let (pa, qa) = syndrome::<U>(&ptrs, i);
                for u in 0..U {
                    let o = i + u * W;
                    let a = xor(pa[u], load(ps.add(o)));
                    let b = xor(qa[u], load(qs.add(o)));
                    let x = xor(mulc(&ma, a), mulc(&mb, b));
                    store(xd.add(o), x);
                    store(yd.add(o), xor(a, x));
                }
                i += U * W;
            }
            while i + W <= len {
                let ([pa], [qa]) = syndrome::<1>(&ptrs, i);
                let a = xor(pa, load(ps.add(i)));
                let b = xor(qa, load(qs.add(i)));
                let x = xor(mulc(&ma, a), mulc(&mb, b));
                store(xd.add(i), x);
                store(yd.add(i), xor(a, x));
                i += W;
            }
            if i < len {
                scalar::recover_dd(
                    &tails(srcs, i),
                    ca,
                    cb,
                    &mut dx[i..],
                    &mut dy[i..],
                    &p[i..],
                    &q[i..],
                );
            }
        }
    };
}

/// AVX2, 32-byte vectors.
mod avx2 {
    use super::scalar;
    use crate::gf;
    use std::arch::x86_64::*;

    type V = __m256i;
    const W: usize = 32;

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(p: *const u8) -> V {
        _mm256_loadu_si256(p as *const V)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store(p: *mut u8, v: V) {
        _mm256_storeu_si256(p as *mut V, v)
    }
    /// Streaming store; `p` must be 32-byte aligned.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store_nt(p: *mut u8, v: V) {
        _mm256_stream_si256(p as *mut V, v)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn zero() -> V {
        _mm256_setzero_si256()
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn xor(a: V, b: V) -> V {
        _mm256_xor_si256(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn xor3(a: V, b: V, c: V) -> V {
        _mm256_xor_si256(_mm256_xor_si256(a, b), c)
    }
    /// 2·q ^ x: double every byte, then where q's top bit was set, XOR in 0x1d (BLENDV picks
    /// by that same top bit, so no compare is needed).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn mul2_xor(q: V, x: V) -> V {
        let d = _mm256_add_epi8(q, q);
        let r = _mm256_blendv_epi8(d, _mm256_xor_si256(d, _mm256_set1_epi8(0x1d)), q);
        _mm256_xor_si256(r, x)
    }
    struct M {
        lo: V,
        hi: V,
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn mulc_new(c: u8) -> M {
        let (lo, hi) = gf::nibble_tables(c);
        M {
            lo: _mm256_broadcastsi128_si256(_mm_loadu_si128(lo.as_ptr() as *const __m128i)),
            hi: _mm256_broadcastsi128_si256(_mm_loadu_si128(hi.as_ptr() as *const __m128i)),
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn mulc(m: &M, x: V) -> V {
        let mask = _mm256_set1_epi8(0x0f);
        let lo = _mm256_and_si256(x, mask);
        let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), mask);
        _mm256_xor_si256(_mm256_shuffle_epi8(m.lo, lo), _mm256_shuffle_epi8(m.hi, hi))
    }

    algorithms!("avx2", 4, 4, 8);
}

/// AVX-512 (F + BW), 64-byte vectors.
mod avx512 {
    use super::scalar;
    use crate::gf;
    use std::arch::x86_64::*;

    type V = __m512i;
    const W: usize = 64;

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn load(p: *const u8) -> V {
        _mm512_loadu_si512(p as *const V)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn store(p: *mut u8, v: V) {
        _mm512_storeu_si512(p as *mut V, v)
    }
    /// Streaming store; `p` must be 64-byte aligned.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn store_nt(p: *mut u8, v: V) {
        _mm512_stream_si512(p as *mut V, v)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn zero() -> V {
        _mm512_setzero_si512()
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn xor(a: V, b: V) -> V {
        _mm512_xor_si512(a, b)
    }
    /// Three-way XOR in one VPTERNLOG (truth table 0x96 = a ^ b ^ c).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn xor3(a: V, b: V, c: V) -> V {
        _mm512_ternarylogic_epi64::<0x96>(a, b, c)
    }
    /// 2·q ^ x: the top bits of q become a byte mask selecting where 0x1d is XORed in.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn mul2_xor(q: V, x: V) -> V {
        let carries = _mm512_movepi8_mask(q);
        let poly = _mm512_maskz_mov_epi8(carries, _mm512_set1_epi8(0x1d));
        _mm512_ternarylogic_epi64::<0x96>(_mm512_add_epi8(q, q), poly, x)
    }
    struct M {
        lo: V,
        hi: V,
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn mulc_new(c: u8) -> M {
        let (lo, hi) = gf::nibble_tables(c);
        M {
            lo: _mm512_broadcast_i32x4(_mm_loadu_si128(lo.as_ptr() as *const __m128i)),
            hi: _mm512_broadcast_i32x4(_mm_loadu_si128(hi.as_ptr() as *const __m128i)),
        }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn mulc(m: &M, x: V) -> V {
        let mask = _mm512_set1_epi8(0x0f);
        let lo = _mm512_and_si512(x, mask);
        let hi = _mm512_and_si512(_mm512_srli_epi16::<4>(x), mask);
        _mm512_xor_si512(_mm512_shuffle_epi8(m.lo, lo), _mm512_shuffle_epi8(m.hi, hi))
    }

    // XOR: 16 vectors (1 KiB of each source) a block. Against ISA-L on an AMD EPYC with
    // AVX-512 (2026-11-24, BENCHMARKS.md), 8 sources of 64 KiB: 1.00–1.06× ISA-L's rate, where
    // 8-vector blocks ran 0.91–0.92×.
    algorithms!("avx512f,avx512bw", 4, 16, 16);
}

/// GFNI with 256-bit VEX vectors (CPUs with GFNI but without AVX-512, and those that run
/// 256-bit code faster).
mod gfni256 {
    use super::scalar;
    use crate::gf;
    use std::arch::x86_64::*;

    type V = __m256i;
    const W: usize = 32;

    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn load(p: *const u8) -> V {
        _mm256_loadu_si256(p as *const V)
    }
    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn store(p: *mut u8, v: V) {
        _mm256_storeu_si256(p as *mut V, v)
    }
    /// Streaming store; `p` must be 32-byte aligned.
    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn store_nt(p: *mut u8, v: V) {
        _mm256_stream_si256(p as *mut V, v)
    }
    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn zero() -> V {
        _mm256_setzero_si256()
    }
    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn xor(a: V, b: V) -> V {
        _mm256_xor_si256(a, b)
    }
    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn xor3(a: V, b: V, c: V) -> V {
        _mm256_xor_si256(_mm256_xor_si256(a, b), c)
    }
    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn mul2_xor(q: V, x: V) -> V {
        const M2: u64 = gf::affine_matrix(2);
        let m2 = _mm256_set1_epi64x(M2 as i64);
        _mm256_xor_si256(_mm256_gf2p8affine_epi64_epi8::<0>(q, m2), x)
    }
    struct M {
        matrix: V,
    }
    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn mulc_new(c: u8) -> M {
        M {
            matrix: _mm256_set1_epi64x(gf::affine_matrix(c) as i64),
        }
    }
    #[inline]
    #[target_feature(enable = "gfni,avx2")]
    unsafe fn mulc(m: &M, x: V) -> V {
        _mm256_gf2p8affine_epi64_epi8::<0>(x, m.matrix)
    }

    algorithms!("gfni,avx2", 4, 8, 8);
}

/// GFNI with 512-bit EVEX vectors.
mod gfni512 {
    use super::scalar;
    use crate::gf;
    use std::arch::x86_64::*;

    type V = __m512i;
    const W: usize = 64;

    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn load(p: *const u8) -> V {
        _mm512_loadu_si512(p as *const V)
    }
    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn store(p: *mut u8, v: V) {
        _mm512_storeu_si512(p as *mut V, v)
    }
    /// Streaming store; `p` must be 64-byte aligned.
    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn store_nt(p: *mut u8, v: V) {
        _mm512_stream_si512(p as *mut V, v)
    }
    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn zero() -> V {
        _mm512_setzero_si512()
    }
    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn xor(a: V, b: V) -> V {
        _mm512_xor_si512(a, b)
    }
    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn xor3(a: V, b: V, c: V) -> V {
        _mm512_ternarylogic_epi64::<0x96>(a, b, c)
    }
    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn mul2_xor(q: V, x: V) -> V {
        const M2: u64 = gf::affine_matrix(2);
        let m2 = _mm512_set1_epi64(M2 as i64);
        _mm512_xor_si512(_mm512_gf2p8affine_epi64_epi8::<0>(q, m2), x)
    }
    struct M {
        matrix: V,
    }
    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn mulc_new(c: u8) -> M {
        M {
            matrix: _mm512_set1_epi64(gf::affine_matrix(c) as i64),
        }
    }
    #[inline]
    #[target_feature(enable = "gfni,avx512f,avx512bw")]
    unsafe fn mulc(m: &M, x: V) -> V {
        _mm512_gf2p8affine_epi64_epi8::<0>(x, m.matrix)
    }

    // (XOR blocks as in `avx512`.)
    algorithms!("gfni,avx512f,avx512bw", 4, 16, 16);
}

#[cfg(test)]
mod tests {
    use crate::{kernels, Kernel};

    #[derive(Clone, Copy)]
    #[repr(C, align(64))]
    struct Line([u8; 64]);

    /// `len` bytes at a 64-byte boundary, as streaming stores need.
    fn lines(len: usize, seed: u8) -> Vec<Line> {
        (0..len / 64)
            .map(|i| {
                let mut l = Line([0; 64]);
                for (j, b) in l.0.iter_mut().enumerate() {
                    *b = (i as u8).wrapping_mul(31) ^ (j as u8).wrapping_mul(7) ^ seed;
                }
                l
            })
            .collect()
    }

    fn bytes(v: &mut [Line]) -> &mut [u8] {
        // SAFETY: `Line` is 64 plain bytes.
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), v.len() * 64) }
    }

    /// Every SIMD kernel's P and P+Q of a stripe whose outputs are aligned and long enough to
    /// stream: the same bytes as the scalar reference with its outputs streamed (the
    /// threshold at 0) and stored through the cache (the threshold above any call). Over 8
    /// and 16 data blocks (XOR loops of their own) and 20 (the general loop).
    #[test]
    fn streamed_and_cached_outputs_are_the_same_bytes() {
        let len = 64 * 1024;
        let mut data: Vec<Vec<Line>> = (0..20)
            .map(|i| lines(len, (i as u8).wrapping_mul(17).wrapping_add(1)))
            .collect();
        let all: Vec<&[u8]> = data.iter_mut().map(|d| &*bytes(d)).collect();
        for n in [8, 16, 20] {
            let srcs = &all[..n];
            let (mut p0, mut q0) = (vec![0u8; len], vec![0u8; len]);
            Kernel::Scalar.gen_pq(srcs, &mut p0, &mut q0);
            for above in [0, usize::MAX - 1] {
                super::set_stream_above(above);
                for k in kernels().into_iter().filter(|k| *k != Kernel::Scalar) {
                    let (mut p, mut q) = (lines(len, 0), lines(len, 0));
                    k.gen_p(srcs, bytes(&mut p));
                    assert!(
                        bytes(&mut p) == &p0[..],
                        "P: kernel {k}, n {n}, threshold {above}"
                    );
                    k.gen_pq(srcs, bytes(&mut p), bytes(&mut q));
                    assert!(
                        bytes(&mut p) == &p0[..],
                        "P of P+Q: kernel {k}, n {n}, threshold {above}"
                    );
                    assert!(
                        bytes(&mut q) == &q0[..],
                        "Q: kernel {k}, n {n}, threshold {above}"
                    );
                }
            }
        }
        super::set_stream_above(super::UNREAD);
    }
}
