//! A job over several files, as fio runs `filename=a:b` or `nrfiles=N`: each file has its
//! own request stream over its own extent (its own position, random map and passes), and
//! fio's `file_service_type` says which file the job's next request goes to.
//!
//! What it is for: the order of a multi-file job's requests, plain data for an executor
//! (each [`Request`] says its `file`). What it is not for: opening, laying out or naming
//! files (the engine and [`crate::apply_directories`] do that).

use crate::iolog::Trace;
use crate::pace::SyncKind;
use crate::spec::{JobSpec, SpecError};
use crate::stream::{Dir, JobInstance, Request, RequestStream, Rng};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// fio's `file_service_type`: how a job moves among its files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileService {
    pub kind: ServiceKind,
    /// Requests to one file before the job moves on (`roundrobin:N`, `random:N`); 1 by
    /// default. `sequential` moves on when a file's pass is done, whatever this says.
    pub every: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServiceKind {
    /// Each file in turn (fio's default).
    RoundRobin,
    /// One file's pass whole, then the next's.
    Sequential,
    /// A file drawn at random among those not done.
    Random,
}

impl Default for FileService {
    fn default() -> Self {
        FileService {
            kind: ServiceKind::RoundRobin,
            every: 1,
        }
    }
}

impl FileService {
    pub fn is_default(&self) -> bool {
        *self == FileService::default()
    }

    /// fio's spelling: `roundrobin`, `sequential` or `random`, each with an optional `:N`.
    pub fn parse(text: &str) -> Result<FileService, String> {
        let (name, n) = match text.split_once(':') {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (text.trim(), None),
        };
        let kind = match name {
            "roundrobin" => ServiceKind::RoundRobin,
            "sequential" => ServiceKind::Sequential,
            "random" => ServiceKind::Random,
            "zipf" | "pareto" | "normal" | "gauss" => {
                return Err(format!(
                    "'{text}': raidlab draws files uniformly (valid: roundrobin, sequential, random, each with an optional :N)"
                ))
            }
            _ => {
                return Err(format!(
                    "'{text}' is not a file service type (valid: roundrobin, sequential, random, each with an optional :N)"
                ))
            }
        };
        let every = match n {
            None => 1,
            Some(n) => crate::size::parse_u32(n, 1, u32::MAX)
                .map_err(|e| format!("'{text}': requests per file {e}"))?,
        };
        Ok(FileService { kind, every })
    }

    /// As `file_service_type` shows it in a job's options.
    pub fn text(&self) -> String {
        let name = match self.kind {
            ServiceKind::RoundRobin => "roundrobin",
            ServiceKind::Sequential => "sequential",
            ServiceKind::Random => "random",
        };
        if self.every == 1 {
            name.to_string()
        } else {
            format!("{name}:{}", self.every)
        }
    }
}

/// The requests of one job instance over its files, in the order `file_service_type` gives
/// them; a job of one file is that file's [`RequestStream`] itself.
#[derive(Clone, Debug)]
pub struct JobStream {
    files: Vec<RequestStream>,
    service: FileService,
    /// The file the next request goes to.
    cur: usize,
    /// Requests (or, `sequential`, bytes) sent to `cur` since the job came to it.
    in_turn: u64,
    done: Vec<bool>,
    live: usize,
    /// Draws the next file for `random`.
    pick: Rng,
    seq: u64,
    /// A replayed trace (`read_iolog`) in place of the files' streams.
    replay: Option<Replayed>,
}

/// Where a job replaying a trace stands in it.
#[derive(Clone, Debug)]
struct Replayed {
    trace: Arc<Trace>,
    /// Its files' sizes: the regions its requests stay in.
    sizes: Vec<u64>,
    /// The next request's index in the trace.
    next: usize,
    /// The next sync's index in the trace's syncs.
    sync_next: usize,
}

impl JobStream {
    /// The stream of `instance` over its files, of `sizes` bytes each (in the order of the
    /// instance's `files`). Each file runs by [`JobSpec::per_file`]; the first keeps the
    /// instance's seed (a one-file job draws what it always drew), the others draw their own.
    pub fn new(spec: &JobSpec, instance: &JobInstance, sizes: &[u64]) -> Result<Self, SpecError> {
        if let Some(trace) = &spec.trace {
            return Self::replay(trace, sizes);
        }
        let per = spec.per_file(sizes.len());
        let seed = instance.seed(spec);
        let files = sizes
            .iter()
            .enumerate()
            .map(|(k, &size)| {
                let mut x = seed ^ (k as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
                let s = if k == 0 {
                    seed
                } else {
                    crate::stream::splitmix64(&mut x)
                };
                RequestStream::seeded(&per, instance, size, s).map_err(|e| SpecError {
                    message: if sizes.len() > 1 {
                        format!("{} (its file #{k})", e.message)
                    } else {
                        e.message
                    },
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(JobStream {
            done: vec![false; files.len()],
            live: files.len(),
            files,
            service: spec.file_service,
            cur: 0,
            in_turn: 0,
            pick: Rng::new(seed ^ 0x7F4A_7C15_9E37_79B9),
            seq: 0,
            replay: None,
        })
    }

    /// A trace's requests, in its order, over its files of `sizes` bytes each (every
    /// request must end inside its file).
    fn replay(trace: &Arc<Trace>, sizes: &[u64]) -> Result<Self, SpecError> {
        assert_eq!(
            sizes.len(),
            trace.files.len(),
            "one size for each of the trace's files"
        );
        if let Some(r) = trace
            .ios
            .iter()
            .find(|r| r.offset + r.len > sizes[r.file as usize])
        {
            let k = r.file as usize;
            return Err(SpecError {
                message: format!(
                    "{}: its {} ends at byte {}, past the end of {} ({} bytes)",
                    trace.at(r),
                    r.dir.name(),
                    r.offset + r.len,
                    trace.files[k],
                    sizes[k]
                ),
            });
        }
        Ok(JobStream {
            files: Vec::new(),
            service: FileService::default(),
            cur: 0,
            in_turn: 0,
            done: Vec::new(),
            live: 0,
            pick: Rng::new(0),
            seq: 0,
            replay: Some(Replayed {
                trace: Arc::clone(trace),
                sizes: sizes.to_vec(),
                next: 0,
                sync_next: 0,
            }),
        })
    }

    /// A replayed trace's sync due before `next`, the request drawn and not yet issued (or,
    /// None, before the job ends): the executor lets what is in flight complete, syncs, then
    /// calls [`JobStream::synced`]. None for a job that replays nothing.
    #[inline]
    pub fn sync_due(&self, next: Option<&Request>) -> Option<SyncKind> {
        let r = self.replay.as_ref()?;
        let before = next.map_or(u64::MAX, |q| q.seq);
        r.trace
            .syncs
            .get(r.sync_next)
            .filter(|&&(at, _)| at as u64 <= before)
            .map(|&(_, kind)| kind)
    }

    /// The sync [`JobStream::sync_due`] gave is done.
    pub fn synced(&mut self) {
        if let Some(r) = self.replay.as_mut() {
            r.sync_next += 1;
        }
    }

    /// When request `seq` of a timed replay is due, ns after the job's start; None when any
    /// time will do (a job that replays nothing, or `replay_no_stall`).
    #[inline]
    pub fn due_ns(&self, seq: u64) -> Option<u64> {
        let r = self.replay.as_ref().filter(|r| r.trace.timed)?;
        r.trace.ios.get(seq as usize).map(|io| io.due_ns)
    }

    /// Whether the job replays a trace.
    pub fn replays(&self) -> bool {
        self.replay.is_some()
    }

    /// Whether the job walks strided zones (`zonemode=strided`): its rate changes with the
    /// zone it is in, so no stretch of it stands for the rest.
    pub fn zoned(&self) -> bool {
        self.files.iter().any(RequestStream::zoned)
    }

    /// How many files the job has.
    pub fn files(&self) -> usize {
        match &self.replay {
            Some(r) => r.sizes.len(),
            None => self.files.len(),
        }
    }

    /// The region `(start, len)` the job's requests to file `k` stay inside.
    pub fn region(&self, k: usize) -> (u64, u64) {
        match &self.replay {
            Some(r) => (0, r.sizes[k]),
            None => self.files[k].region(),
        }
    }

    /// Bytes one pass over every file transfers.
    pub fn pass_bytes(&self) -> u64 {
        match &self.replay {
            Some(r) => r.trace.bytes(),
            None => self.files.iter().map(RequestStream::pass_bytes).sum(),
        }
    }

    /// Bytes the whole job transfers, if that is known ahead (see
    /// [`RequestStream::total_bytes`]).
    pub fn total_bytes(&self) -> Option<u64> {
        match &self.replay {
            Some(r) => Some(r.trace.bytes()),
            None => self.files.iter().map(RequestStream::total_bytes).sum(),
        }
    }

    /// Bytes the job is expected to transfer, when it is not time-based (see
    /// [`RequestStream::expected_bytes`]).
    pub fn expected_bytes(&self) -> Option<u64> {
        match &self.replay {
            Some(r) => Some(r.trace.bytes()),
            None => self.files.iter().map(RequestStream::expected_bytes).sum(),
        }
    }

    /// The next request (its direction first turned by `choose`, as
    /// [`RequestStream::next_as`]), or None once every file is done.
    #[inline]
    pub fn next_as(&mut self, mut choose: impl FnMut(Dir) -> Dir) -> Option<Request> {
        if self.files.len() == 1 {
            return self.files[0].next_as(choose);
        }
        if let Some(r) = self.replay.as_mut() {
            // (A trace's directions are its own.)
            let io = *r.trace.ios.get(r.next)?;
            let seq = r.next as u64;
            r.next += 1;
            return Some(Request {
                seq,
                pass: 0,
                file: io.file,
                offset: io.offset,
                len: io.len,
                dir: io.dir,
            });
        }
        while self.live > 0 {
            let k = self.cur;
            let got = if self.done[k] {
                None
            } else {
                self.files[k].next_as(&mut choose)
            };
            let Some(mut r) = got else {
                if !self.done[k] {
                    self.done[k] = true;
                    self.live -= 1;
                }
                self.move_on();
                continue;
            };
            r.file = k as u32;
            r.seq = self.seq;
            self.seq += 1;
            let turn_over = match self.service.kind {
                ServiceKind::Sequential => {
                    self.in_turn += r.len;
                    self.in_turn >= self.files[k].pass_bytes()
                }
                _ => {
                    self.in_turn += 1;
                    self.in_turn >= u64::from(self.service.every)
                }
            };
            if turn_over {
                self.move_on();
            }
            return Some(r);
        }
        None
    }

    /// To the next file not done: the next in order, or one drawn at random.
    fn move_on(&mut self) {
        self.in_turn = 0;
        if self.live == 0 {
            return;
        }
        let n = self.files.len();
        match self.service.kind {
            ServiceKind::Random => {
                let mut i = self.pick.below(self.live as u64) as usize;
                for k in 0..n {
                    if !self.done[k] {
                        if i == 0 {
                            self.cur = k;
                            return;
                        }
                        i -= 1;
                    }
                }
            }
            _ => {
                for step in 1..=n {
                    let k = (self.cur + step) % n;
                    if !self.done[k] {
                        self.cur = k;
                        return;
                    }
                }
            }
        }
    }
}

impl Iterator for JobStream {
    type Item = Request;

    #[inline]
    fn next(&mut self) -> Option<Request> {
        self.next_as(|d| d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::spec::spec_from as spec;

    fn stream(s: &JobSpec, sizes: &[u64]) -> JobStream {
        let inst = &JobInstance::expand(std::slice::from_ref(s))[0];
        JobStream::new(s, inst, sizes).unwrap()
    }

    fn trace(st: JobStream) -> Vec<(u32, u64)> {
        st.map(|r| (r.file, r.offset)).collect()
    }

    const M: u64 = 1 << 20;

    /// fio 3.33's order (its write_iolog): `filename=a:b size=4m bs=1m`, each file 2 MiB,
    /// one request each in turn; `roundrobin:2` two; `sequential` one file whole first.
    #[test]
    fn files_take_turns_as_fio_serves_them() {
        let base = [("filename", "a:b"), ("rw", "write"), ("bs", "1m")];
        let with = |extra: &[(&str, &str)]| {
            let mut o = base.to_vec();
            o.extend_from_slice(extra);
            spec(&o)
        };
        let s = with(&[("size", "4m")]);
        assert_eq!(
            trace(stream(&s, &[16 * M, 16 * M])),
            [(0, 0), (1, 0), (0, M), (1, M)]
        );
        let s = with(&[("size", "8m"), ("file_service_type", "roundrobin:2")]);
        assert_eq!(
            trace(stream(&s, &[16 * M, 16 * M])),
            [
                (0, 0),
                (0, M),
                (1, 0),
                (1, M),
                (0, 2 * M),
                (0, 3 * M),
                (1, 2 * M),
                (1, 3 * M)
            ]
        );
        let s = with(&[("size", "4m"), ("file_service_type", "sequential")]);
        assert_eq!(
            trace(stream(&s, &[16 * M, 16 * M])),
            [(0, 0), (0, M), (1, 0), (1, M)]
        );
        // filesize sets each file's share, whatever size says (fio caps the job so too).
        let s = with(&[("size", "8m"), ("filesize", "2m")]);
        assert_eq!(
            trace(stream(&s, &[16 * M, 16 * M])),
            [(0, 0), (1, 0), (0, M), (1, M)]
        );
    }

    /// A file that ends before the others (a smaller device, no size) leaves the rotation;
    /// the others go on to their ends.
    #[test]
    fn a_file_done_leaves_the_turns() {
        let s = spec(&[("filename", "a:b:c"), ("rw", "read"), ("bs", "1m")]);
        let t = trace(stream(&s, &[M, 3 * M, 2 * M]));
        assert_eq!(t, [(0, 0), (1, 0), (2, 0), (1, M), (2, M), (1, 2 * M)]);
    }

    /// Random service visits every file's blocks once (each its own random map) and no
    /// others, in an order that mixes the files; requests are numbered in the job's order.
    #[test]
    fn random_service_covers_each_file_once() {
        let s = spec(&[
            ("filename", "a:b:c"),
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "3m"),
            ("file_service_type", "random"),
        ]);
        let st = stream(&s, &[64 * M; 3]);
        assert_eq!(st.total_bytes(), Some(3 * M));
        let reqs: Vec<Request> = st.collect();
        assert_eq!(reqs.len(), 768);
        assert!(reqs.iter().enumerate().all(|(i, r)| r.seq == i as u64));
        for f in 0..3u32 {
            let mut offs: Vec<u64> = reqs
                .iter()
                .filter(|r| r.file == f)
                .map(|r| r.offset)
                .collect();
            offs.sort_unstable();
            assert_eq!(
                offs,
                (0..256).map(|b| b * 4096).collect::<Vec<_>>(),
                "file {f}"
            );
        }
        let switches = reqs.windows(2).filter(|w| w[0].file != w[1].file).count();
        assert!(switches > 300, "{switches} switches among 768 requests");
        // The files draw their own orders: file 1's is not file 0's.
        let first = |f: u32| -> Vec<u64> {
            reqs.iter()
                .filter(|r| r.file == f)
                .take(16)
                .map(|r| r.offset)
                .collect()
        };
        assert_ne!(first(0), first(1));
    }

    /// A job of one file is its file's stream, request for request.
    #[test]
    fn one_file_is_its_request_stream() {
        let s = spec(&[
            ("filename", "a"),
            ("rw", "randrw"),
            ("bs", "8k"),
            ("size", "1m"),
        ]);
        let inst = &JobInstance::expand(std::slice::from_ref(&s))[0];
        let one: Vec<Request> = stream(&s, &[8 * M]).collect();
        let plain: Vec<Request> = RequestStream::new(&s, inst, 8 * M).unwrap().collect();
        assert_eq!(one, plain);
    }

    #[test]
    fn service_types_parse_as_fio_spells_them() {
        assert_eq!(
            FileService::parse("roundrobin").unwrap(),
            FileService::default()
        );
        let r = FileService::parse("random:4").unwrap();
        assert_eq!((r.kind, r.every), (ServiceKind::Random, 4));
        assert_eq!(r.text(), "random:4");
        for bad in ["zipf:1.2", "rr", "random:0", "random:x"] {
            let e = FileService::parse(bad).unwrap_err();
            assert!(e.contains("valid:"), "{bad}: {e}");
        }
    }
}
