#![allow(dead_code)]
//! Helpers shared by the engine's integration tests.

use raidlab_engine::{BlockTarget, EngineError, RunOptions, Target};
use raidlab_result::RunResult;
use raidlab_workload::{apply_option, JobSpec};
use std::io;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A spec from fio-style options.
pub fn spec(opts: &[(&str, &str)]) -> JobSpec {
    let mut s = JobSpec::default();
    for (k, v) in opts {
        apply_option(&mut s, k, Some(v)).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    s
}

pub fn run_paths(specs: &[JobSpec], force: bool) -> Result<RunResult, EngineError> {
    let opts = RunOptions {
        force,
        ..Default::default()
    };
    raidlab_engine::run(specs, &mut raidlab_engine::resolve_path, &opts)
}

/// Run against one in-process block target named `mem`.
pub fn run_block(
    specs: &[JobSpec],
    dev: Arc<dyn BlockTarget>,
    opts: &RunOptions,
) -> Result<RunResult, EngineError> {
    let mut resolve = |name: &str| -> Result<Target, EngineError> {
        Ok(Target::Block {
            label: name.to_string(),
            dev: Arc::clone(&dev),
        })
    };
    raidlab_engine::run(specs, &mut resolve, opts)
}

/// An in-memory block target that logs every request and can misbehave on purpose.
pub struct MemTarget {
    pub data: Mutex<Vec<u8>>,
    pub align: u64,
    /// (sequence number, is_write, offset, len) of every request, in arrival order.
    pub log: Mutex<Vec<(u64, bool, u64, u64)>>,
    seq: AtomicU64,
    /// Writes to this offset after the first are silently dropped (a lost write).
    pub lose_rewrites_at: Option<u64>,
    /// Requests touching this offset fail with EIO.
    pub fail_at: Option<u64>,
    /// Set this flag once this many requests have arrived.
    pub stop_after: Option<(u64, Arc<AtomicBool>)>,
    written_once: Mutex<std::collections::HashSet<u64>>,
    /// How many requests had arrived at each flush.
    pub flushes: Mutex<Vec<u64>>,
    /// A flush moves this clock on by this many ns (it takes that long).
    pub flush_takes: Option<(Arc<raidlab_engine::clock::Stepping>, u64)>,
}

impl MemTarget {
    pub fn new(size: usize, align: u64) -> Self {
        MemTarget {
            data: Mutex::new(vec![0; size]),
            align,
            log: Mutex::new(Vec::new()),
            seq: AtomicU64::new(0),
            lose_rewrites_at: None,
            fail_at: None,
            stop_after: None,
            written_once: Mutex::new(Default::default()),
            flushes: Mutex::new(Vec::new()),
            flush_takes: None,
        }
    }
    fn note(&self, write: bool, offset: u64, len: u64) -> io::Result<()> {
        let n = self.seq.fetch_add(1, Ordering::SeqCst);
        self.log.lock().unwrap().push((n, write, offset, len));
        if let Some((after, flag)) = &self.stop_after {
            if n + 1 >= *after {
                flag.store(true, Ordering::SeqCst);
            }
        }
        assert_eq!(offset % self.align, 0, "unaligned offset {offset}");
        assert_eq!(len % self.align, 0, "unaligned length {len}");
        if self
            .fail_at
            .is_some_and(|f| f >= offset && f < offset + len)
        {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        Ok(())
    }
}

impl BlockTarget for MemTarget {
    fn size(&self) -> u64 {
        self.data.lock().unwrap().len() as u64
    }
    fn alignment(&self) -> u64 {
        self.align
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.note(false, offset, buf.len() as u64)?;
        let d = self.data.lock().unwrap();
        buf.copy_from_slice(&d[offset as usize..offset as usize + buf.len()]);
        Ok(())
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.note(true, offset, buf.len() as u64)?;
        if self.lose_rewrites_at == Some(offset)
            && !self.written_once.lock().unwrap().insert(offset)
        {
            return Ok(());
        }
        let mut d = self.data.lock().unwrap();
        d[offset as usize..offset as usize + buf.len()].copy_from_slice(buf);
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        self.flushes
            .lock()
            .unwrap()
            .push(self.seq.load(Ordering::SeqCst));
        if let Some((clock, ns)) = &self.flush_takes {
            clock.advance(*ns);
        }
        Ok(())
    }
}

/// A loop device over a file in /dev/shm, detached (and the file removed) when dropped.
pub struct Loop {
    pub dev: String,
    pub backing: std::path::PathBuf,
}

impl Loop {
    /// `size` bytes, direct I/O on, with the given logical sector size.
    pub fn new(size: u64, sector: u32) -> Loop {
        let backing = std::path::PathBuf::from(format!(
            "/dev/shm/raidlab-engine-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        Loop::over(backing, size, sector)
    }

    /// Over a new sparse file `backing` of `size` bytes (removed when dropped).
    pub fn over(backing: std::path::PathBuf, size: u64, sector: u32) -> Loop {
        let f = std::fs::File::create(&backing).expect("create the backing file");
        f.set_len(size).unwrap();
        drop(f);
        let out = Command::new("losetup")
            .args([
                "--find",
                "--show",
                "--direct-io=on",
                "--sector-size",
                &sector.to_string(),
            ])
            .arg(&backing)
            .output()
            .expect("losetup (util-linux) must be installed; these tests run as root");
        if !out.status.success() {
            let _ = std::fs::remove_file(&backing);
            panic!("losetup failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
        Loop { dev, backing }
    }
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}
