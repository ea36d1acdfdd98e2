//! The report page: one self-contained `index.html` (inline SVG and CSS, no script, no
//! external URL) that reads well opened straight from disk.

use std::fmt::Write as _;

use crate::axis::{format_bytes, format_number};
use crate::chart::Source;
use crate::limits::LimitsTable;
use crate::points::{campaigns, is_size_param, value_number, Campaign};
use crate::rows::RunRow;
use crate::select::FigureSpec;
use crate::svg::esc;
use crate::ReportMeta;

/// A figure as placed on the page: its spec, inline SVG and the files beside the page.
pub struct PlacedFigure<'a> {
    pub spec: &'a FigureSpec,
    pub inline_svg: String,
    pub svg_file: String,
    pub png_file: Option<String>,
}

/// The metric a campaign's spread is judged on when its experiment names none.
pub const DEFAULT_SPREAD_METRIC: &str = "mb_s";

const CSS: &str = r#"
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif; color: #222; background: #fff;
       margin: 0 auto; padding: 1.5rem 2rem 3rem; max-width: 1100px; line-height: 1.45; }
h1 { font-size: 1.7rem; margin: 0 0 .3rem; }
h2 { font-size: 1.3rem; margin-top: 2.4rem; border-bottom: 2px solid #0072B2; padding-bottom: .2rem; }
h3 { font-size: 1.05rem; margin-top: 1.6rem; }
.meta { color: #555; font-size: .92rem; }
code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: .88em; background: #f3f3f3; padding: 0 .25em; border-radius: 3px; }
figure { margin: 1.4rem 0; padding: .6rem; border: 1px solid #ddd; border-radius: 6px; background: #fff; }
figure svg { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { font-size: .9rem; color: #333; margin-top: .4rem; }
table { border-collapse: collapse; font-size: .84rem; margin: .6rem 0 1rem; }
th, td { border: 1px solid #d4d4d4; padding: .18rem .5rem; text-align: right; white-space: nowrap; }
th { background: #f0f4f8; }
td.t, th.t { text-align: left; }
tr.flag td { background: #fff4e5; }
tr.bound td { background: #e8f4ea; font-weight: bold; }
.scroll { overflow-x: auto; }
dl.env { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; font-size: .88rem; }
dl.env dt { color: #555; }
dl.env dd { margin: 0; font-family: "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-all; }
nav ul { columns: 2; font-size: .92rem; }
.note { background: #f6f6f6; border-left: 4px solid #999; padding: .4rem .8rem; font-size: .9rem; }
"#;

/// The whole page.
pub fn page(
    meta: &ReportMeta,
    runs: &[RunRow],
    figures: &[PlacedFigure],
    limits: &[LimitsTable],
) -> String {
    let title = meta
        .title
        .clone()
        .unwrap_or_else(|| "raidlab report".to_string());
    let cs = campaigns(runs);
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(meta.generator.as_deref().unwrap_or("raidlab")),
        esc(&title),
        esc(&title)
    );
    let mut line = Vec::new();
    if let Some(g) = &meta.generator {
        line.push(format!("Written by {}", esc(g)));
    }
    if let Some(c) = &meta.command {
        line.push(format!("with <code>{}</code>", esc(c)));
    }
    line.push(format!(
        "{} runs in {} campaign(s), {} figure(s)",
        runs.len(),
        cs.len(),
        figures.len()
    ));
    let _ = writeln!(h, "<p class=\"meta\">{}.</p>", line.join(" "));
    let _ = writeln!(
        h,
        "<p class=\"meta\">Units: MB/s is decimal (10⁶ bytes per second); sizes in KiB, MiB, GiB are binary (2¹⁰, 2²⁰, 2³⁰ bytes). \
         Latencies are in microseconds. Points whose spread ((max − min) / median) exceeds their experiment's <code>[repeat] spread_threshold</code> are highlighted.</p>"
    );
    for n in &meta.notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", esc(n));
    }
    if runs.is_empty() && figures.is_empty() {
        let _ = writeln!(h, "<p class=\"note\">The database holds no runs yet: run <code>raidlab sweep EXPERIMENT.toml</code> first.</p>");
    }

    // Contents.
    if cs.len() > 1 || !limits.is_empty() {
        h.push_str("<nav><h2>Contents</h2><ul>\n");
        for (i, c) in cs.iter().enumerate() {
            let _ = writeln!(
                h,
                "<li><a href=\"#campaign-{}\">{}</a></li>",
                i + 1,
                esc(&campaign_title(c))
            );
        }
        if !limits.is_empty() {
            h.push_str("<li><a href=\"#limits\">Limits: bounds against achieved rates</a></li>\n");
        }
        h.push_str("</ul></nav>\n");
    }

    let mut number = 0;
    let mut placed_campaigns: Vec<&str> = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        placed_campaigns.push(&c.name);
        let _ = writeln!(
            h,
            "<section id=\"campaign-{}\">\n<h2>{}</h2>",
            i + 1,
            esc(&campaign_title(c))
        );
        campaign_header(&mut h, meta, c);
        for f in figures.iter().filter(|f| f.spec.campaign == c.name) {
            number += 1;
            figure(&mut h, meta, f, number);
        }
        points_table(&mut h, meta, c);
        h.push_str("</section>\n");
    }
    // Figures of campaigns that have no run rows (convergence only).
    for f in figures
        .iter()
        .filter(|f| !placed_campaigns.contains(&f.spec.campaign.as_str()))
    {
        number += 1;
        figure(&mut h, meta, f, number);
    }
    if !limits.is_empty() {
        limits_section(&mut h, limits);
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn campaign_title(c: &Campaign) -> String {
    if c.experiment.is_empty() || c.experiment == c.name {
        format!("Campaign {}", c.name)
    } else {
        format!("{} — campaign {}", c.experiment, c.name)
    }
}

fn campaign_header(h: &mut String, meta: &ReportMeta, c: &Campaign) {
    let cm = meta.campaigns.get(&c.name);
    if let Some(d) = cm.map(|m| m.description.trim()).filter(|d| !d.is_empty()) {
        let _ = writeln!(h, "<p>{}</p>", esc(d));
    }
    if let Some(cmd) = cm.map(|m| m.command.trim()).filter(|d| !d.is_empty()) {
        // A sweep of simulated systems measured nothing.
        let did = if c.sources.contains(&Source::Measured) {
            "Measured"
        } else if c.sources.contains(&Source::Predicted) {
            "Simulated"
        } else {
            "Run"
        };
        let _ = writeln!(
            h,
            "<p class=\"meta\">{did} with <code>{}</code></p>",
            esc(cmd)
        );
    }
    // An interrupted sweep: fewer points stored than the experiment defines.
    let stored = stored_points(c);
    let incomplete = cm
        .and_then(|m| m.points_defined)
        .filter(|&defined| stored < defined);
    if let Some(defined) = incomplete {
        let _ = writeln!(
            h,
            "<p class=\"note\"><b>incomplete: {stored} of {defined} points stored</b> (the sweep did not finish: run <code>raidlab sweep</code> again to complete it); what looks fixed or missing below may only be what ran so far.</p>"
        );
    }
    let targets: Vec<&str> = {
        let mut t: Vec<&str> = c.points.iter().map(|p| p.target.as_str()).collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let sources: Vec<&str> = c.sources.iter().map(|s| s.name()).collect();
    let _ = writeln!(
        h,
        "<p class=\"meta\">{} point(s); varied: {}; source(s): {}; target(s): {}.</p>",
        c.points.len(),
        if c.varying.is_empty() {
            "nothing".to_string()
        } else {
            c.varying
                .iter()
                .map(|v| esc(v))
                .collect::<Vec<_>>()
                .join(", ")
        },
        sources.join(", "),
        targets
            .iter()
            .map(|t| format!("<code>{}</code>", esc(t)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // Parameters that are the same for every point.
    if let Some(first) = c.points.first() {
        let fixed: Vec<String> = first
            .params
            .iter()
            .filter(|(k, _)| !c.varying.contains(k))
            .filter(|(k, v)| c.points.iter().all(|p| p.params.get(*k) == Some(v)))
            .map(|(k, v)| format!("{}={}", esc(k), esc(v)))
            .collect();
        if !fixed.is_empty() {
            let _ = writeln!(
                h,
                "<p class=\"meta\">{}: <code>{}</code></p>",
                if incomplete.is_some() {
                    "The same in every stored point"
                } else {
                    "Fixed"
                },
                fixed.join(" ")
            );
        }
    }
    if let Some(env) = cm.map(|m| &m.environment).filter(|e| !e.is_empty()) {
        h.push_str("<h3>Environment</h3>\n<dl class=\"env\">\n");
        for (k, v) in env {
            let _ = writeln!(h, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
        }
        h.push_str("</dl>\n");
    }
}

/// Distinct sweep points (measured or simulated) with rows in the campaign; reference series
/// are not the sweep's points.
pub fn stored_points(c: &Campaign) -> u64 {
    c.points
        .iter()
        .filter(|p| p.source != crate::chart::Source::Reference)
        .map(|p| p.point)
        .collect::<std::collections::BTreeSet<_>>()
        .len() as u64
}

fn figure(h: &mut String, meta: &ReportMeta, f: &PlacedFigure, number: usize) {
    let _ = writeln!(h, "<figure id=\"{}\">", esc(&f.spec.id));
    h.push_str(&f.inline_svg);
    let mut files = format!("<a href=\"{}\">SVG</a>", esc(&f.svg_file));
    if let Some(p) = &f.png_file {
        let _ = write!(files, " · <a href=\"{}\">PNG</a>", esc(p));
    }
    let mut cmds = Vec::new();
    if let Some(c) = meta
        .campaigns
        .get(&f.spec.campaign)
        .map(|m| m.command.trim())
        .filter(|c| !c.is_empty())
    {
        cmds.push(format!("data from <code>{}</code>", esc(c)));
    }
    if let Some(c) = &meta.command {
        cmds.push(format!("figure by <code>{}</code>", esc(c)));
    }
    let cmds = if cmds.is_empty() {
        String::new()
    } else {
        format!(" {}.", cmds.join("; "))
    };
    let _ = writeln!(
        h,
        "<figcaption><b>Figure {number}.</b> {}{cmds} Files: {files}.</figcaption>\n</figure>",
        esc(&f.spec.caption)
    );
}

/// Known metrics in table order: (database name, column heading). A column shows when some
/// point has its metric (a latency target's depth, the busiest disk's utilization, the
/// trims' rate).
const METRICS: [(&str, &str); 9] = [
    ("mb_s", "MB/s"),
    ("mib_s", "MiB/s"),
    ("iops", "IOPS"),
    ("lat_mean_us", "lat mean µs"),
    ("lat_p99_us", "lat p99 µs"),
    ("latency_depth", "depth"),
    ("disk_util", "disk util %"),
    ("trim_mb_s", "trim MB/s"),
    ("trim_iops", "trim IOPS"),
];

fn points_table(h: &mut String, meta: &ReportMeta, c: &Campaign) {
    if c.points.is_empty() {
        return;
    }
    let _ = writeln!(h, "<h3>Points</h3>");
    let show_source = c.sources.len() > 1;
    let extra: Vec<(&str, &str)> = METRICS
        .iter()
        .copied()
        .filter(|(m, _)| *m != "mb_s" && c.points.iter().any(|p| p.values.contains_key(*m)))
        .collect();
    h.push_str("<div class=\"scroll\"><table>\n<thead><tr>");
    if show_source {
        h.push_str("<th class=\"t\">source</th>");
    }
    for k in &c.varying {
        let _ = write!(h, "<th class=\"t\">{}</th>", esc(k));
    }
    h.push_str("<th>runs</th><th>MB/s median</th><th>mean</th><th>min</th><th>max</th><th>stddev</th><th>spread %</th><th>95% CI of mean</th>");
    for (_, head) in &extra {
        let _ = write!(h, "<th>{} median</th>", esc(head));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    let cm = meta.campaigns.get(&c.name);
    // The sweep's own rule: spread of the experiment's metric over its threshold.
    let threshold = cm.and_then(|m| m.spread_threshold);
    let metric = cm
        .map(|m| m.spread_metric.as_str())
        .filter(|m| !m.is_empty())
        .unwrap_or(DEFAULT_SPREAD_METRIC);
    let mut flagged = 0;
    for p in &c.points {
        let s = p.stats("mb_s");
        let judged = p.stats(metric);
        let flag = match (threshold, &judged) {
            (Some(th), Some(j)) => j.n > 1 && j.over(th),
            _ => false,
        };
        flagged += flag as usize;
        h.push_str(if flag { "<tr class=\"flag\">" } else { "<tr>" });
        if show_source {
            let _ = write!(h, "<td class=\"t\">{}</td>", p.source.name());
        }
        for k in &c.varying {
            let v = p.param(k);
            let shown = match value_number(k, v) {
                Some(b) if is_size_param(k) && !v.chars().all(|ch| ch.is_ascii_digit()) => {
                    format!("{v} ({})", format_bytes(b))
                }
                Some(b) if is_size_param(k) => format_bytes(b),
                _ => v.to_string(),
            };
            let _ = write!(h, "<td class=\"t\">{}</td>", esc(&shown));
        }
        match s {
            Some(s) => {
                let _ = write!(
                    h,
                    "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                    s.n,
                    format_number(s.median),
                    format_number(s.mean),
                    format_number(s.min),
                    format_number(s.max),
                    format_number(s.stddev),
                    if s.n > 1 { format!("{:.1}{}", s.spread_pct, if flag { " ⚑" } else { "" }) } else { "–".into() },
                    if s.n > 1 { format!("{} – {}", format_number(s.ci95_low), format_number(s.ci95_high)) } else { "–".into() }
                );
            }
            None => {
                let _ = write!(h, "<td>{}</td>{}", p.reps(), "<td>–</td>".repeat(7));
            }
        }
        for (m, _) in &extra {
            let v = p
                .stats(m)
                .map(|s| format_number(s.median))
                .unwrap_or_else(|| "–".into());
            let _ = write!(h, "<td>{v}</td>");
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table></div>\n");
    if flagged > 0 {
        let th = threshold.unwrap_or(0.0) * 100.0;
        let what = if metric == DEFAULT_SPREAD_METRIC {
            String::new()
        } else {
            format!(" in {}", esc(metric))
        };
        let _ = writeln!(
            h,
            "<p class=\"note\">{flagged} point(s) spread more than {}%{what} between repetitions (⚑, over the experiment's <code>[repeat] spread_threshold</code>): their rate is not precise; run them again or with more repetitions.</p>",
            format_number(th)
        );
    }
}

fn limits_section(h: &mut String, tables: &[LimitsTable]) {
    h.push_str("<section id=\"limits\">\n<h2>Limits: bounds against achieved rates</h2>\n");
    h.push_str(
        "<p>Each component on the path from host to disks, with its theoretical bound, against the best rate achieved. \
         The component with the lowest bound limits the path (highlighted); the ratio says how close the best run came to each bound. \
         A simulated system's bounds are given for reads and for writes, each against the best run in that direction (MB/s: 10<sup>6</sup> bytes/s).</p>\n",
    );
    for t in tables {
        let mut scope = Vec::new();
        if let Some(c) = &t.campaign {
            scope.push(format!("campaign {}", esc(c)));
        }
        if let Some(tg) = &t.target {
            scope.push(format!("target <code>{}</code>", esc(tg)));
        }
        let scope = if scope.is_empty() {
            "all runs".to_string()
        } else {
            scope.join(", ")
        };
        let _ = writeln!(
            h,
            "<h3>{scope}</h3>\n<p class=\"meta\">Bounds {}.</p>",
            esc(&t.origin)
        );
        let achieved = |label: &str, a: &Option<crate::limits::Achieved>| match a {
            Some(a) => format!(
                "<p>Best {label}: <b>{} MB/s</b> ({}{}).</p>\n",
                format_number(a.bytes_s / 1e6),
                esc(&a.config),
                if a.source == crate::chart::Source::Reference {
                    ", reference"
                } else {
                    ""
                }
            ),
            None => String::new(),
        };
        let pct = |x: Option<f64>| {
            x.map(|x| format!("{:.0}%", x * 100.0))
                .unwrap_or_else(|| "–".into())
        };
        let mb = |x: f64| {
            if x.is_finite() && x > 0.0 {
                format_number(x / 1e6)
            } else {
                "–".into()
            }
        };
        // The verdict on the best run against the lowest bound of one direction.
        let verdict = |h: &mut String, what: &str, b: &Option<String>, r: Option<f64>| {
            if let (Some(b), Some(r)) = (b, r) {
                let v = if r >= 0.9 {
                    format!("The best {what}reached {:.0}% of the {} bound: this component is the bottleneck.", r * 100.0, esc(b))
                } else {
                    format!(
                        "The best {what}reached only {:.0}% of the lowest known bound ({}): something not listed here — often the controller, whose rate is not published — limits the path.",
                        r * 100.0,
                        esc(b)
                    )
                };
                let _ = writeln!(h, "<p>{v}</p>");
            }
        };
        if !t.by_direction {
            h.push_str(&achieved("measured", &t.measured));
            h.push_str(&achieved("simulated", &t.predicted));
            h.push_str("<div class=\"scroll\"><table>\n<thead><tr><th class=\"t\">component</th><th class=\"t\">kind</th><th>bound MB/s</th><th>achieved / bound</th><th class=\"t\">how the bound is known</th></tr></thead>\n<tbody>\n");
            for r in &t.rows {
                let _ = writeln!(
                    h,
                    "<tr{}><td class=\"t\">{}{}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td><td class=\"t\">{}</td></tr>",
                    if r.bounding { " class=\"bound\"" } else { "" },
                    esc(&r.component.name),
                    if r.bounding { " — bounds the path" } else { "" },
                    esc(&r.component.kind),
                    format_number(r.component.bound_bytes_s / 1e6),
                    pct(r.ratio),
                    esc(&r.component.note)
                );
            }
            h.push_str("</tbody></table></div>\n");
            let first = t.rows.first().and_then(|r| r.ratio);
            verdict(h, "run ", &t.bounding, first);
            continue;
        }
        // Reads and writes apart: each against its own bounds.
        h.push_str(&achieved("measured read", &t.measured));
        h.push_str(&achieved("simulated read", &t.predicted));
        h.push_str(&achieved("measured write", &t.write_measured));
        h.push_str(&achieved("simulated write", &t.write_predicted));
        h.push_str("<div class=\"scroll\"><table>\n<thead><tr><th class=\"t\">component</th><th class=\"t\">kind</th><th>read bound MB/s</th><th>read achieved / bound</th><th>write bound MB/s</th><th>write achieved / bound</th><th class=\"t\">how the bounds are known</th></tr></thead>\n<tbody>\n");
        for r in &t.rows {
            let bounds = match (r.bounding, r.write_bounding) {
                (true, true) => " — bounds the path",
                (true, false) => " — bounds reads",
                (false, true) => " — bounds writes",
                (false, false) => "",
            };
            let _ = writeln!(
                h,
                "<tr{}><td class=\"t\">{}{bounds}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"t\">{}</td></tr>",
                if r.bounding || r.write_bounding { " class=\"bound\"" } else { "" },
                esc(&r.component.name),
                esc(&r.component.kind),
                mb(r.component.bound_bytes_s),
                pct(r.ratio),
                mb(r.component.write_bound_bytes_s.unwrap_or(f64::NAN)),
                pct(r.write_ratio),
                esc(&r.component.note)
            );
        }
        h.push_str("</tbody></table></div>\n");
        let ratio_of = |b: &Option<String>, write: bool| {
            t.rows
                .iter()
                .find(|r| Some(&r.component.name) == b.as_ref())
                .and_then(|r| if write { r.write_ratio } else { r.ratio })
        };
        verdict(h, "read run ", &t.bounding, ratio_of(&t.bounding, false));
        verdict(
            h,
            "write run ",
            &t.write_bounding,
            ratio_of(&t.write_bounding, true),
        );
    }
    h.push_str("</section>\n");
}
