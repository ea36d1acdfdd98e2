//! One writer of an array's metadata at a time, across processes.
//!
//! A process that runs an array (`array serve`, `raidlab run --filename array:…`, `array
//! rebuild`/`scrub`) holds an exclusive advisory lock (flock) on every member for as long as it
//! runs; verbs that write superblocks (`fail`, `remove`, `add`) take the same lock first. So
//! two processes never write one array's superblocks at once. The locks are reentrant within
//! a process (counted per file), because a verb may lock members an enclosing command already
//! holds, and flock would otherwise conflict with the process' own second descriptor.
//!
//! `array serve` also listens on a control socket (a Linux abstract Unix socket named after the
//! array's uuid) through which `raidlab array fail` asks the serving process to mark a member
//! faulty, as mdadm `--fail` asks the kernel: the running array changes its own state and
//! writes its own superblocks. Only processes of the same user (or root) are heard.

use crate::error::ArrayError;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// A member file's identity: (device, inode).
type FileKey = (u64, u64);
/// Locks this process holds: file → (the locked descriptor, how many guards).
type Held = HashMap<FileKey, (File, usize)>;
static HELD: Mutex<Option<Held>> = Mutex::new(None);

/// Exclusive locks on some members, released when dropped.
#[derive(Debug)]
pub struct MemberLocks {
    keys: Vec<FileKey>,
}

/// Another process holds a member's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Busy {
    pub member: PathBuf,
}

impl MemberLocks {
    /// Lock every path that exists (missing ones have nothing to protect), without waiting.
    pub fn try_acquire(paths: &[PathBuf]) -> Result<Result<MemberLocks, Busy>, ArrayError> {
        let mut guard = MemberLocks { keys: Vec::new() };
        let mut held = HELD.lock().unwrap();
        let map = held.get_or_insert_with(HashMap::new);
        for p in paths {
            let Ok(file) = File::open(p) else { continue };
            let md = file
                .metadata()
                .map_err(|e| ArrayError::io("cannot stat member", p, &e))?;
            let key = (md.dev(), md.ino());
            if guard.keys.contains(&key) {
                continue;
            }
            if let Some(e) = map.get_mut(&key) {
                e.1 += 1;
                guard.keys.push(key);
                continue;
            }
            // SAFETY: flock on a descriptor we own.
            let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if r != 0 {
                let e = std::io::Error::last_os_error();
                release(map, &guard.keys);
                guard.keys.clear();
                if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    return Ok(Err(Busy { member: p.clone() }));
                }
                return Err(ArrayError::io("cannot lock member", p, &e));
            }
            map.insert(key, (file, 1));
            guard.keys.push(key);
        }
        Ok(Ok(guard))
    }

    /// Lock the members, waiting up to [`LOCK_GRACE`] for a lock being let go, or fail with
    /// one line naming the member in use elsewhere.
    pub fn acquire(paths: &[PathBuf], doing: &str) -> Result<MemberLocks, ArrayError> {
        match Self::acquire_within(paths, LOCK_GRACE)? {
            Ok(g) => Ok(g),
            Err(b) => Err(busy_error(&b, doing)),
        }
    }

    /// [`MemberLocks::try_acquire`], retried until `grace` has passed.
    pub fn acquire_within(
        paths: &[PathBuf],
        grace: Duration,
    ) -> Result<Result<MemberLocks, Busy>, ArrayError> {
        let start = std::time::Instant::now();
        loop {
            match Self::try_acquire(paths)? {
                Err(_) if start.elapsed() < grace => std::thread::sleep(Duration::from_millis(20)),
                other => return Ok(other),
            }
        }
    }
}

/// How long taking the locks waits for another holder to let go. A lock outlives its holder
/// for a moment when the descriptor was copied into a child process between fork and exec
/// (a flock belongs to the open file, which the copy shares until exec closes it): a process
/// that spawns children while it runs an array can make the next verb see a stale lock.
pub const LOCK_GRACE: Duration = Duration::from_secs(1);

fn release(map: &mut Held, keys: &[FileKey]) {
    for k in keys {
        if let Some(e) = map.get_mut(k) {
            e.1 -= 1;
            if e.1 == 0 {
                // Closing the descriptor releases the flock.
                map.remove(k);
            }
        }
    }
}

impl Drop for MemberLocks {
    fn drop(&mut self) {
        if let Some(map) = HELD.lock().unwrap().as_mut() {
            release(map, &self.keys);
        }
    }
}

/// The one-line refusal when another process runs the array.
pub fn busy_error(b: &Busy, doing: &str) -> ArrayError {
    ArrayError::usage(format!(
        "cannot {doing}: member {} is in use by another process running the array (raidlab array serve or rebuild, or raidlab run on array:…); stop that process or let it finish first{}",
        b.member.display(),
        if doing.starts_with("fail") {
            ""
        } else {
            " (only fail works on a served array: it asks the serving process)"
        }
    ))
}

fn socket_name(uuid: &str) -> String {
    format!("raidlab-array-{uuid}")
}

/// A request to the process serving an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Mark the member at this path faulty; `force` allows exceeding the redundancy.
    Fail { member: PathBuf, force: bool },
}

/// What the serving process answered: a message, and whether it was bad input.
pub type Reply = Result<String, ArrayError>;

/// The control socket of a serving process.
pub struct Control {
    listener: UnixListener,
}

impl Control {
    /// Listen for requests about the array `uuid` (as `uuid_string` prints it).
    pub fn listen(uuid: &str) -> Result<Control, ArrayError> {
        let addr = SocketAddr::from_abstract_name(socket_name(uuid).as_bytes())
            .map_err(|e| ArrayError::failed(format!("control socket name: {e}")))?;
        let listener = UnixListener::bind_addr(&addr).map_err(|e| {
            ArrayError::failed(format!(
                "cannot open the control socket of array {uuid}: {e} (is it served twice?)"
            ))
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| ArrayError::failed(format!("control socket: {e}")))?;
        Ok(Control { listener })
    }

    /// Answer every request waiting now (never blocks for long: one line each, 2 s timeout).
    pub fn serve_pending(&self, handle: &mut dyn FnMut(Request) -> Reply) {
        while let Ok((stream, _)) = self.listener.accept() {
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
            let reply = if !peer_is_trusted(&stream) {
                Err(ArrayError::usage(
                    "only the serving user (or root) may control this array",
                ))
            } else {
                match read_request(&stream) {
                    Ok(req) => handle(req),
                    Err(e) => Err(e),
                }
            };
            let line = match reply {
                Ok(m) => format!("ok\t{m}\n"),
                Err(e) if e.is_usage() => format!("usage\t{e}\n"),
                Err(e) => format!("failed\t{e}\n"),
            };
            let _ = (&stream).write_all(line.as_bytes());
        }
    }
}

fn peer_is_trusted(s: &UnixStream) -> bool {
    let mut cred = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: u32::MAX,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    let me = unsafe { libc::geteuid() };
    r == 0 && (cred.uid == me || cred.uid == 0)
}

fn read_request(s: &UnixStream) -> Result<Request, ArrayError> {
    let mut line = String::new();
    BufReader::new(s)
        .read_line(&mut line)
        .map_err(|e| ArrayError::failed(format!("control request: {e}")))?;
    let parts: Vec<&str> = line.trim_end_matches('\n').split('\t').collect();
    match parts.as_slice() {
        ["fail", path, force] => Ok(Request::Fail {
            member: PathBuf::from(path),
            force: *force == "1",
        }),
        _ => Err(ArrayError::usage(format!(
            "control request '{}' is not understood (valid: fail)",
            line.trim()
        ))),
    }
}

/// Send `req` to the process serving array `uuid`. `None` if no process serves it.
pub fn request(uuid: &str, req: &Request) -> Option<Reply> {
    let addr = SocketAddr::from_abstract_name(socket_name(uuid).as_bytes()).ok()?;
    let stream = UnixStream::connect_addr(&addr).ok()?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let line = match req {
        Request::Fail { member, force } => {
            format!("fail\t{}\t{}\n", member.display(), *force as u8)
        }
    };
    if (&stream).write_all(line.as_bytes()).is_err() {
        return Some(Err(ArrayError::failed(
            "the serving process closed its control socket",
        )));
    }
    let mut answer = String::new();
    if BufReader::new(&stream).read_line(&mut answer).is_err() || answer.is_empty() {
        return Some(Err(ArrayError::failed(
            "the serving process did not answer the request",
        )));
    }
    let answer = answer.trim_end_matches('\n');
    let (kind, msg) = answer.split_once('\t').unwrap_or(("failed", answer));
    Some(match kind {
        "ok" => Ok(msg.to_string()),
        "usage" => Err(ArrayError::usage(msg)),
        _ => Err(ArrayError::failed(msg)),
    })
}

/// Canonical form of a member path, for matching a request against the served members.
pub fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
