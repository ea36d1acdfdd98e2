//! Discrete-event simulator of storage systems in virtual time: the same workload the real
//! engine runs (the same request streams), issued against models of a host, its
//! interfaces and links, switches, RAID controllers with caches, arrays and drives.
//!
//! It is for: predicting how a described system behaves (rates, latencies, which component
//! saturates) and explaining its theoretical bounds ([`explain`], [`bounds`]). Results use the
//! shared schema ([`RunResult`]) with [`SimExtras`] filled in.
//!
//! It is not for: moving real data, timing anything on this machine (there is no wall clock
//! anywhere in here), or RAID layout decisions of its own beyond what the planner adapter
//! (`planner`) provides.
//!
//! # Targets
//! `sim:PATH.toml` runs each job on every visible LUN of the system (each LUN gets its own
//! `numjobs` jobs, all at once in one simulated system); `sim:PATH.toml#LUN` on one LUN.
//!
//! # System file format (TOML)
//! ```toml
//! [system]
//! name = "example"                  # shown by `raidlab explain`
//! description = "one FC interface, one RAID-5 of five drives"
//!
//! [host]
//! cpus = 4
//! per_io_us = 20          # OS cost per I/O (source: measurement or estimate)
//! bus_mb_s = 117          # memory/I-O bus shared by all interfaces (optional)
//! parity_mb_s = 1500      # software RAID parity rate per CPU (optional; host arrays)
//! job_start_ms = 50       # fixed cost before a job's first request (program start, open)
//! page_cache_mib = 1600   # optional: buffered jobs (direct=0) go through a page cache
//! copy_mb_s = 1500        # with it: copy rate cache ↔ program buffer, one CPU
//! read_ahead_kib = 128    # LUN read-ahead (md arrays: two stripes at least)
//! max_request_kib = 512   # largest block request (max_sectors_kb)
//! dirty_background_ratio = 10  # % of the cache dirty before write-back starts
//! dirty_ratio = 20        # % dirty before writers wait
//! nr_requests = 128       # write-back requests in flight at most
//!
//! [[interface]]           # a host adapter and its link
//! name = "fc0"
//! link_mb_s = 100         # link rate, each direction
//! read_mb_s = 80          # adapter DMA into host memory (optional, default link rate)
//! write_mb_s = 50         # adapter DMA out of host memory (optional)
//! per_command_us = 10
//!
//! [[switch]]
//! name = "sw0"
//! bandwidth_mb_s = 1600   # optional; absent = non-blocking
//!
//! [[controller]]
//! name = "ctrlA"
//! port_mb_s = 100             # host-side port
//! read_command_us = 300       # command processing
//! write_command_us = 480
//! read_mb_s = 50              # data path cache → host
//! write_mb_s = 25             # data path host → cache
//! write_burst_kib = 64        # writes move port → cache in bursts of this size (optional;
//!                             # needs a cache)
//! cache_mib = 256             # absent: no cache (a host adapter): it passes data through as
//!                             # the drive sends or takes it, not once all of it is in
//! mirrored_cache = true       # dual controllers mirror dirty data: half the cache is own
//! write_policy = "write-back" # or "write-through"
//! battery = true              # write-back without a battery falls back to write-through
//! read_ahead_kib = 1024       # 0 = none; a stream's window grows to this (or one request)
//! parity_mb_s = 37            # XOR engine
//! destage_depth = 1           # destages in flight per array, at most (also bounded by
//!                             # room in the drives' command queues)
//! destage_coalesce = 1        # neighbouring dirty stripes one destage takes together
//! lazy_destage = false        # hold dirty data until the cache is 3/4 full
//! backend_mb_s = 80           # device-side bus shared by its drives (optional); a drive's
//!                             # data crosses it as it leaves (or enters) the drive
//!
//! [[disk]]                    # optional: a catalog entry with overrides
//! name = "my-drive"
//! base = "compaq-18g-10k"
//! seek_avg_ms = 5.4           # with seek_track_ms and seek_full_ms: a fitted curve, √ of
//!                             # the distance for short seeks and linear for long ones
//! # seek_table = [[0.0, 0.6], [0.1, 3.1], [0.5, 7.4], [1.0, 12.0]]
//! #                           # or a measured one: (fraction of a full stroke, ms) points
//! write_cache = true          # the drive acknowledges writes from its buffer and writes
//! cache_kib = 16384           # them out in its own order; how much it holds
//! # cache_segments = 16       # the buffer's read segments: each keeps a run of data read,
//! #                           # and a read held whole is served without the media (0: none)
//! # ssd_state = "steady"      # flash drives: "fresh" (the default, as out of the box) or
//! #                           # "steady" (written over: garbage collection, see `ssd`)
//! # spare_fraction = 0.08     # flash beyond the user capacity, of it (0.01 to 4)
//! # block_pages = 1152        # pages in an erase block; erase_ms = 3.5, its erase time
//!
//! [[array]]
//! name = "chain0"
//! controller = "ctrlA"        # absent = host software RAID over `members` (LUN names)
//! level = "raid5"             # single, linear, raid0, raid1, raid10, raid5, raid6
//! # layout = "left-symmetric" # md's default for the level, the only layout simulated
//! #                           # (raid10: n2; others: none); absent = that default
//! chunk_kib = 64
//! disks = 5
//! disk = "compaq-18g-10k"     # catalog name (see `catalog`)
//! disk_write_cache = false    # optional override of the drives' write cache
//! disk_queue_depth = 1        # >1: drives reorder (shortest positioning time first);
//!                             # controller arrays only (a host array uses its members')
//! # stripe_cache_size = 256    # host raid5/raid6 (md) only: its stripe cache, in stripe
//! #                           # heads of 4 KiB a member (17 to 32768; md's 256 if absent)
//!
//! [[lun]]
//! name = "lun0"
//! array = "chain0"
//! path = ["fc0", "sw0"]       # interfaces and switches on the way to the controller
//! offset_bytes = 0            # where the host's data starts (a partition offset)
//! hidden = false              # hidden LUNs only serve as members of host arrays
//! ```
//!
//! Values are checked as the file loads, each error one line with `file:line`, the component,
//! the key and what is valid, every independent error at once, in file order (TOML that does
//! not parse, said `file:line:column: not valid TOML: …` as experiment files say it, an include that cannot be read, a model not defined or a section of the wrong
//! shape stop the checks there): rates (`*_mb_s`) 0.001 to 1000000 MB/s, 1 kB/s to 1 TB/s
//! (an optional rate left out is no limit; 0 is not a way to say so), costs (`*_us`) 0 to 1 s,
//! `job_start_ms` 0 to 1000 s, drive mechanics 0 to 1000 ms with track ≤ average ≤ full seek,
//! 1000 to 30000 rpm, KiB sizes at most 1 GiB, cache MiB at most 16 TiB, counts and queue
//! depths 1 to 1024. An HDD's fields are not checked on an SSD nor an SSD's on an HDD. Names
//! are not empty, a LUN's holds no `:` or `#`; a host array takes `members` (each LUN once),
//! a controller array `disks` and `disk`, and only a controller array the drive keys
//! `disk_write_cache` and `disk_queue_depth`.

pub mod catalog;
pub mod config;
pub mod device;
pub mod engine;
pub mod error;
pub mod pagecache;
pub mod planner;
pub mod rebuild;
pub mod ssd;
pub mod stripecache;
pub mod world;

pub use error::SimError;

/// Fingerprint (16 hex digits) of the code that decides a simulated result: this crate's
/// sources and those of the workload, geometry and result crates, taken when it is built. Two
/// builds with the same print simulate the same points bit for bit; the lab folds it into an
/// experiment's hash so a newer simulator does not reuse results stored by an older one.
pub const MODEL_PRINT: &str = env!("RAIDLAB_SIM_MODEL_PRINT");

use engine::{Convergence, Engine, JobRt};
use planner::Level;
use raidlab_result::{ComponentUse, JobResult, RunResult, SimExtras};
use raidlab_workload::{JobInstance, JobSpec, JobStream};
use std::path::{Path, PathBuf};
use world::World;

/// One component's theoretical bound, for the report's limits table.
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentBound {
    pub name: String,
    pub kind: String,
    /// Bytes/s. For drives, arrays and LUNs: at the drives' inner-zone rate, which a data set
    /// spread over the whole stroke cannot beat for long (seed 002's stage-2 figure).
    pub bound_bytes_s: f64,
    /// Bytes/s at the drives' outer-zone rate, the ceiling of a data set near the drives'
    /// start (the same as `bound_bytes_s` where no drive sets the bound).
    pub outer_bytes_s: f64,
    pub note: String,
    /// Write bound, bytes/s: what writes kept up for as long as they come cannot beat, a
    /// write-back cache full, with the drives at their inner-zone rate (a data set over the
    /// whole stroke), as `bound_bytes_s`. Infinite where the component sets no write rate.
    pub write_bytes_s: f64,
    /// The same at the drives' outer-zone rate (a data set near their start).
    pub write_outer_bytes_s: f64,
    /// The most writes reach for a while: a write-back cache taking them (nothing behind it
    /// counts until it fills), or the drives taking them into their own write cache; else
    /// `write_outer_bytes_s`.
    pub write_peak_bytes_s: f64,
    /// What sets each write figure (LUNs and all LUNs at once); else empty.
    pub write_note: String,
}

impl ComponentBound {
    /// Whether the drives' zone moves the bound: the outer zone's is higher.
    pub fn zoned(&self) -> bool {
        self.outer_bytes_s > self.bound_bytes_s * (1.0 + 1e-9)
    }
    /// Whether the drives' zone moves the write bound.
    pub fn write_zoned(&self) -> bool {
        self.write_outer_bytes_s > self.write_bytes_s * (1.0 + 1e-9)
    }
    /// Whether writes can pass the outer zone's write bound for a while (a cache taking them).
    pub fn write_peaked(&self) -> bool {
        self.write_peak_bytes_s > self.write_outer_bytes_s * (1.0 + 1e-9)
    }
}

/// Options of a simulated run beyond the job specs.
#[derive(Clone, Debug, Default)]
pub struct RunConfig {
    pub convergence: Convergence,
}

/// A parsed `sim:` target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimTarget {
    pub system: PathBuf,
    pub lun: Option<String>,
}

/// Parse `sim:PATH.toml` or `sim:PATH.toml#LUN`.
pub fn parse_target(t: &str) -> Result<SimTarget, SimError> {
    let rest = t.strip_prefix("sim:").ok_or_else(|| {
        SimError::usage(format!(
            "target '{t}' is not simulated (valid: sim:SYSTEM.toml or sim:SYSTEM.toml#LUN)"
        ))
    })?;
    let (path, lun) = match rest.split_once('#') {
        Some((p, l)) => (p, Some(l.to_string())),
        None => (rest, None),
    };
    if path.is_empty() || lun.as_deref() == Some("") {
        return Err(SimError::usage(format!(
            "target '{t}': expected sim:SYSTEM.toml or sim:SYSTEM.toml#LUN"
        )));
    }
    Ok(SimTarget {
        system: PathBuf::from(path),
        lun,
    })
}

/// What a `sim:SYSTEM.toml[#LUN]` target is, for callers that size their jobs to a target
/// or describe one drive by it (as `raidlab calibrate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LunInfo {
    /// The LUN: the one named, or the system's one visible LUN when none is named.
    pub name: String,
    /// Its capacity in bytes.
    pub capacity: u64,
    /// Why what answers at the LUN is not one drive seen plainly, in words (`a raid5 of 4
    /// drives`, `behind controller c0's 256 MiB cache with 256 KiB of read-ahead`); None for
    /// one drive behind nothing that holds data.
    pub not_one_drive: Option<String>,
}

/// The LUN a `sim:SYSTEM.toml[#LUN]` target names ([`LunInfo`]).
pub fn lun_info(target: &str) -> Result<LunInfo, SimError> {
    let t = parse_target(target)?;
    let sys = config::load(&t.system)?;
    let w = World::build(&sys)?;
    let li = match target_luns(&w, target, &t.system, t.lun.as_deref())?[..] {
        [one] => one,
        ref visible => {
            return Err(SimError::usage(format!(
                "target '{target}': {} visible LUNs (valid: name one, sim:{}#LUN; LUNs: {})",
                visible.len(),
                t.system.display(),
                lun_names(&w)
            )))
        }
    };
    Ok(LunInfo {
        name: w.luns[li].name.clone(),
        capacity: w.luns[li].capacity,
        not_one_drive: not_one_drive(&w, li),
    })
}

/// [`LunInfo::not_one_drive`] for LUN `li`.
fn not_one_drive(w: &World, li: usize) -> Option<String> {
    let arr = &w.arrays[w.luns[li].array];
    let mut why = Vec::new();
    let n = arr.members.len();
    if arr.geom.level != Level::Single || n > 1 {
        let of = if arr.ctrl.is_some() { "drive" } else { "LUN" };
        let s = if n == 1 { "" } else { "s" };
        why.push(format!("a {} of {n} {of}{s}", arr.geom.level));
    }
    if let Some(c) = arr.ctrl.map(|c| &w.ctrls[c]) {
        if c.cache_bytes > 0 {
            let ahead = match c.read_ahead {
                0 => String::new(),
                r => format!(" with {} KiB of read-ahead", r >> 10),
            };
            why.push(format!(
                "behind controller {}'s {} MiB cache{ahead}",
                c.name,
                c.cache_bytes >> 20
            ));
        }
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// The LUNs target `f` of system file `system` runs on: the one it names (`lun`), else
/// every visible one.
fn target_luns(
    w: &World,
    f: &str,
    system: &Path,
    lun: Option<&str>,
) -> Result<Vec<usize>, SimError> {
    match lun {
        Some(l) => Ok(vec![w.luns.iter().position(|x| x.name == l).ok_or_else(
            || {
                SimError::usage(format!(
                    "target '{f}': no LUN '{l}' in {} (LUNs: {})",
                    system.display(),
                    lun_names(w)
                ))
            },
        )?]),
        None => Ok((0..w.luns.len()).filter(|&i| !w.luns[i].hidden).collect()),
    }
}

/// Every LUN's name, for error messages.
fn lun_names(w: &World) -> String {
    w.luns
        .iter()
        .map(|x| x.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Simulate `specs` (every filename a `sim:` target of one system file).
pub fn run(specs: &[JobSpec]) -> Result<RunResult, SimError> {
    run_with(specs, &RunConfig::default())
}

struct Planned {
    spec: usize,
    /// The job's LUNs, in the order its requests' `file` counts them (one but for a job over
    /// several targets, fio's `filename=a:b`).
    luns: Vec<usize>,
    target: String,
    inst: JobInstance,
}

/// fio's steady state for a stonewall group's jobs (`members`, in order): a judge for each job
/// or group `steady_judges` names, by its last job's criterion (as the real engine does).
fn steady_judges(
    members: &[&Planned],
    specs: &[JobSpec],
    job_groups: &[(usize, u32)],
) -> Vec<engine::SimSteady> {
    let jobs: Vec<(usize, u32)> = members
        .iter()
        .map(|p| (p.spec, job_groups[p.spec].1))
        .collect();
    raidlab_workload::steady_judges(specs, &jobs)
        .into_iter()
        .map(|members| {
            let s = &specs[jobs[members[members.len() - 1]].0];
            let c = &s.ss;
            let rule = raidlab_result::SteadyRule {
                bw: c.bw,
                slope: c.slope,
                limit: c.limit,
                percent: c.percent,
            };
            engine::SimSteady {
                judge: raidlab_result::Steady::new(rule, c.text(), s.ss_dur_s, s.ss_ramp_ns),
                members,
            }
        })
        .collect()
}

pub fn run_with(specs: &[JobSpec], cfg: &RunConfig) -> Result<RunResult, SimError> {
    run_counted(specs, cfg).map(|(r, _)| r)
}

/// Most requests the jobs of one stonewall group may hold in flight together (iodepth summed
/// over every job, numjobs counted). The simulator keeps each one's state, some 230 bytes
/// with its share of the queues (measured: 16 jobs at iodepth=65536 held 240 MB), so this
/// bounds a run to a quarter of a gigabyte or so; it is far past what a host queues to a
/// storage system, where 4096 jobs at iodepth=65536 would ask for 60 GB and the allocator
/// would abort the process.
pub const MAX_IN_FLIGHT: u64 = 1 << 20;

/// Refuse a stonewall group whose jobs would hold more than [`MAX_IN_FLIGHT`] requests at once.
fn check_in_flight(specs: &[JobSpec]) -> Result<(), SimError> {
    let totals = raidlab_workload::group_totals(specs, |inst| {
        let s = &specs[inst.spec_index];
        // (The engines that issue one at a time hold one, whatever iodepth says.)
        Some(if s.ioengine.one_at_a_time() {
            1
        } else {
            u64::from(s.iodepth.max(1))
        })
    });
    match raidlab_workload::group_over(&totals, MAX_IN_FLIGHT) {
        Some((which, t)) => Err(SimError::usage(format!(
            "{which}{} jobs run together (numjobs counted) with {} requests in flight in all (iodepth summed), more than the simulator holds at once (valid: up to {MAX_IN_FLIGHT}: fewer jobs or a lower iodepth)",
            t.jobs, t.amount
        ))),
        None => Ok(()),
    }
}

/// What the event loop did in one run: for the speed benchmark.
#[derive(Clone, Copy, Debug, Default)]
struct Work {
    events: u64,
    host_ios: u64,
}

fn run_counted(specs: &[JobSpec], cfg: &RunConfig) -> Result<(RunResult, Work), SimError> {
    raidlab_workload::check_reported(specs).map_err(|e| SimError::usage(e.message))?;
    let waits = raidlab_workload::waitees(specs).map_err(|e| SimError::usage(e.message))?;
    let mut system: Option<PathBuf> = None;
    for s in specs {
        s.validate().map_err(|e| SimError::usage(e.message))?;
        if s.ioengine == raidlab_workload::IoEngine::Null {
            // fio's null engine completes requests without doing them: there is nothing of
            // it to model, and running the system instead would answer another question.
            return Err(SimError::usage(format!(
                "job '{}': ioengine=null does no I/O, so it has nothing to simulate (valid \
                 for sim: targets: io_uring, iodepth requests in flight, or psync, one at a \
                 time)",
                s.name
            )));
        }
        if s.logs.unix_epoch {
            return Err(SimError::usage(format!(
                "job '{}': log_unix_epoch stamps logs with the wall clock, and a simulated run \
                 has only virtual time (valid for sim: targets: log_unix_epoch=0, times from \
                 the job's start)",
                s.name
            )));
        }
        if s.sync != raidlab_workload::SyncIo::None {
            return Err(SimError::usage(format!(
                "job '{}': sync={} (synchronous writes) is not modelled by the simulator \
                 (valid for sim: targets: sync=none, with fsync=N or fdatasync=N for \
                 periodic flushes)",
                s.name,
                if s.sync == raidlab_workload::SyncIo::Dsync {
                    "dsync"
                } else {
                    "sync"
                }
            )));
        }
        if let Some((name, _)) = [
            ("exec_prerun", &s.exec_prerun),
            ("exec_postrun", &s.exec_postrun),
        ]
        .into_iter()
        .find(|(_, c)| c.is_some())
        {
            return Err(SimError::usage(format!(
                "job '{}': {name} runs a command on the host around a real job, and a simulated job has no host to run it on (valid: leave it out for sim: targets)",
                s.name
            )));
        }
        if s.file_append {
            return Err(SimError::usage(format!(
                "job '{}': file_append writes after a file's end, and a sim: target is a LUN with no end to append at (valid: offset)",
                s.name
            )));
        }
        if s.create_only {
            return Err(SimError::usage(format!(
                "job '{}': create_only lays a job's files out and runs nothing else, and a sim: target is a LUN with nothing to lay out (valid: leave it out for sim: targets)",
                s.name
            )));
        }
        if s.nrfiles > 1 || s.filesize.is_some() {
            return Err(SimError::usage(format!(
                "job '{}': nrfiles and filesize lay files out on a filesystem, and a sim: \
                 target is a LUN (valid for sim: targets: size, offset)",
                s.name
            )));
        }
        for f in &s.filenames {
            let t = parse_target(f)?;
            match &system {
                None => system = Some(t.system.clone()),
                Some(p) if *p != t.system => {
                    return Err(SimError::usage(format!(
                        "one simulated run takes one system file; got '{}' and '{}'",
                        p.display(),
                        t.system.display()
                    )))
                }
                _ => {}
            }
        }
    }
    let Some(path) = system else {
        return Err(SimError::usage("no sim: target given"));
    };
    check_in_flight(specs)?;
    let sys = config::load(&path)?;
    let mut world = World::build(&sys)?;
    if world.page_cache.is_none() {
        if let Some(s) = specs.iter().find(|s| s.pre_read) {
            return Err(SimError::usage(format!(
                "job '{}': pre_read reads into the host's page cache, and {} models none (valid: page_cache_mib in its [host], or pre_read=0)",
                s.name,
                path.display()
            )));
        }
    }
    // Expand jobs: spec × its runs of files × numjobs, as the real engine does; a run of
    // one target naming the whole system (`sim:SYSTEM.toml`) is a job for each of its LUNs,
    // a run of several targets one job over all of their LUNs.
    let mut planned = Vec::new();
    let mut global = 0u32;
    let lun_target = |li: usize| format!("sim:{}#{}", path.display(), world.luns[li].name);
    for (si, s) in specs.iter().enumerate() {
        for (gi, run) in s.file_runs().into_iter().enumerate() {
            let mut luns_of: Vec<Vec<usize>> = Vec::with_capacity(run.len());
            for &fi in &run {
                let f = &s.filenames[fi];
                let t = parse_target(f)?;
                luns_of.push(target_luns(&world, f, &path, t.lun.as_deref())?);
            }
            // (file index, LUNs of the job) for each job the run makes.
            let jobs: Vec<(usize, Vec<usize>)> = if let [one] = &luns_of[..] {
                let fi = run[0];
                one.iter()
                    .enumerate()
                    .map(|(k, &li)| (fi + (k << 16), vec![li]))
                    .collect()
            } else {
                vec![(gi, luns_of.concat())]
            };
            for (file_index, luns) in jobs {
                for j in 0..s.numjobs {
                    let inst = JobInstance {
                        spec_index: si,
                        file_index,
                        files: run.clone(),
                        job_index: s.first_job + j,
                        global_index: global,
                    };
                    global += 1;
                    let target = luns
                        .iter()
                        .map(|&li| lun_target(li))
                        .collect::<Vec<_>>()
                        .join(":");
                    planned.push(Planned {
                        spec: si,
                        luns: luns.clone(),
                        target,
                        inst,
                    });
                }
            }
        }
    }
    // Trims reach flash drives only: a disk drive takes no TRIM (nor UNMAP).
    for p in &planned {
        let s = &specs[p.spec];
        if !s.trims() {
            continue;
        }
        for &l in &p.luns {
            if let Some(d) = world
                .drives_under(l)
                .into_iter()
                .find(|&d| world.models[world.disks[d].model].ssd.is_none())
            {
                return Err(SimError::usage(format!(
                    "job '{}' trims {}, whose drive {} is a disk drive, which takes no TRIM (valid: trims on LUNs of flash drives; a trace's trims left out with replay_skip=trim)",
                    s.name, p.target, world.disks[d].name
                )));
            }
        }
    }
    // Stonewall groups.
    // Stonewall groups run one after another; `new_group` starts only a reporting group.
    let job_groups = raidlab_workload::job_groups(specs);
    let group_of: Vec<u32> = job_groups.iter().map(|g| g.0 as u32).collect();
    let g = group_of.last().copied().unwrap_or(0);
    let mut results: Vec<JobResult> = Vec::new();
    // The spec each result comes from, for group_reporting.
    let mut result_spec: Vec<usize> = Vec::new();
    // The simulator's extras of each stonewall group, and the group of each result: a job's
    // components' utilization and bottleneck are those of its own group's span (over the
    // whole run, a read group's bottleneck was the write group's drives).
    let mut group_extras: Vec<SimExtras> = Vec::new();
    // What the group being simulated has to say of its jobs (`SimExtras::notes`).
    let mut group_notes: Vec<String> = Vec::new();
    let mut result_group: Vec<usize> = Vec::new();
    let system_name = path.display().to_string();
    // The drives' counters around each stonewall group, for fio's disk statistics
    // (`disk_stats`), with the group's virtual time simulated and extended.
    let mut disk_groups: Vec<GroupSpan> = Vec::new();
    let mut engine = Engine::new(&mut world);
    for grp in 0..=g {
        let members: Vec<&Planned> = planned.iter().filter(|p| group_of[p.spec] == grp).collect();
        if members.is_empty() {
            continue;
        }
        if engine.exit_all {
            // A job's end under `exit_what=all` stopped the run: as fio, the later groups'
            // jobs are reported with nothing done.
            let now = Usage::take(engine.w, engine.now, engine.member_ios);
            group_extras.push(extras(engine.w, &system_name, &now, &now, "not run"));
            for p in &members {
                result_spec.push(p.spec);
                result_group.push(group_extras.len() - 1);
                results.push(JobResult {
                    name: specs[p.spec].name.clone(),
                    groupid: job_groups[p.spec].1,
                    instances: 1,
                    target: p.target.clone(),
                    engine: "sim".into(),
                    ..Default::default()
                });
            }
            continue;
        }
        let mut jobs = Vec::new();
        for p in &members {
            let s = &specs[p.spec];
            let caps: Vec<u64> = p.luns.iter().map(|&l| engine.w.luns[l].capacity).collect();
            let stream = JobStream::new(s, &p.inst, &caps)
                .map_err(|e| SimError::usage(format!("{}: {}", p.target, e.message)))?;
            // What the job would move run to its end, for a converged run's extension: with
            // drawn block sizes too (with `total_bytes` alone, a bssplit job converged early
            // and reported the part it had simulated as if that were all of it).
            let total = stream.expected_bytes();
            // psync issues one request at a time whatever iodepth says, as fio's sync engines
            // and the real executor on files do.
            let depth = match s.ioengine {
                e if e.one_at_a_time() => 1,
                _ => s.iodepth.max(1),
            };
            let mut j = JobRt::new(stream, p.luns.iter().map(|&l| l as u32).collect(), depth);
            j.refill_at = s.refill_at().min(depth - 1);
            let seed = p.inst.seed(s);
            j.pacer = raidlab_workload::Pacer::new(s, seed);
            j.start_delay = raidlab_workload::pace::start_delay_ns(&s.pace, seed);
            j.ramp_end = j.start_delay + s.ramp_time_ns;
            j.deadline = s.runtime_ns.map(|r| r + s.ramp_time_ns + j.start_delay);
            j.target_bytes = total;
            j.buffered = !s.direct && engine.w.page_cache.is_some();
            j.read_advice = s.read_advice();
            j.end_fsync = s.flushes_at_end();
            j.iolog = s.write_iolog.as_ref().map(|path| {
                Box::new(raidlab_result::IoLog::new(
                    path.clone(),
                    p.inst
                        .files
                        .iter()
                        .map(|&f| s.filenames[f].clone())
                        .collect(),
                ))
            });
            j.flow = (s.flow > 0).then_some((s.flow_id, s.flow, s.flow_sleep_ns));
            j.set_special(s.trims());
            j.spec = p.spec as u32;
            j.waits_on = waits[p.spec].map(|w| w as u32);
            j.media_floor = media_floor(engine.w, s, &j.stream, &p.luns);
            j.exact = !s.sim_converge;
            j.max_latency_ns = s.max_latency_ns;
            if let Some(sr) = raidlab_workload::DepthSearch::new(&s.latency, depth, 0, 0) {
                // (The search's clock: its first window starts with the group.)
                j.depth = sr.depth();
                j.search = Some(Box::new(sr));
            }
            j.latency_watch = j.max_latency_ns > 0 || j.search.is_some();
            j.exits = [false, true].map(|e| raidlab_workload::exit_scope(specs, p.spec, e));
            j.report_group = job_groups[p.spec].1;
            j.sampler = raidlab_result::Sampler::for_job(
                s.sample_every(),
                s.samples_logged(),
                s.runtime_ns,
            );
            if s.logs.any() {
                let [bw, iops, lat, hist] = s.logs.prefixes(&s.name);
                j.log = Some(Box::new(
                    raidlab_result::JobLog::new(
                        p.inst.global_index + 1,
                        raidlab_result::LogNames {
                            bw,
                            iops,
                            lat,
                            hist,
                        },
                        s.logs.avg_msec,
                        s.logs.offset,
                    )
                    .with_hist(s.logs.hist_msec, s.logs.hist_coarseness)
                    .with_max(s.logs.max_value)
                    .shared(s.logs.shared),
                ));
            }
            // fio's invalidate: the job starts with its region's clean pages out of the cache;
            // with pre_read, with its region in the cache instead.
            if let Some(pc) = engine.w.page_cache.as_mut() {
                for (k, &l) in p.luns.iter().enumerate() {
                    let (start, len) = j.stream.region(k);
                    if s.pre_read {
                        pc.preload(l as u32, start, len);
                    } else if s.invalidate {
                        pc.invalidate(l as u32, start, len);
                    }
                }
            }
            jobs.push(j);
        }
        // fio's verify read-backs, as the real engine plans them: a job whose blocks another
        // job of the group writes at the same time reads nothing back.
        {
            use raidlab_workload::readback::{at_end, backlog, clashes, ReadBackJob};
            let plan: Vec<ReadBackJob<usize>> = members
                .iter()
                .zip(&jobs)
                .map(|(p, j)| {
                    let s = &specs[p.spec];
                    ReadBackJob {
                        group: 0,
                        writes: s.writes(),
                        reads_back: at_end(s) || backlog(s).0 > 0,
                        regions: p
                            .luns
                            .iter()
                            .enumerate()
                            .map(|(k, &l)| {
                                let (start, len) = j.stream.region(k);
                                (l, start, len)
                            })
                            .collect(),
                    }
                })
                .collect();
            let clash = clashes(&plan);
            let clashing: Vec<usize> = clash.iter().map(|c| c.0).collect();
            for &(i, k, f) in &clash {
                let (si, sk) = (members[i].spec, members[k].spec);
                let by = (si != sk).then_some(specs[sk].name.as_str());
                let lun = format!(
                    "sim:{system_name}#{}",
                    engine.w.luns[members[i].luns[f]].name
                );
                let note = raidlab_workload::readback::clash_note(&specs[si].name, by, &lun);
                if !group_notes.contains(&note) {
                    group_notes.push(note);
                }
            }
            for (i, (p, j)) in members.iter().zip(jobs.iter_mut()).enumerate() {
                let s = &specs[p.spec];
                if plan[i].reads_back && !clashing.contains(&i) {
                    j.readback = Some(Box::new(engine::ReadBack::new(backlog(s), at_end(s))));
                    j.set_special(s.trims());
                }
            }
        }
        engine.steady = steady_judges(&members, specs, &job_groups);
        let t0 = engine.now;
        let before = Usage::take(engine.w, t0, engine.member_ios);
        let reason = engine.run(&mut jobs, &cfg.convergence);
        let extended_ns = jobs.iter().map(|j| j.extrapolated_ns).max().unwrap_or(0);
        // Each judge's report, on its last member's result.
        let mut steady_reports: Vec<Option<raidlab_result::SteadyReport>> = vec![None; jobs.len()];
        for ss in std::mem::take(&mut engine.steady) {
            if let Some(&last) = ss.members.last() {
                steady_reports[last] = Some(ss.judge.report().clone());
            }
        }
        let after = Usage::take(engine.w, engine.now, engine.member_ios);
        let mut x = extras(engine.w, &system_name, &before, &after, reason);
        x.notes = std::mem::take(&mut group_notes);
        group_extras.push(x);
        disk_groups.push(GroupSpan {
            before,
            after,
            extended_ns,
        });
        for ((p, j), steadystate) in members.iter().zip(jobs).zip(steady_reports) {
            let s = &specs[p.spec];
            result_spec.push(p.spec);
            result_group.push(group_extras.len() - 1);
            results.push(JobResult {
                name: s.name.clone(),
                groupid: job_groups[p.spec].1,
                instances: 1,
                target: p.target.clone(),
                engine: "sim".into(),
                read: j.read,
                write: j.write,
                trim: j.trim,
                sync: j.sync,
                usr_cpu: 0.0,
                sys_cpu: 0.0,
                elapsed_ns: j.end.saturating_sub(t0) + j.extrapolated_ns,
                passes: Vec::new(),
                passes_between: None,
                verify: None,
                sim: None,
                stopped: None,
                // fio's errno for what ended the job: EIO for a missed minimum rate,
                // ETIMEDOUT past max_latency.
                errno: j.errno,
                error: j.error,
                iodepth_level: j.iodepth_level,
                logs: j.log.map(|l| *l).into_iter().collect(),
                iologs: j
                    .iolog
                    .map(|mut l| {
                        l.end_ns = j.end.saturating_sub(j.first);
                        *l
                    })
                    .into_iter()
                    .collect(),
                // (The simulator models no I/O errors: a job that would go on past some
                // shows none gone past.)
                errors: s.on_error.counts().then(Default::default),
                steadystate,
                latency_target: j.search.as_ref().map(|sr| raidlab_result::LatencyDepth {
                    target_ns: s.latency.target_ns,
                    window_ns: s.latency.window_ns,
                    percentile: s.latency.percentile,
                    depth: sr.depth(),
                }),
                ..Default::default()
            });
        }
    }
    let work = Work {
        events: engine.events,
        host_ios: engine.host_ios,
    };
    drop(engine);
    let disk_util = disk_stats(
        &world,
        &disk_groups,
        &planned
            .iter()
            .filter(|p| specs[p.spec].disk_util)
            .flat_map(|p| p.luns.iter().copied())
            .collect::<Vec<_>>(),
    );
    for (r, &gi) in results.iter_mut().zip(&result_group) {
        r.sim = Some(group_extras[gi].clone());
        // Host CPU share of this run, as percent of one CPU (the model's per-I/O cost).
        let ios = r.read.total_ios + r.write.total_ios + r.trim.total_ios;
        if r.elapsed_ns > 0 {
            r.sys_cpu = 100.0 * (ios as f64 * world.host_io_ns as f64) / r.elapsed_ns as f64;
        }
    }
    for (r, &si) in results.iter_mut().zip(&result_spec) {
        let s = &specs[si];
        r.forget(raidlab_result::schema::Unmeasured {
            clat: s.disable_clat,
            lat: s.disable_lat,
            bw: s.disable_bw,
        });
    }
    // (fio's stats=0: the job ran, and is not reported.)
    let reported = result_spec
        .into_iter()
        .zip(results)
        .filter(|(si, _)| specs[*si].stats);
    let results =
        raidlab_result::schema::fold_group_reporting(reported, |si| specs[si].group_reporting);
    Ok((
        RunResult {
            version: format!("raidlab-{}", env!("CARGO_PKG_VERSION")),
            timestamp: 0,
            jobs: results,
            disk_util,
        },
        work,
    ))
}

/// One stonewall group's counters as it started and as it ended, and the time its jobs
/// were extended by at a steady rate (the longest).
struct GroupSpan {
    before: Usage,
    after: Usage,
    extended_ns: u64,
}

/// fio's disk statistics of the modeled drives under `luns` (each drive once, in the
/// system's order) over the run's groups: each drive's commands completed to its controller
/// or host per direction, their bytes, their times from arrival at the drive to completion
/// (`ticks`; `in_queue` their sum, as the kernel's time in queue sums its requests' times),
/// and its busy time (a disk drive's service and read-ahead time, a flash drive's die time
/// over its dies: the utilization its component shows). The drives merge nothing. A group
/// stopped early at a steady rate and extended has its drives' figures extended alike (the
/// part simulated scaled to the group's whole time), as its jobs' are.
fn disk_stats(
    w: &World,
    groups: &[GroupSpan],
    luns: &[usize],
) -> Vec<raidlab_result::schema::DiskUtil> {
    let mut drives: Vec<usize> = luns.iter().flat_map(|&l| w.drives_under(l)).collect();
    drives.sort_unstable();
    drives.dedup();
    drives
        .into_iter()
        .map(|d| {
            let mut u = raidlab_result::schema::DiskUtil {
                name: w.disks[d].name.clone(),
                ..Default::default()
            };
            for g in groups {
                let simulated_ns = g.after.t - g.before.t;
                let whole = simulated_ns + g.extended_ns;
                // (Counts scaled exactly in integers: the part simulated × whole / simulated.)
                let scale = |x: u64| {
                    (u128::from(x) * u128::from(whole) / u128::from(simulated_ns.max(1))) as u64
                };
                let (b, a) = (g.before.disk_done[d], g.after.disk_done[d]);
                u.read_ios += scale(a[0].ios - b[0].ios);
                u.write_ios += scale(a[1].ios - b[1].ios);
                u.read_bytes += scale(a[0].bytes - b[0].bytes);
                u.write_bytes += scale(a[1].bytes - b[1].bytes);
                u.read_ticks_ns += scale(a[0].ticks_ns - b[0].ticks_ns);
                u.write_ticks_ns += scale(a[1].ticks_ns - b[1].ticks_ns);
                // (fio's util: the time a command was outstanding, not the units' service.)
                let busy = g.after.disk_in_flight[d] - g.before.disk_in_flight[d];
                u.busy_ns += scale(busy.min(simulated_ns));
                u.elapsed_ns += whole;
            }
            u.in_queue_ns = u.read_ticks_ns + u.write_ticks_ns;
            u
        })
        .collect()
}

/// Counters that grow over a run, taken when a stonewall group starts and when it ends: what
/// the group did is the difference.
struct Usage {
    t: u64,
    member_ios: u64,
    /// Busy ns of each resource, then of each drive (service times and the media time spent
    /// reading ahead between commands, [`device::DeviceState::ahead_ns`]).
    res_busy: Vec<u64>,
    disk_busy: Vec<u64>,
    /// Reads given to the drives, and those their buffers served, all drives together.
    drive_reads: u64,
    drive_read_hits: u64,
    /// Host reads given to the controllers, and those their caches served, all together.
    ctrl_reads: u64,
    ctrl_read_hits: u64,
    page_cache: Option<pagecache::CacheStats>,
    /// What each host array's stripe cache did.
    stripes: Vec<stripecache::Counts>,
    /// Each rebuilding array's watermark (member bytes rebuilt).
    rebuilt: Vec<u64>,
    /// Each drive's completed commands, reads and writes (fio's disk statistics).
    disk_done: Vec<[world::DoneCount; 2]>,
    /// Each drive's time with a command outstanding (fio's `util`, [`world::InFlight`]).
    disk_in_flight: Vec<u64>,
}

impl Usage {
    fn take(w: &World, t: u64, member_ios: u64) -> Usage {
        Usage {
            t,
            member_ios,
            res_busy: w.res.iter().map(|r| r.busy_ns).collect(),
            disk_busy: w
                .disks
                .iter()
                .map(|d| d.busy_ns + d.state.ahead_ns.round() as u64 + d.state.ssd.die_busy_ns)
                .collect(),
            disk_done: w.disks.iter().map(|d| d.done).collect(),
            disk_in_flight: w.disks.iter().map(|d| d.in_flight.ns_at(t)).collect(),
            drive_reads: w.disks.iter().map(|d| d.reads).sum(),
            drive_read_hits: w.disks.iter().map(|d| d.read_hits).sum(),
            ctrl_reads: w.arrays.iter().map(|a| a.cache_reads).sum(),
            ctrl_read_hits: w.arrays.iter().map(|a| a.cache_read_hits).sum(),
            page_cache: w.page_cache.as_ref().map(|pc| pc.stats),
            stripes: w
                .arrays
                .iter()
                .filter_map(|a| a.stripe_cache.as_ref())
                .map(|sc| sc.counts)
                .collect(),
            rebuilt: w
                .arrays
                .iter()
                .filter(|a| a.rebuild.is_some())
                .map(|a| a.geom.rebuilt_below)
                .collect(),
        }
    }
}

/// The simulator's extras of one stonewall group: what happened between `from` and `to`.
fn extras(w: &World, system: &str, from: &Usage, to: &Usage, reason: &str) -> SimExtras {
    let vt = (to.t - from.t).max(1);
    let components = components(w, vt, from, to);
    let bottleneck = components
        .iter()
        .filter(|c| c.utilization > 0.9)
        .max_by(|a, b| a.utilization.total_cmp(&b.utilization))
        .map(|c| c.name.clone());
    let page_cache = w.page_cache.as_ref().map(|pc| {
        let b = |pages: u64| pages * pagecache::PAGE;
        let (s, s0) = (&pc.stats, from.page_cache.unwrap_or_default());
        raidlab_result::PageCacheUse {
            capacity_bytes: b(pc.cfg.capacity),
            hit_bytes: b(s.hit_pages - s0.hit_pages),
            miss_bytes: b(s.miss_pages - s0.miss_pages),
            read_ahead_bytes: b(s.read_ahead_pages - s0.read_ahead_pages),
            written_back_bytes: b(s.written_back_pages - s0.written_back_pages),
            dirty_bytes: b(pc.dirty_pages),
            throttled_writes: s.throttled - s0.throttled,
        }
    });
    let stripe_caches = w
        .arrays
        .iter()
        .filter_map(|a| Some((a, a.stripe_cache.as_ref()?)))
        .zip(from.stripes.iter().zip(&to.stripes))
        .map(|((a, sc), (c0, c1))| {
            let c = c1.since(c0);
            raidlab_result::StripeCacheUse {
                array: a.name.clone(),
                stripe_heads: sc.rows().1,
                full_writes: c.full_writes,
                preread_writes: c.preread_writes,
                room_waits: c.room_waits,
                room_wait_ns: c.room_wait_ns,
                held_pieces: c.held_pieces,
                held_ns: c.held_ns,
                ops_done: c.ops_done,
                op_ns: c.op_ns,
            }
        })
        .collect();
    let rebuilds = w
        .arrays
        .iter()
        .filter_map(|a| Some((a, a.rebuild.as_ref()?)))
        .zip(from.rebuilt.iter().zip(&to.rebuilt))
        .map(|((a, rb), (&b0, &b1))| {
            // The time it ran in the group: to its end, if it ended in it.
            let stop = rb.finished_at.map_or(to.t, |f| f.clamp(from.t, to.t));
            let ns = stop - from.t;
            let finished = rb.finished_at.is_some();
            let full = if finished && b0 == 0 {
                ns
            } else if b1 > b0 {
                (rb.end as u128 * ns as u128 / (b1 - b0) as u128) as u64
            } else {
                0
            };
            raidlab_result::RebuildUse {
                array: a.name.clone(),
                members: rb.targets.clone(),
                member_bytes: rb.end,
                rebuilt_bytes: b1 - b0,
                rebuilt_to_bytes: b1,
                rebuild_ns: ns,
                full_rebuild_ns: full,
                finished,
            }
        })
        .collect();
    // (Reads and hits between the two readings; present when any read was a hit.)
    let cache_use = |(r0, h0): (u64, u64), (r1, h1): (u64, u64)| {
        (h1 > h0).then(|| raidlab_result::DriveCacheUse {
            reads: r1 - r0,
            read_hits: h1 - h0,
        })
    };
    let drive_caches = cache_use(
        (from.drive_reads, from.drive_read_hits),
        (to.drive_reads, to.drive_read_hits),
    );
    let controller_caches = cache_use(
        (from.ctrl_reads, from.ctrl_read_hits),
        (to.ctrl_reads, to.ctrl_read_hits),
    );
    SimExtras {
        rebuilds,
        notes: Vec::new(),
        drive_caches,
        controller_caches,
        system: system.to_string(),
        virtual_time_ns: vt,
        stop_reason: reason.into(),
        components,
        bottleneck,
        member_ios: to.member_ios - from.member_ios,
        page_cache,
        stripe_caches,
    }
}

fn components(w: &World, vt: u64, from: &Usage, to: &Usage) -> Vec<ComponentUse> {
    let mut v = Vec::new();
    for (i, r) in w.res.iter().enumerate() {
        let servers = r.servers() as f64;
        let busy_ns = to.res_busy[i] - from.res_busy[i];
        v.push(ComponentUse {
            name: r.name.clone(),
            kind: r.kind.into(),
            utilization: (busy_ns as f64 / vt as f64 / servers).min(1.0),
            busy_ns,
            bound_bytes_s: r.bound(),
        });
    }
    for (i, d) in w.disks.iter().enumerate() {
        let busy_ns = to.disk_busy[i] - from.disk_busy[i];
        v.push(ComponentUse {
            name: d.name.clone(),
            kind: "disk".into(),
            utilization: (busy_ns as f64 / vt as f64 / w.models[d.model].servers() as f64).min(1.0),
            busy_ns,
            bound_bytes_s: Some(w.models[d.model].outer_rate()),
        });
    }
    v
}

/// The theoretical bound of each component on the path from host to drives of the LUNs a run
/// of `system` drives, and the bound per LUN, for reads and for writes (the same components'
/// write figures, [`ComponentBound::write_bytes_s`]). `SYSTEM#LUN`: that LUN and the LUNs its
/// host array is built on (a LUN the system does not have is a usage error naming those it
/// has). `SYSTEM`: every visible LUN
/// and those it is built on, and all of them at once (`all`). Components on no such path (an
/// interface, controller or array of another LUN, or of none) are left out.
pub fn bounds(system: &Path) -> Result<Vec<ComponentBound>, SimError> {
    let (system, lun) = split_lun(system)?;
    let sys = config::load(&system)?;
    let w = World::build(&sys)?;
    let luns = match &lun {
        Some(l) => lun_and_members(&w, &system, l)?,
        None => with_members(&w, (0..w.luns.len()).filter(|&i| !w.luns[i].hidden)),
    };
    let on_path = path_components(&w, &luns);
    let (reads, writes) = match &lun {
        Some(l) => (traffic_shares(&w, l, false), traffic_shares(&w, l, true)),
        None => Default::default(),
    };
    let lun = lun.as_deref().unwrap_or("");
    Ok(bounds_of(&w)
        .into_iter()
        .filter(|b| on_path.contains(&b.name) || (b.name == "all" && lun.is_empty()))
        .map(|b| {
            let b = match reads.get(&b.name) {
                Some(&share) if share < 1.0 && b.bound_bytes_s.is_finite() => {
                    in_target_terms(b, share, lun)
                }
                _ => b,
            };
            match writes.get(&b.name) {
                Some(&share) if share != 1.0 && b.write_bytes_s.is_finite() => {
                    writes_in_target_terms(b, share, lun)
                }
                _ => b,
            }
        })
        .collect())
}

/// For `SYSTEM#LUN`: the share of the LUN's data (`write`: of the bytes its writes move)
/// each component on its paths carries, by name. A host array stripes its data evenly over
/// its member LUNs, so a component on the paths of some of them carries their shares (an FC
/// port under two of a host array's four LUNs carries half); its writes put each stripe's
/// parity or copies on them too (a RAID 5 of four writes 4/3 of its data to them, a mirror
/// of two twice). One on the LUN's own path carries all of it. Components the LUN's data
/// crosses at two levels (the host's bus, under the array and its members) carry the larger
/// of the two.
fn traffic_shares(w: &World, lun: &str, write: bool) -> std::collections::BTreeMap<String, f64> {
    let Some(top) = w.luns.iter().position(|x| x.name == lun) else {
        return std::collections::BTreeMap::new();
    };
    let mut share = vec![0.0f64; w.luns.len()];
    share[top] = 1.0;
    let mut todo = vec![top];
    while let Some(i) = todo.pop() {
        let a = &w.arrays[w.luns[i].array];
        if a.ctrl.is_none() && !a.members.is_empty() {
            let of = if write {
                a.geom.data_disks() as f64
            } else {
                a.members.len() as f64
            };
            for &m in &a.members {
                share[m] += share[i] / of;
                todo.push(m);
            }
        }
    }
    // What the LUN's own path carries, and what its members' paths carry together.
    let (mut own, mut under) = (
        std::collections::BTreeMap::<String, f64>::new(),
        std::collections::BTreeMap::<String, f64>::new(),
    );
    for (i, &s) in share.iter().enumerate().filter(|(_, &s)| s > 0.0) {
        let mut only = vec![false; w.luns.len()];
        only[i] = true;
        let level = if i == top { &mut own } else { &mut under };
        for name in path_components(w, &only) {
            *level.entry(name).or_insert(0.0) += s;
        }
    }
    for (name, s) in own {
        let e = under.entry(name).or_insert(0.0);
        *e = e.max(s);
    }
    under
}

/// A component's write bound in terms of a LUN whose writes put `share` of their bytes on it
/// (less than all, or more with a host array's parity or copies): the LUN's write rate at
/// which the component saturates.
fn writes_in_target_terms(b: ComponentBound, share: f64, lun: &str) -> ComponentBound {
    ComponentBound {
        write_bytes_s: b.write_bytes_s / share,
        write_outer_bytes_s: b.write_outer_bytes_s / share,
        write_peak_bytes_s: b.write_peak_bytes_s / share,
        note: format!(
            "{}; writes: carries {:.0}% of the bytes {lun}'s writes move, so {lun} writing at \
             {:.1} MB/s fills it",
            b.note,
            share * 100.0,
            b.write_bytes_s / share / 1e6
        ),
        ..b
    }
}

/// A component's bound in terms of a LUN of which it carries `share` (< 1) of the data: the
/// LUN's rate at which the component saturates.
fn in_target_terms(b: ComponentBound, share: f64, lun: &str) -> ComponentBound {
    ComponentBound {
        bound_bytes_s: b.bound_bytes_s / share,
        outer_bytes_s: b.outer_bytes_s / share,
        note: format!(
            "{}; carries {:.0}% of {lun}'s data, so {lun} at {:.1} MB/s fills it",
            b.note,
            share * 100.0,
            b.bound_bytes_s / share / 1e6
        ),
        ..b
    }
}

/// Names of the components on the paths from host to drives of the LUNs marked in `luns`:
/// each LUN, the resources its commands and data cross (host, bus, interface, link, switch,
/// controller port, processor and data path), and behind a controller its array, the
/// controller's parity engine (for a parity array) and its drives' device bus; for a LUN of
/// a host array, the host's parity (for a parity array). Its member LUNs are marked
/// themselves ([`with_members`]).
fn path_components(w: &World, luns: &[bool]) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for (li, l) in w.luns.iter().enumerate().filter(|&(li, _)| luns[li]) {
        names.insert(format!("lun/{}", l.name));
        let a = &w.arrays[l.array];
        let parity = a.geom.level.parity() > 0;
        let mut res = read_path(w, li);
        res.extend(l.cmd_path.iter().map(|&(r, _)| r));
        res.extend(l.ctrl_cmd.map(|(r, _)| r));
        match a.ctrl {
            Some(c) => {
                names.insert(format!("array/{}", a.name));
                res.extend(w.ctrls[c].parity.filter(|_| parity));
            }
            None => res.extend(w.host_parity.filter(|_| parity)),
        }
        names.extend(res.into_iter().map(|r| w.res[r].name.clone()));
    }
    names
}

fn bounds_of(w: &World) -> Vec<ComponentBound> {
    let mut out = Vec::new();
    for r in &w.res {
        let wr = write_bw(r);
        if r.kind == "parity" {
            // An XOR engine (or the host's software parity) computes parity for writes, and
            // for reads only of a degraded array: it bounds no read.
            out.push(ComponentBound {
                name: r.name.clone(),
                kind: r.kind.into(),
                bound_bytes_s: f64::INFINITY,
                outer_bytes_s: f64::INFINITY,
                note: format!(
                    "{}; no read bound (parity is computed for writes), write {:.1} MB/s of \
                     data{}",
                    r.note,
                    wr / 1e6,
                    if r.servers() > 1 {
                        format!(" ({} CPUs at once)", r.servers())
                    } else {
                        String::new()
                    }
                ),
                write_bytes_s: wr,
                write_outer_bytes_s: wr,
                write_peak_bytes_s: wr,
                write_note: String::new(),
            });
            continue;
        }
        if let Some(b) = r.bound() {
            let rd = bw(r.ns_per_byte[0]);
            let b = rd.min(b.max(rd));
            out.push(ComponentBound {
                name: r.name.clone(),
                kind: r.kind.into(),
                bound_bytes_s: b,
                outer_bytes_s: b,
                note: format!(
                    "{}; read {:.1} MB/s, write {:.1} MB/s",
                    r.note,
                    rd / 1e6,
                    wr / 1e6
                ),
                write_bytes_s: wr,
                write_outer_bytes_s: wr,
                write_peak_bytes_s: wr,
                write_note: String::new(),
            });
        }
    }
    // Arrays behind a controller: every drive reading at its media rate. Seed 002 (stage 2)
    // takes the inner-zone rate, the slowest, as the drives' sustained figure: a data set
    // spread over the whole stroke cannot beat it for long. The outer zone's rate is the
    // ceiling a data set near the start of the drives can reach. Every drive, not only the
    // data drives' worth: one sequential stream gets about that (each drive passes over its
    // parity chunks, or a mirror's copies over each other's rows), but a mirror's copies
    // serve reads side by side and drives seek past large parity chunks, so runs beat it
    // (seed 004's raid10-4d read at 471 MB/s, the data drives' bound said 250).
    // Writes are the data drives' worth at most: whatever the order, every stripe's parity
    // and every mirror's copy is written too (`array_write`).
    let mut inner = vec![f64::INFINITY; w.arrays.len()];
    let mut outer = vec![f64::INFINITY; w.arrays.len()];
    for (ai, a) in w.arrays.iter().enumerate() {
        if a.ctrl.is_none() {
            continue;
        }
        let m = &w.models[w.disks[a.members[0]].model];
        let n = a.members.len() as f64;
        let dd = a.geom.data_disks() as f64;
        // A degraded array reads with its survivors only, and its parity engine rebuilds
        // the failed members' data.
        let readers = n - a.geom.failed.len() as f64;
        let rebuild = degraded_read_bound(w, ai);
        inner[ai] = (m.inner_rate() * readers).min(rebuild);
        outer[ai] = (m.outer_rate() * readers).min(rebuild);
        let [wi, wo, wp] = array_write(w, ai);
        let [di, do_, dp] = m.write_rates();
        out.push(ComponentBound {
            name: format!("array/{}", a.name),
            kind: "array".into(),
            bound_bytes_s: inner[ai],
            outer_bytes_s: outer[ai],
            note: format!(
                "{} of {} {}; drives {:.1}–{:.1} MB/s (inner–outer zone){}; writes: {dd} data \
                 {} worth{}, drives writing {:.1}–{:.1} MB/s{}",
                a.geom.level,
                a.members.len(),
                match (n == 1.0, a.geom.failed.len()) {
                    (true, _) => "drive".to_string(),
                    (false, 0) => "drives, all of which can read".to_string(),
                    (false, f) => format!(
                        "drives, {f} failed: the {readers} others read, and rebuild the failed {}'s data",
                        if f == 1 { "drive" } else { "drives" }
                    ),
                },
                m.inner_rate() / 1e6,
                m.outer_rate() / 1e6,
                stream_note(dd, n, m.inner_rate(), m.outer_rate()),
                if dd == 1.0 { "drive's" } else { "drives'" },
                if dd < n {
                    " (the rest write parity or copies)"
                } else {
                    ""
                },
                di / 1e6,
                do_ / 1e6,
                if dp > do_ * (1.0 + 1e-9) {
                    format!(", {:.1} into their write cache", dp / 1e6)
                } else {
                    String::new()
                },
            ),
            write_bytes_s: wi,
            write_outer_bytes_s: wo,
            write_peak_bytes_s: wp,
            write_note: String::new(),
        });
    }
    let (luns_in, all_in) = lun_bounds(w, &inner);
    let (luns_out, all_out) = lun_bounds(w, &outer);
    let writes = lun_write_bounds(w);
    for (li, l) in w.luns.iter().enumerate() {
        let wb = &writes.luns[li];
        out.push(ComponentBound {
            name: format!("lun/{}", l.name),
            kind: "lun".into(),
            bound_bytes_s: luns_in[li].0,
            outer_bytes_s: luns_out[li].0,
            note: limited_by(&luns_in[li].1, &luns_out[li].1),
            write_bytes_s: wb.rate(Zone::Inner),
            write_outer_bytes_s: wb.rate(Zone::Outer),
            write_peak_bytes_s: wb.rate(Zone::Peak),
            write_note: wb.note(),
        });
    }
    out.push(ComponentBound {
        name: "all".into(),
        kind: "system".into(),
        bound_bytes_s: all_in.0,
        outer_bytes_s: all_out.0,
        note: shared_note(&all_in.1),
        write_bytes_s: writes.all.rate(Zone::Inner),
        write_outer_bytes_s: writes.all.rate(Zone::Outer),
        write_peak_bytes_s: writes.all.rate(Zone::Peak),
        write_note: writes.all.note(),
    });
    out
}

/// "sum of the LUN bounds", or what divides the bound of all LUNs at once.
fn shared_note(limiter: &str) -> String {
    if limiter.is_empty() {
        "sum of the LUN bounds".into()
    } else {
        format!("shared {limiter} divides its bound")
    }
}

/// Bytes/s a resource moves written data at: its write rate on each of its servers (the
/// host's software parity runs on every CPU at once); unbounded where it sets none.
fn write_bw(r: &world::Res) -> f64 {
    bw(r.ns_per_byte[1]) * r.servers() as f64
}

/// `explain`'s line for array `ai`'s rebuild: what it does, how it is paced, and its bound
/// (bytes/s of each replaced member): the slowest of the replacement's media rate, the
/// survivors' (each reads as much as the replacement writes), the parity engine's rate over
/// the bytes it computes a member byte from, and for md `speed_limit_max`.
fn rebuild_line(w: &World, ai: usize, rb: &rebuild::Rebuild) -> String {
    let a = &w.arrays[ai];
    // The slowest drive under the array (a host array's: its member LUNs' arrays').
    let drives: Vec<usize> = match a.ctrl {
        Some(_) => a.members.clone(),
        None => a
            .members
            .iter()
            .flat_map(|&l| w.arrays[w.luns[l].array].members.clone())
            .collect(),
    };
    let media = drives
        .iter()
        .map(|&d| w.models[w.disks[d].model].outer_rate())
        .fold(f64::INFINITY, f64::min);
    let (_, parity_in, written) = {
        let span = rb.step.min(rb.end);
        let (r, p, wr) = a.geom.rebuild_step(0, span);
        (r, p, wr.iter().map(|m| m.len).sum::<u64>().max(1))
    };
    let engine = match a.ctrl {
        Some(c) => w.ctrls[c].parity,
        None => w.host_parity,
    };
    let parity = engine.map_or(f64::INFINITY, |r| {
        let per_byte = w.res[r].ns_per_byte[1] * parity_in as f64 / written as f64;
        if per_byte > 0.0 {
            1e9 / per_byte * (rb.targets.len() as f64)
        } else {
            f64::INFINITY
        }
    });
    let (pace, cap) = match &rb.pacer {
        rebuild::Pacer::Md(m) => (
            format!(
                "md's pace: up to speed_limit_max {} KiB/s per member while the members see no \
                 other I/O, falling back toward speed_limit_min {} KiB/s when they do",
                m.max, m.min
            ),
            m.max as f64 * 1024.0,
        ),
        rebuild::Pacer::Ctrl { rate, .. } => (
            format!(
                "rebuild rate {rate}%: all of the back end while no host I/O comes, {rate}% of \
                 its time under steady host I/O, what the host leaves under lighter I/O"
            ),
            f64::INFINITY,
        ),
    };
    let bound = media.min(parity).min(cap);
    let by = if bound == cap {
        "speed_limit_max"
    } else if bound == parity {
        "the parity engine"
    } else {
        "the drives' media rate"
    };
    format!(
        "rebuilding member{} {} onto replacement{} ({} MiB each, {} KiB steps, {} in flight), \
         {pace}; at most {:.1} MB/s ({by}), a whole rebuild in at least {:.1} min",
        if rb.targets.len() > 1 { "s" } else { "" },
        rb.targets
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if rb.targets.len() > 1 { "s" } else { "" },
        rb.end >> 20,
        rb.step >> 10,
        rb.depth,
        bound / 1e6,
        rb.end as f64 / bound / 60.0
    )
}

/// The read rate, bytes/s of data, at which a degraded array `ai`'s parity engine (its
/// controller's, or the host's for md) is busy rebuilding the failed members' data: its rate
/// over the parity input a byte read takes, over a whole turn of the layout's roles.
/// Unbounded for a whole array or one without an engine.
fn degraded_read_bound(w: &World, ai: usize) -> f64 {
    let a = &w.arrays[ai];
    if a.geom.failed.is_empty() {
        return f64::INFINITY;
    }
    let engine = match a.ctrl {
        Some(c) => w.ctrls[c].parity,
        None => w.host_parity,
    };
    let Some(r) = engine else {
        return f64::INFINITY;
    };
    let span = (a.geom.members as u64 * a.geom.stripe_data_bytes()).min(a.geom.capacity());
    let per_byte = a.geom.reconstruct_bytes(0, span) as f64 / span.max(1) as f64;
    if per_byte > 0.0 {
        write_bw(&w.res[r]) / per_byte
    } else {
        f64::INFINITY
    }
}

/// What controller array `ai` writes, bytes/s of data, by [`Zone`]: its data drives' worth.
/// Every drive writes, but each stripe's parity (or a mirror's copies) takes the rest: a
/// RAID 5 of `n` writes `n - 1` drives' worth of data even in full stripes.
fn array_write(w: &World, ai: usize) -> [f64; 3] {
    let a = &w.arrays[ai];
    let m = &w.models[w.disks[a.members[0]].model];
    let dd = a.geom.data_disks() as f64;
    m.write_rates().map(|r| dd * r)
}

/// Which write figure: kept up with the drives at their inner zone (a data set over the
/// whole stroke) or at their outer zone (one near their start), a write-back cache full in
/// both; or the most, for a while (a write-back cache or the drives' own taking writes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Zone {
    Inner = 0,
    Outer = 1,
    Peak = 2,
}

const ZONES: [Zone; 3] = [Zone::Inner, Zone::Outer, Zone::Peak];

/// One stage a LUN's written data crosses, for its write bound.
struct Leg {
    /// Who shares it: a resource's or an array's name, or a host array's members.
    key: String,
    /// Its name as the bounds give it.
    name: String,
    /// Bytes/s of its own it moves, by [`Zone`] (behind a write-back cache: unbounded at the
    /// peak, while the cache takes the writes).
    rate: [f64; 3],
    /// Its bytes per byte the LUN writes: a parity array's device bus carries the parity
    /// too, a mirror's its copies (full stripes: the least any order of writes costs).
    per_byte: f64,
}

impl Leg {
    /// The LUN's write rate at which this stage is full, with `users` LUNs sharing it.
    fn lun_rate(&self, z: Zone, users: f64) -> f64 {
        self.rate[z as usize] / (self.per_byte * users)
    }
}

/// The stages LUN `li`'s writes cross from host memory to the drives: its data path to the
/// controller's cache (bus, adapter, link, switch, port, the controller's data path into its
/// cache), and behind a controller its parity engine (parity arrays), device bus and drives,
/// none of which holds a write up while a write-back cache has room; for a host array, the
/// host's parity and its member LUNs side by side.
fn write_legs(w: &World, li: usize) -> Vec<Leg> {
    let l = &w.luns[li];
    let a = &w.arrays[l.array];
    let leg = |r: usize, per_byte: f64, cached: bool| {
        let rate = write_bw(&w.res[r]);
        Leg {
            key: w.res[r].name.clone(),
            name: w.res[r].name.clone(),
            rate: [rate, rate, if cached { f64::INFINITY } else { rate }],
            per_byte,
        }
    };
    let mut legs: Vec<Leg> = l.data_path.iter().map(|&r| leg(r, 1.0, false)).collect();
    let parity = a.geom.level.parity() > 0;
    let per_stripe = a.members.len() as f64 / a.geom.data_disks().max(1) as f64;
    match a.ctrl {
        Some(c) => {
            let cached = w.ctrls[c].write_back;
            if parity {
                legs.extend(w.ctrls[c].parity.map(|r| leg(r, 1.0, cached)));
            }
            let mut buses: Vec<usize> = Vec::new();
            for r in a.members.iter().filter_map(|&d| w.disks[d].backend) {
                if !buses.contains(&r) {
                    buses.push(r);
                    legs.push(leg(r, per_stripe, cached));
                }
            }
            let [inner, outer, peak] = array_write(w, l.array);
            let name = format!("array/{}", a.name);
            legs.push(Leg {
                key: name.clone(),
                name,
                rate: [inner, outer, if cached { f64::INFINITY } else { peak }],
                per_byte: 1.0,
            });
        }
        None => {
            if parity {
                legs.extend(w.host_parity.map(|r| leg(r, 1.0, false)));
            }
            legs.push(Leg {
                key: format!("members of {}", a.name),
                name: "member LUNs".into(),
                rate: members_write(w, &a.members).map(|r| r / per_stripe),
                per_byte: 1.0,
            });
        }
    }
    legs
}

/// What a host array's member LUNs `members` write side by side, bytes/s of their own, by
/// [`Zone`]: each member's own write bound where every stage on the members' paths divides
/// its rate among the members crossing it.
fn members_write(w: &World, members: &[usize]) -> [f64; 3] {
    let legs: Vec<Vec<Leg>> = members.iter().map(|&m| write_legs(w, m)).collect();
    let users = leg_users(legs.iter());
    ZONES.map(|z| {
        legs.iter()
            .map(|legs| {
                legs.iter()
                    .map(|g| g.lun_rate(z, users[&g.key]))
                    .fold(f64::INFINITY, f64::min)
            })
            .sum()
    })
}

/// How many of the LUNs whose stages are `legs` cross each stage, by key.
fn leg_users<'a>(
    legs: impl Iterator<Item = &'a Vec<Leg>>,
) -> std::collections::BTreeMap<String, f64> {
    let mut users = std::collections::BTreeMap::new();
    for legs in legs {
        let mut seen = std::collections::BTreeSet::new();
        for g in legs.iter().filter(|g| seen.insert(&g.key)) {
            *users.entry(g.key.clone()).or_insert(0.0) += 1.0;
        }
    }
    users
}

/// A write bound by [`Zone`], each with what sets it.
struct WriteBound {
    by: [(f64, String); 3],
    /// What lets writes pass the outer zone's bound for a while.
    why: &'static str,
    /// For all LUNs at once: limiters are shared stages dividing their rate.
    shared: bool,
}

impl WriteBound {
    fn rate(&self, z: Zone) -> f64 {
        self.by[z as usize].0
    }

    /// What sets each figure that differs: "limited by X", "; at the outer zone by Y",
    /// "; 45.0 MB/s while the write-back cache has room, limited by Z".
    fn note(&self) -> String {
        let what = |l: &str| {
            if self.shared {
                shared_note(l)
            } else if l.is_empty() {
                "nothing on its path bounds it".into()
            } else {
                format!("limited by {l}")
            }
        };
        let [inner, outer, peak] = &self.by;
        let mut s = what(&inner.1);
        if outer.1 != inner.1 && !(self.shared && outer.1.is_empty()) {
            s += &format!("; at the outer zone by {}", outer.1);
        }
        if peak.0 > outer.0 * (1.0 + 1e-9) {
            s += &format!("; {} MB/s {}", mb_or_unbounded(peak.0), self.why);
            // (All LUNs at once: the sum of theirs, unless something they share divides it.)
            if !(self.shared && peak.1.is_empty()) {
                s += &format!(", {}", what(&peak.1));
            }
        }
        s
    }
}

fn mb_or_unbounded(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}", x / 1e6)
    } else {
        "unbounded".into()
    }
}

/// Write bounds per LUN and for all visible LUNs at once.
struct WriteBounds {
    luns: Vec<WriteBound>,
    all: WriteBound,
}

/// Write bounds per LUN: the lowest rate of the stages its writes cross, in its terms, by
/// [`Zone`]; and for all visible LUNs at once, each stage they share dividing its rate among
/// them: as the read bounds, from the same components' write figures.
fn lun_write_bounds(w: &World) -> WriteBounds {
    let legs: Vec<Vec<Leg>> = (0..w.luns.len()).map(|li| write_legs(w, li)).collect();
    let lowest = |legs: &[Leg], z: Zone, users: &dyn Fn(&str) -> f64, start: f64| {
        let (mut b, mut via) = (start, String::new());
        for g in legs {
            let x = g.lun_rate(z, users(&g.key));
            if x < b {
                b = x;
                via = g.name.clone();
            }
        }
        (b, via)
    };
    let luns: Vec<WriteBound> = w
        .luns
        .iter()
        .zip(&legs)
        .map(|(l, legs)| {
            let a = &w.arrays[l.array];
            let why = match a.ctrl {
                Some(c) if w.ctrls[c].write_back => "while the write-back cache has room",
                Some(_) if w.models[w.disks[a.members[0]].model].ssd.is_some() => {
                    "while the drives' SLC caches have room"
                }
                Some(_) => "while the drives' write caches have room",
                None => "while the caches below it have room",
            };
            WriteBound {
                by: ZONES.map(|z| lowest(legs, z, &|_| 1.0, f64::INFINITY)),
                why,
                shared: false,
            }
        })
        .collect();
    let visible: Vec<usize> = (0..w.luns.len()).filter(|&i| !w.luns[i].hidden).collect();
    let users = leg_users(visible.iter().map(|&i| &legs[i]));
    let users = |k: &str| users.get(k).copied().unwrap_or(1.0);
    let by = ZONES.map(|z| {
        let mut total = (0.0, String::new());
        for &i in &visible {
            let (b, via) = lowest(&legs[i], z, &users, luns[i].rate(z));
            total.0 += b;
            if !via.is_empty() {
                total.1 = via;
            }
        }
        total
    });
    // What lets them all pass it: what lets each, if the same for all.
    let mut whys = visible.iter().map(|&i| luns[i].why);
    let first = whys.next().unwrap_or("at the most");
    let why = if whys.all(|x| x == first) {
        first
    } else {
        "at the most"
    };
    WriteBounds {
        all: WriteBound {
            by,
            why,
            shared: true,
        },
        luns,
    }
}

/// "; one sequential stream about … (N data drives' worth)" for an array of `n` drives of
/// which `dd` hold each stripe's data (nothing when every drive does).
fn stream_note(dd: f64, n: f64, inner: f64, outer: f64) -> String {
    if dd >= n {
        return String::new();
    }
    format!(
        "; one sequential stream about {:.1}–{:.1} MB/s ({dd} data {} worth)",
        inner * dd / 1e6,
        outer * dd / 1e6,
        if dd == 1.0 { "drive's" } else { "drives'" }
    )
}

/// Bytes/s through a resource that takes `npb` ns a byte (unbounded at 0).
fn bw(npb: f64) -> f64 {
    if npb > 0.0 {
        1e9 / npb
    } else {
        f64::INFINITY
    }
}

/// "limited by X", or "limited by X; at the outer zone by Y" when the drives' zone moves the
/// limit from one component to another.
fn limited_by(inner: &str, outer: &str) -> String {
    if inner == outer {
        format!("limited by {inner}")
    } else {
        format!("limited by {inner}; at the outer zone by {outer}")
    }
}

/// A sequential job's bound where its region ends, bytes/ns, when the drives' zones make it
/// lower than where the region starts (by more than a percent): the rate the job has
/// settled at near the start does not stand for the rest of it once it comes near that
/// bound (see [`engine::JobRt::media_floor`]). None for random jobs, whose offsets sample
/// the whole region from the start.
fn media_floor(
    w: &World,
    s: &raidlab_workload::JobSpec,
    stream: &raidlab_workload::JobStream,
    luns: &[usize],
) -> Option<f64> {
    if s.rw.is_random() || stream.replays() {
        return None;
    }
    let writes = s.writes();
    let (mut first, mut last) = (0.0, 0.0);
    for (k, &l) in luns.iter().enumerate().take(stream.files()) {
        let lun = &w.luns[l];
        let cap = w.arrays[lun.array].geom.capacity().max(1) as f64;
        let (start, len) = stream.region(k);
        let at = |x: u64| lun_bounds_at(w, (lun.offset + x) as f64 / cap, writes)[l];
        first += at(start);
        last += at(start + len);
    }
    (last.is_finite() && last < 0.99 * first).then_some(last / 1e9)
}

/// Every LUN's bound, bytes/s, as `explain` takes it, with the drives of each controller
/// array at `frac` of the span their array uses (their media rate there; a flash drive's is
/// the same everywhere): all of them reading, or for `writes` the data drives' worth. A host
/// array's member LUNs are taken at the same fraction (exact where they span their arrays).
pub(crate) fn lun_bounds_at(w: &World, frac: f64, writes: bool) -> Vec<f64> {
    let arrays: Vec<f64> = w
        .arrays
        .iter()
        .enumerate()
        .map(|(ai, a)| {
            if a.ctrl.is_none() {
                return f64::INFINITY;
            }
            let m = &w.models[w.disks[a.members[0]].model];
            let used = a
                .geom
                .g
                .as_ref()
                .map_or(a.geom.member_bytes, |g| g.member_used_bytes());
            let at = (frac.clamp(0.0, 1.0) * used as f64) as u64;
            let drives = if writes {
                a.geom.data_disks() as f64
            } else {
                (a.members.len() - a.geom.failed.len()) as f64
            };
            (m.rate_at(at) * drives).min(degraded_read_bound(w, ai))
        })
        .collect();
    lun_bounds(w, &arrays).0.into_iter().map(|b| b.0).collect()
}

/// Read bounds per LUN (with what sets each) and for all visible LUNs at once (with the shared
/// resource that divides it, if any), given what each array behind a controller can stream.
fn lun_bounds(w: &World, array_read: &[f64]) -> (Vec<(f64, String)>, (f64, String)) {
    // Per LUN: the smallest bound on its path, and its array's.
    let mut luns = Vec::with_capacity(w.luns.len());
    let mut users = vec![0usize; w.res.len()];
    let paths: Vec<Vec<usize>> = (0..w.luns.len()).map(|li| read_path(w, li)).collect();
    for (l, path) in w.luns.iter().zip(&paths) {
        let mut b = array_read[l.array];
        let mut via = format!("array/{}", w.arrays[l.array].name);
        if w.arrays[l.array].ctrl.is_none() {
            // Host array: its member LUNs side by side, sharing what their paths share (a
            // failed member's LUN reads nothing), and if degraded the host's parity.
            let a = &w.arrays[l.array];
            let live: Vec<usize> = a
                .members
                .iter()
                .enumerate()
                .filter(|(k, _)| a.geom.failed.binary_search(&(*k as u32)).is_err())
                .map(|(_, &m)| m)
                .collect();
            b = members_bound(w, array_read, &live);
            via = "member LUNs".into();
            let rebuild = degraded_read_bound(w, l.array);
            if rebuild < b {
                b = rebuild;
                via = w.host_parity.map_or(via, |r| w.res[r].name.clone());
            }
        }
        for &r in path {
            let rb = bw(w.res[r].ns_per_byte[0]);
            if rb < b {
                b = rb;
                via = w.res[r].name.clone();
            }
        }
        if !l.hidden {
            for &r in path {
                users[r] += 1;
            }
        }
        luns.push((b, via));
    }
    // All visible LUNs at once: each shared resource divides its bound among its users.
    let mut total = 0.0;
    let mut limiter = String::new();
    for (li, l) in w.luns.iter().enumerate() {
        if l.hidden {
            continue;
        }
        let mut b = luns[li].0;
        for &r in &paths[li] {
            let share = bw(w.res[r].ns_per_byte[0]) / users[r].max(1) as f64;
            if share < b {
                b = share;
                limiter = w.res[r].name.clone();
            }
        }
        total += b;
    }
    (luns, (total, limiter))
}

/// The resources a LUN's reads cross, host to drives: its data path, and behind a
/// controller its drives' device bus (once, however many of its drives hang on it).
fn read_path(w: &World, li: usize) -> Vec<usize> {
    let l = &w.luns[li];
    let mut path = l.data_path.clone();
    let a = &w.arrays[l.array];
    if a.ctrl.is_some() {
        for r in a.members.iter().filter_map(|&d| w.disks[d].backend) {
            if !path.contains(&r) {
                path.push(r);
            }
        }
    }
    path
}

/// What a host array's member LUNs `members` read side by side: each member's own bound (its
/// array's, or its members' for a host array over host arrays) where every resource on the
/// members' paths divides its bound among the members crossing it (two LUNs behind one FC
/// port share the port, two arrays on one controller its data path and device bus).
fn members_bound(w: &World, array_read: &[f64], members: &[usize]) -> f64 {
    let mut users = vec![0usize; w.res.len()];
    let paths: Vec<Vec<usize>> = members.iter().map(|&m| read_path(w, m)).collect();
    for path in &paths {
        for &r in path {
            users[r] += 1;
        }
    }
    members
        .iter()
        .zip(&paths)
        .map(|(&m, path)| {
            let a = &w.arrays[w.luns[m].array];
            let mut b = if a.ctrl.is_none() {
                members_bound(w, array_read, &a.members)
            } else {
                array_read[w.luns[m].array]
            };
            for &r in path {
                b = b.min(bw(w.res[r].ns_per_byte[0]) / users[r] as f64);
            }
            b
        })
        .sum()
}

/// "186.8 MB/s read", or "186.8 MB/s read over the whole stroke (inner zone), 344.0 at the
/// outer zone" when the drives' zone moves the bound.
fn read_bound(b: &ComponentBound) -> String {
    if !b.zoned() {
        format!("{:.1} MB/s read", b.bound_bytes_s / 1e6)
    } else {
        format!(
            "{:.1} MB/s read over the whole stroke (inner zone), {:.1} at the outer zone",
            b.bound_bytes_s / 1e6,
            b.outer_bytes_s / 1e6
        )
    }
}

/// "37.0 MB/s write kept up (limited by …; 45.0 MB/s while the write-back cache has room,
/// limited by …)", with "over the whole stroke (inner zone), 783.0 at the outer zone" when
/// the drives' zone moves it.
fn write_bound(b: &ComponentBound) -> String {
    let zone = if b.write_zoned() {
        format!(
            " over the whole stroke (inner zone), {} at the outer zone",
            mb_or_unbounded(b.write_outer_bytes_s)
        )
    } else {
        String::new()
    };
    format!(
        "{} MB/s write{}{zone} ({})",
        mb_or_unbounded(b.write_bytes_s),
        if b.write_peaked() { " sustained" } else { "" },
        b.write_note
    )
}

/// `PATH` or `PATH#LUN` (a path that exists as written is never split).
fn split_lun(system: &Path) -> Result<(PathBuf, Option<String>), SimError> {
    let s = system.to_string_lossy();
    match s.split_once('#') {
        Some((p, l)) if !system.exists() => {
            if p.is_empty() || l.is_empty() {
                return Err(SimError::usage(format!(
                    "'{s}': expected SYSTEM.toml or SYSTEM.toml#LUN"
                )));
            }
            Ok((PathBuf::from(p), Some(l.to_string())))
        }
        _ => Ok((system.to_path_buf(), None)),
    }
}

/// The LUN named `lun` and those it is built on (members of host arrays, recursively).
fn lun_and_members(w: &World, path: &Path, lun: &str) -> Result<Vec<bool>, SimError> {
    let li = w.luns.iter().position(|x| x.name == lun).ok_or_else(|| {
        SimError::usage(format!(
            "no LUN '{lun}' in {} (LUNs: {})",
            path.display(),
            w.luns
                .iter()
                .map(|x| x.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    Ok(with_members(w, [li]))
}

/// The LUNs `luns` and those they are built on (members of host arrays, recursively), marked.
fn with_members(w: &World, luns: impl IntoIterator<Item = usize>) -> Vec<bool> {
    let mut show = vec![false; w.luns.len()];
    let mut todo: Vec<usize> = luns.into_iter().collect();
    while let Some(i) = todo.pop() {
        if !std::mem::replace(&mut show[i], true) {
            let a = &w.arrays[w.luns[i].array];
            if a.ctrl.is_none() {
                todo.extend(&a.members);
            }
        }
    }
    show
}

/// Text for `raidlab explain SYSTEM`: the path from host to drives with each component's
/// bound, then the bound per LUN and for all LUNs. `SYSTEM#LUN` explains that LUN (and the
/// LUNs its host array is built on); a LUN the system does not have is a usage error naming
/// those it has.
pub fn explain(system: &Path) -> Result<String, SimError> {
    let (system, lun) = split_lun(system)?;
    let system = system.as_path();
    let sys = config::load(system)?;
    let w = World::build(&sys)?;
    let show = match &lun {
        Some(l) => lun_and_members(&w, system, l)?,
        None => vec![true; w.luns.len()],
    };
    let b = bounds_of(&w);
    let mut s = String::new();
    use std::fmt::Write;
    let _ = writeln!(s, "system {} ({})", sys.cfg.system.name, system.display());
    if !sys.cfg.system.description.is_empty() {
        let _ = writeln!(s, "  {}", sys.cfg.system.description);
    }
    let _ = writeln!(s, "host: {}", w.res[w.host_cpu].note);
    match &w.page_cache {
        Some(pc) => {
            let c = &sys.cfg.host;
            let _ = writeln!(
                s,
                "  page cache {:.0} MiB, copies at {:.0} MB/s a CPU; read-ahead {} KiB (md \
                 arrays: two stripes at least); requests up to {} KiB; write-back over {}% \
                 dirty, writers wait over {}%",
                pc.cfg.capacity as f64 * pagecache::PAGE as f64 / 1048576.0,
                c.copy_mb_s.unwrap_or(0.0),
                c.read_ahead_kib,
                c.max_request_kib,
                c.dirty_background_ratio,
                c.dirty_ratio
            );
        }
        None => {
            let _ = writeln!(s, "  no page cache: buffered jobs run as direct ones");
        }
    }
    for (l, _) in w.luns.iter().zip(&show).filter(|(_, &v)| v) {
        let a = &w.arrays[l.array];
        let _ = writeln!(
            s,
            "lun {}{}: {:.1} GB",
            l.name,
            if l.hidden { " (hidden)" } else { "" },
            l.capacity as f64 / 1e9
        );
        for &r in &l.data_path {
            let _ = writeln!(s, "  → {:<28} {}", w.res[r].name, w.res[r].note);
        }
        if let Some(c) = a.ctrl {
            let k = &w.ctrls[c];
            // A cache that would write back but for its battery says so: without one the
            // controller writes through (`write_policy` asked for, or taken by default).
            let no_battery = sys.cfg.controller.iter().any(|x| {
                x.name == k.name
                    && !x.battery
                    && x.cache_mib > 0
                    && x.write_policy != Some(config::WritePolicy::WriteThrough)
            });
            let _ = writeln!(
                s,
                "  → {:<28} cache {} MiB {}, read-ahead {} KiB",
                format!("ctrl/{}", k.name),
                k.cache_bytes >> 20,
                if k.write_back {
                    "write-back"
                } else if no_battery {
                    "write-through (no battery: write-back needs battery = true)"
                } else {
                    "write-through"
                },
                k.read_ahead >> 10
            );
            let m = &w.models[w.disks[a.members[0]].model];
            // The drive by its name in the system file: a catalog entry or a [[disk]].
            let drive = sys.disks.get(&a.name).map_or("drive", |d| d.name.as_str());
            if m.ssd.is_some() {
                let [direct, _, slc] = m.write_rates();
                let _ = writeln!(
                    s,
                    "  → {:<28} {}, {} × {} (flash), chunk {} KiB; drive reads {:.1} MB/s, \
                     writes {:.1} MB/s{}",
                    format!("array/{}", a.name),
                    a.geom.level,
                    a.members.len(),
                    drive,
                    a.geom.chunk >> 10,
                    m.outer_rate() / 1e6,
                    direct / 1e6,
                    if slc > direct * (1.0 + 1e-9) {
                        format!(" ({:.1} while its SLC cache has room)", slc / 1e6)
                    } else {
                        String::new()
                    }
                );
                if let (Some(gc), Some(random)) = (
                    m.ssd.as_ref().and_then(|f| f.gc()),
                    m.ssd.as_ref().and_then(|f| f.steady_random_write_bound()),
                ) {
                    let _ = writeln!(
                        s,
                        "  → {:<28} steady state: spare {:.1}%, random overwrites of the whole \
                         drive amplified {:.2}× by garbage collection (of part of it, less); \
                         drive random writes {:.1} MB/s ({:.0} K IOPS of 4 KiB)",
                        "",
                        gc.spare * 100.0,
                        gc.amplification,
                        random / 1e6,
                        random / 4096.0 / 1e3
                    );
                }
            } else {
                let _ = writeln!(
                    s,
                    "  → {:<28} {}, {} × {}, chunk {} KiB; drive media {:.1}–{:.1} MB/s{}",
                    format!("array/{}", a.name),
                    a.geom.level,
                    a.members.len(),
                    drive,
                    a.geom.chunk >> 10,
                    m.inner_rate() / 1e6,
                    m.outer_rate() / 1e6,
                    stream_note(
                        a.geom.data_disks() as f64,
                        a.members.len() as f64,
                        m.inner_rate(),
                        m.outer_rate()
                    )
                );
                let seek = m.seek_summary();
                if !seek.is_empty() {
                    let _ = writeln!(s, "  {:<30} {seek}", "");
                    let cache = if m.write_cache {
                        format!(
                            "drive write cache on: holds {} KiB of writes, written out in the drive's own order",
                            m.write_cache_bytes >> 10
                        )
                    } else {
                        "drive write cache off: each write waits for the media".to_string()
                    };
                    let _ = writeln!(s, "  {:<30} {cache}", "");
                    if m.segments() > 0 {
                        let _ = writeln!(
                            s,
                            "  {:<30} drive read segments: {} of {} KiB, each keeping a run of \
                             data read; a read held whole is served from the buffer",
                            "",
                            m.segments(),
                            m.segment_bytes() >> 10
                        );
                    }
                    let depth = a.members.first().map_or(1, |&d| w.disks[d].queue_depth);
                    let queue = if depth > 1 {
                        format!(
                            "drive command queue {depth}: shortest positioning time first{}",
                            if m.age_limit_ns < u64::MAX {
                                format!(
                                    ", but a command that has waited {} ms goes first",
                                    m.age_limit_ns / 1_000_000
                                )
                            } else {
                                String::new()
                            }
                        )
                    } else {
                        "drive command queue 1: one command at a time, in arrival order \
                         (disk_queue_depth queues more)"
                            .to_string()
                    };
                    let _ = writeln!(s, "  {:<30} {queue}", "");
                }
            }
        } else {
            let names: Vec<&str> = a.members.iter().map(|&m| w.luns[m].name.as_str()).collect();
            let (dd, n) = (a.geom.data_disks(), a.members.len());
            let _ = writeln!(
                s,
                "  → host array {} {} chunk {} KiB over {}{}",
                a.name,
                a.geom.level,
                a.geom.chunk >> 10,
                names.join(", "),
                if (dd as usize) < n {
                    format!("; one sequential stream about {dd} of the {n} members' worth")
                } else {
                    String::new()
                }
            );
            if let Some(sc) = &a.stripe_cache {
                let heads = sc.rows().1;
                let _ = writeln!(
                    s,
                    "  {:<30} stripe cache {heads} stripe heads ({} KiB of each member): partial \
                     stripes wait for the rest of their data until an unplug ({} ms, or a writer \
                     waiting for room)",
                    "",
                    (heads * stripecache::ROW) >> 10,
                    stripecache::UNPLUG_NS / 1_000_000
                );
            }
        }
        if !a.geom.failed.is_empty() {
            let _ = writeln!(
                s,
                "  {:<30} degraded: member{} {} failed — no I/O reaches {}; reads of {} data \
                 are rebuilt from the others (parity computed), writes go to the survivors",
                "",
                if a.geom.failed.len() > 1 { "s" } else { "" },
                a.geom
                    .failed
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if a.geom.failed.len() > 1 {
                    "them"
                } else {
                    "it"
                },
                if a.geom.failed.len() > 1 {
                    "their"
                } else {
                    "its"
                },
            );
        }
        if let Some(rb) = &a.rebuild {
            let _ = writeln!(s, "  {:<30} {}", "", rebuild_line(&w, l.array, rb));
        }
        if let Some(lb) = b.iter().find(|x| x.name == format!("lun/{}", l.name)) {
            let _ = writeln!(s, "  bound: {} ({})", read_bound(lb), lb.note);
            let _ = writeln!(s, "         {}", write_bound(lb));
        }
    }
    if let Some(all) = b.iter().find(|x| x.name == "all" && lun.is_none()) {
        let _ = writeln!(s, "all LUNs at once: {} ({})", read_bound(all), all.note);
        let _ = writeln!(s, "                  {}", write_bound(all));
    }
    Ok(s)
}

/// The simulator's own speed benchmark: the caller supplies the clock (wall time is never
/// read here) and gets how many member I/Os were simulated and how long it took.
pub mod bench {
    use super::*;

    /// One benchmark outcome.
    #[derive(Clone, Debug)]
    pub struct BenchResult {
        pub name: String,
        pub points: u32,
        pub member_ios: u64,
        /// Host commands the jobs issued, and events the event loop handled.
        pub host_ios: u64,
        pub events: u64,
        pub seconds: f64,
    }

    impl BenchResult {
        pub fn member_ios_per_s(&self) -> f64 {
            self.member_ios as f64 / self.seconds.max(1e-9)
        }
        pub fn events_per_s(&self) -> f64 {
            self.events as f64 / self.seconds.max(1e-9)
        }
    }

    /// Block sizes of seed 000's sweep.
    pub const LLNL_BS: [u64; 11] = [
        512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 524288, 1048576, 2097152,
    ];

    /// Every seed-000 configuration (fig11 … fig25 under `systems_dir/llnl2000`) × 11 block
    /// sizes × read/write, 8 GB per stream as in the seed. `clock` returns seconds.
    pub fn llnl2000(systems_dir: &Path, clock: &dyn Fn() -> f64) -> Result<BenchResult, SimError> {
        let t0 = clock();
        let (mut ios, mut points, mut work) = (0, 0, Work::default());
        for fig in 11..=25 {
            let target = format!(
                "sim:{}",
                systems_dir
                    .join(format!("llnl2000/fig{fig}.toml"))
                    .display()
            );
            for bs in LLNL_BS {
                for rw in ["read", "write"] {
                    let s = sized(&target, rw, bs, 8 << 30, 1);
                    let (r, w) = run_counted(&[s], &RunConfig::default())?;
                    work.events += w.events;
                    work.host_ios += w.host_ios;
                    ios += r
                        .jobs
                        .first()
                        .and_then(|j| j.sim.as_ref())
                        .map_or(0, |x| x.member_ios);
                    points += 1;
                }
            }
        }
        Ok(BenchResult {
            name: "llnl2000 all figures".into(),
            points,
            member_ios: ios,
            host_ios: work.host_ios,
            events: work.events,
            seconds: clock() - t0,
        })
    }

    /// One fixed-time case: `rw` of `bs` bytes with `depth` in flight for `secs` s of
    /// virtual time against `system` (a path under the systems folder), direct or through
    /// the host's page cache (when it has one).
    #[derive(Clone, Copy, Debug)]
    pub struct Case {
        pub system: &'static str,
        pub rw: &'static str,
        pub bs: u64,
        pub depth: u32,
        pub secs: u64,
        pub direct: bool,
    }

    /// A direct 8 KiB case at depth 128 for a virtual minute: seed 001's (xdd `-dio`).
    const fn xdd(system: &'static str, rw: &'static str) -> Case {
        Case {
            system,
            rw,
            bs: 8192,
            depth: 128,
            secs: 60,
            direct: true,
        }
    }

    /// Small random I/O against seed 001's RAID 5 with 128 in flight: drive-bound, so nearly
    /// all simulator work is member I/O (queueing, SPTF, planning, destaging).
    pub fn random_raid5(
        systems_dir: &Path,
        clock: &dyn Fn() -> f64,
    ) -> Result<BenchResult, SimError> {
        run_case(systems_dir, &xdd("xdd2008/raid5.toml", "randrw"), clock)
    }

    /// Seed 001's four arrays (RAID 0, 10, 5, 6) × random reads and random writes, each as
    /// [`random_raid5`]: how the cost of a member I/O varies with the level's path (a mirror
    /// read's choice of copy, a parity write's read-modify-write and destage).
    pub fn random_levels(
        systems_dir: &Path,
        clock: &dyn Fn() -> f64,
    ) -> Result<Vec<BenchResult>, SimError> {
        let mut out = Vec::new();
        for system in [
            "xdd2008/raid0.toml",
            "xdd2008/raid10.toml",
            "xdd2008/raid5.toml",
            "xdd2008/raid6.toml",
        ] {
            for rw in ["randread", "randwrite"] {
                out.push(run_case(systems_dir, &xdd(system, rw), clock)?);
            }
        }
        Ok(out)
    }

    /// Paths `bench random` never takes, 8 KiB at depth 32: seed 002's 16-node pool (64
    /// hardware RAID 5 arrays under 16 host RAID 0s: the plan cache's many read shapes),
    /// random reads for 20 virtual seconds; seed 003's 6-drive md RAID 6 (64 KiB chunks,
    /// drive write caches on: the host's stripe cache, the drives' held writes), random
    /// writes direct and through the host's page cache (its write-back, `, buffered`); and
    /// seed 004's 8-drive RAID 5 behind a controller, random reads and writes mixed, a
    /// virtual minute each. Then seed 003's own workload, a dd of 1 MiB blocks through the
    /// page cache (read-ahead, write-back by runs) of its 4-drive md RAID 5, writing and
    /// reading for 30 virtual seconds each.
    pub const PATHS: [Case; 6] = [
        random_qd32("bokhari2006/pool16.toml", "randread", 20, true),
        random_qd32("linuxraid2010/raid6-6d-c64.toml", "randwrite", 60, true),
        random_qd32("linuxraid2010/raid6-6d-c64.toml", "randwrite", 60, false),
        random_qd32("iometer2008/raid5-8d.toml", "randrw", 60, true),
        md5_dd("write"),
        md5_dd("read"),
    ];

    /// An 8 KiB case at depth 32 ([`PATHS`]).
    const fn random_qd32(system: &'static str, rw: &'static str, secs: u64, direct: bool) -> Case {
        Case {
            system,
            rw,
            bs: 8192,
            depth: 32,
            secs,
            direct,
        }
    }

    /// Seed 003's dd of 1 MiB blocks, one at a time through the page cache of its 4-drive md
    /// RAID 5, for 30 virtual seconds ([`PATHS`]).
    const fn md5_dd(rw: &'static str) -> Case {
        Case {
            system: "linuxraid2010/raid5-4d-c64.toml",
            rw,
            bs: 1 << 20,
            depth: 1,
            secs: 30,
            direct: false,
        }
    }

    /// [`PATHS`], each run.
    pub fn random_paths(
        systems_dir: &Path,
        clock: &dyn Fn() -> f64,
    ) -> Result<Vec<BenchResult>, SimError> {
        PATHS
            .iter()
            .map(|c| run_case(systems_dir, c, clock))
            .collect()
    }

    /// Systems folders each case runs from, for a caller to check before it runs any.
    pub const CASE_FOLDERS: [(&str, &[&str]); 4] = [
        ("random", &["xdd2008"]),
        ("llnl", &["llnl2000"]),
        ("levels", &["xdd2008"]),
        ("paths", &["bokhari2006", "linuxraid2010", "iometer2008"]),
    ];

    /// The case named `name` ([`CASE_FOLDERS`] lists them), its results in order; None for
    /// another name.
    pub fn run_named(
        name: &str,
        systems_dir: &Path,
        clock: &dyn Fn() -> f64,
    ) -> Option<Result<Vec<BenchResult>, SimError>> {
        Some(match name {
            "random" => random_raid5(systems_dir, clock).map(|r| vec![r]),
            "llnl" => llnl2000(systems_dir, clock).map(|r| vec![r]),
            "levels" => random_levels(systems_dir, clock),
            "paths" => random_paths(systems_dir, clock),
            _ => return None,
        })
    }

    /// Runs `case` with convergence off, so it runs its whole time (random offsets drawn
    /// anew each request, as xdd does). Its name says the system, block size, direction,
    /// depth and time, and `, buffered` when it goes through the page cache.
    pub fn run_case(
        systems_dir: &Path,
        case: &Case,
        clock: &dyn Fn() -> f64,
    ) -> Result<BenchResult, SimError> {
        let Case {
            system,
            rw,
            bs,
            depth,
            secs,
            direct,
        } = *case;
        let target = format!("sim:{}", systems_dir.join(system).display());
        let mut s = sized(&target, rw, bs, 4 << 30, depth);
        s.direct = direct;
        // As xdd draws its seeks (seed 001's cases), and as this benchmark always has.
        s.norandommap = true;
        s.time_based = true;
        s.runtime_ns = Some(secs * 1_000_000_000);
        let cfg = RunConfig {
            convergence: engine::Convergence {
                enabled: false,
                ..Default::default()
            },
        };
        let t0 = clock();
        let (r, work) = run_counted(&[s], &cfg)?;
        let ios = r
            .jobs
            .first()
            .and_then(|j| j.sim.as_ref())
            .map_or(0, |x| x.member_ios);
        let size = if bs >= 1 << 20 {
            format!("{}m", bs >> 20)
        } else {
            format!("{}k", bs >> 10)
        };
        Ok(BenchResult {
            name: format!(
                "{} {size} {rw} qd{depth}, {secs} s virtual{}",
                system.trim_end_matches(".toml").replace('/', " "),
                if direct { "" } else { ", buffered" }
            ),
            points: 1,
            member_ios: ios,
            host_ios: work.host_ios,
            events: work.events,
            seconds: clock() - t0,
        })
    }

    fn sized(target: &str, rw: &str, bs: u64, size: u64, depth: u32) -> JobSpec {
        let mut s = JobSpec {
            filenames: vec![target.to_string()],
            ..Default::default()
        };
        raidlab_workload::apply_option(&mut s, "rw", Some(rw)).expect("valid rw");
        s.bs = raidlab_workload::BlockSizes::fixed(bs);
        s.size = Some(size);
        s.iodepth = depth;
        s
    }
}
