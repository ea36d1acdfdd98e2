//! Figure specifications as plain data, and their rendering to SVG.
//!
//! A figure is one of three kinds: a line chart (several series, linear or log axes, error
//! bars, measured/predicted/reference styles), a heatmap of a metric over two axes, or grouped
//! bars. Rendering is a pure function from the spec to an SVG string.

use crate::axis::{format_number, Axis, Scale, Unit};
use crate::svg::{esc, n, text_width, Anchor, Svg, MARKERS, PALETTE};

/// Where a series' numbers come from, which decides how it is drawn: measured = solid line
/// with filled markers, predicted (simulated) = dashed line with small hollow markers,
/// reference (published) = hollow markers without a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Measured,
    Predicted,
    Reference,
}

impl Source {
    /// From the database's `source` column (`measured`, `simulated`, `reference`).
    pub fn from_db(s: &str) -> Source {
        match s.to_ascii_lowercase().as_str() {
            "simulated" | "predicted" | "model" => Source::Predicted,
            "reference" | "published" => Source::Reference,
            _ => Source::Measured,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Source::Measured => "measured",
            Source::Predicted => "simulated",
            Source::Reference => "reference",
        }
    }
}

/// One point of a series; `lo`/`hi` draw an error bar when present.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl Pt {
    pub fn new(x: f64, y: f64) -> Pt {
        Pt {
            x,
            y,
            lo: None,
            hi: None,
        }
    }
}

/// A curve. `color` indexes the palette: curves of one configuration from different sources
/// share a colour and differ in style.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub color: usize,
    pub source: Source,
    pub points: Vec<Pt>,
}

/// Axis description before the data range is known.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisSpec {
    pub label: String,
    pub scale: Scale,
    pub unit: Unit,
    /// Include zero in a linear axis (rates, IOPS).
    pub zero: bool,
}

/// A horizontal reference line with a label (e.g. a sustained rate or a component bound).
#[derive(Debug, Clone, PartialEq)]
pub struct HLine {
    pub y: f64,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x: AxisSpec,
    pub y: AxisSpec,
    pub series: Vec<Series>,
    pub hlines: Vec<HLine>,
}

/// A metric over two axes; `cells[yi][xi]`, `None` where no point was run.
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_values: Vec<String>,
    pub y_values: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
    pub value_label: String,
}

/// Bars grouped by category (e.g. chunk size), one bar per series (e.g. level) in each group.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
}

/// An error bar: (low, high).
pub type ErrorBar = (f64, f64);

#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub label: String,
    /// Per category: (value, optional error bar); `None` where missing.
    pub values: Vec<Option<(f64, Option<ErrorBar>)>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    Line(LineChart),
    Heatmap(Heatmap),
    Bars(BarChart),
}

impl Figure {
    pub fn title(&self) -> &str {
        match self {
            Figure::Line(c) => &c.title,
            Figure::Heatmap(h) => &h.title,
            Figure::Bars(b) => &b.title,
        }
    }

    /// Render to SVG. `id` prefixes every element id so several figures can share one page;
    /// `standalone` adds the namespace a separate .svg file needs.
    pub fn to_svg(&self, id: &str, standalone: bool) -> String {
        match self {
            Figure::Line(c) => line_svg(c, id, standalone),
            Figure::Heatmap(h) => heatmap_svg(h, standalone),
            Figure::Bars(b) => bars_svg(b, standalone),
        }
    }
}

const W: f64 = 760.0;
const H: f64 = 460.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 58.0;
const LEFT: f64 = 78.0;
const GRID: &str = "#e3e3e3";
const INK: &str = "#222222";
const MUTED: &str = "#555555";

/// Dash pattern for the n-th round through the palette, so more than eight curves stay apart.
fn round_dash(color: usize) -> Option<&'static str> {
    match (color / PALETTE.len()) % 3 {
        0 => None,
        1 => Some("2 3"),
        _ => Some("8 3 2 3"),
    }
}

fn legend_width(labels: impl Iterator<Item = String>) -> f64 {
    let widest = labels.map(|l| text_width(&l, 11.0)).fold(0.0, f64::max);
    (widest + 44.0).clamp(110.0, 300.0)
}

/// Shorten a legend label to fit the legend box.
fn fit_label(s: &str, max_px: f64) -> String {
    let max_chars = ((max_px - 44.0) / (11.0 * 0.6)).floor().max(4.0) as usize;
    if s.chars().count() <= max_chars {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max_chars - 1).collect();
        format!("{cut}…")
    }
}

fn title(svg: &mut Svg, t: &str) {
    svg.text(
        W / 2.0,
        24.0,
        t,
        15.0,
        Anchor::Middle,
        INK,
        r#"font-weight="bold""#,
    );
}

/// Pixels between the plot frame and the ends of a line chart's axes.
const INSET: f64 = 10.0;

fn line_svg(c: &LineChart, id: &str, standalone: bool) -> String {
    let mut ys: Vec<f64> = Vec::new();
    let mut xs: Vec<f64> = Vec::new();
    for s in &c.series {
        for p in &s.points {
            xs.push(p.x);
            ys.push(p.y);
            ys.extend(p.lo);
            ys.extend(p.hi);
        }
    }
    ys.extend(c.hlines.iter().map(|h| h.y));
    let xa = Axis::fit(&c.x.label, c.x.scale, c.x.unit, xs, c.x.zero);
    let ya = Axis::fit(&c.y.label, c.y.scale, c.y.unit, ys, c.y.zero);

    let legend_labels: Vec<String> = c.series.iter().map(|s| s.label.clone()).collect();
    let lw = legend_width(legend_labels.iter().cloned());
    let legend_rows = c.series.len() as f64 + 3.0;
    let height = H.max(TOP + legend_rows * 18.0 + 40.0);
    let (px, py) = (LEFT, TOP);
    let (pw, ph) = (W - LEFT - lw - 24.0, height - TOP - BOTTOM);
    // Data and ticks sit a little inside the frame, so markers at the axes' ends (512 B,
    // 2 MiB, the top rate) are drawn whole rather than cut by it.
    let sx = |v: f64| px + INSET + xa.frac(v) * (pw - 2.0 * INSET);
    let sy = |v: f64| py + ph - INSET - ya.frac(v) * (ph - 2.0 * INSET);

    let mut svg = Svg::new(W, height);
    title(&mut svg, &c.title);
    let clip = format!("{id}-plot");
    svg.raw(&format!(
        r#"<defs><clipPath id="{}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath></defs>"#,
        esc(&clip),
        n(px - 6.0),
        n(py - 6.0),
        n(pw + 12.0),
        n(ph + 12.0)
    ));
    axes(&mut svg, &xa, &ya, px, py, pw, ph, &sx, &sy);

    for h in &c.hlines {
        let y = sy(h.y);
        if y.is_finite() && y >= py - 1.0 && y <= py + ph + 1.0 {
            svg.line(px, y, px + pw, y, "#7a7a7a", 1.0, Some("4 4"));
            // Below the line at the left: a rate converging from above leaves that corner empty.
            svg.text(px + 6.0, y + 14.0, &h.label, 10.0, Anchor::Start, MUTED, "");
        }
    }

    for (i, s) in c.series.iter().enumerate() {
        let color = PALETTE[s.color % PALETTE.len()];
        let marker = MARKERS[s.color % MARKERS.len()];
        let mut pts: Vec<Pt> = s
            .points
            .iter()
            .copied()
            .filter(|p| sx(p.x).is_finite() && sy(p.y).is_finite())
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        // Error bars first, so lines and markers sit on top.
        for p in &pts {
            if let (Some(lo), Some(hi)) = (p.lo, p.hi) {
                let (x, y1, y2) = (sx(p.x), sy(lo), sy(hi));
                if y1.is_finite() && y2.is_finite() && (y1 - y2).abs() > 0.5 {
                    svg.line(x, y1, x, y2, color, 1.2, None);
                    svg.line(x - 4.0, y1, x + 4.0, y1, color, 1.2, None);
                    svg.line(x - 4.0, y2, x + 4.0, y2, color, 1.2, None);
                }
            }
        }
        let coords: Vec<(f64, f64)> = pts.iter().map(|p| (sx(p.x), sy(p.y))).collect();
        match s.source {
            Source::Measured => {
                svg.polyline(&coords, color, 2.0, round_dash(s.color), Some(&clip));
                for (x, y) in &coords {
                    svg.marker(marker, *x, *y, 3.5, color, false);
                }
            }
            Source::Predicted => {
                svg.polyline(&coords, color, 2.0, Some("7 4"), Some(&clip));
                for (x, y) in &coords {
                    svg.marker(marker, *x, *y, 2.5, color, true);
                }
            }
            Source::Reference => {
                for (x, y) in &coords {
                    svg.marker(marker, *x, *y, 4.5, color, true);
                }
            }
        }
        // Legend entry.
        let lx = px + pw + 20.0;
        let ly = py + 8.0 + i as f64 * 18.0;
        match s.source {
            Source::Measured => svg.line(lx, ly, lx + 26.0, ly, color, 2.0, round_dash(s.color)),
            Source::Predicted => svg.line(lx, ly, lx + 26.0, ly, color, 2.0, Some("7 4")),
            Source::Reference => {}
        }
        svg.marker(
            marker,
            lx + 13.0,
            ly,
            if s.source == Source::Reference {
                4.5
            } else {
                3.5
            },
            color,
            s.source != Source::Measured,
        );
        svg.text(
            lx + 34.0,
            ly + 4.0,
            &fit_label(&s.label, lw),
            11.0,
            Anchor::Start,
            INK,
            "",
        );
    }
    // A key to the styles when more than one source is drawn.
    let mut sources: Vec<Source> = c.series.iter().map(|s| s.source).collect();
    sources.sort();
    sources.dedup();
    if sources.len() > 1 {
        let key: Vec<&str> = sources
            .iter()
            .map(|s| match s {
                Source::Measured => "solid = measured",
                Source::Predicted => "dashed = simulated",
                Source::Reference => "open = reference",
            })
            .collect();
        for (k, line) in key.iter().enumerate() {
            let ly = py + 8.0 + c.series.len() as f64 * 18.0 + 8.0 + k as f64 * 14.0;
            svg.text(px + pw + 20.0, ly, line, 10.0, Anchor::Start, MUTED, "");
        }
    }
    if c.series.iter().all(|s| s.points.is_empty()) {
        svg.text(
            px + pw / 2.0,
            py + ph / 2.0,
            "no data",
            14.0,
            Anchor::Middle,
            MUTED,
            "",
        );
    }
    svg.finish(&c.title, standalone)
}

/// Frame, grid, ticks and labels of a two-axis plot area.
#[allow(clippy::too_many_arguments)]
fn axes(
    svg: &mut Svg,
    xa: &Axis,
    ya: &Axis,
    px: f64,
    py: f64,
    pw: f64,
    ph: f64,
    sx: &dyn Fn(f64) -> f64,
    sy: &dyn Fn(f64) -> f64,
) {
    for v in xa.minor_ticks() {
        let x = sx(v);
        svg.line(x, py + ph, x, py + ph + 3.0, MUTED, 1.0, None);
    }
    for v in ya.minor_ticks() {
        let y = sy(v);
        svg.line(px - 3.0, y, px, y, MUTED, 1.0, None);
    }
    for t in xa.ticks() {
        let x = sx(t.value);
        svg.line(x, py, x, py + ph, GRID, 1.0, None);
        svg.line(x, py + ph, x, py + ph + 6.0, INK, 1.0, None);
        svg.text(x, py + ph + 20.0, &t.label, 11.0, Anchor::Middle, INK, "");
    }
    for t in ya.ticks() {
        let y = sy(t.value);
        svg.line(px, y, px + pw, y, GRID, 1.0, None);
        svg.line(px - 6.0, y, px, y, INK, 1.0, None);
        svg.text(px - 9.0, y + 4.0, &t.label, 11.0, Anchor::End, INK, "");
    }
    svg.rect(px, py, pw, ph, "none", Some(INK));
    svg.text(
        px + pw / 2.0,
        py + ph + 44.0,
        &xa.label,
        12.5,
        Anchor::Middle,
        INK,
        "",
    );
    let (cx, cy) = (18.0, py + ph / 2.0);
    svg.text(
        cx,
        cy,
        &ya.label,
        12.5,
        Anchor::Middle,
        INK,
        &format!(r#"transform="rotate(-90 {} {})""#, n(cx), n(cy)),
    );
}

/// Viridis-like colour scale (perceptually ordered, readable in grey): stops sampled from the
/// published viridis map at 0, 1/8 … 1.
const VIRIDIS: [(f64, f64, f64); 9] = [
    (68.0, 1.0, 84.0),
    (71.0, 44.0, 122.0),
    (59.0, 81.0, 139.0),
    (44.0, 113.0, 142.0),
    (33.0, 144.0, 141.0),
    (39.0, 173.0, 129.0),
    (92.0, 200.0, 99.0),
    (170.0, 220.0, 50.0),
    (253.0, 231.0, 37.0),
];

/// Colour of `t` in 0..1 on the scale, and whether text on it should be white.
pub fn color_scale(t: f64) -> (String, bool) {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
    let (r, g, bl) = (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2));
    let luma = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * bl as f64;
    (format!("#{r:02x}{g:02x}{bl:02x}"), luma < 140.0)
}

fn heatmap_svg(h: &Heatmap, standalone: bool) -> String {
    let values: Vec<f64> = h
        .cells
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if values.is_empty() {
        (0.0, 1.0)
    } else if hi > lo {
        (lo, hi)
    } else {
        (lo - 0.5, hi + 0.5)
    };
    let bar_w = 110.0;
    let (px, py) = (LEFT + 10.0, TOP);
    let (pw, ph) = (W - px - bar_w - 20.0, H - TOP - BOTTOM);
    let nx = h.x_values.len().max(1) as f64;
    let ny = h.y_values.len().max(1) as f64;
    let (cw, ch) = (pw / nx, ph / ny);
    let mut svg = Svg::new(W, H);
    title(&mut svg, &h.title);
    for (yi, row) in h.cells.iter().enumerate() {
        for (xi, cell) in row.iter().enumerate() {
            let x = px + xi as f64 * cw;
            // First y value at the bottom, as on a chart.
            let y = py + ph - (yi + 1) as f64 * ch;
            match cell {
                Some(v) if v.is_finite() => {
                    let (fill, dark) = color_scale((v - lo) / (hi - lo));
                    svg.rect(x, y, cw, ch, &fill, Some("#ffffff"));
                    let label = format_number(*v);
                    if text_width(&label, 11.0) < cw - 4.0 && ch >= 14.0 {
                        svg.text(
                            x + cw / 2.0,
                            y + ch / 2.0 + 4.0,
                            &label,
                            11.0,
                            Anchor::Middle,
                            if dark { "#ffffff" } else { "#000000" },
                            "",
                        );
                    }
                }
                _ => {
                    svg.rect(x, y, cw, ch, "#f4f4f4", Some("#ffffff"));
                    if ch >= 14.0 {
                        svg.text(
                            x + cw / 2.0,
                            y + ch / 2.0 + 4.0,
                            "–",
                            11.0,
                            Anchor::Middle,
                            MUTED,
                            "",
                        );
                    }
                }
            }
        }
    }
    // Category labels; thinned when crowded.
    let xstep = ((text_width("000 KiB", 11.0) + 6.0) / cw).ceil().max(1.0) as usize;
    for (xi, label) in h.x_values.iter().enumerate() {
        if xi % xstep == 0 {
            svg.text(
                px + (xi as f64 + 0.5) * cw,
                py + ph + 18.0,
                label,
                11.0,
                Anchor::Middle,
                INK,
                "",
            );
        }
    }
    let ystep = (16.0 / ch).ceil().max(1.0) as usize;
    for (yi, label) in h.y_values.iter().enumerate() {
        if yi % ystep == 0 {
            svg.text(
                px - 8.0,
                py + ph - (yi as f64 + 0.5) * ch + 4.0,
                label,
                11.0,
                Anchor::End,
                INK,
                "",
            );
        }
    }
    svg.text(
        px + pw / 2.0,
        py + ph + 44.0,
        &h.x_label,
        12.5,
        Anchor::Middle,
        INK,
        "",
    );
    let (cx, cy) = (18.0, py + ph / 2.0);
    svg.text(
        cx,
        cy,
        &h.y_label,
        12.5,
        Anchor::Middle,
        INK,
        &format!(r#"transform="rotate(-90 {} {})""#, n(cx), n(cy)),
    );
    // Colour bar: stacked bands, low at the bottom.
    let (bx, bw) = (px + pw + 24.0, 18.0);
    let bands = 48;
    for b in 0..bands {
        let t0 = b as f64 / bands as f64;
        let y = py + ph - (b + 1) as f64 * ph / bands as f64;
        let (fill, _) = color_scale(t0 + 0.5 / bands as f64);
        svg.rect(bx, y, bw, ph / bands as f64 + 0.6, &fill, None);
    }
    svg.rect(bx, py, bw, ph, "none", Some(INK));
    let scale = Axis {
        label: String::new(),
        scale: Scale::Linear,
        unit: Unit::Plain,
        min: lo,
        max: hi,
    };
    let mut marks: Vec<(f64, String)> = scale
        .ticks()
        .into_iter()
        .map(|t| (t.value, t.label))
        .collect();
    // The ends of the scale are labelled too, unless a tick sits close to them.
    for end in [lo, hi] {
        if marks
            .iter()
            .all(|(v, _)| (scale.frac(*v) - scale.frac(end)).abs() > 0.07)
        {
            marks.push((end, format_number(end)));
        }
    }
    for (v, label) in marks {
        let y = py + ph - scale.frac(v) * ph;
        svg.line(bx + bw, y, bx + bw + 5.0, y, INK, 1.0, None);
        svg.text(bx + bw + 8.0, y + 4.0, &label, 10.5, Anchor::Start, INK, "");
    }
    let (cx, cy) = (W - 12.0, py + ph / 2.0);
    svg.text(
        cx,
        cy,
        &h.value_label,
        12.0,
        Anchor::Middle,
        INK,
        &format!(r#"transform="rotate(-90 {} {})""#, n(cx), n(cy)),
    );
    svg.finish(&h.title, standalone)
}

fn bars_svg(b: &BarChart, standalone: bool) -> String {
    let mut ys = vec![0.0];
    for s in &b.series {
        for (v, e) in s.values.iter().flatten() {
            ys.push(*v);
            if let Some((lo, hi)) = e {
                ys.push(*lo);
                ys.push(*hi);
            }
        }
    }
    let ya = Axis::fit(&b.y_label, Scale::Linear, Unit::Plain, ys, true);
    let lw = legend_width(b.series.iter().map(|s| s.label.clone()));
    // Category labels wider than their group are set on a slant below the axis, with room
    // made for them under the plot.
    let group = (W - LEFT - lw - 24.0) / b.categories.len().max(1) as f64;
    let widest = b
        .categories
        .iter()
        .map(|c| text_width(c, 11.0))
        .fold(0.0, f64::max);
    let slant = widest > group - 6.0;
    let drop = if slant { widest * 0.71 } else { 0.0 };
    let height = H.max(TOP + (b.series.len() as f64) * 18.0 + 40.0) + drop;
    let (px, py) = (LEFT, TOP);
    let (pw, ph) = (W - LEFT - lw - 24.0, height - TOP - BOTTOM - drop);
    let sy = |v: f64| py + ph - ya.frac(v) * ph;
    let mut svg = Svg::new(W, height);
    title(&mut svg, &b.title);
    for t in ya.ticks() {
        let y = sy(t.value);
        svg.line(px, y, px + pw, y, GRID, 1.0, None);
        svg.line(px - 6.0, y, px, y, INK, 1.0, None);
        svg.text(px - 9.0, y + 4.0, &t.label, 11.0, Anchor::End, INK, "");
    }
    let ncat = b.categories.len().max(1) as f64;
    let gw = pw / ncat;
    let nser = b.series.len().max(1) as f64;
    let bw = (gw * 0.8 / nser).min(40.0);
    for (ci, cat) in b.categories.iter().enumerate() {
        let gx = px + ci as f64 * gw + (gw - bw * nser) / 2.0;
        for (si, s) in b.series.iter().enumerate() {
            let color = PALETTE[si % PALETTE.len()];
            if let Some(Some((v, err))) = s.values.get(ci) {
                let x = gx + si as f64 * bw;
                let (y0, y1) = (sy(0.0), sy(*v));
                svg.rect(x + 1.0, y1.min(y0), bw - 2.0, (y0 - y1).abs(), color, None);
                if let Some((lo, hi)) = err {
                    let (cx, a, c) = (x + bw / 2.0, sy(*lo), sy(*hi));
                    if (a - c).abs() > 0.5 {
                        svg.line(cx, a, cx, c, INK, 1.2, None);
                        svg.line(cx - 3.0, a, cx + 3.0, a, INK, 1.2, None);
                        svg.line(cx - 3.0, c, cx + 3.0, c, INK, 1.2, None);
                    }
                }
            }
        }
        let (lx, ly) = (px + (ci as f64 + 0.5) * gw, py + ph + 20.0);
        if slant {
            let (lx, ly) = (lx + 4.0, ly - 6.0);
            svg.text(
                lx,
                ly,
                cat,
                11.0,
                Anchor::End,
                INK,
                &format!(r#"transform="rotate(-45 {} {})""#, n(lx), n(ly)),
            );
        } else {
            svg.text(lx, ly, cat, 11.0, Anchor::Middle, INK, "");
        }
    }
    svg.rect(px, py, pw, ph, "none", Some(INK));
    svg.text(
        px + pw / 2.0,
        py + ph + 44.0 + drop,
        &b.x_label,
        12.5,
        Anchor::Middle,
        INK,
        "",
    );
    let (cx, cy) = (18.0, py + ph / 2.0);
    svg.text(
        cx,
        cy,
        &b.y_label,
        12.5,
        Anchor::Middle,
        INK,
        &format!(r#"transform="rotate(-90 {} {})""#, n(cx), n(cy)),
    );
    for (si, s) in b.series.iter().enumerate() {
        let lx = px + pw + 20.0;
        let ly = py + 8.0 + si as f64 * 18.0;
        svg.rect(lx, ly - 6.0, 20.0, 12.0, PALETTE[si % PALETTE.len()], None);
        svg.text(
            lx + 28.0,
            ly + 4.0,
            &fit_label(&s.label, lw),
            11.0,
            Anchor::Start,
            INK,
            "",
        );
    }
    svg.finish(&b.title, standalone)
}
