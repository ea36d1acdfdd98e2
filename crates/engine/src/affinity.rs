//! A job's hold on the machine while it runs: binding its thread to CPUs (fio's
//! `cpus_allowed`, `cpumask`, `cpus_allowed_policy`: which CPUs this process may use, and
//! binding the calling thread to a set of them; threads the job starts afterwards, a block
//! target's workers, inherit the binding), the NUMA nodes it runs on and takes its memory
//! from (fio's `numa_cpu_nodes`, `numa_mem_policy`, read from sysfs and set by
//! set_mempolicy(2), inherited alike), its priorities (fio's `prio`, `prioclass`, `nice`,
//! inherited alike), and memory it pins (fio's `lockmem`).

use std::io;

/// The CPUs this process may run on (its affinity: `taskset`, cgroups), ascending.
pub fn allowed() -> io::Result<Vec<u32>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(members(&set))
}

/// Linux's `ioprio_set` and `ioprio_get` act on a process (here: a thread) named by
/// `IOPRIO_WHO_PROCESS`, 0 naming the calling one (include/uapi/linux/ioprio.h).
const IOPRIO_WHO_PROCESS: libc::c_long = 1;

/// Give the calling thread `p`'s I/O priority and nice value (those given). Its requests
/// then reach the block layer with that priority (a request without its own takes its
/// task's), which the kernel's I/O schedulers (mq-deadline, bfq) serve by.
pub fn set_priority(p: &raidlab_workload::Priority) -> io::Result<()> {
    if let Some(v) = p.ioprio() {
        // SAFETY: a plain system call on the calling thread, no memory passed.
        let r = unsafe {
            libc::syscall(
                libc::SYS_ioprio_set,
                IOPRIO_WHO_PROCESS,
                0,
                v as libc::c_long,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if let Some(n) = p.nice {
        // (On Linux the nice value is the thread's: set through its thread id.)
        // SAFETY: plain system calls on the calling thread.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, libc::c_int::from(n)) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The calling thread's I/O priority (class above level) and nice value.
#[cfg(test)]
fn priority() -> io::Result<(u16, i32)> {
    // SAFETY: plain system calls on the calling thread.
    let io = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
    if io < 0 {
        return Err(io::Error::last_os_error());
    }
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
    // (getpriority's -1 is also a nice value: errno tells.)
    unsafe { *libc::__errno_location() = 0 };
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) };
    if nice == -1 && io::Error::last_os_error().raw_os_error() != Some(0) {
        return Err(io::Error::last_os_error());
    }
    Ok((io as u16, nice))
}

/// Bind the calling thread to `cpus`; returns the set the kernel then reports for it.
pub fn bind(cpus: &[u32]) -> io::Result<Vec<u32>> {
    // SAFETY: as above; CPU_SET is given numbers below CPU_SETSIZE (checked by the parser).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: pid 0 is the calling thread; the set is initialised.
    if unsafe { libc::sched_setaffinity(0, size, &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    allowed()
}

fn members(set: &libc::cpu_set_t) -> Vec<u32> {
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET reads the set within its size.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, set) })
        .map(|c| c as u32)
        .collect()
}

/// Where the kernel lists NUMA nodes (sysfs).
const NODES: &str = "/sys/devices/system/node";

/// The machine's NUMA nodes that are online, ascending (a kernel without NUMA: node 0).
pub fn online_nodes() -> io::Result<Vec<u32>> {
    match std::fs::read_to_string(format!("{NODES}/online")) {
        Ok(t) => raidlab_workload::spec::parse_node_list(t.trim())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(vec![0]),
        Err(e) => Err(e),
    }
}

/// The CPUs of NUMA node `node`, ascending (none for a node of memory alone; a kernel
/// without NUMA: every CPU this process may use, node 0's).
pub fn node_cpus(node: u32) -> io::Result<Vec<u32>> {
    match std::fs::read_to_string(format!("{NODES}/node{node}/cpulist")) {
        Ok(t) if t.trim().is_empty() => Ok(Vec::new()),
        Ok(t) => raidlab_workload::spec::parse_cpu_list(t.trim())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound && node == 0 => allowed(),
        Err(e) => Err(e),
    }
}

/// Linux's memory policy modes (include/uapi/linux/mempolicy.h).
const MPOL_DEFAULT: libc::c_long = 0;
const MPOL_PREFERRED: libc::c_long = 1;
const MPOL_BIND: libc::c_long = 2;
const MPOL_INTERLEAVE: libc::c_long = 3;
const MPOL_LOCAL: libc::c_long = 4;

/// Give the calling thread the memory policy `p` (set_mempolicy(2)): memory it touches
/// first from then on, its buffers among it, comes from the nodes the policy says. Threads
/// it starts afterwards inherit it.
pub fn set_mem_policy(p: &raidlab_workload::MemPolicy) -> io::Result<()> {
    use raidlab_workload::MemPolicy;
    let mode = match p {
        MemPolicy::Default => MPOL_DEFAULT,
        MemPolicy::Prefer(_) => MPOL_PREFERRED,
        MemPolicy::Bind(_) => MPOL_BIND,
        MemPolicy::Interleave(_) => MPOL_INTERLEAVE,
        MemPolicy::Local => MPOL_LOCAL,
    };
    // One bit a node, up to MAX_NODES.
    let mut mask = [0u64; (raidlab_workload::spec::MAX_NODES / 64) as usize];
    let nodes = p.nodes();
    for n in &nodes {
        mask[(n / 64) as usize] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        // (The kernel reads one bit fewer than `maxnode` says: see set_mempolicy(2).)
        (
            mask.as_ptr(),
            raidlab_workload::spec::MAX_NODES as libc::c_ulong + 1,
        )
    };
    // SAFETY: set_mempolicy reads `maxnode - 1` bits from `ptr`, which holds MAX_NODES.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// CPU numbers as a list of ranges, `0-3,6`.
pub fn ranges(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// Memory pinned with mlock(2) until dropped (fio's `lockmem`): that much less for the page
/// cache while a job runs.
pub struct Pinned {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Pinned {
    /// Map and pin `len` bytes (every page touched, so they are resident).
    pub fn new(len: usize) -> io::Result<Pinned> {
        // SAFETY: an anonymous private mapping of `len` bytes, no file.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let p = Pinned { ptr, len };
        // SAFETY: the mapping above, `len` bytes; mlock faults every page in.
        if unsafe { libc::mlock(ptr, len) } != 0 {
            return Err(io::Error::last_os_error()); // (dropping `p` unmaps it)
        }
        Ok(p)
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: our mapping; munmap also unlocks it.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

#[cfg(test)]
mod tests {
    /// A thread given an I/O priority and a nice value has them (the kernel reports them
    /// back), and a thread it starts afterwards inherits them; other threads keep theirs.
    #[test]
    fn a_thread_takes_its_priorities_and_hands_them_on() {
        let before = std::thread::spawn(super::priority).join().unwrap().unwrap();
        let (mine, child) = std::thread::spawn(|| {
            // The idle class and a higher nice value need no privilege.
            let p = raidlab_workload::Priority {
                class: Some(3),
                level: None,
                nice: Some(7),
            };
            super::set_priority(&p).unwrap();
            let child = std::thread::spawn(super::priority).join().unwrap().unwrap();
            (super::priority().unwrap(), child)
        })
        .join()
        .unwrap();
        assert_eq!(mine, (3 << 13, 7));
        assert_eq!(child, mine);
        let after = std::thread::spawn(super::priority).join().unwrap().unwrap();
        assert_eq!(after, before);
        assert_ne!(before, mine);
    }

    #[test]
    fn ranges_join_runs() {
        assert_eq!(super::ranges(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(super::ranges(&[5]), "5");
        assert_eq!(super::ranges(&[]), "");
    }
}
