//! The MPI world of a raidlab run started under `mpirun`, as IOR's ranks are: which rank this
//! process is, how many there are, the host it runs on, and the few collectives a run needs
//! (a barrier and an all-gather of bytes).
//!
//! What it is for: letting several processes, on one host or many, run one measurement
//! together. Open MPI's library (`libmpi.so.40`, Debian's `libopenmpi3`) is loaded when a run
//! asks for MPI (`dlopen`), not linked, so raidlab builds and runs without MPI installed and
//! says in one line what is missing when a run needs it. `RAIDLAB_LIBMPI` names another copy
//! of the library.
//!
//! What it is NOT for: running jobs or merging their results (the command line does that over
//! [`World::all_gather`]), nor any MPI but Open MPI: its ABI (handles are pointers to the
//! library's own objects, `ompi_mpi_comm_world` and friends) is the one spoken here; MPICH's
//! integer handles are refused by name when the library lacks Open MPI's symbols.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

type Handle = *mut c_void;

/// The functions and predefined handles taken from the library.
struct Api {
    init: unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char) -> c_int,
    initialized: unsafe extern "C" fn(*mut c_int) -> c_int,
    finalize: unsafe extern "C" fn() -> c_int,
    comm_rank: unsafe extern "C" fn(Handle, *mut c_int) -> c_int,
    comm_size: unsafe extern "C" fn(Handle, *mut c_int) -> c_int,
    barrier: unsafe extern "C" fn(Handle) -> c_int,
    allgather: unsafe extern "C" fn(
        *const c_void,
        c_int,
        Handle,
        *mut c_void,
        c_int,
        Handle,
        Handle,
    ) -> c_int,
    allgatherv: unsafe extern "C" fn(
        *const c_void,
        c_int,
        Handle,
        *mut c_void,
        *const c_int,
        *const c_int,
        Handle,
        Handle,
    ) -> c_int,
    gather: unsafe extern "C" fn(
        *const c_void,
        c_int,
        Handle,
        *mut c_void,
        c_int,
        Handle,
        c_int,
        Handle,
    ) -> c_int,
    gatherv: unsafe extern "C" fn(
        *const c_void,
        c_int,
        Handle,
        *mut c_void,
        *const c_int,
        *const c_int,
        Handle,
        c_int,
        Handle,
    ) -> c_int,
    processor_name: unsafe extern "C" fn(*mut c_char, *mut c_int) -> c_int,
    abort: unsafe extern "C" fn(Handle, c_int) -> c_int,
    /// `MPI_COMM_WORLD`, `MPI_BYTE`, `MPI_INT`: addresses of the library's objects.
    comm_world: Handle,
    byte: Handle,
    int: Handle,
}

/// The library names tried in turn when `RAIDLAB_LIBMPI` is not set.
const LIBRARIES: [&str; 2] = ["libmpi.so.40", "libmpi.so"];

/// Open MPI's `MPI_MAX_PROCESSOR_NAME` (mpi.h: 256).
const MAX_PROCESSOR_NAME: usize = 256;

/// This process's place in the world. Made once a process ([`World::init`]); MPI is
/// finalized when it is dropped.
pub struct World {
    api: Api,
    rank: u32,
    size: u32,
    host: String,
    /// The thread that joined the world: MPI is initialized for one thread
    /// (`MPI_THREAD_SINGLE`), so every call is checked to come from it.
    thread: std::thread::ThreadId,
}

// SAFETY: the library's handles are plain addresses; every call that uses them checks that it
// runs on the thread that initialized MPI (`World::on_own_thread`), so sharing the `World`
// (as the engine's coordinator is shared) never lets two threads into the library.
unsafe impl Send for World {}
unsafe impl Sync for World {}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("host", &self.host)
            .finish()
    }
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string owned by libc.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Whether this process was started by an MPI launcher (`mpirun`, `srun` with PMIx): the
/// variables Open MPI's launcher and PMIx set for every rank.
pub fn launched() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

fn load() -> Result<Api, String> {
    let names: Vec<String> = match std::env::var("RAIDLAB_LIBMPI") {
        Ok(p) if !p.is_empty() => vec![p],
        _ => LIBRARIES.iter().map(|s| s.to_string()).collect(),
    };
    let mut handle: *mut c_void = std::ptr::null_mut();
    let mut why = String::new();
    for n in &names {
        let c = CString::new(n.as_str()).map_err(|_| format!("library name {n:?} holds a NUL"))?;
        // RTLD_GLOBAL: Open MPI's components, loaded by the library itself, resolve their
        // symbols against it.
        // SAFETY: a NUL-terminated name; the handle is kept for the process's life.
        handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if !handle.is_null() {
            break;
        }
        why = dl_error();
    }
    if handle.is_null() {
        return Err(format!(
            "cannot load Open MPI's library ({}): {why} (valid: install Open MPI, e.g. apt-get install openmpi-bin, or name the library in RAIDLAB_LIBMPI)",
            names.join(", ")
        ));
    }
    let sym = |name: &str| -> Result<*mut c_void, String> {
        let c = CString::new(name).expect("symbol names hold no NUL");
        // SAFETY: a handle dlopen returned and a NUL-terminated name.
        let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
        if p.is_null() {
            Err(format!(
                "the MPI library has no {name}: raidlab speaks Open MPI's ABI only (valid: Open MPI's libmpi.so.40 in RAIDLAB_LIBMPI)"
            ))
        } else {
            Ok(p)
        }
    };
    // SAFETY (each transmute): the symbol is the MPI function of that name, whose C signature
    // (MPI 3.1 standard, Open MPI's mpi.h) the field's type spells (so the target type is the
    // field's, not written again at each).
    #[allow(clippy::missing_transmute_annotations)]
    unsafe {
        Ok(Api {
            init: std::mem::transmute::<*mut c_void, _>(sym("MPI_Init")?),
            initialized: std::mem::transmute::<*mut c_void, _>(sym("MPI_Initialized")?),
            finalize: std::mem::transmute::<*mut c_void, _>(sym("MPI_Finalize")?),
            comm_rank: std::mem::transmute::<*mut c_void, _>(sym("MPI_Comm_rank")?),
            comm_size: std::mem::transmute::<*mut c_void, _>(sym("MPI_Comm_size")?),
            barrier: std::mem::transmute::<*mut c_void, _>(sym("MPI_Barrier")?),
            allgather: std::mem::transmute::<*mut c_void, _>(sym("MPI_Allgather")?),
            allgatherv: std::mem::transmute::<*mut c_void, _>(sym("MPI_Allgatherv")?),
            gather: std::mem::transmute::<*mut c_void, _>(sym("MPI_Gather")?),
            gatherv: std::mem::transmute::<*mut c_void, _>(sym("MPI_Gatherv")?),
            processor_name: std::mem::transmute::<*mut c_void, _>(sym("MPI_Get_processor_name")?),
            abort: std::mem::transmute::<*mut c_void, _>(sym("MPI_Abort")?),
            comm_world: sym("ompi_mpi_comm_world")?,
            byte: sym("ompi_mpi_byte")?,
            int: sym("ompi_mpi_int")?,
        })
    }
}

fn check(what: &str, rc: c_int) -> Result<(), String> {
    // MPI_SUCCESS is 0; Open MPI's default error handler aborts before most errors return.
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{what} failed (MPI error {rc})"))
    }
}

impl World {
    /// Load the library and join the world (`MPI_Init`). Outside a launcher Open MPI makes a
    /// world of one (a singleton). Fails with one line when the library is missing or not
    /// Open MPI's, or when MPI was already initialized in this process.
    pub fn init() -> Result<World, String> {
        let api = load()?;
        let mut done: c_int = 0;
        // SAFETY: the functions are the library's; pointers are to live locals.
        unsafe {
            check("MPI_Initialized", (api.initialized)(&mut done))?;
            if done != 0 {
                return Err("MPI is already initialized in this process".into());
            }
            check(
                "MPI_Init",
                (api.init)(std::ptr::null_mut(), std::ptr::null_mut()),
            )?;
        }
        let (mut rank, mut size): (c_int, c_int) = (0, 0);
        let mut name = [0 as c_char; MAX_PROCESSOR_NAME];
        let mut len: c_int = 0;
        // SAFETY: as above; the name buffer holds MPI_MAX_PROCESSOR_NAME characters.
        unsafe {
            check("MPI_Comm_rank", (api.comm_rank)(api.comm_world, &mut rank))?;
            check("MPI_Comm_size", (api.comm_size)(api.comm_world, &mut size))?;
            check(
                "MPI_Get_processor_name",
                (api.processor_name)(name.as_mut_ptr(), &mut len),
            )?;
        }
        let len = (len.max(0) as usize).min(MAX_PROCESSOR_NAME);
        let host =
            String::from_utf8_lossy(&name[..len].iter().map(|&c| c as u8).collect::<Vec<u8>>())
                .into_owned();
        Ok(World {
            api,
            rank: rank as u32,
            size: size as u32,
            host,
            thread: std::thread::current().id(),
        })
    }

    /// This process's rank, from 0.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// How many ranks the world holds.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The host this rank runs on (`MPI_Get_processor_name`).
    pub fn host(&self) -> &str {
        &self.host
    }

    fn on_own_thread(&self) -> Result<(), String> {
        if std::thread::current().id() == self.thread {
            Ok(())
        } else {
            Err("an MPI call from a thread other than the one that initialized MPI".into())
        }
    }

    /// Wait until every rank has called it.
    pub fn barrier(&self) -> Result<(), String> {
        self.on_own_thread()?;
        // SAFETY: the world communicator of an initialized library.
        check("MPI_Barrier", unsafe {
            (self.api.barrier)(self.api.comm_world)
        })
    }

    /// Every rank's `bytes`, by rank, on every rank: each rank calls it once, in the same
    /// order as the others call theirs (MPI's collectives match by order).
    pub fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        self.on_own_thread()?;
        let mine = message_len(bytes)?;
        let mut lens: Vec<c_int> = vec![0; self.size as usize];
        // SAFETY: one int sent, one int per rank received into `lens` (size entries).
        check("MPI_Allgather", unsafe {
            (self.api.allgather)(
                (&mine as *const c_int).cast(),
                1,
                self.api.int,
                lens.as_mut_ptr().cast(),
                1,
                self.api.int,
                self.api.comm_world,
            )
        })?;
        let (displs, mut all) = receive_space(&lens)?;
        // SAFETY: `all` holds the sum of the lengths every rank announced, at `displs`.
        check("MPI_Allgatherv", unsafe {
            (self.api.allgatherv)(
                bytes.as_ptr().cast(),
                mine,
                self.api.byte,
                all.as_mut_ptr().cast(),
                lens.as_ptr(),
                displs.as_ptr(),
                self.api.byte,
                self.api.comm_world,
            )
        })?;
        Ok(split(&all, &lens, &displs))
    }

    /// Every rank's `bytes`, by rank, on rank 0 (`Some` there, `None` elsewhere): each rank
    /// calls it once, in the same order as the others.
    pub fn gather(&self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>, String> {
        self.on_own_thread()?;
        let root = self.rank == 0;
        let mine = message_len(bytes)?;
        let mut lens: Vec<c_int> = vec![0; if root { self.size as usize } else { 0 }];
        // SAFETY: one int sent; on the root, one int per rank received into `lens`.
        check("MPI_Gather", unsafe {
            (self.api.gather)(
                (&mine as *const c_int).cast(),
                1,
                self.api.int,
                lens.as_mut_ptr().cast(),
                1,
                self.api.int,
                0,
                self.api.comm_world,
            )
        })?;
        let (displs, mut all) = receive_space(&lens)?;
        // SAFETY: on the root `all` holds the sum of the announced lengths at `displs`; the
        // receive arguments are not read elsewhere.
        check("MPI_Gatherv", unsafe {
            (self.api.gatherv)(
                bytes.as_ptr().cast(),
                mine,
                self.api.byte,
                all.as_mut_ptr().cast(),
                lens.as_ptr(),
                displs.as_ptr(),
                self.api.byte,
                0,
                self.api.comm_world,
            )
        })?;
        Ok(root.then(|| split(&all, &lens, &displs)))
    }

    /// End every rank of the world now (`MPI_Abort`), with `code` as the launcher's exit
    /// status: for a rank that cannot take part in the collectives any more.
    pub fn abort(&self, code: i32) -> ! {
        // SAFETY: the world communicator of an initialized library.
        unsafe { (self.api.abort)(self.api.comm_world, code) };
        std::process::exit(code)
    }
}

/// A message's length as MPI counts it.
fn message_len(bytes: &[u8]) -> Result<c_int, String> {
    c_int::try_from(bytes.len())
        .map_err(|_| format!("{} bytes are too many for one MPI message", bytes.len()))
}

/// Where each rank's message starts in the received bytes, and room for them all.
fn receive_space(lens: &[c_int]) -> Result<(Vec<c_int>, Vec<u8>), String> {
    let mut displs: Vec<c_int> = Vec::with_capacity(lens.len());
    let mut total: c_int = 0;
    for &l in lens {
        displs.push(total);
        total = total
            .checked_add(l)
            .ok_or("the ranks' messages add up to more than one MPI message holds")?;
    }
    Ok((displs, vec![0u8; total as usize]))
}

/// The received bytes cut into each rank's message.
fn split(all: &[u8], lens: &[c_int], displs: &[c_int]) -> Vec<Vec<u8>> {
    lens.iter()
        .zip(displs)
        .map(|(&l, &d)| all[d as usize..(d + l) as usize].to_vec())
        .collect()
}

impl Drop for World {
    fn drop(&mut self) {
        if self.on_own_thread().is_err() {
            return;
        }
        // SAFETY: initialized in `init`, finalized once here.
        unsafe { (self.api.finalize)() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A library without Open MPI's symbols is refused by name, in one line.
    #[test]
    fn a_library_other_than_open_mpi_is_refused_by_name() {
        // libc is loaded in every process and has none of MPI's symbols.
        std::env::set_var("RAIDLAB_LIBMPI", "libc.so.6");
        let e = World::init().unwrap_err();
        std::env::remove_var("RAIDLAB_LIBMPI");
        assert!(e.contains("has no MPI_Init"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
