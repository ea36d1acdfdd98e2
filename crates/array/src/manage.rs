//! mdadm's management verbs on arrays that are not running: status, fail, remove, add,
//! rebuild, scrub. Each works from the members' superblocks, and writes changes to every
//! in-sync member with a bumped event count, as md does: the members given, and those of
//! the changed leaf array found beside them though not given (`fail`, `remove` and the
//! assignment of spares; see `find_beside`), so a member left out of the command is not
//! out of date at the next assembly.

use crate::array::{Array, Backing};
use crate::assemble::{assemble, desc_at, geometry_of, read_members, AssembleOptions, Found};
use crate::control::{self, MemberLocks, Request};
use crate::create::{holds_data, holds_data_rejoining};
use crate::error::ArrayError;
use crate::member::Member;
use crate::superblock::ArrayDesc;
use crate::superblock::{
    new_uuid, uuid_string, SlotState, Superblock, BITMAP_OFFSET, MAX_SPARES, ROLE_SPARE,
};
use raidlab_engine::{ewrite, ewriteln};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, Serialize)]
pub struct MemberStatus {
    pub path: String,
    /// mdadm --detail's "Number": a member holding a slot has its slot's, spares follow the
    /// slots in the order they were added (the first spare of a 4-member array is 4). None
    /// for a member that no longer holds the slot it names (replaced).
    pub number: Option<u32>,
    /// Slot index, or None for a spare.
    pub role: Option<u32>,
    /// active, faulty, rebuilding, spare, out-of-date, replaced
    pub state: String,
    pub events: u64,
    pub data_offset: u64,
    pub data_bytes: u64,
    /// How the member is read and written when the array runs: "mapped (in memory)",
    /// "O_DIRECT (512-byte blocks)", "buffered (why)".
    pub io: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArrayStatus {
    pub uuid: String,
    pub level: String,
    pub layout: String,
    pub chunk_bytes: u64,
    pub members: u32,
    pub capacity_bytes: u64,
    /// clean or dirty
    pub state: String,
    pub degraded: bool,
    /// Slots not active: (slot, state)
    pub not_active: Vec<(u32, String)>,
    /// Rebuild progress 0..=1 where a slot is rebuilding.
    pub rebuild_progress: Option<f64>,
    /// Initial sync progress 0..=1 where it has not finished (interrupted at creation): of
    /// this array's own part, its leaves' and its own and lower arrays' passes (at the top of
    /// a nested array, the whole tree's); `None` once the whole tree is synced. Below 1 while
    /// any of that part is left. 1 in an array of a tree still syncing: its part is done,
    /// and `sync_waiting_for` says what the sync still waits for.
    pub sync_progress: Option<f64>,
    /// Where this array's own part of the initial sync is done but the tree's is not (its
    /// superblocks keep the mark until the whole tree is synced): what is left, in words
    /// ("the pass of the raid1 array above it (24.6% done; the whole tree 81.2%)").
    pub sync_waiting_for: Option<String>,
    /// Set when the array has lost more than it survives and cannot start: why, in words
    /// ("2 of 4 members out of service (…); raid5 tolerates 1").
    pub cannot_start: Option<String>,
    pub events: u64,
    /// This array's slot (role) in the array enclosing it; `None` at the top. Children
    /// out of service are not in their parent's `children`, so a child's place there is
    /// not its slot.
    pub role: Option<u32>,
    pub member_status: Vec<MemberStatus>,
    /// Spares the members' superblocks record whose paths were not among those given (a
    /// device's path is not recorded, only its uuid): `status` with them listed shows them.
    pub spares_not_given: Vec<SpareNotGiven>,
    pub children: Vec<ArrayStatus>,
}

/// A spare the array records but that was not among the paths given.
#[derive(Debug, Clone, Serialize)]
pub struct SpareNotGiven {
    /// Its number (see [`MemberStatus::number`]).
    pub number: u32,
    pub device_uuid: String,
}

/// Status of the array the paths form, from superblocks alone (nothing is written).
pub fn status(paths: &[PathBuf]) -> Result<ArrayStatus, ArrayError> {
    let found = read_members(paths)?;
    let depth = found[0].sb.parents.len();
    let top = desc_at(&found[0].sb, 0).uuid;
    if let Some(f) = found
        .iter()
        .find(|f| desc_at(&f.sb, 0).uuid != top || f.sb.parents.len() != depth)
    {
        return Err(ArrayError::usage(format!(
            "member {} belongs to array {}, not {} (foreign member)",
            f.member.path.display(),
            uuid_string(&desc_at(&f.sb, 0).uuid),
            uuid_string(&top)
        )));
    }
    let refs: Vec<&Found> = found.iter().collect();
    status_at(&refs, 0, depth, &refs)
}

/// The status of the array at `level` of the tree whose leaves' members are `all`, from
/// `found`, the members below it.
fn status_at(
    found: &[&Found],
    level: usize,
    depth: usize,
    all: &[&Found],
) -> Result<ArrayStatus, ArrayError> {
    let newest = found.iter().max_by_key(|f| f.sb.recency()).unwrap();
    let desc = desc_at(&newest.sb, level).clone();
    let geo = geometry_of(&desc)?;
    if level < depth {
        let mut children = Vec::new();
        let mut not_active = Vec::new();
        let mut progress: Option<f64> = None;
        for role in 0..desc.members {
            let group: Vec<&Found> = found
                .iter()
                .copied()
                .filter(|f| desc_at(&f.sb, level).role == role)
                .collect();
            if group.is_empty() {
                not_active.push((role, "missing".to_string()));
                continue;
            }
            let mut c = status_at(&group, level + 1, depth, all)?;
            c.role = Some(role);
            // Rebuilt whole from this array's redundancy: how far, in this array's bytes.
            if let Some(cp) = group
                .iter()
                .filter_map(|f| desc_at(&f.sb, level + 1).rebuild)
                .min()
            {
                not_active.push((role, "rebuilding".to_string()));
                let p = cp as f64 / geo.capacity().max(1) as f64;
                progress = Some(progress.map_or(p, |q| q.min(p)));
            } else if c.cannot_start.is_some() {
                not_active.push((role, "failed".to_string()));
            } else if c.degraded {
                not_active.push((role, "degraded".to_string()));
            }
            children.push(c);
        }
        let dirty = found.iter().any(|f| desc_at(&f.sb, level).dirty);
        let (sync_progress, sync_waiting_for) = sync_status(found, level, all);
        let out: Vec<u32> = not_active
            .iter()
            .filter(|(_, s)| s != "degraded")
            .map(|(r, _)| *r)
            .collect();
        let cannot_start = cannot_start(&geo, &desc.level, &out, &not_active, "children");
        return Ok(ArrayStatus {
            uuid: uuid_string(&desc.uuid),
            level: desc.level.clone(),
            layout: desc.layout.clone(),
            chunk_bytes: desc.chunk_bytes,
            members: desc.members,
            capacity_bytes: geo.capacity(),
            state: if dirty { "dirty" } else { "clean" }.into(),
            degraded: not_active
                .iter()
                .any(|(_, s)| s == "missing" || s == "rebuilding" || s == "failed"),
            not_active,
            rebuild_progress: progress,
            sync_progress,
            sync_waiting_for,
            cannot_start,
            events: newest.sb.events,
            role: None,
            member_status: Vec::new(),
            spares_not_given: Vec::new(),
            children,
        });
    }
    let sb = &newest.sb;
    let mut members = Vec::new();
    let mut present = vec![false; desc.members as usize];
    for f in found {
        if f.sb.array.uuid != sb.array.uuid {
            return Err(ArrayError::usage(format!(
                "member {} belongs to array {}, not to array {} with the members beside it (foreign member)",
                f.member.path.display(),
                uuid_string(&f.sb.array.uuid),
                uuid_string(&sb.array.uuid)
            )));
        }
        let (role, state) = if f.sb.is_spare() {
            // Numbered below, once every spare given is known.
            (None, "spare".to_string())
        } else {
            let r = f.sb.array.role;
            // Superblocks are checked when read and members of one array agree on its
            // member count, so every role has its slot.
            let Some(slot) = sb.slots.get(r as usize) else {
                return Err(ArrayError::usage(format!(
                    "member {} claims role {r} of a {}-member array",
                    f.member.path.display(),
                    sb.slots.len()
                )));
            };
            let st = if slot.dev_uuid != f.sb.dev_uuid {
                "replaced".to_string()
            } else if f.sb.events < sb.events
                && matches!(slot.state, SlotState::Active | SlotState::Rebuilding)
            {
                "out-of-date".to_string()
            } else {
                present[r as usize] = true;
                slot.state.name().to_string()
            };
            (Some(r), st)
        };
        let number = match state.as_str() {
            "spare" | "replaced" => None,
            _ => role,
        };
        members.push(MemberStatus {
            path: f.member.path.display().to_string(),
            number,
            role,
            state,
            events: f.sb.events,
            data_offset: f.sb.data_offset,
            data_bytes: f.sb.data_size,
            io: f.member.io_mode().to_string(),
        });
    }
    // Spares after the slots, in the order they were added as the superblocks record it;
    // spares the record does not know (added by a raidlab that kept none) after those, in
    // the order given. Recorded spares not given are said to be so.
    let given_spares: Vec<(usize, [u8; 16])> = found
        .iter()
        .enumerate()
        .filter(|(_, f)| f.sb.is_spare())
        .map(|(i, f)| (i, f.sb.dev_uuid))
        .collect();
    for (k, i) in spare_order(&sb.spares, &given_spares) {
        members[i].number = Some(desc.members + k as u32);
    }
    let mut spares_not_given = Vec::new();
    for (k, u) in sb.spares.iter().enumerate() {
        if !given_spares.iter().any(|(_, g)| g == u) {
            spares_not_given.push(SpareNotGiven {
                number: desc.members + k as u32,
                device_uuid: uuid_string(u),
            });
        }
    }
    // By number: the slots' holders, then the spares; replaced members last.
    members.sort_by_key(|m| (m.number.is_none(), m.number, m.role));
    let mut not_active = Vec::new();
    let mut progress = None;
    for (i, s) in sb.slots.iter().enumerate() {
        let st = if !present[i] && s.state != SlotState::Faulty {
            "missing"
        } else {
            s.state.name()
        };
        if st != "active" {
            not_active.push((i as u32, st.to_string()));
        }
        if s.state == SlotState::Rebuilding {
            progress = Some(s.checkpoint as f64 / geo.capacity().max(1) as f64);
        }
    }
    let out: Vec<u32> = not_active.iter().map(|(r, _)| *r).collect();
    let cannot_start = cannot_start(&geo, &desc.level, &out, &not_active, "members");
    let (sync_progress, sync_waiting_for) = sync_status(found, level, all);
    Ok(ArrayStatus {
        uuid: uuid_string(&desc.uuid),
        level: desc.level.clone(),
        layout: desc.layout.clone(),
        chunk_bytes: desc.chunk_bytes,
        members: desc.members,
        capacity_bytes: geo.capacity(),
        state: if desc.dirty { "dirty" } else { "clean" }.into(),
        degraded: !not_active.is_empty(),
        not_active,
        rebuild_progress: progress,
        sync_progress,
        sync_waiting_for,
        cannot_start,
        events: sb.events,
        role: None,
        member_status: members,
        spares_not_given,
        children: Vec::new(),
    })
}

/// The spares among `given` ((index, device uuid)) in the order they take numbers and slots,
/// as (place, index): those `recorded` (the members' list, in the order added) at their
/// place in it, then the ones it does not know, after all the recorded ones (given or not),
/// in the order given. A spare's number is the array's member count plus its place.
fn spare_order(recorded: &[[u8; 16]], given: &[(usize, [u8; 16])]) -> Vec<(usize, usize)> {
    let mut unknown = recorded.len();
    let mut order: Vec<(usize, usize)> = given
        .iter()
        .map(|(i, u)| match recorded.iter().position(|r| r == u) {
            Some(at) => (at, *i),
            None => {
                unknown += 1;
                (unknown - 1, *i)
            }
        })
        .collect();
    order.sort_unstable();
    order
}

/// The newest superblock of each leaf array among `found`.
fn newest_by_leaf<'a>(found: &[&'a Found]) -> HashMap<[u8; 16], &'a Superblock> {
    let mut newest: HashMap<[u8; 16], &Superblock> = HashMap::new();
    for f in found {
        let e = newest.entry(f.sb.array.uuid).or_insert(&f.sb);
        if f.sb.recency() > e.recency() {
            *e = &f.sb;
        }
    }
    newest
}

/// One enclosing array's pass of the initial sync: its description, its level in the tree,
/// where the pass stands and its end (the array's capacity), in its bytes.
type Pass<'a> = (&'a ArrayDesc, usize, u64, u64);

/// The passes of the enclosing arrays with redundancy at `levels` of the tree above the
/// leaves `newest` (each leaf array's newest superblock): each where the lowest checkpoint
/// its leaves still syncing record says (0 where one records none), at its end when none
/// below it is syncing (a leaf no longer syncing has its marks cleared) — as
/// [`Array::sync_pending`] counts.
fn passes<'a>(
    newest: &HashMap<[u8; 16], &'a Superblock>,
    levels: std::ops::Range<usize>,
) -> Vec<Pass<'a>> {
    let mut at: HashMap<[u8; 16], (&ArrayDesc, usize, u64)> = HashMap::new();
    for sb in newest.values() {
        let np = sb.parents.len();
        for (j, d) in sb.parents.iter().enumerate() {
            let level = np - 1 - j;
            if !levels.contains(&level) {
                continue;
            }
            let cp = match sb.initial_sync {
                Some(_) => d.initial_sync.unwrap_or(0),
                None => u64::MAX,
            };
            let e = at.entry(d.uuid).or_insert((d, level, cp));
            e.2 = e.2.min(cp);
        }
    }
    let mut out: Vec<Pass> = at
        .into_values()
        .filter_map(|(d, level, cp)| {
            let geo = geometry_of(d).ok()?;
            let cap = geo.capacity();
            (geo.redundancy() > 0).then_some((d, level, cp.min(cap), cap))
        })
        .collect();
    out.sort_by_key(|p| (p.1, p.0.uuid));
    out
}

/// The initial sync's (bytes done, bytes in all) of the array at `level` of the tree, from
/// `found` (the leaves below it), if it has not finished: each leaf array counts as its newest
/// superblock says, by its members' data-area bytes, and each enclosing array with redundancy
/// at `level` or below by its pass, by the bytes of its children the pass reads — as
/// [`Array::sync_pending`] counts.
fn sync_done(found: &[&Found], level: usize) -> Option<(u64, u64)> {
    let newest = newest_by_leaf(found);
    if newest.values().all(|sb| sb.initial_sync.is_none()) {
        return None;
    }
    let mut parts: Vec<crate::array::Part> = newest
        .values()
        .map(|sb| {
            let n = sb.data_size;
            (sb.initial_sync, n, n * sb.array.members as u64)
        })
        .collect();
    for (d, _, cp, cap) in passes(&newest, level..usize::MAX) {
        parts.push((Some(cp), cap, d.member_bytes * d.members as u64));
    }
    Some(crate::array::sync_bytes(&parts))
}

/// `done` of `total` as a percentage with one decimal, rounded down: "100.0%" only when all
/// is done (a sync at 99.96% is not shown as finished).
pub(crate) fn percent_done(done: u64, total: u64) -> String {
    let tenths = (done.min(total) as u128 * 1000 / total.max(1) as u128) as u64;
    format!("{}.{}%", tenths / 10, tenths % 10)
}

/// The initial sync's progress of the array at `level` (from `found`, the leaves below it)
/// and, where its own part is done but the whole tree's (`all`) is not, what it waits for
/// (see [`ArrayStatus::sync_waiting_for`]).
fn sync_status(found: &[&Found], level: usize, all: &[&Found]) -> (Option<f64>, Option<String>) {
    let Some((done, total)) = sync_done(found, level) else {
        return (None, None);
    };
    if done < total {
        return (Some(done as f64 / total.max(1) as f64), None);
    }
    // Done here, and not recorded as synced: something else of the tree is left, or only the
    // record of the end.
    let (tree_done, tree_total) = sync_done(all, 0).unwrap_or((done, total));
    let tree = percent_done(tree_done, tree_total);
    // The innermost enclosing array above this one whose pass is not done.
    let above = passes(&newest_by_leaf(all), 0..level)
        .into_iter()
        .filter(|(d, j, cp, cap)| cp < cap && d.uuid == desc_at(&found[0].sb, *j).uuid)
        .max_by_key(|p| p.1);
    let waiting = match above {
        Some((d, _, cp, cap)) => format!(
            "the pass of the {} array above it ({} done; the whole tree {tree})",
            d.level,
            percent_done(cp, cap)
        ),
        None if tree_done < tree_total => format!("the rest of the tree ({tree} done in all)"),
        None => "the end of the sync to be recorded on every member (every part is done; raidlab array rebuild records it)".into(),
    };
    (Some(1.0), Some(waiting))
}

/// Why an array with the slots `out` out of service cannot start, or None if it can.
fn cannot_start(
    geo: &raidlab_geometry::Geometry,
    level: &str,
    out: &[u32],
    not_active: &[(u32, String)],
    what: &str,
) -> Option<String> {
    if geo.survives(out) {
        return None;
    }
    let list: Vec<String> = not_active
        .iter()
        .filter(|(r, _)| out.contains(r))
        .map(|(i, st)| format!("slot {i} {st}"))
        .collect();
    let tolerates = if geo.level == raidlab_geometry::Level::Raid10 {
        "some chunks have no copy left".to_string()
    } else {
        format!("{level} tolerates {}", geo.redundancy())
    };
    Some(format!(
        "{} of {} {what} out of service ({}); {tolerates}",
        out.len(),
        geo.members,
        list.join(", ")
    ))
}

/// Human-readable status, mdadm --detail style.
pub fn status_text(s: &ArrayStatus, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    let layout = if s.layout.is_empty() {
        String::new()
    } else {
        format!(" {}", s.layout)
    };
    let chunk = if s.chunk_bytes > 0 {
        format!(", chunk {} KiB", s.chunk_bytes / 1024)
    } else {
        String::new()
    };
    out += &format!(
        "{pad}{} {}{layout}{chunk}, {} members, {} bytes ({})\n",
        s.uuid,
        s.level,
        s.members,
        s.capacity_bytes,
        binary_size(s.capacity_bytes)
    );
    let mut state = s.state.clone();
    if let Some(why) = &s.cannot_start {
        state = format!("failed, cannot start: {why}; {state}");
    } else if s.degraded {
        let list: Vec<String> = s
            .not_active
            .iter()
            .map(|(i, st)| format!("slot {i} {st}"))
            .collect();
        state += &format!(", degraded ({})", list.join(", "));
    }
    if s.sync_progress.is_some() {
        state += ", not synced";
    }
    out += &format!("{pad}state: {state}; events {}\n", s.events);
    // Fractions below 1 are shown rounded down: "100.0%" is only ever all of it.
    let percent = |p: f64| {
        // A hair up: a fraction like 0.29 is stored a little below itself.
        let tenths = (p * 1000.0 + 1e-6).floor();
        let tenths = if p < 1.0 { tenths.min(999.0) } else { 1000.0 };
        format!("{:.1}%", tenths / 10.0)
    };
    if let Some(p) = s.rebuild_progress {
        out += &format!("{pad}rebuild: {} done\n", percent(p));
    }
    match (s.sync_progress, &s.sync_waiting_for) {
        (Some(_), Some(w)) => {
            out += &format!("{pad}initial sync: this array's part is done; waiting for {w}\n")
        }
        (Some(p), None) if indent == 0 => {
            out += &format!(
                "{pad}initial sync: {} done (interrupted; reads of unsynced regions of member files may read holes, which reach no device; raidlab array rebuild finishes it)\n",
                percent(p)
            )
        }
        (Some(p), None) => out += &format!("{pad}initial sync: {} done\n", percent(p)),
        (None, _) => {}
    }
    if !s.member_status.is_empty() || !s.spares_not_given.is_empty() {
        out += &format!(
            "{pad}{:>6}  {:>5}  {:<11} {:>7}  {:>12}  member (I/O)\n",
            "number", "role", "state", "events", "data-offset"
        );
        let dash = || "-".to_string();
        // (number, line): members hold their order already; spares not given go in by number.
        let mut rows: Vec<(Option<u32>, String)> = Vec::new();
        for m in &s.member_status {
            let number = m.number.map(|r| r.to_string()).unwrap_or_else(dash);
            let role = m.role.map(|r| r.to_string()).unwrap_or_else(dash);
            rows.push((
                m.number,
                format!(
                    "{pad}{number:>6}  {role:>5}  {:<11} {:>7}  {:>12}  {} ({})\n",
                    m.state, m.events, m.data_offset, m.path, m.io
                ),
            ));
        }
        for g in &s.spares_not_given {
            rows.push((
                Some(g.number),
                format!(
                    "{pad}{:>6}  {:>5}  {:<11} {:>7}  {:>12}  path not known: device {} is a spare of this array, not among the members given\n",
                    g.number, "-", "spare", "-", "-", g.device_uuid
                ),
            ));
        }
        rows.sort_by_key(|(n, _)| (n.is_none(), *n));
        for (_, line) in rows {
            out += &line;
        }
    }
    for c in &s.children {
        // Named by its slot, as the state line and `out_of_service` name it: a child out of
        // service is not listed, so the ones after it are not at their slot's place.
        let role = c.role.map_or_else(|| "-".to_string(), |r| r.to_string());
        out += &format!("{pad}child {role}:\n");
        out += &status_text(c, indent + 2);
    }
    out
}

/// The members of `target`'s leaf array among `found`, and the newest superblock of that array.
fn leaf_group<'a>(
    found: &'a [Found],
    target: &Path,
) -> Result<(Vec<&'a Found>, Superblock, usize), ArrayError> {
    let t = found
        .iter()
        .position(|f| same_path(&f.member.path, target))
        .ok_or_else(|| {
            ArrayError::usage(format!(
                "{} is not among the array's members given",
                target.display()
            ))
        })?;
    let (group, newest) = group_of(found, found[t].sb.array.uuid);
    let idx = group
        .iter()
        .position(|f| same_path(&f.member.path, target))
        .unwrap();
    Ok((group, newest, idx))
}

/// The members found of the leaf array `uuid` (at least one), and the newest record among
/// their superblocks.
fn group_of(found: &[Found], uuid: [u8; 16]) -> (Vec<&Found>, Superblock) {
    let group: Vec<&Found> = found.iter().filter(|f| f.sb.array.uuid == uuid).collect();
    let newest = newest_record(&group);
    (group, newest)
}

/// The newest record among the superblocks of `group` (members of one leaf array, at least
/// one).
fn newest_record(group: &[&Found]) -> Superblock {
    group
        .iter()
        .max_by_key(|f| f.sb.recency())
        .expect("a member of the array")
        .sb
        .clone()
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b || (a.canonicalize().ok().is_some() && a.canonicalize().ok() == b.canonicalize().ok())
}

/// Members of leaf arrays of the tree that were not given but were found beside the members
/// given (see [`find_beside`]), locked against other writers while they are written.
struct Beside {
    found: Vec<Found>,
    /// Devices the records know that were found but are not written, with why, in words.
    passed_over: Vec<([u8; 16], String)>,
    /// Files there whose superblock copies are both damaged, with why: which array's member
    /// each was cannot be read, so none is written, but a member not found may be one.
    damaged: Vec<(PathBuf, String)>,
    /// Where the members not given were looked for.
    dirs: Vec<PathBuf>,
    _locks: MemberLocks,
}

/// Whether the record `sb` knows the device `dev` as one of its array's: a slot's holder or
/// a recorded spare.
fn knows(sb: &Superblock, dev: &[u8; 16]) -> bool {
    *dev != [0; 16] && (sb.slots.iter().any(|s| s.dev_uuid == *dev) || sb.spares.contains(dev))
}

/// Look for the members of the leaf arrays `leaves` that were not among `given`, so that a
/// change of their arrays' state is recorded on them too, as md records it on every member
/// of the running array: a member left out of the command would otherwise keep the old
/// record and be kicked as out of date at the next assembly.
///
/// A superblock records its array's members by device uuid, not by path, so they are looked
/// for where the given members are: every regular file and block device in the given
/// members' directories (as mdadm looks for members among the devices it is told of) whose
/// superblock names it a member of one of `leaves` that the newest record of the members
/// given knows (a slot's holder or a recorded spare). Nothing else is taken: not another
/// array's member, not a device the record no longer knows, not a given member under another
/// name or a copy of one, and not a device found in two files (a copy: which is the member
/// cannot be told, so neither is written; [`warn_unreached`] says so). One found holding a
/// newer record than the members given is refused in one line: the change would be made on
/// a record older than the array's.
fn find_beside(given: &[Found], leaves: &[[u8; 16]], doing: &str) -> Result<Beside, ArrayError> {
    let top = desc_at(&given[0].sb, 0).uuid;
    let depth = given[0].sb.parents.len();
    let given_paths: Vec<PathBuf> = given.iter().map(|f| f.member.path.clone()).collect();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for p in &given_paths {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let canon = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        if !seen.contains(&canon) {
            seen.push(canon);
            dirs.push(dir);
        }
    }
    let record = |u: [u8; 16]| {
        given
            .iter()
            .filter(|f| f.sb.array.uuid == u)
            .max_by_key(|f| f.sb.recency())
            .map(|f| &f.sb)
    };
    let mut candidates: Vec<(PathBuf, [u8; 16])> = Vec::new();
    let mut damaged: Vec<(PathBuf, String)> = Vec::new();
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        // A device's own name before a link to it: the one kept of a file found under two
        // names (below) is then the one a message names.
        names.sort_by_key(|p| (p.is_symlink(), p.clone()));
        for p in names {
            let sb = match crate::member::peek_superblock_checked(&p) {
                Ok(Some(sb)) => sb,
                Ok(None) => continue,
                Err(why) => {
                    if crate::member::overlaps_any(&p, &given_paths).is_none() {
                        damaged.push((p, why));
                    }
                    continue;
                }
            };
            if !leaves.contains(&sb.array.uuid)
                || sb.parents.len() != depth
                || desc_at(&sb, 0).uuid != top
                || !record(sb.array.uuid).is_some_and(|r| knows(r, &sb.dev_uuid))
                || given.iter().any(|f| f.sb.dev_uuid == sb.dev_uuid)
                || crate::member::overlaps_any(&p, &given_paths).is_some()
            {
                continue;
            }
            // The same file found under another name already (a link to it).
            let kept: Vec<PathBuf> = candidates.iter().map(|(q, _)| q.clone()).collect();
            if crate::member::overlaps_any(&p, &kept).is_none() {
                candidates.push((p, sb.dev_uuid));
            }
        }
    }
    let mut passed_over = Vec::new();
    let mut take = Vec::new();
    for (p, dev) in &candidates {
        let same: Vec<String> = candidates
            .iter()
            .filter(|(_, d)| d == dev)
            .map(|(q, _)| q.display().to_string())
            .collect();
        if same.len() == 1 {
            take.push(p.clone());
        } else if same[0] == p.display().to_string() {
            passed_over.push((
                *dev,
                format!(
                    "found in both {}: copies, which of them is the member cannot be told, so neither is written",
                    same.join(" and ")
                ),
            ));
        }
    }
    let locks = MemberLocks::acquire(&take, doing)?;
    let mut found = Vec::new();
    for p in take {
        // Read again now that it is locked: another process may have written it since.
        let read = Member::open(&p).and_then(|m| Ok((m.read_superblock()?, m)));
        let (sb, mut member) = match read {
            Ok((Some(sb), m)) => (sb, m),
            Ok((None, _)) => continue,
            Err(e) => {
                if let Some(sb) = crate::member::peek_superblock(&p) {
                    passed_over.push((sb.dev_uuid, format!("found as {}, {e}", p.display())));
                }
                continue;
            }
        };
        let Some(rec) = record(sb.array.uuid) else {
            continue;
        };
        // Checked again as read now (it may have been rewritten since it was looked at).
        if !leaves.contains(&sb.array.uuid)
            || !knows(rec, &sb.dev_uuid)
            || desc_at(&sb, 0).uuid != top
            || sb.parents.len() != depth
            || given
                .iter()
                .chain(&found)
                .any(|f| f.sb.dev_uuid == sb.dev_uuid)
        {
            continue;
        }
        if let Some(e) = given
            .iter()
            .find_map(|f| crate::assemble::agree(f, &p, &sb).err())
        {
            passed_over.push((sb.dev_uuid, format!("found as {}, but {e}", p.display())));
            continue;
        }
        if sb.events > rec.events {
            return Err(ArrayError::usage(format!(
                "cannot {doing}: {}, a member of the {} array {} not given, holds a newer record of it than the members given (events {}, theirs {}): give it too",
                p.display(),
                sb.array.level,
                uuid_string(&sb.array.uuid),
                sb.events,
                rec.events
            )));
        }
        member.data_offset = sb.data_offset;
        found.push(Found { member, sb });
    }
    Ok(Beside {
        found,
        passed_over,
        damaged,
        dirs,
        _locks: locks,
    })
}

/// `group` (members given of one leaf array) with that array's members found beside them
/// after it, and the newest record among them all.
fn with_beside<'a>(mut group: Vec<&'a Found>, beside: &'a Beside) -> (Vec<&'a Found>, Superblock) {
    let uuid = group[0].sb.array.uuid;
    group.extend(beside.found.iter().filter(|f| f.sb.array.uuid == uuid));
    let newest = newest_record(&group);
    (group, newest)
}

/// After the record `sb` of a leaf array was written to `group` (the members given and found
/// beside them): one line naming each member the record counts on, a slot's holder in service
/// or a spare, that is not among them, and why (not found, or found but not written), since
/// that one keeps the old record.
fn warn_unreached(sb: &Superblock, group: &[&Found], beside: &Beside, change: Change) {
    let reached = |u: &[u8; 16]| group.iter().any(|f| f.sb.dev_uuid == *u);
    let dirs: Vec<String> = beside
        .dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let item = |what: String, dev: &[u8; 16]| {
        let why = match beside.passed_over.iter().find(|(d, _)| d == dev) {
            Some((_, why)) => why.clone(),
            None => format!("not found in {}", dirs.join(", ")),
        };
        format!("{what} (device {}, {why})", uuid_string(dev))
    };
    let mut items = Vec::new();
    for (i, s) in sb.slots.iter().enumerate() {
        if matches!(s.state, SlotState::Active | SlotState::Rebuilding) && !reached(&s.dev_uuid) {
            items.push(item(format!("slot {i}"), &s.dev_uuid));
        }
    }
    for (k, u) in sb.spares.iter().enumerate() {
        if !reached(u) {
            items.push(item(format!("spare {}", sb.array.members as usize + k), u));
        }
    }
    if items.is_empty() {
        return;
    }
    let (what, then) = match change {
        Change::State => (
            "new state",
            "a member that misses it is out of date at the next assembly",
        ),
        Change::Spares => (
            "new record of the spares",
            "a member that misses it stays in date, but an assembly from such members alone does not know the change",
        ),
    };
    let damaged: Vec<String> = beside
        .damaged
        .iter()
        .map(|(p, why)| format!("{} ({why})", p.display()))
        .collect();
    let damaged = if damaged.is_empty() {
        String::new()
    } else {
        format!(
            "; found there with a damaged superblock, so not known as any of them: {}",
            damaged.join(", ")
        )
    };
    ewriteln!(
        "raidlab: warning: the {what} of the {} array {} is not recorded on {}; give the path of each to record it there too ({then}){damaged}",
        sb.array.level,
        uuid_string(&sb.array.uuid),
        items.join(", ")
    );
}

/// What a record written to a leaf array's members changed, for [`warn_unreached`]'s words.
#[derive(Clone, Copy)]
enum Change {
    /// Its state (events bumped): a member that misses it falls out of date.
    State,
    /// Only its spares (`spare_events` bumped): a member that misses it stays in date.
    Spares,
}

/// Write `sb` (events bumped) to every in-sync member of the group, each with its own identity.
fn write_group(group: &[&Found], sb: &mut Superblock, also: &[usize]) -> Result<(), ArrayError> {
    let before = sb.events;
    sb.events += 1;
    sb.seq = sb.events;
    for (i, f) in group.iter().enumerate() {
        let in_sync = f.sb.events == before || f.sb.is_spare();
        if !in_sync && !also.contains(&i) {
            continue;
        }
        write_as(f, sb, f.sb.array.role)?;
    }
    Ok(())
}

/// Write the array's record `sb` to member `f` as its own: its device uuid, and `role`.
fn write_as(f: &Found, sb: &Superblock, role: u32) -> Result<(), ArrayError> {
    let mut own = sb.clone();
    own.dev_uuid = f.sb.dev_uuid;
    own.array.role = role;
    f.member.write_superblock(&own)
}

/// Write a changed record of the spares (`sb.spares`) to every in-sync member of the group
/// and its spares, with `spare_events` bumped and `events` left as they are (see
/// [`Superblock::spare_events`]): members not given keep the older record, not fall out of
/// date.
fn write_spares(group: &[&Found], sb: &mut Superblock) -> Result<(), ArrayError> {
    sb.spare_events += 1;
    for f in group {
        if f.sb.events != sb.events && !f.sb.is_spare() {
            continue;
        }
        write_as(f, sb, f.sb.array.role)?;
    }
    Ok(())
}

/// `fail`: mark `target` faulty in the array's superblocks. When another process runs the
/// array (it holds the members' locks), the request goes to it through its control socket, so
/// the running array marks the member faulty and writes its own superblocks; with no control
/// socket to ask, `fail` refuses. Otherwise the new record goes to the members given and to
/// the leaf array's members found beside them (`find_beside`); one the record counts on
/// that is not reached is named in one line on stderr.
pub fn fail(array: &[PathBuf], target: &Path, force: bool) -> Result<String, ArrayError> {
    let _locks = match MemberLocks::try_acquire(array)? {
        Ok(l) => l,
        Err(busy) => {
            let found = read_members(array)?;
            let (group, _, idx) = leaf_group(&found, target)?;
            let uuid = uuid_string(&desc_at(&group[idx].sb, 0).uuid);
            let req = Request::Fail {
                member: control::canonical(target),
                force,
            };
            match control::request(&uuid, &req) {
                Some(reply) => return reply,
                // No serving process answers: wait briefly for a lock being let go.
                None => match MemberLocks::acquire_within(array, control::LOCK_GRACE)? {
                    Ok(l) => l,
                    Err(_) => return Err(control::busy_error(&busy, "fail a member")),
                },
            }
        }
    };
    let found = read_members(array)?;
    let (group, _, idx) = leaf_group(&found, target)?;
    let beside = find_beside(&found, &[group[idx].sb.array.uuid], "fail a member")?;
    let (group, mut sb) = with_beside(group, &beside);
    let me = &group[idx].sb;
    if me.is_spare() {
        return Err(ArrayError::usage(format!(
            "{} is a spare; remove it instead",
            target.display()
        )));
    }
    let role = me.array.role as usize;
    if sb.slots[role].state == SlotState::Faulty {
        return Err(ArrayError::usage(format!(
            "{} is already faulty",
            target.display()
        )));
    }
    let geo = geometry_of(&sb.array)?;
    let lost = sb
        .slots
        .iter()
        .filter(|s| s.state != SlotState::Active)
        .count() as u32
        + 1;
    if lost > geo.redundancy() && !force {
        return Err(too_many_out(
            target,
            &sb.array.level,
            lost,
            geo.redundancy(),
        ));
    }
    sb.slots[role].state = SlotState::Faulty;
    write_group(&group, &mut sb, &[idx])?;
    warn_unreached(&sb, &group, &beside, Change::State);
    Ok(format!("marked {} faulty (slot {role})", target.display()))
}

/// The refusal of `fail` when `member` would leave `lost` slots of a `level` array out of
/// service and it survives `survives`.
fn too_many_out(member: &Path, level: &str, lost: u32, survives: u32) -> ArrayError {
    let m = member.display();
    ArrayError::usage(if survives == 0 {
        format!("failing {m} would stop the {level} array: it has no redundancy, so it loses data with any member out of service (pass --force to fail it anyway)")
    } else {
        let what = if lost == 1 { "member" } else { "members" };
        format!("failing {m} would leave the {level} array with {lost} {what} out of service; it survives {survives} (pass --force to fail it anyway)")
    })
}

/// `remove`: take a faulty member (or a spare) out of the array and erase its superblock and
/// bitmap, leaving the record of what it left ([`Member::leave_array`]). The other members,
/// given or found beside them, record it (as [`fail`] does).
pub fn remove(array: &[PathBuf], target: &Path) -> Result<String, ArrayError> {
    let mut paths = array.to_vec();
    paths.push(target.to_path_buf());
    let _locks = MemberLocks::acquire(&paths, "remove a member")?;
    let found = read_members(array)?;
    let (group, _, idx) = leaf_group(&found, target)?;
    let beside = find_beside(&found, &[group[idx].sb.array.uuid], "remove a member")?;
    let (group, mut sb) = with_beside(group, &beside);
    let me = &group[idx];
    let others: Vec<&Found> = group
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != idx)
        .map(|(_, f)| *f)
        .collect();
    if me.sb.is_spare() {
        // The members forget it first: a crash between leaves a spare the record does not
        // know, which status still shows and remove still takes.
        if let Some(k) = sb.spares.iter().position(|u| *u == me.sb.dev_uuid) {
            sb.spares.remove(k);
            write_spares(&others, &mut sb)?;
            warn_unreached(&sb, &others, &beside, Change::Spares);
        }
        me.member.leave_array(&me.sb.removed(), me.sb.data_offset)?;
        return Ok(format!("removed spare {}", target.display()));
    }
    let role = me.sb.array.role as usize;
    if sb.slots[role].dev_uuid == me.sb.dev_uuid && sb.slots[role].state != SlotState::Faulty {
        return Err(ArrayError::usage(format!(
            "{} is {} in slot {role}; fail it first (raidlab array fail)",
            target.display(),
            sb.slots[role].state.name()
        )));
    }
    if sb.slots[role].dev_uuid == me.sb.dev_uuid {
        sb.slots[role].state = SlotState::Missing;
        sb.slots[role].dev_uuid = [0; 16];
        sb.slots[role].checkpoint = 0;
        write_group(&others, &mut sb, &[])?;
        warn_unreached(&sb, &others, &beside, Change::State);
    }
    me.member.leave_array(&me.sb.removed(), me.sb.data_offset)?;
    Ok(format!("removed {} from slot {role}", target.display()))
}

/// `remove` of a spare the members record whose device is not among those given, by its
/// device uuid (as `status` lists it: "path not known"): a spare whose disk is gone could
/// not be named by a path, and stayed in the record. Drops it from the record of the leaf
/// array that lists it; nothing is written to the spare itself. A uuid that is one of the
/// devices given, or of one found beside them, is refused (remove that by its path, which
/// also erases its superblock).
pub fn remove_spare_record(array: &[PathBuf], dev: [u8; 16]) -> Result<String, ArrayError> {
    let _locks = MemberLocks::acquire(array, "remove a spare")?;
    let found = read_members(array)?;
    let id = uuid_string(&dev);
    if let Some(f) = found.iter().find(|f| f.sb.dev_uuid == dev) {
        return Err(ArrayError::usage(format!(
            "device {id} is {} among the members given: remove it by that path",
            f.member.path.display()
        )));
    }
    let mut leaves: Vec<[u8; 16]> = found.iter().map(|f| f.sb.array.uuid).collect();
    leaves.sort_unstable();
    leaves.dedup();
    for leaf in leaves {
        let (group, sb) = group_of(&found, leaf);
        if sb.spares.contains(&dev) {
            let beside = find_beside(&found, &[leaf], "remove a spare")?;
            if let Some(f) = beside.found.iter().find(|f| f.sb.dev_uuid == dev) {
                return Err(ArrayError::usage(format!(
                    "device {id} is {}, beside the members given: remove it by that path",
                    f.member.path.display()
                )));
            }
            let (group, mut sb) = with_beside(group, &beside);
            sb.spares.retain(|u| *u != dev);
            write_spares(&group, &mut sb)?;
            warn_unreached(&sb, &group, &beside, Change::Spares);
            return Ok(format!(
                "removed spare {id} from the {} array's record (its device was not given)",
                sb.array.level
            ));
        }
    }
    Err(ArrayError::usage(format!(
        "no spare with device uuid {id} is recorded by the members given (valid: a uuid `array \
         status` lists as a spare whose path is not known, or the path of a member or spare)"
    )))
}

/// `add`: make `new` a spare of the array (of the leaf array `array_member` belongs to). The
/// record of the spares goes to the members given and to that leaf array's members found
/// beside them (as [`fail`]'s record does); one it counts on that is not reached is named in
/// one line on stderr.
pub fn add(array: &[PathBuf], new: &Path, force: bool) -> Result<String, ArrayError> {
    let mut paths = array.to_vec();
    paths.push(new.to_path_buf());
    // The new member must not be one of the array's members under another name.
    crate::member::check_distinct(array)?;
    if let Some(why) = crate::member::overlaps_any(new, array) {
        return Err(ArrayError::usage(format!(
            "{} is already a member of the array: {why}",
            new.display()
        )));
    }
    let _locks = MemberLocks::acquire(&paths, "add a member")?;
    let found = read_members(array)?;
    // Prefer a leaf array with more slots out of service than it has spares (so that adding
    // one disk after another fills several degraded leaves of a nested array in turn), then
    // any with a slot out of service.
    // Its spares are those its newest record lists, given or not: a spare added by the
    // last `add` is not among the members given to this one.
    let wants = |f: &&Found| {
        let (_, newest) = group_of(&found, f.sb.array.uuid);
        let out = newest
            .slots
            .iter()
            .filter(|s| s.state != SlotState::Active)
            .count();
        out > newest.spares.len()
    };
    let anchor = found
        .iter()
        .filter(|f| !same_path(&f.member.path, new))
        .find(wants)
        .or_else(|| {
            found
                .iter()
                .filter(|f| !same_path(&f.member.path, new))
                .find(|f| f.sb.slots.iter().any(|s| s.state != SlotState::Active))
        })
        .or_else(|| found.iter().find(|f| !same_path(&f.member.path, new)))
        .ok_or_else(|| ArrayError::usage("give the array's members and the new member"))?;
    let (group, mut sb, _) = leaf_group(&found, &anchor.member.path)?;
    // A spare takes a member's place only through some array's redundancy, its leaf's or
    // an enclosing one's (which rewrites a dead child whole); without any it is never used,
    // as md refuses spares for raid0 and linear.
    let mut tree = std::iter::once(&sb.array).chain(&sb.parents);
    if !tree.try_fold(false, |any, d| {
        Ok::<_, ArrayError>(any || geometry_of(d)?.redundancy() > 0)
    })? {
        return Err(ArrayError::usage(format!(
            "the {} array has no redundancy, so a spare could never take a member's place (valid: spares for raid1, 4, 5, 6 and 10, or for a child of one)",
            sb.array.level
        )));
    }
    let m = Member::open(new)?;
    if let Ok(Some(existing)) = m.read_superblock() {
        if existing.array.uuid == sb.array.uuid {
            return Err(ArrayError::usage(format!(
                "{} is already a member of this array",
                new.display()
            )));
        }
    }
    // The leaf array's members not given record the new spare too (as `fail` records a
    // failure on them): one left with the old record would not know the spare when it is
    // the one an assembly reads. `new` holds no record of this array (refused above), so it
    // is not among those found.
    let beside = find_beside(&found, &[sb.array.uuid], "add a member")?;
    let (group, newest) = with_beside(group, &beside);
    sb = newest;
    // A member `remove` took out of this array (of any leaf of the tree given) goes back
    // in without --force, as md's remove then add of the same disk: what its data area
    // holds is this array's, to be rebuilt. Any other data needs --force.
    let rejoining = m
        .read_removed()
        .is_some_and(|r| found.iter().any(|f| f.sb.array.uuid == r.array));
    let what = if rejoining {
        holds_data_rejoining(&m)?
    } else {
        holds_data(&m)?
    };
    if let Some(what) = what {
        if !force {
            return Err(ArrayError::usage(format!(
                "{} holds {what}; pass --force to overwrite it",
                new.display()
            )));
        }
    }
    let need = sb.data_offset + sb.data_size;
    if m.size < need {
        return Err(ArrayError::usage(format!(
            "{} is {} bytes; members of this array need at least {need}",
            new.display(),
            m.size
        )));
    }
    if sb.spares.len() >= MAX_SPARES {
        return Err(ArrayError::usage(format!(
            "the {} array has {MAX_SPARES} spares, as many as its superblocks record; remove one (raidlab array remove) before adding {}",
            sb.array.level,
            new.display()
        )));
    }
    let zeros = vec![0u8; (sb.data_offset - BITMAP_OFFSET) as usize];
    m.write_raw(&zeros, BITMAP_OFFSET)
        .map_err(|e| ArrayError::io("cannot clear metadata area of", new, &e))?;
    // The members record the spare, then the spare gets its superblock: a crash between
    // leaves a recorded spare whose path status says is not known.
    let dev = new_uuid();
    sb.spares.push(dev);
    write_spares(&group, &mut sb)?;
    let mut own = sb.clone();
    own.dev_uuid = dev;
    own.array.role = ROLE_SPARE;
    m.write_superblock(&own)?;
    // Those the record counts on and that missed it: not the new spare, which has it now.
    let mut others = sb.clone();
    others.spares.retain(|u| *u != dev);
    warn_unreached(&others, &group, &beside, Change::Spares);
    Ok(format!(
        "added {} as a spare (number {})",
        new.display(),
        sb.array.members as usize + sb.spares.len() - 1
    ))
}

/// Give every out-of-service slot a spare, if there are spares: the slot becomes
/// `Rebuilding` from 0 and the spare takes its role. As md does, the lowest slot takes the
/// spare added first (the order the members record; spares the record does not know come
/// after those, in the order given), whatever the order of the paths. Then [`mark_parent_rebuilds`]: a child
/// array that lost more members than it survives is set to be rebuilt whole by its enclosing
/// array. The new records also go to the members found beside those given (as [`fail`]'s
/// do); which slots are out of service and which spares take them is decided by the members
/// given, those the rebuild runs with. Returns how many spares were assigned.
pub fn assign_spares(array: &[PathBuf]) -> Result<usize, ArrayError> {
    let _locks = MemberLocks::acquire(array, "assign spares")?;
    let found = read_members(array)?;
    let mut uuids: Vec<[u8; 16]> = found.iter().map(|f| f.sb.array.uuid).collect();
    uuids.sort();
    uuids.dedup();
    let beside = find_beside(&found, &uuids, "assign spares")?;
    let mut assigned = 0;
    for u in uuids {
        let group: Vec<&Found> = found.iter().filter(|f| f.sb.array.uuid == u).collect();
        let n = group.len();
        // The members found beside those given get the new record, after them; what is in
        // service and which spares take slots is what was given, which the rebuild runs.
        let (group, mut sb) = with_beside(group, &beside);
        // In service: a slot's holder in date, given or found beside those given. One found
        // beside is not replaced by a spare for not having been given: that would take a
        // healthy member out of the array (and with a member failed besides, the array's
        // last redundancy).
        let present: Vec<[u8; 16]> = group
            .iter()
            .filter(|f| !f.sb.is_spare() && f.sb.events == sb.events)
            .map(|f| f.sb.dev_uuid)
            .collect();
        // md's order: the lowest slot out of service takes the spare added first.
        let given: Vec<(usize, [u8; 16])> = (0..n)
            .filter(|&i| group[i].sb.is_spare())
            .map(|i| (i, group[i].sb.dev_uuid))
            .collect();
        let mut spares = spare_order(&sb.spares, &given).into_iter().map(|(_, i)| i);
        let mut changed = Vec::new();
        for slot in 0..sb.slots.len() {
            let s = &sb.slots[slot];
            let out = matches!(s.state, SlotState::Faulty | SlotState::Missing)
                || (s.state != SlotState::Rebuilding && !present.contains(&s.dev_uuid));
            if !out {
                continue;
            }
            let Some(sp) = spares.next() else { break };
            let dev = group[sp].sb.dev_uuid;
            sb.slots[slot].dev_uuid = dev;
            sb.slots[slot].state = SlotState::Rebuilding;
            sb.slots[slot].checkpoint = 0;
            // A member now: no longer one of the spares.
            sb.spares.retain(|u| *u != dev);
            changed.push((sp, slot as u32));
        }
        if changed.is_empty() {
            continue;
        }
        assigned += changed.len();
        let before = sb.events;
        sb.events += 1;
        sb.seq = sb.events;
        for (i, f) in group.iter().enumerate() {
            let role = match changed.iter().find(|(sp, _)| *sp == i) {
                Some((_, slot)) => *slot,
                None if f.sb.events == before || f.sb.is_spare() => f.sb.array.role,
                None => continue,
            };
            write_as(f, &sb, role)?;
        }
        warn_unreached(&sb, &group, &beside, Change::State);
    }
    drop(beside);
    // A child that lost more than it survives and now has a member in every slot again is
    // rebuilt whole by its enclosing array.
    mark_parent_rebuilds(array)?;
    Ok(assigned)
}

/// The members of the leaf arrays of `array`'s members that were not given but are found
/// beside them (see `find_beside`: the array's members in date that hold their slots in
/// service, and spares its record knows), in the order found. `rebuild` runs with them, so that a member left out of the
/// list is neither replaced by a spare nor missed by the rebuild. The caller locks them with
/// the members given before using them.
pub fn members_beside(array: &[PathBuf]) -> Result<Vec<PathBuf>, ArrayError> {
    let found = read_members(array)?;
    let mut uuids: Vec<[u8; 16]> = found.iter().map(|f| f.sb.array.uuid).collect();
    uuids.sort();
    uuids.dedup();
    let beside = find_beside(&found, &uuids, "rebuild the array")?;
    Ok(beside
        .found
        .iter()
        .filter(|f| {
            let rec = newest_record(
                &found
                    .iter()
                    .filter(|g| g.sb.array.uuid == f.sb.array.uuid)
                    .collect::<Vec<_>>(),
            );
            let role = f.sb.array.role as usize;
            let holds = rec.slots.get(role).is_some_and(|s| {
                s.dev_uuid == f.sb.dev_uuid
                    && matches!(s.state, SlotState::Active | SlotState::Rebuilding)
            });
            f.sb.is_spare() || (f.sb.events == rec.events && holds)
        })
        .map(|f| f.member.path.clone())
        .collect())
}

/// How a subtree of a nested array stands, from its members' superblocks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Health {
    /// Serves its data (maybe degraded, maybe rebuilding onto spares by itself).
    Serves,
    /// Already being rebuilt whole by its enclosing array.
    Marked,
    /// Lost more than it survives, but every slot below it has a member again (spares taken
    /// in place of the failed ones): its enclosing array can rewrite it whole.
    Replaceable(String),
    /// Lost more than it survives with slots left empty: nothing can rebuild it here.
    Dead(String),
}

/// A subtree to mark for a rebuild from above: (its level in the tree, its leaves).
type ToMark<'a> = (usize, Vec<&'a Found>);

/// How the subtree of `found` at `level` stands; children its enclosing array can rewrite
/// whole are added to `marks`. A child already being rebuilt whole that lost members again
/// (and has new ones) is marked again: its rebuild starts over, since what it had rebuilt
/// sat partly on the members just replaced.
fn health<'a>(
    found: &[&'a Found],
    level: usize,
    depth: usize,
    marks: &mut Vec<ToMark<'a>>,
) -> Result<Health, ArrayError> {
    let marked = level > 0
        && found
            .iter()
            .any(|f| desc_at(&f.sb, level).rebuild.is_some());
    let h = health_of(found, level, depth, marks)?;
    Ok(match h {
        Health::Serves if marked => Health::Marked,
        Health::Replaceable(_) if marked => {
            marks.push((level, found.to_vec()));
            Health::Marked
        }
        h => h,
    })
}

fn health_of<'a>(
    found: &[&'a Found],
    level: usize,
    depth: usize,
    marks: &mut Vec<ToMark<'a>>,
) -> Result<Health, ArrayError> {
    let newest = found.iter().max_by_key(|f| f.sb.recency()).unwrap();
    let desc = desc_at(&newest.sb, level).clone();
    let geo = geometry_of(&desc)?;
    let name = format!("{} array {}", desc.level, uuid_string(&desc.uuid));
    if level == depth {
        // A leaf: slots without an in-sync member, and slots being rebuilt onto spares.
        let sb = &newest.sb;
        let mut lost = Vec::new();
        let mut out = Vec::new();
        for (i, s) in sb.slots.iter().enumerate() {
            let present = found.iter().any(|f| {
                !f.sb.is_spare() && f.sb.dev_uuid == s.dev_uuid && f.sb.events == sb.events
            });
            if !present || matches!(s.state, SlotState::Faulty | SlotState::Missing) {
                lost.push(i as u32);
                out.push(i as u32);
            } else if s.state == SlotState::Rebuilding {
                out.push(i as u32);
            }
        }
        if geo.survives(&out) {
            return Ok(Health::Serves);
        }
        let what = format!(
            "the {name} lost {} of {} members, more than the {} it survives",
            out.len(),
            desc.members,
            geo.redundancy()
        );
        return Ok(if lost.is_empty() {
            Health::Replaceable(what)
        } else {
            Health::Dead(what)
        });
    }
    let mut out = Vec::new();
    let mut dead = None;
    let mut replaceable = Vec::new();
    for role in 0..desc.members {
        let group: Vec<&'a Found> = found
            .iter()
            .copied()
            .filter(|f| desc_at(&f.sb, level).role == role)
            .collect();
        if group.is_empty() {
            out.push(role);
            dead.get_or_insert(format!("child {role} of the {name} is missing"));
            continue;
        }
        match health(&group, level + 1, depth, marks)? {
            Health::Serves => {}
            Health::Marked => out.push(role),
            Health::Replaceable(why) => {
                out.push(role);
                replaceable.push((role, group, why));
            }
            Health::Dead(why) => {
                out.push(role);
                dead.get_or_insert(why);
            }
        }
    }
    if geo.survives(&out) {
        for (_, group, _) in replaceable {
            marks.push((level + 1, group));
        }
        return Ok(Health::Serves);
    }
    let why = |first: String| {
        let roles: Vec<String> = out.iter().map(|r| r.to_string()).collect();
        if geo.redundancy() == 0 {
            format!("{first}, and the {name} above it has no redundancy to recompute it from")
        } else {
            format!(
                "{first}; the {name} has {} of {} children out of service ({}) and survives {}",
                out.len(),
                desc.members,
                roles.join(", "),
                geo.redundancy()
            )
        }
    };
    Ok(match (dead, replaceable.first()) {
        (Some(d), _) => Health::Dead(why(d)),
        (None, Some((_, _, r))) => Health::Replaceable(why(r.clone())),
        (None, None) => Health::Serves,
    })
}

/// After spares took the place of failed members: a child array that lost more members than
/// it survives cannot rebuild itself, but its enclosing array can rewrite it whole from its
/// own redundancy (md's way: re-create the child, add it to the parent, which recovers onto
/// it). Each such child gets a rebuild mark at checkpoint 0 in its description on every leaf
/// below it, and its leaves' slots being rebuilt become active (their content will come from
/// above); assembly then starts the enclosing array with that child rebuilding. Returns how
/// many children were marked; fails with one line when a child's data is lost (no
/// enclosing array with redundancy, or more children out than the enclosing array survives).
pub fn mark_parent_rebuilds(array: &[PathBuf]) -> Result<usize, ArrayError> {
    let found = read_members(array)?;
    let depth = found[0].sb.parents.len();
    if depth == 0 {
        return Ok(0);
    }
    let refs: Vec<&Found> = found.iter().collect();
    let mut marks = Vec::new();
    match health(&refs, 0, depth, &mut marks)? {
        Health::Serves | Health::Marked => {}
        // Nothing has been replaced: assembly says what is missing.
        Health::Dead(_) if marks.is_empty() && !any_replaceable(&refs, depth)? => return Ok(0),
        Health::Dead(why) | Health::Replaceable(why) => {
            return Err(ArrayError::failed(format!(
                "cannot rebuild: {why}; its data is lost (restore it from a backup after re-creating the array)"
            )))
        }
    }
    if marks.is_empty() {
        return Ok(0);
    }
    let mut marked: Vec<[u8; 16]> = marks
        .iter()
        .flat_map(|(_, leaves)| leaves.iter().map(|f| f.sb.array.uuid))
        .collect();
    marked.sort();
    marked.dedup();
    let beside = find_beside(&found, &marked, "assign spares")?;
    for (level, leaves) in &marks {
        let mut uuids: Vec<[u8; 16]> = leaves.iter().map(|f| f.sb.array.uuid).collect();
        uuids.sort();
        uuids.dedup();
        for u in uuids {
            let group: Vec<&Found> = leaves
                .iter()
                .copied()
                .filter(|f| f.sb.array.uuid == u)
                .collect();
            let (group, mut sb) = with_beside(group, &beside);
            let np = sb.parents.len();
            let d = if *level == depth {
                &mut sb.array
            } else {
                &mut sb.parents[np - 1 - level]
            };
            d.rebuild = Some(0);
            let mut also = Vec::new();
            for s in sb.slots.iter_mut() {
                if s.state == SlotState::Rebuilding {
                    s.state = SlotState::Active;
                    s.checkpoint = 0;
                    if let Some(i) = group.iter().position(|f| f.sb.dev_uuid == s.dev_uuid) {
                        also.push(i);
                    }
                }
            }
            write_group(&group, &mut sb, &also)?;
            warn_unreached(&sb, &group, &beside, Change::State);
        }
    }
    Ok(marks.len())
}

/// Whether any leaf array below got spares in place of more members than it survives.
fn any_replaceable(found: &[&Found], depth: usize) -> Result<bool, ArrayError> {
    let mut uuids: Vec<[u8; 16]> = found.iter().map(|f| f.sb.array.uuid).collect();
    uuids.sort();
    uuids.dedup();
    for u in uuids {
        let group: Vec<&Found> = found
            .iter()
            .copied()
            .filter(|f| f.sb.array.uuid == u)
            .collect();
        if let Health::Replaceable(_) = health(&group, depth, depth, &mut Vec::new())? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Rebuild every slot being rebuilt, in every leaf array of the tree. `stop` interrupts
/// (progress is kept). Returns whether everything finished.
pub fn rebuild_all(
    arr: &Array,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<bool, ArrayError> {
    if let Backing::Nested(children) = &arr.backing {
        for c in children.iter().flatten() {
            if !rebuild_all(c, stop, progress)? {
                return Ok(false);
            }
        }
        // Then the children being rebuilt whole from this array's redundancy.
        if !arr.slots().iter().any(|s| s.state == SlotState::Rebuilding) {
            return Ok(true);
        }
    }
    let name = format!("{} {}", arr.geo.level, &uuid_string(&arr.uuid)[..8]);
    // Persist progress about every 1/64 of the array (at least every 4 MiB).
    let every = (arr.capacity() / 64).max(4 << 20);
    arr.rebuild(every, stop, &mut |d, t| progress(&name, d, t))
}

/// Finish an initial sync that was interrupted (see [`Array::initial_sync`]), keeping every
/// byte the array reads: holes of member files filled, redundancy made to agree with the
/// data. `stop` interrupts (progress is kept). Returns whether the array is synced.
pub fn finish_sync(
    arr: &Array,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<bool, ArrayError> {
    arr.initial_sync(false, stop, progress)
}

/// Scrub every array with redundancy in the tree; (array label, report) for each.
pub fn scrub_all(
    arr: &Array,
    repair: bool,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<Vec<(String, crate::array::ScrubReport)>, ArrayError> {
    let mut out = Vec::new();
    if let Backing::Nested(children) = &arr.backing {
        // A child being rebuilt whole holds nothing valid above the checkpoint yet: its own
        // scrub would count (or "repair") that, so the whole tree waits for the rebuild.
        if arr.slots().iter().any(|s| s.state == SlotState::Rebuilding) {
            return Err(ArrayError::usage(format!(
                "a child array of the {} array is being rebuilt: run raidlab array rebuild first, then scrub",
                arr.geo.level
            )));
        }
        for c in children.iter().flatten() {
            out.extend(scrub_all(c, repair, progress)?);
        }
    }
    if arr.geo.redundancy() > 0 {
        let name = format!("{} {}", arr.geo.level, uuid_string(&arr.uuid));
        let rep = arr.scrub(repair, &mut |d, t| progress(&name, d, t))?;
        out.push((name, rep));
    }
    Ok(out)
}

/// `fail` inside the process running `arr` (asked through its control socket): mark the
/// member at `member` faulty in its leaf array, with the same checks as [`fail`].
pub fn fail_running(arr: &Array, member: &Path, force: bool) -> Result<String, ArrayError> {
    let want = control::canonical(member);
    match &arr.backing {
        Backing::Nested(children) => {
            let mut last = None;
            for c in children.iter().flatten() {
                match fail_running(c, member, force) {
                    Err(e) if e.message().contains("is not a member") => last = Some(e),
                    other => return other,
                }
            }
            Err(last.unwrap_or_else(|| not_served(member)))
        }
        Backing::Leaf(leaf) => {
            if leaf
                .spares
                .iter()
                .any(|s| control::canonical(&s.path) == want)
            {
                return Err(ArrayError::usage(format!(
                    "{} is a spare; remove it instead",
                    member.display()
                )));
            }
            let Some(role) = leaf.members.iter().position(|m| {
                m.as_ref()
                    .is_some_and(|m| control::canonical(&m.path) == want)
            }) else {
                return Err(not_served(member));
            };
            let slots = arr.slots();
            if slots[role].state == SlotState::Faulty {
                return Err(ArrayError::usage(format!(
                    "{} is already faulty",
                    member.display()
                )));
            }
            let lost = slots
                .iter()
                .filter(|s| s.state != SlotState::Active)
                .count() as u32
                + 1;
            if lost > arr.geo.redundancy() && !force {
                return Err(too_many_out(
                    member,
                    &arr.geo.level.to_string(),
                    lost,
                    arr.geo.redundancy(),
                ));
            }
            arr.fail_member(role, "marked faulty by raidlab array fail");
            Ok(format!(
                "marked {} faulty (slot {role}) in the running array",
                member.display()
            ))
        }
    }
}

fn not_served(member: &Path) -> ArrayError {
    ArrayError::usage(format!(
        "{} is not a member of the served array",
        member.display()
    ))
}

/// The slots out of service anywhere in the tree, as "slot 2 faulty" (leaf of a flat array)
/// or "child 1 slot 2 faulty"; a child array that is missing or being rebuilt whole counts
/// as "child 1 missing".
pub fn out_of_service(st: &ArrayStatus) -> Vec<String> {
    fn walk(st: &ArrayStatus, prefix: &str, out: &mut Vec<String>) {
        if st.children.is_empty() {
            for (i, s) in &st.not_active {
                out.push(format!("{prefix}slot {i} {s}"));
            }
            return;
        }
        let mut k = 0;
        for (i, s) in &st.not_active {
            if s == "missing" || s == "rebuilding" {
                out.push(format!("{prefix}child {i} {s}"));
            }
        }
        for role in 0..st.members {
            if st
                .not_active
                .iter()
                .any(|(i, s)| *i == role && s == "missing")
            {
                continue;
            }
            if let Some(c) = st.children.get(k) {
                walk(c, &format!("{prefix}child {role} "), out);
            }
            k += 1;
        }
    }
    let mut out = Vec::new();
    walk(st, "", &mut out);
    out
}

/// Whether any array of the tree has a slot (or child) out of service.
pub fn degraded_anywhere(st: &ArrayStatus) -> bool {
    st.degraded || st.children.iter().any(degraded_anywhere)
}

/// Assemble for `scrub`: every member must be in service (a degraded stripe has nothing left
/// to check against), which is said here, before assembly, with what to do about it — not
/// assembly's own refusals, which speak of flags scrub does not have.
pub fn open_for_scrub(array: &[PathBuf]) -> Result<Arc<Array>, ArrayError> {
    let st = status(array)?;
    if let Some(why) = &st.cannot_start {
        return Err(ArrayError::failed(format!(
            "cannot scrub: the {} array cannot start: {why}",
            st.level
        )));
    }
    if degraded_anywhere(&st) {
        return Err(ArrayError::usage(format!(
            "cannot scrub: the array is degraded ({}) and scrub needs every member in service: add a spare with raidlab array add, run raidlab array rebuild (with --force if it was not stopped cleanly), then scrub",
            out_of_service(&st).join(", ")
        )));
    }
    open(array, false)
}

/// `bytes` in the largest binary unit it fills at least one of, two decimals: `6.00 MiB`,
/// `1.50 GiB` (a small array's capacity showed as `0.00 GiB`).
pub fn binary_size(bytes: u64) -> String {
    match raidlab_workload::size::binary_unit(bytes) {
        (_, "B") => format!("{bytes} B"),
        (v, unit) => format!("{v:.2} {unit}"),
    }
}

/// Assemble for a management verb (resyncing as needed), closing cleanly when dropped.
pub fn open(array: &[PathBuf], force: bool) -> Result<Arc<Array>, ArrayError> {
    open_for(array, force, false)
}

/// Assemble to serve the array's data (`raidlab array serve`): as [`open`], but a member in
/// service left out of the list is refused unless `force` (see
/// [`AssembleOptions::all_members`]).
pub fn open_to_serve(array: &[PathBuf], force: bool) -> Result<Arc<Array>, ArrayError> {
    open_for(array, force, true)
}

fn open_for(array: &[PathBuf], force: bool, all_members: bool) -> Result<Arc<Array>, ArrayError> {
    assemble(
        array,
        &AssembleOptions {
            force,
            resync: true,
            verbose: true,
            all_members,
        },
    )
}

/// Progress line on stderr: percent, rate in MB/s (decimal), time left.
pub struct Progress {
    start: Instant,
    last: Instant,
    from: u64,
    pub enabled: bool,
}

impl Progress {
    pub fn new(enabled: bool, from: u64) -> Progress {
        let now = Instant::now();
        Progress {
            start: now,
            last: now - std::time::Duration::from_secs(1),
            from,
            enabled,
        }
    }
    pub fn update(&mut self, what: &str, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if now.duration_since(self.last).as_millis() < 500 && done < total {
            return;
        }
        self.last = now;
        let secs = now.duration_since(self.start).as_secs_f64().max(1e-6);
        let rate = done.saturating_sub(self.from) as f64 / secs;
        let left = if rate > 0.0 {
            (total - done) as f64 / rate
        } else {
            0.0
        };
        ewrite!(
            "\r{what}: {:5.1}% {:.1} MB/s, {:.0} s left   ",
            done as f64 * 100.0 / total.max(1) as f64,
            rate / 1e6,
            left
        );
        if done >= total {
            ewriteln!();
        }
    }
}

/// SIGINT/SIGTERM set a flag instead of killing the process, so long operations can stop
/// cleanly (rebuild keeps its checkpoint; serve unmounts).
pub fn stop_flag() -> &'static AtomicBool {
    static STOP: AtomicBool = AtomicBool::new(false);
    extern "C" fn on_signal(_: libc::c_int) {
        STOP.store(true, Ordering::SeqCst);
    }
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    });
    &STOP
}

#[cfg(test)]
mod size_tests {
    use super::binary_size;

    #[test]
    fn sizes_show_in_the_largest_unit_they_fill() {
        assert_eq!(binary_size(512), "512 B");
        assert_eq!(binary_size(6 << 20), "6.00 MiB");
        assert_eq!(binary_size(4718592), "4.50 MiB");
        assert_eq!(binary_size(3 << 29), "1.50 GiB");
        assert_eq!(binary_size(1 << 40), "1.00 TiB");
    }
}
