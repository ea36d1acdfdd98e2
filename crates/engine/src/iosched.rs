//! fio's `ioscheduler`: the kernel I/O scheduler of the block device behind a job's target
//! (its request queue's `queue/scheduler` in sysfs), switched when the job's stonewall group
//! starts and switched back when the run ends, whatever way it ends: a run leaves the
//! machine's settings as it found them (fio leaves them switched).
//!
//! The queue of a path: a block device's own (a partition's is its disk's), or that of the
//! device holding a file; a file on a filesystem with no block device (tmpfs, overlay) has
//! none.

use std::io;
use std::path::{Path, PathBuf};

/// The schedulers a `queue/scheduler` file offers, and the one in use (in brackets):
/// `none [mq-deadline] kyber bfq`.
pub fn parse_offered(text: &str) -> (Vec<String>, Option<String>) {
    let mut offered = Vec::new();
    let mut current = None;
    for word in text.split_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(w) => {
                current = Some(w.to_string());
                offered.push(w.to_string());
            }
            None => offered.push(word.to_string()),
        }
    }
    (offered, current)
}

/// The `queue/scheduler` file of the block device behind `path`, None when there is none.
pub fn queue_file(path: &Path) -> io::Result<Option<PathBuf>> {
    // (A partition's requests go through its disk's queue.)
    Ok(crate::diskstats::disk_dir(path)?
        .map(|disk| disk.join("queue/scheduler"))
        .filter(|f| f.exists()))
}

/// The device a `queue/scheduler` file belongs to, for messages: `loop0`.
pub fn device_name(queue_file: &Path) -> String {
    queue_file
        .ancestors()
        .nth(2)
        .and_then(Path::file_name)
        .map_or_else(
            || queue_file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
}

/// The schedulers switched so far and what each queue ran before; dropped, it switches
/// each back.
#[derive(Debug, Default)]
pub struct Switched {
    before: Vec<(PathBuf, String)>,
}

impl Switched {
    /// Run `name` on the queue of `file` (its first switch remembers what ran before).
    /// Returns what ran before when it changed, None when `name` already ran.
    pub fn switch(&mut self, file: &Path, name: &str) -> io::Result<Option<String>> {
        let (_, current) = parse_offered(&std::fs::read_to_string(file)?);
        let current = current.unwrap_or_default();
        if current == name {
            return Ok(None);
        }
        std::fs::write(file, name)?;
        if !self.before.iter().any(|(f, _)| f == file) {
            self.before.push((file.to_path_buf(), current.clone()));
        }
        Ok(Some(current))
    }
}

impl Drop for Switched {
    fn drop(&mut self) {
        for (file, name) in self.before.drain(..).rev() {
            if let Err(e) = std::fs::write(&file, &name) {
                crate::ewriteln!(
                    "raidlab: warning: cannot switch {} back to the {name} I/O scheduler: {e}",
                    device_name(&file)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offered_list_and_the_one_in_use() {
        let (o, c) = parse_offered("none [mq-deadline] kyber bfq \n");
        assert_eq!(o, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(c.as_deref(), Some("mq-deadline"));
        assert_eq!(
            parse_offered("[none]\n"),
            (vec!["none".to_string()], Some("none".into()))
        );
        assert_eq!(parse_offered(""), (vec![], None));
    }

    /// A file in memory (tmpfs) has no block device; the root filesystem's file has its
    /// disk's queue.
    #[test]
    fn files_are_on_their_devices_queue() {
        let shm = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
        assert_eq!(queue_file(shm.path()).unwrap(), None);
        let disk = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
        if let Some(q) = queue_file(disk.path()).unwrap() {
            assert!(q.ends_with("queue/scheduler"), "{}", q.display());
            assert!(!device_name(&q).is_empty());
        }
    }
}
