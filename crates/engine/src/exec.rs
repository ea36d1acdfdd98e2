//! The executors: how queued requests reach a target and come back.
//!
//! Each implements [`Executor`]: `queue` records a request for a slot (its buffer stays put
//! until that slot completes), `submit` hands what is queued to the kernel (or the workers)
//! without waiting, and `submit_and_reap` issues everything still queued, waits for at
//! least `min` completions and takes at most `max` of them (the rest wait for the next
//! call). Executors with a file (psync and its siblings, io_uring, libaio) name it through
//! `file`, and the trait's syncs flush it. The job driver (`job.rs`) owns timing, statistics
//! and verify.

use crate::BlockTarget;
use raidlab_workload::{Dir, SyncKind};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// One finished request: its slot, and bytes moved or the error.
pub struct Completion {
    pub slot: u32,
    pub res: Result<u64, io::Error>,
}

pub trait Executor {
    /// Queue a request to the job's file number `file` (its place in the job's files).
    fn queue(&mut self, slot: u32, file: u32, dir: Dir, offset: u64, buf: *mut u8, len: usize);
    /// Issue what is queued now, without waiting for anything (fio's `iodepth_batch_submit`
    /// decides when the driver calls it). An error here is reported by the next
    /// `submit_and_reap`. Executors that only run requests when reaping leave it empty.
    fn submit(&mut self) {}
    /// Whether `submit` hands requests over at all: where it does not, the driver queues a
    /// whole refill and stamps its submission once, when `submit_and_reap` runs it.
    fn submits_early(&self) -> bool {
        false
    }
    /// Executors that run requests only here (null, psync, an in-line block target) return
    /// every one they ran, whatever `max` says.
    fn submit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        done: &mut Vec<Completion>,
    ) -> io::Result<()>;
    /// The files the executor does its I/O on, if it has any: the syncs below flush them.
    fn files(&self) -> &[File] {
        &[]
    }
    /// Flush what the job wrote to the device (fio's `end_fsync`), once every request is
    /// reaped: fdatasync of each of its files.
    fn sync(&mut self) -> io::Result<()> {
        self.files().iter().try_for_each(File::sync_data)
    }
    /// A periodic sync (fio's `fsync=N`, `fdatasync=N`), once every request is reaped:
    /// data and metadata, or data only, of each of its files.
    fn sync_kind(&mut self, kind: SyncKind) -> io::Result<()> {
        if self.files().is_empty() {
            return self.sync();
        }
        self.files().iter().try_for_each(|f| file_sync(f, kind))
    }
    /// CPU time (user ns, system ns) spent in helper threads, once the executor is finished.
    fn finish(&mut self) -> (u64, u64) {
        (0, 0)
    }
}

/// Completions of requests done as they were queued (trims), moved to `done` and counted
/// against what the caller waits for: the `(min, max)` left for the device to give.
fn take_done(
    ready: &mut Vec<Completion>,
    min: usize,
    max: usize,
    done: &mut Vec<Completion>,
) -> (usize, usize) {
    if ready.is_empty() {
        return (min, max);
    }
    let n = ready.len();
    done.append(ready);
    (min.saturating_sub(n), max.max(min).saturating_sub(n))
}

/// Discard `len` bytes at `offset` of a job's file, as the kernel releases them: a block
/// device's range discarded (the BLKDISCARD ioctl, as fio trims); a regular file's punched
/// out (fallocate's PUNCH_HOLE, keeping its size: its blocks go back to the filesystem,
/// which passes them down as discards if it is mounted so). The bytes trimmed, or the error
/// (a device that takes no discards: what its queue says).
pub fn trim_file(file: &File, offset: u64, len: u64) -> io::Result<u64> {
    use std::os::unix::fs::FileTypeExt;
    let block = file.metadata()?.file_type().is_block_device();
    let r = if block {
        // BLKDISCARD = _IO(0x12, 119), linux/fs.h; its argument is {start, length} in bytes.
        const BLKDISCARD: libc::c_ulong = 0x1277;
        let range: [u64; 2] = [offset, len];
        // SAFETY: the ioctl reads two u64s from `range`, which lives across the call.
        match unsafe { libc::ioctl(file.as_raw_fd(), BLKDISCARD, range.as_ptr()) } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    } else {
        punch_hole(file, offset, len)
    };
    r.map(|()| len).map_err(|e| match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) if block => io::Error::new(
            e.kind(),
            "the device takes no discards (its queue/discard_max_bytes is 0)",
        ),
        Some(libc::EOPNOTSUPP) => io::Error::new(
            e.kind(),
            "the file's filesystem punches no holes (fallocate PUNCH_HOLE)",
        ),
        _ => e,
    })
}

/// fallocate(2)'s PUNCH_HOLE over `len` bytes at `offset` of `file`, its size kept: a regular
/// file's blocks given back (they read zeros); on a block device, the range zeroed by the
/// device without writing it (the kernel's write-zeroes with unmap, refused with EOPNOTSUPP
/// by a device that cannot).
pub fn punch_hole(file: &File, offset: u64, len: u64) -> io::Result<()> {
    // SAFETY: fallocate on a descriptor the caller holds open.
    let rc = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// fsync(2) or fdatasync(2) of a job's file.
fn file_sync(file: &File, kind: SyncKind) -> io::Result<()> {
    match kind {
        SyncKind::Fsync => file.sync_all(),
        SyncKind::Fdatasync => file.sync_data(),
    }
}

/// No I/O at all: every request completes as soon as it is submitted (fio's `null`).
pub struct Null {
    queued: Vec<Completion>,
}

impl Null {
    pub fn new(depth: usize) -> Self {
        Null {
            queued: Vec::with_capacity(depth),
        }
    }
}

impl Executor for Null {
    #[inline]
    fn queue(&mut self, slot: u32, _file: u32, _dir: Dir, _offset: u64, _buf: *mut u8, len: usize) {
        self.queued.push(Completion {
            slot,
            res: Ok(len as u64),
        });
    }
    #[inline]
    fn submit_and_reap(
        &mut self,
        _min: usize,
        _max: usize,
        done: &mut Vec<Completion>,
    ) -> io::Result<()> {
        done.append(&mut self.queued);
        Ok(())
    }
}

/// Which system calls a synchronous executor makes a request with (fio's engines of these
/// names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncCall {
    /// pread/pwrite (`psync`).
    Pread,
    /// read/write, after an lseek when the file position is not already there (`sync`).
    Read,
    /// readv/writev of one vector, after an lseek likewise (`vsync`).
    Readv,
    /// preadv/pwritev of one vector (`pvsync`).
    Preadv,
    /// preadv2/pwritev2 of one vector, no flags (`pvsync2`).
    Preadv2,
}

/// One request at a time (like fio's synchronous engines, whose iodepth is effectively 1),
/// with the system calls `call` names.
pub struct Psync {
    files: Vec<File>,
    call: SyncCall,
    /// Each file's position after the last read or write, for `sync` and `vsync`, which
    /// seek only when a request starts elsewhere (as fio's do).
    pos: Vec<Option<u64>>,
    op: Option<(u32, u32, Dir, u64, *mut u8, usize)>,
}

impl Psync {
    pub fn new(files: Vec<File>, call: SyncCall) -> Self {
        Psync {
            pos: vec![None; files.len()],
            files,
            call,
            op: None,
        }
    }

    /// One request's system calls: its result as read(2) gives it.
    fn transfer(&mut self, file: u32, dir: Dir, offset: u64, buf: *mut u8, len: usize) -> isize {
        let fd = self.files[file as usize].as_raw_fd();
        let pos = &mut self.pos[file as usize];
        let off = offset as libc::off_t;
        let iov = libc::iovec {
            iov_base: buf.cast(),
            iov_len: len,
        };
        let write = dir == Dir::Write;
        if matches!(self.call, SyncCall::Read | SyncCall::Readv) && *pos != Some(offset) {
            // SAFETY: lseek on a descriptor we own.
            if unsafe { libc::lseek(fd, off, libc::SEEK_SET) } < 0 {
                *pos = None;
                return -1;
            }
        }
        // SAFETY: buf points to `len` bytes owned by the driver's slot until completion.
        let r = unsafe {
            match (self.call, write) {
                (SyncCall::Pread, false) => libc::pread(fd, buf.cast(), len, off),
                (SyncCall::Pread, true) => libc::pwrite(fd, buf.cast(), len, off),
                (SyncCall::Read, false) => libc::read(fd, buf.cast(), len),
                (SyncCall::Read, true) => libc::write(fd, buf.cast(), len),
                (SyncCall::Readv, false) => libc::readv(fd, &iov, 1),
                (SyncCall::Readv, true) => libc::writev(fd, &iov, 1),
                (SyncCall::Preadv, false) => libc::preadv(fd, &iov, 1, off),
                (SyncCall::Preadv, true) => libc::pwritev(fd, &iov, 1, off),
                (SyncCall::Preadv2, false) => libc::preadv2(fd, &iov, 1, off, 0),
                (SyncCall::Preadv2, true) => libc::pwritev2(fd, &iov, 1, off, 0),
            }
        };
        *pos = (r >= 0).then(|| offset + r as u64);
        r
    }
}

impl Executor for Psync {
    fn queue(&mut self, slot: u32, file: u32, dir: Dir, offset: u64, buf: *mut u8, len: usize) {
        debug_assert!(self.op.is_none(), "psync runs one request at a time");
        self.op = Some((slot, file, dir, offset, buf, len));
    }
    fn submit_and_reap(
        &mut self,
        _min: usize,
        _max: usize,
        done: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let Some((slot, file, dir, offset, buf, len)) = self.op.take() else {
            return Ok(());
        };
        if dir == Dir::Trim {
            // (A trim moves no file position.)
            let res = trim_file(&self.files[file as usize], offset, len as u64);
            done.push(Completion { slot, res });
            return Ok(());
        }
        let r = loop {
            let r = self.transfer(file, dir, offset, buf, len);
            if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break r;
        };
        let res = if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as u64)
        };
        done.push(Completion { slot, res });
        Ok(())
    }
    fn files(&self) -> &[File] {
        &self.files
    }
}

/// fio's `mmap` engine: each file mapped shared into memory, whole (or, where that cannot be
/// mapped, the request's own window), and each request a copy between the job's buffer and
/// the mapping — reads and writes through page faults and the page cache, no read or write
/// call. One request at a time, as fio's. With `direct=1`, as fio does ("not really direct"),
/// each request's pages are then written out (`msync`) and let go of, by the mapping and by
/// the page cache, so the next touch reads the device. A write past the end of a regular
/// file first extends it; a read past the end moves what there is, as read(2) would. Each
/// mapping takes the job's access advice as fio gives it (`fadvise_hint`: `MADV_RANDOM` for
/// a random job, so a fault reads its page and no read-around; `MADV_SEQUENTIAL` otherwise).
///
/// What it cannot do: a mapping reports a device error by SIGBUS, which ends raidlab as it
/// ends fio; use a system-call engine where errors are expected.
pub struct Mmap {
    files: Vec<File>,
    maps: Vec<Option<Mapping>>,
    /// Each file's size when last looked at (looked at again by a request past it).
    sizes: Vec<Option<u64>>,
    /// Whether the job writes (the mappings are then writable).
    writable: bool,
    direct: bool,
    advice: raidlab_workload::ReadAdvice,
    op: Option<(u32, u32, Dir, u64, *mut u8, usize)>,
}

/// One file's mapping: where it starts in memory and in the file, and how long it is.
struct Mapping {
    ptr: *mut u8,
    offset: u64,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are a mapping this struct made and alone unmaps.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The size of a file or block device (its end, by lseek).
fn end_of(file: &File) -> io::Result<u64> {
    // SAFETY: lseek on a descriptor `file` owns (`mmap` never uses the file position).
    let end = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_END) };
    if end < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(end as u64)
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as u64
}

impl Mmap {
    pub fn new(
        files: Vec<File>,
        writable: bool,
        direct: bool,
        advice: raidlab_workload::ReadAdvice,
    ) -> Self {
        Mmap {
            maps: files.iter().map(|_| None).collect(),
            sizes: vec![None; files.len()],
            files,
            writable,
            direct,
            advice,
            op: None,
        }
    }

    /// Map `[offset, offset + len)` of file number `file`, shared.
    fn map(&self, file: u32, offset: u64, len: usize) -> io::Result<Mapping> {
        let prot = if self.writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        let fd = self.files[file as usize].as_raw_fd();
        // SAFETY: a new shared mapping of a descriptor we own; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd,
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let advice = match self.advice {
            raidlab_workload::ReadAdvice::Normal => None,
            raidlab_workload::ReadAdvice::Random => Some(libc::MADV_RANDOM),
            raidlab_workload::ReadAdvice::Sequential => Some(libc::MADV_SEQUENTIAL),
        };
        if let Some(a) = advice {
            // SAFETY: advice on the mapping just made; it changes read-around only.
            if unsafe { libc::madvise(p, len, a) } != 0 {
                let e = io::Error::last_os_error();
                // SAFETY: the mapping just made, not yet handed out.
                unsafe { libc::munmap(p, len) };
                return Err(e);
            }
        }
        Ok(Mapping {
            ptr: p.cast(),
            offset,
            len,
        })
    }

    /// Where `[offset, offset + len)` of `file` is in memory, mapping it first if no mapping
    /// holds it: the whole file if it can be, else the pages the request touches. The
    /// bytes there are `len` long at most: fewer at the file's end (a write has extended the
    /// file to hold it).
    fn window(
        &mut self,
        file: u32,
        dir: Dir,
        offset: u64,
        len: usize,
    ) -> io::Result<(*mut u8, usize)> {
        let f = file as usize;
        let end = offset + len as u64;
        let mut size = match self.sizes[f] {
            Some(n) if n >= end => n,
            _ => end_of(&self.files[f])?,
        };
        if dir == Dir::Write && end > size && self.files[f].metadata()?.file_type().is_file() {
            self.files[f].set_len(end)?;
            size = end;
            // (A whole-file mapping no longer covers the file.)
            self.maps[f] = None;
        }
        self.sizes[f] = Some(size);
        let avail = (size.saturating_sub(offset)).min(len as u64) as usize;
        if avail == 0 {
            return Ok((std::ptr::null_mut(), 0));
        }
        let held =
            |m: &Mapping| offset >= m.offset && offset + avail as u64 <= m.offset + m.len as u64;
        if !self.maps[f].as_ref().is_some_and(held) {
            self.maps[f] = None;
            let whole = usize::try_from(size)
                .ok()
                .and_then(|n| self.map(file, 0, n).ok());
            let m = match whole {
                Some(m) => m,
                None => {
                    let page = page_size();
                    let start = offset / page * page;
                    self.map(file, start, (offset + avail as u64 - start) as usize)?
                }
            };
            self.maps[f] = Some(m);
        }
        let m = self.maps[f].as_ref().expect("mapped above");
        // SAFETY: `held` (or the mapping just made) puts [offset, offset + avail) inside it.
        Ok((unsafe { m.ptr.add((offset - m.offset) as usize) }, avail))
    }

    /// One request's copy (and, with direct, its write-out and drop): bytes moved.
    fn transfer(
        &mut self,
        file: u32,
        dir: Dir,
        offset: u64,
        buf: *mut u8,
        len: usize,
    ) -> io::Result<u64> {
        let (at, n) = self.window(file, dir, offset, len)?;
        if n == 0 {
            return Ok(0);
        }
        // SAFETY: `at` has `n` mapped bytes; `buf` is the slot's `len` ≥ `n` bytes, idle until
        // this completes; the two never overlap (the buffer is the job's own memory).
        unsafe {
            match dir {
                Dir::Write => std::ptr::copy_nonoverlapping(buf, at, n),
                _ => std::ptr::copy_nonoverlapping(at, buf, n),
            }
        }
        if self.direct {
            let page = page_size() as usize;
            let lead = at as usize % page;
            // SAFETY: the pages holding [at, at + n), all within the mapping (it starts on a
            // page and covers them).
            let (p, l) = (unsafe { at.sub(lead) }, n + lead);
            // SAFETY: as above.
            if dir == Dir::Write && unsafe { libc::msync(p.cast(), l, libc::MS_SYNC) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // The pages let go of by the mapping, then by the page cache (their data is in
            // the file: written out just now, or read), so the next touch reads the device.
            // SAFETY: as above.
            if unsafe { libc::madvise(p.cast(), l, libc::MADV_DONTNEED) } != 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = self.files[file as usize].as_raw_fd();
            // (The mapping's in-page offset is the file's: it starts on a page of the file.)
            let from = (offset - lead as u64) as libc::off_t;
            // SAFETY: advice on a descriptor we own.
            let rc = unsafe {
                libc::posix_fadvise(fd, from, l as libc::off_t, libc::POSIX_FADV_DONTNEED)
            };
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
        }
        Ok(n as u64)
    }

    /// Every mapping written out, as fio's mmap engine syncs.
    fn msync_all(&self) -> io::Result<()> {
        for m in self.maps.iter().flatten() {
            // SAFETY: a whole mapping this executor made.
            if unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

impl Executor for Mmap {
    fn queue(&mut self, slot: u32, file: u32, dir: Dir, offset: u64, buf: *mut u8, len: usize) {
        debug_assert!(self.op.is_none(), "mmap runs one request at a time");
        self.op = Some((slot, file, dir, offset, buf, len));
    }
    fn submit_and_reap(
        &mut self,
        _min: usize,
        _max: usize,
        done: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let Some((slot, file, dir, offset, buf, len)) = self.op.take() else {
            return Ok(());
        };
        let res = if dir == Dir::Trim {
            trim_file(&self.files[file as usize], offset, len as u64)
        } else {
            self.transfer(file, dir, offset, buf, len)
        };
        done.push(Completion { slot, res });
        Ok(())
    }
    fn files(&self) -> &[File] {
        &self.files
    }
    /// Each mapping written out, then each file's data.
    fn sync(&mut self) -> io::Result<()> {
        self.msync_all()?;
        self.files().iter().try_for_each(File::sync_data)
    }
    fn sync_kind(&mut self, kind: SyncKind) -> io::Result<()> {
        self.msync_all()?;
        self.files().iter().try_for_each(|f| file_sync(f, kind))
    }
}

/// How an io_uring executor sets its ring up: what it registers with it (fio's
/// `registerfiles`, `fixedbufs`), and whether a kernel thread polls the submission queue
/// (`sqthread_poll`, on `sqthread_poll_cpu`) or the device is polled for completions
/// (`hipri`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RingOptions {
    pub files: bool,
    pub buffers: bool,
    /// Submission-queue polling, and the CPU its thread is bound to.
    pub sqpoll: bool,
    pub sqpoll_cpu: Option<u32>,
    pub iopoll: bool,
}

/// How long an idle submission-queue polling thread spins before it sleeps, ms (fio's).
const SQPOLL_IDLE_MS: u32 = 500;

/// io_uring with the files and the buffer area registered (unless the job says otherwise:
/// fio's `registerfiles`, `fixedbufs`), so each request costs one SQE.
pub struct Uring {
    ring: io_uring::IoUring,
    /// The buffer area and the files are registered (a file by its place in the job's).
    fixed_bufs: bool,
    fixed_file: bool,
    fds: Vec<i32>,
    files: Vec<File>,
    /// An error from `submit`, reported by the next `submit_and_reap`.
    failed: Option<io::Error>,
    /// The ring polls the device for completions (`hipri`).
    iopoll: bool,
    /// Trims, done as they are queued (the ring has no discard for a block device; fio's
    /// io_uring engine also trims synchronously), whose completions the next reap returns.
    trimmed: Vec<Completion>,
}

impl Uring {
    /// `area` is the driver's buffer area (every slot's buffer lies inside it); `register`
    /// whether to register the file and the area (each is used only if the kernel takes
    /// it), and whether to poll (a ring that cannot poll as asked is an error: the job
    /// asked for it).
    pub fn new(
        files: Vec<File>,
        depth: u32,
        area: (*mut u8, usize),
        register: RingOptions,
    ) -> io::Result<Self> {
        let entries = depth.next_power_of_two().max(1);
        let ring = if register.sqpoll || register.iopoll {
            let mut b = io_uring::IoUring::builder();
            if register.sqpoll {
                b.setup_sqpoll(SQPOLL_IDLE_MS);
                if let Some(cpu) = register.sqpoll_cpu {
                    b.setup_sqpoll_cpu(cpu);
                }
            }
            if register.iopoll {
                b.setup_iopoll();
            }
            b.build(entries).map_err(|e| {
                let what = match (register.sqpoll, register.iopoll) {
                    (true, true) => "sqthread_poll and hipri",
                    (true, false) => "sqthread_poll",
                    _ => "hipri",
                };
                io::Error::new(e.kind(), format!("a ring for {what}: {e}"))
            })?
        } else {
            // Single issuer + deferred task work (kernel ≥ 6.1) cut completion overhead; fall
            // back to a plain ring where they are not available. Deferred completions (a
            // buffered read that missed the page cache, say) are posted only by an enter
            // that asks for events: the task-run flag says when some wait, so a reap that
            // finds enough completions already posted still enters for them (without it one
            // such read could wait out a whole run while the others hit the cache).
            io_uring::IoUring::builder()
                .setup_single_issuer()
                .setup_defer_taskrun()
                .setup_taskrun_flag()
                .build(entries)
                .or_else(|_| io_uring::IoUring::new(entries))?
        };
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_file = register.files && ring.submitter().register_files(&fds).is_ok();
        let fixed_bufs = register.buffers && {
            let iov = libc::iovec {
                iov_base: area.0.cast(),
                iov_len: area.1,
            };
            // SAFETY: the area outlives the ring (the driver drops the executor first).
            unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok()
        };
        Ok(Uring {
            ring,
            fixed_bufs,
            fixed_file,
            fds,
            files,
            failed: None,
            iopoll: register.iopoll,
            trimmed: Vec::new(),
        })
    }
}

impl Executor for Uring {
    fn files(&self) -> &[File] {
        &self.files
    }
    #[inline]
    fn queue(&mut self, slot: u32, file: u32, dir: Dir, offset: u64, buf: *mut u8, len: usize) {
        use io_uring::{opcode, types};
        if dir == Dir::Trim {
            let res = trim_file(&self.files[file as usize], offset, len as u64);
            self.trimmed.push(Completion { slot, res });
            return;
        }
        // A registered file is named by its index with IOSQE_FIXED_FILE, which is what
        // `types::Fixed(i)` builds; as a flag it leaves one opcode per direction and buffer.
        let (fd, n) = (
            types::Fd(if self.fixed_file {
                file as i32
            } else {
                self.fds[file as usize]
            }),
            len as u32,
        );
        let e = match (dir, self.fixed_bufs) {
            (Dir::Read, true) => opcode::ReadFixed::new(fd, buf, n, 0).offset(offset).build(),
            (Dir::Read, false) => opcode::Read::new(fd, buf, n).offset(offset).build(),
            (Dir::Write, true) => opcode::WriteFixed::new(fd, buf, n, 0)
                .offset(offset)
                .build(),
            (Dir::Write, false) => opcode::Write::new(fd, buf, n).offset(offset).build(),
            (Dir::Trim, _) => unreachable!("trims are done as they are queued"),
        };
        let e = if self.fixed_file {
            e.flags(io_uring::squeue::Flags::FIXED_FILE)
        } else {
            e
        };
        // SAFETY: the buffer stays valid until the completion for this slot is reaped; the SQ
        // has at least `depth` entries and the driver never has more than `depth` queued.
        unsafe {
            self.ring
                .submission()
                .push(&e.user_data(slot as u64))
                .expect("submission queue sized to iodepth");
        }
    }
    fn submits_early(&self) -> bool {
        true
    }
    fn submit(&mut self) {
        if self.failed.is_some() || self.ring.submission().is_empty() {
            return;
        }
        loop {
            match self.ring.submit() {
                Ok(_) => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // (The completion queue is full: `submit_and_reap` reaps first.)
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return,
                Err(e) => {
                    self.failed = Some(e);
                    return;
                }
            }
        }
    }
    fn submit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        done: &mut Vec<Completion>,
    ) -> io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let (min, max) = take_done(&mut self.trimmed, min, max, done);
        // (Completions left from the last call may already be enough, with nothing to
        // submit: then no system call.)
        if !self.ring.submission().is_empty()
            || self.ring.completion().len() < min
            || self.ring.submission().taskrun()
        {
            loop {
                match self.ring.submit_and_wait(min) {
                    Ok(_) => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        for cqe in self.ring.completion().take(max.max(min)) {
            let r = cqe.result();
            let res = if r == -libc::EOPNOTSUPP && self.iopoll {
                Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "hipri: this device takes no polled I/O (NVMe with poll queues does: the nvme module's poll_queues)",
                ))
            } else if r < 0 {
                Err(io::Error::from_raw_os_error(-r))
            } else {
                Ok(r as u64)
            };
            done.push(Completion {
                slot: cqe.user_data() as u32,
                res,
            });
        }
        Ok(())
    }
}

/// Linux native asynchronous I/O (fio's `libaio`): requests go to the kernel with
/// io_submit(2) and come back with io_getevents(2), through the raw system calls (the
/// kernel's ABI in `linux/aio_abi.h`; no C library needed). As with fio, only direct I/O is
/// truly asynchronous: on a buffered file the kernel does most of the work inside io_submit.
pub struct Libaio {
    ctx: libc::c_ulong,
    files: Vec<File>,
    /// One control block per slot, where the kernel reads it at io_submit.
    iocbs: Vec<Iocb>,
    /// The control blocks queued and not yet handed to the kernel, in order, as io_submit
    /// takes them (addresses into `iocbs`, which never grows).
    pending: Vec<*mut Iocb>,
    /// Handed to the kernel and not yet reaped.
    inflight: usize,
    events: Vec<IoEvent>,
    /// An error from `submit`, reported by the next `submit_and_reap`.
    failed: Option<io::Error>,
    /// Trims, done as they are queued, whose completions the next reap returns.
    trimmed: Vec<Completion>,
}

/// `struct iocb` of `linux/aio_abi.h` (64 bytes): the key and the read/write flags trade
/// places with the byte order, as its `PADDED` macro has them.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    #[cfg(target_endian = "little")]
    aio_key: u32,
    aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    aio_key: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` of `linux/aio_abi.h`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64 && std::mem::size_of::<IoEvent>() == 32);

/// `IOCB_CMD_PREAD` and `IOCB_CMD_PWRITE`.
const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

impl Libaio {
    /// A context for `depth` requests in flight. Fails (EAGAIN) when the machine's AIO
    /// requests would exceed `/proc/sys/fs/aio-max-nr`, which the error then names.
    pub fn new(files: Vec<File>, depth: u32) -> io::Result<Self> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context to `ctx`, which it requires to be zero.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut libc::c_ulong,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EAGAIN) {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "io_setup for {depth} requests: {e} (the machine's AIO requests would exceed /proc/sys/fs/aio-max-nr)"
                    ),
                ));
            }
            return Err(e);
        }
        Ok(Libaio {
            ctx,
            files,
            iocbs: vec![Iocb::default(); depth as usize],
            pending: Vec::with_capacity(depth as usize),
            inflight: 0,
            events: vec![IoEvent::default(); depth as usize],
            failed: None,
            trimmed: Vec::new(),
        })
    }

    /// Hand the pending requests to the kernel; what it cannot take for want of resources
    /// (EAGAIN) stays pending for after the next reap.
    fn submit_pending(&mut self) -> io::Result<()> {
        while !self.pending.is_empty() {
            // SAFETY: each pointer is to a control block of ours, unmoved until the call
            // returns (the kernel copies it in); the buffers it names stay valid until their
            // completions are reaped.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    self.pending.len() as libc::c_long,
                    self.pending.as_mut_ptr(),
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) if self.inflight > 0 => return Ok(()),
                    _ => return Err(e),
                }
            }
            let n = r as usize;
            self.inflight += n;
            self.pending.drain(..n);
            if n == 0 {
                return Ok(());
            }
        }
        Ok(())
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        // SAFETY: the context is ours; io_destroy waits for whatever is still in flight.
        unsafe {
            libc::syscall(libc::SYS_io_destroy, self.ctx);
        }
    }
}

impl Executor for Libaio {
    fn files(&self) -> &[File] {
        &self.files
    }
    #[inline]
    fn queue(&mut self, slot: u32, file: u32, dir: Dir, offset: u64, buf: *mut u8, len: usize) {
        if dir == Dir::Trim {
            // (As fio's libaio engine: a trim is done synchronously.)
            let res = trim_file(&self.files[file as usize], offset, len as u64);
            self.trimmed.push(Completion { slot, res });
            return;
        }
        // (The driver's slots are below the depth the context was made for.)
        let i = slot as usize;
        self.iocbs[i] = Iocb {
            aio_data: slot as u64,
            aio_lio_opcode: match dir {
                Dir::Read => IOCB_CMD_PREAD,
                Dir::Write => IOCB_CMD_PWRITE,
                Dir::Trim => unreachable!("trims are done as they are queued"),
            },
            aio_fildes: self.files[file as usize].as_raw_fd() as u32,
            aio_buf: buf as u64,
            aio_nbytes: len as u64,
            aio_offset: offset as i64,
            ..Iocb::default()
        };
        self.pending.push(&mut self.iocbs[i]);
    }
    fn submits_early(&self) -> bool {
        true
    }
    fn submit(&mut self) {
        if self.failed.is_none() {
            if let Err(e) = self.submit_pending() {
                self.failed = Some(e);
            }
        }
    }
    fn submit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        done: &mut Vec<Completion>,
    ) -> io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let (min, max) = take_done(&mut self.trimmed, min, max, done);
        self.submit_pending()?;
        if self.inflight == 0 {
            return if self.pending.is_empty() {
                Ok(())
            } else {
                // (Nothing in flight to make room: the kernel cannot take one request.)
                Err(io::Error::from_raw_os_error(libc::EAGAIN))
            };
        }
        let want = min.min(self.inflight);
        let most = max.max(min).min(self.inflight).min(self.events.len());
        let got = loop {
            // SAFETY: `events` has room for `most` events; a null timeout waits for `want`.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    want as libc::c_long,
                    most as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(e);
            }
            break r as usize;
        };
        self.inflight -= got;
        for ev in &self.events[..got] {
            let res = if ev.res < 0 {
                Err(io::Error::from_raw_os_error((-ev.res) as i32))
            } else {
                Ok(ev.res as u64)
            };
            done.push(Completion {
                slot: ev.data as u32,
                res,
            });
        }
        // (What the kernel could not take before has room now.)
        if !self.pending.is_empty() {
            self.submit_pending()?;
        }
        Ok(())
    }
}

/// A [`BlockTarget`] served by `depth` worker threads, each calling read_at/write_at; with
/// depth 1, by the job's own thread (one request at a time either way, and no hand-off to
/// another thread and back per request).
pub struct Block {
    serving: Serving,
    queued: Vec<Work>,
    /// Trims, done as they are queued (as on the other executors: a trim is over before
    /// the requests queued after it start), whose completions the next reap returns.
    trimmed: Vec<Completion>,
    devs: Devs,
    /// Flushed by [`Executor::sync`] (end_fsync): the runner need not flush it again.
    pub flushed: bool,
}

/// A job's in-process targets, by their place in its files.
type Devs = Arc<[Arc<dyn BlockTarget>]>;

enum Serving {
    /// Depth 1: the job's own thread calls the targets, in `submit_and_reap`.
    Inline(Devs),
    /// Worker threads fed through a channel (`work` is None once finished).
    Threads {
        work: Option<mpsc::Sender<Work>>,
        done_rx: mpsc::Receiver<Completion>,
        workers: Vec<std::thread::JoinHandle<(u64, u64)>>,
    },
}

struct Work {
    slot: u32,
    file: u32,
    dir: Dir,
    offset: u64,
    buf: usize,
    len: usize,
}

impl Block {
    pub fn new(devs: Vec<Arc<dyn BlockTarget>>, depth: u32) -> io::Result<Self> {
        let devs: Devs = devs.into();
        if depth <= 1 {
            return Ok(Block {
                serving: Serving::Inline(Arc::clone(&devs)),
                queued: Vec::with_capacity(1),
                trimmed: Vec::new(),
                devs,
                flushed: false,
            });
        }
        let (work_tx, work_rx) = mpsc::channel::<Work>();
        let work_rx = Arc::new(Mutex::new(work_rx));
        let (done_tx, done_rx) = mpsc::channel();
        let mut workers = Vec::new();
        for i in 0..depth {
            let rx = Arc::clone(&work_rx);
            let tx = done_tx.clone();
            let devs = Arc::clone(&devs);
            workers.push(
                std::thread::Builder::new()
                    .name(format!("raidlab-blk{i}"))
                    .spawn(move || {
                        let cpu0 = crate::job::thread_cpu();
                        loop {
                            let w = match rx.lock().map(|r| r.recv()) {
                                Ok(Ok(w)) => w,
                                _ => break,
                            };
                            // SAFETY: the driver keeps the slot's buffer alive and untouched until
                            // this completion is reaped.
                            if tx.send(unsafe { serve(&devs, &w) }).is_err() {
                                break;
                            }
                        }
                        let cpu1 = crate::job::thread_cpu();
                        (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1)
                    })?,
            );
        }
        Ok(Block {
            serving: Serving::Threads {
                work: Some(work_tx),
                done_rx,
                workers,
            },
            queued: Vec::with_capacity(depth as usize),
            trimmed: Vec::new(),
            devs,
            flushed: false,
        })
    }

    /// Flush every target.
    pub fn flush_all(&self) -> io::Result<()> {
        self.devs.iter().try_for_each(|d| d.flush())
    }
}

/// Run one request on the target.
///
/// # Safety
/// `w.buf` points at `w.len` bytes that stay valid and untouched by others for the call.
unsafe fn serve(devs: &[Arc<dyn BlockTarget>], w: &Work) -> Completion {
    let dev = &devs[w.file as usize];
    let res = match w.dir {
        Dir::Read => dev.read_at(
            std::slice::from_raw_parts_mut(w.buf as *mut u8, w.len),
            w.offset,
        ),
        Dir::Write => dev.write_at(
            std::slice::from_raw_parts(w.buf as *const u8, w.len),
            w.offset,
        ),
        Dir::Trim => dev.trim(w.offset, w.len as u64),
    };
    Completion {
        slot: w.slot,
        res: res.map(|_| w.len as u64),
    }
}

impl Executor for Block {
    fn queue(&mut self, slot: u32, file: u32, dir: Dir, offset: u64, buf: *mut u8, len: usize) {
        if dir == Dir::Trim {
            let res = self.devs[file as usize]
                .trim(offset, len as u64)
                .map(|()| len as u64);
            self.trimmed.push(Completion { slot, res });
            return;
        }
        self.queued.push(Work {
            slot,
            file,
            dir,
            offset,
            buf: buf as usize,
            len,
        });
    }
    fn submits_early(&self) -> bool {
        matches!(self.serving, Serving::Threads { .. })
    }
    fn submit(&mut self) {
        if let Serving::Threads { work: Some(tx), .. } = &self.serving {
            for w in self.queued.drain(..) {
                if tx.send(w).is_err() {
                    // (The workers have stopped: `submit_and_reap` finds the channel closed.)
                    break;
                }
            }
        }
    }
    fn submit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        done: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let (min, max) = take_done(&mut self.trimmed, min, max, done);
        let (work, done_rx) = match &self.serving {
            Serving::Inline(devs) => {
                for w in self.queued.drain(..) {
                    // SAFETY: the driver keeps the slot's buffer alive and untouched until
                    // this completion is reaped (here, before returning).
                    done.push(unsafe { serve(devs, &w) });
                }
                return Ok(());
            }
            Serving::Threads { work, done_rx, .. } => (work, done_rx),
        };
        let stopped = || io::Error::other("block target workers have stopped");
        let tx = work.as_ref().expect("executor used after finish");
        for w in self.queued.drain(..) {
            tx.send(w).map_err(|_| stopped())?;
        }
        for _ in 0..min {
            done.push(done_rx.recv().map_err(|_| stopped())?);
        }
        for _ in min..max {
            let Ok(c) = done_rx.try_recv() else {
                break;
            };
            done.push(c);
        }
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        self.flush_all()?;
        self.flushed = true;
        Ok(())
    }
    /// A periodic sync flushes the devices too, but writes may follow it: the run's own
    /// flush at the end is still due.
    fn sync_kind(&mut self, _kind: SyncKind) -> io::Result<()> {
        self.flush_all()
    }
    fn finish(&mut self) -> (u64, u64) {
        let mut t = (0, 0);
        if let Serving::Threads { work, workers, .. } = &mut self.serving {
            *work = None;
            for w in workers.drain(..) {
                if let Ok((u, s)) = w.join() {
                    t.0 += u;
                    t.1 += s;
                }
            }
        }
        t
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A read that misses the page cache completes on io_uring while reads that hit it keep
    /// completing around it, reaped one at a time as the driver reaps them. Its completion
    /// is deferred task work, which only an enter asking for events posts: the reaps that
    /// found a hit's completion already posted had skipped the enter, and the miss waited
    /// until the job ended (a 1 s runtime showed a 1 s maximum latency). Counted in reaps,
    /// not timed: the cap is thousands of times what the disk read needs.
    #[test]
    fn a_cache_miss_completes_while_cache_hits_keep_coming() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 8 << 20]).unwrap();
        f.sync_all().unwrap();
        let f = File::open(&path).unwrap();
        // The second half leaves the page cache; the first half is read into it.
        // SAFETY: advice on a descriptor we own.
        unsafe {
            libc::posix_fadvise(f.as_raw_fd(), 4 << 20, 4 << 20, libc::POSIX_FADV_DONTNEED);
        }
        let mut first = vec![0u8; 4 << 20];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut first, 0).unwrap();
        let mut bufs = vec![0u8; 2 * 4096];
        let area = (bufs.as_mut_ptr(), bufs.len());
        let mut u = Uring::new(vec![f], 2, area, RingOptions::default()).unwrap();
        let (miss, hit) = (area.0, unsafe { area.0.add(4096) });
        u.queue(0, 0, Dir::Read, 6 << 20, miss, 4096);
        u.submit();
        let mut done = Vec::new();
        let mut reaps = 0u64;
        let mut hits = 0u64;
        let mut missed = false;
        while !missed {
            u.queue(1, 0, Dir::Read, (hits % 1024) * 4096, hit, 4096);
            u.submit();
            // Reap until the hit is back, one completion a call.
            let mut hit_back = false;
            while !hit_back {
                u.submit_and_reap(1, 1, &mut done).unwrap();
                reaps += 1;
                for c in done.drain(..) {
                    assert!(matches!(c.res, Ok(4096)), "slot {}: {:?}", c.slot, c.res);
                    match c.slot {
                        0 => missed = true,
                        _ => hit_back = true,
                    }
                }
            }
            hits += 1;
            assert!(
                reaps < 20_000_000,
                "the cache miss had not completed after {hits} cache hits"
            );
        }
    }

    /// Each synchronous call reads the right bytes, and leaves the file position where its
    /// system call does: pread, preadv and preadv2 do not move it; read and readv (after
    /// their lseek) leave it at the request's end, where the next request here reads on
    /// without one.
    #[test]
    fn each_sync_call_reads_its_block_and_moves_the_position_as_its_call_does() {
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..16384u32).map(|i| (i / 4096) as u8 + 1).collect();
        f.write_all(&data).unwrap();
        for (call, moves) in [
            (SyncCall::Pread, false),
            (SyncCall::Read, true),
            (SyncCall::Readv, true),
            (SyncCall::Preadv, false),
            (SyncCall::Preadv2, false),
        ] {
            let probe = f.try_clone().unwrap(); // (shares the file position)
                                                // SAFETY: lseek on a descriptor we own.
            unsafe { libc::lseek(probe.as_raw_fd(), 0, libc::SEEK_SET) };
            let mut x = Psync::new(vec![f.try_clone().unwrap()], call);
            let mut buf = vec![0u8; 4096];
            let mut done = Vec::new();
            for (slot, at) in [(0u32, 4096u64), (1, 8192)] {
                x.queue(slot, 0, Dir::Read, at, buf.as_mut_ptr(), 4096);
                x.submit_and_reap(1, 1, &mut done).unwrap();
                assert!(
                    buf.iter().all(|&b| b as u64 == at / 4096 + 1),
                    "{call:?} at {at}"
                );
                // SAFETY: as above.
                let pos = unsafe { libc::lseek(probe.as_raw_fd(), 0, libc::SEEK_CUR) };
                assert_eq!(pos as u64, if moves { at + 4096 } else { 0 }, "{call:?}");
            }
            assert_eq!(done.len(), 2);
            assert!(done.iter().all(|c| matches!(c.res, Ok(4096))), "{call:?}");
        }
    }
}
