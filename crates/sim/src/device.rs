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
    heads: u64,
    zones: Vec<Zone>,
    cylinders: u64,
    seek_track_ns: f64,
    seek_span_ns: f64,
    seek_exp: f64,
    write_settle_ns: f64,
    head_switch_ns: f64,
    iface_ns_per_byte: f64,
    command_ns: u64,
    read_ahead_bytes: u64,
    pub write_cache: bool,
    // SSD
    read_ns: u64,
    program_ns: u64,
    pub units: u32,
    ssd_read_ns_per_byte: f64,
    ssd_write_ns_per_byte: f64,
    /// Seek time by distance in cylinders, filled on first use (bits of the f64; 0 = not yet
    /// computed). The curve's `powf` dominated shortest-positioning-time-first scheduling;
    /// the table gives the very same values.
    seek_table: Vec<Cell<u64>>,
}

/// Where a command starts on the media, worked out once when it is queued so the drive's
/// scheduler can compare positioning times without redoing the zone lookup.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Loc {
    pub cyl: u64,
    pub sector: u64,
    pub spt: u64,
    zone: u32,
    /// Angular position of the first sector, as a fraction of a turn.
    target: f64,
}

impl Loc {
    /// Angular position of the first sector, as a fraction of a turn.
    #[inline]
    pub fn target(&self) -> f64 {
        self.target
    }
}

/// `x % m` for finite x ≥ 0 and m > 0, bit for bit, without the slow generic `fmod`:
/// with the true quotient q, x − q·m is exactly representable and a fused multiply-add
/// returns it exactly; when the rounded division picked a neighbouring q the result falls
/// outside [0, m) and the generic remainder is used instead.
#[inline]
fn rem(x: f64, m: f64) -> f64 {
    // Truncation through a signed integer (exact below 2^63, and one instruction, unlike a
    // call to `trunc` or the unsigned conversion); anything out of range saturates and lands
    // in the fallback.
    let q = (x / m) as i64 as f64;
    let r = q.mul_add(-m, x);
    if r >= 0.0 && r < m {
        r
    } else {
        rem_slow(x, m)
    }
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

impl DeviceModel {
    pub fn new(s: &DiskSpec, write_cache: Option<bool>) -> DeviceModel {
        let rev_ns = 60e9 / s.rpm.max(1.0);
        let heads = s.heads.max(1) as u64;
        let nz = s.zones.max(1) as u64;
        // Equal cylinders per zone; sectors per track fall linearly from outer to inner.
        let spt = |z: u64| -> u64 {
            if nz == 1 {
                s.spt_outer as u64
            } else {
                let (o, i) = (s.spt_outer as f64, s.spt_inner as f64);
                (o + (i - o) * z as f64 / (nz - 1) as f64).round().max(1.0) as u64
            }
        };
        let sectors = s.capacity_bytes / SECTOR;
        let per_cyl_sum: u64 = (0..nz).map(|z| spt(z) * heads).sum();
        let cyl_per_zone = (sectors / per_cyl_sum.max(1)).max(1) + 1;
        let mut zones = Vec::new();
        let (mut lba, mut track) = (0u64, 0u64);
        for z in 0..nz {
            zones.push(Zone {
                first_lba: lba,
                first_track: track,
                spt: spt(z),
            });
            lba += cyl_per_zone * heads * spt(z);
            track += cyl_per_zone * heads;
        }
        let avg_frac =
            (s.seek_avg_ms - s.seek_track_ms) / (s.seek_full_ms - s.seek_track_ms).max(1e-9);
        let ssd = s.kind == DeviceKind::Ssd;
        let cylinders = cyl_per_zone * nz;
        DeviceModel {
            kind: s.kind,
            capacity: s.capacity_bytes,
            rev_ns,
            inv_rev: 1.0 / rev_ns,
            heads,
            zones,
            cylinders,
            seek_track_ns: s.seek_track_ms * 1e6,
            seek_span_ns: (s.seek_full_ms - s.seek_track_ms).max(0.0) * 1e6,
            seek_exp: seek_exponent(avg_frac),
            write_settle_ns: s.write_settle_ms * 1e6,
            head_switch_ns: s.head_switch_ms * 1e6,
            iface_ns_per_byte: 1e3 / s.interface_mb_s.max(1e-3),
            command_ns: (s.command_us * 1e3) as u64,
            read_ahead_bytes: s.read_ahead_kib as u64 * 1024,
            write_cache: write_cache.unwrap_or(s.write_cache),
            read_ns: (s.read_us * 1e3) as u64,
            program_ns: (s.program_us * 1e3) as u64,
            units: if ssd { s.units.max(1) } else { 1 },
            ssd_read_ns_per_byte: if ssd {
                1e3 / s.read_mb_s.max(1e-3) * s.units.max(1) as f64
            } else {
                0.0
            },
            ssd_write_ns_per_byte: if ssd {
                1e3 / s.write_mb_s.max(1e-3) * s.units.max(1) as f64
            } else {
                0.0
            },
            seek_table: if ssd {
                Vec::new()
            } else {
                zeroed_cells(cylinders as usize + 1)
            },
        }
    }

    fn zone_of(&self, lba: u64) -> &Zone {
        let i = self
            .zones
            .partition_point(|z| z.first_lba <= lba)
            .saturating_sub(1);
        &self.zones[i]
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

    pub fn outer_rate(&self) -> f64 {
        self.media_rate(0)
    }
    pub fn inner_rate(&self) -> f64 {
        self.media_rate(self.capacity.saturating_sub(SECTOR))
    }

    fn seek_curve(&self, d: u64) -> f64 {
        let x = d as f64 / self.cylinders.max(1) as f64;
        self.seek_track_ns + self.seek_span_ns * x.powf(self.seek_exp)
    }

    #[inline]
    fn seek_ns(&self, from: u64, to: u64) -> f64 {
        let d = from.abs_diff(to);
        if d == 0 {
            return 0.0;
        }
        match self.seek_table.get(d as usize) {
            Some(c) => {
                let b = c.get();
                if b != 0 {
                    return f64::from_bits(b);
                }
                let v = self.seek_curve(d);
                c.set(v.to_bits());
                v
            }
            None => self.seek_curve(d),
        }
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
        // Whole turns through a signed integer: one instruction (turns stay far below 2^63).
        let a = turns - turns as i64 as f64;
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
        let lba = offset / SECTOR;
        let zi = self
            .zones
            .partition_point(|z| z.first_lba <= lba)
            .saturating_sub(1);
        let z = &self.zones[zi];
        let rel = lba - z.first_lba;
        let track = z.first_track + rel / z.spt;
        let (sector, spt) = (rel % z.spt, z.spt);
        Loc {
            cyl: track / self.heads,
            sector,
            spt,
            zone: zi as u32,
            target: sector as f64 / spt as f64,
        }
    }

    /// Cylinder of a byte offset at or after `from` (same zone or a later one).
    #[inline]
    fn cyl_from(&self, from: &Loc, offset: u64) -> u64 {
        let lba = offset / SECTOR;
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
        let mut pos = self.seek_ns(st.cyl, loc.cyl);
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
        let angle_now = rem(arrive + st.phase_ns, self.rev_ns) / self.rev_ns;
        let mut wait = target - angle_now;
        if wait < 0.0 {
            wait += 1.0;
        }
        pos + wait * self.rev_ns
    }

    /// The start time plus command overhead, as the positioning formula adds them.
    #[inline]
    pub fn t_cmd(&self, t: u64) -> f64 {
        t as f64 + self.command_ns as f64
    }

    /// Positioning time (seek + settle + rotational wait) if a command for `offset` started
    /// at `t` with the head on `cyl`.
    pub fn positioning_ns(&self, st: &DeviceState, t: u64, offset: u64, write: bool) -> f64 {
        let loc = self.loc(offset);
        let pos = self.seek_settle_ns(st, &loc, write);
        self.positioning_from(st, self.t_cmd(t), pos, &loc)
    }

    fn media_ns(&self, loc: &Loc, len: u64) -> f64 {
        let (sector, spt) = (loc.sector, loc.spt);
        let per_sector = self.rev_ns / spt as f64;
        let sectors = len.div_ceil(SECTOR);
        let switches = (sector + sectors) / spt;
        sectors as f64 * per_sector + switches as f64 * self.head_switch_ns
    }

    /// Whether a command at `offset` continues the drive's last one without positioning: a
    /// sequential write taken into the write cache, or a sequential read of what the drive
    /// has been reading ahead since the last read. The scheduler serves such a command first
    /// (it is where the head is), and the service time charges it no seek or rotation.
    #[inline]
    pub fn streams(&self, st: &DeviceState, offset: u64, write: bool) -> bool {
        offset == st.last_end
            && if write {
                self.write_cache
            } else {
                self.read_ahead_bytes > 0 && st.last_was_read
            }
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
        if self.kind == DeviceKind::Ssd {
            let (lat, per) = if write {
                (self.program_ns, self.ssd_write_ns_per_byte)
            } else {
                (self.read_ns, self.ssd_read_ns_per_byte)
            };
            return self.command_ns + lat + (len as f64 * per) as u64;
        }
        let iface = len as f64 * self.iface_ns_per_byte;
        let streams = self.streams(st, offset, write);
        let ns = if streams && !write {
            // The drive kept reading after the last command: what it has buffered moves at
            // interface speed, the rest streams from the media with no positioning.
            // `media_rate(offset)`, from the zone already found for `loc`.
            let z = &self.zones[loc.zone as usize];
            let media_per_byte = 1e9 / ((z.spt * SECTOR) as f64 * 1e9 / self.rev_ns);
            let buffered = (((t.saturating_sub(st.last_done)) as f64 / media_per_byte) as u64)
                .min(self.read_ahead_bytes);
            let rest = len.saturating_sub(buffered);
            self.command_ns as f64 + iface.max(rest as f64 * media_per_byte)
        } else if streams {
            // Write cache: sequential writes stream behind the cache without rotational misses.
            self.command_ns as f64 + iface.max(self.media_ns(loc, len))
        } else {
            let pos = match positioning {
                Some(p) => p,
                None => {
                    let pos = self.seek_settle_ns(st, loc, write);
                    self.positioning_from(st, self.t_cmd(t), pos, loc)
                }
            };
            self.command_ns as f64 + pos + self.media_ns(loc, len).max(iface)
        };
        let ns = ns.max(1.0) as u64;
        st.cyl = self.cyl_from(loc, (offset + len).saturating_sub(1));
        st.last_end = offset + len;
        st.last_done = t + ns;
        st.last_was_read = !write;
        ns
    }
}

/// What a drive remembers between commands.
#[derive(Clone, Debug)]
pub struct DeviceState {
    pub cyl: u64,
    pub last_end: u64,
    pub last_done: u64,
    pub last_was_read: bool,
    /// Spindle phase at time 0, ns (drives are not synchronised).
    pub phase_ns: f64,
}

impl DeviceState {
    pub fn new(phase_frac: f64, model: &DeviceModel) -> Self {
        DeviceState {
            cyl: 0,
            last_end: u64::MAX,
            last_done: 0,
            last_was_read: false,
            phase_ns: phase_frac * model.rev_ns,
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
                // Exact multiples and their neighbours, where the quotient rounds.
                let k = (rng.below(1 << 20) as f64) * m;
                for y in [
                    k,
                    f64::from_bits(k.to_bits() + 1),
                    f64::from_bits(k.to_bits().saturating_sub(1)),
                ] {
                    assert_eq!(rem(y, m).to_bits(), (y % m).to_bits(), "{y} % {m}");
                }
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
}
