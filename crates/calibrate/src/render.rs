//! What a calibration found, as plain data ([`Calibration`]), and its renderings: a
//! `[[disk]]` stanza for a system file (each value with the probe it came from and its
//! spread, or why it is not fitted), a text summary, and JSON (bytes, ns).

use crate::fit::{
    FlashFit, Overhead, Positioning, ReadAhead, Rotation, SeekFit, SeekPoint, ZoneFit, SECTOR,
};
use std::fmt::Write;

/// A hard disk's fitted mechanics.
#[derive(Clone, Debug, PartialEq)]
pub struct HddFit {
    pub rotation: Rotation,
    pub overhead: Overhead,
    pub seek: SeekFit,
    pub seek_points: Vec<SeekPoint>,
    /// None: sequential small reads wait as long as random ones in a band (no read-ahead).
    pub read_ahead: Option<ReadAhead>,
}

impl HddFit {
    /// Sectors per track for a media rate, given the fitted turn.
    pub fn spt(&self, bytes_s: f64) -> u32 {
        (bytes_s * self.rotation.rev_ns / 1e9 / SECTOR)
            .round()
            .max(1.0) as u32
    }
}

/// What the drive turned out to be.
#[derive(Clone, Debug, PartialEq)]
pub enum Drive {
    Hdd(HddFit),
    Flash(FlashFit),
}

/// Everything a calibration found.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// The target as given, and the date of the measurement (the caller's clock).
    pub target: String,
    pub date: String,
    /// The `[[disk]]` name.
    pub name: String,
    /// Bytes probed (from the start of the target).
    pub size: u64,
    /// Requests of each latency probe.
    pub requests: u64,
    pub zones: ZoneFit,
    /// Median small sequential and random read, ns.
    pub seq_small_ns: f64,
    pub rand_small_ns: f64,
    pub positioning: Positioning,
    pub drive: Drive,
}

fn mb(bytes_s: f64) -> f64 {
    bytes_s / 1e6
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// One `key = value` line with its comment, the comments lined up.
fn line(s: &mut String, kv: String, comment: &str) {
    let _ = writeln!(s, "{kv:<25} # {comment}");
}

impl Calibration {
    /// The `[[disk]]` stanza, ready to paste into a system file.
    pub fn stanza(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# raidlab calibrate {} on {}: read-only probes, direct, {} requests a latency probe.",
            self.target, self.date, self.requests
        );
        let _ = writeln!(s, "[[disk]]");
        line(
            &mut s,
            format!("name = \"{}\"", self.name),
            "a name of your choice",
        );
        let z = &self.zones;
        let zone_src = if z.zones_resolved {
            format!(
                "media rate by position: {} steps over {} sequential probes",
                z.zones,
                z.points.len()
            )
        } else {
            format!(
                "assumed: the {} sequential probes show no steps to count",
                z.points.len()
            )
        };
        match &self.drive {
            Drive::Hdd(h) => {
                let r = &h.rotation;
                line(
                    &mut s,
                    "kind = \"hdd\"".into(),
                    &format!(
                        "seek probe: far reads take {:.2} ms longer than near ones (±{:.3} ms)",
                        ms(self.positioning.far_minus_near_ns),
                        ms(self.positioning.sem_ns)
                    ),
                );
                line(
                    &mut s,
                    format!("capacity_bytes = {}", self.size),
                    "the bytes probed",
                );
                line(&mut s, format!("rpm = {:.0}", r.rpm()), &format!(
                    "rotation: spread (p95−p5)/0.9 of {} far-to-near reads = one turn of {:.3} ms; the {} distance probes alone scatter ±{:.1} %",
                    r.samples,
                    ms(r.rev_ns),
                    r.probes,
                    r.spread_rel * 100.0
                ));
                line(
                    &mut s,
                    "heads = 4".into(),
                    "not fitted (reads do not show the surfaces); sets where track switches fall",
                );
                line(&mut s, format!("zones = {}", z.zones), &zone_src);
                line(&mut s, format!("spt_outer = {}", h.spt(z.outer_bytes_s)), &format!(
                    "media rate by position: {:.1} MB/s outer ÷ (512 B × turns/s), rms residual {:.1} %",
                    mb(z.outer_bytes_s),
                    z.rms_rel * 100.0
                ));
                line(
                    &mut s,
                    format!("spt_inner = {}", h.spt(z.inner_bytes_s)),
                    &format!(
                        "media rate by position: {:.1} MB/s inner",
                        mb(z.inner_bytes_s)
                    ),
                );
                let t = &h.seek.table;
                let (first, last) = (
                    t.first().copied().unwrap_or((0.0, 0.0)),
                    t.last().copied().unwrap_or((1.0, 0.0)),
                );
                line(
                    &mut s,
                    format!("seek_track_ms = {:.3}", first.1),
                    &format!(
                        "seek probe at the shortest distance, {} of a stroke",
                        first.0
                    ),
                );
                line(
                    &mut s,
                    format!("seek_avg_ms = {:.3}", h.seek.avg_ms),
                    "seek_table's mean over random seeks",
                );
                line(
                    &mut s,
                    format!("seek_full_ms = {:.3}", last.1),
                    "seek probe over the full stroke",
                );
                let pts: Vec<String> = t.iter().map(|(x, y)| format!("[{x:.6}, {y:.3}]")).collect();
                let _ = writeln!(
                    s,
                    "# seek probe: mean of far-to-near small reads at {} distances less half a turn and the fixed part of a read; largest standard error {:.3} ms; pooled to rise: rms {:.3} ms",
                    t.len(),
                    h.seek.max_sem_ms,
                    h.seek.monotone_rms_ms
                );
                let _ = writeln!(s, "seek_table = [{}]", pts.join(", "));
                let o = &h.overhead;
                if o.measured {
                    line(&mut s, format!("command_us = {:.1}", o.command_ns / 1e3), &format!(
                        "buffered small reads of two sizes after a pause: the line's intercept, spread ±{:.1} µs",
                        o.spread_ns / 1e3
                    ));
                    line(
                        &mut s,
                        format!("interface_mb_s = {:.1}", mb(o.iface_bytes_s)),
                        "buffered small reads of two sizes: the line's slope",
                    );
                } else {
                    line(
                        &mut s,
                        "command_us = 0.0".into(),
                        "not separable without read-ahead: folded into the seek times",
                    );
                    line(
                        &mut s,
                        format!("interface_mb_s = {:.1}", mb(o.iface_bytes_s)),
                        "at least the fastest media rate measured (reads at depth 1 show no more)",
                    );
                }
                match &h.read_ahead {
                    Some(ra) => line(&mut s, format!("read_ahead_kib = {}", ra.bytes / 1024), &format!(
                        "read-ahead probe: 512 KiB reads after a pause against back to back{}, spread ±{:.0} KiB; small sequential reads {:.3} ms against random {:.3} ms",
                        if ra.at_least { " (at least this: all of a paused read was buffered)" } else { "" },
                        ra.spread_bytes / 1024.0,
                        ms(self.seq_small_ns),
                        ms(self.rand_small_ns)
                    )),
                    None => line(&mut s, "read_ahead_kib = 0".into(), &format!(
                        "small sequential reads ({:.3} ms) wait like random ones ({:.3} ms): no read-ahead",
                        ms(self.seq_small_ns),
                        ms(self.rand_small_ns)
                    )),
                }
                line(
                    &mut s,
                    "write_settle_ms = 0.0".into(),
                    "not fitted: the probes only read",
                );
                line(
                    &mut s,
                    "head_switch_ms = 0.0".into(),
                    "not fitted: inside the sequential rates (track skew hides it)",
                );
                line(
                    &mut s,
                    "write_cache = false".into(),
                    "not fitted: the probes only read",
                );
                let _ = writeln!(s, "# flash fields, unused by a hard disk");
                let _ = writeln!(
                    s,
                    "read_us = 0.0\nprogram_us = 0.0\nunits = 1\nread_mb_s = 0.0\nwrite_mb_s = 0.0"
                );
            }
            Drive::Flash(f) => {
                line(&mut s, "kind = \"ssd\"".into(), &format!(
                    "seek probe: no rotation found (far reads {:+.3} ms against near ones, ±{:.3} ms)",
                    ms(self.positioning.far_minus_near_ns),
                    ms(self.positioning.sem_ns)
                ));
                line(
                    &mut s,
                    format!("capacity_bytes = {}", self.size),
                    "the bytes probed",
                );
                line(&mut s, format!("read_us = {:.1}", f.read_us), &format!(
                    "depth-1 small random reads: median {:.1} µs (±{:.1}) less their transfers; command overhead included",
                    f.lat1_ns / 1e3,
                    f.lat1_spread_ns / 1e3
                ));
                line(
                    &mut s,
                    "command_us = 0.0".into(),
                    "inside read_us (reads cannot tell them apart)",
                );
                let best = f
                    .iops
                    .iter()
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .copied()
                    .unwrap_or((1, 0.0));
                line(&mut s, format!("units = {}", f.units), &format!(
                    "depth probe: {:.0} reads/s at depth {} × the depth-1 latency (Little's law){}",
                    best.1,
                    best.0,
                    if f.saturated { "" } else { "; still rising at the deepest probe: at least this" }
                ));
                line(
                    &mut s,
                    format!("read_mb_s = {:.1}", mb(f.read_bytes_s)),
                    "sequential 1 MiB reads at depth 8",
                );
                line(
                    &mut s,
                    format!("interface_mb_s = {:.1}", mb(f.read_bytes_s)),
                    "as read_mb_s: reads show one rate out",
                );
                line(&mut s, "program_us = 0.0".into(), "NOT FITTED: reads cannot show writes; set from a datasheet before simulating writes");
                line(
                    &mut s,
                    format!("write_mb_s = {:.1}", mb(f.read_bytes_s)),
                    "NOT FITTED: the read rate as a placeholder; set from a datasheet",
                );
                let _ = writeln!(s, "# not fitted either: channels, channel_mb_s, page_kib, slc_cache_gib, max_iops (the model's defaults)");
                let _ = writeln!(s, "# hard-disk fields, unused by a flash drive's service times (the simulator still lays");
                let _ = writeln!(s, "# out a geometry for it and orders a deep queue by it, so one zone of 1000 sectors a track)");
                let _ = writeln!(s, "rpm = 7200.0\nheads = 1\nzones = 1\nspt_outer = 1000\nspt_inner = 1000\nseek_track_ms = 0.0\nseek_avg_ms = 0.0\nseek_full_ms = 0.0\nwrite_settle_ms = 0.0\nhead_switch_ms = 0.0\nread_ahead_kib = 0\nwrite_cache = false");
            }
        }
        s
    }

    /// A summary in words.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "calibrate {} ({:.1} GB probed, {})",
            self.target,
            self.size as f64 / 1e9,
            self.date
        );
        let z = &self.zones;
        let _ = match (&self.drive, z.zones_resolved) {
            (Drive::Hdd(_), true) => writeln!(
                s,
                "  media rate: {:.1} MB/s outer → {:.1} MB/s inner in {} zones (rms residual {:.1} %)",
                mb(z.outer_bytes_s),
                mb(z.inner_bytes_s),
                z.zones,
                z.rms_rel * 100.0
            ),
            _ => writeln!(
                s,
                "  sequential 1 MiB reads at depth 1: {:.1} MB/s at the start → {:.1} MB/s at the end, no zones counted (rms residual {:.1} %)",
                mb(z.outer_bytes_s),
                mb(z.inner_bytes_s),
                z.rms_rel * 100.0
            ),
        };
        let _ = writeln!(
            s,
            "  small reads: sequential {:.3} ms, random {:.3} ms (medians)",
            ms(self.seq_small_ns),
            ms(self.rand_small_ns)
        );
        match &self.drive {
            Drive::Hdd(h) => {
                let _ = writeln!(
                    s,
                    "  rotation: {:.0} rpm (a turn {:.3} ms, ±{:.1} % over {} probes)",
                    h.rotation.rpm(),
                    ms(h.rotation.rev_ns),
                    h.rotation.spread_rel * 100.0,
                    h.rotation.probes
                );
                let t = &h.seek.table;
                let _ = writeln!(
                    s,
                    "  seek: {:.3} / {:.3} / {:.3} ms track / average / full ({} points)",
                    t.first().map_or(0.0, |p| p.1),
                    h.seek.avg_ms,
                    t.last().map_or(0.0, |p| p.1),
                    t.len()
                );
                let o = &h.overhead;
                let _ = writeln!(
                    s,
                    "  command overhead {:.1} µs, interface {:.1} MB/s{}",
                    o.command_ns / 1e3,
                    mb(o.iface_bytes_s),
                    if o.measured {
                        ""
                    } else {
                        " (not measured: no read-ahead)"
                    }
                );
                let _ = match &h.read_ahead {
                    Some(ra) => writeln!(
                        s,
                        "  read-ahead: {}{} KiB",
                        if ra.at_least { "≥ " } else { "" },
                        ra.bytes / 1024
                    ),
                    None => writeln!(s, "  read-ahead: none"),
                };
            }
            Drive::Flash(f) => {
                let _ = writeln!(
                    s,
                    "  no rotation found: far reads {:+.3} ms against near ones (±{:.3} ms) — a flash drive (or a device that hides its mechanics)",
                    ms(self.positioning.far_minus_near_ns),
                    ms(self.positioning.sem_ns)
                );
                let iops: Vec<String> = f.iops.iter().map(|(d, x)| format!("{d}:{x:.0}")).collect();
                let _ = writeln!(
                    s,
                    "  4 KiB random reads a second by depth: {}",
                    iops.join(" ")
                );
                let _ = writeln!(
                    s,
                    "  depth-1 read {:.1} µs, {} reads side by side, sequential {:.1} MB/s",
                    f.lat1_ns / 1e3,
                    f.units,
                    mb(f.read_bytes_s)
                );
                let _ = writeln!(s, "  not fitted from reads: program_us, write_mb_s, slc_cache_gib, channels, max_iops");
            }
        }
        s
    }

    /// JSON: rates in bytes/s, times in ns, the stanza as a string.
    pub fn json(&self) -> serde_json::Value {
        use serde_json::json;
        let z = &self.zones;
        let mut v = json!({
            "target": self.target,
            "date": self.date,
            "size_bytes": self.size,
            "requests_per_probe": self.requests,
            "media": {
                "outer_bytes_s": z.outer_bytes_s,
                "inner_bytes_s": z.inner_bytes_s,
                "zones": z.zones,
                "zones_resolved": z.zones_resolved,
                "rms_rel": z.rms_rel,
                "points": z.points.iter().map(|p| json!({"pos": p.pos, "bytes_s": p.bytes_s})).collect::<Vec<_>>(),
            },
            "seq_small_ns": self.seq_small_ns,
            "rand_small_ns": self.rand_small_ns,
            "positioning": {
                "far_minus_near_ns": self.positioning.far_minus_near_ns,
                "sem_ns": self.positioning.sem_ns,
                "found": self.positioning.found,
            },
            "stanza": self.stanza(),
        });
        match &self.drive {
            Drive::Hdd(h) => {
                v["kind"] = json!("hdd");
                v["hdd"] = json!({
                    "rev_ns": h.rotation.rev_ns,
                    "rpm": h.rotation.rpm(),
                    "rev_spread_rel": h.rotation.spread_rel,
                    "command_ns": h.overhead.command_ns,
                    "interface_bytes_s": h.overhead.iface_bytes_s,
                    "overhead_measured": h.overhead.measured,
                    "seek_table_ns": h.seek.table.iter().map(|(x, y)| json!([x, y * 1e6])).collect::<Vec<_>>(),
                    "seek_avg_ns": h.seek.avg_ms * 1e6,
                    "seek_points": h.seek_points.iter().map(|p| json!({
                        "stroke": p.probe.stroke, "band_a": p.probe.a, "band_b": p.probe.b,
                        "band_bytes": p.probe.width, "n": p.n, "mean_ns": p.mean_ns,
                        "sem_ns": p.sem_ns, "turn_ns": p.turn_ns,
                    })).collect::<Vec<_>>(),
                    "read_ahead_bytes": h.read_ahead.map(|r| r.bytes),
                    "read_ahead_at_least": h.read_ahead.map(|r| r.at_least),
                    "spt_outer": h.spt(z.outer_bytes_s),
                    "spt_inner": h.spt(z.inner_bytes_s),
                });
            }
            Drive::Flash(f) => {
                v["kind"] = json!("ssd");
                v["flash"] = json!({
                    "lat1_ns": f.lat1_ns,
                    "iops_by_depth": f.iops.iter().map(|(d, x)| json!([d, x])).collect::<Vec<_>>(),
                    "read_bytes_s": f.read_bytes_s,
                    "units": f.units,
                    "units_saturated": f.saturated,
                    "read_ns": f.read_us * 1e3,
                });
            }
        }
        v
    }
}
