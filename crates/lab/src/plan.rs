//! From an experiment and a point to what to run: the job specs, the target, the member files
//! of an array built for the point, and the values hooks are templated with. Pure: no I/O.

use crate::error::LabError;
use crate::experiment::{display_value, Experiment};
use crate::sweep::Point;
use raidlab_workload::spec::OPTION_NAMES;
use raidlab_workload::{apply_option, JobSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the caller provides about the running process.
#[derive(Clone, Debug)]
pub struct Context {
    /// The raidlab executable, for `{raidlab}` in hooks.
    pub raidlab: String,
    /// A scratch folder for `{scratch}` (files made there are the campaign's own).
    pub scratch: PathBuf,
}

/// Everything needed to run one point.
#[derive(Clone, Debug)]
pub struct PointPlan {
    pub point: Point,
    /// The parameters stored with each run: swept axes and fixed target parameters, shown
    /// as in tables (`system` by its file stem, or more of its path when swept files share
    /// a stem; sizes in bytes). They identify the point in the database.
    pub params: BTreeMap<String, String>,
    /// The target as given to the runner (`/dev/sdb`, `array:a,b`, `sim:…/fig11.toml`).
    pub target: String,
    /// The target as stored with each run and shown in tables: `target` with this process's
    /// scratch folder written `{scratch}` (`{scratch}/data`), so a campaign resumed by another
    /// process, in another scratch folder, keeps one target per point.
    pub stored_target: String,
    /// `measured` or `simulated`.
    pub source: String,
    /// The job specs of one run, complete and validated.
    pub specs: Vec<JobSpec>,
    /// Member files the lab creates before the setup hooks and removes after teardown.
    pub member_files_to_create: Vec<String>,
    pub member_size: u64,
    /// Placeholder values for hooks (without `rep`, which each run adds).
    pub vars: BTreeMap<String, String>,
}

fn resolve_relative(base: &Path, p: &str) -> String {
    let (path, lun) = match p.split_once('#') {
        Some((a, b)) => (a, format!("#{b}")),
        None => (p, String::new()),
    };
    let pb = Path::new(path);
    let full = if pb.is_absolute() {
        pb.to_path_buf()
    } else {
        base.join(pb)
    };
    format!("{}{lun}", full.display())
}

/// Replace `{name}` with `vars[name]`; `{{` and `}}` are literal braces. An unknown name is an
/// error naming the valid ones.
pub fn template(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let c = rest.as_bytes()[i];
        let after = &rest[i + 1..];
        if after.as_bytes().first() == Some(&c) {
            out.push(c as char);
            rest = &after[1..];
            continue;
        }
        if c == b'}' {
            return Err(format!(
                "'{text}': unmatched '}}' (write '}}}}' for a literal brace)"
            ));
        }
        let end = after
            .find('}')
            .ok_or_else(|| format!("'{text}': unclosed '{{' (write '{{{{' for a literal brace)"))?;
        let name = &after[..end];
        match vars.get(name) {
            Some(v) => out.push_str(v),
            None => {
                return Err(format!(
                    "'{text}': unknown placeholder {{{name}}} (valid: {})",
                    vars.keys()
                        .map(|k| format!("{{{k}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Like [`template`], but each `{…}` may be arithmetic over parameters and whole numbers:
/// `{file_size/numjobs}`, `{bs*4}` — `*` and `/`, left to right; the result must be a whole
/// number (an inexact division is refused). Parameters are read as sizes (`64m`) or numbers.
pub fn arith_template(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("'{text}': unclosed '{{'"))?;
        let expr = &after[..end];
        let x = crate::reference::arith(expr, |name| {
            let v = vars.get(name).ok_or_else(|| {
                format!(
                    "'{text}': unknown parameter '{name}' (valid: {})",
                    vars.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            })?;
            raidlab_workload::size::parse_size(v)
                .map(|b| b as f64)
                .map_err(|_| format!("'{text}': {name} = '{v}' is not a number or size"))
        })?;
        if !(x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53)) {
            return Err(format!(
                "'{text}': {{{expr}}} gives {x}, not a whole number of bytes or items"
            ));
        }
        out.push_str(&(x as u64).to_string());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Plan one point. Errors are usage errors: the experiment asks for something impossible.
pub fn plan_point(exp: &Experiment, point: &Point, ctx: &Context) -> Result<PointPlan, LabError> {
    let here = |m: String| {
        LabError::usage(format!(
            "{}: point {} ({}): {m}",
            exp.origin,
            point.index,
            describe(point)
        ))
    };
    // Target parameters: fixed ones, then the point's.
    let mut t: BTreeMap<String, String> = exp.target.clone();
    for (k, v) in &point.values {
        if crate::experiment::TARGET_KEYS.contains(&k.as_str()) {
            t.insert(k.clone(), v.clone());
        }
    }
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    vars.insert("raidlab".into(), ctx.raidlab.clone());
    vars.insert("scratch".into(), ctx.scratch.display().to_string());
    vars.insert("experiment".into(), exp.name.clone());
    vars.insert("point".into(), point.index.to_string());
    for (k, v) in &t {
        vars.insert(k.clone(), v.clone());
    }
    for (k, v) in &point.values {
        vars.insert(k.clone(), v.clone());
    }
    vars.insert("rep".into(), "0".into());

    let mut member_files_to_create = Vec::new();
    let mut member_size = 0;
    let target = if let Some(sys) = t.get("system") {
        let s = sys.trim_start_matches("sim:");
        format!("sim:{}", resolve_relative(&exp.base_dir, s))
    } else if let Some(level) = t.get("level") {
        let members = t.get("members").cloned().unwrap_or_default();
        let fixed_list: Option<Vec<String>> = exp
            .target
            .get("members")
            .filter(|m| m.parse::<u32>().is_err())
            .map(|m| {
                m.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            });
        let files: Vec<String> = match (members.parse::<u32>(), fixed_list) {
            (Ok(n), Some(list)) => {
                if n as usize > list.len() {
                    return Err(here(format!(
                        "members = {n} but only {} member files were given",
                        list.len()
                    )));
                }
                list[..n as usize].to_vec()
            }
            (Ok(n), None) => {
                if n < 1 {
                    return Err(here("members must be at least 1".into()));
                }
                member_size = match t.get("member_size") {
                    Some(s) => s.parse::<u64>().map_err(|_| here(format!("member_size = {s} is not a size")))?,
                    None => {
                        return Err(here(
                            "an array of member files made by the lab needs member_size (e.g. member_size = \"64m\"), \
                             or give the members as a list of files or devices"
                                .into(),
                        ))
                    }
                };
                let dir = match t.get("dir") {
                    Some(d) => template(d, &vars).map_err(|e| here(format!("[target] dir {e}")))?,
                    None => ctx.scratch.display().to_string(),
                };
                let files: Vec<String> = (0..n)
                    .map(|i| format!("{dir}/{}-m{i}.img", exp.name))
                    .collect();
                member_files_to_create = files.clone();
                files
            }
            (Err(_), _) => members
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        };
        if files.is_empty() {
            return Err(here("members: no member files".into()));
        }
        // The array the setup hooks build must be one `raidlab array create` builds: said
        // now, by its rules, for every point (a dry run too), not by a hook at its run.
        let made = (!member_files_to_create.is_empty()).then_some(member_size);
        if let Err(e) = check_array(&t, &files, made) {
            let shape = ["level", "layout", "members", "member_size", "chunk"];
            let given: Vec<String> = shape
                .iter()
                .filter_map(|k| t.get(*k).map(|v| format!("{k}={v}")))
                .collect();
            let m = format!("array {}: {e}", given.join(" "));
            // Blamed on [target] when no part of the array is swept: every point is alike.
            return Err(
                if point
                    .values
                    .iter()
                    .any(|(k, _)| shape.contains(&k.as_str()))
                {
                    here(m)
                } else {
                    LabError::usage(format!("{}: [target] {m}", exp.origin))
                },
            );
        }
        vars.insert("members".into(), files.len().to_string());
        vars.insert("member_files".into(), files.join(","));
        vars.insert("member_paths".into(), files.join(" "));
        vars.insert("level".into(), level.clone());
        // A level without a chunk (linear, 1) takes the point's chunk, if any, as 0 in the
        // hooks: `array create` takes `--chunk 0` there and refuses any other size, and a
        // sweep over levels hands one chunk to every point.
        if vars.contains_key("chunk") && !level_has_chunk(&level) {
            vars.insert("chunk".into(), "0".into());
        }
        format!("array:{}", files.join(","))
    } else if let Some(f) = t.get("filename") {
        template(f, &vars).map_err(|e| here(format!("[target] filename {e}")))?
    } else {
        return Err(here("no target".into()));
    };
    vars.insert("target".into(), target.clone());

    let mut spec = JobSpec {
        name: exp.name.clone(),
        ..JobSpec::default()
    };
    for (k, v) in exp.workload.iter().filter(|(_, v)| !v.contains('{')) {
        apply_option(&mut spec, k, Some(v)).map_err(|e| here(format!("[workload] {e}")))?;
    }
    for (k, v) in &point.values {
        if OPTION_NAMES.contains(&k.as_str()) && k != "filename" {
            apply_option(&mut spec, k, Some(v)).map_err(|e| here(e.to_string()))?;
        }
    }
    // Computed values last, so they see the point's (`{file_size/numjobs}`).
    let mut numbers = vars.clone();
    for (k, v) in exp.workload.iter().filter(|(_, v)| !v.contains('{')) {
        numbers.entry(k.clone()).or_insert_with(|| v.clone());
    }
    numbers
        .entry("numjobs".into())
        .or_insert_with(|| spec.numjobs.to_string());
    for (k, v) in exp.workload.iter().filter(|(_, v)| v.contains('{')) {
        let value =
            arith_template(v, &numbers).map_err(|e| here(format!("[workload] {k}: {e}")))?;
        apply_option(&mut spec, k, Some(&value)).map_err(|e| here(format!("[workload] {e}")))?;
    }
    apply_option(&mut spec, "filename", Some(&target)).map_err(|e| here(e.to_string()))?;
    spec.validate().map_err(|e| here(e.to_string()))?;
    // Hooks must template cleanly before anything runs.
    for cmd in exp.hooks.setup.iter().chain(exp.hooks.teardown.iter()) {
        template(cmd, &vars).map_err(|e| here(format!("[hooks] {e}")))?;
    }

    let mut params = point.params();
    for (k, v) in &exp.target {
        if !params.contains_key(k)
            && (k == "system" || k == "level" || k == "chunk" || k == "layout")
        {
            params.insert(k.clone(), display_value(k, v));
        }
    }
    if t.contains_key("level") {
        params.insert("members".into(), vars["members"].clone());
    }
    let source = if target.starts_with("sim:") {
        "simulated"
    } else {
        "measured"
    };
    let scratch = ctx.scratch.display().to_string();
    let stored_target = if scratch.is_empty() {
        target.clone()
    } else {
        target.replace(&scratch, "{scratch}")
    };
    Ok(PointPlan {
        point: point.clone(),
        params,
        target,
        stored_target,
        source: source.into(),
        specs: vec![spec],
        member_files_to_create,
        member_size,
        vars,
    })
}

/// Whether an array of the target parameters `t` over `files` (made by the lab at `made`
/// bytes each, or given) is one `raidlab array create` builds, by the array crate's rules.
/// A chunk given to levels without one (linear, 1) is left unused, as a sweep over levels
/// gives it to every point.
fn check_array(
    t: &BTreeMap<String, String>,
    files: &[String],
    made: Option<u64>,
) -> Result<(), String> {
    let level = t.get("level").map(String::as_str).unwrap_or_default();
    let chunk = match t.get("chunk") {
        Some(c) if level_has_chunk(level) => Some(
            c.parse::<u64>()
                .map_err(|_| format!("chunk = {c} is not a size"))?,
        ),
        _ => None,
    };
    let paths: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    raidlab_array::create::check_new(
        level,
        t.get("layout").map(String::as_str),
        chunk,
        &paths,
        made,
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// Whether an array of `level` has a chunk (a level array create does not know is left to
/// its checks, as one that has).
fn level_has_chunk(level: &str) -> bool {
    use raidlab_array::shape::{has_chunk, parse_level};
    parse_level(level).map_or(true, has_chunk)
}

/// `bs=4096 rw=read` — a point in a line.
pub fn describe(point: &Point) -> String {
    if point.values.is_empty() {
        return "no axes".into();
    }
    (0..point.values.len())
        .map(|i| format!("{}={}", point.values[i].0, point.label(i)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A point's label as it goes into a log file's name: each axis as `name-value` (the value
/// as shown), joined by `.`; characters other than letters, digits, `-`, `_` and `+` become
/// `_` (a system's path, a share's `%`). `point{index}` for a point without axes.
pub fn log_label(point: &Point) -> String {
    if point.values.is_empty() {
        return format!("point{}", point.index);
    }
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    (0..point.values.len())
        .map(|i| format!("{}-{}", clean(&point.values[i].0), clean(&point.label(i))))
        .collect::<Vec<_>>()
        .join(".")
}

/// The specs of repetition `rep` of `point` with their time-series logs named for that run:
/// a log prefix `P` (fio's `write_bw_log=P`; no value: the job's name) becomes
/// `P.LABEL.repR` ([`log_label`]), so a sweep's runs each write their own files
/// (`P.LABEL.repR_bw.N.log`, …, and an I/O log's `P.LABEL.repR`) instead of each
/// overwriting the last. Borrowed as they are
/// when no spec writes logs.
pub fn label_logs<'a>(
    specs: &'a [JobSpec],
    point: &Point,
    rep: u32,
) -> std::borrow::Cow<'a, [JobSpec]> {
    if !specs
        .iter()
        .any(|s| s.logs.any() || s.write_iolog.is_some())
    {
        return std::borrow::Cow::Borrowed(specs);
    }
    let label = log_label(point);
    let mut out = specs.to_vec();
    for s in &mut out {
        // An I/O log `P` (`write_iolog=P`) becomes `P.LABEL.repR`.
        if let Some(p) = &s.write_iolog {
            s.write_iolog = Some(format!("{p}.{label}.rep{rep}"));
        }
        let [bw, iops, lat, hist] = s.logs.prefixes(&s.name);
        let named = |p: Option<String>| p.map(|p| format!("{p}.{label}.rep{rep}"));
        s.logs.bw = named(bw);
        s.logs.iops = named(iops);
        s.logs.lat = named(lat);
        s.logs.hist = named(hist);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::expand;

    fn ctx() -> Context {
        Context {
            raidlab: "/bin/raidlab".into(),
            scratch: PathBuf::from("/tmp/scr"),
        }
    }

    #[test]
    fn logs_are_named_for_each_point_and_repetition() {
        let point = Point {
            index: 3,
            values: vec![
                ("bs".into(), "4096".into()),
                ("system".into(), "systems/a b.toml".into()),
            ],
            labels: vec!["4k".into(), "a b".into()],
        };
        assert_eq!(log_label(&point), "bs-4k.system-a_b");
        let mut s = JobSpec {
            name: "j".into(),
            ..Default::default()
        };
        apply_option(&mut s, "write_bw_log", Some("")).unwrap();
        apply_option(&mut s, "write_lat_log", Some("out/lat")).unwrap();
        let specs = [s];
        let named = label_logs(&specs, &point, 1);
        assert_eq!(named[0].logs.bw.as_deref(), Some("j.bs-4k.system-a_b.rep1"));
        assert_eq!(
            named[0].logs.lat.as_deref(),
            Some("out/lat.bs-4k.system-a_b.rep1")
        );
        assert_eq!(named[0].logs.iops, None);
        // An I/O log alone is named for the point too.
        let mut io = JobSpec::default();
        apply_option(&mut io, "write_iolog", Some("trace.log")).unwrap();
        let io = [io];
        assert_eq!(
            label_logs(&io, &point, 2)[0].write_iolog.as_deref(),
            Some("trace.log.bs-4k.system-a_b.rep2")
        );
        // No logs: the specs as they are; a point without axes has its index.
        let plain = [JobSpec::default()];
        assert!(matches!(
            label_logs(&plain, &point, 0),
            std::borrow::Cow::Borrowed(_)
        ));
        let bare = Point {
            index: 7,
            values: vec![],
            labels: vec![],
        };
        assert_eq!(log_label(&bare), "point7");
    }

    #[test]
    fn arithmetic_templates_split_a_file_among_jobs() {
        let vars: BTreeMap<String, String> =
            [("file_size", "67108864"), ("numjobs", "4"), ("bs", "1m")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(
            arith_template("{file_size/numjobs}", &vars).unwrap(),
            "16777216"
        );
        assert_eq!(arith_template("{bs*2}x", &vars).unwrap(), "2097152x");
        assert_eq!(arith_template("plain", &vars).unwrap(), "plain");
        let e = arith_template("{file_size/3}", &vars).unwrap_err();
        assert!(e.contains("not a whole number"), "{e}");
        let e = arith_template("{nope/2}", &vars).unwrap_err();
        assert!(e.contains("unknown parameter 'nope'"), "{e}");
        assert!(arith_template("{bs*}", &vars).is_err());
    }

    #[test]
    fn templates_substitute_and_escape() {
        let vars = BTreeMap::from([
            ("level".to_string(), "5".to_string()),
            ("rep".to_string(), "2".to_string()),
        ]);
        assert_eq!(
            template("mk --level={level} r{rep} {{x}}", &vars).unwrap(),
            "mk --level=5 r2 {x}"
        );
        let e = template("x {chnk}", &vars).unwrap_err();
        assert!(
            e.contains("unknown placeholder {chnk}") && e.contains("{level}"),
            "{e}"
        );
        assert!(template("x {level", &vars).is_err());
        assert!(template("x }", &vars).is_err());
    }

    #[test]
    fn array_points_make_member_files_and_template_hooks() {
        let text = r#"
name = "chunks"
[workload]
rw = "write"
bs = "1m"
size = "4m"
[target]
level = 5
member_size = "16m"
[sweep]
members = [3, 4]
chunk = ["4k", "64k"]
[hooks]
setup = ["{raidlab} array create --level={level} --chunk={chunk} {member_files}"]
teardown = ["echo done {point} {rep}"]
"#;
        let e = Experiment::parse(text, "c.toml", Path::new("/r"), &[]).unwrap();
        let pts = expand(&e.axes, &e.exclude);
        assert_eq!(pts.len(), 4);
        let p = plan_point(&e, &pts[3], &ctx()).unwrap();
        assert_eq!(p.member_files_to_create.len(), 4);
        assert_eq!(p.member_size, 16 << 20);
        assert!(p.target.starts_with("array:/tmp/scr/chunks-m0.img,"));
        assert_eq!(p.params["chunk"], "65536");
        assert_eq!(p.params["members"], "4");
        assert_eq!(p.params["level"], "5");
        let cmd = template(&e.hooks.setup[0], &p.vars).unwrap();
        assert_eq!(
            cmd,
            "/bin/raidlab array create --level=5 --chunk=65536 /tmp/scr/chunks-m0.img,/tmp/scr/chunks-m1.img,/tmp/scr/chunks-m2.img,/tmp/scr/chunks-m3.img"
        );
        assert_eq!(p.specs[0].filenames, vec![p.target.clone()]);
    }

    /// An array `raidlab array create` would refuse is refused when its point is planned,
    /// by the array crate's rules and words: blamed on [target] when nothing of the array is
    /// swept, on the point when something is.
    #[test]
    fn array_targets_create_would_refuse_are_refused_when_planned() {
        let base = |target: &str, sweep: &str| {
            format!(
                "name = \"arr\"\n[workload]\nrw = \"randread\"\nbs = \"4k\"\nsize = \"1m\"\n\
                 [target]\n{target}\n[sweep]\n{sweep}\n[hooks]\nsetup = [\"true\"]\n"
            )
        };
        let plan0 = |text: &str| {
            let e = Experiment::parse(text, "arr.toml", Path::new("."), &[]).unwrap();
            let pts = expand(&e.axes, &e.exclude);
            pts.iter()
                .map(|p| plan_point(&e, p, &ctx()))
                .collect::<Result<Vec<_>, _>>()
        };
        let ok = "level = 5\nmembers = 3\nmember_size = \"4m\"\nchunk = \"64k\"";
        plan0(&base(ok, "bs = [\"4k\"]")).unwrap();
        for (target, want) in [
            (
                ok.replace("level = 5", "level = 9"),
                "unknown RAID level '9'",
            ),
            (
                ok.replace("members = 3", "members = 1"),
                "raid5 needs at least 2 members, got 1",
            ),
            (
                ok.replace("\"4m\"", "\"1k\""),
                "each member is 1024 bytes; members need more than 1 MiB",
            ),
            (
                ok.replace("\"64k\"", "\"3k\""),
                "chunk 3072 bytes is not valid",
            ),
            (
                "level = 5\nmembers = \"/d/a,/d/a,/d/b\"".to_string(),
                "member /d/a is listed twice",
            ),
            (
                format!("{ok}\nlayout = \"sideways\""),
                "layout 'sideways' is not valid for raid5",
            ),
        ] {
            let e = plan0(&base(&target, "bs = [\"4k\"]")).unwrap_err();
            let s = e.to_string();
            assert!(e.is_usage() && !s.contains('\n'), "{s}");
            assert!(
                s.starts_with("arr.toml: [target] array level=") && s.contains(want),
                "{target}: {s}"
            );
        }
        // Swept: the point whose combination is impossible is named.
        let e = plan0(&base(
            "members = 3\nmember_size = \"4m\"\nchunk = \"64k\"",
            "level = [\"5\", \"6\"]",
        ))
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("arr.toml: point 1 (level=6): array level=6 members=3")
                && e.to_string()
                    .contains("raid6 needs at least 4 members, got 3"),
            "{e}"
        );
        // A chunk is no reason to refuse the levels without one (a sweep over levels gives
        // every point the chunk).
        plan0(&base(ok, "level = [\"1\", \"5\"]")).unwrap();
    }

    /// A sweep over levels with one chunk: the hooks of a level without a chunk (linear, 1)
    /// get `{chunk}` as 0, which `array create` takes there (any other size it refuses, so
    /// the recipe's own setup hook failed at those points' runs); the others get the chunk.
    #[test]
    fn levels_without_a_chunk_get_chunk_0_in_hooks() {
        let text = "name = \"lv\"\n[workload]\nrw = \"read\"\nbs = \"64k\"\nsize = \"1m\"\n\
                    [target]\nmembers = 4\nmember_size = \"8m\"\nchunk = \"64k\"\n\
                    [sweep]\nlevel = [\"linear\", \"1\", \"5\", \"10\"]\n[hooks]\n\
                    setup = [\"{raidlab} array create --level {level} --chunk {chunk} --force {member_paths}\"]\n";
        let e = Experiment::parse(text, "lv.toml", Path::new("."), &[]).unwrap();
        let pts = expand(&e.axes, &e.exclude);
        let chunks: Vec<(String, String)> = pts
            .iter()
            .map(|pt| {
                let p = plan_point(&e, pt, &ctx()).unwrap();
                let cmd = template(&e.hooks.setup[0], &p.vars).unwrap();
                let chunk = cmd.split("--chunk ").nth(1).unwrap();
                (
                    p.vars["level"].clone(),
                    chunk.split(' ').next().unwrap().to_string(),
                )
            })
            .collect();
        let want = [("linear", "0"), ("1", "0"), ("5", "65536"), ("10", "65536")];
        assert_eq!(
            chunks,
            want.map(|(l, c)| (l.to_string(), c.to_string())),
            "{chunks:?}"
        );
        // What the hook relies on: create takes chunk 0 for a level without one, and only 0.
        let m: Vec<PathBuf> = (0..4).map(|i| PathBuf::from(format!("/d/m{i}"))).collect();
        raidlab_array::create::check_new("1", None, Some(0), &m, None).unwrap();
        raidlab_array::create::check_new("1", None, Some(65536), &m, None).unwrap_err();
    }

    #[test]
    fn given_member_list_is_cut_to_the_swept_count() {
        let text = "name = \"a\"\n[workload]\nsize=\"1m\"\n[target]\nlevel = 0\nmembers = \"/d/a,/d/b,/d/c\"\n[sweep]\nmembers = [2, 4]";
        let e = Experiment::parse(text, "a.toml", Path::new("."), &[]).unwrap();
        let pts = expand(&e.axes, &e.exclude);
        let p = plan_point(&e, &pts[0], &ctx()).unwrap();
        assert_eq!(p.target, "array:/d/a,/d/b");
        assert!(p.member_files_to_create.is_empty());
        let err = plan_point(&e, &pts[1], &ctx()).unwrap_err();
        assert!(
            err.is_usage() && err.to_string().contains("only 3 member files"),
            "{err}"
        );
    }

    #[test]
    fn systems_resolve_next_to_the_experiment_and_are_simulated() {
        let text = "name = \"s\"\n[workload]\nrw=\"read\"\nsize=\"8m\"\n[sweep]\nsystem = [\"../systems/fig11.toml\"]\nbs = [\"512\", \"1m\"]";
        let e = Experiment::parse(text, "s.toml", Path::new("/repo/recipes"), &[]).unwrap();
        let pts = expand(&e.axes, &e.exclude);
        let p = plan_point(&e, &pts[1], &ctx()).unwrap();
        assert_eq!(p.target, "sim:/repo/recipes/../systems/fig11.toml");
        assert_eq!(p.source, "simulated");
        assert_eq!(p.params["system"], "fig11");
        assert_eq!(p.specs[0].bs.read.entries[0].0, 1 << 20);
    }

    #[test]
    fn impossible_points_are_usage_errors_before_running() {
        let text = "name = \"x\"\n[workload]\nsize=\"4k\"\n[target]\nfilename=\"{scratch}/f\"\n[sweep]\nbs = [\"4k\", \"64k\"]";
        let e = Experiment::parse(text, "x.toml", Path::new("."), &[]).unwrap();
        let pts = expand(&e.axes, &e.exclude);
        let p = plan_point(&e, &pts[0], &ctx()).unwrap();
        assert_eq!(p.target, "/tmp/scr/f");
        assert_eq!(p.source, "measured");
        let err = plan_point(&e, &pts[1], &ctx()).unwrap_err();
        assert!(
            err.is_usage() && err.to_string().contains("smaller than the block size"),
            "{err}"
        );
        let bad_hook = "name = \"x\"\n[target]\nfilename=\"f\"\n[hooks]\nsetup = [\"echo {nope}\"]";
        let e = Experiment::parse(bad_hook, "x.toml", Path::new("."), &[]).unwrap();
        let err = plan_point(&e, &expand(&e.axes, &e.exclude)[0], &ctx()).unwrap_err();
        assert!(
            err.to_string().contains("unknown placeholder {nope}"),
            "{err}"
        );
    }
}
