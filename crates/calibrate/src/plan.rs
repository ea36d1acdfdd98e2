//! The probes, as plain job descriptions in fio's vocabulary: every one reads (`rw=read` or
//! `randread`), direct, one job after another (`stonewall`), each logging every request's
//! offset and latency (`write_lat_log`, `log_offset`) for the fits. A plan is a function of
//! the target's name and size, the budget and what earlier stages fitted: the same inputs
//! give the same jobs, and every job's seed is fio's default, so the same requests.

use crate::fit::ZoneFit;
use raidlab_workload::{apply_option, JobSpec};

/// The small read the latency probes use, bytes.
pub const SMALL: u64 = 4096;
/// Block size of the sequential rate probes, bytes.
pub const RATE_BS: u64 = 1 << 20;
/// The read-ahead probe's request, bytes: a host sends requests up to its largest block
/// request whole (Linux's `max_sectors_kb`, 512 KiB or more), so a drive's read-ahead is
/// seen up to this; beyond it the probe reports "at least".
pub const READ_AHEAD_BS: u64 = 512 << 10;
/// Depths of the flash parallelism probe.
pub const FLASH_DEPTHS: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// What is calibrated: a target name as `raidlab run` takes it and the bytes probed from its
/// start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub size: u64,
}

/// How much each probe measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Requests of each latency probe (the small sequential and random reads, a flash
    /// depth); a seek distance's probe reads twice as many, since the fit leaves out the
    /// reads the drive's buffer served (see [`crate::fit::seek_point`]).
    pub requests: u64,
    /// Positions of the sequential rate probe across the target.
    pub rate_points: u32,
    /// Bytes read sequentially at each of those positions.
    pub rate_bytes: u64,
    /// Distances of the seek probe, from `SEEK_MIN` of a full stroke to all of it.
    pub seek_points: u32,
    /// A cap on each probe's time, ns (0: none), for slow devices.
    pub runtime_ns: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            requests: 400,
            rate_points: 32,
            rate_bytes: 8 << 20,
            seek_points: 16,
            runtime_ns: 0,
        }
    }
}

/// The shortest seek distance probed, as a fraction of a full stroke: a few cylinders on the
/// drives of the catalog (tens of thousands of cylinders), long enough that the band the
/// reads fall in stays well inside it.
pub const SEEK_MIN: f64 = 1e-4;

/// Where a distance probe reads: two bands of `width` bytes, `a` and `b` their starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeekProbe {
    /// Distance between the bands as a fraction of a full stroke (of the cylinders).
    pub stroke: f64,
    pub a: u64,
    pub b: u64,
    pub width: u64,
}

fn set(spec: &mut JobSpec, key: &str, value: Option<&str>) -> Result<(), String> {
    apply_option(spec, key, value).map_err(|e| format!("probe '{}': {}", spec.name, e.message))
}

/// One probe job on `t`: reads, direct, after the one before, every request logged. The
/// target is set as one name (a path may hold the `:` fio's `filename` splits at).
fn job(t: &Target, b: &Budget, name: &str, opts: &[(&str, String)]) -> Result<JobSpec, String> {
    let mut s = JobSpec::default();
    set(&mut s, "name", Some(name))?;
    s.filenames = vec![t.name.clone()];
    set(&mut s, "direct", Some("1"))?;
    set(&mut s, "iodepth", Some("1"))?;
    set(&mut s, "stonewall", None)?;
    set(&mut s, "write_lat_log", Some("calibrate"))?;
    set(&mut s, "log_offset", Some("1"))?;
    set(&mut s, "log_avg_msec", Some("0"))?;
    if b.runtime_ns > 0 {
        let ms = format!("{}ms", b.runtime_ns.div_ceil(1_000_000));
        set(&mut s, "runtime", Some(&ms))?;
    }
    for (k, v) in opts {
        set(&mut s, k, Some(v))?;
    }
    s.validate()
        .map_err(|e| format!("probe '{name}': {}", e.message))?;
    Ok(s)
}

fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}

/// `want` bytes of requests of `bs` from the start, no more than the target holds.
fn within(t: &Target, want: u64, bs: u64) -> String {
    want.min(align_down(t.size, bs)).to_string()
}

/// Name of the rate probe at position `i`.
pub fn rate_name(i: u32) -> String {
    format!("rate-{i:02}")
}

/// Byte offset of rate probe `i`: evenly spread from the start to the last `rate_bytes`.
pub fn rate_offset(t: &Target, b: &Budget, i: u32) -> u64 {
    let span = t.size.saturating_sub(b.rate_bytes);
    let n = b.rate_points.max(2) - 1;
    align_down((span as u128 * i as u128 / n as u128) as u64, RATE_BS)
}

/// Stage one: sequential 1 MiB reads at `rate_points` positions (media rate by position),
/// then small sequential reads at the start (`seq-small`: the command overhead and, against
/// `rand-small`, whether the drive reads ahead) and small random reads over the whole
/// target (`rand-small`).
pub fn stage_rates(t: &Target, b: &Budget) -> Result<Vec<JobSpec>, String> {
    let mut v = Vec::new();
    for i in 0..b.rate_points.max(2) {
        v.push(job(
            t,
            b,
            &rate_name(i),
            &[
                ("rw", "read".into()),
                ("bs", RATE_BS.to_string()),
                ("offset", rate_offset(t, b, i).to_string()),
                ("size", b.rate_bytes.to_string()),
            ],
        )?);
    }
    v.push(job(
        t,
        b,
        "seq-small",
        &[
            ("rw", "read".into()),
            ("bs", SMALL.to_string()),
            ("size", within(t, b.requests * SMALL, SMALL)),
        ],
    )?);
    v.push(job(
        t,
        b,
        "rand-small",
        &[
            ("rw", "randread".into()),
            ("bs", SMALL.to_string()),
            ("size", align_down(t.size, SMALL).to_string()),
            ("norandommap", "1".into()),
            ("number_ios", b.requests.to_string()),
        ],
    )?);
    Ok(v)
}

/// The distances (fractions of a full stroke) of the seek probe: half of them log-spaced
/// from [`SEEK_MIN`] to a tenth of the stroke, where a seek grows as the square root of the
/// distance, the rest evenly from there to the full stroke (a table is read linearly
/// between its points, and a curved stretch needs them close).
pub fn seek_strokes(b: &Budget) -> Vec<f64> {
    let n = b.seek_points.max(4);
    let n_log = n / 2;
    let n_lin = n - n_log;
    let log =
        (0..n_log).map(move |k| SEEK_MIN * (0.1 / SEEK_MIN).powf(k as f64 / (n_log - 1) as f64));
    let lin = (1..=n_lin).map(move |j| 0.1 + 0.9 * j as f64 / n_lin as f64);
    log.chain(lin).collect()
}

/// Where the probe for `stroke` reads: two bands centred on the middle of the stroke,
/// placed by cylinder through the fitted zones (outer zones hold more bytes a cylinder),
/// each a 32nd of the distance wide (the seek varies little within it), between 64 KiB and
/// 8 MiB: wide enough on long strokes that few reads land on data the drive's buffer still
/// holds (a read it had read before, or read on over), which the fit leaves out.
pub fn seek_probe(t: &Target, zones: &ZoneFit, stroke: f64) -> SeekProbe {
    let c0 = (1.0 - stroke) / 2.0;
    let pa = zones.pos_of_cyl(c0) * t.size as f64;
    let pb = zones.pos_of_cyl(c0 + stroke) * t.size as f64;
    let width = align_down(((pb - pa) / 32.0).clamp(65536.0, 8388608.0) as u64, SMALL);
    let a = align_down(pa as u64, SMALL).min(align_down(t.size, SMALL) - 3 * width);
    let b = align_down(pb as u64, SMALL)
        .min(align_down(t.size, SMALL) - width)
        .max(a + 2 * width);
    SeekProbe {
        stroke,
        a,
        b,
        width,
    }
}

/// Name of the seek probe `k`.
pub fn seek_name(k: usize) -> String {
    format!("seek-{k:02}")
}

/// Stage two: for each distance, small random reads drawn half from each of two bands that
/// far apart (fio's `zoned_abs`, nothing drawn between them). A read after one in the other
/// band seeks the distance and waits a uniformly random part of a turn.
pub fn stage_seeks(
    t: &Target,
    b: &Budget,
    zones: &ZoneFit,
) -> Result<Vec<(SeekProbe, JobSpec)>, String> {
    seek_strokes(b)
        .into_iter()
        .enumerate()
        .map(|(k, stroke)| {
            let p = seek_probe(t, zones, stroke);
            let gap = p.b - p.a - p.width;
            let spec = job(
                t,
                b,
                &seek_name(k),
                &[
                    ("rw", "randread".into()),
                    ("bs", SMALL.to_string()),
                    ("offset", p.a.to_string()),
                    ("size", (p.b + p.width - p.a).to_string()),
                    ("norandommap", "1".into()),
                    (
                        "random_distribution",
                        format!("zoned_abs:50/{}:0/{gap}:50/{}", p.width, p.width),
                    ),
                    ("number_ios", (2 * b.requests).to_string()),
                ],
            )?;
            Ok((p, spec))
        })
        .collect()
}

/// Stage three for a drive that rotates: sequential reads of [`READ_AHEAD_BS`] at the start,
/// back to back (`stream`: the drive has had no time to read ahead) and each after an idle
/// `think_ns` in which it may fill its read-ahead buffer (`read-ahead`); Talagala et al.
/// time reads after a pause the same way. The same size both times, so whatever the path
/// to the drive adds to a request cancels in their difference.
pub fn stage_read_ahead(t: &Target, b: &Budget, think_ns: u64) -> Result<Vec<JobSpec>, String> {
    let n = (b.requests / 8).max(8);
    let size = within(t, n * READ_AHEAD_BS, READ_AHEAD_BS);
    Ok(vec![
        job(
            t,
            b,
            "stream",
            &[
                ("rw", "read".into()),
                ("bs", READ_AHEAD_BS.to_string()),
                ("size", size.clone()),
            ],
        )?,
        job(
            t,
            b,
            "read-ahead",
            &[
                ("rw", "read".into()),
                ("bs", READ_AHEAD_BS.to_string()),
                ("size", size),
                ("thinktime", format!("{}us", think_ns.div_ceil(1000))),
            ],
        )?,
    ])
}

/// The larger of the buffered-read probe's two sizes, bytes (the smaller is [`SMALL`]):
/// within any read-ahead segment worth the name.
pub const BUFFERED_LARGE: u64 = 64 << 10;

/// Stage three for a drive that reads ahead: small sequential reads of two sizes, each after
/// a pause (`think_ns`) in which the drive buffers what comes next, so each takes only the
/// command and the transfer over the interface.
pub fn stage_buffered(t: &Target, b: &Budget, think_ns: u64) -> Result<Vec<JobSpec>, String> {
    let n = (b.requests / 4).max(8);
    [
        ("buffered-small", SMALL),
        ("buffered-large", BUFFERED_LARGE),
    ]
    .iter()
    .map(|&(name, bs)| {
        job(
            t,
            b,
            name,
            &[
                ("rw", "read".into()),
                ("bs", bs.to_string()),
                ("size", within(t, n * bs, bs)),
                ("thinktime", format!("{}us", think_ns.div_ceil(1000))),
            ],
        )
    })
    .collect()
}

/// Name of the flash probe at depth `d`.
pub fn depth_name(d: u32) -> String {
    format!("depth-{d:02}")
}

/// Stage three for a drive that does not rotate: small random reads at depths 1 to 128 (how
/// many it serves side by side) and sequential 1 MiB reads at depth 8 (its read rate).
pub fn stage_flash(t: &Target, b: &Budget) -> Result<Vec<JobSpec>, String> {
    let mut v: Vec<JobSpec> = FLASH_DEPTHS
        .iter()
        .map(|&d| {
            job(
                t,
                b,
                &depth_name(d),
                &[
                    ("rw", "randread".into()),
                    ("bs", SMALL.to_string()),
                    ("iodepth", d.to_string()),
                    ("size", align_down(t.size, SMALL).to_string()),
                    ("norandommap", "1".into()),
                    ("number_ios", (b.requests * d.min(32) as u64).to_string()),
                ],
            )
        })
        .collect::<Result<_, _>>()?;
    v.push(job(
        t,
        b,
        "seq-deep",
        &[
            ("rw", "read".into()),
            ("bs", RATE_BS.to_string()),
            ("iodepth", "8".into()),
            (
                "size",
                align_down(t.size.min(256 << 20), RATE_BS).to_string(),
            ),
        ],
    )?);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            name: "sim:x.toml#lun0".into(),
            size: 73_400_000_000,
        }
    }

    #[test]
    fn a_plan_is_the_same_every_time_and_reads_only() {
        // Many requests a probe on a small target too: nothing reads past its end.
        for (t, b) in [
            (target(), Budget::default()),
            (
                Target {
                    name: "/dev/x".into(),
                    size: 300 << 20,
                },
                Budget {
                    requests: 1_000_000,
                    ..Budget::default()
                },
            ),
        ] {
            plan_reads_only(&t, &b);
        }
    }

    fn plan_reads_only(t: &Target, b: &Budget) {
        let (t, b) = (t.clone(), *b);
        let z = ZoneFit::flat(b.rate_points);
        let a1 = format!("{:?}{:?}", stage_rates(&t, &b), stage_seeks(&t, &b, &z));
        let a2 = format!("{:?}{:?}", stage_rates(&t, &b), stage_seeks(&t, &b, &z));
        assert_eq!(a1, a2);
        let all: Vec<JobSpec> = stage_rates(&t, &b)
            .unwrap()
            .into_iter()
            .chain(stage_seeks(&t, &b, &z).unwrap().into_iter().map(|p| p.1))
            .chain(stage_read_ahead(&t, &b, 1_000_000).unwrap())
            .chain(stage_buffered(&t, &b, 1_000_000).unwrap())
            .chain(stage_flash(&t, &b).unwrap())
            .collect();
        for s in &all {
            assert!(s.direct && s.stonewall, "{}", s.name);
            assert!(
                matches!(
                    s.rw,
                    raidlab_workload::RwMode::Read | raidlab_workload::RwMode::RandRead
                ),
                "{}: {:?}",
                s.name,
                s.rw
            );
            let end = s.offset + s.size.unwrap_or(0);
            assert!(end <= t.size, "{} reads to {end}", s.name);
            s.validate().unwrap();
        }
    }

    #[test]
    fn seek_bands_lie_apart_by_the_stroke_and_inside_the_target() {
        let (t, b) = (target(), Budget::default());
        let z = ZoneFit::flat(b.rate_points);
        for (p, _) in stage_seeks(&t, &b, &z).unwrap() {
            assert!(p.a + p.width < p.b && p.b + p.width <= t.size, "{p:?}");
            // Flat zones: bytes are cylinders.
            let d = (p.b - p.a) as f64 / t.size as f64;
            assert!((d - p.stroke).abs() < 0.02 * p.stroke + 3e-5, "{p:?} {d}");
        }
    }
}
