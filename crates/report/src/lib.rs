//! Reports from a results database: figures as SVG (and PNG), a self-contained HTML page, and
//! the limits table that names the component bounding a storage path.
//!
//! What it is for: turning the rows of `raidlab sweep` (measured, simulated and reference
//! points, repetitions, convergence steps) into the figures the seed studies drew — rate
//! against block size on log–log axes, IOPS and latency against read percentage per queue
//! depth, heatmaps over two parameters, bars per RAID level and chunk size, convergence curves
//! — chosen automatically from what each campaign varied, with error bars from repetitions and
//! measured/predicted overlays.
//!
//! What it is NOT for: running anything, reading the database (the caller passes rows it read
//! through `raidlab_lab::db`), interactive plotting, or a general charting library: the charts
//! draw what storage experiments need and nothing more. No script and no external resource is
//! put into the page.
//!
//! Layers: [`select`] (rows → figure specs, pure), [`chart`] (spec → SVG string, pure),
//! [`limits`] (bounds + rows → table, pure), [`html`] (page text, pure), [`png`] (rasterize);
//! [`write_report`] is the one function that touches the file system.

pub mod axis;
pub mod campaign_meta;
pub mod chart;
pub mod html;
pub mod limits;
pub mod png;
pub mod points;
pub mod rows;
pub mod select;
pub mod svg;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

pub use chart::{Figure, Source};
pub use limits::{limits_from_toml, limits_tables, ComponentLimit, LimitsInput, LimitsTable};
pub use rows::{ConvergenceStep, RunRow};
pub use select::{select_figures, FigureSpec};

/// Why a report could not be written: bad input (exit 2) or a failure while writing (exit 1).
/// Displays as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportError {
    usage: bool,
    message: String,
}

impl ReportError {
    pub fn usage(message: impl Into<String>) -> Self {
        ReportError {
            usage: true,
            message: one_line(message.into()),
        }
    }
    pub fn failed(message: impl Into<String>) -> Self {
        ReportError {
            usage: false,
            message: one_line(message.into()),
        }
    }
    /// Bad input (exit 2) rather than a failure while running (exit 1).
    pub fn is_usage(&self) -> bool {
        self.usage
    }
}

fn one_line(s: String) -> String {
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ReportError {}

/// What the page says about its provenance. Everything is optional.
#[derive(Debug, Clone, Default)]
pub struct ReportMeta {
    pub title: Option<String>,
    /// The command line that wrote the report (shown in captions).
    pub command: Option<String>,
    /// e.g. "raidlab 0.1.0".
    pub generator: Option<String>,
    /// Per campaign: description, the command that measured it, its environment.
    pub campaigns: BTreeMap<String, CampaignMeta>,
    /// Notes shown at the top of the page (e.g. bounds that could not be found).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct CampaignMeta {
    pub description: String,
    pub command: String,
    /// (what, value): kernel, CPU, device model, queue settings, raidlab version …
    pub environment: Vec<(String, String)>,
    /// The experiment's `[repeat] spread_threshold` (a fraction: 0.05 = 5%): points whose
    /// spread exceeds it are flagged, as the sweep flagged them. `None` (the lab's default):
    /// no point is flagged.
    pub spread_threshold: Option<f64>,
    /// The metric the spread is judged on (`[repeat] metric`; empty: `mb_s`).
    pub spread_metric: String,
    /// How many points the experiment's sweep defines, when known.
    pub points_defined: Option<u64>,
}

/// The files a report consists of.
#[derive(Debug, Clone, Default)]
pub struct ReportFiles {
    pub index: PathBuf,
    pub svgs: Vec<PathBuf>,
    pub pngs: Vec<PathBuf>,
    /// Figures of an earlier raidlab report in the folder that this one no longer draws,
    /// removed (only files raidlab wrote and nobody changed since).
    pub removed: Vec<PathBuf>,
    /// Things the reader of the command's output should know (e.g. no fonts for the PNGs).
    pub warnings: Vec<String>,
}

/// How a report is written into its folder.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// Write over files in the folder that raidlab did not write, or that were changed since
    /// it wrote them. The default refuses, naming the file.
    pub force: bool,
}

/// The file in a report folder listing what raidlab wrote there (name and content hash), so a
/// later report writes over, or removes, only its own files.
pub const MANIFEST: &str = ".raidlab-report";
const MANIFEST_HEAD: &str = "# raidlab report manifest v1: files this folder's report consists of (fnv1a-64 of the content, name)";
/// What every page raidlab writes carries in its head.
pub const GENERATOR_MARK: &str = "<meta name=\"generator\" content=\"raidlab";

/// Write `index.html` with inline SVG figures, plus one `.svg` and one `.png` per figure, into
/// `out` (created if missing). Refuses to write over files raidlab did not write.
pub fn write_report(
    runs: &[RunRow],
    conv: &[ConvergenceStep],
    limits: &[LimitsInput],
    out: &Path,
) -> Result<ReportFiles, ReportError> {
    write_report_with(runs, conv, limits, &ReportMeta::default(), out)
}

/// [`write_report`] with provenance for the page.
pub fn write_report_with(
    runs: &[RunRow],
    conv: &[ConvergenceStep],
    limits: &[LimitsInput],
    meta: &ReportMeta,
    out: &Path,
) -> Result<ReportFiles, ReportError> {
    write_report_opts(runs, conv, limits, meta, out, WriteOptions::default())
}

/// [`write_report_with`], saying whether files raidlab did not write may be written over.
pub fn write_report_opts(
    runs: &[RunRow],
    conv: &[ConvergenceStep],
    limits: &[LimitsInput],
    meta: &ReportMeta,
    out: &Path,
    opts: WriteOptions,
) -> Result<ReportFiles, ReportError> {
    prepare_dir(out)?;
    let figures = select_figures(runs, conv);
    let tables = limits_tables(runs, limits);

    let raster = png::Rasterizer::new();
    let mut files = ReportFiles {
        index: out.join("index.html"),
        ..Default::default()
    };
    if raster.font_count() == 0 && !figures.is_empty() {
        files.warnings.push("no system fonts found: PNG figures have no text (install fonts-dejavu-core); the HTML page is unaffected".into());
    }
    // Everything is made in memory first, so the folder is checked once and nothing is half
    // written when a file turns out not to be ours.
    let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut placed = Vec::new();
    for f in &figures {
        let standalone = f.figure.to_svg(&f.id, true);
        let svg_name = format!("{}.svg", f.id);
        files.svgs.push(out.join(&svg_name));
        let png_file = match raster.png(&standalone, 2.0) {
            Ok(bytes) => {
                let name = format!("{}.png", f.id);
                files.pngs.push(out.join(&name));
                outputs.push((name.clone(), bytes));
                Some(name)
            }
            Err(e) => {
                files.warnings.push(format!("{}: no PNG ({e})", f.id));
                None
            }
        };
        outputs.push((svg_name.clone(), standalone.into_bytes()));
        placed.push(html::PlacedFigure {
            spec: f,
            inline_svg: f.figure.to_svg(&f.id, false),
            svg_file: svg_name,
            png_file,
        });
    }
    let page = html::page(meta, runs, &placed, &tables);
    outputs.push(("index.html".to_string(), page.into_bytes()));

    let old = read_manifest(out, opts.force)?;
    for (name, _) in &outputs {
        check_output(out, name, old.as_ref(), opts.force)?;
    }
    // Earlier figures this report no longer draws: removed if raidlab wrote them as they are.
    let new_names: BTreeSet<&str> = outputs.iter().map(|(n, _)| n.as_str()).collect();
    let stale: Vec<(String, BTreeSet<String>)> = old
        .iter()
        .flat_map(|m| m.iter())
        .filter(|(n, _)| !new_names.contains(n.as_str()))
        .map(|(n, h)| (n.clone(), h.clone()))
        .collect();

    // The manifest is written first naming both the old and the new content, so a report
    // interrupted half way still recognises every file in the folder as its own.
    let mut transition: Manifest = old.clone().unwrap_or_default();
    for (name, bytes) in &outputs {
        transition
            .entry(name.clone())
            .or_default()
            .insert(raidlab_lab::experiment::fnv1a_hex(bytes));
    }
    write_manifest(out, &transition)?;
    for (name, bytes) in &outputs {
        write_file(out, name, bytes)?;
    }
    for (name, hashes) in &stale {
        let path = out.join(name);
        if let Ok(bytes) = std::fs::read(&path) {
            if hashes.contains(&raidlab_lab::experiment::fnv1a_hex(&bytes)) {
                if std::fs::remove_file(&path).is_ok() {
                    files.removed.push(path);
                }
            } else {
                files.warnings.push(format!(
                    "'{}' is left from an earlier report but was changed since; not removed",
                    path.display()
                ));
            }
        }
    }
    let fin: Manifest = outputs
        .iter()
        .map(|(n, b)| {
            (
                n.clone(),
                BTreeSet::from([raidlab_lab::experiment::fnv1a_hex(b)]),
            )
        })
        .collect();
    write_manifest(out, &fin)?;
    Ok(files)
}

/// Whether a report may be written into `out`, as far as that can be told before it is
/// drawn (before a sweep's campaign, so a refusal costs no runs): `out` is a folder or
/// nothing yet, its manifest (if any) is raidlab's, and its `index.html`, the one file every
/// report writes, is absent or raidlab's own. The same rules and messages as
/// [`write_report_opts`], which applies them again, to every file, once it knows their
/// names (a figure's file raidlab did not write is only found then). Writes nothing.
pub fn check_destination(out: &Path, opts: WriteOptions) -> Result<(), ReportError> {
    match std::fs::metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Ok(m) if !m.is_dir() => return Err(not_a_folder(out)),
        // Anything else (unreadable, …) is for prepare_dir to say when the report is written.
        _ => {}
    }
    let old = read_manifest(out, opts.force)?;
    check_output(out, "index.html", old.as_ref(), opts.force)
}

/// The file `name` in `out` may be written: it does not exist, or it is a file raidlab's
/// report wrote (`manifest`), or `force`.
fn check_output(
    out: &Path,
    name: &str,
    manifest: Option<&Manifest>,
    force: bool,
) -> Result<(), ReportError> {
    let path = out.join(name);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ReportError::failed(format!(
            "cannot inspect '{}': {}",
            path.display(),
            raidlab_result::io_error_text(&e)
        ))),
        Ok(m) if m.is_dir() => Err(ReportError::usage(format!(
            "'{}' is a directory, where the report would write a file (give another output folder)",
            path.display()
        ))),
        Ok(_) if !force && !owned(name, &path, manifest) => Err(ReportError::usage(format!(
            "'{}' exists and is not a file raidlab's report wrote (or it was changed since): give another output folder, or pass --force to write over it",
            path.display()
        ))),
        Ok(_) => Ok(()),
    }
}

fn not_a_folder(out: &Path) -> ReportError {
    ReportError::usage(format!(
        "report directory '{}' is a file (give a directory to write the report into)",
        out.display()
    ))
}

/// File name → hashes of contents raidlab wrote under it.
type Manifest = BTreeMap<String, BTreeSet<String>>;

/// A name the manifest may list: a plain file in the folder.
fn plain_name(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with('.')
        && !n.contains('/')
        && !n.contains('\\')
        && !n.contains('\0')
}

/// The folder's manifest: `None` when there is none. A file of that name that is not one
/// (a user's) is refused unless `force`.
fn read_manifest(out: &Path, force: bool) -> Result<Option<Manifest>, ReportError> {
    let path = out.join(MANIFEST);
    let text = match std::fs::read(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if !force => {
            return Err(ReportError::failed(format!(
                "cannot read '{}': {}",
                path.display(),
                raidlab_result::io_error_text(&e)
            )))
        }
        Err(_) => return Ok(None),
        Ok(b) => b,
    };
    let text = String::from_utf8_lossy(&text);
    let mut lines = text.lines();
    if lines.next() != Some(MANIFEST_HEAD) {
        if force {
            return Ok(None);
        }
        return Err(ReportError::usage(format!(
            "'{}' exists and is not a file raidlab's report wrote: give another output folder, or pass --force to write over it",
            path.display()
        )));
    }
    let mut m = Manifest::new();
    for l in lines {
        if let Some((hash, name)) = l.split_once(' ') {
            if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) && plain_name(name) {
                m.entry(name.to_string())
                    .or_default()
                    .insert(hash.to_string());
            }
        }
    }
    Ok(Some(m))
}

fn write_manifest(out: &Path, m: &Manifest) -> Result<(), ReportError> {
    let mut text = String::from(MANIFEST_HEAD);
    text.push('\n');
    for (name, hashes) in m {
        for h in hashes {
            text.push_str(h);
            text.push(' ');
            text.push_str(name);
            text.push('\n');
        }
    }
    write_file(out, MANIFEST, text.as_bytes())
}

/// Whether the file `name` at `path` is one raidlab's report wrote, unchanged since: listed
/// with its content's hash in the manifest, or (a folder without a manifest) a page carrying
/// raidlab's generator mark.
fn owned(name: &str, path: &Path, manifest: Option<&Manifest>) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    match manifest {
        Some(m) => m
            .get(name)
            .is_some_and(|h| h.contains(&raidlab_lab::experiment::fnv1a_hex(&bytes))),
        None => {
            name == "index.html"
                && String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).contains(GENERATOR_MARK)
        }
    }
}

fn prepare_dir(out: &Path) -> Result<(), ReportError> {
    if out.exists() && !out.is_dir() {
        return Err(not_a_folder(out));
    }
    std::fs::create_dir_all(out).map_err(|e| {
        ReportError::usage(format!(
            "cannot create report directory '{}': {} (give a writable directory)",
            out.display(),
            raidlab_result::io_error_text(&e)
        ))
    })?;
    // Probe writability up front so nothing is half written; a name no user file has.
    let probe = out.join(format!(".raidlab-report-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| {
            ReportError::usage(format!(
                "cannot write into report directory '{}': {} (give a writable directory)",
                out.display(),
                raidlab_result::io_error_text(&e)
            ))
        })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Write `out/name` through a temporary file of a name no user file has, then rename, so a
/// reader never sees half a file.
fn write_file(out: &Path, name: &str, bytes: &[u8]) -> Result<(), ReportError> {
    let path = out.join(name);
    let tmp = out.join(format!(
        ".raidlab-{}.tmp-{}",
        name.trim_start_matches('.'),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            ReportError::failed(format!(
                "writing '{}': {}",
                path.display(),
                raidlab_result::io_error_text(&e)
            ))
        })
}
