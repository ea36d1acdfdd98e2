//! The real side effects around runs: shell hooks, dropping the page cache, reading a dummy
//! file, and the member files of arrays the lab builds. This is the crate's I/O edge.

use crate::campaign::Actions;
use crate::error::LabError;
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

    fn read_file(&mut self, path: &str, size: u64) -> Result<(), LabError> {
        let e = |m: String| LabError::failed(format!("cache defeat file {path}: {m}"));
        let have = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if have < size {
            // Fill it with data (not a sparse hole, which would be read from no cache at all).
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|x| e(x.to_string()))?;
            let block = vec![0x5au8; 1 << 20];
            let mut left = size - have;
            while left > 0 {
                let n = left.min(block.len() as u64) as usize;
                f.write_all(&block[..n]).map_err(|x| e(x.to_string()))?;
                left -= n as u64;
            }
            f.sync_all().map_err(|x| e(x.to_string()))?;
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
    }
}
