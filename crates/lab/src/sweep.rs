//! Sweep axes and their expansion into points: the full cartesian product of the axes, first
//! axis slowest, less the `exclude`d combinations.
//!
//! An axis is a list (`rw = ["read", "write"]`), powers of two (`bs = { pow2 = ["512", "2m"] }`:
//! low, 2·low, … up to high; both ends must be powers of two),
//! an arithmetic range (`rwmixread = { from = 0, to = 100, step = 25 }`), a geometric one
//! (`iodepth = { from = 1, to = 256, factor = 4 }`), or a single value. Size-valued axes
//! (`bs`, `size`, `chunk`, …) take fio's suffixes and are stored in bytes.

use crate::experiment::{canonical_value, display_value, scalar, system_labels, SIZE_KEYS};
use raidlab_workload::size::parse_size;
use std::collections::BTreeMap;

/// More points than this in one axis is surely a mistake.
const MAX_AXIS_VALUES: usize = 100_000;

/// More points than this in one experiment, the product of its axes, is as surely one: at
/// a run of a second it is days of measuring per repetition, and every point is planned
/// (its jobs kept in memory) before the first runs. The same bound as one axis's.
pub const MAX_POINTS: u64 = MAX_AXIS_VALUES as u64;

/// Refuse axes whose product is more than [`MAX_POINTS`] points, naming each axis's count.
/// The product is taken before `exclude`, which only ever removes points from it (and may
/// not be counted without listing them).
pub fn check_point_count(axes: &[Axis]) -> Result<(), String> {
    let exact = axes
        .iter()
        .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64));
    if exact.is_some_and(|n| n <= MAX_POINTS) {
        return Ok(());
    }
    let counts: Vec<String> = axes
        .iter()
        .map(|a| format!("{} {}", a.name, a.values.len()))
        .collect();
    let shown = match exact {
        Some(n) => n.to_string(),
        None => format!(
            "about {:.1e}",
            axes.iter().map(|a| a.values.len() as f64).product::<f64>()
        ),
    };
    Err(format!(
        "the axes make {} = {shown} points, more than {MAX_POINTS} (valid: at most {MAX_POINTS} points in one experiment, counted before exclude; use coarser steps, fix an axis with --set, or split the sweep into several experiments)",
        counts.join(" × ")
    ))
}

/// One swept parameter and its values (canonical: sizes in bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
    /// Each value as shown in tables and stored in the database (see [`Axis::labels_of`]).
    pub labels: Vec<String>,
}

fn number(key: &str, v: &toml::Value) -> Result<u64, String> {
    let s = scalar(v).ok_or_else(|| format!("{v} is not a number"))?;
    if SIZE_KEYS.contains(&key) {
        parse_size(&s)
    } else {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("'{s}' is not a whole number"))
    }
}

impl Axis {
    /// An axis of these canonical values, labelled by [`Axis::labels_of`].
    pub fn new(name: &str, values: Vec<String>) -> Axis {
        Axis {
            name: name.to_string(),
            labels: Self::labels_of(name, &values),
            values,
        }
    }

    /// How an axis's values are shown and stored: `system` files by their stems, or by as
    /// many trailing path components as tell apart files sharing a stem
    /// ([`system_labels`]); everything else as its canonical value.
    pub fn labels_of(name: &str, values: &[String]) -> Vec<String> {
        if name == "system" {
            system_labels(values)
        } else {
            values.iter().map(|v| display_value(name, v)).collect()
        }
    }

    pub fn parse(name: &str, v: &toml::Value) -> Result<Axis, String> {
        let values: Vec<String> = match v {
            toml::Value::Array(items) => {
                if items.is_empty() {
                    return Err("empty list (give at least one value)".into());
                }
                items
                    .iter()
                    .map(|x| {
                        let s =
                            scalar(x).ok_or_else(|| format!("{x} is not a string or number"))?;
                        canonical_value(name, &s)
                    })
                    .collect::<Result<_, _>>()?
            }
            toml::Value::Table(t) => {
                if let Some(p) = t.get("pow2") {
                    let ends = p
                        .as_array()
                        .filter(|a| a.len() == 2)
                        .ok_or("pow2 needs [low, high], e.g. pow2 = [\"512\", \"2m\"]")?;
                    let lo = number(name, &ends[0])?;
                    let hi = number(name, &ends[1])?;
                    if lo == 0 || hi < lo {
                        return Err(format!("pow2 = [{lo}, {hi}]: need 0 < low <= high"));
                    }
                    for (end, given, x) in [("low", &ends[0], lo), ("high", &ends[1], hi)] {
                        if !x.is_power_of_two() {
                            let given = scalar(given).unwrap_or_default();
                            let shown = if given.trim() == x.to_string() {
                                given
                            } else {
                                format!("{given} ({x})")
                            };
                            let below = 1u64 << (63 - x.leading_zeros());
                            return Err(format!(
                                "pow2 {end} end {shown} is not a power of two \
                                 (the axis doubles from low to high; e.g. {below} or {})",
                                below.saturating_mul(2)
                            ));
                        }
                    }
                    let mut out = Vec::new();
                    let mut x = lo;
                    while x <= hi {
                        out.push(x.to_string());
                        x = match x.checked_mul(2) {
                            Some(n) => n,
                            None => break,
                        };
                    }
                    out
                } else if let (Some(f), Some(to)) = (t.get("from"), t.get("to")) {
                    let from = number(name, f)?;
                    let to = number(name, to)?;
                    if to < from {
                        return Err(format!("from = {from} is above to = {to}"));
                    }
                    let mut out = Vec::new();
                    if let Some(step) = t.get("step") {
                        let step = number(name, step)?;
                        if step == 0 {
                            return Err("step must be greater than zero".into());
                        }
                        let mut x = from;
                        while x <= to && out.len() <= MAX_AXIS_VALUES {
                            out.push(x.to_string());
                            x = match x.checked_add(step) {
                                Some(n) => n,
                                None => break,
                            };
                        }
                    } else if let Some(factor) = t.get("factor") {
                        let factor = number("", factor)?;
                        if factor < 2 || from == 0 {
                            return Err("factor needs a whole number >= 2 and from > 0".into());
                        }
                        let mut x = from;
                        while x <= to {
                            out.push(x.to_string());
                            x = match x.checked_mul(factor) {
                                Some(n) => n,
                                None => break,
                            };
                        }
                    } else {
                        return Err(
                            "a range needs step = N or factor = N besides from and to".into()
                        );
                    }
                    out
                } else {
                    return Err("expected a list, { pow2 = [low, high] }, or { from = …, to = …, step = … | factor = … }".into());
                }
            }
            other => vec![canonical_value(
                name,
                &scalar(other).ok_or("expected a value or a list")?,
            )?],
        };
        if values.len() > MAX_AXIS_VALUES {
            return Err(format!("more than {MAX_AXIS_VALUES} values"));
        }
        // A value given twice (perhaps spelt two ways: 4k and 4096) would be one point run
        // once and then "already in the database".
        let mut seen = std::collections::BTreeSet::new();
        if let Some(v) = values.iter().find(|v| !seen.insert(v.as_str())) {
            return Err(format!(
                "the value {v} is given twice (valid: each value once; sizes count in bytes, so 4k and 4096 are one value)"
            ));
        }
        Ok(Axis::new(name, values))
    }
}

/// One combination of axis values.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Position in the sweep, from 0.
    pub index: u64,
    /// Axis name → canonical value, in axis order.
    pub values: Vec<(String, String)>,
    /// Each value as shown and stored (the axis's label for it), in axis order.
    pub labels: Vec<String>,
}

impl Point {
    /// The value of an axis at this point.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    /// The value of the axis at `i` as shown and stored.
    pub fn label(&self, i: usize) -> String {
        match self.labels.get(i) {
            Some(l) => l.clone(),
            None => display_value(&self.values[i].0, &self.values[i].1),
        }
    }
    /// Parameters as stored and shown (`system` as its file stem, or more of its path when
    /// swept files share a stem): what tells points apart in the database.
    pub fn params(&self) -> BTreeMap<String, String> {
        (0..self.values.len())
            .map(|i| (self.values[i].0.clone(), self.label(i)))
            .collect()
    }
}

/// All points of a sweep: the cartesian product of `axes` (first axis slowest), without the
/// combinations matching an `exclude` entry (all of whose keys equal the point's values).
/// No axes gives one point with no parameters.
pub fn expand(axes: &[Axis], exclude: &[BTreeMap<String, String>]) -> Vec<Point> {
    type Combo = (Vec<(String, String)>, Vec<String>);
    let mut combos: Vec<Combo> = vec![(Vec::new(), Vec::new())];
    for axis in axes {
        let labels = if axis.labels.len() == axis.values.len() {
            axis.labels.clone()
        } else {
            Axis::labels_of(&axis.name, &axis.values)
        };
        let mut next = Vec::with_capacity(combos.len() * axis.values.len());
        for c in &combos {
            for (v, l) in axis.values.iter().zip(&labels) {
                let mut c = c.clone();
                c.0.push((axis.name.clone(), v.clone()));
                c.1.push(l.clone());
                next.push(c);
            }
        }
        combos = next;
    }
    combos
        .into_iter()
        .filter(|(c, _)| {
            !exclude.iter().any(|ex| {
                ex.iter()
                    .all(|(k, v)| c.iter().any(|(ck, cv)| ck == k && cv == v))
            })
        })
        .enumerate()
        .map(|(i, (values, labels))| Point {
            index: i as u64,
            values,
            labels,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(name: &str, toml_value: &str) -> Result<Axis, String> {
        let t: toml::Table = format!("v = {toml_value}").parse().unwrap();
        Axis::parse(name, &t["v"])
    }

    #[test]
    fn pow2_from_512_to_2m_is_13_values_in_bytes() {
        let a = axis("bs", r#"{ pow2 = ["512", "2m"] }"#).unwrap();
        assert_eq!(a.values.len(), 13);
        assert_eq!(a.values[0], "512");
        assert_eq!(a.values[12], "2097152");
        let q = axis("iodepth", "{ pow2 = [1, 256] }").unwrap();
        assert_eq!(
            q.values,
            ["1", "2", "4", "8", "16", "32", "64", "128", "256"]
        );
    }

    #[test]
    fn arithmetic_and_geometric_ranges() {
        let a = axis("rwmixread", "{ from = 0, to = 100, step = 25 }").unwrap();
        assert_eq!(a.values, ["0", "25", "50", "75", "100"]);
        let a = axis("chunk", r#"{ from = "4k", to = "16k", step = "4k" }"#).unwrap();
        assert_eq!(a.values, ["4096", "8192", "12288", "16384"]);
        let a = axis("iodepth", "{ from = 1, to = 256, factor = 4 }").unwrap();
        assert_eq!(a.values, ["1", "4", "16", "64", "256"]);
        let a = axis("bs", r#"["4k", "1m"]"#).unwrap();
        assert_eq!(a.values, ["4096", "1048576"]);
        let a = axis("rw", r#""read""#).unwrap();
        assert_eq!(a.values, ["read"]);
    }

    #[test]
    fn bad_ranges_say_what_is_valid() {
        for (name, v, want) in [
            ("bs", "[]", "empty list"),
            ("bs", r#"{ pow2 = ["2m", "512"] }"#, "low <= high"),
            ("bs", r#"{ pow2 = ["3k", "5k"] }"#, "low end 3k (3072) is not a power of two"),
            ("bs", r#"["4k", "64k", "4096"]"#, "the value 4096 is given twice"),
            ("rw", r#"["read", "read"]"#, "the value read is given twice"),
            ("bs", r#"{ pow2 = ["4k", "5k"] }"#, "high end 5k (5120) is not a power of two"),
            ("iodepth", "{ pow2 = [1, 100] }", "high end 100 is not a power of two (the axis doubles from low to high; e.g. 64 or 128)"),
            ("iodepth", "{ from = 5, to = 1, step = 1 }", "above"),
            (
                "iodepth",
                "{ from = 1, to = 5, step = 0 }",
                "greater than zero",
            ),
            ("iodepth", "{ from = 1, to = 5 }", "step = N or factor"),
            ("iodepth", "{ upto = 5 }", "expected a list"),
            ("bs", r#"["4q"]"#, "unknown unit"),
        ] {
            let e = axis(name, v).unwrap_err();
            assert!(e.contains(want), "{v}: {e}");
        }
    }

    /// Each axis may be within its own bound while their product is not: refused in one
    /// line naming each axis's count, and the bound itself is allowed.
    #[test]
    fn more_points_than_the_bound_are_refused() {
        let big = [
            axis("rwmixread", "{ from = 0, to = 100, step = 1 }").unwrap(),
            axis("iodepth", "{ from = 1, to = 1000, step = 1 }").unwrap(),
            axis("numjobs", "{ from = 1, to = 40, step = 1 }").unwrap(),
        ];
        let e = check_point_count(&big).unwrap_err();
        assert!(
            e.starts_with("the axes make rwmixread 101 × iodepth 1000 × numjobs 40 = 4040000 points, more than 100000"),
            "{e}"
        );
        let at = [
            axis("iodepth", "{ from = 1, to = 1000, step = 1 }").unwrap(),
            axis("numjobs", "{ from = 1, to = 100, step = 1 }").unwrap(),
        ];
        check_point_count(&at).unwrap();
        let over = [
            axis("iodepth", "{ from = 1, to = 1000, step = 1 }").unwrap(),
            axis("numjobs", "{ from = 1, to = 101, step = 1 }").unwrap(),
        ];
        assert!(check_point_count(&over).is_err());
        // A product past u64 is still one line, not an overflow.
        let huge: Vec<Axis> = (0..6)
            .map(|_| axis("iodepth", "{ from = 1, to = 100000, step = 1 }").unwrap())
            .collect();
        let e = check_point_count(&huge).unwrap_err();
        assert!(e.contains("= about 1.0e30 points, more than 100000"), "{e}");
        check_point_count(&[]).unwrap();
    }

    #[test]
    fn cartesian_product_with_exclusions() {
        let axes = vec![
            Axis::new("rw", vec!["read".into(), "write".into()]),
            Axis::new("bs", vec!["512".into(), "4096".into(), "65536".into()]),
        ];
        let all = expand(&axes, &[]);
        assert_eq!(all.len(), 6);
        assert_eq!(
            all[0].values,
            [
                ("rw".to_string(), "read".to_string()),
                ("bs".to_string(), "512".to_string())
            ]
        );
        assert_eq!(all[3].get("rw"), Some("write"));
        let ex = vec![BTreeMap::from([
            ("rw".to_string(), "write".to_string()),
            ("bs".to_string(), "512".to_string()),
        ])];
        let some = expand(&axes, &ex);
        assert_eq!(some.len(), 5);
        assert!(!some
            .iter()
            .any(|p| p.get("rw") == Some("write") && p.get("bs") == Some("512")));
        assert_eq!(
            some.iter().map(|p| p.index).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(expand(&[], &[]).len(), 1);
    }

    #[test]
    fn system_is_shown_by_its_stem() {
        let p = Point {
            index: 0,
            values: vec![("system".into(), "../systems/llnl2000/fig11.toml".into())],
            labels: Vec::new(),
        };
        assert_eq!(p.params()["system"], "fig11");
    }

    /// Two different files named raid5.toml are two points, told apart by their folders;
    /// a stem that is unique stays the stem.
    #[test]
    fn systems_sharing_a_stem_are_told_apart_by_their_folders() {
        let a = axis(
            "system",
            r#"["/tmp/p/systems/xdd2008/raid5.toml", "/tmp/p/alt/raid5.toml", "../systems/llnl2000/fig16.toml"]"#,
        )
        .unwrap();
        assert_eq!(a.labels, ["xdd2008/raid5", "alt/raid5", "fig16"]);
        let pts = expand(std::slice::from_ref(&a), &[]);
        assert_ne!(pts[0].params(), pts[1].params());
        assert_eq!(pts[0].params()["system"], "xdd2008/raid5");
        assert_eq!(pts[2].params()["system"], "fig16");
        // As many components as needed, a shorter path included.
        let a = axis(
            "system",
            r#"["x/a/r.toml", "y/a/r.toml", "r.toml", "sim:q.toml#lun0", "sim:z/q.toml#lun1"]"#,
        )
        .unwrap();
        assert_eq!(a.labels, ["x/a/r", "y/a/r", "r", "q#lun0", "q#lun1"]);
        // The recipes' systems keep their stems.
        let a = axis(
            "system",
            r#"["../systems/xdd2008/raid0.toml", "../systems/xdd2008/raid5.toml"]"#,
        )
        .unwrap();
        assert_eq!(a.labels, ["raid0", "raid5"]);
    }
}
