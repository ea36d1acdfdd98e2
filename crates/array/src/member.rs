//! A member device: a regular file or a block device holding one slot of an array.
//! This is the only place that touches members' bytes; everything above works in terms of
//! the member's data area.

use crate::error::ArrayError;
use crate::superblock::{read_newest, Superblock, SB_BYTES, SB_COPY_B};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Member {
    pub path: PathBuf,
    file: File,
    /// Total bytes of the file or device.
    pub size: u64,
    /// Start of the data area (from the superblock; 0 until one is known).
    pub data_offset: u64,
}

impl Member {
    /// Open an existing file or block device for reading and writing.
    pub fn open(path: &Path) -> Result<Member, ArrayError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    ArrayError::usage(format!(
                        "member {} does not exist (create the file first or pass --size)",
                        path.display()
                    ))
                } else {
                    ArrayError::io("cannot open member", path, &e)
                }
            })?;
        let meta = file
            .metadata()
            .map_err(|e| ArrayError::io("cannot stat member", path, &e))?;
        let size = if meta.is_file() {
            meta.len()
        } else {
            use std::os::unix::fs::FileTypeExt;
            if !meta.file_type().is_block_device() {
                return Err(ArrayError::usage(format!(
                    "member {} is neither a regular file nor a block device",
                    path.display()
                )));
            }
            (&file)
                .seek(SeekFrom::End(0))
                .map_err(|e| ArrayError::io("cannot size member", path, &e))?
        };
        Ok(Member {
            path: path.to_path_buf(),
            file,
            size,
            data_offset: 0,
        })
    }

    pub fn read_raw(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    pub fn write_raw(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.file.write_all_at(buf, offset)
    }

    /// Read from the data area.
    pub fn read_data(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.file.read_exact_at(buf, self.data_offset + offset)
    }

    /// Write to the data area.
    pub fn write_data(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.file.write_all_at(buf, self.data_offset + offset)
    }

    /// The open descriptor (for member I/O through io_uring).
    pub fn raw_fd(&self) -> std::os::unix::io::RawFd {
        use std::os::unix::io::AsRawFd;
        self.file.as_raw_fd()
    }

    pub fn flush(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    /// The newest valid superblock on this member, if any.
    pub fn read_superblock(&self) -> Result<Option<Superblock>, ArrayError> {
        if self.size < 2 * SB_BYTES as u64 {
            return Ok(None);
        }
        let mut a = vec![0u8; SB_BYTES];
        let mut b = vec![0u8; SB_BYTES];
        self.read_raw(&mut a, 0)
            .map_err(|e| ArrayError::io("cannot read superblock of", &self.path, &e))?;
        self.read_raw(&mut b, SB_COPY_B)
            .map_err(|e| ArrayError::io("cannot read superblock of", &self.path, &e))?;
        read_newest(&a, &b)
            .map_err(|m| ArrayError::usage(format!("member {}: {m}", self.path.display())))
    }

    /// Write both copies: A, flush, B, flush; so a torn write leaves one valid copy.
    pub fn write_superblock(&self, sb: &Superblock) -> Result<(), ArrayError> {
        let enc = sb.encode();
        let res = self
            .write_raw(&enc, 0)
            .and_then(|_| self.flush())
            .and_then(|_| self.write_raw(&enc, SB_COPY_B))
            .and_then(|_| self.flush());
        res.map_err(|e| ArrayError::io("cannot write superblock to", &self.path, &e))
    }

    /// Erase both superblock copies (the member no longer belongs to any array).
    pub fn erase_superblock(&self) -> Result<(), ArrayError> {
        let zero = vec![0u8; 2 * SB_BYTES];
        self.write_raw(&zero, 0)
            .and_then(|_| self.flush())
            .map_err(|e| ArrayError::io("cannot erase superblock of", &self.path, &e))
    }

    /// True if the first MiB (or the whole member, if smaller) holds any nonzero byte.
    pub fn has_nonzero_head(&self) -> Result<bool, ArrayError> {
        let n = self.size.min(1 << 20) as usize;
        let mut buf = vec![0u8; n];
        self.read_raw(&mut buf, 0)
            .map_err(|e| ArrayError::io("cannot read", &self.path, &e))?;
        Ok(buf.iter().any(|&b| b != 0))
    }
}
