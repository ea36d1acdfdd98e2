//! fio job files: `[global]` and job sections, `key=value` lines, `;` and `#` comments (whole
//! lines, or after a line's text),
//! `${VAR}` from the environment, fio's keywords (`$ncpus`, …: [`crate::keywords`]) and
//! `include FILE` lines.
//!
//! Options in `[global]` apply to every job that follows it; a later `[global]` adds to
//! them for the jobs after it, as in fio. An option raidlab does not support is an error
//! naming the option and the line: nothing is silently ignored.

use crate::keywords::{substitute, Keywords};
use crate::spec::{apply_option, JobSpec, SpecError};

/// Parse a job file from disk, expanding `${VAR}` from the environment as fio does. Errors
/// read `FILE:LINE: what (valid: …)`.
pub fn parse_job_file(path: &std::path::Path) -> Result<Vec<JobSpec>, SpecError> {
    read_job_file(
        path,
        JobSpec::default(),
        |v| std::env::var(v).ok(),
        None,
        &[],
    )
    .map(|(jobs, _)| jobs)
}

/// How deep `include` lines may nest (a file that includes itself stops here).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Read and parse the job file at `path` as fio does: `${VAR}` expanded by `env` in each
/// file, and each `include FILE` line replaced by that file's lines (a relative name is
/// taken from the including file's folder), whose sections and options continue where the
/// line stood. `base` holds defaults (options given before `--job`); `keywords`, the
/// machine's figures for fio's `$pagesize`, `$mb_memory` and `$ncpus` (None: a value
/// holding one is read as it stands); `sections`, fio's `--section` names (none: every
/// section): the other job sections are skipped whole, as fio skips them ([`skip_sections`]).
/// Returns the jobs and [`fio_notes`]'s notes for every file read. Errors name the file and
/// line they are in.
pub fn read_job_file(
    path: &std::path::Path,
    base: JobSpec,
    env: impl Fn(&str) -> Option<String>,
    keywords: Option<Keywords>,
    sections: &[String],
) -> Result<(Vec<JobSpec>, Vec<String>), SpecError> {
    let mut p = Parser::new(base);
    p.keywords = keywords;
    let mut notes = Vec::new();
    feed_file(&mut p, path, None, &env, &mut notes, 0, sections)?;
    // (With --section, a file may hold none of the sections named: another file may.)
    if !sections.is_empty() && p.jobs.is_empty() && p.current.is_none() {
        return Ok((Vec::new(), notes));
    }
    Ok((p.finish(&path.display().to_string())?, notes))
}

/// Read the job file at `path` (`from`: the include line naming it) into the parser.
fn feed_file(
    p: &mut Parser,
    path: &std::path::Path,
    from: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Vec<String>,
    depth: usize,
    sections: &[String],
) -> Result<(), SpecError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError {
        message: match from {
            None => format!("{origin}: cannot read job file: {e} (valid: a readable fio job file)"),
            Some(at) => format!(
                "{at}: cannot read included file {origin}: {e} (valid: a readable fio job file)"
            ),
        },
    })?;
    let text = expand_vars(&skip_sections(&text, sections), &origin, env)?;
    notes.extend(fio_notes(&text, &origin));
    let dir = path
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    p.feed(&text, &origin, &mut |p, name, at| {
        if depth + 1 >= MAX_INCLUDE_DEPTH {
            return Err(SpecError {
                message: format!(
                    "{at}: include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH} files (valid: a file that does not include itself)"
                ),
            });
        }
        let inc = std::path::Path::new(name);
        let inc = if inc.is_absolute() { inc.to_path_buf() } else { dir.join(inc) };
        feed_file(p, &inc, Some(at), env, notes, depth + 1, sections)
    })
}

/// The name a job-file line opens a section with (`[name]`, comments and blanks around it
/// taken off), if it is a section header.
fn header_name(line: &str) -> Option<&str> {
    let t = strip_comment(line.trim());
    t.strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .map(str::trim)
}

/// The job sections a job file names (not `[global]`, nor those of files it includes), in
/// order: what `--section` may pick from it. Empty if it cannot be read.
pub fn section_names(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(header_name)
        .filter(|n| *n != "global" && !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// fio's `--section`: job-file text with the lines of every job section not in `sections`
/// (`[global]` is always read) left blank, so they are read as nothing — their options not
/// checked, their `${VAR}`s not needed, their `include`s not followed — while every other
/// line keeps its number. No names: the text as it is.
pub fn skip_sections<'t>(text: &'t str, sections: &[String]) -> std::borrow::Cow<'t, str> {
    if sections.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        if let Some(name) = header_name(line) {
            skipping = name != "global" && !sections.iter().any(|s| s == name);
        }
        if skipping {
            out.push_str(&line[line.trim_end_matches(['\n', '\r']).len()..]);
        } else {
            out.push_str(line);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Replace each `${NAME}` in job-file text by `lookup(NAME)` (fio expands environment
/// variables this way). A name `lookup` does not know is an error naming it and its line:
/// fio would pass the text on, and a file named `${NAME}` is never what was meant.
pub fn expand_vars(
    text: &str,
    origin: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, SpecError> {
    if !text.contains("${") {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with([';', '#']) {
            out.push_str(line); // comments are left as written
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let Some(end) = after.find('}') else {
                return Err(SpecError {
                    message: format!(
                        "{origin}:{}: '${{' without a closing '}}' (valid: ${{NAME}})",
                        i + 1
                    ),
                });
            };
            let name = &after[..end];
            let value = lookup(name).ok_or_else(|| SpecError {
                message: format!(
                    "{origin}:{}: ${{{name}}} is not set in the environment (valid: set it, or write the value)",
                    i + 1
                ),
            })?;
            out.push_str(&value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
    }
    Ok(out)
}

/// Notes for job-file lines that fio would run differently, one `ORIGIN:LINE: note: …` line
/// for each: values in IEC units (`4KiB`, `1MiB`, …), which raidlab reads as powers of 2,
/// as its own sizes, while fio 3.x, under its default `kb_base=1024`, reads them as powers
/// of 10 (`bs=4KiB` is 4000 bytes to fio); `k`, `m`, `g`, … mean the same in both. Options
/// whose values are names, not sizes (files, engines, patterns), are not looked at.
pub fn fio_notes(text: &str, origin: &str) -> Vec<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut notes = Vec::new();
    // (The kb_base the lines so far set.)
    let mut kb_base = 1024;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if line.starts_with([';', '#', '[']) {
            continue;
        }
        if key == "kb_base" {
            kb_base = value.parse().unwrap_or(kb_base);
        }
        if let Some(note) = iec_note(key, value, kb_base) {
            notes.push(format!("{origin}:{}: note: {note}", i + 1));
        }
    }
    notes
}

/// The note for an option whose value is a size in IEC units (`bs=4KiB`), which fio reads
/// differently (see [`fio_notes`]): `key=value: raidlab reads …`. None for other values, for
/// options whose values are names, not sizes (files, engines, patterns), and under the
/// job's `kb_base=1000`, where fio reads IEC units as raidlab does.
pub fn iec_note(key: &str, value: &str, kb_base: u32) -> Option<String> {
    if kb_base == 1000 {
        return None;
    }
    // (Of the options `apply_option` takes, those whose values are not sizes.)
    const NAMES: &[&str] = &[
        "name",
        "rw",
        "readwrite",
        "ioengine",
        "filename",
        "write_bw_log",
        "write_iops_log",
        "write_lat_log",
        "percentile_list",
    ];
    if NAMES.contains(&key) {
        return None;
    }
    let lower = value.to_ascii_lowercase();
    let iec = ["kib", "mib", "gib", "tib", "pib"].iter().any(|u| {
        lower.match_indices(u).any(|(at, _)| {
            lower[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_digit() || c == '.')
        })
    });
    iec.then(|| {
        format!(
            "{key}={value}: raidlab reads KiB, MiB, … as powers of 2 (4KiB = 4096 bytes); fio \
             reads them as powers of 10 under its default kb_base=1024 (4KiB = 4000 bytes), so \
             fio runs this differently; k, m, g mean the same in both"
        )
    })
}

/// Parse job-file text. `origin` names it in errors; `base` holds defaults (e.g. options
/// given on the command line before `--job`). An `include` line is refused: text has no
/// folder to find the file in ([`read_job_file`] reads files that include others).
pub fn parse_job_text(text: &str, origin: &str, base: JobSpec) -> Result<Vec<JobSpec>, SpecError> {
    let mut p = Parser::new(base);
    p.feed(text, origin, &mut |_, name, at| {
        Err(SpecError {
            message: format!(
                "{at}: include {name}: an include is read from a job file on disk (valid: --job FILE, or the included lines written out)"
            ),
        })
    })?;
    p.finish(origin)
}

/// `line` without the comment that ends it, as fio's `strip_blank_end` cuts every job-file
/// line at its first `;` or `#` (`size=1m ; one meg` is `size=1m`, `[a] # reads` is `[a]`).
/// A `#` counts only after a blank, unlike fio's: `sim:SYSTEM.toml#LUN` holds one.
fn strip_comment(line: &str) -> &str {
    let semi = line.find(';');
    let hash = line
        .match_indices('#')
        .map(|(at, _)| at)
        .find(|&at| line[..at].ends_with([' ', '\t']));
    match semi.into_iter().chain(hash).min() {
        Some(at) => line[..at].trim_end(),
        None => line,
    }
}

/// A job file's sections as they are read: the options of `[global]` so far, the jobs
/// closed, and the section being filled.
struct Parser {
    global: JobSpec,
    jobs: Vec<JobSpec>,
    /// The section being filled: None before the first, Some(true) for `[global]`.
    in_global: Option<bool>,
    current: Option<JobSpec>,
    /// The figures fio's keywords stand for (None: values are read as they stand).
    keywords: Option<Keywords>,
}

/// What an `include NAME` line does: given the parser, the name and where the line is
/// (`FILE:LINE`).
type Include<'a> = dyn FnMut(&mut Parser, &str, &str) -> Result<(), SpecError> + 'a;

impl Parser {
    fn new(base: JobSpec) -> Parser {
        Parser {
            global: base,
            jobs: Vec::new(),
            in_global: None,
            current: None,
            keywords: None,
        }
    }

    /// Read the lines of `text` (from `origin`), handing `include` lines to `include`.
    fn feed(&mut self, text: &str, origin: &str, include: &mut Include) -> Result<(), SpecError> {
        // (A byte-order mark some editors write is not part of the first line.)
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (i, raw) in text.lines().enumerate() {
            let at = |m: String| SpecError {
                message: format!("{origin}:{}: {m}", i + 1),
            };
            let line = raw.trim();
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            let line = strip_comment(line);
            if let Some(name) = line
                .strip_prefix("include")
                .filter(|r| r.starts_with([' ', '\t']))
                .map(str::trim)
            {
                include(self, name, &format!("{origin}:{}", i + 1))?;
                continue;
            }
            if line.starts_with('[') {
                let Some(name) = header_name(line) else {
                    return Err(at(format!(
                        "'{line}' is not a section header (valid: [name])"
                    )));
                };
                if name.is_empty() {
                    return Err(at("empty section name".into()));
                }
                if let Some(job) = self.current.take() {
                    self.jobs.push(job);
                }
                if name == "global" {
                    self.in_global = Some(true);
                } else {
                    self.in_global = Some(false);
                    self.current = Some(JobSpec {
                        name: name.to_string(),
                        ..self.global.clone()
                    });
                }
                continue;
            }
            let (key, value) = match line.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (line, None),
            };
            let target = match self.in_global {
                None => return Err(at(format!("option '{key}' comes before any [section]"))),
                Some(true) => &mut self.global,
                Some(false) => self.current.as_mut().expect("a job section is open"),
            };
            // (The value with fio's keywords replaced, when it holds one.)
            let replaced = match (value, &self.keywords) {
                (Some(v), Some(kw)) => {
                    substitute(key, v, kw).map_err(|e| at(format!("option '{key}': {e}")))?
                }
                _ => None,
            };
            apply_option(target, key, replaced.as_deref().or(value)).map_err(|e| at(e.message))?;
        }
        Ok(())
    }

    /// The jobs read, the last section closed; `origin` names the file in the error if
    /// there are none.
    fn finish(mut self, origin: &str) -> Result<Vec<JobSpec>, SpecError> {
        if let Some(job) = self.current.take() {
            self.jobs.push(job);
        }
        if self.jobs.is_empty() {
            return Err(SpecError {
                message: format!("{origin}: no job sections (add one, e.g. [job1])"),
            });
        }
        Ok(self.jobs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RwMode;
    use proptest::prelude::*;

    #[test]
    fn global_options_reach_every_job() {
        let text = "; seed 004's pattern\n[global]\nbs=8k\ndirect=1\nfilename=/tmp/x\n\n[reads]\nrw=randread\n# comment\n[mixed]\nrw=randrw\nrwmixread=67\nstonewall\n";
        let jobs = parse_job_text(text, "t.fio", JobSpec::default()).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "reads");
        assert_eq!(jobs[0].rw, RwMode::RandRead);
        assert_eq!(jobs[1].rwmixread, 67);
        assert!(jobs[1].stonewall && !jobs[0].stonewall);
        assert!(jobs.iter().all(|j| j.direct && j.bs.min() == 8192));
    }

    /// The request-shaping options read from a job file as from flags, bare flags included.
    #[test]
    fn shaping_options_in_a_job_file() {
        let text = "[global]\nrw=randrw\nrandom_distribution=zoned:60/10:40/90\nrandrepeat=0\n[a]\nbsrange=4k-16k,8k-8k\nbs_unaligned\npercentage_random=80,20\nsize=50%\noffset=10%\n[b]\nnew_group\nrandom_distribution=pareto:0.3:0.5\nio_size=5%\n";
        let jobs = parse_job_text(text, "t.fio", JobSpec::default()).unwrap();
        let (a, b) = (&jobs[0], &jobs[1]);
        assert!(!a.randrepeat && !b.randrepeat);
        assert_eq!(a.bs.read.range, Some((4096, 16384)));
        assert!(a.bs.write.is_fixed() && a.bs_unaligned);
        assert_eq!(a.percentage_random, [80, 20, 20]);
        assert_eq!((a.size_percent, a.offset_percent), (Some(50), Some(10)));
        assert_eq!(a.random_distribution.text(), "zoned:60/10:40/90");
        assert!(b.new_group && !a.new_group);
        assert_eq!(b.random_distribution.text(), "pareto:0.3:0.5");
        assert_eq!(b.io_size_percent, Some(5));
    }

    /// fio cuts a job-file line at a `;` or `#` comment after its text (fio 3.33 runs
    /// `size=1m ; one meg` as 1 MiB, and `[a] ; reads` as job a); raidlab read the comment as
    /// part of the value and refused the line. A `#` within a value (a simulated LUN's
    /// `sim:x.toml#lun0`) is kept.
    #[test]
    fn comments_after_a_line_are_cut_as_fio_does() {
        let text = "[global]\nsize=1m ; one meg\nbs=8k # eight k\n[reads] ; the readers\nrw=randread;x\nfilename=sim:s.toml#lun0 # the LUN\nnumjobs=2\t# two\n";
        let jobs = parse_job_text(text, "t.fio", JobSpec::default()).unwrap();
        assert_eq!(jobs.len(), 1);
        let j = &jobs[0];
        assert_eq!(j.name, "reads");
        assert_eq!(j.size, Some(1 << 20));
        assert_eq!(j.bs.min(), 8192);
        assert_eq!(j.rw, RwMode::RandRead);
        assert_eq!(j.filenames, ["sim:s.toml#lun0"]);
        assert_eq!(j.numjobs, 2);
    }

    #[test]
    fn variables_are_expanded_and_a_missing_one_is_named() {
        let env = |v: &str| (v == "DIR").then(|| "/tmp/x".to_string());
        let t = expand_vars("[a]\n# ${OTHER}\nfilename=${DIR}/f\nbs=4k\n", "t.fio", env).unwrap();
        assert_eq!(t, "[a]\n# ${OTHER}\nfilename=/tmp/x/f\nbs=4k\n");
        let e = expand_vars("[a]\nrw=read\nfilename=${NOPE}\n", "t.fio", env).unwrap_err();
        assert!(
            e.message.starts_with("t.fio:3: ${NOPE} is not set"),
            "{}",
            e.message
        );
        let e = expand_vars("[a]\nfilename=${DIR\n", "t.fio", env).unwrap_err();
        assert!(
            e.message.contains("t.fio:2: '${' without a closing"),
            "{}",
            e.message
        );
        // A byte-order mark before the first section is not part of it.
        let jobs = parse_job_text("\u{feff}[a]\nrw=read\n", "t.fio", JobSpec::default()).unwrap();
        assert_eq!(jobs[0].name, "a");
    }

    #[test]
    fn iec_units_are_noted_where_fio_reads_them_otherwise() {
        let text = "[global]\nfilename=/tmp/4KiB.dat\nbs=4KiB\n; size=1MiB\n[a]\nsize=64k\n[b]\nbssplit=4k/50:1.5MiB/50\nname=8MiB\n";
        let notes = fio_notes(text, "t.fio");
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("t.fio:3: note: bs=4KiB: raidlab reads"),
            "{}",
            notes[0]
        );
        assert!(notes[0].contains("(4KiB = 4000 bytes)"), "{}", notes[0]);
        assert!(
            notes[1].starts_with("t.fio:8: note: bssplit=4k/50:1.5MiB/50:"),
            "{}",
            notes[1]
        );
        // What raidlab runs: powers of 2.
        let jobs = parse_job_text(text, "t.fio", JobSpec::default()).unwrap();
        assert_eq!(jobs[0].bs, crate::BlockSizes::fixed(4096));
        assert!(fio_notes("[a]\nbs=4k\nsize=1m\n", "t.fio").is_empty());
        // Under kb_base=1000 fio reads KiB as 1024 too.
        assert!(fio_notes("[a]\nkb_base=1000\nbs=4KiB\n", "t.fio").is_empty());
    }

    /// A filename list runs as fio runs it, one job over all of its files (nothing to note);
    /// `job_per_file=1` makes each file a job of its own.
    #[test]
    fn filename_lists_run_one_job_over_their_files_as_fio() {
        let text = "[a]\nfilename=/dev/sdb:/dev/sdc\n[b]\nfilename=/tmp/x\\:y\n[c]\nfilename=/dev/sdb:/dev/sdc\njob_per_file=1\n";
        assert!(fio_notes(text, "t.fio").is_empty());
        let jobs = parse_job_text(text, "t.fio", JobSpec::default()).unwrap();
        let a = crate::JobInstance::expand(&jobs[..1]);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].files, [0, 1]);
        assert_eq!(jobs[1].filenames, ["/tmp/x:y"]);
        let c = crate::JobInstance::expand(&jobs[2..]);
        assert_eq!(
            c.iter().map(|i| i.files.clone()).collect::<Vec<_>>(),
            [vec![0], vec![1]]
        );
    }

    /// fio's keywords in a job file: replaced by the machine's figures, and math on them
    /// evaluated; without figures (text read with none) a value is taken as it stands;
    /// errors name the line.
    #[test]
    fn keywords_stand_for_the_machines_figures() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.fio");
        std::fs::write(
            &path,
            "[global]\nsize=($pagesize*16)\n[a]\nnumjobs=$ncpus\nbs=$pagesize\n",
        )
        .unwrap();
        let kw = Keywords {
            pagesize: 8192,
            mb_memory: 1000,
            ncpus: 3,
        };
        let none = |_: &str| None;
        let (jobs, _) = read_job_file(&path, JobSpec::default(), none, Some(kw), &[]).unwrap();
        assert_eq!(jobs[0].size, Some(131_072));
        assert_eq!(jobs[0].numjobs, 3);
        assert_eq!(jobs[0].bs.read.min(), 8192);
        let e = read_job_file(&path, JobSpec::default(), none, None, &[]).unwrap_err();
        assert!(e
            .message
            .starts_with(&format!("{}:2: option 'size'", path.display())));
        std::fs::write(&path, "[a]\nsize=$mb_memory/0\n").unwrap();
        let e = read_job_file(&path, JobSpec::default(), none, Some(kw), &[]).unwrap_err();
        assert!(
            e.message
                .contains("k.fio:2: option 'size': '$mb_memory/0' is '1000/0'"),
            "{}",
            e.message
        );
    }

    /// `include FILE` reads that file's lines where the line stands, as fio does: a relative
    /// name from the including file's folder, its options in the section open there, its
    /// own `${VAR}`s and notes; errors name the included file's line; a file including
    /// itself stops; text with no file behind it refuses an include.
    #[test]
    fn included_files_continue_where_the_include_stands() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write(
            "main.fio",
            "[global]\nrw=read\ninclude sub/common.fio\n[a]\nsize=1m\n[b]\ninclude sub/more.fio\n",
        );
        write("sub/common.fio", "bs=4KiB\nfilename=${DEV}\n");
        write("sub/more.fio", "rw=write\n");
        let env = |v: &str| (v == "DEV").then(|| "/dev/x".to_string());
        let (jobs, notes) = read_job_file(
            &dir.path().join("main.fio"),
            JobSpec::default(),
            env,
            None,
            &[],
        )
        .unwrap();
        assert_eq!(jobs.len(), 2);
        assert!(jobs
            .iter()
            .all(|j| j.bs.read.min() == 4096 && j.filenames == vec!["/dev/x"]));
        assert_eq!((jobs[0].rw, jobs[1].rw), (RwMode::Read, RwMode::Write));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("sub/common.fio:1: note: bs=4KiB"),
            "{}",
            notes[0]
        );

        write("bad.fio", "[a]\ninclude sub/badopt.fio\n");
        write("sub/badopt.fio", "rw=read\n\nbs=1x\n");
        let e = read_job_file(
            &dir.path().join("bad.fio"),
            JobSpec::default(),
            env,
            None,
            &[],
        )
        .unwrap_err();
        assert!(
            e.message.contains("sub/badopt.fio:3: option 'bs'"),
            "{}",
            e.message
        );
        write("missing.fio", "[a]\ninclude nope.fio\n");
        let e = read_job_file(
            &dir.path().join("missing.fio"),
            JobSpec::default(),
            env,
            None,
            &[],
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("missing.fio:2: cannot read included file"),
            "{}",
            e.message
        );
        write("self.fio", "[a]\ninclude self.fio\n");
        let e = read_job_file(
            &dir.path().join("self.fio"),
            JobSpec::default(),
            env,
            None,
            &[],
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("self.fio:2: include self.fio: includes nest deeper"),
            "{}",
            e.message
        );

        let e = parse_job_text("[a]\ninclude x.fio\n", "t.fio", JobSpec::default()).unwrap_err();
        assert!(
            e.message.starts_with("t.fio:2: include x.fio:"),
            "{}",
            e.message
        );
        // An option whose name starts with "include" is not an include.
        let e = parse_job_text("[a]\nincludes=1\n", "t.fio", JobSpec::default()).unwrap_err();
        assert!(
            e.message.contains("unknown option 'includes'"),
            "{}",
            e.message
        );
    }

    #[test]
    fn unknown_option_names_the_line() {
        let e = parse_job_text(
            "[a]\nrw=read\nzonecapacity=1m\n",
            "t.fio",
            JobSpec::default(),
        )
        .unwrap_err();
        assert!(
            e.message
                .starts_with("t.fio:3: option 'zonecapacity' is fio's and raidlab does not run it"),
            "{e}"
        );
        let e = parse_job_text("rw=read\n", "t.fio", JobSpec::default()).unwrap_err();
        assert!(e.message.starts_with("t.fio:1:"), "{e}");
        let e = parse_job_text("[global]\nbs=4k\n", "t.fio", JobSpec::default()).unwrap_err();
        assert!(e.message.contains("no job sections"), "{e}");
    }

    proptest! {
        #[test]
        fn parser_never_panics(text in "(\\[[a-z]{0,5}\\]?|[a-z_]{1,10}(=[a-z0-9:/,]{0,8})?|;.*|\\PC{0,10})(\n(\\[[a-z]{0,5}\\]?|[a-z_]{1,10}(=[a-z0-9:/,]{0,8})?|\\PC{0,10})){0,8}") {
            let _ = parse_job_text(&text, "p.fio", JobSpec::default());
        }
    }

    /// fio's --section reads `[global]` and the sections named, and skips the others whole:
    /// an unset `${VAR}`, an unknown option or an include there is not looked at, and the
    /// lines kept keep their numbers (errors still name the right line).
    #[test]
    fn sections_not_picked_are_skipped_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.fio");
        std::fs::write(
            &path,
            "[global]\nbs=4k\n[a]\nrw=read\n[b]\nrw=${UNSET_HERE}\nfrobnicate=1\ninclude missing.fio\n[c]\nrw=write\nbogus=2\n",
        )
        .unwrap();
        let none = |_: &str| None;
        let pick = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            read_job_file(&path, JobSpec::default(), none, None, &names)
        };
        let (jobs, _) = pick(&["a"]).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!((jobs[0].name.as_str(), jobs[0].bs.read.min()), ("a", 4096));
        let e = pick(&["a", "c"]).unwrap_err().message;
        assert!(
            e.starts_with(&format!("{}:11: unknown option 'bogus'", path.display())),
            "{e}"
        );
        assert!(
            pick(&["zz"]).unwrap().0.is_empty(),
            "none picked from this file"
        );
        let e = pick(&[]).unwrap_err().message;
        assert!(e.contains(":6: ${UNSET_HERE} is not set"), "{e}");
        assert_eq!(section_names(&path), ["a", "b", "c"]);
    }
}
