//! User-space RAID arrays: md's layouts on files or block devices, with real parity.
//!
//! This crate is for: creating arrays (superblocks, write-intent bitmap, data area on each
//! member), assembling them from their members' superblocks, serving logical reads and writes
//! as parallel member I/O with parity (degraded too), marking members faulty, rebuilding onto
//! spares (in a nested array, a failed child array rewritten whole from its parent's
//! redundancy), scrubbing, resyncing after an unclean stop, and exposing an array as a file through
//! FUSE. An assembled array is a [`raidlab_engine::BlockTarget`], so `raidlab run` measures it.
//! One process at a time writes an array's metadata: a running array's members are locked, and
//! `fail` on a served array asks the serving process ([`control`]).
//!
//! It is not for: the parity arithmetic itself (raidlab-parity), measuring or timing
//! (raidlab-engine), simulating arrays (raidlab-sim), or the command line (the `raidlab`
//! binary's `array` command turns flags into calls here).

pub mod array;
pub mod assemble;
pub mod bitmap;
pub mod control;
pub mod create;
pub mod error;
pub mod fuse;
pub mod manage;
pub mod member;
mod pool;
mod pq;
pub mod shape;
mod stripe_copy;
pub use stripe_copy::stream_copy;
pub mod superblock;

pub use array::Array;
pub use assemble::{assemble, split_members, AssembleOptions};
pub use create::{create, CreateOptions, CreateSpec, MemberSpec};
pub use error::ArrayError;
pub use raidlab_geometry::{Geometry, Layout, Level};

use raidlab_engine::ewriteln;
use std::sync::Arc;

/// How `open_target` assembles.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Start a dirty and degraded array anyway (see [`assemble()`]).
    pub force: bool,
}

/// An assembled array as the engine's block target. Closing (clean stop, bitmap cleared)
/// happens when the last reference is dropped.
pub struct ArrayTarget {
    pub array: Arc<Array>,
    /// The members stay locked against other processes' metadata writes while it runs.
    _locks: control::MemberLocks,
    /// Opening warned that the initial sync has not finished (which says what the holes
    /// warning would).
    unsynced: bool,
    /// The member paths it was opened with (nested arrays' members too).
    paths: Vec<std::path::PathBuf>,
}

impl raidlab_engine::BlockTarget for ArrayTarget {
    fn size(&self) -> u64 {
        self.array.capacity()
    }
    fn alignment(&self) -> u64 {
        // Any byte range works; 512 keeps requests sector-shaped like a block device.
        512
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.array.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.array.write_at(buf, offset)
    }
    fn flush(&self) -> std::io::Result<()> {
        self.array.flush()
    }
    fn hole_share(&self, offset: u64, len: u64) -> Option<f64> {
        if self.unsynced {
            return None;
        }
        self.array.hole_share(offset, len).ok()
    }
    fn devices(&self) -> Vec<std::path::PathBuf> {
        self.paths.clone()
    }
    fn trim(&self, offset: u64, len: u64) -> std::io::Result<()> {
        self.array.trim(offset, len)
    }
}

impl Drop for ArrayTarget {
    fn drop(&mut self) {
        if let Err(e) = self.array.close() {
            ewriteln!("raidlab: array not stopped cleanly: {e}");
        }
    }
}

/// Assemble the array whose members are "M1,M2,…" (as in `--filename array:M1,M2,…`),
/// resyncing regions left dirty by an unclean stop. An array whose initial sync has not
/// finished starts, as md starts one (md resyncs it in the background meanwhile), with one
/// line of warning on stderr: what it reads of unsynced regions of member files may be holes.
pub fn open_target(
    members: &str,
    opts: &OpenOptions,
) -> Result<Arc<dyn raidlab_engine::BlockTarget>, ArrayError> {
    let paths = split_members(members);
    let locks = control::MemberLocks::acquire(&paths, "open the array")?;
    let array = assemble(
        &paths,
        &AssembleOptions {
            force: opts.force,
            resync: true,
            verbose: true,
            all_members: true,
        },
    )?;
    let warning = unsynced_warning(&array, members);
    if let Some(w) = &warning {
        ewriteln!("{w}");
    }
    Ok(Arc::new(ArrayTarget {
        array,
        _locks: locks,
        unsynced: warning.is_some(),
        paths,
    }))
}

/// The one line a process starting the array whose members are "M1,M2,…" says when the
/// array's initial sync has not finished (see [`Array::initial_sync`]); `None` once synced.
pub fn unsynced_warning(array: &Array, members: &str) -> Option<String> {
    let (done, total) = array.sync_pending()?;
    let shown = members.trim_start_matches("array:");
    Some(format!(
        "raidlab: warning: array:{shown}: not synced (its initial sync stopped at {}): reads of unsynced regions of member files read holes and do not reach the devices; raidlab array rebuild {shown} finishes the sync",
        manage::percent_done(done, total)
    ))
}
