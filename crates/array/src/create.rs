//! `array create`: lay out superblocks, bitmaps and data areas on new members, for a flat array
//! or a nested one (an array whose members are arrays, e.g. RAID 0 over four RAID 5s).

use crate::assemble::{assemble, AssembleOptions};
use crate::bitmap::choose_region;
use crate::error::ArrayError;
use crate::member::Member;
use crate::shape::{self, has_chunk, layout_name, parse_layout, parse_level};
use crate::superblock::{
    data_offset_for, new_uuid, ArrayDesc, Slot, SlotState, Superblock, BITMAP_OFFSET, DATA_ALIGN,
    MAGIC, MAX_MEMBERS, MAX_PARENTS, SB_BYTES,
};
use raidlab_engine::ewriteln;
use raidlab_geometry::{Geometry, Layout, Level};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// mdadm's default chunk.
pub const DEFAULT_CHUNK: u64 = 512 * 1024;

/// What to build: a level over members that are either paths or arrays built the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateSpec {
    pub level: Level,
    pub layout: Layout,
    pub chunk: u64,
    pub members: Vec<MemberSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberSpec {
    Path(PathBuf),
    Array(CreateSpec),
}

#[derive(Debug, Clone, Default)]
pub struct CreateOptions {
    /// Overwrite members that hold data.
    pub force: bool,
    /// Create missing member files with this size in bytes.
    pub size: Option<u64>,
    /// Skip the initial sync (mdadm's `--assume-clean`: the members are consistent already).
    /// Member files are then left as they are: where they are sparse, reads of regions not
    /// yet written read holes, which reach no device.
    pub assume_clean: bool,
    /// Report on stderr (and draw a progress line for a sync that takes more than a second,
    /// when stderr is a terminal).
    pub verbose: bool,
    /// Set (e.g. by Ctrl-C) to stop the initial sync: the array is left created, marked as
    /// not synced, and `create` fails saying how to finish it.
    pub stop: Option<&'static AtomicBool>,
}

impl CreateSpec {
    pub fn new(
        level: &str,
        layout: Option<&str>,
        chunk: Option<u64>,
        members: Vec<MemberSpec>,
    ) -> Result<CreateSpec, ArrayError> {
        let level = parse_level(level)?;
        let layout = match layout {
            Some(l) => parse_layout(level, l)?,
            None => Layout::default_for(level),
        };
        // A level without a chunk takes none, or 0 (as `--of 1:0:a,b` writes it).
        let chunk = match chunk {
            Some(c) if !has_chunk(level) && c != 0 => {
                return Err(ArrayError::usage(format!(
                    "{level} has no chunk size (drop --chunk)"
                )));
            }
            Some(0) if !has_chunk(level) => None,
            c => c,
        };
        if members.len() as u32 > MAX_MEMBERS {
            return Err(ArrayError::usage(format!(
                "{} members given; at most {MAX_MEMBERS}",
                members.len()
            )));
        }
        let chunk = chunk.unwrap_or(DEFAULT_CHUNK);
        // Check level, layout, chunk and member count now, before any member is touched.
        shape::geometry(level, layout, chunk, members.len() as u32, 1 << 40)?;
        Ok(CreateSpec {
            level,
            layout,
            chunk,
            members,
        })
    }

    /// Parse one `--of` child: `LEVEL:CHUNK:M1,M2,…` or `LEVEL:CHUNK:LAYOUT:M1,M2,…`
    /// (e.g. `5:64k:a,b,c,d,e`, `6:128k:left-symmetric:a,b,c,d`).
    pub fn parse_child(text: &str) -> Result<CreateSpec, ArrayError> {
        let parts: Vec<&str> = text.split(':').collect();
        let bad = || {
            ArrayError::usage(format!(
                "--of '{text}' is not LEVEL:CHUNK:M1,M2,… or LEVEL:CHUNK:LAYOUT:M1,M2,… (e.g. 5:64k:a,b,c,d,e)"
            ))
        };
        let (level, chunk, layout, list) = match parts.as_slice() {
            [l, c, m] => (*l, *c, None, *m),
            [l, c, lay, m] => (*l, *c, Some(*lay), *m),
            _ => return Err(bad()),
        };
        let lvl = parse_level(level)?;
        let chunk = if chunk.is_empty() {
            None
        } else {
            let c = raidlab_workload::size::parse_size(chunk)
                .map_err(|e| ArrayError::usage(format!("--of '{text}': chunk {e}")))?;
            // As with --level and --chunk: a level without a chunk refuses one.
            if !has_chunk(lvl) && c != 0 {
                return Err(ArrayError::usage(format!(
                    "--of '{text}': {lvl} has no chunk size (give 0 or leave CHUNK empty, e.g. {level}::a,b)"
                )));
            }
            Some(c)
        };
        let members: Vec<MemberSpec> = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|p| MemberSpec::Path(PathBuf::from(p)))
            .collect();
        if members.is_empty() {
            return Err(bad());
        }
        CreateSpec::new(level, layout, chunk, members)
    }

    pub fn leaf_paths(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for m in &self.members {
            match m {
                MemberSpec::Path(p) => out.push(p.clone()),
                MemberSpec::Array(a) => out.extend(a.leaf_paths()),
            }
        }
        out
    }

    fn depth(&self) -> usize {
        self.members
            .iter()
            .map(|m| match m {
                MemberSpec::Path(_) => 0,
                MemberSpec::Array(a) => 1 + a.depth(),
            })
            .max()
            .unwrap_or(0)
    }
}

/// What is on a would-be member: None if it is free to use. `create` and `add` both ask.
///
/// A signature (filesystem, partition table, md or raidlab superblock) or a nonzero byte in
/// the first MiB is data. Past the first MiB, a regular file is read where it holds data: its
/// data extents (SEEK_DATA / SEEK_HOLE), so a file of holes costs nothing and a written
/// block anywhere is found. A block device, and a file past `EXTENT_READ_CAP` bytes of
/// extents, is sampled (`nonzero_sample`).
///
/// Another array's member is named by its array and slot, and a member `array remove` took
/// out of an array by the record it left ([`crate::superblock::Removed`]): what overwriting
/// it would destroy.
pub fn holds_data(member: &Member) -> Result<Option<String>, ArrayError> {
    look_for_data(member, false)
}

/// [`holds_data`] for a member going back into the array `array remove` took it out of
/// (the record it left names that array): the record is raidlab's, and its data area holds
/// that array's old data for the member's slot, which the rebuild rewrites, as md's re-add
/// of a removed disk does. So the data area is not looked at; a signature, or a nonzero
/// byte past the record in the first MiB (which `remove` left zero), is data written since.
pub fn holds_data_rejoining(member: &Member) -> Result<Option<String>, ArrayError> {
    look_for_data(member, true)
}

fn look_for_data(member: &Member, rejoining: bool) -> Result<Option<String>, ArrayError> {
    refuse_in_use(&member.path)?;
    let mut head = vec![0u8; 8];
    if member.size >= 8 && member.read_raw(&mut head, 0).is_ok() && head == MAGIC {
        let whose = match member.read_superblock() {
            Ok(Some(sb)) => format!(": {}", sb.describe_member()),
            _ => String::new(),
        };
        return Ok(Some(format!("raidlab array metadata{whose}")));
    }
    if let Ok(Some(sig)) = raidlab_engine::safety::find_signature(&member.path) {
        return Ok(Some(sig));
    }
    let record = member.read_removed();
    match (&record, rejoining) {
        (Some(r), false) => return Ok(Some(format!("data of {}", r.describe()))),
        (Some(_), true) => {
            if member.has_nonzero_head(SB_BYTES as u64)? {
                return Ok(Some(
                    "data (nonzero bytes in its first MiB, written since it was removed)".into(),
                ));
            }
            return Ok(None);
        }
        (None, _) => {}
    }
    if member.has_nonzero_head(0)? {
        return Ok(Some("data (nonzero bytes in its first MiB)".into()));
    }
    let sample_from = if member.is_file() {
        match scan_extents(&member.path, member.size, 1 << 20, EXTENT_READ_CAP)? {
            Scan::Nonzero(at) => return Ok(Some(format!("data (nonzero bytes at byte {at})"))),
            Scan::Zero => return Ok(None),
            Scan::CapReached(at) => at,
        }
    } else {
        1 << 20
    };
    if let Some(at) = nonzero_sample(member, sample_from)? {
        return Ok(Some(format!("data (nonzero bytes at byte {at})")));
    }
    Ok(None)
}

/// A block device the kernel holds for something else (a mounted filesystem, swap, md,
/// device-mapper: `raidlab_engine::safety::in_use`) is never made a member, `--force` or
/// not: writing it would destroy what is in use (mdadm's exclusive open refuses it alike).
pub fn refuse_in_use(path: &std::path::Path) -> Result<(), ArrayError> {
    // A file under a loop device the kernel holds (mounted, say) is that device's storage:
    // writing the file destroys what is in use as surely as writing the device.
    if let Ok(Some((dev, what))) = raidlab_engine::safety::held_loop_over(path) {
        return Err(ArrayError::usage(format!(
            "member {} is the backing file of {}, which is held by {what}; it cannot be a member, even with --force (valid: a file nothing holds)",
            path.display(),
            dev.display()
        )));
    }
    match raidlab_engine::safety::in_use(path) {
        Ok(None) => Ok(()),
        Ok(Some(what)) => Err(ArrayError::usage(format!(
            "member {} is held by {what}; it cannot be a member, even with --force (valid: a device nothing holds)",
            path.display()
        ))),
        Err(e) => Err(ArrayError::usage(format!(
            "cannot check whether member {} is in use: {e}",
            path.display()
        ))),
    }
}

/// Bytes of a regular file's data extents read when looking for data. A file holding more
/// is read this far, then sampled from there on like a block device: the check stays a
/// bounded cost (seconds) on a large, fully written file, which is a sample, not a proof,
/// past the cap.
const EXTENT_READ_CAP: u64 = 1 << 30;

/// What reading a file's data extents found.
#[derive(Debug, PartialEq, Eq)]
enum Scan {
    /// A nonzero byte at this offset.
    Nonzero(u64),
    /// Every byte from the start offset on is zero (written zeros, or holes).
    Zero,
    /// All zero up to this offset, where `cap` bytes had been read.
    CapReached(u64),
}

/// Read the data extents of the regular file at `path` (`size` bytes) from `from` on, at
/// most `cap` bytes, looking for a nonzero byte. Holes are skipped unread (they read as
/// zeros; the extents are `raidlab_engine::safety::for_each_extent`'s). Where the filesystem
/// has no SEEK_DATA the whole file counts as data. Read through its own buffered descriptor:
/// no alignment rules, short reads at the end are fine.
fn scan_extents(path: &Path, size: u64, from: u64, cap: u64) -> Result<Scan, ArrayError> {
    use std::ops::ControlFlow;
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path).map_err(|e| ArrayError::io("cannot read", path, &e))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = cap;
    let mut found = Scan::Zero;
    raidlab_engine::safety::for_each_extent(&file, from, size, |start, len, data| {
        if !data {
            return Ok(ControlFlow::Continue(()));
        }
        let (mut at, end) = (start, start + len);
        while at < end {
            if left == 0 {
                found = Scan::CapReached(at);
                return Ok(ControlFlow::Break(()));
            }
            let n = (end - at).min(buf.len() as u64).min(left) as usize;
            let got = match file.read_at(&mut buf[..n], at) {
                Ok(0) => return Ok(ControlFlow::Break(())), // the file shrank under us
                Ok(got) => got,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if let Some(i) = buf[..got].iter().position(|&b| b != 0) {
                found = Scan::Nonzero(at + i as u64);
                return Ok(ControlFlow::Break(()));
            }
            at += got as u64;
            left -= got as u64;
        }
        Ok(ControlFlow::Continue(()))
    })
    .map_err(|e| ArrayError::io("cannot read", path, &e))?;
    Ok(found)
}

/// Blocks read from `from` on when looking for data on a block device (or past the extent
/// cap of a file): so many spread over the member, and its last block. A zeroed start does
/// not make the rest free (a disk's partition table or a filesystem's first blocks may have
/// been wiped alone). A sample, not a proof.
const SAMPLES: u64 = 32;
const SAMPLE_BYTES: u64 = 64 << 10;

/// The offset of a nonzero byte found in the sampled blocks at or past `from`, if any.
fn nonzero_sample(member: &Member, from: u64) -> Result<Option<u64>, ArrayError> {
    let size = member.size;
    if size <= from {
        return Ok(None);
    }
    let mut at: Vec<u64> = (1..=SAMPLES)
        .map(|k| size / (SAMPLES + 1) * k / SAMPLE_BYTES * SAMPLE_BYTES)
        .chain([size.saturating_sub(SAMPLE_BYTES) / 4096 * 4096])
        .filter(|&o| o >= from)
        .collect();
    at.dedup();
    let mut buf = vec![0u8; SAMPLE_BYTES as usize];
    for o in at {
        let n = SAMPLE_BYTES.min(size - o) as usize;
        member
            .read_raw(&mut buf[..n], o)
            .map_err(|e| ArrayError::io("cannot read", &member.path, &e))?;
        if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
            return Ok(Some(o + i as u64));
        }
    }
    Ok(None)
}

struct Planned {
    geo: Geometry,
    desc: ArrayDesc,
    /// Leaf arrays: members with their data offsets and bitmap sizing.
    leaf: Option<LeafPlan>,
    children: Vec<Planned>,
}

struct LeafPlan {
    members: Vec<Member>,
    data_offset: u64,
    data_size: u64,
    region: u64,
    bitmap_bytes: u64,
}

/// Create the array; returns it assembled and, unless `assume_clean`, synced: every
/// member's data area written, the redundancy consistent (see [`Array::initial_sync`]).
///
/// [`Array::initial_sync`]: crate::array::Array::initial_sync
pub fn create(
    spec: &CreateSpec,
    opts: &CreateOptions,
) -> Result<Arc<crate::array::Array>, ArrayError> {
    if spec.depth() > MAX_PARENTS {
        return Err(ArrayError::usage(format!(
            "arrays nest at most {} deep",
            MAX_PARENTS + 1
        )));
    }
    let paths = spec.leaf_paths();
    // One file under two names would get two roles' superblocks, the second overwriting the
    // first: refused before anything is written.
    crate::member::check_distinct(&paths)?;
    let _locks = crate::control::MemberLocks::acquire(&paths, "create the array")?;
    let mut fresh = true;
    let mut made = Vec::new();
    let res = (|| {
        // (Said once every member has passed its checks: a refusal stays one line.)
        let mut notes = Vec::new();
        for p in &paths {
            let new = prepare_file(p, opts, &mut notes)?;
            if new {
                made.push(p.clone());
            }
            fresh &= new;
        }
        // Again, now that every member exists (two names of one new file).
        crate::member::check_distinct(&paths)?;
        let plan = plan(spec)?;
        if opts.verbose {
            for line in notes.into_iter().chain(size_notes(&plan)) {
                ewriteln!("raidlab: note: {line}");
            }
        }
        write_tree(&plan, &[], opts)
    })();
    if let Err(e) = res {
        // Leave no half-made member files behind.
        for p in &made {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    let arr = assemble(
        &paths,
        &AssembleOptions {
            force: false,
            resync: false,
            verbose: opts.verbose,
            all_members: false,
        },
    )?;
    if opts.assume_clean {
        return Ok(arr);
    }
    // Members this call made, or whose data areas are all holes, read as zeros: writing
    // zeros over them is the whole sync.
    let zeros = fresh || arr.all_holes()?;
    let (_, total) = arr.sync_pending().unwrap_or((0, 0));
    if opts.verbose {
        let what = if zeros {
            "writing zeros over the members' data areas"
        } else {
            "filling the holes of member files with zeros and making redundancy agree with what the members hold"
        };
        ewriteln!(
            "raidlab: initial sync: {what} ({} MiB in all; --assume-clean skips it)",
            total >> 20
        );
    }
    let never = AtomicBool::new(false);
    let stop = opts.stop.unwrap_or(&never);
    let show = opts.verbose && stderr_is_tty();
    let started = std::time::Instant::now();
    let mut prog: Option<crate::manage::Progress> = None;
    let synced = arr.initial_sync(zeros, stop, &mut |done, total| {
        // Only for a sync long enough to wait for.
        if prog.is_none() && started.elapsed().as_secs() >= 1 {
            prog = Some(crate::manage::Progress::new(show, done));
        }
        if let Some(p) = &mut prog {
            p.update("initial sync", done, total);
        }
    });
    match synced {
        Ok(true) => Ok(arr),
        Ok(false) => {
            arr.close()?;
            let (done, total) = arr.sync_pending().unwrap_or((0, 1));
            let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            Err(ArrayError::failed(format!(
                "initial sync interrupted at {:.1}%: the array is created but not synced (array status says so); run raidlab array rebuild {} to finish the sync",
                done as f64 * 100.0 / total.max(1) as f64,
                list.join(",")
            )))
        }
        Err(e) => {
            let _ = arr.close();
            Err(e)
        }
    }
}

fn stderr_is_tty() -> bool {
    // SAFETY: isatty has no preconditions.
    unsafe { libc::isatty(2) == 1 }
}

/// Make sure the file exists (creating it with --size); refuse one holding data without
/// --force. Returns true if the member is known to be all zeros (freshly created). What the
/// user should know of the member goes on `notes`.
fn prepare_file(
    p: &Path,
    opts: &CreateOptions,
    notes: &mut Vec<String>,
) -> Result<bool, ArrayError> {
    if !p.exists() {
        let Some(size) = opts.size else {
            return Err(ArrayError::usage(format!(
                "member {} does not exist (pass --size SIZE to create member files)",
                p.display()
            )));
        };
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .map_err(|e| ArrayError::io("cannot create member file", p, &e))?;
        f.set_len(size)
            .map_err(|e| ArrayError::io("cannot size member file", p, &e))?;
        return Ok(true);
    }
    let m = Member::open(p)?;
    if let Some(size) = opts.size {
        if m.size < size && std::fs::metadata(p).map(|md| md.is_file()).unwrap_or(false) {
            return Err(ArrayError::usage(format!(
                "member {} exists and is {} bytes, smaller than --size {size}",
                p.display(),
                m.size
            )));
        }
        // mdadm's --size caps what each device gives; here it only sizes new files, so a
        // larger member is used whole: said, not left for the capacity line to reveal.
        if m.size > size {
            notes.push(format!(
                "member {} exists and is {} bytes; --size {size} only sizes member files raidlab creates, so all of it is used",
                p.display(),
                m.size
            ));
        }
    }
    if let Some(what) = holds_data(&m)? {
        if !opts.force {
            return Err(ArrayError::usage(format!(
                "member {} holds {what}; pass --force to overwrite it",
                p.display()
            )));
        }
        if opts.verbose {
            ewriteln!("raidlab: overwriting {what} on {} (--force)", p.display());
        }
    }
    Ok(false)
}

/// Where a flat array's data goes on members whose smallest is `min` bytes.
struct LeafRoom {
    /// The geometry of the members' data areas.
    geo: Geometry,
    data_offset: u64,
    /// The write-intent bitmap's region and size.
    region: u64,
    bitmap_bytes: u64,
}

/// Lay out `spec` (a flat array) on members whose smallest is `min` bytes: refused when
/// they cannot hold the metadata and the data its shape needs. `smallest` names that member
/// in the refusal. The one size rule for [`create`] and [`check_new`].
fn leaf_room(
    spec: &CreateSpec,
    min: u64,
    smallest: impl FnOnce() -> String,
) -> Result<LeafRoom, ArrayError> {
    if min <= DATA_ALIGN + 4096 {
        return Err(ArrayError::usage(format!(
            "{} is {min} bytes; members need more than 1 MiB (1 MiB of metadata, then data)",
            smallest()
        )));
    }
    let n = spec.members.len() as u32;
    // Size the bitmap for the largest capacity the members could give, then place data.
    let est = shape::geometry(spec.level, spec.layout, spec.chunk, n, min - DATA_ALIGN)?;
    let (region, bitmap_bytes) = choose_region(est.capacity().max(1), est.stripe_data_bytes());
    let data_offset = data_offset_for(bitmap_bytes);
    let geo = shape::geometry(spec.level, spec.layout, spec.chunk, n, min - data_offset)?;
    Ok(LeafRoom {
        geo,
        data_offset,
        region,
        bitmap_bytes,
    })
}

/// What [`create`] checks of a new flat array before it opens a member, for a caller that
/// plans one ahead (a sweep's array target, checked before its campaign starts): level,
/// layout, chunk and member count as [`CreateSpec::new`], each member listed once (as
/// written: two names of one file are found when `create` opens them), and, when the
/// members' size is known (`member_size`, files yet to be made), that members of that size
/// hold the metadata and the data the shape needs. Opens nothing; the same rules and words
/// as `raidlab array create`.
pub fn check_new(
    level: &str,
    layout: Option<&str>,
    chunk: Option<u64>,
    members: &[PathBuf],
    member_size: Option<u64>,
) -> Result<Geometry, ArrayError> {
    let spec = CreateSpec::new(
        level,
        layout,
        chunk,
        members.iter().cloned().map(MemberSpec::Path).collect(),
    )?;
    crate::member::check_listed_once(members)?;
    match member_size {
        Some(size) => Ok(leaf_room(&spec, size, || "each member".to_string())?.geo),
        // As CreateSpec::new checks the shape: on members large enough for any chunk.
        None => shape::geometry(
            spec.level,
            spec.layout,
            spec.chunk,
            members.len() as u32,
            1 << 40,
        ),
    }
}

fn plan(spec: &CreateSpec) -> Result<Planned, ArrayError> {
    let uuid = new_uuid();
    if spec
        .members
        .iter()
        .all(|m| matches!(m, MemberSpec::Path(_)))
    {
        let members: Vec<Member> = spec
            .members
            .iter()
            .map(|m| match m {
                MemberSpec::Path(p) => Member::open(p),
                _ => unreachable!(),
            })
            .collect::<Result<_, _>>()?;
        let min = members.iter().map(|m| m.size).min().unwrap_or(0);
        let LeafRoom {
            geo,
            data_offset,
            region,
            bitmap_bytes,
        } = leaf_room(spec, min, || {
            let small = members.iter().find(|m| m.size == min).unwrap();
            format!("member {}", small.path.display())
        })?;
        let desc = desc_for(&geo, uuid);
        Ok(Planned {
            geo: geo.clone(),
            desc,
            leaf: Some(LeafPlan {
                members,
                data_offset,
                data_size: geo.member_bytes,
                region,
                bitmap_bytes,
            }),
            children: Vec::new(),
        })
    } else {
        let mut children = Vec::new();
        for m in &spec.members {
            match m {
                MemberSpec::Array(a) => children.push(plan(a)?),
                MemberSpec::Path(p) => {
                    return Err(ArrayError::usage(format!(
                        "member {} is a plain path but the other members are arrays: all members of one array must be of one kind",
                        p.display()
                    )))
                }
            }
        }
        let min = children.iter().map(|c| c.geo.capacity()).min().unwrap_or(0);
        let geo = shape::geometry(
            spec.level,
            spec.layout,
            spec.chunk,
            children.len() as u32,
            min,
        )?;
        let desc = desc_for(&geo, uuid);
        Ok(Planned {
            geo,
            desc,
            leaf: None,
            children,
        })
    }
}

fn desc_for(geo: &Geometry, uuid: [u8; 16]) -> ArrayDesc {
    ArrayDesc {
        uuid,
        level: geo.level.to_string(),
        layout: layout_name(geo.layout),
        chunk_bytes: if has_chunk(geo.level) {
            geo.chunk_bytes
        } else {
            0
        },
        members: geo.members,
        role: 0,
        dirty: false,
        member_bytes: geo.member_bytes,
        rebuild: None,
        initial_sync: None,
    }
}

/// Members more than 1% larger than the smallest of their array (mdadm warns past 1%): the
/// array uses as much of each as of the smallest, and the rest lies unused.
fn size_notes(p: &Planned) -> Vec<String> {
    let mut out: Vec<String> = p.children.iter().flat_map(size_notes).collect();
    if let Some(leaf) = &p.leaf {
        let Some(small) = leaf.members.iter().min_by_key(|m| m.size) else {
            return out;
        };
        for m in &leaf.members {
            if m.size > small.size + small.size / 100 {
                out.push(format!(
                    "member {} is {} bytes, more than 1% above the smallest, {} ({} bytes): the array uses {} bytes of data on each member, as md does, so {} bytes of {} lie unused",
                    m.path.display(),
                    m.size,
                    small.path.display(),
                    small.size,
                    leaf.data_size,
                    m.size - small.size,
                    m.path.display()
                ));
            }
        }
    }
    out
}

/// Write superblocks (and zeroed bitmaps) down the tree; `parents` are the enclosing arrays'
/// descriptions, innermost first, each with this subtree's role in it.
fn write_tree(p: &Planned, parents: &[ArrayDesc], opts: &CreateOptions) -> Result<(), ArrayError> {
    if let Some(leaf) = &p.leaf {
        let dev_uuids: Vec<[u8; 16]> = leaf.members.iter().map(|_| new_uuid()).collect();
        let slots: Vec<Slot> = dev_uuids
            .iter()
            .map(|&u| Slot {
                dev_uuid: u,
                state: SlotState::Active,
                checkpoint: 0,
            })
            .collect();
        let ctime_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        for (i, m) in leaf.members.iter().enumerate() {
            let zeros = vec![0u8; (leaf.data_offset - BITMAP_OFFSET) as usize];
            m.write_raw(&zeros, BITMAP_OFFSET)
                .map_err(|e| ArrayError::io("cannot clear metadata area of", &m.path, &e))?;
            let mut desc = p.desc.clone();
            desc.role = i as u32;
            let sb = Superblock {
                events: 1,
                seq: 1,
                ctime_ns,
                dev_uuid: dev_uuids[i],
                array: desc,
                parents: parents.to_vec(),
                data_offset: leaf.data_offset,
                data_size: leaf.data_size,
                bitmap_bytes: leaf.bitmap_bytes,
                bitmap_region: leaf.region,
                slots: slots.clone(),
                // Marked as not synced until the initial sync says otherwise, so a sync
                // cut short in any way leaves the mark.
                initial_sync: (!opts.assume_clean).then_some(0),
                spares: Vec::new(),
                spare_events: 0,
            };
            m.write_superblock(&sb)?;
        }
        return Ok(());
    }
    for (i, c) in p.children.iter().enumerate() {
        let mut mine = p.desc.clone();
        mine.role = i as u32;
        let mut ps = vec![mine];
        ps.extend_from_slice(parents);
        write_tree(c, &ps, opts)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    fn sparse(dir: &Path, name: &str, size: u64, writes: &[(u64, &[u8])]) -> PathBuf {
        let p = dir.join(name);
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(size).unwrap();
        for (at, b) in writes {
            f.write_all_at(b, *at).unwrap();
        }
        p
    }

    /// A planned array is checked by create's own rules without a member opened, and the
    /// size rule is create's: a member size `check_new` refuses, `create` refuses in the
    /// same words, and one it accepts, `create` builds.
    #[test]
    fn check_new_applies_creates_rules_without_opening_anything() {
        let names = |n: usize| -> Vec<PathBuf> {
            (0..n)
                .map(|i| PathBuf::from(format!("/nonexistent/m{i}")))
                .collect()
        };
        let mib = 1u64 << 20;
        check_new("5", None, Some(65536), &names(3), Some(4 * mib)).unwrap();
        check_new("6", Some("left-symmetric"), None, &names(4), None).unwrap();
        let refused = |level, layout, chunk, n, size| {
            let e = check_new(level, layout, chunk, &names(n), size).unwrap_err();
            assert!(e.is_usage(), "{e}");
            e.to_string()
        };
        let k64 = Some(65536);
        for (e, want) in [
            (refused("9", None, None, 3, None), "unknown RAID level '9'"),
            (
                refused("5", None, k64, 1, None),
                "raid5 needs at least 2 members, got 1",
            ),
            (
                refused("6", None, k64, 3, None),
                "raid6 needs at least 4 members, got 3",
            ),
            (
                refused("5", None, Some(3072), 3, None),
                "chunk 3072 bytes is not valid",
            ),
            (
                refused("5", Some("sideways"), None, 3, None),
                "layout 'sideways' is not valid",
            ),
            (
                refused("5", None, k64, 3, Some(1024)),
                "each member is 1024 bytes; members need",
            ),
            (
                refused("5", None, Some(mib), 3, Some(2 * mib - 4096)),
                "members are too small",
            ),
            (refused("1", None, k64, 2, None), "raid1 has no chunk size"),
            (
                refused("0", None, None, 121, None),
                "121 members given; at most 120",
            ),
        ] {
            assert!(e.contains(want), "{e}");
        }
        let twice = [
            PathBuf::from("/x/a"),
            PathBuf::from("/x/b"),
            PathBuf::from("/x/a"),
        ];
        let e = check_new("5", None, None, &twice, None).unwrap_err();
        assert!(e.to_string().contains("member /x/a is listed twice"), "{e}");

        // create agrees on real files of those sizes.
        let d = tempfile::tempdir().unwrap();
        let make = |tag: &str, size: u64| -> Vec<MemberSpec> {
            (0..3)
                .map(|i| MemberSpec::Path(sparse(d.path(), &format!("{tag}{i}"), size, &[])))
                .collect()
        };
        let opts = CreateOptions {
            assume_clean: true,
            ..Default::default()
        };
        let small = CreateSpec::new("5", None, Some(65536), make("s", mib)).unwrap();
        let e = create(&small, &opts)
            .err()
            .expect("members of 1 MiB are refused");
        assert!(
            e.to_string()
                .contains("bytes; members need more than 1 MiB"),
            "{e}"
        );
        let ok = CreateSpec::new("5", None, Some(65536), make("k", 4 * mib)).unwrap();
        create(&ok, &opts).unwrap().close().unwrap();
    }

    /// The probe's case: 64 KiB of data at block 150 of a 16 MiB file, between the sampled
    /// blocks. The data extents are read, so it is found wherever it lies.
    #[test]
    fn data_anywhere_in_a_file_is_found() {
        let d = tempfile::tempdir().unwrap();
        let block = vec![0x5au8; 65536];
        let p = sparse(d.path(), "u2", 16 << 20, &[(150 * 65536, &block)]);
        let m = Member::open(&p).unwrap();
        assert_eq!(
            holds_data(&m).unwrap().as_deref(),
            Some("data (nonzero bytes at byte 9830400)")
        );
        // One byte, anywhere.
        for at in [(1 << 20) + 1, 5 << 20, (16 << 20) - 1] {
            let p = sparse(d.path(), &format!("b{at}"), 16 << 20, &[(at, &[1])]);
            let m = Member::open(&p).unwrap();
            let got = holds_data(&m).unwrap();
            assert_eq!(
                got.as_deref(),
                Some(format!("data (nonzero bytes at byte {at})").as_str())
            );
        }
    }

    #[test]
    fn holes_and_written_zeros_hold_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = sparse(d.path(), "h", 64 << 20, &[]);
        assert_eq!(holds_data(&Member::open(&p).unwrap()).unwrap(), None);
        let zeros = vec![0u8; 3 << 20];
        let p = sparse(d.path(), "z", 64 << 20, &[(7 << 20, &zeros)]);
        assert_eq!(holds_data(&Member::open(&p).unwrap()).unwrap(), None);
    }

    /// Past the cap of bytes read, the rest is sampled: the scan says where it stopped.
    #[test]
    fn the_extent_scan_stops_at_its_cap() {
        let d = tempfile::tempdir().unwrap();
        let zeros = vec![0u8; 4 << 20];
        let p = sparse(d.path(), "c", 8 << 20, &[(0, &zeros), (6 << 20, &[7])]);
        assert_eq!(
            scan_extents(&p, 8 << 20, 1 << 20, 1 << 20).unwrap(),
            Scan::CapReached(2 << 20)
        );
        assert_eq!(
            scan_extents(&p, 8 << 20, 1 << 20, 1 << 30).unwrap(),
            Scan::Nonzero(6 << 20)
        );
    }

    #[test]
    fn a_chunk_for_a_level_without_one_is_refused_alike_by_level_and_of() {
        let ms = || vec![MemberSpec::Path("a".into()), MemberSpec::Path("b".into())];
        assert!(CreateSpec::new("1", None, Some(65536), ms()).is_err());
        assert!(CreateSpec::parse_child("1:64k:a,b").is_err());
        assert!(CreateSpec::new("1", None, Some(0), ms()).is_ok());
        assert!(CreateSpec::parse_child("1:0:a,b").is_ok());
        assert!(CreateSpec::parse_child("1::a,b").is_ok());
        assert!(CreateSpec::new("1", None, None, ms()).is_ok());
    }
}
