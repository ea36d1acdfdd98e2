//! From database rows to points: repetitions of one configuration gathered together, the
//! parameters that vary within a campaign found, and their values understood as numbers
//! (sizes with fio's k/m/g suffixes are bytes) where they are numbers.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use crate::chart::Source;
use crate::rows::RunRow;
use raidlab_lab::reference::AMOUNT_KEYS;
use raidlab_lab::stats::Stats;

/// Name of the pseudo-parameter that carries the target when a campaign ran on several.
pub const TARGET: &str = "target";

/// One configuration of one campaign from one source, with all its repetitions.
#[derive(Debug, Clone)]
pub struct Point {
    pub source: Source,
    pub target: String,
    /// Every parameter, plus `target` when targets vary within a source.
    pub params: BTreeMap<String, String>,
    pub point: u64,
    /// Metric name → one value per repetition.
    pub values: BTreeMap<String, Vec<f64>>,
}

impl Point {
    pub fn param(&self, name: &str) -> &str {
        self.params.get(name).map(String::as_str).unwrap_or("")
    }

    pub fn stats(&self, metric: &str) -> Option<Stats> {
        self.values.get(metric).and_then(|v| Stats::of(v))
    }

    pub fn reps(&self) -> usize {
        self.values.values().map(Vec::len).max().unwrap_or(0)
    }
}

/// The rows of one campaign, gathered into points.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub name: String,
    pub experiment: String,
    pub points: Vec<Point>,
    /// Parameters whose value differs between points (sorted: sizes and counts first in a
    /// conventional order, then by name).
    pub varying: Vec<String>,
    /// Sources present, in order measured, simulated, reference.
    pub sources: Vec<Source>,
}

impl Campaign {
    pub fn distinct(&self, param: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .points
            .iter()
            .map(|p| p.param(param).to_string())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        v.sort_by(|a, b| cmp_values(param, a, b));
        v
    }

    pub fn is_numeric(&self, param: &str) -> bool {
        self.points.iter().all(|p| {
            let v = p.param(param);
            v.is_empty() || value_number(param, v).is_some()
        }) && self.points.iter().any(|p| !p.param(param).is_empty())
    }
}

/// Group rows by campaign (in first-seen order), then by (source, target, parameters).
pub fn campaigns(rows: &[RunRow]) -> Vec<Campaign> {
    let mut order: Vec<String> = Vec::new();
    let mut by: BTreeMap<String, Vec<&RunRow>> = BTreeMap::new();
    for r in rows {
        if !by.contains_key(&r.campaign) {
            order.push(r.campaign.clone());
        }
        by.entry(r.campaign.clone()).or_default().push(r);
    }
    order
        .into_iter()
        .map(|name| campaign(&name, &by[&name]))
        .collect()
}

fn campaign(name: &str, rows: &[&RunRow]) -> Campaign {
    // Targets are a configuration only when one source ran on several of them; a measured
    // and a simulated target for the same parameters are the same configuration.
    let mut targets: BTreeMap<Source, BTreeSet<&str>> = BTreeMap::new();
    for r in rows {
        targets
            .entry(Source::from_db(&r.source))
            .or_default()
            .insert(r.target.as_str());
    }
    let target_varies = targets.values().any(|t| t.len() > 1);

    let mut points: Vec<Point> = Vec::new();
    // A point's key: its source, metric and parameters.
    type Key = (Source, String, Vec<(String, String)>);
    let mut index: BTreeMap<Key, usize> = BTreeMap::new();
    for r in rows {
        let source = Source::from_db(&r.source);
        let mut params = r.params.clone();
        if target_varies && !params.contains_key(TARGET) {
            params.insert(TARGET.to_string(), r.target.clone());
        }
        let key = (
            source,
            r.target.clone(),
            params
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Vec<_>>(),
        );
        let i = *index.entry(key).or_insert_with(|| {
            points.push(Point {
                source,
                target: r.target.clone(),
                params,
                point: r.point,
                values: BTreeMap::new(),
            });
            points.len() - 1
        });
        for (m, v) in &r.metrics {
            points[i].values.entry(m.clone()).or_default().push(*v);
        }
    }

    let names: BTreeSet<&String> = points.iter().flat_map(|p| p.params.keys()).collect();
    let all: Vec<&Point> = points.iter().collect();
    let mut varying: Vec<String> = names
        .into_iter()
        // A reference's amount that the campaign's own points do not carry tells no
        // configurations apart: the caption names it ([`reference_amounts`]).
        .filter(|k| reference_amount(&all, k).is_none())
        .filter(|k| {
            points
                .iter()
                .map(|p| p.param(k))
                .collect::<BTreeSet<_>>()
                .len()
                > 1
        })
        .cloned()
        .collect();
    varying.sort_by_key(|k| (param_rank(k), k.clone()));
    let mut sources: Vec<Source> = points
        .iter()
        .map(|p| p.source)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    sources.sort();
    let experiment = rows
        .first()
        .map(|r| r.experiment.clone())
        .unwrap_or_default();
    let mut c = Campaign {
        name: name.to_string(),
        experiment,
        points,
        varying,
        sources,
    };
    c.points.sort_by(|a, b| cmp_points(&c.varying, a, b));
    c
}

/// The values of an amount parameter (`size`, [`AMOUNT_KEYS`]) that reference points of
/// `pts` were measured with when none of the other points carries it: the reference moved
/// another amount than the sweep set (its rows keep their amount only then), which a
/// caption should say. `None` when no reference point has it, or another point does too.
fn reference_amount(pts: &[&Point], key: &str) -> Option<Vec<String>> {
    if !AMOUNT_KEYS.contains(&key) {
        return None;
    }
    let (refs, others): (Vec<&Point>, Vec<&Point>) =
        pts.iter().partition(|p| p.source == Source::Reference);
    if others.is_empty() || others.iter().any(|p| !p.param(key).is_empty()) {
        return None;
    }
    let mut values: Vec<String> = refs
        .iter()
        .map(|p| p.param(key).to_string())
        .filter(|v| !v.is_empty())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    values.sort_by(|a, b| cmp_values(key, a, b));
    (!values.is_empty()).then_some(values)
}

/// Each amount parameter the reference points of `pts` were measured with and the others do
/// not carry (see [`reference_amount`]), with its values: seed 000's 8 GB per point beside
/// a sweep run with `--set size=256m`.
pub fn reference_amounts(pts: &[&Point]) -> Vec<(String, Vec<String>)> {
    AMOUNT_KEYS
        .iter()
        .filter_map(|k| reference_amount(pts, k).map(|v| (k.to_string(), v)))
        .collect()
}

/// Conventional order of parameters in labels and tables.
fn param_rank(name: &str) -> usize {
    const ORDER: [&str; 16] = [
        "system",
        "target",
        "level",
        "layout",
        "members",
        "chunk",
        "rw",
        "bs",
        "rwmixread",
        "iodepth",
        "numjobs",
        "threads",
        "buffer",
        "size",
        "file_size",
        "runtime",
    ];
    ORDER.iter().position(|o| *o == name).unwrap_or(ORDER.len())
}

fn cmp_points(varying: &[String], a: &Point, b: &Point) -> Ordering {
    for k in varying {
        let o = cmp_values(k, a.param(k), b.param(k));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.source.cmp(&b.source)
}

/// Order two values of one parameter: numerically when both are numbers, else as text with
/// runs of digits compared as numbers (`raid5-4d-c64` before `raid5-4d-c256`, `fig9` before
/// `fig11`).
pub fn cmp_values(param: &str, a: &str, b: &str) -> Ordering {
    match (value_number(param, a), value_number(param, b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => natural_cmp(a, b),
    }
}

/// Text order with runs of ASCII digits compared by value; equal-valued runs fall back to
/// their text (so `07` and `7` still differ), and whole equal strings are Equal.
fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    let digits = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
    while let (Some(&p), Some(&q)) = (x.first(), y.first()) {
        let o = if p.is_ascii_digit() && q.is_ascii_digit() {
            let (m, n) = (digits(x), digits(y));
            let (u, v) = (&x[..m], &y[..n]);
            let trim = |s: &[u8]| -> usize { s.iter().take_while(|&&c| c == b'0').count() };
            let (u0, v0) = (&u[trim(u)..], &v[trim(v)..]);
            let o = u0.len().cmp(&v0.len()).then(u0.cmp(v0)).then(u.cmp(v));
            (x, y) = (&x[m..], &y[n..]);
            o
        } else {
            (x, y) = (&x[1..], &y[1..]);
            p.cmp(&q)
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    x.len().cmp(&y.len())
}

/// Does this parameter hold a byte quantity?
pub fn is_size_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "bs" | "blocksize"
            | "block_size"
            | "size"
            | "chunk"
            | "chunk_size"
            | "buffer"
            | "buffer_size"
            | "file_size"
            | "filesize"
            | "io_size"
            | "bs_read"
            | "bs_write"
            | "total"
            | "total_bytes"
            | "stripe"
            | "offset"
            | "offset_increment"
    ) || n.ends_with("_bytes")
}

/// Is this parameter a percentage?
pub fn is_percent_param(name: &str) -> bool {
    matches!(
        name,
        "rwmixread" | "rwmixwrite" | "read_pct" | "percentage_random"
    )
}

/// A parameter value as a number: plain numbers as they are; sizes (`4k`, `2m`, `1GiB`) in
/// bytes, using fio's convention that k = 1024.
pub fn value_number(param: &str, v: &str) -> Option<f64> {
    let t = v.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(x) = t.parse::<f64>() {
        return x.is_finite().then_some(x);
    }
    if is_size_param(param) || t.ends_with(|c: char| "kKmMgGtTbB".contains(c)) {
        return raidlab_workload::size::parse_size(t).ok().map(|b| b as f64);
    }
    None
}

/// A configuration label from some parameters: `rw=read, system=fc`. Sizes given as plain
/// byte counts are shown in binary units (`bs=2 MiB`).
pub fn label(p: &Point, keys: &[String]) -> String {
    let parts: Vec<String> = keys
        .iter()
        // A parameter the point does not have (a reference table without that column) is
        // left out rather than shown empty.
        .filter(|k| !p.param(k).is_empty())
        .map(|k| {
            if k == "target" {
                // The target names itself: `fig12 (simulated)`, not `target=sim:../fig12.toml`.
                show_value(k, p.param(k))
            } else {
                format!("{k}={}", show_value(k, p.param(k)))
            }
        })
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join(", ")
    }
}

/// A value as labels show it: plain byte counts of size parameters in binary units.
pub fn show_value(param: &str, v: &str) -> String {
    if param == "target" {
        if let Some(path) = v.strip_prefix("sim:") {
            let (file, lun) = match path.split_once('#') {
                Some((f, l)) => (f, format!("#{l}")),
                None => (path, String::new()),
            };
            let stem = std::path::Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.to_string());
            return format!("{stem}{lun}");
        }
        if let Some(members) = v.strip_prefix("array:") {
            return format!("array of {} members", members.split(',').count());
        }
    }
    if is_size_param(param) && !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) {
        if let Ok(b) = v.parse::<u64>() {
            return crate::axis::format_bytes(b as f64);
        }
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        campaign: &str,
        source: &str,
        target: &str,
        params: &[(&str, &str)],
        mb_s: f64,
    ) -> RunRow {
        RunRow {
            campaign: campaign.into(),
            experiment: "e".into(),
            point: 0,
            rep: 0,
            source: source.into(),
            target: target.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            metrics: [("mb_s".to_string(), mb_s)].into_iter().collect(),
        }
    }

    #[test]
    fn names_sort_with_their_numbers_in_order() {
        let mut v = vec![
            "raid5-4d-c1024",
            "raid10-4d-c16",
            "raid5-4d-c64",
            "raid5-4d-c16",
            "raid5-4d-c256",
            "fig11",
            "fig9",
            "fig09",
        ];
        v.sort_by(|a, b| cmp_values("system", a, b));
        assert_eq!(
            v,
            [
                "fig09",
                "fig9",
                "fig11",
                "raid5-4d-c16",
                "raid5-4d-c64",
                "raid5-4d-c256",
                "raid5-4d-c1024",
                "raid10-4d-c16"
            ]
        );
        assert_eq!(cmp_values("system", "a7b", "a7b"), Ordering::Equal);
    }

    #[test]
    fn repetitions_gather_into_one_point_and_sizes_sort_numerically() {
        let rows = vec![
            row("c", "measured", "/dev/x", &[("bs", "64k")], 10.0),
            row("c", "measured", "/dev/x", &[("bs", "4k")], 1.0),
            row("c", "measured", "/dev/x", &[("bs", "64k")], 12.0),
            row("c", "measured", "/dev/x", &[("bs", "512")], 0.5),
        ];
        let c = &campaigns(&rows)[0];
        assert_eq!(c.points.len(), 3);
        assert_eq!(c.varying, ["bs"]);
        assert_eq!(c.distinct("bs"), ["512", "4k", "64k"]);
        let p = c.points.iter().find(|p| p.param("bs") == "64k").unwrap();
        assert_eq!(p.stats("mb_s").unwrap().n, 2);
        assert!(c.is_numeric("bs"));
        assert_eq!(value_number("bs", "2m"), Some(2097152.0));
        assert_eq!(value_number("rw", "read"), None);
    }

    #[test]
    fn labels_leave_out_parameters_a_point_lacks_and_show_offsets_as_sizes() {
        let rows = vec![
            row(
                "c",
                "simulated",
                "sim:a.toml",
                &[("rw", "write"), ("offset_increment", "2147483648")],
                1.0,
            ),
            row("c", "reference", "", &[("rw", "write")], 2.0),
        ];
        let c = &campaigns(&rows)[0];
        let keys = vec!["rw".to_string(), "offset_increment".to_string()];
        let sim = c
            .points
            .iter()
            .find(|p| !p.param("offset_increment").is_empty())
            .unwrap();
        let reference = c
            .points
            .iter()
            .find(|p| p.param("offset_increment").is_empty())
            .unwrap();
        assert_eq!(label(sim, &keys), "rw=write, offset_increment=2 GiB");
        assert_eq!(label(reference, &keys), "rw=write");
    }

    #[test]
    fn target_is_a_parameter_only_when_one_source_used_several() {
        let same = vec![
            row("c", "measured", "/dev/x", &[("bs", "4k")], 1.0),
            row("c", "simulated", "sim:a.toml", &[("bs", "4k")], 1.1),
        ];
        let c = &campaigns(&same)[0];
        assert!(c.varying.is_empty());
        assert_eq!(c.sources, [Source::Measured, Source::Predicted]);
        let several = vec![
            row("c", "measured", "/dev/x", &[], 1.0),
            row("c", "measured", "/dev/y", &[], 2.0),
        ];
        assert_eq!(campaigns(&several)[0].varying, [TARGET]);
    }

    #[test]
    fn campaigns_keep_their_first_seen_order() {
        let rows = vec![
            row("zeta", "measured", "t", &[], 1.0),
            row("alpha", "measured", "t", &[], 1.0),
        ];
        let names: Vec<String> = campaigns(&rows).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["zeta", "alpha"]);
    }
}
