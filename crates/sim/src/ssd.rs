//! The flash drive model: a controller in front of NAND dies on shared channels, with a
//! write buffer and an SLC cache. Plain reservations in virtual time: each command books
//! the dies and channels its pages need, in the order commands start, and ends when its
//! last page is through. What it is not: a flash translation layer (no mapping table, no
//! garbage collection, no wear; a fresh drive, as it comes out of the box).
//!
//! The shape of it, from how NAND drives are built (e.g. Micheloni et al., *Inside Solid
//! State Drives*, 2013, ch. 2–3; NVMe drives' datasheets for the figures in the catalog):
//! - Data is laid out in pages (`page_kib`) striped over the dies in turn (page `p` on die
//!   `p mod dies`), the dies spread over `channels`; die `d` hangs on channel `d mod
//!   channels`.
//! - A read senses each page it touches on its die (`read_us`, tR), then moves the bytes it
//!   needs over the die's channel (`channel_mb_s`), then out to the host (the drive's port,
//!   `interface_mb_s`, and its controller's `read_mb_s`, a cap over all commands).
//! - A write comes in over the port (and `write_mb_s`), into the write buffer; it is
//!   programmed page by page on the die the drive writes next (a drive fills its dies in
//!   turn whatever the address: writes are not bound to where the data lived). While the SLC
//!   cache (`slc_cache_gib`) has room a page programs in `program_us`; past it, directly to
//!   the native cells in `direct_program_us` — the write cliff of long sequential writes.
//!   The drive folds the SLC cache into native cells when idle, at the direct rate.
//! - With its write cache on, the drive acknowledges a write once the data is in its buffer
//!   (`cache_kib`), as long as the buffer has room: otherwise when the programs of older
//!   data free enough of it. A flush waits until every program is done.
//! - `max_iops`: the controller's command rate (0: no limit), the ceiling datasheets give
//!   for small random commands.

use std::collections::VecDeque;

use crate::catalog::DiskSpec;

/// A flash drive's static figures, in ns and bytes (from a [`DiskSpec`]).
#[derive(Clone, Debug)]
pub struct SsdModel {
    dies: u32,
    channels: u32,
    page: u64,
    command_ns: u64,
    read_ns: u64,
    /// Die time to program one page while the SLC cache has room, and past it.
    slc_program_ns: u64,
    direct_program_ns: u64,
    /// Bytes the SLC cache holds (0: none, every page programs in `slc_program_ns`).
    slc_bytes: u64,
    channel_ns_per_byte: f64,
    /// Host side: the slower of the port and the controller's cap, reads and writes.
    out_ns_per_byte: f64,
    in_ns_per_byte: f64,
    /// The controller's time per command (1 / `max_iops`; 0: no limit).
    command_gap_ns: u64,
    /// Written data the drive acknowledges ahead of its programs (0: write cache off).
    buffer_bytes: u64,
}

/// What a flash drive remembers: when each die, channel and the host side is next free, and
/// how full its SLC cache and write buffer are.
#[derive(Clone, Debug, Default)]
pub struct SsdState {
    die_free: Vec<u64>,
    /// Each channel's booked transfers still to end, (start, end) in time order: a transfer
    /// takes the first gap it fits after its data is ready, so a transfer booked for later
    /// (behind a busy die) does not hold up one whose die is free now.
    channel_busy: Vec<Vec<(u64, u64)>>,
    out_free: u64,
    in_free: u64,
    command_free: u64,
    /// The die the next written page goes to, and the bytes already in that page.
    next_die: u64,
    page_fill: u64,
    /// SLC cache bytes in use, and from when the cache has folded down to that.
    slc_used: u64,
    fold_from: u64,
    /// When the last program booked ends.
    programs_done: u64,
    /// Bytes written so far, and (bytes written up to the end of a write, when its
    /// programs are done) for the writes the buffer may still hold, oldest first; `freed`:
    /// when the programs of everything older than those are done.
    written: u64,
    pending: VecDeque<(u64, u64)>,
    freed: u64,
    /// Die time booked: sensing, channel transfers and programs, ns.
    pub die_busy_ns: u64,
}

#[inline(always)]
fn ns_of(bytes: u64, ns_per_byte: f64) -> u64 {
    (bytes as f64 * ns_per_byte).ceil() as u64
}

/// Per byte, ns, of `mb_s` decimal MB/s (0 for a rate not given: no limit).
fn per_byte(mb_s: f64) -> f64 {
    if mb_s > 0.0 {
        1e3 / mb_s
    } else {
        0.0
    }
}

impl SsdState {
    /// SLC cache bytes in use (as of the last write).
    pub fn slc_used(&self) -> u64 {
        self.slc_used
    }
}

impl SsdModel {
    pub fn new(s: &DiskSpec, write_cache: bool) -> SsdModel {
        let slc_program_ns = (s.program_us * 1e3) as u64;
        SsdModel {
            dies: s.units.max(1),
            channels: s.channels.clamp(1, s.units.max(1)),
            page: u64::from(s.page_kib.max(1)) * 1024,
            command_ns: (s.command_us * 1e3) as u64,
            read_ns: (s.read_us * 1e3) as u64,
            slc_program_ns,
            direct_program_ns: if s.direct_program_us > 0.0 {
                (s.direct_program_us * 1e3) as u64
            } else {
                slc_program_ns
            },
            slc_bytes: (s.slc_cache_gib * (1u64 << 30) as f64) as u64,
            channel_ns_per_byte: per_byte(s.channel_mb_s),
            out_ns_per_byte: per_byte(s.interface_mb_s).max(per_byte(s.read_mb_s)),
            in_ns_per_byte: per_byte(s.interface_mb_s).max(per_byte(s.write_mb_s)),
            command_gap_ns: if s.max_iops > 0.0 {
                (1e9 / s.max_iops).round() as u64
            } else {
                0
            },
            buffer_bytes: if write_cache {
                u64::from(s.cache_kib) * 1024
            } else {
                0
            },
        }
    }

    /// Dies: what works in parallel (the drive's utilisation is their busy share).
    pub fn dies(&self) -> u32 {
        self.dies
    }

    /// The state of a drive that has done nothing yet.
    pub fn state(&self) -> SsdState {
        SsdState {
            die_free: vec![0; self.dies as usize],
            channel_busy: vec![Vec::new(); self.channels as usize],
            ..SsdState::default()
        }
    }

    /// Reads, bytes/s, that the drive keeps up with many commands in flight: its dies
    /// sensing whole pages, its channels, and its host side, whichever is least.
    pub fn read_bound(&self) -> f64 {
        let dies = if self.read_ns > 0 {
            self.dies as f64 * self.page as f64 * 1e9 / self.read_ns as f64
        } else {
            f64::INFINITY
        };
        dies.min(self.channels_bound())
            .min(bound(self.out_ns_per_byte))
    }

    /// Writes, bytes/s: [past the SLC cache, the same, while it has room] (the shape of
    /// [`crate::device::DeviceModel::write_rates`]).
    pub fn write_bounds(&self) -> [f64; 3] {
        let at = |program_ns: u64| {
            let dies = if program_ns > 0 {
                self.dies as f64 * self.page as f64 * 1e9 / program_ns as f64
            } else {
                f64::INFINITY
            };
            dies.min(self.channels_bound())
                .min(bound(self.in_ns_per_byte))
        };
        let direct = at(if self.slc_bytes > 0 {
            self.direct_program_ns
        } else {
            self.slc_program_ns
        });
        [direct, direct, at(self.slc_program_ns)]
    }

    fn channels_bound(&self) -> f64 {
        self.channels as f64 * bound(self.channel_ns_per_byte)
    }

    /// The SLC cache's size, bytes (0: none).
    pub fn slc_bytes(&self) -> u64 {
        self.slc_bytes
    }

    /// Whether written data is still only in the drive's volatile buffer at `now`.
    pub fn holds_unwritten(&self, st: &SsdState, now: u64) -> bool {
        self.buffer_bytes > 0 && st.programs_done > now
    }

    /// When what the drive's volatile buffer holds is all programmed (0 with its write
    /// cache off: nothing is acknowledged before it is).
    pub fn stable_at(&self, st: &SsdState) -> u64 {
        if self.buffer_bytes > 0 {
            st.programs_done
        } else {
            0
        }
    }

    /// Serve a command that starts at `t`: book its dies, channels and host side; the time
    /// until it completes, ns (at least 1).
    pub fn service(&self, st: &mut SsdState, t: u64, offset: u64, len: u64, write: bool) -> u64 {
        // The controller takes commands one after another at its command rate.
        let taken = t.max(st.command_free);
        st.command_free = taken + self.command_gap_ns;
        let t0 = taken + self.command_ns;
        let end = if write {
            self.write(st, t0, len)
        } else {
            self.read(st, t0, offset, len)
        };
        debug_assert!(end >= t);
        (end - t).max(1)
    }

    fn read(&self, st: &mut SsdState, t0: u64, offset: u64, len: u64) -> u64 {
        let mut last = t0;
        let mut at = offset;
        let stop = offset + len;
        while at < stop {
            let page = at / self.page;
            let bytes = ((page + 1) * self.page).min(stop) - at;
            let die = (page % u64::from(self.dies)) as usize;
            let ch = die % self.channels as usize;
            let sensed = t0.max(st.die_free[die]) + self.read_ns;
            let moved = book(
                &mut st.channel_busy[ch],
                t0,
                sensed,
                ns_of(bytes, self.channel_ns_per_byte),
            );
            // The die holds the page in its register until the channel has taken it.
            st.die_busy_ns += moved - sensed + self.read_ns;
            st.die_free[die] = moved;
            last = last.max(moved);
            at += bytes;
        }
        // Out to the host as pages come in: the host side is booked for the whole
        // command, and the last page still has to go out after it arrives.
        let out = ns_of(len, self.out_ns_per_byte);
        let sent = t0.max(st.out_free) + out;
        st.out_free = sent;
        sent.max(last + ns_of(len.min(self.page), self.out_ns_per_byte))
    }

    fn write(&self, st: &mut SsdState, t0: u64, len: u64) -> u64 {
        let arrived = t0.max(st.in_free) + ns_of(len, self.in_ns_per_byte);
        st.in_free = arrived;
        // Idle since the last program: the SLC cache folded into native cells meanwhile.
        if self.slc_bytes > 0 {
            let idle_from = st.fold_from.max(st.programs_done);
            if arrived > idle_from && st.slc_used > 0 {
                let folded = (arrived - idle_from) as f64 * self.fold_bytes_per_ns();
                st.slc_used = st.slc_used.saturating_sub(folded as u64);
            }
            st.fold_from = st.fold_from.max(arrived);
        }
        let mut done = arrived;
        let mut left = len;
        while left > 0 {
            // The bytes that fill the page being written: programmed with it, their share
            // of its program time.
            let bytes = (self.page - st.page_fill).min(left);
            let die = (st.next_die % u64::from(self.dies)) as usize;
            let ch = die % self.channels as usize;
            let program_ns = if self.slc_bytes == 0 || st.slc_used + bytes <= self.slc_bytes {
                st.slc_used += bytes;
                self.slc_program_ns
            } else {
                self.direct_program_ns
            };
            let moved = book(
                &mut st.channel_busy[ch],
                t0,
                arrived,
                ns_of(bytes, self.channel_ns_per_byte),
            );
            let start = moved.max(st.die_free[die]);
            let programmed =
                start + (program_ns as u128 * bytes as u128 / self.page as u128) as u64;
            st.die_busy_ns += programmed - start + ns_of(bytes, self.channel_ns_per_byte);
            st.die_free[die] = programmed;
            done = done.max(programmed);
            st.page_fill += bytes;
            if st.page_fill == self.page {
                st.page_fill = 0;
                st.next_die += 1;
            }
            left -= bytes;
        }
        st.programs_done = st.programs_done.max(done);
        if self.buffer_bytes == 0 || len >= self.buffer_bytes {
            // (A write the buffer cannot hold whole completes with its programs.)
            return done;
        }
        // Acknowledged from the buffer once it has room: everything but the last
        // `buffer_bytes` written must be programmed.
        st.written += len;
        st.pending.push_back((st.written, done));
        let must = st.written.saturating_sub(self.buffer_bytes);
        while let Some(&(upto, d)) = st.pending.front() {
            if upto > must {
                break;
            }
            st.freed = st.freed.max(d);
            st.pending.pop_front();
        }
        arrived.max(st.freed)
    }

    /// How fast an idle drive folds its SLC cache into native cells, bytes per ns: its dies
    /// programming at the direct rate.
    fn fold_bytes_per_ns(&self) -> f64 {
        if self.direct_program_ns == 0 {
            return f64::INFINITY;
        }
        self.dies as f64 * self.page as f64 / self.direct_program_ns as f64
    }
}

/// Book `dur` ns of a channel whose transfers still to end are `busy`, in the first gap at
/// or after `ready`; forget those ended by `now` (every later booking starts after it). When
/// the transfer ends.
fn book(busy: &mut Vec<(u64, u64)>, now: u64, ready: u64, dur: u64) -> u64 {
    let ended = busy.partition_point(|&(_, e)| e <= now);
    busy.drain(..ended);
    let mut at = ready;
    let mut i = 0;
    while i < busy.len() {
        let (s, e) = busy[i];
        if e <= at {
            i += 1;
            continue;
        }
        if s >= at + dur {
            break;
        }
        at = at.max(e);
        i += 1;
    }
    busy.insert(i, (at, at + dur));
    debug_assert!(busy.windows(2).all(|w| w[0].1 <= w[1].0));
    at + dur
}

fn bound(ns_per_byte: f64) -> f64 {
    if ns_per_byte > 0.0 {
        1e9 / ns_per_byte
    } else {
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_takes_the_first_gap_it_fits_after_its_data_is_ready() {
        let mut busy = Vec::new();
        // One booked far ahead (behind a busy die) ...
        assert_eq!(book(&mut busy, 0, 1000, 100), 1100);
        // ... does not hold up one ready now, which fits before it,
        assert_eq!(book(&mut busy, 0, 10, 100), 110);
        // nor one that fits in the gap between them; one that does not goes after both.
        assert_eq!(book(&mut busy, 0, 200, 300), 500);
        assert_eq!(book(&mut busy, 0, 600, 450), 1550);
        assert_eq!(busy, [(10, 110), (200, 500), (1000, 1100), (1100, 1550)]);
        // Transfers ended by `now` are forgotten.
        assert_eq!(book(&mut busy, 520, 520, 10), 530);
        assert_eq!(busy, [(520, 530), (1000, 1100), (1100, 1550)]);
    }

    fn drive() -> SsdModel {
        let s = crate::catalog::find("nvme-tlc-1tb").unwrap();
        SsdModel::new(&s, true)
    }

    #[test]
    fn one_page_read_is_a_sense_and_two_transfers() {
        let m = drive();
        let mut st = m.state();
        let ns = m.service(&mut st, 0, 0, 4096, false);
        // 5 µs command, 60 µs sense, 4 KiB over an 800 MB/s channel, then the 4 KiB out at
        // 3500 MB/s (the slower of the port and the controller's read rate).
        let want = 5_000 + 60_000 + ns_of(4096, 1.25) + ns_of(4096, 1e3 / 3500.0);
        assert_eq!(ns, want);
        // A second read of the same page waits for the die; one on the next page does not.
        let same = m.service(&mut st, 0, 0, 4096, false);
        let mut st2 = m.state();
        m.service(&mut st2, 0, 0, 4096, false);
        let next = m.service(&mut st2, 0, 16384, 4096, false);
        assert!(same > ns + 60_000, "{same}");
        assert!(next < ns + 10_000, "{next}");
    }

    #[test]
    fn writes_are_acknowledged_from_the_buffer_until_it_is_full() {
        let m = drive();
        let mut st = m.state();
        // 8 MiB buffer: the first 1 MiB writes come back once their data is in, long before
        // their pages are programmed.
        let first = m.service(&mut st, 0, 0, 1 << 20, true);
        assert!(first < 400_000, "{first}");
        assert!(st.programs_done > first);
        // Written back to back at t = 0, later ones wait for programs of older data to free
        // the buffer: the 16th ends no sooner than the first half's programs.
        let mut last = 0;
        for i in 1..16u64 {
            last = m.service(&mut st, 0, i << 20, 1 << 20, true);
        }
        let half_programmed = 8.0 * (1 << 20) as f64 / 3.3e9 * 1e9;
        assert!(last as f64 > half_programmed * 0.9, "{last}");
        // Write cache off: a write ends with its programs.
        let off = SsdModel::new(&crate::catalog::find("nvme-tlc-1tb").unwrap(), false);
        let mut st = off.state();
        let ns = off.service(&mut st, 0, 0, 1 << 20, true);
        assert_eq!(ns, st.programs_done);
    }
}
