//! A job's hold on the machine while it runs: binding its thread to CPUs (fio's
//! `cpus_allowed`, `cpumask`, `cpus_allowed_policy`: which CPUs this process may use, and
//! binding the calling thread to a set of them; threads the job starts afterwards, a block
//! target's workers, inherit the binding), and memory it pins (fio's `lockmem`).

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
    #[test]
    fn ranges_join_runs() {
        assert_eq!(super::ranges(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(super::ranges(&[5]), "5");
        assert_eq!(super::ranges(&[]), "");
    }
}
