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
//! only), `read`, `write`, `sync`, `datasync`, `trim` (refused unless `replay_skip` leaves
//! trims out: raidlab runs no discards), `wait`.
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
    /// fio's `replay_skip`: a comma-separated list of read, write, trim, sync.
    pub fn parse(text: &str) -> Result<ReplaySkip, String> {
        let mut s = ReplaySkip::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "read" => s.read = true,
                "write" => s.write = true,
                "trim" => s.trim = true,
                "sync" => s.sync = true,
                other => {
                    return Err(format!(
                        "'{other}' is not a kind of request to skip (valid: read, write, trim, sync, comma-separated)"
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
    /// Its line in the trace, from 1 (for messages).
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
}

impl Trace {
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
            .map(|r| format!("line {} (offset {}, length {})", r.line, r.offset, r.len))
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
                "{origin} is not a fio iolog: its first line must be '{V2}' or '{V3}' (raidlab replays fio's text iologs; blktrace files are not read)"
            ))
        }
    };
    let scale = opts.scale.max(1);
    let time_scale = u128::from(opts.time_scale.max(1));
    let mut t = Trace {
        origin: origin.to_string(),
        files: Vec::new(),
        ios: Vec::new(),
        syncs: Vec::new(),
        timed: !opts.no_stall,
    };
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
                    let k = match &opts.redirect {
                        Some(r) => {
                            if t.files.is_empty() {
                                t.files.push(r.clone());
                            }
                            0
                        }
                        None => {
                            t.files.push(name.to_string());
                            (t.files.len() - 1) as u32
                        }
                    };
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
                let due_ns = if t.timed {
                    let ns = u128::from(due_us) * 1000 * 100 / time_scale;
                    u64::try_from(ns).map_err(|_| at(format!("timestamp {due_us} is too late")))?
                } else {
                    0
                };
                match action {
                    "sync" | "datasync" => {
                        if !opts.skip.sync {
                            let kind = if action == "sync" {
                                SyncKind::Fsync
                            } else {
                                SyncKind::Fdatasync
                            };
                            // (A log names each file's sync; the job syncs all of
                            // its files at once.)
                            if t.syncs.last() != Some(&(t.ios.len(), kind)) {
                                t.syncs.push((t.ios.len(), kind));
                            }
                        }
                    }
                    "trim" => {
                        if !opts.skip.trim {
                            return Err(at(
                                "trim: raidlab runs no trims (valid: replay_skip=trim leaves them out)"
                                    .into(),
                            ));
                        }
                    }
                    _ => {
                        let dir = if action == "read" { Dir::Read } else { Dir::Write };
                        if (dir == Dir::Read && opts.skip.read) || (dir == Dir::Write && opts.skip.write) {
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
                        let mut off = off / scale;
                        if opts.align > 1 {
                            off &= !(opts.align - 1);
                        }
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
    if t.ios.is_empty() {
        return Err(format!(
            "{origin} has no reads or writes to replay{}",
            if opts.skip.is_default() {
                ""
            } else {
                " (after replay_skip)"
            }
        ));
    }
    // A request is never due before the one logged ahead of it (a v3 log's lines are in
    // issue order; a clock that went back is taken as no wait).
    let mut latest = 0;
    for r in &mut t.ios {
        latest = latest.max(r.due_ns);
        r.due_ns = latest;
    }
    Ok(t)
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
            ("fio version 3 iolog\n0 /x add\n0 /x open\n5 /x trim 0 4096\n", "t.log line 4: trim: raidlab runs no trims (valid: replay_skip=trim"),
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

    #[test]
    fn replay_skip_names_its_kinds() {
        assert_eq!(
            ReplaySkip::parse("write, sync").unwrap().text(),
            "write,sync"
        );
        assert!(ReplaySkip::parse("writes")
            .unwrap_err()
            .contains("valid: read, write, trim, sync"));
    }
}
