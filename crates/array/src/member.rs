//! A member device: a regular file or a block device holding one slot of an array.
//! This is the only place that touches members' bytes; everything above works in terms of
//! the member's data area.
//!
//! Members on block devices and on disk filesystems are opened O_DIRECT, so array I/O does
//! not go through (and evict) the page cache twice, once for the array's users and once per
//! member. Direct I/O needs offsets, lengths and buffers aligned to the device's logical
//! block size; I/O that is not gets an aligned bounce buffer (and, for a write covering part
//! of a block, the block's other bytes are read first). Members in memory (tmpfs, ramfs)
//! are opened buffered: there the page cache is the storage. A filesystem that refuses
//! O_DIRECT gets a buffered member, and [`Member::io_mode`] says so.
//!
//! A member in tmpfs is also mapped (`mmap`, shared): its data is read and written as a
//! memory copy to and from its pages, with no system call and no page-cache lookup per
//! page (see [`Mapping`]). `RAIDLAB_MEMBER_BUFFERED=1` turns both off: every member is read
//! and written with pread/pwrite through the page cache.

use crate::error::ArrayError;
use crate::superblock::{read_newest, Removed, Superblock, SB_BYTES, SB_COPY_B};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

#[derive(Debug)]
pub struct Member {
    pub path: PathBuf,
    file: File,
    /// Total bytes of the file or device.
    pub size: u64,
    /// Start of the data area (from the superblock; 0 until one is known).
    pub data_offset: u64,
    /// Direct I/O alignment (offsets, lengths, buffer addresses) in bytes; 1 if buffered.
    align: u64,
    /// How the member is opened, in words ("O_DIRECT", "buffered (tmpfs)", ...).
    mode: String,
    /// Writes covering part of an aligned block (read, patch, write the whole block) hold
    /// this exclusively, other I/O shares it: no write can land between such a write's
    /// read and its write-back of bytes it does not own.
    rmw: RwLock<()>,
    /// The file mapped into memory (members in memory only).
    map: Option<Mapping>,
    /// A regular file (not a block device).
    regular: bool,
}

/// A member file in tmpfs mapped shared into the address space. The
/// mapping shares the file's pages with pread/pwrite, io_uring and other processes, so it
/// is one more way into the same bytes, not a copy of them.
///
/// A store into a hole of a mapped tmpfs file allocates the page from inside a page fault,
/// where a full filesystem can only answer with SIGBUS. So a region is written through the
/// mapping only after `fallocate` has allocated it, [`Mapping::EXTENT`] bytes at a time,
/// once per extent per process (ENOSPC there is an ordinary I/O error). Reads go through
/// the mapping only from extents known to be allocated (a read fault on a hole would
/// allocate a page too); others are read with pread, which reads holes as zeros.
///
/// A member file truncated by another process while it is mapped makes a copy from past
/// its new end fault with SIGBUS; members are locked against other raidlab processes, and
/// truncating a member of a running array destroys it whichever way it is written.
pub struct Mapping {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    /// One bit per extent: allocated (by our fallocate) since the mapping was made.
    allocated: Vec<std::sync::atomic::AtomicU64>,
}

// SAFETY: the mapping is shared memory owned by this value until drop; copies in and out go
// through raw pointers, and callers serialize overlapping I/O (stripe locks), as they do for
// pread/pwrite.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapping({} bytes)", self.len)
    }
}

impl Mapping {
    /// Allocation granularity: big enough that a sequential writer pays one fallocate per
    /// 32 chunks of 64 KiB, small enough that a sparse member is not filled far beyond
    /// what is written.
    pub const EXTENT: u64 = 2 << 20;

    /// Map `len` bytes of `file` shared, read-write; None if it cannot be mapped.
    fn new(file: &File, len: u64) -> Option<Mapping> {
        use std::os::unix::io::AsRawFd;
        let n = usize::try_from(len).ok().filter(|&n| n > 0)?;
        // SAFETY: a fresh mapping of a file we hold open; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                n,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let extents = len.div_ceil(Self::EXTENT).div_ceil(64) as usize;
        Some(Mapping {
            ptr: std::ptr::NonNull::new(p.cast())?,
            len: n,
            allocated: (0..extents)
                .map(|_| std::sync::atomic::AtomicU64::new(0))
                .collect(),
        })
    }

    fn extents(&self, offset: u64, len: usize) -> std::ops::Range<u64> {
        offset / Self::EXTENT..(offset + len as u64).div_ceil(Self::EXTENT)
    }

    fn is_allocated(&self, e: u64) -> bool {
        use std::sync::atomic::Ordering;
        self.allocated[(e / 64) as usize].load(Ordering::Acquire) & (1 << (e % 64)) != 0
    }

    /// Whether every extent of [offset, offset + len) is allocated.
    fn allocated(&self, offset: u64, len: usize) -> bool {
        self.extents(offset, len).all(|e| self.is_allocated(e))
    }

    /// Allocate every extent of [offset, offset + len) not known to be allocated.
    fn allocate(&self, file: &File, offset: u64, len: usize) -> std::io::Result<()> {
        use std::os::unix::io::AsRawFd;
        use std::sync::atomic::Ordering;
        for e in self.extents(offset, len) {
            if self.is_allocated(e) {
                continue;
            }
            let at = e * Self::EXTENT;
            let n = Self::EXTENT.min(self.len as u64 - at);
            // SAFETY: fallocate on a descriptor we hold; within the file's size, so the
            // size does not change.
            let rc = unsafe {
                libc::fallocate(
                    file.as_raw_fd(),
                    libc::FALLOC_FL_KEEP_SIZE,
                    at as i64,
                    n as i64,
                )
            };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Map the extent's pages now, in one call, rather than taking a fault on the
            // first store to each of them. Populating for reading maps 16 pages per fault
            // (fault-around) where writing maps one, and the pages come out writable: tmpfs
            // keeps no dirty accounting, so its shared mappings need no write fault. In
            // `raidlab run`, 2 MiB writes: system time 50% → 27% of the run. (Linux 5.14+;
            // where it is refused, the faults happen as before.)
            // SAFETY: a range inside our own mapping; the pages are allocated.
            unsafe {
                libc::madvise(
                    self.ptr.as_ptr().add(at as usize).cast(),
                    n as usize,
                    libc::MADV_POPULATE_READ,
                )
            };
            self.allocated[(e / 64) as usize].fetch_or(1 << (e % 64), Ordering::AcqRel);
        }
        Ok(())
    }

    fn check(&self, offset: u64, len: usize) -> std::io::Result<()> {
        if offset
            .checked_add(len as u64)
            .is_none_or(|end| end > self.len as u64)
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "I/O at {offset}+{len} is past the end of the member ({} bytes)",
                    self.len
                ),
            ));
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped; no copy is running (we are dropped).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// A zeroed heap buffer whose address is a multiple of [`AlignedBuf::ALIGN`], for direct I/O.
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: it owns its memory, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Enough for any logical block size in use (512 and 4096).
    pub const ALIGN: usize = 4096;

    pub fn new(len: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(len.max(1), Self::ALIGN)
            .expect("buffer size fits a layout");
        // SAFETY: the layout has a nonzero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr =
            std::ptr::NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: len initialized (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len.max(1), Self::ALIGN).unwrap();
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.len)
    }
}

thread_local! {
    /// A bounce buffer per thread, reused (and grown) from one unaligned I/O to the next.
    static BOUNCE: std::cell::RefCell<Option<AlignedBuf>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` with an aligned buffer of at least `len` bytes (contents undefined).
fn with_bounce<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    // Keep at most this much per thread; larger I/O allocates for the occasion.
    const KEEP: usize = 8 << 20;
    let mut b = BOUNCE
        .with(|c| c.borrow_mut().take())
        .filter(|b| b.len() >= len)
        .unwrap_or_else(|| AlignedBuf::new(len.next_power_of_two().max(AlignedBuf::ALIGN)));
    let r = f(&mut b.as_mut_slice()[..len]);
    if b.len() <= KEEP {
        BOUNCE.with(|c| *c.borrow_mut() = Some(b));
    }
    r
}

/// The filesystem type (`f_type`, linux/magic.h) a file descriptor's file is on.
fn fs_type(fd: std::os::unix::io::RawFd) -> Option<i64> {
    // SAFETY: fstatfs writes only into the struct it is given.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstatfs(fd, &mut st) } == 0).then_some(st.f_type as i64)
}

/// ramfs's `f_type` (linux/magic.h).
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Whether a file descriptor's file lives in memory (tmpfs, ramfs).
pub(crate) fn memory_backed(fd: std::os::unix::io::RawFd) -> bool {
    matches!(fs_type(fd), Some(t) if t == libc::TMPFS_MAGIC || t == RAMFS_MAGIC)
}

/// Whether a file descriptor's file is on tmpfs.
fn on_tmpfs(fd: std::os::unix::io::RawFd) -> bool {
    fs_type(fd) == Some(libc::TMPFS_MAGIC)
}

/// The direct I/O alignment the kernel reports for a file (statx STATX_DIOALIGN, Linux 6.1+):
/// the larger of the offset and memory alignments; Some(0) if the file cannot do direct
/// I/O, None if the kernel does not say.
fn dio_align(file: &File) -> Option<u64> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: statx writes only into the struct it is given; the path is an empty C string.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return None;
    }
    Some(u64::from(
        stx.stx_dio_offset_align.max(stx.stx_dio_mem_align),
    ))
}

/// Read as much of [offset, offset + buf.len()) as the file holds; the rest of `buf` is
/// zeroed (a block past the end of a regular file).
fn read_upto(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => {
                buf[done..].fill(0);
                break;
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Member {
    /// Open an existing file or block device for reading and writing.
    pub fn open(path: &Path) -> Result<Member, ArrayError> {
        // What the name is, before opening it: a directory or a character device is the
        // caller's mistake, said in one line rather than as the open's raw error.
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ArrayError::usage(format!(
                    "member {} does not exist (valid: an existing file or block device)",
                    path.display()
                )))
            }
            Ok(md) if md.is_dir() => {
                return Err(ArrayError::usage(format!(
                    "member {} is a directory (valid: a regular file or a block device)",
                    path.display()
                )))
            }
            Ok(md) if !md.is_file() && !is_block_device(&md) => {
                return Err(ArrayError::usage(format!(
                    "member {} is neither a regular file nor a block device",
                    path.display()
                )))
            }
            _ => {}
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    ArrayError::usage(format!(
                        "member {} does not exist (valid: an existing file or block device)",
                        path.display()
                    ))
                } else {
                    ArrayError::io("cannot open member", path, &e)
                }
            })?;
        let meta = file
            .metadata()
            .map_err(|e| ArrayError::io("cannot stat member", path, &e))?;
        // A read-only block device (`losetup -r`, `blockdev --setro`) opens for writing and
        // refuses each write: said here, before anything is written, rather than as a
        // member that fails at its first write.
        if is_block_device(&meta) && read_only_device(&file) {
            return Err(ArrayError::usage(format!(
                "member {} is a read-only block device (losetup -r or blockdev --setro; valid: a writable file or block device, e.g. blockdev --setrw {})",
                path.display(),
                path.display()
            )));
        }
        let size = if meta.is_file() {
            meta.len()
        } else {
            if !is_block_device(&meta) {
                return Err(ArrayError::usage(format!(
                    "member {} is neither a regular file nor a block device",
                    path.display()
                )));
            }
            (&file)
                .seek(SeekFrom::End(0))
                .map_err(|e| ArrayError::io("cannot size member", path, &e))?
        };
        let (file, align, mut mode) = Self::direct(path, file, meta.is_file());
        // tmpfs only: ramfs cannot fallocate (see `Mapping`), so its members stay on
        // pread/pwrite.
        let map = if meta.is_file()
            && std::env::var_os("RAIDLAB_MEMBER_BUFFERED").is_none()
            && on_tmpfs(std::os::unix::io::AsRawFd::as_raw_fd(&file))
        {
            Mapping::new(&file, size)
        } else {
            None
        };
        if map.is_some() {
            mode = "mapped (in memory)".into();
        }
        Ok(Member {
            path: path.to_path_buf(),
            file,
            size,
            data_offset: 0,
            align,
            mode,
            rmw: RwLock::new(()),
            map,
            regular: meta.is_file(),
        })
    }

    /// Whether the member is a regular file (not a block device).
    pub fn is_file(&self) -> bool {
        self.regular
    }

    /// Reopen `file` O_DIRECT where that works: (file, alignment, how it is opened).
    fn direct(path: &Path, file: File, regular: bool) -> (File, u64, String) {
        use std::os::unix::io::AsRawFd;
        if std::env::var_os("RAIDLAB_MEMBER_BUFFERED").is_some() {
            return (file, 1, "buffered (RAIDLAB_MEMBER_BUFFERED)".into());
        }
        if regular && memory_backed(file.as_raw_fd()) {
            return (file, 1, "buffered (in memory)".into());
        }
        let align = if regular {
            match dio_align(&file) {
                Some(0) => {
                    return (
                        file,
                        1,
                        "buffered (the filesystem has no direct I/O)".into(),
                    )
                }
                Some(a) => a,
                // No answer (kernels before 6.1): the filesystem block size, a multiple of
                // the device's logical block size, which disk filesystems align to.
                None => {
                    use std::os::unix::fs::MetadataExt;
                    file.metadata()
                        .map(|m| m.blksize())
                        .unwrap_or(4096)
                        .clamp(512, 4096)
                }
            }
        } else {
            let mut lbs: libc::c_int = 0;
            // SAFETY: BLKSSZGET writes one int.
            if unsafe { libc::ioctl(file.as_raw_fd(), libc::BLKSSZGET, &mut lbs) } != 0 || lbs <= 0
            {
                4096
            } else {
                lbs as u64
            }
        };
        let direct = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path);
        let d = match direct {
            Ok(d) => d,
            Err(e) => return (file, 1, format!("buffered (O_DIRECT refused: {e})")),
        };
        // Some filesystems accept the flag at open and refuse the I/O: try a read.
        let mut probe = AlignedBuf::new(align as usize);
        if let Err(e) = read_upto(&d, probe.as_mut_slice(), 0) {
            return (file, 1, format!("buffered (O_DIRECT refused: {e})"));
        }
        (d, align, format!("O_DIRECT ({align}-byte blocks)"))
    }

    /// How the member is opened: "O_DIRECT (N-byte blocks)", or "buffered (why)".
    pub fn io_mode(&self) -> &str {
        &self.mode
    }

    /// The direct I/O alignment (offsets, lengths, buffer addresses); 1 when buffered.
    pub fn align(&self) -> u64 {
        self.align
    }

    fn aligned(&self, ptr: *const u8, len: usize, offset: u64) -> bool {
        let a = self.align;
        a <= 1
            || (offset.is_multiple_of(a)
                && (len as u64).is_multiple_of(a)
                && (ptr as u64).is_multiple_of(a))
    }

    pub fn read_raw(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        if self.aligned(buf.as_ptr(), buf.len(), offset) {
            return self.file.read_exact_at(buf, offset);
        }
        let a = self.align;
        let lo = offset / a * a;
        let hi = (offset + buf.len() as u64).div_ceil(a) * a;
        with_bounce((hi - lo) as usize, |b| {
            self.file.read_exact_at(b, lo)?;
            let at = (offset - lo) as usize;
            buf.copy_from_slice(&b[at..at + buf.len()]);
            Ok(())
        })
    }

    pub fn write_raw(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        if self.align <= 1 {
            return self.file.write_all_at(buf, offset);
        }
        if self.aligned(buf.as_ptr(), buf.len(), offset) {
            let _shared = self.rmw.read().unwrap();
            return self.file.write_all_at(buf, offset);
        }
        let a = self.align;
        let end = offset + buf.len() as u64;
        if offset.is_multiple_of(a) && end.is_multiple_of(a) {
            // Only the buffer is misaligned: copy it.
            let _shared = self.rmw.read().unwrap();
            return with_bounce(buf.len(), |b| {
                b.copy_from_slice(buf);
                self.file.write_all_at(b, offset)
            });
        }
        let lo = offset / a * a;
        let hi = end.div_ceil(a) * a;
        let _excl = self.rmw.write().unwrap();
        with_bounce((hi - lo) as usize, |b| {
            let n = b.len();
            let ab = a as usize;
            if offset != lo {
                read_upto(&self.file, &mut b[..ab], lo)?;
            }
            if end != hi && (hi - a >= offset || offset == lo) {
                read_upto(&self.file, &mut b[n - ab..], hi - a)?;
            }
            let at = (offset - lo) as usize;
            b[at..at + buf.len()].copy_from_slice(buf);
            self.file.write_all_at(b, lo)
        })
    }

    /// Read from the data area.
    pub fn read_data(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let at = self.data_offset + offset;
        if let Some(m) = &self.map {
            m.check(at, buf.len())?;
            if m.allocated(at, buf.len()) {
                // SAFETY: in bounds (checked); the mapping lives as long as self; `buf` is
                // ours alone and cannot overlap the mapping.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        m.ptr.as_ptr().add(at as usize),
                        buf.as_mut_ptr(),
                        buf.len(),
                    )
                };
                return Ok(());
            }
        }
        self.read_raw(buf, at)
    }

    /// Where `len` bytes of the data area at `offset` are in memory, for reading and
    /// writing in place: a mapped member whose pages there are allocated (allocating them
    /// if need be). None if the member is not mapped, the range is outside it, or the
    /// allocation fails (a write through `write_data` then reports why).
    pub fn map_data(&self, offset: u64, len: usize) -> Option<*mut u8> {
        self.mapped_for_write(self.data_offset.checked_add(offset)?, len)?
            .ok()
    }

    /// A mapped member's pages at member offset `at` for `len` bytes, in bounds and
    /// allocated so a store cannot fault for a new page; None if the member is not mapped.
    fn mapped_for_write(&self, at: u64, len: usize) -> Option<std::io::Result<*mut u8>> {
        let m = self.map.as_ref()?;
        Some(m.check(at, len).and_then(|()| {
            m.allocate(&self.file, at, len)?;
            // SAFETY: in bounds (checked).
            Ok(unsafe { m.ptr.as_ptr().add(at as usize) })
        }))
    }

    /// Write to the data area.
    pub fn write_data(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        let at = self.data_offset + offset;
        if let Some(p) = self.mapped_for_write(at, buf.len()) {
            // SAFETY: in bounds and allocated (no fault can need a new page); the mapping
            // lives as long as self; a caller's buffer is not inside a member's mapping.
            unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), p?, buf.len()) };
            return Ok(());
        }
        self.write_raw(buf, at)
    }

    /// Discard [offset, offset + len) of the data area so it reads as zeros: the range
    /// punched out of a file, or a block device's range zeroed by the device without
    /// writing it (fallocate's PUNCH_HOLE on a block device: the kernel's write-zeroes with
    /// unmap, refused by a device that cannot zero so). A member mapped in memory has the
    /// range zeroed through its mapping instead: its pages stay allocated, so a store
    /// through the mapping never faults for a new page.
    pub fn trim_data(&self, offset: u64, len: u64) -> std::io::Result<()> {
        let at = self.data_offset + offset;
        if let Some(p) = self.mapped_for_write(at, len as usize) {
            // SAFETY: in bounds and allocated (checked); the range is this trim's alone.
            unsafe { std::ptr::write_bytes(p?, 0, len as usize) };
            return Ok(());
        }
        raidlab_engine::punch_hole(&self.file, at, len).map_err(|e| {
            if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
            std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                format!(
                    "member {} cannot discard a range so that it reads zeros (a file system without hole punching, or a device without write-zeroes)",
                    self.path.display()
                ),
            )
            } else {
                e
            }
        })
    }

    /// Write zeros over [from, to) of the data area, `zeros.len()` bytes at a time (the last
    /// write may be shorter). Written, not allocated: an allocated but unwritten extent
    /// (fallocate) reads without reaching the device, like a hole.
    pub fn zero_data(&self, from: u64, to: u64, zeros: &AlignedBuf) -> std::io::Result<()> {
        let (from, to) = (self.data_offset + from, self.data_offset + to);
        let mut at = from;
        while at < to {
            let n = (to - at).min(zeros.len() as u64) as usize;
            self.write_raw(&zeros.as_slice()[..n], at)?;
            at += n as u64;
        }
        Ok(())
    }

    /// Write zeros over the holes of a member file within [from, to) of its data area (see
    /// [`raidlab_engine::safety::for_each_hole`]); returns the bytes written. What the member
    /// reads does not change (a hole reads as zeros), so this is safe over any data; its
    /// blocks are then on the device. A block device has no holes: nothing is written.
    pub fn fill_holes(&self, from: u64, to: u64, zeros: &AlignedBuf) -> std::io::Result<u64> {
        if !self.regular {
            return Ok(0);
        }
        let mut written = 0;
        let base = self.data_offset;
        raidlab_engine::safety::for_each_hole(&self.file, base + from, base + to, |at, len| {
            self.zero_data(at - base, at - base + len, zeros)?;
            written += len;
            Ok(())
        })?;
        Ok(written)
    }

    /// Bytes of [from, to) of the data area that are holes of a member file (0 on a block
    /// device).
    pub fn hole_bytes(&self, from: u64, to: u64) -> std::io::Result<u64> {
        if !self.regular {
            return Ok(0);
        }
        let base = self.data_offset;
        raidlab_engine::safety::hole_bytes(&self.file, base + from, base + to)
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
        read_newest(&a, &b, self.size).map_err(|m| {
            ArrayError::usage(format!(
                "member {}: damaged superblock: {m}",
                self.path.display()
            ))
        })
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

    /// Take the member out of its array: both superblock copies and the write-intent bitmap,
    /// the whole metadata area before `data_offset`, are cleared, and `record` (which array
    /// and slot it left) takes the first block. The data area is left as it is.
    pub fn leave_array(&self, record: &Removed, data_offset: u64) -> Result<(), ArrayError> {
        let mut area = vec![0u8; data_offset.max(2 * SB_BYTES as u64) as usize];
        area[..SB_BYTES].copy_from_slice(&record.encode());
        self.write_raw(&area, 0)
            .and_then(|_| self.flush())
            .map_err(|e| ArrayError::io("cannot erase superblock of", &self.path, &e))
    }

    /// The record [`Member::leave_array`] left, if this member holds one.
    pub fn read_removed(&self) -> Option<Removed> {
        let mut buf = vec![0u8; SB_BYTES];
        if self.size < SB_BYTES as u64 || self.read_raw(&mut buf, 0).is_err() {
            return None;
        }
        Removed::decode(&buf)
    }

    /// True if the first MiB (or the whole member, if smaller) holds any nonzero byte from
    /// byte `from` on.
    pub fn has_nonzero_head(&self, from: u64) -> Result<bool, ArrayError> {
        let n = self.size.min(1 << 20).saturating_sub(from) as usize;
        let mut buf = vec![0u8; n];
        self.read_raw(&mut buf, from)
            .map_err(|e| ArrayError::io("cannot read", &self.path, &e))?;
        Ok(buf.iter().any(|&b| b != 0))
    }
}

/// The newest valid superblock on the regular file or block device at `path`, read without
/// opening it for writing: what looking for an array's members among other files reads of
/// each. `None` for anything else, anything unreadable, and a superblock that fails its
/// checks (that file is not taken for a member).
pub fn peek_superblock(path: &Path) -> Option<Superblock> {
    peek_superblock_checked(path).ok().flatten()
}

/// [`peek_superblock`], telling a superblock whose copies are both damaged (`Err`, why)
/// from none (`Ok(None)`): a member whose record cannot be read is still worth naming.
pub fn peek_superblock_checked(path: &Path) -> Result<Option<Superblock>, String> {
    peek_raw(path).map_or(Ok(None), |(a, b, size)| read_newest(&a, &b, size))
}

/// The two superblock copies of the regular file or block device at `path` and its size,
/// if it can be opened without waiting and is long enough to hold them.
fn peek_raw(path: &Path) -> Option<(Vec<u8>, Vec<u8>, u64)> {
    let md = std::fs::metadata(path).ok()?;
    if !md.is_file() && !is_block_device(&md) {
        return None;
    }
    // Non-blocking: a removable drive with no medium fails the open instead of waiting.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let size = if md.is_file() {
        md.len()
    } else {
        (&file).seek(SeekFrom::End(0)).ok()?
    };
    if size < 2 * SB_BYTES as u64 {
        return None;
    }
    let mut a = vec![0u8; SB_BYTES];
    let mut b = vec![0u8; SB_BYTES];
    file.read_exact_at(&mut a, 0).ok()?;
    file.read_exact_at(&mut b, SB_COPY_B).ok()?;
    Some((a, b, size))
}

/// Whether the kernel holds the block device open on `file` read-only (its BLKROGET).
fn read_only_device(file: &File) -> bool {
    use std::os::unix::io::AsRawFd;
    // BLKROGET is _IO(0x12, 94), BLKSSZGET _IO(0x12, 104) (linux/fs.h); libc has only
    // the latter, whose encoding per architecture this keeps.
    let blkroget = libc::BLKSSZGET - 10;
    let mut ro: libc::c_int = 0;
    // SAFETY: BLKROGET writes one int.
    unsafe { libc::ioctl(file.as_raw_fd(), blkroget, &mut ro) == 0 && ro != 0 }
}

fn is_block_device(md: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    md.file_type().is_block_device()
}

/// What one member name reaches, to tell two names of one file apart: a symbolic or hard
/// link, `./a` beside `/dir/a`, a loop device over the file.
#[derive(Debug, Default)]
struct Ident {
    /// The storage the name reaches: (b'f', st_dev, st_ino) of a regular file (also a loop
    /// device's backing file), (b'b', st_rdev, 0) of a block device.
    own: Vec<(u8, u64, u64)>,
    /// Storage that contains it: a partition's whole disk (and that disk's backing file).
    within: Vec<(u8, u64, u64)>,
    /// A loop device's backing file, for the message.
    backing: Option<PathBuf>,
    /// A name that does not exist yet (create makes it): its absolute form.
    absent: Option<PathBuf>,
}

/// (major, minor) of a device number, as glibc's gnu_dev_major/minor compute them.
fn major_minor(dev: u64) -> (u64, u64) {
    (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    )
}

/// A block device's file in /sys (`/sys/dev/block/MAJ:MIN`, resolved).
fn sys_block(rdev: u64) -> Option<PathBuf> {
    let (ma, mi) = major_minor(rdev);
    std::fs::canonicalize(format!("/sys/dev/block/{ma}:{mi}")).ok()
}

/// The backing file of the loop device whose /sys directory is `sys`, if it is one.
fn loop_backing(sys: &Path) -> Option<PathBuf> {
    let s = std::fs::read_to_string(sys.join("loop/backing_file")).ok()?;
    let s = s.trim_end_matches('\n');
    (!s.is_empty()).then(|| PathBuf::from(s))
}

fn file_key(p: &Path) -> Option<(u8, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(p).ok()?;
    md.is_file().then(|| (b'f', md.dev(), md.ino()))
}

fn ident(p: &Path) -> Ident {
    use std::os::unix::fs::MetadataExt;
    let mut id = Ident::default();
    let Ok(md) = std::fs::metadata(p) else {
        // Not there (yet): the same absolute name is the same file.
        let abs = match (p.parent(), p.file_name()) {
            (Some(dir), Some(name)) => {
                let dir = if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                };
                std::fs::canonicalize(dir)
                    .map(|d| d.join(name))
                    .unwrap_or_else(|_| p.to_path_buf())
            }
            _ => p.to_path_buf(),
        };
        id.absent = Some(abs);
        return id;
    };
    if md.is_file() {
        id.own.push((b'f', md.dev(), md.ino()));
    } else if is_block_device(&md) {
        let rdev = md.rdev();
        id.own.push((b'b', rdev, 0));
        if let Some(sys) = sys_block(rdev) {
            if let Some(back) = loop_backing(&sys) {
                id.own.extend(file_key(&back));
                id.backing = Some(back);
            }
            // A partition lies inside its disk (the /sys directory above it).
            if sys.join("partition").exists() {
                if let Some(disk) = sys.parent() {
                    let dev = std::fs::read_to_string(disk.join("dev")).unwrap_or_default();
                    if let Some((ma, mi)) = dev.trim().split_once(':') {
                        if let (Ok(ma), Ok(mi)) = (ma.parse::<u64>(), mi.parse::<u64>()) {
                            let d = ((ma & 0xfff) << 8)
                                | ((ma & !0xfff) << 32)
                                | (mi & 0xff)
                                | ((mi & !0xff) << 12);
                            id.within.push((b'b', d, 0));
                        }
                    }
                    if let Some(back) = loop_backing(disk) {
                        id.within.extend(file_key(&back));
                    }
                }
            }
        }
    }
    id
}

/// Why the names `pa` and `pb` (with their identities) reach the same storage, if they do:
/// "A and B are one file (…)" or "A lies inside B (…)".
fn clash(pa: &Path, a: &Ident, pb: &Path, b: &Ident) -> Option<String> {
    let (na, nb) = (pa.display(), pb.display());
    if pa == pb {
        return Some(format!("{na} is in the list already"));
    }
    if a.own.iter().any(|k| b.own.contains(k)) || a.absent.is_some() && a.absent == b.absent {
        let via = match (&a.backing, &b.backing) {
            (None, Some(f)) => format!(" ({nb} is a loop device over {})", f.display()),
            (Some(f), None) => format!(" ({na} is a loop device over {})", f.display()),
            (Some(f), Some(_)) => format!(" (both are loop devices over {})", f.display()),
            (None, None) => String::new(),
        };
        return Some(format!("{na} and {nb} are one file{via}"));
    }
    if a.within.iter().any(|k| b.own.contains(k)) {
        return Some(format!("{na} lies inside {nb} (a partition of it)"));
    }
    if b.within.iter().any(|k| a.own.contains(k)) {
        return Some(format!("{nb} lies inside {na} (a partition of it)"));
    }
    None
}

/// Refuse a member list that names one file (or device) twice, under any names: the same
/// string, a symbolic or hard link, a relative and an absolute path, a loop device over a
/// listed file, a partition of a listed disk. Checked before anything is written.
pub fn check_distinct(paths: &[PathBuf]) -> Result<(), ArrayError> {
    check_listed_once(paths)?;
    let ids: Vec<Ident> = paths.iter().map(|p| ident(p)).collect();
    for j in 1..paths.len() {
        for i in 0..j {
            if let Some(why) = clash(&paths[i], &ids[i], &paths[j], &ids[j]) {
                return Err(ArrayError::usage(format!(
                    "members {why}: list each member once"
                )));
            }
        }
    }
    Ok(())
}

/// Refuse a member list naming one path twice, as written; looks at nothing on disk (two
/// names of one file are [`check_distinct`]'s to find).
pub fn check_listed_once(paths: &[PathBuf]) -> Result<(), ArrayError> {
    for j in 1..paths.len() {
        if let Some(p) = paths[..j].iter().find(|p| **p == paths[j]) {
            return Err(ArrayError::usage(format!(
                "member {} is listed twice (list each member once)",
                p.display()
            )));
        }
    }
    Ok(())
}

/// Whether `new` reaches the storage of one of `members` (under any name): why, if so.
pub fn overlaps_any(new: &Path, members: &[PathBuf]) -> Option<String> {
    let n = ident(new);
    members.iter().find_map(|m| clash(m, &ident(m), new, &n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One file under two names is one member, however it is named.
    #[test]
    fn two_names_of_one_file_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::write(&a, b"x").unwrap();
        std::fs::write(d.path().join("b"), b"x").unwrap();
        std::os::unix::fs::symlink(&a, d.path().join("sym")).unwrap();
        std::fs::hard_link(&a, d.path().join("hard")).unwrap();
        let b = d.path().join("b");
        for other in [
            d.path().join("sym"),
            d.path().join("hard"),
            d.path().join(".").join("a"),
            d.path().join("sub/../a"),
            a.clone(),
        ] {
            std::fs::create_dir_all(d.path().join("sub")).unwrap();
            let e = check_distinct(&[a.clone(), b.clone(), other.clone()]).unwrap_err();
            assert!(e.is_usage(), "{e}");
            assert!(
                e.message().contains("are one file") || e.message().contains("listed twice"),
                "{other:?}: {e}"
            );
        }
        assert!(check_distinct(&[a.clone(), b.clone()]).is_ok());
        // Names not created yet: the same absolute name twice.
        let n = d.path().join("new");
        let e = check_distinct(&[n.clone(), d.path().join("sub/../new")]).unwrap_err();
        assert!(e.message().contains("are one file"), "{e}");
        assert!(check_distinct(&[n, d.path().join("new2")]).is_ok());
        assert!(overlaps_any(&d.path().join("hard"), &[b.clone(), a.clone()]).is_some());
        assert!(overlaps_any(&b, &[a]).is_none());
    }
}
