//! fio-like text output: one block per job, then one "Run status group" block per group.
//!
//! Bandwidth is shown in binary MiB/s (2^20 B/s) with decimal MB/s (10^6 B/s) in parentheses,
//! both labelled, as fio does; a closing line spells the units out.

use super::units::{bytes_binary, count_sig, ctime_utc, human_sig, BYTES_BINARY, BYTES_DECIMAL};
use crate::histogram::LatencyHistogram;
use crate::schema::{DirStats, JobResult, Percentiles, RunResult, DIRECTION_NAMES};
use std::fmt::Write;

fn bw_pair(bytes_s: f64) -> String {
    bw_pair_sig(bytes_s, super::units::DEFAULT_SIG_FIGS)
}

const BW_BINARY: [&str; 5] = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"];
const BW_DECIMAL: [&str; 5] = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s"];

/// A rate in binary and decimal units, in `sig` digits (fio's `significant_figures`).
fn bw_pair_sig(bytes_s: f64, sig: u8) -> String {
    Shown {
        sig,
        ..Shown::default()
    }
    .rate(bytes_s)
}

const BITS_BINARY: [&str; 5] = ["bit/s", "Kibit/s", "Mibit/s", "Gibit/s", "Tibit/s"];
const BITS_DECIMAL: [&str; 5] = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"];

/// How a job's text shows its figures: digits (`significant_figures`), decimal units first
/// (`kb_base=1000`), rates in bits (`unit_base=1`).
#[derive(Clone, Copy)]
struct Shown {
    sig: u8,
    decimal_first: bool,
    bits: bool,
}

impl Default for Shown {
    /// fio's defaults: 4 digits, binary units first, bytes.
    fn default() -> Shown {
        Shown {
            sig: super::units::DEFAULT_SIG_FIGS,
            decimal_first: false,
            bits: false,
        }
    }
}

impl Shown {
    fn of(j: &JobResult) -> Shown {
        Shown {
            sig: j.sig_figs(),
            decimal_first: j.decimal_first,
            bits: j.rates_in_bits,
        }
    }
    /// A rate of `bytes_s` bytes a second in its binary and decimal units.
    fn rate_units(self, bytes_s: f64) -> (String, String) {
        if self.bits {
            (
                human_sig(bytes_s * 8.0, 1024.0, &BITS_BINARY, self.sig),
                human_sig(bytes_s * 8.0, 1000.0, &BITS_DECIMAL, self.sig),
            )
        } else {
            (
                human_sig(bytes_s, 1024.0, &BW_BINARY, self.sig),
                human_sig(bytes_s, 1000.0, &BW_DECIMAL, self.sig),
            )
        }
    }
    /// Both, the first as `decimal_first` says, the other in parentheses.
    fn rate(self, bytes_s: f64) -> String {
        let (bin, dec) = self.rate_units(bytes_s);
        if self.decimal_first {
            format!("{dec} ({bin})")
        } else {
            format!("{bin} ({dec})")
        }
    }
}

/// fio's scaling rule: nanoseconds unless the smallest value is over 2 µs and the largest
/// over ~100 µs (then µs), and the same again one step up for ms.
/// `part` as a percentage of `whole` with one decimal, or "-" when `whole` is 0.
fn share(part: u64, whole: u64) -> String {
    if whole > 0 {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    } else {
        "-".into()
    }
}

/// A duration in the unit that keeps it readable: seconds, minutes or hours.
fn duration(ns: u64) -> (f64, &'static str) {
    let s = ns as f64 / 1e9;
    if s < 120.0 {
        (s, "s")
    } else if s < 7200.0 {
        (s / 60.0, "min")
    } else {
        (s / 3600.0, "h")
    }
}

/// The mean of `n` waits summing `total_ns`, in µs, ms or s as fits.
fn short_duration(total_ns: u64, n: u64) -> String {
    let ns = total_ns as f64 / n.max(1) as f64;
    if ns < 1e6 {
        format!("{:.0} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn lat_unit(h: &LatencyHistogram) -> (&'static str, f64) {
    let (min, max) = (h.min(), h.max());
    if min > 2_000_000 && max > 99_999_999 {
        ("msec", 1e6)
    } else if min > 2_000 && max > 99_999 {
        ("usec", 1e3)
    } else {
        ("nsec", 1.0)
    }
}

fn lat_line(out: &mut String, label: &str, h: &LatencyHistogram) {
    if h.count() == 0 {
        return;
    }
    let (unit, div) = lat_unit(h);
    let _ = writeln!(
        out,
        "    {label:>4} ({unit}): min={}, max={}, avg={:.2}, stdev={:.2}",
        (h.min() as f64 / div).round(),
        (h.max() as f64 / div).round(),
        h.mean() / div,
        h.stddev() / div
    );
}

/// fio's percentile block: `{label} percentiles ({unit}):`, then four per line, each line
/// but the last ending in a comma; labels carry the list's precision.
fn percentiles(out: &mut String, label: &str, h: &LatencyHistogram, p: &Percentiles) {
    if h.count() == 0 {
        return;
    }
    let (unit, div) = lat_unit(h);
    let _ = writeln!(out, "    {label} percentiles ({unit}):");
    let list = p.values();
    let width = p.precision as usize + 3;
    let prec = p.precision as usize;
    let rows = list.chunks(4).count();
    for (r, row) in list.chunks(4).enumerate() {
        let cells: Vec<String> = row
            .iter()
            .map(|&q| {
                format!(
                    "{q:width$.prec$}th=[{:5}]",
                    (h.percentile(q) as f64 / div).round() as u64
                )
            })
            .collect();
        let end = if r + 1 < rows { "," } else { "" };
        let _ = writeln!(out, "     | {}{end}", cells.join(", "));
    }
}

/// fio's sample lines of one direction: `bw (  KiB/s): min=…, max=…, per=…%, avg=…,
/// stdev=…, samples=…` (MiB/s once the mean passes 1 GiB/s, as fio) and `iops        : …`;
/// none without samples.
fn sample_lines(out: &mut String, d: &DirStats, agg_bytes: u64) {
    let bw = &d.samples.bw_kib;
    if bw.samples > 0 {
        let per = super::bw_agg_pct(bw.mean, agg_bytes);
        let (unit, div) = if bw.mean > 1024.0 * 1024.0 {
            ("MiB", 1024u64)
        } else {
            ("KiB", 1)
        };
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={per:3.2}%, avg={:5.2}, stdev={:5.2}, samples={}",
            bw.min / div,
            bw.max / div,
            bw.mean / div as f64,
            bw.stddev() / div as f64,
            bw.samples
        );
    }
    let iops = &d.samples.iops;
    if iops.samples > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            iops.min,
            iops.max,
            iops.mean,
            iops.stddev(),
            iops.samples
        );
    }
}

fn direction(
    out: &mut String,
    name: &str,
    d: &DirStats,
    p: &Percentiles,
    agg_bytes: u64,
    shown: Shown,
) {
    let Shown {
        sig, decimal_first, ..
    } = shown;
    if d.total_ios == 0 {
        return;
    }
    let io = if decimal_first {
        human_sig(d.io_bytes as f64, 1000.0, &BYTES_DECIMAL, sig)
    } else {
        human_sig(d.io_bytes as f64, 1024.0, &BYTES_BINARY, sig)
    };
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={}({io}/{}msec)",
        count_sig(d.iops(), sig),
        shown.rate(d.bw_bytes()),
        super::runtime_ms(d.runtime_ns)
    );
    lat_line(out, "clat", &d.clat);
    lat_line(out, "lat", &d.lat);
    if p.clat {
        percentiles(out, "clat", &d.clat, p);
    }
    if p.lat == Some(true) {
        percentiles(out, "lat", &d.lat, p);
    }
    sample_lines(out, d, agg_bytes);
}

fn job_block(
    out: &mut String,
    j: &JobResult,
    options: &[(String, String)],
    timestamp: u64,
    agg: [u64; 4],
) {
    let err = j.error_code();
    let when = if timestamp > 0 {
        format!(": {}", ctime_utc(timestamp))
    } else {
        String::new()
    };
    let place = match &j.mpi {
        Some(m) => format!(", {}", m.text()),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={err:2}: target={}, engine={}{place}{when}",
        j.name,
        j.groupid,
        j.instances.max(1),
        j.target,
        j.engine
    );
    if let Some(d) = &j.description {
        let _ = writeln!(out, "  Description  : [{d}]");
    }
    // randrepeat=0: the seed this run used (drawn for it unless given), to repeat it.
    let option = |k: &str| options.iter().find(|o| o.0 == k).map(|o| o.1.as_str());
    if let (Some("0"), Some(seed)) = (option("randrepeat"), option("randseed")) {
        let _ = writeln!(
            out,
            "  randseed={seed} (randrepeat=0; --randseed={seed} repeats these requests)"
        );
    }
    for (d, stats) in j.directions() {
        direction(
            out,
            DIRECTION_NAMES[d],
            &stats,
            &j.percentiles,
            agg[d],
            Shown::of(j),
        );
    }
    // fio's coarse distribution of total latency, entries of at least 0.01%, five per line.
    let lat = j.all_lat();
    for g in super::latency_distribution(&lat) {
        let shown: Vec<String> = g
            .entries
            .iter()
            .filter(|(_, p)| *p >= 0.005)
            .map(|(label, p)| format!("{label}={p:.2}%"))
            .collect();
        for chunk in shown.chunks(5) {
            let _ = writeln!(out, "  lat ({})   : {}", g.unit, chunk.join(", "));
        }
    }
    if j.sync.total_ios > 0 {
        let _ = writeln!(out, "  fsync/fdatasync/sync_file_range:");
        lat_line(out, "sync", &j.sync.lat);
        percentiles(out, "sync", &j.sync.lat, &j.percentiles);
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:.2}%, sys={:.2}%",
        j.usr_cpu, j.sys_cpu
    );
    if j.iodepth_level.iter().any(|&n| n > 0) {
        let levels: Vec<String> = super::iodepth_percentages(&j.iodepth_level)
            .into_iter()
            .map(|(label, p)| format!("{label}={p:.1}%"))
            .collect();
        let _ = writeln!(out, "  IO depths    : {}", levels.join(", "));
    }
    // fio 3.33's line, always its four counts (reads, writes, trims, syncs), indented as
    // its `latency` line below.
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short=0,0,0,0 dropped=0,0,0,0",
        j.read.total_ios, j.write.total_ios, j.trim.total_ios, j.sync.total_ios
    );
    if let Some(l) = j.latency_depth() {
        // fio's line, for every job (fio 3.33 prints it for a plain job too, with target 0,
        // window 0, percentile 100% and its iodepth): the target in ns, the window in µs,
        // the depth found.
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            l.target_ns,
            l.window_ns / 1000,
            l.percentile,
            l.depth
        );
    }
    if let Some(ss) = &j.steadystate {
        // fio's line: the window's mean rates, and the criterion's value.
        let what = match (ss.ss.starts_with("bw"), ss.ss.contains("_slope")) {
            (false, false) => "iops mean dev",
            (false, true) => "iops slope",
            (true, false) => "bw mean dev",
            (true, true) => "bw slope",
        };
        let _ = writeln!(
            out,
            "  steadystate  : attained={}, bw={}, iops={}, {what}={:.3}{}",
            if ss.attained { "yes" } else { "no" },
            bw_pair_sig(ss.bw_mean() as f64, j.sig_figs()),
            count_sig(ss.iops_mean() as f64, j.sig_figs()),
            ss.criterion,
            if ss.percent { "%" } else { "" }
        );
    }
    if let Some(e) = &j.errors {
        let _ = writeln!(
            out,
            "  errors       : total={}, first_error={}/<{}>",
            e.total,
            e.first,
            super::strerror(e.first)
        );
    }
    // A line for each listed pass (every one up to a dozen, else the first and last five:
    // `passes.rs`), and one for those between, added up (the JSON adds them up too).
    // (A result bounded as it was made is shown as it is; an older one's list, bounded here.)
    let bounded;
    let (listed, between) = match &j.passes_between {
        Some(b) => (&j.passes[..], Some(b)),
        None if j.passes.len() <= crate::passes::PASSES_LISTED => (&j.passes[..], None),
        None => {
            bounded = crate::passes::bound(j.passes.clone());
            (&bounded.0[..], bounded.1.as_ref())
        }
    };
    if listed.len() + between.map_or(0, |b| b.count as usize) > 1 {
        for p in listed {
            let _ = writeln!(
                out,
                "  pass {:<7}: read={}, write={}, {:.3}s, {}",
                p.pass,
                bytes_binary(p.read_bytes as f64),
                bytes_binary(p.write_bytes as f64),
                p.runtime_ns as f64 / 1e9,
                bw_pair(crate::passes::pass_rate(p))
            );
            if let Some(b) = between.filter(|b| b.first.checked_sub(1) == Some(p.pass)) {
                let _ = writeln!(
                    out,
                    "  passes {}-{}: {} more, {} to {} (added up in the JSON's passes_between)",
                    b.first,
                    b.last,
                    b.count,
                    bw_pair(b.bw_bytes_min as f64),
                    bw_pair(b.bw_bytes_max as f64)
                );
            }
        }
    }
    if let Some(v) = &j.verify {
        let _ = write!(
            out,
            "  verify       : {} blocks checked, {} mismatches",
            v.blocks_checked, v.mismatches
        );
        match &v.first_mismatch {
            Some(m) => {
                let _ = writeln!(out, "; first: {m}");
            }
            None => out.push('\n'),
        }
    }
    if let Some(s) = &j.sim {
        let _ = writeln!(
            out,
            "  simulated    : system={}, virtual time={:.3}s, stopped by {}, member I/Os={}",
            s.system,
            s.virtual_time_ns as f64 / 1e9,
            s.stop_reason,
            s.member_ios
        );
        let _ = writeln!(
            out,
            "  bottleneck   : {}",
            s.bottleneck.as_deref().unwrap_or("none above 90% busy")
        );
        if let Some(pc) = &s.page_cache {
            let hits = share(pc.hit_bytes, pc.hit_bytes + pc.miss_bytes);
            let _ = writeln!(
                out,
                "  page cache   : {} MiB, read hits={hits}, read ahead={} MiB, written back={} MiB, \
                 dirty at end={} MiB, writes throttled={}",
                pc.capacity_bytes >> 20,
                pc.read_ahead_bytes >> 20,
                pc.written_back_bytes >> 20,
                pc.dirty_bytes >> 20,
                pc.throttled_writes
            );
        }
        for (c, label, by) in [
            (&s.drive_caches, "drive caches", "the drives' buffers"),
            (
                &s.controller_caches,
                "ctrl caches ",
                "the controllers' caches",
            ),
        ] {
            if let Some(c) = c {
                let _ = writeln!(
                    out,
                    "  {label} : read hits={} ({} of {} reads served from {by})",
                    share(c.read_hits, c.reads),
                    c.read_hits,
                    c.reads
                );
            }
        }
        for sc in &s.stripe_caches {
            let ops = sc.full_writes + sc.preread_writes;
            let pre = share(sc.preread_writes, ops);
            let room = if sc.room_waits > 0 {
                format!(" (avg {})", short_duration(sc.room_wait_ns, sc.room_waits))
            } else {
                String::new()
            };
            let mut held = String::new();
            if sc.held_pieces > 0 {
                held += &format!(
                    ", held before written=avg {}",
                    short_duration(sc.held_ns, sc.held_pieces)
                );
            }
            if sc.ops_done > 0 {
                held += &format!(", written in avg {}", short_duration(sc.op_ns, sc.ops_done));
            }
            let _ = writeln!(
                out,
                "  stripe cache : {}: {} stripe heads, stripes written={ops}, with pre-reads={pre}, \
                 writes waited for room={}{room}{held}",
                sc.array, sc.stripe_heads, sc.room_waits
            );
        }
        for rb in &s.rebuilds {
            let members: Vec<String> = rb.members.iter().map(|m| m.to_string()).collect();
            let full = if rb.full_rebuild_ns > 0 {
                let (v, unit) = duration(rb.full_rebuild_ns);
                format!("{v:.1} {unit}")
            } else {
                "-".into()
            };
            let _ = writeln!(
                out,
                "  rebuild      : {}: member {}, {} MiB rebuilt in {:.3}s at {:.1} MB/s, at {} of \
                 {} MiB, whole rebuild {}{full}{}",
                rb.array,
                members.join(", "),
                rb.rebuilt_bytes >> 20,
                rb.rebuild_ns as f64 / 1e9,
                rb.bytes_s() / 1e6,
                share(rb.rebuilt_to_bytes, rb.member_bytes),
                rb.member_bytes >> 20,
                if rb.finished && rb.rebuilt_bytes == rb.member_bytes {
                    ""
                } else {
                    "≈ "
                },
                if rb.finished { " (finished)" } else { "" }
            );
        }
        let mut comps: Vec<_> = s.components.iter().collect();
        comps.sort_by(|a, b| {
            b.utilization
                .total_cmp(&a.utilization)
                .then(a.name.cmp(&b.name))
        });
        for c in comps {
            let bound = c
                .bound_bytes_s
                .map(|b| format!(", bound {}", bw_pair(b)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {:>6.2}% busy  {:<10} {}{bound}",
                c.utilization * 100.0,
                c.kind,
                c.name
            );
        }
    }
    if let Some(s) = &j.stopped {
        let _ = writeln!(out, "  stopped early: {s} (results cover what ran)");
    }
    if let Some(e) = &j.error {
        let _ = writeln!(out, "  error        : {e}");
    }
    out.push('\n');
}

fn group_block(out: &mut String, groupid: u32, jobs: &[&JobResult]) {
    let _ = writeln!(out, "Run status group {groupid} (all jobs):");
    // The directions any of the group's jobs shows (`unified_rw_reporting`), in order.
    let mut shown = [false; 4];
    for j in jobs {
        for &d in j.shown_directions() {
            shown[d] = true;
        }
    }
    for (pick, label) in ["READ", "WRITE", "TRIM", "MIXED"].into_iter().enumerate() {
        if !shown[pick] {
            continue;
        }
        // As in fio, only the jobs that moved data this way count: a writer beside readers
        // is not a reader at 0 B/s over 0 ms in the READ line's ranges.
        let each: Vec<std::borrow::Cow<DirStats>> =
            jobs.iter().map(|j| j.direction(pick)).collect();
        let dirs: Vec<&DirStats> = each
            .iter()
            .map(|d| d.as_ref())
            .filter(|d| d.total_ios > 0)
            .collect();
        if dirs.is_empty() {
            continue;
        }
        let io: u64 = dirs.iter().map(|d| d.io_bytes).sum();
        let run_max = dirs.iter().map(|d| d.runtime_ns).max().unwrap_or(0);
        let run_min = dirs.iter().map(|d| d.runtime_ns).min().unwrap_or(0);
        let agg = if run_max == 0 {
            0.0
        } else {
            io as f64 * 1e9 / run_max as f64
        };
        let bws: Vec<f64> = dirs.iter().map(|d| d.bw_bytes()).collect();
        let lo = bws.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = bws.iter().copied().fold(0.0, f64::max);
        // (As the first job shows its figures (`significant_figures`, `kb_base`,
        // `unit_base`), as fio takes the group's.)
        let shown = jobs.first().map_or_else(Shown::default, |j| Shown::of(j));
        let sig = shown.sig;
        let ((lo_bin, lo_dec), (hi_bin, hi_dec)) = (shown.rate_units(lo), shown.rate_units(hi));
        let (bin, dec) = (format!("{lo_bin}-{hi_bin}"), format!("{lo_dec}-{hi_dec}"));
        let (ranges, io_pair) = {
            let io_bin = human_sig(io as f64, 1024.0, &BYTES_BINARY, sig);
            let io_dec = human_sig(io as f64, 1000.0, &BYTES_DECIMAL, sig);
            if shown.decimal_first {
                (format!("{dec} ({bin})"), format!("{io_dec} ({io_bin})"))
            } else {
                (format!("{bin} ({dec})"), format!("{io_bin} ({io_dec})"))
            }
        };
        let _ = writeln!(
            out,
            "  {label:>5}: bw={}, {ranges}, io={io_pair}, run={}-{}msec",
            shown.rate(agg),
            super::runtime_ms(run_min),
            super::runtime_ms(run_max)
        );
    }
}

/// fio's `Disk stats (read/write)` block: each disk's requests, merges and time (ms) by
/// direction, its queue time (ms), and the share of the run it was busy; nothing without
/// disks.
fn disk_block(out: &mut String, disks: &[crate::schema::DiskUtil]) {
    if disks.is_empty() {
        return;
    }
    out.push_str("Disk stats (read/write):\n");
    for d in disks {
        let [ios_r, ios_w, merge_r, merge_w, ticks_r, ticks_w, in_queue] = d.fio_figures();
        let _ = writeln!(
            out,
            "  {}: ios={ios_r}/{ios_w}, merge={merge_r}/{merge_w}, ticks={ticks_r}/{ticks_w}, in_queue={in_queue}, util={:.2}%",
            d.name,
            d.utilization() * 100.0
        );
    }
    out.push('\n');
}

/// fio-like text for `result`.
pub fn render_text(result: &RunResult) -> String {
    render_text_with_options(result, &[])
}

/// fio-like text for `result`, with each job's options (index-aligned with `result.jobs`,
/// as fio's `job options`): a job with `randrepeat=0` shows the `randseed` it ran with.
pub fn render_text_with_options(result: &RunResult, options: &[Vec<(String, String)>]) -> String {
    let mut out = String::new();
    if result.jobs.is_empty() {
        out.push_str("No job ran (stopped before the first job started).\n");
    }
    for (i, j) in result.jobs.iter().enumerate() {
        let opts = options.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let agg = super::group_agg_bytes(result, j.groupid);
        job_block(&mut out, j, opts, result.timestamp, agg);
    }
    let mut groups: Vec<u32> = result.jobs.iter().map(|j| j.groupid).collect();
    groups.sort_unstable();
    groups.dedup();
    for g in groups {
        let jobs: Vec<&JobResult> = result.jobs.iter().filter(|j| j.groupid == g).collect();
        group_block(&mut out, g, &jobs);
        out.push('\n');
    }
    disk_block(&mut out, &result.disk_util);
    out.push_str("Units: MiB/s = 2^20 bytes/s, MB/s = 10^6 bytes/s; KiB/MiB = 2^10/2^20 bytes, kB/MB = 10^3/10^6 bytes.\n");
    if result.jobs.iter().any(|j| j.rates_in_bits) {
        out.push_str("       Mibit/s = 2^20 bits/s, Mbit/s = 10^6 bits/s (unit_base=1).\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ComponentUse, SimExtras, VerifySummary};

    fn job(name: &str, group: u32, bytes: u64, ns: u64) -> JobResult {
        let mut j = JobResult {
            name: name.into(),
            groupid: group,
            instances: 1,
            target: "f".into(),
            engine: "psync".into(),
            ..Default::default()
        };
        j.read.io_bytes = bytes;
        j.read.total_ios = bytes / 4096;
        j.read.runtime_ns = ns;
        for i in 0..j.read.total_ios {
            j.read.clat.record(100_000 + i);
            j.read.lat.record(100_100 + i);
        }
        j
    }

    /// Up to twelve passes show a line each; past that, the first and last five, and one
    /// line for those between with their slowest and fastest rates.
    #[test]
    fn many_passes_show_their_ends_and_a_line_for_the_rest() {
        let with = |n: u32| {
            let mut j = job("p", 0, 1 << 20, 1_000_000);
            j.passes = (0..n)
                .map(|i| crate::schema::PassStats {
                    pass: i,
                    read_bytes: 1 << 20,
                    runtime_ns: 1_000_000 * u64::from(i + 1),
                    ..Default::default()
                })
                .collect();
            render_text(&RunResult {
                jobs: vec![j],
                ..Default::default()
            })
        };
        let t = with(12);
        assert_eq!(
            t.lines().filter(|l| l.starts_with("  pass ")).count(),
            12,
            "{t}"
        );
        assert!(!t.contains("  passes "), "{t}");
        let t = with(30);
        let shown: Vec<&str> = t.lines().filter(|l| l.starts_with("  pass")).collect();
        assert_eq!(shown.len(), 11, "{t}");
        assert!(shown[4].starts_with("  pass 4 "), "{t}");
        assert!(shown[6].starts_with("  pass 25 "), "{t}");
        // Passes 5 to 24 take 6 to 25 ms for 1 MiB: 40.0 to 167 MiB/s.
        assert!(
            shown[5]
                .starts_with("  passes 5-24: 20 more, 40.0MiB/s (41.9MB/s) to 167MiB/s (175MB/s)"),
            "{}",
            shown[5]
        );
    }

    /// A job with randrepeat=0 shows the seed it ran with under its name; others do not.
    /// fio 3.33's issued line, four counts whatever the job moved, indented as its
    /// `latency` line: tools that read fio's text find it under its name.
    #[test]
    fn issued_counts_are_fios_rwts_line() {
        let r = RunResult {
            version: "v".into(),
            jobs: vec![job("a", 0, 4096 * 5, 1_000_000)],
            ..Default::default()
        };
        let t = render_text(&r);
        assert!(
            t.contains("\n     issued rwts: total=5,0,0,0 short=0,0,0,0 dropped=0,0,0,0\n"),
            "{t}"
        );
    }

    /// fio 3.33 prints its latency-target line for every job: a plain one shows target 0,
    /// window 0, percentile 100% and its iodepth, right under the issued line.
    #[test]
    fn a_plain_job_shows_fios_latency_line() {
        let mut j = job("a", 0, 4096 * 5, 1_000_000);
        j.iodepth = Some(8);
        let r = RunResult {
            version: "v".into(),
            jobs: vec![j],
            ..Default::default()
        };
        let t = render_text(&r);
        assert!(
            t.contains(" dropped=0,0,0,0\n     latency   : target=0, window=0, percentile=100.00%, depth=8\n"),
            "{t}"
        );
        // A result that does not carry the job's iodepth has no such line.
        let r = RunResult {
            version: "v".into(),
            jobs: vec![job("a", 0, 4096 * 5, 1_000_000)],
            ..Default::default()
        };
        assert!(!render_text(&r).contains("latency   :"));
    }

    #[test]
    fn a_job_without_randrepeat_shows_its_seed() {
        let r = RunResult {
            version: "v".into(),
            timestamp: 0,
            jobs: vec![job("a", 0, 4096, 1_000_000), job("b", 0, 4096, 1_000_000)],
            ..Default::default()
        };
        let o = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>()
        };
        let options = [
            o(&[("randrepeat", "0"), ("randseed", "42")]),
            o(&[("randseed", "7")]),
        ];
        let t = render_text_with_options(&r, &options);
        let a = t.find("a: (groupid=0").unwrap();
        let line = "  randseed=42 (randrepeat=0; --randseed=42 repeats these requests)\n";
        assert_eq!(t.find(line), t[a..].find('\n').map(|n| a + n + 1), "{t}");
        assert_eq!(t.matches("randseed=").count(), 2, "{t}");
        assert!(!render_text(&r).contains("randseed"));
    }

    /// fio's kb_base=1000: decimal units first, binary in parentheses, on the direction's
    /// line (its size too) and the group's (fio 3.33's lines for 1 MiB in 1 ms).
    #[test]
    fn kb_base_1000_puts_decimal_units_first() {
        let mut j = job("a", 0, 1 << 20, 1_000_000);
        let plain = render_text(&RunResult {
            jobs: vec![j.clone()],
            ..Default::default()
        });
        assert!(
            plain.contains("  read: IOPS=256k, BW=1000MiB/s (1049MB/s)(1024KiB/1msec)\n"),
            "{plain}"
        );
        j.decimal_first = true;
        let t = render_text(&RunResult {
            jobs: vec![j],
            ..Default::default()
        });
        assert!(
            t.contains("  read: IOPS=256k, BW=1049MB/s (1000MiB/s)(1049kB/1msec)\n"),
            "{t}"
        );
        assert!(
            t.contains("   READ: bw=1049MB/s (1000MiB/s), 1049MB/s-1049MB/s (1000MiB/s-1000MiB/s), io=1049kB (1024KiB), run=1-1msec\n"),
            "{t}"
        );
    }

    /// fio's `Disk stats` block, after the groups: a line a disk, times in whole ms, the
    /// busy share in percent (the numbers of a 2 s fio run on a loop device); none without
    /// disks.
    #[test]
    fn disks_show_as_fios_disk_stats() {
        let mut r = RunResult {
            jobs: vec![job("a", 0, 4096, 1_000_000)],
            ..Default::default()
        };
        assert!(!render_text(&r).contains("Disk stats"));
        r.disk_util = vec![
            crate::schema::DiskUtil {
                name: "loop0".into(),
                read_ios: 119_975,
                write_ios: 119_782,
                read_ticks_ns: 3_602_400_000,
                write_ticks_ns: 3_607_000_000,
                in_queue_ns: 7_209_999_999,
                busy_ns: 1_677_000_000,
                elapsed_ns: 2_000_000_000,
                ..Default::default()
            },
            crate::schema::DiskUtil {
                name: "vda".into(),
                write_merges: 3,
                busy_ns: 5,
                elapsed_ns: 4,
                ..Default::default()
            },
        ];
        let t = render_text(&r);
        let block = "\n\nDisk stats (read/write):\n  \
            loop0: ios=119975/119782, merge=0/0, ticks=3602/3607, in_queue=7209, util=83.85%\n  \
            vda: ios=0/0, merge=0/3, ticks=0/0, in_queue=0, util=100.00%\n\nUnits:";
        assert!(t.contains(block), "{t}");
        assert!(t.find("Run status group 0").unwrap() < t.find(block).unwrap());
    }

    #[test]
    fn fio_like_lines_with_both_units() {
        let r = RunResult {
            version: "v".into(),
            timestamp: 0,
            jobs: vec![
                job("a", 0, 104_857_600, 1_000_000_000),
                job("b", 1, 52_428_800, 1_000_000_000),
            ],
            ..Default::default()
        };
        let mut r = r;
        r.jobs[0].iodepth_level = [1, 1, 2, 0, 0, 0, 0];
        let t = render_text(&r);
        assert!(t.contains("a: (groupid=0, jobs=1): err= 0:"), "{t}");
        assert!(
            t.contains(
                "  IO depths    : 1=25.0%, 2=25.0%, 4=50.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%\n"
            ),
            "{t}"
        );
        assert_eq!(
            t.matches("IO depths").count(),
            1,
            "only jobs that counted depths show them"
        );
        assert!(
            t.contains("  read: IOPS=25.6k, BW=100MiB/s (105MB/s)(100MiB/1000msec)"),
            "{t}"
        );
        assert!(t.contains("    clat (usec): min=100, max="), "{t}");
        assert!(t.contains("    clat percentiles (usec):"), "{t}");
        assert!(t.contains(" 99.99th=["), "{t}");
        assert!(
            t.contains("Run status group 0 (all jobs):\n   READ: bw=100MiB/s (105MB/s)"),
            "{t}"
        );
        assert!(
            t.contains("Run status group 1 (all jobs):\n   READ: bw=50.0MiB/s (52.4MB/s)"),
            "{t}"
        );
        assert!(!t.contains("WRITE:"), "{t}");
        // fio's coarse distribution of the 100.1–125.7 µs latencies: at most 250 µs, adding up
        // to 100% (bucket midpoints may put a few just under 100 µs).
        let line = t
            .lines()
            .find(|l| l.starts_with("  lat (usec)   : "))
            .expect("distribution line");
        let total: f64 = line["  lat (usec)   : ".len()..]
            .split(", ")
            .map(|e| {
                let (label, pct) = e.split_once('=').unwrap();
                assert!(label == "100" || label == "250", "{line}");
                pct.trim_end_matches('%').parse::<f64>().unwrap()
            })
            .sum();
        assert!((total - 100.0).abs() < 0.05, "{line}");
        assert!(t.contains("MB/s = 10^6 bytes/s"));
    }

    /// The bandwidth and IOPS samples as fio's two lines under the percentiles (fio 3.33's
    /// for such samples: `min= 1024, max= 1032, per=100.00%, avg=1026.67, stdev= 4.62,
    /// samples=3`); none without samples.
    #[test]
    fn samples_are_fios_bw_and_iops_lines() {
        // 3 MiB over 3 s: the group's 1024 KiB/s.
        let mut j = job("a", 0, 3 << 20, 3_000_000_000);
        let plain = render_text(&RunResult {
            jobs: vec![j.clone()],
            ..Default::default()
        });
        assert!(!plain.contains("   bw ("), "{plain}");
        for v in [1024, 1024, 1032] {
            j.read.samples.bw_kib.add(v);
        }
        for v in [256, 256, 258] {
            j.read.samples.iops.add(v);
        }
        let t = render_text(&RunResult {
            jobs: vec![j],
            ..Default::default()
        });
        let lines = "   bw (  KiB/s): min= 1024, max= 1032, per=100.00%, avg=1026.67, stdev= 4.62, samples=3\n   iops        : min=  256, max=  258, avg=256.67, stdev= 1.15, samples=3\n";
        let at = t.find(lines).unwrap_or_else(|| panic!("{t}"));
        assert!(at > t.find("clat percentiles").unwrap(), "{t}");
    }

    /// fio's `percentile_list=50:99.5:10` (sorted, one decimal as written) and
    /// `lat_percentiles=1`: a clat block and a lat block; `clat_percentiles=0` drops the first.
    #[test]
    fn percentile_options_shape_the_blocks() {
        let mut j = job("a", 0, 4096 * 100, 1_000_000_000);
        j.percentiles = Percentiles {
            list: vec![10.0, 50.0, 99.5],
            precision: 1,
            clat: true,
            lat: Some(true),
        };
        let t = render_text(&RunResult {
            jobs: vec![j.clone()],
            ..Default::default()
        });
        assert!(
            t.contains("    clat percentiles (usec):\n     | 10.0th=[  100], 50.0th=[  100], 99.5th=[  100]\n    lat percentiles (usec):\n     | 10.0th=[  100],"),
            "{t}"
        );
        j.percentiles.clat = false;
        j.percentiles.list = (1..=5).map(f64::from).collect();
        j.percentiles.precision = 0;
        let t = render_text(&RunResult {
            jobs: vec![j],
            ..Default::default()
        });
        assert!(!t.contains("clat percentiles"), "{t}");
        // Four to a line, the first line ending in a comma, as fio prints them.
        assert!(
            t.contains("    lat percentiles (usec):\n     |   1th=[  100],   2th=[  100],   3th=[  100],   4th=[  100],\n     |   5th=[  100]\n"),
            "{t}"
        );
    }

    #[test]
    fn group_bandwidth_adds_side_by_side_jobs() {
        let r = RunResult {
            jobs: vec![
                job("a", 0, 100_000_000, 1_000_000_000),
                job("b", 0, 100_000_000, 2_000_000_000),
            ],
            ..Default::default()
        };
        let t = render_text(&r);
        // 200 MB over the longer 2 s: 100 MB/s; per-job 50–100 MB/s; run 1000–2000 ms.
        assert!(t.contains("bw=95.4MiB/s (100MB/s), 47.7MiB/s-95.4MiB/s (50.0MB/s-100MB/s), io=191MiB (200MB), run=1000-2000msec"), "{t}");
    }

    #[test]
    fn group_ranges_count_only_the_jobs_that_moved_data_that_way() {
        // A reader and a writer side by side: fio's READ line ranges over the reader only
        // (raidlab printed 0B/s-… and run=0-… from the writer's empty read side).
        let mut w = job("w", 0, 0, 0);
        w.write.io_bytes = 100_000_000;
        w.write.total_ios = 100_000_000 / 4096;
        w.write.runtime_ns = 1_000_000_000;
        let r = RunResult {
            jobs: vec![job("r", 0, 50_000_000, 2_000_000_000), w],
            ..Default::default()
        };
        let t = render_text(&r);
        assert!(t.contains("   READ: bw=23.8MiB/s (25.0MB/s), 23.8MiB/s-23.8MiB/s (25.0MB/s-25.0MB/s), io=47.7MiB (50.0MB), run=2000-2000msec"), "{t}");
        assert!(t.contains("  WRITE: bw=95.4MiB/s (100MB/s), 95.4MiB/s-95.4MiB/s (100MB/s-100MB/s), io=95.4MiB (100MB), run=1000-1000msec"), "{t}");
    }

    /// `unified_rw_reporting`: `mixed` shows one direction with both added up, in the job's
    /// block and the group's; `both` shows it after read and write; jobs of a group that
    /// report apart still give the group's READ and WRITE lines.
    #[test]
    fn unified_reporting_adds_the_directions_up() {
        use crate::schema::UnifiedRw;
        let mixed = |u: UnifiedRw| {
            // 100 MB read over 2 s and 100 MB written over 1 s: 200 MB over the longer 2 s.
            let mut j = job("m", 0, 100_000_000, 2_000_000_000);
            j.write.io_bytes = 100_000_000;
            j.write.total_ios = 100_000_000 / 4096;
            j.write.runtime_ns = 1_000_000_000;
            for v in [1000, 3000] {
                j.read.samples.bw_kib.add(v);
                j.write.samples.bw_kib.add(v + 10);
            }
            j.unified_rw = u;
            j
        };
        let t = render_text(&RunResult {
            jobs: vec![mixed(UnifiedRw::Mixed)],
            ..Default::default()
        });
        assert!(!t.contains("  read:") && !t.contains("  write:"), "{t}");
        assert!(
            t.contains("  mixed: IOPS=24.4k, BW=95.4MiB/s (100MB/s)(191MiB/2000msec)"),
            "{t}"
        );
        // The samples summed as fio sums them: counts, minimums, maximums and means added.
        assert!(
            t.contains("min= 2010, max= 6010")
                && t.contains("avg=4010.00")
                && t.contains("samples=4"),
            "{t}"
        );
        assert!(t.contains("  MIXED: bw=95.4MiB/s (100MB/s), 95.4MiB/s-95.4MiB/s (100MB/s-100MB/s), io=191MiB (200MB), run=2000-2000msec"), "{t}");
        assert!(!t.contains("READ:") && !t.contains("WRITE:"), "{t}");
        let t = render_text(&RunResult {
            jobs: vec![
                mixed(UnifiedRw::Both),
                job("r", 0, 50_000_000, 2_000_000_000),
            ],
            ..Default::default()
        });
        let at = |s: &str| t.find(s).unwrap_or_else(|| panic!("{s} missing: {t}"));
        assert!(
            at("  read:") < at("  write:") && at("  write:") < at("  mixed:"),
            "{t}"
        );
        assert!(
            at("   READ:") < at("  WRITE:") && at("  WRITE:") < at("  MIXED:"),
            "{t}"
        );
        // The group's MIXED line: both jobs' directions, 250 MB over the longest 2 s.
        assert!(t.contains("  MIXED: bw=119MiB/s (125MB/s)"), "{t}");
        // Apart (the default), as before.
        let t = render_text(&RunResult {
            jobs: vec![mixed(UnifiedRw::None)],
            ..Default::default()
        });
        assert!(!t.contains("mixed") && !t.contains("MIXED"), "{t}");
    }

    #[test]
    fn extras_are_printed() {
        let mut j = job("s", 0, 4096 * 10, 1_000_000);
        j.verify = Some(VerifySummary {
            blocks_checked: 10,
            mismatches: 1,
            first_mismatch: Some("offset 8192: stale generation".into()),
        });
        j.sim = Some(SimExtras {
            system: "sys.toml".into(),
            virtual_time_ns: 1_500_000_000,
            stop_reason: "size".into(),
            components: vec![ComponentUse {
                name: "host/fc0".into(),
                kind: "link".into(),
                utilization: 0.97,
                busy_ns: 1,
                bound_bytes_s: Some(200e6),
            }],
            bottleneck: Some("host/fc0".into()),
            member_ios: 42,
            page_cache: Some(crate::schema::PageCacheUse {
                capacity_bytes: 512 << 20,
                hit_bytes: 3 << 20,
                miss_bytes: 1 << 20,
                read_ahead_bytes: 2 << 20,
                written_back_bytes: 5 << 20,
                dirty_bytes: 0,
                throttled_writes: 7,
            }),
            stripe_caches: vec![crate::schema::StripeCacheUse {
                array: "md".into(),
                stripe_heads: 256,
                full_writes: 3,
                preread_writes: 1,
                room_waits: 2,
                room_wait_ns: 5_000_000,
                held_pieces: 8,
                held_ns: 4_200_000,
                ops_done: 4,
                op_ns: 3_000_000,
            }],
            drive_caches: Some(crate::schema::DriveCacheUse {
                reads: 400,
                read_hits: 30,
            }),
            controller_caches: Some(crate::schema::DriveCacheUse {
                reads: 200,
                read_hits: 50,
            }),
            rebuilds: vec![crate::schema::RebuildUse {
                array: "md".into(),
                members: vec![2],
                member_bytes: 1000 << 20,
                rebuilt_bytes: 150 << 20,
                rebuilt_to_bytes: 250 << 20,
                rebuild_ns: 1_500_000_000,
                full_rebuild_ns: 10_000_000_000,
                finished: false,
            }],
            notes: Vec::new(),
        });
        j.stopped = Some("interrupted".into());
        let t = render_text(&RunResult {
            jobs: vec![j],
            ..Default::default()
        });
        assert!(
            t.contains("10 blocks checked, 1 mismatches; first: offset 8192: stale generation"),
            "{t}"
        );
        assert!(t.contains("bottleneck   : host/fc0"), "{t}");
        assert!(
            t.contains(" 97.00% busy  link       host/fc0, bound 191MiB/s (200MB/s)"),
            "{t}"
        );
        assert!(t.contains("stopped by size"), "{t}");
        assert!(
            t.contains(
                "page cache   : 512 MiB, read hits=75.0%, read ahead=2 MiB, written back=5 MiB, \
                 dirty at end=0 MiB, writes throttled=7"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "stripe cache : md: 256 stripe heads, stripes written=4, with pre-reads=25.0%, \
                 writes waited for room=2 (avg 2.50 ms), held before written=avg 525 µs, \
                 written in avg 750 µs"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "drive caches : read hits=7.5% (30 of 400 reads served from the drives' buffers)"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "ctrl caches  : read hits=25.0% (50 of 200 reads served from the controllers' caches)"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "rebuild      : md: member 2, 150 MiB rebuilt in 1.500s at 104.9 MB/s, at 25.0% \
                 of 1000 MiB, whole rebuild ≈ 10.0 s"
            ),
            "{t}"
        );
        assert!(t.contains("stopped early: interrupted"), "{t}");
    }
}
