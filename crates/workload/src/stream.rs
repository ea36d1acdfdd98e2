//! The deterministic request stream: the same [`JobSpec`], instance and seed always give the
//! same sequence of [`Request`]s, so the simulator replays exactly what the engine issues.
//!
//! Offsets of random patterns are aligned to the request's block size within the job's
//! region `[start, start + len)`. As in fio, a pass with one fixed block size touches each
//! block once, in an order shuffled anew each pass ([`BlockShuffle`]). With several block
//! sizes (`bssplit`, `bsrange`; multiples of the smallest) a pass keeps fio's random map
//! ([`SpanMap`]): a random block of the smallest size, the next free one if it is taken,
//! and the request cut short where it would run into blocks already done, so each byte is
//! moved once a pass (and requests come out shorter than drawn as the pass fills, as fio's
//! do). With `norandommap`
//! (xdd's `-seek range`, IOMeter) or a `blockalign`, each offset is drawn uniformly, a block
//! possibly more than once. Sequential patterns walk the region in order and start again at
//! its beginning for each pass. No request ever leaves the region.

use crate::distribution::OffsetDist;
use crate::spec::{JobSpec, SpecError};
use serde::{Deserialize, Serialize};

/// Bytes at the start of each block that `verify` reserves for its header.
pub const VERIFY_HEADER_BYTES: u64 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    Read,
    Write,
    /// A discard: the block's data released (TRIM, UNMAP, BLKDISCARD, a hole punched).
    Trim,
}

impl Dir {
    /// fio's name of the direction: `read`, `write`, `trim`.
    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}

/// One I/O request of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Position in the job's stream, from 0.
    pub seq: u64,
    /// Pass over the region, from 0 (fio's `loops`; time-based runs keep counting).
    pub pass: u32,
    /// Which of the job's files (its instance's `files`, from 0) the request goes to.
    #[serde(default)]
    pub file: u32,
    pub offset: u64,
    pub len: u64,
    pub dir: Dir,
}

/// xoshiro256** seeded through splitmix64: small, fast, and the same on every machine.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

pub(crate) fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        Rng {
            s: [
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
            ],
        }
    }
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }
    /// Uniform in `0..n` (n > 0), without modulo bias (Lemire's method).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// One running copy of a job: which spec, which of its files, which of its `numjobs`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInstance {
    /// Index of the job spec in the run.
    pub spec_index: usize,
    /// Which of the spec's runs of files the instance has (see `files`): 0 for a job over
    /// all of its files, the file's index for `job_per_file`.
    pub file_index: usize,
    /// The instance's files, as indices into the spec's `filenames`, in the order its
    /// requests' `file` counts them.
    #[serde(default)]
    pub files: Vec<usize>,
    /// Which of the spec's `numjobs`, from its `first_job` (0 but in a rank of an MPI run).
    pub job_index: u32,
    /// Position among all instances of the run; distinguishes seeds.
    pub global_index: u32,
}

impl JobInstance {
    /// Expand specs into instances: each spec's files make one job (fio's way with
    /// `filename=a:b`), or runs of `files_per_job` files each make one (`job_per_file`:
    /// one file each), and each such job has `numjobs` instances.
    pub fn expand(specs: &[JobSpec]) -> Vec<JobInstance> {
        let mut out = Vec::new();
        for (si, s) in specs.iter().enumerate() {
            for (gi, files) in s.file_runs().into_iter().enumerate() {
                for j in 0..s.numjobs {
                    let global_index = out.len() as u32;
                    out.push(JobInstance {
                        spec_index: si,
                        file_index: gi,
                        files: files.clone(),
                        job_index: s.first_job + j,
                        global_index,
                    });
                }
            }
        }
        out
    }
    /// The seed of this instance's stream: apart for every instance of the run, as fio
    /// seeds each job by its number, so two job sections alike (or a section and its
    /// numjobs copies) draw their own offsets rather than the same ones side by side.
    /// (The first section's seeds are those they always were.)
    pub fn seed(&self, spec: &JobSpec) -> u64 {
        let mut x = spec.randseed
            ^ ((self.file_index as u64) << 40)
            ^ ((self.job_index as u64) << 20)
            ^ (self.spec_index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        splitmix64(&mut x)
    }
}

/// fio's random map for a random job of several block sizes (its `axmap`): a bit for each
/// block of the smallest size, set once a request has moved it. A drawn block already done
/// gives way to the next free one (going round past the region's end), and a request is cut
/// short at the first block done after its start (fio's `mark_random_map`), so a pass moves
/// each byte once.
#[derive(Clone, Debug)]
pub struct SpanMap {
    /// Bytes a bit stands for.
    unit: u64,
    /// Bits (blocks of the region).
    blocks: u64,
    words: Vec<u64>,
    /// Blocks not yet moved.
    free: u64,
}

impl SpanMap {
    fn new(blocks: u64, unit: u64) -> SpanMap {
        SpanMap {
            unit,
            blocks,
            words: vec![0; blocks.div_ceil(64) as usize],
            free: blocks,
        }
    }

    fn reset(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.free = self.blocks;
    }

    fn is_set(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    /// The first free block after `b`, going round to the start (some block is free).
    fn next_free(&self, b: u64) -> u64 {
        debug_assert!(self.free > 0);
        let n = self.words.len();
        let from = b + 1;
        let (w0, bit0) = ((from / 64) as usize % n, from % 64);
        // The first word from `from`'s bit on, then whole words, round to the first word's
        // lower bits.
        let first = if from < self.blocks {
            !self.words[w0] & (!0u64 << bit0)
        } else {
            0
        };
        if first != 0 {
            let at = w0 as u64 * 64 + u64::from(first.trailing_zeros());
            if at < self.blocks {
                return at;
            }
        }
        let start = if from < self.blocks { w0 + 1 } else { 0 };
        for k in 0..n {
            let w = (start + k) % n;
            let free = !self.words[w];
            if free != 0 {
                let at = w as u64 * 64 + u64::from(free.trailing_zeros());
                if at < self.blocks {
                    return at;
                }
            }
        }
        unreachable!("a block is free")
    }

    /// Mark up to `n` blocks from `b` (free) as moved, stopping at the first already moved;
    /// how many were marked (at least 1).
    fn take(&mut self, b: u64, n: u64) -> u64 {
        let mut k = 0;
        while k < n && !self.is_set(b + k) {
            let at = b + k;
            self.words[(at / 64) as usize] |= 1 << (at % 64);
            k += 1;
        }
        self.free -= k;
        k
    }
}

/// A permutation of the block indices `0..n`, one per key: a four-round Feistel network over
/// the smallest even number of bits that holds `n`, walked again from any index it maps past
/// `n` (cycle walking, under four steps on average), so no table of `n` entries is kept.
#[derive(Clone, Copy, Debug)]
pub struct BlockShuffle {
    n: u64,
    /// Bits of each half of the network's domain.
    half: u32,
    keys: [u64; 4],
}

impl BlockShuffle {
    /// The permutation of `0..n` (n ≥ 1) drawn by `key`.
    pub fn new(n: u64, key: u64) -> BlockShuffle {
        debug_assert!(n >= 1);
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        let half = bits.div_ceil(2).max(1);
        let mut k = key;
        let keys = [
            splitmix64(&mut k),
            splitmix64(&mut k),
            splitmix64(&mut k),
            splitmix64(&mut k),
        ];
        BlockShuffle { n, half, keys }
    }
    /// Where index `i` (< n) goes.
    #[inline]
    pub fn at(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = i;
        loop {
            x = self.round_trip(x);
            if x < self.n {
                return x;
            }
        }
    }
    #[inline(always)]
    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for &k in &self.keys {
            let mut h = r ^ k;
            let f = splitmix64(&mut h) & mask;
            (l, r) = (r, l ^ f);
        }
        l << self.half | r
    }
}

/// The requests of one job instance, in issue order.
#[derive(Clone, Debug)]
pub struct RequestStream {
    spec: JobSpec,
    start: u64,
    len: u64,
    read_percent: u8,
    /// The direction of a job's requests that are not reads: its trims for a trim pattern
    /// (which reads nothing and writes only after a trim), else its writes.
    not_read: Dir,
    random: bool,
    infinite: bool,
    offsets: Rng,
    dirs: Rng,
    sizes: Rng,
    seq: u64,
    pass: u32,
    /// Bytes one pass transfers: `io_size`, else the region's length.
    pass_bytes: u64,
    /// Bytes issued in this pass.
    cursor: u64,
    /// Sequential positions within the region, of reads and of writes apart, as fio keeps
    /// them (`rw=rw` reads 0, 4k, 8k, … and writes 0, 4k, … behind them); each wraps to 0
    /// when `io_size` exceeds the region.
    pos: [u64; 3],
    /// The direction and block size of every request when no draw picks either (one
    /// direction, one block size for it): such streams take a shorter path.
    fixed: Option<(Dir, u64)>,
    /// The block sizes of reads and of writes when both directions are drawn and neither
    /// draws a size: such streams draw only a direction and an offset.
    fixed_mixed: Option<(u64, u64)>,
    /// A random stream that touches each block once a pass (fio's random map): the one
    /// block size, the seed of its shuffles, and the shuffle of the region's blocks in use
    /// (drawn anew each pass, and each time a pass longer than the region goes round it).
    mapped: Option<(u64, u64, BlockShuffle)>,
    /// A random stream of several block sizes that touches each byte once a pass, as fio's
    /// random map does for them ([`SpanMap`]).
    span_map: Option<SpanMap>,
    /// Where random offsets fall when not uniformly (`random_distribution`), and the size
    /// of its blocks.
    dist: Option<(OffsetDist, u64)>,
    /// Draws whether a request of a random job is random (`percentage_random` below 100);
    /// the others go on from the end of that direction's last request.
    seq_draws: Option<Rng>,
    /// Offsets of random reads and writes whose sizes are drawn from a `bsrange` are
    /// multiples of the range's smallest size (fio's default `blockalign` for that
    /// direction), not of each request's size.
    range_align: [Option<u64>; 3],
    /// A random stream of fixed sizes (`fixed` or `fixed_mixed`) whose every offset is drawn
    /// uniformly over the region, a multiple of the request's size (no random map, no
    /// distribution, alignment, sequential share or runs; `norandommap`): the number of
    /// blocks that fit, by direction, worked out once. Such requests skip the checks of
    /// [`RequestStream::place`] for all of those and its division, and draw as it does.
    uniform: Option<[u64; 3]>,
    /// `rw=randread:N`: a random offset every N requests (counted over both directions,
    /// as fio counts them), the others following on from, or repeating, that direction's
    /// last (`rw_sequencer`). None: every request draws.
    run: Option<(u64, bool)>,
    /// Where each direction's last request started, for `rw_sequencer=identical`.
    last_start: [u64; 3],
    /// What the stream does to the requests it draws (one test on the path of every
    /// request: `Turn::Drawn` issues them as drawn).
    turn: Turn,
    /// `Turn::TrimThenWrite`: the trim issued last, whose write is due next.
    pending_write: Option<Request>,
    /// fio's strided zones (`zonemode=strided`): where the job stands in them. Such a
    /// stream takes the general path ([`RequestStream::next_any`]), which places its
    /// requests by [`ZoneWalk::place`].
    zones: Option<ZoneWalk>,
}

/// Where a stream with strided zones ([`crate::spec::Zones`]) stands, as fio 3.33 walks
/// them (its `setup_strided_zone_mode`, checked against its I/O logs): the zone's start and
/// the bytes moved in it; each direction's sequential position; a random pass's shuffle of
/// the zone's blocks.
#[derive(Clone, Debug)]
struct ZoneWalk {
    zones: crate::spec::Zones,
    /// Where the zones start (the region's start) and end (the file's end): a zone that
    /// starts past the end goes back to the first.
    first: u64,
    end: u64,
    /// The zone's start, and the bytes moved in it (fio's `zone_bytes`).
    at: u64,
    moved: u64,
    /// Each direction's next sequential offset (absolute; fio's `last_pos`).
    pos: [u64; 3],
    /// A random job's map: its block size, the seed of its shuffles, the shuffle of the
    /// zone's blocks in use, and the blocks drawn from it; None draws with replacement.
    map: Option<(u64, u64, BlockShuffle, u64)>,
    /// Shuffles drawn so far (each gets its own order).
    shuffles: u64,
}

impl ZoneWalk {
    /// Back to the first zone, nothing moved in it (a pass that ran past the file's end).
    fn restart(&mut self) {
        self.at = self.first;
        self.moved = 0;
        self.pos = [self.first; 3];
        self.new_map();
    }

    /// The zone's blocks in a new order, none drawn yet.
    fn new_map(&mut self) {
        if let Some((bs, seed, shuffle, drawn)) = self.map.as_mut() {
            self.shuffles += 1;
            let key = *seed ^ self.shuffles.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            *shuffle = BlockShuffle::new(self.zones.range() / *bs, key);
            *drawn = 0;
        }
    }

    /// The offset of a request of `bs` bytes in direction `dir` (random or not, its
    /// offsets aligned to `align`), moving to the next zone first once this one has had
    /// its `zonesize`; None when the block would run past the file's end (fio then ends the
    /// pass).
    fn place(&mut self, dir: Dir, bs: u64, random: bool, align: u64, rng: &mut Rng) -> Option<u64> {
        let range = self.zones.range();
        if self.moved >= self.zones.size {
            self.moved = 0;
            self.at += range + self.zones.skip;
            if self.at >= self.end {
                self.at = self.first;
            }
            // (fio moves only this direction's position to the zone; a mixed job's other
            // direction would then run on from the zone before, which raidlab does not.)
            self.pos = [self.at; 3];
            self.new_map();
        }
        let offset = if random {
            match self.map.as_mut() {
                Some((map_bs, _, shuffle, drawn)) => {
                    debug_assert_eq!(bs, *map_bs);
                    let b = shuffle.at(*drawn % shuffle.n);
                    *drawn += 1;
                    let o = self.at + b * bs;
                    if *drawn % shuffle.n == 0 {
                        // (Each zone's worth of blocks once, then again in a new order.)
                        self.new_map();
                    }
                    o
                }
                None => self.at + rng.below((range - bs) / align + 1) * align,
            }
        } else {
            let p = &mut self.pos[dir as usize];
            if *p >= self.at + range {
                *p = self.at; // (zonesize over zonerange: round the zone again)
            }
            *p
        };
        if offset + bs > self.end {
            return None;
        }
        if !random {
            self.pos[dir as usize] = offset + bs;
        }
        self.moved += bs;
        Some(offset)
    }
}

/// What a stream does to the requests it draws before it gives them out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Turn {
    /// Gives them as drawn.
    Drawn,
    /// `rw=trimwrite`, `randtrimwrite`: each trim is followed by a write of its block.
    TrimThenWrite,
    /// `verify_only`: the writes drawn are read back instead (same offsets and sizes).
    ReadBack,
}

impl RequestStream {
    /// The stream of `instance` over a target of `target_size` bytes (its one file).
    pub fn new(
        spec: &JobSpec,
        instance: &JobInstance,
        target_size: u64,
    ) -> Result<Self, SpecError> {
        Self::seeded(spec, instance, target_size, instance.seed(spec))
    }

    /// [`Self::new`] with the seed given (a multi-file job's files each have their own).
    pub(crate) fn seeded(
        spec: &JobSpec,
        instance: &JobInstance,
        target_size: u64,
        seed: u64,
    ) -> Result<Self, SpecError> {
        // Sizes and offsets given as percent of the target, resolved against this one.
        let resolved = spec.resolved(target_size)?;
        let spec = &resolved;
        let (start, len) = spec.region(instance.job_index, target_size)?;
        let read_percent = spec.rw.read_percent(spec.rwmixread);
        let not_read = if spec.rw.trims() {
            Dir::Trim
        } else {
            Dir::Write
        };
        let fixed = match read_percent {
            100 => Some((Dir::Read, &spec.bs.read)),
            0 => Some((not_read, spec.bs.of(not_read))),
            _ => None,
        }
        .filter(|(_, d)| d.is_fixed())
        .map(|(dir, d)| (dir, d.entries[0].0));
        let fixed_mixed = (fixed.is_none()
            && !matches!(read_percent, 0 | 100)
            && spec.bs.read.is_fixed()
            && spec.bs.write.is_fixed())
        .then(|| (spec.bs.read.entries[0].0, spec.bs.write.entries[0].0));
        // The random map's block: the size of the only direction moved (`bs=4k,64k` on a
        // randread job reads 4 KiB blocks), or the one both directions share.
        let one_bs = fixed.map(|(_, bs)| bs).or_else(|| {
            (spec.bs.read.is_fixed()
                && spec.bs.write.is_fixed()
                && spec.bs.read.min() == spec.bs.write.min())
            .then(|| spec.bs.read.min())
        });
        let mapped = one_bs
            .filter(|&bs| {
                spec.rw.is_random()
                    // (fio's LFSR covers every block once a pass without a random map.)
                    && (!spec.norandommap || spec.lfsr)
                    && spec.blockalign.is_none()
                    && bs <= len
                    // fio turns its random map off for non-uniform distributions; raidlab
                    // also draws with replacement when part of the job is sequential.
                    && spec.random_distribution.is_uniform()
                    && spec.percentage_random == [100, 100, 100]
                    && spec.rw_run <= 1
            })
            .map(|bs| {
                let map_seed = seed ^ 0x3C3C_3C3C_3C3C_3C3C;
                (bs, map_seed, BlockShuffle::new(len / bs, map_seed))
            });
        // Several block sizes over the random map: a bit per block of the smallest size the
        // job moves (fio's `rw_min_bs`), its offsets multiples of it. (Directions of
        // different smallest sizes, trims and the cases above that draw with replacement
        // keep drawing so.)
        let span_map = {
            let moved: Vec<&crate::spec::BsDist> = [
                (spec.read_percent() > 0).then_some(&spec.bs.read),
                (spec.read_percent() < 100).then_some(&spec.bs.write),
            ]
            .into_iter()
            .flatten()
            .collect();
            let unit = moved.first().map(|d| d.min());
            (mapped.is_none()
                && one_bs.is_none()
                && spec.rw.is_random()
                && !spec.rw.trims()
                && !spec.norandommap
                && !spec.lfsr
                && spec.blockalign.is_none()
                && !spec.bs_unaligned
                && spec.random_distribution.is_uniform()
                && spec.percentage_random == [100, 100, 100]
                && spec.rw_run <= 1
                && moved.iter().all(|d| Some(d.min()) == unit)
                // (Sizes a whole number of blocks: each request marks what it moves.)
                && moved.iter().all(|d| {
                    let u = d.min().max(1);
                    d.entries.iter().all(|e| e.0 % u == 0)
                        && d.range.is_none_or(|(lo, hi)| lo % u == 0 && hi % u == 0)
                }))
            .then_some(unit)
            .flatten()
            .filter(|&u| u > 0 && u <= len)
            .map(|u| SpanMap::new(len / u, u))
        };
        let random = spec.rw.is_random();
        // Strided zones place every request themselves (the options that would place them
        // otherwise are refused with them, `JobSpec::validate`).
        let zones = spec.strided().map(|z| {
            let map = one_bs
                .filter(|&bs| random && (!spec.norandommap || spec.lfsr) && bs <= z.range())
                .map(|bs| {
                    let map_seed = seed ^ 0x2D2D_2D2D_2D2D_2D2D;
                    (bs, map_seed, BlockShuffle::new(z.range() / bs, map_seed), 0)
                });
            ZoneWalk {
                zones: z,
                first: start,
                end: target_size,
                at: start,
                moved: 0,
                pos: [start; 3],
                map,
                shuffles: 0,
            }
        });
        let (fixed, fixed_mixed, mapped, span_map) = if zones.is_some() {
            (None, None, None, None)
        } else {
            (fixed, fixed_mixed, mapped, span_map)
        };
        let dist = if random && !spec.random_distribution.is_uniform() {
            let unit = spec.blockalign.unwrap_or(spec.bs.min()).max(1);
            let blocks = (len / unit).max(1);
            OffsetDist::new(
                &spec.random_distribution,
                blocks,
                unit,
                seed ^ 0x0F0F_0F0F_0F0F_0F0F,
            )
            .map_err(|m| SpecError {
                message: format!("job '{}': {m}", spec.name),
            })?
            .map(|d| (d, unit))
        } else {
            None
        };
        let seq_draws = (random && spec.percentage_random != [100, 100, 100])
            .then(|| Rng::new(seed ^ 0x6969_6969_6969_6969));
        let range_align =
            [&spec.bs.read, &spec.bs.write, &spec.bs.trim].map(|d| d.range.map(|(lo, _)| lo));
        let run = (random && spec.rw_run > 1).then_some((spec.rw_run as u64, spec.rw_identical));
        let uniform = (random
            && zones.is_none()
            && mapped.is_none()
            && span_map.is_none()
            && dist.is_none()
            && seq_draws.is_none()
            && run.is_none()
            && spec.blockalign.is_none()
            && range_align == [None; 3])
            .then(|| match (fixed, fixed_mixed) {
                (Some((dir, bs)), _) => {
                    let mut slots = [0; 3];
                    slots[dir as usize] = len / bs.max(1);
                    Some(slots)
                }
                (None, Some((read_bs, write_bs))) => {
                    let w = len / write_bs.max(1);
                    Some([len / read_bs.max(1), w, w])
                }
                (None, None) => None,
            })
            .flatten();
        Ok(RequestStream {
            spec: spec.clone(),
            start,
            len,
            read_percent,
            random: spec.rw.is_random(),
            infinite: spec.time_based,
            offsets: Rng::new(seed),
            dirs: Rng::new(seed ^ 0x5555_5555_5555_5555),
            sizes: Rng::new(seed ^ 0xAAAA_AAAA_AAAA_AAAA),
            seq: 0,
            pass: 0,
            // A random pass over the map without io_size ends with the map's last block, as
            // fio's does: a region that is not a whole number of blocks leaves its tail,
            // where drawing on would visit a block twice.
            pass_bytes: match (spec.io_size, &mapped, &span_map) {
                (Some(n), _, _) => n,
                (None, Some((bs, _, _)), _) => len / bs * bs,
                (None, None, Some(m)) => m.blocks * m.unit,
                (None, None, None) => match fixed {
                    // fio's rw=write:HOLE without io_size: its holes count against size
                    // (backend.c, keep_running adds io_skip_bytes to the bytes done), so
                    // a pass ends at the region's end, a block and its hole at a time,
                    // rather than going round to write blocks again. (fio issues one more
                    // block that starts before the end and runs past it; a request here
                    // stays in the region.)
                    Some((_, bs))
                        if spec.rw_hole > 0
                            && !spec.rw.is_random()
                            && zones.is_none()
                            && !spec.rw.trim_then_write()
                            && bs <= len =>
                    {
                        ((len - bs) / (bs + spec.rw_hole as u64) + 1) * bs
                    }
                    _ => len,
                },
            },
            cursor: 0,
            pos: [0; 3],
            fixed,
            fixed_mixed,
            mapped,
            span_map,
            dist,
            seq_draws,
            range_align,
            uniform,
            run,
            last_start: [0; 3],
            // (verify_only with trims is refused.)
            turn: if spec.rw.trim_then_write() {
                Turn::TrimThenWrite
            } else if spec.verify_only {
                Turn::ReadBack
            } else {
                Turn::Drawn
            },
            pending_write: None,
            not_read,
            zones,
        })
    }
    /// Bytes one pass transfers: `io_size`, else the region (its whole blocks, for a
    /// random pass over the random map).
    pub fn pass_bytes(&self) -> u64 {
        self.pass_bytes
    }
    /// Whether the stream walks strided zones (`zonemode=strided`).
    pub fn zoned(&self) -> bool {
        self.zones.is_some()
    }
    /// The region `(start, len)` this stream stays inside: from its start to the file's end
    /// with strided zones (which go on past `size`, as fio's do).
    pub fn region(&self) -> (u64, u64) {
        match &self.zones {
            Some(z) => (z.first, z.end - z.first),
            None => (self.start, self.len),
        }
    }
    /// The one block size every request has, if there is one: that of the only direction
    /// the job moves (`bs=4k,64k` with `rw=randread` reads 4 KiB blocks), or the size both
    /// directions share; `None` when sizes are drawn or reads and writes of different sizes
    /// mix.
    fn one_block(&self) -> Option<u64> {
        if let Some((_, bs)) = self.fixed {
            return Some(bs);
        }
        let (r, w) = (&self.spec.bs.read, &self.spec.bs.write);
        (r.is_fixed() && w.is_fixed() && r.min() == w.min()).then(|| r.min())
    }
    /// Requests in one pass if every request has the same block size (else `None`); a
    /// `trimwrite` pass has a write for each trim.
    pub fn requests_per_pass(&self) -> Option<u64> {
        let bs = self.one_block()?;
        let n = if self.random {
            self.pass_bytes.div_ceil(bs)
        } else {
            self.pass_bytes / bs
        };
        Some(n * self.per_place())
    }
    /// Requests each place in the region gets a pass: 2 for `trimwrite` (its trim and its
    /// write), else 1.
    fn per_place(&self) -> u64 {
        1 + u64::from(self.turn == Turn::TrimThenWrite)
    }
    /// Bytes the whole stream transfers, if that is known ahead: one block size, not
    /// time-based; `loops` passes, or fewer when `number_ios` (times `loops`) ends it first.
    pub fn total_bytes(&self) -> Option<u64> {
        if self.infinite {
            return None;
        }
        let per_pass = self.requests_per_pass()?;
        let mut n = per_pass * self.spec.loops as u64;
        if let Some(cap) = self.spec.request_cap() {
            n = n.min(cap);
        }
        Some(n * self.one_block()?)
    }
    /// Bytes the stream is expected to transfer, when it is not time-based: exactly
    /// [`Self::total_bytes`] where that is known; with drawn block sizes (`bssplit`, or reads
    /// and writes of different sizes mixed) each pass moves its bytes (a random pass may run
    /// past them by part of its last block), and `number_ios` ends the stream after that many
    /// requests of the mean size, if that comes first. For an executor that stops a job
    /// early and extends it to its end at the rate it had (the simulator's convergence).
    pub fn expected_bytes(&self) -> Option<u64> {
        if self.infinite {
            return None;
        }
        if let Some(b) = self.total_bytes() {
            return Some(b);
        }
        let mut bytes = self
            .pass_bytes
            .saturating_mul(self.spec.loops as u64)
            .saturating_mul(self.per_place());
        if let Some(n) = self.spec.request_cap() {
            let reads = self.read_percent as f64 / 100.0;
            let per_request = reads * self.spec.bs.read.mean()
                + (1.0 - reads) * self.spec.bs.of(self.not_read).mean();
            bytes = bytes.min((n as f64 * per_request) as u64);
        }
        Some(bytes)
    }
    /// Bytes one pass transfers if every request has the same block size.
    pub fn bytes_per_pass(&self) -> Option<u64> {
        Some(self.requests_per_pass()? * self.one_block()?)
    }

    #[inline(always)]
    fn next_dir(&mut self) -> Dir {
        match self.read_percent {
            100 => Dir::Read,
            0 => self.not_read,
            p => {
                if self.dirs.below(100) < p as u64 {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        }
    }
}

impl RequestStream {
    /// The request of `bs` bytes in direction `dir` at the current position (a block that
    /// fits in this pass), and move past it.
    #[inline(always)]
    fn place(&mut self, dir: Dir, mut bs: u64) -> Request {
        let offset = if let Some(o) = self.run_offset(dir, bs) {
            o
        } else if let Some(m) = self.span_map.as_mut() {
            // fio's random map with several sizes: a random block, the next free one if it
            // is taken, the request as long as the free blocks from there allow.
            if m.free == 0 {
                m.reset(); // (a pass longer than the region goes round it again)
            }
            let drawn = self.offsets.below(m.blocks);
            let b = if m.is_set(drawn) {
                m.next_free(drawn)
            } else {
                drawn
            };
            let want = bs.div_ceil(m.unit);
            let n = m.take(b, want.min(m.blocks - b));
            if n < want {
                bs = n * m.unit;
            }
            self.start + b * m.unit
        } else if let Some((map_bs, map_seed, shuffle)) = self.mapped.as_mut() {
            debug_assert_eq!(bs, *map_bs);
            // The k-th block of this pass; a pass longer than the region goes round it again
            // in a new order.
            let blocks = shuffle.n;
            let k = self.cursor / *map_bs;
            if k.is_multiple_of(blocks) {
                let round = (u64::from(self.pass) << 32) ^ (k / blocks);
                *shuffle = BlockShuffle::new(
                    blocks,
                    *map_seed ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                );
            }
            self.start + shuffle.at(k % blocks) * *map_bs
        } else if self.random && self.draws_sequential(dir) {
            // percentage_random: on from the end of this direction's last request.
            let pos = self.pos[dir as usize];
            self.at_or_start(pos, bs)
        } else if let Some((dist, unit)) = &self.dist {
            // The distribution's block, moved back to where the whole request still fits.
            let fits = (self.len - bs) / *unit + 1;
            let b = dist.block(dir, &mut self.offsets);
            self.start + (if b < fits { b } else { b % fits }) * *unit
        } else if self.random {
            match self.spec.blockalign.or(self.range_align[dir as usize]) {
                None => {
                    let slots = self.len / bs;
                    self.start + self.offsets.below(slots) * bs
                }
                Some(a) => {
                    // Any multiple of the alignment where the whole block still fits.
                    let slots = (self.len - bs) / a + 1;
                    self.start + self.offsets.below(slots) * a
                }
            }
        } else {
            let pos = &mut self.pos[dir as usize];
            if self.spec.rw_hole != 0 && *pos != 0 {
                *pos = skip(*pos, self.spec.rw_hole, self.len);
            }
            if *pos + bs > self.len {
                *pos = 0; // io_size beyond the region: wrap around, as fio does
            }
            let o = self.start + *pos;
            *pos += bs;
            o
        };
        // (A random job's requests that go on from the last: `pos` follows them.)
        if self.seq_draws.is_some() || self.run.is_some() {
            self.pos[dir as usize] = offset - self.start + bs;
            self.last_start[dir as usize] = offset - self.start;
        }
        let req = self.issue_at(dir, offset, bs);
        debug_assert!(req.offset >= self.start && req.offset + req.len <= self.start + self.len);
        req
    }

    /// [`Self::place`] for a request of a stream's fixed size `bs` in direction `dir`: a
    /// uniform stream's straight from its count of blocks (the same draw).
    #[inline(always)]
    fn place_fixed(&mut self, dir: Dir, bs: u64) -> Request {
        let Some(slots) = self.uniform else {
            return self.place(dir, bs);
        };
        let offset = self.start + self.offsets.below(slots[dir as usize]) * bs;
        debug_assert_eq!(slots[dir as usize], self.len / bs);
        let req = self.issue_at(dir, offset, bs);
        debug_assert!(req.offset >= self.start && req.offset + req.len <= self.start + self.len);
        req
    }

    /// `rw=randread:N`: this request's offset if it is not the first of its run of N (those
    /// draw as any other): on from the end of this direction's last request (wrapping to
    /// the region's start when the block does not fit before its end), or that request's
    /// own offset (`rw_sequencer=identical`). As fio, a direction's first request follows
    /// on from the region's start.
    #[inline(always)]
    fn run_offset(&self, dir: Dir, bs: u64) -> Option<u64> {
        let (n, identical) = self.run?;
        if self.seq.is_multiple_of(n) {
            return None;
        }
        let at = if identical {
            self.last_start[dir as usize]
        } else {
            self.pos[dir as usize]
        };
        Some(self.at_or_start(at, bs))
    }

    /// The offset `at` bytes into the region, or the region's start where a block of `bs`
    /// bytes does not fit before its end.
    #[inline(always)]
    fn at_or_start(&self, at: u64, bs: u64) -> u64 {
        self.start + if at + bs > self.len { 0 } else { at }
    }

    /// Whether this request of a random job goes on sequentially (`percentage_random`: a
    /// draw of 1..=100 above the direction's share, as fio draws it).
    #[inline(always)]
    fn draws_sequential(&mut self, dir: Dir) -> bool {
        let share = self.spec.percentage_random[dir as usize];
        match self.seq_draws.as_mut() {
            Some(rng) if share < 100 => rng.below(100) + 1 > u64::from(share),
            _ => false,
        }
    }

    /// Whether the stream has ended (its passes or its request count done).
    #[inline(always)]
    fn ended(&self) -> bool {
        (!self.infinite && self.pass >= self.spec.loops)
            || self.spec.request_cap().is_some_and(|n| self.seq >= n)
    }

    /// Whether a block of `bs` bytes still belongs to this pass.
    #[inline(always)]
    fn fits(&self, bs: u64) -> bool {
        if self.random {
            self.cursor < self.pass_bytes && bs <= self.len
        } else {
            self.cursor + bs <= self.pass_bytes && bs <= self.len
        }
    }

    /// [`Iterator::next`] in general: draws, pass ends, the stream's end; `choose` turns
    /// each drawn direction into the one the request goes in.
    fn next_any(&mut self, mut choose: impl FnMut(Dir) -> Dir) -> Option<Request> {
        loop {
            if self.ended() {
                return None;
            }
            let dir = choose(self.next_dir());
            let dist = self.spec.bs.of(dir);
            let left = self.pass_bytes.saturating_sub(self.cursor);
            if let Some((lo, hi)) = dist.range {
                // bsrange: a size up to what the pass has left (fio draws again until one
                // fits), a pass that has less than the smallest left ends.
                let top = hi.min(self.len).min(left.max(lo));
                let bs = draw_in_range(&mut self.sizes, lo, top, self.spec.bs_unaligned);
                if left < lo || bs > self.len || !self.fits(bs) {
                    if self.end_pass(bs) {
                        return None;
                    }
                    continue;
                }
                match self.place_any(dir, bs) {
                    Some(r) => return Some(r),
                    None => continue,
                }
            }
            let mut bs = if dist.is_fixed() {
                dist.entries[0].0
            } else {
                dist.pick(self.sizes.below(100) as u32)
            };
            // A drawn size that would run past the pass's bytes, when smaller sizes of the
            // distribution fit what is left: one of those, by their weights (fio draws again
            // until a size fits), so a pass moves exactly its bytes — neither more (random)
            // nor fewer (sequential) than `size`.
            if !dist.is_fixed() && left > 0 && bs > left {
                let len = self.len;
                let fitting = || {
                    dist.entries
                        .iter()
                        .filter(move |e| e.0 <= left && e.0 <= len)
                };
                let total: u32 = fitting().map(|e| e.1).sum();
                if total > 0 {
                    let mut u = self.sizes.below(total as u64) as u32;
                    for &(b, w) in fitting() {
                        if u < w {
                            bs = b;
                            break;
                        }
                        u -= w;
                    }
                }
            }
            if !self.fits(bs) || (!dist.is_fixed() && bs > left) {
                if self.end_pass(bs) {
                    return None;
                }
                continue;
            }
            match self.place_any(dir, bs) {
                Some(r) => return Some(r),
                None => continue,
            }
        }
    }

    /// [`Self::place`], or the zone's place with strided zones; None when a zone's block
    /// would run past the file's end, which ends the pass there (the next starts again at
    /// the first zone), as fio's does.
    fn place_any(&mut self, dir: Dir, bs: u64) -> Option<Request> {
        let Some(z) = self.zones.as_mut() else {
            return Some(self.place(dir, bs));
        };
        let align = self
            .spec
            .blockalign
            .or(self.range_align[dir as usize])
            .unwrap_or(bs)
            .max(1);
        match z.place(dir, bs, self.random, align, &mut self.offsets) {
            Some(offset) => Some(self.issue_at(dir, offset, bs)),
            None => {
                z.restart();
                self.end_pass(bs);
                None
            }
        }
    }

    /// The request of `bs` bytes in direction `dir` at `offset`, counted in the pass.
    #[inline(always)]
    fn issue_at(&mut self, dir: Dir, offset: u64, bs: u64) -> Request {
        self.cursor += bs;
        let req = Request {
            seq: self.seq,
            pass: self.pass,
            file: 0,
            offset,
            len: bs,
            dir,
        };
        self.seq += 1;
        req
    }

    /// End this pass, a block of `bs` bytes not fitting in it: its bytes are issued (or the
    /// rest is smaller than a block). Returns whether the stream has nothing to do at all
    /// (a region smaller than every block; validated earlier).
    fn end_pass(&mut self, bs: u64) -> bool {
        // (A time-based job over a small region can make 2^32 passes: about an hour at a
        // million a second over one 4 KiB block. Past that every pass counts as the last
        // number, rather than a debug build's overflow panic or a release build's wrap to
        // pass 0, which would list the passes out of order.)
        self.pass = self.pass.saturating_add(1);
        self.cursor = 0;
        self.pos = [0; 3];
        if let Some(m) = self.span_map.as_mut() {
            m.reset();
        }
        self.seq == 0 && self.pass > 0 && bs > self.len
    }
}

/// `rw=write:HOLE`: where a sequential request goes after one that ended at `pos` (> 0) in a
/// region of `len` bytes: `hole` bytes on (or back, if negative). Going back past the
/// region's start goes round from its end, so `rw=read:-8k` with 4 KiB blocks reads every
/// block once a pass, last first after the first (fio goes round to `hole` before the end
/// and never reads the last block). A block that does not fit before the end starts the
/// region again (the caller's wrap), as fio does going forward.
fn skip(pos: u64, hole: i64, len: u64) -> u64 {
    let next = pos as i128 + hole as i128;
    if next < 0 {
        // (Back past the start: round from the end, as often as the skip spans the region.)
        (next.rem_euclid(len.max(1) as i128)) as u64
    } else {
        u64::try_from(next).unwrap_or(u64::MAX)
    }
}

/// A block size of fio's `bsrange` between `min` and `max`: `min` plus a uniform share of
/// `max`, rounded down to a multiple of `min` (unless `unaligned`) and held to `max`, as fio
/// 3.33 draws them: each multiple of `min` up to `max` equally often.
fn draw_in_range(rng: &mut Rng, min: u64, max: u64, unaligned: bool) -> u64 {
    if max <= min {
        return min;
    }
    let mut bs = min + (max as f64 * rng.next_f64()) as u64;
    if !unaligned {
        bs -= bs % min;
    }
    bs.min(max)
}

impl RequestStream {
    /// The next request, its direction (as the mix drew it) first turned by `choose`: a
    /// paced mixed job's direction yields to the other when it is ahead of its rate
    /// (`Pacer::rate_dir`). Offsets and sizes are then drawn for the direction chosen; the
    /// draws that follow are the same whichever it was.
    #[inline]
    pub fn next_as(&mut self, choose: impl FnMut(Dir) -> Dir) -> Option<Request> {
        self.next_with(choose)
    }

    #[inline(always)]
    fn next_with(&mut self, choose: impl FnMut(Dir) -> Dir) -> Option<Request> {
        if self.turn != Turn::Drawn {
            return self.next_turned(choose);
        }
        self.next_drawn(choose)
    }

    /// `trimwrite`'s pairs, or `verify_only`'s writes turned into reads.
    #[cold]
    fn next_turned(&mut self, choose: impl FnMut(Dir) -> Dir) -> Option<Request> {
        if self.turn == Turn::TrimThenWrite {
            return self.next_trim_or_write();
        }
        let r = self.next_drawn(choose)?;
        Some(Request {
            dir: Dir::Read,
            ..r
        })
    }

    /// `trimwrite`: the write of the block trimmed last, else the next trim.
    fn next_trim_or_write(&mut self) -> Option<Request> {
        if let Some(t) = self.pending_write.take() {
            if self.spec.request_cap().is_some_and(|n| self.seq >= n) {
                return None;
            }
            let w = Request {
                seq: self.seq,
                dir: Dir::Write,
                ..t
            };
            self.seq += 1;
            return Some(w);
        }
        let t = self.next_drawn(|d| d)?;
        self.pending_write = Some(t);
        Some(t)
    }

    #[inline(always)]
    fn next_drawn(&mut self, mut choose: impl FnMut(Dir) -> Dir) -> Option<Request> {
        // One direction, one block size, within a pass: nothing to draw but a random offset
        // (most requests of most jobs). Anything else, `next_any` decides as before.
        if let Some((dir, bs)) = self.fixed {
            if !self.ended() && self.fits(bs) {
                return Some(self.place_fixed(dir, bs));
            }
        } else if let Some((read_bs, write_bs)) = self.fixed_mixed {
            // Both directions with fixed sizes: draw the direction, as `next_any` would
            // first; past the pass's end, `next_any` goes on from where it would.
            if !self.ended() {
                let dir = choose(self.next_dir());
                let bs = match dir {
                    Dir::Read => read_bs,
                    Dir::Write | Dir::Trim => write_bs,
                };
                if self.fits(bs) {
                    return Some(self.place_fixed(dir, bs));
                }
                if self.end_pass(bs) {
                    return None;
                }
            }
        }
        self.next_any(choose)
    }
}

impl Iterator for RequestStream {
    type Item = Request;

    #[inline]
    fn next(&mut self) -> Option<Request> {
        self.next_with(|d| d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{apply_option, Distribution, RwMode};
    use proptest::prelude::*;

    /// Every shuffle is a permutation of `0..n`: small and odd sizes, powers of two and
    /// their neighbours, under several keys; different keys give different orders.
    #[test]
    fn block_shuffles_are_permutations() {
        for n in (1..=300).chain([1023, 1024, 1025, 4096, 65_537]) {
            for key in [0, 1, 0xdead_beef] {
                let s = BlockShuffle::new(n, key);
                let mut seen = vec![false; n as usize];
                for i in 0..n {
                    let x = s.at(i);
                    assert!(x < n && !seen[x as usize], "n {n} key {key}: {i} -> {x}");
                    seen[x as usize] = true;
                }
            }
        }
        let order = |key| {
            (0..64)
                .map(|i| BlockShuffle::new(64, key).at(i))
                .collect::<Vec<_>>()
        };
        assert_ne!(order(1), order(2));
    }

    /// Past 2^32 passes (a time-based job over one small block for an hour) the pass number
    /// stays at its last value: no overflow, no wrap back to pass 0.
    #[test]
    fn pass_numbers_stop_at_their_last_value() {
        let s = spec(&[
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "8k"),
            ("time_based", "1"),
            ("runtime", "1h"),
        ]);
        let inst = &JobInstance::expand(std::slice::from_ref(&s))[0];
        let mut stream = RequestStream::new(&s, inst, 1 << 20).unwrap();
        stream.pass = u32::MAX - 1;
        let passes: Vec<u32> = stream.by_ref().take(6).map(|r| r.pass).collect();
        assert_eq!(
            passes,
            [
                u32::MAX - 1,
                u32::MAX - 1,
                u32::MAX,
                u32::MAX,
                u32::MAX,
                u32::MAX
            ]
        );
    }

    /// As fio's random map: a random pass with one block size touches each block of the
    /// region once, each pass in another order; a pass of twice the region, each block
    /// twice; a job moving one direction maps that direction's block size. With
    /// norandommap, blockalign or several sizes, offsets are drawn with replacement (some
    /// block comes twice in a pass).
    #[test]
    fn random_passes_touch_each_block_once_unless_told_otherwise() {
        let offsets = |opts: &[(&str, &str)]| {
            let s = spec(opts);
            let inst = &JobInstance::expand(std::slice::from_ref(&s))[0];
            RequestStream::new(&s, inst, 1 << 20)
                .unwrap()
                .map(|r| (r.pass, r.offset))
                .collect::<Vec<_>>()
        };
        let count = |v: &[(u32, u64)], pass: u32| {
            let mut c = std::collections::BTreeMap::new();
            for &(_, o) in v.iter().filter(|x| x.0 == pass) {
                *c.entry(o).or_insert(0u32) += 1;
            }
            c
        };
        let v = offsets(&[
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("size", "1m"),
            ("loops", "2"),
        ]);
        assert_eq!(v.len(), 512);
        for pass in 0..2 {
            let c = count(&v, pass);
            assert_eq!(c.len(), 256, "pass {pass}");
            assert!(c.keys().all(|o| o % 4096 == 0) && c.values().all(|&n| n == 1));
        }
        assert_ne!(
            v[..256].iter().map(|x| x.1).collect::<Vec<_>>(),
            v[256..].iter().map(|x| x.1).collect::<Vec<_>>()
        );
        let v = offsets(&[
            ("rw", "randrw"),
            ("bs", "4k"),
            ("size", "1m"),
            ("io_size", "2m"),
        ]);
        let c = count(&v, 0);
        assert!(c.len() == 256 && c.values().all(|&n| n == 2));
        // One direction with a size of its own (bs=read,write): its blocks are mapped too.
        for (rw, bs, blocks) in [("randread", "4k,64k", 256), ("randwrite", "4k,64k", 16)] {
            let v = offsets(&[("rw", rw), ("bs", bs), ("size", "1m")]);
            let c = count(&v, 0);
            assert!(
                c.len() == blocks && c.values().all(|&n| n == 1),
                "{rw} {bs}"
            );
        }
        for opts in [
            &[
                ("rw", "randread"),
                ("bs", "4k"),
                ("size", "1m"),
                ("norandommap", "1"),
            ][..],
            &[
                ("rw", "randread"),
                ("bs", "4k"),
                ("size", "1m"),
                ("blockalign", "512"),
            ][..],
            &[
                ("rw", "randread"),
                ("bssplit", "4k/50:8k/50"),
                ("size", "1m"),
                ("norandommap", "1"),
            ][..],
        ] {
            let c = count(&offsets(opts), 0);
            assert!(c.values().any(|&n| n > 1), "{opts:?}");
        }
    }

    /// Several block sizes over fio's random map: each pass moves every 4 KiB block of the
    /// region once (a request cut short where it would run into blocks already moved, as
    /// fio's `mark_random_map` cuts it), on multiples of the smallest size; the cut requests
    /// make the small sizes more common than drawn, as in fio (a 16 MiB pass of
    /// `bssplit=4k/50:64k/50` is 871 requests in fio 3.33, 493 had none been cut).
    #[test]
    fn several_sizes_keep_fios_random_map() {
        for (opts, pass_kib) in [
            (
                &[
                    ("rw", "randrw"),
                    ("bssplit", "4k/50:64k/50"),
                    ("size", "16m"),
                ][..],
                16384,
            ),
            (
                &[("rw", "randwrite"), ("bsrange", "4k-16k"), ("size", "1m")][..],
                1024,
            ),
            (
                &[
                    ("rw", "randread"),
                    ("bssplit", "4k/50:8k/50"),
                    ("size", "1m"),
                    ("loops", "3"),
                ][..],
                1024,
            ),
        ] {
            let s = spec(opts);
            let len = pass_kib << 10;
            let reqs: Vec<Request> = stream_of(&s, len).collect();
            let passes = reqs.iter().map(|r| r.pass).max().unwrap() + 1;
            assert_eq!(passes, s.loops, "{opts:?}");
            for pass in 0..passes {
                let mut seen = vec![0u8; (len / 4096) as usize];
                for r in reqs.iter().filter(|r| r.pass == pass) {
                    assert!(r.offset % 4096 == 0 && r.len % 4096 == 0, "{opts:?}: {r:?}");
                    assert!(r.offset + r.len <= len, "{opts:?}: {r:?}");
                    for b in r.offset / 4096..(r.offset + r.len) / 4096 {
                        seen[b as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{opts:?} pass {pass}");
            }
        }
        // The 16 MiB pass of fio's example: more requests than the drawn sizes would make
        // (493), some of them cut to sizes neither 4 nor 64 KiB.
        let s = spec(&[
            ("rw", "randrw"),
            ("bssplit", "4k/50:64k/50"),
            ("size", "16m"),
        ]);
        let reqs: Vec<Request> = stream_of(&s, 16 << 20).collect();
        assert!((700..1100).contains(&reqs.len()), "{}", reqs.len());
        assert!(reqs.iter().any(|r| r.len != 4096 && r.len != 65536));
        // Sizes that are not whole blocks of the smallest (6 KiB over 4 KiB blocks) draw
        // with replacement, as do norandommap jobs: the sizes as drawn.
        let odd = spec(&[
            ("rw", "randread"),
            ("bssplit", "4k/50:6k/50"),
            ("size", "1m"),
        ]);
        assert!(stream_of(&odd, 1 << 20).all(|r| r.len == 4096 || r.len == 6144));
        let mut s = s;
        s.norandommap = true;
        assert!(stream_of(&s, 16 << 20).all(|r| r.len == 4096 || r.len == 65536));
    }

    fn spec(opts: &[(&str, &str)]) -> JobSpec {
        let mut s = JobSpec {
            filenames: vec!["t".into()],
            ..Default::default()
        };
        for (k, v) in opts {
            apply_option(&mut s, k, Some(v)).unwrap();
        }
        s
    }

    /// The stream of `spec`'s first instance over a target of `target` bytes.
    fn stream_of(spec: &JobSpec, target: u64) -> RequestStream {
        let inst = &JobInstance::expand(std::slice::from_ref(spec))[0];
        RequestStream::new(spec, inst, target).unwrap()
    }

    fn first(specs: &JobSpec, target: u64, n: usize) -> Vec<Request> {
        stream_of(specs, target).take(n).collect()
    }

    /// Random jobs in strided zones draw in the zone they are in: over the random map, each
    /// visit of `zonerange` bytes is a permutation of the zone's blocks (fio resets its map
    /// so); without it, blocks anywhere in the zone that fit in it. A pass still moves the
    /// job's `size`, and the region reported runs to the file's end.
    #[test]
    fn random_jobs_in_strided_zones_draw_within_the_zone() {
        let (mib, kib) = (1u64 << 20, 1u64 << 10);
        let zoned = |more: &[(&str, &str)]| {
            let mut o = vec![
                ("rw", "randread"),
                ("bs", "64k"),
                ("zonemode", "strided"),
                ("zonesize", "256k"),
                ("zoneskip", "1m"),
                ("size", "4m"),
            ];
            o.extend_from_slice(more);
            spec(&o)
        };
        let s = zoned(&[]);
        s.validate().unwrap();
        let st = stream_of(&s, 8 * mib);
        assert_eq!(st.region(), (0, 8 * mib));
        let reqs: Vec<Request> = st.collect();
        assert_eq!(reqs.len(), 64, "4 MiB in 64 KiB requests");
        // Zone k starts at k × 1280 KiB (seven fit in 8 MiB, then round again).
        for (i, chunk) in reqs.chunks(4).enumerate() {
            let at = (i as u64 % 7) * 1280 * kib;
            let mut offs: Vec<u64> = chunk.iter().map(|r| r.offset).collect();
            offs.sort();
            assert_eq!(
                offs,
                (0..4).map(|b| at + b * 64 * kib).collect::<Vec<_>>(),
                "zone visit {i}"
            );
        }
        // Visits of a zone do not all repeat one order.
        let orders: std::collections::BTreeSet<Vec<u64>> = reqs
            .chunks(4)
            .map(|c| c.iter().map(|r| r.offset % (1280 * kib)).collect())
            .collect();
        assert!(orders.len() > 1);
        // zonesize over zonerange: each zonerange's worth is a permutation of its blocks.
        let twice: Vec<Request> = stream_of(
            &zoned(&[("zonesize", "512k"), ("zonerange", "256k")]),
            8 * mib,
        )
        .collect();
        for (i, chunk) in twice.chunks(4).enumerate() {
            let at = (i as u64 / 2 % 7) * 1280 * kib;
            let mut offs: Vec<u64> = chunk.iter().map(|r| r.offset).collect();
            offs.sort();
            assert_eq!(offs, (0..4).map(|b| at + b * 64 * kib).collect::<Vec<_>>());
        }
        // norandommap: with replacement, inside the zone, whole blocks that fit in it.
        let free: Vec<Request> = stream_of(
            &zoned(&[
                ("norandommap", "1"),
                ("zonerange", "512k"),
                ("bs", "4k"),
                ("zonesize", "64k"),
            ]),
            8 * mib,
        )
        .collect();
        let mut repeated = false;
        for (i, chunk) in free.chunks(16).enumerate() {
            let at = (i as u64 % 6) * 1536 * kib;
            assert!(chunk.iter().all(|r| r.offset >= at
                && r.offset + r.len <= at + 512 * kib
                && r.offset % (4 * kib) == 0));
            let mut o: Vec<u64> = chunk.iter().map(|r| r.offset).collect();
            o.sort();
            o.dedup();
            repeated |= o.len() < chunk.len();
        }
        assert!(repeated, "some block drawn twice in a zone without the map");
    }

    /// A strided zone whose next block would run past the file's end ends the pass there
    /// (the next pass starts at the first zone again), as fio's does; a pass that ends by its
    /// bytes leaves the next one in the zones where it stood.
    #[test]
    fn strided_passes_end_at_the_files_end_or_go_on_in_their_zones() {
        let kib = 1u64 << 10;
        let s = spec(&[
            ("rw", "read"),
            ("bs", "256k"),
            ("zonemode", "strided"),
            ("zonesize", "768k"),
            ("zoneskip", "768k"),
            ("loops", "2"),
        ]);
        let offs: Vec<(u32, u64)> = stream_of(&s, 8 << 20)
            .map(|r| (r.pass, r.offset / kib))
            .collect();
        let pass: Vec<u64> = [
            0, 256, 512, 1536, 1792, 2048, 3072, 3328, 3584, 4608, 4864, 5120, 6144, 6400, 6656,
            7680, 7936,
        ]
        .into();
        let want: Vec<(u32, u64)> = pass
            .iter()
            .map(|&o| (0, o))
            .chain(pass.iter().map(|&o| (1, o)))
            .collect();
        assert_eq!(offs, want);
        let on = spec(&[
            ("rw", "read"),
            ("bs", "64k"),
            ("zonemode", "strided"),
            ("zonesize", "128k"),
            ("zoneskip", "896k"),
            ("size", "256k"),
            ("loops", "3"),
        ]);
        let offs: Vec<u64> = stream_of(&on, 4 << 20).map(|r| r.offset / kib).collect();
        assert_eq!(
            offs,
            [0, 64, 1024, 1088, 2048, 2112, 3072, 3136, 0, 64, 1024, 1088]
        );
    }

    /// The trim patterns: `trim` walks the region in order, `randtrim` touches each block
    /// once a pass in shuffled order, at the trims' own size (`bs`'s third value, else the
    /// writes'); `trimwrite` and `randtrimwrite` follow each trim with a write of the same
    /// block, and a pass trims and writes the region once each.
    #[test]
    fn verify_only_reads_the_writes_the_job_would_issue() {
        // Writes with their own size (the reads' differs), a random subset (norandommap),
        // every draw the writer makes is made alike, then turned into a read.
        let opts = [
            ("rw", "randwrite"),
            ("bs", "4k,16k"),
            ("size", "1m"),
            ("norandommap", "1"),
            ("number_ios", "40"),
            ("verify", "crc32c"),
        ];
        let writes: Vec<Request> = stream_of(&spec(&opts), 1 << 20).collect();
        let mut s = spec(&opts);
        apply_option(&mut s, "verify_only", None).unwrap();
        s.validate().unwrap();
        assert!(!s.writes() && s.read_percent() == 100);
        let reads: Vec<Request> = stream_of(&s, 1 << 20).collect();
        assert_eq!(reads.len(), 40);
        assert!(writes.iter().all(|r| r.dir == Dir::Write && r.len == 16384));
        for (w, r) in writes.iter().zip(&reads) {
            assert_eq!(
                *r,
                Request {
                    dir: Dir::Read,
                    ..*w
                }
            );
        }
    }

    #[test]
    fn trim_patterns_trim_the_region_and_trimwrite_writes_what_it_trimmed() {
        let s = spec(&[("rw", "trim"), ("bs", "4k,8k,16k"), ("size", "64k")]);
        let reqs: Vec<Request> = stream_of(&s, 1 << 20).collect();
        let got: Vec<(Dir, u64, u64)> = reqs.iter().map(|r| (r.dir, r.offset, r.len)).collect();
        let want: Vec<(Dir, u64, u64)> = (0..4).map(|k| (Dir::Trim, k * 16384, 16384)).collect();
        assert_eq!(got, want);
        // Trims follow the writes' size when no third is given.
        let s = spec(&[("rw", "randtrim"), ("bs", "4k,8k"), ("size", "64k")]);
        let reqs: Vec<Request> = stream_of(&s, 1 << 20).collect();
        let mut offsets: Vec<u64> = reqs.iter().map(|r| r.offset).collect();
        assert!(reqs.iter().all(|r| r.dir == Dir::Trim && r.len == 8192));
        assert_ne!(offsets, (0..8).map(|k| k * 8192).collect::<Vec<_>>());
        offsets.sort();
        assert_eq!(offsets, (0..8).map(|k| k * 8192).collect::<Vec<_>>());
        for rw in ["trimwrite", "randtrimwrite"] {
            let s = spec(&[("rw", rw), ("bs", "4k"), ("size", "64k")]);
            let st = stream_of(&s, 1 << 20);
            assert_eq!(st.total_bytes(), Some(2 * 65536), "{rw}");
            let reqs: Vec<Request> = st.collect();
            assert_eq!(reqs.len(), 32, "{rw}");
            for (k, pair) in reqs.chunks(2).enumerate() {
                let (t, w) = (pair[0], pair[1]);
                assert_eq!((t.dir, w.dir), (Dir::Trim, Dir::Write), "{rw} {k}");
                assert_eq!((t.offset, t.len), (w.offset, w.len), "{rw} {k}");
                assert_eq!((t.seq, w.seq), (2 * k as u64, 2 * k as u64 + 1), "{rw} {k}");
            }
            let mut trimmed: Vec<u64> = reqs.iter().step_by(2).map(|r| r.offset).collect();
            trimmed.sort();
            assert_eq!(
                trimmed,
                (0..16).map(|k| k * 4096).collect::<Vec<_>>(),
                "{rw}"
            );
        }
        // number_ios counts trims and writes alike.
        let s = spec(&[("rw", "trimwrite"), ("size", "64k"), ("number_ios", "3")]);
        let dirs: Vec<Dir> = stream_of(&s, 1 << 20).map(|r| r.dir).collect();
        assert_eq!(dirs, [Dir::Trim, Dir::Write, Dir::Trim]);
    }

    /// As fio (its `last_pos` per direction): a sequential mixed job's reads and writes each
    /// walk the region from its start, so writes go over blocks the reads went over; the
    /// pass ends when both together moved `size` (fio's log of `rw=rw`, bs=4k, size=64k:
    /// read 0, 4096, 8192, write 0, read 12288, …). They shared one position before, so
    /// each block was either read or written.
    #[test]
    fn sequential_mixed_reads_and_writes_each_walk_the_region() {
        let s = spec(&[("rw", "rw"), ("bs", "4k"), ("size", "64k")]);
        let reqs = first(&s, 1 << 20, 100);
        assert_eq!(reqs.len(), 16);
        for dir in [Dir::Read, Dir::Write] {
            let offs: Vec<u64> = reqs
                .iter()
                .filter(|r| r.dir == dir)
                .map(|r| r.offset)
                .collect();
            assert!(!offs.is_empty(), "{dir:?}");
            let want: Vec<u64> = (0..offs.len() as u64).map(|i| i * 4096).collect();
            assert_eq!(offs, want, "{dir:?}");
        }
        // io_size past the region: each direction wraps round on its own.
        let s = spec(&[
            ("rw", "rw"),
            ("bs", "4k"),
            ("size", "16k"),
            ("io_size", "64k"),
        ]);
        let reqs = first(&s, 1 << 20, 100);
        assert_eq!(reqs.len(), 16);
        for dir in [Dir::Read, Dir::Write] {
            let offs: Vec<u64> = reqs
                .iter()
                .filter(|r| r.dir == dir)
                .map(|r| r.offset)
                .collect();
            let want: Vec<u64> = (0..offs.len() as u64).map(|i| i % 4 * 4096).collect();
            assert_eq!(offs, want, "{dir:?}");
        }
    }

    /// Mixed block sizes end a pass on exactly its bytes, as fio does: a size that would run
    /// past them gives way to a smaller one that fits, in either order of access.
    #[test]
    fn mixed_block_sizes_move_exactly_the_size() {
        for rw in ["write", "randwrite", "read", "randrw"] {
            let s = spec(&[
                ("rw", rw),
                ("bssplit", "4k/50:64k/50"),
                ("size", "1m"),
                ("loops", "2"),
            ]);
            let reqs = first(&s, 16 << 20, 100_000);
            let bytes: u64 = reqs.iter().map(|r| r.len).sum();
            assert_eq!(bytes, 2 << 20, "{rw}");
            for pass in 0..2 {
                let b: u64 = reqs.iter().filter(|r| r.pass == pass).map(|r| r.len).sum();
                assert_eq!(b, 1 << 20, "{rw} pass {pass}");
            }
            assert!(
                reqs.iter().all(|r| r.offset + r.len <= 1 << 20),
                "{rw}: inside the region"
            );
        }
    }

    #[test]
    fn sequential_covers_the_region_once_per_loop() {
        let s = spec(&[
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "64k"),
            ("offset", "8k"),
            ("loops", "2"),
        ]);
        let reqs = first(&s, 1 << 20, 100);
        assert_eq!(reqs.len(), 32);
        assert_eq!(reqs[0].offset, 8192);
        assert_eq!(reqs[15].offset, 8192 + 15 * 4096);
        assert_eq!(reqs[16].offset, 8192);
        assert_eq!(reqs[16].pass, 1);
        assert!(reqs.iter().all(|r| r.dir == Dir::Read && r.len == 4096));
    }

    #[test]
    fn io_size_smaller_than_the_region_ends_the_pass_early_but_spreads_over_it() {
        // xdd's -mbytes inside -seek range: 1 MiB of 64 KiB requests per pass over 64 MiB.
        let s = spec(&[
            ("rw", "randread"),
            ("bs", "64k"),
            ("size", "64m"),
            ("io_size", "1m"),
            ("loops", "3"),
        ]);
        let stream = stream_of(&s, 64 << 20);
        assert_eq!(stream.requests_per_pass(), Some(16));
        let reqs: Vec<Request> = stream.collect();
        assert_eq!(reqs.len(), 48, "3 passes of 16 requests");
        assert_eq!(reqs[16].pass, 1);
        assert!(
            reqs.iter().any(|r| r.offset >= 32 << 20),
            "offsets spread over the whole region, not its first MiB"
        );
        assert!(reqs.iter().all(|r| r.offset + r.len <= 64 << 20));
    }

    #[test]
    fn io_size_beyond_the_region_wraps_sequential_passes() {
        let s = spec(&[
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "16k"),
            ("offset", "4k"),
            ("io_size", "24k"),
        ]);
        let offsets: Vec<u64> = first(&s, 1 << 20, 100).iter().map(|r| r.offset).collect();
        let k = 4096;
        assert_eq!(offsets, [k, 2 * k, 3 * k, 4 * k, k, 2 * k]);
    }

    #[test]
    fn blockalign_places_random_blocks_on_sector_boundaries() {
        // xdd: 64 KiB requests at any 512-byte sector of the range.
        let s = spec(&[
            ("rw", "randwrite"),
            ("bs", "64k"),
            ("size", "1m"),
            ("ba", "512"),
        ]);
        let reqs = first(&s, 1 << 20, 16);
        assert!(reqs
            .iter()
            .all(|r| r.offset % 512 == 0 && r.offset + r.len <= 1 << 20));
        assert!(
            reqs.iter().any(|r| r.offset % 65536 != 0),
            "not all on 64 KiB boundaries: {:?}",
            reqs.iter().map(|r| r.offset).collect::<Vec<_>>()
        );
        // Without it, the block size is the alignment (and the stream is unchanged).
        let plain = spec(&[("rw", "randwrite"), ("bs", "64k"), ("size", "1m")]);
        assert!(first(&plain, 1 << 20, 16)
            .iter()
            .all(|r| r.offset % 65536 == 0));
    }

    /// fio 3.33: randread bs=4k over a 10 KiB region reads its two blocks, once each (8 KiB
    /// a loop); raidlab drew a third request, so one block came twice in the pass (12 KiB
    /// a loop). With io_size past the region the map goes round again, in both.
    #[test]
    fn a_random_pass_over_a_partial_last_block_reads_each_whole_block_once() {
        let s = spec(&[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "10k"),
            ("loops", "3"),
        ]);
        let stream = stream_of(&s, 1 << 20);
        assert_eq!(stream.total_bytes(), Some(6 * 4096));
        let reqs: Vec<Request> = stream.collect();
        assert_eq!(reqs.len(), 6);
        for pass in 0..3 {
            let mut offs: Vec<u64> = reqs
                .iter()
                .filter(|r| r.pass == pass)
                .map(|r| r.offset)
                .collect();
            offs.sort_unstable();
            assert_eq!(offs, [0, 4096], "pass {pass}");
        }
        let s = spec(&[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "64k"),
            ("io_size", "102k"),
        ]);
        assert_eq!(stream_of(&s, 1 << 20).count(), 26);
    }

    /// Two job sections alike, side by side (a job file's [a] and [b], both randread):
    /// fio seeds each job by its number, so they read apart; raidlab's seed left out the
    /// section, so both issued the very same offsets in the same order.
    #[test]
    fn job_sections_alike_draw_their_own_offsets() {
        for rw in ["randread", "randwrite"] {
            for extra in [&[][..], &[("norandommap", "1")][..]] {
                let mut o = vec![("rw", rw), ("bs", "4k"), ("size", "1m")];
                o.extend_from_slice(extra);
                let specs = [spec(&o), spec(&o)];
                let insts = JobInstance::expand(&specs);
                let offs = |i: usize| -> Vec<u64> {
                    RequestStream::new(&specs[insts[i].spec_index], &insts[i], 1 << 20)
                        .unwrap()
                        .take(64)
                        .map(|r| r.offset)
                        .collect()
                };
                assert_ne!(offs(0), offs(1), "{rw} {extra:?}");
            }
        }
    }

    #[test]
    fn number_ios_ends_the_stream_early() {
        // As fio (3.33's write_iolog of these jobs): number_ios counts per loop, over the
        // loops together, so 5 a loop for 3 loops is one pass's first 15 requests of 16...
        let s = spec(&[
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "64k"),
            ("loops", "3"),
            ("number_ios", "5"),
        ]);
        let stream = stream_of(&s, 1 << 20);
        assert_eq!(stream.total_bytes(), Some(15 * 4096));
        let reqs: Vec<Request> = stream.collect();
        assert_eq!(reqs.len(), 15);
        assert!(reqs.iter().all(|r| r.pass == 0));
        assert_eq!(reqs[14].offset, 14 * 4096);
        // ... 20 a loop for 3 loops is all three passes (60 > 48), and 12 a loop ends the
        // third pass after its fourth request.
        for (n, want) in [(20, 48), (12, 36)] {
            let mut s = s.clone();
            apply_option(&mut s, "number_ios", Some(&n.to_string())).unwrap();
            let stream = stream_of(&s, 1 << 20);
            assert_eq!(stream.total_bytes(), Some(want * 4096), "number_ios={n}");
            assert_eq!(stream.count() as u64, want, "number_ios={n}");
        }
        let unbounded = spec(&[
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "64k"),
            ("loops", "3"),
        ]);
        assert_eq!(
            stream_of(&unbounded, 1 << 20).total_bytes(),
            Some(3 * 64 * 1024)
        );
    }

    #[test]
    fn one_direction_with_its_own_block_size_knows_its_total() {
        // bs=4k,64k on a read-only job: every request is a 4 KiB read.
        let s = spec(&[("rw", "randread"), ("bs", "4k,64k"), ("size", "1m")]);
        let stream = stream_of(&s, 1 << 20);
        assert_eq!(stream.total_bytes(), Some(1 << 20));
        assert_eq!(stream.requests_per_pass(), Some(256));
        assert_eq!(stream.clone().count(), 256);
    }

    #[test]
    fn drawn_block_sizes_expect_each_pass_to_move_its_bytes() {
        let s = spec(&[
            ("rw", "randread"),
            ("bssplit", "4k/50:64k/50"),
            ("size", "8m"),
            ("loops", "2"),
        ]);
        let stream = stream_of(&s, 8 << 20);
        assert_eq!(stream.total_bytes(), None);
        assert_eq!(stream.expected_bytes(), Some(16 << 20));
        let moved: u64 = stream.map(|r| r.len).sum();
        assert_eq!(moved, 16 << 20);
        // number_ios first: that many requests of the mean size (34 KiB).
        let capped = spec(&[
            ("rw", "randread"),
            ("bssplit", "4k/50:64k/50"),
            ("size", "8m"),
            ("number_ios", "100"),
        ]);
        let stream = stream_of(&capped, 8 << 20);
        assert_eq!(stream.expected_bytes(), Some(100 * 34 * 1024));
        // Time-based: no end to expect.
        let timed = spec(&[
            ("rw", "randread"),
            ("bssplit", "4k/50:64k/50"),
            ("runtime", "1s"),
            ("time_based", "1"),
        ]);
        let stream = stream_of(&timed, 8 << 20);
        assert_eq!(stream.expected_bytes(), None);
    }

    #[test]
    fn verify_refuses_blocks_that_could_overlap() {
        let mut s = spec(&[
            ("rw", "randwrite"),
            ("bs", "8k"),
            ("ba", "4k"),
            ("verify", "crc32c"),
        ]);
        s.filenames = vec!["t".into()];
        let e = s.validate().unwrap_err();
        assert!(
            e.message.contains("blockalign=4096 below bs=8192"),
            "{}",
            e.message
        );
    }

    #[test]
    fn io_size_below_the_block_size_is_refused() {
        let mut s = spec(&[("bs", "64k"), ("io_size", "4k")]);
        s.filenames = vec!["t".into()];
        let e = s.validate().unwrap_err();
        assert!(e.message.contains("io_size=4096"), "{}", e.message);
    }

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        let s = spec(&[("rw", "randrw"), ("bs", "8k"), ("size", "1m")]);
        assert_eq!(first(&s, 1 << 20, 200), first(&s, 1 << 20, 200));
        let t = spec(&[
            ("rw", "randrw"),
            ("bs", "8k"),
            ("size", "1m"),
            ("randseed", "7"),
        ]);
        assert_ne!(first(&s, 1 << 20, 200), first(&t, 1 << 20, 200));
    }

    /// Mixed streams with fixed block sizes take a shorter path; it gives the same requests
    /// as the general one, across pass ends, loops, request counts and both modes.
    #[test]
    fn fixed_mixed_streams_match_the_general_path() {
        let cases: [&[(&str, &str)]; 4] = [
            &[
                ("rw", "randrw"),
                ("bs", "8k"),
                ("size", "1m"),
                ("loops", "3"),
            ],
            &[
                ("rw", "rw"),
                ("bs", "4k,16k"),
                ("size", "1m"),
                ("loops", "2"),
            ],
            &[
                ("rw", "randrw"),
                ("rwmixread", "30"),
                ("bs", "4k,12k"),
                ("size", "200k"),
                ("loops", "4"),
            ],
            &[
                ("rw", "randrw"),
                ("bs", "8k"),
                ("size", "1m"),
                ("number_ios", "300"),
            ],
        ];
        for opts in cases {
            let s = spec(opts);
            let fast = stream_of(&s, 1 << 20);
            assert!(fast.fixed_mixed.is_some(), "{opts:?}");
            let mut general = fast.clone();
            general.fixed_mixed = None;
            let a: Vec<Request> = fast.take(5000).collect();
            let b: Vec<Request> = general.take(5000).collect();
            assert!(a.len() > 10, "{opts:?}");
            assert_eq!(a, b, "{opts:?}");
        }
    }

    /// Uniform random streams of fixed sizes (norandommap) take a shorter path; it gives
    /// the same requests as the general one.
    #[test]
    fn uniform_streams_match_the_general_path() {
        let cases: [&[(&str, &str)]; 3] = [
            &[
                ("rw", "randrw"),
                ("bs", "8k"),
                ("size", "1m"),
                ("loops", "3"),
            ],
            &[
                ("rw", "randrw"),
                ("rwmixread", "30"),
                ("bs", "4k,12k"),
                ("size", "200k"),
            ],
            &[
                ("rw", "randwrite"),
                ("bs", "16k"),
                ("size", "1m"),
                ("loops", "2"),
            ],
        ];
        for opts in cases {
            let mut opts = opts.to_vec();
            opts.push(("norandommap", "1"));
            let s = spec(&opts);
            let fast = stream_of(&s, 1 << 20);
            assert!(fast.uniform.is_some(), "{opts:?}");
            let mut general = fast.clone();
            general.uniform = None;
            general.fixed = None;
            general.fixed_mixed = None;
            let a: Vec<Request> = fast.take(5000).collect();
            let b: Vec<Request> = general.take(5000).collect();
            assert!(a.len() > 10, "{opts:?}");
            assert_eq!(a, b, "{opts:?}");
        }
    }

    #[test]
    fn random_offsets_are_aligned_and_spread() {
        let s = spec(&[("rw", "randread"), ("bs", "64k"), ("size", "64m")]);
        let reqs = first(&s, 64 << 20, 1024);
        assert_eq!(reqs.len(), 1024);
        assert!(reqs
            .iter()
            .all(|r| r.offset % 65536 == 0 && r.offset + r.len <= 64 << 20));
        let upper = reqs.iter().filter(|r| r.offset >= 32 << 20).count();
        assert!(
            (400..624).contains(&upper),
            "{upper} of 1024 in the upper half"
        );
    }

    #[test]
    fn rwmixread_sets_the_read_share() {
        let s = spec(&[
            ("rw", "randrw"),
            ("rwmixread", "70"),
            ("bs", "4k"),
            ("size", "64m"),
        ]);
        let reqs = first(&s, 64 << 20, 10000);
        let reads = reqs.iter().filter(|r| r.dir == Dir::Read).count();
        assert!((6700..7300).contains(&reads), "{reads}");
        assert_eq!(s.rw, RwMode::RandRw);
    }

    #[test]
    fn time_based_streams_do_not_end() {
        let s = spec(&[
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "16k"),
            ("runtime", "1"),
            ("time_based", "1"),
        ]);
        let reqs = first(&s, 1 << 20, 100);
        assert_eq!(reqs.len(), 100);
        assert_eq!(reqs[99].pass, 24);
    }

    #[test]
    fn numjobs_with_offset_increment_split_the_target() {
        let s = spec(&[
            ("rw", "read"),
            ("bs", "1m"),
            ("size", "4m"),
            ("numjobs", "4"),
            ("offset_increment", "4m"),
        ]);
        let insts = JobInstance::expand(std::slice::from_ref(&s));
        assert_eq!(insts.len(), 4);
        for inst in &insts {
            let st = RequestStream::new(&s, inst, 16 << 20).unwrap();
            assert_eq!(st.region(), (inst.job_index as u64 * (4 << 20), 4 << 20));
        }
    }

    /// Requests per block of the first `n` requests of `opts` over a 64 MiB region of
    /// 4 KiB blocks (16384 blocks), hottest first.
    fn block_counts(opts: &[(&str, &str)], n: usize) -> Vec<u32> {
        let mut o = vec![
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "64m"),
            ("runtime", "1"),
            ("time_based", "1"),
        ];
        o.extend_from_slice(opts);
        let mut c = std::collections::HashMap::new();
        for r in first(&spec(&o), 64 << 20, n) {
            assert!(r.offset % 4096 == 0 && r.offset + r.len <= 64 << 20);
            *c.entry(r.offset).or_insert(0u32) += 1;
        }
        let mut v: Vec<u32> = c.into_values().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    }

    /// `random_generator=lfsr` walks every block once a pass even with `norandommap`, as
    /// fio's LFSR does; without it `norandommap` draws with replacement.
    #[test]
    fn lfsr_walks_every_block_once_a_pass_even_without_a_random_map() {
        let n = 16384; // one pass of 64 MiB in 4 KiB blocks
        let counts = block_counts(&[("norandommap", "1"), ("random_generator", "lfsr")], n);
        assert_eq!((counts.len(), counts[0]), (n, 1));
        let counts = block_counts(&[("norandommap", "1")], n);
        assert!(counts[0] > 1 && counts.len() < n, "{}", counts.len());
        let counts = block_counts(&[("random_generator", "tausworthe64")], n);
        assert_eq!((counts.len(), counts[0]), (n, 1));
    }

    /// Share of `n` requests that went to the hottest `blocks` blocks.
    fn hot_share(counts: &[u32], blocks: usize, n: usize) -> f64 {
        counts.iter().take(blocks).map(|&c| c as f64).sum::<f64>() / n as f64
    }

    /// zipf:1.2 over 16384 blocks: the hottest 10% take most requests (the first 1638
    /// ranks' share of ζ(16384, 1.2) is 0.914); uniform draws give them little more than
    /// 10%.
    #[test]
    fn zipf_offsets_concentrate_on_few_blocks() {
        let n = 100_000;
        let zipf = block_counts(&[("random_distribution", "zipf:1.2")], n);
        let share = hot_share(&zipf, 1638, n);
        assert!((0.89..0.94).contains(&share), "zipf:1.2 hot 10%: {share}");
        // A lower theta concentrates less, and theta 0.8 less still.
        let mild = hot_share(
            &block_counts(&[("random_distribution", "zipf:0.8")], n),
            1638,
            n,
        );
        assert!(mild < share - 0.2 && mild > 0.3, "zipf:0.8 hot 10%: {mild}");
        let uniform = hot_share(&block_counts(&[("norandommap", "1")], n), 1638, n);
        assert!(uniform < 0.2, "uniform hot 10%: {uniform}");
    }

    /// pareto:h concentrates too, and normal gathers around its mean: each far from uniform.
    #[test]
    fn pareto_and_normal_concentrate() {
        let n = 50_000;
        let pareto = hot_share(
            &block_counts(&[("random_distribution", "pareto:0.2")], n),
            1638,
            n,
        );
        assert!(pareto > 0.5, "pareto:0.2 hot 10%: {pareto}");
        let normal = hot_share(
            &block_counts(&[("random_distribution", "normal:5")], n),
            1638,
            n,
        );
        assert!(normal > 0.3, "normal:5 hot 10%: {normal}");
    }

    /// A center puts the hottest block (rank 0) at that share of the region.
    #[test]
    fn a_center_places_the_hottest_block() {
        for (dist, at) in [
            ("zipf:1.5:0.25", 16384 / 4),
            ("pareto:0.1:0.75", 16384 * 3 / 4),
        ] {
            let s = spec(&[
                ("rw", "randread"),
                ("bs", "4k"),
                ("size", "64m"),
                ("random_distribution", dist),
            ]);
            let mut c = std::collections::HashMap::new();
            for r in first(&s, 64 << 20, 20_000) {
                *c.entry(r.offset / 4096).or_insert(0u32) += 1;
            }
            let hottest = c.iter().max_by_key(|(b, n)| (**n, **b)).unwrap().0;
            assert_eq!(*hottest, at, "{dist}");
        }
    }

    /// zoned:60/10:30/20:8/30:2/40: each zone takes its share of the requests within a
    /// point or two over 100 000 requests, per direction when reads and writes differ.
    #[test]
    fn zoned_shares_follow_their_zones() {
        let n = 100_000;
        let s = spec(&[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "64m"),
            ("random_distribution", "zoned:60/10:30/20:8/30:2/40"),
            ("runtime", "1"),
            ("time_based", "1"),
        ]);
        let mb = 64u64 << 20;
        let mut zones = [0u32; 4];
        for r in first(&s, mb, n) {
            let pct = r.offset * 100 / mb;
            zones[match pct {
                0..=9 => 0,
                10..=29 => 1,
                30..=59 => 2,
                _ => 3,
            }] += 1;
        }
        for (z, want) in zones.iter().zip([60.0, 30.0, 8.0, 2.0]) {
            let got = *z as f64 * 100.0 / n as f64;
            assert!(
                (got - want).abs() < 1.0,
                "zone share {got}% for {want}%: {zones:?}"
            );
        }
        // Reads to the first half, writes to the second (zoned:R,W), absolute sizes.
        let s = spec(&[
            ("rw", "randrw"),
            ("bs", "4k"),
            ("size", "64m"),
            (
                "random_distribution",
                "zoned_abs:100/32m:0/32m,0/32m:100/32m",
            ),
        ]);
        for r in first(&s, mb, 10_000) {
            let low = r.offset + r.len <= 32 << 20;
            assert_eq!(low, r.dir == Dir::Read, "{r:?}");
        }
        // zoned_abs zones past the region are refused when the stream is made.
        let s = spec(&[
            ("rw", "randread"),
            ("size", "1m"),
            ("random_distribution", "zoned_abs:50/1m:50/1m"),
        ]);
        let inst = &JobInstance::expand(std::slice::from_ref(&s))[0];
        let e = RequestStream::new(&s, inst, 1 << 20).unwrap_err().message;
        assert!(
            e.contains("zoned_abs zones cover 2097152 bytes but the job's region holds 1048576"),
            "{e}"
        );
    }

    /// Same spec and seed, same stream; another seed, another; non-uniform draws do not use
    /// the random map (a block may come twice in a pass, as with fio's norandommap).
    #[test]
    fn distributions_repeat_with_their_seed() {
        for d in ["zipf:1.2", "pareto:0.3", "normal:10", "zoned:50/50:50/50"] {
            let s = spec(&[
                ("rw", "randrw"),
                ("bs", "4k"),
                ("size", "16m"),
                ("random_distribution", d),
            ]);
            assert_eq!(first(&s, 16 << 20, 500), first(&s, 16 << 20, 500), "{d}");
            let mut t = s.clone();
            apply_option(&mut t, "randseed", Some("12345")).unwrap();
            assert_ne!(first(&s, 16 << 20, 500), first(&t, 16 << 20, 500), "{d}");
            let stream = stream_of(&s, 16 << 20);
            assert!(stream.mapped.is_none(), "{d}");
            assert_eq!(stream.count(), 4096, "{d}: one pass of the region's bytes");
        }
        // random_distribution=random is the default: the same stream as without it.
        let plain = spec(&[("rw", "randread"), ("bs", "4k"), ("size", "1m")]);
        let mut r = plain.clone();
        apply_option(&mut r, "random_distribution", Some("random")).unwrap();
        assert_eq!(first(&plain, 1 << 20, 300), first(&r, 1 << 20, 300));
    }

    #[test]
    fn random_distribution_values_are_checked() {
        let mut s = JobSpec::default();
        for (v, want) in [
            ("zipf:1", "zipf theta 1 in 'zipf:1' is out of range"),
            (
                "pareto:1.5",
                "pareto power 1.5 in 'pareto:1.5' is out of range",
            ),
            (
                "normal:100",
                "out of range (valid: 0 up to, not including, 100",
            ),
            (
                "zipf:1.2:2",
                "center 2 in 'zipf:1.2:2' is out of range (valid: 0 to 1",
            ),
            ("zoned:60/10:30/20", "add up to 90% (valid: exactly 100)"),
            (
                "zoned:60/70:40/50",
                "zone sizes in '60/70:40/50' add up to 120%",
            ),
            ("zoned", "gives no zones"),
            (
                "zoned:/10:100/90",
                "zone '/10' has no share of the accesses",
            ),
            ("zipf:abc", "value 'abc' in 'zipf:abc' is not a number"),
            (
                "lognormal:3",
                "is not a random distribution (valid: random, zipf:THETA",
            ),
        ] {
            let e = apply_option(&mut s, "random_distribution", Some(v)).unwrap_err();
            assert!(e.message.contains(want), "{v}: {e}");
            assert!(
                e.message.starts_with("option 'random_distribution': "),
                "{e}"
            );
        }
        // fio's defaults and fill-ins: zipf 1.1, gauss for normal, a missing share shared.
        apply_option(&mut s, "random_distribution", Some("zipf")).unwrap();
        assert_eq!(
            s.random_distribution,
            Distribution::Zipf {
                theta: 1.1,
                center: None
            }
        );
        apply_option(&mut s, "random_distribution", Some("gauss:3:0.5")).unwrap();
        assert_eq!(
            s.random_distribution,
            Distribution::Normal {
                dev: 3.0,
                center: Some(0.5)
            }
        );
        apply_option(&mut s, "random_distribution", Some("zoned:50/10:25/:25/")).unwrap();
        let Distribution::Zoned { read, .. } = &s.random_distribution else {
            panic!("zoned")
        };
        assert_eq!(
            read.iter()
                .map(|z| (z.access_percent, z.size))
                .collect::<Vec<_>>(),
            [(50, 10), (25, 45), (25, 45)]
        );
    }

    /// fio's `rw=randread:8`: a random offset every 8 requests, the 7 after it going on from
    /// it (`rw_sequencer=sequential`) or repeating it (`identical`); with both directions,
    /// the count runs over both and each direction follows its own last request.
    #[test]
    fn random_runs_draw_an_offset_every_n_requests() {
        let opts = |rw: &str, seqr: &str| {
            spec(&[
                ("rw", rw),
                ("bs", "4k"),
                ("size", "64m"),
                ("rw_sequencer", seqr),
                ("runtime", "1"),
                ("time_based", "1"),
            ])
        };
        let reqs = first(&opts("randread:8", "sequential"), 64 << 20, 800);
        let mut starts = std::collections::HashSet::new();
        for (i, w) in reqs.windows(2).enumerate() {
            let k = i + 1; // w[1]'s index
            if k % 8 != 0 {
                assert_eq!(w[1].offset, w[0].offset + 4096, "request {k} follows on");
            }
        }
        for r in reqs.iter().step_by(8) {
            assert_eq!(r.offset % 4096, 0);
            starts.insert(r.offset);
        }
        // Run starts are drawn (100 of them over 16 384 blocks: nearly all distinct).
        assert!(starts.len() >= 95, "{} distinct run starts", starts.len());
        let same = first(&opts("randread:8", "identical"), 64 << 20, 80);
        for (k, r) in same.iter().enumerate() {
            assert_eq!(
                r.offset,
                same[k / 8 * 8].offset,
                "request {k} repeats its run's first"
            );
        }
        // Mixed: a direction's follow-on starts where its own last request ended.
        let mixed = first(&opts("randrw:4", "sequential"), 64 << 20, 4000);
        let mut end = [None::<u64>; 2];
        for (k, r) in mixed.iter().enumerate() {
            if k % 4 != 0 {
                assert_eq!(r.offset, end[r.dir as usize].unwrap_or(0), "request {k}");
            }
            end[r.dir as usize] = Some(r.offset + r.len);
        }
        // A run reaching the region's end starts it again.
        let mut small = opts("randread:64", "sequential");
        small.size = Some(64 << 10);
        let small = first(&small, 64 << 10, 64);
        assert!(small.iter().all(|r| r.offset + r.len <= 64 << 10));
        let wraps = small.windows(2).filter(|w| w[1].offset == 0).count();
        assert!(wraps >= 1, "a run of 64 over 16 blocks goes round");
    }

    /// fio's `rw=write:4k`: a sequential job skips the bytes after each block; its holes
    /// count against `size`, so a pass ends at the region's end (fio 3.33, size=1m,
    /// bs=4k, rw=write:4k: 128 writes, none twice); with `io_size` it moves that many bytes,
    /// going round to the region's start. `rw=read:-8k` with 4 KiB blocks reads backwards,
    /// every block once a pass.
    #[test]
    fn sequential_holes_skip_and_go_round() {
        let offs = |rw: &str, io_size: Option<&str>, n: usize| -> Vec<u64> {
            let mut s = spec(&[("rw", rw), ("bs", "4k"), ("size", "32k")]);
            if let Some(io) = io_size {
                apply_option(&mut s, "io_size", Some(io)).unwrap();
            }
            first(&s, 1 << 20, n)
                .iter()
                .map(|r| r.offset / 1024)
                .collect()
        };
        // 32 KiB a pass, blocks and holes: 4 blocks, every other one.
        assert_eq!(offs("write:4k", None, 100), [0, 8, 16, 24]);
        let s = spec(&[("rw", "write:4k"), ("bs", "4k"), ("size", "1m")]);
        assert_eq!(stream_of(&s, 1 << 20).count(), 128);
        assert_eq!(stream_of(&s, 1 << 20).total_bytes(), Some(512 << 10));
        // io_size=32k: 32 KiB of blocks, twice round.
        assert_eq!(
            offs("write:4k", Some("32k"), 100),
            [0, 8, 16, 24, 0, 8, 16, 24]
        );
        assert_eq!(offs("read:-8k", None, 100), [0, 28, 24, 20, 16, 12, 8, 4]);
        // A skip that is not a whole number of blocks: the blocks that start and end
        // inside the region; with io_size, round to the start.
        assert_eq!(offs("read:2k", None, 100), [0, 6, 12, 18, 24]);
        assert_eq!(
            offs("read:2k", Some("32k"), 100),
            [0, 6, 12, 18, 24, 0, 6, 12]
        );
        assert_eq!(offs("write:0", None, 8), [0, 4, 8, 12, 16, 20, 24, 28]);
    }

    /// percentage_random=N: about N% of a random job's requests are random, the others go
    /// on from the end of the last request of their direction; 0 is sequential; N,M per
    /// direction; sequential patterns are not affected.
    #[test]
    fn percentage_random_mixes_sequential_runs_in() {
        let follows = |reqs: &[Request]| {
            reqs.windows(2)
                .filter(|w| w[1].offset == w[0].offset + w[0].len)
                .count()
        };
        let n = 20_000;
        let s = spec(&[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "64m"),
            ("percentage_random", "30"),
            ("runtime", "1"),
            ("time_based", "1"),
        ]);
        let reqs = first(&s, 64 << 20, n);
        let seq = follows(&reqs) as f64 / n as f64;
        assert!((0.67..0.73).contains(&seq), "70% sequential: {seq}");
        let all_seq = spec(&[
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("size", "1m"),
            ("percentage_random", "0"),
            ("runtime", "1"),
            ("time_based", "1"),
        ]);
        let offs: Vec<u64> = first(&all_seq, 1 << 20, 300)
            .iter()
            .map(|r| r.offset)
            .collect();
        let want: Vec<u64> = (0..256u64)
            .map(|i| i * 4096)
            .chain(std::iter::once(0))
            .collect();
        assert_eq!(&offs[..257], &want[..]);
        // Reads all random, writes all sequential.
        let split = spec(&[
            ("rw", "randrw"),
            ("bs", "4k"),
            ("size", "64m"),
            ("percentage_random", "100,0"),
        ]);
        let reqs = first(&split, 64 << 20, 4000);
        let writes: Vec<u64> = reqs
            .iter()
            .filter(|r| r.dir == Dir::Write)
            .map(|r| r.offset)
            .collect();
        assert!(
            writes.windows(2).all(|w| w[1] == w[0] + 4096),
            "writes in order"
        );
        let reads: Vec<&Request> = reqs.iter().filter(|r| r.dir == Dir::Read).collect();
        let read_runs = reads
            .windows(2)
            .filter(|w| w[1].offset == w[0].offset + 4096)
            .count();
        assert!(read_runs < 20, "reads random: {read_runs} follow on");
        // A sequential pattern ignores it (as fio).
        let rd = spec(&[("rw", "read"), ("bs", "4k"), ("size", "1m")]);
        let mut p = rd.clone();
        apply_option(&mut p, "percentage_random", Some("50")).unwrap();
        assert_eq!(first(&rd, 1 << 20, 300), first(&p, 1 << 20, 300));
        let mut bad = JobSpec::default();
        let e = apply_option(&mut bad, "percentage_random", Some("101")).unwrap_err();
        assert!(e.message.contains("valid: 0 to 100"), "{e}");
    }

    /// bsrange=4k-16k: sizes 4, 8, 12 and 16 KiB, each about a quarter of the requests (fio
    /// 3.33's draw), each pass moving exactly its bytes; with bs_unaligned any size between;
    /// random offsets on multiples of the smallest size.
    #[test]
    fn bsrange_draws_multiples_of_the_smallest_size() {
        // (Drawn with replacement, so the sizes are as drawn: the random map cuts them
        // short as a pass fills, below.)
        let s = spec(&[
            ("rw", "randwrite"),
            ("bsrange", "4k-16k"),
            ("size", "64m"),
            ("norandommap", "1"),
        ]);
        let reqs = first(&s, 64 << 20, 40_000);
        let mut by = std::collections::BTreeMap::new();
        for r in &reqs {
            *by.entry(r.len).or_insert(0u32) += 1;
            assert!(
                r.offset % 4096 == 0 && r.offset + r.len <= 64 << 20,
                "{r:?}"
            );
        }
        assert_eq!(
            by.keys().copied().collect::<Vec<_>>(),
            [4096, 8192, 12288, 16384]
        );
        for (bs, c) in &by {
            let share = *c as f64 / reqs.len() as f64;
            assert!((0.23..0.27).contains(&share), "{bs}: {share}");
        }
        assert!(
            reqs.iter().any(|r| r.offset % 8192 != 0 && r.len == 8192),
            "8 KiB requests also on odd 4 KiB blocks"
        );
        for rw in ["read", "randread"] {
            let s = spec(&[
                ("rw", rw),
                ("bsrange", "4k-64k"),
                ("size", "1m"),
                ("loops", "2"),
            ]);
            let reqs: Vec<Request> = stream_of(&s, 1 << 20).collect();
            for pass in 0..2 {
                let b: u64 = reqs.iter().filter(|r| r.pass == pass).map(|r| r.len).sum();
                assert_eq!(b, 1 << 20, "{rw} pass {pass}");
            }
        }
        let u = spec(&[
            ("rw", "write"),
            ("bsrange", "1k-8k"),
            ("bs_unaligned", "1"),
            ("size", "64m"),
        ]);
        let lens: std::collections::BTreeSet<u64> =
            first(&u, 64 << 20, 5000).iter().map(|r| r.len).collect();
        assert!(lens.iter().any(|l| l % 1024 != 0), "unaligned sizes");
        assert!(lens.iter().all(|l| (1024..=8192).contains(l)));
        // Reads and writes apart: bsrange=R,W.
        let rw = spec(&[
            ("rw", "randrw"),
            ("bsrange", "4k-4k,64k-128k"),
            ("size", "64m"),
        ]);
        for r in first(&rw, 64 << 20, 2000) {
            match r.dir {
                Dir::Read => assert_eq!(r.len, 4096),
                Dir::Write => assert!(r.len == 65536 || r.len == 131072, "{r:?}"),
                Dir::Trim => unreachable!("a randrw job trims nothing: {r:?}"),
            }
        }
        let mut bad = JobSpec::default();
        let e = apply_option(&mut bad, "bsrange", Some("16k-4k")).unwrap_err();
        assert!(e.message.contains("MIN at most MAX"), "{e}");
    }

    /// size=, offset= and io_size= as percent of the target: offset rounded up to the
    /// block size (fio: offset=30% of 1 MiB with bs=4k starts at 315392), size rounded down
    /// and cut at the target's end; 0% and past 100% refused in one line.
    #[test]
    fn percentages_are_shares_of_the_target() {
        let s = spec(&[
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "512k"),
            ("offset", "30%"),
        ]);
        assert_eq!(stream_of(&s, 1 << 20).region(), (315_392, 512 << 10));
        // fio's offset_align rounds it up to its own unit instead.
        let mut a = s.clone();
        apply_option(&mut a, "offset_align", Some("64k")).unwrap();
        assert_eq!(stream_of(&a, 1 << 20).region(), (327_680, 512 << 10));
        let s = spec(&[("rw", "read"), ("bs", "4k"), ("size", "50%")]);
        assert_eq!(stream_of(&s, 1 << 20).region(), (0, 512 << 10));
        assert_eq!(stream_of(&s, 10 << 20).region(), (0, 5 << 20));
        // Cut at the end: 75% from 50%.
        let s = spec(&[
            ("rw", "read"),
            ("bs", "4k"),
            ("size", "75%"),
            ("offset", "50%"),
        ]);
        assert_eq!(stream_of(&s, 1 << 20).region(), (512 << 10, 512 << 10));
        let s = spec(&[("rw", "randread"), ("bs", "4k"), ("io_size", "25%")]);
        assert_eq!(stream_of(&s, 1 << 20).count(), 64);
        // A later size in bytes replaces the percentage, and the reverse.
        let mut s = spec(&[("size", "50%"), ("size", "128k")]);
        assert_eq!((s.size, s.size_percent), (Some(128 << 10), None));
        apply_option(&mut s, "size", Some("10%")).unwrap();
        assert_eq!((s.size, s.size_percent), (None, Some(10)));
        let mut bad = JobSpec::default();
        for (k, v) in [
            ("size", "0%"),
            ("size", "101%"),
            ("io_size", "0%"),
            ("offset", "100%"),
            ("size", "x%"),
        ] {
            let e = apply_option(&mut bad, k, Some(v)).unwrap_err();
            assert!(
                e.message.contains("is not a share of the target (valid: "),
                "{k}={v}: {e}"
            );
        }
        let s = spec(&[("rw", "read"), ("size", "50%")]);
        let inst = &JobInstance::expand(std::slice::from_ref(&s))[0];
        let e = RequestStream::new(&s, inst, 0).unwrap_err().message;
        assert!(
            e.contains("size=50% is a share of the target's size, but the target is empty"),
            "{e}"
        );
        let e = RequestStream::new(&s, inst, 4096).unwrap_err().message;
        assert!(e.contains("less than one block of 4096 bytes"), "{e}");
    }

    /// offset_increment in percent of the target (fio's `offset_increment=25%`): four jobs
    /// of size=25% split the target into quarters. fio rounds each job's whole start up to
    /// the block size (get_start_offset), offset + i * offset_increment, so a percentage or
    /// a byte increment over a percent offset gives aligned starts: 1,000,000 bytes, 10%
    /// each, bs=4k: 102400, 200704, 303104 (not 102400 + 100000 * i).
    #[test]
    fn offset_increment_in_percent_splits_the_target() {
        let starts = |s: &JobSpec, target: u64| -> Vec<(u64, u64)> {
            JobInstance::expand(std::slice::from_ref(s))
                .iter()
                .map(|i| RequestStream::new(s, i, target).unwrap().region())
                .collect()
        };
        let mib = 1u64 << 20;
        let s = spec(&[
            ("bs", "4k"),
            ("size", "25%"),
            ("offset_increment", "25%"),
            ("numjobs", "4"),
        ]);
        assert_eq!(
            starts(&s, 32 * mib),
            (0..4).map(|i| (i * 8 * mib, 8 * mib)).collect::<Vec<_>>()
        );
        let want = vec![(102_400, 4096), (200_704, 4096), (303_104, 4096)];
        for inc in ["10%", "100000"] {
            let s = spec(&[
                ("bs", "4k"),
                ("size", "4k"),
                ("offset", "10%"),
                ("offset_increment", inc),
                ("numjobs", "3"),
            ]);
            assert_eq!(starts(&s, 1_000_000), want, "offset_increment={inc}");
        }
        // A later increment in bytes replaces the percentage; past 100% is refused.
        let mut s = spec(&[("offset_increment", "10%"), ("offset_increment", "64k")]);
        assert_eq!(
            (s.offset_increment, s.offset_increment_percent),
            (64 << 10, None)
        );
        let e = apply_option(&mut s, "offset_increment", Some("101%")).unwrap_err();
        assert!(e.message.contains("is not a share of the target"), "{e}");
    }

    proptest! {
        /// The short path of one-direction, one-size streams gives exactly the requests the
        /// general path gives (across passes, wraps, alignment and request counts).
        #[test]
        fn fixed_streams_take_the_general_paths_requests(
            bs_k in 1u64..64, size_k in 1u64..512, off_k in 0u64..64, io_k in 0u64..1024,
            random in any::<bool>(), write in any::<bool>(), ba in 0u64..3, loops in 1u32..4,
            nios in 0u64..200, time_based in any::<bool>(), seed in any::<u64>()
        ) {
            let mut s = spec(&[("bs", &format!("{bs_k}k")), ("size", &format!("{size_k}k")),
                ("offset", &format!("{off_k}k")), ("loops", &loops.to_string())]);
            s.rw = match (random, write) {
                (true, true) => RwMode::RandWrite,
                (true, false) => RwMode::RandRead,
                (false, true) => RwMode::Write,
                (false, false) => RwMode::Read,
            };
            if io_k > 0 { s.io_size = Some(io_k * 1024); }
            if ba > 0 { s.blockalign = Some(ba * 512); }
            if nios > 0 { s.number_ios = Some(nios); }
            s.time_based = time_based;
            s.runtime_ns = Some(1);
            s.randseed = seed;
            if s.validate().is_err() { return Ok(()); }
            let inst = &JobInstance::expand(std::slice::from_ref(&s))[0];
            let target = (off_k + size_k) * 1024;
            let Ok(fast) = RequestStream::new(&s, inst, target) else { return Ok(()) };
            prop_assert!(fast.fixed.is_some());
            let mut general = fast.clone();
            general.fixed = None;
            let a: Vec<Request> = fast.take(700).collect();
            let b: Vec<Request> = general.take(700).collect();
            prop_assert_eq!(a, b);
        }

        #[test]
        fn requests_never_leave_the_region(
            bs_k in 1u64..64, size_k in 64u64..4096, off_k in 0u64..1024,
            random in any::<bool>(), mix in 0u8..=100, seed in any::<u64>()
        ) {
            let mut s = spec(&[("bs", &format!("{bs_k}k")), ("size", &format!("{size_k}k")), ("offset", &format!("{off_k}k"))]);
            s.rw = if random { RwMode::RandRw } else { RwMode::ReadWrite };
            s.rwmixread = mix;
            s.randseed = seed;
            let target = (off_k + size_k) * 1024;
            for r in first(&s, target, 500) {
                prop_assert!(r.offset >= off_k * 1024);
                prop_assert!(r.offset + r.len <= target);
            }
        }
    }

    /// A rank of an MPI run numbers its instances after the ranks before it: regions by
    /// offset_increment, files in a directory and seeds apart; rank 0 is a run without MPI.
    #[test]
    fn ranks_number_their_instances_as_numjobs() {
        let mut base = JobSpec::default();
        crate::apply_option(&mut base, "numjobs", Some("2")).unwrap();
        crate::apply_option(&mut base, "size", Some("4m")).unwrap();
        crate::apply_option(&mut base, "offset_increment", Some("4m")).unwrap();
        let mut shared = base.clone();
        crate::apply_option(&mut shared, "filename", Some("/tmp/f")).unwrap();
        let mut r0 = vec![shared.clone()];
        let mut r1 = vec![shared.clone()];
        crate::for_rank(&mut r0, 0, 2);
        crate::for_rank(&mut r1, 1, 2);
        // Rank 0 runs as a run without MPI; only the files it writes of its own carry its rank.
        assert_eq!((r0[0].mpi_rank, r1[0].mpi_rank), (Some(0), Some(1)));
        assert_eq!(
            JobSpec {
                mpi_rank: None,
                ..r0[0].clone()
            },
            shared
        );
        let (i0, i1) = (JobInstance::expand(&r0), JobInstance::expand(&r1));
        assert_eq!(
            i1.iter().map(|i| i.job_index).collect::<Vec<_>>(),
            vec![2, 3]
        );
        let st = RequestStream::new(&r1[0], &i1[0], 64 << 20).unwrap();
        assert_eq!(st.region(), (8 << 20, 4 << 20));
        assert_ne!(i0[0].seed(&r0[0]), i1[0].seed(&r1[0]));
        // In a directory: rank 1's files are JOB.2.0 and JOB.3.0, each from its start.
        let mut d = base.clone();
        crate::apply_option(&mut d, "directory", Some("/tmp/x")).unwrap();
        let mut d1 = vec![d];
        crate::for_rank(&mut d1, 1, 2);
        crate::apply_directories(&mut d1);
        assert_eq!(d1[0].filenames, vec!["/tmp/x/job.2.0", "/tmp/x/job.3.0"]);
        assert_eq!(d1[0].first_job, 0);
        // rank_shift=1: rank 1 of 2 runs as rank 0 (its regions, its seed), rank 0 as rank 1.
        let mut shifted = shared.clone();
        crate::apply_option(&mut shifted, "rank_shift", Some("1")).unwrap();
        let mut s1 = vec![shifted.clone()];
        let mut s0 = vec![shifted];
        crate::for_rank(&mut s1, 1, 2);
        crate::for_rank(&mut s0, 0, 2);
        assert_eq!((s1[0].first_job, s1[0].randseed), (0, r0[0].randseed));
        assert_eq!((s0[0].first_job, s0[0].randseed), (2, r1[0].randseed));
        // A world of one: no shift.
        let mut alone = s1.clone();
        alone[0].first_job = 7;
        crate::for_rank(&mut alone, 0, 1);
        assert_eq!(alone[0].first_job, 0);
    }
}
