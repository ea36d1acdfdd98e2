//! The written report: files on disk, a self-contained page, the limits table, bad output dirs.

mod common;

use common::*;
use raidlab_report::{
    write_report, write_report_with, CampaignMeta, ComponentLimit, LimitsInput, ReportMeta,
};

fn limits() -> Vec<LimitsInput> {
    vec![LimitsInput {
        campaign: Some("osc-full".into()),
        target: None,
        whole_target: false,
        origin: "declared in test".into(),
        components: vec![
            ComponentLimit {
                name: "disks".into(),
                kind: "disk".into(),
                bound_bytes_s: 1242e6,
                note: "36 × 34.5 MB/s".into(),
                write_bound_bytes_s: None,
            },
            ComponentLimit {
                name: "FC links".into(),
                kind: "link".into(),
                bound_bytes_s: 425e6,
                note: "2 × 212.5 MB/s".into(),
                write_bound_bytes_s: None,
            },
        ],
    }]
}

/// Every href/src value in the page.
fn references(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            let end = rest.find('"').unwrap();
            out.push(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn report_is_one_self_contained_page_with_figures_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let files = write_report(&all_rows(), &convergence(), &limits(), &out).unwrap();
    assert_eq!(files.index, out.join("index.html"));
    assert!(files.svgs.len() >= 7);
    assert_eq!(
        files.pngs.len(),
        files.svgs.len(),
        "a PNG per figure: {:?}",
        files.warnings
    );
    assert!(files.warnings.is_empty(), "{:?}", files.warnings);
    let html = std::fs::read_to_string(&files.index).unwrap();

    // Nothing outside the folder: no scheme anywhere, no script, no CSS import/url().
    assert!(!html.contains("://"), "an absolute URL in the page");
    for bad in [
        "<script", "@import", "<iframe", "<link", "<img", "<object", "<embed",
    ] {
        assert!(!html.contains(bad), "page contains {bad}");
    }
    // url() only for clip paths within the page.
    for (i, _) in html.match_indices("url(") {
        let target = &html[i + 4..];
        let id = &target[1..target.find(')').unwrap()];
        assert!(
            target.starts_with('#') && html.contains(&format!("id=\"{id}\"")),
            "url() leaves the page: {}",
            &target[..20]
        );
    }
    let refs = references(&html);
    assert!(!refs.is_empty());
    for r in &refs {
        if let Some(anchor) = r.strip_prefix('#') {
            assert!(
                html.contains(&format!("id=\"{anchor}\"")),
                "dangling anchor {r}"
            );
        } else {
            assert!(
                !r.contains('/') && !r.contains(".."),
                "reference leaves the folder: {r}"
            );
            assert!(out.join(r).is_file(), "referenced file missing: {r}");
        }
    }
    // Figures inline, numbered, captioned; tables of points; the limits table.
    assert_eq!(html.matches("<svg").count(), files.svgs.len());
    assert!(html.contains("<b>Figure 1.</b>"));
    assert!(html.contains("MB/s median") && html.contains("95% CI of mean"));
    assert!(html.contains("FC links — bounds the path"));
    // Units are spelled out.
    assert!(html.contains("MB/s is decimal"));
    assert!(!out.join(".raidlab-report-probe").exists());
}

#[test]
fn page_carries_description_environment_and_commands() {
    let dir = tempfile::tempdir().unwrap();
    let mut meta = ReportMeta {
        title: Some("Chain <study>".into()),
        command: Some("raidlab report lab.db --out r".into()),
        ..Default::default()
    };
    meta.campaigns.insert(
        "chain".into(),
        CampaignMeta {
            description: "One RAID-5 chain, block sizes 512 B to 2 MiB.".into(),
            command: "raidlab sweep recipes/seed-000.toml".into(),
            environment: vec![
                ("kernel".into(), "6.1.0".into()),
                ("device".into(), "/dev/sdb: QEMU HARDDISK".into()),
            ],
            ..Default::default()
        },
    );
    write_report_with(&bs_sweep(), &[], &[], &meta, dir.path()).unwrap();
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(html.contains("<title>Chain &lt;study&gt;</title>"));
    assert!(html.contains("One RAID-5 chain"));
    assert!(html.contains("<dt>kernel</dt><dd>6.1.0</dd>"));
    assert!(html.contains("data from <code>raidlab sweep recipes/seed-000.toml</code>"));
    assert!(html.contains("figure by <code>raidlab report lab.db --out r</code>"));
}

/// The command behind a campaign is introduced by what it did: a sweep of simulated systems
/// measured nothing, and its page said "Measured with".
#[test]
fn a_simulated_campaign_is_not_said_to_be_measured() {
    let page = |source: &str| {
        let rows: Vec<_> = bs_sweep()
            .into_iter()
            .map(|mut r| {
                r.source = source.into();
                r
            })
            .collect();
        let mut meta = ReportMeta::default();
        meta.campaigns.insert(
            "chain".into(),
            CampaignMeta {
                command: "raidlab sweep recipes/llnl2000.toml".into(),
                ..Default::default()
            },
        );
        let dir = tempfile::tempdir().unwrap();
        write_report_with(&rows, &[], &[], &meta, dir.path()).unwrap();
        std::fs::read_to_string(dir.path().join("index.html")).unwrap()
    };
    let html = page("simulated");
    assert!(!html.contains("Measured with"), "{html}");
    assert!(html.contains("Simulated with <code>raidlab sweep recipes/llnl2000.toml</code>"));
    assert!(page("measured").contains("Measured with <code>raidlab sweep"));
}

#[test]
fn imprecise_points_are_flagged() {
    let mut rows = level_chunk();
    // One point with 20% spread.
    rows.push(row(
        "chunks",
        "measured",
        "array:m0,m1,m2,m3",
        0,
        5,
        &[
            ("level", "raid0".into()),
            ("chunk", "4k".into()),
            ("rw", "read".into()),
            ("bs", "1m".into()),
        ],
        &[("mb_s", 360.0)],
    ));
    // Flagged by the experiment's own threshold, as the sweep flagged it.
    let with = |threshold: Option<f64>| {
        let mut meta = ReportMeta::default();
        meta.campaigns.insert(
            "chunks".into(),
            CampaignMeta {
                spread_threshold: threshold,
                ..Default::default()
            },
        );
        let dir = tempfile::tempdir().unwrap();
        write_report_with(&rows, &[], &[], &meta, dir.path()).unwrap();
        std::fs::read_to_string(dir.path().join("index.html")).unwrap()
    };
    let html = with(Some(0.05));
    assert_eq!(html.matches("<tr class=\"flag\">").count(), 1);
    assert!(html.contains("1 point(s) spread more than 5%"), "{html}");
    let html = with(Some(0.12));
    assert!(html.contains("1 point(s) spread more than 12%"));
    // A threshold above the point's spread, or none (the lab's default): nothing flagged.
    for th in [Some(0.5), None] {
        let html = with(th);
        assert_eq!(html.matches("<tr class=\"flag\">").count(), 0, "{th:?}");
        assert!(!html.contains("spread more than"));
    }
}

#[test]
fn an_interrupted_campaign_says_it_is_incomplete() {
    let rows = bs_sweep();
    let stored = {
        let mut p: Vec<u64> = rows.iter().map(|r| r.point).collect();
        p.sort_unstable();
        p.dedup();
        p.len() as u64
    };
    let campaign = rows[0].campaign.clone();
    let page = |defined: u64| {
        let mut meta = ReportMeta::default();
        meta.campaigns.insert(
            campaign.clone(),
            CampaignMeta {
                points_defined: Some(defined),
                ..Default::default()
            },
        );
        let dir = tempfile::tempdir().unwrap();
        write_report_with(&rows, &[], &[], &meta, dir.path()).unwrap();
        std::fs::read_to_string(dir.path().join("index.html")).unwrap()
    };
    let html = page(stored + 4);
    assert!(
        html.contains(&format!(
            "incomplete: {stored} of {} points stored",
            stored + 4
        )),
        "{html}"
    );
    let html = page(stored);
    assert!(!html.contains("incomplete"));
}

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn a_folder_holding_files_raidlab_did_not_write_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    std::fs::write(out.join("index.html"), "my own page").unwrap();
    std::fs::write(out.join("index.tmp"), "my notes").unwrap();
    let e = write_report(&bs_sweep(), &[], &[], out).unwrap_err();
    assert!(e.is_usage());
    let m = e.to_string();
    assert!(m.contains("index.html") && m.contains("--force"), "{m}");
    assert!(!m.contains('\n'));
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        "my own page"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("index.tmp")).unwrap(),
        "my notes"
    );
    assert_eq!(
        names(out),
        ["index.html", "index.tmp"],
        "nothing else written"
    );

    // A figure's name too.
    let other = tempfile::tempdir().unwrap();
    let first = write_report(&bs_sweep(), &[], &[], other.path()).unwrap();
    let svg = first.svgs[0].clone();
    std::fs::write(&svg, "my drawing").unwrap();
    let e = write_report(&bs_sweep(), &[], &[], other.path()).unwrap_err();
    assert!(
        e.to_string()
            .contains(&*svg.file_name().unwrap().to_string_lossy()),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "my drawing");

    // --force writes over them; the user's unrelated files stay.
    let files = raidlab_report::write_report_opts(
        &bs_sweep(),
        &[],
        &[],
        &ReportMeta::default(),
        out,
        raidlab_report::WriteOptions { force: true },
    )
    .unwrap();
    assert!(std::fs::read_to_string(&files.index)
        .unwrap()
        .contains("<svg"));
    assert_eq!(
        std::fs::read_to_string(out.join("index.tmp")).unwrap(),
        "my notes"
    );
    assert!(
        !names(out).iter().any(|n| n.contains(".tmp-")),
        "{:?}",
        names(out)
    );
}

#[test]
fn a_rerun_writes_over_its_own_report_and_removes_its_stale_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let big = write_report(&all_rows(), &convergence(), &[], out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    // Again, unchanged: its own files are written over.
    write_report(&all_rows(), &convergence(), &[], out).unwrap();
    // A report drawing fewer figures removes the earlier ones it no longer draws, except
    // one the user changed since.
    let small_rows = bs_sweep();
    let kept_user = big
        .svgs
        .iter()
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            !select_ids(&small_rows).contains(&n)
        })
        .cloned()
        .expect("a figure only the big report draws");
    std::fs::write(&kept_user, "edited by me").unwrap();
    let small = write_report(&small_rows, &[], &[], out).unwrap();
    assert!(!small.removed.is_empty());
    assert!(small.removed.iter().all(|p| !p.exists()));
    for p in big.svgs.iter().chain(&big.pngs) {
        let ours = small.svgs.contains(p) || small.pngs.contains(p);
        if *p == kept_user {
            assert_eq!(std::fs::read_to_string(p).unwrap(), "edited by me");
        } else {
            assert_eq!(p.exists(), ours, "{}", p.display());
        }
    }
    assert!(small.warnings.iter().any(|w| w.contains("changed since")));
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    // The page says who wrote it.
    let html = std::fs::read_to_string(&small.index).unwrap();
    assert!(html.contains(raidlab_report::GENERATOR_MARK));
}

fn select_ids(rows: &[raidlab_report::RunRow]) -> Vec<String> {
    raidlab_report::select_figures(rows, &[])
        .iter()
        .map(|f| format!("{}.svg", f.id))
        .collect()
}

#[test]
fn empty_database_still_gives_a_page_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_report(&[], &[], &[], dir.path()).unwrap();
    assert!(files.svgs.is_empty());
    let html = std::fs::read_to_string(files.index).unwrap();
    assert!(html.contains("holds no runs yet"));
}

#[test]
fn unwritable_or_file_output_is_a_usage_error_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"keep me").unwrap();
    let e = write_report(&bs_sweep(), &[], &[], &file).unwrap_err();
    assert!(e.is_usage());
    assert!(e.to_string().contains("is a file"), "{e}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"keep me",
        "never overwritten"
    );
    let e = write_report(&bs_sweep(), &[], &[], &file.join("sub")).unwrap_err();
    assert!(e.is_usage() && !e.to_string().contains('\n'), "{e}");
    assert!(
        e.to_string().contains("cannot create report directory"),
        "{e}"
    );
}

/// The points table shows the busiest disk's utilization (and a latency target's depth)
/// when the runs carry them, and not otherwise.
#[test]
fn the_points_table_shows_disk_utilization_when_runs_have_it() {
    let page = |metrics: &[(&str, f64)]| {
        let rows: Vec<_> = (0..2u32)
            .map(|rep| {
                row(
                    "disks",
                    "measured",
                    "/dev/sdb",
                    0,
                    rep,
                    &[("bs", "4096".into())],
                    metrics,
                )
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        write_report_with(&rows, &[], &[], &ReportMeta::default(), dir.path()).unwrap();
        std::fs::read_to_string(dir.path().join("index.html")).unwrap()
    };
    let plain = page(&[("mb_s", 100.0)]);
    assert!(!plain.contains("disk util"), "{plain}");
    let html = page(&[
        ("mb_s", 100.0),
        ("disk_util", 87.5),
        ("latency_depth", 12.0),
    ]);
    assert!(
        html.contains("<th>depth median</th><th>disk util % median</th>"),
        "{html}"
    );
    assert!(html.contains("<td>87.5</td>"), "{html}");
}
