//! The flash drive model: a controller in front of NAND dies on shared channels, with a
//! write buffer and an SLC cache. Plain reservations in virtual time: each command books
//! the dies and channels its pages need, in the order commands start, and ends when its
//! last page is through. What it is not: a flash translation layer (no mapping table, no
//! wear, no hot and cold data told apart); garbage collection is a statistical charge on the
//! dies (below), not blocks and pages tracked one by one.
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
//!
//! The drive's state (`ssd_state`). `fresh`, the default: every block erased, as it comes
//! out of the box; nothing above this paragraph collects or erases anything. `steady`: the
//! drive is full and has been written over many times (SNIA's Solid State Storage
//! Performance Test Specification preconditions with twice the capacity in writes before it
//! measures), so every page written needs a block erased first, and a block can only be
//! erased once the valid pages still in it are copied elsewhere:
//! - Write amplification of random overwrites: greedy cleaning (the block with the fewest
//!   valid pages goes first) of uniformly random page writes, with `spare_fraction` = s of
//!   raw flash beyond the user capacity. With many pages per block every block ages alike,
//!   greedy cleans the oldest, and the valid share x of a cleaned block solves
//!   x = exp(-(1 - x)(1 + s)); each cleaning frees (1 - x) of a block for (x) copied, so a
//!   host page costs A = 1 / (1 - x) programs (Desnoyers, "Analytic modeling of SSD write
//!   performance", SYSTOR 2012, the LRU/FIFO model greedy tends to as blocks grow; the same
//!   closed form through Lambert's W in Xiang and Kurkoski, "An improved analytical
//!   expression for write amplification in NAND flash", arXiv:1110.4245, 2011, which gives
//!   2.36 at s = 0.3 against 2.35 simulated). Hu et al. ("Write amplification analysis in
//!   flash-based solid state drives", SYSTOR 2009) simulate greedy a little below it with
//!   few pages per block; this model keeps the large-block value. A = 6.9 at 8% spare, 4.1
//!   at 14.5%, 2.5 at 28%.
//! - How random the writes are comes from the writes the drive sees: it tracks where its
//!   last few write streams ended (`STREAMS`, one open block each, as drives keep
//!   sequential streams apart). A write that continues one is sequential: its data will be
//!   overwritten as it was written, whole blocks at a time, and costs no copies (A = 1). Any
//!   other write is random, but for the share of it beyond a superblock (one erase block on
//!   every die: what the drive fills in turn), whose blocks it fills whole. The workload is
//!   taken as stationary: data is invalidated the way it is being written now.
//! - The footprint: random writes to part of the drive (a 10 GiB file on a 1 TB drive) leave
//!   the rest as cold data in full blocks, which greedy cleaning never picks; the hot data
//!   has all the spare flash to itself. With a share f of the user capacity overwritten, the
//!   raw flash left for it is (f + s) of the user capacity for f of data: a spare of s / f,
//!   so A = that of s / f (the "effective over-provisioning" of writing a smaller range).
//!   f is the part of the drive random writes have touched: the span they cover (lowest
//!   to highest address, which a few hundred writes find), or, if smaller, the 1/256ths of
//!   the capacity they have touched (uniform writes touch 86% of those in their range
//!   within two writes a granule, 98% within four). Two hot regions far apart then count
//!   as the granules they lie in, not the span between them (two 1 GiB regions of a 1 TB
//!   drive: 8 GiB, against 1 TB by the span alone).
//! - The copies: for each random byte written, A - 1 bytes of valid data are copied, a page
//!   at a time, on the die the host's page goes to, before it: sensed (`read_us`), over the
//!   channel to the controller and back (its ECC checks the data: controllers of TLC drives
//!   do not copy back inside the die unchecked, an assumption), and programmed. The die
//!   erases a block (`erase_ms`) each `block_pages` pages it programs. So a steady drive's
//!   random writes are slower by about A, and reads wait behind the copies on their dies.
//! - No SLC cache in steady state: a full drive has no dynamic SLC room left, and a static
//!   one (a few GB) is long spent by sustained writes (assumption), so every page programs
//!   at the direct rate.
//! - Trims (`trim`): the controller takes a trim as any command (its command rate and
//!   `command_us`) and only updates its mapping table: no die, channel or host transfer
//!   (an assumption: datasheets give no trim latency; the mapping update is in the
//!   controller's memory). In steady state, a granule of the footprint (below) trimmed
//!   whole holds no valid data until it is written again: it is spare flash like the
//!   drive's own. With a share T of the user capacity so released, the footprint's spare is
//!   (s + T) / f — trimming what a file system does not use gives the data it does use the
//!   write amplification of a drive with that much more over-provisioning (the effect SNIA's
//!   test specification warns of when a drive is not purged). Trimmed space is counted in
//!   64ths of a granule (1/16384 of the drive): a trim releases the ones it covers whole, a
//!   write takes back those it touches (a simplification: a 4 KiB write into a trimmed 64th
//!   takes it all back).
//! - Not modelled: idle-time collection ahead of need, hot and cold data mixed within the
//!   footprint.

use std::collections::VecDeque;

use crate::catalog::{DiskSpec, FlashState};

/// Write streams a steady drive tells apart (open blocks it keeps for sequential writers).
/// Assumption: a few, as drives keep a handful of open blocks; 8 covers fio's jobs and md's
/// member streams of the systems here.
pub const STREAMS: usize = 8;

/// Fixed-point scale of the copy charge (copied bytes per host byte × 2^16).
const FX: u32 = 16;

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
    /// Garbage collection, in steady state only (`None`: a fresh drive).
    gc: Option<Gc>,
}

/// A steady drive's garbage collection figures.
#[derive(Clone, Debug)]
pub struct Gc {
    /// Write amplification of random overwrites (programs per host page).
    pub amplification: f64,
    /// The spare fraction it follows from.
    pub spare: f64,
    /// Bytes copied per random host byte, × 2^16.
    copy_fx: u64,
    erase_ns: u64,
    block_pages: u32,
    /// One erase block on every die: a write longer than this fills whole blocks.
    superblock: u64,
    /// The user capacity, bytes (what the footprint is a share of).
    user_bytes: u64,
    /// The footprint's granule: 2^this bytes.
    granule_shift: u32,
}

/// Granules the footprint is counted in, at most: a bit each.
const GRANULES: u64 = 256;

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
    /// Bytes written up to the newest write let go of `pending` (its programs done by
    /// `freed`).
    released: u64,
    /// Die time booked: sensing, channel transfers and programs, ns.
    pub die_busy_ns: u64,
    /// Steady state: copies owed (bytes × 2^16), pages each die has programmed since its
    /// last erase, where the last write streams ended (the oldest replaced first).
    gc_owed: u64,
    block_fill: Vec<u32>,
    stream_ends: [u64; STREAMS],
    stream_next: usize,
    /// Steady state: the span random writes have covered (lowest, highest address), the
    /// granules they have touched (a bit each) and how many, the footprint the copy charge
    /// was last worked out for, bytes, and that charge (bytes copied per random host byte,
    /// × 2^16).
    hot_lo: u64,
    hot_hi: u64,
    hot_map: [u64; (GRANULES / 64) as usize],
    hot_granules: u64,
    hot_span: u64,
    hot_fx: u64,
    /// Steady state: the parts of each granule (a 64th each: word g's bits are granule g's)
    /// trimmed whole and not written since, and how many; the charge is worked out again
    /// when it changes. Empty until the first trim.
    trimmed_map: Vec<u64>,
    trimmed_parts: u64,
    /// Trim commands taken.
    pub trims: u64,
    /// Steady state: bytes the host wrote, and bytes garbage collection copied.
    pub host_bytes: u64,
    pub copied_bytes: u64,
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

/// Write amplification of uniformly random overwrites under greedy cleaning with many pages
/// per block, `spare` = (raw - user) / user (see the module's doc): 1 / (1 - x), x the valid
/// share of a cleaned block, the root in (0, 1) of x = exp(-(1 - x)(1 + spare)). Found by
/// bisection on y = 1 - x: f(y) = 1 - y - exp(-y (1 + spare)) is positive between 0 and the
/// root and negative above it.
pub fn greedy_amplification(spare: f64) -> f64 {
    let k = 1.0 + spare;
    let f = |y: f64| 1.0 - y - (-y * k).exp();
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    // f rises from 0 at y = 0 (slope k - 1 > 0), so start past its hump's left edge.
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid > 0.0 && f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    1.0 / hi.max(f64::MIN_POSITIVE)
}

/// Bytes copied per random host byte, × 2^16, at write amplification `a`.
fn copy_fx_of(a: f64) -> u64 {
    ((a - 1.0) * f64::from(1u32 << FX)).round() as u64
}

impl SsdModel {
    pub fn new(s: &DiskSpec, write_cache: bool) -> SsdModel {
        let steady = s.ssd_state == FlashState::Steady;
        let direct_program_ns = if s.direct_program_us > 0.0 {
            (s.direct_program_us * 1e3) as u64
        } else {
            (s.program_us * 1e3) as u64
        };
        // A steady drive has no SLC room: every page programs at the direct rate.
        let slc_program_ns = if steady {
            direct_program_ns
        } else {
            (s.program_us * 1e3) as u64
        };
        let dies = s.units.max(1);
        let page = u64::from(s.page_kib.max(1)) * 1024;
        let gc = steady.then(|| {
            let amplification = greedy_amplification(s.spare_fraction);
            Gc {
                amplification,
                spare: s.spare_fraction,
                copy_fx: copy_fx_of(amplification),
                erase_ns: (s.erase_ms * 1e6) as u64,
                block_pages: s.block_pages.max(1),
                superblock: u64::from(dies) * u64::from(s.block_pages.max(1)) * page,
                user_bytes: s.capacity_bytes.max(1),
                granule_shift: (s.capacity_bytes.max(1).div_ceil(GRANULES))
                    .next_power_of_two()
                    .trailing_zeros(),
            }
        });
        SsdModel {
            dies,
            channels: s.channels.clamp(1, s.units.max(1)),
            page,
            command_ns: (s.command_us * 1e3) as u64,
            read_ns: (s.read_us * 1e3) as u64,
            slc_program_ns,
            direct_program_ns,
            slc_bytes: if steady {
                0
            } else {
                (s.slc_cache_gib * (1u64 << 30) as f64) as u64
            },
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
            gc,
        }
    }

    /// A steady drive's garbage collection figures (`None`: fresh).
    pub fn gc(&self) -> Option<&Gc> {
        self.gc.as_ref()
    }

    /// Random writes, bytes/s, a steady drive keeps up with many commands in flight: per host
    /// page its die programs A pages, senses and moves A - 1 over its channel twice, and
    /// erases A / `block_pages` blocks, and its channel carries the host's page besides;
    /// whichever of dies, channels and host side is least.
    /// `None` for a fresh drive.
    pub fn steady_random_write_bound(&self) -> Option<f64> {
        let gc = self.gc.as_ref()?;
        let a = gc.amplification;
        let xfer = self.page as f64 * self.channel_ns_per_byte;
        // (The host's page crosses the channel while its die still works on the last one.)
        let die_ns = a * self.direct_program_ns as f64
            + (a - 1.0) * (self.read_ns as f64 + 2.0 * xfer)
            + a * gc.erase_ns as f64 / f64::from(gc.block_pages);
        let dies = self.dies as f64 * self.page as f64 * 1e9 / die_ns;
        let channel_ns = (1.0 + 2.0 * (a - 1.0)) * xfer;
        let channels = if channel_ns > 0.0 {
            self.channels as f64 * self.page as f64 * 1e9 / channel_ns
        } else {
            f64::INFINITY
        };
        Some(dies.min(channels).min(bound(self.in_ns_per_byte)))
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
            block_fill: if self.gc.is_some() {
                vec![0; self.dies as usize]
            } else {
                Vec::new()
            },
            stream_ends: [u64::MAX; STREAMS],
            hot_lo: u64::MAX,
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

    /// The drive's write buffer, bytes (0: write cache off).
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_bytes
    }

    /// Bytes acknowledged from the buffer whose programs are not done at `now` (about:
    /// counted to the newest write whose programs are done).
    pub fn buffered(&self, st: &SsdState, now: u64) -> u64 {
        if self.buffer_bytes == 0 {
            return 0;
        }
        let done = st
            .pending
            .iter()
            .rev()
            .find(|&&(_, d)| d <= now)
            .map_or(st.released, |&(upto, _)| upto.max(st.released));
        st.written - done
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

    /// The controller takes a command arriving at `t`: commands one after another at its
    /// command rate. When it takes it.
    #[inline(always)]
    fn take_command(&self, st: &mut SsdState, t: u64) -> u64 {
        let taken = t.max(st.command_free);
        st.command_free = taken + self.command_gap_ns;
        taken
    }

    /// Serve a trim of `len` bytes at `offset` that reaches the drive at `t`: the
    /// controller takes it in its turn among commands and updates its mapping (the module's
    /// doc); in steady state the granules it covers whole become spare. The time until it
    /// completes, ns (at least 1).
    pub fn trim(&self, st: &mut SsdState, t: u64, offset: u64, len: u64) -> u64 {
        let taken = self.take_command(st, t);
        st.trims += 1;
        if let Some(gc) = &self.gc {
            gc.trimmed(st, offset, len);
        }
        (taken + self.command_ns - t).max(1)
    }

    /// Serve a command that starts at `t`: book its dies, channels and host side; the time
    /// until it completes, ns (at least 1).
    pub fn service(&self, st: &mut SsdState, t: u64, offset: u64, len: u64, write: bool) -> u64 {
        let t0 = self.take_command(st, t) + self.command_ns;
        let end = if write {
            self.write(st, t0, offset, len)
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

    fn write(&self, st: &mut SsdState, t0: u64, offset: u64, len: u64) -> u64 {
        // Steady state: valid data to copy for each byte of this write, × 2^16.
        let copy_fx = match &self.gc {
            Some(gc) => gc.copy_share(st, offset, len),
            None => 0,
        };
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
            if let Some(gc) = &self.gc {
                // The die makes room first: the valid pages these bytes owe are copied.
                st.gc_owed += bytes * copy_fx;
                self.collect(gc, st, t0, die);
            }
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
                if let Some(gc) = &self.gc {
                    self.programmed_page(gc, st, die);
                }
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
            st.released = upto;
            st.pending.pop_front();
        }
        arrived.max(st.freed)
    }

    /// Steady state: the copies owed that make whole pages, on `die` (whose channel carries
    /// them to the controller and back), as the command starting at `t0` needs them.
    fn collect(&self, gc: &Gc, st: &mut SsdState, t0: u64, die: usize) {
        let page_fx = self.page << FX;
        if st.gc_owed < page_fx {
            return;
        }
        let ch = die % self.channels as usize;
        let xfer = ns_of(self.page, self.channel_ns_per_byte);
        while st.gc_owed >= page_fx {
            st.gc_owed -= page_fx;
            let start = st.die_free[die].max(t0);
            let sensed = start + self.read_ns;
            let out = book(&mut st.channel_busy[ch], t0, sensed, xfer);
            let back = book(&mut st.channel_busy[ch], t0, out, xfer);
            let programmed = back + self.direct_program_ns;
            // The die holds the page from its sense until it is programmed again.
            st.die_busy_ns += programmed - start;
            st.die_free[die] = programmed;
            st.copied_bytes += self.page;
            self.programmed_page(gc, st, die);
        }
    }

    /// Steady state: one more page programmed on `die`; a full block's worth of them costs
    /// the die an erase.
    fn programmed_page(&self, gc: &Gc, st: &mut SsdState, die: usize) {
        st.block_fill[die] += 1;
        if st.block_fill[die] >= gc.block_pages {
            st.block_fill[die] = 0;
            st.die_free[die] += gc.erase_ns;
            st.die_busy_ns += gc.erase_ns;
        }
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

impl Gc {
    /// Bytes to copy per byte of a write of `len` at `offset`, × 2^16: none if it continues
    /// one of the drive's write streams (which it then extends), else A - 1 for the share of
    /// it that does not fill whole superblocks (and it starts a stream, replacing the
    /// oldest).
    fn copy_share(&self, st: &mut SsdState, offset: u64, len: u64) -> u64 {
        st.host_bytes += len;
        if let Some(i) = st.stream_ends.iter().position(|&e| e == offset) {
            st.stream_ends[i] = offset + len;
            return 0;
        }
        st.stream_ends[st.stream_next] = offset + len;
        st.stream_next = (st.stream_next + 1) % STREAMS;
        // The footprint: the granules touched, worked out again when it has grown by a
        // sixty-fourth.
        st.hot_lo = st.hot_lo.min(offset);
        st.hot_hi = st.hot_hi.max(offset + len);
        let last = ((offset + len.max(1) - 1) >> self.granule_shift).min(GRANULES - 1);
        let mut untrimmed = false;
        for g in (offset >> self.granule_shift).min(last)..=last {
            let (word, bit) = (&mut st.hot_map[(g / 64) as usize], 1u64 << (g % 64));
            if *word & bit == 0 {
                *word |= bit;
                st.hot_granules += 1;
            }
        }
        // (The trimmed parts it writes hold valid data again.)
        if st.trimmed_parts > 0 {
            let shift = self.part_shift();
            let last = ((offset + len.max(1) - 1) >> shift).min(GRANULES * 64 - 1);
            for p in (offset >> shift).min(last)..=last {
                let (word, bit) = (&mut st.trimmed_map[(p / 64) as usize], 1u64 << (p % 64));
                if *word & bit != 0 {
                    *word &= !bit;
                    st.trimmed_parts -= 1;
                    untrimmed = true;
                }
            }
        }
        if untrimmed {
            st.hot_fx = self.copy_fx_over(st.hot_span, st.trimmed_parts);
        }
        let span = (st.hot_hi - st.hot_lo)
            .min(st.hot_granules << self.granule_shift)
            .min(self.user_bytes);
        // (And once more when it reaches the whole drive, so that it ends exact.)
        if span > st.hot_span + st.hot_span / 64 || (span == self.user_bytes && span > st.hot_span)
        {
            st.hot_span = span;
            st.hot_fx = self.copy_fx_over(span, st.trimmed_parts);
        }
        if len <= self.superblock {
            st.hot_fx
        } else {
            (st.hot_fx as u128 * self.superblock as u128 / len as u128) as u64
        }
    }

    /// Bytes copied per random host byte, × 2^16, for random writes over `span` bytes of
    /// the drive with `trimmed` 64ths of granules trimmed: A - 1 at a spare of (s + T) / f,
    /// f = `span` of the user capacity, T the trimmed parts' share (the module's doc).
    fn copy_fx_over(&self, span: u64, trimmed: u64) -> u64 {
        if span >= self.user_bytes && trimmed == 0 {
            return self.copy_fx;
        }
        let t = ((trimmed << self.part_shift()) as f64 / self.user_bytes as f64).min(1.0);
        let f = (span.min(self.user_bytes) as f64 / self.user_bytes as f64)
            .min(1.0 - t)
            .max(1e-12);
        copy_fx_of(greedy_amplification((self.spare + t) / f))
    }

    /// Trimmed space is counted in parts of 2^this bytes: 64ths of a granule (one bit each
    /// of a granule's word in `SsdState::trimmed_map`).
    fn part_shift(&self) -> u32 {
        self.granule_shift - 6
    }

    /// A trim of `len` bytes at `offset`: the 64ths of granules it covers whole hold no
    /// valid data until written again, and a granule so trimmed in every part leaves the
    /// footprint.
    fn trimmed(&self, st: &mut SsdState, offset: u64, len: u64) {
        let shift = self.part_shift();
        let first = offset.div_ceil(1 << shift);
        let end = ((offset + len) >> shift).min(GRANULES * 64);
        if first >= end {
            return;
        }
        if st.trimmed_map.is_empty() {
            st.trimmed_map = vec![0; GRANULES as usize];
        }
        let mut changed = false;
        for p in first..end {
            let g = p / 64;
            let (word, bit) = (&mut st.trimmed_map[g as usize], 1u64 << (p % 64));
            if *word & bit == 0 {
                *word |= bit;
                st.trimmed_parts += 1;
                changed = true;
                if *word == u64::MAX {
                    let (hot, bit) = (&mut st.hot_map[(g / 64) as usize], 1u64 << (g % 64));
                    if *hot & bit != 0 {
                        *hot &= !bit;
                        st.hot_granules -= 1;
                    }
                }
            }
        }
        if changed {
            // The footprint as the writes left it, less what was trimmed.
            st.hot_span = st
                .hot_span
                .min(st.hot_granules << self.granule_shift)
                .min(self.user_bytes);
            st.hot_fx = self.copy_fx_over(st.hot_span, st.trimmed_parts);
        }
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

    #[test]
    fn greedy_amplification_follows_the_closed_form() {
        // Xiang and Kurkoski's value at 30% over-provisioning (2.36, simulated 2.35).
        let a = greedy_amplification(0.3);
        assert!((a - 2.36).abs() < 0.01, "{a}");
        // Less spare, more copies; a lot of spare, next to none.
        let v: Vec<f64> = [0.01, 0.08, 0.145, 0.28, 1.0, 4.0]
            .iter()
            .map(|&s| greedy_amplification(s))
            .collect();
        assert!(v.windows(2).all(|w| w[0] > w[1]), "{v:?}");
        assert!(v[0] > 50.0 && v[5] < 1.05, "{v:?}");
        // x = exp(-(1 - x)(1 + s)) holds at the root.
        let x = 1.0 - 1.0 / v[1];
        assert!((x - (-(1.0 - x) * 1.08f64).exp()).abs() < 1e-9);
    }

    #[test]
    fn a_steady_drive_copies_for_random_writes_only() {
        let mut s = crate::catalog::find("nvme-tlc-1tb").unwrap();
        s.ssd_state = FlashState::Steady;
        let m = SsdModel::new(&s, true);
        let a = m.gc().unwrap().amplification;
        // A state whose random writes have already touched the whole drive (a write in each
        // of its granules, the last at its end): every random write from then on amplifies
        // at the whole drive's A.
        let spread = || {
            let mut st = m.state();
            let step = s.capacity_bytes / GRANULES / 4096 * 4096;
            for k in 0..GRANULES {
                m.service(&mut st, 0, k * step, 4096, true);
            }
            m.service(&mut st, 0, s.capacity_bytes - 4096, 4096, true);
            st
        };
        // `n` random 4 KiB writes 10 µs apart, scattered over the drive's first 6.5 GB.
        let scatter = |m: &SsdModel, st: &mut SsdState, n: u64| {
            for i in 0..n {
                m.service(st, i * 10_000, (i * 7_919 % 100_000) * 65_536, 4096, true);
            }
        };
        // Sequential 4 KiB writes continue their stream: nothing copied but for the first,
        // which starts it (a random write of its own: A - 1 of 4 KiB owed, with what the
        // spreading writes left owing, at most two pages).
        let mut st = spread();
        let before = st.copied_bytes;
        for i in 0..10_000u64 {
            m.service(&mut st, 1 << 20, (1 << 30) + i * 4096, 4096, true);
        }
        assert!(
            st.copied_bytes - before <= 2 * 16384,
            "{}",
            st.copied_bytes - before
        );
        // Random writes within 1% of the drive: a spare of 8 / 1, next to nothing copied.
        let mut st = m.state();
        scatter(&m, &mut st, 10_000);
        assert!(st.copied_bytes <= 16384, "{}", st.copied_bytes);
        // Scattered ones once the whole drive is hot copy A - 1 bytes a byte, a page at a time.
        let mut st = spread();
        let (copied, host) = (st.copied_bytes, st.host_bytes);
        scatter(&m, &mut st, 10_000);
        let per = (st.copied_bytes - copied) as f64 / (st.host_bytes - host) as f64;
        assert!((per - (a - 1.0)).abs() < 0.01, "{per} vs {}", a - 1.0);
        // A write longer than a superblock (32 dies × 1152 pages × 16 KiB) copies only for
        // the superblock's share of it.
        let mut st = spread();
        let (copied, host) = (st.copied_bytes, st.host_bytes);
        let sb = 32 * 1152 * 16384u64;
        m.service(&mut st, 0, 1 << 30, 4 * sb, true);
        let per = (st.copied_bytes - copied) as f64 / (st.host_bytes - host) as f64;
        assert!((per - (a - 1.0) / 4.0).abs() < 0.01, "{per}");
        // A fresh drive copies nothing and its random writes are as before.
        let fresh = drive();
        let mut st = fresh.state();
        scatter(&fresh, &mut st, 1000);
        assert_eq!(st.copied_bytes, 0);
        assert!(fresh.gc().is_none() && fresh.steady_random_write_bound().is_none());
    }

    /// A trim is a command and nothing more: it waits its turn at the controller's command
    /// rate and ends `command_us` later, whatever its length. On a steady drive whose whole
    /// capacity is hot, trimming the upper half makes it spare: random writes over the lower
    /// half then copy A - 1 at a spare of (s + T) / f (about (s + ½) / ½), not the whole
    /// drive's; writing into a trimmed part makes it data again. A trim releases the 64ths
    /// of granules it covers whole.
    #[test]
    fn trims_cost_a_command_and_trimmed_space_is_spare() {
        let mut s = crate::catalog::find("nvme-tlc-1tb").unwrap();
        let fresh = SsdModel::new(&s, true);
        let mut st = fresh.state();
        let one = fresh.trim(&mut st, 0, 0, 4096);
        let long = fresh.trim(&mut st, 0, 0, 1 << 30);
        assert_eq!(one, fresh.command_ns.max(1));
        assert_eq!(
            long,
            fresh.command_ns + fresh.command_gap_ns,
            "in turn behind the first"
        );
        assert_eq!((st.trims, st.die_busy_ns), (2, 0));

        s.ssd_state = FlashState::Steady;
        let m = SsdModel::new(&s, true);
        let gc = m.gc().unwrap();
        let cap = s.capacity_bytes;
        let granule = 1u64 << gc.granule_shift;
        let spread = |st: &mut SsdState| {
            let step = cap / GRANULES / 4096 * 4096;
            for k in 0..GRANULES {
                m.service(st, 0, k * step, 4096, true);
            }
            m.service(st, 0, cap - 4096, 4096, true);
        };
        // Random 4 KiB writes over the lower half, each in a granule of its own in turn.
        let lower = |st: &mut SsdState, n: u64| {
            let (copied, host) = (st.copied_bytes, st.host_bytes);
            for i in 0..n {
                let g = i * 37 % (GRANULES / 2);
                m.service(st, i * 10_000, g * granule + (i % 97) * 65_536, 4096, true);
            }
            (st.copied_bytes - copied) as f64 / (st.host_bytes - host) as f64
        };
        let mut plain = m.state();
        spread(&mut plain);
        let whole = lower(&mut plain, 20_000);
        let mut trimmed = m.state();
        spread(&mut trimmed);
        let half = (GRANULES / 2) * granule;
        m.trim(&mut trimmed, 0, half, cap - half);
        let after = lower(&mut trimmed, 20_000);
        // (Granules are a power of two: 233 of them cover this drive, and its upper half
        // from granule 128 is 104 whole ones and 53 64ths of the last.)
        let part = granule / 64;
        let t = (trimmed.trimmed_parts * part) as f64 / cap as f64;
        let f = ((trimmed.hot_granules * granule) as f64 / cap as f64).min(1.0);
        assert_eq!(trimmed.trimmed_parts, cap / part - half / part);
        assert_eq!(trimmed.hot_granules, 129);
        let want = greedy_amplification((gc.spare + t) / f) - 1.0;
        assert!((whole - (gc.amplification - 1.0)).abs() < 0.01, "{whole}");
        assert!((after - want).abs() < 0.02, "{after} vs {want}");
        assert!(after < whole / 2.0, "{after} vs {whole}");
        // Writes back into the upper half: its granules hold data again.
        for g in GRANULES / 2..GRANULES {
            m.service(&mut trimmed, 0, g * granule, 4096, true);
        }
        let upper = cap.div_ceil(granule) - GRANULES / 2;
        assert_eq!(
            trimmed.trimmed_parts,
            cap / part - half / part - upper,
            "a write in each"
        );
        for g in GRANULES / 2..GRANULES {
            for p in 0..64 {
                m.service(
                    &mut trimmed,
                    0,
                    g * granule + p * (granule / 64),
                    4096,
                    true,
                );
            }
        }
        assert_eq!(trimmed.trimmed_parts, 0);
        let again = lower(&mut trimmed, 20_000);
        assert!((again - whole).abs() < 0.01, "{again} vs {whole}");
        // A trim inside one 64th of a granule releases nothing; of a granule but 8 KiB,
        // 62 of its 64ths.
        m.trim(&mut trimmed, 0, granule + 4096, granule / 64 - 8192);
        assert_eq!(trimmed.trimmed_parts, 0);
        m.trim(&mut trimmed, 0, granule + 4096, granule - 8192);
        assert_eq!(trimmed.trimmed_parts, 62);
    }
}
