//! The fits: pure functions from the probes' samples to drive parameters, each with the
//! spread or residual that says how well the samples pin it down.
//!
//! The drive model they fit is the simulator's (`crates/sim/src/device.rs`): zones of equal
//! cylinders whose sectors per track fall linearly from the outer zone to the inner one, a
//! media rate of sectors × 512 B × revolutions per second, a seek curve by fraction of a full
//! stroke, a uniformly distributed rotational wait, a per-command overhead, and a read-ahead
//! that streams on past the last read.

use crate::plan::{SeekProbe, SMALL};
use crate::Sample;

/// Bytes a sector.
pub const SECTOR: f64 = 512.0;

/// The `q` quantile (0..=1) of sorted values, interpolated linearly; NaN if empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let at = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let i = (at.floor() as usize).min(n - 2);
            let f = at - i as f64;
            sorted[i] * (1.0 - f) + sorted[i + 1] * f
        }
    }
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Median of values (NaN if none).
pub fn median(v: &[f64]) -> f64 {
    quantile(&sorted(v.to_vec()), 0.5)
}

/// Latencies of a probe's requests after the first (the first one also positions the head
/// from wherever the probe before left it), ns.
pub fn steady_latencies(s: &[Sample]) -> Vec<f64> {
    s.iter().skip(1).map(|x| x.lat_ns as f64).collect()
}

// ---------------------------------------------------------------------------------------
// Media rate by position.

/// The sustained rate measured at one position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatePoint {
    /// Middle of the bytes read, as a fraction of the target.
    pub pos: f64,
    pub bytes_s: f64,
}

/// Rate of a sequential probe: its bytes over its time, without the first request.
pub fn sequential_rate(s: &[Sample]) -> Option<f64> {
    let rest = &s.get(1..)?;
    let (bytes, ns) = rest
        .iter()
        .fold((0u64, 0u64), |(b, t), x| (b + x.len, t + x.lat_ns));
    (ns > 0 && bytes > 0).then(|| bytes as f64 * 1e9 / ns as f64)
}

/// The zones the rates show: outer and inner rates, how many zones, and how far the
/// measured rates lie from the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ZoneFit {
    pub outer_bytes_s: f64,
    pub inner_bytes_s: f64,
    pub zones: u32,
    /// Whether the rates fall in steps that could be counted (else `zones` is assumed).
    pub zones_resolved: bool,
    /// Root mean square of (measured − model) / measured over the points.
    pub rms_rel: f64,
    pub points: Vec<RatePoint>,
}

/// Steps smaller than this share of the rate are one zone: below the catalog drives' steps
/// (2–3 % between neighbouring zones) and above the probe's own variation on a simulated
/// drive (its requests' command overhead, well under 1 %).
const ZONE_STEP: f64 = 0.01;

/// Zones assumed when the rates show no countable steps: the catalog's usual count.
pub const ZONES_ASSUMED: u32 = 16;

impl ZoneFit {
    /// One rate everywhere (a drive without zones); `rate_points` as the assumed zone count
    /// is never used for rates then.
    pub fn flat(zones: u32) -> ZoneFit {
        ZoneFit {
            outer_bytes_s: 1.0,
            inner_bytes_s: 1.0,
            zones: zones.max(1),
            zones_resolved: false,
            rms_rel: 0.0,
            points: Vec::new(),
        }
    }

    /// Each zone's rate, outer first, falling linearly (the model's rule).
    pub fn zone_rates(&self) -> Vec<f64> {
        let n = self.zones.max(1);
        (0..n)
            .map(|z| {
                if n == 1 {
                    self.outer_bytes_s
                } else {
                    self.outer_bytes_s
                        + (self.inner_bytes_s - self.outer_bytes_s) * z as f64 / (n - 1) as f64
                }
            })
            .collect()
    }

    /// Where each zone starts, as a fraction of the bytes (equal cylinders a zone, so a
    /// zone's bytes go with its rate), and 1 at the end.
    fn bounds(&self) -> Vec<f64> {
        let r = self.zone_rates();
        let total: f64 = r.iter().sum();
        let mut acc = 0.0;
        let mut v = vec![0.0];
        for x in &r {
            acc += x / total;
            v.push(acc);
        }
        *v.last_mut().unwrap_or(&mut 0.0) = 1.0;
        v
    }

    /// The model's rate at a fraction of the bytes.
    pub fn rate_at(&self, pos: f64) -> f64 {
        let b = self.bounds();
        let z = b[1..].partition_point(|&e| e <= pos).min(b.len() - 2);
        self.zone_rates()[z]
    }

    /// The fraction of the cylinders before a fraction of the bytes.
    pub fn cyl_of_pos(&self, pos: f64) -> f64 {
        let b = self.bounds();
        let n = (b.len() - 1) as f64;
        let p = pos.clamp(0.0, 1.0);
        let z = b[1..].partition_point(|&e| e <= p).min(b.len() - 2);
        (z as f64 + (p - b[z]) / (b[z + 1] - b[z]).max(1e-12)) / n
    }

    /// The fraction of the bytes before a fraction of the cylinders.
    pub fn pos_of_cyl(&self, cyl: f64) -> f64 {
        let b = self.bounds();
        let n = (b.len() - 1) as f64;
        let c = cyl.clamp(0.0, 1.0) * n;
        let z = (c.floor() as usize).min(b.len() - 2);
        b[z] + (c - z as f64) * (b[z + 1] - b[z])
    }
}

/// Fit the zones to rates measured across the target. Neighbouring points within
/// `ZONE_STEP` of each other are one zone; when the rates fall in such steps, never
/// rising and with two points a zone on average, the steps are counted and the outer and
/// inner rates are the first and last steps'. Otherwise (noise, or no zones at all) a
/// straight line through the points gives them and the zone count is assumed.
pub fn fit_zones(points: &[RatePoint]) -> Result<ZoneFit, String> {
    let mut pts: Vec<RatePoint> = points
        .iter()
        .copied()
        .filter(|p| p.bytes_s.is_finite() && p.bytes_s > 0.0)
        .collect();
    if pts.len() < 2 {
        return Err(format!(
            "{} of the sequential rate probes measured a rate (valid: at least 2; is the target readable?)",
            pts.len()
        ));
    }
    pts.sort_by(|a, b| a.pos.total_cmp(&b.pos));
    let mut steps: Vec<Vec<f64>> = vec![vec![pts[0].bytes_s]];
    for p in &pts[1..] {
        let last = steps.last_mut().expect("one step at least");
        let level = last[0];
        if ((p.bytes_s - level) / level).abs() <= ZONE_STEP {
            last.push(p.bytes_s);
        } else {
            steps.push(vec![p.bytes_s]);
        }
    }
    let means: Vec<f64> = steps
        .iter()
        .map(|s| s.iter().sum::<f64>() / s.len() as f64)
        .collect();
    let falling = means.windows(2).all(|w| w[1] < w[0]);
    let resolved = steps.len() >= 2 && falling && steps.len() * 2 <= pts.len();
    let (outer, inner, zones) = if resolved {
        (means[0], means[means.len() - 1], steps.len() as u32)
    } else {
        // Least squares line rate = a + b·pos, read at the ends.
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.pos).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.bytes_s).sum::<f64>() / n;
        let sxx: f64 = pts.iter().map(|p| (p.pos - mx).powi(2)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.pos - mx) * (p.bytes_s - my)).sum();
        let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let (o, i) = (my - b * mx, my + b * (1.0 - mx));
        // The model has the inner zone no faster than the outer one.
        if i > o {
            (my, my, ZONES_ASSUMED)
        } else {
            (o, i.max(o * 0.05), ZONES_ASSUMED)
        }
    };
    let mut fit = ZoneFit {
        outer_bytes_s: outer,
        inner_bytes_s: inner,
        zones,
        zones_resolved: resolved,
        rms_rel: 0.0,
        points: pts.clone(),
    };
    let ss: f64 = pts
        .iter()
        .map(|p| ((p.bytes_s - fit.rate_at(p.pos)) / p.bytes_s).powi(2))
        .sum();
    fit.rms_rel = (ss / pts.len() as f64).sqrt();
    Ok(fit)
}

// ---------------------------------------------------------------------------------------
// Positioning: seek and rotation.

/// What one distance probe measured over its reads that came back from the far band (each
/// seeks the distance backwards: no read-ahead can have brought it in).
#[derive(Clone, Debug, PartialEq)]
pub struct SeekPoint {
    pub probe: SeekProbe,
    pub n: usize,
    pub mean_ns: f64,
    /// Standard error of the mean.
    pub sem_ns: f64,
    /// (95th − 5th percentile) / 0.9: a turn, if the rotational wait is uniform over one.
    pub turn_ns: f64,
    /// The latencies less their median, ns.
    pub centered: Vec<f64>,
}

/// The far-band-to-near-band reads of a distance probe. A read that took less than
/// `buffered_ns` came from the drive's buffer, not the media: a drive keeps what it has read
/// in its buffer's segments (the probe's bands are narrow, and a read may land on data read
/// before, or read on over since), and serves such a read in the time of the command and
/// the transfer, with no seek — and leaves the head where it was. So a near read counts
/// only if it and the far read before it both came from the media, unless fewer than 8
/// pairs did: then every read is about that fast (a flash drive: nothing positions), and
/// every pair is kept.
pub fn seek_point(probe: &SeekProbe, s: &[Sample], buffered_ns: f64) -> Option<SeekPoint> {
    let pairs: Vec<(f64, f64)> = s
        .windows(2)
        .filter(|w| w[0].offset >= probe.b && w[1].offset < probe.a + probe.width)
        .map(|w| (w[0].lat_ns as f64, w[1].lat_ns as f64))
        .collect();
    let media = pairs
        .iter()
        .filter(|&&(far, near)| far >= buffered_ns && near >= buffered_ns);
    let lat: Vec<f64> = if media.clone().count() >= 8 {
        media.map(|&(_, near)| near).collect()
    } else {
        pairs.iter().map(|&(_, near)| near).collect()
    };
    if lat.len() < 8 {
        return None;
    }
    let n = lat.len();
    let mean = lat.iter().sum::<f64>() / n as f64;
    let var = lat.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let q = sorted(lat);
    let med = quantile(&q, 0.5);
    Some(SeekPoint {
        probe: *probe,
        n,
        mean_ns: mean,
        sem_ns: (var / n as f64).sqrt(),
        turn_ns: (quantile(&q, 0.95) - quantile(&q, 0.05)) / 0.9,
        centered: q.iter().map(|x| x - med).collect(),
    })
}

/// How much longer the farthest reads take than the nearest, and whether that is a
/// mechanism: at least half a millisecond (less than any disk's full stroke over its
/// track-to-track seek) and four standard errors. A flash drive's reads take the same
/// time at every distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Positioning {
    pub far_minus_near_ns: f64,
    pub sem_ns: f64,
    pub found: bool,
}

pub fn positioning(points: &[SeekPoint]) -> Positioning {
    let (Some(near), Some(far)) = (points.first(), points.last()) else {
        return Positioning {
            far_minus_near_ns: 0.0,
            sem_ns: 0.0,
            found: false,
        };
    };
    let d = far.mean_ns - near.mean_ns;
    let sem = (far.sem_ns.powi(2) + near.sem_ns.powi(2)).sqrt();
    Positioning {
        far_minus_near_ns: d,
        sem_ns: sem,
        found: d >= 0.5e6 && d >= 4.0 * sem,
    }
}

/// One turn: the spread of the far-to-near reads of all distance probes pooled, each less
/// its probe's median, (p95 − p5) / 0.9 (a uniform wait over a turn spreads them evenly
/// over one); and how far the probes' own spreads scatter (half their interquartile range
/// over the pooled turn).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rotation {
    pub rev_ns: f64,
    pub spread_rel: f64,
    pub probes: usize,
    pub samples: usize,
}

impl Rotation {
    pub fn rpm(&self) -> f64 {
        60e9 / self.rev_ns
    }
}

pub fn fit_rotation(points: &[SeekPoint]) -> Option<Rotation> {
    // Pool the probes whose bands are narrow against their distance (under 1 %), so the
    // seek varies little within each; all of them if fewer than three are.
    let narrow: Vec<&SeekPoint> = points
        .iter()
        .filter(|p| (p.probe.width as f64) < 0.01 * (p.probe.b - p.probe.a) as f64)
        .collect();
    let pool: Vec<&SeekPoint> = if narrow.len() >= 3 {
        narrow
    } else {
        points.iter().collect()
    };
    let pooled = sorted(
        pool.iter()
            .flat_map(|p| p.centered.iter().copied())
            .collect(),
    );
    let rev = (quantile(&pooled, 0.95) - quantile(&pooled, 0.05)) / 0.9;
    let t = sorted(points.iter().map(|p| p.turn_ns).collect());
    (rev.is_finite() && rev > 0.0).then(|| Rotation {
        rev_ns: rev,
        spread_rel: (quantile(&t, 0.75) - quantile(&t, 0.25)) / 2.0 / rev,
        probes: t.len(),
        samples: pooled.len(),
    })
}

/// The drive's fixed part of a small read: its command overhead and the interface rate it
/// moves buffered data at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overhead {
    pub command_ns: f64,
    pub iface_bytes_s: f64,
    /// Whether both come from reads of buffered data (else the command overhead is folded
    /// into the seek times and the interface is taken as the fastest media rate).
    pub measured: bool,
    /// Spread of the small buffered reads: (p90 − p10) / 2, ns.
    pub spread_ns: f64,
}

/// From small sequential reads after a pause (the data already read ahead, so only the
/// command and the transfer over the interface remain) of two sizes: the line through
/// their medians. Without read-ahead the two cannot be told apart from positioning.
pub fn fit_overhead(small: &[Sample], large: &[Sample], fastest_media_bytes_s: f64) -> Overhead {
    let (a, b) = (steady_latencies(small), steady_latencies(large));
    let (la, lb) = (median(&a), median(&b));
    let (sa, sb) = (
        small.get(1).map_or(0, |x| x.len) as f64,
        large.get(1).map_or(0, |x| x.len) as f64,
    );
    if la.is_finite() && lb.is_finite() && lb > la && sb > sa {
        let per_byte = (lb - la) / (sb - sa);
        let q = sorted(a);
        Overhead {
            command_ns: (la - sa * per_byte).max(0.0),
            iface_bytes_s: 1e9 / per_byte,
            measured: true,
            spread_ns: (quantile(&q, 0.9) - quantile(&q, 0.1)) / 2.0,
        }
    } else {
        Overhead {
            command_ns: 0.0,
            iface_bytes_s: fastest_media_bytes_s,
            measured: false,
            spread_ns: 0.0,
        }
    }
}

/// A measured seek curve.
#[derive(Clone, Debug, PartialEq)]
pub struct SeekFit {
    /// (fraction of a full stroke, ms), rising, times not falling.
    pub table: Vec<(f64, f64)>,
    /// The table's average over random seeks (distance density 2(1 − x)), ms.
    pub avg_ms: f64,
    /// Root mean square of what made the table not fall (ms): 0 when the raw times rose.
    pub monotone_rms_ms: f64,
    /// Largest standard error of a point, ms.
    pub max_sem_ms: f64,
}

/// Seek time at each distance: the probe's mean less half a turn (the mean rotational wait)
/// less the fixed part of a small read there (`fixed_ns`, the command and transfer the
/// model charges a read at the near band), then made non-decreasing by pooling neighbours
/// that fall (the model's table must not fall).
pub fn fit_seeks(
    points: &[SeekPoint],
    rev_ns: f64,
    fixed_ns: impl Fn(&SeekProbe) -> f64,
) -> SeekFit {
    let raw: Vec<(f64, f64)> = points
        .iter()
        .map(|p| {
            let ns = p.mean_ns - rev_ns / 2.0 - fixed_ns(&p.probe);
            (p.probe.stroke, (ns / 1e6).max(0.0))
        })
        .collect();
    // Pool adjacent violators.
    let mut blocks: Vec<(f64, usize)> = Vec::new();
    for &(_, y) in &raw {
        blocks.push((y, 1));
        while blocks.len() >= 2 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
            let (y2, n2) = blocks.pop().expect("two blocks");
            let (y1, n1) = blocks.pop().expect("two blocks");
            blocks.push((
                (y1 * n1 as f64 + y2 * n2 as f64) / (n1 + n2) as f64,
                n1 + n2,
            ));
        }
    }
    let ys: Vec<f64> = blocks
        .iter()
        .flat_map(|&(y, n)| std::iter::repeat_n(y, n))
        .collect();
    let table: Vec<(f64, f64)> = raw
        .iter()
        .zip(&ys)
        .map(|(&(x, _), &y)| (x, (y * 1000.0).round() / 1000.0))
        .collect();
    let monotone_rms_ms = if raw.is_empty() {
        0.0
    } else {
        (raw.iter()
            .zip(&ys)
            .map(|(&(_, a), &b)| (a - b).powi(2))
            .sum::<f64>()
            / raw.len() as f64)
            .sqrt()
    };
    SeekFit {
        avg_ms: random_seek_mean(&table),
        table,
        monotone_rms_ms,
        max_sem_ms: points.iter().map(|p| p.sem_ns / 1e6).fold(0.0, f64::max),
    }
}

/// The table's seek time at `x` as the simulator reads it: linear between points, the end
/// points' times beyond them.
pub fn table_at(t: &[(f64, f64)], x: f64) -> f64 {
    let i = t.partition_point(|&(tx, _)| tx < x);
    match (i.checked_sub(1).map(|j| t[j]), t.get(i)) {
        (Some((x0, y0)), Some(&(x1, y1))) if x1 > x0 => y0 + (y1 - y0) * (x - x0) / (x1 - x0),
        (_, Some(&(_, y))) | (Some((_, y)), None) => y,
        (None, None) => 0.0,
    }
}

/// Mean seek over random seeks (two independent uniform positions: distance density
/// 2(1 − x)), by the midpoint rule.
pub fn random_seek_mean(t: &[(f64, f64)]) -> f64 {
    let n = 4000;
    (0..n)
        .map(|i| {
            let x = (i as f64 + 0.5) / n as f64;
            table_at(t, x) * 2.0 * (1.0 - x) / n as f64
        })
        .sum()
}

/// The read-ahead span: what a sequential read after a pause did not have to read from the
/// media.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadAhead {
    pub bytes: u64,
    /// The paused reads were as fast as the interface moves them: the drive held at least
    /// `bytes` (what the media could not have read during the transfer), maybe more.
    pub at_least: bool,
    /// (p75 − p25) / 2 of the paused reads' latencies, as bytes at the media rate.
    pub spread_bytes: f64,
}

/// From sequential reads of one size back to back (`stream`: each streams from the media)
/// and after pauses long enough to buffer a whole read (`paused`): the media time the
/// pause saved, at the media rate, is what the drive read ahead — unless a paused read took
/// no longer than the command and its transfer over the interface (`o`), when all of it was
/// buffered.
pub fn fit_read_ahead(
    stream: &[Sample],
    paused: &[Sample],
    o: &Overhead,
    media_bytes_s: f64,
) -> Option<ReadAhead> {
    let (s, p) = (median_latency(stream), median_latency(paused));
    let len = paused.get(1)?.len as f64;
    if !(s.is_finite() && p.is_finite()) {
        return None;
    }
    let q = sorted(steady_latencies(paused));
    let spread_bytes = (quantile(&q, 0.75) - quantile(&q, 0.25)) / 2.0 * media_bytes_s / 1e9;
    let floor = o.command_ns + len * 1e9 / o.iface_bytes_s;
    let saved = ((s - p) * media_bytes_s / 1e9).clamp(0.0, len);
    let at_least = o.measured && p <= floor * 1.05;
    // At the floor the media part hid behind the transfer: the drive held at least what the
    // media could not have read meanwhile.
    let hidden = len * (1.0 - media_bytes_s / o.iface_bytes_s).max(0.0);
    Some(ReadAhead {
        bytes: if at_least { hidden } else { saved } as u64 / 1024 * 1024,
        at_least,
        spread_bytes,
    })
}

/// Small reads there are no other samples of: the median latency of a probe, ns.
pub fn median_latency(s: &[Sample]) -> f64 {
    median(&steady_latencies(s))
}

/// What reads show of a flash drive.
#[derive(Clone, Debug, PartialEq)]
pub struct FlashFit {
    /// Median small random read at depth 1, ns.
    pub lat1_ns: f64,
    pub lat1_spread_ns: f64,
    /// Small random reads a second at each depth.
    pub iops: Vec<(u32, f64)>,
    /// Sequential large reads at depth 8, bytes/s.
    pub read_bytes_s: f64,
    /// Reads served side by side: the most reads a second times the depth-1 latency
    /// (Little's law: what is in service equals rate × time in service).
    pub units: u32,
    /// Whether the rate stopped growing with the depth (the deepest probe under 10 % above
    /// the one before it); if not, `units` is a lower bound.
    pub saturated: bool,
    /// A read's time on its die, µs: the depth-1 latency less its transfers (over a channel
    /// at `channel_mb_s` and out at the read rate); command overhead included.
    pub read_us: f64,
}

/// Bytes a second the simulator's flash channels move unless told otherwise (the
/// `channel_mb_s` default), MB/s: the fit subtracts a small read's trip over one.
pub const CHANNEL_MB_S: f64 = 800.0;

pub fn fit_flash(depth1: &[Sample], iops: &[(u32, f64)], read_bytes_s: f64) -> FlashFit {
    let q = sorted(steady_latencies(depth1));
    let lat1 = quantile(&q, 0.5);
    let best = iops.iter().map(|x| x.1).fold(0.0, f64::max);
    let units = (best * lat1 / 1e9).round().clamp(1.0, 1024.0) as u32;
    let saturated = match iops {
        [.., (_, a), (_, b)] => *b < 1.1 * a,
        _ => false,
    };
    let xfer_ns = SMALL as f64 * 1e3 / CHANNEL_MB_S + SMALL as f64 * 1e9 / read_bytes_s.max(1.0);
    FlashFit {
        lat1_ns: lat1,
        lat1_spread_ns: (quantile(&q, 0.9) - quantile(&q, 0.1)) / 2.0,
        iops: iops.to_vec(),
        read_bytes_s,
        units,
        saturated,
        read_us: ((lat1 - xfer_ns) / 1e3).max(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_are_counted_from_steps_and_mapped_by_cylinder() {
        // Four zones from 100 to 70 MB/s, equal cylinders: bytes 100:90:80:70.
        let truth = ZoneFit {
            outer_bytes_s: 100e6,
            inner_bytes_s: 70e6,
            zones: 4,
            zones_resolved: true,
            rms_rel: 0.0,
            points: vec![],
        };
        let pts: Vec<RatePoint> = (0..16)
            .map(|i| {
                let pos = (i as f64 + 0.5) / 16.0;
                RatePoint {
                    pos,
                    bytes_s: truth.rate_at(pos),
                }
            })
            .collect();
        let f = fit_zones(&pts).unwrap();
        assert_eq!(f.zones, 4);
        assert!(f.zones_resolved);
        assert!((f.outer_bytes_s - 100e6).abs() < 1.0 && (f.inner_bytes_s - 70e6).abs() < 1.0);
        assert!(f.rms_rel < 1e-12);
        // The first zone holds 100/340 of the bytes and a quarter of the cylinders.
        assert!((f.cyl_of_pos(100.0 / 340.0) - 0.25).abs() < 1e-9);
        for c in [0.0, 0.1, 0.37, 0.5, 0.99, 1.0] {
            assert!((f.cyl_of_pos(f.pos_of_cyl(c)) - c).abs() < 1e-9, "{c}");
        }
    }

    #[test]
    fn noisy_rates_give_a_line_and_an_assumed_zone_count() {
        let pts: Vec<RatePoint> = (0..20)
            .map(|i| RatePoint {
                pos: i as f64 / 19.0,
                bytes_s: 200e6 - 80e6 * i as f64 / 19.0 + if i % 2 == 0 { 3e6 } else { -3e6 },
            })
            .collect();
        let f = fit_zones(&pts).unwrap();
        assert!(!f.zones_resolved);
        assert_eq!(f.zones, ZONES_ASSUMED);
        assert!((f.outer_bytes_s - 200e6).abs() < 4e6, "{}", f.outer_bytes_s);
        assert!((f.inner_bytes_s - 120e6).abs() < 4e6, "{}", f.inner_bytes_s);
        assert!(fit_zones(&pts[..1]).is_err());
    }

    fn probe(stroke: f64) -> SeekProbe {
        SeekProbe {
            stroke,
            a: 0,
            b: 1 << 30,
            width: 1 << 20,
        }
    }

    /// Samples alternating far → near with a uniform rotational wait over `rev` plus `base`.
    fn alternating(base: f64, rev: f64, n: usize) -> Vec<Sample> {
        (0..n)
            .map(|i| Sample {
                offset: if i % 2 == 0 { 1 << 30 } else { 4096 },
                len: 4096,
                lat_ns: (base + rev * ((i * 37 % 101) as f64 + 0.5) / 101.0) as u64,
            })
            .collect()
    }

    #[test]
    fn a_turn_and_the_seek_come_out_of_uniform_waits() {
        let rev = 4e6;
        let pts: Vec<SeekPoint> = [(0.01, 1.0e6), (0.5, 4.0e6), (1.0, 6.0e6)]
            .iter()
            .map(|&(x, seek)| {
                seek_point(&probe(x), &alternating(seek + 50e3, rev, 800), 0.0).unwrap()
            })
            .collect();
        let r = fit_rotation(&pts).unwrap();
        assert!((r.rev_ns - rev).abs() < 0.02 * rev, "{r:?}");
        let s = fit_seeks(&pts, r.rev_ns, |_| 50e3);
        for (&(_, ms), want) in s.table.iter().zip([1.0, 4.0, 6.0]) {
            assert!((ms - want).abs() < 0.05, "{:?}", s.table);
        }
        assert!(positioning(&pts).found);
        // The same time at every distance: nothing positions.
        let flat: Vec<SeekPoint> = [0.01, 1.0]
            .iter()
            .map(|&x| seek_point(&probe(x), &alternating(80e3, 20e3, 400), 160e3).unwrap())
            .collect();
        assert!(!positioning(&flat).found);
    }

    /// Reads a drive served from its buffer (a tenth of a millisecond: the command and the
    /// transfer) are left out of a probe; a device whose every read is that fast keeps them.
    #[test]
    fn reads_from_the_drive_buffer_are_left_out_of_a_seek_probe() {
        let (rev, seek, fixed) = (8.3e6, 4.0e6, 50e3);
        let mut s = alternating(seek + fixed, rev, 800);
        // Every third near read from the buffer, and every fifth far one: the near read after
        // a far one from the buffer did not seek (the head had stayed near).
        for k in 0..s.len() {
            if k % 2 == 0 && k % 5 == 0 {
                s[k].lat_ns = 85_000;
                s[k + 1].lat_ns -= seek as u64;
            }
            if k % 2 == 1 && k % 3 == 0 {
                s[k].lat_ns = 90_000;
            }
        }
        let buffered = 2.0 * 82e3;
        let p = seek_point(&probe(0.5), &s, buffered).unwrap();
        // 400 pairs; a third lose their near read, a fifth their far one, a fifteenth both.
        assert!(p.n > 200 && p.n < 230, "{}", p.n);
        assert!((p.turn_ns - rev).abs() < 0.03 * rev, "{p:?}");
        assert!(
            (p.mean_ns - (seek + fixed + rev / 2.0)).abs() < 0.03 * rev,
            "{p:?}"
        );
        // Kept, the buffer's reads would have widened the turn and lowered the mean.
        let kept = seek_point(&probe(0.5), &s, 0.0).unwrap();
        assert_eq!(kept.n, 400);
        assert!(kept.turn_ns > 1.2 * rev, "{kept:?}");
        // A flash drive: every read about as fast as a sequential one, none left out.
        let flat = seek_point(&probe(0.5), &alternating(80e3, 20e3, 400), buffered).unwrap();
        assert_eq!(flat.n, 200);
    }

    #[test]
    fn a_falling_seek_is_pooled_into_a_flat_step() {
        let pts: Vec<SeekPoint> = [(0.1, 3.0e6), (0.2, 2.0e6), (0.4, 5.0e6)]
            .iter()
            .map(|&(x, m)| SeekPoint {
                probe: probe(x),
                n: 100,
                mean_ns: m,
                sem_ns: 1e4,
                turn_ns: 0.0,
                centered: vec![],
            })
            .collect();
        let s = fit_seeks(&pts, 0.0, |_| 0.0);
        assert_eq!(s.table, vec![(0.1, 2.5), (0.2, 2.5), (0.4, 5.0)]);
        assert!((s.monotone_rms_ms - (0.5f64.powi(2) * 2.0 / 3.0).sqrt()).abs() < 1e-9);
    }

    #[test]
    fn overhead_and_read_ahead_from_buffered_reads() {
        // Command 40 µs, interface 200 MB/s; reads of 4 KiB and 64 KiB.
        let read = |len: u64| Sample {
            offset: 0,
            len,
            lat_ns: (40e3 + len as f64 * 5.0) as u64,
        };
        let o = fit_overhead(&[read(4096); 10], &[read(65536); 10], 100e6);
        assert!(o.measured && (o.command_ns - 40e3).abs() < 2.0, "{o:?}");
        assert!((o.iface_bytes_s - 200e6).abs() < 1e4, "{o:?}");
        // 512 KiB reads at 100 MB/s media: streamed, and with 128 KiB buffered (the rest
        // from the media takes longer than the whole over the interface).
        let len = 512u64 << 10;
        let at = |lat: f64| {
            vec![
                Sample {
                    offset: 0,
                    len,
                    lat_ns: lat as u64,
                };
                5
            ]
        };
        let stream = at(40e3 + len as f64 * 10.0);
        let paused = at(40e3 + (len - (128 << 10)) as f64 * 10.0);
        let ra = fit_read_ahead(&stream, &paused, &o, 100e6).unwrap();
        assert!(
            !ra.at_least && ra.bytes.abs_diff(128 << 10) <= 1024,
            "{ra:?}"
        );
        // As fast as the interface: at least half of it was held (the media reads at half
        // the interface's rate).
        let ra = fit_read_ahead(&stream, &at(40e3 + len as f64 * 5.0), &o, 100e6).unwrap();
        assert!(ra.at_least && ra.bytes == len / 2, "{ra:?}");
    }
}
