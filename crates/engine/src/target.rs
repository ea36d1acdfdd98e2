//! Targets at the edge: opening paths, laying files out, sizes and logical block sizes.

use crate::safety;
use crate::EngineError;
use raidlab_workload::{BufferContent, ContentGen, Fallocate, JobSpec, ReadAdvice, SyncIo};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a path target turned out to be, after preparation.
#[derive(Clone, Debug)]
pub struct PathInfo {
    pub size: u64,
    /// Logical block size of the device holding the data (512 if unknown).
    pub logical_block: u64,
    /// The file did not exist: this run created it.
    pub created: bool,
}

/// What laying a file out writes: the buffer content of the first job that uses the file, a
/// block (that job's largest) at a time, as fio lays files out ([`ContentGen::layout`]).
#[derive(Clone, Debug)]
pub struct Layout {
    pub content: BufferContent,
    pub seed: u64,
    pub block: u64,
    /// Flush what was laid out to the device before the jobs start (fio's `create_fsync`).
    pub fsync: bool,
    /// The job's dedupe working set, blocks (`JobSpec::dedupe_set_blocks`).
    pub dedupe_set: u64,
}

impl Layout {
    /// All zeros (for a file no job's content decides).
    pub fn zeros() -> Layout {
        Layout {
            content: BufferContent {
                zero: true,
                ..Default::default()
            },
            seed: 0,
            block: 1 << 20,
            fsync: true,
            dedupe_set: 1,
        }
    }

    /// As `spec`'s writes fill their buffers, for the file named `file`: seeded by the job's
    /// `randseed` and the name, so each file's blocks are its own and the same on every run.
    pub fn of_job(spec: &JobSpec, file: &str) -> Layout {
        // FNV-1a over the name, then the job's seed and a constant of the layout's own (so
        // the layout's blocks are not the job's first writes').
        let name = file.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        });
        Layout {
            content: spec.buffers.clone(),
            seed: spec.randseed ^ name ^ 0x6c61_796f_7574_0001,
            block: spec.bs.max().max(1),
            fsync: spec.create_fsync,
            dedupe_set: spec.dedupe_set_blocks(),
        }
    }
}

// Linux ioctls (include/uapi/linux/fs.h): BLKSSZGET = _IO(0x12,104), BLKGETSIZE64 = _IOR(0x12,114,size_t).
const BLKSSZGET: libc::c_ulong = 0x1268;
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

fn device_size(f: &File) -> io::Result<u64> {
    use std::os::fd::AsRawFd;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 to the pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

fn device_logical_block(f: &File) -> io::Result<u64> {
    use std::os::fd::AsRawFd;
    let mut lbs: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int to the pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKSSZGET, &mut lbs as *mut libc::c_int) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(lbs as u64)
}

/// Logical block size of the block device a file lives on, from sysfs; 512 if unknown.
fn fs_logical_block(meta: &std::fs::Metadata) -> u64 {
    let dev = meta.dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    for p in [
        format!("/sys/dev/block/{maj}:{min}/queue/logical_block_size"),
        format!("/sys/dev/block/{maj}:{min}/../queue/logical_block_size"),
    ] {
        if let Ok(s) = std::fs::read_to_string(&p) {
            if let Ok(v) = s.trim().parse::<u64>() {
                if v.is_power_of_two() {
                    return v;
                }
            }
        }
    }
    512
}

/// Make a path target ready: create it and lay it out to `need_end` bytes when it is a
/// missing or short regular file (as `prealloc`, fio's `fallocate`, says; `fill`: a job
/// fills the filesystem, so its room is not checked), refuse to write over a recognised
/// signature unless `force`, and report its size.
pub fn prepare_path(
    path: &Path,
    need_end: Option<u64>,
    writes: bool,
    force: bool,
    stop: &AtomicBool,
    (prealloc, fill): (Option<Fallocate>, bool),
    layout: &Layout,
) -> Result<PathInfo, EngineError> {
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(EngineError::usage(format!(
                "cannot use target {shown}: {e}"
            )))
        }
    };
    let Some(meta) = meta else {
        let Some(end) = need_end else {
            return Err(EngineError::usage(format!(
                "target {shown} does not exist; give size= so it can be created"
            )));
        };
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| EngineError::usage(format!("cannot create target {shown}: {e}")))?;
        safety::mark_scratch(&f);
        // (The file is new and ours: one that cannot be laid out is not left behind.)
        // (A job filling the filesystem writes until there is no room: nothing to check.)
        let room = if fill {
            Ok(())
        } else {
            check_room(&f, path, 0, end)
        };
        if let Err(e) = room.and_then(|()| {
            prepare_span(&f, 0, end, stop, prealloc, layout)
                .map_err(|e| EngineError::failed(format!("laying out {shown}: {e}")))
        }) {
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        let meta = f
            .metadata()
            .map_err(|e| EngineError::failed(format!("{shown}: {e}")))?;
        return Ok(PathInfo {
            size: end,
            logical_block: fs_logical_block(&meta),
            created: true,
        });
    };
    let ft = meta.file_type();
    if ft.is_block_device() {
        let f = File::open(path)
            .map_err(|e| EngineError::usage(format!("cannot open {shown}: {e}")))?;
        let size =
            device_size(&f).map_err(|e| EngineError::failed(format!("size of {shown}: {e}")))?;
        let lbs = device_logical_block(&f).unwrap_or(512);
        if writes {
            refuse_signature(path, force)?;
        }
        return Ok(PathInfo {
            size,
            logical_block: lbs,
            created: false,
        });
    }
    if ft.is_dir() {
        // fio's `directory` is how a job's files go in a folder; a user who gave the folder
        // as the filename most likely meant that.
        return Err(EngineError::usage(format!(
            "target {shown} is a directory (valid: a regular file or a block device as --filename, or --directory={shown} to put the job's files in it)"
        )));
    }
    if !ft.is_file() {
        return Err(EngineError::usage(format!(
            "target {shown} is neither a regular file nor a block device (valid: a regular file or a block device)"
        )));
    }
    if writes && meta.len() > 0 {
        refuse_signature(path, force)?;
        claim_file(path, force, |len| {
            format!("refusing to write to {shown}: it holds {len} bytes raidlab did not lay out (use --force to overwrite it; raidlab then treats it as its own scratch file)")
        })?;
    }
    let mut size = meta.len();
    if let Some(end) = need_end {
        if end > size {
            if !writes {
                // A read job lays out the rest, as fio does, but not on somebody's file.
                claim_file(path, force, |size| {
                    format!("target {shown} holds {size} bytes and the job reads to byte {end}: raidlab lays out only its own files (valid: offset + size up to {size}, or --force to extend it as raidlab lays files out)")
                })?;
            }
            let f = OpenOptions::new().write(true).open(path).map_err(|e| {
                EngineError::usage(format!("cannot open {shown} to lay it out: {e}"))
            })?;
            if !fill {
                check_room(&f, path, size, end)?;
            }
            prepare_span(&f, size, end, stop, prealloc, layout)
                .map_err(|e| EngineError::failed(format!("laying out {shown}: {e}")))?;
            size = end;
        }
    }
    Ok(PathInfo {
        size,
        logical_block: fs_logical_block(&meta),
        created: false,
    })
}

/// A job that trims `path`, a block device that takes no discards (its queue's
/// `discard_max_bytes` is 0), is refused before it starts, in one line. Regular files are
/// trimmed by punching holes, which any filesystem raidlab lays files out on can do.
pub fn refuse_no_discard(path: &Path, job: &str) -> Result<(), EngineError> {
    let is_block = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
    if !is_block {
        return Ok(());
    }
    let Ok(Some(dir)) = crate::diskstats::disk_dir(path) else {
        return Ok(());
    };
    let max = std::fs::read_to_string(dir.join("queue/discard_max_bytes")).ok();
    match discards_refused(max.as_deref(), &path.display().to_string(), job) {
        Some(m) => Err(EngineError::usage(m)),
        None => Ok(()),
    }
}

/// How far a job filling `path`'s filesystem (fio's `fill_device`) may write: the file's
/// length now and the filesystem's free space (as statvfs gives it to an unprivileged
/// user); None where that cannot be told.
pub fn fill_end(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let on = if path.exists() {
        path.to_path_buf()
    } else {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        }
    };
    let c = std::ffi::CString::new(on.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path and a zeroed statvfs the call fills.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let free = (st.f_bavail as u64).saturating_mul(st.f_frsize as u64);
    Some(len.saturating_add(free))
}

/// The bytes a path target holds when laying it out would write it: 0 when it is
/// `missing`, its length when it is a regular file (`meta`) ending before `need_end`; None
/// when it holds all the jobs need (or is a device, which is not laid out, or could not be
/// looked at: opening it says why).
pub fn short_of(
    meta: Option<&std::fs::Metadata>,
    missing: bool,
    need_end: Option<u64>,
) -> Option<u64> {
    match meta {
        _ if missing => Some(0),
        Some(m) if m.is_file() && need_end.is_some_and(|e| e > m.len()) => Some(m.len()),
        _ => None,
    }
}

/// Why a `verify_only` job is refused on `path`, which holds `len` bytes ([`short_of`]): it
/// checks what an earlier run wrote, and a file that is not there, or ends before the job's
/// region does, holds nothing of that to check; laying it out would write it.
pub fn nothing_to_verify(
    path: &Path,
    missing: bool,
    len: u64,
    need_end: Option<u64>,
    job: &str,
) -> EngineError {
    let shown = path.display();
    EngineError::usage(if missing {
        format!(
            "job '{job}' has verify_only, and {shown} does not exist: nothing was written there to check (valid: the target an earlier run of the job wrote)"
        )
    } else {
        format!(
            "job '{job}' has verify_only, and {shown} ends at byte {len}, before the job's region does (byte {}): the rest was never written (valid: the size the job wrote)",
            need_end.unwrap_or(0)
        )
    })
}

/// Why a job's trims of device `shown` are refused, from its queue's `discard_max_bytes`
/// as sysfs gives it (None: unreadable, so left to the trims themselves to find out).
fn discards_refused(discard_max_bytes: Option<&str>, shown: &str, job: &str) -> Option<String> {
    let max = discard_max_bytes?.trim().parse::<u64>().ok()?;
    (max == 0).then(|| format!(
        "job '{job}' trims {shown}, which takes no discards (its queue/discard_max_bytes is 0) (valid: a device that takes discards, or a regular file, whose blocks are punched out)"
    ))
}

/// A block device the kernel holds for something else (a mounted filesystem, swap, md,
/// device-mapper: [`safety::in_use`]), a file under a loop device so held, and a file or
/// device another process has locked (a member of a raidlab array it runs:
/// [`safety::locked_elsewhere`]) are not written, with or without `--force`, unless every
/// job writing it gives fio's `allow_mounted_write`.
pub fn refuse_in_use(path: &Path, allowed: bool) -> Result<(), EngineError> {
    if allowed {
        return Ok(());
    }
    let shown = path.display();
    let cannot_check = |e: std::io::Error| {
        EngineError::failed(format!("cannot check whether {shown} is in use: {e}"))
    };
    if let Some((dev, what)) = safety::held_loop_over(path).map_err(cannot_check)? {
        return Err(EngineError::usage(format!(
            "refusing to write to {shown}: it is the backing file of {}, which is held by {what} (valid: a file nothing holds; allow_mounted_write=1 writes it all the same)",
            dev.display()
        )));
    }
    if safety::locked_elsewhere(path).map_err(cannot_check)? {
        return Err(EngineError::usage(format!(
            "refusing to write to {shown}: another process holds a lock on it, as a process running a raidlab array holds on its members (array serve, rebuild, scrub, or a run over array:…) (valid: a file no process holds; stop that process first)"
        )));
    }
    match safety::in_use(path) {
        Ok(Some(what)) => Err(EngineError::usage(format!(
            "refusing to write to {}: it is held by {what} (valid: a device nothing holds; allow_mounted_write=1 writes it all the same)",
            path.display()
        ))),
        Ok(None) => Ok(()),
        Err(e) => Err(EngineError::failed(format!(
            "cannot check whether {} is in use: {e}",
            path.display()
        ))),
    }
}

fn refuse_signature(path: &Path, force: bool) -> Result<(), EngineError> {
    if force {
        return Ok(());
    }
    match safety::find_signature(path) {
        Ok(Some(what)) => Err(EngineError::usage(format!(
            "refusing to write to {}: {what} found there (use --force to overwrite it)",
            path.display()
        ))),
        Ok(None) => Ok(()),
        Err(e) => Err(EngineError::failed(format!(
            "cannot read {} to check for signatures: {e}",
            path.display()
        ))),
    }
}

/// Take over a regular file for writing (over it, or past its end): a file holding data
/// raidlab did not put there is refused without `force`, with `refusal(its length)`; any
/// file taken is marked as raidlab's scratch, so later runs take it without `force`.
fn claim_file(
    path: &Path,
    force: bool,
    refusal: impl FnOnce(u64) -> String,
) -> Result<(), EngineError> {
    let shown = path.display();
    let f =
        File::open(path).map_err(|e| EngineError::usage(format!("cannot open {shown}: {e}")))?;
    if !force {
        let foreign = safety::foreign_data(&f).map_err(|e| {
            EngineError::failed(format!("cannot read {shown} to check for data: {e}"))
        })?;
        if foreign {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            return Err(EngineError::usage(refusal(len)));
        }
    }
    // Marking needs the file open for writing (the caller writes it next anyway).
    if let Ok(w) = OpenOptions::new().write(true).open(path) {
        safety::mark_scratch(&w);
    }
    Ok(())
}

/// Refuse, in one line, to lay `f` out from `from` to `to` bytes when its filesystem has
/// less room free than that: the layout would fill the filesystem (a size typed as 100g for
/// 100m wrote gigabytes until the disk was full, and left them there).
fn check_room(f: &File, path: &Path, from: u64, to: u64) -> Result<(), EngineError> {
    use std::os::fd::AsRawFd;
    let need = to.saturating_sub(from);
    // SAFETY: a valid fd and a zeroed statvfs the call fills.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(f.as_raw_fd(), &mut st) } != 0 {
        return Ok(()); // nothing known: the writes will say
    }
    let free = (st.f_bavail as u64).saturating_mul(st.f_frsize as u64);
    if need > free {
        return Err(EngineError::usage(format!(
            "cannot lay out {}: the job needs {need} bytes more of it (to byte {to}) and its filesystem has {free} bytes free (valid: a smaller size or offset, or a target on a filesystem with room)",
            path.display()
        )));
    }
    Ok(())
}

/// Prepare bytes `from..to` of a file raidlab is creating or extending: laid out with the
/// job's content (`prealloc` None: reads reach data, writes overwrite it), or as fio's
/// `fallocate` says for a file that only writing jobs use.
fn prepare_span(
    f: &File,
    from: u64,
    to: u64,
    stop: &AtomicBool,
    prealloc: Option<Fallocate>,
    layout: &Layout,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (fd, off, len) = (
        f.as_raw_fd(),
        from as libc::off_t,
        (to - from) as libc::off_t,
    );
    let posix = || -> io::Result<()> {
        // SAFETY: posix_fallocate on a descriptor we own; it returns the error number.
        match unsafe { libc::posix_fallocate(fd, off, len) } {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    };
    // SAFETY (each call below): fallocate/ftruncate on a descriptor we own.
    let checked = |r: libc::c_int| {
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    match prealloc {
        None => lay_out(f, from, to, stop, layout),
        Some(Fallocate::None) => Ok(()),
        Some(Fallocate::Posix) => posix(),
        Some(Fallocate::Native) => match checked(unsafe { libc::fallocate(fd, 0, off, len) }) {
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => posix(),
            r => r,
        },
        Some(Fallocate::Keep) => {
            checked(unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, off, len) })
        }
        Some(Fallocate::Truncate) => checked(unsafe { libc::ftruncate(fd, to as libc::off_t) }),
    }
}

/// Write `layout`'s content over [from, to) so reads hit real blocks, as fio lays files out.
/// Stops early (an `Interrupted` error) when `stop` is set.
fn lay_out(f: &File, from: u64, to: u64, stop: &AtomicBool, layout: &Layout) -> io::Result<()> {
    // Whole blocks a write (about a mebibyte of them), so the blocks run on from one write
    // to the next.
    let block = layout.block.clamp(1, 1 << 30) as usize;
    let mut chunk = vec![0u8; block * (1usize << 20).div_ceil(block)];
    let mut content =
        ContentGen::new(&layout.content, layout.seed).with_dedupe_set(layout.dedupe_set);
    let mut pos = from;
    while pos < to {
        if stop.load(Ordering::Relaxed) {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                format!("interrupted after {} of {} bytes", pos - from, to - from),
            ));
        }
        let n = (to - pos).min(chunk.len() as u64) as usize;
        content.layout(&mut chunk[..n], block);
        f.write_all_at(&chunk[..n], pos)?;
        pos += n as u64;
    }
    if layout.fsync {
        f.sync_all()?;
    }
    Ok(())
}

/// Open a path for one job instance; `sync` asks for synchronous writes (fio's `sync`:
/// O_SYNC or O_DSYNC).
pub fn open_for_job(
    path: &Path,
    writes: bool,
    direct: bool,
    sync: SyncIo,
) -> Result<File, EngineError> {
    let mut o = OpenOptions::new();
    o.read(true).write(writes);
    let mut flags = if direct { libc::O_DIRECT } else { 0 };
    flags |= match sync {
        SyncIo::None => 0,
        SyncIo::Sync => libc::O_SYNC,
        SyncIo::Dsync => libc::O_DSYNC,
    };
    if flags != 0 {
        o.custom_flags(flags);
    }
    o.open(path).map_err(|e| {
        if direct && e.raw_os_error() == Some(libc::EINVAL) {
            EngineError::usage(format!(
                "{}: its filesystem does not support direct I/O (O_DIRECT; tmpfs does not), use direct=0 or a loop device",
                path.display()
            ))
        } else {
            EngineError::failed(format!("cannot open {}: {e}", path.display()))
        }
    })
}

/// Tell the kernel how the job will read `file` (fio's `fadvise_hint`, as fio gives it when it
/// opens a file): POSIX_FADV_RANDOM turns read-ahead off, POSIX_FADV_SEQUENTIAL doubles it;
/// [`ReadAdvice::Normal`] gives no advice. The advice holds for this open file only.
pub fn advise(file: &File, path: &Path, advice: ReadAdvice) -> Result<(), EngineError> {
    let flag = match advice {
        ReadAdvice::Normal => return Ok(()),
        ReadAdvice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        ReadAdvice::Random => libc::POSIX_FADV_RANDOM,
    };
    // SAFETY: posix_fadvise on a descriptor `file` owns; it only advises the page cache.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, flag) };
    if rc != 0 {
        return Err(EngineError::failed(format!(
            "cannot advise the kernel how {} will be read (fadvise_hint): {} (valid: fadvise_hint=0 gives no advice)",
            path.display(),
            std::io::Error::from_raw_os_error(rc)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose queue takes no discards is refused, naming the job and the device,
    /// saying what would do; one that takes some, or whose queue cannot be read, is not.
    #[test]
    fn a_device_without_discards_is_refused_for_trims() {
        let m = discards_refused(Some("0\n"), "/dev/sdz", "t").expect("refused");
        assert_eq!(
            m,
            "job 't' trims /dev/sdz, which takes no discards (its queue/discard_max_bytes is 0) (valid: a device that takes discards, or a regular file, whose blocks are punched out)"
        );
        assert_eq!(
            discards_refused(Some("4294966784\n"), "/dev/sdz", "t"),
            None
        );
        assert_eq!(discards_refused(None, "/dev/sdz", "t"), None);
    }

    /// A file the filesystem has no room for is refused in one line before a byte is
    /// written, and a new one is not left behind. (raidlab wrote zeros until the disk was
    /// full: 4 GB in 20 s of size=16000p. The stop flag, set, keeps a layout that did start
    /// from writing anything: it ends with "interrupted" instead.)
    #[test]
    fn a_layout_past_the_free_room_is_refused_before_writing() {
        let d = tempfile::tempdir().unwrap();
        let huge = 1u64 << 60;
        // A file laid out (for a writing job) to `end` bytes; `stopped`: the stop flag set.
        let prepare = |f: &Path, end: u64, stopped: bool| {
            let stop = AtomicBool::new(stopped);
            prepare_path(
                f,
                Some(end),
                true,
                false,
                &stop,
                (None, false),
                &Layout::zeros(),
            )
        };
        let f = d.path().join("new");
        let e = prepare(&f, huge, true).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(e.to_string().contains("bytes free"), "{e}");
        assert!(!f.exists());
        // A short file of raidlab's own, extended: refused too, and kept as it was.
        let g = d.path().join("short");
        prepare(&g, 4096, false).unwrap();
        let e = prepare(&g, huge, true).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("bytes free"), "{e}");
        assert_eq!(std::fs::metadata(&g).unwrap().len(), 4096);
        // Room enough: laid out as before.
        let h = d.path().join("fits");
        prepare(&h, 1 << 20, false).unwrap();
        assert_eq!(std::fs::metadata(&h).unwrap().len(), 1 << 20);
    }

    /// A folder given as the target is refused in one line that says what to give instead:
    /// `--directory`, fio's way to put a job's files in a folder. (It said only that the
    /// folder was neither a regular file nor a block device.)
    #[test]
    fn a_folder_as_the_target_points_to_directory() {
        let d = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let e = prepare_path(
            d.path(),
            Some(4096),
            true,
            false,
            &stop,
            (None, false),
            &Layout::zeros(),
        )
        .unwrap_err();
        let m = e.to_string();
        assert!(e.is_usage(), "{m}");
        assert!(!m.contains('\n'), "{m}");
        assert!(m.contains(" is a directory"), "{m}");
        assert!(
            m.contains(&format!("--directory={}", d.path().display())),
            "{m}"
        );
    }
}
