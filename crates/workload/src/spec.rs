//! [`JobSpec`]: one fio-style job, as plain data, and the option table that fills it.
//!
//! Command-line flags (`--bs=4k`) and job-file lines (`bs=4k`) go through the same
//! [`apply_option`], so both accept exactly the same options with the same errors.

use crate::content::BufferContent;
use crate::files::FileService;
use crate::iolog::{ReplayOptions, ReplaySkip};
use crate::latency::LatencyTarget;
use crate::pace::{Pace, RateProcess, SyncIo, ThinkBlocks};
use crate::size::{parse_bool, parse_duration_ns, parse_size_kb, parse_switch, parse_u32};
use crate::steady::SteadyCriterion;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The I/O pattern, fio's `rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (`rw` / `readwrite`).
    ReadWrite,
    RandRw,
    /// Sequential trims (discards): the region's blocks released in order.
    Trim,
    RandTrim,
    /// Each block trimmed, then written: a trim and a write at the same offset and of the
    /// same length, in that order, the blocks in sequence (fio's `trimwrite`).
    TrimWrite,
    /// As `TrimWrite`, the blocks in random order (fio's `randtrimwrite`).
    RandTrimWrite,
}

impl RwMode {
    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(match s.trim() {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
            other => {
                return Err(format!(
                    "'{other}' is not an I/O pattern (valid: read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite)"
                ))
            }
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandRw
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }
    /// Percentage of requests that are reads for this pattern given `rwmixread` (0 for the
    /// trim patterns, which read nothing).
    pub fn read_percent(self, rwmixread: u8) -> u8 {
        match self {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::ReadWrite | RwMode::RandRw => rwmixread,
            RwMode::Write
            | RwMode::RandWrite
            | RwMode::Trim
            | RwMode::RandTrim
            | RwMode::TrimWrite
            | RwMode::RandTrimWrite => 0,
        }
    }
    /// Whether the pattern changes what the target holds: it writes, or it trims (a trim
    /// releases data as surely as a write replaces it).
    pub fn writes(self, rwmixread: u8) -> bool {
        self.read_percent(rwmixread) < 100
    }
    /// Whether the pattern trims.
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }
    /// Whether each trim is followed by a write of its block (`trimwrite`, `randtrimwrite`).
    pub fn trim_then_write(self) -> bool {
        matches!(self, RwMode::TrimWrite | RwMode::RandTrimWrite)
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What fio's `R[,W[,T]]` form of a per-direction option gives (`bs`, `bsrange`, `bssplit`,
/// `percentage_random`, the `rate` options), each part read by `each`: a part not ended by a
/// comma applies to the directions after it too (`8k` is every direction's, `,8k` the
/// writes' and trims'); an empty part leaves its direction as `prev` has it (fio sets nothing
/// there, so a `[global]` value or the default stays: `8k,32k,` leaves trims).
fn by_direction<T: Clone, E>(
    parts: &[&str],
    prev: [T; 3],
    each: impl Fn(&str) -> Result<T, E>,
) -> Result<[T; 3], E> {
    let given = |i: usize| parts.get(i).filter(|p| !p.is_empty());
    let [prev_r, prev_w, prev_t] = prev;
    let read = match given(0) {
        Some(p) => each(p)?,
        None => prev_r,
    };
    let write = match (parts.get(1), given(1)) {
        (None, _) => read.clone(),
        (Some(_), Some(p)) => each(p)?,
        (Some(_), None) => prev_w,
    };
    let trim = match (parts.get(2), given(2)) {
        (Some(_), Some(p)) => each(p)?,
        (Some(_), None) => prev_t,
        // (No third part: the second's, if it was given, runs on; else the first's.)
        (None, _) => match (parts.get(1), given(1)) {
            (None, _) => read.clone(),
            (Some(_), Some(_)) => write.clone(),
            (Some(_), None) => prev_t,
        },
    };
    Ok([read, write, trim])
}

/// [`by_direction`] for block sizes.
fn block_sizes_of(
    parts: &[&str],
    prev: &BlockSizes,
    each: impl Fn(&str) -> Result<BsDist, SpecError>,
) -> Result<BlockSizes, SpecError> {
    let prev = [prev.read.clone(), prev.write.clone(), prev.trim.clone()];
    let [read, write, trim] = by_direction(parts, prev, each)?;
    Ok(BlockSizes { read, write, trim })
}

/// How block sizes are drawn for one direction: fixed, fio's `bssplit` weights, or fio's
/// `bsrange`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsDist {
    /// (block size in bytes, weight in percent); weights sum to 100. For a range, its
    /// smallest size alone.
    pub entries: Vec<(u64, u32)>,
    /// fio's `bsrange=MIN-MAX`: sizes drawn between the two (bytes), multiples of the
    /// smallest unless the job says `bs_unaligned` (see `RequestStream`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<(u64, u64)>,
}

impl BsDist {
    pub fn fixed(bs: u64) -> Self {
        BsDist {
            entries: vec![(bs, 100)],
            range: None,
        }
    }
    /// fio's `bsrange`: sizes from `min` to `max` bytes (one size when they are equal).
    pub fn range(min: u64, max: u64) -> Self {
        BsDist {
            entries: vec![(min, 100)],
            range: (max > min).then_some((min, max)),
        }
    }
    pub fn is_fixed(&self) -> bool {
        self.entries.len() == 1 && self.range.is_none()
    }
    pub fn min(&self) -> u64 {
        self.entries.iter().map(|e| e.0).min().unwrap_or(0)
    }
    pub fn max(&self) -> u64 {
        match self.range {
            Some((_, max)) => max,
            None => self.entries.iter().map(|e| e.0).max().unwrap_or(0),
        }
    }
    /// The mean block size, bytes: by the weights, or the middle of a range (fio's draws
    /// are uniform over the range's sizes).
    pub fn mean(&self) -> f64 {
        if let Some((min, max)) = self.range {
            return (min as f64 + max as f64) / 2.0;
        }
        self.entries
            .iter()
            .map(|&(bs, w)| bs as f64 * w as f64)
            .sum::<f64>()
            / self
                .entries
                .iter()
                .map(|e| e.1 as f64)
                .sum::<f64>()
                .max(1.0)
    }
    /// Pick a block size from a uniform draw `u` in 0..100.
    pub fn pick(&self, u: u32) -> u64 {
        let mut acc = 0;
        for &(bs, w) in &self.entries {
            acc += w;
            if u < acc {
                return bs;
            }
        }
        self.entries.last().map(|e| e.0).unwrap_or(0)
    }
    /// Parse one direction of a `bssplit` value: `4k/10:64k/50:32k/40`. Entries without a
    /// weight share what the weighted entries leave of 100%, as in fio; so do entries whose
    /// weight is empty or 0 (`64k/`, `64k/0`), which fio counts as missing too (options.c,
    /// split_parse_ddir: a percentage of 0 is "not set").
    /// Sizes are read under fio's `kb_base` (1024 or 1000).
    pub fn parse_split(text: &str, kb_base: u32) -> Result<Self, String> {
        let mut entries = Vec::new();
        let mut unweighted = Vec::new();
        let mut total = 0u32;
        for part in text.split(':').filter(|p| !p.trim().is_empty()) {
            let (bs_s, w_s) = match part.split_once('/') {
                Some((b, w)) => (b, Some(w)),
                None => (part, None),
            };
            let bs = parse_size_kb(bs_s, kb_base)?;
            if bs == 0 {
                return Err(format!("block size in '{part}' is zero"));
            }
            match w_s.filter(|w| !w.trim().is_empty()) {
                Some(w) => match parse_u32(w, 0, 100)? {
                    0 => unweighted.push(bs),
                    w => {
                        total += w;
                        entries.push((bs, w));
                    }
                },
                None => unweighted.push(bs),
            }
        }
        if total > 100 {
            return Err(format!(
                "bssplit weights in '{text}' add up to {total}% (valid: at most 100)"
            ));
        }
        if !unweighted.is_empty() {
            let left = 100 - total;
            let share = left / unweighted.len() as u32;
            let mut extra = left - share * unweighted.len() as u32;
            for bs in unweighted {
                let w = share
                    + if extra > 0 {
                        extra -= 1;
                        1
                    } else {
                        0
                    };
                entries.push((bs, w));
            }
        } else if total != 100 {
            return Err(format!(
                "bssplit weights in '{text}' add up to {total}% (valid: exactly 100)"
            ));
        }
        entries.retain(|e| e.1 > 0);
        if entries.is_empty() {
            return Err(format!(
                "bssplit '{text}' has no block size with a nonzero weight"
            ));
        }
        Ok(BsDist {
            entries,
            range: None,
        })
    }
}

/// Block sizes for reads and for writes (fio's `bs=4k,64k` sets them separately).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSizes {
    pub read: BsDist,
    pub write: BsDist,
    /// Trims' sizes: the writes' unless the job gives them apart (fio's third value).
    #[serde(default = "trim_default")]
    pub trim: BsDist,
}

fn trim_default() -> BsDist {
    BsDist::fixed(4096)
}

impl BlockSizes {
    pub fn fixed(bs: u64) -> Self {
        BlockSizes {
            read: BsDist::fixed(bs),
            write: BsDist::fixed(bs),
            trim: BsDist::fixed(bs),
        }
    }
    /// The sizes of direction `dir`'s requests.
    pub fn of(&self, dir: crate::stream::Dir) -> &BsDist {
        match dir {
            crate::stream::Dir::Read => &self.read,
            crate::stream::Dir::Write => &self.write,
            crate::stream::Dir::Trim => &self.trim,
        }
    }
    pub fn min(&self) -> u64 {
        self.read.min().min(self.write.min()).min(self.trim.min())
    }
    pub fn max(&self) -> u64 {
        self.read.max().max(self.write.max()).max(self.trim.max())
    }
}

/// Where random offsets fall in a job's region (fio's `random_distribution`). Anything but
/// `Random` draws offsets with replacement, as fio turns its random map off for them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Uniform over the region's blocks (the random map applies).
    #[default]
    Random,
    /// Zipf with exponent `theta` (> 0, not 1) over the region's blocks: block ranks are
    /// drawn Zipf-distributed and scattered over the region; `center` (0..=1) puts the
    /// hottest block at that share of the region, else a place drawn from the seed.
    Zipf { theta: f64, center: Option<f64> },
    /// Pareto with power `h` (0 < h < 1), ranks scattered as for zipf.
    Pareto { h: f64, center: Option<f64> },
    /// Normal (Gaussian) with a deviation of `dev` percent of the region (0 to below 100),
    /// scattered as for zipf; `center` shifts the scattered ranks by `center - 0.5` of the
    /// region.
    Normal { dev: f64, center: Option<f64> },
    /// Zones of the region, each taking a share of the accesses; within a zone offsets are
    /// uniform. Per direction (reads, writes, trims), as fio's `zoned:R,W,T`.
    Zoned {
        /// Zone sizes are bytes (`zoned_abs`) rather than percent of the region (`zoned`).
        absolute: bool,
        read: Vec<Zone>,
        write: Vec<Zone>,
        /// Trims' zones when the job gives them apart; else the writes'.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trim: Option<Vec<Zone>>,
    },
}

/// One zone of a zoned distribution: the share of accesses it takes and its size (percent
/// of the region for `zoned`, bytes for `zoned_abs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    /// Percent of the direction's random accesses that fall in this zone.
    pub access_percent: u32,
    /// Percent of the region (`zoned`) or bytes (`zoned_abs`).
    pub size: u64,
}

impl Distribution {
    /// Parse fio's `random_distribution` value: `random`, `zipf[:θ[:center]]`,
    /// `pareto[:h[:center]]`, `normal[:σ[:center]]`, `zoned:A/S:…[,A/S:…]`,
    /// `zoned_abs:A/SIZE:…[,…]`. `gauss` is taken for `normal` (fio's HOWTO names it, though
    /// fio 3.33's parser knows only `normal`); the per-direction `,` lists follow the HOWTO
    /// (fio 3.33's parser refuses any comma there).
    /// `zoned_abs` sizes are read under fio's `kb_base` (1024 or 1000).
    pub fn parse(text: &str, kb_base: u32) -> Result<Self, String> {
        let t = text.trim();
        let (kind, rest) = match t.split_once(':') {
            Some((k, r)) => (k.trim(), Some(r.trim())),
            None => (t, None),
        };
        let valid = "valid: random, zipf:THETA[:CENTER], pareto:H[:CENTER], normal:DEV[:CENTER], gauss:DEV[:CENTER], zoned:ACCESS%/SIZE%:…, zoned_abs:ACCESS%/SIZE:…";
        let number = |what: &str, s: &str| -> Result<f64, String> {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("{what} '{s}' in '{t}' is not a number ({valid})"))
        };
        // `VALUE[:CENTER]`, with fio's default value when none is given.
        let value_center = |default: f64| -> Result<(f64, Option<f64>), String> {
            let Some(rest) = rest.filter(|r| !r.is_empty()) else {
                return Ok((default, None));
            };
            let (v, c) = match rest.split_once(':') {
                Some((v, c)) => (v, Some(c)),
                None => (rest, None),
            };
            let v = number("value", v)?;
            let c = match c {
                Some(c) => {
                    let c = number("center", c)?;
                    if !(0.0..=1.0).contains(&c) {
                        return Err(format!(
                            "center {c} in '{t}' is out of range (valid: 0 to 1, a share of the region)"
                        ));
                    }
                    Some(c)
                }
                None => None,
            };
            Ok((v, c))
        };
        match kind {
            // (fio 3.33 ignores anything after `random:`.)
            "random" => Ok(Distribution::Random),
            // fio's defaults: zipf 1.1, pareto 0.2, normal 0.
            "zipf" => {
                let (theta, center) = value_center(1.1)?;
                if theta <= 0.0 || theta == 1.0 {
                    return Err(format!(
                        "zipf theta {theta} in '{t}' is out of range (valid: above 0, not 1, e.g. zipf:1.2)"
                    ));
                }
                Ok(Distribution::Zipf { theta, center })
            }
            "pareto" => {
                let (h, center) = value_center(0.2)?;
                if h <= 0.0 || h >= 1.0 {
                    return Err(format!(
                        "pareto power {h} in '{t}' is out of range (valid: between 0 and 1, e.g. pareto:0.2)"
                    ));
                }
                Ok(Distribution::Pareto { h, center })
            }
            "normal" | "gauss" => {
                let (dev, center) = value_center(0.0)?;
                if !(0.0..100.0).contains(&dev) {
                    return Err(format!(
                        "normal deviation {dev} in '{t}' is out of range (valid: 0 up to, not including, 100: percent of the region)"
                    ));
                }
                Ok(Distribution::Normal { dev, center })
            }
            "zoned" | "zoned_abs" => {
                let absolute = kind == "zoned_abs";
                let rest = rest.filter(|r| !r.is_empty()).ok_or_else(|| {
                    format!("'{t}' gives no zones (valid: e.g. {kind}:60/10:30/20:10/70)")
                })?;
                let parts: Vec<&str> = rest.split(',').collect();
                if parts.len() > 3 {
                    return Err(format!(
                        "'{t}' has {} zone lists (valid: at most three, for reads, writes and trims)",
                        parts.len()
                    ));
                }
                let read = parse_zones(parts[0], absolute, kb_base)?;
                let write = match parts.get(1) {
                    Some(w) if !w.trim().is_empty() => parse_zones(w, absolute, kb_base)?,
                    _ => read.clone(),
                };
                let trim = match parts.get(2).filter(|p| !p.trim().is_empty()) {
                    Some(t) => Some(parse_zones(t, absolute, kb_base)?),
                    None => None,
                };
                Ok(Distribution::Zoned {
                    absolute,
                    read,
                    write,
                    trim,
                })
            }
            _ => Err(format!("'{t}' is not a random distribution ({valid})")),
        }
    }

    /// fio's words for the distribution, as `random_distribution` takes them back.
    pub fn text(&self) -> String {
        let with_center = |name: &str, v: f64, c: &Option<f64>| match c {
            Some(c) => format!("{name}:{v}:{c}"),
            None => format!("{name}:{v}"),
        };
        match self {
            Distribution::Random => "random".into(),
            Distribution::Zipf { theta, center } => with_center("zipf", *theta, center),
            Distribution::Pareto { h, center } => with_center("pareto", *h, center),
            Distribution::Normal { dev, center } => with_center("normal", *dev, center),
            Distribution::Zoned {
                absolute,
                read,
                write,
                trim,
            } => {
                let list = |z: &[Zone]| {
                    z.iter()
                        .map(|z| format!("{}/{}", z.access_percent, z.size))
                        .collect::<Vec<_>>()
                        .join(":")
                };
                let kind = if *absolute { "zoned_abs" } else { "zoned" };
                match trim {
                    Some(t) => format!("{kind}:{},{},{}", list(read), list(write), list(t)),
                    None if read == write => format!("{kind}:{}", list(read)),
                    None => format!("{kind}:{},{}", list(read), list(write)),
                }
            }
        }
    }

    /// Whether this is the uniform distribution (random map and all).
    pub fn is_uniform(&self) -> bool {
        matches!(self, Distribution::Random)
    }
}

/// One direction's zones: `ACCESS/SIZE:ACCESS/SIZE:…`. Accesses must add up to 100 (fio
/// refuses less and more); a `zoned` entry without a size (`30/`) shares what the others
/// leave of the region, as fio fills them. `zoned` sizes are percent of the
/// region and add up to at most 100; `zoned_abs` sizes are bytes.
fn parse_zones(text: &str, absolute: bool, kb_base: u32) -> Result<Vec<Zone>, String> {
    let mut zones: Vec<(Option<u32>, Option<u64>)> = Vec::new();
    for part in text.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, s) = part.split_once('/').ok_or_else(|| {
            format!("zone '{part}' is not ACCESS/SIZE (valid: e.g. 60/10 for 60% of accesses to 10% of the region)")
        })?;
        // (fio 3.33 refuses a zone without its share of the accesses.)
        let access = match a.trim() {
            "" => {
                return Err(format!(
                    "zone '{part}' has no share of the accesses (valid: ACCESS/SIZE, e.g. 60/10)"
                ))
            }
            a => Some(parse_u32(a, 0, 100).map_err(|e| format!("zone '{part}': access {e}"))?),
        };
        let size = match s.trim() {
            "" => None,
            s if absolute => {
                Some(parse_size_kb(s, kb_base).map_err(|e| format!("zone '{part}': {e}"))?)
            }
            s => Some(u64::from(
                parse_u32(s.trim_end_matches('%'), 0, 100)
                    .map_err(|e| format!("zone '{part}': size {e}"))?,
            )),
        };
        zones.push((access, size));
    }
    if zones.is_empty() {
        return Err(format!(
            "no zones in '{text}' (valid: e.g. 60/10:30/20:10/70)"
        ));
    }
    if zones.len() > 256 {
        return Err(format!("{} zones (valid: at most 256)", zones.len()));
    }
    let given: u32 = zones.iter().filter_map(|z| z.0).sum();
    let missing = zones.iter().filter(|z| z.0.is_none()).count() as u32;
    if given > 100 || (missing == 0 && given < 100) {
        return Err(format!(
            "zone accesses in '{text}' add up to {given}% (valid: exactly 100)"
        ));
    }
    let size_given: u64 = zones.iter().filter_map(|z| z.1).sum();
    let size_missing = zones.iter().filter(|z| z.1.is_none()).count() as u64;
    if !absolute && size_given > 100 {
        return Err(format!(
            "zone sizes in '{text}' add up to {size_given}% (valid: at most 100, percent of the region)"
        ));
    }
    if absolute && size_missing > 0 {
        return Err(format!(
            "a zone in '{text}' has no size (valid: zoned_abs gives each zone's size, e.g. 60/20g)"
        ));
    }
    let out: Vec<Zone> = zones
        .into_iter()
        .map(|(a, s)| Zone {
            access_percent: a.unwrap_or((100 - given) / missing.max(1)),
            size: s.unwrap_or((100 - size_given.min(100)) / size_missing.max(1)),
        })
        .collect();
    let total: u32 = out.iter().map(|z| z.access_percent).sum();
    if total != 100 {
        return Err(format!(
            "zone accesses in '{text}' add up to {total}% once the missing ones are shared out (valid: exactly 100)"
        ));
    }
    if out.iter().any(|z| z.size == 0 && z.access_percent > 0) {
        return Err(format!(
            "a zone in '{text}' takes accesses but has no size (valid: a size above 0)"
        ));
    }
    Ok(out)
}

/// fio's `fallocate` values: how a file for writing jobs is prepared (see
/// [`JobSpec::fallocate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallocate {
    /// Nothing: the writes extend the file.
    None,
    /// fallocate(2), falling back to posix_fallocate(3) where the filesystem has none.
    Native,
    /// posix_fallocate(3).
    Posix,
    /// fallocate(2) with FALLOC_FL_KEEP_SIZE: blocks reserved, the size unchanged.
    Keep,
    /// ftruncate(2) to the size: sparse.
    Truncate,
}

impl Fallocate {
    /// fio's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Fallocate::None => "none",
            Fallocate::Native => "native",
            Fallocate::Posix => "posix",
            Fallocate::Keep => "keep",
            Fallocate::Truncate => "truncate",
        }
    }
}

/// fio's `fadvise_hint`: what a job tells the kernel of how it will read its files
/// (posix_fadvise(2) as it opens them), which sets their read-ahead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FadviseHint {
    /// `0`: nothing; the kernel's own read-ahead.
    Off,
    /// `1` (fio's default): random for a random pattern, sequential otherwise.
    #[default]
    Pattern,
    /// `sequential`: the kernel reads ahead twice as far.
    Sequential,
    /// `random`: the kernel reads only what is asked for.
    Random,
}

/// The read-ahead a job's advice gives its files (see [`JobSpec::read_advice`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadAdvice {
    /// The kernel's default (POSIX_FADV_NORMAL, or no advice).
    #[default]
    Normal,
    /// POSIX_FADV_SEQUENTIAL: read-ahead up to twice the device's.
    Sequential,
    /// POSIX_FADV_RANDOM: no read-ahead.
    Random,
}

/// How requests are executed in real time. The simulator ignores this: it models the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    IoUring,
    /// Linux native asynchronous I/O (io_submit/io_getevents), like fio's `libaio`.
    Libaio,
    /// One request at a time, each with one system call, as fio's engines of these names:
    /// pread/pwrite (`psync`), lseek then read/write (`sync`), readv/writev after lseek
    /// (`vsync`), preadv/pwritev (`pvsync`), preadv2/pwritev2 (`pvsync2`).
    Psync,
    Sync,
    Vsync,
    Pvsync,
    Pvsync2,
    /// Each file mapped shared into memory and each request a copy to or from the mapping
    /// (page faults and the page cache, no read or write call), one at a time, as fio's
    /// `mmap`.
    Mmap,
    /// No I/O at all: measures the engine's own overhead, like fio's `null`.
    Null,
}

impl IoEngine {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "io_uring" => Ok(IoEngine::IoUring),
            "libaio" => Ok(IoEngine::Libaio),
            "psync" => Ok(IoEngine::Psync),
            "sync" => Ok(IoEngine::Sync),
            "vsync" => Ok(IoEngine::Vsync),
            "pvsync" => Ok(IoEngine::Pvsync),
            "pvsync2" => Ok(IoEngine::Pvsync2),
            "mmap" => Ok(IoEngine::Mmap),
            "null" => Ok(IoEngine::Null),
            other => Err(format!(
                "'{other}' is not a supported ioengine (valid: io_uring, libaio, psync, sync, vsync, pvsync, pvsync2, mmap, null)"
            )),
        }
    }
    /// Whether the engine runs one request at a time (fio's synchronous engines), whatever
    /// `iodepth` says.
    pub fn one_at_a_time(self) -> bool {
        matches!(
            self,
            IoEngine::Psync
                | IoEngine::Sync
                | IoEngine::Vsync
                | IoEngine::Pvsync
                | IoEngine::Pvsync2
                | IoEngine::Mmap
        )
    }
    pub fn name(self) -> &'static str {
        match self {
            IoEngine::IoUring => "io_uring",
            IoEngine::Libaio => "libaio",
            IoEngine::Psync => "psync",
            IoEngine::Sync => "sync",
            IoEngine::Vsync => "vsync",
            IoEngine::Pvsync => "pvsync",
            IoEngine::Pvsync2 => "pvsync2",
            IoEngine::Mmap => "mmap",
            IoEngine::Null => "null",
        }
    }
}

/// One job: everything needed to generate its requests and run them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    pub rw: RwMode,
    pub bs: BlockSizes,
    pub iodepth: u32,
    /// Whether the job gave `iodepth` (a blktrace replay otherwise takes the depth the trace
    /// shows, as fio does).
    #[serde(skip)]
    pub iodepth_given: bool,
    /// How many queued requests the real engine hands the kernel at once (fio's
    /// `iodepth_batch_submit`, alias `iodepth_batch`): 1, fio's default, submits each as soon
    /// as it is queued; 0 means `iodepth`. Submitting in batches saves system calls but
    /// delivers requests to the device in bursts. The simulator models no system calls and
    /// leaves it aside.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub iodepth_batch_submit: u32,
    /// fio's `iodepth_low`: once the queue is full, let it drain to this many in flight
    /// before filling it again; 0 (or more than `iodepth`) keeps it full, fio's default.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub iodepth_low: u32,
    /// fio's `iodepth_batch_complete_min` (alias `iodepth_batch_complete`): completions
    /// each reap waits for (at most those in flight), so a full queue is filled again only
    /// after that many; 1 by default. (fio's 0, polling without waiting, waits for one
    /// here: neither executor busy-polls.)
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub iodepth_batch_complete_min: u32,
    /// fio's `iodepth_batch_complete_max`: completions the real engine takes at most each
    /// time it reaps (the rest wait for the next); 0, the default, means
    /// `iodepth_batch_complete_min`, so fio and raidlab take one, then queue one.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub iodepth_batch_complete_max: u32,
    /// fio's io_uring options `fixedbufs` and `registerfiles`: the real engine registers
    /// the job's buffers and its file with the ring, so a request costs no page pinning
    /// and no file lookup. raidlab turns both on by default, where fio leaves them off;
    /// `fixedbufs=0`, `registerfiles=0` leave them off. Which is faster depends on the
    /// device (BENCHMARKS.md). The simulator makes no system calls and leaves them aside.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub fixedbufs: bool,
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub registerfiles: bool,
    /// fio's io_uring options `sqthread_poll` (a kernel thread polls the submission queue,
    /// so submitting costs no system call), `sqthread_poll_cpu` (the CPU that thread is
    /// bound to) and `hipri` (the device is polled for completions: needs direct I/O and a
    /// device with polled queues). The simulator makes no system calls and leaves them aside.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sqthread_poll: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqthread_poll_cpu: Option<u32>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub hipri: bool,
    /// One of io_uring's own options (`fixedbufs`, `registerfiles`, `sqthread_poll`,
    /// `sqthread_poll_cpu`, `hipri`) was given, which another engine has none of.
    #[serde(default, skip_serializing_if = "is_false")]
    pub uring_options_given: bool,
    /// fio's `disable_clat`, `disable_lat` and `disable_bw_measurement` (all three with
    /// `gtod_reduce`): results leave out completion latency, total latency, or the bandwidth
    /// and IOPS samples. (`disable_slat` is taken too: raidlab reports no separate
    /// submission latency.)
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_clat: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_lat: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_bw: bool,
    /// What writes carry (fio's `scramble_buffers`, `refill_buffers`, `zero_buffers`,
    /// `buffer_pattern`, `buffer_compress_percentage`, `buffer_compress_chunk`,
    /// `dedupe_percentage`): see [`crate::content`]. The simulator models no data content.
    #[serde(default, skip_serializing_if = "BufferContent::is_default")]
    pub buffers: BufferContent,
    /// fio's `directory`: the folders a job's files go in (':'-separated, taken in turn by
    /// the job's instances). Resolved by [`apply_directories`] before a run: a job without
    /// `filename` gets one file per instance there, named as fio names them
    /// (`JOBNAME.N.0`); relative filenames are taken inside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directory: Vec<String>,
    /// fio's `nrfiles`: how many files each job of a job without `filename` gets in its
    /// `directory` (`JOBNAME.N.0` … `JOBNAME.N.(nrfiles-1)`); 1 by default.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub nrfiles: u32,
    /// fio's `filesize`: bytes of each of a job's files; by default the job's `size`
    /// shared out among them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesize: Option<u64>,
    /// fio's `filename_format`: how a job's files are named (`$jobname`, `$jobnum`,
    /// `$filenum`; `$jobname.$jobnum.$filenum` by default). A format without `$jobnum`
    /// names the same files for every job, which then share them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename_format: Option<String>,
    /// fio's `opendir`: every regular file below this folder (recursively, in name order)
    /// is one of the job's files, as `filename` lists them. Read before a run (by the
    /// command, which does the I/O); a job with it names no `filename` of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opendir: Option<String>,
    /// fio's `allow_file_create` (default on): off, a file the job needs that does not exist
    /// is refused rather than created (a misspelt name does not become a new file).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub allow_file_create: bool,
    /// fio's `create_fsync` (default on): a file laid out is flushed to its device before
    /// the jobs start; off, its data may still be in the page cache as they do.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub create_fsync: bool,
    /// fio's `openfiles`: most files a job has open at once. raidlab keeps every file of a
    /// job open while it runs, so a job over more files than this is refused; 0 (unset):
    /// no limit.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub openfiles: u32,
    /// fio's `file_service_type`: which of a job's files its next request goes to.
    #[serde(default, skip_serializing_if = "FileService::is_default")]
    pub file_service: FileService,
    /// raidlab's `job_per_file`: each file of `filename` is a job of its own (its `numjobs`
    /// each), as one `dd` per device; fio runs one job over all of them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub job_per_file: bool,
    /// How the files of `filename` make jobs: `None`, one job over all of them (fio's way);
    /// `Some(k)`, each run of `k` files in order a job of its own (`job_per_file` is 1;
    /// [`apply_directories`] sets `nrfiles`, each job's files being named for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_per_job: Option<u32>,
    /// fio's `read_iolog`: the trace this job replays (its requests, files and times) in
    /// place of the requests its options would draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iolog: Option<String>,
    /// fio's `replay_*` options: how the trace is replayed.
    #[serde(default, skip_serializing_if = "ReplayOptions::is_default")]
    pub replay: ReplayOptions,
    /// The trace once read and attached ([`JobSpec::attach_trace`]); its files are then the
    /// job's `filenames`.
    #[serde(skip)]
    pub trace: Option<std::sync::Arc<crate::iolog::Trace>>,
    /// fio's `write_iolog`: the file the job's issued requests and syncs are logged to, as
    /// fio's version 3 iolog (one job instance a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iolog: Option<String>,
    /// fio's `exec_prerun` and `exec_postrun`: shell commands run in the job's thread before
    /// its first request and after its last, their output in `JOB.prerun.txt` and
    /// `JOB.postrun.txt`. Real runs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_prerun: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_postrun: Option<String>,
    /// fio's `create_only`: the job's files are laid out and nothing else is run (its
    /// result shows nothing done). Real runs only.
    #[serde(default, skip_serializing_if = "is_false")]
    pub create_only: bool,
    /// raidlab's `rank_shift`: under `raidlab run --mpi`, rank r runs this job as rank
    /// (r + N) mod ranks would (see [`for_rank`]); 0 by default. Outside MPI, a world of one
    /// rank, it changes nothing.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub rank_shift: u32,
    /// raidlab's `sim_converge`: 1 (the default) lets a simulated run stop a group once its
    /// rate has converged and carry each job on to its size or runtime at that rate (the
    /// result says `stopped by converged`); 0 simulates every request to the end, as a
    /// real run moves them (for a whole run's latencies, or a rate that drifts slower than
    /// the convergence test sees). Simulated targets only: a real run moves every request.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub sim_converge: bool,
    /// fio's `max_latency`: a request whose total latency exceeds this ends the job with
    /// ETIMEDOUT, ns; 0 (the default) none.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub max_latency_ns: u64,
    /// fio's latency-target mode (`latency_target`, `latency_window`,
    /// `latency_percentile`, `latency_run`): the deepest queue that meets a latency target,
    /// searched for and then measured (see [`crate::latency`]).
    #[serde(default, skip_serializing_if = "LatencyTarget::is_default")]
    pub latency: LatencyTarget,
    /// fio's `steadystate` (`ss`): what must settle, and under what limit (see
    /// [`crate::steady`]); judged only with a `steadystate_duration`.
    #[serde(default, skip_serializing_if = "is_default_criterion")]
    pub ss: SteadyCriterion,
    /// fio's `steadystate_duration` (`ss_dur`): seconds of samples judged; 0 (the default)
    /// judges nothing.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub ss_dur_s: u32,
    /// fio's `steadystate_ramp_time` (`ss_ramp`): ns from the job's start before samples
    /// are taken.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub ss_ramp_ns: u64,
    /// fio's `fallocate`: how a file that only writing jobs use is prepared when raidlab
    /// creates or extends it. Unset, raidlab lays it out with the job's buffer content
    /// (writes then overwrite data); set, as fio does: `none` (the writes extend it), `native`/`posix`/`1`
    /// (preallocated), `keep` (preallocated, its size unchanged), `truncate` (sized, sparse).
    /// A file a job reads is laid out whatever this says, so reads reach data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallocate: Option<Fallocate>,
    /// fio's `fill_device` (`fill_fs`): the job writes until its filesystem is full, and
    /// that (ENOSPC, or EDQUOT for a quota) ends it as its size would, not as an error.
    /// Without `size`, a file's region reaches as far as the filesystem's free space lets
    /// it; the file is not laid out first, its writes extend it. A block device (or an
    /// array, or a simulated LUN) has its size already.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fill_device: bool,
    /// fio's `fadvise_hint`: the advice given as the job opens its files (see
    /// [`JobSpec::read_advice`]).
    #[serde(default, skip_serializing_if = "is_pattern_hint")]
    pub fadvise_hint: FadviseHint,
    /// fio's `overwrite`: 1, a file only writing jobs use is laid out before they start
    /// (raidlab's default), whatever `fallocate` says; 0, it is only allocated, as fio does
    /// by default (`fallocate`, native unless given), and the writes fill it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overwrite: Option<bool>,
    /// fio's `lockmem`: bytes of memory each real job pins (mlock) while it runs, so the
    /// page cache has that much less (a smaller machine's memory, for buffered I/O); 0 none.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub lockmem: u64,
    /// fio's `prio`, `prioclass` and `nice`: the I/O priority a real job's requests carry
    /// to the kernel's I/O scheduler, and its threads' CPU nice value.
    #[serde(default, skip_serializing_if = "Priority::is_default")]
    pub priority: Priority,
    /// fio's `allow_mounted_write`: write a block device the kernel holds for something
    /// else (a mounted filesystem, swap, md), which is refused without it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_mounted_write: bool,
    /// fio's `ioscheduler`: the kernel I/O scheduler the block device behind a real job's
    /// target runs for the job (the engine switches it back after the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioscheduler: Option<String>,
    /// fio's `clocksource` when it names another clock than the one raidlab reads
    /// (`gettimeofday`, `cpu`): raidlab times with clock_gettime(CLOCK_MONOTONIC) all the
    /// same, and says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource_named: Option<String>,
    /// fio's `unlink`: remove the job's files once the run is over (only raidlab's own,
    /// unless the run has `--force`: see the engine).
    #[serde(default, skip_serializing_if = "is_false")]
    pub unlink: bool,
    /// fio's `description`: text shown with the job's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The CPUs a real job's threads may run on (fio's `cpus_allowed`, or `cpumask` as a bit
    /// mask), ascending; empty for any. With `cpus_split` (fio's
    /// `cpus_allowed_policy=split`) each job instance takes one of them in turn, by its
    /// place in the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub cpus_split: bool,
    /// fio's `numa_cpu_nodes`: the job runs on the CPUs of these NUMA nodes (with
    /// `cpus_allowed` too, on those of its CPUs that are theirs), ascending; empty for any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa_cpu_nodes: Vec<u32>,
    /// fio's `numa_mem_policy`: where the job's memory (its buffers) is taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_mem_policy: Option<MemPolicy>,
    pub numjobs: u32,
    /// The number of this job's first instance (0): its instances are numbered
    /// `first_job .. first_job + numjobs`, which places their regions (`offset_increment`),
    /// draws their seeds and names their files in `directory`. A rank of an MPI run sets it
    /// to `rank × numjobs`, so the ranks' instances are numbered as one job's numjobs are.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub first_job: u32,
    /// The MPI rank running the job (set by [`for_rank`]), `None` outside MPI. It names the
    /// files a rank writes of its own (`exec_prerun`'s output), so ranks sharing a working
    /// folder do not write over one another's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi_rank: Option<u32>,
    /// Percentage of reads for `rw`/`randrw`.
    pub rwmixread: u8,
    /// Bytes of the target each job covers per pass; `None` means to the end of the target.
    pub size: Option<u64>,
    /// Bytes each pass transfers (fio's `io_size`); `None` means `size`. Smaller than the
    /// region: a pass touches only part of it (xdd's `-mbytes` inside `-seek range`); larger:
    /// sequential passes wrap around to the region's start.
    #[serde(default)]
    pub io_size: Option<u64>,
    /// fio's `random_generator`: `lfsr` walks every block once a pass whatever
    /// `norandommap` says, as fio's LFSR does without a random map; `tausworthe` (the
    /// default) and `tausworthe64` leave offsets to raidlab's own generator (fio's two differ
    /// only in their period).
    #[serde(default, skip_serializing_if = "is_false")]
    pub lfsr: bool,
    /// Random offsets drawn with replacement (fio's `norandommap`; xdd's and IOMeter's
    /// random seeks): a block may come twice in a pass and another not at all. Off, as in
    /// fio, a random pass with one fixed block size and no `blockalign` touches each block
    /// of the region once, in an order shuffled anew each pass.
    #[serde(default)]
    pub norandommap: bool,
    /// Boundary random offsets are aligned to (fio's `blockalign`/`ba`); `None` means the
    /// request's block size. xdd and IOMeter place random requests on any 512-byte sector.
    #[serde(default)]
    pub blockalign: Option<u64>,
    /// Where random offsets fall (fio's `random_distribution`); any but the uniform one
    /// draws offsets with replacement, as fio turns its random map off for them.
    #[serde(default, skip_serializing_if = "Distribution::is_uniform")]
    pub random_distribution: Distribution,
    /// Percent of a random job's reads and of its writes that are random (fio's
    /// `percentage_random`); the others go on from where that direction's last request
    /// ended. Sequential patterns ignore it, as fio does.
    #[serde(default = "all_random", skip_serializing_if = "is_all_random")]
    pub percentage_random: [u8; 3],
    /// fio's `rw=randread:N`: a random job draws a new random offset every this many
    /// requests; those between go on from the last (or repeat it, by `rw_sequencer`).
    /// 1, the default, draws one for every request. Sequential patterns leave it at 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub rw_run: u32,
    /// fio's `rw=write:4k`: bytes a sequential job skips after each request (negative:
    /// back, `rw=read:-8k` with 4 KiB blocks reads backwards), wrapping round the region.
    /// Random patterns leave it at 0.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub rw_hole: i64,
    /// fio's `rw_sequencer=identical`: the requests of a run (`rw_run`) after the first
    /// repeat its offset rather than going on from it (`sequential`, the default).
    #[serde(default, skip_serializing_if = "is_false")]
    pub rw_identical: bool,
    /// Repeat the same random sequence each run (fio's `randrepeat`, on by default). Off
    /// and without `randseed`, the command line draws a seed for the run and records it
    /// in the results; the stream itself always takes `randseed`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub randrepeat: bool,
    /// fio's `allrandrepeat`: every random choice repeats run after run, even with
    /// `randrepeat=0` (raidlab draws all of a job's choices from its one seed, so this keeps
    /// that seed fixed).
    #[serde(default, skip_serializing_if = "is_false")]
    pub allrandrepeat: bool,
    /// Whether `randseed` was given (fio: it overrides `randrepeat=0`), or drawn for this
    /// run by the command line (`randseed_drawn`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub randseed_given: bool,
    /// `randseed` was drawn for this run (`randrepeat=0`): results say which, so the run
    /// can be repeated with `randseed=`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub randseed_drawn: bool,
    /// Sizes of a `bsrange` need not be multiples of its smallest (fio's `bs_unaligned`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub bs_unaligned: bool,
    /// `size`, `offset` and `io_size` given as percent of the target's size (fio's
    /// `size=50%`): resolved against each target's size by [`JobSpec::resolved`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_percent: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_percent: Option<u8>,
    /// fio's `file_append`: the job's region starts at its regular files' end as the run
    /// starts (its `offset` is their size); block devices keep theirs.
    #[serde(default, skip_serializing_if = "is_false")]
    pub file_append: bool,
    /// What an `offset` given in percent is rounded up to, bytes (fio's `offset_align`);
    /// 0, the default, rounds it up to the smallest block size.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub offset_align: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_size_percent: Option<u8>,
    /// Stop after this many requests a loop, if the region or runtime has not ended the job
    /// first (fio's `number_ios`; see [`JobSpec::request_cap`]).
    #[serde(default)]
    pub number_ios: Option<u64>,
    /// Start of the region, bytes.
    pub offset: u64,
    /// Each job `i` of `numjobs` starts at `offset + i * offset_increment` (fio's option), so
    /// threads can split a file into contiguous regions as seed 002 did.
    pub offset_increment: u64,
    /// `offset_increment` given as percent of the target's size (fio's
    /// `offset_increment=25%`): resolved against each target's size by
    /// [`JobSpec::resolved`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_increment_percent: Option<u8>,
    /// Set by [`JobSpec::resolved`] when `offset` or `offset_increment` was a percentage:
    /// each job's start, `offset + i * offset_increment`, is rounded up to this many bytes
    /// (`offset_align`, or the smallest block size), as fio's `get_start_offset` rounds
    /// the sum. 0: starts are not rounded.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub start_align: u64,
    /// fio's zone options as given (`zonemode`, `zonesize`, `zonerange`, `zoneskip`); see
    /// [`Zones`] and [`JobSpec::strided`].
    #[serde(default, skip_serializing_if = "Zones::is_none")]
    pub zones: Zones,
    /// Stop after this long (ns). Without `time_based`, whichever of size and runtime ends first.
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    /// Run this long (ns) before counting results.
    pub ramp_time_ns: u64,
    /// Passes over the region (fio's `loops`).
    pub loops: u32,
    pub direct: bool,
    /// Flush the job's written data to the device when it ends, counted in its runtime
    /// (fio's `end_fsync`).
    #[serde(default)]
    pub end_fsync: bool,
    /// fio's `fsync_on_close`: a file the job wrote is flushed as the job closes it; at the
    /// job's end, counted in its runtime as fio counts it (see [`JobSpec::flushes_at_end`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fsync_on_close: bool,
    /// Drop the page cache's copy of the job's region before it starts (fio's `invalidate`,
    /// on by default there too), so buffered reads reach the device rather than memory.
    #[serde(default = "yes")]
    pub invalidate: bool,
    /// Read the job's region into the page cache before it starts, untimed (fio's
    /// `pre_read`): its buffered reads then measure memory. It keeps the region in the cache
    /// (`invalidate` is passed over, as fio clears it).
    #[serde(default, skip_serializing_if = "is_false")]
    pub pre_read: bool,
    pub ioengine: IoEngine,
    pub randseed: u64,
    /// Targets: one job over all of them, as fio's, or one job each with `job_per_file`.
    pub filenames: Vec<String>,
    /// Writes carry a checksummed header, reads check it (with `verify_pattern_only`, the
    /// pattern alone).
    pub verify: bool,
    /// fio's `verify_pattern`: the bytes written blocks carry after their header (or in
    /// place of it, `verify=pattern`), repeated, and reads check; None: raidlab's own
    /// pattern drawn from the block's seed, offset and generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_pattern: Option<Vec<u8>>,
    /// fio's `verify=pattern`: blocks carry `verify_pattern` alone, no header.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_pattern_only: bool,
    /// The checksum fio's `verify` named when it is not raidlab's own (`md5`, `sha256`, …):
    /// raidlab checks its header and CRC32C all the same, and says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_named: Option<String>,
    /// fio's `do_verify` (default on): a job that only writes, with verify, reads back and
    /// checks what it wrote once its writes are done; off, it only writes the headers.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub do_verify: bool,
    /// fio's `verify_only`: the job's writes are not done but read back and checked, each
    /// block where the job would write it, at the size it would write: data a run of the same
    /// job wrote earlier is checked without being written over. The job's requests are the
    /// writing job's, drawn alike (the same seed, sizes and offsets), turned into reads
    /// ([`JobSpec::writes`] is false, [`JobSpec::read_percent`] 100).
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_only: bool,
    /// fio's `verify_backlog`: every this many blocks written, the job stops issuing, lets
    /// what is in flight complete, and reads back and checks them (0: only at the end, by
    /// `do_verify`), inside its time, outside its read counts. A time-based job checks as it
    /// goes, keeping no more than this many blocks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub verify_backlog: u64,
    /// fio's `verify_backlog_batch`: how many of those blocks are read back, the oldest
    /// first (None: all of them; fewer: the others are not checked; more: the oldest are
    /// checked again, in turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog_batch: Option<u64>,
    /// fio's `verify_fatal`: the first mismatch ends the job (by default every block is
    /// checked and the mismatches counted).
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_fatal: bool,
    /// fio's `verify_dump`: each block that fails its check is written to the working folder
    /// as `FILE.OFFSET.received`, with `FILE.OFFSET.expected` where its header or pattern says
    /// what it should hold.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_dump: bool,
    /// fio's `verify_interval`: each span of this many bytes of a block carries its own
    /// header and is checked on its own (None: one header a block). Adjusted as fio adjusts
    /// it: see [`JobSpec::verify_span`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_interval: Option<u64>,
    /// fio's `verify_async`: this many threads check the job's reads off its own thread
    /// (0: the job checks them itself). The end's read-back is checked in the job's thread.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub verify_async: u32,
    /// Which I/O errors the job counts and goes on past (fio's `continue_on_error`,
    /// `ignore_error`; their keys as they are).
    #[serde(flatten)]
    pub on_error: ErrorPolicy,
    /// Report with the jobs before it in its stonewall group that report so too, as one
    /// (fio's group_reporting; with numjobs, the job's instances).
    pub group_reporting: bool,
    /// fio's `disk_util`: the run reports what the disks under this job's files did (the
    /// kernel's counters before and after); on by default, as in fio.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub disk_util: bool,
    /// fio's `stats`: 0 leaves the job out of the results (a preconditioning job whose
    /// numbers are not wanted); it still runs.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub stats: bool,
    /// fio's `kb_base`: 1024 (the default), sizes given later in the job are powers of 2
    /// whatever their suffix; 1000, `k`, `m`, … are powers of 10 (`KiB`, `MiB`, … still of
    /// 2), and the text output puts decimal units first.
    #[serde(default = "kb_1024", skip_serializing_if = "is_kb_1024")]
    pub kb_base: u32,
    /// Wait for previous jobs to finish before starting this one.
    pub stonewall: bool,
    /// fio's `flow`: this job's weight in its flow (`flow_id`), whose jobs keep the requests
    /// they issue in proportion to their weights (see [`crate::flow`]); 0, the default: in
    /// no flow.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub flow: u32,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub flow_id: u32,
    /// fio's `flow_sleep`: how long a job ahead of its share waits, its requests in flight
    /// done first, before it looks again (ns); 0: it looks again as the others issue.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub flow_sleep_ns: u64,
    /// fio's `wait_for`: this job starts once every instance of the job of this name (one
    /// defined before it, and the only one so named) has ended; see [`waitees`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<String>,
    /// Start a new reporting group (fio's `new_group`): the job runs beside the jobs before
    /// it, as their stonewall group, but reports (`groupid`, "Run status group", and what
    /// `group_reporting` folds) apart from them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub new_group: bool,
    /// fio's `exitall`: a job's end stops the others ([`exit_scope`] says which).
    #[serde(default, skip_serializing_if = "is_false")]
    pub exitall: bool,
    /// fio's `exitall_on_error`: this job's end with an error stops the others.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exitall_on_error: bool,
    /// fio's `exit_what`: which jobs this job's end stops under `exitall`.
    #[serde(default, skip_serializing_if = "ExitWhat::is_group")]
    pub exit_what: ExitWhat,
    /// When requests may go: rate caps and minimums, think time, start delay
    /// ([`crate::pace`]).
    #[serde(default, skip_serializing_if = "Pace::is_default")]
    pub pace: Pace,
    /// A sync of the target after every this many writes issued (fio's `fsync`; 0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fsync: u64,
    /// The same with a data-only sync (fio's `fdatasync`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fdatasync: u64,
    /// Synchronous writes (fio's `sync`: O_SYNC or O_DSYNC).
    #[serde(default, skip_serializing_if = "is_sync_none")]
    pub sync: SyncIo,
    /// Time-series logs the job writes (fio's `write_bw_log`, `write_iops_log`,
    /// `write_lat_log`, `log_avg_msec`, `log_offset`).
    #[serde(default, skip_serializing_if = "LogOptions::is_off")]
    pub logs: LogOptions,
    /// The latency percentiles its results list (fio's `percentile_list`,
    /// `clat_percentiles`, `lat_percentiles`).
    #[serde(default, skip_serializing_if = "PercentileOptions::is_default")]
    pub percentiles: PercentileOptions,
    /// Whether its results show reads and writes apart, together or both ways (fio's
    /// `unified_rw_reporting`).
    #[serde(default, skip_serializing_if = "UnifiedRw::is_none")]
    pub unified_rw_reporting: UnifiedRw,
    /// Digits of the text output's rates and sizes (fio's `significant_figures`, 1 to 10;
    /// None: 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub significant_figures: Option<u8>,
    /// The text output's rates in bits a second, not bytes (fio's `unit_base=1`; 0, its
    /// default, and 8 are bytes). Sizes stay in bytes, as fio shows them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rates_in_bits: bool,
    /// The intervals of the bandwidth and IOPS samples in the results, ms (fio's
    /// `bw_avg_time`, `iops_avg_time`; 500 each by default).
    #[serde(
        default = "default_avg_times",
        skip_serializing_if = "is_default_avg_times"
    )]
    pub avg_time_ms: [u64; 2],
    /// Whether the job gave each of them (a log's averaging defers to one it gave: see
    /// [`JobSpec::sample_every`]).
    #[serde(default, skip_serializing_if = "is_neither")]
    pub avg_time_given: [bool; 2],
}

fn default_avg_times() -> [u64; 2] {
    [500, 500]
}

fn is_neither(v: &[bool; 2]) -> bool {
    *v == [false, false]
}

fn is_default_avg_times(v: &[u64; 2]) -> bool {
    *v == default_avg_times()
}

/// Which time-series logs a job writes, and how (fio's log options).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogOptions {
    /// File name prefixes of the bandwidth, IOPS and latency logs; an empty one stands for
    /// the job's name (fio's `write_bw_log` without a value).
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
    /// Average over windows of this many ms (fio's `log_avg_msec`); 0 logs every I/O.
    pub avg_msec: u64,
    /// Each line carries the request's offset (fio's `log_offset`).
    pub offset: bool,
    /// File name prefix of the completion-latency histogram log (fio's `write_hist_log`).
    #[serde(default)]
    pub hist: Option<String>,
    /// Its window, ms (fio's `log_hist_msec`; 0 leaves the file empty), and how many times
    /// neighbouring bins are added in pairs (fio's `log_hist_coarseness`, 0 to 6).
    #[serde(default)]
    pub hist_msec: u64,
    #[serde(default)]
    pub hist_coarseness: u32,
    /// One file for every job of the same log name, without the job's number (fio's
    /// `per_job_logs=0`): `NAME_bw.log`, the jobs' lines one job after another.
    #[serde(default)]
    pub shared: bool,
    /// An averaged window's latency lines give its highest latency, not its mean (fio's
    /// `log_max_value`).
    #[serde(default)]
    pub max_value: bool,
    /// Lines are stamped with the wall-clock time, ms since the Unix epoch, not ms since the
    /// job started counting (fio's `log_unix_epoch`). Real runs only.
    #[serde(default)]
    pub unix_epoch: bool,
}

impl LogOptions {
    /// Nothing set: the defaults.
    pub fn is_off(&self) -> bool {
        *self == LogOptions::default()
    }

    /// Whether any log is written.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }

    /// The (bandwidth, IOPS, latency, latency histogram) file name prefixes of job
    /// `job_name`'s logs.
    pub fn prefixes(&self, job_name: &str) -> [Option<String>; 4] {
        let name = |p: &Option<String>| {
            p.as_ref().map(|v| {
                if v.is_empty() {
                    job_name.to_string()
                } else {
                    v.clone()
                }
            })
        };
        [
            name(&self.bw),
            name(&self.iops),
            name(&self.lat),
            name(&self.hist),
        ]
    }
}

/// A job's process priorities (fio's `prio`, `prioclass`, `nice`), each unset unless given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Priority {
    /// `prioclass`: 0 none, 1 realtime, 2 best effort, 3 idle.
    pub class: Option<u8>,
    /// `prio`: the level within the class, 0 (first served) to 7.
    pub level: Option<u8>,
    /// `nice`: -20 (most CPU) to 19.
    pub nice: Option<i8>,
}

/// Linux's I/O priority classes sit above this many bits of level
/// (`IOPRIO_CLASS_SHIFT`, include/uapi/linux/ioprio.h).
pub const IOPRIO_CLASS_SHIFT: u32 = 13;

impl Priority {
    pub fn is_default(&self) -> bool {
        *self == Priority::default()
    }
    /// The I/O priority for Linux's `ioprio_set`: class above level; a level given without a
    /// class (or with class 0) is best effort's, as fio makes it. None when neither is
    /// given (the job keeps the process's).
    pub fn ioprio(&self) -> Option<u16> {
        if self.class.is_none() && self.level.is_none() {
            return None;
        }
        let class = match (self.class.unwrap_or(0), self.level) {
            (0, Some(_)) => 2,
            (c, _) => c,
        };
        Some(u16::from(class) << IOPRIO_CLASS_SHIFT | u16::from(self.level.unwrap_or(0)))
    }
}

/// fio's `exit_what`: which jobs a job's end stops under `exitall` (or an error under
/// `exitall_on_error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExitWhat {
    /// The running jobs of its reporting group (`groupid`), the default.
    #[default]
    Group,
    /// Every running job (its stonewall group's); the next stonewall group then starts.
    Stonewall,
    /// Every running job, and no later stonewall group runs (fio reports their jobs with
    /// nothing done).
    All,
}

impl ExitWhat {
    pub fn is_group(&self) -> bool {
        *self == ExitWhat::Group
    }
    /// fio's name for it.
    pub fn name(&self) -> &'static str {
        match self {
            ExitWhat::Group => "group",
            ExitWhat::Stonewall => "stonewall",
            ExitWhat::All => "all",
        }
    }
}

/// What the end of the job `specs[spec_index]` stops, `errored` if it ended with an error
/// (fio 3.33's `exitall`, `exitall_on_error` and `exit_what`); None when the others run on.
/// fio keeps `exitall` for the whole process, so `exitall` in any job makes every job's end
/// stop others (a job of the run without it included: checked with fio 3.33); each job's own
/// `exit_what` says which. `exitall_on_error` holds for the job that gives it.
pub fn exit_scope(specs: &[JobSpec], spec_index: usize, errored: bool) -> Option<ExitWhat> {
    let s = &specs[spec_index];
    let exitall = specs.iter().any(|s| s.exitall);
    (exitall || (errored && s.exitall_on_error)).then_some(s.exit_what)
}

/// Which job each job waits for (fio's `wait_for`), by index in `specs`: the one job of
/// that name defined before it. A name no job before it has, or more than one job has, is
/// refused in one line, as fio refuses a waitee it cannot tell (a forward reference, or a
/// name it does not know, is an error there too).
pub fn waitees(specs: &[JobSpec]) -> Result<Vec<Option<usize>>, SpecError> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let Some(name) = &s.wait_for else {
                return Ok(None);
            };
            let named: Vec<usize> = (0..specs.len()).filter(|&k| &specs[k].name == name).collect();
            let before: Vec<&str> = specs[..i].iter().map(|s| s.name.as_str()).collect();
            match named[..] {
                [k] if k < i => Ok(Some(k)),
                [] | [_] => Err(SpecError {
                    message: format!(
                        "job '{}': wait_for={name} names no job defined before it (valid: {})",
                        s.name,
                        if before.is_empty() {
                            "a job defined earlier in the file".to_string()
                        } else {
                            before.join(", ")
                        }
                    ),
                }),
                _ => Err(SpecError {
                    message: format!(
                        "job '{}': wait_for={name}, and {} jobs are named '{name}' (valid: a name only the job waited for has)",
                        s.name,
                        named.len()
                    ),
                }),
            }
        })
        .collect()
}

/// fio's most percentiles in a `percentile_list`.
pub const MAX_PERCENTILES: usize = 20;

/// fio's `unified_rw_reporting`: a job's results show reads and writes apart (`none`, `0`),
/// as one direction, `mixed`, in their place (`mixed`, `1`), or both ways (`both`, `2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnifiedRw {
    #[default]
    None,
    Mixed,
    Both,
}

impl UnifiedRw {
    pub fn is_none(&self) -> bool {
        *self == UnifiedRw::None
    }
    /// fio's name for it.
    pub fn name(&self) -> &'static str {
        match self {
            UnifiedRw::None => "none",
            UnifiedRw::Mixed => "mixed",
            UnifiedRw::Both => "both",
        }
    }
    /// One of fio's values for it.
    pub fn parse(value: &str) -> Result<UnifiedRw, String> {
        match value {
            "none" | "0" => Ok(UnifiedRw::None),
            "mixed" | "1" => Ok(UnifiedRw::Mixed),
            "both" | "2" => Ok(UnifiedRw::Both),
            _ => Err(format!(
                "'{value}' is not a way to report directions (valid: none or 0, mixed or 1, both or 2)"
            )),
        }
    }
}

/// The latency percentiles a job's results list (fio's options).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PercentileOptions {
    /// Ascending; empty: fio's default list.
    pub list: Vec<f64>,
    /// Digits after the point in the text output: the most any entry was written with
    /// (2 for the default list).
    pub precision: u8,
    /// `clat_percentiles` (on by default; a `percentile_list` turns it on again).
    pub clat: bool,
    /// `lat_percentiles`, if given.
    pub lat: Option<bool>,
}

impl Default for PercentileOptions {
    fn default() -> Self {
        PercentileOptions {
            list: Vec::new(),
            precision: 2,
            clat: true,
            lat: None,
        }
    }
}

impl PercentileOptions {
    /// Nothing set: the defaults.
    pub fn is_default(&self) -> bool {
        *self == PercentileOptions::default()
    }
}

/// fio's `percentile_list`: up to 20 percentiles from 0 to 100 joined by `:`, returned
/// ascending with the most digits after the point any of them was written with.
pub fn parse_percentile_list(value: &str) -> Result<(Vec<f64>, u8), String> {
    let mut list = Vec::new();
    let mut precision = 0u8;
    for part in value.split(':').map(str::trim) {
        let p: f64 = part
            .parse()
            .ok()
            .filter(|p: &f64| p.is_finite())
            .ok_or_else(|| {
                format!("'{part}' is not a percentile (valid: numbers from 0 to 100 joined by ':', e.g. 50:99:99.9)")
            })?;
        if !(0.0..=100.0).contains(&p) {
            return Err(format!(
                "percentile {part} is out of range (valid: 0 to 100)"
            ));
        }
        let digits = part.split_once('.').map_or(0, |(_, f)| f.len());
        precision = precision.max(digits.min(6) as u8);
        list.push(p);
    }
    if list.len() > MAX_PERCENTILES {
        return Err(format!(
            "{} percentiles given (valid: at most {MAX_PERCENTILES})",
            list.len()
        ));
    }
    list.sort_by(f64::total_cmp);
    Ok((list, precision))
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_sync_none(v: &SyncIo) -> bool {
    *v == SyncIo::None
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: "job".into(),
            rw: RwMode::Read,
            bs: BlockSizes::fixed(4096),
            iodepth: 1,
            iodepth_given: false,
            iodepth_batch_submit: 1,
            iodepth_low: 0,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            fixedbufs: true,
            registerfiles: true,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            hipri: false,
            uring_options_given: false,
            disable_clat: false,
            disable_lat: false,
            disable_bw: false,
            buffers: BufferContent::default(),
            description: None,
            directory: Vec::new(),
            nrfiles: 1,
            filesize: None,
            filename_format: None,
            openfiles: 0,
            file_service: FileService::default(),
            job_per_file: false,
            files_per_job: None,
            read_iolog: None,
            replay: ReplayOptions::default(),
            trace: None,
            write_iolog: None,
            exec_prerun: None,
            exec_postrun: None,
            create_only: false,
            rank_shift: 0,
            sim_converge: true,
            max_latency_ns: 0,
            latency: LatencyTarget::default(),
            ss: SteadyCriterion::default(),
            ss_dur_s: 0,
            ss_ramp_ns: 0,
            fallocate: None,
            fill_device: false,
            opendir: None,
            allow_file_create: true,
            create_fsync: true,
            fadvise_hint: FadviseHint::Pattern,
            overwrite: None,
            lockmem: 0,
            priority: Priority::default(),
            ioscheduler: None,
            allow_mounted_write: false,
            clocksource_named: None,
            unlink: false,
            cpus: Vec::new(),
            cpus_split: false,
            numa_cpu_nodes: Vec::new(),
            numa_mem_policy: None,
            numjobs: 1,
            first_job: 0,
            mpi_rank: None,
            rwmixread: 50,
            size: None,
            io_size: None,
            blockalign: None,
            random_distribution: Distribution::Random,
            percentage_random: all_random(),
            rw_run: 1,
            rw_hole: 0,
            rw_identical: false,
            randrepeat: true,
            allrandrepeat: false,
            randseed_given: false,
            randseed_drawn: false,
            bs_unaligned: false,
            size_percent: None,
            offset_percent: None,
            offset_align: 0,
            file_append: false,
            io_size_percent: None,
            norandommap: false,
            lfsr: false,
            number_ios: None,
            offset: 0,
            offset_increment: 0,
            offset_increment_percent: None,
            start_align: 0,
            zones: Zones::default(),
            runtime_ns: None,
            time_based: false,
            ramp_time_ns: 0,
            loops: 1,
            direct: false,
            end_fsync: false,
            fsync_on_close: false,
            invalidate: true,
            pre_read: false,
            ioengine: IoEngine::IoUring,
            // fio's default seed, so a default job draws a fixed sequence.
            randseed: 0x89,
            filenames: Vec::new(),
            verify: false,
            verify_named: None,
            verify_pattern: None,
            verify_pattern_only: false,
            do_verify: true,
            verify_only: false,
            verify_backlog: 0,
            verify_backlog_batch: None,
            verify_fatal: false,
            verify_dump: false,
            verify_interval: None,
            verify_async: 0,
            on_error: ErrorPolicy::default(),
            group_reporting: false,
            disk_util: true,
            stats: true,
            kb_base: 1024,
            stonewall: false,
            wait_for: None,
            flow: 0,
            flow_id: 0,
            flow_sleep_ns: 0,
            new_group: false,
            exitall: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
            pace: Pace::default(),
            fsync: 0,
            fdatasync: 0,
            sync: SyncIo::None,
            logs: LogOptions::default(),
            percentiles: PercentileOptions::default(),
            unified_rw_reporting: UnifiedRw::None,
            significant_figures: None,
            rates_in_bits: false,
            avg_time_ms: default_avg_times(),
            avg_time_given: [false, false],
        }
    }
}

/// A bad option: what was wrong, where (filled in by the caller), what is valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for SpecError {}

/// Every option name [`apply_option`] accepts.
pub const OPTION_NAMES: &[&str] = &[
    "name",
    "description",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bssplit",
    "bsrange",
    "blocksize_range",
    "bs_unaligned",
    "blocksize_unaligned",
    "random_distribution",
    "percentage_random",
    "rw_sequencer",
    "randrepeat",
    "allrandrepeat",
    "iodepth",
    "iodepth_batch_submit",
    "iodepth_batch",
    "iodepth_low",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete",
    "iodepth_batch_complete_max",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "hipri",
    "gtod_reduce",
    "disable_clat",
    "disable_lat",
    "disable_slat",
    "disable_bw_measurement",
    "disable_bw",
    "scramble_buffers",
    "refill_buffers",
    "zero_buffers",
    "buffer_pattern",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "directory",
    "nrfiles",
    "nr_files",
    "filename_format",
    "openfiles",
    "filesize",
    "file_service_type",
    "job_per_file",
    "read_iolog",
    "write_iolog",
    "exec_prerun",
    "exec_postrun",
    "create_only",
    "replay_no_stall",
    "replay_time_scale",
    "replay_redirect",
    "replay_align",
    "replay_scale",
    "replay_skip",
    "rank_shift",
    "sim_converge",
    "max_latency",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "steadystate",
    "ss",
    "steadystate_duration",
    "ss_dur",
    "steadystate_ramp_time",
    "ss_ramp",
    "fallocate",
    "fill_device",
    "fill_fs",
    "opendir",
    "allow_file_create",
    "create_fsync",
    "create_serialize",
    "fadvise_hint",
    "overwrite",
    "lockmem",
    "prio",
    "prioclass",
    "nice",
    "ioscheduler",
    "allow_mounted_write",
    "clocksource",
    "unlink",
    "cpus_allowed",
    "cpumask",
    "cpus_allowed_policy",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "numjobs",
    "rwmixread",
    "rwmixwrite",
    "size",
    "io_size",
    "io_limit",
    "blockalign",
    "ba",
    "norandommap",
    "random_generator",
    "number_ios",
    "offset",
    "offset_align",
    "file_append",
    "offset_increment",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "loops",
    "direct",
    "end_fsync",
    "fsync_on_close",
    "invalidate",
    "pre_read",
    "ioengine",
    "randseed",
    "filename",
    "verify",
    "do_verify",
    "verify_only",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_pattern",
    "verify_fatal",
    "verify_dump",
    "verify_interval",
    "verify_async",
    "continue_on_error",
    "ignore_error",
    "error_dump",
    "group_reporting",
    "disk_util",
    "stats",
    "kb_base",
    "stonewall",
    "wait_for",
    "flow",
    "flow_id",
    "flow_sleep",
    "wait_for_previous",
    "new_group",
    "exitall",
    "exitall_on_error",
    "exit_what",
    "thread",
    "threads",
    "io_submit_mode",
    "rate",
    "rate_iops",
    "rate_min",
    "ratemin",
    "rate_iops_min",
    "rate_process",
    "rate_cycle",
    "ratecycle",
    "thinktime",
    "thinktime_spin",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "rate_ignore_thinktime",
    "startdelay",
    "fsync",
    "fdatasync",
    "sync",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "write_hist_log",
    "log_hist_msec",
    "log_hist_coarseness",
    "per_job_logs",
    "log_avg_msec",
    "log_offset",
    "log_max_value",
    "log_unix_epoch",
    "bw_avg_time",
    "iops_avg_time",
    "bwavgtime",
    "iopsavgtime",
    "buffered",
    "percentile_list",
    "clat_percentiles",
    "lat_percentiles",
    "unified_rw_reporting",
    "significant_figures",
    "unit_base",
];

/// Options whose value may be left out: flags, and the log options, which then name their
/// files after the job (as fio's).
fn is_flag(key: &str) -> bool {
    matches!(
        key,
        "time_based"
            | "fixedbufs"
            | "registerfiles"
            | "sqthread_poll"
            | "hipri"
            | "unlink"
            | "verify_only"
            | "fill_device"
            | "fill_fs"
            | "pre_read"
            | "gtod_reduce"
            | "disable_clat"
            | "disable_lat"
            | "disable_slat"
            | "disable_bw_measurement"
            | "disable_bw"
            | "scramble_buffers"
            | "refill_buffers"
            | "zero_buffers"
            | "group_reporting"
            | "disk_util"
            | "exitall"
            | "exitall_on_error"
            | "allow_mounted_write"
            | "stonewall"
            | "wait_for_previous"
            | "new_group"
            | "thread"
            | "threads"
            | "norandommap"
            | "bs_unaligned"
            | "blocksize_unaligned"
            | "write_bw_log"
            | "write_iops_log"
            | "write_lat_log"
            | "write_hist_log"
    )
}

/// The most CPUs a set names (the C library's `CPU_SETSIZE`).
pub const MAX_CPUS: u32 = 1024;

/// fio's `cpus_allowed`: CPU numbers and ranges, comma-separated (`0-3,6,8-9`), ascending
/// and without repeats in the result.
pub fn parse_cpu_list(value: &str) -> Result<Vec<u32>, String> {
    parse_number_list(value, "CPU", MAX_CPUS, "0-3,6")
}

/// The most NUMA nodes a list names (the kernel's `MAX_NUMNODES` at its largest).
pub const MAX_NODES: u32 = 1024;

/// A NUMA node list: numbers and ranges, comma-separated (`0-1,3`), ascending, no repeats.
pub fn parse_node_list(value: &str) -> Result<Vec<u32>, String> {
    parse_number_list(value, "node", MAX_NODES, "0-1,3")
}

/// Numbers of `what` (CPUs, nodes) below `max`, and ranges of them, comma-separated, as the
/// kernel writes its lists: ascending and without repeats in the result.
fn parse_number_list(value: &str, what: &str, max: u32, e_g: &str) -> Result<Vec<u32>, String> {
    let valid = format!("valid: {what} numbers and ranges below {max}, e.g. {e_g}");
    let mut out = Vec::new();
    for part in value.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n < max)
                .ok_or_else(|| {
                    format!("'{part}' in '{value}' is not a {what} or a range ({valid})")
                })
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        if lo > hi {
            return Err(format!("'{part}' in '{value}' runs backwards ({valid})"));
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// fio's `numa_mem_policy`: Linux's memory policies (set_mempolicy(2)) for a job's memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode", content = "nodes")]
pub enum MemPolicy {
    /// The process's (the kernel's default: the node the thread runs on, as it allocates).
    Default,
    /// Memory from this node while it has some, then from others.
    Prefer(u32),
    /// Memory only from these nodes.
    Bind(Vec<u32>),
    /// Memory page by page from these nodes in turn.
    Interleave(Vec<u32>),
    /// Memory from the node the thread runs on when it allocates.
    Local,
}

impl MemPolicy {
    /// `default`, `local`, `prefer:N`, `bind:NODES` or `interleave:NODES`, as fio's.
    pub fn parse(value: &str) -> Result<MemPolicy, String> {
        let valid = "valid: default, local, prefer:NODE, bind:NODES, interleave:NODES";
        let (mode, nodes) = match value.trim().split_once(':') {
            Some((m, n)) => (m.trim(), Some(n)),
            None => (value.trim(), None),
        };
        let list = |n: Option<&str>| -> Result<Vec<u32>, String> {
            match n {
                Some(n) => parse_node_list(n),
                None => Err(format!("numa_mem_policy={mode} needs its nodes ({valid})")),
            }
        };
        let none = |p: MemPolicy| match nodes {
            Some(_) => Err(format!("numa_mem_policy={mode} takes no nodes ({valid})")),
            None => Ok(p),
        };
        match mode {
            "default" => none(MemPolicy::Default),
            "local" => none(MemPolicy::Local),
            "prefer" => match list(nodes)?[..] {
                [n] => Ok(MemPolicy::Prefer(n)),
                _ => Err(format!("numa_mem_policy=prefer takes one node ({valid})")),
            },
            "bind" => Ok(MemPolicy::Bind(list(nodes)?)),
            "interleave" => Ok(MemPolicy::Interleave(list(nodes)?)),
            other => Err(format!("'{other}' is not a memory policy ({valid})")),
        }
    }

    /// The nodes the policy names.
    pub fn nodes(&self) -> Vec<u32> {
        match self {
            MemPolicy::Default | MemPolicy::Local => Vec::new(),
            MemPolicy::Prefer(n) => vec![*n],
            MemPolicy::Bind(v) | MemPolicy::Interleave(v) => v.clone(),
        }
    }

    /// As fio writes it.
    pub fn name(&self) -> String {
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        match self {
            MemPolicy::Default => "default".into(),
            MemPolicy::Local => "local".into(),
            MemPolicy::Prefer(n) => format!("prefer:{n}"),
            MemPolicy::Bind(v) => format!("bind:{}", list(v)),
            MemPolicy::Interleave(v) => format!("interleave:{}", list(v)),
        }
    }
}

/// fio's `cpumask`: a bit mask of CPUs, decimal or `0x` hex (bit N allows CPU N).
pub fn parse_cpu_mask(value: &str) -> Result<Vec<u32>, String> {
    let t = value.trim();
    let mask = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    }
    .ok()
    .filter(|m| *m != 0)
    .ok_or_else(|| {
        format!(
            "'{t}' is not a CPU mask (valid: a nonzero bit mask, e.g. 0x3 or 3 for CPUs 0 and 1)"
        )
    })?;
    Ok((0..64).filter(|b| mask >> b & 1 == 1).collect())
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn kb_1024() -> u32 {
    1024
}

fn is_kb_1024(kb: &u32) -> bool {
    *kb == 1024
}

fn is_pattern_hint(h: &FadviseHint) -> bool {
    *h == FadviseHint::Pattern
}

fn is_default_errors(v: &[Vec<i32>; 3]) -> bool {
    v.iter().all(Vec::is_empty)
}

/// Kinds of error, as bits (fio's `continue_on_error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorKinds(pub u8);

impl ErrorKinds {
    pub const READ: u8 = 1;
    pub const WRITE: u8 = 2;
    pub const VERIFY: u8 = 4;
    /// fio's names: `none` (or 0), `read`, `write`, `io` (reads and writes), `verify`,
    /// `all` (or 1).
    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(ErrorKinds(match s.trim() {
            "none" | "0" => 0,
            "read" => Self::READ,
            "write" => Self::WRITE,
            "io" => Self::READ | Self::WRITE,
            "verify" => Self::VERIFY,
            "all" | "1" => Self::READ | Self::WRITE | Self::VERIFY,
            other => {
                return Err(format!(
                    "'{other}' is not a kind of error (valid: none, read, write, io, verify, all, 0, 1)"
                ))
            }
        }))
    }
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "none",
            Self::READ => "read",
            Self::WRITE => "write",
            3 => "io",
            Self::VERIFY => "verify",
            _ => "all",
        }
    }
    pub fn is_none(&self) -> bool {
        self.0 == 0
    }
    pub fn has(self, kind: u8) -> bool {
        self.0 & kind != 0
    }
}

/// fio's errnos a job goes on past by default, with `continue_on_error` and no
/// `ignore_error` list for the kind: EIO and EILSEQ.
const NON_FATAL: [i32; 2] = [5, 84];

/// Which errors a job counts and goes on past (a job's `on_error`), for an executor to ask.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorPolicy {
    /// fio's `continue_on_error`: the kinds of error the job counts and goes on past rather
    /// than ending on, as bits: [`ErrorKinds::READ`], [`ErrorKinds::WRITE`] (a failed or
    /// short transfer) and [`ErrorKinds::VERIFY`]. None, the default, ends the job at the
    /// first.
    #[serde(default, skip_serializing_if = "ErrorKinds::is_none")]
    pub continue_on_error: ErrorKinds,
    /// fio's `ignore_error`: the errnos the job goes on past, for reads, writes and verify
    /// (an empty list: fio's default, EIO and EILSEQ).
    #[serde(default, skip_serializing_if = "is_default_errors")]
    pub ignore_error: [Vec<i32>; 3],
    /// fio's `error_dump`: each error the job goes on past is told on standard error as it
    /// happens (on by default, as in fio); off, only the error that ends the job is.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub error_dump: bool,
}

impl Default for ErrorPolicy {
    fn default() -> Self {
        ErrorPolicy {
            continue_on_error: ErrorKinds::default(),
            ignore_error: Default::default(),
            error_dump: true,
        }
    }
}

impl ErrorPolicy {
    /// Whether the job goes on past any error (and so counts them).
    pub fn counts(&self) -> bool {
        !self.continue_on_error.is_none()
    }
    /// Whether an error of `kind` ([`ErrorKinds::READ`], …) with `errno` is counted and gone
    /// on past rather than ending the job.
    pub fn continues_past(&self, kind: u8, errno: i32) -> bool {
        if !self.continue_on_error.has(kind) {
            return false;
        }
        let i = kind.trailing_zeros() as usize;
        match self.ignore_error.get(i).filter(|l| !l.is_empty()) {
            Some(list) => list.contains(&errno),
            None => NON_FATAL.contains(&errno),
        }
    }
}

/// Errnos by name for `ignore_error`, or a number. (Linux's values, from its
/// asm-generic/errno-base.h and errno.h: the kinds an I/O can fail with.)
fn errno_named(name: &str) -> Result<i32, String> {
    const NAMES: &[(&str, i32)] = &[
        ("EPERM", 1),
        ("ENOENT", 2),
        ("EINTR", 4),
        ("EIO", 5),
        ("ENXIO", 6),
        ("EBADF", 9),
        ("EAGAIN", 11),
        ("ENOMEM", 12),
        ("EACCES", 13),
        ("EFAULT", 14),
        ("EBUSY", 16),
        ("ENODEV", 19),
        ("EINVAL", 22),
        ("EFBIG", 27),
        ("ENOSPC", 28),
        ("ESPIPE", 29),
        ("EROFS", 30),
        ("ENODATA", 61),
        ("ETIME", 62),
        ("ENOLINK", 67),
        ("EBADMSG", 74),
        ("EILSEQ", 84),
        ("EOPNOTSUPP", 95),
        ("ENOTSUP", 95),
        ("ETIMEDOUT", 110),
        ("ESTALE", 116),
        ("EREMOTEIO", 121),
        ("EDQUOT", 122),
        ("ECANCELED", 125),
    ];
    if let Ok(n) = name.parse::<i32>() {
        if n > 0 {
            return Ok(n);
        }
    }
    NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            format!(
                "'{name}' is not an errno (valid: a positive number or a name such as EIO, ENOSPC, EINVAL, EILSEQ)"
            )
        })
}

/// fio's per-direction values, `R,W,T` (reads', writes', and trims' or verify's): the
/// comma-separated parts, trimmed; more than three is refused, saying they are `what` and
/// what `valid` ones are for. An empty part is fio's too (`bs=64k,` sets the reads' size
/// alone), but a value with no part at all (`bs=`, `bs=,`) says nothing: fio refuses it,
/// and so does raidlab rather than run with the default as if it had been asked for.
fn three_parts<'a>(value: &'a str, what: &str, valid: &str) -> Result<Vec<&'a str>, String> {
    let parts: Vec<&str> = value.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!(
            "'{value}' has {} {what} (valid: at most three, {valid})",
            parts.len()
        ));
    }
    if parts.iter().all(|p| p.is_empty()) {
        let value = value.trim();
        return Err(if value.is_empty() {
            format!("empty value (valid: one to three {what}, {valid})")
        } else {
            format!("'{value}' gives no {what}, only commas (valid: one to three {what}, {valid})")
        });
    }
    Ok(parts)
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}
fn all_random() -> [u8; 3] {
    [100, 100, 100]
}
fn is_all_random(p: &[u8; 3]) -> bool {
    *p == all_random()
}

/// A percentage of the target's size (`50%`), if `value` is one: `Some(Ok(50))`; `None`
/// for a value without `%`. `lowest` is the smallest percentage that makes sense.
fn percent_of_target(value: &str, lowest: u32, highest: u32) -> Option<Result<u8, String>> {
    let num = value.trim().strip_suffix('%')?;
    Some(
        num.trim()
            .parse::<u32>()
            .ok()
            .filter(|p| (lowest..=highest).contains(p))
            .map(|p| p as u8)
            .ok_or_else(|| {
                format!(
                    "'{value}' is not a share of the target (valid: {lowest}% to {highest}%, whole percent)"
                )
            }),
    )
}

/// Serde defaults and skips of the queue options (`iodepth_batch_submit` and the like).
fn is_default_criterion(c: &SteadyCriterion) -> bool {
    *c == SteadyCriterion::default()
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}
fn one() -> u32 {
    1
}
fn is_one(v: &u32) -> bool {
    *v == 1
}
/// `true`, for serde defaults of options fio turns on unless told otherwise.
fn yes() -> bool {
    true
}

/// Split fio's ':'-separated filename list. `array:` and `sim:` target prefixes contain a
/// colon themselves and are kept with what follows them; `\:` escapes a colon as in fio.
/// fio's `directory`, resolved before a run: a job with folders and no `filename` gets one
/// file per instance, `FOLDER/JOBNAME.N.0` (N its number among `numjobs`, the folders taken
/// in turn), each its own job; relative filenames are taken inside the first folder. A job
/// resolved has no folders left, so resolving twice changes nothing. A job with no target at
/// all (no filename, folder, trace or opendir) gets its files in the working folder, as
/// fio's does.
pub fn apply_directories(specs: &mut [JobSpec]) {
    // (A filename_format without a directory names files in the working folder, as fio's,
    // and so does a job given nothing to name them.)
    let names_files = |s: &JobSpec| {
        !s.directory.is_empty()
            || (s.filenames.is_empty() && s.read_iolog.is_none() && s.opendir.is_none())
    };
    for s in specs.iter_mut().filter(|s| names_files(s)) {
        let mut dirs = std::mem::take(&mut s.directory);
        if dirs.is_empty() {
            dirs.push(".".into());
        }
        let join = |d: &str, f: &str| std::path::Path::new(d).join(f).display().to_string();
        if s.filenames.is_empty() {
            let first = s.first_job;
            let nr = s.nrfiles.max(1);
            let format = s
                .filename_format
                .clone()
                .unwrap_or_else(|| "$jobname.$jobnum.$filenum".into());
            let mut names = Vec::new();
            for j in first..first + s.numjobs.max(1) {
                // (fio's folder for a job: its number's turn among them.)
                let dir = &dirs[j as usize % dirs.len()];
                for f in 0..nr {
                    let name = format
                        .replace("$jobname", &s.name)
                        .replace("$jobnum", &j.to_string())
                        .replace("$filenum", &f.to_string());
                    names.push(join(dir, &name));
                }
            }
            s.filenames = names;
            s.numjobs = 1;
            // Each job's files are its own, their regions from the start as any job's.
            s.first_job = 0;
            s.files_per_job = Some(if s.job_per_file { 1 } else { nr });
        } else {
            for f in &mut s.filenames {
                let relative =
                    !f.starts_with('/') && !f.starts_with("array:") && !f.starts_with("sim:");
                if relative {
                    *f = join(&dirs[0], f);
                }
            }
        }
    }
}

/// The jobs as rank `rank` of an MPI run of `ranks` runs them: the ranks' instances of a job
/// are numbered as one job's `numjobs` are (rank r's from `r × numjobs`), so
/// `offset_increment` gives each rank its own regions of a shared file and `directory` its
/// own files (`JOBNAME.N.0`), and each rank draws its own offsets (its seed mixed with its
/// rank; rank 0's are those of a run without MPI). A job with `rank_shift=N` runs as rank
/// (r + N) mod `ranks` would: its regions, files and offsets are that rank's (IOR's task
/// reordering, so a read phase reads what another host wrote, past its own cache). Each job
/// also carries the rank itself, which names its `exec_prerun`/`exec_postrun` output. Before
/// [`apply_directories`].
pub fn for_rank(specs: &mut [JobSpec], rank: u32, ranks: u32) {
    for s in specs {
        let r = ((u64::from(rank) + u64::from(s.rank_shift)) % u64::from(ranks.max(1))) as u32;
        s.first_job = r * s.numjobs;
        s.mpi_rank = Some(rank);
        s.randseed = s
            .randseed
            .wrapping_add(u64::from(r).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
}

pub fn split_filenames(value: &str) -> Vec<String> {
    let mut raw: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&':') {
            cur.push(':');
            chars.next();
        } else if c == ':' {
            raw.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    raw.push(cur);
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let tok = &raw[i];
        if (tok == "array" || tok == "sim") && i + 1 < raw.len() {
            out.push(format!("{tok}:{}", raw[i + 1]));
            i += 2;
        } else {
            if !tok.is_empty() {
                out.push(tok.clone());
            }
            i += 1;
        }
    }
    out
}

/// A time as fio's latency options take it, ns: a bare number is microseconds.
fn parse_us_or_duration(value: &str) -> Result<u64, String> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        v.parse::<u64>()
            .ok()
            .and_then(|us| us.checked_mul(1000))
            .ok_or_else(|| format!("'{v}' is too long (valid: up to 2^64 ns)"))
    } else {
        parse_duration_ns(v)
    }
}

/// fio's strided zones as a job gives them (`zonemode=strided`): the job moves `size`
/// bytes in a zone of `range` bytes (its offsets, sequential or random, stay in the zone;
/// a sequential job goes round the zone when `size` exceeds it), then skips `skip` bytes
/// past the zone's end to the next zone; past the end of its file it starts again at its
/// region's start. A pass still moves the job's `size` (or `io_size`) bytes, and the zones
/// go on from one pass to the next, as fio's do. fio's example `disk-zone-profile` reads a
/// drive so, a bandwidth log then drawing its zoned media rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zones {
    /// `zonemode=strided` (false: `none`, fio's default).
    pub strided: bool,
    /// `zonesize`: bytes moved in a zone before the next (0: not given).
    pub size: u64,
    /// `zonerange`: a zone's length (0: not given, `zonesize`'s).
    pub range: u64,
    /// `zoneskip`: bytes skipped after a zone.
    pub skip: u64,
}

impl Zones {
    /// None of the options was given.
    pub fn is_none(&self) -> bool {
        *self == Zones::default()
    }
    /// A zone's length: `zonerange`, else `zonesize` (as fio takes it).
    pub fn range(&self) -> u64 {
        if self.range > 0 {
            self.range
        } else {
            self.size
        }
    }
}

/// A run of `specs` reports something: not every job has `stats=0` (fio would run them all
/// and report none of them).
pub fn check_reported(specs: &[JobSpec]) -> Result<(), SpecError> {
    if !specs.is_empty() && specs.iter().all(|s| !s.stats) {
        return Err(SpecError {
            message: "every job has stats=0, so the run would report nothing (valid: stats=1, the default, on the jobs to measure)".into(),
        });
    }
    Ok(())
}

/// fio options raidlab does not run (yet), named as such when a job gives one.
const FIO_ONLY: &[&str] = &[
    "create_on_open",
    "atomic",
    "block_error_percentiles",
    "cgroup",
    "cgroup_nodelete",
    "cgroup_weight",
    "experimental_verify",
    "gid",
    "gtod_cpu",
    "ignore_zone_limits",
    "job_max_open_zones",
    "lockfile",
    "log_alternate_epoch",
    "log_compression",
    "log_compression_cpus",
    "log_entries",
    "log_prio",
    "log_store_compressed",
    "max_open_zones",
    "mem",
    "merge_blktrace_file",
    "merge_blktrace_iters",
    "merge_blktrace_scalars",
    "profile",
    "read_beyond_wp",
    "read_iolog_chunked",
    "serialize_overlap",
    "slat_percentiles",
    "sync_file_range",
    "trim_backlog",
    "trim_backlog_batch",
    "trim_percentage",
    "trim_verify_zero",
    "uid",
    "unique_filename",
    "unlink_each_loop",
    "verify_offset",
    "verify_state_load",
    "verify_state_save",
    "write_barrier",
    "write_hint",
    "zone_reset_frequency",
    "zone_reset_threshold",
    "zonecapacity",
];

/// The greatest common divisor (0 with 0 gives 0).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The one line for an option raidlab does not know: what it is (a fio option raidlab does
/// not run, or a name neither knows), the nearest names raidlab has, and where the valid
/// ones are listed (the list itself is too long for one line).
fn unknown_option(key: &str) -> String {
    let what = if FIO_ONLY.contains(&key) {
        format!("option '{key}' is fio's and raidlab does not run it")
    } else {
        format!("unknown option '{key}'")
    };
    let mut near: Vec<(usize, &str)> = OPTION_NAMES
        .iter()
        .map(|n| (edit_distance(key, n), *n))
        .filter(|(d, n)| *d <= 2.max(key.len() / 4) || (key.len() >= 4 && n.starts_with(key)))
        .collect();
    near.sort();
    near.truncate(3);
    let near: Vec<&str> = near.into_iter().map(|(_, n)| n).collect();
    if near.is_empty() {
        format!("{what} (valid: the options `raidlab run --help` lists)")
    } else {
        format!(
            "{what} (valid: the options `raidlab run --help` lists; nearest: {})",
            near.join(", ")
        )
    }
}

/// Levenshtein distance between two short names.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut diag = row[0];
        row[0] = i;
        for j in 1..=b.len() {
            let up = row[j];
            row[j] = (up + 1)
                .min(row[j - 1] + 1)
                .min(diag + usize::from(a[i - 1] != b[j - 1]));
            diag = up;
        }
    }
    row[b.len()]
}

/// fio's `verify_pattern`: a pattern as `buffer_pattern` takes one (`0x` hex bytes, quoted
/// strings), or a decimal number written in as few little-endian bytes as hold it, 1 to 4, as
/// fio writes one (`1234` is the bytes d2 04).
fn parse_verify_pattern(value: &str) -> Result<Vec<u8>, String> {
    let v = value.trim();
    if v.contains('%') {
        return Err(format!(
            "'{v}': raidlab's patterns are fixed bytes (fio's %o, the block's offset, is not taken; valid: 0x hex bytes, a quoted string, or a decimal number up to 4294967295)"
        ));
    }
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        let n: u32 = v.parse().map_err(|_| {
            format!("'{v}' is more than 4 bytes (valid: up to 4294967295, or 0x and hex bytes)")
        })?;
        let width = (4 - n.leading_zeros() as usize / 8).max(1);
        return Ok(n.to_le_bytes()[..width].to_vec());
    }
    crate::content::parse_pattern(v)
}

/// Apply one `key=value` option to a job. `value` is `None` for a bare flag (`time_based`).
/// The error says what is wrong and what is valid; the caller prefixes where it came from.
pub fn apply_option(spec: &mut JobSpec, key: &str, value: Option<&str>) -> Result<(), SpecError> {
    // (Sizes under the job's kb_base as it stands: fio reads them in order too.)
    let kb_base = spec.kb_base;
    let parse_size = |t: &str| parse_size_kb(t, kb_base);
    let key = key.trim();
    let err = |m: String| SpecError {
        message: format!("option '{key}': {m}"),
    };
    if !OPTION_NAMES.contains(&key) {
        return Err(SpecError {
            message: unknown_option(key),
        });
    }
    let value = match value {
        Some(v) => v.trim(),
        None if key.starts_with("write_") => "",
        None if is_flag(key) => "1",
        None => return Err(err("needs a value (write it as key=value)".into())),
    };
    if matches!(
        key,
        "fixedbufs" | "registerfiles" | "sqthread_poll" | "sqthread_poll_cpu" | "hipri"
    ) {
        spec.uring_options_given = true;
    }
    match key {
        "name" => {
            if value.is_empty() {
                return Err(err("empty name".into()));
            }
            spec.name = value.to_string()
        }
        "unlink" => spec.unlink = parse_bool(value).map_err(err)?,
        "nrfiles" | "nr_files" => spec.nrfiles = parse_u32(value, 1, 1 << 20).map_err(err)?,
        "openfiles" => spec.openfiles = parse_u32(value, 1, 1 << 20).map_err(err)?,
        "filename_format" => {
            let f = value.trim();
            let rest = f
                .replace("$jobname", "")
                .replace("$jobnum", "")
                .replace("$filenum", "");
            if f.is_empty() || rest.contains('$') {
                return Err(err(format!(
                    "'{f}': raidlab fills in $jobname, $jobnum and $filenum (valid: a name made of those and other text, e.g. data.$jobnum.$filenum)"
                )));
            }
            spec.filename_format = Some(f.to_string());
        }
        "filesize" => {
            if value.contains('-') || value.contains(':') {
                return Err(err(format!(
                    "'{value}': raidlab gives every file one size (valid: one size, e.g. 64m)"
                )));
            }
            let s = parse_size(value).map_err(err)?;
            if s == 0 {
                return Err(err("filesize must be greater than zero".into()));
            }
            spec.filesize = Some(s);
        }
        "file_service_type" => spec.file_service = FileService::parse(value).map_err(err)?,
        "rank_shift" => spec.rank_shift = parse_u32(value, 0, u32::MAX).map_err(err)?,
        "sim_converge" => spec.sim_converge = parse_bool(value).map_err(err)?,
        "read_iolog" => {
            let v = value.trim();
            if v.is_empty() {
                return Err(err("needs a file (valid: read_iolog=PATH of a fio iolog)".into()));
            }
            if v.contains(':') {
                return Err(err(format!(
                    "'{v}': raidlab replays one trace a job (valid: one PATH; give each trace a job of its own)"
                )));
            }
            if v == "-" {
                return Err(err("'-': raidlab reads a trace from a file, not standard input (valid: a PATH)".into()));
            }
            spec.read_iolog = Some(v.to_string());
            spec.trace = None;
        }
        "create_only" => spec.create_only = parse_bool(value).map_err(err)?,
        "exec_prerun" | "exec_postrun" => {
            // (A job file's value may come quoted, as a shell's does not.)
            let v = value.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|x| x.strip_suffix('"'))
                .unwrap_or(v);
            if v.is_empty() {
                return Err(err("needs a command (valid: a shell command line)".into()));
            }
            let slot = if key == "exec_prerun" {
                &mut spec.exec_prerun
            } else {
                &mut spec.exec_postrun
            };
            *slot = Some(v.to_string());
        }
        "write_iolog" => {
            let v = value.trim();
            if v.is_empty() {
                return Err(err("needs a file (valid: write_iolog=PATH)".into()));
            }
            spec.write_iolog = Some(v.to_string());
        }
        "replay_no_stall" => spec.replay.no_stall = parse_bool(value).map_err(err)?,
        "replay_time_scale" => {
            spec.replay.time_scale = parse_u32(value, 1, 1_000_000).map_err(err)?
        }
        "replay_redirect" => {
            let v = value.trim();
            if v.is_empty() {
                return Err(err("needs a target (valid: a file, block device, array: or sim: target)".into()));
            }
            spec.replay.redirect = Some(v.to_string());
        }
        "replay_align" => {
            let a = parse_size(value).map_err(err)?;
            if a != 0 && !a.is_power_of_two() {
                return Err(err(format!("'{value}' is not a power of two (valid: e.g. 512, 4k)")));
            }
            spec.replay.align = a;
        }
        "replay_scale" => {
            spec.replay.scale = u64::from(parse_u32(value, 1, u32::MAX).map_err(err)?)
        }
        "replay_skip" => spec.replay.skip = ReplaySkip::parse(value).map_err(err)?,
        "max_latency" => spec.max_latency_ns = parse_us_or_duration(value).map_err(err)?,
        "latency_target" => spec.latency.target_ns = parse_us_or_duration(value).map_err(err)?,
        "latency_window" => spec.latency.window_ns = parse_us_or_duration(value).map_err(err)?,
        "latency_percentile" => {
            let v = value.trim();
            spec.latency.percentile = v
                .parse::<f64>()
                .ok()
                .filter(|p| *p > 0.0 && *p <= 100.0)
                .ok_or_else(|| err(format!("'{v}' is not a percentage (valid: above 0, up to 100)")))?;
        }
        "latency_run" => spec.latency.run = parse_bool(value).map_err(err)?,
        "steadystate" | "ss" => spec.ss = SteadyCriterion::parse(value).map_err(err)?,
        "steadystate_duration" | "ss_dur" => {
            let ns = parse_duration_ns(value).map_err(err)?;
            // (fio judges whole seconds of samples, one a second.)
            if ns != 0 && ns < 1_000_000_000 {
                return Err(err(format!(
                    "'{value}' is under a second, and samples are taken once a second (valid: 0, or 1s or more)"
                )));
            }
            spec.ss_dur_s = u32::try_from(ns / 1_000_000_000).map_err(|_| err(format!("'{value}' is too long")))?;
        }
        "steadystate_ramp_time" | "ss_ramp" => {
            spec.ss_ramp_ns = parse_duration_ns(value).map_err(err)?
        }
        "job_per_file" => {
            spec.job_per_file = parse_bool(value).map_err(err)?;
            spec.files_per_job = spec.job_per_file.then_some(1);
        }
        "lockmem" => spec.lockmem = parse_size(value).map_err(err)?,
        "allow_mounted_write" => spec.allow_mounted_write = parse_bool(value).map_err(err)?,
        "ioscheduler" => {
            let ok = !value.is_empty()
                && value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !ok {
                return Err(err(format!(
                    "'{value}' is not an I/O scheduler's name (valid: a name the device's queue/scheduler lists, e.g. none, mq-deadline, kyber, bfq)"
                )));
            }
            spec.ioscheduler = Some(value.to_string());
        }
        "prio" | "prioclass" | "nice" => {
            let (lo, hi, what) = match key {
                "prio" => (0, 7, "an I/O priority level (valid: 0, served first, to 7)"),
                "prioclass" => (
                    0,
                    3,
                    "an I/O priority class (valid: 0 none, 1 realtime, 2 best effort, 3 idle)",
                ),
                _ => (-20, 19, "a nice value (valid: -20 to 19)"),
            };
            let v = value
                .parse::<i8>()
                .ok()
                .filter(|v| (lo..=hi).contains(v))
                .ok_or_else(|| err(format!("'{value}' is not {what}")))?;
            let p = &mut spec.priority;
            match key {
                "prio" => p.level = Some(v as u8),
                "prioclass" => p.class = Some(v as u8),
                _ => p.nice = Some(v),
            }
        }
        "overwrite" => spec.overwrite = Some(parse_bool(value).map_err(err)?),
        "fill_device" | "fill_fs" => spec.fill_device = parse_bool(value).map_err(err)?,
        // (One folder, its colons its own, as fio takes it.)
        "opendir" if value.is_empty() => {
            return Err(err("opendir names no folder (valid: a folder, e.g. /mnt/data)".into()))
        }
        "opendir" => spec.opendir = Some(value.to_string()),
        "allow_file_create" => spec.allow_file_create = parse_bool(value).map_err(err)?,
        "create_fsync" => spec.create_fsync = parse_bool(value).map_err(err)?,
        // fio lays jobs' files out one after another unless told not to; raidlab always
        // does (only the layout's time, before any job is timed, differs).
        "create_serialize" => {
            parse_bool(value).map_err(err)?;
        }
        "fallocate" => {
            spec.fallocate = Some(match value {
                "none" | "0" => Fallocate::None,
                "native" => Fallocate::Native,
                "posix" | "1" => Fallocate::Posix,
                "keep" => Fallocate::Keep,
                "truncate" => Fallocate::Truncate,
                other => {
                    return Err(err(format!(
                        "'{other}' is not a way to allocate (valid: none, native, posix, keep, truncate, 0, 1)"
                    )))
                }
            })
        }
        "fadvise_hint" => {
            spec.fadvise_hint = match value {
                "sequential" => FadviseHint::Sequential,
                "random" => FadviseHint::Random,
                other => match parse_bool(other) {
                    Ok(true) => FadviseHint::Pattern,
                    Ok(false) => FadviseHint::Off,
                    Err(_) => {
                        return Err(err(format!(
                            "'{other}' is not an advice (valid: 0, 1, sequential, random)"
                        )))
                    }
                },
            }
        }
        "clocksource" => {
            spec.clocksource_named = match value {
                "clock_gettime" => None,
                "gettimeofday" | "cpu" => Some(value.to_string()),
                other => {
                    return Err(err(format!(
                        "'{other}' is not a clock source (valid: clock_gettime, gettimeofday, cpu)"
                    )))
                }
            }
        }
        "directory" => {
            let dirs = split_filenames(value);
            if dirs.is_empty() || dirs.iter().any(|d| d.is_empty()) {
                return Err(err(format!(
                    "'{value}' names no folder (valid: folders, ':'-separated)"
                )));
            }
            spec.directory = dirs;
        }
        "cpus_allowed" => spec.cpus = parse_cpu_list(value).map_err(err)?,
        "numa_cpu_nodes" => spec.numa_cpu_nodes = parse_node_list(value).map_err(err)?,
        "numa_mem_policy" => spec.numa_mem_policy = Some(MemPolicy::parse(value).map_err(err)?),
        "cpumask" => spec.cpus = parse_cpu_mask(value).map_err(err)?,
        "cpus_allowed_policy" => {
            spec.cpus_split = match value {
                "shared" => false,
                "split" => true,
                other => {
                    return Err(err(format!(
                        "'{other}' is not a policy (valid: shared, split)"
                    )))
                }
            }
        }
        "description" => {
            // (A job file may quote it, as fio's examples do.)
            let t = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            spec.description = (!t.is_empty()).then(|| t.to_string())
        }
        "rw" | "readwrite" => {
            // fio's `PATTERN[:N]`: after a random pattern, requests per random offset; after
            // a sequential one, bytes skipped after each request (negative: back).
            let (mode, suffix) = match value.split_once(':') {
                Some((m, n)) => (m, Some(n.trim())),
                None => (value, None),
            };
            spec.rw = RwMode::parse(mode).map_err(err)?;
            spec.rw_run = 1;
            spec.rw_hole = 0;
            if let Some(n) = suffix {
                if spec.rw.is_random() {
                    let what = "valid: requests per random offset, 1 to 4294967295, e.g. randread:8";
                    let v = parse_size(n)
                        .map_err(|m| err(format!("'{value}': {m} ({what})")))?;
                    if v == 0 || v > u32::MAX as u64 {
                        return Err(err(format!("'{value}' asks for {v} requests a random offset ({what})")));
                    }
                    spec.rw_run = v as u32;
                } else {
                    let what = "valid: bytes skipped after each request, e.g. write:4k, or back, read:-8k";
                    let (neg, mag) = match n.strip_prefix('-') {
                        Some(m) => (true, m),
                        None => (false, n),
                    };
                    let v = parse_size(mag)
                        .map_err(|m| err(format!("'{value}': {m} ({what})")))?;
                    let v = i64::try_from(v)
                        .map_err(|_| err(format!("'{value}' skips too far ({what})")))?;
                    spec.rw_hole = if neg { -v } else { v };
                }
            }
        }
        "rw_sequencer" => {
            spec.rw_identical = match value.trim() {
                "sequential" => false,
                "identical" => true,
                other => {
                    return Err(err(format!(
                        "'{other}' is not a sequencer (valid: sequential, identical)"
                    )))
                }
            }
        }
        "bs" | "blocksize" => {
            // fio's `bs=R,W,T`: one size is every direction's, a second the writes' (and
            // trims', unless a third is given); an empty one leaves that direction as it was
            // (`bs=64k,` after a [global] bs=16k writes 16 KiB blocks, as fio does; with
            // nothing before, the default 4 KiB); none at all (`bs=`, `bs=,`) is refused.
            let parts = three_parts(value, "sizes", "for reads, writes and trims, e.g. 4k,64k").map_err(err)?;
            let size = |p: &str| -> Result<BsDist, SpecError> {
                let b = parse_size(p).map_err(err)?;
                if b == 0 {
                    return Err(err("block size must be at least 1 byte".into()));
                }
                Ok(BsDist::fixed(b))
            };
            spec.bs = block_sizes_of(&parts, &spec.bs, size)?;
        }
        "bssplit" => {
            // fio's `R[,W[,T]]`: a second list is the writes' (and trims', unless a third
            // is given). An empty list leaves its direction's sizes as they are (`bs`'s,
            // or the default): fio 3.33 with bs=16k,32k and bssplit=4k/50:8k/50, writes
            // 32 KiB blocks. A trailing empty list stops there: `A,` leaves the trims' too.
            let parts = three_parts(value, "lists", "for reads, writes and trims, e.g. 4k/50:64k/50,16k").map_err(err)?;
            let split = |p: &str| BsDist::parse_split(p, spec.kb_base).map_err(err);
            spec.bs = block_sizes_of(&parts, &spec.bs, split)?;
        }
        "iodepth" => {
            spec.iodepth = parse_u32(value, 1, 65536).map_err(err)?;
            spec.iodepth_given = true;
        }
        "iodepth_batch_submit" | "iodepth_batch" => {
            spec.iodepth_batch_submit = parse_u32(value, 0, 65536).map_err(err)?
        }
        "iodepth_low" => spec.iodepth_low = parse_u32(value, 0, 65536).map_err(err)?,
        "iodepth_batch_complete_min" | "iodepth_batch_complete" => {
            spec.iodepth_batch_complete_min = parse_u32(value, 0, 65536).map_err(err)?
        }
        "iodepth_batch_complete_max" => {
            spec.iodepth_batch_complete_max = parse_u32(value, 0, 65536).map_err(err)?
        }
        "numjobs" => spec.numjobs = parse_u32(value, 1, 4096).map_err(err)?,
        "rwmixread" => spec.rwmixread = parse_u32(value, 0, 100).map_err(err)? as u8,
        "rwmixwrite" => spec.rwmixread = 100 - parse_u32(value, 0, 100).map_err(err)? as u8,
        "size" if value.ends_with('%') => {
            spec.size_percent = Some(percent_of_target(value, 1, 100).unwrap().map_err(err)?);
            spec.size = None;
        }
        "io_size" | "io_limit" if value.ends_with('%') => {
            spec.io_size_percent = Some(percent_of_target(value, 1, 100).unwrap().map_err(err)?);
            spec.io_size = None;
        }
        "offset" if value.ends_with('%') => {
            spec.offset_percent = Some(percent_of_target(value, 0, 99).unwrap().map_err(err)?);
            spec.offset = 0;
        }
        "size" => {
            spec.size_percent = None;
            // As fio 3.33: size=0 is the option's default, the whole file or device (a
            // job file's job can so undo a [global] size).
            spec.size = Some(parse_size(value).map_err(err)?).filter(|&s| s > 0)
        }
        "io_size" | "io_limit" => {
            spec.io_size_percent = None;
            // As fio 3.33: io_size=0 is the option's default, the job's size.
            spec.io_size = Some(parse_size(value).map_err(err)?).filter(|&s| s > 0)
        }
        "norandommap" => spec.norandommap = parse_switch(value).map_err(err)?,
        "random_generator" => {
            spec.lfsr = match value {
                "lfsr" => true,
                "tausworthe" | "tausworthe64" => false,
                _ => {
                    return Err(err(format!(
                        "'{value}' is not a random generator (valid: tausworthe, lfsr, tausworthe64)"
                    )))
                }
            }
        }
        "blockalign" | "ba" => {
            let a = parse_size(value).map_err(err)?;
            if a == 0 {
                return Err(err("blockalign must be greater than zero".into()));
            }
            spec.blockalign = Some(a)
        }
        "number_ios" => {
            let n: u64 = value
                .trim()
                .parse()
                .map_err(|_| err(format!("'{value}' is not a whole number of requests")))?;
            spec.number_ios = if n == 0 { None } else { Some(n) };
        }
        "offset" => {
            spec.offset_percent = None;
            spec.offset = parse_size(value).map_err(err)?
        }
        "offset_align" => spec.offset_align = parse_size(value).map_err(err)?,
        "file_append" => spec.file_append = parse_bool(value).map_err(err)?,
        "offset_increment" if value.ends_with('%') => {
            spec.offset_increment_percent =
                Some(percent_of_target(value, 0, 100).unwrap().map_err(err)?);
            spec.offset_increment = 0;
        }
        "offset_increment" => {
            spec.offset_increment_percent = None;
            spec.offset_increment = parse_size(value).map_err(err)?
        }
        "zonemode" => {
            spec.zones.strided = match value.trim() {
                "none" => false,
                "strided" => true,
                "zbd" => return Err(err(
                    "'zbd' drives zoned block devices, which raidlab does not (valid: none, strided)".into(),
                )),
                v => return Err(err(format!("'{v}' is not a zone mode (valid: none, strided)"))),
            }
        }
        "zonesize" => spec.zones.size = parse_size(value).map_err(err)?,
        "zonerange" => spec.zones.range = parse_size(value).map_err(err)?,
        "zoneskip" => spec.zones.skip = parse_size(value).map_err(err)?,
        // (`timeout` is fio's other name for it.)
        "runtime" | "timeout" => {
            let ns = parse_duration_ns(value).map_err(err)?;
            spec.runtime_ns = if ns == 0 { None } else { Some(ns) };
        }
        "time_based" => spec.time_based = parse_switch(value).map_err(err)?,
        "ramp_time" => spec.ramp_time_ns = parse_duration_ns(value).map_err(err)?,
        "loops" => spec.loops = parse_u32(value, 1, 1_000_000).map_err(err)?,
        "direct" => spec.direct = parse_bool(value).map_err(err)?,
        // fio's `buffered`: the inverse of `direct`.
        "buffered" => spec.direct = !parse_bool(value).map_err(err)?,
        "fixedbufs" => spec.fixedbufs = parse_bool(value).map_err(err)?,
        "registerfiles" => spec.registerfiles = parse_bool(value).map_err(err)?,
        "sqthread_poll" => spec.sqthread_poll = parse_bool(value).map_err(err)?,
        "sqthread_poll_cpu" => {
            spec.sqthread_poll_cpu = Some(parse_u32(value, 0, MAX_CPUS - 1).map_err(err)?)
        }
        "hipri" => spec.hipri = parse_bool(value).map_err(err)?,
        "gtod_reduce" => {
            // (fio's turns clat_percentiles off with them.)
            let on = parse_bool(value).map_err(err)?;
            spec.disable_clat = on;
            spec.disable_lat = on;
            spec.disable_bw = on;
            spec.percentiles.clat = !on;
        }
        "disable_clat" => spec.disable_clat = parse_bool(value).map_err(err)?,
        "disable_lat" => spec.disable_lat = parse_bool(value).map_err(err)?,
        "disable_slat" => {
            parse_bool(value).map_err(err)?;
        }
        "disable_bw_measurement" | "disable_bw" => {
            spec.disable_bw = parse_bool(value).map_err(err)?
        }
        "scramble_buffers" => spec.buffers.scramble = parse_bool(value).map_err(err)?,
        "refill_buffers" => spec.buffers.refill = parse_switch(value).map_err(err)?,
        "zero_buffers" => spec.buffers.zero = parse_switch(value).map_err(err)?,
        "buffer_pattern" => {
            spec.buffers.pattern = crate::content::parse_pattern(value).map_err(err)?
        }
        "buffer_compress_percentage" => {
            let p = parse_u32(value, 0, 100).map_err(err)?;
            spec.buffers.compress_percentage = Some(p as u8);
        }
        "buffer_compress_chunk" => spec.buffers.compress_chunk = parse_size(value).map_err(err)?,
        "dedupe_percentage" => {
            spec.buffers.dedupe_percentage = parse_u32(value, 0, 100).map_err(err)? as u8
        }
        "dedupe_mode" => spec.buffers.dedupe_mode = crate::content::DedupeMode::parse(value).map_err(err)?,
        "dedupe_working_set_percentage" => {
            spec.buffers.dedupe_working_set_percentage =
                parse_u32(value, 0, 100).map_err(err)? as u8
        }
        "dedupe_global" => spec.buffers.dedupe_global = parse_bool(value).map_err(err)?,
        "end_fsync" => spec.end_fsync = parse_bool(value).map_err(err)?,
        "fsync_on_close" => spec.fsync_on_close = parse_bool(value).map_err(err)?,
        "invalidate" => spec.invalidate = parse_bool(value).map_err(err)?,
        "pre_read" => spec.pre_read = parse_bool(value).map_err(err)?,
        "ioengine" => spec.ioengine = IoEngine::parse(value).map_err(err)?,
        "randseed" => {
            spec.randseed = value.parse().map_err(|_| {
                err(format!(
                    "'{value}' is not a whole number (valid: 0 to 2^64-1)"
                ))
            })?;
            spec.randseed_given = true;
            spec.randseed_drawn = false;
        }
        "randrepeat" => spec.randrepeat = parse_bool(value).map_err(err)?,
        "allrandrepeat" => spec.allrandrepeat = parse_bool(value).map_err(err)?,
        "random_distribution" => {
            spec.random_distribution =
                Distribution::parse(value, spec.kb_base).map_err(err)?
        }
        "percentage_random" => {
            // fio's `N[,M[,T]]`, as `bs`: one value for every direction, a second for
            // writes (and trims, unless a third is given); an empty one leaves its direction
            // as it was (the default is 100).
            let parts = three_parts(value, "percentages", "for reads, writes and trims").map_err(err)?;
            let pct = |p: &str| -> Result<u8, SpecError> { Ok(parse_u32(p, 0, 100).map_err(err)? as u8) };
            spec.percentage_random = by_direction(&parts, spec.percentage_random, pct)?;
        }
        "bsrange" | "blocksize_range" => {
            // fio's `MIN-MAX[,MIN-MAX[,MIN-MAX]]`: reads', writes', trims' ranges as `bs`.
            let parts = three_parts(value, "ranges", "for reads, writes and trims, e.g. 4k-16k").map_err(err)?;
            let range = |p: &str| -> Result<BsDist, SpecError> {
                let (lo, hi) = p.split_once('-').unwrap_or((p, p));
                let lo = parse_size(lo).map_err(err)?;
                let hi = parse_size(hi).map_err(err)?;
                if lo == 0 {
                    return Err(err("block size must be at least 1 byte".into()));
                }
                if lo > hi {
                    return Err(err(format!(
                        "range '{p}' runs from {lo} down to {hi} bytes (valid: MIN-MAX with MIN at most MAX, e.g. 4k-16k)"
                    )));
                }
                Ok(BsDist::range(lo, hi))
            };
            spec.bs = block_sizes_of(&parts, &spec.bs, range)?;
        }
        "bs_unaligned" | "blocksize_unaligned" => {
            spec.bs_unaligned = parse_switch(value).map_err(err)?
        }
        "new_group" => spec.new_group = parse_switch(value).map_err(err)?,
        "filename" => {
            let names = split_filenames(value);
            if names.is_empty() {
                return Err(err("no file name given".into()));
            }
            spec.filenames = names;
        }
        "verify" => {
            // fio's checksums: raidlab checks every block by its own header and CRC32C,
            // whichever is named (the others are noted as such).
            const CHECKSUMS: &[&str] = &[
                "md5", "crc64", "crc32", "crc16", "crc7", "xxhash", "sha1", "sha256", "sha512",
                "sha3-224", "sha3-256", "sha3-384", "sha3-512", "meta",
            ];
            spec.verify_named = None;
            spec.verify_pattern_only = value == "pattern";
            spec.verify = match value {
                "crc32c" | "crc32c-intel" | "raidlab" | "pattern" => true,
                "none" => false,
                v if CHECKSUMS.contains(&v) => {
                    spec.verify_named = Some(v.to_string());
                    true
                }
                v => parse_bool(v).map_err(|_| {
                    err(format!(
                        "'{v}' is not a verify mode (valid: crc32c, crc32c-intel, {}, pattern, none, 1, 0)",
                        CHECKSUMS.join(", ")
                    ))
                })?,
            }
        }
        "do_verify" => spec.do_verify = parse_bool(value).map_err(err)?,
        "verify_only" => spec.verify_only = parse_switch(value).map_err(err)?,
        "verify_backlog" | "verify_backlog_batch" => {
            let n = value.parse::<u64>().map_err(|_| {
                err(format!(
                    "'{value}' is not a number of blocks (valid: a whole number such as 1024; 0 turns it off)"
                ))
            })?;
            if key == "verify_backlog" {
                spec.verify_backlog = n;
            } else {
                spec.verify_backlog_batch = (n > 0).then_some(n);
            }
        }
        "verify_pattern" => {
            spec.verify_pattern = Some(parse_verify_pattern(value).map_err(err)?);
            // (As in fio 3.33, a pattern turns verify on: headers and the pattern after them.)
            spec.verify = true;
        }
        "verify_fatal" => spec.verify_fatal = parse_bool(value).map_err(err)?,
        "verify_dump" => spec.verify_dump = parse_bool(value).map_err(err)?,
        "verify_async" => spec.verify_async = parse_u32(value, 0, 1024).map_err(err)?,
        "verify_interval" => {
            // (fio's 0 is its default: a header a block.)
            let n = parse_size(value).map_err(err)?;
            spec.verify_interval = (n > 0).then_some(n);
        }
        "continue_on_error" => {
            spec.on_error.continue_on_error = ErrorKinds::parse(value).map_err(err)?
        }
        "error_dump" => spec.on_error.error_dump = parse_bool(value).map_err(err)?,
        "ignore_error" => {
            // fio's `READ,WRITE,VERIFY`: a list of errnos for each, `:`-separated, by name
            // (ENOSPC) or number; an empty list keeps that kind's default.
            let parts = three_parts(value, "lists", "for reads, writes and verify, e.g. EIO:ENOSPC,ENOSPC").map_err(err)?;
            let mut lists: [Vec<i32>; 3] = Default::default();
            for (list, part) in lists.iter_mut().zip(&parts) {
                for name in part.split(':').map(str::trim).filter(|n| !n.is_empty()) {
                    list.push(errno_named(name).map_err(err)?);
                }
            }
            // (`:` alone names no error either: a value that names none says nothing.)
            if lists.iter().all(Vec::is_empty) {
                return Err(err(format!(
                    "'{value}' names no error (valid: errors for reads, writes and verify, e.g. EIO:ENOSPC,ENOSPC)"
                )));
            }
            spec.on_error.ignore_error = lists;
        }
        "group_reporting" => spec.group_reporting = parse_switch(value).map_err(err)?,
        "disk_util" => spec.disk_util = parse_bool(value).map_err(err)?,
        "stats" => spec.stats = parse_bool(value).map_err(err)?,
        "kb_base" => {
            spec.kb_base = match value.trim() {
                "1024" => 1024,
                "1000" => 1000,
                other => {
                    return Err(err(format!(
                        "'{other}' is not a unit base (valid: 1024, 1000)"
                    )))
                }
            }
        }
        // (`wait_for_previous` is fio's other name for it.)
        "stonewall" | "wait_for_previous" => spec.stonewall = parse_switch(value).map_err(err)?,
        // (fio's FLOW_MAX_WEIGHT is 1000.)
        "flow" => spec.flow = parse_u32(value, 0, 1000).map_err(err)?,
        "flow_id" => spec.flow_id = parse_u32(value, 0, u32::MAX).map_err(err)?,
        "flow_sleep" => spec.flow_sleep_ns = parse_us_or_duration(value).map_err(err)?,
        // (fio 3.33 refuses an empty one too: "option wait_for requires an argument".)
        "wait_for" => {
            if value.is_empty() {
                return Err(err(
                    "empty value (valid: the name of a job defined before this one)".into(),
                ));
            }
            spec.wait_for = Some(value.to_string());
        }
        "exitall" => spec.exitall = parse_switch(value).map_err(err)?,
        "exitall_on_error" => spec.exitall_on_error = parse_switch(value).map_err(err)?,
        "exit_what" => {
            spec.exit_what = match value {
                "group" => ExitWhat::Group,
                "stonewall" => ExitWhat::Stonewall,
                "all" => ExitWhat::All,
                _ => {
                    return Err(err(format!(
                        "'{value}' is not a set of jobs to stop (valid: group, stonewall, all)"
                    )))
                }
            }
        }
        // raidlab's jobs are always threads; fio's `thread` (or `threads`) asks for exactly
        // that.
        "thread" | "threads" => {
            parse_switch(value).map_err(err)?;
        }
        // raidlab submits and completes each job's I/O in the job's own thread: fio's
        // default, `inline`.
        "io_submit_mode" => match value {
            "inline" => {}
            "offload" => {
                return Err(err(
                    "'offload' hands submissions to other threads, which raidlab does not do (valid: inline, the default; for a fixed submission rate, rate_iops with rate_process=poisson)"
                        .into(),
                ))
            }
            other => {
                return Err(err(format!(
                    "'{other}' is not a submission mode (valid: inline or offload, as fio takes them)"
                )))
            }
        },
        "rate" => spec.pace.rate = per_direction(value, "1m,500k", parse_size, spec.pace.rate).map_err(err)?,
        "rate_iops" => {
            spec.pace.rate_iops = per_direction(value, "1000,500", parse_count, spec.pace.rate_iops).map_err(err)?
        }
        "rate_min" | "ratemin" => {
            spec.pace.rate_min = per_direction(value, "1m,500k", parse_size, spec.pace.rate_min).map_err(err)?
        }
        "rate_iops_min" => {
            spec.pace.rate_iops_min = per_direction(value, "1000,500", parse_count, spec.pace.rate_iops_min).map_err(err)?
        }
        "rate_process" => {
            spec.pace.rate_process = match value {
                "linear" => RateProcess::Linear,
                "poisson" => RateProcess::Poisson,
                v => {
                    return Err(err(format!(
                        "'{v}' is not a rate process (valid: linear, poisson)"
                    )))
                }
            }
        }
        "rate_cycle" | "ratecycle" => {
            let ms = parse_count(value).map_err(err)?;
            if ms == 0 {
                return Err(err("rate_cycle must be at least 1 ms".into()));
            }
            spec.pace.rate_cycle_ms = ms;
        }
        "thinktime" => spec.pace.thinktime_ns = parse_time(value, 1_000).map_err(err)?,
        "thinktime_spin" => spec.pace.thinktime_spin_ns = parse_time(value, 1_000).map_err(err)?,
        "thinktime_blocks" => {
            spec.pace.thinktime_blocks = parse_count(value).map_err(err)?;
            spec.pace.thinktime_blocks_set = true;
        }
        "thinktime_blocks_type" => {
            spec.pace.thinktime_blocks_type = match value {
                "complete" => ThinkBlocks::Complete,
                "issue" => ThinkBlocks::Issue,
                v => {
                    return Err(err(format!(
                        "'{v}' is not a thinktime_blocks_type (valid: complete, issue)"
                    )))
                }
            }
        }
        "thinktime_iotime" => {
            spec.pace.thinktime_iotime_ns = parse_time(value, 1_000_000_000).map_err(err)?
        }
        "rate_ignore_thinktime" => {
            spec.pace.rate_ignore_thinktime = parse_bool(value).map_err(err)?
        }
        "startdelay" => {
            let (lo, hi) = match value.split_once('-') {
                Some((a, b)) => (
                    parse_time(a, 1_000_000_000).map_err(err)?,
                    parse_time(b, 1_000_000_000).map_err(err)?,
                ),
                None => {
                    let t = parse_time(value, 1_000_000_000).map_err(err)?;
                    (t, t)
                }
            };
            if hi < lo {
                return Err(err(format!(
                    "range '{value}' runs backwards (valid: LOW-HIGH with LOW at most HIGH)"
                )));
            }
            spec.pace.startdelay_ns = (lo, hi);
        }
        "fsync" => spec.fsync = parse_count(value).map_err(err)?,
        "fdatasync" => spec.fdatasync = parse_count(value).map_err(err)?,
        "sync" => {
            spec.sync = match value {
                "none" | "0" => SyncIo::None,
                "sync" | "1" => SyncIo::Sync,
                "dsync" => SyncIo::Dsync,
                v => {
                    return Err(err(format!(
                        "'{v}' is not a sync mode (valid: none, 0, sync, 1, dsync)"
                    )))
                }
            }
        }
        // An empty name: the job's own, when the logs are written.
        "write_bw_log" => spec.logs.bw = Some(value.to_string()),
        "write_iops_log" => spec.logs.iops = Some(value.to_string()),
        "write_lat_log" => spec.logs.lat = Some(value.to_string()),
        "write_hist_log" => spec.logs.hist = Some(value.to_string()),
        "per_job_logs" => spec.logs.shared = !parse_bool(value).map_err(err)?,
        "log_hist_msec" => {
            spec.logs.hist_msec = value.parse().map_err(|_| {
                err(format!(
                    "'{value}' is not a whole number of milliseconds (valid: a window such as 1000; 0 writes no lines)"
                ))
            })?
        }
        "log_hist_coarseness" => {
            spec.logs.hist_coarseness = value
                .parse()
                .ok()
                .filter(|c| *c <= 6)
                .ok_or_else(|| {
                    err(format!(
                        "'{value}' is not a coarseness (valid: 0, fio's 1856 bins, to 6, 29 bins)"
                    ))
                })?
        }
        "log_avg_msec" => {
            spec.logs.avg_msec = value.parse().map_err(|_| {
                err(format!(
                    "'{value}' is not a whole number of milliseconds (valid: 0 to log every I/O, or a window such as 500)"
                ))
            })?
        }
        "log_offset" => spec.logs.offset = parse_bool(value).map_err(err)?,
        "log_max_value" => spec.logs.max_value = parse_bool(value).map_err(err)?,
        "log_unix_epoch" => spec.logs.unix_epoch = parse_bool(value).map_err(err)?,
        "bw_avg_time" | "iops_avg_time" | "bwavgtime" | "iopsavgtime" => {
            let ms = value.parse::<u64>().ok().filter(|&ms| ms > 0).ok_or_else(|| {
                err(format!(
                    "'{value}' is not a whole number of milliseconds above 0 (valid: e.g. 500, the default)"
                ))
            })?;
            let k = usize::from(key.starts_with("iops"));
            spec.avg_time_ms[k] = ms;
            spec.avg_time_given[k] = true;
        }
        "percentile_list" => {
            let (list, precision) = parse_percentile_list(value).map_err(err)?;
            spec.percentiles.list = list;
            spec.percentiles.precision = precision;
            spec.percentiles.clat = true;
        }
        "clat_percentiles" => spec.percentiles.clat = parse_bool(value).map_err(err)?,
        "lat_percentiles" => spec.percentiles.lat = Some(parse_bool(value).map_err(err)?),
        "unified_rw_reporting" => {
            spec.unified_rw_reporting = UnifiedRw::parse(value).map_err(err)?
        }
        "unit_base" => {
            spec.rates_in_bits = match value {
                "1" => true,
                "0" | "8" => false,
                v => {
                    return Err(err(format!(
                        "'{v}' is not a unit base (valid: 0, the default, or 8: bytes; 1: bits)"
                    )))
                }
            }
        }
        "significant_figures" => {
            let n = value.parse::<u8>().ok().filter(|n| (1..=10).contains(n));
            spec.significant_figures = Some(n.ok_or_else(|| {
                err(format!(
                    "'{value}' is not a number of digits (valid: 1 to 10; 4 by default)"
                ))
            })?);
        }
        _ => unreachable!("option table and match disagree on '{key}'"),
    }
    Ok(())
}

/// The stonewall group of each job (run one after another) and its reporting group
/// (fio's `groupid`): a `stonewall` starts both, a `new_group` only a reporting group, so
/// its job runs beside the ones before it but reports apart from them. A flag on the first
/// job starts nothing, as in fio.
pub fn job_groups(specs: &[JobSpec]) -> Vec<(usize, u32)> {
    let (mut run, mut report) = (0usize, 0u32);
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if i > 0 && s.stonewall {
                run += 1;
            }
            if i > 0 && (s.stonewall || s.new_group) {
                report += 1;
            }
            (run, report)
        })
        .collect()
}

/// What the jobs of one stonewall group hold together at once (they run side by side; the
/// groups one after another): `amount` summed over the group's job instances (numjobs
/// counted) that it gives Some for, and how many those are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupTotal {
    pub amount: u64,
    pub jobs: u64,
}

/// [`GroupTotal`]s of every stonewall group, in order.
pub fn group_totals(
    specs: &[JobSpec],
    amount: impl Fn(&crate::stream::JobInstance) -> Option<u64>,
) -> Vec<GroupTotal> {
    let groups = job_groups(specs);
    let mut out: Vec<GroupTotal> = Vec::new();
    for inst in crate::stream::JobInstance::expand(specs) {
        let Some(a) = amount(&inst) else { continue };
        let g = groups[inst.spec_index].0;
        if out.len() <= g {
            out.resize(g + 1, GroupTotal::default());
        }
        out[g].amount = out[g].amount.saturating_add(a);
        out[g].jobs += 1;
    }
    out
}

/// The first group whose total exceeds `limit`: how a message names it (nothing when the
/// run is one group, `stonewall group G: ` otherwise) and its total.
pub fn group_over(totals: &[GroupTotal], limit: u64) -> Option<(String, GroupTotal)> {
    let (g, t) = totals.iter().enumerate().find(|(_, t)| t.amount > limit)?;
    let which = if totals.len() == 1 {
        String::new()
    } else {
        format!("stonewall group {g}: ")
    };
    Some((which, *t))
}

/// A whole number (`rate_iops`, `fsync`, `rate_cycle`, …).
fn parse_count(text: &str) -> Result<u64, String> {
    let t = text.trim();
    t.parse()
        .map_err(|_| format!("'{t}' is not a whole number (valid: 0 to 2^64-1)"))
}

/// A time whose bare number is in units of `bare_ns` (fio's `thinktime` counts µs,
/// `startdelay` seconds); with a suffix, as [`parse_duration_ns`].
fn parse_time(text: &str, bare_ns: u64) -> Result<u64, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let v: u64 = t.parse().map_err(|_| format!("'{t}' is too large"))?;
        return v
            .checked_mul(bare_ns)
            .ok_or_else(|| format!("'{t}' is out of range (valid: 0 to 115740d)"));
    }
    parse_duration_ns(t)
}

/// fio's `read,write[,trim]` form of a per-direction value ([`by_direction`]): an empty part
/// leaves that direction as `prev` has it (unset, 0, unless a `[global]` set it), and a value
/// with none ([`three_parts`]) is refused. `example` shows a valid value in the message.
fn per_direction(
    value: &str,
    example: &str,
    parse: impl Fn(&str) -> Result<u64, String>,
    prev: [u64; 3],
) -> Result<[u64; 3], String> {
    let parts = three_parts(
        value,
        "values",
        &format!("for reads, writes and trims, e.g. {example}"),
    )?;
    by_direction(&parts, prev, parse)
}

impl JobSpec {
    /// Requests the real engine submits at once: `iodepth_batch_submit`, with 0 meaning the
    /// job's `iodepth` and no more than it (fio caps it so too).
    pub fn submit_batch(&self) -> u32 {
        match self.iodepth_batch_submit {
            0 => self.iodepth.max(1),
            b => b.min(self.iodepth.max(1)),
        }
    }

    /// The file the job's `exec_prerun` / `exec_postrun` command (`what`: `prerun` /
    /// `postrun`) writes its output to: `JOB.WHAT.txt` in the working folder, as fio names it,
    /// or `JOB.rankR.WHAT.txt` for MPI rank R (every rank runs the command, often in one shared
    /// folder). The one place the name is made, so the check before a run and the hook agree
    /// on it.
    pub fn exec_output(&self, what: &str) -> String {
        match self.mpi_rank {
            Some(r) => format!("{}.rank{r}.{what}.txt", self.name),
            None => format!("{}.{what}.txt", self.name),
        }
    }

    /// Whether the job flushes what it wrote as it ends, inside its runtime: `end_fsync`, or
    /// `fsync_on_close` (fio closes a job's files as it ends; both flush once there, and a
    /// file flushed by one is clean for the other: one flush, as fio's strace shows).
    pub fn flushes_at_end(&self) -> bool {
        self.end_fsync || self.fsync_on_close
    }

    /// The read-ahead the job asks for its files (fio's `fadvise_hint`): by default random
    /// for a random pattern (fio's `td_random`: `randread`, `randwrite`, `randrw`, and their
    /// `:N` forms, whatever requests a replayed trace holds) and sequential otherwise.
    pub fn read_advice(&self) -> ReadAdvice {
        match self.fadvise_hint {
            FadviseHint::Off => ReadAdvice::Normal,
            FadviseHint::Sequential => ReadAdvice::Sequential,
            FadviseHint::Random => ReadAdvice::Random,
            FadviseHint::Pattern if self.rw.is_random() => ReadAdvice::Random,
            FadviseHint::Pattern => ReadAdvice::Sequential,
        }
    }

    /// Once a job's queue is full, it is filled again only when this many or fewer are in
    /// flight: `iodepth_low`, and at most the depth less `iodepth_batch_complete_min` (the
    /// completions a full queue waits for). fio's defaults give `iodepth` − 1: each
    /// completion makes room for the next request.
    pub fn refill_at(&self) -> u32 {
        let depth = self.iodepth.max(1);
        let low = match self.iodepth_low {
            0 => depth,
            l => l.min(depth),
        };
        let wait = self.iodepth_batch_complete_min.clamp(1, depth);
        low.min(depth - wait)
    }

    /// The completions the real engine waits for and takes at most each time it reaps:
    /// `iodepth_batch_complete_min` (at least 1) and `iodepth_batch_complete_max` (by
    /// default, and at least, the minimum).
    pub fn reap_bounds(&self) -> (u32, u32) {
        let min = self.iodepth_batch_complete_min.max(1);
        (min, self.iodepth_batch_complete_max.max(min))
    }

    /// The requests after which `number_ios` ends the job: `number_ios` times `loops`, as
    /// fio counts them (its `exceeds_number_ios` compares the requests of all loops so far
    /// with `number_ios * loops`): `number_ios=5 loops=3` over 16 blocks issues 15 requests,
    /// one pass's first 15, and `number_ios=20 loops=3` all 48 of the three passes.
    pub fn request_cap(&self) -> Option<u64> {
        self.number_ios
            .map(|n| n.saturating_mul(u64::from(self.loops)))
    }

    /// Check the options together (each was checked alone by [`apply_option`]).
    /// The runs of this spec's `filenames` that are one job each (indices into them): all of
    /// them, as fio runs `filename=a:b`, or runs of `files_per_job` (`job_per_file`: one).
    pub fn file_runs(&self) -> Vec<Vec<usize>> {
        let n = self.filenames.len();
        match self.files_per_job {
            Some(k) if k >= 1 => (0..n)
                .step_by(k as usize)
                .map(|a| (a..(a + k as usize).min(n)).collect())
                .collect(),
            _ if n == 0 => Vec::new(),
            _ => vec![(0..n).collect()],
        }
    }

    /// How many files the job that runs over `filename` has (1 if the spec does not list
    /// it).
    pub fn run_of(&self, filename: &str) -> usize {
        self.file_runs()
            .into_iter()
            .find(|r| r.iter().any(|&i| self.filenames[i] == filename))
            .map_or(1, |r| r.len())
    }

    /// The spec one of a job's `files` files runs by: each file `filesize` bytes, or the
    /// job's `size` shared out among them, as fio shares it (`size=8m` over two files: 4 MiB
    /// of each); `io_size` and `number_ios` likewise. A job of one file runs by its own.
    pub fn per_file(&self, files: usize) -> JobSpec {
        if files <= 1 && self.filesize.is_none() {
            return self.clone();
        }
        let n = files.max(1) as u64;
        let mut s = self.clone();
        // (A share is whole blocks of the smallest size, so it keeps their alignment.)
        let unit = self.bs.min().max(1);
        let share = |z: u64| {
            let part = (z / n).max(1);
            if part >= unit {
                part - part % unit
            } else {
                part
            }
        };
        s.size = self.filesize.or(self.size.map(share));
        if self.filesize.is_some() {
            s.size_percent = None;
        }
        s.io_size = self.io_size.map(share);
        s.number_ios = self.number_ios.map(|x| x.div_ceil(n));
        s
    }

    /// What in the job cannot go with its trace (or its `replay_*` options without one).
    /// What is wrong with the job's zone options, if anything: as fio, `zonesize` needs
    /// `zonemode=strided` and strided zones need it; a zone holds the largest block; and
    /// the options that place offsets by other rules than the zone's are refused with it.
    fn zone_conflict(&self) -> Option<String> {
        let z = self.zones;
        if !z.strided {
            // (fio takes zonerange and zoneskip without a zone mode, and ignores them.)
            return (z.size > 0).then(|| {
                format!(
                    "zonesize={} needs zonemode=strided (fio: zonemode=none and zonesize are not compatible; valid: zonemode=strided with it, or no zonesize)",
                    z.size
                )
            });
        }
        if z.size == 0 {
            return Some(
                "zonemode=strided needs zonesize, the bytes moved in each zone (e.g. zonesize=256m)"
                    .into(),
            );
        }
        if z.range() < self.bs.max() {
            return Some(format!(
                "a zone of {} bytes (zonerange, else zonesize) is smaller than the largest block, {} bytes (valid: zonerange at least bs)",
                z.range(),
                self.bs.max()
            ));
        }
        if self.direct {
            for (what, v) in [("zonerange", z.range()), ("zoneskip", z.skip)] {
                if v % 512 != 0 {
                    return Some(format!(
                        "{what}={v} is not a multiple of 512 bytes, which direct=1 needs (zones start at multiples of zonerange + zoneskip)"
                    ));
                }
            }
        }
        let several_sizes = [&self.bs.read, &self.bs.write]
            .iter()
            .any(|d| !d.is_fixed())
            || self.bs.read.min() != self.bs.write.min();
        let other = [
            (
                self.read_iolog.is_some(),
                "read_iolog (a trace places its own requests)",
            ),
            (
                self.rw.trims(),
                "trims (valid: read, write and mixed patterns)",
            ),
            (self.verify_only, "verify_only"),
            (
                !self.random_distribution.is_uniform(),
                "random_distribution (valid: random, the default)",
            ),
            (
                self.percentage_random != [100, 100, 100],
                "percentage_random (valid: 100, the default)",
            ),
            (self.rw_run > 1, "rw=PATTERN:N runs"),
            (self.rw_hole != 0, "rw=PATTERN:HOLE skips"),
            (
                self.rw.is_random() && several_sizes && !self.norandommap,
                "several block sizes over the random map (valid: one bs, or norandommap=1)",
            ),
        ];
        other.iter().find(|(on, _)| *on).map(|(_, what)| {
            format!("zonemode=strided with {what} is refused: raidlab places such offsets only across the whole region")
        })
    }

    fn replay_conflict(&self) -> Option<String> {
        let Some(path) = &self.read_iolog else {
            return (!self.replay.is_default()).then(|| {
                "replay_* options shape a trace's replay (valid: give read_iolog=PATH too)".into()
            });
        };
        if self.trace.is_none() && !self.filenames.is_empty() {
            return Some(format!(
                "read_iolog={path} names the files its requests go to, and filename names others (valid: leave filename out, or replay_redirect=TARGET to send every request of the trace to one target)"
            ));
        }
        // (Before anything is laid out; the target's own logical block is checked later.)
        if let Some(t) = self.trace.as_ref().filter(|_| self.direct) {
            if let Some(at) = (0..t.files.len()).find_map(|k| t.misaligned(k, 512)) {
                return Some(format!(
                    "{} {at} is not a multiple of 512 bytes, which direct=1 needs",
                    t.origin
                ));
            }
        }
        let other = [
            (self.time_based, "time_based"),
            (self.loops > 1, "loops"),
            (self.verify, "verify"),
            (self.nrfiles > 1, "nrfiles"),
            (self.filesize.is_some(), "filesize"),
            (self.filename_format.is_some(), "filename_format"),
            (self.job_per_file, "job_per_file"),
        ];
        other.iter().find(|(on, _)| *on).map(|(_, name)| {
            format!(
                "read_iolog={path} replays the trace's requests once, on its files; {name} does not apply (valid: leave {name} out; runtime still caps a replay)"
            )
        })
    }

    /// Take `trace` (read from `read_iolog`) as the job's requests: its files become the
    /// job's files, its directions the job's `rw`, its largest request the job's block
    /// size (the executors' buffers).
    pub fn attach_trace(&mut self, trace: crate::iolog::Trace) {
        self.filenames = trace.files.clone();
        let reads = trace.has(crate::stream::Dir::Read);
        let writes = trace.has(crate::stream::Dir::Write);
        let trims = trace.has(crate::stream::Dir::Trim);
        // (A trace's trims change what its targets hold, as writes do: the pattern says so.)
        self.rw = match (reads, writes, trims) {
            (true, false, false) => RwMode::Read,
            (false, true, false) => RwMode::Write,
            (false, false, true) => RwMode::Trim,
            (false, true, true) => RwMode::TrimWrite,
            _ => RwMode::ReadWrite,
        };
        let largest = trace.ios.iter().map(|r| r.len).max().unwrap_or(1);
        self.bs = BlockSizes::fixed(largest);
        // (A blktrace's depth, unless the job gives its own, as fio takes it.)
        if let Some(d) = trace.depth.filter(|_| !self.iodepth_given) {
            self.iodepth = d;
        }
        self.trace = Some(std::sync::Arc::new(trace));
    }

    /// The bytes a replayed trace needs of file `name` (the end of its furthest request),
    /// for laying the file out.
    pub fn replay_extent(&self, name: &str) -> Option<u64> {
        let t = self.trace.as_ref()?;
        // (By position: `directory` may have prefixed the trace's names.)
        let k = self.filenames.iter().position(|f| f == name)?;
        Some(t.extent(k))
    }

    /// How often its bandwidth and IOPS samples are taken, ms, each (`None`: at every
    /// completion), as fio 3.33 takes them (its `setup_log` and `calc_log_samples`):
    /// - without that kind's log, every `bw_avg_time` (`iops_avg_time`);
    /// - with its log and `log_avg_msec=0`, at every completion, each one a line of the log;
    /// - with its log averaged, every `bw_avg_time` if the job gives it, otherwise every
    ///   `log_avg_msec`: each sample is then the log's line for its interval.
    pub fn sample_every(&self) -> [Option<u64>; 2] {
        let logs = [self.logs.bw.is_some(), self.logs.iops.is_some()];
        [0, 1].map(
            |k| match (logs[k], self.logs.avg_msec, self.avg_time_given[k]) {
                (false, _, _) | (true, 1.., true) => Some(self.avg_time_ms[k]),
                (true, 0, _) => None,
                (true, log_ms, false) => Some(log_ms),
            },
        )
    }

    /// Which of its bandwidth and IOPS samples are also lines of its logs: those of an
    /// averaged log it writes (`log_avg_msec` above 0; see [`JobSpec::sample_every`]).
    pub fn samples_logged(&self) -> [bool; 2] {
        let averaged = self.logs.avg_msec > 0;
        [
            averaged && self.logs.bw.is_some(),
            averaged && self.logs.iops.is_some(),
        ]
    }

    /// Whether the job writes: its pattern's writes, unless `verify_only` reads them back
    /// instead.
    pub fn writes(&self) -> bool {
        self.rw.writes(self.rwmixread) && !self.verify_only
    }

    /// The share of the job's requests that are reads, in percent: its pattern's, or all of
    /// them with `verify_only`.
    pub fn read_percent(&self) -> u8 {
        if self.verify_only {
            100
        } else {
            self.rw.read_percent(self.rwmixread)
        }
    }

    /// Whether the job issues trims: its pattern's, or its replayed trace's.
    pub fn trims(&self) -> bool {
        self.rw.trims()
            || self
                .trace
                .as_ref()
                .is_some_and(|t| t.has(crate::stream::Dir::Trim))
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        let e = |m: String| {
            Err(SpecError {
                message: format!("job '{}': {m}", self.name),
            })
        };
        if let Some(why) = self.replay_conflict() {
            return e(why);
        }
        if let Some(why) = self.zone_conflict() {
            return e(why);
        }
        if self.time_based && self.runtime_ns.is_none() {
            return e("time_based needs a runtime (e.g. runtime=10s)".into());
        }
        if self.pre_read && self.direct {
            return e(
                "pre_read fills the page cache before the job, which direct=1 bypasses (valid: direct=0, or pre_read=0)"
                    .into(),
            );
        }
        if self.openfiles > 0 {
            let most = self
                .file_runs()
                .iter()
                .map(Vec::len)
                .max()
                .unwrap_or(self.nrfiles as usize)
                .max(if self.filenames.is_empty() {
                    self.nrfiles as usize
                } else {
                    1
                });
            if most > self.openfiles as usize {
                return e(format!(
                    "openfiles={} but a job has {most} files, and raidlab keeps every file of a job open while it runs (valid: openfiles={most} or more, or fewer files a job)",
                    self.openfiles
                ));
            }
        }
        if self.verify && self.verify_pattern_only && self.verify_pattern.is_none() {
            return e(
                "verify=pattern checks the bytes verify_pattern gives (valid: verify_pattern=0x… with it, or verify=crc32c)"
                    .into(),
            );
        }
        if let Some(m) = self.buffers.conflict() {
            return e(m);
        }
        let b = &self.buffers;
        if b.dedupe_percentage > 0 && b.dedupe_mode == crate::content::DedupeMode::WorkingSet {
            // (fio 3.33's checks, as it words them.)
            if self.size.is_none() {
                return e("dedupe_mode=working_set draws from a share of the job's size, which it does not give (valid: size=… with it)".into());
            }
            if self.nrfiles > 1 || self.filenames.len() > 1 {
                return e("dedupe_mode=working_set takes one file a job, as fio's (valid: one filename, nrfiles=1)".into());
            }
            if b.dedupe_working_set_percentage as u32 + b.dedupe_percentage as u32 > 100 {
                return e(format!(
                    "dedupe_percentage={} cannot be reached with dedupe_working_set_percentage={}: the working set's blocks are unique, so the two add up to more than 100 (valid: a sum of 100 or less)",
                    b.dedupe_percentage, b.dedupe_working_set_percentage
                ));
            }
        }
        if (self.hipri || self.sqthread_poll) && self.ioengine != IoEngine::IoUring {
            return e(format!(
                "{} {} io_uring's (valid: ioengine=io_uring, not {})",
                match (self.sqthread_poll, self.hipri) {
                    (true, true) => "sqthread_poll and hipri",
                    (true, false) => "sqthread_poll",
                    _ => "hipri",
                },
                if self.sqthread_poll && self.hipri {
                    "are"
                } else {
                    "is"
                },
                self.ioengine.name()
            ));
        }
        if self.hipri && !self.direct {
            return e(
                "hipri polls the device for completions, which only direct I/O has (valid: direct=1 with hipri)"
                    .into(),
            );
        }
        if self.direct {
            for (what, v) in [
                ("offset", self.offset),
                ("offset_increment", self.offset_increment),
            ] {
                if v % 512 != 0 {
                    return e(format!(
                        "{what}={v} is not a multiple of 512 bytes, which direct=1 needs"
                    ));
                }
            }
            for (bs, _) in self
                .bs
                .read
                .entries
                .iter()
                .chain(self.bs.write.entries.iter())
            {
                if bs % 512 != 0 {
                    return e(format!(
                        "bs={bs} is not a multiple of 512 bytes, which direct=1 needs"
                    ));
                }
            }
            if let Some(s) = self.size {
                if s % 512 != 0 {
                    return e(format!(
                        "size={s} is not a multiple of 512 bytes, which direct=1 needs"
                    ));
                }
            }
        }
        if let Some(s) = self.size {
            if s < self.bs.min() {
                return e(format!(
                    "size={s} is smaller than the block size {}",
                    self.bs.min()
                ));
            }
        }
        if let Some(s) = self.io_size {
            if s < self.bs.min() {
                return e(format!(
                    "io_size={s} is smaller than the block size {}",
                    self.bs.min()
                ));
            }
        }
        if let Some(a) = self.blockalign {
            if self.direct && a % 512 != 0 {
                return e(format!(
                    "blockalign={a} is not a multiple of 512 bytes, which direct=1 needs"
                ));
            }
            if self.verify && self.rw.is_random() {
                for (bs, _) in self.bs.read.entries.iter().chain(&self.bs.write.entries) {
                    if a < *bs {
                        return e(format!(
                            "verify with blockalign={a} below bs={bs} is refused: random blocks \
                             would overlap and overwrite each other's headers"
                        ));
                    }
                }
            }
        }
        if self.verify && self.rw_hole != 0 {
            let bs = self.bs.min();
            let one_size =
                self.bs.read.is_fixed() && self.bs.write.is_fixed() && self.bs.max() == bs;
            if !one_size || !self.rw_hole.unsigned_abs().is_multiple_of(bs) {
                return e(format!(
                    "verify with rw={}:{} is refused: blocks would overlap across passes and \
                     overwrite each other's headers (valid: one block size that divides the skip)",
                    self.rw, self.rw_hole
                ));
            }
        }
        if self.bs_unaligned && self.direct {
            return e(
                "bs_unaligned with direct=1 is refused: direct I/O needs sizes in whole 512-byte sectors (valid: one or the other)"
                    .into(),
            );
        }
        let p = &self.pace;
        for (d, dir) in ["reads", "writes", "trims"].iter().enumerate() {
            if p.rate[d] > 0 && p.rate_min[d] > p.rate[d] {
                return e(format!(
                    "rate_min={} for {dir} is above its cap rate={} (valid: rate_min at most rate)",
                    p.rate_min[d], p.rate[d]
                ));
            }
            if p.rate_iops[d] > 0 && p.rate_iops_min[d] > p.rate_iops[d] {
                return e(format!(
                    "rate_iops_min={} for {dir} is above its cap rate_iops={} (valid: rate_iops_min at most rate_iops)",
                    p.rate_iops_min[d], p.rate_iops[d]
                ));
            }
        }
        if self.fill_device && !self.writes() {
            return e(
                "fill_device fills the filesystem by writing, and the job writes nothing (valid: a job that writes, e.g. rw=write)"
                    .to_string(),
            );
        }
        if self.verify_backlog > 0 || self.verify_backlog_batch.is_some() {
            let why = if !self.verify {
                Some("it checks blocks written with verify (valid: verify=crc32c, or another verify mode, with it)")
            } else if self.verify_only {
                Some("verify_only writes nothing to check as it goes (valid: one of the two)")
            } else if !self.rw.writes(self.rwmixread) {
                Some("the job writes nothing (valid: a job that writes)")
            } else if self.verify_backlog == 0 {
                Some("verify_backlog_batch needs verify_backlog, the blocks written between checks (valid: verify_backlog=N with it)")
            } else {
                None
            };
            if let Some(why) = why {
                return e(format!("verify_backlog is refused: {why}"));
            }
        }
        if self.verify_only {
            let why = if !self.verify {
                Some("it checks the headers a job's writes carry with verify (valid: verify=crc32c, or another verify mode, with it)".to_string())
            } else if self.trace.is_some() {
                Some("a replayed trace is not checked (valid: verify_only on a job with rw=write or randwrite)".to_string())
            } else if self.rw.read_percent(self.rwmixread) != 0 || self.rw.trims() {
                Some(format!("it reads back what a job that only writes wrote, and rw={} reads or trims (valid: rw=write or randwrite)", self.rw))
            } else if self.time_based {
                Some("a time-based job's writes have no end to check up to (valid: verify_only without time_based, as in fio)".to_string())
            } else {
                None
            };
            if let Some(why) = why {
                return e(format!("verify_only is refused: {why}"));
            }
        }
        if self.verify && self.rw.trims() {
            return e(format!(
                "verify with rw={} is refused: raidlab does not check trimmed blocks (valid: verify with read, write and mixed patterns)",
                self.rw
            ));
        }
        if self.verify && self.bs.min() < crate::stream::VERIFY_HEADER_BYTES {
            return e(format!(
                "verify needs blocks of at least {} bytes to hold the header",
                crate::stream::VERIFY_HEADER_BYTES
            ));
        }
        if let Some(span) = self.verify_span() {
            let hdr = crate::stream::VERIFY_HEADER_BYTES;
            if span < hdr && !self.verify_pattern_only {
                let (wmin, wmax) = (self.bs.write.min(), self.bs.write.max());
                let asked = self.verify_span_before_gcd().unwrap_or(span);
                if asked != span {
                    let lo = wmin.div_ceil(asked) * asked;
                    let hi = (wmax / asked * asked).max(lo);
                    // fio falls back to the write sizes' greatest common divisor when the
                    // interval does not divide them: name the interval and why it shrank.
                    return e(format!(
                        "verify_interval={asked} does not divide the write sizes ({wmin} to {wmax} bytes), so as fio each span is their greatest common divisor, {span} bytes, too short for a header of {hdr} (valid: write sizes that are multiples of verify_interval, e.g. bsrange={lo}-{hi})"
                    ));
                }
                return e(format!(
                    "verify_interval: each span of {span} bytes would carry a header of {hdr} (valid: verify_interval={hdr} or more, dividing the write block sizes)"
                ));
            }
        }
        Ok(())
    }

    /// Why this job's block sizes cannot be verified, in one line (None: they can). One fixed
    /// size for reads and writes always can. Several can with spans (`verify_interval`, or
    /// fio's default span for varying sizes): every request is then whole spans at a
    /// multiple of the span, so each span read is one some write left whole. A job must then
    /// either write (its reads are the read-backs of its writes, as they were written) or
    /// only read; a mixed job's own reads could straddle written and unwritten spans.
    pub fn verify_sizes_conflict(&self) -> Option<String> {
        if !self.verify {
            return None;
        }
        let (r, w) = (&self.bs.read, &self.bs.write);
        if r.is_fixed() && w.is_fixed() && r.min() == w.min() {
            return None;
        }
        let reads = self.read_percent();
        let mixed = reads > 0 && reads < 100 && !self.verify_only;
        // (What a job that only writes or only reads issues, and checks.)
        let sizes = if reads == 100 && !self.verify_only {
            r
        } else {
            w
        };
        let Some(n) = self.verify_span() else {
            if sizes.is_fixed() && !mixed {
                return None;
            }
            return Some(
                "verify with several block sizes needs spans of at least 64 bytes that divide them (valid: one block size, or verify_interval=N dividing every size)"
                    .into(),
            );
        };
        let whole = sizes.entries.iter().all(|e| e.0 % n == 0)
            && sizes
                .range
                .is_none_or(|(lo, hi)| !self.bs_unaligned && lo % n == 0 && hi % n == 0);
        if !whole {
            return Some(format!(
                "verify with several block sizes: a size is not a whole number of {n}-byte spans (verify_interval={n}), so spans would straddle requests (valid: sizes that are multiples of verify_interval, without bs_unaligned)"
            ));
        }
        if let Some(a) = self.blockalign.filter(|a| a % n != 0) {
            return Some(format!(
                "verify with blockalign={a}: offsets off the {n}-byte spans would straddle them (valid: a blockalign that is a multiple of verify_interval={n})"
            ));
        }
        if mixed {
            return Some(format!(
                "verify with several block sizes in a job that reads and writes (rw={}): its reads could cover spans no write reached (valid: one block size for both, or a writing job, whose read-back checks what it wrote, and a reading job)",
                self.rw
            ));
        }
        None
    }

    /// How many blocks `dedupe_mode=working_set` draws its deduplicable writes from: the
    /// job's `dedupe_working_set_percentage` of its size, in its smallest write size (as
    /// fio sizes its working set).
    pub fn dedupe_set_blocks(&self) -> u64 {
        let bytes =
            self.size.unwrap_or(0) / 100 * self.buffers.dedupe_working_set_percentage as u64;
        (bytes / self.bs.write.min().max(1)).max(1)
    }

    /// The span of a block each verify header covers, when it is less than a block (None:
    /// one header a block). As fio 3.33 sets it (`fixup_options`): `verify_interval` if given,
    /// else the smallest write size if write sizes vary; no larger than the smallest write
    /// size (or, for a job that reads, the smallest read size); and the greatest common
    /// divisor of the smallest and largest write sizes if it does not divide both. Unless
    /// `verify_interval` is given, a span too short for a header is none: a header a block.
    pub fn verify_span(&self) -> Option<u64> {
        if !self.verify {
            return None;
        }
        let (wmin, wmax) = (self.bs.write.min(), self.bs.write.max());
        let mut span = self.verify_span_before_gcd()?;
        if span == 0 || wmin % span != 0 || wmax % span != 0 {
            span = gcd(wmin, wmax);
        }
        if self.verify_interval.is_none() && span < crate::stream::VERIFY_HEADER_BYTES {
            return None;
        }
        Some(span)
    }

    /// The span `verify_span` starts from before fio's fall-back to the write sizes'
    /// greatest common divisor: `verify_interval` (or the smallest write size when sizes
    /// vary), no larger than the smallest write (or, for a job that reads, read) size.
    fn verify_span_before_gcd(&self) -> Option<u64> {
        if !self.verify {
            return None;
        }
        let (wmin, wmax) = (self.bs.write.min(), self.bs.write.max());
        let span = match self.verify_interval {
            Some(n) => n,
            None if wmin != wmax => wmin,
            None => return None,
        };
        Some(if span > wmin {
            wmin
        } else if self.rw.read_percent(100) > 0 && span > self.bs.read.min() {
            self.bs.read.min()
        } else {
            span
        })
    }

    /// This job with `size`, `offset` and `io_size` given as percent of the target
    /// (`size=50%`) made bytes of a target of `target_size` bytes, as fio makes them: the
    /// offset rounded up to `offset_align` (the smallest block size unless given), the size
    /// rounded down to the smallest block size and cut at the target's end. A target of 0
    /// bytes has no share to give: one line says so.
    pub fn resolved(&self, target_size: u64) -> Result<JobSpec, SpecError> {
        if self.size_percent.is_none()
            && self.offset_percent.is_none()
            && self.offset_increment_percent.is_none()
            && self.io_size_percent.is_none()
        {
            return Ok(self.clone());
        }
        let e = |m: String| SpecError {
            message: format!("job '{}': {m}", self.name),
        };
        let given = [
            ("size", self.size_percent),
            ("offset", self.offset_percent),
            ("offset_increment", self.offset_increment_percent),
            ("io_size", self.io_size_percent),
        ];
        if target_size == 0 {
            let (what, p) = given
                .iter()
                .find_map(|(w, p)| p.map(|p| (*w, p)))
                .unwrap_or(("size", 0));
            return Err(e(format!(
                "{what}={p}% is a share of the target's size, but the target is empty or missing (valid: an existing file or device, or {what} in bytes)"
            )));
        }
        let mut s = self.clone();
        let bs = self.bs.min().max(1);
        let share = |p: u8| (u128::from(target_size) * u128::from(p) / 100) as u64;
        if self.offset_percent.is_some() || self.offset_increment_percent.is_some() {
            // fio rounds the whole start up, offset + i * offset_increment, not each part
            // (filesetup.c, get_start_offset): `region` rounds it, and the first job's
            // start bounds the size below.
            let align = if self.offset_align > 0 {
                self.offset_align
            } else {
                bs
            };
            if let Some(p) = self.offset_percent {
                s.offset = share(p);
                s.offset_percent = None;
            }
            if let Some(p) = self.offset_increment_percent {
                s.offset_increment = share(p);
                s.offset_increment_percent = None;
            }
            s.start_align = align;
        }
        let first = s.first_start();
        if let Some(p) = self.size_percent {
            let len = (share(p) / bs * bs).min(target_size.saturating_sub(first));
            if len < bs {
                return Err(e(format!(
                    "size={p}% of the target's {target_size} bytes (after offset {first}) is less than one block of {bs} bytes (valid: a larger share, or size in bytes)"
                )));
            }
            s.size = Some(len);
            s.size_percent = None;
        }
        if let Some(p) = self.io_size_percent {
            let n = share(p);
            if n < bs {
                return Err(e(format!(
                    "io_size={p}% of the target's {target_size} bytes is less than one block of {bs} bytes (valid: a larger share, or io_size in bytes)"
                )));
            }
            s.io_size = Some(n);
            s.io_size_percent = None;
        }
        Ok(s)
    }

    /// The first job's start: `offset`, rounded up as [`JobSpec::start_align`] says.
    fn first_start(&self) -> u64 {
        match self.start_align {
            0 => self.offset,
            a => self.offset.div_ceil(a).saturating_mul(a),
        }
    }

    /// The job's strided zones, when `zonemode=strided` (checked by [`JobSpec::validate`]).
    pub fn strided(&self) -> Option<Zones> {
        self.zones.strided.then_some(self.zones)
    }

    /// The region job `job_index` covers on a target of `target_size` bytes: `(start, len)`.
    pub fn region(&self, job_index: u32, target_size: u64) -> Result<(u64, u64), SpecError> {
        let start = self
            .offset
            .checked_add(self.offset_increment.saturating_mul(job_index as u64))
            .and_then(|start| match self.start_align {
                0 => Some(start),
                a => start.div_ceil(a).checked_mul(a),
            })
            .ok_or_else(|| SpecError {
                message: "offset overflows".into(),
            })?;
        let len = match self.size {
            Some(s) => s,
            None => target_size.saturating_sub(start),
        };
        if target_size == 0 && self.size.is_none() {
            return Err(SpecError {
                message: format!(
                    "job '{}' (#{job_index}): the target is empty (0 bytes; valid: give size= and raidlab lays a file out)",
                    self.name
                ),
            });
        }
        if start >= target_size && self.size.is_none() {
            return Err(SpecError {
                message: format!(
                    "job '{}' (#{job_index}) starts at byte {start}, at or past the end of the target, which holds {target_size} bytes (valid: offset below {target_size})",
                    self.name
                ),
            });
        }
        if start.checked_add(len).is_none_or(|end| end > target_size) || len == 0 {
            return Err(SpecError {
                message: format!(
                    "job '{}' (#{job_index}) covers [{start}, {}) but the target holds {target_size} bytes (valid: offset + size up to {target_size})",
                    self.name,
                    start.saturating_add(len)
                ),
            });
        }
        if len < self.bs.min() {
            return Err(SpecError {
                message: format!(
                    "job '{}': region of {len} bytes is smaller than the block size",
                    self.name
                ),
            });
        }
        Ok((start, len))
    }
}

/// A spec from fio's options, each of which must apply (for the crate's tests).
#[cfg(test)]
pub(crate) fn spec_from(opts: &[(&str, &str)]) -> JobSpec {
    let mut s = JobSpec::default();
    for (k, v) in opts {
        apply_option(&mut s, k, Some(v)).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's trim patterns: read nothing, change what the target holds (so they need what
    /// writes need), trim; `trimwrite` writes what it trimmed. A third value of `bs` is the trims', else
    /// they take the writes'. verify with them is refused in one line; an unknown pattern
    /// lists every pattern.
    #[test]
    fn trim_patterns_and_their_sizes() {
        for (name, pairs) in [
            ("trim", false),
            ("randtrim", false),
            ("trimwrite", true),
            ("randtrimwrite", true),
        ] {
            let rw = RwMode::parse(name).unwrap();
            assert_eq!(rw.name(), name);
            assert!(rw.trims() && rw.writes(50), "{name}");
            assert_eq!(rw.read_percent(50), 0, "{name}");
            assert_eq!(rw.trim_then_write(), pairs, "{name}");
            assert_eq!(rw.is_random(), name.starts_with("rand"), "{name}");
        }
        assert!(!RwMode::RandRw.trims());
        let e = RwMode::parse("discard").unwrap_err();
        assert!(
            e.ends_with("trim, randtrim, trimwrite, randtrimwrite)"),
            "{e}"
        );
        let mut s = JobSpec::default();
        apply_option(&mut s, "bs", Some("4k,64k")).unwrap();
        assert_eq!(s.bs.trim, BsDist::fixed(65536));
        apply_option(&mut s, "bs", Some("4k,64k,1m")).unwrap();
        assert_eq!((s.bs.write.min(), s.bs.trim.min()), (65536, 1 << 20));
        apply_option(&mut s, "bssplit", Some("4k/50:8k/50,16k,32k")).unwrap();
        assert_eq!(s.bs.trim, BsDist::fixed(32768));
        apply_option(&mut s, "filename", Some("/dev/sdz")).unwrap();
        apply_option(&mut s, "rw", Some("randtrim")).unwrap();
        apply_option(&mut s, "verify", Some("crc32c")).unwrap();
        let e = s.validate().unwrap_err();
        assert!(
            e.message.contains(
                "verify with rw=randtrim is refused: raidlab does not check trimmed blocks"
            ),
            "{}",
            e.message
        );
    }

    /// A group's total is what its job instances (numjobs counted) hold together; groups
    /// apart; the first over a limit is named only when there are several.
    #[test]
    fn group_totals_sum_each_stonewall_group_apart() {
        let job = |numjobs: &str, stonewall: bool| {
            let mut s = JobSpec::default();
            apply_option(&mut s, "numjobs", Some(numjobs)).unwrap();
            apply_option(&mut s, "iodepth", Some("8")).unwrap();
            apply_option(&mut s, "filename", Some("f")).unwrap();
            s.stonewall = stonewall;
            s
        };
        let specs = [job("2", false), job("3", false), job("4", true)];
        let t = group_totals(&specs, |i| Some(u64::from(specs[i.spec_index].iodepth)));
        assert_eq!(
            t,
            [
                GroupTotal {
                    amount: 40,
                    jobs: 5
                },
                GroupTotal {
                    amount: 32,
                    jobs: 4
                }
            ]
        );
        let (which, over) = group_over(&t, 35).unwrap();
        assert_eq!((which.as_str(), over.amount), ("stonewall group 0: ", 40));
        let (which, over) = group_over(&t, 32 + 7).unwrap();
        assert_eq!((which.as_str(), over.jobs), ("stonewall group 0: ", 5));
        assert!(group_over(&t, 40).is_none());
        // One group: not named.
        let one = group_totals(&specs[..2], |_| Some(1));
        assert_eq!(
            group_over(&one, 4).map(|(w, t)| (w, t.jobs)),
            Some((String::new(), 5))
        );
        // Instances `amount` skips are not counted.
        let none = group_totals(&specs, |i| (i.spec_index == 2).then_some(1));
        assert_eq!(none[1], GroupTotal { amount: 4, jobs: 4 });
    }

    /// fio's `R,W,T` block sizes: a part not ended by a comma runs on to the directions after
    /// it; an empty part leaves its direction as it was (a [global] value, or the default),
    /// as fio 3.33 does (global bs=16k, job bs=64k, writes 16 KiB blocks).
    #[test]
    fn an_empty_block_size_part_leaves_its_direction_as_it_was() {
        let sizes = |s: &JobSpec| (s.bs.read.min(), s.bs.write.min(), s.bs.trim.min());
        let after = |first: &str, then: &str| {
            let mut s = JobSpec::default();
            apply_option(&mut s, "bs", Some(first)).unwrap();
            apply_option(&mut s, "bs", Some(then)).unwrap();
            sizes(&s)
        };
        const K: u64 = 1024;
        assert_eq!(after("16k", "64k,"), (64 * K, 16 * K, 16 * K));
        assert_eq!(after("16k", ",8k"), (16 * K, 8 * K, 8 * K));
        assert_eq!(after("16k", ",8k,"), (16 * K, 8 * K, 16 * K));
        assert_eq!(after("16k", "8k,32k,"), (8 * K, 32 * K, 16 * K));
        assert_eq!(after("16k", "8k"), (8 * K, 8 * K, 8 * K));
        // The rates and percentage_random alike.
        let mut s = JobSpec::default();
        apply_option(&mut s, "rate", Some("1m")).unwrap();
        apply_option(&mut s, "rate", Some(",2m")).unwrap();
        assert_eq!(s.pace.rate, [1 << 20, 2 << 20, 2 << 20]);
        apply_option(&mut s, "percentage_random", Some("50")).unwrap();
        apply_option(&mut s, "percentage_random", Some("10,")).unwrap();
        assert_eq!(s.percentage_random, [10, 50, 50]);
        // With nothing before, the default: 4 KiB.
        let mut s = JobSpec::default();
        apply_option(&mut s, "bs", Some("64k,")).unwrap();
        assert_eq!(sizes(&s), (64 * K, 4 * K, 4 * K));
        // bsrange alike.
        let mut s = JobSpec::default();
        apply_option(&mut s, "bs", Some("16k")).unwrap();
        apply_option(&mut s, "bsrange", Some("4k-8k,")).unwrap();
        assert_eq!((s.bs.read.max(), s.bs.write.max()), (8 * K, 16 * K));
    }

    /// fio's kb_base: sizes given after `kb_base=1000` read k, m, … as powers of 10 and
    /// KiB, MiB, … as powers of 2; those before it are read as they were (fio 3.33: with
    /// kb_base=1000 first, size=1m and bs=4k wrote 250 blocks of 4000 bytes).
    #[test]
    fn kb_base_reads_the_sizes_after_it() {
        let mut s = JobSpec::default();
        apply_option(&mut s, "bs", Some("8k")).unwrap();
        apply_option(&mut s, "kb_base", Some("1000")).unwrap();
        assert_eq!(s.bs.read.min(), 8192);
        for (k, v) in [
            ("size", "1m"),
            ("offset", "4KiB"),
            ("bssplit", "4k/50:16kb/50"),
        ] {
            apply_option(&mut s, k, Some(v)).unwrap();
        }
        assert_eq!((s.size, s.offset), (Some(1_000_000), 4096));
        assert_eq!(
            s.bs.read.entries.iter().map(|e| e.0).collect::<Vec<_>>(),
            [4000, 16000]
        );
        apply_option(&mut s, "kb_base", Some("1024")).unwrap();
        apply_option(&mut s, "size", Some("1m")).unwrap();
        assert_eq!(s.size, Some(1 << 20));
        let e = apply_option(&mut s, "kb_base", Some("512")).unwrap_err();
        assert_eq!(
            e.message,
            "option 'kb_base': '512' is not a unit base (valid: 1024, 1000)"
        );
    }

    /// fio's `fadvise_hint` values, and the advice each gives a pattern.
    #[test]
    fn fadvise_hint_gives_advice_by_pattern() {
        let advice = |rw: &str, hint: Option<&str>| {
            let mut s = JobSpec::default();
            apply_option(&mut s, "rw", Some(rw)).unwrap();
            if let Some(h) = hint {
                apply_option(&mut s, "fadvise_hint", Some(h)).unwrap();
            }
            s.read_advice()
        };
        assert_eq!(advice("randread", None), ReadAdvice::Random);
        assert_eq!(advice("randrw", Some("1")), ReadAdvice::Random);
        assert_eq!(advice("read", None), ReadAdvice::Sequential);
        assert_eq!(advice("write", None), ReadAdvice::Sequential);
        assert_eq!(advice("randread", Some("0")), ReadAdvice::Normal);
        assert_eq!(
            advice("randread", Some("sequential")),
            ReadAdvice::Sequential
        );
        assert_eq!(advice("read", Some("random")), ReadAdvice::Random);
        let e =
            apply_option(&mut JobSpec::default(), "fadvise_hint", Some("willneed")).unwrap_err();
        assert_eq!(
            e.message,
            "option 'fadvise_hint': 'willneed' is not an advice (valid: 0, 1, sequential, random)"
        );
    }

    #[test]
    fn iodepth_batch_submit_defaults_to_one_and_zero_means_the_depth() {
        let mut s = JobSpec::default();
        apply_option(&mut s, "iodepth", Some("16")).unwrap();
        assert_eq!(s.submit_batch(), 1);
        apply_option(&mut s, "iodepth_batch", Some("4")).unwrap();
        assert_eq!(s.submit_batch(), 4);
        apply_option(&mut s, "iodepth_batch_submit", Some("0")).unwrap();
        assert_eq!(s.submit_batch(), 16);
        // (More than the depth: the depth, as fio caps it.)
        apply_option(&mut s, "iodepth_batch_submit", Some("64")).unwrap();
        assert_eq!(s.submit_batch(), 16);
        let e = apply_option(&mut s, "iodepth_batch", Some("-1")).unwrap_err();
        assert!(e.message.contains("valid: 0 to 65536"), "{}", e.message);
    }

    #[test]
    fn a_full_queue_refills_at_iodepth_low_or_after_its_completions_batch() {
        let mut s = JobSpec::default();
        apply_option(&mut s, "iodepth", Some("16")).unwrap();
        // fio's defaults: every completion makes room.
        assert_eq!(s.refill_at(), 15);
        apply_option(&mut s, "iodepth_low", Some("4")).unwrap();
        assert_eq!(s.refill_at(), 4);
        // (0 or more than the depth: kept full, as fio has it.)
        apply_option(&mut s, "iodepth_low", Some("99")).unwrap();
        assert_eq!(s.refill_at(), 15);
        apply_option(&mut s, "iodepth_batch_complete", Some("6")).unwrap();
        assert_eq!(s.refill_at(), 10);
        apply_option(&mut s, "iodepth_low", Some("8")).unwrap();
        assert_eq!(s.refill_at(), 8);
        apply_option(&mut s, "iodepth_batch_complete_min", Some("64")).unwrap();
        assert_eq!(s.refill_at(), 0);
        apply_option(&mut s, "iodepth_batch_complete_min", Some("0")).unwrap();
        assert_eq!(s.refill_at(), 8);
        apply_option(&mut s, "iodepth", Some("1")).unwrap();
        assert_eq!(s.refill_at(), 0);
        // Reaping: at least the minimum, at most the maximum, which defaults to it.
        assert_eq!(JobSpec::default().reap_bounds(), (1, 1));
        apply_option(&mut s, "iodepth_batch_complete_min", Some("4")).unwrap();
        assert_eq!(s.reap_bounds(), (4, 4));
        apply_option(&mut s, "iodepth_batch_complete_max", Some("16")).unwrap();
        assert_eq!(s.reap_bounds(), (4, 16));
        apply_option(&mut s, "iodepth_batch_complete_max", Some("2")).unwrap();
        assert_eq!(s.reap_bounds(), (4, 4));
    }

    #[test]
    fn directories_give_each_instance_its_file_as_fio_names_them() {
        let mut a = JobSpec {
            name: "rr".into(),
            ..Default::default()
        };
        apply_option(&mut a, "directory", Some("/mnt/x:/mnt/y")).unwrap();
        apply_option(&mut a, "numjobs", Some("3")).unwrap();
        let mut b = JobSpec {
            name: "w".into(),
            ..Default::default()
        };
        apply_option(&mut b, "directory", Some("/mnt/x")).unwrap();
        apply_option(&mut b, "filename", Some("data:/abs/f")).unwrap();
        let mut specs = vec![a, b];
        apply_directories(&mut specs);
        assert_eq!(
            specs[0].filenames,
            ["/mnt/x/rr.0.0", "/mnt/y/rr.1.0", "/mnt/x/rr.2.0"]
        );
        assert_eq!(specs[0].numjobs, 1);
        assert_eq!(specs[1].filenames, ["/mnt/x/data", "/abs/f"]);
        let again = specs.clone();
        apply_directories(&mut specs);
        assert_eq!(specs, again);
        let mut c = JobSpec::default();
        let e = apply_option(&mut c, "directory", Some("")).unwrap_err();
        assert!(e.message.contains("valid: folders"), "{}", e.message);
        // Each instance its own file still: one job a file.
        let runs: Vec<Vec<usize>> = crate::JobInstance::expand(&specs[..1])
            .into_iter()
            .map(|i| i.files)
            .collect();
        assert_eq!(runs, [vec![0], vec![1], vec![2]]);
    }

    /// fio's verify_pattern: hex bytes and strings as buffer_pattern takes them, a decimal
    /// number in as few little-endian bytes as hold it; it turns verify on; verify=pattern
    /// needs it; fio's %o is refused by name.
    #[test]
    fn verify_pattern_takes_fios_spellings() {
        let p = |v: &str| parse_verify_pattern(v);
        assert_eq!(p("0xdeadbeef").unwrap(), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("1234").unwrap(), [0xd2, 0x04]);
        assert_eq!(p("7").unwrap(), [7]);
        assert_eq!(p("4294967295").unwrap(), [0xff; 4]);
        assert!(p("4294967296").unwrap_err().contains("more than 4 bytes"));
        assert!(p("\"ab\"").is_ok());
        assert!(p("0xab%o").unwrap_err().contains("%o"));
        let mut s = spec_from(&[("filename", "f"), ("verify_pattern", "0xab")]);
        assert!(s.verify && !s.verify_pattern_only);
        apply_option(&mut s, "verify", Some("pattern")).unwrap();
        assert!(s.verify_pattern_only);
        s.validate().unwrap();
        let mut t = spec_from(&[("filename", "f"), ("verify", "pattern")]);
        let e = t.validate().unwrap_err();
        assert!(e.message.contains("valid: verify_pattern="), "{e}");
        apply_option(&mut t, "verify", Some("crc32c")).unwrap();
        assert!(!t.verify_pattern_only);
    }

    /// fio 3.33's verify_interval rules: as given when it divides the write sizes; no larger
    /// than the smallest write (or, for a reader, read) size; the sizes' gcd when it does
    /// not divide them; the smallest write size when sizes vary and it is not given; one
    /// header a block otherwise. A span shorter than a header, asked for, is refused.
    #[test]
    fn verify_interval_is_set_as_fios() {
        let span = |o: &[(&str, &str)]| {
            let mut v = vec![("filename", "f"), ("verify", "crc32c")];
            v.extend_from_slice(o);
            spec_from(&v).verify_span()
        };
        assert_eq!(span(&[("bs", "4k")]), None);
        assert_eq!(span(&[("bs", "4k"), ("verify_interval", "0")]), None);
        assert_eq!(span(&[("bs", "4k"), ("verify_interval", "1k")]), Some(1024));
        assert_eq!(
            span(&[("bs", "4k"), ("verify_interval", "16k")]),
            Some(4096)
        );
        assert_eq!(
            span(&[
                ("bs", "4k,16k"),
                ("rw", "randrw"),
                ("verify_interval", "8k")
            ]),
            Some(4096),
            "no larger than the smallest read"
        );
        assert_eq!(span(&[("bsrange", "4k-16k")]), Some(4096));
        assert_eq!(
            span(&[("bsrange", "6k-16k"), ("verify_interval", "4k")]),
            Some(2048),
            "4k divides neither 6k: gcd(6k, 16k)"
        );
        assert_eq!(span(&[("bs", "4k"), ("verify_interval", "1k")]), Some(1024));
        assert_eq!(
            spec_from(&[("filename", "f"), ("verify_interval", "1k")]).verify_span(),
            None
        );
        let mut t = spec_from(&[
            ("filename", "f"),
            ("verify", "crc32c"),
            ("verify_interval", "32"),
        ]);
        let e = t.validate().unwrap_err();
        assert!(
            e.message.contains("valid: verify_interval=64 or more"),
            "{e}"
        );
        apply_option(&mut t, "verify_interval", Some("512")).unwrap();
        t.validate().unwrap();
    }

    /// An interval that does not divide the write sizes falls, as in fio 3.33, to their
    /// greatest common divisor; when that is too short for a header, the refusal names the
    /// interval asked for and the span it fell to, not just the fallen span (fio itself
    /// stops the job with "Blocksize too small").
    #[test]
    fn verify_interval_fallen_to_gcd_names_both_spans() {
        let t = spec_from(&[
            ("filename", "f"),
            ("rw", "write"),
            ("bsrange", "512-70000"),
            ("verify", "crc32c"),
            ("verify_interval", "512"),
        ]);
        assert_eq!(t.verify_span(), Some(16));
        let e = t.validate().unwrap_err();
        assert!(
            e.message.contains("verify_interval=512 does not divide"),
            "{e}"
        );
        assert!(e.message.contains("512 to 70000 bytes"), "{e}");
        assert!(
            e.message.contains("greatest common divisor, 16 bytes"),
            "{e}"
        );
        assert!(e.message.contains("e.g. bsrange=512-69632"), "{e}");
        assert!(!e.message.contains("verify_interval=64 or more"), "{e}");
    }

    /// fio 3.33's checks of dedupe_mode=working_set: a size to take the share of, one file a
    /// job, and the two percentages adding up to 100 or less; the set is that share of the
    /// size in the smallest write size.
    #[test]
    fn dedupe_working_set_is_checked_as_fio() {
        let base = [
            ("filename", "f"),
            ("rw", "write"),
            ("bs", "4k"),
            ("dedupe_percentage", "50"),
            ("dedupe_mode", "working_set"),
        ];
        let check = |o: &[(&str, &str)]| {
            let mut v = base.to_vec();
            v.extend_from_slice(o);
            spec_from(&v).validate().err().map(|e| e.message)
        };
        assert!(check(&[]).unwrap().contains("valid: size="));
        assert_eq!(check(&[("size", "64m")]), None);
        assert!(check(&[("size", "64m"), ("filename", "a:b")])
            .unwrap()
            .contains("one file a job"));
        let sum = check(&[("size", "64m"), ("dedupe_working_set_percentage", "60")]).unwrap();
        assert!(
            sum.contains("dedupe_percentage=50 cannot be reached"),
            "{sum}"
        );
        let s = spec_from(&[&base[..], &[("size", "64m")]].concat());
        assert_eq!(s.dedupe_set_blocks(), (64 << 20) / 100 * 5 / 4096);
        assert!(matches!(
            apply_option(&mut s.clone(), "dedupe_mode", Some("sometimes")),
            Err(e) if e.message.contains("valid: repeat, working_set")
        ));
    }

    /// fio's NUMA options: node lists as CPU lists are written, and the memory policies by
    /// fio's names, each with the nodes it takes (none, one, or a list); wrong ones in one
    /// line naming the valid forms.
    #[test]
    fn numa_options_parse_as_fios() {
        let s = spec_from(&[
            ("numa_cpu_nodes", "2,0-1"),
            ("numa_mem_policy", "bind:0-1,3"),
        ]);
        assert_eq!(s.numa_cpu_nodes, [0, 1, 2]);
        assert_eq!(s.numa_mem_policy, Some(MemPolicy::Bind(vec![0, 1, 3])));
        for (v, p) in [
            ("default", MemPolicy::Default),
            ("local", MemPolicy::Local),
            ("prefer:1", MemPolicy::Prefer(1)),
            ("interleave:0-3", MemPolicy::Interleave(vec![0, 1, 2, 3])),
        ] {
            assert_eq!(MemPolicy::parse(v), Ok(p.clone()));
            assert_eq!(MemPolicy::parse(&p.name()), Ok(p), "{v} as fio writes it");
        }
        for (v, why) in [
            ("prefer:0-1", "takes one node"),
            ("bind", "needs its nodes"),
            ("local:0", "takes no nodes"),
            ("spread:0", "not a memory policy"),
            ("bind:x", "not a node or a range"),
        ] {
            let e = MemPolicy::parse(v).unwrap_err();
            assert!(e.contains(why) && e.contains("valid:"), "{v}: {e}");
        }
        assert!(parse_node_list("3-1")
            .unwrap_err()
            .contains("runs backwards"));
        assert!(parse_node_list("1024").is_err());
    }

    /// Which jobs of several block sizes verify can check: those whose requests are whole
    /// spans on span boundaries, writing (checked by their read-backs) or only reading.
    #[test]
    fn verify_takes_several_sizes_in_whole_spans() {
        let why = |o: &[(&str, &str)]| {
            let mut v = vec![("filename", "f"), ("verify", "crc32c")];
            v.extend_from_slice(o);
            spec_from(&v).verify_sizes_conflict()
        };
        assert_eq!(why(&[("bs", "4k")]), None);
        assert_eq!(why(&[("rw", "randwrite"), ("bsrange", "4k-64k")]), None);
        assert_eq!(why(&[("rw", "write"), ("bssplit", "4k/50:12k/50")]), None);
        assert_eq!(why(&[("rw", "randread"), ("bsrange", "4k-64k")]), None);
        assert_eq!(
            why(&[("rw", "write"), ("bs", "4k,16k")]),
            None,
            "reads are read-backs"
        );
        let mixed = why(&[("rw", "randrw"), ("bsrange", "4k-16k")]).unwrap();
        assert!(
            mixed.contains("job that reads and writes (rw=randrw)"),
            "{mixed}"
        );
        let unaligned = why(&[
            ("rw", "randwrite"),
            ("bsrange", "4k-16k"),
            ("bs_unaligned", "1"),
        ])
        .unwrap();
        assert!(
            unaligned.contains("not a whole number of 4096-byte spans"),
            "{unaligned}"
        );
        let ba = why(&[
            ("rw", "randwrite"),
            ("bsrange", "4k-16k"),
            ("blockalign", "6k"),
        ]);
        assert!(ba.unwrap().contains("blockalign=6144"));
        // 4k and 6k: 2 KiB spans, whole in both.
        assert_eq!(
            why(&[("rw", "randwrite"), ("bssplit", "4k/50:6k/50")]),
            None
        );
    }

    /// `nrfiles` gives each job that many files of its own in its folder, named and placed
    /// as fio 3.33 names and places them (`directory=/d1:/d2 nrfiles=3 numjobs=2`: j.0.0 to
    /// j.0.2 in /d1, j.1.0 to j.1.2 in /d2); each job runs over its own files.
    #[test]
    fn nrfiles_gives_each_job_its_files() {
        let mut a = JobSpec {
            name: "j".into(),
            ..Default::default()
        };
        for (k, v) in [("directory", "/d1:/d2"), ("nrfiles", "3"), ("numjobs", "2")] {
            apply_option(&mut a, k, Some(v)).unwrap();
        }
        let mut specs = vec![a];
        apply_directories(&mut specs);
        assert_eq!(
            specs[0].filenames,
            [
                "/d1/j.0.0",
                "/d1/j.0.1",
                "/d1/j.0.2",
                "/d2/j.1.0",
                "/d2/j.1.1",
                "/d2/j.1.2"
            ]
        );
        let runs: Vec<Vec<usize>> = crate::JobInstance::expand(&specs)
            .into_iter()
            .map(|i| i.files)
            .collect();
        assert_eq!(runs, [vec![0, 1, 2], vec![3, 4, 5]]);
        // job_per_file=1 makes each of them a job.
        let mut b = JobSpec::default();
        for (k, v) in [("directory", "/d"), ("nrfiles", "2"), ("job_per_file", "1")] {
            apply_option(&mut b, k, Some(v)).unwrap();
        }
        let mut specs = vec![b];
        apply_directories(&mut specs);
        assert_eq!(crate::JobInstance::expand(&specs).len(), 2);
        // Sizes: `size` shared out among a job's files, or `filesize` each.
        let mut c = JobSpec::default();
        apply_option(&mut c, "size", Some("8m")).unwrap();
        assert_eq!(c.per_file(2).size, Some(4 << 20));
        assert_eq!(c.per_file(1), c);
        apply_option(&mut c, "filesize", Some("1m")).unwrap();
        assert_eq!(c.per_file(2).size, Some(1 << 20));
        let e = apply_option(&mut c, "filesize", Some("1m-4m")).unwrap_err();
        assert!(e.message.contains("valid: one size"), "{}", e.message);
        // filename_format: fio's $ names; without a directory, the working folder.
        let mut f = spec_from(&[
            ("name", "w"),
            ("filename_format", "shared.$filenum"),
            ("nrfiles", "2"),
            ("numjobs", "2"),
        ]);
        f.validate().unwrap();
        let mut specs = vec![f.clone()];
        apply_directories(&mut specs);
        assert_eq!(
            specs[0].filenames,
            ["./shared.0", "./shared.1", "./shared.0", "./shared.1"]
        );
        apply_option(&mut f, "filename_format", Some("$jobname-$jobnum/$filenum")).unwrap();
        apply_option(&mut f, "directory", Some("/d")).unwrap();
        let mut specs = vec![f];
        apply_directories(&mut specs);
        assert_eq!(
            specs[0].filenames,
            ["/d/w-0/0", "/d/w-0/1", "/d/w-1/0", "/d/w-1/1"]
        );
        // openfiles: a job's files are all open at once, so fewer than a job has is refused,
        // before the folder's files are named and after.
        let mut o = spec_from(&[("directory", "/d"), ("nrfiles", "8"), ("openfiles", "4")]);
        let e = o.validate().unwrap_err();
        assert!(e.message.contains("valid: openfiles=8 or more"), "{e}");
        o.openfiles = 8;
        o.validate().unwrap();
        let mut specs = vec![o];
        apply_directories(&mut specs);
        specs[0].validate().unwrap();
        specs[0].openfiles = 7;
        assert!(specs[0].validate().is_err());
        let l = spec_from(&[("filename", "a:b:c"), ("openfiles", "2")]);
        assert!(l.validate().is_err());
        let l = spec_from(&[
            ("filename", "a:b:c"),
            ("openfiles", "2"),
            ("job_per_file", "1"),
        ]);
        l.validate().unwrap();
    }

    #[test]
    fn polling_options_are_io_urings_and_hipri_needs_direct_io() {
        let job = |opts: &[(&str, &str)]| {
            let mut s = JobSpec {
                filenames: vec!["f".into()],
                ..Default::default()
            };
            for (k, v) in opts {
                apply_option(&mut s, k, Some(v)).unwrap();
            }
            s.validate().map(|_| ()).map_err(|e| e.message)
        };
        assert_eq!(
            job(&[("sqthread_poll", "1"), ("sqthread_poll_cpu", "1")]),
            Ok(())
        );
        assert_eq!(job(&[("hipri", "1"), ("direct", "1")]), Ok(()));
        assert_eq!(
            job(&[("hipri", "1")]),
            Err("job 'job': hipri polls the device for completions, which only direct I/O has (valid: direct=1 with hipri)".into())
        );
        assert_eq!(
            job(&[("sqthread_poll", "1"), ("ioengine", "libaio")]),
            Err(
                "job 'job': sqthread_poll is io_uring's (valid: ioengine=io_uring, not libaio)"
                    .into()
            )
        );
        assert_eq!(
            job(&[("sqthread_poll", "1"), ("hipri", "1"), ("direct", "1"), ("ioengine", "psync")]),
            Err("job 'job': sqthread_poll and hipri are io_uring's (valid: ioengine=io_uring, not psync)".into())
        );
    }

    #[test]
    fn cpu_sets_parse_as_fio_writes_them() {
        assert_eq!(
            parse_cpu_list("0-3,6, 8-9,2").unwrap(),
            [0, 1, 2, 3, 6, 8, 9]
        );
        assert_eq!(parse_cpu_list("5").unwrap(), [5]);
        assert_eq!(parse_cpu_mask("0x5").unwrap(), [0, 2]);
        assert_eq!(parse_cpu_mask("6").unwrap(), [1, 2]);
        for bad in ["", "a", "3-1", "1-", "1024", "0,,1"] {
            assert!(parse_cpu_list(bad).unwrap_err().contains("valid:"), "{bad}");
        }
        for bad in ["0", "0xg", "-1"] {
            assert!(parse_cpu_mask(bad).unwrap_err().contains("valid:"), "{bad}");
        }
        let mut s = JobSpec::default();
        apply_option(&mut s, "cpus_allowed", Some("1-2")).unwrap();
        apply_option(&mut s, "cpus_allowed_policy", Some("split")).unwrap();
        assert_eq!((s.cpus.as_slice(), s.cpus_split), (&[1, 2][..], true));
        let e = apply_option(&mut s, "cpus_allowed_policy", Some("spread")).unwrap_err();
        assert!(e.message.contains("valid: shared, split"), "{}", e.message);
    }

    #[test]
    fn fixedbufs_and_registerfiles_are_on_unless_turned_off() {
        let mut s = JobSpec::default();
        assert!(s.fixedbufs && s.registerfiles);
        apply_option(&mut s, "fixedbufs", Some("0")).unwrap();
        apply_option(&mut s, "registerfiles", Some("0")).unwrap();
        assert!(!s.fixedbufs && !s.registerfiles);
        // (As fio's flags: given alone, they are on.)
        apply_option(&mut s, "fixedbufs", None).unwrap();
        assert!(s.fixedbufs);
        let e = apply_option(&mut s, "registerfiles", Some("maybe")).unwrap_err();
        assert!(e.message.contains("not a boolean"), "{}", e.message);
    }

    #[test]
    fn options_apply() {
        let mut s = JobSpec::default();
        apply_option(&mut s, "rw", Some("randrw")).unwrap();
        apply_option(&mut s, "bs", Some("8k")).unwrap();
        apply_option(&mut s, "rwmixwrite", Some("30")).unwrap();
        apply_option(&mut s, "time_based", None).unwrap();
        assert_eq!(s.rw, RwMode::RandRw);
        assert_eq!(s.bs, BlockSizes::fixed(8192));
        assert_eq!(s.rwmixread, 70);
        assert!(s.time_based);
    }

    #[test]
    fn bad_options_say_what_is_valid() {
        let mut s = JobSpec::default();
        let e = apply_option(&mut s, "rw", Some("sideways")).unwrap_err();
        assert!(e.message.contains("valid: read, write"), "{e}");
        let e = apply_option(&mut s, "frobnicate", Some("1")).unwrap_err();
        assert!(e.message.contains("unknown option 'frobnicate'"), "{e}");
        // A slip gets the names it was near; a fio option raidlab lacks is named as such.
        let near = |k: &str| {
            apply_option(&mut JobSpec::default(), k, Some("1"))
                .unwrap_err()
                .message
        };
        assert_eq!(
            near("iodepht"),
            "unknown option 'iodepht' (valid: the options `raidlab run --help` lists; nearest: iodepth)"
        );
        assert!(
            near("directroy").ends_with("nearest: directory)"),
            "{}",
            near("directroy")
        );
        assert_eq!(
            near("create_on_open"),
            "option 'create_on_open' is fio's and raidlab does not run it (valid: the options `raidlab run --help` lists)"
        );
        assert!(FIO_ONLY.iter().all(|k| !OPTION_NAMES.contains(k)));
        let e = apply_option(&mut s, "iodepth", Some("0")).unwrap_err();
        assert!(e.message.contains("valid: 1 to 65536"), "{e}");
    }

    /// fio's `continue_on_error` names and `ignore_error` lists: which errors a job goes on
    /// past (EIO and EILSEQ by default, a kind's list replacing them).
    #[test]
    fn continue_on_error_and_ignore_error_name_the_errors_gone_past() {
        let policy = |opts: &[(&str, &str)]| {
            let mut s = JobSpec::default();
            for (k, v) in opts {
                apply_option(&mut s, k, Some(v)).unwrap();
            }
            s.on_error
        };
        let (r, w, v) = (ErrorKinds::READ, ErrorKinds::WRITE, ErrorKinds::VERIFY);
        assert!(!policy(&[]).counts());
        assert!(!policy(&[("continue_on_error", "none")]).continues_past(r, 5));
        let io = policy(&[("continue_on_error", "io")]);
        assert!(io.counts() && io.continues_past(r, 5) && io.continues_past(w, 84));
        assert!(!io.continues_past(w, 28) && !io.continues_past(v, 5));
        let all = policy(&[("continue_on_error", "1")]);
        assert!(all.continues_past(v, 84));
        let listed = policy(&[("continue_on_error", "all"), ("ignore_error", ",ENOSPC:22")]);
        assert!(listed.continues_past(r, 5), "reads keep the defaults");
        assert!(listed.continues_past(w, 28) && listed.continues_past(w, 22));
        assert!(!listed.continues_past(w, 5), "a list replaces the defaults");
        for (k, val, want) in [
            (
                "continue_on_error",
                "sometimes",
                "valid: none, read, write, io, verify, all",
            ),
            (
                "ignore_error",
                "EWHAT",
                "valid: a positive number or a name",
            ),
            ("ignore_error", "-3", "valid: a positive number or a name"),
            ("ignore_error", "EIO,EIO,EIO,EIO", "valid: at most three"),
        ] {
            let e = apply_option(&mut JobSpec::default(), k, Some(val)).unwrap_err();
            assert!(e.message.contains(want), "{k}={val}: {e}");
        }
    }

    /// fio's `rw=PATTERN:N`: a count after a random pattern, a signed size after a
    /// sequential one; a later `rw` without one takes it back; bad values say what is valid.
    #[test]
    fn rw_takes_fios_offset_modifier() {
        let mut s = JobSpec::default();
        apply_option(&mut s, "rw", Some("randread:8")).unwrap();
        assert_eq!((s.rw, s.rw_run, s.rw_hole), (RwMode::RandRead, 8, 0));
        apply_option(&mut s, "rw", Some("randrw:2k")).unwrap();
        assert_eq!((s.rw, s.rw_run), (RwMode::RandRw, 2048));
        apply_option(&mut s, "rw", Some("write:4k")).unwrap();
        assert_eq!((s.rw, s.rw_run, s.rw_hole), (RwMode::Write, 1, 4096));
        apply_option(&mut s, "readwrite", Some("read:-8k")).unwrap();
        assert_eq!((s.rw, s.rw_hole), (RwMode::Read, -8192));
        apply_option(&mut s, "rw", Some("randread")).unwrap();
        assert_eq!((s.rw_run, s.rw_hole), (1, 0));
        assert!(!s.rw_identical);
        apply_option(&mut s, "rw_sequencer", Some("identical")).unwrap();
        assert!(s.rw_identical);
        for (k, v, want) in [
            ("rw", "randread:0", "valid: requests per random offset"),
            ("rw", "randread:x", "valid: requests per random offset"),
            ("rw", "randread:5g", "valid: requests per random offset"),
            ("rw", "write:4q", "valid: bytes skipped after each request"),
            ("rw", "sideways:4k", "valid: read, write"),
            ("rw_sequencer", "backwards", "valid: sequential, identical"),
        ] {
            let e = apply_option(&mut JobSpec::default(), k, Some(v)).unwrap_err();
            assert!(e.message.contains(want), "{k}={v}: {e}");
        }
        // Verify refuses skips that would let blocks of different passes overlap.
        let mut v = JobSpec {
            filenames: vec!["f".into()],
            ..Default::default()
        };
        apply_option(&mut v, "verify", Some("crc32c")).unwrap();
        apply_option(&mut v, "rw", Some("write:8k")).unwrap();
        v.validate().unwrap();
        apply_option(&mut v, "rw", Some("write:2k")).unwrap();
        let e = v.validate().unwrap_err();
        assert!(e.message.contains("rw=write:2048"), "{e}");
    }

    /// fio 3.33's sizes of reads and writes for each `bs` (rw=rw): `64k,` and `64k,,16k`
    /// write 4 KiB blocks (an empty size is the default), `,64k` reads 4 KiB and writes
    /// 64 KiB, `64k,8k,16k` (trims third) reads 64 KiB and writes 8 KiB. raidlab wrote
    /// 64 KiB for `64k,` and refused the third size with "'8k,16k' has unknown unit".
    #[test]
    fn bs_takes_fios_three_sizes_and_an_empty_one_is_the_default() {
        for (bs, read, write) in [
            ("64k", 65536, 65536),
            ("64k,", 65536, 4096),
            ("64k,,16k", 65536, 4096),
            (",64k", 4096, 65536),
            ("64k,8k", 65536, 8192),
            ("64k,8k,16k", 65536, 8192),
        ] {
            let mut s = JobSpec::default();
            apply_option(&mut s, "bs", Some(bs)).unwrap();
            assert_eq!(
                (s.bs.read.min(), s.bs.write.min()),
                (read, write),
                "bs={bs}"
            );
        }
        let mut s = JobSpec::default();
        let e = apply_option(&mut s, "bs", Some("4k,8k,16k,32k")).unwrap_err();
        assert!(e.message.contains("valid: at most three"), "{e}");
        let e = apply_option(&mut s, "bs", Some("4k,8k,0")).unwrap_err();
        assert!(e.message.contains("at least 1 byte"), "{e}");
    }

    /// A list option given no part at all (`bs=`, `bs=,`, `rate=,,`) is refused in one line,
    /// as fio 3.33 refuses it (fio: failed parsing bs=,); raidlab ran such a job with the
    /// default as if it had been asked for. One empty part among given ones stays fio's form.
    #[test]
    fn list_options_refuse_a_value_with_no_part() {
        let opts = [
            ("bs", "64k,"),
            ("blocksize", ",64k"),
            ("bsrange", "4k-8k,"),
            ("blocksize_range", ",4k-8k"),
            ("bssplit", "4k/50:8k/50,"),
            ("percentage_random", "50,"),
            ("rate", "1m,"),
            ("rate_min", ",1m"),
            ("ratemin", "1m,,1m"),
            ("rate_iops", ",100"),
            ("rate_iops_min", "100,"),
            ("ignore_error", ",EIO"),
        ];
        for (k, with_one_empty) in opts {
            apply_option(&mut JobSpec::default(), k, Some(with_one_empty))
                .unwrap_or_else(|e| panic!("{k}={with_one_empty}: {e}"));
            for (v, want) in [
                ("", "empty value (valid: one to three "),
                (" ", "empty value (valid: one to three "),
                (",", "',' gives no "),
                (",,", "',,' gives no "),
                (" , ", "',' gives no "),
            ] {
                let e = apply_option(&mut JobSpec::default(), k, Some(v))
                    .expect_err(&format!("{k}={v:?} is refused"))
                    .message;
                assert!(
                    e.starts_with(&format!("option '{k}': {want}")) && !e.contains('\n'),
                    "{k}={v:?}: {e}"
                );
                assert!(e.contains("for reads, writes and "), "{k}={v:?}: {e}");
            }
        }
        // (Nor does a list of errors with no error in it say anything.)
        let e = apply_option(&mut JobSpec::default(), "ignore_error", Some(":")).unwrap_err();
        assert!(e.message.contains("':' names no error"), "{e}");
        // (A refused value leaves the one the job had.)
        let mut s = JobSpec::default();
        apply_option(&mut s, "rate", Some("1m")).unwrap();
        assert!(apply_option(&mut s, "rate", Some(",")).is_err());
        assert_eq!(s.pace.rate, [1 << 20; 3]);
    }

    /// fio 3.33's bssplit with an empty list: that direction keeps the sizes it has (with
    /// bs=16k,32k and bssplit=4k/50:8k/50, fio writes 32 KiB blocks); raidlab refused it
    /// with "bssplit weights in '' add up to 0%".
    #[test]
    fn bssplit_leaves_a_direction_with_an_empty_list_as_it_is() {
        let split = BsDist::parse_split("4k/50:8k/50", 1024).unwrap();
        let with = |v: &str| {
            let mut s = JobSpec::default();
            apply_option(&mut s, "bs", Some("16k,32k,64k")).unwrap();
            apply_option(&mut s, "bssplit", Some(v)).unwrap();
            (s.bs.read, s.bs.write, s.bs.trim)
        };
        let (k16, k32, k64) = (
            BsDist::fixed(16384),
            BsDist::fixed(32768),
            BsDist::fixed(65536),
        );
        assert_eq!(
            with("4k/50:8k/50,"),
            (split.clone(), k32.clone(), k64.clone())
        );
        assert_eq!(
            with(",4k/50:8k/50"),
            (k16.clone(), split.clone(), split.clone())
        );
        assert_eq!(
            with("4k/50:8k/50,,4k/50:8k/50"),
            (split.clone(), k32.clone(), split.clone())
        );
        assert_eq!(with(",,4k/50:8k/50"), (k16, k32, split.clone()));
        assert_eq!(with("4k/50:8k/50"), (split.clone(), split.clone(), split));
    }

    /// fio's forms and units: `rate=1m,500k` reads then writes, `rate=,500k` writes only,
    /// `rate=500k,` reads only; `thinktime` bare is µs, `startdelay` bare is seconds.
    #[test]
    fn pacing_options_take_fios_forms_and_units() {
        let mut s = JobSpec::default();
        for (k, v) in [
            ("rate", "1m,500k"),
            ("rate_iops", ",200"),
            ("rate_min", "10k,"),
            ("rate_process", "poisson"),
            ("rate_cycle", "250"),
            ("thinktime", "50"),
            ("thinktime_spin", "2ms"),
            ("thinktime_blocks", "8"),
            ("thinktime_blocks_type", "issue"),
            ("thinktime_iotime", "9"),
            ("startdelay", "1-2500ms"),
            ("fdatasync", "32"),
            ("sync", "dsync"),
        ] {
            apply_option(&mut s, k, Some(v)).unwrap();
        }
        let p = &s.pace;
        // (Trims take the writes' value unless a third is given.)
        assert_eq!(p.rate, [1 << 20, 500 << 10, 500 << 10]);
        assert_eq!(p.rate_iops, [0, 200, 200]);
        assert_eq!(p.rate_min, [10 << 10, 0, 0]);
        assert_eq!(p.rate_process, RateProcess::Poisson);
        assert_eq!(p.rate_cycle_ms, 250);
        assert_eq!(p.thinktime_ns, 50_000);
        assert_eq!(p.thinktime_spin_ns, 2_000_000);
        assert_eq!((p.thinktime_blocks, p.thinktime_blocks_set), (8, true));
        assert_eq!(p.thinktime_blocks_type, ThinkBlocks::Issue);
        assert_eq!(p.thinktime_iotime_ns, 9_000_000_000);
        assert_eq!(p.startdelay_ns, (1_000_000_000, 2_500_000_000));
        assert_eq!((s.fsync, s.fdatasync, s.sync), (0, 32, SyncIo::Dsync));
        for (k, v, want) in [
            ("rate_process", "bursty", "valid: linear, poisson"),
            ("rate", "1m,2m,3m,4m", "valid: at most three"),
            ("rate", "fast", "not a size"),
            ("rate_iops", "1k", "not a whole number"),
            ("thinktime_blocks_type", "never", "valid: complete, issue"),
            ("startdelay", "5-1", "runs backwards"),
            ("sync", "always", "valid: none, 0, sync, 1, dsync"),
            ("rate_cycle", "0", "at least 1 ms"),
        ] {
            let e = apply_option(&mut s, k, Some(v)).unwrap_err().message;
            assert!(
                e.starts_with(&format!("option '{k}'")) && e.contains(want),
                "{e}"
            );
        }
        let e = apply_option(&mut s, "thinktyme", Some("1"))
            .unwrap_err()
            .message;
        assert!(e.ends_with("nearest: thinktime)"), "{e}");
        // A minimum above its cap is refused as a whole job.
        let mut s = JobSpec {
            filenames: vec!["f".into()],
            ..Default::default()
        };
        apply_option(&mut s, "rate", Some("1m")).unwrap();
        apply_option(&mut s, "rate_min", Some("2m")).unwrap();
        let e = s.validate().unwrap_err().message;
        assert!(
            e.contains("rate_min=2097152 for reads is above its cap"),
            "{e}"
        );
    }

    #[test]
    fn bssplit_fills_the_remainder() {
        let d = BsDist::parse_split("4k/10:64k/50:32k", 1024).unwrap();
        assert_eq!(d.entries, vec![(4096, 10), (65536, 50), (32768, 40)]);
        assert!(BsDist::parse_split("4k/60:8k/60", 1024).is_err());
        assert!(BsDist::parse_split("4k/60:8k/30", 1024).is_err());
        // An empty or 0 weight is a missing one, as fio 3.33 reads them: 4k/50:64k/ and
        // 4k/50:64k/0 split evenly (both were refused); 4k/100:64k/0 leaves 64k nothing.
        for text in ["4k/50:64k/", "4k/50:64k/0", "4k/50:64k"] {
            let d = BsDist::parse_split(text, 1024).unwrap();
            assert_eq!(d.entries, vec![(4096, 50), (65536, 50)], "{text}");
        }
        let d0 = BsDist::parse_split("4k/100:64k/0", 1024).unwrap();
        assert_eq!(d0.entries, vec![(4096, 100)]);
        assert_eq!(
            BsDist::parse_split("8k/0", 1024).unwrap().entries,
            vec![(8192, 100)]
        );
        assert_eq!(d.pick(0), 4096);
        assert_eq!(d.pick(10), 65536);
        assert_eq!(d.pick(99), 32768);
    }

    /// stonewall starts a stonewall group and a reporting group; new_group only the latter
    /// (fio's groupid 0, 1, 1, 2 for a, b(new_group), c, d(stonewall)).
    #[test]
    fn new_group_starts_a_reporting_group_only() {
        let mk = |opts: &[&str]| {
            let mut s = JobSpec::default();
            for o in opts {
                apply_option(&mut s, o, None).unwrap();
            }
            s
        };
        let specs = [
            mk(&["new_group"]),
            mk(&["new_group"]),
            mk(&[]),
            mk(&["stonewall"]),
            mk(&["stonewall", "new_group"]),
            // (fio's other name for stonewall.)
            mk(&["wait_for_previous"]),
        ];
        assert_eq!(
            job_groups(&specs),
            [(0, 0), (0, 1), (0, 1), (1, 2), (2, 3), (3, 4)]
        );
    }

    /// `prio`, `prioclass` and `nice` within their ranges; the I/O priority is class above
    /// level, a level alone (or with class 0) best effort's as fio makes it.
    #[test]
    fn priorities_take_fios_ranges_and_encoding() {
        let mut s = JobSpec::default();
        assert_eq!(s.priority.ioprio(), None);
        apply_option(&mut s, "prio", Some("6")).unwrap();
        assert_eq!(s.priority.ioprio(), Some(2 << 13 | 6));
        apply_option(&mut s, "prioclass", Some("3")).unwrap();
        assert_eq!(s.priority.ioprio(), Some(3 << 13 | 6));
        apply_option(&mut s, "prioclass", Some("0")).unwrap();
        assert_eq!(s.priority.ioprio(), Some(2 << 13 | 6));
        apply_option(&mut s, "nice", Some("-20")).unwrap();
        assert_eq!(s.priority.nice, Some(-20));
        for (k, v, valid) in [
            ("prio", "8", "valid: 0, served first, to 7"),
            (
                "prioclass",
                "4",
                "valid: 0 none, 1 realtime, 2 best effort, 3 idle",
            ),
            ("nice", "20", "valid: -20 to 19"),
            ("nice", "x", "valid: -20 to 19"),
        ] {
            let e = apply_option(&mut s, k, Some(v)).unwrap_err().message;
            assert!(
                e.starts_with(&format!("option '{k}': '{v}' is not")) && e.contains(valid),
                "{e}"
            );
        }
    }

    /// fio's `exitall` holds for every job's end once any job gives it, each job's own
    /// `exit_what` saying what its end stops; `exitall_on_error` only for the job that gives
    /// it, and only when it ends with an error.
    #[test]
    fn exitall_holds_for_every_job_and_exitall_on_error_for_its_own() {
        let job = |opts: &[(&str, Option<&str>)]| {
            let mut s = JobSpec::default();
            for (k, v) in opts {
                apply_option(&mut s, k, *v).unwrap();
            }
            s
        };
        let specs = [
            job(&[("exit_what", Some("all"))]),
            job(&[("exitall", None)]),
            job(&[
                ("exitall_on_error", Some("1")),
                ("exit_what", Some("stonewall")),
            ]),
        ];
        assert_eq!(exit_scope(&specs, 0, false), Some(ExitWhat::All));
        assert_eq!(exit_scope(&specs, 1, false), Some(ExitWhat::Group));
        assert_eq!(exit_scope(&specs[2..], 0, false), None);
        assert_eq!(exit_scope(&specs[2..], 0, true), Some(ExitWhat::Stonewall));
        assert_eq!(exit_scope(&specs[..1], 0, true), None);
        let e = apply_option(&mut JobSpec::default(), "exit_what", Some("some")).unwrap_err();
        assert_eq!(
            e.message,
            "option 'exit_what': 'some' is not a set of jobs to stop (valid: group, stonewall, all)"
        );
    }

    /// `unified_rw_reporting` takes fio's names and numbers; anything else says what is
    /// valid.
    #[test]
    fn unified_rw_reporting_takes_fios_values() {
        let mut s = JobSpec::default();
        assert!(s.unified_rw_reporting.is_none());
        for (v, want) in [
            ("mixed", UnifiedRw::Mixed),
            ("0", UnifiedRw::None),
            ("2", UnifiedRw::Both),
            ("1", UnifiedRw::Mixed),
            ("both", UnifiedRw::Both),
            ("none", UnifiedRw::None),
        ] {
            apply_option(&mut s, "unified_rw_reporting", Some(v)).unwrap();
            assert_eq!(s.unified_rw_reporting, want, "{v}");
        }
        let e = apply_option(&mut s, "unified_rw_reporting", Some("yes")).unwrap_err();
        assert_eq!(
            e.message,
            "option 'unified_rw_reporting': 'yes' is not a way to report directions (valid: none or 0, mixed or 1, both or 2)"
        );
    }

    /// When the bandwidth and IOPS samples are taken, as fio 3.33 takes them (checked against
    /// its JSON's `bw_samples` and logs, `crates/raidlab/tests/run_fio_compat.rs`).
    #[test]
    fn samples_follow_the_logs() {
        let every = |opts: &[(&str, &str)]| {
            let mut s = JobSpec::default();
            for (k, v) in opts {
                apply_option(&mut s, k, Some(v)).unwrap();
            }
            s.sample_every()
        };
        // No log: every bw_avg_time / iops_avg_time (500 ms unless given).
        assert_eq!(every(&[]), [Some(500), Some(500)]);
        assert_eq!(every(&[("log_avg_msec", "100")]), [Some(500), Some(500)]);
        assert_eq!(every(&[("iopsavgtime", "250")]), [Some(500), Some(250)]);
        // A log of every I/O: a sample at every completion, whatever bw_avg_time says.
        assert_eq!(every(&[("write_bw_log", "b")]), [None, Some(500)]);
        assert_eq!(
            every(&[("write_bw_log", "b"), ("bw_avg_time", "200")]),
            [None, Some(500)]
        );
        assert_eq!(
            every(&[("write_bw_log", "b"), ("write_iops_log", "i")]),
            [None, None]
        );
        // An averaged log: its window, unless the job gives the interval itself.
        assert_eq!(
            every(&[("write_iops_log", "i"), ("log_avg_msec", "100")]),
            [Some(500), Some(100)]
        );
        assert_eq!(
            every(&[
                ("write_bw_log", "b"),
                ("log_avg_msec", "100"),
                ("bw_avg_time", "1000")
            ]),
            [Some(1000), Some(500)]
        );
        assert_eq!(
            every(&[
                ("write_bw_log", "b"),
                ("log_avg_msec", "300"),
                ("bwavgtime", "100")
            ]),
            [Some(100), Some(500)]
        );
    }

    /// fio's other names and defaults that change nothing here: `threads` (as `thread`),
    /// `io_submit_mode=inline`; `offload` and other modes are refused in one line.
    #[test]
    fn fio_spellings_of_what_raidlab_does_are_taken() {
        let mut s = JobSpec::default();
        for (k, v) in [
            ("threads", "1"),
            ("thread", "0"),
            ("io_submit_mode", "inline"),
        ] {
            apply_option(&mut s, k, Some(v)).unwrap();
        }
        assert_eq!(s, JobSpec::default());
        let e = apply_option(&mut s, "io_submit_mode", Some("offload")).unwrap_err();
        assert!(e.message.contains("valid: inline"), "{}", e.message);
        let e = apply_option(&mut s, "io_submit_mode", Some("later")).unwrap_err();
        assert!(e.message.contains("not a submission mode"), "{}", e.message);
    }

    /// fio's log and percentile options: a bare log option names the files after the job,
    /// `percentile_list` is sorted with the precision it was written with and turns
    /// completion-latency percentiles on; bad values say what is valid.
    #[test]
    fn log_and_percentile_options_apply() {
        let mut s = JobSpec::default();
        apply_option(&mut s, "write_bw_log", None).unwrap();
        apply_option(&mut s, "write_lat_log", Some("runs/x")).unwrap();
        apply_option(&mut s, "log_avg_msec", Some("250")).unwrap();
        apply_option(&mut s, "log_offset", Some("1")).unwrap();
        apply_option(&mut s, "write_hist_log", None).unwrap();
        apply_option(&mut s, "log_hist_msec", Some("1000")).unwrap();
        apply_option(&mut s, "log_hist_coarseness", Some("6")).unwrap();
        assert_eq!(
            s.logs.prefixes("j"),
            [
                Some("j".to_string()),
                None,
                Some("runs/x".to_string()),
                Some("j".to_string())
            ]
        );
        assert_eq!((s.logs.avg_msec, s.logs.offset), (250, true));
        assert_eq!((s.logs.hist_msec, s.logs.hist_coarseness), (1000, 6));
        let e = apply_option(&mut s, "log_hist_coarseness", Some("7")).unwrap_err();
        assert!(
            e.message
                .contains("valid: 0, fio's 1856 bins, to 6, 29 bins"),
            "{e}"
        );
        apply_option(&mut s, "clat_percentiles", Some("0")).unwrap();
        apply_option(&mut s, "percentile_list", Some("99.95:50:10")).unwrap();
        assert_eq!(s.percentiles.list, [10.0, 50.0, 99.95]);
        assert_eq!((s.percentiles.precision, s.percentiles.clat), (2, true));
        apply_option(&mut s, "percentile_list", Some("50:99")).unwrap();
        assert_eq!(s.percentiles.precision, 0);
        apply_option(&mut s, "lat_percentiles", Some("1")).unwrap();
        assert_eq!(s.percentiles.lat, Some(true));
        for (key, value, want) in [
            (
                "percentile_list",
                "50:101",
                "percentile 101 is out of range (valid: 0 to 100)",
            ),
            (
                "percentile_list",
                "50:x",
                "'x' is not a percentile (valid: numbers from 0 to 100",
            ),
            (
                "log_avg_msec",
                "1s",
                "'1s' is not a whole number of milliseconds",
            ),
        ] {
            let e = apply_option(&mut s, key, Some(value)).unwrap_err();
            assert!(e.message.contains(want), "{e}");
        }
        let many: Vec<String> = (1..=21).map(|p| p.to_string()).collect();
        let e = apply_option(&mut s, "percentile_list", Some(&many.join(":"))).unwrap_err();
        assert!(
            e.message
                .contains("21 percentiles given (valid: at most 20)"),
            "{e}"
        );
    }

    #[test]
    fn filenames_keep_target_prefixes() {
        assert_eq!(
            split_filenames("/dev/sda:/dev/sdb"),
            vec!["/dev/sda", "/dev/sdb"]
        );
        assert_eq!(
            split_filenames("array:m1,m2:sim:systems/x.toml#lun0:/tmp/f"),
            vec!["array:m1,m2", "sim:systems/x.toml#lun0", "/tmp/f"]
        );
        assert_eq!(split_filenames("a\\:b"), vec!["a:b"]);
    }

    #[test]
    fn direct_needs_alignment() {
        let mut s = JobSpec {
            filenames: vec!["f".into()],
            direct: true,
            ..Default::default()
        };
        s.bs = BlockSizes::fixed(1000);
        assert!(s
            .validate()
            .unwrap_err()
            .message
            .contains("multiple of 512"));
        s.bs = BlockSizes::fixed(4096);
        s.validate().unwrap();
    }

    #[test]
    fn regions_stay_inside_the_target() {
        let s = JobSpec {
            size: Some(1 << 20),
            offset_increment: 1 << 20,
            ..Default::default()
        };
        assert_eq!(s.region(2, 4 << 20).unwrap(), (2 << 20, 1 << 20));
        let e = s.region(4, 4 << 20).unwrap_err().message;
        assert!(
            e.contains("covers [4194304, 5242880)") && e.contains("up to 4194304"),
            "{e}"
        );
        // An offset past the end with no size: said as such, not as an empty region.
        let past = JobSpec {
            offset: 5 << 20,
            ..Default::default()
        };
        let e = past.region(0, 0).unwrap_err().message;
        assert!(
            e.contains("the target is empty (0 bytes; valid: give size="),
            "{e}"
        );
        let e = past.region(0, 4 << 20).unwrap_err().message;
        assert!(
            e.contains("starts at byte 5242880, at or past the end")
                && e.contains("offset below 4194304"),
            "{e}"
        );
    }

    /// Zone options are checked as fio checks them (zonesize needs zonemode=strided, and
    /// strided zones need zonesize), a zone holds the largest block, and the options that
    /// place offsets by rules of their own are refused with zones, each in one line.
    #[test]
    fn zone_options_are_checked_in_one_line() {
        let job = |opts: &[(&str, &str)]| {
            let mut s = JobSpec {
                name: "z".into(),
                filenames: vec!["t".into()],
                ..Default::default()
            };
            for (k, v) in opts {
                apply_option(&mut s, k, Some(v)).unwrap();
            }
            s.validate().err().map(|e| e.message)
        };
        assert_eq!(
            job(&[
                ("zonemode", "strided"),
                ("zonesize", "1m"),
                ("zoneskip", "4m")
            ]),
            None
        );
        // (fio takes zonerange and zoneskip alone, and ignores them.)
        assert_eq!(job(&[("zoneskip", "4m"), ("zonerange", "1m")]), None);
        let err = |opts: &[(&str, &str)], has: &str| {
            let m = job(opts).unwrap_or_else(|| panic!("{opts:?} passed"));
            assert!(m.contains(has) && !m.contains('\n'), "{opts:?}: {m}");
        };
        err(&[("zonesize", "1m")], "needs zonemode=strided");
        err(&[("zonemode", "strided")], "needs zonesize");
        err(
            &[("zonemode", "strided"), ("zonesize", "4k"), ("bs", "64k")],
            "smaller than the largest block",
        );
        err(
            &[
                ("zonemode", "strided"),
                ("zonesize", "1m"),
                ("zoneskip", "1000"),
                ("direct", "1"),
            ],
            "zoneskip=1000 is not a multiple of 512",
        );
        let strided = [("zonemode", "strided"), ("zonesize", "1m")];
        for (k, v, has) in [
            ("rw", "randtrim", "trims"),
            ("random_distribution", "zipf:1.2", "random_distribution"),
            ("percentage_random", "50", "percentage_random"),
            ("rw", "randread:8", "runs"),
            ("rw", "read:4k", "skips"),
            ("bssplit", "4k/50:64k/50", "several block sizes"),
        ] {
            let mut o = strided.to_vec();
            if k == "percentage_random" || k == "bssplit" {
                o.push(("rw", "randread"));
            }
            o.push((k, v));
            err(&o, has);
        }
        let mut free = strided.to_vec();
        free.extend([
            ("rw", "randread"),
            ("bssplit", "4k/50:64k/50"),
            ("norandommap", "1"),
        ]);
        assert_eq!(job(&free), None);
        let mut s = JobSpec::default();
        let e = apply_option(&mut s, "zonemode", Some("zbd"))
            .unwrap_err()
            .message;
        assert!(e.contains("valid: none, strided"), "{e}");
    }

    /// fio's switches take any whole number, 0 off and others on (`time_based=10`, as in
    /// fio's own examples); its other booleans take 0 and 1 only.
    #[test]
    fn switches_take_any_whole_number_as_fios_do() {
        let mut s = JobSpec::default();
        for (k, on) in [
            ("time_based", "10"),
            ("norandommap", "5"),
            ("stonewall", "4"),
            ("group_reporting", "3"),
            ("verify_only", "2"),
        ] {
            apply_option(&mut s, k, Some(on)).unwrap();
            apply_option(&mut s, k, Some("0")).unwrap();
        }
        apply_option(&mut s, "time_based", Some("30")).unwrap();
        assert!(s.time_based);
        apply_option(&mut s, "time_based", Some("00")).unwrap();
        assert!(!s.time_based);
        let e = apply_option(&mut s, "time_based", Some("sometimes"))
            .unwrap_err()
            .message;
        assert!(e.contains("not a switch") && e.contains("0 for off"), "{e}");
        let e = apply_option(&mut s, "direct", Some("2"))
            .unwrap_err()
            .message;
        assert!(e.contains("not a boolean"), "{e}");
    }

    /// fio's wait_for names one job defined before the waiter; a later job, an unknown name
    /// or a name two jobs share is refused in one line.
    #[test]
    fn wait_for_names_one_job_before_it() {
        let jobs = |list: &[(&str, Option<&str>)]| -> Vec<JobSpec> {
            list.iter()
                .map(|(n, w)| {
                    let mut s = JobSpec {
                        name: n.to_string(),
                        ..Default::default()
                    };
                    if let Some(w) = w {
                        apply_option(&mut s, "wait_for", Some(w)).unwrap();
                    }
                    s
                })
                .collect()
        };
        let ok = jobs(&[("a", None), ("b", Some("a")), ("c", None), ("d", Some("b"))]);
        assert_eq!(waitees(&ok).unwrap(), vec![None, Some(0), None, Some(1)]);
        let err = |list: &[(&str, Option<&str>)], has: &str| {
            let e = waitees(&jobs(list)).unwrap_err().message;
            assert!(e.contains(has) && !e.contains('\n'), "{e}");
        };
        err(
            &[("b", Some("a")), ("a", None)],
            "wait_for=a names no job defined before it",
        );
        err(&[("a", None), ("b", Some("zz"))], "(valid: a)");
        err(&[("a", Some("a"))], "names no job defined before it");
        // An empty wait_for is refused where it is written, as fio 3.33 refuses it ("option
        // wait_for requires an argument"); it does not clear a wait given before.
        for empty in ["", "  "] {
            let mut s = JobSpec::default();
            apply_option(&mut s, "wait_for", Some("a")).unwrap();
            let e = apply_option(&mut s, "wait_for", Some(empty))
                .unwrap_err()
                .message;
            assert!(
                e.contains("option 'wait_for': empty value") && !e.contains('\n'),
                "{e}"
            );
            assert_eq!(s.wait_for.as_deref(), Some("a"));
        }
        err(
            &[("a", None), ("a", None), ("b", Some("a"))],
            "2 jobs are named 'a'",
        );
    }
}
