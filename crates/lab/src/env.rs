//! The environment a campaign runs in: kernel, CPU, host, raidlab version and, for targets on
//! block devices, the device model and queue settings from sysfs. Reads /proc and /sys (the
//! root is a parameter, so tests use a fake tree).

use crate::db::{DeviceInfo, Environment};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Capture the environment. `targets` are the paths runs will touch (array members included).
pub fn capture(version: &str, targets: &[String]) -> Environment {
    let kernel =
        read_trim(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_else(|| "unknown".into());
    let hostname =
        read_trim(Path::new("/proc/sys/kernel/hostname")).unwrap_or_else(|| "unknown".into());
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let mut devices = Vec::new();
    for t in targets {
        if let Some(d) = device_of(Path::new("/sys"), t) {
            if !devices
                .iter()
                .any(|x: &DeviceInfo| x.block_device == d.block_device)
            {
                devices.push(d);
            }
        }
    }
    Environment {
        kernel,
        cpu_model,
        raidlab_version: version.to_string(),
        hostname,
        devices,
    }
}

/// Paths a target touches: `array:a,b` → a and b; `sim:` → none; a colon list → each.
pub fn target_paths(target: &str) -> Vec<String> {
    if target.starts_with("sim:") {
        return Vec::new();
    }
    if let Some(m) = target.strip_prefix("array:") {
        return m.split(',').map(str::to_string).collect();
    }
    vec![target.to_string()]
}

/// The block device `path` is (or, for a regular file, lives on) and its queue settings.
pub fn device_of(sys: &Path, path: &str) -> Option<DeviceInfo> {
    let meta = std::fs::metadata(path).ok()?;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = split_dev(dev);
    let link = sys.join(format!("dev/block/{major}:{minor}"));
    let dir = std::fs::canonicalize(&link).ok()?;
    Some(device_info(&dir, path))
}

/// Linux's encoding of a device number (glibc's gnu_dev_major/minor).
fn split_dev(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// Read a device's settings from its sysfs folder; a partition reads its disk's queue.
pub fn device_info(dir: &Path, target: &str) -> DeviceInfo {
    let disk = if dir.join("queue").is_dir() {
        dir.to_path_buf()
    } else {
        dir.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let q = |f: &str| read_trim(&disk.join("queue").join(f));
    DeviceInfo {
        target: target.to_string(),
        block_device: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        model: read_trim(&disk.join("device/model")),
        scheduler: q("scheduler"),
        rotational: q("rotational"),
        nr_requests: q("nr_requests"),
        read_ahead_kb: q("read_ahead_kb"),
        logical_block_size: q("logical_block_size"),
        max_sectors_kb: q("max_sectors_kb"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_queue_settings_of_a_disk_and_of_a_partition() {
        let root = tempfile::tempdir().unwrap();
        let disk = root.path().join("sda");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(disk.join("device")).unwrap();
        std::fs::create_dir_all(disk.join("sda1")).unwrap();
        for (f, v) in [
            ("scheduler", "[mq-deadline] none"),
            ("rotational", "1"),
            ("nr_requests", "64"),
            ("read_ahead_kb", "128"),
            ("logical_block_size", "512"),
            ("max_sectors_kb", "1280"),
        ] {
            std::fs::write(disk.join("queue").join(f), format!("{v}\n")).unwrap();
        }
        std::fs::write(disk.join("device/model"), "ST973451SS      \n").unwrap();
        let d = device_info(&disk, "/dev/sda");
        assert_eq!(d.block_device, "sda");
        assert_eq!(d.model.as_deref(), Some("ST973451SS"));
        assert_eq!(d.scheduler.as_deref(), Some("[mq-deadline] none"));
        assert_eq!(d.max_sectors_kb.as_deref(), Some("1280"));
        let p = device_info(&disk.join("sda1"), "/dev/sda1");
        assert_eq!(p.block_device, "sda1");
        assert_eq!(p.rotational.as_deref(), Some("1"));
    }

    #[test]
    fn captures_this_machine() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let env = capture("raidlab-test", &[f.display().to_string()]);
        assert_eq!(env.raidlab_version, "raidlab-test");
        assert_ne!(env.kernel, "unknown");
        // The file's device is found when sysfs knows it (not on every filesystem, e.g. overlay).
        for d in &env.devices {
            assert_eq!(d.target, f.display().to_string());
        }
        assert_eq!(target_paths("array:/a,/b"), ["/a", "/b"]);
        assert!(target_paths("sim:x.toml").is_empty());
        assert_eq!(split_dev(0x0803), (8, 3));
    }
}
