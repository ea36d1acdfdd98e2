//! The system description file (TOML): what the host sees and everything on the path to the
//! disks. See the crate documentation for the format with an annotated example.
//!
//! Parsing is pure (text in, [`System`] out); errors carry `file:line` (a syntax error
//! `file:line:column`) and say what is valid.

use crate::catalog::{self, DiskSpec};
use crate::error::SimError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemFile {
    /// Files whose sections are merged in first (paths relative to this file).
    #[serde(default)]
    pub include: Vec<String>,
    /// Shared parameter sets: `[models.controller.NAME]`, `[models.interface.NAME]`,
    /// `[models.switch.NAME]`; a component with `model = "NAME"` takes them as defaults.
    #[serde(default)]
    pub models: toml::Table,
    pub system: Meta,
    pub host: HostCfg,
    #[serde(default)]
    pub interface: Vec<InterfaceCfg>,
    #[serde(default)]
    pub switch: Vec<SwitchCfg>,
    #[serde(default)]
    pub controller: Vec<ControllerCfg>,
    #[serde(default)]
    pub disk: Vec<toml::Table>,
    pub array: Vec<ArrayCfg>,
    pub lun: Vec<LunCfg>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCfg {
    #[serde(default = "one")]
    pub cpus: u32,
    /// Operating-system cost per I/O (syscall, driver, interrupt), µs of one CPU.
    #[serde(default)]
    pub per_io_us: f64,
    /// Fixed cost of starting each job before its first request (starting the program,
    /// opening the device), ms. Counted in the job's elapsed time, as `time dd` counts it.
    #[serde(default)]
    pub job_start_ms: f64,
    /// Memory/I-O bus bandwidth all interfaces share, MB/s (decimal). None = unbounded.
    pub bus_mb_s: Option<f64>,
    /// Parity computation rate of host (software) RAID, MB/s of data per CPU.
    pub parity_mb_s: Option<f64>,
    /// Memory the operating system caches file data in, MiB. Absent: no page cache, and
    /// buffered jobs run as direct ones.
    pub page_cache_mib: Option<f64>,
    /// Copy rate between the page cache and a program's buffer, MB/s of one CPU (needed with
    /// `page_cache_mib`).
    pub copy_mb_s: Option<f64>,
    /// Read-ahead of a LUN, KiB (Linux's default: 128). Host RAID arrays read ahead at least
    /// two full stripes, as md sets its arrays.
    #[serde(default = "read_ahead_default")]
    pub read_ahead_kib: u64,
    /// Largest block request the host sends, KiB (the queue's `max_sectors_kb`).
    #[serde(default = "max_request_default")]
    pub max_request_kib: u64,
    /// Dirty data, % of the page cache, above which the host writes back in the background,
    /// and above which a writer waits (Linux's `dirty_background_ratio`, `dirty_ratio`).
    #[serde(default = "dirty_background_default")]
    pub dirty_background_ratio: f64,
    #[serde(default = "dirty_default")]
    pub dirty_ratio: f64,
    /// Write-back requests in flight at most (the block queue's `nr_requests`).
    #[serde(default = "nr_requests_default")]
    pub nr_requests: u32,
}

// Linux's defaults: VM_READAHEAD_KB (mm), max_sectors_kb of 512 KiB (1024 sectors, the
// block layer's default limit through 4.x), vm.dirty_background_ratio = 10,
// vm.dirty_ratio = 20, nr_requests = 128 (Documentation/admin-guide/sysctl/vm.rst,
// Documentation/block/queue-sysfs.rst).
fn read_ahead_default() -> u64 {
    128
}
fn max_request_default() -> u64 {
    512
}
fn dirty_background_default() -> f64 {
    10.0
}
fn dirty_default() -> f64 {
    20.0
}
fn nr_requests_default() -> u32 {
    128
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceCfg {
    pub name: String,
    pub model: Option<String>,
    /// Link (cable) rate, MB/s, each direction.
    pub link_mb_s: f64,
    /// Adapter DMA rate into host memory (reads), MB/s. None = link rate.
    pub read_mb_s: Option<f64>,
    /// Adapter DMA rate out of host memory (writes), MB/s. None = link rate.
    pub write_mb_s: Option<f64>,
    #[serde(default)]
    pub per_command_us: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchCfg {
    pub name: String,
    pub model: Option<String>,
    /// Backplane bandwidth, MB/s. None = non-blocking.
    pub bandwidth_mb_s: Option<f64>,
    #[serde(default)]
    pub per_command_us: f64,
}

#[derive(Clone, Debug, Deserialize, PartialEq, Eq, Copy)]
#[serde(rename_all = "kebab-case")]
pub enum WritePolicy {
    WriteBack,
    WriteThrough,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerCfg {
    pub name: String,
    pub model: Option<String>,
    /// Host-side port (link into the controller), MB/s.
    pub port_mb_s: Option<f64>,
    /// Command processing per read / write command, µs.
    #[serde(default)]
    pub read_command_us: f64,
    #[serde(default)]
    pub write_command_us: f64,
    /// Data path rate to the host (reads) and into cache (writes), MB/s.
    pub read_mb_s: Option<f64>,
    pub write_mb_s: Option<f64>,
    /// Write data arrives in bursts of this size (KiB), each moved from the host port into
    /// the cache (at `write_mb_s`) only once it has fully arrived; a small write pays both
    /// hops one after the other, a large one overlaps them. Absent: writes cut through.
    pub write_burst_kib: Option<u64>,
    /// Mirrored write-back cache (dual-redundant controllers): each cache keeps a copy of its
    /// partner's dirty data, so half of `cache_mib` holds this controller's own.
    #[serde(default)]
    pub mirrored_cache: bool,
    /// Cache for writes and read-ahead, MiB.
    #[serde(default)]
    pub cache_mib: u64,
    pub write_policy: Option<WritePolicy>,
    /// Write-back needs a battery (or flash) to be allowed; without it the controller writes
    /// through, as real controllers do.
    #[serde(default)]
    pub battery: bool,
    /// Read-ahead beyond a sequential read, KiB (0 = none).
    #[serde(default)]
    pub read_ahead_kib: u64,
    /// XOR/parity engine rate, MB/s of data.
    pub parity_mb_s: Option<f64>,
    /// Destages in flight at once per array, at most. Below that cap a destage starts only
    /// while the array's drives have room in their command queues (`disk_queue_depth` each):
    /// a controller feeds its drives, it does not pile work up in front of them.
    #[serde(default = "one")]
    pub destage_depth: u32,
    /// Neighbouring dirty stripes one destage may take together (their member writes join).
    #[serde(default = "one")]
    pub destage_coalesce: u32,
    /// Leave dirty data in the cache, full stripes included, until the cache is three
    /// quarters full, then destage (default: full stripes go at once, the rest under pressure).
    #[serde(default)]
    pub lazy_destage: bool,
    /// Back-end (device side) bus rate, MB/s, shared by all disks of this controller.
    pub backend_mb_s: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrayCfg {
    pub name: String,
    /// Controller running it; absent = host software RAID (md) over LUN members.
    pub controller: Option<String>,
    pub level: String,
    pub layout: Option<String>,
    #[serde(default = "default_chunk")]
    pub chunk_kib: u64,
    /// Number of disks (with `disk`), for controller arrays.
    pub disks: Option<u32>,
    pub disk: Option<String>,
    /// Member LUNs, for host arrays.
    pub members: Option<Vec<String>>,
    /// Override the drives' own write cache.
    pub disk_write_cache: Option<bool>,
    /// Commands queued at each drive (1 = FIFO, >1 = shortest positioning time first), for
    /// controller arrays; absent = [`DEFAULT_DISK_QUEUE_DEPTH`]. A host array's drives are
    /// those of its members' arrays, so it takes none.
    pub disk_queue_depth: Option<u32>,
    /// md's `stripe_cache_size` (stripe heads: a page of each member), for host raid5/raid6
    /// arrays; md's default when absent.
    pub stripe_cache_size: Option<u32>,
    /// Failed members (0-based, in the order of `disks` or `members`): the array runs
    /// degraded. Reads of their data are rebuilt from the others (parity computed), writes
    /// go to the survivors; a failed drive gets no I/O.
    #[serde(default)]
    pub failed: Vec<u32>,
    /// The failed members are being rebuilt onto replacement drives of the same model (a
    /// spare md recovers onto after `mdadm --add`, a controller's hot spare): the rebuild
    /// walks the members from the start while the jobs run, and below where it has reached
    /// the array is whole again. Needs `failed`.
    #[serde(default)]
    pub rebuild: bool,
    /// md's `speed_limit_min` and `speed_limit_max` (`/proc/sys/dev/raid/`, or the array's
    /// `sync_speed_min`/`sync_speed_max`), KiB/s per member, for a host array's rebuild;
    /// md's defaults (1000 and 200000) when absent.
    pub speed_limit_min: Option<u64>,
    pub speed_limit_max: Option<u64>,
    /// A controller's rebuild rate, percent: the share of its time the rebuild takes while
    /// the host's I/O reaches the array (default [`crate::rebuild::CTRL_RATE_DEFAULT`]).
    pub rebuild_rate: Option<u32>,
}

fn default_chunk() -> u64 {
    64
}

/// Commands a drive queues when the system file does not say: the 32 tags of SATA's native
/// command queuing (SATA 2.6), which Linux's AHCI driver fills (31 of them); SAS and SCSI
/// drives queue at least as many. An array whose controller or bridge passes one command at
/// a time says `disk_queue_depth = 1`.
pub const DEFAULT_DISK_QUEUE_DEPTH: u32 = 32;

impl ArrayCfg {
    /// Commands queued at each drive: `disk_queue_depth` as given, else
    /// [`DEFAULT_DISK_QUEUE_DEPTH`].
    pub fn disk_queue_depth(&self) -> u32 {
        self.disk_queue_depth.unwrap_or(DEFAULT_DISK_QUEUE_DEPTH)
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LunCfg {
    pub name: String,
    pub array: String,
    /// Interfaces and switches on the way from the host to the array's controller.
    #[serde(default)]
    pub path: Vec<String>,
    /// Where the host's data starts inside the array (a partition offset), bytes.
    #[serde(default)]
    pub offset_bytes: u64,
    /// Hidden LUNs are only members of host arrays; `sim:FILE` (all LUNs) skips them.
    #[serde(default)]
    pub hidden: bool,
}

/// A parsed, cross-checked system.
#[derive(Clone, Debug)]
pub struct System {
    pub file: String,
    pub cfg: SystemFile,
    /// Device model per array name (controller arrays).
    pub disks: BTreeMap<String, DiskSpec>,
    /// The loaded texts as (file, text), the file itself first, then its includes: where
    /// errors found after parsing (building the world) point, through [`System::usage_at`].
    texts: Vec<(String, String)>,
}

impl System {
    /// A usage error `file:line: msg` at `key` of the component `header` (e.g. `[[lun]]`)
    /// named `name`, or at its name when it does not give `key`, as parsing's errors say where.
    pub fn usage_at(&self, header: &str, name: &str, key: &str, msg: String) -> SimError {
        let (f, l) = key_line(&self.texts, header, Some(name), None, key, &self.file);
        SimError::usage(format!("{f}:{l}: {msg}"))
    }
}

/// 1-based line of byte offset `pos` in `text`.
fn line_at(text: &str, pos: usize) -> usize {
    text[..pos.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Line where `name = "value"` first appears (for errors found after parsing).
fn line_of(text: &str, value: &str) -> usize {
    let q = format!("\"{value}\"");
    text.find(&q).map(|p| line_at(text, p)).unwrap_or(1)
}

pub const LEVELS: &str = "raid0, raid1, raid10, raid5, raid6, linear, single";

/// Parse one file's text into a table, following its includes (merged first, so the
/// including file's own sections come after and its single tables win).
fn load_table(
    file: &str,
    text: &str,
    dir: Option<&Path>,
    depth: u32,
    texts: &mut Vec<(String, String)>,
) -> Result<toml::Table, SimError> {
    // A syntax error is said as every raidlab TOML reader says it (`file:line:column: not
    // valid TOML: what`), with the key of its line when the parser's words do not name it.
    let mut t: toml::Table = text.parse::<toml::Table>().map_err(|e| {
        let at = e.span().map(|s| s.start);
        let mut msg = match at {
            Some(a) => with_key(text, line_at(text, a), e.message().trim()),
            None => e.message().trim().to_string(),
        };
        if msg.contains("number too large") {
            // (TOML's integers are 64-bit signed; the message alone does not say so.)
            msg.push_str(" (valid: TOML integers are at most 9223372036854775807; each key's own range is smaller)");
        }
        SimError::usage(raidlab_result::toml_syntax_error_text(file, text, at, &msg))
    })?;
    texts.push((file.to_string(), text.to_string()));
    let Some(inc) = t.remove("include") else {
        return Ok(t);
    };
    let list = inc.as_array().ok_or_else(|| {
        SimError::usage(format!(
            "{file}:{}: include must be a list of paths",
            line_of_key(text, "include")
        ))
    })?;
    if depth > 8 {
        return Err(SimError::usage(format!(
            "{file}: includes nest deeper than 8 (a cycle?)"
        )));
    }
    let mut merged = toml::Table::new();
    for v in list {
        let rel = v.as_str().ok_or_else(|| {
            SimError::usage(format!(
                "{file}:{}: include entries are paths (strings)",
                line_of_key(text, "include")
            ))
        })?;
        let path = dir
            .map(|d| d.join(rel))
            .unwrap_or_else(|| PathBuf::from(rel));
        let sub = std::fs::read_to_string(&path).map_err(|e| {
            SimError::usage(format!(
                "{file}:{}: cannot read include '{}': {}",
                line_of(text, rel),
                path.display(),
                raidlab_result::io_error_text(&e)
            ))
        })?;
        let st = load_table(
            &path.display().to_string(),
            &sub,
            path.parent(),
            depth + 1,
            texts,
        )?;
        merge(&mut merged, st);
    }
    merge(&mut merged, t);
    Ok(merged)
}

/// Arrays of tables concatenate; tables merge key by key; other values: `b` wins.
fn merge(a: &mut toml::Table, b: toml::Table) {
    for (k, v) in b {
        match (a.get_mut(&k), v) {
            (Some(toml::Value::Array(x)), toml::Value::Array(y)) => x.extend(y),
            (Some(toml::Value::Table(x)), toml::Value::Table(y)) => merge(x, y),
            (_, v) => {
                a.insert(k, v);
            }
        }
    }
}

fn line_of_key(text: &str, key: &str) -> usize {
    text.find(key).map(|p| line_at(text, p)).unwrap_or(1)
}

/// Fill components' missing keys from the `[models.KIND.NAME]` they name. Every kind of
/// model that does not exist and every model named but not defined is an error, all of them
/// given at once; with any, the components are not checked further (they lack the keys
/// their models would have given).
fn apply_models(
    t: &mut toml::Table,
    file: &str,
    texts: &[(String, String)],
) -> Result<(), SimError> {
    let mut errs = Vec::new();
    let models = t
        .get("models")
        .cloned()
        .unwrap_or(toml::Value::Table(toml::Table::new()));
    if let Some(m) = models.as_table() {
        for k in m.keys().filter(|k| !MODEL_KINDS.contains(&k.as_str())) {
            let (f, line) = sect_line(texts, &format!("[models.{k}"), file);
            errs.push(SimError::usage(format!(
                "{f}:{line}: [models.{k}.*]: there are no {k} models (valid: {}; drives are \
                 [[disk]] entries with base = \"<catalog name>\")",
                MODEL_KINDS.map(|k| format!("[models.{k}.NAME]")).join(", ")
            )));
        }
    }
    for kind in MODEL_KINDS {
        let Some(toml::Value::Array(items)) = t.get_mut(kind) else {
            continue;
        };
        for it in items.iter_mut() {
            let Some(tab) = it.as_table_mut() else {
                continue;
            };
            let Some(m) = tab
                .get("model")
                .and_then(|v| v.as_str())
                .map(str::to_string)
            else {
                continue;
            };
            let Some(defaults) = models
                .get(kind)
                .and_then(|k| k.get(&m))
                .and_then(|v| v.as_table())
            else {
                let (f, line) = locate(texts, &m, file);
                let known: Vec<String> = models
                    .get(kind)
                    .and_then(|k| k.as_table())
                    .map(|k| k.keys().cloned().collect())
                    .unwrap_or_default();
                errs.push(SimError::usage(format!(
                    "{f}:{line}: {kind} model '{m}' is not defined (defined: [models.{kind}.*] {})",
                    known.join(", ")
                )));
                continue;
            };
            for (k, v) in defaults {
                tab.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(in_file_order(errs, texts))
    }
}

/// File and line where `"value"` or `value` first appears among the loaded texts.
fn locate(texts: &[(String, String)], value: &str, fallback: &str) -> (String, usize) {
    let q = format!("\"{value}\"");
    for (f, t) in texts.iter().rev() {
        if let Some(p) = t.find(&q) {
            return (f.clone(), line_at(t, p));
        }
    }
    for (f, t) in texts.iter().rev() {
        if let Some(p) = t.find(value) {
            return (f.clone(), line_at(t, p));
        }
    }
    (fallback.to_string(), 1)
}

/// `msg` about the value on `line` of `text`, with that line's key in front (`chunk_kib:
/// invalid type: string "64k", expected u64`) and, for a key whose name carries its unit, what
/// is valid.
fn with_key(text: &str, line: usize, msg: &str) -> String {
    let Some((key, _)) = text.lines().nth(line.saturating_sub(1)).and_then(key_value) else {
        return msg.to_string();
    };
    if msg.contains(&format!("`{key}`")) {
        return msg.to_string();
    }
    match type_hint(msg, key_unit(key)) {
        Some(h) => format!("{key}: {msg} (valid: {h})"),
        None => format!("{key}: {msg}"),
    }
}

/// The unit a key's name gives its value (`read_mb_s`: MB/s, `cache_kib`: KiB), if any.
fn key_unit(key: &str) -> Option<&'static str> {
    [
        ("_mb_s", "MB/s"),
        ("_kib", "KiB"),
        ("_mib", "MiB"),
        ("_gib", "GiB"),
        ("_us", "µs"),
        ("_ms", "ms"),
        ("_bytes", "bytes"),
        ("_ratio", "%"),
    ]
    .into_iter()
    .find(|(suffix, _)| key.ends_with(suffix))
    .map(|(_, u)| u)
}

/// What a value of the wrong type or range should be, for the deserializer's message `msg`
/// about a key whose name gives its `unit`: Rust's `expected u32` in the field's words (a
/// whole number, not negative, at most so much), a number in the key's unit, true or false.
fn type_hint(msg: &str, unit: Option<&str>) -> Option<String> {
    if !msg.starts_with("invalid") {
        return None;
    }
    let of = unit.map(|u| format!(" of {u}")).unwrap_or_default();
    // (TOML's integers stop at i64::MAX, below u64's.)
    let max = [("u32", u32::MAX as u64), ("u64", i64::MAX as u64)]
        .into_iter()
        .find(|(t, _)| msg.ends_with(&format!("expected {t}")));
    if let Some((_, max)) = max {
        return Some(if msg.contains("integer `-") {
            format!("a whole number{of}, not negative")
        } else if msg.starts_with("invalid value: integer") {
            format!("a whole number{of}, at most {max}")
        } else {
            format!("a whole number{of}")
        });
    }
    if msg.ends_with("expected a boolean") {
        return Some("true or false".into());
    }
    match unit {
        Some(u) if msg.starts_with("invalid type") => {
            Some(format!("a plain number, in {u} as the key's name says"))
        }
        _ => None,
    }
}

/// The first section of the merged `table` that lacks a key it needs (or a section the
/// system needs that is not there at all), as one located error.
fn missing_in_section(
    table: &toml::Table,
    texts: &[(String, String)],
    file: &str,
) -> Option<SimError> {
    use serde::de::DeserializeOwned;
    // `[key]`, or `[[key]]` for a section that may come several times.
    let header = |key: &str, many: bool| {
        if many {
            format!("[[{key}]]")
        } else {
            format!("[{key}]")
        }
    };
    for key in ["system", "host", "array", "lun"] {
        if !table.contains_key(key) {
            let header = header(key, matches!(key, "array" | "lun"));
            return Some(SimError::usage(format!(
                "{file}: no {header} section (valid: a system has [system], [host], and at least \
                 one [[array]] and one [[lun]])"
            )));
        }
    }
    fn fails<T: DeserializeOwned>(v: &toml::Value) -> Option<String> {
        v.clone()
            .try_into::<T>()
            .err()
            .map(|e| e.message().trim().to_string())
    }
    type Check = fn(&toml::Value) -> Option<String>;
    let sections: [(&str, bool, Check); 7] = [
        ("system", false, fails::<Meta>),
        ("host", false, fails::<HostCfg>),
        ("interface", true, fails::<InterfaceCfg>),
        ("switch", true, fails::<SwitchCfg>),
        ("controller", true, fails::<ControllerCfg>),
        ("array", true, fails::<ArrayCfg>),
        ("lun", true, fails::<LunCfg>),
    ];
    for (key, many, check) in sections {
        let Some(v) = table.get(key) else { continue };
        let items: Vec<&toml::Value> = match (many, v) {
            (true, toml::Value::Array(a)) => a.iter().collect(),
            _ => vec![v],
        };
        for item in items {
            let Some(msg) = check(item) else { continue };
            let header = header(key, many);
            let name = item.get("name").and_then(|n| n.as_str());
            let (f, l) = match name {
                Some(n) => key_line(texts, &header, Some(n), None, "name", file),
                None => sect_line(texts, &header, file),
            };
            let what = match name {
                Some(n) => format!("{key} '{n}'"),
                None => header,
            };
            return Some(SimError::usage(format!("{f}:{l}: {what}: {msg}")));
        }
    }
    None
}

/// Kinds of shared parameter sets (`[models.KIND.NAME]`).
const MODEL_KINDS: [&str; 3] = ["controller", "interface", "switch"];

/// A section of a loaded text: its file, the 1-based line of its header and its lines.
struct Sect<'a> {
    file: &'a str,
    first: usize,
    lines: Vec<&'a str>,
}

impl Sect<'_> {
    /// 1-based line of `key = ...` in this section.
    fn line_of(&self, key: &str) -> Option<usize> {
        self.lines
            .iter()
            .position(|l| key_value(l).is_some_and(|(k, _)| k == key))
            .map(|i| self.first + i)
    }
}

/// `key` and `value` of a `key = value` line (None for headers, comments and the rest).
fn key_value(line: &str) -> Option<(&str, &str)> {
    let l = line.trim();
    if l.starts_with('#') || l.starts_with('[') {
        return None;
    }
    let (k, v) = l.split_once('=')?;
    Some((k.trim().trim_matches('"'), v.trim()))
}

/// Sections whose header starts with `header` (e.g. `[[controller]]`, `[host]`) and, given a
/// name, that hold `name = "NAME"`; in the order of `texts` (the file itself first).
fn sects<'a>(texts: &'a [(String, String)], header: &str, name: Option<&str>) -> Vec<Sect<'a>> {
    let mut out = Vec::new();
    for (f, t) in texts {
        let mut cur: Option<Sect> = None;
        for (i, l) in t.lines().enumerate() {
            if l.trim_start().starts_with('[') {
                out.extend(cur.take());
                if l.trim_start().starts_with(header) {
                    cur = Some(Sect {
                        file: f,
                        first: i + 1,
                        lines: Vec::new(),
                    });
                }
            }
            if let Some(c) = cur.as_mut() {
                c.lines.push(l);
            }
        }
        out.extend(cur);
    }
    out.retain(|s| {
        name.is_none_or(|n| {
            let q = format!("\"{n}\"");
            s.lines
                .iter()
                .any(|l| key_value(l).is_some_and(|(k, v)| k == "name" && v.starts_with(&q)))
        })
    });
    out
}

/// File and line of the first section starting with `header`.
fn sect_line(texts: &[(String, String)], header: &str, fallback: &str) -> (String, usize) {
    sects(texts, header, None)
        .first()
        .map(|s| (s.file.to_string(), s.first))
        .unwrap_or((fallback.to_string(), 1))
}

/// File and line of `key` of the component `header` named `name` (any such section when
/// None), else of `key` in its model's section (`model`, e.g. `[models.controller.M]`), else
/// of the component's name; `fallback:1` when none is found.
fn key_line(
    texts: &[(String, String)],
    header: &str,
    name: Option<&str>,
    model: Option<&str>,
    key: &str,
    fallback: &str,
) -> (String, usize) {
    let own = sects(texts, header, name);
    let models = model.map(|m| sects(texts, m, None)).unwrap_or_default();
    own.iter()
        .chain(&models)
        .find_map(|s| s.line_of(key).map(|l| (s.file.to_string(), l)))
        .or_else(|| {
            own.first()
                .map(|s| (s.file.to_string(), s.line_of("name").unwrap_or(s.first)))
        })
        .unwrap_or((fallback.to_string(), 1))
}

/// A number's valid range: above `lo` (`open`) or from `lo`, to `hi`, in `unit`.
#[derive(Clone, Copy)]
struct Rule {
    lo: f64,
    open: bool,
    hi: f64,
    unit: &'static str,
}

const fn range(lo: f64, hi: f64, unit: &'static str) -> Rule {
    Rule {
        lo,
        open: false,
        hi,
        unit,
    }
}
/// Rates, MB/s (decimal): 1 kB/s (a 9600-baud serial line's order) to 1 TB/s. Not merely
/// above 0: a rate of 1e-300 MB/s was taken, and one request's transfer took past the end of
/// virtual time (2^63 ns), so the run reported a 292-year latency as if it were a result.
/// At 1 kB/s the largest request still ends within a few hundred years of virtual time.
const RATE: Rule = range(0.001, 1e6, "MB/s (1 kB/s to 1 TB/s)");
/// Costs per command or I/O: at most a second.
const COST_US: Rule = range(0.0, 1e6, "µs (1 s)");
/// Drive mechanics (seeks, settling, head switches): at most a second.
const MECH_MS: Rule = range(0.0, 1000.0, "ms");
/// Sizes in KiB: at most 1 GiB, so byte counts cannot overflow.
const KIB: Rule = range(0.0, 1048576.0, "KiB (1 GiB)");
/// Sizes in MiB (caches): at most 16 TiB.
const MIB: Rule = range(0.0, 16777216.0, "MiB (16 TiB)");
/// Queue depths, counts of destages.
const COUNT: Rule = range(1.0, 1024.0, "");
/// A controller array's drives: 1 to the most members an array may have (each level's own
/// range is checked with the level, by the RAID planner's rule).
const DISKS: Rule = range(1.0, raidlab_geometry::MAX_MEMBERS as f64, "drives");

/// A value as written: integer keys are shown and compared as integers.
#[derive(Clone, Copy)]
enum Num {
    F(f64),
    I(u64),
}

/// One key to check: its value (None: absent), its rule, and for optional keys what leaving
/// them out means.
type Item = (&'static str, Option<Num>, Rule, Option<&'static str>);

fn f(x: f64) -> Option<Num> {
    Some(Num::F(x))
}
fn i(x: impl Into<u64>) -> Option<Num> {
    Some(Num::I(x.into()))
}

/// A drive's keys whose valid range is set by another key's value: (key, the key it
/// depends on). Such a key is judged only when the one it depends on is in range.
const DRIVE_DEPENDS: &[(&str, &str)] = &[
    ("spt_inner", "spt_outer"),
    ("seek_avg_ms", "seek_track_ms"),
    ("seek_full_ms", "seek_avg_ms"),
    ("channels", "units"),
];

/// [`bad_items`] of a drive's values ([`disk_items`]), less those whose range comes from a
/// value out of range (its message would quote a bound that is itself wrong).
fn drive_bad(items: &[Item]) -> Vec<(&'static str, String)> {
    let bad = bad_items(items);
    let keys: Vec<&str> = bad.iter().map(|b| b.0).collect();
    bad.iter()
        .filter(|(k, _)| {
            !DRIVE_DEPENDS
                .iter()
                .any(|(key, on)| key == k && keys.contains(on))
        })
        .cloned()
        .collect()
}

/// Every value outside its rule, in order: its key and `key = value: valid is ...`.
fn bad_items(items: &[Item]) -> Vec<(&'static str, String)> {
    items
        .iter()
        .filter_map(|&(key, v, r, absent)| {
            let (x, shown) = match v? {
                // (Tiny and huge values as written, 1e-300, not as 300 zeros.)
                Num::F(x) if x != 0.0 && x.is_finite() && !(1e-4..1e16).contains(&x.abs()) => {
                    (x, format!("{x:e}"))
                }
                Num::F(x) => (x, x.to_string()),
                Num::I(n) => (n as f64, n.to_string()),
            };
            let above = if r.open { x > r.lo } else { x >= r.lo };
            if x.is_finite() && above && x <= r.hi {
                return None;
            }
            let valid = if r.open {
                format!("above {} and at most {} {}", r.lo, r.hi, r.unit)
            } else {
                format!("{} to {} {}", r.lo, r.hi, r.unit)
            };
            let hint = absent
                .map(|a| format!("; leave {key} out for {a}"))
                .unwrap_or_default();
            Some((
                key,
                format!("{key} = {shown}: valid is {}{hint}", valid.trim_end()),
            ))
        })
        .collect()
}

/// Most cylinders (HDDs) and zone-index slots a drive model may lay out.
const LAYOUT_MAX: u64 = 1 << 22;

/// A drive's values: rates, costs, mechanics, and sizes. HDD fields are not checked on SSDs
/// and SSD fields not on HDDs (each kind ignores the other's), except that both lay out their
/// blocks in zones, so `heads`, `zones` and the sectors per track are capped on either.
fn disk_items(s: &DiskSpec) -> Vec<Item> {
    let hdd = s.kind == catalog::DeviceKind::Hdd;
    let lo = if hdd { 1.0 } else { 0.0 };
    let mut v: Vec<Item> = vec![
        (
            "capacity_bytes",
            i(s.capacity_bytes),
            range(1048576.0, (1u64 << 50) as f64, "bytes (1 MiB to 1 PiB)"),
            None,
        ),
        ("interface_mb_s", f(s.interface_mb_s), RATE, None),
        ("command_us", f(s.command_us), COST_US, None),
        ("heads", i(s.heads), range(lo, 255.0, ""), None),
        ("zones", i(s.zones), range(lo, 65536.0, ""), None),
        ("spt_outer", i(s.spt_outer), range(lo, 1e5, "sectors"), None),
    ];
    if hdd {
        v.extend([
            (
                "spt_inner",
                i(s.spt_inner),
                range(1.0, s.spt_outer as f64, "sectors (at most spt_outer)"),
                None,
            ),
            ("rpm", f(s.rpm), range(1000.0, 30000.0, "rpm"), None),
            ("seek_track_ms", f(s.seek_track_ms), MECH_MS, None),
            (
                "seek_avg_ms",
                f(s.seek_avg_ms),
                range(
                    s.seek_track_ms,
                    1000.0,
                    "ms (seek_track_ms ≤ seek_avg_ms ≤ seek_full_ms)",
                ),
                None,
            ),
            (
                "seek_full_ms",
                f(s.seek_full_ms),
                range(
                    s.seek_avg_ms,
                    1000.0,
                    "ms (seek_track_ms ≤ seek_avg_ms ≤ seek_full_ms)",
                ),
                None,
            ),
            ("write_settle_ms", f(s.write_settle_ms), MECH_MS, None),
            ("head_switch_ms", f(s.head_switch_ms), MECH_MS, None),
            ("read_ahead_kib", i(s.read_ahead_kib), KIB, None),
            ("cache_kib", i(s.cache_kib), KIB, None),
            (
                "cache_segments",
                i(s.cache_segments),
                range(
                    0.0,
                    crate::device::MAX_SEGMENTS as f64,
                    "segments (0: reads not cached)",
                ),
                None,
            ),
            (
                "age_limit_ms",
                f(s.age_limit_ms),
                range(0.0, 3.6e6, "ms (1 hour; 0: never)"),
                None,
            ),
        ]);
    } else {
        v.extend([
            (
                "spt_inner",
                i(s.spt_inner),
                range(0.0, 1e5, "sectors"),
                None,
            ),
            ("read_us", f(s.read_us), COST_US, None),
            ("program_us", f(s.program_us), COST_US, None),
            ("units", i(s.units), range(1.0, 4096.0, ""), None),
            ("read_mb_s", f(s.read_mb_s), RATE, None),
            ("write_mb_s", f(s.write_mb_s), RATE, None),
            (
                "channels",
                i(s.channels),
                range(1.0, s.units.max(1) as f64, "(at most units, the dies)"),
                None,
            ),
            ("channel_mb_s", f(s.channel_mb_s), RATE, None),
            ("page_kib", i(s.page_kib), range(1.0, 1024.0, "KiB"), None),
            (
                "slc_cache_gib",
                f(s.slc_cache_gib),
                range(0.0, 1048576.0, "GiB (0: none)"),
                None,
            ),
            ("direct_program_us", f(s.direct_program_us), COST_US, None),
            (
                "max_iops",
                f(s.max_iops),
                range(0.0, 1e9, "commands/s (0: no limit)"),
                None,
            ),
            ("cache_kib", i(s.cache_kib), KIB, None),
            (
                "spare_fraction",
                f(s.spare_fraction),
                range(0.01, 4.0, "of the user capacity (1% to 400%)"),
                None,
            ),
            (
                "block_pages",
                i(s.block_pages),
                range(1.0, 65536.0, "pages"),
                None,
            ),
            ("erase_ms", f(s.erase_ms), MECH_MS, None),
        ]);
    }
    v
}

/// What the device model lays out for a drive ([`crate::device::ZoneLayout`], as
/// `DeviceModel::new` builds it): cylinders, and slots of its zone index. Too many of either
/// is memory the simulator cannot spend. Asked only once the drive's values are in range.
fn check_layout(s: &DiskSpec) -> Result<(), (&'static str, String)> {
    let layout = crate::device::ZoneLayout::of(s);
    let cylinders = layout.cylinders();
    let (_, slots) = layout.zone_index();
    let shape = format!(
        "capacity_bytes = {}, heads = {}, zones = {}, spt_outer = {}, spt_inner = {}",
        s.capacity_bytes, s.heads, s.zones, s.spt_outer, s.spt_inner
    );
    if s.kind == catalog::DeviceKind::Hdd && cylinders > LAYOUT_MAX {
        return Err((
            "capacity_bytes",
            format!(
                "{shape} make {cylinders} cylinders: valid is at most {LAYOUT_MAX} (more heads \
                 or sectors per track, or a smaller capacity)"
            ),
        ));
    }
    if slots > LAYOUT_MAX {
        return Err((
            "spt_inner",
            format!(
                "{shape} make zones too unequal to index ({slots} slots): valid is at most \
                 {LAYOUT_MAX} (fewer zones, or spt_inner closer to spt_outer)"
            ),
        ));
    }
    Ok(())
}

/// Whether `layout` names the one layout the simulator lays an array out in (md's default
/// for its level, as `planner` builds it), and that layout's name.
fn layout_ok(level: &str, layout: &str) -> (bool, String) {
    use raidlab_geometry::{Layout, Level as G};
    let g = match level {
        "raid10" => G::Raid10,
        "raid5" => G::Raid5,
        "raid6" => G::Raid6,
        _ => G::Raid0,
    };
    let modelled = Layout::default_for(g);
    (
        Layout::parse(g, layout).is_ok_and(|l| l == modelled),
        modelled.to_string(),
    )
}

/// Parse and check a system file's text. `file` is used in messages, `dir` resolves includes.
pub fn parse(file: &str, text: &str) -> Result<System, SimError> {
    parse_in(file, text, None)
}

pub fn parse_in(file: &str, text: &str, dir: Option<&Path>) -> Result<System, SimError> {
    let mut texts = Vec::new();
    let mut table = load_table(file, text, dir, 0, &mut texts)?;
    apply_models(&mut table, file, &texts)?;
    let merged = table.clone();
    let cfg: SystemFile = toml::Value::Table(table).try_into().map_err(|e: toml::de::Error| {
        // Parsing each file alone gives the offending value's line (merged values have none);
        // "missing field" there may just be a model's or include's job, so skip those.
        for (f, t) in &texts {
            if let Err(e1) = toml::from_str::<SystemFile>(t) {
                if !e1.message().contains("missing field") {
                    if let Some(sp) = e1.span() {
                        let line = line_at(t, sp.start);
                        return SimError::usage(format!("{f}:{line}: {}", with_key(t, line, e1.message().trim())));
                    }
                }
            }
        }
        // A section without a key it needs: name the section and point at it (the key's name
        // alone, searched for in the texts, found it in a comment of an include).
        if let Some(e) = missing_in_section(&merged, &texts, file) {
            return e;
        }
        let msg = e.message().trim().to_string();
        // Point at the offending key or value when the message names one.
        let needle = msg.split('`').nth(1).unwrap_or("").to_string();
        let (f, line) = if needle.is_empty() { (file.to_string(), 1) } else { locate(&texts, &needle, file) };
        SimError::usage(format!(
            "{f}:{line}: {msg} (sections: [system], [host], [[interface]], [[switch]], [[controller]], [[disk]], [[array]], [[lun]], [models.*], include)"
        ))
    })?;
    // From here on each check is independent of the others' outcome: every error is
    // collected, and the file is refused with all of them at once, in file order. (A check
    // whose input an earlier error already refused is skipped: one mistake, one error.)
    let mut errs: Vec<SimError> = Vec::new();
    let err = |needle: &str, msg: String| {
        let (f, l) = locate(&texts, needle, file);
        SimError::usage(format!("{f}:{l}: {msg}"))
    };
    // `key` of the component `header` named `name` (or its model), as `file:line: msg`.
    let at = |header: &str, name: Option<&str>, model: Option<String>, key: &str, msg: String| {
        let (f, l) = key_line(&texts, header, name, model.as_deref(), key, file);
        SimError::usage(format!("{f}:{l}: {msg}"))
    };
    let mut names = std::collections::BTreeSet::new();
    // Kinds of component with a name refused: a reference to one of that kind that is not
    // found may mean that one, and is not refused again.
    let mut unnamed = std::collections::BTreeSet::new();
    let all_names = [
        (
            "interface",
            cfg.interface.iter().map(|x| &x.name).collect::<Vec<_>>(),
        ),
        ("switch", cfg.switch.iter().map(|x| &x.name).collect()),
        (
            "controller",
            cfg.controller.iter().map(|x| &x.name).collect(),
        ),
        ("array", cfg.array.iter().map(|x| &x.name).collect()),
        ("lun", cfg.lun.iter().map(|x| &x.name).collect()),
    ];
    for (kind, list) in &all_names {
        for n in list {
            let lun = *kind == "lun";
            if n.is_empty() || (lun && n.contains([':', '#'])) {
                errs.push(at(
                    &format!("[[{kind}]]"),
                    Some(n),
                    None,
                    "name",
                    format!(
                        "{kind} name \"{n}\": valid is a name that is not empty{}",
                        if lun {
                            " and holds no ':' or '#' (a LUN is the target sim:FILE#LUN)"
                        } else {
                            ""
                        }
                    ),
                ));
                unnamed.insert(*kind);
                continue;
            }
            if !names.insert(n.to_string()) {
                errs.push(err(
                    n,
                    format!("name '{n}' is used twice (every component needs its own name)"),
                ));
            }
        }
    }
    // Values: rates, costs and sizes within their ranges (`bad_items`' rules), every key
    // out of range; the keys refused here are not checked again below.
    let h = &cfg.host;
    let no_limit = Some("no limit");
    // (section header, component name, the shared model it takes defaults from, what an
    // error calls it, its values)
    type Section<'a> = (&'a str, Option<&'a str>, Option<String>, String, Vec<Item>);
    let mut values: Vec<Section> = vec![(
        "[host]",
        None,
        None,
        "host".into(),
        vec![
            ("cpus", i(h.cpus), range(1.0, 1024.0, "CPUs"), None),
            ("per_io_us", f(h.per_io_us), COST_US, None),
            (
                "job_start_ms",
                f(h.job_start_ms),
                range(0.0, 1e6, "ms (1000 s)"),
                None,
            ),
            ("bus_mb_s", h.bus_mb_s.map(Num::F), RATE, no_limit),
            ("parity_mb_s", h.parity_mb_s.map(Num::F), RATE, no_limit),
            (
                "page_cache_mib",
                h.page_cache_mib.map(Num::F),
                Rule { open: true, ..MIB },
                Some("no page cache"),
            ),
            ("copy_mb_s", h.copy_mb_s.map(Num::F), RATE, None),
            ("read_ahead_kib", i(h.read_ahead_kib), KIB, None),
            (
                "max_request_kib",
                i(h.max_request_kib),
                Rule { lo: 4.0, ..KIB },
                None,
            ),
            (
                "nr_requests",
                i(h.nr_requests),
                range(1.0, 65536.0, "requests"),
                None,
            ),
        ],
    )];
    for x in &cfg.interface {
        values.push((
            "[[interface]]",
            Some(&x.name),
            x.model.as_ref().map(|m| format!("[models.interface.{m}]")),
            format!("interface '{}'", x.name),
            vec![
                ("link_mb_s", f(x.link_mb_s), RATE, None),
                (
                    "read_mb_s",
                    x.read_mb_s.map(Num::F),
                    RATE,
                    Some("the link rate"),
                ),
                (
                    "write_mb_s",
                    x.write_mb_s.map(Num::F),
                    RATE,
                    Some("the link rate"),
                ),
                ("per_command_us", f(x.per_command_us), COST_US, None),
            ],
        ));
    }
    for x in &cfg.switch {
        values.push((
            "[[switch]]",
            Some(&x.name),
            x.model.as_ref().map(|m| format!("[models.switch.{m}]")),
            format!("switch '{}'", x.name),
            vec![
                (
                    "bandwidth_mb_s",
                    x.bandwidth_mb_s.map(Num::F),
                    RATE,
                    Some("a non-blocking switch"),
                ),
                ("per_command_us", f(x.per_command_us), COST_US, None),
            ],
        ));
    }
    for x in &cfg.controller {
        values.push((
            "[[controller]]",
            Some(&x.name),
            x.model.as_ref().map(|m| format!("[models.controller.{m}]")),
            format!("controller '{}'", x.name),
            vec![
                ("port_mb_s", x.port_mb_s.map(Num::F), RATE, no_limit),
                ("read_command_us", f(x.read_command_us), COST_US, None),
                ("write_command_us", f(x.write_command_us), COST_US, None),
                ("read_mb_s", x.read_mb_s.map(Num::F), RATE, no_limit),
                ("write_mb_s", x.write_mb_s.map(Num::F), RATE, no_limit),
                (
                    "write_burst_kib",
                    x.write_burst_kib.map(Num::I),
                    Rule { lo: 1.0, ..KIB },
                    Some("writes that cut through"),
                ),
                ("cache_mib", i(x.cache_mib), MIB, None),
                ("read_ahead_kib", i(x.read_ahead_kib), KIB, None),
                ("parity_mb_s", x.parity_mb_s.map(Num::F), RATE, no_limit),
                ("destage_depth", i(x.destage_depth), COUNT, None),
                ("destage_coalesce", i(x.destage_coalesce), COUNT, None),
                ("backend_mb_s", x.backend_mb_s.map(Num::F), RATE, no_limit),
            ],
        ));
    }
    for x in &cfg.array {
        values.push((
            "[[array]]",
            Some(&x.name),
            None,
            format!("array '{}'", x.name),
            vec![
                ("chunk_kib", i(x.chunk_kib), Rule { lo: 1.0, ..KIB }, None),
                ("disks", x.disks.map(|n| Num::I(n.into())), DISKS, None),
                (
                    "disk_queue_depth",
                    x.disk_queue_depth.map(|n| Num::I(n.into())),
                    COUNT,
                    None,
                ),
            ],
        ));
    }
    // (header, name, key) of each value refused.
    let mut refused: std::collections::BTreeSet<(&str, String, &str)> = Default::default();
    for (header, name, model, what, items) in values {
        for (key, msg) in bad_items(&items) {
            refused.insert((header, name.unwrap_or("").to_string(), key));
            errs.push(at(
                header,
                name,
                model.clone(),
                key,
                format!("{what}: {msg}"),
            ));
        }
    }
    let array_refused =
        |a: &ArrayCfg, key: &str| refused.contains(&("[[array]]", a.name.clone(), key));
    // Bursts are store and forward into the controller's cache: one without a cache passes a
    // write's data through as the drive takes it, and has nowhere to hold a burst.
    for x in &cfg.controller {
        let key = ("[[controller]]", x.name.clone(), "write_burst_kib");
        if let (Some(b), 0) = (x.write_burst_kib, x.cache_mib) {
            if !refused.contains(&key) {
                errs.push(at(
                    "[[controller]]",
                    Some(&x.name),
                    x.model.as_ref().map(|m| format!("[models.controller.{m}]")),
                    "write_burst_kib",
                    format!(
                        "controller '{}': write_burst_kib = {b} moves writes into the \
                         controller's cache in bursts, and it has no cache (cache_mib): give \
                         cache_mib, or leave write_burst_kib out (the controller then passes \
                         data through)",
                        x.name
                    ),
                ));
            }
        }
    }
    if h.page_cache_mib.is_some() {
        if h.copy_mb_s.is_none() {
            errs.push(err(
                "page_cache_mib",
                "host.page_cache_mib needs copy_mb_s = <MB/s> (the copy rate between the page \
                 cache and a program's buffer, one CPU)"
                    .into(),
            ));
        }
        let (bg, dr) = (h.dirty_background_ratio, h.dirty_ratio);
        if !(bg > 0.0 && bg <= dr && dr < 100.0) {
            errs.push(err(
                "dirty_ratio",
                format!(
                    "host: dirty_background_ratio = {bg}, dirty_ratio = {dr}: valid is \
                     0 < dirty_background_ratio <= dirty_ratio < 100 (% of the page cache)"
                ),
            ));
        }
    } else if h.copy_mb_s.is_some() {
        errs.push(err(
            "copy_mb_s",
            "host.copy_mb_s is the page cache's copy rate: give page_cache_mib as well".into(),
        ));
    }
    // Disk catalog with the file's own entries and overrides. A drive refused here is left
    // out of it, and the arrays naming it say nothing more of it.
    let mut cat: BTreeMap<String, DiskSpec> = catalog::catalog()
        .into_iter()
        .map(|d| (d.name.clone(), d))
        .collect();
    let mut bad_disks = std::collections::BTreeSet::new();
    for t in &cfg.disk {
        let Some(name) = t.get("name").and_then(|v| v.as_str()) else {
            errs.push(err("[[disk]]", "[[disk]] needs name = \"...\"".into()));
            continue;
        };
        let disk_at = |key: &str, msg: String| at("[[disk]]", Some(name), None, key, msg);
        if name.is_empty() {
            errs.push(disk_at(
                "name",
                "disk name \"\": valid is a name that is not empty".into(),
            ));
            continue;
        }
        if cfg
            .disk
            .iter()
            .filter(|d| d.get("name").and_then(|v| v.as_str()) == Some(name))
            .count()
            > 1
        {
            let (f, l) = sects(&texts, "[[disk]]", Some(name))
                .last()
                .map(|s| (s.file.to_string(), s.line_of("name").unwrap_or(s.first)))
                .unwrap_or((file.to_string(), 1));
            errs.push(SimError::usage(format!(
                "{f}:{l}: disk '{name}' is defined twice (every [[disk]] needs its own name; \
                 base = \"{name}\" in a second one takes the first's values)"
            )));
            bad_disks.insert(name.to_string());
            continue;
        }
        let mut base = match t.get("base").and_then(|v| v.as_str()) {
            Some(b) => {
                let Some(spec) = cat.get(b) else {
                    errs.push(err(
                        b,
                        format!(
                            "disk base '{b}' is not in the catalog (valid: {})",
                            cat.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                    bad_disks.insert(name.to_string());
                    continue;
                };
                toml::Table::try_from(spec).map_err(|e| SimError::failed(e.to_string()))?
            }
            None => toml::Table::new(),
        };
        for (k, v) in t {
            if k != "base" {
                base.insert(k.clone(), v.clone());
            }
        }
        let spec: DiskSpec = match toml::Value::Table(base).try_into() {
            Ok(s) => s,
            Err(e) => {
                let e: toml::de::Error = e;
                let msg = e.message().trim();
                // The merged table has no spans: the key at fault is the one of this entry
                // that alone spoils a drive that is otherwise whole.
                let whole = catalog::catalog().swap_remove(0);
                let whole =
                    toml::Table::try_from(whole).map_err(|e| SimError::failed(e.to_string()))?;
                let culprit = t.iter().find(|(k, v)| {
                    let mut probe = whole.clone();
                    probe.insert((*k).clone(), (*v).clone());
                    k.as_str() != "base"
                        && toml::Value::Table(probe).try_into::<DiskSpec>().is_err()
                });
                errs.push(match culprit {
                    Some((k, _)) => {
                        let hint = type_hint(msg, key_unit(k))
                            .map(|h| format!(" (valid: {h})"))
                            .unwrap_or_default();
                        disk_at(k, format!("disk '{name}': {k}: {msg}{hint}"))
                    }
                    // A field missing: the entry neither starts from a drive nor gives all.
                    None if msg.starts_with("missing field") && !t.contains_key("base") => err(
                        name,
                        format!(
                            "disk '{name}': {msg} (valid: base = \"NAME\" of a catalog drive or \
                             an earlier [[disk]], whose values the entry changes, or every field)"
                        ),
                    ),
                    None => err(name, format!("disk '{name}': {msg}")),
                });
                bad_disks.insert(name.to_string());
                continue;
            }
        };
        let n = errs.len();
        if spec.kind == catalog::DeviceKind::Hdd && spec.ssd_state != catalog::FlashState::Fresh {
            errs.push(disk_at(
                "ssd_state",
                format!(
                    "disk '{name}': ssd_state = \"steady\" is a flash drive's state: valid \
                     only with kind = \"ssd\" (leave it out for a hard disk)"
                ),
            ));
        }
        if let Err(m) = check_seek_table(name, &spec.seek_table) {
            errs.push(disk_at("seek_table", m));
        }
        // Every value out of range, but not one whose range is set by a value itself out of
        // range (seek_avg_ms lies between the track and full seeks). The layout is worked out
        // only when every value is in range.
        let bad = drive_bad(&disk_items(&spec));
        if bad.is_empty() {
            if let Err((key, m)) = check_layout(&spec) {
                errs.push(disk_at(key, format!("disk '{name}': {m}")));
            }
        }
        for (key, m) in bad {
            errs.push(disk_at(key, format!("disk '{name}': {m}")));
        }
        if errs.len() > n {
            bad_disks.insert(name.to_string());
            continue;
        }
        cat.insert(name.to_string(), spec);
    }
    let mut disks = BTreeMap::new();
    let ctrl_names: Vec<&str> = cfg.controller.iter().map(|c| c.name.as_str()).collect();
    let lun_names: Vec<&str> = cfg.lun.iter().map(|l| l.name.as_str()).collect();
    for a in &cfg.array {
        if ![
            "raid0", "raid1", "raid10", "raid5", "raid6", "linear", "single",
        ]
        .contains(&a.level.as_str())
        {
            // Its member count and layout mean nothing without a level.
            errs.push(err(
                &a.level,
                format!(
                    "array '{}': level '{}' is not known (valid: {LEVELS})",
                    a.name, a.level
                ),
            ));
            continue;
        }
        let array_at = |key: &str, msg: String| {
            at(
                "[[array]]",
                Some(&a.name),
                None,
                key,
                format!("array '{}': {msg}", a.name),
            )
        };
        if let Some(l) = &a.layout {
            let (ok, modelled) = layout_ok(&a.level, l);
            if !ok {
                errs.push(array_at(
                    "layout",
                    format!(
                        "layout = \"{l}\": the simulator lays {} out as md's default (valid: \
                         {modelled}, or leave layout out)",
                        a.level
                    ),
                ));
            }
        }
        // Keys of the other kind of array.
        let (wrong, kind, takes) = match &a.controller {
            Some(_) => (
                vec![("members", a.members.is_some())],
                "a controller array",
                "disks = <count> and disk = \"<drive>\"",
            ),
            None => (
                vec![
                    ("disks", a.disks.is_some()),
                    ("disk", a.disk.is_some()),
                    ("disk_write_cache", a.disk_write_cache.is_some()),
                    ("disk_queue_depth", a.disk_queue_depth.is_some()),
                ],
                "a host array (no controller)",
                "members = [\"lun\", ...]",
            ),
        };
        if let Some((key, _)) = wrong.iter().find(|(_, set)| *set) {
            // A host array's drives are those of the arrays behind its member LUNs.
            let valid = if a.controller.is_none() && key.starts_with("disk_") {
                format!("set {key} on the arrays of its member LUNs, whose drives it uses")
            } else {
                format!("it takes {takes}")
            };
            // Which kind of array it is, is in doubt: its other keys are not checked.
            errs.push(array_at(
                key,
                format!("{key} does not apply to {kind}: {valid}"),
            ));
            continue;
        }
        // Whether the member count is known to be valid, and the chunk size.
        let mut counted = true;
        let mut chunk_ok = !array_refused(a, "chunk_kib");
        match &a.controller {
            Some(c) => {
                if !ctrl_names.contains(&c.as_str()) && !unnamed.contains("controller") {
                    errs.push(err(
                        c,
                        format!(
                            "array '{}': controller '{c}' is not defined (defined: {})",
                            a.name,
                            ctrl_names.join(", ")
                        ),
                    ));
                }
                let spec = match a.disk.as_deref() {
                    None => {
                        errs.push(err(
                            &a.name,
                            format!("array '{}': needs disk = \"<catalog name>\"", a.name),
                        ));
                        None
                    }
                    Some(dn) if bad_disks.contains(dn) => None,
                    Some(dn) => {
                        let spec = cat.get(dn);
                        if spec.is_none() {
                            errs.push(err(
                                dn,
                                format!(
                                    "array '{}': disk '{dn}' is not in the catalog (valid: {})",
                                    a.name,
                                    cat.keys().cloned().collect::<Vec<_>>().join(", ")
                                ),
                            ));
                        }
                        spec
                    }
                };
                match a.disks {
                    None => {
                        errs.push(err(
                            &a.name,
                            format!("array '{}': needs disks = <count>", a.name),
                        ));
                        counted = false;
                    }
                    Some(_) if array_refused(a, "disks") => counted = false,
                    Some(n) => {
                        if let Err(valid) = check_count(&a.level, n, "drive") {
                            errs.push(array_at("disks", format!("disks = {n}: {valid}")));
                            counted = false;
                        }
                    }
                }
                if let Some(spec) = spec {
                    if chunk_ok && a.chunk_kib * 1024 > spec.capacity_bytes {
                        errs.push(array_at(
                            "chunk_kib",
                            format!(
                                "chunk_kib = {}: valid is 1 to {} KiB (a chunk fits on a drive: \
                                 '{}' holds {} bytes)",
                                a.chunk_kib,
                                (spec.capacity_bytes >> 10).min(1 << 20),
                                a.disk.as_deref().unwrap_or_default(),
                                spec.capacity_bytes
                            ),
                        ));
                        chunk_ok = false;
                    }
                    disks.insert(a.name.clone(), spec.clone());
                }
            }
            None => match &a.members {
                None => {
                    errs.push(err(&a.name, format!("array '{}': a host array (no controller) needs members = [\"lun\", ...]", a.name)));
                    counted = false;
                }
                Some(m) => {
                    for (k, x) in m.iter().enumerate() {
                        if m[..k].contains(x) {
                            errs.push(array_at(
                                "members",
                                format!("members lists '{x}' twice (valid: each LUN once)"),
                            ));
                            counted = false;
                            continue;
                        }
                        if !lun_names.contains(&x.as_str()) && !unnamed.contains("lun") {
                            errs.push(err(
                                x,
                                format!(
                                    "array '{}': member '{x}' is not a LUN (LUNs: {})",
                                    a.name,
                                    lun_names.join(", ")
                                ),
                            ));
                        }
                    }
                    if counted {
                        if let Err(valid) = check_count(&a.level, m.len() as u32, "LUN") {
                            let n = m.len();
                            let s = if n == 1 { "" } else { "s" };
                            errs.push(array_at(
                                "members",
                                format!("members lists {n} LUN{s}: {valid}"),
                            ));
                            counted = false;
                        }
                    }
                }
            },
        }
        // (Only with a valid member count and chunk: the stripe is theirs.)
        let width = a
            .members
            .as_ref()
            .map_or(a.disks.unwrap_or(0) as u64, |m| m.len() as u64);
        let stripe = a.chunk_kib.saturating_mul(1024).saturating_mul(width);
        if counted && chunk_ok && stripe > crate::world::MAX_STRIPE_BYTES {
            errs.push(array_at(
                "chunk_kib",
                format!(
                    "chunk_kib = {} over {width} members makes a {stripe}-byte stripe: \
                     valid is a stripe (chunk_kib × members) under 4 GiB",
                    a.chunk_kib
                ),
            ));
        }
        for (key, msg) in rebuild_problems(a) {
            errs.push(array_at(key, msg));
        }
        if let Some(n) = a.stripe_cache_size {
            use crate::stripecache::{STRIPES_MAX, STRIPES_MIN};
            let what = if a.controller.is_some() || !matches!(a.level.as_str(), "raid5" | "raid6") {
                Some("applies to host (md) raid5/raid6 arrays only")
            } else if !(STRIPES_MIN..=STRIPES_MAX).contains(&n) {
                Some("must be 17 to 32768 stripe heads, as md's sysfs accepts")
            } else {
                None
            };
            if let Some(what) = what {
                errs.push(err(
                    "stripe_cache_size",
                    format!("array '{}': stripe_cache_size = {n}: {what}", a.name),
                ));
            }
        }
    }
    let path_names: Vec<&str> = cfg
        .interface
        .iter()
        .map(|i| i.name.as_str())
        .chain(cfg.switch.iter().map(|s| s.name.as_str()))
        .collect();
    for l in &cfg.lun {
        let a = cfg.array.iter().find(|a| a.name == l.array);
        if a.is_none() && !unnamed.contains("array") {
            errs.push(err(
                &l.array,
                format!("lun '{}': array '{}' is not defined", l.name, l.array),
            ));
        }
        for (i, p) in l.path.iter().enumerate() {
            if l.path[..i].contains(p) {
                // Each element is a stage the data crosses: named twice, every byte would be
                // charged twice to it.
                errs.push(at(
                    "[[lun]]",
                    Some(&l.name),
                    None,
                    "path",
                    format!(
                        "lun '{}': path names '{p}' twice (valid: each interface or switch once)",
                        l.name
                    ),
                ));
                continue;
            }
            if !path_names.contains(&p.as_str())
                && !unnamed.contains("interface")
                && !unnamed.contains("switch")
            {
                errs.push(err(
                    p,
                    format!(
                        "lun '{}': path element '{p}' is not an interface or switch (defined: {})",
                        l.name,
                        path_names.join(", ")
                    ),
                ));
            }
        }
        if a.is_some_and(|a| a.controller.is_some())
            && l.path.is_empty()
            && !cfg.interface.is_empty()
        {
            errs.push(err(
                &l.name,
                format!(
                    "lun '{}': path must name the interface(s) it goes through",
                    l.name
                ),
            ));
        }
    }
    if cfg.lun.iter().all(|l| l.hidden) {
        errs.push(SimError::usage(format!(
            "{file}: no visible [[lun]]: the host sees nothing to run on"
        )));
    }
    if !errs.is_empty() {
        return Err(in_file_order(errs, &texts));
    }
    Ok(System {
        file: file.to_string(),
        cfg,
        disks,
        texts,
    })
}

/// `errors` (each `file:line: …` or `file: …`) as one error, in the order of the loaded texts
/// (the file itself first, then its includes) and of lines within each; an error that names
/// no line comes after its file's others.
fn in_file_order(mut errors: Vec<SimError>, texts: &[(String, String)]) -> SimError {
    let place = |e: &SimError| {
        let m = &e.message;
        texts
            .iter()
            .enumerate()
            .find_map(|(k, (f, _))| {
                let rest = m.strip_prefix(f.as_str())?.strip_prefix(':')?;
                let line = rest
                    .split(':')
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(usize::MAX);
                Some((k, line))
            })
            .unwrap_or((usize::MAX, usize::MAX))
    };
    errors.sort_by_key(place);
    SimError::usage_all(errors)
}

/// What is wrong with an array's rebuild keys, as (key, message) pairs: a rebuild needs a
/// failed member of a level with redundancy; md's speed limits belong to host arrays, the
/// rebuild rate to controller arrays, and neither means anything without a rebuild.
fn rebuild_problems(a: &ArrayCfg) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let host = a.controller.is_none();
    if a.rebuild {
        if matches!(a.level.as_str(), "raid0" | "linear" | "single") {
            out.push((
                "rebuild",
                format!(
                    "rebuild = true: {} has no redundancy to rebuild a member from (valid: raid1, raid10, raid5, raid6)",
                    a.level
                ),
            ));
        } else if a.failed.is_empty() {
            out.push((
                "rebuild",
                "rebuild = true needs a failed member to rebuild (failed = [k])".to_string(),
            ));
        }
    }
    let limits = [
        ("speed_limit_min", a.speed_limit_min),
        ("speed_limit_max", a.speed_limit_max),
    ];
    for (key, v) in limits {
        let Some(v) = v else { continue };
        if !host {
            out.push((
                key,
                format!(
                    "{key} = {v}: md's speed limits apply to host (md) arrays; a controller array takes rebuild_rate = <percent>"
                ),
            ));
        } else if !a.rebuild {
            out.push((key, format!("{key} = {v} needs rebuild = true")));
        } else if !(1..=crate::rebuild::SPEED_LIMIT_MAX).contains(&v) {
            out.push((
                key,
                format!(
                    "{key} = {v}: valid is 1 to {} KiB/s per member",
                    crate::rebuild::SPEED_LIMIT_MAX
                ),
            ));
        }
    }
    if let (true, true, Some(lo), Some(hi)) =
        (host, a.rebuild, a.speed_limit_min, a.speed_limit_max)
    {
        let valid = |v: u64| (1..=crate::rebuild::SPEED_LIMIT_MAX).contains(&v);
        if lo > hi && valid(lo) && valid(hi) {
            out.push((
                "speed_limit_min",
                format!(
                    "speed_limit_min = {lo} is above speed_limit_max = {hi} (valid: min at most max)"
                ),
            ));
        }
    }
    if let Some(r) = a.rebuild_rate {
        if host {
            out.push((
                "rebuild_rate",
                format!(
                    "rebuild_rate = {r}: applies to controller arrays; a host (md) array takes speed_limit_min and speed_limit_max"
                ),
            ));
        } else if !a.rebuild {
            out.push((
                "rebuild_rate",
                format!("rebuild_rate = {r} needs rebuild = true"),
            ));
        } else if !(1..=100).contains(&r) {
            out.push((
                "rebuild_rate",
                format!("rebuild_rate = {r}: valid is 1 to 100 (percent)"),
            ));
        }
    }
    out
}

/// Whether an array of `level` may have `n` members (`what`: drives or LUNs); the error is
/// `valid for raid1 is 2 to 1024 drives`. The RAID planner's rule
/// (`Geometry::check_members`, which `Geometry::new` checks by) is asked directly, so nothing
/// it would refuse later passes here; the simulator then asks a little more of its models: a
/// single drive is one drive, a raid5 has at least 3 members, and a raid10's 2 near copies
/// pair its members up.
fn check_count(level: &str, n: u32, what: &str) -> Result<(), String> {
    use crate::planner::Level;
    use raidlab_geometry::{Geometry, Layout};
    // An unknown level was refused earlier.
    let Some(lvl) = Level::parse(level) else {
        return Ok(());
    };
    let planner = lvl.geometry().members();
    let (min, max) = match lvl {
        Level::Single => (1, 1),
        Level::Raid5 => (3.max(*planner.start()), *planner.end()),
        _ => (*planner.start(), *planner.end()),
    };
    let pairs = lvl == Level::Raid10;
    if Geometry::check_members(lvl.geometry(), Layout::None, n).is_ok()
        && (min..=max).contains(&n)
        && (!pairs || n.is_multiple_of(2))
    {
        return Ok(());
    }
    let valid = match lvl {
        Level::Single => format!("exactly 1 {what}"),
        Level::Raid10 => format!("an even number of {what}s from {min} to {max} (2 near copies)"),
        _ => format!("{min} to {max} {what}s"),
    };
    Err(format!("valid for {level} is {valid}"))
}

/// Read and parse a system file from disk.
pub fn load(path: &std::path::Path) -> Result<System, SimError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        SimError::usage(format!(
            "cannot read system file '{}': {}",
            path.display(),
            raidlab_result::io_error_text(&e)
        ))
    })?;
    parse_in(&path.display().to_string(), &text, path.parent())
}

/// A measured seek table: at least two points (fraction of a full stroke, ms), fractions
/// rising within 0..=1, times 0 to 1000 ms and not falling with distance.
fn check_seek_table(disk: &str, t: &[(f64, f64)]) -> Result<(), String> {
    if t.is_empty() {
        return Ok(());
    }
    let what = "seek_table = [[fraction of a full stroke 0..1, ms 0..1000], ...], fractions \
                rising, times not falling";
    if t.len() < 2 {
        return Err(format!(
            "disk '{disk}': seek_table needs at least two points ({what})"
        ));
    }
    for (i, &(x, ms)) in t.iter().enumerate() {
        if !(0.0..=1.0).contains(&x) || !(0.0..=1000.0).contains(&ms) {
            return Err(format!(
                "disk '{disk}': seek_table point {} is [{x}, {ms}] ({what})",
                i + 1
            ));
        }
        if let Some(&(px, pms)) = i.checked_sub(1).map(|j| &t[j]) {
            if x <= px || ms < pms {
                return Err(format!(
                    "disk '{disk}': seek_table point {} [{x}, {ms}] does not follow [{px}, {pms}] ({what})",
                    i + 1
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in drives pass the checks a `[[disk]]` entry gets.
    #[test]
    fn catalog_drives_pass_the_drive_checks() {
        for d in catalog::catalog() {
            assert!(bad_items(&disk_items(&d)).is_empty(), "{}", d.name);
            assert!(check_layout(&d).is_ok(), "{}", d.name);
            assert!(
                check_seek_table(&d.name, &d.seek_table).is_ok(),
                "{}",
                d.name
            );
        }
    }
}
