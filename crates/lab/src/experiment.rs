//! The experiment file (TOML): what to run, on what, over which axes, how often, and what to do
//! around each run. `recipes/README.md` documents every table with an annotated example.

use crate::error::LabError;
use crate::sweep::Axis;
use raidlab_workload::size::parse_size;
use raidlab_workload::spec::OPTION_NAMES;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Target parameters (besides `filename`) that may be fixed in `[target]` or swept.
pub const TARGET_KEYS: &[&str] = &[
    "filename",
    "system",
    "level",
    "chunk",
    "layout",
    "members",
    "member_size",
    "dir",
    // The size of the one file `numjobs` jobs share and split among themselves (seed 002's
    // threads each reading a contiguous part): workload values refer to it as
    // `size = "{file_size/numjobs}"`, `offset_increment = "{file_size/numjobs}"`.
    "file_size",
];

/// Parameters whose values are sizes: stored and printed in bytes.
pub const SIZE_KEYS: &[&str] = &[
    "bs",
    "blocksize",
    "size",
    "io_size",
    "blockalign",
    "ba",
    "offset",
    "offset_increment",
    "chunk",
    "member_size",
    "file_size",
];

/// `[repeat]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Repeat {
    /// Repetitions per point.
    pub count: u32,
    /// Flag a point when (max − min) / median of `metric` exceeds this fraction (0.05 = 5%).
    pub spread_threshold: Option<f64>,
    /// Extra attempts (each a full set of `count` repetitions) for flagged points.
    pub rerun: u32,
    /// The metric the spread is judged on (default `mb_s`).
    pub metric: String,
}

/// What `[converge]` grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grow {
    /// The bytes each job moves (fio's `size`).
    Size,
    /// The run time (fio's `runtime` with `time_based`).
    Runtime,
}

impl Grow {
    /// Set `value` (bytes or ns) as what this grows in `spec`.
    pub fn apply(self, spec: &mut raidlab_workload::JobSpec, value: u64) {
        match self {
            Grow::Size => spec.size = Some(value),
            Grow::Runtime => {
                spec.runtime_ns = Some(value);
                spec.time_based = true;
            }
        }
    }
}

/// `[converge]`: grow the transfer until the rate settles (seed 000's sustained rate).
#[derive(Clone, Debug, PartialEq)]
pub struct Converge {
    pub grow: Grow,
    /// First value: bytes for `size`, nanoseconds for `runtime`.
    pub start: u64,
    pub factor: f64,
    /// Stop when |rate_k − rate_(k−1)| / rate_(k−1) < tolerance.
    pub tolerance: f64,
    pub max_steps: u32,
    /// Upper bound for the grown value (bytes or ns); the search stops there.
    pub max: Option<u64>,
}

/// How to defeat caches before each run.
#[derive(Clone, Debug, PartialEq)]
pub enum CacheDefeat {
    None,
    /// `sync`, then `echo 3 > /proc/sys/vm/drop_caches` (needs root).
    DropCaches,
    /// Read a dummy file of `size` bytes (created if missing), as seed 002 read a file twice
    /// the controller's RAM so its cache held nothing of the target.
    ReadFile {
        path: String,
        size: u64,
    },
}

/// `[hooks]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Hooks {
    pub setup: Vec<String>,
    pub teardown: Vec<String>,
    pub cache_defeat: CacheDefeat,
}

/// One series taken from a reference CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceSeries {
    /// Parameter name → template over the CSV's columns (`"fig{figure}"`, `"{block_kib*1024}"`).
    pub params: Vec<(String, String)>,
    /// Metric name → CSV column.
    pub metrics: Vec<(String, String)>,
}

/// `[[reference]]`: measured numbers from elsewhere, stored as `source = reference` rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub file: PathBuf,
    /// Label stored as the rows' target.
    pub label: String,
    pub series: Vec<ReferenceSeries>,
}

/// A parsed experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    /// Folder relative paths (`system`, reference files) are taken from.
    pub base_dir: PathBuf,
    /// Where it came from (a path, or `(embedded)`).
    pub origin: String,
    /// The effective experiment (after `--set` overrides) as TOML text.
    pub text: String,
    /// Hash of what determines the runs (workload, target, sweep, converge, hooks, the
    /// simulated system files, and the simulator's code once [`Experiment::simulated_by`] is
    /// told it): 16 hex digits.
    pub hash: String,
    /// Whether any of its targets is a simulated system (`system = …` or a `sim:` filename).
    pub simulates: bool,
    /// fio options, in file order.
    pub workload: Vec<(String, String)>,
    /// Fixed target parameters (see [`TARGET_KEYS`]).
    pub target: BTreeMap<String, String>,
    pub axes: Vec<Axis>,
    pub exclude: Vec<BTreeMap<String, String>>,
    pub repeat: Repeat,
    pub converge: Option<Converge>,
    pub hooks: Hooks,
    pub references: Vec<Reference>,
}

fn bad(origin: &str, m: impl std::fmt::Display) -> LabError {
    LabError::usage(format!("{origin}: {m}"))
}

/// A TOML scalar as the string fio would read (`true` → `1`).
pub fn scalar(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "1".into() } else { "0".into() }),
        _ => None,
    }
}

/// Is `key` something a sweep may vary?
pub fn is_param(key: &str) -> bool {
    OPTION_NAMES.contains(&key) || TARGET_KEYS.contains(&key)
}

/// The canonical form of a parameter value: sizes in bytes, everything else as written.
/// `system` keeps its path here; [`display_value`] and [`system_labels`] show it.
pub fn canonical_value(key: &str, value: &str) -> Result<String, String> {
    if SIZE_KEYS.contains(&key) && !value.contains(',') {
        return parse_size(value).map(|b| b.to_string());
    }
    Ok(value.trim().to_string())
}

/// How a parameter is shown in tables and stored in the database: `system` as its file stem
/// (`fig16`), everything else canonical. A swept `system` axis whose files share a stem is
/// shown by [`system_labels`] instead.
pub fn display_value(key: &str, canonical: &str) -> String {
    if key == "system" {
        return system_labels(std::slice::from_ref(&canonical.to_string())).remove(0);
    }
    canonical.to_string()
}

/// A `system` value split into its path's components (the last one without its extension)
/// and its `#lun` suffix. `.` and empty components are left out.
fn system_parts(canonical: &str) -> (Vec<String>, String) {
    let v = canonical.trim_start_matches("sim:");
    let (path, lun) = match v.split_once('#') {
        Some((p, l)) => (p, format!("#{l}")),
        None => (v, String::new()),
    };
    let mut parts: Vec<String> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect();
    if let Some(last) = parts.last_mut() {
        if let Some(stem) = Path::new(last.as_str()).file_stem() {
            *last = stem.to_string_lossy().into_owned();
        }
    }
    (parts, lun)
}

/// How the values of a swept `system` axis are shown and stored: each by its file stem
/// (`fig16`) when that is unique among the axis's files; when several different files share
/// a stem, each by as many trailing path components as tell it from the others
/// (`xdd2008/raid5`, `alt/raid5`). Distinct files are thus distinct points (in tables, in
/// the database and when a campaign resumes); equal values get equal labels.
pub fn system_labels(values: &[String]) -> Vec<String> {
    let parts: Vec<(Vec<String>, String)> = values.iter().map(|v| system_parts(v)).collect();
    let label = |i: usize, k: usize| -> String {
        let (p, lun) = &parts[i];
        format!("{}{lun}", p[p.len().saturating_sub(k)..].join("/"))
    };
    let longest = parts.iter().map(|p| p.0.len()).max().unwrap_or(0).max(1);
    (0..values.len())
        .map(|i| {
            let others: Vec<usize> = (0..values.len())
                .filter(|&j| values[j] != values[i])
                .collect();
            (1..=longest)
                .map(|k| label(i, k))
                .enumerate()
                .find(|(k, l)| others.iter().all(|&j| label(j, k + 1) != *l))
                .map(|(_, l)| l)
                // Two spellings of one path (`a//x.toml`, `a/x.toml`): as written.
                .unwrap_or_else(|| values[i].trim_start_matches("sim:").to_string())
        })
        .collect()
}

/// A TOML syntax error in `text` (read from `origin`) as one line that says where:
/// `origin:LINE:COLUMN: not valid TOML: what`, the form every raidlab TOML reader gives
/// (`raidlab_result::toml_syntax_error_text`; simulated system files say it the same way).
/// Shared by experiment files and `raidlab report --limits` files.
pub fn toml_syntax_error(origin: &str, text: &str, e: &toml::de::Error) -> String {
    raidlab_result::toml_syntax_error_text(origin, text, e.span().map(|s| s.start), e.message())
}

/// 64-bit FNV-1a, printed as 16 hex digits: a stable fingerprint (not a security hash).
pub fn fnv1a_hex(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The simulated system files an experiment names (`system = …` in `[target]` or swept,
/// or a `sim:` filename), each with a fingerprint of its text and of the files it includes.
/// Files that cannot be read are left out (running them reports the error); the flag says
/// whether the experiment names any simulated system at all.
fn system_prints(doc: &toml::Table, base_dir: &Path) -> (bool, Vec<(String, String)>) {
    let mut names: Vec<String> = Vec::new();
    let mut take = |v: &toml::Value, key: &str| {
        let vals: Vec<&toml::Value> = match v {
            toml::Value::Array(a) => a.iter().collect(),
            other => vec![other],
        };
        for x in vals {
            if let Some(t) = x.as_str() {
                if key == "system" || t.starts_with("sim:") {
                    let t = t.trim_start_matches("sim:");
                    names.push(t.split('#').next().unwrap_or(t).to_string());
                }
            }
        }
    };
    for section in ["target", "sweep"] {
        if let Some(t) = doc.get(section).and_then(|t| t.as_table()) {
            for key in ["system", "filename"] {
                if let Some(v) = t.get(key) {
                    take(v, key);
                }
            }
        }
    }
    let mut out = Vec::new();
    let simulates = !names.is_empty();
    for n in names {
        let path = if Path::new(&n).is_absolute() {
            PathBuf::from(&n)
        } else {
            base_dir.join(&n)
        };
        let mut text = Vec::new();
        if with_includes(&path, &mut text, 0) {
            out.push((n, fnv1a_hex(&text)));
        }
    }
    (simulates, out)
}

/// Append `path`'s bytes and those of the files its `include = [...]` names (relative to it).
fn with_includes(path: &Path, into: &mut Vec<u8>, depth: u32) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    into.extend_from_slice(&bytes);
    if depth < 8 {
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(t) = text.parse::<toml::Table>() {
            let dir = path.parent().unwrap_or(Path::new("."));
            for inc in t
                .get("include")
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
            {
                with_includes(&dir.join(inc), into, depth + 1);
            }
        }
    }
    true
}

/// Apply a `--set KEY=VALUE` override to the experiment's TOML. `a.b=v` sets that path;
/// a bare target key (`filename`, `system`, `level`, `members`, …) sets `[target]`; any other
/// bare key is a fio option in `[workload]`. A key that is also a sweep axis stops being swept
/// (the value given is used for every point), except `members` given as a list of files,
/// which keeps a swept member count (the first N files are used).
pub fn apply_override(doc: &mut toml::Table, assignment: &str) -> Result<(), LabError> {
    let (key, value) = assignment.split_once('=').ok_or_else(|| {
        LabError::usage(format!(
            "--set '{assignment}': expected KEY=VALUE (e.g. --set filename=/dev/sdb)"
        ))
    })?;
    let key = key.trim();
    let value = value.trim();
    if key.is_empty() {
        return Err(LabError::usage(format!("--set '{assignment}': empty key")));
    }
    let path: Vec<String> = if key.contains('.') {
        key.split('.').map(str::to_string).collect()
    } else if TARGET_KEYS.contains(&key) {
        vec!["target".into(), key.into()]
    } else if OPTION_NAMES.contains(&key) {
        vec!["workload".into(), key.into()]
    } else {
        return Err(LabError::usage(format!(
            "--set '{key}': unknown key (valid: a fio option such as bs or size, a target key ({}), or a dotted path such as repeat.count)",
            TARGET_KEYS.join(", ")
        )));
    };
    let leaf = path.last().expect("non-empty").clone();
    let member_list = leaf == "members" && (value.contains(',') || value.contains('/'));
    let parsed: toml::Value = if let Ok(i) = value.parse::<i64>() {
        toml::Value::Integer(i)
    } else if let Ok(f) = value.parse::<f64>() {
        toml::Value::Float(f)
    } else {
        toml::Value::String(value.to_string())
    };
    let mut table = &mut *doc;
    for part in &path[..path.len() - 1] {
        let entry = table
            .entry(part.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = entry.as_table_mut().ok_or_else(|| {
            LabError::usage(format!(
                "--set '{key}': '{part}' is not a table in the experiment"
            ))
        })?;
    }
    // `target.filename` and `target.system` replace each other: a target is one of them.
    if path.len() == 2 && path[0] == "target" && (leaf == "filename" || leaf == "system") {
        table.remove("filename");
        table.remove("system");
    }
    table.insert(leaf.clone(), parsed);
    if path.len() == 2 && (path[0] == "target" || path[0] == "workload") && !member_list {
        if let Some(sweep) = doc.get_mut("sweep").and_then(|s| s.as_table_mut()) {
            let was_swept = sweep.remove(&leaf).is_some();
            // Exclusions naming the fixed axis: those matching the fixed value lose that key,
            // the others can no longer match anything and go.
            if was_swept {
                if let Some(toml::Value::Array(list)) = sweep.get_mut("exclude") {
                    let fixed = canonical_value(&leaf, value).unwrap_or_else(|_| value.to_string());
                    list.retain_mut(|e| match e.as_table_mut() {
                        Some(t) => match t.remove(&leaf) {
                            None => true,
                            Some(v) => {
                                let v = scalar(&v).unwrap_or_default();
                                canonical_value(&leaf, &v).unwrap_or(v) == fixed && !t.is_empty()
                            }
                        },
                        None => true,
                    });
                }
            }
            if leaf == "filename" || leaf == "system" {
                sweep.remove("filename");
                sweep.remove("system");
            }
        }
    }
    Ok(())
}

impl Experiment {
    /// The simulator that will run this experiment's simulated points, by the fingerprint of
    /// its code: folded into the hash, so points stored by another simulator are not resumed
    /// (they are kept, under their own campaign). Experiments with no simulated target keep
    /// their hash: a measurement does not depend on the simulator.
    pub fn simulated_by(&mut self, model_print: &str) {
        if self.simulates {
            self.hash = fnv1a_hex(format!("{}\nsimulator {model_print}", self.hash).as_bytes());
        }
    }

    /// Read an experiment file, applying `--set` overrides.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Experiment, LabError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            LabError::usage(format!("experiment {}: cannot read: {e}", path.display()))
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let base = if base.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            base
        };
        Self::parse(&text, &path.display().to_string(), &base, overrides)
    }

    /// Parse experiment text. `origin` names it in errors; `base_dir` anchors relative paths.
    pub fn parse(
        text: &str,
        origin: &str,
        base_dir: &Path,
        overrides: &[String],
    ) -> Result<Experiment, LabError> {
        let mut doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| LabError::usage(toml_syntax_error(origin, text, &e)))?;
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        // Where a bad value came from: the `--set` that put it there, else the file's section.
        let set_by = |section: &str, key: &str| {
            overrides.iter().rev().find(|o| {
                o.split_once('=').is_some_and(|(k, _)| {
                    let k = k.trim();
                    k == key || k == format!("{section}.{key}")
                })
            })
        };
        let at = |section: &str, key: &str, e: &dyn std::fmt::Display| match set_by(section, key) {
            Some(o) => LabError::usage(format!("--set {}: {e}", o.trim())),
            None => bad(origin, format!("[{section}] {e}")),
        };
        const TOP: &[&str] = &[
            "name",
            "description",
            "limits",
            "workload",
            "target",
            "sweep",
            "repeat",
            "converge",
            "hooks",
            "reference",
        ];
        for k in doc.keys() {
            if !TOP.contains(&k.as_str()) {
                return Err(bad(
                    origin,
                    format!("unknown key '{k}' (valid: {})", TOP.join(", ")),
                ));
            }
        }
        let name = match doc.get("name") {
            Some(toml::Value::String(s)) if valid_name(s) => s.clone(),
            Some(v) => {
                return Err(bad(
                    origin,
                    format!("name = {v}: must be a string of letters, digits, '-', '_' or '.' (it names the database file)"),
                ))
            }
            None => return Err(bad(origin, "missing 'name' (e.g. name = \"bs-sweep\")")),
        };
        let description = doc
            .get("description")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();

        let workload = match doc.get("workload") {
            None => Vec::new(),
            Some(toml::Value::Table(t)) => {
                let mut out = Vec::new();
                for (k, v) in t {
                    if !OPTION_NAMES.contains(&k.as_str()) {
                        return Err(bad(
                            origin,
                            format!(
                                "[workload] unknown fio option '{k}' (valid: {})",
                                OPTION_NAMES.join(", ")
                            ),
                        ));
                    }
                    if k == "filename" {
                        return Err(bad(
                            origin,
                            "[workload] filename: put the target in [target] filename = …",
                        ));
                    }
                    let s = scalar(v).ok_or_else(|| {
                        bad(
                            origin,
                            format!("[workload] {k}: expected a string, number or boolean"),
                        )
                    })?;
                    out.push((k.clone(), s));
                }
                out
            }
            Some(_) => return Err(bad(origin, "'workload' must be a table ([workload])")),
        };
        // Check the options now, so a typo is reported before any run.
        let mut probe = raidlab_workload::JobSpec::default();
        // Values with `{…}` are computed per point (see plan::arith_template).
        for (k, v) in workload.iter().filter(|(_, v)| !v.contains('{')) {
            raidlab_workload::apply_option(&mut probe, k, Some(v))
                .map_err(|e| at("workload", k, &e))?;
        }

        let mut target = BTreeMap::new();
        match doc.get("target") {
            None => {}
            Some(toml::Value::Table(t)) => {
                for (k, v) in t {
                    if !TARGET_KEYS.contains(&k.as_str()) {
                        return Err(bad(
                            origin,
                            format!(
                                "[target] unknown key '{k}' (valid: {})",
                                TARGET_KEYS.join(", ")
                            ),
                        ));
                    }
                    let s = scalar(v).ok_or_else(|| {
                        bad(origin, format!("[target] {k}: expected a string or number"))
                    })?;
                    let c = canonical_value(k, &s)
                        .map_err(|e| at("target", k, &format!("{k}: {e}")))?;
                    target.insert(k.clone(), c);
                }
            }
            Some(_) => return Err(bad(origin, "'target' must be a table ([target])")),
        }

        let mut axes = Vec::new();
        let mut exclude = Vec::new();
        match doc.get("sweep") {
            None => {}
            Some(toml::Value::Table(t)) => {
                for (k, v) in t {
                    if k == "exclude" {
                        exclude = parse_exclude(origin, v)?;
                        continue;
                    }
                    if !is_param(k) {
                        return Err(bad(
                            origin,
                            format!(
                                "[sweep] '{k}' is neither a fio option nor a target parameter (valid: {}, {})",
                                OPTION_NAMES.join(", "),
                                TARGET_KEYS.join(", ")
                            ),
                        ));
                    }
                    axes.push(
                        Axis::parse(k, v).map_err(|e| bad(origin, format!("[sweep] {k}: {e}")))?,
                    );
                }
            }
            Some(_) => return Err(bad(origin, "'sweep' must be a table ([sweep])")),
        }
        crate::sweep::check_point_count(&axes).map_err(|e| bad(origin, format!("[sweep] {e}")))?;
        for ex in &exclude {
            for k in ex.keys() {
                if !axes.iter().any(|a| &a.name == k) {
                    return Err(bad(
                        origin,
                        format!("[sweep] exclude names '{k}', which is not a swept axis"),
                    ));
                }
            }
        }
        let swept = |k: &str| axes.iter().any(|a| a.name == k);
        let has = |k: &str| target.contains_key(k) || swept(k);
        let kinds = ["filename", "system", "level"]
            .iter()
            .filter(|k| has(k))
            .count();
        if kinds == 0 {
            return Err(bad(
                origin,
                "no target: set [target] filename = PATH (file, device, array:M1,M2,… or sim:SYSTEM.toml), \
                 system = SYSTEM.toml, or level = … with members = … for an array built per point",
            ));
        }
        if has("filename") && has("system") {
            return Err(bad(
                origin,
                "[target] give either filename or system, not both",
            ));
        }
        if has("level") && !has("members") {
            return Err(bad(origin, "[target] an array (level = …) needs members = COUNT or members = \"FILE1,FILE2,…\""));
        }

        let repeat = parse_repeat(origin, doc.get("repeat"))?;
        let converge = parse_converge(origin, doc.get("converge"))?;
        let hooks = parse_hooks(origin, doc.get("hooks"))?;
        if has("level") && hooks.setup.is_empty() && lab_makes_members(&target, &axes) {
            return Err(bad(origin, no_array_builder(&has)));
        }
        let references = parse_references(origin, base_dir, doc.get("reference"))?;

        // The hash covers what decides the runs, not how many repetitions or the notes.
        let mut identity = doc.clone();
        for k in ["description", "repeat", "reference", "limits"] {
            identity.remove(k);
        }
        // A simulated system is part of what decides the runs: a changed system file (or one
        // it includes) is a new experiment, not a resumed one.
        let (simulates, prints) = system_prints(&doc, base_dir);
        for (path, print) in prints {
            identity.insert(format!("system file {path}"), toml::Value::String(print));
        }
        let hash = fnv1a_hex(toml::to_string(&identity).unwrap_or_default().as_bytes());
        let effective = toml::to_string(&doc).unwrap_or_else(|_| text.to_string());
        Ok(Experiment {
            name,
            description,
            base_dir: base_dir.to_path_buf(),
            origin: origin.to_string(),
            text: effective,
            hash,
            simulates,
            workload,
            target,
            axes,
            exclude,
            repeat,
            converge,
            hooks,
            references,
        })
    }
}

/// Whether some point's array is over member files the lab makes (members given as a
/// count, fixed or swept) rather than files or devices named in a list: files made new,
/// empty, for every run (see `plan::plan_point`).
fn lab_makes_members(target: &BTreeMap<String, String>, axes: &[Axis]) -> bool {
    let count = |v: &str| v.parse::<u32>().is_ok();
    match target.get("members") {
        // A list given in [target] is cut to a swept count: its files, not the lab's.
        Some(m) if !count(m) => false,
        fixed => match axes.iter().find(|a| a.name == "members") {
            Some(a) => a.values.iter().any(|v| count(v)),
            None => fixed.is_some(),
        },
    }
}

/// Why an array over member files the lab makes cannot run without a setup hook, and the
/// hook that builds it (recipes/README.md's), naming only the parameters the experiment has.
fn no_array_builder(has: &dyn Fn(&str) -> bool) -> String {
    let mut create = "{raidlab} array create --level {level}".to_string();
    for k in ["layout", "chunk"] {
        if has(k) {
            create.push_str(&format!(" --{k} {{{k}}}"));
        }
    }
    create.push_str(" --force {member_paths}");
    format!(
        "[target] an array over members = COUNT runs on member files the lab makes new for every run, \
         but [hooks] has no setup command to build the array on them (add setup = [\"{create}\"], \
         or give members = \"FILE1,FILE2,…\" naming an array already made)"
    )
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && !s.starts_with('.')
}

fn parse_exclude(origin: &str, v: &toml::Value) -> Result<Vec<BTreeMap<String, String>>, LabError> {
    let list = v.as_array().ok_or_else(|| {
        bad(
            origin,
            "[sweep] exclude must be a list of tables, e.g. [{ rw = \"write\", bs = \"512\" }]",
        )
    })?;
    let mut out = Vec::new();
    for item in list {
        let t = item.as_table().ok_or_else(|| {
            bad(
                origin,
                "[sweep] exclude entries must be tables like { rw = \"write\" }",
            )
        })?;
        let mut m = BTreeMap::new();
        for (k, v) in t {
            let s = scalar(v).ok_or_else(|| {
                bad(
                    origin,
                    format!("[sweep] exclude {k}: expected a string or number"),
                )
            })?;
            let c = canonical_value(k, &s)
                .map_err(|e| bad(origin, format!("[sweep] exclude {k}: {e}")))?;
            m.insert(k.clone(), c);
        }
        out.push(m);
    }
    Ok(out)
}

fn table<'a>(
    origin: &str,
    name: &str,
    v: Option<&'a toml::Value>,
    keys: &[&str],
) -> Result<Option<&'a toml::Table>, LabError> {
    match v {
        None => Ok(None),
        Some(toml::Value::Table(t)) => {
            for k in t.keys() {
                if !keys.contains(&k.as_str()) {
                    return Err(bad(
                        origin,
                        format!("[{name}] unknown key '{k}' (valid: {})", keys.join(", ")),
                    ));
                }
            }
            Ok(Some(t))
        }
        Some(_) => Err(bad(origin, format!("'{name}' must be a table ([{name}])"))),
    }
}

fn get_u32(
    origin: &str,
    t: &toml::Table,
    table_name: &str,
    key: &str,
    min: u32,
    max: u32,
) -> Result<Option<u32>, LabError> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::Integer(i)) if *i >= min as i64 && *i <= max as i64 => {
            Ok(Some(*i as u32))
        }
        Some(toml::Value::Integer(i)) => Err(bad(
            origin,
            format!("[{table_name}] {key} = {i}: out of range (a whole number from {min} to {max})"),
        )),
        Some(toml::Value::Float(f)) if f.is_finite() && f.fract() == 0.0 => Err(bad(
            origin,
            format!(
                "[{table_name}] {key} = {v}: a decimal number, not a whole number (write it without a decimal point or exponent, e.g. {}; from {min} to {max})",
                *f as i64,
                v = t[key]
            ),
        )),
        Some(v) => Err(bad(
            origin,
            format!("[{table_name}] {key} = {v}: not a whole number (give one from {min} to {max})"),
        )),
    }
}

fn get_f64(
    origin: &str,
    t: &toml::Table,
    table_name: &str,
    key: &str,
    min: f64,
    max: f64,
) -> Result<Option<f64>, LabError> {
    let v = match t.get(key) {
        None => return Ok(None),
        Some(toml::Value::Float(f)) => *f,
        Some(toml::Value::Integer(i)) => *i as f64,
        Some(v) => {
            return Err(bad(
                origin,
                format!("[{table_name}] {key} = {v}: expected a number from {min} to {max}"),
            ))
        }
    };
    if !(v >= min && v <= max) {
        return Err(bad(
            origin,
            format!("[{table_name}] {key} = {v}: expected a number from {min} to {max}"),
        ));
    }
    Ok(Some(v))
}

/// A share given as a fraction (0.05 = 5%), from `min` to 1. A value above 1 is refused
/// rather than taken as a share of over 100%: `5` is someone meaning 5%, and as a fraction it
/// would flag (or settle) nothing.
fn get_fraction(
    origin: &str,
    t: &toml::Table,
    table_name: &str,
    key: &str,
    min: f64,
) -> Result<Option<f64>, LabError> {
    let over_one = match t.get(key) {
        Some(toml::Value::Float(f)) if f.is_finite() && *f > 1.0 => Some(*f),
        Some(toml::Value::Integer(i)) if *i > 1 => Some(*i as f64),
        _ => None,
    };
    if let Some(v) = over_one {
        return Err(bad(
            origin,
            format!(
                "[{table_name}] {key} = {v}: a fraction, not a percentage (0.05 = 5%; {v} would be {}%); valid: {min} to 1",
                v * 100.0
            ),
        ));
    }
    get_f64(origin, t, table_name, key, min, 1.0)
}

fn parse_repeat(origin: &str, v: Option<&toml::Value>) -> Result<Repeat, LabError> {
    let mut r = Repeat {
        count: 1,
        spread_threshold: None,
        rerun: 0,
        metric: "mb_s".into(),
    };
    if let Some(t) = table(
        origin,
        "repeat",
        v,
        &["count", "spread_threshold", "rerun", "metric"],
    )? {
        r.count = get_u32(origin, t, "repeat", "count", 1, 10_000)?.unwrap_or(1);
        r.rerun = get_u32(origin, t, "repeat", "rerun", 0, 100)?.unwrap_or(0);
        r.spread_threshold = get_fraction(origin, t, "repeat", "spread_threshold", 0.0)?;
        if let Some(m) = t.get("metric") {
            let m = m.as_str().ok_or_else(|| {
                bad(
                    origin,
                    "[repeat] metric: expected a metric name such as \"mb_s\"",
                )
            })?;
            if !crate::metrics::METRIC_NAMES.contains(&m) {
                return Err(bad(
                    origin,
                    format!(
                        "[repeat] metric '{m}' unknown (valid: {})",
                        crate::metrics::METRIC_NAMES.join(", ")
                    ),
                ));
            }
            r.metric = m.to_string();
        }
        if r.rerun > 0 && r.spread_threshold.is_none() {
            return Err(bad(
                origin,
                "[repeat] rerun needs spread_threshold (which points to re-run)",
            ));
        }
    }
    Ok(r)
}

fn parse_converge(origin: &str, v: Option<&toml::Value>) -> Result<Option<Converge>, LabError> {
    let Some(t) = table(
        origin,
        "converge",
        v,
        &["grow", "start", "factor", "tolerance", "max_steps", "max"],
    )?
    else {
        return Ok(None);
    };
    let grow = match t.get("grow").and_then(|v| v.as_str()) {
        Some("size") | None => Grow::Size,
        Some("runtime") => Grow::Runtime,
        Some(o) => {
            return Err(bad(
                origin,
                format!("[converge] grow = \"{o}\" (valid: size, runtime)"),
            ))
        }
    };
    let parse_amount = |key: &str| -> Result<Option<u64>, LabError> {
        let Some(v) = t.get(key) else { return Ok(None) };
        let s = scalar(v).ok_or_else(|| {
            bad(
                origin,
                format!("[converge] {key}: expected a size or duration"),
            )
        })?;
        let r = match grow {
            Grow::Size => parse_size(&s),
            Grow::Runtime => raidlab_workload::size::parse_duration_ns(&s),
        };
        let n = r.map_err(|e| bad(origin, format!("[converge] {key}: {e}")))?;
        if n == 0 {
            return Err(bad(
                origin,
                format!("[converge] {key} must be greater than zero"),
            ));
        }
        Ok(Some(n))
    };
    let start = parse_amount("start")?.ok_or_else(|| {
        bad(
            origin,
            "[converge] needs start (e.g. start = \"64m\" for size, \"2s\" for runtime)",
        )
    })?;
    let max = parse_amount("max")?;
    let factor = get_f64(origin, t, "converge", "factor", 1.01, 1e6)?.unwrap_or(2.0);
    let tolerance = get_fraction(origin, t, "converge", "tolerance", 1e-9)?.unwrap_or(0.05);
    let max_steps = get_u32(origin, t, "converge", "max_steps", 2, 64)?.unwrap_or(8);
    Ok(Some(Converge {
        grow,
        start,
        factor,
        tolerance,
        max_steps,
        max,
    }))
}

fn string_list(origin: &str, key: &str, v: Option<&toml::Value>) -> Result<Vec<String>, LabError> {
    match v {
        None => Ok(Vec::new()),
        Some(toml::Value::String(s)) => Ok(vec![s.clone()]),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(origin, format!("[hooks] {key}: expected strings")))
            })
            .collect(),
        Some(_) => Err(bad(
            origin,
            format!("[hooks] {key}: expected a command or a list of commands"),
        )),
    }
}

fn parse_hooks(origin: &str, v: Option<&toml::Value>) -> Result<Hooks, LabError> {
    let mut h = Hooks {
        setup: Vec::new(),
        teardown: Vec::new(),
        cache_defeat: CacheDefeat::None,
    };
    let Some(t) = table(origin, "hooks", v, &["setup", "teardown", "cache_defeat"])? else {
        return Ok(h);
    };
    h.setup = string_list(origin, "setup", t.get("setup"))?;
    h.teardown = string_list(origin, "teardown", t.get("teardown"))?;
    h.cache_defeat = match t.get("cache_defeat") {
        None => CacheDefeat::None,
        Some(toml::Value::String(s)) if s == "none" => CacheDefeat::None,
        Some(toml::Value::String(s)) if s == "drop_caches" => CacheDefeat::DropCaches,
        Some(toml::Value::Table(c)) => {
            let path = c.get("read_file").and_then(|v| v.as_str());
            let size = c.get("size").and_then(scalar);
            match (path, size) {
                (Some(p), Some(s)) => CacheDefeat::ReadFile {
                    path: p.to_string(),
                    size: parse_size(&s).map_err(|e| bad(origin, format!("[hooks] cache_defeat size: {e}")))?,
                },
                _ => {
                    return Err(bad(
                        origin,
                        "[hooks] cache_defeat table needs read_file = PATH and size = SIZE (e.g. { read_file = \"/data/dummy\", size = \"2g\" })",
                    ))
                }
            }
        }
        Some(v) => {
            return Err(bad(
                origin,
                format!("[hooks] cache_defeat = {v} (valid: \"none\", \"drop_caches\", {{ read_file = PATH, size = SIZE }})"),
            ))
        }
    };
    Ok(h)
}

fn parse_references(
    origin: &str,
    base: &Path,
    v: Option<&toml::Value>,
) -> Result<Vec<Reference>, LabError> {
    let list = match v {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a.clone(),
        Some(t @ toml::Value::Table(_)) => vec![t.clone()],
        Some(_) => return Err(bad(origin, "'reference' must be [[reference]] tables")),
    };
    let mut out = Vec::new();
    for item in &list {
        let t = item
            .as_table()
            .ok_or_else(|| bad(origin, "'reference' must be [[reference]] tables"))?;
        for k in t.keys() {
            if !["file", "label", "series"].contains(&k.as_str()) {
                return Err(bad(
                    origin,
                    format!("[[reference]] unknown key '{k}' (valid: file, label, series)"),
                ));
            }
        }
        let file = t.get("file").and_then(|v| v.as_str()).ok_or_else(|| {
            bad(
                origin,
                "[[reference]] needs file = \"PATH.csv\" (relative to the experiment)",
            )
        })?;
        let path = base.join(file);
        let label = t
            .get("label")
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| {
                Path::new(file)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| file.to_string())
            });
        let series_v = t.get("series").and_then(|v| v.as_array()).ok_or_else(|| {
            bad(
                origin,
                "[[reference]] needs [[reference.series]] with params and metrics",
            )
        })?;
        let mut series = Vec::new();
        for s in series_v {
            let st = s
                .as_table()
                .ok_or_else(|| bad(origin, "[[reference.series]] must be tables"))?;
            let pairs = |key: &str| -> Result<Vec<(String, String)>, LabError> {
                match st.get(key) {
                    None => Ok(Vec::new()),
                    Some(toml::Value::Table(m)) => m
                        .iter()
                        .map(|(k, v)| {
                            scalar(v).map(|s| (k.clone(), s)).ok_or_else(|| {
                                bad(
                                    origin,
                                    format!("[[reference.series]] {key}.{k}: expected a string"),
                                )
                            })
                        })
                        .collect(),
                    Some(_) => Err(bad(
                        origin,
                        format!("[[reference.series]] {key} must be a table"),
                    )),
                }
            };
            let metrics = pairs("metrics")?;
            if metrics.is_empty() {
                return Err(bad(
                    origin,
                    "[[reference.series]] needs metrics = { mb_s = \"CSV column\" }",
                ));
            }
            series.push(ReferenceSeries {
                params: pairs("params")?,
                metrics,
            });
        }
        out.push(Reference {
            file: path,
            label,
            series,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASIC: &str = r#"
name = "t"
[workload]
rw = "read"
size = "1m"
[target]
filename = "/tmp/x"
[sweep]
bs = { pow2 = ["512", "4k"] }
rw = ["read", "write"]
exclude = [{ rw = "write", bs = "512" }]
[repeat]
count = 3
spread_threshold = 0.05
rerun = 1
"#;

    #[test]
    fn parses_a_basic_experiment() {
        let e = Experiment::parse(BASIC, "t.toml", Path::new("."), &[]).unwrap();
        assert_eq!(e.name, "t");
        assert_eq!(
            e.axes.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            ["bs", "rw"]
        );
        assert_eq!(
            e.repeat,
            Repeat {
                count: 3,
                spread_threshold: Some(0.05),
                rerun: 1,
                metric: "mb_s".into()
            }
        );
        assert_eq!(e.exclude[0]["bs"], "512");
        assert_eq!(e.target["filename"], "/tmp/x");
    }

    #[test]
    fn hash_ignores_repeat_count_but_not_workload() {
        let a = Experiment::parse(BASIC, "t", Path::new("."), &[]).unwrap();
        let b = Experiment::parse(
            &BASIC.replace("count = 3", "count = 5"),
            "t",
            Path::new("."),
            &[],
        )
        .unwrap();
        let c = Experiment::parse(BASIC, "t", Path::new("."), &["size=2m".into()]).unwrap();
        assert_eq!(a.hash, b.hash);
        assert_ne!(a.hash, c.hash);
        assert_eq!(a.hash.len(), 16);
    }

    /// Stored simulated results are reused only while the system files are the same: an
    /// edited system (or a file it includes) makes a new experiment, not a resumed one.
    #[test]
    fn hash_follows_the_simulated_system_files_and_their_includes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("parts.toml"), "[host]\ncpus = 2\n").unwrap();
        std::fs::write(d.join("a.toml"), "include = [\"parts.toml\"]\n").unwrap();
        std::fs::write(d.join("b.toml"), "include = [\"parts.toml\"]\n").unwrap();
        let text = "name = \"x\"\n[workload]\nrw = \"read\"\nsize = \"1m\"\n\
                    [sweep]\nsystem = [\"a.toml\", \"b.toml\"]\n";
        let hash = || Experiment::parse(text, "t", d, &[]).unwrap().hash;
        let first = hash();
        assert_eq!(hash(), first);
        std::fs::write(d.join("parts.toml"), "[host]\ncpus = 4\n").unwrap();
        let second = hash();
        assert_ne!(second, first, "an included file changed");
        std::fs::write(d.join("b.toml"), "include = [\"parts.toml\"]\n# note\n").unwrap();
        assert_ne!(hash(), second, "a swept system file changed");
        // A sim: filename counts too.
        let t2 = "name = \"x\"\n[workload]\nrw = \"read\"\nsize = \"1m\"\n\
                  [target]\nfilename = \"sim:a.toml#lun0\"\n";
        let h1 = Experiment::parse(t2, "t", d, &[]).unwrap().hash;
        std::fs::write(d.join("a.toml"), "include = [\"parts.toml\"]\n\n").unwrap();
        assert_ne!(Experiment::parse(t2, "t", d, &[]).unwrap().hash, h1);
    }

    /// A simulated experiment's stored points belong to the simulator that made them; a
    /// measured experiment's do not depend on it.
    #[test]
    fn hash_follows_the_simulator_only_for_simulated_experiments() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.toml"), "[host]\ncpus = 2\n").unwrap();
        let sim = "name = \"x\"\n[workload]\nrw = \"read\"\nsize = \"1m\"\n\
                   [target]\nsystem = \"a.toml\"\n";
        let by = |text: &str, print: &str| {
            let mut e = Experiment::parse(text, "t", d, &[]).unwrap();
            let before = e.hash.clone();
            e.simulated_by(print);
            (before, e.hash)
        };
        let (plain, one) = by(sim, "0123456789abcdef");
        let (_, same) = by(sim, "0123456789abcdef");
        let (_, other) = by(sim, "fedcba9876543210");
        assert_ne!(one, plain);
        assert_eq!(one, same, "the same simulator resumes");
        assert_ne!(one, other, "another simulator starts afresh");
        assert_eq!(one.len(), 16);
        // A sim: filename swept as an axis counts as simulated too.
        let swept = "name = \"x\"\n[workload]\nrw = \"read\"\nsize = \"1m\"\n\
                     [sweep]\nfilename = [\"sim:a.toml#lun0\", \"/dev/null\"]\n";
        let (p, q) = by(swept, "0123456789abcdef");
        assert_ne!(p, q);
        let real = "name = \"x\"\n[workload]\nrw = \"read\"\nsize = \"1m\"\n\
                    [target]\nfilename = \"/dev/null\"\n";
        let (p, q) = by(real, "0123456789abcdef");
        assert_eq!(p, q, "a measurement keeps its hash");
    }

    /// A bad value from `--set` is blamed on the `--set`, one from the file on its section.
    #[test]
    fn a_bad_value_is_blamed_where_it_came_from() {
        let text = "name = \"t\"\n[workload]\nbs = \"4k\"\nsize = \"1x\"\n";
        let e = Experiment::parse(text, "t.toml", Path::new("."), &[]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.toml: [workload] option 'size'"),
            "{e}"
        );
        let ok = "name = \"t\"\n[workload]\nbs = \"4k\"\n";
        for set in ["bs=1x", "workload.bs=1x"] {
            let e = Experiment::parse(ok, "t.toml", Path::new("."), &[set.into()]).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("--set {set}: option 'bs'")),
                "{e}"
            );
        }
    }

    #[test]
    fn overrides_set_target_and_fix_axes() {
        let e = Experiment::parse(
            BASIC,
            "t",
            Path::new("."),
            &["filename=/dev/sdz".into(), "rw=write".into()],
        )
        .unwrap();
        assert_eq!(e.target["filename"], "/dev/sdz");
        assert_eq!(e.axes.len(), 1, "rw given with --set is no longer swept");
        assert!(e.workload.contains(&("rw".into(), "write".into())));
        let e = Experiment::parse(BASIC, "t", Path::new("."), &["system=sys.toml".into()]).unwrap();
        assert!(!e.target.contains_key("filename"));
        let e = Experiment::parse(BASIC, "t", Path::new("."), &["sweep.rw=read".into()]).unwrap();
        assert_eq!(
            e.axes[1].values,
            ["read"],
            "a dotted sweep path replaces the axis"
        );
        let e = Experiment::parse(BASIC, "t", Path::new("."), &["repeat.count=7".into()]).unwrap();
        assert_eq!(e.repeat.count, 7);
        let err = Experiment::parse(BASIC, "t", Path::new("."), &["bogus=1".into()]).unwrap_err();
        assert!(
            err.is_usage() && err.to_string().contains("unknown key"),
            "{err}"
        );
    }

    #[test]
    fn bad_input_is_one_clear_line() {
        let cases = [
            ("name = \"t\"\n[workload]\nbsx = 1\n[target]\nfilename=\"x\"", "unknown fio option 'bsx'"),
            ("name = \"t\"\n[workload]\nbs = \"4q\"\n[target]\nfilename=\"x\"", "unknown unit"),
            ("name = \"t\"\n[sweep]\nbs = [\"4k\"]", "no target"),
            ("name = \"t\"\n[target]\nfilename=\"x\"\n[sweep]\ncolour = [1]", "neither a fio option"),
            ("name = \"t\"\n[target]\nfilename=\"x\"\n[sweep]\nbs = [\"4k\"]\nexclude=[{rw=\"read\"}]", "not a swept axis"),
            ("name = \"t\"\n[target]\nfilename=\"x\"\n[repeat]\nrerun = 2", "needs spread_threshold"),
            ("name = \"t\"\n[target]\nfilename=\"x\"\n[repeat]\nspread_threshold = 5", "spread_threshold = 5: a fraction, not a percentage (0.05 = 5%; 5 would be 500%)"),
            ("name = \"t\"\n[target]\nfilename=\"x\"\n[converge]\nstart = \"1m\"\ntolerance = 2", "tolerance = 2: a fraction, not a percentage"),
            ("name = \"a b\"\n[target]\nfilename=\"x\"", "name"),
            ("[target]\nfilename=\"x\"", "missing 'name'"),
            ("name = \"t\"\n[target]\nlevel = 5", "needs members"),
            ("name = \"t\"\n[target]\nfilename=\"x\"\n[converge]\ngrow=\"size\"", "needs start"),
            ("name = \"t\"\n[target]\nfilename=\"x\"\n[hooks]\ncache_defeat=\"sometimes\"", "cache_defeat"),
            ("name = \"t\"\nnonsense = 1", "unknown key 'nonsense'"),
            ("name = ", "x.toml:1:8: not valid TOML"),
        ];
        for (text, want) in cases {
            let e = Experiment::parse(text, "x.toml", Path::new("."), &[]).unwrap_err();
            assert!(e.is_usage(), "{text}");
            let s = e.to_string();
            assert!(
                s.contains(want) && !s.contains('\n') && s.starts_with("x.toml:"),
                "{text}: {s}"
            );
        }
    }

    /// An array over member files the lab makes is built by a setup hook (recipes/README.md):
    /// without one every run would open blank files, so the experiment is refused when read,
    /// naming the hook to add. Members named in a list may be an array already made.
    #[test]
    fn an_array_of_lab_made_members_needs_a_setup_hook() {
        let arr = "name = \"arr\"\n[workload]\nrw = \"randread\"\nsize = \"1m\"\n\
                   [target]\nlevel = 5\nmembers = 3\nmember_size = \"4m\"\nchunk = \"64k\"\n\
                   [sweep]\nbs = [\"4k\"]\n";
        let e = Experiment::parse(arr, "arr.toml", Path::new("."), &[]).unwrap_err();
        let s = e.to_string();
        assert!(e.is_usage() && !s.contains('\n'), "{s}");
        assert!(
            s.starts_with("arr.toml: [target] an array over members = COUNT")
                && s.contains("but [hooks] has no setup command to build the array on them (add setup")
                && !s.contains("  ")
                && s.contains("add setup = [\"{raidlab} array create --level {level} --chunk {chunk} --force {member_paths}\"]"),
            "{s}"
        );
        // A swept count is lab-made too; without chunk the hook leaves --chunk out.
        let swept = arr
            .replace("members = 3\n", "")
            .replace("chunk = \"64k\"\n", "")
            + "members = [3, 4]\n";
        let e = Experiment::parse(&swept, "arr.toml", Path::new("."), &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("array create --level {level} --force"),
            "{e}"
        );
        // With a setup hook, or members named in a list, it is accepted.
        let hooked = format!("{arr}[hooks]\nsetup = [\"{{raidlab}} array create --level {{level}} --force {{member_paths}}\"]\n");
        Experiment::parse(&hooked, "arr.toml", Path::new("."), &[]).unwrap();
        Experiment::parse(
            arr,
            "arr.toml",
            Path::new("."),
            &["members=/dev/sdb,/dev/sdc,/dev/sdd".into()],
        )
        .unwrap();
    }

    /// A syntax error names the file, line and column, as a system file's errors do.
    #[test]
    fn a_toml_syntax_error_says_where() {
        let text = "name = \"t\"\n[target]\nfilename = \"x\"\nthis is prose\n";
        let e = Experiment::parse(text, "x.toml", Path::new("."), &[]).unwrap_err();
        assert!(e.is_usage());
        assert!(
            e.to_string().starts_with("x.toml:4:6: not valid TOML: "),
            "{e}"
        );
        // Columns count characters, not bytes.
        let t = "a = 1\nb = \"é\" c\n";
        let err = t.parse::<toml::Table>().unwrap_err();
        let s = toml_syntax_error("u.toml", t, &err);
        assert!(s.starts_with("u.toml:2:9: not valid TOML: "), "{s}");
    }

    #[test]
    fn canonical_and_display_values() {
        assert_eq!(canonical_value("bs", "4k").unwrap(), "4096");
        assert_eq!(canonical_value("chunk", "1m").unwrap(), "1048576");
        assert_eq!(canonical_value("rw", "read").unwrap(), "read");
        assert!(canonical_value("bs", "4x").is_err());
        assert_eq!(
            display_value("system", "../systems/llnl2000/fig16.toml"),
            "fig16"
        );
        assert_eq!(
            display_value("system", "sim:s/fig16.toml#lun1"),
            "fig16#lun1"
        );
    }
}
