//! `verify`: the header every written block carries and the check every read makes.
//!
//! The first [`VERIFY_HEADER_BYTES`] of a block hold, little-endian:
//! `magic "RLVERIF1" | offset u64 | generation u64 | seed u64 | length u64 | crc32c u32 | zeros`.
//! The rest is a pattern drawn from (seed, offset, generation). The checksum covers the whole
//! block with the checksum field taken as zero, so any torn or partly overwritten block fails.
//! Generations increase over a run; a read that finds an older generation than the last write
//! this run completed to that offset has found a stale block.
//!
//! With fio's `verify_pattern` the rest of the block is that pattern, repeated from the
//! header's end, and a read checks it too; with `verify=pattern` the whole block is the
//! pattern and nothing else is checked (no header: nothing tells a stale or misplaced block).
//!
//! With fio's `verify_interval` each span of that many bytes of a block is such a block of
//! its own: its own header, naming its own offset, checked on its own (a span at the end
//! shorter than a header joins the one before it). A write torn part way shows as the
//! span where it stopped.
//!
//! Pure functions over byte slices; the executor decides what to expect.

pub use raidlab_workload::stream::VERIFY_HEADER_BYTES;

pub const MAGIC: &[u8; 8] = b"RLVERIF1";
const CRC_AT: usize = 40;

/// The decoded header of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub offset: u64,
    pub generation: u64,
    pub seed: u64,
    pub length: u64,
    pub crc: u32,
}

/// Why a block failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// No header at all (never written with verify, or overwritten by something else).
    NoHeader { offset: u64 },
    /// A valid block that belongs somewhere else.
    Misplaced { offset: u64, found_offset: u64 },
    /// The header says another length than the read.
    Length {
        offset: u64,
        expected: u64,
        found: u64,
    },
    /// Checksum does not match the contents.
    Torn {
        offset: u64,
        expected_crc: u32,
        found_crc: u32,
    },
    /// A complete block, but older than the last write this run made there.
    Stale {
        offset: u64,
        expected_generation: u64,
        found_generation: u64,
    },
    /// The first byte that differs from `verify_pattern`, `at` bytes into the block.
    Pattern {
        offset: u64,
        at: u64,
        expected: u8,
        found: u8,
    },
}

/// What a job's blocks carry: raidlab's header (unless `verify=pattern`), then fio's
/// `verify_pattern` if the job gives one, else raidlab's own pattern.
#[derive(Clone, Debug)]
pub struct Form {
    pub header: bool,
    pub pattern: Option<std::sync::Arc<[u8]>>,
    /// fio's `verify_interval` (as `JobSpec::verify_span` sets it): each span of this many
    /// bytes carries a header of its own. None: one a block. (Without a header, the pattern
    /// runs on over the whole block.)
    pub span: Option<u64>,
}

impl Default for Form {
    fn default() -> Self {
        Form {
            header: true,
            pattern: None,
            span: None,
        }
    }
}

impl Form {
    /// The spans of a block of `len` bytes that carry a header each, as byte ranges within
    /// it: the whole block, or `span`-sized pieces, a last piece shorter than a header
    /// joined to the one before.
    fn spans(&self, len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
        let n = match self.span {
            Some(n) if self.header && (n as usize) < len => n as usize,
            _ => len.max(1),
        };
        let min = VERIFY_HEADER_BYTES as usize;
        let mut at = 0;
        std::iter::from_fn(move || {
            if at >= len {
                return None;
            }
            let mut end = (at + n).min(len);
            if len - end < min {
                end = len;
            }
            let r = at..end;
            at = end;
            Some(r)
        })
    }
}

impl Mismatch {
    pub fn offset(&self) -> u64 {
        match *self {
            Mismatch::NoHeader { offset }
            | Mismatch::Misplaced { offset, .. }
            | Mismatch::Length { offset, .. }
            | Mismatch::Torn { offset, .. }
            | Mismatch::Stale { offset, .. }
            | Mismatch::Pattern { offset, .. } => offset,
        }
    }
    /// One line: where, what was expected, what was found.
    pub fn describe(&self) -> String {
        match *self {
            Mismatch::NoHeader { offset } => {
                format!("no verify header at offset {offset} (expected magic RLVERIF1, found other data)")
            }
            Mismatch::Misplaced { offset, found_offset } => {
                format!("misplaced block at offset {offset}: expected header offset {offset}, found {found_offset}")
            }
            Mismatch::Length { offset, expected, found } => {
                format!("length mismatch at offset {offset}: expected {expected} bytes, header says {found}")
            }
            Mismatch::Torn { offset, expected_crc, found_crc } => format!(
                "torn block at offset {offset}: header crc32c {expected_crc:#010x}, contents give {found_crc:#010x}"
            ),
            Mismatch::Stale { offset, expected_generation, found_generation } => format!(
                "stale block at offset {offset}: expected generation {expected_generation} (last write), found {found_generation}"
            ),
            Mismatch::Pattern { offset, at, expected, found } => format!(
                "pattern mismatch in the block at offset {offset}, byte {at}: expected {expected:#04x} (verify_pattern), found {found:#04x}"
            ),
        }
    }
}

/// fio's `verify_dump`: a block read from `offset` of `file` that failed its check, written
/// to the working folder as `NAME.OFFSET.received` (NAME: the file's last component), and
/// what it should hold as `NAME.OFFSET.expected` where that is known — its header's write
/// regenerated, or the pattern repeated — as fio names them.
pub fn dump(file: &str, offset: u64, buf: &[u8], form: &Form) -> std::io::Result<()> {
    let name = std::path::Path::new(file).file_name().map_or_else(
        || file.replace('/', "_"),
        |n| n.to_string_lossy().into_owned(),
    );
    std::fs::write(format!("{name}.{offset}.received"), buf)?;
    let expected = match (form.header, read_header(buf)) {
        (true, Some(h)) if buf.len() as u64 >= VERIFY_HEADER_BYTES => {
            let mut e = vec![0u8; buf.len()];
            fill(&mut e, offset, h.generation, h.seed, form);
            Some(e)
        }
        (false, _) => {
            let mut e = vec![0u8; buf.len()];
            fill(&mut e, offset, 0, 0, form);
            Some(e)
        }
        _ => None,
    };
    if let Some(e) = expected {
        std::fs::write(format!("{name}.{offset}.expected"), e)?;
    }
    Ok(())
}

/// Fill `buf` (one block, at least the header long) for a write to `offset`.
pub fn fill_block(buf: &mut [u8], offset: u64, generation: u64, seed: u64) {
    fill(buf, offset, generation, seed, &Form::default());
}

/// Fill `buf` for a write to `offset` as `form` says: each of its spans (see [`Form`]).
pub fn fill(buf: &mut [u8], offset: u64, generation: u64, seed: u64, form: &Form) {
    for r in form.spans(buf.len()) {
        let at = offset + r.start as u64;
        fill_span(&mut buf[r], at, generation, seed, form);
    }
}

/// Fill one span (a whole block unless `verify_interval` cuts it) written to `offset`.
fn fill_span(buf: &mut [u8], offset: u64, generation: u64, seed: u64, form: &Form) {
    if !form.header {
        repeat(buf, form.pattern.as_deref().unwrap_or(&[0]));
        return;
    }
    assert!(
        buf.len() as u64 >= VERIFY_HEADER_BYTES,
        "verify block smaller than its header"
    );
    let h = VERIFY_HEADER_BYTES as usize;
    match form.pattern.as_deref() {
        Some(p) => repeat(&mut buf[h..], p),
        None => fill_pattern(
            &mut buf[h..],
            seed ^ offset.rotate_left(17) ^ generation.rotate_left(41),
        ),
    }
    buf[0..8].copy_from_slice(MAGIC);
    buf[8..16].copy_from_slice(&offset.to_le_bytes());
    buf[16..24].copy_from_slice(&generation.to_le_bytes());
    buf[24..32].copy_from_slice(&seed.to_le_bytes());
    let len = buf.len() as u64;
    buf[32..40].copy_from_slice(&len.to_le_bytes());
    buf[CRC_AT..h].fill(0);
    let crc = block_crc(buf);
    buf[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
}

/// `pattern` over `buf`, again and again from its start.
fn repeat(buf: &mut [u8], pattern: &[u8]) {
    for (b, p) in buf.iter_mut().zip(pattern.iter().cycle()) {
        *b = *p;
    }
}

/// Where `buf` first differs from `pattern` repeated: (index, expected, found).
fn first_difference(buf: &[u8], pattern: &[u8]) -> Option<(usize, u8, u8)> {
    buf.iter()
        .zip(pattern.iter().cycle())
        .position(|(b, p)| b != p)
        .map(|i| (i, pattern[i % pattern.len()], buf[i]))
}

/// Check a block read from `offset` as `form` says, span by span (see [`check_block`]): the
/// first span that fails is the mismatch. `last_write` is the generation and length of the
/// last write this run completed at `offset`, if any: the spans it reached must be at
/// least as new (a whole block is held to it, whatever the length). The generation found
/// in the first span, if it has a header.
pub fn check(
    buf: &[u8],
    offset: u64,
    last_write: Option<(u64, u64)>,
    form: &Form,
) -> Result<Option<u64>, Mismatch> {
    let mut found = None;
    for r in form.spans(buf.len()) {
        let at = offset + r.start as u64;
        let last = match last_write {
            Some((g, len)) if r.start == 0 || (r.start as u64) < len => Some(g),
            _ => None,
        };
        let g = check_span(&buf[r], at, last, form)?;
        found = found.or(g);
    }
    Ok(found)
}

/// Check one span (a whole block unless `verify_interval` cuts it) read from `offset`.
fn check_span(
    buf: &[u8],
    offset: u64,
    last_generation: Option<u64>,
    form: &Form,
) -> Result<Option<u64>, Mismatch> {
    let (from, generation) = if form.header {
        (
            VERIFY_HEADER_BYTES as usize,
            Some(check_block(buf, offset, last_generation)?),
        )
    } else {
        (0, None)
    };
    if let Some(p) = form.pattern.as_deref() {
        if let Some((i, expected, found)) = first_difference(&buf[from.min(buf.len())..], p) {
            return Err(Mismatch::Pattern {
                offset,
                at: (from + i) as u64,
                expected,
                found,
            });
        }
    }
    Ok(generation)
}

/// The pattern after the header: splitmix64 words from `seed`.
fn fill_pattern(buf: &mut [u8], seed: u64) {
    let mut x = seed;
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        c.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    for (i, b) in rest.iter_mut().enumerate() {
        *b = (seed >> (8 * i)) as u8;
    }
}

/// crc32c of the block with its checksum field counted as zero.
fn block_crc(buf: &[u8]) -> u32 {
    let c = crc32c::crc32c(&buf[..CRC_AT]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &buf[CRC_AT + 4..])
}

/// Decode the header, if the block starts with the magic.
pub fn read_header(buf: &[u8]) -> Option<Header> {
    if buf.len() < VERIFY_HEADER_BYTES as usize || &buf[0..8] != MAGIC {
        return None;
    }
    let u = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().unwrap());
    Some(Header {
        offset: u(8),
        generation: u(16),
        seed: u(24),
        length: u(32),
        crc: u32::from_le_bytes(buf[CRC_AT..CRC_AT + 4].try_into().unwrap()),
    })
}

/// Check a block read from `offset`. `last_generation` is the generation of the last write
/// this run completed there, if any. Returns the generation found.
pub fn check_block(buf: &[u8], offset: u64, last_generation: Option<u64>) -> Result<u64, Mismatch> {
    let Some(h) = read_header(buf) else {
        return Err(Mismatch::NoHeader { offset });
    };
    let found_crc = block_crc(buf);
    if h.offset != offset {
        // A whole block written for another offset is misplaced; a damaged one is torn.
        return Err(if found_crc == h.crc {
            Mismatch::Misplaced {
                offset,
                found_offset: h.offset,
            }
        } else {
            Mismatch::Torn {
                offset,
                expected_crc: h.crc,
                found_crc,
            }
        });
    }
    if h.length != buf.len() as u64 {
        return Err(Mismatch::Length {
            offset,
            expected: buf.len() as u64,
            found: h.length,
        });
    }
    if found_crc != h.crc {
        return Err(Mismatch::Torn {
            offset,
            expected_crc: h.crc,
            found_crc,
        });
    }
    if let Some(g) = last_generation {
        if h.generation < g {
            return Err(Mismatch::Stale {
                offset,
                expected_generation: g,
                found_generation: h.generation,
            });
        }
    }
    Ok(h.generation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_block_checks_out() {
        let mut b = vec![0u8; 4096];
        fill_block(&mut b, 8192, 7, 99);
        assert_eq!(check_block(&b, 8192, Some(7)), Ok(7));
        assert_eq!(check_block(&b, 8192, None), Ok(7));
        let h = read_header(&b).unwrap();
        assert_eq!(
            (h.offset, h.generation, h.seed, h.length),
            (8192, 7, 99, 4096)
        );
    }

    #[test]
    fn each_kind_of_damage_is_named() {
        let mut b = vec![0u8; 4096];
        fill_block(&mut b, 8192, 7, 99);
        assert!(matches!(
            check_block(&b, 12288, None),
            Err(Mismatch::Misplaced {
                found_offset: 8192,
                ..
            })
        ));
        assert!(matches!(
            check_block(&b, 8192, Some(8)),
            Err(Mismatch::Stale {
                expected_generation: 8,
                found_generation: 7,
                ..
            })
        ));
        let mut torn = b.clone();
        torn[3000] ^= 1;
        assert!(matches!(
            check_block(&torn, 8192, None),
            Err(Mismatch::Torn { .. })
        ));
        assert!(matches!(
            check_block(&vec![0u8; 4096], 0, None),
            Err(Mismatch::NoHeader { offset: 0 })
        ));
        assert!(matches!(
            check_block(&b[..2048], 8192, None),
            Err(Mismatch::Length { .. })
        ));
        let d = check_block(&torn, 8192, None).unwrap_err().describe();
        assert!(d.starts_with("torn block at offset 8192"), "{d}");
    }

    /// fio's verify_pattern: after the header, the pattern from the header's end; with
    /// verify=pattern, the pattern alone from the block's start. A changed byte is found
    /// where it is, whichever form.
    #[test]
    fn verify_pattern_fills_and_checks_each_form() {
        let pat: std::sync::Arc<[u8]> = vec![0xde, 0xad, 0xbe, 0xef].into();
        let only = Form {
            header: false,
            pattern: Some(pat.clone()),
            span: None,
        };
        let with = Form {
            header: true,
            pattern: Some(pat),
            span: None,
        };
        let mut a = vec![0u8; 4096];
        fill(&mut a, 4096, 3, 9, &only);
        assert_eq!(&a[..8], &[0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(check(&a, 4096, Some((3, 4096)), &only), Ok(None));
        a[1000] = b'z';
        assert_eq!(
            check(&a, 4096, None, &only),
            Err(Mismatch::Pattern {
                offset: 4096,
                at: 1000,
                expected: 0xde,
                found: b'z'
            })
        );
        let mut b = vec![0u8; 4096];
        fill(&mut b, 0, 5, 9, &with);
        let h = VERIFY_HEADER_BYTES as usize;
        assert_eq!(&b[..8], MAGIC);
        assert_eq!(&b[h..h + 4], &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(check(&b, 0, Some((5, 4096)), &with), Ok(Some(5)));
        // A block of raidlab's own pattern has a good header but not the job's pattern.
        let mut own = vec![0u8; 4096];
        fill_block(&mut own, 0, 5, 9);
        assert!(matches!(
            check(&own, 0, None, &with),
            Err(Mismatch::Pattern { at, .. }) if at == h as u64
        ));
        let d = check(&a, 4096, None, &only).unwrap_err().describe();
        assert!(d.contains("byte 1000: expected 0xde"), "{d}");
    }

    /// fio's verify_interval: each 1 KiB span of a 4 KiB block has a header naming its own
    /// offset; a span overwritten by an older write is stale where it is, a span of another
    /// block misplaced, and the last write's generation binds only the spans it reached.
    #[test]
    fn verify_interval_gives_each_span_its_header() {
        let form = Form {
            span: Some(1024),
            ..Form::default()
        };
        let mut b = vec![0u8; 4096];
        fill(&mut b, 8192, 7, 9, &form);
        for k in 0..4 {
            let h = read_header(&b[k * 1024..]).expect("a header per span");
            assert_eq!(
                (h.offset, h.generation, h.length),
                (8192 + 1024 * k as u64, 7, 1024)
            );
        }
        assert_eq!(check(&b, 8192, Some((7, 4096)), &form), Ok(Some(7)));
        // The third span left as an older write had it.
        let mut old = vec![0u8; 4096];
        fill(&mut old, 8192, 6, 9, &form);
        let mut torn = b.clone();
        torn[2048..3072].copy_from_slice(&old[2048..3072]);
        assert_eq!(
            check(&torn, 8192, Some((7, 4096)), &form),
            Err(Mismatch::Stale {
                offset: 8192 + 2048,
                expected_generation: 7,
                found_generation: 6
            })
        );
        // A last write of 2 KiB there binds the first two spans only.
        assert_eq!(check(&torn, 8192, Some((7, 2048)), &form), Ok(Some(7)));
        // A span copied from another block is misplaced; one changed is torn.
        let mut other = vec![0u8; 4096];
        fill(&mut other, 0, 7, 9, &form);
        let mut moved = b.clone();
        moved[1024..2048].copy_from_slice(&other[1024..2048]);
        assert!(matches!(
            check(&moved, 8192, None, &form),
            Err(Mismatch::Misplaced {
                offset: 9216,
                found_offset: 1024
            })
        ));
        let mut bad = b.clone();
        bad[3500] ^= 1;
        assert!(matches!(
            check(&bad, 8192, None, &form),
            Err(Mismatch::Torn { offset: 11264, .. })
        ));
        // Without the span, the whole block is one: its one header covers it.
        assert!(matches!(
            check(&b, 8192, None, &Form::default()),
            Err(Mismatch::Length {
                expected: 4096,
                found: 1024,
                ..
            })
        ));
        // A span at the end shorter than a header joins the one before it.
        let mut odd = vec![0u8; 2048 + 32];
        fill(&mut odd, 0, 1, 2, &form);
        assert_eq!(read_header(&odd[1024..]).unwrap().length, 1024 + 32);
        assert_eq!(check(&odd, 0, Some((1, 2080)), &form), Ok(Some(1)));
    }

    #[test]
    fn pattern_depends_on_offset_and_generation() {
        let (mut a, mut b, mut c) = (vec![0u8; 512], vec![0u8; 512], vec![0u8; 512]);
        fill_block(&mut a, 0, 1, 5);
        fill_block(&mut b, 512, 1, 5);
        fill_block(&mut c, 0, 2, 5);
        assert_ne!(a[64..], b[64..]);
        assert_ne!(a[64..], c[64..]);
    }
}
