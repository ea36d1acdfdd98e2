//! Which figures a campaign gets, decided from what it varied:
//!
//! - `bs` varies → rate against block size, log–log, one curve per remaining configuration
//!   (seed 000 Figures 2–7);
//! - `rwmixread` and `iodepth` vary → IOPS and latency against read %, one curve per queue
//!   depth (seed 004);
//! - `level` and `chunk` vary → bars per level in groups by chunk size (seed 003);
//! - two numeric axes such as threads × buffer or numjobs × bs → a heatmap (seed 002 Fig. 12);
//! - convergence steps → rate against total transferred (seed 000 Fig. 26);
//! - otherwise rate against the one numeric parameter that varies, or bars per value.
//!
//! Measured, simulated and reference points with the same parameters share a colour and are
//! drawn solid, dashed and as open markers. Repetitions give error bars (min–max).

use std::collections::BTreeMap;

use crate::axis::{format_bytes, Scale, Unit};
use crate::chart::{
    AxisSpec, BarChart, BarSeries, Figure, HLine, Heatmap, LineChart, Pt, Series, Source,
};
use crate::points::{
    campaigns, cmp_values, is_percent_param, is_size_param, label, reference_amounts, show_value,
    value_number, Campaign, Point,
};
use crate::rows::{ConvergenceStep, RunRow};

/// A figure chosen for the report, with its caption.
#[derive(Debug, Clone)]
pub struct FigureSpec {
    /// File stem, unique within the report: `fig-01-rate-vs-bs`.
    pub id: String,
    pub campaign: String,
    /// What kind of figure, e.g. `rate-vs-bs` (stable, for tests and file names).
    pub kind: String,
    pub figure: Figure,
    pub caption: String,
}

/// A metric as the database names it, with its axis label.
struct Metric {
    name: &'static str,
    label: &'static str,
    words: &'static str,
}

const MB_S: Metric = Metric {
    name: "mb_s",
    label: "rate (MB/s, 10⁶ bytes/s)",
    words: "median rate in MB/s",
};
const IOPS: Metric = Metric {
    name: "iops",
    label: "IOPS (I/O operations per second)",
    words: "median IOPS",
};
const LAT: Metric = Metric {
    name: "lat_mean_us",
    label: "mean latency (µs)",
    words: "median of the mean latency in µs",
};

/// Most curves one chart carries before it is split into several by one parameter.
const MAX_SERIES: usize = 10;

/// Choose the figures for all campaigns, in campaign order, numbered from 1.
pub fn select_figures(rows: &[RunRow], conv: &[ConvergenceStep]) -> Vec<FigureSpec> {
    let mut out: Vec<FigureSpec> = Vec::new();
    let cs = campaigns(rows);
    for c in &cs {
        out.extend(campaign_figures(c));
        out.extend(convergence_figures(&c.name, conv, Some(c)));
    }
    // Convergence of campaigns without run rows still gets its curve.
    let mut seen: Vec<&str> = cs.iter().map(|c| c.name.as_str()).collect();
    for s in conv {
        if !seen.contains(&s.campaign.as_str()) {
            seen.push(&s.campaign);
            out.extend(convergence_figures(&s.campaign, conv, None));
        }
    }
    for (i, f) in out.iter_mut().enumerate() {
        f.id = format!("fig-{:02}-{}", i + 1, f.kind);
    }
    out
}

fn spec(c: &str, kind: &str, figure: Figure, caption: String) -> FigureSpec {
    FigureSpec {
        id: String::new(),
        campaign: c.to_string(),
        kind: kind.to_string(),
        figure,
        caption,
    }
}

/// The figures for one campaign's points.
pub fn campaign_figures(c: &Campaign) -> Vec<FigureSpec> {
    let mut out = Vec::new();
    let has = |p: &str| c.varying.iter().any(|v| v == p);
    let numeric: Vec<&String> = c.varying.iter().filter(|p| c.is_numeric(p)).collect();

    if has("bs") && c.is_numeric("bs") {
        out.extend(lines(
            c,
            "bs",
            &MB_S,
            "rate-vs-bs",
            "Rate against block size",
        ));
    }
    if has("rwmixread") && has("iodepth") && c.is_numeric("rwmixread") {
        out.extend(lines(
            c,
            "rwmixread",
            &IOPS,
            "iops-vs-read",
            "IOPS against read percentage",
        ));
        out.extend(lines(
            c,
            "rwmixread",
            &LAT,
            "latency-vs-read",
            "Latency against read percentage",
        ));
    }
    if has("level") && has("chunk") {
        out.extend(bars(c, "chunk", "level", "bars-level-chunk"));
    }
    if let Some((x, y)) = heatmap_axes(c, &numeric) {
        out.extend(heatmaps(c, &x, &y));
    }
    if out.is_empty() {
        if let Some(x) = numeric.first() {
            let title = format!("Rate against {}", param_words(x));
            out.extend(lines(c, x, &MB_S, &format!("rate-vs-{}", slug(x)), &title));
        } else if let Some(cat) = c.varying.first() {
            out.extend(bars(c, cat, "", &format!("bars-{}", slug(cat))));
        } else if !c.points.is_empty() {
            // One configuration: a bar per source, so that measured and predicted compare.
            out.extend(bars(c, "", "", "bars-sources"));
        }
    }
    out
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// What a parameter is called on an axis: the field's words, with fio's name beside them.
pub fn param_title(param: &str) -> String {
    let words = param_words(param);
    if words == param {
        words
    } else {
        format!("{words} ({param})")
    }
}

/// A parameter in the field's words: `bs` → block size.
pub fn param_words(param: &str) -> String {
    match param {
        "bs" => "block size",
        "iodepth" => "queue depth",
        "numjobs" => "jobs",
        "rwmixread" => "reads",
        "rwmixwrite" => "writes",
        "chunk" => "chunk size",
        "size" => "total size",
        "buffer" => "buffer size",
        "level" => "RAID level",
        "threads" => "threads",
        _ => param,
    }
    .to_string()
}

fn axis_title(param: &str) -> String {
    if is_size_param(param) {
        format!("{}, bytes (binary units)", param_title(param))
    } else if is_percent_param(param) {
        format!("{}, %", param_title(param))
    } else {
        param_title(param)
    }
}

fn axis_for(param: &str, c: &Campaign) -> AxisSpec {
    if is_size_param(param)
        || c.distinct(param)
            .iter()
            .any(|v| v.ends_with(|ch: char| ch.is_ascii_alphabetic()))
    {
        AxisSpec {
            label: axis_title(param),
            scale: Scale::Log,
            unit: Unit::Bytes,
            zero: false,
        }
    } else if is_percent_param(param) {
        AxisSpec {
            label: axis_title(param),
            scale: Scale::Linear,
            unit: Unit::Percent,
            zero: true,
        }
    } else {
        let vals: Vec<f64> = c
            .distinct(param)
            .iter()
            .filter_map(|v| value_number(param, v))
            .collect();
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let log = lo > 0.0 && hi / lo >= 16.0;
        AxisSpec {
            label: axis_title(param),
            scale: if log { Scale::Log } else { Scale::Linear },
            unit: Unit::Plain,
            zero: false,
        }
    }
}

/// Split the points into facets (one chart each) and, within a facet, into curves keyed by
/// the remaining varying parameters. Facets split on the parameter with the fewest values
/// while a chart would carry more than MAX_SERIES curves.
fn facets<'a>(c: &'a Campaign, used: &[&str]) -> Vec<(Vec<String>, Vec<String>, Vec<&'a Point>)> {
    facets_max(c, used, MAX_SERIES)
}

/// [`facets`] with a given most curves per chart; 1 puts every remaining parameter in facets.
fn facets_max<'a>(
    c: &'a Campaign,
    used: &[&str],
    max_series: usize,
) -> Vec<(Vec<String>, Vec<String>, Vec<&'a Point>)> {
    let mut facet_keys: Vec<String> = Vec::new();
    // A parameter that follows from the others (a simulated system's target from its
    // `system`) tells the points on a chart apart no further: it is neither series nor facet.
    // `target` is looked at first, so that of the two the system's name stays.
    let follows = |k: &str, from: &[&str]| {
        let mut seen: BTreeMap<Vec<&str>, &str> = BTreeMap::new();
        !from.is_empty()
            && c.points.iter().all(|p| {
                let key: Vec<&str> = from.iter().map(|u| p.param(u)).collect();
                *seen.entry(key).or_insert(p.param(k)) == p.param(k)
            })
    };
    let mut series_keys: Vec<String> = c
        .varying
        .iter()
        .filter(|v| !used.contains(&v.as_str()))
        .cloned()
        .collect();
    let mut order: Vec<String> = series_keys.clone();
    order.sort_by_key(|k| k != "target");
    for k in order {
        let from: Vec<&str> = used
            .iter()
            .copied()
            .chain(series_keys.iter().map(String::as_str).filter(|o| *o != k))
            .collect();
        if follows(&k, &from) {
            series_keys.retain(|o| *o != k);
        }
    }
    let combos = |keys: &[String]| -> usize {
        c.points
            .iter()
            .map(|p| {
                keys.iter()
                    .map(|k| p.param(k).to_string())
                    .collect::<Vec<_>>()
            })
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    // One parameter with many values stays in one chart (colours cycle with dash patterns)
    // unless every remaining parameter must become a facet.
    while (series_keys.len() > 1 || (max_series == 1 && !series_keys.is_empty()))
        && combos(&series_keys) > max_series
    {
        let (i, _) = series_keys
            .iter()
            .enumerate()
            .min_by_key(|(_, k)| c.distinct(k).len())
            .expect("non-empty");
        facet_keys.push(series_keys.remove(i));
    }
    let mut groups: BTreeMap<Vec<String>, Vec<&Point>> = BTreeMap::new();
    let mut order: Vec<Vec<String>> = Vec::new();
    for p in &c.points {
        let key: Vec<String> = facet_keys.iter().map(|k| p.param(k).to_string()).collect();
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(p);
    }
    order
        .into_iter()
        .map(|k| {
            (
                facet_keys.clone(),
                series_keys.clone(),
                groups.remove(&k).unwrap_or_default(),
            )
        })
        .collect()
}

fn facet_suffix(keys: &[String], pts: &[&Point]) -> String {
    match pts.first() {
        Some(p) if !keys.is_empty() => format!(" ({})", label(p, keys)),
        _ => String::new(),
    }
}

fn reps_note(pts: &[&Point], metric: &str) -> String {
    let reps: Vec<u32> = pts
        .iter()
        .filter_map(|p| p.stats(metric))
        .map(|s| s.n)
        .collect();
    let max = reps.iter().copied().max().unwrap_or(0);
    let min = reps.iter().copied().min().unwrap_or(0);
    match (min, max) {
        (_, 0) => "No values for this metric.".into(),
        (_, 1) => "One run per point (no error bars).".into(),
        (a, b) if a == b => {
            format!("Median of {b} repetitions per point; error bars span min–max.")
        }
        (a, b) => format!("Median of {a}–{b} repetitions per point; error bars span min–max."),
    }
}

/// What the caption says of the sources a figure draws (`present`, any order): nothing for
/// measurements alone, else how each source present is drawn, naming no source the figure
/// lacks. `lines`: a line chart (styles per source), else bars (labelled by source).
fn sources_note(present: &[Source], lines: bool) -> String {
    let mut present: Vec<Source> = present.to_vec();
    present.sort();
    present.dedup();
    match present.as_slice() {
        [] | [Source::Measured] => String::new(),
        [Source::Predicted] => " All points are simulated.".into(),
        [Source::Reference] => " All points are reference values.".into(),
        many if lines => {
            let parts: Vec<&str> = many
                .iter()
                .map(|s| match s {
                    Source::Measured => "solid lines: measured",
                    Source::Predicted => "dashed: simulated",
                    Source::Reference => "open markers: reference",
                })
                .collect();
            let text = parts.join("; ");
            let mut chars = text.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase());
            format!(
                " {}{}.",
                first.into_iter().collect::<String>(),
                chars.as_str()
            )
        }
        many => format!(
            " Each bar's label names its source ({}).",
            many.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// What the caption says of a reference measured with another amount than the sweep's
/// points (`size` 8 GiB beside a sweep at 256 MiB): its amount, so that a gap between the
/// curves is not read as the model's alone.
fn amount_note(pts: &[&Point]) -> String {
    reference_amounts(pts)
        .iter()
        .map(|(k, values)| {
            let shown: Vec<String> = values.iter().map(|v| show_value(k, v)).collect();
            format!(
                " Reference values were measured at {} {} per point, which this sweep's points did not set.",
                param_title(k),
                shown.join(" or ")
            )
        })
        .collect()
}

/// Line charts of `metric` against `x`, one curve per configuration of the other varying
/// parameters (and source).
fn lines(c: &Campaign, x: &str, metric: &Metric, kind: &str, what: &str) -> Vec<FigureSpec> {
    let xaxis = axis_for(x, c);
    let mut out = Vec::new();
    for (fkeys, skeys, pts) in facets(c, &[x]) {
        // Colour per configuration, shared across sources.
        let mut configs: Vec<String> = Vec::new();
        let mut curves: BTreeMap<(usize, Source), Vec<Pt>> = BTreeMap::new();
        let mut ordered: Vec<&Point> = pts.clone();
        ordered.sort_by(|a, b| {
            for k in &skeys {
                let o = cmp_values(k, a.param(k), b.param(k));
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        for p in ordered {
            let Some(xv) = value_number(x, p.param(x)) else {
                continue;
            };
            let Some(s) = p.stats(metric.name) else {
                continue;
            };
            let cfg = label(p, &skeys);
            let ci = configs.iter().position(|k| *k == cfg).unwrap_or_else(|| {
                configs.push(cfg.clone());
                configs.len() - 1
            });
            let (lo, hi) = if s.n > 1 {
                (Some(s.min), Some(s.max))
            } else {
                (None, None)
            };
            curves.entry((ci, p.source)).or_default().push(Pt {
                x: xv,
                y: s.median,
                lo,
                hi,
            });
        }
        if curves.is_empty() {
            continue;
        }
        let multi_source = curves
            .keys()
            .map(|(_, s)| *s)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 1;
        let drawn: Vec<Source> = curves.keys().map(|(_, s)| *s).collect();
        let series: Vec<Series> = curves
            .into_iter()
            .map(|((ci, src), points)| {
                let mut l = configs[ci].clone();
                if multi_source || src != Source::Measured {
                    l = if l == "all" {
                        src.name().to_string()
                    } else {
                        format!("{l} ({})", src.name())
                    };
                }
                Series {
                    label: l,
                    color: ci,
                    source: src,
                    points,
                }
            })
            .collect();
        let ys: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.y))
            .filter(|v| *v > 0.0)
            .collect();
        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Rates against block size are log–log (seed 000); elsewhere log only for a wide range.
        let ylog = (x == "bs" && metric.name == "mb_s") || (lo > 0.0 && hi / lo > 30.0);
        let yaxis = AxisSpec {
            label: metric.label.to_string(),
            scale: if ylog { Scale::Log } else { Scale::Linear },
            unit: Unit::Plain,
            zero: !ylog,
        };
        let suffix = facet_suffix(&fkeys, &pts);
        let title = format!("{what}{suffix}");
        let curves_by = if skeys.is_empty() {
            String::from("one curve")
        } else {
            format!(
                "one curve per {}",
                skeys
                    .iter()
                    .map(|k| param_title(k))
                    .collect::<Vec<_>>()
                    .join(" × ")
            )
        };
        let scales = match (xaxis.scale, ylog) {
            (Scale::Log, true) => "log–log axes",
            (Scale::Log, false) => "log x axis",
            (Scale::Linear, true) => "log y axis",
            (Scale::Linear, false) => "linear axes",
        };
        let caption = format!(
            "{what}{suffix}: {} against {}, {scales}, {curves_by}. {}{}{}",
            metric.words,
            param_title(x),
            reps_note(&pts, metric.name),
            sources_note(&drawn, true),
            amount_note(&pts)
        );
        let chart = LineChart {
            title,
            x: xaxis.clone(),
            y: yaxis,
            series,
            hlines: Vec::new(),
        };
        out.push(spec(&c.name, kind, Figure::Line(chart), caption));
    }
    out
}

/// Grouped bars of MB/s: groups by `cat` (empty: one group), one bar per value of `bar`
/// (empty: per remaining configuration), facets by what else varies.
fn bars(c: &Campaign, cat: &str, bar: &str, kind: &str) -> Vec<FigureSpec> {
    let used: Vec<&str> = [cat, bar].into_iter().filter(|s| !s.is_empty()).collect();
    let mut out = Vec::new();
    for (fkeys, skeys, pts) in facets(c, &used) {
        let mut bar_keys: Vec<String> = skeys.clone();
        if !bar.is_empty() {
            bar_keys.insert(0, bar.to_string());
        }
        let mut categories: Vec<String> = if cat.is_empty() {
            vec![String::new()]
        } else {
            c.distinct(cat)
        };
        categories.retain(|v| pts.iter().any(|p| cat.is_empty() || p.param(cat) == v));
        let mut series_labels: Vec<(String, Source)> = Vec::new();
        let mut values: BTreeMap<(usize, usize), (f64, Option<crate::chart::ErrorBar>)> =
            BTreeMap::new();
        let mut ordered = pts.clone();
        ordered.sort_by(|a, b| {
            for k in &bar_keys {
                let o = cmp_values(k, a.param(k), b.param(k));
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            a.source.cmp(&b.source)
        });
        for p in ordered {
            let Some(s) = p.stats(MB_S.name) else {
                continue;
            };
            let key = (label(p, &bar_keys), p.source);
            let si = series_labels
                .iter()
                .position(|k| *k == key)
                .unwrap_or_else(|| {
                    series_labels.push(key.clone());
                    series_labels.len() - 1
                });
            let ci = if cat.is_empty() {
                0
            } else {
                categories
                    .iter()
                    .position(|v| v == p.param(cat))
                    .unwrap_or(0)
            };
            values.insert((si, ci), (s.median, (s.n > 1).then_some((s.min, s.max))));
        }
        if values.is_empty() {
            continue;
        }
        let multi_source = series_labels
            .iter()
            .map(|(_, s)| *s)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 1;
        let drawn: Vec<Source> = series_labels.iter().map(|(_, s)| *s).collect();
        let series: Vec<BarSeries> = series_labels
            .iter()
            .enumerate()
            .map(|(si, (l, src))| {
                let l = if bar_keys.is_empty() {
                    src.name().to_string()
                } else if multi_source || *src != Source::Measured {
                    format!("{l} ({})", src.name())
                } else {
                    l.clone()
                };
                BarSeries {
                    label: l,
                    values: (0..categories.len())
                        .map(|ci| values.get(&(si, ci)).copied())
                        .collect(),
                }
            })
            .collect();
        let size_cat = !cat.is_empty() && is_size_param(cat);
        let cat_labels: Vec<String> = categories
            .iter()
            .map(|v| match value_number(cat, v) {
                Some(b) if size_cat => format_bytes(b),
                _ => v.clone(),
            })
            .collect();
        let suffix = facet_suffix(&fkeys, &pts);
        let what = match (cat.is_empty(), bar.is_empty()) {
            (false, false) => format!("Rate per {} and {}", param_words(bar), param_words(cat)),
            (false, true) => format!("Rate per {}", param_words(cat)),
            _ => "Rate".to_string(),
        };
        let x_label = if cat.is_empty() {
            String::new()
        } else {
            axis_title(cat)
        };
        let caption = format!(
            "{what}{suffix}: median MB/s per bar. {}{}{}",
            reps_note(&pts, MB_S.name),
            sources_note(&drawn, false),
            amount_note(&pts)
        );
        let chart = BarChart {
            title: format!("{what}{suffix}"),
            x_label,
            y_label: MB_S.label.to_string(),
            categories: cat_labels,
            series,
        };
        out.push(spec(&c.name, kind, Figure::Bars(chart), caption));
    }
    out
}

/// Two numeric parameters to draw a heatmap over, if the campaign has them: a size-like one
/// across and a count-like one up (threads × buffer, numjobs × bs, iodepth × bs). Read % ×
/// queue depth is left to its line charts. A parameter with only two values is no axis for
/// a heatmap: it reads better as two lines.
fn heatmap_axes(c: &Campaign, numeric: &[&String]) -> Option<(String, String)> {
    let candidates: Vec<&String> = numeric
        .iter()
        .copied()
        .filter(|p| c.distinct(p).iter().filter(|v| !v.is_empty()).count() >= 3)
        .collect();
    let sizes: Vec<&String> = candidates
        .iter()
        .copied()
        .filter(|p| is_size_param(p))
        .collect();
    let counts: Vec<&String> = candidates
        .iter()
        .copied()
        .filter(|p| !is_size_param(p) && !is_percent_param(p))
        .collect();
    let (x, y) = match (sizes.as_slice(), counts.as_slice()) {
        ([s, ..], [n, ..]) => ((*s).clone(), (*n).clone()),
        ([a, b, ..], []) => ((*a).clone(), (*b).clone()),
        ([], [a, b, ..]) => ((*a).clone(), (*b).clone()),
        _ => return None,
    };
    // Each cell holds one configuration: what else varies makes one heatmap each, a few at most.
    let f = facets_max(c, &[&x, &y], 1);
    let cells = c.distinct(&x).len() * c.distinct(&y).len();
    (f.len() <= MAX_HEATMAPS && cells >= 4).then_some((x, y))
}

/// Most heatmaps one campaign gets (one per configuration of the other parameters).
const MAX_HEATMAPS: usize = 6;

fn heatmaps(c: &Campaign, x: &str, y: &str) -> Vec<FigureSpec> {
    let mut out = Vec::new();
    for (fkeys, _, pts) in facets_max(c, &[x, y], 1) {
        for src in &c.sources {
            let mine: Vec<&Point> = pts.iter().copied().filter(|p| p.source == *src).collect();
            if mine.is_empty() {
                continue;
            }
            let xs = c.distinct(x);
            let ys = c.distinct(y);
            let mut cells = vec![vec![None; xs.len()]; ys.len()];
            for p in &mine {
                let (Some(xi), Some(yi)) = (
                    xs.iter().position(|v| v == p.param(x)),
                    ys.iter().position(|v| v == p.param(y)),
                ) else {
                    continue;
                };
                cells[yi][xi] = p.stats(MB_S.name).map(|s| s.median);
            }
            if cells.iter().flatten().all(Option::is_none) {
                continue;
            }
            let fmt = |param: &str, v: &String| match value_number(param, v) {
                Some(b) if is_size_param(param) => format_bytes(b),
                _ => v.clone(),
            };
            let mut suffix = facet_suffix(&fkeys, &mine);
            if c.sources.len() > 1 {
                suffix = format!("{suffix} [{}]", src.name());
            }
            let title = format!("Rate over {} × {}{suffix}", param_words(x), param_words(y));
            let caption = format!(
                "{title}: median MB/s of each point as a colour (scale at right; value in each cell, – where not run). {}",
                reps_note(&mine, MB_S.name)
            );
            let h = Heatmap {
                title,
                x_label: axis_title(x),
                y_label: axis_title(y),
                x_values: xs.iter().map(|v| fmt(x, v)).collect(),
                y_values: ys.iter().map(|v| fmt(y, v)).collect(),
                cells,
                value_label: MB_S.label.to_string(),
            };
            out.push(spec(&c.name, "heatmap", Figure::Heatmap(h), caption));
        }
    }
    out
}

/// Rate against total transferred for every point of a campaign that grew its transfer
/// until the rate settled; the last step's rate is marked as the sustained rate.
fn convergence_figures(
    campaign: &str,
    conv: &[ConvergenceStep],
    c: Option<&Campaign>,
) -> Vec<FigureSpec> {
    let mut by_point: BTreeMap<u64, Vec<&ConvergenceStep>> = BTreeMap::new();
    for s in conv.iter().filter(|s| s.campaign == campaign) {
        by_point.entry(s.point).or_default().push(s);
    }
    if by_point.is_empty() {
        return Vec::new();
    }
    let mut series = Vec::new();
    let mut hlines = Vec::new();
    for (i, (point, steps)) in by_point.iter_mut().enumerate() {
        steps.sort_by_key(|s| s.step);
        let found = c.and_then(|c| {
            c.points
                .iter()
                .find(|p| p.point == *point && p.source != Source::Reference)
        });
        let name = found
            .zip(c)
            .map(|(p, c)| label(p, &c.varying))
            .filter(|l| l != "all")
            .unwrap_or_else(|| format!("point {point}"));
        // Drawn as its point's runs are: a simulated search dashed, as the other figures
        // draw predictions, not solid as a measurement.
        let source = found.map_or(Source::Measured, |p| p.source);
        if let Some(last) = steps.last() {
            if by_point_len_is_one(conv, campaign) {
                hlines.push(HLine {
                    y: last.mb_s,
                    label: format!("sustained ≈ {:.1} MB/s", last.mb_s),
                });
            }
        }
        series.push(Series {
            label: name,
            color: i,
            source,
            points: steps
                .iter()
                .map(|s| Pt::new(s.total_bytes as f64, s.mb_s))
                .collect(),
        });
    }
    let chart = LineChart {
        title: "Rate against total transferred (convergence)".into(),
        x: AxisSpec {
            label: "total transferred, bytes (binary units)".into(),
            scale: Scale::Log,
            unit: Unit::Bytes,
            zero: false,
        },
        y: AxisSpec {
            label: MB_S.label.into(),
            scale: Scale::Linear,
            unit: Unit::Plain,
            zero: true,
        },
        series,
        hlines,
    };
    let caption = "Rate against total transferred: each point's transfer grew step by step until the rate changed by less than the \
                   tolerance; the last step is the sustained rate (seed 000's method)."
        .to_string();
    vec![spec(campaign, "convergence", Figure::Line(chart), caption)]
}

fn by_point_len_is_one(conv: &[ConvergenceStep], campaign: &str) -> bool {
    let mut points: Vec<u64> = conv
        .iter()
        .filter(|s| s.campaign == campaign)
        .map(|s| s.point)
        .collect();
    points.sort_unstable();
    points.dedup();
    points.len() == 1
}
