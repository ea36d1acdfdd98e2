//! `raidlab calibrate TARGET`: measure a drive with read-only probes and print a `[[disk]]`
//! description of it for the simulator. The probes and fits are `raidlab_calibrate`'s; this
//! module checks the arguments, finds the target's size, runs each stage's probes through
//! [`crate::cmd::run::execute`] (the executors `raidlab run` uses), and reads the date.

use crate::cmd::run::{execute, target_kind, ExecOptions, TargetKind};
use crate::error::CliError;
use raidlab_calibrate::plan::{Budget, Target};
use raidlab_calibrate::Error;
use raidlab_engine::ewriteln;
use std::path::Path;

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// A block device, a file on a disk, or a simulated drive (sim:SYSTEM.toml#LUN). Only read.
    target: String,
    /// Bytes to probe from the start of the target, e.g. 100g (default: all of it).
    #[arg(long)]
    size: Option<String>,
    /// Requests of each latency probe (seek distances, small reads, flash depths).
    #[arg(long, default_value_t = 400)]
    probes: u64,
    /// A cap on each probe's time, e.g. 5s (default: none; the probe's requests end it).
    #[arg(long)]
    runtime: Option<String>,
    /// The name the [[disk]] stanza gives the drive.
    #[arg(long, default_value = "calibrated")]
    name: String,
    /// text (summary and stanza), toml (the stanza alone) or json (bytes and ns).
    #[arg(long = "output-format", default_value = "text")]
    output_format: String,
}

/// Smallest target worth probing: the rate probes read 8 MiB at each of their positions
/// and the read-ahead probe 32 MiB reads.
const MIN_SIZE: u64 = 256 << 20;

pub fn main(a: CalibrateArgs) -> Result<(), CliError> {
    let format = a.output_format.as_str();
    if !["text", "toml", "json"].contains(&format) {
        return Err(CliError::usage(format!(
            "calibrate: --output-format '{format}' is not known (valid: text, toml, json)"
        )));
    }
    if !(16..=1_000_000).contains(&a.probes) {
        return Err(CliError::usage(format!(
            "calibrate: --probes {} is out of range (valid: 16 to 1000000 requests a probe)",
            a.probes
        )));
    }
    let name_ok = !a.name.is_empty()
        && a.name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !name_ok {
        return Err(CliError::usage(format!(
            "calibrate: --name '{}' is not a plain name (valid: letters, digits, - _ .)",
            a.name
        )));
    }
    let runtime_ns = match &a.runtime {
        None => 0,
        Some(t) => match raidlab_workload::size::parse_duration_ns(t) {
            Ok(ns) if ns >= 1_000_000 => ns,
            Ok(_) => {
                return Err(CliError::usage(format!(
                    "calibrate: --runtime {t} is too short (valid: 1ms or more, e.g. 5s)"
                )))
            }
            Err(e) => return Err(CliError::usage(format!("calibrate: --runtime {t}: {e}"))),
        },
    };
    let (name, capacity) = target_size(&a.target)?;
    let size = match &a.size {
        None => capacity,
        Some(s) => {
            let v = raidlab_workload::size::parse_size(s)
                .map_err(|e| CliError::usage(format!("calibrate: --size {s}: {e}")))?;
            if v > capacity {
                return Err(CliError::usage(format!(
                    "calibrate: --size {s} is larger than {} ({capacity} bytes; valid: up to that)",
                    a.target
                )));
            }
            v
        }
    };
    if size < MIN_SIZE {
        return Err(CliError::usage(format!(
            "calibrate: {} bytes of {} to probe (valid: at least {} MiB)",
            size,
            a.target,
            MIN_SIZE >> 20
        )));
    }
    refuse_holes(&name, size)?;
    let target = Target { name, size };
    let budget = Budget {
        requests: a.probes,
        runtime_ns,
        ..Budget::default()
    };
    let date = today();
    // Read-only, as the probes promise: a job that writes or trims, or a file that would be
    // laid out, is refused by the run itself, whatever the probe plan says.
    let opts = ExecOptions {
        readonly: true,
        ..ExecOptions::default()
    };
    let cal = raidlab_calibrate::calibrate(&target, &budget, &a.name, &date, |specs| {
        let r = execute(specs, &opts)?;
        // Ctrl-C ends the probe running (its results come back); the stages after it would
        // measure nothing, so the calibration stops here.
        // It exits as an interrupted run does: 128 + the signal.
        if let Some(code) = crate::cmd::run::interrupt_exit_code() {
            return Err(CliError {
                code,
                message: format!(
                    "calibrate: interrupted by {}: nothing fitted",
                    crate::cmd::run::interrupt_name()
                ),
            });
        }
        Ok(r)
    })
    .map_err(|e| match e {
        Error::Run(e) => e,
        Error::Fit(m) => CliError::failed(format!("calibrate: {m}")),
    })?;
    let out = match format {
        "toml" => cal.stanza(),
        "json" => {
            let j = serde_json::to_string_pretty(&cal.json())
                .map_err(|e| CliError::failed(format!("calibrate: encoding JSON: {e}")))?;
            format!("{j}\n")
        }
        _ => format!("{}\n{}", cal.text(), cal.stanza()),
    };
    crate::stdout::print(&out)
}

/// The target as the executors take it, and its size in bytes: a simulated LUN's
/// capacity, a block device's or a regular file's size. Nothing is created or written.
fn target_size(t: &str) -> Result<(String, u64), CliError> {
    match target_kind(t) {
        TargetKind::Simulated => {
            let lun = raidlab_sim::lun_info(t).map_err(CliError::sim)?;
            // Name the LUN, so each probe runs on that one alone.
            let system = t.strip_prefix("sim:").unwrap_or(t);
            let system = system.split_once('#').map_or(system, |(s, _)| s);
            let name = format!("sim:{system}#{}", lun.name);
            // An array, or a cache in the way, answers as no one drive does: its stanza
            // would describe a drive that does not exist. Said, not refused (what such a
            // LUN looks like as one drive may be the question).
            if let Some(why) = &lun.not_one_drive {
                ewriteln!(
                    "raidlab: note: calibrate: {name} is {why}: the [[disk]] stanza fits it as if it were one drive, not the drives in it"
                );
            }
            Ok((name, lun.capacity))
        }
        TargetKind::Array => Err(CliError::usage(format!(
            "calibrate: '{t}' is an array; calibrate measures one drive (valid: a block device, a file, or sim:SYSTEM.toml#LUN)"
        ))),
        TargetKind::Path => {
            use std::os::unix::fs::FileTypeExt;
            let p = Path::new(t);
            let meta = std::fs::metadata(p).map_err(|e| {
                CliError::usage(format!(
                    "calibrate: cannot use {t}: {e} (valid: an existing block device or file; calibrate only reads)"
                ))
            })?;
            let ft = meta.file_type();
            if ft.is_block_device() {
                let f = std::fs::File::open(p)
                    .map_err(|e| CliError::usage(format!("calibrate: cannot open {t}: {e}")))?;
                Ok((t.to_string(), block_device_size(&f).map_err(|e| {
                    CliError::failed(format!("calibrate: size of {t}: {e}"))
                })?))
            } else if ft.is_file() {
                Ok((t.to_string(), meta.len()))
            } else {
                Err(CliError::usage(format!(
                    "calibrate: {t} is neither a block device nor a regular file (valid: one of those, or sim:SYSTEM.toml#LUN)"
                )))
            }
        }
    }
}

/// Refuse a regular file whose probed region is mostly holes: calibrate only reads, reads of
/// holes never reach the device, and the fit would describe memory (a sparse file probed at
/// 41876 MB/s and was printed as a flash drive), with the same warning from each probe.
fn refuse_holes(t: &str, size: u64) -> Result<(), CliError> {
    let Ok(f) = std::fs::File::open(t) else {
        return Ok(()); // (not a path: sim: targets have no holes)
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let holes = raidlab_engine::safety::hole_bytes(&f, 0, size)
        .map_err(|e| CliError::failed(format!("calibrate: cannot map the holes of {t}: {e}")))?;
    // (A tenth: the fits take medians and rates over the whole region.)
    if holes > size / 10 {
        return Err(CliError::usage(format!(
            "calibrate: {}% of the {size} bytes of {t} to probe are holes, and calibrate only reads: reads of holes do not reach the device, so the fit would describe memory (valid: a block device, or a file written first, e.g. raidlab run --name=fill --rw=write --bs=1m --filename={t} --size={size})",
            holes * 100 / size.max(1)
        )));
    }
    Ok(())
}

fn block_device_size(f: &std::fs::File) -> std::io::Result<u64> {
    use std::os::fd::AsRawFd;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t) (include/uapi/linux/fs.h).
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 to the pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

/// Today's date (UTC), YYYY-MM-DD: the wall clock, read here at the edge.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date((secs / 86_400) as i64)
}

/// Days since 1970-01-01 → YYYY-MM-DD (the date the results' text output also uses).
fn civil_date(days: i64) -> String {
    let (y, m, d) = raidlab_result::render::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_date(0), "1970-01-01");
        assert_eq!(super::civil_date(11_016), "2000-02-29");
        assert_eq!(super::civil_date(19_723), "2024-01-01");
    }
}
