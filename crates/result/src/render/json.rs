//! fio's JSON output structure, filled from a [`RunResult`].
//!
//! Keys follow `fio --output-format=json` (fio 3.x) so tools written for fio read raidlab's
//! output: top-level `fio version`, `timestamp`, `time`, `jobs[]`; per job `jobname`,
//! `groupid`, `error`, `elapsed`, `job options`, `read`/`write`/`trim`/`sync`, `job_runtime`,
//! `usr_cpu`, `sys_cpu`, `latency_ns`/`latency_us`/`latency_ms`. raidlab's own extras
//! (target, engine, passes, verify, simulation) are under a `raidlab` key: `passes` lists every
//! pass up to a dozen, past that the first and last five, and `passes_between` (null when
//! every pass is listed) adds up the rest: their `first` and `last` pass, `count`, bytes and
//! I/Os per direction, summed `runtime_ns`, slowest and fastest `bw_bytes_min`/`_max` (B/s). `json+` adds fio's
//! latency histogram `bins` (`{"<ns>": count}`, fio's bucket values) to `clat_ns` and `lat_ns`.
//!
//! Keys fio writes that raidlab does not measure are left out rather than filled with made-up
//! values; [`JSON_ABSENT_KEYS`] lists them.

use crate::histogram::LatencyHistogram;
use crate::schema::{DirStats, JobResult, Percentiles, RunResult, MIXED, TRIM};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// Keys of fio's JSON that raidlab leaves out, and why: the engine does not sample them.
/// (`ctx`, `majf`, `minf`: per-process counters of a forked fio job; `iodepth_*`: fio's
/// submit and complete histograms; `timestamp_ms`, `eta`: sub-second start time and the
/// running ETA; `aggr_*`: fio's figures for an md or device-mapper disk's members;
/// `*_sectors`: newer fio's sector counts in `disk_util`.)
pub const JSON_ABSENT_KEYS: &[&str] = &[
    "aggr_read_ios",
    "aggr_write_ios",
    "aggr_read_merges",
    "aggr_write_merge",
    "aggr_read_ticks",
    "aggr_write_ticks",
    "aggr_in_queue",
    "aggr_util",
    "aggr_read_sectors",
    "aggr_write_sectors",
    "read_sectors",
    "write_sectors",
    "timestamp_ms",
    "eta",
    "ctx",
    "majf",
    "minf",
    "iodepth_submit",
    "iodepth_complete",
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

/// fio's bandwidth and IOPS sample fields of one direction (`bw_min` … `iops_samples`):
/// zeros without samples; `bw_agg` is the mean's percent of the group's aggregate.
fn sample_fields(d: &DirStats, agg_bytes: u64) -> Vec<(&'static str, J)> {
    let (bw, iops) = (&d.samples.bw_kib, &d.samples.iops);
    let agg = if bw.samples == 0 {
        0.0
    } else {
        super::bw_agg_pct(bw.mean, agg_bytes)
    };
    vec![
        ("bw_min", v(bw.min)),
        ("bw_max", v(bw.max)),
        ("bw_agg", v(agg)),
        ("bw_mean", v(bw.mean)),
        ("bw_dev", v(bw.stddev())),
        ("bw_samples", v(bw.samples)),
        ("iops_min", v(iops.min)),
        ("iops_max", v(iops.max)),
        ("iops_mean", v(iops.mean)),
        ("iops_stddev", v(iops.stddev())),
        ("iops_samples", v(iops.samples)),
    ]
}

fn direction(d: &DirStats, p: &Percentiles, plus: bool, agg_bytes: u64) -> J {
    let list = p.values();
    let mut f = vec![
        ("io_bytes", v(d.io_bytes)),
        ("io_kbytes", v(d.io_bytes >> 10)),
        ("bw_bytes", v(d.bw_bytes().round() as u64)),
        ("bw", v((d.bw_bytes() / 1024.0).round() as u64)),
        ("iops", v(d.iops())),
        ("runtime", v(super::runtime_ms(d.runtime_ns))),
        ("total_ios", v(d.total_ios)),
        ("short_ios", v(0u64)),
        ("drop_ios", v(0u64)),
        // raidlab measures from submission, so submission latency is not split out; fio
        // writes the same zeros for its synchronous engines.
        ("slat_ns", empty_latency()),
        ("clat_ns", latency(&d.clat, p.clat.then_some(list), plus)),
        // Total latency's percentiles only with lat_percentiles=1, as fio 3.33.
        (
            "lat_ns",
            latency(&d.lat, (p.lat == Some(true)).then_some(list), plus),
        ),
    ];
    f.extend(sample_fields(d, agg_bytes));
    obj(f)
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

fn job(j: &JobResult, options: &[(String, String)], plus: bool, agg: [u64; 4]) -> J {
    let options = J::O(
        options
            .iter()
            .map(|(k, val)| (k.clone(), v(val.clone())))
            .collect(),
    );
    let lat = j.all_lat();
    let runtime_ms = j.job_runtime_ns() / 1_000_000;
    let mut extras = serde_json::json!({
        "target": j.target,
        "engine": j.engine,
        "instances": j.instances,
        "elapsed_ns": j.elapsed_ns,
        "passes": j.passes,
        "passes_between": j.passes_between,
        "verify": j.verify,
        "sim": j.sim,
        "stopped": j.stopped,
        "error": j.error,
    });
    if !j.cpus.is_empty() {
        extras["cpus"] = serde_json::json!(j.cpus);
    }
    if let Some(m) = &j.mpi {
        extras["ranks"] = serde_json::json!(m.ranks);
        extras["hosts"] = serde_json::json!(m.hosts);
    }
    let mut f = vec![
        ("jobname", v(j.name.clone())),
        ("groupid", v(j.groupid)),
        ("error", v(j.error_code())),
        // fio's whole seconds since the start, rounded up from milliseconds, as its
        // `(mtime_since_genesis() + 999) / 1000`.
        ("elapsed", v((j.elapsed_ns / 1_000_000).div_ceil(1000))),
        ("job options", options),
    ];
    // The directions, as fio 3.33 writes them under `unified_rw_reporting`: `mixed` alone
    // in place of read, write, trim and sync; or after them.
    let shown = j.shown_directions();
    let mixed = shown.contains(&MIXED).then(|| {
        let m = j.mixed();
        ("mixed", direction(&m, &j.percentiles, plus, agg[MIXED]))
    });
    if shown.contains(&0) {
        f.extend([
            ("read", direction(&j.read, &j.percentiles, plus, agg[0])),
            ("write", direction(&j.write, &j.percentiles, plus, agg[1])),
            ("trim", direction(&j.trim, &j.percentiles, plus, agg[TRIM])),
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
        ]);
    }
    f.extend(mixed);
    f.extend([
        ("job_runtime", v(runtime_ms)),
        ("usr_cpu", v(j.usr_cpu)),
        ("sys_cpu", v(j.sys_cpu)),
        ("iodepth_level", iodepth_levels(&j.iodepth_level)),
    ]);
    f.extend(latency_groups(&lat));
    // (fio's latency-target fields follow the shares, for every job: for one that ran the
    // search, the depth found, the target in ns, the window in µs; for any other, as fio
    // 3.33 writes them, its iodepth as given, target 0, percentile 100, window 0.)
    if let Some(l) = j.latency_depth() {
        f.push(("latency_depth", v(l.depth)));
        f.push(("latency_target", v(l.target_ns)));
        f.push(("latency_percentile", v(l.percentile)));
        f.push(("latency_window", v(l.window_ns / 1000)));
    }
    // (fio adds the errors gone on past with continue_on_error, and its `desc`, after the
    // latency shares, only when set.)
    if let Some(e) = &j.errors {
        f.push(("total_err", v(e.total)));
        f.push(("first_error", v(e.first)));
    }
    if let Some(d) = &j.description {
        f.push(("desc", v(d.clone())));
    }
    if let Some(ss) = &j.steadystate {
        // fio's steadystate object, in its order: the criterion as given, the window (s),
        // whether it was attained, the criterion's value as fio prints it, and the window's
        // samples.
        f.push((
            "steadystate",
            obj(vec![
                ("ss", v(ss.ss.clone())),
                ("duration", v(ss.duration_s)),
                ("attained", v(u8::from(ss.attained))),
                (
                    "criterion",
                    v(format!(
                        "{:.6}{}",
                        ss.criterion,
                        if ss.percent { "%" } else { "" }
                    )),
                ),
                ("max_deviation", v(ss.max_deviation)),
                ("slope", v(ss.slope)),
                (
                    "data",
                    obj(vec![
                        ("bw_mean", v(ss.bw_mean())),
                        ("iops_mean", v(ss.iops_mean())),
                        ("iops", v(ss.iops.clone())),
                        ("bw", v(ss.bw.clone())),
                    ]),
                ),
            ]),
        ));
    }
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

/// One disk of fio's `disk_util` list: its counters, times in ms and `util` in percent,
/// as fio writes them.
fn disk(d: &crate::schema::DiskUtil) -> J {
    const KEYS: [&str; 7] = [
        "read_ios",
        "write_ios",
        "read_merges",
        "write_merges",
        "read_ticks",
        "write_ticks",
        "in_queue",
    ];
    let mut fields = vec![("name", v(d.name.clone()))];
    fields.extend(KEYS.into_iter().zip(d.fio_figures().map(v)));
    fields.push(("util", v(d.utilization() * 100.0)));
    obj(fields)
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
    let mut fields = vec![
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
                    .map(|(i, j)| {
                        let opts = options.get(i).map(Vec::as_slice).unwrap_or(&[]);
                        job(j, opts, plus, super::group_agg_bytes(result, j.groupid))
                    })
                    .collect(),
            ),
        ),
    ];
    // (As fio: no list when no target sits on a disk it can count.)
    if !result.disk_util.is_empty() {
        fields.push((
            "disk_util",
            J::A(result.disk_util.iter().map(disk).collect()),
        ));
    }
    fields.push((
        "raidlab",
        obj(vec![(
            "units",
            v("bytes and nanoseconds; bw is KiB/s (1024 B/s) as in fio, bw_bytes is bytes/s"),
        )]),
    ));
    let top = obj(fields);
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
            ..Default::default()
        }
    }

    /// fio's `disk_util` list after `jobs`: counters, ms and util in percent; no key
    /// without disks.
    #[test]
    fn disks_fill_fios_disk_util() {
        let mut r = sample();
        let plain: Value = serde_json::from_str(&render_json(&r, false)).unwrap();
        assert!(plain.get("disk_util").is_none());
        r.disk_util.push(crate::schema::DiskUtil {
            name: "loop0".into(),
            read_ios: 7,
            write_ios: 9,
            read_merges: 1,
            write_merges: 2,
            read_bytes: 7 * 4096,
            write_ticks_ns: 12_999_999,
            in_queue_ns: 20_000_000,
            busy_ns: 250_000_000,
            elapsed_ns: 1_000_000_000,
            ..Default::default()
        });
        let text = render_json(&r, false);
        let j: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            j["disk_util"],
            serde_json::json!([{
                "name": "loop0", "read_ios": 7, "write_ios": 9, "read_merges": 1,
                "write_merges": 2, "read_ticks": 0, "write_ticks": 12, "in_queue": 20,
                "util": 25.0
            }])
        );
        assert!(text.find("\"jobs\"").unwrap() < text.find("\"disk_util\"").unwrap());
        assert!(text.find("\"disk_util\"").unwrap() < text.rfind("\"raidlab\"").unwrap());
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
        assert!(t.contains("\n     issued rwts: total=1000,0,0,3 "), "{t}");
    }

    /// fio 3.33 writes the latency-target fields for every job: for one without the search,
    /// its iodepth as given, target 0, percentile 100, window 0. A result that does not say
    /// the job's iodepth (not set by the caller) leaves them out rather than guess.
    #[test]
    fn latency_target_fields_for_a_plain_job_are_fios() {
        let mut r = sample();
        r.jobs[0].iodepth = Some(4);
        let text = render_json(&r, false);
        let out: Value = serde_json::from_str(&text).unwrap();
        let j = &out["jobs"][0];
        assert_eq!(j["latency_depth"], 4, "{j}");
        assert_eq!(j["latency_target"], 0, "{j}");
        assert_eq!(j["latency_percentile"], 100.0, "{j}");
        assert_eq!(j["latency_window"], 0, "{j}");
        // (After the latency shares, as fio.)
        let at = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        assert!(at("latency_ms") < at("latency_depth"), "{text}");
        r.jobs[0].iodepth = None;
        let out: Value = serde_json::from_str(&render_json(&r, false)).unwrap();
        assert!(out["jobs"][0].get("latency_depth").is_none());
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
        // As fio 3.33: total and submission latency list no percentiles unless asked.
        assert!(r["lat_ns"].get("percentile").is_none(), "{r}");
        assert!(r["slat_ns"].get("percentile").is_none(), "{r}");
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

    /// fio's sample keys follow `lat_ns` in its order; `bw_agg` is the mean's share of the
    /// group's bandwidth (2000 KiB/s here), at most 100; without samples, zeros.
    #[test]
    fn sample_fields_follow_fios_keys() {
        let mut r = sample();
        for v in [900, 1100] {
            r.jobs[0].read.samples.bw_kib.add(v);
        }
        r.jobs[0].read.samples.iops.add(250);
        let text = render_json(&r, false);
        // In the text (the parsed map sorts its keys): after the read section's lat_ns.
        let read = text.find("\"read\"").unwrap();
        let mut at = read + text[read..].find("\"lat_ns\"").unwrap();
        for k in [
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
            "\"write\"",
        ] {
            at += text[at..]
                .find(k)
                .unwrap_or_else(|| panic!("{k} after {at}"));
        }
        let out: Value = serde_json::from_str(&text).unwrap();
        let d = &out["jobs"][0]["read"];
        assert_eq!(
            (d["bw_min"].as_u64(), d["bw_max"].as_u64()),
            (Some(900), Some(1100))
        );
        assert_eq!(d["bw_agg"], 50.0);
        assert_eq!(d["bw_mean"], 1000.0);
        assert!(
            (d["bw_dev"].as_f64().unwrap() - 141.421356).abs() < 1e-5,
            "{d}"
        );
        assert_eq!(
            (d["bw_samples"].as_u64(), d["iops_samples"].as_u64()),
            (Some(2), Some(1))
        );
        assert_eq!(d["iops_stddev"], 0.0);
        let w = &out["jobs"][0]["write"];
        assert_eq!(
            (w["bw_samples"].as_u64(), w["bw_agg"].as_f64()),
            (Some(0), Some(0.0))
        );
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

    /// fio's `total_err` and `first_error`, after the latency shares and before `desc`, only
    /// for a job that goes on past errors (continue_on_error); the text's `errors` line and
    /// the terse line's two fields before the description likewise.
    #[test]
    fn errors_gone_past_show_where_fio_shows_them() {
        let mut r = sample();
        let plain = render_json(&r, false);
        assert!(!plain.contains("total_err"));
        assert!(!crate::render::text::render_text(&r).contains("errors"));
        r.jobs[0].errors = Some(crate::ErrorCount {
            total: 48,
            first: 28,
        });
        r.jobs[0].description = Some("d".into());
        let json = render_json(&r, false);
        let out: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(out["jobs"][0]["total_err"], 48);
        assert_eq!(out["jobs"][0]["first_error"], 28);
        let at = |k: &str| json.find(&format!("\"{k}\"")).unwrap();
        assert!(at("latency_ms") < at("total_err") && at("first_error") < at("desc"));
        let text = crate::render::text::render_text(&r);
        assert!(
            text.contains("  errors       : total=48, first_error=28/<No space left on device>\n"),
            "{text}"
        );
        let terse = crate::render::terse::render_terse(&r);
        assert!(terse.trim_end().ends_with(";48;28;d"), "{terse}");
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
