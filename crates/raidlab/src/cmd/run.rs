//! `raidlab run`: fio's command line and job files in, fio's output formats out.
//!
//! Arguments are read the way fio reads its command line: `--key=value`, `--key value` or a
//! bare flag (`--time_based`); `--name=X` starts a new job and options before the first
//! `--name` are global; `--job FILE.fio` (or a bare `FILE.fio`) adds a job file's jobs with
//! the options given before it as their defaults. Every fio option goes through
//! [`raidlab_workload::apply_option`], so flags and job files accept the same things with the
//! same errors. raidlab's own options (`--output-format`, `--minimal`, `--terse-version`,
//! `--output`, `--force`, `--verify`, `--progress`) may appear anywhere.
//!
//! Jobs with fio's log options get fio's log files (`NAME_bw.N.log`, …) in the working
//! folder (or where their names point), written once the run is over: the executors record
//! the samples, [`raidlab_result::JobLog`] formats them, [`write_logs`] writes them.
//!
//! With no job options at all, `raidlab run` measures the embedded default: a scratch file in
//! a new temporary folder, removed afterwards (also on error and on Ctrl-C).
//!
//! [`execute`] is the one place runs are dispatched by target kind: `sim:` to the simulator,
//! `array:M1,M2,…` to a user-space array, anything else to the engine as a path. The wall
//! clock (run timestamp) and the SIGINT handler live here, at the edge.

use crate::error::CliError;
use raidlab_engine::ewriteln;
use raidlab_result::{OutputFormat, RunResult};
use raidlab_workload::{apply_option, iec_note, parse_job_text, JobSpec, SpecError, OPTION_NAMES};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct RunArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// How [`execute`] runs (contract with `raidlab sweep` and `raidlab run --mpi`).
#[derive(Clone, Debug, Default)]
pub struct ExecOptions {
    /// Write even over a target holding a filesystem, partition table or array signature.
    pub force: bool,
    /// Draw a progress line on stderr.
    pub progress: bool,
    /// The other ranks of an MPI run, met at the engine's fixed points (real runs only).
    pub coordinator: Option<Arc<dyn raidlab_engine::Coordinator>>,
    /// fio's `--readonly`: no job may write or trim, and no file is laid out.
    pub readonly: bool,
}

/// The embedded default workload: sequential write and read in 1 MiB blocks, then 4 KiB
/// random reads at iodepth 32 for a few seconds. `filename` and `direct` come from the caller.
pub const EMBEDDED_DEFAULT_JOB: &str = "\
; raidlab run's embedded default: a scratch file in a temporary folder
[global]
size=256m
ioengine=io_uring

[seq-write-1m]
rw=write
bs=1m
iodepth=4

[seq-read-1m]
stonewall
rw=read
bs=1m
iodepth=4

[rand-read-4k]
stonewall
rw=randread
bs=4k
iodepth=32
runtime=3s
time_based
";

/// Everything `raidlab run`'s arguments say.
#[derive(Debug)]
pub struct Invocation {
    pub jobs: Vec<JobSpec>,
    /// The output formats, in the order they are printed (fio's: terse, JSON, text).
    pub formats: Vec<OutputFormat>,
    pub output: Option<PathBuf>,
    pub force: bool,
    pub verify: bool,
    /// `Some` when `--progress`/`--no-progress` was given; otherwise on if stderr is a terminal.
    pub progress: Option<bool>,
    pub help: bool,
    /// `--mpi`: one run over the ranks of an MPI job (`cmd::mpi`).
    pub mpi: bool,
    /// fio's `--readonly`: jobs that write or trim are refused, and no file is laid out.
    pub readonly: bool,
    /// fio's `--parse-only`: check the jobs and run nothing.
    pub parse_only: bool,
    /// fio's `--section`: only the job file sections (jobs) of these names run.
    pub sections: Vec<String>,
}

/// A note on standard error, once a process (a sweep runs its points through here) and only
/// after a run, so bad input stays one line: `note_once!("text {with} args")`.
macro_rules! note_once {
    ($($arg:tt)*) => {{
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| ewriteln!("raidlab: note: {}", format_args!($($arg)*)));
    }};
}

/// How an `apply_option` error reads on the command line: `--bs=4q: '4q' has unknown unit…`.
fn flag_error(shown: &str, key: &str, e: SpecError) -> CliError {
    let prefix = format!("option '{key}': ");
    let msg = e.message.strip_prefix(&prefix).unwrap_or(&e.message);
    CliError::usage(format!("{shown}: {msg}"))
}

/// True when fio's option `key` is a bare flag (takes no value), as the option table says.
fn is_flag(key: &str) -> bool {
    apply_option(&mut JobSpec::default(), key, None).is_ok()
}

/// Read `raidlab run`'s arguments (without the `run` itself).
pub fn parse_args(args: &[String]) -> Result<Invocation, CliError> {
    let mut inv = Invocation {
        jobs: Vec::new(),
        formats: vec![OutputFormat::Text],
        output: None,
        force: false,
        verify: false,
        progress: None,
        help: false,
        mpi: false,
        readonly: false,
        parse_only: false,
        sections: Vec::new(),
    };
    // fio's --section, wherever it is given: the job files' other sections are skipped as
    // they are read.
    inv.sections = args
        .iter()
        .enumerate()
        .filter_map(|(k, a)| match a.strip_prefix("--section") {
            Some(v) if v.starts_with('=') => Some(v[1..].to_string()),
            Some("") => args.get(k + 1).cloned(),
            _ => None,
        })
        .collect();
    let mut global = JobSpec::default();
    let mut current: Option<JobSpec> = None;
    // The job files read, in order: after the last, options outside a --name have nothing
    // to apply to.
    let mut job_files: Vec<String> = Vec::new();
    let mut fio_options = false;
    let mut i = 0;
    while i < args.len() {
        let tok = &args[i];
        i += 1;
        if tok == "-h" || tok == "--help" {
            inv.help = true;
            continue;
        }
        let Some(body) = tok.strip_prefix("--") else {
            if tok.starts_with('-') && tok.len() > 1 {
                return Err(CliError::usage(format!(
                    "'{tok}': unknown flag (valid: --key=value fio options, --job FILE, --output-format, --minimal, --terse-version, --output, --force, --verify, --progress, --mpi; see raidlab run --help)"
                )));
            }
            // A bare argument is a job file, as on fio's command line.
            if let Some(job) = current.take() {
                inv.jobs.push(job);
            }
            inv.jobs.extend(read_job_file(tok, &global, &inv.sections)?);
            job_files.push(tok.clone());
            fio_options = true;
            continue;
        };
        let (key, inline) = match body.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (body, None),
        };
        if key.is_empty() {
            return Err(CliError::usage(format!(
                "'{tok}': expected --key=value (valid keys: see raidlab run --help)"
            )));
        }
        // Value of an option that needs one: inline, or the next argument.
        let mut take_value = |what: &str| -> Result<String, CliError> {
            if let Some(v) = inline {
                return Ok(v.to_string());
            }
            match args.get(i) {
                Some(v) if !v.starts_with("--") => {
                    i += 1;
                    Ok(v.clone())
                }
                _ => Err(CliError::usage(format!("--{key}: needs a value ({what})"))),
            }
        };
        match key {
            "output-format" => {
                let v = take_value(
                    "valid: text, normal, json, json+, terse, or several joined by commas",
                )?;
                inv.formats = OutputFormat::parse_list(&v)
                    .map_err(|m| CliError::usage(format!("--output-format={v}: {m}")))?;
            }
            "minimal" if inline.is_some() => {
                return Err(CliError::usage(format!("{tok}: --minimal takes no value")));
            }
            // fio's --minimal: terse output.
            "minimal" => inv.formats = vec![OutputFormat::Terse],
            "terse-version" => {
                let v = take_value("valid: 3")?;
                if v.trim() != raidlab_result::render::terse::TERSE_VERSION.to_string() {
                    return Err(CliError::usage(format!(
                        "--terse-version={v}: raidlab writes terse version 3 only (valid: 3)"
                    )));
                }
            }
            "output" => {
                let v = take_value("a file to write the results to")?;
                if v.is_empty() {
                    return Err(CliError::usage("--output: empty file name (valid: a path)"));
                }
                inv.output = Some(PathBuf::from(v));
            }
            "job" => {
                let v = take_value("a fio job file")?;
                if let Some(job) = current.take() {
                    inv.jobs.push(job);
                }
                inv.jobs.extend(read_job_file(&v, &global, &inv.sections)?);
                job_files.push(v);
                fio_options = true;
            }
            "section" => {
                // (Taken before the job files are read, above.)
                take_value("a job file section's name")?;
            }
            "force" | "progress" | "no-progress" | "mpi" | "readonly" | "parse-only"
                if inline.is_some() =>
            {
                return Err(CliError::usage(format!("{tok}: --{key} takes no value")));
            }
            "force" => inv.force = true,
            "readonly" => inv.readonly = true,
            "parse-only" => inv.parse_only = true,
            // (`raidlab run` hands an invocation with --mpi to `cmd::mpi` before this.)
            "mpi" => inv.mpi = true,
            "progress" => inv.progress = Some(true),
            "no-progress" => inv.progress = Some(false),
            // fio's name for it: --eta=always|never|auto.
            "eta" => {
                let v = take_value("valid: always, never or auto")?;
                inv.progress = match v.trim() {
                    "always" => Some(true),
                    "never" => Some(false),
                    "auto" => None,
                    other => {
                        return Err(CliError::usage(format!(
                            "--eta={other}: not a choice (valid: always, never or auto, as fio takes them)"
                        )))
                    }
                };
            }
            // Bare --verify is raidlab's: verify=crc32c for every job. --verify=MODE is fio's.
            "verify" if inline.is_none() => inv.verify = true,
            _ => {
                fio_options = true;
                let value: Option<String> = match inline {
                    Some(v) => Some(v.to_string()),
                    // A log option's value is optional in a job file, but on the command line
                    // it takes the next argument, as fio's does.
                    None if is_flag(key) && !key.starts_with("write_") => None,
                    None => match args.get(i) {
                        Some(v) if !v.starts_with("--") => {
                            i += 1;
                            Some(v.clone())
                        }
                        _ => None,
                    },
                };
                let shown = match &value {
                    Some(v) => format!("--{key}={v}"),
                    None => format!("--{key}"),
                };
                if key == "name" {
                    let mut job = global.clone();
                    apply_option(&mut job, key, value.as_deref())
                        .map_err(|e| flag_error(&shown, key, e))?;
                    if let Some(prev) = current.replace(job) {
                        inv.jobs.push(prev);
                    }
                    continue;
                }
                let target = match (&mut current, job_files.last()) {
                    (Some(job), _) => job,
                    (None, Some(file)) => {
                        // Validate the option first so a bad one reports its own error.
                        apply_option(&mut JobSpec::default(), key, value.as_deref())
                            .map_err(|e| flag_error(&shown, key, e))?;
                        return Err(CliError::usage(format!(
                            "{shown}: comes after --job {file} with no --name before it (valid: options before --job apply to the file's jobs; after --name=X to job X)"
                        )));
                    }
                    (None, None) => &mut global,
                };
                apply_option(target, key, value.as_deref())
                    .map_err(|e| flag_error(&shown, key, e))?;
                if let Some(note) = value
                    .as_deref()
                    .and_then(|v| iec_note(key, v, target.kb_base))
                {
                    ewriteln!("raidlab: note: --{note}");
                }
            }
        }
    }
    if let Some(job) = current.take() {
        inv.jobs.push(job);
    }
    // (Job files of which --section picked nothing make no job of the options.)
    if inv.jobs.is_empty() && fio_options && (inv.sections.is_empty() || job_files.is_empty()) {
        // Options but no --name: one job made of them, as `fio --filename=… --rw=…` would
        // with a name.
        inv.jobs.push(global);
    }
    if !inv.sections.is_empty() {
        if let Some(s) = inv
            .sections
            .iter()
            .find(|s| !inv.jobs.iter().any(|j| &j.name == *s))
        {
            // (The job files' sections, which --section skipped as they were read, and
            // the jobs given by --name.)
            let mut names: Vec<String> = job_files
                .iter()
                .flat_map(|f| raidlab_workload::jobfile::section_names(std::path::Path::new(f)))
                .chain(inv.jobs.iter().map(|j| j.name.clone()))
                .collect();
            names.dedup();
            return Err(CliError::usage(format!(
                "--section={s}: no job of that name (valid: {})",
                if names.is_empty() {
                    "a section of a job file given with --job".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
        inv.jobs.retain(|j| inv.sections.contains(&j.name));
    }
    if inv.verify {
        for j in &mut inv.jobs {
            j.verify = true;
        }
    }
    for j in &inv.jobs {
        j.validate().map_err(|e| CliError::usage(e.message))?;
    }
    raidlab_workload::waitees(&inv.jobs).map_err(|e| CliError::usage(e.message))?;
    if inv.readonly && !inv.help {
        if inv.jobs.is_empty() && !inv.parse_only {
            return Err(CliError::usage(
                "--readonly: the embedded default writes its scratch file (valid: jobs that only read, e.g. --name=r --rw=read --filename=PATH)",
            ));
        }
        refuse_writers(&inv.jobs)?;
    }
    Ok(inv)
}

/// fio's `--readonly`: a job that would write or trim its target is refused, in one line.
/// (A file that would be laid out is refused by the engine, which knows the regions.)
fn refuse_writers<'a>(jobs: impl IntoIterator<Item = &'a JobSpec>) -> Result<(), CliError> {
    match jobs
        .into_iter()
        .find(|j| j.writes() || j.trims() || j.create_only)
    {
        Some(j) => Err(CliError::usage(format!(
            "--readonly: job '{}' {} (valid: jobs that only read, or verify_only, or no --readonly)",
            j.name,
            if j.create_only {
                "lays its files out (create_only)".to_string()
            } else {
                format!("writes or trims (rw={})", j.rw)
            }
        ))),
        None => Ok(()),
    }
}

fn read_job_file(
    path: &str,
    global: &JobSpec,
    sections: &[String],
) -> Result<Vec<JobSpec>, CliError> {
    // `${VAR}` from the environment, fio's keywords and `include FILE` lines, as fio reads
    // job files; with --section, the other job sections skipped whole.
    let (jobs, notes) = raidlab_workload::read_job_file(
        std::path::Path::new(path),
        global.clone(),
        |v| std::env::var(v).ok(),
        Some(machine_keywords()),
        sections,
    )
    .map_err(|e| CliError::usage(e.message))?;
    for note in notes {
        ewriteln!("raidlab: {note}");
    }
    Ok(jobs)
}

/// This machine's figures for fio's job-file keywords, as fio reads them: the page size,
/// physical memory in MiB and the CPUs online (`sysconf`).
fn machine_keywords() -> raidlab_workload::keywords::Keywords {
    // SAFETY: sysconf has no preconditions; a name it does not know returns -1.
    let conf = |name| u64::try_from(unsafe { libc::sysconf(name) }).unwrap_or(0);
    let pagesize = conf(libc::_SC_PAGESIZE).max(1);
    raidlab_workload::keywords::Keywords {
        pagesize,
        mb_memory: conf(libc::_SC_PHYS_PAGES).saturating_mul(pagesize) >> 20,
        ncpus: conf(libc::_SC_NPROCESSORS_ONLN).max(1),
    }
}

/// One-line descriptions of the fio options, for `--help`.
fn option_help(name: &str) -> &'static str {
    match name {
        "name" => "start a new job with this name (options before the first --name are global)",
        "rw" | "readwrite" => {
            "read, write, randread, randwrite, rw/readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite (each block trimmed, then written); PATTERN:N: a random offset every N requests (randread:8), or N bytes skipped after each (write:4k, read:-8k back)"
        }
        "continue_on_error" => {
            "go on past an I/O error of this kind, counting it: none (default), read, write, io, verify, all"
        }
        "ignore_error" => {
            "errnos continue_on_error goes on past, for reads,writes,verify, e.g. EIO:ENOSPC,ENOSPC (default EIO, EILSEQ)"
        }
        "error_dump" => {
            "1 (default): each error continue_on_error goes past is told on standard error; 0: only the one that ends the job"
        }
        "rw_sequencer" => {
            "with rw=randread:N, the requests after each random one go on from it (sequential, default) or repeat it (identical)"
        }
        "bs" | "blocksize" => "block size, e.g. 4k, 1m; 'R,W' sets reads and writes (and trims) apart, 'R,W,T' trims too",
        "bssplit" => "weighted block sizes, e.g. 4k/10:64k/50:32k/40; 'R,W[,T]' apart",
        "bsrange" | "blocksize_range" => {
            "block sizes drawn from MIN-MAX, multiples of MIN, e.g. 4k-64k; 'R,W[,T]' apart"
        }
        "bs_unaligned" | "blocksize_unaligned" => "bsrange sizes need not be multiples of MIN",
        "random_distribution" => {
            "random offsets: random (default), zipf:THETA, pareto:H, normal:DEV (or gauss), [:CENTER]; zoned:ACCESS/SIZE%:..., zoned_abs:ACCESS/SIZE:..."
        }
        "percentage_random" => {
            "percent of a random job's requests that are random, the rest sequential (N or R,W[,T])"
        }
        "allrandrepeat" => "1: every random choice repeats run after run, even with randrepeat=0 (no seed is drawn)",
        "randrepeat" => {
            "1 (default): the same random sequence each run; 0: a seed drawn per run, shown in the results"
        }
        "new_group" => "start a new reporting group (groupid) without waiting, unlike stonewall",
        "exitall" => "a job's end stops others (as fio, given in any job it holds for every job's end; exit_what says which)",
        "exitall_on_error" => "this job's end with an error stops others (exit_what says which)",
        "exit_what" => "what a job's end stops under exitall: group (default: its reporting group's running jobs), stonewall (all running; the next stonewall group runs), all (later groups do not run)",
        "iodepth" => "requests in flight per job (1-65536)",
        "numjobs" => "jobs per target, running side by side",
        "rwmixread" => "percent reads for rw/randrw (0-100)",
        "rwmixwrite" => "percent writes for rw/randrw (0-100)",
        "size" => {
            "bytes of the region each job covers, or N% of the target (default, or 0: to the end of the target)"
        }
        "blockalign" | "ba" => "boundary of random offsets (default: the block size), e.g. 512",
        "norandommap" => {
            "random offsets drawn with replacement (default: each block once a pass, as fio)"
        }
        "random_generator" => "tausworthe (default), tausworthe64: raidlab's own generator; lfsr: every block once a pass even with norandommap",
        "number_ios" => "stop after this many requests a loop, counted over all loops (if nothing ends the job first)",
        "io_size" | "io_limit" => {
            "bytes each pass transfers, or N% of the target (default, or 0: size); less touches part of the region"
        }
        "offset" => "start of the region, bytes, or N% of the target (rounded up to the block size)",
        "offset_increment" => "job i of numjobs starts at offset + i * this (bytes, or N% of the target)",
        "zonemode" => "none (default); strided: zonesize bytes in each zone, then skip zoneskip past it (fio's; a drive's zone profile)",
        "zonesize" => "with zonemode=strided: bytes moved in a zone before the next",
        "zonerange" => "with zonemode=strided: a zone's length (default: zonesize)",
        "zoneskip" => "with zonemode=strided: bytes skipped after each zone (past the file's end: back to the region's start)",
        "file_append" => "1: the job's region starts at its regular files' end (offset = their size as the run starts)",
        "offset_align" => "what an offset given in percent is rounded up to (0, the default: the smallest block size)",
        "runtime" | "timeout" => "stop after this long (10s, 500ms, 2m)",
        "time_based" => "keep going over the region until runtime ends",
        "ramp_time" => "run this long before counting",
        "loops" => "passes over the region",
        "direct" => "1: O_DIRECT (bypass the page cache)",
        "buffered" => "fio's inverse of direct: 1 (through the page cache), 0 (O_DIRECT)",
        "end_fsync" => {
            "1: flush written data to the device when the job ends (counted in its runtime)"
        }
        "fsync_on_close" => "1: flush a file the job wrote as the job closes it at its end (counted in its runtime, as end_fsync)",
        "pre_read" => "1: read the job's region into the page cache before it starts, untimed (its buffered reads then measure memory; invalidate is passed over)",
        "invalidate" => {
            "1 (default): drop the page cache's copy of the region before the job starts"
        }
        "ioengine" => {
            "io_uring (default), libaio, psync, sync, vsync, pvsync, pvsync2, mmap (one request at a time, a copy to or from the file mapped shared), null"
        }
        "description" => "text shown with the job's results",
        "iodepth_batch_submit" | "iodepth_batch" => {
            "requests handed to the kernel at once (default 1: each as it is queued; 0: the whole depth)"
        }
        "iodepth_low" => "a full queue drains to this many in flight before it is filled again",
        "iodepth_batch_complete_min" | "iodepth_batch_complete" => {
            "completions each reap waits for (default 1)"
        }
        "iodepth_batch_complete_max" => "completions each reap takes at most (default: the minimum)",
        "fixedbufs" => "1 (default): register the job's buffers with the io_uring ring",
        "registerfiles" => "1 (default): register the job's file with the io_uring ring",
        "sqthread_poll" => "1: a kernel thread polls the io_uring submission queue",
        "sqthread_poll_cpu" => "the CPU that polling thread is bound to",
        "hipri" => "1: poll the device for completions (direct I/O, a device with polled queues)",
        "gtod_reduce" => "1: leave latency and the bandwidth samples out of the results",
        "disable_clat" => "1: leave completion latency out of the results",
        "disable_lat" => "1: leave total latency out of the results",
        "disable_slat" => "accepted for fio compatibility (raidlab reports no submission latency)",
        "disable_bw_measurement" | "disable_bw" => {
            "1: leave the bandwidth and IOPS samples out of the results"
        }
        "scramble_buffers" => {
            "1 (default): stamp each write's 512-byte sectors with its offset, so no two are alike"
        }
        "refill_buffers" => "1: fresh random bytes for every write",
        "zero_buffers" => "1: writes carry zeros",
        "buffer_pattern" => "writes repeat these bytes: 0xHEX, \"text\", or both in a row",
        "buffer_compress_percentage" => "writes compress about this much (0-100): zeros after random bytes",
        "buffer_compress_chunk" => "the span each compressible layout covers (default 512; 0: the block)",
        "dedupe_percentage" => "this share of writes (0-100) repeat earlier bytes, as dedupe_mode says",
        "dedupe_mode" => "repeat (default): a deduplicable write repeats the last unique one; working_set: a block of a working set, drawn at random",
        "dedupe_working_set_percentage" => "with dedupe_mode=working_set, the share of the job's size (0-100, default 5) its set holds",
        "dedupe_global" => "1: every job draws from one working set, so their writes dedupe against one another's",
        "unlink" => "1: remove the job's file after the run (raidlab's own only, unless --force)",
        "directory" => "folder(s) for the job's files: without filename, nrfiles per job, JOBNAME.N.0, JOBNAME.N.1, ...",
        "filename_format" => "how a job's files are named: $jobname, $jobnum, $filenum (default $jobname.$jobnum.$filenum); without $jobnum the jobs share the files",
        "openfiles" => "most files a job has open at once: raidlab keeps all of a job's files open, so it must be at least their number",
        "overwrite" => "1: a file only writing jobs use is laid out before they start (raidlab's default); 0: only allocated (fallocate, native unless given), as fio's default",
        "nrfiles" | "nr_files" => "files per job in directory (default 1), named JOBNAME.N.F; the job's size is shared among them",
        "filesize" => "bytes of each of a job's files (default: size shared among them)",
        "file_service_type" => "which of a job's files the next request goes to: roundrobin (default), sequential, random; :N requests before moving on",
        "steadystate" | "ss" => "fio's steady-state criterion: iops, iops_slope (default, 0.01%), bw or bw_slope, a colon, a limit (a value, or a percent of the mean)",
        "steadystate_duration" | "ss_dur" => "end the job once its last this many seconds of once-a-second samples meet steadystate (0, the default: never)",
        "steadystate_ramp_time" | "ss_ramp" => "time from the job's start before steady-state samples are taken",
        "max_latency" => "end the job with ETIMEDOUT once a request's total latency exceeds this (a bare number is µs, as fio's)",
        "latency_target" => "find the deepest queue (up to iodepth) at which requests' total latency stays under this, then measure there (a bare number is µs, as fio's)",
        "latency_window" => "how long each depth is tried before it is judged (a bare number is µs)",
        "latency_percentile" => "the share of a window's requests, in percent, that must meet latency_target (default 100: every one)",
        "latency_run" => "keep adjusting the depth to the target until the job ends, rather than settling on one",
        "sim_converge" => "raidlab's, simulated targets only: 1 (default) may stop a simulated run once its rate has converged and carry each job on at that rate to its size or runtime ('stopped by converged'); 0 simulates every request to the end",
        "rank_shift" => "raidlab's, under --mpi: rank r runs the job as rank (r + N) mod ranks (its regions, files, offsets), as IOR's -C reorders tasks so a read phase reads what another host wrote",
        "read_iolog" => "replay a fio iolog (version 2 or 3, as fio's write_iolog writes) or a blktrace (blkparse -d): its requests, files, syncs and times, in place of rw, bs and size",
        "create_only" => "lay the job's files out and run nothing else (the result shows nothing done); real runs only",
        "exec_prerun" => "a shell command run before the job's first request (its output in JOB.prerun.txt, JOB.rankR.prerun.txt under --mpi); a failure ends the job with an error; real runs only",
        "exec_postrun" => "a shell command run after the job's last request (its output in JOB.postrun.txt, JOB.rankR.postrun.txt under --mpi); real runs only",
        "write_iolog" => "log every request and sync the job issues, with its time, as fio's version 3 iolog (read_iolog, and fio's, replay it); one job a log",
        "replay_no_stall" => "replay the trace's requests as fast as iodepth takes them, in its order, ignoring its times",
        "replay_time_scale" => "percent of the trace's rate to replay at (200: its times halved)",
        "replay_redirect" => "send every request of the trace to this one target (a file, device, array: or sim: target) instead of the files it names",
        "replay_align" => "round the trace's offsets down to a multiple of this power of two",
        "replay_scale" => "divide the trace's offsets by this",
        "replay_skip" => "leave these kinds of the trace's requests out: read, write, trim, sync (comma-separated)",
        "job_per_file" => "raidlab's: each file of filename (or directory's files) is a job of its own, as one dd per device (fio runs one job over all of them)",
        "clocksource" => "clock_gettime (what raidlab reads); gettimeofday and cpu are taken as it",
        "lockmem" => "pin this much memory (mlock) while the job runs, e.g. 1g: less for the page cache",
        "prio" => "I/O priority level of the job's requests, 0 (served first) to 7; best effort class unless prioclass says",
        "prioclass" => "I/O priority class: 1 realtime (needs privileges), 2 best effort, 3 idle",
        "nice" => "the job's threads' nice value, -20 to 19 (below 0 needs privileges)",
        "allow_mounted_write" => "write a block device the kernel holds (a mounted filesystem, swap, md), which is refused without it, --force or not",
        "ioscheduler" => "run the target's block device with this kernel I/O scheduler (none, mq-deadline, kyber, bfq: what its queue/scheduler offers), switched back after the run",
        "allow_file_create" => "1 (default): a missing file is created; 0: refused, so a misspelt name is not made a new file",
        "create_fsync" => "1 (default): a file laid out is flushed to its device before the jobs start; 0: not (its data may still be cached)",
        "create_serialize" => "taken as fio's; raidlab lays jobs' files out one after another either way (before anything is timed)",
        "fill_fs" => "the same as fill_device",
        "opendir" => "a folder: every regular file below it (recursively, in name order) is one of the job's files",
        "fill_device" => "1: write until the filesystem is full, which ends the job as its size would (without size: a file's region is the filesystem's free space); also fill_fs",
        "fallocate" => "a new file only writers use: none, native, posix, keep, truncate (default: laid out with the job's buffer content)",
        "cpus_allowed" => "bind the job's threads to these CPUs, e.g. 0-3,6",
        "cpumask" => "the same as a bit mask, e.g. 0xf",
        "cpus_allowed_policy" => "shared (default): every job on the whole set; split: one CPU each",
        "numa_cpu_nodes" => "run the job on the CPUs of these NUMA nodes, e.g. 0 or 0-1 (with cpus_allowed, on those of its CPUs that are theirs)",
        "numa_mem_policy" => "where the job's memory comes from: default, local, prefer:NODE, bind:NODES, interleave:NODES",
        "do_verify" => "1 (default): a write job with verify reads back and checks what it wrote (counted as its reads); 0: it reads nothing back, not even verify_backlog's",
        "verify_backlog" => "N: every N blocks written, the job lets what is in flight complete and reads back and checks them (inside its time, counted as its reads); 0 (default): only at the end",
        "verify_backlog_batch" => "how many of those blocks are read back, the oldest first (default: all)",
        "verify_only" => "1: a write job with verify reads back and checks what an earlier run of it wrote, writing nothing (its requests are the writes', as reads)",
        "verify_fatal" => "1: the first verify mismatch ends the job",
        "verify_dump" => "1: each block that fails its check is written to FILE.OFFSET.received (and what it should hold to FILE.OFFSET.expected) in the working folder",
        "verify_async" => "N threads check the job's reads off its own thread (default 0: the job checks them itself); a read being checked holds its slot",
        "verify_interval" => "each span of this many bytes of a block carries its own header and is checked on its own (default: one a block; as fio, at most the smallest block, dividing the write sizes)",
        "randseed" => "seed of the request stream",
        "filename" => {
            "targets, ':'-separated: files, block devices, array:M1,M2,..., sim:SYSTEM.toml[#LUN]; several run as one job over them all, as fio's (job_per_file=1: one job each)"
        }
        "verify" => {
            "crc32c: writes carry a checked header (fio's md5, sha256, ... are taken as crc32c); pattern: verify_pattern alone, no header; none"
        }
        "verify_pattern" => "bytes written blocks carry after their header, repeated, and reads check (0x hex bytes, a quoted string, or a decimal number); turns verify on",
        "group_reporting" => "report the jobs of a stonewall group (and their instances) as one",
        "fadvise_hint" => "1 (default): advise the kernel of random reads for a random pattern (no read-ahead), sequential otherwise (twice the read-ahead); sequential, random; 0: no advice",
        "kb_base" => "1024 (default): sizes given after it are powers of 2 whatever their suffix; 1000: k, m, g are powers of 10 (KiB, MiB still of 2) and the text shows decimal units first",
        "stats" => "1 (default): report the job; 0: run it and leave it out of the results (a preconditioning job)",
        "disk_util" => "1 (default): report what the disks under the job's files did over the run (Disk stats, JSON disk_util); 0: leave them out",
        "stonewall" | "wait_for_previous" => "wait for the jobs before this one to finish",
        "wait_for" => "start once every instance of the job of this name (defined before this one) has ended; the reporting group stays",
        "flow" => "weight in the job's flow (flow_id): its jobs keep the requests they issue in proportion to their weights (0, default: in none)",
        "flow_id" => "the flow a job with flow=N is in (default 0)",
        "flow_sleep" => "how long a job ahead of its flow share sleeps, its requests done first (bare number: µs; default 0: it looks again at once)",
        "thread" | "threads" => "accepted for fio compatibility (jobs are always threads)",
        "io_submit_mode" => "inline (fio's default: each job submits and completes its own I/O, as raidlab always does); offload is refused",
        "rate" => "cap bytes/s, e.g. 10m (each direction); 'R,W' apart, ',W' writes only, 'R,' reads only; a mixed job issues the other direction while one is ahead of its cap",
        "rate_iops" => "cap IOPS; 'R,W' apart as rate",
        "rate_min" | "ratemin" => "end the job with an error if bytes/s over a rate_cycle fall below this",
        "rate_iops_min" => "end the job with an error if IOPS over a rate_cycle fall below this",
        "rate_process" => "linear (default) or poisson: exponential gaps, seeded",
        "rate_cycle" | "ratecycle" => "window for rate_min and rate_iops_min, ms (default 1000)",
        "thinktime" => "stall this long after each thinktime_blocks I/Os (bare number: µs)",
        "thinktime_spin" => "spend this much of thinktime busy on the CPU (bare number: µs)",
        "thinktime_blocks" => "I/Os between stalls (default 1)",
        "thinktime_blocks_type" => "complete (default): count completed I/Os; issue: issued ones",
        "thinktime_iotime" => "also stall after issuing this long (bare number: s)",
        "rate_ignore_thinktime" => "1: time spent thinking counts toward the rate (no catching up after it)",
        "startdelay" => "wait this long before the job starts; LOW-HIGH draws per job (bare: s)",
        "fsync" => "fsync the target after every N writes (its latency in the sync section)",
        "fdatasync" => "fdatasync the target after every N writes",
        "sync" => "none (default), sync/1: O_SYNC writes, dsync: O_DSYNC writes",
        "write_bw_log" => "bandwidth log NAME_bw.N.log (N: the job's number; no value: the job's name)",
        "write_iops_log" => "IOPS log NAME_iops.N.log",
        "write_lat_log" => "latency logs NAME_clat.N.log, NAME_slat.N.log (empty), NAME_lat.N.log",
        "per_job_logs" => "1 (default): each job's logs carry its number; 0: NAME_bw.log and so on, shared by the jobs that name it, one job after another",
        "write_hist_log" => "completion-latency histogram log NAME_clat_hist.N.log (fio's bins; fiologparser_hist.py reads it)",
        "log_hist_msec" => "the histogram log's window, ms (without it the file stays empty)",
        "log_hist_coarseness" => "add neighbouring histogram bins in pairs this many times, 0 (1856 bins) to 6 (29)",
        "log_avg_msec" => "average the logs over windows of this many ms (default 0: every I/O)",
        "log_offset" => "1: log lines carry the request's offset",
        "log_unix_epoch" => "1: log lines are stamped with the wall clock, ms since the Unix epoch (real runs only)",
        "log_max_value" => "1: with log_avg_msec, a window's latency lines give its highest latency, not its mean",
        "bw_avg_time" | "bwavgtime" => "interval of the results' bandwidth samples (bw_min, ...), ms (default 500)",
        "iops_avg_time" | "iopsavgtime" => "interval of the results' IOPS samples (iops_min, ...), ms (default 500)",
        "percentile_list" => "latency percentiles to list, e.g. 50:99:99.9 (at most 20)",
        "clat_percentiles" => "1 (default): list completion-latency percentiles",
        "lat_percentiles" => "1: list total-latency percentiles (text, JSON's lat_ns, terse); off by default, as fio",
        "unit_base" => "1: the text's rates in bits a second (Mibit/s, Mbit/s); 0 (default) or 8: bytes",
        "significant_figures" => "digits of the text output's rates and sizes, 1 to 10 (default 4)",
        "unified_rw_reporting" => "none/0 (default): reads and writes apart; mixed/1: as one direction, 'mixed', in their place; both/2: apart, then 'mixed'",
        _ => "",
    }
}

fn help_text() -> String {
    let mut s = String::from(
        "raidlab run: run a workload, in fio's words, against files, block devices, arrays or simulated systems

Usage:
  raidlab run [OPTIONS] [--name=JOB FIO-OPTIONS...]... [--job FILE.fio]...
  raidlab run                     measure the embedded default (scratch file in a temporary folder)

fio options (--key=value, --key value, or a bare flag; the same in job files as key=value):
",
    );
    for name in OPTION_NAMES {
        s.push_str(&format!("  --{name:<18} {}\n", option_help(name)));
    }
    s.push_str(
        "
raidlab's options:
  --job FILE.fio        read a fio job file ([global], [job] sections, ; and # comments);
                        options given before it are defaults for its jobs
  --output-format FMT   text (default, also normal), json, json+ (json with fio's latency
                        bins), terse (fio's terse version 3), or several joined by commas
  --minimal             terse output (--output-format=terse)
  --terse-version 3     accepted (3 is the only terse version raidlab writes)
  --output FILE         write the results to FILE instead of standard output
  --readonly            refuse every job that writes or trims, and any file that would be
                        laid out (fio's safety guard for measuring disks that hold data)
  --parse-only          read and check the jobs, run nothing (fio's)
  --section NAME        run only the job (job file section) of this name; repeatable (fio's)
  --force               write over a target that holds a filesystem, partition table or array,
                        or a file holding data raidlab did not lay out (the file is then
                        marked as raidlab's scratch: user.raidlab.scratch); start an
                        array:M1,M2,… target that is dirty and degraded, or that lacks a
                        member in service (it runs degraded)
  --verify              verify=crc32c for every job
  --progress            progress line on stderr (default: when stderr is a terminal)
  --no-progress         no progress line
  --eta=WHEN            fio's name for them: always (--progress), never (--no-progress) or
                        auto (the default)
  --mpi                 one run over the ranks of an MPI job (mpirun -np N raidlab run --mpi …),
                        as IOR's: rank r's instances are numbered after the ranks before it
                        (offset_increment regions of a shared file, or directory files
                        JOB.N.0 of their own); the ranks meet before each stonewall group;
                        rank 0 prints the results, group_reporting folding the ranks
  -h, --help            this text

Units: input sizes follow fio (4k = 4096 bytes); output labels MiB/s (2^20 B/s) and MB/s (10^6 B/s).

The embedded default job (filename and direct are filled in):
",
    );
    s.push_str(EMBEDDED_DEFAULT_JOB);
    s
}

// ---------------------------------------------------------------------------------------
// Ctrl-C: the first one asks the run to stop (results still print), the second exits now.
// SIGTERM does the same, as fio's (`timeout`, a batch system, mpirun passing on a Ctrl-C).

static INTERRUPTS: AtomicU32 = AtomicU32::new(0);
/// The first interrupt's signal (SIGINT or SIGTERM), for saying which stopped a sweep.
static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);
static STOP_PTR: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());
/// Scratch paths (file, folder) the handler removes before exiting on a second Ctrl-C.
static SCRATCH_FILE: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static SCRATCH_DIR: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
/// Once a run's outcome is said and the process only has to leave: its exit code plus one
/// (zero while the run goes on).
static LEAVING: AtomicI32 = AtomicI32::new(0);
/// Nothing is in flight to wait for (a sweep's dry run only prints): the first Ctrl-C or
/// SIGTERM quits as a second one would.
static AT_ONCE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(sig: libc::c_int) {
    // Only async-signal-safe calls here: atomics, write, unlink, rmdir, _exit.
    let leaving = LEAVING.load(Ordering::SeqCst);
    if leaving != 0 {
        // Nothing is left to stop or to say: leave now, with the code already decided.
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(leaving - 1) };
    }
    let n = INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    if n == 0 {
        FIRST_SIGNAL.store(sig, Ordering::SeqCst);
    }
    if n == 0 && !AT_ONCE.load(Ordering::SeqCst) {
        let stop = STOP_PTR.load(Ordering::SeqCst);
        if !stop.is_null() {
            // SAFETY: the pointer comes from a leaked Arc that lives for the whole process.
            unsafe { (*stop).store(true, Ordering::SeqCst) };
        }
        let msg: &[u8] = if sig == libc::SIGTERM {
            b"\nraidlab: terminating on SIGTERM: stopping after the I/O in flight; SIGTERM or Ctrl-C again to quit now\n"
        } else {
            b"\nraidlab: stopping after the I/O in flight; Ctrl-C again to quit now\n"
        };
        // SAFETY: writing a static buffer to fd 2.
        unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
    } else {
        // SAFETY: the paths are leaked C strings, valid for the whole process.
        unsafe {
            let f = SCRATCH_FILE.load(Ordering::SeqCst);
            if !f.is_null() {
                libc::unlink(f);
            }
            let d = SCRATCH_DIR.load(Ordering::SeqCst);
            if !d.is_null() {
                libc::rmdir(d);
            }
            libc::_exit(128 + sig);
        }
    }
}

/// A scratch folder for a second Ctrl-C to remove before quitting (if it is empty by then:
/// the handler may only call `rmdir`). `raidlab sweep` registers its own.
pub(crate) fn remove_on_quit(dir: &Path) {
    SCRATCH_DIR.store(leak_c_path(dir), Ordering::SeqCst);
}

/// The scratch file a second Ctrl-C removes before that folder (one at a time: the latest).
pub(crate) fn remove_file_on_quit(file: &Path) {
    SCRATCH_FILE.store(leak_c_path(file), Ordering::SeqCst);
}

/// From now on the first Ctrl-C or SIGTERM quits at once (removing the scratch folder
/// registered with [`remove_on_quit`], exit 128 + the signal), as a second one always does:
/// for work with nothing in flight to finish and nothing to store, such as a sweep's dry
/// run listing its points, where "stopping after the I/O in flight" would only mean going
/// on to the end.
pub(crate) fn quit_on_first_interrupt() {
    AT_ONCE.store(true, Ordering::SeqCst);
    let _ = stop_flag();
}

/// From now on a Ctrl-C or SIGTERM ends the process at once, silently, with `code`: the run
/// is over and said, and only leaving is left (an MPI rank being finalized, whom mpirun
/// signals when another rank has exited with an error).
pub(crate) fn leave_quietly_on_signal(code: i32) {
    LEAVING.store(code.saturating_add(1), Ordering::SeqCst);
}

/// The process-wide stop flag, with the SIGINT and SIGTERM handler installed on first use.
pub(crate) fn stop_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let raw = Arc::into_raw(flag.clone()) as *mut AtomicBool;
        STOP_PTR.store(raw, Ordering::SeqCst);
        // SAFETY: plain sigaction with a handler that only uses async-signal-safe calls.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = libc::SA_RESTART;
            libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
            libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
        }
        flag
    })
    .clone()
}

/// True once Ctrl-C has been pressed, for `raidlab sweep` to stop starting new runs.
pub fn interrupted() -> bool {
    INTERRUPTS.load(Ordering::SeqCst) > 0
}

/// The exit code of a command an interrupt stopped, once it has said what it did: 128 + the
/// signal (130 for Ctrl-C, 143 for SIGTERM), what a shell reports for a process the signal
/// ended and what a second Ctrl-C exits with. `None` when no interrupt came.
pub fn interrupt_exit_code() -> Option<i32> {
    interrupted().then(|| match FIRST_SIGNAL.load(Ordering::SeqCst) {
        0 => 128 + libc::SIGINT,
        sig => 128 + sig,
    })
}

/// What stopped the run, as a message says it: `SIGTERM`, or `Ctrl-C` (SIGINT, and before
/// any signal came).
pub fn interrupt_name() -> &'static str {
    if FIRST_SIGNAL.load(Ordering::SeqCst) == libc::SIGTERM {
        "SIGTERM"
    } else {
        "Ctrl-C"
    }
}

/// Catch Ctrl-C from now on: the first stops what is running after its I/O in flight (and a
/// sweep before its next run), a second quits at once.
pub fn catch_interrupts() {
    let _ = stop_flag();
}

fn leak_c_path(p: &Path) -> *mut libc::c_char {
    use std::os::unix::ffi::OsStrExt;
    match std::ffi::CString::new(p.as_os_str().as_bytes()) {
        Ok(c) => c.into_raw(),
        Err(_) => std::ptr::null_mut(),
    }
}

// ---------------------------------------------------------------------------------------
// Dispatch.

/// Where a filename points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TargetKind {
    Simulated,
    Array,
    Path,
}

pub(crate) fn target_kind(name: &str) -> TargetKind {
    if name.starts_with("sim:") {
        TargetKind::Simulated
    } else if name.starts_with("array:") {
        TargetKind::Array
    } else {
        TargetKind::Path
    }
}

/// Run `specs`: all simulated (`sim:`) or all real (paths, devices, `array:`). Rendering is
/// the caller's ([`job_options`] gives fio's "job options" for it).
pub fn execute(mut specs: Vec<JobSpec>, opts: &ExecOptions) -> Result<RunResult, CliError> {
    load_traces(&mut specs)?;
    // Every job, once a replayed trace's writes and trims are known (it is read above):
    // `raidlab run` checked the others as it read them, but other callers rely on this one,
    // as calibrate's read-only probes do.
    if opts.readonly {
        refuse_writers(specs.iter())?;
    }
    // randrepeat=0: seeds for this run (already drawn by `raidlab run`, so its job options
    // show the same ones; drawn here for other callers). `directory` likewise.
    draw_seeds(&mut specs);
    open_dirs(&mut specs)?;
    check_directories(&specs)?;
    raidlab_workload::apply_directories(&mut specs);
    if specs.is_empty() {
        return Err(CliError::usage(
            "no jobs to run (give --name=JOB with options, or --job FILE.fio)",
        ));
    }
    for s in &specs {
        s.validate().map_err(|e| CliError::usage(e.message))?;
    }
    let mut sim: Option<(&str, &str)> = None;
    let mut real: Option<(&str, &str)> = None;
    for s in &specs {
        for f in &s.filenames {
            let slot = if target_kind(f) == TargetKind::Simulated {
                &mut sim
            } else {
                &mut real
            };
            slot.get_or_insert((s.name.as_str(), f.as_str()));
        }
    }
    let result = match (sim, real) {
        (Some((sj, sf)), Some((rj, rf))) => {
            return Err(CliError::usage(format!(
                "job '{sj}' targets {sf} (simulated) and job '{rj}' targets {rf} (real): one run is either simulated or real (valid: split them into two runs)"
            )))
        }
        (Some(_), None) => run_simulated(&specs)?,
        _ => {
            if specs.iter().any(|s| !s.sim_converge) {
                note_once!(
                    "sim_converge=0 tells a simulated run to simulate every request; a real \
                     run always moves every request: the results are those of the same run \
                     without it"
                );
            }
            run_real(&specs, opts)?
        }
    };
    for line in ramp_notes(&specs, &result) {
        ewriteln!("raidlab: note: {line}");
    }
    // (Each job once, however many instances it ran as.)
    let mut silent: Vec<String> = Vec::new();
    for line in specs
        .iter()
        .filter_map(raidlab_workload::readback::never_note)
    {
        if !silent.contains(&line) {
            ewriteln!("raidlab: note: {line}");
            silent.push(line);
        }
    }
    if let Some(named) = specs.iter().find_map(|s| s.clocksource_named.as_deref()) {
        note_once!(
            "clocksource={named}: raidlab times every request with \
             clock_gettime(CLOCK_MONOTONIC) in a real run and in virtual time in a \
             simulated one, whichever clock source is named"
        );
    }
    Ok(result)
}

/// fio's `directory`: each folder a job's files go in must be one that exists (raidlab
/// creates the files, not the folder). Checked here, at the edge, before the folders are
/// joined to the file names (a file given as the folder was "cannot check whether F/j.0.0
/// is in use: Not a directory", exit 1).
fn check_directories(specs: &[JobSpec]) -> Result<(), CliError> {
    for s in specs {
        for d in &s.directory {
            let problem = match std::fs::metadata(d) {
                Ok(m) if m.is_dir() => continue,
                Ok(_) => "is not a folder".to_string(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => "does not exist".to_string(),
                Err(e) => format!("cannot be read: {e}"),
            };
            return Err(CliError::usage(format!(
                "job '{}': directory={d} {problem} (valid: an existing folder, in which raidlab creates the job's files; a file or device goes in --filename)",
                s.name
            )));
        }
    }
    Ok(())
}

/// Read each job's `read_iolog` trace and take it as the job's requests and files.
/// fio's `opendir`: a job's files are the regular files below its folder, recursively, in
/// name order (symbolic links not followed). Read here, at the edge, before the run.
pub fn open_dirs(specs: &mut [JobSpec]) -> Result<(), CliError> {
    fn walk(dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
        let mut entries = std::fs::read_dir(dir)?.collect::<Result<Vec<_>, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let ft = e.file_type()?;
            if ft.is_dir() {
                walk(&e.path(), out)?;
            } else if ft.is_file() {
                out.push(e.path().display().to_string());
            }
        }
        Ok(())
    }
    for s in specs.iter_mut() {
        let Some(dir) = s.opendir.take() else {
            continue;
        };
        let name = &s.name;
        let also = if !s.filenames.is_empty() {
            Some("filename")
        } else if !s.directory.is_empty() {
            Some("directory")
        } else {
            None
        };
        if let Some(also) = also {
            return Err(CliError::usage(format!(
                "job '{name}': opendir={dir} gives the job's files, and it also gives {also} (valid: one of the two)"
            )));
        }
        let mut found = Vec::new();
        walk(Path::new(&dir), &mut found).map_err(|e| {
            CliError::usage(format!(
                "job '{name}': opendir={dir}: {e} (valid: a folder raidlab can read)"
            ))
        })?;
        if found.is_empty() {
            return Err(CliError::usage(format!(
                "job '{name}': opendir={dir} holds no regular files (valid: a folder with the files to measure below it)"
            )));
        }
        s.filenames = found;
    }
    Ok(())
}

fn load_traces(specs: &mut [JobSpec]) -> Result<(), CliError> {
    for s in specs.iter_mut().filter(|s| s.trace.is_none()) {
        let Some(path) = s.read_iolog.clone() else {
            continue;
        };
        // (Its conflicts first: a filename beside it is refused before the trace is read.)
        s.validate().map_err(|e| CliError::usage(e.message))?;
        let name = s.name.clone();
        let bytes = std::fs::read(&path).map_err(|e| {
            CliError::usage(format!(
                "job '{name}': read_iolog={path}: {e} (valid: a fio iolog's or a blktrace's path)"
            ))
        })?;
        let trace = if raidlab_workload::iolog::is_blktrace(&bytes) {
            raidlab_workload::iolog::parse_blktrace(
                &bytes,
                &path,
                &s.replay,
                &mut |major, minor| block_device_named(Path::new("/dev"), major, minor),
            )
        } else {
            raidlab_workload::iolog::parse(&String::from_utf8_lossy(&bytes), &path, &s.replay)
        }
        .map_err(|e| CliError::usage(format!("job '{name}': read_iolog: {e}")))?;
        s.attach_trace(trace);
    }
    Ok(())
}

/// The block device under `dir` (searched depth first, names in order, links not followed)
/// whose device number is `major`:`minor`, as fio finds a blktrace's devices.
fn block_device_named(dir: &Path, major: u32, minor: u32) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.is_dir() {
            if let Some(found) = block_device_named(&p, major, minor) {
                return Some(found);
            }
        } else if m.file_type().is_block_device() {
            let rdev = m.rdev();
            if libc::major(rdev) == major && libc::minor(rdev) == minor {
                return Some(p.display().to_string());
            }
        }
    }
    None
}

/// Jobs with a `ramp_time` that counted nothing: they ended (their size done) before the ramp
/// did, so their results are empty rather than measured.
fn ramp_notes(specs: &[JobSpec], result: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for s in specs.iter().filter(|s| s.ramp_time_ns > 0) {
        let counted = result
            .jobs
            .iter()
            .filter(|j| j.name == s.name)
            .any(|j| j.read.total_ios + j.write.total_ios > 0);
        if !counted && result.jobs.iter().any(|j| j.name == s.name) {
            out.push(format!(
                "job '{}' ended within its ramp_time={}: nothing was counted (valid: a size or \
                 runtime that lasts past the ramp, e.g. time_based with runtime)",
                s.name,
                duration_text(s.ramp_time_ns)
            ));
        }
    }
    out
}

fn run_real(specs: &[JobSpec], opts: &ExecOptions) -> Result<RunResult, CliError> {
    let stop = stop_flag();
    let wall_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let run_opts = raidlab_engine::RunOptions {
        force: opts.force,
        progress: opts.progress,
        stop,
        timestamp: wall_ns / 1_000_000_000,
        wall_ns,
        readonly: opts.readonly,
        coordinator: opts.coordinator.clone(),
    };
    let force = opts.force;
    // Arrays opened so far in this run: (target name, its members).
    let mut opened: Vec<(String, Vec<PathBuf>)> = Vec::new();
    let mut resolve = |name: &str| -> Result<raidlab_engine::Target, raidlab_engine::EngineError> {
        match target_kind(name) {
            TargetKind::Array => {
                refuse_second_name(name, &opened)?;
                let target = open_array(name, force)?;
                opened.push((name.to_string(), raidlab_array::split_members(name)));
                Ok(target)
            }
            _ => Ok(raidlab_engine::Target::Path(PathBuf::from(name))),
        }
    };
    let mut result = raidlab_engine::run(specs, &mut resolve, &run_opts).map_err(engine_error)?;
    // io_uring's own options on a job that runs without a ring (another engine, or an
    // array's worker threads): fio refuses them there; raidlab runs the job and says so.
    let ringless = |s: &&JobSpec| {
        s.uring_options_given
            && (s.ioengine != raidlab_workload::IoEngine::IoUring
                || s.filenames
                    .iter()
                    .any(|f| target_kind(f) == TargetKind::Array))
    };
    if let Some(s) = specs.iter().find(ringless) {
        note_once!(
            "job '{}': fixedbufs, registerfiles, sqthread_poll, sqthread_poll_cpu and \
             hipri are io_uring's, and it runs without a ring ({}): they change nothing",
            s.name,
            if s.ioengine == raidlab_workload::IoEngine::IoUring {
                "an array's worker threads"
            } else {
                s.ioengine.name()
            }
        );
    }
    if let Some(named) = specs.iter().find_map(|s| s.verify_named.as_deref()) {
        note_once!(
            "verify={named}: raidlab checks every block by its own header \
             (offset, generation, seed) and CRC32C, whichever checksum verify names"
        );
    }
    if specs
        .iter()
        .any(|s| s.verify && s.writes() && !s.buffers.is_default())
    {
        note_once!(
            "with verify, writes carry verify's headers and data: \
             scramble_buffers, refill_buffers, zero_buffers, buffer_pattern, \
             buffer_compress_percentage and dedupe_percentage do not apply to them"
        );
    }
    if result.timestamp == 0 {
        result.timestamp = wall_ns / 1_000_000_000;
    }
    Ok(result)
}

fn engine_error(e: raidlab_engine::EngineError) -> CliError {
    if e.is_usage() {
        CliError::usage(e.message())
    } else {
        CliError::failed(e.message())
    }
}

/// Refuse an array target whose members are members of an array this run opened under
/// another name (the members in another order, another path to one file): assembled twice in
/// one process, the two would write its stripes and superblocks unaware of each other. The
/// member locks do not catch it, as they are the process' own.
fn refuse_second_name(
    name: &str,
    opened: &[(String, Vec<PathBuf>)],
) -> Result<(), raidlab_engine::EngineError> {
    for member in raidlab_array::split_members(name) {
        for (other, members) in opened {
            if raidlab_array::member::overlaps_any(&member, members).is_some() {
                return Err(raidlab_engine::EngineError::usage(format!(
                    "{name}: member {} is also in {other}, opened in this run: a run opens an array once (valid: the same {other} for every job that uses it)",
                    member.display()
                )));
            }
        }
    }
    Ok(())
}

/// `array:M1,M2,…` → the assembled array as the engine's block target. `--force` also lets
/// a dirty and degraded array start, or one without a member in service (the array crate's
/// meaning of force).
fn open_array(
    name: &str,
    force: bool,
) -> Result<raidlab_engine::Target, raidlab_engine::EngineError> {
    let members = name.strip_prefix("array:").unwrap_or(name);
    if members.trim().is_empty() {
        return Err(raidlab_engine::EngineError::usage(format!(
            "'{name}': no members (valid: array:MEMBER1,MEMBER2,...)"
        )));
    }
    match raidlab_array::open_target(members, &raidlab_array::OpenOptions { force }) {
        Ok(dev) => Ok(raidlab_engine::Target::Block {
            label: name.to_string(),
            dev,
        }),
        Err(e) if e.is_usage() => Err(raidlab_engine::EngineError::usage(format!(
            "{name}: {}",
            e.message()
        ))),
        Err(e) => Err(raidlab_engine::EngineError::failed(format!(
            "{name}: {}",
            e.message()
        ))),
    }
}

fn run_simulated(specs: &[JobSpec]) -> Result<RunResult, CliError> {
    let r = raidlab_sim::run(specs).map_err(CliError::sim)?;
    // What the simulation says of its jobs, each once (a real run says it as it plans them).
    let mut said: Vec<&str> = Vec::new();
    for note in r
        .jobs
        .iter()
        .filter_map(|j| j.sim.as_ref())
        .flat_map(|x| &x.notes)
    {
        if !said.contains(&note.as_str()) {
            said.push(note);
            ewriteln!("raidlab: note: {note}");
        }
    }
    if specs.iter().any(|s| s.verify) {
        note_once!(
            "verify checks data and a simulated run moves none: nothing is \
             checked, but the reads a real run does to check (a write job's at its end, \
             verify_backlog's as it goes) are simulated, and counted as its reads"
        );
    }
    if specs.iter().any(|s| s.fallocate.is_some() || s.lockmem > 0) {
        note_once!(
            "fallocate and lockmem prepare a real file and this machine's \
             memory, and a simulated run has neither (a simulated host's page cache is \
             its system file's): the results are those of the same run without them"
        );
    }
    if specs
        .iter()
        .any(|s| !s.priority.is_default() || s.ioscheduler.is_some())
    {
        note_once!(
            "prio, prioclass, nice and ioscheduler set a real job's priorities \
             and its device's scheduler in this machine's kernel, and a simulated host \
             models no I/O scheduler: the results are those of the same run without them"
        );
    }
    if specs
        .iter()
        .any(|s| !s.cpus.is_empty() || !s.numa_cpu_nodes.is_empty() || s.numa_mem_policy.is_some())
    {
        note_once!(
            "cpus_allowed, cpumask and the numa_ options bind a real job's threads to CPUs (and its memory to nodes), \
             and a simulated host's CPUs are those its system file gives: the results are \
             those of the same run without them"
        );
    }
    if specs.iter().any(|s| !s.buffers.is_default()) {
        note_once!(
            "the buffer options (scramble_buffers, refill_buffers, \
             zero_buffers, buffer_pattern, buffer_compress_*, dedupe_percentage) set what \
             a real run's writes carry, and a simulated device models no data content: \
             the results are those of the same run without them"
        );
    }
    if specs.iter().any(|s| {
        s.iodepth_batch_submit != 1
            || s.iodepth_batch_complete_max != 0
            || !s.fixedbufs
            || !s.registerfiles
            || s.sqthread_poll
            || s.hipri
    }) {
        note_once!(
            "iodepth_batch_submit, iodepth_batch_complete_max, fixedbufs, \
             registerfiles, sqthread_poll and hipri set how a real run makes its system \
             calls, and a simulated host makes none: the results are those of the same \
             run without them"
        );
    }
    let no_page_cache = r
        .jobs
        .iter()
        .any(|j| j.sim.as_ref().is_some_and(|x| x.page_cache.is_none()));
    if no_page_cache && specs.iter().any(|s| !s.direct) {
        note_once!(
            "a simulated host has no page cache unless its system file gives \
             [host] page_cache_mib and copy_mb_s: buffered jobs (direct=0, fio's default) \
             run as direct I/O, one request per block size; give direct=1 to say so, or \
             give the host a page cache"
        );
    }
    Ok(r)
}

/// fio-style size text: `4k`, `1m`, `3g`, or bytes.
fn size_text(b: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if b != 0 && b.is_multiple_of(1u64 << shift) {
            return format!("{}{suffix}", b >> shift);
        }
    }
    b.to_string()
}

fn duration_text(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1000) {
        format!("{}us", ns / 1000)
    } else {
        format!("{ns}ns")
    }
}

/// A job's options in fio's words, for fio's "job options": the core ones always, the
/// others when they differ from the defaults.
/// fio's `R,W,T` form of a per-direction value: one value when all three agree, `R,W` when
/// trims take the writes' (as fio reads two values), else all three.
fn per_dir_text(r: String, w: String, t: String) -> String {
    if r == w && w == t {
        r
    } else if w == t {
        format!("{r},{w}")
    } else {
        format!("{r},{w},{t}")
    }
}

pub fn spec_options(s: &JobSpec) -> Vec<(String, String)> {
    let d = JobSpec::default();
    let mut o: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| o.push((k.to_string(), v));
    put("name", s.name.clone());
    put(
        "filename",
        s.filenames
            .iter()
            .map(|f| f.replace(':', "\\:"))
            .collect::<Vec<_>>()
            .join(":"),
    );
    // Targets keep their prefix's colon unescaped, as they are written.
    if let Some(last) = o.last_mut() {
        last.1 = last
            .1
            .replace("array\\:", "array:")
            .replace("sim\\:", "sim:");
    }
    // (An opendir job's files are found at run time: it names none.)
    if s.filenames.is_empty() && s.opendir.is_some() {
        o.pop();
    }
    let mut put = |k: &str, v: String| o.push((k.to_string(), v));
    if let Some(d) = &s.description {
        put("description", d.clone());
    }
    if !s.cpus.is_empty() {
        let list: Vec<String> = s.cpus.iter().map(u32::to_string).collect();
        put("cpus_allowed", list.join(","));
        if s.cpus_split {
            put("cpus_allowed_policy", "split".into());
        }
    }
    if !s.numa_cpu_nodes.is_empty() {
        let list: Vec<String> = s.numa_cpu_nodes.iter().map(u32::to_string).collect();
        put("numa_cpu_nodes", list.join(","));
    }
    if let Some(p) = &s.numa_mem_policy {
        put("numa_mem_policy", p.name());
    }
    put(
        "rw",
        match (s.rw_run, s.rw_hole) {
            (1, 0) => s.rw.name().to_string(),
            (1, h) if h < 0 => format!("{}:-{}", s.rw, size_text(h.unsigned_abs())),
            (1, h) => format!("{}:{}", s.rw, size_text(h as u64)),
            (n, _) => format!("{}:{n}", s.rw),
        },
    );
    if s.on_error.counts() {
        put(
            "continue_on_error",
            s.on_error.continue_on_error.name().into(),
        );
    }
    if s.on_error.ignore_error.iter().any(|l| !l.is_empty()) {
        let lists: Vec<String> = s
            .on_error
            .ignore_error
            .iter()
            .map(|l| l.iter().map(i32::to_string).collect::<Vec<_>>().join(":"))
            .collect();
        put("ignore_error", lists.join(","));
    }
    if !s.on_error.error_dump {
        put("error_dump", "0".into());
    }
    if s.rw_identical && s.rw_run > 1 {
        put("rw_sequencer", "identical".into());
    }
    if s.bs.read.range.is_some() || s.bs.write.range.is_some() || s.bs.trim.range.is_some() {
        let one = |dist: &raidlab_workload::BsDist| {
            let (lo, hi) = dist.range.unwrap_or((dist.min(), dist.min()));
            format!("{}-{}", size_text(lo), size_text(hi))
        };
        put(
            "bsrange",
            per_dir_text(one(&s.bs.read), one(&s.bs.write), one(&s.bs.trim)),
        );
        if s.bs_unaligned {
            put("bs_unaligned", String::new());
        }
    } else if s.bs.read.is_fixed() && s.bs.write.is_fixed() && s.bs.trim.is_fixed() {
        let [r, w, t] = [&s.bs.read, &s.bs.write, &s.bs.trim].map(|d| size_text(d.min()));
        put("bs", per_dir_text(r, w, t));
    } else {
        let one = |dist: &raidlab_workload::BsDist| {
            dist.entries
                .iter()
                .map(|(b, w)| format!("{}/{w}", size_text(*b)))
                .collect::<Vec<_>>()
                .join(":")
        };
        put(
            "bssplit",
            per_dir_text(one(&s.bs.read), one(&s.bs.write), one(&s.bs.trim)),
        );
    }
    put("ioengine", s.ioengine.name().to_string());
    put("iodepth", s.iodepth.to_string());
    if s.numjobs != d.numjobs {
        put("numjobs", s.numjobs.to_string());
    }
    if s.nrfiles != d.nrfiles {
        put("nrfiles", s.nrfiles.to_string());
    }
    if let Some(f) = s.filesize {
        put("filesize", size_text(f));
    }
    if let Some(f) = &s.filename_format {
        put("filename_format", f.clone());
    }
    if s.openfiles != 0 {
        put("openfiles", s.openfiles.to_string());
    }
    if s.file_service != d.file_service {
        put("file_service_type", s.file_service.text());
    }
    if s.job_per_file {
        put("job_per_file", "1".into());
    }
    if let Some(p) = &s.read_iolog {
        put("read_iolog", p.clone());
    }
    if let Some(p) = &s.write_iolog {
        put("write_iolog", p.clone());
    }
    if s.create_only {
        put("create_only", "1".into());
    }
    if let Some(c) = &s.exec_prerun {
        put("exec_prerun", c.clone());
    }
    if let Some(c) = &s.exec_postrun {
        put("exec_postrun", c.clone());
    }
    let (r, dr) = (&s.replay, &d.replay);
    if r.no_stall {
        put("replay_no_stall", "1".into());
    }
    if r.time_scale != dr.time_scale {
        put("replay_time_scale", r.time_scale.to_string());
    }
    if let Some(t) = &r.redirect {
        put("replay_redirect", t.clone());
    }
    if r.align != dr.align {
        put("replay_align", r.align.to_string());
    }
    if r.scale != dr.scale {
        put("replay_scale", r.scale.to_string());
    }
    if !r.skip.is_default() {
        put("replay_skip", r.skip.text());
    }
    if s.max_latency_ns > 0 {
        put("max_latency", duration_text(s.max_latency_ns));
    }
    let (l, dl) = (&s.latency, raidlab_workload::LatencyTarget::default());
    if l.target_ns != dl.target_ns {
        put("latency_target", duration_text(l.target_ns));
    }
    if l.window_ns != dl.window_ns {
        put("latency_window", duration_text(l.window_ns));
    }
    if l.percentile != dl.percentile {
        put("latency_percentile", format!("{}", l.percentile));
    }
    if l.run != dl.run {
        put("latency_run", "1".into());
    }
    if s.ss_dur_s > 0 {
        put("steadystate", s.ss.text());
        put("steadystate_duration", format!("{}s", s.ss_dur_s));
        if s.ss_ramp_ns > 0 {
            put("steadystate_ramp_time", duration_text(s.ss_ramp_ns));
        }
    }
    if let Some(o) = s.overwrite {
        put("overwrite", u8::from(o).to_string());
    }
    if s.rank_shift != 0 {
        put("rank_shift", s.rank_shift.to_string());
    }
    if !s.sim_converge {
        put("sim_converge", "0".into());
    }
    if s.rw.read_percent(s.rwmixread) != 100 && s.rw.read_percent(s.rwmixread) != 0 {
        put("rwmixread", s.rwmixread.to_string());
    }
    if let Some(size) = s.size {
        put("size", size_text(size));
    }
    if let Some(p) = s.size_percent {
        put("size", format!("{p}%"));
    }
    if let Some(io) = s.io_size {
        put("io_size", size_text(io));
    }
    if let Some(p) = s.io_size_percent {
        put("io_size", format!("{p}%"));
    }
    if let Some(a) = s.blockalign {
        put("blockalign", size_text(a));
    }
    if s.norandommap {
        put("norandommap", String::new());
    }
    if s.lfsr {
        put("random_generator", "lfsr".into());
    }
    if !s.random_distribution.is_uniform() {
        put("random_distribution", s.random_distribution.text());
    }
    if s.percentage_random != d.percentage_random {
        let [r, w, t] = s.percentage_random.map(|p| p.to_string());
        put("percentage_random", per_dir_text(r, w, t));
    }
    if let Some(n) = s.number_ios {
        put("number_ios", n.to_string());
    }
    if s.offset != 0 {
        put("offset", size_text(s.offset));
    }
    if let Some(p) = s.offset_percent {
        put("offset", format!("{p}%"));
    }
    if s.offset_increment != 0 {
        put("offset_increment", size_text(s.offset_increment));
    }
    if let Some(p) = s.offset_increment_percent {
        put("offset_increment", format!("{p}%"));
    }
    if s.zones.strided {
        put("zonemode", "strided".into());
    }
    for (k, v) in [
        ("zonesize", s.zones.size),
        ("zonerange", s.zones.range),
        ("zoneskip", s.zones.skip),
    ] {
        if v > 0 {
            put(k, size_text(v));
        }
    }
    if s.offset_align > 0 {
        put("offset_align", size_text(s.offset_align));
    }
    if s.file_append {
        put("file_append", "1".into());
    }
    if let Some(rt) = s.runtime_ns {
        put("runtime", duration_text(rt));
    }
    if s.time_based {
        put("time_based", String::new());
    }
    if s.ramp_time_ns != 0 {
        put("ramp_time", duration_text(s.ramp_time_ns));
    }
    if s.loops != d.loops {
        put("loops", s.loops.to_string());
    }
    put("direct", u8::from(s.direct).to_string());
    if s.end_fsync {
        put("end_fsync", "1".into());
    }
    if s.fsync_on_close {
        put("fsync_on_close", "1".into());
    }
    if !s.invalidate {
        put("invalidate", "0".into());
    }
    if s.pre_read {
        put("pre_read", "1".into());
    }
    if s.unlink {
        put("unlink", "1".into());
    }
    let pr = &s.priority;
    for (k, v) in [
        ("prio", pr.level.map(i32::from)),
        ("prioclass", pr.class.map(i32::from)),
        ("nice", pr.nice.map(i32::from)),
    ] {
        if let Some(v) = v {
            put(k, v.to_string());
        }
    }
    if s.allow_mounted_write {
        put("allow_mounted_write", "1".into());
    }
    if let Some(name) = &s.ioscheduler {
        put("ioscheduler", name.clone());
    }
    if s.lockmem > 0 {
        put("lockmem", size_text(s.lockmem));
    }
    if let Some(f) = s.fallocate {
        put("fallocate", f.name().into());
    }
    if s.fill_device {
        put("fill_device", "1".into());
    }
    if let Some(d) = &s.opendir {
        put("opendir", d.clone());
    }
    if !s.create_fsync {
        put("create_fsync", "0".into());
    }
    if !s.allow_file_create {
        put("allow_file_create", "0".into());
    }
    if s.disable_clat && s.disable_lat && s.disable_bw {
        put("gtod_reduce", "1".into());
    } else {
        for (k, on) in [
            ("disable_clat", s.disable_clat),
            ("disable_lat", s.disable_lat),
            ("disable_bw_measurement", s.disable_bw),
        ] {
            if on {
                put(k, "1".into());
            }
        }
    }
    let (b, db) = (&s.buffers, &d.buffers);
    if b.scramble != db.scramble {
        put("scramble_buffers", u8::from(b.scramble).to_string());
    }
    if b.refill {
        put("refill_buffers", "1".into());
    }
    if b.zero {
        put("zero_buffers", "1".into());
    }
    if !b.pattern.is_empty() {
        let hex: String = b.pattern.iter().map(|x| format!("{x:02x}")).collect();
        put("buffer_pattern", format!("0x{hex}"));
    }
    if let Some(p) = b.compress_percentage {
        put("buffer_compress_percentage", p.to_string());
    }
    if b.compress_chunk != db.compress_chunk {
        put("buffer_compress_chunk", size_text(b.compress_chunk));
    }
    if b.dedupe_mode == raidlab_workload::DedupeMode::WorkingSet {
        put("dedupe_mode", "working_set".into());
        put(
            "dedupe_working_set_percentage",
            b.dedupe_working_set_percentage.to_string(),
        );
    }
    if b.dedupe_global {
        put("dedupe_global", "1".into());
    }
    if b.dedupe_percentage != 0 {
        put("dedupe_percentage", b.dedupe_percentage.to_string());
    }
    if !s.randrepeat {
        put("randrepeat", "0".into());
    }
    if s.allrandrepeat {
        put("allrandrepeat", "1".into());
    }
    // A seed drawn for randrepeat=0 is here too: the run repeats with randseed=.
    if s.randseed != d.randseed || s.randseed_drawn {
        put("randseed", s.randseed.to_string());
    }
    if s.verify {
        put(
            "verify",
            if s.verify_pattern_only {
                "pattern".into()
            } else {
                s.verify_named.clone().unwrap_or_else(|| "crc32c".into())
            },
        );
        if let Some(p) = &s.verify_pattern {
            let hex: String = p.iter().map(|b| format!("{b:02x}")).collect();
            put("verify_pattern", format!("0x{hex}"));
        }
        if s.verify_only {
            put("verify_only", "1".into());
        }
        if s.verify_backlog > 0 {
            put("verify_backlog", s.verify_backlog.to_string());
        }
        if let Some(b) = s.verify_backlog_batch {
            put("verify_backlog_batch", b.to_string());
        }
        if !s.do_verify {
            put("do_verify", "0".into());
        }
        if s.verify_fatal {
            put("verify_fatal", "1".into());
        }
        if s.verify_dump {
            put("verify_dump", "1".into());
        }
        if let Some(n) = s.verify_interval {
            put("verify_interval", n.to_string());
        }
        if s.verify_async > 0 {
            put("verify_async", s.verify_async.to_string());
        }
    }
    if s.group_reporting {
        put("group_reporting", String::new());
    }
    if !s.disk_util {
        put("disk_util", "0".into());
    }
    if !s.stats {
        put("stats", "0".into());
    }
    if s.kb_base != 1024 {
        put("kb_base", s.kb_base.to_string());
    }
    match s.fadvise_hint {
        raidlab_workload::FadviseHint::Pattern => {}
        raidlab_workload::FadviseHint::Off => put("fadvise_hint", "0".into()),
        raidlab_workload::FadviseHint::Sequential => put("fadvise_hint", "sequential".into()),
        raidlab_workload::FadviseHint::Random => put("fadvise_hint", "random".into()),
    }
    if let Some(w) = &s.wait_for {
        put("wait_for", w.clone());
    }
    if s.flow > 0 {
        put("flow", s.flow.to_string());
        put("flow_id", s.flow_id.to_string());
        if s.flow_sleep_ns > 0 {
            put("flow_sleep", duration_text(s.flow_sleep_ns));
        }
    }
    if s.stonewall {
        put("stonewall", String::new());
    }
    if s.new_group {
        put("new_group", String::new());
    }
    if s.exitall {
        put("exitall", String::new());
    }
    if s.exitall_on_error {
        put("exitall_on_error", String::new());
    }
    if !s.exit_what.is_group() {
        put("exit_what", s.exit_what.name().into());
    }
    let p = &s.pace;
    let pair = |v: [u64; 3], text: &dyn Fn(u64) -> String| {
        let one = |x: u64| if x == 0 { String::new() } else { text(x) };
        let [r, w, t] = v.map(one);
        per_dir_text(r, w, t)
    };
    for (name, v, sized) in [
        ("rate", p.rate, true),
        ("rate_iops", p.rate_iops, false),
        ("rate_min", p.rate_min, true),
        ("rate_iops_min", p.rate_iops_min, false),
    ] {
        if v != [0, 0, 0] {
            if sized {
                put(name, pair(v, &size_text));
            } else {
                put(name, pair(v, &|x: u64| x.to_string()));
            }
        }
    }
    if p.rate_process == raidlab_workload::RateProcess::Poisson {
        put("rate_process", "poisson".into());
    }
    if p.rate_cycle_ms != 1000 {
        put("rate_cycle", p.rate_cycle_ms.to_string());
    }
    if p.thinktime_ns > 0 {
        put("thinktime", duration_text(p.thinktime_ns));
        if p.thinktime_spin_ns > 0 {
            put("thinktime_spin", duration_text(p.thinktime_spin_ns));
        }
        if p.thinktime_blocks_set {
            put("thinktime_blocks", p.thinktime_blocks.to_string());
        }
        if p.thinktime_blocks_type == raidlab_workload::ThinkBlocks::Issue {
            put("thinktime_blocks_type", "issue".into());
        }
        if p.thinktime_iotime_ns > 0 {
            put("thinktime_iotime", duration_text(p.thinktime_iotime_ns));
        }
    }
    if p.rate_ignore_thinktime {
        put("rate_ignore_thinktime", "1".into());
    }
    match p.startdelay_ns {
        (0, 0) => {}
        (a, b) if a == b => put("startdelay", duration_text(a)),
        (a, b) => put(
            "startdelay",
            format!("{}-{}", duration_text(a), duration_text(b)),
        ),
    }
    if s.fsync > 0 {
        put("fsync", s.fsync.to_string());
    }
    if s.fdatasync > 0 {
        put("fdatasync", s.fdatasync.to_string());
    }
    match s.sync {
        raidlab_workload::SyncIo::None => {}
        raidlab_workload::SyncIo::Sync => put("sync", "sync".into()),
        raidlab_workload::SyncIo::Dsync => put("sync", "dsync".into()),
    }
    let [bw, iops, lat, hist] = s.logs.prefixes(&s.name);
    for (k, v) in [
        ("write_bw_log", bw),
        ("write_iops_log", iops),
        ("write_lat_log", lat),
        ("write_hist_log", hist),
    ] {
        if let Some(v) = v {
            put(k, v);
        }
    }
    if s.logs.avg_msec != 0 {
        put("log_avg_msec", s.logs.avg_msec.to_string());
    }
    if s.logs.offset {
        put("log_offset", "1".into());
    }
    if s.logs.unix_epoch {
        put("log_unix_epoch", "1".into());
    }
    if s.logs.max_value {
        put("log_max_value", "1".into());
    }
    if s.logs.shared {
        put("per_job_logs", "0".into());
    }
    if s.logs.hist_msec != 0 {
        put("log_hist_msec", s.logs.hist_msec.to_string());
    }
    if s.logs.hist_coarseness != 0 {
        put("log_hist_coarseness", s.logs.hist_coarseness.to_string());
    }
    for (i, k) in ["bwavgtime", "iopsavgtime"].into_iter().enumerate() {
        if s.avg_time_given[i] {
            put(k, s.avg_time_ms[i].to_string());
        }
    }
    let p = &s.percentiles;
    if !p.list.is_empty() {
        let list: Vec<String> = p
            .list
            .iter()
            .map(|x| format!("{x:.prec$}", prec = p.precision as usize))
            .collect();
        put("percentile_list", list.join(":"));
    }
    if !p.clat {
        put("clat_percentiles", "0".into());
    }
    if let Some(l) = p.lat {
        put("lat_percentiles", u8::from(l).to_string());
    }
    if !s.unified_rw_reporting.is_none() {
        put("unified_rw_reporting", s.unified_rw_reporting.name().into());
    }
    if let Some(n) = s.significant_figures {
        put("significant_figures", n.to_string());
    }
    if s.rates_in_bits {
        put("unit_base", "1".into());
    }
    o
}

/// fio's `randrepeat=0` without a `randseed`: a seed of its own for each such job, drawn
/// here at the edge (the streams and the simulator take seeds as input, they never draw
/// one), and marked drawn so the results show it ([`spec_options`]: `randseed` in the job
/// options, which the text output shows too). Jobs that repeat, or were given a seed, are
/// left as they are.
pub fn draw_seeds(specs: &mut [JobSpec]) {
    for s in specs
        .iter_mut()
        .filter(|s| !s.randrepeat && !s.allrandrepeat && !s.randseed_given)
    {
        s.randseed = fresh_seed();
        s.randseed_given = true;
        s.randseed_drawn = true;
    }
}

/// 64 bits from the system's entropy (/dev/urandom), or, failing that, from the clock and
/// the process id.
fn fresh_seed() -> u64 {
    use std::io::Read;
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok()
    {
        return u64::from_le_bytes(b);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (u64::from(std::process::id()) << 32)
}

/// The spec a job result comes from: by name (instance results may carry a suffix after
/// the spec's name).
fn spec_of<'a>(j: &raidlab_result::JobResult, specs: &'a [JobSpec]) -> Option<&'a JobSpec> {
    spec_index_of(j, specs).map(|i| &specs[i])
}

/// [`spec_of`]'s position in `specs`.
pub(crate) fn spec_index_of(j: &raidlab_result::JobResult, specs: &[JobSpec]) -> Option<usize> {
    specs.iter().position(|s| s.name == j.name).or_else(|| {
        specs
            .iter()
            .enumerate()
            .filter(|(_, s)| j.name.starts_with(&s.name))
            .max_by_key(|(_, s)| s.name.len())
            .map(|(i, _)| i)
    })
}

/// Each result lists the percentiles its job's options ask for, shows the directions they
/// ask for (`unified_rw_reporting`), and carries its description.
pub fn set_report_options(result: &mut RunResult, specs: &[JobSpec]) {
    use raidlab_workload::UnifiedRw as U;
    for j in &mut result.jobs {
        j.description = spec_of(j, specs).and_then(|s| s.description.clone());
        j.significant_figures = spec_of(j, specs).and_then(|s| s.significant_figures);
        j.decimal_first = spec_of(j, specs).is_some_and(|s| s.kb_base == 1000);
        j.rates_in_bits = spec_of(j, specs).is_some_and(|s| s.rates_in_bits);
        j.iodepth = spec_of(j, specs).map(|s| s.iodepth);
        j.unified_rw = match spec_of(j, specs).map(|s| s.unified_rw_reporting) {
            None | Some(U::None) => raidlab_result::UnifiedRw::None,
            Some(U::Mixed) => raidlab_result::UnifiedRw::Mixed,
            Some(U::Both) => raidlab_result::UnifiedRw::Both,
        };
        if let Some(p) = spec_of(j, specs).map(|s| &s.percentiles) {
            j.percentiles = raidlab_result::Percentiles {
                list: p.list.clone(),
                precision: p.precision,
                clat: p.clat,
                lat: p.lat,
            };
        }
    }
}

/// The log files `specs` will write, in fio's names: `NAME_bw.N.log`, … with `N` each job
/// instance's number from 1, in the order the run expands them (`NAME_bw.log`, once, for
/// jobs that share their logs: `per_job_logs=0`).
pub fn log_paths(specs: &[JobSpec]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for inst in raidlab_workload::JobInstance::expand(specs) {
        let s = &specs[inst.spec_index];
        let n = if s.logs.shared {
            String::new()
        } else {
            format!(".{}", inst.global_index + 1)
        };
        let [bw, iops, lat, hist] = s.logs.prefixes(&s.name);
        if let Some(p) = hist {
            out.push(PathBuf::from(format!("{p}_clat_hist{n}.log")));
        }
        if let Some(p) = bw {
            out.push(PathBuf::from(format!("{p}_bw{n}.log")));
        }
        if let Some(p) = iops {
            out.push(PathBuf::from(format!("{p}_iops{n}.log")));
        }
        if let Some(p) = lat {
            for kind in ["clat", "slat", "lat"] {
                out.push(PathBuf::from(format!("{p}_{kind}{n}.log")));
            }
        }
        if let Some(p) = &s.write_iolog {
            out.push(PathBuf::from(p));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// Refuse, in one line, a log file `jobs` would write in a folder that does not exist, or
/// over a file raidlab did not write (unless `force`), or over a job's target; and so the
/// files their exec_prerun / exec_postrun commands write.
pub fn check_log_paths(jobs: &[JobSpec], force: bool) -> Result<(), CliError> {
    // An I/O log is one job's (fio interleaves several jobs' lines in one file).
    let instances = raidlab_workload::JobInstance::expand(jobs);
    for s in jobs {
        let Some(p) = &s.write_iolog else { continue };
        let writers = instances
            .iter()
            .filter(|i| jobs[i.spec_index].write_iolog.as_ref() == Some(p))
            .count();
        if writers > 1 {
            return Err(CliError::usage(format!(
                "write_iolog={p}: {writers} jobs would write it (valid: one job a log: numjobs=1, and each job section its own write_iolog)"
            )));
        }
    }
    for path in log_paths(jobs) {
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(dir) = folder.filter(|d| !d.is_dir()) {
            return Err(CliError::usage(format!(
                "log file {}: no folder {} (valid: write_*_log naming a file in an existing folder)",
                path.display(),
                dir.display()
            )));
        }
        check_written(&path, "log file", "the results", jobs, force)?;
    }
    check_exec_outputs(jobs, force)
}

/// The files exec_prerun / exec_postrun write the command's output to follow the rule of
/// every other output, checked before any job or command runs (each MPI rank checks its
/// own, named with its rank).
pub fn check_exec_outputs(jobs: &[JobSpec], force: bool) -> Result<(), CliError> {
    for s in jobs {
        for (opt, what, cmd) in [
            ("exec_prerun", "prerun", &s.exec_prerun),
            ("exec_postrun", "postrun", &s.exec_postrun),
        ] {
            if cmd.is_some() {
                let path = PathBuf::from(s.exec_output(what));
                check_written(
                    &path,
                    &format!("{opt} output"),
                    "the command's output",
                    jobs,
                    force,
                )?;
            }
        }
    }
    Ok(())
}

/// Write every job's time-series logs (marked as raidlab's, so a later run replaces them
/// without `--force`). A file that cannot be written is one line, naming it.
pub fn write_logs(result: &RunResult) -> Result<(), CliError> {
    // (Marked as raidlab's, so the next run writes over it without --force.)
    let write = |path: &str, text: &str| {
        std::fs::File::create(path).and_then(|mut f| {
            use std::io::Write;
            raidlab_engine::safety::mark_scratch(&f);
            f.write_all(text.as_bytes())?;
            f.flush()
        })
    };
    for l in result.jobs.iter().flat_map(|j| &j.iologs) {
        write(&l.path, &l.text()).map_err(|e| {
            CliError::failed(format!(
                "I/O log {}: cannot write ({e}; valid: write_iolog naming a writable folder)",
                l.path
            ))
        })?;
    }
    for (name, text) in raidlab_result::shared_files(result.jobs.iter().flat_map(|j| &j.logs)) {
        write(&name, &text).map_err(|e| {
            CliError::failed(format!(
                "log file {name}: cannot write ({e}; valid: write_*_log naming a writable folder)"
            ))
        })?;
    }
    Ok(())
}

/// Each job result's options, from the spec it came from (matched by name; instance
/// results may carry a suffix after the spec's name), index-aligned with `result.jobs`.
pub fn job_options(result: &RunResult, specs: &[JobSpec]) -> Vec<Vec<(String, String)>> {
    result
        .jobs
        .iter()
        .map(|j| spec_of(j, specs).map(spec_options).unwrap_or_default())
        .collect()
}

// ---------------------------------------------------------------------------------------
// The embedded default: a scratch file in a new temporary folder.

/// A temporary folder removed (with the scratch file) when dropped, also on error.
struct Scratch {
    dir: PathBuf,
    file: PathBuf,
}

impl Scratch {
    fn create() -> Result<Scratch, CliError> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        for attempt in 0..100u32 {
            let dir = base.join(format!(
                "raidlab-run-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    let file = dir.join("scratch");
                    SCRATCH_DIR.store(leak_c_path(&dir), Ordering::SeqCst);
                    SCRATCH_FILE.store(leak_c_path(&file), Ordering::SeqCst);
                    return Ok(Scratch { dir, file });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(CliError::failed(format!(
                    "cannot create a temporary folder in {}: {e} (set TMPDIR to a writable folder)",
                    base.display()
                )))
                }
            }
        }
        Err(CliError::failed(format!(
            "cannot find a free temporary folder name in {}",
            base.display()
        )))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether files in `dir` take O_DIRECT I/O: open one with O_DIRECT and write one aligned
/// 4 KiB block (some filesystems, e.g. tmpfs before Linux 6.6, refuse one or the other).
fn supports_direct(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    const BLOCK: usize = 4096;
    let probe = dir.join(".direct-probe");
    let ok = match std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
    {
        Ok(f) => {
            let layout = std::alloc::Layout::from_size_align(BLOCK, BLOCK).expect("4 KiB layout");
            // SAFETY: a zeroed, 4 KiB-aligned allocation of 4 KiB, freed below.
            let buf = unsafe { std::alloc::alloc_zeroed(layout) };
            let written = if buf.is_null() {
                -1
            } else {
                // SAFETY: buf holds BLOCK bytes; the descriptor is open for writing.
                unsafe { libc::pwrite(f.as_raw_fd(), buf.cast(), BLOCK, 0) }
            };
            if !buf.is_null() {
                // SAFETY: allocated above with this layout.
                unsafe { std::alloc::dealloc(buf, layout) };
            }
            written == BLOCK as isize
        }
        Err(_) => false,
    };
    let _ = std::fs::remove_file(&probe);
    ok
}

/// The embedded default's jobs on `file`.
pub fn embedded_default(file: &Path, direct: bool) -> Vec<JobSpec> {
    let base = JobSpec {
        filenames: vec![file.display().to_string()],
        direct,
        ..JobSpec::default()
    };
    parse_job_text(EMBEDDED_DEFAULT_JOB, "embedded default", base)
        .expect("the embedded default job parses")
}

// ---------------------------------------------------------------------------------------

pub(crate) fn progress_default() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(2) == 1 }
}

/// `--output PATH` may be a new file, a character device (`/dev/null`, `/dev/stdout`), or a
/// regular file holding raidlab's results or nothing; a file holding other data needs
/// `--force`, and a job's own target or a block device is never replaced by the results.
fn check_output(path: &Path, jobs: &[JobSpec], force: bool) -> Result<(), CliError> {
    check_written(path, "--output", "the results", jobs, force)
}

/// The rule of [`check_output`] for any file a run writes (its results, its logs, its hooks'
/// output): `what` names the file's kind in the message (`--output`, `log file`, …) and
/// `with` what would replace it (`the results`, …). Raidlab's own files carry its scratch
/// mark; that mark, not the name, is what lets a run write over one without `--force`.
fn check_written(
    path: &Path,
    what: &str,
    with: &str,
    jobs: &[JobSpec],
    force: bool,
) -> Result<(), CliError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(()); // created (or refused with the open error) below
    };
    let shown = path.display();
    let ft = meta.file_type();
    if ft.is_char_device() || ft.is_fifo() {
        return Ok(());
    }
    if !ft.is_file() {
        return Err(CliError::usage(format!(
            "{what} {shown}: not a regular file (valid: a file path, or /dev/stdout)"
        )));
    }
    for j in jobs {
        // An array target's members count as its files.
        let files = j
            .filenames
            .iter()
            .flat_map(|f| match f.strip_prefix("array:") {
                Some(members) => members.split(',').map(str::to_string).collect::<Vec<_>>(),
                None => vec![f.clone()],
            });
        for f in files {
            if std::fs::metadata(&f).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino()) {
                return Err(CliError::usage(format!(
                    "{what} {shown} is job '{}''s target {f}: {with} would replace the data being measured (valid: another file)",
                    j.name
                )));
            }
        }
    }
    if force || meta.len() == 0 {
        return Ok(());
    }
    let file = std::fs::File::open(path)
        .map_err(|e| CliError::usage(format!("{what} {shown}: cannot open: {e}")))?;
    if raidlab_engine::safety::is_scratch(&file) {
        return Ok(());
    }
    if let Ok(Some(found)) = raidlab_engine::safety::find_signature(path) {
        return Err(CliError::usage(format!(
            "{what} {shown}: {found} found there (use --force to replace it with {with})"
        )));
    }
    if raidlab_engine::safety::holds_data(&file).unwrap_or(true) {
        return Err(CliError::usage(format!(
            "{what} {shown}: it holds {} bytes raidlab did not write (use --force to replace it with {with})",
            meta.len()
        )));
    }
    Ok(())
}

/// Where `raidlab run` writes its results: standard output, or `--output FILE`, checked and
/// opened before anything is measured (so a long run is not lost to a typo, and nobody's data
/// is replaced by results).
pub(crate) struct Output {
    file: Option<(std::fs::File, PathBuf)>,
    /// The file did not exist before: an error before the results leaves none behind.
    created: bool,
}

impl Output {
    /// Standard output.
    pub(crate) fn none() -> Output {
        Output {
            file: None,
            created: false,
        }
    }

    /// `--output PATH`, if given, checked against `jobs`' targets and opened for writing.
    pub(crate) fn open(
        path: Option<&Path>,
        jobs: &[JobSpec],
        force: bool,
    ) -> Result<Output, CliError> {
        let Some(path) = path else {
            return Ok(Output::none());
        };
        check_output(path, jobs, force)?;
        let created = !path.exists();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| {
                CliError::usage(format!(
                    "--output {}: cannot open for writing: {e} (valid: a writable file path)",
                    path.display()
                ))
            })?;
        // raidlab's own results from now on: a later run may replace them without --force.
        if file.metadata().is_ok_and(|m| m.is_file()) {
            raidlab_engine::safety::mark_scratch(&file);
        }
        Ok(Output {
            file: Some((file, path.to_path_buf())),
            created,
        })
    }

    /// Nothing to record (the run failed): leave no empty output file behind.
    pub(crate) fn discard(self) {
        if let (true, Some((_, path))) = (self.created, &self.file) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Render `result` in `formats` and write it, then the jobs' log files; a job that ended
    /// with an error makes the command fail once everything is written.
    pub(crate) fn deliver(
        self,
        result: &mut RunResult,
        specs: &[JobSpec],
        formats: &[OutputFormat],
    ) -> Result<(), CliError> {
        set_report_options(result, specs);
        let options = job_options(result, specs);
        let text = raidlab_result::render_formats(result, &options, formats);
        use std::io::Write;
        match self.file {
            Some((mut file, path)) => {
                // (A regular file is emptied first; /dev/null or a pipe just takes the text.)
                let regular = file.metadata().is_ok_and(|m| m.is_file());
                let written = (if regular { file.set_len(0) } else { Ok(()) })
                    .and_then(|_| file.write_all(text.as_bytes()))
                    .and_then(|_| file.flush());
                if let Err(e) = written {
                    // Do not lose the results: print them, then report the failure.
                    let _ = crate::stdout::write(&text);
                    return Err(CliError::failed(format!(
                        "--output {}: cannot write ({e}); the results went to standard output instead",
                        path.display()
                    )));
                }
            }
            None => {
                // A closed pipe (| head) is not an error worth a message; any other failure (a
                // full disk, /dev/full) loses the results and says so.
                if let Err(e) = crate::stdout::write(&text) {
                    return Err(CliError::failed(format!(
                        "cannot write the results to standard output: {e}"
                    )));
                }
            }
        }
        write_logs(result)?;
        if let Some(j) = result.jobs.iter().find(|j| j.error.is_some()) {
            // Under --mpi, the rank whose job it was (its result's own; a group folded over
            // ranks names none of them alone).
            let rank = match &j.mpi {
                Some(p) if p.ranks.len() == 1 => format!("{}: ", p.text()),
                _ => String::new(),
            };
            return Err(CliError::failed(format!(
                "{rank}job '{}': {}",
                j.name,
                j.error.as_deref().unwrap_or("")
            )));
        }
        Ok(())
    }
}

/// `raidlab run --help`.
pub(crate) fn print_help() -> Result<(), CliError> {
    crate::stdout::print(&help_text())
}

pub fn main(args: RunArgs) -> Result<(), CliError> {
    // An MPI run joins its world before reading its arguments, so that one rank (rank 0)
    // reports bad input for all of them.
    if args.rest.iter().any(|a| a == "--mpi") {
        return super::mpi::main(&args.rest);
    }
    let inv = parse_args(&args.rest)?;
    if inv.help {
        return print_help();
    }
    // fio's --parse-only: the jobs were read and checked; nothing runs, nothing is written.
    if inv.parse_only {
        return Ok(());
    }
    // The log files and the output file are refused before the run rather than after it.
    check_log_paths(&inv.jobs, inv.force)?;
    let output = Output::open(inv.output.as_deref(), &inv.jobs, inv.force)?;
    let opts = ExecOptions {
        force: inv.force,
        progress: inv.progress.unwrap_or_else(progress_default),
        coordinator: None,
        readonly: inv.readonly,
    };
    // Handler first, so a Ctrl-C at any point after this finds the scratch folder to remove.
    let _ = stop_flag();
    let (result, specs) = if inv.jobs.is_empty() {
        let scratch = Scratch::create()?;
        let direct = supports_direct(&scratch.dir);
        ewriteln!(
            "raidlab: no job given: measuring the embedded default (1 MiB sequential write and read, then 4 KiB random reads at iodepth 32 for 3 s) on a 256 MiB scratch file in {} (removed afterwards){}",
            scratch.dir.display(),
            if direct { ", direct I/O" } else { "; this filesystem has no direct I/O (e.g. tmpfs), so it runs through the page cache (direct=0)" }
        );
        let mut jobs = embedded_default(&scratch.file, direct);
        if inv.verify {
            for j in &mut jobs {
                j.verify = true;
            }
        }
        let r = execute(jobs.clone(), &opts);
        drop(scratch);
        (r, jobs)
    } else {
        let mut jobs = inv.jobs;
        draw_seeds(&mut jobs);
        check_directories(&jobs)?;
        raidlab_workload::apply_directories(&mut jobs);
        (execute(jobs.clone(), &opts), jobs)
    };
    match result {
        Ok(mut r) => {
            output.deliver(&mut r, &specs, &inv.formats)?;
            // A run an interrupt cut short prints what it measured, and exits as the signal
            // says (128 + it), so a script does not take part of a run for all of it.
            match interrupt_exit_code() {
                Some(code) => Err(CliError {
                    code,
                    message: format!(
                        "run stopped by {}: the results cover what ran until then",
                        interrupt_name()
                    ),
                }),
                None => Ok(()),
            }
        }
        Err(mut e) => {
            output.discard();
            // Stopped before anything ran (laying a file out, say): no results, and the
            // same exit as a run the interrupt cut short, not a failure's 1.
            if let Some(code) = interrupt_exit_code().filter(|_| e.code != 2) {
                e.code = code;
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    /// A blktrace's device number finds its block device under /dev (every machine has one:
    /// its root disk, or loop devices); a number nothing has finds none.
    #[test]
    fn a_device_number_names_its_block_device() {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let dev = std::fs::read_dir("/dev")
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_block_device()))
            .expect("a block device under /dev");
        let rdev = std::fs::metadata(&dev).unwrap().rdev();
        let (major, minor) = (libc::major(rdev), libc::minor(rdev));
        let found = block_device_named(Path::new("/dev"), major, minor).expect("found");
        let m = std::fs::symlink_metadata(&found).unwrap();
        assert!(
            m.file_type().is_block_device() && m.rdev() == rdev,
            "{found}"
        );
        assert_eq!(block_device_named(Path::new("/dev"), 4095, 1_048_574), None);
    }

    /// A read-only run refuses a writing job whoever built it (calibrate's probes go
    /// through `execute` with `readonly`, not through `raidlab run`'s own check): nothing
    /// is created or written.
    #[test]
    fn a_read_only_execution_refuses_every_writer() {
        let dir = std::env::temp_dir().join(format!("raidlab-ro-exec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("w");
        let inv = parse_args(&args(&[
            "--name=w",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            &format!("--filename={}", file.display()),
        ]))
        .unwrap();
        let opts = ExecOptions {
            readonly: true,
            ..ExecOptions::default()
        };
        let e = execute(inv.jobs, &opts).expect_err("a writer under readonly");
        assert!(
            e.message.contains("--readonly: job 'w' writes"),
            "{}",
            e.message
        );
        assert!(!file.exists(), "the file was laid out");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn globals_before_the_first_name_reach_every_job() {
        let inv = parse_args(&args(&[
            "--filename=/tmp/f",
            "--bs",
            "8k",
            "--name=a",
            "--rw=randread",
            "--name",
            "b",
            "--rw=write",
            "--time_based",
            "--runtime=1s",
            "--output-format=json",
        ]))
        .unwrap();
        assert_eq!(inv.jobs.len(), 2);
        assert_eq!(inv.jobs[0].name, "a");
        assert_eq!(inv.jobs[1].name, "b");
        assert!(inv
            .jobs
            .iter()
            .all(|j| j.bs.min() == 8192 && j.filenames == vec!["/tmp/f".to_string()]));
        assert!(inv.jobs[1].time_based && !inv.jobs[0].time_based);
        assert_eq!(inv.formats, [OutputFormat::Json]);
    }

    /// On the command line a log option takes the next argument as its name (as fio's); in a
    /// job file it may stand alone and names the files after its job. The files of every
    /// instance are numbered in the run's order, as fio numbers its jobs.
    #[test]
    fn log_options_take_names_and_number_files_per_job() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("j.fio");
        std::fs::write(
            &file,
            "[global]\nfilename=/tmp/f\nsize=1m\n[a]\nwrite_lat_log\nnumjobs=2\n[b]\nwrite_iops_log=x\n",
        )
        .unwrap();
        let inv = parse_args(&args(&[
            "--write_bw_log",
            "bwname",
            "--job",
            file.to_str().unwrap(),
            "--minimal",
        ]))
        .unwrap();
        assert_eq!(inv.formats, [OutputFormat::Terse]);
        let names: Vec<String> = log_paths(&inv.jobs)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "bwname_bw.1.log",
                "a_clat.1.log",
                "a_slat.1.log",
                "a_lat.1.log",
                "bwname_bw.2.log",
                "a_clat.2.log",
                "a_slat.2.log",
                "a_lat.2.log",
                "bwname_bw.3.log",
                "x_iops.3.log",
            ]
        );
        let e = parse_args(&args(&["--filename=/tmp/f", "--minimal=1"])).unwrap_err();
        assert!(
            e.message.contains("--minimal takes no value"),
            "{}",
            e.message
        );
    }

    #[test]
    fn every_option_has_its_help_line() {
        for name in OPTION_NAMES {
            assert!(!option_help(name).is_empty(), "--{name}");
        }
    }

    #[test]
    fn errors_name_the_flag() {
        let e = parse_args(&args(&["--filename=/tmp/f", "--bs=4q"])).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(
            e.message
                .starts_with("--bs=4q: '4q' has unknown unit 'q' (valid: k, m, g, t, p"),
            "{}",
            e.message
        );
        let e = parse_args(&args(&["--frob=1"])).unwrap_err();
        assert!(e.message.contains("unknown option 'frob'"), "{}", e.message);
        let e = parse_args(&args(&["--iodepth"])).unwrap_err();
        assert!(e.message.contains("needs a value"), "{}", e.message);
        let e = parse_args(&args(&["--output-format=xml"])).unwrap_err();
        assert!(
            e.message
                .contains("valid: text, normal, json, json+, terse"),
            "{}",
            e.message
        );
        // No target is not an error: the job's files go in the working folder, named when
        // the run resolves them (as fio names them).
        let inv = parse_args(&args(&["--name=a", "--rw=read"])).unwrap();
        assert!(inv.jobs[0].filenames.is_empty());
        let mut jobs = inv.jobs;
        raidlab_workload::apply_directories(&mut jobs);
        assert_eq!(jobs[0].filenames, ["./a.0.0"]);
    }

    #[test]
    fn bare_verify_is_for_every_job_and_bare_options_without_name_make_one_job() {
        let inv = parse_args(&args(&["--verify", "--filename", "/tmp/f", "--rw=write"])).unwrap();
        assert_eq!(inv.jobs.len(), 1);
        assert!(inv.jobs[0].verify);
        let inv = parse_args(&args(&["--output-format", "json+", "--no-progress"])).unwrap();
        assert!(inv.jobs.is_empty());
        assert_eq!(inv.progress, Some(false));
    }

    #[test]
    fn job_file_takes_earlier_options_as_defaults() {
        let dir = std::env::temp_dir().join(format!("raidlab-run-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("j.fio");
        std::fs::write(&f, "[global]\nrw=randread\n[one]\n[two]\nbs=64k\n").unwrap();
        let p = f.display().to_string();
        let inv = parse_args(&args(&[
            "--filename=/tmp/x",
            "--iodepth=8",
            "--job",
            &p,
            "--name=three",
            "--rw=write",
        ]))
        .unwrap();
        assert_eq!(
            inv.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(),
            vec!["one", "two", "three"]
        );
        assert!(inv.jobs.iter().all(|j| j.iodepth == 8));
        assert_eq!(inv.jobs[1].bs.min(), 65536);
        let e = parse_args(&args(&["--filename=/tmp/x", "--job", &p, "--iodepth=4"])).unwrap_err();
        assert!(e.message.contains("comes after --job"), "{}", e.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn mixed_simulated_and_real_targets_are_refused() {
        let mut a = JobSpec {
            name: "a".into(),
            filenames: vec!["sim:x.toml".into()],
            ..Default::default()
        };
        a.size = Some(1 << 20);
        let b = JobSpec {
            name: "b".into(),
            filenames: vec!["/tmp/y".into()],
            size: Some(1 << 20),
            ..Default::default()
        };
        let e = execute(vec![a, b], &ExecOptions::default()).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(
            e.message.contains("either simulated or real"),
            "{}",
            e.message
        );
    }

    #[test]
    fn embedded_default_parses_and_options_read_back() {
        let jobs = embedded_default(Path::new("/tmp/raidlab-x/scratch"), true);
        assert_eq!(jobs.len(), 3);
        assert!(jobs.iter().all(|j| j.direct && j.size == Some(256 << 20)));
        assert!(jobs[1].stonewall && jobs[2].stonewall && jobs[2].time_based);
        let o = spec_options(&jobs[2]);
        let get = |k: &str| o.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.clone());
        assert_eq!(get("bs").as_deref(), Some("4k"));
        assert_eq!(get("iodepth").as_deref(), Some("32"));
        assert_eq!(get("runtime").as_deref(), Some("3s"));
        assert_eq!(get("filename").as_deref(), Some("/tmp/raidlab-x/scratch"));
        // The options re-apply to the same spec.
        let mut back = JobSpec::default();
        for (k, v) in &o {
            let v = if v.is_empty() { None } else { Some(v.as_str()) };
            apply_option(&mut back, k, v).unwrap();
        }
        assert_eq!(back, jobs[2]);
    }
}
