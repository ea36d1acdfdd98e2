//! What writes carry: fio's buffer options (`scramble_buffers`, `refill_buffers`,
//! `zero_buffers`, `buffer_pattern`, `buffer_compress_percentage`, `buffer_compress_chunk`,
//! `dedupe_percentage`, `dedupe_mode`, `dedupe_working_set_percentage`, `dedupe_global`) as
//! plain data, and the generator that fills a write's buffer by them.
//!
//! Data content matters to devices that compress or deduplicate (ZFS with compression or
//! dedup, VDO, most enterprise arrays, many SSD controllers): a benchmark that writes the same
//! block again and again measures their dedupe, not their media. The generator is pure and
//! seeded: a job's writes carry the same bytes on every run with the same seed. Only the real
//! engine fills buffers; a simulated device models no data content.

use serde::{Deserialize, Serialize};

/// The bytes a scrambled sector's stamps take: every 512-byte sector of a write gets its own.
pub const SECTOR: usize = 512;

/// The most bytes `buffer_pattern` takes (fio's limit for its patterns).
pub const MAX_PATTERN: usize = 512;

/// fio's buffer options, as a job gives them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BufferContent {
    /// `scramble_buffers` (default on): a buffer filled once with random bytes is stamped
    /// before each write with the write's device offset and a count (mixed, so they look
    /// random), in every 512-byte sector, so that no two writes carry the same sector
    /// (naive dedupe is defeated, and the bytes do not compress).
    pub scramble: bool,
    /// `refill_buffers`: fresh random bytes for every write (costs CPU; defeats dedupe and
    /// compression).
    pub refill: bool,
    /// `zero_buffers`: every buffer all zeros (and never scrambled).
    pub zero: bool,
    /// `buffer_pattern`: buffers repeat these bytes from their start (never scrambled); with
    /// `compress_percentage`, the compressible part of each chunk repeats them instead of
    /// zeros.
    pub pattern: Vec<u8>,
    /// `buffer_compress_percentage`: each chunk is this much fixed bytes (zeros or the
    /// pattern) after random ones, so that it compresses about that much. Turns on refill.
    pub compress_percentage: Option<u8>,
    /// `buffer_compress_chunk`, bytes (default 512): the span the random-then-fixed layout
    /// repeats over; 0, the whole buffer.
    pub compress_chunk: u64,
    /// `dedupe_percentage`: this share of writes repeat earlier bytes, as `dedupe_mode`
    /// says. Turns on refill.
    pub dedupe_percentage: u8,
    /// `dedupe_mode`: what a deduplicable write repeats.
    #[serde(skip_serializing_if = "DedupeMode::is_repeat")]
    pub dedupe_mode: DedupeMode,
    /// `dedupe_working_set_percentage` (default 5): with `dedupe_mode=working_set`, the
    /// share of the job's size whose blocks the deduplicable writes draw from.
    pub dedupe_working_set_percentage: u8,
    /// `dedupe_global`: the working set is the same for every job (their deduplicable
    /// writes repeat one another's), not each job's own.
    pub dedupe_global: bool,
}

/// fio's `dedupe_mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DedupeMode {
    /// A deduplicable write repeats the last unique write's bytes (fio's default).
    #[default]
    Repeat,
    /// A deduplicable write repeats one of a working set of blocks, drawn at random: the
    /// data dedupes against a set of that size, as a real data set's duplicates spread.
    WorkingSet,
}

impl DedupeMode {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "repeat" => Ok(DedupeMode::Repeat),
            "working_set" => Ok(DedupeMode::WorkingSet),
            other => Err(format!(
                "'{other}' is not a dedupe_mode (valid: repeat, working_set)"
            )),
        }
    }
    fn is_repeat(&self) -> bool {
        *self == DedupeMode::Repeat
    }
}

impl Default for BufferContent {
    fn default() -> Self {
        BufferContent {
            scramble: true,
            refill: false,
            zero: false,
            pattern: Vec::new(),
            compress_percentage: None,
            compress_chunk: SECTOR as u64,
            dedupe_percentage: 0,
            dedupe_mode: DedupeMode::Repeat,
            dedupe_working_set_percentage: 5,
            dedupe_global: false,
        }
    }
}

impl BufferContent {
    pub fn is_default(&self) -> bool {
        *self == BufferContent::default()
    }

    /// Whether each write's buffer is filled afresh (fio: refill_buffers, or implied by
    /// buffer_compress_percentage or dedupe_percentage).
    pub fn refills(&self) -> bool {
        !self.zero
            && (self.refill || self.compress_percentage.is_some() || self.dedupe_percentage > 0)
    }

    /// Whether a write's buffer is stamped before it goes: buffers filled once with random
    /// bytes (not zeros, not a pattern, not refilled).
    pub fn scrambles(&self) -> bool {
        self.scramble && !self.zero && self.pattern.is_empty() && !self.refills()
    }

    /// One line for a job that sets two options that each decide the whole content, or
    /// None.
    pub fn conflict(&self) -> Option<String> {
        (self.zero && !self.pattern.is_empty()).then(|| {
            "zero_buffers and buffer_pattern each set what every buffer holds (valid: one of them)"
                .to_string()
        })
    }
}

/// `buffer_pattern`'s value: `0x` and hex digits (an even number), a quoted string
/// (`"abc"` or `'abc'`), or several of them one after another (`0xdead"beef"`), at most
/// [`MAX_PATTERN`] bytes.
pub fn parse_pattern(value: &str) -> Result<Vec<u8>, String> {
    let valid = "valid: 0x and an even number of hex digits, a quoted string such as \"abc\", or several such one after another";
    let mut out = Vec::new();
    let mut rest = value.trim();
    if rest.is_empty() {
        return Err(format!("an empty pattern ({valid})"));
    }
    while !rest.is_empty() {
        if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let end = hex
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(hex.len());
            let digits = &hex[..end];
            if digits.is_empty() || digits.len() % 2 != 0 {
                return Err(format!(
                    "'{value}': 0x{digits} is not whole bytes of hex digits ({valid})"
                ));
            }
            for i in (0..digits.len()).step_by(2) {
                out.push(u8::from_str_radix(&digits[i..i + 2], 16).expect("hex digits"));
            }
            rest = &hex[end..];
        } else if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let body = &rest[1..];
            let Some(close) = body.find(q) else {
                return Err(format!(
                    "'{value}': a quoted string is not closed ({valid})"
                ));
            };
            out.extend_from_slice(&body.as_bytes()[..close]);
            rest = &body[close + 1..];
        } else {
            return Err(format!("'{value}' is not a pattern ({valid})"));
        }
        if out.len() > MAX_PATTERN {
            return Err(format!(
                "'{value}' is {} bytes (valid: at most {MAX_PATTERN})",
                out.len()
            ));
        }
    }
    if out.is_empty() {
        return Err(format!("'{value}' holds no bytes ({valid})"));
    }
    Ok(out)
}

/// Fills write buffers by a job's [`BufferContent`]: once, when the buffers are allocated
/// ([`ContentGen::initial`]), then before each write ([`ContentGen::before_write`]).
#[derive(Clone, Debug)]
pub struct ContentGen {
    opts: BufferContent,
    seed: u64,
    /// Writes prepared so far.
    writes: u64,
    /// The dedupe draws' state.
    draws: u64,
    /// The content seed of the last write that was not a repeat.
    last_unique: Option<u64>,
    /// `dedupe_mode=working_set`: how many blocks the working set holds (at least 1), and
    /// the seed its blocks' contents come from.
    working_set: (u64, u64),
}

/// The seed of every job's working set under `dedupe_global` ("dedupe" in ASCII).
const GLOBAL_SET: u64 = 0x6465_6475_7065;

impl ContentGen {
    pub fn new(opts: &BufferContent, seed: u64) -> Self {
        ContentGen {
            opts: opts.clone(),
            seed,
            writes: 0,
            draws: seed ^ 0xD1B5_4A32_D192_ED03,
            last_unique: None,
            working_set: (
                1,
                if opts.dedupe_global {
                    GLOBAL_SET
                } else {
                    mix(seed ^ GLOBAL_SET)
                },
            ),
        }
    }

    /// With `dedupe_mode=working_set`, a working set of `blocks` blocks (the job's
    /// `dedupe_working_set_percentage` of its size: `JobSpec::dedupe_set_blocks`).
    pub fn with_dedupe_set(mut self, blocks: u64) -> Self {
        self.working_set.0 = blocks.max(1);
        self
    }

    /// Whether [`ContentGen::before_write`] changes anything (so the caller may skip it).
    pub fn acts_on_writes(&self) -> bool {
        self.opts.refills() || self.opts.scrambles()
    }

    /// Fill a freshly allocated buffer area of slots `slot_bytes` long each: zeros, the
    /// pattern from each slot's start, or pseudo-random bytes.
    pub fn initial(&self, area: &mut [u8], slot_bytes: usize) {
        if self.opts.zero {
            area.fill(0);
        } else if !self.opts.pattern.is_empty() && self.opts.compress_percentage.is_none() {
            for slot in area.chunks_mut(slot_bytes.max(1)) {
                repeat(slot, &self.opts.pattern);
            }
        } else {
            random_bytes(area, 0x2545_F491_4F6C_DD1D);
        }
    }

    /// Before a write of `buf` at device offset `offset`: fill it afresh, or stamp its
    /// sectors, as the options say; otherwise leave it.
    pub fn before_write(&mut self, buf: &mut [u8], offset: u64) {
        let n = self.writes;
        self.writes += 1;
        if self.opts.refills() {
            self.refill(buf, n);
        } else if self.opts.scrambles() {
            scramble(buf, offset, n);
        }
    }

    /// Fill `buf` afresh as the `n`th refilled buffer: bytes of its own, or for
    /// `dedupe_percentage` of them earlier bytes again: the last unique one's, or a block of
    /// the working set drawn at random.
    fn refill(&mut self, buf: &mut [u8], n: u64) {
        let fresh = mix(self.seed ^ mix(n.wrapping_add(1)));
        if self.opts.dedupe_mode == DedupeMode::WorkingSet {
            // The set's blocks are unique the first time they are drawn: fio draws from it
            // with the working set's share added, so that about `dedupe_percentage` of the
            // writes are duplicates (checked against fio 3.33's output: 1 196 of 2 048
            // writes drawn at 50% with a 10% set, 994 of them duplicates).
            let p =
                self.opts.dedupe_percentage as u64 + self.opts.dedupe_working_set_percentage as u64;
            let content = if self.draw(p.min(100)) {
                self.draws = mix(self.draws);
                let (blocks, set) = self.working_set;
                mix(set ^ mix(self.draws % blocks))
            } else {
                fresh
            };
            return self.fill(buf, content);
        }
        let repeat = self.last_unique.is_some() && self.dedupe_draw();
        let content = match self.last_unique {
            Some(prev) if repeat => prev,
            _ => {
                self.last_unique = Some(fresh);
                fresh
            }
        };
        self.fill(buf, content);
    }

    /// Fill `span`, the next stretch of a file being laid out, `block` bytes at a time, as
    /// fio 3.33 lays a file out with the job's buffer content: every block zeros
    /// (`zero_buffers`), the pattern from its start (`buffer_pattern`), or bytes of its own —
    /// random, with the compressible share of each chunk fixed and `dedupe_percentage` of
    /// the blocks repeating the last unique one, as refilled writes carry. (Checked against
    /// fio: a file it lays out for a reading job has all its 4 KiB blocks distinct and does
    /// not compress; with a three-byte pattern the pattern starts again at every block.)
    /// Storage that compresses or deduplicates thus reads a laid-out file as it reads what
    /// the job writes, not as zeros it need not store. Blocks run on across calls when each
    /// span but the last is whole blocks.
    pub fn layout(&mut self, span: &mut [u8], block: usize) {
        let block = block.max(1);
        if self.opts.zero
            || (!self.opts.pattern.is_empty() && self.opts.compress_percentage.is_none())
        {
            // (Zeros, or the pattern from each block's start: what fresh buffers hold.)
            self.initial(span, block);
            return;
        }
        for b in span.chunks_mut(block) {
            self.writes += 1;
            self.refill(b, self.writes - 1);
        }
    }

    /// Whether this write repeats the last unique one (`dedupe_percentage` of them).
    fn dedupe_draw(&mut self) -> bool {
        self.draw(self.opts.dedupe_percentage as u64)
    }

    /// A draw that comes true `p` percent of the time.
    fn draw(&mut self, p: u64) -> bool {
        if p == 0 {
            return false;
        }
        self.draws = mix(self.draws);
        self.draws % 100 < p
    }

    /// A buffer's whole content from one seed: random bytes, with the compressible share of
    /// each chunk fixed (zeros or the pattern).
    fn fill(&self, buf: &mut [u8], content: u64) {
        let Some(pct) = self.opts.compress_percentage else {
            random_bytes(buf, content);
            return;
        };
        let chunk = match self.opts.compress_chunk as usize {
            0 => buf.len().max(1),
            c => c,
        };
        let mut x = content;
        for c in buf.chunks_mut(chunk) {
            let random = c.len() * (100 - pct as usize) / 100;
            x = mix(x);
            random_bytes(&mut c[..random], x);
            if self.opts.pattern.is_empty() {
                c[random..].fill(0);
            } else {
                repeat(&mut c[random..], &self.opts.pattern);
            }
        }
    }
}

/// SplitMix64's finalizer: a well-mixed 64-bit value from any input.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Pseudo-random bytes from `seed` (xorshift64, eight bytes a step).
fn random_bytes(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.copy_from_slice(&x.to_le_bytes());
    }
    let tail = chunks.into_remainder();
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    let n = tail.len();
    tail.copy_from_slice(&x.to_le_bytes()[..n]);
}

/// `pattern` repeated over `buf` from its start.
fn repeat(buf: &mut [u8], pattern: &[u8]) {
    for (b, p) in buf.iter_mut().zip(pattern.iter().cycle()) {
        *b = *p;
    }
}

/// Stamp each whole 512-byte sector of a write with its device offset and the write's count,
/// in one of the sector's eight 64-byte lines (which one turns with the count and the
/// sector), so no two writes carry the same sector. Both go through [`mix`], a bijection:
/// distinct (offset, count) pairs still give distinct stamps, and the stamps look as random
/// as the bytes around them (small numbers written as they are would be mostly zero bytes).
fn scramble(buf: &mut [u8], offset: u64, write: u64) {
    let w = mix(write).to_le_bytes();
    for (i, sector) in buf.chunks_exact_mut(SECTOR).enumerate() {
        let at = ((write as usize).wrapping_add(i) % 8) * 64;
        let o = offset.wrapping_add((i * SECTOR) as u64);
        sector[at..at + 8].copy_from_slice(&mix(o).to_le_bytes());
        sector[at + 8..at + 16].copy_from_slice(&w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn gen(f: impl FnOnce(&mut BufferContent)) -> ContentGen {
        let mut o = BufferContent::default();
        f(&mut o);
        ContentGen::new(&o, 42)
    }

    /// `n` writes of 4 KiB through one buffer (as a job at depth 1 makes them), at offsets
    /// 4 KiB apart: the bytes each carried.
    fn writes(g: &mut ContentGen, n: usize) -> Vec<Vec<u8>> {
        let mut buf = vec![0u8; 4096];
        g.initial(&mut buf, 4096);
        (0..n)
            .map(|i| {
                g.before_write(&mut buf, i as u64 * 4096);
                buf.clone()
            })
            .collect()
    }

    fn distinct<T: std::hash::Hash + Eq>(v: impl IntoIterator<Item = T>) -> usize {
        v.into_iter().collect::<HashSet<_>>().len()
    }

    #[test]
    fn by_default_every_written_sector_differs_and_most_bytes_stay() {
        let mut g = gen(|_| {});
        let w = writes(&mut g, 64);
        let sectors: Vec<&[u8]> = w.iter().flat_map(|b| b.chunks(SECTOR)).collect();
        assert_eq!(distinct(sectors.iter().copied()), 64 * 8);
        // Only the stamps change: two writes differ in at most 16 bytes a sector.
        let changed = w[0].iter().zip(&w[1]).filter(|(a, b)| a != b).count();
        assert!(changed <= 8 * 16, "{changed}");
        // Without scrambling, one buffer writes the same bytes every time.
        let mut g = gen(|o| o.scramble = false);
        assert_eq!(distinct(writes(&mut g, 16)), 1);
    }

    #[test]
    fn refilled_buffers_are_all_unique_and_repeat_with_the_seed() {
        let mut g = gen(|o| o.refill = true);
        let w = writes(&mut g, 32);
        assert_eq!(distinct(w.iter()), 32);
        let mut again = gen(|o| o.refill = true);
        assert_eq!(writes(&mut again, 32), w);
    }

    #[test]
    fn zeros_and_patterns_fill_every_buffer_and_are_not_scrambled() {
        let mut g = gen(|o| o.zero = true);
        assert!(writes(&mut g, 4).iter().all(|b| b.iter().all(|&x| x == 0)));
        let mut g = gen(|o| o.pattern = vec![0xde, 0xad, 0xbe, 0xef, 0x01]);
        for b in writes(&mut g, 4) {
            for (i, x) in b.iter().enumerate() {
                assert_eq!(*x, [0xde, 0xad, 0xbe, 0xef, 0x01][i % 5]);
            }
        }
        // Each slot of an area starts the pattern afresh.
        let mut area = vec![0u8; 3 * 1000];
        gen(|o| o.pattern = b"abc".to_vec()).initial(&mut area, 1000);
        assert_eq!(&area[1000..1003], b"abc");
        assert_eq!(&area[2000..2003], b"abc");
    }

    #[test]
    fn compressible_buffers_hold_the_fixed_share_of_each_chunk() {
        for (pct, chunk) in [(75u8, 512u64), (50, 0), (30, 1000), (100, 512), (0, 512)] {
            let mut g = gen(|o| {
                o.compress_percentage = Some(pct);
                o.compress_chunk = chunk;
            });
            let w = writes(&mut g, 8);
            assert_eq!(distinct(w.iter()), if pct == 100 { 1 } else { 8 });
            for b in &w {
                let span = if chunk == 0 { b.len() } else { chunk as usize };
                for c in b.chunks(span) {
                    let random = c.len() * (100 - pct as usize) / 100;
                    assert!(c[random..].iter().all(|&x| x == 0), "{pct}% {chunk}");
                    // The random part has few zero bytes (1 in 256 on average).
                    let zeros = c[..random].iter().filter(|&&x| x == 0).count();
                    assert!(zeros * 50 <= random.max(50), "{pct}% {chunk}: {zeros}");
                }
            }
        }
        // With a pattern, the fixed part repeats it.
        let mut g = gen(|o| {
            o.compress_percentage = Some(50);
            o.pattern = b"xy".to_vec();
        });
        let b = &writes(&mut g, 1)[0];
        assert_eq!(&b[256..260], b"xyxy");
    }

    /// fio's dedupe_mode=working_set: writes carry blocks of a working set (here 16), each
    /// drawn at random, so the data dedupes against the set whatever order it comes in —
    /// `dedupe_percentage` plus the set's share of them, as fio draws, the set's blocks being
    /// unique the first time; the other writes are unique. With dedupe_global, two jobs (two
    /// seeds) draw from one set; without it, each from its own.
    #[test]
    fn dedupe_working_set_draws_repeats_from_its_set() {
        let ws = |seed: u64, global: bool| {
            let mut o = BufferContent {
                dedupe_percentage: 40,
                dedupe_mode: DedupeMode::WorkingSet,
                dedupe_global: global,
                ..Default::default()
            };
            o.dedupe_working_set_percentage = 5;
            ContentGen::new(&o, seed).with_dedupe_set(16)
        };
        let w = writes(&mut ws(42, false), 2000);
        let mut counts: std::collections::HashMap<&Vec<u8>, u32> = Default::default();
        for b in &w {
            *counts.entry(b).or_default() += 1;
        }
        let repeated: Vec<u32> = counts.values().copied().filter(|&c| c > 1).collect();
        assert_eq!(
            repeated.len(),
            16,
            "every block of the set drawn, nothing else repeated"
        );
        let in_set: u32 = repeated.iter().sum();
        let share = in_set as f64 / 2000.0 * 100.0;
        assert!((share - 45.0).abs() < 4.0, "{share:.1}% from the set");
        let set = |w: &[Vec<u8>]| -> HashSet<Vec<u8>> {
            let mut seen = HashSet::new();
            w.iter()
                .filter(|b| !seen.insert(b.to_vec()))
                .cloned()
                .collect()
        };
        let (a, b) = (set(&w), set(&writes(&mut ws(7, false), 2000)));
        assert!(a.is_disjoint(&b), "each job's own set");
        let (a, b) = (
            set(&writes(&mut ws(42, true), 2000)),
            set(&writes(&mut ws(7, true), 2000)),
        );
        assert_eq!(a, b, "one set for every job under dedupe_global");
    }

    #[test]
    fn dedupe_percentage_repeats_that_share_of_writes() {
        for p in [0u8, 25, 50, 90] {
            let mut g = gen(|o| o.dedupe_percentage = p);
            let w = writes(&mut g, 2000);
            let repeats = 2000 - distinct(w.iter());
            let share = repeats as f64 / 2000.0 * 100.0;
            assert!((share - p as f64).abs() < 4.0, "{p}%: {share:.1}%");
            // A repeat carries the bytes of the last unique write before it.
            let mut seen = HashSet::new();
            let mut last_unique = 0;
            for (i, b) in w.iter().enumerate() {
                if seen.insert(b) {
                    last_unique = i;
                } else {
                    assert!(*b == w[last_unique], "{p}%: write {i}");
                }
            }
        }
        let mut g = gen(|o| o.dedupe_percentage = 100);
        assert_eq!(distinct(writes(&mut g, 50)), 1);
    }

    /// A layout's blocks carry what the job's writes would: distinct random blocks by
    /// default (and without scrambling, which only stamps reused buffers), zeros, the
    /// pattern from each block's start, the compressible share, the deduplicated share; the
    /// same bytes from the same seed, whatever the spans' lengths.
    #[test]
    fn a_layout_carries_the_jobs_content_block_by_block() {
        let lay = |f: &dyn Fn(&mut BufferContent), block: usize, spans: &[usize]| {
            let mut o = BufferContent::default();
            f(&mut o);
            let mut g = ContentGen::new(&o, 7);
            let mut out = Vec::new();
            for &n in spans {
                let mut s = vec![0xeeu8; n];
                g.layout(&mut s, block);
                out.extend_from_slice(&s);
            }
            out
        };
        let blocks = |d: &[u8], b: usize| distinct(d.chunks(b));
        let zeros = |d: &[u8]| d.iter().filter(|&&x| x == 0).count();
        let plain = lay(&|_| {}, 4096, &[64 << 10]);
        assert_eq!(blocks(&plain, 4096), 16);
        assert!(zeros(&plain) < 1024, "{}", zeros(&plain));
        assert_eq!(lay(&|_| {}, 4096, &[32 << 10, 16 << 10, 16 << 10]), plain);
        let unscrambled = lay(&|o| o.scramble = false, 4096, &[64 << 10]);
        assert_eq!(blocks(&unscrambled, 4096), 16);
        assert_eq!(zeros(&lay(&|o| o.zero = true, 4096, &[8192])), 8192);
        let p = lay(&|o| o.pattern = b"abc".to_vec(), 4096, &[8192]);
        assert_eq!(&p[4094..4099], b"caabc");
        assert_eq!(&p[..6], b"abcabc");
        let c = lay(
            &|o| {
                o.compress_percentage = Some(50);
                o.compress_chunk = 1024;
            },
            4096,
            &[64 << 10],
        );
        assert_eq!(blocks(&c, 4096), 16);
        assert!(c.chunks(1024).all(|k| k[512..].iter().all(|&x| x == 0)));
        let d = lay(&|o| o.dedupe_percentage = 50, 4096, &[4 << 20]);
        let unique = blocks(&d, 4096);
        assert!((470..=554).contains(&unique), "{unique} of 1024");
    }

    #[test]
    fn patterns_parse_as_fio_writes_them() {
        assert_eq!(
            parse_pattern("0xdeadBEEF").unwrap(),
            [0xde, 0xad, 0xbe, 0xef]
        );
        assert_eq!(parse_pattern("\"abc\"").unwrap(), b"abc");
        assert_eq!(parse_pattern("'a\"b'").unwrap(), b"a\"b");
        assert_eq!(parse_pattern("0x01\"z\"0x02").unwrap(), [1, b'z', 2]);
        for bad in ["", "0x", "0xabc", "abc", "\"open", "12", "0x12zz", "\"\""] {
            let e = parse_pattern(bad).unwrap_err();
            assert!(e.contains("valid:"), "{bad}: {e}");
        }
        let long = format!("0x{}", "ab".repeat(MAX_PATTERN + 1));
        assert!(parse_pattern(&long).unwrap_err().contains("at most 512"));
    }
}
