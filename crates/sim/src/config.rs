//! The system description file (TOML): what the host sees and everything on the path to the
//! disks. See the crate documentation for the format with an annotated example.
//!
//! Parsing is pure (text in, [`System`] out); errors carry `file:line` and say what is valid.

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
    /// Commands queued at each drive (1 = FIFO, >1 = shortest positioning time first).
    #[serde(default = "one")]
    pub disk_queue_depth: u32,
    /// md's `stripe_cache_size` (stripe heads: a page of each member), for host raid5/raid6
    /// arrays; md's default when absent.
    pub stripe_cache_size: Option<u32>,
}

fn default_chunk() -> u64 {
    64
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
    let mut t: toml::Table = text.parse::<toml::Table>().map_err(|e| {
        let line = e.span().map(|s| line_at(text, s.start)).unwrap_or(1);
        SimError::usage(format!("{file}:{line}: {}", e.message().trim()))
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
                "{file}:{}: cannot read include '{}': {e}",
                line_of(text, rel),
                path.display()
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

/// Fill components' missing keys from the `[models.KIND.NAME]` they name.
fn apply_models(
    t: &mut toml::Table,
    file: &str,
    texts: &[(String, String)],
) -> Result<(), SimError> {
    let models = t
        .get("models")
        .cloned()
        .unwrap_or(toml::Value::Table(toml::Table::new()));
    for kind in ["controller", "interface", "switch"] {
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
                return Err(SimError::usage(format!(
                    "{f}:{line}: {kind} model '{m}' is not defined (defined: [models.{kind}.*] {})",
                    known.join(", ")
                )));
            };
            for (k, v) in defaults {
                tab.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    Ok(())
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

/// Parse and check a system file's text. `file` is used in messages, `dir` resolves includes.
pub fn parse(file: &str, text: &str) -> Result<System, SimError> {
    parse_in(file, text, None)
}

pub fn parse_in(file: &str, text: &str, dir: Option<&Path>) -> Result<System, SimError> {
    let mut texts = Vec::new();
    let mut table = load_table(file, text, dir, 0, &mut texts)?;
    apply_models(&mut table, file, &texts)?;
    let cfg: SystemFile = toml::Value::Table(table).try_into().map_err(|e: toml::de::Error| {
        // Parsing each file alone gives the offending value's line (merged values have none);
        // "missing field" there may just be a model's or include's job, so skip those.
        for (f, t) in &texts {
            if let Err(e1) = toml::from_str::<SystemFile>(t) {
                if !e1.message().contains("missing field") {
                    if let Some(sp) = e1.span() {
                        return SimError::usage(format!("{f}:{}: {}", line_at(t, sp.start), e1.message().trim()));
                    }
                }
            }
        }
        let msg = e.message().trim().to_string();
        // Point at the offending key or value when the message names one.
        let needle = msg.split('`').nth(1).unwrap_or("").to_string();
        let (f, line) = if needle.is_empty() { (file.to_string(), 1) } else { locate(&texts, &needle, file) };
        SimError::usage(format!(
            "{f}:{line}: {msg} (sections: [system], [host], [[interface]], [[switch]], [[controller]], [[disk]], [[array]], [[lun]], [models.*], include)"
        ))
    })?;
    let err = |needle: &str, msg: String| {
        let (f, l) = locate(&texts, needle, file);
        SimError::usage(format!("{f}:{l}: {msg}"))
    };
    let mut names = std::collections::BTreeSet::new();
    let all_names = cfg
        .interface
        .iter()
        .map(|i| &i.name)
        .chain(cfg.switch.iter().map(|s| &s.name))
        .chain(cfg.controller.iter().map(|c| &c.name))
        .chain(cfg.array.iter().map(|a| &a.name))
        .chain(cfg.lun.iter().map(|l| &l.name));
    for n in all_names {
        if !names.insert(n.clone()) {
            return Err(err(
                n,
                format!("name '{n}' is used twice (every component needs its own name)"),
            ));
        }
    }
    let h = &cfg.host;
    if let Some(pc) = h.page_cache_mib {
        if !(pc.is_finite() && pc > 0.0) {
            return Err(err(
                "page_cache_mib",
                format!("host.page_cache_mib = {pc}: needs a size above 0 MiB"),
            ));
        }
        if !h.copy_mb_s.is_some_and(|c| c.is_finite() && c > 0.0) {
            return Err(err(
                "page_cache_mib",
                "host.page_cache_mib needs copy_mb_s = <MB/s> (the copy rate between the page \
                 cache and a program's buffer, one CPU)"
                    .into(),
            ));
        }
        let (bg, dr) = (h.dirty_background_ratio, h.dirty_ratio);
        if !(bg > 0.0 && bg <= dr && dr < 100.0) {
            return Err(err(
                "dirty_ratio",
                format!(
                    "host: dirty_background_ratio = {bg}, dirty_ratio = {dr}: valid is \
                     0 < dirty_background_ratio <= dirty_ratio < 100 (% of the page cache)"
                ),
            ));
        }
        if h.max_request_kib < 4 || h.nr_requests == 0 {
            return Err(err(
                "max_request_kib",
                format!(
                    "host: max_request_kib = {}, nr_requests = {}: valid is at least 4 KiB \
                     and 1 request",
                    h.max_request_kib, h.nr_requests
                ),
            ));
        }
    } else if h.copy_mb_s.is_some() {
        return Err(err(
            "copy_mb_s",
            "host.copy_mb_s is the page cache's copy rate: give page_cache_mib as well".into(),
        ));
    }
    // Disk catalog with the file's own entries and overrides.
    let mut cat: BTreeMap<String, DiskSpec> = catalog::catalog()
        .into_iter()
        .map(|d| (d.name.clone(), d))
        .collect();
    for t in &cfg.disk {
        let name = t
            .get("name")
            .and_then(|v| v.as_str())
            .ok_or_else(|| err("[[disk]]", "[[disk]] needs name = \"...\"".into()))?;
        let mut base = match t.get("base").and_then(|v| v.as_str()) {
            Some(b) => {
                let spec = cat.get(b).ok_or_else(|| {
                    err(
                        b,
                        format!(
                            "disk base '{b}' is not in the catalog (valid: {})",
                            cat.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?;
                toml::Table::try_from(spec).map_err(|e| SimError::failed(e.to_string()))?
            }
            None => toml::Table::new(),
        };
        for (k, v) in t {
            if k != "base" {
                base.insert(k.clone(), v.clone());
            }
        }
        let spec: DiskSpec =
            toml::Value::Table(base)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    err(name, format!("disk '{name}': {}", e.message().trim()))
                })?;
        check_seek_table(name, &spec.seek_table).map_err(|m| err(name, m))?;
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
            return Err(err(
                &a.level,
                format!(
                    "array '{}': level '{}' is not known (valid: {LEVELS})",
                    a.name, a.level
                ),
            ));
        }
        if a.chunk_kib == 0 {
            return Err(err(
                &a.name,
                format!("array '{}': chunk_kib must be at least 1", a.name),
            ));
        }
        match &a.controller {
            Some(c) => {
                if !ctrl_names.contains(&c.as_str()) {
                    return Err(err(
                        c,
                        format!(
                            "array '{}': controller '{c}' is not defined (defined: {})",
                            a.name,
                            ctrl_names.join(", ")
                        ),
                    ));
                }
                let dn = a.disk.as_deref().ok_or_else(|| {
                    err(
                        &a.name,
                        format!("array '{}': needs disk = \"<catalog name>\"", a.name),
                    )
                })?;
                let spec = cat.get(dn).ok_or_else(|| {
                    err(
                        dn,
                        format!(
                            "array '{}': disk '{dn}' is not in the catalog (valid: {})",
                            a.name,
                            cat.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?;
                let n = a.disks.ok_or_else(|| {
                    err(
                        &a.name,
                        format!("array '{}': needs disks = <count>", a.name),
                    )
                })?;
                check_count(&a.level, n)
                    .map_err(|m| err(&a.name, format!("array '{}': {m}", a.name)))?;
                disks.insert(a.name.clone(), spec.clone());
            }
            None => {
                let m = a.members.as_ref().ok_or_else(|| {
                    err(&a.name, format!("array '{}': a host array (no controller) needs members = [\"lun\", ...]", a.name))
                })?;
                for x in m {
                    if !lun_names.contains(&x.as_str()) {
                        return Err(err(
                            x,
                            format!(
                                "array '{}': member '{x}' is not a LUN (LUNs: {})",
                                a.name,
                                lun_names.join(", ")
                            ),
                        ));
                    }
                }
                check_count(&a.level, m.len() as u32)
                    .map_err(|e| err(&a.name, format!("array '{}': {e}", a.name)))?;
            }
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
                return Err(err(
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
        let Some(a) = cfg.array.iter().find(|a| a.name == l.array) else {
            return Err(err(
                &l.array,
                format!("lun '{}': array '{}' is not defined", l.name, l.array),
            ));
        };
        for p in &l.path {
            if !path_names.contains(&p.as_str()) {
                return Err(err(
                    p,
                    format!(
                        "lun '{}': path element '{p}' is not an interface or switch (defined: {})",
                        l.name,
                        path_names.join(", ")
                    ),
                ));
            }
        }
        if a.controller.is_some() && l.path.is_empty() && !cfg.interface.is_empty() {
            return Err(err(
                &l.name,
                format!(
                    "lun '{}': path must name the interface(s) it goes through",
                    l.name
                ),
            ));
        }
    }
    if cfg.lun.iter().all(|l| l.hidden) {
        return Err(SimError::usage(format!(
            "{file}: no visible [[lun]]: the host sees nothing to run on"
        )));
    }
    Ok(System {
        file: file.to_string(),
        cfg,
        disks,
    })
}

fn check_count(level: &str, n: u32) -> Result<(), String> {
    let min = match level {
        "raid1" | "raid0" | "linear" => 1,
        "raid10" => 2,
        "raid5" => 3,
        "raid6" => 4,
        _ => 1,
    };
    if n < min {
        return Err(format!("{level} needs at least {min} members, got {n}"));
    }
    if level == "single" && n != 1 {
        return Err(format!("single takes exactly 1 disk, got {n}"));
    }
    if level == "raid10" && n % 2 != 0 {
        return Err(format!(
            "raid10 (2 near copies) needs an even number of members, got {n}"
        ));
    }
    Ok(())
}

/// Read and parse a system file from disk.
pub fn load(path: &std::path::Path) -> Result<System, SimError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        SimError::usage(format!("cannot read system file '{}': {e}", path.display()))
    })?;
    parse_in(&path.display().to_string(), &text, path.parent())
}

/// A measured seek table: at least two points (fraction of a full stroke, ms), fractions
/// rising within 0..=1, times finite, not negative and not falling with distance.
fn check_seek_table(disk: &str, t: &[(f64, f64)]) -> Result<(), String> {
    if t.is_empty() {
        return Ok(());
    }
    let what = "seek_table = [[fraction of a full stroke 0..1, ms], ...], fractions rising, \
                times not falling";
    if t.len() < 2 {
        return Err(format!(
            "disk '{disk}': seek_table needs at least two points ({what})"
        ));
    }
    for (i, &(x, ms)) in t.iter().enumerate() {
        if !(0.0..=1.0).contains(&x) || !ms.is_finite() || ms < 0.0 {
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
