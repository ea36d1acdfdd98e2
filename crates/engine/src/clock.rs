//! Time, injected. The executors take a [`Clock`] so tests can run them in a time that only
//! moves when they say so; real runs use [`Monotonic`], which reads CLOCK_MONOTONIC through
//! the vDSO (no system call).

use std::sync::atomic::{AtomicU64, Ordering};

pub trait Clock: Send + Sync {
    /// Nanoseconds since an arbitrary fixed origin; never goes backwards.
    fn now_ns(&self) -> u64;
    /// Block the calling thread until `now_ns()` reaches `t` (a paced job's wait).
    fn sleep_until(&self, t: u64) {
        let now = self.now_ns();
        if t > now {
            std::thread::sleep(std::time::Duration::from_nanos(t - now));
        }
    }
}

/// CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug, Default)]
pub struct Monotonic;

impl Clock for Monotonic {
    #[inline]
    fn now_ns(&self) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
    /// An absolute sleep on the same clock, so the time spent working out how long to
    /// sleep is not added to it.
    fn sleep_until(&self, t: u64) {
        let ts = libc::timespec {
            tv_sec: (t / 1_000_000_000) as libc::time_t,
            tv_nsec: (t % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: ts is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        // An interrupted sleep returns early; callers loop until the time has come.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
    }
}

/// A clock that advances by a fixed step every time it is read: deterministic time for tests.
#[derive(Debug)]
pub struct Stepping {
    now: AtomicU64,
    step: u64,
}

impl Stepping {
    pub fn new(step_ns: u64) -> Self {
        Stepping {
            now: AtomicU64::new(0),
            step: step_ns,
        }
    }
    /// Move the clock on by `ns` (something that takes that long happened).
    pub fn advance(&self, ns: u64) {
        self.now.fetch_add(ns, Ordering::Relaxed);
    }
}

impl Clock for Stepping {
    fn now_ns(&self) -> u64 {
        self.now.fetch_add(self.step, Ordering::Relaxed) + self.step
    }
    /// Sleeping is time passing: the clock moves on to `t` at once.
    fn sleep_until(&self, t: u64) {
        self.now.fetch_max(t, Ordering::Relaxed);
    }
}
