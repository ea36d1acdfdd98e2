//! Calibration: from measurements of one real drive to a `[[disk]]` description the
//! simulator can run (then as forty of them in an array nobody owns).
//!
//! It is for: the probe plans (plain [`JobSpec`]s: reads only, direct, depth 1 unless a probe
//! needs more, in the style of published disk microbenchmarks) in [`plan`]; the fits, pure
//! functions from per-request samples to drive parameters with their residuals, in [`fit`];
//! and the renderings of the result (a `[[disk]]` TOML stanza with each value's source, a
//! text summary, JSON in bytes and nanoseconds) in [`render`].
//!
//! It is not for: doing I/O or reading clocks. `raidlab calibrate` runs each plan through
//! the same executors as `raidlab run` (the engine for files and devices, the simulator for
//! `sim:` targets), hands the per-request samples here, and supplies the date.
//!
//! Sources of the methods: Worthington, Ganger, Patt and Wilkes, "On-line extraction of SCSI
//! disk drive parameters", SIGMETRICS 1995 (seek times from reads a known distance apart,
//! less the rotational part; rotation from the spread of service times); Talagala,
//! Arpaci-Dusseau and Patterson, "Microbenchmark-based extraction of local and global disk
//! characteristics", UC Berkeley CSD-99-1063, 1999 (zone rates from sequential reads across
//! the capacity; read-ahead from sequential small reads against random ones).

pub mod fit;
pub mod plan;
pub mod render;

use raidlab_result::RunResult;
pub use raidlab_workload::JobSpec;

/// One completed request of a probe: where it read, how much, and its completion latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub offset: u64,
    pub len: u64,
    pub lat_ns: u64,
}

/// The per-request samples of job `name` in a run of probes, in completion order (at depth 1
/// also the order the requests were issued). Empty if the run has no such job or the job
/// logged nothing.
pub fn samples(result: &RunResult, name: &str) -> Vec<Sample> {
    result
        .jobs
        .iter()
        .filter(|j| j.name == name)
        .flat_map(|j| j.logs.iter())
        .flat_map(|l| l.clat.iter())
        .filter(|s| s.dir == 0)
        .map(|s| Sample {
            offset: s.offset,
            len: s.bs,
            lat_ns: s.value,
        })
        .collect()
}

/// Requests per second and bytes per second job `name` reached (reads), if it ran.
pub fn rates(result: &RunResult, name: &str) -> Option<(f64, f64)> {
    let j = result.jobs.iter().find(|j| j.name == name)?;
    (j.read.total_ios > 0).then(|| (j.read.iops(), j.read.bw_bytes()))
}

/// Why a calibration stopped: the runner failed (its own error), or the samples could not
/// be fitted (one line saying what was missing).
#[derive(Debug)]
pub enum Error<E> {
    Run(E),
    Fit(String),
}

/// Calibrate `target`: run each stage's probes through `run` (the caller's executor, which
/// returns the run with its per-request logs) and fit what they show. The stages: media
/// rate by position and small sequential/random reads; then seeks at distances placed by
/// the fitted zones; then, if the reads took longer the farther they went, the read-ahead
/// and buffered-read probes, else the flash probes. `date` is the caller's.
pub fn calibrate<E>(
    target: &plan::Target,
    budget: &plan::Budget,
    name: &str,
    date: &str,
    mut run: impl FnMut(Vec<JobSpec>) -> Result<RunResult, E>,
) -> Result<render::Calibration, Error<E>> {
    use fit::*;
    let fit_err = |m: String| Error::Fit(format!("{}: {m}", target.name));
    // Stage one.
    let r = run(plan::stage_rates(target, budget).map_err(fit_err)?).map_err(Error::Run)?;
    let points: Vec<RatePoint> = (0..budget.rate_points.max(2))
        .filter_map(|i| {
            let s = samples(&r, &plan::rate_name(i));
            let off = plan::rate_offset(target, budget, i);
            sequential_rate(&s).map(|bytes_s| RatePoint {
                pos: (off as f64 + budget.rate_bytes as f64 / 2.0) / target.size as f64,
                bytes_s,
            })
        })
        .collect();
    let zones = fit_zones(&points).map_err(fit_err)?;
    let seq_small = samples(&r, "seq-small");
    let seq_small_ns = median_latency(&seq_small);
    let rand_small_ns = median_latency(&samples(&r, "rand-small"));
    if !seq_small_ns.is_finite() || !rand_small_ns.is_finite() {
        return Err(fit_err(
            "the small-read probes logged no requests (valid: a target of a few MiB at least)"
                .into(),
        ));
    }
    // Stage two.
    let probes = plan::stage_seeks(target, budget, &zones).map_err(fit_err)?;
    let (bands, specs): (Vec<plan::SeekProbe>, Vec<JobSpec>) = probes.into_iter().unzip();
    let r = run(specs).map_err(Error::Run)?;
    let seek_points: Vec<SeekPoint> = bands
        .iter()
        .enumerate()
        .filter_map(|(k, p)| {
            // (A read from the drive's buffer takes about as long as a small sequential one,
            // which streams; one from the media seeks at least a track on top.)
            seek_point(p, &samples(&r, &plan::seek_name(k)), 2.0 * seq_small_ns)
        })
        .collect();
    if seek_points.len() < 2 {
        return Err(fit_err(format!(
            "{} of {} seek probes had enough far-to-near reads (valid: at least 2; give more --probes)",
            seek_points.len(),
            bands.len()
        )));
    }
    let positioning = positioning(&seek_points);
    let rotation = fit_rotation(&seek_points).filter(|_| positioning.found);
    // Stage three.
    let drive = match rotation {
        Some(rotation) => {
            let outer = zones.rate_at(0.0);
            // Read-ahead: a pause long enough to buffer a whole probe read (and a quarter
            // more); buffered reads: a pause that buffers four 64 KiB reads.
            let think = |bytes: u64| (bytes as f64 * 1.25 / outer * 1e9) as u64;
            let mut specs = plan::stage_read_ahead(target, budget, think(plan::READ_AHEAD_BS))
                .map_err(fit_err)?;
            specs.extend(
                plan::stage_buffered(target, budget, think(4 * plan::BUFFERED_LARGE))
                    .map_err(fit_err)?,
            );
            let r = run(specs).map_err(Error::Run)?;
            // Small sequential reads that wait a quarter turn or more are not read ahead.
            let reads_ahead = seq_small_ns < rotation.rev_ns / 4.0;
            let overhead = if reads_ahead {
                fit_overhead(
                    &samples(&r, "buffered-small"),
                    &samples(&r, "buffered-large"),
                    zones.outer_bytes_s,
                )
            } else {
                fit_overhead(&[], &[], zones.outer_bytes_s)
            };
            let read_ahead = if reads_ahead {
                fit_read_ahead(
                    &samples(&r, "stream"),
                    &samples(&r, "read-ahead"),
                    &overhead,
                    outer,
                )
            } else {
                None
            };
            // What the model charges a small read besides positioning: the command and the
            // slower of the interface and the media under the near band.
            let fixed = |p: &plan::SeekProbe| {
                let media = zones.rate_at(p.a as f64 / target.size as f64);
                overhead.command_ns + plan::SMALL as f64 * 1e9 / media.min(overhead.iface_bytes_s)
            };
            let seek = fit_seeks(&seek_points, rotation.rev_ns, fixed);
            render::Drive::Hdd(render::HddFit {
                rotation,
                overhead,
                seek,
                seek_points,
                read_ahead,
            })
        }
        None => {
            let r = run(plan::stage_flash(target, budget).map_err(fit_err)?).map_err(Error::Run)?;
            let iops: Vec<(u32, f64)> = plan::FLASH_DEPTHS
                .iter()
                .filter_map(|&d| rates(&r, &plan::depth_name(d)).map(|x| (d, x.0)))
                .collect();
            let seq = rates(&r, "seq-deep").map_or(0.0, |x| x.1);
            let depth1 = samples(&r, &plan::depth_name(1));
            if depth1.len() < 2 || seq <= 0.0 {
                return Err(fit_err("the flash probes logged no requests".into()));
            }
            render::Drive::Flash(fit_flash(&depth1, &iops, seq))
        }
    };
    Ok(render::Calibration {
        target: target.name.clone(),
        date: date.to_string(),
        name: name.to_string(),
        size: target.size,
        requests: budget.requests,
        zones,
        seq_small_ns,
        rand_small_ns,
        positioning,
        drive,
    })
}
