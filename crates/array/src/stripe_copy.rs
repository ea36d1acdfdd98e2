//! A full-stripe write to mapped members in one pass over the caller's data.
//!
//! When every member a stripe's write touches is mapped into memory (members in tmpfs, see
//! `member::Mapping`), writing the stripe is memory copies: each data block into its
//! member's pages, and the parity into the parity member's pages. Done the general way
//! (copy the data, compute parity into a scratch buffer, copy the scratch buffer) the data
//! is read twice from memory and the parity written twice. Here the stripe is done a block
//! of [`BLOCK`] bytes at a time: the data blocks are copied to their members, then parity is
//! computed from the caller's blocks while they are still in the CPU's cache, straight into
//! the parity members' pages. Members' pages are written with streaming stores (see
//! [`stream_copy`]; raidlab-parity streams its outputs of [`BLOCK`] bytes too), so their
//! cache lines are not read from memory first.
//!
//! What it is for: the executor's fast path for full-stripe writes (`Array::exec_plan`
//! builds a [`Segment`] from each such plan step, and hands a request's segments to the
//! pool's threads in shares, one operation each).
//! What it is not: a parity kernel (raidlab-parity computes, through `pq`), or a way to
//! write anything but mapped members.

use crate::pq;

/// Bytes per pass over a stripe's blocks: the data blocks of one pass stay in the CPU's
/// second-level cache (16 KiB × 16 data blocks = 256 KiB) until the parity has read them.
pub const BLOCK: usize = 16 << 10;

static ZEROS: [u8; BLOCK] = [0; BLOCK];

/// One parity computation of the stripe, into mapped memory.
pub enum Parity {
    /// `out = XOR of ins` (RAID 4/5).
    P { ins: Vec<*const u8>, out: *mut u8 },
    /// RAID 6 syndromes of `data` in syndrome order (`None`: a zero block).
    Pq {
        data: Vec<Option<*const u8>>,
        p: *mut u8,
        q: *mut u8,
    },
}

/// One stripe's write: `len` bytes from each copy's source to its destination, and the
/// parity of the sources into the parity destinations.
pub struct Segment {
    pub len: usize,
    /// (source, destination): the caller's data block and the member's mapped bytes.
    pub copies: Vec<(*const u8, *mut u8)>,
    pub parity: Vec<Parity>,
}

impl Segment {
    /// Bytes [at, at + len) of every block of this segment.
    fn range(&self, at: usize, len: usize) -> Segment {
        // Pointer offsets only, no access: `wrapping_add` keeps this safe code.
        Segment {
            len,
            copies: self
                .copies
                .iter()
                .map(|&(s, d)| (s.wrapping_add(at), d.wrapping_add(at)))
                .collect(),
            parity: self
                .parity
                .iter()
                .map(|p| match p {
                    Parity::P { ins, out } => Parity::P {
                        ins: ins.iter().map(|&i| i.wrapping_add(at)).collect(),
                        out: out.wrapping_add(at),
                    },
                    Parity::Pq { data, p, q } => Parity::Pq {
                        data: data.iter().map(|d| d.map(|d| d.wrapping_add(at))).collect(),
                        p: p.wrapping_add(at),
                        q: q.wrapping_add(at),
                    },
                })
                .collect(),
        }
    }

    /// # Safety
    /// As [`StripeCopy::run`].
    unsafe fn run(&self, refs: &mut Vec<&[u8]>) {
        let mut at = 0;
        while at < self.len {
            let n = BLOCK.min(self.len - at);
            for &(src, dst) in &self.copies {
                stream_copy(dst.add(at), src.add(at), n);
            }
            // Parity straight into the parity members' pages (raidlab-parity streams
            // outputs of BLOCK bytes and more, as `stream_copy` does).
            for par in &self.parity {
                refs.clear();
                match par {
                    Parity::P { ins, out } => {
                        refs.extend(
                            ins.iter()
                                .map(|&p| std::slice::from_raw_parts(p.add(at), n)),
                        );
                        pq::gen_p(refs, std::slice::from_raw_parts_mut(out.add(at), n));
                    }
                    Parity::Pq { data, p, q } => {
                        refs.extend(data.iter().map(|d| match d {
                            Some(d) => std::slice::from_raw_parts(d.add(at), n),
                            None => &ZEROS[..n],
                        }));
                        pq::gen_pq(
                            refs,
                            std::slice::from_raw_parts_mut(p.add(at), n),
                            std::slice::from_raw_parts_mut(q.add(at), n),
                        );
                    }
                }
            }
            at += n;
        }
    }
}

/// Copy `n` bytes with non-temporal (streaming) stores where the CPU has them: the
/// destination is a member's page, which nothing reads soon, so its cache lines are
/// written without first being read from memory and without evicting the caller's data.
/// The stores are weakly ordered: `StripeCopy::run` fences once at its end; other callers
/// (the full-stripe bench's peer that streams the same bytes) fence themselves.
///
/// # Safety
/// `dst` and `src` point at `n` bytes each, valid, not overlapping.
pub unsafe fn stream_copy(dst: *mut u8, src: *const u8, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        // Head up to a 32-byte boundary and tail below 128 bytes with an ordinary copy.
        let head = dst.align_offset(32).min(n);
        std::ptr::copy_nonoverlapping(src, dst, head);
        let body = (n - head) / 128 * 128;
        if std::arch::is_x86_feature_detected!("avx") {
            stream_avx(dst.add(head), src.add(head), body);
        } else {
            stream_sse2(dst.add(head), src.add(head), body);
        }
        let done = head + body;
        std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), n - done);
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::ptr::copy_nonoverlapping(src, dst, n);
}

/// # Safety
/// As [`stream_copy`]; `dst` 32-byte aligned, `n` a multiple of 128, the CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn stream_avx(dst: *mut u8, src: *const u8, n: usize) {
    use std::arch::x86_64::*;
    let mut i = 0;
    while i < n {
        let s = src.add(i) as *const __m256i;
        let d = dst.add(i) as *mut __m256i;
        let (a, b, c, e) = (
            _mm256_loadu_si256(s),
            _mm256_loadu_si256(s.add(1)),
            _mm256_loadu_si256(s.add(2)),
            _mm256_loadu_si256(s.add(3)),
        );
        _mm256_stream_si256(d, a);
        _mm256_stream_si256(d.add(1), b);
        _mm256_stream_si256(d.add(2), c);
        _mm256_stream_si256(d.add(3), e);
        i += 128;
    }
}

/// # Safety
/// As [`stream_copy`]; `dst` 16-byte aligned, `n` a multiple of 128.
#[cfg(target_arch = "x86_64")]
unsafe fn stream_sse2(dst: *mut u8, src: *const u8, n: usize) {
    use std::arch::x86_64::*;
    let mut i = 0;
    while i < n {
        for k in 0..8 {
            let v = _mm_loadu_si128(src.add(i + 16 * k) as *const __m128i);
            _mm_stream_si128(dst.add(i + 16 * k) as *mut __m128i, v);
        }
        i += 128;
    }
}

/// The full-stripe writes of one request (or a share of them): segments done in order.
#[derive(Default)]
pub struct StripeCopy {
    pub segs: Vec<Segment>,
}

impl StripeCopy {
    /// Bytes written to members (copies and parity).
    pub fn bytes(&self) -> usize {
        self.segs
            .iter()
            .map(|s| s.len * (s.copies.len() + s.parity.len()))
            .sum()
    }

    /// The same work as `n` shares of about equal size, for as many threads: share k holds
    /// the k-th byte range (4 KiB aligned) of every segment's blocks, so each share writes
    /// every member and none waits for another.
    pub fn split(self, n: usize) -> Vec<StripeCopy> {
        const ALIGN: usize = 4096;
        let n = n.max(1);
        let mut out: Vec<StripeCopy> = (0..n).map(|_| StripeCopy::default()).collect();
        for seg in self.segs {
            let piece = seg.len.div_ceil(n).div_ceil(ALIGN).max(1) * ALIGN;
            if piece >= seg.len {
                // Too short to share: to the share with the least so far.
                let k = (0..n).min_by_key(|&k| out[k].bytes()).unwrap_or(0);
                out[k].segs.push(seg);
                continue;
            }
            let mut at = 0;
            let mut k = 0;
            while at < seg.len {
                let len = piece.min(seg.len - at);
                out[k].segs.push(seg.range(at, len));
                at += len;
                k += 1;
            }
        }
        out.retain(|s| !s.segs.is_empty());
        out
    }

    /// Do it.
    ///
    /// # Safety
    /// Every pointer points at its segment's `len` bytes, valid for the duration of the
    /// call; destinations (copy destinations and parity outputs) are writable, overlap
    /// nothing else, and no other thread touches them meanwhile; parity inputs are among
    /// the copy sources or otherwise readable.
    pub unsafe fn run(&self) {
        let mut refs: Vec<&[u8]> = Vec::new();
        for seg in &self.segs {
            seg.run(&mut refs);
        }
        // Streaming stores are weakly ordered: make them visible before the operation
        // counts as done (and before any later write of the same bytes).
        #[cfg(target_arch = "x86_64")]
        std::arch::x86_64::_mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::tests::pattern;

    /// Copies land byte for byte and parity equals the parity crate's over whole blocks,
    /// for lengths that are and are not multiples of BLOCK.
    #[test]
    fn copies_and_parity_match_the_general_path() {
        for len in [512, BLOCK, BLOCK + 4096, 3 * BLOCK + 512, 64 << 10] {
            let srcs: Vec<Vec<u8>> = (0..6).map(|i| pattern(len, 7 + i as u64)).collect();
            let mut dsts: Vec<Vec<u8>> = (0..6).map(|_| vec![0xee; len]).collect();
            let (mut p5, mut p6, mut q6) = (vec![1u8; len], vec![2u8; len], vec![3u8; len]);
            let seg = Segment {
                len,
                copies: srcs
                    .iter()
                    .zip(dsts.iter_mut())
                    .map(|(s, d)| (s.as_ptr(), d.as_mut_ptr()))
                    .collect(),
                parity: vec![
                    Parity::P {
                        ins: srcs.iter().map(|s| s.as_ptr()).collect(),
                        out: p5.as_mut_ptr(),
                    },
                    Parity::Pq {
                        data: srcs
                            .iter()
                            .map(|s| Some(s.as_ptr()))
                            .chain([None])
                            .collect(),
                        p: p6.as_mut_ptr(),
                        q: q6.as_mut_ptr(),
                    },
                ],
            };
            let sc = StripeCopy { segs: vec![seg] };
            let bytes = sc.bytes();
            // Run in shares (3 of them where the length allows), as the executor may.
            let shares = sc.split(3);
            assert_eq!(shares.iter().map(|s| s.bytes()).sum::<usize>(), bytes);
            // Shares are whole 4 KiB pieces: as many as asked when the length allows.
            let want = if len >= 3 * 4096 {
                len.div_ceil(len.div_ceil(3).div_ceil(4096) * 4096)
            } else {
                1
            };
            assert_eq!(shares.len(), want, "len {len}");
            assert!(shares.iter().all(|s| s.bytes() > 0));
            for share in shares {
                // SAFETY: every pointer is into a live Vec of `len` bytes, and a share's
                // ranges are inside it; outputs are distinct.
                unsafe { share.run() };
            }
            assert_eq!(dsts, srcs, "len {len}");
            let refs: Vec<&[u8]> = srcs.iter().map(|s| s.as_slice()).collect();
            let mut want_p = vec![0u8; len];
            raidlab_parity::gen_p(&refs, &mut want_p);
            assert_eq!(p5, want_p, "len {len}");
            let zero = vec![0u8; len];
            let mut refs6 = refs.clone();
            refs6.push(&zero);
            let (mut wp, mut wq) = (vec![0u8; len], vec![0u8; len]);
            raidlab_parity::gen_pq(&refs6, &mut wp, &mut wq);
            assert_eq!(p6, wp, "len {len}");
            assert_eq!(q6, wq, "len {len}");
        }
    }
}
