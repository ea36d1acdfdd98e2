//! The real side effects around runs: shell hooks, dropping the page cache, reading a dummy
//! file, and the member files of arrays the lab builds. This is the crate's I/O edge.

use crate::campaign::Actions;
use crate::error::LabError;
use raidlab_engine::safety::{foreign_data, mark_scratch};
use std::io::{Read, Write};
use std::process::Command;

/// Runs hooks with `sh -c`; their output goes to the campaign's stderr.
#[derive(Default)]
pub struct SystemActions;

impl Actions for SystemActions {
    fn command(&mut self, cmd: &str) -> Result<(), LabError> {
        let status = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdout(std::process::Stdio::from(std::io::stderr()))
            .status()
            .map_err(|e| LabError::failed(format!("cannot start sh for '{cmd}': {e}")))?;
        if !status.success() {
            // Ctrl-C reaches the hook too (the terminal signals the whole process group):
            // that is the sweep being interrupted, not the hook failing.
            use std::os::unix::process::ExitStatusExt;
            if status.signal() == Some(2) {
                return Err(LabError::failed(format!(
                    "interrupted by Ctrl-C during '{cmd}'; run the same sweep again to resume"
                )));
            }
            return Err(LabError::failed(format!("'{cmd}' failed ({status})")));
        }
        Ok(())
    }

    fn drop_caches(&mut self) -> Result<(), LabError> {
        // SAFETY: sync(2) takes no arguments and cannot fail.
        unsafe { libc_sync() };
        std::fs::OpenOptions::new()
            .write(true)
            .open("/proc/sys/vm/drop_caches")
            .and_then(|mut f| f.write_all(b"3\n"))
            .map_err(|e| {
                LabError::failed(format!(
                    "cannot drop the page cache (/proc/sys/vm/drop_caches: {e}); run as root or use cache_defeat = {{ read_file = …, size = … }}"
                ))
            })
    }

    /// The dummy file is only ever written when raidlab made it: a missing path is created
    /// (and marked as raidlab's scratch), a file raidlab made earlier (the mark, or all holes)
    /// is extended; any other file shorter than `size` is refused, and a block device is only
    /// read (refused when smaller than `size`). Nothing holding data is written.
    fn read_file(&mut self, path: &str, size: u64) -> Result<(), LabError> {
        use std::os::unix::fs::FileTypeExt;
        let e = |m: String| LabError::failed(format!("cache defeat file {path}: {m}"));
        let meta = match std::fs::metadata(path) {
            Ok(m) => Some(m),
            Err(x) if x.kind() == std::io::ErrorKind::NotFound => None,
            Err(x) => return Err(e(x.to_string())),
        };
        match &meta {
            None => {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)
                    .map_err(|x| e(x.to_string()))?;
                mark_scratch(&f);
                fill(&f, 0, size).map_err(|x| e(x.to_string()))?;
            }
            Some(m) if m.file_type().is_block_device() => {
                let have = std::fs::File::open(path)
                    .and_then(|mut f| std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0)))
                    .map_err(|x| e(x.to_string()))?;
                if have < size {
                    return Err(LabError::usage(format!(
                        "cache defeat file {path}: a block device of {have} bytes, smaller than size = {size}; it is only read, never written (give a device of at least {size} bytes, or a new file path for raidlab to create)"
                    )));
                }
            }
            Some(m) if m.is_file() => {
                let have = m.len();
                if have < size {
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(path)
                        .map_err(|x| e(x.to_string()))?;
                    if foreign_data(&f).map_err(|x| e(x.to_string()))? {
                        return Err(LabError::usage(format!(
                            "cache defeat file {path}: holds data ({have} bytes, less than size = {size}) and was not made by raidlab, so it is not written (give a new path for raidlab to create, or a file of at least {size} bytes)"
                        )));
                    }
                    mark_scratch(&f);
                    fill(&f, have, size - have).map_err(|x| e(x.to_string()))?;
                }
            }
            Some(_) => {
                return Err(LabError::usage(format!(
                    "cache defeat file {path}: not a regular file or block device (give a file path; raidlab creates it if missing)"
                )))
            }
        }
        let mut f = std::fs::File::open(path).map_err(|x| e(x.to_string()))?;
        let mut buf = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            let n = f.read(&mut buf).map_err(|x| e(x.to_string()))?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n as u64);
        }
        Ok(())
    }

    fn create_files(&mut self, files: &[String], size: u64) -> Result<(), LabError> {
        for f in files {
            if let Some(dir) = std::path::Path::new(f).parent() {
                std::fs::create_dir_all(dir).map_err(|e| {
                    LabError::failed(format!("member folder {}: {e}", dir.display()))
                })?;
            }
            let file = std::fs::OpenOptions::new().write(true).create_new(true).open(f).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    LabError::usage(format!(
                        "member file {f} already exists; the lab makes member files itself and will not reuse one (remove it, or give members as a list)"
                    ))
                } else {
                    LabError::failed(format!("member file {f}: {e}"))
                }
            })?;
            file.set_len(size)
                .map_err(|e| LabError::failed(format!("member file {f}: {e}")))?;
        }
        Ok(())
    }

    fn remove_files(&mut self, files: &[String]) -> Result<(), LabError> {
        let mut first = Ok(());
        for f in files {
            if let Err(e) = std::fs::remove_file(f) {
                if e.kind() != std::io::ErrorKind::NotFound && first.is_ok() {
                    first = Err(LabError::failed(format!(
                        "cannot remove member file {f}: {e}"
                    )));
                }
            }
        }
        first
    }
}

/// Write `len` bytes of data (not a sparse hole, which would be read from no cache at all)
/// at `from`, then sync.
fn fill(f: &std::fs::File, from: u64, len: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let block = vec![0x5au8; 1 << 20];
    let mut at = from;
    let end = from + len;
    while at < end {
        let n = (end - at).min(block.len() as u64) as usize;
        f.write_all_at(&block[..n], at)?;
        at += n as u64;
    }
    f.sync_all()
}

extern "C" {
    #[link_name = "sync"]
    fn libc_sync();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_report_failure_with_the_command() {
        let mut a = SystemActions;
        a.command("true").unwrap();
        let e = a.command("exit 3").unwrap_err();
        assert!(
            !e.is_usage() && e.to_string().contains("'exit 3' failed"),
            "{e}"
        );
        // A hook Ctrl-C ended is the sweep being interrupted, not the hook failing.
        let e = a.command("kill -INT $$").unwrap_err();
        assert!(
            e.to_string()
                .contains("interrupted by Ctrl-C during 'kill -INT $$'"),
            "{e}"
        );
    }

    #[test]
    fn member_files_are_made_once_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<String> = (0..2)
            .map(|i| dir.path().join(format!("sub/m{i}")).display().to_string())
            .collect();
        let mut a = SystemActions;
        a.create_files(&files, 1 << 20).unwrap();
        assert_eq!(std::fs::metadata(&files[1]).unwrap().len(), 1 << 20);
        let e = a.create_files(&files, 1 << 20).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("already exists"));
        a.remove_files(&files).unwrap();
        assert!(!std::path::Path::new(&files[0]).exists());
    }

    #[test]
    fn dummy_file_is_created_to_size_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("dummy").display().to_string();
        let mut a = SystemActions;
        a.read_file(&p, 3 << 20).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 3 << 20);
        a.read_file(&p, 1 << 20).unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().len(),
            3 << 20,
            "an existing larger file is kept"
        );
        // A file raidlab made may be grown.
        a.read_file(&p, 4 << 20).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 4 << 20);
    }

    #[test]
    fn dummy_file_holding_someone_elses_data_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("notes.txt");
        std::fs::write(&p, b"my notes\n").unwrap();
        let path = p.display().to_string();
        let mut a = SystemActions;
        let e = a.read_file(&path, 2 << 20).unwrap_err();
        assert!(e.is_usage(), "{e}");
        let m = e.to_string();
        assert!(
            m.contains("holds data") && m.contains("new path") && !m.contains('\n'),
            "{m}"
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"my notes\n", "left as it was");
        // A file at least as large is only read.
        a.read_file(&path, 4).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"my notes\n");
        // A sparse file (all holes, no data) may be filled.
        let sparse = dir.path().join("sparse");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(4096)
            .unwrap();
        a.read_file(&sparse.display().to_string(), 1 << 20).unwrap();
        assert_eq!(std::fs::metadata(&sparse).unwrap().len(), 1 << 20);
        // A folder is refused.
        let e = a
            .read_file(&dir.path().display().to_string(), 1)
            .unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("not a regular file"),
            "{e}"
        );
    }

    #[test]
    fn block_devices_are_only_read() {
        // Any block device this machine has, opened read-only: too small is refused, and
        // nothing is ever written (the read path opens it read-only).
        let Some(dev) = std::fs::read_dir("/dev").ok().and_then(|d| {
            d.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| {
                use std::os::unix::fs::FileTypeExt;
                std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
                    && std::fs::File::open(p).is_ok()
            })
        }) else {
            eprintln!("no readable block device here; skipped");
            return;
        };
        let mut a = SystemActions;
        let e = a
            .read_file(&dev.display().to_string(), u64::MAX / 2)
            .unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("smaller than size"),
            "{e}"
        );
    }
}
