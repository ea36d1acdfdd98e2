//! `array serve --fuse DIR`: the assembled array as one file, DIR/volume, through FUSE, so any
//! program (dd, fio, losetup + mkfs + mount) can use it. Files are opened in direct-I/O mode so
//! every read and write reaches the array (no page cache in between), with writes of up to
//! 1 MiB per request.

use crate::array::Array;
use crate::control::{self, Control};
use crate::error::ArrayError;
use crate::superblock::uuid_string;
use fuser::{
    FileAttr, FileType, Filesystem, KernelConfig, MountOption, ReplyAttr, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request,
};
use raidlab_engine::ewriteln;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub const VOLUME_NAME: &str = "volume";
const ROOT: u64 = 1;
const VOLUME: u64 = 2;
const TTL: Duration = Duration::from_secs(1);

struct VolumeFs {
    array: Arc<Array>,
    started: SystemTime,
    uid: u32,
    gid: u32,
}

impl VolumeFs {
    fn attr(&self, ino: u64) -> FileAttr {
        let (kind, perm, size, nlink) = if ino == ROOT {
            (FileType::Directory, 0o755, 0, 2)
        } else {
            (FileType::RegularFile, 0o600, self.array.capacity(), 1)
        };
        FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: self.started,
            mtime: self.started,
            ctime: self.started,
            crtime: self.started,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        }
    }
}

fn errno(e: &std::io::Error) -> i32 {
    match e.kind() {
        std::io::ErrorKind::InvalidInput => libc::EINVAL,
        _ => e.raw_os_error().unwrap_or(libc::EIO),
    }
}

impl Filesystem for VolumeFs {
    fn init(&mut self, _req: &Request<'_>, config: &mut KernelConfig) -> Result<(), libc::c_int> {
        let _ = config.set_max_write(1 << 20);
        let _ = config.set_max_readahead(1 << 20);
        Ok(())
    }

    fn destroy(&mut self) {
        let _ = self.array.flush();
    }

    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if parent == ROOT && name == VOLUME_NAME {
            reply.entry(&TTL, &self.attr(VOLUME), 0);
        } else {
            reply.error(libc::ENOENT);
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match ino {
            ROOT | VOLUME => reply.attr(&TTL, &self.attr(ino)),
            _ => reply.error(libc::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        // The volume's size is the array's: it cannot grow or shrink. Truncating to the
        // current size (what O_TRUNC-less tools do) is accepted.
        if ino == VOLUME && size.is_some_and(|s| s != self.array.capacity()) {
            reply.error(libc::EPERM);
            return;
        }
        reply.attr(&TTL, &self.attr(ino));
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        if ino != VOLUME {
            reply.error(libc::EISDIR);
            return;
        }
        reply.opened(0, fuser::consts::FOPEN_DIRECT_IO);
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        if ino != VOLUME || offset < 0 {
            reply.error(libc::EINVAL);
            return;
        }
        let cap = self.array.capacity();
        let off = offset as u64;
        let n = (size as u64).min(cap.saturating_sub(off)) as usize;
        let mut buf = vec![0u8; n];
        match self.array.read_at(&mut buf, off) {
            Ok(()) => reply.data(&buf),
            Err(e) => {
                ewriteln!("raidlab: read of {n} bytes at {off} failed: {e}");
                reply.error(errno(&e))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        if ino != VOLUME || offset < 0 {
            reply.error(libc::EINVAL);
            return;
        }
        let off = offset as u64;
        if off >= self.array.capacity() {
            reply.error(libc::ENOSPC);
            return;
        }
        let n = (data.len() as u64).min(self.array.capacity() - off) as usize;
        match self.array.write_at(&data[..n], off) {
            Ok(()) => reply.written(n as u32),
            Err(e) => {
                ewriteln!("raidlab: write of {n} bytes at {off} failed: {e}");
                reply.error(errno(&e))
            }
        }
    }

    fn flush(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        _lock_owner: u64,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.array.flush() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn readdir(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        mut reply: ReplyDirectory,
    ) {
        if ino != ROOT {
            reply.error(libc::ENOTDIR);
            return;
        }
        let entries = [
            (ROOT, FileType::Directory, "."),
            (ROOT, FileType::Directory, ".."),
            (VOLUME, FileType::RegularFile, VOLUME_NAME),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, (i + 1) as i64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

/// Serve `array` at `dir`/volume until `stop` is set (SIGINT/SIGTERM), answering `raidlab
/// array fail` on the array's control socket meanwhile; then unmount and stop the array
/// cleanly. The caller holds the members' locks (see [`crate::control`]).
/// Whether `dir` may be the mount point of `serve --fuse`: a directory, and an empty one
/// unless `force`. A mount hides what a directory holds until it is unmounted (the array's
/// own member files, if they sit there), so a non-empty one is refused in one line that
/// names what is there.
pub fn check_mount_dir(dir: &Path, force: bool) -> Result<(), ArrayError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || !dir.is_dir() => {
            return Err(ArrayError::usage(format!(
                "--fuse {}: not a directory (valid: an existing empty directory; create it first)",
                dir.display()
            )))
        }
        Err(e) => {
            return Err(ArrayError::usage(format!(
                "--fuse {}: cannot list it: {e} (valid: an empty directory this user can read)",
                dir.display()
            )))
        }
    };
    if force {
        return Ok(());
    }
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    names.sort();
    let n = names.len();
    let shown = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    let more = if n > 3 {
        format!(" and {} more", n - 3)
    } else {
        String::new()
    };
    Err(ArrayError::usage(format!(
        "--fuse {}: not empty (holds {shown}{more}); mounting there would hide its files until the array is stopped (valid: an empty directory, or --force to mount over it anyway)",
        dir.display()
    )))
}

pub fn serve(
    array: Arc<Array>,
    dir: &Path,
    stop: &AtomicBool,
    on_ready: impl FnOnce(),
) -> Result<(), ArrayError> {
    if !dir.is_dir() {
        return Err(ArrayError::usage(format!(
            "--fuse {}: not a directory (create it first)",
            dir.display()
        )));
    }
    if !Path::new("/dev/fuse").exists() {
        return Err(ArrayError::failed(
            "/dev/fuse is missing: this kernel has no FUSE (load the fuse module)",
        ));
    }
    let fs = VolumeFs {
        array: array.clone(),
        started: SystemTime::now(),
        uid: unsafe { libc::getuid() },
        gid: unsafe { libc::getgid() },
    };
    let options = [
        MountOption::FSName("raidlab".into()),
        MountOption::Subtype("raidlab".into()),
    ];
    let control = Control::listen(&uuid_string(&array.uuid))?;
    let session = fuser::spawn_mount2(fs, dir, &options).map_err(|e| {
        ArrayError::failed(format!(
            "cannot mount FUSE at {}: {e} (needs /dev/fuse and fusermount3 from Debian's fuse3)",
            dir.display()
        ))
    })?;
    on_ready();
    // No superblock polling: members are locked while served, so metadata changes from
    // other processes (`raidlab array fail`) arrive through the control socket.
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        control.serve_pending(&mut |req| match req {
            control::Request::Fail { member, force } => {
                crate::manage::fail_running(&array, &member, force)
            }
        });
    }
    drop(session);
    array.close()
}
