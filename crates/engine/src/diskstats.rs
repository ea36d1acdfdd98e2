//! fio's disk statistics: what the disks under a run's targets did while its jobs ran, from
//! the kernel's per-disk counters (`/sys/block/NAME/stat`, described in the kernel's
//! Documentation/block/stat.rst) read as the jobs start and again as they end.
//!
//! The disk of a path: a block device itself (a partition's whole disk, as fio names it), or
//! the device holding a file; a file on a filesystem without one (tmpfs, overlay) has none
//! and is left out. A raidlab array's disks are those of its members. The counters cover
//! everything the disk did in that time, the run's I/O and anyone else's.

use raidlab_result::DiskUtil;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// One reading of a disk's `stat` file: the first eleven fields, which every kernel since
/// 2.6 gives (later ones add discard and flush counters after them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    /// Milliseconds.
    pub read_ticks: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks: u64,
    pub in_flight: u64,
    /// Milliseconds with at least one request in flight.
    pub io_ticks: u64,
    /// Milliseconds of requests in flight, weighted by their number.
    pub time_in_queue: u64,
}

impl Counters {
    /// The fields of a `stat` file's line; None when it has fewer than eleven numbers.
    pub fn parse(text: &str) -> Option<Counters> {
        let mut n = text.split_whitespace().map(|w| w.parse::<u64>());
        let mut next = || n.next()?.ok();
        Some(Counters {
            read_ios: next()?,
            read_merges: next()?,
            read_sectors: next()?,
            read_ticks: next()?,
            write_ios: next()?,
            write_merges: next()?,
            write_sectors: next()?,
            write_ticks: next()?,
            in_flight: next()?,
            io_ticks: next()?,
            time_in_queue: next()?,
        })
    }

    /// What the disk did from `before` to `self`, over `elapsed_ns`. (Saturating: a counter
    /// that went back, a disk detached and attached again between the readings, counts 0.)
    pub fn since(&self, before: &Counters, name: &str, elapsed_ns: u64) -> DiskUtil {
        const MS: u64 = 1_000_000;
        DiskUtil {
            name: name.to_string(),
            read_ios: self.read_ios.saturating_sub(before.read_ios),
            write_ios: self.write_ios.saturating_sub(before.write_ios),
            read_merges: self.read_merges.saturating_sub(before.read_merges),
            write_merges: self.write_merges.saturating_sub(before.write_merges),
            // (Sectors of 512 bytes whatever the disk's own sector size, as the kernel counts.)
            read_bytes: self.read_sectors.saturating_sub(before.read_sectors) * 512,
            write_bytes: self.write_sectors.saturating_sub(before.write_sectors) * 512,
            read_ticks_ns: self.read_ticks.saturating_sub(before.read_ticks) * MS,
            write_ticks_ns: self.write_ticks.saturating_sub(before.write_ticks) * MS,
            in_queue_ns: self.time_in_queue.saturating_sub(before.time_in_queue) * MS,
            busy_ns: self.io_ticks.saturating_sub(before.io_ticks) * MS,
            elapsed_ns,
        }
    }
}

/// The sysfs directory of the whole disk behind `path` (`/sys/devices/…/block/vda`); None
/// for a file on a filesystem without a block device, or a device sysfs does not list.
pub fn disk_dir(path: &Path) -> io::Result<Option<PathBuf>> {
    let m = std::fs::metadata(path)?;
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        // (Anonymous devices: tmpfs, overlay, proc.)
        return Ok(None);
    }
    let sys = match Path::new(&format!("/sys/dev/block/{major}:{minor}")).canonicalize() {
        Ok(p) => p,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // A partition's disk is the directory above it.
    Ok(Some(if sys.join("partition").exists() {
        sys.parent().map(Path::to_path_buf).unwrap_or(sys)
    } else {
        sys
    }))
}

/// The disks under a run's paths, read once as the jobs start.
#[derive(Debug, Default)]
pub struct Watch {
    /// Each disk once, in the order its first path came: name, `stat` file, first reading.
    disks: Vec<(String, PathBuf, Counters)>,
    start_ns: u64,
}

impl Watch {
    /// Read the counters of the disks under `paths` at `now_ns`. A path with no disk, or
    /// whose disk's counters cannot be read, is left out: the statistics are a report on
    /// the side, and a run does not fail for them.
    pub fn start<'a>(paths: impl IntoIterator<Item = &'a Path>, now_ns: u64) -> Watch {
        let mut w = Watch {
            disks: Vec::new(),
            start_ns: now_ns,
        };
        for p in paths {
            let Ok(Some(dir)) = disk_dir(p) else { continue };
            let name = dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            if w.disks.iter().any(|d| d.0 == name) {
                continue;
            }
            let stat = dir.join("stat");
            if let Some(c) = read(&stat) {
                w.disks.push((name, stat, c));
            }
        }
        w
    }

    /// Read them again at `now_ns`: each disk's work since [`Watch::start`].
    pub fn finish(&self, now_ns: u64) -> Vec<DiskUtil> {
        let elapsed = now_ns.saturating_sub(self.start_ns);
        self.disks
            .iter()
            .filter_map(|(name, stat, before)| Some(read(stat)?.since(before, name, elapsed)))
            .collect()
    }
}

fn read(stat: &Path) -> Option<Counters> {
    Counters::parse(&std::fs::read_to_string(stat).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `stat` line of kernel 6.x (seventeen fields: discards and flushes after the eleven).
    const LINE: &str = "32395313    62948 271463749  2353016   115066    21447  2944572    23144        0   161940  2379828      430        0    51260       90     7374     3577\n";

    #[test]
    fn the_first_eleven_fields_are_read() {
        let c = Counters::parse(LINE).unwrap();
        assert_eq!(
            c,
            Counters {
                read_ios: 32_395_313,
                read_merges: 62_948,
                read_sectors: 271_463_749,
                read_ticks: 2_353_016,
                write_ios: 115_066,
                write_merges: 21_447,
                write_sectors: 2_944_572,
                write_ticks: 23_144,
                in_flight: 0,
                io_ticks: 161_940,
                time_in_queue: 2_379_828,
            }
        );
        assert_eq!(Counters::parse("1 2 3 4 5 6 7 8 9 10"), None);
        assert_eq!(Counters::parse("1 2 3 4 5 6 7 8 9 10 x"), None);
    }

    /// Two readings of a loop device around a 2 s fio run: fio's figures for it were
    /// ios=119975/119782, ticks=3602/3607, util=83.85% over its own window.
    #[test]
    fn the_difference_is_the_disks_work() {
        let before = Counters::parse(LINE).unwrap();
        let after = Counters::parse("32524975    62948 272501045  2356805   244741    21447  3981972    26927        0   163716  2387401").unwrap();
        let d = after.since(&before, "loop0", 2_000_000_000);
        assert_eq!((d.read_ios, d.write_ios), (129_662, 129_675));
        assert_eq!((d.read_merges, d.write_merges), (0, 0));
        assert_eq!(d.read_bytes, 1_037_296 * 512);
        assert_eq!(d.read_ticks_ns, 3_789_000_000);
        assert_eq!(d.write_ticks_ns, 3_783_000_000);
        assert_eq!(d.in_queue_ns, 7_573_000_000);
        assert_eq!(d.busy_ns, 1_776_000_000);
        assert!((d.utilization() - 0.888).abs() < 1e-12);
        // A counter gone back counts nothing, not a wrapped-around count.
        assert_eq!(before.since(&after, "loop0", 1).read_ios, 0);
    }

    /// The disk of a file on a filesystem without a block device is none; a path that is
    /// not there is an error for the caller to pass over.
    #[test]
    fn tmpfs_has_no_disk() {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            assert_eq!(disk_dir(shm).unwrap(), None);
        }
        assert!(disk_dir(Path::new("/nonexistent/raidlab")).is_err());
        let w = Watch::start([shm, Path::new("/nonexistent/raidlab")], 5);
        assert!(w.finish(10).is_empty());
    }
}
