//! What a device or file already holds, so a write run does not destroy it unasked.
//!
//! [`find_signature`] looks for the on-disk magic numbers of partition tables, filesystems,
//! swap, encrypted volumes, md RAID superblocks and raidlab array members. Offsets are the
//! formats' own (ext2 superblock at 1024 with magic 0xEF53 at +56; btrfs superblock at 64 KiB
//! with magic at +64; md superblock 1.x at 0 / 4 KiB / end − 8 KiB and 0.90 at the last 64 KiB
//! boundary − 64 KiB, magic 0xa92b4efc; GPT header "EFI PART" at LBA 1 for 512- or 4096-byte
//! sectors; swap's signature in the last 10 bytes of the first page).

use std::fs::File;
use std::io;
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Magic at offset 0 of every raidlab array member.
pub const RAIDLAB_MEMBER_MAGIC: &[u8; 8] = b"RAIDLABA";
/// md's superblock magic (little-endian in 1.x, host order in 0.90).
pub const MD_MAGIC: u32 = 0xa92b_4efc;

/// Bytes read from the start of the target: enough for btrfs (65600+8) and iso9660 (32769+5).
const HEAD_BYTES: usize = 72 * 1024;

/// What holds block device `path` besides us, or `None`: a mounted filesystem (on it or on
/// one of its partitions), swap, md or device-mapper over it, or another program's exclusive
/// open. The kernel refuses an exclusive open (`O_EXCL` on a block device) of a device so
/// held with EBUSY, which is what this asks; /proc/self/mountinfo then names a mount point
/// where there is one. Not a block device (or nothing there yet): `None`.
pub fn in_use(path: &Path) -> io::Result<Option<String>> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    let meta = match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => m,
        // (A file, or nothing yet: it holds nothing the kernel uses.)
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
    {
        Ok(_) => Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            let rdev = meta.rdev();
            let (major, minor) = (libc::major(rdev), libc::minor(rdev));
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
            Ok(Some(
                mount_of(&mounts, &devices_within(major, minor)).unwrap_or_else(|| {
                    "the kernel for another user (swap, md, device-mapper or a program's exclusive open)"
                        .into()
                }),
            ))
        }
        Err(e) => Err(e),
    }
}

/// `major:minor` of a block device and of each of its partitions (sysfs lists them as
/// directories with a `partition` file under the disk's).
fn devices_within(major: u32, minor: u32) -> Vec<String> {
    let me = format!("{major}:{minor}");
    let mut out = vec![me.clone()];
    if let Ok(dir) = std::fs::read_dir(format!("/sys/dev/block/{me}")) {
        for e in dir.flatten() {
            if e.path().join("partition").exists() {
                if let Ok(d) = std::fs::read_to_string(e.path().join("dev")) {
                    out.push(d.trim().to_string());
                }
            }
        }
    }
    out
}

/// The first mount in `mountinfo` (the text of /proc/self/mountinfo) of one of `devices`
/// (`major:minor`), described: `mounted at /mnt/x`.
pub fn mount_of(mountinfo: &str, devices: &[String]) -> Option<String> {
    mountinfo.lines().find_map(|line| {
        // (Fields: mount id, parent id, major:minor, root, mount point, …)
        let f: Vec<&str> = line.split(' ').collect();
        let (dev, point) = (f.get(2)?, f.get(4)?);
        devices.iter().position(|d| d == dev).map(|i| match i {
            0 => format!("a filesystem mounted at {point}"),
            _ => format!("a filesystem on its partition {dev} mounted at {point}"),
        })
    })
}

/// Describe the first signature found in `path` (a file or a block device), or `None`.
pub fn find_signature(path: &Path) -> io::Result<Option<String>> {
    let file = File::open(path)?;
    let size = size_of(&file)?;
    let mut head = vec![0u8; HEAD_BYTES.min(size as usize)];
    read_full(&file, &mut head, 0)?;
    if let Some(s) = identify_head(&head) {
        return Ok(Some(s));
    }
    // md superblocks kept at the end of the device (1.0 and 0.90).
    for off in md_tail_offsets(size) {
        let mut b = [0u8; 4];
        read_full(&file, &mut b, off)?;
        if u32::from_le_bytes(b) == MD_MAGIC || u32::from_be_bytes(b) == MD_MAGIC {
            return Ok(Some(format!("md RAID superblock at byte {off}")));
        }
    }
    Ok(None)
}

/// The extended attribute raidlab puts on the regular files it lays out (and on those a
/// `--force` run wrote over): a file carrying it is raidlab's scratch and may be written again
/// without `--force`. Any other file holding data needs `--force`.
pub const SCRATCH_XATTR: &str = "user.raidlab.scratch";

fn xattr_name() -> std::ffi::CString {
    std::ffi::CString::new(SCRATCH_XATTR).expect("no NUL in the name")
}

/// Mark `file` as raidlab's scratch. Where the filesystem has no user extended attributes the
/// mark is not kept, and a later write run over the file asks for `--force` again.
pub fn mark_scratch(file: &File) {
    use std::os::fd::AsRawFd;
    let name = xattr_name();
    // SAFETY: a valid fd, a NUL-terminated name and a one-byte value that outlives the call.
    unsafe {
        libc::fsetxattr(file.as_raw_fd(), name.as_ptr(), b"1".as_ptr().cast(), 1, 0);
    }
}

/// Whether `file` carries raidlab's scratch mark.
pub fn is_scratch(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    let name = xattr_name();
    let mut v = [0u8; 1];
    // SAFETY: a valid fd, a NUL-terminated name, and a buffer of the length given.
    let n = unsafe {
        libc::fgetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            v.as_mut_ptr().cast(),
            v.len(),
        )
    };
    n == 1 && v[0] == b'1'
}

/// Whether a regular file holds any data: some byte not in a hole. A file that is all holes
/// (made with truncate, or never written) holds none; where the filesystem cannot say
/// (no SEEK_DATA), a non-empty file is taken to hold data.
pub fn holds_data(file: &File) -> io::Result<bool> {
    let mut data = false;
    for_each_extent(file, 0, size_of(file)?, |_, _, d| {
        data = d;
        Ok(if d {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        })
    })?;
    Ok(data)
}

/// Walk a regular file's extents within [start, end) in order, as SEEK_DATA / SEEK_HOLE
/// find them: `each(offset, len, data)` for every run of data (`data` true) and every hole
/// (false) between them. What lies past the end of the file is a hole. Where the filesystem
/// cannot say (no SEEK_HOLE), the whole range is one run of data; a block device has no
/// holes either. `each` returns `Break` to stop the walk early. Moves the descriptor's file
/// offset: for descriptors read and written by offset (pread, io_uring), or used for nothing
/// else. The one extent walker: the hole warning, the member checks and the initial sync all
/// use it.
pub fn for_each_extent(
    file: &File,
    start: u64,
    end: u64,
    mut each: impl FnMut(u64, u64, bool) -> io::Result<ControlFlow<()>>,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let mut pos = start;
    while pos < end {
        // SAFETY: lseek on a valid fd; it only moves the offset.
        let hole = unsafe { libc::lseek(fd, pos as libc::off_t, libc::SEEK_HOLE) };
        let hole = if hole >= 0 {
            hole as u64
        } else if io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
            pos // `pos` is at or past the end of the file: a hole from here
        } else {
            end // the filesystem cannot say: data
        };
        if hole > pos {
            let to = hole.min(end);
            if each(pos, to - pos, true)?.is_break() {
                return Ok(());
            }
            pos = to;
            if pos >= end {
                break;
            }
        }
        // SAFETY: as above.
        let data = unsafe { libc::lseek(fd, pos as libc::off_t, libc::SEEK_DATA) };
        // ENXIO: no data after the hole, which then runs to the end of the file and past it.
        let to = if data < 0 {
            end
        } else {
            (data as u64).clamp(pos + 1, end)
        };
        if each(pos, to - pos, false)?.is_break() {
            return Ok(());
        }
        pos = to;
    }
    Ok(())
}

/// Call `each(offset, len)` for every hole of a regular file within [start, end), in order
/// (see [`for_each_extent`]: past the end of the file is a hole, and where the filesystem
/// cannot say there is none).
pub fn for_each_hole(
    file: &File,
    start: u64,
    end: u64,
    mut each: impl FnMut(u64, u64) -> io::Result<()>,
) -> io::Result<()> {
    for_each_extent(file, start, end, |at, len, data| {
        if !data {
            each(at, len)?;
        }
        Ok(ControlFlow::Continue(()))
    })
}

/// The file behind a loop device (`/dev/loopN`, by its device number) and the offset in it
/// where the device starts, from sysfs; None for any other file or device, or where sysfs
/// does not say. Reads of a loop device over a sparse file's holes are answered without
/// reaching any disk, as reads of the file's holes are.
pub fn loop_backing(file: &File) -> Option<(std::path::PathBuf, u64)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = file.metadata().ok()?;
    if !m.file_type().is_block_device() {
        return None;
    }
    let (major, minor) = (libc::major(m.rdev()), libc::minor(m.rdev()));
    let dir = std::path::PathBuf::from(format!("/sys/dev/block/{major}:{minor}/loop"));
    let backing = std::fs::read_to_string(dir.join("backing_file")).ok()?;
    let backing = backing.trim_end_matches('\n');
    // (A backing file deleted while attached reads "… (deleted)": nothing to look at.)
    if backing.is_empty() || backing.ends_with(" (deleted)") {
        return None;
    }
    let offset = std::fs::read_to_string(dir.join("offset"))
        .ok()
        .and_then(|o| o.trim().parse().ok())
        .unwrap_or(0);
    Some((backing.into(), offset))
}

/// The loop devices (`/dev/loopN`) whose backing file is the regular file `p`, from sysfs:
/// what is written to `p` is written under them. Empty for anything else.
pub fn loops_over(p: &Path) -> Vec<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let key = |q: &Path| {
        std::fs::metadata(q)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| (m.dev(), m.ino()))
    };
    let Some(want) = key(p) else {
        return Vec::new();
    };
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out: Vec<std::path::PathBuf> = dir
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("loop"))
        .filter(|e| {
            let backing = std::fs::read_to_string(e.path().join("loop/backing_file"));
            backing.is_ok_and(|b| {
                let b = b.trim_end_matches('\n');
                !b.is_empty() && key(Path::new(b)) == Some(want)
            })
        })
        .map(|e| Path::new("/dev").join(e.file_name()))
        .collect();
    out.sort();
    out
}

/// The first loop device over the regular file `p` ([`loops_over`]) that the kernel holds
/// for something else ([`in_use`]), and what holds it: writing `p` writes under it.
pub fn held_loop_over(p: &Path) -> io::Result<Option<(std::path::PathBuf, String)>> {
    for dev in loops_over(p) {
        if let Some(what) = in_use(&dev)? {
            return Ok(Some((dev, what)));
        }
    }
    Ok(None)
}

/// Whether another open of `path` holds an exclusive advisory lock (flock) on it, as a
/// process running a raidlab array holds on each of its members for as long as it runs
/// (`array serve`, `rebuild`, `scrub`, a run over `array:…`). Asked with a shared lock
/// taken and let go at once, without waiting. Nothing there: false.
pub fn locked_elsewhere(path: &Path) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    // SAFETY: flock on a descriptor we own; closing it lets the shared lock go.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    if r == 0 {
        return Ok(false);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(true)
    } else {
        Err(e)
    }
}

/// Bytes of [start, end) of a regular file that are holes (see [`for_each_hole`]).
pub fn hole_bytes(file: &File, start: u64, end: u64) -> io::Result<u64> {
    let mut n = 0;
    for_each_hole(file, start, end, |_, len| {
        n += len;
        Ok(())
    })?;
    Ok(n)
}

/// Whether `file` holds data raidlab did not put there: data (not only holes) and no scratch
/// mark. Such a file is written, extended or replaced only with `--force`.
pub fn foreign_data(file: &File) -> io::Result<bool> {
    Ok(!is_scratch(file) && holds_data(file)?)
}

fn size_of(file: &File) -> io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::End(0))
}

/// Read as much of `buf` as the file holds from `offset` (the rest stays zero).
fn read_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Where md keeps superblocks counted from the end: 1.0 at (size − 8 KiB) rounded down to
/// 4 KiB, 0.90 at (size rounded down to 64 KiB) − 64 KiB.
fn md_tail_offsets(size: u64) -> Vec<u64> {
    let mut v = Vec::new();
    if size >= 16 * 1024 {
        v.push((size - 8192) & !4095);
    }
    if size >= 128 * 1024 {
        v.push((size & !65535) - 65536);
    }
    v
}

fn at(buf: &[u8], off: usize, magic: &[u8]) -> bool {
    buf.len() >= off + magic.len() && &buf[off..off + magic.len()] == magic
}

fn le16(buf: &[u8], off: usize) -> Option<u16> {
    buf.get(off..off + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    buf.get(off..off + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Identify a signature from the first bytes of a target (pure; used by [`find_signature`]).
pub fn identify_head(head: &[u8]) -> Option<String> {
    if at(head, 0, RAIDLAB_MEMBER_MAGIC) {
        return Some("raidlab array metadata".into());
    }
    for off in [0usize, 4096] {
        if le32(head, off) == Some(MD_MAGIC) {
            return Some(format!("md RAID superblock at byte {off}"));
        }
    }
    if at(head, 0, b"LUKS\xba\xbe") {
        return Some("LUKS encrypted volume".into());
    }
    if at(head, 0, b"XFSB") {
        return Some("XFS filesystem".into());
    }
    if at(head, 65600, b"_BHRfS_M") {
        return Some("btrfs filesystem".into());
    }
    if le16(head, 1080) == Some(0xEF53) {
        // ext4 if it uses extents (incompat 0x40) or 64-bit (0x80); ext3 if it has a journal.
        let compat = le32(head, 1024 + 0x5C).unwrap_or(0);
        let incompat = le32(head, 1024 + 0x60).unwrap_or(0);
        let kind = if incompat & 0xC0 != 0 {
            "ext4"
        } else if compat & 0x4 != 0 {
            "ext3"
        } else {
            "ext2"
        };
        return Some(format!("{kind} filesystem"));
    }
    let page = page_size();
    for p in [page, 4096] {
        if p >= 10 && (at(head, p - 10, b"SWAPSPACE2") || at(head, p - 10, b"SWAP-SPACE")) {
            return Some("swap area".into());
        }
    }
    if at(head, 32769, b"CD001") {
        return Some("ISO 9660 filesystem".into());
    }
    if at(head, 3, b"NTFS    ") {
        return Some("NTFS filesystem".into());
    }
    if at(head, 3, b"EXFAT   ") {
        return Some("exFAT filesystem".into());
    }
    if at(head, 54, b"FAT12   ") || at(head, 54, b"FAT16   ") || at(head, 82, b"FAT32   ") {
        return Some("FAT filesystem".into());
    }
    if at(head, 512, b"EFI PART") || at(head, 4096, b"EFI PART") {
        return Some("GPT partition table".into());
    }
    if at(head, 512, b"LABELONE") {
        return Some("LVM physical volume".into());
    }
    if at(head, 510, &[0x55, 0xAA]) {
        return Some("MBR partition table (or boot sector)".into());
    }
    None
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mount of the device or of one of its partitions is named by its mount point, from
    /// /proc/self/mountinfo's third and fifth fields.
    #[test]
    fn mounts_of_a_device_and_its_partitions_are_found() {
        let info = "22 1 0:21 / /proc rw - proc proc rw\n\
                    31 1 7:1 / /mnt/p1 rw - ext4 /dev/loop0p1 rw\n\
                    32 1 254:1 / / rw - ext4 /dev/vda1 rw\n";
        let loop0 = ["7:0".to_string(), "7:1".to_string()];
        assert_eq!(
            super::mount_of(info, &loop0).as_deref(),
            Some("a filesystem on its partition 7:1 mounted at /mnt/p1")
        );
        assert_eq!(
            super::mount_of(info, &["254:1".to_string()]).as_deref(),
            Some("a filesystem mounted at /")
        );
        assert_eq!(super::mount_of(info, &["8:0".to_string()]), None);
    }
    use std::io::Write;

    fn with(off: usize, bytes: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; HEAD_BYTES];
        v[off..off + bytes.len()].copy_from_slice(bytes);
        v
    }

    #[test]
    fn recognises_the_common_signatures() {
        assert_eq!(
            identify_head(&with(0, b"RAIDLABA")).as_deref(),
            Some("raidlab array metadata")
        );
        assert_eq!(
            identify_head(&with(510, &[0x55, 0xAA])).as_deref(),
            Some("MBR partition table (or boot sector)")
        );
        assert_eq!(
            identify_head(&with(512, b"EFI PART")).as_deref(),
            Some("GPT partition table")
        );
        assert_eq!(
            identify_head(&with(4096, b"EFI PART")).as_deref(),
            Some("GPT partition table")
        );
        assert_eq!(
            identify_head(&with(0, b"XFSB")).as_deref(),
            Some("XFS filesystem")
        );
        assert_eq!(
            identify_head(&with(65600, b"_BHRfS_M")).as_deref(),
            Some("btrfs filesystem")
        );
        assert_eq!(
            identify_head(&with(4086, b"SWAPSPACE2")).as_deref(),
            Some("swap area")
        );
        assert_eq!(
            identify_head(&with(0, b"LUKS\xba\xbe")).as_deref(),
            Some("LUKS encrypted volume")
        );
        assert_eq!(
            identify_head(&with(32769, b"CD001")).as_deref(),
            Some("ISO 9660 filesystem")
        );
        assert_eq!(
            identify_head(&with(3, b"NTFS    ")).as_deref(),
            Some("NTFS filesystem")
        );
        assert_eq!(
            identify_head(&with(82, b"FAT32   ")).as_deref(),
            Some("FAT filesystem")
        );
        assert_eq!(
            identify_head(&with(4096, &MD_MAGIC.to_le_bytes())).as_deref(),
            Some("md RAID superblock at byte 4096")
        );
        let mut ext4 = with(1080, &[0x53, 0xEF]);
        ext4[1024 + 0x60] = 0x40;
        assert_eq!(identify_head(&ext4).as_deref(), Some("ext4 filesystem"));
        assert_eq!(
            identify_head(&with(1080, &[0x53, 0xEF])).as_deref(),
            Some("ext2 filesystem")
        );
        assert_eq!(identify_head(&vec![0u8; HEAD_BYTES]), None);
        assert_eq!(identify_head(&[]), None);
    }

    /// Holes are found where they are and data is not counted: a file of holes with 1 MiB
    /// written at 2 MiB and one byte at 5 MiB, asked about in whole and in part.
    #[test]
    fn holes_are_found_between_the_written_blocks() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let file = f.as_file();
        file.set_len(8 << 20).unwrap();
        file.write_all_at(&vec![7u8; 1 << 20], 2 << 20).unwrap();
        file.write_all_at(&[1], 5 << 20).unwrap();
        file.sync_all().unwrap();
        let mut holes = Vec::new();
        for_each_hole(file, 0, 8 << 20, |o, l| {
            holes.push((o, l));
            Ok(())
        })
        .unwrap();
        // The byte at 5 MiB takes one filesystem block (up to 64 KiB), the rest is holes.
        assert_eq!(holes.len(), 3, "{holes:?}");
        assert_eq!(holes[0], (0, 2 << 20));
        assert_eq!(holes[1].0, 3 << 20);
        assert!(holes[1].0 + holes[1].1 <= 5 << 20, "{holes:?}");
        assert!(
            holes[2].0 > 5 << 20 && holes[2].0 <= (5 << 20) + 65536,
            "{holes:?}"
        );
        assert_eq!(holes[2].0 + holes[2].1, 8 << 20, "{holes:?}");
        let total = hole_bytes(file, 0, 8 << 20).unwrap();
        assert!(((7 << 20) - 65536..7 << 20).contains(&total), "{total}");
        assert_eq!(hole_bytes(file, 2 << 20, 3 << 20).unwrap(), 0);
        assert_eq!(
            hole_bytes(file, 1 << 20, (2 << 20) + 4096).unwrap(),
            1 << 20
        );
        let written = tempfile::NamedTempFile::new().unwrap();
        written
            .as_file()
            .write_all_at(&vec![0u8; 1 << 20], 0)
            .unwrap();
        assert_eq!(hole_bytes(written.as_file(), 0, 1 << 20).unwrap(), 0);
    }

    /// Data and holes alternate and cover the range exactly; past the end of the file is a
    /// hole, whether the range starts before the end or wholly after it; a walk stops when
    /// told to.
    #[test]
    fn extents_cover_the_range_and_past_the_end_is_a_hole() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let file = f.as_file();
        file.set_len(4 << 20).unwrap();
        file.write_all_at(&vec![7u8; 1 << 20], 1 << 20).unwrap();
        file.sync_all().unwrap();
        let walk = |start, end| {
            let mut v = Vec::new();
            for_each_extent(file, start, end, |o, l, d| {
                v.push((o, l, d));
                Ok(ControlFlow::Continue(()))
            })
            .unwrap();
            v
        };
        let all = walk(0, 6 << 20);
        assert_eq!(
            all,
            vec![
                (0, 1 << 20, false),
                (1 << 20, 1 << 20, true),
                (2 << 20, 4 << 20, false)
            ]
        );
        assert_eq!(walk(5 << 20, 6 << 20), vec![(5 << 20, 1 << 20, false)]);
        assert_eq!(hole_bytes(file, 8 << 20, 9 << 20).unwrap(), 1 << 20);
        assert_eq!(walk(3 << 19, (3 << 19) + 4096), vec![(3 << 19, 4096, true)]);
        let mut seen = 0;
        for_each_extent(file, 0, 6 << 20, |_, _, _| {
            seen += 1;
            Ok(ControlFlow::Break(()))
        })
        .unwrap();
        assert_eq!(seen, 1);
    }

    #[test]
    fn finds_md_superblocks_at_the_end_of_a_file() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let size = 1u64 << 20;
        let mut data = vec![0u8; size as usize];
        let off = ((size - 8192) & !4095) as usize;
        data[off..off + 4].copy_from_slice(&MD_MAGIC.to_le_bytes());
        f.write_all(&data).unwrap();
        let s = find_signature(f.path()).unwrap().unwrap();
        assert!(s.contains("md RAID superblock"), "{s}");
        let g = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(find_signature(g.path()).unwrap(), None);
    }
}
