//! fio's JSON output structure, filled from a [`RunResult`].
//!
//! Keys follow `fio --output-format=json` (fio 3.x) so tools written for fio read raidlab's
//! output: top-level `fio version`, `timestamp`, `time`, `jobs[]`; per job `jobname`,
//! `groupid`, `error`, `elapsed`, `job options`, `read`/`write`/`trim`/`sync`, `job_runtime`,
//! `usr_cpu`, `sys_cpu`, `latency_ns`/`latency_us`/`latency_ms`. raidlab's own extras
//! (target, engine, passes, verify, simulation) are under a `raidlab` key. `json+` adds fio's
//! latency histogram `bins` (`{"<ns>": count}`, fio's bucket values) to `clat_ns` and `lat_ns`.
//!
//! Keys fio writes that raidlab does not measure are left out rather than filled with made-up
//! values; [`JSON_ABSENT_KEYS`] lists them.

use crate::histogram::LatencyHistogram;
use crate::schema::{DirStats, JobResult, Percentiles, RunResult};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// Keys of fio's JSON that raidlab leaves out, and why: the engine does not sample them.
/// (`disk_util`: per-disk kernel counters; `ctx`, `majf`, `minf`: per-process counters of a
/// forked fio job; `iodepth_*`, `latency_depth`/`latency_target`/…: fio's depth histograms and
/// latency-target mode; `bw_min`…`iops_samples`: per-interval bandwidth samples;
/// `timestamp_ms`, `eta`: sub-second start time and the running ETA.)
pub const JSON_ABSENT_KEYS: &[&str] = &[
    "disk_util",
    "timestamp_ms",
    "eta",
    "ctx",
    "majf",
    "minf",
    "iodepth_submit",
    "iodepth_complete",
    "latency_depth",
    "latency_target",
    "latency_percentile",
    "latency_window",
    "bw_min",
    "bw_max",
    "bw_agg",
    "bw_mean",
    "bw_dev",
    "bw_samples",
    "iops_min",
    "iops_max",
    "iops_mean",
    "iops_stddev",
    "iops_samples",
];

/// A JSON value whose objects keep their keys in the order given (fio's order).
enum J {
    V(Value),
    O(Vec<(String, J)>),
    A(Vec<J>),
}

impl Serialize for J {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            J::V(v) => v.serialize(s),
            J::O(fields) => {
                let mut m = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            J::A(items) => {
                let mut q = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    q.serialize_element(i)?;
                }
                q.end()
            }
        }
    }
}

fn v(x: impl Into<Value>) -> J {
    J::V(x.into())
}

fn obj(fields: Vec<(&str, J)>) -> J {
    J::O(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// fio prints percentile keys with six decimals: `99.990000`.
fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

fn latency(h: &LatencyHistogram, percentiles: Option<&[f64]>, bins: bool) -> J {
    let mut f = vec![
        ("min", v(h.min())),
        ("max", v(h.max())),
        ("mean", v(h.mean())),
        ("stddev", v(h.stddev())),
        ("N", v(h.count())),
    ];
    // fio writes percentiles and bins only for directions that did I/O.
    if let Some(list) = percentiles.filter(|_| h.count() > 0) {
        let p = list
            .iter()
            .map(|&p| (percentile_key(p), v(h.percentile(p))))
            .collect();
        f.push(("percentile", J::O(p)));
    }
    if bins && h.count() > 0 {
        let b = h.bins().map(|(ns, c)| (ns.to_string(), v(c))).collect();
        f.push(("bins", J::O(b)));
    }
    obj(f)
}

fn empty_latency() -> J {
    latency(&LatencyHistogram::new(), None, false)
}

fn direction(d: &DirStats, p: &Percentiles, plus: bool) -> J {
    let list = p.values();
    obj(vec![
        ("io_bytes", v(d.io_bytes)),
        ("io_kbytes", v(d.io_bytes >> 10)),
        ("bw_bytes", v(d.bw_bytes().round() as u64)),
        ("bw", v((d.bw_bytes() / 1024.0).round() as u64)),
        ("iops", v(d.iops())),
        ("runtime", v(d.runtime_ns / 1_000_000)),
        ("total_ios", v(d.total_ios)),
        ("short_ios", v(0u64)),
        ("drop_ios", v(0u64)),
        // raidlab measures from submission, so submission latency is not split out; fio
        // writes the same zeros for its synchronous engines.
        ("slat_ns", empty_latency()),
        ("clat_ns", latency(&d.clat, p.clat.then_some(list), plus)),
        // Total latency's percentiles unless lat_percentiles=0 (raidlab lists them by
        // default; fio only with lat_percentiles=1).
        (
            "lat_ns",
            latency(&d.lat, (p.lat != Some(false)).then_some(list), plus),
        ),
    ])
}

/// fio's coarse latency distribution as JSON: `latency_ns`, `latency_us`, `latency_ms`.
fn latency_groups(h: &LatencyHistogram) -> Vec<(&'static str, J)> {
    super::latency_distribution(h)
        .into_iter()
        .map(|g| {
            (
                g.key,
                J::O(
                    g.entries
                        .into_iter()
                        .map(|(label, pct)| (label, v(pct)))
                        .collect(),
                ),
            )
        })
        .collect()
}

fn job(j: &JobResult, options: &[(String, String)], plus: bool) -> J {
    let options = J::O(
        options
            .iter()
            .map(|(k, val)| (k.clone(), v(val.clone())))
            .collect(),
    );
    let mut lat = j.read.lat.clone();
    lat.merge(&j.write.lat);
    let runtime_ms = j.job_runtime_ns() / 1_000_000;
    let extras = serde_json::json!({
        "target": j.target,
        "engine": j.engine,
        "instances": j.instances,
        "elapsed_ns": j.elapsed_ns,
        "passes": j.passes,
        "verify": j.verify,
        "sim": j.sim,
        "stopped": j.stopped,
        "error": j.error,
    });
    let mut f = vec![
        ("jobname", v(j.name.clone())),
        ("groupid", v(j.groupid)),
        ("error", v(j.error_code())),
        // fio's whole seconds since the start, rounded up from milliseconds, as its
        // `(mtime_since_genesis() + 999) / 1000`.
        ("elapsed", v((j.elapsed_ns / 1_000_000).div_ceil(1000))),
        ("job options", options),
        ("read", direction(&j.read, &j.percentiles, plus)),
        ("write", direction(&j.write, &j.percentiles, plus)),
        (
            "trim",
            direction(&DirStats::default(), &j.percentiles, plus),
        ),
        (
            "sync",
            obj(vec![
                ("total_ios", v(j.sync.total_ios)),
                (
                    "lat_ns",
                    latency(&j.sync.lat, Some(j.percentiles.values()), plus),
                ),
            ]),
        ),
        ("job_runtime", v(runtime_ms)),
        ("usr_cpu", v(j.usr_cpu)),
        ("sys_cpu", v(j.sys_cpu)),
        ("iodepth_level", iodepth_levels(&j.iodepth_level)),
    ];
    f.extend(latency_groups(&lat));
    f.push(("raidlab", J::V(extras)));
    obj(f)
}

/// fio's `iodepth_level`: percent of submissions per depth bucket.
fn iodepth_levels(counts: &[u64; 7]) -> J {
    obj(super::iodepth_percentages(counts)
        .into_iter()
        .map(|(label, p)| (label, v(p)))
        .collect())
}

/// fio's JSON for `result`; with `plus`, fio's `json+` (latency `bins`). `job options` is
/// empty; [`render_json_with_options`] fills it.
pub fn render_json(result: &RunResult, plus: bool) -> String {
    render_json_with_options(result, &[], plus)
}

/// [`render_json`] with each job's options (fio's `job options`, as `key`/`value` in fio's
/// words), index-aligned with `result.jobs`; missing entries render as empty objects.
pub fn render_json_with_options(
    result: &RunResult,
    options: &[Vec<(String, String)>],
    plus: bool,
) -> String {
    let version = if result.version.is_empty() {
        format!("raidlab-{}", env!("CARGO_PKG_VERSION"))
    } else {
        result.version.clone()
    };
    let top = obj(vec![
        ("fio version", v(version)),
        ("timestamp", v(result.timestamp)),
        ("time", v(super::units::ctime_utc(result.timestamp))),
        (
            "jobs",
            J::A(
                result
                    .jobs
                    .iter()
                    .enumerate()
                    .map(|(i, j)| job(j, options.get(i).map(Vec::as_slice).unwrap_or(&[]), plus))
                    .collect(),
            ),
        ),
        (
            "raidlab",
            obj(vec![(
                "units",
                v("bytes and nanoseconds; bw is KiB/s (1024 B/s) as in fio, bw_bytes is bytes/s"),
            )]),
        ),
    ]);
    let mut s = serde_json::to_string_pretty(&top).expect("JSON of plain numbers and strings");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RunResult {
        let mut j = JobResult {
            name: "r".into(),
            instances: 1,
            target: "/tmp/x".into(),
            ..Default::default()
        };
        for i in 1..=1000u64 {
            j.read.clat.record(i * 1000);
            j.read.lat.record(i * 1000 + 50);
        }
        j.read.io_bytes = 4096 * 1000;
        j.read.total_ios = 1000;
        j.read.runtime_ns = 2_000_000_000;
        RunResult {
            version: "raidlab-test".into(),
            timestamp: 1_700_000_000,
            jobs: vec![j],
        }
    }

    /// fio's `sync` section: the syncs' count and latencies, percentiles once there are any.
    #[test]
    fn syncs_fill_fios_sync_section() {
        let mut r = sample();
        let out: Value = serde_json::from_str(&render_json(&r, false)).unwrap();
        assert_eq!(out["jobs"][0]["sync"]["total_ios"], 0);
        assert!(out["jobs"][0]["sync"]["lat_ns"].get("percentile").is_none());
        for ns in [1_000u64, 3_000, 5_000] {
            r.jobs[0].sync.record(ns);
        }
        let out: Value = serde_json::from_str(&render_json(&r, true)).unwrap();
        let s = &out["jobs"][0]["sync"];
        assert_eq!(s["total_ios"], 3);
        assert_eq!(s["lat_ns"]["N"], 3);
        assert_eq!(s["lat_ns"]["min"], 1000);
        assert_eq!(s["lat_ns"]["max"], 5000);
        assert!(s["lat_ns"]["percentile"]["50.000000"].is_number(), "{s}");
        assert!(s["lat_ns"]["bins"].is_object(), "{s}");
        let t = crate::render_text(&r);
        assert!(
            t.contains("  fsync/fdatasync/sync_file_range:\n    sync (nsec): min=1000, max=5000"),
            "{t}"
        );
        assert!(t.contains("    sync percentiles (nsec):"), "{t}");
        assert!(t.contains("issued rwts  : total=1000,0,0,3 "), "{t}");
    }

    #[test]
    fn fio_structure_and_values() {
        let opts = vec![vec![
            ("rw".to_string(), "randread".to_string()),
            ("bs".to_string(), "4k".to_string()),
        ]];
        let out: Value =
            serde_json::from_str(&render_json_with_options(&sample(), &opts, false)).unwrap();
        assert_eq!(out["fio version"], "raidlab-test");
        let r = &out["jobs"][0]["read"];
        assert_eq!(r["io_bytes"], 4_096_000);
        assert_eq!(r["io_kbytes"], 4000);
        assert_eq!(r["bw_bytes"], 2_048_000);
        assert_eq!(r["bw"], 2000);
        assert_eq!(r["iops"], 500.0);
        assert_eq!(r["runtime"], 2000);
        assert_eq!(r["clat_ns"]["N"], 1000);
        assert_eq!(r["clat_ns"]["min"], 1000);
        let p99 = r["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() as f64;
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.02, "{p99}");
        assert!(r["clat_ns"].get("bins").is_none());
        assert_eq!(out["jobs"][0]["job options"]["rw"], "randread");
        assert_eq!(out["jobs"][0]["write"]["total_ios"], 0);
        assert!(out["jobs"][0]["write"]["clat_ns"]
            .get("percentile")
            .is_none());
        assert_eq!(out["jobs"][0]["raidlab"]["target"], "/tmp/x");
        // latency_us: all values 1–1000 µs; 1000 µs itself counts under the 2 ms group.
        let us: f64 = out["jobs"][0]["latency_us"]
            .as_object()
            .unwrap()
            .values()
            .map(|x| x.as_f64().unwrap())
            .sum();
        let ms: f64 = out["jobs"][0]["latency_ms"]
            .as_object()
            .unwrap()
            .values()
            .map(|x| x.as_f64().unwrap())
            .sum();
        assert!((us + ms - 100.0).abs() < 1e-6, "{us} + {ms}");
    }

    /// `percentile_list` sets the keys of both percentile objects; `clat_percentiles=0` and
    /// `lat_percentiles=0` leave them out.
    #[test]
    fn percentile_options_set_the_listed_keys() {
        let mut r = sample();
        r.jobs[0].percentiles = crate::Percentiles {
            list: vec![50.0, 99.999],
            precision: 3,
            clat: true,
            lat: Some(true),
        };
        let out: Value = serde_json::from_str(&render_json(&r, false)).unwrap();
        for key in ["clat_ns", "lat_ns"] {
            let p = out["jobs"][0]["read"][key]["percentile"]
                .as_object()
                .unwrap();
            let keys: Vec<&str> = p.keys().map(String::as_str).collect();
            assert_eq!(keys, ["50.000000", "99.999000"], "{key}");
        }
        r.jobs[0].percentiles.clat = false;
        r.jobs[0].percentiles.lat = Some(false);
        let out: Value = serde_json::from_str(&render_json(&r, false)).unwrap();
        assert!(out["jobs"][0]["read"]["clat_ns"]
            .get("percentile")
            .is_none());
        assert!(out["jobs"][0]["read"]["lat_ns"].get("percentile").is_none());
    }

    /// fio's `elapsed` is whole seconds rounded up from milliseconds (a 0.5 s job says 1);
    /// raidlab's rounded down, so a short job said 0.
    #[test]
    fn elapsed_is_rounded_up_to_whole_seconds_as_fio_does() {
        for (ns, want) in [
            (0, 0),
            (999_999, 0),
            (1_000_000, 1),
            (500_000_000, 1),
            (1_000_000_000, 1),
            (1_000_999_999, 1),
            (2_200_000_000, 3),
        ] {
            let mut r = sample();
            r.jobs[0].elapsed_ns = ns;
            let out: Value = serde_json::from_str(&render_json(&r, false)).unwrap();
            assert_eq!(out["jobs"][0]["elapsed"], want, "{ns} ns");
        }
    }

    #[test]
    fn json_plus_bins_add_up_and_use_fio_bucket_values() {
        let text = render_json(&sample(), true);
        let out: Value = serde_json::from_str(&text).unwrap();
        let bins = out["jobs"][0]["read"]["clat_ns"]["bins"]
            .as_object()
            .unwrap();
        let total: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(total, 1000);
        for k in bins.keys() {
            let ns: u64 = k.parse().unwrap();
            assert_eq!(
                crate::histogram::bucket_value(crate::histogram::bucket_of(ns)),
                ns
            );
        }
        // Percentile keys keep fio's order.
        let i1 = text.find("\"1.000000\"").unwrap();
        let i5 = text.find("\"5.000000\"").unwrap();
        let i10 = text.find("\"10.000000\"").unwrap();
        assert!(i1 < i5 && i5 < i10);
    }
}
