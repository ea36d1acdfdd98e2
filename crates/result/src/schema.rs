//! The result structures. Bytes and nanoseconds everywhere; rates are derived on demand.

use crate::histogram::LatencyHistogram;
use crate::samples::DirSamples;
use crate::timelog::JobLog;
use serde::{Deserialize, Serialize};

/// Totals and latencies of one direction (read or write) of a job.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirStats {
    pub io_bytes: u64,
    pub total_ios: u64,
    /// Time over which these bytes moved, ns (the job's measured runtime after ramp).
    pub runtime_ns: u64,
    /// Completion latency: submission to completion.
    pub clat: LatencyHistogram,
    /// Total latency: from when the request was ready to issue to completion.
    pub lat: LatencyHistogram,
    /// Bandwidth and IOPS samples over fio's `bw_avg_time`/`iops_avg_time` intervals.
    #[serde(default)]
    pub samples: DirSamples,
}

/// Debug as derived, without `samples`: the simulator's golden results are compared as
/// this text, which stays what it was before samples were taken (the samples have tests
/// of their own).
impl std::fmt::Debug for DirStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirStats")
            .field("io_bytes", &self.io_bytes)
            .field("total_ios", &self.total_ios)
            .field("runtime_ns", &self.runtime_ns)
            .field("clat", &self.clat)
            .field("lat", &self.lat)
            .finish()
    }
}

impl DirStats {
    /// Bandwidth, bytes per second.
    pub fn bw_bytes(&self) -> f64 {
        if self.runtime_ns == 0 {
            0.0
        } else {
            self.io_bytes as f64 * 1e9 / self.runtime_ns as f64
        }
    }
    pub fn iops(&self) -> f64 {
        if self.runtime_ns == 0 {
            0.0
        } else {
            self.total_ios as f64 * 1e9 / self.runtime_ns as f64
        }
    }
    /// Merge another job's stats: bytes and ios add, runtime is the longer one (they ran
    /// side by side), histograms merge.
    pub fn merge(&mut self, other: &DirStats) {
        self.io_bytes += other.io_bytes;
        self.total_ios += other.total_ios;
        self.runtime_ns = self.runtime_ns.max(other.runtime_ns);
        self.clat.merge(&other.clat);
        self.lat.merge(&other.lat);
        self.samples.sum_group(&other.samples);
    }
}

/// A job's syncs (fio's `fsync`/`fdatasync` every N writes): how many, and how long each
/// took from issue to completion (fio's `sync` section).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncStats {
    pub total_ios: u64,
    pub lat: LatencyHistogram,
}

impl SyncStats {
    /// Count one sync that took `ns`.
    pub fn record(&mut self, ns: u64) {
        self.total_ios += 1;
        self.lat.record(ns);
    }
    pub fn merge(&mut self, other: &SyncStats) {
        self.total_ios += other.total_ios;
        self.lat.merge(&other.lat);
    }
}

/// Bytes and ios of one pass over the region (fio's `loops`), for seed 000's per-pass view.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PassStats {
    pub pass: u32,
    pub read_bytes: u64,
    pub read_ios: u64,
    pub write_bytes: u64,
    pub write_ios: u64,
    #[serde(default)]
    pub trim_bytes: u64,
    #[serde(default)]
    pub trim_ios: u64,
    pub runtime_ns: u64,
}

/// What `verify` found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifySummary {
    pub blocks_checked: u64,
    pub mismatches: u64,
    /// The first mismatch, described: offset, what was expected and what was found.
    pub first_mismatch: Option<String>,
}

/// One component's share of a simulated run: what a real run cannot see.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComponentUse {
    /// Path-like name, e.g. `host/fc0/array1/ctrl0/chain0/disk3`.
    pub name: String,
    /// `disk`, `controller`, `link`, `switch`, `host`, …
    pub kind: String,
    /// Busy time / simulated time, 0–1.
    pub utilization: f64,
    pub busy_ns: u64,
    /// Its theoretical bound in bytes/s, where it has one.
    pub bound_bytes_s: Option<f64>,
}

/// Simulation-only results.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimExtras {
    pub system: String,
    /// Virtual time the job's stonewall group ran: the span its components' utilization,
    /// bottleneck and member I/Os cover (each group has its own).
    pub virtual_time_ns: u64,
    /// Why the group's simulation stopped: `size`, `runtime`, `converged` (stopped once
    /// the rate had settled, and extended to the job's size or runtime at that rate),
    /// `exitall` (a job's end stopped the others), `steadystate` (fio's steady state was
    /// attained), or `not run` (an `exit_what=all` end before the group).
    pub stop_reason: String,
    pub components: Vec<ComponentUse>,
    /// The component that saturated first (highest utilization), if any exceeded 90%.
    pub bottleneck: Option<String>,
    /// Member I/Os simulated (for the simulator's own speed benchmark).
    pub member_ios: u64,
    /// The simulated host's page cache, if it has one: what buffered jobs found there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<PageCacheUse>,
    /// The stripe caches of parity arrays the simulated host runs (md): how their stripes
    /// were written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stripe_caches: Vec<StripeCacheUse>,
    /// What the drives' buffers served of the reads given to them, all drives together;
    /// present when they served any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive_caches: Option<DriveCacheUse>,
    /// What the RAID controllers' caches served of the host's reads (data read ahead, or
    /// written and not yet on the drives), all controllers together; present when they
    /// served any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_caches: Option<DriveCacheUse>,
    /// Arrays rebuilding a failed member onto a replacement during the group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rebuilds: Vec<RebuildUse>,
    /// What the simulation says of the group's jobs, each once, as a real run says it on
    /// its standard error (e.g. a job whose verify does not read back); the CLI prints them
    /// as `raidlab: note:` lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What one array's rebuild did over a stonewall group. Bytes are of each replaced member.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RebuildUse {
    pub array: String,
    /// The members being rebuilt (0-based, as the system file's `failed`).
    pub members: Vec<u32>,
    /// Bytes of each member the rebuild covers in all (the layout's used part).
    pub member_bytes: u64,
    /// Bytes rebuilt during the group, and how far the rebuild had got at its end.
    pub rebuilt_bytes: u64,
    pub rebuilt_to_bytes: u64,
    /// Virtual time the rebuild ran during the group (to its end or to the group's end).
    pub rebuild_ns: u64,
    /// The time a whole rebuild takes: the time it took, if it ran from the start to the
    /// end within the group, else `member_bytes` at the group's rate (0: no rate).
    pub full_rebuild_ns: u64,
    pub finished: bool,
}

impl RebuildUse {
    /// The rebuild's rate during the group, bytes/s of each member.
    pub fn bytes_s(&self) -> f64 {
        if self.rebuild_ns == 0 {
            0.0
        } else {
            self.rebuilt_bytes as f64 * 1e9 / self.rebuild_ns as f64
        }
    }
}

/// What the simulated drives' buffers (hard disks' read segments), or the RAID controllers'
/// caches, did with the reads given to them over a stonewall group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DriveCacheUse {
    /// Reads the drives were given, and those served from data their buffers held (no
    /// media).
    pub reads: u64,
    pub read_hits: u64,
}

/// What one md array's stripe cache did over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StripeCacheUse {
    pub array: String,
    /// Its size in stripe heads (a 4 KiB page of each member).
    pub stripe_heads: u64,
    /// Stripe operations (one per chunk row) that wrote without reading first, and those that
    /// read old data or parity first (partial stripes).
    pub full_writes: u64,
    pub preread_writes: u64,
    /// Writes that waited for free stripe heads, and their waits summed (ns).
    pub room_waits: u64,
    #[serde(default)]
    pub room_wait_ns: u64,
    /// The writes' pieces (a write has one in each stripe it touches) and their time held
    /// in the cache before their stripe's write began, summed (ns): waiting for the rest
    /// of the stripe, for an unplug, or for other stripes' pre-reads to end.
    #[serde(default)]
    pub held_pieces: u64,
    #[serde(default)]
    pub held_ns: u64,
    /// Stripe operations done and their time from start to done (pre-reads and writes),
    /// summed (ns).
    #[serde(default)]
    pub ops_done: u64,
    #[serde(default)]
    pub op_ns: u64,
}

/// What a simulated host's page cache did over a run (bytes are whole 4 KiB pages).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageCacheUse {
    pub capacity_bytes: u64,
    /// Bytes buffered reads found in memory (or already being read), and bytes they had to
    /// read themselves.
    pub hit_bytes: u64,
    pub miss_bytes: u64,
    /// Bytes read ahead of the readers.
    pub read_ahead_bytes: u64,
    pub written_back_bytes: u64,
    /// Dirty bytes still in memory when the run ended (not yet on the devices).
    pub dirty_bytes: u64,
    /// Buffered writes that waited for write-back (dirty data over the limit).
    pub throttled_writes: u64,
}

/// fio's `unified_rw_reporting`: whether a job's results show reads and writes apart,
/// together, or both ways. Only the renderings read it; the data keeps both directions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnifiedRw {
    /// Reads and writes apart (fio's `none`, the default).
    #[default]
    None,
    /// Reads and writes as one direction, `mixed`, in their place (fio's `mixed`).
    Mixed,
    /// Reads and writes apart, then `mixed` after them (fio's `both`).
    Both,
}

impl UnifiedRw {
    pub fn is_none(&self) -> bool {
        *self == UnifiedRw::None
    }
}

/// The names of the directions a job's results show, by [`JobResult::directions`]'s index:
/// read, write, trim, and all of them together.
pub const DIRECTION_NAMES: [&str; 4] = ["read", "write", "trim", "mixed"];

/// [`DIRECTION_NAMES`]'s index of `trim`.
pub const TRIM: usize = 2;

/// [`DIRECTION_NAMES`]'s index of `mixed`.
pub const MIXED: usize = 3;

/// What a job's latency-target search found (fio's `latency_target`, `latency_window`,
/// `latency_percentile`, and the depth it settled on).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyDepth {
    pub target_ns: u64,
    pub window_ns: u64,
    pub percentile: f64,
    /// The depth the job ran at when it ended: the deepest that met the target.
    pub depth: u32,
}

/// The result of one job (or of a reporting group, when merged).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    pub groupid: u32,
    /// Job instances folded into this result (1 unless group_reporting merged them).
    pub instances: u32,
    /// The target(s) as given (`/dev/loop0`, `array:a,b,c`, `sim:x.toml#lun0`).
    pub target: String,
    /// `io_uring`, `psync`, `null`, or `sim`.
    pub engine: String,
    pub read: DirStats,
    pub write: DirStats,
    /// Trims (discards); all zero for a job that issued none.
    #[serde(default)]
    pub trim: DirStats,
    /// Periodic syncs (`fsync=N`, `fdatasync=N`); empty without them.
    #[serde(default)]
    pub sync: SyncStats,
    /// CPU time of the job's threads as percent of its runtime; for a group, the group's
    /// CPU time as percent of its jobs' runtimes summed (fio's figure: the jobs' mean,
    /// weighted by runtime).
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    /// The runtimes of the jobs folded into this result, summed, ns (fio's `job_runtime`
    /// under group_reporting); 0 for one job, whose runtime is its longer direction's
    /// ([`JobResult::job_runtime_ns`]).
    #[serde(default)]
    pub runtime_sum_ns: u64,
    /// Wall (or virtual) time from start to end, including ramp, ns.
    pub elapsed_ns: u64,
    /// The job's passes over its region: every one up to a dozen; past that the first and
    /// last five, and [`JobResult::passes_between`] adds up the rest (`passes.rs`).
    pub passes: Vec<PassStats>,
    /// The passes between the listed ones, added up; `None` when every pass is listed.
    #[serde(default)]
    pub passes_between: Option<crate::passes::PassesBetween>,
    pub verify: Option<VerifySummary>,
    pub sim: Option<SimExtras>,
    /// Set when the job stopped early (Ctrl-C, error); results cover what ran.
    pub stopped: Option<String>,
    /// An I/O error that ended the job, described.
    pub error: Option<String>,
    /// I/Os submitted while the job's requests in flight (itself included) numbered 1, 2–3,
    /// 4–7, 8–15, 16–31, 32–63 and ≥ 64: fio's `IO depths` (`iodepth_level`). All zero when
    /// the executor does not count them.
    #[serde(default)]
    pub iodepth_level: [u64; 7],
    /// The errno of the first error (fio's `error`): EIO for a short transfer, EILSEQ for a
    /// verify mismatch; 0 without an error, or when the error had no errno.
    #[serde(default)]
    pub errno: i32,
    /// Which latency percentiles the renderings list (fio's `percentile_list`,
    /// `clat_percentiles`, `lat_percentiles`); set from the job's options by the caller.
    #[serde(default, skip_serializing_if = "Percentiles::is_default")]
    pub percentiles: Percentiles,
    /// Which directions the renderings show (fio's `unified_rw_reporting`); set from the
    /// job's options by the caller.
    #[serde(default, skip_serializing_if = "UnifiedRw::is_none")]
    pub unified_rw: UnifiedRw,
    /// Digits of the text output's rates and sizes (fio's `significant_figures`, 1 to 10;
    /// None: 4); set from the job's options by the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub significant_figures: Option<u8>,
    /// Rates and sizes in decimal units first, binary in parentheses (fio's `kb_base=1000`);
    /// set from the job's options by the caller.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decimal_first: bool,
    /// The text output's rates in bits a second (fio's `unit_base=1`); set from the job's
    /// options by the caller.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rates_in_bits: bool,
    /// The CPUs the job's threads were bound to (`cpus_allowed`, `cpumask`), as the kernel
    /// reports them once set; empty when the job set none. A group's, all of its jobs'.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
    /// The job's `description`, shown as fio shows it (`Description  : [...]`, JSON's
    /// `desc`); set from the job's options by the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The errors the job counted and went on past (fio's `continue_on_error`): None when
    /// the job does not go on past any, as fio then shows no count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<ErrorCount>,
    /// Where the job ran in an MPI run: the ranks folded into this result and their hosts;
    /// None outside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<MpiPlace>,
    /// fio's steady state, for a job that judges it (`steadystate_duration`): whether its
    /// rate settled and the window it was judged on; a group's, on the group's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<crate::steady::SteadyReport>,
    /// fio's latency-target mode, for a job that ran it: the target, the window, the share
    /// that had to meet it, and the depth the job ended at (the one found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyDepth>,
    /// The job's `iodepth` as given: fio 3.33's JSON `latency_depth` for a job that did not
    /// run the latency-target search (with target 0, percentile 100, window 0). Set from the
    /// job's options by the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth: Option<u32>,
    /// The time-series logs of the jobs folded into this result (fio's `write_bw_log`,
    /// …), one per job instance that asked for them; written to files by the caller.
    #[serde(skip)]
    pub logs: Vec<JobLog>,
    /// The I/O logs (fio's `write_iolog`) of the jobs folded into this result; written to
    /// files by the caller.
    #[serde(skip)]
    pub iologs: Vec<crate::iolog::IoLog>,
}

/// The ranks of an MPI run a result covers, in rank order, and the hosts they ran on (each
/// once, in the order first met).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MpiPlace {
    pub ranks: Vec<u32>,
    pub hosts: Vec<String>,
}

impl MpiPlace {
    /// Rank `rank` on `host`.
    pub fn one(rank: u32, host: &str) -> MpiPlace {
        MpiPlace {
            ranks: vec![rank],
            hosts: vec![host.to_string()],
        }
    }
    /// Take in another result's ranks and hosts.
    pub fn merge(&mut self, other: &MpiPlace) {
        self.ranks.extend_from_slice(&other.ranks);
        self.ranks.sort_unstable();
        self.ranks.dedup();
        for h in &other.hosts {
            if !self.hosts.contains(h) {
                self.hosts.push(h.clone());
            }
        }
    }
    /// `rank 3 on node1`, `ranks 0-3 on node1,node2`, `ranks 0,2 on node1`.
    pub fn text(&self) -> String {
        let r = &self.ranks;
        let ranks = match r.as_slice() {
            [one] => format!("rank {one}"),
            [first, .., last] if (*last - *first) as usize + 1 == r.len() => {
                format!("ranks {first}-{last}")
            }
            _ => format!(
                "ranks {}",
                r.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
            ),
        };
        format!("{ranks} on {}", self.hosts.join(","))
    }
}

/// Errors a job went on past (fio's `total_err` and `first_error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCount {
    pub total: u64,
    /// The first one's errno (0: none yet).
    pub first: i32,
}

impl ErrorCount {
    /// Count one more, of `errno`.
    pub fn count(&mut self, errno: i32) {
        self.total += 1;
        if self.first == 0 {
            self.first = errno;
        }
    }
}

/// Debug as derived, with `percentiles` and `logs` shown only when a job set them: results of
/// jobs that use neither print as they always have (the simulator's golden results are
/// compared as this text).
impl std::fmt::Debug for JobResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("JobResult");
        d.field("name", &self.name)
            .field("groupid", &self.groupid)
            .field("instances", &self.instances)
            .field("target", &self.target)
            .field("engine", &self.engine)
            .field("read", &self.read)
            .field("write", &self.write)
            .field("trim", &self.trim)
            .field("usr_cpu", &self.usr_cpu)
            .field("sys_cpu", &self.sys_cpu)
            .field("runtime_sum_ns", &self.runtime_sum_ns)
            .field("elapsed_ns", &self.elapsed_ns)
            .field("passes", &self.passes)
            .field("passes_between", &self.passes_between)
            .field("verify", &self.verify)
            .field("sim", &self.sim)
            .field("stopped", &self.stopped)
            .field("error", &self.error)
            .field("iodepth_level", &self.iodepth_level)
            .field("errno", &self.errno);
        if !self.percentiles.is_default() {
            d.field("percentiles", &self.percentiles);
        }
        if !self.unified_rw.is_none() {
            d.field("unified_rw", &self.unified_rw);
        }
        if let Some(s) = self.significant_figures {
            d.field("significant_figures", &s);
        }
        if self.decimal_first {
            d.field("decimal_first", &true);
        }
        if self.rates_in_bits {
            d.field("rates_in_bits", &true);
        }
        if !self.logs.is_empty() {
            d.field("logs", &self.logs);
        }
        if let Some(e) = &self.errors {
            d.field("errors", e);
        }
        if let Some(m) = &self.mpi {
            d.field("mpi", m);
        }
        if let Some(s) = &self.steadystate {
            d.field("steadystate", s);
        }
        if let Some(l) = &self.latency_target {
            d.field("latency_target", l);
        }
        d.finish()
    }
}

/// The latency percentiles a job reports, in fio's options' words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Percentiles to list, ascending (fio's `percentile_list`); empty: fio's default list.
    pub list: Vec<f64>,
    /// Digits after the point in the text output's labels: the most any entry of
    /// `percentile_list` was written with (2 for the default list).
    pub precision: u8,
    /// List completion-latency percentiles (fio's `clat_percentiles`, on by default).
    pub clat: bool,
    /// List total-latency percentiles (fio's `lat_percentiles`): only `Some(true)` lists
    /// them (text, JSON and terse); `None` (not given) and `Some(false)` list none, as fio.
    pub lat: Option<bool>,
}

impl Default for Percentiles {
    fn default() -> Self {
        Percentiles {
            list: Vec::new(),
            precision: 2,
            clat: true,
            lat: None,
        }
    }
}

impl Percentiles {
    /// Whether these are the defaults (left out of serialized results).
    pub fn is_default(&self) -> bool {
        *self == Percentiles::default()
    }

    /// The percentiles to list: `list`, or fio's default list.
    pub fn values(&self) -> &[f64] {
        if self.list.is_empty() {
            &crate::render::FIO_PERCENTILES
        } else {
            &self.list
        }
    }
}

/// fio's group_reporting: results in the order their jobs were given, each with the index
/// of the job description it comes from; `reporting` says which descriptions report as a
/// group. As fio's `__show_run_stats`, a result of a reporting description is folded
/// ([`JobResult::merge`]) into the one before it when that one reports as a group too and
/// is of the same stonewall group (`groupid`), so a `group_reporting` in `[global]` gives
/// one result per group, however many job sections it holds, named after its first job;
/// any other result stays as it is, in its order.
/// What a job does not report (fio's `disable_clat`, `disable_lat`,
/// `disable_bw_measurement`, all three with `gtod_reduce`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unmeasured {
    pub clat: bool,
    pub lat: bool,
    pub bw: bool,
}

impl JobResult {
    /// fio's latency-target fields as fio 3.33 reports them for every job (its JSON
    /// `latency_*` keys, its text `latency   :` line): for a job that ran the search, what it
    /// found; for any other, its iodepth as given with target 0, percentile 100, window 0.
    /// None when the result does not carry the job's iodepth.
    pub fn latency_depth(&self) -> Option<LatencyDepth> {
        self.latency_target
            .or(self.iodepth.map(|depth| LatencyDepth {
                target_ns: 0,
                window_ns: 0,
                percentile: 100.0,
                depth,
            }))
    }

    /// Drop what the job's options say it does not measure: its completion or total latency
    /// (histograms, and so every latency line, percentile and share), or its bandwidth and
    /// IOPS samples. (Time-series logs the job asks for are still written.)
    pub fn forget(&mut self, u: Unmeasured) {
        for d in [&mut self.read, &mut self.write, &mut self.trim] {
            if u.clat {
                d.clat = Default::default();
            }
            if u.lat {
                d.lat = Default::default();
            }
            if u.bw {
                d.samples = Default::default();
            }
        }
    }
}

pub fn fold_group_reporting(
    results: impl IntoIterator<Item = (usize, JobResult)>,
    reporting: impl Fn(usize) -> bool,
) -> Vec<JobResult> {
    let mut out: Vec<JobResult> = Vec::new();
    // Whether the last result in `out` reports as a group (and so takes the next).
    let mut open = false;
    for (si, r) in results {
        let rep = reporting(si);
        if rep && open {
            if let Some(last) = out.last_mut().filter(|l| l.groupid == r.groupid) {
                last.merge(&r);
                continue;
            }
        }
        open = rep;
        out.push(r);
    }
    out
}

/// Whether `list`, targets joined by `:` as fio lists filenames, already holds `target`
/// whole. Targets hold `:` themselves (`sim:x.toml#lun0`, `array:a,b`), so a list is not
/// split: `target` is looked for bounded by the list's ends or a `:`.
fn lists_target(list: &str, target: &str) -> bool {
    list.match_indices(target).any(|(at, _)| {
        let end = at + target.len();
        (at == 0 || list[..at].ends_with(':'))
            && (end == list.len() || list[end..].starts_with(':'))
    })
}

impl JobResult {
    /// fio's `err=` / `"error"`: the errno, or 1 for an error that carries none.
    pub fn error_code(&self) -> i32 {
        match (&self.error, self.errno) {
            (None, _) => 0,
            (Some(_), 0) => 1,
            (Some(_), e) => e,
        }
    }
}

/// The `iodepth_level` bucket of a submission made with `depth` requests in flight.
#[inline]
pub fn iodepth_bucket(depth: u32) -> usize {
    match depth {
        0 | 1 => 0,
        d => ((31 - d.leading_zeros()) as usize).min(6),
    }
}

impl JobResult {
    /// The job's runtime, ns (fio's `job_runtime`): its longer direction's, or for a group
    /// its jobs' summed.
    pub fn job_runtime_ns(&self) -> u64 {
        if self.runtime_sum_ns > 0 {
            self.runtime_sum_ns
        } else {
            self.read
                .runtime_ns
                .max(self.write.runtime_ns)
                .max(self.trim.runtime_ns)
        }
    }

    /// Fold another job into this one (fio's group_reporting): bytes and I/Os add, each
    /// direction's runtime is the longer one (so rates add up), the job runtimes add, and
    /// the CPU shares become the group's CPU time over that sum.
    pub fn merge(&mut self, other: &JobResult) {
        let (ra, rb) = (self.job_runtime_ns(), other.job_runtime_ns());
        let weighted = |a: f64, b: f64| {
            if ra + rb == 0 {
                (a + b) / 2.0
            } else {
                (a * ra as f64 + b * rb as f64) / (ra + rb) as f64
            }
        };
        self.usr_cpu = weighted(self.usr_cpu, other.usr_cpu);
        self.sys_cpu = weighted(self.sys_cpu, other.sys_cpu);
        self.runtime_sum_ns = ra + rb;
        self.instances += other.instances;
        self.cpus.extend_from_slice(&other.cpus);
        self.cpus.sort_unstable();
        self.cpus.dedup();
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.trim.merge(&other.trim);
        self.sync.merge(&other.sync);
        self.elapsed_ns = self.elapsed_ns.max(other.elapsed_ns);
        // Each pass (fio's loops) of the jobs folded: their bytes and requests add, over the
        // longest of their times, as the directions' do; passes one job added up stay added
        // up (`passes::merge`).
        crate::passes::merge(
            (&mut self.passes, &mut self.passes_between),
            (&other.passes, &other.passes_between),
        );
        if !lists_target(&self.target, &other.target) {
            self.target = format!("{}:{}", self.target, other.target);
        }
        if self.stopped.is_none() {
            self.stopped = other.stopped.clone();
        }
        if self.error.is_none() {
            self.error = other.error.clone();
            self.errno = other.errno;
        }
        for (a, b) in self.iodepth_level.iter_mut().zip(other.iodepth_level) {
            *a += b;
        }
        if let Some(o) = other.errors {
            let e = self.errors.get_or_insert_default();
            e.total += o.total;
            if e.first == 0 {
                e.first = o.first;
            }
        }
        self.logs.extend(other.logs.iter().cloned());
        self.iologs.extend(other.iologs.iter().cloned());
        match (&mut self.verify, &other.verify) {
            (Some(a), Some(b)) => {
                a.blocks_checked += b.blocks_checked;
                a.mismatches += b.mismatches;
                if a.first_mismatch.is_none() {
                    a.first_mismatch = b.first_mismatch.clone();
                }
            }
            (None, Some(b)) => self.verify = Some(b.clone()),
            _ => {}
        }
        if self.steadystate.is_none() {
            self.steadystate = other.steadystate.clone();
        }
        if self.latency_target.is_none() {
            self.latency_target = other.latency_target;
        }
        if self.iodepth.is_none() {
            self.iodepth = other.iodepth;
        }
        match (&mut self.mpi, &other.mpi) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.mpi = Some(b.clone()),
            _ => {}
        }
    }

    /// Digits of the text output's rates and sizes: `significant_figures`, 4 by default.
    pub fn sig_figs(&self) -> u8 {
        self.significant_figures
            .unwrap_or(crate::render::units::DEFAULT_SIG_FIGS)
    }

    /// Reads, writes and trims as one direction (fio's `mixed`): bytes, I/Os and latencies
    /// added up, the longest runtime, and the bandwidth and IOPS samples summed as a
    /// reporting group's are (fio 3.33 sums a job's directions' samples so for `mixed`:
    /// their counts, minimums, maximums and means each added).
    pub fn mixed(&self) -> DirStats {
        let mut m = self.read.clone();
        m.merge(&self.write);
        if self.trim.total_ios > 0 {
            m.merge(&self.trim);
        }
        m
    }

    /// The total latencies of every request, whatever its direction.
    pub fn all_lat(&self) -> LatencyHistogram {
        let mut lat = self.read.lat.clone();
        lat.merge(&self.write.lat);
        lat.merge(&self.trim.lat);
        lat
    }

    /// The directions the renderings show, as indices into [`DIRECTION_NAMES`] (0 read,
    /// 1 write, 2 trim, 3 mixed), as the job's `unified_rw_reporting` asks: read, write and
    /// trim; `mixed` alone; or read, write, trim and `mixed`.
    pub fn shown_directions(&self) -> &'static [usize] {
        match self.unified_rw {
            UnifiedRw::None => &[0, 1, TRIM],
            UnifiedRw::Mixed => &[MIXED],
            UnifiedRw::Both => &[0, 1, TRIM, MIXED],
        }
    }

    /// Direction `d` ([`DIRECTION_NAMES`]'s index): the reads, the writes, the trims, or
    /// all added up.
    pub fn direction(&self, d: usize) -> std::borrow::Cow<'_, DirStats> {
        use std::borrow::Cow::{Borrowed, Owned};
        match d {
            0 => Borrowed(&self.read),
            1 => Borrowed(&self.write),
            TRIM => Borrowed(&self.trim),
            _ => Owned(self.mixed()),
        }
    }

    /// The directions the renderings show ([`JobResult::shown_directions`]), each with its
    /// index.
    pub fn directions(&self) -> Vec<(usize, std::borrow::Cow<'_, DirStats>)> {
        self.shown_directions()
            .iter()
            .map(|&d| (d, self.direction(d)))
            .collect()
    }

    /// The flat metrics the lab stores and plots.
    pub fn summary(&self) -> Summary {
        let io_bytes = self.read.io_bytes + self.write.io_bytes + self.trim.io_bytes;
        let ios = self.read.total_ios + self.write.total_ios + self.trim.total_ios;
        let runtime_ns = self
            .read
            .runtime_ns
            .max(self.write.runtime_ns)
            .max(self.trim.runtime_ns);
        let bw = if runtime_ns == 0 {
            0.0
        } else {
            io_bytes as f64 * 1e9 / runtime_ns as f64
        };
        let iops = if runtime_ns == 0 {
            0.0
        } else {
            ios as f64 * 1e9 / runtime_ns as f64
        };
        let lat = self.all_lat();
        Summary {
            io_bytes,
            ios,
            runtime_ns,
            bw_bytes: bw,
            mb_s: bw / 1e6,
            mib_s: bw / (1u64 << 20) as f64,
            iops,
            read_bw_bytes: self.read.bw_bytes(),
            write_bw_bytes: self.write.bw_bytes(),
            read_iops: self.read.iops(),
            write_iops: self.write.iops(),
            trim_bw_bytes: self.trim.bw_bytes(),
            trim_iops: self.trim.iops(),
            lat_mean_us: lat.mean() / 1e3,
            lat_p50_us: lat.percentile(50.0) as f64 / 1e3,
            lat_p99_us: lat.percentile(99.0) as f64 / 1e3,
            lat_max_us: lat.max() as f64 / 1e3,
            usr_cpu: self.usr_cpu,
            sys_cpu: self.sys_cpu,
        }
    }
}

/// Flat metrics of a job or run. `mb_s` is decimal (10^6 B/s), `mib_s` binary (2^20 B/s).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub io_bytes: u64,
    pub ios: u64,
    pub runtime_ns: u64,
    pub bw_bytes: f64,
    pub mb_s: f64,
    pub mib_s: f64,
    pub iops: f64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    #[serde(default)]
    pub trim_bw_bytes: f64,
    #[serde(default)]
    pub trim_iops: f64,
    pub lat_mean_us: f64,
    pub lat_p50_us: f64,
    pub lat_p99_us: f64,
    pub lat_max_us: f64,
    pub usr_cpu: f64,
    pub sys_cpu: f64,
}

/// All jobs of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// `raidlab-<version>`.
    pub version: String,
    /// Seconds since the epoch when the run started (given by the caller; 0 for simulations).
    pub timestamp: u64,
    pub jobs: Vec<JobResult>,
    /// What the disks under the run's targets did while it ran (fio's `Disk stats`), one
    /// entry per disk; empty when no target sits on a disk the kernel counts, or with
    /// `disk_util=0`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disk_util: Vec<DiskUtil>,
}

/// One disk's work over a run, from the kernel's counters (`/sys/block/NAME/stat`) read as
/// the run's jobs started and again as they ended: all I/O the disk did in that time, the
/// run's and anyone else's. Requests the kernel merged count once, in `*_merges` too.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskUtil {
    /// The kernel's name for it: `vda`, `loop0`, `nvme0n1` (a partition's disk).
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Time requests of each direction spent in the disk's queue and on the disk, summed
    /// over requests (the kernel counts whole milliseconds).
    pub read_ticks_ns: u64,
    pub write_ticks_ns: u64,
    /// Time requests in flight spent queued, weighted by their number (`time_in_queue`).
    pub in_queue_ns: u64,
    /// Time the disk had at least one request in flight (`io_ticks`).
    pub busy_ns: u64,
    /// The time between the two readings.
    pub elapsed_ns: u64,
}

impl DiskUtil {
    /// fio's figures for it, in its order: requests read and written, merges read and
    /// written, the two directions' ticks and the queue's time in whole milliseconds.
    pub fn fio_figures(&self) -> [u64; 7] {
        let ms = |ns: u64| ns / 1_000_000;
        [
            self.read_ios,
            self.write_ios,
            self.read_merges,
            self.write_merges,
            ms(self.read_ticks_ns),
            ms(self.write_ticks_ns),
            ms(self.in_queue_ns),
        ]
    }

    /// Busy time over elapsed time, 0–1 (fio's `util`, there in percent); the kernel's
    /// counters move in whole milliseconds and may run a tick ahead, hence the cap.
    pub fn utilization(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        (self.busy_ns as f64 / self.elapsed_ns as f64).min(1.0)
    }
}

impl RunResult {
    /// All jobs folded into one: the aggregate of a run (side-by-side jobs add up).
    pub fn aggregate(&self) -> JobResult {
        let mut it = self.jobs.iter();
        let Some(first) = it.next() else {
            return JobResult::default();
        };
        let mut agg = first.clone();
        agg.name = "all".into();
        for j in it {
            agg.merge(j);
        }
        agg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result that sets neither percentiles nor logs prints as the derived Debug did (the
    /// simulator's golden results are this text); one that does shows them.
    #[test]
    fn debug_shows_new_fields_only_when_set() {
        let mut j = JobResult::default();
        let plain = format!("{j:?}");
        assert!(
            plain.starts_with("JobResult { name: \"\", groupid: 0,"),
            "{plain}"
        );
        assert!(
            plain.ends_with("iodepth_level: [0, 0, 0, 0, 0, 0, 0], errno: 0 }"),
            "{plain}"
        );
        j.percentiles.clat = false;
        j.logs.push(JobLog::new(1, Default::default(), 0, false));
        let set = format!("{j:?}");
        assert!(set.contains("percentiles: Percentiles {") && set.contains("logs: [JobLog {"));
    }

    #[test]
    fn summary_labels_decimal_and_binary() {
        let mut j = JobResult::default();
        j.read.io_bytes = 100_000_000;
        j.read.total_ios = 100;
        j.read.runtime_ns = 1_000_000_000;
        let s = j.summary();
        assert!((s.mb_s - 100.0).abs() < 1e-9);
        assert!((s.mib_s - 95.367431640625).abs() < 1e-9);
        assert!((s.iops - 100.0).abs() < 1e-9);
    }

    /// A folded group's passes are all its jobs' (they were the first job's alone, so
    /// numjobs=4 or four MPI ranks showed a quarter of the bytes each loop moved).
    #[test]
    fn merged_passes_add_their_jobs_bytes() {
        let job = |bytes: u64, ns: u64, passes: u32| JobResult {
            instances: 1,
            passes: (0..passes)
                .map(|p| PassStats {
                    pass: p,
                    write_bytes: bytes,
                    write_ios: bytes / 4096,
                    runtime_ns: ns,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let mut a = job(1 << 20, 100, 2);
        a.merge(&job(1 << 20, 300, 2));
        a.merge(&job(2 << 20, 200, 3));
        let got: Vec<(u32, u64, u64, u64)> = a
            .passes
            .iter()
            .map(|p| (p.pass, p.write_bytes, p.write_ios, p.runtime_ns))
            .collect();
        assert_eq!(
            got,
            [
                (0, 4 << 20, 1024, 300),
                (1, 4 << 20, 1024, 300),
                (2, 2 << 20, 512, 200)
            ]
        );
    }

    /// Merged targets are listed once each, whole, even where a target holds `:` itself
    /// (four numjobs over two LUNs of a simulated system listed them again and again).
    #[test]
    fn merged_targets_are_listed_once_each() {
        let job = |t: &str| JobResult {
            instances: 1,
            target: t.into(),
            ..Default::default()
        };
        let mut a = job("sim:x.toml#lun0");
        for t in ["sim:x.toml#lun1", "sim:x.toml#lun0", "sim:x.toml#lun1"] {
            a.merge(&job(t));
        }
        assert_eq!(a.target, "sim:x.toml#lun0:sim:x.toml#lun1");
        // A target that is only part of a listed one is listed.
        let mut b = job("array:a,b");
        b.merge(&job("b"));
        b.merge(&job("a"));
        b.merge(&job("b"));
        assert_eq!(b.target, "array:a,b:b:a");
        let mut c = job("/dev/loop0");
        c.merge(&job("/dev/loop0"));
        assert_eq!(c.target, "/dev/loop0");
    }

    /// As fio: group_reporting folds every job of a stonewall group into one result, not
    /// only the instances of one job section (`[global] group_reporting` over sections a
    /// (numjobs=3) and b was one entry, "a: (groupid=0, jobs=4)", in fio and two in
    /// raidlab); a job without it stays alone, and a new stonewall group starts a new one.
    #[test]
    fn group_reporting_folds_the_jobs_of_a_stonewall_group() {
        let job = |name: &str, group: u32, bytes: u64| {
            let mut j = JobResult {
                name: name.into(),
                groupid: group,
                instances: 1,
                target: "t".into(),
                ..Default::default()
            };
            j.read.io_bytes = bytes;
            j.read.total_ios = 1;
            j.read.runtime_ns = 10;
            j
        };
        let results = vec![
            (0, job("a", 0, 1)),
            (0, job("a", 0, 2)),
            (0, job("a", 0, 4)),
            (1, job("b", 0, 8)),
            (2, job("c", 0, 16)),
            (3, job("d", 0, 32)),
            (4, job("e", 1, 64)),
            (4, job("e", 1, 128)),
        ];
        // Descriptions 0, 1, 3 and 4 report as groups; 2 (c) does not.
        let out = fold_group_reporting(results, |si| si != 2);
        let got: Vec<(&str, u32, u32, u64)> = out
            .iter()
            .map(|j| (j.name.as_str(), j.groupid, j.instances, j.read.io_bytes))
            .collect();
        assert_eq!(
            got,
            [
                ("a", 0, 4, 15),
                ("c", 0, 1, 16),
                ("d", 0, 1, 32),
                ("e", 1, 2, 192)
            ]
        );
    }

    #[test]
    fn merging_adds_bytes_and_keeps_longest_runtime() {
        let mut a = JobResult {
            instances: 1,
            target: "a".into(),
            ..Default::default()
        };
        a.write.io_bytes = 10;
        a.write.runtime_ns = 5;
        let mut b = JobResult {
            instances: 1,
            target: "b".into(),
            ..Default::default()
        };
        b.write.io_bytes = 20;
        b.write.runtime_ns = 7;
        a.merge(&b);
        assert_eq!(
            (a.instances, a.write.io_bytes, a.write.runtime_ns),
            (2, 30, 7)
        );
        assert_eq!(a.target, "a:b");
    }

    /// As fio reports a group: job runtimes add, and the CPU share is the group's CPU time
    /// over them (two jobs at 60% and 20% over 2 s and 6 s: 1.2 + 1.2 s of 8 s = 30%).
    #[test]
    fn merging_sums_job_runtimes_and_weighs_cpu_by_them() {
        let job = |cpu: f64, ns: u64| {
            let mut j = JobResult {
                instances: 1,
                usr_cpu: cpu,
                sys_cpu: cpu / 2.0,
                ..Default::default()
            };
            j.read.runtime_ns = ns;
            j
        };
        let mut a = job(60.0, 2_000_000_000);
        a.merge(&job(20.0, 6_000_000_000));
        assert_eq!(a.job_runtime_ns(), 8_000_000_000);
        assert!((a.usr_cpu - 30.0).abs() < 1e-9 && (a.sys_cpu - 15.0).abs() < 1e-9);
        a.merge(&job(30.0, 2_000_000_000));
        assert_eq!(a.job_runtime_ns(), 10_000_000_000);
        assert!((a.usr_cpu - 30.0).abs() < 1e-9, "{}", a.usr_cpu);
        assert_eq!(a.read.runtime_ns, 6_000_000_000);
    }

    /// A group's verify summary counts every job's blocks and mismatches and keeps the first
    /// mismatch found (it had kept the first job's summary alone).
    #[test]
    fn group_reporting_adds_up_what_verify_found() {
        let job = |checked: u64, bad: u64, first: Option<&str>| JobResult {
            instances: 1,
            verify: Some(VerifySummary {
                blocks_checked: checked,
                mismatches: bad,
                first_mismatch: first.map(str::to_string),
            }),
            ..Default::default()
        };
        let mut a = job(32, 0, None);
        a.merge(&job(32, 2, Some("offset 4096")));
        a.merge(&job(16, 1, Some("offset 8192")));
        a.merge(&JobResult::default());
        let v = a.verify.unwrap();
        assert_eq!((v.blocks_checked, v.mismatches), (80, 3));
        assert_eq!(v.first_mismatch.as_deref(), Some("offset 4096"));
        let mut none = JobResult::default();
        none.merge(&job(8, 0, None));
        assert_eq!(none.verify.map(|v| v.blocks_checked), Some(8));
    }
}

#[cfg(test)]
mod mpi_place_tests {
    use super::*;

    /// Results of several ranks fold as numjobs do (rates add) and keep which ranks and hosts
    /// they cover; the text names them.
    #[test]
    fn ranks_fold_and_name_their_places() {
        let job = |rank: u32, host: &str| {
            let mut j = JobResult {
                instances: 1,
                mpi: Some(MpiPlace::one(rank, host)),
                ..Default::default()
            };
            j.write.io_bytes = 1 << 20;
            j.write.runtime_ns = 1_000_000_000 + u64::from(rank);
            j
        };
        let mut a = job(0, "n1");
        a.merge(&job(1, "n1"));
        a.merge(&job(2, "n2"));
        let m = a.mpi.clone().unwrap();
        assert_eq!(m.ranks, vec![0, 1, 2]);
        assert_eq!(m.hosts, vec!["n1".to_string(), "n2".to_string()]);
        assert_eq!(m.text(), "ranks 0-2 on n1,n2");
        assert_eq!(a.write.io_bytes, 3 << 20);
        // The slowest rank's runtime: IOR's aggregate over the longest.
        assert_eq!(a.write.runtime_ns, 1_000_000_002);
        let gap = MpiPlace {
            ranks: vec![0, 2],
            hosts: vec!["n1".into()],
        };
        assert_eq!(gap.text(), "ranks 0,2 on n1");
        assert_eq!(MpiPlace::one(3, "h").text(), "rank 3 on h");
        // Outside MPI nothing is added to the Debug text the golden results compare.
        assert!(!format!("{:?}", JobResult::default()).contains("mpi"));
    }
}
