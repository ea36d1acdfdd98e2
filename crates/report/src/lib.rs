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

use std::collections::BTreeMap;
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
}

/// The files a report consists of.
#[derive(Debug, Clone, Default)]
pub struct ReportFiles {
    pub index: PathBuf,
    pub svgs: Vec<PathBuf>,
    pub pngs: Vec<PathBuf>,
    /// Things the reader of the command's output should know (e.g. no fonts for the PNGs).
    pub warnings: Vec<String>,
}

/// Write `index.html` with inline SVG figures, plus one `.svg` and one `.png` per figure, into
/// `out` (created if missing).
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
    let mut placed = Vec::new();
    for f in &figures {
        let standalone = f.figure.to_svg(&f.id, true);
        let svg_name = format!("{}.svg", f.id);
        let svg_path = out.join(&svg_name);
        write_file(&svg_path, standalone.as_bytes())?;
        files.svgs.push(svg_path);
        let png_file = match raster.png(&standalone, 2.0) {
            Ok(bytes) => {
                let name = format!("{}.png", f.id);
                let path = out.join(&name);
                write_file(&path, &bytes)?;
                files.pngs.push(path);
                Some(name)
            }
            Err(e) => {
                files.warnings.push(format!("{}: no PNG ({e})", f.id));
                None
            }
        };
        placed.push(html::PlacedFigure {
            spec: f,
            inline_svg: f.figure.to_svg(&f.id, false),
            svg_file: svg_name,
            png_file,
        });
    }
    let page = html::page(meta, runs, &placed, &tables);
    write_file(&files.index, page.as_bytes())?;
    Ok(files)
}

fn prepare_dir(out: &Path) -> Result<(), ReportError> {
    if out.exists() && !out.is_dir() {
        return Err(ReportError::usage(format!(
            "report directory '{}' is a file (give a directory to write the report into)",
            out.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(|e| {
        ReportError::usage(format!(
            "cannot create report directory '{}': {} (give a writable directory)",
            out.display(),
            plain(&e)
        ))
    })?;
    // Probe writability up front so nothing is half written.
    let probe = out.join(".raidlab-report-probe");
    std::fs::write(&probe, b"").map_err(|e| {
        ReportError::usage(format!(
            "cannot write into report directory '{}': {} (give a writable directory)",
            out.display(),
            plain(&e)
        ))
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Write through a temporary file and rename, so a reader never sees half a file.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| ReportError::failed(format!("writing '{}': {}", path.display(), plain(&e))))
}

/// An io::Error without Rust's "(os error N)" suffix.
fn plain(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
