//! Parallel member I/O: one worker thread per member device, so the member reads or writes of
//! one phase of a stripe operation run at the same time on every member. A batch is submitted
//! and waited for as a whole; every operation runs to completion even if another fails, so the
//! caller sees every member that failed and the state a retry starts from is well defined.

use std::io;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A device the array reads and writes: a member's data area, or a child array.
pub trait Dev: Send + Sync {
    fn read(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    fn write(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    fn flush(&self) -> io::Result<()>;
}

/// One member operation. The buffer is referenced by pointer because it is borrowed from the
/// caller's stack frame for exactly the duration of [`Pool::run`], which blocks until every
/// operation in the batch has finished.
pub struct Op {
    pub dev: usize,
    pub offset: u64,
    ptr: *mut u8,
    len: usize,
    write: bool,
}

unsafe impl Send for Op {}

impl Op {
    pub fn read(dev: usize, offset: u64, buf: &mut [u8]) -> Op {
        Op {
            dev,
            offset,
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
            write: false,
        }
    }
    /// # Safety
    /// `ptr` must point at `len` bytes that stay valid (and, for reads, unaliased) until the
    /// [`Pool::run`] this op is passed to returns.
    pub unsafe fn raw(dev: usize, offset: u64, ptr: *mut u8, len: usize, write: bool) -> Op {
        Op {
            dev,
            offset,
            ptr,
            len,
            write,
        }
    }
    pub fn write(dev: usize, offset: u64, buf: &[u8]) -> Op {
        Op {
            dev,
            offset,
            ptr: buf.as_ptr() as *mut u8,
            len: buf.len(),
            write: true,
        }
    }
    fn exec(&self, dev: &dyn Dev) -> io::Result<()> {
        // SAFETY: the pointer and length come from a live slice whose borrow outlives the
        // batch (Pool::run does not return before every op has executed); reads get a
        // unique borrow, and writes only read through the pointer.
        unsafe {
            if self.write {
                dev.write(std::slice::from_raw_parts(self.ptr, self.len), self.offset)
            } else {
                dev.read(
                    std::slice::from_raw_parts_mut(self.ptr, self.len),
                    self.offset,
                )
            }
        }
    }
}

struct Batch {
    state: Mutex<(usize, Vec<(usize, io::Error)>)>,
    done: Condvar,
}

type Job = (Vec<Op>, Arc<Batch>);

pub struct Pool {
    devs: Vec<Option<Arc<dyn Dev>>>,
    senders: Vec<Option<Sender<Job>>>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    pub fn new(devs: Vec<Option<Arc<dyn Dev>>>) -> Pool {
        let mut senders = Vec::new();
        let mut threads = Vec::new();
        for d in &devs {
            match d {
                Some(dev) => {
                    let (tx, rx) = channel::<Job>();
                    let dev = dev.clone();
                    threads.push(std::thread::spawn(move || {
                        while let Ok((ops, batch)) = rx.recv() {
                            let mut errs = Vec::new();
                            for op in &ops {
                                if let Err(e) = op.exec(&*dev) {
                                    errs.push((op.dev, e));
                                }
                            }
                            let mut st = batch.state.lock().unwrap();
                            st.0 -= 1;
                            st.1.extend(errs);
                            if st.0 == 0 {
                                batch.done.notify_all();
                            }
                        }
                    }));
                    senders.push(Some(tx));
                }
                None => senders.push(None),
            }
        }
        Pool {
            devs,
            senders,
            threads,
        }
    }

    pub fn dev(&self, i: usize) -> Option<&Arc<dyn Dev>> {
        self.devs.get(i).and_then(|d| d.as_ref())
    }

    /// Run every op, members in parallel; return each (device, error) that failed.
    pub fn run(&self, mut ops: Vec<Op>) -> Vec<(usize, io::Error)> {
        if ops.is_empty() {
            return Vec::new();
        }
        ops.sort_by_key(|o| (o.dev, o.offset));
        let mut groups: Vec<Vec<Op>> = Vec::new();
        for op in ops {
            match groups.last_mut() {
                Some(g) if g[0].dev == op.dev => g.push(op),
                _ => groups.push(vec![op]),
            }
        }
        let mut errors = Vec::new();
        let missing = |g: &Vec<Op>, errors: &mut Vec<(usize, io::Error)>| {
            errors.push((g[0].dev, io::Error::other("member is not present")));
        };
        // The caller's thread does the first group itself; the rest go to the workers.
        let first = groups.remove(0);
        let batch = Arc::new(Batch {
            state: Mutex::new((0, Vec::new())),
            done: Condvar::new(),
        });
        let mut sent = 0;
        for g in groups {
            match self.senders.get(g[0].dev).and_then(|s| s.as_ref()) {
                Some(tx) => {
                    batch.state.lock().unwrap().0 += 1;
                    if tx.send((g, batch.clone())).is_err() {
                        let mut st = batch.state.lock().unwrap();
                        st.0 -= 1;
                        st.1.push((usize::MAX, io::Error::other("member worker stopped")));
                    } else {
                        sent += 1;
                    }
                }
                None => missing(&g, &mut errors),
            }
        }
        match self.dev(first[0].dev) {
            Some(dev) => {
                for op in &first {
                    if let Err(e) = op.exec(&**dev) {
                        errors.push((op.dev, e));
                    }
                }
            }
            None => missing(&first, &mut errors),
        }
        if sent > 0 {
            let mut st = batch.state.lock().unwrap();
            while st.0 > 0 {
                st = batch.done.wait(st).unwrap();
            }
            errors.append(&mut st.1);
        } else {
            errors.append(&mut batch.state.lock().unwrap().1);
        }
        errors
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.senders.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
