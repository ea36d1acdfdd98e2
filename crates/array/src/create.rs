//! `array create`: lay out superblocks, bitmaps and data areas on new members, for a flat array
//! or a nested one (an array whose members are arrays, e.g. RAID 0 over four RAID 5s).

use crate::assemble::{assemble, AssembleOptions};
use crate::bitmap::choose_region;
use crate::error::ArrayError;
use crate::member::Member;
use crate::shape::{self, has_chunk, layout_name, parse_layout, parse_level};
use crate::superblock::{
    data_offset_for, new_uuid, ArrayDesc, Slot, SlotState, Superblock, BITMAP_OFFSET, DATA_ALIGN,
    MAGIC, MAX_MEMBERS, MAX_PARENTS,
};
use raidlab_geometry::{Geometry, Layout, Level};
use std::path::{Path, PathBuf};
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
    /// Skip the initial resync (parity already consistent, e.g. all members zero).
    pub assume_clean: bool,
    /// Report on stderr.
    pub verbose: bool,
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
        if chunk.is_some() && !has_chunk(level) {
            return Err(ArrayError::usage(format!(
                "{level} has no chunk size (drop --chunk)"
            )));
        }
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
        let chunk = if chunk.is_empty() || !has_chunk(lvl) {
            None
        } else {
            Some(
                raidlab_workload::size::parse_size(chunk)
                    .map_err(|e| ArrayError::usage(format!("--of '{text}': chunk {e}")))?,
            )
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

/// What is on a would-be member: None if it is free to use.
pub fn holds_data(member: &Member) -> Result<Option<String>, ArrayError> {
    if let Ok(Some(sig)) = raidlab_engine::safety::find_signature(&member.path) {
        return Ok(Some(sig));
    }
    let mut head = vec![0u8; 8];
    if member.size >= 8 && member.read_raw(&mut head, 0).is_ok() && head == MAGIC {
        return Ok(Some("raidlab array member".into()));
    }
    if member.has_nonzero_head()? {
        return Ok(Some("data (nonzero bytes in its first MiB)".into()));
    }
    if let Some(at) = nonzero_sample(member)? {
        return Ok(Some(format!("data (nonzero bytes at byte {at})")));
    }
    Ok(None)
}

/// Blocks read past the first MiB when looking for data: so many spread over the member, and
/// its last block. A zeroed start does not make the rest free (a disk's partition table or a
/// filesystem's first blocks may have been wiped alone). A sample, not a proof.
const SAMPLES: u64 = 32;
const SAMPLE_BYTES: u64 = 64 << 10;

/// The offset of a nonzero byte found in the sampled blocks, if any.
fn nonzero_sample(member: &Member) -> Result<Option<u64>, ArrayError> {
    let size = member.size;
    if size <= 1 << 20 {
        return Ok(None);
    }
    let mut at: Vec<u64> = (1..=SAMPLES)
        .map(|k| size / (SAMPLES + 1) * k / SAMPLE_BYTES * SAMPLE_BYTES)
        .chain([size.saturating_sub(SAMPLE_BYTES) / 4096 * 4096])
        .filter(|&o| o >= 1 << 20)
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

/// Create the array; returns it assembled (and, unless `assume_clean`, resynced).
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
    for p in &paths {
        if paths.iter().filter(|q| *q == p).count() > 1 {
            return Err(ArrayError::usage(format!(
                "member {} is listed twice",
                p.display()
            )));
        }
    }
    let _locks = crate::control::MemberLocks::acquire(&paths, "create the array")?;
    let mut fresh = true;
    let mut made = Vec::new();
    let res = (|| {
        for p in &paths {
            let new = prepare_file(p, opts)?;
            if new {
                made.push(p.clone());
            }
            fresh &= new;
        }
        let plan = plan(spec)?;
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
        },
    )?;
    if !opts.assume_clean && !fresh && (arr.geo.redundancy() > 0 || has_redundant_child(&arr)) {
        if opts.verbose {
            eprintln!("raidlab: initial resync: making parity consistent with the members' current contents");
        }
        initial_resync(&arr)?;
    }
    Ok(arr)
}

fn has_redundant_child(arr: &crate::array::Array) -> bool {
    match &arr.backing {
        crate::array::Backing::Nested(c) => c
            .iter()
            .flatten()
            .any(|c| c.geo.redundancy() > 0 || has_redundant_child(c)),
        _ => false,
    }
}

fn initial_resync(arr: &crate::array::Array) -> Result<(), ArrayError> {
    if let crate::array::Backing::Nested(children) = &arr.backing {
        for c in children.iter().flatten() {
            initial_resync(c)?;
        }
    }
    arr.resync_range(0, arr.capacity())
}

/// Make sure the file exists (creating it with --size); refuse one holding data without
/// --force. Returns true if the member is known to be all zeros (freshly created).
fn prepare_file(p: &Path, opts: &CreateOptions) -> Result<bool, ArrayError> {
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
    }
    if let Some(what) = holds_data(&m)? {
        if !opts.force {
            return Err(ArrayError::usage(format!(
                "member {} holds {what}; pass --force to overwrite it",
                p.display()
            )));
        }
        if opts.verbose {
            eprintln!("raidlab: overwriting {what} on {} (--force)", p.display());
        }
    }
    Ok(false)
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
        if min <= DATA_ALIGN + 4096 {
            let small = members.iter().find(|m| m.size == min).unwrap();
            return Err(ArrayError::usage(format!(
                "member {} is {min} bytes; members need more than 1 MiB (1 MiB of metadata, then data)",
                small.path.display()
            )));
        }
        // Size the bitmap for the largest capacity the members could give, then place data.
        let est = shape::geometry(
            spec.level,
            spec.layout,
            spec.chunk,
            spec.members.len() as u32,
            min - DATA_ALIGN,
        )?;
        let (region, bitmap_bytes) = choose_region(est.capacity().max(1), est.stripe_data_bytes());
        let data_offset = data_offset_for(bitmap_bytes);
        let geo = shape::geometry(
            spec.level,
            spec.layout,
            spec.chunk,
            spec.members.len() as u32,
            min - data_offset,
        )?;
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
    }
}

/// Write superblocks (and zeroed bitmaps) down the tree; `parents` are the enclosing arrays'
/// descriptions, innermost first, each with this subtree's role in it.
fn write_tree(p: &Planned, parents: &[ArrayDesc], _opts: &CreateOptions) -> Result<(), ArrayError> {
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
        write_tree(c, &ps, _opts)?;
    }
    Ok(())
}
