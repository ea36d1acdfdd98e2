//! A job's I/O log (fio's `write_iolog`): every request and sync the job issued, when, and
//! where, recorded by either executor and written by the caller as fio 3.33 writes it —
//! version 3 of fio's iolog text, which fio's `read_iolog` and raidlab's (the parser is
//! `raidlab_workload::iolog`) replay.
//!
//! Times are microseconds from the job's start (its first request's earliest time), the
//! engine's on its clock, the simulator's virtual: a simulated job's log is the same on
//! every run, and replays on real hardware with the simulated issue times.

use std::fmt::Write;

/// What an entry did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoAct {
    Read,
    Write,
    Trim,
    /// fsync (fio's `sync`).
    Sync,
    /// fdatasync (fio's `datasync`).
    Datasync,
}

impl IoAct {
    /// The transfer of direction `d`, as the results number directions
    /// ([`crate::schema::DIRECTION_NAMES`]: 0 read, 1 write, 2 trim).
    pub fn of_direction(d: usize) -> IoAct {
        match d {
            0 => IoAct::Read,
            1 => IoAct::Write,
            _ => IoAct::Trim,
        }
    }

    fn word(self) -> &'static str {
        match self {
            IoAct::Read => "read",
            IoAct::Write => "write",
            IoAct::Trim => "trim",
            IoAct::Sync => "sync",
            IoAct::Datasync => "datasync",
        }
    }
}

/// One issued request (or sync).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoLogEntry {
    /// When it was issued, ns after the job's start.
    pub at_ns: u64,
    /// Which of the log's files.
    pub file: u32,
    pub act: IoAct,
    pub offset: u64,
    pub len: u64,
}

/// One job's log being recorded, then recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoLog {
    /// The file it is written to.
    pub path: String,
    /// The job's files as the log names them (a replay opens these).
    pub files: Vec<String>,
    pub entries: Vec<IoLogEntry>,
    /// When the job ended, ns after its start (its files' `close`).
    pub end_ns: u64,
}

impl IoLog {
    pub fn new(path: String, files: Vec<String>) -> IoLog {
        IoLog {
            path,
            files,
            entries: Vec::new(),
            end_ns: 0,
        }
    }

    /// Record one read or write (`write`) issued `at_ns` after the job's start.
    #[inline]
    pub fn record_io(&mut self, at_ns: u64, file: u32, act: IoAct, offset: u64, len: u64) {
        debug_assert!(matches!(act, IoAct::Read | IoAct::Write | IoAct::Trim));
        self.record(at_ns, file, act, offset, len);
    }

    fn record(&mut self, at_ns: u64, file: u32, act: IoAct, offset: u64, len: u64) {
        debug_assert!((file as usize) < self.files.len());
        self.entries.push(IoLogEntry {
            at_ns,
            file,
            act,
            offset,
            len,
        });
    }

    /// A sync of every file (raidlab syncs all of a job's files at once).
    pub fn record_sync(&mut self, at_ns: u64, data_only: bool) {
        let act = if data_only {
            IoAct::Datasync
        } else {
            IoAct::Sync
        };
        for k in 0..self.files.len() as u32 {
            self.record(at_ns, k, act, 0, 0);
        }
    }

    /// The log's text: fio's version 3 header, each file added and opened at 0, the
    /// entries, each file closed at the job's end.
    pub fn text(&self) -> String {
        let mut s = String::with_capacity(64 + self.entries.len() * 48);
        s.push_str("fio version 3 iolog\n");
        for f in &self.files {
            let _ = writeln!(s, "0 {f} add");
        }
        for f in &self.files {
            let _ = writeln!(s, "0 {f} open");
        }
        for e in &self.entries {
            let _ = writeln!(
                s,
                "{} {} {} {} {}",
                e.at_ns / 1000,
                self.files[e.file as usize],
                e.act.word(),
                e.offset,
                e.len
            );
        }
        let end = self.end_ns.max(self.entries.last().map_or(0, |e| e.at_ns)) / 1000;
        for f in &self.files {
            let _ = writeln!(s, "{end} {f} close");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_fios_version_3() {
        let mut l = IoLog::new("x.log".into(), vec!["/d/a".into(), "/d/b".into()]);
        l.record_io(1_500, 1, IoAct::Write, 4096, 512);
        l.record_io(2_999_999, 0, IoAct::Read, 0, 4096);
        l.record_sync(3_000_000, true);
        l.end_ns = 4_200_000;
        assert_eq!(
            l.text(),
            "fio version 3 iolog\n0 /d/a add\n0 /d/b add\n0 /d/a open\n0 /d/b open\n\
             1 /d/b write 4096 512\n2999 /d/a read 0 4096\n3000 /d/a datasync 0 0\n\
             3000 /d/b datasync 0 0\n4200 /d/a close\n4200 /d/b close\n"
        );
    }
}
