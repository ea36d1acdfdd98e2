//! Assembly: from a list of member paths to a running array, using only what the members'
//! superblocks say. Foreign members (another array's uuid), duplicate roles, out-of-date
//! members (md's "non-fresh": a lower event count than the newest superblock) and missing
//! members are recognised here; an array that lost more members than it survives does not
//! start, and neither does one that is both dirty and degraded (the RAID-5 write hole) unless
//! forced.

use crate::array::{Array, Backing, Leaf, SlotRt};
use crate::bitmap::Bitmap;
use crate::error::ArrayError;
use crate::member::Member;
use crate::pool::Dev;
use crate::shape::{self, parse_layout, parse_level};
use crate::superblock::{uuid_string, ArrayDesc, SlotState, Superblock, BITMAP_OFFSET};
use raidlab_engine::ewriteln;
use raidlab_geometry::{Geometry, Level};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, Default)]
pub struct AssembleOptions {
    /// Start a dirty and degraded array anyway.
    pub force: bool,
    /// Resync dirty regions at start (off for read-only inspection).
    pub resync: bool,
    /// Print what assembly decided (kicked members, resync) on stderr.
    pub verbose: bool,
    /// Refuse, unless `force`, to start without a member the newest superblock has in
    /// service (active or being rebuilt) when no path given holds it: for the data paths
    /// (`run`, `serve`), where a member left out of the list by mistake would otherwise be
    /// marked missing at the first write, and the array would need a rebuild to be whole
    /// again. Management verbs leave it off: they are how a lost member is replaced.
    pub all_members: bool,
}

/// Split "M1,M2,…" (optionally prefixed `array:`) into paths.
pub fn split_members(list: &str) -> Vec<PathBuf> {
    list.trim_start_matches("array:")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

pub struct Found {
    pub member: Member,
    pub sb: Superblock,
}

/// Open every path and read its superblock; a path without one is bad input, and so is one
/// file under two names, or members of one array whose superblocks disagree on its shape.
pub fn read_members(paths: &[PathBuf]) -> Result<Vec<Found>, ArrayError> {
    if paths.is_empty() {
        return Err(ArrayError::usage(
            "no members given (valid: array:M1,M2,… or a list of member paths)",
        ));
    }
    crate::member::check_distinct(paths)?;
    let mut out: Vec<Found> = Vec::with_capacity(paths.len());
    for p in paths {
        let mut member = Member::open(p)?;
        let sb = member.read_superblock()?.ok_or_else(|| {
            ArrayError::usage(format!(
                "{} has no raidlab superblock, so it is not a member of an array (a removed or wiped member has none): leave it out of the member list, or add it back as a spare with raidlab array add ARRAY {}",
                p.display(),
                p.display()
            ))
        })?;
        member.data_offset = sb.data_offset;
        if member.size < sb.data_offset + sb.data_size {
            return Err(ArrayError::usage(format!(
                "member {} is {} bytes but its superblock needs {} (was it truncated?)",
                p.display(),
                member.size,
                sb.data_offset + sb.data_size
            )));
        }
        for f in &out {
            agree(f, &member.path, &sb)?;
        }
        out.push(Found { member, sb });
    }
    Ok(out)
}

/// Members of one array (the same uuid at some level) must describe it alike: each one's
/// superblock passed its own checks, and this makes one member's roles valid against another
/// member's description (assembly and status index the newest member's slots by every
/// member's role).
pub(crate) fn agree(f: &Found, path: &std::path::Path, sb: &Superblock) -> Result<(), ArrayError> {
    let chain = |s: &Superblock| -> Vec<ArrayDesc> {
        std::iter::once(s.array.clone())
            .chain(s.parents.iter().cloned())
            .collect()
    };
    for a in chain(&f.sb) {
        for b in chain(sb) {
            if a.uuid != b.uuid {
                continue;
            }
            let fields: [(&str, String, String); 5] = [
                ("level", a.level.clone(), b.level.clone()),
                ("layout", a.layout.clone(), b.layout.clone()),
                (
                    "chunk_bytes",
                    a.chunk_bytes.to_string(),
                    b.chunk_bytes.to_string(),
                ),
                ("members", a.members.to_string(), b.members.to_string()),
                (
                    "member_bytes",
                    a.member_bytes.to_string(),
                    b.member_bytes.to_string(),
                ),
            ];
            for (name, x, y) in fields {
                if x != y {
                    return Err(ArrayError::usage(format!(
                        "members {} and {} disagree on {name} of array {} ({x} and {y}): one superblock is damaged; leave the damaged member out of the list",
                        f.member.path.display(),
                        path.display(),
                        uuid_string(&a.uuid)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The description of the array at `level` (0 = outermost) of this member's tree.
pub fn desc_at(sb: &Superblock, level: usize) -> &ArrayDesc {
    let np = sb.parents.len();
    if level < np {
        &sb.parents[np - 1 - level]
    } else {
        &sb.array
    }
}

pub fn geometry_of(d: &ArrayDesc) -> Result<Geometry, ArrayError> {
    let level = parse_level(&d.level)?;
    let layout = parse_layout(level, &d.layout)?;
    shape::geometry(level, layout, d.chunk_bytes, d.members, d.member_bytes)
}

/// Assemble the array the members form.
pub fn assemble(paths: &[PathBuf], opts: &AssembleOptions) -> Result<Arc<Array>, ArrayError> {
    let found = read_members(paths)?;
    let depth = found[0].sb.parents.len();
    let top = desc_at(&found[0].sb, 0).uuid;
    for f in &found {
        if f.sb.parents.len() != depth || desc_at(&f.sb, 0).uuid != top {
            return Err(ArrayError::usage(format!(
                "member {} belongs to array {}, not to array {} of {} (foreign member)",
                f.member.path.display(),
                uuid_string(&desc_at(&f.sb, 0).uuid),
                uuid_string(&top),
                found[0].member.path.display()
            )));
        }
    }
    let (arr, _, settled) = build(found, 0, depth, opts)?;
    if settled && opts.resync {
        arr.release_found_bits();
    }
    Ok(arr)
}

/// Logical ranges (offset, length) of an array that writes may have left inconsistent at an
/// unclean stop: a leaf's write-intent bitmap as it was found, and for an enclosing array the
/// stripes (or chunks) over its children's ranges. An enclosing array has no bitmap of its
/// own; its leaves' bitmaps tell it where to resync, because each of its writes holds intent
/// in every leaf below the stripes it touches until all its member writes are done (the
/// invariant in [`crate::bitmap`]).
type DirtyRanges = Vec<(u64, u64)>;

/// What building one level gives: the array, its dirty ranges, and whether it and every level
/// below it are consistent (resynced, or clean) — only then may the leaves' bits found at
/// assembly be cleared (see [`crate::bitmap`]).
type Built = (Arc<Array>, DirtyRanges, bool);

fn build(
    found: Vec<Found>,
    level: usize,
    depth: usize,
    opts: &AssembleOptions,
) -> Result<Built, ArrayError> {
    if level == depth {
        return build_leaf(found, depth, opts);
    }
    // An enclosing array: group the leaves by the child array they belong to.
    let desc = newest_desc(&found, level);
    let geo = geometry_of(&desc)?;
    let mut groups: Vec<Vec<Found>> = (0..desc.members).map(|_| Vec::new()).collect();
    for f in found {
        let role = desc_at(&f.sb, level).role;
        if role >= desc.members {
            return Err(ArrayError::usage(format!(
                "member {} claims child slot {role} of a {}-member {} array",
                f.member.path.display(),
                desc.members,
                desc.level
            )));
        }
        groups[role as usize].push(f);
    }
    let mut children: Vec<Option<Arc<Array>>> = Vec::new();
    let mut dirty_ranges: DirtyRanges = Vec::new();
    let mut labels = Vec::new();
    let mut missing = Vec::new();
    let mut settled = true;
    // Children being rebuilt whole from this array's redundancy: (role, checkpoint).
    let mut rebuilding: Vec<(usize, u64)> = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        if g.is_empty() {
            children.push(None);
            labels.push(format!("child {i} (missing)"));
            missing.push(i);
            continue;
        }
        let uuids: std::collections::HashSet<[u8; 16]> =
            g.iter().map(|f| desc_at(&f.sb, level + 1).uuid).collect();
        if uuids.len() > 1 {
            return Err(ArrayError::usage(format!(
                "members of child slot {i} belong to {} different arrays",
                uuids.len()
            )));
        }
        let names: Vec<String> = g
            .iter()
            .map(|f| f.member.path.display().to_string())
            .collect();
        // Leaves may disagree after a crash between their updates: the lowest checkpoint is
        // the one every leaf has reached.
        if let Some(cp) = g
            .iter()
            .filter_map(|f| desc_at(&f.sb, level + 1).rebuild)
            .min()
        {
            rebuilding.push((i, cp));
        }
        match build(g, level + 1, depth, opts) {
            Ok((c, ranges, child_settled)) => {
                settled &= child_settled;
                labels.push(format!("{}:{}", c.geo.level, names.join(",")));
                for (s, len) in ranges {
                    dirty_ranges.extend(shape::member_range_to_logical(&geo, i as u32, s, s + len));
                }
                children.push(Some(c));
            }
            Err(e) if geo.redundancy() > missing.len() as u32 && !e.is_usage() => {
                rebuilding.retain(|&(r, _)| r != i);
                if opts.verbose {
                    ewriteln!(
                        "raidlab: child {i} of the {} array cannot start ({e}); starting degraded",
                        desc.level
                    );
                }
                children.push(None);
                labels.push(format!("child {i} (failed)"));
                missing.push(i);
            }
            Err(e) => return Err(e),
        }
    }
    let slots: Vec<SlotRt> = children
        .iter()
        .enumerate()
        .map(
            |(i, c)| match (c, rebuilding.iter().find(|(r, _)| *r == i)) {
                (Some(_), Some(&(_, cp))) => SlotRt {
                    state: SlotState::Rebuilding,
                    checkpoint: cp,
                },
                (Some(_), None) => SlotRt {
                    state: SlotState::Active,
                    checkpoint: 0,
                },
                (None, _) => SlotRt {
                    state: SlotState::Missing,
                    checkpoint: 0,
                },
            },
        )
        .collect();
    let in_rebuild: Vec<usize> = rebuilding
        .iter()
        .map(|&(r, _)| r)
        .filter(|&r| children[r].is_some())
        .collect();
    if (missing.len() + in_rebuild.len()) as u32 > geo.redundancy() {
        let rb = if in_rebuild.is_empty() {
            String::new()
        } else {
            format!(" and {in_rebuild:?} are being rebuilt")
        };
        return Err(ArrayError::failed(format!(
            "cannot start {} array {}: child array(s) {:?} are missing{rb} and it survives {}",
            desc.level,
            uuid_string(&desc.uuid),
            missing,
            geo.redundancy()
        )));
    }
    let degraded = !missing.is_empty() || !in_rebuild.is_empty();
    for c in children.iter().flatten() {
        if c.capacity() < geo.member_bytes {
            return Err(ArrayError::usage(format!(
                "child array of {} bytes is smaller than the {} bytes the enclosing array uses",
                c.capacity(),
                geo.member_bytes
            )));
        }
    }
    let dirty = desc.dirty;
    if dirty && degraded && geo.redundancy() > 0 && !opts.force {
        return Err(write_hole_error(&desc.level, &desc.uuid));
    }
    let devs: Vec<Option<Arc<dyn Dev>>> = children
        .iter()
        .map(|c| c.clone().map(|c| c as Arc<dyn Dev>))
        .collect();
    let arr = Arc::new(Array::new(
        geo,
        desc.uuid,
        labels,
        Backing::Nested(children),
        devs,
        slots,
        dirty,
        level,
    ));
    dirty_ranges.sort_unstable();
    if dirty && degraded && arr.geo.redundancy() > 0 {
        settled = false;
        if opts.resync {
            ewriteln!("{}", write_hole_warning(&desc.level));
        }
    }
    if dirty && !degraded && opts.resync && arr.geo.redundancy() > 0 {
        let mut bytes = 0;
        for &(s, len) in &dirty_ranges {
            arr.resync_range(s, s + len)?;
            bytes += len;
        }
        if opts.verbose {
            ewriteln!(
                "raidlab: {} array was not stopped cleanly; resynced {bytes} bytes its children's bitmaps mark",
                desc.level
            );
        }
    }
    Ok((arr, dirty_ranges, settled))
}

/// The opening both refusals of a list that leaves members in service out share: the
/// array, its slots left out, and the given members that were replaced since (`{level} array
/// {uuid}: slot 3 is in service but no member given holds it (… replaced since)`).
fn left_out_head(
    desc: &ArrayDesc,
    uuid: &[u8; 16],
    left_out: &[usize],
    replaced: &[String],
) -> String {
    let slots: Vec<String> = left_out.iter().map(usize::to_string).collect();
    let (noun, verb) = if left_out.len() == 1 {
        ("slot", "is")
    } else {
        ("slots", "are")
    };
    let stale = if replaced.is_empty() {
        String::new()
    } else {
        format!(
            " ({} given once held a role but was replaced since)",
            replaced.join(", ")
        )
    };
    format!(
        "{} array {}: {noun} {} {verb} in service but no member given holds it{stale}",
        desc.level,
        uuid_string(uuid),
        slots.join(", ")
    )
}

/// Why an array with members in service left out of the list does not start (see
/// [`AssembleOptions::all_members`]), in one line: which slots, what starting would do, and
/// the two ways on.
fn left_out_error(
    desc: &ArrayDesc,
    uuid: &[u8; 16],
    left_out: &[usize],
    replaced: &[String],
) -> ArrayError {
    ArrayError::usage(format!(
        "{}: started without it, the array would run degraded and mark it missing at the first write, to be rebuilt (valid: list all {} members of the array, or add --force to run it degraded on purpose)",
        left_out_head(desc, uuid, left_out, replaced),
        desc.members
    ))
}

/// The refusal of an array that cannot start because members in service (slots
/// `left_out`) are not in the list, and could with them: bad input, which `--force` does not
/// answer. `out`: the other slots out of service, in words.
fn left_out_fatal(
    desc: &ArrayDesc,
    uuid: &[u8; 16],
    (left_out, out): (&[usize], &[String]),
    replaced: &[String],
    survives: u32,
) -> ArrayError {
    let lose = match survives {
        0 => "it survives no member out".to_string(),
        1 => "it survives 1 member out".to_string(),
        n => format!("it survives {n} members out"),
    };
    let besides = if out.is_empty() {
        String::new()
    } else {
        format!(", besides {}", out.join(", "))
    };
    ArrayError::usage(format!(
        "{}, and the array cannot start without it ({lose}{besides}) (valid: list all {} members of the array)",
        left_out_head(desc, uuid, left_out, replaced),
        desc.members
    ))
}

/// What starting a dirty, degraded array (with `--force`) risks: the RAID 5/6 write hole.
fn write_hole_warning(level: &impl std::fmt::Display) -> String {
    format!(
        "raidlab: warning: started the dirty, degraded {level} array because of --force: \
         stripes being written when it stopped may have parity that does not match their data, \
         so the missing member's blocks there read wrong, and a rebuild writes them wrong"
    )
}

fn newest_desc(found: &[Found], level: usize) -> ArrayDesc {
    let newest = found.iter().max_by_key(|f| f.sb.recency()).unwrap();
    let mut d = desc_at(&newest.sb, level).clone();
    // Dirty if any leaf says so: a crash may have cut the update short.
    d.dirty = found.iter().any(|f| desc_at(&f.sb, level).dirty);
    d
}

fn write_hole_error(level: &str, uuid: &[u8; 16]) -> ArrayError {
    ArrayError::usage(format!(
        "{level} array {} was not stopped cleanly and is degraded: stripes written at the crash may have \
         parity that does not match their data, so the missing member's blocks cannot be rebuilt reliably \
         (the RAID-5 write hole); pass --force to start it anyway",
        uuid_string(uuid)
    ))
}

fn build_leaf(
    found: Vec<Found>,
    depth: usize,
    opts: &AssembleOptions,
) -> Result<Built, ArrayError> {
    let uuid = found[0].sb.array.uuid;
    for f in &found {
        if f.sb.array.uuid != uuid {
            return Err(ArrayError::usage(format!(
                "member {} belongs to array {}, not to array {} (foreign member)",
                f.member.path.display(),
                uuid_string(&f.sb.array.uuid),
                uuid_string(&uuid)
            )));
        }
    }
    let newest = found
        .iter()
        .max_by_key(|f| f.sb.recency())
        .unwrap()
        .sb
        .clone();
    let desc = &newest.array;
    let geo = geometry_of(desc)?;
    let n = desc.members as usize;
    let mut members: Vec<Option<Arc<Member>>> = (0..n).map(|_| None).collect();
    let mut spares = Vec::new();
    let mut dev_uuids = vec![[0u8; 16]; n];
    let mut slots: Vec<SlotRt> = newest
        .slots
        .iter()
        .map(|s| SlotRt {
            state: s.state,
            checkpoint: s.checkpoint,
        })
        .collect();
    // Why a slot has no usable member, where a member was found and set aside.
    let mut why: Vec<Option<String>> = vec![None; n];
    // The member list as given, for the commands a note suggests.
    let given = found
        .iter()
        .map(|f| f.member.path.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    // Members given that once held a role another member holds now.
    let mut replaced: Vec<String> = Vec::new();
    for f in found {
        let path = f.member.path.display().to_string();
        if f.sb.is_spare() {
            spares.push(Arc::new(f.member));
            continue;
        }
        let role = f.sb.array.role as usize;
        if role >= n {
            return Err(ArrayError::usage(format!(
                "member {path} claims role {role} of a {n}-member array"
            )));
        }
        let slot = &newest.slots[role];
        if slot.dev_uuid != f.sb.dev_uuid {
            replaced.push(path.clone());
            if opts.verbose && slot.state == SlotState::Missing {
                // Left out while the array ran: nobody took its place, but its blocks are
                // stale. The way back is the spare's: out, in again, rebuilt.
                let others = given
                    .split(',')
                    .filter(|p| *p != path)
                    .collect::<Vec<_>>()
                    .join(",");
                ewriteln!(
                    "raidlab: member {path} is stale: the array ran without it and slot {role} is missing since; not using it (to put it back: raidlab array remove {given} {path}, raidlab array add {others} {path}, raidlab array rebuild {given})"
                );
            } else if opts.verbose {
                ewriteln!("raidlab: member {path} no longer holds role {role} (it was replaced); not using it");
            }
            continue;
        }
        if members[role].is_some() {
            return Err(ArrayError::usage(format!(
                "two members claim role {role} (the second is {path})"
            )));
        }
        if f.sb.events < newest.events
            && matches!(slot.state, SlotState::Active | SlotState::Rebuilding)
        {
            // md's non-fresh member: it missed updates the others have.
            if opts.verbose {
                ewriteln!(
                    "raidlab: member {path} is out of date (events {} < {}); kicking it from the array",
                    f.sb.events, newest.events
                );
            }
            slots[role].state = SlotState::Faulty;
            why[role] = Some(format!(
                "{path} out of date (events {} < {})",
                f.sb.events, newest.events
            ));
            continue;
        }
        dev_uuids[role] = f.sb.dev_uuid;
        members[role] = Some(Arc::new(f.member));
    }
    let mut labels = Vec::with_capacity(n);
    let mut lost = Vec::new();
    // Slots in service that no member given holds (not kicked as out of date: left out).
    let mut left_out = Vec::new();
    for i in 0..n {
        match &members[i] {
            Some(m) => labels.push(m.path.display().to_string()),
            None => {
                if why[i].is_none()
                    && matches!(
                        newest.slots[i].state,
                        SlotState::Active | SlotState::Rebuilding
                    )
                {
                    left_out.push(i);
                }
                labels.push(format!("slot {i} (missing)"));
                if matches!(slots[i].state, SlotState::Active | SlotState::Rebuilding) {
                    slots[i].state = SlotState::Missing;
                }
            }
        }
        if matches!(slots[i].state, SlotState::Faulty | SlotState::Missing) {
            lost.push(i);
        }
    }
    let rebuilding = slots
        .iter()
        .filter(|s| s.state == SlotState::Rebuilding)
        .count();
    let devs: Vec<Option<Arc<dyn Dev>>> = members
        .iter()
        .map(|m| m.clone().map(|m| m as Arc<dyn Dev>))
        .collect();
    // Bitmap bits as the members left them (the newest readable copy wins: they are identical).
    let mut bits = vec![0u8; newest.bitmap_bytes as usize];
    if let Some(m) = members.iter().flatten().next() {
        m.read_raw(&mut bits, BITMAP_OFFSET)
            .map_err(|e| ArrayError::io("cannot read bitmap of", &m.path, &e))?;
    }
    for (i, m) in members.iter().enumerate() {
        if let Some(m) = m {
            if matches!(slots[i].state, SlotState::Active) && newest.array.dirty {
                let mut other = vec![0u8; bits.len()];
                if m.read_raw(&mut other, BITMAP_OFFSET).is_ok() {
                    bits.iter_mut().zip(&other).for_each(|(a, b)| *a |= *b);
                }
            }
        }
    }
    let bitmap = Bitmap::new(
        newest.bitmap_region,
        newest.bitmap_bytes,
        bits,
        Instant::now(),
    );
    let dirty = newest.array.dirty;
    let dirty_ranges: DirtyRanges = bitmap
        .set_regions()
        .into_iter()
        .map(|r| (r * bitmap.region, bitmap.region))
        .collect();
    let leaf = Leaf {
        members,
        spares,
        sb: std::sync::Mutex::new(newest.clone()),
        dev_uuids,
        bitmap,
    };
    let arr = Arc::new(Array::new(
        geo,
        uuid,
        labels.clone(),
        Backing::Leaf(leaf),
        devs,
        slots,
        dirty,
        depth,
    ));
    // Enough members?
    let survives = match arr.geo.level {
        Level::Raid1 | Level::Raid10 => arr.mirror_survives(),
        _ => (lost.len() + rebuilding) as u32 <= arr.geo.redundancy(),
    };
    // Members in service left out of the list, without which the array cannot start but
    // with which it could: the list is wrong (a typo, a member forgotten), not the array.
    // Asked as the refusal of a member left out below is (`--force` there starts a
    // redundant enclosing array without this child, as it would without a dead one).
    let others: Vec<u32> = lost
        .iter()
        .filter(|i| !left_out.contains(i))
        .map(|&i| i as u32)
        .collect();
    let if_listed = match arr.geo.level {
        Level::Raid1 | Level::Raid10 => arr.geo.survives(&others),
        _ => (others.len() + rebuilding) as u32 <= arr.geo.redundancy(),
    };
    let name = |i: usize| match (&why[i], &arr.backing) {
        (Some(w), _) => w.clone(),
        (None, Backing::Leaf(l)) if l.members[i].is_none() => {
            format!("slot {i} {}", arr.slots()[i].state.name())
        }
        _ => format!("{} {}", labels[i], arr.slots()[i].state.name()),
    };
    if !survives && if_listed && opts.all_members && !opts.force && !left_out.is_empty() {
        let out: Vec<String> = others.iter().map(|&i| name(i as usize)).collect();
        return Err(left_out_fatal(
            desc,
            &uuid,
            (&left_out, &out),
            &replaced,
            arr.geo.redundancy(),
        ));
    }
    if !survives {
        let names: Vec<String> = lost.iter().map(|&i| name(i)).collect();
        return Err(ArrayError::failed(format!(
            "cannot start {} array {}: {} of {} members are missing or faulty ({}); {} survives {}",
            desc.level,
            uuid_string(&uuid),
            lost.len(),
            n,
            names.join(", "),
            desc.level,
            arr.geo.redundancy()
        )));
    }
    let degraded = !lost.is_empty() || rebuilding > 0;
    if dirty && degraded && arr.geo.redundancy() > 0 && !opts.force {
        return Err(write_hole_error(&desc.level, &uuid));
    }
    // (After the write hole: a dirty array's risk is the graver news, and --force answers both.)
    if opts.all_members && !opts.force && !left_out.is_empty() {
        return Err(left_out_error(desc, &uuid, &left_out, &replaced));
    }
    let settled = !(dirty && degraded && arr.geo.redundancy() > 0);
    if dirty && opts.resync {
        if degraded {
            // Always said, not only when verbose: it is a risk to data, not progress.
            ewriteln!("{}", write_hole_warning(&desc.level));
        } else {
            let bytes = arr.resync_dirty()?;
            if opts.verbose {
                ewriteln!(
                    "raidlab: {} array was not stopped cleanly; resynced {} bytes of dirty regions",
                    desc.level,
                    bytes
                );
            }
        }
    }
    Ok((arr, dirty_ranges, settled))
}
