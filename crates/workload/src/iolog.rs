//! fio's I/O logs (what fio's `write_iolog` writes and `read_iolog` replays): a job's
//! requests as text, one per line, replayed by either executor against any target.
//!
//! Two versions are read, as fio 3.33 reads them (its manual's "Trace file formats"):
//! - version 2: `FILE ACTION` and `FILE ACTION OFFSET LENGTH`; timing by `wait` actions
//!   (microseconds after the previous wait; under 100 dropped, as fio drops them);
//! - version 3: the same lines, each after a timestamp in microseconds from the run's start
//!   (no `wait`). fio 3.33 writes this version.
//!
//! Actions: `add` (names a file), `open`, `close` (raidlab keeps a job's files open: checked
//! only), `read`, `write`, `sync`, `datasync`, `trim`, `wait`.
//!
//! blktrace's binary traces are read as fio 3.33 replays them ([`parse_blktrace`]): the
//! queue events (`Q`) of the block layer's trace, merged into one file in time order
//! (`blkparse -d`), each a read or write on its device at its time; a flush is a sync, a
//! discard a trim. The depth the trace shows (queue events between completions, at most
//! 1024) becomes the job's `iodepth` unless it gives one.
//!
//! A parsed [`Trace`] is plain data: requests with their due times and the syncs between
//! them. Reading the file is the caller's (this crate does no I/O); [`JobStream`] replays a
//! trace as a job's requests.
//!
//! [`JobStream`]: crate::JobStream

use crate::pace::SyncKind;
use crate::stream::Dir;
use serde::{Deserialize, Serialize};

/// The first line of the versions read.
const V2: &str = "fio version 2 iolog";
const V3: &str = "fio version 3 iolog";

/// What of a trace `replay_skip` leaves out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySkip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub sync: bool,
}

impl ReplaySkip {
    /// fio's `replay_skip`: a comma-separated list of read, write, trim, sync. An empty
    /// value or an empty part (`read,`) is refused, as fio refuses it.
    pub fn parse(text: &str) -> Result<ReplaySkip, String> {
        const VALID: &str = "valid: read, write, trim, sync, comma-separated";
        let mut s = ReplaySkip::default();
        let text = text.trim();
        if text.is_empty() {
            return Err(format!("empty value ({VALID})"));
        }
        for part in text.split(',').map(str::trim) {
            match part {
                "" => return Err(format!("'{text}' has an empty part ({VALID})")),
                "read" => s.read = true,
                "write" => s.write = true,
                "trim" => s.trim = true,
                "sync" => s.sync = true,
                other => {
                    return Err(format!(
                        "'{other}' is not a kind of request to skip ({VALID})"
                    ))
                }
            }
        }
        Ok(s)
    }

    pub fn is_default(&self) -> bool {
        *self == ReplaySkip::default()
    }

    pub fn text(&self) -> String {
        let names = [
            (self.read, "read"),
            (self.write, "write"),
            (self.trim, "trim"),
            (self.sync, "sync"),
        ];
        let on: Vec<&str> = names.iter().filter(|(b, _)| *b).map(|(_, n)| *n).collect();
        on.join(",")
    }
}

/// How a job replays its trace (fio's `replay_*` options).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayOptions {
    /// `replay_no_stall`: requests as fast as the queue takes them, in the trace's order.
    pub no_stall: bool,
    /// `replay_time_scale`: percent of the trace's rate (200: twice as fast).
    pub time_scale: u32,
    /// `replay_redirect`: every file of the trace is this one target.
    pub redirect: Option<String>,
    /// `replay_align`: offsets rounded down to a multiple of this power of two (0: as given).
    pub align: u64,
    /// `replay_scale`: offsets divided by this (1: as given).
    pub scale: u64,
    /// `replay_skip`.
    pub skip: ReplaySkip,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            no_stall: false,
            time_scale: 100,
            redirect: None,
            align: 0,
            scale: 1,
            skip: ReplaySkip::default(),
        }
    }
}

impl ReplayOptions {
    pub fn is_default(&self) -> bool {
        *self == ReplayOptions::default()
    }

    /// A request's due time, ns after the job's start, from its time in the trace (`ns`):
    /// scaled by `replay_time_scale`, 0 under `replay_no_stall`; None past 2^64 ns.
    fn due_ns(&self, ns: u128) -> Option<u64> {
        if self.no_stall {
            return Some(0);
        }
        u64::try_from(ns * 100 / u128::from(self.time_scale.max(1))).ok()
    }

    /// Whether `replay_skip` leaves out requests of `dir`.
    fn skips(&self, dir: Dir) -> bool {
        match dir {
            Dir::Read => self.skip.read,
            Dir::Write => self.skip.write,
            Dir::Trim => self.skip.trim,
        }
    }

    /// A request's offset as replayed: divided by `replay_scale`, rounded down to
    /// `replay_align`.
    fn place(&self, offset: u64) -> u64 {
        let off = offset / self.scale.max(1);
        if self.align > 1 {
            off & !(self.align - 1)
        } else {
            off
        }
    }
}

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceIo {
    /// Which of the trace's `files`.
    pub file: u32,
    pub dir: Dir,
    pub offset: u64,
    pub len: u64,
    /// When it is due, ns after the job's start (0 for every request of an untimed replay).
    pub due_ns: u64,
    /// Its line in the trace (a blktrace's: its record), from 1 (for messages).
    pub line: u32,
}

/// A parsed trace, with the job's `replay_*` options already applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Where it was read from (for messages).
    pub origin: String,
    /// The files it names, in the order first added (one, the redirect, under
    /// `replay_redirect`).
    pub files: Vec<String>,
    pub ios: Vec<TraceIo>,
    /// Syncs between the requests: (the index in `ios` of the first request after it,
    /// kind), in order. A sync after the last request has index `ios.len()`.
    pub syncs: Vec<(usize, SyncKind)>,
    /// Whether requests wait for their due times (a timed trace, not `replay_no_stall`).
    pub timed: bool,
    /// A blktrace's depth, for the job's `iodepth` when it gives none (None: a text log).
    pub depth: Option<u32>,
}

impl Trace {
    /// An empty trace read from `origin` with `opts` (`depth`: a blktrace's, None for a
    /// text log).
    fn new(origin: &str, opts: &ReplayOptions, depth: Option<u32>) -> Trace {
        Trace {
            origin: origin.to_string(),
            files: Vec::new(),
            ios: Vec::new(),
            syncs: Vec::new(),
            timed: !opts.no_stall,
            depth,
        }
    }

    /// The index of a file the trace names for the first time: the redirect's one target
    /// (added once), else the file `name` gives, added.
    fn add_file(
        &mut self,
        opts: &ReplayOptions,
        name: impl FnOnce() -> Result<String, String>,
    ) -> Result<u32, String> {
        if let Some(r) = &opts.redirect {
            if self.files.is_empty() {
                self.files.push(r.clone());
            }
            return Ok(0);
        }
        self.files.push(name()?);
        Ok((self.files.len() - 1) as u32)
    }

    /// A sync before the next request (one, however many files a log names it for: the
    /// job syncs all of its files at once).
    fn push_sync(&mut self, kind: SyncKind) {
        if self.syncs.last() != Some(&(self.ios.len(), kind)) {
            self.syncs.push((self.ios.len(), kind));
        }
    }

    /// The trace as read, or why it has nothing to replay; each request never due before
    /// the one ahead of it (a log's lines are in issue order; a clock that went back is
    /// taken as no wait).
    fn finish(mut self, opts: &ReplayOptions, what: &str) -> Result<Trace, String> {
        if self.ios.is_empty() {
            return Err(format!(
                "{} has no reads or writes to replay{what}{}",
                self.origin,
                if opts.skip.is_default() {
                    ""
                } else {
                    " (after replay_skip)"
                }
            ));
        }
        let mut latest = 0;
        for r in &mut self.ios {
            latest = latest.max(r.due_ns);
            r.due_ns = latest;
        }
        Ok(self)
    }

    /// Bytes the requests transfer.
    pub fn bytes(&self) -> u64 {
        self.ios.iter().map(|r| r.len).sum()
    }

    /// The end of the furthest request to file `k` (0 if none goes there).
    pub fn extent(&self, k: usize) -> u64 {
        self.ios
            .iter()
            .filter(|r| r.file as usize == k)
            .map(|r| r.offset + r.len)
            .max()
            .unwrap_or(0)
    }

    /// Whether any request reads, or writes.
    pub fn has(&self, dir: Dir) -> bool {
        self.ios.iter().any(|r| r.dir == dir)
    }

    /// The first request to file `k` that is not a multiple of `align` in offset or length,
    /// as `line N (offset O, length L)`, for direct I/O's check.
    pub fn misaligned(&self, k: usize, align: u64) -> Option<String> {
        if align <= 1 {
            return None;
        }
        self.ios
            .iter()
            .find(|r| r.file as usize == k && (r.offset % align != 0 || r.len % align != 0))
            .map(|r| {
                format!(
                    "{} {} (offset {}, length {})",
                    self.unit(),
                    r.line,
                    r.offset,
                    r.len
                )
            })
    }

    /// Where request `io` is in the trace, for messages: `ORIGIN line N` (a blktrace's
    /// `ORIGIN record N`).
    pub fn at(&self, io: &TraceIo) -> String {
        format!("{} {} {}", self.origin, self.unit(), io.line)
    }

    fn unit(&self) -> &'static str {
        if self.depth.is_some() {
            "record"
        } else {
            "line"
        }
    }
}

/// Parse a trace's text; `origin` names it in messages (`trace.log line 7: …`).
pub fn parse(text: &str, origin: &str, opts: &ReplayOptions) -> Result<Trace, String> {
    let mut lines = text.lines().enumerate();
    let first = lines.next().map(|(_, l)| l.trim()).unwrap_or("");
    let v3 = match first {
        V3 => true,
        V2 => false,
        _ => {
            return Err(format!(
                "{origin} is not a fio iolog: its first line must be '{V2}' or '{V3}' (valid: a fio iolog, or a blktrace binary trace)"
            ))
        }
    };
    let mut t = Trace::new(origin, opts, None);
    // Every file the trace adds: its name, its index in `t.files`, whether it is open.
    let mut added: Vec<(String, u32, bool)> = Vec::new();
    // A version 2 trace's clock: the sum of its waits, µs.
    let mut clock_us: u64 = 0;
    for (i, raw) in lines {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let at = |m: String| format!("{origin} line {n}: {m}");
        let mut words = line.split_whitespace();
        let ts_us = if v3 {
            let w = words.next().unwrap_or("");
            Some(w.parse::<u64>().map_err(|_| {
                at(format!(
                    "'{w}' is not a timestamp (valid: microseconds from the run's start, as version 3 lines begin)"
                ))
            })?)
        } else {
            None
        };
        let (Some(name), Some(action)) = (words.next(), words.next()) else {
            return Err(at(format!(
                "'{line}' is not a line of an iolog (valid: {}FILE ACTION [OFFSET LENGTH])",
                if v3 { "TIMESTAMP " } else { "" }
            )));
        };
        let mut number = |what: &str| -> Result<Option<u64>, String> {
            match words.next() {
                None => Ok(None),
                Some(w) => w.parse::<u64>().map(Some).map_err(|_| {
                    at(format!(
                        "{action}: '{w}' is not a byte {what} (valid: a whole number)"
                    ))
                }),
            }
        };
        let offset = number("offset")?;
        let len = number("length")?;
        // Which of the added files the line names.
        let known = added.iter().position(|(f, _, _)| f == name);
        let not_added = || {
            at(format!(
                "{action} on {name}, which the trace has not added (valid: a '{name} add' line before it)"
            ))
        };
        match action {
            "add" => {
                if known.is_none() {
                    let k = t.add_file(opts, || Ok(name.to_string()))?;
                    added.push((name.to_string(), k, false));
                }
            }
            "open" | "close" => {
                let i = known.ok_or_else(not_added)?;
                added[i].2 = action == "open";
            }
            "wait" => {
                if v3 {
                    return Err(at(
                        "wait is not an action of version 3 (valid: its timestamps say when)".into(),
                    ));
                }
                let us = offset.unwrap_or(0);
                // (fio drops waits under 100 µs.)
                if us >= 100 {
                    clock_us = clock_us.saturating_add(us);
                }
            }
            "read" | "write" | "sync" | "datasync" | "trim" => {
                let (_, file, open) = added[known.ok_or_else(not_added)?];
                if !open {
                    return Err(at(format!(
                        "{action} on {name}, which is not open (valid: a '{name} open' line before it)"
                    )));
                }
                let due_us = ts_us.unwrap_or(clock_us);
                let due_ns = opts
                    .due_ns(u128::from(due_us) * 1000)
                    .ok_or_else(|| at(format!("timestamp {due_us} is too late")))?;
                match action {
                    "sync" | "datasync" => {
                        if !opts.skip.sync {
                            let kind = if action == "sync" {
                                SyncKind::Fsync
                            } else {
                                SyncKind::Fdatasync
                            };
                            t.push_sync(kind);
                        }
                    }
                    _ => {
                        let dir = match action {
                            "read" => Dir::Read,
                            "trim" => Dir::Trim,
                            _ => Dir::Write,
                        };
                        if opts.skips(dir) {
                            continue;
                        }
                        let (Some(off), Some(len)) = (offset, len) else {
                            return Err(at(format!(
                                "{action} needs an offset and a length (valid: {name} {action} OFFSET LENGTH)"
                            )));
                        };
                        if len == 0 {
                            return Err(at(format!("{action} of 0 bytes (valid: a length of 1 byte or more)")));
                        }
                        let off = opts.place(off);
                        if off.checked_add(len).is_none() {
                            return Err(at(format!("{action} past byte 2^64")));
                        }
                        let line = u32::try_from(n).unwrap_or(u32::MAX);
                        t.ios.push(TraceIo { file, dir, offset: off, len, due_ns, line });
                    }
                }
            }
            other => {
                return Err(at(format!(
                    "'{other}' is not an action (valid: add, open, close, read, write, sync, datasync, trim{})",
                    if v3 { "" } else { ", wait" }
                )))
            }
        }
    }
    t.finish(opts, "")
}

// blktrace's binary format (the kernel's include/uapi/linux/blktrace_api.h): records of a
// 48-byte header (`struct blk_io_trace`: magic, sequence, time in ns, sector, bytes,
// action, pid, device, cpu, error, pdu length) and `pdu_len` bytes after it, in the
// tracing machine's byte order.

/// A record's header, bytes.
const BLK_RECORD: usize = 48;
/// The magic in the top 24 bits of a record's first word, and the version in its low 8.
const BLK_MAGIC: u32 = 0x6561_7400;
const BLK_VERSION: u32 = 7;
/// The action's low 16 bits name what happened: queued, merged into a queued request,
/// completed.
const BLK_TA_QUEUE: u32 = 1;
const BLK_TA_BACKMERGE: u32 = 2;
const BLK_TA_FRONTMERGE: u32 = 3;
const BLK_TA_COMPLETE: u32 = 8;
/// The action's high 16 bits are categories (`BLK_TC_*` shifted by 16).
const BLK_TC_READ: u32 = 1 << 16;
const BLK_TC_WRITE: u32 = 1 << 17;
const BLK_TC_FLUSH: u32 = 1 << 18;
const BLK_TC_NOTIFY: u32 = 1 << 26;
const BLK_TC_DISCARD: u32 = 1 << 29;
/// The depth fio takes at most from a trace (stacked devices may log no completions).
const BLK_MAX_DEPTH: u32 = 1024;

/// Whether `bytes` begin with a blktrace record (in either byte order).
pub fn is_blktrace(bytes: &[u8]) -> bool {
    blk_order(bytes).is_some()
}

/// The byte order of a trace's records: true for little-endian.
fn blk_order(bytes: &[u8]) -> Option<bool> {
    let w: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    if u32::from_le_bytes(w) & !0xff == BLK_MAGIC {
        Some(true)
    } else if u32::from_be_bytes(w) & !0xff == BLK_MAGIC {
        Some(false)
    } else {
        None
    }
}

/// One record's header, the fields a replay reads.
struct BlkRecord {
    magic: u32,
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    device: u32,
    pdu_len: u16,
}

impl BlkRecord {
    fn read(b: &[u8], le: bool) -> BlkRecord {
        let u32_at = |i: usize| {
            let w: [u8; 4] = b[i..i + 4].try_into().expect("4 bytes");
            if le {
                u32::from_le_bytes(w)
            } else {
                u32::from_be_bytes(w)
            }
        };
        let u64_at = |i: usize| {
            let w: [u8; 8] = b[i..i + 8].try_into().expect("8 bytes");
            if le {
                u64::from_le_bytes(w)
            } else {
                u64::from_be_bytes(w)
            }
        };
        let w: [u8; 2] = b[46..48].try_into().expect("2 bytes");
        BlkRecord {
            magic: u32_at(0),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
            pdu_len: if le {
                u16::from_le_bytes(w)
            } else {
                u16::from_be_bytes(w)
            },
        }
    }

    /// The direction its categories give, for the depth count (as fio: read, write, trim).
    fn depth_dir(&self) -> Option<usize> {
        if self.action & BLK_TC_READ != 0 {
            Some(0)
        } else if self.action & BLK_TC_WRITE != 0 {
            Some(1)
        } else if self.action & BLK_TC_DISCARD != 0 {
            Some(2)
        } else {
            None
        }
    }
}

/// Parse a blktrace binary trace (one file, in time order, as `blkparse -d` merges a
/// trace's per-CPU files), as fio 3.33 replays one:
/// - each queue event that is not a notification is a request, due its time after the
///   first queue event's (scaled by `replay_time_scale`); completions and the rest only
///   count towards the depth;
/// - a flush is a sync (`fsync`); a discard a trim; otherwise a write when its categories
///   say write, else a read; at sector × 512 bytes on its device;
/// - a read or write of no bytes is passed over (fio warns and passes it over);
/// - `replay_scale` divides offsets and `replay_align` rounds offsets down and lengths up
///   to its multiple;
/// - each device (major and minor number) is a file, named by `device` (a block device
///   under /dev, found by the caller: this crate does no I/O), or the redirect's one target;
/// - the depth: the most queue events of one direction between two completions of it
///   (merges count back), at most 1024, at least 1.
pub fn parse_blktrace(
    bytes: &[u8],
    origin: &str,
    opts: &ReplayOptions,
    device: &mut dyn FnMut(u32, u32) -> Option<String>,
) -> Result<Trace, String> {
    let Some(le) = blk_order(bytes) else {
        return Err(format!(
            "{origin} is not a blktrace (its first word is not blktrace's magic)"
        ));
    };
    let mut t = Trace::new(origin, opts, Some(1));
    // The devices seen: (device number, index in `t.files`).
    let mut devices: Vec<(u32, u32)> = Vec::new();
    let mut this_depth = [0u32; 3];
    let mut depth = [0u32; 3];
    // Reads, writes and trims replayed.
    let mut counts = [0u64; 3];
    let mut first_queue: Option<u64> = None;
    let mut at = 0usize;
    let mut n: u32 = 0;
    while at < bytes.len() {
        n = n.saturating_add(1);
        let start = at;
        let here = |m: String| format!("{origin} record {n} (byte {start}): {m}");
        let Some(head) = bytes.get(at..at + BLK_RECORD) else {
            return Err(here(format!(
                "cut short, {} of its {BLK_RECORD} bytes (valid: whole records; a trace cut while written ends at its last whole record)",
                bytes.len() - start
            )));
        };
        let r = BlkRecord::read(head, le);
        if r.magic & !0xff != BLK_MAGIC {
            return Err(here(format!(
                "bad magic {:#010x} (valid: {BLK_MAGIC:#010x} and the version)",
                r.magic
            )));
        }
        if r.magic & 0xff != BLK_VERSION {
            return Err(here(format!(
                "blktrace version {} (valid: {BLK_VERSION}, what blktrace writes)",
                r.magic & 0xff
            )));
        }
        at += BLK_RECORD + usize::from(r.pdu_len);
        if at > bytes.len() {
            return Err(here(format!(
                "its {} bytes of data run past the trace's end (valid: whole records)",
                r.pdu_len
            )));
        }
        if r.action & BLK_TC_NOTIFY != 0 {
            continue;
        }
        let what = r.action & 0xffff;
        if let Some(d) = r.depth_dir() {
            match what {
                BLK_TA_QUEUE => this_depth[d] += 1,
                BLK_TA_BACKMERGE | BLK_TA_FRONTMERGE => {
                    this_depth[d] = this_depth[d].saturating_sub(1)
                }
                BLK_TA_COMPLETE => {
                    depth[d] = depth[d].max(this_depth[d]);
                    this_depth[d] = 0;
                }
                _ => {}
            }
        }
        if what != BLK_TA_QUEUE {
            continue;
        }
        let first = *first_queue.get_or_insert(r.time);
        let due_ns = opts
            .due_ns(u128::from(r.time.saturating_sub(first)))
            .ok_or_else(|| here(format!("time {} ns is too late", r.time)))?;
        let mut file = |t: &mut Trace| -> Result<u32, String> {
            if let Some(&(_, k)) = devices.iter().find(|(d, _)| *d == r.device) {
                return Ok(k);
            }
            let k = t.add_file(opts, || {
                let (major, minor) = (r.device >> 20, r.device & 0xf_ffff);
                device(major, minor).ok_or_else(|| {
                    here(format!(
                        "device {major}:{minor} is not a block device under /dev here (valid: replay_redirect=TARGET to replay it on a file, device or sim: target)"
                    ))
                })
            })?;
            devices.push((r.device, k));
            Ok(k)
        };
        if r.action & BLK_TC_FLUSH != 0 {
            if !opts.skip.sync {
                file(&mut t)?;
                t.push_sync(SyncKind::Fsync);
            }
            continue;
        }
        let dir = if r.action & BLK_TC_DISCARD != 0 {
            Dir::Trim
        } else if r.action & BLK_TC_WRITE != 0 {
            Dir::Write
        } else {
            Dir::Read
        };
        if opts.skips(dir) || r.bytes == 0 {
            continue;
        }
        let k = file(&mut t)?;
        counts[dir as usize] += 1;
        let offset = opts.place(
            r.sector
                .checked_mul(512)
                .ok_or_else(|| here(format!("sector {} is past byte 2^64", r.sector)))?,
        );
        let mut len = u64::from(r.bytes);
        if opts.align > 1 {
            len = len.div_ceil(opts.align) * opts.align;
        }
        if offset.checked_add(len).is_none() {
            return Err(here("its request runs past byte 2^64".into()));
        }
        t.ios.push(TraceIo {
            file: k,
            dir,
            offset,
            len,
            due_ns,
            line: n,
        });
    }
    // (As fio: each direction's depth at most 1024, and 1 where requests went but no
    // completion was logged; the job's the most of them.)
    let most = (0..3)
        .map(|d| match depth[d] {
            0 if counts[d] > 0 => 1,
            x => x.min(BLK_MAX_DEPTH),
        })
        .max()
        .unwrap_or(1);
    t.depth = Some(most.max(1));
    t.finish(opts, " (blktrace queue events)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_default(text: &str) -> Result<Trace, String> {
        parse(text, "t.log", &ReplayOptions::default())
    }

    #[test]
    fn version_3_lines_carry_their_times_and_files() {
        let t = parse_default(
            "fio version 3 iolog\n31 /a add\n40 /b add\n196 /a open\n197 /b open\n\
             204 /a read 0 4096\n479 /b write 8192 512\n500 /a sync 0 0\n650 /a read 4096 4096\n900 /a close\n",
        )
        .unwrap();
        assert_eq!(t.files, ["/a", "/b"]);
        assert_eq!(t.ios.len(), 3);
        assert_eq!(
            t.ios[1],
            TraceIo {
                file: 1,
                dir: Dir::Write,
                offset: 8192,
                len: 512,
                due_ns: 479_000,
                line: 7
            }
        );
        assert_eq!(t.syncs, [(2, SyncKind::Fsync)]);
        assert_eq!(t.bytes(), 4096 * 2 + 512);
        assert_eq!(t.extent(0), 8192);
        assert_eq!(t.extent(1), 8192 + 512);
        assert!(t.timed && t.has(Dir::Read) && t.has(Dir::Write));
    }

    #[test]
    fn version_2_times_come_from_waits_and_short_waits_are_dropped() {
        let t = parse_default(
            "fio version 2 iolog\nf add\nf open\nf read 0 512\nf wait 50 0\nf read 512 512\n\
             f wait 2000 0\nf write 0 512\nf datasync 0 0\n",
        )
        .unwrap();
        let due: Vec<u64> = t.ios.iter().map(|r| r.due_ns).collect();
        assert_eq!(due, [0, 0, 2_000_000]);
        assert_eq!(t.syncs, [(3, SyncKind::Fdatasync)]);
    }

    #[test]
    fn replay_options_shape_the_trace() {
        let text = "fio version 3 iolog\n0 /x add\n0 /y add\n0 /x open\n0 /y open\n\
                    1000 /x read 10000 512\n3000 /y trim 0 4096\n4000 /y write 20480 512\n5000 /x sync 0 0\n";
        let opts = ReplayOptions {
            time_scale: 200,
            redirect: Some("sim:s.toml#lun0".into()),
            align: 4096,
            scale: 2,
            skip: ReplaySkip::parse("trim,sync").unwrap(),
            ..Default::default()
        };
        let t = parse(text, "t.log", &opts).unwrap();
        assert_eq!(t.files, ["sim:s.toml#lun0"]);
        // 10000 / 2 = 5000, rounded down to 4096; 20480 / 2 = 10240 → 8192.
        let got: Vec<(u32, u64, u64)> =
            t.ios.iter().map(|r| (r.file, r.offset, r.due_ns)).collect();
        assert_eq!(got, [(0, 4096, 500_000), (0, 8192, 2_000_000)]);
        assert!(t.syncs.is_empty());
        let fast = parse(
            text,
            "t.log",
            &ReplayOptions {
                no_stall: true,
                skip: opts.skip,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!fast.timed && fast.ios.iter().all(|r| r.due_ns == 0));
    }

    #[test]
    fn bad_traces_are_one_line_naming_the_line() {
        let cases = [
            ("not a log\n", "t.log is not a fio iolog"),
            ("fio version 3 iolog\n0 /x read 0 4096\n", "t.log line 2: read on /x, which the trace has not added"),
            ("fio version 3 iolog\n0 /x add\n0 /x read 0 4096\n", "t.log line 3: read on /x, which is not open"),
            ("fio version 3 iolog\n0 /x add\n0 /x open\n0 /x read zero 4096\n", "t.log line 4: read: 'zero' is not a byte offset"),
            ("fio version 3 iolog\n0 /x add\n0 /x open\n0 /x read 0\n", "t.log line 4: read needs an offset and a length"),
            ("fio version 3 iolog\n0 /x add\n0 /x open\n0 /x wait 500 0\n", "t.log line 4: wait is not an action of version 3"),
            ("fio version 3 iolog\nsoon /x add\n", "t.log line 2: 'soon' is not a timestamp"),
            ("fio version 2 iolog\n/x add\n/x open\n/x frob 0 1\n", "t.log line 4: 'frob' is not an action (valid: add, open, close, read, write, sync, datasync, trim, wait)"),
            ("fio version 2 iolog\n/x add\n/x open\n/x close\n", "t.log has no reads or writes to replay"),
            ("fio version 2 iolog\n/x add\n/x open\n/x read 0 0\n", "t.log line 4: read of 0 bytes"),
        ];
        for (text, want) in cases {
            let e = parse_default(text).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    /// blktrace records as the kernel writes them (little- or big-endian).
    struct Blk {
        out: Vec<u8>,
        le: bool,
    }

    const Q: u32 = 1 | (1 << 20); // queue, in the queue category
    const C: u32 = 8 | (1 << 23); // complete
    const D: u32 = 7 | (1 << 22); // issue
    const R: u32 = 1 << 16;
    const W: u32 = 1 << 17;
    const FLUSH: u32 = 1 << 18;
    const DISCARD: u32 = 1 << 29;
    const NOTIFY: u32 = 1 << 26;
    const LOOP0: u32 = 7 << 20;

    impl Blk {
        fn new(le: bool) -> Blk {
            Blk {
                out: Vec::new(),
                le,
            }
        }

        fn rec(
            &mut self,
            time: u64,
            sector: u64,
            bytes: u32,
            action: u32,
            dev: u32,
            pdu: &[u8],
        ) -> &mut Blk {
            let le = self.le;
            let put32 = |o: &mut Vec<u8>, v: u32| {
                o.extend_from_slice(&if le { v.to_le_bytes() } else { v.to_be_bytes() })
            };
            let o = &mut self.out;
            put32(o, BLK_MAGIC | BLK_VERSION);
            put32(o, 0);
            for v in [time, sector] {
                o.extend_from_slice(&if le { v.to_le_bytes() } else { v.to_be_bytes() });
            }
            for v in [bytes, action, 4321, dev, 0] {
                put32(o, v);
            }
            let pl = pdu.len() as u16;
            o.extend_from_slice(&[0, 0]);
            o.extend_from_slice(&if le {
                pl.to_le_bytes()
            } else {
                pl.to_be_bytes()
            });
            o.extend_from_slice(pdu);
            self
        }
    }

    /// Eight reads queued at once and completed, a notification with data, four writes a
    /// half millisecond apart, a flush and a last read: the requests, their times from the
    /// first queue event, the sync, the depth, in either byte order.
    fn sample(le: bool) -> Vec<u8> {
        let mut b = Blk::new(le);
        let t0 = 5_000_000;
        for i in 0..8u64 {
            b.rec(t0 + i * 1000, i * 8, 4096, Q | R, LOOP0, &[]);
        }
        for i in 0..8u64 {
            b.rec(t0 + 10_000 + i * 1000, i * 8, 4096, D | R, LOOP0, &[]);
            b.rec(t0 + 50_000 + i * 1000, i * 8, 4096, C | R, LOOP0, &[]);
        }
        b.rec(0, 0, 0, NOTIFY, LOOP0, b"proc\0\0\0\0");
        for i in 0..4u64 {
            b.rec(
                t0 + 2_000_000 + i * 500_000,
                1024 + i * 16,
                8192,
                Q | W,
                LOOP0,
                &[],
            );
        }
        b.rec(t0 + 5_000_000, 0, 0, Q | W | FLUSH, LOOP0, &[]);
        b.rec(t0 + 6_000_000, 2048, 4096, Q | R, LOOP0, &[]);
        b.out
    }

    fn loop0(major: u32, minor: u32) -> Option<String> {
        (major == 7 && minor == 0).then(|| "/dev/loop0".to_string())
    }

    #[test]
    fn a_blktrace_replays_its_queue_events() {
        let bytes = sample(true);
        assert!(is_blktrace(&bytes) && is_blktrace(&sample(false)));
        assert!(!is_blktrace(b"fio version 3 iolog\n"));
        let t = parse_blktrace(&bytes, "t.bin", &ReplayOptions::default(), &mut loop0).unwrap();
        assert_eq!(t.files, ["/dev/loop0"]);
        let got: Vec<(Dir, u64, u64, u64)> = t
            .ios
            .iter()
            .map(|r| (r.dir, r.offset, r.len, r.due_ns))
            .collect();
        let mut want: Vec<(Dir, u64, u64, u64)> = (0..8)
            .map(|i| (Dir::Read, i * 4096, 4096, i * 1000))
            .collect();
        want.extend((0..4).map(|i| {
            (
                Dir::Write,
                (1024 + i * 16) * 512,
                8192,
                2_000_000 + i * 500_000,
            )
        }));
        want.push((Dir::Read, 2048 * 512, 4096, 6_000_000));
        assert_eq!(got, want);
        assert_eq!(t.syncs, [(12, SyncKind::Fsync)]);
        assert_eq!(t.depth, Some(8));
        assert!(t.timed);
        // The record a request came from, for messages.
        assert_eq!(t.at(&t.ios[8]), "t.bin record 26");
        assert_eq!(
            t.misaligned(0, 8192).unwrap(),
            "record 1 (offset 0, length 4096)"
        );
        // Big-endian records read the same.
        let be = parse_blktrace(
            &sample(false),
            "t.bin",
            &ReplayOptions::default(),
            &mut loop0,
        )
        .unwrap();
        assert_eq!(be, t);
    }

    /// Trims replay as trims, from an iolog's `trim` lines and a blktrace's discards;
    /// `replay_skip=trim` leaves them out.
    #[test]
    fn trims_replay_as_trims() {
        let t = parse_default(
            "fio version 3 iolog\n0 /x add\n0 /x open\n5 /x trim 8192 4096\n9 /x write 0 512\n",
        )
        .unwrap();
        let got: Vec<(Dir, u64, u64)> = t.ios.iter().map(|r| (r.dir, r.offset, r.len)).collect();
        assert_eq!(got, [(Dir::Trim, 8192, 4096), (Dir::Write, 0, 512)]);
        let mut b = Blk::new(true);
        b.rec(0, 0, 4096, Q | R, LOOP0, &[])
            .rec(1, 8, 4096, Q | DISCARD, LOOP0, &[]);
        let mut loop0 = |_: u32, _: u32| Some("/dev/loop0".to_string());
        let t = parse_blktrace(&b.out, "t.bin", &ReplayOptions::default(), &mut loop0).unwrap();
        let got: Vec<(Dir, u64)> = t.ios.iter().map(|r| (r.dir, r.offset)).collect();
        assert_eq!(got, [(Dir::Read, 0), (Dir::Trim, 4096)]);
        let skip = ReplayOptions {
            skip: ReplaySkip::parse("trim").unwrap(),
            ..Default::default()
        };
        let t = parse_blktrace(&b.out, "t.bin", &skip, &mut loop0).unwrap();
        assert!(t.ios.iter().all(|r| r.dir == Dir::Read));
    }

    #[test]
    fn replay_options_shape_a_blktrace() {
        let mut b = Blk::new(true);
        b.rec(1000, 3, 1000, Q | R, LOOP0, &[]);
        b.rec(2000, 0, 0, Q | W | FLUSH, LOOP0, &[]);
        b.rec(3000, 20, 4096, Q | W, 8 << 20 | 16, &[]);
        b.rec(5000, 64, 4096, Q | DISCARD, LOOP0, &[]);
        b.rec(6000, 64, 0, Q | W, LOOP0, &[]); // no bytes: passed over
        let opts = ReplayOptions {
            time_scale: 200,
            align: 4096,
            scale: 2,
            skip: ReplaySkip::parse("trim").unwrap(),
            ..Default::default()
        };
        let mut two = |major: u32, minor: u32| -> Option<String> {
            match (major, minor) {
                (7, 0) => Some("/dev/loop0".into()),
                (8, 16) => Some("/dev/sdb".into()),
                _ => None,
            }
        };
        let t = parse_blktrace(&b.out, "t.bin", &opts, &mut two).unwrap();
        assert_eq!(t.files, ["/dev/loop0", "/dev/sdb"]);
        // 3 × 512 / 2 = 768, down to 0, 1000 bytes up to 4096; 20 × 512 / 2 = 5120 → 4096.
        let got: Vec<(u32, u64, u64, u64)> = t
            .ios
            .iter()
            .map(|r| (r.file, r.offset, r.len, r.due_ns))
            .collect();
        assert_eq!(got, [(0, 0, 4096, 0), (1, 4096, 4096, 1000)]);
        assert_eq!(t.syncs, [(1, SyncKind::Fsync)]);
        // No completions: the depth is 1.
        assert_eq!(t.depth, Some(1));
        let redirected = ReplayOptions {
            redirect: Some("sim:x.toml#lun0".into()),
            no_stall: true,
            skip: ReplaySkip::parse("trim,sync").unwrap(),
            ..Default::default()
        };
        let t = parse_blktrace(&b.out, "t.bin", &redirected, &mut |_, _| None).unwrap();
        assert_eq!(t.files, ["sim:x.toml#lun0"]);
        assert!(t.ios.iter().all(|r| r.file == 0 && r.due_ns == 0) && !t.timed);
        assert!(t.syncs.is_empty());
        // Depth counts queue events between completions, merges counting back.
        let mut b = Blk::new(true);
        for i in 0..5u64 {
            b.rec(i, i * 8, 4096, Q | W, LOOP0, &[]);
        }
        b.rec(9, 8, 4096, 2 | W, LOOP0, &[]); // a back merge
        b.rec(10, 0, 4096, C | W, LOOP0, &[]);
        b.rec(11, 80, 4096, Q | W, LOOP0, &[]);
        b.rec(12, 80, 4096, C | W, LOOP0, &[]);
        let t = parse_blktrace(&b.out, "t.bin", &ReplayOptions::default(), &mut loop0).unwrap();
        assert_eq!((t.ios.len(), t.depth), (6, Some(4)));
    }

    #[test]
    fn bad_blktraces_are_one_line_naming_the_record() {
        let whole = sample(true);
        let mut v6 = whole.clone();
        v6[0] = 0x06;
        let mut bad_magic = whole.clone();
        bad_magic[48..52].copy_from_slice(&[1, 2, 3, 4]);
        let mut overrun = Blk::new(true);
        overrun.rec(0, 0, 4096, Q | R, LOOP0, b"xy");
        overrun.out.truncate(overrun.out.len() - 1);
        let mut only_completions = Blk::new(true);
        only_completions.rec(0, 0, 4096, C | R, LOOP0, &[]);
        let mut elsewhere = Blk::new(true);
        elsewhere.rec(0, 0, 4096, Q | R, 8 << 20, &[]);
        let cases: [(&[u8], &str); 6] = [
            (&whole[..whole.len() - 10], "t.bin record 31 (byte 1448): cut short, 38 of its 48 bytes"),
            (&v6, "t.bin record 1 (byte 0): blktrace version 6 (valid: 7"),
            (&bad_magic, "t.bin record 2 (byte 48): bad magic"),
            (&overrun.out, "t.bin record 1 (byte 0): its 2 bytes of data run past the trace's end"),
            (&only_completions.out, "t.bin has no reads or writes to replay"),
            (&elsewhere.out, "t.bin record 1 (byte 0): device 8:0 is not a block device under /dev here (valid: replay_redirect="),
        ];
        for (bytes, want) in cases {
            let e =
                parse_blktrace(bytes, "t.bin", &ReplayOptions::default(), &mut loop0).unwrap_err();
            assert!(e.starts_with(want), "{want}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn replay_skip_names_its_kinds() {
        assert_eq!(
            ReplaySkip::parse("write, sync").unwrap().text(),
            "write,sync"
        );
        assert!(ReplaySkip::parse("writes")
            .unwrap_err()
            .contains("valid: read, write, trim, sync"));
        // (fio 3.33: "Unknown skip type: " for an empty value or part, `read,` too.)
        for (v, want) in [
            ("", "empty value (valid: read, write"),
            (" ", "empty value (valid: read, write"),
            ("read,", "'read,' has an empty part (valid: read, write"),
            (",trim", "',trim' has an empty part"),
            ("read,,sync", "'read,,sync' has an empty part"),
        ] {
            let e = ReplaySkip::parse(v).unwrap_err();
            assert!(e.starts_with(want), "{v:?}: {e}");
        }
    }
}
