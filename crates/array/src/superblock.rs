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
//! copy. Integers are little-endian.
//!
//! A member of a nested array (RAID 0 over RAID 5s) carries its own array's description plus
//! one description per enclosing array (`parents`), innermost first, each with the role the
//! child array plays in it, so the whole tree assembles from its leaves alone.
//!
//! Level and layout names sit in 16-byte fields, too short for some of mdadm's layout names
//! (`right-asymmetric-6` is 18 bytes). After the slots comes a trailer: the tag `LNAM`, then
//! each description's layout name in full (32 bytes each, the array's first, then the parents').
//! Superblocks without the trailer (zeros there) keep their 16-byte names.

pub const MAGIC: &[u8; 8] = b"RAIDLABA";
pub const VERSION: u32 = 1;
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
}

impl Superblock {
    pub fn is_spare(&self) -> bool {
        self.array.role == ROLE_SPARE
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(SB_BYTES));
        w.bytes(MAGIC);
        w.u32(VERSION);
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
        assert!(
            w.0.len() <= SB_BYTES - 4,
            "superblock overflow: member count is bounded by MAX_MEMBERS"
        );
        w.0.resize(SB_BYTES - 4, 0);
        let crc = crc32c::crc32c(&w.0);
        w.u32(crc);
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
        if version != VERSION {
            return Err(format!(
                "superblock version {version} (this raidlab reads version {VERSION})"
            ));
        }
        let _size = r.u32()?;
        let events = r.u64()?;
        let seq = r.u64()?;
        let ctime_ns = r.u64()?;
        let dev_uuid = r.uuid()?;
        let data_offset = r.u64()?;
        let data_size = r.u64()?;
        let _bitmap_offset = r.u64()?;
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
        }))
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

/// Read both copies from a member and return the newest valid one.
pub fn read_newest(copy_a: &[u8], copy_b: &[u8]) -> Result<Option<Superblock>, String> {
    let a = Superblock::decode(copy_a)?;
    let b = Superblock::decode(copy_b)?;
    Ok(match (a, b) {
        (Some(a), Some(b)) => Some(if b.seq > a.seq { b } else { a }),
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b),
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
            }],
            data_offset: 1 << 20,
            data_size: 1 << 20,
            bitmap_bytes: 512,
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
        }
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
        assert_eq!(read_newest(&ea, &eb).unwrap().unwrap().events, 8);
        eb[100] ^= 1; // torn write of copy B
        assert_eq!(Superblock::decode(&eb).unwrap(), None);
        assert_eq!(read_newest(&ea, &eb).unwrap().unwrap().events, 7);
        assert_eq!(
            read_newest(&[0u8; SB_BYTES], &[0u8; SB_BYTES]).unwrap(),
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
        // no rebuild from an enclosing array.
        let mut old = sample();
        old.array.rebuild = None;
        let mut enc = old.encode();
        let slots_end = enc.windows(4).position(|w| w == LONG_NAMES_TAG).unwrap();
        enc[slots_end..SB_BYTES - 4].fill(0);
        let crc = crc32c::crc32c(&enc[..SB_BYTES - 4]);
        enc[SB_BYTES - 4..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(Superblock::decode(&enc).unwrap(), Some(old));
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
        assert_eq!(Superblock::decode(&sb.encode()).unwrap(), Some(sb));
    }
}
