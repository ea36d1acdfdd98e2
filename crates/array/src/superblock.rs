//! The on-member metadata format: what each member says about the array it belongs to.
//!
//! Layout of a member (all offsets in bytes from the start of the file or device):
//!
//! | offset          | size         | what                                               |
//! |-----------------|--------------|----------------------------------------------------|
//! | 0               | 4 KiB        | superblock, copy A (magic `RAIDLABA` at byte 0)    |
//! | 4 KiB           | 4 KiB        | superblock, copy B                                 |
//! | 8 KiB           | bitmap_bytes | write-intent bitmap (one bit per logical region)   |
//! | data_offset     | data_size    | the member's data area (what the geometry maps to) |
//!
//! `data_offset` is 1 MiB aligned. Each copy carries a crc32c of its first 4092 bytes in its
//! last 4 bytes and a sequence number; a reader takes the valid copy with the higher sequence,
//! and a writer always writes A, flushes, then B, so a write torn at any point leaves one valid
//! copy. Integers are little-endian. A checksum says a copy is whole, not that it makes
//! sense: a copy is used only when every field passes [`Superblock::check`] (counts, roles,
//! sizes and offsets within the format and the member), else the other copy is taken, and
//! with neither the member is refused naming the field.
//!
//! A member of a nested array (RAID 0 over RAID 5s) carries its own array's description plus
//! one description per enclosing array (`parents`), innermost first, each with the role the
//! child array plays in it, so the whole tree assembles from its leaves alone.
//!
//! Level and layout names sit in 16-byte fields, too short for some of mdadm's layout names
//! (`right-asymmetric-6` is 18 bytes). After the slots comes a trailer: the tag `LNAM`, then
//! each description's layout name in full (32 bytes each, the array's first, then the parents').
//! Superblocks without the trailer (zeros there) keep their 16-byte names.
//!
//! Trailers are tagged and read in order, each only if the one before it is there, so a
//! newer trailer is added without a version change: a superblock written before it has zeros
//! where its tag would be (read as the field's old meaning), and a raidlab from before it
//! stops reading at the trailers it knows. After the layout names come rebuilds from an
//! enclosing array (`PRBD`), then the initial sync's progress (`ISYN`, see
//! [`Superblock::initial_sync`]; absent means synced, as every array was taken to be before),
//! then the array's spares (`SPAR`, see [`Superblock::spares`]; absent means none recorded),
//! then how far each enclosing array's pass of the initial sync has come (`ESYN`, see
//! [`ArrayDesc::initial_sync`]; absent means none has started).
//!
//! A raidlab that stops at the trailers it knows would also drop the newer ones when it
//! rewrites the superblock: an array mid-sync or mid-rebuild from above would then read as
//! whole. So a superblock carrying such work in progress is written as version 2, which a
//! raidlab from before these trailers refuses (it reads version 1 only), and as version 1
//! again once the work is done. This raidlab reads both. A raidlab that reads version 2 but
//! not `ESYN` drops only where enclosing arrays' passes stood, which a later sync then does
//! again from the start: more work, never a stripe taken as consistent that is not.

pub const MAGIC: &[u8; 8] = b"RAIDLABA";
/// The format's version when no work in progress is recorded (every raidlab reads it).
pub const VERSION: u32 = 1;
/// The version written while an initial sync or a rebuild from an enclosing array is under
/// way: a raidlab that would drop their trailers refuses it instead.
pub const VERSION_IN_PROGRESS: u32 = 2;
pub const SB_BYTES: usize = 4096;
pub const SB_COPY_B: u64 = 4096;
pub const BITMAP_OFFSET: u64 = 8192;
pub const DATA_ALIGN: u64 = 1 << 20;
/// Role of a spare member (not yet holding any slot's data).
pub const ROLE_SPARE: u32 = u32::MAX;
/// Most members one array may have (bounded by what fits in one 4 KiB superblock).
pub const MAX_MEMBERS: u32 = 120;
/// Deepest nesting: an array may sit inside at most this many enclosing arrays.
pub const MAX_PARENTS: usize = 3;
/// Marks the trailer of full-length layout names.
const LONG_NAMES_TAG: &[u8; 4] = b"LNAM";
/// Marks the trailer of rebuilds from an enclosing array (after the layout names).
const PARENT_REBUILD_TAG: &[u8; 4] = b"PRBD";
/// Marks the trailer of the initial sync's progress (after the rebuilds from above).
const INITIAL_SYNC_TAG: &[u8; 4] = b"ISYN";
/// Marks the trailer of the array's spares (after the initial sync's progress).
const SPARES_TAG: &[u8; 4] = b"SPAR";
/// Marks the trailer of the enclosing arrays' initial sync passes (after the spares).
const ENCLOSING_SYNC_TAG: &[u8; 4] = b"ESYN";
/// Most spares one leaf array records (what fits beside the largest array's slots).
pub const MAX_SPARES: usize = 24;

/// The state of one slot (role) of an array, as its superblocks record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SlotState {
    /// In sync and in use.
    Active,
    /// Failed (by `fail` or an I/O error); its data is not used.
    Faulty,
    /// No member holds this slot (removed, or never added).
    Missing,
    /// A member holds this slot and is being rebuilt; data below `checkpoint` is valid.
    Rebuilding,
}

impl SlotState {
    fn code(self) -> u8 {
        match self {
            SlotState::Active => 1,
            SlotState::Faulty => 2,
            SlotState::Missing => 3,
            SlotState::Rebuilding => 4,
        }
    }
    fn from_code(c: u8) -> Option<SlotState> {
        Some(match c {
            1 => SlotState::Active,
            2 => SlotState::Faulty,
            3 => SlotState::Missing,
            4 => SlotState::Rebuilding,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            SlotState::Active => "active",
            SlotState::Faulty => "faulty",
            SlotState::Missing => "missing",
            SlotState::Rebuilding => "rebuilding",
        }
    }
}

/// One slot of the leaf array: which member device holds it and in what state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub dev_uuid: [u8; 16],
    pub state: SlotState,
    /// For `Rebuilding`: bytes of the member data area already rebuilt (resume point).
    pub checkpoint: u64,
}

/// What an array is: shared by every member of it (and, for enclosing arrays, of its children).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayDesc {
    pub uuid: [u8; 16],
    /// mdadm's level name: linear, raid0, raid1, raid10, raid4, raid5, raid6.
    pub level: String,
    /// mdadm's layout name (left-symmetric, n2, ...); empty where the level has none.
    pub layout: String,
    pub chunk_bytes: u64,
    pub members: u32,
    /// The role of the child (this member, or the array below) in this array.
    pub role: u32,
    /// True from the first write after assembly until a clean stop.
    pub dirty: bool,
    /// Bytes of each child's data area this array uses.
    pub member_bytes: u64,
    /// This array is being rewritten by its enclosing array from that array's redundancy
    /// (it had failed and was replaced): the enclosing array's logical bytes below this
    /// checkpoint are valid in it, nothing above. `None` when it holds its data.
    pub rebuild: Option<u64>,
    /// For an enclosing array (a description in `parents`) while the initial sync of its
    /// tree is under way: how far its own pass has come, the pass that makes its redundancy
    /// agree with what its children hold once every leaf has synced. Its units wholly below
    /// this logical byte are consistent (recorded only after what made them so is durable);
    /// a resumed sync goes on from here. `None`: its pass has not started. Never set in a
    /// leaf's own description, whose progress is [`Superblock::initial_sync`], and cleared
    /// with it once the whole tree is synced.
    pub initial_sync: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superblock {
    /// Bumped on every metadata change of the leaf array (md's event count).
    pub events: u64,
    /// Which copy write is newer when both are valid.
    pub seq: u64,
    pub ctime_ns: u64,
    pub dev_uuid: [u8; 16],
    pub array: ArrayDesc,
    pub parents: Vec<ArrayDesc>,
    pub data_offset: u64,
    pub data_size: u64,
    pub bitmap_bytes: u64,
    /// Logical bytes of the leaf array one bitmap bit covers.
    pub bitmap_region: u64,
    pub slots: Vec<Slot>,
    /// The initial sync `array create` runs (md's resync at creation: every member's data
    /// area written, redundancy made consistent) has not finished: bytes of each member's
    /// data area done so far, where it resumes. `None` once it has, or when it was skipped
    /// (`--assume-clean`, md's way of saying the members are consistent already). In a
    /// nested array every leaf keeps its mark until the whole tree is synced.
    pub initial_sync: Option<u64>,
    /// The device uuids of the leaf array's spares, in the order they were added: what lets
    /// `status` show every spare (or say that one's path is not known) from the members'
    /// superblocks alone, as mdadm --detail lists an array's spares, and `rebuild` give the
    /// first added to the lowest slot out of service. Spares are numbered after the slots in
    /// this order (the first is number `array.members`). A spare taking a slot leaves it.
    pub spares: Vec<[u8; 16]>,
    /// Bumped on every change of `spares` alone (a spare added or removed), which leaves
    /// `events` as it is: the record says which devices are spares, nothing about the data, so
    /// a member left out of the list given to `add` does not become out of date (and kicked
    /// at the next assembly) for missing it. Among members with the newest `events`, the one
    /// with the highest `spare_events` holds the newest record ([`Superblock::recency`]).
    pub spare_events: u64,
}

impl Superblock {
    pub fn is_spare(&self) -> bool {
        self.array.role == ROLE_SPARE
    }

    /// What makes one member's superblock newer than another's: its event count, then (for
    /// members in sync) how recent its record of the spares is.
    pub fn recency(&self) -> (u64, u64) {
        (self.events, self.spare_events)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(SB_BYTES));
        w.bytes(MAGIC);
        let in_progress = self.initial_sync.is_some()
            || std::iter::once(&self.array)
                .chain(&self.parents)
                .any(|d| d.rebuild.is_some() || d.initial_sync.is_some());
        w.u32(if in_progress {
            VERSION_IN_PROGRESS
        } else {
            VERSION
        });
        w.u32(SB_BYTES as u32);
        w.u64(self.events);
        w.u64(self.seq);
        w.u64(self.ctime_ns);
        w.bytes(&self.dev_uuid);
        w.u64(self.data_offset);
        w.u64(self.data_size);
        w.u64(BITMAP_OFFSET);
        w.u64(self.bitmap_bytes);
        w.u64(self.bitmap_region);
        encode_desc(&mut w, &self.array);
        w.u32(self.parents.len() as u32);
        for p in &self.parents {
            encode_desc(&mut w, p);
        }
        w.u32(self.slots.len() as u32);
        for s in &self.slots {
            w.bytes(&s.dev_uuid);
            w.0.push(s.state.code());
            w.u64(s.checkpoint);
        }
        w.bytes(LONG_NAMES_TAG);
        for d in std::iter::once(&self.array).chain(&self.parents) {
            w.str_n::<32>(&d.layout);
        }
        w.bytes(PARENT_REBUILD_TAG);
        for d in std::iter::once(&self.array).chain(&self.parents) {
            w.0.push(d.rebuild.is_some() as u8);
            w.u64(d.rebuild.unwrap_or(0));
        }
        w.bytes(INITIAL_SYNC_TAG);
        w.0.push(self.initial_sync.is_some() as u8);
        w.u64(self.initial_sync.unwrap_or(0));
        w.bytes(SPARES_TAG);
        w.u64(self.spare_events);
        w.u32(self.spares.len() as u32);
        for u in &self.spares {
            w.bytes(u);
        }
        w.bytes(ENCLOSING_SYNC_TAG);
        for d in &self.parents {
            w.0.push(d.initial_sync.is_some() as u8);
            w.u64(d.initial_sync.unwrap_or(0));
        }
        assert!(
            w.0.len() <= SB_BYTES - 4,
            "superblock overflow: member count is bounded by MAX_MEMBERS"
        );
        w.0.resize(SB_BYTES, 0);
        seal(&mut w.0);
        w.0
    }

    /// Decode one copy; `None` if it is not a valid raidlab superblock (no magic, bad checksum).
    pub fn decode(buf: &[u8]) -> Result<Option<Superblock>, String> {
        if buf.len() < SB_BYTES || &buf[..8] != MAGIC {
            return Ok(None);
        }
        let stored = u32::from_le_bytes(buf[SB_BYTES - 4..SB_BYTES].try_into().unwrap());
        if crc32c::crc32c(&buf[..SB_BYTES - 4]) != stored {
            return Ok(None);
        }
        let mut r = Reader { buf, pos: 8 };
        let version = r.u32()?;
        if version != VERSION && version != VERSION_IN_PROGRESS {
            return Err(format!(
                "superblock version {version} (this raidlab reads versions {VERSION} and \
                 {VERSION_IN_PROGRESS})"
            ));
        }
        let size = r.u32()?;
        if size != SB_BYTES as u32 {
            return Err(format!("field size is {size} (valid: {SB_BYTES})"));
        }
        let events = r.u64()?;
        let seq = r.u64()?;
        let ctime_ns = r.u64()?;
        let dev_uuid = r.uuid()?;
        let data_offset = r.u64()?;
        let data_size = r.u64()?;
        let bitmap_offset = r.u64()?;
        if bitmap_offset != BITMAP_OFFSET {
            return Err(format!(
                "field bitmap_offset is {bitmap_offset} (valid: {BITMAP_OFFSET})"
            ));
        }
        let bitmap_bytes = r.u64()?;
        let bitmap_region = r.u64()?;
        let mut array = decode_desc(&mut r)?;
        let np = r.u32()? as usize;
        if np > MAX_PARENTS {
            return Err(format!(
                "superblock lists {np} enclosing arrays (at most {MAX_PARENTS})"
            ));
        }
        let mut parents = Vec::with_capacity(np);
        for _ in 0..np {
            parents.push(decode_desc(&mut r)?);
        }
        let ns = r.u32()?;
        if ns > MAX_MEMBERS {
            return Err(format!(
                "superblock lists {ns} slots (at most {MAX_MEMBERS})"
            ));
        }
        let mut slots = Vec::with_capacity(ns as usize);
        for _ in 0..ns {
            let dev_uuid = r.uuid()?;
            let code = r.take(1)?[0];
            let state = SlotState::from_code(code)
                .ok_or_else(|| format!("slot state code {code} is unknown"))?;
            let checkpoint = r.u64()?;
            slots.push(Slot {
                dev_uuid,
                state,
                checkpoint,
            });
        }
        let mut initial_sync = None;
        let mut spares = Vec::new();
        let mut spare_events = 0;
        if r.take(4)? == LONG_NAMES_TAG {
            array.layout = r.str_n::<32>()?;
            for p in parents.iter_mut() {
                p.layout = r.str_n::<32>()?;
            }
            if r.take(4)? == PARENT_REBUILD_TAG {
                for d in std::iter::once(&mut array).chain(parents.iter_mut()) {
                    let on = r.take(1)?[0] != 0;
                    let cp = r.u64()?;
                    d.rebuild = on.then_some(cp);
                }
                if r.take(4)? == INITIAL_SYNC_TAG {
                    let on = r.take(1)?[0] != 0;
                    let cp = r.u64()?;
                    initial_sync = on.then_some(cp);
                    if r.take(4)? == SPARES_TAG {
                        spare_events = r.u64()?;
                        let n = r.u32()? as usize;
                        if n > MAX_SPARES {
                            return Err(format!(
                                "superblock lists {n} spares (at most {MAX_SPARES})"
                            ));
                        }
                        for _ in 0..n {
                            spares.push(r.uuid()?);
                        }
                        if r.take(4)? == ENCLOSING_SYNC_TAG {
                            for d in parents.iter_mut() {
                                let on = r.take(1)?[0] != 0;
                                let cp = r.u64()?;
                                d.initial_sync = on.then_some(cp);
                            }
                        }
                    }
                }
            }
        }
        Ok(Some(Superblock {
            events,
            seq,
            ctime_ns,
            dev_uuid,
            array,
            parents,
            data_offset,
            data_size,
            bitmap_bytes,
            bitmap_region,
            slots,
            initial_sync,
            spares,
            spare_events,
        }))
    }
}

impl Superblock {
    /// Whether every field is one this format can hold and a member of `member_size` bytes
    /// allows: the checksum only says the copy is whole, not that what was written makes
    /// sense (a bug, a hand edit, another tool). Err says which field, its value and what is
    /// valid, as "field NAME is VALUE (valid: …)". Assembly, status and every verb rely on
    /// these bounds (roles index the slots, the bitmap is allocated and indexed by them).
    pub fn check(&self, member_size: u64) -> Result<(), String> {
        fn bad<T>(field: &str, value: impl std::fmt::Display, valid: String) -> Result<T, String> {
            Err(format!("field {field} is {value} (valid: {valid})"))
        }
        let max_bitmap = DATA_ALIGN - BITMAP_OFFSET;
        if self.bitmap_bytes == 0
            || !self.bitmap_bytes.is_multiple_of(4096)
            || self.bitmap_bytes > max_bitmap
        {
            return bad(
                "bitmap_bytes",
                self.bitmap_bytes,
                format!("a multiple of 4096 from 4096 to {max_bitmap}"),
            );
        }
        let min_offset = data_offset_for(self.bitmap_bytes);
        if self.data_offset < min_offset
            || !self.data_offset.is_multiple_of(DATA_ALIGN)
            || self.data_offset >= member_size
        {
            return bad(
                "data_offset",
                self.data_offset,
                format!(
                    "a multiple of {DATA_ALIGN} from {min_offset} (past the superblocks and the bitmap) to below the member's end at {member_size}"
                ),
            );
        }
        let room = member_size - self.data_offset;
        if self.data_size == 0 || self.data_size > room {
            return bad(
                "data_size",
                self.data_size,
                format!(
                    "1 to {room}: what the {member_size}-byte member holds past data_offset {}; was the member truncated?",
                    self.data_offset
                ),
            );
        }
        // The array's own description, then the enclosing ones, innermost first: each one's
        // member_bytes is bounded by the capacity of the one below it.
        let descs: Vec<(String, &ArrayDesc)> = std::iter::once(("array".to_string(), &self.array))
            .chain(
                self.parents
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (format!("parents[{i}]"), d)),
            )
            .collect();
        let mut capacities = Vec::with_capacity(descs.len());
        let mut units = Vec::with_capacity(descs.len());
        let mut below = self.data_size;
        for (i, (name, d)) in descs.iter().enumerate() {
            let level = match crate::shape::parse_level(&d.level) {
                Ok(l) => l,
                Err(_) => {
                    return bad(
                        &format!("{name}.level"),
                        format!("'{}'", d.level),
                        "linear, raid0, raid1, raid10, raid4, raid5, raid6".into(),
                    )
                }
            };
            let layout = match crate::shape::parse_layout(level, &d.layout) {
                Ok(l) => l,
                Err(e) => {
                    return bad(
                        &format!("{name}.layout"),
                        format!("'{}'", d.layout),
                        format!("a layout of {level}: {e}"),
                    )
                }
            };
            let min = match level {
                raidlab_geometry::Level::Linear | raidlab_geometry::Level::Raid0 => 1,
                raidlab_geometry::Level::Raid6 => 4,
                _ => 2,
            };
            if d.members < min || d.members > MAX_MEMBERS {
                return bad(
                    &format!("{name}.members"),
                    d.members,
                    format!("{min} to {MAX_MEMBERS} for {level}"),
                );
            }
            if i == 0 && self.slots.len() != d.members as usize {
                return bad(
                    "array.members",
                    d.members,
                    format!(
                        "{}, the number of slots the superblock lists",
                        self.slots.len()
                    ),
                );
            }
            if d.role >= d.members && !(i == 0 && d.role == ROLE_SPARE) {
                return bad(
                    &format!("{name}.role"),
                    d.role,
                    format!(
                        "0 to {} (a slot of the {}-member array){}",
                        d.members - 1,
                        d.members,
                        if i == 0 {
                            ", or a spare's 4294967295"
                        } else {
                            ""
                        }
                    ),
                );
            }
            let what_below = if i == 0 {
                "data_size".to_string()
            } else {
                format!("the capacity of {}", descs[i - 1].0)
            };
            if d.member_bytes == 0 || d.member_bytes > below {
                return bad(
                    &format!("{name}.member_bytes"),
                    d.member_bytes,
                    format!("1 to {below} ({what_below})"),
                );
            }
            if crate::shape::has_chunk(level) {
                let c = d.chunk_bytes;
                if c < 4096 || !c.is_power_of_two() || c > d.member_bytes {
                    return bad(
                        &format!("{name}.chunk_bytes"),
                        c,
                        format!(
                            "a power of two from 4096 to member_bytes ({})",
                            d.member_bytes
                        ),
                    );
                }
            } else if d.chunk_bytes != 0 {
                return bad(
                    &format!("{name}.chunk_bytes"),
                    d.chunk_bytes,
                    format!("0: {level} has no chunk"),
                );
            }
            // Keep capacity arithmetic (members × member_bytes, and raid10's copies) far from
            // overflowing 64 bits.
            if (d.members as u64).saturating_mul(d.member_bytes) > 1 << 60 {
                return bad(
                    &format!("{name}.member_bytes"),
                    d.member_bytes,
                    format!("at most 2^60 bytes over all {} members", d.members),
                );
            }
            let geo =
                crate::shape::geometry(level, layout, d.chunk_bytes, d.members, d.member_bytes)
                    .map_err(|e| format!("{name} does not describe an array: {e}"))?;
            below = geo.capacity();
            capacities.push(below);
            units.push(crate::shape::unit(&geo));
        }
        // A rebuild from an enclosing array counts in that array's bytes; the outermost array
        // has none above it.
        for (i, (name, d)) in descs.iter().enumerate() {
            if let Some(cp) = d.rebuild {
                match capacities.get(i + 1) {
                    Some(&cap) if cp <= cap => {}
                    Some(&cap) => {
                        return bad(
                            &format!("{name}.rebuild"),
                            cp,
                            format!("0 to {cap}, the capacity of {}", descs[i + 1].0),
                        )
                    }
                    None => {
                        return bad(
                            &format!("{name}.rebuild"),
                            cp,
                            "none: the outermost array is not rebuilt from above".into(),
                        )
                    }
                }
            }
        }
        // An enclosing array's pass counts in its own bytes; a leaf's own progress is
        // `initial_sync` of the superblock, in its members' bytes.
        for (i, (name, d)) in descs.iter().enumerate() {
            match (i, d.initial_sync) {
                (_, None) => {}
                (0, Some(cp)) => {
                    return bad(
                        &format!("{name}.initial_sync"),
                        cp,
                        "none: a leaf's own progress is the superblock's initial_sync".into(),
                    )
                }
                (_, Some(cp)) if cp > capacities[i] => {
                    return bad(
                        &format!("{name}.initial_sync"),
                        cp,
                        format!("0 to {}, the capacity of {name}", capacities[i]),
                    )
                }
                _ => {}
            }
        }
        let capacity = capacities[0];
        let regions = capacity.div_ceil(self.bitmap_region.max(1));
        if self.bitmap_region == 0 || regions > self.bitmap_bytes * 8 {
            return bad(
                "bitmap_region",
                self.bitmap_region,
                format!(
                    "at least {} bytes: the bitmap's {} bits must cover the array's {capacity} bytes",
                    capacity.div_ceil(self.bitmap_bytes * 8).max(1),
                    self.bitmap_bytes * 8
                ),
            );
        }
        if let Some(done) = self.initial_sync {
            if done > self.data_size {
                return bad(
                    "initial_sync",
                    done,
                    format!("0 to {}, the member's data_size", self.data_size),
                );
            }
        }
        // Spares are devices of their own: one uuid each, none holding a slot.
        for (i, u) in self.spares.iter().enumerate() {
            let taken = *u == [0; 16]
                || self.spares[..i].contains(u)
                || self.slots.iter().any(|s| s.dev_uuid == *u);
            if taken {
                return bad(
                    &format!("spares[{i}]"),
                    uuid_string(u),
                    "a device uuid of its own: not zero, not another spare's, not a slot's".into(),
                );
            }
        }
        let most = capacity.div_ceil(units[0]) * units[0];
        for (i, s) in self.slots.iter().enumerate() {
            if s.checkpoint > most {
                return bad(
                    &format!("slots[{i}].checkpoint"),
                    s.checkpoint,
                    format!("0 to {most}, the array's capacity"),
                );
            }
        }
        Ok(())
    }
}

fn encode_desc(w: &mut Writer, d: &ArrayDesc) {
    w.bytes(&d.uuid);
    w.str16(&d.level);
    w.str16(&d.layout);
    w.u64(d.chunk_bytes);
    w.u32(d.members);
    w.u32(d.role);
    w.0.push(d.dirty as u8);
    w.u64(d.member_bytes);
}

fn decode_desc(r: &mut Reader) -> Result<ArrayDesc, String> {
    Ok(ArrayDesc {
        uuid: r.uuid()?,
        level: r.str16()?,
        layout: r.str16()?,
        chunk_bytes: r.u64()?,
        members: r.u32()?,
        role: r.u32()?,
        dirty: r.take(1)?[0] != 0,
        member_bytes: r.u64()?,
        rebuild: None,
        initial_sync: None,
    })
}

struct Writer(Vec<u8>);
impl Writer {
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn str16(&mut self, s: &str) {
        self.str_n::<16>(s)
    }
    fn str_n<const N: usize>(&mut self, s: &str) {
        let mut b = [0u8; N];
        let n = s.len().min(N);
        b[..n].copy_from_slice(&s.as_bytes()[..n]);
        self.bytes(&b);
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}
impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.pos + n > SB_BYTES - 4 {
            return Err("superblock is truncated".into());
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn uuid(&mut self) -> Result<[u8; 16], String> {
        Ok(self.take(16)?.try_into().unwrap())
    }
    fn str16(&mut self) -> Result<String, String> {
        self.str_n::<16>()
    }
    fn str_n<const N: usize>(&mut self) -> Result<String, String> {
        let b = self.take(N)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(N);
        String::from_utf8(b[..end].to_vec())
            .map_err(|_| "superblock holds a name that is not UTF-8".to_string())
    }
}

/// Put the checksum of a superblock copy's first 4092 bytes into its last 4.
pub fn seal(buf: &mut [u8]) {
    let crc = crc32c::crc32c(&buf[..SB_BYTES - 4]);
    buf[SB_BYTES - 4..SB_BYTES].copy_from_slice(&crc.to_le_bytes());
}

/// Read both copies from a member of `member_size` bytes and return the newest valid one:
/// checksummed, and with every field within what the format and the member allow
/// ([`Superblock::check`]). A copy that fails the check is passed over for the other; when
/// neither passes, the error says what is wrong with the newer one.
pub fn read_newest(
    copy_a: &[u8],
    copy_b: &[u8],
    member_size: u64,
) -> Result<Option<Superblock>, String> {
    let judge = |buf: &[u8]| -> Option<Result<Superblock, (u64, String)>> {
        let seq = |b: &[u8]| u64::from_le_bytes(b[24..32].try_into().unwrap());
        match Superblock::decode(buf) {
            Ok(None) => None,
            Ok(Some(sb)) => Some(match sb.check(member_size) {
                Ok(()) => Ok(sb),
                Err(e) => Err((sb.seq, e)),
            }),
            Err(e) => Some(Err((seq(buf), e))),
        }
    };
    Ok(match (judge(copy_a), judge(copy_b)) {
        (Some(Ok(a)), Some(Ok(b))) => Some(if b.seq > a.seq { b } else { a }),
        (Some(Ok(a)), _) => Some(a),
        (_, Some(Ok(b))) => Some(b),
        (Some(Err((sa, ea))), Some(Err((sb, eb)))) => {
            return Err(if sb > sa { eb } else { ea });
        }
        (Some(Err((_, e))), None) | (None, Some(Err((_, e)))) => return Err(e),
        (None, None) => None,
    })
}

/// Where the data area starts for a bitmap of `bitmap_bytes`: the next 1 MiB boundary.
pub fn data_offset_for(bitmap_bytes: u64) -> u64 {
    (BITMAP_OFFSET + bitmap_bytes).div_ceil(DATA_ALIGN) * DATA_ALIGN
}

pub fn uuid_string(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A uuid written as [`uuid_string`] writes it (`8-4-4-4-12` hex digits); None otherwise.
pub fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let groups: Vec<&str> = s.split('-').collect();
    let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    if lens != [8, 4, 4, 4, 12] {
        return None;
    }
    let hex: String = groups.concat();
    let mut u = [0u8; 16];
    for (i, b) in u.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(u)
}

/// Magic of the record `remove` leaves at byte 0 of a member it takes out of an array, in
/// place of the superblock ([`Removed`]).
pub const REMOVED_MAGIC: &[u8; 8] = b"RAIDLABR";

/// What `remove` leaves on a member it took out (md's --remove then --re-add or --add of the
/// same disk is a common repair): which array and which slot it left. Its magic is not a
/// superblock's, so nothing that looks for an array's members takes it for one. `add` to
/// that same array takes the member back without `--force`: its data area holds the array's
/// old data for that slot, which the rebuild rewrites. Elsewhere (`create`, `add` to another
/// array) it is named as that array's data. One 4 KiB block, sealed like a superblock copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The leaf array it was removed from.
    pub array: [u8; 16],
    pub level: String,
    pub members: u32,
    /// The slot it held, or [`ROLE_SPARE`].
    pub role: u32,
}

impl Removed {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(SB_BYTES));
        w.bytes(REMOVED_MAGIC);
        w.bytes(&self.array);
        w.str16(&self.level);
        w.u32(self.members);
        w.u32(self.role);
        w.0.resize(SB_BYTES, 0);
        seal(&mut w.0);
        w.0
    }

    /// `None` unless `buf` is a whole, sealed record.
    pub fn decode(buf: &[u8]) -> Option<Removed> {
        if buf.len() < SB_BYTES || &buf[..8] != REMOVED_MAGIC {
            return None;
        }
        let stored = u32::from_le_bytes(buf[SB_BYTES - 4..SB_BYTES].try_into().unwrap());
        if crc32c::crc32c(&buf[..SB_BYTES - 4]) != stored {
            return None;
        }
        let mut r = Reader { buf, pos: 8 };
        Some(Removed {
            array: r.uuid().ok()?,
            level: r.str16().ok()?,
            members: r.u32().ok()?,
            role: r.u32().ok()?,
        })
    }

    /// "the raid5 array UUID (4 members), removed from slot 2", or "…, removed as a spare".
    pub fn describe(&self) -> String {
        let from = if self.role == ROLE_SPARE {
            "as a spare".to_string()
        } else {
            format!("from slot {}", self.role)
        };
        format!(
            "the {} array {} ({} members), removed {from}",
            self.level,
            uuid_string(&self.array),
            self.members
        )
    }
}

/// Which place in which array a member holds: "slot 2 of the raid5 array UUID (4 members)",
/// or "a spare of the raid5 array UUID (4 members)".
fn member_of(level: &str, array: &[u8; 16], members: u32, role: u32) -> String {
    let place = if role == ROLE_SPARE {
        "a spare".to_string()
    } else {
        format!("slot {role}")
    };
    format!(
        "{place} of the {level} array {} ({members} members)",
        uuid_string(array)
    )
}

impl Superblock {
    /// Which place in which array this member holds, in words, with the arrays enclosing its own: "slot 2 of the raid5 array UUID (4 members), inside
    /// the raid0 array UUID".
    pub fn describe_member(&self) -> String {
        let mut s = member_of(
            &self.array.level,
            &self.array.uuid,
            self.array.members,
            self.array.role,
        );
        for p in &self.parents {
            s.push_str(&format!(
                ", inside the {} array {}",
                p.level,
                uuid_string(&p.uuid)
            ));
        }
        s
    }

    /// The record `remove` leaves on this member.
    pub fn removed(&self) -> Removed {
        Removed {
            array: self.array.uuid,
            level: self.array.level.clone(),
            members: self.array.members,
            role: self.array.role,
        }
    }
}

/// A fresh random uuid (from the kernel's random source; falls back to time and pid).
pub fn new_uuid() -> [u8; 16] {
    let mut u = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut u))
        .is_ok();
    if !ok {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        u[..16].copy_from_slice(&(t ^ ((std::process::id() as u128) << 64)).to_le_bytes());
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Superblock {
        Superblock {
            events: 7,
            seq: 3,
            ctime_ns: 123,
            dev_uuid: [9; 16],
            array: ArrayDesc {
                uuid: [1; 16],
                level: "raid5".into(),
                layout: "left-symmetric".into(),
                chunk_bytes: 65536,
                members: 3,
                role: 1,
                dirty: true,
                member_bytes: 1 << 20,
                rebuild: Some(3 << 16),
                initial_sync: None,
            },
            parents: vec![ArrayDesc {
                uuid: [2; 16],
                level: "raid0".into(),
                layout: String::new(),
                chunk_bytes: 262144,
                members: 4,
                role: 2,
                dirty: false,
                member_bytes: 2 << 20,
                rebuild: None,
                initial_sync: Some(1 << 20),
            }],
            data_offset: 1 << 20,
            data_size: 1 << 20,
            bitmap_bytes: 4096,
            bitmap_region: 1 << 16,
            slots: vec![
                Slot {
                    dev_uuid: [4; 16],
                    state: SlotState::Active,
                    checkpoint: 0,
                },
                Slot {
                    dev_uuid: [9; 16],
                    state: SlotState::Rebuilding,
                    checkpoint: 4096,
                },
                Slot {
                    dev_uuid: [0; 16],
                    state: SlotState::Missing,
                    checkpoint: 0,
                },
            ],
            initial_sync: Some(1 << 19),
            spares: vec![[5; 16], [6; 16]],
            spare_events: 4,
        }
    }

    /// A member big enough for `sample()`.
    const SIZE: u64 = 4 << 20;

    #[test]
    fn the_sample_passes_its_checks() {
        assert_eq!(sample().check(SIZE), Ok(()));
        let mut spare = sample();
        spare.array.role = ROLE_SPARE;
        assert_eq!(spare.check(SIZE), Ok(()));
    }

    /// Every field changed to a value the format or the member cannot hold, in both copies
    /// with the checksum recomputed (as a bug or a hand edit would leave it): reading the
    /// member refuses it, naming the field, rather than letting assembly index, allocate or
    /// overlap by it.
    #[test]
    fn checksum_valid_superblocks_with_bad_fields_are_refused() {
        type Edit = (&'static str, fn(&mut Superblock));
        let edits: Vec<Edit> = vec![
            ("array.members", |s| s.array.members = 200),
            ("array.members", |s| s.array.members = 4),
            ("array.members", |s| s.array.members = 0),
            ("array.role", |s| s.array.role = 50),
            ("array.role", |s| s.array.role = 3),
            ("bitmap_bytes", |s| s.bitmap_bytes = (1 << 63) - 1),
            ("bitmap_bytes", |s| s.bitmap_bytes = 0),
            ("bitmap_bytes", |s| s.bitmap_bytes = 100),
            ("bitmap_bytes", |s| s.bitmap_bytes = DATA_ALIGN),
            ("data_offset", |s| s.data_offset = 0),
            ("data_offset", |s| s.data_offset = 4096),
            ("data_offset", |s| s.data_offset = (1 << 20) + 512),
            ("data_offset", |s| s.data_offset = !(DATA_ALIGN - 1)),
            ("data_size", |s| s.data_size = 0),
            ("data_size", |s| s.data_size = SIZE),
            ("data_size", |s| s.data_size = u64::MAX),
            ("bitmap_region", |s| s.bitmap_region = 0),
            ("bitmap_region", |s| s.bitmap_region = 1),
            ("array.chunk_bytes", |s| s.array.chunk_bytes = 0),
            ("array.chunk_bytes", |s| s.array.chunk_bytes = 3000),
            ("array.chunk_bytes", |s| s.array.chunk_bytes = 1 << 40),
            ("array.member_bytes", |s| s.array.member_bytes = 0),
            ("array.member_bytes", |s| s.array.member_bytes = 2 << 20),
            ("array.member_bytes", |s| s.array.member_bytes = u64::MAX),
            ("array.level", |s| s.array.level = "raid9".into()),
            ("array.layout", |s| s.array.layout = "diagonal".into()),
            ("array.rebuild", |s| s.array.rebuild = Some(1 << 40)),
            ("parents[0].members", |s| s.parents[0].members = 0),
            ("parents[0].members", |s| s.parents[0].members = 121),
            ("parents[0].role", |s| s.parents[0].role = 4),
            ("parents[0].role", |s| s.parents[0].role = ROLE_SPARE),
            ("parents[0].chunk_bytes", |s| {
                s.parents[0].chunk_bytes = 12345
            }),
            ("parents[0].member_bytes", |s| {
                s.parents[0].member_bytes = 3 << 20
            }),
            ("parents[0].member_bytes", |s| s.parents[0].member_bytes = 0),
            ("parents[0].level", |s| s.parents[0].level = String::new()),
            ("parents[0].rebuild", |s| s.parents[0].rebuild = Some(0)),
            ("parents[0].initial_sync", |s| {
                s.parents[0].initial_sync = Some((8 << 20) + 1)
            }),
            ("slots[1].checkpoint", |s| s.slots[1].checkpoint = u64::MAX),
            ("initial_sync", |s| s.initial_sync = Some((1 << 20) + 1)),
            ("spares[1]", |s| s.spares[1] = s.spares[0]),
            ("spares[0]", |s| s.spares[0] = [0; 16]),
            ("spares[1]", |s| s.spares[1] = s.slots[0].dev_uuid),
            ("array.chunk_bytes", |s| {
                s.array.level = "raid1".into();
                s.array.layout = String::new();
            }),
        ];
        for (field, edit) in edits {
            let mut sb = sample();
            edit(&mut sb);
            let enc = sb.encode();
            let got = read_newest(&enc, &enc, SIZE);
            let err = got.expect_err(field);
            assert!(
                err.starts_with(&format!("field {field} is ")) && err.contains("(valid: "),
                "{field}: {err}"
            );
            assert!(!err.contains('\n'), "{err}");
        }
        // Fields the struct does not carry, written into the bytes and resealed.
        for (at, field) in [(12, "size"), (72, "bitmap_offset")] {
            let mut enc = sample().encode();
            enc[at] ^= 0x10;
            seal(&mut enc);
            let err = read_newest(&enc, &enc, SIZE).expect_err(field);
            assert!(err.starts_with(&format!("field {field} is ")), "{err}");
        }
        // A leaf's own description carries no pass (not even encoded): refused if set.
        let mut sb = sample();
        sb.array.initial_sync = Some(0);
        let err = sb.check(SIZE).unwrap_err();
        assert!(err.starts_with("field array.initial_sync is "), "{err}");
        // A member too small for the data area the superblock describes.
        let err =
            read_newest(&sample().encode(), &sample().encode(), (2 << 20) - 4096).unwrap_err();
        assert!(err.starts_with("field data_size is "), "{err}");
    }

    #[test]
    fn a_copy_with_bad_fields_is_passed_over_for_the_good_one() {
        let good = sample();
        let mut bad = sample();
        bad.seq = 9;
        bad.array.members = 200;
        let sb = read_newest(&bad.encode(), &good.encode(), SIZE)
            .unwrap()
            .unwrap();
        assert_eq!(sb, good);
    }

    #[test]
    fn round_trips() {
        let sb = sample();
        let enc = sb.encode();
        assert_eq!(enc.len(), SB_BYTES);
        assert_eq!(&enc[..8], MAGIC);
        assert_eq!(Superblock::decode(&enc).unwrap(), Some(sb));
    }

    #[test]
    fn corrupt_copy_is_ignored_and_newer_copy_wins() {
        let mut a = sample();
        a.seq = 5;
        let mut b = sample();
        b.seq = 6;
        b.events = 8;
        let ea = a.encode();
        let mut eb = b.encode();
        assert_eq!(read_newest(&ea, &eb, SIZE).unwrap().unwrap().events, 8);
        eb[100] ^= 1; // torn write of copy B
        assert_eq!(Superblock::decode(&eb).unwrap(), None);
        assert_eq!(read_newest(&ea, &eb, SIZE).unwrap().unwrap().events, 7);
        assert_eq!(
            read_newest(&[0u8; SB_BYTES], &[0u8; SB_BYTES], SIZE).unwrap(),
            None
        );
    }

    #[test]
    fn long_layout_names_survive_and_old_superblocks_still_decode() {
        let mut sb = sample();
        sb.array.level = "raid6".into();
        sb.array.layout = "right-asymmetric-6".into();
        sb.parents[0].layout = "ddf-zero-restart".into();
        assert_eq!(Superblock::decode(&sb.encode()).unwrap(), Some(sb.clone()));
        // A superblock from before the trailers: zeros after the slots, 16-byte names only,
        // no rebuild from an enclosing array, no initial sync under way.
        let mut old = sample();
        old.array.rebuild = None;
        old.initial_sync = None;
        old.spares.clear();
        old.spare_events = 0;
        old.parents[0].initial_sync = None;
        let mut enc = old.encode();
        let slots_end = enc.windows(4).position(|w| w == LONG_NAMES_TAG).unwrap();
        enc[slots_end..SB_BYTES - 4].fill(0);
        let crc = crc32c::crc32c(&enc[..SB_BYTES - 4]);
        enc[SB_BYTES - 4..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(Superblock::decode(&enc).unwrap(), Some(old));
    }

    /// The initial sync's trailer came last: a superblock written before it (zeros where its
    /// tag goes) reads as synced, as every array then was; one with it keeps its progress,
    /// none (synced) included.
    #[test]
    fn the_initial_sync_trailer_round_trips_and_its_absence_means_synced() {
        for state in [Some(0), Some(1 << 19), Some(1 << 20), None] {
            let mut sb = sample();
            sb.initial_sync = state;
            assert_eq!(Superblock::decode(&sb.encode()).unwrap(), Some(sb));
        }
        let mut enc = sample().encode();
        let tag = enc.windows(4).position(|w| w == INITIAL_SYNC_TAG).unwrap();
        enc[tag..SB_BYTES - 4].fill(0);
        seal(&mut enc);
        let mut before = sample();
        before.initial_sync = None;
        before.spares.clear();
        before.spare_events = 0;
        before.parents[0].initial_sync = None;
        assert_eq!(read_newest(&enc, &enc, SIZE).unwrap(), Some(before));
    }

    /// The spares trailer came after the initial sync's: a superblock written before it
    /// (zeros where its tag goes) records no spares and keeps everything else; one with it
    /// keeps its spares in the order they were added, none included.
    #[test]
    fn the_spares_trailer_round_trips_in_order_and_its_absence_means_none_recorded() {
        for spares in [
            vec![],
            vec![[6; 16], [5; 16]],
            vec![[5; 16], [6; 16], [7; 16]],
        ] {
            let mut sb = sample();
            sb.spares = spares;
            assert_eq!(Superblock::decode(&sb.encode()).unwrap(), Some(sb));
        }
        let mut enc = sample().encode();
        let tag = enc.windows(4).position(|w| w == SPARES_TAG).unwrap();
        enc[tag..SB_BYTES - 4].fill(0);
        seal(&mut enc);
        let mut before = sample();
        before.spares.clear();
        before.spare_events = 0;
        before.parents[0].initial_sync = None;
        assert_eq!(read_newest(&enc, &enc, SIZE).unwrap(), Some(before));
        // More spares than any superblock records: refused, not read past.
        let mut enc = sample().encode();
        let at = tag + 4 + 8;
        enc[at..at + 4].copy_from_slice(&(MAX_SPARES as u32 + 1).to_le_bytes());
        seal(&mut enc);
        let e = Superblock::decode(&enc).unwrap_err();
        assert!(e.contains("spares") && !e.contains('\n'), "{e}");
    }

    /// The enclosing arrays' passes came after the spares: a superblock written before them
    /// (zeros where the tag goes) reads as no pass started, so a resumed sync does the passes
    /// from the start; one with them keeps each enclosing array's checkpoint, none included.
    #[test]
    fn the_enclosing_passes_trailer_round_trips_and_its_absence_means_not_started() {
        for cps in [
            [None, None],
            [Some(0), None],
            [Some(1 << 20), Some(3 << 20)],
        ] {
            let mut sb = sample();
            sb.parents.push(ArrayDesc {
                uuid: [3; 16],
                level: "raid1".into(),
                layout: String::new(),
                chunk_bytes: 0,
                members: 2,
                role: 1,
                dirty: false,
                member_bytes: 8 << 20,
                rebuild: None,
                initial_sync: None,
            });
            for (d, cp) in sb.parents.iter_mut().zip(cps) {
                d.initial_sync = cp;
            }
            assert_eq!(sb.check(SIZE), Ok(()));
            assert_eq!(Superblock::decode(&sb.encode()).unwrap(), Some(sb));
        }
        let mut enc = sample().encode();
        let tag = enc
            .windows(4)
            .position(|w| w == ENCLOSING_SYNC_TAG)
            .unwrap();
        enc[tag..SB_BYTES - 4].fill(0);
        seal(&mut enc);
        let mut before = sample();
        before.parents[0].initial_sync = None;
        assert_eq!(read_newest(&enc, &enc, SIZE).unwrap(), Some(before));
    }

    /// Work in progress that an older raidlab would drop (an initial sync, a rebuild from
    /// an enclosing array) is written as version 2, which that raidlab refuses; without it the
    /// superblock stays version 1. Both read back; an unknown version is refused by name.
    #[test]
    fn work_in_progress_is_written_as_a_version_older_raidlabs_refuse() {
        let version = |sb: &Superblock| u32::from_le_bytes(sb.encode()[8..12].try_into().unwrap());
        let mut done = sample();
        done.initial_sync = None;
        for d in std::iter::once(&mut done.array).chain(done.parents.iter_mut()) {
            d.rebuild = None;
            d.initial_sync = None;
        }
        assert_eq!(version(&done), VERSION);
        let mut syncing = done.clone();
        syncing.initial_sync = Some(0);
        let mut from_above = done.clone();
        from_above.parents[0].rebuild = Some(1 << 20);
        let mut passing = done.clone();
        passing.parents[0].initial_sync = Some(1 << 20);
        for sb in [&syncing, &from_above, &passing] {
            assert_eq!(version(sb), VERSION_IN_PROGRESS);
            assert_eq!(Superblock::decode(&sb.encode()).unwrap().as_ref(), Some(sb));
        }
        assert_eq!(
            Superblock::decode(&done.encode()).unwrap(),
            Some(done.clone())
        );
        let mut enc = done.encode();
        enc[8..12].copy_from_slice(&3u32.to_le_bytes());
        seal(&mut enc);
        let e = Superblock::decode(&enc).unwrap_err();
        assert!(e.contains("superblock version 3"), "{e}");
    }

    #[test]
    fn data_offset_is_aligned_past_the_bitmap() {
        assert_eq!(data_offset_for(0), 1 << 20);
        assert_eq!(data_offset_for((1 << 20) - 8192), 1 << 20);
        assert_eq!(data_offset_for((1 << 20) - 8191), 2 << 20);
    }

    #[test]
    fn the_largest_array_fits() {
        let mut sb = sample();
        sb.parents = vec![sb.parents[0].clone(); MAX_PARENTS];
        sb.slots = vec![sb.slots[0].clone(); MAX_MEMBERS as usize];
        sb.spares = (0..MAX_SPARES).map(|i| [100 + i as u8; 16]).collect();
        assert_eq!(Superblock::decode(&sb.encode()).unwrap(), Some(sb));
    }
}
