//! The start of a stonewall group's jobs, together: each job instance sets itself up (binds
//! to its CPUs, takes its buffers, opens its executor) and then waits at the group's
//! [`StartGate`] until every other instance has done the same, or has failed and will not
//! run. Only then does each start its clock. Without it, the first job spawned would run
//! for as long as the others take to be spawned and set up, alone on the target.
//!
//! fio holds its jobs the same way: `run_threads` waits for every job to report itself
//! initialized (`startup_sem`), then releases them all at once (each job's `td->sem`). raidlab
//! releases them later, after their buffers and rings are set up, so those no longer stagger
//! the starts either.
//!
//! A job that waits for another (`wait_for`) starts when that one ends, not at the gate, and
//! takes no ticket.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The gate of one stonewall group: how many of its tickets have neither arrived nor been
/// given up. It opens when that count reaches 0, and stays open.
#[derive(Default)]
pub struct StartGate {
    outstanding: Mutex<usize>,
    opened: Condvar,
}

/// One job instance's place at the gate. [`Ticket::arrive`] waits for the others; a ticket
/// dropped without arriving (its job failed before it could start) gives up its place, so
/// the others do not wait for it.
pub struct Ticket {
    gate: Arc<StartGate>,
    used: bool,
}

impl StartGate {
    /// A gate for the tickets it hands out. All of them must be taken before any arrives:
    /// the gate opens as soon as every ticket taken so far has arrived.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// One more place at the gate.
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        *self.lock() += 1;
        Ticket {
            gate: Arc::clone(self),
            used: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, usize> {
        self.outstanding.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One ticket has arrived or been given up; the last opens the gate.
    fn count_off(&self) -> std::sync::MutexGuard<'_, usize> {
        let mut n = self.lock();
        debug_assert!(*n > 0, "more tickets came back than were handed out");
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.opened.notify_all();
        }
        n
    }
}

impl Ticket {
    /// Wait until every ticket of the gate has arrived or been given up, or until `halt`
    /// says the run is being stopped (looked at every 50 ms).
    pub fn arrive(mut self, halt: impl Fn() -> bool) {
        self.used = true;
        let mut n = self.gate.count_off();
        while *n > 0 && !halt() {
            n = self
                .gate
                .opened
                .wait_timeout(n, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.used {
            drop(self.gate.count_off());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Nobody passes the gate before the last ticket arrives; then everybody does.
    #[test]
    fn no_ticket_passes_before_the_last_arrives() {
        let gate = StartGate::new();
        let passed = Arc::new(AtomicUsize::new(0));
        let last = gate.ticket();
        let early: Vec<_> = (0..3)
            .map(|_| {
                let (t, p) = (gate.ticket(), Arc::clone(&passed));
                std::thread::spawn(move || {
                    t.arrive(|| false);
                    p.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        // (Long enough for the three to have arrived and, were the gate open, passed.)
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(passed.load(Ordering::SeqCst), 0, "a ticket passed early");
        last.arrive(|| false);
        for h in early {
            h.join().unwrap();
        }
        assert_eq!(passed.load(Ordering::SeqCst), 3);
    }

    /// A ticket given up (its job failed before it started) is not waited for.
    #[test]
    fn a_ticket_given_up_is_not_waited_for() {
        let gate = StartGate::new();
        let (a, b) = (gate.ticket(), gate.ticket());
        let h = std::thread::spawn(move || a.arrive(|| false));
        drop(b);
        h.join().unwrap();
        // And the gate stays open for a ticket taken after it opened.
        gate.ticket().arrive(|| false);
    }

    /// A stop lets a waiting ticket through even if others never come.
    #[test]
    fn a_stop_lets_a_waiting_ticket_through() {
        let gate = StartGate::new();
        let (a, _never) = (gate.ticket(), gate.ticket());
        a.arrive(|| true);
    }
}
