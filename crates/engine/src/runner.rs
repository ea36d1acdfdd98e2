//! Orchestration of a run: resolve and prepare targets, plan every job instance (checking
//! regions and alignment before any I/O), then run stonewall groups one after another with
//! one thread per instance.

use crate::clock::Clock;
use crate::exec::{Block, Executor, Libaio, Mmap, Null, Psync, RingOptions, SyncCall, Uring};
use crate::job::{drive, AlignedBuf, JobSetup, VerifyShared};
use crate::progress::{self, Goal};
use crate::target::{open_for_job, prepare_path, PathInfo};
use crate::{BlockTarget, EngineError, RunOptions, Target};
use raidlab_result::{JobResult, RunResult};
use raidlab_workload::{ExitWhat, IoEngine, JobInstance, JobSpec, JobStream};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

enum Resolved {
    Path(PathBuf),
    Block(String, Arc<dyn BlockTarget>),
}

/// How one instance will do its I/O: over its files (or in-process targets), in the order
/// its requests count them.
enum ExecPlan {
    Null,
    Psync(Vec<File>, SyncCall),
    /// The files, and what to register with the ring.
    Uring(Vec<File>, RingOptions),
    Libaio(Vec<File>),
    /// The files, whether the job writes, whether it asked for direct I/O, and its advice.
    Mmap(Vec<File>, bool, bool, raidlab_workload::ReadAdvice),
    Block(Vec<Arc<dyn BlockTarget>>),
}

impl ExecPlan {
    /// The open files of a plan that has them.
    fn files(&self) -> &[File] {
        match self {
            ExecPlan::Psync(f, _)
            | ExecPlan::Uring(f, _)
            | ExecPlan::Libaio(f)
            | ExecPlan::Mmap(f, ..) => f,
            ExecPlan::Null | ExecPlan::Block(_) => &[],
        }
    }
}

struct InstancePlan {
    spec_index: usize,
    group: usize,
    setup: JobSetup,
    exec: ExecPlan,
    buf_align: usize,
    max_bs: u64,
    goal_bytes: Option<u64>,
    /// The CPUs to bind the job's thread to (`cpus_allowed`, `numa_cpu_nodes`; one of them
    /// under `cpus_allowed_policy=split`); empty for no binding.
    cpus: Vec<u32>,
    /// `numa_mem_policy`, set on the job's thread before it takes its buffers.
    mem_policy: Option<raidlab_workload::MemPolicy>,
    /// Bytes of memory to pin while the job runs (`lockmem`).
    lockmem: u64,
    /// Its I/O priority and nice value (`prio`, `prioclass`, `nice`).
    priority: raidlab_workload::Priority,
}

fn writes(spec: &JobSpec) -> bool {
    spec.writes()
}

/// The time-series logs instance `inst` of `spec` writes, if it writes any; numbered from 1
/// in the order the run's instances were expanded, as fio numbers its jobs.
fn job_log(spec: &JobSpec, inst: &JobInstance) -> Option<raidlab_result::JobLog> {
    if !spec.logs.any() {
        return None;
    }
    let [bw, iops, lat, hist] = spec.logs.prefixes(&spec.name);
    Some(
        raidlab_result::JobLog::new(
            inst.global_index + 1,
            raidlab_result::LogNames {
                bw,
                iops,
                lat,
                hist,
            },
            spec.logs.avg_msec,
            spec.logs.offset,
        )
        .with_hist(spec.logs.hist_msec, spec.logs.hist_coarseness)
        .with_max(spec.logs.max_value)
        .shared(spec.logs.shared),
    )
}

/// What a job's results leave out (`disable_clat`, `disable_lat`, `disable_bw_measurement`).
fn unmeasured(spec: &JobSpec) -> raidlab_result::schema::Unmeasured {
    raidlab_result::schema::Unmeasured {
        clat: spec.disable_clat,
        lat: spec.disable_lat,
        bw: spec.disable_bw,
    }
}

/// [`crate::run`] with an explicit clock.
pub fn run_with_clock(
    specs: &[JobSpec],
    resolve: &mut dyn FnMut(&str) -> Result<Target, EngineError>,
    opts: &RunOptions,
    clock: Arc<dyn Clock>,
) -> Result<RunResult, EngineError> {
    // The clock's reading as the run starts, the instant `opts.wall_ns` was read at (near
    // enough: the caller reads it just before).
    let run_start = clock.now_ns();
    for s in specs {
        s.validate().map_err(|e| EngineError::usage(e.message))?;
        let unnamed = s.filenames.is_empty() && s.read_iolog.is_none() && s.opendir.is_none();
        if !s.directory.is_empty() || unnamed {
            // (A caller's slip, not the user's: `raidlab run` resolves it.)
            return Err(EngineError::usage(format!(
                "job '{}': directory (or the working folder, for a job with no target) is resolved into file names before a run (raidlab_workload::apply_directories)",
                s.name
            )));
        }
        // (The CPUs, before any target is created or laid out.)
        check_cpus(s)?;
        if let Some(why) = s.verify_sizes_conflict() {
            return Err(EngineError::usage(format!("job '{}': {why}", s.name)));
        }
    }

    raidlab_workload::check_reported(specs).map_err(|e| EngineError::usage(e.message))?;
    let waits = raidlab_workload::waitees(specs).map_err(|e| EngineError::usage(e.message))?;
    let appended = appended(specs)?;
    let specs: &[JobSpec] = appended.as_deref().unwrap_or(specs);
    check_group_buffers(specs)?;

    // Resolve each filename once.
    let mut resolved: HashMap<String, Resolved> = HashMap::new();
    for s in specs {
        for f in &s.filenames {
            if !resolved.contains_key(f) {
                let r = match resolve(f)? {
                    Target::Path(p) => Resolved::Path(p),
                    Target::Block { label, dev } => Resolved::Block(label, dev),
                };
                resolved.insert(f.clone(), r);
            }
        }
    }

    check_group_threads(specs, &resolved)?;

    // Prepare path targets that real I/O will touch: create, lay out, check signatures.
    // (Processes running together take their turns here: see `Coordinator`.)
    if let Some(c) = &opts.coordinator {
        c.before_setup().map_err(EngineError::failed)?;
    }
    let mut infos: HashMap<String, PathInfo> = HashMap::new();
    // Files this run creates (for `unlink`: raidlab's to remove).
    let mut created: HashSet<String> = Default::default();
    for (name, r) in &resolved {
        let Resolved::Path(path) = r else { continue };
        let users: Vec<&JobSpec> = specs
            .iter()
            .filter(|s| s.ioengine != IoEngine::Null && s.filenames.contains(name))
            .collect();
        if users.is_empty() {
            continue;
        }
        // What is there now, for the checks below before it is laid out (another error than
        // its absence is left to `prepare_path` to report).
        let found = std::fs::metadata(path);
        let missing = matches!(&found, Err(e) if e.kind() == std::io::ErrorKind::NotFound);
        let meta = found.ok();
        // fio's fill_device on a file: without a size, the job's region reaches as far as the
        // filesystem's free space lets it (a block device has its size already).
        let is_block = meta
            .as_ref()
            .is_some_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
        let fill_end = users
            .iter()
            .any(|s| s.fill_device && !is_block)
            .then(|| crate::target::fill_end(path))
            .flatten();
        let need_end = users
            .iter()
            .filter_map(|s| {
                // (A replayed trace needs its furthest request's end.)
                if s.trace.is_some() {
                    return s.replay_extent(name);
                }
                // (A job over several files takes its share of `size` of each, or `filesize`.)
                let s = &s.per_file(s.run_of(name));
                let Some(size) = s.size else {
                    return fill_end.filter(|_| s.fill_device);
                };
                // (Saturating: offsets past 2^64 are refused, in one line, not a panic.)
                let last = s.offset.saturating_add(
                    s.offset_increment
                        .saturating_mul(s.first_job as u64 + s.numjobs as u64 - 1),
                );
                Some(last.saturating_add(size))
            })
            .max();
        // fio's `fallocate` for a file only writing jobs use (the first that sets it); a
        // file any job reads is laid out, so reads reach data. fio's `overwrite` (the first
        // that sets it): 1 lays the file out whatever fallocate says, 0 only allocates it as
        // fio does by default (fallocate, native unless given).
        let only_writes = users.iter().all(|s| s.read_percent() == 0);
        let fallocate = users.iter().find_map(|s| s.fallocate);
        let prealloc = match users.iter().find_map(|s| s.overwrite) {
            Some(true) => None,
            Some(false) => Some(fallocate.unwrap_or(raidlab_workload::Fallocate::Native)),
            None => fallocate,
        }
        .filter(|_| only_writes);
        // A file only writers use, one of them filling the filesystem: not laid out (the
        // writes extend it until there is no room), nor checked for room.
        let fill = only_writes && fill_end.is_some();
        let sizeless_filler = users.iter().find(|s| s.fill_device && s.size.is_none());
        if let (Some(s), Some(end)) = (sizeless_filler, fill_end) {
            if end <= s.offset {
                return Err(EngineError::usage(format!(
                    "job '{}' has fill_device, and {} with its filesystem's free space ends at byte {end}, at or before the job's offset {}: there is no room to fill (valid: a filesystem with free space, or size=)",
                    s.name,
                    path.display(),
                    s.offset
                )));
            }
        }
        let prealloc = if fill {
            Some(raidlab_workload::Fallocate::None)
        } else {
            prealloc
        };
        let writers = || users.iter().filter(|s| writes(s));
        if writers().next().is_some() {
            crate::target::refuse_in_use(path, writers().all(|s| s.allow_mounted_write))?;
        }
        // A file missing, or ending before the jobs' regions do: laying it out writes it.
        let short = crate::target::short_of(meta.as_ref(), missing, need_end);
        if let (Some(s), Some(len)) = (users.iter().find(|s| s.verify_only), short) {
            return Err(crate::target::nothing_to_verify(
                path, missing, len, need_end, &s.name,
            ));
        }
        if let (true, Some(l)) = (opts.readonly, short) {
            return Err(EngineError::usage(format!(
                "--readonly: {} holds {l} bytes and job '{}' reads to byte {}, so it would be laid out, which writes it (valid: an existing file as large as the jobs' regions, or no --readonly)",
                path.display(),
                users[0].name,
                need_end.unwrap_or(0)
            )));
        }
        if let Some(s) = users.iter().find(|s| !s.allow_file_create) {
            if missing {
                return Err(EngineError::usage(format!(
                    "job '{}' has allow_file_create=0, and {} does not exist (valid: an existing file, or allow_file_create=1 to create it)",
                    s.name,
                    path.display()
                )));
            }
        }
        let info = prepare_path(
            path,
            need_end,
            users.iter().any(|s| writes(s)),
            opts.force,
            &opts.stop,
            (prealloc, fill),
            &crate::target::Layout::of_job(users[0], name),
        )?;
        if let Some(s) = users.iter().find(|s| s.trims()) {
            crate::target::refuse_no_discard(path, &s.name)?;
        }
        if info.created {
            created.insert(name.clone());
        }
        infos.insert(name.clone(), info);
    }
    if let Some(c) = &opts.coordinator {
        c.after_setup().map_err(EngineError::failed)?;
    }

    // Plan every instance.
    // Stonewall groups run one after another; `new_group` starts only a reporting group.
    let job_groups = raidlab_workload::job_groups(specs);
    let group_of_spec: Vec<usize> = job_groups.iter().map(|g| g.0).collect();
    let schedulers = plan_schedulers(specs, &resolved, &group_of_spec)?;
    // Switched back when the run ends, whichever way.
    let mut switched = crate::iosched::Switched::default();
    let groups = group_of_spec.last().map_or(1, |g| g + 1);
    let generation = Arc::new(AtomicU64::new(0));
    let mut verify_by_target: HashMap<String, VerifyShared> = HashMap::new();
    let stop = Arc::clone(&opts.stop);
    let mut plans: Vec<InstancePlan> = Vec::new();
    let instances = JobInstance::expand(specs);
    // The targets each plan's instance runs on, for the read-back check below.
    let mut plan_files: Vec<Vec<&str>> = Vec::new();
    // Each job's CPUs (`job_cpus`, read from sysfs once a job, not once an instance).
    let mut cpus_of_job: HashMap<usize, Vec<u32>> = HashMap::new();
    for inst in instances {
        let spec = &specs[inst.spec_index];
        let names: Vec<&String> = inst.files.iter().map(|&f| &spec.filenames[f]).collect();
        // What each of its files runs by (a share of `size`, or `filesize`).
        let per = spec.per_file(names.len());
        let mut sizes: Vec<u64> = Vec::with_capacity(names.len());
        let mut labels: Vec<String> = Vec::with_capacity(names.len());
        // Its files' paths and in-process targets, and the largest alignment among them.
        let mut paths: Vec<&PathBuf> = Vec::new();
        let mut devs: Vec<Arc<dyn BlockTarget>> = Vec::new();
        let mut buf_align = 1u64;
        for (k, &fname) in names.iter().enumerate() {
            let r = &resolved[fname];
            match r {
                Resolved::Path(p) => paths.push(p),
                Resolved::Block(_, d) => devs.push(Arc::clone(d)),
            }
            let (size, align, label, what) = match r {
                Resolved::Block(label, dev) => (
                    dev.size(),
                    dev.alignment().max(1),
                    label.clone(),
                    format!("the alignment of {label}"),
                ),
                Resolved::Path(p) => match infos.get(fname) {
                    Some(info) => {
                        let a = if spec.direct { info.logical_block } else { 1 };
                        (
                            info.size,
                            a,
                            fname.clone(),
                            format!("the logical block size of {}", p.display()),
                        )
                    }
                    None => {
                        // The null engine never touches its target: size from the job, or
                        // the target's. (A share of the target is of the target's own size.)
                        let size = match per.size.filter(|_| {
                            per.offset_percent.is_none() && per.offset_increment_percent.is_none()
                        }) {
                            Some(sz) => {
                                per.offset + per.offset_increment * inst.job_index as u64 + sz
                            }
                            None => {
                                prepare_path(
                                    p,
                                    None,
                                    false,
                                    true,
                                    &opts.stop,
                                    (None, false),
                                    &crate::target::Layout::zeros(),
                                )?
                                .size
                            }
                        };
                        (size, 1, fname.clone(), String::new())
                    }
                },
            };
            match &spec.trace {
                Some(t) => {
                    if let Some(at) = t.misaligned(inst.files[k], align) {
                        let subject = format!("{} {at}", t.origin);
                        return Err(misaligned(spec, &subject, align, &what));
                    }
                }
                None if align > 1 => check_alignment(&per, align, &what)?,
                None => {}
            }
            check_resources(spec, r)?;
            buf_align = buf_align.max(align);
            sizes.push(size);
            labels.push(label);
        }
        let stream =
            JobStream::new(spec, &inst, &sizes).map_err(|e| EngineError::usage(e.message))?;
        let verify = spec.verify.then(|| {
            names
                .iter()
                .map(|&fname| {
                    verify_by_target
                        .entry(fname.clone())
                        .or_insert_with(|| VerifyShared {
                            last_gen: Default::default(),
                            generation: Arc::clone(&generation),
                        })
                        .clone()
                })
                .collect::<Vec<_>>()
        });
        if spec.ioengine != IoEngine::Null && !paths.is_empty() && !devs.is_empty() {
            return Err(EngineError::usage(format!(
                "job '{}': its files mix raidlab arrays and files or devices (valid: one kind in one job; job_per_file=1 runs each file as a job of its own)",
                spec.name
            )));
        }
        let open_all = || -> Result<Vec<File>, EngineError> {
            paths
                .iter()
                .map(|p| {
                    let f = open_for_job(p, writes(spec), spec.direct, spec.sync)?;
                    crate::target::advise(&f, p, spec.read_advice())?;
                    Ok(f)
                })
                .collect()
        };
        if spec.pre_read && !devs.is_empty() && spec.ioengine != IoEngine::Null {
            return Err(EngineError::usage(format!(
                "job '{}': pre_read reads into the page cache, and a raidlab array has none (valid: pre_read=0, or a file or block device)",
                spec.name
            )));
        }
        let (exec, engine, depth) = match spec.ioengine {
            IoEngine::Null => (ExecPlan::Null, "null", spec.iodepth),
            _ if !devs.is_empty() => (ExecPlan::Block(devs), "block", spec.iodepth),
            e @ (IoEngine::Psync
            | IoEngine::Sync
            | IoEngine::Vsync
            | IoEngine::Pvsync
            | IoEngine::Pvsync2) => (
                ExecPlan::Psync(
                    open_all()?,
                    match e {
                        IoEngine::Sync => SyncCall::Read,
                        IoEngine::Vsync => SyncCall::Readv,
                        IoEngine::Pvsync => SyncCall::Preadv,
                        IoEngine::Pvsync2 => SyncCall::Preadv2,
                        _ => SyncCall::Pread,
                    },
                ),
                e.name(),
                1,
            ),
            IoEngine::IoUring => (
                ExecPlan::Uring(
                    open_all()?,
                    RingOptions {
                        files: spec.registerfiles,
                        buffers: spec.fixedbufs,
                        sqpoll: spec.sqthread_poll,
                        sqpoll_cpu: spec.sqthread_poll_cpu,
                        iopoll: spec.hipri,
                    },
                ),
                "io_uring",
                spec.iodepth,
            ),
            IoEngine::Libaio => (ExecPlan::Libaio(open_all()?), "libaio", spec.iodepth),
            IoEngine::Mmap => (
                ExecPlan::Mmap(open_all()?, writes(spec), spec.direct, spec.read_advice()),
                "mmap",
                1,
            ),
        };
        let goal_bytes = if spec.time_based {
            None
        } else {
            stream.total_bytes().or_else(|| {
                // (The stream's: io_size or size may be a share of the target.)
                let per_pass = stream.pass_bytes();
                Some(per_pass / spec.bs.min().max(1) * spec.bs.min() * spec.loops as u64)
            })
        };
        let cpus = match cpus_of_job.entry(inst.spec_index) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(job_cpus(spec)?),
        };
        let cpus = instance_cpus(spec, cpus, inst.global_index);
        let iolog = spec
            .write_iolog
            .as_ref()
            .map(|p| raidlab_result::IoLog::new(p.clone(), labels.clone()));
        plans.push(InstancePlan {
            spec_index: inst.spec_index,
            group: group_of_spec[inst.spec_index],
            setup: JobSetup {
                name: spec.name.clone(),
                target: labels.join(":"),
                files: labels,
                engine,
                group_id: job_groups[inst.spec_index].1,
                stream,
                depth,
                submit_batch: spec.submit_batch(),
                refill_at: spec.refill_at(),
                reap: spec.reap_bounds(),
                ramp_ns: spec.ramp_time_ns,
                runtime_ns: spec.runtime_ns,
                verify,
                verify_form: crate::verify::Form {
                    header: !spec.verify_pattern_only,
                    pattern: spec.verify_pattern.as_deref().map(Into::into),
                    span: spec.verify_span(),
                },
                verify_all: !writes(spec),
                seed: inst.seed(spec),
                clock: Arc::clone(&clock),
                stop: Arc::clone(&stop),
                // (Shared by the jobs of its reporting and stonewall groups in `run_group`.)
                halted: Default::default(),
                flow: None,
                progress: Arc::new(AtomicU64::new(0)),
                progress_ios: Arc::new(AtomicU64::new(0)),
                // (Set below, once the group's plans are known.)
                steady: None,
                max_latency_ns: spec.max_latency_ns,
                latency: spec.latency,
                end_fsync: spec.flushes_at_end(),
                pacer: raidlab_workload::Pacer::new(spec, inst.seed(spec)),
                start_delay_ns: raidlab_workload::pace::start_delay_ns(&spec.pace, inst.seed(spec)),
                // fio's do_verify: a job that only writes, with verify, and ends by its size,
                // reads back what it wrote (unless another job of its group writes its
                // blocks: see below).
                read_back: raidlab_workload::readback::at_end(spec),
                backlog: raidlab_workload::readback::backlog(spec),
                fill: spec.fill_device,
                log_epoch: spec.logs.unix_epoch.then_some((run_start, opts.wall_ns)),
                verify_fatal: spec.verify_fatal,
                verify_dump: spec.verify_dump,
                on_error: spec.on_error.clone(),
                log: job_log(spec, &inst),
                iolog,
                sampler: raidlab_result::Sampler::for_job(
                    spec.sample_every(),
                    spec.samples_logged(),
                    spec.runtime_ns,
                ),
                content: raidlab_workload::ContentGen::new(&spec.buffers, inst.seed(spec))
                    .with_dedupe_set(spec.dedupe_set_blocks()),
                verify_async: spec.verify_async,
                // (Handed out in `run_group`, to the jobs that start with their group.)
                start_gate: None,
            },
            exec,
            buf_align: buf_align.max(4096) as usize,
            max_bs: spec.bs.max(),
            goal_bytes,
            cpus,
            mem_policy: spec.numa_mem_policy.clone(),
            lockmem: spec.lockmem,
            priority: spec.priority,
        });
        plan_files.push(names.iter().map(|n| n.as_str()).collect());
    }
    share_steady_state(&mut plans, specs);
    // A read-back (at the end, or verify_backlog's as it goes) while another job of the
    // group writes the same blocks could catch its writes half done: such a job does not
    // read back, and says so (`raidlab_workload::readback::clashes`, which the simulator
    // follows too).
    let skipped: Vec<(usize, usize, String)> = {
        use raidlab_workload::readback::{clashes, ReadBackJob};
        let jobs: Vec<ReadBackJob<&str>> = plans
            .iter()
            .zip(&plan_files)
            .map(|(p, files)| ReadBackJob {
                group: p.group,
                writes: writes(&specs[p.spec_index]),
                reads_back: p.setup.read_back || p.setup.backlog.0 > 0,
                regions: files
                    .iter()
                    .enumerate()
                    .map(|(k, f)| {
                        let (start, len) = p.setup.stream.region(k);
                        (*f, start, len)
                    })
                    .collect(),
            })
            .collect();
        clashes(&jobs)
            .into_iter()
            .map(|(i, k, f)| (i, k, plan_files[i][f].to_string()))
            .collect()
    };
    let mut noted: HashSet<usize> = HashSet::new();
    for (i, k, file) in skipped {
        plans[i].setup.read_back = false;
        plans[i].setup.backlog = (0, 0);
        if noted.insert(plans[i].spec_index) {
            let (si, sk) = (plans[i].spec_index, plans[k].spec_index);
            let by = (si != sk).then_some(specs[sk].name.as_str());
            crate::ewriteln!(
                "raidlab: note: {}",
                raidlab_workload::readback::clash_note(&specs[si].name, by, &file)
            );
        }
    }

    // The disks under the files of the jobs that ask (fio's `disk_util`, on by default),
    // read as the first group starts and again after the last.
    let disks = {
        let mut paths: Vec<PathBuf> = Vec::new();
        for s in specs
            .iter()
            .filter(|s| s.disk_util && s.ioengine != IoEngine::Null)
        {
            for name in &s.filenames {
                match &resolved[name] {
                    Resolved::Path(p) => paths.push(p.clone()),
                    Resolved::Block(_, dev) => paths.extend(dev.devices()),
                }
            }
        }
        crate::diskstats::Watch::start(paths.iter().map(PathBuf::as_path), clock.now_ns())
    };

    // Run the groups in order.
    let mut results: Vec<(usize, JobResult)> = Vec::new();
    let mut plans = plans.into_iter().peekable();
    let mut warned: HashSet<String> = HashSet::new();
    // Set when a job's end under `exit_what=all` stops the run.
    let exit_all = AtomicBool::new(false);
    for g in 0..groups {
        if let Some(c) = &opts.coordinator {
            c.before_group(g).map_err(EngineError::failed)?;
        }
        let mut this: Vec<InstancePlan> = Vec::new();
        while plans.peek().is_some_and(|p| p.group == g) {
            this.push(plans.next().unwrap());
        }
        if this.is_empty() {
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            // Stopped before any job ran (after the layout): no result to give, as when the
            // layout itself is interrupted. After a group, the groups done are the result.
            if results.is_empty() {
                return Err(EngineError::failed("interrupted before the jobs started"));
            }
            break;
        }
        if exit_all.load(Ordering::Relaxed) {
            // As fio, the jobs of the groups after an `exit_what=all` end are reported with
            // nothing done.
            results.extend(this.iter().map(|p| (p.spec_index, not_run(&p.setup))));
            continue;
        }
        // Looked at as the group starts: earlier groups may have written what it reads.
        for line in hole_warnings(&this, specs, &mut warned) {
            crate::ewriteln!("raidlab: warning: {line}");
        }
        invalidate_regions(&this, specs);
        pre_read_regions(&this, specs, &stop)?;
        for (file, name) in schedulers.iter().filter(|s| s.0 == g).map(|s| (&s.1, &s.2)) {
            let dev = crate::iosched::device_name(file);
            match switched.switch(file, name) {
                Ok(Some(was)) => crate::ewriteln!(
                    "raidlab: note: {dev} runs the {name} I/O scheduler for the jobs that ask (was {was}; switched back after the run)"
                ),
                Ok(None) => {}
                Err(e) => {
                    return Err(EngineError::failed(format!(
                        "cannot switch {dev} to the {name} I/O scheduler ({}): {e}",
                        file.display()
                    )))
                }
            }
        }
        results.extend(run_group(this, opts, &clock, specs, &exit_all, &waits));
    }

    let disk_util = disks.finish(clock.now_ns());
    if let Some(c) = &opts.coordinator {
        c.after_groups().map_err(EngineError::failed)?;
    }
    unlink_files(specs, &resolved, &created, opts.force);
    // (fio's stats=0: the job ran, and is not reported.)
    let results = results
        .into_iter()
        .filter(|(si, _)| specs[*si].stats)
        .map(|(si, mut r)| {
            r.forget(unmeasured(&specs[si]));
            (si, r)
        });
    let jobs =
        raidlab_result::schema::fold_group_reporting(results, |si| specs[si].group_reporting);
    Ok(RunResult {
        version: format!("raidlab-{}", env!("CARGO_PKG_VERSION")),
        timestamp: opts.timestamp,
        jobs,
        disk_util,
    })
}

/// fio's steady state: a judge for each job or group `steady_judges` names, fed by the group's
/// last job from every member's completion counters.
fn share_steady_state(plans: &mut [InstancePlan], specs: &[JobSpec]) {
    let jobs: Vec<(usize, u32)> = plans
        .iter()
        .map(|p| (p.spec_index, p.setup.group_id))
        .collect();
    for members in raidlab_workload::steady_judges(specs, &jobs) {
        let leader = *members.last().expect("a judge has its jobs");
        let s = &specs[plans[leader].spec_index];
        let judge = Arc::new(std::sync::Mutex::new(crate::job::steady_judge(s)));
        let counters: Arc<[(Arc<AtomicU64>, Arc<AtomicU64>)]> = members
            .iter()
            .map(|&m| {
                (
                    Arc::clone(&plans[m].setup.progress),
                    Arc::clone(&plans[m].setup.progress_ios),
                )
            })
            .collect();
        for &m in &members {
            plans[m].setup.steady = Some(crate::job::SteadyShare {
                judge: Arc::clone(&judge),
                members: Arc::clone(&counters),
                leader: m == leader,
                group: s.group_reporting,
            });
        }
    }
}

/// fio's `unlink`: once the run is over, remove the regular files of the jobs that ask. Only
/// raidlab's own are removed: those this run created and those marked as its scratch (laid
/// out or written over with `--force` before); any other file is left in place with a note,
/// unless the run has `--force`. Devices are never removed.
fn unlink_files(
    specs: &[JobSpec],
    resolved: &HashMap<String, Resolved>,
    created: &HashSet<String>,
    force: bool,
) {
    let mut done: HashSet<&str> = Default::default();
    for s in specs.iter().filter(|s| s.unlink) {
        for name in &s.filenames {
            let Some(Resolved::Path(path)) = resolved.get(name) else {
                continue;
            };
            if !done.insert(name.as_str()) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let ours = created.contains(name)
                || File::open(path).is_ok_and(|f| crate::safety::is_scratch(&f));
            if !(ours || force) {
                crate::ewriteln!(
                    "raidlab: note: job '{}': unlink left {} in place: it held data raidlab did not put there (valid: --force to remove it too)",
                    s.name,
                    path.display()
                );
                continue;
            }
            if let Err(e) = std::fs::remove_file(path) {
                crate::ewriteln!(
                    "raidlab: warning: job '{}': cannot unlink {}: {e}",
                    s.name,
                    path.display()
                );
            }
        }
    }
}

/// fio's `invalidate` (on unless a job turns it off): before a group starts, the page
/// cache's copy of each of its jobs' regions of a file or block device is written back and
/// dropped, outside any job's timing, so buffered reads reach the device rather than memory
/// (the file laid out just before would otherwise be read back from the cache). Where the
/// kernel declines, the job runs as it would have; in-process targets have no page cache.
fn invalidate_regions(group: &[InstancePlan], specs: &[JobSpec]) {
    use std::os::fd::AsRawFd;
    for p in group {
        // (fio's pre_read clears invalidate: the region is read into the cache instead.)
        if !specs[p.spec_index].invalidate || specs[p.spec_index].pre_read {
            continue;
        }
        for (k, f) in p.exec.files().iter().enumerate() {
            let (start, len) = p.setup.stream.region(k);
            // Dirty pages are not dropped: written back first (a laid-out file's are).
            let _ = f.sync_data();
            // SAFETY: posix_fadvise on a descriptor this plan owns; it only advises the cache.
            unsafe {
                libc::posix_fadvise(
                    f.as_raw_fd(),
                    start as libc::off_t,
                    len as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                );
            }
        }
    }
}

/// fio's `file_append`: the jobs that ask, their `offset` set to their regular files' size
/// as the run starts (a file not there yet has none; devices and arrays are passed over, as
/// fio ignores the option for them). None when no job asks.
fn appended(specs: &[JobSpec]) -> Result<Option<Vec<JobSpec>>, EngineError> {
    if !specs.iter().any(|s| s.file_append) {
        return Ok(None);
    }
    let mut out = specs.to_vec();
    for s in out.iter_mut().filter(|s| s.file_append) {
        let mut sizes: Vec<(u64, &str)> = Vec::new();
        for f in &s.filenames {
            match std::fs::metadata(f) {
                Ok(m) if m.is_file() => sizes.push((m.len(), f)),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => sizes.push((0, f)),
                Err(e) => {
                    return Err(EngineError::failed(format!(
                        "job '{}': file_append: cannot read the size of {f}: {e}",
                        s.name
                    )))
                }
            }
        }
        if let Some(&(end, _)) = sizes.first() {
            if let Some((other, f)) = sizes.iter().find(|(n, _)| *n != end) {
                return Err(EngineError::usage(format!(
                    "job '{}': file_append over files of different sizes ({} holds {end} bytes, {f} {other}): the job has one offset (valid: files of one size, or a job each)",
                    s.name, sizes[0].1
                )));
            }
            s.offset = end;
            s.offset_percent = None;
        }
    }
    Ok(Some(out))
}

/// fio's `pre_read`: each job of the group that asks reads its regions into the page cache
/// through its own (buffered) files as the group starts, before its clock starts, 1 MiB at a
/// time. (A job's region larger than memory keeps only what the cache keeps.)
fn pre_read_regions(
    group: &[InstancePlan],
    specs: &[JobSpec],
    stop: &AtomicBool,
) -> Result<(), EngineError> {
    use std::os::unix::fs::FileExt;
    const STEP: u64 = 1 << 20;
    let mut buf = vec![0u8; STEP as usize];
    for p in group.iter().filter(|p| specs[p.spec_index].pre_read) {
        for (k, f) in p.exec.files().iter().enumerate() {
            let (start, len) = p.setup.stream.region(k);
            let mut at = start;
            while at < start + len && !stop.load(Ordering::Relaxed) {
                let n = (start + len - at).min(STEP) as usize;
                match f.read_at(&mut buf[..n], at) {
                    Ok(0) => break,
                    Ok(got) => at += got as u64,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(EngineError::failed(format!(
                            "job '{}': pre_read of {} at byte {at}: {e}",
                            p.setup.name, p.setup.files[k]
                        )))
                    }
                }
            }
        }
    }
    Ok(())
}

/// What holds the holes a read job would read: the target file itself, the file behind a
/// loop device, or the member files behind an in-process target.
#[derive(Debug, PartialEq)]
enum Holder {
    File,
    LoopBacking(std::path::PathBuf),
    Members,
}

/// The share of what a read job reads that may be holes before a run warns: reads of holes
/// are answered by the kernel without reaching a device, many times faster than it.
pub const HOLE_WARN_SHARE: f64 = 0.1;

/// Warnings for the jobs of one stonewall group that read (read-only or mixed) a target that
/// is mostly holes (at least [`HOLE_WARN_SHARE`]) as the group starts: of the regions they
/// read of a regular file (SEEK_HOLE/SEEK_DATA), of the file behind a loop device
/// ([`crate::safety::loop_backing`]), or of the storage behind an in-process target
/// ([`BlockTarget::hole_share`]). Where a job of the group also writes the target (a mixed
/// job's own writes, or another job's), the warning says that those writes fill the holes
/// only as they go: the reads that come before them still read holes. Each target is warned
/// about once per run (`warned`).
fn hole_warnings(
    group: &[InstancePlan],
    specs: &[JobSpec],
    warned: &mut HashSet<String>,
) -> Vec<String> {
    let written: HashSet<&str> = group
        .iter()
        .filter(|p| writes(&specs[p.spec_index]))
        .flat_map(|p| p.setup.files.iter().map(String::as_str))
        .collect();
    // Per target, in the order first read: (what holds the holes, hole bytes, bytes read).
    let mut found: Vec<(String, Holder, f64, u64)> = Vec::new();
    let mut add = |target: &str, file: Holder, holes: f64, len: u64| match found
        .iter_mut()
        .find(|(t, _, _, _)| t == target)
    {
        Some(e) => {
            e.2 += holes;
            e.3 += len;
        }
        None => found.push((target.to_string(), file, holes, len)),
    };
    for p in group {
        let spec = &specs[p.spec_index];
        if spec.read_percent() == 0 {
            continue;
        }
        for (k, target) in p.setup.files.iter().enumerate() {
            let target = target.as_str();
            if warned.contains(target) {
                continue;
            }
            let (start, len) = p.setup.stream.region(k);
            match &p.exec {
                ExecPlan::Psync(f, _)
                | ExecPlan::Uring(f, _)
                | ExecPlan::Libaio(f)
                | ExecPlan::Mmap(f, ..) => {
                    let f = &f[k];
                    if f.metadata().is_ok_and(|m| m.is_file()) {
                        if let Ok(holes) = crate::safety::hole_bytes(f, start, start + len) {
                            add(target, Holder::File, holes as f64, len);
                        }
                    } else if let Some((backing, at)) = crate::safety::loop_backing(f) {
                        let holes = std::fs::File::open(&backing).and_then(|b| {
                            crate::safety::hole_bytes(&b, at + start, at + start + len)
                        });
                        if let Ok(holes) = holes {
                            add(target, Holder::LoopBacking(backing), holes as f64, len);
                        }
                    }
                }
                ExecPlan::Block(devs) => {
                    if let Some(share) = devs[k].hole_share(start, len) {
                        add(target, Holder::Members, share * len as f64, len);
                    }
                }
                ExecPlan::Null => {}
            }
        }
    }
    let mut out = Vec::new();
    for (t, file, holes, len) in found {
        let share = holes / len.max(1) as f64;
        if share < HOLE_WARN_SHARE {
            continue;
        }
        let pct = (share * 100.0).round() as u64;
        // (The group's own writes do not help the reads that come before them.)
        let (also, first) = if written.contains(t.as_str()) {
            (
                ", and this group's writes fill them only as they go",
                "write it first, in an earlier group (a write job, then stonewall),",
            )
        } else {
            ("", "write it first (e.g. a write job)")
        };
        out.push(match file {
            Holder::File => format!(
                "{t}: {pct}% of the region read is holes; reads of holes do not reach the device{also} — {first} to measure the device"
            ),
            Holder::LoopBacking(b) => format!(
                "{t}: {pct}% of the region read lies in holes of the loop device's backing file {}; reads of holes do not reach a disk{also} — {first} to measure the device",
                b.display()
            ),
            Holder::Members => format!(
                "{t}: {pct}% of the region read lies in holes of the files it is stored on; reads of holes do not reach the devices{also} — {first} to measure the devices"
            ),
        });
        warned.insert(t);
    }
    out
}

/// Most worker threads an in-process target gets per job (one per request in flight).
pub const MAX_BLOCK_TARGET_DEPTH: u32 = 1024;

/// Most requests an io_uring ring holds (the kernel's IORING_MAX_ENTRIES); the ring is sized
/// to the iodepth rounded up to a power of two.
pub const MAX_URING_DEPTH: u32 = 32768;

/// The bytes of I/O buffers one instance of `spec` holds: one of its largest block a request
/// in flight (one in all for the engines that issue one at a time).
fn buffer_bytes(spec: &JobSpec) -> u64 {
    let depth = if spec.ioengine.one_at_a_time() {
        1
    } else {
        spec.iodepth as u64
    };
    depth.saturating_mul(spec.bs.max())
}

/// Half of this machine's physical memory, bytes (unbounded where it cannot be read): what
/// the buffers of jobs running together may take.
fn half_of_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && page > 0 {
        pages as u64 * page as u64 / 2
    } else {
        u64::MAX
    }
}

/// Refuse a stonewall group whose jobs' buffers together exceed half of the machine's memory
/// (one job's too many is a group's too many), before any target is laid out: every
/// one of a job's `numjobs` copies holds its own, and a group's jobs run at once, so
/// 256 copies at iodepth=32768 of 4 KiB take 32 GiB between them and the allocator aborts
/// the process mid-run rather than failing a job.
fn check_group_buffers(specs: &[JobSpec]) -> Result<(), EngineError> {
    let totals =
        raidlab_workload::group_totals(specs, |inst| Some(buffer_bytes(&specs[inst.spec_index])));
    let half_ram = half_of_memory();
    match raidlab_workload::group_over(&totals, half_ram) {
        Some((which, t)) => Err(EngineError::usage(format!(
            "{which}{} jobs run together (numjobs counted), and their buffers, iodepth × the largest bs each, need {} bytes, more than half of this machine's memory ({half_ram} bytes; valid: fewer jobs, a lower iodepth or smaller blocks)",
            t.jobs, t.amount
        ))),
        None => Ok(()),
    }
}

/// Most worker threads the in-process targets' jobs of one stonewall group get together.
/// Each thread maps its own stack, and the kernel's map count (vm.max_map_count, 65530 by
/// default) runs out near 30 000 of them: 256 jobs at iodepth=1024 on an array panicked
/// inside thread start-up. 16 jobs at iodepth=1024 ran.
pub const MAX_BLOCK_TARGET_THREADS: u64 = 16384;

/// Refuse a stonewall group whose jobs on in-process targets (arrays) would start more than
/// [`MAX_BLOCK_TARGET_THREADS`] worker threads between them (one per request in flight, a
/// job each at depth 1 running inline), before any target is laid out.
fn check_group_threads(
    specs: &[JobSpec],
    resolved: &HashMap<String, Resolved>,
) -> Result<(), EngineError> {
    let totals = raidlab_workload::group_totals(specs, |inst| {
        let s = &specs[inst.spec_index];
        let on_block = inst
            .files
            .iter()
            .any(|&f| matches!(resolved.get(&s.filenames[f]), Some(Resolved::Block(..))));
        (on_block && s.ioengine != IoEngine::Null && s.iodepth > 1).then_some(u64::from(s.iodepth))
    });
    match raidlab_workload::group_over(&totals, MAX_BLOCK_TARGET_THREADS) {
        Some((which, t)) => Err(EngineError::usage(format!(
            "{which}{} jobs on in-process targets (arrays) run together (numjobs counted) with {} requests in flight, one thread each (valid: up to {MAX_BLOCK_TARGET_THREADS} in all: fewer jobs or a lower iodepth)",
            t.jobs, t.amount
        ))),
        None => Ok(()),
    }
}

/// Refuse jobs whose threads, rings or pinned memory the machine cannot hold, before any I/O.
fn check_resources(spec: &JobSpec, r: &Resolved) -> Result<(), EngineError> {
    match r {
        Resolved::Block(label, _) => {
            if spec.sync != raidlab_workload::SyncIo::None && spec.ioengine != IoEngine::Null {
                return Err(EngineError::usage(format!(
                    "job '{}': sync=1 opens a file O_SYNC, and {label} is an in-process target with no file to open so (valid there: sync=none, with fsync=N or fdatasync=N to flush it every N writes)",
                    spec.name
                )));
            }
            if spec.ioengine != IoEngine::Null && spec.iodepth > MAX_BLOCK_TARGET_DEPTH {
                return Err(EngineError::usage(format!(
                    "job '{}': iodepth={} on {label}: in-process targets use one thread per request in flight (valid: 1 to {MAX_BLOCK_TARGET_DEPTH})",
                    spec.name, spec.iodepth
                )));
            }
        }
        Resolved::Path(_) => {
            if spec.ioengine == IoEngine::IoUring && spec.iodepth > MAX_URING_DEPTH {
                return Err(EngineError::usage(format!(
                    "job '{}': iodepth={} with ioengine=io_uring: the kernel's rings hold at most {MAX_URING_DEPTH} requests (valid: 1 to {MAX_URING_DEPTH})",
                    spec.name, spec.iodepth
                )));
            }
        }
    }
    // (Its buffers were checked with the rest of its group's: check_group_buffers.)
    let half_ram = half_of_memory();
    if spec.lockmem > half_ram {
        return Err(EngineError::usage(format!(
            "job '{}': lockmem={} pins more than half of this machine's memory ({half_ram} bytes; valid: up to that)",
            spec.name, spec.lockmem
        )));
    }
    Ok(())
}

fn check_alignment(spec: &JobSpec, align: u64, what: &str) -> Result<(), EngineError> {
    let mut values: Vec<(&str, u64)> = vec![
        ("offset", spec.offset),
        ("offset_increment", spec.offset_increment),
    ];
    for (bs, _) in spec.bs.read.entries.iter().chain(&spec.bs.write.entries) {
        values.push(("bs", *bs));
    }
    if let Some(s) = spec.size {
        values.push(("size", s));
    }
    if let Some(a) = spec.blockalign {
        values.push(("blockalign", a));
    }
    for (name, v) in values {
        if v % align != 0 {
            return Err(misaligned(spec, &format!("{name}={v}"), align, what));
        }
    }
    Ok(())
}

/// `subject` (an option's value, a trace's request) is not a multiple of `what`, `align`
/// bytes: the one line, saying who needs it (direct I/O, or the target itself).
fn misaligned(spec: &JobSpec, subject: &str, align: u64, what: &str) -> EngineError {
    let needs = if what.starts_with("the logical") {
        "direct=1"
    } else {
        "this target"
    };
    EngineError::usage(format!(
        "job '{}': {subject} is not a multiple of {what} ({align} bytes), which {needs} needs",
        spec.name
    ))
}

/// fio's `ioscheduler`, checked before anything runs: each (stonewall group, the
/// `queue/scheduler` file of a job's target's block device, the scheduler it asks for). A
/// name the device does not offer, two names for one device in one group, or a target with
/// no kernel block device of its own (a raidlab array) is refused in one line; a file with
/// no block device under it (tmpfs) has nothing to switch, and a note says so.
fn plan_schedulers(
    specs: &[JobSpec],
    resolved: &HashMap<String, Resolved>,
    group_of_spec: &[usize],
) -> Result<Vec<(usize, PathBuf, String)>, EngineError> {
    let mut out: Vec<(usize, PathBuf, String)> = Vec::new();
    for (si, s) in specs.iter().enumerate() {
        let Some(name) = &s.ioscheduler else { continue };
        for f in &s.filenames {
            let path = match &resolved[f] {
                Resolved::Path(p) => p,
                Resolved::Block(label, _) => {
                    return Err(EngineError::usage(format!(
                        "job '{}': ioscheduler={name} switches a kernel block device's scheduler, and {label} is raidlab's own array (valid: a file or block device target; its members' devices keep theirs)",
                        s.name
                    )))
                }
            };
            let queue = crate::iosched::queue_file(path).map_err(|e| {
                EngineError::failed(format!(
                    "job '{}': ioscheduler: cannot find the block device under {}: {e}",
                    s.name,
                    path.display()
                ))
            })?;
            let Some(queue) = queue else {
                crate::ewriteln!(
                    "raidlab: note: job '{}': ioscheduler={name}: {} is on no block device (tmpfs, for one), so there is no scheduler to switch",
                    s.name,
                    path.display()
                );
                continue;
            };
            let dev = crate::iosched::device_name(&queue);
            let text = std::fs::read_to_string(&queue).map_err(|e| {
                EngineError::failed(format!("cannot read {}: {e}", queue.display()))
            })?;
            let (offered, _) = crate::iosched::parse_offered(&text);
            if !offered.contains(name) {
                return Err(EngineError::usage(format!(
                    "job '{}': ioscheduler={name}: {dev} offers no such I/O scheduler (valid: {})",
                    s.name,
                    offered.join(", ")
                )));
            }
            let g = group_of_spec[si];
            if let Some(other) = out
                .iter()
                .find(|o| o.0 == g && o.1 == queue && o.2 != *name)
            {
                return Err(EngineError::usage(format!(
                    "job '{}': ioscheduler={name}: another job of its stonewall group runs {dev} with {} (valid: one scheduler per device at a time; a stonewall between them)",
                    s.name, other.2
                )));
            }
            out.push((g, queue, name.clone()));
        }
    }
    out.dedup();
    Ok(out)
}

fn run_group(
    mut plans: Vec<InstancePlan>,
    opts: &RunOptions,
    clock: &Arc<dyn Clock>,
    specs: &[JobSpec],
    exit_all: &AtomicBool,
    waits: &[Option<usize>],
) -> Vec<(usize, JobResult)> {
    // fio's `exitall`: the flags a job's end sets to stop others, one per reporting group
    // and one for the whole stonewall group (`raidlab_workload::exit_scope` says which).
    let stonewall = Arc::new(AtomicBool::new(false));
    let mut by_group: HashMap<u32, Arc<AtomicBool>> = HashMap::new();
    for p in &mut plans {
        let g = by_group.entry(p.setup.group_id).or_default();
        p.setup.halted = [Arc::clone(g), Arc::clone(&stonewall)];
    }
    // fio's flows: the jobs of each share its counts (each running instance weighs in as
    // it starts).
    let mut flows: HashMap<u32, Arc<crate::job::FlowShared>> = HashMap::new();
    for p in &mut plans {
        let s = &specs[p.spec_index];
        if s.flow > 0 {
            let shared = flows.entry(s.flow_id).or_default();
            p.setup.flow = Some(crate::job::JobFlow {
                shared: Arc::clone(shared),
                weight: s.flow,
                sleep_ns: s.flow_sleep_ns,
            });
        }
    }
    let total_bytes = plans.iter().map(|p| p.goal_bytes).sum::<Option<u64>>();
    let time_ns = plans
        .iter()
        .filter_map(|p| {
            specs[p.spec_index]
                .runtime_ns
                .map(|r| r + specs[p.spec_index].ramp_time_ns)
        })
        .max();
    let counters: Vec<Arc<AtomicU64>> = plans
        .iter()
        .map(|p| Arc::clone(&p.setup.progress))
        .collect();
    let finished = Arc::new(AtomicBool::new(false));
    // fio's `wait_for`: how many instances of each job of this group are still to end; a
    // job waiting for one starts once its count is 0 (a job of an earlier group has ended).
    let mut left = vec![0usize; specs.len()];
    for p in &plans {
        left[p.spec_index] += 1;
    }
    let running = (Mutex::new(left), Condvar::new());
    let running = &running;
    // The jobs that start with the group start together (a job waiting for another starts
    // when it ends; a create_only job does not run). Every ticket is taken before any job
    // is spawned.
    let gate = crate::gate::StartGate::new();
    for p in &mut plans {
        let s = &specs[p.spec_index];
        if waits[p.spec_index].is_none() && !s.create_only {
            p.setup.start_gate = Some(gate.ticket());
        }
    }
    std::thread::scope(|sc| {
        let line = if opts.progress {
            // One counter for the line: the sum of the jobs', folded by a small relay.
            let sum = Arc::new(AtomicU64::new(0));
            let (s2, f2, c2) = (Arc::clone(&sum), Arc::clone(&finished), Arc::clone(clock));
            let counters2 = counters.clone();
            let (s3, f3) = (Arc::clone(&sum), Arc::clone(&finished));
            sc.spawn(move || {
                while !f3.load(Ordering::Relaxed) {
                    s3.store(
                        counters2.iter().map(|c| c.load(Ordering::Relaxed)).sum(),
                        Ordering::Relaxed,
                    );
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            });
            Some(sc.spawn(move || {
                progress::run_line(
                    Goal {
                        bytes: total_bytes,
                        time_ns,
                    },
                    s2,
                    f2,
                    c2,
                )
            }))
        } else {
            None
        };
        let handles: Vec<_> = plans
            .into_iter()
            .map(|p| {
                let si = p.spec_index;
                let [group, stonewall] = p.setup.halted.clone();
                let h = std::thread::Builder::new()
                    .name(format!("raidlab-job{si}"))
                    .spawn_scoped(sc, move || {
                        let spec = &specs[si];
                        let halted = || {
                            group.load(Ordering::Relaxed)
                                || stonewall.load(Ordering::Relaxed)
                                || opts.stop.load(Ordering::Relaxed)
                        };
                        let waited = waits[si].is_none_or(|w| {
                            let (count, ended) = running;
                            let mut c = count.lock().unwrap_or_else(|e| e.into_inner());
                            while c[w] > 0 && !halted() {
                                // (Woken by each end; the timeout looks at the halt flags.)
                                c = ended
                                    .wait_timeout(c, std::time::Duration::from_millis(50))
                                    .unwrap_or_else(|e| e.into_inner())
                                    .0;
                            }
                            c[w] == 0
                        });
                        // fio's create_only: the layout (done) is all the job does; a job
                        // stopped while it waited for another does nothing either.
                        let r = if spec.create_only || !waited {
                            not_run(&p.setup)
                        } else {
                            match exec_hook(spec, "prerun", spec.exec_prerun.as_deref()) {
                                Err(e) => not_started(&p.setup, e),
                                Ok(()) => {
                                    let r = run_instance(p);
                                    if let Err(e) =
                                        exec_hook(spec, "postrun", spec.exec_postrun.as_deref())
                                    {
                                        crate::ewriteln!(
                                            "raidlab: warning: job '{}': {e}",
                                            spec.name
                                        );
                                    }
                                    r
                                }
                            }
                        };
                        {
                            let (count, ended) = running;
                            count.lock().unwrap_or_else(|e| e.into_inner())[si] -= 1;
                            ended.notify_all();
                        }
                        // The job's end stops the others its `exitall` names.
                        match raidlab_workload::exit_scope(specs, si, r.error.is_some()) {
                            Some(ExitWhat::Group) => group.store(true, Ordering::Relaxed),
                            Some(ExitWhat::Stonewall) => stonewall.store(true, Ordering::Relaxed),
                            Some(ExitWhat::All) => {
                                stonewall.store(true, Ordering::Relaxed);
                                exit_all.store(true, Ordering::Relaxed);
                            }
                            None => {}
                        }
                        r
                    });
                (si, h)
            })
            .collect();
        let mut out = Vec::new();
        for (si, h) in handles {
            let r = match h {
                Ok(h) => h.join().unwrap_or_else(|_| JobResult {
                    error: Some("job thread panicked".into()),
                    ..Default::default()
                }),
                Err(e) => JobResult {
                    error: Some(format!("cannot start a job thread: {e}")),
                    ..Default::default()
                },
            };
            out.push((si, r));
        }
        finished.store(true, Ordering::Relaxed);
        if let Some(l) = line {
            let _ = l.join();
        }
        out
    })
}

/// Every CPU a job names must be one this process may run on, and every NUMA node one this
/// machine has online (checked once per job, before any target is touched).
fn check_cpus(spec: &JobSpec) -> Result<(), EngineError> {
    let policy_nodes = spec
        .numa_mem_policy
        .as_ref()
        .map_or(Vec::new(), |p| p.nodes());
    let named = [
        ("numa_cpu_nodes", &spec.numa_cpu_nodes),
        ("numa_mem_policy", &policy_nodes),
    ];
    // (The machine's nodes are read only for a job that names some.)
    let online = match named.iter().any(|(_, n)| !n.is_empty()) {
        true => crate::affinity::online_nodes().map_err(|e| {
            EngineError::failed(format!("cannot read this machine's NUMA nodes: {e}"))
        })?,
        false => Vec::new(),
    };
    for (what, nodes) in named {
        if let Some(n) = nodes.iter().find(|n| !online.contains(n)) {
            return Err(EngineError::usage(format!(
                "job '{}': {what} names node {n}, which this machine does not have online (valid: {})",
                spec.name,
                crate::affinity::ranges(&online)
            )));
        }
    }
    let cpus = job_cpus(spec)?;
    if cpus.is_empty() {
        return Ok(());
    }
    let here = crate::affinity::allowed()
        .map_err(|e| EngineError::failed(format!("cannot read this process's CPUs: {e}")))?;
    match cpus.iter().find(|c| !here.contains(c)) {
        Some(c) => Err(EngineError::usage(format!(
            "job '{}': {} names CPU {c}, which this process may not run on (valid: {})",
            spec.name,
            if spec.numa_cpu_nodes.is_empty() {
                "cpus_allowed"
            } else {
                "numa_cpu_nodes"
            },
            crate::affinity::ranges(&here)
        ))),
        None => Ok(()),
    }
}

/// The CPUs a job's threads run on: its `cpus_allowed`, narrowed to the CPUs of its
/// `numa_cpu_nodes` (all of theirs without it); empty for any.
fn job_cpus(spec: &JobSpec) -> Result<Vec<u32>, EngineError> {
    if spec.numa_cpu_nodes.is_empty() {
        return Ok(spec.cpus.clone());
    }
    let mut cpus = Vec::new();
    for &n in &spec.numa_cpu_nodes {
        cpus.extend(
            crate::affinity::node_cpus(n).map_err(|e| {
                EngineError::failed(format!("cannot read NUMA node {n}'s CPUs: {e}"))
            })?,
        );
    }
    cpus.sort_unstable();
    cpus.dedup();
    if !spec.cpus.is_empty() {
        cpus.retain(|c| spec.cpus.contains(c));
    }
    if cpus.is_empty() {
        return Err(EngineError::usage(format!(
            "job '{}': numa_cpu_nodes={} {} (valid: nodes with CPUs{})",
            spec.name,
            crate::affinity::ranges(&spec.numa_cpu_nodes),
            if spec.cpus.is_empty() {
                "has no CPUs".to_string()
            } else {
                format!(
                    "shares no CPU with cpus_allowed={}",
                    crate::affinity::ranges(&spec.cpus)
                )
            },
            if spec.cpus.is_empty() {
                ""
            } else {
                " among those CPUs"
            }
        )));
    }
    Ok(cpus)
}

/// The CPUs an instance binds to: the job's set (`cpus`, from [`job_cpus`]), or under
/// `cpus_allowed_policy=split` one of them by the instance's place in the run (fio hands
/// them out by job number, in turn).
fn instance_cpus(spec: &JobSpec, cpus: &[u32], global_index: u32) -> Vec<u32> {
    if spec.cpus_split && !cpus.is_empty() {
        vec![cpus[global_index as usize % cpus.len()]]
    } else {
        cpus.to_vec()
    }
}

/// The result of a job that did not run (a job's end under `exit_what=all` stopped the run
/// before its group): its names, nothing measured, no error (as fio reports it).
fn not_run(setup: &JobSetup) -> JobResult {
    JobResult {
        name: setup.name.clone(),
        groupid: setup.group_id,
        instances: 1,
        target: setup.target.clone(),
        engine: setup.engine.to_string(),
        ..Default::default()
    }
}

/// fio's `exec_prerun` / `exec_postrun` (`what`): the command through `sh -c` in the
/// working folder, its output and errors in `JOB.prerun.txt` / `JOB.postrun.txt`, as fio
/// saves them ([`JobSpec::exec_output`]), marked as raidlab's. A command that cannot start
/// or exits nonzero is the error returned (fio skips the job silently; raidlab says why it
/// did not run).
fn exec_hook(spec: &JobSpec, what: &str, command: Option<&str>) -> Result<(), String> {
    let Some(cmd) = command else { return Ok(()) };
    let out = spec.exec_output(what);
    let (file, err) = std::fs::File::create(&out)
        .and_then(|f| Ok((f.try_clone()?, f)))
        .map_err(|e| format!("exec_{what}: cannot write its output to {out}: {e}"))?;
    // raidlab's own output from now on, as its logs are: the next run may replace it without
    // --force (the run refused it before starting if it held data raidlab did not write).
    crate::safety::mark_scratch(&file);
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(file)
        .stderr(err)
        .status()
        .map_err(|e| format!("exec_{what} '{cmd}' did not start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        let how = match status.code() {
            Some(c) => format!("exited with {c}"),
            None => "was killed by a signal".to_string(),
        };
        Err(format!("exec_{what} '{cmd}' {how} (its output: {out})"))
    }
}

/// The result of a job that could not start: its names and the error, nothing measured.
fn not_started(setup: &JobSetup, error: String) -> JobResult {
    JobResult {
        error: Some(error),
        ..not_run(setup)
    }
}

fn run_instance(p: InstancePlan) -> JobResult {
    // Bound before anything else, so threads the job starts inherit the binding.
    let bound = if p.cpus.is_empty() {
        Vec::new()
    } else {
        match crate::affinity::bind(&p.cpus) {
            Ok(b) => b,
            Err(e) => {
                return not_started(
                    &p.setup,
                    format!(
                        "cannot bind job '{}' to CPUs {}: {e}",
                        p.setup.name,
                        crate::affinity::ranges(&p.cpus)
                    ),
                )
            }
        }
    };
    // (A job that cannot take its priorities or pin its memory does not start; its result
    // says which CPUs it was bound to.)
    let refused = |error: String| {
        let mut r = not_started(&p.setup, error);
        r.cpus = bound.clone();
        r
    };
    // Its memory policy, before it takes its buffers or starts threads (they inherit it).
    if let Some(policy) = &p.mem_policy {
        if let Err(e) = crate::affinity::set_mem_policy(policy) {
            return refused(format!(
                "cannot set job '{}' numa_mem_policy={}: {e}",
                p.setup.name,
                policy.name()
            ));
        }
    }
    // Its priorities, before it starts threads of its own (they inherit them).
    if let Err(e) = crate::affinity::set_priority(&p.priority) {
        return refused(format!(
            "cannot set job '{}' priorities (prio, prioclass, nice): {e} (the realtime class and negative nice values need privileges)",
            p.setup.name
        ));
    }
    // The memory pinned for the job's run, let go when it ends.
    let _pinned = match p.lockmem {
        0 => None,
        n => match crate::affinity::Pinned::new(n as usize) {
            Ok(m) => Some(m),
            Err(e) => {
                return refused(format!(
                    "lockmem: cannot pin {n} bytes for job '{}': {e} (the locked-memory limit, ulimit -l, or the machine's memory)",
                    p.setup.name
                ))
            }
        },
    };
    let mut r = run_bound(p);
    r.cpus = bound;
    r
}

fn run_bound(p: InstancePlan) -> JobResult {
    let depth = p.setup.depth.max(1);
    let bufs = AlignedBuf::new(
        depth as usize,
        p.max_bs as usize,
        p.buf_align,
        &p.setup.content,
    );
    let fail = |setup: &JobSetup, e: std::io::Error| {
        not_started(
            setup,
            format!("cannot start {} on {}: {e}", setup.engine, setup.target),
        )
    };
    match p.exec {
        ExecPlan::Null => drive(p.setup, &mut Null::new(depth as usize), &bufs),
        ExecPlan::Psync(files, call) => drive(p.setup, &mut Psync::new(files, call), &bufs),
        ExecPlan::Mmap(files, writes, direct, advice) => drive(
            p.setup,
            &mut Mmap::new(files, writes, direct, advice),
            &bufs,
        ),
        ExecPlan::Uring(files, register) => match Uring::new(files, depth, bufs.area(), register) {
            Ok(mut u) => drive(p.setup, &mut u, &bufs),
            Err(e) => {
                let mut r = fail(&p.setup, e);
                if let Some(m) = r.error.as_mut() {
                    m.push_str(" (where io_uring is unavailable, use ioengine=psync)");
                }
                r
            }
        },
        ExecPlan::Libaio(files) => match Libaio::new(files, depth) {
            Ok(mut a) => drive(p.setup, &mut a, &bufs),
            Err(e) => fail(&p.setup, e),
        },
        ExecPlan::Block(devs) => {
            let r = match Block::new(devs, depth) {
                Ok(mut b) => {
                    let mut r = drive(p.setup, &mut b, &bufs);
                    b.finish();
                    // (Written data is flushed once: inside the job with end_fsync.)
                    if !b.flushed {
                        if let Err(e) = b.flush_all() {
                            r.error.get_or_insert(format!("flushing {}: {e}", r.target));
                        }
                    }
                    r
                }
                Err(e) => fail(&p.setup, e),
            };
            r
        }
    }
}

#[allow(dead_code)]
fn assert_send<T: Send>() {}
#[allow(dead_code)]
fn plans_are_send() {
    assert_send::<InstancePlan>();
    let _ = |e: &mut dyn Executor| e.finish();
}
