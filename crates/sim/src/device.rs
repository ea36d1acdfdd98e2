//! Device models: service time of one command on a hard disk (zoned media, seek curve,
//! rotational position, head switches, on-board read-ahead and write cache) or an SSD
//! (parallel units, latency plus bandwidth caps). Pure functions of the device state and the
//! time the command starts; the event loop owns queueing.

use crate::catalog::{DeviceKind, DiskSpec};
use std::cell::Cell;

const SECTOR: u64 = 512;

#[derive(Clone, Debug)]
struct Zone {
    first_lba: u64,
    first_track: u64,
    spt: u64,
}

/// Static geometry and timing derived from a [`DiskSpec`].
#[derive(Clone, Debug)]
pub struct DeviceModel {
    pub kind: DeviceKind,
    pub capacity: u64,
    rev_ns: f64,
    inv_rev: f64,
    /// Whole numbers of turns below this are exact in ns ([`exact_multiples_below`]).
    rev_exact_below: f64,
    heads: u64,
    zones: Vec<Zone>,
    /// The zone holding the first sector of each run of `1 << zone_shift` sectors: no zone is
    /// shorter than a run, so a run starts in that zone or ends in the next.
    zone_hint: Vec<u32>,
    zone_shift: u32,
    cylinders: u64,
    seek: SeekCurve,
    write_settle_ns: f64,
    head_switch_ns: f64,
    /// Track skew, a fraction of a turn: each track's first sector lies this much further
    /// round than the previous track's, the head switch time, as drives are formatted so
    /// that a transfer running onto the next track finds its first sector arriving as the
    /// switch ends. The switch time a transfer pays in [`DeviceModel::media_ns`] and the
    /// angles of the sectors after it then agree.
    track_skew: f64,
    iface_ns_per_byte: f64,
    command_ns: u64,
    read_ahead_bytes: u64,
    /// The buffer's segments for reads ([`crate::catalog::DiskSpec::cache_segments`]; 0 for
    /// a flash drive, whose model has its own buffers), and the bytes each holds.
    segments: u32,
    segment_bytes: u64,
    /// A queued command waiting this long goes next ([`crate::catalog::DiskSpec::age_limit_ms`];
    /// `u64::MAX`: never).
    pub age_limit_ns: u64,
    pub write_cache: bool,
    /// Written data the drive holds ahead of the media (write cache on).
    pub write_cache_bytes: u64,
    /// A flash drive's dies, channels and buffers (None for a hard disk).
    pub ssd: Option<crate::ssd::SsdModel>,
    /// Seek time by distance in cylinders, filled on first use (bits of the f64; 0 = not yet
    /// computed). The curve's `powf` dominated shortest-positioning-time-first scheduling;
    /// the table gives the very same values. Distance 0 holds −0.0 from the start: its bits
    /// are not 0, so a look-up needs no test of the distance, and it adds to any time (all
    /// ≥ +0) as +0.0 does, bit for bit (−0 + +0 = +0; −0 + x = x).
    seek_table: Vec<Cell<u64>>,
}

/// Where a command starts on the media, worked out once when it is queued so the drive's
/// scheduler can compare positioning times without redoing the zone lookup.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Loc {
    /// (Cylinders, sectors and sectors per track all fit a u32 by far: the drive's queue
    /// keeps its commands smaller so.)
    pub cyl: u32,
    pub sector: u32,
    pub spt: u32,
    zone: u32,
    /// Angular position of the first sector, as a fraction of a turn.
    target: f64,
    /// Angular position of the track's first sector (its skew), as a fraction of a turn.
    skew: f64,
}

impl Loc {
    /// Angular position of the first sector, as a fraction of a turn.
    #[inline]
    pub fn target(&self) -> f64 {
        self.target
    }
}

/// `x % m` for finite x ≥ 0 and m > 0, bit for bit (the tests' reference for
/// [`rem_exact_below`], with no multiple taken as exact).
#[cfg(test)]
fn rem(x: f64, m: f64) -> f64 {
    rem_exact_below(x, m, 0.0)
}

/// `x % m` for finite x ≥ 0 and m > 0, bit for bit, without the slow generic `fmod`:
/// with the true quotient q, x − q·m is exactly representable and a fused multiply-add
/// returns it exactly; when the rounded division picked a neighbouring q the result falls
/// outside [0, m) and the generic remainder is used instead. For q below `exact_below`
/// (see [`exact_multiples_below`]) q·m is exact, and the product and a plain subtraction
/// give the same single rounding without the multiply-add's call (the baseline x86-64
/// target has no FMA instruction).
#[inline]
fn rem_exact_below(x: f64, m: f64, exact_below: f64) -> f64 {
    // Truncation through a signed integer (exact below 2^63, unlike a call to `trunc` or the
    // unsigned conversion); anything out of range saturates and lands in the fallback.
    let q = trunc_i64(x / m) as f64;
    let r = if q < exact_below {
        x - q * m
    } else {
        q.mul_add(-m, x)
    };
    if r >= 0.0 && r < m {
        r
    } else {
        rem_slow(x, m)
    }
}

/// A bound under which every whole number q gives an exact q·`m` (finite, normal, > 0): q
/// below 2^t has at most t significant bits, and `m` at most 53 − t, where t counts the zero
/// bits at the low end of its significand (a turn of 4 ms, 15 000 rpm, leaves 39 of them).
fn exact_multiples_below(m: f64) -> f64 {
    debug_assert!(m.is_normal() && m > 0.0);
    let significand = m.to_bits() & ((1 << 52) - 1) | 1 << 52;
    (1u64 << significand.trailing_zeros()) as f64
}

/// `x as i64`, bit for bit: one instruction (`cvttsd2si`) for |x| < 2^63, where the plain
/// conversion adds five to saturate out-of-range values and map NaN to 0 (the baseline x86-64
/// target has no single instruction for it); anything else takes the plain conversion.
#[inline(always)]
fn trunc_i64(x: f64) -> i64 {
    if x.abs() < 9_223_372_036_854_775_808.0 {
        // SAFETY: |x| < 2^63: x is finite and its whole part fits an i64.
        unsafe { x.to_int_unchecked::<i64>() }
    } else {
        trunc_i64_slow(x)
    }
}

/// [`trunc_i64`]'s plain conversion, out of line so that the compiler does not compute it on
/// every call and select afterwards.
#[cold]
#[inline(never)]
fn trunc_i64_slow(x: f64) -> i64 {
    x as i64
}

/// `x.fract()` for finite 0 ≤ x < 2^63, bit for bit: the whole part through a signed
/// integer (exact in that range) instead of a call to `trunc`.
#[inline]
fn fract_pos(x: f64) -> f64 {
    debug_assert!((0.0..9.2e18).contains(&x), "{x}");
    x - trunc_i64(x) as f64
}

/// `x as f64` for x < 2^63 (times, offsets and counts), bit for bit, by the signed
/// conversion: one instruction where the unsigned one takes several.
#[inline(always)]
pub(crate) fn f64_of(x: u64) -> f64 {
    debug_assert!(x < 1 << 63, "{x}");
    x as i64 as f64
}

/// `x as u64` for 0 ≤ x < 2^63, bit for bit, by the signed conversion, as [`f64_of`].
#[inline(always)]
pub(crate) fn u64_of(x: f64) -> u64 {
    debug_assert!((0.0..9_223_372_036_854_775_808.0).contains(&x), "{x}");
    trunc_i64(x) as u64
}

/// Kept out of line: as a plain `%` in [`rem`] the compiler computes it on every call and
/// selects afterwards (a remainder has no side effects), which is what `rem` avoids.
#[cold]
#[inline(never)]
fn rem_slow(x: f64, m: f64) -> f64 {
    x % m
}

/// A zeroed table of `n` cells; the allocation is lazily backed by the OS, so a model whose
/// drives never seek far costs nothing.
fn zeroed_cells(n: usize) -> Vec<Cell<u64>> {
    let v = std::mem::ManuallyDrop::new(vec![0u64; n]);
    // SAFETY: Cell<u64> is repr(transparent) over u64 (same size and alignment); the
    // allocation is handed over whole with its length and capacity.
    unsafe { Vec::from_raw_parts(v.as_ptr() as *mut Cell<u64>, v.len(), v.capacity()) }
}

/// Seek time against distance, as a fraction x of a full stroke (0 < x ≤ 1).
///
/// From a datasheet's track-to-track, average and full-stroke times the curve has the shape
/// drives show (Ruemmler and Wilkes, "An introduction to disk drive modeling", IEEE Computer
/// 27(3), 1994): a short seek is mostly the arm accelerating and decelerating, so its time
/// grows with the square root of the distance; a long one coasts at top speed, so it grows
/// linearly. The two parts meet at `knee` with the same value and slope, the curve runs from
/// the track-to-track to the full-stroke time, and `knee` is placed so that a random seek
/// (two independent uniform positions) takes the average time on it.
#[derive(Clone, Debug)]
enum SeekCurve {
    /// `track + span·g(x)`, g = 2√(x·knee)/(1+knee) up to the knee, (knee + x)/(1+knee) past it.
    SqrtLinear { track: f64, span: f64, knee: f64 },
    /// `track + span·x^exp`: for datasheets whose average lies outside what the two-part
    /// curve can reach (between 1/3 and 8/15 of the way from track-to-track to full stroke).
    Power { track: f64, span: f64, exp: f64 },
    /// A measured table: (fraction of a full stroke, ns), interpolated linearly.
    Table(Vec<(f64, f64)>),
}

impl SeekCurve {
    fn from_spec(s: &DiskSpec) -> SeekCurve {
        if !s.seek_table.is_empty() {
            return SeekCurve::Table(s.seek_table.iter().map(|&(x, ms)| (x, ms * 1e6)).collect());
        }
        let track = s.seek_track_ms * 1e6;
        let span = (s.seek_full_ms - s.seek_track_ms).max(0.0) * 1e6;
        let f = (s.seek_avg_ms - s.seek_track_ms) / (s.seek_full_ms - s.seek_track_ms).max(1e-9);
        match sqrt_linear_knee(f) {
            Some(knee) => SeekCurve::SqrtLinear { track, span, knee },
            None => SeekCurve::Power {
                track,
                span,
                exp: seek_exponent(f),
            },
        }
    }

    /// Seek time in ns for a distance `x` of a full stroke.
    fn at(&self, x: f64) -> f64 {
        match self {
            SeekCurve::SqrtLinear { track, span, knee } => {
                let g = if x < *knee {
                    2.0 * (x * knee).sqrt() / (1.0 + knee)
                } else {
                    (knee + x) / (1.0 + knee)
                };
                track + span * g
            }
            SeekCurve::Power { track, span, exp } => track + span * x.powf(*exp),
            SeekCurve::Table(t) => {
                let i = t.partition_point(|&(tx, _)| tx < x);
                match (i.checked_sub(1).map(|j| t[j]), t.get(i)) {
                    (Some((x0, y0)), Some(&(x1, y1))) if x1 > x0 => {
                        y0 + (y1 - y0) * (x - x0) / (x1 - x0)
                    }
                    (_, Some(&(_, y))) | (Some((_, y)), None) => y,
                    (None, None) => 0.0,
                }
            }
        }
    }
}

/// The mean of the two-part curve g (track = 0, full stroke = 1) over random seeks, whose
/// distance x has density 2(1 − x), for a knee at `k`.
fn sqrt_linear_mean(k: f64) -> f64 {
    // g = b√x below the knee, c + e·x above it.
    let b = 2.0 * k.sqrt() / (1.0 + k);
    let (c, e) = (k / (1.0 + k), 1.0 / (1.0 + k));
    // ∫₀ᵏ b√x·2(1−x) dx + ∫ₖ¹ (c + e·x)·2(1−x) dx
    b * 2.0 * (2.0 / 3.0 * k.powf(1.5) - 2.0 / 5.0 * k.powf(2.5))
        + c * (1.0 - k) * (1.0 - k)
        + e * (1.0 / 3.0 - k * k + 2.0 / 3.0 * k * k * k)
}

/// The knee that makes a random seek take fraction `f` of the way from the track-to-track to
/// the full-stroke time: none when `f` is outside (1/3, 8/15), the means of a straight line
/// (knee at 0) and of a square root over the whole stroke (knee at 1). The mean rises with
/// the knee, so bisection finds it.
fn sqrt_linear_knee(f: f64) -> Option<f64> {
    if !(f > 1.0 / 3.0 + 1e-9 && f < 8.0 / 15.0 - 1e-9) {
        return None;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if sqrt_linear_mean(mid) < f {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// Solve E[|U-V|^p] = 2/((p+1)(p+2)) = f for p: the exponent that makes a random seek take
/// the datasheet's average time on the curve t(x) = t_track + (t_full - t_track)·x^p.
fn seek_exponent(f: f64) -> f64 {
    let f = f.clamp(0.05, 0.95);
    let (mut lo, mut hi) = (0.01f64, 20.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if 2.0 / ((mid + 1.0) * (mid + 2.0)) > f {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// How a drive's sectors lie: equal cylinders per zone, sectors per track falling linearly
/// from the outer zone to the inner one. The model is built from it, and the system-file
/// check asks it how much the model would lay out before anything is built.
pub(crate) struct ZoneLayout {
    pub heads: u64,
    pub cyl_per_zone: u64,
    /// Sectors per track, by zone from the outside in.
    pub spt: Vec<u64>,
}

impl ZoneLayout {
    pub fn of(s: &DiskSpec) -> ZoneLayout {
        let heads = s.heads.max(1) as u64;
        let nz = s.zones.max(1) as u64;
        let spt: Vec<u64> = (0..nz)
            .map(|z| {
                if nz == 1 {
                    (s.spt_outer as u64).max(1)
                } else {
                    let (o, i) = (s.spt_outer as f64, s.spt_inner as f64);
                    (o + (i - o) * z as f64 / (nz - 1) as f64).round().max(1.0) as u64
                }
            })
            .collect();
        let per_cyl_sum: u64 = spt.iter().map(|t| t * heads).sum();
        let cyl_per_zone = (s.capacity_bytes / SECTOR / per_cyl_sum.max(1)).max(1) + 1;
        ZoneLayout {
            heads,
            cyl_per_zone,
            spt,
        }
    }

    /// Sectors in zone `z`.
    pub fn zone_sectors(&self, z: usize) -> u64 {
        self.cyl_per_zone * self.heads * self.spt[z]
    }

    pub fn cylinders(&self) -> u64 {
        self.cyl_per_zone * self.spt.len() as u64
    }

    /// Sectors in all zones.
    pub fn sectors(&self) -> u64 {
        (0..self.spt.len()).map(|z| self.zone_sectors(z)).sum()
    }

    /// The zone index's step (a power of two no larger than the smallest zone, so each step
    /// meets at most two zones) and its number of slots.
    pub fn zone_index(&self) -> (u32, u64) {
        let shortest = (0..self.spt.len())
            .map(|z| self.zone_sectors(z))
            .min()
            .unwrap_or(1);
        let shift = shortest.max(1).ilog2();
        (shift, (self.sectors() >> shift) + 1)
    }
}

impl DeviceModel {
    pub fn new(s: &DiskSpec, write_cache: Option<bool>) -> DeviceModel {
        let rev_ns = 60e9 / s.rpm.max(1.0);
        let layout = ZoneLayout::of(s);
        let (heads, cyl_per_zone) = (layout.heads, layout.cyl_per_zone);
        let mut zones = Vec::new();
        let (mut lba, mut track) = (0u64, 0u64);
        for (z, &spt) in layout.spt.iter().enumerate() {
            zones.push(Zone {
                first_lba: lba,
                first_track: track,
                spt,
            });
            lba += layout.zone_sectors(z);
            track += cyl_per_zone * heads;
        }
        let ssd = s.kind == DeviceKind::Ssd;
        let cylinders = layout.cylinders();
        let (zone_shift, slots) = layout.zone_index();
        let zone_hint = (0..slots)
            .map(|c| {
                let first = c << zone_shift;
                (zones.partition_point(|z| z.first_lba <= first) - 1) as u32
            })
            .collect();
        DeviceModel {
            kind: s.kind,
            capacity: s.capacity_bytes,
            rev_ns,
            inv_rev: 1.0 / rev_ns,
            rev_exact_below: exact_multiples_below(rev_ns),
            heads,
            zones,
            zone_hint,
            zone_shift,
            cylinders,
            seek: SeekCurve::from_spec(s),
            write_settle_ns: s.write_settle_ms * 1e6,
            head_switch_ns: s.head_switch_ms * 1e6,
            track_skew: (s.head_switch_ms * 1e6 / rev_ns).fract(),
            iface_ns_per_byte: 1e3 / s.interface_mb_s.max(1e-3),
            command_ns: (s.command_us * 1e3) as u64,
            read_ahead_bytes: s.read_ahead_kib as u64 * 1024,
            segments: if ssd { 0 } else { s.cache_segments },
            segment_bytes: (s.cache_kib as u64 * 1024)
                .checked_div(s.cache_segments as u64)
                .unwrap_or(0),
            age_limit_ns: if s.age_limit_ms > 0.0 {
                (s.age_limit_ms * 1e6) as u64
            } else {
                u64::MAX
            },
            write_cache: write_cache.unwrap_or(s.write_cache),
            write_cache_bytes: s.cache_kib as u64 * 1024,
            ssd: ssd.then(|| crate::ssd::SsdModel::new(s, write_cache.unwrap_or(s.write_cache))),
            seek_table: if ssd {
                Vec::new()
            } else {
                let t = zeroed_cells(cylinders as usize + 1);
                t[0].set((-0.0f64).to_bits());
                t
            },
        }
    }

    /// Index of the zone holding sector `lba` (the last zone for any past the end).
    #[inline]
    fn zone_index(&self, lba: u64) -> usize {
        let i = match self.zone_hint.get((lba >> self.zone_shift) as usize) {
            Some(&h) => {
                let h = h as usize;
                match self.zones.get(h + 1) {
                    Some(next) if next.first_lba <= lba => h + 1,
                    _ => h,
                }
            }
            None => self.zones.len() - 1,
        };
        debug_assert_eq!(
            i,
            self.zones
                .partition_point(|z| z.first_lba <= lba)
                .saturating_sub(1)
        );
        i
    }

    fn zone_of(&self, lba: u64) -> &Zone {
        &self.zones[self.zone_index(lba)]
    }

    /// (cylinder, sector within track, sectors per track) of a byte offset.
    fn locate(&self, offset: u64) -> (u64, u64, u64) {
        let lba = offset / SECTOR;
        let z = self.zone_of(lba);
        let rel = lba - z.first_lba;
        let track = z.first_track + rel / z.spt;
        (track / self.heads, rel % z.spt, z.spt)
    }

    /// Media rate at a byte offset, bytes per second.
    pub fn media_rate(&self, offset: u64) -> f64 {
        let z = self.zone_of(offset / SECTOR);
        (z.spt * SECTOR) as f64 * 1e9 / self.rev_ns
    }

    /// What the media moves at a byte offset, bytes per second: a hard disk's media rate
    /// there, a flash drive's read bound (the same everywhere).
    pub fn rate_at(&self, offset: u64) -> f64 {
        match &self.ssd {
            Some(f) => f.read_bound(),
            None => self.media_rate(offset.min(self.capacity.saturating_sub(SECTOR))),
        }
    }

    /// A hard disk's media rate at its outer zone; a flash drive's read bound
    /// ([`crate::ssd::SsdModel::read_bound`]).
    pub fn outer_rate(&self) -> f64 {
        match &self.ssd {
            Some(f) => f.read_bound(),
            None => self.media_rate(0),
        }
    }
    pub fn inner_rate(&self) -> f64 {
        match &self.ssd {
            Some(f) => f.read_bound(),
            None => self.media_rate(self.capacity.saturating_sub(SECTOR)),
        }
    }

    /// What serves commands side by side: a flash drive's dies; one for a hard disk.
    pub fn servers(&self) -> u32 {
        self.ssd.as_ref().map_or(1, |f| f.dies())
    }

    /// Write rates, bytes/s, as [`DeviceModel::service_at`] times writes: what the drive
    /// keeps up at its inner and at its outer zone (a hard disk's media rate there, no faster
    /// than its interface; a flash drive's past its SLC cache, for both), and the most it
    /// takes for a while (a hard disk's interface while its write cache has room, else its
    /// outer zone's rate; a flash drive's while its SLC cache has room).
    pub fn write_rates(&self) -> [f64; 3] {
        let iface = 1e9 / self.iface_ns_per_byte;
        match &self.ssd {
            Some(f) => f.write_bounds(),
            None => {
                let (inner, outer) = (self.inner_rate().min(iface), self.outer_rate().min(iface));
                [inner, outer, if self.write_cache { iface } else { outer }]
            }
        }
    }

    /// The seek curve in words, for `explain`: track-to-track, random-seek average and
    /// full-stroke times, and its shape. Empty for an SSD.
    pub fn seek_summary(&self) -> String {
        if self.kind != DeviceKind::Hdd {
            return String::new();
        }
        // The average over random seeks (distance density 2(1 − x)), by the midpoint rule.
        let n = 2000;
        let mean = (0..n)
            .map(|i| {
                let x = (i as f64 + 0.5) / n as f64;
                self.seek.at(x) * 2.0 * (1.0 - x) / n as f64
            })
            .sum::<f64>();
        let shape = match &self.seek {
            SeekCurve::SqrtLinear { knee, .. } => {
                format!(
                    "√ of the distance, linear past {:.0}% of the stroke",
                    knee * 100.0
                )
            }
            SeekCurve::Power { exp, .. } => format!("distance^{exp:.2}"),
            SeekCurve::Table(t) => format!("measured table, {} points", t.len()),
        };
        format!(
            "seek {:.2}/{:.2}/{:.2} ms track/average/full ({shape})",
            self.seek.at(0.0) / 1e6,
            mean / 1e6,
            self.seek.at(1.0) / 1e6
        )
    }

    /// Seek time over `d` ≥ 1 cylinders: one cylinder is the curve's start (track-to-track),
    /// the whole stroke its end.
    fn seek_curve(&self, d: u64) -> f64 {
        let span = self.cylinders.saturating_sub(1).max(1) as f64;
        self.seek.at(d.saturating_sub(1) as f64 / span)
    }

    /// Seek time from cylinder `from` to `to`: −0.0 for none (as good as +0.0 in every sum
    /// the scheduler and the service time make; see [`DeviceModel::seek_table`]).
    #[inline]
    fn seek_ns(&self, from: u64, to: u64) -> f64 {
        let d = from.abs_diff(to);
        if let Some(c) = self.seek_table.get(d as usize) {
            let b = c.get();
            if b != 0 {
                return f64::from_bits(b);
            }
        }
        self.seek_miss(d)
    }

    /// [`DeviceModel::seek_ns`] over `d` ≥ 1 cylinders not yet in the table: from the curve,
    /// kept in the table where it has room. Out of line, so the callers' loops (the
    /// scheduler's) carry nothing of the curve.
    #[cold]
    #[inline(never)]
    fn seek_miss(&self, d: u64) -> f64 {
        if d == 0 {
            return 0.0; // (a drive without a table: a flash drive's)
        }
        let v = self.seek_curve(d);
        if let Some(c) = self.seek_table.get(d as usize) {
            c.set(v.to_bits());
        }
        v
    }

    /// Seek time from the head's cylinder to `cyl` (no settle): it rises with the distance,
    /// so it bounds from below the positioning time of every command at least as far.
    #[inline]
    pub fn seek_to_ns(&self, st: &DeviceState, cyl: u64) -> f64 {
        self.seek_ns(st.cyl, cyl)
    }

    /// One turn of the platters, ns.
    #[inline]
    pub fn rev_ns(&self) -> f64 {
        self.rev_ns
    }

    /// The angle under the head at `t_cmd` (as [`DeviceModel::t_cmd`] gives it), as a fraction
    /// of a turn: where a command with no seek would start waiting for its sector. Within
    /// rounding (far below a nanosecond's worth of turn) of what the positioning formula
    /// works out: by a multiplication, where the formula divides twice.
    #[inline]
    pub fn angle_at(&self, st: &DeviceState, t_cmd: f64) -> f64 {
        let turns = (t_cmd + st.phase_ns) * self.inv_rev;
        // Whole turns through a signed integer (turns stay far below 2^63).
        let a = turns - trunc_i64(turns) as f64;
        if a < 0.0 {
            0.0
        } else if a >= 1.0 {
            1.0 - f64::EPSILON
        } else {
            a
        }
    }

    /// Write settle time, added to a write's seek.
    #[inline]
    pub fn settle_ns(&self) -> f64 {
        self.write_settle_ns
    }

    /// Where a command for `offset` starts (see [`Loc`]).
    pub fn loc(&self, offset: u64) -> Loc {
        self.loc_inline(offset)
    }

    /// [`DeviceModel::loc`], inline where a command enters a drive's queue (once per member
    /// I/O).
    #[inline(always)]
    pub fn loc_inline(&self, offset: u64) -> Loc {
        let lba = offset / SECTOR;
        let zi = self.zone_index(lba);
        let z = &self.zones[zi];
        let rel = lba - z.first_lba;
        let track = z.first_track + rel / z.spt;
        let (sector, spt) = (rel % z.spt, z.spt);
        let skew = fract_pos(f64_of(track) * self.track_skew);
        let cyl = track / self.heads;
        debug_assert!(cyl <= u32::MAX as u64 && spt <= u32::MAX as u64);
        Loc {
            cyl: cyl as u32,
            sector: sector as u32,
            spt: spt as u32,
            zone: zi as u32,
            target: fract_pos(f64_of(sector) / f64_of(spt) + skew),
            skew,
        }
    }

    /// Angular position of the sector holding byte `end` (as [`Loc::target`] of
    /// `self.loc(end)`), for a command starting at `offset` located at `loc` and ending there:
    /// on the start's track it follows from the start's sector and the track's skew.
    #[inline]
    fn end_target(&self, loc: &Loc, offset: u64, end: u64) -> f64 {
        let sector = loc.sector as u64 + (end / SECTOR - offset / SECTOR);
        let a = if sector < loc.spt as u64 {
            fract_pos(f64_of(sector) / f64_of(loc.spt as u64) + loc.skew)
        } else {
            self.loc(end).target
        };
        debug_assert_eq!(a.to_bits(), self.loc(end).target.to_bits());
        a
    }

    /// Angular position of the sector holding the end of the drive's last command
    /// (`st.last_end`), as a fraction of a turn: where a command streaming on from it starts.
    /// For a hard disk that has served a command.
    #[inline]
    pub fn last_end_target(&self, st: &DeviceState) -> f64 {
        self.end_target(&st.last_loc, st.last_start, st.last_end)
    }

    /// Cylinder of a byte offset at or after `start`, located at `from` (same zone or a later
    /// one).
    #[inline(always)]
    fn cyl_from(&self, from: &Loc, start: u64, offset: u64) -> u64 {
        let lba = offset / SECTOR;
        // On the start's track (zones hold whole tracks): the start's cylinder.
        if let Some(d) = lba.checked_sub(start / SECTOR) {
            if from.sector as u64 + d < from.spt as u64 {
                debug_assert_eq!(from.cyl as u64, self.locate(offset).0);
                return from.cyl as u64;
            }
        }
        self.cyl_off_track(from, lba, offset)
    }

    /// [`DeviceModel::cyl_from`] for an offset past the start's track (out of line: most
    /// commands end on the track they start on).
    #[inline(never)]
    fn cyl_off_track(&self, from: &Loc, lba: u64, offset: u64) -> u64 {
        let mut zi = from.zone as usize;
        while zi + 1 < self.zones.len() && self.zones[zi + 1].first_lba <= lba {
            zi += 1;
        }
        let z = &self.zones[zi];
        if lba < z.first_lba {
            return self.locate(offset).0;
        }
        (z.first_track + (lba - z.first_lba) / z.spt) / self.heads
    }

    /// Seek plus write settle from the head's cylinder to `loc`: the part of the positioning
    /// time that does not depend on when the command starts, and a lower bound of it.
    #[inline]
    pub fn seek_settle_ns(&self, st: &DeviceState, loc: &Loc, write: bool) -> f64 {
        let mut pos = self.seek_ns(st.cyl, loc.cyl as u64);
        if write {
            pos += self.write_settle_ns;
        }
        pos
    }

    /// [`DeviceModel::positioning_ns`] from the seek-and-settle part `pos` and the start time
    /// plus command overhead `t_cmd` (= `t as f64 + command_ns as f64`).
    #[inline]
    pub fn positioning_from(&self, st: &DeviceState, t_cmd: f64, pos: f64, loc: &Loc) -> f64 {
        self.positioning_to(st, t_cmd, pos, loc.target)
    }

    /// [`DeviceModel::positioning_from`] for a command whose first sector is at angle
    /// `target` (a fraction of a turn).
    #[inline]
    pub fn positioning_to(&self, st: &DeviceState, t_cmd: f64, pos: f64, target: f64) -> f64 {
        let arrive = t_cmd + pos;
        let angle_now =
            rem_exact_below(arrive + st.phase_ns, self.rev_ns, self.rev_exact_below) / self.rev_ns;
        let mut wait = target - angle_now;
        if wait < 0.0 {
            wait += 1.0;
        }
        pos + wait * self.rev_ns
    }

    /// Time for `len` bytes to cross the drive's interface, ns: the tail of a read's service
    /// in which its data leaves the drive (the whole of it comes within the service).
    #[inline]
    pub fn iface_ns(&self, len: u64) -> u64 {
        u64_of(f64_of(len) * self.iface_ns_per_byte)
    }

    /// Time to take a write's data into the write cache: the command's overhead and its
    /// transfer over the interface.
    #[inline]
    pub fn accept_ns(&self, len: u64) -> u64 {
        u64_of((f64_of(self.command_ns) + f64_of(len) * self.iface_ns_per_byte).max(1.0))
    }

    /// The start time plus command overhead, as the positioning formula adds them.
    #[inline]
    pub fn t_cmd(&self, t: u64) -> f64 {
        f64_of(t) + f64_of(self.command_ns)
    }

    /// Positioning time (seek + settle + rotational wait) if a command for `offset` started
    /// at `t` with the head on `cyl`.
    pub fn positioning_ns(&self, st: &DeviceState, t: u64, offset: u64, write: bool) -> f64 {
        let loc = self.loc(offset);
        let pos = self.seek_settle_ns(st, &loc, write);
        self.positioning_from(st, self.t_cmd(t), pos, &loc)
    }

    fn media_ns(&self, loc: &Loc, len: u64) -> f64 {
        let (sector, spt) = (loc.sector as u64, loc.spt as u64);
        let per_sector = self.rev_ns / f64_of(spt);
        let sectors = len.div_ceil(SECTOR);
        let switches = (sector + sectors) / spt;
        f64_of(sectors) * per_sector + f64_of(switches) * self.head_switch_ns
    }

    /// Whether a command at `offset` continues the drive's last one without positioning: a
    /// sequential write taken into the write cache (or, without it, one started as the last
    /// write ended: see [`DeviceModel::service_at`]), or a sequential read of what the drive
    /// has been reading ahead since the last read. The scheduler serves such a command first
    /// (it is where the head is), and the service time charges it no seek or rotation.
    #[inline]
    pub fn streams(&self, st: &DeviceState, offset: u64, write: bool) -> bool {
        offset == st.last_end && self.may_stream(st, write)
    }

    /// Whether a command (a write if `write`) could stream on from the drive's last one, at
    /// the offset where that one ended ([`DeviceModel::streams`]).
    #[inline]
    pub fn may_stream(&self, st: &DeviceState, write: bool) -> bool {
        if write {
            // Without the write cache, only a write queued while the last write ran
            // ([`DeviceModel::service_at`] checks when it came).
            self.write_cache || !st.last_was_read
        } else {
            self.read_ahead_bytes > 0 && st.last_was_read
        }
    }

    /// Whether a read at `offset` lies past the end of the drive's last command, a read,
    /// within the span the drive reads ahead: the drive reaches it by reading on.
    #[inline(always)]
    pub fn reads_ahead_to(&self, st: &DeviceState, offset: u64) -> bool {
        // (A drive that has not read yet has `last_end` at u64::MAX: no offset lies past it.)
        st.last_was_read && offset > st.last_end && offset - st.last_end < self.read_ahead_bytes
    }

    /// The buffer's read segments (0: reads are not cached), and the bytes each holds.
    pub fn segments(&self) -> u32 {
        self.segments
    }
    pub fn segment_bytes(&self) -> u64 {
        self.segment_bytes
    }

    /// The bytes past the end of its last read that the drive reads on over (0: it does
    /// not read ahead).
    #[inline]
    pub fn read_ahead_bytes(&self) -> u64 {
        self.read_ahead_bytes
    }

    /// For a read at `offset` that the drive reaches by reading on
    /// ([`DeviceModel::reads_ahead_to`]), located at `loc`: how long from `t_cmd` (as
    /// [`DeviceModel::t_cmd`] gives it) until its first sector passes under the head, the
    /// drive having read on since its last read ended; 0 if it already has. Comparable with
    /// a positioning time, which the scheduler ranks it against.
    #[inline]
    pub fn read_on_wait(&self, st: &DeviceState, t_cmd: f64, offset: u64, loc: &Loc) -> f64 {
        let at =
            f64_of(st.last_done) + f64_of(offset - st.last_end) * self.sustained_ns_per_byte(loc);
        (at - t_cmd).max(0.0)
    }

    /// The zone's sustained rate, ns a byte, for a command located at `loc`: the catalog's
    /// sectors per track give the rate a drive sustains along its tracks, head switches
    /// included (its track skew hides them). `media_rate(offset)`, from the zone already
    /// found for `loc`.
    #[inline(always)]
    fn sustained_ns_per_byte(&self, loc: &Loc) -> f64 {
        let z = &self.zones[loc.zone as usize];
        self.rev_ns / f64_of(z.spt * SECTOR)
    }

    /// A read the drive reaches by reading on from where its last read ended, `need` bytes
    /// from there to the read's end: what it read ahead since (up to its read-ahead span)
    /// moves at interface speed, the rest streams from the media — which goes on reading
    /// while the firmware takes the command, so the read ends when the later of the two
    /// does: the command and its transfer, or the media reaching the read's end. Its time,
    /// and the media time spent reading ahead for it, which the drive's utilization counts
    /// too (a streaming read keeps the media busy however short the commands' own times are).
    #[inline(always)]
    fn read_on(
        &self,
        st: &DeviceState,
        t: u64,
        need: u64,
        iface: f64,
        media_per_byte: f64,
    ) -> (f64, f64) {
        let buffered = u64_of(f64_of(t.saturating_sub(st.last_done)) / media_per_byte)
            .min(self.read_ahead_bytes);
        let ns = (f64_of(self.command_ns) + iface)
            .max(f64_of(need.saturating_sub(buffered)) * media_per_byte);
        (ns, f64_of(buffered.min(need)) * media_per_byte)
    }

    /// Whether the drive's buffer holds every byte of a read of `len` bytes at `offset`
    /// arriving at `now`: in a segment kept from an earlier run of reads, or already read by
    /// the run it is on. Such a read is served from the buffer, no media; a read with any
    /// byte not held goes to the media (partial hits are not modelled).
    #[inline]
    pub fn holds(&self, st: &DeviceState, now: u64, offset: u64, len: u64) -> bool {
        if self.segments == 0 {
            return false;
        }
        let end = offset + len;
        let on_run = st.last_was_read
            && st.last_done <= now
            && end <= st.last_end
            && offset
                >= st
                    .run_start
                    .max(st.last_end - self.segment_bytes.min(st.last_end));
        on_run || st.segments.hold(offset, end, self.segments)
    }

    /// The drive's last run of reads ends as another command takes the head elsewhere: a
    /// segment keeps what the run read (its last `segment_bytes`). Not what the drive read
    /// ahead after it: read-ahead is modelled for the run the head is on, by time
    /// ([`DeviceModel::read_on`]); a segment holding it would serve the next reads of a
    /// sequential stream from the buffer without the media reading on for them. Nothing
    /// is kept after a write.
    fn keep_segment(&self, st: &mut DeviceState) {
        if !st.last_was_read || st.last_end == u64::MAX {
            return;
        }
        let start = st
            .run_start
            .max(st.last_end.saturating_sub(self.segment_bytes));
        st.segments.put(start, st.last_end, self.segments);
    }

    /// Whether any command could stream on from the drive's last one
    /// ([`DeviceModel::streams`]).
    #[inline]
    pub fn any_may_stream(&self, st: &DeviceState) -> bool {
        st.last_end != u64::MAX && (self.may_stream(st, true) || self.may_stream(st, false))
    }

    /// Service time of a command starting at `t`; updates the state.
    pub fn service(&self, st: &mut DeviceState, t: u64, offset: u64, len: u64, write: bool) -> u64 {
        let loc = self.loc(offset);
        self.service_at(st, t, offset, len, write, &loc, None)
    }

    /// [`DeviceModel::service`] with the start already located (`loc` = `self.loc(offset)`),
    /// and its positioning time at `t` if already worked out (by
    /// [`DeviceModel::positioning_from`], as shortest-positioning-time-first does).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn service_at(
        &self,
        st: &mut DeviceState,
        t: u64,
        offset: u64,
        len: u64,
        write: bool,
        loc: &Loc,
        positioning: Option<f64>,
    ) -> u64 {
        if let Some(f) = &self.ssd {
            return f.service(&mut st.ssd, t, offset, len, write);
        }
        let iface = f64_of(len) * self.iface_ns_per_byte;
        // (A write without the write cache streams only if it was queued while the last
        // command ran: the drive starts it as that one ends, as the head reaches it.)
        let streams =
            self.streams(st, offset, write) && (!write || self.write_cache || t <= st.last_done);
        // A streaming command moves at the zone's sustained rate, which has head switches in
        // it already: none is charged again here.
        let sustained_per_byte = || self.sustained_ns_per_byte(loc);
        // Whether a read goes on along the run of data the drive holds in the segment it last
        // read into (streaming on, or reading on over a gap): any other command ends that
        // run, which the segment then keeps (see `DeviceModel::keep_segment`).
        let mut reads_on = streams && !write;
        let ns = if streams && !write {
            // The drive kept reading after the last command and streams on, no positioning.
            let (ns, ahead) = self.read_on(st, t, len, iface, sustained_per_byte());
            st.ahead_ns += ahead;
            ns
        } else if streams {
            // A write that goes on where the last write ended: the drive took its command and
            // data while the last one was on the media (tagged command queuing; the write
            // cache setting only decides when status is returned), or holds its data in its
            // write cache, so it writes on from where the head is, its overhead hidden, at the
            // same sustained rate as sequential reads.
            iface.max(f64_of(len) * sustained_per_byte())
        } else {
            let pos = match positioning {
                Some(p) => p,
                None => {
                    let pos = self.seek_settle_ns(st, loc, write);
                    self.positioning_from(st, self.t_cmd(t), pos, loc)
                }
            };
            // (`max` of two non-negative numbers, neither NaN, without its NaN handling.)
            let media = self.media_ns(loc, len);
            let positioned =
                f64_of(self.command_ns) + pos + if iface > media { iface } else { media };
            if !write && self.reads_ahead_to(st, offset) {
                // A read a little past where the last read ended (a RAID 5 member's next data
                // chunk past a parity chunk): the drive has been reading ahead over the gap
                // since then, so it takes what it holds and streams the rest, unless the head
                // would get there sooner by positioning.
                let need = offset + len - st.last_end;
                let (streamed, ahead) = self.read_on(st, t, need, iface, sustained_per_byte());
                if streamed < positioned {
                    st.ahead_ns += ahead;
                    reads_on = true;
                    streamed
                } else {
                    positioned
                }
            } else {
                positioned
            }
        };
        let ns = u64_of(ns.max(1.0));
        debug_assert_eq!(*loc, self.loc(offset));
        st.cyl = self.cyl_from(loc, offset, (offset + len).saturating_sub(1));
        if !reads_on {
            if self.segments > 0 {
                self.keep_segment(st);
            }
            st.run_start = offset;
        }
        st.last_end = offset + len;
        st.last_start = offset;
        st.last_loc = *loc;
        st.last_done = t + ns;
        st.last_was_read = !write;
        ns
    }
}

/// Most read segments a drive's buffer may have.
pub const MAX_SEGMENTS: usize = 32;

/// The runs of data a drive's buffer holds for reads, one a segment: what runs of reads
/// (each streaming on from the one before) brought from the media. A run the drive ends
/// takes the segment kept longest ago (first in, first out: a hit does not keep a segment
/// longer).
///
/// Writes leave the segments as they are: a drive keeps its buffer coherent with what it
/// is given to write, so data held stays a hit; only timing is modelled, not contents.
#[derive(Clone, Debug)]
pub struct Segments {
    /// Each segment's bytes of the media, `start..end`; a free segment holds `u64::MAX..0`,
    /// in which no read lies.
    held: [(u64, u64); MAX_SEGMENTS],
    /// The segment the next run takes.
    next: u32,
    /// How many held segments reach into each 1 MiB region's bucket: a read whose first
    /// byte's bucket counts none lies in no segment, and most random reads are ruled out
    /// so, without a look at the segments.
    reach: RegionCounts<20, 256>,
}

impl Default for Segments {
    fn default() -> Self {
        Segments {
            held: [(u64::MAX, 0); MAX_SEGMENTS],
            next: 0,
            reach: RegionCounts::default(),
        }
    }
}

/// Fibonacci hashing's multiplier (2^64 over the golden ratio): a product's top bits, which
/// every bit of the number reaches, spread numbers that differ little over a table.
pub(crate) const FIBONACCI: u64 = 0x9E37_79B9_7F4A_7C15;

/// How many ranges of the media (held segments, held writes) reach into each region of
/// 2^`SHIFT` bytes, by bucket (`BUCKETS`, a power of two; regions hashed into them): a byte
/// whose bucket counts none lies in none of the ranges, known without a look at them.
#[derive(Clone, Debug)]
pub(crate) struct RegionCounts<const SHIFT: u32, const BUCKETS: usize>([u32; BUCKETS]);

impl<const SHIFT: u32, const BUCKETS: usize> Default for RegionCounts<SHIFT, BUCKETS> {
    fn default() -> Self {
        RegionCounts([0; BUCKETS])
    }
}

impl<const SHIFT: u32, const BUCKETS: usize> RegionCounts<SHIFT, BUCKETS> {
    /// The bucket of the region holding byte `x` (the region number's Fibonacci hash).
    #[inline(always)]
    fn bucket(x: u64) -> usize {
        ((x >> SHIFT).wrapping_mul(FIBONACCI) >> (64 - BUCKETS.trailing_zeros())) as usize
    }
    /// Count the range `start..end` into (`up`) or out of the buckets of the regions it
    /// reaches (an empty range reaches none).
    #[inline]
    pub(crate) fn count(&mut self, start: u64, end: u64, up: bool) {
        if start >= end {
            return;
        }
        for region in start >> SHIFT..=(end - 1) >> SHIFT {
            let b = &mut self.0[Self::bucket(region << SHIFT)];
            *b = if up { *b + 1 } else { *b - 1 };
        }
    }
    /// Whether some range counted reaches into the bucket of byte `x`'s region.
    #[inline(always)]
    pub(crate) fn reaches(&self, x: u64) -> bool {
        self.0[Self::bucket(x)] != 0
    }
}

impl Segments {
    /// Whether one of the first `n` segments holds every byte of `start..end`.
    #[inline]
    pub fn hold(&self, start: u64, end: u64, n: u32) -> bool {
        debug_assert!(
            self.held[..(n as usize).min(MAX_SEGMENTS)]
                .iter()
                .all(|&(s, e)| !(s <= start && start < e) || self.reach.reaches(start)),
            "a segment holding the read's first byte counts in its bucket"
        );
        if !self.reach.reaches(start) {
            return false;
        }
        // (Every segment is looked at, the answers joined without a branch: a read lies in
        // none of them almost always, and which compare fails first is a coin toss.)
        let mut hit = false;
        for &(s, e) in &self.held[..(n as usize).min(MAX_SEGMENTS)] {
            hit |= (s <= start) & (end <= e);
        }
        hit
    }

    /// Keep the run `start..end` in one of the first `n` segments (n ≥ 1), in place of the
    /// one kept longest ago. (A run partly held already may be held twice over: the drive
    /// read it from the media because not all of it was held, and what two segments both
    /// hold is the same data.)
    fn put(&mut self, start: u64, end: u64, n: u32) {
        let n = n.clamp(1, MAX_SEGMENTS as u32);
        let i = self.next % n;
        self.next = (i + 1) % n;
        let (s, e) = self.held[i as usize];
        self.reach.count(s, e, false);
        self.held[i as usize] = (start, end);
        self.reach.count(start, end, true);
    }
}

/// What a drive remembers between commands.
#[derive(Clone, Debug)]
pub struct DeviceState {
    pub cyl: u64,
    pub last_end: u64,
    pub last_done: u64,
    pub last_was_read: bool,
    /// Where the last command started: its offset and its place on the media. The angle of
    /// the sector holding `last_end` follows from them ([`DeviceModel::last_end_target`]),
    /// worked out only when a command may stream on from there (for few commands).
    pub last_start: u64,
    pub last_loc: Loc,
    /// Where the run of reads the last read belongs to started (each streaming on from the
    /// one before): what the buffer's segment holds of it, up to a segment's size back from
    /// its end.
    pub run_start: u64,
    /// The runs of earlier reads the buffer still holds.
    pub segments: Box<Segments>,
    /// Spindle phase at time 0, ns (drives are not synchronised).
    pub phase_ns: f64,
    /// Media time spent reading ahead between commands, ns, as far as the next command took
    /// or skipped over: busy time of the drive that no command's service time holds.
    pub ahead_ns: f64,
    /// A flash drive's dies, channels and buffers (empty for a hard disk).
    pub ssd: crate::ssd::SsdState,
}

impl DeviceState {
    pub fn new(phase_frac: f64, model: &DeviceModel) -> Self {
        DeviceState {
            cyl: 0,
            last_end: u64::MAX,
            last_done: 0,
            last_was_read: false,
            last_start: 0,
            last_loc: Loc::default(),
            run_start: 0,
            segments: Box::default(),
            phase_ns: phase_frac * model.rev_ns,
            ahead_ns: 0.0,
            ssd: model.ssd.as_ref().map(|f| f.state()).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn remainder_is_the_generic_one_bit_for_bit() {
        let mut rng = raidlab_workload::Rng::new(11);
        for m in [4e6, 60e9 / 7200.0, 60e9 / 10025.0, 1.0, 3.0e-3] {
            for _ in 0..20000 {
                let x = rng.next_f64() * 1e12 * rng.next_f64().powi(3);
                assert_eq!(rem(x, m).to_bits(), (x % m).to_bits(), "{x} % {m}");
                let e = exact_multiples_below(m);
                let r = rem_exact_below(x, m, e);
                assert_eq!(r.to_bits(), (x % m).to_bits(), "{x} % {m} below {e}");
                // Exact multiples and their neighbours, where the quotient rounds.
                let k = (rng.below(1 << 20) as f64) * m;
                for y in [
                    k,
                    f64::from_bits(k.to_bits() + 1),
                    f64::from_bits(k.to_bits().saturating_sub(1)),
                ] {
                    assert_eq!(rem(y, m).to_bits(), (y % m).to_bits(), "{y} % {m}");
                    let r = rem_exact_below(y, m, exact_multiples_below(m));
                    assert_eq!(r.to_bits(), (y % m).to_bits(), "{y} % {m}");
                }
            }
        }
    }

    #[test]
    fn conversions_are_the_plain_ones_bit_for_bit() {
        let mut rng = raidlab_workload::Rng::new(7);
        for _ in 0..100_000 {
            let x = rng.next_u64() >> (1 + rng.below(63));
            assert_eq!(f64_of(x).to_bits(), (x as f64).to_bits(), "{x}");
            let z = x as f64 * rng.next_f64();
            assert_eq!(u64_of(z), z as u64, "{z}");
        }
        for x in [0, 1, (1 << 53) + 1, (1 << 63) - 1] {
            assert_eq!(f64_of(x).to_bits(), (x as f64).to_bits(), "{x}");
        }
        for y in [0.0, -0.0, 0.5, 9.2e18] {
            assert_eq!(u64_of(y), y as u64, "{y}");
        }
    }

    #[test]
    fn zone_hints_find_the_zone_a_search_finds() {
        let mut rng = raidlab_workload::Rng::new(13);
        for spec in catalog::catalog() {
            let m = DeviceModel::new(&spec, None);
            let search = |lba: u64| {
                m.zones
                    .partition_point(|z| z.first_lba <= lba)
                    .saturating_sub(1)
            };
            let end = m.zones.last().unwrap().first_lba * 2 + 1000;
            let edges = m.zones.iter().flat_map(|z| {
                let b = z.first_lba;
                [b.saturating_sub(1), b, b + 1]
            });
            for lba in edges.chain((0..10_000).map(|_| rng.below(end))) {
                assert_eq!(m.zone_index(lba), search(lba), "{} sector {lba}", spec.name);
            }
        }
    }

    #[test]
    fn seek_table_matches_the_curve() {
        let m = DeviceModel::new(&catalog::find("seagate-st973451ss").unwrap(), None);
        for d in [1, 2, 17, 1000, m.cylinders / 3, m.cylinders] {
            let a = m.seek_ns(5, 5 + d);
            assert_eq!(a.to_bits(), m.seek_curve(d).to_bits());
            assert_eq!(m.seek_ns(5 + d, 5).to_bits(), a.to_bits(), "cached");
        }
        assert_eq!(m.seek_ns(9, 9), 0.0);
    }

    /// Every catalog drive's curve runs from its track-to-track to its full-stroke time, and a
    /// random seek (two independent uniform cylinders) takes its datasheet average on it.
    #[test]
    fn seek_curves_meet_the_datasheet_times() {
        for spec in catalog::catalog()
            .into_iter()
            .filter(|s| s.kind == DeviceKind::Hdd)
        {
            let m = DeviceModel::new(&spec, None);
            let c = m.cylinders;
            let ms = |d: u64| m.seek_curve(d) / 1e6;
            assert!((ms(1) - spec.seek_track_ms).abs() < 1e-9, "{}", spec.name);
            assert!((ms(c) - spec.seek_full_ms).abs() < 1e-9, "{}", spec.name);
            let mut rng = raidlab_workload::Rng::new(3);
            let n = 200_000;
            let mean = (0..n)
                .map(|_| ms(rng.below(c).abs_diff(rng.below(c))))
                .sum::<f64>()
                / n as f64;
            assert!(
                (mean / spec.seek_avg_ms - 1.0).abs() < 0.01,
                "{}: random seeks average {mean:.3} ms, datasheet {}",
                spec.name,
                spec.seek_avg_ms
            );
            // Never shorter for a longer distance.
            let mut last = 0.0;
            for k in 1..=1000u64 {
                let t = ms(c * k / 1000);
                assert!(t >= last, "{}", spec.name);
                last = t;
            }
        }
    }

    /// Short seeks grow with the square root of the distance, long ones linearly, and the
    /// two meet smoothly: one datasheet's curve measured at points either side of the knee.
    #[test]
    fn short_seeks_go_as_the_root_long_ones_linearly() {
        let spec = catalog::find("samsung-hd501lj").unwrap();
        let m = DeviceModel::new(&spec, None);
        let SeekCurve::SqrtLinear { track, knee, .. } = m.seek else {
            panic!("the HD501LJ's times fit the two-part curve")
        };
        assert!((0.05..0.95).contains(&knee), "knee at {knee}");
        let at = |x: f64| m.seek.at(x) - track;
        // Below the knee: four times the distance, twice the time (above track-to-track).
        let x = knee / 16.0;
        assert!((at(4.0 * x) / at(x) - 2.0).abs() < 1e-9);
        // Above it: equal steps, equal increments.
        let (a, b, c) = (
            at(knee + 0.1 * (1.0 - knee)),
            at(knee + 0.2 * (1.0 - knee)),
            at(knee + 0.3 * (1.0 - knee)),
        );
        assert!(((b - a) - (c - b)).abs() < 1e-6 * c);
        // Continuous in value and slope at the knee.
        let h = 1e-7;
        assert!((at(knee - h) - at(knee + h)).abs() < 1e-3 * at(knee));
        let (l, r) = ((at(knee) - at(knee - h)) / h, (at(knee + h) - at(knee)) / h);
        assert!((l / r - 1.0).abs() < 1e-3, "slopes {l} and {r}");
    }

    /// A measured table replaces the fitted curve and is interpolated between its points.
    #[test]
    fn a_measured_seek_table_is_interpolated() {
        let mut spec = catalog::find("samsung-hd501lj").unwrap();
        spec.seek_table = vec![(0.0, 1.0), (0.5, 11.0), (1.0, 16.0)];
        let m = DeviceModel::new(&spec, None);
        let c = m.cylinders;
        assert!((m.seek_curve(c / 4) / 1e6 - 6.0).abs() < 0.01);
        assert!((m.seek_curve(c / 2) / 1e6 - 11.0).abs() < 0.01);
        assert!((m.seek_curve(3 * c / 4) / 1e6 - 13.5).abs() < 0.01);
        assert!((m.seek_curve(c) / 1e6 - 16.0).abs() < 1e-9);
    }

    /// A read that runs onto the next track pays the head switch, and the sectors of that
    /// track lie where the switch leaves the head (track skew): a read a few sectors further
    /// on, started as the crossing one ends, waits only for those sectors to pass, not a turn.
    #[test]
    fn a_track_crossing_leaves_the_head_ahead_of_the_next_sectors() {
        let m = DeviceModel::new(&catalog::find("samsung-hd501lj").unwrap(), Some(false));
        let spt = m.loc(0).spt as u64;
        let mut st = DeviceState::new(0.0, &m);
        // Two reads on one track first, then one crossing into the next.
        let (first, len) = ((spt - 48) * SECTOR, 32 * SECTOR);
        let mut t = m.service(&mut st, 0, first, len, false);
        let cross = first + len + 8 * SECTOR;
        let before = t;
        t += m.service(&mut st, t, cross, 16 * SECTOR, false);
        assert_eq!(
            m.loc(cross + 16 * SECTOR).sector,
            8,
            "the second read runs 8 sectors onto the next track"
        );
        // 32 sectors further on the next track (more than pass during the command's own
        // overhead): the wait is for those sectors, then 16 are read.
        let next = cross + 16 * SECTOR + 32 * SECTOR;
        let svc = m.service(&mut st, t, next, 16 * SECTOR, false) as f64;
        let per_sector = m.rev_ns() / spt as f64;
        assert!((m.command_ns as f64) < 30.0 * per_sector);
        let expect = 48.0 * per_sector;
        assert!(
            (svc - expect).abs() < 2.0 * per_sector + 0.02 * m.rev_ns(),
            "{svc} ns for a read 32 sectors on; expected about {expect} (a turn is {})",
            m.rev_ns()
        );
        assert!(t > before);
    }

    #[test]
    fn queued_sequential_writes_without_the_write_cache_keep_the_media_rate() {
        // Seed 001's drives, write cache off. 64 KiB writes one after another: started as
        // the last ended (queued behind it), each goes on where the head is; sent only
        // after the last ended (no queue), each waits for its first sector to come round
        // again, most of a turn.
        let m = DeviceModel::new(&catalog::find("seagate-st973451ss").unwrap(), Some(false));
        let len = 64 * 1024;
        let media = f64_of(len) * m.sustained_ns_per_byte(&m.loc(0));
        let run = |gap: u64| {
            let mut st = DeviceState::new(0.0, &m);
            let mut t = 0;
            let mut last = 0;
            for i in 0..64 {
                t += gap;
                last = m.service(&mut st, t, i * len, len, true);
                t += last;
            }
            last as f64
        };
        let queued = run(0);
        let sent_after = run(1_000);
        assert!(
            queued < 1.05 * media + 1.0,
            "queued: {queued} ns a write, the media takes {media}"
        );
        assert!(
            sent_after > media + 0.5 * m.rev_ns(),
            "sent after the last ended: {sent_after} ns a write (media {media}, a turn {})",
            m.rev_ns()
        );
    }

    #[test]
    fn zones_give_the_datasheet_rates() {
        let m = DeviceModel::new(&catalog::find("maxtor-7y250m0").unwrap(), None);
        // Seed 002 Table II: 1102 → 610 sectors per track at 7200 rpm = 67.7 → 37.5 MB/s.
        assert!(
            (m.outer_rate() / 1e6 - 67.7).abs() < 0.5,
            "{}",
            m.outer_rate()
        );
        assert!(
            (m.inner_rate() / 1e6 - 37.5).abs() < 0.8,
            "{}",
            m.inner_rate()
        );
    }

    #[test]
    fn random_reads_take_seek_plus_half_a_turn() {
        let spec = catalog::find("seagate-st973451ss").unwrap();
        let m = DeviceModel::new(&spec, Some(false));
        let mut st = DeviceState::new(0.3, &m);
        let mut rng = raidlab_workload::Rng::new(1);
        let (mut t, n) = (0u64, 4000);
        for _ in 0..n {
            let off = rng.below(m.capacity / 65536) * 65536;
            t += m.service(&mut st, t, off, 65536, false);
        }
        let per = t as f64 / n as f64 / 1e6;
        // 2.9 ms seek + 2 ms half turn + 0.6-0.8 ms transfer.
        assert!((5.0..6.5).contains(&per), "{per} ms per random 64 KiB read");
    }

    #[test]
    fn sequential_reads_stream_at_media_rate() {
        let m = DeviceModel::new(&catalog::find("maxtor-7y250m0").unwrap(), None);
        let mut st = DeviceState::new(0.0, &m);
        let mut t = 0;
        for i in 0..1000u64 {
            t += m.service(&mut st, t, i * 65536, 65536, false);
        }
        let rate = 1000.0 * 65536.0 / (t as f64 / 1e9) / 1e6;
        assert!((55.0..68.0).contains(&rate), "{rate} MB/s");
    }

    /// Reads that skip a chunk each time (a RAID 5 member's data chunks past its parity
    /// chunks), each issued after the head has passed the skipped chunk, are reached by the
    /// drive reading on: three quarters of the media rate, not a lost turn each. Past the
    /// read-ahead span the drive positions again.
    #[test]
    fn reads_that_skip_ahead_within_the_read_ahead_stream_on() {
        let m = DeviceModel::new(&catalog::find("samsung-hd501lj").unwrap(), None);
        let chunk = 16384;
        // Between a command's end and the next, the host's round trip: longer than the head
        // takes to pass the skipped chunk (16 KiB at ≤ 86 MB/s ≈ 0.19 ms), so a drive that
        // does not read on must wait a turn for each chunk.
        let gap = 300_000;
        let skip_read = |skip: u64| {
            let mut st = DeviceState::new(0.0, &m);
            let mut t = 0;
            let mut off = 0;
            for _ in 0..600u64 {
                t += m.service(&mut st, t, off, 3 * chunk, false) + gap;
                off += 3 * chunk + skip;
            }
            600.0 * 3.0 * chunk as f64 / (t as f64 / 1e9) / 1e6
        };
        let outer = m.outer_rate() / 1e6;
        let near = skip_read(chunk);
        assert!(near > 0.6 * outer, "{near:.1} MB/s, media {outer:.1}");
        // A skip past the read-ahead span: positioned, a rotation's share lost each time.
        let far = skip_read(m.read_ahead_bytes + chunk);
        assert!(far < 0.6 * near, "{far:.1} MB/s against {near:.1}");
    }

    /// The buffer's segments: a run of reads is held once the head has left it, a read lies
    /// in one only whole, and the runs are kept first in, first out.
    #[test]
    fn segments_hold_the_runs_of_reads_a_drive_has_left() {
        let spec = catalog::find("samsung-hd501lj").unwrap();
        let m = DeviceModel::new(&spec, Some(false));
        let n = spec.cache_segments as u64;
        assert!(n >= 2 && m.segment_bytes == spec.cache_kib as u64 * 1024 / n);
        let mut st = DeviceState::new(0.0, &m);
        let gib = 1 << 30;
        // Two runs far apart: the first is held once the second has begun; each read of the
        // run the head is on, once it is done.
        let mut t = m.service(&mut st, 0, gib, 64 << 10, false);
        assert!(
            !m.holds(&st, t - 1, gib, 4096),
            "not before the read is done"
        );
        assert!(m.holds(&st, t, gib + 4096, 4096));
        t += m.service(&mut st, t, 50 * gib, 8 << 10, false);
        assert!(m.holds(&st, t, gib, 64 << 10));
        assert!(m.holds(&st, t, gib + (32 << 10), 32 << 10));
        assert!(
            !m.holds(&st, t, gib + (32 << 10), 64 << 10),
            "only partly held"
        );
        assert!(!m.holds(&st, t, gib - 512, 4096), "only partly held");
        // A run of reads streaming on from each other is one run, in one segment.
        for k in 1..4u64 {
            t += m.service(&mut st, t, 50 * gib + k * (8 << 10), 8 << 10, false);
        }
        t += m.service(&mut st, t, 9 * gib, 4096, true);
        assert!(m.holds(&st, t, 50 * gib, 32 << 10));
        // Nothing is kept of a write: the run it ended is held, the write is not.
        t += m.service(&mut st, t, 20 * gib, 4096, false);
        assert!(!m.holds(&st, t, 9 * gib, 4096));
        // The oldest run goes when more runs than segments have been kept.
        for k in 0..n {
            t += m.service(&mut st, t, (100 + 2 * k) * gib, 4096, false);
        }
        assert!(!m.holds(&st, t, gib, 4096), "the first run is gone");
        assert!(m.holds(&st, t, 20 * gib, 4096), "a later one is still held");
        // A read of a held run leaves the drive's state as it was: no media.
        let before = (st.last_end, st.last_done, st.cyl);
        assert!(m.holds(&st, t, 102 * gib, 4096));
        assert_eq!(before, (st.last_end, st.last_done, st.cyl));
    }

    /// With no segments (the caching mode page's RCD), a drive serves every read from the
    /// media; so does a flash drive, whose model has its own buffers.
    #[test]
    fn no_segments_no_read_hits() {
        let mut spec = catalog::find("samsung-hd501lj").unwrap();
        spec.cache_segments = 0;
        for spec in [spec, catalog::find("nvme-tlc-1tb").unwrap()] {
            let m = DeviceModel::new(&spec, Some(false));
            let mut st = DeviceState::new(0.0, &m);
            let mut t = m.service(&mut st, 0, 1 << 30, 64 << 10, false);
            t += m.service(&mut st, t, 5 << 30, 64 << 10, false);
            assert!(
                !m.holds(&st, t + 1_000_000_000, 1 << 30, 4096),
                "{}",
                spec.name
            );
            assert!(
                !m.holds(&st, t + 1_000_000_000, 5 << 30, 4096),
                "{}",
                spec.name
            );
        }
    }
}
